/*
 * plan.c - evaluating device plans and finding the optimal one under a cost table (plan.h).
 * Pure: no results file, no I/O; the tests drive it with synthetic tables (tests/test_plan.c).
 */
#include "analysis/plan.h"
#include "analysis/routing.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hb_seed_role hb_plan_seed_role(hb_op op, double size, const char **rule)
{
    const char *r;
    hb_seed_role role;
    if (op == HB_OP_MATMUL && size > HB_SEED_MATMUL_GPU_ABOVE_ELEMS) { role = HB_SEED_GPU; r = "matmul > 10000 elements -> GPU"; }
    else if (op == HB_OP_CONV2D) { role = HB_SEED_ANE; r = "conv2d -> Neural Engine"; }
    else if (hb_op_get(op) && hb_op_get(op)->activation) { role = HB_SEED_ANE; r = "activation -> Neural Engine"; }
    else { role = HB_SEED_CPU; r = op == HB_OP_MATMUL ? "matmul <= 10000 elements -> CPU" : "other ops -> CPU"; }
    if (rule) *rule = r;
    return role;
}

/* ---- copies ---- */

/* Time of copying b bytes from memory `from` to memory `to` (through host memory between two devices). */
static double copy_s(const hb_plan_problem *p, int from, int to, double b)
{
    if (from == to) return 0;
    double t = 0;
    if (from != 0) t += p->link[from].d2h_lat_s + b / p->link[from].d2h_bw;
    if (to != 0) t += p->link[to].h2d_lat_s + b / p->link[to].h2d_bw;
    return t;
}

/* The cheapest copy of tensor t, held in the memories of mask, into memory m. */
static double cheapest_copy(const hb_plan_problem *p, unsigned mask, int m, double b)
{
    double best = HUGE_VAL;
    for (int s = 0; s < p->nmem; s++)
        if (mask & (1u << s)) {
            double c = copy_s(p, s, m, b);
            if (c < best) best = c;
        }
    return best;
}

/* Run op i on device d with the tensors' memories in mask[] (nops + 1 entries): adds the copies of its
 * inputs into d's memory, marks them held there, places its output. Fills *st; returns the step's
 * seconds (+inf when the op has no cost on d). */
static double step(const hb_plan_problem *p, int i, int d, unsigned char *mask, hb_plan_step *st)
{
    int m = p->mem[d];
    double c = p->cost[(size_t)i * (size_t)p->ndev + (size_t)d];
    st->dev = d;
    st->compute_s = c;
    st->xfer_s = 0;
    st->xfer_bytes = 0;
    for (int k = 0; k < HB_PLAN_MAXIN; k++) {
        int t = p->in[i * HB_PLAN_MAXIN + k];
        if (t < 0 || (mask[t] & (1u << m))) continue; /* none, or already there (also a repeated input) */
        st->xfer_s += cheapest_copy(p, mask[t], m, p->bytes[t]);
        st->xfer_bytes += p->bytes[t];
        mask[t] |= (unsigned char)(1u << m);
    }
    mask[i + 1] = (unsigned char)(1u << m);
    return isfinite(c) ? c + st->xfer_s : HUGE_VAL;
}

/* ---- checks ---- */

/* last[t]: the last op reading tensor t (-1: none; the model's output counts as read after the end). */
static void last_use(const hb_plan_problem *p, int *last)
{
    for (int t = 0; t <= p->nops; t++) last[t] = -1;
    for (int i = 0; i < p->nops; i++)
        for (int k = 0; k < HB_PLAN_MAXIN; k++) {
            int t = p->in[i * HB_PLAN_MAXIN + k];
            if (t >= 0) last[t] = i;
        }
    last[p->nops] = p->nops;
}

