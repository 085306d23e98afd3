/*
 * test_workload.c - harness/workload/workload.c: the workload INI format (docs/workloads.md).
 *  - tests/data/wl_good.ini: every key; the parsed items (names, shapes, sources with their lines,
 *    masks, weights, models, quick flags, benchdnn includes with mb and alg overrides) asserted;
 *  - tests/data/bad_*.ini: each refused with the expected status, "file:line:" and reason, and
 *    nothing appended (the list holds a poisoned sentinel item that must come back untouched);
 *  - random sweeps and shapes (fixed seeds) written to a temporary file, the expansion compared
 *    with an independent computation;
 *  - the shipped workloads (default, tinyllama, resnet50): sizes, budgets, model shapes, weights;
 *  - hb_item_print's line.
 * Run from the repository root (make test does).
 */
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

#include "workload/benchdnn.h"
#include "workload/workload.h"

#define DATA "tests/data/"

/* A poisoned sentinel: every byte 0xA5, weight NaN. A loader must never touch it. */
static void sentinel(hb_item *it)
{
    memset(it, 0xA5, sizeof *it);
    it->c.weight = NAN;
}
static void list_with_sentinel(hb_item_list *l)
{
    memset(l, 0, sizeof *l);
    hb_item s;
    sentinel(&s);
    assert_int_equal(hb_item_list_push(l, &s), HB_OK);
}
static void assert_sentinel(const hb_item_list *l)
{
    hb_item s;
    sentinel(&s);
    assert_true(l->n >= 1);
    /* compare all but the weight bytes (NaN != NaN), then the weight's NaN-ness */
    assert_memory_equal(&l->v[0].c.op, &s.c.op, offsetof(hb_case, weight) - offsetof(hb_case, op));
    assert_true(isnan(l->v[0].c.weight));
    assert_memory_equal(l->v[0].c.name, s.c.name, sizeof s.c.name);
    assert_memory_equal(&l->v[0].dtype_mask, &s.dtype_mask, sizeof s.dtype_mask);
    assert_memory_equal(l->v[0].skip, s.skip, sizeof s.skip);
}

static const hb_item *find(const hb_item_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].c.name, name)) return &l->v[i];
    fail_msg("no item named %s", name);
    return NULL;
}

static void assert_src(const hb_item *it, const char *file, int line)
{
    char want[200];
    snprintf(want, sizeof want, "%s:%d", file, line);
    assert_string_equal(it->c.source, want);
}

