/* compare_write.c - a comparison (analysis/compare.h) written out: Markdown for people and merge
 * requests, JSON for tools, JUnit XML for CI test reports, and the time format they share. */
#include "analysis/compare.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* formatting                                                                                   */
/* ------------------------------------------------------------------------------------------ */

char *hb_fmt_time(double s, char *buf, size_t len)
{
    if (!isfinite(s)) { snprintf(buf, len, "-"); return buf; }
    static const struct { double scale; const char *unit; } u[] = {
        { 1, "s" }, { 1e-3, "ms" }, { 1e-6, "\xc2\xb5s" }, { 1e-9, "ns" }
    };
    int i = 0;
    double a = fabs(s);
    while (i < 3 && a < u[i].scale * 0.9995) i++;
    double v = s / u[i].scale;
    double av = fabs(v);
    int dec = av >= 99.95 ? 0 : av >= 9.995 ? 1 : 2;
    snprintf(buf, len, "%.*f %s", dec, v, u[i].unit);
    return buf;
}

static char *fmt_pct(double ratio, char *buf, size_t len)
{
    if (!isfinite(ratio)) { snprintf(buf, len, "-"); return buf; }
    snprintf(buf, len, "%+.1f%%", (ratio - 1) * 100);
    return buf;
}

static char *fmt_p(double p, char *buf, size_t len)
{
    if (!isfinite(p)) snprintf(buf, len, "-");
    else if (p == 0) snprintf(buf, len, "<1e-300");
    else if (p < 1e-3) snprintf(buf, len, "%.1e", p);
    else snprintf(buf, len, "%.3f", p);
    return buf;
}

/* Markdown-safe copy: '|' escaped, '<' and '>' as entities (merge-request renderers take raw
 * HTML), newlines to spaces. */
static void md_put(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '\n' || *s == '\r') fputc(' ', f);
        else fputc(*s, f);
    }
}

static const char *nz(const char *s) { return s ? s : "?"; }

static void md_case_cells(FILE *f, const hb_cmp_case *c)
{
    fputs("| `", f);
    md_put(f, nz(c->op));
    fputs("` ", f);
    md_put(f, c->shape_str ? c->shape_str : c->key);
    const char *hash = strchr(c->key, '#');
    if (hash) { fputc(' ', f); md_put(f, hash); }
    fputs(" | ", f);
    md_put(f, nz(c->backend));
    fprintf(f, " | %s / %s / %s ", nz(c->mode), nz(c->route), nz(c->dtype));
}

static int cmp_ratio_desc(const void *a, const void *b)
{
    const hb_cmp_case *x = *(const hb_cmp_case *const *)a, *y = *(const hb_cmp_case *const *)b;
    double rx = isnan(x->ratio) ? -1 : x->ratio, ry = isnan(y->ratio) ? -1 : y->ratio;
    if (rx != ry) return (rx < ry) - (rx > ry);
    return strcmp(x->key, y->key);
}

static size_t select_cases(const hb_cmp_result *r, const hb_cmp_case **out, int (*pred)(const hb_cmp_case *, const hb_cmp_options *),
                           const hb_cmp_options *o)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++) if (pred(&r->cases[i], o)) out[k++] = &r->cases[i];
    qsort(out, k, sizeof *out, cmp_ratio_desc);
    return k;
}

static int pred_gate_status(const hb_cmp_case *c, const hb_cmp_options *o)
{
    return c->verdict != HB_CMP_REGRESSION && hb_cmp_verdict_fails(c->verdict, o);
}
static int pred_change(const hb_cmp_case *c, const hb_cmp_options *o)
{
    (void)o;
    return c->verdict == HB_CMP_REGRESSION || c->verdict == HB_CMP_IMPROVEMENT;
}
static int pred_near(const hb_cmp_case *c, const hb_cmp_options *o)
{
    (void)o;
    return c->verdict == HB_CMP_UNCHANGED && (c->ratio > 1 + c->threshold || c->ratio < 1 / (1 + c->threshold)) &&
           !hb_cmp_case_undecided(c); /* those are listed as undecided */
}
static int pred_undecided(const hb_cmp_case *c, const hb_cmp_options *o)
{
    (void)o;
    return hb_cmp_case_undecided(c);
}
static int pred_info(const hb_cmp_case *c, const hb_cmp_options *o)
{
    return c->verdict == HB_CMP_NEW || c->verdict == HB_CMP_FIXED ||
           (c->verdict == HB_CMP_MISSING && o->allow_missing) ||
           (c->verdict == HB_CMP_STILL_BAD && !(c->status_cur && !strcmp(c->status_cur, "skipped")));
}