hb_status hb_plan_check(const hb_plan_problem *p, char *err, size_t errlen)
{
    if (p->nops < 1 || p->ndev < 1 || p->nmem < 1 || p->nmem > HB_PLAN_MAXMEM) {
        snprintf(err, errlen, "plan: %d ops, %d devices, %d memories (need >= 1 each, memories <= %d)", p->nops, p->ndev, p->nmem, HB_PLAN_MAXMEM);
        return HB_EINVAL;
    }
    for (int d = 0; d < p->ndev; d++)
        if (p->mem[d] < 0 || p->mem[d] >= p->nmem) { snprintf(err, errlen, "plan: device %d has memory %d of %d", d, p->mem[d], p->nmem); return HB_EINVAL; }
    for (int s = 1; s < p->nmem; s++)
        if (!(p->link[s].h2d_bw > 0) || !(p->link[s].d2h_bw > 0) || !(p->link[s].h2d_lat_s >= 0) || !(p->link[s].d2h_lat_s >= 0)) {
            snprintf(err, errlen, "plan: memory %d has no copy cost (bandwidth %g/%g, latency %g/%g)", s, p->link[s].h2d_bw, p->link[s].d2h_bw,
                     p->link[s].h2d_lat_s, p->link[s].d2h_lat_s);
            return HB_EINVAL;
        }
    for (int i = 0; i < p->nops; i++)
        for (int k = 0; k < HB_PLAN_MAXIN; k++) {
            int t = p->in[i * HB_PLAN_MAXIN + k];
            if (t > i) { snprintf(err, errlen, "plan: op %d reads tensor %d, made after it", i, t); return HB_EINVAL; }
        }
    int *last = malloc(((size_t)p->nops + 1) * sizeof *last);
    if (!last) return HB_ENOMEM;
    last_use(p, last);
    for (int i = 0; i < p->nops; i++) {
        int live = 0;
        for (int t = 0; t <= i + 1; t++) live += last[t] > i;
        if (live > HB_PLAN_MAXLIVE) {
            free(last);
            snprintf(err, errlen, "plan: %d tensors live after op %d (at most %d)", live, i, HB_PLAN_MAXLIVE);
            return HB_EINVAL;
        }
    }
    free(last);
    return HB_OK;
}

/* ---- evaluating one plan ---- */

/* Evaluate dev[] with the input starting in memory `start`; fills r->steps and the sums. */
static double eval_from(const hb_plan_problem *p, const int *dev, int start, unsigned char *mask, hb_plan_result *r)
{
    memset(mask, 0, (size_t)p->nops + 1);
    mask[0] = (unsigned char)(1u << start);
    r->start_mem = start;
    r->compute_s = r->xfer_s = r->xfer_bytes = 0;
    r->ncopies = 0;
    double total = 0;
    for (int i = 0; i < p->nops; i++) {
        total += step(p, i, dev[i], mask, &r->steps[i]);
        r->compute_s += r->steps[i].compute_s;
        r->xfer_s += r->steps[i].xfer_s;
        r->xfer_bytes += r->steps[i].xfer_bytes;
    }
    int end = p->cyclic ? start : 0;
    r->end_xfer_s = r->end_xfer_bytes = 0;
    if (!(mask[p->nops] & (1u << end))) {
        r->end_xfer_s = cheapest_copy(p, mask[p->nops], end, p->bytes[p->nops]);
        r->end_xfer_bytes = p->bytes[p->nops];
    }
    r->xfer_s += r->end_xfer_s;
    r->xfer_bytes += r->end_xfer_bytes;
    total += r->end_xfer_s;
    r->total_s = total;
    return total;
}

/* Copies a plan makes: an op's inputs that were not in its memory, and the end's. */
static int count_copies(const hb_plan_problem *p, const hb_plan_result *r)
{
    unsigned char *mask = calloc((size_t)p->nops + 1, 1);
    if (!mask) return -1;
    int n = 0;
    mask[0] = (unsigned char)(1u << r->start_mem);
    for (int i = 0; i < p->nops; i++) {
        int m = p->mem[r->steps[i].dev];
        for (int k = 0; k < HB_PLAN_MAXIN; k++) {
            int t = p->in[i * HB_PLAN_MAXIN + k];
            if (t >= 0 && !(mask[t] & (1u << m))) { n++; mask[t] |= (unsigned char)(1u << m); }
        }
        mask[i + 1] = (unsigned char)(1u << m);
    }
    free(mask);
    return n + (r->end_xfer_bytes > 0);
}

static hb_status result_alloc(const hb_plan_problem *p, hb_plan_result *r)
{
    memset(r, 0, sizeof *r);
    r->steps = calloc((size_t)p->nops, sizeof *r->steps);
    r->nops = p->nops;
    return r->steps ? HB_OK : HB_ENOMEM;
}

