/*
 * test_ab.c - harness/analysis/ab.c (the interleaved A/B gate's decision, `hybench ab`): the
 * Wilcoxon signed-rank p-value against full enumeration of the 2^n sign patterns and against
 * scipy.stats.wilcoxon's values, the bootstrap CI of the median ratio, and hb_ab_decide on
 * synthetic rounds drawn with a fixed seed: a whole-run shift per process (10%) plus per-process
 * and case noise of 5% (log sd), no flag in an A/A set, every case of a planted 10% slowdown
 * flagged but at most 2 of 20 (the power of 16 rounds at that noise) and at most 2 others (FDR), status verdicts over rounds (a crash in one round, a case missing from
 * one round, wrong), the merged results files (read back) and compare's interleaved / not
 * interleaved note. Outputs are poisoned (NaN) before each call.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "analysis/ab.h"
#include "core/rstats.h"

/* ---- signed-rank ---- */

/* p by enumerating all 2^n sign patterns of ranks 1..n (no ties, no zeros) */
static double brute_p(const double *d, size_t n)
{
    /* ranks of |d| */
    int rank[32];
    for (size_t i = 0; i < n; i++) {
        rank[i] = 1;
        for (size_t j = 0; j < n; j++) if (fabs(d[j]) < fabs(d[i])) rank[i]++;
    }
    double w = 0;
    for (size_t i = 0; i < n; i++) if (d[i] > 0) w += rank[i];
    double lo = 0, hi = 0, tot = 0;
    for (unsigned long m = 0; m < (1ul << n); m++) {
        double s = 0;
        for (size_t i = 0; i < n; i++) if (m >> i & 1) s += rank[i];
        tot++;
        if (s <= w) lo++;
        if (s >= w) hi++;
    }
    double p = 2 * fmin(lo, hi) / tot;
    return p > 1 ? 1 : p;
}

static void test_signed_rank_exact(void **state)
{
    (void)state;
    hb_rng g;
    hb_rng_seed(&g, 7);
    for (size_t n = 1; n <= 14; n++)
        for (int rep = 0; rep < 20; rep++) {
            double d[32];
            for (size_t i = 0; i < n; i++) d[i] = hb_rng_normal(&g) + 0.3 * (rep % 3);
            double w = NAN;
            double p = hb_ab_signed_rank_p(d, n, &w);
            assert_true(isfinite(w));
            assert_true(fabs(p - brute_p(d, n)) < 1e-12);
        }
    /* all positive: the smallest p, 2 / 2^n */
    double d8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_true(fabs(hb_ab_signed_rank_p(d8, 8, NULL) - 2.0 / 256) < 1e-15);
    /* zeros are dropped; nothing left: p = 1 */
    double z[3] = {0, 0, 0};
    assert_true(hb_ab_signed_rank_p(z, 3, NULL) == 1);
    double nan1[2] = {1, NAN};
    assert_true(isnan(hb_ab_signed_rank_p(nan1, 2, NULL)));
}

/* Values from scipy 1.x: scipy.stats.wilcoxon(d, method=..., correction=True). */
static void test_signed_rank_scipy(void **state)
{
    (void)state;
    /* exact, no ties: the example of scipy.stats.wilcoxon's documentation,
     * d = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75] -> statistic 24 (W-),
     * pvalue 0.041259765625 (exact, two-sided) */
    double d[15] = {6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75};
    double w;
    double p = hb_ab_signed_rank_p(d, 15, &w);
    assert_true(fabs(w - (120 - 24)) < 1e-12);
    assert_true(fabs(p - 0.041259765625) < 1e-12);
    /* ties -> normal approximation with tie and continuity corrections:
     * scipy.stats.wilcoxon([1,1,2,2,3,-1,4,4,5,-2,6,7], method="approx", correction=True).pvalue */
    double t[12] = {1, 1, 2, 2, 3, -1, 4, 4, 5, -2, 6, 7};
    double pt = hb_ab_signed_rank_p(t, 12, &w);
    /* ranks of |t|: 1,1,1 -> 2; 2,2,2 -> 5; 3 -> 7; 4,4 -> 8.5; 5 -> 10; 6 -> 11; 7 -> 12;
     * negatives -1 (2) and -2 (5): W- = 7, W+ = 71 */
    assert_true(fabs(w - 71) < 1e-12);
    /* mean 39, var = 12*13*25/24 - ((27-3)+(27-3)+(8-2))/48 = 162.5 - 1.125 = 161.375,
     * scipy 1.16: pvalue 0.013150710389845967 */
    assert_true(fabs(pt - 0.013150710389845967) < 1e-12);
}

