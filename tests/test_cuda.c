/*
 * test_cuda.c - the CUDA backend plugin (build/hb_cuda.so) as the registry sees it: dlopen with
 * RTLD_NOW, the exported hb_cuda_ops table, enumerate and supports.
 *
 * Without a GPU (this machine, CI): the plugin must load, enumerate must return 0 with the CUDA
 * runtime's reason (never abort), and supports() must answer from the case alone.
 * With a GPU (the device machine; tools/gpu_run.md): every op in f32/tf32/f16/bf16 on random inputs
 * (never zeros) rounded to the device dtype, over the three routes, output poisoned with NaN
 * before each run, against the f64 reference (hb_ref_compute) with hb_op_tolerance; then the
 * convert-device helpers, the info hooks and the ceilings; and the algorithm-choice cache
 * (HB_ALGO_CACHE): fresh instances stand for later processes (a miss writes, the next one hits with
 * the same engine and the original times; a corrupted or disagreeing entry is chosen afresh and
 * rewritten), every output checked against the reference.
 *
 * test_ops_gpu also forces each alternative implementation path (the split-key attention kernel, the
 * other-layout conv pipeline, the pointwise-conv gemm, every f32 attention kernel and variant, cuDNN's
 * SDPA) and checks both the output and that impl or algo names the path.
 *
 * The plugin fixture and the one-case runner: test_cuda_fixture.h. The plugin is looked up in
 * $HB_PLUGIN_DIR, else beside this binary's folder (build/tests/..). A missing plugin file (built
 * without nvcc) is a skip.
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
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/backend.h"
#include "core/convert.h"
#include "cpu_ref/ref.h"
#include "cuda/cuda_algocache.h"
#include "cuda/hb_cuda.h"
#include "core/stats.h"
#include "test_cuda_fixture.h"
#include "test_qmatmul.h"
#include "test_config.h"

/* The plugin's settings accessor for this file's own copy of cuda_algocache.o (the plugin has its
 * own, cuda_backend.cu): the process's configuration, which test_config.h's setenv refreshes. */
const hb_config *hbc_cfg(void) { return hb_config_get(); }

static void test_plugin_loads(void **state)
{
    (void)state;
    need_plugin();
    if (!g_lib) fail_msg("the built plugin %s does not load: %s", g_path, dlerror());
    assert_non_null(g_ops);
    assert_int_equal(g_ops->abi, HB_BACKEND_ABI);
    assert_string_equal(g_ops->type, "cuda");
    assert_int_equal(hb_backend_validate(g_ops), HB_OK);
    /* the optional hooks this backend promises */
    assert_non_null(g_ops->timer_begin);
    assert_non_null(g_ops->timer_end);
    assert_non_null(g_ops->ceilings);
    assert_non_null(g_ops->mem_info);
    assert_non_null(g_ops->case_info);
    assert_non_null(g_ops->describe);
    assert_non_null(g_ops->flush_cache);
    assert_non_null(g_ops->upload_f64);
    assert_non_null(g_ops->download_f64);
    assert_non_null(dlsym(g_lib, "hb_cuda_upload_f64_convert"));
    assert_non_null(dlsym(g_lib, "hb_cuda_download_convert_f64"));
}

static void test_enumerate(void **state)
{
    (void)state;
    need_plugin();
    assert_non_null(g_ops);
    assert_true(g_n >= 0);
    if (g_n == 0) {
        printf("enumerate: 0 instances, reason: %s\n", g_reason);
        assert_true(strlen(g_reason) > 10);
        assert_non_null(strstr(g_reason, "CUDA"));
        /* a second call gives the same answer, still without aborting */
        hb_instance again[2];
        char r2[512] = "";
        memset(again, 0, sizeof again);
        assert_int_equal(g_ops->enumerate(again, 2, r2, sizeof r2), 0);
        assert_string_equal(r2, g_reason);
        return;
    }
    for (int i = 0; i < g_n; i++) {
        char want[16];
        snprintf(want, sizeof want, "cuda:%d", i);
        assert_string_equal(g_inst[i].name, want);
        assert_true(strlen(g_inst[i].description) > 4);
        assert_int_equal(g_inst[i].host_memory, 0);
        char buf[4096];
        assert_int_equal(g_ops->describe(&g_inst[i], buf, sizeof buf), HB_OK);
        json_error_t err;
        json_t *j = json_loads(buf, 0, &err);
        if (!j) fail_msg("describe is not JSON (%s): %s", err.text, buf);
        assert_true(json_integer_value(json_object_get(j, "sm_count")) > 0);
        assert_true(json_integer_value(json_object_get(j, "memory_bytes")) > 0);
        assert_non_null(json_object_get(j, "cudnn_version"));
        printf("%s: %s\n  %s\n", g_inst[i].name, g_inst[i].description, buf);
        json_decref(j);
    }
}

