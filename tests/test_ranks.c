/*
 * test_ranks.c - the merge of a multi-rank run's files into one results file (harness/results/ranks.c,
 * `hybench merge-ranks`), on synthetic rank files with random times (drand48; the seed is printed):
 *  - two ranks: one record per collective case with every rank's figures (time_s the mean, time_max_s
 *    the max, algbw and busbw recomputed from the mean, rel_err the max); per-GPU records kept from
 *    every rank; host records (cpu on every rank) kept once and counted as dropped;
 *  - four ranks given out of order: the worst status wins (wrong, crashed over timed_out, a case
 *    skipped on one rank is not ok), the reason names the rank, a case absent from a rank is
 *    "missing" on it (failed), reduce_scatter's per-rank "rank" shape field does not split the case;
 *  - a rank file cut short: its GPU's cases the others ran are marked failed ("missing"); absent
 *    files in the launcher's mode;
 *  - refusals naming the file: corrupt (file:line), missing file, a rank twice, a rank missing,
 *    different launch sizes, options or command lines, no meta.launch, an already merged file;
 *  - the command: exit 0/2, an existing OUT without --force, and the merged file read by csv.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include "cli_capture.h"

#include "cli/commands.h"
#include "results/ranks.h"
#include "results/results.h"

static char g_dir[256];

static void path_of(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", g_dir, name); }

static void write_records(const char *name, json_t *recs)
{
    char p[512];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    size_t i;
    json_t *r;
    json_array_foreach(recs, i, r) {
        json_object_set_new(r, "schema", json_integer(1));
        char *s = json_dumps(r, JSON_COMPACT | JSON_REAL_PRECISION(17));
        assert_non_null(s);
        fprintf(f, "%s\n", s);
        free(s);
    }
    fclose(f);
    json_decref(recs);
}

static json_t *meta_rec(int rank, int ranks, const char *file)
{
    char cl[700];
    snprintf(cl, sizeof cl, "hybench run --backend cuda,cpu --op collective,matmul --out %s/%s workloads/collectives.ini", g_dir, file);
    return json_pack("{s:s,s:s,s:s,s:s,s:{s:f,s:i,s:[s]},s:{s:i,s:i,s:i}}", "type", "meta", "run_id", "rank-run", "tool", "hybench",
                     "command_line", cl, "options", "budget_s", 0.1, "seed", 42, "workloads", "workloads/collectives.ini", "launch",
                     "rank", rank, "ranks", ranks, "local_rank", rank);
}

static json_t *backend_rec(const char *name)
{
    return json_pack("{s:s,s:s,s:b,s:[{s:s,s:f}]}", "type", "backend", "backend", name, "available", 1, "ceilings", "name",
                     "copy_gbps", "value", 2000.0);
}

static double busbw_factor(const char *op, int n)
{
    if (!strcmp(op, "all_reduce")) return 2.0 * (n - 1) / n;
    if (!strcmp(op, "broadcast")) return 1;
    return (double)(n - 1) / n;
}

/* A collective case record of rank `rank` on backend `be`: size S = n x 4 (x ranks for all_gather and
 * reduce_scatter), time t, status st (not ok: no figures, a reason). */
