/* gbench.c - a run as Google Benchmark JSON (results/results.h). */
#include "results/results.h"
#include "core/rstats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* "matmul|m=1024 n=1024 k=1024|cpu|f32|pageable|f32" -> "matmul/m:1024/n:1024/k:1024/cpu/f32/pageable/f32".
 * Google Benchmark names are "family/arg:value/..."; '|' and ' ' become '/', '=' becomes ':'. */
static void gbench_name(const char *key, char *buf, size_t len)
{
    size_t k = 0;
    for (const char *p = key; *p && k + 1 < len; p++) {
        char c = *p;
        if (c == '|' || c == ' ') c = '/';
        else if (c == '=') c = ':';
        if (c == '/' && k > 0 && buf[k - 1] == '/') continue;
        buf[k++] = c;
    }
    buf[k] = 0;
}

static json_t *num_or(json_t *v, json_int_t dflt)
{
    return json_is_integer(v) ? json_integer(json_integer_value(v))
         : json_is_real(v) ? json_integer((json_int_t)llround(json_real_value(v))) : json_integer(dflt);
}

static json_t *context_json(const hb_run *r, const char *metric)
{
    json_t *m = r->meta, *cpu = json_object_get(m, "cpu");
    const char *cl = hb_rec_str(m, "command_line");
    char exe[512] = "hybench";
    if (cl) {
        size_t l = strcspn(cl, " ");
        if (l > 0 && l < sizeof exe) { memcpy(exe, cl, l); exe[l] = 0; }
    }
    json_t *caches = json_array();
    static const struct { const char *field, *type; int level; } cl_tab[] = {
        { "l1d_bytes", "Data", 1 }, { "l2_bytes", "Unified", 2 }, { "l3_bytes", "Unified", 3 }
    };
    for (size_t i = 0; i < sizeof cl_tab / sizeof cl_tab[0]; i++) {
        json_t *v = json_object_get(cpu, cl_tab[i].field);
        if (!json_is_number(v) || json_number_value(v) <= 0) continue;
        /* num_sharing is not in the hybench schema: 0 = unknown */
        json_array_append_new(caches, json_pack("{s:s, s:i, s:I, s:i}", "type", cl_tab[i].type,
                                                "level", cl_tab[i].level,
                                                "size", (json_int_t)json_number_value(v), "num_sharing", 0));
    }
    json_t *load = json_object_get(m, "load_avg");
    json_t *scaling = json_object_get(cpu, "scaling_enabled");
    json_t *mhz = json_object_get(cpu, "mhz");
    if (!mhz) mhz = json_object_get(cpu, "mhz_per_cpu");
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:b, s:o, s:o, s:s, s:s, s:i, s:s, s:s, s:s, s:s}",
                     "date", hb_rec_str(m, "date") ? hb_rec_str(m, "date") : "",
                     "host_name", hb_rec_str(m, "host") ? hb_rec_str(m, "host") : "",
                     "executable", exe,
                     "num_cpus", num_or(json_object_get(cpu, "pus"), 0),
                     "mhz_per_cpu", num_or(mhz, 0),
                     "cpu_scaling_enabled", json_is_true(scaling),
                     "caches", caches,
                     "load_avg", json_is_array(load) ? json_deep_copy(load) : json_array(),
                     "library_build_type", "release",
                     "library_version", "hybench " HB_VERSION,
                     "json_schema_version", 1,
                     "hybench_run_id", hb_rec_str(m, "run_id") ? hb_rec_str(m, "run_id") : "",
                     "hybench_git_commit", hb_rec_str(m, "git_commit") ? hb_rec_str(m, "git_commit") : "",
                     "hybench_cpu_model", hb_rec_str(cpu, "model") ? hb_rec_str(cpu, "model") : "",
                     "hybench_metric", metric);
}

static json_t *aggregate(const char *name, const char *run_name, const char *agg, int fam, size_t n,
                         double value, const char *unit)
{
    char full[600];
    snprintf(full, sizeof full, "%s_%s", name, agg);
    return json_pack("{s:s, s:i, s:i, s:s, s:s, s:I, s:i, s:s, s:s, s:I, s:f, s:f, s:s}",
                     "name", full, "family_index", fam, "per_family_instance_index", 0,
                     "run_name", run_name, "run_type", "aggregate", "repetitions", (json_int_t)n,
                     "threads", 1, "aggregate_name", agg, "aggregate_unit", unit,
                     "iterations", (json_int_t)n, "real_time", value, "cpu_time", value,
                     "time_unit", "ns");
}

