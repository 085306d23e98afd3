/*
 * test_record_write.c - case, plan, end and backend records written from their structs
 * (results/record.h, record_codec.c, write.c hb_rec_case_json, hb_rec_plan_json, hb_rec_end_json,
 * hb_rec_backend_json): every such record of the given results files (argv; without arguments
 * the tests' own files: tests/data, docs/collectives, docs/ggml, docs/replay, the fuzz corpus) is parsed into its
 * struct and written back, and the JSON must be the same: the same keys in the same order, the same
 * values bit for bit (compared as dumped with 17 significant digits), null for non-finite numbers;
 * hand-made records cover every optional part and the odd forms a file may hold (an integer where a
 * real is due, "inf", unknown keys, a phase that is not an object); a case, a plan, an end and a
 * backend record with a random value in every member of every table are written, read and written
 * again; and a struct filled member by
 * member with HB_REC_SET is written in the order it was filled, each kind in its JSON form.
 * run_tests.sh also runs it over every results file the end-to-end checks wrote (build/test-results).
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/rstats.h"
#include "results/results.h"

static int g_argc;
static char **g_argv;
static hb_rng g;

#define DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY)

/* Parses rec into a case struct (a plan, end, backend or meta struct by its type) and writes it back; 1 when
 * the two dumps are equal (else prints both). */
static int round_trips(json_t *rec, const char *where)
{
    hb_rec_case c;
    hb_rec_plan pl;
    hb_rec_end e;
    hb_rec_backend be;
    hb_rec_meta me;
    const char *type = json_string_value(json_object_get(rec, "type"));
    int plan = type && !strcmp(type, "plan"), end = type && !strcmp(type, "end");
    int backend = type && (!strcmp(type, "backend") || !strcmp(type, "pass_backend"));
    int meta = type && !strcmp(type, "meta");
    memset(&c, 0x5a, sizeof c); /* poisoned: the parser must set every member */
    memset(&pl, 0x5a, sizeof pl);
    memset(&e, 0x5a, sizeof e);
    memset(&be, 0x5a, sizeof be);
    memset(&me, 0x5a, sizeof me);
    json_t *back;
    if (meta) {
        assert_int_equal(hb_rec_meta_parse(rec, &me), HB_OK);
        back = hb_rec_meta_json(&me);
        hb_rec_meta_free(&me);
        memset(&c, 0, sizeof c);
    } else if (backend) {
        assert_int_equal(hb_rec_backend_parse(rec, &be), HB_OK);
        back = hb_rec_backend_json(&be);
        hb_rec_backend_free(&be);
        memset(&c, 0, sizeof c);
    } else if (end) {
        assert_int_equal(hb_rec_end_parse(rec, &e), HB_OK);
        back = hb_rec_end_json(&e);
        hb_rec_end_free(&e);
        memset(&c, 0, sizeof c);
    } else if (plan) {
        assert_int_equal(hb_rec_plan_parse(rec, &pl), HB_OK);
        back = hb_rec_plan_json(&pl);
        hb_rec_plan_free(&pl);
        memset(&c, 0, sizeof c);
    } else {
        assert_int_equal(hb_rec_case_parse(rec, &c), HB_OK);
        back = hb_rec_case_json(&c);
    }
    assert_non_null(back);
    char *a = json_dumps(rec, DUMP_FLAGS), *b = json_dumps(back, DUMP_FLAGS);
    int same = a && b && !strcmp(a, b);
    if (!same) fprintf(stderr, "%s: written back differs\n  read:    %s\n  written: %s\n", where, a, b);
    free(a);
    free(b);
    json_decref(back);
    hb_rec_case_free(&c);
    return same;
}

/* Every case, plan, end, backend and meta record (pass_ ones too) of file path round-trips; returns how many
 * were checked. */
static size_t check_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = 0, lineno = 0, cap = 0;
    char *line = NULL;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        json_t *r = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL); /* a torn last line (a killed run) is skipped */
        const char *t = json_string_value(json_object_get(r, "type"));
        if (t && (!strcmp(t, "case") || !strcmp(t, "pass_case") || !strcmp(t, "plan") || !strcmp(t, "end") ||
                  !strcmp(t, "backend") || !strcmp(t, "pass_backend") || !strcmp(t, "meta"))) {
            char where[600];
            snprintf(where, sizeof where, "%s:%zu", path, lineno);
            assert_true(round_trips(r, where));
            n++;
        }
        json_decref(r);
    }
    free(line);
    fclose(f);
    return n;
}