static json_t *coll_rec(const char *op, long n, int ranks, int rank, const char *be, const char *st, double t, double rel)
{
    char shs[128], key[256];
    int rs = !strcmp(op, "reduce_scatter") && rank > 0;
    snprintf(shs, sizeof shs, "n=%ld ranks=%d%s", n, ranks, rs ? " rank=X" : "");
    if (rs) snprintf(strstr(shs, "rank=X"), 16, "rank=%d", rank);
    snprintf(key, sizeof key, "%s|%s|%s|resident|pageable|f32", op, shs, be);
    double S = (double)n * 4 * (!strcmp(op, "all_gather") || !strcmp(op, "reduce_scatter") ? ranks : 1);
    json_t *shape = json_pack("{s:I,s:i}", "n", (json_int_t)n, "ranks", ranks);
    if (rs) json_object_set_new(shape, "rank", json_integer(rank));
    json_t *r = json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:s,s:s,s:s,s:f,s:f,s:s,s:s,s:f}", "type", "case", "key", key, "backend",
                          be, "op", op, "family", "collective", "shape", shape, "shape_str", shs, "dtype", "f32", "mode", "resident",
                          "route", "pageable", "status", st, "flops", 0.0, "bytes", S, "bound", "memory", "ceiling", "copy_gbps",
                          "ceiling_value", 2000.0);
    if (strcmp(st, "ok")) {
        char why[64];
        snprintf(why, sizeof why, "%s on %s", st, be);
        json_object_set_new(r, "reason", json_string(why));
        return r;
    }
    double f = busbw_factor(op, ranks), algbw = S / t / 1e9;
    json_object_set_new(r, "phases", json_pack("{s:{s:f},s:{s:f}}", "total", "median", t * 1.1, "compute", "median", t));
    json_object_set_new(r, "samples", json_pack("{s:[f],s:[f]}", "total", t * 1.1, "compute", t));
    json_object_set_new(r, "gbps", json_real(algbw));
    json_object_set_new(r, "rel_err", json_real(rel));
    json_object_set_new(r, "collective", json_pack("{s:f,s:f,s:f,s:f,s:f,s:i,s:s,s:b}", "size_bytes", S, "time_s", t, "algbw_gbps",
                                                   algbw, "busbw_gbps", algbw * f, "busbw_factor", f, "ranks", ranks, "path", "nccl",
                                                   "in_place", 0));
    return r;
}

static json_t *plain_rec(const char *op, long m, const char *be, double t)
{
    char key[256], shs[64];
    snprintf(shs, sizeof shs, "m=%ld n=%ld k=%ld", m, m, m);
    snprintf(key, sizeof key, "%s|%s|%s|f32|pageable|f32", op, shs, be);
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:I,s:I,s:I},s:s,s:s,s:s,s:s,s:s,s:{s:{s:f}},s:{s:[f]},s:f}", "type", "case", "key", key,
                     "backend", be, "op", op, "family", "matmul", "shape", "m", (json_int_t)m, "n", (json_int_t)m, "k", (json_int_t)m,
                     "shape_str", shs, "dtype", "f32", "mode", "f32", "route", "pageable", "status", "ok", "phases", "total",
                     "median", t, "samples", "total", t, "rel_err", 1e-7);
}

/* The tensor-parallel decoder layer's record of rank `rank` (measure/chain.c): layer time t, all_reduce part ar. */
static json_t *tp_rec(int ranks, int rank, const char *be, double t, double ar, double graph)
{
    char key[256];
    snprintf(key, sizeof key, "chain|seq=1 kv_seq=512 ranks=%d|%s|resident|pageable|f16", ranks, be);
    json_t *r = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:i,s:i,s:i,s:i},s:s,s:s,s:s,s:s,s:s,s:f,s:f,s:s}", "type", "case", "key", key,
                          "backend", be, "op", "chain", "family", "chain", "shape", "seq", 1, "kv_seq", 512, "ranks", ranks, "rank", rank,
                          "shape_str", "seq=1 kv_seq=512", "dtype", "f16", "mode", "resident", "route", "pageable", "status", "ok",
                          "flops", 4.4e8, "rel_err", 1e-3 * (1 + rank), "bound", "compute");
    json_object_set_new(r, "phases", json_pack("{s:{s:f},s:{s:f}}", "total", "median", t * 1.2, "compute", "median", t));
    json_object_set_new(r, "samples", json_pack("{s:[f],s:[f]}", "total", t * 1.2, "compute", t));
    json_object_set_new(r, "tensor_parallel", json_pack("{s:i,s:i,s:f,s:f,s:f,s:f}", "ranks", ranks, "rank", rank, "time_s", t,
                                                        "steps_s", 2 * t, "allreduce_s", ar, "allreduce_share", ar / (2 * t)));
    if (isfinite(graph)) json_object_set_new(json_object_get(r, "tensor_parallel"), "graph_s", json_real(graph));
    return r;
}

