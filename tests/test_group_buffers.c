/*
 * test_group_buffers.c - the start state a compute shares across modes (docs/measurement.md):
 *   - hb_host_evict (core/hostcache.h) leaves the data as it was, for any start and length;
 *   - the modes of one group (measure/sample.c hb_measure_group) compute on one set of buffers:
 *     one allocation per input and output for the group, every record verified and ok, the memory
 *     accounting of each mode as if it were alone;
 *   - with shared buffers, each mode's last output is still checked as its own: a mode whose later
 *     runs go wrong is marked wrong even when another mode ran after it;
 *   - served rounds move the group's buffers to new memory before every round after the first.
 * A fake device backend (its own "device" memory, the pageable and mapped routes, add in f32) stands
 * in for cuda; nothing here is timed.
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
#include <jansson.h>

#include "core/backend.h"
#include "core/hostcache.h"
#include "measure/internal.h"

/* ---------------------------------------------------------------- hb_host_evict */

static void test_evict_keeps_data(void **state)
{
    (void)state;
    const size_t n = 100003; /* not a multiple of the line */
    unsigned char *a = malloc(n + 64), *ref = malloc(n + 64);
    assert_non_null(a);
    assert_non_null(ref);
    uint64_t x = 0x243f6a8885a308d3ull;
    for (size_t i = 0; i < n + 64; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        a[i] = ref[i] = (unsigned char)(x >> 56);
    }
    static const size_t starts[6] = {0, 1, 63, 64, 65, 4097}, lens[7] = {0, 1, 63, 64, 65, 9999, 100003 - 4097};
    for (int k = 0; k < 6 * 7; k++) {
        size_t at = starts[k / 7] % n, len = lens[k % 7];
        if (at + len > n) continue;
        /* a line just written (dirty) is written back, not lost */
        memset(a + at, a[at] ^ 0x5a, 1);
        memset(ref + at, ref[at] ^ 0x5a, 1);
        hb_host_evict(a + at, len);
        assert_memory_equal(a, ref, n + 64);
    }
    hb_host_evict(NULL, 0);
    const char *m = hb_host_evict_method();
    assert_true(!strcmp(m, "clflushopt") || !strcmp(m, "clflush") || !strcmp(m, "dc civac") || !strcmp(m, "none"));
#if defined(__x86_64__)
    assert_string_not_equal(m, "none");
#endif
    free(a);
    free(ref);
}

/* ---------------------------------------------------------------- a fake device backend */

static int g_allocs;          /* buf_alloc calls */
static int g_fail_alloc;      /* > 0: the buf_alloc call of this number (g_allocs + 1) fails */
static void *g_last_host[8], *g_last_dev[8]; /* the memory of the last 8 allocations, by g_allocs % 8 */
static int64_t g_dev_bytes;   /* "device" bytes held */
static long g_f32_runs;       /* run calls of the f32-mode case */
static long g_corrupt_after;  /* > 0: the f32 mode's runs after this many write a wrong result */
static useconds_t g_convert_sleep_us; /* > 0: every run of the convert-mode case takes this much longer */

