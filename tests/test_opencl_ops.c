/*
 * test_opencl_ops.c - every op of the OpenCL plugin (build/hb_opencl.so, loaded as the registry loads
 * it: opencl_fixture.h) on random inputs in [-1, 1] (never zeros) with the output poisoned (NaN)
 * before each run, against the f64 reference (hb_ref_compute) within hb_op_tolerance: one shape per
 * op and its edge cases, over the kernel styles (cpu, gpu), both GEMM implementations (own kernel,
 * CLBlast), f16 storage (HB_OPENCL_FORCE_F16=1) and the three routes; every elementwise row of the op
 * table; matmul with quantized weights (test_qmatmul.h). The routes, timers, errors and the rest of
 * the plugin: test_opencl.c. No OpenCL platform (or no plugin built): every test skips with the
 * reason printed.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "opencl_fixture.h"
#include "test_qmatmul.h"

/* One shape per op and its edge cases (vector tails, chunked reductions, groups, strides, pads,
 * dilation, GQA, causal with kv_seq > seq, head dims of every vector width). */
static const struct { hb_op op; const char *shape; } g_cases[] = {
    {HB_OP_ADD, "n=100003"}, {HB_OP_MUL, "n=4099"}, {HB_OP_RELU, "n=1027"}, {HB_OP_GELU, "n=50001"},
    {HB_OP_SILU, "n=50001"}, {HB_OP_SIGMOID, "n=50001"}, {HB_OP_SIGMOID, "n=21"}, {HB_OP_ADD, "n=3"},
    {HB_OP_MATMUL, "m=67 n=45 k=33"}, {HB_OP_MATMUL, "m=128 n=96 k=64"}, {HB_OP_MATMUL, "m=1 n=200 k=77"},
    {HB_OP_MATMUL, "m=9 n=50 k=1100"}, {HB_OP_MATMUL, "m=1 n=300 k=1500"},   /* k-blocked accumulation */
    {HB_OP_BMM, "batch=3 m=17 n=40 k=9"}, {HB_OP_BMM, "batch=3 m=1 n=37 k=300"},
    {HB_OP_CONV2D, "batch=2 c=4 h=11 w=9 oc=6 kh=3 kw=3 sh=2 sw=1 ph=1 pw=2 dh=2 dw=1 g=2"},
    {HB_OP_CONV2D, "batch=2 c=8 h=7 w=7 oc=16 kh=1"},
    {HB_OP_CONV2D, "batch=1 c=6 h=10 w=10 oc=6 kh=3 ph=1 g=6"},
    {HB_OP_CONV2D, "batch=2 c=3 h=20 w=20 oc=8 kh=7 sh=2 ph=3"},
    {HB_OP_CONV2D, "batch=3 c=96 h=6 w=5 oc=10 kh=3 ph=1"},                    /* im2col K = 864 */
    /* layout=nhwc (x NHWC, w OHWI, y NHWC): NHWC im2col + GEMM against W^T; 1x1 on x itself */
    {HB_OP_CONV2D, "batch=2 c=4 h=11 w=9 oc=6 kh=3 kw=3 sh=2 sw=1 ph=1 pw=2 dh=2 dw=1 g=2 layout=nhwc"},
    {HB_OP_CONV2D, "batch=2 c=8 h=7 w=7 oc=16 kh=1 layout=nhwc"},
    {HB_OP_CONV2D, "batch=2 c=8 h=7 w=7 oc=16 kh=1 g=2 layout=nhwc"},
    {HB_OP_CONV2D, "batch=1 c=6 h=10 w=10 oc=6 kh=3 ph=1 g=6 layout=nhwc"},
    {HB_OP_CONV2D, "batch=3 c=96 h=6 w=5 oc=10 kh=3 ph=1 layout=nhwc"},
    {HB_OP_MAXPOOL, "batch=2 c=3 h=13 w=12 kh=3 sh=2 ph=1"}, {HB_OP_AVGPOOL, "batch=2 c=3 h=13 w=12 kh=3 sh=2 ph=1"},
    {HB_OP_AVGPOOL, "batch=1 c=2 h=7 w=7 kh=7"},
    {HB_OP_SUM, "rows=300 cols=77"}, {HB_OP_SUM, "rows=3 cols=100003"}, {HB_OP_MEAN, "rows=5 cols=40000"},
    {HB_OP_MAX, "rows=2 cols=70001"}, {HB_OP_MAX, "rows=33 cols=5"}, {HB_OP_SUM_ALL, "n=1048581"},
    {HB_OP_SUM_ALL, "n=7"}, {HB_OP_RMSNORM, "rows=5 cols=1000"}, {HB_OP_RMSNORM, "rows=17 cols=64"},
    {HB_OP_RMSNORM, "rows=3 cols=1001"},  /* f16 rows at odd elements: vector loads/stores at 2-byte alignment */
    {HB_OP_ATTENTION, "batch=2 heads=4 kv_heads=2 seq=37 kv_seq=53 head_dim=64 causal=1"},
    {HB_OP_ATTENTION, "batch=1 heads=2 seq=20 head_dim=24"},
    {HB_OP_ATTENTION, "batch=1 heads=2 kv_heads=1 seq=1 kv_seq=100 head_dim=12 causal=1"},
    {HB_OP_ATTENTION, "batch=1 heads=1 seq=9 head_dim=7 causal=1"},
};
#define NCASES ((int)(sizeof g_cases / sizeof g_cases[0]))

