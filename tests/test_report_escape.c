/*
 * test_report_escape.c - untrusted strings of a results file must never reach a gnuplot script,
 * report.md or index.html unescaped (harness/report/escape.c, plot.c, doc.c).
 *
 * - the four escaping helpers (gnuplot single-quoted string, gnuplot comment, Markdown, HTML) on
 *   exact inputs and outputs;
 * - end to end: the checked-in tests/data/cpu_small.jsonl is rewritten with injection attempts in
 *   every string field the report shows (backend, op, model, name, shape_str, family-independent
 *   device description, unavailable-backend reason, host, run id, commit): a newline followed by a
 *   gnuplot shell escape (`!touch FILE`) or `system('touch FILE')`, quotes of both kinds, a
 *   `<script>` element, `|`, backticks, Markdown markup and control characters. `hybench report`
 *   (hb_cmd_report, with gnuplot) runs on it; then no FILE exists, every line of every .gp script
 *   holds the injected text only in a comment or inside a gnuplot single-quoted string, report.md
 *   shows the text escaped on one line, and index.html carries it as &lt;script&gt;, never <script>.
 * Run from the repository root (the report finds templates/style.gp there), as run_tests.sh does.
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
#include <jansson.h>

#include "cli/commands.h"
#include "report/report.h"
#include "test_files.h"

#define CPU_SMALL "tests/data/cpu_small.jsonl"

static char g_tmp[256];

static int setup_tmp(void **state)
{
    (void)state;
    snprintf(g_tmp, sizeof g_tmp, "%s/hb_test_escape.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(g_tmp) ? 0 : -1;
}

static int teardown_tmp(void **state)
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

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Run a FILE-writing helper on s, return what it wrote (malloc'd). */
static char *capture(void (*fn)(FILE *, const char *), const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    fn(f, s);
    fclose(f);
    return buf;
}

static void test_helpers(void **state)
{
    (void)state;
    /* gnuplot single-quoted string: ' doubled, newlines and control characters become spaces,
     * backquotes, @, \ and " stay (nothing is special inside single quotes) */
    assert_string_equal(hb_report_gp_str("it's"), "it''s");
    assert_string_equal(hb_report_gp_str("a\nb\r\tc\x01\x1b\x7f"), "a b  c   ");
    assert_string_equal(hb_report_gp_str("x'\n!touch /tmp/f #"), "x'' !touch /tmp/f #");
    assert_string_equal(hb_report_gp_str("`id` @m \\ \"q\""), "`id` @m \\ \"q\"");
    assert_string_equal(hb_report_gp_str("cpu opencl:0:0 (pinned)"), "cpu opencl:0:0 (pinned)");
    /* gnuplot comment: one line, and no trailing backslash that would continue it */
    assert_string_equal(hb_report_gp_comment("a\nsystem('x')\r\x02"), "a system('x')  ");
    assert_string_equal(hb_report_gp_comment("ends in \\"), "ends in /");
    assert_string_equal(hb_report_gp_comment("Q1: saving, 12% of 'x'"), "Q1: saving, 12% of 'x'");
    /* Markdown: the active characters backslash-escaped, one line */
    char *m = capture(hb_report_md_esc, "a|b`c`*d*_e_[f](g) <h> #i \\j\nk\x01l");
    assert_string_equal(m, "a\\|b\\`c\\`\\*d\\*\\_e\\_\\[f\\](g) \\<h\\> \\#i \\\\j k l");
    free(m);
    m = capture(hb_report_md_esc, "plain text: 1.5 ms, 12%");
    assert_string_equal(m, "plain text: 1.5 ms, 12%");
    free(m);
    /* HTML: & < > " ' */
    char *h = capture(hb_report_html_esc, "<script>alert(\"x\" & 'y')</script>");
    assert_string_equal(h, "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;");
    free(h);
}

/* ---- end to end ---- */

/* The injected strings. P is the directory of the files an injection would create. */
struct payloads {
    char backend[512], op[512], model[512], name[512], shape[512], desc[512], reason[512], host[512], runid[512];
    char pw[9][280]; /* the files each payload tries to create */
};

