/* replay_chain.c - the model's chain case beside its plans' replays (replay.h hb_replay_plans): the
 * case it runs, and what a plan's record keeps of it ("chain_in_rounds"). */
#include "measure/internal.h"
#include "core/models.h"
#include <stdio.h>

/* The chain case of model m on inst (resident on a device with its own memory, else f32; route rt,
 * pageable on a host-memory backend):
 * m->whole with this run's mode, route and a source naming the model. */
hb_case hb_replay_chain_case(const hb_model *m, const hb_instance *inst, hb_route rt)
{
    hb_case cc = m->whole;
    cc.dtype = HB_F32;
    cc.mode = inst->host_memory ? HB_MODE_F32 : HB_MODE_RESIDENT;
    cc.route = inst->host_memory ? HB_ROUTE_PAGEABLE : rt; /* a host-memory backend has no transfer routes */
    cc.weight = 1;
    snprintf(cc.name, sizeof cc.name, "%s", m->name);
    snprintf(cc.source, sizeof cc.source, "model %s (core/models.c)", m->name);
    return cc;
}

/* What plan record prec keeps of the chain case crec sampled in its rounds ("chain_in_rounds",
 * docs/results-schema.md): the chain's identity, status and figures, and the replay against it on one
 * clock and span: the plan's device span against the chain's layer as one stream where both have
 * them (the same enqueue of the same ops), else total against total. */
json_t *hb_replay_chain_summary(json_t *crec, json_t *prec)
{
    static const char *const keep[] = {"backend", "mode", "route", "status", "reason", "rel_err", "tolerance", "interleaved_with", "layer", "graph"};
    json_t *o = json_object();
    for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
        json_t *v = json_object_get(crec, keep[k]);
        if (v) json_object_set_new(o, keep[k], json_deep_copy(v));
    }
    json_t *ct = json_object_get(json_object_get(crec, "phases"), "total");
    if (ct) json_object_set_new(o, "total", json_deep_copy(ct));
    json_t *pd = json_object_get(json_object_get(prec, "phases"), "device"), *cl = json_object_get(crec, "layer");
    json_t *pt = json_object_get(json_object_get(prec, "phases"), "total");
    const int span = pd && cl;
    double a = json_number_value(json_object_get(span ? pd : pt, "median")), b = json_number_value(json_object_get(span ? cl : ct, "median"));
    if (a > 0 && b > 0) {
        json_object_set_new(o, "compared", json_string(span ? "phases.device / layer" : "phases.total / total"));
        json_object_set_new(o, "replay_over_chain", json_real(a / b));
    }
    return o;
}