static size_t check_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 7 || strcmp(e->d_name + l - 6, ".jsonl")) continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        n += check_file(p);
    }
    closedir(d);
    return n;
}

static void test_files(void **state)
{
    (void)state;
    size_t n = 0;
    if (g_argc > 1)
        for (int i = 1; i < g_argc; i++) n += check_file(g_argv[i]);
    else {
        static const char *const dirs[] = {"tests/data", "docs/collectives", "docs/ggml", "docs/replay", "tests/fuzz/corpus/report"};
        for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) n += check_dir(dirs[i]);
    }
    fprintf(stderr, "test_files: %zu case, plan, end, backend and meta records written back alike\n", n);
    if (g_argc <= 1) assert_true(n >= 100); /* the tests' files hold hundreds */
}

/* Hand-made records: every optional part, and the forms a file may hold besides hybench's own. */
static const char *const hand[] = {
    /* an op case as sample.c writes it, with every optional member */
    "{\"type\":\"case\",\"key\":\"k\",\"backend\":\"cuda:0\",\"op\":\"matmul\",\"family\":\"matmul\","
    "\"shape\":{\"m\":64,\"n\":32,\"k\":16},\"shape_str\":\"m=64,n=32,k=16\",\"size\":2048,\"name\":\"a\",\"source\":\"w.ini\","
    "\"model\":\"\",\"weight\":1.0,\"dtype\":\"f32\",\"mode\":\"convert\",\"route\":\"pinned\",\"flops\":65536,\"bytes\":14336.5,"
    "\"bound\":\"compute\",\"ci_target\":0.02,\"warmup_runs\":3,\"wall_s\":{\"setup\":0.25,\"sampling\":1.5,\"reference\":0.125},"
    "\"reference_cache\":\"read\",\"settle_runs\":1.5,\"interleaved_with\":2,\"repetitions\":3,\"window_medians\":[0.001,0.002,null],"
    "\"best_window\":1,\"phases\":{\"convert_in\":{\"n\":5,\"min\":1e-06,\"max\":2e-06,\"mean\":1.5e-06,\"median\":1.5e-06,"
    "\"p10\":1e-06,\"p90\":2e-06,\"mad\":0.0,\"stddev\":3e-07,\"cv\":0.2,\"ci_lo\":1e-06,\"ci_hi\":2e-06},\"total\":{\"n\":5,"
    "\"median\":0.003}},\"samples\":{\"total\":[0.003,0.004],\"compute\":[0.001,0.0015]},\"host_compute\":{\"n\":2,\"median\":0.002},"
    "\"ci_met\":true,\"host_clock_ghz\":{\"min\":2.5,\"max\":3.5,\"before\":[2.5,3.0],\"after\":[2.75,3.5]},\"gflops\":12.5,"
    "\"gbps\":3.25,\"gflops_total\":10.0,\"gbps_total\":2.0,\"ceiling\":\"peak_gflops_f32\",\"ceiling_value\":null,"
    "\"fraction\":null,\"rel_err\":\"inf\",\"tolerance\":0.001,\"verified_fraction\":1.0,"
    "\"extra\":{\"impl\":\"cublas\",\"conv_choice\":{\"exhaustive_best_ms\":0.5},\"host_enqueue_s\":1e-05},\"impl\":\"cublas\","
    "\"timer_disagreement\":false,\"timer_agreement\":{\"host_s\":0.002,\"device_s\":0.0019,\"diff\":0.05,\"agree\":true,"
    "\"host_enqueue_s\":1e-05,\"why\":\"launch\",\"explained\":true},\"energy\":{\"source\":\"nvml\",\"available\":true,"
    "\"window_s\":1.0,\"min_window_s\":1.0,\"calls\":100,\"counter_updates\":20,\"joules\":50.5,\"power_w\":50.5,\"j_per_op\":0.505,"
    "\"s_per_op\":0.01,\"idle_power_w\":null,\"j_per_op_net\":null,\"gflop_per_j\":0.25,\"gb_per_j\":0.125,\"batch\":10},"
    "\"instructions\":{\"tool\":\"callgrind\",\"calls\":4,\"per_call\":12345.5,\"events\":{\"Ir\":12345.5}},"
    "\"mem\":{\"host_bytes\":100,\"staging_bytes\":0,\"device_bytes\":4096,\"peak_rss_bytes\":123456789,"
    "\"device_free_bytes\":80000000000,\"device_total_bytes\":85899345920},\"served\":{\"round\":1,\"prepared_per_round\":false,"
    "\"setups\":1,\"references\":1,\"setups_in_round\":0,\"references_in_round\":0,\"setup_s\":0.5},\"status\":\"ok\","
    "\"passes\":2,\"pass_medians\":{\"total\":[0.003,null],\"compute\":[0.001,0.002]},\"best_pass\":1,\"ab_rounds\":4,\"schema\":7}",
    /* a chain case: layer, graph unavailable, tensor parallel per rank, model file, steps' implementations */
    "{\"type\":\"case\",\"op\":\"chain\",\"steps\":14,\"weight_bytes\":123456789012,\"model_file\":{\"path\":\"m.gguf\","
    "\"layer\":0,\"layers\":22,\"weights\":{\"blk.0.attn_q.weight\":\"q4_k\"}},\"steps_impl\":[{\"op\":\"matmul\",\"impl\":\"own\"},"
    "{\"op\":\"add\",\"impl\":\"sleef\"}],\"layer\":{\"n\":3,\"median\":0.01,\"enqueue_s\":0.001},"
    "\"graph\":{\"unavailable\":\"no graph capture\"},\"tensor_parallel\":{\"ranks\":2,\"rank\":0,\"time_s\":0.01,\"steps_s\":0.008,"
    "\"allreduce_s\":0.002,\"allreduce_share\":0.2,\"graph_s\":0.009,\"per_rank\":[{\"rank\":0,\"backend\":\"cuda:0\",\"status\":\"ok\","
    "\"time_s\":0.01,\"steps_s\":0.008,\"allreduce_s\":0.002,\"rel_err\":1e-07,\"graph_s\":0.009}],\"time_max_s\":0.011,"
    "\"time_ranks\":2},\"status\":\"ok\"}",
    /* a collective merged over ranks: per-rank nulls */
    "{\"type\":\"case\",\"op\":\"all_reduce\",\"collective\":{\"size_bytes\":1048576,\"time_s\":0.001,\"algbw_gbps\":1.0,"
    "\"busbw_gbps\":1.5,\"busbw_factor\":1.5,\"ranks\":2,\"path\":\"nccl\",\"in_place\":false,\"per_rank\":[{\"rank\":0,"
    "\"backend\":null,\"status\":\"failed\",\"reason\":\"x\",\"time_s\":null,\"busbw_gbps\":null,\"rel_err\":null}],"
    "\"time_max_s\":0.002,\"time_ranks\":2},\"status\":\"ok\"}",
    /* forms hybench does not write but a file may hold: integers where reals are due, unknown keys
     * (top level and nested), a phase that is not an object, samples of integers, a shape with an unknown
     * field, best_pass as a string, a boolean where a number is due, a string where a boolean is due */
    "{\"type\":\"case\",\"future\":{\"x\":1},\"gflops\":5,\"phases\":{\"total\":null,\"compute\":{\"median\":1,\"later\":2}},"
    "\"samples\":{\"total\":[1,2,3],\"other\":[1]},\"shape\":{\"n\":4,\"zz\":1},\"best_pass\":\"1\",\"interleaved_with\":1.5,"
    "\"size\":true,\"ci_met\":\"yes\",\"mem\":[1],\"collective\":{\"per_rank\":[1,{\"rank\":1}]},\"status\":null,\"passes\":9007199254740993}",
    /* a status record (nothing measured) and an empty one */
    "{\"type\":\"case\",\"key\":\"k\",\"status\":\"skipped\",\"reason\":\"unsupported\",\"schema\":7}",
    "{}",
};