static void test_supports(void **state)
{
    (void)state;
    need_plugin();
    assert_non_null(g_ops);
    /* answers from the case alone (no device context), and from a real instance where there is one */
    hb_instance fake;
    memset(&fake, 0, sizeof fake);
    fake.ops = g_ops;
    hb_instance *insts[2] = {&fake, g_n > 0 ? &g_inst[0] : NULL};
    for (int k = 0; k < 2 && insts[k]; k++) {
        hb_instance *in = insts[k];
        char r[256];
        hb_case c;
        for (int d = 0; d < HB_DTYPE_COUNT; d++) {
            if (hb_dtype_is_quant((hb_dtype)d)) continue; /* below */
            c = mk(HB_OP_MATMUL, "m=64 n=64 k=64", (hb_dtype)d, HB_ROUTE_PINNED);
            r[0] = 0;
            assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_OK);
            c = mk(HB_OP_CONV2D, "batch=2 c=8 h=9 w=9 oc=4 kh=3 ph=1", (hb_dtype)d, HB_ROUTE_MAPPED);
            assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_OK);
        }
        c = mk(HB_OP_ADD, "n=1000", HB_TF32, HB_ROUTE_PAGEABLE);
        r[0] = 0;
        assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_ESKIP);
        assert_non_null(strstr(r, "tf32"));
        /* quantized weights: matmul with k a whole number of blocks, modes f32 and resident */
        for (int d = HB_Q8_0; d <= HB_Q6_K; d++) {
            c = mk(HB_OP_MATMUL, "m=5 n=7 k=512", (hb_dtype)d, HB_ROUTE_PINNED);
            assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_OK);
            c.mode = HB_MODE_RESIDENT;
            assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_OK);
            c.mode = HB_MODE_CONVERT_DEVICE;
            r[0] = 0;
            assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_ESKIP);
            assert_true(strlen(r) > 0);
            c = mk(HB_OP_MATMUL, "m=5 n=7 k=48", (hb_dtype)d, HB_ROUTE_PINNED);
            r[0] = 0;
            assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_ESKIP);
            assert_non_null(strstr(r, "block"));
            c = mk(HB_OP_BMM, "batch=2 m=5 n=7 k=256", (hb_dtype)d, HB_ROUTE_PINNED);
            assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_ESKIP);
        }
        c = mk(HB_OP_ATTENTION, "batch=1 heads=2 seq=8 head_dim=512", HB_F16, HB_ROUTE_PAGEABLE);
        r[0] = 0;
        assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_ESKIP);
        assert_true(strlen(r) > 0);
        c = mk(HB_OP_ATTENTION, "batch=1 heads=8 kv_heads=2 seq=8 head_dim=64 causal=1", HB_BF16, HB_ROUTE_MAPPED);
        assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_OK);
        c = mk(HB_OP_SUM, "rows=3 cols=5", HB_F16, HB_ROUTE_PINNED);
        assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_OK);
        /* a shape it cannot compute is a skip, not a crash */
        c = mk(HB_OP_MATMUL, "m=4 n=4 k=4", HB_F32, HB_ROUTE_PAGEABLE);
        c.shape.m = 0;
        r[0] = 0;
        assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_ESKIP);
        assert_true(strlen(r) > 0);
        c.op = (hb_op)999;
        assert_int_equal(g_ops->supports(in, &c, r, sizeof r), HB_ESKIP);
    }
    /* hooks given an instance without context fail cleanly */
    hb_buf b = {0};
    assert_int_not_equal(g_ops->buf_alloc(&fake, 64, HB_ROUTE_PAGEABLE, &b), HB_OK);
}

/* ---- with a GPU ---- */

typedef struct tcase { hb_op op; const char *shape; } tcase;

static const tcase gpu_cases[] = {
    {HB_OP_ADD, "n=17"}, {HB_OP_ADD, "n=1000003"}, {HB_OP_MUL, "n=65537"}, {HB_OP_RELU, "n=1001"},
    {HB_OP_GELU, "n=100003"}, {HB_OP_SILU, "n=70001"}, {HB_OP_SIGMOID, "n=70001"},
    {HB_OP_MATMUL, "m=67 n=45 k=129"}, {HB_OP_MATMUL, "m=1 n=300 k=77"}, {HB_OP_MATMUL, "m=256 n=256 k=256"}, {HB_OP_MATMUL, "m=3 n=40 k=512"},
    {HB_OP_BMM, "batch=3 m=33 n=17 k=65"},
    {HB_OP_CONV2D, "batch=2 c=8 h=15 w=13 oc=6 kh=3 ph=1"},
    {HB_OP_CONV2D, "batch=1 c=4 h=19 w=18 oc=5 kh=5 kw=3 sh=2 sw=3 ph=2 pw=1 dh=2 dw=1"},
    {HB_OP_CONV2D, "batch=2 c=8 h=12 w=12 oc=6 kh=3 ph=1 g=2"},
    {HB_OP_CONV2D, "batch=4 c=64 h=14 w=14 oc=64 kh=3 ph=1"},
    /* layout=nhwc (x NHWC, w OHWI, y NHWC): the same shapes as above and a 1x1 */
    {HB_OP_CONV2D, "batch=2 c=8 h=15 w=13 oc=6 kh=3 ph=1 layout=nhwc"},
    {HB_OP_CONV2D, "batch=1 c=4 h=19 w=18 oc=5 kh=5 kw=3 sh=2 sw=3 ph=2 pw=1 dh=2 dw=1 layout=nhwc"},
    {HB_OP_CONV2D, "batch=2 c=8 h=12 w=12 oc=6 kh=3 ph=1 g=2 layout=nhwc"},
    {HB_OP_CONV2D, "batch=4 c=64 h=14 w=14 oc=64 kh=3 ph=1 layout=nhwc"},
    {HB_OP_CONV2D, "batch=3 c=32 h=10 w=10 oc=16 kh=1 layout=nhwc"},
    {HB_OP_MAXPOOL, "batch=2 c=3 h=17 w=16 kh=3 sh=2 ph=1"}, {HB_OP_AVGPOOL, "batch=2 c=3 h=17 w=16 kh=3 sh=2 ph=1"},
    {HB_OP_AVGPOOL, "batch=1 c=4 h=9 w=9 kh=2 sh=1 ph=1"}, {HB_OP_MAXPOOL, "batch=1 c=2 h=7 w=6 kh=4 sh=2 ph=2"},
    {HB_OP_SUM, "rows=7 cols=33"}, {HB_OP_SUM, "rows=3 cols=300001"}, {HB_OP_SUM, "rows=2 cols=1048576"}, {HB_OP_MEAN, "rows=1000 cols=2048"},
    {HB_OP_MAX, "rows=5 cols=77777"}, {HB_OP_SUM_ALL, "n=1048579"}, {HB_OP_SUM_ALL, "n=5"},
    {HB_OP_RMSNORM, "rows=9 cols=2048"}, {HB_OP_RMSNORM, "rows=3 cols=33"},
    /* short rows: G lanes per row (k_reduce_rows_sub), rows not a multiple of a warp's step */
    {HB_OP_SUM, "rows=1001 cols=16"}, {HB_OP_MAX, "rows=77 cols=40"}, {HB_OP_MEAN, "rows=300 cols=64"},
    {HB_OP_ATTENTION, "batch=2 heads=4 seq=77 head_dim=64"},
    {HB_OP_ATTENTION, "batch=1 heads=8 kv_heads=2 seq=130 head_dim=64 causal=1"},
    {HB_OP_ATTENTION, "batch=1 heads=4 kv_heads=4 seq=65 kv_seq=200 head_dim=128 causal=1"},
    {HB_OP_ATTENTION, "batch=1 heads=2 seq=100 kv_seq=40 head_dim=64"},
    {HB_OP_ATTENTION, "batch=2 heads=32 kv_heads=4 seq=1 kv_seq=300 head_dim=64"},
    {HB_OP_ATTENTION, "batch=1 heads=3 seq=50 head_dim=40 causal=1"},
    {HB_OP_ATTENTION, "batch=2 heads=8 kv_heads=2 seq=256 head_dim=64 causal=1"},
    {HB_OP_ATTENTION, "batch=1 heads=4 kv_heads=1 seq=128 kv_seq=384 head_dim=128 causal=1"},
    {HB_OP_ATTENTION, "batch=1 heads=4 seq=1 kv_seq=1000 head_dim=128 causal=1"},
};

