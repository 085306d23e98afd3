/* trend.c - one machine's nightly history (analysis/trend.h): changes per case over the whole series,
 * the table of changes and one plot per op and backend, normalised to each case's first night. */
#include "analysis/trend.h"
#include "analysis/baseline.h"
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

hb_status hb_trend_analyze(const hb_series *x, const hb_cp_opts *o, hb_trend_change **v, size_t *n)
{
    *v = NULL;
    *n = 0;
    size_t nr = x->nruns, cap = 0;
    double *y = malloc((nr ? nr : 1) * sizeof *y);
    size_t *map = malloc((nr ? nr : 1) * sizeof *map);
    hb_change *c = malloc((nr ? nr : 1) * sizeof *c);
    if (!y || !map || !c) { free(y); free(map); free(c); return HB_ENOMEM; }
    for (size_t k = 0; k < x->ncases; k++) {
        size_t m = 0;
        for (size_t r = 0; r < nr; r++) {
            double d = x->median[k * nr + r];
            if (isfinite(d) && d > 0) { y[m] = log(d); map[m++] = r; }
        }
        size_t nc = hb_changepoints(y, m, o, c, nr);
        if (nc > nr) nc = nr;
        for (size_t i = 0; i < nc; i++) {
            if (*n == cap) {
                cap = cap ? 2 * cap : 64;
                hb_trend_change *a = realloc(*v, cap * sizeof *a);
                if (!a) { free(*v); *v = NULL; *n = 0; free(y); free(map); free(c); return HB_ENOMEM; }
                *v = a;
            }
            hb_trend_change *t = &(*v)[(*n)++];
            t->cas = k;
            t->c = c[i];
            t->run_begin = map[c[i].begin];
            t->run_end = map[c[i].end < m ? c[i].end : m - 1];
        }
    }
    free(y);
    free(map);
    free(c);
    return HB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* output                                                                                        */
/* ------------------------------------------------------------------------------------------ */
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

/* Markdown table cell: | escaped, newlines dropped. */
static void md_put(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s != '\n') fputc(*s, f);
    }
}

/* gnuplot single-quoted string. */
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

static const hb_trend_change *sort_base;
static int cmp_size(const void *a, const void *b)
{
    const hb_trend_change *x = &sort_base[*(const size_t *)a], *y = &sort_base[*(const size_t *)b];
    double u = fabs(x->c.size), w = fabs(y->c.size);
    return u > w ? -1 : u < w;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* type-7 quantile of sorted v[n] */
static double quant(const double *v, size_t n, double q)
{
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)h;
    return lo + 1 < n ? v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]) : v[n - 1];
}

static const char *kind_word(const hb_trend_change *c)
{
    if (c->c.kind == HB_CP_DRIFT) return c->c.size > 0 ? "drift (slower)" : "drift (faster)";
    return c->c.size > 0 ? "step (slower)" : "step (faster)";
}

