/*
 * report.h - the experiment report (`hybench report`, cli/cmd_report.c): the interface of report/.
 *
 * Pipeline (hb_cmd_report in cli/cmd_report.c):
 *   hb_report_load     results files (results/results.h) -> runs, devices, one flat row per case record
 *   hb_report_analyze  rows -> summary (jansson object, every computed answer), a document (list of
 *                      blocks rendered to HTML and Markdown), plot data files and gnuplot scripts
 *   hb_report_plots_run  run gnuplot on the scripts, in parallel batches
 *   hb_report_write    index.html (self-contained, SVG inlined), report.md, summary.json, routing.json
 *
 * Units everywhere in this module: seconds, bytes, elements, percent where a name ends in _pct.
 * Docs: docs/report.md. Schema of the inputs: docs/results-schema.md.
 */
#ifndef HB_REPORT_H
#define HB_REPORT_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <jansson.h>
#include "core/hybench.h"
#include "results/results.h"

#define DNAN ((double)NAN) /* NAN is a float constant */

/* ---- the plan's figures: the only numbers the report does not compute, kept in one table ----
 * Sources: ../shared/seeds/000_4344c1f5c9dbec3b.txt ("検証項目" and "成功指標": conversion saving
 * 10-30% expected, 15-25% success, memory 20-30%, Neural Engine f32 >= 60% of f16, measured 50-60%)
 * and 001_7902abc1d762a1de.txt (5.1 DeviceSelector: < 1,000,000 bytes -> CPU, < 100,000,000 -> Core ML
 * when available, else the best GPU or the CPU; 000's selector: matmul size > 10000 -> GPU; the
 * chains CUDA -> OpenCL -> CPU and OpenCL -> CPU). */
typedef struct hb_plan {
    double conv_lo_pct, conv_hi_pct;         /* expected end-to-end saving of f32 over convert */
    double conv_ok_lo_pct, conv_ok_hi_pct;   /* success band */
    double f32_of_f16_min_pct;               /* f32 keeps at least this share of f16 throughput */
    double ane_f32_of_f16_lo_pct, ane_f32_of_f16_hi_pct; /* the plan's Neural Engine measurement */
    double mem_lo_pct, mem_hi_pct;           /* peak-memory reduction target */
    double cpu_below_bytes;                  /* tensors under this go to the CPU */
    double ane_below_bytes;                  /* tensors under this (and >= cpu_below) go to the ANE */
    double matmul_gpu_above_elems;           /* matmul with more elements than this goes to the GPU */
    double tensor_elem_bytes;                /* bytes per element used to size a tensor (f32: 4) */
} hb_plan;
extern const hb_plan hb_report_plan;

/* One results file. */
typedef struct hb_rrun {
    hb_run r;                /* owns every json_t below */
    char label[96];          /* short name, unique among the inputs: host, host@commit7, or host@commit7#i */
    const char *host, *commit, *run_id, *date; /* from the meta record ("?" when absent) */
} hb_rrun;

/* One backend instance of one run (a "device" of the report). */
typedef struct hb_rdev {
    int run;                 /* index into hb_report.runs */
    char id[128];            /* display id: backend name, or "backend@runlabel" with several inputs */
    const char *backend;     /* instance name from the record ("cpu", "opencl:0:0", "cuda:0") */
    char type[24];           /* instance name up to the first ':' ("opencl") */
    const char *description; /* "" when absent */
    const char *reason;      /* why unavailable; "" when available */
    int available, host_memory;
    int is_reference;        /* cpu-ref: the verification reference, never a routing candidate */
    int is_cpu_device;       /* an OpenCL/other device whose description or info says it is a CPU */
    const hb_rec_backend *rec; /* the backend record (borrowed from the run: r.backend_recs); NULL when a
                                  case names a backend that has none */
} hb_rdev;

/* One case record, flattened. Strings are borrowed from the run's records ("" when absent). */
typedef struct hb_rrow {
    const hb_rec_case *rec;  /* the record (results/record.h; borrowed from the run: r.case_recs) */
    int run, dev;
    const char *op, *family, *shape, *name, *model, *dtype, *mode, *route, *status, *bound;
    double size, flops, bytes, weight;
    double t[HB_PH_COUNT];  /* phase medians, seconds; NAN when absent */
    double ci_lo, ci_hi;    /* the CI of the total median (phases.total.ci_lo/ci_hi), seconds; NAN when absent */
    int ci_met;             /* the case met its CI target: 1, 0, -1 when the record does not say */
    double gflops, gbps, gflops_total, gbps_total; /* NAN when absent */
    double host_bytes, device_bytes, rss;          /* mem.*; NAN when absent */
    int ok;                  /* status "ok" with a finite total median > 0 */
} hb_rrow;