static void test_bootstrap(void **state)
{
    (void)state;
    double d[10];
    for (int i = 0; i < 10; i++) d[i] = log(1.1) + 0.01 * (i - 4.5);
    double lo = NAN, hi = NAN, lo2 = NAN, hi2 = NAN;
    assert_int_equal(hb_ab_bootstrap_median_ratio(d, 10, 2000, 0.95, 42, &lo, &hi), HB_OK);
    assert_true(lo <= 1.1 && hi >= 1.1 && lo > 1.05 && hi < 1.15);
    assert_int_equal(hb_ab_bootstrap_median_ratio(d, 10, 2000, 0.95, 42, &lo2, &hi2), HB_OK);
    assert_true(lo == lo2 && hi == hi2); /* deterministic for a seed */
    assert_int_equal(hb_ab_bootstrap_median_ratio(d, 0, 2000, 0.95, 42, &lo, &hi), HB_EINVAL);
    assert_true(isnan(lo) && isnan(hi));
    assert_int_equal(hb_ab_bootstrap_median_ratio(d, 10, 2000, 1.5, 42, &lo, &hi), HB_EINVAL);
}

/* ---- synthetic rounds ---- */
#define NC 200
#define NR 16

static json_t *case_rec(const char *key, const char *op, const char *status, hb_rng *g, double median, int n)
{
    json_t *s = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(s, json_real(median * exp(0.03 * hb_rng_normal(g))));
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:{s:o}}", "type", "case", "key", key, "backend", "cpu", "op", op,
                     "shape_str", "n=1", "mode", "f32", "route", "pageable", "dtype", "f32", "status", status, "samples",
                     "total", s);
}

/* rounds[side][r]: NC cases; cases 0..19 are "matmul" and slowed by `slow` on side 1 (and every case
 * by slow_all). Per process (side and round) a whole-run shift (10% sd, log: co-tenants, the host's
 * minute; measured 16-24% on the loaded VM), and per process and case noise (5% sd, log). */
static void make_rounds_all(hb_run runs[2][NR], double slow, double slow_all, uint64_t seed)
{
    hb_rng g;
    hb_rng_seed(&g, seed);
    for (int r = 0; r < NR; r++) {
        for (int s = 0; s < 2; s++) {
            double drift = 0.1 * hb_rng_normal(&g); /* this process's whole-run shift */
            hb_run *x = &runs[s][r];
            memset(x, 0, sizeof *x);
            x->path = strdup("synthetic");
            x->meta = json_pack("{s:s,s:s,s:i,s:s,s:s}", "type", "meta", "run_id", s ? "cur" : "base", "schema", 1, "host",
                                "h", "date", "2026-01-01T00:00:00Z");
            x->backends = json_array();
            x->cases = json_array();
            for (int c = 0; c < NC; c++) {
                char key[64];
                snprintf(key, sizeof key, "%s|n=%d|cpu|f32|pageable|f32", c < 20 ? "matmul" : "add", c);
                double base = 1e-4 * (1 + c % 7);
                double m = base * exp(drift + 0.05 * hb_rng_normal(&g)) * (s == 1 && c < 20 ? slow : 1) * (s == 1 ? slow_all : 1);
                json_array_append_new(x->cases, case_rec(key, c < 20 ? "matmul" : "add", "ok", &g, m, 15));
            }
        }
    }
}

