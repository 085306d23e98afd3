/*
 * test_benchdnn.c - harness/workload/benchdnn.c: oneDNN benchdnn problem lists as workloads.
 *  - every line of the three shipped lists (workloads/benchdnn/) parsed, each problem
 *    compared with values read off the line here by an independent scan (ic, ih, oc, oh, kh, sh,
 *    ph, name, *N); a sample asserted by hand (conv1: mb50 ic3 224x224 oc64 112x112 k7 s2 p3 ...);
 *  - benchdnn's defaults and deductions (mb 2, square promotion, 1D, output size, padding,
 *    dilation 0 = none, groups, 3D and asymmetric padding as skipped items);
 *  - broken descriptors (unknown key, missing value, bad number, trailing junk, unterminated name,
 *    duplicate key, matmul K mismatch ...) refused with the reason; broken list files refused with
 *    file:line and nothing appended; list options (--pool, --mb, --alg, --batch, --reset);
 *  - hybench run --batch specs (hb_batch_load);
 *  - a verify run of parsed problems on cpu-ref and cpu through the backends' hooks, inputs random
 *    (fixed seed), outputs poisoned with NaN, cpu against cpu-ref within the op's tolerance, and
 *    cpu-ref against loops written here for the mappings this file decides (pool padding, the
 *    weight-broadcast matmul).
 * Run from the repository root (make test does).
 */
#include <ctype.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <time.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "core/backend.h"
#include "cpu/cpu.h"
#include "cpu_ref/ref.h"
#include "workload/benchdnn.h"
#include "workload/workload.h"
#include "test_config.h"

#define SHARED "workloads/benchdnn/"

static hb_item parse_ok(hb_batch_kind k, const char *desc, const hb_batch_opts *o)
{
    hb_item it;
    char err[512] = "";
    memset(&it, 0xA5, sizeof it);
    if (hb_benchdnn_parse(k, desc, o, &it, err, sizeof err) != HB_OK) fail_msg("\"%s\": %s", desc, err);
    return it;
}

/* ---- an independent scan of a conv/pool line: the number after `key`, or -1 ---- */
static int64_t scan_key(const char *line, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = line; (p = strstr(p, key)); p++) {
        /* a key starts after a digit, '_' or the line start, and is followed by digits */
        if (p != line && !isdigit((unsigned char)p[-1]) && p[-1] != '_') continue;
        if (!isdigit((unsigned char)p[kl])) continue;
        return strtoll(p + kl, NULL, 10);
    }
    return -1;
}

static void check_list_file(const char *path, hb_batch_kind kind, size_t want_n)
{
    hb_item_list l = {0};
    char err[1024];
    if (hb_benchdnn_load(kind, path, NULL, &l, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(l.n, want_n);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    int lineno = 0;
    size_t idx = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (!*p || *p == '#') continue;
        p[strcspn(p, " \t\r\n")] = 0;
        assert_true(idx < l.n);
        const hb_item *it = &l.v[idx++];
        char src[600];
        snprintf(src, sizeof src, "%s:%d", path, lineno);
        assert_string_equal(it->c.source, src);
        assert_string_equal(it->skip, "");
        /* the same token through hb_benchdnn_parse alone gives the same problem */
        hb_item one = parse_ok(kind, p, NULL);
        assert_memory_equal(&one.c.shape, &it->c.shape, sizeof one.c.shape);
        assert_int_equal(one.c.op, it->c.op);
        /* name n"model:layer*N" */
        char *q = strstr(p, "n\"");
        if (q) {
            char nm[200];
            snprintf(nm, sizeof nm, "%s", q + 2);
            nm[strcspn(nm, "\"")] = 0;
            char *colon = strchr(nm, ':'), *star = strrchr(nm, '*');
            double w = 1;
            if (star) { w = atof(star + 1); *star = 0; }
            assert_true(it->c.weight == w);
            if (colon) {
                *colon = 0;
                assert_string_equal(it->c.model, nm);
                assert_string_equal(it->c.name, colon + 1);
            } else {
                assert_string_equal(it->c.name, nm);
            }
            *q = 0;  /* the scan below must not look into the name */
        }
        const hb_shape *s = &it->c.shape;
        if (kind == HB_BATCH_MATMUL) {
            long long a[3], b[3];
            int na = sscanf(p, "%lldx%lldx%lld:%lldx%lldx%lld", &a[0], &a[1], &a[2], &b[0], &b[1], &b[2]);
            assert_int_equal(na, 6);
            assert_int_equal(it->c.op, HB_OP_BMM);
            assert_int_equal(s->batch, a[0]);
            assert_int_equal(s->m, a[1]);
            assert_int_equal(s->k, a[2]);
            assert_int_equal(s->k, b[1]);
            assert_int_equal(s->n, b[2]);
            continue;
        }
        int64_t mb = scan_key(p, "mb"), ic = scan_key(p, "ic"), ih = scan_key(p, "ih"), iw = scan_key(p, "iw");
        int64_t oh = scan_key(p, "oh"), ow = scan_key(p, "ow"), kh = scan_key(p, "kh"), kw = scan_key(p, "kw");
        int64_t sh = scan_key(p, "sh"), sw = scan_key(p, "sw");
        assert_int_equal(s->batch, mb);
        assert_int_equal(s->c, ic);
        assert_int_equal(s->h, ih);
        assert_int_equal(s->w, iw > 0 ? iw : ih);
        assert_int_equal(s->kh, kh);
        assert_int_equal(s->kw, kw > 0 ? kw : kh);
        assert_int_equal(s->sh, sh > 0 ? sh : 1);
        assert_int_equal(s->sw, sw > 0 ? sw : (sh > 0 ? sh : 1));
        assert_int_equal(hb_shape_oh(s), oh);
        assert_int_equal(hb_shape_ow(s), ow > 0 ? ow : oh);
        assert_int_equal(s->dh, 1);
        if (kind == HB_BATCH_CONV) {
            assert_int_equal(it->c.op, HB_OP_CONV2D);
            assert_int_equal(s->oc, scan_key(p, "oc"));
            int64_t ph = scan_key(p, "ph");
            if (ph >= 0) assert_int_equal(s->ph, ph);
            assert_int_equal(s->g, 1);
        }
    }
    fclose(f);
    assert_int_equal(idx, l.n);
    hb_item_list_free(&l);
}

static void test_shared_lists_every_line(void **state)
{
    (void)state;
    check_list_file(SHARED "conv_shapes_resnet_50", HB_BATCH_CONV, 20);
    check_list_file(SHARED "pool_shapes_resnet_50", HB_BATCH_POOL, 2);
    check_list_file(SHARED "matmul_shapes_transformer", HB_BATCH_MATMUL, 4);
}

static const hb_item *find(const hb_item_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].c.name, name)) return &l->v[i];
    fail_msg("no item %s", name);
    return NULL;
}

