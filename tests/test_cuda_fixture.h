/*
 * test_cuda_fixture.h - the CUDA plugin as tests/test_cuda.c uses it: the plugin found and dlopened
 * (plugin_path: $HB_PLUGIN_DIR, else beside the test binary's folder), its instances enumerated for the
 * cmocka group (setup, teardown; need_plugin and need_gpu skip a test without them), a case made from
 * a shape text (mk), and one case run through the backend's hooks on random inputs with its output
 * poisoned, checked against the f64 reference (run_case), the run's impl and algo read back
 * (case_impl), and one shape run in every dtype with its impl or algo checked for a marker
 * (run_dtypes). Header-only, included by test_cuda.c alone (after <cmocka.h>); everything is static.
 */
#ifndef HB_TEST_CUDA_FIXTURE_H
#define HB_TEST_CUDA_FIXTURE_H
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "core/backend.h"
#include "core/convert.h"
#include "cpu_ref/ref.h"
#include "cuda/hb_cuda.h"
#include "test_case.h"

static void *g_lib;
static const hb_backend_ops *g_ops;
static hb_instance g_inst[8];
static int g_n = -1;
static char g_reason[512];
static char g_path[PATH_MAX + 32];

static void plugin_path(void)
{
    const char *env = getenv("HB_PLUGIN_DIR");
    if (env && *env) {
        snprintf(g_path, sizeof g_path, "%s/hb_cuda.so", env);
        return;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(g_path, sizeof g_path, "build/hb_cuda.so");
        return;
    }
    exe[n] = 0;
    char *s = strrchr(exe, '/');
    if (s) *s = 0;            /* build/tests */
    s = strrchr(exe, '/');
    if (s) *s = 0;            /* build */
    snprintf(g_path, sizeof g_path, "%s/hb_cuda.so", exe);
}

static int setup(void **state)
{
    (void)state;
    plugin_path();
    if (access(g_path, R_OK) != 0)
        return 0; /* not built: tests skip */
    g_lib = dlopen(g_path, RTLD_NOW | RTLD_LOCAL);
    if (!g_lib) {
        fprintf(stderr, "dlopen(%s): %s\n", g_path, dlerror());
        return 0;
    }
    g_ops = (const hb_backend_ops *)dlsym(g_lib, "hb_cuda_ops");
    if (g_ops && g_ops->enumerate) {
        g_reason[0] = 0;
        /* the run's settings (core/config.h): the environment, as cli/main.c reads it */
        hb_config_from_env(hb_config_boundary());
        if (g_ops->configure) g_ops->configure(hb_config_get());
        g_n = g_ops->enumerate(g_inst, 8, g_reason, sizeof g_reason);
        for (int i = 0; i < g_n; i++)
            if (!g_inst[i].ops) g_inst[i].ops = g_ops;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < g_n; i++)
        g_ops->close(&g_inst[i]);
    /* the plugin stays loaded (as in the registry): CUDA's atexit handlers live in it */
    return 0;
}

static void need_plugin(void)
{
    if (access(g_path, R_OK) != 0) {
        printf("plugin %s not built: skipped\n", g_path);
        skip();
    }
}

static void need_gpu(void)
{
    need_plugin();
    if (g_n <= 0) {
        printf("no GPU here (%s): GPU part skipped\n", g_reason);
        skip();
    }
}

/* ---- without a GPU ---- */

/* hb_test_case (test_case.h) with the dtype and route given */
static hb_case mk(hb_op op, const char *shape, hb_dtype d, hb_route r)
{
    hb_case c = hb_test_case(op, shape);
    c.dtype = d;
    c.route = r;
    return c;
}

/* ---- with a GPU ---- */

static uint64_t rs;
static double unif(void) /* [-1, 1), never 0 */
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    double v = (double)(rs >> 11) * 0x1p-53 * 2.0 - 1.0;
    return v == 0.0 ? 0.25 : v;
}

