/*
 * plan_costs.h - the cost table of a model's plans, read from a results file (plan_costs.c;
 * docs/plans.md). For each op of the model (core/models.h) and each backend:
 *   cost: the compute phase's median of its ok case (dtype f32) in mode resident, else in mode f32
 *         (the same kernel on data already in the device's memory; host-memory backends have no
 *         resident mode), lowest over routes. Never the per-call total: an executor places weights
 *         once, so the per-call upload of a 2048x2048 weight is not a cost of the op.
 *   rank: the routing table's time of that op (analysis/routing.h: mode f32 total, lowest over routes),
 *         which the greedy plan follows.
 * and per route and device memory, the copy cost of its link with host memory: bandwidth from the
 * backend's ceilings h2d_gbps_<route> / d2h_gbps_<route>, latency per copy from the same backend's
 * mode-f32 cases on that route (median over cases moving <= 1 MiB per copy of (phase median -
 * bytes / bandwidth) per copy, at least 0; 0 when no such case ran).
 */
#ifndef HB_PLAN_COSTS_H
#define HB_PLAN_COSTS_H
#include "analysis/plan.h"
#include "core/models.h"
#include "results/results.h"

#define HB_PLAN_MAXDEV 8

typedef struct hb_plan_device {
    char id[64];       /* backend instance, as the results file names it ("opencl:0:0") */
    char type[16];     /* "cpu", "cpu-ref", "opencl", "cuda", ... */
    int host_memory;   /* computes in host memory (no copies to or from it) */
    int mem;           /* its memory in the problem (0: host) */
} hb_plan_device;

typedef struct hb_plan_costs {
    const hb_model *model;            /* borrowed */
    int ndev, nmem;
    hb_plan_device dev[HB_PLAN_MAXDEV];
    int mem[HB_PLAN_MAXDEV];          /* dev[d].mem, as hb_plan_problem wants it */
    int *in;                          /* owned: nops x HB_PLAN_MAXIN */
    double *bytes;                    /* owned: nops + 1 */
    double *cost;                     /* owned: nops x ndev */
    double *rank;                     /* owned: nops x ndev (NaN: no mode-f32 case) */
    const char **cost_mode;           /* owned array, static strings: "resident", "f32" or NULL */
    double whole_s[HB_PLAN_MAXDEV];   /* the model's end-to-end case (hb_model.whole: the chain) on each
                                         backend, mode resident, else f32: the median of its layer as one
                                         stream (`layer`), else of its total; NaN: none */
    int route_ok[HB_ROUTE_COUNT];     /* every device memory has this route's ceilings */
    hb_plan_link link[HB_ROUTE_COUNT][HB_PLAN_MAXMEM];
    int lat_cases[HB_ROUTE_COUNT][HB_PLAN_MAXMEM]; /* cases the latency came from (0: bandwidth only) */
} hb_plan_costs;

/* Why hb_plan_costs_build refused. */
typedef enum hb_plan_costs_why {
    HB_PLAN_COSTS_BAD = 0,     /* no backend to plan over, a named backend unknown (err) */
    HB_PLAN_COSTS_MISSING = 1  /* an op's case, or a route's ceilings, are missing (err names them) */
} hb_plan_costs_why;

/* The costs of model m in run r over `backends` (comma-separated instance ids or types, NULL: every
 * available backend of the file with an ok case, except the reference cpu-ref) and `routes` (NULL:
 * every route whose ceilings all device memories have; named routes must be there). Every op must
 * have a cost on every backend, or the table is refused with the list of what is missing (so that
 * no single-device plan silently skips an op). Returns HB_OK, HB_EINVAL with *why and the reason in
 * err (size errlen), or HB_ENOMEM. */
hb_status hb_plan_costs_build(const hb_run *r, const hb_model *m, const char *backends, const char *routes, hb_plan_costs *c,
                              hb_plan_costs_why *why, char *err, size_t errlen);