/* ---------------------------------------------------------------------------------------------- */
static void test_good_file(void **state)
{
    (void)state;
    hb_item_list l;
    list_with_sentinel(&l);
    char err[512] = "";
    hb_status st = hb_workload_load(DATA "wl_good.ini", &l, err, sizeof err);
    if (st) fail_msg("load failed: %s", err);
    assert_sentinel(&l);
    assert_int_equal(l.n, 1 + 5 + 6 + 6 + 1 + 2 + 1 + 4);
    for (size_t i = 1; i < l.n; i++) {
        assert_true(isfinite(l.v[i].c.weight) && l.v[i].c.weight > 0);
        assert_string_equal(l.v[i].skip, "");
    }

    const char *F = DATA "wl_good.ini";
    const hb_item *it = find(&l, "wl_good.ew.1");
    assert_int_equal(it->c.op, HB_OP_ADD);
    assert_int_equal(it->c.shape.n, 1000);
    assert_src(it, F, 6);
    assert_int_equal(it->c.quick, 1);  /* first */
    assert_true(it->c.weight == 1);
    assert_string_equal(it->c.model, "");
    assert_int_equal(it->dtype_mask, 0);
    assert_int_equal(it->mode_mask, 0);
    assert_int_equal(it->route_mask, 0);

    it = find(&l, "wl_good.ew.big");
    assert_int_equal(it->c.shape.n, 1 << 20);
    assert_src(it, F, 7);
    assert_int_equal(it->c.quick, 0);

    static const int64_t ew[3] = {4096, 16384, 65536};
    static const int ewq[3] = {0, 1, 1};  /* n=16384, and last */
    for (int i = 0; i < 3; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "wl_good.ew.n=%lld", (long long)ew[i]);
        it = find(&l, nm);
        assert_int_equal(it->c.shape.n, ew[i]);
        assert_src(it, F, 8);
        assert_int_equal(it->c.quick, ewq[i]);
    }

    for (int v = 32; v <= 128; v *= 2) {
        char nm[64];
        snprintf(nm, sizeof nm, "wl_good.gemm.sq.m=%d", v);
        it = find(&l, nm);
        assert_int_equal(it->c.op, HB_OP_MATMUL);
        assert_int_equal(it->c.shape.m, v);
        assert_int_equal(it->c.shape.n, v);
        assert_int_equal(it->c.shape.k, v);
        assert_int_equal(it->dtype_mask, (1u << HB_F32) | (1u << HB_F16) | (1u << HB_BF16));
        assert_int_equal(it->mode_mask, (1u << HB_MODE_CONVERT) | (1u << HB_MODE_F32));
        assert_int_equal(it->route_mask, 1u << HB_ROUTE_PINNED);
        assert_true(it->c.weight == 2.5);
        assert_string_equal(it->c.model, "toy");
        assert_int_equal(it->c.quick, 1);
        assert_src(it, F, 13);
    }
    for (int v = 10; v <= 30; v += 10) {
        char nm[64];
        snprintf(nm, sizeof nm, "wl_good.gemm.m=%d", v);
        it = find(&l, nm);
        assert_int_equal(it->c.shape.m, v);
        assert_int_equal(it->c.shape.n, 7);
        assert_int_equal(it->c.shape.k, 5);
        assert_int_equal(it->c.quick, 0);
        assert_src(it, F, 14);
    }

    /* two ranges: the cartesian product, last range fastest; quick = 4 (the 4th case) */
    size_t g0 = (size_t)(find(&l, "wl_good.grid.rows=2,cols=3") - l.v);
    static const int64_t gr[6][2] = {{2, 3}, {2, 5}, {4, 3}, {4, 5}, {8, 3}, {8, 5}};
    for (int i = 0; i < 6; i++) {
        it = &l.v[g0 + (size_t)i];
        assert_int_equal(it->c.op, HB_OP_SUM);
        assert_int_equal(it->c.shape.rows, gr[i][0]);
        assert_int_equal(it->c.shape.cols, gr[i][1]);
        assert_int_equal(it->c.quick, i == 3);
    }

    it = find(&l, "wl_good.attn");
    assert_int_equal(it->c.op, HB_OP_ATTENTION);
    assert_int_equal(it->c.shape.batch, 1);  /* normalized */
    assert_int_equal(it->c.shape.heads, 8);
    assert_int_equal(it->c.shape.kv_heads, 2);
    assert_int_equal(it->c.shape.kv_seq, 64);
    assert_int_equal(it->c.shape.causal, 1);
    assert_int_equal(it->c.quick, 1);

    /* benchdnn include, relative to the workload file, with mb = 3 */
    it = find(&l, "c1");
    assert_int_equal(it->c.op, HB_OP_CONV2D);
    assert_int_equal(it->c.shape.batch, 3);
    assert_int_equal(it->c.shape.c, 3);
    assert_int_equal(it->c.shape.h, 9);
    assert_int_equal(it->c.shape.w, 9);
    assert_int_equal(it->c.shape.oc, 4);
    assert_int_equal(hb_shape_oh(&it->c.shape), 7);
    assert_true(it->c.weight == 2);
    assert_string_equal(it->c.model, "toy");
    assert_int_equal(it->c.quick, 1);
    assert_int_equal(it->dtype_mask, (1u << HB_DTYPE_COUNT) - 1);
    assert_src(it, DATA "bd_small_conv", 2);
    it = find(&l, "c2");
    assert_int_equal(it->c.shape.g, 2);
    assert_int_equal(it->c.shape.batch, 3);
    assert_int_equal(it->c.shape.h, 8);
    assert_int_equal(it->c.shape.w, 6);
    assert_int_equal(it->c.shape.ph, 1);
    assert_int_equal(hb_shape_ow(&it->c.shape), 6);
    assert_int_equal(it->c.quick, 1);
    it = find(&l, "p1");
    assert_int_equal(it->c.op, HB_OP_AVGPOOL);  /* alg = avg */
    assert_int_equal(it->c.shape.ph, 1);
    assert_int_equal(hb_shape_oh(&it->c.shape), 5);
    assert_int_equal(it->c.quick, 0);
    it = find(&l, "matmul_shapes_transformer:6");
    assert_int_equal(it->c.op, HB_OP_BMM);
    assert_int_equal(it->c.shape.batch, 2048);
    hb_item_list_free(&l);
    assert_null(l.v);
    assert_int_equal(l.n, 0);
}

