/* store.c - the history store (results/store.h): one small query layer over SQLite (sqlite3) and
 * PostgreSQL (libpq), the schema and its migrations, import and export of runs, and the series
 * matrix that `hybench trend` reads. SQL is written once with $1, $2, ... parameters in order of
 * appearance, which SQLite binds by position and PostgreSQL by number. */
#include "results/store.h"
#include "results/machine.h"
#include "core/rstats.h"
#include "core/stats.h"
#include <errno.h>
#include <libpq-fe.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ------------------------------------------------------------------------------------------ */
/* a query layer over the two engines                                                            */
/* ------------------------------------------------------------------------------------------ */
typedef enum { P_NULL, P_INT, P_REAL, P_TEXT, P_BLOB } ptype;
typedef struct prm { ptype t; int64_t i; double d; const char *s; const void *b; size_t bl; } prm;
#define PI(v) ((prm){ .t = P_INT, .i = (v) })
#define PR(v) (isfinite(v) ? (prm){ .t = P_REAL, .d = (v) } : (prm){ .t = P_NULL })
static prm pt_(const char *v) { return v ? (prm){ .t = P_TEXT, .s = v } : (prm){ .t = P_NULL }; }
#define PT(v) pt_(v)
#define PB(p, n) ((p) ? (prm){ .t = P_BLOB, .b = (p), .bl = (n) } : (prm){ .t = P_NULL })

/* a cache of prepared SQLite statements, keyed by the SQL text's address (each query is a literal) */
#define NCACHE 24
typedef struct kmap { char **keys; int64_t *vals; size_t cap, n; } kmap;

struct hb_store {
    int pg;
    sqlite3 *db;
    PGconn *pc;
    int in_tx;
    const char *sqlk[NCACHE];
    sqlite3_stmt *sqls[NCACHE];
    kmap keys;       /* "key\x1foccurrence" -> hb_case_key.id, filled on first import */
    int keys_loaded;
    int lean;        /* hb_store_set_lean */
};

typedef struct qres {
    hb_store *s;
    sqlite3_stmt *st;
    PGresult *pr;
    int row, nrows;
    unsigned char *blob; /* PQunescapeBytea buffer of the last q_blob */
} qres;

static hb_status fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static hb_status fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return HB_EDEVICE;
}

static const char *db_err(hb_store *s)
{
    if (!s->pg) return sqlite3_errmsg(s->db);
    const char *m = PQerrorMessage(s->pc);
    return m && *m ? m : "PostgreSQL error";
}

static sqlite3_stmt *sq_prepare(hb_store *s, const char *sql)
{
    for (int i = 0; i < NCACHE; i++)
        if (s->sqlk[i] == sql) { sqlite3_reset(s->sqls[i]); sqlite3_clear_bindings(s->sqls[i]); return s->sqls[i]; }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return NULL;
    for (int i = 0; i < NCACHE; i++)
        if (!s->sqlk[i]) { s->sqlk[i] = sql; s->sqls[i] = st; return st; }
    /* cache full: replace the first entry */
    sqlite3_finalize(s->sqls[0]);
    s->sqlk[0] = sql;
    s->sqls[0] = st;
    return st;
}

/* Run sql with parameters p[np]; rows are read with q_next. Returns HB_OK or HB_EDEVICE (err). */
static hb_status q_run(hb_store *s, const char *sql, const prm *p, int np, qres *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    r->row = -1;
    if (!s->pg) {
        sqlite3_stmt *st = sq_prepare(s, sql);
        if (!st) return fail(err, errlen, "SQLite: %s (in: %.80s)", db_err(s), sql);
        for (int i = 0; i < np; i++) {
            int rc;
            switch (p[i].t) {
            case P_INT: rc = sqlite3_bind_int64(st, i + 1, p[i].i); break;
            case P_REAL: rc = sqlite3_bind_double(st, i + 1, p[i].d); break;
            case P_TEXT: rc = sqlite3_bind_text(st, i + 1, p[i].s, -1, SQLITE_STATIC); break;
            case P_BLOB: rc = sqlite3_bind_blob(st, i + 1, p[i].b, (int)p[i].bl, SQLITE_STATIC); break;
            default: rc = sqlite3_bind_null(st, i + 1);
            }
            if (rc != SQLITE_OK) return fail(err, errlen, "SQLite: bind %d: %s", i + 1, db_err(s));
        }
        r->st = st;
        return HB_OK;
    }
    const char *vals[32] = { 0 };
    int lens[32] = { 0 }, fmts[32] = { 0 };
    char num[32][32];
    if (np > 32) return fail(err, errlen, "too many parameters");
    for (int i = 0; i < np; i++) {
        lens[i] = 0;
        fmts[i] = 0;
        switch (p[i].t) {
        case P_INT: snprintf(num[i], sizeof num[i], "%lld", (long long)p[i].i); vals[i] = num[i]; break;
        case P_REAL: snprintf(num[i], sizeof num[i], "%.17g", p[i].d); vals[i] = num[i]; break;
        case P_TEXT: vals[i] = p[i].s; break;
        case P_BLOB: vals[i] = p[i].b; lens[i] = (int)p[i].bl; fmts[i] = 1; break;
        default: vals[i] = NULL;
        }
    }
    r->pr = PQexecParams(s->pc, sql, np, NULL, vals, lens, fmts, 0);
    ExecStatusType es = PQresultStatus(r->pr);
    if (es != PGRES_COMMAND_OK && es != PGRES_TUPLES_OK) {
        fail(err, errlen, "PostgreSQL: %s (in: %.80s)", PQresultErrorMessage(r->pr), sql);
        PQclear(r->pr);
        r->pr = NULL;
        return HB_EDEVICE;
    }
    r->nrows = PQntuples(r->pr);
    return HB_OK;
}

/* 1: a row is there; 0: no more rows; -1: error (message from db_err). */
static int q_next(qres *r)
{
    if (r->st) {
        int rc = sqlite3_step(r->st);
        return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
    }
    if (!r->pr) return 0;
    return ++r->row < r->nrows ? 1 : 0;
}

