/*
 * test_shape_check.c - checked size arithmetic and refused shape keys (issue 18, item 5):
 *  - hb_shape_parse: Ki/Mi/Gi suffixes multiplied with an overflow check (n=17179869185Gi,
 *    n=9223372036854775807Ki refused, not wrapped), negatives with a suffix refused, 2^N bounds;
 *  - a 0 for a field that has a default (g, sh, kv_heads, batch, ...) refused instead of replaced;
 *  - hb_shape_normalize and the element counts: products that overflow int64 saturate and are
 *    refused as "absurd size", never wrapped into a small positive size;
 *  - workload files and benchdnn lists: the same inputs refused with file:line, a NUL byte refused;
 *  - the conv2d layout field: nchw/nhwc by name, anything else refused (file:line in a workload).
 * Run from the repository root (make test does).
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

#include "core/hybench.h"
#include "workload/benchdnn.h"
#include "workload/workload.h"

static void parse_refused(const char *text, const char *reason)
{
    hb_shape s;
    char err[512] = "";
    hb_status st = hb_shape_parse(text, &s, err, sizeof err);
    if (st != HB_EINVAL) fail_msg("\"%s\" accepted (n=%lld)", text, (long long)s.n);
    if (!strstr(err, reason)) fail_msg("\"%s\": error \"%s\" lacks \"%s\"", text, err, reason);
}

static void test_suffix_overflow(void **state)
{
    (void)state;
    parse_refused("n=17179869185Gi", "n=17179869185Gi overflows");
    parse_refused("n=9223372036854775807Ki", "n=9223372036854775807Ki overflows");
    parse_refused("m=8 n=8796093022208Mi k=1", "n=8796093022208Mi overflows");
    parse_refused("n=-1Ki", "negative size: n=-1Ki");
    parse_refused("n=-9223372036854775807Gi", "negative size");
    parse_refused("n=2^63", "bad exponent");
    parse_refused("n=2^99999999999999999999", "bad exponent");
    parse_refused("n=99999999999999999999", "bad number");
    /* the largest values that fit are still parsed exactly */
    hb_shape s;
    char err[256];
    assert_int_equal(hb_shape_parse("n=8589934591Gi", &s, err, sizeof err), HB_OK);
    assert_int_equal(s.n, 8589934591LL << 30);
    assert_int_equal(hb_shape_parse("n=16Ki m=2Mi k=3Gi c=2^62", &s, err, sizeof err), HB_OK);
    assert_int_equal(s.n, 16384);
    assert_int_equal(s.m, 2 << 20);
    assert_int_equal(s.k, 3LL << 30);
    assert_int_equal(s.c, 1LL << 62);
}

static void test_zero_refused(void **state)
{
    (void)state;
    static const char *const keys[] = {"g", "sh", "sw", "dh", "dw", "kw", "w", "batch", "kv_heads", "kv_seq"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        char text[128], want[64];
        snprintf(text, sizeof text, "batch=1 c=4 h=8 kh=3 oc=4 %s=0", keys[i]);
        if (!strcmp(keys[i], "batch")) snprintf(text, sizeof text, "c=4 h=8 kh=3 oc=4 batch=0");
        snprintf(want, sizeof want, "%s=0 is meaningless", keys[i]);
        parse_refused(text, want);
    }
    /* 0 is a value for padding and causal */
    hb_shape s;
    char err[256];
    assert_int_equal(hb_shape_parse("c=4 h=8 kh=3 oc=4 ph=0 pw=0", &s, err, sizeof err), HB_OK);
    assert_int_equal(hb_shape_parse("heads=4 seq=8 head_dim=8 causal=0", &s, err, sizeof err), HB_OK);
    /* fields that need a value > 0 are refused by normalize, naming the op */
    assert_int_equal(hb_shape_parse("n=0", &s, err, sizeof err), HB_OK);
    assert_int_equal(hb_shape_normalize(HB_OP_RELU, &s, err, sizeof err), HB_EINVAL);
    assert_non_null(strstr(err, "relu needs n > 0"));
}

