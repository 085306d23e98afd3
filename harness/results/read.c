/* read.c - reading a results file: the one schema validator (hb_record_check, docs/results-schema.md
 * "Rules"), the streaming reader every command is built on (hb_results_stream: one record at a time,
 * validated, handed to a callback), the in-memory model hb_run loaded with it, and the accessors every
 * reader of an hb_run uses. */
#include "results/results.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hb_run_free(hb_run *r)
{
    if (!r) return;
    hb_run_unindex(r);
    free(r->path);
    json_decref(r->meta);
    json_decref(r->backends);
    json_decref(r->cases);
    json_decref(r->plans);
    json_decref(r->end);
    memset(r, 0, sizeof *r);
}

/* ---- the validator ---- */

static hb_status bad(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static hb_status bad(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return HB_EINVAL;
}

static const char *jtype(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: case JSON_REAL: return "a number";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* Fields of rec that must be strings when present (required: also present). */
static hb_status strings(json_t *rec, const char *const *names, int required, char *err, size_t errlen)
{
    for (; *names; names++) {
        json_t *v = json_object_get(rec, *names);
        if (!v) {
            if (required) return bad(err, errlen, "%s: missing (a string is required)", *names);
            continue;
        }
        if (!json_is_string(v)) return bad(err, errlen, "%s: must be a string, not %s", *names, jtype(v));
    }
    return HB_OK;
}

/* Fields of rec that must be numbers (or null: NaN is written as null) when present. */
static hb_status numbers(json_t *rec, const char *prefix, const char *const *names, char *err, size_t errlen)
{
    for (; *names; names++) {
        json_t *v = json_object_get(rec, *names);
        if (v && !json_is_number(v) && !json_is_null(v))
            return bad(err, errlen, "%s%s: must be a number, not %s", prefix, *names, jtype(v));
    }
    return HB_OK;
}

static hb_status object_or_absent(json_t *rec, const char *k, char *err, size_t errlen)
{
    json_t *v = json_object_get(rec, k);
    if (v && !json_is_object(v)) return bad(err, errlen, "%s: must be an object, not %s", k, jtype(v));
    return HB_OK;
}

/* A stats object (hb_stats_json): every member a number >= 0 or null; times are never negative. */
static hb_status check_stats(json_t *st, const char *where, char *err, size_t errlen)
{
    if (!json_is_object(st)) return bad(err, errlen, "%s: must be an object, not %s", where, jtype(st));
    const char *k;
    json_t *v;
    json_object_foreach(st, k, v) {
        if (json_is_null(v)) continue;
        if (!json_is_number(v)) return bad(err, errlen, "%s.%s: must be a number, not %s", where, k, jtype(v));
        double x = json_number_value(v);
        if (!isfinite(x) || x < 0) return bad(err, errlen, "%s.%s: %g is negative (times and counts are >= 0)", where, k, x);
    }
    return HB_OK;
}

/* "phases" (ph, may be absent): an object whose every member is a stats object. */
static hb_status check_phases(json_t *ph, char *err, size_t errlen)
{
    if (ph && !json_is_object(ph)) return bad(err, errlen, "phases: must be an object, not %s", jtype(ph));
    const char *k;
    json_t *v;
    char where[80];
    hb_status st;
    json_object_foreach(ph, k, v) {
        snprintf(where, sizeof where, "phases.%.40s", k);
        if ((st = check_stats(v, where, err, errlen))) return st;
    }
    return HB_OK;
}

static hb_status check_case(json_t *rec, unsigned flags, char *err, size_t errlen)
{
    /* The identity fields: hb_case_record writes all of them, and the commands (HB_LOAD_STRICT)
     * require them. Other readers only type-check them: records built by hand (tests, the run's own
     * mode check) may lack some, and a missing one reads as unknown. */
    static const char *const identity[] = {"key", "backend", "op", "mode", "route", "dtype", "status", NULL};
    static const char *const optional[] = {"family", "shape_str", "name", "source", "model", "reason", "bound",
                                           "ceiling", "impl", NULL};
    static const char *const nums[] = {"size", "flops", "bytes", "weight", "gflops", "gbps", "gflops_total",
                                       "gbps_total", "fraction", "ceiling_value", "rel_err", "tolerance",
                                       "verified_fraction", "ci_target", "warmup_runs", NULL};
    hb_status st;
    if ((st = strings(rec, identity, (flags & HB_LOAD_STRICT) != 0, err, errlen)) ||
        (st = strings(rec, optional, 0, err, errlen)) || (st = numbers(rec, "", nums, err, errlen)))
        return st;
    const char *status = hb_rec_str(rec, "status");
    if (!status) return HB_OK; /* not strict: a case without a status is not ok, and nothing more is checked */
    if (hb_status_from_name(status) == HB_STATUS_COUNT)
        return bad(err, errlen, "status: unknown status \"%.40s\" (ok, skipped, no_resource, failed, invalid, wrong, crashed, timed_out)", status);
    int ok = !strcmp(status, "ok");
    static const char *const objs[] = {"shape", "mem", "extra", "host_compute", "timer_agreement", "host_clock_ghz", NULL};
    for (const char *const *o = objs; *o; o++)
        if ((st = object_or_absent(rec, *o, err, errlen))) return st;
    /* phases: each phase a stats object; an ok case has a total median */
    json_t *ph = json_object_get(rec, "phases");
    if ((st = check_phases(ph, err, errlen))) return st;
    if (ok) {
        json_t *m = json_object_get(json_object_get(ph, "total"), "median");
        if (!json_is_number(m)) return bad(err, errlen, "phases.total.median: an ok case needs its median time (a number)");
    }
    /* samples: arrays of finite non-negative seconds; an ok case that carries samples has some */
    json_t *sm = json_object_get(rec, "samples");
    if (sm && !json_is_object(sm)) return bad(err, errlen, "samples: must be an object, not %s", jtype(sm));
    const char *k;
    json_t *v;
    json_object_foreach(sm, k, v) {
        if (!json_is_array(v)) return bad(err, errlen, "samples.%.40s: must be an array, not %s", k, jtype(v));
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            if (!json_is_number(x)) return bad(err, errlen, "samples.%.40s[%zu]: must be a number, not %s", k, i, jtype(x));
            double d = json_number_value(x);
            if (!isfinite(d) || d < 0) return bad(err, errlen, "samples.%.40s[%zu]: %g is negative (a time)", k, i, d);
        }
        if (ok && json_array_size(v) == 0) return bad(err, errlen, "samples.%.40s: an ok case has no samples", k);
    }
    /* pass_medians: {metric: [seconds or null per pass]} */
    json_t *pm = json_object_get(rec, "pass_medians");
    if (pm && !json_is_object(pm)) return bad(err, errlen, "pass_medians: must be an object, not %s", jtype(pm));
    json_object_foreach(pm, k, v) {
        if (!json_is_array(v)) return bad(err, errlen, "pass_medians.%.40s: must be an array, not %s", k, jtype(v));
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
            if (!json_is_null(x) && (!json_is_number(x) || json_number_value(x) < 0))
                return bad(err, errlen, "pass_medians.%.40s[%zu]: must be a time >= 0 or null", k, i);
    }
    return HB_OK;
}

static hb_status check_backend(json_t *rec, char *err, size_t errlen)
{
    static const char *const opt[] = {"backend", "reason", "description", NULL};
    hb_status st;
    if ((st = strings(rec, opt, 0, err, errlen)) ||
        (st = object_or_absent(rec, "info", err, errlen)))
        return st;
    json_t *a = json_object_get(rec, "available");
    if (a && !json_is_boolean(a)) return bad(err, errlen, "available: must be a boolean, not %s", jtype(a));
    json_t *cs = json_object_get(rec, "ceilings");
    if (cs && !json_is_array(cs)) return bad(err, errlen, "ceilings: must be an array, not %s", jtype(cs));
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c) {
        if (!json_is_object(c)) return bad(err, errlen, "ceilings[%zu]: must be an object, not %s", i, jtype(c));
        if (!json_is_string(json_object_get(c, "name"))) return bad(err, errlen, "ceilings[%zu].name: a string is required", i);
        json_t *v = json_object_get(c, "value");
        if (v && !json_is_null(v) && (!json_is_number(v) || json_number_value(v) < 0))
            return bad(err, errlen, "ceilings[%zu].value: must be a number >= 0 or null", i);
    }
    return HB_OK;
}

