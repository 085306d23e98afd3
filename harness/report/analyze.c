/* analyze.c - the report's analysis (report/analyze.h): the helpers its sections share, the run
 * metadata section, and hb_report_analyze, which runs the five questions of ../shared/DESIGN.md
 * (q1_conversion.c ... q5_selection.c, with the plan's figures from hb_report_plan) and the figures
 * (figures.c) into rp->summary (summary.json) and the document; docs/report.md defines each answer. */
#include "report/analyze.h"
#include <time.h>

const char *const family_order[] = { "elementwise", "matmul", "conv2d", "pooling", "reduction", "attention", "chain" };
_Static_assert(sizeof family_order / sizeof family_order[0] == 7, "the roofline table lists 7 families");

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


grp *grp_get(groups *gs, const char *key, json_t *attrs /* stolen */)
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

void groups_free(groups *gs)
{
    for (size_t i = 0; i < gs->n; i++) {
        json_decref(gs->g[i].attrs);
        for (int k = 0; k < NV; k++) free(gs->g[i].v[k].v);
    }
    free(gs->g);
    json_decref(gs->map);
    memset(gs, 0, sizeof *gs);
}

const char *gattr(const grp *g, const char *k) { const char *s = json_string_value(json_object_get(g->attrs, k)); return s ? s : ""; }

/* a JSON number, or null for DNAN/inf (JSON has no NaN) */
json_t *jnum(double x) { return isfinite(x) ? json_real(x) : json_null(); }

int fam_rank(const char *f)
{
    for (int i = 0; i < NFAM; i++) if (!strcmp(f, family_order[i])) return i;
    return NFAM;
}


int op_rank(const ctx *c, const char *op)
{
    json_t *v = json_object_get(c->op_rank, op);
    return v ? (int)json_integer_value(v) : 1 << 20;
}

const hb_rdev *DEV(const ctx *c, const hb_rrow *w) { return &c->rp->devs[w->dev]; }
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

int ctx_init(ctx *c, hb_report *rp)
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

void ctx_free(ctx *c)
{
    json_decref(c->op_rank);
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
    const char *k = json_string_value(json_object_get(w->rec, "key"));
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
    if (pct < P.conv_lo_pct) { *tone = "bad"; return F("below the plan's %g-%g%%", P.conv_lo_pct, P.conv_hi_pct); }
    if (pct < P.conv_ok_lo_pct) { *tone = "warn"; return F("inside %g-%g%%, below the %g-%g%% success band", P.conv_lo_pct, P.conv_hi_pct, P.conv_ok_lo_pct, P.conv_ok_hi_pct); }
    if (pct <= P.conv_ok_hi_pct) { *tone = "good"; return F("inside the %g-%g%% success band", P.conv_ok_lo_pct, P.conv_ok_hi_pct); }
    if (pct <= P.conv_hi_pct) { *tone = "good"; return F("inside %g-%g%%, above the %g-%g%% success band", P.conv_lo_pct, P.conv_hi_pct, P.conv_ok_lo_pct, P.conv_ok_hi_pct); }
    *tone = "info";
    return F("above the plan's %g-%g%%", P.conv_lo_pct, P.conv_hi_pct);
}

const char *verdict_q3(double pct, const char **tone)
{
    if (!isfinite(pct)) { *tone = "none"; return "no data"; }
    if (pct < P.mem_lo_pct) { *tone = "bad"; return F("below the %g-%g%% target", P.mem_lo_pct, P.mem_hi_pct); }
    if (pct <= P.mem_hi_pct) { *tone = "good"; return F("inside the %g-%g%% target", P.mem_lo_pct, P.mem_hi_pct); }
    *tone = "good";
    return F("beyond the %g-%g%% target", P.mem_lo_pct, P.mem_hi_pct);
}

const char *verdict_q2(double pct, const char **tone)
{
    if (!isfinite(pct)) { *tone = "none"; return "no data"; }
    if (pct >= P.f32_of_f16_min_pct) { *tone = "good"; return F("meets the plan's >= %g%%", P.f32_of_f16_min_pct); }
    *tone = "bad";
    return F("below the plan's %g%%", P.f32_of_f16_min_pct);
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
    hb_status st = hb_report_q1(&c, cards);
    if (st == HB_OK) st = hb_report_q2(&c, cards);
    if (st == HB_OK) st = hb_report_q3(&c, cards);
    if (st == HB_OK) st = hb_report_q4(&c, cards);
    if (st == HB_OK) st = hb_report_q5(&c, cards);
    if (st == HB_OK) st = hb_report_rooflines(&c);
    if (st == HB_OK) st = hb_report_models(&c);
    if (st == HB_OK) st = hb_report_per_op(&c);
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

