/* site_data.c - the data of `hybench publish`'s pages (report/site.h): a machine's readable name, its
 * nights, and each case's points and changes as JSON. Pure: no files, no store. */
#include "report/site.h"
#include "core/appendf.h"
#include <math.h>
#include <stdarg.h>
#include <string.h>


const char *hb_site_machine_name(json_t *meta, json_t *backends, const char *host, char *buf, size_t len)
{
    size_t at = 0;
    if (!len) return buf;
    buf[0] = 0;
    hb_appendf(buf, len, &at, "host %s", host && *host ? host : "?");
    json_t *cpu = json_object_get(meta, "cpu");
    const char *model = json_string_value(json_object_get(cpu, "model"));
    json_t *cores = json_object_get(cpu, "cores");
    if (model) {
        hb_appendf(buf, len, &at, "; CPU %s", model);
        if (json_is_integer(cores)) hb_appendf(buf, len, &at, " (%lld cores)", (long long)json_integer_value(cores));
    }
    size_t i, ndev = 0;
    json_t *b;
    json_array_foreach(backends, i, b) {
        const char *name = json_string_value(json_object_get(b, "backend"));
        const char *d = json_string_value(json_object_get(b, "description"));
        if (!name || !json_is_true(json_object_get(b, "available")) || !strcmp(name, "cpu") || !strcmp(name, "cpu-ref"))
            continue;
        const char *cut = d ? strstr(d, " (") : NULL;
        int w = d ? (cut ? (int)(cut - d) : (int)strlen(d)) : (int)strlen(name);
        hb_appendf(buf, len, &at, "%s%.*s", ndev++ ? ", " : "; devices: ", w, d ? d : name);
    }
    if (!ndev) hb_appendf(buf, len, &at, "; no other devices");
    return buf;
}

int hb_site_run_id_ok(const char *id)
{
    size_t n = id ? strlen(id) : 0;
    if (!n || n > 127 || id[0] == '.') return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", id[i])) return 0;
    return 1;
}

/* a finite number, or null */
static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *hb_site_case_json(const hb_series *x, const hb_series_ci *ci, size_t k, const char *metric,
                          const hb_trend_change *v, size_t n)
{
    const hb_store_case *c = &x->cases[k];
    json_t *o = NULL;
    if (ci && ci->info && ci->info[k]) {
        o = json_loads(ci->info[k], 0, NULL);
        if (!json_is_object(o)) { json_decref(o); o = NULL; }
    }
    if (!o) o = json_object();
    json_t *pts = json_array(), *chg = json_array();
    if (!o || !pts || !chg) { json_decref(o); json_decref(pts); json_decref(chg); return NULL; }
    json_object_set_new(o, "id", json_integer(c->id));
    json_object_set_new(o, "key", json_string(c->key ? c->key : ""));
    json_object_set_new(o, "occurrence", json_integer(c->occurrence));
    json_object_set_new(o, "op", json_string(c->op ? c->op : ""));
    json_object_set_new(o, "backend", json_string(c->backend ? c->backend : ""));
    json_object_set_new(o, "label", json_string(c->label ? c->label : ""));
    json_object_set_new(o, "metric", json_string(metric ? metric : "total"));
    size_t nr = x->nruns;
    for (size_t r = 0; r < nr; r++) {
        double m = x->median[k * nr + r];
        if (!isfinite(m)) continue;
        double lo = ci && ci->ci_lo ? ci->ci_lo[k * nr + r] : (double)NAN, hi = ci && ci->ci_hi ? ci->ci_hi[k * nr + r] : (double)NAN;
        json_array_append_new(pts, json_pack("[I, f, o, o]", (json_int_t)r, m, num(lo), num(hi)));
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i].cas != k) continue;
        json_array_append_new(chg, json_pack("{s:s, s:I, s:I, s:f, s:f, s:o}", "kind",
                                             v[i].c.kind == HB_CP_DRIFT ? "drift" : "step", "night",
                                             (json_int_t)v[i].run_begin, "end", (json_int_t)v[i].run_end, "size",
                                             v[i].c.size, "rate", v[i].c.rate, "p", num(v[i].c.p)));
    }
    json_object_set_new(o, "points", pts);
    json_object_set_new(o, "changes", chg);
    return o;
}

json_t *hb_site_nights_json(const hb_series *x, const char *fp, const char *name, const int *has_report)
{
    json_t *a = json_array();
    if (!a) return NULL;
    for (size_t r = 0; r < x->nruns; r++) {
        const hb_store_run *u = &x->runs[r];
        char rep[200];
        int has = has_report && has_report[r] && hb_site_run_id_ok(u->run_id);
        if (has) snprintf(rep, sizeof rep, "runs/%s/index.html", u->run_id);
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:I, s:o}", "date", u->date, "run", u->run_id, "commit",
                                           u->commit, "host", u->host, "cases", (json_int_t)u->ncases, "report",
                                           has ? json_string(rep) : json_null()));
    }
    return json_pack("{s:s, s:s, s:o}", "machine", fp ? fp : "", "name", name ? name : "", "nights", a);
}