static void make_payloads(struct payloads *pl)
{
    static const char *const tag[9] = { "backend", "op", "model", "name", "shape", "desc", "reason", "host", "runid" };
    for (int i = 0; i < 9; i++) snprintf(pl->pw[i], sizeof pl->pw[i], "%s/pw_%s", g_tmp, tag[i]);
    /* type "opencl" kept (the part before ':'), so the device is still a device with its own memory */
    snprintf(pl->backend, sizeof pl->backend, "opencl:0:0\n!touch %s #'\"<script>alert(1)</script>|`b`", pl->pw[0]);
    snprintf(pl->op, sizeof pl->op, "add\nsystem('touch %s')\n<script>alert(2)</script>", pl->pw[1]);
    snprintf(pl->model, sizeof pl->model, "tl'\n!touch %s\n# *bold* _em_ [l](x) |`m`", pl->pw[2]);
    snprintf(pl->name, sizeof pl->name, "n\r\n!touch %s #<script>alert(4)</script>", pl->pw[3]);
    snprintf(pl->shape, sizeof pl->shape, "n=65536\n!touch %s #\"|`s`", pl->pw[4]);
    snprintf(pl->desc, sizeof pl->desc, "pthread <script>alert(6)</script>\n!touch %s #\x01\x1b[31m", pl->pw[5]);
    snprintf(pl->reason, sizeof pl->reason, "none\n!touch %s #<script>alert(7)</script>", pl->pw[6]);
    snprintf(pl->host, sizeof pl->host, "vm'\n!touch %s #\\", pl->pw[7]);
    snprintf(pl->runid, sizeof pl->runid, "r\nsystem(\"touch %s\") <script>alert(9)</script>", pl->pw[8]);
}

static void set_if(json_t *o, const char *key, const char *v)
{
    assert_int_equal(json_object_set_new(o, key, json_string(v)), 0);
}

/* cpu_small.jsonl with the payloads in every string field the report uses. */
static void write_evil(const char *path, const struct payloads *pl)
{
    FILE *in = fopen(CPU_SMALL, "r");
    assert_non_null(in);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    char *line = NULL;
    size_t cap = 0;
    int nback = 0, nop = 0, nmodel = 0, nname = 0, nshape = 0, ndesc = 0, nreason = 0;
    while (getline(&line, &cap, in) > 0) {
        json_error_t e;
        json_t *r = json_loads(line, 0, &e);
        assert_non_null(r);
        const char *type = json_string_value(json_object_get(r, "type"));
        const char *b = json_string_value(json_object_get(r, "backend"));
        if (!strcmp(type, "meta")) {
            set_if(r, "host", pl->host);
            set_if(r, "run_id", pl->runid);
            set_if(r, "git_commit", "c0ffee\n!touch x #");
        } else if (!strcmp(type, "backend")) {
            if (b && !strcmp(b, "opencl:0:0")) { set_if(r, "backend", pl->backend); set_if(r, "description", pl->desc); nback++; ndesc++; }
            else if (b && !strcmp(b, "cuda")) { set_if(r, "reason", pl->reason); nreason++; }
        } else if (!strcmp(type, "case")) {
            if (b && !strcmp(b, "opencl:0:0")) { set_if(r, "backend", pl->backend); nback++; }
            /* decide before changing anything: set_if frees the strings read here */
            const char *op = json_string_value(json_object_get(r, "op"));
            const char *model = json_string_value(json_object_get(r, "model"));
            const char *shape = json_string_value(json_object_get(r, "shape_str"));
            int is_add = op && !strcmp(op, "add"), is_gelu = op && !strcmp(op, "gelu");
            int is_decode = model && !strcmp(model, "tinyllama-decode"), is_small = shape && !strcmp(shape, "n=65536");
            if (is_add) { set_if(r, "op", pl->op); nop++; }
            if (is_decode) { set_if(r, "model", pl->model); nmodel++; }
            if (is_gelu) { set_if(r, "name", pl->name); nname++; }
            if (is_small) { set_if(r, "shape_str", pl->shape); nshape++; }
        }
        char *s = json_dumps(r, JSON_COMPACT);
        assert_non_null(s);
        fprintf(out, "%s\n", s);
        free(s);
        json_decref(r);
    }
    free(line);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    /* every payload went somewhere */
    assert_true(nback > 1 && nop > 0 && nmodel > 0 && nname > 0 && nshape > 0 && ndesc == 1 && nreason == 1);
}

/* In one line of a gnuplot script, every occurrence of `needle` lies in a comment or inside a
 * single-quoted string ('' is a quote inside one). */
static int gp_line_contained(const char *line, size_t len, const char *needle)
{
    size_t nl = strlen(needle);
    int inq = 0;
    for (size_t i = 0; i < len; i++) {
        if (!inq && line[i] == '#') return 1; /* comment to the end of the line */
        if (!inq && i + nl <= len && !strncmp(line + i, needle, nl)) return 0;
        if (line[i] == '\'') {
            if (inq && i + 1 < len && line[i + 1] == '\'') { i++; continue; }
            inq = !inq;
        } else if (!inq && line[i] == '"') {
            /* a double-quoted literal written by the report itself: skip it */
            for (i++; i < len && line[i] != '"'; i++)
                if (line[i] == '\\') i++;
        }
    }
    return 1;
}

