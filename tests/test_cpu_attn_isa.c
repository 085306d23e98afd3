/*
 * test_cpu_attn_isa.c - the cpu attention's two vector widths (kernels/cpu/attn_body.h, compiled 8 wide
 * in cpu_attn.c and 16 wide with AVX-512 in attn_avx512.c) and the run-time choice between them
 * (cpu_attn.c attn_pick_width / attn_width, HB_CPU_ATTN_ISA read per call).
 *   - attn_pick_width over every input (CPU with or without AVX-512F, body built or not, each force
 *     value): the forced path is honoured and 16 is never chosen without both the CPU and the body;
 *   - attn_width and the case's impl on this CPU under each environment setting: the width follows
 *     cpuid and the knobs (on a CPU without AVX-512F, as the development VM, never 16), and the impl
 *     names it; each setting then runs attention through the backend's hooks (random inputs, output
 *     poisoned with NaN) against the f64 reference;
 *   - the 16-wide tiling itself on any x86 CPU: attn_body.h included here at ATTN_VW 16 with this
 *     file's flags (the build's -march: two 8-wide halves on AVX2, real 512-bit vectors on an AVX-512
 *     build), on shapes at the kernel's edges under several blockings, every element against the f64
 *     reference, and the 8-wide kernel (attn_run_w8) on the same inputs likewise.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/backend.h"
#include "core/convert.h"
#include "cpu/cpu.h"
#include "cpu/cpu_priv.h"
#include "cpu_ref/ref.h"
#include "test_case.h"
#include "test_run.h"

/* the kernel body at 16 floats per vector, compiled with this test's flags (see the header comment);
 * without AVX-512, GCC warns that 64-byte vector returns change the ABI: they are all static here */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#define ATTN_VW 16
#define ATTN_RUN attn_run_test16
#include "cpu/attn_body.h"
#include "test_config.h"

static hb_instance g_cpu;


static int cpu_avx512(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? 1 : 0;
#else
    return 0;
#endif
}

/* Random q, k, v in [-2, 2) (scores of a few units: a softmax that is not flat) and the f64 reference. */
typedef struct attn_data {
    hb_case c;
    hbk_attn a;
    float *in[3];
    double *ref;
    int64_t nout;
} attn_data;

static void data_make(attn_data *d, const char *shape, uint64_t seed)
{
    memset(d, 0, sizeof *d);
    d->c = hb_test_case(HB_OP_ATTENTION, shape);
    assert_int_equal(hbk_attn_params(&d->c.shape, &d->a), 0);
    double *din[3];
    hb_test_seed(seed);
    for (int i = 0; i < 3; i++) {
        const int64_t n = hb_op_input_elems(HB_OP_ATTENTION, &d->c.shape, i);
        d->in[i] = malloc((size_t)n * sizeof(float));
        din[i] = malloc((size_t)n * sizeof(double));
        assert_non_null(d->in[i]);
        assert_non_null(din[i]);
        for (int64_t j = 0; j < n; j++)
            d->in[i][j] = (float)(2.0 * hb_test_unif());
        hb_convert(din[i], HB_ELEM_F64, d->in[i], HB_ELEM_F32, (size_t)n);
    }
    d->nout = hb_op_output_elems(HB_OP_ATTENTION, &d->c.shape);
    d->ref = malloc((size_t)d->nout * sizeof(double));
    assert_non_null(d->ref);
    assert_int_equal(hb_ref_compute(&d->c, (const double *const *)din, d->ref, 1), HB_OK);
    for (int i = 0; i < 3; i++)
        free(din[i]);
}

static void data_free(attn_data *d)
{
    for (int i = 0; i < 3; i++)
        free(d->in[i]);
    free(d->ref);
}

/* Every element finite and within 2e-5 max|ref| of the reference (test_cpu_kernels' attention bound). */
static void check_out(const attn_data *d, const float *o, const char *label)
{
    double amax = 0.0;
    for (int64_t i = 0; i < d->nout; i++)
        amax = fabs(d->ref[i]) > amax ? fabs(d->ref[i]) : amax;
    for (int64_t i = 0; i < d->nout; i++)
        if (!isfinite(o[i]) || fabs((double)o[i] - d->ref[i]) > 2e-5 * amax)
            fail_msg("%s: element %lld = %.9g, reference %.9g", label, (long long)i, (double)o[i], d->ref[i]);
}

/* The choice as a function of its inputs. */
static void test_pick_width(void **state)
{
    (void)state;
    static const char *const forces[] = { NULL, "", "auto", "avx512", "avx2", "AVX2", "sse" };
    for (int cpu = 0; cpu < 2; cpu++)
        for (int built = 0; built < 2; built++)
            for (size_t f = 0; f < sizeof forces / sizeof forces[0]; f++) {
                const int narrow = forces[f] && !strcmp(forces[f], "avx2"); /* only "avx2" asks for 8 */
                const int want = cpu && built && !narrow ? 16 : 8;
                const int got = attn_pick_width(cpu, built, forces[f]);
                if (got != want)
                    fail_msg("attn_pick_width(cpu %d, built %d, force %s) = %d, want %d", cpu, built,
                             forces[f] ? forces[f] : "NULL", got, want);
            }
}

