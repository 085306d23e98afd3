/* report_analyze.c - the five questions of ../shared/DESIGN.md answered from the rows, with the
 * plan's figures from hb_report_plan; model totals, rooflines, per-op plots and run metadata.
 * Every answer goes into rp->summary (summary.json) and the document; see docs/report.md for the
 * definitions. */
#include "report/report.h"
#include "analysis/modecheck.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define P (hb_report_plan)
#define F hb_report_fmt
#define DNAN ((double)NAN) /* NAN is a float constant */

/* ---------------------------------------------------------------- small helpers ---- */

typedef struct vec { double *v; size_t n, cap; } vec;

static void vec_push(vec *x, double d)
{
    if (!isfinite(d)) return;
    if (x->n == x->cap) {
        size_t nc = x->cap ? x->cap * 2 : 16;
        double *nv = realloc(x->v, nc * sizeof *nv);
        if (!nv) return;
        x->v = nv;
        x->cap = nc;
    }
    x->v[x->n++] = d;
}

static double vec_median(vec *x) { return hb_report_median(x->v, x->n); } /* sorts */
static double vec_min(const vec *x) { double m = DNAN; for (size_t i = 0; i < x->n; i++) if (!(x->v[i] >= m)) m = x->v[i]; return m; }
static double vec_max(const vec *x) { double m = DNAN; for (size_t i = 0; i < x->n; i++) if (!(x->v[i] <= m)) m = x->v[i]; return m; }

/* Groups of values by a string key, in order of creation; attrs is an object describing the group. */
#define NV 4
typedef struct grp { json_t *attrs; vec v[NV]; } grp;
typedef struct groups { json_t *map; grp *g; size_t n, cap; } groups;

static grp *grp_get(groups *gs, const char *key, json_t *attrs /* stolen */)
{
    if (!gs->map) gs->map = json_object();
    json_t *ix = json_object_get(gs->map, key);
    if (ix) { json_decref(attrs); return &gs->g[json_integer_value(ix)]; }
    if (gs->n == gs->cap) {
        size_t nc = gs->cap ? gs->cap * 2 : 16;
        grp *ng = realloc(gs->g, nc * sizeof *ng);
        if (!ng) { json_decref(attrs); return NULL; }
        gs->g = ng;
        gs->cap = nc;
    }
    grp *g = &gs->g[gs->n];
    memset(g, 0, sizeof *g);
    g->attrs = attrs;
    json_object_set_new(gs->map, key, json_integer((json_int_t)gs->n));
    gs->n++;
    return g;
}

static void groups_free(groups *gs)
{
    for (size_t i = 0; i < gs->n; i++) {
        json_decref(gs->g[i].attrs);
        for (int k = 0; k < NV; k++) free(gs->g[i].v[k].v);
    }
    free(gs->g);
    json_decref(gs->map);
    memset(gs, 0, sizeof *gs);
}

static const char *gattr(const grp *g, const char *k) { const char *s = json_string_value(json_object_get(g->attrs, k)); return s ? s : ""; }

/* a JSON number, or null for DNAN/inf (JSON has no NaN) */
static json_t *jnum(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static const char *const family_order[] = { "elementwise", "matmul", "conv2d", "pooling", "reduction", "attention", "chain" };
#define NFAM ((int)(sizeof family_order / sizeof family_order[0]))
_Static_assert(sizeof family_order / sizeof family_order[0] == 7, "the roofline table lists 7 families");
static int fam_rank(const char *f)
{
    for (int i = 0; i < NFAM; i++) if (!strcmp(f, family_order[i])) return i;
    return NFAM;
}

/* analysis context */
typedef struct ctx {
    hb_report *rp;
    json_t *op_rank;   /* op name -> rank (family order, then first appearance) */
    char **ops;        /* ops in rank order (borrowed strings) */
    int nops;
} ctx;

static int op_rank(const ctx *c, const char *op)
{
    json_t *v = json_object_get(c->op_rank, op);
    return v ? (int)json_integer_value(v) : 1 << 20;
}

static const hb_rdev *DEV(const ctx *c, const hb_rrow *w) { return &c->rp->devs[w->dev]; }
static const char *class_of(const hb_rrow *w)
{
    if (!strcmp(w->family, "chain")) return "chain";
    if (!strcmp(w->bound, "memory") || !strcmp(w->bound, "compute")) return w->bound;
    return "other";
}

typedef struct opinfo { const char *op, *family, *bound; int rank, first; } opinfo;
static int cmp_opinfo(const void *a, const void *b)
{
    const opinfo *x = a, *y = b;
    if (x->rank != y->rank) return x->rank - y->rank;
    return x->first - y->first;
}

static int ctx_init(ctx *c, hb_report *rp)
{
    memset(c, 0, sizeof *c);
    c->rp = rp;
    c->op_rank = json_object();
    opinfo *oi = calloc(rp->nrows + 1, sizeof *oi);
    json_t *seen = json_object();
    if (!oi || !seen || !c->op_rank) { free(oi); json_decref(seen); return -1; }
    int n = 0;
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        if (json_object_get(seen, w->op)) continue;
        json_object_set_new(seen, w->op, json_true());
        oi[n].op = w->op;
        oi[n].family = w->family;
        oi[n].bound = w->bound;
        oi[n].rank = fam_rank(w->family);
        oi[n].first = n;
        n++;
    }
    qsort(oi, (size_t)n, sizeof *oi, cmp_opinfo);
    c->ops = calloc((size_t)n + 1, sizeof *c->ops);
    if (!c->ops) { free(oi); json_decref(seen); return -1; }
    for (int i = 0; i < n; i++) {
        c->ops[i] = (char *)oi[i].op;
        json_object_set_new(c->op_rank, oi[i].op, json_integer(i));
    }
    c->nops = n;
    free(oi);
    json_decref(seen);
    return 0;
}

static void ctx_free(ctx *c)
{
    json_decref(c->op_rank);
    free(c->ops);
}

/* ---- matching cases that differ in one field ---- */
enum { K_DEV = 1, K_OP = 2, K_SHAPE = 4, K_MODE = 8, K_ROUTE = 16, K_DTYPE = 32, K_NAME = 64 };

static const char *field(const hb_rrow *w, int f)
{
    switch (f) {
    case K_OP: return w->op;
    case K_SHAPE: return w->shape;
    case K_MODE: return w->mode;
    case K_ROUTE: return w->route;
    case K_DTYPE: return w->dtype;
    case K_NAME: return w->name;
    default: return "";
    }
}

static void make_key(const hb_rrow *w, int flags, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    if (flags & K_DEV) o += (size_t)snprintf(buf + o, len - o, "%d|", w->dev);
    for (int f = K_OP; f <= K_NAME && o < len; f <<= 1)
        if (flags & f) o += (size_t)snprintf(buf + o, len - o, "%s|", field(w, f));
}

typedef struct rpair { size_t a, b; } rpair;

/* Pairs (a, b) of ok rows with equal key(flags) where field `vary` is va for a and vb for b;
 * `only_family` non-NULL keeps rows of that family, `skip_family` drops one. Returns the count;
 * *out is malloc'd (free it). */
static size_t find_pairs(const hb_report *rp, int flags, int vary, const char *va, const char *vb,
                         const char *only_family, const char *skip_family, rpair **out)
{
    json_t *map = json_object(), *used = json_object();
    rpair *v = malloc((rp->nrows + 1) * sizeof *v);
    size_t n = 0;
    char key[1024];
    *out = v;
    if (!map || !used || !v) { json_decref(map); json_decref(used); return 0; }
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        if (!w->ok || strcmp(field(w, vary), va)) continue;
        if (only_family && strcmp(w->family, only_family)) continue;
        if (skip_family && !strcmp(w->family, skip_family)) continue;
        make_key(w, flags, key, sizeof key);
        if (!json_object_get(map, key)) json_object_set_new(map, key, json_integer((json_int_t)i));
    }
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        if (!w->ok || strcmp(field(w, vary), vb)) continue;
        if (only_family && strcmp(w->family, only_family)) continue;
        if (skip_family && !strcmp(w->family, skip_family)) continue;
        make_key(w, flags, key, sizeof key);
        json_t *a = json_object_get(map, key);
        if (!a || json_object_get(used, key)) continue;
        json_object_set_new(used, key, json_true());
        v[n].a = (size_t)json_integer_value(a);
        v[n].b = i;
        n++;
    }
    json_decref(map);
    json_decref(used);
    return n;
}

/* sort pairs by device, op rank, size, route, dtype of their b row */
static int cmp_pair(const void *x, const void *y, void *arg)
{
    const ctx *c = arg;
    const hb_rrow *a = &c->rp->rows[((const rpair *)x)->b], *b = &c->rp->rows[((const rpair *)y)->b];
    if (a->dev != b->dev) return a->dev - b->dev;
    int ra = op_rank(c, a->op), rb = op_rank(c, b->op);
    if (ra != rb) return ra - rb;
    if (a->size != b->size) return a->size < b->size ? -1 : 1;
    if (a->flops != b->flops) return a->flops < b->flops ? -1 : 1;
    int r = strcmp(a->route, b->route);
    if (r) return r;
    r = strcmp(a->dtype, b->dtype);
    if (r) return r;
    return strcmp(a->name, b->name);
}

static void sort_pairs(ctx *c, rpair *v, size_t n) { qsort_r(v, n, sizeof *v, cmp_pair, c); }

/* sort row indices by device, op rank, size, flops */
static int cmp_rowix(const void *x, const void *y, void *arg)
{
    const ctx *c = arg;
    const hb_rrow *a = &c->rp->rows[*(const size_t *)x], *b = &c->rp->rows[*(const size_t *)y];
    int ra = op_rank(c, a->op), rb = op_rank(c, b->op);
    if (ra != rb) return ra - rb;
    if (a->dev != b->dev) return a->dev - b->dev;
    if (a->size != b->size) return a->size < b->size ? -1 : 1;
    if (a->flops != b->flops) return a->flops < b->flops ? -1 : 1;
    return 0;
}

/* The record's case key (or op|shape when absent), for summary.json cross-references. */
static const char *rkey(const hb_rrow *w)
{
    const char *k = json_string_value(json_object_get(w->rec, "key"));
    return k ? k : "";
}

static double xfer(const hb_rrow *w)
{
    double h = isfinite(w->t[HB_PH_H2D]) ? w->t[HB_PH_H2D] : 0, d = isfinite(w->t[HB_PH_D2H]) ? w->t[HB_PH_D2H] : 0;
    return h + d;
}
static double conv_time(const hb_rrow *w)
{
    double a = isfinite(w->t[HB_PH_CONVERT_IN]) ? w->t[HB_PH_CONVERT_IN] : 0;
    double b = isfinite(w->t[HB_PH_CONVERT_OUT]) ? w->t[HB_PH_CONVERT_OUT] : 0;
    return a + b;
}
static double mem_of(const hb_rrow *w)
{
    if (!isfinite(w->host_bytes) && !isfinite(w->device_bytes)) return DNAN;
    return (isfinite(w->host_bytes) ? w->host_bytes : 0) + (isfinite(w->device_bytes) ? w->device_bytes : 0);
}

/* verdicts against the plan; tone: good, warn, bad, info */
static const char *verdict_q1(double pct, const char **tone)
{
    if (!isfinite(pct)) { *tone = "none"; return "no data"; }
    if (pct < P.conv_lo_pct) { *tone = "bad"; return F("below the plan's %g-%g%%", P.conv_lo_pct, P.conv_hi_pct); }
    if (pct < P.conv_ok_lo_pct) { *tone = "warn"; return F("inside %g-%g%%, below the %g-%g%% success band", P.conv_lo_pct, P.conv_hi_pct, P.conv_ok_lo_pct, P.conv_ok_hi_pct); }
    if (pct <= P.conv_ok_hi_pct) { *tone = "good"; return F("inside the %g-%g%% success band", P.conv_ok_lo_pct, P.conv_ok_hi_pct); }
    if (pct <= P.conv_hi_pct) { *tone = "good"; return F("inside %g-%g%%, above the %g-%g%% success band", P.conv_lo_pct, P.conv_hi_pct, P.conv_ok_lo_pct, P.conv_ok_hi_pct); }
    *tone = "info";
    return F("above the plan's %g-%g%%", P.conv_lo_pct, P.conv_hi_pct);
}

static const char *verdict_q3(double pct, const char **tone)
{
    if (!isfinite(pct)) { *tone = "none"; return "no data"; }
    if (pct < P.mem_lo_pct) { *tone = "bad"; return F("below the %g-%g%% target", P.mem_lo_pct, P.mem_hi_pct); }
    if (pct <= P.mem_hi_pct) { *tone = "good"; return F("inside the %g-%g%% target", P.mem_lo_pct, P.mem_hi_pct); }
    *tone = "good";
    return F("beyond the %g-%g%% target", P.mem_lo_pct, P.mem_hi_pct);
}

static const char *verdict_q2(double pct, const char **tone)
{
    if (!isfinite(pct)) { *tone = "none"; return "no data"; }
    if (pct >= P.f32_of_f16_min_pct) { *tone = "good"; return F("meets the plan's >= %g%%", P.f32_of_f16_min_pct); }
    *tone = "bad";
    return F("below the plan's %g%%", P.f32_of_f16_min_pct);
}

/* "saves 12%", "costs 16% more", "n/a" */
static const char *saving_words(double pct)
{
    if (!isfinite(pct)) return "n/a";
    return pct >= 0 ? F("saves %s", hb_report_fmt_pct(pct)) : F("costs %s more", hb_report_fmt_pct(-pct));
}

static const char *tone_cell(const char *tone, const char *text) { return F("[%s] %s", tone, text); }

static json_t *plot_ids_new(void) { return json_array(); }
static void plot_id_add(json_t *ids, const hb_plot *p) { if (p) json_array_append_new(ids, json_string(p->id)); }

/* Devices listed in the summary card: non-reference ones, or every one when only references ran. */
static int card_device(const ctx *c, int dev, const int *has)
{
    int any_nonref = 0;
    for (int i = 0; i < c->rp->ndevs; i++) if (has[i] && !c->rp->devs[i].is_reference) any_nonref = 1;
    return has[dev] && (!any_nonref || !c->rp->devs[dev].is_reference);
}

static void card_add(json_t *cards, int q, const char *title, const char *badge, const char *tone, const char *text)
{
    json_array_append_new(cards, json_pack("{s:i,s:s,s:s,s:s,s:s}", "q", q, "title", title, "badge", badge,
                                           "tone", tone, "text", text));
}

/* common gnuplot preamble for x = size on a log axis */
static void gp_size_axis(hb_sb *b)
{
    hb_sb_printf(b, "set logscale x 10\nset format x '%%.0s%%c'\nset xlabel 'size (elements of the largest tensor)'\n");
}

/* ---------------------------------------------------------------- Q1 conversion cost ---- */

/* the saving cell of a pair whose compute moved between modes: marked, no saving shown */
static const char *moved_cell(double ratio) { return F("[bad] compute moved (convert/f32 %.3fx): left out", ratio); }

