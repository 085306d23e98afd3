/* ab.c - the interleaved A/B gate's decision (analysis/ab.h, docs/compare.md "hybench ab"): cases
 * matched across the rounds of two builds by key, their per-round paired log ratios, the Wilcoxon
 * signed-rank test, the bootstrap CI of the median ratio, Benjamini-Hochberg, and the verdicts. */
#include "analysis/ab.h"
#include "analysis/mde.h"
#include "core/rstats.h"
#include "core/strmap.h"
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#define AB_MAXR 4096 /* rounds (cmd_ab allows 64) */
/* Fewest ok cases of a backend for its whole-run shift: with few cases the median of their ratios is
 * itself noisy (4 cases: the normalised spread was 8.4% against 3.7% raw in tests/check_ab.sh's
 * planted run on the loaded VM; 34 cases: 40% against 50%) */
#define AB_MIN_NORM 10

void hb_ab_options_default(hb_ab_options *o)
{
    memset(o, 0, sizeof *o);
    hb_cmp_options_default(&o->cmp);
    o->cmp.threshold = 0.02;
    o->cmp.rule_point = 0; /* compare's rule: the whole CI beyond 1 + t (docs/compare.md, P10b/P10c) */
    o->cmp.min_samples = 1;
    o->min_rounds = 8;
    o->normalize = 1;
    o->whole_run = 1;
    o->round_quantile = 0.5;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *x, size_t n) /* sorts x */
{
    qsort(x, n, sizeof *x, cmp_dbl);
    return hb_rs_median_sorted(x, n);
}

/* ---- Wilcoxon signed-rank ---- */
typedef struct absrank { double a; int pos; } absrank;
static int cmp_absrank(const void *x, const void *y)
{
    double a = ((const absrank *)x)->a, b = ((const absrank *)y)->a;
    return (a > b) - (a < b);
}

double hb_ab_signed_rank_p(const double *d, size_t n, double *wplus)
{
    if (wplus) *wplus = NAN;
    absrank *v = malloc((n + 1) * sizeof *v);
    if (!v) return NAN;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(d[i])) { free(v); return NAN; }
        if (d[i] != 0) { v[m].a = fabs(d[i]); v[m].pos = d[i] > 0; m++; }
    }
    if (m == 0) { free(v); if (wplus) *wplus = 0; return 1; }
    qsort(v, m, sizeof *v, cmp_absrank);
    double w = 0, tie = 0;
    int ties = 0;
    for (size_t i = 0; i < m;) {
        size_t j = i;
        while (j + 1 < m && v[j + 1].a == v[i].a) j++;
        double r = 0.5 * (double)(i + 1 + j + 1); /* average rank of positions i..j (1-based) */
        double t = (double)(j - i + 1);
        if (t > 1) { ties = 1; tie += t * t * t - t; }
        for (size_t k = i; k <= j; k++) if (v[k].pos) w += r;
        i = j + 1;
    }
    free(v);
    if (wplus) *wplus = w;
    double dm = (double)m, mean = dm * (dm + 1) / 4;
    if (!ties && m <= 25) {
        /* exact: counts of sign patterns by rank sum, c[s] over s in 0..m(m+1)/2 */
        size_t smax = m * (m + 1) / 2;
        double *c = calloc(smax + 1, sizeof *c);
        if (!c) return NAN;
        c[0] = 1;
        for (size_t r = 1; r <= m; r++)
            for (size_t s = smax; s >= r; s--) c[s] += c[s - r];
        double total = ldexp(1.0, (int)m), lo = 0, hi = 0;
        size_t wi = (size_t)llround(w);
        for (size_t s = 0; s <= smax; s++) {
            if (s <= wi) lo += c[s];
            if (s >= wi) hi += c[s];
        }
        free(c);
        double p = 2 * fmin(lo, hi) / total;
        return p > 1 ? 1 : p;
    }
    double var = dm * (dm + 1) * (2 * dm + 1) / 24 - tie / 48;
    if (!(var > 0)) return 1;
    double z = (fabs(w - mean) - 0.5) / sqrt(var);
    if (z < 0) z = 0;
    double p = 2 * hb_rs_normal_sf(z);
    return p > 1 ? 1 : p;
}

