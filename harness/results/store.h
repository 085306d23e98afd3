/*
 * store.h - the history store (docs/history.md): runs, their cases and each case's statistics and raw
 * samples in one database, SQLite by default (a file path) or PostgreSQL through libpq (a
 * "postgresql://" or "postgres://" URL; a fleet's shared store). The same code and the same SQL serve
 * both; only the table definitions differ in their type names.
 *
 * Tables (schema version HB_STORE_SCHEMA, kept in hb_schema; older stores are migrated on open):
 *   hb_schema(version)                     one row
 *   hb_machine(fingerprint, description)   a machine: hex 64-bit hash of CPU, GPU, driver and library
 *                                          versions (hb_store_fingerprint), never the host name
 *   hb_run(id, run_id, date, commit_id, fingerprint, host, meta, backends, end_rec, imported)
 *                                          meta/backends/end_rec: the run's meta record, its backend
 *                                          records (a JSON array) and its end record, as JSON text
 *   hb_case_key(id, key, occurrence, op, backend, label)
 *                                          a case identity: its key plus its occurrence index (a run
 *                                          may hold one key several times: 0, 1, ... in file order)
 *   hb_case(run, case_key, status, ci_met, n_total, median_total, ci_lo_total, ci_hi_total,
 *           median_compute, ci_lo_compute, ci_hi_compute)
 *                                          per-case statistics (seconds per call; NULL when absent)
 *   hb_case_detail(run, case_key, phase_medians, samples_total, samples_compute, record)
 *                                          raw samples and every phase's median (float32 little-endian
 *                                          BLOB/bytea, seconds) and the rest of the case record (JSON
 *                                          text): phases.total and phases.compute whole, the other
 *                                          phases by their median only; host_clock_ghz is not kept.
 *                                          The identity fields (shape, flops, bytes, ...) are kept once,
 *                                          in hb_case_key.info. A year of 2000 cases a night fits in
 *                                          about 0.3 KB a case (docs/history.md).
 * Version 2 adds the index hb_case_by_key (one case's history without a scan). Version 3 computes every
 * run's fingerprint again from its stored records with the definition that leaves out what changes
 * from run to run (results/machine.h), and removes the machines no run names any more.
 * JSON Lines stays the interchange format: hb_store_import reads an hb_run (results/results.h) and
 * hb_store_export writes one back (samples at float32 precision, 7 significant digits).
 */
#ifndef HB_STORE_H
#define HB_STORE_H
#include <stdint.h>
#include <stdio.h>
#include "results/results.h"

#define HB_STORE_SCHEMA 3

typedef struct hb_store hb_store;

/* ---- naming a store (store_name.c) ---- */
/* 1 when url names a PostgreSQL store: a "postgresql://" or "postgres://" URI, or a libpq key=value
 * connection string ("host=db dbname=hbhist", "service=hbhist": every word keyword=value with libpq's
 * keywords, which no file name is); else 0 (a SQLite file path). */
int hb_store_is_postgres(const char *url);
/* The name every message, record and report gives the store url, into buf (size len, NUL-terminated,
 * truncated); returns buf. A SQLite path as it is. A PostgreSQL connection string rebuilt from libpq's
 * own parse of it (PQconninfoParse), each password (password, sslpassword) as "***": a URI as
 * "postgresql://user:***@host:port/dbname?key=value..." (values percent-encoded), key=value as
 * "user=hb password=*** host=db dbname=hbhist" (quoted where needed); one libpq cannot parse is not
 * shown at all (libpq's own error would quote it). The password's text never appears in buf. */
const char *hb_store_safe_name(const char *url, char *buf, size_t len);
/* Every occurrence of url's passwords (as libpq parses them) in text (size len, NUL-terminated)
 * replaced in place by "***": for a libpq error message about url, which names no password as a rule.
 * Nothing changes when url has no password or is not a PostgreSQL connection string. */
void hb_store_scrub(const char *url, char *text, size_t len);

/* Open (creating or migrating the schema) the store at url: a PostgreSQL connection string
 * (hb_store_is_postgres: a "postgresql://..." or "postgres://..." URI, or libpq key=value) or else a
 * SQLite file path (created with its folder when absent). Returns HB_OK, or HB_EDEVICE with the
 * reason in err (cannot open or connect, a store of a newer schema than this hybench knows, SQL
 * error); err names the store by hb_store_safe_name, never with its password. *out is owned by the
 * caller: hb_store_close. */
hb_status hb_store_open(const char *url, hb_store **out, char *err, size_t errlen);
void hb_store_close(hb_store *s);
/* "sqlite" or "postgresql". */
const char *hb_store_engine(const hb_store *s);
/* The schema version of the open store (HB_STORE_SCHEMA after a successful open). */
int hb_store_schema_version(hb_store *s);

/* The machine fingerprint of run r (borrowed): hb_machine_fingerprint (results/machine.h) of its meta
 * and backend records, 16 hex digits into fp (size >= 17) and the text behind it into desc (size
 * desclen): what names the machine and its software (CPU, total memory, compiler, OpenBLAS, GPU
 * names, driver and library versions), never the host name or what changes from run to run. */
