/*
 * test_refcache.c - the f64 references kept on disk (measure/refcache.h, hb_ref_cache_get):
 *   - a miss computes and stores; the next process's lookup hits and returns the identical array,
 *     equal to cpu_ref's own computation;
 *   - a corrupted entry (a flipped data byte, a truncated file, another key under its name) is
 *     detected, recomputed (the right values) and replaced: the lookup after it hits again;
 *   - another seed, shape or workload item misses (its own entry); the cheap ops are not stored;
 *     without a directory nothing is read or written.
 * Each "process" is a fresh hb_ref_cache; the directory is a new temporary one.
 */
#include <dirent.h>
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

#include "cpu_ref/ref.h"
#include "measure/internal.h"
#include "measure/refcache.h"

static char g_dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/hb_test_refcache.XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(g_dir);
    struct dirent *e;
    char p[600];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') { snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name); unlink(p); }
    if (d) closedir(d);
    rmdir(g_dir);
    return 0;
}

static int count_entries(void)
{
    DIR *d = opendir(g_dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) n += strstr(e->d_name, ".ref") != NULL && !strstr(e->d_name, ".tmp");
    if (d) closedir(d);
    return n;
}

static hb_case matmul_case(long m, long n, long k)
{
    hb_case c;
    memset(&c, 0, sizeof c);
    c.op = HB_OP_MATMUL;
    c.dtype = HB_F32;
    c.mode = HB_MODE_F32;
    c.route = HB_ROUTE_PAGEABLE;
    c.shape.m = m;
    c.shape.n = n;
    c.shape.k = k;
    c.weight = 1;
    char err[200];
    assert_int_equal(hb_shape_normalize(c.op, &c.shape, err, sizeof err), HB_OK);
    return c;
}

static hb_options opts(unsigned long long seed, const char *dir)
{
    hb_options o;
    memset(&o, 0, sizeof o);
    o.seed = seed;
    o.ref_cache = dir;
    return o;
}

/* One "process": a fresh cache asked for case c of item `item`; its output copied into *out (malloc'd,
 * the caller frees); returns its state. */
static hb_refc_state get(const hb_case *c, int item, const hb_options *o, double **out)
{
    hb_ref_cache r;
    memset(&r, 0, sizeof r);
    r.item = -1;
    assert_int_equal(hb_ref_cache_get(&r, c, item, o), HB_OK);
    size_t no = (size_t)hb_op_output_elems(c->op, &c->shape);
    *out = malloc(no * sizeof(double));
    assert_non_null(*out);
    memcpy(*out, r.out, no * sizeof(double));
    hb_refc_state st = (hb_refc_state)r.cstate;
    hb_ref_cache_free(&r);
    return st;
}

/* cpu_ref's own output for case c of item `item` under seed (the inputs as hb_ref_cache_get draws them) */
static double *direct(const hb_case *c, int item, unsigned long long seed)
{
    double *in[HB_MAX_INPUTS] = {0};
    int nin = hb_op_get(c->op)->ninputs;
    for (int i = 0; i < nin; i++) {
        size_t n = (size_t)hb_op_input_elems(c->op, &c->shape, i);
        in[i] = malloc(n * sizeof(double));
        hb_fill_random(in[i], n, seed, (unsigned long long)item * 8 + (unsigned long long)i);
    }
    double *out = malloc((size_t)hb_op_output_elems(c->op, &c->shape) * sizeof(double));
    assert_int_equal(hb_ref_compute(c, (const double *const *)in, out, hb_ref_row_step(c, 4e9)), HB_OK);
    for (int i = 0; i < nin; i++) free(in[i]);
    return out;
}

/* The one entry file of the directory into path. */
static void entry_path(char *path, size_t len)
{
    DIR *d = opendir(g_dir);
    struct dirent *e;
    path[0] = 0;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".ref")) snprintf(path, len, "%s/%s", g_dir, e->d_name);
    if (d) closedir(d);
    assert_true(path[0] != 0);
}

static void test_hit_is_identical(void **state)
{
    (void)state;
    hb_case c = matmul_case(48, 40, 64);
    hb_options o = opts(42, g_dir);
    size_t no = (size_t)hb_op_output_elems(c.op, &c.shape);
    double *a, *b, *d = direct(&c, 3, 42);
    assert_int_equal(get(&c, 3, &o, &a), HB_REFC_MISS);
    assert_int_equal(count_entries(), 1);
    assert_int_equal(get(&c, 3, &o, &b), HB_REFC_HIT);
    assert_memory_equal(a, b, no * sizeof(double));
    assert_memory_equal(a, d, no * sizeof(double));
    assert_int_equal(count_entries(), 1);
    free(a);
    free(b);
    free(d);
}