static int q_null(qres *r, int c)
{
    return r->st ? sqlite3_column_type(r->st, c) == SQLITE_NULL : PQgetisnull(r->pr, r->row, c);
}
static int64_t q_int(qres *r, int c)
{
    return r->st ? sqlite3_column_int64(r->st, c) : q_null(r, c) ? 0 : strtoll(PQgetvalue(r->pr, r->row, c), NULL, 10);
}
static double q_real(qres *r, int c)
{
    if (q_null(r, c)) return NAN;
    return r->st ? sqlite3_column_double(r->st, c) : strtod(PQgetvalue(r->pr, r->row, c), NULL);
}
static const char *q_text(qres *r, int c)
{
    if (q_null(r, c)) return NULL;
    return r->st ? (const char *)sqlite3_column_text(r->st, c) : PQgetvalue(r->pr, r->row, c);
}
static const void *q_blob(qres *r, int c, size_t *len)
{
    *len = 0;
    if (q_null(r, c)) return NULL;
    if (r->st) {
        *len = (size_t)sqlite3_column_bytes(r->st, c);
        return sqlite3_column_blob(r->st, c);
    }
    if (r->blob) { PQfreemem(r->blob); r->blob = NULL; }
    r->blob = PQunescapeBytea((const unsigned char *)PQgetvalue(r->pr, r->row, c), len);
    return r->blob;
}
static void q_end(qres *r)
{
    if (r->st) sqlite3_reset(r->st);
    if (r->pr) PQclear(r->pr);
    if (r->blob) PQfreemem(r->blob);
    memset(r, 0, sizeof *r);
}

/* A statement that returns no rows (or whose rows are not needed). */
static hb_status q_exec(hb_store *s, const char *sql, const prm *p, int np, char *err, size_t errlen)
{
    qres r;
    hb_status st = q_run(s, sql, p, np, &r, err, errlen);
    if (st) return st;
    int rc;
    while ((rc = q_next(&r)) == 1) {}
    if (rc < 0) st = fail(err, errlen, "SQLite: %s (in: %.80s)", db_err(s), sql);
    q_end(&r);
    return st;
}

