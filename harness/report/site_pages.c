/* site_pages.c - the HTML of `hybench publish`'s site (report/site.h): the landing page, a page per
 * machine (its steps and drifts, its cases in a filterable table) and a page per case (its history
 * graph, drawn by lib/site.js with dygraphs). Every string from the store goes through
 * hb_report_html_esc. */
#include "report/site.h"
#include "report/report.h"
#include "analysis/baseline.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define esc hb_report_html_esc

/* a time in seconds with a unit that keeps 1 to 3 digits before the point: "1.234 ms" */
static const char *fmt_time(double s, char *buf, size_t len)
{
    if (!isfinite(s)) { snprintf(buf, len, "-"); return buf; }
    double a = fabs(s);
    if (a >= 1) snprintf(buf, len, "%.4g s", s);
    else if (a >= 1e-3) snprintf(buf, len, "%.4g ms", s * 1e3);
    else if (a >= 1e-6) snprintf(buf, len, "%.4g \xc2\xb5s", s * 1e6);
    else snprintf(buf, len, "%.4g ns", s * 1e9);
    return buf;
}

static const char *kind_word(const hb_trend_change *c)
{
    if (c->c.kind == HB_CP_DRIFT) return c->c.size > 0 ? "drift (slower)" : "drift (faster)";
    return c->c.size > 0 ? "step (slower)" : "step (faster)";
}

static int cmp_size(const void *a, const void *b, void *base)
{
    const hb_trend_change *v = base, *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
    double u = fabs(x->c.size), w = fabs(y->c.size);
    return u > w ? -1 : u < w ? 1 : (x->cas > y->cas) - (x->cas < y->cas);
}

static void head(FILE *f, const char *root, const char *title, int graph)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
    esc(f, title);
    fputs("</title>\n", f);
    if (graph) fprintf(f, "<link rel=\"stylesheet\" href=\"%slib/dygraph.css\">\n", root);
    fprintf(f, "<link rel=\"stylesheet\" href=\"%slib/site.css\">\n", root);
    if (graph) fprintf(f, "<script src=\"%slib/dygraph.min.js\"></script>\n", root);
    fprintf(f, "<script src=\"%slib/site.js\"></script>\n", root);
}

/* a string field of a case's identity (ci->info JSON), or "" */
static const char *ident(json_t *info, const char *k)
{
    const char *s = json_string_value(json_object_get(info, k));
    return s ? s : "";
}

/* a date as its day (the first 10 characters: 2026-10-11), the whole in the title */
static void day_cell(FILE *f, const char *date)
{
    char d10[11];
    snprintf(d10, sizeof d10, "%.10s", date);
    fputs("<span title=\"", f);
    esc(f, date);
    fputs("\">", f);
    esc(f, d10);
    fputs("</span>", f);
}

/* a commit: its first 12 characters, the whole in the title */
static void commit_cell(FILE *f, const char *commit)
{
    fputs("<code title=\"", f);
    esc(f, commit);
    fputs("\">", f);
    char c12[13];
    snprintf(c12, sizeof c12, "%.12s", commit);
    esc(f, c12);
    fputs("</code>", f);
}

/* the run cell: the run id, linked to its report (href relative from a page root levels below the site) */
static void run_cell(FILE *f, const hb_store_run *r, int has_report, const char *root)
{
    if (has_report) {
        fprintf(f, "<a class=\"report\" href=\"%sruns/", root);
        esc(f, r->run_id);
        fputs("/index.html\">", f);
        esc(f, r->run_id);
        fputs("</a>", f);
    } else {
        esc(f, r->run_id);
        fputs(" <span class=\"muted\">(no report)</span>", f);
    }
}

