/*
 * fuzz_report.c - libFuzzer target for the report's writers (harness/report): the input is a
 * results file, loaded as `hybench report` loads it (hb_report_load), analysed (hb_report_analyze:
 * the summary, the document, every plot's .dat data and .gp gnuplot script) and rendered
 * (hb_report_render: index.html and report.md) into a scratch directory. gnuplot is never run
 * (hb_report_plots_run is not called; the pages then carry "plot not drawn" placeholders).
 *
 * Besides "no crash, no leak, no undefined behaviour", two oracles for issue 18's injection:
 *  - the escaping helpers on the raw input: hb_report_gp_str (no control character, every quote
 *    doubled), hb_report_gp_comment (no control character, no backslash), hb_report_md_esc (one
 *    line, every Markdown metacharacter backslash-escaped) and hb_report_html_esc (no < > " ',
 *    every & starts an entity);
 *  - every line of every .gp script written: outside single-quoted strings and comments there is no
 *    backquote and no "system", no line starts with '!' (a shell escape), no single-quoted string
 *    is left open and no comment ends with a backslash (which would continue it onto the next
 *    line); report.md and index.html contain no unescaped "<script" (hybench's own pages have none).
 * Run from the repository root (the templates in reports/ are found there), as `make fuzz` does.
 */
#include <dirent.h>
#include <limits.h>
#include <strings.h>
#include <sys/stat.h>
#include "fuzz_util.h"
#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FAIL(...) do { fprintf(stderr, "fuzz_report: " __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)

static int is_ctrl(unsigned char c) { return c < 0x20 || c == 0x7f; }

static char *capture(void (*fn)(FILE *, const char *), const char *s, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) abort();
    fn(f, s);
    if (fclose(f) != 0) abort();
    return buf;
}

static void check_escapes(const char *s)
{
    const char *g = hb_report_gp_str(s);
    for (size_t i = 0; g[i]; i++) {
        if (is_ctrl((unsigned char)g[i])) FAIL("gp_str: control character 0x%02x at %zu", g[i], i);
        if (g[i] == '\'') {
            if (g[i + 1] != '\'') FAIL("gp_str: a single quote not doubled at %zu", i);
            i++;
        }
    }
    const char *c = hb_report_gp_comment(s);
    for (size_t i = 0; c[i]; i++)
        if (is_ctrl((unsigned char)c[i]) || c[i] == '\\') FAIL("gp_comment: 0x%02x at %zu", c[i], i);
    size_t n;
    char *m = capture(hb_report_md_esc, s, &n);
    for (size_t i = 0; i < n; i++) {
        if (is_ctrl((unsigned char)m[i])) FAIL("md_esc: control character 0x%02x at %zu", m[i], i);
        if (m[i] == '\\') {
            if (i + 1 >= n || !strchr("\\`*_[]<>#|", m[i + 1])) FAIL("md_esc: stray backslash at %zu", i);
            i++;
        } else if (strchr("`*_[]<>#|", m[i])) FAIL("md_esc: unescaped '%c' at %zu", m[i], i);
    }
    free(m);
    char *h = capture(hb_report_html_esc, s, &n);
    for (size_t i = 0; i < n; i++) {
        if (strchr("<>\"'", h[i])) FAIL("html_esc: unescaped '%c' at %zu", h[i], i);
        if (h[i] == '&') {
            static const char *const ent[] = { "&lt;", "&gt;", "&amp;", "&quot;", "&#39;" };
            int ok = 0;
            for (size_t e = 0; e < sizeof ent / sizeof ent[0]; e++) ok |= strncmp(h + i, ent[e], strlen(ent[e])) == 0;
            if (!ok) FAIL("html_esc: bare '&' at %zu", i);
        }
    }
    free(h);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, k;
    char tmp[65536];
    while ((k = fread(tmp, 1, sizeof tmp, f)) > 0) {
        if (n + k + 1 > cap) { cap = (n + k + 1) * 2; buf = realloc(buf, cap); if (!buf) abort(); }
        memcpy(buf + n, tmp, k);
        n += k;
    }
    fclose(f);
    if (!buf) { buf = malloc(1); if (!buf) abort(); }
    buf[n] = 0;
    return buf;
}

