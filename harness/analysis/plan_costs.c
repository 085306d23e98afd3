/* plan_costs.c - a model's cost table from a results file (plan_costs.h). */
#include "analysis/plan_costs.h"
#include "analysis/routing.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "op|shape" with the shape normalized and formatted, so that a record's shape_str and a model node
 * compare equal whatever defaults either spelled out. Returns 0, or -1 when the shape is refused. */
static int op_key(hb_op op, const hb_shape *in, char *buf, size_t len)
{
    hb_shape s = *in;
    char err[128], sh[256];
    if (hb_shape_normalize(op, &s, err, sizeof err) != HB_OK) return -1;
    snprintf(buf, len, "%s|%s", hb_op_get(op)->name, hb_shape_format(op, &s, sh, sizeof sh));
    return 0;
}

static int record_key(const hb_rec_case *c, hb_op *op, hb_shape *s, char *buf, size_t len)
{
    const char *o = c->op, *ss = c->shape_str;
    char err[128];
    int k = o ? hb_op_parse(o) : -1;
    if (k < 0 || !ss || hb_shape_parse(ss, s, err, sizeof err) != HB_OK) return -1;
    *op = (hb_op)k;
    return op_key(*op, s, buf, len);
}

static int name_in_list(const char *list, const char *id, const char *type)
{
    const char *p = list;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if ((strlen(id) == n && !strncmp(id, p, n)) || (strlen(type) == n && !strncmp(type, p, n))) return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Append to err (used so far: *o), stopping before overflow. */
static void say(char *err, size_t errlen, size_t *o, const char *fmt, const char *a, const char *b)
{
    if (*o >= errlen) return;
    int w = snprintf(err + *o, errlen - *o, fmt, a, b);
    if (w > 0) *o += (size_t)w;
    if (*o >= errlen) *o = errlen;
}

static hb_status pick_devices(const hb_run *r, const char *backends, hb_plan_costs *c, char *err, size_t errlen)
{
    for (size_t k = 0; k < r->nbackend_recs; k++) {
        const hb_rec_backend *b = &r->backend_recs[k];
        const char *id = b->backend;
        if (!id || b->available != 1) continue;
        char type[16];
        snprintf(type, sizeof type, "%.*s", (int)strcspn(id, ":"), id);
        if (backends ? !name_in_list(backends, id, type) : !strcmp(type, "cpu-ref")) continue;
        int has_case = 0;
        for (size_t j = 0; j < r->ncase_recs; j++) {
            const char *cb = r->case_recs[j].backend, *st = r->case_recs[j].status;
            if (cb && !strcmp(cb, id) && st && !strcmp(st, "ok")) { has_case = 1; break; }
        }
        if (!has_case && !backends) continue;
        int dup = 0;
        for (int d = 0; d < c->ndev; d++) dup |= !strcmp(c->dev[d].id, id);
        if (dup) continue;
        if (c->ndev == HB_PLAN_MAXDEV) { snprintf(err, errlen, "more than %d backends: name fewer with --backend", HB_PLAN_MAXDEV); return HB_EINVAL; }
        hb_plan_device *d = &c->dev[c->ndev++];
        snprintf(d->id, sizeof d->id, "%s", id);
        snprintf(d->type, sizeof d->type, "%s", type);
        d->host_memory = b->host_memory;
    }
    /* every name in --backend must be one of the file's available backends */
    const char *p = backends;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int found = 0;
        for (int d = 0; d < c->ndev; d++)
            found |= (strlen(c->dev[d].id) == n && !strncmp(c->dev[d].id, p, n)) || (strlen(c->dev[d].type) == n && !strncmp(c->dev[d].type, p, n));
        if (!found) { snprintf(err, errlen, "--backend %.*s: no available backend of that name in %s", (int)n, p, r->path); return HB_EINVAL; }
        p = e ? e + 1 : NULL;
    }
    if (!c->ndev) { snprintf(err, errlen, "%s: no available backend with an ok case to plan over", r->path); return HB_EINVAL; }
    c->nmem = 1;
    for (int d = 0; d < c->ndev; d++) {
        if (c->dev[d].host_memory) c->dev[d].mem = 0;
        else if (c->nmem == HB_PLAN_MAXMEM) { snprintf(err, errlen, "more than %d device memories: name fewer with --backend", HB_PLAN_MAXMEM - 1); return HB_EINVAL; }
        else c->dev[d].mem = c->nmem++;
        c->mem[d] = c->dev[d].mem;
    }
    return HB_OK;
}

