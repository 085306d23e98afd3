/*
 * opencl_fixture.h - what the OpenCL plugin's tests share (test_opencl.c, test_opencl_ops.c): the
 * plugin loaded as the registry loads it (dlopen RTLD_NOW, dlsym "hb_opencl_ops", from $HB_PLUGIN_DIR
 * or beside the test binary's folder), the environment variables it reads restored before each test,
 * its first instance opened (the test skipped, with the reason, where there is none), random inputs
 * in [-1, 1] (never zero, exact in f32), f32/f16 storage, output poisoning, and one case run through
 * the hooks against the f64 reference (check_case). Header-only (static inline); include once.
 */
#ifndef HB_TEST_OPENCL_FIXTURE_H
#define HB_TEST_OPENCL_FIXTURE_H
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "core/backend.h"
#include "core/config.h"
#include "core/convert.h"
#include "cpu_ref/ref.h"
#include "test_case.h"
#include "test_config.h"

static void *g_lib;
static const hb_backend_ops *g_ops;
static char g_path[PATH_MAX + 32];
static char g_dir[PATH_MAX];
static char g_why[PATH_MAX * 2 + 256];

/* The environment variables the plugin reads; restored before each test so that a test failing
 * half-way (cmocka longjmps out of it) cannot leak its settings into the next. */
static const char *const g_envs[] = {"HB_OPENCL_STYLE", "HB_OPENCL_NO_CLBLAST", "HB_OPENCL_MATMUL",
                                     "HB_OPENCL_FORCE_F16", "HB_KERNEL_DIR"};
#define NENVS ((int)(sizeof g_envs / sizeof g_envs[0]))
static char *g_env0[NENVS];

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline void plugin_path(void)
{
    const char *env = getenv("HB_PLUGIN_DIR");
    if (env && *env) snprintf(g_dir, sizeof g_dir, "%s", env);
    else {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) snprintf(g_dir, sizeof g_dir, "build");
        else {
            exe[n] = 0;
            char *s = strrchr(exe, '/');
            if (s) *s = 0;  /* build/tests */
            s = strrchr(exe, '/');
            if (s) *s = 0;  /* build */
            snprintf(g_dir, sizeof g_dir, "%s", exe);
        }
    }
    snprintf(g_path, sizeof g_path, "%s/hb_opencl.so", g_dir);
}

static inline int setup(void **state)
{
    (void)state;
    for (int i = 0; i < NENVS; i++) {
        const char *v = getenv(g_envs[i]);
        g_env0[i] = v ? strdup(v) : NULL;
    }
    plugin_path();
    if (access(g_path, R_OK) != 0) {
        snprintf(g_why, sizeof g_why, "plugin %s not built (no OpenCL headers at build time)", g_path);
        return 0;
    }
    g_lib = dlopen(g_path, RTLD_NOW | RTLD_LOCAL);
    if (!g_lib) { snprintf(g_why, sizeof g_why, "dlopen(%s): %.*s", g_path, PATH_MAX, dlerror()); return 0; }
    g_ops = (const hb_backend_ops *)dlsym(g_lib, "hb_opencl_ops");
    if (!g_ops) snprintf(g_why, sizeof g_why, "%s lacks hb_opencl_ops", g_path);
    return 0;
}

static inline int reset_env(void **state)
{
    (void)state;
    for (int i = 0; i < NENVS; i++) {
        if (g_env0[i]) setenv(g_envs[i], g_env0[i], 1);
        else unsetenv(g_envs[i]);
    }
    return 0;
}

static inline int teardown(void **state)
{
    (void)state;
    return 0;  /* the plugin stays loaded, as in the registry (ICD/PoCL atexit handlers live in it) */
}

/* Open the first instance under the current environment; skips the test when none exists. */
static inline hb_instance open_inst(void)
{
    hb_instance inst[8];
    char reason[512] = "";
    if (!g_ops) {
        if (access(g_path, R_OK) != 0) { printf("SKIP: %s\n", g_why); skip(); }
        fail_msg("plugin present but unusable: %s", g_why);
    }
    memset(inst, 0, sizeof inst);
    hb_config_from_env(hb_config_boundary());
    if (g_ops->configure) g_ops->configure(hb_config_get()); /* the run's settings (core/config.h) */
    int n = g_ops->enumerate(inst, 8, reason, sizeof reason);
    if (n <= 0) {
        printf("SKIP: no OpenCL device: %s\n", reason);
        assert_true(strlen(reason) > 10);  /* the reason is given */
        skip();
    }
    for (int i = 1; i < n; i++) g_ops->close(&inst[i]);
    if (!inst[0].ops) inst[0].ops = g_ops;
    return inst[0];
}

/* One boolean fact of inst's describe hook (its JSON object: "fp16", "fp64", "zero_copy_mapped"):
 * 1 when it is true, 0 when false or absent; the hook's success and its JSON asserted. */
static inline int described(hb_instance *inst, const char *fact)
{
    char buf[4096];
    assert_int_equal(inst->ops->describe(inst, buf, sizeof buf), HB_OK);
    json_t *j = json_loads(buf, 0, NULL);
    assert_non_null(j);
    const int v = json_is_true(json_object_get(j, fact));
    json_decref(j);
    return v;
}

