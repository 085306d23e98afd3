/*
 * test_records.c - the records of a results file read into their structs (results/record.h): a file
 * of random records written with hb_record_write (meta, backends with ceilings, cases with every
 * typed part, a plan, an end record, a record of an unknown type) is loaded with hb_run_load and every
 * struct member is compared with the value written; absent members read as the rule of record.h says
 * (NaN, NULL, -1, 0); the structs are poisoned before each parse so that a member the parser forgets
 * fails; and a corrupt line still fails the load with its line named.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "results/results.h"
#include "core/rstats.h"

static hb_rng g;

/* a random positive figure of a few decades, exactly representable after the writer's 7 digits */
static double rnd(void)
{
    char b[32];
    snprintf(b, sizeof b, "%.6e", exp(10 * hb_rng_uniform(&g) - 12));
    return atof(b);
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-6 * fabs(b); }

/* The stats object of random samples (seconds). */
static json_t *stats_of(double *v, int n, hb_stats *st)
{
    hb_stats_compute(v, (size_t)n, st);
    return hb_stats_json(st);
}

static void check_stats(const hb_rec_stats *r, const hb_stats *st)
{
    assert_true(r->n == (double)st->n);
    assert_true(close_to(r->min, st->min) && close_to(r->max, st->max) && close_to(r->median, st->median));
    assert_true(close_to(r->mean, st->mean) && close_to(r->p10, st->p10) && close_to(r->p90, st->p90));
    assert_true(close_to(r->ci_lo, st->ci_lo) && close_to(r->ci_hi, st->ci_hi));
}

typedef struct written {
    double samples_total[40], samples_compute[40], pass[3];
    int nsamples;
    hb_stats total, compute, layer;
    double size, flops, bytes, gflops, gbps, fraction, rel_err, host_bytes, device_bytes, rss, busbw, share, joules;
    int64_t m, n, k;
    int interleaved, best_pass, ci_met;
    double per_call;
    char key[128];
} written;

