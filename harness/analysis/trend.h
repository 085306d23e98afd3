/*
 * trend.h - the nightly history of one machine (`hybench trend`, docs/history.md): each case's series
 * of medians from the store (results/store.h), its steps and drifts (analysis/changepoint.h), and a
 * page with one plot per op and backend.
 */
#ifndef HB_TREND_H
#define HB_TREND_H
#include <stddef.h>
#include "analysis/changepoint.h"
#include "results/store.h"

/* One change of one case, indices into the hb_series it was found in. */
typedef struct hb_trend_change {
    size_t cas;          /* hb_series.cases index */
    size_t run_begin;    /* hb_series.runs index of the first night that changed */
    size_t run_end;      /* drift: last night of its segment; step: run_begin */
    hb_change c;         /* kind, size, rate, p (begin/end there index the case's nights with data) */
} hb_trend_change;

/* Every case of x: its finite medians (nights where it is absent or not ok are left out), as logs,
 * through hb_changepoints with o. *v (owned by the caller, free) gets the changes ordered by case then
 * night, *n their count. Returns HB_OK or HB_ENOMEM. */
hb_status hb_trend_analyze(const hb_series *x, const hb_cp_opts *o, hb_trend_change **v, size_t *n);

typedef struct hb_trend_opts {
    const char *metric;   /* "total" or "compute" */
    const char *out;      /* output folder; the page goes to OUT/<fingerprint>/ */
    int plot;             /* 0: data and tables only, no gnuplot */
    size_t labelled;      /* most cases drawn and labelled in one plot (largest changes first), default 8 */
    hb_cp_opts cp;
} hb_trend_opts;

/* Write OUT/<fp>/: changes.md (one row per change, largest first: op, backend, case, kind, the night
 * it began with its date, run id and commit, size and rate), index.html (the same table and the
 * plots), and per (op, backend) <op>__<backend>.dat and .svg: the median and the 10th-90th
 * percentile band over the group's cases of each case's time normalised to its first night, and the
 * changed cases (up to t->labelled) as labelled lines with the night of their change marked. One
 * gnuplot process draws every plot; its messages go to OUT/<fp>/gnuplot.log. Prints a summary line.
 * fp and desc: the machine's fingerprint and description (borrowed). Returns HB_EXIT_OK, or
 * HB_EXIT_IO when a file cannot be written or gnuplot fails (the data files are kept). */
int hb_trend_write(const hb_series *x, const char *fp, const char *desc, const hb_trend_change *v, size_t n,
                   const hb_trend_opts *t);
#endif
