/*
 * ranks.c - the files of a multi-rank run merged into one results file (ranks.h has the rules):
 * each rank file read and validated whole, the launch checked (every rank once, one launch's
 * options and command line), collective cases folded into one record per case with every rank's
 * figures, other records kept per backend instance with duplicates counted, one end record.
 */
#include "results/ranks.h"
#include "results/results.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One rank's file in memory: the records of each type in file order (owned). */
typedef struct rank_file {
    const char *path;   /* borrowed */
    int present;        /* 0: absent (hb_ranks_opts.absent_ok) */
    int rank, ranks;    /* meta.launch */
    json_t *meta, *backends, *cases, *checks, *end;
} rank_file;

/* A merged case: a kept record (rec), or a collective's records per rank (per[r], borrowed; NULL
 * where rank r lacks it). */
typedef struct slot {
    json_t *rec;
    json_t **per;
} slot;

static hb_status fail(char *err, size_t errlen, hb_status st, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static hb_status fail(char *err, size_t errlen, hb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return st;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static double num_or_nan(json_t *v) { return json_is_number(v) ? json_number_value(v) : (double)NAN; }

/* The object of a case record that carries its per-rank figures: "collective" for a collective,
 * "tensor_parallel" for the tensor-parallel decoder layer (measure/chain.c), NULL for other ops. */
static const char *rank_object(json_t *rec)
{
    const char *op = hb_rec_str(rec, "op");
    int o = op ? hb_op_parse(op) : -1;
    if (o >= 0 && hb_op_is_collective((hb_op)o)) return "collective";
    if (o == HB_OP_CHAIN) return "tensor_parallel";
    return NULL;
}

/* A collective case or a tensor-parallel layer over several ranks: its records are folded into one. */
static int is_multi_rank_collective(json_t *rec)
{
    const char *obj = rank_object(rec);
    if (!obj) return 0;
    double a = num_or_nan(json_object_get(json_object_get(rec, "shape"), "ranks"));
    double b = num_or_nan(json_object_get(json_object_get(rec, obj), "ranks"));
    return a > 1 || b > 1;
}

/* The identity of a case record within its file (see ranks.h): "C" or "N", op, the shape without
 * "rank" (sorted JSON), the backend (its type only for a collective), mode, route, dtype and the
 * occurrence of that text in the file so far (counted in seen). New string; NULL when out of memory. */
static char *case_ident(json_t *rec, int coll, json_t *seen)
{
    const char *be = hb_rec_str(rec, "backend");
    char bt[256];
    snprintf(bt, sizeof bt, "%s", be ? be : "");
    if (coll) bt[strcspn(bt, ":")] = 0;
    json_t *sh = json_object_get(rec, "shape");
    json_t *s2 = json_is_object(sh) ? json_copy(sh) : json_object();
    if (!s2) return NULL;
    json_object_del(s2, "rank");
    char *shs = json_dumps(s2, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(s2);
    if (!shs) return NULL;
    char *id = NULL;
    const char *op = hb_rec_str(rec, "op"), *mode = hb_rec_str(rec, "mode"), *route = hb_rec_str(rec, "route"),
               *dt = hb_rec_str(rec, "dtype");
    if (asprintf(&id, "%s|%s|%s|%s|%s|%s|%s", coll ? "C" : "N", op ? op : "", shs, bt, mode ? mode : "",
                 route ? route : "", dt ? dt : "") < 0)
        id = NULL;
    free(shs);
    if (!id) return NULL;
    json_int_t k = json_integer_value(json_object_get(seen, id)) + 1;
    json_object_set_new(seen, id, json_integer(k));
    char *out = NULL;
    if (asprintf(&out, "%s#%lld", id, (long long)k) < 0) out = NULL;
    free(id);
    return out;
}

/* ---- reading and checking the rank files ---- */

static hb_status keep_cb(json_t *rec, hb_record_type t, int lineno, void *user, char *why, size_t whylen)
{
    (void)lineno;
    rank_file *f = user;
    json_t *dst;
    switch (t) {
    case HB_REC_META: json_decref(f->meta); f->meta = json_incref(rec); return HB_OK;
    case HB_REC_END: json_decref(f->end); f->end = json_incref(rec); return HB_OK;
    case HB_REC_BACKEND: dst = f->backends; break;
    case HB_REC_CASE: dst = f->cases; break;
    case HB_REC_MODE_CHECK: dst = f->checks; break;
    default: return HB_OK;
    }
    if (json_array_append(dst, rec)) { snprintf(why, whylen, "out of memory"); return HB_ENOMEM; }
    return HB_OK;
}

static void rank_file_free(rank_file *f)
{
    json_decref(f->meta);
    json_decref(f->backends);
    json_decref(f->cases);
    json_decref(f->checks);
    json_decref(f->end);
}

static hb_status load_rank(rank_file *f, int absent_ok, char *err, size_t errlen)
{
    f->backends = json_array();
    f->cases = json_array();
    f->checks = json_array();
    if (!f->backends || !f->cases || !f->checks) return fail(err, errlen, HB_ENOMEM, "%s: out of memory", f->path);
    struct stat sb;
    if (absent_ok && (stat(f->path, &sb) != 0 ? errno == ENOENT : S_ISREG(sb.st_mode) && sb.st_size == 0))
        return HB_OK; /* the rank wrote nothing: every case is missing on it */
    char why[1024];
    hb_status st = hb_results_stream(f->path, HB_LOAD_STRICT, keep_cb, f, why, sizeof why);
    if (st == HB_ENOMEM) return fail(err, errlen, st, "%s", why);
    if (st != HB_OK) return fail(err, errlen, HB_EINVAL, "%s", why); /* names the file (and its line) */
    json_t *l = json_object_get(f->meta, "launch");
    json_t *r = json_object_get(l, "rank"), *n = json_object_get(l, "ranks");
    if (!json_is_integer(r) || !json_is_integer(n) || json_integer_value(n) < 1 || json_integer_value(r) < 0 ||
        json_integer_value(n) > 65535)
        return fail(err, errlen, HB_EINVAL,
                    "%s: meta.launch {rank, ranks} missing or not integers: not a rank's results file of this hybench "
                    "(every run records its place in the launch there)", f->path);
    f->rank = (int)json_integer_value(r);
    f->ranks = (int)json_integer_value(n);
    if (f->rank >= f->ranks)
        return fail(err, errlen, HB_EINVAL, "%s: meta.launch.rank %d is not below its launch.ranks %d", f->path, f->rank, f->ranks);
    if (json_is_true(json_object_get(json_object_get(f->meta, "ranks"), "merged")))
        return fail(err, errlen, HB_EINVAL, "%s: already a merged file (meta.ranks.merged): give the ranks' own files", f->path);
    f->present = 1;
    return HB_OK;
}

/* The command line without --out FILE, --out=FILE, --force and --ranks N (what may differ between
 * the ranks of one launch). New string or NULL. */
static char *cmdline_core(const char *cl)
{
    char *copy = strdup(cl ? cl : ""), *out = calloc(1, strlen(cl ? cl : "") + 1);
    if (!copy || !out) { free(copy); free(out); return NULL; }
    int skip = 0;
    for (char *sv = NULL, *t = strtok_r(copy, " ", &sv); t; t = strtok_r(NULL, " ", &sv)) {
        if (skip) { skip = 0; continue; }
        if (!strcmp(t, "--out") || !strcmp(t, "--ranks")) { skip = 1; continue; }
        if (!strncmp(t, "--out=", 6) || !strncmp(t, "--ranks=", 8) || !strcmp(t, "--force")) continue;
        if (*out) strcat(out, " ");
        strcat(out, t);
    }
    free(copy);
    return out;
}

/* b is of a's launch: the same options (without "out") and command line (cmdline_core). */
static hb_status same_launch(const rank_file *a, const rank_file *b, char *err, size_t errlen)
{
    json_t *oa = json_object_get(a->meta, "options"), *ob = json_object_get(b->meta, "options");
    oa = oa ? json_deep_copy(oa) : json_object();
    ob = ob ? json_deep_copy(ob) : json_object();
    if (!oa || !ob) { json_decref(oa); json_decref(ob); return fail(err, errlen, HB_ENOMEM, "out of memory"); }
    json_object_del(oa, "out");
    json_object_del(ob, "out");
    hb_status st = HB_OK;
    if (!json_equal(oa, ob)) {
        const char *k, *diff = "?";
        json_t *v;
        json_object_foreach(oa, k, v) if (!json_equal(v, json_object_get(ob, k))) { diff = k; break; }
        if (!strcmp(diff, "?")) json_object_foreach(ob, k, v) if (!json_object_get(oa, k)) { diff = k; break; }
        st = fail(err, errlen, HB_EINVAL, "%s: its run options differ from %s's (rank %d) in options.%s: not one launch's files",
                  b->path, a->path, a->rank, diff);
    }
    json_decref(oa);
    json_decref(ob);
    if (st) return st;
    char *ca = cmdline_core(hb_rec_str(a->meta, "command_line")), *cb = cmdline_core(hb_rec_str(b->meta, "command_line"));
    if (!ca || !cb) st = fail(err, errlen, HB_ENOMEM, "out of memory");
    else if (strcmp(ca, cb))
        st = fail(err, errlen, HB_EINVAL,
                  "%s: its command line differs from %s's (rank %d) beyond --out and --force, so its case list may "
                  "differ: \"%.300s\" against \"%.300s\"", b->path, a->path, a->rank, cb, ca);
    free(ca);
    free(cb);
    return st;
}

/* Check the launch and order the files by rank: *byrankp (allocated, N entries) holds the file of
 * rank r at r (NULL when absent), *nranks = N. */
static hb_status order_ranks(rank_file *fs, int n, int absent_ok, rank_file ***byrankp, int *nranks, char *err, size_t errlen)
{
    int first = -1;
    for (int i = 0; i < n && first < 0; i++)
        if (fs[i].present) first = i;
    if (first < 0) return fail(err, errlen, HB_EINVAL, "no rank wrote a results file (%s%s absent or empty)", fs[0].path, n > 1 ? " ..." : "");
    int N = fs[first].ranks;
    for (int i = 0; i < n; i++)
        if (fs[i].present && fs[i].ranks != N)
            return fail(err, errlen, HB_EINVAL, "%s: meta.launch.ranks is %d but %s's is %d: files of different launches",
                        fs[i].path, fs[i].ranks, fs[first].path, N);
    rank_file **byrank = *byrankp = calloc((size_t)N, sizeof *byrank);
    if (!byrank) return fail(err, errlen, HB_ENOMEM, "out of memory");
    if (absent_ok) {
        if (N != n)
            return fail(err, errlen, HB_EINVAL, "%s: meta.launch.ranks is %d, but %d ranks were launched", fs[first].path, N, n);
        for (int i = 0; i < n; i++) {
            if (fs[i].present && fs[i].rank != i)
                return fail(err, errlen, HB_EINVAL, "%s: meta.launch.rank is %d, expected %d", fs[i].path, fs[i].rank, i);
            byrank[i] = fs[i].present ? &fs[i] : NULL;
        }
    } else {
        for (int r = 0; r < N; r++) byrank[r] = NULL;
        for (int i = 0; i < n; i++) {
            rank_file *o = byrank[fs[i].rank];
            if (o) return fail(err, errlen, HB_EINVAL, "%s and %s are both rank %d of the launch", o->path, fs[i].path, fs[i].rank);
            byrank[fs[i].rank] = &fs[i];
        }
        char miss[256] = "";
        int nm = 0;
        for (int r = 0; r < N; r++)
            if (!byrank[r] && nm++ < 16) snprintf(miss + strlen(miss), sizeof miss - strlen(miss), "%s%d", nm > 1 ? ", " : "", r);
        if (nm)
            return fail(err, errlen, HB_EINVAL, "rank%s %s%s of the %d-rank launch of %s missing (%d file%s given)", nm > 1 ? "s" : "",
                        miss, nm > 16 ? ", ..." : "", N, fs[first].path, n, n == 1 ? "" : "s");
    }
    *nranks = N;
    rank_file *base = NULL;
    for (int r = 0; r < N; r++) {
        if (!byrank[r]) continue;
        if (!base) { base = byrank[r]; continue; }
        hb_status st = same_launch(base, byrank[r], err, errlen);
        if (st) return st;
    }
    return HB_OK;
}

/* ---- merging ---- */

/* The one record of a collective case (or a tensor-parallel layer) from its ranks' records
 * per[0..N-1] (see ranks.h). New reference, NULL when out of memory; *missing counts the ranks
 * without the case. */
static json_t *merge_collective(json_t **per, int N, rank_file **byrank, size_t *missing)
{
    int b = 0;
    while (b < N && !per[b]) b++;
    const char *obj = rank_object(per[b]);
    if (!obj) obj = "collective";
    json_t *m = json_deep_copy(per[b]), *proto = NULL;
    for (int r = 0; r < N && !proto; r++)
        if (per[r]) proto = json_object_get(per[r], obj);
    json_t *co = proto ? json_deep_copy(proto) : json_object(), *pr = json_array();
    if (!m || !co || !pr) { json_decref(m); json_decref(co); json_decref(pr); return NULL; }
    double sum = 0, tmax = 0, relmax = NAN, arsum = 0, stsum = 0, grsum = 0;
    int nt = 0, nar = 0, ngr = 0, worst = -1, wrank = 0;
    const int tp = !strcmp(obj, "tensor_parallel");
    char wstatus[32] = "ok", wreason[600] = "";
    for (int r = 0; r < N; r++) {
        json_t *e = json_pack("{s:i}", "rank", r), *rec = per[r];
        const char *st, *why = NULL;
        char buf[600];
        if (!rec) {
            (*missing)++;
            st = "missing";
            if (byrank[r]) snprintf(buf, sizeof buf, "absent from %s (the rank ended before this case)", base_name(byrank[r]->path));
            else snprintf(buf, sizeof buf, "the rank wrote no results file");
            why = buf;
            json_object_set_new(e, "backend", json_null());
        } else {
            st = hb_rec_str(rec, "status");
            if (!st) st = "failed";
            why = hb_rec_str(rec, "reason");
            json_object_set(e, "backend", json_object_get(rec, "backend"));
        }
        json_object_set_new(e, "status", json_string(st));
        if (strcmp(st, "ok") && why && *why) json_object_set_new(e, "reason", json_string(why));
        json_t *c = rec ? json_object_get(rec, obj) : NULL;
        double t = num_or_nan(json_object_get(c, "time_s")), bw = num_or_nan(json_object_get(c, "busbw_gbps"));
        double rel = rec ? num_or_nan(json_object_get(rec, "rel_err")) : (double)NAN;
        json_object_set_new(e, "time_s", hb_json_num(t));
        if (tp) {
            double ar = num_or_nan(json_object_get(c, "allreduce_s")), sts = num_or_nan(json_object_get(c, "steps_s"));
            if (!isfinite(sts)) sts = t;
            json_object_set_new(e, "steps_s", hb_json_num(sts));
            json_object_set_new(e, "allreduce_s", hb_json_num(ar));
            if (isfinite(ar) && isfinite(sts)) { arsum += ar; stsum += sts; nar++; }
            double gr = num_or_nan(json_object_get(c, "graph_s")); /* the layer as one graph on this rank */
            if (isfinite(gr)) { json_object_set_new(e, "graph_s", json_real(gr)); grsum += gr; ngr++; }
        } else {
            json_object_set_new(e, "busbw_gbps", hb_json_num(bw));
        }
        json_object_set_new(e, "rel_err", hb_json_num(rel));
        json_array_append_new(pr, e);
        if (isfinite(t)) { sum += t; tmax = nt ? fmax(tmax, t) : t; nt++; }
        if (isfinite(rel) && !(rel <= relmax)) relmax = rel;
        int lv = hb_status_severity(st);
        if (lv > worst) {
            worst = lv;
            wrank = r;
            snprintf(wstatus, sizeof wstatus, "%s", !strcmp(st, "missing") || !strcmp(st, "invalid") ? "failed" : st);
            /* the rank's own reason (a missing case: "missing: ..."), else its status */
            if (!strcmp(st, "missing")) snprintf(wreason, sizeof wreason, "missing: %.560s", why);
            else snprintf(wreason, sizeof wreason, "%.580s", why && *why ? why : st);
        }
    }
    json_object_set_new(m, "status", json_string(wstatus));
    if (strcmp(wstatus, "ok")) {
        char reason[700];
        snprintf(reason, sizeof reason, "rank %d: %s", wrank, wreason);
        json_object_set_new(m, "reason", json_string(reason));
    } else {
        json_object_del(m, "reason");
    }
    if (nt) {
        double mean = sum / nt, size = num_or_nan(json_object_get(co, "size_bytes"));
        double fac = num_or_nan(json_object_get(co, "busbw_factor"));
        if (!isfinite(size)) size = num_or_nan(json_object_get(m, "bytes"));
        double algbw = mean > 0 ? size / mean / 1e9 : (double)NAN;
        json_object_set_new(co, "time_s", hb_json_num(mean));
        json_object_set_new(co, "time_max_s", hb_json_num(tmax));
        json_object_set_new(co, "time_ranks", json_integer(nt));
        if (tp) {
            /* the layer: the ranks' mean time, mean step time and mean all_reduce part of it */
            double ar = nar ? arsum / nar : (double)NAN, sts = nar ? stsum / nar : (double)NAN;
            json_object_set_new(co, "steps_s", hb_json_num(sts));
            json_object_set_new(co, "allreduce_s", hb_json_num(ar));
            json_object_set_new(co, "allreduce_share", hb_json_num(sts > 0 ? ar / sts : (double)NAN));
            /* the graph's mean only where every rank timed one (they capture on all ranks or none) */
            if (ngr == N) json_object_set_new(co, "graph_s", json_real(grsum / ngr));
            else json_object_del(co, "graph_s");
        } else {
            json_object_set_new(co, "algbw_gbps", hb_json_num(algbw));
            json_object_set_new(co, "busbw_gbps", hb_json_num(isfinite(fac) ? algbw * fac : (double)NAN));
        }
        /* the record's throughputs follow the mean time (gbps is algbw, docs/collectives.md) */
        double flops = num_or_nan(json_object_get(m, "flops"));
        if (isfinite(algbw)) json_object_set_new(m, "gbps", json_real(algbw));
        if (isfinite(flops) && mean > 0) json_object_set_new(m, "gflops", json_real(flops / mean / 1e9));
        double cv = num_or_nan(json_object_get(m, "ceiling_value"));
        const char *bound = hb_rec_str(m, "bound");
        double x = num_or_nan(json_object_get(m, bound && !strcmp(bound, "compute") ? "gflops" : "gbps"));
        if (cv > 0 && isfinite(x)) json_object_set_new(m, "fraction", json_real(x / cv));
    }
    if (isfinite(relmax)) json_object_set_new(m, "rel_err", json_real(relmax));
    json_object_set_new(co, "per_rank", pr);
    json_object_set_new(m, obj, co);
    return m;
}

/* The end records' mode_invariance united: per backend the lowest rank's summary, the overall
 * summary summed from them (worst: the backends' worst pair with the largest |log ratio|). New
 * reference or NULL when no rank has one. */
static json_t *merge_mode_invariance(rank_file **byrank, int N)
{
    json_t *out = NULL, *bk = json_object();
    for (int r = 0; r < N; r++) {
        json_t *mi = byrank[r] ? json_object_get(byrank[r]->end, "mode_invariance") : NULL;
        if (!json_is_object(mi)) continue;
        if (!out) out = json_deep_copy(mi);
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(mi, "backends"), k, v)
            if (!json_object_get(bk, k)) json_object_set(bk, k, v);
    }
    if (!out) { json_decref(bk); return NULL; }
    static const char *const sums[] = {"pairs", "within_5pct", "beyond_20pct", "moved", "noisy"};
    json_int_t tot[5] = {0};
    json_t *worst = NULL;
    double wl = -1;
    const char *k;
    json_t *v;
    json_object_foreach(bk, k, v) {
        for (int i = 0; i < 5; i++) tot[i] += json_integer_value(json_object_get(v, sums[i]));
        json_t *w = json_object_get(v, "worst");
        double ratio = num_or_nan(json_object_get(w, "ratio"));
        if (ratio > 0 && fabs(log(ratio)) > wl) { wl = fabs(log(ratio)); worst = w; }
    }
    json_t *ov = json_object();
    for (int i = 0; i < 5; i++) json_object_set_new(ov, sums[i], json_integer(tot[i]));
    json_object_set_new(ov, "within_5pct_share", tot[0] ? json_real((double)tot[1] / (double)tot[0]) : json_null());
    json_object_set_new(ov, "worst", worst ? json_incref(worst) : json_null());
    json_object_set_new(out, "overall", ov);
    json_object_set_new(out, "backends", bk);
    return out;
}

/* The merged end record from the merged case records (see ranks.h). New reference. */
static json_t *merged_end(rank_file **byrank, int N, json_t *cases, hb_ranks_summary *s)
{
    json_t *end = NULL, *bk = json_object(), *percount = json_object();
    double elapsed = 0;
    int interrupted = 0;
    for (int r = 0; r < N; r++) {
        json_t *e = byrank[r] ? byrank[r]->end : NULL;
        if (!e) continue;
        if (!end) end = json_deep_copy(e);
        double el = num_or_nan(json_object_get(e, "elapsed_s"));
        if (el > elapsed) elapsed = el;
        interrupted |= json_is_true(json_object_get(e, "interrupted"));
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(e, "backends"), k, v)
            if (!json_object_get(bk, k)) json_object_set_new(bk, k, json_deep_copy(v));
    }
    if (!end) end = json_pack("{s:s}", "type", "end");
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        const char *b = hb_rec_str(c, "backend");
        if (b) json_object_set_new(percount, b, json_integer(json_integer_value(json_object_get(percount, b)) + 1));
    }
    const char *k;
    json_t *v;
    json_object_foreach(bk, k, v)
        if (json_is_object(v)) json_object_set_new(v, "cases", json_integer(json_integer_value(json_object_get(percount, k))));
    json_object_set_new(end, "cases", json_integer((json_int_t)s->cases));
    json_object_set_new(end, "ok", json_integer(s->counts[HB_OK]));
    json_object_set_new(end, "wrong", json_integer(s->counts[HB_EWRONG]));
    json_object_set_new(end, "failed", json_integer(s->counts[HB_EDEVICE] + s->counts[HB_EINVAL]));
    json_object_set_new(end, "skipped", json_integer(s->counts[HB_ESKIP]));
    json_object_set_new(end, "crashed", json_integer(s->counts[HB_ECRASH]));
    json_object_set_new(end, "no_resource", json_integer(s->counts[HB_ENOMEM]));
    json_object_set_new(end, "timed_out", json_integer(s->counts[HB_ETIMEOUT]));
    json_object_set_new(end, "elapsed_s", json_real(elapsed));
    json_object_set_new(end, "interrupted", json_boolean(interrupted));
    json_object_set_new(end, "backends", bk);
    json_t *mi = merge_mode_invariance(byrank, N);
    if (mi) json_object_set_new(end, "mode_invariance", mi);
    else json_object_del(end, "mode_invariance");
    json_decref(percount);
    return end;
}