/* Every op under the current environment, in dtype d, route r. */
static void all_ops(hb_dtype d, hb_route r, const char *label)
{
    hb_instance inst = open_inst();
    char desc[4096];
    assert_int_equal(inst.ops->describe(&inst, desc, sizeof desc), HB_OK);
    double t0 = now_s();
    for (int i = 0; i < NCASES; i++) {
        hb_case c = mk(g_cases[i].op, g_cases[i].shape, d, HB_MODE_F32, r);
        char reason[256] = "";
        hb_status sup = inst.ops->supports(&inst, &c, reason, sizeof reason);
        if (sup != HB_OK) fail_msg("%s: supports(%s) = %d: %s", label, g_cases[i].shape, (int)sup, reason);
        double rel = -1;
        hb_status st = check_case(&inst, &c, &rel);
        if (st != HB_OK) fail_msg("%s: run %s %s returned %s", label, hb_op_get(c.op)->name, g_cases[i].shape, hb_status_name(st));
    }
    printf("%s: %d cases ok in %.2f s\n", label, NCASES, now_s() - t0);
    inst.ops->close(&inst);
}

/* Every elementwise op of the op table (shape kind HB_SK_EW) has a row in ocl_run.c's kernel table:
 * supports says OK and the run matches the f64 reference (random inputs, output poisoned: check_case). */
static void test_ew_table_complete(void **state)
{
    (void)state;
    hb_instance inst = open_inst();
    for (int op = 0; op < HB_OP_COUNT; op++) {
        if (hb_op_get((hb_op)op)->kind != HB_SK_EW) continue;
        /* dequantize reads a quantized dtype's blocks, never f32: test_qmatmul.h's qm_dequant_all checks it */
        if (hb_quant_input((hb_op)op, HB_Q4_K) == 0)
            continue;
        hb_case c = mk((hb_op)op, "n=37", HB_F32, HB_MODE_F32, HB_ROUTE_PAGEABLE);
        char reason[256] = "";
        if (inst.ops->supports(&inst, &c, reason, sizeof reason) != HB_OK)
            fail_msg("no OpenCL kernel for elementwise op %s: %s", hb_op_get(c.op)->name, reason);
        assert_int_equal(check_case(&inst, &c, NULL), HB_OK);
    }
    inst.ops->close(&inst);
}

static void test_ops_default(void **state)
{
    (void)state;
    all_ops(HB_F32, HB_ROUTE_PAGEABLE, "f32 default (cpu style, own gemm)");
}

