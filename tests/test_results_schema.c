/*
 * test_results_schema.c - the results-schema validator and the commands built on the streaming reader
 * (harness/results/read.c, csv.c, gbench.c; docs/results-schema.md "Rules"; issue 18 items 6-7):
 *  - tests/data/bad_results_*.jsonl: each refused by csv, gbench, compare (as the current run) and
 *    roofline with exit 2 and "file:line: field: reason" on stderr;
 *  - tests/data/results_good.jsonl (with a record of an unknown type) accepted by all of them;
 *  - compare refuses a current file whose ok cases carry no samples (results_nosamples.jsonl), which
 *    csv still reads;
 *  - write errors: csv and gbench to /dev/full (-o and standard output) exit 7 naming the file and
 *    the errno text; -o FILE leaves no FILE (and no temporary file) behind when the input is refused
 *    or the write fails, and an existing FILE untouched.
 * Run from the repository root (make test does).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <time.h>
#include <jansson.h>

#include <cmocka.h>
#include "cli_capture.h"

#include "cli/commands.h"
#include "results/results.h"
#include "core/hybench.h"

#define DATA "tests/data/"

typedef int (*cmd_fn)(int, char **);

/* Run cmd with its stderr text into buf, stdout kept or to /dev/null (tests/cli_capture.h). */
static int run_cmd(cmd_fn cmd, int argc, char **argv, char *buf, size_t len, int keep_stdout)
{
    return hb_test_run_cmd(cmd, argc, argv, buf, len, keep_stdout);
}

typedef struct bad_file { const char *file; int line; const char *reason; } bad_file;
static const bad_file bad_files[] = {
    {"bad_results_schema.jsonl", 1, "schema: version 999 is not supported"},
    {"bad_results_schema_type.jsonl", 2, "schema: must be an integer"},
    {"bad_results_no_meta.jsonl", 1, "type: a case record before the meta record"},
    {"bad_results_status_type.jsonl", 3, "status: must be a string, not a number"},
    {"bad_results_missing_status.jsonl", 3, "status: missing"},
    {"bad_results_unknown_status.jsonl", 3, "status: unknown status \"great\""},
    {"bad_results_missing_key.jsonl", 3, "key: missing"},
    {"bad_results_backend_type.jsonl", 3, "backend: must be a string"},
    {"bad_results_negative.jsonl", 3, "phases.total.median: -0.001 is negative"},
    {"bad_results_no_median.jsonl", 3, "phases.total.median: an ok case needs its median"},
    {"bad_results_phases_type.jsonl", 3, "phases: must be an object, not an array"},
    {"bad_results_empty_samples.jsonl", 3, "samples.total: an ok case has no samples"},
    {"bad_results_sample_type.jsonl", 3, "samples.total[1]: must be a number, not a string"},
    {"bad_results_negative_sample.jsonl", 3, "samples.total[1]: -0.5 is negative"},
    {"bad_results_not_object.jsonl", 3, "record: must be a JSON object, not an array"},
    {"bad_results_no_type.jsonl", 3, "type: missing"},
    {"bad_results_meta_cpu.jsonl", 1, "cpu: must be an object, not a string"},
    {"bad_results_ceiling.jsonl", 2, "ceilings[0].value: must be a number >= 0 or null"},
    {"bad_results_end_type.jsonl", 3, "cases: must be a number, not a string"},
};

static void expect_refused(const char *what, cmd_fn cmd, int argc, char **argv, const bad_file *b)
{
    char buf[4096], want[512];
    int rc = run_cmd(cmd, argc, argv, buf, sizeof buf, 0);
    snprintf(want, sizeof want, DATA "%s:%d: %s", b->file, b->line, b->reason);
    if (rc != HB_EXIT_USAGE) fail_msg("%s %s: exit %d, wanted 2 (stderr: %s)", what, b->file, rc, buf);
    if (!strstr(buf, want)) fail_msg("%s %s: stderr \"%s\" lacks \"%s\"", what, b->file, buf, want);
}

