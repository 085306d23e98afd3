/* analyze.c - the report's analysis (report/common.h): the run metadata section, and
 * hb_report_analyze, which runs the five questions of ../shared/DESIGN.md
 * (q1_conversion.c ... q5_selection.c, with the plan's figures from hb_report_plan) and the figures
 * (figures.c) into rp->summary (summary.json) and the document; docs/report.md defines each answer. */
#include "report/common.h"
#include "results/machine.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- metadata ---- */

/* A count of a record as text: "" when absent, else the integer. */
static const char *itext(double v) { return isnan(v) ? "" : F("%lld", (long long)v); }
/* A real of a record as text: "" when absent, else %.3g. */
static const char *rtext(double v) { return isnan(v) ? "" : hb_report_fmt_num(v); }
/* A number of a record, 0 when absent or null (as json_number_value read it). */
static double nz(double v) { return isnan(v) ? 0 : v; }

static void metadata(ctx *c)
{
    hb_report *rp = c->rp;
    hb_doc_h(rp, 2, "meta", "Run metadata");
    for (int r = 0; r < rp->nruns; r++) {
        hb_rrun *ru = &rp->runs[r];
        const hb_rec_meta *m = ru->r.meta_rec;
        hb_doc_h(rp, 3, NULL, "%s: %s", ru->label, ru->r.path);
        json_t *rows = hb_doc_table(rp, NULL, 0, 2, "field", "value");
        if (m) {
            const struct { const char *k, *v; } strs[] = { {"run_id", m->run_id}, {"date", m->date}, {"host", m->host},
                {"git_commit", m->git_commit}, {"command_line", m->command_line}, {"os", m->os} };
            for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++)
                if (strs[k].v) hb_doc_row(rows, 2, strs[k].k, strs[k].v);
            if (!isnan(m->memory_bytes)) hb_doc_row(rows, 2, "memory_bytes", hb_report_fmt_bytes(m->memory_bytes));
            if (m->compiler) hb_doc_row(rows, 2, "compiler", m->compiler);
            if (m->cflags) hb_doc_row(rows, 2, "cflags", m->cflags);
        }
        {
            char fp[32], fpd[4096];
            hb_run_fingerprint(&ru->r, fpd, sizeof fpd, fp, sizeof fp);
            hb_doc_row(rows, 2, "machine fingerprint", F("%s (%.400s)", fp, fpd));
        }
        if (m && m->has_cpu)
            hb_doc_row(rows, 2, "cpu", F("%s; %s sockets, %s cores, %s PUs, %s NUMA; L1d %s, L2 %s, L3 %s", m->cpu.model ? m->cpu.model : "",
                       itext(m->cpu.sockets), itext(m->cpu.cores), itext(m->cpu.pus), itext(m->cpu.numa_nodes),
                       hb_report_fmt_bytes(nz(m->cpu.l1d_bytes)), hb_report_fmt_bytes(nz(m->cpu.l2_bytes)), hb_report_fmt_bytes(nz(m->cpu.l3_bytes))));
        if (m) {
            const struct { const char *k, *v; } objs[] = { {"openblas", m->openblas_text}, {"options", m->options_text}, {"clock", m->clock_text} };
            for (size_t k = 0; k < sizeof objs / sizeof objs[0]; k++)
                if (objs[k].v) hb_doc_row(rows, 2, objs[k].k, F("%.500s", objs[k].v));
        }
        const hb_rec_end *e = ru->r.end_rec;
        hb_doc_row(rows, 2, "complete", e ? F("yes: %s cases, %s ok, %s wrong, %s failed, %s skipped, %s crashed, %s no_resource, %s s",
                                              itext(e->cases), itext(e->ok), itext(e->wrong), itext(e->failed), itext(e->skipped),
                                              itext(e->crashed), itext(e->no_resource), rtext(e->elapsed_s))
                                        : "[warn] no end record: the run was cut short; the report uses every case it finished");
    }
    json_t *rows = hb_doc_table(rp, "Backends", 0, 5, "backend", "available", "description / reason", "host memory", "ceilings");
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        char ce[1000] = "";
        size_t o = 0, nce = dv->rec ? dv->rec->nceilings : 0;
        const hb_rec_ceiling *cl = dv->rec ? dv->rec->ceilings : NULL;
        int nsw = 0;
        for (size_t i = 0; i < nce; i++) {
            const char *nm = cl[i].name ? cl[i].name : "";
            if (!strncmp(nm, "copy_gbps_ws_", 13)) { nsw++; continue; } /* the copy sweep: one entry, below */
            if (o < sizeof ce - 1)
                o += (size_t)snprintf(ce + o, sizeof ce - o, "%s%s %s %s", o ? "; " : "", nm,
                                      hb_report_fmt_num(nz(cl[i].value)), cl[i].unit ? cl[i].unit : "");
        }
        if (nsw && o < sizeof ce - 1) { /* "copy by working set (GB/s): 1 MiB 900, 2 MiB 850, ..." */
            o += (size_t)snprintf(ce + o, sizeof ce - o, "%scopy by working set (GB/s):", o ? "; " : "");
            int k = 0;
            for (size_t i = 0; i < nce; i++) {
                const char *nm = cl[i].name ? cl[i].name : "";
                if (strncmp(nm, "copy_gbps_ws_", 13) || o >= sizeof ce - 1) continue;
                int mib = atoi(nm + 13);
                o += (size_t)snprintf(ce + o, sizeof ce - o, "%s %d MiB %s", k++ ? "," : "", mib, hb_report_fmt_num(nz(cl[i].value)));
            }
        }
        hb_doc_row(rows, 5, dv->id, dv->available ? "[good] yes" : "[bad] no", dv->available ? dv->description : dv->reason,
                   dv->host_memory ? "yes" : "no", ce);
    }
    /* status counts per backend */
    static const char *const sts[] = { "ok", "wrong", "skipped", "failed", "no_resource", "crashed", "timed_out", "invalid" };
    rows = hb_doc_table(rp, "Case status per backend (only ok cases enter the answers; wrong never counts as fastest). CI missed: ok cases "
                        "whose median's 95% CI stayed wider than their --ci-target when the budget ran out (marked \u2020 in the tables)", 0, 10,
                        "backend", sts[0], "CI missed", sts[1], sts[2], sts[3], sts[4], sts[5], sts[6], sts[7]);
    json_t *jst = json_object();
    json_object_set_new(rp->summary, "status_counts", jst);
    for (int d = 0; d < rp->ndevs; d++) {
        int cnt[8] = { 0 }, any = 0, missed = 0;
        for (size_t i = 0; i < rp->nrows; i++) {
            if (rp->rows[i].dev != d) continue;
            any = 1;
            for (int k = 0; k < 8; k++) if (!strcmp(rp->rows[i].status, sts[k])) cnt[k]++;
            missed += rp->rows[i].ok && rp->rows[i].ci_met == 0;
        }
        if (!any) continue;
        json_t *o = json_object();
        for (int k = 0; k < 8; k++) json_object_set_new(o, sts[k], json_integer(cnt[k]));
        json_object_set_new(o, "ci_missed", json_integer(missed));
        json_object_set_new(jst, rp->devs[d].id, o);
        hb_doc_row(rows, 10, rp->devs[d].id, F("%d", cnt[0]), missed ? tone_cell("warn", F("%d (%.0f%%)", missed, cnt[0] ? 100.0 * missed / cnt[0] : 0.0)) : "0",
                   cnt[1] ? tone_cell("bad", F("%d", cnt[1])) : "0", F("%d", cnt[2]), F("%d", cnt[3]),
                   F("%d", cnt[4]), F("%d", cnt[5]), F("%d", cnt[6]), F("%d", cnt[7]));
    }
}