/* Damage the entry with f, then: recomputed with the right values, replaced (the next one hits). */
static void damaged(void (*f)(const char *path))
{
    hb_case c = matmul_case(33, 17, 29);
    hb_options o = opts(7, g_dir);
    size_t no = (size_t)hb_op_output_elems(c.op, &c.shape);
    double *a, *b, *e, *d = direct(&c, 0, 7);
    assert_int_equal(get(&c, 0, &o, &a), HB_REFC_MISS);
    char path[600];
    entry_path(path, sizeof path);
    f(path);
    assert_int_equal(get(&c, 0, &o, &b), HB_REFC_RECOMPUTED);
    assert_memory_equal(b, d, no * sizeof(double));
    assert_int_equal(get(&c, 0, &o, &e), HB_REFC_HIT);
    assert_memory_equal(e, d, no * sizeof(double));
    free(a);
    free(b);
    free(e);
    free(d);
}

static void flip_data_byte(const char *path)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, -13, SEEK_END), 0); /* inside the last element */
    int ch = fgetc(f);
    assert_int_equal(fseek(f, -13, SEEK_END), 0);
    fputc(ch ^ 0x10, f);
    fclose(f);
}

static void truncate_file(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size - 8), 0);
}

static void foreign_key(const char *path)
{
    /* an entry of another key put under this name (a hash collision, or a file copied by hand) */
    hb_case other = matmul_case(33, 17, 29);
    double v[33 * 17];
    for (int i = 0; i < 33 * 17; i++) v[i] = i;
    char why[600], tmpd[300];
    snprintf(tmpd, sizeof tmpd, "%s/other", g_dir);
    assert_int_equal(hb_refcache_store(tmpd, "not the key", v, 33 * 17, why, sizeof why), 0);
    char p2[700];
    hb_refcache_path(tmpd, "not the key", p2, sizeof p2);
    assert_int_equal(rename(p2, path), 0);
    assert_int_equal(rmdir(tmpd), 0);
    (void)other;
}

static void test_corrupt_data_recomputed(void **state) { (void)state; damaged(flip_data_byte); }
static void test_truncated_recomputed(void **state) { (void)state; damaged(truncate_file); }
static void test_foreign_key_recomputed(void **state) { (void)state; damaged(foreign_key); }

static void test_other_seed_shape_item_miss(void **state)
{
    (void)state;
    hb_case c = matmul_case(24, 24, 32), c2 = matmul_case(24, 24, 33);
    hb_options o = opts(1, g_dir), o2 = opts(2, g_dir);
    double *a, *b, *x, *y, *z;
    assert_int_equal(get(&c, 5, &o, &a), HB_REFC_MISS);
    assert_int_equal(get(&c, 5, &o2, &b), HB_REFC_MISS); /* another seed */
    assert_memory_not_equal(a, b, 24 * 24 * sizeof(double));
    assert_int_equal(get(&c2, 5, &o, &x), HB_REFC_MISS); /* another shape */
    assert_int_equal(get(&c, 6, &o, &y), HB_REFC_MISS);  /* another item: other input streams */
    assert_int_equal(count_entries(), 4);
    assert_int_equal(get(&c, 5, &o, &z), HB_REFC_HIT);   /* the first one is still there */
    assert_memory_equal(a, z, 24 * 24 * sizeof(double));
    free(a); free(b); free(x); free(y); free(z);
}

static void test_cheap_and_off(void **state)
{
    (void)state;
    hb_case c;
    memset(&c, 0, sizeof c);
    c.op = HB_OP_ADD;
    c.dtype = HB_F32;
    c.shape.n = 1000;
    char err[200];
    assert_int_equal(hb_shape_normalize(c.op, &c.shape, err, sizeof err), HB_OK);
    hb_options o = opts(42, g_dir), off = opts(42, NULL);
    double *a, *b;
    assert_int_equal(get(&c, 0, &o, &a), HB_REFC_CHEAP);
    assert_int_equal(count_entries(), 0);
    hb_case m = matmul_case(16, 16, 16);
    assert_int_equal(get(&m, 0, &off, &b), HB_REFC_OFF);
    assert_int_equal(count_entries(), 0);
    free(a);
    free(b);
}

static void test_hash_sees_every_byte(void **state)
{
    (void)state;
    unsigned char buf[101];
    for (int i = 0; i < 101; i++) buf[i] = (unsigned char)i;
    uint64_t h0 = hb_refcache_hash(buf, sizeof buf, 0);
    for (int i = 0; i < 101; i++) {
        buf[i] ^= 1;
        assert_true(hb_refcache_hash(buf, sizeof buf, 0) != h0);
        buf[i] ^= 1;
    }
    assert_true(hb_refcache_hash(buf, 100, 0) != hb_refcache_hash(buf, 101, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hit_is_identical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_data_recomputed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_recomputed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_key_recomputed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_seed_shape_item_miss, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cheap_and_off, setup, teardown),
        cmocka_unit_test(test_hash_sees_every_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
