/* csv.c - a run as CSV, one row per case record (docs/results-schema.md, CSV export). Each row
 * carries the run's identity (run id, date, commit, machine fingerprint, host) and its device, one
 * column per shape axis found in the file (nvbench's Markdown/CSV printers: one column per axis),
 * and the sample count, noise and CI of the total time besides the per-phase medians. */
#include "results/machine.h"
#include "results/results.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CSV_MAX_AXES 32

typedef struct csv_ctx {
    FILE *f;
    json_t *meta;       /* borrowed (in-memory run) or owned copy (stream) */
    json_t *backends;   /* array of backend records, same ownership */
    char machine[32], machine_desc[2048];
    char *axes[CSV_MAX_AXES];
    int naxes;
} csv_ctx;

static void csv_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, json_t *v)
{
    if (json_is_integer(v)) fprintf(f, "%lld", (long long)json_integer_value(v));
    else if (json_is_number(v)) fprintf(f, "%.7g", json_number_value(v));
}

static const char *const strs[] = {"key", "backend", "op", "family", "shape_str", "dtype", "mode", "route", "status", "name", "model"};
static const char *const nums[] = {"size", "flops", "bytes", "gflops", "gbps", "fraction", "rel_err", "weight"};

/* the shape axes of case c join the set, in order of first appearance (at most CSV_MAX_AXES) */
static void collect_axes(csv_ctx *x, json_t *c)
{
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(c, "shape"), k, v) {
        int have = 0;
        for (int i = 0; i < x->naxes && !have; i++) have = !strcmp(x->axes[i], k);
        if (!have && x->naxes < CSV_MAX_AXES) {
            char *d = strdup(k);
            if (d) x->axes[x->naxes++] = d;
        }
    }
}

static void ctx_free(csv_ctx *x)
{
    for (int i = 0; i < x->naxes; i++) free(x->axes[i]);
    x->naxes = 0;
}

static void header(csv_ctx *x)
{
    FILE *f = x->f;
    fputs("run_id,date,git_commit,machine,machine_desc,host,device", f);
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) fprintf(f, ",%s", strs[i]);
    for (int i = 0; i < x->naxes; i++) fprintf(f, ",shape_%s", x->axes[i]);
    fputs(",samples,total_ci_lo_s,total_ci_hi_s,ci_target,ci_met,noise_pct", f);
    for (size_t i = 0; i < HB_PH_COUNT; i++) fprintf(f, ",%s_median_s", hb_phase_names[i]);
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) fprintf(f, ",%s", nums[i]);
    fprintf(f, ",host_bytes,device_bytes\n");
}

static json_t *backend_rec(csv_ctx *x, const char *be)
{
    size_t i;
    json_t *b;
    json_array_foreach(x->backends, i, b) {
        const char *n = hb_rec_str(b, "backend");
        if (n && be && !strcmp(n, be)) return b;
    }
    return NULL;
}

static void row(csv_ctx *x, json_t *c)
{
    FILE *f = x->f;
    char dev[256];
    hb_machine_device(backend_rec(x, hb_rec_str(c, "backend")), dev, sizeof dev);
    csv_str(f, hb_rec_str(x->meta, "run_id")); fputc(',', f);
    csv_str(f, hb_rec_str(x->meta, "date")); fputc(',', f);
    csv_str(f, hb_rec_str(x->meta, "git_commit")); fputc(',', f);
    csv_str(f, x->machine); fputc(',', f);
    csv_str(f, x->machine_desc); fputc(',', f);
    csv_str(f, hb_rec_str(x->meta, "host")); fputc(',', f);
    csv_str(f, dev);
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
        fputc(',', f);
        csv_str(f, json_string_value(json_object_get(c, strs[i])));
    }
    json_t *shape = json_object_get(c, "shape");
    for (int i = 0; i < x->naxes; i++) { fputc(',', f); csv_num(f, json_object_get(shape, x->axes[i])); }
    json_t *tot = json_object_get(json_object_get(c, "phases"), "total");
    fputc(',', f); csv_num(f, json_object_get(tot, "n"));
    fputc(',', f); csv_num(f, json_object_get(tot, "ci_lo"));
    fputc(',', f); csv_num(f, json_object_get(tot, "ci_hi"));
    fputc(',', f); csv_num(f, json_object_get(c, "ci_target"));
    fputc(',', f);
    json_t *met = json_object_get(c, "ci_met");
    if (json_is_boolean(met)) fputs(json_is_true(met) ? "1" : "0", f);
    fputc(',', f);
    json_t *cv = json_object_get(tot, "cv");
    if (json_is_number(cv)) fprintf(f, "%.4g", 100 * json_number_value(cv));
    for (size_t i = 0; i < HB_PH_COUNT; i++) {
        fputc(',', f);
        double v = hb_case_phase(c, hb_phase_names[i], "median");
        if (!isnan(v)) fprintf(f, "%.7g", v);
    }
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) { fputc(',', f); csv_num(f, json_object_get(c, nums[i])); }
    json_t *mem = json_object_get(c, "mem");
    fputc(',', f); csv_num(f, json_object_get(mem, "host_bytes"));
    fputc(',', f); csv_num(f, json_object_get(mem, "device_bytes"));
    fputc('\n', f);
}

void hb_csv_write(FILE *f, const hb_run *r)
{
    csv_ctx x = {.f = f, .meta = r->meta, .backends = r->backends};
    hb_machine_fingerprint(x.meta, x.backends, x.machine_desc, sizeof x.machine_desc, x.machine, sizeof x.machine);
    size_t k;
    json_t *c;
    json_array_foreach(r->cases, k, c) collect_axes(&x, c);
    header(&x);
    json_array_foreach(r->cases, k, c) row(&x, c);
    ctx_free(&x);
}

/* first pass: the meta and backend records, and the shape axes of every case */
static hb_status scan_cb(json_t *rec, hb_record_type t, int lineno, void *user, char *why, size_t whylen)
{
    (void)lineno;
    csv_ctx *x = user;
    if (t == HB_REC_META && !x->meta) x->meta = json_incref(rec);
    else if (t == HB_REC_BACKEND) {
        if (json_array_append(x->backends, rec)) { snprintf(why, whylen, "out of memory"); return HB_ENOMEM; }
    } else if (t == HB_REC_CASE) collect_axes(x, rec);
    return HB_OK;
}

static hb_status csv_cb(json_t *rec, hb_record_type t, int lineno, void *user, char *why, size_t whylen)
{
    (void)lineno;
    csv_ctx *x = user;
    if (t == HB_REC_CASE) row(x, rec);
    if (ferror(x->f)) { snprintf(why, whylen, "write error"); return HB_EDEVICE; }  /* stop early */
    return HB_OK;
}

hb_status hb_csv_stream(const char *path, FILE *f, char *err, size_t errlen)
{
    csv_ctx x = {.f = f, .backends = json_array()};
    if (!x.backends) { snprintf(err, errlen, "out of memory"); return HB_ENOMEM; }
    hb_status st = hb_results_stream(path, HB_LOAD_STRICT, scan_cb, &x, err, errlen);
    if (st == HB_OK) {
        hb_machine_fingerprint(x.meta, x.backends, x.machine_desc, sizeof x.machine_desc, x.machine, sizeof x.machine);
        header(&x);
        st = hb_results_stream(path, HB_LOAD_STRICT, csv_cb, &x, err, errlen);
    }
    json_decref(x.meta);
    json_decref(x.backends);
    ctx_free(&x);
    return st;
}