static void test_ops_gpu(void **state)
{
    (void)state;
    need_gpu();
    hb_instance *inst = &g_inst[0];
    rs = 0x1234567ull;
    int failures = 0, ran = 0;
    for (size_t k = 0; k < sizeof gpu_cases / sizeof gpu_cases[0]; k++) {
        for (int d = 0; d < HB_DTYPE_COUNT; d++) {
            hb_case c = mk(gpu_cases[k].op, gpu_cases[k].shape, (hb_dtype)d, (hb_route)((k + (size_t)d) % HB_ROUTE_COUNT));
            double err = -1.0;
            int64_t bad = 0;
            hb_status st = run_case(inst, &c, &err, &bad);
            if (st == HB_ESKIP) continue;
            ran++;
            const double tol = hb_op_tolerance(c.op, &c.shape, c.dtype);
            const int ok = st == HB_OK && bad == 0 && err <= tol;
            char info[2048] = "", impl[64];
            g_ops->case_info(inst, &c, info, sizeof info);
            case_impl(inst, &c, impl, sizeof impl, NULL, 0);
            printf("%-4s %-9s %-5s %-8s %-62s err %.2e tol %.1e %s\n", ok ? "ok" : "FAIL", hb_op_get(c.op)->name,
                   hb_dtype_name(c.dtype), hb_route_name(c.route), gpu_cases[k].shape, err, tol, info);
            if (st == HB_OK && !impl[0]) {
                failures++;
                printf("     case_info carries no \"impl\"\n");
            }
            if (st == HB_OK && !impl_of_agrees(inst, &c, impl)) failures++;
            /* a layout=nhwc conv's record names its layout and holds it to the NHWC exhaustive best */
            if (st == HB_OK && c.op == HB_OP_CONV2D && c.shape.layout == HB_LAYOUT_NHWC &&
                (!strstr(info, "\"layout\":\"nhwc\"") || !strstr(info, "\"exhaustive_best_layout\":\"nhwc\""))) {
                failures++;
                printf("     layout=nhwc case without its layout in conv_choice\n");
            }
            if (!ok) {
                failures++;
                printf("     status %s, %lld non-finite outputs\n", hb_status_name(st), (long long)bad);
            }
        }
    }
    /* the generic split-key attention kernel on the shapes the fused kernels take */
    setenv("HB_CUDA_ATTN", "split", 1);
    for (size_t k = 0; k < sizeof gpu_cases / sizeof gpu_cases[0]; k++)
        if (gpu_cases[k].op == HB_OP_ATTENTION)
            run_dtypes(inst, HB_OP_ATTENTION, gpu_cases[k].shape, "attention(split)", NULL, 0, &ran, &failures);
    /* f32 attention through each of its fused kernels, forced: the FFMA kernel (HB_CUDA_ATTN_F32=simt)
     * and every variant of the 3xTF32 one (cuda_attn_tf32.cu: key tiles, buffering, warps, the
     * conversion-instruction split); the output against the reference, algo naming the kernel */
    {
        static const struct { const char *var, *val, *marker; } f32k[] = {
            {"HB_CUDA_ATTN_F32", "simt", "flash_ffma_f32"}, {"HB_CUDA_ATTN_TF32", "", "3xtf32_d%d_n32_db_w4"},
            {"HB_CUDA_ATTN_TF32", "64", "3xtf32_d%d_n64_w4"}, {"HB_CUDA_ATTN_TF32", "64d", "3xtf32_d%d_n64_db_w4"},
            {"HB_CUDA_ATTN_TF32", "32", "3xtf32_d%d_n32_w4"}, {"HB_CUDA_ATTN_TF32", "cvt", "3xtf32_d%d_n32_db_w4_cvt"},
            {"HB_CUDA_ATTN_TF32", "32dw8", "3xtf32_d%d_n32_db_w"},
        };
        static const char *const bshd = "batch=2 heads=4 kv_heads=2 seq=70 kv_seq=90 head_dim=128 layout=bshd causal=1";
        unsetenv("HB_CUDA_ATTN"); /* the split kernel was forced above */
        for (size_t v = 0; v < sizeof f32k / sizeof f32k[0]; v++) {
            setenv(f32k[v].var, f32k[v].val, 1);
            int fused = 0;
            for (size_t k = 0; k <= sizeof gpu_cases / sizeof gpu_cases[0]; k++) {
                const int last = k == sizeof gpu_cases / sizeof gpu_cases[0];
                if (!last && gpu_cases[k].op != HB_OP_ATTENTION) continue;
                const char *shape = last ? bshd : gpu_cases[k].shape;
                hb_case c = mk(HB_OP_ATTENTION, shape, HB_F32, HB_ROUTE_PINNED);
                double err = -1.0;
                int64_t bad = 0;
                hb_status st = run_case(inst, &c, &err, &bad);
                if (st == HB_ESKIP) continue;
                ran++;
                char impl[64], algo[512], want[64];
                case_impl(inst, &c, impl, sizeof impl, algo, sizeof algo);
                snprintf(want, sizeof want, f32k[v].marker, (int)c.shape.head_dim);
                fused += strstr(algo, want) != NULL;
                const double tol = hb_op_tolerance(c.op, &c.shape, c.dtype);
                const int ok = st == HB_OK && bad == 0 && err <= tol;
                printf("%-4s attention(%s=%s) f32 %-62s err %.2e tol %.1e %s: %s\n", ok ? "ok" : "FAIL", f32k[v].var, f32k[v].val,
                       shape, err, tol, impl, algo);
                failures += !ok;
            }
            unsetenv(f32k[v].var);
            printf("%d f32 attention cases ran through %s (%s=%s)\n", fused, f32k[v].marker, f32k[v].var, f32k[v].val);
            assert_true(fused >= 7); /* the shapes with head_dim 64 or 128 and at least 16 queries */
        }
    }
    /* conv2d through the other-layout pipeline (own transpose kernel around the convolution in the
     * other layout: NHWC for an NCHW case, NCHW for a layout=nhwc case), forced */
    setenv("HB_CUDA_CONV_FORCE_OTHER", "1", 1);
    setenv("HB_CUDA_CONV_OWN_TRANSPOSE", "1", 1);
    int nhwc_runs = 0;
    for (size_t k = 0; k < sizeof gpu_cases / sizeof gpu_cases[0]; k++)
        if (gpu_cases[k].op == HB_OP_CONV2D)
            nhwc_runs += run_dtypes(inst, HB_OP_CONV2D, gpu_cases[k].shape, "conv2d(pipeline)", "own transpose", 0, &ran, &failures);
    unsetenv("HB_CUDA_CONV_FORCE_OTHER");
    unsetenv("HB_CUDA_CONV_OWN_TRANSPOSE");
    printf("%d conv2d cases ran through the own-transpose other-layout pipeline\n", nhwc_runs);
    assert_true(nhwc_runs >= 16);
    /* pointwise conv2d as one cuBLAS gemm (cuda_conv_gemm.cu), forced on every 1x1 stride-1 case in
     * both layouts and every dtype: the output against the reference, impl naming the gemm */
    setenv("HB_CUDA_CONV_GEMM", "force", 1);
    int gemm_runs = 0;
    static const char *const pw_shapes[] = {"batch=2 c=48 h=9 w=7 oc=24 kh=1", "batch=3 c=32 h=10 w=10 oc=16 kh=1 layout=nhwc",
                                            "batch=1 c=256 h=14 w=14 oc=64 kh=1", "batch=2 c=64 h=8 w=8 oc=256 kh=1 layout=nhwc"};
    for (size_t k = 0; k < sizeof pw_shapes / sizeof pw_shapes[0]; k++)
        gemm_runs += run_dtypes(inst, HB_OP_CONV2D, pw_shapes[k], "conv2d(gemm)", "cublas-1x1", 1, &ran, &failures);
    unsetenv("HB_CUDA_CONV_GEMM");
    assert_true(gemm_runs >= 12);

    /* cuDNN's fused SDPA forced (HB_CUDA_ATTN=cudnn) on every f16/bf16 attention shape: where cuDNN
     * takes the shape the output must match the reference and impl must say cudnn-sdpa; where it
     * refuses, the own kernel runs and algo says why */
    setenv("HB_CUDA_ATTN", "cudnn", 1);
    int on_cudnn = 0, no_frontend = 0;
    for (size_t k = 0; k < sizeof gpu_cases / sizeof gpu_cases[0]; k++) {
        if (gpu_cases[k].op != HB_OP_ATTENTION) continue;
        for (int d = HB_F16; d <= HB_BF16; d++) {
            hb_case c = mk(gpu_cases[k].op, gpu_cases[k].shape, (hb_dtype)d, HB_ROUTE_PINNED);
            double err = -1.0;
            int64_t bad = 0;
            hb_status st = run_case(inst, &c, &err, &bad);
            if (st == HB_ESKIP) continue;
            ran++;
            char impl[64], algo[512];
            case_impl(inst, &c, impl, sizeof impl, algo, sizeof algo);
            on_cudnn += !strcmp(impl, "cudnn-sdpa");
            no_frontend += strstr(algo, "without the cudnn-frontend") != NULL;
            const double tol = hb_op_tolerance(c.op, &c.shape, c.dtype);
            const int ok = st == HB_OK && bad == 0 && err <= tol;
            printf("%-4s attention(cudnn) %-5s %-62s err %.2e tol %.1e %s: %s\n", ok ? "ok" : "FAIL", hb_dtype_name(c.dtype),
                   gpu_cases[k].shape, err, tol, impl, algo);
            failures += !ok;
        }
    }
    unsetenv("HB_CUDA_ATTN");
    printf("%d attention cases ran on cudnn-sdpa\n", on_cudnn);
    if (!no_frontend) assert_true(on_cudnn >= 10);
    printf("%d GPU cases ran, %d failed\n", ran, failures);
    assert_true(ran > 60);
    assert_int_equal(failures, 0);
}

