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

static int tri(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_boolean(v) ? json_is_true(v) : -1;
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

static void stats(json_t *o, hb_rec_stats *s)
{
    s->n = num(o, "n"); s->min = num(o, "min"); s->max = num(o, "max"); s->mean = num(o, "mean");
    s->median = num(o, "median"); s->p10 = num(o, "p10"); s->p90 = num(o, "p90"); s->mad = num(o, "mad");
    s->stddev = num(o, "stddev"); s->cv = num(o, "cv"); s->ci_lo = num(o, "ci_lo"); s->ci_hi = num(o, "ci_hi");
}

/* An array of numbers (null and non-numbers read as NaN). 0 or HB_ENOMEM. */
static hb_status nums(json_t *a, hb_rec_nums *out)
{
    memset(out, 0, sizeof *out);
    if (!json_is_array(a)) return HB_OK;
    out->present = 1;
    size_t n = json_array_size(a);
    if (!n) return HB_OK;
    if (!(out->v = malloc(n * sizeof *out->v))) return HB_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(a, i);
        out->v[i] = json_is_number(x) ? json_number_value(x) : (double)NAN;
    }
    out->n = n;
    return HB_OK;
}

static void shape(json_t *o, hb_rec_shape *s)
{
    memset(s, 0, sizeof *s);
    if (!json_is_object(o)) return;
    s->present = 1;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        int i = 0;
        while (i < hb_shape_nfields && strcmp(hb_shape_fields[i].name, k)) i++;
        if (i == hb_shape_nfields || !json_is_number(v)) continue; /* a field this hybench does not know */
        *(int64_t *)((char *)&s->v + hb_shape_fields[i].offset) = (int64_t)json_number_value(v);
        *(int64_t *)((char *)&s->has + hb_shape_fields[i].offset) = 1;
        if (s->norder < HB_REC_SHAPE_MAXF) s->order[s->norder++] = (signed char)i;
    }
}

static hb_status ranks(json_t *a, hb_rec_rank **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t m = json_array_size(a);
    if (!m) return HB_OK;
    if (!(*out = calloc(m, sizeof **out))) return HB_ENOMEM;
    for (size_t i = 0; i < m; i++) {
        json_t *x = json_array_get(a, i);
        hb_rec_rank *r = &(*out)[i];
        r->rank = num(x, "rank");
        r->backend = str(x, "backend");
        r->status = str(x, "status");
        r->reason = str(x, "reason");
        r->time_s = num(x, "time_s");
        r->busbw_gbps = num(x, "busbw_gbps");
        r->rel_err = num(x, "rel_err");
        r->allreduce_s = num(x, "allreduce_s");
        r->allreduce_share = num(x, "allreduce_share");
    }
    *n = m;
    return HB_OK;
}

static void layer(json_t *o, hb_rec_layer *l)
{
    memset(l, 0, sizeof *l);
    l->present = json_is_object(o);
    stats(o, &l->st);
    l->enqueue_s = num(o, "enqueue_s");
}

void hb_rec_case_free(hb_rec_case *c)
{
    if (!c) return;
    for (int p = 0; p < HB_PH_COUNT; p++) { free(c->samples[p].v); free(c->pass_medians[p].v); }
    free(c->collective.per_rank);
    free(c->tp.per_rank);
    memset(c, 0, sizeof *c);
}