/* One plot: files <id>.dat, <id>.gp, <id>.svg, <id>.png in the report directory. */
typedef struct hb_plot {
    char id[96];
    char title[200];
    char section[24];        /* "q1".."q5", "roofline", "models", "ops" */
    char caption[400];
    int width, height;       /* pixels of the PNG and the SVG viewBox */
    int ok;                  /* the SVG exists after hb_report_plots_run */
    char err[200];
} hb_plot;

typedef struct hb_report {
    hb_rrun *runs; int nruns;
    hb_rdev *devs; int ndevs;
    hb_rrow *rows; size_t nrows;
    char name[128];
    char outdir[4096];
    char tpl_dir[4096];      /* directory holding style.gp and style.css */
    hb_plot *plots; int nplots, plots_cap;
    json_t *summary;         /* owned; written as summary.json */
    json_t *routing;         /* owned; written as routing.json */
    json_t *doc;             /* owned; array of blocks, see doc.c */
    int svg_only;            /* draw SVG only (no PNG): faster, for checks */
} hb_report;

/* ---- data.c: the results files flattened into runs, devices and rows; number formats ---- */
/* Load every path into rp (zeroed by the caller; name/outdir may be set later). Labels runs and
 * devices and flattens cases. HB_OK, or the results/ reader's error (HB_EINVAL/HB_EDEVICE) with
 * "path:line: reason" in err; HB_ENOMEM. rp must be freed with hb_report_free in every case. */
hb_status hb_report_load(hb_report *rp, char *const *paths, int npaths, char *err, size_t errlen);
void hb_report_free(hb_report *rp);
/* Median of v[0..n-1] (sorts v in place); NAN when n == 0. NANs in v must be removed first. */
double hb_report_median(double *v, size_t n);
/* Human-readable numbers into a rotating set of 32 static buffers (valid for 31 further calls;
 * not thread-safe): time "1.23 ms", count "1.5Mi" (binary prefixes), bytes "12.0 MiB",
 * percent "12.3%" ("n/a" for NAN), a plain "%.3g" number. Results longer than 511 bytes are cut. */
const char *hb_report_fmt_time(double s);
const char *hb_report_fmt_count(double n);
const char *hb_report_fmt_bytes(double b);
const char *hb_report_fmt_pct(double p);
const char *hb_report_fmt_num(double x);
/* printf into a rotating buffer as above. */
const char *hb_report_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growing string (gnuplot script bodies). Zero-initialize; hb_sb_printf appends (sets oom and
 * stops appending when memory runs out); the caller frees s with hb_sb_free. */
