/* record.c - the records of a results file read into the structs of record.h: the one place where a
 * record's JSON keys are looked up for analysis/ and report/ (read.c validates; this file types).
 * The rule for absent values is record.h's. */
#include "results/results.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *str(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : (double)NAN;
}

int hb_rec_phase_index(const char *name)
{
    for (int i = 0; name && i < HB_PH_COUNT; i++)
        if (!strcmp(name, hb_phase_names[i])) return i;
    return -1;
}

double hb_rec_shape_get(const hb_rec_shape *s, size_t offset)
{
    if (!s || offset + sizeof(int64_t) > sizeof(hb_shape)) return NAN;
    if (!*(const int64_t *)((const char *)&s->has + offset)) return NAN;
    return (double)*(const int64_t *)((const char *)&s->v + offset);
}

void hb_rec_case_free(hb_rec_case *c)
{
    if (!c) return;
    hb_rec_release(&hb_rec_case_table, c);
    memset(c, 0, sizeof *c);
}

/* The read views of a case struct (record.h: has_*, present, extra, instructions_per_call) from
 * what hb_rec_decode filled. */
static void case_views(hb_rec_case *c)
{
    const hb_rec_table *t = &hb_rec_case_table;
#define ENTRY(m) hb_rec_entry_at(t, c, offsetof(hb_rec_case, m))
#define IS(m, type) (ENTRY(m) && ENTRY(m)->form == (type) + 1)
    for (int p = 0; p < HB_PH_COUNT; p++) c->has_phase[p] = ENTRY(phase[p]) != NULL;
    c->has_interleaved_with = IS(interleaved_with, JSON_INTEGER);
    if (!c->has_interleaved_with) c->interleaved_with = NAN;
    c->has_best_pass = ENTRY(best_pass) != NULL;
    c->best_pass_is_int = IS(best_pass, JSON_INTEGER);
    c->has_instructions_per_call =
        IS(instructions, JSON_OBJECT) &&
        hb_rec_entry_at(&hb_rec_instr_table, &c->instructions, offsetof(hb_rec_instr, per_call)) != NULL;
    c->instructions_per_call = c->instructions.per_call;
    c->layer.present = IS(layer, JSON_OBJECT);
    c->graph.present = IS(graph, JSON_OBJECT);
    c->collective.present = IS(collective, JSON_OBJECT);
    c->tp.present = IS(tp, JSON_OBJECT);
    c->energy.present = IS(energy, JSON_OBJECT);
    c->extra.conv_exhaustive_best_ms = num(json_object_get(c->extra_json, "conv_choice"), "exhaustive_best_ms");
    c->extra.impl = str(c->extra_json, "impl");
#undef IS
#undef ENTRY
}

hb_status hb_rec_case_parse(json_t *rec, hb_rec_case *c)
{
    memset(c, 0, sizeof *c);
    if (hb_rec_decode(&hb_rec_case_table, c, rec)) {
        memset(c, 0, sizeof *c);
        return HB_ENOMEM;
    }
    case_views(c);
    return HB_OK;
}

void hb_rec_meta_free(hb_rec_meta *m)
{
    if (!m) return;
    hb_rec_release(&hb_rec_meta_table, m);
    free(m->openblas_text);
    free(m->options_text);
    free(m->clock_text);
    memset(m, 0, sizeof *m);
}

hb_status hb_rec_meta_parse(json_t *rec, hb_rec_meta *m)
{
    memset(m, 0, sizeof *m);
    if (hb_rec_decode(&hb_rec_meta_table, m, rec)) {
        memset(m, 0, sizeof *m);
        return HB_ENOMEM;
    }
    /* the read views (record.h) */
    m->has_schema = json_object_get(rec, "schema") != NULL;
    m->has_cpu = json_object_get(rec, "cpu") != NULL;
    m->ranks_n = num(m->ranks, "n");
    static const char *const shown[] = {"openblas", "options", "clock"};
    char **text[] = {&m->openblas_text, &m->options_text, &m->clock_text};
    for (int i = 0; i < 3; i++) {
        json_t *v = json_object_get(rec, shown[i]);
        if (v && !(*text[i] = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(6) | JSON_ENCODE_ANY))) {
            hb_rec_meta_free(m);
            return HB_ENOMEM;
        }
    }
    return HB_OK;
}

void hb_rec_backend_free(hb_rec_backend *b)
{
    if (!b) return;
    hb_rec_release(&hb_rec_backend_table, b);
    memset(b, 0, sizeof *b);
}

static void ver(json_t *v, hb_rec_ver *out)
{
    *out = (hb_rec_ver){0, NULL, 0};
    if (!v) return;
    if (json_is_string(v)) *out = (hb_rec_ver){1, json_string_value(v), 0};
    else if (json_is_integer(v)) *out = (hb_rec_ver){2, NULL, (long long)json_integer_value(v)};
    else out->kind = 3;
}

hb_status hb_rec_backend_parse(json_t *rec, hb_rec_backend *b)
{
    memset(b, 0, sizeof *b);
    if (hb_rec_decode(&hb_rec_backend_table, b, rec)) {
        memset(b, 0, sizeof *b);
        return HB_ENOMEM;
    }
    /* the read views (record.h) */
    b->host_memory = b->host_memory > 0;
    json_t *info = b->info_json;
    b->info.name = str(info, "name");
    b->info.platform = str(info, "platform");
    b->info.driver_version = str(info, "driver_version");
    b->info.nvml_driver_version = str(info, "nvml_driver_version");
    b->info.runtime_version = str(info, "runtime_version");
    ver(json_object_get(info, "cublas_version"), &b->info.cublas_version);
    ver(json_object_get(info, "cudnn_version"), &b->info.cudnn_version);
    ver(json_object_get(info, "nccl_version"), &b->info.nccl_version);
    b->info.l2_bytes = num(info, "l2_bytes");
    b->info.device_type = str(info, "device_type");
    return HB_OK;
}

