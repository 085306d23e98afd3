/* compare.c - the regression gate's mechanism (analysis/compare.h, docs/compare.md): options and
 * thresholds, matching two runs' case records by key, and the verdict of each case from its samples. */
#include "analysis/compare.h"
#include "analysis/mde.h"
#include "core/rstats.h"
#include "results/machine.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
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
            snprintf(err, errlen, "--threshold %s: expected a percentage such as 5%% or SCOPE=3%% (BACKEND, OP or BACKEND/OP)", arg);
            return HB_EINVAL;
        }
        o->threshold = v;
        return HB_OK;
    }
    char be[64] = "", op[32] = "";
    size_t sl = (size_t)(eq - arg);
    const char *slash = memchr(arg, '/', sl);
    size_t bl = slash ? (size_t)(slash - arg) : sl, ol = slash ? sl - bl - 1 : 0;
    if (sl == 0 || bl >= sizeof be || ol >= sizeof op || (slash && (bl == 0 || ol == 0)) || parse_fraction(eq + 1, &v)) {
        snprintf(err, errlen, "--threshold %s: expected SCOPE=PERCENT with SCOPE a backend, an op or BACKEND/OP, e.g. cuda=3%%, "
                 "dequantize=4%%, cuda/dequantize=4%%", arg);
        return HB_EINVAL;
    }
    memcpy(be, arg, bl);
    if (slash) {
        memcpy(op, slash + 1, ol);
        if (hb_op_parse(op) < 0) {
            snprintf(err, errlen, "--threshold %s: %s is not an op name (docs/workloads.md lists them: add, matmul, dequantize, ...)", arg, op);
            return HB_EINVAL;
        }
    } else if (hb_op_parse(be) >= 0) { /* an op's name: every backend's cases of it */
        memcpy(op, be, sizeof op - 1 < bl ? sizeof op - 1 : bl);
        be[0] = 0;
    }
    int i;
    for (i = 0; i < o->nper_backend; i++)
        if (!strcmp(o->per_backend[i].backend, be) && !strcmp(o->per_backend[i].op, op)) break;
    if (i == o->nper_backend) {
        if (o->nper_backend == HB_CMP_MAX_BACKEND_THRESHOLDS) {
            snprintf(err, errlen, "--threshold: more than %d scoped thresholds", HB_CMP_MAX_BACKEND_THRESHOLDS);
            return HB_EINVAL;
        }
        o->nper_backend++;
        snprintf(o->per_backend[i].backend, sizeof o->per_backend[i].backend, "%s", be);
        snprintf(o->per_backend[i].op, sizeof o->per_backend[i].op, "%s", op);
    }
    o->per_backend[i].threshold = v;
    return HB_OK;
}

/* How specifically scoped entry e names a case of op on backend (instance name): 6 instance/op,
 * 5 type/op, 4 op, 3 instance, 2 type; 0 when it does not name it. */
static int scope_rank(const char *ebe, const char *eop, const char *backend, const char *op)
{
    if (*eop && (!op || strcmp(eop, op))) return 0;
    int be = 0; /* 2 the instance, 1 the type, 0 no backend named */
    if (*ebe) {
        if (!backend) return 0;
        if (!strcmp(ebe, backend)) be = 2;
        else if (strlen(ebe) == strcspn(backend, ":") && !strncmp(ebe, backend, strlen(ebe))) be = 1;
        else return 0;
    }
    if (*eop) return be == 2 ? 6 : be == 1 ? 5 : 4;
    return be == 2 ? 3 : be == 1 ? 2 : 0;
}

double hb_cmp_threshold_for(const hb_cmp_options *o, const char *backend, const char *op)
{
    double t = o->threshold;
    int best = 0;
    for (int i = 0; i < o->nper_backend; i++) {
        int r = scope_rank(o->per_backend[i].backend, o->per_backend[i].op, backend, op);
        if (r > best) { best = r; t = o->per_backend[i].threshold; }
    }
    return t;
}

static const char *const verdict_names[HB_CMP_VERDICT_COUNT] = {
    "unchanged", "regression", "improvement", "wrong", "crashed", "lost", "missing", "new", "fixed",
    "still_bad", "insufficient", "skipped"
};

const char *hb_cmp_verdict_name(hb_cmp_verdict v)
{
    return (unsigned)v < HB_CMP_VERDICT_COUNT ? verdict_names[v] : "?";
}