/* ---------------------------------------------------------------- driver ---- */

hb_status hb_report_analyze(hb_report *rp)
{
    ctx c;
    if (rctx_init(&c, rp) != 0) return HB_ENOMEM;
    rp->summary = json_object();
    rp->doc = json_array();
    json_t *cards = json_array();
    json_t *s = rp->summary;
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_object_set_new(s, "schema", json_integer(1));
    json_object_set_new(s, "tool", json_string("hybench"));
    json_object_set_new(s, "tool_version", json_string(HB_VERSION));
    json_object_set_new(s, "report", json_string(rp->name));
    json_object_set_new(s, "generated", json_string(date));
    json_object_set_new(s, "plan", json_pack("{s:[f,f],s:[f,f],s:f,s:[f,f],s:[f,f],s:f,s:f,s:f,s:f,s:[[s,s,s],[s,s]]}",
        "conversion_saving_expected_pct", hb_report_plan.conv_lo_pct, hb_report_plan.conv_hi_pct, "conversion_saving_success_pct", hb_report_plan.conv_ok_lo_pct, hb_report_plan.conv_ok_hi_pct,
        "f32_of_f16_min_pct", hb_report_plan.f32_of_f16_min_pct, "ane_f32_of_f16_measured_pct", hb_report_plan.ane_f32_of_f16_lo_pct, hb_report_plan.ane_f32_of_f16_hi_pct,
        "memory_saving_target_pct", hb_report_plan.mem_lo_pct, hb_report_plan.mem_hi_pct, "cpu_below_bytes", hb_report_plan.cpu_below_bytes, "ane_below_bytes", hb_report_plan.ane_below_bytes,
        "matmul_gpu_above_elements", hb_report_plan.matmul_gpu_above_elems, "tensor_elem_bytes", hb_report_plan.tensor_elem_bytes,
        "fallback_chains", "cuda", "opencl", "cpu", "opencl", "cpu"));
    json_t *inputs = json_array(), *devs = json_array();
    json_object_set_new(s, "inputs", inputs);
    json_object_set_new(s, "devices", devs);
    for (int r = 0; r < rp->nruns; r++) {
        hb_rrun *ru = &rp->runs[r];
        char fp[32], fpd[1024];
        hb_run_fingerprint(&ru->r, fpd, sizeof fpd, fp, sizeof fp);
        json_array_append_new(inputs, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:b,s:s,s:s}", "path", ru->r.path, "label", ru->label, "run_id", ru->run_id,
                                                "host", ru->host, "commit", ru->commit, "date", ru->date, "cases",
                                                (json_int_t)ru->r.ncase_recs, "complete", ru->r.end_rec != NULL,
                                                "machine", fp, "machine_desc", fpd));
    }
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        json_t *ce = json_object();
        for (size_t i = 0; dv->rec && i < dv->rec->nceilings; i++) {
            const hb_rec_ceiling *x = &dv->rec->ceilings[i];
            if (x->name) json_object_set_new(ce, x->name, hb_json_num(x->value));
        }
        json_array_append_new(devs, json_pack("{s:s,s:s,s:s,s:s,s:b,s:b,s:s,s:b,s:o}", "id", dv->id, "run", rp->runs[dv->run].label, "backend", dv->backend,
                                              "type", dv->type, "available", dv->available, "host_memory", dv->host_memory,
                                              "description", dv->available ? dv->description : dv->reason, "cpu_device", dv->is_cpu_device, "ceilings", ce));
    }
    hb_status st = hb_report_runs(&c);
    if (st == HB_OK) st = hb_report_q1(&c, cards);
    if (st == HB_OK) st = hb_report_q2(&c, cards);
    if (st == HB_OK) st = hb_report_q3(&c, cards);
    if (st == HB_OK) st = hb_report_q4(&c, cards);
    if (st == HB_OK) st = hb_report_q5(&c, cards);
    if (st == HB_OK) st = hb_report_rooflines(&c);
    if (st == HB_OK) st = hb_report_models(&c);
    if (st == HB_OK) st = hb_report_per_op(&c);
    if (st == HB_OK) st = hb_report_collectives(&c);
    if (st == HB_OK) st = hb_report_tp_scaling(&c);
    if (st == HB_OK) st = hb_report_quantized(&c, cards);
    if (st == HB_OK) st = hb_report_plans(&c);
    if (st == HB_OK) st = hb_report_energy(&c);
    if (st == HB_OK) metadata(&c);
    json_object_set(s, "verdicts", cards);
    /* assemble: title, inputs, summary box, then the sections built above */
    json_t *sections = rp->doc;
    rp->doc = json_array();
    hb_doc_h(rp, 1, "top", "hybench report: %s", rp->name);
    hb_report_header(&c, date);
    size_t nok = 0, nmiss = 0;
    for (size_t i = 0; i < rp->nrows; i++) {
        nok += rp->rows[i].ok;
        nmiss += rp->rows[i].ok && rp->rows[i].ci_met == 0;
    }
    json_object_set_new(s, "ci", json_pack("{s:I,s:I}", "ok_cases", (json_int_t)nok, "ci_target_missed", (json_int_t)nmiss));
    hb_doc_p(rp, "Uncertainty: times are medians with their 95%% confidence interval in brackets, and plots carry it as error bars; "
             "savings and ratios carry the interval that the two cases' intervals allow. %zu of %zu ok cases (%.1f%%) did not reach "
             "their CI target before their budget ran out: their figures are marked \u2020 and are less certain than the target asked "
             "(per backend: Run metadata, case status).", nmiss, nok, nok ? 100.0 * (double)nmiss / (double)nok : 0.0);
    hb_doc_h(rp, 2, "summary", "Summary: the five questions");
    json_array_append_new(rp->doc, json_pack("{s:o}", "summary", cards));
    json_array_extend(rp->doc, sections);
    json_decref(sections);
    rctx_free(&c);
    return st;
}