/* The routes' links: ceilings and latency per device memory. Refuses (missing) a named route a device
 * lacks; unnamed routes a device lacks are left out; no route left while a device has its own memory
 * is missing too. */
static hb_status links(const hb_run *r, const char *routes, hb_plan_costs *c, hb_plan_costs_why *why, char *err, size_t errlen)
{
    size_t o = 0;
    int any = 0;
    for (int rt = 0; rt < HB_ROUTE_COUNT; rt++) {
        const char *rn = hb_route_name((hb_route)rt);
        int named = routes && name_in_list(routes, rn, rn);
        if (routes && !named) continue;
        c->route_ok[rt] = 1;
        for (int d = 0; d < c->ndev; d++) {
            if (c->dev[d].host_memory) continue;
            char hn[64], dn[64];
            snprintf(hn, sizeof hn, "h2d_gbps_%s", rn);
            snprintf(dn, sizeof dn, "d2h_gbps_%s", rn);
            double h = hb_run_ceiling(r, c->dev[d].id, hn), dw = hb_run_ceiling(r, c->dev[d].id, dn);
            if (!(h > 0) || !(dw > 0)) {
                c->route_ok[rt] = 0;
                char what[200];
                snprintf(what, sizeof what, "ceiling %s%s%s of %s", !(h > 0) ? hn : "", !(h > 0) && !(dw > 0) ? " and " : "", !(dw > 0) ? dn : "",
                         c->dev[d].id);
                say(err, errlen, &o, "%s%s", o ? "; " : "", what);
                continue;
            }
            hb_plan_link *l = &c->link[rt][c->dev[d].mem];
            l->h2d_bw = h * 1e9;
            l->d2h_bw = dw * 1e9;
            /* latency per copy from this backend's small mode-f32 cases on this route */
            size_t nc = r->ncase_recs;
            double *hv = malloc((nc + 1) * sizeof *hv), *dv = malloc((nc + 1) * sizeof *dv);
            if (!hv || !dv) { free(hv); free(dv); return HB_ENOMEM; }
            int nh = 0, nd = 0;
            for (size_t k = 0; k < nc; k++) {
                const hb_rec_case *cs = &r->case_recs[k];
                const char *b = cs->backend, *st = cs->status, *md = cs->mode, *dt = cs->dtype, *ro = cs->route;
                if (!b || strcmp(b, c->dev[d].id) || !st || strcmp(st, "ok") || !md || strcmp(md, "f32") || !dt || strcmp(dt, "f32") || !ro || strcmp(ro, rn))
                    continue;
                hb_op op;
                hb_shape s;
                char key[400], nerr[128];
                if (record_key(cs, &op, &s, key, sizeof key) < 0 || hb_op_is_collective(op) || op == HB_OP_CHAIN ||
                    hb_shape_normalize(op, &s, nerr, sizeof nerr) != HB_OK)
                    continue;
                const hb_op_info *info = hb_op_get(op);
                double inb = 0, outb = (double)hb_op_output_elems(op, &s) * 4.0;
                for (int i = 0; i < info->ninputs; i++) inb += (double)hb_op_input_elems(op, &s, i) * 4.0;
                double th = cs->phase[HB_PH_H2D].median, td = cs->phase[HB_PH_D2H].median;
                if (isfinite(th) && info->ninputs > 0 && inb / info->ninputs <= 1048576.0)
                    hv[nh++] = fmax(0, (th - inb / l->h2d_bw) / info->ninputs);
                if (isfinite(td) && outb <= 1048576.0) dv[nd++] = fmax(0, td - outb / l->d2h_bw);
            }
            l->h2d_lat_s = median(hv, nh);
            l->d2h_lat_s = median(dv, nd);
            c->lat_cases[rt][c->dev[d].mem] = nh < nd ? nh : nd;
            free(hv);
            free(dv);
        }
        if (c->route_ok[rt]) any = 1;
        else if (named) {
            *why = HB_PLAN_COSTS_MISSING;
            char head[120];
            snprintf(head, sizeof head, "route %s: the results file lacks ", rn);
            size_t hl = strlen(head);
            if (hl + o < errlen) { memmove(err + hl, err, o + 1); memcpy(err, head, hl); }
            return HB_EINVAL;
        }
    }
    if (!any && c->nmem > 1) {
        *why = HB_PLAN_COSTS_MISSING;
        char head[160];
        snprintf(head, sizeof head, "no transfer route with measured ceilings on every device; the results file lacks ");
        size_t hl = strlen(head);
        if (hl + o < errlen) { memmove(err + hl, err, o + 1); memcpy(err, head, hl); }
        return HB_EINVAL;
    }
    if (err && errlen) err[0] = 0;
    return HB_OK;
}

