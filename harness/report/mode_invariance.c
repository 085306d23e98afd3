/* mode_invariance.c - the report's "Mode invariance" subsection of Q1: the mode-invariance check
 * (modecheck.h) of every input, recomputed from the case records so that results files written
 * before the check existed are checked too, and the per-row flags with which Q1 marks the cases
 * whose compute moved and leaves them out of its savings figures. See docs/report.md. */
#include "analysis/modecheck.h"
#include "report/report.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define F hb_report_fmt

void hb_report_mc_free(hb_report_mc *m)
{
    if (!m) return;
    for (int i = 0; i < m->nsets; i++) hb_mc_set_free(&m->sets[i]);
    free(m->sets);
    free(m->moved);
    free(m->ratio);
    memset(m, 0, sizeof *m);
}

/* The row of every case record of rp: v[off[run] + the record's index in its run] (-1: no row). */
typedef struct rowmap { long *v; size_t *off; } rowmap;

static void row_map_free(rowmap *m) { free(m->v); free(m->off); }

/* HB_OK or HB_ENOMEM (m empty) */
static hb_status row_map(const hb_report *rp, rowmap *m)
{
    m->off = malloc(((size_t)rp->nruns + 1) * sizeof *m->off);
    size_t n = 0;
    for (int r = 0; m->off && r < rp->nruns; r++) { m->off[r] = n; n += rp->runs[r].r.ncase_recs; }
    m->v = malloc((n + 1) * sizeof *m->v);
    if (!m->off || !m->v) { row_map_free(m); m->off = NULL; m->v = NULL; return HB_ENOMEM; }
    for (size_t i = 0; i < n; i++) m->v[i] = -1;
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        m->v[m->off[w->run] + (size_t)(w->rec - rp->runs[w->run].r.case_recs)] = (long)i;
    }
    return HB_OK;
}

/* The row of run r's case record rec, or -1. */
static long row_of(const hb_report *rp, const rowmap *m, int r, const hb_rec_case *rec)
{
    return m->v[m->off[r] + (size_t)(rec - rp->runs[r].r.case_recs)];
}

hb_status hb_report_mc_compute(const hb_report *rp, hb_report_mc *m)
{
    memset(m, 0, sizeof *m);
    m->sets = calloc((size_t)rp->nruns + 1, sizeof *m->sets);
    m->moved = calloc(rp->nrows + 1, 1);
    m->ratio = malloc((rp->nrows + 1) * sizeof *m->ratio);
    rowmap map = {0};
    if (!m->sets || !m->moved || !m->ratio || row_map(rp, &map) != HB_OK) { row_map_free(&map); hb_report_mc_free(m); return HB_ENOMEM; }
    for (size_t i = 0; i < rp->nrows; i++) m->ratio[i] = DNAN;
    for (int r = 0; r < rp->nruns; r++) {
        if (hb_mc_check(&rp->runs[r].r, HB_MC_PARALLEL | HB_MC_CI_BEYOND_TOL, &m->sets[r]) != HB_OK) { row_map_free(&map); hb_report_mc_free(m); return HB_ENOMEM; }
        m->nsets = r + 1;
        for (size_t k = 0; k < m->sets[r].n; k++) {
            const hb_mc_pair *p = &m->sets[r].v[k];
            long w = row_of(rp, &map, r, p->rec);
            if (w < 0) continue;
            m->ratio[w] = p->r.ratio;
            m->moved[w] = p->r.verdict == HB_MC_MOVED;
        }
    }
    row_map_free(&map);
    return HB_OK;
}

static const char *sget(const char *s) { return s ? s : ""; }

/* "convert/f32 1.31x [1.27, 1.35]" */
static const char *ratio_text(const hb_mc_pair *p)
{
    const char *fmt = p->r.ratio < 10 && p->r.hi < 10 ? "[%.3f, %.3f]" : "[%.3g, %.3g]";
    return F("%s/%s %sx %s", sget(p->rec->mode), sget(p->ref->mode), F(p->r.ratio < 10 ? "%.3f" : "%.3g", p->r.ratio),
             p->r.has_ci ? F(fmt, p->r.lo, p->r.hi)
             : p->r.verdict == HB_MC_INVARIANT ? F("(within %g%%)", 100 * HB_MC_TOL) : F("(no CI: fewer than %d samples)", HB_MC_MIN_SAMPLES));
}

