/*
 * test_gatelist.c - harness/workload/gatelist.c: the gate list's rule and its writer.
 *  - the cost of a case (FLOPs + bytes) against a computation by hand;
 *  - the rule over random synthetic candidates (fixed seeds, shuffled): one kernel path per distinct
 *    (op, backend, dtype, mode, impl) and one route path per (backend, mode, route), each with the
 *    cheapest candidate, the first listed among equals, counted against an independent tally;
 *  - the cut: exactly the paths whose cheapest case costs more are over it;
 *  - the floor: per path the cheapest case of at least the floor, else the costliest;
 *  - the writer: its file read back by the workload parser (hb_workload_load): one section per kept
 *    case (op, shape, dtype, route) with the modes of its paths, in the quick subset, and nothing of a
 *    path over the cut.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "workload/gatelist.h"
#include "workload/workload.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1)); }

static const char *const backends[] = {"cpu-ref", "cpu", "opencl:0:0"};
static const char *const impls[] = {"own-omp", "own-omp+nt", "openblas-sgemm", "own-cl"};

/* a random candidate: add, relu or matmul of a random size, on a random backend, dtype f32 or f16,
 * mode, route (a host-memory backend's pageable) and implementation */
static hb_gate_cand random_cand(void)
{
    hb_gate_cand g;
    memset(&g, 0x5a, sizeof g); /* poison: every field is set below */
    memset(&g.c, 0, sizeof g.c);
    static const hb_op ops[] = {HB_OP_ADD, HB_OP_RELU, HB_OP_MATMUL};
    g.c.op = ops[next() % 3];
    if (g.c.op == HB_OP_MATMUL) { g.c.shape.m = pick(1, 300); g.c.shape.n = pick(1, 300); g.c.shape.k = pick(1, 300); }
    else g.c.shape.n = pick(1, 1 << 20);
    char err[256];
    assert_int_equal(hb_shape_normalize(g.c.op, &g.c.shape, err, sizeof err), HB_OK);
    g.c.dtype = next() % 2 ? HB_F32 : HB_F16;
    g.c.mode = (hb_mode)(next() % 3);
    int b = (int)(next() % 3);
    g.c.route = b < 2 ? HB_ROUTE_PAGEABLE : (hb_route)(next() % 3);
    snprintf(g.c.name, sizeof g.c.name, "syn.%s.%lld", hb_op_get(g.c.op)->name, (long long)(next() % 1000));
    snprintf(g.backend, sizeof g.backend, "%s", backends[b]);
    snprintf(g.impl, sizeof g.impl, "%s", impls[next() % 4]);
    return g;
}

static void test_cost(void **state)
{
    (void)state;
    hb_case c = {.op = HB_OP_ADD, .dtype = HB_F32};
    c.shape.n = 1000;
    char err[256];
    assert_int_equal(hb_shape_normalize(c.op, &c.shape, err, sizeof err), HB_OK);
    assert_true(hb_gate_cost(&c) == 1000.0 + 3 * 4 * 1000.0); /* one add per element; 2 inputs + 1 output, f32 */
    hb_case m = {.op = HB_OP_MATMUL, .dtype = HB_F32};
    m.shape.m = 2; m.shape.n = 3; m.shape.k = 5;
    assert_int_equal(hb_shape_normalize(m.op, &m.shape, err, sizeof err), HB_OK);
    assert_true(hb_gate_cost(&m) == 2.0 * 2 * 3 * 5 + 4.0 * (2 * 5 + 5 * 3 + 2 * 3));
}

static int same_kernel(const hb_gate_cand *a, const hb_gate_cand *b)
{
    return a->c.op == b->c.op && a->c.dtype == b->c.dtype && a->c.mode == b->c.mode && !strcmp(a->backend, b->backend) &&
           !strcmp(a->impl, b->impl);
}
static int same_route(const hb_gate_cand *a, const hb_gate_cand *b)
{
    return a->c.mode == b->c.mode && a->c.route == b->c.route && !strcmp(a->backend, b->backend);
}

