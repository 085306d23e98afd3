/*
 * common.h - what the report's sections share (common.c): the analysis context, rows grouped or
 * paired by the fields they differ in, value vectors, verdict words, summary cards. Each question is
 * one file (q1_conversion.c ... q5_selection.c), the figures another (figures.c); analyze.c runs
 * them in order (hb_report_analyze). Internal to report/.
 */
#ifndef HB_REPORT_COMMON_H
#define HB_REPORT_COMMON_H
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/report.h"
#include "analysis/modecheck.h"
#include "core/strmap.h"

#define F hb_report_fmt

/* The op families in the order the report lists them (core/hybench.h HB_FAMILY_LIST); the first
 * NFAM (all but collective, which has its own section) are the roofline table's columns. */
extern const char *const family_order[];
#define NFAM 7

typedef struct vec { double *v; size_t n, cap; } vec;

/* Groups of values by a string key, in order of creation; attrs is an object describing the group. */
#define NV 4
typedef struct grp { json_t *attrs; vec v[NV]; } grp;
typedef struct groups { hb_strmap map; grp *g; size_t n, cap; } groups; /* map: key -> index into g */

/* analysis context */
typedef struct ctx {
    hb_report *rp;
    hb_strmap op_rank; /* op name -> rank (family order, then first appearance) */
    char **ops;        /* ops in rank order (borrowed strings) */
    int nops;
} ctx;

typedef struct opinfo { const char *op, *family, *bound; int rank, first; } opinfo;

enum { K_DEV = 1, K_OP = 2, K_SHAPE = 4, K_MODE = 8, K_ROUTE = 16, K_DTYPE = 32, K_NAME = 64 };

typedef struct rpair { size_t a, b; } rpair;

/* The median of series 0 of the group stored under key in gs; NaN when there is no such group. */
double grp_median(const groups *gs, const char *key);
void vec_push(vec *x, double d);
double vec_median(vec *x);
double vec_min(const vec *x);
double vec_max(const vec *x);
grp *grp_get(groups *gs, const char *key, json_t *attrs /* stolen */);
/* The group stored under key in gs, or NULL. */
grp *grp_find(const groups *gs, const char *key);
void groups_free(groups *gs);
const char *gattr(const grp *g, const char *k);
int fam_rank(const char *f);
int op_rank(const ctx *c, const char *op);
const hb_rdev *row_dev(const ctx *c, const hb_rrow *w);
const char *class_of(const hb_rrow *w);
int cmp_opinfo(const void *a, const void *b);
int rctx_init(ctx *c, hb_report *rp);
void rctx_free(ctx *c);
const char *field(const hb_rrow *w, int f);
void make_key(const hb_rrow *w, int flags, char *buf, size_t len);
size_t find_pairs(const hb_report *rp, int flags, int vary, const char *va, const char *vb,
                         const char *only_family, const char *skip_family, rpair **out);
int cmp_pair(const void *x, const void *y, void *arg);
void sort_pairs(ctx *c, rpair *v, size_t n);
int cmp_rowix(const void *x, const void *y, void *arg);
const char *rkey(const hb_rrow *w);
double xfer(const hb_rrow *w);
double conv_time(const hb_rrow *w);
double mem_of(const hb_rrow *w);
const char *verdict_q1(double pct, const char **tone);
const char *verdict_q3(double pct, const char **tone);
const char *verdict_q2(double pct, const char **tone);
const char *saving_words(double pct);
const char *tone_cell(const char *tone, const char *text);
/* The host's time enq (seconds) to enqueue a layer that takes t on the device, as a cell: marked
 * "launch-bound" (tone warn) from 90% of t on, where launching, not the device, bounds the layer; "-"
 * when enq is not finite. Rotating buffer (F). */
const char *enqueue_cell(double enq, double t);
json_t *plot_ids_new(void);
void plot_id_add(json_t *ids, const hb_plot *p);
int card_device(const ctx *c, int dev, const int *has);
void card_add(json_t *cards, int q, const char *title, const char *badge, const char *tone, const char *text);
void gp_size_axis(hb_sb *b);
/* Where a case came from: its record's "source" (workload file:line, the line that generated its
 * sweep), else its name; "" when neither. */
const char *row_source(const hb_rrow *w);
/* 1 when a plotted line must not join prev to cur (both of one plotted series, sorted by size): they
 * come from different workload lines (a sweep is the shapes of one line), or have the same size (two
 * shapes of equal size are not a sweep step). 0 when prev is NULL. Write a blank line into the data
 * file then: gnuplot breaks the line there and keeps the series' style and title. */
int series_break(const hb_rrow *prev, const hb_rrow *cur);
/* The CI of w's total median (seconds), or the median itself on both ends when the record has none. */
void ci_or_median(const hb_rrow *w, double *lo, double *hi);
/* "1.23 ms [1.20 ms, 1.26 ms]" (median and its CI), with " \u2020" when the case missed its CI
 * target (ci_met false); rotating buffer (F). */
const char *fmt_time_ci(const hb_rrow *w);
/* The saving 100*(1 - t_b/t_a) in percent, and its conservative interval from the two CIs:
 * [1 - hi_b/lo_a, 1 - lo_b/hi_a] (each end at the CIs' extremes: wider than a joint interval). */
/* Forget plot p, the last one registered (hb_report_plot_begin), and remove its data and script
 * files (the caller has closed the data file). */
void plot_drop(hb_report *rp, hb_plot *p);
void saving_ci(const hb_rrow *a, const hb_rrow *b, double *lo, double *hi);

/* The sections, in document order: each appends its part of the document and of rp->summary. */
/* runs_header.c: the report's opening paragraph (`generated`: the report's UTC date) and its table
 * of runs, one row per input (run, run id, date, host, CPU, devices, software, commit, cases; the
 * command line and machine fingerprint folded), appended to the document. */
void hb_report_header(ctx *c, const char *generated);
hb_status hb_report_runs(ctx *c);                /* runs_compare.c: two or more runs side by side */
hb_status hb_report_q1(ctx *c, json_t *cards);   /* q1_conversion.c */
hb_status hb_report_q2(ctx *c, json_t *cards);   /* q2_precision.c */
hb_status hb_report_q3(ctx *c, json_t *cards);   /* q3_memory.c */
hb_status hb_report_q4(ctx *c, json_t *cards);   /* q4_transfers.c */
hb_status hb_report_q5(ctx *c, json_t *cards);   /* q5_selection.c */
hb_status hb_report_rooflines(ctx *c);           /* figures.c */
hb_status hb_report_models(ctx *c);              /* figures.c */
hb_status hb_report_per_op(ctx *c);              /* figures.c */
hb_status hb_report_collectives(ctx *c);         /* collectives.c */
hb_status hb_report_tp_scaling(ctx *c);          /* tp_scaling.c */
hb_status hb_report_quantized(ctx *c, json_t *cards); /* quantized.c: quantized weights (decode layer, matmul against f32) */
hb_status hb_report_plans(ctx *c);               /* hybrid_plans.c: replayed device plans */
hb_status hb_report_energy(ctx *c);              /* energy_report.c */
#endif