int hb_trend_write(const hb_series *x, const char *fp, const char *desc, const hb_trend_change *v, size_t n,
                   const hb_trend_opts *t)
{
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/%s", t->out, fp);
    if (hb_mkdirs(dir, 1)) { fprintf(stderr, "hybench trend: cannot create %s\n", dir); return HB_EXIT_IO; }
    size_t nr = x->nruns, nc = x->ncases;
    size_t labelled = t->labelled ? t->labelled : 8;
    int rc = HB_EXIT_OK;
    /* changes, largest first */
    size_t *ord = malloc((n ? n : 1) * sizeof *ord);
    /* per case: its largest change (for the plots) */
    long *best = malloc((nc ? nc : 1) * sizeof *best);
    if (!ord || !best) { free(ord); free(best); return HB_EXIT_IO; }
    for (size_t i = 0; i < n; i++) ord[i] = i;
    sort_base = v;
    qsort(ord, n, sizeof *ord, cmp_size);
    for (size_t k = 0; k < nc; k++) best[k] = -1;
    for (size_t i = 0; i < n; i++) if (best[v[ord[i]].cas] < 0) best[v[ord[i]].cas] = (long)ord[i];

    size_t nchanged = 0;
    for (size_t k = 0; k < nc; k++) nchanged += best[k] >= 0;
    snprintf(path, sizeof path, "%s/changes.md", dir);
    FILE *md = fopen(path, "w");
    snprintf(path, sizeof path, "%s/index.html", dir);
    FILE *html = fopen(path, "w");
    if (!md || !html) {
        fprintf(stderr, "hybench trend: cannot write %s/changes.md or index.html\n", dir);
        if (md) fclose(md);
        if (html) fclose(html);
        free(ord); free(best);
        return HB_EXIT_IO;
    }
    fprintf(md, "# hybench trend: machine %s\n\n%s\n\n%zu nights (%s to %s), %zu cases, metric `%s`; "
                "%zu changes in %zu cases (Pettitt and Mann-Kendall tests, alpha %g and %g, at least %g%%; docs/history.md).\n\n",
            fp, desc ? desc : "", nr, nr ? x->runs[0].date : "", nr ? x->runs[nr - 1].date : "", nc, t->metric, n,
            nchanged, t->cp.alpha, t->cp.alpha_trend, t->cp.min_change * 100);
    fputs("| op | backend | case | change | began (night, date, run, commit) | size | per night | p |\n"
          "| --- | --- | --- | --- | --- | ---: | ---: | ---: |\n", md);
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hybench trend: ", html);
    html_put(html, fp);
    fputs("</title>\n<style>body{font-family:sans-serif;margin:1em;max-width:1450px}img{width:100%;border:1px solid #ccc}"
          "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}.r{color:#b00}.i{color:#080}"
          "</style></head><body>\n<h1>hybench nightly trend: machine ", html);
    html_put(html, fp);
    fputs("</h1>\n<p>", html);
    html_put(html, desc);
    fprintf(html, "</p>\n<p>%zu nights (%s to %s), %zu cases, metric <code>%s</code>; %zu changes in %zu cases "
                  "(steps and drifts over the whole series: Pettitt and Mann-Kendall rank tests, alpha %g and %g, at least "
                  "%g%%).</p>\n<h2>Changes</h2>\n<table><tr><th>op</th><th>backend</th><th>case</th><th>change</th>"
                  "<th>began</th><th>date</th><th>run</th><th>commit</th><th>size</th><th>per night</th><th>p</th></tr>\n",
            nr, nr ? x->runs[0].date : "", nr ? x->runs[nr - 1].date : "", nc, t->metric, n, nchanged, t->cp.alpha,
            t->cp.alpha_trend, t->cp.min_change * 100);
    for (size_t i = 0; i < n; i++) {
        const hb_trend_change *c = &v[ord[i]];
        const hb_store_case *k = &x->cases[c->cas];
        const hb_store_run *r = &x->runs[c->run_begin];
        char rate[32] = "";
        if (c->c.kind == HB_CP_DRIFT) snprintf(rate, sizeof rate, "%+.2f%%", c->c.rate * 100);
        fputs("| ", md); md_put(md, k->op); fputs(" | ", md); md_put(md, k->backend); fputs(" | ", md);
        md_put(md, k->label);
        if (k->occurrence) fprintf(md, " (#%d)", k->occurrence);
        fprintf(md, " | %s | %zu, %.10s, %s, %.12s | %+.1f%% | %s | %.2g |\n", kind_word(c), c->run_begin, r->date,
                r->run_id, r->commit, c->c.size * 100, rate, c->c.p);
        fputs("<tr><td>", html); html_put(html, k->op); fputs("</td><td>", html); html_put(html, k->backend);
        fputs("</td><td>", html); html_put(html, k->label);
        fprintf(html, "</td><td class=\"%s\">%s</td><td>%zu</td><td>%.10s</td><td>", c->c.size > 0 ? "r" : "i",
                kind_word(c), c->run_begin, r->date);
        html_put(html, r->run_id);
        fprintf(html, "</td><td>%.12s</td><td>%+.1f%%</td><td>%s</td><td>%.2g</td></tr>\n", r->commit,
                c->c.size * 100, rate, c->c.p);
    }
    fputs("</table>\n<h2>Plots</h2>\n<p>Per op and backend: each case's time divided by its time on its first "
          "night; the line is the median over the group's cases and the band their 10th to 90th percentile; the "
          "changed cases (largest first) are drawn and labelled, a marker at the night their change began.</p>\n", html);
    fclose(md);

    /* the plots: one gnuplot process, one script */
    FILE *gp = NULL;
    void (*old_pipe)(int) = SIG_DFL;
    if (t->plot) {
        char cmd[4400];
        size_t cl = (size_t)snprintf(cmd, sizeof cmd, "gnuplot 2>'");
        for (const char *s = dir; *s && cl + 8 < sizeof cmd; s++) {
            if (*s == '\'') { memcpy(cmd + cl, "'\\''", 4); cl += 4; }
            else cmd[cl++] = *s;
        }
        snprintf(cmd + cl, sizeof cmd - cl, "/gnuplot.log'");
        old_pipe = signal(SIGPIPE, SIG_IGN);
        gp = popen(cmd, "w");
        if (!gp) { fprintf(stderr, "hybench trend: cannot start gnuplot\n"); rc = HB_EXIT_IO; signal(SIGPIPE, old_pipe); }
        else
            fputs("set terminal svg size 1400,900 dynamic enhanced font 'sans,16' background rgb 'white'\n"
                  "set grid xtics ytics lc rgb '#dddddd'\nset key outside bottom center vertical maxrows 5 font ',14' noenhanced\n"
                  "set xlabel 'night (date)'\nset ylabel 'time / time on the first night'\n"
                  "set style fill transparent solid 0.25 noborder\nset datafile missing 'NaN'\n", gp);
    }
    double *norm = malloc((nc ? nc : 1) * sizeof *norm);
    double *col = malloc((nc ? nc : 1) * sizeof *col);
    size_t *sel = malloc((nc ? nc : 1) * sizeof *sel);
    size_t nplots = 0;
    for (size_t g = 0; norm && col && sel && g < nc;) {
        size_t e = g;
        while (e < nc && !strcmp(x->cases[e].op, x->cases[g].op) && !strcmp(x->cases[e].backend, x->cases[g].backend)) e++;
        char bs[128], os[128], base[300], dat[4400], svg[4400];
        hb_host_slug(x->cases[g].backend, bs, sizeof bs);
        hb_host_slug(x->cases[g].op, os, sizeof os);
        snprintf(base, sizeof base, "%s__%s", os, bs);
        snprintf(dat, sizeof dat, "%s/%s.dat", dir, base);
        snprintf(svg, sizeof svg, "%s/%s.svg", dir, base);
        FILE *d = fopen(dat, "w");
        if (!d) { fprintf(stderr, "hybench trend: cannot write %s\n", dat); rc = HB_EXIT_IO; g = e; continue; }
        /* each case's first finite night */
        for (size_t k = g; k < e; k++) {
            norm[k - g] = NAN;
            for (size_t r = 0; r < nr; r++) {
                double m = x->median[k * nr + r];
                if (isfinite(m) && m > 0) { norm[k - g] = m; break; }
            }
        }
        fprintf(d, "# hybench trend: op %s, backend %s, machine %s, metric %s; time / the case's first night\n"
                   "# block 0: night p10 median p90 cases\n", x->cases[g].op, x->cases[g].backend, fp, t->metric);
        size_t ncase = 0;
        for (size_t k = g; k < e; k++) ncase += isfinite(norm[k - g]);
        for (size_t r = 0; r < nr; r++) {
            size_t m = 0;
            for (size_t k = g; k < e; k++) {
                double y = x->median[k * nr + r];
                if (isfinite(y) && isfinite(norm[k - g])) col[m++] = y / norm[k - g];
            }
            if (!m) { fprintf(d, "%zu NaN NaN NaN 0\n", r); continue; }
            qsort(col, m, sizeof *col, cmp_dbl);
            fprintf(d, "%zu %.6g %.6g %.6g %zu\n", r, quant(col, m, 0.1), quant(col, m, 0.5), quant(col, m, 0.9), m);
        }
        /* the changed cases of the group, largest change first */
        size_t ns = 0, nchg = 0;
        for (size_t i = 0; i < n; i++) {
            size_t k = v[ord[i]].cas;
            if (k < g || k >= e || best[k] != (long)ord[i]) continue;
            nchg++;
            if (ns < labelled) sel[ns++] = k;
        }
        for (size_t s = 0; s < ns; s++) {
            size_t k = sel[s];
            fputs("\n\n", d);
            fprintf(d, "# block %zu: night time/first  (%s)\n", s + 1, x->cases[k].label);
            for (size_t r = 0; r < nr; r++) {
                double y = x->median[k * nr + r];
                if (isfinite(y)) fprintf(d, "%zu %.6g\n", r, y / norm[k - g]);
            }
        }
        fclose(d);
        fputs("<h3>", html); html_put(html, x->cases[g].op); fputs(" on ", html); html_put(html, x->cases[g].backend);
        fprintf(html, " (%zu cases, %zu changed)</h3>\n", ncase, nchg);
        if (gp) {
            char title[600];
            snprintf(title, sizeof title, "%s on %s, machine %s: %zu cases, %zu changed (%zu largest drawn)", x->cases[g].op,
                     x->cases[g].backend, fp, ncase, nchg, ns);
            fputs("set output ", gp); gp_str(gp, svg);
            fputs("\nset title ", gp); gp_str(gp, title);
            fputs(" noenhanced\nunset label\nunset arrow\nset xtics (", gp);
            size_t step = nr > 12 ? (nr + 11) / 12 : 1;
            for (size_t r = 0; r < nr; r += step) fprintf(gp, "%s'%.10s' %zu", r ? ", " : "", x->runs[r].date, r);
            fprintf(gp, ") rotate by -30 font ',12'\nset xrange [-0.5:%zu]\n", nr > 1 ? nr - 1 : 1);
            for (size_t s = 0; s < ns; s++) {
                const hb_trend_change *c = &v[best[sel[s]]];
                double y = x->median[sel[s] * nr + c->run_begin] / norm[sel[s] - g];
                char lab[32];
                snprintf(lab, sizeof lab, "%zu", s + 1);
                fprintf(gp, "set label %zu ", s + 1);
                gp_str(gp, lab);
                fprintf(gp, " at %zu,%.6g point pt 7 ps 1.8 offset 0.6,1.0 font ',16' front\n", c->run_begin,
                        isfinite(y) ? y : 1.0);
            }
            fputs("plot ", gp);
            gp_str(gp, dat);
            fputs(" index 0 using 1:2:4 with filledcurves lc rgb '#9ecae1' title '10-90% of cases', '' index 0 using 1:3 "
                  "with lines lw 3 lc rgb '#08519c' title 'median of cases'", gp);
            static const char *const colors[] = { "#d62728", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22" };
            for (size_t s = 0; s < ns; s++) {
                const hb_trend_change *c = &v[best[sel[s]]];
                char key[600];
                snprintf(key, sizeof key, "%zu: %s, %s %+.1f%% from %.10s", s + 1, x->cases[sel[s]].label,
                         c->c.kind == HB_CP_DRIFT ? "drift" : "step", c->c.size * 100, x->runs[c->run_begin].date);
                fprintf(gp, ", '' index %zu using 1:2 with lines lw 1.5 lc rgb '%s' title ", s + 1, colors[s % 8]);
                gp_str(gp, key);
            }
            fputs("\n", gp);
            fputs("<p><img src=\"", html);
            html_put(html, base);
            fputs(".svg\" alt=\"trend plot\"></p>\n", html);
            nplots++;
        }
        g = e;
    }
    free(norm);
    free(col);
    free(sel);
    if (gp) {
        int st = pclose(gp);
        signal(SIGPIPE, old_pipe);
        if (st != 0) {
            fprintf(stderr, "hybench trend: gnuplot failed (exit %d); see %s/gnuplot.log; data files are kept\n", st, dir);
            rc = HB_EXIT_IO;
        }
    }
    fputs("</body></html>\n", html);
    if (fclose(html)) rc = HB_EXIT_IO;
    printf("hybench trend: machine %s: %zu nights, %zu cases, %zu changes in %zu cases, %zu plots in %s/\n", fp, nr, nc,
           n, nchanged, nplots, dir);
    free(ord);
    free(best);
    return rc;
}