/* Quantized-weight matmul (cuda_qmatmul.cu): every format at m = 1, 5 (gemv kernels) and 64, 300 (f16
 * dequantization + cuBLAS), odd n, k of 1..3 blocks and one longer, against the f64 reference of the
 * dequantized weights; case_info names the kernel (qmatmul_impl). */
static void test_qmatmul_gpu(void **state)
{
    (void)state;
    need_gpu();
    int ran = 0;
    int failures = qm_run_all(g_ops, &g_inst[0], "qmatmul", "\"qmatmul_impl\":\"", &ran);
    failures += qm_dequant_all(g_ops, &g_inst[0], HB_ROUTE_COUNT, &ran);
    /* the path follows m: gemv up to 8 rows, the f16 dequantization beyond */
    char info[2048];
    hb_case c = qm_case(HB_Q4_K, 8, 9, 512, HB_ROUTE_PINNED);
    double err;
    int64_t bad;
    assert_int_equal(qm_run(g_ops, &g_inst[0], &c, 7, &err, &bad), HB_OK);
    assert_int_equal(g_ops->case_info(&g_inst[0], &c, info, sizeof info), HB_OK);
    assert_non_null(strstr(info, "gemv_q4_k"));
    assert_true(err < 1e-5); /* f32 throughout */
    c = qm_case(HB_Q6_K, 9, 9, 512, HB_ROUTE_PINNED);
    assert_int_equal(qm_run(g_ops, &g_inst[0], &c, 8, &err, &bad), HB_OK);
    assert_int_equal(g_ops->case_info(&g_inst[0], &c, info, sizeof info), HB_OK);
    assert_non_null(strstr(info, "dequant_f16_q6_k"));
    printf("%d quantized matmul cases ran, %d failed\n", ran, failures);
    assert_int_equal(failures, 0);
}