static void test_hand_made(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        json_error_t e;
        json_t *r = json_loads(hand[i], 0, &e);
        if (!r) fail_msg("hand-made record %zu: %s", i, e.text);
        char where[32];
        snprintf(where, sizeof where, "hand-made %zu", i);
        assert_true(round_trips(r, where));
        json_decref(r);
    }
    /* what the readers see of the odd forms: today's reading rule (record.h) */
    json_t *r = json_loads(hand[3], 0, NULL);
    hb_rec_case c;
    assert_int_equal(hb_rec_case_parse(r, &c), HB_OK);
    assert_true(c.gflops == 5 && c.has_phase[HB_PH_TOTAL] && isnan(c.phase[HB_PH_TOTAL].median));
    assert_true(c.phase[HB_PH_COMPUTE].median == 1 && c.samples[HB_PH_TOTAL].n == 3 && c.samples[HB_PH_TOTAL].v[2] == 3);
    assert_true(c.has_best_pass && !c.best_pass_is_int && c.best_pass == -1);
    assert_true(!c.has_interleaved_with && isnan(c.interleaved_with) && isnan(c.size) && c.ci_met == -1);
    assert_true(c.shape.present && HB_REC_SHAPE(&c.shape, n) == 4 && c.collective.nper_rank == 2 &&
                isnan(c.collective.per_rank[0].rank) && c.collective.per_rank[1].rank == 1 && !c.status);
    hb_rec_case_free(&c);
    json_decref(r);
    r = json_loads(hand[0], 0, NULL);
    assert_int_equal(hb_rec_case_parse(r, &c), HB_OK);
    assert_true(isnan(c.rel_err) && c.wall.reference == 0.125 && c.clock.after.v[1] == 3.5 && c.timer.agree == 1);
    assert_true(c.energy.present && c.energy.batch == 10 && c.served.prepared_per_round == 0 && c.ab_rounds == 4);
    assert_true(c.mem.device_total_bytes == 85899345920.0 && c.window_medians.n == 3 && isnan(c.window_medians.v[2]));
    assert_string_equal(c.extra.impl, "cublas");
    assert_true(c.extra.conv_exhaustive_best_ms == 0.5 && c.has_instructions_per_call && c.instructions_per_call == 12345.5);
    hb_rec_case_free(&c);
    json_decref(r);
}

