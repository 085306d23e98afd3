/* compare.c - `hybench compare`: the regression gate. See compare.h and docs/compare.md. */
#include "analysis/compare.h"
#include "cli/commands.h"
#include "core/rstats.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ------------------------------------------------------------------------------------------ */
/* options                                                                                      */
/* ------------------------------------------------------------------------------------------ */

void hb_cmp_options_default(hb_cmp_options *o)
{
    memset(o, 0, sizeof *o);
    o->metric = "total";
    o->threshold = 0.05;
    o->alpha = 0.05;
    o->confidence = 0.95;
    o->resamples = 2000;
    o->seed = 0x6879626e63680001ULL; /* "hybnch" + 1: any fixed value; results depend on it only
                                        through the bootstrap CI's Monte Carlo error */
    o->min_delta = 0;
    o->min_samples = 3;
    o->ci_for_all = 1;
    o->max_rows = 50;
}

static int parse_fraction(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno) return -1;
    while (isspace((unsigned char)*end)) end++;
    if (*end == '%') { v /= 100; end++; }
    else if (v >= 1) v /= 100; /* "5" means 5% */
    while (isspace((unsigned char)*end)) end++;
    if (*end || !(v >= 0 && v <= 10)) return -1;
    *out = v;
    return 0;
}

hb_status hb_cmp_parse_threshold(hb_cmp_options *o, const char *arg, char *err, size_t errlen)
{
    const char *eq = arg ? strchr(arg, '=') : NULL;
    double v;
    if (!arg || !*arg) { snprintf(err, errlen, "--threshold: empty value"); return HB_EINVAL; }
    if (!eq) {
        if (parse_fraction(arg, &v)) {
            snprintf(err, errlen, "--threshold %s: expected a percentage such as 5%% or BACKEND=3%%", arg);
            return HB_EINVAL;
        }
        o->threshold = v;
        return HB_OK;
    }
    size_t bl = (size_t)(eq - arg);
    if (bl == 0 || bl >= sizeof o->per_backend[0].backend || parse_fraction(eq + 1, &v)) {
        snprintf(err, errlen, "--threshold %s: expected BACKEND=PERCENT, e.g. cuda=3%%", arg);
        return HB_EINVAL;
    }
    int i;
    for (i = 0; i < o->nper_backend; i++)
        if (strlen(o->per_backend[i].backend) == bl && !strncmp(o->per_backend[i].backend, arg, bl)) break;
    if (i == o->nper_backend) {
        if (o->nper_backend == HB_CMP_MAX_BACKEND_THRESHOLDS) {
            snprintf(err, errlen, "--threshold: more than %d per-backend thresholds", HB_CMP_MAX_BACKEND_THRESHOLDS);
            return HB_EINVAL;
        }
        o->nper_backend++;
        memcpy(o->per_backend[i].backend, arg, bl);
        o->per_backend[i].backend[bl] = 0;
    }
    o->per_backend[i].threshold = v;
    return HB_OK;
}

double hb_cmp_threshold_for(const hb_cmp_options *o, const char *backend)
{
    if (!backend) return o->threshold;
    for (int i = 0; i < o->nper_backend; i++)
        if (!strcmp(o->per_backend[i].backend, backend)) return o->per_backend[i].threshold;
    size_t tl = strcspn(backend, ":");
    for (int i = 0; i < o->nper_backend; i++)
        if (strlen(o->per_backend[i].backend) == tl && !strncmp(o->per_backend[i].backend, backend, tl))
            return o->per_backend[i].threshold;
    return o->threshold;
}

static const char *const verdict_names[HB_CMP_VERDICT_COUNT] = {
    "unchanged", "regression", "improvement", "wrong", "crashed", "lost", "missing", "new", "fixed",
    "still_bad", "insufficient"
};

const char *hb_cmp_verdict_name(hb_cmp_verdict v)
{
    return (unsigned)v < HB_CMP_VERDICT_COUNT ? verdict_names[v] : "?";
}

int hb_cmp_verdict_fails(hb_cmp_verdict v, const hb_cmp_options *o)
{
    switch (v) {
    case HB_CMP_REGRESSION: case HB_CMP_WRONG: case HB_CMP_CRASHED: case HB_CMP_LOST: return 1;
    case HB_CMP_MISSING: return !o->allow_missing;
    default: return 0;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* helpers on records                                                                           */
/* ------------------------------------------------------------------------------------------ */

static const char *jstr(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const char *meta_str(const hb_run *r, const char *k)
{
    return r && r->meta ? jstr(r->meta, k) : NULL;
}

static const char *meta_cpu_model(const hb_run *r)
{
    return r && r->meta ? jstr(json_object_get(r->meta, "cpu"), "model") : NULL;
}

static int streq_null(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return !strcmp(a, b);
}

int hb_cmp_comparable(const hb_run *a, const hb_run *b, char *why, size_t whylen)
{
    if (!a->meta || !b->meta) {
        snprintf(why, whylen, "%s has no meta record: cannot tell which machine it comes from",
                 !a->meta ? a->path : b->path);
        return 0;
    }
    json_t *sa = json_object_get(a->meta, "schema"), *sb = json_object_get(b->meta, "schema");
    if (!json_equal(sa, sb)) {
        snprintf(why, whylen, "schema versions differ (%lld vs %lld)",
                 (long long)json_integer_value(sa), (long long)json_integer_value(sb));
        return 0;
    }
    const char *ha = meta_str(a, "host"), *hb = meta_str(b, "host");
    if (!streq_null(ha, hb)) {
        snprintf(why, whylen, "different machines: host \"%s\" vs \"%s\"", ha ? ha : "?", hb ? hb : "?");
        return 0;
    }
    const char *ca = meta_cpu_model(a), *cb = meta_cpu_model(b);
    if (!streq_null(ca, cb)) {
        snprintf(why, whylen, "different machines: CPU \"%s\" vs \"%s\"", ca ? ca : "?", cb ? cb : "?");
        return 0;
    }
    return 1;
}

/* Finite samples of rec's samples.<metric>, in a new array (caller frees). *n = count. */
static double *get_samples(json_t *rec, const char *metric, size_t *n)
{
    json_t *a = json_object_get(json_object_get(rec, "samples"), metric);
    size_t m = json_array_size(a), k = 0;
    *n = 0;
    double *x = malloc((m ? m : 1) * sizeof *x);
    if (!x) return NULL;
    for (size_t i = 0; i < m; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_number(v)) continue;
        double d = json_number_value(v);
        if (isfinite(d) && d >= 0) x[k++] = d;
    }
    *n = k;
    return x;
}

static int status_is(const char *s, const char *name) { return s && !strcmp(s, name); }

/* Fastest and slowest of rec's pass_medians.<metric> (written by `hybench run --passes`); returns
 * how many passes had a median (0 when the record has none: a single-pass run). */
static int pass_range(json_t *rec, const char *metric, double *lo, double *hi)
{
    json_t *a = json_object_get(json_object_get(rec, "pass_medians"), metric);
    int n = 0;
    *lo = NAN;
    *hi = NAN;
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_number(v)) continue;
        double d = json_number_value(v);
        if (!(d > 0) || !isfinite(d)) continue;
        if (n == 0 || d < *lo) *lo = d;
        if (n == 0 || d > *hi) *hi = d;
        n++;
    }
    return n;
}

