/* modecheck.c - the mode-invariance self-check of a run. The rule and its constants: modecheck.h. */
#include "analysis/modecheck.h"
#include "results/results.h"
#include "core/rstats.h"
#include "core/strmap.h"
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DNAN ((double)NAN) /* NAN is a float constant */

const char *hb_mc_verdict_name(hb_mc_verdict v)
{
    switch (v) {
    case HB_MC_INVARIANT: return "invariant";
    case HB_MC_MOVED: return "moved";
    case HB_MC_NOISY: return "noisy";
    }
    return "?";
}

/* finite values of x[n] into a new sorted array (*m of them); NULL when out of memory */
static double *finite_sorted(const double *x, size_t n, size_t *m)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    *m = 0;
    if (!v) return NULL;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i])) v[(*m)++] = x[i];
    hb_rs_sort(v, *m);
    return v;
}

hb_status hb_mc_classify(const double *ref, size_t nref, const double *cur, size_t ncur, uint64_t seed,
                         unsigned flags, hb_mc_result *out)
{
    *out = (hb_mc_result){ .ratio = DNAN, .lo = DNAN, .hi = DNAN, .ref_median = DNAN, .median = DNAN,
                           .nref = 0, .ncur = 0, .has_ci = 0, .verdict = HB_MC_NOISY };
    size_t nr = 0, nc = 0;
    double *r = finite_sorted(ref, ref ? nref : 0, &nr), *c = finite_sorted(cur, cur ? ncur : 0, &nc);
    hb_status st = HB_OK;
    if (!r || !c) { st = HB_ENOMEM; goto done; }
    out->nref = nr;
    out->ncur = nc;
    if (!nr || !nc) { st = HB_EINVAL; goto done; }
    out->ref_median = hb_rs_median_sorted(r, nr);
    out->median = hb_rs_median_sorted(c, nc);
    if (!(out->ref_median > 0) || !(out->median > 0)) { st = HB_EINVAL; goto done; }
    out->ratio = out->median / out->ref_median;
    int within = fabs(out->ratio - 1.0) <= HB_MC_TOL;
    if (nr >= HB_MC_MIN_SAMPLES && nc >= HB_MC_MIN_SAMPLES && !(within && (flags & HB_MC_CI_BEYOND_TOL))) {
        double ratio, lo, hi;
        st = hb_rs_bootstrap_ratio(r, nr, c, nc, HB_MC_RESAMPLES, HB_MC_CONF, seed, &ratio, &lo, &hi);
        if (st != HB_OK) goto done;
        out->lo = lo;
        out->hi = hi;
        out->has_ci = 1;
    }
    if (within) out->verdict = HB_MC_INVARIANT;
    else if (out->has_ci && (out->lo > 1.0 || out->hi < 1.0)) out->verdict = HB_MC_MOVED;
    else out->verdict = HB_MC_NOISY;
done:
    free(r);
    free(c);
    return st;
}

/* Pass pairing (see modecheck.h, "Passes"): when both records carry pass_medians.compute of the same
 * P >= 2 passes, all finite and > 0, the ratio is the median of the per-pass ratios (each pass ran
 * both modes in one process, back to back), its interval the per-pass range, and a move counts only
 * when every pass moved the same way. Returns 1 when it applied. */
static int pass_pairing(const hb_rec_case *rec, const hb_rec_case *ref, hb_mc_result *r)
{
    const hb_rec_nums *a = &rec->pass_medians[HB_PH_COMPUTE], *b = &ref->pass_medians[HB_PH_COMPUTE];
    size_t P = a->n;
    if (P < 2 || P != b->n || P > 64) return 0;
    double q[64];
    for (size_t k = 0; k < P; k++) {
        double x = a->v[k], y = b->v[k]; /* a null pass reads as NaN: refused below */
        if (!(x > 0) || !(y > 0)) return 0;
        q[k] = x / y;
    }
    for (size_t i = 1; i < P; i++) /* insertion sort: P is small */
        for (size_t j = i; j > 0 && q[j - 1] > q[j]; j--) { double t = q[j]; q[j] = q[j - 1]; q[j - 1] = t; }
    r->ratio = hb_rs_median_sorted(q, P);
    r->lo = q[0];
    r->hi = q[P - 1];
    r->has_ci = 1;
    r->npass = (int)P;
    r->nround = 0;
    if (fabs(r->ratio - 1.0) <= HB_MC_TOL) r->verdict = HB_MC_INVARIANT;
    else if ((q[0] > 1.0 + HB_MC_TOL) || (q[P - 1] < 1.0 - HB_MC_TOL)) r->verdict = HB_MC_MOVED;
    else r->verdict = HB_MC_NOISY;
    return 1;
}