static int fake_enumerate(hb_instance *out, int max, char *reason, size_t len)
{
    (void)out; (void)max; (void)reason; (void)len;
    return 0;
}
static void fake_close(hb_instance *inst) { (void)inst; }
static hb_status fake_supports(hb_instance *inst, const hb_case *c, char *reason, size_t len)
{
    (void)inst;
    if (c->op != HB_OP_ADD || c->dtype != HB_F32 || c->mode == HB_MODE_CONVERT_DEVICE) {
        snprintf(reason, len, "fake: add in f32 only");
        return HB_ESKIP;
    }
    return HB_OK;
}
static hb_status fake_alloc(hb_instance *inst, size_t bytes, hb_route route, hb_buf *out)
{
    (void)inst;
    memset(out, 0, sizeof *out);
    if (g_fail_alloc && g_allocs + 1 == g_fail_alloc) return HB_ENOMEM;
    size_t r = (bytes + 63) / 64 * 64;
    out->host = aligned_alloc(64, r);
    if (!out->host) return HB_ENOMEM;
    out->bytes = bytes;
    out->route = route;
    if (route == HB_ROUTE_MAPPED) out->dev = out->host; /* zero-copy: the device reads host memory */
    else {
        out->dev = aligned_alloc(64, r);
        if (!out->dev) { free(out->host); return HB_ENOMEM; }
        g_dev_bytes += (int64_t)r;
    }
    g_last_host[g_allocs % 8] = out->host;
    g_last_dev[g_allocs % 8] = out->dev;
    g_allocs++;
    return HB_OK;
}
static void fake_free(hb_instance *inst, hb_buf *b)
{
    (void)inst;
    if (b->dev && b->dev != b->host) { free(b->dev); g_dev_bytes -= (int64_t)((b->bytes + 63) / 64 * 64); }
    free(b->host);
    memset(b, 0, sizeof *b);
}
static hb_status fake_upload(hb_instance *inst, hb_buf *b)
{
    (void)inst;
    if (b->dev != b->host) memcpy(b->dev, b->host, b->bytes);
    return HB_OK;
}
static hb_status fake_download(hb_instance *inst, hb_buf *b)
{
    (void)inst;
    if (b->dev != b->host) memcpy(b->host, b->dev, b->bytes);
    return HB_OK;
}
static hb_status fake_run(hb_instance *inst, const hb_case *c, hb_buf *const *in, hb_buf *out)
{
    (void)inst;
    const float *a = in[0]->dev, *b = in[1]->dev;
    float *y = out->dev;
    size_t n = (size_t)c->shape.n;
    for (size_t i = 0; i < n; i++) y[i] = a[i] + b[i];
    if (c->mode == HB_MODE_F32 && ++g_f32_runs > g_corrupt_after && g_corrupt_after > 0) y[n / 2] += 1000.0f;
    if (c->mode == HB_MODE_CONVERT && g_convert_sleep_us) usleep(g_convert_sleep_us);
    return HB_OK;
}
static void fake_mem_info(hb_instance *inst, int64_t *alloc, int64_t *free_b, int64_t *total_b)
{
    (void)inst;
    *alloc = g_dev_bytes;
    *free_b = *total_b = -1;
}

static const hb_backend_ops fake_ops = {
    .abi = HB_BACKEND_ABI, .type = "fake", .enumerate = fake_enumerate, .close = fake_close,
    .supports = fake_supports, .buf_alloc = fake_alloc, .buf_free = fake_free, .upload = fake_upload,
    .download = fake_download, .run = fake_run, .mem_info = fake_mem_info,
};

static hb_case add_case(hb_mode mode, hb_route route, long n)
{
    hb_case c;
    memset(&c, 0, sizeof c);
    c.op = HB_OP_ADD;
    c.dtype = HB_F32;
    c.mode = mode;
    c.route = route;
    c.shape.n = n;
    c.weight = 1;
    char err[200];
    assert_int_equal(hb_shape_normalize(HB_OP_ADD, &c.shape, err, sizeof err), HB_OK);
    return c;
}

static hb_options test_options(void)
{
    hb_options o;
    memset(&o, 0, sizeof o);
    o.budget_s = 1.0;  /* max_samples ends the sampling */
    o.ci_target = 1e-9; /* never met: every mode takes its max_samples */
    o.min_samples = 3;
    o.max_samples = 20;
    o.repetitions = 1;
    o.passes = 1;
    o.ref_max_gflop = 2;
    o.case_timeout_s = 60;
    o.seed = 42;
    return o;
}

static const char *rec_str(json_t *r, const char *k) { return json_string_value(json_object_get(r, k)); }
static long long mem_num(json_t *r, const char *k) { return json_integer_value(json_object_get(json_object_get(r, "mem"), k)); }

/* hb_measure_group over cs[0..nm-1] on the fake device, with options opt (NULL: the test options) and a
 * fresh reference cache (freed here); returns its result */
static int measure_on_fake(const hb_case *cs, int nm, json_t **recs, hb_status *st, const hb_options *opt)
{
    hb_instance inst;
    memset(&inst, 0, sizeof inst);
    snprintf(inst.name, sizeof inst.name, "fake:0");
    inst.ops = &fake_ops;
    hb_options o = opt ? *opt : test_options();
    hb_ref_cache rc;
    memset(&rc, 0, sizeof rc);
    rc.item = -1;
    hb_ceiling_set cl;
    memset(&cl, 0, sizeof cl);
    int r = hb_measure_group(&inst, cs, nm, 0, "", &o, &rc, &cl, recs, st);
    hb_ref_cache_free(&rc);
    return r;
}