static void md_status_cell(FILE *f, const char *status, double med)
{
    char t[32];
    if (!status) fputs("| absent ", f);
    else if (!strcmp(status, "ok")) fprintf(f, "| %s ", hb_fmt_time(med, t, sizeof t));
    else { fputs("| ", f); md_put(f, status); fputc(' ', f); }
}

static void run_row(FILE *f, const char *what, const hb_run *b, const hb_run *c,
                    const char *(*get)(const hb_run *))
{
    fprintf(f, "| %s | ", what);
    md_put(f, get(b) ? get(b) : "?");
    fputs(" | ", f);
    md_put(f, get(c) ? get(c) : "?");
    fputs(" |\n", f);
}
static const char *g_path(const hb_run *r) { return r->path; }
static const char *g_run_id(const hb_run *r) { return r->meta_rec ? r->meta_rec->run_id : NULL; }
static const char *g_commit(const hb_run *r) { return r->meta_rec ? r->meta_rec->git_commit : NULL; }
static const char *g_date(const hb_run *r) { return r->meta_rec ? r->meta_rec->date : NULL; }
static const char *g_host(const hb_run *r) { return r->meta_rec ? r->meta_rec->host : NULL; }
static const char *g_cpu(const hb_run *r) { return r->meta_rec ? r->meta_rec->cpu.model : NULL; }

/* Scoped threshold i's scope as --threshold takes it: BACKEND, OP or BACKEND/OP. */
static const char *thr_scope(const hb_cmp_options *o, int i, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s", o->per_backend[i].backend, *o->per_backend[i].backend && *o->per_backend[i].op ? "/" : "",
             o->per_backend[i].op);
    return buf;
}

static void md_thresholds(FILE *f, const hb_cmp_options *o)
{
    char sc[128];
    fprintf(f, "%g%%", o->threshold * 100);
    for (int i = 0; i < o->nper_backend; i++) fprintf(f, ", %s %g%%", thr_scope(o, i, sc, sizeof sc), o->per_backend[i].threshold * 100);
}