static json_t *end_rec(double elapsed)
{
    return json_pack("{s:s,s:i,s:f,s:i,s:b}", "type", "end", "cases", 0, "elapsed_s", elapsed, "passes", 1, "interrupted", 0);
}

static double num(json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

static void assert_close(double a, double b)
{
    if (!(fabs(a - b) <= 1e-6 * fmax(fabs(a), fabs(b)) + 1e-300)) fail_msg("%.9g != %.9g", a, b);
}

static hb_status merge(const char *const *names, int n, const char *out, int absent_ok, hb_ranks_summary *s, char *err, size_t len)
{
    char paths[8][512], outp[512];
    const char *pv[8];
    for (int i = 0; i < n; i++) { path_of(paths[i], sizeof paths[i], names[i]); pv[i] = paths[i]; }
    path_of(outp, sizeof outp, out);
    hb_ranks_opts o = {.absent_ok = absent_ok};
    return hb_ranks_merge(pv, n, outp, &o, s, err, len);
}

static void load_merged(const char *out, hb_run *run)
{
    char p[512], err[1024];
    path_of(p, sizeof p, out);
    hb_load_opts lo = {.flags = HB_LOAD_STRICT};
    if (hb_run_load_opts(p, &lo, run, err, sizeof err) != HB_OK) fail_msg("merged file refused: %s", err);
}

/* The merged case record of op (and backend be, when not NULL); NULL when absent. */
static json_t *find_case(const hb_run *r, const char *op, const char *be, int nth)
{
    size_t i;
    json_t *c;
    json_array_foreach(r->cases, i, c)
        if (!strcmp(hb_rec_str(c, "op"), op) && (!be || !strcmp(hb_rec_str(c, "backend"), be)) && nth-- == 0) return c;
    return NULL;
}

static void test_two_ranks(void **state)
{
    (void)state;
    for (long seed = 1; seed <= 5; seed++) {
        srand48(seed);
        double t[2][2], rel[2];
        json_t *rf[2];
        for (int r = 0; r < 2; r++) {
            char be[32], name[32];
            snprintf(be, sizeof be, "cuda:%d", r);
            snprintf(name, sizeof name, "rank%d.jsonl", r);
            t[r][0] = 1e-5 + drand48() * 1e-3;
            t[r][1] = 1e-4 + drand48() * 1e-2;
            rel[r] = drand48() * 1e-6;
            rf[r] = json_pack("[o,o,o,o,o,o,o,o,o]", meta_rec(r, 2, name), backend_rec(be), backend_rec("cpu"),
                              coll_rec("all_reduce", 1 << 20, 2, r, be, "ok", t[r][0], rel[r]),
                              coll_rec("all_gather", 1 << 22, 2, r, be, "ok", t[r][1], 0), plain_rec("matmul", 1024, be, drand48()),
                              plain_rec("matmul", 512, "cpu", drand48()), plain_rec("matmul", 256, "cpu", drand48()),
                              end_rec(10 + 10 * r + drand48()));
            write_records(name, rf[r]);
        }
        const char *names[] = {"rank0.jsonl", "rank1.jsonl"};
        hb_ranks_summary s;
        char err[1024] = "";
        if (merge(names, 2, "merged.jsonl", 0, &s, err, sizeof err) != HB_OK) fail_msg("seed %ld: %s", seed, err);
        assert_int_equal(s.nranks, 2);
        assert_int_equal(s.cases, 6); /* 2 collectives, matmul on cuda:0 and cuda:1, the 2 cpu cases once */
        assert_int_equal(s.dup_cases, 2);
        assert_int_equal(s.dup_backends, 1);
        assert_int_equal(s.missing, 0);
        hb_run run;
        load_merged("merged.jsonl", &run);
        json_t *rk = json_object_get(run.meta, "ranks");
        assert_int_equal(num(rk, "n"), 2);
        assert_true(json_is_true(json_object_get(rk, "merged")));
        assert_string_equal(json_string_value(json_array_get(json_object_get(rk, "files"), 1)), "rank1.jsonl");
        json_t *dd = json_object_get(rk, "duplicates_dropped");
        assert_int_equal(num(dd, "cases"), 2);
        assert_int_equal(num(dd, "backends"), 1);
        assert_non_null(json_object_get(dd, "why"));
        assert_int_equal(json_array_size(run.backends), 3); /* cuda:0, cpu, cuda:1 */
        const char *ops[2] = {"all_reduce", "all_gather"};
        for (int k = 0; k < 2; k++) {
            json_t *c = find_case(&run, ops[k], NULL, 0);
            assert_non_null(c);
            assert_null(find_case(&run, ops[k], NULL, 1)); /* one record for both ranks */
            assert_string_equal(hb_rec_str(c, "backend"), "cuda:0");
            assert_string_equal(hb_rec_str(c, "status"), "ok");
            json_t *co = json_object_get(c, "collective");
            double mean = (t[0][k] + t[1][k]) / 2, S = num(co, "size_bytes");
            assert_close(num(co, "time_s"), mean);
            assert_close(num(co, "time_max_s"), fmax(t[0][k], t[1][k]));
            assert_close(num(co, "algbw_gbps"), S / mean / 1e9);
            assert_close(num(co, "busbw_gbps"), S / mean / 1e9 * busbw_factor(ops[k], 2));
            assert_close(num(c, "gbps"), S / mean / 1e9);
            json_t *pr = json_object_get(co, "per_rank");
            assert_int_equal(json_array_size(pr), 2);
            for (int r = 0; r < 2; r++) {
                json_t *e = json_array_get(pr, (size_t)r);
                assert_int_equal(num(e, "rank"), r);
                assert_close(num(e, "time_s"), t[r][k]);
                assert_string_equal(hb_rec_str(e, "status"), "ok");
            }
            assert_string_equal(hb_rec_str(json_array_get(pr, 1), "backend"), "cuda:1");
            if (k == 0) assert_close(num(c, "rel_err"), fmax(rel[0], rel[1]));
        }
        assert_non_null(find_case(&run, "matmul", "cuda:0", 0));
        assert_non_null(find_case(&run, "matmul", "cuda:1", 0));
        assert_non_null(find_case(&run, "matmul", "cpu", 1));
        assert_null(find_case(&run, "matmul", "cpu", 2));
        assert_int_equal(num(run.end, "cases"), 6);
        assert_int_equal(num(run.end, "ok"), 6);
        assert_true(num(run.end, "elapsed_s") >= 20);
        /* the commands read it */
        FILE *nul = fopen("/dev/null", "w");
        assert_int_equal(hb_csv_stream(run.path, nul, err, sizeof err), HB_OK);
        fclose(nul);
        hb_run_free(&run);
    }
}

/* The tensor-parallel layer's ranks fold into one record: mean layer time, mean all_reduce part. */
static void test_tensor_parallel(void **state)
{
    (void)state;
    for (long seed = 1; seed <= 3; seed++) {
        srand48(seed * 7);
        double t[2], ar[2], gr[2];
        for (int r = 0; r < 2; r++) {
            char be[32], name[32];
            snprintf(be, sizeof be, "cuda:%d", r);
            snprintf(name, sizeof name, "tp%d.jsonl", r);
            t[r] = 5e-5 + drand48() * 1e-4;
            ar[r] = t[r] * (0.1 + 0.3 * drand48());
            /* seed 3: only rank 0 captured the layer as a graph, so the merged record has no graph mean */
            gr[r] = seed == 3 && r == 1 ? (double)NAN : t[r] * (0.5 + 0.4 * drand48());
            json_t *rf = json_pack("[o,o,o,o]", meta_rec(r, 2, name), backend_rec(be), tp_rec(2, r, be, t[r], ar[r], gr[r]), end_rec(5));
            write_records(name, rf);
        }
        const char *names[] = {"tp0.jsonl", "tp1.jsonl"};
        hb_ranks_summary s;
        char err[1024] = "";
        if (merge(names, 2, "tp.jsonl", 0, &s, err, sizeof err) != HB_OK) fail_msg("seed %ld: %s", seed, err);
        assert_int_equal(s.cases, 1);
        hb_run run;
        load_merged("tp.jsonl", &run);
        json_t *c = find_case(&run, "chain", NULL, 0);
        assert_non_null(c);
        assert_null(find_case(&run, "chain", NULL, 1));
        json_t *tp = json_object_get(c, "tensor_parallel");
        assert_close(num(tp, "time_s"), (t[0] + t[1]) / 2);
        assert_close(num(tp, "time_max_s"), fmax(t[0], t[1]));
        assert_close(num(tp, "allreduce_s"), (ar[0] + ar[1]) / 2);
        assert_close(num(tp, "steps_s"), t[0] + t[1]);
        assert_close(num(tp, "allreduce_share"), (ar[0] + ar[1]) / (2 * (t[0] + t[1])));
        if (seed == 3) assert_null(json_object_get(tp, "graph_s"));
        else assert_close(num(tp, "graph_s"), (gr[0] + gr[1]) / 2);
        assert_null(json_object_get(tp, "busbw_gbps"));
        assert_null(json_object_get(c, "collective"));
        assert_close(num(c, "rel_err"), 2e-3);
        json_t *pr = json_object_get(tp, "per_rank");
        assert_int_equal(json_array_size(pr), 2);
        for (int r = 0; r < 2; r++) {
            assert_close(num(json_array_get(pr, (size_t)r), "time_s"), t[r]);
            assert_close(num(json_array_get(pr, (size_t)r), "allreduce_s"), ar[r]);
        }
        hb_run_free(&run);
    }
}

static void test_four_ranks_status(void **state)
{
    (void)state;
    srand48(77);
    const int N = 4;
    double t[4];
    for (int r = 0; r < N; r++) {
        char be[32], name[32];
        snprintf(be, sizeof be, "cuda:%d", r);
        snprintf(name, sizeof name, "r%d.jsonl", r);
        t[r] = 1e-4 * (1 + drand48());
        json_t *recs = json_pack("[o,o]", meta_rec(r, N, name), backend_rec(be));
        json_array_append_new(recs, coll_rec("all_reduce", 1024, N, r, be, "ok", t[r], 1e-7));
        json_array_append_new(recs, coll_rec("broadcast", 1024, N, r, be, r == 2 ? "wrong" : "ok", t[r], 1e-7));
        json_array_append_new(recs, coll_rec("all_gather", 1024, N, r, be, r == 1 ? "skipped" : "ok", t[r], 1e-7));
        json_array_append_new(recs, coll_rec("all_reduce", 4096, N, r, be, r == 3 ? "crashed" : r == 1 ? "timed_out" : "ok", t[r], 1e-7));
        json_array_append_new(recs, coll_rec("reduce_scatter", 1024, N, r, be, "ok", t[r], 1e-7));
        if (r != 3) json_array_append_new(recs, coll_rec("broadcast", 8192, N, r, be, "ok", t[r], 1e-7));
        json_array_append_new(recs, end_rec(5));
        write_records(name, recs);
    }
    const char *names[] = {"r3.jsonl", "r1.jsonl", "r0.jsonl", "r2.jsonl"}; /* the rank comes from meta.launch */
    hb_ranks_summary s;
    char err[1024] = "";
    if (merge(names, N, "m4.jsonl", 0, &s, err, sizeof err) != HB_OK) fail_msg("%s", err);
    assert_int_equal(s.cases, 6);
    assert_int_equal(s.missing, 1);
    hb_run run;
    load_merged("m4.jsonl", &run);
    json_t *c = find_case(&run, "all_reduce", NULL, 0);
    assert_string_equal(hb_rec_str(c, "status"), "ok");
    assert_close(num(json_object_get(c, "collective"), "time_s"), (t[0] + t[1] + t[2] + t[3]) / 4);
    assert_int_equal(num(json_object_get(c, "collective"), "time_ranks"), 4);
    c = find_case(&run, "broadcast", NULL, 0);
    assert_string_equal(hb_rec_str(c, "status"), "wrong");
    assert_non_null(strstr(hb_rec_str(c, "reason"), "rank 2: wrong"));
    assert_int_equal(num(json_object_get(c, "collective"), "time_ranks"), 3); /* the wrong rank has no figures */
    c = find_case(&run, "all_gather", NULL, 0);
    assert_string_equal(hb_rec_str(c, "status"), "skipped"); /* skipped on one rank: not ok */
    assert_non_null(strstr(hb_rec_str(c, "reason"), "rank 1: skipped"));
    c = find_case(&run, "all_reduce", NULL, 1);
    assert_string_equal(hb_rec_str(c, "status"), "crashed"); /* crashed beats timed_out */
    assert_non_null(strstr(hb_rec_str(c, "reason"), "rank 3:"));
    json_t *pr = json_object_get(json_object_get(c, "collective"), "per_rank");
    assert_string_equal(hb_rec_str(json_array_get(pr, 1), "status"), "timed_out");
    c = find_case(&run, "reduce_scatter", NULL, 0);
    assert_non_null(c);
    assert_null(find_case(&run, "reduce_scatter", NULL, 1)); /* the "rank" shape field does not split it */
    assert_string_equal(hb_rec_str(c, "status"), "ok");
    c = find_case(&run, "broadcast", NULL, 1);
    assert_string_equal(hb_rec_str(c, "status"), "failed");
    assert_non_null(strstr(hb_rec_str(c, "reason"), "rank 3: missing"));
    pr = json_object_get(json_object_get(c, "collective"), "per_rank");
    assert_int_equal(json_array_size(pr), 4);
    assert_string_equal(hb_rec_str(json_array_get(pr, 3), "status"), "missing");
    assert_int_equal(num(run.end, "ok"), 2);
    assert_int_equal(num(run.end, "wrong"), 1);
    assert_int_equal(num(run.end, "crashed"), 1);
    assert_int_equal(num(run.end, "skipped"), 1);
    assert_int_equal(num(run.end, "failed"), 1);
    assert_int_equal(num(json_object_get(run.meta, "ranks"), "missing_cases"), 1);
    hb_run_free(&run);
}

/* A rank whose file ends early (killed): its GPU's cases that the other rank ran are marked. */
static void test_cut_short(void **state)
{
    (void)state;
    write_records("c0.jsonl", json_pack("[o,o,o,o,o,o]", meta_rec(0, 2, "c0.jsonl"), backend_rec("cuda:0"),
                                        coll_rec("all_reduce", 64, 2, 0, "cuda:0", "ok", 1e-5, 0), plain_rec("matmul", 64, "cuda:0", 1e-4),
                                        plain_rec("matmul", 128, "cuda:0", 2e-4), end_rec(3)));
    write_records("c1.jsonl", json_pack("[o,o,o]", meta_rec(1, 2, "c1.jsonl"), backend_rec("cuda:1"), plain_rec("matmul", 64, "cuda:1", 1e-4)));
    const char *names[] = {"c0.jsonl", "c1.jsonl"};
    hb_ranks_summary s;
    char err[1024] = "";
    if (merge(names, 2, "mc.jsonl", 0, &s, err, sizeof err) != HB_OK) fail_msg("%s", err);
    assert_int_equal(s.missing, 2); /* all_reduce on rank 1, matmul 128 on cuda:1 */
    assert_int_equal(s.incomplete, 1);
    hb_run run;
    load_merged("mc.jsonl", &run);
    json_t *c = find_case(&run, "matmul", "cuda:1", 1);
    assert_non_null(c);
    assert_string_equal(hb_rec_str(c, "status"), "failed");
    assert_non_null(strstr(hb_rec_str(c, "reason"), "missing"));
    assert_string_equal(hb_rec_str(c, "key"), "matmul|m=128 n=128 k=128|cuda:1|f32|pageable|f32");
    assert_string_equal(hb_rec_str(find_case(&run, "all_reduce", NULL, 0), "status"), "failed");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(json_object_get(run.meta, "ranks"), "incomplete"), 0)), 1);
    hb_run_free(&run);
    /* the launcher's mode: a rank that wrote no file at all */
    const char *names2[] = {"c0.jsonl", "nonexistent-rank1.jsonl"};
    if (merge(names2, 2, "ma.jsonl", 1, &s, err, sizeof err) != HB_OK) fail_msg("%s", err);
    load_merged("ma.jsonl", &run);
    c = find_case(&run, "all_reduce", NULL, 0);
    assert_string_equal(hb_rec_str(c, "status"), "failed");
    json_t *pr = json_object_get(json_object_get(c, "collective"), "per_rank");
    assert_string_equal(hb_rec_str(json_array_get(pr, 1), "status"), "missing");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(json_object_get(run.meta, "ranks"), "absent"), 0)), 1);
    hb_run_free(&run);
    /* without it the absent file is refused, naming it */
    assert_int_equal(merge(names2, 2, "mx.jsonl", 0, &s, err, sizeof err), HB_EINVAL);
    assert_non_null(strstr(err, "nonexistent-rank1.jsonl"));
}