static void check_gp_scripts(const char *dir, const struct payloads *pl)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int nscripts = 0, nwith = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".gp") || !strcmp(e->d_name, "style.gp")) continue;
        char p[700];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        char *s = hb_test_slurp(p);
        assert_non_null(s);
        nscripts++;
        if (strstr(s, "pw_")) nwith++;
        for (char *ln = s; *ln;) {
            size_t len = strcspn(ln, "\n");
            /* no line starts with something the data put there */
            int bad = !strncmp(ln, "!", 1) || !strncmp(ln, "system", 6) || !strncmp(ln, "<script", 7) ||
                      !strncmp(ln, "# *bold*", 8) || !strncmp(ln, "tl'", 3);
            if (bad || !gp_line_contained(ln, len, "touch ") || !gp_line_contained(ln, len, "pw_") ||
                memchr(ln, '\r', len) || memchr(ln, '\x01', len) || memchr(ln, '\x1b', len))
                fail_msg("%s: data reaches gnuplot as a command: %.*s", e->d_name, (int)len, ln);
            ln += len;
            if (*ln) ln++;
        }
        free(s);
    }
    closedir(d);
    (void)pl;
    assert_true(nscripts > 5);
    assert_true(nwith > 0); /* the payloads did reach the scripts (as titles), so the check means something */
}

static void test_injection(void **state)
{
    (void)state;
    struct payloads pl;
    make_payloads(&pl);
    char evil[400], dir[400];
    snprintf(evil, sizeof evil, "%s/evil.jsonl", g_tmp);
    snprintf(dir, sizeof dir, "%s/r", g_tmp);
    write_evil(evil, &pl);
    char *argv[] = { (char *)"report", evil, (char *)"--out", dir, (char *)"--svg-only", (char *)"-q", NULL };
    int rc = hb_cmd_report(6, argv);
    /* no injected command ran */
    for (int i = 0; i < 9; i++)
        if (exists(pl.pw[i])) fail_msg("%s was created: the results file ran a command", pl.pw[i]);
    assert_int_equal(rc, HB_EXIT_OK);
    check_gp_scripts(dir, &pl);

    char p[500];
    /* report.md: the text shown escaped, each string on one line */
    snprintf(p, sizeof p, "%s/report.md", dir);
    char *md = hb_test_slurp(p);
    assert_non_null(md);
    for (const char *q = md; (q = strstr(q, "<script")); q++)
        if (q == md || q[-1] != '\\') fail_msg("report.md: raw <script at offset %ld", (long)(q - md));
    assert_non_null(strstr(md, "\\<script\\>alert(1)\\</script\\>\\|\\`b\\`"));
    assert_non_null(strstr(md, "\\<script\\>alert(2)\\</script\\>"));
    assert_non_null(strstr(md, "\\<script\\>alert(6)\\</script\\>"));
    assert_non_null(strstr(md, "\\<script\\>alert(7)\\</script\\>"));
    assert_non_null(strstr(md, "\\# \\*bold\\* \\_em\\_ \\[l\\](x) \\|\\`m\\`"));
    for (char *ln = md; *ln;) {
        size_t len = strcspn(ln, "\n");
        if (!strncmp(ln, "!touch", 6) || !strncmp(ln, "system(", 7) || !strncmp(ln, "# *bold*", 8) ||
            !strncmp(ln, "<script", 7) || memchr(ln, '\r', len) || memchr(ln, '\x01', len) || memchr(ln, '\x1b', len))
            fail_msg("report.md: data breaks out of its line: %.*s", (int)len, ln);
        ln += len;
        if (*ln) ln++;
    }
    free(md);

    /* index.html: &lt;script&gt;, never <script (the SVGs inlined included) */
    snprintf(p, sizeof p, "%s/index.html", dir);
    char *html = hb_test_slurp(p);
    assert_non_null(html);
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "<SCRIPT"));
    assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(html, "&lt;script&gt;alert(2)&lt;/script&gt;"));
    assert_non_null(strstr(html, "&lt;script&gt;alert(6)&lt;/script&gt;"));
    assert_non_null(strstr(html, "&lt;script&gt;alert(7)&lt;/script&gt;"));
    assert_non_null(strstr(html, "#&#39;&quot;&lt;script&gt;"));
    free(html);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_helpers),
        cmocka_unit_test(test_injection),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