hb_status hb_cmp_write_markdown(FILE *f, const hb_cmp_result *r, const hb_run *base,
                                const hb_run *cur, const hb_cmp_options *o)
{
    const hb_cmp_case **sel = malloc((r->n + 1) * sizeof *sel);
    if (!sel) return HB_ENOMEM;
    char t1[32], t2[32], t3[32], t4[32];
    size_t nreg = r->count[HB_CMP_REGRESSION];
    fprintf(f, "## %s: %s\n\n", o->tool ? o->tool : "hybench compare",
            r->outcome == HB_CMP_FAIL ? "**FAIL**" : r->outcome == HB_CMP_INCONCLUSIVE ? "**INCONCLUSIVE**" : "**PASS**");
    if (r->outcome == HB_CMP_INCONCLUSIVE) {
        fputs("No case fails the gate, but the run cannot tell whether the current build is slower:", f);
        if (r->min_rounds > 0 && r->rounds < r->min_rounds)
            fprintf(f, " %d round%s, fewer than the minimum of %d;", r->rounds, r->rounds == 1 ? "" : "s", r->min_rounds);
        if (r->undecided)
            fprintf(f, " %zu case%s undecided (neither a significant regression nor cleared: the CI's upper end is above "
                       "1 + threshold%s)", r->undecided, r->undecided == 1 ? "" : "s",
                    r->count[HB_CMP_INSUFFICIENT] ? ", or too few samples" : "");
        fputs(". Neither a pass nor a fail: more rounds or samples, or a quieter machine, would decide it.\n\n", f);
    }
    if (r->fails) {
        fprintf(f, "%d case%s fail%s the gate (", r->fails, r->fails == 1 ? "" : "s", r->fails == 1 ? "s" : "");
        const char *sep = "";
        for (int v = 0; v < HB_CMP_VERDICT_COUNT; v++)
            if (r->count[v] && hb_cmp_verdict_fails((hb_cmp_verdict)v, o)) {
                fprintf(f, "%s%s: %zu", sep, hb_cmp_verdict_name(v), r->count[v]);
                sep = ", ";
            }
        fputs(").\n\n", f);
    }
    /* each case counted once: an unchanged case not cleared is undecided, not also unchanged */
    size_t open_unchanged = 0;
    for (size_t i = 0; i < r->n; i++)
        open_unchanged += r->cases[i].verdict == HB_CMP_UNCHANGED && hb_cmp_case_undecided(&r->cases[i]);
    fprintf(f, "%zu cases matched, %zu compared: %zu regression%s, %zu improvement%s, %zu unchanged",
            r->matched, r->tested, nreg, nreg == 1 ? "" : "s", r->count[HB_CMP_IMPROVEMENT],
            r->count[HB_CMP_IMPROVEMENT] == 1 ? "" : "s", r->count[HB_CMP_UNCHANGED] - open_unchanged);
    if (open_unchanged) fprintf(f, ", %zu undecided (no significant change, but a slowdown past the threshold not excluded)", open_unchanged);
    if (r->count[HB_CMP_INSUFFICIENT]) fprintf(f, ", %zu with too few samples (undecided too)", r->count[HB_CMP_INSUFFICIENT]);
    if (r->count[HB_CMP_SKIPPED]) fprintf(f, "; %zu skipped in both", r->count[HB_CMP_SKIPPED]);
    fputs(".", f);
    if (isfinite(r->shift))
        fprintf(f, " Median current/baseline ratio over all compared cases: %.3f (%s)%s.",
                r->shift, fmt_pct(r->shift, t1, sizeof t1),
                fabs(r->shift - 1) > o->threshold / 2 ? " - the whole run moved; suspect machine noise "
                                                        "or a change that affects every case" : "");
    fputs("\n\n", f);
    if (r->nfam) {
        int none = 0;
        fputs("Smallest slowdown this run could detect (a change of a whole op family, 80% power; the median over "
              "its compared cases): ", f);
        for (int i = 0; i < r->nfam; i++) {
            fputs(i ? ", " : "", f);
            md_put(f, r->fam[i].family);
            if (isfinite(r->fam[i].mde)) fprintf(f, " %+.1f%%", r->fam[i].mde * 100);
            else { fputs(" none", f); none = 1; }
            fprintf(f, " (%zu case%s)", r->fam[i].cases, r->fam[i].cases == 1 ? "" : "s");
        }
        fputs(none ? ". None: with so few rounds or samples the test cannot reach its significance level, whatever "
                     "the change.\n\n" : ".\n\n", f);
    }
    /* between-run noise per backend (each backend once, in key order) */
    int first = 1, noisy = 0;
    for (size_t i = 0; i < r->n; i++) {
        const hb_cmp_case *c = &r->cases[i];
        if (!isfinite(c->noise)) continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = isfinite(r->cases[j].noise) && !strcmp(nz(r->cases[j].backend), nz(c->backend));
        if (seen) continue;
        fputs(first ? "Between-run noise (robust spread of the per-case ratios): " : ", ", f);
        first = 0;
        md_put(f, nz(c->backend));
        fprintf(f, " %.1f%%", (exp(c->noise) - 1) * 100);
        if (exp(c->noise) - 1 > hb_cmp_threshold_for(o, c->backend, NULL)) { fputs(" (above its threshold)", f); noisy = 1; }
    }
    if (!first) fputs(o->noise_k > 0 ? "; thresholds raised to the noise level (--noise-scale).\n\n" : ".\n\n", f);
    if (noisy && o->noise_k <= 0)
        fputs("**Warning:** the two runs differ case by case by more than the threshold even where "
              "nothing changed; a gate at this threshold is not meaningful between them. Re-run on a "
              "quiet machine, raise the threshold, or use --noise-scale.\n\n", f);
    if (r->count[HB_CMP_REGRESSION] && r->count[HB_CMP_IMPROVEMENT] >= r->count[HB_CMP_REGRESSION])
        fputs("**Note:** as many significant improvements as regressions: typical of machine noise "
              "between the runs rather than of a code change.\n\n", f);

    fputs("| | baseline | current |\n| --- | --- | --- |\n", f);
    run_row(f, "file", base, cur, g_path);
    run_row(f, "run", base, cur, g_run_id);
    run_row(f, "commit", base, cur, g_commit);
    run_row(f, "date", base, cur, g_date);
    run_row(f, "host", base, cur, g_host);
    run_row(f, "CPU", base, cur, g_cpu);
    if ((base->meta_rec && base->meta_rec->load_avg.present) || (cur->meta_rec && cur->meta_rec->load_avg.present)) {
        /* meta.load_avg (1, 5, 15 min), when the run records it: a busy machine explains noise */
        fputs("| load average |", f);
        const hb_run *rr[2] = { base, cur };
        for (int k = 0; k < 2; k++) {
            const hb_rec_meta *m = rr[k]->meta_rec;
            fputc(' ', f);
            if (!m || !m->load_avg.present) fputs("?", f);
            for (size_t i = 0; m && i < m->load_avg.n; i++) /* a member that is no number printed 0, as before */
                fprintf(f, "%s%.2f", i ? " / " : "", isnan(m->load_avg.v[i]) ? 0.0 : m->load_avg.v[i]);
            fputs(" |", f);
        }
        fputs("\n", f);
    }
    if (!hb_cmp_interleaved(base, cur))
        fprintf(f, "\n**Not interleaved:** these two runs were taken at different times (%s and %s), not side by "
                   "side; drift of the machine between them is in every ratio. A merge gate should run both builds "
                   "interleaved (`hybench ab`, `tools/gate.sh`).\n",
                nz(g_date(base)), nz(g_date(cur)));
    fputs("\n", f);

    size_t k = select_cases(r, sel, pred_gate_status, o);
    if (k) {
        fprintf(f, "### Gate failures: status changes (%zu)\n\n", k);
        fputs("| case | backend | mode / route / dtype | baseline | current | verdict | reason |\n"
              "| --- | --- | --- | --- | --- | --- | --- |\n", f);
        for (size_t i = 0; i < k && (int)i < o->max_rows; i++) {
            const hb_cmp_case *c = sel[i];
            md_case_cells(f, c);
            md_status_cell(f, c->status_base, c->med_base);
            md_status_cell(f, c->status_cur, c->med_cur);
            fprintf(f, "| **%s** | ", hb_cmp_verdict_name(c->verdict));
            md_put(f, c->cur ? c->cur->reason : "not in the current run");
            fputs(" |\n", f);
        }
        if ((int)k > o->max_rows) fprintf(f, "\n... and %zu more (see the JSON output).\n", k - (size_t)o->max_rows);
        fputs("\n", f);
    }

    k = select_cases(r, sel, pred_change, o);
    fprintf(f, "### Significant changes (%zu regressions, %zu improvements), slowest first\n\n", nreg,
            r->count[HB_CMP_IMPROVEMENT]);
    if (!k) fputs("None.\n\n", f);
    else {
        fprintf(f, "| case | backend | mode / route / dtype | baseline median | current median | "
                   "change | %g%% CI | p (BH) | verdict |\n"
                   "| --- | --- | --- | ---: | ---: | ---: | --- | ---: | --- |\n", o->confidence * 100);
        for (size_t i = 0; i < k && (int)i < o->max_rows; i++) {
            const hb_cmp_case *c = sel[i];
            md_case_cells(f, c);
            char lo[32], hi[32];
            fprintf(f, "| %s | %s | %s | %s .. %s | %s | %s |\n", hb_fmt_time(c->med_base, t1, sizeof t1),
                    hb_fmt_time(c->med_cur, t2, sizeof t2), fmt_pct(c->ratio, t3, sizeof t3),
                    fmt_pct(c->ci_lo, lo, sizeof lo), fmt_pct(c->ci_hi, hi, sizeof hi),
                    fmt_p(c->q, t4, sizeof t4),
                    c->verdict == HB_CMP_REGRESSION ? "**regression**" : "improvement");
        }
        if ((int)k > o->max_rows) fprintf(f, "\n... and %zu more (see the JSON output).\n", k - (size_t)o->max_rows);
        fputs("\n", f);
    }

    k = select_cases(r, sel, pred_undecided, o);
    if (k) {
        if (r->outcome == HB_CMP_INCONCLUSIVE)
            fprintf(f, "### Undecided cases (%zu): neither a regression nor cleared (or too few samples), slowest first\n\n", k);
        else
            fprintf(f, "<details><summary>Undecided cases: %zu (neither a regression nor cleared, or too few samples)"
                       "</summary>\n\n", k);
        fprintf(f, "| case | backend | mode / route / dtype | baseline median | current median | change | %g%% CI | "
                   "p (BH) | smallest detectable |\n| --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: |\n",
                o->confidence * 100);
        for (size_t i = 0; i < k && (int)i < o->max_rows; i++) {
            const hb_cmp_case *c = sel[i];
            char lo[32], hi[32], mde[32];
            md_case_cells(f, c);
            if (isfinite(c->mde)) snprintf(mde, sizeof mde, "%+.1f%%", c->mde * 100);
            else snprintf(mde, sizeof mde, "%s", isnan(c->mde) ? "-" : "none");
            fprintf(f, "| %s | %s | %s | %s .. %s | %s | %s |\n", hb_fmt_time(c->med_base, t1, sizeof t1),
                    hb_fmt_time(c->med_cur, t2, sizeof t2), fmt_pct(c->ratio, t3, sizeof t3),
                    fmt_pct(c->ci_lo, lo, sizeof lo), fmt_pct(c->ci_hi, hi, sizeof hi), fmt_p(c->q, t4, sizeof t4), mde);
        }
        if ((int)k > o->max_rows) fprintf(f, "\n... and %zu more (see the JSON output).\n", k - (size_t)o->max_rows);
        fputs(r->outcome == HB_CMP_INCONCLUSIVE ? "\n" : "\n</details>\n\n", f);
    }

    k = select_cases(r, sel, pred_near, o);
    if (k) {
        size_t nov = 0;
        for (size_t i = 0; i < k; i++) nov += sel[i]->pass_overlap;
        if (nov)
            fprintf(f, "<details><summary>Beyond the threshold but not significant: %zu (not flagged; %zu of them "
                       "significant within one process but not beyond the spread of the runs' passes)</summary>\n\n",
                    k, nov);
        else
            fprintf(f, "<details><summary>Beyond the threshold but not significant: %zu (not flagged)</summary>\n\n", k);
        fprintf(f, "| case | backend | mode / route / dtype | baseline median | current median | "
                   "change | %g%% CI | p (BH) |\n| --- | --- | --- | ---: | ---: | ---: | --- | ---: |\n",
                o->confidence * 100);
        for (size_t i = 0; i < k && (int)i < o->max_rows; i++) {
            const hb_cmp_case *c = sel[i];
            char lo[32], hi[32];
            md_case_cells(f, c);
            fprintf(f, "| %s | %s | %s | %s .. %s | %s |\n", hb_fmt_time(c->med_base, t1, sizeof t1),
                    hb_fmt_time(c->med_cur, t2, sizeof t2), fmt_pct(c->ratio, t3, sizeof t3),
                    fmt_pct(c->ci_lo, lo, sizeof lo), fmt_pct(c->ci_hi, hi, sizeof hi),
                    fmt_p(c->q, t4, sizeof t4));
        }
        if ((int)k > o->max_rows) fprintf(f, "\n... and %zu more.\n", k - (size_t)o->max_rows);
        fputs("\n</details>\n\n", f);
    }

    k = select_cases(r, sel, pred_info, o);
    if (k) {
        fprintf(f, "<details><summary>Unmatched and unmeasured cases: %zu (new %zu, fixed %zu, "
                   "still not ok %zu%s)</summary>\n\n",
                k, r->count[HB_CMP_NEW], r->count[HB_CMP_FIXED], r->count[HB_CMP_STILL_BAD],
                o->allow_missing ? ", missing allowed" : "");
        fputs("| case | backend | mode / route / dtype | baseline | current | verdict |\n"
              "| --- | --- | --- | --- | --- | --- |\n", f);
        for (size_t i = 0; i < k && (int)i < o->max_rows; i++) {
            const hb_cmp_case *c = sel[i];
            md_case_cells(f, c);
            md_status_cell(f, c->status_base, c->med_base);
            md_status_cell(f, c->status_cur, c->med_cur);
            fprintf(f, "| %s |\n", hb_cmp_verdict_name(c->verdict));
        }
        if ((int)k > o->max_rows) fprintf(f, "\n... and %zu more.\n", k - (size_t)o->max_rows);
        fputs("\n</details>\n\n", f);
    }

    if (o->method_md) {
        fputs(o->method_md, f);
        fputs("\n", f);
        free(sel);
        return ferror(f) ? HB_EDEVICE : HB_OK;
    }
    fprintf(f, "Method: per case, the ratio of medians of the raw `%s` samples (current / baseline; "
               "> 1 is slower), its %g%% percentile-bootstrap CI (%d resamples) and a two-sided "
               "Mann-Whitney U test; p-values adjusted by Benjamini-Hochberg over the %zu compared cases "
               "(FDR %g). A regression needs p (BH) <= %g and %s above 1 + threshold (",
            o->metric, o->confidence * 100, o->resamples, r->tested, o->alpha, o->alpha,
            o->rule_point ? "the ratio" : "the whole CI");
    md_thresholds(f, o);
    fputs(")", f);
    if (o->min_delta > 0) fprintf(f, " and an absolute change over %s", hb_fmt_time(o->min_delta, t1, sizeof t1));
    fputs("; when both runs have several passes (`hybench run --passes`, separate processes), also every "
          "pass of the slower run beyond every pass of the other by the threshold", f);
    fputs(". A case that became wrong or crashed, lost its ok status, or went missing fails the gate "
          "whatever its speed.\n", f);
    free(sel);
    return ferror(f) ? HB_EDEVICE : HB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* JSON                                                                                         */
/* ------------------------------------------------------------------------------------------ */

static json_t *jstr_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *run_json(const hb_run *r)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:I}",
                     "file", jstr_or_null(r->path), "run_id", jstr_or_null(g_run_id(r)),
                     "git_commit", jstr_or_null(g_commit(r)), "date", jstr_or_null(g_date(r)),
                     "host", jstr_or_null(g_host(r)), "cpu_model", jstr_or_null(g_cpu(r)),
                     "cases", (json_int_t)json_array_size(r->cases));
}