hb_status hb_rec_case_parse(json_t *rec, hb_rec_case *c)
{
    memset(c, 0, sizeof *c);
    c->type = str(rec, "type");
    c->key = str(rec, "key"); c->backend = str(rec, "backend"); c->op = str(rec, "op");
    c->family = str(rec, "family"); c->shape_str = str(rec, "shape_str"); c->name = str(rec, "name");
    c->source = str(rec, "source"); c->model = str(rec, "model"); c->dtype = str(rec, "dtype");
    c->mode = str(rec, "mode"); c->route = str(rec, "route"); c->status = str(rec, "status");
    c->reason = str(rec, "reason"); c->bound = str(rec, "bound"); c->ceiling = str(rec, "ceiling");
    c->impl = str(rec, "impl");
    shape(json_object_get(rec, "shape"), &c->shape);
    c->size = num(rec, "size"); c->flops = num(rec, "flops"); c->bytes = num(rec, "bytes"); c->weight = num(rec, "weight");
    c->gflops = num(rec, "gflops"); c->gbps = num(rec, "gbps");
    c->gflops_total = num(rec, "gflops_total"); c->gbps_total = num(rec, "gbps_total");
    c->fraction = num(rec, "fraction"); c->ceiling_value = num(rec, "ceiling_value");
    c->rel_err = num(rec, "rel_err"); c->tolerance = num(rec, "tolerance");
    c->verified_fraction = num(rec, "verified_fraction"); c->ci_target = num(rec, "ci_target");
    c->warmup_runs = num(rec, "warmup_runs"); c->settle_runs = num(rec, "settle_runs"); c->steps = num(rec, "steps");
    c->weight_bytes = num(rec, "weight_bytes");
    c->ci_met = tri(rec, "ci_met");
    json_t *ph = json_object_get(rec, "phases"), *sm = json_object_get(rec, "samples"),
           *pm = json_object_get(rec, "pass_medians");
    for (int p = 0; p < HB_PH_COUNT; p++) {
        json_t *o = json_object_get(ph, hb_phase_names[p]);
        c->has_phase[p] = o != NULL;
        stats(o, &c->phase[p]);
        if (nums(json_object_get(sm, hb_phase_names[p]), &c->samples[p]) ||
            nums(json_object_get(pm, hb_phase_names[p]), &c->pass_medians[p]))
            goto oom;
    }
    json_t *iw = json_object_get(rec, "interleaved_with"), *bp = json_object_get(rec, "best_pass");
    c->has_interleaved_with = json_is_integer(iw);
    c->interleaved_with = c->has_interleaved_with ? (double)json_integer_value(iw) : (double)NAN;
    c->has_best_pass = bp != NULL;
    c->best_pass_is_int = json_is_integer(bp);
    c->best_pass = c->best_pass_is_int ? (long long)json_integer_value(bp) : -1;
    c->passes = num(rec, "passes");
    json_t *in = json_object_get(rec, "instructions");
    c->has_instructions_per_call = json_object_get(in, "per_call") != NULL;
    c->instructions_per_call = num(in, "per_call");
    json_t *mem = json_object_get(rec, "mem");
    c->mem = (hb_rec_mem){num(mem, "host_bytes"), num(mem, "device_bytes"), num(mem, "staging_bytes"),
                          num(mem, "peak_rss_bytes"), num(mem, "device_free_bytes"), num(mem, "device_total_bytes")};
    layer(json_object_get(rec, "layer"), &c->layer);
    layer(json_object_get(rec, "graph"), &c->graph);
    json_t *co = json_object_get(rec, "collective");
    c->collective.present = json_is_object(co);
    c->collective.size_bytes = num(co, "size_bytes"); c->collective.time_s = num(co, "time_s");
    c->collective.algbw_gbps = num(co, "algbw_gbps"); c->collective.busbw_gbps = num(co, "busbw_gbps");
    c->collective.busbw_factor = num(co, "busbw_factor"); c->collective.ranks = num(co, "ranks");
    c->collective.path = str(co, "path"); c->collective.in_place = tri(co, "in_place");
    if (ranks(json_object_get(co, "per_rank"), &c->collective.per_rank, &c->collective.nper_rank)) goto oom;
    json_t *tp = json_object_get(rec, "tensor_parallel");
    c->tp.present = json_is_object(tp);
    c->tp.ranks = num(tp, "ranks"); c->tp.rank = num(tp, "rank"); c->tp.time_s = num(tp, "time_s");
    c->tp.steps_s = num(tp, "steps_s"); c->tp.allreduce_s = num(tp, "allreduce_s");
    c->tp.allreduce_share = num(tp, "allreduce_share"); c->tp.graph_s = num(tp, "graph_s");
    if (ranks(json_object_get(tp, "per_rank"), &c->tp.per_rank, &c->tp.nper_rank)) goto oom;
    json_t *en = json_object_get(rec, "energy");
    c->energy = (hb_rec_energy){json_is_object(en), str(en, "source"), str(en, "reason"), tri(en, "available"),
                                num(en, "window_s"), num(en, "min_window_s"), num(en, "calls"),
                                num(en, "counter_updates"), num(en, "joules"),
                                num(en, "power_w"), num(en, "j_per_op"), num(en, "s_per_op"), num(en, "idle_power_w"),
                                num(en, "j_per_op_net"), num(en, "gflop_per_j"), num(en, "gb_per_j")};
    json_t *ex = json_object_get(rec, "extra");
    c->extra.conv_exhaustive_best_ms = num(json_object_get(ex, "conv_choice"), "exhaustive_best_ms");
    c->extra.impl = str(ex, "impl");
    return HB_OK;
oom:
    hb_rec_case_free(c);
    return HB_ENOMEM;
}