static void make_rounds(hb_run runs[2][NR], double slow, uint64_t seed) { make_rounds_all(runs, slow, 1.0, seed); }

static void free_rounds(hb_run runs[2][NR])
{
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < NR; r++) hb_run_free(&runs[s][r]);
}

static int g_normalize = 1;
static void decide(hb_run runs[2][NR], int nr, hb_cmp_result *res, size_t *und)
{
    hb_ab_options o;
    hb_ab_options_default(&o);
    o.normalize = g_normalize;
    const hb_run *b[NR], *c[NR];
    for (int r = 0; r < nr; r++) {
        b[r] = &runs[0][r];
        c[r] = &runs[1][r];
        assert_int_equal(hb_run_index(&runs[0][r]), HB_OK); /* the records as structs: what hb_ab_decide reads */
        assert_int_equal(hb_run_index(&runs[1][r]), HB_OK);
    }
    char err[256];
    memset(res, 0xff, sizeof *res);
    *und = (size_t)-1;
    assert_int_equal(hb_ab_decide(b, c, nr, &o, res, und, err, sizeof err), HB_OK);
}

static void test_decide_aa_and_planted(void **state)
{
    (void)state;
    static hb_run runs[2][NR];
    hb_cmp_result res;
    size_t und, sum_norm = 0, sum_raw = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        make_rounds(runs, 1.0, seed);
        decide(runs, NR, &res, &und);
        assert_int_equal(res.n, NC + 1); /* and the whole-run case of the backend */
        assert_int_equal(res.tested, NC + 1);
        assert_int_equal(res.fails, 0);
        assert_int_equal(res.count[HB_CMP_REGRESSION], 0);
        for (size_t i = 0; i < res.n; i++) {
            if (!strncmp(res.cases[i].key, "(whole run)", 11)) continue;
            assert_int_equal(res.cases[i].n_base, 15 * NR); /* every sample of every round */
            assert_true(res.cases[i].ci_lo <= res.cases[i].ratio && res.cases[i].ratio <= res.cases[i].ci_hi);
        }
        hb_cmp_result_free(&res);
        free_rounds(runs);

        make_rounds(runs, 1.10, seed);
        decide(runs, NR, &res, &und);
        size_t flagged_mm = 0, flagged_other = 0;
        for (size_t i = 0; i < res.n; i++) {
            int mm = !strcmp(res.cases[i].op, "matmul");
            if (res.cases[i].verdict == HB_CMP_REGRESSION) { if (mm) flagged_mm++; else flagged_other++; }
            if (!mm && res.cases[i].verdict == HB_CMP_REGRESSION && getenv("AB_DEBUG")) fprintf(stderr, "false %s ratio %.3f ci %.3f..%.3f p %.2g q %.2g\n", res.cases[i].key, res.cases[i].ratio, res.cases[i].ci_lo, res.cases[i].ci_hi, res.cases[i].p, res.cases[i].q);
            if (mm && res.cases[i].verdict != HB_CMP_REGRESSION && getenv("AB_DEBUG")) fprintf(stderr, "miss %s ratio %.3f ci %.3f..%.3f p %.2g q %.2g\n", res.cases[i].key, res.cases[i].ratio, res.cases[i].ci_lo, res.cases[i].ci_hi, res.cases[i].p, res.cases[i].q);
            if (mm) assert_true(res.cases[i].ratio > 1.02);
        }
        /* Benjamini-Hochberg controls the false discovery rate (5%), not the family-wise error:
         * beside ~20 true discoveries one or two null cases may pass (under the point rule, seed 1:
         * add n=104, ratio 1.060, p 0.0034 in 16 rounds at 5% noise; none under the CI rule) */
        assert_true(flagged_other <= 2);
        /* power at 5% per-process noise and 16 rounds: the misses have p ~ 0.01, q ~ 0.1 */
        assert_true(flagged_mm >= 16);
        assert_int_equal(res.fails, (int)(flagged_mm + flagged_other));
        hb_cmp_result_free(&res);
        /* without removing each process's whole-run shift the 10% shifts swamp the 10% slowdown */
        g_normalize = 0;
        decide(runs, NR, &res, &und);
        g_normalize = 1;
        size_t raw = 0, raw_other = 0;
        for (size_t i = 0; i < res.n; i++)
            if (res.cases[i].verdict == HB_CMP_REGRESSION || res.cases[i].verdict == HB_CMP_IMPROVEMENT) {
                if (!strcmp(res.cases[i].op, "matmul")) raw++;
                else raw_other++;
            }
        if (getenv("AB_DEBUG"))
            fprintf(stderr, "seed %d: normalised %zu of 20 (%zu others), raw %zu of 20 (%zu others)\n", (int)seed, flagged_mm,
                    flagged_other, raw, raw_other);
        sum_norm += flagged_mm;
        sum_raw += raw;
        hb_cmp_result_free(&res);
        free_rounds(runs);
    }
    assert_true(sum_raw < sum_norm); /* seeds 1-3 (CI rule): 19, 17, 0 of 20 raw against 16, 19, 16 */
    /* every case 30% slower: the per-case ratios are taken relative to the whole run (normalised), so
     * the slowdown is the whole-run case's, which fails the gate (a global change has to stand out
     * from the processes' whole-run shifts, 14% sd for a pair here); at most a few single cases too */
    make_rounds_all(runs, 1.0, 1.30, 4);
    decide(runs, NR, &res, &und);
    int whole = 0;
    for (size_t i = 0; i < res.n; i++)
        if (!strcmp(res.cases[i].key, "(whole run)|cpu")) {
            whole = 1;
            assert_int_equal(res.cases[i].verdict, HB_CMP_REGRESSION);
            assert_true(fabs(res.cases[i].ratio - 1.30) < 0.1);
        }
    assert_true(whole);
    assert_true(res.count[HB_CMP_REGRESSION] <= 3);
    hb_cmp_result_free(&res);
    free_rounds(runs);
    /* 4 rounds: the smallest p is 2/16, nothing can be significant; every case undecided or cleared */
    make_rounds(runs, 1.10, 9);
    decide(runs, 4, &res, &und);
    assert_int_equal(res.fails, 0);
    assert_true(und > 0);
    hb_cmp_result_free(&res);
    free_rounds(runs);
}