static hb_status check_meta(json_t *rec, char *err, size_t errlen)
{
    static const char *const opt[] = {"run_id", "tool", "tool_version", "date", "command_line", "git_commit", "host",
                                      "os", "compiler", "cflags", NULL};
    hb_status st;
    if ((st = strings(rec, opt, 0, err, errlen))) return st;
    static const char *const objs[] = {"cpu", "options", "clock", "openblas", "threads", "host_clock", "launch", "ranks", NULL};
    for (const char *const *o = objs; *o; o++)
        if ((st = object_or_absent(rec, *o, err, errlen))) return st;
    return HB_OK;
}

static hb_status check_end(json_t *rec, char *err, size_t errlen)
{
    static const char *const nums[] = {"cases", "ok", "wrong", "failed", "skipped", "crashed", "no_resource",
                                       "elapsed_s", "passes", NULL};
    hb_status st = numbers(rec, "", nums, err, errlen);
    if (st) return st;
    json_t *i = json_object_get(rec, "interrupted");
    if (i && !json_is_boolean(i)) return bad(err, errlen, "interrupted: must be a boolean, not %s", jtype(i));
    return HB_OK;
}

/* A plan record (measure/replay.c): its identity strings, its numbers >= 0, its phases stats objects,
 * its steps an array of objects; an ok plan has its total median. */
