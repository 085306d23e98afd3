/*
 * quantized.c - the report's "Quantized weights" section (docs/quantized.md, docs/report.md): the
 * TinyLlama decoder layer in decode (chain cases with seq < kv_seq, measure/chain.c) per device and
 * weight format (f32, f16, bf16 and the quantized mixes q8_0, q4_k = Q4_K_M, q5_k = Q5_K_M, q6_k), with
 * its weight memory (hb_chain_weight_bytes: the format's blocks) and, on a device, the layer launched
 * step by step (record "layer") beside the layer captured as one graph (record "graph"); which device
 * runs the seeds' model (Q4_K_M) fastest and by how much; and the quantized matmuls against f32 of the
 * same shape (m n k), device, mode and route: the time of the fused kernel (dequantizing in every call)
 * against the conversion-free f32 kernel over weights dequantized once, the weight memory of each, the
 * one-time dequantization (op dequantize of the n x k weights) and the number of calls after which it
 * pays back; cards for Q1 (dequantize once or in every op), Q3 (memory) and Q5 (the fastest device).
 * cpu-ref (the reference) is left out.
 * Emits nothing when no record has a quantized dtype.
 */
#include "report/common.h"
#include "core/quant.h"

static const char *const fmts[] = {"f32", "f16", "bf16", "q8_0", "q4_k", "q5_k", "q6_k"};
#define NFMT 7

static const char *fmt_label(const char *d)
{
    if (!strcmp(d, "q4_k")) return "Q4_K_M (q4_k)";
    if (!strcmp(d, "q5_k")) return "Q5_K_M (q5_k)";
    return d;
}

/* The layer's time of a decode chain row: the layer as one stream where measured (a device,
 * resident), else the compute median (a host backend: no transfer); NaN when not a decode chain. */
static double layer_time(const hb_rrow *w, double *graph, double *enq)
{
    *graph = *enq = NAN;
    if (!w->ok || strcmp(w->op, "chain")) return NAN;
    const hb_rec_shape *sh = &w->rec->shape;
    double seq = HB_REC_SHAPE(sh, seq), kv = HB_REC_SHAPE(sh, kv_seq), ranks = HB_REC_SHAPE(sh, ranks);
    if (!(kv > seq) || ranks > 0) return NAN;
    const hb_rec_layer *ly = &w->rec->layer, *gr = &w->rec->graph;
    if (ly->present) *enq = ly->enqueue_s;
    if (gr->present) *graph = gr->st.median;
    double t = ly->present ? ly->st.median : (double)NAN;
    if (!(t > 0)) t = w->t[HB_PH_COMPUTE];
    return t;
}

static int fmt_index(const char *d)
{
    for (int i = 0; i < NFMT; i++)
        if (!strcmp(d, fmts[i])) return i;
    return -1;
}