hb_status hb_ab_bootstrap_median_ratio(const double *d, size_t n, int resamples, double conf, uint64_t seed,
                                       double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (!d || n == 0 || resamples < 1 || !(conf > 0 && conf < 1)) return HB_EINVAL;
    double *rep = malloc((size_t)resamples * sizeof *rep), *x = malloc(n * sizeof *x);
    if (!rep || !x) { free(rep); free(x); return HB_ENOMEM; }
    hb_rng rng;
    hb_rng_seed(&rng, seed);
    for (int b = 0; b < resamples; b++) {
        for (size_t i = 0; i < n; i++) {
            size_t k = (size_t)(hb_rng_uniform(&rng) * (double)n);
            x[i] = d[k < n ? k : n - 1];
        }
        rep[b] = median_of(x, n);
    }
    qsort(rep, (size_t)resamples, sizeof *rep, cmp_dbl);
    *lo = exp(hb_rs_quantile_sorted(rep, (size_t)resamples, (1 - conf) / 2));
    *hi = exp(hb_rs_quantile_sorted(rep, (size_t)resamples, (1 + conf) / 2));
    free(rep);
    free(x);
    return HB_OK;
}

/* ---- matching across rounds ---- */

/* The statistic of one round: the quantile g_round_q (0.5: the median; 0: the minimum) of every sample
 * of rec's samples.<metric> (type 7); phases.<metric>.median when the record has no samples; NAN when
 * neither. *ns gets the sample count. Set from hb_ab_options.round_quantile by each hb_ab_decide. */
static _Thread_local double g_round_q = 0.5;
static double round_median(const hb_rec_case *rec, const char *metric, size_t *ns)
{
    int ph = hb_rec_phase_index(metric);
    const hb_rec_nums *a = ph >= 0 ? &rec->samples[ph] : NULL;
    size_t m = a ? a->n : 0, k = 0;
    *ns = 0;
    if (m == 0) return ph >= 0 ? rec->phase[ph].median : (double)NAN;
    double *x = malloc(m * sizeof *x);
    if (!x) return NAN;
    for (size_t i = 0; i < m; i++) {
        double v = a->v[i]; /* NaN: not a number in the record */
        if (isfinite(v) && v >= 0) x[k++] = v;
    }
    *ns = k;
    double med = NAN;
    if (k) {
        qsort(x, k, sizeof *x, cmp_dbl);
        med = g_round_q == 0.5 ? hb_rs_median_sorted(x, k) : hb_rs_quantile_sorted(x, k, g_round_q);
    }
    free(x);
    return med;
}

/* The keyed case records of a run: keys[i] the key of case_recs[at[i]], a key repeated in the file
 * suffixed "#2", "#3" in file order (as compare.c matches them); map: key -> i. */
typedef struct keyed_run {
    const hb_run *r;
    char (*keys)[256];
    size_t *at;
    size_t n;
    hb_strmap map;
} keyed_run;

static void keyed_free(keyed_run *k)
{
    if (!k) return;
    free(k->keys);
    free(k->at);
    hb_strmap_free(&k->map);
    memset(k, 0, sizeof *k);
}

/* Fill k for run r. HB_OK or HB_ENOMEM (k then empty). */
static hb_status keyed(const hb_run *r, keyed_run *k)
{
    memset(k, 0, sizeof *k);
    k->r = r;
    size_t m = r->ncase_recs;
    k->keys = malloc((m ? m : 1) * sizeof *k->keys);
    k->at = malloc((m ? m : 1) * sizeof *k->at);
    if (!k->keys || !k->at) { keyed_free(k); return HB_ENOMEM; }
    for (size_t i = 0; i < m; i++) {
        const char *key = r->case_recs[i].key;
        if (!key) continue;
        char *kk = k->keys[k->n];
        snprintf(kk, 256, "%s", key);
        for (int rep = 2; hb_strmap_has(&k->map, kk); rep++) snprintf(kk, 256, "%.240s#%d", key, rep);
        if (hb_strmap_set(&k->map, kk, k->n) != HB_OK) { keyed_free(k); return HB_ENOMEM; }
        k->at[k->n++] = i;
    }
    return HB_OK;
}

/* The index into k->r's records of the case keyed key, or SIZE_MAX. */
static size_t keyed_index(const keyed_run *k, const char *key)
{
    size_t i = hb_strmap_get(&k->map, key, SIZE_MAX);
    return i == SIZE_MAX ? SIZE_MAX : k->at[i];
}