/* One run of d's case through the backend's hooks (inputs copied into its buffers, output poisoned);
 * returns the case_info impl (caller frees). */
static char *run_backend(const attn_data *d, float *out)
{
    const hb_backend_ops *ops = g_cpu.ops;
    char reason[200] = "";
    assert_int_equal(ops->supports(&g_cpu, &d->c, reason, sizeof reason), HB_OK);
    hb_buf b[3], ob;
    hb_buf *bp[3] = { &b[0], &b[1], &b[2] };
    for (int i = 0; i < 3; i++) {
        const int64_t n = hb_op_input_elems(HB_OP_ATTENTION, &d->c.shape, i);
        assert_int_equal(ops->buf_alloc(&g_cpu, (size_t)n * 4, d->c.route, &b[i]), HB_OK);
        memcpy(b[i].host, d->in[i], (size_t)n * 4);
    }
    assert_int_equal(ops->buf_alloc(&g_cpu, (size_t)d->nout * 4, d->c.route, &ob), HB_OK);
    float *y = ob.host;
    for (int64_t j = 0; j < d->nout; j++)
        y[j] = NAN;
    assert_int_equal(ops->run(&g_cpu, &d->c, bp, &ob), HB_OK);
    memcpy(out, y, (size_t)d->nout * 4);
    char info[2048];
    assert_int_equal(ops->case_info(&g_cpu, &d->c, info, sizeof info), HB_OK);
    json_t *o = json_loads(info, 0, NULL);
    assert_non_null(o);
    const char *im = json_string_value(json_object_get(o, "impl"));
    char *impl = strdup(im ? im : "");
    json_decref(o);
    ops->buf_free(&g_cpu, &ob);
    for (int i = 0; i < 3; i++)
        ops->buf_free(&g_cpu, &b[i]);
    return impl;
}

/* The width and impl on this CPU under each setting of the knobs, each run checked. */
static void test_dispatch_this_cpu(void **state)
{
    (void)state;
    const int cpu = cpu_avx512();
#if defined(__x86_64__)
    assert_int_equal(attn_avx512_built, 1); /* the Makefile compiles attn_avx512.c with AVX-512 */
#endif
    /* wide: the knobs leave the automatic choice, 16 where the CPU has AVX-512F (HB_CPU_ATTN_ISA when
     * set, else HB_CPU_ISA; only avx2 asks for 8) */
    static const struct { const char *attn_isa, *cpu_isa; int wide; } env[] = {
        { NULL, NULL, 1 },       { "avx2", NULL, 0 },   { "auto", NULL, 1 },   { "avx512", NULL, 1 },
        { NULL, "avx2", 0 },     { "auto", "avx2", 1 }, { "avx2", "auto", 0 }, { NULL, "avx512", 1 },
        { "avx2", "avx512", 0 },
    };
    attn_data d;
    data_make(&d, "batch=2 heads=8 kv_heads=2 seq=37 kv_seq=45 head_dim=40 causal=1", 41);
    float *out = malloc((size_t)d.nout * sizeof(float));
    assert_non_null(out);
    for (size_t e = 0; e < sizeof env / sizeof env[0]; e++) {
        if (env[e].attn_isa) setenv("HB_CPU_ATTN_ISA", env[e].attn_isa, 1);
        else unsetenv("HB_CPU_ATTN_ISA");
        if (env[e].cpu_isa) setenv("HB_CPU_ISA", env[e].cpu_isa, 1);
        else unsetenv("HB_CPU_ISA");
        const int want = cpu && attn_avx512_built && env[e].wide ? 16 : 8;
        const int w = attn_width();
        char label[160];
        snprintf(label, sizeof label, "HB_CPU_ATTN_ISA=%s HB_CPU_ISA=%s (cpu avx512f %d)",
                 env[e].attn_isa ? env[e].attn_isa : "unset", env[e].cpu_isa ? env[e].cpu_isa : "unset", cpu);
        if (w != want)
            fail_msg("%s: width %d, want %d", label, w, want);
        if (!cpu)
            assert_int_equal(w, 8); /* never the AVX-512 body on a CPU without it */
        char *impl = run_backend(&d, out);
        if (getenv("HB_TEST_VERBOSE"))
            print_message("  %-52s width %2d impl %s\n", label, w, impl);
        assert_true(!strncmp(impl, "own-flash", 9));
        if ((strstr(impl, "avx512") != NULL) != (w == 16))
            fail_msg("%s: impl %s does not name width %d", label, impl, w);
        assert_string_equal(impl, attn_impl());
        check_out(&d, out, label);
        free(impl);
    }
    unsetenv("HB_CPU_ATTN_ISA");
    unsetenv("HB_CPU_ISA");
    free(out);
    data_free(&d);
}