static void test_shared_sample(void **state)
{
    (void)state;
    hb_item_list l = {0};
    char err[1024];
    assert_int_equal(hb_batch_load("conv:conv_shapes_resnet_50", &l, err, sizeof err), HB_OK);
    assert_int_equal(hb_batch_load("pool:pool_shapes_resnet_50", &l, err, sizeof err), HB_OK);
    assert_int_equal(hb_batch_load("matmul:matmul_shapes_transformer", &l, err, sizeof err), HB_OK);
    assert_int_equal(l.n, 26);
    /* conv1: mb50 ic3 224x224 oc64 112x112 k7 s2 p3 */
    const hb_item *it = find(&l, "conv1");
    const hb_shape *s = &it->c.shape;
    assert_int_equal(it->c.op, HB_OP_CONV2D);
    assert_string_equal(it->c.model, "resnet_50");
    assert_true(it->c.weight == 1);
    assert_int_equal(s->batch, 50);
    assert_int_equal(s->c, 3);
    assert_int_equal(s->h, 224);
    assert_int_equal(s->w, 224);
    assert_int_equal(s->oc, 64);
    assert_int_equal(hb_shape_oh(s), 112);
    assert_int_equal(hb_shape_ow(s), 112);
    assert_int_equal(s->kh, 7);
    assert_int_equal(s->kw, 7);
    assert_int_equal(s->sh, 2);
    assert_int_equal(s->sw, 2);
    assert_int_equal(s->ph, 3);
    assert_int_equal(s->pw, 3);
    assert_int_equal(s->dh, 1);
    assert_int_equal(s->g, 1);
    assert_true(fabs(hb_op_flops(it->c.op, s) - 2.0 * 50 * 64 * 112 * 112 * 3 * 49) < 1);
    /* res2a_branch1*4: 1x1, 56x56, 64 -> 256 */
    it = find(&l, "res2a_branch1");
    assert_true(it->c.weight == 4);
    assert_int_equal(it->c.shape.c, 64);
    assert_int_equal(it->c.shape.oc, 256);
    assert_int_equal(it->c.shape.kw, 1);
    assert_int_equal(hb_shape_ow(&it->c.shape), 56);
    /* res3a_branch1: stride 2, 56 -> 28 */
    it = find(&l, "res3a_branch1");
    assert_int_equal(it->c.shape.sh, 2);
    assert_int_equal(hb_shape_oh(&it->c.shape), 28);
    assert_int_equal(it->c.shape.oc, 512);
    it = find(&l, "res4a_branch2b");
    assert_true(it->c.weight == 6);
    assert_int_equal(it->c.shape.ph, 1);
    assert_int_equal(it->c.shape.h, 14);
    /* max_pool1: 112 -> 56 with k3 s2: benchdnn pads 0 left, 1 right; hybench 1 both sides */
    it = find(&l, "max_pool1");
    assert_int_equal(it->c.op, HB_OP_MAXPOOL);
    assert_int_equal(it->c.shape.batch, 50);
    assert_int_equal(it->c.shape.c, 64);
    assert_int_equal(it->c.shape.h, 112);
    assert_int_equal(it->c.shape.kh, 3);
    assert_int_equal(it->c.shape.sh, 2);
    assert_int_equal(it->c.shape.ph, 1);
    assert_int_equal(hb_shape_oh(&it->c.shape), 56);
    it = find(&l, "ave_pool5");
    assert_int_equal(it->c.op, HB_OP_AVGPOOL);
    assert_int_equal(it->c.shape.c, 2048);
    assert_int_equal(it->c.shape.kh, 7);
    assert_int_equal(hb_shape_oh(&it->c.shape), 1);
    it = find(&l, "matmul_shapes_transformer:7");
    assert_int_equal(it->c.op, HB_OP_BMM);
    assert_int_equal(it->c.shape.batch, 2048);
    assert_int_equal(it->c.shape.m, 40);
    assert_int_equal(it->c.shape.k, 40);
    assert_int_equal(it->c.shape.n, 64);
    hb_item_list_free(&l);
}

