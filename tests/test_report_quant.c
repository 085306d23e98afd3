/*
 * test_report_quant.c - the report's "Quantized weights" section (harness/report/quantized.c) on known
 * answers: quantized matmuls against f32 matmuls of the same shapes and the dequantize cases of their
 * weights, on one cpu device, written as results records and rendered by `hybench report` in process.
 *   - break-even: where f32 is faster by the compute CIs, dequantize time / (fused - f32) calls; shuffled
 *     counts 1..N over more than 512 cases, so the Q1 card's median, minimum and maximum are known and
 *     take every case (a cap at 512 would move the median);
 *   - cases where the fused kernel is faster count as "never", overlapping CIs as "no difference".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report_test.h"

/* one matmul or dequantize record on cpu, mode resident; compute median t with a CI of +-0.1% */
static void put(FILE *f, const char *op, const char *dtype, double m, double n, double k, double t)
{
    char key[256], shape[96];
    if (!strcmp(op, "dequantize")) snprintf(shape, sizeof shape, "n=%.0f", n);
    else snprintf(shape, sizeof shape, "m=%.0f n=%.0f k=%.0f", m, n, k);
    snprintf(key, sizeof key, "%s|%s|cpu|resident|pageable|%s", op, shape, dtype);
    json_t *st = json_pack("{s:i,s:f,s:f,s:f,s:f,s:f,s:f}", "n", 10, "median", t, "min", t * 0.99, "max", t * 1.01, "mean", t,
                           "ci_lo", t * 0.999, "ci_hi", t * 1.001);
    json_t *sh = !strcmp(op, "dequantize") ? json_pack("{s:f}", "n", n) : json_pack("{s:f,s:f,s:f}", "m", m, "n", n, "k", k);
    json_t *r = json_pack("{s:s,s:i,s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:s,s:s,s:s,s:f,s:f,s:s,s:{s:o,s:O},s:f}", "type", "case", "schema", 1,
                          "key", key, "backend", "cpu", "op", op, "family", !strcmp(op, "dequantize") ? "elementwise" : "matmul",
                          "shape", sh, "shape_str", shape, "dtype", dtype, "mode", "resident", "route", "pageable", "status", "ok",
                          "flops", 2 * m * n * k, "bytes", n * k, "bound", "memory", "phases", "compute", st, "total", st,
                          "gflops", 1.0);
    char *s = json_dumps(r, JSON_COMPACT);
    fprintf(f, "%s\n", s);
    free(s);
    json_decref(r);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

static void test_break_even(void **state)
{
    (void)state;
    srand(44);
    for (int trial = 0; trial < 2; trial++) {
        const int N = trial ? 601 : 700; /* break-even cases, over 512 */
        const int nfast = 3 + rand() % 5, nsame = 1 + rand() % 3;
        char path[400], dir[400];
        snprintf(path, sizeof path, "%s/q%d.jsonl", g_tmp, trial);
        snprintf(dir, sizeof dir, "%s/q%d", g_tmp, trial);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "{\"type\":\"meta\",\"schema\":1,\"run_id\":\"20260101-000000-qbox\",\"host\":\"qbox\",\"git_commit\":\"0123abc\","
                   "\"date\":\"2026-01-01T00:00:00Z\",\"cpu\":{\"model\":\"Test CPU\",\"cores\":2}}\n");
        fprintf(f, "{\"type\":\"backend\",\"schema\":1,\"backend\":\"cpu\",\"available\":true,\"host_memory\":true,\"description\":\"Test CPU\"}\n");
        /* calls 1..N in a random order: case i's n is distinct, so each matmul finds its own f32 twin and dequantize */
        int *perm = malloc((size_t)N * sizeof *perm);
        assert_non_null(perm);
        for (int i = 0; i < N; i++) perm[i] = i + 1;
        for (int i = N - 1; i > 0; i--) { int j = rand() % (i + 1), t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
        const double k = 256;
        for (int i = 0; i < N; i++) {
            const double n = 16 * (i + 1), tf = 1e-5 * (1 + 0.01 * (rand() % 50)), tq = 1.5 * tf;
            put(f, "matmul", "f32", 1, n, k, tf);
            put(f, "matmul", "q4_k", 1, n, k, tq);
            put(f, "dequantize", "q4_k", 0, n * k, 0, perm[i] * (tq - tf) * 0.999); /* ceil: perm[i] calls */
        }
        for (int i = 0; i < nfast; i++) { /* fused faster: never pays back */
            const double n = 16 * (N + 1 + i), tf = 2e-5;
            put(f, "matmul", "f32", 1, n, k, tf);
            put(f, "matmul", "q4_k", 1, n, k, tf / 2);
        }
        for (int i = 0; i < nsame; i++) { /* within the CIs */
            const double n = 16 * (N + nfast + 1 + i), tf = 2e-5;
            put(f, "matmul", "f32", 1, n, k, tf);
            put(f, "matmul", "q4_k", 1, n, k, tf * 1.0005);
        }
        fprintf(f, "{\"type\":\"end\",\"schema\":1,\"cases\":1}\n");
        fclose(f);
        free(perm);
        poison_dir(dir);
        const char *files[] = {path};
        assert_int_equal(run_report(dir, "quant", 1, files, NULL), 0);
        char md[512];
        snprintf(md, sizeof md, "%s/report.md", dir);
        char *s = slurp(md);
        /* the median of 1..N: N odd -> (N+1)/2; N even -> (N+1)/2 rounded up by ceil */
        char want[400];
        snprintf(want, sizeof want, "in %d of %d matmuls (%d within the CIs); where f32 is faster, dequantizing once pays back after "
                 "%.0f calls (median; 1 to %d)", nfast, N + nfast + nsame, nsame, ceil((N + 1) / 2.0), N);
        if (!strstr(s, want)) fail_msg("report.md lacks \"%s\"", want);
        assert_int_equal(count_substr(s, "never (fused faster)"), nfast);
        assert_int_equal(count_substr(s, "no difference (CIs)"), nsame);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_break_even),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
