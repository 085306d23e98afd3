/*
 * results.h - the results schema in memory (docs/results-schema.md): a run is its records, each
 * record type one C struct of record.h. Every output is written from this one model: measure/ fills
 * the structs and write.c writes them as JSON lines (JSONL) through the field tables of
 * record_fields.c; read.c validates every record it reads against the schema
 * (hb_record_check) and either streams the records to a callback one at a time (hb_results_stream:
 * the CSV of csv.c and the Google Benchmark JSON of gbench.c are written that way) or loads them into
 * an hb_run, from which compare's Markdown/JSON/JUnit and the report's Markdown and HTML are written.
 * A loaded hb_run holds its records twice: as JSON (what results/ and measure/ read and rewrite) and as
 * the C structs of record.h (record.c, hb_run_index), which analysis/ and report/ read.
 */
#ifndef HB_RESULTS_H
#define HB_RESULTS_H
#include <stdio.h>
#include <jansson.h>
#include "core/hybench.h"
#include "core/stats.h"
#include "results/record.h"

/* ---- writing (write.c) ---- */
/* Write one JSON record as a single line with a single write(2) to fd (O_APPEND); fsync not needed.
 * Sets its "schema". Returns HB_OK or HB_EDEVICE when the write fails. Steals the reference to rec. */
hb_status hb_record_write(int fd, json_t *rec);
/* A JSON number, or null for NaN and infinities (JSON has no NaN). New reference. (record_codec.c,
 * as hb_json_count and hb_rec_shape_json: the codec's value forms.) */
json_t *hb_json_num(double x);
/* A size or count (bytes, FLOPs, elements) as JSON: an integer when x is a whole number of magnitude
 * up to 2^53 (exactly representable, so 1 GiB reads 1073741824 and a size past 2^32 stays exact),
 * else a real (a fractional FLOP count of an op whose formula has one), null for NaN and infinities.
 * Readers take either with json_number_value. New reference. */
json_t *hb_json_count(double x);
/* JSON object of an hb_stats. New reference. */
json_t *hb_stats_json(const hb_stats *s);
/* The fields every case record starts with (type, key, backend, op, shape, size, name, source, model,
 * weight, dtype, mode, route, flops, bytes, bound). New reference. */
json_t *hb_case_record(const hb_case *c, const char *backend);
/* A case record's shape object from its struct: its fields in the record's order, integers; null
 * when s is NULL or the record had none. New reference. */
json_t *hb_rec_shape_json(const hb_rec_shape *s);
/* The "mode_check" record of m (docs/results-schema.md; the strings must not be NULL): type, backend,
 * op, shape, shape_str, name, dtype, route, mode, ref_mode, ratio, ci ([lo, hi] or null), ref_median,
 * median, n, ref_n, verdict, then paired_passes or paired_rounds when set. New reference; NULL when
 * out of memory. */
json_t *hb_rec_mode_check_json(const hb_rec_mode_check *m);
/* A case record from its struct (record.h, hb_rec_case): every member its keys name, in their order
 * and JSON form (record_codec.c); a record read with hb_rec_case_parse is written back as read. New
 * reference; NULL when out of memory. Pass it to hb_record_write. */
json_t *hb_rec_case_json(const hb_rec_case *c);
/* A plan record from its struct (record.h, hb_rec_plan), as hb_rec_case_json writes a case record. */
json_t *hb_rec_plan_json(const hb_rec_plan *p);
/* An end record from its struct (record.h, hb_rec_end), likewise; a backend record and a meta record
 * (hb_rec_meta: its read views and *_text members are not written) likewise. */
