/*
 * test_cpu_dnnl_gemm.c - matmul and bmm of the cpu backend through OpenBLAS or oneDNN, chosen per shape
 * by a timed probe (kernels/cpu/cpu_dnnl_gemm.c), against the f64 reference (kernels/cpu_ref/ref.c),
 * through the backend's hooks: random inputs in [-1, 1), output poisoned with NaN, run,
 * ||out - ref|| / ||ref|| under the harness's tolerance for the shape and every element finite.
 * Each shape (odd sizes: m = 1, m = 3, n = 1, n = 257, k = 1; bmm with batch 3 and 1) runs with
 * HB_CPU_GEMM forcing each path (openblas, onednn-sgemm, onednn-matmul, onednn) and the probe (auto),
 * each twice (the second call on new buffers and data takes the cached choice). The case's impl must
 * name the path that ran: "openblas-..." when forced so, "onednn-sgemm" / "onednn-matmul:..." when
 * that candidate is forced (unless gemm_choice says oneDNN has no such implementation), and under the
 * probe the candidate gemm_choice marks "(chosen)", with threads = the team when oneDNN runs. After
 * the oneDNN runs every thread of the team must still be bound to a core of its own (cpu_sys.c
 * hb_cpu_rebind_team). Without oneDNN in the build the forced oneDNN cases are left out, and OpenBLAS
 * must run every shape with gemm_choice saying why.
 */
#include <hwloc.h>
#include <math.h>
#include <omp.h>
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
#include "test_config.h"

static hb_instance g_cpu;