/* Round pairing (see modecheck.h, "Rounds"): when the two records were measured in the same rounds
 * (both carry interleaved_with, the same best_pass or none, and as many raw compute samples, at least
 * HB_MC_MIN_SAMPLES), sample i of each was taken in round i, one right after the other: the ratio is
 * the median of the per-round ratios and its CI the percentile bootstrap of that median. Returns 1
 * when it applied, 0 when it does not apply, -1 out of memory. */
static int round_pairing(const hb_rec_case *rec, const hb_rec_case *ref, uint64_t seed, unsigned flags, hb_mc_result *r)
{
    if (!rec->has_interleaved_with || !ref->has_interleaved_with) return 0;
    if ((rec->has_best_pass || ref->has_best_pass) &&
        !(rec->best_pass_is_int && ref->best_pass_is_int && rec->best_pass == ref->best_pass))
        return 0;
    const hb_rec_nums *a = &rec->samples[HB_PH_COMPUTE], *b = &ref->samples[HB_PH_COMPUTE];
    size_t n = a->n;
    if (n < HB_MC_MIN_SAMPLES || n != b->n) return 0;
    double *q = malloc(n * sizeof *q), *m = malloc(HB_MC_RESAMPLES * sizeof *m);
    if (!q || !m) { free(q); free(m); return -1; }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double x = a->v[i], y = b->v[i];
        if (!(x > 0) || !(y > 0) || !isfinite(x) || !isfinite(y)) {
            free(q); free(m);
            return 0;
        }
        q[k++] = x / y;
    }
    hb_rs_sort(q, k);
    r->ratio = hb_rs_median_sorted(q, k);
    r->nround = (int)k;
    int within = fabs(r->ratio - 1.0) <= HB_MC_TOL;
    r->has_ci = 0;
    r->lo = r->hi = DNAN;
    if (!(within && (flags & HB_MC_CI_BEYOND_TOL)) &&
        hb_rs_bootstrap_medians(q, k, HB_MC_RESAMPLES, seed, HB_BOOT_AUTO, m) == HB_OK) {
        hb_rs_sort(m, HB_MC_RESAMPLES);
        r->lo = hb_rs_quantile_sorted(m, HB_MC_RESAMPLES, (1 - HB_MC_CONF) / 2);
        r->hi = hb_rs_quantile_sorted(m, HB_MC_RESAMPLES, (1 + HB_MC_CONF) / 2);
        r->has_ci = 1;
    }
    if (within) r->verdict = HB_MC_INVARIANT;
    else if (r->has_ci && (r->lo > 1.0 || r->hi < 1.0)) r->verdict = HB_MC_MOVED;
    else r->verdict = HB_MC_NOISY;
    free(q);
    free(m);
    return 1;
}

/* ---- grouping ---- */

/* s when a non-empty string, else dflt */
static const char *jstr(const char *s, const char *dflt) { return s && *s ? s : dflt; }

/* The compute samples of a case record into a new array (*n of them): samples.compute, or its
 * phases.compute.median as one sample when the record has no raw samples. NULL when out of memory. */
static double *record_samples(const hb_rec_case *c, size_t *n)
{
    const hb_rec_nums *a = &c->samples[HB_PH_COMPUTE];
    double *v = malloc((a->n ? a->n : 1) * sizeof *v);
    *n = 0;
    if (!v) return NULL;
    for (size_t i = 0; i < a->n; i++)
        if (!isnan(a->v[i])) v[(*n)++] = a->v[i];
    if (*n == 0) {
        double m = c->phase[HB_PH_COMPUTE].median;
        if (isfinite(m)) v[(*n)++] = m;
    }
    return v;
}