json_t *hb_rec_end_json(const hb_rec_end *e);
json_t *hb_rec_backend_json(const hb_rec_backend *b);
json_t *hb_rec_meta_json(const hb_rec_meta *m);
/* The "ab" object of `hybench ab --json` from its struct (record.h hb_rec_ab_summary), likewise. */
json_t *hb_rec_ab_summary_json(const hb_rec_ab_summary *a);
/* The end record of a run (docs/results-schema.md) from its cases' statuses (counts indexed by
 * hb_status): type, cases, ok, wrong, failed (HB_EDEVICE and HB_EINVAL), skipped, crashed,
 * no_resource, timed_out, elapsed_s (seconds), passes, interrupted, then serve_round when >= 0,
 * backends and mode_invariance when non-NULL (borrowed: the record takes its own references). New
 * reference; NULL when out of memory. */
json_t *hb_end_record(size_t cases, const int counts[HB_STATUS_COUNT], double elapsed_s, int passes, int interrupted,
                      int serve_round, json_t *backends, json_t *mode_invariance);
/* The members every end record has (type through interrupted, as hb_end_record lists them) set in e,
 * which must be cleared (record.h hb_rec_clear); the caller may set more after them (`plan
 * --replay`: schema, plans) and writes e with hb_rec_end_json. HB_OK or HB_ENOMEM. */
hb_status hb_end_fill(hb_rec_end *e, size_t cases, const int counts[HB_STATUS_COUNT], double elapsed_s, int passes,
                      int interrupted);
/* r's twelve members from s (n, min, max, mean, median, p10, p90, mad, stddev, cv, ci_lo, ci_hi, in
 * hb_stats_json's order), each put (record.h hb_rec_put): written as hb_stats_json writes s, with
 * null for a non-finite figure. HB_OK or HB_ENOMEM. */
hb_status hb_rec_stats_set(hb_rec_stats *r, const hb_stats *s);
/* A chain case's layer or graph object (record.h hb_rec_layer): s's twelve members as
 * hb_rec_stats_set writes them, then enqueue_s (seconds), each put in l. HB_OK or HB_ENOMEM. */
hb_status hb_rec_layer_set(hb_rec_layer *l, const hb_stats *s, double enqueue_s);
/* a's values set to a copy of v[0..n-1] (seconds or whatever the member holds), a's own (freed by the
 * struct's _free, a's old values freed here); present. The caller puts the member. HB_OK or HB_ENOMEM. */
hb_status hb_rec_nums_set(hb_rec_nums *a, const double *v, size_t n);
/* A case record that measured nothing: the base fields, status st and its reason. New reference. */
json_t *hb_case_status_record(const hb_case *c, const char *backend, hb_status st, const char *reason);

/* An output file written whole or not at all (write.c): a regular file (or a new one) is written to
 * a temporary file beside it, PATH.tmp.XXXXXX, renamed over PATH when complete; a device, FIFO or
 * terminal is written straight. path is borrowed and must outlive the hb_outfile. */
typedef struct hb_outfile {
    FILE *f;            /* write here */
    const char *path;   /* the output's name (borrowed) */
    char *tmp;          /* owned: the temporary file's name, NULL when written straight */
} hb_outfile;
/* Open. Returns HB_OK, or HB_EDEVICE with "cannot write PATH: <strerror>" in err (size errlen). */
hb_status hb_outfile_open(hb_outfile *o, const char *path, char *err, size_t errlen);
/* Flush and close; keep 1 renames the temporary file over PATH, keep 0 removes it (nothing left
 * behind). Returns HB_OK, or HB_EDEVICE with "cannot write PATH: <strerror>" in err when a write,
 * the flush, the close or the rename failed (the temporary file is removed). */
hb_status hb_outfile_close(hb_outfile *o, int keep, char *err, size_t errlen);

/* ---- reading (read.c) ---- */

/* The record types a reader knows (docs/results-schema.md). */
typedef enum hb_record_type {
    HB_REC_NONE,        /* no "type" string */
    HB_REC_META, HB_REC_BACKEND, HB_REC_CASE, HB_REC_END, HB_REC_MODE_CHECK,
    HB_REC_PLAN,        /* a device plan replayed end to end (`hybench plan --replay`, measure/replay.h) */
    HB_REC_UNKNOWN      /* a type this hybench does not know: ignored (forward compatibility) */
} hb_record_type;
hb_record_type hb_record_type_of(json_t *rec);