json_t *hb_cmp_to_json(const hb_cmp_result *r, const hb_run *base, const hb_run *cur,
                       const hb_cmp_options *o)
{
    json_t *thr = json_object();
    json_object_set_new(thr, "default", json_real(o->threshold));
    char sc[128];
    for (int i = 0; i < o->nper_backend; i++) json_object_set_new(thr, thr_scope(o, i, sc, sizeof sc), json_real(o->per_backend[i].threshold));
    json_t *opts = json_pack("{s:s, s:o, s:f, s:f, s:i, s:I, s:s, s:f, s:I, s:b}",
                             "metric", o->metric, "thresholds", thr, "alpha", o->alpha,
                             "confidence", o->confidence, "bootstrap", o->resamples,
                             "seed", (json_int_t)o->seed, "rule", o->rule_point ? "point" : "ci",
                             "min_delta_s", o->min_delta, "min_samples", (json_int_t)o->min_samples,
                             "allow_missing", o->allow_missing);
    json_t *counts = json_object();
    for (int v = 0; v < HB_CMP_VERDICT_COUNT; v++)
        json_object_set_new(counts, hb_cmp_verdict_name(v), json_integer((json_int_t)r->count[v]));
    json_t *summary = json_pack("{s:s, s:i, s:I, s:I, s:o, s:o, s:f}",
                                "verdict", hb_cmp_outcome_name(r->outcome), "fails", r->fails,
                                "matched", (json_int_t)r->matched, "tested", (json_int_t)r->tested,
                                "counts", counts, "shift", hb_json_num(r->shift), "elapsed_s", r->elapsed_s);
    json_object_set_new(summary, "noise_max", hb_json_num(r->noise_max));
    json_object_set_new(summary, "undecided", json_integer((json_int_t)r->undecided));
    if (r->min_rounds > 0) {
        json_object_set_new(summary, "rounds", json_integer(r->rounds));
        json_object_set_new(summary, "min_rounds", json_integer(r->min_rounds));
    }
    json_t *mde = json_object();
    for (int i = 0; i < r->nfam; i++)
        json_object_set_new(mde, r->fam[i].family, json_pack("{s:I, s:o}", "cases", (json_int_t)r->fam[i].cases, "mde",
                                                             isinf(r->fam[i].mde) ? json_string("none") : hb_json_num(r->fam[i].mde)));
    json_object_set_new(summary, "mde", mde);
    json_object_set_new(summary, "interleaved", json_boolean(hb_cmp_interleaved(base, cur)));
    if (o->method_md) json_object_set_new(summary, "method", json_string(o->method_md));
    json_object_set_new(opts, "noise_scale", json_real(o->noise_k));
    json_t *cases = json_array();
    for (size_t i = 0; i < r->n; i++) {
        const hb_cmp_case *c = &r->cases[i];
        json_t *j = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:o,"
                              " s:o, s:o, s:o, s:o, s:o, s:f, s:s, s:b}",
                              "key", c->key, "op", jstr_or_null(c->op), "shape", jstr_or_null(c->shape_str),
                              "backend", jstr_or_null(c->backend), "mode", jstr_or_null(c->mode),
                              "route", jstr_or_null(c->route), "dtype", jstr_or_null(c->dtype),
                              "status_base", jstr_or_null(c->status_base),
                              "status_cur", jstr_or_null(c->status_cur),
                              "n_base", (json_int_t)c->n_base, "n_cur", (json_int_t)c->n_cur,
                              "median_base_s", hb_json_num(c->med_base), "median_cur_s", hb_json_num(c->med_cur),
                              "ratio", hb_json_num(c->ratio), "ci_lo", hb_json_num(c->ci_lo), "ci_hi", hb_json_num(c->ci_hi),
                              "p", hb_json_num(c->p), "q", hb_json_num(c->q), "threshold", c->threshold,
                              "verdict", hb_cmp_verdict_name(c->verdict),
                              "fails", hb_cmp_verdict_fails(c->verdict, o));
        if (!j) { json_decref(cases); json_decref(opts); json_decref(summary); return NULL; }
        const char *reason = c->cur ? c->cur->reason : NULL;
        if (reason) json_object_set_new(j, "reason", json_string(reason));
        json_object_set_new(j, "noise", hb_json_num(c->noise));
        json_object_set_new(j, "mde", isinf(c->mde) ? json_string("none") : hb_json_num(c->mde));
        json_object_set_new(j, "undecided", json_boolean(hb_cmp_case_undecided(c)));
        if (c->passes_base || c->passes_cur)
            json_object_set_new(j, "passes", json_pack("{s:i,s:i,s:o,s:o,s:o,s:o,s:b}", "base", c->passes_base, "cur",
                                                       c->passes_cur, "base_fastest_s", hb_json_num(c->pass_lo_base),
                                                       "base_slowest_s", hb_json_num(c->pass_hi_base), "cur_fastest_s",
                                                       hb_json_num(c->pass_lo_cur), "cur_slowest_s", hb_json_num(c->pass_hi_cur),
                                                       "within_pass_spread", c->pass_overlap));
        json_array_append_new(cases, j);
    }
    return json_pack("{s:s, s:s, s:i, s:o, s:o, s:o, s:o, s:o}", "tool", o->tool ? o->tool : "hybench compare",
                     "tool_version", HB_VERSION, "schema", 1, "baseline", run_json(base),
                     "current", run_json(cur), "options", opts, "summary", summary, "cases", cases);
}

