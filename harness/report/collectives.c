/*
 * collectives.c - the report's collectives section (docs/collectives.md, docs/report.md): per
 * backend and collective, busbw against size (nccl-tests' figure; algbw where one rank moves no
 * byte across a link), the crossover where NCCL beats the host-staged path, the peer-copy path
 * beside them, and the routing table extended with collectives (routing.json "collectives": per
 * machine, op and dtype, size ranges -> fastest path). Reads each case record's "collective"
 * object (measure/sample.c). Emits nothing when the inputs hold no collective case.
 */
#include "report/common.h"

/* A collective row's facts. */
typedef struct crow {
    size_t i;                 /* index into rp->rows */
    double size, t, algbw, busbw;
    int ranks, inplace;
    const char *path;
} crow;

static int crow_get(const hb_rrow *w, size_t i, crow *out)
{
    const hb_rec_collective *co = &w->rec->collective;
    if (!w->ok || strcmp(w->family, "collective") || !co->present) return 0;
    out->i = i;
    out->size = isnan(co->size_bytes) ? 0 : co->size_bytes; /* absent or null: 0 */
    out->t = isnan(co->time_s) ? 0 : co->time_s; /* the compute phase's median, as algbw */
    out->algbw = isnan(co->algbw_gbps) ? 0 : co->algbw_gbps;
    out->busbw = isnan(co->busbw_gbps) ? 0 : co->busbw_gbps;
    out->ranks = isnan(co->ranks) ? 0 : (int)co->ranks;
    out->inplace = co->in_place == 1;
    out->path = co->path;
    if (!out->path) out->path = "?";
    return out->size > 0 && out->t > 0;
}

static int cmp_crow(const void *a, const void *b)
{
    const crow *x = a, *y = b;
    return x->size < y->size ? -1 : x->size > y->size;
}