static void test_rule(void **state)
{
    (void)state;
    for (int trial = 0; trial < 20; trial++) {
        size_t n = (size_t)pick(1, 600);
        hb_gate_cand *v = malloc(n * sizeof *v);
        assert_non_null(v);
        for (size_t i = 0; i < n; i++) v[i] = random_cand();
        /* some exact duplicates in cost, to check that the first listed among equals is kept */
        for (size_t i = 1; i < n; i += 7) { hb_gate_cand d = v[i - 1]; snprintf(d.c.name, sizeof d.c.name, "dup.%zu", i); v[i] = d; }
        hb_gate_path *p = (hb_gate_path *)0x1;
        size_t np = 12345;
        assert_int_equal(hb_gate_select(v, n, 0, 0, &p, &np), HB_OK);
        /* independent tally: the distinct kernel and route keys, and per key the first cheapest */
        size_t nk = 0, nr = 0;
        for (size_t i = 0; i < n; i++) {
            int seen_k = 0, seen_r = 0;
            for (size_t j = 0; j < i; j++) { seen_k |= same_kernel(&v[j], &v[i]); seen_r |= same_route(&v[j], &v[i]); }
            nk += !seen_k;
            nr += !seen_r;
        }
        assert_int_equal(np, nk + nr);
        size_t covered = 0;
        for (size_t k = 0; k < np; k++) {
            const hb_gate_cand *w = &v[p[k].cand];
            int route = p[k].kind == HB_GATE_ROUTE;
            assert_int_equal(p[k].kind, k < nk ? HB_GATE_KERNEL : HB_GATE_ROUTE);
            assert_false(p[k].over_cut);
            size_t members = 0, best = n;
            double bc = 0;
            for (size_t i = 0; i < n; i++) {
                if (!(route ? same_route(&v[i], w) : same_kernel(&v[i], w))) continue;
                members++;
                double c = hb_op_flops(v[i].c.op, &v[i].c.shape) + hb_case_bytes(&v[i].c);
                if (best == n || c < bc) { best = i; bc = c; }
            }
            assert_int_equal(p[k].ncands, members);
            assert_int_equal(p[k].cand, best); /* the cheapest, the first listed among equals */
            assert_true(p[k].cost == bc);
            for (size_t j = 0; j < k; j++) /* each path once */
                if (p[j].kind == p[k].kind) assert_false(route ? same_route(&v[p[j].cand], w) : same_kernel(&v[p[j].cand], w));
            covered += members;
        }
        assert_int_equal(covered, 2 * n); /* every candidate is in one kernel path and one route path */
        free(p);
        free(v);
    }
    hb_gate_path *p = (hb_gate_path *)0x1;
    size_t np = 7;
    assert_int_equal(hb_gate_select(NULL, 0, 0, 0, &p, &np), HB_OK);
    assert_null(p);
    assert_int_equal(np, 0);
}

static void test_cut(void **state)
{
    (void)state;
    size_t n = 400;
    hb_gate_cand *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++) v[i] = random_cand();
    hb_gate_path *all, *cut;
    size_t na, nc;
    assert_int_equal(hb_gate_select(v, n, 0, 0, &all, &na), HB_OK);
    const double max = 2e6;
    assert_int_equal(hb_gate_select(v, n, 0, max, &cut, &nc), HB_OK);
    assert_int_equal(na, nc);
    size_t over = 0;
    for (size_t k = 0; k < nc; k++) {
        assert_int_equal(cut[k].cand, all[k].cand); /* the cut keeps or drops a path, never picks another case */
        assert_int_equal(cut[k].over_cut, cut[k].cost > max);
        over += cut[k].over_cut;
    }
    assert_true(over > 0 && over < nc); /* the sizes drawn span the cut */
    free(all);
    free(cut);
    free(v);
}