static void change_row(FILE *f, const hb_series *x, const hb_trend_change *c, size_t idx, const int *has_report,
                       const char *root, const char *case_href, int with_case)
{
    const hb_store_case *k = &x->cases[c->cas];
    const hb_store_run *r = &x->runs[c->run_begin];
    fprintf(f, "<tr><td class=\"num\">%zu</td>", idx);
    if (with_case) {
        fprintf(f, "<td><a href=\"%s%lld.html#night=%zu\">", case_href, (long long)k->id, c->run_begin);
        esc(f, k->op);
        fputs(" ", f);
        esc(f, k->label);
        fputs("</a></td><td>", f);
        esc(f, k->backend);
        fputs("</td>", f);
    }
    fprintf(f, "<td class=\"%s\">%s</td><td class=\"num\">%+.1f%%</td><td class=\"num\">", c->c.size > 0 ? "slower" : "faster",
            kind_word(c), c->c.size * 100);
    if (c->c.kind == HB_CP_DRIFT) fprintf(f, "%+.2f%%", c->c.rate * 100);
    fprintf(f, "</td><td>night %zu, ", c->run_begin);
    day_cell(f, r->date);
    fputs("</td><td>", f);
    run_cell(f, r, has_report[c->run_begin], root);
    fputs("</td><td>", f);
    commit_cell(f, r->commit);
    fprintf(f, "</td><td class=\"num\">%.2g</td></tr>\n", c->c.p);
}

static int case_page(const hb_site_opts *o, const char *dir, const hb_series *x, const hb_series_ci *ci, size_t k,
                     const hb_trend_change *v, size_t n, const int *has_report, const char *fp, const char *name,
                     char *err, size_t errlen)
{
    const hb_store_case *c = &x->cases[k];
    char path[PATH_MAX];
    json_t *d = hb_site_case_json(x, ci, k, o->metric, v, n);
    if (!d) { snprintf(err, errlen, "out of memory"); return HB_EXIT_IO; }
    int bad = snprintf(path, sizeof path, "%s/c/%lld.js", dir, (long long)c->id) >= (int)sizeof path ||
              hb_site_write_js(path, "HB_CASE", d);
    const char *shape = ident(d, "shape_str"), *dtype = ident(d, "dtype"), *mode = ident(d, "mode"), *route = ident(d, "route");
    size_t npts = json_array_size(json_object_get(d, "points"));
    FILE *f = NULL;
    if (!bad && snprintf(path, sizeof path, "%s/c/%lld.html", dir, (long long)c->id) < (int)sizeof path)
        f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        json_decref(d);
        return HB_EXIT_IO;
    }
    char title[512];
    snprintf(title, sizeof title, "%s %s on %s: history", c->op, *shape ? shape : c->label, c->backend);
    head(f, "../../../", title, 1);
    fprintf(f, "<script src=\"../nights.js\"></script>\n<script src=\"%lld.js\"></script>\n</head><body>\n", (long long)c->id);
    fputs("<nav><a href=\"../../../index.html\">all machines</a> &rsaquo; <a href=\"../index.html\">machine <code>", f);
    esc(f, fp);
    fputs("</code></a></nav>\n<h1>", f);
    esc(f, c->op);
    fputs(" ", f);
    esc(f, *shape ? shape : c->label);
    fputs(" on ", f);
    esc(f, c->backend);
    fputs("</h1>\n<p>dtype <b>", f);
    esc(f, dtype);
    fputs("</b>, mode <b>", f);
    esc(f, mode);
    fputs("</b>, route <b>", f);
    esc(f, route);
    fputs("</b>; metric <b>", f);
    esc(f, o->metric);
    fputs("</b>; key <code>", f);
    esc(f, c->key);
    if (c->occurrence) fprintf(f, "</code> (occurrence %d)", c->occurrence);
    else fputs("</code>", f);
    fputs("<br><span class=\"muted\">machine ", f);
    esc(f, name);
    fprintf(f, "</span></p>\n<p>%zu of %zu nights have a median for this case (the others: absent or not ok).</p>\n", npts,
            x->nruns);
    fputs("<div id=\"graph\"></div>\n<div id=\"legend\"></div>\n"
          "<p class=\"muted\">One point per night: the case's median time per call; the band is the 95% confidence interval "
          "of that median. Numbered markers: where a step or drift began. Drag to zoom (shift-drag to pan, or the range selector below the axis), "
          "double-click to reset; hover for the night's run id and commit; click a point to open that night's "
          "report.</p>\n<h2>Steps and drifts</h2>\n", f);
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) nc += v[i].cas == k;
    if (!nc) fputs("<p>None found (Pettitt and Mann-Kendall tests over the whole series; docs/history.md).</p>\n", f);
    else {
        fputs("<table id=\"case-changes\"><tr><th>#</th><th>change</th><th>size</th><th>per night</th><th>began</th>"
              "<th>run (its report)</th><th>commit</th><th>p</th></tr>\n", f);
        size_t idx = 0;
        for (size_t i = 0; i < n; i++)
            if (v[i].cas == k) change_row(f, x, &v[i], ++idx, has_report, "../../../", "", 0);
        fputs("</table>\n", f);
    }
    fputs("<script>hbCasePage('../../../');</script>\n</body></html>\n", f);
    json_decref(d);
    if (fclose(f)) { snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)); return HB_EXIT_IO; }
    return HB_EXIT_OK;
}