static void normalize_refused(hb_op op, hb_shape s, const char *reason)
{
    char err[256] = "";
    hb_status st = hb_shape_normalize(op, &s, err, sizeof err);
    if (st != HB_EINVAL) fail_msg("%s accepted", hb_op_get(op)->name);
    if (!strstr(err, reason)) fail_msg("error \"%s\" lacks \"%s\"", err, reason);
}

static void test_product_overflow(void **state)
{
    (void)state;
    /* each field within 2^34, their products far beyond int64 */
    const int64_t big = 1LL << 34;
    normalize_refused(HB_OP_MATMUL, (hb_shape){.m = big, .n = big, .k = big}, "absurd size");
    normalize_refused(HB_OP_BMM, (hb_shape){.batch = big, .m = big, .n = big, .k = 4}, "absurd size");
    normalize_refused(HB_OP_CONV2D, (hb_shape){.batch = big, .c = big, .h = big, .kh = 1, .oc = big}, "absurd size");
    normalize_refused(HB_OP_ATTENTION, (hb_shape){.batch = big, .heads = big, .seq = big, .head_dim = big}, "absurd size");
    normalize_refused(HB_OP_SUM, (hb_shape){.rows = big, .cols = big}, "absurd size");
    /* a field beyond the limit by itself */
    normalize_refused(HB_OP_ADD, (hb_shape){.n = INT64_MAX}, "absurd size: n=");
    normalize_refused(HB_OP_CONV2D, (hb_shape){.c = 4, .h = 8, .kh = 3, .oc = 4, .ph = INT64_MAX / 2}, "absurd size");
    normalize_refused(HB_OP_CONV2D, (hb_shape){.c = 4, .h = 8, .kh = INT64_MAX, .oc = 4}, "absurd size");
    /* element counts saturate instead of wrapping */
    hb_shape s = {.m = big * 4, .n = big * 4, .k = big * 4, .batch = big * 4};
    assert_int_equal(hb_op_input_elems(HB_OP_MATMUL, &s, 0), INT64_MAX);
    assert_int_equal(hb_op_output_elems(HB_OP_BMM, &s), INT64_MAX);
    /* an output dimension: 1 input row, 2-wide dilated kernel, stride 2 has no output */
    hb_shape p = {.batch = 1, .c = 1, .h = 1, .w = 1, .kh = 2, .kw = 2, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .g = 1};
    assert_true(hb_shape_oh(&p) <= 0);
}

/* Write text (len bytes, may hold NUL) to a temporary file; returns its path (static buffer). */
static const char *tmpfile_with(const char *suffix, const char *text, size_t len)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/hb_shapeXXXXXX%s", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

static void wl_refused(const char *text, size_t len, int line, const char *reason)
{
    const char *path = tmpfile_with(".ini", text, len);
    hb_item_list l = {0};
    char err[1024] = "", want[128];
    hb_status st = hb_workload_load(path, &l, err, sizeof err);
    unlink(path);
    if (st != HB_EINVAL) fail_msg("workload accepted: %s", text);
    snprintf(want, sizeof want, "%s:%d: ", path, line);
    if (strncmp(err, want, strlen(want))) fail_msg("error \"%s\" does not start with \"%s\"", err, want);
    if (!strstr(err, reason)) fail_msg("error \"%s\" lacks \"%s\"", err, reason);
    assert_int_equal(l.n, 0);
    hb_item_list_free(&l);
}

#define WL(s, line, reason) wl_refused(s, sizeof(s) - 1, line, reason)