/* Google Benchmark's throughput counters on benchmark b (a new reference, returned): bytes_per_second
 * and items_per_second (state.SetBytesProcessed / SetItemsProcessed; hybench's items are FLOPs, so
 * items_per_second is FLOP/s). Left out where not finite or not positive (an op without FLOPs). */
static json_t *with_rates(json_t *b, double bps, double ips)
{
    if (!b) return NULL;
    if (isfinite(bps) && bps > 0) json_object_set_new(b, "bytes_per_second", json_real(bps));
    if (isfinite(ips) && ips > 0) json_object_set_new(b, "items_per_second", json_real(ips));
    return b;
}

/* mean, median and sample standard deviation of x[0..n) (x is sorted in place) */
static void summary(double *x, size_t n, double *mean, double *med, double *sd)
{
    double m = 0, m2 = 0;
    for (size_t j = 0; j < n; j++) { /* Welford */
        double d = x[j] - m;
        m += d / (double)(j + 1);
        m2 += d * (x[j] - m);
    }
    *mean = m;
    *sd = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0;
    hb_rs_sort(x, n);
    *med = hb_rs_median_sorted(x, n);
}

/* Where the benchmarks of one case go: appended to arr (a whole document in memory), or written to
 * out one by one (streaming). */
typedef struct gb_ctx {
    const char *metric;
    int aggregates_only, errors;
    int fam;
    json_t *seen;      /* key -> occurrences so far: a repeated key becomes NAME#2 */
    json_t *arr;
    FILE *out;
    int first;         /* no benchmark written yet */
    int header;        /* streaming: the context and the list's opening written */
} gb_ctx;

static int emit(gb_ctx *g, json_t *b)
{
    if (!b) return -1;
    if (g->arr) return json_array_append_new(g->arr, b);
    if (!g->first) fputs(",\n", g->out);
    g->first = 0;
    json_dumpf(b, g->out, JSON_INDENT(2));  /* write errors: ferror(out), checked per case */
    json_decref(b);
    return 0;
}

/* The benchmarks of one case record c. Returns 0, or -1 on ENOMEM. */
static int gbench_case(gb_ctx *g, json_t *c)
{
    const char *key = hb_rec_str(c, "key"), *status = hb_rec_str(c, "status");
    if (!key) return 0;
    char name[512];
    gbench_name(key, name, sizeof name);
    json_int_t rep = json_integer_value(json_object_get(g->seen, key)) + 1;
    if (json_object_set_new(g->seen, key, json_integer(rep))) return -1;
    if (rep > 1) {
        size_t l = strlen(name);
        snprintf(name + l, sizeof name - l, "#%lld", (long long)rep);
    }
    if (!status || strcmp(status, "ok")) {
        if (g->errors) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s: %s", status ? status : "no status",
                     hb_rec_str(c, "reason") ? hb_rec_str(c, "reason") : "");
            if (emit(g, json_pack("{s:s, s:i, s:i, s:s, s:s, s:i, s:i, s:i, s:b, s:s, s:i, s:f, s:f, s:s}",
                                  "name", name, "family_index", g->fam, "per_family_instance_index", 0, "run_name", name,
                                  "run_type", "iteration", "repetitions", 1, "repetition_index", 0, "threads", 1,
                                  "error_occurred", 1, "error_message", msg, "iterations", 0, "real_time", 0.0,
                                  "cpu_time", 0.0, "time_unit", "ns")))
                return -1;
            g->fam++;
        }
        return 0;
    }
    json_t *a = json_object_get(json_object_get(c, "samples"), g->metric);
    size_t n = json_array_size(a), k = 0;
    double *x = malloc((n ? n : 1) * sizeof *x);
    if (!x) return -1;
    for (size_t j = 0; j < n; j++) {
        double v = json_number_value(json_array_get(a, j));
        if (isfinite(v)) x[k++] = v * 1e9;
    }
    if (k == 0) { free(x); return 0; }
    int fam = g->fam, rc = 0;
    /* per call: bytes moved and FLOPs (the case's own figures); per repetition rate = that / time */
    double bytes = json_number_value(json_object_get(c, "bytes")), flops = json_number_value(json_object_get(c, "flops"));
    double *rb = malloc(2 * k * sizeof *rb);
    if (!rb) { free(x); return -1; }
    double *ri = rb + k;
    for (size_t j = 0; j < k; j++) { rb[j] = bytes / (x[j] * 1e-9); ri[j] = flops / (x[j] * 1e-9); }
    if (!g->aggregates_only)
        for (size_t j = 0; j < k && !rc; j++)
            rc = emit(g, with_rates(json_pack("{s:s, s:i, s:i, s:s, s:s, s:I, s:I, s:i, s:i, s:f, s:f, s:s}",
                                   "name", name, "family_index", fam, "per_family_instance_index", 0, "run_name", name,
                                   "run_type", "iteration", "repetitions", (json_int_t)k, "repetition_index", (json_int_t)j,
                                   "threads", 1, "iterations", 1, "real_time", x[j], "cpu_time", x[j], "time_unit", "ns"),
                                   rb[j], ri[j]));
    /* aggregates of the time, and (as Google Benchmark does for counters) of the per-repetition rates */
    double mean, med, sd, bm, bmed, bsd, im, imed, isd;
    summary(x, k, &mean, &med, &sd);
    summary(rb, k, &bm, &bmed, &bsd);
    summary(ri, k, &im, &imed, &isd);
    if (!rc) rc = emit(g, with_rates(aggregate(name, name, "mean", fam, k, mean, "time"), bm, im));
    if (!rc) rc = emit(g, with_rates(aggregate(name, name, "median", fam, k, med, "time"), bmed, imed));
    if (!rc) rc = emit(g, with_rates(aggregate(name, name, "stddev", fam, k, sd, "time"), bsd, isd));
    if (!rc) rc = emit(g, with_rates(aggregate(name, name, "cv", fam, k, mean > 0 ? sd / mean : 0, "percentage"),
                                     bm > 0 ? bsd / bm : (double)NAN, im > 0 ? isd / im : (double)NAN));
    free(rb);
    free(x);
    g->fam++;
    return rc ? -1 : 0;
}

