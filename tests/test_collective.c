/*
 * test_collective.c - the collective op family in the core table (shapes from the launch's
 * environment, sizes, nccl-tests' size and bus-bandwidth factors), its f64 reference, and the
 * energy windows of measure/energy.c against synthetic counters (RAPL files in a temporary folder,
 * a fake backend counter that steps coarsely). No timing is asserted: only values.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/hybench.h"
#include "core/backend.h"
#include "core/convert.h"
#include "cpu_ref/ref.h"
#include "measure/energy.h"
#include "measure/measure.h"

/* cmocka 1.1 has no floating-point assertion */
#define assert_double_equal(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (double)(eps))

static hb_case mk(hb_op op, const char *shape)
{
    hb_case c;
    char err[200];
    memset(&c, 0, sizeof c);
    c.op = op;
    c.dtype = HB_F32;
    c.mode = HB_MODE_F32;
    hb_status st = hb_shape_parse(shape, &c.shape, err, sizeof err);
    if (st == HB_OK) st = hb_shape_normalize(op, &c.shape, err, sizeof err);
    if (st != HB_OK) fail_msg("bad test shape \"%s\": %s", shape, err);
    return c;
}

static void clear_launch_env(void)
{
    const char *v[] = {"HB_RANK", "HB_NRANKS", "HB_LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK",
                       "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS", NULL};
    for (int i = 0; v[i]; i++) unsetenv(v[i]);
}