void hb_report_mc_doc(hb_report *rp, const hb_report_mc *m, json_t *q)
{
    json_t *jm = json_object(), *jd = json_array(), *jb = json_array();
    json_object_set_new(q, "mode_invariance", jm);
    json_object_set_new(jm, "definition", json_string(
        "ratio = median(compute samples of a mode) / median(compute samples of f32, else the first mode present), status-ok cases "
        "of one run grouped by backend, op, shape, route, dtype and name; 95% percentile-bootstrap CI of the ratio; invariant: "
        "|ratio - 1| <= tolerance; moved: beyond it and the CI excludes 1; noisy: beyond it and the CI includes 1 or is absent"));
    json_object_set_new(jm, "tolerance", json_real(HB_MC_TOL));
    json_object_set_new(jm, "far", json_real(HB_MC_FAR));
    json_object_set_new(jm, "conf", json_real(HB_MC_CONF));
    json_object_set_new(jm, "resamples", json_integer(HB_MC_RESAMPLES));
    json_object_set_new(jm, "devices", jd);
    json_object_set_new(jm, "pairs_beyond_tol", jb);

    hb_doc_h(rp, 3, "q1-modes", "Mode invariance of the compute phase");
    hb_doc_p(rp, "The compute phase of one op, shape, dtype, route and backend must take the same time whichever mode fed it. "
                 "Per case, ratio = median compute time of the mode / that of f32 (of the first mode present when f32 did not run), "
                 "with a 95%% percentile-bootstrap CI from the raw compute samples (%d resamples, fixed seed; computed for the cases beyond 5%%, "
                 "whose verdict depends on it). Modes measured in the same rounds (each took one sample per round, in turns) are paired by round: "
                 "the ratio is the median of the per-round ratios and its CI the bootstrap of that median, so a host state that comes and goes "
                 "over seconds reaches both sides of each ratio. In a run of several passes the two modes are compared pass by pass (each pass ran both in one process): "
                 "the ratio is the median of the per-pass ratios, the interval their range, and a move needs every pass beyond %g%% on the same side. "
                 "Invariant: within %g%%; moved: beyond %g%% and the CI excludes 1 (beyond the samples' noise); "
                 "noisy: beyond %g%% but the CI includes 1, or a side has fewer than %d samples (no CI). A moved case measures the harness, "
                 "not the mode: Q1 marks it and leaves it out of its savings figures.",
             HB_MC_RESAMPLES, 100 * HB_MC_TOL, 100 * HB_MC_TOL, 100 * HB_MC_TOL, 100 * HB_MC_TOL, HB_MC_MIN_SAMPLES);
    rowmap map = {0};
    hb_mc_tally *t = calloc((size_t)rp->ndevs + 1, sizeof *t);
    size_t total = 0, moved = 0;
    if (row_map(rp, &map) != HB_OK || !t) { row_map_free(&map); free(t); return; }
    for (int r = 0; r < m->nsets; r++)
        for (size_t k = 0; k < m->sets[r].n; k++) {
            long w = row_of(rp, &map, r, m->sets[r].v[k].rec);
            if (w < 0) continue;
            hb_mc_tally_add(&t[rp->rows[w].dev], &m->sets[r].v[k]);
            total++;
            moved += m->sets[r].v[k].r.verdict == HB_MC_MOVED;
        }
    json_object_set_new(jm, "pairs", json_integer((json_int_t)total));
    json_object_set_new(jm, "moved", json_integer((json_int_t)moved));
    if (!total) {
        hb_doc_note(rp, "No case ran with status ok in more than one mode, so there is nothing to check.");
    } else {
        json_t *rows = hb_doc_table(rp, "Mode invariance per backend (compute-phase medians of each mode against the reference mode)", 0, 7,
                                    "backend", "pairs", "within 5%", "moved beyond noise", "noisy", "beyond 20%", "worst: modes, ratio [95% CI]");
        for (int d = 0; d < rp->ndevs; d++) {
            const hb_mc_tally *x = &t[d];
            if (!x->pairs) continue;
            json_t *o = hb_mc_tally_json(x);
            json_object_set_new(o, "device", json_string(rp->devs[d].id));
            json_object_set_new(o, "backend", json_string(rp->devs[d].backend));
            json_array_append_new(jd, o);
            const hb_mc_pair *wp = x->worst;
            const char *tone = x->moved ? "bad" : x->noisy ? "warn" : "good";
            hb_doc_row(rows, 7, rp->devs[d].id, F("%zu", x->pairs),
                       F("[%s] %zu (%s)", x->within == x->pairs ? "good" : tone, x->within, hb_report_fmt_pct(100.0 * (double)x->within / (double)x->pairs)),
                       F("%zu", x->moved), F("%zu", x->noisy), F("%zu", x->beyond_far),
                       wp ? F("%s %s: %s", sget(wp->rec->op), sget(wp->rec->shape_str), ratio_text(wp)) : "");
        }
        size_t nb = 0;
        for (int r = 0; r < m->nsets; r++)
            for (size_t k = 0; k < m->sets[r].n; k++) nb += m->sets[r].v[k].r.verdict != HB_MC_INVARIANT;
        if (nb) {
            rows = hb_doc_table(rp, F("Cases whose compute time differs by more than %g%% between modes (%zu)", 100 * HB_MC_TOL, nb), 1, 7,
                                "backend", "op", "shape", "route", "dtype", "modes, ratio [95% CI]", "verdict");
            for (int r = 0; r < m->nsets; r++)
                for (size_t k = 0; k < m->sets[r].n; k++) {
                    const hb_mc_pair *p = &m->sets[r].v[k];
                    long w = row_of(rp, &map, r, p->rec);
                    if (p->r.verdict == HB_MC_INVARIANT || w < 0) continue;
                    const char *dev = rp->devs[rp->rows[w].dev].id;
                    json_t *o = hb_mc_pair_json(p);
                    if (o) {
                        json_object_del(o, "type");
                        json_object_set_new(o, "device", json_string(dev));
                        json_array_append_new(jb, o);
                    }
                    hb_doc_row(rows, 7, dev, sget(p->rec->op), sget(p->rec->shape_str), rp->rows[w].route, rp->rows[w].dtype,
                               ratio_text(p), F("[%s] %s", p->r.verdict == HB_MC_MOVED ? "bad" : "warn", hb_mc_verdict_name(p->r.verdict)));
                }
        }
    }
    free(t);
    row_map_free(&map);
}