/* the floor: per path the cheapest candidate of cost >= min, else the costliest; the first among equals */
static void test_floor(void **state)
{
    (void)state;
    for (int trial = 0; trial < 10; trial++) {
        size_t n = (size_t)pick(1, 400);
        hb_gate_cand *v = malloc(n * sizeof *v);
        assert_non_null(v);
        for (size_t i = 0; i < n; i++) v[i] = random_cand();
        const double min = (double)pick(1000, 3000000);
        hb_gate_path *p;
        size_t np;
        assert_int_equal(hb_gate_select(v, n, min, 0, &p, &np), HB_OK);
        for (size_t k = 0; k < np; k++) {
            const hb_gate_cand *w = &v[p[k].cand];
            int route = p[k].kind == HB_GATE_ROUTE;
            size_t above = n, below = n;
            double ca = 0, cb = 0;
            for (size_t i = 0; i < n; i++) {
                if (!(route ? same_route(&v[i], w) : same_kernel(&v[i], w))) continue;
                double c = hb_gate_cost(&v[i].c);
                if (c >= min && (above == n || c < ca)) { above = i; ca = c; }
                if (c < min && (below == n || c > cb)) { below = i; cb = c; }
            }
            assert_int_equal(p[k].cand, above < n ? above : below);
        }
        free(p);
        free(v);
    }
}

static void test_write_read(void **state)
{
    (void)state;
    for (int trial = 0; trial < 5; trial++) {
        size_t n = (size_t)pick(50, 300);
        hb_gate_cand *v = malloc(n * sizeof *v);
        assert_non_null(v);
        for (size_t i = 0; i < n; i++) v[i] = random_cand();
        hb_gate_path *p;
        size_t np;
        const double max = 5e6;
        assert_int_equal(hb_gate_select(v, n, 0, max, &p, &np), HB_OK);
        char path[] = "/tmp/hb_gatelist_XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        FILE *f = fdopen(fd, "w");
        long sections = hb_gate_list_write(f, v, p, np, "a header\nof two lines");
        assert_int_equal(fclose(f), 0);
        assert_true(sections > 0);
        hb_item_list items = {0};
        char err[512];
        assert_int_equal(hb_workload_load(path, &items, err, sizeof err), HB_OK);
        assert_int_equal(items.n, (size_t)sections);
        /* every kept path's case is one item, with the path's mode; quick; f32 or f16 as the path's */
        for (size_t k = 0; k < np; k++) {
            const hb_case *c = &v[p[k].cand].c;
            size_t found = 0;
            for (size_t i = 0; i < items.n; i++) {
                const hb_item *it = &items.v[i];
                if (it->c.op != c->op || memcmp(&it->c.shape, &c->shape, sizeof c->shape) || it->dtype_mask != 1u << c->dtype ||
                    it->route_mask != 1u << c->route)
                    continue;
                found++;
                assert_true(it->c.quick);
                if (!p[k].over_cut) assert_true(it->mode_mask & (1u << c->mode));
            }
            if (p[k].over_cut) {
                /* an over-cut path's case is in the list only where a kept path chose the same case */
                int kept_same = 0;
                for (size_t j = 0; j < np; j++) {
                    const hb_case *d = &v[p[j].cand].c;
                    kept_same |= !p[j].over_cut && d->op == c->op && !memcmp(&d->shape, &c->shape, sizeof c->shape) &&
                                 d->dtype == c->dtype && d->route == c->route;
                }
                assert_int_equal(found, (size_t)kept_same);
            } else assert_int_equal(found, 1);
        }
        /* every item's modes are exactly those of its kept paths */
        for (size_t i = 0; i < items.n; i++) {
            const hb_item *it = &items.v[i];
            unsigned modes = 0;
            for (size_t k = 0; k < np; k++) {
                const hb_case *c = &v[p[k].cand].c;
                if (!p[k].over_cut && it->c.op == c->op && !memcmp(&it->c.shape, &c->shape, sizeof c->shape) &&
                    it->dtype_mask == 1u << c->dtype && it->route_mask == 1u << c->route)
                    modes |= 1u << c->mode;
            }
            assert_int_equal(it->mode_mask, modes);
        }
        hb_item_list_free(&items);
        unlink(path);
        free(p);
        free(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cost),
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_cut),
        cmocka_unit_test(test_floor),
        cmocka_unit_test(test_write_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