static hb_status q1(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    rpair *pr;
    size_t n = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_ROUTE | K_DTYPE | K_NAME, K_MODE, "convert", "f32", NULL, NULL, &pr);
    if (!pr) return HB_ENOMEM;
    sort_pairs(c, pr, n);
    /* the mode-invariance check (report_modecheck.c): a pair where either case's compute moved
     * between modes beyond its noise is marked and left out of every savings figure */
    hb_report_mc minv;
    if (hb_report_mc_compute(rp, &minv) != HB_OK) { free(pr); return HB_ENOMEM; }
    unsigned char *mvd = calloc(n + 1, 1);
    if (!mvd) { hb_report_mc_free(&minv); free(pr); return HB_ENOMEM; }
    size_t nmoved = 0;
    for (size_t i = 0; i < n; i++) nmoved += mvd[i] = minv.moved[pr[i].a] || minv.moved[pr[i].b];
    json_t *q = json_object(), *jp = json_array();
    json_object_set_new(rp->summary, "q1", q);
    json_object_set_new(q, "definition", json_string("saving_pct = 100 * (1 - total_f32 / total_convert), phase medians of status-ok cases matched by device, op, shape, route, dtype and name; pairs with compute_moved (the compute phase moved between modes beyond its noise, mode_invariance) are left out of by_class, chain verdicts, convert_device and verdicts"));
    json_object_set_new(q, "moved_left_out", json_integer((json_int_t)nmoved));
    json_object_set_new(q, "pairs", jp);
    groups bycls = { 0 }, byfam = { 0 };
    int *has = calloc((size_t)rp->ndevs + 1, sizeof *has);
    if (!has) { free(pr); return HB_ENOMEM; }
    char key[512];
    for (size_t i = 0; i < n; i++) {
        const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
        double ta = a->t[HB_PH_TOTAL], tb = b->t[HB_PH_TOTAL];
        double s = 100.0 * (1.0 - tb / ta);
        double cs = 100.0 * conv_time(a) / ta, xs = 100.0 * xfer(a) / ta, ks = 100.0 * a->t[HB_PH_COMPUTE] / ta;
        json_t *pc = json_object(), *pf = json_object();
        for (int k = 0; k < HB_PH_COUNT; k++) {
            json_object_set_new(pc, hb_phase_names[k], jnum(a->t[k]));
            json_object_set_new(pf, hb_phase_names[k], jnum(b->t[k]));
        }
        json_array_append_new(jp, json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:b,s:o}",
            "device", DEV(c, b)->id, "op", b->op, "family", b->family, "class", class_of(b), "shape", b->shape,
            "size", jnum(b->size), "route", b->route, "dtype", b->dtype, "name", b->name,
            "key_convert", rkey(a), "key_f32", rkey(b),
            "total_convert_s", jnum(ta), "total_f32_s", jnum(tb), "saving_pct", jnum(s),
            "convert_share_pct", jnum(cs), "transfer_share_pct", jnum(xs), "compute_share_pct", jnum(ks),
            "phases_convert", pc, "phases_f32", pf, "compute_moved", mvd[i], "compute_ratio", jnum(minv.ratio[pr[i].a])));
        if (mvd[i]) continue;
        has[b->dev] = 1;
        snprintf(key, sizeof key, "%d|%s", b->dev, class_of(b));
        grp *g = grp_get(&bycls, key, json_pack("{s:s,s:s}", "device", DEV(c, b)->id, "class", class_of(b)));
        if (g) { vec_push(&g->v[0], s); vec_push(&g->v[1], cs); vec_push(&g->v[2], xs); }
        snprintf(key, sizeof key, "%d|%s", b->dev, b->op);
        g = grp_get(&byfam, key, json_pack("{s:s,s:s,s:s}", "device", DEV(c, b)->id, "op", b->op, "family", b->family));
        if (g) vec_push(&g->v[0], s);
    }

    hb_doc_h(rp, 2, "q1", "Q1 Conversion cost: what f32 saves over convert");
    hb_doc_p(rp, "Saving = 1 - total(f32) / total(convert), from the median end-to-end time of each case, matched by backend, op, shape, route and dtype; only cases with status ok count. The plan expected %g-%g%% and set %g-%g%% as success. Conversion share = (convert_in + convert_out) / total of the convert case.",
             P.conv_lo_pct, P.conv_hi_pct, P.conv_ok_lo_pct, P.conv_ok_hi_pct);
    if (nmoved)
        hb_doc_p(rp, "%zu of the %zu matched cases are left out of every saving below: their compute phase, which conversion does not touch, moved between convert and f32 beyond its noise (see Mode invariance below), so their difference is a measurement artifact, not a saving. The tables mark them \"compute moved\".",
                 nmoved, n);
    json_t *jc = json_array();
    json_object_set_new(q, "by_class", jc);
    json_t *rows = hb_doc_table(rp, "Saving per backend and op class (median over every matched case; min-max in brackets)", 0, 6,
                                "backend", "class", "cases", "median saving", "conversion share of convert time", "verdict");
    for (size_t i = 0; i < bycls.n; i++) {
        grp *g = &bycls.g[i];
        size_t cnt = g->v[0].n;
        double lo = vec_min(&g->v[0]), hi = vec_max(&g->v[0]);
        double m = vec_median(&g->v[0]), cs = vec_median(&g->v[1]), xs = vec_median(&g->v[2]);
        const char *tone, *v = verdict_q1(m, &tone);
        json_array_append_new(jc, json_pack("{s:s,s:s,s:I,s:o,s:o,s:o,s:o,s:o,s:s,s:s}", "device", gattr(g, "device"), "class", gattr(g, "class"),
            "n", (json_int_t)cnt, "median_saving_pct", jnum(m), "min_saving_pct", jnum(lo), "max_saving_pct", jnum(hi),
            "median_convert_share_pct", jnum(cs), "median_transfer_share_pct", jnum(xs), "verdict", v, "tone", tone));
        hb_doc_row(rows, 6, gattr(g, "device"), gattr(g, "class"), F("%zu", cnt),
                   F("%s (%s to %s)", hb_report_fmt_pct(m), hb_report_fmt_pct(lo), hb_report_fmt_pct(hi)),
                   hb_report_fmt_pct(cs), tone_cell(tone, v));
    }
    /* chain: the model-level answer */
    json_t *jch = json_array();
    json_object_set_new(q, "chain", jch);
    int nchain = 0;
    for (size_t i = 0; i < n; i++) if (!strcmp(rp->rows[pr[i].b].family, "chain")) nchain++;
    if (nchain) {
        rows = hb_doc_table(rp, "Transformer block (chain) per backend: the model-level answer", 0, 8,
                            "backend", "chain", "name", "route", "convert", "f32", "saving", "verdict");
        for (size_t i = 0; i < n; i++) {
            const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
            if (strcmp(b->family, "chain")) continue;
            double s = 100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL]);
            const char *tone, *v = verdict_q1(s, &tone);
            if (mvd[i]) { v = "left out: compute moved between modes"; tone = "none"; }
            json_array_append_new(jch, json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:s,s:s,s:b}", "device", DEV(c, b)->id, "op", b->op,
                "name", b->name, "route", b->route, "dtype", b->dtype, "total_convert_s", jnum(a->t[HB_PH_TOTAL]),
                "total_f32_s", jnum(b->t[HB_PH_TOTAL]), "saving_pct", jnum(s), "verdict", v, "tone", tone, "compute_moved", mvd[i]));
            hb_doc_row(rows, 8, DEV(c, b)->id, b->op, *b->name ? b->name : b->shape, b->route,
                       hb_report_fmt_time(a->t[HB_PH_TOTAL]), hb_report_fmt_time(b->t[HB_PH_TOTAL]),
                       mvd[i] ? moved_cell(minv.ratio[pr[i].a]) : hb_report_fmt_pct(s), mvd[i] ? "" : tone_cell(tone, v));
        }
    } else {
        hb_doc_note(rp, "No transformer-block chain (family \"chain\") has both a convert and an f32 case with status ok in these results, so the model-level answer is missing; a default `hybench run` (which includes the TinyLlama transformer-block chain of workloads/tinyllama.ini) would answer it.");
    }
    /* convert-device (f64 uploaded, converted on the device): a design option beside convert */
    {
        rpair *pc, *pf;
        size_t nc = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_ROUTE | K_DTYPE | K_NAME, K_MODE, "convert", "convert-device", NULL, NULL, &pc);
        size_t nf = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_ROUTE | K_DTYPE | K_NAME, K_MODE, "convert-device", "f32", NULL, NULL, &pf);
        json_t *jcd = json_array();
        json_object_set_new(q, "convert_device", jcd);
        if (pc && pf && (nc || nf)) {
            groups gd = { 0 };
            for (int w = 0; w < 2; w++) {
                rpair *v = w ? pf : pc;
                size_t nv = w ? nf : nc;
                for (size_t i = 0; i < nv; i++) {
                    const hb_rrow *a = &rp->rows[v[i].a], *b = &rp->rows[v[i].b];
                    if (minv.moved[v[i].a] || minv.moved[v[i].b]) continue;
                    snprintf(key, sizeof key, "%d|%s", b->dev, class_of(b));
                    grp *g = grp_get(&gd, key, json_pack("{s:s,s:s}", "device", DEV(c, b)->id, "class", class_of(b)));
                    if (g) vec_push(&g->v[w], 100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL]));
                }
            }
            rows = hb_doc_table(rp, "convert-device (f64 uploaded, converted on the device) against convert and f32 (medians)", 0, 5,
                                "backend", "class", "cases", "convert-device saves over convert", "f32 saves over convert-device");
            for (size_t i = 0; i < gd.n; i++) {
                grp *g = &gd.g[i];
                size_t cnt = g->v[0].n > g->v[1].n ? g->v[0].n : g->v[1].n;
                double m0 = vec_median(&g->v[0]), m1 = vec_median(&g->v[1]);
                json_array_append_new(jcd, json_pack("{s:s,s:s,s:I,s:o,s:o}", "device", gattr(g, "device"), "class", gattr(g, "class"),
                    "n", (json_int_t)cnt, "convert_device_over_convert_pct", jnum(m0), "f32_over_convert_device_pct", jnum(m1)));
                hb_doc_row(rows, 5, gattr(g, "device"), gattr(g, "class"), F("%zu", cnt), hb_report_fmt_pct(m0), hb_report_fmt_pct(m1));
            }
            groups_free(&gd);
        }
        free(pc);
        free(pf);
    }
    rows = hb_doc_table(rp, "Saving per backend and op (median over sizes, routes and dtypes)", 1, 6,
                        "backend", "op", "cases", "median saving", "min", "max");
    for (size_t i = 0; i < byfam.n; i++) {
        grp *g = &byfam.g[i];
        double lo = vec_min(&g->v[0]), hi = vec_max(&g->v[0]);
        size_t cnt = g->v[0].n;
        hb_doc_row(rows, 6, gattr(g, "device"), gattr(g, "op"), F("%zu", cnt), hb_report_fmt_pct(vec_median(&g->v[0])),
                   hb_report_fmt_pct(lo), hb_report_fmt_pct(hi));
    }
    rows = hb_doc_table(rp, "Every matched case (phase medians of the convert case)", 1, 12, "backend", "op", "shape", "route", "dtype",
                        "convert total", "f32 total", "saving", "convert_in", "h2d", "compute", "d2h+convert_out");
    for (size_t i = 0; i < n; i++) {
        const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
        hb_doc_row(rows, 12, DEV(c, b)->id, b->op, b->shape, b->route, b->dtype, hb_report_fmt_time(a->t[HB_PH_TOTAL]),
                   hb_report_fmt_time(b->t[HB_PH_TOTAL]),
                   mvd[i] ? moved_cell(minv.ratio[pr[i].a]) : hb_report_fmt_pct(100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL])),
                   hb_report_fmt_time(a->t[HB_PH_CONVERT_IN]), hb_report_fmt_time(a->t[HB_PH_H2D]),
                   hb_report_fmt_time(a->t[HB_PH_COMPUTE]),
                   F("%s + %s", hb_report_fmt_time(a->t[HB_PH_D2H]), hb_report_fmt_time(a->t[HB_PH_CONVERT_OUT])));
    }

    /* plots: saving vs size per family (dtype f32, route pageable), series per device x op */
    json_t *ids = plot_ids_new();
    hb_status st = HB_OK;
    for (int fi = 0; fi < NFAM - 1 && n; fi++) {
        const char *fam = family_order[fi];
        int nser = 0;
        FILE *dat = NULL;
        hb_plot *p = NULL;
        hb_sb body = { 0 };
        int curdev = -1;
        const char *curop = NULL;
        for (size_t i = 0; i < n; i++) {
            const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
            if (mvd[i] || strcmp(b->family, fam) || strcmp(b->dtype, "f32") || strcmp(b->route, "pageable")) continue;
            if (!p) {
                p = hb_report_plot_begin(rp, F("q1_saving_%s", fam), "q1", F("Q1: end-to-end saving of f32 over convert, %s", fam), 900, 430, &dat);
                if (!p) { st = HB_EDEVICE; break; }
                hb_sb_printf(&body, "set title '%s'\n", hb_report_gp_str(p->title));
                gp_size_axis(&body);
                hb_sb_printf(&body, "set ylabel 'saving of f32 over convert (%%)'\nset yrange [-100<*:100]\n"
                             "set object 1 rect from graph 0, first %g to graph 1, first %g fc rgb hb_c_band fs solid 1.0 noborder behind\n"
                             "set object 2 rect from graph 0, first %g to graph 1, first %g fc rgb hb_c_band_ok fs solid 1.0 noborder behind\n"
                             "set label 1 'plan %g-%g%%, success %g-%g%%' at graph 0.01, first %g offset 0,0.6 font ',9' tc rgb '#555555'\n"
                             "plot ", P.conv_lo_pct, P.conv_hi_pct, P.conv_ok_lo_pct, P.conv_ok_hi_pct,
                             P.conv_lo_pct, P.conv_hi_pct, P.conv_ok_lo_pct, P.conv_ok_hi_pct, P.conv_hi_pct);
            }
            if (b->dev != curdev || strcmp(b->op, curop)) {
                if (nser) { fprintf(dat, "\n\n"); hb_sb_printf(&body, ", \\\n     "); }
                curdev = b->dev;
                curop = b->op;
                fprintf(dat, "# %s %s: size saving_pct\n", DEV(c, b)->id, b->op);
                int opi = 0;
                for (int k = 0; k < c->nops; k++) if (!strcmp(c->ops[k], b->op)) opi = k;
                int devi = b->dev;
                hb_sb_printf(&body, "'%s.dat' index %d using 1:2 with linespoints lt %d dt %d title '%s'", p->id, nser,
                             opi % 10 + 1, devi % 5 + 1, hb_report_gp_str(F("%s %s", DEV(c, b)->id, b->op)));
                nser++;
            }
            fprintf(dat, "%.17g %.6g\n", b->size, 100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL]));
        }
        if (p) {
            hb_sb_printf(&body, "\n");
            fclose(dat);
            if (hb_report_plot_script(rp, p, body.s) != HB_OK) st = HB_EDEVICE;
            plot_id_add(ids, p);
        }
        hb_sb_free(&body);
    }
    /* stacked phase bars per device: per op the smallest and largest size, convert and f32 bars,
     * each phase as % of the convert case's total */
    for (int d = 0; d < rp->ndevs && n; d++) {
        if (!has[d]) continue;
        FILE *dat = NULL;
        hb_plot *p = NULL;
        int nbars = 0;
        double barmax = 0;
        size_t i = 0;
        hb_sb body = { 0 };
        /* pairs are sorted by device, op, size: walk op by op */
        while (i < n) {
            const hb_rrow *b0 = &rp->rows[pr[i].b];
            size_t j = i, first = (size_t)-1, last = (size_t)-1;
            while (j < n && rp->rows[pr[j].b].dev == b0->dev && !strcmp(rp->rows[pr[j].b].op, b0->op)) {
                const hb_rrow *bj = &rp->rows[pr[j].b];
                if (!mvd[j] && !strcmp(bj->dtype, "f32") && !strcmp(bj->route, "pageable")) {
                    if (first == (size_t)-1) first = j;
                    last = j;
                }
                j++;
            }
            if (b0->dev == d && first != (size_t)-1) {
                if (!p) {
                    p = hb_report_plot_begin(rp, F("q1_phases_%s", rp->devs[d].id), "q1",
                                             F("Q1: phase breakdown on %s, convert (C) and f32 (F), %% of the convert total", rp->devs[d].id), 900, 460, &dat);
                    if (!p) { st = HB_EDEVICE; break; }
                    fprintf(dat, "# label convert_in h2d compute d2h convert_out other (percent of the convert case's total;\n"
                                 "# other = the case's total minus its phases: time outside the timed phases)\n");
                }
                size_t pick[2] = { first, last };
                for (int k = 0; k < (last == first ? 1 : 2); k++) {
                    const hb_rrow *a = &rp->rows[pr[pick[k]].a], *b = &rp->rows[pr[pick[k]].b];
                    double ta = a->t[HB_PH_TOTAL];
                    for (int m = 0; m < 2; m++) {
                        const hb_rrow *w = m ? b : a;
                        double v[6], sum = 0;
                        for (int ph = 0; ph < 5; ph++) { v[ph] = isfinite(w->t[ph]) ? 100.0 * w->t[ph] / ta : 0; sum += v[ph]; }
                        v[5] = 100.0 * w->t[HB_PH_TOTAL] / ta - sum;
                        if (v[5] < 0) v[5] = 0;
                        if (sum + v[5] > barmax) barmax = sum + v[5];
                        fprintf(dat, "\"%s %s %s\" %.5g %.5g %.5g %.5g %.5g %.5g\n", b->op, hb_report_fmt_count(b->size), m ? "F" : "C",
                                v[0], v[1], v[2], v[3], v[4], v[5]);
                        nbars++;
                    }
                    fprintf(dat, "\"\" 0 0 0 0 0 0\n");
                    nbars++;
                }
            }
            i = j;
        }
        if (p) {
            fclose(dat);
            int w = 140 + 14 * nbars;
            p->width = w < 900 ? 900 : (w > 2400 ? 2400 : w);
            hb_sb_printf(&body, "set title '%s'\nset style data histograms\nset style histogram rowstacked\n"
                         "set boxwidth 0.85\nset xtics rotate by 60 right scale 0 font ',8'\nset ylabel '%% of the convert case total'\n"
                         "set yrange [0:*<150]\nset ytics 25\nset grid noxtics\nset key outside right top\n%s"
                         "plot '%s.dat' using 2:xtic(1) title 'convert_in' lc rgb hb_c_convert_in, \\\n"
                         "     '' using 3 title 'h2d' lc rgb hb_c_h2d, '' using 4 title 'compute' lc rgb hb_c_compute, \\\n"
                         "     '' using 5 title 'd2h' lc rgb hb_c_d2h, '' using 6 title 'convert_out' lc rgb hb_c_convert_out, \\\n"
                         "     '' using 7 title 'other' lc rgb hb_c_other\n",
                         hb_report_gp_str(p->title),
                         barmax > 150 ? "set label 1 'bars above 150% are cut (f32 slower than convert: noise or a real slowdown; see the table)' at graph 0.01, graph 1.03 font ',9' tc rgb '#555555'\n" : "",
                         p->id);
            if (hb_report_plot_script(rp, p, body.s) != HB_OK) st = HB_EDEVICE;
            plot_id_add(ids, p);
        }
        hb_sb_free(&body);
    }
    hb_doc_plots(rp, ids);
    hb_report_mc_doc(rp, &minv, q);

    /* the card: chain medians per device if any, else every pair; plus the class medians */
    json_t *cv = json_array();
    json_object_set_new(q, "verdicts", cv);
    char text[2048] = "";
    size_t tl = 0;
    const char *badge = NULL, *btone = "none";
    int mixed = 0;
    for (int d = 0; d < rp->ndevs; d++) {
        if (!card_device(c, d, has)) continue;
        vec all = { 0 }, ch = { 0 };
        for (size_t i = 0; i < n; i++) {
            const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
            if (b->dev != d || mvd[i]) continue;
            double s = 100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL]);
            vec_push(strcmp(b->family, "chain") ? &all : &ch, s);
        }
        int use_chain = ch.n > 0;
        double m = use_chain ? vec_median(&ch) : vec_median(&all);
        const char *tone, *v = verdict_q1(m, &tone);
        json_array_append_new(cv, json_pack("{s:s,s:s,s:o,s:s,s:s}", "device", rp->devs[d].id, "basis",
                                            use_chain ? "chain" : "all ops", "median_saving_pct", jnum(m), "verdict", v, "tone", tone));
        if (!badge) { badge = v; btone = tone; }
        else if (strcmp(badge, v)) mixed = 1;
        /* class medians for the text */
        double mm = DNAN, mc = DNAN, csm = DNAN;
        for (size_t g = 0; g < bycls.n; g++) {
            if (strcmp(gattr(&bycls.g[g], "device"), rp->devs[d].id)) continue;
            json_t *row = json_array_get(jc, g);
            double med = json_number_value(json_object_get(row, "median_saving_pct"));
            if (!strcmp(gattr(&bycls.g[g], "class"), "memory")) { mm = med; csm = json_number_value(json_object_get(row, "median_convert_share_pct")); }
            if (!strcmp(gattr(&bycls.g[g], "class"), "compute")) mc = med;
        }
        if (tl < sizeof text - 200)
            tl += (size_t)snprintf(text + tl, sizeof text - tl, "%s%s: %s %s, %s. Memory-bound ops %s (%s of their convert time is conversion), compute-bound %s.",
                                   tl ? " " : "", rp->devs[d].id, use_chain ? "transformer layer" : "median over ops", hb_report_fmt_pct(m), v,
                                   hb_report_fmt_pct(mm), hb_report_fmt_pct(csm), hb_report_fmt_pct(mc));
        free(all.v);
        free(ch.v);
    }
    if (nmoved && tl < sizeof text - 200)
        tl += (size_t)snprintf(text + tl, sizeof text - tl, " %zu case%s left out: compute moved between modes.", nmoved, nmoved == 1 ? "" : "s");
    json_object_set_new(q, "answered", json_boolean(n > 0));
    if (!n) {
        card_add(cards, 1, "Conversion cost", "unanswered", "none",
                 "No case has both a convert and an f32 result with status ok; a `hybench run` with modes convert and f32 (the default) would answer.");
        hb_doc_note(rp, "Unanswered: no matched convert/f32 pair with status ok.");
    } else {
        card_add(cards, 1, "Conversion cost", mixed ? "differs by backend" : badge, mixed ? "warn" : btone, text);
    }
    groups_free(&bycls);
    groups_free(&byfam);
    free(has);
    free(pr);
    free(mvd);
    hb_report_mc_free(&minv);
    return st;
}