const char *hb_cmp_outcome_name(hb_cmp_outcome v)
{
    return v == HB_CMP_FAIL ? "fail" : v == HB_CMP_INCONCLUSIVE ? "inconclusive" : "pass";
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

static int streq_null(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return !strcmp(a, b);
}

hb_cmp_comparability hb_cmp_comparable(const hb_run *a, const hb_run *b, char *why, size_t whylen, char *note,
                                       size_t notelen)
{
    if (whylen) why[0] = 0;
    if (note && notelen) note[0] = 0;
    if (!a->meta || !b->meta) {
        snprintf(why, whylen, "%s has no meta record: cannot tell which machine it comes from",
                 !a->meta ? a->path : b->path);
        return HB_CMP_OTHER_SCHEMA;
    }
    const hb_rec_meta *ma = a->meta_rec, *mb = b->meta_rec;
    int sa = ma && ma->has_schema, sb = mb && mb->has_schema;
    if (!sa || !sb) {
        if (!sa && !sb && a->path && b->path && !strcmp(a->path, b->path))
            snprintf(why, whylen, "%s: its meta record has no \"schema\"", a->path);
        else if (!sa && !sb)
            snprintf(why, whylen, "%s and %s: their meta records have no \"schema\"", a->path, b->path);
        else
            snprintf(why, whylen, "%s: its meta record has no \"schema\" (%s says schema %lld)", !sa ? a->path : b->path,
                     !sa ? b->path : a->path, sa ? ma->schema : mb->schema);
        return HB_CMP_OTHER_SCHEMA;
    }
    if (ma->schema != mb->schema) { /* integers (the reader checks): equal as JSON when equal here */
        snprintf(why, whylen, "schema versions differ (%s: %lld, %s: %lld)", a->path,
                 ma->schema, b->path, mb->schema);
        return HB_CMP_OTHER_SCHEMA;
    }
    char ta[4096], tb[4096], ia[17], ib[17];
    hb_machine_fingerprint(a->meta, a->backends, ta, sizeof ta, ia, sizeof ia);
    hb_machine_fingerprint(b->meta, b->backends, tb, sizeof tb, ib, sizeof ib);
    if (strcmp(ia, ib)) {
        char diff[2048];
        hb_machine_text_diff(ta, tb, diff, sizeof diff);
        snprintf(why, whylen, "different machines: fingerprint %s (%s) vs %s (%s); what differs: %s", ia, a->path, ib,
                 b->path, diff);
        return HB_CMP_OTHER_MACHINE;
    }
    const char *ha = ma->host, *hb = mb->host;
    if (note && !streq_null(ha, hb))
        snprintf(note, notelen, "host \"%s\" vs \"%s\": one machine by its fingerprint %s (a host name is no "
                 "machine's identity)", ha ? ha : "?", hb ? hb : "?", ia);
    return HB_CMP_COMPARABLE;
}

int hb_cmp_interleaved(const hb_run *a, const hb_run *b)
{
    const char *pa = a->meta_rec ? a->meta_rec->ab.pair : NULL;
    const char *pb = b->meta_rec ? b->meta_rec->ab.pair : NULL;
    return pa && pb && !strcmp(pa, pb);
}

/* Finite samples of rec's samples.<metric>, in a new array (caller frees). *n = count. */
static double *get_samples(const hb_rec_case *rec, const char *metric, size_t *n)
{
    int ph = hb_rec_phase_index(metric);
    const hb_rec_nums *a = rec && ph >= 0 ? &rec->samples[ph] : NULL;
    size_t m = a ? a->n : 0, k = 0;
    *n = 0;
    double *x = malloc((m ? m : 1) * sizeof *x);
    if (!x) return NULL;
    for (size_t i = 0; i < m; i++) {
        double d = a->v[i]; /* NaN: not a number in the record */
        if (isfinite(d) && d >= 0) x[k++] = d;
    }
    *n = k;
    return x;
}

static int status_is(const char *s, const char *name) { return s && !strcmp(s, name); }

/* Fastest and slowest of rec's pass_medians.<metric> (written by `hybench run --passes`); returns
 * how many passes had a median (0 when the record has none: a single-pass run). */
static int pass_range(const hb_rec_case *rec, const char *metric, double *lo, double *hi)
{
    int ph = hb_rec_phase_index(metric);
    const hb_rec_nums *a = rec && ph >= 0 ? &rec->pass_medians[ph] : NULL;
    int n = 0;
    *lo = NAN;
    *hi = NAN;
    for (size_t i = 0; a && i < a->n; i++) {
        double d = a->v[i];
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

typedef struct entry { char key[256]; size_t idx; const hb_rec_case *rec; } entry;

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
    size_t m = r->ncase_recs, k = 0;
    entry *e = calloc(m ? m : 1, sizeof *e);
    *n = 0;
    *nokey = 0;
    if (!e) return NULL;
    for (size_t i = 0; i < m; i++) {
        const hb_rec_case *c = &r->case_recs[i];
        const char *key = c->key;
        if (!key) { (*nokey)++; continue; }
        snprintf(e[k].key, sizeof e[k].key, "%s", key);
        e[k].idx = i;
        e[k].rec = c;
        k++;
    }
    qsort(e, k, sizeof *e, cmp_entry);
    int rep = 0;
    for (size_t i = 0; i < k; i++) {
        if (i > 0 && !strcmp(e[i].rec->key, e[i - 1].rec->key)) rep++;
        else rep = 0;
        if (rep > 0) {
            char tmp[256];
            snprintf(tmp, sizeof tmp, "%.240s#%d", e[i].rec->key, rep + 1);
            memcpy(e[i].key, tmp, sizeof tmp);
        }
    }
    qsort(e, k, sizeof *e, cmp_entry);
    *n = k;
    return e;
}

void hb_cmp_fill_labels(hb_cmp_case *c)
{
    const hb_rec_case *r = c->cur ? c->cur : c->base;
    c->backend = r ? r->backend : NULL;
    c->op = r ? r->op : NULL;
    c->shape_str = r ? r->shape_str : NULL;
    c->mode = r ? r->mode : NULL;
    c->route = r ? r->route : NULL;
    c->dtype = r ? r->dtype : NULL;
    c->status_base = c->base ? c->base->status : NULL;
    c->status_cur = c->cur ? c->cur->status : NULL;
}

hb_cmp_verdict hb_cmp_status_verdict(const char *sb, const char *sc)
{
    if (status_is(sc, "wrong") && !status_is(sb, "wrong")) return HB_CMP_WRONG;
    if (status_is(sc, "crashed") && !status_is(sb, "crashed")) return HB_CMP_CRASHED;
    if (status_is(sb, "ok")) return HB_CMP_LOST;
    if (status_is(sc, "ok")) return HB_CMP_FIXED;
    if (status_is(sb, "skipped") && status_is(sc, "skipped")) return HB_CMP_SKIPPED;
    return HB_CMP_STILL_BAD;
}

int hb_cmp_case_undecided(const hb_cmp_case *c)
{
    return c->verdict == HB_CMP_INSUFFICIENT ||
           (isfinite(c->p) && c->verdict != HB_CMP_REGRESSION && !(c->ci_hi <= 1 + c->threshold));
}

/* Status-only verdict; returns 1 when both runs measured the case (statistics needed). */
static int classify_status(hb_cmp_case *c)
{
    const char *sb = c->status_base, *sc = c->status_cur;
    if (c->base && c->cur) {
        int okb = status_is(sb, "ok"), okc = status_is(sc, "ok");
        if (okb && okc) return 1;
        c->verdict = hb_cmp_status_verdict(sb, sc);
    } else if (c->base) {
        c->verdict = status_is(sb, "ok") ? HB_CMP_MISSING : HB_CMP_STILL_BAD;
    } else {
        if (status_is(sc, "wrong")) c->verdict = HB_CMP_WRONG;
        else if (status_is(sc, "crashed")) c->verdict = HB_CMP_CRASHED;
        else c->verdict = HB_CMP_NEW;
    }
    return 0;
}

static double phase_median(const hb_rec_case *rec, const char *metric)
{
    int ph = hb_rec_phase_index(metric);
    return rec && ph >= 0 ? rec->phase[ph].median : (double)NAN;
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
    /* the standard error of the log ratio and the exact test's floor, for the MDE (mde.h) */
    double *lg = malloc((nb > nc ? nb : nc) * sizeof *lg);
    if (!lg) { st = HB_ENOMEM; goto out; }
    for (size_t i = 0; i < nb; i++) lg[i] = log(b[i] > 0 ? b[i] : c->med_base);
    double sb = hb_mde_spread(lg, nb);
    for (size_t i = 0; i < nc; i++) lg[i] = log(x[i] > 0 ? x[i] : c->med_cur);
    double sc = hb_mde_spread(lg, nc);
    free(lg);
    c->mde_se = sqrt(sb * sb / (double)nb + sc * sc / (double)nc);
    c->mde_floor = hb_mde_floor_mann_whitney(nb, nc);
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
        k->med_base = k->med_cur = k->ratio = k->ci_lo = k->ci_hi = k->p = k->q = k->mde = NAN;
        k->mde_se = k->mde_floor = NAN;
        if (c == 0) { snprintf(k->key, sizeof k->key, "%s", eb[i].key); k->base = eb[i++].rec; k->cur = ec[j++].rec; res->matched++; }
        else if (c < 0) { snprintf(k->key, sizeof k->key, "%s", eb[i].key); k->base = eb[i++].rec; }
        else { snprintf(k->key, sizeof k->key, "%s", ec[j].key); k->cur = ec[j++].rec; }
        hb_cmp_fill_labels(k);
        k->threshold = hb_cmp_threshold_for(o, k->backend, k->op);
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
    for (size_t a = 0; a < n; a++)
        if (isnan(pv[a])) cs[a].mde_se = NAN;
    hb_cmp_finish(res, o);
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

/* The op family of case c: hb_family_name of its op, or the op itself (a whole-run case). */
static const char *family_of(const hb_cmp_case *c)
{
    int op = c->op ? hb_op_parse(c->op) : -1;
    return op >= 0 ? hb_family_name(hb_op_get((hb_op)op)->family) : c->op ? c->op : "?";
}

/* The MDE of case c when k of the m tested cases change together (mde.h). */
static double case_mde(const hb_cmp_case *c, const hb_cmp_options *o, size_t m, size_t k)
{
    if (!isfinite(c->p) || isnan(c->mde_se)) return NAN;
    hb_mde_in mi = {c->mde_se, o->alpha, m, k, o->confidence, c->threshold, o->rule_point, c->mde_floor};
    return hb_mde(&mi);
}

void hb_cmp_finish(hb_cmp_result *res, const hb_cmp_options *o)
{
    memset(res->count, 0, sizeof res->count);
    res->fails = 0;
    res->undecided = 0;
    res->nfam = 0;
    for (size_t a = 0; a < res->n; a++) {
        hb_cmp_case *c = &res->cases[a];
        res->count[c->verdict]++;
        if (hb_cmp_verdict_fails(c->verdict, o)) res->fails++;
        res->undecided += hb_cmp_case_undecided(c);
        c->mde = case_mde(c, o, res->tested, 1);
    }
    res->outcome = res->fails ? HB_CMP_FAIL
                 : res->undecided || (res->min_rounds > 0 && res->rounds < res->min_rounds) ? HB_CMP_INCONCLUSIVE
                 : HB_CMP_PASS;
    /* per op family: the median over its tested cases of the MDE of a change of the whole family */
    const int maxfam = (int)(sizeof res->fam / sizeof res->fam[0]);
    double *v = malloc((res->n + 1) * sizeof *v);
    if (!v) return;
    for (size_t a = 0; a < res->n && res->nfam < maxfam; a++) {
        const hb_cmp_case *c = &res->cases[a];
        if (isnan(c->mde)) continue;
        const char *fam = family_of(c);
        int f;
        for (f = 0; f < res->nfam && strcmp(res->fam[f].family, fam); f++) {}
        if (f < res->nfam) continue; /* done already */
        size_t k = 0;
        for (size_t b = a; b < res->n; b++) k += !isnan(res->cases[b].mde) && !strcmp(family_of(&res->cases[b]), fam);
        size_t nv = 0;
        for (size_t b = a; b < res->n; b++)
            if (!isnan(res->cases[b].mde) && !strcmp(family_of(&res->cases[b]), fam))
                v[nv++] = case_mde(&res->cases[b], o, res->tested, k);
        qsort(v, nv, sizeof *v, cmp_dbl);
        snprintf(res->fam[res->nfam].family, sizeof res->fam[0].family, "%s", fam);
        res->fam[res->nfam].cases = k;
        res->fam[res->nfam].mde = nv & 1 ? v[nv / 2] : 0.5 * (v[nv / 2 - 1] + v[nv / 2]);
        res->nfam++;
    }
    free(v);
}

void hb_cmp_result_free(hb_cmp_result *r)
{
    if (!r) return;
    free(r->cases);
    memset(r, 0, sizeof *r);
}