hb_status hb_plan_costs_build(const hb_run *r, const hb_model *m, const char *backends, const char *routes, hb_plan_costs *c,
                              hb_plan_costs_why *why, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->model = m;
    *why = HB_PLAN_COSTS_BAD;
    hb_status st = pick_devices(r, backends, c, err, errlen);
    if (st != HB_OK) return st;
    int n = m->n, nd = c->ndev;
    c->in = malloc((size_t)n * HB_PLAN_MAXIN * sizeof *c->in);
    c->bytes = malloc(((size_t)n + 1) * sizeof *c->bytes);
    c->cost = malloc((size_t)n * (size_t)nd * sizeof *c->cost);
    c->rank = malloc((size_t)n * (size_t)nd * sizeof *c->rank);
    c->cost_mode = calloc((size_t)n * (size_t)nd, sizeof *c->cost_mode);
    char (*keys)[400] = malloc((size_t)n * sizeof *keys);
    if (!c->in || !c->bytes || !c->cost || !c->rank || !c->cost_mode || !keys) { free(keys); hb_plan_costs_free(c); return HB_ENOMEM; }
    /* the graph: tensor 0 the model's input, tensor i+1 node i's output */
    c->bytes[0] = m->in_bytes;
    for (int i = 0; i < n; i++) {
        const hb_model_node *nd_ = &m->nodes[i];
        c->bytes[i + 1] = nd_->out_bytes;
        for (int k = 0; k < HB_PLAN_MAXIN; k++) {
            int p = k < HB_MAX_INPUTS ? nd_->in[k] : HB_MODEL_NONE;
            c->in[i * HB_PLAN_MAXIN + k] = p == HB_MODEL_INPUT ? 0 : p >= 0 ? p + 1 : -1;
        }
        if (op_key(nd_->c.op, &nd_->c.shape, keys[i], sizeof keys[i]) < 0) {
            snprintf(err, errlen, "model %s: node %s has a shape that is refused", m->name, nd_->label);
            free(keys);
            hb_plan_costs_free(c);
            return HB_EINVAL;
        }
    }
    for (size_t i = 0; i < (size_t)n * (size_t)nd; i++) c->cost[i] = c->rank[i] = NAN;
    char whole[400] = "";
    const char *whole_mode[HB_PLAN_MAXDEV] = {0};
    for (int d = 0; d < nd; d++) c->whole_s[d] = NAN;
    if (m->has_whole && op_key(m->whole.op, &m->whole.shape, whole, sizeof whole) < 0) whole[0] = 0;
    /* one pass over the cases: each ok f32 case of a chosen backend whose op and shape a node has */
    for (size_t k = 0; k < r->ncase_recs; k++) {
        const hb_rec_case *cs = &r->case_recs[k];
        const char *b = cs->backend, *stt = cs->status, *md = cs->mode, *dt = cs->dtype;
        if (!b || !stt || !md || !dt || strcmp(dt, "f32")) continue;
        int d = -1;
        for (int j = 0; j < nd; j++) if (!strcmp(c->dev[j].id, b)) d = j;
        if (d < 0) continue;
        hb_op op;
        hb_shape s;
        char key[400];
        if (record_key(cs, &op, &s, key, sizeof key) < 0) continue;
        int resident = !strcmp(md, "resident"), f32 = !strcmp(md, "f32");
        int ok = !strcmp(stt, "ok");
        double comp = cs->phase[HB_PH_COMPUTE].median, tot = cs->phase[HB_PH_TOTAL].median;
        if (*whole && !strcmp(key, whole) && !strcmp(stt, "ok") && isfinite(tot) && (!strcmp(md, "resident") || !strcmp(md, "f32"))) {
            /* the chain as one case: resident where the backend has it, else f32; the lower median; of
             * its layer as one stream (every step enqueued back to back, measure/chain.c: what a
             * replay's segment measures) where it has one, else of its total (each step waited for) */
            double lm = cs->layer.st.median, t = lm > 0 ? lm : tot;
            int res = !strcmp(md, "resident"), was = whole_mode[d] && !strcmp(whole_mode[d], "resident");
            if ((res && !was) || (res == was && !(c->whole_s[d] <= t))) { c->whole_s[d] = t; whole_mode[d] = md; }
        }
        for (int i = 0; i < n; i++) {
            if (strcmp(keys[i], key)) continue;
            size_t x = (size_t)i * (size_t)nd + (size_t)d;
            if (ok && (resident || f32) && isfinite(comp)) {
                int was_resident = c->cost_mode[x] && !strcmp(c->cost_mode[x], "resident");
                if (resident && !was_resident) { c->cost[x] = comp; c->cost_mode[x] = "resident"; }
                else if (resident == was_resident && !(c->cost[x] <= comp)) { c->cost[x] = comp; c->cost_mode[x] = resident ? "resident" : "f32"; }
            }
            if (hb_routing_counts(md, dt, ok, cs->family, !strcmp(c->dev[d].type, "cpu-ref")) && isfinite(tot) && !(c->rank[x] <= tot))
                c->rank[x] = tot;
        }
    }
    free(keys);
    /* every op on every backend, or the list of what is missing */
    size_t o = 0;
    int nmiss = 0;
    for (int i = 0; i < n; i++) {
        char devs[400] = "";
        size_t dl = 0;
        for (int d = 0; d < nd; d++)
            if (!isfinite(c->cost[(size_t)i * (size_t)nd + (size_t)d]) && dl < sizeof devs)
                dl += (size_t)snprintf(devs + dl, sizeof devs - dl, "%s%s", dl ? ", " : "", c->dev[d].id);
        if (!dl) continue;
        /* one line per missing op and shape, even where several nodes share it */
        int seen = 0;
        for (int j = 0; j < i; j++) {
            if (memcmp(&m->nodes[j].c.shape, &m->nodes[i].c.shape, sizeof m->nodes[i].c.shape) || m->nodes[j].c.op != m->nodes[i].c.op) continue;
            seen = 1;
        }
        if (seen) continue;
        char what[700], sh[256];
        snprintf(what, sizeof what, "%s %s (%s) on %s", hb_op_get(m->nodes[i].c.op)->name, hb_shape_format(m->nodes[i].c.op, &m->nodes[i].c.shape, sh, sizeof sh),
                 m->nodes[i].label, devs);
        if (nmiss < 12) say(err, errlen, &o, "%s%s", nmiss ? "; " : "", what);
        nmiss++;
    }
    if (nmiss) {
        char head[300], tail[200];
        snprintf(head, sizeof head, "%s lacks %d op%s of model %s (no ok dtype-f32 case in mode resident or f32): ", r->path, nmiss, nmiss > 1 ? "s" : "", m->name);
        snprintf(tail, sizeof tail, "%s", nmiss > 12 ? "; and more" : "");
        size_t hl = strlen(head);
        if (hl + o + strlen(tail) < errlen) {
            memmove(err + hl, err, o + 1);
            memcpy(err, head, hl);
            strcat(err, tail);
        }
        *why = HB_PLAN_COSTS_MISSING;
        hb_plan_costs_free(c);
        return HB_EINVAL;
    }
    st = links(r, routes, c, why, err, errlen);
    if (st != HB_OK) hb_plan_costs_free(c);
    return st;
}