/* ---- cases a rank's own device never ran ---- */

/* The type of a backend instance name (the text before ':') into out. */
static void backend_type(const char *be, char *out, size_t len)
{
    snprintf(out, len, "%s", be ? be : "");
    out[strcspn(out, ":")] = 0;
}

/* A per-rank device backend: a type whose instance names (those with ':') differ between ranks
 * (cuda:0 on rank 0, cuda:1 on rank 1), while a host backend has one name on every rank. For each
 * such type, a case that one rank's instance ran and rank r's instance has no record of (rank r
 * ended before it) gets a record of rank r's instance: status failed, reason "missing: ...". Rank
 * r's instance name is known from its backend or case records (none: nothing can be marked; one
 * type with several instances on a rank: ambiguous, not marked). Appended to cases; counted in s. */
static hb_status mark_missing(rank_file **byrank, int N, json_t *cases, hb_ranks_summary *s)
{
    json_t *inst = json_array(), *names = json_object(), *perrank = json_object(), *first = json_object(), *order = json_array();
    json_t *present = json_array();
    hb_status st = inst && names && perrank && first && order && present ? HB_OK : HB_ENOMEM;
    char ty[256];
    for (int r = 0; r < N && !st; r++) {
        json_t *m = json_object(), *arrs[2] = {byrank[r] ? byrank[r]->backends : NULL, byrank[r] ? byrank[r]->cases : NULL};
        json_array_append_new(inst, m);
        for (int a = 0; a < 2; a++) {
            size_t i;
            json_t *rec;
            json_array_foreach(arrs[a], i, rec) {
                const char *nm = hb_rec_str(rec, "backend");
                if (!nm || !strchr(nm, ':')) continue;
                backend_type(nm, ty, sizeof ty);
                const char *cur = json_string_value(json_object_get(m, ty));
                if (!cur) json_object_set_new(m, ty, json_string(nm));
                else if (strcmp(cur, nm)) json_object_set_new(m, ty, json_string("")); /* several: ambiguous */
                const char *other = json_string_value(json_object_get(names, ty));
                if (!other) json_object_set_new(names, ty, json_string(nm));
                else if (strcmp(other, nm)) json_object_set_new(perrank, ty, json_true());
            }
        }
    }
    /* the identities (at type level, with occurrence) each rank's per-rank devices ran */
    for (int r = 0; r < N && !st; r++) {
        json_t *have = json_object(), *seen = json_object();
        json_array_append_new(present, have);
        size_t i;
        json_t *rec;
        json_array_foreach(byrank[r] ? byrank[r]->cases : NULL, i, rec) {
            backend_type(hb_rec_str(rec, "backend"), ty, sizeof ty);
            if (!json_object_get(perrank, ty) || (N > 1 && is_multi_rank_collective(rec))) continue;
            char *id = case_ident(rec, 1, seen);
            if (!id) { st = HB_ENOMEM; break; }
            json_object_set_new(have, id, json_true());
            if (!json_object_get(first, id)) {
                json_object_set_new(first, id, json_true());
                json_array_append_new(order, json_pack("[s,O]", id, rec));
            }
            free(id);
        }
        json_decref(seen);
    }
    static const char *const idf[] = {"key", "op", "family", "shape", "shape_str", "size", "name", "source", "model", "weight",
                                      "dtype", "mode", "route", "flops", "bytes", "bound", NULL};
    size_t i;
    json_t *pair;
    json_array_foreach(order, i, pair) {
        const char *id = json_string_value(json_array_get(pair, 0));
        json_t *rep = json_array_get(pair, 1);
        backend_type(hb_rec_str(rep, "backend"), ty, sizeof ty);
        for (int r = 0; r < N && !st; r++) {
            const char *nm = json_string_value(json_object_get(json_array_get(inst, (size_t)r), ty));
            if (!nm || !*nm || json_object_get(json_array_get(present, (size_t)r), id)) continue;
            json_t *m = json_pack("{s:s}", "type", "case");
            for (const char *const *f = idf; m && *f; f++)
                if (json_object_get(rep, *f)) json_object_set(m, *f, json_object_get(rep, *f));
            /* key: op|shape|backend|mode|route|dtype with rank r's instance */
            const char *k = hb_rec_str(rep, "key");
            const char *p1 = k ? strchr(k, '|') : NULL, *p2 = p1 ? strchr(p1 + 1, '|') : NULL, *p3 = p2 ? strchr(p2 + 1, '|') : NULL;
            char key[1024], why[600];
            if (p3) {
                snprintf(key, sizeof key, "%.*s%s%s", (int)(p2 + 1 - k), k, nm, p3);
                json_object_set_new(m, "key", json_string(key));
            }
            json_object_set_new(m, "backend", json_string(nm));
            json_object_set_new(m, "status", json_string("failed"));
            snprintf(why, sizeof why, "missing: rank %d's file (%s) has no record of this case on %s (the rank ended before it)", r,
                     byrank[r] ? base_name(byrank[r]->path) : "none", nm);
            json_object_set_new(m, "reason", json_string(why));
            if (!m || json_array_append_new(cases, m)) { st = HB_ENOMEM; break; }
            s->missing++;
            s->counts[HB_EDEVICE]++;
            s->cases++;
        }
    }
    json_decref(inst);
    json_decref(names);
    json_decref(perrank);
    json_decref(first);
    json_decref(order);
    json_decref(present);
    return st;
}