static void expect_refused(const char *const *names, int n, const char *what)
{
    char err[1600] = "";
    hb_ranks_summary s;
    hb_status st = merge(names, n, "refused.jsonl", 0, &s, err, sizeof err);
    if (st != HB_EINVAL || !strstr(err, what)) fail_msg("wanted \"%s\", got status %d: %s", what, st, err);
    char p[512];
    path_of(p, sizeof p, "refused.jsonl");
    assert_int_not_equal(access(p, F_OK), 0); /* nothing written */
}

static void test_refusals(void **state)
{
    (void)state;
    write_records("a0.jsonl", json_pack("[o,o,o]", meta_rec(0, 2, "a0.jsonl"), backend_rec("cuda:0"), end_rec(1)));
    write_records("a1.jsonl", json_pack("[o,o,o]", meta_rec(1, 2, "a1.jsonl"), backend_rec("cuda:1"), end_rec(1)));
    write_records("b1.jsonl", json_pack("[o,o]", meta_rec(1, 2, "b1.jsonl"), end_rec(1)));
    write_records("three1.jsonl", json_pack("[o]", meta_rec(1, 3, "three1.jsonl")));
    json_t *m = meta_rec(1, 2, "seed1.jsonl");
    json_object_set_new(json_object_get(m, "options"), "seed", json_integer(7));
    write_records("seed1.jsonl", json_pack("[o]", m));
    m = meta_rec(1, 2, "cl1.jsonl");
    json_object_set_new(m, "command_line", json_string("hybench run --op add --out x"));
    write_records("cl1.jsonl", json_pack("[o]", m));
    m = meta_rec(1, 2, "nol.jsonl");
    json_object_del(m, "launch");
    write_records("nol.jsonl", json_pack("[o]", m));
    /* a corrupt file: line 3 is not JSON */
    char p[512];
    path_of(p, sizeof p, "bad1.jsonl");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    json_t *bm = meta_rec(1, 2, "bad1.jsonl");
    char *ms = json_dumps(bm, JSON_COMPACT);
    json_decref(bm);
    fprintf(f, "%s\n%s\n{\"type\": \"case\", oops\n{}\n", ms, "{\"type\":\"backend\",\"backend\":\"cuda:1\"}");
    free(ms);
    fclose(f);
    const char *corrupt[] = {"a0.jsonl", "bad1.jsonl"};
    expect_refused(corrupt, 2, "bad1.jsonl:3:");
    const char *nofile[] = {"a0.jsonl", "nosuch.jsonl"};
    expect_refused(nofile, 2, "nosuch.jsonl");
    const char *twice[] = {"a0.jsonl", "a1.jsonl", "b1.jsonl"};
    expect_refused(twice, 3, "are both rank 1");
    const char *one[] = {"a1.jsonl"};
    expect_refused(one, 1, "rank 0 of the 2-rank launch");
    const char *sizes[] = {"a0.jsonl", "three1.jsonl"};
    expect_refused(sizes, 2, "three1.jsonl: meta.launch.ranks is 3");
    const char *opts[] = {"a0.jsonl", "seed1.jsonl"};
    expect_refused(opts, 2, "options.seed");
    const char *cls[] = {"a0.jsonl", "cl1.jsonl"};
    expect_refused(cls, 2, "cl1.jsonl: its command line differs");
    const char *nol[] = {"a0.jsonl", "nol.jsonl"};
    expect_refused(nol, 2, "nol.jsonl: meta.launch");
    /* a merged file is not a rank file */
    const char *ok[] = {"a0.jsonl", "a1.jsonl"};
    char err[1024];
    assert_int_equal(merge(ok, 2, "ok.jsonl", 0, NULL, err, sizeof err), HB_OK);
    const char *again[] = {"ok.jsonl", "a1.jsonl"};
    expect_refused(again, 2, "already a merged file");
}