/* Sizes and counts in records are exact integers (issue 41 item 6): a case whose byte count is past
 * 2^32 (add over n > 2^31 f32 elements: 3 tensors x 4 B) writes `bytes` as the integer 12n, not a
 * 7-digit real, and the CSV export prints the same integer. n is drawn at random. */
static void test_exact_sizes(void **state)
{
    (void)state;
    srand((unsigned)time(NULL));
    for (int trial = 0; trial < 8; trial++) {
        hb_case c;
        memset(&c, 0, sizeof c);
        c.op = HB_OP_ADD;
        c.dtype = HB_F32;
        c.shape.n = ((int64_t)1 << 31) + 1 + (int64_t)(rand() % 1000003) * 977;
        char err[256];
        assert_int_equal(hb_shape_normalize(c.op, &c.shape, err, sizeof err), HB_OK);
        json_t *r = hb_case_record(&c, "cpu");
        json_t *b = json_object_get(r, "bytes");
        assert_true(json_is_integer(b));
        assert_true(json_integer_value(b) == 12 * c.shape.n);
        assert_true(json_integer_value(b) > ((json_int_t)1 << 32));
        assert_true(json_is_integer(json_object_get(r, "flops")));
        assert_true(json_integer_value(json_object_get(r, "flops")) == c.shape.n);
        char *txt = json_dumps(r, JSON_COMPACT);
        char want[64];
        snprintf(want, sizeof want, "\"bytes\":%lld,", (long long)(12 * c.shape.n));
        assert_non_null(strstr(txt, want));
        free(txt);
        json_decref(r);
    }
    /* the helper itself: whole numbers exact up to 2^53, fractions and non-finite values otherwise */
    json_t *v = hb_json_count(1073741824.0);
    assert_true(json_is_integer(v) && json_integer_value(v) == 1073741824);
    json_decref(v);
    v = hb_json_count(9007199254740992.0);
    assert_true(json_is_integer(v));
    json_decref(v);
    v = hb_json_count(2.5);
    assert_true(json_is_real(v) && json_real_value(v) == 2.5);
    json_decref(v);
    v = hb_json_count(NAN);
    assert_true(json_is_null(v));
    json_decref(v);
}

static void test_bad_files(void **state)
{
    (void)state;
    char out[] = "/tmp/hb_schema_outXXXXXX";
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    for (size_t i = 0; i < sizeof bad_files / sizeof *bad_files; i++) {
        const bad_file *b = &bad_files[i];
        char path[256];
        snprintf(path, sizeof path, DATA "%s", b->file);
        /* with the library too: the same message without the command's prefix */
        char err[512];
        assert_int_equal(hb_results_stream(path, HB_LOAD_STRICT, NULL, NULL, err, sizeof err), HB_EINVAL);
        unlink(out);
        char *csv[] = {"csv", path, "-o", out, NULL};
        expect_refused("csv", hb_cmd_csv, 4, csv, b);
        if (access(out, F_OK) == 0) fail_msg("csv %s: left %s behind", b->file, out);
        char *gb[] = {"gbench", path, "-o", out, NULL};
        expect_refused("gbench", hb_cmd_gbench, 4, gb, b);
        if (access(out, F_OK) == 0) fail_msg("gbench %s: left %s behind", b->file, out);
        char *cmp[] = {"compare", DATA "results_good.jsonl", path, "--quiet", NULL};
        if (strstr(b->reason, "version 999")) {
            /* compare reads another schema version and calls the pair incomparable (exit 3) */
            char buf[4096];
            assert_int_equal(run_cmd(hb_cmd_compare, 4, cmp, buf, sizeof buf, 0), HB_EXIT_INCOMPARABLE);
        } else {
            expect_refused("compare", hb_cmd_compare, 4, cmp, b);
        }
        char *roof[] = {"roofline", path, NULL};
        expect_refused("roofline", hb_cmd_roofline, 2, roof, b);
    }
    unlink(out);
}

