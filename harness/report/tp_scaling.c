/*
 * tp_scaling.c - the report's tensor-parallel scaling section (docs/collectives.md, docs/report.md):
 * the TinyLlama decoder layer split over 1, 2 and 4 GPUs (chain cases with shape.ranks, measure/chain.c;
 * the ranks' records folded by `hybench merge-ranks` or `run --ranks`), from one or several results
 * files of one machine: per machine, layer (decode, prefill) and dtype, the time per layer against the
 * number of GPUs, the speedup over the same layer on one GPU (ranks=1) and the efficiency (speedup /
 * GPUs), the all_reduce share of the step-by-step time, and beside them the one-device chain of the same
 * machine (shape without ranks: the layer with the reinterpreted head layout). Time per layer is the
 * layer run as one stream (record "layer", or tensor_parallel.time_s); the compute median where a
 * record has no stream time; beside it the layer launched as one captured CUDA graph (tensor_parallel.graph_s). Emits nothing when no chain case has a tensor_parallel object.
 */
#include "report/common.h"

typedef struct tprow {
    const char *machine, *gpu, *dtype;
    char layer[48];
    int ranks;     /* 0: the one-device chain */
    double t, ci_lo, ci_hi, share;
    double enq;    /* the host's time to enqueue the layer (layer.enqueue_s), seconds; NaN when absent */
    double graph;  /* the layer launched as one captured graph (tensor_parallel.graph_s, else graph.median), seconds; NaN */
} tprow;

static int tprow_get(const hb_report *rp, const hb_rrow *w, tprow *out)
{
    if (!w->ok || strcmp(w->op, "chain") || strcmp(w->mode, "resident")) return 0;
    const hb_rec_shape *sh = &w->rec->shape;
    const hb_rec_tp *tp = w->rec->tp.present ? &w->rec->tp : NULL;
    const hb_rec_stats *ly = &w->rec->layer.st, *gr = &w->rec->graph.st; /* all NaN when absent */
    double seq = HB_REC_SHAPE(sh, seq), kv = HB_REC_SHAPE(sh, kv_seq), ranks = HB_REC_SHAPE(sh, ranks);
    if (!(seq > 0)) return 0;
    memset(out, 0, sizeof *out);
    out->machine = rp->runs[w->run].host;
    out->gpu = rp->devs[w->dev].description;
    out->dtype = w->dtype;
    out->ranks = ranks > 0 ? (int)ranks : 0;
    if (out->ranks && !tp) return 0;
    if (kv > seq) snprintf(out->layer, sizeof out->layer, "decode (seq %.0f, kv %.0f)", seq, kv);
    else snprintf(out->layer, sizeof out->layer, "prefill (seq %.0f)", seq);
    out->t = tp ? tp->time_s : ly->median;
    if (!(out->t > 0)) out->t = w->t[HB_PH_COMPUTE];
    /* the CI of the layer's time, from this rank's record (the merged record keeps the lowest rank's) */
    out->ci_lo = ly->ci_lo;
    out->ci_hi = ly->ci_hi;
    out->share = tp ? tp->allreduce_share : (double)NAN;
    out->enq = w->rec->layer.enqueue_s;
    out->graph = tp ? tp->graph_s : gr->median;
    return out->t > 0;
}

static int same_group(const tprow *a, const tprow *b)
{
    return !strcmp(a->machine, b->machine) && !strcmp(a->gpu, b->gpu) && !strcmp(a->layer, b->layer);
}