/* ---------------------------------------------------------------- Q2 lower precision ---- */

static hb_status q2(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    static const char *const lows[] = { "tf32", "f16", "bf16" };
    json_t *q = json_object(), *jp = json_array(), *js = json_array();
    json_object_set_new(rp->summary, "q2", q);
    json_object_set_new(q, "definition", json_string("ratio_pct = 100 * compute_median(low dtype) / compute_median(f32) = f32 GFLOP/s as a share of the low dtype's, status-ok cases matched by device, op, shape, mode, route and name"));
    json_object_set_new(q, "pairs", jp);
    json_object_set_new(q, "by_device", js);
    hb_doc_h(rp, 2, "q2", "Q2 Lower precision: f32 throughput as a share of f16, bf16, tf32");
    hb_doc_p(rp, "Share = f32 compute-phase GFLOP/s / the other dtype's, for the same case (so = compute time of the other dtype / compute time of f32). The plan assumed f32 keeps at least %g%% of f16 speed (it measured %g-%g%% on the Neural Engine).",
             P.f32_of_f16_min_pct, P.ane_f32_of_f16_lo_pct, P.ane_f32_of_f16_hi_pct);
    groups bydev = { 0 }, byop = { 0 };
    size_t total = 0;
    char key[512];
    for (size_t li = 0; li < 3; li++) {
        rpair *pr;
        size_t n = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_MODE | K_ROUTE | K_NAME, K_DTYPE, "f32", lows[li], NULL, NULL, &pr);
        if (!pr) return HB_ENOMEM;
        sort_pairs(c, pr, n);
        for (size_t i = 0; i < n; i++) {
            const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
            double ca = a->t[HB_PH_COMPUTE], cb = b->t[HB_PH_COMPUTE];
            if (!(ca > 0) || !(cb > 0)) continue;
            double r = 100.0 * cb / ca;
            total++;
            json_array_append_new(jp, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o}", "device", DEV(c, b)->id,
                "op", b->op, "shape", b->shape, "mode", b->mode, "route", b->route, "dtype", lows[li], "class", class_of(b),
                "size", jnum(b->size), "compute_f32_s", jnum(ca), "compute_low_s", jnum(cb), "gflops_f32", jnum(a->gflops),
                "ratio_pct", jnum(r)));
            snprintf(key, sizeof key, "%d|%s", b->dev, lows[li]);
            grp *g = grp_get(&bydev, key, json_pack("{s:s,s:s,s:i}", "device", DEV(c, b)->id, "dtype", lows[li], "dev", b->dev));
            if (g) { vec_push(!strcmp(class_of(b), "memory") ? &g->v[1] : &g->v[0], r); vec_push(&g->v[2], r); }
            snprintf(key, sizeof key, "%d|%s|%s", b->dev, b->op, lows[li]);
            g = grp_get(&byop, key, json_pack("{s:s,s:s,s:s,s:i}", "device", DEV(c, b)->id, "op", b->op, "dtype", lows[li], "dev", b->dev));
            if (g) vec_push(&g->v[0], r);
        }
        free(pr);
    }
    json_t *cards_text = json_array();
    if (total) {
        json_t *rows = hb_doc_table(rp, "f32 as a share of each lower-precision dtype, per backend (median over cases)", 0, 6,
                                    "backend", "vs dtype", "compute-bound ops", "memory-bound ops", "cases", "verdict (compute-bound)");
        for (size_t i = 0; i < bydev.n; i++) {
            grp *g = &bydev.g[i];
            size_t cnt = g->v[2].n;
            double mc = vec_median(&g->v[0]), mm = vec_median(&g->v[1]);
            const char *tone, *v = verdict_q2(isfinite(mc) ? mc : mm, &tone);
            json_array_append_new(js, json_pack("{s:s,s:s,s:I,s:o,s:o,s:s,s:s}", "device", gattr(g, "device"), "dtype", gattr(g, "dtype"),
                "n", (json_int_t)cnt, "median_compute_bound_pct", jnum(mc), "median_memory_bound_pct", jnum(mm), "verdict", v, "tone", tone));
            hb_doc_row(rows, 6, gattr(g, "device"), gattr(g, "dtype"), hb_report_fmt_pct(mc), hb_report_fmt_pct(mm), F("%zu", cnt), tone_cell(tone, v));
            json_array_append_new(cards_text, json_string(F("%s: f32 = %s of %s (%s)", gattr(g, "device"), hb_report_fmt_pct(isfinite(mc) ? mc : mm), gattr(g, "dtype"), v)));
        }
        rows = hb_doc_table(rp, "Per backend, op and dtype (median over shapes)", 1, 5, "backend", "op", "vs dtype", "f32 share", "cases");
        for (size_t i = 0; i < byop.n; i++) {
            grp *g = &byop.g[i];
            size_t cnt = g->v[0].n;
            hb_doc_row(rows, 5, gattr(g, "device"), gattr(g, "op"), gattr(g, "dtype"), hb_report_fmt_pct(vec_median(&g->v[0])), F("%zu", cnt));
        }
        /* plot per device: clustered bars, one cluster per op, one bar per low dtype */
        json_t *ids = plot_ids_new();
        for (int d = 0; d < rp->ndevs; d++) {
            int any = 0;
            for (size_t i = 0; i < byop.n; i++) if (json_integer_value(json_object_get(byop.g[i].attrs, "dev")) == d) any = 1;
            if (!any) continue;
            FILE *dat;
            hb_plot *p = hb_report_plot_begin(rp, F("q2_%s", rp->devs[d].id), "q2", F("Q2: f32 compute throughput as %% of tf32, f16, bf16 on %s", rp->devs[d].id), 900, 420, &dat);
            if (!p) return HB_EDEVICE;
            /* only the dtypes this device has: gnuplot refuses a histogram column without points */
            int haslow[3] = { 0, 0, 0 };
            for (size_t i = 0; i < byop.n; i++)
                if (json_integer_value(json_object_get(byop.g[i].attrs, "dev")) == d)
                    for (int l = 0; l < 3; l++) if (!strcmp(gattr(&byop.g[i], "dtype"), lows[l])) haslow[l] = 1;
            fprintf(dat, "# op, then f32 throughput as percent of:");
            for (int l = 0; l < 3; l++) if (haslow[l]) fprintf(dat, " %s", lows[l]);
            fprintf(dat, " (NaN = not measured)\n");
            for (int o = 0; o < c->nops; o++) {
                char line[512];
                int off = snprintf(line, sizeof line, "\"%s\"", c->ops[o]), anyv = 0;
                for (int l = 0; l < 3; l++) {
                    if (!haslow[l]) continue;
                    snprintf(key, sizeof key, "%d|%s|%s", d, c->ops[o], lows[l]);
                    json_t *ix = json_object_get(byop.map, key);
                    double v = ix ? hb_report_median(byop.g[json_integer_value(ix)].v[0].v, byop.g[json_integer_value(ix)].v[0].n) : DNAN;
                    if (isfinite(v)) anyv = 1;
                    off += snprintf(line + off, sizeof line - (size_t)off, " %.5g", v);
                }
                if (anyv) fprintf(dat, "%s\n", line);
            }
            fclose(dat);
            hb_sb body = { 0 };
            hb_sb_printf(&body, "set title '%s'\nset style data histograms\nset style histogram clustered gap 1\n"
                         "set boxwidth 0.9\nset xtics rotate by 30 right scale 0\nset ylabel 'f32 throughput, %% of the other dtype'\n"
                         "set yrange [0:*]\nset grid noxtics\nplot ", hb_report_gp_str(p->title));
            for (int l = 0, col = 2; l < 3; l++) {
                if (!haslow[l]) continue;
                hb_sb_printf(&body, "%s using %d%s title 'vs %s' lt %d, ", col == 2 ? F("'%s.dat'", p->id) : "''", col,
                             col == 2 ? ":xtic(1)" : "", lows[l], l + 1);
                col++;
            }
            hb_sb_printf(&body, "%g with lines dt 2 lw 1.5 lc rgb hb_c_ceiling title 'plan: %g%%'\n", P.f32_of_f16_min_pct, P.f32_of_f16_min_pct);
            hb_status st = hb_report_plot_script(rp, p, body.s);
            hb_sb_free(&body);
            if (st != HB_OK) return st;
            plot_id_add(ids, p);
        }
        hb_doc_plots(rp, ids);
    }
    /* which devices could answer but have no low-precision case */
    json_t *missing = json_array();
    json_object_set_new(q, "missing", missing);
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        if (!dv->available) continue;
        int anyd = 0;
        for (size_t i = 0; i < bydev.n; i++) if (json_integer_value(json_object_get(bydev.g[i].attrs, "dev")) == d) anyd = 1;
        if (!anyd) json_array_append_new(missing, json_string(dv->id));
    }
    json_object_set_new(q, "answered", json_boolean(total > 0));
    const char *which = "The GPU reference run (results/h100-reference.jsonl: cuda:0 with tf32, f16 and bf16 cases) would answer; on this kind of machine an OpenCL GPU with cl_khr_fp16 would answer for f16.";
    if (!total) {
        hb_doc_note(rp, "Unanswered: no case in these results has a compute dtype other than f32 with a matching f32 case (status ok). %s", which);
        card_add(cards, 2, "Lower precision", "unanswered", "none",
                 "No f16, bf16 or tf32 results in these files. The GPU reference run (results/h100-reference.jsonl) would answer.");
    } else {
        if (json_array_size(missing)) {
            char lst[600] = "";
            size_t o = 0;
            size_t i;
            json_t *m;
            json_array_foreach(missing, i, m) o += (size_t)snprintf(lst + o, o < sizeof lst ? sizeof lst - o : 0, "%s%s", i ? ", " : "", json_string_value(m));
            hb_doc_note(rp, "No lower-precision cases for: %s (the backend lacks them or they were not in the workload).", lst);
        }
        char text[1500] = "";
        size_t o = 0, i;
        json_t *t;
        const char *badge = NULL, *btone = "none";
        int mixed = 0;
        json_array_foreach(js, i, t) {
            const char *v = json_string_value(json_object_get(t, "verdict"));
            if (!badge) { badge = v; btone = json_string_value(json_object_get(t, "tone")); }
            else if (strcmp(badge, v)) mixed = 1;
        }
        json_array_foreach(cards_text, i, t)
            if (o < sizeof text - 1) o += (size_t)snprintf(text + o, sizeof text - o, "%s%s", i ? "; " : "", json_string_value(t));
        card_add(cards, 2, "Lower precision", mixed ? "differs by backend/dtype" : badge, mixed ? "warn" : btone, text);
    }
    json_decref(cards_text);
    groups_free(&bydev);
    groups_free(&byop);
    return HB_OK;
}