/* ---------------------------------------------------------------------------------------------- */
typedef struct bad_case { const char *file; hb_status st; int line; const char *reason; } bad_case;
static const bad_case bad_cases[] = {
    {"bad_unknown_key.ini", HB_EINVAL, 4, "unknown key \"colour\""},
    {"bad_unknown_op.ini", HB_EINVAL, 2, "unknown op \"addd\""},
    {"bad_shape_field.ini", HB_EINVAL, 4, "unknown field \"q\""},
    {"bad_negative.ini", HB_EINVAL, 4, "negative size"},
    {"bad_absurd.ini", HB_EINVAL, 3, "absurd size"},
    {"bad_absurd_product.ini", HB_EINVAL, 7, "absurd size"},
    {"bad_missing_op.ini", HB_EINVAL, 1, "has no op"},
    {"bad_no_shape.ini", HB_EINVAL, 2, "has no shape or sweep"},
    {"bad_syntax.ini", HB_EINVAL, 4, "syntax error"},
    {"bad_outside.ini", HB_EINVAL, 1, "outside a [section]"},
    {"bad_dup_section.ini", HB_EINVAL, 7, "duplicate section [a] (first at line 1)"},
    {"bad_dup_key.ini", HB_EINVAL, 4, "duplicate key \"op\" (first at line 2)"},
    {"bad_sweep.ini", HB_EINVAL, 3, "start <= end"},
    {"bad_sweep_factor.ini", HB_EINVAL, 3, "factor must be >= 2"},
    {"bad_sweep_points.ini", HB_EINVAL, 3, "more than 256 points"},
    {"bad_sweep_field.ini", HB_EINVAL, 3, "unknown shape field \"q\""},
    {"bad_sweep_fixed.ini", HB_EINVAL, 3, "both swept and fixed"},
    {"bad_quick.ini", HB_EINVAL, 4, "selects no case"},
    {"bad_quick_index.ini", HB_EINVAL, 5, "not a case number"},
    {"bad_dtype.ini", HB_EINVAL, 4, "unknown dtype \"f64\""},
    {"bad_weight.ini", HB_EINVAL, 4, "not a positive number"},
    {"bad_batch_missing.ini", HB_EDEVICE, 2, "cannot read benchdnn list"},
    {"bad_batch_kind.ini", HB_EINVAL, 2, "unknown kind \"deconv\""},
    {"bad_batch_line.ini", HB_EINVAL, 6, "tests/data/bd_bad_conv:3: conv descriptor"},
    {"bad_mix.ini", HB_EINVAL, 2, "mixes batch with op"},
    {"bad_indent.ini", HB_EINVAL, 3, "indented line"},
    {"bad_empty_section.ini", HB_EINVAL, 1, "section [a] has no keys"},
    {"bad_mb.ini", HB_EINVAL, 4, "mb applies to batch"},
    {"bad_normalize.ini", HB_EINVAL, 3, "conv2d needs c > 0"},
    {"bad_label.ini", HB_EINVAL, 3, "bad label"},
    {"bad_late.ini", HB_EINVAL, 10, "relu needs n > 0"},
    {"bad_empty.ini", HB_EINVAL, 0, "no cases"},
    {"bad_no_bracket.ini", HB_EINVAL, 1, "without ']'"},
};