/* ---- the algorithm-choice cache (HB_ALGO_CACHE): fresh instances stand for later processes ---- */

typedef struct ac_case { hb_op op; const char *shape; hb_dtype dt; const char *env; } ac_case;
static const ac_case ac_cases[] = {
    {HB_OP_CONV2D, "batch=4 c=64 h=14 w=14 oc=64 kh=3 ph=1", HB_F16, NULL},
    {HB_OP_CONV2D, "batch=3 c=32 h=10 w=10 oc=16 kh=1 layout=nhwc", HB_F32, NULL},
    {HB_OP_CONV2D, "batch=2 c=8 h=15 w=13 oc=6 kh=3 ph=1", HB_TF32, NULL},
    {HB_OP_CONV2D, "batch=4 c=64 h=14 w=14 oc=64 kh=3 ph=1", HB_BF16, "HB_CUDA_CONV_API=graph"},
    {HB_OP_CONV2D, "batch=4 c=64 h=14 w=14 oc=64 kh=3 ph=1 layout=nhwc", HB_F16, "HB_CUDA_CONV_API=legacy"},
    {HB_OP_ATTENTION, "batch=2 heads=8 kv_heads=2 seq=256 head_dim=64 causal=1", HB_F16, NULL},
    {HB_OP_ATTENTION, "batch=1 heads=4 kv_heads=1 seq=128 kv_seq=384 head_dim=128 causal=1", HB_BF16, NULL},
    {HB_OP_ATTENTION, "batch=2 heads=4 seq=77 head_dim=64", HB_F16, "HB_CUDA_ATTN=cudnn"},
};
#define AC_N (sizeof ac_cases / sizeof ac_cases[0])

/* Every case once on a fresh instance (a new context: nothing chosen yet); state[i] gets its
 * "algo_cache", impl[i] its impl (conv: the engine), chosen[i] conv_choice.chosen_ms or the attention
 * note's cuDNN time, from_cache[i] conv_choice.from_cache. Outputs checked against the reference. */
static void ac_pass(const char *tag, char state[][16], char impl[][128], double *chosen, int *from_cache, char note[][200])
{
    hb_instance fresh[8];
    char why[256] = "";
    const int n = g_ops->enumerate(fresh, 8, why, sizeof why);
    assert_true(n > 0);
    for (int i = 0; i < n; i++) if (!fresh[i].ops) fresh[i].ops = g_ops;
    for (size_t k = 0; k < AC_N; k++) {
        char env[64] = "";
        if (ac_cases[k].env) { snprintf(env, sizeof env, "%s", ac_cases[k].env); *strchr(env, '=') = 0; setenv(env, strchr(ac_cases[k].env, '=') + 1, 1); }
        hb_case c = mk(ac_cases[k].op, ac_cases[k].shape, ac_cases[k].dt, HB_ROUTE_PINNED);
        double err = -1.0;
        int64_t bad = 0;
        hb_status st = run_case(&fresh[0], &c, &err, &bad);
        if (env[0]) unsetenv(env);
        char info[2048] = "";
        assert_int_equal(g_ops->case_info(&fresh[0], &c, info, sizeof info), HB_OK);
        printf("%s %-9s %-5s %-55s err %.2e %s\n", tag, hb_op_get(c.op)->name, hb_dtype_name(c.dtype), ac_cases[k].shape, err, info);
        assert_int_equal(st, HB_OK);
        assert_true(bad == 0 && err <= hb_op_tolerance(c.op, &c.shape, c.dtype));
        json_t *j = json_loads(info, 0, NULL);
        assert_non_null(j);
        const char *a = json_string_value(json_object_get(j, "algo_cache")), *im = json_string_value(json_object_get(j, "impl"));
        const char *nt = json_string_value(json_object_get(j, "algo_cache_note"));
        const char *al = json_string_value(json_object_get(j, "algo"));
        snprintf(state[k], 16, "%s", a ? a : "");
        snprintf(note[k], 200, "%s", nt ? nt : "");
        /* the engine: conv's impl names it; attention's algo starts with the cuDNN plan (or the own kernel) */
        snprintf(impl[k], 128, "%s|%.60s", im ? im : "", c.op == HB_OP_ATTENTION && al ? al : "");
        if (c.op == HB_OP_ATTENTION && strchr(impl[k], ';')) *strchr(impl[k], ';') = 0;
        json_t *cc = json_object_get(j, "conv_choice");
        chosen[k] = cc ? json_number_value(json_object_get(cc, "chosen_ms")) : 0;
        from_cache[k] = cc ? json_is_true(json_object_get(cc, "from_cache")) : 0;
        if (c.op == HB_OP_ATTENTION && al && strstr(al, "cudnn-sdpa ")) chosen[k] = atof(strstr(al, "cudnn-sdpa ") + 11);
        json_decref(j);
    }
    for (int i = 0; i < n; i++) g_ops->close(&fresh[i]);
}