static void test_round_trip(void **state)
{
    (void)state;
    hb_rng_seed(&g, 20261128u ^ (uint64_t)getpid());
    char path[] = "/tmp/hb_test_records_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    double cores = (double)(1 + hb_rng_next(&g) % 64), l3 = (double)((1 + hb_rng_next(&g) % 512) << 20), mem = rnd() * 1e12;
    assert_int_equal(hb_record_write(fd, json_pack("{s:s,s:s,s:s,s:s,s:{s:s,s:f,s:f},s:f,s:{s:s},s:[f,f,f],s:{s:s}}", "type", "meta",
                                                   "run_id", "run-7", "host", "h1", "git_commit", "abc", "cpu", "model", "CPU X",
                                                   "cores", cores, "l3_bytes", l3, "memory_bytes", mem, "openblas", "config",
                                                   "OpenBLAS 0.3", "load_avg", 0.5, 1.5, 2.5, "options", "cases_from", "keys.txt")),
                     HB_OK);
    double peak = rnd() * 1e3, copy = rnd() * 1e3;
    assert_int_equal(hb_record_write(fd, json_pack("{s:s,s:s,s:b,s:b,s:{s:s,s:i},s:[{s:s,s:f,s:s},{s:s,s:f},{s:s,s:n}]}", "type",
                                                   "backend", "backend", "cuda:0", "available", 1, "host_memory", 0, "info", "name",
                                                   "GPU Y", "cudnn_version", 91400, "ceilings", "name", "peak_gflops_f32", "value",
                                                   peak, "unit", "GFLOP/s", "name", "copy_gbps", "value", copy, "name", "null_one", "value")),
                     HB_OK);
    enum { NC = 12 };
    written w[NC];
    for (int i = 0; i < NC; i++) {
        written *x = &w[i];
        memset(x, 0, sizeof *x);
        hb_case c = {0};
        c.op = HB_OP_MATMUL;
        x->m = 1 + (int64_t)(hb_rng_next(&g) % 4096);
        x->n = 1 + (int64_t)(hb_rng_next(&g) % 4096);
        x->k = 1 + (int64_t)(hb_rng_next(&g) % 4096);
        c.shape.m = x->m;
        c.shape.n = x->n;
        c.shape.k = x->k;
        c.dtype = HB_F32;
        c.mode = (hb_mode)(hb_rng_next(&g) % 2);
        snprintf(c.name, sizeof c.name, "case%d", i);
        json_t *r = hb_case_record(&c, "cuda:0");
        snprintf(x->key, sizeof x->key, "%s", json_string_value(json_object_get(r, "key")));
        x->size = json_number_value(json_object_get(r, "size"));
        x->flops = json_number_value(json_object_get(r, "flops"));
        x->bytes = json_number_value(json_object_get(r, "bytes"));
        x->nsamples = 5 + (int)(hb_rng_next(&g) % 30);
        for (int j = 0; j < x->nsamples; j++) { x->samples_total[j] = rnd(); x->samples_compute[j] = rnd(); }
        json_t *ph = json_object(), *sm = json_object(), *st = json_array(), *sc = json_array();
        json_object_set_new(ph, "total", stats_of(x->samples_total, x->nsamples, &x->total));
        json_object_set_new(ph, "compute", stats_of(x->samples_compute, x->nsamples, &x->compute));
        for (int j = 0; j < x->nsamples; j++) {
            json_array_append_new(st, json_real(x->samples_total[j]));
            json_array_append_new(sc, json_real(x->samples_compute[j]));
        }
        json_object_set_new(sm, "total", st);
        json_object_set_new(sm, "compute", sc);
        json_object_set_new(r, "phases", ph);
        json_object_set_new(r, "samples", sm);
        json_object_set_new(r, "status", json_string(i == NC - 1 ? "wrong" : "ok"));
        json_object_set_new(r, "reason", json_string(i == NC - 1 ? "rel_err 1 > 1e-3" : ""));
        x->gflops = rnd(); x->gbps = rnd(); x->fraction = rnd(); x->rel_err = rnd();
        json_object_set_new(r, "gflops", json_real(x->gflops));
        json_object_set_new(r, "gbps", json_real(x->gbps));
        json_object_set_new(r, "fraction", json_real(x->fraction));
        json_object_set_new(r, "rel_err", json_real(x->rel_err));
        x->ci_met = (int)(hb_rng_next(&g) % 3) - 1; /* -1: absent */
        if (x->ci_met >= 0) json_object_set_new(r, "ci_met", json_boolean(x->ci_met));
        x->host_bytes = (double)(hb_rng_next(&g) % (1u << 30)); x->device_bytes = (double)(hb_rng_next(&g) % (1u << 30));
        x->rss = (double)(hb_rng_next(&g) % (1u << 30));
        json_object_set_new(r, "mem", json_pack("{s:o,s:o,s:o}", "host_bytes", hb_json_count(x->host_bytes), "device_bytes",
                                                hb_json_count(x->device_bytes), "peak_rss_bytes", hb_json_count(x->rss)));
        x->interleaved = (int)(hb_rng_next(&g) % 3);
        if (x->interleaved) json_object_set_new(r, "interleaved_with", json_integer(x->interleaved));
        x->best_pass = (int)(hb_rng_next(&g) % 3);
        for (int p = 0; p < 3; p++) x->pass[p] = rnd();
        if (x->best_pass) {
            json_object_set_new(r, "best_pass", json_integer(x->best_pass));
            json_object_set_new(r, "pass_medians", json_pack("{s:[f,n,f]}", "compute", x->pass[0], x->pass[2]));
        }
        x->per_call = (double)(hb_rng_next(&g) % 1000000);
        if (i % 2) json_object_set_new(r, "instructions", json_pack("{s:s,s:f}", "tool", "callgrind", "per_call", x->per_call));
        double lay[9];
        for (int j = 0; j < 9; j++) lay[j] = rnd();
        json_t *ly = stats_of(lay, 9, &x->layer);
        json_object_set_new(ly, "enqueue_s", json_real(0.5));
        json_object_set_new(r, "layer", ly);
        x->busbw = rnd(); x->share = rnd(); x->joules = rnd();
        json_object_set_new(r, "collective", json_pack("{s:f,s:b,s:s,s:[{s:i,s:s,s:f}]}", "busbw_gbps", x->busbw, "in_place", 1,
                                                       "path", "nccl", "per_rank", "rank", 1, "status", "ok", "time_s", 0.25));
        json_object_set_new(r, "tensor_parallel", json_pack("{s:i,s:f}", "ranks", 2, "allreduce_share", x->share));
        json_object_set_new(r, "energy", json_pack("{s:s,s:b,s:f}", "source", "nvml", "available", 1, "joules", x->joules));
        json_object_set_new(r, "extra", json_pack("{s:s,s:{s:f}}", "impl", "cublas", "conv_choice", "exhaustive_best_ms", 0.125));
        assert_int_equal(hb_record_write(fd, r), HB_OK);
    }
    assert_int_equal(hb_record_write(fd, json_pack("{s:s,s:s}", "type", "future_kind", "x", "y")), HB_OK); /* ignored */
    assert_int_equal(hb_record_write(fd, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:f,s:{s:{s:f,s:f,s:f}},s:[{s:s,s:s},{s:s,s:s}],"
                                                   "s:{s:f,s:f}}",
                                                   "type", "plan", "model", "m1", "plan", "optimal", "kind", "optimal", "route",
                                                   "pinned", "mode", "f32", "status", "ok", "predicted_s", 0.004, "phases", "total",
                                                   "median", 0.005, "ci_lo", 0.0045, "ci_hi", 0.0055, "steps", "label", "q_proj",
                                                   "device", "cuda:0", "label", "rmsnorm", "device", "cpu", "error_split",
                                                   "measured_s", 0.005, "rest_s", 0.001)),
                     HB_OK);
    assert_int_equal(hb_record_write(fd, json_pack("{s:s,s:i,s:i,s:i,s:f,s:b}", "type", "end", "cases", NC, "ok", NC - 1, "wrong", 1,
                                                   "elapsed_s", 12.5, "interrupted", 0)),
                     HB_OK);
    close(fd);

    hb_run r;
    char err[256];
    assert_int_equal(hb_run_load(path, &r, err, sizeof err), HB_OK);
    /* meta */
    const hb_rec_meta *m = r.meta_rec;
    assert_non_null(m);
    assert_string_equal(m->run_id, "run-7");
    assert_string_equal(m->host, "h1");
    assert_null(m->date);
    assert_true(m->has_schema && m->schema == HB_SCHEMA_VERSION);
    assert_string_equal(m->cpu.model, "CPU X");
    assert_true(m->cpu.cores == cores && close_to(m->cpu.l3_bytes, l3) && isnan(m->cpu.l2_bytes)); /* reals: 7 digits */
    assert_true(close_to(m->memory_bytes, mem));
    assert_string_equal(m->openblas.config, "OpenBLAS 0.3");
    assert_string_equal(m->options.cases_from, "keys.txt");
    assert_null(m->ab.pair);
    assert_true(m->load_avg.present && m->load_avg.n == 3 && m->load_avg.v[1] == 1.5);
    assert_string_equal(m->openblas_text, "{\"config\":\"OpenBLAS 0.3\"}");
    assert_null(m->clock_text);
    /* backend */
    assert_int_equal(r.nbackend_recs, 1);
    const hb_rec_backend *b = &r.backend_recs[0];
    assert_string_equal(b->backend, "cuda:0");
    assert_true(b->available == 1 && b->host_memory == 0);
    assert_string_equal(b->info.name, "GPU Y");
    assert_true(b->info.cudnn_version.kind == 2 && b->info.cudnn_version.n == 91400 && b->info.cublas_version.kind == 0);
    assert_int_equal(b->nceilings, 3);
    assert_string_equal(b->ceilings[0].unit, "GFLOP/s");
    assert_true(close_to(hb_run_ceiling(&r, "cuda:0", "peak_gflops_f32"), peak));
    assert_true(close_to(hb_run_ceiling(&r, "cuda:0", "copy_gbps"), copy));
    assert_true(hb_run_ceiling(&r, "cuda:0", "null_one") == 0); /* a null value reads 0, a missing ceiling NaN */
    assert_true(isnan(hb_run_ceiling(&r, "cuda:0", "triad_gbps")) && isnan(hb_run_ceiling(&r, "cpu", "copy_gbps")));
    /* cases, in file order */
    assert_int_equal(r.ncase_recs, NC);
    assert_int_equal(json_array_size(r.cases), NC);
    for (int i = 0; i < NC; i++) {
        const hb_rec_case *c = &r.case_recs[i];
        const written *x = &w[i];
        assert_string_equal(c->type, "case");
        assert_string_equal(c->key, x->key);
        assert_string_equal(c->backend, "cuda:0");
        assert_string_equal(c->op, "matmul");
        assert_string_equal(c->family, "matmul");
        assert_string_equal(c->status, i == NC - 1 ? "wrong" : "ok");
        assert_true(HB_REC_SHAPE(&c->shape, m) == (double)x->m && HB_REC_SHAPE(&c->shape, n) == (double)x->n &&
                    HB_REC_SHAPE(&c->shape, k) == (double)x->k && isnan(HB_REC_SHAPE(&c->shape, seq)));
        assert_true(c->shape.present && c->shape.norder == 3);
        assert_true(c->size == x->size && c->flops == x->flops && c->bytes == x->bytes && c->weight == 1);
        assert_true(close_to(c->gflops, x->gflops) && close_to(c->gbps, x->gbps) && close_to(c->fraction, x->fraction) &&
                    close_to(c->rel_err, x->rel_err));
        assert_true(isnan(c->gflops_total) && isnan(c->tolerance) && isnan(c->weight_bytes));
        assert_int_equal(c->ci_met, x->ci_met);
        assert_true(c->has_phase[HB_PH_TOTAL] && c->has_phase[HB_PH_COMPUTE] && !c->has_phase[HB_PH_H2D]);
        check_stats(&c->phase[HB_PH_TOTAL], &x->total);
        check_stats(&c->phase[HB_PH_COMPUTE], &x->compute);
        assert_true(isnan(c->phase[HB_PH_H2D].median));
        assert_int_equal(c->samples[HB_PH_TOTAL].n, x->nsamples);
        assert_int_equal(c->samples[HB_PH_COMPUTE].n, x->nsamples);
        assert_int_equal(c->samples[HB_PH_D2H].n, 0);
        for (int j = 0; j < x->nsamples; j++) {
            assert_true(close_to(c->samples[HB_PH_TOTAL].v[j], x->samples_total[j]));
            assert_true(close_to(c->samples[HB_PH_COMPUTE].v[j], x->samples_compute[j]));
        }
        assert_int_equal(c->has_interleaved_with, x->interleaved != 0);
        if (x->interleaved) assert_true(c->interleaved_with == x->interleaved);
        else assert_true(isnan(c->interleaved_with));
        assert_int_equal(c->has_best_pass, x->best_pass != 0);
        assert_true(c->best_pass == (x->best_pass ? x->best_pass : -1));
        if (x->best_pass) {
            const hb_rec_nums *p = &c->pass_medians[HB_PH_COMPUTE];
            assert_true(p->present && p->n == 3 && close_to(p->v[0], x->pass[0]) && isnan(p->v[1]) && close_to(p->v[2], x->pass[2]));
        } else {
            assert_false(c->pass_medians[HB_PH_COMPUTE].present);
        }
        assert_int_equal(c->has_instructions_per_call, i % 2);
        if (i % 2) assert_true(c->instructions_per_call == x->per_call);
        else assert_true(isnan(c->instructions_per_call));
        assert_true(c->mem.host_bytes == x->host_bytes && c->mem.device_bytes == x->device_bytes && c->mem.peak_rss_bytes == x->rss);
        assert_true(isnan(c->mem.staging_bytes));
        assert_true(c->layer.present && !c->graph.present && c->layer.enqueue_s == 0.5);
        check_stats(&c->layer.st, &x->layer);
        assert_true(c->collective.present && close_to(c->collective.busbw_gbps, x->busbw) && c->collective.in_place == 1);
        assert_string_equal(c->collective.path, "nccl");
        assert_true(isnan(c->collective.size_bytes));
        assert_true(c->collective.nper_rank == 1 && c->collective.per_rank[0].rank == 1 && c->collective.per_rank[0].time_s == 0.25);
        assert_string_equal(c->collective.per_rank[0].status, "ok");
        assert_null(c->collective.per_rank[0].backend);
        assert_true(c->tp.present && c->tp.ranks == 2 && close_to(c->tp.allreduce_share, x->share) && isnan(c->tp.graph_s));
        assert_true(c->energy.present && c->energy.available == 1 && close_to(c->energy.joules, x->joules) && isnan(c->energy.power_w));
        assert_string_equal(c->energy.source, "nvml");
        assert_string_equal(c->extra.impl, "cublas");
        assert_true(c->extra.conv_exhaustive_best_ms == 0.125);
        assert_null(c->impl);
    }
    assert_string_equal(r.case_recs[NC - 1].reason, "rel_err 1 > 1e-3");
    /* plan */
    assert_int_equal(r.nplan_recs, 1);
    const hb_rec_plan *p = &r.plan_recs[0];
    assert_string_equal(p->kind, "optimal");
    assert_true(p->predicted_s == 0.004 && p->phase[HB_PH_TOTAL].median == 0.005 && p->has_phase[HB_PH_TOTAL]);
    assert_true(p->nsteps == 2);
    assert_string_equal(p->steps[1].device, "cpu");
    assert_true(p->error_split.present && p->error_split.rest_s == 0.001 && isnan(p->error_split.ops_alone_s));
    assert_true(p->ci_met == -1 && !p->has_device);
    /* end */
    assert_non_null(r.end_rec);
    assert_true(r.end_rec->cases == NC && r.end_rec->wrong == 1 && r.end_rec->elapsed_s == 12.5 && r.end_rec->interrupted == 0);
    assert_true(isnan(r.end_rec->crashed));
    hb_run_free(&r);
    assert_null(r.case_recs);

    /* a corrupt line: the load fails with the line named, as before the structs */
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("{\"type\":\"case\",\"status\":\"ok\",\"phases\":{\"total\":{\"median\":-1}}}\n", f);
    fclose(f);
    assert_int_equal(hb_run_load(path, &r, err, sizeof err), HB_EINVAL);
    assert_non_null(strstr(err, ":18: phases.total.median: -1 is negative"));
    assert_null(r.case_recs);
    unlink(path);
}