/* ------------------------------------------------------------------------------------------ */
/* matching                                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef struct entry { char key[256]; size_t idx; json_t *rec; } entry;

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c) return c;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Entries of a run's case records, keyed, repeats suffixed "#2", "#3"..., sorted by key. */
static entry *make_entries(const hb_run *r, size_t *n, size_t *nokey)
{
    size_t m = json_array_size(r->cases), k = 0;
    entry *e = calloc(m ? m : 1, sizeof *e);
    *n = 0;
    *nokey = 0;
    if (!e) return NULL;
    for (size_t i = 0; i < m; i++) {
        json_t *c = json_array_get(r->cases, i);
        const char *key = jstr(c, "key");
        if (!key) { (*nokey)++; continue; }
        snprintf(e[k].key, sizeof e[k].key, "%s", key);
        e[k].idx = i;
        e[k].rec = c;
        k++;
    }
    qsort(e, k, sizeof *e, cmp_entry);
    int rep = 0;
    for (size_t i = 0; i < k; i++) {
        if (i > 0 && !strcmp(jstr(e[i].rec, "key"), jstr(e[i - 1].rec, "key"))) rep++;
        else rep = 0;
        if (rep > 0) {
            char tmp[256];
            snprintf(tmp, sizeof tmp, "%.240s#%d", jstr(e[i].rec, "key"), rep + 1);
            memcpy(e[i].key, tmp, sizeof tmp);
        }
    }
    qsort(e, k, sizeof *e, cmp_entry);
    *n = k;
    return e;
}

static void fill_labels(hb_cmp_case *c)
{
    json_t *r = c->cur ? c->cur : c->base;
    c->backend = jstr(r, "backend");
    c->op = jstr(r, "op");
    c->shape_str = jstr(r, "shape_str");
    c->mode = jstr(r, "mode");
    c->route = jstr(r, "route");
    c->dtype = jstr(r, "dtype");
    c->status_base = c->base ? jstr(c->base, "status") : NULL;
    c->status_cur = c->cur ? jstr(c->cur, "status") : NULL;
}

/* Status-only verdict; returns 1 when both runs measured the case (statistics needed). */
static int classify_status(hb_cmp_case *c)
{
    const char *sb = c->status_base, *sc = c->status_cur;
    if (c->base && c->cur) {
        int okb = status_is(sb, "ok"), okc = status_is(sc, "ok");
        if (okb && okc) return 1;
        if (status_is(sc, "wrong") && !status_is(sb, "wrong")) c->verdict = HB_CMP_WRONG;
        else if (status_is(sc, "crashed") && !status_is(sb, "crashed")) c->verdict = HB_CMP_CRASHED;
        else if (okb) c->verdict = HB_CMP_LOST;
        else if (okc) c->verdict = HB_CMP_FIXED;
        else c->verdict = HB_CMP_STILL_BAD;
    } else if (c->base) {
        c->verdict = status_is(sb, "ok") ? HB_CMP_MISSING : HB_CMP_STILL_BAD;
    } else {
        if (status_is(sc, "wrong")) c->verdict = HB_CMP_WRONG;
        else if (status_is(sc, "crashed")) c->verdict = HB_CMP_CRASHED;
        else c->verdict = HB_CMP_NEW;
    }
    return 0;
}

static double phase_median(json_t *rec, const char *metric)
{
    return rec ? hb_case_phase(rec, metric, "median") : (double)NAN;
}

/* Pass 1 for one case measured in both runs: medians, ratio, Mann-Whitney p, and the bootstrap CI
 * when want_ci. Returns HB_OK or HB_ENOMEM. */
static hb_status case_stats(hb_cmp_case *c, const hb_cmp_options *o, int want_ci)
{
    size_t nb, nc;
    double *b = get_samples(c->base, o->metric, &nb);
    double *x = get_samples(c->cur, o->metric, &nc);
    hb_status st = HB_OK;
    if (!b || !x) { st = HB_ENOMEM; goto out; }
    c->n_base = nb;
    c->n_cur = nc;
    if (nb < o->min_samples || nc < o->min_samples || nb < 1 || nc < 1) {
        c->med_base = nb ? (double)NAN : phase_median(c->base, o->metric);
        c->med_cur = nc ? (double)NAN : phase_median(c->cur, o->metric);
        if (nb) { hb_rs_sort(b, nb); c->med_base = hb_rs_median_sorted(b, nb); }
        if (nc) { hb_rs_sort(x, nc); c->med_cur = hb_rs_median_sorted(x, nc); }
        c->verdict = HB_CMP_INSUFFICIENT;
        goto out;
    }
    hb_rs_sort(b, nb);
    hb_rs_sort(x, nc);
    c->med_base = hb_rs_median_sorted(b, nb);
    c->med_cur = hb_rs_median_sorted(x, nc);
    if (!(c->med_base > 0) || !(c->med_cur > 0)) { c->verdict = HB_CMP_INSUFFICIENT; goto out; }
    c->ratio = c->med_cur / c->med_base;
    hb_mwu mw;
    st = hb_rs_mann_whitney(x, nc, b, nb, HB_MWU_AUTO, &mw);
    if (st != HB_OK) goto out;
    c->p = mw.p;
    if (want_ci) {
        double r;
        st = hb_rs_bootstrap_ratio(b, nb, x, nc, o->resamples, o->confidence,
                                   o->seed ^ hb_hash64(c->key), &r, &c->ci_lo, &c->ci_hi);
        if (st == HB_EINVAL) st = HB_OK; /* degenerate resamples: CI stays NAN */
    }
out:
    free(b);
    free(x);
    return st;
}

