/*
 * write.c - writing the results schema (docs/results-schema.md): one JSON record per line, each with
 * one write(2); the fields every case record starts with; statistics and phase names as the schema
 * spells them. measure/ writes runs through these; analysis/ appends mode_check records with them.
 */
#include "results/results.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const hb_phase_names[HB_PH_COUNT] = {"convert_in", "h2d", "compute", "d2h", "convert_out", "total"};

hb_status hb_record_write(int fd, json_t *rec)
{
    json_object_set_new(rec, "schema", json_integer(HB_SCHEMA_VERSION));
    char *s = json_dumps(rec, JSON_COMPACT | JSON_REAL_PRECISION(7));
    json_decref(rec);
    if (!s) return HB_ENOMEM;
    size_t len = strlen(s);
    s[len] = '\n'; /* json_dumps allocates len+1: replace the NUL, write len+1 bytes */
    const char *p = s;
    size_t left = len + 1;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { free(s); return HB_EDEVICE; }
        p += w;
        left -= (size_t)w;
    }
    free(s);
    return HB_OK;
}

json_t *hb_stats_json(const hb_stats *s)
{
    return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "n", (json_int_t)s->n, "min", s->min,
                     "max", s->max, "mean", s->mean, "median", s->median, "p10", s->p10, "p90", s->p90, "mad",
                     s->mad, "stddev", s->stddev, "cv", s->cv, "ci_lo", s->ci_lo, "ci_hi", s->ci_hi);
}

json_t *hb_case_record(const hb_case *c, const char *backend)
{
    char key[512], shape[256];
    const hb_op_info *info = hb_op_get(c->op);
    json_t *r = json_object();
    json_object_set_new(r, "type", json_string("case"));
    json_object_set_new(r, "key", json_string(hb_case_key(c, backend, key, sizeof key)));
    json_object_set_new(r, "backend", json_string(backend));
    json_object_set_new(r, "op", json_string(info->name));
    json_object_set_new(r, "family", json_string(hb_family_name(info->family)));
    /* the fields the op uses are those its text form names (hb_shape_format omits defaults) */
    json_t *sh = json_object();
    char tmp[256], err[128];
    hb_shape used;
    hb_shape_format(c->op, &c->shape, tmp, sizeof tmp);
    if (hb_shape_parse(tmp, &used, err, sizeof err) == HB_OK)
        for (int i = 0; i < hb_shape_nfields; i++)
            if (*(const int64_t *)((const char *)&used + hb_shape_fields[i].offset))
                json_object_set_new(sh, hb_shape_fields[i].name,
                                    json_integer(*(const int64_t *)((const char *)&c->shape + hb_shape_fields[i].offset)));
    json_object_set_new(r, "shape", sh);
    json_object_set_new(r, "shape_str", json_string(hb_shape_format(c->op, &c->shape, shape, sizeof shape)));
    int64_t size = hb_op_output_elems(c->op, &c->shape);
    for (int i = 0; i < info->ninputs; i++) {
        int64_t e = hb_op_input_elems(c->op, &c->shape, i);
        if (e > size) size = e;
    }
    json_object_set_new(r, "size", json_integer(size));
    json_object_set_new(r, "name", json_string(c->name));
    json_object_set_new(r, "source", json_string(c->source));
    json_object_set_new(r, "model", json_string(c->model));
    json_object_set_new(r, "weight", json_real(c->weight > 0 ? c->weight : 1));
    json_object_set_new(r, "dtype", json_string(hb_dtype_name(c->dtype)));
    json_object_set_new(r, "mode", json_string(hb_mode_name(c->mode)));
    json_object_set_new(r, "route", json_string(hb_route_name(c->route)));
    json_object_set_new(r, "flops", hb_json_count(hb_op_flops(c->op, &c->shape)));
    json_object_set_new(r, "bytes", hb_json_count(hb_case_bytes(c)));
    json_object_set_new(r, "bound", json_string(info->compute_bound ? "compute" : "memory"));
    return r;
}

json_t *hb_rec_mode_check_json(const hb_rec_mode_check *m)
{
    json_t *ci = m->has_ci ? json_pack("[o,o]", hb_json_num(m->ci_lo), hb_json_num(m->ci_hi)) : json_null();
    json_t *o = json_pack("{s:s,s:s,s:s,s:o,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:I,s:I,s:s}",
                          "type", "mode_check", "backend", m->backend, "op", m->op, "shape", hb_rec_shape_json(m->shape),
                          "shape_str", m->shape_str, "name", m->name, "dtype", m->dtype, "route", m->route, "mode", m->mode,
                          "ref_mode", m->ref_mode, "ratio", hb_json_num(m->ratio), "ci", ci,
                          "ref_median", hb_json_num(m->ref_median), "median", hb_json_num(m->median),
                          "n", (json_int_t)m->n, "ref_n", (json_int_t)m->ref_n, "verdict", m->verdict);
    if (o && m->paired_passes) json_object_set_new(o, "paired_passes", json_integer(m->paired_passes));
    else if (o && m->paired_rounds) json_object_set_new(o, "paired_rounds", json_integer(m->paired_rounds));
    return o;
}