static const struct { hb_op op; const char *shape; } shapes[] = {
    { HB_OP_MATMUL, "m=1 n=64 k=48" },     /* gemv: a row */
    { HB_OP_MATMUL, "m=40 n=1 k=33" },     /* gemv: a column */
    { HB_OP_MATMUL, "m=3 n=257 k=19" },
    { HB_OP_MATMUL, "m=37 n=29 k=1" },     /* rank one */
    { HB_OP_MATMUL, "m=1 n=1 k=100" },     /* a dot product */
    { HB_OP_MATMUL, "m=130 n=257 k=67" },
    { HB_OP_MATMUL, "m=96 n=96 k=96" },
    { HB_OP_BMM, "batch=3 m=5 n=257 k=7" },
    { HB_OP_BMM, "batch=3 m=1 n=40 k=24" },
    { HB_OP_BMM, "batch=3 m=33 n=17 k=1" },
    { HB_OP_BMM, "batch=1 m=64 n=48 k=80" },
    { HB_OP_BMM, "batch=16 m=40 n=40 k=64" },
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* What one checked call reported (strings owned by the caller). */
typedef struct ran {
    char *impl, *choice;
    int threads;
} ran;

static void ran_free(ran *r)
{
    free(r->impl);
    free(r->choice);
}

/* One checked call of c (test_run.h) with inputs from seed; returns the case_info's impl, gemm_choice
 * and threads. */
static ran run_check(const hb_case *c, const char *label, uint64_t seed)
{
    json_t *o = hb_test_run_checked(&g_cpu, c, seed, label);
    const char *im = json_string_value(json_object_get(o, "impl"));
    const char *ch = json_string_value(json_object_get(o, "gemm_choice"));
    ran r = { strdup(im ? im : ""), strdup(ch ? ch : ""), (int)json_integer_value(json_object_get(o, "threads")) };
    json_decref(o);
    return r;
}

static int have_dnnl(void)
{
    char v[96];
    return strcmp(conv_dnnl_version(v, sizeof v), "not in this build") != 0;
}

/* The candidate the probe's note marks "(chosen)": "openblas", "onednn-sgemm" or "onednn-matmul"
 * (the note: "probe best-of: <name>[=<impl>] <t> ms[ (chosen)], ...[; <why>]"); NULL when none is. */
static const char *chosen_in(const char *note)
{
    const char *s = strstr(note, "probe best-of:");
    if (!s)
        return NULL;
    s += strlen("probe best-of:");
    while (*s && *s != ';') {
        while (*s == ' ')
            s++;
        const char *end = s + strcspn(s, ",;");
        const char *ch = strstr(s, " (chosen)");
        if (ch && ch < end) {
            if (!strncmp(s, "openblas", 8)) return "openblas";
            if (!strncmp(s, "onednn-sgemm", 12)) return "onednn-sgemm";
            if (!strncmp(s, "onednn-matmul", 13)) return "onednn-matmul";
            return NULL;
        }
        s = *end == ',' ? end + 1 : end;
    }
    return NULL;
}

/* Every forced path and the probe, twice per shape. */
static void test_gemm_paths(void **state)
{
    (void)state;
    static const char *const forces[] = { "openblas", "onednn-sgemm", "onednn-matmul", "onednn", "auto" };
    const int T = omp_get_max_threads(), dnnl = have_dnnl();
    for (int s = 0; s < NSHAPES; s++) {
        const hb_case c = hb_test_case(shapes[s].op, shapes[s].shape);
        for (size_t f = 0; f < sizeof forces / sizeof forces[0]; f++) {
            if (!dnnl && f >= 1 && f <= 3)
                continue; /* without oneDNN: OpenBLAS forced, and the probe saying why it is not used */
            setenv("HB_CPU_GEMM", forces[f], 1);
            char *first_impl = NULL;
            for (int rep = 0; rep < 2; rep++) {
                char label[200];
                snprintf(label, sizeof label, "%s %s [%s #%d]", hb_op_get(c.op)->name, shapes[s].shape, forces[f], rep);
                ran r = run_check(&c, label, 9000u + 37u * (uint64_t)s + 5u * (uint64_t)f + (uint64_t)rep);
                const int dn = !strncmp(r.impl, "onednn-", 7);
                if (f == 0 && (strncmp(r.impl, "openblas-", 9) || !strstr(r.choice, "forced")))
                    fail_msg("%s: impl %s (%s)", label, r.impl, r.choice);
                if (f == 1 && strcmp(r.impl, "onednn-sgemm"))
                    fail_msg("%s: impl %s (%s)", label, r.impl, r.choice);
                if (f == 2 && strncmp(r.impl, "onednn-matmul:", 14) && !strstr(r.choice, "oneDNN"))
                    fail_msg("%s: impl %s without a reason (%s)", label, r.impl, r.choice);
                if (f == 3 && !dn)
                    fail_msg("%s: impl %s (%s)", label, r.impl, r.choice);
                if (f == 4 && !dnnl && (strncmp(r.impl, "openblas-", 9) || !strstr(r.choice, "not in this build")))
                    fail_msg("%s: impl %s (%s)", label, r.impl, r.choice);
                if (f == 4 && dnnl) {
                    const char *w = chosen_in(r.choice);
                    if (!strstr(r.choice, "probe best-of:") || !w || strncmp(r.impl, w, strlen(w)))
                        fail_msg("%s: impl %s is not the probe's choice (%s)", label, r.impl, r.choice);
                }
                if (dn && r.threads != T)
                    fail_msg("%s: oneDNN ran on the team of %d, case reports %d threads", label, T, r.threads);
                if (rep == 0)
                    first_impl = strdup(r.impl);
                else if (strcmp(first_impl, r.impl)) /* the choice is cached per shape */
                    fail_msg("%s: impl %s, first call %s", label, r.impl, first_impl);
                ran_free(&r);
            }
            free(first_impl);
        }
    }
    unsetenv("HB_CPU_GEMM");
}

/* The configuration reaches the backend as a struct (core/config.h, the configure hook), not through
 * the environment: a struct of the test's own that forces OpenBLAS is obeyed while the environment
 * asks for something else, and a struct with the setting unset gives the probe's choice although the
 * environment still forces a path. */
static void test_config_struct_reaches_backend(void **state)
{
    (void)state;
    const hb_case c = hb_test_case(HB_OP_MATMUL, "m=48 n=40 k=56");
    setenv("HB_CPU_GEMM", "onednn-sgemm", 1); /* refreshes hb_config_get(), which the backend no longer reads */
    hb_config mine = {0};
    mine.cpu_gemm = "openblas";
    hb_cpu_ops.configure(&mine);
    ran o = run_check(&c, "struct: openblas", 31);
    assert_int_equal(strncmp(o.impl, "openblas-", 9), 0);
    assert_non_null(strstr(o.choice, "forced by HB_CPU_GEMM=openblas"));
    mine.cpu_gemm = NULL; /* kept by pointer: the change is seen on the next call */
    ran a = run_check(&c, "struct: unset", 32);
    assert_null(strstr(a.choice, "forced"));
    hb_cpu_ops.configure(hb_config_get());
    ran e = run_check(&c, "process config: onednn-sgemm", 33);
    if (have_dnnl()) assert_string_equal(e.impl, "onednn-sgemm");
    unsetenv("HB_CPU_GEMM");
    ran_free(&o);
    ran_free(&a);
    ran_free(&e);
}

/* A forced path is its own cache entry: after oneDNN was forced, HB_CPU_GEMM=openblas runs OpenBLAS
 * for the same shape, and unset again the probe's entry (one probe, the same note) comes back. */
static void test_force_switches(void **state)
{
    (void)state;
    const hb_case c = hb_test_case(HB_OP_MATMUL, "m=64 n=72 k=40");
    unsetenv("HB_CPU_GEMM");
    ran a = run_check(&c, "auto #0", 21);
    if (have_dnnl()) {
        setenv("HB_CPU_GEMM", "onednn-sgemm", 1);
        ran d = run_check(&c, "onednn-sgemm", 22);
        assert_string_equal(d.impl, "onednn-sgemm");
        ran_free(&d);
    }
    setenv("HB_CPU_GEMM", "openblas", 1);
    ran o = run_check(&c, "openblas", 23);
    assert_int_equal(strncmp(o.impl, "openblas-", 9), 0);
    assert_non_null(strstr(o.choice, "forced by HB_CPU_GEMM=openblas"));
    unsetenv("HB_CPU_GEMM");
    ran b = run_check(&c, "auto #1", 24);
    assert_string_equal(a.impl, b.impl);
    assert_string_equal(a.choice, b.choice);
    if (!have_dnnl())
        assert_non_null(strstr(a.choice, "not in this build"));
    ran_free(&a);
    ran_free(&o);
    ran_free(&b);
}

/* After the oneDNN calls above, each thread of a team region is bound to exactly one core, a different
 * one per thread (what hb_cpu_bind_threads set up and hb_cpu_rebind_team keeps). */
static void test_team_still_bound(void **state)
{
    (void)state;
    hwloc_topology_t t;
    assert_int_equal(hwloc_topology_init(&t), 0);
    assert_int_equal(hwloc_topology_load(t), 0);
    const int T = omp_get_max_threads();
    int core_of[1024];
    assert_true(T <= 1024);
#pragma omp parallel
    {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        int idx = -2;
        if (set && hwloc_get_cpubind(t, set, HWLOC_CPUBIND_THREAD) == 0) {
            hwloc_obj_t core = hwloc_get_next_obj_covering_cpuset_by_type(t, set, HWLOC_OBJ_CORE, NULL);
            idx = core && hwloc_bitmap_isequal(core->cpuset, set) ? (int)core->logical_index : -1;
        }
        core_of[omp_get_thread_num()] = idx;
        hwloc_bitmap_free(set);
    }
    hwloc_topology_destroy(t);
    if (T < hb_cpu_ncores())
        skip(); /* not the binding's team */
    for (int i = 0; i < T; i++) {
        if (core_of[i] < 0)
            fail_msg("thread %d of %d is not bound to one core (%d)", i, T, core_of[i]);
        for (int j = 0; j < i; j++)
            if (core_of[i] == core_of[j])
                fail_msg("threads %d and %d share core %d", j, i, core_of[i]);
    }
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
        cmocka_unit_test(test_gemm_paths),
        cmocka_unit_test(test_force_switches),
        cmocka_unit_test(test_config_struct_reaches_backend),
        cmocka_unit_test(test_team_still_bound),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