static void test_workload_files(void **state)
{
    (void)state;
    WL("[a]\nop = add\nshape = n=17179869185Gi\n", 3, "n=17179869185Gi overflows");
    WL("[a]\nop = add\nshape = n=9223372036854775807Ki\n", 3, "n=9223372036854775807Ki overflows");
    WL("[a]\nop = conv2d\nshape = c=4 h=8 kh=3 oc=4 g=0\n", 3, "g=0 is meaningless");
    WL("[a]\nop = conv2d\nshape = c=4 h=8 kh=3 oc=4 sh=0\n", 3, "sh=0 is meaningless");
    WL("[a]\nop = attention\nshape = heads=4 kv_heads=0 seq=8 head_dim=8\n", 3, "kv_heads=0 is meaningless");
    WL("[a]\nop = matmul\nsweep = m=8..64*2 batch=0 n=8 k=8\n", 3, "batch=0 is meaningless");
    WL("[a]\nop = matmul\nshape = m=16Gi n=16Gi k=16Gi\n", 3, "absurd size");
    /* a NUL byte would have cut "n=16" to "n=1" */
    WL("[a]\nop = add\nshape = n=1\0" "6\n", 3, "NUL byte");
    WL("[a]\nop\0 = add\nshape = n=16\n", 2, "NUL byte");
}

/* conv2d layout: by name (nchw, nhwc), printed only when nhwc; anything else refused, in a workload
 * with file:line; pooling and other ops refuse layout=nhwc. */