json_t *hb_gbench_build(const hb_run *r, const char *metric, int aggregates_only, int errors)
{
    json_t *doc = json_object(), *benches = json_array();
    if (!doc || !benches) { json_decref(doc); json_decref(benches); return NULL; }
    json_object_set_new(doc, "context", r->meta ? context_json(r, metric) : json_object());
    json_object_set_new(doc, "benchmarks", benches);
    gb_ctx g = {.metric = metric, .aggregates_only = aggregates_only, .errors = errors, .seen = json_object(),
                .arr = benches, .first = 1};
    if (!g.seen) { json_decref(doc); return NULL; }
    size_t i;
    json_t *c;
    json_array_foreach(r->cases, i, c)
        if (gbench_case(&g, c)) { json_decref(g.seen); json_decref(doc); return NULL; }
    json_decref(g.seen);
    return doc;
}

json_t *hb_gbench_from_run(const hb_run *r, const char *metric, int aggregates_only)
{
    return hb_gbench_build(r, metric, aggregates_only, 0);
}

static hb_status stream_cb(json_t *rec, hb_record_type t, int lineno, void *user, char *why, size_t whylen)
{
    (void)lineno;
    gb_ctx *g = user;
    if (t == HB_REC_META && !g->header) {
        /* the meta record comes first (hb_results_stream enforces it): the context, then the list */
        hb_run one = {.meta = rec};
        json_t *ctx = context_json(&one, g->metric);
        if (!ctx) { snprintf(why, whylen, "out of memory"); return HB_ENOMEM; }
        fputs("{\n  \"context\": ", g->out);
        json_dumpf(ctx, g->out, JSON_INDENT(2));
        json_decref(ctx);
        fputs(",\n  \"benchmarks\": [\n", g->out);
        g->header = 1;
        return HB_OK;
    }
    if (t != HB_REC_CASE) return HB_OK;
    if (gbench_case(g, rec)) { snprintf(why, whylen, "out of memory"); return HB_ENOMEM; }
    if (ferror(g->out)) { snprintf(why, whylen, "write error"); return HB_EDEVICE; }  /* stop early */
    return HB_OK;
}

hb_status hb_gbench_stream(const char *path, FILE *f, const char *metric, int aggregates_only, int errors, char *err,
                           size_t errlen)
{
    gb_ctx g = {.metric = metric, .aggregates_only = aggregates_only, .errors = errors, .seen = json_object(),
                .out = f, .first = 1};
    if (!g.seen) { snprintf(err, errlen, "out of memory"); return HB_ENOMEM; }
    hb_status st = hb_results_stream(path, HB_LOAD_STRICT, stream_cb, &g, err, errlen);
    json_decref(g.seen);
    if (st == HB_OK) fputs("\n  ]\n}\n", f);
    return st;
}