hb_status hb_plan_evaluate(const hb_plan_problem *p, const int *dev, hb_plan_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    hb_status st = hb_plan_check(p, err, errlen);
    if (st != HB_OK) return st;
    for (int i = 0; i < p->nops; i++)
        if (dev[i] < 0 || dev[i] >= p->ndev) { snprintf(err, errlen, "plan: op %d on device %d of %d", i, dev[i], p->ndev); return HB_EINVAL; }
    if ((st = result_alloc(p, r)) != HB_OK) return st;
    hb_plan_result tmp;
    unsigned char *mask = malloc((size_t)p->nops + 1);
    if (!mask || result_alloc(p, &tmp) != HB_OK) { free(mask); hb_plan_result_free(r); return HB_ENOMEM; }
    /* a repeated unit starts where it costs least; a whole network in host memory */
    double best = HUGE_VAL;
    int nstart = p->cyclic ? p->nmem : 1;
    for (int s = 0; s < nstart; s++) {
        double t = eval_from(p, dev, s, mask, &tmp);
        if (s == 0 || t < best) {
            best = t;
            hb_plan_step *keep = r->steps;
            *r = tmp;
            r->steps = keep;
            memcpy(r->steps, tmp.steps, (size_t)p->nops * sizeof *r->steps);
        }
    }
    free(mask);
    hb_plan_result_free(&tmp);
    r->ncopies = count_copies(p, r);
    if (!isfinite(r->total_s))
        for (int i = 0; i < p->nops; i++)
            if (!isfinite(r->steps[i].compute_s)) { snprintf(err, errlen, "plan: op %d has no cost on device %d", i, dev[i]); break; }
    return HB_OK;
}

/* ---- the optimal plan: dynamic programming over the ops ---- */

/* One state of a layer: the memories of the live tensors (8 bits each, in tensor order), its cost
 * so far, the state it came from and the device of the op that led to it. */
typedef struct dp_state { uint64_t key; double cost; int prev; int dev; } dp_state;

typedef struct dp_layer {
    dp_state *s;
    int n, cap;
    int *slot; /* open addressing: index into s, -1 empty */
    int nslot;
} dp_layer;

static void layer_free(dp_layer *l) { free(l->s); free(l->slot); memset(l, 0, sizeof *l); }

static uint64_t hash64(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
    return x;
}

static int layer_rehash(dp_layer *l, int nslot)
{
    int *slot = malloc((size_t)nslot * sizeof *slot);
    if (!slot) return -1;
    for (int i = 0; i < nslot; i++) slot[i] = -1;
    for (int i = 0; i < l->n; i++) {
        size_t h = (size_t)(hash64(l->s[i].key) & (uint64_t)(nslot - 1));
        while (slot[h] >= 0) h = (h + 1) & (size_t)(nslot - 1);
        slot[h] = i;
    }
    free(l->slot);
    l->slot = slot;
    l->nslot = nslot;
    return 0;
}

/* Keep (key, cost) in the layer when it is new or cheaper. Returns -1 on ENOMEM. */
static int layer_offer(dp_layer *l, uint64_t key, double cost, int prev, int dev)
{
    if (!l->slot && layer_rehash(l, 64) < 0) return -1;
    size_t h = (size_t)(hash64(key) & (uint64_t)(l->nslot - 1));
    while (l->slot[h] >= 0) {
        dp_state *s = &l->s[l->slot[h]];
        if (s->key == key) {
            if (cost < s->cost) { s->cost = cost; s->prev = prev; s->dev = dev; }
            return 0;
        }
        h = (h + 1) & (size_t)(l->nslot - 1);
    }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        dp_state *ns = realloc(l->s, (size_t)cap * sizeof *ns);
        if (!ns) return -1;
        l->s = ns;
        l->cap = cap;
    }
    l->s[l->n] = (dp_state){key, cost, prev, dev};
    l->slot[h] = l->n++;
    if (2 * l->n > l->nslot && layer_rehash(l, 2 * l->nslot) < 0) return -1;
    return 0;
}

/* live[i][...]: the tensors live after op i (i = -1: before the first op), in tensor order. */
static int live_after(const hb_plan_problem *p, const int *last, int i, int *out)
{
    int n = 0;
    for (int t = 0; t <= i + 1 && t <= p->nops; t++)
        if (last[t] > i) out[n++] = t;
    return n;
}

static uint64_t pack(const unsigned char *mask, const int *live, int nlive)
{
    uint64_t k = 0;
    for (int j = 0; j < nlive; j++) k |= (uint64_t)mask[live[j]] << (8 * j);
    return k;
}

static void unpack(uint64_t k, unsigned char *mask, const int *live, int nlive)
{
    for (int j = 0; j < nlive; j++) mask[live[j]] = (unsigned char)(k >> (8 * j));
}

/* The cheapest plan with the input starting in memory `start`: its devices in dev[], its cost
 * returned (+inf when none is possible; *oom set on ENOMEM). */