typedef struct member { const hb_rec_case *rec; const char *mode; } member;
typedef struct mgroup { char key[600]; member *m; size_t n, cap; } mgroup;

hb_status hb_mc_check(const hb_run *run, unsigned flags, hb_mc_set *out)
{
    memset(out, 0, sizeof *out);
    hb_strmap occ = {0}, index = {0};
    mgroup *g = NULL;
    size_t ng = 0, gcap = 0, npairs = 0;
    hb_status st = HB_OK;
    for (size_t i = 0; i < run->ncase_recs; i++) {
        const hb_rec_case *c = &run->case_recs[i];
        const char *type = jstr(c->type, "case");
        if (strcmp(type, "case")) continue;
        const char *mode = jstr(c->mode, NULL), *backend = jstr(c->backend, NULL), *op = jstr(c->op, NULL);
        if (!mode || !backend || !op) continue;
        char base[560], okey[600], gkey[600];
        snprintf(base, sizeof base, "%s|%s|%s|%s|%s|%s", backend, op, jstr(c->shape_str, ""), jstr(c->route, "pageable"),
                 jstr(c->dtype, "f32"), jstr(c->name, ""));
        /* occurrence of (group, mode), counted over every record so passes and retries pair up */
        snprintf(okey, sizeof okey, "%s\x1f%s", base, mode);
        size_t k = hb_strmap_get(&occ, okey, 0) + 1;
        if (hb_strmap_set(&occ, okey, k) != HB_OK) { st = HB_ENOMEM; goto done; }
        if (strcmp(jstr(c->status, ""), "ok")) continue;
        snprintf(gkey, sizeof gkey, "%s#%lld", base, (long long)k);
        size_t ix = hb_strmap_get(&index, gkey, SIZE_MAX);
        mgroup *gr;
        if (ix != SIZE_MAX) gr = &g[ix];
        else {
            if (ng == gcap) {
                size_t nc = gcap ? 2 * gcap : 64;
                mgroup *ngp = realloc(g, nc * sizeof *ngp);
                if (!ngp) { st = HB_ENOMEM; goto done; }
                g = ngp;
                gcap = nc;
            }
            gr = &g[ng];
            memset(gr, 0, sizeof *gr);
            snprintf(gr->key, sizeof gr->key, "%s", gkey);
            if (hb_strmap_set(&index, gkey, ng) != HB_OK) { st = HB_ENOMEM; goto done; }
            ng++;
        }
        if (gr->n == gr->cap) {
            size_t nc = gr->cap ? 2 * gr->cap : 4;
            member *nm = realloc(gr->m, nc * sizeof *nm);
            if (!nm) { st = HB_ENOMEM; goto done; }
            gr->m = nm;
            gr->cap = nc;
        }
        gr->m[gr->n++] = (member){ c, mode };
    }
    for (size_t k = 0; k < ng; k++) if (g[k].n > 1) npairs += g[k].n - 1;
    out->v = calloc(npairs ? npairs : 1, sizeof *out->v);
    if (!out->v) { st = HB_ENOMEM; goto done; }
    size_t n = 0;
    for (size_t k = 0; k < ng; k++) {
        if (g[k].n < 2) continue;
        size_t ref = 0;
        for (size_t j = 0; j < g[k].n; j++)
            if (!strcmp(g[k].m[j].mode, HB_MC_REF_MODE)) { ref = j; break; }
        for (size_t j = 0; j < g[k].n; j++) {
            if (j == ref) continue;
            hb_mc_pair *p = &out->v[n++];
            p->rec = g[k].m[j].rec;
            p->ref = g[k].m[ref].rec;
            snprintf(p->group, sizeof p->group, "%s", g[k].key);
        }
    }
    /* the bootstraps; a pair that cannot be formed is marked (ratio NAN) and dropped below */
    int oom = 0;
#pragma omp parallel for schedule(dynamic, 4) if (flags & HB_MC_PARALLEL) reduction(| : oom)
    for (size_t k = 0; k < n; k++) {
        hb_mc_pair *p = &out->v[k];
        size_t nr = 0, nc = 0;
        double *rs = record_samples(p->ref, &nr), *cs = record_samples(p->rec, &nc);
        char sk[700];
        snprintf(sk, sizeof sk, "%s|%s", p->group, jstr(p->rec->mode, ""));
        const uint64_t seed = HB_MC_SEED ^ hb_hash64(sk);
        hb_status s = (rs && cs) ? hb_mc_classify(rs, nr, cs, nc, seed, flags, &p->r) : HB_ENOMEM;
        if (s == HB_OK && round_pairing(p->rec, p->ref, seed, flags, &p->r) < 0) s = HB_ENOMEM;
        if (s == HB_ENOMEM) oom = 1;
        if (s != HB_OK) p->r.ratio = DNAN;
        else pass_pairing(p->rec, p->ref, &p->r);
        free(rs);
        free(cs);
    }
    if (oom) { st = HB_ENOMEM; goto done; }
    size_t w = 0;
    for (size_t k = 0; k < n; k++)
        if (isfinite(out->v[k].r.ratio)) out->v[w++] = out->v[k];
    out->n = w;
done:
    for (size_t k = 0; k < ng; k++) free(g[k].m);
    free(g);
    hb_strmap_free(&occ);
    hb_strmap_free(&index);
    if (st != HB_OK) hb_mc_set_free(out);
    return st;
}