/* The line discipline of a gnuplot script that hb_report_gp_str/gp_comment are meant to keep. */
static void check_script(const char *path)
{
    char *s = slurp(path);
    if (!s) FAIL("%s: cannot read", path);
    int lineno = 0;
    for (char *line = s, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        lineno++;
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '!') FAIL("%s:%d: line starts with a shell escape: %s", path, lineno, line);
        char q = 0; /* the open quote, if any */
        for (; *p; p++) {
            if (q == '\'') { if (*p == '\'') { if (p[1] == '\'') p++; else q = 0; } continue; }
            if (q == '"') { if (*p == '\\' && p[1]) p++; else if (*p == '"') q = 0; else if (*p == '`') FAIL("%s:%d: backquote: %s", path, lineno, line); continue; }
            if (*p == '\'' || *p == '"') { q = *p; continue; }
            if (*p == '#') {
                size_t l = strlen(p);
                if (l && p[l - 1] == '\\') FAIL("%s:%d: comment continued by a backslash: %s", path, lineno, line);
                break;
            }
            if (*p == '`') FAIL("%s:%d: backquote outside a string: %s", path, lineno, line);
            if (strncmp(p, "system", 6) == 0) FAIL("%s:%d: system outside a string: %s", path, lineno, line);
        }
        if (q == '\'') FAIL("%s:%d: single-quoted string left open: %s", path, lineno, line);
    }
    free(s);
}

static void check_no_script_tag(const char *path)
{
    char *s = slurp(path);
    if (!s) return; /* a page not written is the writer's error status, not an injection */
    /* report.md escapes '<' as "\\<" (shown as text); anything else is a tag */
    for (const char *t = s; (t = strcasestr(t, "<script")); t++)
        if (t == s || t[-1] != '\\') FAIL("%s: contains an unescaped <script", path);
    free(s);
}

/* Remove every file of dir (the writers create no subdirectories). */
static void empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[PATH_MAX];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p) unlink(p);
    closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char tpl[PATH_MAX], outdir[PATH_MAX];
    if (!tpl[0]) {
        if (!realpath("templates", tpl)) FAIL("run from the repository root (templates/style.gp not found)");
        snprintf(outdir, sizeof outdir, "%s/out", fz_tmpdir());
        if (mkdir(outdir, 0755) != 0) FAIL("mkdir %s", outdir);
    }
    /* the escaping helpers on the input as one string (up to its first NUL) */
    char *s = malloc(size + 1);
    if (!s) abort();
    memcpy(s, data, size);
    s[size] = 0;
    check_escapes(s);
    free(s);

    char *path = strdup(fz_write_file("r.jsonl", data, size));
    if (!path) abort();
    hb_report rp;
    memset(&rp, 0, sizeof rp);
    rp.svg_only = 1;
    snprintf(rp.name, sizeof rp.name, "fuzz");
    snprintf(rp.outdir, sizeof rp.outdir, "%s", outdir);
    snprintf(rp.tpl_dir, sizeof rp.tpl_dir, "%s", tpl);
    char err[1024] = "";
    char *paths[1] = { path };
    hb_status st = hb_report_load(&rp, paths, 1, err, sizeof err);
    if (st == HB_OK) {
        empty_dir(outdir);
        st = hb_report_analyze(&rp);
        if (st == HB_OK) st = hb_report_render(&rp, err, sizeof err);
        if (st == HB_OK) {
            DIR *d = opendir(outdir);
            if (!d) FAIL("opendir %s", outdir);
            struct dirent *e;
            char p[PATH_MAX];
            while ((e = readdir(d))) {
                size_t l = strlen(e->d_name);
                if (l > 3 && strcmp(e->d_name + l - 3, ".gp") == 0 &&
                    snprintf(p, sizeof p, "%s/%s", outdir, e->d_name) < (int)sizeof p)
                    check_script(p);
            }
            closedir(d);
            snprintf(err, sizeof err, "%s/report.md", outdir);
            check_no_script_tag(err);
            snprintf(err, sizeof err, "%s/index.html", outdir);
            check_no_script_tag(err);
        }
    } else if (!err[0] && st != HB_ENOMEM) {
        FAIL("load error %d without a message", (int)st);
    }
    hb_report_free(&rp);
    free(path);
    return 0;
}