hb_status hb_report_tp_scaling(ctx *c)
{
    hb_report *rp = c->rp;
    tprow *v = calloc(rp->nrows + 1, sizeof *v);
    if (!v) return HB_ENOMEM;
    size_t n = 0, ntp = 0;
    for (size_t i = 0; i < rp->nrows; i++)
        if (tprow_get(rp, &rp->rows[i], &v[n])) ntp += v[n++].ranks > 0;
    if (!ntp) { free(v); return HB_OK; }
    hb_doc_h(rp, 2, "tp-scaling", "Tensor-parallel scaling: the TinyLlama layer over GPUs");
    hb_doc_p(rp, "The decoder layer split Megatron-style (q, k, v and gate/up projections by columns, out- and down-projections by rows, "
                 "one all_reduce after each; docs/collectives.md) over 1, 2 or 4 GPUs, every rank ending with the whole layer's output, "
                 "verified against the f64 reference. Time per layer: the layer run as one stream (every step enqueued back to back, one "
                 "device timer around it; over several ranks the mean over the ranks), median and, in brackets, rank 0's 95%% CI. Speedup: against the same split layer on one GPU; "
                 "efficiency: speedup / GPUs. all_reduce share: the all_reduce steps' part of the layer timed step by step. "
                 "Host enqueue: the host's time to launch the layer's steps (rank 0); where it reaches the layer's time, launches bound "
                 "the layer, not the GPU. As one graph: the same layer captured once as a CUDA graph, its all_reduce steps inside, and "
                 "launched as one (how llama.cpp and vLLM run decode; over several ranks the mean over the ranks): what the GPUs need "
                 "without the host's launches, and in brackets its speedup over the same graph on one GPU. "
                 "One-device chain: the layer of workloads/tinyllama.ini on one GPU of the same machine, for reference.");
    json_t *rows = hb_doc_table(rp, "Time per layer by number of GPUs (mode resident)", 0, 11, "machine", "GPU", "layer", "dtype", "GPUs",
                                "time per layer", "as one graph", "speedup", "efficiency", "all_reduce share", "host enqueue");
    json_t *ids = plot_ids_new(), *summary = json_array();
    /* the layer's dtypes, in the dtype table's order (every one the chain runs: all but tf32, a matrix-product mode) */
    const char *dts[HB_DTYPE_COUNT];
    int ndts = 0;
    for (int d = 0; d < HB_DTYPE_COUNT; d++)
        if (d != HB_TF32) dts[ndts++] = hb_dtype_name((hb_dtype)d);
    unsigned char *done = calloc(n + 1, 1);
    if (!done) { free(v); json_decref(ids); json_decref(summary); return HB_ENOMEM; }
    for (size_t g = 0; g < n; g++) {
        if (done[g]) continue;
        FILE *dat = NULL;
        hb_plot *p = NULL;
        hb_sb body = {0};
        int nser = 0;
        for (int di = 0; di < ndts; di++) {
            /* this group's rows of one dtype: the split layer by ranks, and the one-device chain */
            double t1 = NAN, tr[5] = {NAN, NAN, NAN, NAN, NAN}, share[5] = {NAN, NAN, NAN, NAN, NAN}, enq[5] = {NAN, NAN, NAN, NAN, NAN},
                   lo[5] = {NAN, NAN, NAN, NAN, NAN}, hi[5] = {NAN, NAN, NAN, NAN, NAN}, gt[5] = {NAN, NAN, NAN, NAN, NAN}, chain = NAN;
            for (size_t i = g; i < n; i++) {
                if (!same_group(&v[g], &v[i]) || strcmp(v[i].dtype, dts[di])) continue;
                done[i] = 1;
                if (v[i].ranks == 0) chain = v[i].t;
                else if (v[i].ranks <= 4) { tr[v[i].ranks] = v[i].t; share[v[i].ranks] = v[i].share; enq[v[i].ranks] = v[i].enq;
                    lo[v[i].ranks] = v[i].ci_lo; hi[v[i].ranks] = v[i].ci_hi; gt[v[i].ranks] = v[i].graph; }
            }
            t1 = tr[1];
            int any = 0;
            for (int r = 1; r <= 4; r++) any |= isfinite(tr[r]);
            if (!any) continue;
            if (!p) {
                p = hb_report_plot_begin(rp, F("tp_%zu", g), "collectives",
                                         F("%s on %s: time per layer against GPUs", v[g].layer, v[g].machine), 760, 400, &dat);
                if (!p) { free(done); free(v); json_decref(ids); json_decref(summary); return HB_EDEVICE; }
                hb_sb_printf(&body, "set title '%s'\nset logscale x 2\nset logscale y 10\nset xtics (1, 2, 4)\nset xrange [0.8:5]\n"
                                    "set format y '%%g'\nset xlabel 'GPUs'\nset ylabel 'time per layer (us)'\nset key right top\nplot ",
                             hb_report_gp_str(p->title));
            }
            if (nser) { fprintf(dat, "\n\n"); hb_sb_printf(&body, ", \\\n     "); }
            fprintf(dat, "# %s: gpus time_us\n", dts[di]);
            for (int r = 1; r <= 4; r++)
                if (isfinite(tr[r])) fprintf(dat, "%d %.6g\n", r, tr[r] * 1e6);
            hb_sb_printf(&body, "'%s.dat' index %d using 1:2 with linespoints title 'split layer %s'", p->id, nser++, dts[di]);
            if (isfinite(chain)) {
                fprintf(dat, "\n\n# %s one-device chain\n1 %.6g\n", dts[di], chain * 1e6);
                hb_sb_printf(&body, ", \\\n     '%s.dat' index %d using 1:2 with points pt 6 ps 1.5 title 'one-device chain %s'", p->id,
                             nser++, dts[di]);
            }
            for (int r = 1; r <= 4; r++) {
                if (!isfinite(tr[r])) continue;
                double sp = isfinite(t1) ? t1 / tr[r] : (double)NAN, eff = sp / r;
                const char *tone = !isfinite(sp) || r == 1 ? NULL : eff >= 0.7 ? "good" : sp > 1 ? "warn" : "bad";
                char tcell[160];
                snprintf(tcell, sizeof tcell, "%s%s%s", hb_report_fmt_time(tr[r]),
                         isfinite(lo[r]) && isfinite(hi[r]) ? F(" [%s, %s]", hb_report_fmt_time(lo[r]), hb_report_fmt_time(hi[r])) : "",
                         r == 1 && isfinite(chain) ? F(" (one-device chain %s)", hb_report_fmt_time(chain)) : "");
                const char *ecell = enqueue_cell(enq[r], tr[r]);
                hb_doc_row(rows, 11, v[g].machine, v[g].gpu, v[g].layer, dts[di], F("%d", r), tcell,
                           !isfinite(gt[r]) ? "not captured"
                           : r > 1 && isfinite(gt[1]) ? F("%s (%.2fx)", hb_report_fmt_time(gt[r]), gt[1] / gt[r]) : hb_report_fmt_time(gt[r]),
                           isfinite(sp) ? (tone ? tone_cell(tone, F("%.2fx", sp)) : F("%.2fx", sp)) : "no 1-GPU run",
                           isfinite(sp) ? F("%.0f%%", 100 * eff) : "-", isfinite(share[r]) ? F("%.0f%%", 100 * share[r]) : "-", ecell);
                json_array_append_new(summary, json_pack("{s:s,s:s,s:s,s:s,s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "machine", v[g].machine, "gpu",
                                                         v[g].gpu, "layer", v[g].layer, "dtype", dts[di], "gpus", r, "time_s",
                                                         json_real(tr[r]), "speedup", isfinite(sp) ? json_real(sp) : json_null(),
                                                         "efficiency", isfinite(sp) ? json_real(eff) : json_null(), "allreduce_share",
                                                         isfinite(share[r]) ? json_real(share[r]) : json_null(), "one_device_chain_s",
                                                         r == 1 && isfinite(chain) ? json_real(chain) : json_null(), "host_enqueue_s",
                                                         isfinite(enq[r]) ? json_real(enq[r]) : json_null(), "graph_s",
                                                         isfinite(gt[r]) ? json_real(gt[r]) : json_null()));
            }
        }
        if (p) {
            hb_sb_printf(&body, "\n");
            fclose(dat);
            hb_status st = hb_report_plot_script(rp, p, body.s);
            if (st != HB_OK) hb_sb_free(&body);
            if (st != HB_OK) { free(done); free(v); json_decref(ids); json_decref(summary); return st; }
            plot_id_add(ids, p);
        }
        hb_sb_free(&body);
    }
    hb_doc_plots(rp, ids);
    json_object_set_new(rp->summary, "tensor_parallel", summary);
    free(done);
    free(v);
    return HB_OK;
}
