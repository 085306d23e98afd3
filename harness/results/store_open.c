/* store_open.c - the history store opened and closed (results/store.h): the engine chosen by the
 * store's name, the schema and its migrations, transactions. */
#include "results/store_db.h"
#include "results/machine.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* Version 3: every stored run's machine fingerprint computed again from its stored meta and backend
 * records with today's definition (results/machine.c: the OpenCL device's memory, which PoCL reports
 * as a share of the memory free at that moment, and other sizes and counts that change from run to run
 * are no longer part of it; issue 32), so that one machine's runs form one series again; the machines
 * no run names any more are removed. Runs whose records give the same fingerprint as before keep it. */
static hb_status v3_refingerprint(hb_store *s, char *err, size_t errlen)
{
    qres q;
    hb_status st = hb_q_run(s, "SELECT id, meta, backends, fingerprint FROM hb_run", NULL, 0, &q, err, errlen);
    if (st) return st;
    struct moved { int64_t id; char fp[24]; } *mv = NULL;
    size_t n = 0, cap = 0;
    kmap seen = { 0 };
    int rc;
    while (!st && (rc = hb_q_next(&q)) == 1) {
        json_t *meta = json_loads(hb_q_text(&q, 1) ? hb_q_text(&q, 1) : "{}", 0, NULL);
        json_t *bk = json_loads(hb_q_text(&q, 2) ? hb_q_text(&q, 2) : "[]", 0, NULL);
        char fp[24], desc[4096];
        hb_machine_fingerprint(meta, bk, desc, sizeof desc, fp, 17);
        json_decref(meta);
        json_decref(bk);
        const char *old = hb_q_text(&q, 3);
        if (old && !strcmp(old, fp)) continue;
        int64_t one;
        if (!hb_kmap_get(&seen, fp, &one)) {
            prm pm[] = { PT(fp), PT(desc) };
            st = hb_q_exec(s, "INSERT INTO hb_machine(fingerprint, description) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                           pm, 2, err, errlen);
            if (!st && hb_kmap_put(&seen, fp, 1)) st = hb_store_fail(err, errlen, "out of memory");
        }
        if (!st && n == cap) {
            cap = cap ? 2 * cap : 256;
            struct moved *m2 = realloc(mv, cap * sizeof *m2);
            if (!m2) st = hb_store_fail(err, errlen, "out of memory");
            else mv = m2;
        }
        if (!st) {
            mv[n].id = hb_q_int(&q, 0);
            snprintf(mv[n].fp, sizeof mv[n].fp, "%s", fp);
            n++;
        }
    }
    if (!st && rc < 0) st = hb_store_fail(err, errlen, "reading the runs: %s", hb_store_db_err(s));
    hb_q_end(&q);
    for (size_t i = 0; !st && i < n; i++) {
        prm pu[] = { PT(mv[i].fp), PI(mv[i].id) };
        st = hb_q_exec(s, "UPDATE hb_run SET fingerprint = $1 WHERE id = $2", pu, 2, err, errlen);
    }
    if (!st)
        st = hb_q_script(s, "DELETE FROM hb_machine WHERE fingerprint NOT IN (SELECT fingerprint FROM hb_run);"
                            "UPDATE hb_schema SET version = 3;", err, errlen);
    free(mv);
    hb_kmap_free(&seen);
    return st;
}

static int schema_version(hb_store *s)
{
    qres r;
    char e[256];
    const char *probe = s->pg ? "SELECT count(*) FROM pg_tables WHERE tablename = 'hb_schema'"
                              : "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'hb_schema'";
    if (hb_q_run(s, probe, NULL, 0, &r, e, sizeof e)) return -1;
    int have = hb_q_next(&r) == 1 && hb_q_int(&r, 0) > 0;
    hb_q_end(&r);
    if (!have) return 0;
    if (hb_q_run(s, "SELECT max(version) FROM hb_schema", NULL, 0, &r, e, sizeof e)) return -1;
    int v = hb_q_next(&r) == 1 ? (int)hb_q_int(&r, 0) : -1;
    hb_q_end(&r);
    return v;
}

int hb_store_schema_version(hb_store *s) { return schema_version(s); }

/* Bring the store to version `target` (<= HB_STORE_SCHEMA), each step in its own transaction. */
static hb_status migrate(hb_store *s, int target, char *err, size_t errlen)
{
    int v = schema_version(s);
    if (v < 0) return hb_store_fail(err, errlen, "cannot read the store's schema version: %s", hb_store_db_err(s));
    if (v > HB_STORE_SCHEMA)
        return hb_store_fail(err, errlen, "the store has schema version %d; this hybench knows up to %d (update hybench)", v,
                    HB_STORE_SCHEMA);
    while (v < target) {
        const char *step = v == 0 ? (s->pg ? v1_pg : v1_sqlite) : v == 1 ? v2_both : NULL;
        hb_status st = hb_q_script(s, "BEGIN", err, errlen);
        if (!st) st = step ? hb_q_script(s, step, err, errlen) : v3_refingerprint(s, err, errlen);
        if (!st) st = hb_q_script(s, "COMMIT", err, errlen);
        if (st) {
            char e2[64];
            hb_q_script(s, "ROLLBACK", e2, sizeof e2);
            size_t l = strlen(err);
            snprintf(err + l, errlen - l, " (migrating the store from schema %d)", v);
            return st;
        }
        v++;
    }
    return HB_OK;
}

/* Open at a given schema version: the tests build a version-1 store and check that a plain open
 * migrates it. Not in store.h. */
hb_status hb_store_open_at(const char *url, int target, hb_store **out, char *err, size_t errlen);
hb_status hb_store_open_at(const char *url, int target, hb_store **out, char *err, size_t errlen)
{
    *out = NULL;
    hb_store *s = calloc(1, sizeof *s);
    if (!s) return hb_store_fail(err, errlen, "out of memory");
    char name[1024]; /* the store in messages: never its password */
    hb_store_safe_name(url, name, sizeof name);
    if (hb_store_is_postgres(url)) {
        s->pg = 1;
        char *em = NULL;
        PQconninfoOption *o = PQconninfoParse(url, &em);
        if (em) PQfreemem(em); /* not shown: it may quote the password */
        if (!o) {
            free(s);
            return hb_store_fail(err, errlen, "cannot connect to %s: libpq cannot parse the connection string", name);
        }
        PQconninfoFree(o);
        s->pc = PQconnectdb(url);
        if (PQstatus(s->pc) != CONNECTION_OK) {
            char why[1024];
            snprintf(why, sizeof why, "%s", PQerrorMessage(s->pc));
            hb_store_scrub(url, why, sizeof why);
            for (size_t n = strlen(why); n && (why[n - 1] == '\n' || why[n - 1] == ' '); n--) why[n - 1] = 0;
            hb_store_fail(err, errlen, "cannot connect to %s: %s", name, why);
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
            hb_store_fail(err, errlen, "cannot open the store %s: %s", name, s->db ? sqlite3_errmsg(s->db) : "out of memory");
            sqlite3_close(s->db);
            free(s);
            return HB_EDEVICE;
        }
        sqlite3_busy_timeout(s->db, 10000); /* two nightly jobs on one file wait for each other */
        char e[256];
        if (hb_q_script(s, "PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", e,
                     sizeof e)) {
            hb_store_fail(err, errlen, "%s: not a SQLite store: %s", name, e);
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
    hb_kmap_free(&s->keys);
    free(s);
}

const char *hb_store_engine(const hb_store *s) { return s->pg ? "postgresql" : "sqlite"; }

void hb_store_set_lean(hb_store *s, int lean) { s->lean = lean; }

hb_status hb_store_begin(hb_store *s, char *err, size_t errlen)
{
    hb_status st = hb_q_script(s, "BEGIN", err, errlen);
    if (!st) s->in_tx = 1;
    return st;
}
hb_status hb_store_commit(hb_store *s, char *err, size_t errlen)
{
    s->in_tx = 0;
    return hb_q_script(s, "COMMIT", err, errlen);
}