static hb_status case_ci(hb_cmp_case *c, const hb_cmp_options *o)
{
    return case_stats(c, o, 1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

hb_status hb_compare_runs(const hb_run *base, const hb_run *cur, const hb_cmp_options *o,
                          hb_cmp_result *res, char *err, size_t errlen)
{
    double t0 = now_s();
    memset(res, 0, sizeof *res);
    res->shift = NAN;
    if (!o->metric || (strcmp(o->metric, "total") && strcmp(o->metric, "compute"))) {
        snprintf(err, errlen, "metric must be \"total\" or \"compute\"");
        return HB_EINVAL;
    }
    if (!(o->alpha > 0 && o->alpha < 1) || !(o->confidence > 0 && o->confidence < 1) ||
        o->resamples < 100 || o->resamples > 1000000 || !(o->threshold >= 0) || !(o->min_delta >= 0)) {
        snprintf(err, errlen, "alpha and confidence must lie in (0,1), bootstrap in [100, 1e6], "
                              "threshold and min-delta >= 0");
        return HB_EINVAL;
    }
    size_t nb, nc, nkb, nkc;
    entry *eb = make_entries(base, &nb, &nkb);
    entry *ec = make_entries(cur, &nc, &nkc);
    hb_cmp_case *cs = calloc(nb + nc + 1, sizeof *cs);
    double *pv = NULL, *qv = NULL, *ratios = NULL;
    hb_status st = HB_OK;
    if (!eb || !ec || !cs) { st = HB_ENOMEM; goto fail; }
    if (nkb || nkc)
        fprintf(stderr, "hybench compare: %zu case records without \"key\" ignored\n", nkb + nkc);
    size_t i = 0, j = 0, n = 0;
    while (i < nb || j < nc) {
        int c = i < nb && j < nc ? strcmp(eb[i].key, ec[j].key) : (i < nb ? -1 : 1);
        hb_cmp_case *k = &cs[n++];
        k->med_base = k->med_cur = k->ratio = k->ci_lo = k->ci_hi = k->p = k->q = NAN;
        if (c == 0) { snprintf(k->key, sizeof k->key, "%s", eb[i].key); k->base = eb[i++].rec; k->cur = ec[j++].rec; res->matched++; }
        else if (c < 0) { snprintf(k->key, sizeof k->key, "%s", eb[i].key); k->base = eb[i++].rec; }
        else { snprintf(k->key, sizeof k->key, "%s", ec[j].key); k->cur = ec[j++].rec; }
        fill_labels(k);
        k->threshold = hb_cmp_threshold_for(o, k->backend);
    }
    res->cases = cs;
    res->n = n;

    /* pass 1: statistics of every case measured in both runs */
    for (size_t a = 0; a < n; a++) classify_status(&cs[a]);
    char *both = calloc(n + 1, 1);
    if (!both) { st = HB_ENOMEM; goto fail; }
    for (size_t a = 0; a < n; a++) {
        hb_cmp_case *k = &cs[a];
        both[a] = (char)(k->base && k->cur && status_is(k->status_base, "ok") && status_is(k->status_cur, "ok"));
        if (!both[a]) {
            if (k->base) k->med_base = phase_median(k->base, o->metric);
            if (k->cur) k->med_cur = phase_median(k->cur, o->metric);
            if (k->med_base > 0 && k->med_cur > 0) k->ratio = k->med_cur / k->med_base;
        }
    }
    int nomem = 0;
    #pragma omp parallel for schedule(dynamic, 4)
    for (long a = 0; a < (long)n; a++) {
        if (!both[a]) continue;
        if (case_stats(&cs[a], o, o->ci_for_all) != HB_OK) {
            #pragma omp atomic write
            nomem = 1;
        }
    }
    if (nomem) { free(both); st = HB_ENOMEM; goto fail; }

    /* Benjamini-Hochberg over every tested case */
    pv = malloc((n + 1) * sizeof *pv);
    qv = malloc((n + 1) * sizeof *qv);
    ratios = malloc((n + 1) * sizeof *ratios);
    if (!pv || !qv || !ratios) { free(both); st = HB_ENOMEM; goto fail; }
    size_t nr = 0;
    for (size_t a = 0; a < n; a++) {
        pv[a] = both[a] && cs[a].verdict != HB_CMP_INSUFFICIENT ? cs[a].p : (double)NAN;
        if (!isnan(pv[a])) { res->tested++; ratios[nr++] = cs[a].ratio; }
    }
    if ((st = hb_rs_bh_adjust(pv, n, qv)) != HB_OK) { free(both); goto fail; }
    if (nr) {
        qsort(ratios, nr, sizeof *ratios, cmp_dbl);
        res->shift = nr & 1 ? ratios[nr / 2] : 0.5 * (ratios[nr / 2 - 1] + ratios[nr / 2]);
    }

    /* between-run noise per backend: robust spread of log(ratio) over its compared cases */
    res->noise_max = NAN;
    {
        double *lr = malloc((n + 1) * sizeof *lr);
        if (!lr) { free(both); st = HB_ENOMEM; goto fail; }
        for (size_t a = 0; a < n; a++) cs[a].noise = NAN;
        for (size_t a = 0; a < n; a++) {
            if (isnan(pv[a]) || !isnan(cs[a].noise)) continue;
            const char *be = cs[a].backend ? cs[a].backend : "";
            size_t m = 0;
            for (size_t b = a; b < n; b++)
                if (!isnan(pv[b]) && !strcmp(cs[b].backend ? cs[b].backend : "", be))
                    lr[m++] = log(cs[b].ratio);
            double s = NAN;
            if (m >= 10) {
                qsort(lr, m, sizeof *lr, cmp_dbl);
                double med = m & 1 ? lr[m / 2] : 0.5 * (lr[m / 2 - 1] + lr[m / 2]);
                for (size_t b = 0; b < m; b++) lr[b] = fabs(lr[b] - med);
                qsort(lr, m, sizeof *lr, cmp_dbl);
                s = 1.4826 * (m & 1 ? lr[m / 2] : 0.5 * (lr[m / 2 - 1] + lr[m / 2]));
                if (isnan(res->noise_max) || s > res->noise_max) res->noise_max = s;
            }
            for (size_t b = a; b < n; b++)
                if (!isnan(pv[b]) && !strcmp(cs[b].backend ? cs[b].backend : "", be)) {
                    cs[b].noise = s;
                    if (o->noise_k > 0 && isfinite(s)) {
                        double t = exp(o->noise_k * s) - 1;
                        if (t > cs[b].threshold) cs[b].threshold = t;
                    }
                }
        }
        free(lr);
    }

    /* pass 2: candidates need the CI when it was not computed yet */
    char *cand = calloc(n + 1, 1);
    if (!cand) { free(both); st = HB_ENOMEM; goto fail; }
    for (size_t a = 0; a < n; a++) {
        hb_cmp_case *k = &cs[a];
        if (isnan(pv[a])) continue;
        k->q = qv[a];
        k->verdict = HB_CMP_UNCHANGED;
        double t = k->threshold;
        int slower = k->q <= o->alpha && k->ratio > 1 + t && k->med_cur - k->med_base > o->min_delta;
        int faster = k->q <= o->alpha && k->ratio < 1 / (1 + t) && k->med_base - k->med_cur > o->min_delta;
        if ((slower || faster) && !o->rule_point && isnan(k->ci_lo)) cand[a] = 1;
    }
    #pragma omp parallel for schedule(dynamic, 1)
    for (long a = 0; a < (long)n; a++) {
        if (!cand[a]) continue;
        if (case_ci(&cs[a], o) != HB_OK) {
            #pragma omp atomic write
            nomem = 1;
        }
    }
    free(cand);
    free(both);
    if (nomem) { st = HB_ENOMEM; goto fail; }
    for (size_t a = 0; a < n; a++) {
        hb_cmp_case *k = &cs[a];
        if (isnan(pv[a])) continue;
        k->q = qv[a]; /* case_ci re-ran case_stats, which does not touch q; keep it explicit */
        double t = k->threshold;
        int sig = k->q <= o->alpha;
        int slower = sig && k->ratio > 1 + t && k->med_cur - k->med_base > o->min_delta;
        int faster = sig && k->ratio < 1 / (1 + t) && k->med_base - k->med_cur > o->min_delta;
        if (!o->rule_point) {
            slower = slower && k->ci_lo > 1 + t;
            faster = faster && k->ci_hi < 1 / (1 + t);
        }
        /* Passes (separate processes, spread over the run) sample the between-process noise that
         * the samples of one process cannot show. With >= 2 passes on both sides, a change counts
         * only when every pass agrees: the faster run's slowest pass, times 1 + t, is still below
         * the slower run's fastest pass. Under no change and exchangeable passes, P = 1/20 for
         * 3 vs 3 before the threshold; the sample-level test above still has to hold too. */
        k->passes_base = pass_range(k->base, o->metric, &k->pass_lo_base, &k->pass_hi_base);
        k->passes_cur = pass_range(k->cur, o->metric, &k->pass_lo_cur, &k->pass_hi_cur);
        if (k->passes_base >= 2 && k->passes_cur >= 2) {
            int slower_all = k->pass_lo_cur > (1 + t) * k->pass_hi_base;
            int faster_all = k->pass_lo_base > (1 + t) * k->pass_hi_cur;
            k->pass_overlap = (slower && !slower_all) || (faster && !faster_all);
            slower = slower && slower_all;
            faster = faster && faster_all;
        }
        k->verdict = slower ? HB_CMP_REGRESSION : faster ? HB_CMP_IMPROVEMENT : HB_CMP_UNCHANGED;
    }
    for (size_t a = 0; a < n; a++) {
        res->count[cs[a].verdict]++;
        if (hb_cmp_verdict_fails(cs[a].verdict, o)) res->fails++;
    }
    free(pv);
    free(qv);
    free(ratios);
    free(eb);
    free(ec);
    res->elapsed_s = now_s() - t0;
    return HB_OK;
fail:
    snprintf(err, errlen, "out of memory");
    free(pv);
    free(qv);
    free(ratios);
    free(eb);
    free(ec);
    free(cs);
    memset(res, 0, sizeof *res);
    return st;
}

void hb_cmp_result_free(hb_cmp_result *r)
{
    if (!r) return;
    free(r->cases);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------------------------------ */
/* formatting                                                                                   */
/* ------------------------------------------------------------------------------------------ */

char *hb_fmt_time(double s, char *buf, size_t len)
{
    if (!isfinite(s)) { snprintf(buf, len, "-"); return buf; }
    static const struct { double scale; const char *unit; } u[] = {
        { 1, "s" }, { 1e-3, "ms" }, { 1e-6, "\xc2\xb5s" }, { 1e-9, "ns" }
    };
    int i = 0;
    double a = fabs(s);
    while (i < 3 && a < u[i].scale * 0.9995) i++;
    double v = s / u[i].scale;
    double av = fabs(v);
    int dec = av >= 99.95 ? 0 : av >= 9.995 ? 1 : 2;
    snprintf(buf, len, "%.*f %s", dec, v, u[i].unit);
    return buf;
}

static char *fmt_pct(double ratio, char *buf, size_t len)
{
    if (!isfinite(ratio)) { snprintf(buf, len, "-"); return buf; }
    snprintf(buf, len, "%+.1f%%", (ratio - 1) * 100);
    return buf;
}

static char *fmt_p(double p, char *buf, size_t len)
{
    if (!isfinite(p)) snprintf(buf, len, "-");
    else if (p == 0) snprintf(buf, len, "<1e-300");
    else if (p < 1e-3) snprintf(buf, len, "%.1e", p);
    else snprintf(buf, len, "%.3f", p);
    return buf;
}

/* Markdown-safe copy: '|' escaped, '<' and '>' as entities (merge-request renderers take raw
 * HTML), newlines to spaces. */
static void md_put(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '\n' || *s == '\r') fputc(' ', f);
        else fputc(*s, f);
    }
}

static const char *nz(const char *s) { return s ? s : "?"; }

static void md_case_cells(FILE *f, const hb_cmp_case *c)
{
    fputs("| `", f);
    md_put(f, nz(c->op));
    fputs("` ", f);
    md_put(f, c->shape_str ? c->shape_str : c->key);
    const char *hash = strchr(c->key, '#');
    if (hash) { fputc(' ', f); md_put(f, hash); }
    fputs(" | ", f);
    md_put(f, nz(c->backend));
    fprintf(f, " | %s / %s / %s ", nz(c->mode), nz(c->route), nz(c->dtype));
}

static int cmp_ratio_desc(const void *a, const void *b)
{
    const hb_cmp_case *x = *(const hb_cmp_case *const *)a, *y = *(const hb_cmp_case *const *)b;
    double rx = isnan(x->ratio) ? -1 : x->ratio, ry = isnan(y->ratio) ? -1 : y->ratio;
    if (rx != ry) return (rx < ry) - (rx > ry);
    return strcmp(x->key, y->key);
}

static size_t select_cases(const hb_cmp_result *r, const hb_cmp_case **out, int (*pred)(const hb_cmp_case *, const hb_cmp_options *),
                           const hb_cmp_options *o)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++) if (pred(&r->cases[i], o)) out[k++] = &r->cases[i];
    qsort(out, k, sizeof *out, cmp_ratio_desc);
    return k;
}