/* A random value of each kind, as JSON (for the table-wide record below). */
static double rnd(void) { return ldexp((double)(hb_rng_next(&g) >> 11), -53) * exp(20 * hb_rng_uniform(&g) - 10); }

static json_t *random_object(const hb_rec_table *t, int depth);

static json_t *random_value(const hb_rec_field *f, int depth)
{
    int odd = hb_rng_next(&g) % 8 == 0; /* now and then the null a non-finite figure is written as */
    switch (f->kind) {
    case HB_RK_STR: return odd ? json_null() : json_sprintf("s%llu", (unsigned long long)(hb_rng_next(&g) % 1000));
    case HB_RK_REAL: case HB_RK_REAL_INF: return odd ? json_null() : json_real(rnd());
    case HB_RK_INT: return json_integer((json_int_t)(hb_rng_next(&g) % 100000000000ull));
    case HB_RK_COUNT: return odd ? json_real(rnd() + 0.5) : json_integer((json_int_t)(hb_rng_next(&g) % (1ull << 53)));
    case HB_RK_I64: return json_integer((json_int_t)(hb_rng_next(&g) >> 1));
    case HB_RK_BOOL: return json_boolean(hb_rng_next(&g) % 2);
    case HB_RK_NUMS: case HB_RK_INTS: {
        json_t *a = json_array();
        for (int i = (int)(hb_rng_next(&g) % 6); i > 0; i--)
            json_array_append_new(a, i == 3 ? json_null()
                                     : f->kind == HB_RK_NUMS ? json_real(rnd()) : json_integer((json_int_t)(hb_rng_next(&g) % 100000)));
        return a;
    }
    case HB_RK_STRS: {
        json_t *a = json_array();
        for (int i = (int)(hb_rng_next(&g) % 4); i > 0; i--) json_array_append_new(a, json_sprintf("w%d.ini", i));
        return a;
    }
    case HB_RK_SHAPE: return json_pack("{s:I,s:I}", "n", (json_int_t)(1 + hb_rng_next(&g) % 4096), "m", (json_int_t)7);
    case HB_RK_JSON: return json_pack("{s:f,s:[i]}", "x", rnd(), "y", 3);
    case HB_RK_OBJ: case HB_RK_GROUP: return random_object(f->sub, depth + 1);
    case HB_RK_ARR: {
        json_t *a = json_array();
        for (int i = 1 + (int)(hb_rng_next(&g) % 3); i > 0; i--) json_array_append_new(a, random_object(f->sub, depth + 1));
        return a;
    }
    }
    return json_null();
}

