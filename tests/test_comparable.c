/*
 * test_comparable.c - nothing is compared silently (issue 32 item 4): hb_run_check_comparable
 * (results/read.c) and the commands that use it. A results file with only a meta record, one without
 * any meta record and one whose schema is newer than this hybench knows are refused by `hybench
 * compare` (as either file, with --force too, and as the baseline of --baseline-dir), `hybench ab`
 * (a round's file, through --redecide, which reads rounds without running builds) and `hybench
 * baseline set` (with --force too): exit 3 and the file's path on stderr. A good file still compares
 * (exit 0), and a file whose meta record comes after a case stays malformed (exit 2, file:line).
 * Files are written into a temporary folder; run from the repository root (make test does).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include "cli_capture.h"

#include "analysis/baseline.h"
#include "cli/commands.h"
#include "results/results.h"

typedef int (*cmd_fn)(int, char **);

static char dir[64];

/* Run cmd with stdout to /dev/null and its stderr text into buf (tests/cli_capture.h). */
static int run_cmd(cmd_fn cmd, int argc, char **argv, char *buf, size_t len)
{
    return hb_test_run_cmd(cmd, argc, argv, buf, len, 0);
}

#define META "{\"type\":\"meta\",\"schema\":%d,\"run_id\":\"t1\",\"host\":\"h\",\"git_commit\":\"abc\"," \
             "\"date\":\"2026-01-01T00:00:00Z\",\"cpu\":{\"model\":\"X\",\"pus\":2}}\n"
#define CASE(n) "{\"type\":\"case\",\"schema\":1,\"key\":\"add|n=" #n "|cpu|f32|pageable|f32\",\"backend\":\"cpu\"," \
                "\"op\":\"add\",\"shape_str\":\"n=" #n "\",\"mode\":\"f32\",\"route\":\"pageable\",\"dtype\":\"f32\"," \
                "\"status\":\"ok\",\"phases\":{\"total\":{\"n\":3,\"median\":0.001}},\"samples\":{\"total\":" \
                "[0.001,0.0010002,0.0009999,0.001,0.0010001]}}\n"
#define END "{\"type\":\"end\",\"schema\":1,\"cases\":2,\"ok\":2}\n"

static void write_file(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void write_file(const char *path, const char *fmt, ...)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    assert_int_equal(fclose(f), 0);
}

static void path_of(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", dir, name); }

/* The refused files: name, and the reason hb_run_check_comparable gives. */
static const struct { const char *name, *reason; } bad[] = {
    {"meta_only.jsonl", "no case records"},
    {"no_meta.jsonl", "no meta record"},
    {"schema999.jsonl", "results schema 999 is newer than this hybench knows"},
};

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hb_comparable_XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char p[256];
    path_of(p, sizeof p, "good.jsonl");
    write_file(p, META CASE(4) CASE(8) END, 1);
    path_of(p, sizeof p, "meta_only.jsonl");
    write_file(p, META, 1);
    path_of(p, sizeof p, "no_meta.jsonl");
    write_file(p, CASE(4) CASE(8) END "%s", "");
    /* a newer schema's case may break this version's rules ("status" a number): it is refused as
     * newer, not as malformed */
    path_of(p, sizeof p, "schema999.jsonl");
    write_file(p, META CASE(4) "{\"type\":\"case\",\"schema\":999,\"key\":\"k\",\"status\":5}\n" END, 999);
    path_of(p, sizeof p, "meta_late.jsonl");
    write_file(p, CASE(4) META END, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void expect_in(const char *what, const char *buf, const char *want)
{
    if (!strstr(buf, want)) fail_msg("%s: stderr \"%s\" lacks \"%s\"", what, buf, want);
}

/* The library: every refused file loads (with HB_LOAD_NO_META | HB_LOAD_ANY_SCHEMA) and is refused
 * with its path and reason; the good one passes; without those flags the reader refuses the file
 * itself (as csv, report and the others need). */
static void test_check(void **state)
{
    (void)state;
    char p[256], err[512];
    hb_load_opts lo = {.flags = HB_LOAD_NO_META | HB_LOAD_ANY_SCHEMA | HB_LOAD_STRICT};
    hb_run r;
    path_of(p, sizeof p, "good.jsonl");
    assert_int_equal(hb_run_load_opts(p, &lo, &r, err, sizeof err), HB_OK);
    assert_int_equal(r.schema, 1);
    assert_int_equal(hb_run_check_comparable(&r, NULL, err, sizeof err), HB_OK);
    hb_run_free(&r);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        path_of(p, sizeof p, bad[i].name);
        if (hb_run_load_opts(p, &lo, &r, err, sizeof err) != HB_OK) fail_msg("%s: %s", bad[i].name, err);
        assert_int_equal(hb_run_check_comparable(&r, p, err, sizeof err), HB_EINVAL);
        char want[320];
        snprintf(want, sizeof want, "%s: %s", p, bad[i].reason);
        expect_in(bad[i].name, err, want);
        hb_run_free(&r);
    }
    /* no meta record and a newer schema are refused by the plain reader too */
    path_of(p, sizeof p, "no_meta.jsonl");
    assert_int_equal(hb_run_load(p, &r, err, sizeof err), HB_EINVAL);
    path_of(p, sizeof p, "schema999.jsonl");
    assert_int_equal(hb_run_load(p, &r, err, sizeof err), HB_EINVAL);
    /* a meta record after a case is malformed with or without HB_LOAD_NO_META, at the case's line */
    path_of(p, sizeof p, "meta_late.jsonl");
    assert_int_equal(hb_run_load_opts(p, &lo, &r, err, sizeof err), HB_EINVAL);
    char want[320];
    snprintf(want, sizeof want, "%s:1: type: a case record before the meta record", p);
    expect_in("meta_late", err, want);
}

static void test_compare(void **state)
{
    (void)state;
    char good[256], p[256], buf[4096];
    path_of(good, sizeof good, "good.jsonl");
    char *ok[] = {"compare", good, good, "--quiet", NULL};
    assert_int_equal(run_cmd(hb_cmd_compare, 4, ok, buf, sizeof buf), HB_EXIT_OK);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        path_of(p, sizeof p, bad[i].name);
        /* the file with itself (the issue's `hybench compare X X`), as the baseline, as the current
         * run, and with --force: always 3, the file named */
        char *v[4][6] = {{"compare", p, p, "--quiet", NULL}, {"compare", p, good, "--quiet", NULL},
                         {"compare", good, p, "--quiet", NULL}, {"compare", p, good, "--quiet", "--force", NULL}};
        int argc[4] = {4, 4, 4, 5};
        for (int k = 0; k < 4; k++) {
            int rc = run_cmd(hb_cmd_compare, argc[k], v[k], buf, sizeof buf);
            if (rc != HB_EXIT_INCOMPARABLE) fail_msg("compare %s (%d): exit %d, wanted 3: %s", bad[i].name, k, rc, buf);
            expect_in(bad[i].name, buf, p);
            expect_in(bad[i].name, buf, bad[i].reason);
        }
    }
    /* malformed stays malformed: exit 2 with file:line */
    path_of(p, sizeof p, "meta_late.jsonl");
    char *ml[] = {"compare", good, p, "--quiet", NULL};
    assert_int_equal(run_cmd(hb_cmd_compare, 4, ml, buf, sizeof buf), HB_EXIT_USAGE);
    expect_in("meta_late", buf, ":1: type: a case record before the meta record");
}