void hb_mc_set_free(hb_mc_set *s)
{
    if (!s) return;
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* a JSON number, or null for NAN/inf (JSON has no NaN) */

json_t *hb_mc_pair_json(const hb_mc_pair *p)
{
    hb_rec_mode_check m = {
        .backend = jstr(p->rec->backend, ""), .op = jstr(p->rec->op, ""), .shape_str = jstr(p->rec->shape_str, ""),
        .name = jstr(p->rec->name, ""), .dtype = jstr(p->rec->dtype, "f32"), .route = jstr(p->rec->route, "pageable"),
        .mode = jstr(p->rec->mode, ""), .ref_mode = jstr(p->ref->mode, ""), .verdict = hb_mc_verdict_name(p->r.verdict),
        .shape = &p->rec->shape, .ratio = p->r.ratio, .ci_lo = p->r.lo, .ci_hi = p->r.hi, .has_ci = p->r.has_ci,
        .ref_median = p->r.ref_median, .median = p->r.median, .n = (long long)p->r.ncur, .ref_n = (long long)p->r.nref,
        .paired_passes = p->r.npass, .paired_rounds = p->r.nround};
    return hb_rec_mode_check_json(&m);
}

void hb_mc_tally_add(hb_mc_tally *t, const hb_mc_pair *p)
{
    double d = fabs(p->r.ratio - 1.0);
    t->pairs++;
    t->within += p->r.verdict == HB_MC_INVARIANT;
    t->moved += p->r.verdict == HB_MC_MOVED;
    t->noisy += p->r.verdict == HB_MC_NOISY;
    t->beyond_far += d > HB_MC_FAR;
    if (!t->worst || fabs(log(p->r.ratio)) > fabs(log(t->worst->r.ratio))) t->worst = p;
}

json_t *hb_mc_tally_json(const hb_mc_tally *t)
{
    json_t *worst = json_null();
    if (t->worst && (worst = hb_mc_pair_json(t->worst))) json_object_del(worst, "type");
    if (!worst) worst = json_null();
    return json_pack("{s:I,s:I,s:o,s:I,s:I,s:I,s:o}", "pairs", (json_int_t)t->pairs, "within_5pct", (json_int_t)t->within,
                     "within_5pct_share", t->pairs ? json_real((double)t->within / (double)t->pairs) : json_null(),
                     "beyond_20pct", (json_int_t)t->beyond_far, "moved", (json_int_t)t->moved, "noisy", (json_int_t)t->noisy,
                     "worst", worst);
}

/* tally of the pairs of backend (NULL: all) */
static hb_mc_tally tally_of(const hb_mc_set *s, const char *backend)
{
    hb_mc_tally t = { 0 };
    for (size_t i = 0; i < s->n; i++)
        if (!backend || !strcmp(jstr(s->v[i].rec->backend, ""), backend)) hb_mc_tally_add(&t, &s->v[i]);
    return t;
}

json_t *hb_mc_invariance_json(const hb_mc_set *s)
{
    hb_mc_tally all = tally_of(s, NULL);
    json_t *bk = json_object();
    for (size_t i = 0; bk && i < s->n; i++) {
        const char *b = jstr(s->v[i].rec->backend, "");
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) seen = !strcmp(jstr(s->v[j].rec->backend, ""), b);
        if (seen) continue;
        hb_mc_tally t = tally_of(s, b);
        json_object_set_new(bk, b, hb_mc_tally_json(&t));
    }
    if (!bk) return NULL;
    return json_pack("{s:s,s:f,s:f,s:f,s:i,s:s,s:o,s:o}",
                     "rule", "compute median of each mode / of f32 (else the group's first mode), same backend, op, shape, "
                             "route, dtype and name; invariant: within tolerance; moved: beyond it and the 95% bootstrap CI "
                             "excludes 1; noisy: beyond it, CI includes 1 or absent",
                     "tolerance", HB_MC_TOL, "far", HB_MC_FAR, "conf", HB_MC_CONF, "resamples", HB_MC_RESAMPLES,
                     "ref_mode", HB_MC_REF_MODE, "overall", hb_mc_tally_json(&all), "backends", bk);
}