/* Subset rounds (the gate's later rounds run only the cases still open, meta options.cases_from):
 * they must not be normalised by their own median, which, over a subset made mostly of the slowed
 * family, would be that family's own slowdown. Rounds 8-15 keep the 20 slowed cases and 5 others. */
static void test_decide_subset_rounds(void **state)
{
    (void)state;
    static hb_run runs[2][NR];
    double mean_log = 0;
    int n = 0;
    for (uint64_t seed = 21; seed <= 22; seed++) {
        make_rounds(runs, 1.10, seed);
        for (int r = 8; r < NR; r++)
            for (int sd = 0; sd < 2; sd++) {
                hb_run *x = &runs[sd][r];
                json_object_set_new(x->meta, "options", json_pack("{s:s}", "cases_from", "rounds/cases.txt"));
                json_t *keep = json_array();
                for (size_t i = 0; i < json_array_size(x->cases) && i < 25; i++) json_array_append(keep, json_array_get(x->cases, i));
                json_decref(x->cases);
                x->cases = keep;
            }
        hb_cmp_result res;
        size_t und;
        decide(runs, NR, &res, &und);
        for (size_t i = 0; i < res.n; i++) {
            hb_cmp_case *c = &res.cases[i];
            if (strcmp(c->op, "matmul")) continue;
            mean_log += log(c->ratio);
            n++;
            assert_int_equal(c->n_base, 15 * NR); /* every round has it */
        }
        for (size_t i = 0; i < res.n; i++) /* a case of the whole run only: 8 rounds */
            if (!strncmp(res.cases[i].key, "add|n=100|", 10)) assert_int_equal(res.cases[i].n_base, 15 * 8);
        hb_cmp_result_free(&res);
        free_rounds(runs);
    }
    assert_int_equal(n, 40);
    /* planted 10% (log 0.095); normalising the subset rounds by their own median took it to about 1.05 */
    assert_true(exp(mean_log / n) > 1.075);
    assert_true(exp(mean_log / n) < 1.13);
}

