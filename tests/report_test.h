/*
 * report_test.h - what the report's tests share (test_report.c, test_report_multi.c): a temporary
 * directory per test binary (cmocka group setup/teardown; HB_TEST_KEEP=1 keeps it and prints its
 * path), reading files, poisoning an output directory, running `hybench report` in process, and
 * reading summary.json. Header-only: include after <cmocka.h>; each test file gets its own copy.
 */
#ifndef HB_REPORT_TEST_H
#define HB_REPORT_TEST_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>
#include "cli/commands.h"

#ifndef DNAN
#define DNAN ((double)NAN) /* NAN is a float constant */
#endif

static char g_tmp[256];

static inline int setup_tmp(void **state)
{
    (void)state;
    snprintf(g_tmp, sizeof g_tmp, "%s/hb_test_report.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(g_tmp) ? 0 : -1;
}

static inline int teardown_tmp(void **state)
{
    (void)state;
    char cmd[400];
    if (!getenv("HB_TEST_KEEP")) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
        if (system(cmd) != 0) return -1;
    } else {
        fprintf(stderr, "kept %s\n", g_tmp);
    }
    return 0;
}

static inline int file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int)st.st_size : -1;
}

static inline int count_substr(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* Write garbage where the report will write, so stale files cannot pass for output. */
static inline void poison_dir(const char *dir)
{
    char p[512];
    mkdir(dir, 0755);
    const char *files[] = { "summary.json", "routing.json", "index.html", "report.md", "op_add.svg", "q1_saving_elementwise.svg" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fputs("POISON NaN {", f);
        fclose(f);
    }
}

/* hybench report FILES... --out DIR --name NAME -q [extra]; returns the exit status */
static inline int run_report(const char *dir, const char *name, int nfiles, const char *const *files, const char *extra)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"report";
    for (int i = 0; i < nfiles; i++) argv[argc++] = (char *)files[i];
    argv[argc++] = (char *)"--out";
    argv[argc++] = (char *)dir;
    argv[argc++] = (char *)"--name";
    argv[argc++] = (char *)name;
    argv[argc++] = (char *)"-q";
    if (extra) argv[argc++] = (char *)extra;
    argv[argc] = NULL;
    return hb_cmd_report(argc, argv);
}

static inline json_t *load_json(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    json_error_t e;
    json_t *j = json_load_file(p, 0, &e);
    if (!j) fprintf(stderr, "%s: %s (line %d)\n", p, e.text, e.line);
    assert_non_null(j);
    return j;
}

static inline double jv(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : DNAN;
}
static inline const char *js(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static inline void assert_close(double want, double got, double rel)
{
    if (!(fabs(want - got) <= rel * fabs(want) + 1e-12)) {
        fprintf(stderr, "want %.17g got %.17g\n", want, got);
        fail();
    }
}

#endif
