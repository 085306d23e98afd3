/* store.c - the history store's runs (results/store.h): import and export of runs, the listings and
 * the series matrix that `hybench trend` reads, over the query layer of store_db.c. Opening, the
 * schema and its migrations: store_open.c. */
#include "results/store_db.h"
#include "results/machine.h"
#include "core/stats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
        hb_status st = hb_q_run(s, "SELECT id, key, occurrence FROM hb_case_key", NULL, 0, &r, err, errlen);
        if (st) return st;
        while (hb_q_next(&r) == 1) {
            char k[1200];
            const char *kt = hb_q_text(&r, 1);
            snprintf(k, sizeof k, "%s\x1f%d", kt ? kt : "", (int)hb_q_int(&r, 2));
            if (hb_kmap_put(&s->keys, k, hb_q_int(&r, 0))) { hb_q_end(&r); return hb_store_fail(err, errlen, "out of memory"); }
        }
        hb_q_end(&r);
        s->keys_loaded = 1;
    }
    const char *key = hb_rec_str(c, "key");
    char k[1200];
    snprintf(k, sizeof k, "%s\x1f%d", key, occ);
    if (hb_kmap_get(&s->keys, k, id)) return HB_OK;
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
    if (!itxt) return hb_store_fail(err, errlen, "out of memory");
    prm p[] = { PT(key), PI(occ), PT(hb_rec_str(c, "op") ? hb_rec_str(c, "op") : "unknown"),
                PT(hb_rec_str(c, "backend") ? hb_rec_str(c, "backend") : "unknown"), PT(label), PT(itxt) };
    qres r;
    /* ON CONFLICT: another machine's import may add the same identity at the same time (PostgreSQL
     * waits for it, then this insert does nothing and the SELECT below finds its row) */
    hb_status st = hb_q_run(s,
                         "INSERT INTO hb_case_key(key, occurrence, op, backend, label, info) VALUES ($1, $2, $3, $4, $5, $6)"
                         " ON CONFLICT (key, occurrence) DO NOTHING RETURNING id",
                         p, 6, &r, err, errlen);
    int got = 0;
    if (!st) {
        got = hb_q_next(&r) == 1;
        if (got) *id = hb_q_int(&r, 0);
        hb_q_end(&r);
    }
    if (!st && !got) {
        prm k2[] = { PT(key), PI(occ) };
        st = hb_q_run(s, "SELECT id FROM hb_case_key WHERE key = $1 AND occurrence = $2", k2, 2, &r, err, errlen);
        if (!st) {
            if (hb_q_next(&r) == 1) *id = hb_q_int(&r, 0);
            else st = hb_store_fail(err, errlen, "inserting case key %s: %s", key, hb_store_db_err(s));
            hb_q_end(&r);
        }
    }
    free(itxt);
    if (!st && hb_kmap_put(&s->keys, k, *id)) st = hb_store_fail(err, errlen, "out of memory");
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
        hb_kmap_get(&occ, key, &o);
        if (hb_kmap_put(&occ, key, o + 1)) { st = hb_store_fail(err, errlen, "out of memory"); break; }
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
        st = hb_q_exec(s,
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
        st = hb_q_exec(s,
                    "INSERT INTO hb_case_detail(run, case_key, phase_medians, samples_total, samples_compute, record)"
                    " VALUES ($1, $2, $3, $4, $5, $6)",
                    d, 6, err, errlen);
        free(txt);
        free(xpm);
        free(xt);
        free(xc);
        if (st) break;
    }
    hb_kmap_free(&occ);
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
    hb_status st = own_tx ? hb_q_script(s, "BEGIN", err, errlen) : HB_OK;
    if (st) return st;
    qres q;
    prm pid[] = { PT(run_id) };
    if ((st = hb_q_run(s, "SELECT id FROM hb_run WHERE run_id = $1", pid, 1, &q, err, errlen))) goto out;
    int exists = hb_q_next(&q) == 1;
    hb_q_end(&q);
    if (exists) { *dup = 1; goto out; }
    prm pm[] = { PT(fp), PT(desc) };
    if ((st = hb_q_exec(s, "INSERT INTO hb_machine(fingerprint, description) VALUES ($1, $2) ON CONFLICT DO NOTHING", pm, 2,
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
    st = hb_q_run(s,
               "INSERT INTO hb_run(run_id, date, commit_id, fingerprint, host, meta, backends, end_rec, imported)"
               " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
               pr, 9, &q, err, errlen);
    int64_t run = !st && hb_q_next(&q) == 1 ? hb_q_int(&q, 0) : -1; /* the statement runs here: texts still bound */
    if (!st) hb_q_end(&q);
    free(meta);
    free(backends);
    free(end);
    if (st) goto out;
    if (run < 0) { st = hb_store_fail(err, errlen, "inserting run %s: %s", run_id, hb_store_db_err(s)); goto out; }
    st = import_cases(s, r, run, err, errlen);
out:
    if (own_tx) {
        char e2[256];
        if (st) hb_q_script(s, "ROLLBACK", e2, sizeof e2);
        else st = hb_q_script(s, "COMMIT", err, errlen);
    }
    if (st) {
        /* case keys inserted in a rolled-back transaction are gone: reload the map next time */
        hb_kmap_free(&s->keys);
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
    hb_status st = hb_q_run(s, "SELECT id, meta, backends, end_rec FROM hb_run WHERE run_id = $1", p, 1, &q, err, errlen);
    if (st) return st;
    if (hb_q_next(&q) != 1) { hb_q_end(&q); snprintf(err, errlen, "no run %s in the store", run_id); return HB_EINVAL; }
    int64_t id = hb_q_int(&q, 0);
    json_t *meta = json_loads(hb_q_text(&q, 1), 0, NULL), *bk = json_loads(hb_q_text(&q, 2), 0, NULL);
    json_t *end = hb_q_text(&q, 3) ? json_loads(hb_q_text(&q, 3), 0, NULL) : NULL;
    hb_q_end(&q);
    if (meta) put_line(f, meta);
    size_t i;
    json_t *b;
    json_array_foreach(bk, i, b) put_line(f, b);
    json_decref(meta);
    json_decref(bk);
    prm pi[] = { PI(id) };
    st = hb_q_run(s,
               "SELECT k.key, k.info, c.status, c.ci_met, d.phase_medians, d.samples_total, d.samples_compute, d.record,"
               " c.median_total, c.ci_lo_total, c.ci_hi_total, c.median_compute, c.ci_lo_compute, c.ci_hi_compute"
               " FROM hb_case c JOIN hb_case_key k ON k.id = c.case_key"
               " JOIN hb_case_detail d ON d.run = c.run AND d.case_key = c.case_key WHERE c.run = $1"
               " ORDER BY k.key, k.occurrence",
               pi, 1, &q, err, errlen);
    if (st) { json_decref(end); return st; }
    int rc;
    while ((rc = hb_q_next(&q)) == 1) {
        json_t *rec = json_object();
        json_object_set_new(rec, "type", json_string("case"));
        json_object_set_new(rec, "key", json_string(hb_q_text(&q, 0)));
        json_t *info = json_loads(hb_q_text(&q, 1), 0, NULL);
        json_object_update(rec, info);
        json_decref(info);
        json_t *rest = json_loads(hb_q_text(&q, 7), 0, NULL);
        json_t *phases = json_object_get(rest, "phases");
        if (phases) json_incref(phases);
        json_object_del(rest, "phases");
        json_object_update(rec, rest);
        json_decref(rest);
        size_t bl, blt = 0, blc = 0;
        const unsigned char *pm0 = hb_q_blob(&q, 4, &bl);
        unsigned char *pm = pm0 && bl == 8 * HB_PH_COUNT ? malloc(bl) : NULL;
        if (pm) memcpy(pm, pm0, bl);
        const unsigned char *x0 = hb_q_blob(&q, 5, &blt);
        unsigned char *xt = x0 && blt ? malloc(blt) : NULL;
        if (xt) memcpy(xt, x0, blt);
        x0 = hb_q_blob(&q, 6, &blc);
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
                        if (!hb_q_null(&q, c0 + e)) json_object_set_new(full, exact[e], json_real(hb_q_real(&q, c0 + e)));
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
        if (!hb_q_null(&q, 3)) json_object_set_new(rec, "ci_met", json_boolean(hb_q_int(&q, 3)));
        json_object_set_new(rec, "status", json_string(hb_q_text(&q, 2)));
        json_object_set_new(rec, "schema", json_integer(HB_SCHEMA_VERSION));
        put_line(f, rec);
        json_decref(rec);
    }
    if (rc < 0) st = hb_store_fail(err, errlen, "reading run %s: %s", run_id, hb_store_db_err(s));
    hb_q_end(&q);
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
    hb_status st = hb_q_run(s,
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
    while ((rc = hb_q_next(&q)) == 1) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            hb_store_run *nv = realloc(*v, cap * sizeof *nv);
            if (!nv) { hb_q_end(&q); free(*v); *v = NULL; *n = 0; snprintf(err, errlen, "out of memory"); return HB_ENOMEM; }
            *v = nv;
        }
        hb_store_run *e = &(*v)[(*n)++];
        e->id = hb_q_int(&q, 0);
        cpy(e->run_id, sizeof e->run_id, hb_q_text(&q, 1));
        cpy(e->date, sizeof e->date, hb_q_text(&q, 2));
        cpy(e->commit, sizeof e->commit, hb_q_text(&q, 3));
        cpy(e->fingerprint, sizeof e->fingerprint, hb_q_text(&q, 4));
        cpy(e->host, sizeof e->host, hb_q_text(&q, 5));
        e->ncases = (size_t)hb_q_int(&q, 6);
    }
    hb_q_end(&q);
    if (rc < 0) return hb_store_fail(err, errlen, "listing runs: %s", hb_store_db_err(s));
    return HB_OK;
}

hb_status hb_store_machines(hb_store *s, char ***fps, char ***descs, size_t *n, char *err, size_t errlen)
{
    *fps = *descs = NULL;
    *n = 0;
    qres q;
    hb_status st = hb_q_run(s, "SELECT fingerprint, description FROM hb_machine ORDER BY fingerprint", NULL, 0, &q, err, errlen);
    if (st) return st;
    size_t cap = 0;
    while (hb_q_next(&q) == 1) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **a = realloc(*fps, cap * sizeof *a), **b = a ? realloc(*descs, cap * sizeof *b) : NULL;
            if (a) *fps = a;
            if (b) *descs = b;
            if (!a || !b) { hb_q_end(&q); snprintf(err, errlen, "out of memory"); return HB_ENOMEM; }
        }
        (*fps)[*n] = strdup(hb_q_text(&q, 0));
        (*descs)[*n] = strdup(hb_q_text(&q, 1));
        (*n)++;
    }
    hb_q_end(&q);
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
    st = hb_q_run(s,
               "SELECT k.id, k.key, k.occurrence, k.op, k.backend, k.label FROM hb_case_key k WHERE k.id IN"
               " (SELECT c.case_key FROM hb_case c JOIN hb_run r ON r.id = c.run WHERE r.fingerprint = $1"
               " AND (r.date > $2 OR (r.date = $2 AND r.run_id >= $3)))"
               " ORDER BY k.op, k.backend, k.key, k.occurrence",
               p, 3, &q, err, errlen);
    if (st) { free(idx); hb_series_free(out); return st; }
    size_t cap = 0;
    kmap kid = { 0 };
    while (hb_q_next(&q) == 1) {
        if (out->ncases == cap) {
            cap = cap ? 2 * cap : 256;
            hb_store_case *a = realloc(out->cases, cap * sizeof *a);
            if (!a) { st = HB_ENOMEM; break; }
            out->cases = a;
        }
        hb_store_case *c = &out->cases[out->ncases];
        c->id = hb_q_int(&q, 0);
        c->key = strdup(hb_q_text(&q, 1));
        c->occurrence = (int)hb_q_int(&q, 2);
        c->op = strdup(hb_q_text(&q, 3));
        c->backend = strdup(hb_q_text(&q, 4));
        c->label = strdup(hb_q_text(&q, 5));
        char ks[32];
        snprintf(ks, sizeof ks, "%lld", (long long)c->id);
        if (hb_kmap_put(&kid, ks, (int64_t)out->ncases)) st = HB_ENOMEM;
        out->ncases++;
    }
    hb_q_end(&q);
    if (st || !out->ncases || !(out->median = malloc(out->ncases * nr * sizeof(double)))) {
        if (!st && !out->ncases) { snprintf(err, errlen, "no cases in the runs of machine %s", fp); st = HB_EINVAL; }
        else { snprintf(err, errlen, "out of memory"); st = HB_ENOMEM; }
        hb_kmap_free(&kid); free(idx); hb_series_free(out);
        return st;
    }
    for (size_t i = 0; i < out->ncases * nr; i++) out->median[i] = NAN;
    st = hb_q_run(s,
               compute ? "SELECT c.run, c.case_key, c.median_compute FROM hb_case c JOIN hb_run r ON r.id = c.run"
                         " WHERE r.fingerprint = $1 AND (r.date > $2 OR (r.date = $2 AND r.run_id >= $3)) AND c.status = 'ok'"
                       : "SELECT c.run, c.case_key, c.median_total FROM hb_case c JOIN hb_run r ON r.id = c.run"
                         " WHERE r.fingerprint = $1 AND (r.date > $2 OR (r.date = $2 AND r.run_id >= $3)) AND c.status = 'ok'",
               p, 3, &q, err, errlen);
    if (st) { hb_kmap_free(&kid); free(idx); hb_series_free(out); return st; }
    int rc;
    int64_t last_run = -1, col = -1, last_key = -1, row = -1;
    while ((rc = hb_q_next(&q)) == 1) {
        int64_t run = hb_q_int(&q, 0), key = hb_q_int(&q, 1);
        if (run != last_run) {
            int64_t probe[2] = { run, 0 };
            int64_t(*hit)[2] = bsearch(probe, idx, nr, sizeof *idx, cmp_i64);
            col = hit ? (*hit)[1] : -1;
            last_run = run;
        }
        if (key != last_key) {
            char ks[32];
            snprintf(ks, sizeof ks, "%lld", (long long)key);
            if (!hb_kmap_get(&kid, ks, &row)) row = -1;
            last_key = key;
        }
        if (col >= 0 && row >= 0) out->median[(size_t)row * nr + (size_t)col] = hb_q_real(&q, 2);
    }
    if (rc < 0) st = hb_store_fail(err, errlen, "reading the series: %s", hb_store_db_err(s));
    hb_q_end(&q);
    hb_kmap_free(&kid);
    free(idx);
    if (st) hb_series_free(out);
    return st;
}