hb_plan_problem hb_plan_costs_problem(const hb_plan_costs *c, int route)
{
    hb_plan_problem p = {c->model->n, c->ndev, c->nmem, c->in, c->bytes, c->cost, c->mem, c->link[route < 0 ? 0 : route], c->model->cyclic};
    return p;
}

void hb_plan_costs_free(hb_plan_costs *c)
{
    free(c->in);
    free(c->bytes);
    free(c->cost);
    free(c->rank);
    free((void *)c->cost_mode);
    c->in = NULL;
    c->bytes = c->cost = c->rank = NULL;
    c->cost_mode = NULL;
}

/* ---- the plans ---- */

static int find_dev(const hb_plan_costs *c, const char *name)
{
    for (int d = 0; d < c->ndev; d++) if (!strcmp(c->dev[d].id, name)) return d;
    for (int d = 0; d < c->ndev; d++) if (!strcmp(c->dev[d].type, name)) return d;
    return -1;
}

hb_status hb_plan_seed_devices(const hb_plan_costs *c, const char *ane, int *gpu, int *ane_dev, int *cpu, hb_plan_costs_why *why, char *err,
                               size_t errlen)
{
    static const char *const gpu_chain[] = {"cuda", "opencl", "cpu"};
    *gpu = *cpu = *ane_dev = -1;
    for (int k = 0; k < 3 && *gpu < 0; k++) *gpu = find_dev(c, gpu_chain[k]);
    *cpu = find_dev(c, "cpu");
    for (int d = 0; d < c->ndev && *cpu < 0; d++) if (c->dev[d].host_memory) *cpu = d;
    if (*cpu < 0) {
        *why = HB_PLAN_COSTS_MISSING;
        snprintf(err, errlen, "the seed heuristic's CPU rule needs a backend computing in host memory (cpu): none among the planned backends");
        return HB_EINVAL;
    }
    if (*gpu < 0) *gpu = *cpu;
    *ane_dev = ane ? find_dev(c, ane) : *gpu;
    if (*ane_dev < 0) {
        *why = HB_PLAN_COSTS_BAD;
        snprintf(err, errlen, "--ane-standin %s: not one of the planned backends", ane);
        return HB_EINVAL;
    }
    return HB_OK;
}

