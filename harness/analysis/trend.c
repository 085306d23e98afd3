/* trend.c - nightly history (analysis/trend.h): the index read back, and one host's series of runs
 * compared step by step (analysis/compare.h) into a page of per-op, per-backend plots. */
#include "analysis/trend.h"
#include "analysis/baseline.h"
#include "core/rstats.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------ */
/* a small string -> index hash map (open addressing, FNV-1a)                                    */
/* ------------------------------------------------------------------------------------------ */
typedef struct smap { char **keys; size_t *vals; size_t cap, n; } smap;

static size_t smap_find(const smap *m, const char *k, int *found)
{
    size_t h = (size_t)hb_hash64(k) & (m->cap - 1);
    while (m->keys[h]) {
        if (!strcmp(m->keys[h], k)) { *found = 1; return h; }
        h = (h + 1) & (m->cap - 1);
    }
    *found = 0;
    return h;
}

static int smap_grow(smap *m)
{
    size_t nc = m->cap ? m->cap * 2 : 1024;
    smap n = { calloc(nc, sizeof(char *)), calloc(nc, sizeof(size_t)), nc, 0 };
    if (!n.keys || !n.vals) { free(n.keys); free(n.vals); return -1; }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        int f;
        size_t h = smap_find(&n, m->keys[i], &f);
        n.keys[h] = m->keys[i];
        n.vals[h] = m->vals[i];
        n.n++;
    }
    free(m->keys);
    free(m->vals);
    *m = n;
    return 0;
}

/* Index of k, inserting it with value *next (then ++*next) when absent. (size_t)-1 on ENOMEM. */
static size_t smap_get(smap *m, const char *k, size_t *next, int *inserted)
{
    *inserted = 0;
    if ((m->n + 1) * 2 > m->cap && smap_grow(m)) return (size_t)-1;
    int f;
    size_t h = smap_find(m, k, &f);
    if (f) return m->vals[h];
    if (!(m->keys[h] = strdup(k))) return (size_t)-1;
    m->vals[h] = (*next)++;
    m->n++;
    *inserted = 1;
    return m->vals[h];
}

static void smap_free(smap *m)
{
    for (size_t i = 0; i < m->cap; i++) free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------------------------------ */
/* trend                                                                                         */
/* ------------------------------------------------------------------------------------------ */


static int cmp_hist(const void *a, const void *b)
{
    const hb_hist_entry *x = a, *y = b;
    int c = strcmp(x->host, y->host);
    if (c) return c;
    c = strcmp(x->date, y->date);
    return c ? c : strcmp(x->run_id, y->run_id);
}

hb_hist_entry *hb_trend_read_index(const char *index, size_t *n, char *err, size_t errlen)
{
    FILE *f = fopen(index, "r");
    *n = 0;
    if (!f) { snprintf(err, errlen, "%.400s: cannot open (run tools/nightly.sh or hybench trend --add RESULTS)", index); return NULL; }
    size_t cap = 64;
    hb_hist_entry *v = malloc(cap * sizeof *v);
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    int lineno = 0;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", index);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");
    while (v && (len = getline(&line, &lcap, f)) > 0) {
        lineno++;
        json_error_t je;
        json_t *r = json_loadb(line, (size_t)len, 0, &je);
        if (!r) {
            if (len > 1) fprintf(stderr, "hybench trend: %s:%d: skipped (%s)\n", index, lineno, je.text);
            continue;
        }
        const char *file = hb_rec_str(r, "file");
        if (!file) { json_decref(r); continue; }
        if (*n == cap) {
            hb_hist_entry *nv = realloc(v, 2 * cap * sizeof *v);
            if (!nv) { free(v); v = NULL; json_decref(r); break; }
            v = nv;
            cap *= 2;
        }
        hb_hist_entry *e = &v[(*n)++];
        memset(e, 0, sizeof *e);
        snprintf(e->run_id, sizeof e->run_id, "%s", hb_rec_str(r, "run_id") ? hb_rec_str(r, "run_id") : "?");
        snprintf(e->date, sizeof e->date, "%s", hb_rec_str(r, "date") ? hb_rec_str(r, "date") : "");
        snprintf(e->commit, sizeof e->commit, "%s", hb_rec_str(r, "commit") ? hb_rec_str(r, "commit") : "");
        snprintf(e->host, sizeof e->host, "%s", hb_rec_str(r, "host") ? hb_rec_str(r, "host") : "unknown");
        if (access(file, R_OK) == 0) snprintf(e->file, sizeof e->file, "%s", file);
        else {
            const char *b = strrchr(file, '/');
            if (snprintf(e->file, sizeof e->file, "%s/%s", dir, b ? b + 1 : file) >= (int)sizeof e->file) {
                fprintf(stderr, "hybench trend: %s:%d: path too long, skipped\n", index, lineno);
                (*n)--;
            }
        }
        json_decref(r);
    }
    free(line);
    fclose(f);
    if (!v) { snprintf(err, errlen, "out of memory"); *n = 0; return NULL; }
    qsort(v, *n, sizeof *v, cmp_hist);
    return v;
}