static void test_good_file(void **state)
{
    (void)state;
    char buf[4096];
    char *csv[] = {"csv", DATA "results_good.jsonl", NULL};
    assert_int_equal(run_cmd(hb_cmd_csv, 2, csv, buf, sizeof buf, 0), HB_EXIT_OK);
    char *gb[] = {"gbench", DATA "results_good.jsonl", NULL};
    assert_int_equal(run_cmd(hb_cmd_gbench, 2, gb, buf, sizeof buf, 0), HB_EXIT_OK);
    char *cmp[] = {"compare", DATA "results_good.jsonl", DATA "results_good.jsonl", "--quiet", NULL};
    /* compared (not refused): inconclusive, since 3 samples a case cannot exclude a 5% slowdown */
    assert_int_equal(run_cmd(hb_cmd_compare, 4, cmp, buf, sizeof buf, 0), HB_EXIT_INCONCLUSIVE);
    hb_run r;
    char err[512];
    assert_int_equal(hb_run_load(DATA "results_good.jsonl", &r, err, sizeof err), HB_OK);
    assert_int_equal(json_array_size(r.cases), 2);  /* the unknown record type is ignored */
    assert_non_null(r.end);
    hb_run_free(&r);
    /* the streamed CSV equals the one written from a loaded run */
    char a[] = "/tmp/hb_schema_aXXXXXX", b[] = "/tmp/hb_schema_bXXXXXX";
    int fa = mkstemp(a), fb = mkstemp(b);
    assert_true(fa >= 0 && fb >= 0);
    FILE *f = fdopen(fa, "w");
    assert_int_equal(hb_run_load(DATA "cpu_small.jsonl", &r, err, sizeof err), HB_OK);
    hb_csv_write(f, &r);
    hb_run_free(&r);
    fclose(f);
    close(fb);
    char *c2[] = {"csv", DATA "cpu_small.jsonl", "-o", b, NULL};
    assert_int_equal(run_cmd(hb_cmd_csv, 4, c2, buf, sizeof buf, 0), HB_EXIT_OK);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
    assert_int_equal(system(cmd), 0);
    /* and the streamed gbench document equals the one built in memory */
    assert_int_equal(hb_run_load(DATA "cpu_small.jsonl", &r, err, sizeof err), HB_OK);
    json_t *doc = hb_gbench_build(&r, "total", 0, 1);
    hb_run_free(&r);
    char *g2[] = {"gbench", DATA "cpu_small.jsonl", "-o", b, "--errors", NULL};
    assert_int_equal(run_cmd(hb_cmd_gbench, 5, g2, buf, sizeof buf, 0), HB_EXIT_OK);
    json_error_t je;
    json_t *got = json_load_file(b, 0, &je);
    assert_non_null(got);
    assert_true(json_equal(doc, got));
    json_decref(doc);
    json_decref(got);
    unlink(a);
    unlink(b);
}

static void test_compare_needs_samples(void **state)
{
    (void)state;
    char buf[4096];
    char *cmp[] = {"compare", DATA "results_good.jsonl", DATA "results_nosamples.jsonl", "--quiet", NULL};
    assert_int_equal(run_cmd(hb_cmd_compare, 4, cmp, buf, sizeof buf, 0), HB_EXIT_USAGE);
    if (!strstr(buf, DATA "results_nosamples.jsonl:3: samples.total: an ok case has no samples"))
        fail_msg("stderr: %s", buf);
    char *csv[] = {"csv", DATA "results_nosamples.jsonl", NULL};
    assert_int_equal(run_cmd(hb_cmd_csv, 2, csv, buf, sizeof buf, 0), HB_EXIT_OK);
}