static void test_layout(void **state)
{
    (void)state;
    hb_shape s;
    char err[256], buf[256];
    assert_int_equal(hb_shape_parse("batch=2 c=8 h=6 oc=4 kh=3 ph=1 layout=nhwc", &s, err, sizeof err), HB_OK);
    assert_int_equal(s.layout, HB_LAYOUT_NHWC);
    assert_int_equal(s.c, 8);
    assert_int_equal(s.oc, 4);
    assert_int_equal(hb_shape_normalize(HB_OP_CONV2D, &s, err, sizeof err), HB_OK);
    hb_shape_format(HB_OP_CONV2D, &s, buf, sizeof buf);
    assert_non_null(strstr(buf, " layout=nhwc"));
    hb_shape back;
    assert_int_equal(hb_shape_parse(buf, &back, err, sizeof err), HB_OK); /* the printed form parses back */
    assert_int_equal(hb_shape_normalize(HB_OP_CONV2D, &back, err, sizeof err), HB_OK);
    assert_memory_equal(&back, &s, sizeof s);
    /* FLOPs and bytes do not depend on the layout */
    hb_shape nchw = s;
    nchw.layout = HB_LAYOUT_NCHW;
    assert_true(hb_op_flops(HB_OP_CONV2D, &s) == hb_op_flops(HB_OP_CONV2D, &nchw));
    assert_true(hb_op_bytes(HB_OP_CONV2D, &s, 4) == hb_op_bytes(HB_OP_CONV2D, &nchw, 4));
    assert_int_equal(hb_op_output_elems(HB_OP_CONV2D, &s), hb_op_output_elems(HB_OP_CONV2D, &nchw));
    /* nchw is the default: parsed to 0 and not printed (case keys of NCHW cases unchanged) */
    assert_int_equal(hb_shape_parse("layout=nchw c=8 h=6 oc=4 kh=3", &s, err, sizeof err), HB_OK);
    assert_int_equal(s.layout, HB_LAYOUT_NCHW);
    assert_int_equal(s.c, 8);
    assert_int_equal(hb_shape_normalize(HB_OP_CONV2D, &s, err, sizeof err), HB_OK);
    hb_shape_format(HB_OP_CONV2D, &s, buf, sizeof buf);
    assert_null(strstr(buf, "layout"));
    assert_string_equal(hb_layout_name(HB_LAYOUT_NHWC), "nhwc");
    assert_string_equal(hb_layout_name(7), "?");
    parse_refused("c=8 h=6 oc=4 kh=3 layout=1", "bad layout \"1\"");
    parse_refused("c=8 h=6 oc=4 kh=3 layout=NHWC", "bad layout");
    parse_refused("c=8 h=6 oc=4 kh=3 layout=nhwcx", "bad layout \"nhwcx\"");
    parse_refused("c=8 h=6 oc=4 kh=3 layout=nhw", "bad layout");
    parse_refused("c=8 h=6 oc=4 kh=3 layout=", "bad layout");
    parse_refused("c=8 h=6 oc=4 kh=3 layout=nhwc-1", "bad layout");
    /* a layout value out of range (only a struct can hold one) and layout on other ops */
    assert_int_equal(hb_shape_parse("c=8 h=6 oc=4 kh=3", &s, err, sizeof err), HB_OK);
    s.layout = HB_LAYOUT_COUNT;
    assert_int_equal(hb_shape_normalize(HB_OP_CONV2D, &s, err, sizeof err), HB_EINVAL);
    assert_non_null(strstr(err, "layout is nchw, nhwc or bshd"));
    s.layout = HB_LAYOUT_BSHD; /* attention's, not conv2d's */
    assert_int_equal(hb_shape_normalize(HB_OP_CONV2D, &s, err, sizeof err), HB_EINVAL);
    assert_non_null(strstr(err, "layout=bshd is not one of its layouts"));
    assert_int_equal(hb_shape_parse("c=8 h=6 kh=3 layout=nhwc", &s, err, sizeof err), HB_OK);
    assert_int_equal(hb_shape_normalize(HB_OP_MAXPOOL, &s, err, sizeof err), HB_EINVAL);
    assert_non_null(strstr(err, "conv2d: nchw or nhwc"));
    WL("[a]\nop = conv2d\nshape = c=4 h=8 kh=3 oc=4 layout=chwn\n", 3, "bad layout \"chwn\"");
    WL("[a]\nop = conv2d\nsweep = c=4..16*2 h=8 kh=3 oc=4 layout=2\n", 3, "bad layout \"2\"");
    WL("[a]\nop = maxpool\n\nshape = c=4 h=8 kh=3 layout=nhwc\n", 4, "layout=nhwc is not one of its layouts");
    WL("[a]\nop = matmul\nshape = m=4 n=4 k=4 layout=nhwc\n", 3, "layout=nhwc is not one of its layouts");
    WL("[a]\nop = conv2d\nsweep = layout=1..1+1 c=4 h=8 kh=3 oc=4\n", 3, "layout is a name");
    WL("[a]\nop = conv2d\nshape = c=4 h=8 kh=3 oc=4\nquick = layout=nhcw\n", 4, "bad layout");
    WL("[a]\nop = conv2d\nshape = c=4 h=8 kh=3 oc=4\nquick = layout=nhwc\n", 4, "selects no case");
    /* quick by layout name selects the NHWC case only */
    {
        static const char text[] = "[a]\nop = conv2d\nshape = c=4 h=8 kh=3 oc=4\nshape = c=4 h=8 kh=3 oc=4 layout=nhwc\nquick = layout=nhwc\n";
        const char *path = tmpfile_with(".ini", text, sizeof text - 1);
        hb_item_list l = {0};
        assert_int_equal(hb_workload_load(path, &l, err, sizeof err), HB_OK);
        unlink(path);
        assert_int_equal(l.n, 2);
        assert_int_equal(l.v[0].c.quick, 0);
        assert_int_equal(l.v[1].c.quick, 1);
        assert_int_equal(l.v[1].c.shape.layout, HB_LAYOUT_NHWC);
        hb_item_list_free(&l);
    }
}

static void test_benchdnn_nul(void **state)
{
    (void)state;
    static const char text[] = "mb1ic16ih8oc16oh8kh3ph1n\"a\"\nmb1ic16ih8oc16\0oh8kh3ph1n\"b\"\n";
    const char *path = tmpfile_with("", text, sizeof text - 1);
    hb_item_list l = {0};
    char err[1024] = "", want[128];
    hb_status st = hb_benchdnn_load(HB_BATCH_CONV, path, NULL, &l, err, sizeof err);
    unlink(path);
    assert_int_equal(st, HB_EINVAL);
    snprintf(want, sizeof want, "%s:2: NUL byte", path);
    if (strncmp(err, want, strlen(want))) fail_msg("error \"%s\" does not start with \"%s\"", err, want);
    hb_item_list_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suffix_overflow),
        cmocka_unit_test(test_zero_refused),
        cmocka_unit_test(test_product_overflow),
        cmocka_unit_test(test_workload_files),
        cmocka_unit_test(test_benchdnn_nul),
        cmocka_unit_test(test_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
