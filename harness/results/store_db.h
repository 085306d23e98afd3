/*
 * store_db.h - inside the history store only (store.c, store_open.c, store_db.c; results/store.h is
 * its face): the open store's state and one small query layer over SQLite (sqlite3) and PostgreSQL
 * (libpq). SQL is written once with $1, $2, ... parameters in order of appearance, which SQLite binds
 * by position and PostgreSQL by number. Also a string -> id map (the case keys of a store).
 */
#ifndef HB_STORE_DB_H
#define HB_STORE_DB_H
#include "core/strmap.h"
#include "results/store.h"
#include <libpq-fe.h>
#include <math.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* A query parameter: NULL, a 64-bit integer, a double, a borrowed NUL-terminated text or a borrowed
 * BLOB of bl bytes (PostgreSQL: bytea, sent in binary). PR makes a non-finite double NULL; PT and PB
 * make a NULL pointer NULL. */
typedef enum { P_NULL, P_INT, P_REAL, P_TEXT, P_BLOB } ptype;
typedef struct prm { ptype t; int64_t i; double d; const char *s; const void *b; size_t bl; } prm;
#define PI(v) ((prm){ .t = P_INT, .i = (v) })
#define PR(v) (isfinite(v) ? (prm){ .t = P_REAL, .d = (v) } : (prm){ .t = P_NULL })
static inline prm pt_(const char *v) { return v ? (prm){ .t = P_TEXT, .s = v } : (prm){ .t = P_NULL }; }
#define PT(v) pt_(v)
#define PB(p, n) ((p) ? (prm){ .t = P_BLOB, .b = (p), .bl = (n) } : (prm){ .t = P_NULL })

/* A string -> int64 map: core/strmap.h's map (keys owned by the map), its values the int64's bits. */
typedef hb_strmap kmap;
/* Set k (copied) to v. 0, or -1 out of memory. */
int hb_kmap_put(kmap *m, const char *k, int64_t v);
/* 1 and *v when k is there, else 0. */
int hb_kmap_get(const kmap *m, const char *k, int64_t *v);
/* Free every key and the tables; m is empty after. */
void hb_kmap_free(kmap *m);

/* a cache of prepared SQLite statements, keyed by the SQL text's address (each query is a literal) */
#define NCACHE 24

/* The open store (hb_store_open, store_open.c). */
struct hb_store {
    int pg;          /* 1: PostgreSQL (pc), 0: SQLite (db) */
    sqlite3 *db;
    PGconn *pc;
    int in_tx;       /* inside hb_store_begin .. hb_store_commit */
    const char *sqlk[NCACHE];
    sqlite3_stmt *sqls[NCACHE];
    kmap keys;       /* "key\x1foccurrence" -> hb_case_key.id, filled on first import */
    int keys_loaded;
    int lean;        /* hb_store_set_lean */
};

/* The rows of one query: read with hb_q_next and the column readers, then hb_q_end. */
typedef struct qres {
    hb_store *s;
    sqlite3_stmt *st;
    PGresult *pr;
    int row, nrows;
    unsigned char *blob; /* PQunescapeBytea buffer of the last hb_q_blob */
} qres;

/* The message fmt... into err (size errlen); returns HB_EDEVICE (every store error is one). */
hb_status hb_store_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The engine's last error message (borrowed, valid until the next call on s). */
const char *hb_store_db_err(hb_store *s);
/* Run sql (a string literal: SQLite statements are cached by its address) with parameters p[np]
 * (np <= 32; borrowed until hb_q_end); rows are read with hb_q_next. Returns HB_OK or HB_EDEVICE with
 * "SQLite: ..."/"PostgreSQL: ..." and the start of the SQL in err. */
hb_status hb_q_run(hb_store *s, const char *sql, const prm *p, int np, qres *r, char *err, size_t errlen);
/* 1: a row is there; 0: no more rows; -1: error (message from hb_store_db_err). */
int hb_q_next(qres *r);
/* Column c (0-based) of the current row: NULL?, as an integer (0 when NULL), a double (NAN when
 * NULL), text (NULL when NULL; borrowed until the next row) or a BLOB (*len bytes; NULL when NULL;
 * borrowed until the next hb_q_blob or hb_q_end). */
int hb_q_null(qres *r, int c);
int64_t hb_q_int(qres *r, int c);
double hb_q_real(qres *r, int c);
const char *hb_q_text(qres *r, int c);
const void *hb_q_blob(qres *r, int c, size_t *len);
/* Release r's rows (r is zeroed). */
void hb_q_end(qres *r);
/* A statement whose rows are not needed. HB_OK or HB_EDEVICE (err). */
hb_status hb_q_exec(hb_store *s, const char *sql, const prm *p, int np, char *err, size_t errlen);
/* Several statements without parameters (schema scripts, BEGIN, COMMIT). HB_OK or HB_EDEVICE (err). */
hb_status hb_q_script(hb_store *s, const char *sql, char *err, size_t errlen);
#endif
