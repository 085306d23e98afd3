/* common.c - the helpers the report's sections share (report/common.h): value vectors, groups of
 * rows, the analysis context with the op order, pairs of rows that differ in one field, verdict words,
 * summary cards and plot ids. */
#include "report/common.h"

/* core/hybench.h's HB_FAMILY_LIST, in its order; the first NFAM are the roofline table's columns */
const char *const family_order[] = {
#define HB_X(e, n) n,
    HB_FAMILY_LIST(HB_X)
#undef HB_X
};
_Static_assert(sizeof family_order / sizeof family_order[0] == HB_FAM_COUNT, "one name per family");
_Static_assert(NFAM == HB_FAM_COLLECTIVE && HB_FAM_COLLECTIVE + 1 == HB_FAM_COUNT,
               "the roofline table lists the families before collective (figures.c names its 7 columns)");

void vec_push(vec *x, double d)
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

double vec_median(vec *x) { return hb_report_median(x->v, x->n); } /* sorts */
double vec_min(const vec *x) { double m = DNAN; for (size_t i = 0; i < x->n; i++) if (!(x->v[i] >= m)) m = x->v[i]; return m; }
double vec_max(const vec *x) { double m = DNAN; for (size_t i = 0; i < x->n; i++) if (!(x->v[i] <= m)) m = x->v[i]; return m; }


grp *grp_find(const groups *gs, const char *key)
{
    size_t ix = hb_strmap_get(&gs->map, key, SIZE_MAX);
    return ix == SIZE_MAX ? NULL : &gs->g[ix];
}

double grp_median(const groups *gs, const char *key)
{
    const grp *g = grp_find(gs, key);
    if (!g) return DNAN;
    const vec *v0 = &g->v[0];
    return hb_report_median(v0->v, v0->n);
}

grp *grp_get(groups *gs, const char *key, json_t *attrs /* stolen */)
{
    grp *found = grp_find(gs, key);
    if (found) { json_decref(attrs); return found; }
    if (gs->n == gs->cap) {
        size_t nc = gs->cap ? gs->cap * 2 : 16;
        grp *ng = realloc(gs->g, nc * sizeof *ng);
        if (!ng) { json_decref(attrs); return NULL; }
        gs->g = ng;
        gs->cap = nc;
    }
    grp *g = &gs->g[gs->n];
    memset(g, 0, sizeof *g);
    if (hb_strmap_set(&gs->map, key, gs->n) != HB_OK) { json_decref(attrs); return NULL; }
    g->attrs = attrs;
    gs->n++;
    return g;
}

void groups_free(groups *gs)
{
    for (size_t i = 0; i < gs->n; i++) {
        json_decref(gs->g[i].attrs);
        for (int k = 0; k < NV; k++) free(gs->g[i].v[k].v);
    }
    free(gs->g);
    hb_strmap_free(&gs->map);
    memset(gs, 0, sizeof *gs);
}

const char *gattr(const grp *g, const char *k) { const char *s = json_string_value(json_object_get(g->attrs, k)); return s ? s : ""; }


int fam_rank(const char *f)
{
    for (int i = 0; i < NFAM; i++) if (!strcmp(f, family_order[i])) return i;
    return NFAM;
}


int op_rank(const ctx *c, const char *op)
{
    return (int)hb_strmap_get(&c->op_rank, op, (size_t)1 << 20);
}

const hb_rdev *row_dev(const ctx *c, const hb_rrow *w) { return &c->rp->devs[w->dev]; }
const char *class_of(const hb_rrow *w)
{
    if (!strcmp(w->family, "chain")) return "chain";
    if (!strcmp(w->bound, "memory") || !strcmp(w->bound, "compute")) return w->bound;
    return "other";
}

int cmp_opinfo(const void *a, const void *b)
{
    const opinfo *x = a, *y = b;
    if (x->rank != y->rank) return x->rank - y->rank;
    return x->first - y->first;
}

int rctx_init(ctx *c, hb_report *rp)
{
    memset(c, 0, sizeof *c);
    c->rp = rp;
    opinfo *oi = calloc(rp->nrows + 1, sizeof *oi);
    hb_strmap seen = {0};
    if (!oi) return -1;
    int n = 0;
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        if (hb_strmap_has(&seen, w->op)) continue;
        if (hb_strmap_set(&seen, w->op, 1) != HB_OK) { free(oi); hb_strmap_free(&seen); return -1; }
        oi[n].op = w->op;
        oi[n].family = w->family;
        oi[n].bound = w->bound;
        oi[n].rank = fam_rank(w->family);
        oi[n].first = n;
        n++;
    }
    qsort(oi, (size_t)n, sizeof *oi, cmp_opinfo);
    c->ops = calloc((size_t)n + 1, sizeof *c->ops);
    if (!c->ops) { free(oi); hb_strmap_free(&seen); return -1; }
    for (int i = 0; i < n; i++) {
        c->ops[i] = (char *)oi[i].op;
        if (hb_strmap_set(&c->op_rank, oi[i].op, (size_t)i) != HB_OK) { free(oi); hb_strmap_free(&seen); return -1; }
    }
    c->nops = n;
    free(oi);
    hb_strmap_free(&seen);
    return 0;
}