/* ---------------------------------------------------------------- Q3 memory ---- */

static hb_status q3(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    rpair *pr;
    size_t n = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_ROUTE | K_DTYPE | K_NAME, K_MODE, "convert", "f32", NULL, NULL, &pr);
    if (!pr) return HB_ENOMEM;
    sort_pairs(c, pr, n);
    json_t *q = json_object(), *jp = json_array(), *jc = json_array(), *jch = json_array();
    json_object_set_new(rp->summary, "q3", q);
    json_object_set_new(q, "definition", json_string("saving_pct = 100 * (1 - mem(f32) / mem(convert)), mem = mem.host_bytes + mem.device_bytes (harness accounting of the case's allocations), status-ok cases matched as in q1"));
    json_object_set_new(q, "pairs", jp);
    json_object_set_new(q, "by_class", jc);
    json_object_set_new(q, "chain", jch);
    hb_doc_h(rp, 2, "q3", "Q3 Memory: peak memory of f32 against convert");
    hb_doc_p(rp, "Peak memory of a case = host bytes + device bytes the harness allocated for it (its own accounting, by mode). Saving = 1 - f32 / convert. The plan targeted a %g-%g%% reduction. The process peak RSS (getrusage) is a high-water mark over the whole run, so it is shown for the chain only, as context.",
             P.mem_lo_pct, P.mem_hi_pct);
    groups bycls = { 0 }, byop = { 0 };
    int *has = calloc((size_t)rp->ndevs + 1, sizeof *has);
    if (!has) { free(pr); return HB_ENOMEM; }
    char key[512];
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
        double ma = mem_of(a), mb = mem_of(b);
        if (!(ma > 0) || !isfinite(mb)) continue;
        double s = 100.0 * (1.0 - mb / ma);
        used++;
        has[b->dev] = 1;
        json_array_append_new(jp, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:s,s:s}", "device", DEV(c, b)->id, "op", b->op,
            "shape", b->shape, "route", b->route, "dtype", b->dtype, "class", class_of(b), "name", b->name, "size", jnum(b->size),
            "mem_convert_bytes", jnum(ma), "mem_f32_bytes", jnum(mb), "saving_pct", jnum(s), "key_convert", rkey(a), "key_f32", rkey(b)));
        snprintf(key, sizeof key, "%d|%s", b->dev, class_of(b));
        grp *g = grp_get(&bycls, key, json_pack("{s:s,s:s}", "device", DEV(c, b)->id, "class", class_of(b)));
        if (g) vec_push(&g->v[0], s);
        snprintf(key, sizeof key, "%d|%s", b->dev, b->op);
        g = grp_get(&byop, key, json_pack("{s:s,s:s,s:i}", "device", DEV(c, b)->id, "op", b->op, "dev", b->dev));
        if (g) { vec_push(&g->v[0], s); vec_push(&g->v[1], ma); vec_push(&g->v[2], mb); }
    }
    if (used) {
        json_t *rows = hb_doc_table(rp, "Peak-memory saving per backend and op class (median; min-max in brackets)", 0, 4,
                                    "backend", "class", "median saving", "verdict");
        for (size_t i = 0; i < bycls.n; i++) {
            grp *g = &bycls.g[i];
            double lo = vec_min(&g->v[0]), hi = vec_max(&g->v[0]), m = vec_median(&g->v[0]);
            const char *tone, *v = verdict_q3(m, &tone);
            json_array_append_new(jc, json_pack("{s:s,s:s,s:I,s:o,s:o,s:o,s:s,s:s}", "device", gattr(g, "device"), "class", gattr(g, "class"),
                "n", (json_int_t)g->v[0].n, "median_saving_pct", jnum(m), "min_saving_pct", jnum(lo), "max_saving_pct", jnum(hi), "verdict", v, "tone", tone));
            hb_doc_row(rows, 4, gattr(g, "device"), gattr(g, "class"),
                       F("%s (%s to %s)", hb_report_fmt_pct(m), hb_report_fmt_pct(lo), hb_report_fmt_pct(hi)), tone_cell(tone, v));
        }
        /* chain, with resident where present */
        int any = 0;
        for (size_t i = 0; i < n; i++) if (!strcmp(rp->rows[pr[i].b].family, "chain")) any = 1;
        if (any) {
            rows = hb_doc_table(rp, "Transformer block (chain): peak memory per mode", 0, 8, "backend", "name", "route", "convert", "f32", "resident", "saving f32", "peak RSS after convert / f32");
            for (size_t i = 0; i < n; i++) {
                const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
                if (strcmp(b->family, "chain")) continue;
                double ma = mem_of(a), mb = mem_of(b), mr = DNAN;
                for (size_t k = 0; k < rp->nrows; k++) {
                    const hb_rrow *r = &rp->rows[k];
                    if (r->ok && r->dev == b->dev && !strcmp(r->mode, "resident") && !strcmp(r->op, b->op) && !strcmp(r->shape, b->shape) &&
                        !strcmp(r->route, b->route) && !strcmp(r->dtype, b->dtype) && !strcmp(r->name, b->name)) { mr = mem_of(r); break; }
                }
                double s = ma > 0 ? 100.0 * (1.0 - mb / ma) : DNAN;
                const char *tone, *v = verdict_q3(s, &tone);
                json_array_append_new(jch, json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:s,s:s}", "device", DEV(c, b)->id, "name", b->name, "route", b->route,
                    "mem_convert_bytes", jnum(ma), "mem_f32_bytes", jnum(mb), "mem_resident_bytes", jnum(mr), "saving_pct", jnum(s),
                    "rss_convert_bytes", jnum(a->rss), "rss_f32_bytes", jnum(b->rss), "verdict", v, "tone", tone));
                hb_doc_row(rows, 8, DEV(c, b)->id, *b->name ? b->name : b->shape, b->route, hb_report_fmt_bytes(ma), hb_report_fmt_bytes(mb),
                           hb_report_fmt_bytes(mr), tone_cell(tone, F("%s, %s", hb_report_fmt_pct(s), v)),
                           F("%s / %s", hb_report_fmt_bytes(a->rss), hb_report_fmt_bytes(b->rss)));
            }
        }
        rows = hb_doc_table(rp, "Per backend and op (median over shapes; bytes at the largest shape)", 1, 5, "backend", "op", "median saving", "convert bytes", "f32 bytes");
        for (size_t i = 0; i < byop.n; i++) {
            grp *g = &byop.g[i];
            double mxa = vec_max(&g->v[1]), mxb = vec_max(&g->v[2]);
            hb_doc_row(rows, 5, gattr(g, "device"), gattr(g, "op"), hb_report_fmt_pct(vec_median(&g->v[0])), hb_report_fmt_bytes(mxa), hb_report_fmt_bytes(mxb));
        }
        /* plot: clustered bars, op x device */
        FILE *dat;
        int ndv = 0, devs[64];
        for (int d = 0; d < rp->ndevs && ndv < 64; d++) if (has[d]) devs[ndv++] = d;
        hb_plot *p = hb_report_plot_begin(rp, "q3_memory", "q3", "Q3: peak-memory saving of f32 over convert per op (median over shapes)", 900, 420, &dat);
        if (!p) { free(has); free(pr); return HB_EDEVICE; }
        fprintf(dat, "# op");
        for (int k = 0; k < ndv; k++) fprintf(dat, " %s", rp->devs[devs[k]].id);
        fprintf(dat, " (saving percent; NaN = not measured)\n");
        for (int o = 0; o < c->nops; o++) {
            char line[2048];
            int off = snprintf(line, sizeof line, "\"%s\"", c->ops[o]), anyv = 0;
            for (int k = 0; k < ndv; k++) {
                snprintf(key, sizeof key, "%d|%s", devs[k], c->ops[o]);
                json_t *ix = json_object_get(byop.map, key);
                double v = ix ? hb_report_median(byop.g[json_integer_value(ix)].v[0].v, byop.g[json_integer_value(ix)].v[0].n) : DNAN;
                if (isfinite(v)) anyv = 1;
                off += snprintf(line + off, sizeof line - (size_t)off, " %.5g", v);
            }
            if (anyv) fprintf(dat, "%s\n", line);
        }
        fclose(dat);
        hb_sb body = { 0 };
        hb_sb_printf(&body, "set title '%s'\nset style data histograms\nset style histogram clustered gap 1\nset boxwidth 0.9\n"
                     "set xtics rotate by 30 right scale 0\nset ylabel 'peak-memory saving (%%)'\nset yrange [0:100]\nset grid noxtics\n"
                     "set object 1 rect from graph 0, first %g to graph 1, first %g fc rgb hb_c_band_ok fs solid 1.0 noborder behind\n"
                     "set label 1 'plan target %g-%g%%' at graph 0.01, first %g offset 0,0.6 font ',9' tc rgb '#555555'\nplot ",
                     hb_report_gp_str(p->title), P.mem_lo_pct, P.mem_hi_pct, P.mem_lo_pct, P.mem_hi_pct, P.mem_hi_pct);
        for (int k = 0; k < ndv; k++)
            hb_sb_printf(&body, "%s%s using %d%s title '%s' lt %d", k ? ", " : "", k ? "''" : F("'%s.dat'", p->id), k + 2, k ? "" : ":xtic(1)",
                         hb_report_gp_str(rp->devs[devs[k]].id), devs[k] % 10 + 1);
        hb_sb_printf(&body, "\n");
        hb_status st = hb_report_plot_script(rp, p, body.s);
        hb_sb_free(&body);
        if (st != HB_OK) { free(has); free(pr); return st; }
        json_t *ids = plot_ids_new();
        plot_id_add(ids, p);
        hb_doc_plots(rp, ids);
    }
    /* card: chain saving per device if present, else median of all */
    json_object_set_new(q, "answered", json_boolean(used > 0));
    json_t *cv = json_array();
    json_object_set_new(q, "verdicts", cv);
    if (!used) {
        hb_doc_note(rp, "Unanswered: no convert/f32 pair with mem.host_bytes/device_bytes; a `hybench run` with modes convert and f32 would answer.");
        card_add(cards, 3, "Memory", "unanswered", "none", "No convert/f32 pair with memory accounting in these results.");
    } else {
        char text[1500] = "";
        size_t o = 0;
        const char *badge = NULL, *btone = "none";
        int mixed = 0;
        for (int d = 0; d < rp->ndevs; d++) {
            if (!card_device(c, d, has)) continue;
            vec all = { 0 }, ch = { 0 };
            for (size_t i = 0; i < n; i++) {
                const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
                if (b->dev != d || !(mem_of(a) > 0)) continue;
                vec_push(strcmp(b->family, "chain") ? &all : &ch, 100.0 * (1.0 - mem_of(b) / mem_of(a)));
            }
            int use_chain = ch.n > 0;
            double m = use_chain ? vec_median(&ch) : vec_median(&all);
            const char *tone, *v = verdict_q3(m, &tone);
            json_array_append_new(cv, json_pack("{s:s,s:s,s:o,s:s,s:s}", "device", rp->devs[d].id, "basis", use_chain ? "chain" : "all ops",
                                                "median_saving_pct", jnum(m), "verdict", v, "tone", tone));
            if (!badge) { badge = v; btone = tone; }
            else if (strcmp(badge, v)) mixed = 1;
            if (o < sizeof text - 1)
                o += (size_t)snprintf(text + o, sizeof text - o, "%s%s: %s %s (%s).", o ? " " : "", rp->devs[d].id,
                                      use_chain ? "transformer layer" : "all ops, median", hb_report_fmt_pct(m), v);
            free(all.v);
            free(ch.v);
        }
        card_add(cards, 3, "Memory", mixed ? "differs by backend" : badge, mixed ? "warn" : btone, text);
    }
    groups_free(&bycls);
    groups_free(&byop);
    free(has);
    free(pr);
    return HB_OK;
}

/* ---------------------------------------------------------------- Q4 transfers ---- */