static hb_status check_plan(json_t *rec, char *err, size_t errlen)
{
    static const char *const ids[] = {"model", "plan", "kind", "route", "mode", "status", NULL};
    static const char *const nums[] = {"predicted_s", "bytes_crossing", "copies", "rel_err", "tolerance", "ci_target", NULL};
    hb_status st;
    if ((st = strings(rec, ids, 1, err, errlen)) || (st = numbers(rec, "", nums, err, errlen))) return st;
    if (hb_status_from_name(hb_rec_str(rec, "status")) == HB_STATUS_COUNT) return bad(err, errlen, "status: unknown status");
    json_t *ph = json_object_get(rec, "phases"), *v;
    if ((st = check_phases(ph, err, errlen))) return st;
    if (!strcmp(hb_rec_str(rec, "status"), "ok") && !json_is_number(json_object_get(json_object_get(ph, "total"), "median")))
        return bad(err, errlen, "phases.total.median: an ok plan needs its median time (a number)");
    json_t *s = json_object_get(rec, "steps");
    if (s && !json_is_array(s)) return bad(err, errlen, "steps: must be an array, not %s", jtype(s));
    size_t i;
    json_array_foreach(s, i, v) if (!json_is_object(v)) return bad(err, errlen, "steps[%zu]: must be an object, not %s", i, jtype(v));
    return HB_OK;
}

hb_record_type hb_record_type_of(json_t *rec)
{
    const char *t = hb_rec_str(rec, "type");
    if (!t) return HB_REC_NONE;
    if (!strcmp(t, "meta")) return HB_REC_META;
    if (!strcmp(t, "backend")) return HB_REC_BACKEND;
    if (!strcmp(t, "case")) return HB_REC_CASE;
    if (!strcmp(t, "end")) return HB_REC_END;
    if (!strcmp(t, "mode_check")) return HB_REC_MODE_CHECK;
    if (!strcmp(t, "plan")) return HB_REC_PLAN;
    return HB_REC_UNKNOWN;
}

