/* store_site.c - what `hybench publish` reads from the history store besides hb_store_series
 * (results/store.h): the 95% CI of every median of a series, the cases' identity fields, and a run's
 * meta and backend records. Over the query layer of store_db.c. */
#include "results/store_db.h"
#include <stdlib.h>
#include <string.h>

void hb_series_ci_free(hb_series_ci *c)
{
    for (size_t i = 0; c->info && i < c->ncases; i++) free(c->info[i]);
    free(c->info);
    free(c->ci_lo);
    free(c->ci_hi);
    memset(c, 0, sizeof *c);
}

static int put_id(kmap *m, int64_t id, int64_t v)
{
    char k[32];
    snprintf(k, sizeof k, "%lld", (long long)id);
    return hb_kmap_put(m, k, v);
}

static int64_t get_id(const kmap *m, int64_t id)
{
    char k[32];
    int64_t v;
    snprintf(k, sizeof k, "%lld", (long long)id);
    return hb_kmap_get(m, k, &v) ? v : -1;
}

hb_status hb_store_series_ci(hb_store *s, const char *fp, const char *metric, const hb_series *x, hb_series_ci *out,
                             char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t nr = x->nruns, nc = x->ncases, cells = nr * nc;
    out->ncases = nc;
    out->ci_lo = malloc((cells ? cells : 1) * sizeof *out->ci_lo);
    out->ci_hi = malloc((cells ? cells : 1) * sizeof *out->ci_hi);
    out->info = calloc(nc ? nc : 1, sizeof *out->info);
    kmap runs = { 0 }, keys = { 0 };
    hb_status st = HB_OK;
    if (!out->ci_lo || !out->ci_hi || !out->info) st = HB_ENOMEM;
    for (size_t i = 0; !st && i < cells; i++) out->ci_lo[i] = out->ci_hi[i] = NAN;
    for (size_t r = 0; !st && r < nr; r++) if (put_id(&runs, x->runs[r].id, (int64_t)r)) st = HB_ENOMEM;
    for (size_t k = 0; !st && k < nc; k++) if (put_id(&keys, x->cases[k].id, (int64_t)k)) st = HB_ENOMEM;
    if (st) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    if (!nr || !nc) goto done;
    prm p[] = { PT(fp), PT(x->runs[0].date), PT(x->runs[0].run_id) };
    qres q;
    int compute = metric && !strcmp(metric, "compute");
    st = hb_q_run(s,
                  compute ? "SELECT c.run, c.case_key, c.ci_lo_compute, c.ci_hi_compute FROM hb_case c JOIN hb_run r ON r.id = c.run"
                            " WHERE r.fingerprint = $1 AND (r.date > $2 OR (r.date = $2 AND r.run_id >= $3)) AND c.status = 'ok'"
                          : "SELECT c.run, c.case_key, c.ci_lo_total, c.ci_hi_total FROM hb_case c JOIN hb_run r ON r.id = c.run"
                            " WHERE r.fingerprint = $1 AND (r.date > $2 OR (r.date = $2 AND r.run_id >= $3)) AND c.status = 'ok'",
                  p, 3, &q, err, errlen);
    if (st) goto done;
    int rc;
    while ((rc = hb_q_next(&q)) == 1) {
        int64_t col = get_id(&runs, hb_q_int(&q, 0)), row = get_id(&keys, hb_q_int(&q, 1));
        if (col < 0 || row < 0) continue;
        size_t at = (size_t)row * nr + (size_t)col;
        /* a CI only beside a median the series has (hb_store_series keeps the same rows) */
        if (!isfinite(x->median[at])) continue;
        out->ci_lo[at] = hb_q_real(&q, 2);
        out->ci_hi[at] = hb_q_real(&q, 3);
    }
    hb_q_end(&q);
    if (rc < 0) { st = hb_store_fail(err, errlen, "reading the CIs: %s", hb_store_db_err(s)); goto done; }
    st = hb_q_run(s,
                  "SELECT k.id, k.info FROM hb_case_key k WHERE k.id IN"
                  " (SELECT c.case_key FROM hb_case c JOIN hb_run r ON r.id = c.run WHERE r.fingerprint = $1"
                  " AND (r.date > $2 OR (r.date = $2 AND r.run_id >= $3)))",
                  p, 3, &q, err, errlen);
    if (st) goto done;
    while ((rc = hb_q_next(&q)) == 1) {
        int64_t row = get_id(&keys, hb_q_int(&q, 0));
        const char *t = hb_q_text(&q, 1);
        if (row < 0 || out->info[row]) continue;
        if (!(out->info[row] = strdup(t ? t : "{}"))) { rc = -2; break; }
    }
    hb_q_end(&q);
    if (rc == -2) { st = HB_ENOMEM; snprintf(err, errlen, "out of memory"); goto done; }
    if (rc < 0) { st = hb_store_fail(err, errlen, "reading the case identities: %s", hb_store_db_err(s)); goto done; }
    for (size_t k = 0; k < nc; k++)
        if (!out->info[k] && !(out->info[k] = strdup("{}"))) { st = HB_ENOMEM; snprintf(err, errlen, "out of memory"); break; }
done:
    hb_kmap_free(&runs);
    hb_kmap_free(&keys);
    if (st) hb_series_ci_free(out);
    return st;
}

hb_status hb_store_run_records(hb_store *s, const char *run_id, json_t **meta, json_t **backends, char *err,
                               size_t errlen)
{
    *meta = *backends = NULL;
    prm p[] = { PT(run_id) };
    qres q;
    hb_status st = hb_q_run(s, "SELECT meta, backends FROM hb_run WHERE run_id = $1", p, 1, &q, err, errlen);
    if (st) return st;
    int rc = hb_q_next(&q);
    if (rc == 1) {
        const char *m = hb_q_text(&q, 0), *b = hb_q_text(&q, 1);
        *meta = m ? json_loads(m, 0, NULL) : NULL;
        *backends = b ? json_loads(b, 0, NULL) : NULL;
    }
    hb_q_end(&q);
    if (rc < 0) return hb_store_fail(err, errlen, "reading run %s: %s", run_id, hb_store_db_err(s));
    if (rc == 0 || !json_is_object(*meta) || !json_is_array(*backends)) {
        snprintf(err, errlen, rc == 0 ? "no run %s in the store" : "run %s: its stored meta or backend records do not parse",
                 run_id);
        json_decref(*meta);
        json_decref(*backends);
        *meta = *backends = NULL;
        return HB_EINVAL;
    }
    return HB_OK;
}