void hb_plan_named_free(hb_plan_named *p, int n)
{
    for (int i = 0; p && i < n; i++) {
        free(p[i].dev);
        free((void *)p[i].why);
        hb_plan_result_free(&p[i].res);
    }
    free(p);
}

hb_status hb_plan_costs_plans(const hb_plan_costs *c, int route, const char *ane, hb_plan_named **out, int *n, hb_plan_costs_why *why, char *err,
                              size_t errlen)
{
    const hb_model *m = c->model;
    int nops = m->n, np = c->ndev + 3;
    hb_plan_problem pr = hb_plan_costs_problem(c, route);
    *out = NULL;
    *n = 0;
    *why = HB_PLAN_COSTS_BAD;
    int gpu, anes, cpu;
    hb_status st = hb_plan_seed_devices(c, ane, &gpu, &anes, &cpu, why, err, errlen);
    if (st != HB_OK) return st;
    hb_plan_named *p = calloc((size_t)np, sizeof *p);
    if (!p) return HB_ENOMEM;
    for (int k = 0; k < np; k++) {
        p[k].dev = calloc((size_t)nops, sizeof *p[k].dev);
        p[k].why = calloc((size_t)nops, sizeof *p[k].why);
        if (!p[k].dev || !p[k].why) { hb_plan_named_free(p, np); return HB_ENOMEM; }
    }
    for (int d = 0; d < c->ndev; d++) {
        snprintf(p[d].name, sizeof p[d].name, "single: %s", c->dev[d].id);
        p[d].kind = "single";
        for (int i = 0; i < nops; i++) p[d].dev[i] = d;
    }
    hb_plan_named *h = &p[c->ndev], *g = &p[c->ndev + 1], *o = &p[c->ndev + 2];
    snprintf(h->name, sizeof h->name, "seed heuristic");
    h->kind = "heuristic";
    for (int i = 0; i < nops; i++) {
        const hb_case *cs = &m->nodes[i].c;
        const hb_op_info *info = hb_op_get(cs->op);
        double size = (double)hb_op_output_elems(cs->op, &cs->shape);
        for (int k = 0; k < info->ninputs; k++) size = fmax(size, (double)hb_op_input_elems(cs->op, &cs->shape, k));
        hb_seed_role role = hb_plan_seed_role(cs->op, size, &h->why[i]);
        h->dev[i] = role == HB_SEED_GPU ? gpu : role == HB_SEED_ANE ? anes : cpu;
    }
    snprintf(g->name, sizeof g->name, "greedy (routing.json)");
    g->kind = "greedy";
    hb_plan_greedy(&pr, c->rank, g->dev);
    for (int i = 0; i < nops; i++)
        if (g->dev[i] < 0) {
            g->dev[i] = hb_routing_best(c->cost + (size_t)i * (size_t)c->ndev, NULL, c->ndev);
            g->why[i] = "no mode-f32 case on any backend (no routing entry): its lowest compute cost";
        }
    for (int k = 0; k < c->ndev + 2; k++) {
        st = hb_plan_evaluate(&pr, p[k].dev, &p[k].res, err, errlen);
        if (st != HB_OK) { hb_plan_named_free(p, np); return st; }
    }
    snprintf(o->name, sizeof o->name, "optimal");
    o->kind = "optimal";
    st = hb_plan_optimal(&pr, &o->res, err, errlen);
    if (st != HB_OK) { hb_plan_named_free(p, np); return st; }
    for (int i = 0; i < nops; i++) o->dev[i] = o->res.steps[i].dev;
    *out = p;
    *n = np;
    return HB_OK;
}