static json_t *find_key(hb_run *r, const char *prefix)
{
    for (size_t i = 0; i < json_array_size(r->cases); i++) {
        json_t *c = json_array_get(r->cases, i);
        if (!strncmp(hb_rec_str(c, "key"), prefix, strlen(prefix))) return c;
    }
    return NULL;
}

static void test_decide_status(void **state)
{
    (void)state;
    static hb_run runs[2][NR];
    hb_cmp_result res;
    size_t und;
    make_rounds(runs, 1.0, 5);
    /* round 3 of cur: add n=30 crashed; round 5: add n=31 absent; round 7: add n=32 wrong;
     * base round 2: add n=33 crashed (not ok in base, ok in cur: fixed) */
    json_object_set_new(find_key(&runs[1][2], "add|n=30|"), "status", json_string("crashed"));
    json_t *cs = runs[1][4].cases;
    for (size_t i = 0; i < json_array_size(cs); i++)
        if (!strncmp(hb_rec_str(json_array_get(cs, i), "key"), "add|n=31|", 9)) { json_array_remove(cs, i); break; }
    json_object_set_new(find_key(&runs[1][6], "add|n=32|"), "status", json_string("wrong"));
    json_object_set_new(find_key(&runs[0][1], "add|n=33|"), "status", json_string("crashed"));
    decide(runs, NR, &res, &und);
    int seen = 0;
    for (size_t i = 0; i < res.n; i++) {
        const hb_cmp_case *c = &res.cases[i];
        if (!strncmp(c->key, "add|n=30|", 9)) { assert_int_equal(c->verdict, HB_CMP_CRASHED); seen++; }
        if (!strncmp(c->key, "add|n=31|", 9)) { assert_int_equal(c->verdict, HB_CMP_MISSING); seen++; }
        if (!strncmp(c->key, "add|n=32|", 9)) { assert_int_equal(c->verdict, HB_CMP_WRONG); seen++; }
        if (!strncmp(c->key, "add|n=33|", 9)) { assert_int_equal(c->verdict, HB_CMP_FIXED); seen++; }
    }
    assert_int_equal(seen, 4);
    assert_int_equal(res.fails, 3);
    hb_cmp_result_free(&res);
    free_rounds(runs);
}

/* write a round to a file (the merged writer re-reads rounds from their files) */
static void write_run(const char *path, hb_run *r)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    assert_true(fd >= 0);
    json_t *m = json_deep_copy(r->meta);
    json_object_set_new(m, "cpu", json_pack("{s:s}", "model", "synthetic"));
    assert_int_equal(hb_record_write(fd, m), HB_OK);
    for (size_t i = 0; i < json_array_size(r->cases); i++) {
        json_t *c = json_deep_copy(json_array_get(r->cases, i));
        json_object_set_new(c, "phases", json_pack("{s:{s:f}}", "total", "median", 1e-4));
        assert_int_equal(hb_record_write(fd, c), HB_OK);
    }
    close(fd);
}