/* the decode layer: per device, the best (lowest) time of each format over modes f32 and resident */
static void decode_table(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    const int nd = rp->ndevs;
    double *t = malloc(sizeof(double) * (size_t)(nd * NFMT * 4 + 1));
    if (!t) return;
    for (int i = 0; i < nd * NFMT * 4; i++) t[i] = NAN;
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        double g, e, lt = layer_time(w, &g, &e);
        int f = fmt_index(w->dtype);
        if (!(lt > 0) || f < 0 || !strcmp(rp->devs[w->dev].type, "cpu-ref")) continue;
        double *cell = &t[(w->dev * NFMT + f) * 4];
        /* the record's weight_bytes (the layer's weights as stored), else the synthetic layer's */
        double wb = w->rec->weight_bytes;
        if (!(wb > 0)) {
            hb_shape sh = {0};
            sh.seq = 1;
            wb = hb_chain_weight_bytes(&sh, (hb_dtype)hb_dtype_parse(w->dtype));
        }
        if (!(cell[0] <= lt)) { cell[0] = lt; cell[1] = g; cell[2] = e; cell[3] = wb; }
    }
    json_t *rows = hb_doc_table(rp, "The decode layer per device and weight format (best of modes f32 and resident)", 0, 7, "device",
                                "weights", "weight memory", "layer, launched step by step", "host enqueue", "layer as one graph",
                                "against f32 on this device");
    int any = 0, best = -1;
    double best_t = INFINITY, second_t = INFINITY;
    double *q4 = calloc((size_t)nd + 1, sizeof(double)); /* each device's Q4_K_M layer, best of launched and graph */
    if (!q4) { free(t); return; }
    for (int d = 0; d < nd; d++)
        for (int f = 0; f < NFMT; f++) {
            const double *cell = &t[(d * NFMT + f) * 4], f32 = t[(d * NFMT) * 4];
            if (!(cell[0] > 0)) continue;
            any = 1;
            const char *tone = !(f32 > 0) || f == 0 ? NULL : cell[0] < 0.97 * f32 ? "good" : cell[0] > 1.03 * f32 ? "bad" : NULL;
            const char *vs = !(f32 > 0) || f == 0 ? "-" : F("%.2fx", f32 / cell[0]);
            hb_doc_row(rows, 7, rp->devs[d].id, fmt_label(fmts[f]),
                       hb_report_fmt_bytes(cell[3]), hb_report_fmt_time(cell[0]),
                       enqueue_cell(cell[2], cell[0]),
                       isfinite(cell[1]) ? hb_report_fmt_time(cell[1]) : "-", tone ? tone_cell(tone, vs) : vs);
            if (!strcmp(fmts[f], "q4_k")) q4[d] = isfinite(cell[1]) && cell[1] < cell[0] ? cell[1] : cell[0];
        }
    free(t);
    /* the fastest device, and the fastest of another kind (another description: the same GPU in another
     * run is no other device) */
    for (int d = 0; d < nd; d++)
        if (q4[d] > 0 && q4[d] < best_t) { best_t = q4[d]; best = d; }
    for (int d = 0; best >= 0 && d < nd; d++)
        if (q4[d] > 0 && q4[d] < second_t && strcmp(rp->devs[d].description, rp->devs[best].description)) second_t = q4[d];
    free(q4);
    if (!any) return;
    if (best >= 0) {
        const char *text = isfinite(second_t)
                               ? F("For the seeds' model (TinyLlama-1.1B, Q4_K_M), %s (%s) runs the decode layer fastest: %s, %.2fx "
                                   "faster than the next kind of device.",
                                   rp->devs[best].id, rp->devs[best].description, hb_report_fmt_time(best_t), second_t / best_t)
                               : F("For the seeds' model (TinyLlama-1.1B, Q4_K_M) only %s (%s) ran the decode layer: %s.",
                                   rp->devs[best].id, rp->devs[best].description, hb_report_fmt_time(best_t));
        hb_doc_p(rp, "%s", text);
        card_add(cards, 5, "Quantized weights: the decode layer", "Q4_K_M", "good", text);
        /* memory (Q3): the layer's weights in Q4_K_M against f32 */
        hb_shape sh = {0};
        sh.seq = 1;
        const double wq = hb_chain_weight_bytes(&sh, HB_Q4_K), wf = hb_chain_weight_bytes(&sh, HB_F32);
        card_add(cards, 3, "Quantized weights: memory", "Q4_K_M", "good",
                 F("A TinyLlama layer's weights take %s in Q4_K_M against %s in f32 (%.1fx less); dequantized once to run in f32, "
                   "a device holds the f32 size.", hb_report_fmt_bytes(wq), hb_report_fmt_bytes(wf), wf / wq));
    }
}

/* The CI of row w's compute median (seconds); the median itself at both ends when the record has none. */
static void compute_ci(const hb_rrow *w, double *lo, double *hi)
{
    *lo = w->rec->phase[HB_PH_COMPUTE].ci_lo;
    *hi = w->rec->phase[HB_PH_COMPUTE].ci_hi;
    if (!isfinite(*lo) || !isfinite(*hi)) *lo = *hi = w->t[HB_PH_COMPUTE];
}

/* The compute median of op dequantize of n weights in dtype dt on device dev and mode (the weight of a
 * matmul dequantized once); NaN when not measured. */
static double dequant_time(const hb_report *rp, int dev, const char *dt, const char *mode, const char *route, double n)
{
    for (size_t j = 0; j < rp->nrows; j++) {
        const hb_rrow *w = &rp->rows[j];
        if (w->ok && w->dev == dev && !strcmp(w->op, "dequantize") && !strcmp(w->dtype, dt) && !strcmp(w->mode, mode) &&
            !strcmp(w->route, route) &&
            HB_REC_SHAPE(&w->rec->shape, n) == n)
            return w->t[HB_PH_COMPUTE];
    }
    return NAN;
}