/* Every row of t, in a random order, with a random value. */
static json_t *random_object(const hb_rec_table *t, int depth)
{
    int idx[128];
    assert_true(t->n <= 128 && depth < 4);
    for (int i = 0; i < t->n; i++) idx[i] = i;
    for (int i = t->n - 1; i > 0; i--) {
        int j = (int)(hb_rng_next(&g) % (uint64_t)(i + 1)), x = idx[i];
        idx[i] = idx[j];
        idx[j] = x;
    }
    json_t *o = json_object();
    for (int i = 0; i < t->n; i++) json_object_set_new(o, t->f[idx[i]].key, random_value(&t->f[idx[i]], depth));
    return o;
}

static void test_every_row(void **state)
{
    (void)state;
    for (int k = 0; k < 50; k++) {
        json_t *r = random_object(&hb_rec_case_table, 0);
        assert_true(round_trips(r, "random record"));
        /* and the struct's members hold the values (one of each kind) */
        hb_rec_case c;
        assert_int_equal(hb_rec_case_parse(r, &c), HB_OK);
        json_t *v = json_object_get(r, "gflops"), *m = json_object_get(json_object_get(r, "mem"), "device_bytes");
        assert_true(json_is_null(v) ? isnan(c.gflops) : c.gflops == json_real_value(v));
        assert_true(c.mem.device_bytes == (double)json_integer_value(m));
        assert_true(c.best_pass == (long long)json_integer_value(json_object_get(r, "best_pass")));
        assert_int_equal(c.nsteps_impl, json_array_size(json_object_get(r, "steps_impl")));
        hb_rec_case_free(&c);
        json_decref(r);
        /* a plan record with every member too */
        r = random_object(&hb_rec_plan_table, 0);
        json_object_set_new(r, "type", json_string("plan"));
        assert_true(round_trips(r, "random plan record"));
        hb_rec_plan pl;
        assert_int_equal(hb_rec_plan_parse(r, &pl), HB_OK);
        assert_int_equal(pl.nsteps, json_array_size(json_object_get(r, "steps")));
        v = json_object_get(json_object_get(json_object_get(r, "phases"), "device"), "median");
        assert_true(pl.has_device && (json_is_null(v) ? isnan(pl.device.median) : pl.device.median == json_real_value(v)));
        hb_rec_plan_free(&pl);
        json_decref(r);
        /* and an end record */
        r = random_object(&hb_rec_end_table, 0);
        json_object_set_new(r, "type", json_string("end"));
        assert_true(round_trips(r, "random end record"));
        hb_rec_end e;
        assert_int_equal(hb_rec_end_parse(r, &e), HB_OK);
        assert_true(e.cases == (double)json_integer_value(json_object_get(r, "cases")));
        hb_rec_end_free(&e);
        json_decref(r);
        /* and a backend record: its info read through the JSON it keeps */
        r = random_object(&hb_rec_backend_table, 0);
        json_object_set_new(r, "type", json_string("backend"));
        json_object_set_new(r, "info", json_pack("{s:s,s:i}", "name", "GPU Z", "cudnn_version", 91400));
        assert_true(round_trips(r, "random backend record"));
        hb_rec_backend b;
        assert_int_equal(hb_rec_backend_parse(r, &b), HB_OK);
        assert_string_equal(b.info.name, "GPU Z");
        assert_true(b.info.cudnn_version.kind == 2 && b.info.cudnn_version.n == 91400);
        assert_true(b.host_memory == json_is_true(json_object_get(r, "host_memory")));
        assert_int_equal(b.nceilings, json_array_size(json_object_get(r, "ceilings")));
        hb_rec_backend_free(&b);
        json_decref(r);
        /* and a meta record: its objects' members in the struct, its display texts */
        r = random_object(&hb_rec_meta_table, 0);
        json_object_set_new(r, "type", json_string("meta"));
        assert_true(round_trips(r, "random meta record"));
        hb_rec_meta me;
        assert_int_equal(hb_rec_meta_parse(r, &me), HB_OK);
        json_t *opts = json_object_get(r, "options");
        assert_int_equal(me.options.workloads.n, json_array_size(json_object_get(opts, "workloads")));
        assert_true(me.options.seed == (long long)json_integer_value(json_object_get(opts, "seed")));
        assert_true(me.cpu.cores == (double)json_integer_value(json_object_get(json_object_get(r, "cpu"), "cores")));
        assert_true(me.has_cpu && me.has_schema && me.options_text && me.clock_text && me.openblas_text);
        json_t *ab = json_object_get(r, "ab");
        assert_int_equal(me.ab.turns.n, json_array_size(json_object_get(ab, "turns")));
        assert_true(me.ab.pair == json_string_value(json_object_get(ab, "pair")));
        hb_rec_meta_free(&me);
        json_decref(r);
        /* and hybench ab's verdict object, through its table */
        r = random_object(&hb_rec_ab_summary_table, 0);
        hb_rec_ab_summary sm;
        memset(&sm, 0x5a, sizeof sm);
        assert_int_equal(hb_rec_decode(&hb_rec_ab_summary_table, &sm, r), HB_OK);
        assert_int_equal(sm.nround_seconds, json_array_size(json_object_get(r, "round_seconds")));
        json_t *back = hb_rec_ab_summary_json(&sm);
        char *x = json_dumps(r, DUMP_FLAGS), *y = json_dumps(back, DUMP_FLAGS);
        assert_string_equal(x, y);
        free(x);
        free(y);
        json_decref(back);
        hb_rec_release(&hb_rec_ab_summary_table, &sm);
        json_decref(r);
    }
}