/* ---- random data and reference ---- */

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static inline double urand(void)  /* in [-1, 1], never 0, exactly representable in f32 */
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    double v = (double)(int32_t)((g_rng >> 40) & 0xffffff) / 8388608.0 - 1.0;
    return v == 0 ? 0.5 : v;
}

/* The tests' case (test_case.h hb_test_case: parsed and normalized as a workload's) in dtype d, mode m,
 * route r. */
static inline hb_case mk(hb_op op, const char *shape, hb_dtype d, hb_mode m, hb_route r)
{
    hb_case c = hb_test_case(op, shape);
    c.dtype = d;
    c.mode = m;
    c.route = r;
    return c;
}

/* Host values -> buffer storage (f32 or f16) and back. */
static inline void to_dev(hb_buf *b, const double *x, size_t n, hb_dtype d)
{
    hb_convert(b->host, d == HB_F16 ? HB_ELEM_F16 : HB_ELEM_F32, x, HB_ELEM_F64, n);
}
static inline void from_dev(double *x, const hb_buf *b, size_t n, hb_dtype d)
{
    hb_convert(x, HB_ELEM_F64, b->host, d == HB_F16 ? HB_ELEM_F16 : HB_ELEM_F32, n);
}
static inline void poison(hb_buf *b, size_t n, hb_dtype d)
{
    if (d == HB_F16) {
        uint16_t *h = b->host;
        for (size_t i = 0; i < n; i++) h[i] = 0x7e00;  /* f16 quiet NaN */
    } else {
        float *f = b->host;
        for (size_t i = 0; i < n; i++) f[i] = NAN;
    }
}

/* Run case c on inst (inputs random, output poisoned, upload, run, download) and compare with the
 * reference. Returns the run status; on HB_OK asserts finiteness and the tolerance. */
static inline hb_status check_case(hb_instance *inst, const hb_case *c, double *rel_out)
{
    const hb_op_info *info = hb_op_get(c->op);
    int ni = info->ninputs;
    size_t es = hb_dtype_size(c->dtype);
    hb_buf bin[HB_MAX_INPUTS], bout;
    hb_buf *pin[HB_MAX_INPUTS];
    double *xin[HB_MAX_INPUTS];
    size_t nin[HB_MAX_INPUTS];
    size_t nout = (size_t)hb_op_output_elems(c->op, &c->shape);
    for (int i = 0; i < ni; i++) {
        nin[i] = (size_t)hb_op_input_elems(c->op, &c->shape, i);
        xin[i] = malloc(nin[i] * sizeof(double));
        assert_non_null(xin[i]);
        for (size_t j = 0; j < nin[i]; j++) xin[i][j] = urand();
        assert_int_equal(inst->ops->buf_alloc(inst, nin[i] * es, c->route, &bin[i]), HB_OK);
        to_dev(&bin[i], xin[i], nin[i], c->dtype);
        /* the reference sees exactly the stored (possibly f16-rounded) inputs */
        from_dev(xin[i], &bin[i], nin[i], c->dtype);
        assert_int_equal(inst->ops->upload(inst, &bin[i]), HB_OK);
        pin[i] = &bin[i];
    }
    assert_int_equal(inst->ops->buf_alloc(inst, nout * es, c->route, &bout), HB_OK);
    poison(&bout, nout, c->dtype);
    assert_int_equal(inst->ops->upload(inst, &bout), HB_OK);
    hb_status st = inst->ops->run(inst, c, pin, &bout);
    if (st == HB_OK) {
        assert_int_equal(inst->ops->download(inst, &bout), HB_OK);
        double *got = malloc(nout * sizeof(double)), *ref = malloc(nout * sizeof(double));
        assert_non_null(got);
        assert_non_null(ref);
        from_dev(got, &bout, nout, c->dtype);
        assert_int_equal(hb_ref_compute(c, (const double *const *)xin, ref, 1), HB_OK);
        double num = 0, den = 0;
        size_t bad = 0;
        for (size_t j = 0; j < nout; j++) {
            if (!isfinite(got[j])) { bad++; continue; }
            num += (got[j] - ref[j]) * (got[j] - ref[j]);
            den += ref[j] * ref[j];
        }
        double rel = sqrt(num) / (sqrt(den) > 0 ? sqrt(den) : 1);
        double tol = hb_op_tolerance(c->op, &c->shape, c->dtype);
        char sh[160];
        hb_shape_format(c->op, &c->shape, sh, sizeof sh);
        if (bad || !(rel <= tol))
            fail_msg("%s %s %s route %s: %zu non-finite of %zu, rel_err %.3g > tol %.3g", info->name, sh,
                     hb_dtype_name(c->dtype), hb_route_name(c->route), bad, nout, rel, tol);
        if (rel_out) *rel_out = rel;
        free(got);
        free(ref);
    }
    inst->ops->buf_free(inst, &bout);
    for (int i = 0; i < ni; i++) {
        inst->ops->buf_free(inst, &bin[i]);
        free(xin[i]);
    }
    return st;
}
#endif