static int pred_gate_status(const hb_cmp_case *c, const hb_cmp_options *o)
{
    return c->verdict != HB_CMP_REGRESSION && hb_cmp_verdict_fails(c->verdict, o);
}
static int pred_change(const hb_cmp_case *c, const hb_cmp_options *o)
{
    (void)o;
    return c->verdict == HB_CMP_REGRESSION || c->verdict == HB_CMP_IMPROVEMENT;
}
static int pred_near(const hb_cmp_case *c, const hb_cmp_options *o)
{
    (void)o;
    return c->verdict == HB_CMP_UNCHANGED && (c->ratio > 1 + c->threshold || c->ratio < 1 / (1 + c->threshold));
}
static int pred_info(const hb_cmp_case *c, const hb_cmp_options *o)
{
    return c->verdict == HB_CMP_NEW || c->verdict == HB_CMP_FIXED ||
           (c->verdict == HB_CMP_MISSING && o->allow_missing) || c->verdict == HB_CMP_INSUFFICIENT ||
           (c->verdict == HB_CMP_STILL_BAD && !status_is(c->status_cur, "skipped"));
}

static void md_status_cell(FILE *f, const char *status, double med)
{
    char t[32];
    if (!status) fputs("| absent ", f);
    else if (!strcmp(status, "ok")) fprintf(f, "| %s ", hb_fmt_time(med, t, sizeof t));
    else { fputs("| ", f); md_put(f, status); fputc(' ', f); }
}

static void run_row(FILE *f, const char *what, const hb_run *b, const hb_run *c,
                    const char *(*get)(const hb_run *))
{
    fprintf(f, "| %s | ", what);
    md_put(f, get(b) ? get(b) : "?");
    fputs(" | ", f);
    md_put(f, get(c) ? get(c) : "?");
    fputs(" |\n", f);
}
static const char *g_path(const hb_run *r) { return r->path; }
static const char *g_run_id(const hb_run *r) { return meta_str(r, "run_id"); }
static const char *g_commit(const hb_run *r) { return meta_str(r, "git_commit"); }
static const char *g_date(const hb_run *r) { return meta_str(r, "date"); }
static const char *g_host(const hb_run *r) { return meta_str(r, "host"); }
static const char *g_cpu(const hb_run *r) { return meta_cpu_model(r); }

static void md_thresholds(FILE *f, const hb_cmp_options *o)
{
    fprintf(f, "%g%%", o->threshold * 100);
    for (int i = 0; i < o->nper_backend; i++)
        fprintf(f, ", %s %g%%", o->per_backend[i].backend, o->per_backend[i].threshold * 100);
}