/* One group of modes on the fake device: every mode ok, one allocation per buffer for the group. */
static void group_on_route(hb_route route, const hb_mode *modes, int nm)
{
    const long n = 4099;
    hb_case cs[4];
    for (int k = 0; k < nm; k++) cs[k] = add_case(modes[k], route, n);
    json_t *recs[4] = {0};
    hb_status st[4];
    g_allocs = 0;
    g_f32_runs = 0;
    g_corrupt_after = 0;
    assert_int_equal(measure_on_fake(cs, nm, recs, st, NULL), 0);
    assert_int_equal(g_allocs, 3); /* a, b and the output: once for the whole group */
    assert_int_equal(g_dev_bytes, 0); /* and freed once */
    long long dev0 = -1, host0 = -1;
    for (int k = 0; k < nm; k++) {
        assert_non_null(recs[k]);
        assert_int_equal(st[k], HB_OK);
        assert_string_equal(rec_str(recs[k], "status"), "ok");
        assert_true(json_number_value(json_object_get(recs[k], "rel_err")) < 1e-6);
        assert_int_equal(json_integer_value(json_object_get(recs[k], "interleaved_with")), nm - 1);
        /* each mode's device bytes are the set it computes on, as if it were alone */
        long long dev = mem_num(recs[k], "device_bytes");
        if (route == HB_ROUTE_MAPPED) assert_int_equal(dev, 0);
        else assert_int_equal(dev, 3 * ((n * 4 + 63) / 64 * 64));
        if (k == 0) dev0 = dev;
        assert_int_equal(dev, dev0);
        long long host = mem_num(recs[k], "host_bytes");
        if (modes[k] == HB_MODE_F32 && host0 < 0) host0 = host;
        json_decref(recs[k]);
    }
    assert_int_equal(host0, 3 * n * 4); /* f32: its host tensors are the buffers */
}

static void test_group_shares_buffers(void **state)
{
    (void)state;
    const hb_mode dev_modes[] = {HB_MODE_CONVERT, HB_MODE_F32, HB_MODE_RESIDENT};
    group_on_route(HB_ROUTE_PAGEABLE, dev_modes, 3);
    const hb_mode mapped_modes[] = {HB_MODE_CONVERT, HB_MODE_F32};
    group_on_route(HB_ROUTE_MAPPED, mapped_modes, 2); /* the evicting hot rule's path (prepare.c) */
}

/* The f32 mode's runs go wrong after its verification; convert (first in the group, so last in the
 * final round of turns) leaves a correct result in the shared output: f32 must still read wrong. */
static void test_last_output_checked_per_mode(void **state)
{
    (void)state;
    const long n = 4099;
    hb_case cs[2] = {add_case(HB_MODE_CONVERT, HB_ROUTE_PAGEABLE, n), add_case(HB_MODE_F32, HB_ROUTE_PAGEABLE, n)};
    json_t *recs[2] = {0};
    hb_status st[2];
    g_f32_runs = 0;
    g_corrupt_after = 12; /* past its verification run (at most 9 runs: 8 settle + the timed one) */
    assert_int_equal(measure_on_fake(cs, 2, recs, st, NULL), 0);
    g_corrupt_after = 0;
    assert_true(g_f32_runs > 3 * 12); /* it kept running wrong through its samples */
    assert_string_equal(rec_str(recs[0], "status"), "ok");
    assert_string_equal(rec_str(recs[1], "status"), "wrong");
    assert_int_equal(st[1], HB_EWRONG);
    json_decref(recs[0]);
    json_decref(recs[1]);
}

/* Two modes whose own stopping rules end far apart (convert's runs take 1 ms and spend its budget in a
 * few samples, f32's take microseconds and would run to the cap): measured together, they take the
 * same rounds to the end, so neither is sampled alone; the group stops on the sum of their budgets,
 * far below the cap. */