void hb_rec_meta_free(hb_rec_meta *m)
{
    if (!m) return;
    free(m->load_avg);
    free(m->openblas_text);
    free(m->options_text);
    free(m->clock_text);
    memset(m, 0, sizeof *m);
}

hb_status hb_rec_meta_parse(json_t *rec, hb_rec_meta *m)
{
    memset(m, 0, sizeof *m);
    m->run_id = str(rec, "run_id"); m->tool = str(rec, "tool"); m->tool_version = str(rec, "tool_version");
    m->date = str(rec, "date"); m->command_line = str(rec, "command_line"); m->git_commit = str(rec, "git_commit");
    m->host = str(rec, "host"); m->os = str(rec, "os"); m->compiler = str(rec, "compiler"); m->cflags = str(rec, "cflags");
    json_t *s = json_object_get(rec, "schema");
    m->has_schema = s != NULL;
    m->schema = json_is_integer(s) ? (long long)json_integer_value(s) : 0;
    json_t *cpu = json_object_get(rec, "cpu");
    m->has_cpu = cpu != NULL;
    m->cpu.model = str(cpu, "model");
    m->cpu.sockets = num(cpu, "sockets"); m->cpu.cores = num(cpu, "cores"); m->cpu.pus = num(cpu, "pus");
    m->cpu.numa_nodes = num(cpu, "numa_nodes"); m->cpu.l1d_bytes = num(cpu, "l1d_bytes");
    m->cpu.l2_bytes = num(cpu, "l2_bytes"); m->cpu.l3_bytes = num(cpu, "l3_bytes");
    m->memory_bytes = num(rec, "memory_bytes");
    json_t *ob = json_object_get(rec, "openblas");
    m->openblas.config = str(ob, "config");
    m->openblas.corename = str(ob, "corename");
    m->cases_from = str(json_object_get(rec, "options"), "cases_from");
    m->ab_pair = str(json_object_get(rec, "ab"), "pair");
    m->ranks_n = num(json_object_get(rec, "ranks"), "n");
    static const char *const shown[] = {"openblas", "options", "clock"};
    char **text[] = {&m->openblas_text, &m->options_text, &m->clock_text};
    for (int i = 0; i < 3; i++) {
        json_t *v = json_object_get(rec, shown[i]);
        if (v && !(*text[i] = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(6) | JSON_ENCODE_ANY)))
            return HB_ENOMEM;
    }
    json_t *la = json_object_get(rec, "load_avg");
    m->has_load_avg = json_is_array(la);
    size_t n = json_array_size(la);
    if (n) {
        if (!(m->load_avg = malloc(n * sizeof *m->load_avg))) return HB_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            json_t *x = json_array_get(la, i);
            m->load_avg[i] = json_is_number(x) ? json_number_value(x) : (double)NAN;
        }
        m->nload_avg = n;
    }
    return HB_OK;
}

void hb_rec_backend_free(hb_rec_backend *b)
{
    if (!b) return;
    free(b->ceilings);
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
    b->backend = str(rec, "backend"); b->reason = str(rec, "reason"); b->description = str(rec, "description");
    b->available = tri(rec, "available");
    b->host_memory = json_is_true(json_object_get(rec, "host_memory"));
    json_t *info = json_object_get(rec, "info");
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
    json_t *cs = json_object_get(rec, "ceilings");
    size_t n = json_array_size(cs);
    if (n) {
        if (!(b->ceilings = calloc(n, sizeof *b->ceilings))) return HB_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            json_t *c = json_array_get(cs, i);
            b->ceilings[i] = (hb_rec_ceiling){str(c, "name"), str(c, "unit"), str(c, "how"), num(c, "value")};
        }
        b->nceilings = n;
    }
    return HB_OK;
}