/* Apply fn to every entry file of dir (parsed; fn may change it, then it is stored again). */
static int ac_edit(const char *dir, int (*fn)(hbac_entry *))
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    int files = 0, edited = 0;
    static char text[HBAC_FILE_MAX];
    while ((de = readdir(d))) {
        if (!strstr(de->d_name, ".algo")) continue;
        files++;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        FILE *f = fopen(p, "rb");
        assert_non_null(f);
        const size_t n = fread(text, 1, sizeof text, f);
        fclose(f);
        hbac_entry e;
        assert_int_equal(hbac_parse(text, n, NULL, &e, NULL, 0), HBAC_HIT);
        if (!fn) { /* flip one byte in the middle */
            text[n / 2] ^= 0x20;
            f = fopen(p, "wb");
            assert_non_null(f);
            assert_int_equal(fwrite(text, 1, n, f), n);
            fclose(f);
            edited++;
        } else if (fn(&e)) {
            char why[300];
            assert_int_equal(hbac_store(dir, &e, why, sizeof why), 0);
            edited++;
        }
    }
    closedir(d);
    printf("algo cache: %d entries, %d edited\n", files, edited);
    return files;
}
/* disagreeing entries: a graph-API conv entry and a forced-cuDNN attention entry name an engine that
 * is not at their plan index; a legacy conv entry's algorithm number no longer matches its name */
static int ac_disagree(hbac_entry *e)
{
    int64_t algo;
    if ((strstr(e->key, "api=graph") && strstr(e->key, "op=conv2d")) || strstr(e->key, "force=cudnn"))
        return hbac_set(e, "name", "no_such_engine") == 0;
    if (strstr(e->key, "api=legacy") && !hbac_get_i64(e, "algo", 0, 7, &algo)) return hbac_set_i64(e, "algo", (algo + 1) % 8) == 0;
    return 0;
}