void rctx_free(ctx *c)
{
    hb_strmap_free(&c->op_rank);
    free(c->ops);
}

/* ---- matching cases that differ in one field ---- */

const char *field(const hb_rrow *w, int f)
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

void make_key(const hb_rrow *w, int flags, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    if (flags & K_DEV) o += (size_t)snprintf(buf + o, len - o, "%d|", w->dev);
    for (int f = K_OP; f <= K_NAME && o < len; f <<= 1)
        if (flags & f) o += (size_t)snprintf(buf + o, len - o, "%s|", field(w, f));
}


/* Pairs (a, b) of ok rows with equal key(flags) where field `vary` is va for a and vb for b;
 * `only_family` non-NULL keeps rows of that family, `skip_family` drops one. Returns the count;
 * *out is malloc'd (free it). */
size_t find_pairs(const hb_report *rp, int flags, int vary, const char *va, const char *vb,
                         const char *only_family, const char *skip_family, rpair **out)
{
    hb_strmap map = {0}, used = {0};
    rpair *v = malloc((rp->nrows + 1) * sizeof *v);
    size_t n = 0;
    char key[1024];
    *out = v;
    if (!v) return 0;
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        if (!w->ok || strcmp(field(w, vary), va)) continue;
        if (only_family && strcmp(w->family, only_family)) continue;
        if (skip_family && !strcmp(w->family, skip_family)) continue;
        make_key(w, flags, key, sizeof key);
        if (!hb_strmap_has(&map, key) && hb_strmap_set(&map, key, i) != HB_OK) break;
    }
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        if (!w->ok || strcmp(field(w, vary), vb)) continue;
        if (only_family && strcmp(w->family, only_family)) continue;
        if (skip_family && !strcmp(w->family, skip_family)) continue;
        make_key(w, flags, key, sizeof key);
        size_t a = hb_strmap_get(&map, key, SIZE_MAX);
        if (a == SIZE_MAX || hb_strmap_has(&used, key)) continue;
        if (hb_strmap_set(&used, key, 1) != HB_OK) break;
        v[n].a = a;
        v[n].b = i;
        n++;
    }
    hb_strmap_free(&map);
    hb_strmap_free(&used);
    return n;
}

/* sort pairs by device, op rank, size, route, dtype of their b row */
int cmp_pair(const void *x, const void *y, void *arg)
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

void sort_pairs(ctx *c, rpair *v, size_t n) { qsort_r(v, n, sizeof *v, cmp_pair, c); }

/* sort row indices by device, op rank, size, flops */
int cmp_rowix(const void *x, const void *y, void *arg)
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
const char *rkey(const hb_rrow *w)
{
    const char *k = w->rec->key;
    return k ? k : "";
}

double xfer(const hb_rrow *w)
{
    double h = isfinite(w->t[HB_PH_H2D]) ? w->t[HB_PH_H2D] : 0, d = isfinite(w->t[HB_PH_D2H]) ? w->t[HB_PH_D2H] : 0;
    return h + d;
}
double conv_time(const hb_rrow *w)
{
    double a = isfinite(w->t[HB_PH_CONVERT_IN]) ? w->t[HB_PH_CONVERT_IN] : 0;
    double b = isfinite(w->t[HB_PH_CONVERT_OUT]) ? w->t[HB_PH_CONVERT_OUT] : 0;
    return a + b;
}
double mem_of(const hb_rrow *w)
{
    if (!isfinite(w->host_bytes) && !isfinite(w->device_bytes)) return DNAN;
    return (isfinite(w->host_bytes) ? w->host_bytes : 0) + (isfinite(w->device_bytes) ? w->device_bytes : 0);
}

/* verdicts against the plan; tone: good, warn, bad, info */
const char *verdict_q1(double pct, const char **tone)
{
    if (!isfinite(pct)) { *tone = "none"; return "no data"; }
    if (pct < hb_report_plan.conv_lo_pct) { *tone = "bad"; return F("below the plan's %g-%g%%", hb_report_plan.conv_lo_pct, hb_report_plan.conv_hi_pct); }
    if (pct < hb_report_plan.conv_ok_lo_pct) { *tone = "warn"; return F("inside %g-%g%%, below the %g-%g%% success band", hb_report_plan.conv_lo_pct, hb_report_plan.conv_hi_pct, hb_report_plan.conv_ok_lo_pct, hb_report_plan.conv_ok_hi_pct); }
    if (pct <= hb_report_plan.conv_ok_hi_pct) { *tone = "good"; return F("inside the %g-%g%% success band", hb_report_plan.conv_ok_lo_pct, hb_report_plan.conv_ok_hi_pct); }
    if (pct <= hb_report_plan.conv_hi_pct) { *tone = "good"; return F("inside %g-%g%%, above the %g-%g%% success band", hb_report_plan.conv_lo_pct, hb_report_plan.conv_hi_pct, hb_report_plan.conv_ok_lo_pct, hb_report_plan.conv_ok_hi_pct); }
    *tone = "info";
    return F("above the plan's %g-%g%%", hb_report_plan.conv_lo_pct, hb_report_plan.conv_hi_pct);
}