static void filter_select(FILE *f, const char *label, int col)
{
    fprintf(f, "<label>%s <select data-col=\"%d\"><option value=\"\">all</option></select></label>\n", label, col);
}

int hb_site_write_machine(const hb_site_opts *o, const hb_series *x, const hb_series_ci *ci, const hb_trend_change *v,
                          size_t n, const char *fp, const char *name, const char *desc, hb_site_machine *m, char *err,
                          size_t errlen)
{
    size_t nr = x->nruns, nc = x->ncases;
    char dir[PATH_MAX], path[PATH_MAX + 32], t1[64], t2[64];
    snprintf(dir, sizeof dir, "%s/m/%s", o->out, fp);
    snprintf(path, sizeof path, "%s/c", dir);
    if (hb_mkdirs(path, 1)) { snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno)); return HB_EXIT_IO; }
    int *has_report = calloc(nr ? nr : 1, sizeof *has_report);
    size_t *ord = malloc((n ? n : 1) * sizeof *ord);
    long *best = malloc((nc ? nc : 1) * sizeof *best);
    if (!has_report || !ord || !best) {
        free(has_report); free(ord); free(best);
        snprintf(err, errlen, "out of memory");
        return HB_EXIT_IO;
    }
    int rc = HB_EXIT_OK;
    for (size_t r = 0; r < nr && !rc; r++) {
        int h = hb_site_add_report(o, x->runs[r].run_id, err, errlen);
        if (h < 0) rc = HB_EXIT_IO;
        has_report[r] = h > 0;
    }
    /* the landing page's row */
    memset(m, 0, sizeof *m);
    snprintf(m->fp, sizeof m->fp, "%s", fp);
    snprintf(m->name, sizeof m->name, "%s", name);
    if (nr) m->last = x->runs[nr - 1];
    m->last_report = nr && has_report[nr - 1];
    m->nights = nr;
    m->ncases = nc;
    for (size_t i = 0; i < n; i++) {
        ord[i] = i;
        if (v[i].c.kind == HB_CP_DRIFT) m->drifts++;
        else m->steps++;
        m->new_changes += nr && v[i].run_begin == nr - 1;
    }
    qsort_r(ord, n, sizeof *ord, cmp_size, (void *)v);
    for (size_t k = 0; k < nc; k++) best[k] = -1;
    for (size_t i = 0; i < n; i++) if (best[v[ord[i]].cas] < 0) best[v[ord[i]].cas] = (long)ord[i];
    size_t nchanged = 0;
    for (size_t k = 0; k < nc; k++) nchanged += best[k] >= 0;
    for (size_t i = 0; i < n && m->ntop < HB_SITE_TOP; i++) {
        const hb_trend_change *c = &v[ord[i]];
        const hb_store_case *k = &x->cases[c->cas];
        const hb_store_run *r = &x->runs[c->run_begin];
        hb_site_top *t = &m->top[m->ntop++];
        t->case_id = (long long)k->id;
        snprintf(t->what, sizeof t->what, "%s %s on %s", k->op, k->label, k->backend);
        t->drift = c->c.kind == HB_CP_DRIFT;
        t->size = c->c.size;
        t->night = c->run_begin;
        snprintf(t->date, sizeof t->date, "%s", r->date);
        snprintf(t->run_id, sizeof t->run_id, "%s", r->run_id);
        snprintf(t->commit, sizeof t->commit, "%s", r->commit);
        t->has_report = has_report[c->run_begin];
    }

    json_t *nj = rc ? NULL : hb_site_nights_json(x, fp, name, has_report);
    snprintf(path, sizeof path, "%s/nights.js", dir);
    if (!rc && (!nj || hb_site_write_js(path, "HB_NIGHTS", nj))) {
        snprintf(err, errlen, "cannot write %s: %s", path, nj ? strerror(errno) : "out of memory");
        rc = HB_EXIT_IO;
    }
    json_decref(nj);
    for (size_t k = 0; k < nc && !rc; k++) rc = case_page(o, dir, x, ci, k, v, n, has_report, fp, name, err, errlen);

    snprintf(path, sizeof path, "%s/index.html", dir);
    FILE *f = rc ? NULL : fopen(path, "w");
    if (!rc && !f) { snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)); rc = HB_EXIT_IO; }
    if (f) {
        char title[128];
        snprintf(title, sizeof title, "hybench history: machine %s", fp);
        head(f, "../../", title, 0);
        fputs("</head><body>\n<nav><a href=\"../../index.html\">all machines</a></nav>\n<h1>Machine <code>", f);
        esc(f, fp);
        fputs("</code></h1>\n<p><b>", f);
        esc(f, name);
        fputs("</b></p>\n<details><summary class=\"muted\">What the fingerprint stands for</summary><pre>", f);
        esc(f, desc ? desc : "");
        fprintf(f, "</pre></details>\n<p class=\"box\">%zu nights (", nr);
        day_cell(f, nr ? x->runs[0].date : "");
        fputs(" to ", f);
        day_cell(f, nr ? x->runs[nr - 1].date : "");
        fprintf(f, "), %zu cases, metric <code>", nc);
        esc(f, o->metric);
        fprintf(f, "</code>: <b>%zu steps and %zu drifts</b> in %zu cases (Pettitt and Mann-Kendall rank tests over each "
                   "case's whole series, alpha %g and %g, at least %g%%; docs/history.md).</p>\n",
                m->steps, m->drifts, nchanged, o->cp.alpha, o->cp.alpha_trend, o->cp.min_change * 100);
        fputs("<h2 id=\"changes\">Steps and drifts, largest first</h2>\n", f);
        if (!n) fputs("<p>None found.</p>\n", f);
        else {
            fputs("<table id=\"changes-table\"><tr><th>#</th><th>case (its graph)</th><th>backend</th><th>change</th>"
                  "<th>size</th><th>per night</th><th>began</th><th>run (its report)</th><th>commit</th><th>p</th></tr>\n", f);
            for (size_t i = 0; i < n; i++) change_row(f, x, &v[ord[i]], i + 1, has_report, "../../", "c/", 1);
            fputs("</table>\n", f);
        }
        fputs("<h2 id=\"cases-h\">Cases</h2>\n<div class=\"filters\">\n", f);
        static const char *const cols[] = { "op", "shape", "backend", "dtype", "mode", "route" };
        for (int i = 0; i < 6; i++) filter_select(f, cols[i], i);
        fputs("<label>search <input id=\"search\" type=\"search\" placeholder=\"any text\"></label>"
              "<span id=\"shown\" class=\"muted\"></span>\n</div>\n<table id=\"cases\"><thead><tr><th>op</th><th>shape</th>"
              "<th>backend</th><th>dtype</th><th>mode</th><th>route</th><th>nights</th><th>last median</th>"
              "<th>its 95% CI</th><th>largest change</th></tr></thead><tbody>\n", f);
        for (size_t k = 0; k < nc; k++) {
            const hb_store_case *c = &x->cases[k];
            json_t *info = ci && ci->info && ci->info[k] ? json_loads(ci->info[k], 0, NULL) : NULL;
            size_t nn = 0, last = nr;
            for (size_t r = 0; r < nr; r++)
                if (isfinite(x->median[k * nr + r])) { nn++; last = r; }
            fprintf(f, "<tr><td><a href=\"c/%lld.html\">", (long long)c->id);
            esc(f, c->op);
            fputs("</a></td><td>", f);
            esc(f, *ident(info, "shape_str") ? ident(info, "shape_str") : c->label);
            fputs("</td><td>", f);
            esc(f, c->backend);
            static const char *const idk[] = { "dtype", "mode", "route" };
            for (int i = 0; i < 3; i++) {
                fputs("</td><td>", f);
                esc(f, ident(info, idk[i]));
            }
            fprintf(f, "</td><td class=\"num\">%zu</td>", nn);
            if (last < nr) {
                double lo = ci ? ci->ci_lo[k * nr + last] : DNAN, hi = ci ? ci->ci_hi[k * nr + last] : DNAN;
                fprintf(f, "<td class=\"num\">%s</td><td class=\"num\">", fmt_time(x->median[k * nr + last], t1, sizeof t1));
                if (isfinite(lo) && isfinite(hi)) {
                    fputs(fmt_time(lo, t1, sizeof t1), f);
                    fputs(" - ", f);
                    fputs(fmt_time(hi, t2, sizeof t2), f);
                }
                fputs("</td>", f);
            } else fputs("<td>-</td><td></td>", f);
            if (best[k] >= 0) {
                const hb_trend_change *b = &v[best[k]];
                fprintf(f, "<td class=\"%s\">%s %+.1f%% from ", b->c.size > 0 ? "slower" : "faster",
                        b->c.kind == HB_CP_DRIFT ? "drift" : "step", b->c.size * 100);
                day_cell(f, x->runs[b->run_begin].date);
                fputs("</td></tr>\n", f);
            } else fputs("<td></td></tr>\n", f);
            json_decref(info);
        }
        fputs("</tbody></table>\n<h2 id=\"nights\">Nights, newest first</h2>\n<details><summary>every night of the series: "
              "date, run (its report), commit, cases</summary>\n<table id=\"nights-table\"><tr><th>night</th><th>date</th>"
              "<th>run (its report)</th><th>commit</th><th>host</th><th>cases</th></tr>\n", f);
        for (size_t r = nr; r-- > 0;) {
            fprintf(f, "<tr><td class=\"num\">%zu</td><td>", r);
            day_cell(f, x->runs[r].date);
            fputs("</td><td>", f);
            run_cell(f, &x->runs[r], has_report[r], "../../");
            fputs("</td><td>", f);
            commit_cell(f, x->runs[r].commit);
            fputs("</td><td>", f);
            esc(f, x->runs[r].host);
            fprintf(f, "</td><td class=\"num\">%zu</td></tr>\n", x->runs[r].ncases);
        }
        fputs("</table></details>\n<script>hbCaseTable();</script>\n</body></html>\n", f);
        if (fclose(f)) { snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)); rc = HB_EXIT_IO; }
    }
    free(has_report);
    free(ord);
    free(best);
    return rc;
}

