/* store_db.c - the history store's query layer over SQLite and PostgreSQL and its string -> id map
 * (results/store_db.h). */
#include "results/store_db.h"
#include "core/rstats.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hb_status hb_store_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return HB_EDEVICE;
}

const char *hb_store_db_err(hb_store *s)
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
hb_status hb_q_run(hb_store *s, const char *sql, const prm *p, int np, qres *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    r->row = -1;
    if (!s->pg) {
        sqlite3_stmt *st = sq_prepare(s, sql);
        if (!st) return hb_store_fail(err, errlen, "SQLite: %s (in: %.80s)", hb_store_db_err(s), sql);
        for (int i = 0; i < np; i++) {
            int rc;
            switch (p[i].t) {
            case P_INT: rc = sqlite3_bind_int64(st, i + 1, p[i].i); break;
            case P_REAL: rc = sqlite3_bind_double(st, i + 1, p[i].d); break;
            case P_TEXT: rc = sqlite3_bind_text(st, i + 1, p[i].s, -1, SQLITE_STATIC); break;
            case P_BLOB: rc = sqlite3_bind_blob(st, i + 1, p[i].b, (int)p[i].bl, SQLITE_STATIC); break;
            default: rc = sqlite3_bind_null(st, i + 1);
            }
            if (rc != SQLITE_OK) return hb_store_fail(err, errlen, "SQLite: bind %d: %s", i + 1, hb_store_db_err(s));
        }
        r->st = st;
        return HB_OK;
    }
    const char *vals[32] = { 0 };
    int lens[32] = { 0 }, fmts[32] = { 0 };
    char num[32][32];
    if (np > 32) return hb_store_fail(err, errlen, "too many parameters");
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
        hb_store_fail(err, errlen, "PostgreSQL: %s (in: %.80s)", PQresultErrorMessage(r->pr), sql);
        PQclear(r->pr);
        r->pr = NULL;
        return HB_EDEVICE;
    }
    r->nrows = PQntuples(r->pr);
    return HB_OK;
}

/* 1: a row is there; 0: no more rows; -1: error (message from db_err). */
int hb_q_next(qres *r)
{
    if (r->st) {
        int rc = sqlite3_step(r->st);
        return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
    }
    if (!r->pr) return 0;
    return ++r->row < r->nrows ? 1 : 0;
}

int hb_q_null(qres *r, int c)
{
    return r->st ? sqlite3_column_type(r->st, c) == SQLITE_NULL : PQgetisnull(r->pr, r->row, c);
}
int64_t hb_q_int(qres *r, int c)
{
    return r->st ? sqlite3_column_int64(r->st, c) : hb_q_null(r, c) ? 0 : strtoll(PQgetvalue(r->pr, r->row, c), NULL, 10);
}
double hb_q_real(qres *r, int c)
{
    if (hb_q_null(r, c)) return NAN;
    return r->st ? sqlite3_column_double(r->st, c) : strtod(PQgetvalue(r->pr, r->row, c), NULL);
}
const char *hb_q_text(qres *r, int c)
{
    if (hb_q_null(r, c)) return NULL;
    return r->st ? (const char *)sqlite3_column_text(r->st, c) : PQgetvalue(r->pr, r->row, c);
}
const void *hb_q_blob(qres *r, int c, size_t *len)
{
    *len = 0;
    if (hb_q_null(r, c)) return NULL;
    if (r->st) {
        *len = (size_t)sqlite3_column_bytes(r->st, c);
        return sqlite3_column_blob(r->st, c);
    }
    if (r->blob) { PQfreemem(r->blob); r->blob = NULL; }
    r->blob = PQunescapeBytea((const unsigned char *)PQgetvalue(r->pr, r->row, c), len);
    return r->blob;
}
void hb_q_end(qres *r)
{
    if (r->st) sqlite3_reset(r->st);
    if (r->pr) PQclear(r->pr);
    if (r->blob) PQfreemem(r->blob);
    memset(r, 0, sizeof *r);
}

/* A statement that returns no rows (or whose rows are not needed). */
hb_status hb_q_exec(hb_store *s, const char *sql, const prm *p, int np, char *err, size_t errlen)
{
    qres r;
    hb_status st = hb_q_run(s, sql, p, np, &r, err, errlen);
    if (st) return st;
    int rc;
    while ((rc = hb_q_next(&r)) == 1) {}
    if (rc < 0) st = hb_store_fail(err, errlen, "SQLite: %s (in: %.80s)", hb_store_db_err(s), sql);
    hb_q_end(&r);
    return st;
}

/* Several statements without parameters (schema scripts). */
hb_status hb_q_script(hb_store *s, const char *sql, char *err, size_t errlen)
{
    if (!s->pg) {
        char *m = NULL;
        if (sqlite3_exec(s->db, sql, NULL, NULL, &m) != SQLITE_OK) {
            hb_store_fail(err, errlen, "SQLite: %s", m ? m : hb_store_db_err(s));
            sqlite3_free(m);
            return HB_EDEVICE;
        }
        return HB_OK;
    }
    PGresult *pr = PQexec(s->pc, sql);
    ExecStatusType es = PQresultStatus(pr);
    hb_status st = HB_OK;
    if (es != PGRES_COMMAND_OK && es != PGRES_TUPLES_OK) st = hb_store_fail(err, errlen, "PostgreSQL: %s", PQresultErrorMessage(pr));
    PQclear(pr);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* a string -> id map                                                                            */
/* ------------------------------------------------------------------------------------------ */
int hb_kmap_put(kmap *m, const char *k, int64_t v) { return hb_strmap_set(m, k, (size_t)v) == HB_OK ? 0 : -1; }

int hb_kmap_get(const kmap *m, const char *k, int64_t *v)
{
    if (!hb_strmap_has(m, k)) return 0;
    *v = (int64_t)hb_strmap_get(m, k, 0);
    return 1;
}

void hb_kmap_free(kmap *m) { hb_strmap_free(m); }