typedef struct hb_sb { char *s; size_t n, cap; int oom; } hb_sb;
void hb_sb_printf(hb_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hb_sb_free(hb_sb *b);

/* ---- plot.c (the escaping helpers: escape.c) ---- */
/* Register a plot and open its data file <outdir>/<id>.dat for writing (caller fcloses it).
 * id: [A-Za-z0-9_-] only (other characters are replaced by '_'). width/height: pixels.
 * Returns the plot (pointer valid until the next hb_report_plot_begin) or NULL with errno set. */
hb_plot *hb_report_plot_begin(hb_report *rp, const char *id, const char *section, const char *title,
                              int width, int height, FILE **dat);
/* Write <outdir>/<id>.gp: a header naming the data file and style.gp, then `body` (gnuplot commands
 * that plot '<id>.dat'; may use multiplot) run once per output format (svg, png) by a do-for loop.
 * HB_OK or HB_EDEVICE (cannot write). */
hb_status hb_report_plot_script(hb_report *rp, const hb_plot *p, const char *body);
/* Copy style.gp into the report directory (with hb_formats = "svg" appended when rp->svg_only)
 * and run gnuplot on every registered script, `jobs`
 * processes at a time, several scripts per process. Sets each plot's ok/err. HB_OK when gnuplot
 * ran (individual plots may have failed: see ok), HB_EDEVICE when gnuplot cannot be started. */
hb_status hb_report_plots_run(hb_report *rp, int jobs);
/* Append the SVG of plot p to `out`, without the XML prolog, its element ids prefixed with "p<n>_"
 * so that several inline SVGs in one page do not share ids. Returns 0, or -1 when unreadable. */
int hb_report_svg_inline(const hb_report *rp, const hb_plot *p, int n, FILE *out);
/* Escaping: every string that may come from a results file (backend, op, model, name, shape,
 * descriptions, reasons, host, run id, titles built from them) reaches a gnuplot script, report.md
 * or index.html only through one of these four helpers (data values go through the .dat files).
 * Escape a string for a gnuplot single-quoted string: doubles the quotes; newlines and other control
 * characters become spaces, so the string cannot end its line (inside single quotes gnuplot expands
 * neither backquotes nor @macros, and the terminals in style.gp are noenhanced, so nothing else is
 * special). Rotating static buffer (8 slots, results cut at 511 bytes). */
const char *hb_report_gp_str(const char *s);
/* Escape a string for the text of a gnuplot comment line ("# ..."): newlines and other control
 * characters become spaces and backslashes '/' (a trailing backslash would continue the comment onto
 * the next line). Rotating static buffer as hb_report_gp_str. */
const char *hb_report_gp_comment(const char *s);

/* ---- doc.c: the document, rendered to Markdown and HTML (hb_report_html_esc, md_esc: escape.c) ----
 * Blocks (JSON objects in rp->doc): {"h":level,"text":..,"anchor":..}, {"p":text},
 * {"table":{"caption":..,"head":[..],"rows":[[..]..],"collapsed":bool[,"more":[{"summary":..,
 * "items":[[k,v]..]}..]]}}, {"plots":[plot ids]},
 * {"summary":[{"q":n,"title":..,"badge":..,"tone":good|warn|bad|info|none,"text":..[,"details":table]
 * [,"findings":[..]]}]} (report/across.h),
 * {"note":text}. */
void hb_doc_h(hb_report *rp, int level, const char *anchor, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void hb_doc_p(hb_report *rp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hb_doc_note(hb_report *rp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Start a table with ncols headers (const char *), return its rows array (borrowed). */
json_t *hb_doc_table(hb_report *rp, const char *caption, int collapsed, int ncols, ...);
/* The table object itself, {caption, head, rows, collapsed}, with ncols headers (const char *) taken
 * from ap: a new reference; *rows (borrowed from it) receives its empty rows array. For a table that
 * goes elsewhere than the document (a summary card's details, report/across.c). */
json_t *hb_doc_table_v(const char *caption, int collapsed, int ncols, va_list ap, json_t **rows);
/* Append one row of ncols cells (const char *; NULL renders as empty). */
void hb_doc_row(json_t *rows, int ncols, ...);
/* Give the last block of the document, a table, one more row's folded facts: `items`, an array of
 * [key, value] string pairs (stolen; NULL = none), shown after the table one click away (HTML: a
 * <details> per row whose summary is the row's first cell and `summary`; Markdown: a list, one line
 * per row). Call once per row, in row order. Nothing when the last block is not a table (items are
 * released). */
void hb_doc_more(hb_report *rp, const char *summary, json_t *items);
void hb_doc_plots(hb_report *rp, json_t *ids /* stolen: array of strings */);
/* Write s escaped for HTML text and attribute values: & < > " ' as entities. */
void hb_report_html_esc(FILE *f, const char *s);
/* Write s escaped for Markdown running text, headings and table cells: \ ` * _ [ ] < > # | are
 * backslash-escaped, newlines and other control characters become spaces (one line). */
void hb_report_md_esc(FILE *f, const char *s);
/* Write index.html (style.css inlined, SVG inlined) and report.md into rp->outdir.
 * HB_OK or HB_EDEVICE with the reason in err. */
hb_status hb_report_render(hb_report *rp, char *err, size_t errlen);

/* ---- analyze.c (the sections: analyze.h) ---- */
/* Compute every answer into rp->summary and rp->routing, build rp->doc, write the plot data and
 * scripts. HB_OK, HB_ENOMEM or HB_EDEVICE (a file cannot be written). */
hb_status hb_report_analyze(hb_report *rp);

#endif