hb_status hb_cmp_write_markdown(FILE *f, const hb_cmp_result *r, const hb_run *base,
                                const hb_run *cur, const hb_cmp_options *o)
{
    const hb_cmp_case **sel = malloc((r->n + 1) * sizeof *sel);
    if (!sel) return HB_ENOMEM;
    char t1[32], t2[32], t3[32], t4[32];
    size_t nreg = r->count[HB_CMP_REGRESSION];
    fprintf(f, "## hybench compare: %s\n\n", r->fails ? "**FAIL**" : "**PASS**");
    if (r->fails) {
        fprintf(f, "%d case%s fail%s the gate (", r->fails, r->fails == 1 ? "" : "s", r->fails == 1 ? "s" : "");
        const char *sep = "";
        for (int v = 0; v < HB_CMP_VERDICT_COUNT; v++)
            if (r->count[v] && hb_cmp_verdict_fails((hb_cmp_verdict)v, o)) {
                fprintf(f, "%s%s: %zu", sep, verdict_names[v], r->count[v]);
                sep = ", ";
            }
        fputs(").\n\n", f);
    }
    fprintf(f, "%zu cases matched, %zu compared: %zu regression%s, %zu improvement%s, %zu unchanged",
            r->matched, r->tested, nreg, nreg == 1 ? "" : "s", r->count[HB_CMP_IMPROVEMENT],
            r->count[HB_CMP_IMPROVEMENT] == 1 ? "" : "s", r->count[HB_CMP_UNCHANGED]);
    if (r->count[HB_CMP_INSUFFICIENT]) fprintf(f, ", %zu with too few samples", r->count[HB_CMP_INSUFFICIENT]);
    fputs(".", f);
    if (isfinite(r->shift))
        fprintf(f, " Median current/baseline ratio over all compared cases: %.3f (%s)%s.",
                r->shift, fmt_pct(r->shift, t1, sizeof t1),
                fabs(r->shift - 1) > o->threshold / 2 ? " - the whole run moved; suspect machine noise "
                                                        "or a change that affects every case" : "");
    fputs("\n\n", f);
    /* between-run noise per backend (each backend once, in key order) */
    int first = 1, noisy = 0;
    for (size_t i = 0; i < r->n; i++) {
        const hb_cmp_case *c = &r->cases[i];
        if (!isfinite(c->noise)) continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = isfinite(r->cases[j].noise) && !strcmp(nz(r->cases[j].backend), nz(c->backend));
        if (seen) continue;
        fputs(first ? "Between-run noise (robust spread of the per-case ratios): " : ", ", f);
        first = 0;
        md_put(f, nz(c->backend));
        fprintf(f, " %.1f%%", (exp(c->noise) - 1) * 100);
        if (exp(c->noise) - 1 > hb_cmp_threshold_for(o, c->backend)) { fputs(" (above its threshold)", f); noisy = 1; }
    }
    if (!first) fputs(o->noise_k > 0 ? "; thresholds raised to the noise level (--noise-scale).\n\n" : ".\n\n", f);
    if (noisy && o->noise_k <= 0)
        fputs("**Warning:** the two runs differ case by case by more than the threshold even where "
              "nothing changed; a gate at this threshold is not meaningful between them. Re-run on a "
              "quiet machine, raise the threshold, or use --noise-scale.\n\n", f);
    if (r->count[HB_CMP_REGRESSION] && r->count[HB_CMP_IMPROVEMENT] >= r->count[HB_CMP_REGRESSION])
        fputs("**Note:** as many significant improvements as regressions: typical of machine noise "
              "between the runs rather than of a code change.\n\n", f);

    fputs("| | baseline | current |\n| --- | --- | --- |\n", f);
    run_row(f, "file", base, cur, g_path);
    run_row(f, "run", base, cur, g_run_id);
    run_row(f, "commit", base, cur, g_commit);
    run_row(f, "date", base, cur, g_date);
    run_row(f, "host", base, cur, g_host);
    run_row(f, "CPU", base, cur, g_cpu);
    if (json_is_array(json_object_get(base->meta, "load_avg")) || json_is_array(json_object_get(cur->meta, "load_avg"))) {
        /* meta.load_avg (1, 5, 15 min), when the run records it: a busy machine explains noise */
        fputs("| load average |", f);
        const hb_run *rr[2] = { base, cur };
        for (int k = 0; k < 2; k++) {
            json_t *la = json_object_get(rr[k]->meta, "load_avg");
            size_t i;
            json_t *v;
            fputc(' ', f);
            if (!json_is_array(la)) fputs("?", f);
            json_array_foreach(la, i, v) fprintf(f, "%s%.2f", i ? " / " : "", json_number_value(v));
            fputs(" |", f);
        }
        fputs("\n", f);
    }
    fputs("\n", f);

    size_t k = select_cases(r, sel, pred_gate_status, o);
    if (k) {
        fprintf(f, "### Gate failures: status changes (%zu)\n\n", k);
        fputs("| case | backend | mode / route / dtype | baseline | current | verdict | reason |\n"
              "| --- | --- | --- | --- | --- | --- | --- |\n", f);
        for (size_t i = 0; i < k && (int)i < o->max_rows; i++) {
            const hb_cmp_case *c = sel[i];
            md_case_cells(f, c);
            md_status_cell(f, c->status_base, c->med_base);
            md_status_cell(f, c->status_cur, c->med_cur);
            fprintf(f, "| **%s** | ", verdict_names[c->verdict]);
            md_put(f, c->cur ? jstr(c->cur, "reason") : "not in the current run");
            fputs(" |\n", f);
        }
        if ((int)k > o->max_rows) fprintf(f, "\n... and %zu more (see the JSON output).\n", k - (size_t)o->max_rows);
        fputs("\n", f);
    }

    k = select_cases(r, sel, pred_change, o);
    fprintf(f, "### Significant changes (%zu regressions, %zu improvements), slowest first\n\n", nreg,
            r->count[HB_CMP_IMPROVEMENT]);
    if (!k) fputs("None.\n\n", f);
    else {
        fprintf(f, "| case | backend | mode / route / dtype | baseline median | current median | "
                   "change | %g%% CI | p (BH) | verdict |\n"
                   "| --- | --- | --- | ---: | ---: | ---: | --- | ---: | --- |\n", o->confidence * 100);
        for (size_t i = 0; i < k && (int)i < o->max_rows; i++) {
            const hb_cmp_case *c = sel[i];
            md_case_cells(f, c);
            char lo[32], hi[32];
            fprintf(f, "| %s | %s | %s | %s .. %s | %s | %s |\n", hb_fmt_time(c->med_base, t1, sizeof t1),
                    hb_fmt_time(c->med_cur, t2, sizeof t2), fmt_pct(c->ratio, t3, sizeof t3),
                    fmt_pct(c->ci_lo, lo, sizeof lo), fmt_pct(c->ci_hi, hi, sizeof hi),
                    fmt_p(c->q, t4, sizeof t4),
                    c->verdict == HB_CMP_REGRESSION ? "**regression**" : "improvement");
        }
        if ((int)k > o->max_rows) fprintf(f, "\n... and %zu more (see the JSON output).\n", k - (size_t)o->max_rows);
        fputs("\n", f);
    }

    k = select_cases(r, sel, pred_near, o);
    if (k) {
        size_t nov = 0;
        for (size_t i = 0; i < k; i++) nov += sel[i]->pass_overlap;
        if (nov)
            fprintf(f, "<details><summary>Beyond the threshold but not significant: %zu (not flagged; %zu of them "
                       "significant within one process but not beyond the spread of the runs' passes)</summary>\n\n",
                    k, nov);
        else
            fprintf(f, "<details><summary>Beyond the threshold but not significant: %zu (not flagged)</summary>\n\n", k);
        fprintf(f, "| case | backend | mode / route / dtype | baseline median | current median | "
                   "change | %g%% CI | p (BH) |\n| --- | --- | --- | ---: | ---: | ---: | --- | ---: |\n",
                o->confidence * 100);
        for (size_t i = 0; i < k && (int)i < o->max_rows; i++) {
            const hb_cmp_case *c = sel[i];
            char lo[32], hi[32];
            md_case_cells(f, c);
            fprintf(f, "| %s | %s | %s | %s .. %s | %s |\n", hb_fmt_time(c->med_base, t1, sizeof t1),
                    hb_fmt_time(c->med_cur, t2, sizeof t2), fmt_pct(c->ratio, t3, sizeof t3),
                    fmt_pct(c->ci_lo, lo, sizeof lo), fmt_pct(c->ci_hi, hi, sizeof hi),
                    fmt_p(c->q, t4, sizeof t4));
        }
        if ((int)k > o->max_rows) fprintf(f, "\n... and %zu more.\n", k - (size_t)o->max_rows);
        fputs("\n</details>\n\n", f);
    }

    k = select_cases(r, sel, pred_info, o);
    if (k) {
        fprintf(f, "<details><summary>Unmatched and unmeasured cases: %zu (new %zu, fixed %zu, "
                   "still not ok %zu, too few samples %zu%s)</summary>\n\n",
                k, r->count[HB_CMP_NEW], r->count[HB_CMP_FIXED], r->count[HB_CMP_STILL_BAD],
                r->count[HB_CMP_INSUFFICIENT], o->allow_missing ? ", missing allowed" : "");
        fputs("| case | backend | mode / route / dtype | baseline | current | verdict |\n"
              "| --- | --- | --- | --- | --- | --- |\n", f);
        for (size_t i = 0; i < k && (int)i < o->max_rows; i++) {
            const hb_cmp_case *c = sel[i];
            md_case_cells(f, c);
            md_status_cell(f, c->status_base, c->med_base);
            md_status_cell(f, c->status_cur, c->med_cur);
            fprintf(f, "| %s |\n", verdict_names[c->verdict]);
        }
        if ((int)k > o->max_rows) fprintf(f, "\n... and %zu more.\n", k - (size_t)o->max_rows);
        fputs("\n</details>\n\n", f);
    }

    fprintf(f, "Method: per case, the ratio of medians of the raw `%s` samples (current / baseline; "
               "> 1 is slower), its %g%% percentile-bootstrap CI (%d resamples) and a two-sided "
               "Mann-Whitney U test; p-values adjusted by Benjamini-Hochberg over the %zu compared cases "
               "(FDR %g). A regression needs p (BH) <= %g and %s above 1 + threshold (",
            o->metric, o->confidence * 100, o->resamples, r->tested, o->alpha, o->alpha,
            o->rule_point ? "the ratio" : "the whole CI");
    md_thresholds(f, o);
    fputs(")", f);
    if (o->min_delta > 0) fprintf(f, " and an absolute change over %s", hb_fmt_time(o->min_delta, t1, sizeof t1));
    fputs("; when both runs have several passes (`hybench run --passes`, separate processes), also every "
          "pass of the slower run beyond every pass of the other by the threshold", f);
    fputs(". A case that became wrong or crashed, lost its ok status, or went missing fails the gate "
          "whatever its speed.\n", f);
    free(sel);
    return ferror(f) ? HB_EDEVICE : HB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* JSON                                                                                         */
/* ------------------------------------------------------------------------------------------ */

static json_t *jnum(double x) { return isfinite(x) ? json_real(x) : json_null(); }
static json_t *jstr_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *run_json(const hb_run *r)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:I}",
                     "file", jstr_or_null(r->path), "run_id", jstr_or_null(g_run_id(r)),
                     "git_commit", jstr_or_null(g_commit(r)), "date", jstr_or_null(g_date(r)),
                     "host", jstr_or_null(g_host(r)), "cpu_model", jstr_or_null(g_cpu(r)),
                     "cases", (json_int_t)json_array_size(r->cases));
}

