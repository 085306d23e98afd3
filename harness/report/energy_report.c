/*
 * energy_report.c - the report's energy section (docs/energy.md): per backend the energy counter
 * and its idle power; energy per op (J/op with idle power included, and net of it), average power,
 * GFLOP/J (compute-bound ops) or GB/J (memory-bound ops); energy by precision (tf32/f16/bf16 as a
 * share of f32's J/op); and the device a plan would pick by energy against the one it picks by time.
 * Reads each case record's "energy" object (measure/energy.c, written with `run --energy`). Emits
 * nothing when the inputs hold no energy object.
 */
#include "report/common.h"

/* The row's energy object (results/record.h), NULL when the row is not ok or has none. */
static const hb_rec_energy *energy_of(const hb_rrow *w) { return w->ok && w->rec->energy.present ? &w->rec->energy : NULL; }
static int energy_ok(const hb_rrow *w) { return energy_of(w) && energy_of(w)->available == 1; }
/* A member of the row's energy object; NAN without one. */
#define enum_(w, k) (energy_of(w) ? energy_of(w)->k : DNAN)

hb_status hb_report_energy(ctx *c)
{
    hb_report *rp = c->rp;
    size_t nany = 0, nok = 0;
    for (size_t i = 0; i < rp->nrows; i++) {
        nany += energy_of(&rp->rows[i]) != NULL;
        nok += energy_ok(&rp->rows[i]);
    }
    if (!nany) return HB_OK;
    hb_doc_h(rp, 2, "energy", "Energy per op: by precision and by device");
    hb_doc_p(rp, "Each case ran, after its timed samples, for an energy window: calls back to back, opened and closed at changes "
                 "of the device's energy counter (NVML's total-energy counter on CUDA, which updates about every 100 ms; RAPL "
                 "package energy on the CPU), at least the run's minimum window long. J/op = energy in the window / calls in it "
                 "and includes the idle power; \"net\" subtracts the idle power measured once per backend process (the same "
                 "edges, no calls) over the window. GFLOP/J for compute-bound ops, GB/J (minimal bytes moved) for memory-bound ones.");
    /* counters per device */
    json_t *rows_d = hb_doc_table(rp, "Energy counters", 0, 5, "backend", "source", "cases with energy", "idle power", "unavailable because");
    json_t *sum_dev = json_array();
    for (int d = 0; d < rp->ndevs; d++) {
        size_t n = 0, na = 0;
        const char *src = "", *why = "";
        double idle = DNAN, upd = 0, win = 0;
        for (size_t i = 0; i < rp->nrows; i++) {
            const hb_rrow *w = &rp->rows[i];
            const hb_rec_energy *e = energy_of(w);
            if (w->dev != d || !e) continue;
            na++;
            src = e && e->source ? e->source : "";
            if (energy_ok(w)) {
                n++;
                if (isnan(idle)) idle = enum_(w, idle_power_w);
                upd += enum_(w, counter_updates);
                win += enum_(w, window_s);
            } else if (!*why && e && e->reason) {
                why = e->reason;
            }
        }
        if (!na) continue;
        hb_doc_row(rows_d, 5, rp->devs[d].id, src, F("%zu of %zu", n, na), isnan(idle) ? "n/a" : F("%.1f W", idle), why);
        json_array_append_new(sum_dev, json_pack("{s:s,s:s,s:I,s:o,s:o,s:s}", "device", rp->devs[d].id, "source", src, "cases",
                                                 (json_int_t)n, "idle_power_w", isnan(idle) ? json_null() : json_real(idle),
                                                 "counter_period_s", upd > 0 ? json_real(win / upd) : json_null(), "reason", why));
    }
    if (!nok) {
        hb_doc_note(rp, "No case has a readable energy counter in these results: see the reasons above.");
        json_object_set_new(rp->summary, "energy", json_pack("{s:o}", "devices", sum_dev));
        return HB_OK;
    }
    /* every case */
    json_t *rows = hb_doc_table(rp, "Energy per op, every case with a readable counter", 1, 10, "backend", "op", "name/shape", "dtype",
                                "mode", "time/op", "J/op", "J/op net", "power", "GFLOP/J or GB/J");
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *w = &rp->rows[i];
        if (!energy_ok(w)) continue;
        int cb = !strcmp(w->bound, "compute");
        double eff = (cb ? enum_(w, gflop_per_j) : enum_(w, gb_per_j));
        hb_doc_row(rows, 10, rp->devs[w->dev].id, w->op, *w->name ? w->name : w->shape, w->dtype, w->mode,
                   hb_report_fmt_time(enum_(w, s_per_op)), F("%.4g J", enum_(w, j_per_op)), F("%.4g J", enum_(w, j_per_op_net)),
                   F("%.0f W", enum_(w, power_w)), isnan(eff) ? "n/a" : F("%.4g %s", eff, cb ? "GFLOP/J" : "GB/J"));
    }
    /* by precision: tf32/f16/bf16 J/op as a share of f32's, same device, op, shape and mode */
    json_t *rows_p = hb_doc_table(rp, "Energy by precision: J/op of each dtype as a share of f32's (same backend, op, shape and mode)", 0, 7,
                                  "backend", "op", "name/shape", "mode", "f32 J/op", "dtype", "share of f32");
    json_t *sum_prec = json_array();
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *a = &rp->rows[i];
        if (!energy_ok(a) || strcmp(a->dtype, "f32")) continue;
        for (size_t j = 0; j < rp->nrows; j++) {
            const hb_rrow *b = &rp->rows[j];
            if (j == i || !energy_ok(b) || !strcmp(b->dtype, "f32") || b->dev != a->dev || strcmp(a->op, b->op) || strcmp(a->shape, b->shape) ||
                strcmp(a->mode, b->mode) || strcmp(a->route, b->route))
                continue;
            double ja = enum_(a, j_per_op), jb = enum_(b, j_per_op);
            hb_doc_row(rows_p, 7, rp->devs[a->dev].id, a->op, *a->name ? a->name : a->shape, a->mode, F("%.4g J", ja), b->dtype,
                       hb_report_fmt_pct(100 * jb / ja));
            json_array_append_new(sum_prec, json_pack("{s:s,s:s,s:s,s:s,s:f,s:f}", "device", rp->devs[a->dev].id, "op", a->op, "shape", a->shape,
                                                      "dtype", b->dtype, "j_per_op", jb, "share_of_f32_pct", 100 * jb / ja));
        }
    }
    /* the device a plan would pick by energy against by time: same op, shape, dtype and mode */
    json_t *rows_s = hb_doc_table(rp, "Device choice by time and by energy (cases measured with energy on more than one backend)", 0, 7,
                                  "op", "name/shape", "dtype", "mode", "fastest", "least energy", "energy saved by choosing on energy");
    size_t nsel = 0, ndiff = 0;
    char *seen = calloc(rp->nrows, 1);
    if (!seen) return HB_ENOMEM;
    for (size_t i = 0; i < rp->nrows; i++) {
        const hb_rrow *a = &rp->rows[i];
        if (seen[i] || !energy_ok(a) || rp->devs[a->dev].is_reference) continue;
        size_t bt = i, be = i;
        int ndev = 1;
        for (size_t j = i + 1; j < rp->nrows; j++) {
            const hb_rrow *b = &rp->rows[j];
            if (!energy_ok(b) || rp->devs[b->dev].is_reference || strcmp(a->op, b->op) || strcmp(a->shape, b->shape) ||
                strcmp(a->dtype, b->dtype) || strcmp(a->mode, b->mode))
                continue;
            seen[j] = 1;
            ndev += b->dev != a->dev;
            if (b->t[HB_PH_TOTAL] < rp->rows[bt].t[HB_PH_TOTAL]) bt = j;
            if (enum_(b, j_per_op) < enum_(&rp->rows[be], j_per_op)) be = j;
        }
        if (ndev < 2) continue;
        nsel++;
        ndiff += rp->rows[bt].dev != rp->rows[be].dev;
        double jt = enum_(&rp->rows[bt], j_per_op), je = enum_(&rp->rows[be], j_per_op);
        hb_doc_row(rows_s, 7, a->op, *a->name ? a->name : a->shape, a->dtype, a->mode, rp->devs[rp->rows[bt].dev].id,
                   rp->rows[bt].dev == rp->rows[be].dev ? "[good] same" : F("[warn] %s", rp->devs[rp->rows[be].dev].id),
                   hb_report_fmt_pct(100 * (jt - je) / jt));
    }
    free(seen);
    if (!nsel) hb_doc_note(rp, "No case ran with a readable energy counter on two backends: the choice by energy needs a run over several devices with --energy.");
    else hb_doc_p(rp, "Choosing by energy instead of time changes the device in %zu of %zu cases.", ndiff, nsel);
    json_object_set_new(rp->summary, "energy", json_pack("{s:o,s:o,s:I,s:I}", "devices", sum_dev, "by_precision", sum_prec,
                                                        "choices", (json_int_t)nsel, "choices_differ", (json_int_t)ndiff));
    return HB_OK;
}
