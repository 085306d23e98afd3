/* runs_compare.c - the comparison of two or more runs (report/common.h): each later run against the
 * first, case by case, as ratios of total medians with intervals, side by side in one table (one
 * column per run), per backend summarised, and a plot of every ratio with its interval. */
#include "report/common.h"
#include "results/machine.h"

/* one case of the first run and its twins (same case key: op, shape, backend instance, mode,
 * route, dtype) in the later runs */
typedef struct cmp_row { size_t base; size_t *other; /* per run, (size_t)-1 when absent */ } cmp_row;

/* Ratio t_k / t_0 of two cases' total medians and the interval the two CIs allow:
 * [lo_k / hi_0, hi_k / lo_0] (conservative: each end at the CIs' extremes). */
static void ratio_ci(const hb_rrow *a, const hb_rrow *b, double *r, double *lo, double *hi)
{
    double alo, ahi, blo, bhi;
    ci_or_median(a, &alo, &ahi);
    ci_or_median(b, &blo, &bhi);
    *r = b->t[HB_PH_TOTAL] / a->t[HB_PH_TOTAL];
    *lo = blo / ahi;
    *hi = bhi / alo;
}

hb_status hb_report_runs(ctx *c)
{
    hb_report *rp = c->rp;
    if (rp->nruns < 2) return HB_OK;
    int nr = rp->nruns;
    json_t *jr = json_object(), *jruns = json_array(), *jsum = json_array();
    json_object_set_new(rp->summary, "runs_compared", jr);
    json_object_set_new(jr, "definition", json_string("ratio = total median of the case in run k / in the first run (below 1: run k faster); "
                                                      "interval = [ci_lo(k) / ci_hi(first), ci_hi(k) / ci_lo(first)], from each case's 95% CI of its median"));
    json_object_set_new(jr, "runs", jruns);
    json_object_set_new(jr, "by_backend", jsum);
    hb_doc_h(rp, 2, "runs", "Runs compared: each run against the first");
    for (int r = 0; r < nr; r++) {
        char fp[32], fpd[1024];
        hb_run_fingerprint(&rp->runs[r].r, fpd, sizeof fpd, fp, sizeof fp);
        json_array_append_new(jruns, json_pack("{s:s,s:s,s:s,s:s}", "label", rp->runs[r].label, "machine", fp, "machine_desc", fpd,
                                               "run_id", rp->runs[r].run_id));
    }
    hb_doc_p(rp, "Every ok case of the first run (%s) matched by its case key (op, shape, backend instance, mode, route, dtype) with the ok "
             "case of each later run: ratio = time in that run / time in the first (below 1: faster), with the interval the two medians' "
             "95%% CIs allow. A ratio whose interval excludes 1 is marked faster or slower; the others are within the noise. Runs are named "
             "host/machine fingerprint (CPU, GPU, driver and library versions: Run metadata).", rp->runs[0].label);
    /* index the later runs' ok rows by key */
    hb_strmap *idx = calloc((size_t)nr, sizeof *idx); /* per run: key -> row */
    size_t *first = malloc((rp->nrows + 1) * sizeof *first), nfirst = 0; /* the first run's rows of idx[0], in order */
    if (!idx || !first) { free(idx); free(first); return HB_ENOMEM; }
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        if (!w->ok || !*rkey(w)) continue;
        /* a key repeated within a run (a shape listed twice): the first occurrence is compared */
        if (hb_strmap_has(&idx[w->run], rkey(w))) continue;
        if (hb_strmap_set(&idx[w->run], rkey(w), i) != HB_OK) {
            for (int q = 0; q < nr; q++) hb_strmap_free(&idx[q]);
            free(idx);
            free(first);
            return HB_ENOMEM;
        }
        if (w->run == 0) first[nfirst++] = i;
    }
    /* the table: one row per case of the first run found in at least one later run */
    const char *heads[10];
    int ncol = 0;
    heads[ncol++] = "case";
    heads[ncol++] = "backend";
    heads[ncol++] = F("%s: median [95%% CI]", rp->runs[0].label);
    for (int r = 1; r < nr && ncol < 10; r++) heads[ncol++] = F("%s / first [interval]", rp->runs[r].label);
    json_t *rows = hb_doc_table(rp, "Every matched case: ratio to the first run (below 1: faster), interval from the two CIs", 1, ncol,
                                heads[0], heads[1], heads[2], ncol > 3 ? heads[3] : NULL, ncol > 4 ? heads[4] : NULL,
                                ncol > 5 ? heads[5] : NULL, ncol > 6 ? heads[6] : NULL, ncol > 7 ? heads[7] : NULL,
                                ncol > 8 ? heads[8] : NULL, ncol > 9 ? heads[9] : NULL);
    groups sum = { 0 };
    char key[512];
    FILE *dat = NULL;
    hb_plot *p = NULL;
    int nser = 0;
    hb_sb body = { 0 };
    hb_status st = HB_OK;
    for (int r = 1; r < nr; r++) {
        size_t npts = 0;
        /* data for the plot: ratios of run r sorted by value (gnuplot sorts nothing: write in order) */
        vec ratios = { 0 };
        for (size_t e = 0; e < nfirst; e++) {
            size_t v = first[e];
            const char *k = rkey(&rp->rows[v]);
            size_t o = hb_strmap_get(&idx[r], k, SIZE_MAX);
            if (o == SIZE_MAX) continue;
            const hb_rrow *a = &rp->rows[v], *b = &rp->rows[o];
            double ra, lo, hi;
            ratio_ci(a, b, &ra, &lo, &hi);
            snprintf(key, sizeof key, "%d|%s", r, row_dev(c, a)->backend);
            grp *g = grp_get(&sum, key, json_pack("{s:s,s:s}", "run", rp->runs[r].label, "backend", row_dev(c, a)->backend));
            if (g) {
                vec_push(&g->v[0], log(ra));
                if (lo > 1) vec_push(&g->v[1], ra);      /* slower beyond the noise */
                else if (hi < 1) vec_push(&g->v[2], ra); /* faster beyond the noise */
            }
            vec_push(&ratios, ra);
            npts++;
        }
        if (!npts) { free(ratios.v); continue; }
        if (!p) {
            p = hb_report_plot_begin(rp, "runs_ratio", "runs", F("Each case's time / its time in %s, interval from the CIs", rp->runs[0].label),
                                     900, 440, &dat);
            if (!p) { free(ratios.v); st = HB_EDEVICE; break; }
            hb_sb_printf(&body, "set title '%s'\nset logscale y 2\nset format y '%%.3g'\nset xlabel 'cases, sorted by ratio'\nset ylabel 'time / time in the first run'\n"
                         "set key inside top left box opaque\nplot 1 with lines lc rgb hb_c_ceiling dt 2 notitle", hb_report_gp_str(p->title));
        }
        /* sort the cases of run r by ratio: collect (ratio, lo, hi) and sort by ratio */
        double *trip = malloc(3 * npts * sizeof *trip);
        if (!trip) { free(ratios.v); st = HB_ENOMEM; break; }
        size_t t = 0;
        for (size_t e = 0; e < nfirst; e++) {
            size_t v = first[e];
            const char *k = rkey(&rp->rows[v]);
            size_t o = hb_strmap_get(&idx[r], k, SIZE_MAX);
            if (o == SIZE_MAX) continue;
            ratio_ci(&rp->rows[v], &rp->rows[o], &trip[3 * t], &trip[3 * t + 1], &trip[3 * t + 2]);
            t++;
        }
        /* insertion sort by ratio (a few thousand cases at most) */
        for (size_t i = 1; i < t; i++)
            for (size_t j = i; j > 0 && trip[3 * (j - 1)] > trip[3 * j]; j--)
                for (int q = 0; q < 3; q++) { double x = trip[3 * j + q]; trip[3 * j + q] = trip[3 * (j - 1) + q]; trip[3 * (j - 1) + q] = x; }
        if (nser) fprintf(dat, "\n\n");
        fprintf(dat, "# %s / %s: rank ratio lo hi\n", rp->runs[r].label, rp->runs[0].label);
        for (size_t i = 0; i < t; i++) fprintf(dat, "%zu %.6g %.6g %.6g\n", i + 1, trip[3 * i], trip[3 * i + 1], trip[3 * i + 2]);
        free(trip);
        hb_sb_printf(&body, ", \\\n     '%s.dat' index %d using 1:2:3:4 with yerrorbars lt %d pt 7 ps 0.5 title '%s'", p->id, nser, r,
                     hb_report_gp_str(F("%s / %s", rp->runs[r].label, rp->runs[0].label)));
        nser++;
        free(ratios.v);
    }
    if (st != HB_OK) {
        if (dat) fclose(dat);
        hb_sb_free(&body);
        for (int q = 0; q < nr; q++) hb_strmap_free(&idx[q]);
        free(idx);
        free(first);
        groups_free(&sum);
        return st;
    }
    /* the side-by-side table */
    for (size_t e = 0; e < nfirst; e++) {
        size_t v = first[e];
        const char *k = rkey(&rp->rows[v]);
        const hb_rrow *a = &rp->rows[v];
        const char *cell[10] = { 0 };
        int found = 0;
        cell[0] = F("%s %s %s %s %s", a->op, a->shape, a->mode, a->route, a->dtype);
        cell[1] = row_dev(c, a)->backend;
        cell[2] = fmt_time_ci(a);
        for (int r = 1; r < nr && r + 2 < 10; r++) {
            size_t o = hb_strmap_get(&idx[r], k, SIZE_MAX);
            if (o == SIZE_MAX) { cell[r + 2] = "not in this run"; continue; }
            found = 1;
            const hb_rrow *b = &rp->rows[o];
            double ra, lo, hi;
            ratio_ci(a, b, &ra, &lo, &hi);
            const char *txt = F("%.3g [%.3g, %.3g]%s", ra, lo, hi, b->ci_met == 0 || a->ci_met == 0 ? " \u2020" : "");
            cell[r + 2] = lo > 1 ? tone_cell("bad", F("%s slower", txt)) : hi < 1 ? tone_cell("good", F("%s faster", txt)) : txt;
        }
        if (!found) continue;
        hb_doc_row(rows, ncol, cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6], cell[7], cell[8], cell[9]);
    }
    /* per run and backend: geometric mean ratio, and how many cases moved beyond their noise */
    json_t *srows = hb_doc_table(rp, "Per run and backend: geometric mean of the ratios to the first run; cases slower or faster beyond their CIs", 0, 6,
                                 "run", "backend", "cases", "geometric mean ratio", "slower (interval > 1)", "faster (interval < 1)");
    for (size_t i = 0; i < sum.n; i++) {
        grp *g = &sum.g[i];
        double m = 0;
        for (size_t j = 0; j < g->v[0].n; j++) m += g->v[0].v[j];
        double gm = g->v[0].n ? exp(m / (double)g->v[0].n) : DNAN;
        json_array_append_new(jsum, json_pack("{s:s,s:s,s:I,s:o,s:I,s:I}", "run", gattr(g, "run"), "backend", gattr(g, "backend"),
                                              "n", (json_int_t)g->v[0].n, "geomean_ratio", hb_json_num(gm), "slower", (json_int_t)g->v[1].n,
                                              "faster", (json_int_t)g->v[2].n));
        hb_doc_row(srows, 6, gattr(g, "run"), gattr(g, "backend"), F("%zu", g->v[0].n), F("%.3g", gm),
                   g->v[1].n ? tone_cell("bad", F("%zu", g->v[1].n)) : "0", g->v[2].n ? tone_cell("good", F("%zu", g->v[2].n)) : "0");
    }
    if (!sum.n) hb_doc_note(rp, "No case of the first run has an ok twin (same case key) in a later run: nothing to compare.");
    if (p && st == HB_OK) {
        fclose(dat);
        hb_sb_printf(&body, "\n");
        st = hb_report_plot_script(rp, p, body.s);
        json_t *ids = plot_ids_new();
        plot_id_add(ids, p);
        hb_doc_plots(rp, ids);
    }
    hb_sb_free(&body);
    for (int q = 0; q < nr; q++) hb_strmap_free(&idx[q]);
    free(idx);
    free(first);
    groups_free(&sum);
    return st;
}
