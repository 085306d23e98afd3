/*
 * test_cuda_collective.c - the CUDA plugin's collectives and energy counter on a real GPU (skipped
 * where the plugin is not built or no GPU is present): every collective, NCCL out of place and in
 * place, host-staged and peer paths, f32/f16/bf16, one rank, on random inputs with a NaN-poisoned
 * output, checked against the f64 reference; the vote hook; the NVML energy counter increasing while
 * the GPU works; describe() with the topology.
 */
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

static const hb_backend_ops *g_ops;
static hb_instance g_inst[8];
static int g_n = -1;
static char g_reason[512], g_path[PATH_MAX + 32];

static int setup(void **state)
{
    (void)state;
    const char *env = getenv("HB_PLUGIN_DIR");
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (env && *env) snprintf(g_path, sizeof g_path, "%s/hb_cuda.so", env);
    else if (n > 0) {
        exe[n] = 0;
        for (int k = 0; k < 2; k++) { char *s = strrchr(exe, '/'); if (s) *s = 0; }
        snprintf(g_path, sizeof g_path, "%s/hb_cuda.so", exe);
    } else snprintf(g_path, sizeof g_path, "build/hb_cuda.so");
    if (access(g_path, R_OK) != 0) return 0;
    void *lib = dlopen(g_path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "dlopen(%s): %s\n", g_path, dlerror()); return 0; }
    g_ops = dlsym(lib, "hb_cuda_ops");
    if (!g_ops) return 0;
    memset(g_inst, 0, sizeof g_inst);
    hb_config_from_env(hb_config_boundary()); /* the run's settings (core/config.h), as cli/main.c reads them */
    if (g_ops->configure) g_ops->configure(hb_config_get());
    g_n = g_ops->enumerate(g_inst, 8, g_reason, sizeof g_reason);
    return 0;
}

static void need_gpu(void)
{
    if (!g_ops) { printf("plugin %s not built or not loadable: skipped\n", g_path); skip(); }
    if (g_n <= 0) { printf("no GPU here (%s): skipped\n", g_reason); skip(); }
}

static void test_hooks_present(void **state)
{
    (void)state;
    if (!g_ops) { printf("plugin not built: skipped\n"); skip(); }
    assert_non_null(g_ops->energy_read);
    assert_non_null(g_ops->coll_vote);
}

static hb_case mk(hb_op op, const char *shape, hb_dtype d, hb_mode m)
{
    hb_case c;
    char err[200];
    memset(&c, 0, sizeof c);
    c.op = op;
    c.dtype = d;
    c.mode = m;
    c.route = HB_ROUTE_PAGEABLE;
    hb_status st = hb_shape_parse(shape, &c.shape, err, sizeof err);
    if (st == HB_OK) st = hb_shape_normalize(op, &c.shape, err, sizeof err);
    if (st != HB_OK) fail_msg("bad shape %s: %s", shape, err);
    return c;
}

static hb_elem elem_of(hb_dtype d) { return d == HB_F16 ? HB_ELEM_F16 : d == HB_BF16 ? HB_ELEM_BF16 : HB_ELEM_F32; }

/* One case: random input, poisoned output, run, download, relative error against the reference. */
static double run_case(const hb_case *c, char *why, size_t wl)
{
    hb_instance *in = &g_inst[0];
    size_t ni = (size_t)hb_op_input_elems(c->op, &c->shape, 0), no = (size_t)hb_op_output_elems(c->op, &c->shape);
    size_t es = hb_dtype_size(c->dtype);
    hb_buf bi, bo;
    assert_int_equal(g_ops->buf_alloc(in, ni * es, HB_ROUTE_PAGEABLE, &bi), HB_OK);
    assert_int_equal(g_ops->buf_alloc(in, no * es, HB_ROUTE_PAGEABLE, &bo), HB_OK);
    bi.dtype = bo.dtype = c->dtype;
    double *x = malloc(ni * sizeof *x), *ref = malloc(no * sizeof *ref), *got = malloc(no * sizeof *got);
    assert_non_null(x); assert_non_null(ref); assert_non_null(got);
    srand(11);
    for (size_t i = 0; i < ni; i++) x[i] = 2.0 * rand() / RAND_MAX - 1.0 + 1e-3;
    hb_convert(bi.host, elem_of(c->dtype), x, HB_ELEM_F64, ni);
    double *xr = malloc(ni * sizeof *xr); /* the reference of the rounded input */
    hb_convert(xr, HB_ELEM_F64, bi.host, elem_of(c->dtype), ni);
    for (size_t i = 0; i < no * es; i++) ((unsigned char *)bo.host)[i] = 0xFF; /* NaN in every dtype */
    assert_int_equal(g_ops->upload(in, &bi), HB_OK);
    assert_int_equal(g_ops->upload(in, &bo), HB_OK);
    hb_buf *ins[1] = {&bi};
    char r[256] = "";
    assert_int_equal(g_ops->supports(in, c, r, sizeof r), HB_OK);
    double e = INFINITY;
    hb_status st = g_ops->run(in, c, ins, &bo);
    if (st != HB_OK) snprintf(why, wl, "run: %s", hb_status_name(st));
    else {
        assert_int_equal(g_ops->download(in, &bo), HB_OK);
        const double *xin[1] = {xr};
        assert_int_equal(hb_ref_compute(c, xin, ref, 1), HB_OK);
        hb_convert(got, HB_ELEM_F64, bo.host, elem_of(c->dtype), no);
        double num = 0, den = 0;
        for (size_t i = 0; i < no; i++) {
            if (!isfinite(got[i])) { num = INFINITY; break; }
            num += (got[i] - ref[i]) * (got[i] - ref[i]);
            den += ref[i] * ref[i];
        }
        e = sqrt(num / den);
    }
    g_ops->buf_free(in, &bi);
    g_ops->buf_free(in, &bo);
    free(x); free(xr); free(ref); free(got);
    return e;
}