json_t *hb_cmp_to_json(const hb_cmp_result *r, const hb_run *base, const hb_run *cur,
                       const hb_cmp_options *o)
{
    json_t *thr = json_object();
    json_object_set_new(thr, "default", json_real(o->threshold));
    for (int i = 0; i < o->nper_backend; i++)
        json_object_set_new(thr, o->per_backend[i].backend, json_real(o->per_backend[i].threshold));
    json_t *opts = json_pack("{s:s, s:o, s:f, s:f, s:i, s:I, s:s, s:f, s:I, s:b}",
                             "metric", o->metric, "thresholds", thr, "alpha", o->alpha,
                             "confidence", o->confidence, "bootstrap", o->resamples,
                             "seed", (json_int_t)o->seed, "rule", o->rule_point ? "point" : "ci",
                             "min_delta_s", o->min_delta, "min_samples", (json_int_t)o->min_samples,
                             "allow_missing", o->allow_missing);
    json_t *counts = json_object();
    for (int v = 0; v < HB_CMP_VERDICT_COUNT; v++)
        json_object_set_new(counts, verdict_names[v], json_integer((json_int_t)r->count[v]));
    json_t *summary = json_pack("{s:s, s:i, s:I, s:I, s:o, s:o, s:f}",
                                "verdict", r->fails ? "fail" : "pass", "fails", r->fails,
                                "matched", (json_int_t)r->matched, "tested", (json_int_t)r->tested,
                                "counts", counts, "shift", jnum(r->shift), "elapsed_s", r->elapsed_s);
    json_object_set_new(summary, "noise_max", jnum(r->noise_max));
    json_object_set_new(opts, "noise_scale", json_real(o->noise_k));
    json_t *cases = json_array();
    for (size_t i = 0; i < r->n; i++) {
        const hb_cmp_case *c = &r->cases[i];
        json_t *j = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:o,"
                              " s:o, s:o, s:o, s:o, s:o, s:f, s:s, s:b}",
                              "key", c->key, "op", jstr_or_null(c->op), "shape", jstr_or_null(c->shape_str),
                              "backend", jstr_or_null(c->backend), "mode", jstr_or_null(c->mode),
                              "route", jstr_or_null(c->route), "dtype", jstr_or_null(c->dtype),
                              "status_base", jstr_or_null(c->status_base),
                              "status_cur", jstr_or_null(c->status_cur),
                              "n_base", (json_int_t)c->n_base, "n_cur", (json_int_t)c->n_cur,
                              "median_base_s", jnum(c->med_base), "median_cur_s", jnum(c->med_cur),
                              "ratio", jnum(c->ratio), "ci_lo", jnum(c->ci_lo), "ci_hi", jnum(c->ci_hi),
                              "p", jnum(c->p), "q", jnum(c->q), "threshold", c->threshold,
                              "verdict", verdict_names[c->verdict],
                              "fails", hb_cmp_verdict_fails(c->verdict, o));
        if (!j) { json_decref(cases); json_decref(opts); json_decref(summary); return NULL; }
        const char *reason = c->cur ? jstr(c->cur, "reason") : NULL;
        if (reason) json_object_set_new(j, "reason", json_string(reason));
        json_object_set_new(j, "noise", jnum(c->noise));
        if (c->passes_base || c->passes_cur)
            json_object_set_new(j, "passes", json_pack("{s:i,s:i,s:o,s:o,s:o,s:o,s:b}", "base", c->passes_base, "cur",
                                                       c->passes_cur, "base_fastest_s", jnum(c->pass_lo_base),
                                                       "base_slowest_s", jnum(c->pass_hi_base), "cur_fastest_s",
                                                       jnum(c->pass_lo_cur), "cur_slowest_s", jnum(c->pass_hi_cur),
                                                       "within_pass_spread", c->pass_overlap));
        json_array_append_new(cases, j);
    }
    return json_pack("{s:s, s:s, s:i, s:o, s:o, s:o, s:o, s:o}", "tool", "hybench compare",
                     "tool_version", HB_VERSION, "schema", 1, "baseline", run_json(base),
                     "current", run_json(cur), "options", opts, "summary", summary, "cases", cases);
}

/* ------------------------------------------------------------------------------------------ */
/* JUnit XML                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* XML 1.0 text/attribute escaping; control characters not allowed in XML 1.0 become '?'. */
static void xml_put(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        switch (*p) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') fputc('?', f);
            else fputc(*p, f);
        }
    }
}

static int cmp_backend_key(const void *a, const void *b)
{
    const hb_cmp_case *x = *(const hb_cmp_case *const *)a, *y = *(const hb_cmp_case *const *)b;
    int c = strcmp(nz(x->backend), nz(y->backend));
    return c ? c : strcmp(x->key, y->key);
}

static void junit_name(FILE *f, const hb_cmp_case *c)
{
    char buf[400];
    const char *hash = strchr(c->key, '#');
    snprintf(buf, sizeof buf, "%s %s [%s/%s/%s]%s%s", nz(c->op), c->shape_str ? c->shape_str : "",
             nz(c->mode), nz(c->route), nz(c->dtype), hash ? " " : "", hash ? hash : "");
    xml_put(f, buf);
}