/* ------------------------------------------------------------------------------------------ */
/* JUnit XML                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* XML 1.0 text/attribute escaping; control characters not allowed in XML 1.0 become '?'. */
static void xml_put(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        switch (*p) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') fputc('?', f);
            else fputc(*p, f);
        }
    }
}

static int cmp_backend_key(const void *a, const void *b)
{
    const hb_cmp_case *x = *(const hb_cmp_case *const *)a, *y = *(const hb_cmp_case *const *)b;
    int c = strcmp(nz(x->backend), nz(y->backend));
    return c ? c : strcmp(x->key, y->key);
}

static void junit_name(FILE *f, const hb_cmp_case *c)
{
    char buf[400];
    const char *hash = strchr(c->key, '#');
    snprintf(buf, sizeof buf, "%s %s [%s/%s/%s]%s%s", nz(c->op), c->shape_str ? c->shape_str : "",
             nz(c->mode), nz(c->route), nz(c->dtype), hash ? " " : "", hash ? hash : "");
    xml_put(f, buf);
}

/* A case that is neither a pass nor a failure in JUnit's terms: not measured in both, skipped in both,
 * or undecided (the outcome is then inconclusive, not a pass). */
static int junit_skipped(const hb_cmp_case *c, const hb_cmp_options *o)
{
    return c->verdict == HB_CMP_STILL_BAD || c->verdict == HB_CMP_INSUFFICIENT || c->verdict == HB_CMP_SKIPPED ||
           (c->verdict == HB_CMP_MISSING && o->allow_missing) || hb_cmp_case_undecided(c);
}

