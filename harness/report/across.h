/*
 * across.h - one finding stated across devices (or runs), for the summary cards (internal to report/).
 *
 * A card states one figure per device (f32's share of f16, the saving of f32 over convert ...). On a
 * machine with several GPUs, or with several runs, one sentence per device repeats itself; this
 * module turns the per-device figures into one phrase:
 *     "52–58% on 8 GPUs in 2 runs except cuda:2@b at 31%, 45% on cpu in 2 runs; n/a on cpu-ref (no f16 case)"
 *
 * The rule (docs/report.md, "Summary cards"):
 *  - Items are grouped by hardware: a device's group is its backend type and its device model
 *    (results/machine.h hb_machine_device: the GPU's name, else the backend's description up to
 *    " ("), so the 4 GPUs of one machine and of a second run of it form one group and the host CPU
 *    another. Runs (hb_across_run) form one group of their own.
 *  - An item with a NaN value is n/a, with its reason; the n/a items are named once after the
 *    ranges, a whole group at once when every item of it is n/a for one reason.
 *  - In a group of 3 or more values, an item is an exception when its value lies more than `tol`
 *    (in the value's units) and more than HB_ACROSS_REL of the median's magnitude from the group's
 *    median (a share of 12% against 31%; not +1127% against +1400%), provided the exceptions are
 *    at most a third of the group's values (else none is: the group's range is the finding); the
 *    exceptions are named with their values, and the range (min-max) covers the other items.
 *  - Groups and items keep the order they were added in. A group of devices is "on" its name, a
 *    group of runs "in" it ("12–15% in 2 runs").
 *
 * Memory: hb_across owns its items (the strings are copied); hb_across_free releases them.
 */
#ifndef HB_REPORT_ACROSS_H
#define HB_REPORT_ACROSS_H
#include <stddef.h>
#include <jansson.h>
#include "report/report.h"

/* The distance from a group's median beyond which a device is named as an exception, in the
 * units of the value: the cards' figures are percentages, so percentage points. */
#define HB_ACROSS_TOL_PCT 10.0
/* ... and the share of the median's magnitude it must exceed too (large values vary in proportion). */
#define HB_ACROSS_REL 0.25

typedef struct hb_across_item {
    char label[160];  /* how the item is named alone: the device id ("cuda:2@host") or the run's label */
    char base[64];    /* the device's backend instance ("cuda:2"); "" for a run */
    char group[256];  /* group key: type|model for a device, "run" for a run */
    char noun[96];    /* what one item of the group is ("GPU", "cpu device", "run") */
    char model[96];   /* the device model, to tell two groups of the same noun apart; "" for a run */
    int run;          /* the item's run (index into hb_report.runs); -1 for a run item */
    double v;         /* the figure; NaN = n/a */
    char why[160];    /* why n/a ("" when v is finite) */
    int exception;    /* set by hb_across_eval: named apart from its group's range */
} hb_across_item;

/* One group after hb_across_eval. */
typedef struct hb_across_group {
    int first;        /* index of its first item */
    int nitems;       /* items in the group (with a value or not) */
    int n;            /* items with a finite value */
    int nexc;         /* of them, exceptions */
    int nruns;        /* distinct runs among the group's items (0 for a group of runs) */
    double lo, hi;    /* range of the values that are not exceptions (NaN when n == 0) */
    double median;    /* median of all n values (NaN when n == 0) */
} hb_across_group;

typedef struct hb_across {
    hb_across_item *it; int n, cap;
    hb_across_group *g; int ng;     /* filled by hb_across_eval */
    double tol;                     /* exception distance, in the values' units (> 0) */
    int oom;                        /* an allocation failed: items were dropped */
} hb_across;

/* Start an empty aggregate with exception distance tol (> 0; e.g. HB_ACROSS_TOL_PCT). */
void hb_across_init(hb_across *a, double tol);
/* Add device `dev` of rp (index into rp->devs) with its value v (NaN = n/a, then `why` says why;
 * why may be NULL). Strings are copied. On allocation failure sets a->oom and drops the item. */
void hb_across_dev(hb_across *a, const hb_report *rp, int dev, double v, const char *why);
/* Add run `run` of rp (index into rp->runs) with its value, as hb_across_dev. */
void hb_across_run(hb_across *a, const hb_report *rp, int run, double v, const char *why);
/* Group the items, mark the exceptions and compute each group's range and median by the rule above.
 * Idempotent; called by hb_across_text and hb_across_json. */
void hb_across_eval(hb_across *a);
/* The phrase (see the top of this file) into buf (NUL-terminated, cut at len - 1 bytes); fmt formats
 * one value ("52%": hb_report_fmt_pct); a range whose ends share their unit is written "52–58%",
 * one with a signed end "-5.0% to 12%", "+1127% to +1138%". "" when there are no items. Returns buf. */
const char *hb_across_text(hb_across *a, const char *(*fmt)(double), char *buf, size_t len);
/* The same as JSON (new reference; NULL when out of memory):
 * {"groups": [{"name", "devices": n, "lo", "hi", "median", "exceptions": [{"label", "value"}]}],
 *  "na": [{"label", "why"}]}, values as numbers (null for NaN). */
json_t *hb_across_json(hb_across *a);
void hb_across_free(hb_across *a);

/* Append to the last card of `cards` (a summary card, common.h card_add) one finding:
 * {"what": what, ...hb_across_json} in its "findings" array. */
void hb_across_card(json_t *cards, const char *what, hb_across *a);
/* Give the last card of `cards` its per-device table (HTML: behind a <details> on the card whose
 * summary is `caption`, "per device"; Markdown: after the card's sentence): ncols headers
 * (const char *). The card's "details" is a doc.c table ({"caption", "head", "rows", "collapsed":
 * true}). Returns the rows array (borrowed) to fill with hb_doc_row; NULL when cards is empty. */
json_t *hb_across_card_table(json_t *cards, const char *caption, int ncols, ...);
#endif