/* Several statements without parameters (schema scripts). */
static hb_status q_script(hb_store *s, const char *sql, char *err, size_t errlen)
{
    if (!s->pg) {
        char *m = NULL;
        if (sqlite3_exec(s->db, sql, NULL, NULL, &m) != SQLITE_OK) {
            fail(err, errlen, "SQLite: %s", m ? m : db_err(s));
            sqlite3_free(m);
            return HB_EDEVICE;
        }
        return HB_OK;
    }
    PGresult *pr = PQexec(s->pc, sql);
    ExecStatusType es = PQresultStatus(pr);
    hb_status st = HB_OK;
    if (es != PGRES_COMMAND_OK && es != PGRES_TUPLES_OK) st = fail(err, errlen, "PostgreSQL: %s", PQresultErrorMessage(pr));
    PQclear(pr);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* a string -> id map                                                                            */
/* ------------------------------------------------------------------------------------------ */
static size_t kmap_slot(const kmap *m, const char *k, int *found)
{
    size_t h = (size_t)hb_hash64(k) & (m->cap - 1);
    while (m->keys[h]) {
        if (!strcmp(m->keys[h], k)) { *found = 1; return h; }
        h = (h + 1) & (m->cap - 1);
    }
    *found = 0;
    return h;
}
static int kmap_put(kmap *m, const char *k, int64_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 1024;
        kmap n = { calloc(nc, sizeof(char *)), calloc(nc, sizeof(int64_t)), nc, 0 };
        if (!n.keys || !n.vals) { free(n.keys); free(n.vals); return -1; }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                int f;
                size_t h = kmap_slot(&n, m->keys[i], &f);
                n.keys[h] = m->keys[i];
                n.vals[h] = m->vals[i];
                n.n++;
            }
        free(m->keys);
        free(m->vals);
        *m = n;
    }
    int f;
    size_t h = kmap_slot(m, k, &f);
    if (!f) {
        if (!(m->keys[h] = strdup(k))) return -1;
        m->n++;
    }
    m->vals[h] = v;
    return 0;
}
static int kmap_get(const kmap *m, const char *k, int64_t *v)
{
    if (!m->cap) return 0;
    int f;
    size_t h = kmap_slot(m, k, &f);
    if (f) *v = m->vals[h];
    return f;
}
static void kmap_free(kmap *m)
{
    for (size_t i = 0; i < m->cap; i++) free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------------------------------ */
/* schema and migrations                                                                         */
/* ------------------------------------------------------------------------------------------ */
/* Version 1: the tables. Type names differ (SQLite's INTEGER PRIMARY KEY is an alias of the rowid;
 * PostgreSQL's BIGSERIAL), the SQL that uses them does not. */
static const char *const v1_sqlite =
    "CREATE TABLE hb_schema(version INTEGER NOT NULL);"
    "CREATE TABLE hb_machine(fingerprint TEXT PRIMARY KEY, description TEXT NOT NULL);"
    "CREATE TABLE hb_run(id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, date TEXT NOT NULL, commit_id TEXT,"
    " fingerprint TEXT NOT NULL REFERENCES hb_machine(fingerprint), host TEXT, meta TEXT NOT NULL,"
    " backends TEXT NOT NULL, end_rec TEXT, imported TEXT NOT NULL);"
    "CREATE INDEX hb_run_fp ON hb_run(fingerprint, date);"
    "CREATE TABLE hb_case_key(id INTEGER PRIMARY KEY, key TEXT NOT NULL, occurrence INTEGER NOT NULL,"
    " op TEXT NOT NULL, backend TEXT NOT NULL, label TEXT NOT NULL, info TEXT NOT NULL, UNIQUE(key, occurrence));"
    "CREATE TABLE hb_case(run INTEGER NOT NULL REFERENCES hb_run(id) ON DELETE CASCADE,"
    " case_key INTEGER NOT NULL REFERENCES hb_case_key(id), status TEXT NOT NULL, ci_met INTEGER, n_total INTEGER,"
    " median_total REAL, ci_lo_total REAL, ci_hi_total REAL, median_compute REAL, ci_lo_compute REAL,"
    " ci_hi_compute REAL, PRIMARY KEY(run, case_key)) WITHOUT ROWID;"
    "CREATE TABLE hb_case_detail(run INTEGER NOT NULL REFERENCES hb_run(id) ON DELETE CASCADE,"
    " case_key INTEGER NOT NULL, phase_medians BLOB, samples_total BLOB, samples_compute BLOB, record TEXT NOT NULL,"
    " PRIMARY KEY(run, case_key));" /* a rowid table: its rows (about 1 KB for a real case) stay in their page,
                                     where WITHOUT ROWID would move each past ~1 KB to an overflow page of its own */
    "INSERT INTO hb_schema(version) VALUES (1);";
static const char *const v1_pg =
    "CREATE TABLE hb_schema(version INTEGER NOT NULL);"
    "CREATE TABLE hb_machine(fingerprint TEXT PRIMARY KEY, description TEXT NOT NULL);"
    "CREATE TABLE hb_run(id BIGSERIAL PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, date TEXT NOT NULL, commit_id TEXT,"
    " fingerprint TEXT NOT NULL REFERENCES hb_machine(fingerprint), host TEXT, meta TEXT NOT NULL,"
    " backends TEXT NOT NULL, end_rec TEXT, imported TEXT NOT NULL);"
    "CREATE INDEX hb_run_fp ON hb_run(fingerprint, date);"
    "CREATE TABLE hb_case_key(id BIGSERIAL PRIMARY KEY, key TEXT NOT NULL, occurrence INTEGER NOT NULL,"
    " op TEXT NOT NULL, backend TEXT NOT NULL, label TEXT NOT NULL, info TEXT NOT NULL, UNIQUE(key, occurrence));"
    "CREATE TABLE hb_case(run BIGINT NOT NULL REFERENCES hb_run(id) ON DELETE CASCADE,"
    " case_key BIGINT NOT NULL REFERENCES hb_case_key(id), status TEXT NOT NULL, ci_met INTEGER, n_total INTEGER,"
    " median_total DOUBLE PRECISION, ci_lo_total DOUBLE PRECISION, ci_hi_total DOUBLE PRECISION,"
    " median_compute DOUBLE PRECISION, ci_lo_compute DOUBLE PRECISION, ci_hi_compute DOUBLE PRECISION,"
    " PRIMARY KEY(run, case_key));"
    "CREATE TABLE hb_case_detail(run BIGINT NOT NULL REFERENCES hb_run(id) ON DELETE CASCADE,"
    " case_key BIGINT NOT NULL, phase_medians BYTEA, samples_total BYTEA, samples_compute BYTEA, record TEXT NOT NULL,"
    " PRIMARY KEY(run, case_key));"
    "INSERT INTO hb_schema(version) VALUES (1);";
/* Version 2: one case's history by its identity without a scan (hb_case is keyed run first). */
static const char *const v2_both = "CREATE INDEX hb_case_by_key ON hb_case(case_key, run);"
                                   "UPDATE hb_schema SET version = 2;";

static int schema_version(hb_store *s)
{
    qres r;
    char e[256];
    const char *probe = s->pg ? "SELECT count(*) FROM pg_tables WHERE tablename = 'hb_schema'"
                              : "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'hb_schema'";
    if (q_run(s, probe, NULL, 0, &r, e, sizeof e)) return -1;
    int have = q_next(&r) == 1 && q_int(&r, 0) > 0;
    q_end(&r);
    if (!have) return 0;
    if (q_run(s, "SELECT max(version) FROM hb_schema", NULL, 0, &r, e, sizeof e)) return -1;
    int v = q_next(&r) == 1 ? (int)q_int(&r, 0) : -1;
    q_end(&r);
    return v;
}

int hb_store_schema_version(hb_store *s) { return schema_version(s); }

/* Bring the store to version `target` (<= HB_STORE_SCHEMA), each step in its own transaction. */
static hb_status migrate(hb_store *s, int target, char *err, size_t errlen)
{
    int v = schema_version(s);
    if (v < 0) return fail(err, errlen, "cannot read the store's schema version: %s", db_err(s));
    if (v > HB_STORE_SCHEMA)
        return fail(err, errlen, "the store has schema version %d; this hybench knows up to %d (update hybench)", v,
                    HB_STORE_SCHEMA);
    while (v < target) {
        const char *step = v == 0 ? (s->pg ? v1_pg : v1_sqlite) : v2_both;
        hb_status st = q_script(s, "BEGIN", err, errlen);
        if (!st) st = q_script(s, step, err, errlen);
        if (!st) st = q_script(s, "COMMIT", err, errlen);
        if (st) {
            char e2[64];
            q_script(s, "ROLLBACK", e2, sizeof e2);
            size_t l = strlen(err);
            snprintf(err + l, errlen - l, " (migrating the store from schema %d)", v);
            return st;
        }
        v++;
    }
    return HB_OK;
}

static int is_pg_url(const char *url)
{
    return !strncmp(url, "postgresql://", 13) || !strncmp(url, "postgres://", 11);
}

/* Open at a given schema version: the tests build a version-1 store and check that a plain open
 * migrates it. Not in store.h. */
hb_status hb_store_open_at(const char *url, int target, hb_store **out, char *err, size_t errlen);
hb_status hb_store_open_at(const char *url, int target, hb_store **out, char *err, size_t errlen)
{
    *out = NULL;
    hb_store *s = calloc(1, sizeof *s);
    if (!s) return fail(err, errlen, "out of memory");
    if (is_pg_url(url)) {
        s->pg = 1;
        s->pc = PQconnectdb(url);
        if (PQstatus(s->pc) != CONNECTION_OK) {
            fail(err, errlen, "cannot connect to %s: %s", url, PQerrorMessage(s->pc));
            PQfinish(s->pc);
            free(s);
            return HB_EDEVICE;
        }
        PGresult *pr = PQexec(s->pc, "SET client_min_messages = warning");
        PQclear(pr);
    } else {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", url);
        char *sl = strrchr(dir, '/');
        if (sl && sl != dir) {
            *sl = 0;
            for (char *p = dir + 1; *p; p++)
                if (*p == '/') { *p = 0; mkdir(dir, 0777); *p = '/'; }
            mkdir(dir, 0777);
        }
        if (sqlite3_open_v2(url, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
            fail(err, errlen, "cannot open the store %s: %s", url, s->db ? sqlite3_errmsg(s->db) : "out of memory");
            sqlite3_close(s->db);
            free(s);
            return HB_EDEVICE;
        }
        sqlite3_busy_timeout(s->db, 10000); /* two nightly jobs on one file wait for each other */
        char e[256];
        if (q_script(s, "PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", e,
                     sizeof e)) {
            fail(err, errlen, "%s: not a SQLite store: %s", url, e);
            hb_store_close(s);
            return HB_EDEVICE;
        }
    }
    hb_status st = migrate(s, target, err, errlen);
    if (st) { hb_store_close(s); return st; }
    *out = s;
    return HB_OK;
}

hb_status hb_store_open(const char *url, hb_store **out, char *err, size_t errlen)
{
    return hb_store_open_at(url, HB_STORE_SCHEMA, out, err, errlen);
}

void hb_store_close(hb_store *s)
{
    if (!s) return;
    for (int i = 0; i < NCACHE; i++) if (s->sqls[i]) sqlite3_finalize(s->sqls[i]);
    if (s->db) sqlite3_close(s->db);
    if (s->pc) PQfinish(s->pc);
    kmap_free(&s->keys);
    free(s);
}

const char *hb_store_engine(const hb_store *s) { return s->pg ? "postgresql" : "sqlite"; }

void hb_store_set_lean(hb_store *s, int lean) { s->lean = lean; }

hb_status hb_store_begin(hb_store *s, char *err, size_t errlen)
{
    hb_status st = q_script(s, "BEGIN", err, errlen);
    if (!st) s->in_tx = 1;
    return st;
}
hb_status hb_store_commit(hb_store *s, char *err, size_t errlen)
{
    s->in_tx = 0;
    return q_script(s, "COMMIT", err, errlen);
}

/* ------------------------------------------------------------------------------------------ */
/* fingerprint                                                                                   */
/* ------------------------------------------------------------------------------------------ */

void hb_store_fingerprint(const hb_run *r, char *fp, char *desc, size_t desclen)
{
    /* one definition of a machine (results/machine.c), so that the store, the CSV and the report agree */
    hb_machine_fingerprint(r->meta, r->backends, desc, desclen, fp, 17);
}

/* ------------------------------------------------------------------------------------------ */
/* import                                                                                        */
/* ------------------------------------------------------------------------------------------ */
/* float32 little-endian packing of a JSON array of seconds; *n values; NULL when none. Owned. */
static unsigned char *pack_f32(json_t *a, size_t *bytes)
{
    size_t n = json_array_size(a);
    *bytes = 0;
    if (!n) return NULL;
    unsigned char *b = malloc(4 * n);
    if (!b) return NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(a, i);
        float f = json_is_number(x) ? (float)json_number_value(x) : NAN;
        uint32_t u;
        memcpy(&u, &f, 4);
        for (int k = 0; k < 4; k++) b[4 * i + (size_t)k] = (unsigned char)(u >> (8 * k));
    }
    *bytes = 4 * n;
    return b;
}

/* A float32 sample as the double export writes: its shortest decimal of at most 7 significant digits
 * that reads back as the same float (the text the results file had, as a rule), else 9 digits. */
static double f32_value(float f)
{
    char t[32];
    snprintf(t, sizeof t, "%.7g", (double)f);
    double d = strtod(t, NULL);
    if ((float)d == f) return d;
    snprintf(t, sizeof t, "%.9g", (double)f);
    return strtod(t, NULL);
}

/* float64 little-endian packing of n values. Owned. */
static unsigned char *pack_f64(const double *x, size_t n, size_t *bytes)
{
    unsigned char *b = malloc(8 * n);
    *bytes = b ? 8 * n : 0;
    for (size_t i = 0; b && i < n; i++) {
        uint64_t u;
        memcpy(&u, &x[i], 8);
        for (int k = 0; k < 8; k++) b[8 * i + (size_t)k] = (unsigned char)(u >> (8 * k));
    }
    return b;
}
static double unpack_f64(const unsigned char *b, size_t i)
{
    uint64_t u = 0;
    for (int k = 0; k < 8; k++) u |= (uint64_t)b[8 * i + (size_t)k] << (8 * k);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* The samples of a float32 BLOB as doubles (the values export writes). Owned; NULL when none. */
static double *f32_values(const unsigned char *b, size_t bytes, size_t *n)
{
    *n = bytes / 4;
    double *x = *n ? malloc(*n * sizeof *x) : NULL;
    for (size_t i = 0; x && i < *n; i++) {
        uint32_t u = 0;
        for (int k = 0; k < 4; k++) u |= (uint32_t)b[4 * i + (size_t)k] << (8 * k);
        float f;
        memcpy(&f, &u, 4);
        x[i] = f32_value(f);
    }
    return x;
}

/* Do the phase statistics ph (phases.<metric>) follow from the stored samples (hb_stats_compute of
 * their float32 values, each field within 1e-5 relative)? Then the store keeps the samples only and
 * export computes the statistics again. */
static int stats_follow(json_t *ph, const unsigned char *b, size_t bytes)
{
    size_t n;
    double *x = f32_values(b, bytes, &n);
    if (!x || !json_is_object(ph)) { free(x); return 0; }
    hb_stats st;
    hb_stats_compute(x, n, &st);
    free(x);
    json_t *mine = hb_stats_json(&st);
    double scale = fabs(st.median); /* spreads (mad, stddev) are compared at the scale of the times */
    int ok = json_object_size(mine) == json_object_size(ph);
    const char *k;
    json_t *v;
    json_object_foreach(ph, k, v) {
        json_t *w = json_object_get(mine, k);
        if (!ok) break;
        if (json_is_null(v) && json_is_null(w)) continue;
        if (!json_is_number(v) || !json_is_number(w)) { ok = 0; break; }
        double a = json_number_value(v), c = json_number_value(w);
        ok = fabs(a - c) <= 1e-5 * fmax(fmax(fabs(a), fabs(c)), strcmp(k, "cv") ? scale : 0) + 1e-15;
    }
    json_decref(mine);
    return ok;
}

static json_t *stats_from(const unsigned char *b, size_t bytes)
{
    size_t n;
    double *x = f32_values(b, bytes, &n);
    if (!x) return NULL;
    hb_stats st;
    hb_stats_compute(x, n, &st);
    free(x);
    return hb_stats_json(&st);
}

static json_t *unpack_f32(const unsigned char *b, size_t bytes)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i + 4 <= bytes; i += 4) {
        uint32_t u = 0;
        for (int k = 0; k < 4; k++) u |= (uint32_t)b[i + (size_t)k] << (8 * k);
        float f;
        memcpy(&f, &u, 4);
        json_array_append_new(a, isfinite(f) ? json_real(f32_value(f)) : json_null());
    }
    return a;
}