hb_status hb_record_check(json_t *rec, unsigned flags, char *err, size_t errlen)
{
    if (!json_is_object(rec)) return bad(err, errlen, "record: must be a JSON object, not %s", jtype(rec));
    json_t *t = json_object_get(rec, "type");
    if (!t) return bad(err, errlen, "type: missing (every record has a \"type\")");
    if (!json_is_string(t)) return bad(err, errlen, "type: must be a string, not %s", jtype(t));
    hb_record_type rt = hb_record_type_of(rec);
    json_t *s = json_object_get(rec, "schema");
    if (s && rt != HB_REC_UNKNOWN) { /* hybench writes it on every record; one written by hand may omit it */
        if (!json_is_integer(s)) return bad(err, errlen, "schema: must be an integer, not %s", jtype(s));
        json_int_t v = json_integer_value(s);
        if (v < 1) return bad(err, errlen, "schema: %lld is not a schema version", (long long)v);
        if (v != HB_SCHEMA_VERSION && !(flags & HB_LOAD_ANY_SCHEMA))
            return bad(err, errlen, "schema: version %lld is not supported (this hybench reads schema %d)", (long long)v,
                       HB_SCHEMA_VERSION);
        if (v > HB_SCHEMA_VERSION) return HB_OK; /* a newer version's rules are not known here: the caller
                                                    refuses the run (hb_run_check_comparable) */
    }
    switch (rt) {
    case HB_REC_META: return check_meta(rec, err, errlen);
    case HB_REC_BACKEND: return check_backend(rec, err, errlen);
    case HB_REC_CASE: return check_case(rec, flags, err, errlen);
    case HB_REC_END: return check_end(rec, err, errlen);
    case HB_REC_PLAN: return check_plan(rec, err, errlen);
    default: return HB_OK; /* mode_check records are written by hybench itself; unknown types are ignored */
    }
}

/* ---- the streaming reader ---- */

hb_status hb_results_stream(const char *path, unsigned flags, hb_record_fn fn, void *user, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno)); return HB_EDEVICE; }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, have_meta = 0, nrec = 0;
    int orphan_line = 0;              /* HB_LOAD_NO_META: the first record before any meta record */
    hb_record_type orphan_type = HB_REC_NONE;
    hb_status st = HB_OK;
    char why[400];
    errno = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        int last = (line[len - 1] != '\n');
        size_t n = (size_t)len;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) n--;
        if (!n) continue;
        if (memchr(line, 0, n)) {
            snprintf(err, errlen, "%s:%d: record: NUL byte in the line", path, lineno);
            st = HB_EINVAL;
            break;
        }
        json_error_t je;
        json_t *rec = json_loadb(line, n, JSON_REJECT_DUPLICATES, &je);
        if (!rec || !json_is_object(rec)) {
            if (last && !rec) { fprintf(stderr, "hybench: %s:%d: truncated last record skipped\n", path, lineno); break; }
            if (rec) snprintf(err, errlen, "%s:%d: record: must be a JSON object, not %s", path, lineno, jtype(rec));
            else snprintf(err, errlen, "%s:%d: record: not JSON: %s", path, lineno, je.text);
            json_decref(rec);
            st = HB_EINVAL;
            break;
        }
        if (hb_record_check(rec, flags, why, sizeof why) != HB_OK) {
            json_decref(rec);
            snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
            st = HB_EINVAL;
            break;
        }
        hb_record_type rt = hb_record_type_of(rec);
        int early = (rt == HB_REC_CASE || rt == HB_REC_BACKEND || rt == HB_REC_END) && !have_meta;
        if (early && (flags & HB_LOAD_NO_META)) { /* read on; refused only if a meta record comes later */
            if (!orphan_line) { orphan_line = lineno; orphan_type = rt; }
            early = 0;
        }
        if (rt == HB_REC_META && orphan_line) { early = 1; rt = orphan_type; }
        if (early) {
            json_decref(rec);
            snprintf(err, errlen, "%s:%d: type: a %s record before the meta record (a results file starts with its meta record)",
                     path, orphan_line ? orphan_line : lineno,
                     rt == HB_REC_CASE ? "case" : rt == HB_REC_BACKEND ? "backend" : "end");
            st = HB_EINVAL;
            break;
        }
        if (rt == HB_REC_META) have_meta = 1;
        if (rt != HB_REC_UNKNOWN) nrec++;
        if (rt != HB_REC_UNKNOWN && fn) {
            why[0] = 0;
            hb_status cst = fn(rec, rt, lineno, user, why, sizeof why);
            if (cst != HB_OK) {
                json_decref(rec);
                snprintf(err, errlen, "%s:%d: %s", path, lineno, why[0] ? why : "refused");
                st = cst;
                break;
            }
        }
        json_decref(rec);
    }
    if (st == HB_OK && ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
        st = HB_EDEVICE;
    }
    free(line);
    fclose(f);
    if (st == HB_OK && !nrec) {
        snprintf(err, errlen, "%s: no hybench records", path);
        st = HB_EINVAL;
    } else if (st == HB_OK && !have_meta && !(flags & HB_LOAD_NO_META)) {
        snprintf(err, errlen, "%s: type: no meta record (a results file starts with its meta record)", path);
        st = HB_EINVAL;
    }
    return st;
}