hb_status hb_cmp_write_junit(FILE *f, const hb_cmp_result *r, const hb_run *base,
                             const hb_run *cur, const hb_cmp_options *o)
{
    const hb_cmp_case **v = malloc((r->n + 1) * sizeof *v);
    if (!v) return HB_ENOMEM;
    for (size_t i = 0; i < r->n; i++) v[i] = &r->cases[i];
    qsort(v, r->n, sizeof *v, cmp_backend_key);
    size_t nskip = 0;
    for (size_t i = 0; i < r->n; i++) nskip += junit_skipped(v[i], o);
    char t1[32], t2[32], t3[32], t4[32], t5[32], t6[32];
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f, "<testsuites name=\"hybench compare\" tests=\"%zu\" failures=\"%d\" errors=\"0\" "
               "skipped=\"%zu\" time=\"%.3f\">\n", r->n, r->fails, nskip, r->elapsed_s);
    for (size_t i = 0; i < r->n;) {
        size_t j = i;
        int fails = 0;
        size_t skips = 0;
        while (j < r->n && !strcmp(nz(v[j]->backend), nz(v[i]->backend))) {
            fails += hb_cmp_verdict_fails(v[j]->verdict, o);
            skips += junit_skipped(v[j], o);
            j++;
        }
        fputs("  <testsuite name=\"hybench.compare.", f);
        xml_put(f, nz(v[i]->backend));
        fprintf(f, "\" tests=\"%zu\" failures=\"%d\" errors=\"0\" skipped=\"%zu\">\n", j - i, fails, skips);
        if (i == 0) {
            fputs("    <properties>\n", f);
            const char *props[][2] = {
                { "baseline", base->path }, { "current", cur->path },
                { "baseline_run", g_run_id(base) }, { "current_run", g_run_id(cur) },
                { "baseline_commit", g_commit(base) }, { "current_commit", g_commit(cur) },
                { "metric", o->metric }, { "host", g_host(cur) },
                { "verdict", hb_cmp_outcome_name(r->outcome) },
            };
            for (size_t p = 0; p < sizeof props / sizeof props[0]; p++) {
                fputs("      <property name=\"", f);
                xml_put(f, props[p][0]);
                fputs("\" value=\"", f);
                xml_put(f, props[p][1] ? props[p][1] : "");
                fputs("\"/>\n", f);
            }
            fputs("    </properties>\n", f);
        }
        for (size_t k = i; k < j; k++) {
            const hb_cmp_case *c = v[k];
            fputs("    <testcase classname=\"hybench.", f);
            xml_put(f, nz(c->backend));
            fputc('.', f);
            xml_put(f, nz(c->op));
            fputs("\" name=\"", f);
            junit_name(f, c);
            fprintf(f, "\" time=\"%.9f\">\n", isfinite(c->med_cur) ? c->med_cur : 0.0);
            char msg[512];
            snprintf(msg, sizeof msg, "%s: baseline %s (%s), current %s (%s), change %s, CI %s .. %s, p(BH) %s, threshold %g%%",
                     hb_cmp_case_undecided(c) ? "undecided (inconclusive)" : hb_cmp_verdict_name(c->verdict), c->status_base ? c->status_base : "absent",
                     hb_fmt_time(c->med_base, t1, sizeof t1), c->status_cur ? c->status_cur : "absent",
                     hb_fmt_time(c->med_cur, t2, sizeof t2), fmt_pct(c->ratio, t3, sizeof t3),
                     fmt_pct(c->ci_lo, t4, sizeof t4), fmt_pct(c->ci_hi, t5, sizeof t5),
                     fmt_p(c->q, t6, sizeof t6), c->threshold * 100);
            if (hb_cmp_verdict_fails(c->verdict, o)) {
                fprintf(f, "      <failure type=\"%s\" message=\"", hb_cmp_verdict_name(c->verdict));
                xml_put(f, msg);
                fputs("\">", f);
                xml_put(f, c->key);
                const char *reason = c->cur ? c->cur->reason : NULL;
                if (reason) { fputs("\n", f); xml_put(f, reason); }
                fputs("</failure>\n", f);
            } else if (junit_skipped(c, o)) {
                fputs("      <skipped message=\"", f);
                xml_put(f, msg);
                fputs("\"/>\n", f);
            } else {
                fputs("      <system-out>", f);
                xml_put(f, msg);
                fputs("</system-out>\n", f);
            }
            fputs("    </testcase>\n", f);
        }
        fputs("  </testsuite>\n", f);
        i = j;
    }
    fputs("</testsuites>\n", f);
    free(v);
    return ferror(f) ? HB_EDEVICE : HB_OK;
}