/* ---- defaults and deductions ---- */
static void test_defaults(void **state)
{
    (void)state;
    hb_item it = parse_ok(HB_BATCH_CONV, "ic16ih10oc8kh3", NULL);
    assert_int_equal(it.c.op, HB_OP_CONV2D);
    assert_int_equal(it.c.shape.batch, 2);  /* benchdnn's default mb */
    assert_int_equal(it.c.shape.w, 10);     /* square promotion h -> w */
    assert_int_equal(it.c.shape.kw, 3);
    assert_int_equal(it.c.shape.sh, 1);
    assert_int_equal(it.c.shape.ph, 0);
    assert_int_equal(it.c.shape.dh, 1);     /* dilation 0 = none = hybench 1 */
    assert_int_equal(it.c.shape.g, 1);
    assert_int_equal(hb_shape_oh(&it.c.shape), 8);
    assert_true(it.c.weight == 1);
    assert_string_equal(it.c.model, "");
    assert_string_equal(it.c.name, "");
    /* padding deduced from the output size */
    it = parse_ok(HB_BATCH_CONV, "mb1ic4ih10oc4oh10kh3", NULL);
    assert_int_equal(it.c.shape.ph, 1);
    assert_int_equal(it.c.shape.pw, 1);
    /* output size from dilation: benchdnn dh1 = one gap = hybench dh 2: 12 - (3-1)*2 = 8 */
    it = parse_ok(HB_BATCH_CONV, "mb1ic4ih12oc4kh3dh1", NULL);
    assert_int_equal(it.c.shape.dh, 2);
    assert_int_equal(it.c.shape.dw, 2);
    assert_int_equal(hb_shape_oh(&it.c.shape), 8);
    /* rectangular, all keys, in another order, with '_' separators */
    it = parse_ok(HB_BATCH_CONV, "oc6_ic4_g2_mb3_iw11_ih9_kw3_kh5_sw2_sh1_pw1_ph2", NULL);
    assert_int_equal(it.c.shape.g, 2);
    assert_int_equal(it.c.shape.batch, 3);
    assert_int_equal(it.c.shape.h, 9);
    assert_int_equal(it.c.shape.w, 11);
    assert_int_equal(it.c.shape.kh, 5);
    assert_int_equal(it.c.shape.kw, 3);
    assert_int_equal(hb_shape_oh(&it.c.shape), 9);
    assert_int_equal(hb_shape_ow(&it.c.shape), 6);
    /* 1D: only w given; h becomes 1 */
    it = parse_ok(HB_BATCH_CONV, "mb1ic4iw20oc4kw5", NULL);
    assert_int_equal(it.c.shape.h, 1);
    assert_int_equal(it.c.shape.kh, 1);
    assert_int_equal(it.c.shape.w, 20);
    assert_int_equal(hb_shape_ow(&it.c.shape), 16);
    /* 3D: listed, skipped with the reason */
    it = parse_ok(HB_BATCH_CONV, "mb1ic4id8oc4kd3n\"net:c3d\"", NULL);
    assert_non_null(strstr(it.skip, "3D"));
    assert_string_equal(it.c.name, "c3d");
    /* asymmetric padding that hybench cannot express: output 9 from 8 with k2 p0 */
    it = parse_ok(HB_BATCH_CONV, "mb1ic4ih8oc4oh9kh2ph0", NULL);
    assert_non_null(strstr(it.skip, "asymmetric padding"));
    /* mb override, model override, weight multiplier */
    hb_batch_opts o = {.mb = 5, .model = "m2", .weight = 3};
    it = parse_ok(HB_BATCH_CONV, "mb50ic4ih8oc4kh3n\"a:b*2\"", &o);
    assert_int_equal(it.c.shape.batch, 5);
    assert_string_equal(it.c.model, "m2");
    assert_string_equal(it.c.name, "b");
    assert_true(it.c.weight == 6);
    /* pooling: algorithm by name, explicit, avg_p skipped */
    it = parse_ok(HB_BATCH_POOL, "ic4ih8kh2sh2n\"x:ave_pool\"", NULL);
    assert_int_equal(it.c.op, HB_OP_AVGPOOL);
    it = parse_ok(HB_BATCH_POOL, "ic4ih8kh2sh2n\"avgish\"", NULL);
    assert_int_equal(it.c.op, HB_OP_AVGPOOL);
    it = parse_ok(HB_BATCH_POOL, "ic4ih8kh2sh2n\"pool2\"", NULL);
    assert_int_equal(it.c.op, HB_OP_MAXPOOL);
    assert_int_equal(hb_shape_oh(&it.c.shape), 4);
    hb_batch_opts om = {.alg = HB_POOL_MAX};
    it = parse_ok(HB_BATCH_POOL, "ic4ih8kh2sh2n\"ave\"", &om);
    assert_int_equal(it.c.op, HB_OP_MAXPOOL);
    hb_batch_opts op = {.alg = HB_POOL_AVG_P};
    it = parse_ok(HB_BATCH_POOL, "ic4ih8kh2sh2", &op);
    assert_non_null(strstr(it.skip, "avg_p"));
    it = parse_ok(HB_BATCH_POOL, "ic4ih9kh3dh1", NULL);
    assert_non_null(strstr(it.skip, "dilated pooling"));
    /* matmul forms */
    it = parse_ok(HB_BATCH_MATMUL, "10x30:30x20", NULL);
    assert_int_equal(it.c.op, HB_OP_MATMUL);
    assert_int_equal(it.c.shape.m, 10);
    assert_int_equal(it.c.shape.k, 30);
    assert_int_equal(it.c.shape.n, 20);
    it = parse_ok(HB_BATCH_MATMUL, "2x3x10x30:2x3x30x20:2x3x10x20_n\"t:qk*12\"", NULL);
    assert_int_equal(it.c.op, HB_OP_BMM);
    assert_int_equal(it.c.shape.batch, 6);
    assert_string_equal(it.c.model, "t");
    assert_string_equal(it.c.name, "qk");
    assert_true(it.c.weight == 12);
    it = parse_ok(HB_BATCH_MATMUL, "1x10x30:1x30x20nplain", NULL);
    assert_int_equal(it.c.op, HB_OP_MATMUL);
    assert_string_equal(it.c.name, "plain");
    it = parse_ok(HB_BATCH_MATMUL, "3x2x10x30:1x1x30x20", NULL);  /* shared weights: one [60,30]x[30,20] */
    assert_int_equal(it.c.op, HB_OP_MATMUL);
    assert_int_equal(it.c.shape.m, 60);
    assert_string_equal(it.skip, "");
    it = parse_ok(HB_BATCH_MATMUL, "1x10x30:4x30x20", NULL);
    assert_non_null(strstr(it.skip, "broadcast"));
}