char *hb_mc_line(const hb_mc_set *s, const char *backend, char *buf, size_t len)
{
    hb_mc_tally t = tally_of(s, backend);
    int o = snprintf(buf, len, "mode invariance (%s): %zu of %zu pairs within %g%%, %zu moved beyond %s noise",
                     backend ? backend : "all", t.within, t.pairs, 100 * HB_MC_TOL, t.moved, t.moved == 1 ? "its" : "their");
    if (t.worst && o >= 0 && (size_t)o < len) {
        const hb_mc_pair *w = t.worst;
        char ci[64] = "no CI";
        if (w->r.has_ci) snprintf(ci, sizeof ci, "%.2f,%.2f", w->r.lo, w->r.hi);
        snprintf(buf + o, len - (size_t)o, " (worst: %s %s %s/%s %.2fx [%s])", jstr(w->rec->op, ""), jstr(w->rec->shape_str, ""),
                 jstr(w->rec->mode, ""), jstr(w->ref->mode, ""), w->r.ratio, ci);
    }
    return buf;
}

hb_status hb_mc_append_run(const char *path, int fd, json_t **summary, FILE *log)
{
    *summary = NULL;
    hb_run r;
    char err[600];
    hb_status st = hb_run_load(path, &r, err, sizeof err);
    if (st != HB_OK) {
        if (log) fprintf(log, "hybench: mode invariance not checked: %s\n", err);
        return st;
    }
    hb_mc_set s;
    st = hb_mc_check(&r, 0, &s);
    if (st == HB_OK) {
        for (size_t i = 0; i < s.n && st == HB_OK; i++) {
            json_t *rec = hb_mc_pair_json(&s.v[i]);
            st = rec ? hb_record_write(fd, rec) : HB_ENOMEM;
        }
        if (st == HB_OK && !(*summary = hb_mc_invariance_json(&s))) st = HB_ENOMEM;
        if (st == HB_OK && log) {
            for (size_t i = 0; i < s.n; i++) {
                const char *b = jstr(s.v[i].rec->backend, "");
                int seen = 0;
                for (size_t j = 0; j < i && !seen; j++) seen = !strcmp(jstr(s.v[j].rec->backend, ""), b);
                if (seen) continue;
                char line[1024];
                fprintf(log, "%s\n", hb_mc_line(&s, b, line, sizeof line));
            }
            if (!s.n) fprintf(log, "mode invariance: no case ran in more than one mode\n");
        }
    }
    if (st != HB_OK && log) fprintf(log, "hybench: mode invariance check failed (%s)\n", st == HB_ENOMEM ? "out of memory" : "write error");
    hb_mc_set_free(&s);
    hb_run_free(&r);
    return st;
}