static hb_status q4(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    json_t *q = json_object(), *jshare = json_array(), *jroute = json_array(), *jres = json_array(), *jce = json_array();
    json_object_set_new(rp->summary, "q4", q);
    json_object_set_new(q, "definition", json_string("transfer_share_pct = 100 * (h2d + d2h) / total (phase medians, status ok, backends with their own memory); route saving_pct = 100 * (1 - total(route) / total(pageable)), transfer_saving_pct the same on h2d + d2h; resident_saving_pct = 100 * (1 - total(resident) / total(f32)) for the chain"));
    json_object_set_new(q, "share", jshare);
    json_object_set_new(q, "routes", jroute);
    json_object_set_new(q, "resident", jres);
    json_object_set_new(q, "ceilings", jce);
    hb_doc_h(rp, 2, "q4", "Q4 Transfers: share of h2d/d2h and what pinned and mapped save");
    hb_doc_p(rp, "Transfer share = (h2d + d2h) / total from phase medians, for backends with their own memory (host-memory backends report 0). Route savings match each pinned or mapped case with its pageable twin (same backend, op, shape, mode, dtype).");
    int ndm = 0;
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        if (!dv->available || dv->host_memory) continue;
        int rows_d = 0;
        for (size_t i = 0; i < rp->nrows && !rows_d; i++) if (rp->rows[i].dev == d && rp->rows[i].ok) rows_d = 1;
        if (rows_d) ndm++;
    }
    json_object_set_new(q, "answered", json_boolean(ndm > 0));
    if (!ndm) {
        hb_doc_note(rp, "Unanswered: no backend with its own memory (OpenCL, CUDA) has status-ok cases in these results. A run with the OpenCL or CUDA backend (e.g. the GPU reference run, results/h100-reference.jsonl) would answer.");
        card_add(cards, 4, "Transfers", "unanswered", "none", "Only host-memory backends ran (h2d/d2h are 0); an OpenCL or CUDA run (the GPU reference run) would answer.");
        return HB_OK;
    }
    groups share = { 0 }, route = { 0 };
    char key[512];
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        const hb_rdev *dv = DEV(c, w);
        if (!w->ok || dv->host_memory || !dv->available) continue;
        double s = 100.0 * xfer(w) / w->t[HB_PH_TOTAL];
        snprintf(key, sizeof key, "%d|%s|%s", w->dev, w->route, w->mode);
        grp *g = grp_get(&share, key, json_pack("{s:s,s:s,s:s,s:i}", "device", dv->id, "route", w->route, "mode", w->mode, "dev", w->dev));
        if (g) vec_push(&g->v[0], s);
    }
    json_t *rows = hb_doc_table(rp, "Transfer share of end-to-end time per backend, route and mode (median over cases; min-max in brackets)", 0, 5,
                                "backend", "route", "mode", "cases", "h2d+d2h share of total");
    for (size_t i = 0; i < share.n; i++) {
        grp *g = &share.g[i];
        double lo = vec_min(&g->v[0]), hi = vec_max(&g->v[0]), m = vec_median(&g->v[0]);
        json_array_append_new(jshare, json_pack("{s:s,s:s,s:s,s:I,s:o,s:o,s:o}", "device", gattr(g, "device"), "route", gattr(g, "route"),
            "mode", gattr(g, "mode"), "n", (json_int_t)g->v[0].n, "median_share_pct", jnum(m), "min_share_pct", jnum(lo), "max_share_pct", jnum(hi)));
        hb_doc_row(rows, 5, gattr(g, "device"), gattr(g, "route"), gattr(g, "mode"), F("%zu", g->v[0].n),
                   F("%s (%s to %s)", hb_report_fmt_pct(m), hb_report_fmt_pct(lo), hb_report_fmt_pct(hi)));
    }
    static const char *const alt[] = { "pinned", "mapped" };
    for (int r = 0; r < 2; r++) {
        rpair *pr;
        size_t n = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_MODE | K_DTYPE | K_NAME, K_ROUTE, "pageable", alt[r], NULL, NULL, &pr);
        if (!pr) { groups_free(&share); return HB_ENOMEM; }
        for (size_t i = 0; i < n; i++) {
            const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
            if (DEV(c, b)->host_memory) continue;
            snprintf(key, sizeof key, "%d|%s", b->dev, alt[r]);
            grp *g = grp_get(&route, key, json_pack("{s:s,s:s}", "device", DEV(c, b)->id, "route", alt[r]));
            if (!g) continue;
            vec_push(&g->v[0], 100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL]));
            if (xfer(a) > 0) vec_push(&g->v[1], 100.0 * (1.0 - xfer(b) / xfer(a)));
        }
        free(pr);
    }
    if (route.n) {
        rows = hb_doc_table(rp, "What pinned and mapped save over pageable (median over matched cases)", 0, 5,
                            "backend", "route", "cases", "end-to-end saving", "transfer-time saving");
        for (size_t i = 0; i < route.n; i++) {
            grp *g = &route.g[i];
            size_t cnt = g->v[0].n;
            double ms = vec_median(&g->v[0]), mt = vec_median(&g->v[1]);
            json_array_append_new(jroute, json_pack("{s:s,s:s,s:I,s:o,s:o}", "device", gattr(g, "device"), "route", gattr(g, "route"),
                "n", (json_int_t)cnt, "median_saving_pct", jnum(ms), "median_transfer_saving_pct", jnum(mt)));
            hb_doc_row(rows, 5, gattr(g, "device"), gattr(g, "route"), F("%zu", cnt), hb_report_fmt_pct(ms), hb_report_fmt_pct(mt));
        }
    } else {
        hb_doc_note(rp, "No pinned or mapped case has a pageable twin with status ok: the route comparison needs a run with routes pageable, pinned and mapped.");
    }
    /* resident chain */
    rpair *pr;
    size_t n = find_pairs(rp, K_DEV | K_OP | K_SHAPE | K_ROUTE | K_DTYPE | K_NAME, K_MODE, "f32", "resident", NULL, NULL, &pr);
    if (!pr) { groups_free(&share); groups_free(&route); return HB_ENOMEM; }
    sort_pairs(c, pr, n);
    /* three views: the chain rows, medians per backend and class, every case (collapsed) */
    groups resg = { 0 };
    json_t *rows_chain = NULL, *rows_all = NULL;
    for (size_t i = 0; i < n; i++) {
        const hb_rrow *a = &rp->rows[pr[i].a], *b = &rp->rows[pr[i].b];
        if (DEV(c, b)->host_memory) continue;
        double s = 100.0 * (1.0 - b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL]);
        json_array_append_new(jres, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o}", "device", DEV(c, b)->id, "op", b->op, "family", b->family, "name", b->name,
            "shape", b->shape, "route", b->route, "total_f32_s", jnum(a->t[HB_PH_TOTAL]), "total_resident_s", jnum(b->t[HB_PH_TOTAL]),
            "saving_pct", jnum(s), "transfer_share_f32_pct", jnum(100.0 * xfer(a) / a->t[HB_PH_TOTAL])));
        if (!rows_all) rows_all = json_array();
        json_t *r = json_array();
        const char *cells[] = { DEV(c, b)->id, b->op, *b->name ? b->name : b->shape, b->route, hb_report_fmt_time(a->t[HB_PH_TOTAL]),
                                hb_report_fmt_time(b->t[HB_PH_TOTAL]), hb_report_fmt_pct(s) };
        for (int k = 0; k < 7; k++) json_array_append_new(r, json_string(cells[k]));
        if (!strcmp(b->family, "chain")) {
            if (!rows_chain) rows_chain = hb_doc_table(rp, "Transformer block: resident (tensors stay on the device) against f32 (every op crosses)", 0, 7,
                                                       "backend", "chain", "name", "route", "f32", "resident", "saving");
            json_array_append(rows_chain, r);
        }
        json_array_append_new(rows_all, r);
        snprintf(key, sizeof key, "%d|%s|%s", b->dev, class_of(b), b->route);
        grp *g = grp_get(&resg, key, json_pack("{s:s,s:s,s:s}", "device", DEV(c, b)->id, "class", class_of(b), "route", b->route));
        if (g) vec_push(&g->v[0], s);
    }
    if (resg.n) {
        rows = hb_doc_table(rp, "Resident against f32 per backend, op class and route (median over cases)", 0, 5, "backend", "class", "route", "cases", "resident saves");
        for (size_t i = 0; i < resg.n; i++) {
            grp *g = &resg.g[i];
            size_t cnt = g->v[0].n;
            hb_doc_row(rows, 5, gattr(g, "device"), gattr(g, "class"), gattr(g, "route"), F("%zu", cnt), hb_report_fmt_pct(vec_median(&g->v[0])));
        }
    }
    if (rows_all) {
        rows = hb_doc_table(rp, "Resident against f32, every matched case", 1, 7, "backend", "op", "name/shape", "route", "f32", "resident", "saving");
        json_array_extend(rows, rows_all);
        json_decref(rows_all);
    }
    groups_free(&resg);
    free(pr);
    /* ceilings */
    rows = NULL;
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        if (dv->host_memory || !dv->rec) continue;
        size_t i;
        json_t *ce;
        json_array_foreach(json_object_get(dv->rec, "ceilings"), i, ce) {
            const char *nm = json_string_value(json_object_get(ce, "name"));
            if (!nm || (strncmp(nm, "h2d_gbps_", 9) && strncmp(nm, "d2h_gbps_", 9))) continue;
            if (!rows) rows = hb_doc_table(rp, "Measured transfer ceilings (this run's probes)", 0, 4, "backend", "ceiling", "GB/s", "how");
            double v = json_number_value(json_object_get(ce, "value"));
            json_array_append_new(jce, json_pack("{s:s,s:s,s:o}", "device", dv->id, "name", nm, "gbps", jnum(v)));
            const char *how = json_string_value(json_object_get(ce, "how"));
            hb_doc_row(rows, 4, dv->id, nm, hb_report_fmt_num(v), how ? how : "");
        }
    }
    for (int d = 0; d < rp->ndevs; d++)
        if (!rp->devs[d].host_memory && rp->devs[d].available && rp->devs[d].is_cpu_device)
            hb_doc_note(rp, "%s is a CPU device (%s): its h2d/d2h are copies within host memory, not transfers over a bus.", rp->devs[d].id,
                        rp->devs[d].description);
    /* plot per device: share vs size, one series per route (mode f32, dtype f32) */
    json_t *ids = plot_ids_new();
    size_t *ix = malloc((rp->nrows + 1) * sizeof *ix);
    if (!ix) { groups_free(&share); groups_free(&route); return HB_ENOMEM; }
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        if (dv->host_memory || !dv->available) continue;
        static const char *const routes[] = { "pageable", "pinned", "mapped" };
        FILE *dat = NULL;
        hb_plot *p = NULL;
        hb_sb body = { 0 };
        int nser = 0;
        for (int r = 0; r < 3; r++) {
            size_t m = 0;
            for (size_t i = 0; i < rp->nrows; i++) {
                const hb_rrow *w = &rp->rows[i];
                if (w->dev == d && w->ok && !strcmp(w->route, routes[r]) && !strcmp(w->mode, "f32") && !strcmp(w->dtype, "f32") &&
                    strcmp(w->family, "chain")) ix[m++] = i;
            }
            if (!m) continue;
            qsort_r(ix, m, sizeof *ix, cmp_rowix, c);
            if (!p) {
                p = hb_report_plot_begin(rp, F("q4_share_%s", dv->id), "q4", F("Q4: h2d+d2h share of end-to-end time on %s (mode f32)", dv->id), 900, 420, &dat);
                if (!p) { free(ix); groups_free(&share); groups_free(&route); return HB_EDEVICE; }
                hb_sb_printf(&body, "set title '%s'\n", hb_report_gp_str(p->title));
                gp_size_axis(&body);
                hb_sb_printf(&body, "set ylabel 'h2d + d2h, %% of total'\nset yrange [0:100]\nplot ");
            }
            if (nser) { fprintf(dat, "\n\n"); hb_sb_printf(&body, ", \\\n     "); }
            fprintf(dat, "# route %s: size share_pct op\n", routes[r]);
            for (size_t k = 0; k < m; k++) {
                const hb_rrow *w = &rp->rows[ix[k]];
                fprintf(dat, "%.17g %.5g %s\n", w->size, 100.0 * xfer(w) / w->t[HB_PH_TOTAL], w->op);
            }
            hb_sb_printf(&body, "'%s.dat' index %d using 1:2 with points lt %d title '%s'", p->id, nser, r + 1, routes[r]);
            nser++;
        }
        if (p) {
            hb_sb_printf(&body, "\n");
            fclose(dat);
            hb_status st = hb_report_plot_script(rp, p, body.s);
            if (st != HB_OK) { hb_sb_free(&body); free(ix); groups_free(&share); groups_free(&route); return st; }
            plot_id_add(ids, p);
        }
        hb_sb_free(&body);
    }
    free(ix);
    hb_doc_plots(rp, ids);
    /* card */
    char text[1500] = "";
    size_t o = 0;
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        if (dv->host_memory || !dv->available) continue;
        double sh = DNAN, pin = DNAN, map = DNAN, res = DNAN;
        size_t i;
        json_t *t;
        json_array_foreach(jshare, i, t)
            if (!strcmp(json_string_value(json_object_get(t, "device")), dv->id) && !strcmp(json_string_value(json_object_get(t, "route")), "pageable") &&
                !strcmp(json_string_value(json_object_get(t, "mode")), "f32")) sh = json_number_value(json_object_get(t, "median_share_pct"));
        json_array_foreach(jroute, i, t) {
            if (strcmp(json_string_value(json_object_get(t, "device")), dv->id)) continue;
            double v = json_number_value(json_object_get(t, "median_transfer_saving_pct"));
            if (!strcmp(json_string_value(json_object_get(t, "route")), "pinned")) pin = v; else map = v;
        }
        vec rv = { 0 };
        json_array_foreach(jres, i, t)
            if (!strcmp(json_string_value(json_object_get(t, "device")), dv->id) && !strcmp(json_string_value(json_object_get(t, "family")), "chain"))
                vec_push(&rv, json_number_value(json_object_get(t, "saving_pct")));
        res = vec_median(&rv);
        free(rv.v);
        if (o < sizeof text - 1)
            o += (size_t)snprintf(text + o, sizeof text - o, "%s%s: h2d+d2h are %s of f32-mode time over pageable; transfer time: pinned %s, mapped %s; a resident transformer layer %s end to end.",
                                  o ? " " : "", dv->id, hb_report_fmt_pct(sh), saving_words(pin), saving_words(map), saving_words(res));
    }
    card_add(cards, 4, "Transfers", "measured (no plan figure)", "info", text);
    groups_free(&share);
    groups_free(&route);
    return HB_OK;
}

/* ---------------------------------------------------------------- Q5 device selection ---- */

typedef struct q5e {
    const char *op, *family, *shape;
    double size;
    double flops;
    double *t;            /* per device (rp->ndevs): best total over routes, DNAN when none */
    const char **route;   /* per device */
} q5e;

static int cmp_q5e(const void *x, const void *y, void *arg)
{
    const ctx *c = arg;
    const q5e *a = x, *b = y;
    int ra = op_rank(c, a->op), rb = op_rank(c, b->op);
    if (ra != rb) return ra - rb;
    if (a->size != b->size) return a->size < b->size ? -1 : 1;
    if (a->flops != b->flops) return a->flops < b->flops ? -1 : 1;
    return strcmp(a->shape, b->shape);
}

/* The plan's choice for entry e among the run's candidates: returns the device index (or -1) and
 * describes the rule and whether a fallback was taken. */
static int plan_choice(const ctx *c, int run, const q5e *e, const int *cand, char *rule, size_t rlen, int *fell_back)
{
    const hb_report *rp = c->rp;
    int want_gpu;
    double bytes = e->size * P.tensor_elem_bytes;
    if (!strcmp(e->family, "matmul")) {
        want_gpu = e->size > P.matmul_gpu_above_elems;
        snprintf(rule, rlen, want_gpu ? "matmul > %g elements -> GPU" : "matmul <= %g elements -> CPU", P.matmul_gpu_above_elems);
    } else if (bytes < P.cpu_below_bytes) {
        want_gpu = 0;
        snprintf(rule, rlen, "< %s -> CPU", hb_report_fmt("%g MB", P.cpu_below_bytes / 1e6));
    } else if (bytes < P.ane_below_bytes) {
        want_gpu = 1;
        snprintf(rule, rlen, "%g-%g MB -> Neural Engine (unavailable) -> best GPU", P.cpu_below_bytes / 1e6, P.ane_below_bytes / 1e6);
    } else {
        want_gpu = 1;
        snprintf(rule, rlen, "> %g MB -> best GPU", P.ane_below_bytes / 1e6);
    }
    /* chain: CUDA -> OpenCL -> CPU (GPU wanted) or CPU; first device of the type with an ok result */
    static const char *const gpu_chain[] = { "cuda", "opencl", "cpu" };
    static const char *const cpu_chain[] = { "cpu" };
    const char *const *chain = want_gpu ? gpu_chain : cpu_chain;
    int nch = want_gpu ? 3 : 1;
    *fell_back = 0;
    for (int k = 0; k < nch; k++) {
        for (int d = 0; d < rp->ndevs; d++) {
            if (!cand[d] || rp->devs[d].run != run || strcmp(rp->devs[d].type, chain[k])) continue;
            if (isfinite(e->t[d])) {
                *fell_back = k > 0;
                return d;
            }
        }
    }
    return -1;
}