/* ---- broken descriptors ---- */
typedef struct bad_desc { hb_batch_kind k; const char *desc; const char *reason; } bad_desc;
static const bad_desc bad_descs[] = {
    {HB_BATCH_CONV, "mb2ic3ih5oc4kh3xy7", "unknown key at \"xy7\""},
    {HB_BATCH_CONV, "mb2ic3ihoc4kh3", "missing value for 'ih'"},
    {HB_BATCH_CONV, "mb2ic3ih5oc4kh", "missing value for 'kh' at the end"},
    {HB_BATCH_CONV, "mb2ic3ih-5oc4kh3", "negative value for 'ih'"},
    {HB_BATCH_CONV, "mb2ic3ih99999999999999999999oc4kh3", "out of range"},
    {HB_BATCH_CONV, "mb2ic3ih5.5oc4kh3", "unknown key at \".5oc4kh3\""},
    {HB_BATCH_CONV, "mb2ic3ih5oc4kh3n\"x\"junk", "trailing characters \"junk\""},
    {HB_BATCH_CONV, "mb2ic3ih5oc4kh3n\"open", "unterminated name"},
    {HB_BATCH_CONV, "mb2ic3ih5oc4kh3n", "empty name"},
    {HB_BATCH_CONV, "mb2ic3ih5oc4kh3n\"a*0\"", "bad repeat count"},
    {HB_BATCH_CONV, "mb2ic3ih5ih6oc4kh3", "duplicate key 'ih'"},
    {HB_BATCH_CONV, "mb2ic3oc4", "no spatial dimension"},
    {HB_BATCH_CONV, "mb2ic3ih5oc4", "ih or kh is missing"},
    {HB_BATCH_CONV, "mb2ih5oc4kh3", "ic is required"},
    {HB_BATCH_CONV, "mb2ic3ih5kh3", "oc is required"},
    {HB_BATCH_CONV, "mb0ic3ih5oc4kh3", "mb must be > 0"},
    {HB_BATCH_CONV, "mb2ic3ih5oc4kh9", "larger than the padded input"},
    {HB_BATCH_CONV, "g3mb2ic4ih5oc6kh3", "does not divide"},
    {HB_BATCH_CONV, "mb2ic3ih5oc4kh3sh0", "sh must be > 0"},
    {HB_BATCH_CONV, "mb2ic3id5ih5oc4kd3kh3", "3D problem needs both h and w"},
    {HB_BATCH_CONV, "mb100000ic100000ih100000oc4kh3", "absurd size"},
    {HB_BATCH_POOL, "mb2ic3ih5oc4kh3", "'oc' is not part of a pool descriptor"},
    {HB_BATCH_POOL, "g2mb2ic4ih5kh3", "'g' is not part of a pool descriptor"},
    {HB_BATCH_MATMUL, "10x30:31x20", "K mismatch"},
    {HB_BATCH_MATMUL, "10x30", "expected ':'"},
    {HB_BATCH_MATMUL, "10x30:", "expected a number"},
    {HB_BATCH_MATMUL, "10x30:30x20:10x21", "destination"},
    {HB_BATCH_MATMUL, "2x10x30:30x20", "dimensions"},
    {HB_BATCH_MATMUL, "10x30:30x20junk", "trailing characters"},
    {HB_BATCH_MATMUL, "10x0:0x20", "dimension 0"},
    {HB_BATCH_MATMUL, "3x10x30:2x30x20", "neither equal nor 1"},
    {HB_BATCH_MATMUL, "10x30:30x20n\"x", "unterminated name"},
    {HB_BATCH_MATMUL, "1000000x1000000:1000000x4", "absurd size"},
    {HB_BATCH_MATMUL, "", "empty descriptor"},
};