const char *verdict_q3(double pct, const char **tone)
{
    if (!isfinite(pct)) { *tone = "none"; return "no data"; }
    if (pct < hb_report_plan.mem_lo_pct) { *tone = "bad"; return F("below the %g-%g%% target", hb_report_plan.mem_lo_pct, hb_report_plan.mem_hi_pct); }
    if (pct <= hb_report_plan.mem_hi_pct) { *tone = "good"; return F("inside the %g-%g%% target", hb_report_plan.mem_lo_pct, hb_report_plan.mem_hi_pct); }
    *tone = "good";
    return F("beyond the %g-%g%% target", hb_report_plan.mem_lo_pct, hb_report_plan.mem_hi_pct);
}

const char *verdict_q2(double pct, const char **tone)
{
    if (!isfinite(pct)) { *tone = "none"; return "no data"; }
    if (pct >= hb_report_plan.f32_of_f16_min_pct) { *tone = "good"; return F("meets the plan's >= %g%%", hb_report_plan.f32_of_f16_min_pct); }
    *tone = "bad";
    return F("below the plan's %g%%", hb_report_plan.f32_of_f16_min_pct);
}

/* "saves 12%", "costs 16% more", "n/a" */
const char *saving_words(double pct)
{
    if (!isfinite(pct)) return "n/a";
    return pct >= 0 ? F("saves %s", hb_report_fmt_pct(pct)) : F("costs %s more", hb_report_fmt_pct(-pct));
}

const char *tone_cell(const char *tone, const char *text) { return F("[%s] %s", tone, text); }

json_t *plot_ids_new(void) { return json_array(); }
void plot_id_add(json_t *ids, const hb_plot *p) { if (p) json_array_append_new(ids, json_string(p->id)); }

/* Devices listed in the summary card: non-reference ones, or every one when only references ran. */
int card_device(const ctx *c, int dev, const int *has)
{
    int any_nonref = 0;
    for (int i = 0; i < c->rp->ndevs; i++) if (has[i] && !c->rp->devs[i].is_reference) any_nonref = 1;
    return has[dev] && (!any_nonref || !c->rp->devs[dev].is_reference);
}

const char *enqueue_cell(double enq, double t)
{
    if (!isfinite(enq)) return "-";
    return enq >= 0.9 * t ? tone_cell("warn", F("%s: launch-bound", hb_report_fmt_time(enq))) : hb_report_fmt_time(enq);
}

void card_add(json_t *cards, int q, const char *title, const char *badge, const char *tone, const char *text)
{
    json_array_append_new(cards, json_pack("{s:i,s:s,s:s,s:s,s:s}", "q", q, "title", title, "badge", badge,
                                           "tone", tone, "text", text));
}

/* common gnuplot preamble for x = size on a log axis */
void gp_size_axis(hb_sb *b)
{
    hb_sb_printf(b, "set logscale x 10\nset format x '%%.0s%%c'\nset xlabel 'size (elements of the largest tensor)'\n");
}


/* ---------------------------------------------------------------- series and intervals ---- */

const char *row_source(const hb_rrow *w)
{
    const char *s = w->rec->source;
    if (!s || !*s) s = w->name;
    return s ? s : "";
}

int series_break(const hb_rrow *prev, const hb_rrow *cur)
{
    if (!prev) return 0;
    return strcmp(row_source(prev), row_source(cur)) != 0 || prev->size == cur->size;
}

void ci_or_median(const hb_rrow *w, double *lo, double *hi)
{
    double m = w->t[HB_PH_TOTAL];
    *lo = isfinite(w->ci_lo) && w->ci_lo > 0 ? w->ci_lo : m;
    *hi = isfinite(w->ci_hi) && w->ci_hi > 0 ? w->ci_hi : m;
}

const char *fmt_time_ci(const hb_rrow *w)
{
    double m = w->t[HB_PH_TOTAL];
    if (!isfinite(w->ci_lo) || !isfinite(w->ci_hi)) return F("%s%s", hb_report_fmt_time(m), w->ci_met == 0 ? " \u2020" : "");
    return F("%s [%s, %s]%s", hb_report_fmt_time(m), hb_report_fmt_time(w->ci_lo), hb_report_fmt_time(w->ci_hi),
             w->ci_met == 0 ? " \u2020" : "");
}

void saving_ci(const hb_rrow *a, const hb_rrow *b, double *lo, double *hi)
{
    double alo, ahi, blo, bhi;
    ci_or_median(a, &alo, &ahi);
    ci_or_median(b, &blo, &bhi);
    *lo = 100.0 * (1.0 - bhi / alo);
    *hi = 100.0 * (1.0 - blo / ahi);
}

void plot_drop(hb_report *rp, hb_plot *p)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.dat", rp->outdir, p->id);
    remove(path);
    snprintf(path, sizeof path, "%s/%s.gp", rp->outdir, p->id);
    remove(path);
    if (rp->nplots > 0 && p == &rp->plots[rp->nplots - 1]) rp->nplots--;
}