/* compare --baseline-dir: a baseline (DIR/<host>.jsonl) with only a meta record is refused (3). */
static void test_baseline_dir(void **state)
{
    (void)state;
    char good[256], bdir[256], bl[320], buf[4096];
    path_of(good, sizeof good, "good.jsonl");
    path_of(bdir, sizeof bdir, "bdir");
    mkdir(bdir, 0755);
    snprintf(bl, sizeof bl, "%s/h.jsonl", bdir);
    write_file(bl, META, 1);
    char *v[] = {"compare", "--baseline-dir", bdir, good, "--quiet", NULL};
    assert_int_equal(run_cmd(hb_cmd_compare, 5, v, buf, sizeof buf), HB_EXIT_INCOMPARABLE);
    expect_in("baseline-dir", buf, bl);
    expect_in("baseline-dir", buf, "no case records");
}

static void test_baseline_set(void **state)
{
    (void)state;
    char p[256], bdir[256], buf[4096];
    path_of(bdir, sizeof bdir, "baselines");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        path_of(p, sizeof p, bad[i].name);
        char *v[] = {"baseline", "set", p, "--dir", bdir, "--force", NULL};
        for (int force = 0; force < 2; force++) {
            int rc = run_cmd(hb_cmd_baseline, force ? 6 : 5, v, buf, sizeof buf);
            if (rc != HB_EXIT_INCOMPARABLE) fail_msg("baseline set %s: exit %d, wanted 3: %s", bad[i].name, rc, buf);
            expect_in(bad[i].name, buf, p);
            expect_in(bad[i].name, buf, bad[i].reason);
        }
    }
    char h[320], hj[320], fp[17], err[256];
    assert_int_not_equal(access(bdir, F_OK), 0); /* nothing was set */
    path_of(p, sizeof p, "good.jsonl");
    char *v[] = {"baseline", "set", p, "--dir", bdir, NULL};
    assert_int_equal(run_cmd(hb_cmd_baseline, 5, v, buf, sizeof buf), HB_EXIT_OK);
    hb_run r; /* stored by its machine's fingerprint */
    assert_int_equal(hb_run_load(p, &r, err, sizeof err), HB_OK);
    assert_int_equal(hb_baseline_find(bdir, &r, h, hj, sizeof h, fp, NULL), 0);
    hb_run_free(&r);
    assert_non_null(strstr(h, fp));
    assert_int_equal(access(h, F_OK), 0);
}

/* ab: each refused file as a round of either build (--redecide reads DIR/rounds/ without running). */
static void test_ab(void **state)
{
    (void)state;
    char good[256], p[256], buf[8192];
    path_of(good, sizeof good, "good.jsonl");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        for (int side = 0; side < 2; side++) {
            char ab[256], rounds[300], fb[400], fc[400], cmd[2000];
            snprintf(ab, sizeof ab, "%s/ab%zu%d", dir, i, side);
            snprintf(rounds, sizeof rounds, "%s/rounds", ab);
            mkdir(ab, 0755);
            mkdir(rounds, 0755);
            snprintf(fb, sizeof fb, "%s/base-r01.jsonl", rounds);
            snprintf(fc, sizeof fc, "%s/cur-r01.jsonl", rounds);
            path_of(p, sizeof p, bad[i].name);
            snprintf(cmd, sizeof cmd, "cp %s %s && cp %s %s", side ? good : p, fb, side ? p : good, fc);
            assert_int_equal(system(cmd), 0);
            char *v[] = {"ab", "--redecide", ab, "--quiet", NULL};
            int rc = run_cmd(hb_cmd_ab, 4, v, buf, sizeof buf);
            if (rc != HB_EXIT_INCOMPARABLE) fail_msg("ab %s (side %d): exit %d, wanted 3: %s", bad[i].name, side, rc, buf);
            expect_in(bad[i].name, buf, side ? fc : fb);
            expect_in(bad[i].name, buf, bad[i].reason);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_baseline_dir),
        cmocka_unit_test(test_baseline_set),
        cmocka_unit_test(test_ab),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