static void test_modes_share_rounds(void **state)
{
    (void)state;
    const long n = 4099;
    hb_case cs[2] = {add_case(HB_MODE_CONVERT, HB_ROUTE_PAGEABLE, n), add_case(HB_MODE_F32, HB_ROUTE_PAGEABLE, n)};
    json_t *recs[2] = {0};
    hb_status st[2];
    hb_options o = test_options();
    o.budget_s = 0.02;
    o.max_samples = 200;
    g_corrupt_after = 0;
    g_convert_sleep_us = 1000;
    assert_int_equal(measure_on_fake(cs, 2, recs, st, &o), 0);
    g_convert_sleep_us = 0;
    long long ns[2];
    for (int k = 0; k < 2; k++) {
        assert_string_equal(rec_str(recs[k], "status"), "ok");
        ns[k] = json_integer_value(json_object_get(json_object_get(json_object_get(recs[k], "phases"), "total"), "n"));
        assert_int_equal(json_array_size(json_object_get(json_object_get(recs[k], "samples"), "compute")), (size_t)ns[k]);
    }
    assert_int_equal(ns[0], ns[1]);
    assert_true(ns[0] >= o.min_samples);
    assert_true(ns[0] < 40); /* ~9 ms per convert sample (1 + 8 settle runs): the group's 0.04 s, not f32's cap */
    double cf = json_number_value(json_object_get(json_object_get(json_object_get(recs[0], "phases"), "compute"), "median"));
    double ff = json_number_value(json_object_get(json_object_get(json_object_get(recs[1], "phases"), "compute"), "median"));
    assert_true(cf > 0.0009 && ff < cf / 10); /* the sleep is in convert's compute only */
    json_decref(recs[0]);
    json_decref(recs[1]);
}

/* Served rounds (hb_group_prepare, then hb_group_sample per round): the first round computes where
 * set-up put the buffers; every later round moves them to new memory first (sample.c group_move:
 * one new set for the group, host and device addresses other than the set before, the old set freed)
 * and still checks every mode's output; a move that fails keeps the old set and the round goes on. */
static void test_served_rounds_move_buffers(void **state)
{
    (void)state;
    const long n = 4099;
    const hb_mode modes[3] = {HB_MODE_CONVERT, HB_MODE_F32, HB_MODE_RESIDENT};
    hb_case cs[3];
    for (int k = 0; k < 3; k++) cs[k] = add_case(modes[k], HB_ROUTE_PAGEABLE, n);
    hb_instance inst;
    memset(&inst, 0, sizeof inst);
    snprintf(inst.name, sizeof inst.name, "fake:0");
    inst.ops = &fake_ops;
    hb_options o = test_options();
    hb_ref_cache rc;
    memset(&rc, 0, sizeof rc);
    rc.item = -1;
    hb_ceiling_set cl;
    memset(&cl, 0, sizeof cl);
    g_allocs = 0; g_f32_runs = 0; g_corrupt_after = 0; g_fail_alloc = 0;
    hb_group *g = hb_group_prepare(&inst, cs, 3, 0, "", &o, &rc, &cl);
    assert_non_null(g);
    assert_int_equal(g_allocs, 3);
    const int64_t one_set = 3 * ((n * 4 + 63) / 64 * 64);
    void *host[3], *dev[3];
    for (int round = 1; round <= 4; round++) {
        for (int i = 0; i < 3; i++) { host[i] = g_last_host[(g_allocs - 3 + i) % 8]; dev[i] = g_last_dev[(g_allocs - 3 + i) % 8]; }
        const int allocs0 = g_allocs;
        if (round == 4) g_fail_alloc = g_allocs + 2; /* the second buffer of the move fails */
        json_t *recs[3] = {0};
        hb_status st[3];
        assert_int_equal(hb_group_sample(g, &o, &cl, recs, st), 0);
        if (round == 1) assert_int_equal(g_allocs, allocs0);           /* set-up's buffers */
        else if (round < 4) {
            assert_int_equal(g_allocs, allocs0 + 3);                   /* one new set for the group */
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    assert_ptr_not_equal(g_last_host[(allocs0 + i) % 8], host[j]);
                    assert_ptr_not_equal(g_last_dev[(allocs0 + i) % 8], dev[j]);
                }
        }
        assert_int_equal(g_dev_bytes, one_set);                        /* the old set freed */
        assert_int_equal(hb_group_placements(g), round < 4 ? round : 3); /* the failed move: kept */
        for (int k = 0; k < 3; k++) {
            assert_non_null(recs[k]);
            assert_string_equal(rec_str(recs[k], "status"), "ok");
            assert_true(json_number_value(json_object_get(recs[k], "rel_err")) < 1e-6);
            json_decref(recs[k]);
        }
        g_fail_alloc = 0;
    }
    hb_group_free(g);
    hb_ref_cache_free(&rc);
    assert_int_equal(g_dev_bytes, 0);
}