/* Flags of the reader. */
enum {
    HB_LOAD_ANY_SCHEMA = 1u << 0,   /* accept a "schema" other than HB_SCHEMA_VERSION; a record of a newer
                                       version is kept without the checks of its type (this hybench does
                                       not know that version's rules): the caller refuses such a run
                                       (hb_run_check_comparable; hb_run.schema tells) */
    HB_LOAD_NEED_SAMPLES = 1u << 1, /* an ok case without samples.<metric> is refused (compare) */
    HB_LOAD_STRICT = 1u << 2,       /* case records need key, backend, op, mode, route, dtype and status
                                       (the commands: csv, gbench, compare, report, roofline); without it
                                       they are type-checked when present */
    HB_LOAD_NO_META = 1u << 3,      /* a file without any meta record is read (hb_run.meta NULL), so that
                                       the caller can refuse it by name (hb_run_check_comparable); a meta
                                       record after another record is still refused */
};

/* The schema validator (docs/results-schema.md, "Rules"): checks one parsed record, borrowed.
 * Every record: an object with a string "type"; its "schema", when present (hybench always writes
 * it), an integer equal to HB_SCHEMA_VERSION (any version >= 1 with HB_LOAD_ANY_SCHEMA). With
 * HB_LOAD_STRICT a case needs its identity strings (key, backend, op, mode, route, dtype, status). Known
 * types must be well-formed: wrong JSON types, an unknown status, negative or non-finite times, an
 * ok case without phases.total.median or with an empty samples array are refused. Returns HB_OK, or
 * HB_EINVAL with "field: reason" in err (size errlen; the caller prefixes file:line). */
hb_status hb_record_check(json_t *rec, unsigned flags, char *err, size_t errlen);

/* Called by hb_results_stream for each valid record of a known type, in file order. rec is borrowed
 * (json_incref it to keep it); type is its type; lineno its 1-based line. Return HB_OK to go on, or
 * an error status with a reason in why (size whylen; the reader prefixes file:line), which stops
 * the reader and is returned by it. */
typedef hb_status (*hb_record_fn)(json_t *rec, hb_record_type type, int lineno, void *user, char *why, size_t whylen);

/* Read path one line (one record) at a time: parse, validate (hb_record_check with flags), and hand
 * each record to fn (may be NULL: validate only). Holds one record in memory at a time. Blank lines
 * are skipped; a truncated last line (no newline, not JSON: a run killed mid-write) is skipped with a
 * warning on stderr. The meta record must come before every backend, case and end record and a file
 * must have one (with HB_LOAD_NO_META a file without any is read). Returns HB_OK; HB_EINVAL with
 * "path:line: field: reason" in err (size errlen) for the first bad record (a line that is not a JSON
 * object, a NUL byte, a record that breaks the schema, no meta record, no record at all); HB_EDEVICE
 * when path cannot be opened or read (with strerror); or the status fn returned. */
hb_status hb_results_stream(const char *path, unsigned flags, hb_record_fn fn, void *user, char *err, size_t errlen);

/* A loaded run. All json_t are owned by the hb_run (freed by hb_run_free).
 * meta: the "meta" record (a valid file has one; the last one when several); backends, cases: arrays
 * of records of those types in file order; end: the "end" record or NULL when the run was cut short.
 * plans: the "plan" records (a plan of a model replayed end to end: docs/results-schema.md, "plan").
 * mode_check and unknown records are not kept. meta is NULL only when read with HB_LOAD_NO_META. */