/* hybench merge-ranks with stdout to /dev/null and its stderr text into buf (tests/cli_capture.h). */
static int run_cmd(int argc, char **argv, char *buf, size_t len)
{
    return hb_test_run_cmd(hb_cmd_merge_ranks, argc, argv, buf, len, 0);
}

static void test_command(void **state)
{
    (void)state;
    char a0[512], a1[512], bad[512], out[512], buf[4096];
    path_of(a0, sizeof a0, "a0.jsonl");
    path_of(a1, sizeof a1, "a1.jsonl");
    path_of(bad, sizeof bad, "bad1.jsonl");
    path_of(out, sizeof out, "cmd.jsonl");
    unlink(out);
    char *ok[] = {"merge-ranks", a1, "-o", out, a0, NULL};
    assert_int_equal(run_cmd(5, ok, buf, sizeof buf), HB_EXIT_OK);
    assert_int_equal(access(out, F_OK), 0);
    char *exists[] = {"merge-ranks", "-o", out, a0, a1, NULL};
    assert_int_equal(run_cmd(5, exists, buf, sizeof buf), HB_EXIT_USAGE);
    assert_non_null(strstr(buf, "--force"));
    char *force[] = {"merge-ranks", "--force", "-o", out, a0, a1, NULL};
    assert_int_equal(run_cmd(6, force, buf, sizeof buf), HB_EXIT_OK);
    char *corrupt[] = {"merge-ranks", "--force", "-o", out, a0, bad, NULL};
    assert_int_equal(run_cmd(6, corrupt, buf, sizeof buf), HB_EXIT_USAGE);
    assert_non_null(strstr(buf, "bad1.jsonl:3:"));
    char *noout[] = {"merge-ranks", a0, a1, NULL};
    assert_int_equal(run_cmd(3, noout, buf, sizeof buf), HB_EXIT_USAGE);
    char *help[] = {"merge-ranks", "--help", NULL};
    assert_int_equal(run_cmd(2, help, buf, sizeof buf), HB_EXIT_OK);
    char *csv[] = {"csv", out, NULL};
    fflush(stdout);
    int s1 = dup(1), nul = open("/dev/null", O_WRONLY);
    dup2(nul, 1);
    int rc = hb_cmd_csv(2, csv);
    fflush(stdout);
    dup2(s1, 1);
    close(s1);
    close(nul);
    assert_int_equal(rc, HB_EXIT_OK);
}

static int setup(void **state)
{
    (void)state;
    mkdir("build/test-results", 0755);
    snprintf(g_dir, sizeof g_dir, "build/test-results/ranks.XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_ranks), cmocka_unit_test(test_tensor_parallel),
        cmocka_unit_test(test_four_ranks_status),
        cmocka_unit_test(test_cut_short),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_command),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
