/*
 * resultsio.h - reading a results/<run-id>.jsonl file (docs/results-schema.md) with jansson.
 */
#ifndef HB_RESULTSIO_H
#define HB_RESULTSIO_H
#include <jansson.h>
#include "core/hybench.h"

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
/* Convenience: number field of a case's phase stats, e.g. hb_case_phase(c, "total", "median").
 * Returns NAN when absent. */
double hb_case_phase(json_t *c, const char *phase, const char *stat);
/* The ceiling named `name` of backend instance `backend` in run r; NAN when absent. */
double hb_run_ceiling(const hb_run *r, const char *backend, const char *name);
#endif