hb_status hb_cmp_write_junit(FILE *f, const hb_cmp_result *r, const hb_run *base,
                             const hb_run *cur, const hb_cmp_options *o)
{
    const hb_cmp_case **v = malloc((r->n + 1) * sizeof *v);
    if (!v) return HB_ENOMEM;
    for (size_t i = 0; i < r->n; i++) v[i] = &r->cases[i];
    qsort(v, r->n, sizeof *v, cmp_backend_key);
    size_t nskip = 0;
    for (size_t i = 0; i < r->n; i++)
        if (v[i]->verdict == HB_CMP_STILL_BAD || v[i]->verdict == HB_CMP_INSUFFICIENT ||
            (v[i]->verdict == HB_CMP_MISSING && o->allow_missing)) nskip++;
    char t1[32], t2[32], t3[32], t4[32], t5[32], t6[32];
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f, "<testsuites name=\"hybench compare\" tests=\"%zu\" failures=\"%d\" errors=\"0\" "
               "skipped=\"%zu\" time=\"%.3f\">\n", r->n, r->fails, nskip, r->elapsed_s);
    for (size_t i = 0; i < r->n;) {
        size_t j = i;
        int fails = 0;
        size_t skips = 0;
        while (j < r->n && !strcmp(nz(v[j]->backend), nz(v[i]->backend))) {
            fails += hb_cmp_verdict_fails(v[j]->verdict, o);
            skips += v[j]->verdict == HB_CMP_STILL_BAD || v[j]->verdict == HB_CMP_INSUFFICIENT ||
                     (v[j]->verdict == HB_CMP_MISSING && o->allow_missing);
            j++;
        }
        fputs("  <testsuite name=\"hybench.compare.", f);
        xml_put(f, nz(v[i]->backend));
        fprintf(f, "\" tests=\"%zu\" failures=\"%d\" errors=\"0\" skipped=\"%zu\">\n", j - i, fails, skips);
        if (i == 0) {
            fputs("    <properties>\n", f);
            const char *props[][2] = {
                { "baseline", base->path }, { "current", cur->path },
                { "baseline_run", g_run_id(base) }, { "current_run", g_run_id(cur) },
                { "baseline_commit", g_commit(base) }, { "current_commit", g_commit(cur) },
                { "metric", o->metric }, { "host", g_host(cur) },
            };
            for (size_t p = 0; p < sizeof props / sizeof props[0]; p++) {
                fputs("      <property name=\"", f);
                xml_put(f, props[p][0]);
                fputs("\" value=\"", f);
                xml_put(f, props[p][1] ? props[p][1] : "");
                fputs("\"/>\n", f);
            }
            fputs("    </properties>\n", f);
        }
        for (size_t k = i; k < j; k++) {
            const hb_cmp_case *c = v[k];
            fputs("    <testcase classname=\"hybench.", f);
            xml_put(f, nz(c->backend));
            fputc('.', f);
            xml_put(f, nz(c->op));
            fputs("\" name=\"", f);
            junit_name(f, c);
            fprintf(f, "\" time=\"%.9f\">\n", isfinite(c->med_cur) ? c->med_cur : 0.0);
            char msg[512];
            snprintf(msg, sizeof msg, "%s: baseline %s (%s), current %s (%s), change %s, CI %s .. %s, p(BH) %s, threshold %g%%",
                     verdict_names[c->verdict], c->status_base ? c->status_base : "absent",
                     hb_fmt_time(c->med_base, t1, sizeof t1), c->status_cur ? c->status_cur : "absent",
                     hb_fmt_time(c->med_cur, t2, sizeof t2), fmt_pct(c->ratio, t3, sizeof t3),
                     fmt_pct(c->ci_lo, t4, sizeof t4), fmt_pct(c->ci_hi, t5, sizeof t5),
                     fmt_p(c->q, t6, sizeof t6), c->threshold * 100);
            if (hb_cmp_verdict_fails(c->verdict, o)) {
                fprintf(f, "      <failure type=\"%s\" message=\"", verdict_names[c->verdict]);
                xml_put(f, msg);
                fputs("\">", f);
                xml_put(f, c->key);
                const char *reason = c->cur ? jstr(c->cur, "reason") : NULL;
                if (reason) { fputs("\n", f); xml_put(f, reason); }
                fputs("</failure>\n", f);
            } else if (c->verdict == HB_CMP_STILL_BAD || c->verdict == HB_CMP_INSUFFICIENT ||
                       (c->verdict == HB_CMP_MISSING && o->allow_missing)) {
                fputs("      <skipped message=\"", f);
                xml_put(f, msg);
                fputs("\"/>\n", f);
            } else {
                fputs("      <system-out>", f);
                xml_put(f, msg);
                fputs("</system-out>\n", f);
            }
            fputs("    </testcase>\n", f);
        }
        fputs("  </testsuite>\n", f);
        i = j;
    }
    fputs("</testsuites>\n", f);
    free(v);
    return ferror(f) ? HB_EDEVICE : HB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* the command                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static void compare_usage(FILE *f)
{
    fputs("usage: hybench compare [options] BASELINE CURRENT\n"
          "       hybench compare [options] --baseline-dir DIR CURRENT\n"
          "Decide whether CURRENT (a results .jsonl) is slower than BASELINE, case by case.\n"
          "Exit status: 0 pass, 1 regression or a case that became wrong/crashed/lost/missing,\n"
          "             2 usage or unreadable input, 3 incomparable (other machine or schema; --force).\n"
          "  --baseline-dir DIR   use DIR/<host of CURRENT>.jsonl (hybench baseline set); BASELINE may\n"
          "                       also be such a directory\n"
          "  --metric total|compute   samples to compare (default total: end-to-end time per call)\n"
          "  --threshold PCT      minimum slowdown that counts (default 5%); repeat BACKEND=PCT for a\n"
          "                       backend type or instance, e.g. --threshold 5% --threshold cuda=3%\n"
          "  --alpha Q            false discovery rate, Benjamini-Hochberg (default 0.05)\n"
          "  --confidence C       bootstrap CI level (default 0.95)\n"
          "  --bootstrap N        bootstrap resamples (default 2000)\n"
          "  --seed S             bootstrap seed (default fixed; results are deterministic)\n"
          "  --rule ci|point      ci (default): the CI must lie beyond 1+threshold; point: the ratio\n"
          "  --min-delta SECONDS  never flag a change smaller than this absolute time (default 0)\n"
          "  --min-samples N      fewer samples on a side: not compared (default 3)\n"
          "  --allow-missing      cases absent from CURRENT do not fail the gate\n"
          "  --force              compare runs of different machines or schemas\n"
          "  --markdown FILE      Markdown report (default: stdout); --json FILE; --junit FILE\n"
          "                       ('-' is stdout)\n"
          "  --max-rows N         rows per Markdown table (default 50)\n"
          "  --noise-scale K      raise each backend's threshold to exp(K*s)-1, s = the robust spread\n"
          "                       of log(ratio) over that backend's cases (between-run noise; default\n"
          "                       0 = off; 3 to 5 for a shared machine). Reported in every output.\n"
          "  --quiet              no Markdown on stdout when no --markdown is given\n", f);
}

/* Value of option argv[*i] ("--opt=V" or "--opt V"); NULL if it is not `name`. */
static const char *optval(int argc, char **argv, int *i, const char *name, int *missing)
{
    size_t l = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, l)) return NULL;
    if (a[l] == '=') return a + l + 1;
    if (a[l]) return NULL;
    if (*i + 1 >= argc) { *missing = 1; return NULL; }
    return argv[++*i];
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static FILE *open_out(const char *path)
{
    if (!strcmp(path, "-")) return stdout;
    return fopen(path, "w");
}

static int close_out(FILE *f)
{
    if (f == stdout) return fflush(f);
    return fclose(f);
}