static void test_bad_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *b = &bad_cases[i];
        char path[256], err[1024], prefix[300];
        memset(err, 'X', sizeof err);
        err[sizeof err - 1] = 0;
        snprintf(path, sizeof path, DATA "%s", b->file);
        hb_item_list l;
        list_with_sentinel(&l);
        hb_status st = hb_workload_load(path, &l, err, sizeof err);
        if (st != b->st) fail_msg("%s: status %d, expected %d (%s)", b->file, st, b->st, err);
        if (b->line) snprintf(prefix, sizeof prefix, "%s:%d: ", path, b->line);
        else snprintf(prefix, sizeof prefix, "%s: ", path);
        if (strncmp(err, prefix, strlen(prefix))) fail_msg("%s: error \"%s\" does not start with \"%s\"", b->file, err, prefix);
        if (!strstr(err, b->reason)) fail_msg("%s: error \"%s\" lacks \"%s\"", b->file, err, b->reason);
        assert_int_equal(l.n, 1);  /* nothing appended */
        assert_sentinel(&l);
        hb_item_list_free(&l);
    }
}

static void test_missing_file(void **state)
{
    (void)state;
    hb_item_list l;
    list_with_sentinel(&l);
    char err[512];
    assert_int_equal(hb_workload_load(DATA "no_such_file.ini", &l, err, sizeof err), HB_EDEVICE);
    assert_non_null(strstr(err, DATA "no_such_file.ini: cannot read"));
    assert_int_equal(l.n, 1);
    hb_item_list_free(&l);
}

/* A line longer than inih's buffer must be refused, not split into two lines. */
static void test_long_line(void **state)
{
    (void)state;
    char path[] = "/tmp/hb_wl_longXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "[a]\nop = add\nshape = n=4");
    for (int i = 0; i < 400; i++) fputc(' ', f);
    fprintf(f, "  # a very long comment is stripped first, so this line is fine\n");
    fprintf(f, "shape = n=5 ");
    for (int i = 0; i < 300; i++) fputc(',', f);
    fputc('\n', f);
    fclose(f);
    hb_item_list l;
    list_with_sentinel(&l);
    char err[512];
    assert_int_equal(hb_workload_load(path, &l, err, sizeof err), HB_EINVAL);
    char want[200];
    snprintf(want, sizeof want, "%s:4: line too long", path);
    if (strncmp(err, want, strlen(want))) fail_msg("error \"%s\", expected \"%s...\"", err, want);
    assert_int_equal(l.n, 1);
    hb_item_list_free(&l);
    unlink(path);
}