static void test_table(void **state)
{
    (void)state;
    const char *names[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast"};
    for (int i = 0; i < 4; i++) {
        int op = hb_op_parse(names[i]);
        assert_true(op >= 0);
        assert_int_equal(hb_op_get(op)->family, HB_FAM_COLLECTIVE);
        assert_true(hb_op_is_collective(op));
        assert_int_equal(hb_op_get(op)->ninputs, 1);
    }
    assert_string_equal(hb_family_name(HB_FAM_COLLECTIVE), "collective");
    assert_false(hb_op_is_collective(HB_OP_SUM_ALL));
    assert_string_equal(hb_coll_path_name(HB_COLL_HOST), "host");
    assert_string_equal(hb_coll_path_name(7), "?");
}

static void test_shape_from_launch(void **state)
{
    (void)state;
    clear_launch_env();
    hb_case c = mk(HB_OP_ALL_REDUCE, "n=1024");
    assert_int_equal(c.shape.ranks, 1);
    assert_int_equal(c.shape.rank, 0);
    setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
    setenv("OMPI_COMM_WORLD_RANK", "5", 1);
    c = mk(HB_OP_REDUCE_SCATTER, "n=1024");
    assert_int_equal(c.shape.ranks, 8);
    assert_int_equal(c.shape.rank, 5);
    assert_int_equal(hb_op_input_elems(c.op, &c.shape, 0), 8192);
    assert_int_equal(hb_op_output_elems(c.op, &c.shape), 1024);
    c = mk(HB_OP_ALL_GATHER, "n=1024");
    assert_int_equal(hb_op_input_elems(c.op, &c.shape, 0), 1024);
    assert_int_equal(hb_op_output_elems(c.op, &c.shape), 8192);
    /* HB_* wins over the launcher's variables */
    setenv("HB_NRANKS", "2", 1);
    setenv("HB_RANK", "1", 1);
    c = mk(HB_OP_BROADCAST, "n=3");
    assert_int_equal(c.shape.ranks, 2);
    assert_int_equal(c.shape.rank, 1);
    /* a case for fewer ranks than this process's rank is refused; bad inplace/path too */
    hb_shape s;
    char err[200];
    assert_int_equal(hb_shape_parse("n=4 ranks=1", &s, err, sizeof err), HB_OK);
    assert_int_equal(hb_shape_normalize(HB_OP_ALL_REDUCE, &s, err, sizeof err), HB_EINVAL);
    assert_non_null(strstr(err, "rank 1"));
    assert_int_equal(hb_shape_parse("n=4 inplace=2", &s, err, sizeof err), HB_OK);
    assert_int_equal(hb_shape_normalize(HB_OP_ALL_REDUCE, &s, err, sizeof err), HB_EINVAL);
    assert_int_equal(hb_shape_parse("n=4 path=3", &s, err, sizeof err), HB_OK);
    assert_int_equal(hb_shape_normalize(HB_OP_ALL_REDUCE, &s, err, sizeof err), HB_EINVAL);
    assert_int_equal(hb_shape_parse("ranks=2", &s, err, sizeof err), HB_OK);
    assert_int_equal(hb_shape_normalize(HB_OP_ALL_REDUCE, &s, err, sizeof err), HB_EINVAL);
    /* the key names ranks (and rank where the output depends on it) */
    c = mk(HB_OP_REDUCE_SCATTER, "n=16 inplace=0 path=1");
    char key[256];
    hb_case_key(&c, "cuda:0", key, sizeof key);
    assert_non_null(strstr(key, "n=16 ranks=2 rank=1 path=1"));
    clear_launch_env();
}

static void test_nccl_tests_factors(void **state)
{
    (void)state;
    hb_shape s;
    memset(&s, 0, sizeof s);
    s.n = 1000;
    const int ns[] = {1, 2, 8};
    for (int i = 0; i < 3; i++) {
        s.ranks = ns[i];
        double n = ns[i];
        assert_double_equal(hb_coll_busbw_factor(HB_OP_ALL_REDUCE, &s), 2 * (n - 1) / n, 1e-15);
        assert_double_equal(hb_coll_busbw_factor(HB_OP_ALL_GATHER, &s), (n - 1) / n, 1e-15);
        assert_double_equal(hb_coll_busbw_factor(HB_OP_REDUCE_SCATTER, &s), (n - 1) / n, 1e-15);
        assert_double_equal(hb_coll_busbw_factor(HB_OP_BROADCAST, &s), 1, 0);
        /* S: count * size for all_reduce/broadcast; count * size * ranks for all_gather/reduce_scatter */
        assert_double_equal(hb_coll_bytes(HB_OP_ALL_REDUCE, &s, 2), 2000, 0);
        assert_double_equal(hb_coll_bytes(HB_OP_BROADCAST, &s, 4), 4000, 0);
        assert_double_equal(hb_coll_bytes(HB_OP_ALL_GATHER, &s, 4), 4000 * n, 0);
        assert_double_equal(hb_coll_bytes(HB_OP_REDUCE_SCATTER, &s, 4), 4000 * n, 0);
        assert_double_equal(hb_op_bytes(HB_OP_ALL_GATHER, &s, 4), 4000 * n, 0);
    }
    assert_double_equal(hb_coll_busbw_factor(HB_OP_MATMUL, &s), 0, 0);
}

static void test_reference(void **state)
{
    (void)state;
    clear_launch_env();
    setenv("HB_NRANKS", "3", 1);
    setenv("HB_RANK", "1", 1);
    const int64_t n = 257;
    double *x = malloc(3 * n * sizeof *x), *out = malloc(3 * n * sizeof *out);
    assert_non_null(x);
    assert_non_null(out);
    hb_fill_random(x, 3 * n, 7, 1);
    const hb_op ops[] = {HB_OP_ALL_REDUCE, HB_OP_ALL_GATHER, HB_OP_REDUCE_SCATTER, HB_OP_BROADCAST};
    for (int k = 0; k < 4; k++) {
        hb_case c = mk(ops[k], "n=257");
        for (int64_t i = 0; i < 3 * n; i++) out[i] = NAN;
        const double *in[1] = {x};
        assert_int_equal(hb_ref_compute(&c, in, out, 1), HB_OK);
        int64_t no = hb_op_output_elems(c.op, &c.shape);
        for (int64_t i = 0; i < no; i++) {
            double want;
            switch (ops[k]) {
            case HB_OP_ALL_REDUCE: want = 3 * x[i]; break;
            case HB_OP_ALL_GATHER: want = x[i % n]; break;           /* block q = rank q's x (all the same) */
            case HB_OP_REDUCE_SCATTER: want = 3 * x[n + i]; break;   /* rank 1's block of the sum */
            default: want = x[i]; break;
            }
            assert_double_equal(out[i], want, 1e-15 * fabs(want) + 1e-300);
        }
        if (no < 3 * n) assert_true(isnan(out[no])); /* nothing written past the output */
    }
    free(x);
    free(out);
    clear_launch_env();
}

/* ---- energy ---- */

static char g_dir[64];

static void write_file(const char *dir, const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_rapl(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/hb_rapl_XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    char d0[128], d1[128], sub[160];
    snprintf(d0, sizeof d0, "%s/intel-rapl:0", g_dir);
    snprintf(d1, sizeof d1, "%s/intel-rapl:1", g_dir);
    snprintf(sub, sizeof sub, "%s/intel-rapl:0:0", g_dir); /* a subdomain: must not be counted */
    assert_int_equal(mkdir(d0, 0700), 0);
    assert_int_equal(mkdir(d1, 0700), 0);
    assert_int_equal(mkdir(sub, 0700), 0);
    write_file(d0, "energy_uj", "1000000\n");
    write_file(d0, "max_energy_range_uj", "10000000\n");
    write_file(d1, "energy_uj", "5000000\n");
    write_file(d1, "max_energy_range_uj", "10000000\n");
    write_file(sub, "energy_uj", "777\n");
    hb_instance host = {.name = "cpu", .host_memory = 1};
    hb_energy_src src;
    hb_energy_open(&src, &host, g_dir);
    assert_true(src.available);
    assert_int_equal(src.nrapl, 2);
    double j = -1;
    assert_int_equal(hb_energy_read(&src, &j), HB_OK);
    assert_double_equal(j, 0, 1e-12);
    write_file(d0, "energy_uj", "3500000\n");   /* +2.5 J */
    write_file(d1, "energy_uj", "1000000\n");   /* wrapped: +6 J (10 - 5 + 1) */
    assert_int_equal(hb_energy_read(&src, &j), HB_OK);
    assert_double_equal(j, 8.5, 1e-9);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    assert_int_equal(system(cmd), 0);
    /* no RAPL: unavailable with the reason */
    hb_energy_open(&src, &host, "/nonexistent/powercap");
    assert_false(src.available);
    assert_non_null(strstr(src.reason, "/nonexistent/powercap"));
    hb_rec_energy o;
    hb_rec_clear(&hb_rec_energy_table, &o);
    assert_int_equal(hb_energy_fill(&o, &src, NULL, 1, NAN, 1e9, 0), HB_OK);
    assert_int_equal(o.available, 0);
    assert_non_null(strstr(o.reason, "RAPL"));
    assert_true(isnan(o.joules) && !hb_rec_entry_at(&hb_rec_energy_table, &o, offsetof(hb_rec_energy, joules)));
    hb_rec_release(&hb_rec_energy_table, &o);
    /* a device backend without a counter */
    hb_backend_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.type = "opencl";
    hb_instance dev = {.name = "opencl:0:0", .host_memory = 0, .ops = &ops};
    hb_energy_open(&src, &dev, g_dir);
    assert_false(src.available);
    assert_non_null(strstr(src.reason, "no energy counter"));
}

/* A fake device counter: every call adds 0.25 J; the counter shows it only every 8th read (coarse,
 * like NVML's ~100 ms updates). */
static long g_calls, g_reads;
static double g_true_j, g_shown_j;
static hb_status fake_energy(hb_instance *inst, double *joules, char *why, size_t whylen)
{
    (void)inst; (void)why; (void)whylen;
    if (++g_reads % 8 == 0) g_shown_j = g_true_j;
    *joules = g_shown_j;
    return HB_OK;
}
static hb_status fake_call(void *arg)
{
    (void)arg;
    g_calls++;
    g_true_j += 0.25;
    usleep(1000);
    return HB_OK;
}
static int g_votes;
static int fake_vote(void *arg, int stop)
{
    (void)arg;
    g_votes++;
    return stop;
}

static void test_energy_window(void **state)
{
    (void)state;
    hb_backend_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.type = "cuda";
    ops.energy_read = fake_energy;
    hb_instance dev = {.name = "cuda:0", .ops = &ops};
    hb_energy_src src;
    g_calls = g_reads = 0;
    g_true_j = g_shown_j = 0;
    hb_energy_open(&src, &dev, NULL);
    assert_true(src.available);
    assert_string_equal(src.name, "nvml_total_energy");
    hb_energy_result r;
    assert_int_equal(hb_energy_window(&src, fake_call, NULL, fake_vote, NULL, 0.05, &r), HB_OK);
    /* edges on counter updates: the window holds whole update periods, J/op exact */
    assert_true(r.calls >= 3);
    assert_true(r.calls % 8 == 0);
    assert_double_equal(r.joules / (double)r.calls, 0.25, 1e-12);
    assert_true(r.seconds >= 0.05);
    assert_true(r.updates >= 1);
    assert_true(g_votes > r.calls);
    hb_rec_energy o;
    hb_rec_clear(&hb_rec_energy_table, &o);
    assert_int_equal(hb_energy_fill(&o, &src, &r, 0.05, 10.0, 2e9, 1e9), HB_OK);
    assert_int_equal(o.available, 1);
    assert_double_equal(o.j_per_op, 0.25, 1e-12);
    assert_double_equal(o.gflop_per_j, 2.0 / 0.25, 1e-9);
    assert_double_equal(o.gb_per_j, 1.0 / 0.25, 1e-9);
    assert_double_equal(o.j_per_op_net, (r.joules - 10.0 * r.seconds) / (double)r.calls, 1e-12);
    assert_double_equal(o.power_w, r.joules / r.seconds, 1e-9);
    /* written as the record holds it: every member in its order */
    json_t *j = hb_rec_encode(&hb_rec_energy_table, &o);
    char *s = json_dumps(j, JSON_COMPACT);
    assert_non_null(strstr(s, "{\"source\":\"nvml_total_energy\",\"available\":true,\"window_s\":"));
    assert_non_null(strstr(s, ",\"idle_power_w\":10.0,\"j_per_op_net\":"));
    free(s);
    json_decref(j);
    hb_rec_release(&hb_rec_energy_table, &o);
}

/* A counter that never changes: the window fails with the reason instead of reporting noise. */
static hb_status stuck_energy(hb_instance *inst, double *joules, char *why, size_t whylen)
{
    (void)inst; (void)why; (void)whylen;
    *joules = 42;
    return HB_OK;
}
static void test_energy_stuck(void **state)
{
    (void)state;
    hb_backend_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.type = "cuda";
    ops.energy_read = stuck_energy;
    hb_instance dev = {.name = "cuda:0", .ops = &ops};
    hb_energy_src src;
    hb_energy_open(&src, &dev, NULL);
    hb_energy_result r;
    assert_int_equal(hb_energy_window(&src, NULL, NULL, NULL, NULL, 0.05, &r), HB_EDEVICE);
    assert_non_null(strstr(src.reason, "did not change"));
    assert_true(isnan(hb_energy_idle(&src, 0.05)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_shape_from_launch),
        cmocka_unit_test(test_nccl_tests_factors),
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_rapl),
        cmocka_unit_test(test_energy_window),
        cmocka_unit_test(test_energy_stuck),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
