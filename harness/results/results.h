/*
 * results.h - the results schema in memory (docs/results-schema.md): a run is its JSON records, kept
 * as jansson objects. Every output is written from this one model: measure/ builds the records and
 * writes them (JSONL, write.c); read.c loads a file back into an hb_run, from which the CSV
 * (csv.c), Google Benchmark JSON (gbench.c), compare's Markdown/JSON/JUnit and the report's Markdown
 * and HTML are written.
 */
#ifndef HB_RESULTS_H
#define HB_RESULTS_H
#include <stdio.h>
#include <jansson.h>
#include "core/hybench.h"
#include "core/stats.h"

/* ---- the phases of a case record, in schema order (write.c) ---- */
enum { HB_PH_CONVERT_IN, HB_PH_H2D, HB_PH_COMPUTE, HB_PH_D2H, HB_PH_CONVERT_OUT, HB_PH_TOTAL, HB_PH_COUNT };
extern const char *const hb_phase_names[HB_PH_COUNT];

/* ---- writing (write.c) ---- */
/* Write one JSON record as a single line with a single write(2) to fd (O_APPEND); fsync not needed.
 * Sets its "schema". Returns HB_OK or HB_EDEVICE when the write fails. Steals the reference to rec. */
hb_status hb_record_write(int fd, json_t *rec);
/* A JSON number, or null for NaN and infinities (JSON has no NaN). New reference. */
json_t *hb_json_num(double x);
/* JSON object of an hb_stats. New reference. */
json_t *hb_stats_json(const hb_stats *s);
/* The fields every case record starts with (type, key, backend, op, shape, size, name, source, model,
 * weight, dtype, mode, route, flops, bytes, bound). New reference. */
json_t *hb_case_record(const hb_case *c, const char *backend);
/* A case record that measured nothing: the base fields, status st and its reason. New reference. */
json_t *hb_case_status_record(const hb_case *c, const char *backend, hb_status st, const char *reason);

/* ---- reading (read.c) ---- */

/* A loaded run. All json_t are owned by the hb_run (freed by hb_run_free).
 * meta: the "meta" record (NULL if the file lacks one); backends, cases: arrays of records of those
 * types in file order; end: the "end" record or NULL when the run was cut short. */
typedef struct hb_run {
    char *path;        /* owned copy of the path */
    json_t *meta;
    json_t *backends;
    json_t *cases;
    json_t *end;
} hb_run;

/* Load path. Lines that fail to parse are an error naming path:line, except a truncated last line
 * (a run killed mid-write), which is skipped with a warning on stderr. Returns HB_OK, HB_EINVAL
 * (malformed; reason in err) or HB_EDEVICE when the file cannot be opened (reason in err).
 * On error *out is left empty (safe to hb_run_free). */
hb_status hb_run_load(const char *path, hb_run *out, char *err, size_t errlen);
void hb_run_free(hb_run *r);
/* String field k of a record; NULL when absent or not a string. */
const char *hb_rec_str(json_t *rec, const char *k);
/* String field k of r's meta record, and its CPU model (meta.cpu.model); NULL when absent. */
const char *hb_run_meta(const hb_run *r, const char *k);
const char *hb_run_cpu_model(const hb_run *r);
/* Convenience: number field of a case's phase stats, e.g. hb_case_phase(c, "total", "median").
 * Returns NAN when absent. */
double hb_case_phase(json_t *c, const char *phase, const char *stat);
/* The ceiling named `name` of backend instance `backend` in run r; NAN when absent. */
double hb_run_ceiling(const hb_run *r, const char *backend, const char *name);

/* ---- exports ---- */
/* One CSV row per case record of r, after a header row: key, backend, op, family, shape_str, dtype,
 * mode, route, status, name, model, <phase>_median_s for each phase, size, flops, bytes, gflops,
 * gbps, fraction, rel_err, weight, host_bytes, device_bytes (csv.c). */
void hb_csv_write(FILE *f, const hb_run *r);
/* The run as a Google Benchmark JSON document ({"context":{...},"benchmarks":[...]}), readable by
 * Google Benchmark's tools/compare.py, github-action-benchmark (tool "googlecpp") and bencher
 * (adapter "cpp_google"). Each case with status ok becomes one benchmark family named after its key
 * ("matmul/m:1024/n:1024/k:1024/cpu/f32/pageable/f32"): one "iteration" entry per sample
 * (iterations 1, repetitions = sample count, real_time = cpu_time = the sample in ns; hybench does
 * not measure CPU time) unless aggregates_only, then "aggregate" entries mean, median, stddev (ns)
 * and cv (fraction, aggregate_unit "percentage"). Cases that are not ok are listed with
 * "error_occurred": true and their reason. metric: "total" or "compute". New reference; NULL on
 * ENOMEM (gbench.c). */
json_t *hb_gbench_from_run(const hb_run *r, const char *metric, int aggregates_only);
/* The same; errors: 1 lists the cases that are not ok too (`hybench gbench --errors`). */
json_t *hb_gbench_build(const hb_run *r, const char *metric, int aggregates_only, int errors);
#endif