/* A struct filled member by member (as measure/ fills one): written in the order filled, each kind in
 * its form; a member set again keeps its place; a value read as kept (verbatim) is replaced once set. */
static void test_filled(void **state)
{
    (void)state;
    hb_rec_case c;
    memset(&c, 0, sizeof c);
    hb_rec_clear(&hb_rec_case_table, &c);
    assert_int_equal(HB_REC_SET(hb_rec_case, &c, type, "case"), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_case, &c, status, "ok"), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_case, &c, rel_err, INFINITY), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_case, &c, fraction, NAN), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_case, &c, flops, 3.5), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_case, &c, bytes, 4096), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_case, &c, warmup_runs, 3), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_case, &c, ci_met, 0), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_case, &c, weight, 1), HB_OK);
    hb_rec_stats *t = &c.phase[HB_PH_TOTAL];
    assert_int_equal(HB_REC_SET(hb_rec_stats, t, n, 2), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_stats, t, median, 0.25), HB_OK);
    assert_int_equal(hb_rec_put(&hb_rec_case_table, &c, offsetof(hb_rec_case, phase[HB_PH_TOTAL])), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_mem, &c.mem, host_bytes, 10), HB_OK);
    assert_int_equal(hb_rec_put(&hb_rec_case_table, &c, offsetof(hb_rec_case, mem)), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_case, &c, status, "wrong"), HB_OK); /* keeps its place */
    assert_int_equal(hb_rec_put(&hb_rec_case_table, &c, 1), HB_EINVAL);      /* no member there */
    json_t *j = hb_rec_case_json(&c);
    char *s = json_dumps(j, DUMP_FLAGS);
    assert_string_equal(s, "{\"type\":\"case\",\"status\":\"wrong\",\"rel_err\":\"inf\",\"fraction\":null,\"flops\":3.5,"
                           "\"bytes\":4096,\"warmup_runs\":3,\"ci_met\":false,\"weight\":1.0,\"phases\":{\"total\":{\"n\":2,"
                           "\"median\":0.25}},\"mem\":{\"host_bytes\":10}}");
    free(s);
    json_decref(j);
    hb_rec_case_free(&c);
    /* read, then set: the member set is written from the struct in its place */
    json_t *r = json_loads("{\"a\":1,\"gflops\":5,\"rel_err\":\"inf\",\"phases\":{\"total\":null}}", 0, NULL);
    assert_int_equal(hb_rec_case_parse(r, &c), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_case, &c, rel_err, 0.5), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_case, &c, gflops, 2.5), HB_OK);
    assert_int_equal(HB_REC_SET(hb_rec_stats, &c.phase[HB_PH_TOTAL], median, 1.5), HB_OK);
    assert_int_equal(hb_rec_put(&hb_rec_case_table, &c, offsetof(hb_rec_case, phase[HB_PH_TOTAL])), HB_OK);
    j = hb_rec_case_json(&c);
    s = json_dumps(j, DUMP_FLAGS);
    assert_string_equal(s, "{\"a\":1,\"gflops\":2.5,\"rel_err\":0.5,\"phases\":{\"total\":{\"median\":1.5}}}");
    free(s);
    json_decref(j);
    hb_rec_case_free(&c);
    json_decref(r);
}

int main(int argc, char **argv)
{
    g_argc = argc;
    g_argv = argv;
    hb_rng_seed(&g, 20261128u ^ (uint64_t)getpid());
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_files), cmocka_unit_test(test_hand_made),
                                       cmocka_unit_test(test_every_row), cmocka_unit_test(test_filled)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