static void test_ops_gpu_style(void **state)
{
    (void)state;
    setenv("HB_OPENCL_STYLE", "gpu", 1);
    setenv("HB_OPENCL_NO_CLBLAST", "1", 1);
    all_ops(HB_F32, HB_ROUTE_PINNED, "f32 gpu-style kernels, own local-memory gemm, pinned");
    unsetenv("HB_OPENCL_STYLE");
    unsetenv("HB_OPENCL_NO_CLBLAST");
}

static void test_ops_clblast(void **state)
{
    (void)state;
    setenv("HB_OPENCL_MATMUL", "clblast", 1);
    hb_instance inst = open_inst();
    char buf[4096];
    hb_case c = mk(HB_OP_MATMUL, "m=67 n=45 k=33", HB_F32, HB_MODE_F32, HB_ROUTE_PAGEABLE);
    assert_int_equal(inst.ops->case_info(&inst, &c, buf, sizeof buf), HB_OK);
    unsetenv("HB_OPENCL_MATMUL");
    if (!strstr(buf, "\"clblast\"")) {
        printf("SKIP: CLBlast not compiled in (%s)\n", buf);
        inst.ops->close(&inst);
        skip();
    }
    /* the GEMM users: matmul, bmm (strided batched), conv2d (im2col + batched with a_stride 0, and 1x1) */
    for (int i = 0; i < NCASES; i++) {
        hb_op op = g_cases[i].op;
        if (op != HB_OP_MATMUL && op != HB_OP_BMM && op != HB_OP_CONV2D) continue;
        hb_case cc = mk(op, g_cases[i].shape, HB_F32, HB_MODE_F32, HB_ROUTE_MAPPED);
        assert_int_equal(check_case(&inst, &cc, NULL), HB_OK);
    }
    inst.ops->close(&inst);
    /* the own kernel when forced, and it is recorded */
    setenv("HB_OPENCL_NO_CLBLAST", "1", 1);
    setenv("HB_OPENCL_MATMUL", "clblast", 1);
    inst = open_inst();
    assert_int_equal(inst.ops->case_info(&inst, &c, buf, sizeof buf), HB_OK);
    assert_non_null(strstr(buf, "\"matmul_impl\":\"tiled\""));
    inst.ops->close(&inst);
    unsetenv("HB_OPENCL_NO_CLBLAST");
    unsetenv("HB_OPENCL_MATMUL");
}

static void test_ops_f16(void **state)
{
    (void)state;
    /* without cl_khr_fp16 the f16 cases are skipped with the reason ... */
    hb_instance inst = open_inst();
    char reason[256] = "";
    const int fp16 = described(&inst, "fp16");
    hb_case c = mk(HB_OP_ADD, "n=100", HB_F16, HB_MODE_F32, HB_ROUTE_PAGEABLE);
    hb_status sup = inst.ops->supports(&inst, &c, reason, sizeof reason);
    if (fp16) assert_int_equal(sup, HB_OK);
    else {
        assert_int_equal(sup, HB_ESKIP);
        assert_non_null(strstr(reason, "cl_khr_fp16"));
    }
    inst.ops->close(&inst);
    /* ... and the f16 storage paths themselves run (forced where the extension is missing) */
    setenv("HB_OPENCL_FORCE_F16", "1", 1);
    all_ops(HB_F16, HB_ROUTE_MAPPED, "f16 storage, cpu style, mapped");
    setenv("HB_OPENCL_STYLE", "gpu", 1);
    all_ops(HB_F16, HB_ROUTE_PAGEABLE, "f16 storage, gpu style");
    unsetenv("HB_OPENCL_STYLE");
    unsetenv("HB_OPENCL_FORCE_F16");
}