void hb_rec_end_parse(json_t *rec, hb_rec_end *e)
{
    *e = (hb_rec_end){num(rec, "cases"), num(rec, "ok"), num(rec, "wrong"), num(rec, "failed"), num(rec, "skipped"),
                      num(rec, "crashed"), num(rec, "no_resource"), num(rec, "elapsed_s"), num(rec, "passes"),
                      tri(rec, "interrupted")};
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
    free(p->steps);
    memset(p, 0, sizeof *p);
}

hb_status hb_rec_plan_parse(json_t *rec, hb_rec_plan *p)
{
    memset(p, 0, sizeof *p);
    p->model = str(rec, "model"); p->what = str(rec, "what"); p->plan = str(rec, "plan"); p->kind = str(rec, "kind");
    p->route = str(rec, "route"); p->mode = str(rec, "mode"); p->status = str(rec, "status");
    p->reason = str(rec, "reason"); p->starts_in = str(rec, "starts_in"); p->costs_from = str(rec, "costs_from");
    p->predicted_s = num(rec, "predicted_s"); p->bytes_crossing = num(rec, "bytes_crossing");
    p->copies = num(rec, "copies"); p->device_changes = num(rec, "device_changes");
    p->chain_case_s = num(rec, "chain_case_s"); p->rel_err = num(rec, "rel_err"); p->tolerance = num(rec, "tolerance");
    p->ci_target = num(rec, "ci_target"); p->error_pct = num(rec, "error_pct");
    p->ci_met = tri(rec, "ci_met"); p->launch_bound = tri(rec, "launch_bound");
    json_t *ph = json_object_get(rec, "phases");
    for (int i = 0; i < HB_PH_COUNT; i++) {
        json_t *o = json_object_get(ph, hb_phase_names[i]);
        p->has_phase[i] = o != NULL;
        stats(o, &p->phase[i]);
    }
    stats(json_object_get(ph, "host_copy"), &p->host_copy);
    p->has_device = json_object_get(ph, "device") != NULL;
    stats(json_object_get(ph, "device"), &p->device);
    json_t *e = json_object_get(rec, "error_split");
    p->error_split.present = json_is_object(e);
    p->error_split.measured_s = num(e, "measured_s"); p->error_split.predicted_s = num(e, "predicted_s");
    p->error_split.ops_alone_s = num(e, "ops_alone_s"); p->error_split.ops_in_sequence_s = num(e, "ops_in_sequence_s");
    p->error_split.copies_predicted_s = num(e, "copies_predicted_s");
    p->error_split.copies_measured_s = num(e, "copies_measured_s"); p->error_split.rest_s = num(e, "rest_s");
    p->error_split.in_sequence_calls = num(e, "in_sequence_calls");
    json_t *ec = json_object_get(rec, "error_cause");
    p->error_cause.present = json_is_object(ec);
    p->error_cause.term = str(ec, "term");
    p->error_cause.seconds = num(ec, "seconds");
    p->error_cause.share_of_error = num(ec, "share_of_error");
    json_t *st = json_object_get(rec, "steps");
    size_t n = json_array_size(st);
    if (n) {
        if (!(p->steps = calloc(n, sizeof *p->steps))) return HB_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            json_t *s = json_array_get(st, i);
            p->steps[i] = (hb_rec_plan_step){str(s, "label"), str(s, "device"), num(s, "bytes_in"),
                                             num(s, "predicted_compute_s"), num(s, "predicted_transfer_s"),
                                             num(s, "compute_s"), num(s, "transfer_s"), num(s, "in_sequence_s")};
        }
        p->nsteps = n;
    }
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
    if (r->end) hb_rec_end_parse(r->end, r->end_rec);
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