static void test_algo_cache_gpu(void **state)
{
    (void)state;
    need_gpu();
    char dir[64] = "/tmp/hb_test_cuda_algocache.XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("HB_ALGO_CACHE", dir, 1);
    static char st[4][AC_N][16], im[4][AC_N][128], nt[AC_N][200];
    static double ch[4][AC_N];
    static int fc[4][AC_N];
    ac_pass("miss", st[0], im[0], ch[0], fc[0], nt); /* the first process: chosen by timing, stored */
    int cases = 0, attn = 0;
    for (size_t k = 0; k < AC_N; k++) {
        /* conv2d always chooses; an attention shape cuDNN refuses makes no choice (no field) */
        if (ac_cases[k].op == HB_OP_CONV2D || st[0][k][0]) assert_string_equal(st[0][k], "miss");
        cases += st[0][k][0] != 0;
        attn += ac_cases[k].op == HB_OP_ATTENTION && st[0][k][0];
    }
    printf("algo cache: %d cases chose (%d attention)\n", cases, attn);
    assert_int_equal(ac_edit(dir, NULL), cases); /* one entry per choice; each corrupted now */
    ac_pass("fix ", st[1], im[1], ch[1], fc[1], nt); /* chosen afresh, rewritten */
    for (size_t k = 0; k < AC_N; k++)
        if (st[0][k][0]) { assert_string_equal(st[1][k], "miss"); assert_non_null(strstr(nt[k], "refused")); }
    ac_pass("hit ", st[2], im[2], ch[2], fc[2], nt); /* later processes: the engine and times of "fix" */
    ac_pass("hit ", st[3], im[3], ch[3], fc[3], nt);
    for (size_t k = 0; k < AC_N; k++) {
        if (!st[0][k][0]) continue;
        for (int p = 2; p < 4; p++) {
            assert_string_equal(st[p][k], "hit");
            assert_string_equal(im[p][k], im[1][k]);
            assert_true(fabs(ch[p][k] - ch[1][k]) <= 1e-3 * ch[1][k]);
            if (ac_cases[k].op == HB_OP_CONV2D) assert_true(fc[p][k]);
        }
    }
    ac_edit(dir, ac_disagree);
    ac_pass("redo", st[2], im[2], ch[2], fc[2], nt); /* disagreeing entries chosen afresh, the others hit */
    int redone = 0;
    for (size_t k = 0; k < AC_N; k++) {
        if (!st[0][k][0]) continue;
        if (!strcmp(st[2][k], "miss")) { redone++; assert_non_null(strstr(nt[k], "not usable")); }
        else assert_string_equal(st[2][k], "hit");
    }
    printf("algo cache: %d entries disagreed and were chosen afresh\n", redone);
    assert_true(redone >= 2);
    ac_pass("hit ", st[3], im[3], ch[3], fc[3], nt);
    for (size_t k = 0; k < AC_N; k++)
        if (st[0][k][0]) assert_string_equal(st[3][k], "hit");
    unsetenv("HB_ALGO_CACHE");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_convert_device_gpu(void **state)
{
    (void)state;
    need_gpu();
    hb_instance *inst = &g_inst[0];
    hb_cuda_upload_f64_convert_fn up = (hb_cuda_upload_f64_convert_fn)dlsym(g_lib, "hb_cuda_upload_f64_convert");
    hb_cuda_download_convert_f64_fn down = (hb_cuda_download_convert_f64_fn)dlsym(g_lib, "hb_cuda_download_convert_f64");
    assert_non_null(up);
    assert_non_null(down);
    const size_t n = 300007;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *want = malloc(n * sizeof *want);
    assert_non_null(x);
    assert_non_null(y);
    assert_non_null(want);
    rs = 99;
    for (size_t i = 0; i < n; i++) x[i] = unif() * 3.0;
    for (int d = 0; d < HB_DTYPE_COUNT; d++) {
        for (int r = 0; r < HB_ROUTE_COUNT; r++) {
            hb_buf b = {0};
            const hb_elem e = hb_elem_of_dtype((hb_dtype)d);
            assert_int_equal(g_ops->buf_alloc(inst, n * hb_dtype_size((hb_dtype)d), (hb_route)r, &b), HB_OK);
            b.dtype = (hb_dtype)d; /* as the driver does right after buf_alloc (backend.h) */
            assert_int_equal(up(inst, &b, (hb_dtype)d, x, n), HB_OK);
            /* the same rounding as the host conversion (convert.h) */
            void *tmp = malloc(n * 4);
            assert_non_null(tmp);
            hb_convert(tmp, e, x, HB_ELEM_F64, n);
            hb_convert(want, HB_ELEM_F64, tmp, e, n);
            free(tmp);
            for (size_t i = 0; i < n; i++) y[i] = NAN;
            assert_int_equal(down(inst, &b, (hb_dtype)d, y, n), HB_OK);
            size_t mism = 0;
            for (size_t i = 0; i < n; i++) mism += !(y[i] == want[i]);
            if (mism) fail_msg("convert-device %s/%s: %zu of %zu values differ from the host conversion",
                               hb_dtype_name((hb_dtype)d), hb_route_name((hb_route)r), mism, n);
            /* the driver's hooks (element type from b.dtype) do the same */
            hb_case hc = mk(HB_OP_ADD, "n=300007", (hb_dtype)d, (hb_route)r);
            char rr[128];
            g_ops->supports(inst, &hc, rr, sizeof rr);
            double cp = -1, cv = -1;
            assert_int_equal(g_ops->upload_f64(inst, &b, x, n, &cp, &cv), HB_OK);
            assert_true(cp > 0 && cv > 0);
            for (size_t i = 0; i < n; i++) y[i] = NAN;
            assert_int_equal(g_ops->download_f64(inst, &b, y, n, &cp, &cv), HB_OK);
            assert_true(cp > 0 && cv > 0);
            mism = 0;
            for (size_t i = 0; i < n; i++) mism += !(y[i] == want[i]);
            if (mism) fail_msg("upload_f64/download_f64 %s/%s: %zu values differ", hb_dtype_name((hb_dtype)d),
                               hb_route_name((hb_route)r), mism);
            /* what the device holds reads back through the ordinary download too */
            assert_int_equal(g_ops->download(inst, &b), HB_OK);
            double first;
            hb_convert(&first, HB_ELEM_F64, b.host, e, 1);
            assert_true(first == want[0]);
            g_ops->buf_free(inst, &b);
        }
    }
    hb_buf small;
    assert_int_equal(g_ops->buf_alloc(inst, 16, HB_ROUTE_PAGEABLE, &small), HB_OK);
    assert_int_equal(up(inst, &small, HB_F32, x, 100), HB_EINVAL); /* too small: refused */
    g_ops->buf_free(inst, &small);
    free(x);
    free(y);
    free(want);
}

static void test_info_and_timer_gpu(void **state)
{
    (void)state;
    need_gpu();
    hb_instance *inst = &g_inst[0];
    int64_t a0 = -2, f = -2, t = -2;
    g_ops->mem_info(inst, &a0, &f, &t);
    assert_true(a0 >= 0);
    assert_true(t > 0 && f > 0 && f <= t);
    hb_buf b = {0};
    assert_int_equal(g_ops->buf_alloc(inst, (size_t)64 << 20, HB_ROUTE_PINNED, &b), HB_OK);
    int64_t a1;
    g_ops->mem_info(inst, &a1, &f, &t);
    assert_true(a1 - a0 >= (int64_t)64 << 20);
    memset(b.host, 1, b.bytes);
    assert_int_equal(g_ops->timer_begin(inst), HB_OK);
    assert_int_equal(g_ops->upload(inst, &b), HB_OK);
    double sec = -1.0;
    assert_int_equal(g_ops->timer_end(inst, &sec), HB_OK);
    printf("64 MiB pinned upload: %.3f ms (%.1f GB/s)\n", sec * 1e3, (double)b.bytes / sec * 1e-9);
    assert_true(sec > 0.0 && sec < 1.0);
    g_ops->buf_free(inst, &b);
    g_ops->flush_cache(inst);
    hb_case c = mk(HB_OP_MATMUL, "m=64 n=64 k=64", HB_TF32, HB_ROUTE_PAGEABLE);
    char info[512];
    assert_int_equal(g_ops->case_info(inst, &c, info, sizeof info), HB_OK);
    json_error_t err;
    json_t *j = json_loads(info, 0, &err);
    if (!j) fail_msg("case_info is not JSON: %s", info);
    json_decref(j);
}

/* Median device time (s) of 9 timed runs of c on inst, each preceded by plant_delay(delay_s) when
 * delay_s >= 0. */
static double timed_median(hb_instance *inst, const hb_case *c, hb_buf *const *ins, hb_buf *out, double delay_s)
{
    double t[9];
    for (int i = 0; i < 9; i++) {
        if (delay_s >= 0) assert_int_equal(g_ops->plant_delay(inst, delay_s), HB_OK);
        assert_int_equal(g_ops->timer_begin(inst), HB_OK);
        assert_int_equal(g_ops->run(inst, c, ins, out), HB_OK);
        assert_int_equal(g_ops->timer_end(inst, &t[i]), HB_OK);
    }
    hb_stats st;
    hb_stats_compute(t, 9, &st);
    return st.median;
}

/* The merge gate's device-side plant (plant_delay): the next run's device-timed compute lasts the
 * asked delay longer (within the clock's and the delay kernel's start's tolerance), once only; the
 * result is unchanged; out-of-range delays are refused. */
static void test_plant_delay_gpu(void **state)
{
    (void)state;
    need_gpu();
    hb_instance *inst = &g_inst[0];
    assert_non_null(g_ops->plant_delay);
    assert_int_equal(g_ops->plant_delay(inst, -1e-6), HB_EINVAL);
    assert_int_equal(g_ops->plant_delay(inst, 2.0), HB_EINVAL);
    hb_case c = mk(HB_OP_MATMUL, "m=256 n=256 k=256", HB_F32, HB_ROUTE_PAGEABLE);
    c.mode = HB_MODE_RESIDENT;
    hb_buf a = {0}, b = {0}, o = {0};
    const size_t bytes = 256 * 256 * sizeof(float);
    assert_int_equal(g_ops->buf_alloc(inst, bytes, HB_ROUTE_PAGEABLE, &a), HB_OK);
    assert_int_equal(g_ops->buf_alloc(inst, bytes, HB_ROUTE_PAGEABLE, &b), HB_OK);
    assert_int_equal(g_ops->buf_alloc(inst, bytes, HB_ROUTE_PAGEABLE, &o), HB_OK);
    a.dtype = b.dtype = o.dtype = HB_F32;
    float *ha = (float *)a.host, *hb = (float *)b.host, *ho = (float *)o.host;
    for (int i = 0; i < 256 * 256; i++) { ha[i] = (float)unif(); hb[i] = (float)unif(); }
    assert_int_equal(g_ops->upload(inst, &a), HB_OK);
    assert_int_equal(g_ops->upload(inst, &b), HB_OK);
    hb_buf *ins[3] = {&a, &b, NULL};
    double c0 = timed_median(inst, &c, ins, &o, -1);
    double ce = timed_median(inst, &c, ins, &o, 0);      /* the empty delay kernel */
    double c1 = timed_median(inst, &c, ins, &o, 200e-6);
    double c2 = timed_median(inst, &c, ins, &o, -1);     /* no delay asked: none left over */
    printf("plant_delay: matmul 256^3 compute %.2f us alone, %.2f us with the empty delay kernel, %.2f us with a "
           "200 us delay, %.2f us after\n", c0 * 1e6, ce * 1e6, c1 * 1e6, c2 * 1e6);
    assert_true(ce >= c0 && ce < c0 + 5e-6);
    assert_true(c1 - ce > 190e-6 && c1 - ce < 210e-6);
    assert_true(c2 < c0 + 1e-6);
    /* the delay does not touch the result: poisoned output, one delayed run, checked on the host */
    for (int i = 0; i < 256 * 256; i++) ho[i] = NAN;
    assert_int_equal(g_ops->upload(inst, &o), HB_OK);
    assert_int_equal(g_ops->plant_delay(inst, 50e-6), HB_OK);
    assert_int_equal(g_ops->run(inst, &c, ins, &o), HB_OK);
    assert_int_equal(g_ops->download(inst, &o), HB_OK);
    for (int r = 0; r < 256; r += 37)
        for (int q = 0; q < 256; q += 41) {
            double ref = 0;
            for (int k = 0; k < 256; k++) ref += (double)ha[r * 256 + k] * (double)hb[k * 256 + q];
            assert_true(fabs((double)ho[r * 256 + q] - ref) < 0.05 + 0.01 * fabs(ref)); /* TF32 may be allowed */
        }
    g_ops->buf_free(inst, &a);
    g_ops->buf_free(inst, &b);
    g_ops->buf_free(inst, &o);
}

static void test_ceilings_gpu(void **state)
{
    (void)state;
    need_gpu();
    hb_ceiling ce[HB_MAX_CEILINGS];
    int n = g_ops->ceilings(&g_inst[0], ce, HB_MAX_CEILINGS);
    int seen_copy = 0, seen_f16 = 0, seen_pinned = 0;
    for (int i = 0; i < n; i++) {
        printf("ceiling %-22s %12.1f %-8s %s\n", ce[i].name, ce[i].value, ce[i].unit, ce[i].how);
        assert_true(ce[i].value > 0.0 && isfinite(ce[i].value));
        seen_copy |= !strcmp(ce[i].name, "copy_gbps");
        seen_f16 |= !strcmp(ce[i].name, "peak_gflops_f16");
        seen_pinned |= !strcmp(ce[i].name, "h2d_gbps_pinned");
    }
    assert_true(n >= 12);
    assert_true(seen_copy && seen_f16 && seen_pinned);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plugin_loads),
        cmocka_unit_test(test_enumerate),
        cmocka_unit_test(test_supports),
        cmocka_unit_test(test_ops_gpu),
        cmocka_unit_test(test_qmatmul_gpu),
        cmocka_unit_test(test_algo_cache_gpu),
        cmocka_unit_test(test_convert_device_gpu),
        cmocka_unit_test(test_info_and_timer_gpu),
        cmocka_unit_test(test_ceilings_gpu),
        cmocka_unit_test(test_plant_delay_gpu),
    };
    /* HB_TEST_FILTER: run only the tests whose name matches (cmocka's wildcards), e.g. "*qmatmul*" */
    const char *filter = getenv("HB_TEST_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, setup, teardown);
}
