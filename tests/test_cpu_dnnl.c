/*
 * test_cpu_dnnl.c - conv2d of the cpu backend through oneDNN (kernels/cpu/cpu_dnnl.c) against the f64
 * reference (kernels/cpu_ref/ref.c), through the backend's hooks: random inputs in [-1, 1), output
 * poisoned with NaN, run, ||out - ref|| / ||ref|| under the harness's conv2d tolerance and every
 * element finite. Each shape (NCHW and NHWC; groups, depthwise, 1x1, strides, padding, dilation,
 * channel counts that are and are not multiples of oneDNN's 8-channel blocks) is run with
 * HB_CPU_CONV forcing each oneDNN candidate (plain, wany, any), then oneDNN's fastest, then the probe
 * (auto), each twice (the second call on new buffers and data takes the cached primitive). A forced
 * candidate must report impl "onednn:..." unless its conv_choice says oneDNN has no such
 * implementation, and every shape must run on oneDNN for at least one candidate. Without oneDNN in
 * the build the oneDNN tests are skipped and the auto run must say why in conv_choice.
 */
#include <math.h>
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


static const char *const shapes[] = {
    "batch=2 c=8 h=15 w=13 oc=16 kh=3 ph=1",
    "batch=3 c=5 h=16 w=17 oc=7 kh=3 ph=1",                                   /* channels not in blocks of 8 */
    "batch=1 c=4 h=19 w=18 oc=5 kh=5 kw=3 sh=2 sw=3 ph=2 pw=1 dh=2 dw=1",     /* stride, padding, dilation */
    "batch=2 c=16 h=12 w=11 oc=24 kh=3 sh=2 ph=1 dh=2 dw=2",                 /* the floor in oh, ow */
    "batch=2 c=32 h=12 w=12 oc=32 kh=3 ph=1 g=2",                            /* groups of 16 */
    "batch=2 c=12 h=10 w=9 oc=18 kh=3 ph=1 g=3",                             /* groups of 4 -> 6 */
    "batch=4 c=16 h=9 w=9 oc=16 kh=3 ph=1 g=16",                             /* depthwise */
    "batch=2 c=16 h=7 w=9 oc=24 kh=1",                                        /* 1x1 */
    "batch=2 c=24 h=14 w=14 oc=12 kh=1 sh=2",                                 /* 1x1 stride 2 */
    "batch=1 c=3 h=23 w=23 oc=8 kh=7 sh=2 ph=3",                              /* ResNet stem */
    "batch=2 c=8 h=15 w=13 oc=16 kh=3 ph=1 layout=nhwc",
    "batch=3 c=5 h=16 w=17 oc=7 kh=3 ph=1 layout=nhwc",
    "batch=1 c=4 h=19 w=18 oc=5 kh=5 kw=3 sh=2 sw=3 ph=2 pw=1 dh=2 dw=1 layout=nhwc",
    "batch=2 c=16 h=12 w=11 oc=24 kh=3 sh=2 ph=1 dh=2 dw=2 layout=nhwc",
    "batch=2 c=32 h=12 w=12 oc=32 kh=3 ph=1 g=2 layout=nhwc",
    "batch=2 c=12 h=10 w=9 oc=18 kh=3 ph=1 g=3 layout=nhwc",
    "batch=4 c=16 h=9 w=9 oc=16 kh=3 ph=1 g=16 layout=nhwc",
    "batch=2 c=16 h=7 w=9 oc=24 kh=1 layout=nhwc",
    "batch=2 c=24 h=14 w=14 oc=12 kh=1 sh=2 layout=nhwc",
    "batch=1 c=3 h=23 w=23 oc=8 kh=7 sh=2 ph=3 layout=nhwc",
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

static hb_case make_case(const char *shape) { return hb_test_case(HB_OP_CONV2D, shape); }

/* One checked call of c (test_run.h) with inputs from seed; returns the case_info's impl and
 * conv_choice (caller frees *impl, *choice). */
static void run_check(const hb_case *c, const char *label, uint64_t seed, char **impl, char **choice)
{
    json_t *o = hb_test_run_checked(&g_cpu, c, seed, label);
    const char *im = json_string_value(json_object_get(o, "impl"));
    const char *ch = json_string_value(json_object_get(o, "conv_choice"));
    *impl = strdup(im ? im : "");
    *choice = strdup(ch ? ch : "");
    json_decref(o);
}

static int have_dnnl(void)
{
    char v[96];
    return strcmp(conv_dnnl_version(v, sizeof v), "not in this build") != 0;
}

/* Each forced candidate, oneDNN's fastest and the probe, twice per shape. */
static void test_dnnl_conv(void **state)
{
    (void)state;
    if (!have_dnnl())
        skip();
    static const char *const forces[] = { "onednn-plain", "onednn-wany", "onednn-any", "onednn", "auto" };
    for (int s = 0; s < NSHAPES; s++) {
        const hb_case c = make_case(shapes[s]);
        int on_dnnl = 0;
        for (size_t f = 0; f < sizeof forces / sizeof forces[0]; f++) {
            setenv("HB_CPU_CONV", forces[f], 1);
            for (int rep = 0; rep < 2; rep++) {
                char label[300], *impl, *choice;
                snprintf(label, sizeof label, "%s [%s #%d]", shapes[s], forces[f], rep);
                run_check(&c, label, 7000u + 31u * (uint64_t)s + (uint64_t)rep, &impl, &choice);
                const int dn = !strncmp(impl, "onednn:", 7);
                if (f < 3) { /* a forced candidate runs on oneDNN unless it has none for the shape */
                    if (!dn && !strstr(choice, "oneDNN"))
                        fail_msg("%s: impl %s without a reason (%s)", label, impl, choice);
                    on_dnnl |= dn;
                }
                if (f == 4 && !strstr(choice, "probe best-of:") && !strstr(choice, "oneDNN"))
                    fail_msg("%s: no probe figures in conv_choice (%s)", label, choice);
                free(impl);
                free(choice);
            }
        }
        if (!on_dnnl)
            fail_msg("%s: no oneDNN candidate ran", shapes[s]);
    }
    unsetenv("HB_CPU_CONV");
}

/* The probe's choice is cached per shape: impl and conv_choice stay the same over calls. */
static void test_choice_cached(void **state)
{
    (void)state;
    unsetenv("HB_CPU_CONV");
    const hb_case c = make_case("batch=1 c=32 h=14 w=14 oc=32 kh=3 ph=1");
    char *i1, *c1, *i2, *c2;
    run_check(&c, "cached #0", 11, &i1, &c1);
    run_check(&c, "cached #1", 12, &i2, &c2);
    assert_string_equal(i1, i2);
    assert_string_equal(c1, c2);
    if (!have_dnnl())
        assert_non_null(strstr(c1, "not in this build"));
    free(i1);
    free(c1);
    free(i2);
    free(c2);
}

/* HB_CPU_CONV=own: the own path, whatever was cached for the shape. */
static void test_force_own(void **state)
{
    (void)state;
    setenv("HB_CPU_CONV", "own", 1);
    const hb_case c = make_case("batch=1 c=32 h=14 w=14 oc=32 kh=3 ph=1");
    char *impl, *choice;
    run_check(&c, "own", 13, &impl, &choice);
    assert_int_equal(strncmp(impl, "onednn", 6) != 0, 1);
    assert_non_null(strstr(choice, "forced"));
    free(impl);
    free(choice);
    unsetenv("HB_CPU_CONV");
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
        cmocka_unit_test(test_dnnl_conv),
        cmocka_unit_test(test_choice_cached),
        cmocka_unit_test(test_force_own),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