void hb_store_fingerprint(const hb_run *r, char *fp, char *desc, size_t desclen);

/* Lean imports (lean 1): of each case record the store keeps its identity, status, statistics, phase
 * medians and raw samples, and of the rest only reason, rel_err, gflops, gbps and fraction (window
 * medians, memory, ceiling and clock fields are dropped): about 0.4 KB a case instead of 1.7 KB for
 * the H100 reference run's records (docs/history.md). Default 0: whole records. */
void hb_store_set_lean(hb_store *s, int lean);

/* Import run r (loaded whole, hb_run_load) in one transaction. A run whose run_id is already in the
 * store is left as it is (*dup = 1, HB_OK). Returns HB_OK, HB_EINVAL (no run_id in the meta record)
 * or HB_EDEVICE (SQL error; nothing of the run is kept), the reason in err. */
hb_status hb_store_import(hb_store *s, const hb_run *r, int *dup, char *err, size_t errlen);
/* Write run run_id back as JSON Lines to f: its meta record, backend records, case records (the
 * stored record with its samples) and end record. HB_EINVAL when no such run, HB_EDEVICE on SQL
 * errors. Write errors on f are the caller's to check. */
hb_status hb_store_export(hb_store *s, const char *run_id, FILE *f, char *err, size_t errlen);

/* One stored run (hb_store_runs). */
typedef struct hb_store_run {
    int64_t id;
    char run_id[128], date[64], commit[64], fingerprint[24], host[128];
    size_t ncases;
} hb_store_run;
/* The runs of fingerprint fp (NULL: every run), ordered by fingerprint, date, run_id. *v owned by the
 * caller (free). HB_OK or HB_EDEVICE/HB_ENOMEM with err. */
hb_status hb_store_runs(hb_store *s, const char *fp, hb_store_run **v, size_t *n, char *err, size_t errlen);
/* The machines: fingerprints and descriptions (parallel arrays of owned strings; free each and the
 * arrays). */
hb_status hb_store_machines(hb_store *s, char ***fps, char ***descs, size_t *n, char *err, size_t errlen);

/* One machine's history as a matrix: runs (oldest first) by case identities. */
typedef struct hb_store_case {
    int64_t id;
    char *key, *op, *backend, *label;   /* owned */
    int occurrence;
} hb_store_case;
typedef struct hb_series {
    hb_store_run *runs; size_t nruns;   /* owned, oldest first */
    hb_store_case *cases; size_t ncases; /* owned, ordered by op, backend, key, occurrence */
    double *median;                      /* [ncases][nruns] median seconds of metric; NAN when the case
                                            is absent from that run or its status is not ok */
} hb_series;
/* Load the last `last` runs (0: all) of fingerprint fp, metric "total" or "compute". Reads only the
 * hb_case statistics (not samples). HB_OK, HB_EINVAL (no runs of fp), HB_EDEVICE, HB_ENOMEM. */
hb_status hb_store_series(hb_store *s, const char *fp, const char *metric, size_t last, hb_series *out, char *err,
                          size_t errlen);
void hb_series_free(hb_series *x);

/* ---- what `hybench publish` reads besides the series (store_site.c) ---- */
/* The 95% CI of each median of a series and each case's identity fields. */
typedef struct hb_series_ci {
    double *ci_lo, *ci_hi; /* [ncases][nruns] as hb_series.median: the bounds of the 95% CI of the median,
                              seconds per call; NAN where the median is NAN or the store holds no CI */
    char **info;           /* [ncases] owned: the case's identity fields as JSON text (shape, shape_str,
                              dtype, mode, route, flops, bytes, ...: hb_case_key.info); "{}" when none */
    size_t ncases;
} hb_series_ci;
/* Fill out for the series x (borrowed; loaded by hb_store_series with the same fp and metric, "total"
 * or "compute"): the CI bounds of the nights and cases of x, read from hb_case (no samples). *out is
 * owned by the caller: hb_series_ci_free. HB_OK, HB_EDEVICE (SQL error) or HB_ENOMEM, the reason in err
 * (the store named without its password). */
hb_status hb_store_series_ci(hb_store *s, const char *fp, const char *metric, const hb_series *x, hb_series_ci *out,
                             char *err, size_t errlen);
/* Free what hb_store_series_ci allocated in c (its arrays and strings); c is zeroed. NULL members are
 * allowed. */
void hb_series_ci_free(hb_series_ci *c);
/* The meta record and the backend records (a JSON array) of stored run run_id, as imported; *meta and
 * *backends are new references owned by the caller (json_decref). HB_OK, HB_EINVAL (no such run or
 * records that do not parse) or HB_EDEVICE, the reason in err. */
hb_status hb_store_run_records(hb_store *s, const char *run_id, json_t **meta, json_t **backends, char *err,
                               size_t errlen);

/* Bulk loading: hb_store_begin / hb_store_commit wrap several imports in one transaction (faster).
 * hb_store_import inside such a block does not open its own. */
hb_status hb_store_begin(hb_store *s, char *err, size_t errlen);
hb_status hb_store_commit(hb_store *s, char *err, size_t errlen);
#endif