/* The twelve members of r (at r inside the struct base of table t) set from s and put in t's keys. */
static hb_status stats_put(const hb_rec_table *t, void *base, hb_rec_stats *r, const hb_stats *s)
{
    const double v[12] = {(double)s->n, s->min, s->max, s->mean, s->median, s->p10, s->p90, s->mad, s->stddev, s->cv,
                          s->ci_lo, s->ci_hi};
    double *m[12] = {&r->n, &r->min, &r->max, &r->mean, &r->median, &r->p10, &r->p90, &r->mad, &r->stddev, &r->cv,
                     &r->ci_lo, &r->ci_hi};
    for (int i = 0; i < 12; i++) {
        *m[i] = v[i];
        hb_status st = hb_rec_put(t, base, (size_t)((char *)m[i] - (char *)base));
        if (st) return st;
    }
    return HB_OK;
}

hb_status hb_rec_stats_set(hb_rec_stats *r, const hb_stats *s) { return stats_put(&hb_rec_stats_table, r, r, s); }

hb_status hb_rec_layer_set(hb_rec_layer *l, const hb_stats *s, double enqueue_s)
{
    hb_status st = stats_put(&hb_rec_layer_table, l, &l->st, s);
    return st ? st : HB_REC_SET(hb_rec_layer, l, enqueue_s, enqueue_s);
}

hb_status hb_rec_nums_set(hb_rec_nums *a, const double *v, size_t n)
{
    double *c = n ? malloc(n * sizeof *c) : NULL;
    if (n && !c) return HB_ENOMEM;
    if (n) memcpy(c, v, n * sizeof *c);
    free(a->v);
    *a = (hb_rec_nums){c, n, 1};
    return HB_OK;
}

json_t *hb_rec_case_json(const hb_rec_case *c) { return hb_rec_encode(&hb_rec_case_table, c); }

json_t *hb_rec_plan_json(const hb_rec_plan *p) { return hb_rec_encode(&hb_rec_plan_table, p); }

json_t *hb_rec_end_json(const hb_rec_end *e) { return hb_rec_encode(&hb_rec_end_table, e); }

json_t *hb_rec_backend_json(const hb_rec_backend *b) { return hb_rec_encode(&hb_rec_backend_table, b); }

json_t *hb_rec_meta_json(const hb_rec_meta *m) { return hb_rec_encode(&hb_rec_meta_table, m); }

json_t *hb_rec_ab_summary_json(const hb_rec_ab_summary *a) { return hb_rec_encode(&hb_rec_ab_summary_table, a); }

hb_status hb_end_fill(hb_rec_end *e, size_t cases, const int counts[HB_STATUS_COUNT], double elapsed_s, int passes,
                      int interrupted)
{
    hb_status st = HB_OK;
#define SET(m, x) (st = st ? st : HB_REC_SET(hb_rec_end, e, m, x))
    SET(type, "end");
    SET(cases, (double)cases);
    SET(ok, counts[HB_OK]);
    SET(wrong, counts[HB_EWRONG]);
    SET(failed, counts[HB_EDEVICE] + counts[HB_EINVAL]);
    SET(skipped, counts[HB_ESKIP]);
    SET(crashed, counts[HB_ECRASH]);
    SET(no_resource, counts[HB_ENOMEM]);
    SET(timed_out, counts[HB_ETIMEOUT]);
    SET(elapsed_s, elapsed_s);
    SET(passes, passes);
    SET(interrupted, interrupted != 0);
#undef SET
    return st;
}

json_t *hb_end_record(size_t cases, const int counts[HB_STATUS_COUNT], double elapsed_s, int passes, int interrupted,
                      int serve_round, json_t *backends, json_t *mode_invariance)
{
    hb_rec_end e;
    memset(&e, 0, sizeof e);
    hb_rec_clear(&hb_rec_end_table, &e);
    hb_status st = hb_end_fill(&e, cases, counts, elapsed_s, passes, interrupted);
#define SET(m, x) (st = st ? st : HB_REC_SET(hb_rec_end, &e, m, x))
    if (serve_round >= 0) SET(serve_round, serve_round);
    if (backends) SET(backends, backends);
    if (mode_invariance) SET(mode_invariance, mode_invariance);
#undef SET
    json_t *o = st ? NULL : hb_rec_end_json(&e);
    hb_rec_end_free(&e);
    return o;
}

json_t *hb_case_status_record(const hb_case *c, const char *backend, hb_status st, const char *reason)
{
    json_t *r = hb_case_record(c, backend);
    json_object_set_new(r, "status", json_string(hb_status_name(st)));
    json_object_set_new(r, "reason", json_string(reason ? reason : ""));
    return r;
}


/* ---- output files written whole or not at all ---- */

hb_status hb_outfile_open(hb_outfile *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        /* a device, FIFO or terminal: written straight (it cannot be replaced by a rename) */
        if (!(o->f = fopen(path, "w"))) goto fail;
        return HB_OK;
    }
    size_t n = strlen(path) + 16;
    if (!(o->tmp = malloc(n))) { errno = ENOMEM; goto fail; }
    snprintf(o->tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) { free(o->tmp); o->tmp = NULL; goto fail; }
    mode_t um = umask(0);
    umask(um);
    if (fchmod(fd, 0666 & ~um) != 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
        errno = e;
        goto fail;
    }
    return HB_OK;
fail:
    snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    return HB_EDEVICE;
}

hb_status hb_outfile_close(hb_outfile *o, int keep, char *err, size_t errlen)
{
    int e = 0;
    if (!o->f) return HB_OK;
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f)) e = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !e) e = errno ? errno : EIO;
    o->f = NULL;
    if (o->tmp) {
        if (!e && keep && rename(o->tmp, o->path) != 0) e = errno;
        if (e || !keep) unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
    }
    if (!e) return HB_OK;
    snprintf(err, errlen, "cannot write %s: %s", o->path, strerror(e));
    return HB_EDEVICE;
}