/* The problem over c for one route (route < 0: none, where no device has its own memory). */
hb_plan_problem hb_plan_costs_problem(const hb_plan_costs *c, int route);
void hb_plan_costs_free(hb_plan_costs *c);

/* One plan of a model, evaluated on one route. */
typedef struct hb_plan_named {
    char name[80];       /* "single: cpu", "seed heuristic", "greedy (routing.json)", "optimal" */
    const char *kind;    /* "single", "heuristic", "greedy", "optimal" (static) */
    int *dev;            /* owned: nops, the device of each op */
    const char **why;    /* owned: nops, why each op is there (static strings; NULL entries: no reason
                            beyond the plan's own) */
    hb_plan_result res;  /* owned */
} hb_plan_named;

/* The seed heuristic's devices (plan.h, hb_plan_seed_role) among c's backends: the GPU rule to the
 * first cuda backend, else opencl, else cpu (the plan's fallback chain CUDA -> OpenCL -> CPU); the
 * Neural Engine rule, unavailable off Apple hardware, to `ane` (an id or type of c's backends; NULL:
 * the GPU rule's device); the CPU rule to the first cpu backend, else the first backend computing in
 * host memory. Fills gpu, ane_dev, cpu (device indices). Returns HB_OK, or HB_EINVAL with *why
 * (HB_PLAN_COSTS_BAD: `ane` names no backend; HB_PLAN_COSTS_MISSING: no backend for the CPU rule). */
hb_status hb_plan_seed_devices(const hb_plan_costs *c, const char *ane, int *gpu, int *ane_dev, int *cpu, hb_plan_costs_why *why, char *err,
                               size_t errlen);

/* Every plan of c on route (hb_plan_costs_problem): each single-device plan in backend order, the seed
 * heuristic (ane as hb_plan_seed_devices), the greedy plan (ranked by the routing table's time; an op
 * with no mode-f32 case on any backend falls back to its lowest cost, and why[] says so) and the
 * optimal plan. *out: owned array of *n (hb_plan_named_free). Returns HB_OK, HB_EINVAL (*why, err)
 * or HB_ENOMEM. */
hb_status hb_plan_costs_plans(const hb_plan_costs *c, int route, const char *ane, hb_plan_named **out, int *n, hb_plan_costs_why *why, char *err,
                              size_t errlen);
void hb_plan_named_free(hb_plan_named *p, int n);

/* ---- writing (plan_write.c) ---- */
/* The head: model, backends, what an op costs, the seed heuristic's devices (gpu, ane, cpu as
 * hb_plan_seed_devices gives them). Text (Markdown) and JSON (new reference). */
void hb_plan_write_head(FILE *f, const hb_plan_costs *c, const char *path, int gpu, int ane, int cpu);
json_t *hb_plan_json_head(const hb_plan_costs *c, const char *path, int gpu, int ane, int cpu);
/* One route's plans (route < 0: none, no device has its own memory): its links, the plans' totals
 * against the optimal and the best single device, and each op's device per plan. */
void hb_plan_write_route(FILE *f, const hb_plan_costs *c, int route, const hb_plan_named *p, int n);
json_t *hb_plan_json_route(const hb_plan_costs *c, int route, const hb_plan_named *p, int n);

/* Where a replayed plan's prediction misses, from its record's error_split (measure/replay.h): one
 * line such as "ops in sequence +8.1 us, copies +0.0 us, launches and syncs +9.2 us (of -17.3 us)",
 * each term measured - predicted (the rest's prediction is 0), times in the units fmt picks. Writes
 * "-" when the record has no split (mode convert, a failed replay, a record older than the split).
 * rec borrowed (a record read into its struct: hb_rec_plan_parse, or an hb_run's plan_recs); buf of
 * len bytes owned by the caller; returns buf. */
const char *hb_plan_error_split_str(const hb_rec_plan *rec, char *buf, size_t len);

#endif