/* ---- the whole run in memory ---- */

typedef struct load_ctx {
    hb_run *run;
    const hb_load_opts *o;
    json_t *strings;   /* with keep: text -> one shared json string (backend, op, mode, ... repeat) */
} load_ctx;

/* A copy of case record c with only the fields in keep (samples restricted to o->metric); string
 * values other than the key are shared through x->strings. */
static json_t *slim_case(load_ctx *x, json_t *c)
{
    const hb_load_opts *o = x->o;
    json_t *s = json_object();
    for (const char *const *k = o->keep; *k; k++) {
        json_t *v = json_object_get(c, *k);
        if (!v) continue;
        if (!strcmp(*k, "samples") || !strcmp(*k, "pass_medians") || !strcmp(*k, "phases")) {
            const char *metric = o->metric ? o->metric : "total";
            json_t *m = json_object_get(v, metric), *one = json_object();
            if (m && !strcmp(*k, "phases")) { /* of the phase's statistics, its median */
                json_t *med = json_object_get(m, "median");
                m = med ? json_pack("{s:O}", "median", med) : NULL;
                if (m) json_object_set_new(one, metric, m);
            } else if (m) {
                json_object_set(one, metric, m);
            }
            json_object_set_new(s, *k, one);
        } else if (json_is_string(v) && strcmp(*k, "key") && x->strings) {
            json_t *shared = json_object_get(x->strings, json_string_value(v));
            if (!shared) {
                json_object_set(x->strings, json_string_value(v), v);
                shared = v;
            }
            json_object_set(s, *k, shared);
        } else {
            json_object_set(s, *k, v);
        }
    }
    return s;
}

static hb_status load_cb(json_t *rec, hb_record_type t, int lineno, void *user, char *why, size_t whylen)
{
    (void)lineno;
    load_ctx *x = user;
    hb_run *r = x->run;
    const hb_load_opts *o = x->o;
    json_t *sv = json_object_get(rec, "schema");
    if (json_is_integer(sv) && json_integer_value(sv) > r->schema) r->schema = (long long)json_integer_value(sv);
    switch (t) {
    case HB_REC_META: json_decref(r->meta); r->meta = json_incref(rec); break;
    case HB_REC_BACKEND: json_array_append(r->backends, rec); break;
    case HB_REC_END: json_decref(r->end); r->end = json_incref(rec); break;
    case HB_REC_CASE:
        if (o && (o->flags & HB_LOAD_NEED_SAMPLES) && hb_rec_str(rec, "status") && !strcmp(hb_rec_str(rec, "status"), "ok")) {
            const char *m = o->metric ? o->metric : "total";
            if (json_array_size(json_object_get(json_object_get(rec, "samples"), m)) == 0) {
                snprintf(why, whylen, "samples.%s: an ok case has no samples (this command needs the raw samples)", m);
                return HB_EINVAL;
            }
        }
        if (json_array_append_new(r->cases, o && o->keep ? slim_case(x, rec) : json_incref(rec))) {
            snprintf(why, whylen, "out of memory");
            return HB_ENOMEM;
        }
        break;
    case HB_REC_PLAN:
        if (json_array_append(r->plans, rec)) { snprintf(why, whylen, "out of memory"); return HB_ENOMEM; }
        break;
    default: break; /* mode_check records are not kept */
    }
    return HB_OK;
}