/* The records of the merged file, in order (meta, backends, cases, mode checks, end), into out
 * (an array); s filled. Returns HB_OK or HB_ENOMEM. */
static hb_status build(rank_file **byrank, int N, json_t *out, hb_ranks_summary *s)
{
    json_t *index = json_object(), *cases = json_array(), *names = json_object(), *backends = json_array();
    json_t *checks = json_array(), *dup_by_rank = json_array();
    slot *slots = NULL;
    size_t nslots = 0, cap = 0, dup_checks = 0;
    hb_status st = HB_OK;
    if (!index || !cases || !names || !backends || !checks || !dup_by_rank) st = HB_ENOMEM;
    /* case records: collectives folded by identity, the others kept once per backend instance */
    for (int r = 0; r < N && !st; r++) {
        json_int_t dups = 0;
        if (byrank[r]) {
            json_t *seen = json_object();
            size_t i;
            json_t *rec;
            json_array_foreach(byrank[r]->cases, i, rec) {
                int coll = N > 1 && is_multi_rank_collective(rec);
                char *id = seen ? case_ident(rec, coll, seen) : NULL;
                if (!id) { st = HB_ENOMEM; break; }
                json_t *ix = json_object_get(index, id);
                if (ix && !coll) {
                    dups++;
                } else if (ix) {
                    slots[json_integer_value(ix)].per[r] = rec;
                } else {
                    if (nslots == cap) {
                        cap = cap ? 2 * cap : 256;
                        slot *ns = realloc(slots, cap * sizeof *ns);
                        if (!ns) { free(id); st = HB_ENOMEM; break; }
                        slots = ns;
                    }
                    slot *sl = &slots[nslots];
                    sl->rec = coll ? NULL : rec;
                    sl->per = coll ? calloc((size_t)N, sizeof *sl->per) : NULL;
                    if (coll && !sl->per) { free(id); st = HB_ENOMEM; break; }
                    if (coll) sl->per[r] = rec;
                    json_object_set_new(index, id, json_integer((json_int_t)nslots++));
                }
                free(id);
            }
            json_decref(seen);
        }
        json_array_append_new(dup_by_rank, json_integer(dups));
        s->dup_cases += (size_t)dups;
    }
    for (size_t i = 0; i < nslots && !st; i++) {
        json_t *rec = slots[i].per ? merge_collective(slots[i].per, N, byrank, &s->missing) : json_incref(slots[i].rec);
        if (!rec || json_array_append_new(cases, rec)) { st = HB_ENOMEM; break; }
        hb_status cs = hb_status_from_name(hb_rec_str(rec, "status"));
        if ((unsigned)cs < HB_STATUS_COUNT) s->counts[cs]++;
        s->cases++;
    }
    if (!st && N > 1) st = mark_missing(byrank, N, cases, s);
    /* backend records: one per instance name; mode checks: per backend, the lowest rank's */
    json_t *check_owner = json_object();
    for (int r = 0; r < N && !st; r++) {
        if (!byrank[r]) continue;
        size_t i;
        json_t *b;
        json_array_foreach(byrank[r]->backends, i, b) {
            const char *nm = hb_rec_str(b, "backend");
            if (!nm) nm = "";
            if (json_object_get(names, nm)) { s->dup_backends++; continue; }
            json_object_set_new(names, nm, json_true());
            json_array_append(backends, b);
        }
        json_array_foreach(byrank[r]->checks, i, b) {
            const char *nm = hb_rec_str(b, "backend");
            if (!nm) nm = "";
            json_t *owner = json_object_get(check_owner, nm);
            if (!owner) json_object_set_new(check_owner, nm, owner = json_integer(r));
            if (json_integer_value(owner) != r) { dup_checks++; continue; }
            json_array_append(checks, b);
        }
    }
    json_decref(check_owner);
    if (!st) {
        /* meta: the lowest rank's, with the launch's facts */
        rank_file *base = NULL;
        for (int r = 0; r < N && !base; r++) base = byrank[r];
        json_t *meta = json_deep_copy(base->meta), *files = json_array(), *incomplete = json_array(), *absent = json_array();
        for (int r = 0; r < N; r++) {
            json_array_append_new(files, byrank[r] ? json_string(base_name(byrank[r]->path)) : json_null());
            if (!byrank[r]) json_array_append_new(absent, json_integer(r));
            if (!byrank[r] || !byrank[r]->end) { json_array_append_new(incomplete, json_integer(r)); s->incomplete++; }
        }
        json_t *dd = json_pack("{s:I,s:I,s:I,s:O,s:s}", "cases", (json_int_t)s->dup_cases, "backends", (json_int_t)s->dup_backends,
                               "mode_checks", (json_int_t)dup_checks, "cases_by_rank", dup_by_rank, "why",
                               "a record whose case and backend instance name a lower rank's file already has (host backends, "
                               "such as cpu, measure the same host on every rank): the lowest rank's is kept");
        json_t *rk = json_pack("{s:i,s:o,s:b,s:o,s:I,s:o}", "n", N, "files", files, "merged", 1, "duplicates_dropped", dd,
                               "missing_cases", (json_int_t)s->missing, "incomplete", incomplete);
        if (!meta || !rk) { json_decref(meta); json_decref(rk); json_decref(absent); st = HB_ENOMEM; }
        else {
            if (json_array_size(absent)) json_object_set_new(rk, "absent", absent);
            else json_decref(absent);
            json_object_set_new(meta, "ranks", rk);
            json_array_append_new(out, meta);
            json_array_extend(out, backends);
            json_array_extend(out, cases);
            json_array_extend(out, checks);
            json_array_append_new(out, merged_end(byrank, N, cases, s));
        }
    }
    for (size_t i = 0; i < nslots; i++) free(slots[i].per);
    free(slots);
    json_decref(index);
    json_decref(cases);
    json_decref(names);
    json_decref(backends);
    json_decref(checks);
    json_decref(dup_by_rank);
    return st;
}