static hb_status case_key_id(hb_store *s, json_t *c, int occ, int64_t *id, char *err, size_t errlen)
{
    char e[256];
    if (!s->keys_loaded) {
        qres r;
        hb_status st = q_run(s, "SELECT id, key, occurrence FROM hb_case_key", NULL, 0, &r, err, errlen);
        if (st) return st;
        while (q_next(&r) == 1) {
            char k[1200];
            const char *kt = q_text(&r, 1);
            snprintf(k, sizeof k, "%s\x1f%d", kt ? kt : "", (int)q_int(&r, 2));
            if (kmap_put(&s->keys, k, q_int(&r, 0))) { q_end(&r); return fail(err, errlen, "out of memory"); }
        }
        q_end(&r);
        s->keys_loaded = 1;
    }
    const char *key = hb_rec_str(c, "key");
    char k[1200];
    snprintf(k, sizeof k, "%s\x1f%d", key, occ);
    if (kmap_get(&s->keys, k, id)) return HB_OK;
    char label[600];
    const char *shape = hb_rec_str(c, "shape_str");
    snprintf(label, sizeof label, "%s %s/%s/%s", shape ? shape : key, hb_rec_str(c, "mode") ? hb_rec_str(c, "mode") : "?",
             hb_rec_str(c, "route") ? hb_rec_str(c, "route") : "?", hb_rec_str(c, "dtype") ? hb_rec_str(c, "dtype") : "?");
    /* the case's identity fields, kept once: they do not change from night to night */
    json_t *info = json_object();
    static const char *const idf[] = { "backend", "op", "family", "shape", "shape_str", "size", "name", "source",
                                       "model", "weight", "dtype", "mode", "route", "flops", "bytes", "bound", NULL };
    for (int i = 0; idf[i]; i++) {
        json_t *v = json_object_get(c, idf[i]);
        if (v) json_object_set(info, idf[i], v);
    }
    char *itxt = json_dumps(info, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(10));
    json_decref(info);
    if (!itxt) return fail(err, errlen, "out of memory");
    prm p[] = { PT(key), PI(occ), PT(hb_rec_str(c, "op") ? hb_rec_str(c, "op") : "unknown"),
                PT(hb_rec_str(c, "backend") ? hb_rec_str(c, "backend") : "unknown"), PT(label), PT(itxt) };
    qres r;
    /* ON CONFLICT: another machine's import may add the same identity at the same time (PostgreSQL
     * waits for it, then this insert does nothing and the SELECT below finds its row) */
    hb_status st = q_run(s,
                         "INSERT INTO hb_case_key(key, occurrence, op, backend, label, info) VALUES ($1, $2, $3, $4, $5, $6)"
                         " ON CONFLICT (key, occurrence) DO NOTHING RETURNING id",
                         p, 6, &r, err, errlen);
    int got = 0;
    if (!st) {
        got = q_next(&r) == 1;
        if (got) *id = q_int(&r, 0);
        q_end(&r);
    }
    if (!st && !got) {
        prm k2[] = { PT(key), PI(occ) };
        st = q_run(s, "SELECT id FROM hb_case_key WHERE key = $1 AND occurrence = $2", k2, 2, &r, err, errlen);
        if (!st) {
            if (q_next(&r) == 1) *id = q_int(&r, 0);
            else st = fail(err, errlen, "inserting case key %s: %s", key, db_err(s));
            q_end(&r);
        }
    }
    free(itxt);
    if (!st && kmap_put(&s->keys, k, *id)) st = fail(err, errlen, "out of memory");
    (void)e;
    return st;
}