/* ---------------------------------------------------------------------------------------------- */
static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int64_t rnd_range(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* Random geometric and arithmetic sweeps, random matmul shapes: the loader's expansion against
 * values computed here. */
static void test_random_sweeps(void **state)
{
    (void)state;
    enum { NSEC = 60 };
    int64_t want_n[NSEC * 300];
    int64_t want_mnk[NSEC][3];
    int kind[NSEC];
    size_t count[NSEC];
    size_t nwant = 0;
    char path[] = "/tmp/hb_wl_randXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    size_t expect_items = 0;
    for (int s = 0; s < NSEC; s++) {
        kind[s] = (int)(rnd() % 3);
        fprintf(f, "[s%d]\n", s);
        if (kind[s] == 0) {  /* geometric */
            int64_t a = rnd_range(1, 5000), fac = rnd_range(2, 9), b = a * (int64_t)pow((double)fac, (double)rnd_range(0, 6)) + rnd_range(0, 3);
            fprintf(f, "op = relu\nsweep = n=%lld..%lld*%lld\n", (long long)a, (long long)b, (long long)fac);
            count[s] = 0;
            for (int64_t v = a; v <= b; v *= fac) { want_n[nwant++] = v; expect_items++; count[s]++; }
        } else if (kind[s] == 1) {  /* arithmetic */
            int64_t a = rnd_range(1, 1000), step = rnd_range(1, 500), b = a + rnd_range(0, 200) * step / 7;
            fprintf(f, "op = add\nsweep = n=%lld..%lld+%lld\n", (long long)a, (long long)b, (long long)step);
            count[s] = 0;
            for (int64_t v = a; v <= b; v += step) { want_n[nwant++] = v; expect_items++; count[s]++; }
        } else {  /* one matmul shape, fields in random order */
            int64_t m = rnd_range(1, 3000), n = rnd_range(1, 3000), k = rnd_range(1, 3000);
            want_mnk[s][0] = m, want_mnk[s][1] = n, want_mnk[s][2] = k;
            if (rnd() & 1) fprintf(f, "op = matmul\nshape = k=%lld m=%lld n=%lld\n", (long long)k, (long long)m, (long long)n);
            else fprintf(f, "op = matmul\nshape = n=%lld, k=%lld, m=%lld\n", (long long)n, (long long)k, (long long)m);
            expect_items++;
            count[s] = 1;
        }
    }
    fclose(f);
    hb_item_list l;
    list_with_sentinel(&l);
    char err[512];
    hb_status st = hb_workload_load(path, &l, err, sizeof err);
    if (st) fail_msg("%s", err);
    assert_int_equal(l.n, 1 + expect_items);
    assert_sentinel(&l);
    size_t iw = 0, ii = 1;
    for (int s = 0; s < NSEC; s++) {
        if (kind[s] == 2) {
            const hb_item *it = &l.v[ii++];
            assert_int_equal(it->c.op, HB_OP_MATMUL);
            assert_int_equal(it->c.shape.m, want_mnk[s][0]);
            assert_int_equal(it->c.shape.n, want_mnk[s][1]);
            assert_int_equal(it->c.shape.k, want_mnk[s][2]);
            continue;
        }
        /* this section's points, in order, named <file>.s<N>.n=<value> */
        for (size_t j = 0; j < count[s]; j++) {
            assert_true(ii < l.n);
            const hb_item *it = &l.v[ii++];
            char want_name[96];
            const char *dot = strchr(it->c.name, '.');
            assert_non_null(dot);
            snprintf(want_name, sizeof want_name, ".s%d.n=%lld", s, (long long)want_n[iw]);
            assert_string_equal(dot, want_name);
            assert_int_equal(it->c.op, kind[s] == 0 ? HB_OP_RELU : HB_OP_ADD);
            assert_int_equal(it->c.shape.n, want_n[iw]);
            iw++;
        }
    }
    assert_int_equal(iw, nwant);
    assert_int_equal(ii, l.n);
    hb_item_list_free(&l);
    unlink(path);
}

/* ---------------------------------------------------------------------------------------------- */
static double item_elems(const hb_item *it)
{
    double e = (double)hb_op_output_elems(it->c.op, &it->c.shape);
    for (int i = 0; i < hb_op_get(it->c.op)->ninputs; i++) {
        double x = (double)hb_op_input_elems(it->c.op, &it->c.shape, i);
        if (x > e) e = x;
    }
    return e;
}

static void test_shipped_workloads(void **state)
{
    (void)state;
    static const char *files[3] = {"workloads/default.ini", "workloads/tinyllama.ini", "workloads/resnet50.ini"};
    hb_item_list all = {0};
    size_t start[4];
    char err[1024];
    for (int i = 0; i < 3; i++) {
        start[i] = all.n;
        if (hb_workload_load(files[i], &all, err, sizeof err)) fail_msg("%s", err);
    }
    start[3] = all.n;
    /* the CPU budget: roughly 150-200 entries in all, a quick subset of about 25 */
    size_t nquick = 0;
    for (size_t i = 0; i < all.n; i++) {
        nquick += all.v[i].c.quick != 0;
        assert_string_equal(all.v[i].skip, "");
        assert_true(all.v[i].c.source[0] != 0);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(all.v[i].c.name, all.v[j].c.name)) fail_msg("duplicate case name %s", all.v[i].c.name);
    }
    print_message("shipped workloads: %zu entries, %zu quick\n", all.n, nquick);
    assert_true(all.n >= 120 && all.n <= 200);
    assert_true(nquick >= 15 && nquick <= 35);

    /* default.ini: every family; memory-bound ops from cache-resident to >= 4x a 32 MiB L3 */
    unsigned fams = 0;
    double max_add = 0, max_quick_add = 0, min_mem = 1e30, max_mem = 0;
    int64_t mm_min = INT64_MAX, mm_max = 0;
    unsigned mm_dtypes = 0;
    int attn_seen[5] = {0};
    for (size_t i = start[0]; i < start[1]; i++) {
        const hb_item *it = &all.v[i];
        const hb_op_info *oi = hb_op_get(it->c.op);
        fams |= 1u << oi->family;
        double e = item_elems(it);
        if (!oi->compute_bound) {
            if (e < min_mem) min_mem = e;
            if (e > max_mem) max_mem = e;
        }
        if (it->c.op == HB_OP_ADD) {
            if (e > max_add) max_add = e;
            if (it->c.quick && e > max_quick_add) max_quick_add = e;
        }
        if (it->c.op == HB_OP_MATMUL && it->c.shape.m == it->c.shape.n && it->c.shape.n == it->c.shape.k) {
            if (it->c.shape.m < mm_min) mm_min = it->c.shape.m;
            if (it->c.shape.m > mm_max) mm_max = it->c.shape.m;
            mm_dtypes |= it->dtype_mask;
        }
        if (it->c.op == HB_OP_ATTENTION && it->c.shape.heads == 32 && it->c.shape.head_dim == 64 && !it->c.shape.causal)
            for (int p = 0; p < 5; p++)
                if (it->c.shape.seq == (128 << p)) attn_seen[p]++;
    }
    for (int f = HB_FAM_ELEMENTWISE; f <= HB_FAM_ATTENTION; f++)
        if (!(fams & (1u << f))) fail_msg("default.ini lacks family %s", hb_family_name((hb_family)f));
    assert_true(min_mem <= 16384);                    /* 64 KiB of f32: cache-resident */
    assert_true(max_mem >= 4.0 * 32 * 1048576 / 4);   /* >= 4x 32 MiB in f32 */
    assert_true(max_add >= 134217728.0);              /* 2^27 */
    assert_true(max_quick_add >= 16777216.0);         /* the quick subset has add at 2x the 32 MiB L3 per tensor */
    assert_int_equal(mm_min, 64);
    assert_int_equal(mm_max, 2048);
    assert_int_equal(mm_dtypes, (1u << HB_F32) | (1u << HB_TF32) | (1u << HB_F16) | (1u << HB_BF16));
    for (int p = 0; p < 5; p++) assert_int_equal(attn_seen[p], 1);

    /* tinyllama.ini: the model's shapes */
    const hb_item *it;
    struct { const char *name; int64_t m, n, k; double w; } mm[] = {
        {"tinyllama.decode.qo_proj", 1, 2048, 2048, 44}, {"tinyllama.decode.kv_proj", 1, 256, 2048, 44},
        {"tinyllama.decode.gate_up", 1, 5632, 2048, 44}, {"tinyllama.decode.down", 1, 2048, 5632, 22},
        {"tinyllama.decode.lm_head", 1, 32000, 2048, 1},
        {"tinyllama.prefill.qo_proj", 512, 2048, 2048, 44}, {"tinyllama.prefill.kv_proj", 512, 256, 2048, 44},
        {"tinyllama.prefill.gate_up", 512, 5632, 2048, 44}, {"tinyllama.prefill.down", 512, 2048, 5632, 22},
    };
    for (size_t i = 0; i < sizeof mm / sizeof mm[0]; i++) {
        it = find(&all, mm[i].name);
        assert_int_equal(it->c.op, HB_OP_MATMUL);
        assert_int_equal(it->c.shape.m, mm[i].m);
        assert_int_equal(it->c.shape.n, mm[i].n);
        assert_int_equal(it->c.shape.k, mm[i].k);
        assert_true(it->c.weight == mm[i].w);
        assert_string_equal(it->c.model, mm[i].m == 1 ? "tinyllama-decode" : "tinyllama-prefill512");
    }
    for (int T = 1; T <= 512; T += 511) {
        const char *ph = T == 1 ? "decode" : "prefill";
        char nm[96];
        snprintf(nm, sizeof nm, "tinyllama.%s.attention", ph);
        it = find(&all, nm);
        assert_int_equal(it->c.shape.heads, 32);
        assert_int_equal(it->c.shape.kv_heads, 4);
        assert_int_equal(it->c.shape.head_dim, 64);
        assert_int_equal(it->c.shape.seq, T);
        assert_int_equal(it->c.shape.kv_seq, 512);
        assert_int_equal(it->c.shape.causal, 1);
        snprintf(nm, sizeof nm, "tinyllama.%s.rmsnorm", ph);
        it = find(&all, nm);
        assert_int_equal(it->c.shape.rows, T);
        assert_int_equal(it->c.shape.cols, 2048);
        snprintf(nm, sizeof nm, "tinyllama.%s.silu", ph);
        assert_int_equal(find(&all, nm)->c.shape.n, 5632 * T);
        snprintf(nm, sizeof nm, "tinyllama.%s.mul", ph);
        assert_int_equal(find(&all, nm)->c.shape.n, 5632 * T);
        snprintf(nm, sizeof nm, "tinyllama.%s.residual", ph);
        assert_int_equal(find(&all, nm)->c.shape.n, 2048 * T);
    }

    /* resnet50.ini: 20 conv + 2 pool layers at mb 1; the *N weights give ResNet-50's 53
     * convolutions (49 + 4 projection shortcuts) and its ~4.1 GMAC of convolution per image */
    size_t nconv = 0, npool = 0, nnhwc = 0;
    double wsum = 0, gflop = 0;
    for (size_t i = start[2]; i < start[3]; i++) {
        it = &all.v[i];
        assert_int_equal(it->c.shape.batch, 1);
        if (it->c.shape.layout == HB_LAYOUT_NHWC) { /* [conv_nhwc]: the target layers in channels-last, no model total */
            nnhwc++;
            assert_int_equal(it->c.op, HB_OP_CONV2D);
            assert_string_equal(it->c.model, "");
            continue;
        }
        assert_string_equal(it->c.model, "resnet_50-mb1");
        if (it->c.op == HB_OP_CONV2D) {
            nconv++;
            wsum += it->c.weight;
            gflop += it->c.weight * hb_op_flops(it->c.op, &it->c.shape) / 1e9;
        } else {
            npool++;
        }
    }
    print_message("resnet50.ini: %zu conv layers, weighted count %.0f, %.3f GFLOP per image\n", nconv, wsum, gflop);
    assert_int_equal(nconv, 20);
    assert_int_equal(npool, 2);
    assert_int_equal(nnhwc, 2);
    assert_true(wsum == 53);
    assert_true(gflop > 7.6 && gflop < 8.4);
    assert_int_equal(find(&all, "max_pool1")->c.op, HB_OP_MAXPOOL);
    assert_int_equal(find(&all, "ave_pool5")->c.op, HB_OP_AVGPOOL);
    hb_item_list_free(&all);
}

