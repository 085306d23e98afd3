/* test_clock.c - the host clock probe (harness/measure/clockprobe.c): range check, a valid reading on this
 * machine, and its agreement with the kernel's frequency (or, in a VM whose kernel only reports the
 * nominal TSC frequency in /proc/cpuinfo, an explanation of why they differ). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "measure/measure.h"

/* The classification itself: [0.2, 7.0] GHz is a clock; 9.5 GHz (what the old add chain read on a
 * 2.1 GHz Xeon), 0, negatives, NAN and infinities are not. */
static void test_range(void **state)
{
    (void)state;
    assert_false(hb_clock_ghz_valid(9.5));
    assert_false(hb_clock_ghz_valid(10.7));
    assert_false(hb_clock_ghz_valid(7.01));
    assert_false(hb_clock_ghz_valid(0.19));
    assert_false(hb_clock_ghz_valid(0));
    assert_false(hb_clock_ghz_valid(-3));
    assert_false(hb_clock_ghz_valid(NAN));
    assert_false(hb_clock_ghz_valid(INFINITY));
    assert_true(hb_clock_ghz_valid(0.2));
    assert_true(hb_clock_ghz_valid(2.1));
    assert_true(hb_clock_ghz_valid(6.2));
    assert_true(hb_clock_ghz_valid(7.0));
}

/* The old two-pointer API still works and reads a physical clock on every CPU. */
static void test_probe_simple(void **state)
{
    (void)state;
    double lo = 0, hi = 0;
    int n = hb_clock_probe(&lo, &hi);
    print_message("hb_clock_probe: %d CPUs, %.3f .. %.3f GHz\n", n, lo, hi);
    assert_true(n >= 1);
    assert_true(hb_clock_ghz_valid(lo) && hb_clock_ghz_valid(hi) && lo <= hi);
}

static void test_probe_ex_and_kernel(void **state)
{
    (void)state;
    hb_clock_reading r;
    int n = hb_clock_probe_ex(&r);
    print_message("probe %.3f..%.3f GHz, kernel %.3f (max %.3f, %s), perf %.3f GHz (%.2f cycles/imul), why '%s'\n",
                  r.ghz_min, r.ghz_max, r.kernel_ghz, r.kernel_max_ghz, r.kernel_src, r.perf_ghz,
                  r.perf_cycles_per_imul, r.why);
    assert_int_equal(n, r.nvalid);
    assert_true(r.ncpus >= 1);
    assert_true(r.valid);
    assert_string_equal(r.why, "");
    assert_true(hb_clock_ghz_valid(r.ghz_min) && hb_clock_ghz_valid(r.ghz_max));
    if (isfinite(r.perf_ghz)) { /* the cycle counter checks the latency table where it is readable */
        assert_true(fabs(r.perf_ghz / r.ghz_max - 1) <= 0.15);
        assert_true(fabs(r.perf_cycles_per_imul - 3) <= 0.3);
    }
    double mx = 0;
    double k0 = hb_kernel_cpu_ghz(0, &mx);
    assert_true(isfinite(k0)); /* every Linux x86 has cpufreq or "cpu MHz" */
    assert_true(isnan(hb_kernel_cpu_ghz(-1, NULL)));
    assert_true(isnan(hb_kernel_cpu_ghz(100000, NULL)));
    assert_true(hb_clock_ghz_valid(r.kernel_ghz));
    int agrees = fabs(r.ghz_max / r.kernel_ghz - 1) <= 0.15 ||
                 (isfinite(r.kernel_max_ghz) && fabs(r.ghz_max / r.kernel_max_ghz - 1) <= 0.15);
    if (!agrees) {
        /* Only acceptable where the kernel has no cpufreq and /proc/cpuinfo shows the nominal TSC
         * frequency (this VM): then the core runs at or above it (turbo), never far below it. */
        assert_string_equal(r.kernel_src, "/proc/cpuinfo");
        assert_true(isnan(r.kernel_max_ghz));
        assert_true(r.ghz_max >= 0.85 * r.kernel_ghz);
    }
}

static void test_selfcheck_json(void **state)
{
    (void)state;
    hb_rec_host_clock h;
    hb_clock_reading r;
    char whybuf[400];
    hb_rec_clear(&hb_rec_host_clock_table, &h);
    assert_int_equal(hb_clock_selfcheck(&h, &r, whybuf, sizeof whybuf), HB_OK);
    json_t *j = hb_rec_encode(&hb_rec_host_clock_table, &h);
    assert_non_null(j);
    assert_ptr_equal(h.why, whybuf);
    assert_string_equal(h.kernel_source, r.kernel_src);
    char *s = json_dumps(j, JSON_COMPACT);
    print_message("%s\n", s);
    free(s);
    assert_string_equal(json_string_value(json_object_get(j, "method")), "imul chain");
    assert_true(json_is_true(json_object_get(j, "valid")));
    assert_true(hb_clock_ghz_valid(json_number_value(json_object_get(j, "probe_ghz"))));
    assert_true(json_is_number(json_object_get(j, "kernel_ghz")));
    assert_true(json_is_number(json_object_get(j, "kernel_max_ghz")) || json_is_null(json_object_get(j, "kernel_max_ghz")));
    assert_true(json_is_number(json_object_get(j, "perf_ghz")) || json_is_null(json_object_get(j, "perf_ghz")));
    json_t *ag = json_object_get(j, "agrees_within_15pct");
    assert_true(json_is_boolean(ag));
    const char *why = json_string_value(json_object_get(j, "why"));
    assert_non_null(why);
    if (!json_is_true(ag)) assert_non_null(strstr(why, "nominal TSC")); /* the disagreement is explained */
    /* the struct holds what was written, in the record's order of keys */
    assert_true(h.valid == 1 && h.agrees_within_15pct == json_is_true(ag) && h.cpus == (double)r.ncpus);
    assert_string_equal(json_object_iter_key(json_object_iter(j)), "probe_ghz");
    json_decref(j);
    hb_rec_release(&hb_rec_host_clock_table, &h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_probe_simple),
        cmocka_unit_test(test_probe_ex_and_kernel),
        cmocka_unit_test(test_selfcheck_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