int hb_cmd_compare(int argc, char **argv)
{
    hb_cmp_options o;
    hb_cmp_options_default(&o);
    const char *pos[2] = { NULL, NULL };
    int npos = 0, quiet = 0;
    const char *bdir = NULL, *md = NULL, *js = NULL, *ju = NULL;
    char err[512];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int miss = 0, numchk = 0;
        char *end = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { compare_usage(stdout); return HB_EXIT_OK; }
        else if ((v = optval(argc, argv, &i, "--baseline-dir", &miss))) bdir = v;
        else if ((v = optval(argc, argv, &i, "--metric", &miss))) {
            if (strcmp(v, "total") && strcmp(v, "compute")) {
                fprintf(stderr, "hybench compare: --metric must be total or compute\n");
                return HB_EXIT_USAGE;
            }
            o.metric = v;
        } else if ((v = optval(argc, argv, &i, "--threshold", &miss))) {
            if (hb_cmp_parse_threshold(&o, v, err, sizeof err) != HB_OK) {
                fprintf(stderr, "hybench compare: %s\n", err);
                return HB_EXIT_USAGE;
            }
        } else if ((v = optval(argc, argv, &i, "--alpha", &miss))) o.alpha = strtod(v, &end), numchk = 1;
        else if ((v = optval(argc, argv, &i, "--confidence", &miss))) o.confidence = strtod(v, &end), numchk = 1;
        else if ((v = optval(argc, argv, &i, "--bootstrap", &miss))) o.resamples = (int)strtol(v, &end, 10), numchk = 1;
        else if ((v = optval(argc, argv, &i, "--seed", &miss))) o.seed = strtoull(v, &end, 0), numchk = 1;
        else if ((v = optval(argc, argv, &i, "--min-delta", &miss))) o.min_delta = strtod(v, &end), numchk = 1;
        else if ((v = optval(argc, argv, &i, "--min-samples", &miss))) o.min_samples = (size_t)strtoul(v, &end, 10), numchk = 1;
        else if ((v = optval(argc, argv, &i, "--max-rows", &miss))) o.max_rows = (int)strtol(v, &end, 10), numchk = 1;
        else if ((v = optval(argc, argv, &i, "--noise-scale", &miss))) o.noise_k = strtod(v, &end), numchk = 1;
        else if ((v = optval(argc, argv, &i, "--rule", &miss))) {
            if (!strcmp(v, "ci")) o.rule_point = 0;
            else if (!strcmp(v, "point")) o.rule_point = 1;
            else { fprintf(stderr, "hybench compare: --rule must be ci or point\n"); return HB_EXIT_USAGE; }
        } else if ((v = optval(argc, argv, &i, "--markdown", &miss))) md = v;
        else if ((v = optval(argc, argv, &i, "--json", &miss))) js = v;
        else if ((v = optval(argc, argv, &i, "--junit", &miss))) ju = v;
        else if (!strcmp(a, "--allow-missing")) o.allow_missing = 1;
        else if (!strcmp(a, "--force")) o.force = 1;
        else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) quiet = 1;
        else if (!miss && a[0] == '-' && a[1]) {
            fprintf(stderr, "hybench compare: unknown option %s\n", a);
            compare_usage(stderr);
            return HB_EXIT_USAGE;
        } else if (!miss) {
            if (npos == 2) { fprintf(stderr, "hybench compare: too many files\n"); return HB_EXIT_USAGE; }
            pos[npos++] = a;
        }
        if (miss) { fprintf(stderr, "hybench compare: %s needs a value\n", a); return HB_EXIT_USAGE; }
        if (numchk && (end == v || *end || v[0] == '-')) {
            fprintf(stderr, "hybench compare: %s: not a valid non-negative number: %s\n", a, v);
            return HB_EXIT_USAGE;
        }
    }
    if (npos == 2 && is_dir(pos[0]) && !bdir) { bdir = pos[0]; pos[0] = pos[1]; npos = 1; }
    if (!((npos == 2 && !bdir) || (npos == 1 && bdir))) {
        compare_usage(stderr);
        return HB_EXIT_USAGE;
    }
    if (o.max_rows < 1) o.max_rows = 1;
    hb_run base, cur;
    const char *cur_path = pos[npos - 1];
    char bpath[4096], bjson[4096], err2[512];
    const char *base_path = pos[0];
    if (!bdir) {
        /* two independent files: parse them in parallel (jansson values are per-thread here;
         * seeding its hash function first makes that safe) */
        hb_status s1 = HB_OK, s2 = HB_OK;
        json_object_seed(0);
        #pragma omp parallel sections num_threads(2)
        {
            #pragma omp section
            s1 = hb_run_load(cur_path, &cur, err, sizeof err);
            #pragma omp section
            s2 = hb_run_load(base_path, &base, err2, sizeof err2);
        }
        if (s1 != HB_OK || s2 != HB_OK) {
            if (s1 != HB_OK) fprintf(stderr, "hybench compare: %s\n", err);
            if (s2 != HB_OK) fprintf(stderr, "hybench compare: %s\n", err2);
            hb_run_free(&cur);
            hb_run_free(&base);
            return HB_EXIT_USAGE;
        }
    } else if (hb_run_load(cur_path, &cur, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench compare: %s\n", err);
        return HB_EXIT_USAGE;
    }
    if (bdir) {
        const char *host = meta_str(&cur, "host");
        if (!host) {
            fprintf(stderr, "hybench compare: %s has no meta.host to pick a baseline with\n", cur_path);
            hb_run_free(&cur);
            return HB_EXIT_USAGE;
        }
        hb_baseline_paths(bdir, host, bpath, bjson, sizeof bpath);
        base_path = bpath;
        if (hb_run_load(base_path, &base, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench compare: no usable baseline for host %s: %s (set one with: "
                            "hybench baseline set RESULTS --dir %s)\n", host, err, bdir);
            hb_run_free(&cur);
            return HB_EXIT_USAGE;
        }
    }
    int rc = HB_EXIT_OK;
    char why[512];
    if (!hb_cmp_comparable(&base, &cur, why, sizeof why)) {
        if (!o.force) {
            fprintf(stderr, "hybench compare: incomparable: %s (use --force to compare anyway)\n", why);
            hb_run_free(&base);
            hb_run_free(&cur);
            return HB_EXIT_INCOMPARABLE;
        }
        fprintf(stderr, "hybench compare: warning: %s (compared anyway: --force)\n", why);
    }
    if (!cur.end) fprintf(stderr, "hybench compare: warning: %s has no end record (the run was cut short)\n", cur_path);
    hb_cmp_result res;
    hb_status st = hb_compare_runs(&base, &cur, &o, &res, err, sizeof err);
    if (st != HB_OK) {
        fprintf(stderr, "hybench compare: %s\n", err);
        hb_run_free(&base);
        hb_run_free(&cur);
        return HB_EXIT_USAGE;
    }
    int io_fail = 0;
    if (md || !quiet) {
        FILE *f = md ? open_out(md) : stdout;
        if (!f || hb_cmp_write_markdown(f, &res, &base, &cur, &o) != HB_OK || close_out(f)) {
            fprintf(stderr, "hybench compare: cannot write %s\n", md ? md : "stdout");
            io_fail = 1;
        }
    }
    if (js) {
        json_t *j = hb_cmp_to_json(&res, &base, &cur, &o);
        int bad = !j;
        if (j) {
            if (!strcmp(js, "-")) bad = json_dumpf(j, stdout, JSON_INDENT(1)) != 0 || fputc('\n', stdout) == EOF;
            else bad = json_dump_file(j, js, JSON_INDENT(1)) != 0;
        }
        json_decref(j);
        if (bad) { fprintf(stderr, "hybench compare: cannot write %s\n", js); io_fail = 1; }
    }
    if (ju) {
        FILE *f = open_out(ju);
        if (!f || hb_cmp_write_junit(f, &res, &base, &cur, &o) != HB_OK || close_out(f)) {
            fprintf(stderr, "hybench compare: cannot write %s\n", ju);
            io_fail = 1;
        }
    }
    fprintf(stderr, "hybench compare: %s: %zu matched, %zu regressions, %zu improvements, %d gate failures "
                    "(%.2f s)\n", res.fails ? "FAIL" : "pass", res.matched, res.count[HB_CMP_REGRESSION],
            res.count[HB_CMP_IMPROVEMENT], res.fails, res.elapsed_s);
    rc = res.fails ? HB_EXIT_REGRESSION : HB_EXIT_OK;
    if (io_fail && rc == HB_EXIT_OK) rc = HB_EXIT_IO;
    hb_cmp_result_free(&res);
    hb_run_free(&base);
    hb_run_free(&cur);
    return rc;
}
