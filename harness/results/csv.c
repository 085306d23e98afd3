/* csv.c - a run as CSV, one row per case record (docs/results-schema.md, CSV export). */
#include "results/results.h"
#include <math.h>
#include <string.h>

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
    if (json_is_number(v)) fprintf(f, "%.7g", json_number_value(v));
}

static const char *const strs[] = {"key", "backend", "op", "family", "shape_str", "dtype", "mode", "route", "status", "name", "model"};
static const char *const nums[] = {"size", "flops", "bytes", "gflops", "gbps", "fraction", "rel_err", "weight"};

void hb_csv_header(FILE *f)
{
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) fprintf(f, "%s%s", i ? "," : "", strs[i]);
    for (size_t i = 0; i < HB_PH_COUNT; i++) fprintf(f, ",%s_median_s", hb_phase_names[i]);
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) fprintf(f, ",%s", nums[i]);
    fprintf(f, ",host_bytes,device_bytes\n");
}

void hb_csv_row(FILE *f, json_t *c)
{
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
        if (i) fputc(',', f);
        csv_str(f, json_string_value(json_object_get(c, strs[i])));
    }
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
    hb_csv_header(f);
    size_t k;
    json_t *c;
    json_array_foreach(r->cases, k, c) hb_csv_row(f, c);
}

static hb_status csv_cb(json_t *rec, hb_record_type t, int lineno, void *user, char *why, size_t whylen)
{
    (void)lineno;
    if (t == HB_REC_CASE) hb_csv_row(user, rec);
    if (ferror((FILE *)user)) { snprintf(why, whylen, "write error"); return HB_EDEVICE; }  /* stop early */
    return HB_OK;
}

hb_status hb_csv_stream(const char *path, FILE *f, char *err, size_t errlen)
{
    hb_csv_header(f);
    return hb_results_stream(path, HB_LOAD_STRICT, csv_cb, f, err, errlen);
}