static hb_status q5(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    json_t *q = json_object(), *jm = json_array();
    json_object_set_new(rp->summary, "q5", q);
    json_object_set_new(q, "definition", json_string("per run (machine): mode f32, dtype f32, status ok; each backend at its fastest route; best = lowest median total; cpu-ref (the reference) is not a candidate; plan heuristic evaluated on the same entries; loss_pct = 100 * (sum t_heuristic / sum t_best - 1)"));
    json_object_set_new(q, "machines", jm);
    rp->routing = json_pack("{s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:o}", "schema", 1, "tool", "hybench", "report", rp->name,
                            "mode", "f32", "dtype", "f32", "size", "elements of the largest tensor (the case record's size)",
                            "rule", "for an op, use the range whose [size_min, size_max) holds the size; size_max null = no upper bound",
                            "machines", json_array());
    hb_doc_h(rp, 2, "q5", "Q5 Device selection: measured best against the plan's heuristics");
    hb_doc_p(rp, "Per machine, for each op and shape in mode f32 with dtype f32: every backend at its fastest route, status ok only (a wrong case never counts), end-to-end median time including transfers. cpu-ref is the verification reference, not a candidate. The plan: tensors under %g MB to the CPU; %g-%g MB to the Neural Engine (unavailable off Apple hardware, so its fallback, the best GPU); above that the best GPU; matmul over %g elements to the GPU; fallback chains CUDA -> OpenCL -> CPU and OpenCL -> CPU. A tensor's size is its largest tensor at %g bytes per element.",
             P.cpu_below_bytes / 1e6, P.cpu_below_bytes / 1e6, P.ane_below_bytes / 1e6, P.matmul_gpu_above_elems, P.tensor_elem_bytes);
    int *cand = calloc((size_t)rp->ndevs + 1, sizeof *cand);
    if (!cand) return HB_ENOMEM;
    char text[2000] = "";
    size_t to = 0;
    double all_h = 0, all_b = 0;
    int all_n = 0, all_match = 0, any_multi = 0;
    json_t *ids = plot_ids_new();
    for (int run = 0; run < rp->nruns; run++) {
        int ncand = 0;
        for (int d = 0; d < rp->ndevs; d++) {
            cand[d] = 0;
            if (rp->devs[d].run != run || rp->devs[d].is_reference) continue;
            for (size_t i = 0; i < rp->nrows; i++) {
                const hb_rrow *w = &rp->rows[i];
                if (w->dev == d && w->ok && !strcmp(w->mode, "f32") && !strcmp(w->dtype, "f32")) { cand[d] = 1; break; }
            }
            ncand += cand[d];
        }
        json_t *mach = json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o}", "run", rp->runs[run].label, "host", rp->runs[run].host,
                                 "run_id", rp->runs[run].run_id, "commit", rp->runs[run].commit, "candidates", json_array(),
                                 "entries", json_array(), "per_op", json_array(), "crossovers", json_array(), "routing", json_object());
        json_array_append_new(jm, mach);
        for (int d = 0; d < rp->ndevs; d++)
            if (cand[d]) json_array_append_new(json_object_get(mach, "candidates"), json_string(rp->devs[d].id));
        if (!ncand) continue;
        if (ncand > 1) any_multi = 1;
        /* entries: op|shape */
        json_t *map = json_object();
        q5e *es = calloc(rp->nrows + 1, sizeof *es);
        size_t ne = 0;
        double *tbuf = malloc((rp->nrows + 1) * (size_t)rp->ndevs * sizeof *tbuf);
        const char **rbuf = calloc((rp->nrows + 1) * (size_t)rp->ndevs, sizeof *rbuf);
        if (!map || !es || !tbuf || !rbuf) { json_decref(map); free(es); free(tbuf); free(rbuf); free(cand); return HB_ENOMEM; }
        char key[1024];
        for (size_t i = 0; i < rp->nrows; i++) {
            const hb_rrow *w = &rp->rows[i];
            if (!w->ok || !cand[w->dev] || strcmp(w->mode, "f32") || strcmp(w->dtype, "f32") || !strcmp(w->family, "chain")) continue;
            snprintf(key, sizeof key, "%s|%s", w->op, w->shape);
            json_t *ix = json_object_get(map, key);
            q5e *e;
            if (!ix) {
                e = &es[ne];
                e->op = w->op; e->family = w->family; e->shape = w->shape; e->size = w->size; e->flops = w->flops;
                e->t = tbuf + ne * (size_t)rp->ndevs;
                e->route = rbuf + ne * (size_t)rp->ndevs;
                for (int d = 0; d < rp->ndevs; d++) e->t[d] = DNAN;
                json_object_set_new(map, key, json_integer((json_int_t)ne));
                ne++;
            } else {
                e = &es[json_integer_value(ix)];
            }
            if (!(e->t[w->dev] <= w->t[HB_PH_TOTAL])) { e->t[w->dev] = w->t[HB_PH_TOTAL]; e->route[w->dev] = w->route; }
        }
        json_decref(map);
        qsort_r(es, ne, sizeof *es, cmp_q5e, c);
        json_t *jent = json_object_get(mach, "entries"), *jper = json_object_get(mach, "per_op"), *jx = json_object_get(mach, "crossovers");
        json_t *jrt = json_object_get(mach, "routing");
        json_t *rows_e = NULL;
        /* per op */
        json_t *rows_op = hb_doc_table(rp, F("Fastest backend per op and size on %s, and the plan's heuristics", rp->runs[run].label), 0, 7,
                                       "op", "fastest (sizes)", "crossovers", "shapes", "heuristic = best", "heuristic time / best", "fallbacks taken");
        json_t *machine_routing = json_object();
        double run_h = 0, run_b = 0;
        int run_match = 0, run_n = 0;
        size_t i = 0;
        while (i < ne) {
            size_t j = i;
            while (j < ne && !strcmp(es[j].op, es[i].op)) j++;
            double sh = 0, sb = 0, worst = 1;
            int nmatch = 0, ncount = 0, nfb = 0;
            int prev_best = -1;
            double prev_size = DNAN;
            char fastest[600] = "", cross[600] = "";
            size_t fo = 0, co = 0;
            json_t *ranges = json_array();
            json_t *cur = NULL;
            for (size_t k = i; k < j; k++) {
                q5e *e = &es[k];
                int best = -1;
                for (int d = 0; d < rp->ndevs; d++) if (cand[d] && isfinite(e->t[d]) && (best < 0 || e->t[d] < e->t[best])) best = d;
                if (best < 0) continue;
                char rule[160];
                int fb = 0;
                int h = plan_choice(c, run, e, cand, rule, sizeof rule, &fb);
                json_t *times = json_object();
                for (int d = 0; d < rp->ndevs; d++) if (cand[d] && isfinite(e->t[d])) json_object_set_new(times, rp->devs[d].id, json_real(e->t[d]));
                double th = h >= 0 ? e->t[h] : DNAN;
                json_array_append_new(jent, json_pack("{s:s,s:s,s:s,s:o,s:o,s:s,s:s,s:o,s:s,s:s,s:o,s:b,s:o}", "op", e->op, "family", e->family, "shape", e->shape,
                    "size", jnum(e->size), "times_s", times, "best", rp->devs[best].id, "best_route", e->route[best] ? e->route[best] : "",
                    "best_s", jnum(e->t[best]), "heuristic", h >= 0 ? rp->devs[h].id : "", "heuristic_rule", rule, "heuristic_s", jnum(th),
                    "fallback", fb, "heuristic_loss_pct", jnum(h >= 0 ? 100.0 * (th / e->t[best] - 1.0) : DNAN)));
                if (h >= 0) {
                    sh += th; sb += e->t[best]; ncount++;
                    if (h == best) nmatch++;
                    if (th / e->t[best] > worst) worst = th / e->t[best];
                    nfb += fb;
                }
                if (!rows_e) rows_e = json_array();
                json_t *er = json_array();
                json_array_append_new(er, json_string(e->op));
                json_array_append_new(er, json_string(e->shape));
                json_array_append_new(er, json_string(hb_report_fmt_count(e->size)));
                char tl[600] = "";
                size_t tlo = 0;
                for (int d = 0; d < rp->ndevs; d++)
                    if (cand[d] && tlo < sizeof tl - 1)
                        tlo += (size_t)snprintf(tl + tlo, sizeof tl - tlo, "%s%s %s", tlo ? ", " : "", rp->devs[d].id, hb_report_fmt_time(e->t[d]));
                json_array_append_new(er, json_string(tl));
                json_array_append_new(er, json_string(F("%s (%s)", rp->devs[best].id, e->route[best] ? e->route[best] : "")));
                json_array_append_new(er, json_string(h >= 0 ? F("%s: %s", rule, rp->devs[h].id) : F("%s: no result", rule)));
                json_array_append_new(er, json_string(h >= 0 ? (h == best ? "[good] best" : tone_cell("warn", F("+%s", hb_report_fmt_pct(100.0 * (th / e->t[best] - 1.0))))) : "n/a"));
                json_array_append_new(rows_e, er);
                /* ranges */
                if (best != prev_best) {
                    if (prev_best >= 0) {
                        double boundary = sqrt(prev_size * e->size);
                        json_object_set_new(cur, "size_max", json_real(boundary));
                        json_array_append_new(jx, json_pack("{s:s,s:s,s:s,s:o,s:o,s:o}", "op", e->op, "from", rp->devs[prev_best].id, "to", rp->devs[best].id,
                                                            "below_size", jnum(prev_size), "above_size", jnum(e->size), "at_size", jnum(boundary)));
                        if (co < sizeof cross - 1)
                            co += (size_t)snprintf(cross + co, sizeof cross - co, "%s%s -> %s between %s and %s", co ? "; " : "", rp->devs[prev_best].id,
                                                   rp->devs[best].id, hb_report_fmt_count(prev_size), hb_report_fmt_count(e->size));
                    }
                    cur = json_pack("{s:o,s:n,s:s,s:s,s:o,s:o}", "size_min", prev_best >= 0 ? json_real(sqrt(prev_size * e->size)) : json_real(0),
                                    "size_max", "backend", rp->devs[best].backend, "route", e->route[best] ? e->route[best] : "",
                                    "measured_min", jnum(e->size), "measured_max", jnum(e->size));
                    json_array_append_new(ranges, cur);
                    prev_best = best;
                } else {
                    json_object_set_new(cur, "measured_max", jnum(e->size));
                }
                prev_size = e->size;
            }
            /* the fastest column: each range as backend (min-max) */
            size_t ri;
            json_t *r;
            json_array_foreach(ranges, ri, r) {
                double a = json_number_value(json_object_get(r, "measured_min")), b = json_number_value(json_object_get(r, "measured_max"));
                if (fo < sizeof fastest - 1)
                    fo += (size_t)snprintf(fastest + fo, sizeof fastest - fo, "%s%s (%s%s%s)", fo ? ", " : "", json_string_value(json_object_get(r, "backend")),
                                           hb_report_fmt_count(a), a != b ? "-" : "", a != b ? hb_report_fmt_count(b) : "");
            }
            json_object_set_new(machine_routing, es[i].op, json_deep_copy(ranges));
            json_object_set_new(jrt, es[i].op, ranges);
            double loss = sb > 0 ? 100.0 * (sh / sb - 1.0) : DNAN;
            json_array_append_new(jper, json_pack("{s:s,s:i,s:i,s:i,s:o,s:o,s:o,s:o}", "op", es[i].op, "n", (int)(j - i), "heuristic_matches", nmatch,
                                                  "fallbacks", nfb, "heuristic_total_s", jnum(sh), "best_total_s", jnum(sb), "loss_pct", jnum(loss),
                                                  "worst_ratio", jnum(ncount ? worst : DNAN)));
            hb_doc_row(rows_op, 7, es[i].op, fastest, *cross ? cross : "none", F("%d", ncount), F("%d of %d", nmatch, ncount),
                       !ncount ? "n/a" : nmatch == ncount ? "[good] none: always the fastest"
                                                         : tone_cell(loss < 1 ? "good" : "warn", F("+%s (worst case x%.3g)", hb_report_fmt_pct(loss), worst)),
                       F("%d", nfb));
            run_h += sh;
            run_b += sb;
            run_match += nmatch;
            run_n += ncount;
            all_match += nmatch;
            all_n += ncount;
            i = j;
        }
        all_h += run_h;
        all_b += run_b;
        json_object_set_new(mach, "loss_pct", jnum(run_b > 0 ? 100.0 * (run_h / run_b - 1.0) : DNAN));
        json_array_append_new(json_object_get(rp->routing, "machines"),
                              json_pack("{s:s,s:s,s:s,s:s,s:O,s:o}", "run", rp->runs[run].label, "host", rp->runs[run].host, "run_id", rp->runs[run].run_id,
                                        "commit", rp->runs[run].commit, "backends", json_object_get(mach, "candidates"), "ops", machine_routing));
        if (rows_e) {
            json_t *tr = hb_doc_table(rp, F("Every op and shape on %s (mode f32, dtype f32)", rp->runs[run].label), 1, 7,
                                      "op", "shape", "size", "time per backend", "fastest (route)", "plan heuristic", "heuristic vs best");
            json_array_extend(tr, rows_e);
            json_decref(rows_e);
        }
        if (to < sizeof text - 1)
            to += (size_t)snprintf(text + to, sizeof text - to, "%s%s: %d backend%s compared; heuristics pick the fastest in %d of %d cases and take %s longer in total.",
                                   to ? " " : "", rp->runs[run].label, ncand, ncand > 1 ? "s" : "", run_match, run_n,
                                   hb_report_fmt_pct(run_b > 0 ? 100.0 * (run_h / run_b - 1.0) : DNAN));
        /* plots: per family, time / best vs size per device */
        if (ncand > 1) {
            for (int fi = 0; fi < NFAM - 1; fi++) {
                FILE *dat = NULL;
                hb_plot *p = NULL;
                hb_sb body = { 0 };
                int nser = 0;
                for (int d = 0; d < rp->ndevs; d++) {
                    if (!cand[d]) continue;
                    int first = 1;
                    for (size_t k = 0; k < ne; k++) {
                        q5e *e = &es[k];
                        if (strcmp(e->family, family_order[fi]) || !isfinite(e->t[d])) continue;
                        double best = INFINITY;
                        for (int dd = 0; dd < rp->ndevs; dd++) if (cand[dd] && isfinite(e->t[dd]) && e->t[dd] < best) best = e->t[dd];
                        if (!p) {
                            p = hb_report_plot_begin(rp, F("q5_%s_%s", rp->runs[run].label, family_order[fi]), "q5",
                                                     F("Q5: time relative to the fastest backend, %s on %s (1 = fastest)", family_order[fi], rp->runs[run].label), 900, 420, &dat);
                            if (!p) { free(es); free(tbuf); free(rbuf); free(cand); json_decref(ids); return HB_EDEVICE; }
                            hb_sb_printf(&body, "set title '%s'\n", hb_report_gp_str(p->title));
                            gp_size_axis(&body);
                            hb_sb_printf(&body, "set logscale y 10\nset ylabel 'time / fastest time'\nset yrange [0.9:*]\n"
                                         "set label 1 'fastest' at graph 0.01, first 1 offset 0,0.6 font ',9' tc rgb '#555555'\nplot 1 with lines lc rgb hb_c_ceiling dt 2 notitle");
                        }
                        if (first) {
                            if (nser) fprintf(dat, "\n\n");
                            fprintf(dat, "# %s: size time_over_best op\n", rp->devs[d].id);
                            hb_sb_printf(&body, ", \\\n     '%s.dat' index %d using 1:2 with points lt %d title '%s'", p->id, nser, d % 10 + 1, hb_report_gp_str(rp->devs[d].id));
                            nser++;
                            first = 0;
                        }
                        fprintf(dat, "%.17g %.6g %s\n", e->size, e->t[d] / best, e->op);
                    }
                }
                if (p) {
                    hb_sb_printf(&body, "\n");
                    fclose(dat);
                    hb_status st = hb_report_plot_script(rp, p, body.s);
                    if (st != HB_OK) { hb_sb_free(&body); free(es); free(tbuf); free(rbuf); free(cand); json_decref(ids); return st; }
                    plot_id_add(ids, p);
                }
                hb_sb_free(&body);
            }
        }
        free(es);
        free(tbuf);
        free(rbuf);
    }
    hb_doc_plots(rp, ids);
    /* what is missing */
    json_t *miss = json_array();
    json_object_set_new(q, "missing", miss);
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        if (dv->available) continue;
        const char *which = !strcmp(dv->type, "cuda") ? "a run on a machine with an NVIDIA GPU (the GPU reference run, results/h100-reference.jsonl)" :
                            !strcmp(dv->type, "opencl") ? "a run with an OpenCL platform installed (e.g. pocl, or a GPU driver)" :
                            (!strcmp(dv->type, "metal") || !strcmp(dv->type, "coreml")) ? "only a run on Apple silicon; none of this project's machines can answer, so the plan's Neural Engine rule is mapped to its fallback" :
                            "a run where this backend is available";
        json_array_append_new(miss, json_pack("{s:s,s:s,s:s}", "backend", dv->id, "reason", dv->reason, "which_run", which));
        hb_doc_note(rp, "%s has no results (%s): %s would answer for it.", dv->id, *dv->reason ? dv->reason : "unavailable", which);
    }
    for (int d = 0; d < rp->ndevs; d++)
        if (!rp->devs[d].host_memory && rp->devs[d].available && rp->devs[d].is_cpu_device && !strcmp(rp->devs[d].type, "opencl"))
            hb_doc_note(rp, "%s runs on the CPU (%s): where the plan says GPU, the OpenCL link of its chain is this CPU device.", rp->devs[d].id, rp->devs[d].description);
    double loss = all_b > 0 ? 100.0 * (all_h / all_b - 1.0) : DNAN;
    json_object_set_new(q, "loss_pct", jnum(loss));
    json_object_set_new(q, "heuristic_matches", json_integer(all_match));
    json_object_set_new(q, "entries", json_integer(all_n));
    json_object_set_new(q, "answered", json_boolean(any_multi));
    json_object_set_new(q, "routing_file", json_string("routing.json"));
    hb_doc_p(rp, "The measured routing table is written as routing.json (per machine, per op: size ranges -> backend and route) for a hybrid executor to load.");
    if (!all_n) {
        card_add(cards, 5, "Device selection", "unanswered", "none", "No mode-f32, dtype-f32 case with status ok on a routing candidate; a default `hybench run` would answer.");
    } else if (!any_multi) {
        card_add(cards, 5, "Device selection", "partial: one backend", "warn",
                 F("Only one routing candidate ran per machine, so the best is trivially it. %.200s A run with OpenCL or CUDA results would answer.", text));
    } else {
        card_add(cards, 5, "Device selection", F("plan heuristics +%s time", hb_report_fmt_pct(loss)), loss < 1 ? "good" : "info", text);
    }
    free(cand);
    return HB_OK;
}