static void test_broken_descriptors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_descs / sizeof bad_descs[0]; i++) {
        const bad_desc *b = &bad_descs[i];
        hb_item it;
        char err[512];
        memset(err, 'X', sizeof err);
        err[sizeof err - 1] = 0;
        hb_status st = hb_benchdnn_parse(b->k, b->desc, NULL, &it, err, sizeof err);
        if (st != HB_EINVAL) fail_msg("\"%s\" accepted (status %d)", b->desc, st);
        if (!strstr(err, b->reason)) fail_msg("\"%s\": error \"%s\" lacks \"%s\"", b->desc, err, b->reason);
    }
}

/* ---- list files ---- */
static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_broken_lists(void **state)
{
    (void)state;
    char dir[] = "/tmp/hb_bd_XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct { const char *text; int line; const char *reason; } cases[] = {
        {"# ok first\nmb2ic3ih9oc4kh3\n\nmb2ic3ih9oc4kh3 mb2ic3ih9oc4kh3 zz7\n", 4, "unknown key"},
        {"mb2ic3ih9oc4kh3\n--cfg=u8s8s8\n", 2, "hybench runs f32"},
        {"mb2ic3ih9oc4kh3\n--attr-post-ops=relu\n", 2, "unsupported benchdnn option"},
        {"--dir=BWD_D\nmb2ic3ih9oc4kh3\n", 1, "forward problems only"},
        {"mb2ic3ih9oc4kh3n\"has space # and hash\"\nmb2ic3ih9oc4kh3n\"never closed\n", 2, "unterminated name"},
        {"--mb=x\n", 1, "bad --mb"},
        {"--alg=max\n", 1, "only pooling algorithms"},
        {"--batch=missing_nested_list\n", 1, "cannot read benchdnn list"},
        {"# nothing but comments\n\n", 0, "no problems"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[128], want[200], err[1024];
        snprintf(path, sizeof path, "%s/list%zu", dir, i);
        write_file(path, cases[i].text);
        hb_item_list l = {0};
        hb_item s;
        memset(&s, 0x5A, sizeof s);
        assert_int_equal(hb_item_list_push(&l, &s), HB_OK);
        hb_status st = hb_benchdnn_load(HB_BATCH_CONV, path, NULL, &l, err, sizeof err);
        assert_int_not_equal(st, HB_OK);
        if (cases[i].line) snprintf(want, sizeof want, "%s:%d: ", path, cases[i].line);
        else snprintf(want, sizeof want, "%s: ", path);
        if (strncmp(err, want, strlen(want)) || !strstr(err, cases[i].reason))
            fail_msg("list %zu: error \"%s\", expected \"%s...%s\"", i, err, want, cases[i].reason);
        assert_int_equal(l.n, 1);  /* nothing appended */
        assert_memory_equal(&l.v[0], &s, sizeof s);
        hb_item_list_free(&l);
        unlink(path);
    }
    rmdir(dir);
}