hb_status hb_run_load_opts(const char *path, const hb_load_opts *o, hb_run *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->path = strdup(path);
    out->backends = json_array();
    out->cases = json_array();
    out->plans = json_array();
    if (!out->path || !out->backends || !out->cases || !out->plans) {
        hb_run_free(out);
        snprintf(err, errlen, "%s: out of memory", path);
        return HB_ENOMEM;
    }
    load_ctx x = {out, o, o && o->keep ? json_object() : NULL};
    hb_status st = hb_results_stream(path, o ? o->flags : 0, load_cb, &x, err, errlen);
    json_decref(x.strings);
    if (st == HB_OK && hb_run_index(out) != HB_OK) {
        snprintf(err, errlen, "%s: out of memory", path);
        st = HB_ENOMEM;
    }
    if (st != HB_OK) hb_run_free(out);
    return st;
}

hb_status hb_run_load(const char *path, hb_run *out, char *err, size_t errlen)
{
    return hb_run_load_opts(path, NULL, out, err, errlen);
}

hb_status hb_run_check_comparable(const hb_run *r, const char *path, char *err, size_t errlen)
{
    if (!path) path = r && r->path ? r->path : "(run)";
    if (!r || !r->meta)
        return bad(err, errlen, "%s: no meta record: nothing tells which machine, build or schema it comes from, "
                   "so it is not compared", path);
    if (r->schema > HB_SCHEMA_VERSION)
        return bad(err, errlen, "%s: results schema %lld is newer than this hybench knows (it reads schema %d): "
                   "its records may mean something else; compare it with a newer hybench", path, r->schema,
                   HB_SCHEMA_VERSION);
    if (json_array_size(r->cases) == 0)
        return bad(err, errlen, "%s: no case records: the run measured nothing, and a gate over it would pass "
                   "without comparing anything", path);
    return HB_OK;
}

const char *hb_rec_str(json_t *rec, const char *k)
{
    return json_string_value(json_object_get(rec, k));
}

double hb_rec_num(json_t *rec, const char *k)
{
    json_t *v = json_object_get(rec, k);
    return json_is_number(v) ? json_number_value(v) : (double)NAN;
}

int hb_status_severity(const char *status)
{
    static const char *const order[] = {"ok", "skipped", "no_resource", "failed", "timed_out", "crashed", "wrong"};
    for (int i = 0; i < 7; i++)
        if (status && !strcmp(status, order[i])) return i;
    return 3;
}

const char *hb_run_meta(const hb_run *r, const char *k)
{
    return r && r->meta ? hb_rec_str(r->meta, k) : NULL;
}

const char *hb_run_cpu_model(const hb_run *r)
{
    return r && r->meta ? hb_rec_str(json_object_get(r->meta, "cpu"), "model") : NULL;
}

double hb_case_phase(json_t *c, const char *phase, const char *stat)
{
    json_t *v = json_object_get(json_object_get(json_object_get(c, "phases"), phase), stat);
    return json_is_number(v) ? json_number_value(v) : (double)NAN;
}

double hb_run_ceiling(const hb_run *r, const char *backend, const char *name)
{
    for (size_t i = 0; i < r->nbackend_recs; i++) {
        const hb_rec_backend *b = &r->backend_recs[i];
        if (!b->backend || strcmp(b->backend, backend)) continue;
        for (size_t j = 0; j < b->nceilings; j++)
            if (b->ceilings[j].name && !strcmp(b->ceilings[j].name, name))
                return isnan(b->ceilings[j].value) ? 0 : b->ceilings[j].value; /* null: 0, as before */
    }
    return NAN;
}