typedef struct hb_run {
    char *path;        /* owned copy of the path */
    json_t *meta;
    json_t *backends;
    json_t *cases;
    json_t *plans;     /* "plan" records, file order */
    json_t *end;
    long long schema;  /* the highest "schema" of its meta, backend, case and end records; 0: none has one */
    /* The same records as structs (record.h), built by hb_run_index (hb_run_load does it): what
     * analysis/ and report/ read. case_recs[i] is cases[i], backend_recs[i] backends[i], plan_recs[i]
     * plans[i]; meta_rec and end_rec NULL where meta and end are. Owned by the hb_run; their strings
     * are borrowed from the JSON records above. */
    hb_rec_meta *meta_rec;
    hb_rec_backend *backend_recs; size_t nbackend_recs;
    hb_rec_case *case_recs; size_t ncase_recs;
    hb_rec_plan *plan_recs; size_t nplan_recs;
    hb_rec_end *end_rec;
} hb_run;

/* ---- records as structs (record.c; the structs and the rule for absent values: record.h) ---- */
/* Fill out from one record of that type (rec borrowed; validated by hb_record_check, though any
 * object is read: a member of the wrong JSON type reads as absent). Strings in out are borrowed from
 * rec; arrays are allocated and freed by the matching _free. Returns HB_OK or HB_ENOMEM (out then
 * holds nothing to free). */
hb_status hb_rec_case_parse(json_t *rec, hb_rec_case *out);
void hb_rec_case_free(hb_rec_case *c);
hb_status hb_rec_meta_parse(json_t *rec, hb_rec_meta *out);
void hb_rec_meta_free(hb_rec_meta *m);
hb_status hb_rec_backend_parse(json_t *rec, hb_rec_backend *out);
void hb_rec_backend_free(hb_rec_backend *b);
hb_status hb_rec_end_parse(json_t *rec, hb_rec_end *out);
void hb_rec_end_free(hb_rec_end *e);
/* A baseline's provenance object (strings borrowed from p). */
void hb_rec_baseline_parse(json_t *p, hb_rec_baseline *out);
hb_status hb_rec_plan_parse(json_t *rec, hb_rec_plan *out);
void hb_rec_plan_free(hb_rec_plan *p);
/* (Re)build r's structs from its JSON records (frees the former ones first): call it after filling
 * or changing an hb_run's JSON by hand. Returns HB_OK or HB_ENOMEM (the structs are then empty). */
hb_status hb_run_index(hb_run *r);
/* Free the structs only (hb_run_free does it too). */
void hb_run_unindex(hb_run *r);

/* Options of hb_run_load_opts. keep: NULL to keep whole case records, else a NULL-terminated list
 * of the case fields to keep (the others are dropped as the file is read, so that a large file
 * takes memory only for what the command uses); with keep, "samples" and "pass_medians" keep only
 * their member metric, and "phases" only phases.<metric>.median. */
typedef struct hb_load_opts {
    unsigned flags;              /* HB_LOAD_* */
    const char *metric;          /* "total" or "compute" (HB_LOAD_NEED_SAMPLES, keep); NULL: "total" */
    const char *const *keep;
} hb_load_opts;

/* Load path with hb_results_stream (every record validated). Returns HB_OK, HB_EINVAL (malformed or
 * breaking the schema; "path:line: field: reason" in err), HB_EDEVICE (cannot open or read: reason
 * in err) or HB_ENOMEM. On error *out is left empty (safe to hb_run_free). hb_run_load is
 * hb_run_load_opts with o NULL (whole records, schema HB_SCHEMA_VERSION only). */
hb_status hb_run_load_opts(const char *path, const hb_load_opts *o, hb_run *out, char *err, size_t errlen);
hb_status hb_run_load(const char *path, hb_run *out, char *err, size_t errlen);
void hb_run_free(hb_run *r);
/* Whether run r (loaded from path; NULL: r->path) may be compared at all: the one check of
 * `hybench compare`, `hybench ab` and `hybench baseline set`, so that nothing is compared silently.
 * Refused, in this order: a run without a meta record (load it with HB_LOAD_NO_META to get here:
 * nothing tells its machine, build or schema), one whose schema is newer than this hybench's
 * HB_SCHEMA_VERSION (load it with HB_LOAD_ANY_SCHEMA; its records may mean something else), and one
 * without case records (it measured nothing: a gate over it would pass without comparing anything).
 * Returns HB_OK, or HB_EINVAL with "PATH: reason" in err (size errlen); the commands exit with
 * HB_EXIT_INCOMPARABLE (3), whatever --force says. */