int hb_site_write_index(const hb_site_opts *o, const hb_site_machine *m, size_t nm, const char *store_name, char *err,
                        size_t errlen)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/index.html", o->out);
    FILE *f = fopen(path, "w");
    if (!f) { snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)); return HB_EXIT_IO; }
    head(f, "", "hybench nightly history", 0);
    char now[32];
    time_t tnow = time(NULL);
    strftime(now, sizeof now, "%Y-%m-%d %H:%M UTC", gmtime(&tnow));
    fprintf(f, "</head><body>\n<h1>hybench nightly history</h1>\n<p class=\"muted\">Published %s by "
               "<code>hybench publish</code>.</p>\n<p>Store <code>", now);
    esc(f, store_name);
    fprintf(f, "</code>: %zu machine%s, told apart by their fingerprint (CPU, GPU, driver and library versions; never the "
               "host name). Metric <code>", nm, nm == 1 ? "" : "s");
    esc(f, o->metric);
    fputs("</code>. Steps and drifts: Pettitt and Mann-Kendall rank tests over each case's whole series "
          "(<code>hybench trend</code>, docs/history.md).</p>\n"
          "<table id=\"machines\"><tr><th>machine</th><th>name</th><th>nights</th><th>last night</th><th>run (its report)</th>"
          "<th>commit</th><th>cases</th><th>steps</th><th>drifts</th><th>began last night</th></tr>\n", f);
    for (size_t i = 0; i < nm; i++) {
        fputs("<tr><td><a href=\"m/", f);
        esc(f, m[i].fp);
        fputs("/index.html\"><code>", f);
        esc(f, m[i].fp);
        fputs("</code></a></td><td>", f);
        esc(f, m[i].name);
        fprintf(f, "</td><td class=\"num\">%zu</td><td>", m[i].nights);
        day_cell(f, m[i].last.date);
        fputs("</td><td>", f);
        run_cell(f, &m[i].last, m[i].last_report, "");
        fputs("</td><td>", f);
        commit_cell(f, m[i].last.commit);
        fprintf(f, "</td><td class=\"num\">%zu</td><td class=\"num\">%zu</td><td class=\"num\">%zu</td>"
                   "<td class=\"num\">%zu</td></tr>\n",
                m[i].last.ncases, m[i].steps, m[i].drifts, m[i].new_changes);
    }
    fputs("</table>\n", f);
    /* the largest changes of every machine, largest first */
    size_t nt = 0;
    for (size_t i = 0; i < nm; i++) nt += m[i].ntop;
    const hb_site_top **top = malloc((nt ? nt : 1) * sizeof *top);
    const char **tfp = malloc((nt ? nt : 1) * sizeof *tfp);
    if (!top || !tfp) {
        free(top); free(tfp); fclose(f);
        snprintf(err, errlen, "out of memory");
        return HB_EXIT_IO;
    }
    nt = 0;
    for (size_t i = 0; i < nm; i++)
        for (size_t j = 0; j < m[i].ntop; j++) { top[nt] = &m[i].top[j]; tfp[nt++] = m[i].fp; }
    for (size_t i = 1; i < nt; i++) /* insertion sort by |size|, descending, with the machines alongside */
        for (size_t j = i; j > 0 && fabs(top[j]->size) > fabs(top[j - 1]->size); j--) {
            const hb_site_top *a = top[j]; top[j] = top[j - 1]; top[j - 1] = a;
            const char *b = tfp[j]; tfp[j] = tfp[j - 1]; tfp[j - 1] = b;
        }
    fprintf(f, "<h2>Largest steps and drifts</h2>\n<p>The %d largest of each machine, largest first; the case opens at the "
               "night its change began.</p>\n", HB_SITE_TOP);
    if (!nt) fputs("<p>None found.</p>\n", f);
    else
        fputs("<table id=\"top-changes\"><tr><th>machine</th><th>case (its graph)</th><th>change</th><th>size</th>"
              "<th>began</th><th>run (its report)</th><th>commit</th></tr>\n", f);
    for (size_t i = 0; i < nt; i++) {
        const hb_site_top *t = top[i];
        hb_store_run r = { 0 };
        snprintf(r.run_id, sizeof r.run_id, "%s", t->run_id);
        fputs("<tr><td><code>", f);
        esc(f, tfp[i]);
        fputs("</code></td><td><a href=\"m/", f);
        esc(f, tfp[i]);
        fprintf(f, "/c/%lld.html#night=%zu\">", t->case_id, t->night);
        esc(f, t->what);
        fprintf(f, "</a></td><td class=\"%s\">%s</td><td class=\"num\">%+.1f%%</td><td>night %zu, ", t->size > 0 ? "slower" : "faster",
                t->drift ? (t->size > 0 ? "drift (slower)" : "drift (faster)") : (t->size > 0 ? "step (slower)" : "step (faster)"),
                t->size * 100, t->night);
        day_cell(f, t->date);
        fputs("</td><td>", f);
        run_cell(f, &r, t->has_report, "");
        fputs("</td><td>", f);
        commit_cell(f, t->commit);
        fputs("</td></tr>\n", f);
    }
    if (nt) fputs("</table>\n", f);
    free(top);
    free(tfp);
    fputs("</body></html>\n", f);
    if (fclose(f)) { snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)); return HB_EXIT_IO; }
    return HB_EXIT_OK;
}