static void expect_io(const char *what, cmd_fn cmd, int argc, char **argv, int to_stdout)
{
    char buf[4096];
    int rc;
    if (to_stdout) {
        fflush(stdout);
        int save = dup(1), full = open("/dev/full", O_WRONLY);
        assert_true(full >= 0);
        dup2(full, 1);
        close(full);
        rc = run_cmd(cmd, argc, argv, buf, sizeof buf, 1);
        fflush(stdout);
        clearerr(stdout);
        dup2(save, 1);
        close(save);
    } else {
        rc = run_cmd(cmd, argc, argv, buf, sizeof buf, 0);
    }
    if (rc != HB_EXIT_IO) fail_msg("%s: exit %d, wanted 7 (stderr: %s)", what, rc, buf);
    const char *name = to_stdout ? "standard output" : "/dev/full";
    if (!strstr(buf, name) || !strstr(buf, strerror(ENOSPC))) fail_msg("%s: stderr \"%s\" lacks \"%s\" and the errno text", what, buf, name);
    /* a failed output is removed only when it is a regular file: /dev/full is still the device */
    struct stat sb;
    assert_int_equal(stat("/dev/full", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
}

static void test_write_errors(void **state)
{
    (void)state;
    struct stat sb;
    if (stat("/dev/full", &sb) || !S_ISCHR(sb.st_mode)) skip();
    char *c1[] = {"csv", DATA "cpu_small.jsonl", "-o", "/dev/full", NULL};
    expect_io("csv -o /dev/full", hb_cmd_csv, 4, c1, 0);
    char *c2[] = {"csv", DATA "cpu_small.jsonl", NULL};
    expect_io("csv > /dev/full", hb_cmd_csv, 2, c2, 1);
    char *g1[] = {"gbench", DATA "cpu_small.jsonl", "-o", "/dev/full", NULL};
    expect_io("gbench -o /dev/full", hb_cmd_gbench, 4, g1, 0);
    char *g2[] = {"gbench", DATA "cpu_small.jsonl", NULL};
    expect_io("gbench > /dev/full", hb_cmd_gbench, 2, g2, 1);
    /* a file in a directory that does not exist: 7, named, nothing created */
    char buf[1024];
    char *c3[] = {"csv", DATA "cpu_small.jsonl", "-o", "/nonexistent_dir/x.csv", NULL};
    assert_int_equal(run_cmd(hb_cmd_csv, 4, c3, buf, sizeof buf, 0), HB_EXIT_IO);
    assert_non_null(strstr(buf, "/nonexistent_dir/x.csv"));
    /* a missing input: 7 is for the output; a missing input is exit 2 and creates nothing */
    char out[] = "/tmp/hb_schema_missXXXXXX";
    int fd = mkstemp(out);
    close(fd);
    unlink(out);
    char *c4[] = {"csv", DATA "no_such_file.jsonl", "-o", out, NULL};
    assert_int_equal(run_cmd(hb_cmd_csv, 4, c4, buf, sizeof buf, 0), HB_EXIT_USAGE);
    assert_int_not_equal(access(out, F_OK), 0);
    char *g4[] = {"gbench", DATA "no_such_file.jsonl", "-o", out, NULL};
    assert_int_equal(run_cmd(hb_cmd_gbench, 4, g4, buf, sizeof buf, 0), HB_EXIT_USAGE);
    assert_int_not_equal(access(out, F_OK), 0);
    /* an existing output stays untouched when the input is refused, and no temporary file is left */
    char dir[] = "/tmp/hb_schema_dirXXXXXX";
    assert_non_null(mkdtemp(dir));
    char keep[300];
    snprintf(keep, sizeof keep, "%s/keep.csv", dir);
    FILE *f = fopen(keep, "w");
    fputs("old contents\n", f);
    fclose(f);
    char *c5[] = {"csv", DATA "bad_results_negative.jsonl", "-o", keep, NULL};
    assert_int_equal(run_cmd(hb_cmd_csv, 4, c5, buf, sizeof buf, 0), HB_EXIT_USAGE);
    char *g5[] = {"gbench", DATA "bad_results_negative.jsonl", "-o", keep, NULL};
    assert_int_equal(run_cmd(hb_cmd_gbench, 4, g5, buf, sizeof buf, 0), HB_EXIT_USAGE);
    f = fopen(keep, "r");
    char line[64] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "old contents\n");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls %s | wc -l) -eq 1", dir);
    assert_int_equal(system(cmd), 0);
    unlink(keep);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_sizes),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_compare_needs_samples),
        cmocka_unit_test(test_write_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