static void test_collectives_verify(void **state)
{
    (void)state;
    need_gpu();
    const hb_op ops[] = {HB_OP_ALL_REDUCE, HB_OP_ALL_GATHER, HB_OP_REDUCE_SCATTER, HB_OP_BROADCAST};
    const char *shapes[] = {"n=1", "n=1000", "n=1048577", "n=1000 inplace=1", "n=1000 path=1", "n=1048577 path=1", "n=1000 path=2"};
    const hb_dtype dts[] = {HB_F32, HB_F16, HB_BF16};
    int ran = 0;
    for (int o = 0; o < 4; o++)
        for (int s = 0; s < 7; s++)
            for (int d = 0; d < 3; d++) {
                hb_case c = mk(ops[o], shapes[s], dts[d], HB_MODE_RESIDENT);
                char r[256] = "";
                if (g_ops->supports(&g_inst[0], &c, r, sizeof r) != HB_OK) {
                    /* only in-place reduce_scatter is refused on one rank */
                    if (!(ops[o] == HB_OP_REDUCE_SCATTER && c.shape.inplace)) fail_msg("%s %s skipped: %s", hb_op_get(ops[o])->name, shapes[s], r);
                    continue;
                }
                char why[128] = "";
                double e = run_case(&c, why, sizeof why);
                double tol = hb_op_tolerance(c.op, &c.shape, c.dtype);
                printf("%-15s %-18s %-5s rel_err %.3g%s%s\n", hb_op_get(ops[o])->name, shapes[s], hb_dtype_name(dts[d]), e,
                       why[0] ? " " : "", why);
                if (!(e <= tol)) fail_msg("%s %s %s: rel_err %g over %g %s", hb_op_get(ops[o])->name, shapes[s], hb_dtype_name(dts[d]), e, tol, why);
                ran++;
            }
    assert_true(ran >= 70);
    char buf[2048];
    hb_case c = mk(HB_OP_ALL_REDUCE, "n=1000", HB_F32, HB_MODE_RESIDENT);
    assert_int_equal(g_ops->case_info(&g_inst[0], &c, buf, sizeof buf), HB_OK);
    json_t *j = json_loads(buf, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "coll_path")), "nccl");
    assert_true(json_integer_value(json_object_get(j, "nccl_version")) >= 20000);
    json_decref(j);
    /* the vote: one rank agrees with itself */
    assert_int_equal(g_ops->coll_vote(&g_inst[0], &c, 0), 0);
    assert_int_equal(g_ops->coll_vote(&g_inst[0], &c, 1), 1);
}

static void test_energy_counter(void **state)
{
    (void)state;
    need_gpu();
    double j0 = -1, j1 = -1;
    char why[160] = "";
    hb_status st = g_ops->energy_read(&g_inst[0], &j0, why, sizeof why);
    if (st != HB_OK) { printf("energy counter unavailable: %s\n", why); skip(); }
    /* keep the GPU busy until the counter (updated ~every 100 ms) moves, 5 s at most */
    hb_case c = mk(HB_OP_ALL_REDUCE, "n=67108864", HB_F32, HB_MODE_RESIDENT);
    hb_buf bi, bo;
    assert_int_equal(g_ops->buf_alloc(&g_inst[0], 67108864 * 4, HB_ROUTE_PAGEABLE, &bi), HB_OK);
    assert_int_equal(g_ops->buf_alloc(&g_inst[0], 67108864 * 4, HB_ROUTE_PAGEABLE, &bo), HB_OK);
    bi.dtype = bo.dtype = HB_F32;
    hb_buf *ins[1] = {&bi};
    int calls = 0;
    do {
        for (int i = 0; i < 100; i++, calls++) assert_int_equal(g_ops->run(&g_inst[0], &c, ins, &bo), HB_OK);
        assert_int_equal(g_ops->energy_read(&g_inst[0], &j1, why, sizeof why), HB_OK);
    } while (j1 == j0 && calls < 20000);
    printf("%d calls of all_reduce 256 MiB until the counter moved\n", calls);
    printf("NVML energy: %.3f J -> %.3f J (+%.3f J)\n", j0, j1, j1 - j0);
    assert_true(j1 > j0);
    assert_true(j1 - j0 < 5000); /* under 5 kJ for well under 10 s of one GPU */
    g_ops->buf_free(&g_inst[0], &bi);
    g_ops->buf_free(&g_inst[0], &bo);
    char buf[16384];
    assert_int_equal(g_ops->describe(&g_inst[0], buf, sizeof buf), HB_OK);
    json_t *d = json_loads(buf, 0, NULL);
    if (!d) fail_msg("describe is not JSON: %s", buf);
    assert_non_null(json_object_get(d, "topology"));
    printf("topology:\n%s\n", json_string_value(json_object_get(d, "topology")));
    json_decref(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hooks_present),
        cmocka_unit_test(test_collectives_verify),
        cmocka_unit_test(test_energy_counter),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