/* io for the op's layouts (cpu_attn.c k_attention) over d's tensors and o. */
static attn_io io_of(const hbk_attn *a, const attn_data *d, float *o)
{
    const int64_t qb = a->heads * a->seq * a->d, kb = a->kvh * a->kvs * a->d;
    const int64_t qh = a->bshd ? a->d : a->seq * a->d, qp = a->bshd ? a->heads * a->d : a->d;
    const int64_t kh = a->bshd ? a->d : a->kvs * a->d, kp = a->bshd ? a->kvh * a->d : a->d;
    const attn_io io = { .q = d->in[0], .k = d->in[1], .v = d->in[2], .o = o,
                         .qs = { qb, qh, qp }, .os = { qb, qh, qp }, .ks = { kb, kh, kp }, .vs = { kb, kh, kp } };
    return io;
}

/* The 16-wide body and the 8-wide kernel on the tile edges (test_cpu_kernels' attention shapes plus
 * bshd, d = 16 and 17, kv_seq < seq), each against the reference. */
static void test_body16(void **state)
{
    (void)state;
    static const char *const shapes[] = {
        "batch=2 heads=6 kv_heads=2 seq=100 head_dim=64 causal=1",
        "batch=1 heads=8 seq=70 kv_seq=200 head_dim=128 causal=1",
        "batch=1 heads=4 kv_heads=1 seq=33 kv_seq=77 head_dim=19",
        "batch=1 heads=32 kv_heads=4 seq=1 kv_seq=300 head_dim=64 causal=1",
        "batch=1 heads=2 seq=131 head_dim=40 causal=1",
        "batch=3 heads=4 kv_heads=2 seq=5 kv_seq=9 head_dim=128 causal=1",
        "batch=1 heads=16 kv_heads=2 seq=7 kv_seq=130 head_dim=16 causal=1",
        "batch=1 heads=1 seq=3 kv_seq=5 head_dim=1 causal=1",
        "batch=2 heads=4 kv_heads=2 seq=29 head_dim=17 causal=1 layout=bshd",
        "batch=1 heads=3 seq=50 kv_seq=20 head_dim=24", /* fewer keys than queries */
        /* fewer items than two per thread: the keys split over items and merged (flash-decoding) */
        "batch=1 heads=8 kv_heads=1 seq=1 kv_seq=300 head_dim=64 causal=1",
        "batch=1 heads=4 kv_heads=1 seq=2 kv_seq=129 head_dim=24",
        "batch=1 heads=2 kv_heads=1 seq=3 kv_seq=70 head_dim=8 causal=1",
    };
    static const char *const knobs[][2] = { { NULL, NULL }, { "16", "12" }, { "5", "6" }, { "200", "300" } };
    for (size_t kn = 0; kn < sizeof knobs / sizeof knobs[0]; kn++) {
        if (knobs[kn][0]) {
            setenv("HB_CPU_ATTN_TQ", knobs[kn][0], 1);
            setenv("HB_CPU_ATTN_TK", knobs[kn][1], 1);
        }
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            attn_data d;
            data_make(&d, shapes[k], 500u + k);
            float *o16 = malloc((size_t)d.nout * sizeof(float)), *o8 = malloc((size_t)d.nout * sizeof(float));
            assert_non_null(o16);
            assert_non_null(o8);
            for (int64_t i = 0; i < d.nout; i++)
                o16[i] = o8[i] = NAN;
            attn_io io16 = io_of(&d.a, &d, o16), io8 = io_of(&d.a, &d, o8);
            assert_int_equal(attn_run_test16(&d.a, &io16), HB_OK);
            assert_int_equal(attn_run_w8(&d.a, &io8), HB_OK);
            char label[200];
            snprintf(label, sizeof label, "16 wide, %s (TQ %s TK %s)", shapes[k], knobs[kn][0] ? knobs[kn][0] : "default",
                     knobs[kn][1] ? knobs[kn][1] : "default");
            check_out(&d, o16, label);
            snprintf(label, sizeof label, "8 wide, %s (TQ %s TK %s)", shapes[k], knobs[kn][0] ? knobs[kn][0] : "default",
                     knobs[kn][1] ? knobs[kn][1] : "default");
            check_out(&d, o8, label);
            free(o16);
            free(o8);
            data_free(&d);
        }
    }
    unsetenv("HB_CPU_ATTN_TQ");
    unsetenv("HB_CPU_ATTN_TK");
}

static int setup(void **state)
{
    (void)state;
    return hb_test_open(&hb_cpu_ops, &g_cpu);
}

static int teardown(void **state)
{
    (void)state;
    hb_test_close(&g_cpu);
    return 0;
}

int main(void)
{
    /* the run's settings from the environment, as cli/main.c reads them (core/config.h) */
    hb_config_from_env(hb_config_boundary());
    hb_cpu_ops.configure(hb_config_get());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick_width),
        cmocka_unit_test(test_dispatch_this_cpu),
        cmocka_unit_test(test_body16),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
