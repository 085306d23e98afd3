/*
 * plan.h - device plans for a model under measured costs (plan.c: pure functions over a cost table,
 * no results file; plan_costs.c: the cost table of a model from a results file). docs/plans.md.
 *
 * A plan puts each op of a model (ops in execution order, each reading tensors made before it) on a
 * device. Its predicted time is the sum over ops of the op's measured time on its device plus the
 * copies of the activations that are not yet in that device's memory: a tensor copied once stays
 * there too (a later op on that memory reads it for free). Devices that share memory (cpu, cpu-ref:
 * host memory) never copy between them. A copy from host memory to a device costs h2d, back d2h;
 * between two devices it goes through host memory (d2h then h2d). The time of a copy of b bytes is
 * lat + b / bw of its direction on the plan's route.
 *
 * The optimal plan is a shortest path (dynamic programming) over the ops: the state after op i is
 * where each live tensor is (a set of memories per tensor; a tensor is live while a later op reads
 * it), so a residual branch (a tensor read again several ops later, on whatever device that op runs)
 * is costed, not dropped. Exact under this cost model.
 *
 * Boundaries: a whole network starts with its input in host memory and ends with its output copied
 * back there; a repeated unit (cyclic: a decoder layer, a bottleneck block) starts with its input in
 * one memory and must leave its output in that same memory (the next unit's input), the memory
 * chosen for the least time.
 */
#ifndef HB_PLAN_H
#define HB_PLAN_H
#include <stddef.h>
#include "core/hybench.h"

#define HB_PLAN_MAXIN 3    /* activation inputs per op */
#define HB_PLAN_MAXMEM 8   /* memories (host + devices' own) */
#define HB_PLAN_MAXLIVE 8  /* tensors live at once (the DP's state holds one memory set per live tensor) */

/* The seed's heuristic (select_optimal_device of the F32 hybrid executor, shared/seeds/000_*.txt):
 * matmul with size > 10000 elements -> GPU (Metal there); conv2d -> Neural Engine (CoreML); activations
 * (the ops whose HB_OP_LIST row says activation: relu, gelu, silu, ...) -> Neural Engine; everything else -> CPU. size: the case's size, elements of its
 * largest tensor (the case record's "size", as the report's Q5 reads the same rule). */
#define HB_SEED_MATMUL_GPU_ABOVE_ELEMS 1e4
typedef enum hb_seed_role { HB_SEED_CPU, HB_SEED_GPU, HB_SEED_ANE } hb_seed_role;
/* The heuristic's device for op with largest-tensor size `size`, and its rule in words (static). */
hb_seed_role hb_plan_seed_role(hb_op op, double size, const char **rule);

/* Copy cost of one memory (the device's side of its link with host memory), on one route. */
typedef struct hb_plan_link {
    double h2d_lat_s, h2d_bw; /* host -> this memory: s per copy, bytes/s */
    double d2h_lat_s, d2h_bw; /* this memory -> host */
} hb_plan_link;

/* A planning problem. Tensor 0 is the model's input, tensor i+1 the output of op i; the model's
 * output is tensor nops. All arrays are borrowed. */
typedef struct hb_plan_problem {
    int nops, ndev, nmem;
    const int *in;             /* nops x HB_PLAN_MAXIN: tensors op i reads (-1: none); each < i+1 */
    const double *bytes;       /* nops + 1: bytes of each tensor */
    const double *cost;        /* nops x ndev: seconds of op i on device d; NaN or inf: not possible */
    const int *mem;            /* ndev: memory of each device (0: host memory) */
    const hb_plan_link *link;  /* nmem: copy costs of each memory (link[0], host memory, unused) */
    int cyclic;                /* 1: a repeated unit (start and end in one memory), 0: host in, host out */
} hb_plan_problem;

/* One op of an evaluated plan. */
typedef struct hb_plan_step {
    int dev;
    double compute_s;   /* the op's cost on dev */
    double xfer_s;      /* copies of its inputs into dev's memory, before it runs */
    double xfer_bytes;  /* bytes those copies move */
} hb_plan_step;

/* An evaluated plan. steps: nops, owned (hb_plan_result_free). */
typedef struct hb_plan_result {
    hb_plan_step *steps;
    int nops;
    int start_mem;                      /* where the model's input was (cyclic: chosen; else 0) */
    double end_xfer_s, end_xfer_bytes;  /* the output's copy back to start_mem (cyclic) or host */
    double total_s, compute_s, xfer_s, xfer_bytes;
    int ncopies;                        /* copies made (the end's included) */
} hb_plan_result;

/* Check the problem's shape (counts in range, tensors read before they are made, at most
 * HB_PLAN_MAXLIVE live at once). Returns HB_OK or HB_EINVAL with the reason in err. */
hb_status hb_plan_check(const hb_plan_problem *p, char *err, size_t errlen);

/* Evaluate plan dev[nops] (a device per op). The result's total is +inf when an op has no cost on its
 * device (then err names the first such op). Returns HB_OK (evaluated, possibly infinite), HB_EINVAL
 * (bad problem or device index; err) or HB_ENOMEM. */
hb_status hb_plan_evaluate(const hb_plan_problem *p, const int *dev, hb_plan_result *r, char *err, size_t errlen);

/* The plan of least predicted time. Returns HB_OK, HB_EINVAL (bad problem, or no plan is possible: an
 * op has no cost on any device; err names it) or HB_ENOMEM. */
hb_status hb_plan_optimal(const hb_plan_problem *p, hb_plan_result *r, char *err, size_t errlen);

/* The greedy plan: each op on the device where rank[i * ndev + d] is lowest (finite only; ties to the
 * lower index; hb_routing_best, the routing table's own rule). An op with no finite rank anywhere
 * gets -1 in dev[]. Returns the number of such ops. */
int hb_plan_greedy(const hb_plan_problem *p, const double *rank, int *dev);

void hb_plan_result_free(hb_plan_result *r);

#endif
