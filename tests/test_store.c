/* test_store.c - the history store (results/store.h) on SQLite and on PostgreSQL: import and export
 * of a real results file (tests/data/cpu_small.jsonl), duplicate case keys, the fingerprint (one
 * machine, one series: the migration to schema 3 too), two machines in one store, schema migration,
 * a libpq key=value connection string and a service file, bad input. The PostgreSQL tests run on a throwaway server
 * that this test starts (initdb into a temporary folder, pg_ctl on a Unix socket, as the user
 * postgres when run as root) and are skipped, with the reason printed, where it cannot start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <glob.h>
#include <libpq-fe.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/stats.h"
#include "results/store.h"

hb_status hb_store_open_at(const char *url, int target, hb_store **out, char *err, size_t errlen); /* store.c */

#define assert_near(a, b, eps) do { double a_ = (a), b_ = (b); \
    if (!(fabs(a_ - b_) <= (eps))) fail_msg("%s = %.17g, expected %.17g +- %g", #a, a_, b_, (double)(eps)); } while (0)

static char tmpdir[256];
static char pgdir[256], pg_reason[512];
static int pg_up, dbseq;

/* ---- the throwaway PostgreSQL server ---- */
static int sh(const char *cmd) { int rc = system(cmd); return rc == -1 ? -1 : WEXITSTATUS(rc); }

static int pg_start(void)
{
    glob_t g;
    if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) != 0 || g.gl_pathc == 0) {
        snprintf(pg_reason, sizeof pg_reason, "no /usr/lib/postgresql/*/bin/initdb (Debian package postgresql)");
        return -1;
    }
    char bin[200];
    snprintf(bin, sizeof bin, "%s", g.gl_pathv[g.gl_pathc - 1]);
    globfree(&g);
    *strrchr(bin, '/') = 0;
    snprintf(pgdir, sizeof pgdir, "/tmp/hb_pgtest_XXXXXX");
    if (!mkdtemp(pgdir)) { snprintf(pg_reason, sizeof pg_reason, "mkdtemp failed"); return -1; }
    chmod(pgdir, 0777);
    char as[64] = "";
    if (geteuid() == 0) {
        if (sh("id postgres >/dev/null 2>&1")) { snprintf(pg_reason, sizeof pg_reason, "running as root and no user postgres"); return -1; }
        snprintf(as, sizeof as, "runuser -u postgres -- ");
        char c[400];
        snprintf(c, sizeof c, "chown postgres %s", pgdir);
        sh(c);
    }
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "%s%s/initdb -D %s/data -A trust -U postgres >%s/initdb.log 2>&1", as, bin, pgdir, pgdir);
    if (sh(cmd)) { snprintf(pg_reason, sizeof pg_reason, "initdb failed (see %s/initdb.log)", pgdir); return -1; }
    snprintf(cmd, sizeof cmd,
             "%s%s/pg_ctl -D %s/data -l %s/server.log -w -t 30 -o \"-k %s -c listen_addresses='' -c fsync=off\" start >/dev/null 2>&1",
             as, bin, pgdir, pgdir, pgdir);
    if (sh(cmd)) { snprintf(pg_reason, sizeof pg_reason, "pg_ctl start failed (see %s/server.log)", pgdir); return -1; }
    return 0;
}