/* Timer agreement: which gap between the host clock and the device events each verdict explains. Random
 * device times of 0.1-10 ms; gaps drawn inside and outside each allowance (HB_TIMER_SYNC_S plus
 * HB_TIMER_AGREE of the device time). */
static hb_rec_timer ta_t;
static char ta_buf[256];
/* hb_timer_agreement into a fresh struct (the previous one freed) */
static hb_rec_timer *ta(double host_s, double device_s, double enqueue_s)
{
    hb_rec_release(&hb_rec_timer_table, &ta_t);
    memset(ta_buf, 0, sizeof ta_buf);
    assert_int_equal(hb_timer_agreement(&ta_t, ta_buf, sizeof ta_buf, host_s, device_s, enqueue_s), HB_OK);
    return &ta_t;
}
static const char *ta_why(const hb_rec_timer *t) { return t->why ? t->why : ""; }
static void test_timer_agreement(void **state)
{
    (void)state;
    hb_rec_clear(&hb_rec_timer_table, &ta_t);
    unsigned long long x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 200; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        double u = (double)(x >> 11) * 0x1p-53;
        double dev = 100e-6 * pow(100.0, u); /* 0.1 .. 10 ms */
        double allow = HB_TIMER_AGREE * dev + HB_TIMER_SYNC_S;
        hb_rec_timer *o = ta(dev * (1 + 0.5 * HB_TIMER_AGREE), dev, NAN);
        assert_int_equal(o->agree, 1);
        assert_null(o->why);
        assert_int_equal(o->explained, -1);
        if (dev * (1 + HB_TIMER_AGREE) < dev + 0.9 * allow) { /* a gap beyond 3% but inside the latency allowance */
            o = ta(dev + 0.9 * allow, dev, NAN);
            assert_int_equal(o->agree, 0);
            assert_int_equal(o->explained, 1);
            assert_non_null(strstr(ta_why(o), "launch and synchronization latency"));
        }
        /* library calls before the first launch, plus latency */
        double enq = 0.2 * dev + 5e-6;
        o = ta(dev + enq + 0.5 * allow, dev, enq);
        assert_int_equal(o->explained, 1);
        assert_true(o->host_enqueue_s == enq);
        assert_non_null(strstr(ta_why(o), "host-side library calls"));
        /* a gap far beyond both: unexplained, and said so */
        o = ta(dev + enq + 3 * allow, dev, enq);
        assert_int_equal(o->explained, 0);
        assert_true(strncmp(ta_why(o), "unexplained", 11) == 0);
        o = ta(dev + 3 * allow, dev, NAN);
        assert_int_equal(o->explained, 0);
        /* the host clock under the device events beyond 3% is never "latency" */
        o = ta(dev * (1 - 2 * HB_TIMER_AGREE), dev, NAN);
        assert_int_equal(o->explained, 0);
    }
    hb_rec_timer *o = ta(60e-6, 40e-6, NAN); /* under 100 us */
    assert_non_null(strstr(ta_why(o), "under 100 us"));
    /* written in the record's order */
    json_t *j = hb_rec_encode(&hb_rec_timer_table, o);
    char *s = json_dumps(j, JSON_COMPACT);
    assert_non_null(strstr(s, "{\"host_s\":"));
    assert_non_null(strstr(s, ",\"agree\":false,\"why\":\"device time"));
    assert_non_null(strstr(s, "\"explained\":true}"));
    free(s);
    json_decref(j);
    hb_rec_release(&hb_rec_timer_table, &ta_t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_evict_keeps_data),
        cmocka_unit_test(test_group_shares_buffers),
        cmocka_unit_test(test_last_output_checked_per_mode),
        cmocka_unit_test(test_modes_share_rounds),
        cmocka_unit_test(test_served_rounds_move_buffers),
        cmocka_unit_test(test_timer_agreement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