hb_status hb_rec_end_parse(json_t *rec, hb_rec_end *e)
{
    memset(e, 0, sizeof *e);
    if (hb_rec_decode(&hb_rec_end_table, e, rec)) {
        memset(e, 0, sizeof *e);
        return HB_ENOMEM;
    }
    return HB_OK;
}

void hb_rec_end_free(hb_rec_end *e)
{
    if (!e) return;
    hb_rec_release(&hb_rec_end_table, e);
    memset(e, 0, sizeof *e);
}

void hb_rec_baseline_parse(json_t *p, hb_rec_baseline *b)
{
    *b = (hb_rec_baseline){str(p, "fingerprint"), str(p, "host"), str(p, "cpu_model"), str(p, "run_id"), str(p, "date"),
                           str(p, "git_commit"), str(p, "source"), str(p, "set_at"), str(p, "set_by"),
                           (long long)json_integer_value(json_object_get(p, "cases")),
                           (long long)json_integer_value(json_object_get(p, "ok")),
                           (long long)json_integer_value(json_object_get(p, "wrong")),
                           (long long)json_integer_value(json_object_get(p, "crashed")),
                           json_is_true(json_object_get(p, "complete"))};
}

void hb_rec_plan_free(hb_rec_plan *p)
{
    if (!p) return;
    hb_rec_release(&hb_rec_plan_table, p);
    memset(p, 0, sizeof *p);
}

hb_status hb_rec_plan_parse(json_t *rec, hb_rec_plan *p)
{
    memset(p, 0, sizeof *p);
    if (hb_rec_decode(&hb_rec_plan_table, p, rec)) {
        memset(p, 0, sizeof *p);
        return HB_ENOMEM;
    }
    /* the read views (record.h) */
    const hb_rec_table *t = &hb_rec_plan_table;
#define ENTRY(m) hb_rec_entry_at(t, p, offsetof(hb_rec_plan, m))
    for (int i = 0; i < HB_PH_COUNT; i++) p->has_phase[i] = ENTRY(phase[i]) != NULL;
    p->has_device = ENTRY(device) != NULL;
    p->error_split.present = ENTRY(error_split.keys) && ENTRY(error_split.keys)->form == JSON_OBJECT + 1;
    p->error_cause.present = ENTRY(error_cause.keys) && ENTRY(error_cause.keys)->form == JSON_OBJECT + 1;
#undef ENTRY
    return HB_OK;
}

void hb_run_unindex(hb_run *r)
{
    if (!r) return;
    if (r->meta_rec) hb_rec_meta_free(r->meta_rec);
    free(r->meta_rec);
    for (size_t i = 0; i < r->nbackend_recs; i++) hb_rec_backend_free(&r->backend_recs[i]);
    free(r->backend_recs);
    for (size_t i = 0; i < r->ncase_recs; i++) hb_rec_case_free(&r->case_recs[i]);
    free(r->case_recs);
    for (size_t i = 0; i < r->nplan_recs; i++) hb_rec_plan_free(&r->plan_recs[i]);
    free(r->plan_recs);
    if (r->end_rec) hb_rec_end_free(r->end_rec);
    free(r->end_rec);
    r->meta_rec = NULL; r->backend_recs = NULL; r->case_recs = NULL; r->plan_recs = NULL; r->end_rec = NULL;
    r->nbackend_recs = r->ncase_recs = r->nplan_recs = 0;
}

hb_status hb_run_index(hb_run *r)
{
    hb_run_unindex(r);
    size_t nb = json_array_size(r->backends), nc = json_array_size(r->cases), np = json_array_size(r->plans);
    if ((r->meta && !(r->meta_rec = calloc(1, sizeof *r->meta_rec))) ||
        (r->end && !(r->end_rec = calloc(1, sizeof *r->end_rec))) ||
        (nb && !(r->backend_recs = calloc(nb, sizeof *r->backend_recs))) ||
        (nc && !(r->case_recs = calloc(nc, sizeof *r->case_recs))) ||
        (np && !(r->plan_recs = calloc(np, sizeof *r->plan_recs))))
        goto oom;
    if (r->meta && hb_rec_meta_parse(r->meta, r->meta_rec)) goto oom;
    if (r->end && hb_rec_end_parse(r->end, r->end_rec)) goto oom;
    for (; r->nbackend_recs < nb; r->nbackend_recs++)
        if (hb_rec_backend_parse(json_array_get(r->backends, r->nbackend_recs), &r->backend_recs[r->nbackend_recs])) goto oom;
    for (; r->ncase_recs < nc; r->ncase_recs++)
        if (hb_rec_case_parse(json_array_get(r->cases, r->ncase_recs), &r->case_recs[r->ncase_recs])) goto oom;
    for (; r->nplan_recs < np; r->nplan_recs++)
        if (hb_rec_plan_parse(json_array_get(r->plans, r->nplan_recs), &r->plan_recs[r->nplan_recs])) goto oom;
    return HB_OK;
oom:
    hb_run_unindex(r);
    return HB_ENOMEM;
}