static double dp_from(const hb_plan_problem *p, const int *last, int start, int *dev, int *oom)
{
    int n = p->nops;
    dp_layer *L = calloc((size_t)n + 1, sizeof *L);
    unsigned char *mask = calloc((size_t)n + 1, 1);
    int livebuf[2][HB_PLAN_MAXLIVE + 2];
    double best = HUGE_VAL;
    if (!L || !mask) { *oom = 1; free(L); free(mask); return HUGE_VAL; }
    int *lb = livebuf[0], *la = livebuf[1];
    int nb = live_after(p, last, -1, lb);
    memset(mask, 0, (size_t)n + 1);
    mask[0] = (unsigned char)(1u << start);
    if (layer_offer(&L[0], pack(mask, lb, nb), 0, -1, -1) < 0) goto oom;
    for (int i = 0; i < n; i++) {
        int na = live_after(p, last, i, la);
        for (int si = 0; si < L[i].n; si++) {
            dp_state cur = L[i].s[si];
            for (int d = 0; d < p->ndev; d++) {
                if (!isfinite(p->cost[(size_t)i * (size_t)p->ndev + (size_t)d])) continue;
                memset(mask, 0, (size_t)n + 1);
                unpack(cur.key, mask, lb, nb);
                hb_plan_step st;
                double c = step(p, i, d, mask, &st);
                if (!isfinite(c)) continue;
                if (layer_offer(&L[i + 1], pack(mask, la, na), cur.cost + c, si, d) < 0) goto oom;
            }
        }
        int *t = lb; lb = la; la = t;
        nb = na;
    }
    /* the end: the output back to the start's memory (cyclic) or host memory */
    int bi = -1, end = p->cyclic ? start : 0;
    for (int si = 0; si < L[n].n; si++) {
        memset(mask, 0, (size_t)n + 1);
        unpack(L[n].s[si].key, mask, lb, nb);
        double c = L[n].s[si].cost;
        if (!(mask[n] & (1u << end))) c += cheapest_copy(p, mask[n], end, p->bytes[n]);
        if (c < best) { best = c; bi = si; }
    }
    for (int i = n; i > 0 && bi >= 0; i--) {
        dev[i - 1] = L[i].s[bi].dev;
        bi = L[i].s[bi].prev;
    }
    for (int i = 0; i <= n; i++) layer_free(&L[i]);
    free(L);
    free(mask);
    return best;
oom:
    for (int i = 0; i <= n; i++) layer_free(&L[i]);
    free(L);
    free(mask);
    *oom = 1;
    return HUGE_VAL;
}

hb_status hb_plan_optimal(const hb_plan_problem *p, hb_plan_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    hb_status st = hb_plan_check(p, err, errlen);
    if (st != HB_OK) return st;
    for (int i = 0; i < p->nops; i++) {
        int any = 0;
        for (int d = 0; d < p->ndev; d++) any |= isfinite(p->cost[(size_t)i * (size_t)p->ndev + (size_t)d]) != 0;
        if (!any) { snprintf(err, errlen, "plan: op %d has no cost on any device", i); return HB_EINVAL; }
    }
    int *last = malloc(((size_t)p->nops + 1) * sizeof *last);
    int *dev = malloc((size_t)p->nops * sizeof *dev), *bestdev = malloc((size_t)p->nops * sizeof *bestdev);
    if (!last || !dev || !bestdev) { free(last); free(dev); free(bestdev); return HB_ENOMEM; }
    last_use(p, last);
    double best = HUGE_VAL;
    int oom = 0, nstart = p->cyclic ? p->nmem : 1;
    for (int s = 0; s < nstart && !oom; s++) {
        double c = dp_from(p, last, s, dev, &oom);
        if (!oom && c < best) { best = c; memcpy(bestdev, dev, (size_t)p->nops * sizeof *dev); }
    }
    free(last);
    free(dev);
    if (oom) { free(bestdev); return HB_ENOMEM; }
    if (!isfinite(best)) { free(bestdev); snprintf(err, errlen, "plan: no plan has a finite cost"); return HB_EINVAL; }
    st = hb_plan_evaluate(p, bestdev, r, err, errlen);
    free(bestdev);
    return st;
}

int hb_plan_greedy(const hb_plan_problem *p, const double *rank, int *dev)
{
    int none = 0;
    for (int i = 0; i < p->nops; i++) {
        dev[i] = hb_routing_best(rank + (size_t)i * (size_t)p->ndev, NULL, p->ndev);
        none += dev[i] < 0;
    }
    return none;
}

void hb_plan_result_free(hb_plan_result *r)
{
    free(r->steps);
    r->steps = NULL;
}