/* ---------------------------------------------------------------------------------------------- */
static void test_item_print(void **state)
{
    (void)state;
    char buf[1024];
    memset(buf, 'X', sizeof buf);
    FILE *f = fmemopen(buf, sizeof buf, "w");
    assert_non_null(f);
    hb_item it;
    memset(&it, 0, sizeof it);
    it.c.op = HB_OP_MATMUL;
    it.c.shape.m = 100, it.c.shape.n = 200, it.c.shape.k = 300;
    snprintf(it.c.name, sizeof it.c.name, "my.case");
    snprintf(it.c.source, sizeof it.c.source, "x.ini:7");
    snprintf(it.c.model, sizeof it.c.model, "net");
    it.c.weight = 3;
    it.c.quick = 1;
    hb_item_print(f, &it);
    snprintf(it.skip, sizeof it.skip, "3D convolution");
    hb_item_print(f, &it);
    fclose(f);
    char *l2 = strchr(buf, '\n');
    assert_non_null(l2);
    *l2++ = 0;
    assert_non_null(strstr(buf, "my.case"));
    assert_non_null(strstr(buf, "matmul"));
    assert_non_null(strstr(buf, "m=100 n=200 k=300"));
    assert_non_null(strstr(buf, "GFLOP=0.012 "));  /* 2*100*200*300 = 1.2e7 */
    assert_non_null(strstr(buf, "x.ini:7"));
    assert_non_null(strstr(buf, "model=net weight=3"));
    assert_non_null(strstr(buf, " quick"));
    assert_null(strstr(buf, "skip"));
    assert_non_null(strstr(l2, "GFLOP=- "));
    assert_non_null(strstr(l2, "skip: 3D convolution\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_file),      cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_missing_file),   cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_random_sweeps),  cmocka_unit_test(test_shipped_workloads),
        cmocka_unit_test(test_item_print),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
