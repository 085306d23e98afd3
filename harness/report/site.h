/*
 * site.h - `hybench publish` (cli/cmd_publish.c, docs/history.md "The site"): a static site of the
 * nightly history, browsable from file:// with no network:
 *
 *   OUT/index.html                  every machine: fingerprint, name (host, CPU, devices), its last night
 *                                   (date, run, commit, cases) and the steps and drifts found
 *   OUT/m/<fp>/index.html           a machine: its steps and drifts (each linking to its night's report
 *                                   and naming its commit) and every case in a filterable table
 *   OUT/m/<fp>/nights.js            HB_NIGHTS: the machine's nights (date, run id, commit, report)
 *   OUT/m/<fp>/c/<id>.html, .js     a case: its history graph (median and 95% CI band per night, zoom,
 *                                   hover: commit and run id, click: the night's report); HB_CASE
 *   OUT/runs/<run-id>/              the night's rendered report (`hybench report`), copied (or linked)
 *                                   from REPORTS/<run-id>/ when it exists
 *   OUT/lib/                        dygraph.min.js and dygraph.css (Debian libjs-dygraphs), site.js
 *                                   and site.css (reports/)
 * Case ids are the store's case identity ids (stable within one store). Steps and drifts are those of
 * analysis/trend.h (hb_trend_analyze); nothing here detects changes itself. Every string from the
 * store reaches HTML through hb_report_html_esc and the .js data files through jansson.
 * Units: times in seconds (the pages choose s, ms, us or ns); sizes of changes relative (0.15: 15%).
 */
#ifndef HB_SITE_H
#define HB_SITE_H
#include <jansson.h>
#include <stddef.h>
#include "analysis/trend.h"
#include "results/store.h"

/* The files publish copies from the libjs-dygraphs package, and the package's name for messages. */
#define HB_SITE_DYGRAPHS_DIR "/usr/share/javascript/dygraphs"
#define HB_SITE_DYGRAPHS_PKG "libjs-dygraphs"

typedef struct hb_site_opts {
    const char *out;      /* the site's folder (created) */
    const char *reports;  /* folder of rendered night reports, REPORTS/<run-id>/index.html; NULL: none */
    const char *lib_dir;  /* folder holding dygraph.min.js and dygraph.css */
    const char *tpl_dir;  /* folder holding site.js and site.css */
    const char *metric;   /* "total" or "compute" */
    int link_reports;     /* 1: symbolic links to the reports instead of copies */
    hb_cp_opts cp;        /* the change detection's options (hb_trend_analyze) */
} hb_site_opts;

/* One of a machine's largest changes, as the landing page lists it. */
#define HB_SITE_TOP 5
typedef struct hb_site_top {
    long long case_id;      /* the case's page: m/<fp>/c/<case_id>.html */
    char what[320];         /* "op shape mode/route/dtype on backend" */
    int drift;              /* 0 step, 1 drift */
    double size;            /* relative: +0.15 is 15% slower */
    size_t night;           /* index of the night it began */
    char date[64], run_id[128], commit[64];
    int has_report;         /* the night's report is in the site */
} hb_site_top;

/* One machine as the landing page lists it (hb_site_write_machine fills it). */
typedef struct hb_site_machine {
    char fp[24];
    char name[768];         /* "host vm; CPU AMD EPYC (2 cores); devices: NVIDIA H100 80GB HBM3" */
    hb_store_run last;      /* its last night */
    int last_report;        /* the last night's report is in the site */
    size_t nights, ncases;  /* in the series */
    size_t steps, drifts;   /* found over the series */
    size_t new_changes;     /* of those, the ones that began on the last night */
    hb_site_top top[HB_SITE_TOP]; /* its largest changes, largest first */
    size_t ntop;
} hb_site_machine;

/* ---- site_data.c: pure ---- */
/* A readable name of a machine from a run's meta record and backend records (borrowed; either may be
 * NULL) and its host: "host H; CPU MODEL (N cores); devices: D1, D2" where the devices are the
 * available backends other than cpu and cpu-ref, by the description up to its first " (" (or "no
 * other devices"). Into buf (size len, NUL-terminated, truncated); returns buf. */