static void pg_stop(void)
{
    if (!pgdir[0]) return;
    glob_t g;
    char cmd[1400];
    if (glob("/usr/lib/postgresql/*/bin/pg_ctl", 0, NULL, &g) == 0 && g.gl_pathc) {
        snprintf(cmd, sizeof cmd, "%s%s -D %s/data -m immediate stop >/dev/null 2>&1", geteuid() == 0 ? "runuser -u postgres -- " : "",
                 g.gl_pathv[g.gl_pathc - 1], pgdir);
        sh(cmd);
        globfree(&g);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", pgdir);
    sh(cmd);
}

/* A fresh database on the server, as a URL. */
static void pg_url(char *url, size_t len)
{
    char name[32], admin[400];
    snprintf(name, sizeof name, "hbtest%d", ++dbseq);
    snprintf(admin, sizeof admin, "postgresql:///postgres?host=%s&user=postgres", pgdir);
    PGconn *c = PQconnectdb(admin);
    assert_int_equal(PQstatus(c), CONNECTION_OK);
    char sql[64];
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
    PGresult *r = PQexec(c, sql);
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    PQfinish(c);
    snprintf(url, len, "postgresql:///%s?host=%s&user=postgres", name, pgdir);
}

static void sqlite_url(char *url, size_t len)
{
    snprintf(url, len, "%s/s%d/history.db", tmpdir, ++dbseq);
}

/* state: 0 SQLite, 1 PostgreSQL */
static int new_url(void **state, char *url, size_t len)
{
    if (*(int *)*state) {
        if (!pg_up) { print_message("SKIP (PostgreSQL): %s\n", pg_reason); return 0; }
        pg_url(url, len);
    } else sqlite_url(url, len);
    return 1;
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/hb_storetest_XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    pg_up = pg_start() == 0;
    if (!pg_up) print_message("PostgreSQL tests will be skipped: %s\n", pg_reason);
    return 0;
}
static int group_teardown(void **state)
{
    (void)state;
    pg_stop();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    sh(cmd);
    return 0;
}

/* ---- helpers ---- */
static hb_run load(const char *path)
{
    hb_run r;
    char err[512];
    hb_status st = hb_run_load(path, &r, err, sizeof err);
    if (st) fail_msg("%s", err);
    return r;
}

static json_t *find_case(const hb_run *r, const char *key, int occ)
{
    size_t i;
    json_t *c;
    json_array_foreach(r->cases, i, c) {
        const char *k = hb_rec_str(c, "key");
        if (k && !strcmp(k, key) && occ-- == 0) return c;
    }
    return NULL;
}

static hb_run export_to(hb_store *s, const char *run_id, const char *name)
{
    char path[400], err[512];
    snprintf(path, sizeof path, "%s/%s.jsonl", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    memset(err, 0, sizeof err);
    hb_status st = hb_store_export(s, run_id, f, err, sizeof err);
    fclose(f);
    if (st) fail_msg("export: %s", err);
    return load(path);
}

/* ---- tests ---- */

/* A real run in and out: every case back with its status, statistics (median and CI exact; the
 * rest within float32), samples (float32), identity fields and other fields. */
static void test_roundtrip(void **state)
{
    char url[512], err[512];
    if (!new_url(state, url, sizeof url)) { skip(); return; }
    hb_store *s;
    if (hb_store_open(url, &s, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(hb_store_schema_version(s), HB_STORE_SCHEMA);
    hb_run a = load("tests/data/cpu_small.jsonl");
    int dup = -1;
    if (hb_store_import(s, &a, &dup, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(dup, 0);
    if (hb_store_import(s, &a, &dup, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(dup, 1); /* the same run again: left as it is */
    hb_run b = export_to(s, hb_run_meta(&a, "run_id"), *(int *)*state ? "rt_pg" : "rt_sqlite");
    assert_int_equal(json_array_size(b.cases), json_array_size(a.cases));
    assert_string_equal(hb_run_meta(&b, "run_id"), hb_run_meta(&a, "run_id"));
    assert_int_equal(json_array_size(b.backends), json_array_size(a.backends));
    assert_non_null(b.end);
    size_t i, nsamp = 0;
    json_t *c;
    json_array_foreach(a.cases, i, c) {
        const char *key = hb_rec_str(c, "key");
        int occ = 0;
        for (size_t j = 0; j < i; j++) occ += !strcmp(hb_rec_str(json_array_get(a.cases, j), "key"), key);
        json_t *d = find_case(&b, key, occ);
        assert_non_null(d);
        assert_string_equal(hb_rec_str(d, "status"), hb_rec_str(c, "status"));
        assert_string_equal(hb_rec_str(d, "backend"), hb_rec_str(c, "backend"));
        assert_string_equal(hb_rec_str(d, "shape_str"), hb_rec_str(c, "shape_str"));
        assert_true(json_equal(json_object_get(d, "shape"), json_object_get(c, "shape")));
        for (int p = 0; p < HB_PH_COUNT; p++) {
            double x = hb_case_phase(c, hb_phase_names[p], "median"), y = hb_case_phase(d, hb_phase_names[p], "median");
            if (isnan(x)) { assert_true(isnan(y)); continue; }
            assert_near(y, x, 0);
        }
        for (int m = 0; m < 2; m++) {
            const char *ph = m ? "compute" : "total";
            static const char *const st[] = { "ci_lo", "ci_hi", "n" };
            for (int k = 0; k < 3; k++) {
                double x = hb_case_phase(c, ph, st[k]), y = hb_case_phase(d, ph, st[k]);
                if (isnan(x)) continue;
                assert_near(y, x, 0);
            }
            static const char *const rel[] = { "mean", "min", "max", "p10", "p90", "stddev" };
            for (int k = 0; k < 6; k++) {
                double x = hb_case_phase(c, ph, rel[k]), y = hb_case_phase(d, ph, rel[k]);
                if (isnan(x)) continue;
                assert_near(y, x, 2e-5 * fmax(fabs(x), fabs(hb_case_phase(c, ph, "median"))) + 1e-12);
            }
            json_t *sa = json_object_get(json_object_get(c, "samples"), ph), *sb = json_object_get(json_object_get(d, "samples"), ph);
            assert_int_equal(json_array_size(sb), json_array_size(sa));
            for (size_t k = 0; k < json_array_size(sa); k++) {
                double x = json_number_value(json_array_get(sa, k)), y = json_number_value(json_array_get(sb, k));
                assert_near(y, x, 6e-8 * fabs(x)); /* float32: half an ulp */
                nsamp++;
            }
        }
        /* a field kept whole in the record */
        if (json_object_get(c, "rel_err")) assert_true(json_equal(json_object_get(d, "rel_err"), json_object_get(c, "rel_err")) ||
                                                     fabs(json_number_value(json_object_get(d, "rel_err")) - json_number_value(json_object_get(c, "rel_err"))) <= 1e-9 * fabs(json_number_value(json_object_get(c, "rel_err"))));
    }
    assert_true(nsamp > 1000);
    /* an unknown run */
    FILE *f = fopen("/dev/null", "w");
    assert_int_equal(hb_store_export(s, "no-such-run", f, err, sizeof err), HB_EINVAL);
    fclose(f);
    assert_non_null(strstr(err, "no-such-run"));
    hb_run_free(&a);
    hb_run_free(&b);
    hb_store_close(s);
}

/* One key twice in a run: stored as occurrences 0 and 1, both back, in order. */
static void test_duplicate_keys(void **state)
{
    char url[512], err[512];
    if (!new_url(state, url, sizeof url)) { skip(); return; }
    hb_store *s;
    if (hb_store_open(url, &s, err, sizeof err)) fail_msg("%s", err);
    hb_run a = load("tests/data/cpu_small.jsonl");
    json_t *meta = a.meta;
    json_object_set_new(meta, "run_id", json_string("dup-run"));
    /* the first ok case again, with its median doubled */
    json_t *c0 = NULL, *c;
    size_t i;
    json_array_foreach(a.cases, i, c) if (!strcmp(hb_rec_str(c, "status"), "ok")) { c0 = c; break; }
    assert_non_null(c0);
    json_t *c1 = json_deep_copy(c0);
    json_t *tot = json_object_get(json_object_get(c1, "phases"), "total");
    double m0 = json_number_value(json_object_get(tot, "median"));
    json_object_set_new(tot, "median", json_real(2 * m0));
    json_array_append_new(a.cases, c1);
    int dup;
    if (hb_store_import(s, &a, &dup, err, sizeof err)) fail_msg("%s", err);
    hb_run b = export_to(s, "dup-run", *(int *)*state ? "dup_pg" : "dup_sqlite");
    const char *key = hb_rec_str(c0, "key");
    json_t *d0 = find_case(&b, key, 0), *d1 = find_case(&b, key, 1);
    assert_non_null(d0);
    assert_non_null(d1);
    assert_null(find_case(&b, key, 2));
    assert_near(hb_case_phase(d0, "total", "median"), m0, 0);
    assert_near(hb_case_phase(d1, "total", "median"), 2 * m0, 0);
    /* the series has two identities for it */
    hb_series x;
    char fp[24], desc[4096];
    hb_store_fingerprint(&a, fp, desc, sizeof desc);
    if (hb_store_series(s, fp, "total", 0, &x, err, sizeof err)) fail_msg("%s", err);
    int seen = 0;
    for (size_t k = 0; k < x.ncases; k++)
        if (!strcmp(x.cases[k].key, key)) {
            assert_int_equal(x.cases[k].occurrence, seen);
            assert_near(x.median[k * x.nruns], seen ? 2 * m0 : m0, 0);
            seen++;
        }
    assert_int_equal(seen, 2);
    hb_series_free(&x);
    hb_run_free(&a);
    hb_run_free(&b);
    hb_store_close(s);
}

/* The fingerprint ignores the host name, date and load, and changes with the CPU or a driver version. */
static void test_fingerprint(void **state)
{
    (void)state;
    hb_run a = load("tests/data/cpu_small.jsonl");
    char f0[24], f1[24], f2[24], f3[24], d[4096];
    hb_store_fingerprint(&a, f0, d, sizeof d);
    assert_int_equal(strlen(f0), 16);
    assert_null(strstr(d, hb_run_meta(&a, "host")));
    json_object_set_new(a.meta, "host", json_string("ci-runner-7f3a"));
    json_object_set_new(a.meta, "date", json_string("2030-01-01T00:00:00Z"));
    json_object_set_new(a.meta, "load_avg", json_pack("[f,f,f]", 9.0, 9.0, 9.0));
    hb_store_fingerprint(&a, f1, d, sizeof d);
    assert_string_equal(f1, f0);
    json_object_set_new(json_object_get(a.meta, "cpu"), "model", json_string("Other CPU"));
    hb_store_fingerprint(&a, f2, d, sizeof d);
    assert_string_not_equal(f2, f0);
    /* a backend's driver version */
    json_t *b;
    size_t i;
    int changed = 0;
    json_array_foreach(a.backends, i, b) {
        json_t *info = json_object_get(b, "info");
        if (json_is_true(json_object_get(b, "available")) && json_is_object(info)) {
            json_object_set_new(info, "driver_version", json_string("999.1"));
            changed = 1;
            break;
        }
    }
    assert_true(changed);
    hb_store_fingerprint(&a, f3, d, sizeof d);
    assert_string_not_equal(f3, f2);
    hb_run_free(&a);
}

/* Two machines' nights interleaved in one store, each night from a new host name: the series of
 * each fingerprint holds its own runs only, oldest first. */
static void test_two_machines(void **state)
{
    char url[512], err[512];
    if (!new_url(state, url, sizeof url)) { skip(); return; }
    hb_store *s;
    if (hb_store_open(url, &s, err, sizeof err)) fail_msg("%s", err);
    char fpm[2][24];
    for (int night = 0; night < 4; night++)
        for (int m = 0; m < 2; m++) {
            hb_run a = load("tests/data/cpu_small.jsonl");
            char id[64], date[64], host[64];
            snprintf(id, sizeof id, "night%d-m%d", night, m);
            snprintf(date, sizeof date, "2026-01-0%dT02:00:00Z", night + 1);
            snprintf(host, sizeof host, "runner-%d%d", night, m);
            json_object_set_new(a.meta, "run_id", json_string(id));
            json_object_set_new(a.meta, "date", json_string(date));
            json_object_set_new(a.meta, "host", json_string(host));
            if (m) json_object_set_new(json_object_get(a.meta, "cpu"), "model", json_string("Machine B CPU"));
            /* scale machine m's times by (1 + m) * (1 + night / 10) */
            size_t i;
            json_t *c;
            json_array_foreach(a.cases, i, c) {
                json_t *t = json_object_get(json_object_get(c, "phases"), "total");
                if (t) json_object_set_new(t, "median", json_real(1e-3 * (1 + m) * (1 + night / 10.0)));
            }
            char d[4096];
            hb_store_fingerprint(&a, fpm[m], d, sizeof d);
            int dup;
            if (hb_store_import(s, &a, &dup, err, sizeof err)) fail_msg("%s", err);
            hb_run_free(&a);
        }
    assert_string_not_equal(fpm[0], fpm[1]);
    char **fps, **descs;
    size_t nm;
    if (hb_store_machines(s, &fps, &descs, &nm, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(nm, 2);
    for (size_t i = 0; i < nm; i++) { free(fps[i]); free(descs[i]); }
    free(fps);
    free(descs);
    for (int m = 0; m < 2; m++) {
        hb_series x;
        if (hb_store_series(s, fpm[m], "total", 0, &x, err, sizeof err)) fail_msg("%s", err);
        assert_int_equal(x.nruns, 4);
        for (size_t r = 0; r < 4; r++) {
            char want[32];
            snprintf(want, sizeof want, "night%zu-m%d", r, m);
            assert_string_equal(x.runs[r].run_id, want);
            assert_string_equal(x.runs[r].fingerprint, fpm[m]);
        }
        int okcase = 0;
        for (size_t k = 0; k < x.ncases; k++) {
            if (isnan(x.median[k * 4])) continue;
            okcase++;
            for (size_t r = 0; r < 4; r++) assert_near(x.median[k * 4 + r], 1e-3 * (1 + m) * (1 + (double)r / 10), 1e-15);
        }
        assert_true(okcase > 10);
        /* the last 2 nights only */
        hb_series_free(&x);
        if (hb_store_series(s, fpm[m], "total", 2, &x, err, sizeof err)) fail_msg("%s", err);
        assert_int_equal(x.nruns, 2);
        assert_string_equal(x.runs[0].run_id, m ? "night2-m1" : "night2-m0");
        hb_series_free(&x);
    }
    hb_series x;
    assert_int_equal(hb_store_series(s, "0000000000000000", "total", 0, &x, err, sizeof err), HB_EINVAL);
    hb_store_close(s);
}

/* A version-1 store is migrated on open; a store newer than this hybench is refused. */
static void test_migration(void **state)
{
    char url[512], err[512];
    if (!new_url(state, url, sizeof url)) { skip(); return; }
    hb_store *s;
    if (hb_store_open_at(url, 1, &s, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(hb_store_schema_version(s), 1);
    hb_run a = load("tests/data/cpu_small.jsonl");
    int dup;
    if (hb_store_import(s, &a, &dup, err, sizeof err)) fail_msg("%s", err);
    hb_store_close(s);
    if (hb_store_open(url, &s, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(hb_store_schema_version(s), HB_STORE_SCHEMA);
    hb_store_run *v;
    size_t n;
    if (hb_store_runs(s, NULL, &v, &n, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(n, 1);
    assert_int_equal(v[0].ncases, json_array_size(a.cases));
    free(v);
    hb_store_close(s);
    /* a future schema */
    if (!*(int *)*state) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "sqlite3 '%s' 'UPDATE hb_schema SET version = 99' 2>/dev/null", url);
        if (sh(cmd) == 0) {
            memset(err, 0, sizeof err);
            assert_int_equal(hb_store_open(url, &s, err, sizeof err), HB_EDEVICE);
            assert_non_null(strstr(err, "schema version 99"));
        } else print_message("(no sqlite3 command: the future-schema check is left out)\n");
    }
    hb_run_free(&a);
}

/* SQL run straight on the store at url (SQLite file or PostgreSQL URL), as an older hybench would
 * have left it. */
static void raw_sql(const char *url, const char *sql)
{
    if (!strncmp(url, "postgresql://", 13)) {
        PGconn *c = PQconnectdb(url);
        assert_int_equal(PQstatus(c), CONNECTION_OK);
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) fail_msg("%s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
        PQfinish(c);
        return;
    }
    sqlite3 *db;
    assert_int_equal(sqlite3_open(url, &db), SQLITE_OK);
    char *m = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &m) != SQLITE_OK) fail_msg("%s: %s", sql, m ? m : "?");
    sqlite3_close(db);
}

/* One machine, one series (issue 32 item 5). Two runs of this VM half an hour apart whose records
 * differ only in what PoCL reports as the OpenCL device's memory (a share of the memory free at that
 * moment: "13.5 GiB" / "5.3 GiB"), the free memory, the date and the load get one fingerprint on
 * import; and a store of schema 2 that holds them under the two fingerprints the former definition
 * gave (87650624fbee17f3 and c6466d4ef0023d2f, the issue's) is migrated to one machine with both runs
 * in its series. */
static void test_refingerprint(void **state)
{
    char url[512], err[512];
    if (!new_url(state, url, sizeof url)) { skip(); return; }
    hb_store *s;
    if (hb_store_open_at(url, 2, &s, err, sizeof err)) fail_msg("%s", err);
    hb_run a = load("tests/data/cpu_small.jsonl"), b = load("tests/data/cpu_small.jsonl");
    json_object_set_new(b.meta, "run_id", json_string("half-an-hour-later"));
    json_object_set_new(b.meta, "date", json_string("2026-11-20T03:30:00Z"));
    json_object_set_new(b.meta, "load_avg", json_pack("[f,f,f]", 3.5, 2.0, 1.0));
    json_object_set_new(b.meta, "memory_bytes", json_integer(json_integer_value(json_object_get(a.meta, "memory_bytes")) + 7 * 1048576));
    size_t i;
    json_t *bk;
    int changed = 0;
    json_array_foreach(b.backends, i, bk) {
        const char *d = hb_rec_str(bk, "description");
        if (!d || strncmp(hb_rec_str(bk, "backend"), "opencl", 6)) continue;
        char nd[512];
        const char *g = strstr(d, "13.5 GiB");
        assert_non_null(g);
        snprintf(nd, sizeof nd, "%.*s5.3 GiB%s", (int)(g - d), d, g + 8);
        json_object_set_new(bk, "description", json_string(nd));
        json_object_set_new(json_object_get(bk, "info"), "global_mem_bytes", json_integer(5690831667LL));
        changed = 1;
    }
    assert_true(changed);
    char fa[24], fb[24], d[4096];
    hb_store_fingerprint(&a, fa, d, sizeof d);
    hb_store_fingerprint(&b, fb, d, sizeof d);
    assert_string_equal(fa, fb);
    assert_null(strstr(d, "GiB,")); /* no memory size of the OpenCL device in the text */
    int dup;
    if (hb_store_import(s, &a, &dup, err, sizeof err) || hb_store_import(s, &b, &dup, err, sizeof err)) fail_msg("%s", err);
    hb_store_close(s);
    /* the store as the former definition left it: one machine per run */
    char sql[1024];
    snprintf(sql, sizeof sql,
             "INSERT INTO hb_machine(fingerprint, description) VALUES ('87650624fbee17f3', 'old: 13.5 GiB'),"
             " ('c6466d4ef0023d2f', 'old: 5.3 GiB');"
             "UPDATE hb_run SET fingerprint = '87650624fbee17f3' WHERE run_id = '%s';"
             "UPDATE hb_run SET fingerprint = 'c6466d4ef0023d2f' WHERE run_id = 'half-an-hour-later';"
             "DELETE FROM hb_machine WHERE fingerprint NOT IN (SELECT fingerprint FROM hb_run);",
             hb_run_meta(&a, "run_id"));
    raw_sql(url, sql);
    if (hb_store_open(url, &s, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(hb_store_schema_version(s), 3);
    char **fps, **descs;
    size_t n;
    if (hb_store_machines(s, &fps, &descs, &n, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(n, 1);
    assert_string_equal(fps[0], fa);
    free(fps[0]);
    free(descs[0]);
    free(fps);
    free(descs);
    hb_series x;
    if (hb_store_series(s, fa, "total", 0, &x, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(x.nruns, 2);
    hb_series_free(&x);
    hb_store_close(s);
    hb_run_free(&a);
    hb_run_free(&b);
}

/* A store named by a libpq key=value connection string is PostgreSQL: opened, written and read; its
 * password (the test server trusts, so any) is masked in its name. A service file
 * (PGSERVICEFILE) names it by `service=NAME` and by `postgresql://?service=NAME`. */
static void test_keyvalue_conninfo(void **state)
{
    (void)state;
    if (!pg_up) { print_message("SKIP (PostgreSQL): %s\n", pg_reason); skip(); return; }
    char url[512], kv[700], err[512];
    pg_url(url, sizeof url);
    snprintf(kv, sizeof kv, "host=%s user=postgres dbname=hbtest%d password='kv s3cret'", pgdir, dbseq);
    assert_int_equal(hb_store_is_postgres(kv), 1);
    hb_store *s;
    if (hb_store_open(kv, &s, err, sizeof err)) fail_msg("%s", err);
    assert_string_equal(hb_store_engine(s), "postgresql");
    hb_run a = load("tests/data/cpu_small.jsonl");
    int dup;
    if (hb_store_import(s, &a, &dup, err, sizeof err)) fail_msg("%s", err);
    hb_store_close(s);
    if (hb_store_open(url, &s, err, sizeof err)) fail_msg("%s", err); /* the same database by its URI */
    hb_store_run *v;
    size_t n;
    if (hb_store_runs(s, NULL, &v, &n, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(n, 1);
    free(v);
    hb_store_close(s);
    char name[1024];
    hb_store_safe_name(kv, name, sizeof name);
    assert_null(strstr(name, "s3cret"));
    assert_non_null(strstr(name, "password=***"));
    /* a service file (docs/history.md): HB_STORE=service=NAME, or the URI postgresql://?service=NAME */
    char sf[400];
    snprintf(sf, sizeof sf, "%s/pg_service.conf", tmpdir);
    FILE *f = fopen(sf, "w");
    assert_non_null(f);
    fprintf(f, "[hbhist]\nhost=%s\nuser=postgres\ndbname=hbtest%d\n", pgdir, dbseq);
    fclose(f);
    setenv("PGSERVICEFILE", sf, 1);
    static const char *const svc[] = {"service=hbhist", "postgresql://?service=hbhist", NULL};
    for (int i = 0; svc[i]; i++) {
        if (hb_store_open(svc[i], &s, err, sizeof err)) fail_msg("%s: %s", svc[i], err);
        if (hb_store_runs(s, NULL, &v, &n, err, sizeof err)) fail_msg("%s", err);
        assert_int_equal(n, 1);
        free(v);
        hb_store_close(s);
    }
    unsetenv("PGSERVICEFILE");
    hb_run_free(&a);
}

/* Bad stores: a file that is not SQLite, a PostgreSQL URL with no server. */
static void test_bad_store(void **state)
{
    (void)state;
    char path[400], err[512];
    snprintf(path, sizeof path, "%s/not-a-db", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("this is not a database, it is a text file long enough to fill a page header..........................\n", f);
    fclose(f);
    hb_store *s = (hb_store *)(uintptr_t)1;
    memset(err, 0, sizeof err);
    assert_int_equal(hb_store_open(path, &s, err, sizeof err), HB_EDEVICE);
    assert_null(s);
    assert_non_null(strstr(err, path));
    memset(err, 0, sizeof err);
    assert_int_equal(hb_store_open("postgresql:///x?host=/nonexistent-dir&connect_timeout=2", &s, err, sizeof err), HB_EDEVICE);
    assert_non_null(strstr(err, "cannot connect"));
}

/* Records with only total and compute phases whose statistics follow from their samples (as
 * synth_history writes them): the store keeps samples only, and export rebuilds valid phases. */
static void test_lean_records(void **state)
{
    char url[512], err[512];
    if (!new_url(state, url, sizeof url)) { skip(); return; }
    hb_store *s;
    if (hb_store_open(url, &s, err, sizeof err)) fail_msg("%s", err);
    hb_run a = load("tests/data/cpu_small.jsonl");
    json_object_set_new(a.meta, "run_id", json_string("lean-run"));
    size_t i, nok = 0;
    json_t *c;
    json_array_foreach(a.cases, i, c) {
        json_t *ph = json_object_get(c, "phases");
        if (!ph) continue;
        json_t *keep = json_object();
        for (int m = 0; m < 2; m++) {
            json_t *smp = json_object_get(json_object_get(c, "samples"), m ? "compute" : "total");
            size_t n = json_array_size(smp);
            if (!n) continue;
            double *x = malloc(n * sizeof *x);
            for (size_t k = 0; k < n; k++) x[k] = json_number_value(json_array_get(smp, k));
            hb_stats st;
            hb_stats_compute(x, n, &st);
            free(x);
            json_object_set_new(keep, m ? "compute" : "total", hb_stats_json(&st));
        }
        json_object_set_new(c, "phases", keep);
        nok += !strcmp(hb_rec_str(c, "status"), "ok");
    }
    assert_true(nok > 10);
    int dup;
    if (hb_store_import(s, &a, &dup, err, sizeof err)) fail_msg("%s", err);
    hb_run b = export_to(s, "lean-run", *(int *)*state ? "lean_pg" : "lean_sqlite"); /* hb_run_load validates it */
    json_array_foreach(a.cases, i, c) {
        if (strcmp(hb_rec_str(c, "status"), "ok")) continue;
        int occ = 0;
        for (size_t j = 0; j < i; j++) occ += !strcmp(hb_rec_str(json_array_get(a.cases, j), "key"), hb_rec_str(c, "key"));
        json_t *d = find_case(&b, hb_rec_str(c, "key"), occ);
        assert_non_null(d);
        assert_near(hb_case_phase(d, "total", "median"), hb_case_phase(c, "total", "median"), 0);
        assert_near(hb_case_phase(d, "total", "p90"), hb_case_phase(c, "total", "p90"), 1e-6 * hb_case_phase(c, "total", "p90"));
        assert_true(isnan(hb_case_phase(d, "h2d", "median")));
    }
    hb_run_free(&a);
    hb_run_free(&b);
    hb_store_close(s);
}

/* hybench history import --lean: statistics, phase medians and samples kept, the rest of each record
 * (memory, ceiling fields) dropped; the export still loads and has every median. */
static void test_lean_import(void **state)
{
    char url[512], err[512];
    if (!new_url(state, url, sizeof url)) { skip(); return; }
    hb_store *s;
    if (hb_store_open(url, &s, err, sizeof err)) fail_msg("%s", err);
    hb_store_set_lean(s, 1);
    hb_run a = load("tests/data/cpu_small.jsonl");
    int dup;
    if (hb_store_import(s, &a, &dup, err, sizeof err)) fail_msg("%s", err);
    hb_run b = export_to(s, hb_run_meta(&a, "run_id"), *(int *)*state ? "leanimp_pg" : "leanimp_sqlite");
    size_t i, nmem = 0;
    json_t *c;
    json_array_foreach(a.cases, i, c) {
        int occ = 0;
        for (size_t j = 0; j < i; j++) occ += !strcmp(hb_rec_str(json_array_get(a.cases, j), "key"), hb_rec_str(c, "key"));
        json_t *d = find_case(&b, hb_rec_str(c, "key"), occ);
        assert_non_null(d);
        nmem += json_object_get(c, "mem") != NULL;
        assert_null(json_object_get(d, "mem"));
        for (int p = 0; p < HB_PH_COUNT; p++) {
            double x = hb_case_phase(c, hb_phase_names[p], "median"), y = hb_case_phase(d, hb_phase_names[p], "median");
            if (isnan(x)) continue;
            assert_near(y, x, 0);
        }
        if (json_object_get(c, "reason")) assert_string_equal(hb_rec_str(d, "reason"), hb_rec_str(c, "reason"));
    }
    assert_true(nmem > 10);
    hb_run_free(&a);
    hb_run_free(&b);
    hb_store_close(s);
}

int main(void)
{
    static int sq = 0, pg = 1;
    const struct CMUnitTest tests[] = {
        { "roundtrip (sqlite)", test_roundtrip, NULL, NULL, &sq },
        { "duplicate_keys (sqlite)", test_duplicate_keys, NULL, NULL, &sq },
        { "two_machines (sqlite)", test_two_machines, NULL, NULL, &sq },
        { "migration (sqlite)", test_migration, NULL, NULL, &sq },
        { "fingerprint (sqlite)", test_fingerprint, NULL, NULL, &sq },
        { "one machine, one series (sqlite)", test_refingerprint, NULL, NULL, &sq },
        { "one machine, one series (postgresql)", test_refingerprint, NULL, NULL, &pg },
        { "bad_store (sqlite)", test_bad_store, NULL, NULL, &sq },
        { "lean_records (sqlite)", test_lean_records, NULL, NULL, &sq },
        { "lean_records (postgresql)", test_lean_records, NULL, NULL, &pg },
        { "lean_import (sqlite)", test_lean_import, NULL, NULL, &sq },
        { "lean_import (postgresql)", test_lean_import, NULL, NULL, &pg },
        { "roundtrip (postgresql)", test_roundtrip, NULL, NULL, &pg },
        { "duplicate_keys (postgresql)", test_duplicate_keys, NULL, NULL, &pg },
        { "two_machines (postgresql)", test_two_machines, NULL, NULL, &pg },
        { "migration (postgresql)", test_migration, NULL, NULL, &pg },
        { "key=value connection string (postgresql)", test_keyvalue_conninfo, NULL, NULL, &pg },
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