/* ---------------------------------------------------------------- rooflines ---- */

static hb_status rooflines(ctx *c)
{
    hb_report *rp = c->rp;
    hb_doc_h(rp, 2, "roofline", "Rooflines");
    hb_doc_p(rp, "Every status-ok case of mode f32 (or the backend's only mode) as a point: arithmetic intensity = flops / bytes (bytes at the compute dtype's size), compute-phase GFLOP/s. Ceilings are this run's own probes: copy bandwidth (slope) and peak GFLOP/s per dtype (flat).");
    json_t *ids = plot_ids_new(), *jr = json_array();
    json_object_set_new(rp->summary, "roofline", jr);
    json_t *rows = hb_doc_table(rp, "Median fraction of the measured ceiling per backend and family (the case record's fraction: compute-phase throughput / ceiling; cases in brackets)",
                                0, NFAM + 1, "backend", family_order[0], family_order[1], family_order[2], family_order[3], family_order[4],
                                family_order[5], family_order[6]);
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        int has_f32 = 0, any = 0;
        for (size_t i = 0; i < rp->nrows; i++) {
            const hb_rrow *w = &rp->rows[i];
            if (w->dev != d || !w->ok) continue;
            any = 1;
            if (!strcmp(w->mode, "f32")) has_f32 = 1;
        }
        if (!any) continue;
        double bw = dv->rec ? hb_run_ceiling(&rp->runs[dv->run].r, dv->backend, "copy_gbps") : DNAN;
        static const char *const dts[] = { "f32", "tf32", "f16", "bf16" };
        double pk[4];
        for (int k = 0; k < 4; k++) pk[k] = dv->rec ? hb_run_ceiling(&rp->runs[dv->run].r, dv->backend, F("peak_gflops_%s", dts[k])) : DNAN;
        FILE *dat;
        hb_plot *p = hb_report_plot_begin(rp, F("roofline_%s", dv->id), "roofline", F("Roofline of %s (ceilings measured in the same run)", dv->id), 900, 480, &dat);
        if (!p) { json_decref(ids); return HB_EDEVICE; }
        hb_sb body = { 0 };
        hb_sb_printf(&body, "set title '%s'\nset logscale xy 10\nset xlabel 'arithmetic intensity (FLOP/byte)'\nset ylabel 'GFLOP/s (compute phase)'\nset samples 400\n",
                     hb_report_gp_str(p->title));
        double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
        int nser = 0;
        char plots[8192];
        size_t po = 0;
        plots[0] = 0;
        groups fam = { 0 };
        for (int fi = 0; fi <= NFAM; fi++) {
            for (int k = 0; k < 4; k++) {
                int first = 1;
                for (size_t i = 0; i < rp->nrows; i++) {
                    const hb_rrow *w = &rp->rows[i];
                    if (w->dev != d || !w->ok || (has_f32 && strcmp(w->mode, "f32")) || fam_rank(w->family) != fi || strcmp(w->dtype, dts[k])) continue;
                    double ai = w->flops / w->bytes, g = isfinite(w->gflops) ? w->gflops : w->flops / w->t[HB_PH_COMPUTE] / 1e9;
                    if (!(ai > 0) || !(g > 0) || !isfinite(ai) || !isfinite(g)) continue;
                    if (first) {
                        if (nser) fprintf(dat, "\n\n");
                        fprintf(dat, "# %s %s: intensity gflops op size\n", fi < NFAM ? family_order[fi] : "other", dts[k]);
                        po += (size_t)snprintf(plots + po, po < sizeof plots ? sizeof plots - po : 0, ", \\\n     '%s.dat' index %d using 1:2 with points lt %d pt %d title '%s'",
                                               p->id, nser, fi % 10 + 1, 7 + 2 * k, hb_report_gp_str(F("%s%s%s", fi < NFAM ? family_order[fi] : "other", k ? " " : "", k ? dts[k] : "")));
                        nser++;
                        first = 0;
                    }
                    fprintf(dat, "%.6g %.6g %s %.17g\n", ai, g, w->op, w->size);
                    if (ai < xmin) xmin = ai;
                    if (ai > xmax) xmax = ai;
                    if (g < ymin) ymin = g;
                    if (g > ymax) ymax = g;
                    char key[256];
                    snprintf(key, sizeof key, "%s", w->family);
                    grp *gg = grp_get(&fam, key, json_pack("{s:s}", "family", w->family));
                    double fr = json_number_value(json_object_get(w->rec, "fraction"));
                    if (gg && json_is_number(json_object_get(w->rec, "fraction"))) vec_push(&gg->v[0], fr);
                }
            }
        }
        fclose(dat);
        const char *cell[NFAM];
        for (int fi = 0; fi < NFAM; fi++) cell[fi] = "";
        for (size_t i = 0; i < fam.n; i++) {
            size_t cnt = fam.g[i].v[0].n;
            double m = vec_median(&fam.g[i].v[0]);
            json_array_append_new(jr, json_pack("{s:s,s:s,s:I,s:o}", "device", dv->id, "family", gattr(&fam.g[i], "family"), "n", (json_int_t)cnt, "median_fraction", jnum(m)));
            int fi = fam_rank(gattr(&fam.g[i], "family"));
            if (fi < NFAM) cell[fi] = F("%s (%zu)", hb_report_fmt_pct(100.0 * m), cnt);
        }
        hb_doc_row(rows, NFAM + 1, dv->id, cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6]);
        groups_free(&fam);
        if (!nser) { /* nothing to draw: drop the plot */
            char path[4200];
            snprintf(path, sizeof path, "%s/%s.dat", rp->outdir, p->id);
            remove(path);
            hb_sb_free(&body);
            rp->nplots--;
            continue;
        }
        double top = ymax;
        for (int k = 0; k < 4; k++) if (pk[k] > top) top = pk[k];
        hb_sb_printf(&body, "set xrange [%g:%g]\nset yrange [%g:%g]\nBW = %.6g\nroof(x, p) = (BW > 0 && x * BW < p) ? x * BW : p\n",
                     xmin / 3, xmax * 3, ymin / 3, top * 3, isfinite(bw) ? bw : 0.0);
        hb_sb_printf(&body, "plot ");
        int nl = 0;
        for (int k = 0; k < 4; k++) {
            if (!isfinite(pk[k])) continue;
            hb_sb_printf(&body, "%sroof(x, %.6g) with lines lc rgb hb_c_ceiling lw 1.5 dt %d title '%s'", nl ? ", \\\n     " : "", pk[k], k + 1,
                         hb_report_gp_str(F("%s peak %.4g GFLOP/s%s", dts[k], pk[k], isfinite(bw) && k == 0 ? F(", copy %.4g GB/s", bw) : "")));
            nl++;
        }
        if (!nl && isfinite(bw)) { hb_sb_printf(&body, "x * BW with lines lc rgb hb_c_ceiling lw 1.5 title '%s'", hb_report_gp_str(F("copy %.4g GB/s", bw))); nl++; }
        hb_sb_printf(&body, "%s%s\n", nl ? "" : "NaN notitle", plots);
        hb_status st = hb_report_plot_script(rp, p, body.s);
        hb_sb_free(&body);
        if (st != HB_OK) { json_decref(ids); return st; }
        plot_id_add(ids, p);
        json_array_append_new(jr, json_pack("{s:s,s:s,s:o,s:o}", "device", dv->id, "plot", p->id, "copy_gbps", jnum(bw), "peak_gflops_f32", jnum(pk[0])));
        if (!isfinite(bw) && !isfinite(pk[0])) hb_doc_note(rp, "%s: no ceilings in its backend record; its roofline has points only.", dv->id);
    }
    hb_doc_plots(rp, ids);
    return HB_OK;
}

/* ---------------------------------------------------------------- model totals ---- */

static hb_status models(ctx *c)
{
    hb_report *rp = c->rp;
    static const char *const modes[] = { "convert", "f32", "resident", "convert-device" };
    json_t *jm = json_array();
    json_object_set_new(rp->summary, "models", jm);
    /* layers of each model per run: distinct op|shape|name */
    json_t *layers = json_object();
    char key[1024];
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        if (!*w->model) continue;
        snprintf(key, sizeof key, "%d|%s", w->run, w->model);
        json_t *l = json_object_get(layers, key);
        if (!l) { l = json_object(); json_object_set_new(layers, key, l); }
        snprintf(key, sizeof key, "%s|%s|%s", w->op, w->shape, w->name);
        json_object_set_new(l, key, json_true());
    }
    if (!json_object_size(layers)) { json_decref(layers); return HB_OK; }
    hb_doc_h(rp, 2, "models", "Model totals");
    hb_doc_p(rp, "For cases that belong to a model (the workload's model field), the per-layer median end-to-end time x the layer's weight (its repeat count), summed per backend, mode, dtype and route. A total is complete only when every layer of the model ran with status ok; an incomplete one says how many layers it has.");
    groups g = { 0 };
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        if (!*w->model) continue;
        snprintf(key, sizeof key, "%d|%s|%s|%s|%s", w->dev, w->model, w->dtype, w->route, w->mode);
        grp *gg = grp_get(&g, key, json_pack("{s:s,s:s,s:s,s:s,s:s,s:i,s:i}", "device", DEV(c, w)->id, "model", w->model, "mode", w->mode,
                                             "dtype", w->dtype, "route", w->route, "run", w->run, "dev", w->dev));
        if (!gg) continue;
        if (w->ok) vec_push(&gg->v[0], w->t[HB_PH_TOTAL] * w->weight);
    }
    /* one row per model, backend, dtype, route; one column per mode */
    groups piv = { 0 };
    for (size_t i = 0; i < g.n; i++) {
        grp *gg = &g.g[i];
        double sum = 0;
        for (size_t k = 0; k < gg->v[0].n; k++) sum += gg->v[0].v[k];
        snprintf(key, sizeof key, "%d|%s", (int)json_integer_value(json_object_get(gg->attrs, "run")), gattr(gg, "model"));
        size_t nl = json_object_size(json_object_get(layers, key));
        int complete = gg->v[0].n == nl;
        double t = gg->v[0].n ? sum : DNAN;
        json_array_append_new(jm, json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:I,s:I,s:b}", "model", gattr(gg, "model"), "device", gattr(gg, "device"),
            "mode", gattr(gg, "mode"), "dtype", gattr(gg, "dtype"), "route", gattr(gg, "route"), "time_s", jnum(t),
            "layers_ok", (json_int_t)gg->v[0].n, "layers", (json_int_t)nl, "complete", complete));
        snprintf(key, sizeof key, "%s|%s|%s|%s", gattr(gg, "model"), gattr(gg, "device"), gattr(gg, "dtype"), gattr(gg, "route"));
        grp *pv = grp_get(&piv, key, json_pack("{s:s,s:s,s:s,s:s,s:i,s:o}", "model", gattr(gg, "model"), "device", gattr(gg, "device"),
                                               "dtype", gattr(gg, "dtype"), "route", gattr(gg, "route"),
                                               "dev", (int)json_integer_value(json_object_get(gg->attrs, "dev")), "cells", json_object()));
        if (!pv) continue;
        json_object_set_new(json_object_get(pv->attrs, "cells"), gattr(gg, "mode"),
                            json_string(complete ? hb_report_fmt_time(t) : F("%s (%zu of %zu layers)", hb_report_fmt_time(t), gg->v[0].n, nl)));
        for (int m = 0; m < 4; m++)
            if (!strcmp(gattr(gg, "mode"), modes[m]) && complete) vec_push(&pv->v[m], t);
    }
    for (int pass = 0; pass < 2; pass++) {
        json_t *rows = hb_doc_table(rp, pass ? "Every dtype and route" : "Model time per pass, dtype f32, route pageable (sum of layer medians x weight)",
                                    pass, 8, "model", "backend", "dtype", "route", modes[0], modes[1], modes[2], modes[3]);
        for (size_t i = 0; i < piv.n; i++) {
            grp *pv = &piv.g[i];
            int main_row = !strcmp(gattr(pv, "dtype"), "f32") && !strcmp(gattr(pv, "route"), "pageable");
            if (pass == 0 && !main_row) continue;
            json_t *cells = json_object_get(pv->attrs, "cells");
            const char *cv[4];
            for (int m = 0; m < 4; m++) cv[m] = json_string_value(json_object_get(cells, modes[m])) ? json_string_value(json_object_get(cells, modes[m])) : "";
            hb_doc_row(rows, 8, gattr(pv, "model"), gattr(pv, "device"), gattr(pv, "dtype"), gattr(pv, "route"), cv[0], cv[1], cv[2], cv[3]);
        }
    }
    /* plot per model: clustered bars, backend x mode (f32, pageable, complete totals only) */
    json_t *ids = plot_ids_new();
    const char *k;
    json_t *lv;
    hb_status st = HB_OK;
    json_t *done = json_object();
    json_object_foreach(layers, k, lv) {
        const char *model = strchr(k, '|') + 1;
        if (json_object_get(done, model)) continue;
        json_object_set_new(done, model, json_true());
        int hasm[4] = { 0, 0, 0, 0 }, nrow = 0;
        for (size_t i = 0; i < piv.n; i++) {
            grp *pv = &piv.g[i];
            if (strcmp(gattr(pv, "model"), model) || strcmp(gattr(pv, "dtype"), "f32") || strcmp(gattr(pv, "route"), "pageable")) continue;
            int any = 0;
            for (int m = 0; m < 4; m++) if (pv->v[m].n) { hasm[m] = 1; any = 1; }
            nrow += any;
        }
        if (!nrow) continue;
        FILE *dat;
        hb_plot *p = hb_report_plot_begin(rp, F("model_%s", model), "models", F("Model total of %s per backend and mode (dtype f32, route pageable)", model), 900, 400, &dat);
        if (!p) { st = HB_EDEVICE; break; }
        fprintf(dat, "# backend, then seconds per model pass for:");
        for (int m = 0; m < 4; m++) if (hasm[m]) fprintf(dat, " %s", modes[m]);
        fprintf(dat, " (NaN = not measured or incomplete)\n");
        for (size_t i = 0; i < piv.n; i++) {
            grp *pv = &piv.g[i];
            if (strcmp(gattr(pv, "model"), model) || strcmp(gattr(pv, "dtype"), "f32") || strcmp(gattr(pv, "route"), "pageable")) continue;
            int any = 0;
            for (int m = 0; m < 4; m++) any |= pv->v[m].n > 0;
            if (!any) continue;
            fprintf(dat, "\"%s\"", gattr(pv, "device"));
            for (int m = 0; m < 4; m++) if (hasm[m]) fprintf(dat, " %.6g", pv->v[m].n ? pv->v[m].v[0] : DNAN);
            fprintf(dat, "\n");
        }
        fclose(dat);
        hb_sb body = { 0 };
        hb_sb_printf(&body, "set title '%s'\nset style data histograms\nset style histogram clustered gap 1\nset boxwidth 0.9\n"
                     "set logscale y 10\nset format y '%%.0s%%cs'\nset ylabel 'time per model pass'\nset grid noxtics\nset xtics scale 0\nplot ",
                     hb_report_gp_str(p->title));
        for (int m = 0, col = 2; m < 4; m++) {
            if (!hasm[m]) continue;
            hb_sb_printf(&body, "%s%s using %d%s title '%s' lt %d", col > 2 ? ", " : "", col == 2 ? F("'%s.dat'", p->id) : "''", col,
                         col == 2 ? ":xtic(1)" : "", modes[m], m + 1);
            col++;
        }
        hb_sb_printf(&body, "\n");
        st = hb_report_plot_script(rp, p, body.s);
        hb_sb_free(&body);
        if (st != HB_OK) break;
        plot_id_add(ids, p);
    }
    json_decref(done);
    hb_doc_plots(rp, ids);
    groups_free(&piv);
    groups_free(&g);
    json_decref(layers);
    return st;
}