hb_status hb_ranks_merge(const char *const *files, int n, const char *out_path, const hb_ranks_opts *o,
                         hb_ranks_summary *sum, char *err, size_t errlen)
{
    hb_ranks_summary s0;
    if (!sum) sum = &s0;
    memset(sum, 0, sizeof *sum);
    if (n < 1 || !files) return fail(err, errlen, HB_EINVAL, "no rank file given");
    int absent_ok = o && o->absent_ok;
    rank_file *fs = calloc((size_t)n, sizeof *fs);
    rank_file **byrank = NULL;
    json_t *recs = json_array();
    hb_status st = fs && recs ? HB_OK : fail(err, errlen, HB_ENOMEM, "out of memory");
    for (int i = 0; i < n && !st; i++) {
        fs[i].path = files[i];
        st = load_rank(&fs[i], absent_ok, err, errlen);
    }
    int N = 0;
    if (!st) st = order_ranks(fs, n, absent_ok, &byrank, &N, err, errlen);
    if (!st && build(byrank, N, recs, sum) != HB_OK) st = fail(err, errlen, HB_ENOMEM, "out of memory merging the rank files");
    if (!st) {
        sum->nranks = N;
        hb_outfile of;
        char werr[600];
        st = hb_outfile_open(&of, out_path, werr, sizeof werr);
        size_t i;
        json_t *r;
        int wfail = 0;
        if (!st) {
            json_array_foreach(recs, i, r) {
                errno = 0;
                if (hb_record_write(fileno(of.f), json_incref(r)) != HB_OK) { wfail = errno ? errno : EIO; break; }
            }
            st = hb_outfile_close(&of, !wfail, werr, sizeof werr);
            if (wfail && !st) { snprintf(werr, sizeof werr, "cannot write %s: %s", out_path, strerror(wfail)); st = HB_EDEVICE; }
        }
        if (st) fail(err, errlen, HB_EDEVICE, "%s", werr);
    }
    for (int i = 0; fs && i < n; i++) rank_file_free(&fs[i]);
    free(fs);
    free(byrank);
    json_decref(recs);
    return st;
}
