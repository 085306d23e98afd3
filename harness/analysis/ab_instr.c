/* ab_instr.c - the instruction-count rule of the merge gate (ab_instr.h). */
#include "analysis/ab_instr.h"
#include "core/rstats.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *hb_instr_verdict_name(hb_instr_verdict v)
{
    static const char *const names[] = {"unchanged", "regression", "improvement", "noisy", "missing"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}

/* Median and repeat spread of the finite positive values of x[n] (copied); 0 when there are none. */
static size_t summarize(const double *x, size_t n, double *med, double *spread)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; v && i < n; i++)
        if (isfinite(x[i]) && x[i] > 0) v[k++] = x[i];
    *med = *spread = NAN;
    if (k) {
        hb_rs_sort(v, k);
        *med = hb_rs_median_sorted(v, k);
        *spread = (v[k - 1] - v[0]) / *med;
    }
    free(v);
    return k;
}

hb_instr_verdict hb_instr_decide(const double *base, size_t nb, const double *cur, size_t nc, double t, double *ratio,
                                 double *spread)
{
    double mb, mc, sb, sc;
    size_t kb = summarize(base, nb, &mb, &sb), kc = summarize(cur, nc, &mc, &sc);
    double r = kb && kc ? mc / mb : (double)NAN, s = kb && kc ? fmax(sb, sc) : (double)NAN;
    if (ratio) *ratio = r;
    if (spread) *spread = s;
    if (!kb || !kc) return HB_INSTR_MISSING;
    if (!(s < t)) return HB_INSTR_NOISY;
    if (r > 1 + t) return HB_INSTR_REGRESSION;
    if (r < 1 / (1 + t)) return HB_INSTR_IMPROVEMENT;
    return HB_INSTR_UNCHANGED;
}

/* A growing list of case keys with their per-round counts of each side (NAN: not counted). */
typedef struct slot { char key[256]; double *v[2]; } slot;

static int slot_cmp(const void *a, const void *b) { return strcmp(((const slot *)a)->key, ((const slot *)b)->key); }

static slot *slot_get(slot **s, size_t *n, size_t *cap, const char *key, int nrounds)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*s)[i].key, key)) return &(*s)[i];
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        slot *t = realloc(*s, nc * sizeof *t);
        if (!t) return NULL;
        *s = t, *cap = nc;
    }
    slot *x = &(*s)[(*n)++];
    snprintf(x->key, sizeof x->key, "%s", key);
    for (int side = 0; side < 2; side++) {
        x->v[side] = malloc((size_t)nrounds * sizeof(double));
        if (!x->v[side]) return NULL;
        for (int r = 0; r < nrounds; r++) x->v[side][r] = NAN;
    }
    return x;
}

hb_status hb_instr_gate(const hb_run *const *base, const hb_run *const *cur, int nrounds, double t,
                        hb_instr_case **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL, *n = 0;
    if (nrounds < 1 || !(t > 0)) { snprintf(err, errlen, "instruction gate: %d rounds, threshold %g", nrounds, t); return HB_EINVAL; }
    slot *s = NULL;
    size_t ns = 0, cap = 0;
    hb_status st = HB_OK;
    for (int side = 0; side < 2 && st == HB_OK; side++)
        for (int r = 0; r < nrounds && st == HB_OK; r++) {
            const hb_run *run = side ? cur[r] : base[r];
            for (size_t i = 0; i < run->ncase_recs; i++) {
                const hb_rec_case *rec = &run->case_recs[i];
                const char *key = rec->key;
                if (!key || !rec->has_instructions_per_call) continue;
                slot *x = slot_get(&s, &ns, &cap, key, nrounds);
                if (!x) { st = HB_ENOMEM; break; }
                /* a null per_call reads as 0, as json_number_value read it */
                x->v[side][r] = isnan(rec->instructions_per_call) ? 0 : rec->instructions_per_call;
            }
        }
    hb_instr_case *c = st == HB_OK ? calloc(ns ? ns : 1, sizeof *c) : NULL;
    if (st == HB_OK && !c) st = HB_ENOMEM;
    if (st == HB_OK) {
        qsort(s, ns, sizeof *s, slot_cmp);
        for (size_t i = 0; i < ns; i++) {
            memcpy(c[i].key, s[i].key, sizeof c[i].key);
            double sp;
            for (int r = 0; r < nrounds; r++) c[i].nb += isfinite(s[i].v[0][r]), c[i].nc += isfinite(s[i].v[1][r]);
            summarize(s[i].v[0], (size_t)nrounds, &c[i].med_base, &sp);
            summarize(s[i].v[1], (size_t)nrounds, &c[i].med_cur, &sp);
            c[i].verdict = hb_instr_decide(s[i].v[0], (size_t)nrounds, s[i].v[1], (size_t)nrounds, t, &c[i].ratio, &c[i].spread);
        }
        *out = c, *n = ns;
    }
    for (size_t i = 0; i < ns; i++) free(s[i].v[0]), free(s[i].v[1]);
    free(s);
    return st;
}