/* ---------------------------------------------------------------- per-op plots ---- */

static hb_status per_op(ctx *c)
{
    hb_report *rp = c->rp;
    static const char *const modes[] = { "convert", "f32", "resident", "convert-device" };
    hb_doc_h(rp, 2, "ops", "Time and throughput against size, per op");
    hb_doc_p(rp, "Median end-to-end time and the end-to-end throughput (GFLOP/s for compute-bound ops, GB/s for memory-bound ops) of every status-ok case with dtype f32, route pageable (a backend without pageable results shows its first route). Colour: backend; line style: mode (solid f32, dashed convert, dotted resident, dash-dot convert-device).");
    json_t *ids = plot_ids_new();
    size_t *ix = malloc((rp->nrows + 1) * sizeof *ix);
    if (!ix) { json_decref(ids); return HB_ENOMEM; }
    for (int o = 0; o < c->nops; o++) {
        const char *op = c->ops[o];
        const char *bound = "";
        FILE *dat = NULL;
        hb_plot *p = NULL;
        hb_sb ser = { 0 };
        int nser = 0;
        for (int d = 0; d < rp->ndevs; d++) {
            /* route: pageable if the device has it for this op, else the first seen */
            const char *route = NULL;
            for (size_t i = 0; i < rp->nrows; i++) {
                const hb_rrow *w = &rp->rows[i];
                if (w->dev != d || !w->ok || strcmp(w->op, op) || strcmp(w->dtype, "f32")) continue;
                if (!route || !strcmp(w->route, "pageable")) route = w->route;
            }
            if (!route) continue;
            for (int m = 0; m < 4; m++) {
                size_t n = 0;
                for (size_t i = 0; i < rp->nrows; i++) {
                    const hb_rrow *w = &rp->rows[i];
                    if (w->dev == d && w->ok && !strcmp(w->op, op) && !strcmp(w->dtype, "f32") && !strcmp(w->route, route) && !strcmp(w->mode, modes[m]))
                        ix[n++] = i;
                }
                if (!n) continue;
                qsort_r(ix, n, sizeof *ix, cmp_rowix, c);
                if (!p) {
                    p = hb_report_plot_begin(rp, F("op_%s", op), "ops", F("%s: time and throughput against size", op), 1240, 440, &dat);
                    if (!p) { free(ix); json_decref(ids); return HB_EDEVICE; }
                    bound = rp->rows[ix[0]].bound;
                }
                if (nser) fprintf(dat, "\n\n");
                fprintf(dat, "# %s %s (%s): size total_s throughput shape\n", rp->devs[d].id, modes[m], route);
                for (size_t k = 0; k < n; k++) {
                    const hb_rrow *w = &rp->rows[ix[k]];
                    double thr = !strcmp(bound, "memory") ? (isfinite(w->gbps_total) ? w->gbps_total : w->bytes / w->t[HB_PH_TOTAL] / 1e9)
                                                          : (isfinite(w->gflops_total) ? w->gflops_total : w->flops / w->t[HB_PH_TOTAL] / 1e9);
                    fprintf(dat, "%.17g %.6g %.6g \"%s\"\n", w->size, w->t[HB_PH_TOTAL], thr, w->shape);
                }
                static const int dts[] = { 2, 1, 3, 4 }, pts[] = { 6, 7, 4, 8 };
                hb_sb_printf(&ser, "%s'%s.dat' index %d using 1:%%d with linespoints lt %d dt %d pt %d %%s '%s'", nser ? ", \\\n     " : "", p->id, nser,
                             d % 10 + 1, dts[m], pts[m], hb_report_gp_str(F("%s %s%s", rp->devs[d].id, modes[m], strcmp(route, "pageable") ? F(" (%s)", route) : "")));
                nser++;
            }
        }
        if (!p) { hb_sb_free(&ser); continue; }
        fclose(dat);
        /* the series list is used twice (time panel, throughput panel): %d is the column, %s title/notitle */
        hb_sb body = { 0 };
        hb_sb_printf(&body, "set multiplot title '%s'\n", hb_report_gp_str(p->title));
        gp_size_axis(&body);
        hb_sb_printf(&body, "set logscale y 10\nset lmargin at screen 0.07\nset rmargin at screen 0.41\nset tmargin at screen 0.88\nset bmargin at screen 0.14\n"
                     "set ylabel 'median end-to-end time (s)'\nset format y '%%.0s%%cs'\nunset key\nplot ");
        /* expand the series template for column 2 (no titles) */
        for (const char *s = ser.s; *s; s++) {
            if (s[0] == '%' && s[1] == 'd') { hb_sb_printf(&body, "2"); s++; }
            else if (s[0] == '%' && s[1] == 's') { hb_sb_printf(&body, "title"); s++; }
            else hb_sb_printf(&body, "%c", *s);
        }
        hb_sb_printf(&body, "\nset lmargin at screen 0.50\nset rmargin at screen 0.80\nset ylabel '%s'\nset format y '%%g'\n"
                     "set key at screen 0.81, screen 0.88 left top\nplot ", !strcmp(bound, "memory") ? "end-to-end GB/s" : "end-to-end GFLOP/s");
        for (const char *s = ser.s; *s; s++) {
            if (s[0] == '%' && s[1] == 'd') { hb_sb_printf(&body, "3"); s++; }
            else if (s[0] == '%' && s[1] == 's') { hb_sb_printf(&body, "title"); s++; }
            else hb_sb_printf(&body, "%c", *s);
        }
        hb_sb_printf(&body, "\nunset multiplot\n");
        hb_sb_free(&ser);
        hb_status st = hb_report_plot_script(rp, p, body.s);
        hb_sb_free(&body);
        if (st != HB_OK) { free(ix); json_decref(ids); return st; }
        plot_id_add(ids, p);
    }
    free(ix);
    hb_doc_plots(rp, ids);
    return HB_OK;
}

/* ---------------------------------------------------------------- metadata ---- */

static const char *jtext(json_t *v)
{
    if (!v || json_is_null(v)) return "";
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_integer(v)) return F("%lld", (long long)json_integer_value(v));
    if (json_is_real(v)) return hb_report_fmt_num(json_real_value(v));
    if (json_is_boolean(v)) return json_is_true(v) ? "yes" : "no";
    char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
    const char *r = F("%.500s", s ? s : "");
    free(s);
    return r;
}

static void metadata(ctx *c)
{
    hb_report *rp = c->rp;
    hb_doc_h(rp, 2, "meta", "Run metadata");
    for (int r = 0; r < rp->nruns; r++) {
        hb_rrun *ru = &rp->runs[r];
        json_t *m = ru->r.meta;
        hb_doc_h(rp, 3, NULL, "%s: %s", ru->label, ru->r.path);
        json_t *rows = hb_doc_table(rp, NULL, 0, 2, "field", "value");
        static const char *const keys[] = { "run_id", "date", "host", "git_commit", "command_line", "os", "memory_bytes", "compiler", "cflags" };
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            json_t *v = json_object_get(m, keys[k]);
            if (!v) continue;
            hb_doc_row(rows, 2, keys[k], !strcmp(keys[k], "memory_bytes") ? hb_report_fmt_bytes(json_number_value(v)) : jtext(v));
        }
        json_t *cpu = json_object_get(m, "cpu");
        if (cpu)
            hb_doc_row(rows, 2, "cpu", F("%s; %s sockets, %s cores, %s PUs, %s NUMA; L1d %s, L2 %s, L3 %s", jtext(json_object_get(cpu, "model")),
                       jtext(json_object_get(cpu, "sockets")), jtext(json_object_get(cpu, "cores")), jtext(json_object_get(cpu, "pus")),
                       jtext(json_object_get(cpu, "numa_nodes")), hb_report_fmt_bytes(json_number_value(json_object_get(cpu, "l1d_bytes"))),
                       hb_report_fmt_bytes(json_number_value(json_object_get(cpu, "l2_bytes"))), hb_report_fmt_bytes(json_number_value(json_object_get(cpu, "l3_bytes")))));
        static const char *const objs[] = { "openblas", "options", "clock" };
        for (size_t k = 0; k < sizeof objs / sizeof objs[0]; k++)
            if (json_object_get(m, objs[k])) hb_doc_row(rows, 2, objs[k], jtext(json_object_get(m, objs[k])));
        json_t *e = ru->r.end;
        hb_doc_row(rows, 2, "complete", e ? F("yes: %s cases, %s ok, %s wrong, %s failed, %s skipped, %s crashed, %s no_resource, %s s",
                                              jtext(json_object_get(e, "cases")), jtext(json_object_get(e, "ok")), jtext(json_object_get(e, "wrong")),
                                              jtext(json_object_get(e, "failed")), jtext(json_object_get(e, "skipped")), jtext(json_object_get(e, "crashed")),
                                              jtext(json_object_get(e, "no_resource")), jtext(json_object_get(e, "elapsed_s")))
                                        : "[warn] no end record: the run was cut short; the report uses every case it finished");
    }
    json_t *rows = hb_doc_table(rp, "Backends", 0, 5, "backend", "available", "description / reason", "host memory", "ceilings");
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        char ce[1000] = "";
        size_t o = 0, i;
        json_t *x;
        json_array_foreach(json_object_get(dv->rec, "ceilings"), i, x)
            if (o < sizeof ce - 1)
                o += (size_t)snprintf(ce + o, sizeof ce - o, "%s%s %s %s", o ? "; " : "", jtext(json_object_get(x, "name")),
                                      hb_report_fmt_num(json_number_value(json_object_get(x, "value"))), jtext(json_object_get(x, "unit")));
        hb_doc_row(rows, 5, dv->id, dv->available ? "[good] yes" : "[bad] no", dv->available ? dv->description : dv->reason,
                   dv->host_memory ? "yes" : "no", ce);
    }
    /* status counts per backend */
    static const char *const sts[] = { "ok", "wrong", "skipped", "failed", "no_resource", "crashed", "timed_out", "invalid" };
    rows = hb_doc_table(rp, "Case status per backend (only ok cases enter the answers; wrong never counts as fastest)", 0, 9,
                        "backend", sts[0], sts[1], sts[2], sts[3], sts[4], sts[5], sts[6], sts[7]);
    json_t *jst = json_object();
    json_object_set_new(rp->summary, "status_counts", jst);
    for (int d = 0; d < rp->ndevs; d++) {
        int cnt[8] = { 0 }, any = 0;
        for (size_t i = 0; i < rp->nrows; i++) {
            if (rp->rows[i].dev != d) continue;
            any = 1;
            for (int k = 0; k < 8; k++) if (!strcmp(rp->rows[i].status, sts[k])) cnt[k]++;
        }
        if (!any) continue;
        json_t *o = json_object();
        for (int k = 0; k < 8; k++) json_object_set_new(o, sts[k], json_integer(cnt[k]));
        json_object_set_new(jst, rp->devs[d].id, o);
        hb_doc_row(rows, 9, rp->devs[d].id, F("%d", cnt[0]), cnt[1] ? tone_cell("bad", F("%d", cnt[1])) : "0", F("%d", cnt[2]), F("%d", cnt[3]),
                   F("%d", cnt[4]), F("%d", cnt[5]), F("%d", cnt[6]), F("%d", cnt[7]));
    }
}

/* ---------------------------------------------------------------- driver ---- */

hb_status hb_report_analyze(hb_report *rp)
{
    ctx c;
    if (ctx_init(&c, rp) != 0) return HB_ENOMEM;
    rp->summary = json_object();
    rp->doc = json_array();
    json_t *cards = json_array();
    json_t *s = rp->summary;
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_object_set_new(s, "schema", json_integer(1));
    json_object_set_new(s, "tool", json_string("hybench"));
    json_object_set_new(s, "tool_version", json_string(HB_VERSION));
    json_object_set_new(s, "report", json_string(rp->name));
    json_object_set_new(s, "generated", json_string(date));
    json_object_set_new(s, "plan", json_pack("{s:[f,f],s:[f,f],s:f,s:[f,f],s:[f,f],s:f,s:f,s:f,s:f,s:[[s,s,s],[s,s]]}",
        "conversion_saving_expected_pct", P.conv_lo_pct, P.conv_hi_pct, "conversion_saving_success_pct", P.conv_ok_lo_pct, P.conv_ok_hi_pct,
        "f32_of_f16_min_pct", P.f32_of_f16_min_pct, "ane_f32_of_f16_measured_pct", P.ane_f32_of_f16_lo_pct, P.ane_f32_of_f16_hi_pct,
        "memory_saving_target_pct", P.mem_lo_pct, P.mem_hi_pct, "cpu_below_bytes", P.cpu_below_bytes, "ane_below_bytes", P.ane_below_bytes,
        "matmul_gpu_above_elements", P.matmul_gpu_above_elems, "tensor_elem_bytes", P.tensor_elem_bytes,
        "fallback_chains", "cuda", "opencl", "cpu", "opencl", "cpu"));
    json_t *inputs = json_array(), *devs = json_array();
    json_object_set_new(s, "inputs", inputs);
    json_object_set_new(s, "devices", devs);
    for (int r = 0; r < rp->nruns; r++) {
        hb_rrun *ru = &rp->runs[r];
        json_array_append_new(inputs, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:b}", "path", ru->r.path, "label", ru->label, "run_id", ru->run_id,
                                                "host", ru->host, "commit", ru->commit, "date", ru->date, "cases",
                                                (json_int_t)json_array_size(ru->r.cases), "complete", ru->r.end != NULL));
    }
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        json_t *ce = json_object();
        size_t i;
        json_t *x;
        json_array_foreach(json_object_get(dv->rec, "ceilings"), i, x) {
            const char *nm = json_string_value(json_object_get(x, "name"));
            if (nm) json_object_set(ce, nm, json_object_get(x, "value"));
        }
        json_array_append_new(devs, json_pack("{s:s,s:s,s:s,s:s,s:b,s:b,s:s,s:b,s:o}", "id", dv->id, "run", rp->runs[dv->run].label, "backend", dv->backend,
                                              "type", dv->type, "available", dv->available, "host_memory", dv->host_memory,
                                              "description", dv->available ? dv->description : dv->reason, "cpu_device", dv->is_cpu_device, "ceilings", ce));
    }
    hb_status st = q1(&c, cards);
    if (st == HB_OK) st = q2(&c, cards);
    if (st == HB_OK) st = q3(&c, cards);
    if (st == HB_OK) st = q4(&c, cards);
    if (st == HB_OK) st = q5(&c, cards);
    if (st == HB_OK) st = rooflines(&c);
    if (st == HB_OK) st = models(&c);
    if (st == HB_OK) st = per_op(&c);
    if (st == HB_OK) metadata(&c);
    json_object_set(s, "verdicts", cards);
    /* assemble: title, inputs, summary box, then the sections built above */
    json_t *sections = rp->doc;
    rp->doc = json_array();
    hb_doc_h(rp, 1, "top", "hybench report: %s", rp->name);
    char inp[2000] = "";
    size_t o = 0;
    for (int r = 0; r < rp->nruns && o < sizeof inp - 1; r++)
        o += (size_t)snprintf(inp + o, sizeof inp - o, "%s%s (run %s, commit %.12s, %s, %zu cases%s)", r ? "; " : "", rp->runs[r].label,
                              rp->runs[r].run_id, rp->runs[r].commit, rp->runs[r].date, json_array_size(rp->runs[r].r.cases),
                              rp->runs[r].r.end ? "" : ", incomplete");
    hb_doc_p(rp, "From %d results file%s: %s. Generated %s by hybench %s. Every number below is computed from these results; the plan's figures are the only constants.",
             rp->nruns, rp->nruns > 1 ? "s" : "", inp, date, HB_VERSION);
    hb_doc_h(rp, 2, "summary", "Summary: the five questions");
    json_array_append_new(rp->doc, json_pack("{s:o}", "summary", cards));
    json_array_extend(rp->doc, sections);
    json_decref(sections);
    ctx_free(&c);
    return st;
}