hb_status hb_run_check_comparable(const hb_run *r, const char *path, char *err, size_t errlen);
/* A record's member k (rec borrowed; NULL rec allowed): hb_rec_str its string (borrowed, NULL when
 * absent or not a string), hb_rec_num its number (NaN when absent or not a number). */
const char *hb_rec_str(json_t *rec, const char *k);
double hb_rec_num(json_t *rec, const char *k);
/* How bad a case status is, for keeping the worst of several records of one case (passes,
 * measure/merge.c; ranks, results/ranks.c): ok 0 < skipped 1 < no_resource 2 < failed 3 <
 * timed_out 4 < crashed 5 < wrong 6; any other status (NULL, "invalid", "missing") counts as failed. */
int hb_status_severity(const char *status);
/* String field k of r's meta record, and its CPU model (meta.cpu.model); NULL when absent. */
const char *hb_run_meta(const hb_run *r, const char *k);
const char *hb_run_cpu_model(const hb_run *r);
/* Convenience: number field of a case's phase stats, e.g. hb_case_phase(c, "total", "median").
 * Returns NAN when absent. */
double hb_case_phase(json_t *c, const char *phase, const char *stat);
/* The ceiling named `name` of backend instance `backend` in run r (r->backend_recs: its first such
 * ceiling), in the ceiling's unit; 0 when that ceiling's value is null, NAN when there is no such
 * ceiling. */
double hb_run_ceiling(const hb_run *r, const char *backend, const char *name);

/* ---- exports ---- */
/* One CSV row per case record of r, after a header row (csv.c; docs/results-schema.md, CSV export):
 * run_id, date, git_commit, machine (fingerprint id, results/machine.h), machine_desc, host, device
 * (the case's backend's device name); key, backend, op, family, shape_str, dtype, mode, route,
 * status, name, model; shape_<axis> for each shape axis of any case in the file (first appearance
 * order, at most 32; empty where a case lacks it); samples (phases.total.n),
 * total_ci_lo_s, total_ci_hi_s (the CI of the median, s), ci_target (relative), ci_met (1/0),
 * noise_pct (100 x stddev/mean of total); <phase>_median_s for each phase; size, flops, bytes,
 * gflops, gbps, fraction, rel_err, weight, host_bytes, device_bytes. Empty cell: absent. */
void hb_csv_write(FILE *f, const hb_run *r);
/* The CSV of the results file at path, streamed: read one record at a time (hb_results_stream with
 * HB_LOAD_STRICT), so memory holds one record. A record that breaks the schema stops it after the rows before it were
 * written: a caller that must not write partial output validates the file first (hb_results_stream
 * with fn NULL), as `hybench csv` does. Returns what hb_results_stream returns (HB_EINVAL/HB_EDEVICE, "path:line: field:
 * reason" in err). Write errors on f are the caller's to check (ferror, fclose). */
hb_status hb_csv_stream(const char *path, FILE *f, char *err, size_t errlen);
/* (two passes over the file: the first collects the meta and backend records and the shape axes,
 * the second writes; memory holds those and one case record.) */
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
/* The same document for the results file at path, streamed to f (indented JSON) one record at a
 * time (HB_LOAD_STRICT) (validate first, as for hb_csv_stream: a bad record stops it mid-document); memory holds one case's benchmarks and the set of keys seen. Returns HB_OK, what
 * hb_results_stream returns (HB_EINVAL/HB_EDEVICE with "path:line: field: reason" in err) or
 * HB_ENOMEM. Write errors on f are the caller's to check (ferror, fclose). */
hb_status hb_gbench_stream(const char *path, FILE *f, const char *metric, int aggregates_only, int errors, char *err,
                           size_t errlen);
#endif