/* A case record parsed on its own: every member poisoned first, then written by the parser. */
static void test_parse_poisoned(void **state)
{
    (void)state;
    json_t *rec = json_pack("{s:s,s:s,s:{s:i,s:i}}", "type", "case", "op", "attention", "shape", "seq", 1, "kv_seq", 512);
    hb_rec_case c;
    memset(&c, 0xa5, sizeof c);
    assert_int_equal(hb_rec_case_parse(rec, &c), HB_OK);
    assert_null(c.key);
    assert_string_equal(c.op, "attention");
    assert_true(HB_REC_SHAPE(&c.shape, seq) == 1 && HB_REC_SHAPE(&c.shape, kv_seq) == 512 && isnan(HB_REC_SHAPE(&c.shape, n)));
    assert_true(c.shape.order[0] == 0 || c.shape.norder == 2);
    for (int p = 0; p < HB_PH_COUNT; p++) {
        assert_false(c.has_phase[p]);
        assert_true(isnan(c.phase[p].median) && isnan(c.phase[p].ci_hi));
        assert_true(c.samples[p].n == 0 && c.samples[p].v == NULL && !c.pass_medians[p].present);
    }
    assert_true(isnan(c.size) && isnan(c.gflops) && c.ci_met == -1 && c.best_pass == -1 && !c.has_best_pass);
    assert_true(!c.layer.present && isnan(c.layer.st.median) && !c.collective.present && !c.tp.present && !c.energy.present);
    assert_true(c.collective.per_rank == NULL && c.collective.in_place == -1 && c.energy.available == -1);
    assert_true(isnan(c.mem.host_bytes) && isnan(c.extra.conv_exhaustive_best_ms) && c.extra.impl == NULL);
    /* its shape written back as the mode_check record writes it: the record's fields, in its order */
    json_t *sj = hb_rec_shape_json(&c.shape);
    char *s = json_dumps(sj, JSON_COMPACT);
    assert_string_equal(s, "{\"seq\":1,\"kv_seq\":512}");
    free(s);
    json_decref(sj);
    hb_rec_case_free(&c);
    json_decref(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_round_trip), cmocka_unit_test(test_parse_poisoned)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