static hb_status import_cases(hb_store *s, const hb_run *r, int64_t run, char *err, size_t errlen)
{
    kmap occ = { 0 };
    hb_status st = HB_OK;
    size_t i;
    json_t *c;
    json_array_foreach(r->cases, i, c) {
        const char *key = hb_rec_str(c, "key");
        if (!key) continue;
        int64_t o = 0;
        kmap_get(&occ, key, &o);
        if (kmap_put(&occ, key, o + 1)) { st = fail(err, errlen, "out of memory"); break; }
        int64_t kid = -1;
        if ((st = case_key_id(s, c, (int)o, &kid, err, errlen))) break;
        const char *status = hb_rec_str(c, "status") ? hb_rec_str(c, "status") : "unknown";
        json_t *ph = json_object_get(c, "phases"), *tot = json_object_get(ph, "total"), *cmp = json_object_get(ph, "compute");
        json_t *ci = json_object_get(c, "ci_met");
        json_t *nt = json_object_get(tot, "n");
        prm p[] = { PI(run), PI(kid), PT(status), ci ? PI(json_is_true(ci)) : (prm){ .t = P_NULL },
                    nt ? PI((int64_t)json_number_value(nt)) : (prm){ .t = P_NULL },
                    PR(hb_case_phase(c, "total", "median")), PR(hb_case_phase(c, "total", "ci_lo")),
                    PR(hb_case_phase(c, "total", "ci_hi")), PR(hb_case_phase(c, "compute", "median")),
                    PR(hb_case_phase(c, "compute", "ci_lo")), PR(hb_case_phase(c, "compute", "ci_hi")) };
        (void)cmp;
        st = q_exec(s,
                    "INSERT INTO hb_case(run, case_key, status, ci_met, n_total, median_total, ci_lo_total, ci_hi_total,"
                    " median_compute, ci_lo_compute, ci_hi_compute) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                    p, 11, err, errlen);
        if (st) break;
        /* detail: the record without its samples and the identity kept in hb_case_key; the phases
         * other than total and compute as a float32 vector of medians (HB_PH order) */
        json_t *rest = json_object();
        const char *k;
        json_t *v;
        static const char *const drop[] = { "type", "schema", "samples", "phases", "backend", "op", "family", "shape",
                                            "shape_str", "size", "name", "source", "model", "weight", "dtype", "mode",
                                            "route", "flops", "bytes", "bound", "key", "status", "ci_met",
                                            "host_clock_ghz", NULL };
        static const char *const lean_keep[] = { "reason", "rel_err", "gflops", "gbps", "fraction", NULL };
        json_object_foreach(c, k, v) {
            int skip = 0;
            for (int d = 0; drop[d] && !skip; d++) skip = !strcmp(k, drop[d]);
            if (s->lean && !skip) {
                skip = 1;
                for (int d = 0; lean_keep[d] && skip; d++) skip = strcmp(k, lean_keep[d]) != 0;
            }
            if (!skip) json_object_set(rest, k, v);
        }
        double pmv[HB_PH_COUNT];
        for (int q = 0; q < HB_PH_COUNT; q++) pmv[q] = hb_case_phase(c, hb_phase_names[q], "median");
        size_t bpm = 0, bt = 0, bc = 0;
        /* every phase's median, when the record has phases besides total and compute */
        int others = 0;
        for (int q = 0; q < HB_PH_COUNT; q++) others |= q != HB_PH_TOTAL && q != HB_PH_COMPUTE && isfinite(pmv[q]);
        unsigned char *xpm = others ? pack_f64(pmv, HB_PH_COUNT, &bpm) : NULL;
        json_t *smp = json_object_get(c, "samples");
        unsigned char *xt = pack_f32(json_object_get(smp, "total"), &bt);
        unsigned char *xc = pack_f32(json_object_get(smp, "compute"), &bc);
        /* the statistics of total and compute: kept only when they do not follow from the samples */
        json_t *keep = json_object();
        if (tot && !(xt && stats_follow(tot, xt, bt))) json_object_set(keep, "total", tot);
        if (cmp && !(xc && stats_follow(cmp, xc, bc))) json_object_set(keep, "compute", cmp);
        if (json_object_size(keep)) json_object_set_new(rest, "phases", keep);
        else json_decref(keep);
        char *txt = json_dumps(rest, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(10));
        json_decref(rest);
        prm d[] = { PI(run), PI(kid), PB(xpm, bpm), PB(xt, bt), PB(xc, bc), PT(txt ? txt : "{}") };
        st = q_exec(s,
                    "INSERT INTO hb_case_detail(run, case_key, phase_medians, samples_total, samples_compute, record)"
                    " VALUES ($1, $2, $3, $4, $5, $6)",
                    d, 6, err, errlen);
        free(txt);
        free(xpm);
        free(xt);
        free(xc);
        if (st) break;
    }
    kmap_free(&occ);
    return st;
}

hb_status hb_store_import(hb_store *s, const hb_run *r, int *dup, char *err, size_t errlen)
{
    *dup = 0;
    const char *run_id = hb_run_meta(r, "run_id");
    if (!run_id) { snprintf(err, errlen, "%s: the meta record has no run_id", r->path ? r->path : "run"); return HB_EINVAL; }
    char fp[24], desc[4096];
    hb_store_fingerprint(r, fp, desc, sizeof desc);
    int own_tx = !s->in_tx;
    hb_status st = own_tx ? q_script(s, "BEGIN", err, errlen) : HB_OK;
    if (st) return st;
    qres q;
    prm pid[] = { PT(run_id) };
    if ((st = q_run(s, "SELECT id FROM hb_run WHERE run_id = $1", pid, 1, &q, err, errlen))) goto out;
    int exists = q_next(&q) == 1;
    q_end(&q);
    if (exists) { *dup = 1; goto out; }
    prm pm[] = { PT(fp), PT(desc) };
    if ((st = q_exec(s, "INSERT INTO hb_machine(fingerprint, description) VALUES ($1, $2) ON CONFLICT DO NOTHING", pm, 2,
                     err, errlen)))
        goto out;
    char *meta = json_dumps(r->meta, JSON_COMPACT | JSON_ENSURE_ASCII);
    char *backends = r->backends ? json_dumps(r->backends, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    char *end = r->end ? json_dumps(r->end, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    char now[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    prm pr[] = { PT(run_id), PT(hb_run_meta(r, "date") ? hb_run_meta(r, "date") : ""), PT(hb_run_meta(r, "git_commit")),
                 PT(fp), PT(hb_run_meta(r, "host")), PT(meta ? meta : "{}"), PT(backends ? backends : "[]"), PT(end),
                 PT(now) };
    st = q_run(s,
               "INSERT INTO hb_run(run_id, date, commit_id, fingerprint, host, meta, backends, end_rec, imported)"
               " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
               pr, 9, &q, err, errlen);
    int64_t run = !st && q_next(&q) == 1 ? q_int(&q, 0) : -1; /* the statement runs here: texts still bound */
    if (!st) q_end(&q);
    free(meta);
    free(backends);
    free(end);
    if (st) goto out;
    if (run < 0) { st = fail(err, errlen, "inserting run %s: %s", run_id, db_err(s)); goto out; }
    st = import_cases(s, r, run, err, errlen);
out:
    if (own_tx) {
        char e2[256];
        if (st) q_script(s, "ROLLBACK", e2, sizeof e2);
        else st = q_script(s, "COMMIT", err, errlen);
    }
    if (st) {
        /* case keys inserted in a rolled-back transaction are gone: reload the map next time */
        kmap_free(&s->keys);
        s->keys_loaded = 0;
    }
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* export                                                                                        */
/* ------------------------------------------------------------------------------------------ */
static void put_line(FILE *f, json_t *rec)
{
    char *t = json_dumps(rec, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
    if (t) { fputs(t, f); fputc('\n', f); free(t); }
}

hb_status hb_store_export(hb_store *s, const char *run_id, FILE *f, char *err, size_t errlen)
{
    qres q;
    prm p[] = { PT(run_id) };
    hb_status st = q_run(s, "SELECT id, meta, backends, end_rec FROM hb_run WHERE run_id = $1", p, 1, &q, err, errlen);
    if (st) return st;
    if (q_next(&q) != 1) { q_end(&q); snprintf(err, errlen, "no run %s in the store", run_id); return HB_EINVAL; }
    int64_t id = q_int(&q, 0);
    json_t *meta = json_loads(q_text(&q, 1), 0, NULL), *bk = json_loads(q_text(&q, 2), 0, NULL);
    json_t *end = q_text(&q, 3) ? json_loads(q_text(&q, 3), 0, NULL) : NULL;
    q_end(&q);
    if (meta) put_line(f, meta);
    size_t i;
    json_t *b;
    json_array_foreach(bk, i, b) put_line(f, b);
    json_decref(meta);
    json_decref(bk);
    prm pi[] = { PI(id) };
    st = q_run(s,
               "SELECT k.key, k.info, c.status, c.ci_met, d.phase_medians, d.samples_total, d.samples_compute, d.record,"
               " c.median_total, c.ci_lo_total, c.ci_hi_total, c.median_compute, c.ci_lo_compute, c.ci_hi_compute"
               " FROM hb_case c JOIN hb_case_key k ON k.id = c.case_key"
               " JOIN hb_case_detail d ON d.run = c.run AND d.case_key = c.case_key WHERE c.run = $1"
               " ORDER BY k.key, k.occurrence",
               pi, 1, &q, err, errlen);
    if (st) { json_decref(end); return st; }
    int rc;
    while ((rc = q_next(&q)) == 1) {
        json_t *rec = json_object();
        json_object_set_new(rec, "type", json_string("case"));
        json_object_set_new(rec, "key", json_string(q_text(&q, 0)));
        json_t *info = json_loads(q_text(&q, 1), 0, NULL);
        json_object_update(rec, info);
        json_decref(info);
        json_t *rest = json_loads(q_text(&q, 7), 0, NULL);
        json_t *phases = json_object_get(rest, "phases");
        if (phases) json_incref(phases);
        json_object_del(rest, "phases");
        json_object_update(rec, rest);
        json_decref(rest);
        size_t bl, blt = 0, blc = 0;
        const unsigned char *pm0 = q_blob(&q, 4, &bl);
        unsigned char *pm = pm0 && bl == 8 * HB_PH_COUNT ? malloc(bl) : NULL;
        if (pm) memcpy(pm, pm0, bl);
        const unsigned char *x0 = q_blob(&q, 5, &blt);
        unsigned char *xt = x0 && blt ? malloc(blt) : NULL;
        if (xt) memcpy(xt, x0, blt);
        x0 = q_blob(&q, 6, &blc);
        unsigned char *xc = x0 && blc ? malloc(blc) : NULL;
        if (xc) memcpy(xc, x0, blc);
        if (pm || phases || xt || xc) {
            json_t *ph = json_object();
            for (int k = 0; k < HB_PH_COUNT; k++) {
                const char *name = hb_phase_names[k];
                json_t *full = json_object_get(phases, name);
                if (full) { json_object_set(ph, name, full); continue; }
                if (k == HB_PH_TOTAL && xt) full = stats_from(xt, blt);
                else if (k == HB_PH_COMPUTE && xc) full = stats_from(xc, blc);
                if (full) {
                    /* median and CI as measured (double), not as float32 samples give them again */
                    int c0 = k == HB_PH_TOTAL ? 8 : 11;
                    static const char *const exact[] = { "median", "ci_lo", "ci_hi" };
                    for (int e = 0; e < 3; e++)
                        if (!q_null(&q, c0 + e)) json_object_set_new(full, exact[e], json_real(q_real(&q, c0 + e)));
                    json_object_set_new(ph, name, full);
                    continue;
                }
                double m = pm ? unpack_f64(pm, (size_t)k) : (double)NAN;
                if (isfinite(m)) {
                    json_t *o = json_object();
                    json_object_set_new(o, "median", json_real(m));
                    json_object_set_new(ph, name, o);
                }
            }
            json_object_set_new(rec, "phases", ph);
        }
        json_decref(phases);
        free(pm);
        json_t *smp = json_object();
        if (xt) json_object_set_new(smp, "total", unpack_f32(xt, blt));
        if (xc) json_object_set_new(smp, "compute", unpack_f32(xc, blc));
        free(xt);
        free(xc);
        if (json_object_size(smp)) json_object_set_new(rec, "samples", smp);
        else json_decref(smp);
        if (!q_null(&q, 3)) json_object_set_new(rec, "ci_met", json_boolean(q_int(&q, 3)));
        json_object_set_new(rec, "status", json_string(q_text(&q, 2)));
        json_object_set_new(rec, "schema", json_integer(HB_SCHEMA_VERSION));
        put_line(f, rec);
        json_decref(rec);
    }
    if (rc < 0) st = fail(err, errlen, "reading run %s: %s", run_id, db_err(s));
    q_end(&q);
    if (end) put_line(f, end);
    json_decref(end);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* listing and series                                                                            */
/* ------------------------------------------------------------------------------------------ */
static void cpy(char *d, size_t n, const char *s) { snprintf(d, n, "%s", s ? s : ""); }

hb_status hb_store_runs(hb_store *s, const char *fp, hb_store_run **v, size_t *n, char *err, size_t errlen)
{
    *v = NULL;
    *n = 0;
    qres q;
    prm p[] = { PT(fp) };
    hb_status st = q_run(s,
                         fp ? "SELECT r.id, r.run_id, r.date, r.commit_id, r.fingerprint, r.host,"
                              " (SELECT count(*) FROM hb_case c WHERE c.run = r.id) FROM hb_run r WHERE r.fingerprint = $1"
                              " ORDER BY r.fingerprint, r.date, r.run_id"
                            : "SELECT r.id, r.run_id, r.date, r.commit_id, r.fingerprint, r.host,"
                              " (SELECT count(*) FROM hb_case c WHERE c.run = r.id) FROM hb_run r"
                              " ORDER BY r.fingerprint, r.date, r.run_id",
                         p, fp ? 1 : 0, &q, err, errlen);
    if (st) return st;
    size_t cap = 0;
    int rc;
    while ((rc = q_next(&q)) == 1) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            hb_store_run *nv = realloc(*v, cap * sizeof *nv);
            if (!nv) { q_end(&q); free(*v); *v = NULL; *n = 0; snprintf(err, errlen, "out of memory"); return HB_ENOMEM; }
            *v = nv;
        }
        hb_store_run *e = &(*v)[(*n)++];
        e->id = q_int(&q, 0);
        cpy(e->run_id, sizeof e->run_id, q_text(&q, 1));
        cpy(e->date, sizeof e->date, q_text(&q, 2));
        cpy(e->commit, sizeof e->commit, q_text(&q, 3));
        cpy(e->fingerprint, sizeof e->fingerprint, q_text(&q, 4));
        cpy(e->host, sizeof e->host, q_text(&q, 5));
        e->ncases = (size_t)q_int(&q, 6);
    }
    q_end(&q);
    if (rc < 0) return fail(err, errlen, "listing runs: %s", db_err(s));
    return HB_OK;
}

hb_status hb_store_machines(hb_store *s, char ***fps, char ***descs, size_t *n, char *err, size_t errlen)
{
    *fps = *descs = NULL;
    *n = 0;
    qres q;
    hb_status st = q_run(s, "SELECT fingerprint, description FROM hb_machine ORDER BY fingerprint", NULL, 0, &q, err, errlen);
    if (st) return st;
    size_t cap = 0;
    while (q_next(&q) == 1) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **a = realloc(*fps, cap * sizeof *a), **b = a ? realloc(*descs, cap * sizeof *b) : NULL;
            if (a) *fps = a;
            if (b) *descs = b;
            if (!a || !b) { q_end(&q); snprintf(err, errlen, "out of memory"); return HB_ENOMEM; }
        }
        (*fps)[*n] = strdup(q_text(&q, 0));
        (*descs)[*n] = strdup(q_text(&q, 1));
        (*n)++;
    }
    q_end(&q);
    return HB_OK;
}

void hb_series_free(hb_series *x)
{
    for (size_t i = 0; i < x->ncases && x->cases; i++) {
        free(x->cases[i].key); free(x->cases[i].op); free(x->cases[i].backend); free(x->cases[i].label);
    }
    free(x->cases);
    free(x->runs);
    free(x->median);
    memset(x, 0, sizeof *x);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

hb_status hb_store_series(hb_store *s, const char *fp, const char *metric, size_t last, hb_series *out, char *err,
                          size_t errlen)
{
    memset(out, 0, sizeof *out);
    hb_store_run *runs;
    size_t nr;
    hb_status st = hb_store_runs(s, fp, &runs, &nr, err, errlen);
    if (st) return st;
    if (!nr) { free(runs); snprintf(err, errlen, "no runs of machine %s in the store", fp ? fp : "(any)"); return HB_EINVAL; }
    size_t first = last && nr > last ? nr - last : 0;
    memmove(runs, runs + first, (nr - first) * sizeof *runs);
    nr -= first;
    out->runs = runs;
    out->nruns = nr;
    /* run id -> column: ids sorted with their column */
    int64_t(*idx)[2] = malloc(nr * sizeof *idx);
    if (!idx) { hb_series_free(out); snprintf(err, errlen, "out of memory"); return HB_ENOMEM; }
    for (size_t i = 0; i < nr; i++) { idx[i][0] = runs[i].id; idx[i][1] = (int64_t)i; }
    qsort(idx, nr, sizeof *idx, cmp_i64);
    int compute = metric && !strcmp(metric, "compute");
    prm p[] = { PT(fp), PT(runs[0].date), PT(runs[0].run_id) };
    qres q;
    /* the case identities seen in these runs */
    st = q_run(s,
               "SELECT k.id, k.key, k.occurrence, k.op, k.backend, k.label FROM hb_case_key k WHERE k.id IN"
               " (SELECT c.case_key FROM hb_case c JOIN hb_run r ON r.id = c.run WHERE r.fingerprint = $1"
               " AND (r.date > $2 OR (r.date = $2 AND r.run_id >= $3)))"
               " ORDER BY k.op, k.backend, k.key, k.occurrence",
               p, 3, &q, err, errlen);
    if (st) { free(idx); hb_series_free(out); return st; }
    size_t cap = 0;
    kmap kid = { 0 };
    while (q_next(&q) == 1) {
        if (out->ncases == cap) {
            cap = cap ? 2 * cap : 256;
            hb_store_case *a = realloc(out->cases, cap * sizeof *a);
            if (!a) { st = HB_ENOMEM; break; }
            out->cases = a;
        }
        hb_store_case *c = &out->cases[out->ncases];
        c->id = q_int(&q, 0);
        c->key = strdup(q_text(&q, 1));
        c->occurrence = (int)q_int(&q, 2);
        c->op = strdup(q_text(&q, 3));
        c->backend = strdup(q_text(&q, 4));
        c->label = strdup(q_text(&q, 5));
        char ks[32];
        snprintf(ks, sizeof ks, "%lld", (long long)c->id);
        if (kmap_put(&kid, ks, (int64_t)out->ncases)) st = HB_ENOMEM;
        out->ncases++;
    }
    q_end(&q);
    if (st || !out->ncases || !(out->median = malloc(out->ncases * nr * sizeof(double)))) {
        if (!st && !out->ncases) { snprintf(err, errlen, "no cases in the runs of machine %s", fp); st = HB_EINVAL; }
        else { snprintf(err, errlen, "out of memory"); st = HB_ENOMEM; }
        kmap_free(&kid); free(idx); hb_series_free(out);
        return st;
    }
    for (size_t i = 0; i < out->ncases * nr; i++) out->median[i] = NAN;
    st = q_run(s,
               compute ? "SELECT c.run, c.case_key, c.median_compute FROM hb_case c JOIN hb_run r ON r.id = c.run"
                         " WHERE r.fingerprint = $1 AND (r.date > $2 OR (r.date = $2 AND r.run_id >= $3)) AND c.status = 'ok'"
                       : "SELECT c.run, c.case_key, c.median_total FROM hb_case c JOIN hb_run r ON r.id = c.run"
                         " WHERE r.fingerprint = $1 AND (r.date > $2 OR (r.date = $2 AND r.run_id >= $3)) AND c.status = 'ok'",
               p, 3, &q, err, errlen);
    if (st) { kmap_free(&kid); free(idx); hb_series_free(out); return st; }
    int rc;
    int64_t last_run = -1, col = -1, last_key = -1, row = -1;
    while ((rc = q_next(&q)) == 1) {
        int64_t run = q_int(&q, 0), key = q_int(&q, 1);
        if (run != last_run) {
            int64_t probe[2] = { run, 0 };
            int64_t(*hit)[2] = bsearch(probe, idx, nr, sizeof *idx, cmp_i64);
            col = hit ? (*hit)[1] : -1;
            last_run = run;
        }
        if (key != last_key) {
            char ks[32];
            snprintf(ks, sizeof ks, "%lld", (long long)key);
            if (!kmap_get(&kid, ks, &row)) row = -1;
            last_key = key;
        }
        if (col >= 0 && row >= 0) out->median[(size_t)row * nr + (size_t)col] = q_real(&q, 2);
    }
    if (rc < 0) st = fail(err, errlen, "reading the series: %s", db_err(s));
    q_end(&q);
    kmap_free(&kid);
    free(idx);
    if (st) hb_series_free(out);
    return st;
}