/* Every op over every route (mapped buffers are unmapped by run when the host still holds them). */
static void test_routes_all_ops(void **state)
{
    (void)state;
    hb_instance inst = open_inst();
    for (int r = HB_ROUTE_PINNED; r < HB_ROUTE_COUNT; r++)
        for (int i = 0; i < NCASES; i += 3) {
            hb_case c = mk(g_cases[i].op, g_cases[i].shape, HB_F32, HB_MODE_CONVERT, (hb_route)r);
            assert_int_equal(check_case(&inst, &c, NULL), HB_OK);
        }
    inst.ops->close(&inst);
}

/* Every format at m = 1, 5, 64, 300, odd n, k of 1..3 blocks and one longer, over the routes, against
 * the f64 reference of the dequantized weights (tests/test_qmatmul.h); case_info names the kernel; the
 * skips: another op, a k that is no whole number of blocks, mode convert-device; a weight buffer
 * smaller than the blocks is refused. */
static void test_qmatmul(void **state)
{
    (void)state;
    hb_instance inst = open_inst();
    int ran = 0;
    int failures = qm_run_all(inst.ops, &inst, "qmatmul", "\"qmatmul_impl\":\"hb_qmm_", &ran);
    failures += qm_dequant_all(inst.ops, &inst, HB_ROUTE_COUNT, &ran);
    printf("%d quantized matmul cases ran, %d failed\n", ran, failures);
    assert_int_equal(failures, 0);
    char reason[256];
    for (int d = HB_Q8_0; d <= HB_Q6_K; d++) {
        hb_case c = mk(HB_OP_MATMUL, "m=5 n=7 k=48", (hb_dtype)d, HB_MODE_F32, HB_ROUTE_PAGEABLE);
        reason[0] = 0;
        assert_int_equal(inst.ops->supports(&inst, &c, reason, sizeof reason), HB_ESKIP);
        assert_non_null(strstr(reason, "block"));
        c = mk(HB_OP_BMM, "batch=2 m=5 n=7 k=256", (hb_dtype)d, HB_MODE_F32, HB_ROUTE_PAGEABLE);
        assert_int_equal(inst.ops->supports(&inst, &c, reason, sizeof reason), HB_ESKIP);
        c = mk(HB_OP_MATMUL, "m=5 n=7 k=256", (hb_dtype)d, HB_MODE_CONVERT_DEVICE, HB_ROUTE_PAGEABLE);
        assert_int_equal(inst.ops->supports(&inst, &c, reason, sizeof reason), HB_ESKIP);
        c.mode = HB_MODE_RESIDENT;
        assert_int_equal(inst.ops->supports(&inst, &c, reason, sizeof reason), HB_OK);
        /* the weight buffer one byte short of the blocks */
        hb_buf a, w, o;
        assert_int_equal(inst.ops->buf_alloc(&inst, 5 * 256 * 4, HB_ROUTE_PAGEABLE, &a), HB_OK);
        assert_int_equal(inst.ops->buf_alloc(&inst, hb_quant_bytes((hb_dtype)d, 7 * 256) - 1, HB_ROUTE_PAGEABLE, &w), HB_OK);
        assert_int_equal(inst.ops->buf_alloc(&inst, 5 * 7 * 4, HB_ROUTE_PAGEABLE, &o), HB_OK);
        hb_buf *in[2] = {&a, &w};
        assert_int_equal(inst.ops->run(&inst, &c, in, &o), HB_EINVAL);
        inst.ops->buf_free(&inst, &a);
        inst.ops->buf_free(&inst, &w);
        inst.ops->buf_free(&inst, &o);
    }
    inst.ops->close(&inst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_routes_all_ops, reset_env),
        cmocka_unit_test_setup(test_ops_default, reset_env),
        cmocka_unit_test_setup(test_ew_table_complete, reset_env),
        cmocka_unit_test_setup(test_ops_gpu_style, reset_env),
        cmocka_unit_test_setup(test_ops_clblast, reset_env),
        cmocka_unit_test_setup(test_ops_f16, reset_env),
        cmocka_unit_test_setup(test_qmatmul, reset_env),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