/* The case keyed key in k, or NULL. */
static const hb_rec_case *keyed_get(const keyed_run *k, const char *key)
{
    size_t i = keyed_index(k, key);
    return i == SIZE_MAX ? NULL : &k->r->case_recs[i];
}

/* 1 when run r measured a subset of the case list by key (its meta options.cases_from). */
static int round_subset(const hb_run *r)
{
    return r->meta_rec && r->meta_rec->options.cases_from != NULL;
}

static int status_is(const char *s, const char *name) { return s && !strcmp(s, name); }

/* The worse of two statuses for a side: wrong > crashed > other non-ok > ok. */
static int status_rank(const char *s)
{
    if (status_is(s, "wrong")) return 3;
    if (status_is(s, "crashed")) return 2;
    if (status_is(s, "ok")) return 0;
    return 1;
}

typedef struct ab_work {
    const hb_rec_case *brec[2]; /* representative record per side (worst status, first seen) */
    int missing_cur;       /* a round of BASE has it, the same round of CUR does not */
    int present[2];        /* rounds in which the side has the key */
} ab_work;

static int cmp_case_key(const void *a, const void *b)
{
    return strcmp(((const hb_cmp_case *)a)->key, ((const hb_cmp_case *)b)->key);
}

hb_status hb_ab_decide(const hb_run *const *base, const hb_run *const *cur, int nrounds, const hb_ab_options *ao,
                       hb_cmp_result *res, size_t *undecided, char *err, size_t errlen)
{
    const hb_cmp_options *o = &ao->cmp;
    g_round_q = ao->round_quantile >= 0 && ao->round_quantile <= 1 ? ao->round_quantile : 0.5;
    struct timespec ts0;
    clock_gettime(CLOCK_MONOTONIC, &ts0);
    memset(res, 0, sizeof *res);
    res->shift = NAN;
    res->noise_max = NAN;
    if (undecided) *undecided = 0;
    if (nrounds < 1) { snprintf(err, errlen, "no round to decide from"); return HB_EINVAL; }
    if (!o->metric || (strcmp(o->metric, "total") && strcmp(o->metric, "compute")) || !(o->alpha > 0 && o->alpha < 1) ||
        !(o->confidence > 0 && o->confidence < 1) || o->resamples < 100 || o->resamples > 1000000 ||
        !(o->threshold >= 0)) {
        snprintf(err, errlen, "metric total|compute, alpha and confidence in (0,1), bootstrap in [100, 1e6], threshold >= 0");
        return HB_EINVAL;
    }
    hb_status st = HB_ENOMEM;
    keyed_run *kb = calloc((size_t)nrounds, sizeof *kb), *kc = calloc((size_t)nrounds, sizeof *kc);
    hb_strmap index = {0};           /* key -> index into cases */
    hb_cmp_case *cs = NULL;
    ab_work *w = NULL;
    double *d = NULL, *mb = NULL, *mc = NULL, *pv = NULL, *qv = NULL, *ratios = NULL, *D = NULL, *shift = NULL, *col = NULL;
    size_t n = 0, cap = 0;
    if (!kb || !kc) goto out;
    for (int r = 0; r < nrounds; r++)
        if (keyed(base[r], &kb[r]) != HB_OK || keyed(cur[r], &kc[r]) != HB_OK) goto out;
    /* the union of keys over every round and both sides */
    for (int side = 0; side < 2; side++)
        for (int r = 0; r < nrounds; r++) {
            const keyed_run *kr = side ? &kc[r] : &kb[r];
            for (size_t e = 0; e < kr->n; e++) {
                const char *k = kr->keys[e];
                const hb_rec_case *rec = &kr->r->case_recs[kr->at[e]];
                size_t i = hb_strmap_get(&index, k, SIZE_MAX);
                if (i == SIZE_MAX) {
                    if (n == cap) {
                        size_t nc = cap ? 2 * cap : 256;
                        hb_cmp_case *c2 = realloc(cs, nc * sizeof *cs);
                        ab_work *w2 = realloc(w, nc * sizeof *w);
                        if (c2) cs = c2;
                        if (w2) w = w2;
                        if (!c2 || !w2) goto out;
                        cap = nc;
                    }
                    i = n++;
                    memset(&cs[i], 0, sizeof cs[i]);
                    memset(&w[i], 0, sizeof w[i]);
                    snprintf(cs[i].key, sizeof cs[i].key, "%s", k);
                    if (hb_strmap_set(&index, k, i) != HB_OK) goto out;
                }
                w[i].present[side]++;
                const hb_rec_case **slot = &w[i].brec[side];
                if (!*slot || status_rank(rec->status) > status_rank((*slot)->status)) *slot = rec;
                if (!side && !hb_strmap_has(&kc[r].map, k)) w[i].missing_cur = 1;
            }
        }
    /* room for one whole-run case per backend after the cases */
    {
        size_t need = 2 * n + 1;
        hb_cmp_case *c2 = realloc(cs, need * sizeof *cs);
        ab_work *w2 = realloc(w, need * sizeof *w);
        if (c2) cs = c2;
        if (w2) w = w2;
        if (!c2 || !w2) goto out;
    }
    d = malloc((size_t)nrounds * sizeof *d);
    mb = malloc((size_t)nrounds * sizeof *mb);
    mc = malloc((size_t)nrounds * sizeof *mc);
    D = malloc((n + 1) * (size_t)nrounds * sizeof *D);
    shift = malloc((n + 1) * (size_t)nrounds * sizeof *shift);
    pv = malloc((2 * n + 1) * sizeof *pv);
    qv = malloc((2 * n + 1) * sizeof *qv);
    ratios = malloc((2 * n + 1) * sizeof *ratios);
    if (!d || !mb || !mc || !D || !shift || !pv || !qv || !ratios) goto out;
    for (size_t i = 0; i < n; i++) {
        hb_cmp_case *c = &cs[i];
        double *Di = D + i * (size_t)nrounds;
        for (int r = 0; r < nrounds; r++) Di[r] = NAN;
        c->med_base = c->med_cur = c->ratio = c->ci_lo = c->ci_hi = c->p = c->q = c->mde = NAN;
        c->mde_se = c->mde_floor = NAN;
        c->noise = NAN;
        c->base = w[i].brec[0];
        c->cur = w[i].brec[1];
        hb_cmp_fill_labels(c);
        c->threshold = hb_cmp_threshold_for(o, c->backend, c->op);
        pv[i] = NAN;
        if (c->base && c->cur) res->matched++;
        /* status verdicts (as compare.c's classify_status), over the rounds */
        const char *sb = c->status_base, *sc = c->status_cur;
        if (c->base && c->cur && !w[i].missing_cur) {
            int okb = status_is(sb, "ok"), okc = status_is(sc, "ok");
            if (!(okb && okc)) {
                c->verdict = hb_cmp_status_verdict(sb, sc);
                continue;
            }
        } else if (c->base) {
            c->verdict = status_is(sb, "ok") ? HB_CMP_MISSING : HB_CMP_STILL_BAD;
            if (c->cur && status_is(sc, "wrong")) c->verdict = HB_CMP_WRONG;
            else if (c->cur && status_is(sc, "crashed")) c->verdict = HB_CMP_CRASHED;
            continue;
        } else {
            c->verdict = status_is(sc, "wrong") ? HB_CMP_WRONG : status_is(sc, "crashed") ? HB_CMP_CRASHED : HB_CMP_NEW;
            continue;
        }
        /* ok on both sides in every round that has it: the per-round log ratios D[i][r] */
        size_t m = 0, nbs = 0, ncs = 0, nb1, nc1;
        for (int r = 0; r < nrounds; r++) {
            const hb_rec_case *rb = keyed_get(&kb[r], c->key), *rc = keyed_get(&kc[r], c->key);
            if (!rb || !rc) continue;
            double xb = round_median(rb, o->metric, &nb1), xc = round_median(rc, o->metric, &nc1);
            nbs += nb1;
            ncs += nc1;
            if (!(xb > 0) || !(xc > 0) || nb1 < o->min_samples || nc1 < o->min_samples) continue;
            mb[m] = xb;
            mc[m] = xc;
            Di[r] = log(xc / xb);
            m++;
        }
        c->n_base = nbs;
        c->n_cur = ncs;
        c->passes_base = c->passes_cur = 0;
        if (m < 2) { c->verdict = HB_CMP_INSUFFICIENT; continue; }
        c->med_base = median_of(mb, m);
        c->med_cur = median_of(mc, m);
        c->verdict = HB_CMP_UNCHANGED; /* eligible for the test */
    }
    /* the whole-run shift of each backend (its own process) in each round: the median of D over
     * its eligible cases (at least 3); shift[i][r] holds it for case i */
    size_t nwhole = 0;
    for (size_t i = 0; i < n * (size_t)nrounds; i++) shift[i] = NAN;
    char *done = calloc(n + 1, 1);
    col = malloc((n + 1) * sizeof *col);
    if (!done || !col) { free(done); goto out; }
    size_t nbase_cases = n;
    for (size_t i = 0; i < nbase_cases; i++) {
        if (done[i] || cs[i].verdict != HB_CMP_UNCHANGED) continue;
        const char *be = cs[i].backend ? cs[i].backend : "";
        size_t members = 0;
        for (size_t j = i; j < nbase_cases; j++)
            if (!done[j] && cs[j].verdict == HB_CMP_UNCHANGED && !strcmp(cs[j].backend ? cs[j].backend : "", be)) { done[j] = 2; members++; }
        double sh[AB_MAXR];
        if (nrounds > AB_MAXR) { free(done); goto out; }
        size_t msh = 0;
        for (int r = 0; r < nrounds; r++) {
            size_t k = 0;
            for (size_t j = i; j < nbase_cases; j++)
                if (done[j] == 2 && isfinite(D[j * (size_t)nrounds + r])) col[k++] = D[j * (size_t)nrounds + r];
            /* a round that ran a subset (--cases-from: the cases still undecided) has no whole-run
             * shift: its cases are not a sample of the whole run, and a changed family would be most
             * of them (its own change would be subtracted) */
            sh[r] = k >= AB_MIN_NORM && !round_subset(base[r]) ? median_of(col, k) : (double)NAN;
            if (isfinite(sh[r])) msh++;
        }
        for (size_t j = i; j < nbase_cases; j++)
            if (done[j] == 2) {
                done[j] = 1;
                for (int r = 0; r < nrounds; r++) shift[j * (size_t)nrounds + r] = ao->normalize ? sh[r] : 0;
            }
        /* the whole-run case of this backend: its per-round shifts tested like a case */
        if (ao->whole_run && members >= AB_MIN_NORM && msh >= 2) {
            hb_cmp_case *c = &cs[n + nwhole];
            memset(c, 0, sizeof *c);
            snprintf(c->key, sizeof c->key, "(whole run)|%s", be);
            c->backend = cs[i].backend;
            c->op = "(whole run)";
            c->shape_str = "median of every case";
            c->mode = c->route = c->dtype = "-";
            c->status_base = c->status_cur = "ok";
            c->threshold = hb_cmp_threshold_for(o, c->backend, c->op);
            c->noise = NAN;
            c->med_base = c->med_cur = NAN;
            size_t k = 0;
            for (int r = 0; r < nrounds; r++) if (isfinite(sh[r])) d[k++] = sh[r];
            double *tmp = malloc(k * sizeof *tmp);
            if (!tmp) { free(done); goto out; }
            memcpy(tmp, d, k * sizeof *tmp);
            c->ratio = exp(median_of(tmp, k));
            free(tmp);
            c->p = hb_ab_signed_rank_p(d, k, NULL);
            c->mde_se = hb_mde_spread(d, k) / sqrt((double)k); /* for the MDE (mde.h) */
            c->mde_floor = hb_mde_floor_signed_rank(k);
            if (hb_ab_bootstrap_median_ratio(d, k, o->resamples, o->confidence, o->seed ^ hb_hash64(c->key), &c->ci_lo,
                                             &c->ci_hi) == HB_ENOMEM) { free(done); goto out; }
            c->verdict = HB_CMP_UNCHANGED;
            pv[n + nwhole] = c->p;
            nwhole++;
        }
    }
    free(done);
    /* per case: the per-round log ratios less their backend's whole-run shift of that round */
    for (size_t i = 0; i < n; i++) {
        hb_cmp_case *c = &cs[i];
        if (c->verdict != HB_CMP_UNCHANGED) continue;
        size_t m = 0;
        int rep = -1;
        for (int r = 0; r < nrounds; r++) {
            double x = D[i * (size_t)nrounds + r], sft = shift[i * (size_t)nrounds + r];
            if (isfinite(x)) d[m++] = x - (isfinite(sft) ? sft : 0);
        }
        if (m < 2) { c->verdict = HB_CMP_INSUFFICIENT; continue; }
        double *tmp = malloc(m * sizeof *tmp);
        if (!tmp) goto out;
        memcpy(tmp, d, m * sizeof *tmp);
        double dmed = median_of(tmp, m);
        free(tmp);
        /* representative record: the round whose ratio is nearest the median */
        double best = INFINITY;
        for (int r = 0; r < nrounds; r++) {
            double x = D[i * (size_t)nrounds + r], sft = shift[i * (size_t)nrounds + r];
            if (!isfinite(x)) continue;
            x -= isfinite(sft) ? sft : 0;
            if (fabs(x - dmed) < best) { best = fabs(x - dmed); rep = r; }
        }
        if (rep >= 0) { c->base = keyed_get(&kb[rep], c->key); c->cur = keyed_get(&kc[rep], c->key); }
        c->ratio = exp(dmed);
        c->p = hb_ab_signed_rank_p(d, m, NULL);
        c->mde_se = hb_mde_spread(d, m) / sqrt((double)m); /* for the MDE (mde.h) */
        c->mde_floor = hb_mde_floor_signed_rank(m);
        if (hb_ab_bootstrap_median_ratio(d, m, o->resamples, o->confidence, o->seed ^ hb_hash64(c->key), &c->ci_lo,
                                         &c->ci_hi) == HB_ENOMEM)
            goto out;
        if (isfinite(c->p)) { pv[i] = c->p; ratios[res->tested++] = c->ratio; }
    }
    n += nwhole;
    res->tested += nwhole;
    if (hb_rs_bh_adjust(pv, n, qv) != HB_OK) goto out;
    if (res->tested) {
        qsort(ratios, res->tested, sizeof *ratios, cmp_dbl);
        res->shift = hb_rs_median_sorted(ratios, res->tested);
    }
    for (size_t i = 0; i < n; i++) {
        hb_cmp_case *c = &cs[i];
        if (isnan(pv[i])) continue;
        c->q = qv[i];
        double t = c->threshold;
        int sig = c->q <= o->alpha;
        int big = !(o->min_delta > 0) || fabs(c->med_cur - c->med_base) > o->min_delta;
        int slower = sig && c->ratio > 1 + t && big;
        int faster = sig && c->ratio < 1 / (1 + t) && big;
        if (o->rule_point) {
            slower = slower && c->ci_lo > 1;
            faster = faster && c->ci_hi < 1;
        } else {
            slower = slower && c->ci_lo > 1 + t;
            faster = faster && c->ci_hi < 1 / (1 + t);
        }
        c->verdict = slower ? HB_CMP_REGRESSION : faster ? HB_CMP_IMPROVEMENT : HB_CMP_UNCHANGED;
    }
    qsort(cs, n, sizeof *cs, cmp_case_key);
    res->cases = cs;
    res->n = n;
    res->rounds = nrounds;
    res->min_rounds = ao->min_rounds;
    hb_cmp_finish(res, o);
    if (undecided) *undecided = res->undecided;
    cs = NULL;
    st = HB_OK;
out:
    if (st != HB_OK) snprintf(err, errlen, "out of memory");
    for (int r = 0; r < nrounds && kb && kc; r++) { keyed_free(&kb[r]); keyed_free(&kc[r]); }
    free(kb);
    free(kc);
    hb_strmap_free(&index);
    free(cs);
    free(w);
    free(d);
    free(D);
    free(shift);
    free(col);
    free(mb);
    free(mc);
    free(pv);
    free(qv);
    free(ratios);
    struct timespec ts1;
    clock_gettime(CLOCK_MONOTONIC, &ts1);
    res->elapsed_s = (double)(ts1.tv_sec - ts0.tv_sec) + 1e-9 * (double)(ts1.tv_nsec - ts0.tv_nsec);
    return st;
}