typedef struct tcase {
    char *key, *op, *backend, *label;  /* owned */
} tcase;

static double case_median(json_t *c, const char *metric)
{
    const char *s = hb_rec_str(c, "status");
    if (!s || strcmp(s, "ok")) return NAN;
    json_t *a = json_object_get(json_object_get(c, "samples"), metric);
    size_t n = json_array_size(a), k = 0;
    if (n == 0) return hb_case_phase(c, metric, "median");
    double *x = malloc(n * sizeof *x);
    if (!x) return NAN;
    for (size_t i = 0; i < n; i++) {
        double v = json_number_value(json_array_get(a, i));
        if (isfinite(v)) x[k++] = v;
    }
    hb_rs_sort(x, k);
    double m = hb_rs_median_sorted(x, k);
    free(x);
    return m;
}

static char *slug_dup(const char *s)
{
    char buf[256];
    return strdup(hb_host_slug(s, buf, sizeof buf));
}

/* gnuplot single-quoted string: ' doubled. */
static void gp_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; s && *s; s++) {
        if (*s == '\'') fputc('\'', f);
        if (*s == '\n') { fputc(' ', f); continue; }
        fputc(*s, f);
    }
    fputc('\'', f);
}

static void html_put(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static int cmp_group(const void *a, const void *b, void *arg)
{
    const tcase *c = arg;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int r = strcmp(c[x].op, c[y].op);
    if (r) return r;
    r = strcmp(c[x].backend, c[y].backend);
    return r ? r : strcmp(c[x].key, c[y].key);
}

typedef struct flag_rec { size_t run, cas; signed char kind; double ratio, q; } flag_rec;

static const char *find_template(const char *given, char *buf, size_t len)
{
    if (given) return given;
    if (access("reports/trend.gp", R_OK) == 0) return "reports/trend.gp";
    char exe[PATH_MAX];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (l > 0) {
        exe[l] = 0;
        char *s = strrchr(exe, '/');
        if (s) {
            *s = 0;
            if (snprintf(buf, len, "%s/../reports/trend.gp", exe) < (int)len && access(buf, R_OK) == 0)
                return buf;
        }
    }
    return "reports/trend.gp";
}


int hb_trend_host(const hb_hist_entry *h, size_t nh, const hb_trend_opts *t)
{
    char slug[256], dir[PATH_MAX];
    hb_host_slug(h[0].host, slug, sizeof slug);
    snprintf(dir, sizeof dir, "%s/%s", t->out, slug);
    if (hb_mkdirs(dir, 1)) { fprintf(stderr, "hybench trend: cannot create %s\n", dir); return HB_EXIT_IO; }
    smap map = { 0 };
    size_t ncase = 0, capcase = 0;
    tcase *cases = NULL;
    double *med = NULL;           /* [capcase][nh] */
    signed char *flag = NULL;     /* [capcase][nh] */
    flag_rec *flags = NULL;
    size_t nflags = 0, capflags = 0;
    int rc = 0;
    hb_run prev = { 0 }, cur = { 0 };
    int have_prev = 0;
    char err[512];
    for (size_t r = 0; r < nh; r++) {
        if (hb_run_load(h[r].file, &cur, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench trend: %s (run skipped)\n", err);
            continue;
        }
        size_t i;
        json_t *c;
        json_array_foreach(cur.cases, i, c) {
            const char *key = hb_rec_str(c, "key");
            if (!key) continue;
            int ins;
            size_t idx = smap_get(&map, key, &ncase, &ins);
            if (idx == (size_t)-1) { rc = HB_EXIT_IO; goto done; }
            if (ins) {
                if (ncase > capcase) {
                    size_t nc = capcase ? capcase * 2 : 256;
                    tcase *a = realloc(cases, nc * sizeof *a);
                    if (a) cases = a;
                    double *m = a ? realloc(med, nc * nh * sizeof *m) : NULL;
                    if (m) med = m;
                    signed char *fl = m ? realloc(flag, nc * nh) : NULL;
                    if (!fl) { rc = HB_EXIT_IO; ncase--; goto done; }
                    flag = fl;
                    capcase = nc;
                }
                tcase *k = &cases[idx];
                char label[300];
                snprintf(label, sizeof label, "%s %s/%s/%s", hb_rec_str(c, "shape_str") ? hb_rec_str(c, "shape_str") : key,
                         hb_rec_str(c, "mode") ? hb_rec_str(c, "mode") : "?", hb_rec_str(c, "route") ? hb_rec_str(c, "route") : "?",
                         hb_rec_str(c, "dtype") ? hb_rec_str(c, "dtype") : "?");
                k->key = strdup(key);
                k->op = strdup(hb_rec_str(c, "op") ? hb_rec_str(c, "op") : "unknown");
                k->backend = strdup(hb_rec_str(c, "backend") ? hb_rec_str(c, "backend") : "unknown");
                k->label = strdup(label);
                for (size_t q = 0; q < nh; q++) { med[idx * nh + q] = NAN; flag[idx * nh + q] = 0; }
            }
            med[idx * nh + r] = case_median(c, t->cmp.metric);
        }
        if (have_prev) {
            char why[512];
            if (!hb_cmp_comparable(&prev, &cur, why, sizeof why))
                fprintf(stderr, "hybench trend: %s -> %s: %s; step not judged\n", h[r - 1].run_id, h[r].run_id, why);
            else {
                hb_cmp_result res;
                if (hb_compare_runs(&prev, &cur, &t->cmp, &res, err, sizeof err) != HB_OK) {
                    fprintf(stderr, "hybench trend: %s\n", err);
                    rc = HB_EXIT_IO;
                    goto done;
                }
                for (size_t k = 0; k < res.n; k++) {
                    const hb_cmp_case *cc = &res.cases[k];
                    signed char kind = cc->verdict == HB_CMP_REGRESSION ? 1 : cc->verdict == HB_CMP_IMPROVEMENT ? -1
                                     : (cc->verdict == HB_CMP_WRONG || cc->verdict == HB_CMP_CRASHED ||
                                        cc->verdict == HB_CMP_LOST) ? 2 : 0;
                    if (!kind || !cc->cur) continue;
                    int f;
                    if (!map.cap) continue;
                    const char *key = hb_rec_str(cc->cur, "key");
                    size_t hpos = smap_find(&map, key ? key : "", &f);
                    if (!f) continue;
                    size_t idx = map.vals[hpos];
                    flag[idx * nh + r] = kind;
                    if (nflags == capflags) {
                        size_t nc = capflags ? 2 * capflags : 64;
                        flag_rec *a = realloc(flags, nc * sizeof *a);
                        if (!a) { hb_cmp_result_free(&res); rc = HB_EXIT_IO; goto done; }
                        flags = a;
                        capflags = nc;
                    }
                    flags[nflags++] = (flag_rec){ r, idx, kind, cc->ratio, cc->q };
                }
                hb_cmp_result_free(&res);
            }
            hb_run_free(&prev);
        }
        prev = cur;
        memset(&cur, 0, sizeof cur);
        have_prev = 1;
    }
    if (have_prev) hb_run_free(&prev);
    if (ncase == 0) { fprintf(stderr, "hybench trend: host %s: no readable runs\n", h[0].host); rc = HB_EXIT_USAGE; goto done; }

    /* groups (op, backend): sort case indices */
    size_t *ord = malloc(ncase * sizeof *ord);
    if (!ord) { rc = HB_EXIT_IO; goto done; }
    for (size_t i = 0; i < ncase; i++) ord[i] = i;
    qsort_r(ord, ncase, sizeof *ord, cmp_group, cases);

    char path[PATH_MAX + 64], tbuf[PATH_MAX];
    snprintf(path, sizeof path, "%s/index.html", dir);
    FILE *html = fopen(path, "w");
    if (!html) { fprintf(stderr, "hybench trend: cannot write %s\n", path); free(ord); rc = HB_EXIT_IO; goto done; }
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hybench trend: ", html);
    html_put(html, h[0].host);
    fputs("</title>\n<style>body{font-family:sans-serif;margin:1em}img{max-width:100%;border:1px solid #ccc}"
          "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;font-size:90%}"
          ".r{color:#b00}.i{color:#080}</style></head><body>\n<h1>hybench nightly trend: ", html);
    html_put(html, h[0].host);
    fprintf(html, "</h1>\n<p>%zu runs, from %s to %s; metric <code>%s</code>; steps judged as by "
                  "<code>hybench compare</code> (threshold %g%%, FDR %g, bootstrap CI rule).</p>\n",
            nh, h[0].date, h[nh - 1].date, t->cmp.metric, t->cmp.threshold * 100, t->cmp.alpha);
    fprintf(html, "<h2>Flagged steps (%zu)</h2>\n", nflags);
    if (nflags) {
        fputs("<table><tr><th>run</th><th>date</th><th>commit</th><th>op</th><th>backend</th><th>case</th>"
              "<th>verdict</th><th>change</th><th>p (BH)</th></tr>\n", html);
        for (size_t i = nflags; i-- > 0;) {
            const flag_rec *fr = &flags[i];
            const tcase *k = &cases[fr->cas];
            fputs("<tr><td>", html); html_put(html, h[fr->run].run_id);
            fputs("</td><td>", html); html_put(html, h[fr->run].date);
            char shortc[16];
            snprintf(shortc, sizeof shortc, "%.12s", h[fr->run].commit);
            fputs("</td><td>", html); html_put(html, shortc);
            fputs("</td><td>", html); html_put(html, k->op);
            fputs("</td><td>", html); html_put(html, k->backend);
            fputs("</td><td>", html); html_put(html, k->label);
            fprintf(html, "</td><td class=\"%s\">%s</td><td>%+.1f%%</td><td>%.2g</td></tr>\n",
                    fr->kind == -1 ? "i" : "r",
                    fr->kind == 1 ? "regression" : fr->kind == -1 ? "improvement" : "status failure",
                    isfinite(fr->ratio) ? (fr->ratio - 1) * 100 : 0.0, isfinite(fr->q) ? fr->q : 1.0);
        }
        fputs("</table>\n", html);
    }
    fputs("<h2>Plots</h2>\n", html);

    const char *tmpl = find_template(t->tmpl, tbuf, sizeof tbuf);
    int plotted = 0, plot_fail = 0;
    size_t step = nh > 15 ? (nh + 14) / 15 : 1;
    for (size_t g = 0; g < ncase;) {
        size_t e = g;
        while (e < ncase && !strcmp(cases[ord[e]].op, cases[ord[g]].op) &&
               !strcmp(cases[ord[e]].backend, cases[ord[g]].backend)) e++;
        const tcase *k0 = &cases[ord[g]];
        char *bslug = slug_dup(k0->backend), *oslug = slug_dup(k0->op);
        char base[PATH_MAX + 64], dat[PATH_MAX + 80], svg[PATH_MAX + 80];
        snprintf(base, sizeof base, "%s__%s", oslug ? oslug : "op", bslug ? bslug : "backend");
        int tl = snprintf(dat, sizeof dat, "%s/%s.dat", dir, base);
        tl |= snprintf(svg, sizeof svg, "%s/%s.svg", dir, base);
        free(bslug);
        free(oslug);
        if (tl >= (int)sizeof dat) { fprintf(stderr, "hybench trend: path too long in %s\n", dir); rc = HB_EXIT_IO; g = e; continue; }
        FILE *d = fopen(dat, "w");
        if (!d) { fprintf(stderr, "hybench trend: cannot write %s\n", dat); rc = HB_EXIT_IO; g = e; continue; }
        fprintf(d, "# hybench trend: op %s, backend %s, host %s, metric %s\n"
                   "# one block per case: header line (title), then: run_index median_seconds flag run_id\n"
                   "# flag: 1 regression step, -1 improvement step, 2 status failure, 0 none\n",
                k0->op, k0->backend, h[0].host, t->cmp.metric);
        size_t nblocks = 0;
        for (size_t q = g; q < e; q++) {
            size_t idx = ord[q];
            int any = 0;
            for (size_t r = 0; r < nh && !any; r++) any = isfinite(med[idx * nh + r]);
            if (!any) continue; /* never measured (skipped everywhere): no line, no legend entry */
            if (nblocks++) fputs("\n\n", d);
            fputc('"', d);
            for (const char *s = cases[idx].label; *s; s++) fputc(*s == '"' ? '\'' : *s, d);
            fputs("\"\n", d);
            int gap = 0;
            for (size_t r = 0; r < nh; r++) {
                double m = med[idx * nh + r];
                if (!isfinite(m)) { if (!gap) fputc('\n', d); gap = 1; continue; }
                gap = 0;
                fprintf(d, "%zu %.9g %d %s\n", r, m, flag[idx * nh + r], h[r].run_id);
            }
        }
        fclose(d);
        if (nblocks == 0) { unlink(dat); g = e; continue; }
        fputs("<h3>", html);
        html_put(html, k0->op);
        fputs(" on ", html);
        html_put(html, k0->backend);
        fprintf(html, " (%zu cases)</h3>\n", nblocks);
        if (t->plot) {
            /* gnuplot's stderr (including its harmless "no valid points" warnings for blocks
             * without a flagged step) goes to DIR/gnuplot.log */
            char cmd[2 * PATH_MAX + 64];
            size_t cl = (size_t)snprintf(cmd, sizeof cmd, "gnuplot 2>>'");
            for (const char *s = dir; *s && cl + 8 < sizeof cmd; s++) {
                if (*s == '\'') { memcpy(cmd + cl, "'\\''", 4); cl += 4; }
                else cmd[cl++] = *s;
            }
            snprintf(cmd + cl, sizeof cmd - cl, "/gnuplot.log'");
            void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN); /* gnuplot may die early */
            FILE *gp = popen(cmd, "w");
            if (!gp) { plot_fail++; signal(SIGPIPE, old_pipe); }
            else {
                char title[512];
                snprintf(title, sizeof title, "%s on %s (%s): median %s time per call", k0->op, k0->backend,
                         h[0].host, t->cmp.metric);
                fputs("datafile = ", gp); gp_str(gp, dat);
                fputs("\noutfile = ", gp); gp_str(gp, svg);
                fputs("\nplottitle = ", gp); gp_str(gp, title);
                fprintf(gp, "\nncases = %zu\nnruns = %zu\nylabel_text = 'median %s time per call'\n",
                        nblocks, nh, t->cmp.metric);
                fputs("xtics_cmd = 'set xtics (", gp);
                int first = 1;
                for (size_t r = 0; r < nh; r += step) {
                    char lab[128];
                    snprintf(lab, sizeof lab, "%.10s\\n%.7s", h[r].date, h[r].commit);
                    for (char *s = lab; *s; s++) if (*s == '\'' || *s == '"') *s = '_';
                    fprintf(gp, "%s\"%s\" %zu", first ? "" : ", ", lab, r);
                    first = 0;
                }
                fputs(") rotate by -30 font \",7\"'\n", gp);
                fputs("load ", gp); gp_str(gp, tmpl); fputs("\n", gp);
                int st = pclose(gp);
                signal(SIGPIPE, old_pipe);
                if (st != 0) plot_fail++;
                else {
                    plotted++;
                    fputs("<p><img src=\"", html);
                    html_put(html, base);
                    fputs(".svg\" alt=\"trend\"></p>\n", html);
                }
            }
        }
        g = e;
    }
    fputs("</body></html>\n", html);
    fclose(html);
    free(ord);
    printf("hybench trend: host %s: %zu runs, %zu cases, %zu flagged steps, %d plots in %s/\n",
           h[0].host, nh, ncase, nflags, plotted, dir);
    if (plot_fail) {
        fprintf(stderr, "hybench trend: %d plots failed (gnuplot missing or template %s unreadable); "
                        "data files are kept\n", plot_fail, tmpl);
        rc = HB_EXIT_IO;
    }
done:
    hb_run_free(&cur);
    for (size_t i = 0; i < ncase && cases; i++) {
        free(cases[i].key); free(cases[i].op); free(cases[i].backend); free(cases[i].label);
    }
    free(cases);
    free(med);
    free(flag);
    free(flags);
    smap_free(&map);
    return rc;
}