static void test_list_options(void **state)
{
    (void)state;
    char dir[] = "/tmp/hb_bd_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char main_list[128], nested[128];
    snprintf(main_list, sizeof main_list, "%s/main", dir);
    snprintf(nested, sizeof nested, "%s/nested", dir);
    write_file(nested, "--pool --alg=avg_np\nmb1ic2ih8kh2sh2n\"nested_pool\"\n");
    write_file(main_list,
               "# conv first, two problems on one line, a quoted name with blanks and #\n"
               "mb2ic3ih9oc4kh3n\"net:first layer # 1*2\"  mb2ic3ih9oc8kh1\n"
               "--mb=7 --dir=FWD_I --cfg=f32\n"
               "mb2ic3ih9oc4kh3   # overridden batch\n"
               "--batch=nested\n"
               "--reset\n"
               "mb2ic3ih9oc4kh3\n"
               "--pool\n"
               "mb1ic2ih8kh2sh2\n"
               "--alg=avg_p\n"
               "mb1ic2ih8kh2sh2\n"
               "--matmul\n"
               "4x8:8x2\n");
    hb_item_list l = {0};
    char err[1024];
    if (hb_benchdnn_load(HB_BATCH_CONV, main_list, NULL, &l, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(l.n, 8);
    assert_string_equal(l.v[0].c.name, "first layer # 1");
    assert_string_equal(l.v[0].c.model, "net");
    assert_true(l.v[0].c.weight == 2);
    assert_int_equal(l.v[1].c.shape.oc, 8);
    char want[200];
    snprintf(want, sizeof want, "main:2");
    assert_string_equal(l.v[1].c.name, want);  /* unnamed: <list>:<line> */
    assert_int_equal(l.v[2].c.shape.batch, 7);  /* --mb=7 */
    assert_int_equal(l.v[3].c.op, HB_OP_AVGPOOL);  /* nested list: --pool --alg=avg_np */
    assert_string_equal(l.v[3].c.name, "nested_pool");
    snprintf(want, sizeof want, "%s:2", nested);
    assert_string_equal(l.v[3].c.source, want);
    assert_int_equal(l.v[4].c.op, HB_OP_CONV2D);  /* the nested --pool does not leak out */
    assert_int_equal(l.v[4].c.shape.batch, 2);  /* --reset */
    assert_int_equal(l.v[5].c.op, HB_OP_MAXPOOL);
    assert_string_equal(l.v[5].skip, "");
    assert_non_null(strstr(l.v[6].skip, "avg_p"));
    assert_int_equal(l.v[7].c.op, HB_OP_MATMUL);
    assert_int_equal(l.v[7].c.shape.m, 4);
    /* the caller's mb overrides the list's --mb */
    hb_item_list l2 = {0};
    hb_batch_opts o = {.mb = 1};
    if (hb_benchdnn_load(HB_BATCH_CONV, main_list, &o, &l2, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(l2.v[2].c.shape.batch, 1);
    hb_item_list_free(&l);
    hb_item_list_free(&l2);
    unlink(nested);
    unlink(main_list);
    rmdir(dir);
}

/* The lists are found without ../shared (issue 41 item 1): from another working directory (the shipped
 * workloads/benchdnn/ beside the test's executable), and in a oneDNN checkout's layout named by
 * HB_BENCHDNN_DIR (KIND/NAME for KIND_NAME), which wins over the shipped copy when it has the list. A
 * missing list's error names the places tried and HB_BENCHDNN_DIR. */
static void test_find_without_shared(void **state)
{
    (void)state;
    char cwd[4096], err[2048], path[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    char tmpl[] = "/tmp/hb-bdfind.XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    assert_int_equal(chdir(dir), 0);
    unsetenv("HB_BENCHDNN_DIR");
    hb_item_list l = {0};
    assert_int_equal(hb_batch_load("conv:conv_shapes_resnet_50", &l, err, sizeof err), HB_OK);
    assert_int_equal(l.n, 20);
    assert_non_null(strstr(l.v[0].c.source, "workloads/benchdnn/conv_shapes_resnet_50:"));
    hb_item_list_free(&l);
    /* a oneDNN checkout: inputs/pool/shapes_resnet_50 with one random problem */
    char sub[4200], file[4300];
    snprintf(sub, sizeof sub, "%s/pool", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(file, sizeof file, "%s/shapes_resnet_50", sub);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    srand((unsigned)time(NULL));
    int ic = 1 + rand() % 64, ih = 8 + rand() % 32;
    fprintf(f, "mb1ic%d_ih%doh%d_kh1sh1n\"probe\"\n", ic, ih, ih);
    fclose(f);
    setenv("HB_BENCHDNN_DIR", dir, 1);
    assert_int_equal(hb_benchdnn_find("pool_shapes_resnet_50", NULL, path, sizeof path, err, sizeof err), HB_OK);
    assert_string_equal(path, file);
    assert_int_equal(hb_batch_load("pool:pool_shapes_resnet_50", &l, err, sizeof err), HB_OK);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.v[0].c.shape.c, ic);
    assert_int_equal(l.v[0].c.shape.h, ih);
    hb_item_list_free(&l);
    assert_int_not_equal(hb_benchdnn_find("conv_no_such_list", NULL, path, sizeof path, err, sizeof err), HB_OK);
    assert_non_null(strstr(err, "conv_no_such_list"));
    assert_non_null(strstr(err, "HB_BENCHDNN_DIR"));
    unsetenv("HB_BENCHDNN_DIR");
    unlink(file);
    rmdir(sub);
    assert_int_equal(chdir(cwd), 0);
    rmdir(dir);
}

static void test_batch_specs(void **state)
{
    (void)state;
    hb_item_list l = {0};
    char err[1024];
    assert_int_equal(hb_batch_load("conv,mb=2,model=r50:conv_shapes_resnet_50", &l, err, sizeof err), HB_OK);
    assert_int_equal(l.n, 20);
    for (size_t i = 0; i < l.n; i++) {
        assert_int_equal(l.v[i].c.shape.batch, 2);
        assert_string_equal(l.v[i].c.model, "r50");
    }
    hb_item_list_free(&l);
    assert_int_equal(hb_batch_load("avgpool:" SHARED "pool_shapes_resnet_50", &l, err, sizeof err), HB_OK);
    assert_int_equal(l.v[0].c.op, HB_OP_AVGPOOL);
    assert_int_equal(l.v[1].c.op, HB_OP_AVGPOOL);
    hb_item_list_free(&l);
    assert_int_equal(hb_batch_load("pool,alg=max:pool_shapes_resnet_50", &l, err, sizeof err), HB_OK);
    assert_int_equal(l.v[1].c.op, HB_OP_MAXPOOL);
    hb_item_list_free(&l);
    static const char *bad[] = {"conv_shapes_resnet_50", "deconv:conv_shapes_resnet_50", "conv:", ":x",
                                "conv,mb=0:conv_shapes_resnet_50", "conv,alg=max:conv_shapes_resnet_50",
                                "conv,color=red:conv_shapes_resnet_50", "conv:no_such_list_xyz"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hb_item s;
        memset(&s, 0x5A, sizeof s);
        assert_int_equal(hb_item_list_push(&l, &s), HB_OK);
        if (hb_batch_load(bad[i], &l, err, sizeof err) == HB_OK) fail_msg("\"%s\" accepted", bad[i]);
        assert_int_equal(l.n, 1);
        hb_item_list_free(&l);
    }
}

/* ---- verify parsed problems on cpu-ref and cpu ---- */
static uint64_t rng = 0x0DDB1A5E5BAD5EEDull;
static float unif(void)  /* (-1, 1), never 0 */
{
    for (;;) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        float v = (float)((double)(rng >> 40) * 0x1p-23 - 1.0);
        if (v != 0.0f) return v;
    }
}

static hb_instance open_backend(const hb_backend_ops *ops)
{
    hb_instance inst[2];
    char reason[256] = "";
    memset(inst, 0, sizeof inst);
    assert_int_equal(hb_backend_validate(ops), HB_OK);
    if (ops->configure) ops->configure(hb_config_get());
    int n = ops->enumerate(inst, 1, reason, sizeof reason);
    if (n != 1) fail_msg("%s: %s", ops->type, reason);
    return inst[0];
}

/* Run c on inst with f32 inputs in[]; result into out (poisoned with NaN first). */
static void run_case(hb_instance *inst, const hb_case *c, float *const *in, float *out)
{
    const hb_backend_ops *ops = inst->ops;
    int nin = hb_op_get(c->op)->ninputs;
    hb_buf b[HB_MAX_INPUTS], ob;
    hb_buf *bp[HB_MAX_INPUTS];
    char reason[256] = "";
    if (ops->supports(inst, c, reason, sizeof reason) != HB_OK) fail_msg("%s refuses %s: %s", inst->name, c->name, reason);
    for (int i = 0; i < nin; i++) {
        size_t n = (size_t)hb_op_input_elems(c->op, &c->shape, i);
        assert_int_equal(ops->buf_alloc(inst, n * 4, c->route, &b[i]), HB_OK);
        memcpy(b[i].host, in[i], n * 4);
        assert_int_equal(ops->upload(inst, &b[i]), HB_OK);
        bp[i] = &b[i];
    }
    size_t no = (size_t)hb_op_output_elems(c->op, &c->shape);
    assert_int_equal(ops->buf_alloc(inst, no * 4, c->route, &ob), HB_OK);
    float *oh = ob.host;
    for (size_t i = 0; i < no; i++) oh[i] = NAN;
    assert_int_equal(ops->run(inst, c, bp, &ob), HB_OK);
    assert_int_equal(ops->download(inst, &ob), HB_OK);
    memcpy(out, ob.host, no * 4);
    ops->buf_free(inst, &ob);
    for (int i = 0; i < nin; i++) ops->buf_free(inst, &b[i]);
}

static double rel_err(const float *a, const float *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]) || !isfinite(ref[i])) return INFINITY;
        double d = (double)a[i] - (double)ref[i];
        num += d * d;
        den += (double)ref[i] * (double)ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* max pooling written here: symmetric padding ph/pw, padded taps ignored */
static void naive_maxpool(const hb_shape *s, const float *x, float *y)
{
    int64_t oh = hb_shape_oh(s), ow = hb_shape_ow(s);
    for (int64_t bc = 0; bc < s->batch * s->c; bc++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                float m = -INFINITY;
                for (int64_t a = 0; a < s->kh; a++)
                    for (int64_t b = 0; b < s->kw; b++) {
                        int64_t r = i * s->sh - s->ph + a, q = j * s->sw - s->pw + b;
                        if (r < 0 || r >= s->h || q < 0 || q >= s->w) continue;
                        float v = x[(bc * s->h + r) * s->w + q];
                        if (v > m) m = v;
                    }
                y[(bc * oh + i) * ow + j] = m;
            }
}

static void test_verify_cpu(void **state)
{
    (void)state;
    hb_instance ref = open_backend(&hb_cpu_ref_ops), cpu = open_backend(&hb_cpu_ops);
    hb_item_list l = {0};
    char err[1024];
    hb_batch_opts o1 = {.mb = 1};
    assert_int_equal(hb_benchdnn_load(HB_BATCH_CONV, SHARED "conv_shapes_resnet_50", &o1, &l, err, sizeof err), HB_OK);
    assert_int_equal(hb_benchdnn_load(HB_BATCH_POOL, SHARED "pool_shapes_resnet_50", &o1, &l, err, sizeof err), HB_OK);
    assert_int_equal(hb_benchdnn_load(HB_BATCH_MATMUL, SHARED "matmul_shapes_transformer", NULL, &l, err, sizeof err), HB_OK);
    hb_item extra[3];
    extra[0] = parse_ok(HB_BATCH_MATMUL, "3x2x10x30:1x1x30x20n\"bcast\"", NULL);
    extra[1] = parse_ok(HB_BATCH_CONV, "g2mb2ic8ih11iw9oc6oh6ow5kh3kw3sh2sw2n\"grouped_deduced_pad\"", NULL);
    extra[2] = parse_ok(HB_BATCH_POOL, "mb2ic3ih9iw10oh5ow5kh3kw3sh2sw2n\"pool_pad_rounded\"", NULL);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(extra[i].skip, "");
        assert_int_equal(hb_item_list_push(&l, &extra[i]), HB_OK);
    }
    static const char *names[] = {"conv1", "res3a_branch1", "res3a_branch2b", "res5a_branch2b", "max_pool1",
                                  "ave_pool5", "matmul_shapes_transformer:3", "matmul_shapes_transformer:4",
                                  "bcast", "grouped_deduced_pad", "pool_pad_rounded"};
    for (size_t t = 0; t < sizeof names / sizeof names[0]; t++) {
        hb_case c = find(&l, names[t])->c;
        c.dtype = HB_F32;
        c.mode = HB_MODE_F32;
        c.route = HB_ROUTE_PAGEABLE;
        int nin = hb_op_get(c.op)->ninputs;
        float *in[HB_MAX_INPUTS] = {0};
        for (int i = 0; i < nin; i++) {
            size_t n = (size_t)hb_op_input_elems(c.op, &c.shape, i);
            in[i] = malloc(n * 4);
            assert_non_null(in[i]);
            for (size_t j = 0; j < n; j++) in[i][j] = unif();
        }
        size_t no = (size_t)hb_op_output_elems(c.op, &c.shape);
        float *yr = malloc(no * 4), *yc = malloc(no * 4), *yn = malloc(no * 4);
        assert_true(yr && yc && yn);
        run_case(&ref, &c, in, yr);
        run_case(&cpu, &c, in, yc);
        double e = rel_err(yc, yr, no), tol = hb_op_tolerance(c.op, &c.shape, HB_F32);
        print_message("%-28s %-8s %-62s cpu vs cpu-ref rel_err %.2e (tol %.1e)\n", names[t], hb_op_get(c.op)->name,
                      hb_shape_format(c.op, &c.shape, (char[160]){0}, 160), e, tol);
        assert_true(e <= tol);
        if (c.op == HB_OP_MAXPOOL) {  /* the padding this parser chose, checked independently */
            naive_maxpool(&c.shape, in[0], yn);
            assert_true(rel_err(yr, yn, no) == 0);
        }
        if (!strcmp(names[t], "bcast")) {  /* [3,2,10,30] x [1,1,30,20] computed as a broadcast */
            for (int b = 0; b < 6; b++)
                for (int i = 0; i < 10; i++)
                    for (int j = 0; j < 20; j++) {
                        double acc = 0;
                        for (int k = 0; k < 30; k++) acc += (double)in[0][(b * 10 + i) * 30 + k] * (double)in[1][k * 20 + j];
                        yn[(b * 10 + i) * 20 + j] = (float)acc;
                    }
            assert_true(rel_err(yr, yn, no) < 1e-6);
        }
        for (int i = 0; i < nin; i++) free(in[i]);
        free(yr);
        free(yc);
        free(yn);
    }
    ref.ops->close(&ref);
    cpu.ops->close(&cpu);
    hb_item_list_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_lists_every_line), cmocka_unit_test(test_shared_sample),
        cmocka_unit_test(test_defaults),                cmocka_unit_test(test_broken_descriptors),
        cmocka_unit_test(test_broken_lists),            cmocka_unit_test(test_list_options),
        cmocka_unit_test(test_batch_specs), cmocka_unit_test(test_find_without_shared),
        cmocka_unit_test(test_verify_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