/* the quantized matmuls against f32 of the same m n k on the same device */
static void matmul_table(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    json_t *rows = NULL;
    int nfused = 0, nall = 0, nsame = 0;
    vec be = {0}; /* the break-even call counts */
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *q = &rp->rows[i];
        /* cpu-ref is the reference, not a device a model would run on */
        if (!q->ok || strcmp(q->op, "matmul") || !hb_dtype_is_quant((hb_dtype)hb_dtype_parse(q->dtype)) ||
            !strcmp(rp->devs[q->dev].type, "cpu-ref"))
            continue;
        const hb_rec_shape *s = &q->rec->shape;
        double m = HB_REC_SHAPE(s, m), n = HB_REC_SHAPE(s, n), k = HB_REC_SHAPE(s, k);
        const hb_rrow *f = NULL;
        for (size_t j = 0; j < rp->nrows && !f; j++) {
            const hb_rrow *w = &rp->rows[j];
            const hb_rec_shape *s2 = &w->rec->shape;
            if (w->ok && w->dev == q->dev && !strcmp(w->op, "matmul") && !strcmp(w->dtype, "f32") && !strcmp(w->mode, q->mode) &&
                !strcmp(w->route, q->route) &&
                HB_REC_SHAPE(s2, m) == m && HB_REC_SHAPE(s2, n) == n && HB_REC_SHAPE(s2, k) == k)
                f = w;
        }
        if (!rows)
            rows = hb_doc_table(rp, "Quantized matmul (fused dequantization) against f32 over weights dequantized once: compute medians; "
                                "weight memory quantized / f32; dequantize: the one-time conversion of those weights", 0, 10, "device",
                                "mode", "m n k", "weights", "weight memory", "fused", "f32", "speed-up", "dequantize", "break-even");
        const double wq = (double)hb_quant_bytes((hb_dtype)hb_dtype_parse(q->dtype), (int64_t)(n * k));
        const double tq = q->t[HB_PH_COMPUTE], tf = f ? f->t[HB_PH_COMPUTE] : (double)NAN;
        /* dequantizing once pays back after dq / (tq - tf) calls when f32 is faster per call; never when the
         * fused kernel is (it also keeps the weights 3.6-7x smaller) */
        const double dq = dequant_time(rp, q->dev, q->dtype, q->mode, q->route, n * k);
        const char *becell = "-";
        if (f && tq > 0 && tf > 0) {
            /* which is faster, by the compute medians' 95% CIs: overlapping ones decide nothing */
            double qlo, qhi, flo, fhi;
            compute_ci(q, &qlo, &qhi);
            compute_ci(f, &flo, &fhi);
            nall++;
            if (qhi < flo) { nfused++; becell = "never (fused faster)"; }
            else if (!(qlo > fhi)) { nsame++; becell = "no difference (CIs)"; }
            else if (isfinite(dq)) {
                const double calls = dq / (tq - tf);
                becell = F("%.0f calls", ceil(calls));
                vec_push(&be, calls);
            } else becell = "dequantize not measured";
        }
        hb_doc_row(rows, 10, rp->devs[q->dev].id, q->mode, F("%.0f %.0f %.0f", m, n, k), q->dtype,
                   F("%s / %s", hb_report_fmt_bytes(wq), hb_report_fmt_bytes(n * k * 4)), hb_report_fmt_time(tq),
                   f ? hb_report_fmt_time(tf) : "not measured",
                   !f || !(tq > 0) ? "-"
                   : tq < 0.97 * tf ? tone_cell("good", F("%.2fx", tf / tq))
                   : tq > 1.03 * tf ? tone_cell("bad", F("%.2fx", tf / tq))
                                    : F("%.2fx", tf / tq),
                   isfinite(dq) ? hb_report_fmt_time(dq) : "not measured", becell);
    }
    if (!nall) { free(be.v); return; }
    /* Q1 (the conversion question: convert once or in every op) and Q3 (memory) cards */
    char text[400];
    if (be.n) {
        const double med = vec_median(&be);
        snprintf(text, sizeof text, "Quantized weights: the fused kernel is faster than f32 over weights dequantized once in %d of %d "
                 "matmuls (%d within the CIs); where f32 is faster, dequantizing once pays back after %.0f calls (median; %.0f to %.0f).",
                 nfused, nall, nsame, ceil(med), ceil(vec_min(&be)), ceil(vec_max(&be)));
    } else {
        snprintf(text, sizeof text, "Quantized weights: the fused kernel is faster than f32 over weights dequantized once in %d of %d "
                 "matmuls (%d within the CIs)%s.", nfused, nall, nsame, nfused == nall ? ": dequantizing once never pays back" : "");
    }
    card_add(cards, 1, "Quantized weights: dequantize once or in every op", nfused * 2 >= nall ? "fused" : "f32", "good", text);
    free(be.v);
}

hb_status hb_report_quantized(ctx *c, json_t *cards)
{
    hb_report *rp = c->rp;
    int any = 0;
    for (size_t i = 0; i < rp->nrows && !any; i++) any = hb_dtype_is_quant((hb_dtype)hb_dtype_parse(rp->rows[i].dtype));
    if (!any) return HB_OK;
    hb_doc_h(rp, 2, "quantized", "Quantized weights");
    hb_doc_p(rp, "Weights in GGUF's block formats (docs/quantized.md): q8_0, and the K formats as llama.cpp mixes them in a layer "
                 "(Q4_K_M: q4_k with attn_v and ffn_down in q6_k; Q5_K_M likewise); activations and outputs f32. Weight memory: the "
                 "layer's projection weights as stored. The layer launched step by step is timed on the device from its first "
                 "kernel's start to its last one's end; the host enqueue beside it is the host's time to launch those steps (where it "
                 "reaches the layer's time, launches bound the layer); the layer as one graph is the same steps captured once and "
                 "launched as one CUDA graph, as llama.cpp and vLLM run decode: what the GPU needs without the launches.");
    decode_table(c, cards);
    matmul_table(c, cards);
    return HB_OK;
}