static void test_merged_and_interleaved(void **state)
{
    (void)state;
    static hb_run runs[2][NR];
    char dir[] = "/tmp/hb_test_ab.XXXXXX";
    assert_non_null(mkdtemp(dir));
    make_rounds(runs, 1.10, 11);
    char *paths[2][NR];
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < 3; r++) {
            char p[256];
            snprintf(p, sizeof p, "%s/%d-%d.jsonl", dir, s, r);
            write_run(p, &runs[s][r]);
            paths[s][r] = strdup(p);
        }
    free_rounds(runs);
    /* decide from the files as cmd_ab does */
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < 3; r++) {
            char err[256];
            assert_int_equal(hb_run_load(paths[s][r], &runs[s][r], err, sizeof err), HB_OK);
        }
    hb_cmp_result res;
    size_t und;
    decide(runs, 3, &res, &und);
    hb_run merged[2];
    char mp[2][256];
    for (int s = 0; s < 2; s++) {
        snprintf(mp[s], sizeof mp[s], "%s/merged-%d.jsonl", dir, s);
        int fd = open(mp[s], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
        const hb_run *rr[3] = {&runs[s][0], &runs[s][1], &runs[s][2]};
        hb_rec_ab abm;
        hb_rec_clear(&hb_rec_ab_table, &abm);
        assert_int_equal(HB_REC_SET(hb_rec_ab, &abm, pair, "p1"), HB_OK);
        assert_int_equal(HB_REC_SET(hb_rec_ab, &abm, role, s ? "cur" : "base"), HB_OK);
        assert_int_equal(hb_ab_write_merged(fd, rr, (const char *const *)paths[s], 3, &res, s, "total", &abm), HB_OK);
        hb_rec_release(&hb_rec_ab_table, &abm);
        close(fd);
        char err[256];
        assert_int_equal(hb_run_load(mp[s], &merged[s], err, sizeof err), HB_OK);
        /* the meta record carries the pair's ab object, read back into its struct */
        assert_string_equal(merged[s].meta_rec->ab.pair, "p1");
        assert_string_equal(merged[s].meta_rec->ab.role, s ? "cur" : "base");
        assert_int_equal(json_array_size(merged[s].cases), NC);
        json_t *pm = json_object_get(json_object_get(json_array_get(merged[s].cases, 0), "pass_medians"), "total");
        assert_int_equal(json_array_size(pm), 3);
        assert_true(json_number_value(json_array_get(pm, 0)) > 0);
    }
    assert_int_equal(hb_cmp_interleaved(&merged[0], &merged[1]), 1);
    assert_int_equal(hb_cmp_interleaved(&merged[0], &runs[1][0]), 0);
    /* compare's Markdown says when two runs were not interleaved, and not otherwise */
    hb_cmp_options o;
    hb_cmp_options_default(&o);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(hb_cmp_write_markdown(f, &res, &runs[0][0], &runs[1][0], &o), HB_OK);
    fclose(f);
    assert_non_null(strstr(buf, "Not interleaved"));
    free(buf);
    f = open_memstream(&buf, &len);
    assert_int_equal(hb_cmp_write_markdown(f, &res, &merged[0], &merged[1], &o), HB_OK);
    fclose(f);
    assert_null(strstr(buf, "Not interleaved"));
    free(buf);
    json_t *j = hb_cmp_to_json(&res, &merged[0], &merged[1], &o);
    assert_true(json_is_true(json_object_get(json_object_get(j, "summary"), "interleaved")));
    json_decref(j);
    hb_cmp_result_free(&res);
    for (int s = 0; s < 2; s++) {
        hb_run_free(&merged[s]);
        unlink(mp[s]);
        for (int r = 0; r < 3; r++) { hb_run_free(&runs[s][r]); unlink(paths[s][r]); free(paths[s][r]); }
    }
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signed_rank_exact),
        cmocka_unit_test(test_signed_rank_scipy),
        cmocka_unit_test(test_bootstrap),
        cmocka_unit_test(test_decide_aa_and_planted),
        cmocka_unit_test(test_decide_status),
        cmocka_unit_test(test_decide_subset_rounds),
        cmocka_unit_test(test_merged_and_interleaved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