const char *hb_site_machine_name(json_t *meta, json_t *backends, const char *host, char *buf, size_t len);
/* A run id (or machine fingerprint) usable as one path component of the site (runs/<run-id>/,
 * m/<fp>/): 1 when it is 1..127 characters of [A-Za-z0-9._-] and does not begin with '.', else 0 (such
 * a night gets no report link; such a machine no page). */
int hb_site_run_id_ok(const char *run_id);
/* The data of case k of x: {"id", "key", "op", "backend", "label", the identity fields of ci->info
 * (shape_str, dtype, mode, route, ...), "metric", "points": [[night, median, ci_lo|null, ci_hi|null],
 * ...] one per night with a finite median (night: index into x->runs, oldest first; seconds),
 * "changes": [{"kind": "step"|"drift", "night", "end", "size", "rate", "p"}, ...] (the changes of v[n]
 * whose case is k, by night)}. ci may be NULL (no CI, no identity fields). A new reference, or NULL out
 * of memory. */
json_t *hb_site_case_json(const hb_series *x, const hb_series_ci *ci, size_t k, const char *metric,
                          const hb_trend_change *v, size_t n);
/* The machine's nights: {"machine": fp, "name": name, "nights": [{"date", "run", "commit", "host",
 * "cases", "report": "runs/<run-id>/index.html" or null}, ...]} (report paths relative to the site's
 * root; has_report[i] says whether night i has one; NULL: none has). A new reference or NULL. */
json_t *hb_site_nights_json(const hb_series *x, const char *fp, const char *name, const int *has_report);

/* ---- site_files.c ---- */
/* Create o->out, o->out/lib and o->out/runs and copy dygraph.min.js and dygraph.css from o->lib_dir and
 * site.js and site.css from o->tpl_dir into o->out/lib/. Returns HB_EXIT_OK; HB_EXIT_NO_PACKAGE when
 * a dygraphs file is missing (err names the file and the package libjs-dygraphs); HB_EXIT_USAGE when
 * site.js or site.css is missing; HB_EXIT_IO when a folder or file cannot be written (err names it). */
int hb_site_prepare(const hb_site_opts *o, char *err, size_t errlen);
/* Put the report of night run_id into the site: o->reports/<run_id>/ (with its index.html) copied (or
 * linked, o->link_reports) to o->out/runs/<run_id>/, unless the copy there is as new as the source.
 * Returns 1 when the site holds the report after the call, 0 when there is none (no o->reports, no
 * such folder, or a run id hb_site_run_id_ok refuses), -1 when it cannot be written (err). */
int hb_site_add_report(const hb_site_opts *o, const char *run_id, char *err, size_t errlen);
/* Write "var NAME = <j>;\n" to path (j borrowed; compact, ASCII-only JSON). 0, or -1 (errno set). */
int hb_site_write_js(const char *path, const char *name, json_t *j);

/* ---- site_pages.c ---- */
/* Write one machine's pages (OUT/m/<fp>/: index.html, nights.js, c/<id>.html and .js for every case)
 * from its series x and CIs ci (borrowed), the changes v[n] of hb_trend_analyze over x, and the
 * machine's name and description (borrowed); copies each night's report (hb_site_add_report) and fills
 * *m for the landing page. Returns HB_EXIT_OK or HB_EXIT_IO (err names the file). */
int hb_site_write_machine(const hb_site_opts *o, const hb_series *x, const hb_series_ci *ci, const hb_trend_change *v,
                          size_t n, const char *fp, const char *name, const char *desc, hb_site_machine *m, char *err,
                          size_t errlen);
/* Write OUT/index.html: the machines m[nm] (borrowed), the largest changes over all of them (each
 * machine's m->top, largest first) and the store's name (without its password).
 * Returns HB_EXIT_OK or HB_EXIT_IO (err names the file). */
int hb_site_write_index(const hb_site_opts *o, const hb_site_machine *m, size_t nm, const char *store_name, char *err,
                        size_t errlen);
#endif