static const char *const coll_ops[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast"};

hb_status hb_report_collectives(ctx *c)
{
    hb_report *rp = c->rp;
    size_t ncoll = 0;
    for (size_t i = 0; i < rp->nrows; i++) ncoll += !strcmp(rp->rows[i].family, "collective");
    if (!ncoll) return HB_OK;
    crow *v = calloc(rp->nrows, sizeof *v);
    if (!v) return HB_ENOMEM;
    hb_doc_h(rp, 2, "collectives", "Collectives: NCCL by size, against host staging and peer copies");
    hb_doc_p(rp, "Figures as nccl-tests defines them (doc/PERFORMANCE.md): size S is count x element size for all_reduce and "
                 "broadcast, count x element size x ranks for all_gather and reduce_scatter; algbw = S / t; busbw = algbw x "
                 "2(n-1)/n (all_reduce), (n-1)/n (all_gather, reduce_scatter), 1 (broadcast). t is the median compute time of a call "
                 "(device events around the collective; mode resident: the data lives on the GPU, as in nccl-tests). With one rank no byte crosses a link and busbw is 0 "
                 "except for broadcast: the plots then show algbw. Paths: nccl (out of place, and in place), host (D2H, reduce on "
                 "the CPU, H2D) and peer (cudaMemcpyPeer).");
    json_t *ids = plot_ids_new();
    json_t *routing = json_array();
    json_t *rows_x = hb_doc_table(rp, "Where NCCL beats host staging (mode resident, out of place; per backend, op and dtype)", 0, 6,
                                  "backend", "op", "dtype", "ranks", "NCCL faster from", "host faster at");
    json_t *rows_all = hb_doc_table(rp, "Every collective case", 1, 10, "backend", "op", "dtype", "path", "in place", "mode", "size",
                                    "time", "algbw GB/s", "busbw GB/s");
    for (int d = 0; d < rp->ndevs; d++) {
        const hb_rdev *dv = &rp->devs[d];
        for (int o = 0; o < 4; o++) {
            FILE *dat = NULL;
            hb_plot *p = NULL;
            hb_sb body = {0};
            int nser = 0, ranks = 0;
            static const char *const dts[] = {"f32", "f16", "bf16"};
            static const char *const paths[] = {"nccl", "host", "peer"};
            for (int pi = 0; pi < 3; pi++)
                for (int ip = 0; ip < 2; ip++)
                    for (int di = 0; di < 3; di++) {
                        size_t m = 0;
                        for (size_t i = 0; i < rp->nrows; i++) {
                            const hb_rrow *w = &rp->rows[i];
                            crow r;
                            if (w->dev != d || strcmp(w->op, coll_ops[o]) || strcmp(w->dtype, dts[di]) || strcmp(w->mode, "resident") ||
                                !crow_get(w, i, &r) || strcmp(r.path, paths[pi]) || r.inplace != ip)
                                continue;
                            v[m++] = r;
                        }
                        if (!m) continue;
                        qsort(v, m, sizeof *v, cmp_crow);
                        ranks = v[0].ranks;
                        if (!p) {
                            p = hb_report_plot_begin(rp, F("coll_%s_%s", dv->id, coll_ops[o]), "collectives",
                                                     ranks > 1 ? F("%s over %d ranks (rank 0 on %s): busbw against size", coll_ops[o], ranks, dv->id)
                                                                 : F("%s on %s (1 rank): algbw against size", coll_ops[o], dv->id), 900, 420, &dat);
                            if (!p) { free(v); json_decref(ids); json_decref(routing); return HB_EDEVICE; }
                            hb_sb_printf(&body, "set title '%s'\nset logscale x 2\nset logscale y 10\nset format x '%%.0b%%B'\nset format y '%%g'\n"
                                                "set xlabel 'size S (bytes)'\nset ylabel '%s (GB/s)'\nset key left top\nplot ",
                                         hb_report_gp_str(p->title), ranks > 1 ? "busbw" : "algbw");
                        }
                        if (nser) { fprintf(dat, "\n\n"); hb_sb_printf(&body, ", \\\n     "); }
                        fprintf(dat, "# %s %s %s: size_bytes gbps\n", paths[pi], ip ? "in-place" : "out-of-place", dts[di]);
                        for (size_t k = 0; k < m; k++) fprintf(dat, "%.17g %.6g\n", v[k].size, ranks > 1 ? v[k].busbw : v[k].algbw);
                        hb_sb_printf(&body, "'%s.dat' index %d using 1:2 with linespoints title '%s%s %s'", p->id, nser, paths[pi],
                                     ip ? " in-place" : "", dts[di]);
                        nser++;
                    }
            if (p) {
                hb_sb_printf(&body, "\n");
                fclose(dat);
                hb_status st = hb_report_plot_script(rp, p, body.s);
                if (st != HB_OK) { hb_sb_free(&body); free(v); json_decref(ids); json_decref(routing); return st; }
                plot_id_add(ids, p);
            }
            hb_sb_free(&body);
            /* crossover and routing per dtype: NCCL (out of place) against host at the same size */
            for (int di = 0; di < 3; di++) {
                size_t m = 0;
                for (size_t i = 0; i < rp->nrows; i++) {
                    const hb_rrow *w = &rp->rows[i];
                    crow r;
                    if (w->dev != d || strcmp(w->op, coll_ops[o]) || strcmp(w->dtype, dts[di]) || strcmp(w->mode, "resident") ||
                        !crow_get(w, i, &r) || r.inplace)
                        continue;
                    v[m++] = r;
                }
                if (!m) continue;
                qsort(v, m, sizeof *v, cmp_crow);
                /* per size: the fastest path; NCCL's and host's times */
                json_t *ranges = json_array();
                double from = NAN, last_host_win = NAN;
                int compared = 0;
                const char *cur = NULL;
                for (size_t k = 0; k < m;) {
                    size_t e = k;
                    double tn = NAN, th = NAN, tb = INFINITY;
                    const char *best = NULL;
                    while (e < m && v[e].size == v[k].size) {
                        if (!strcmp(v[e].path, "nccl")) tn = v[e].t;
                        if (!strcmp(v[e].path, "host")) th = v[e].t;
                        if (v[e].t < tb) { tb = v[e].t; best = v[e].path; }
                        e++;
                    }
                    if (isfinite(tn) && isfinite(th)) {
                        compared++;
                        if (th < tn) { last_host_win = v[k].size; from = NAN; }
                        else if (isnan(from)) from = v[k].size;
                    }
                    if (!cur || strcmp(cur, best)) {
                        json_array_append_new(ranges, json_pack("{s:f,s:s}", "from_bytes", v[k].size, "path", best));
                        cur = best;
                    }
                    k = e;
                }
                if (compared)
                    hb_doc_row(rows_x, 6, dv->id, coll_ops[o], dts[di], F("%d", v[0].ranks),
                               isnan(from) ? "[warn] no size measured" : F("[good] %s", hb_report_fmt_bytes(from)),
                               isnan(last_host_win) ? "none" : F("up to %s", hb_report_fmt_bytes(last_host_win)));
                json_array_append_new(routing, json_pack("{s:s,s:s,s:s,s:s,s:i,s:o,s:o}", "machine", rp->runs[dv->run].label, "backend",
                                                         dv->backend, "op", coll_ops[o], "dtype", dts[di], "ranks", v[0].ranks,
                                                         "nccl_faster_than_host_from_bytes", isnan(from) ? json_null() : json_real(from),
                                                         "ranges", ranges));
            }
        }
        for (size_t i = 0; i < rp->nrows; i++) {
            const hb_rrow *w = &rp->rows[i];
            crow r;
            if (w->dev != d || !crow_get(w, i, &r)) continue;
            hb_doc_row(rows_all, 10, dv->id, w->op, w->dtype, r.path, r.inplace ? "yes" : "no", w->mode, hb_report_fmt_bytes(r.size),
                       hb_report_fmt_time(r.t), hb_report_fmt_num(r.algbw), hb_report_fmt_num(r.busbw));
        }
    }
    hb_doc_plots(rp, ids);
    /* the routing table: routing.json's "collectives" and a table of its ranges */
    json_t *rows_r = hb_doc_table(rp, "Routing table, collectives: the fastest measured path from each size on (mode resident)", 0, 5,
                                  "backend", "op", "dtype", "ranks", "size ranges -> path");
    size_t k;
    json_t *e;
    json_array_foreach(routing, k, e) {
        char txt[600] = "";
        size_t o = 0, j;
        json_t *rg;
        json_array_foreach(json_object_get(e, "ranges"), j, rg)
            if (o < sizeof txt)
                o += (size_t)snprintf(txt + o, sizeof txt - o, "%s%s+: %s", j ? "; " : "",
                                      hb_report_fmt_bytes(json_number_value(json_object_get(rg, "from_bytes"))),
                                      json_string_value(json_object_get(rg, "path")));
        hb_doc_row(rows_r, 5, json_string_value(json_object_get(e, "backend")), json_string_value(json_object_get(e, "op")),
                   json_string_value(json_object_get(e, "dtype")), F("%lld", (long long)json_integer_value(json_object_get(e, "ranks"))), txt);
    }
    if (rp->routing) json_object_set(rp->routing, "collectives", routing);
    json_object_set_new(rp->summary, "collectives", json_pack("{s:I,s:o}", "cases", (json_int_t)ncoll, "routing", routing));
    free(v);
    return HB_OK;
}