/* Run c through the hooks; rel err vs hb_ref_compute returned, non-finite count in *bad. */
static hb_status run_case(hb_instance *inst, const hb_case *c, double *err, int64_t *bad)
{
    const hb_backend_ops *ops = inst->ops;
    const int nin = hb_op_get(c->op)->ninputs;
    const hb_elem e = hb_elem_of_dtype(c->dtype);
    const size_t es = hb_dtype_size(c->dtype);
    char reason[256] = "";
    if (hb_dtype_is_quant(c->dtype)) return HB_ESKIP; /* blocks, not elements: test_qmatmul.h's qm_run */
    hb_status st = ops->supports(inst, c, reason, sizeof reason);
    if (st != HB_OK) return st;
    hb_buf bufs[HB_MAX_INPUTS], ob;
    hb_buf *bp[HB_MAX_INPUTS];
    double *ref_in[HB_MAX_INPUTS];
    for (int i = 0; i < nin; i++) {
        const int64_t n = hb_op_input_elems(c->op, &c->shape, i);
        ref_in[i] = malloc((size_t)n * sizeof(double));
        assert_non_null(ref_in[i]);
        for (int64_t j = 0; j < n; j++) ref_in[i][j] = unif();
        assert_int_equal(ops->buf_alloc(inst, (size_t)n * es, c->route, &bufs[i]), HB_OK);
        assert_non_null(bufs[i].host);
        /* device dtype values, and the reference sees exactly those values */
        hb_convert(bufs[i].host, e, ref_in[i], HB_ELEM_F64, (size_t)n);
        hb_convert(ref_in[i], HB_ELEM_F64, bufs[i].host, e, (size_t)n);
        assert_int_equal(ops->upload(inst, &bufs[i]), HB_OK);
        bp[i] = &bufs[i];
    }
    const int64_t no = hb_op_output_elems(c->op, &c->shape);
    assert_int_equal(ops->buf_alloc(inst, (size_t)no * es, c->route, &ob), HB_OK);
    double *out = malloc((size_t)no * sizeof(double)), *ref = malloc((size_t)no * sizeof(double));
    assert_non_null(out);
    assert_non_null(ref);
    for (int64_t j = 0; j < no; j++) out[j] = NAN;
    hb_convert(ob.host, e, out, HB_ELEM_F64, (size_t)no); /* poison */
    assert_int_equal(ops->upload(inst, &ob), HB_OK);
    st = ops->run(inst, c, (hb_buf *const *)bp, &ob);
    if (st == HB_OK) {
        assert_int_equal(ops->download(inst, &ob), HB_OK);
        hb_convert(out, HB_ELEM_F64, ob.host, e, (size_t)no);
        assert_int_equal(hb_ref_compute(c, (const double *const *)ref_in, ref, 1), HB_OK);
        double num = 0.0, den = 0.0;
        *bad = 0;
        for (int64_t j = 0; j < no; j++) {
            if (!isfinite(out[j])) { (*bad)++; continue; }
            num += (out[j] - ref[j]) * (out[j] - ref[j]);
            den += ref[j] * ref[j];
        }
        *err = den > 0.0 ? sqrt(num / den) : sqrt(num);
    }
    free(out);
    free(ref);
    ops->buf_free(inst, &ob);
    for (int i = 0; i < nin; i++) {
        ops->buf_free(inst, &bufs[i]);
        free(ref_in[i]);
    }
    return st;
}

/* "impl" of the last run's case_info (a JSON object); "" when absent or unparsable. */
/* impl_of (backend.h) must name before the run what the run then reports as "impl" (impl, from
 * case_impl), wherever it names anything (NULL: a timed choice). 1 when it holds, else prints why. */
static int impl_of_agrees(hb_instance *inst, const hb_case *c, const char *impl)
{
    const char *pre = g_ops->impl_of ? g_ops->impl_of(inst, c) : NULL;
    if (!pre || !strcmp(pre, impl)) return 1;
    printf("     impl_of named \"%s\" before the run, the run reports \"%s\"\n", pre, impl);
    return 0;
}

static void case_impl(hb_instance *inst, const hb_case *c, char *impl, size_t len, char *algo, size_t alen)
{
    char info[2048] = "";
    impl[0] = 0;
    if (algo) algo[0] = 0;
    if (g_ops->case_info(inst, c, info, sizeof info) != HB_OK) return;
    json_t *j = json_loads(info, 0, NULL);
    if (!j) return;
    const char *v = json_string_value(json_object_get(j, "impl"));
    snprintf(impl, len, "%s", v ? v : "");
    const char *a = json_string_value(json_object_get(j, "algo"));
    if (algo) snprintf(algo, alen, "%s", a ? a : "");
    json_decref(j);
}

/* Case op/shape on inst (pinned route) in every dtype it takes, each against the reference (skips
 * left out); tag names the forced path in the printed line. Returns how many runs have marker in
 * their impl or algo (marker NULL: none counted); with require, a run without it fails. Adds to
 * *ran and *failures. */
static int run_dtypes(hb_instance *inst, hb_op op, const char *shape, const char *tag, const char *marker, int require,
                      int *ran, int *failures)
{
    int marked = 0;
    for (int d = 0; d < HB_DTYPE_COUNT; d++) {
        hb_case c = mk(op, shape, (hb_dtype)d, HB_ROUTE_PINNED);
        double err = -1.0;
        int64_t bad = 0;
        hb_status st = run_case(inst, &c, &err, &bad);
        if (st == HB_ESKIP) continue;
        (*ran)++;
        char impl[64], algo[512];
        case_impl(inst, &c, impl, sizeof impl, algo, sizeof algo);
        const int has = marker && (strstr(impl, marker) || strstr(algo, marker));
        marked += has;
        const double tol = hb_op_tolerance(c.op, &c.shape, c.dtype);
        const int ok = st == HB_OK && bad == 0 && err <= tol && (!require || has) && impl_of_agrees(inst, &c, impl);
        printf("%-4s %s %-5s %-62s err %.2e tol %.1e %s: %s\n", ok ? "ok" : "FAIL", tag, hb_dtype_name(c.dtype), shape, err, tol,
               impl, algo);
        *failures += !ok;
    }
    return marked;
}

#endif