hb_status hb_ab_write_merged(int fd, const hb_run *const *runs, const char *const *full_paths, int nrounds,
                             const hb_cmp_result *res, int side, const char *metric, const hb_rec_ab *ab)
{
    hb_status st = HB_ENOMEM;
    keyed_run *k = calloc((size_t)nrounds + 1, sizeof *k);
    json_t **out = calloc(res->n + 1, sizeof *out);
    int *from = malloc((res->n + 1) * sizeof *from);
    hb_run full = {0};
    char err[512];
    if (nrounds < 1) { st = HB_EINVAL; goto done; }
    if (!k || !out || !from) goto done;
    for (int r = 0; r < nrounds; r++)
        if (keyed(runs[r], &k[r]) != HB_OK) goto done;
    /* the round each case's record comes from: the one whose record res points to */
    for (size_t i = 0; i < res->n; i++) {
        const hb_cmp_case *c = &res->cases[i];
        const hb_rec_case *rep = side ? c->cur : c->base;
        from[i] = -1;
        for (int r = 0; r < nrounds && rep && from[i] < 0; r++)
            if (keyed_get(&k[r], c->key) == rep) from[i] = r;
    }
    for (int r = 0; r < nrounds; r++) {
        int need = r == 0;
        for (size_t i = 0; i < res->n && !need; i++) need = from[i] == r;
        if (!need) continue;
        hb_run_free(&full);
        if ((st = hb_run_load(full_paths[r], &full, err, sizeof err)) != HB_OK) {
            fprintf(stderr, "hybench ab: %s\n", err);
            goto done;
        }
        st = HB_ENOMEM;
        keyed_run fk;
        if (keyed(&full, &fk) != HB_OK) goto done;
        if (r == 0) {
            /* round 1's meta record, read into its struct, with the pair's "ab" object put, written back */
            hb_rec_meta m;
            json_t *meta = NULL;
            if (hb_rec_meta_parse(full.meta, &m) == HB_OK) {
                hb_rec_release(&hb_rec_ab_table, &m.ab); /* a round's own ab (none is written) gives way */
                if (HB_REC_SET(hb_rec_meta, &m, ab, *ab) == HB_OK) meta = hb_rec_meta_json(&m);
                hb_rec_clear(&hb_rec_ab_table, &m.ab); /* borrowed from the caller: not freed with m */
                hb_rec_meta_free(&m);
            }
            if (!meta) { keyed_free(&fk); goto done; }
            if ((st = hb_record_write(fd, meta)) != HB_OK) { keyed_free(&fk); goto done; }
            for (size_t i = 0; i < json_array_size(full.backends); i++)
                if ((st = hb_record_write(fd, json_deep_copy(json_array_get(full.backends, i)))) != HB_OK) {
                    keyed_free(&fk);
                    goto done;
                }
            st = HB_ENOMEM;
        }
        for (size_t i = 0; i < res->n; i++)
            if (from[i] == r && !out[i]) {
                size_t at = keyed_index(&fk, res->cases[i].key);
                out[i] = at == SIZE_MAX ? NULL : json_deep_copy(json_array_get(full.cases, at));
            }
        keyed_free(&fk);
    }
    for (size_t i = 0; i < res->n; i++) {
        if (!out[i]) continue;
        json_t *pm = json_array();
        if (!pm) goto done;
        for (int r = 0; r < nrounds; r++) {
            const hb_rec_case *x = keyed_get(&k[r], res->cases[i].key);
            size_t ns;
            double med = x && status_is(x->status, "ok") ? round_median(x, metric, &ns) : (double)NAN;
            json_array_append_new(pm, hb_json_num(med));
        }
        json_object_set_new(out[i], "pass_medians", json_pack("{s:o}", metric, pm));
        json_object_set_new(out[i], "ab_rounds", json_integer(nrounds));
        st = hb_record_write(fd, out[i]);
        out[i] = NULL;
        if (st != HB_OK) goto done;
    }
    st = full.end ? hb_record_write(fd, json_deep_copy(full.end)) : HB_OK;
done:
    for (int r = 0; k && r < nrounds; r++) keyed_free(&k[r]);
    for (size_t i = 0; out && i < res->n; i++) json_decref(out[i]);
    free(k);
    free(out);
    free(from);
    hb_run_free(&full);
    return st;
}

json_t *hb_ab_verdict_json(const hb_cmp_result *res, const hb_run *base, const hb_run *cur, const hb_cmp_options *o,
                           const hb_rec_ab_summary *ab)
{
    json_t *j = hb_cmp_to_json(res, base, cur, o), *a = hb_rec_ab_summary_json(ab);
    if (!j || !a) {
        json_decref(j);
        json_decref(a);
        return NULL;
    }
    if (json_object_set_new(j, "ab", a)) { /* it takes a even when it fails */
        json_decref(j);
        return NULL;
    }
    return j;
}
