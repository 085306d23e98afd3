/*
 * backend.h - the backend interface (one struct of hooks, ggml/fio style) that every kernels/<name>/
 * implements, and its contract check (backend.c). The registry of backend types: measure/registry.h.
 *
 * A backend *type* (cpu-ref, cpu, opencl, cuda, metal, coreml) is listed in measure/registry.c. Its
 * enumerate hook opens zero or more *instances* (opencl:0:0, cuda:0, ...). An instance carries a
 * pointer to the type's hooks and a private context. Required hooks are checked once when the
 * registry opens an instance (hb_backend_validate), optional ones are NULL-checked by the driver.
 *
 * Memory hooks are separate from compute: buffers are allocated, filled and read back without
 * running an op, so `resident` chains keep buffers on the device between runs with no new hook.
 *
 * Threading: an instance is used from one thread. Each backend type runs in its own child
 * process (measure/); no hook may rely on state created in the parent before fork().
 */
#ifndef HB_BACKEND_H
#define HB_BACKEND_H

#include "core/config.h"
#include "core/hybench.h"
#ifdef __cplusplus
extern "C" {
#endif

#define HB_BACKEND_ABI 8 /* 2: hb_case.seq; 3: run_async; 4: plant_delay; 5: graph_capture, graph_launch, graph_free; 6: hb_shape.inter; 7: configure; 8: impl_of */

/* A tensor's memory for one backend. `host` is the host-side tensor/staging memory the driver
 * reads and writes, allocated according to `route`:
 *   pageable: ordinary malloc'd memory; upload/download copy it to/from `dev`.
 *   pinned:   page-locked staging (cudaHostAlloc, CL_MEM_ALLOC_HOST_PTR); copies are async/DMA.
 *   mapped:   zero-copy host memory the device reads/writes directly; upload/download do no copy
 *             (at most a map/unmap or a flush).
 * For backends that compute in host memory (cpu-ref, cpu), dev == host and upload/download are
 * no-ops. `bytes` is the size in the device dtype (hb_dtype_size(case dtype) * elements).
 * Ownership: the backend allocates and frees everything behind an hb_buf. */
typedef struct hb_buf {
    void *host;          /* host view, `bytes` long, 64-byte aligned */
    void *dev;           /* device handle (cl_mem, CUdeviceptr as void*, or == host) */
    size_t bytes;
    hb_route route;
    hb_dtype dtype;      /* element type stored (set by the driver right after buf_alloc; f32 if unset) */
    void *priv;          /* backend-private */
} hb_buf;

/* One measured ceiling: a name the op metadata refers to, a value and a unit.
 * Standard names: "copy_gbps" (device/host memory copy, bytes read + written),
 * "triad_gbps", "peak_gflops_f32", "peak_gflops_tf32", "peak_gflops_f16", "peak_gflops_bf16",
 * "h2d_gbps_<route>", "d2h_gbps_<route>". */
typedef struct hb_ceiling { char name[40]; double value; char unit[12]; char how[96]; } hb_ceiling;
#define HB_MAX_CEILINGS 24

typedef struct hb_instance hb_instance;

typedef struct hb_backend_ops {
    int abi;                                  /* HB_BACKEND_ABI */
    const char *type;                         /* "cpu", "opencl", ... */
    /* Required: open up to max instances into out[] (zero-initialized by the caller; fill name,
     * description, ops, ctx). Return the count (0..max). When 0, write why into reason.
     * Never aborts when a driver/library/device is missing. */
    int (*enumerate)(hb_instance *out, int max, char *reason, size_t reasonlen);
    /* Required: release the instance's context. */
    void (*close)(hb_instance *inst);
    /* Required: HB_OK if this instance can run case c (op, dtype, route, mode, shape), else HB_ESKIP
     * with the reason in reason (e.g. "f16 needs cl_khr_fp16"). Must not allocate device memory.
     * For a collective case of several ranks it is also the ranks' agreement on the case (c->seq,
     * core/rendezvous.h): every rank gets the same answer, and the driver calls it once before the
     * case begins (so that waiting for the other ranks is not counted in --case-timeout) and again
     * inside it; the second call returns the first one's answer. */
    hb_status (*supports)(hb_instance *inst, const hb_case *c, char *reason, size_t reasonlen);
    /* Required: allocate a buffer of `bytes` for `route`. HB_ENOMEM when memory is short. */
    hb_status (*buf_alloc)(hb_instance *inst, size_t bytes, hb_route route, hb_buf *out);
    void (*buf_free)(hb_instance *inst, hb_buf *b);
    /* Required: host -> device and device -> host for a whole buffer. Blocking: the copy has
     * completed when they return (BabelStream convention). */
    hb_status (*upload)(hb_instance *inst, hb_buf *b);
    hb_status (*download)(hb_instance *inst, hb_buf *b);
    /* Required: run case c's op on device buffers in[0..ninputs-1] -> out, in dtype c->dtype.
     * Blocking: the op has completed when it returns. Errors: HB_ESKIP, HB_ENOMEM, HB_EDEVICE. */
    hb_status (*run)(hb_instance *inst, const hb_case *c, hb_buf *const *in, hb_buf *out);
    /* Optional: device-side timing. timer_begin records a start event on the instance's stream/queue;
     * timer_end records the stop event, waits for it and returns the elapsed device time in seconds.
     * NULL: the driver uses the host monotonic clock alone. */
    hb_status (*timer_begin)(hb_instance *inst);
    hb_status (*timer_end)(hb_instance *inst, double *seconds);
    /* Optional: measure this instance's ceilings now; fill out[0..n-1], return n. */
    int (*ceilings)(hb_instance *inst, hb_ceiling *out, int max);
    /* Optional: bytes of device memory currently allocated by this backend, and the device's free
     * and total bytes (cudaMemGetInfo); -1 where unknown. */
    void (*mem_info)(hb_instance *inst, int64_t *allocated, int64_t *free_b, int64_t *total_b);
    /* Optional: per-case extra facts for the result record as a JSON object text ("{...}"),
     * e.g. {"matmul_impl":"clblast","sm_clock_mhz":1980}. Written into buf; return HB_OK. */
    hb_status (*case_info)(hb_instance *inst, const hb_case *c, char *buf, size_t len);
    /* Optional: instance facts for the metadata record as a JSON object text (driver/runtime
     * versions, memory, compute units, fp16 support ...). */
    hb_status (*describe)(hb_instance *inst, char *buf, size_t len);
    /* Optional: called between samples when a cold (cache-flushed) run is asked for. */
    void (*flush_cache)(hb_instance *inst);
    /* Optional (mode `convert-device`): copy n f64 values from host memory src to the device and
     * convert them there into b's dtype; and the reverse for an output. Blocking. *copy_s and
     * *convert_s receive the device time of the copy and of the conversion (seconds).
     * NULL: the backend has no device-side conversion and convert-device cases are skipped. */
    hb_status (*upload_f64)(hb_instance *inst, hb_buf *b, const double *src, size_t n, double *copy_s, double *convert_s);
    hb_status (*download_f64)(hb_instance *inst, hb_buf *b, double *dst, size_t n, double *copy_s, double *convert_s);
    /* Optional (energy, docs/energy.md): the device's cumulative energy counter in joules
     * (NVML's nvmlDeviceGetTotalEnergyConsumption, mJ, on cuda). The driver reads it at both ends of
     * a window and divides the difference by the calls in it. HB_OK; HB_ESKIP with the reason in
     * why when the counter cannot be read here. NULL: host-memory backends use the CPU package
     * counter (RAPL, measure/energy.c); device backends record energy as unavailable. */
    hb_status (*energy_read)(hb_instance *inst, double *joules, char *why, size_t whylen);
    /* Optional (collectives with several ranks, docs/collectives.md): every rank's process samples a
     * collective case in lock step, so each decision to stop a loop (the settle runs before a timed
     * call, measure/prepare.c; warm-up, sampling, the energy window) is agreed: returns 1 when any
     * rank votes 1 (an all-reduce with max over the case's communicator), else 0; with one rank it returns `stop`. Called for collective cases only.
     * NULL: the backend runs no multi-rank collective. */
    int (*coll_vote)(hb_instance *inst, const hb_case *c, int stop);
    /* Optional: run's op enqueued on the instance's stream without waiting for it; the next blocking
     * hook (run, upload, download, timer_end) waits for it, and an error of its device work surfaces
     * there. Lets the driver time a sequence of ops as an executor runs it, back to back (the chain's
     * layer as one stream, measure/chain.c). NULL: the driver uses run. */
    hb_status (*run_async)(hb_instance *inst, const hb_case *c, hb_buf *const *in, hb_buf *out);
    /* Optional, for the merge gate's planted slowdowns only (a `make PLANT=1` driver calls it; a
     * normal build never does; docs/compare.md, "Planted slowdowns"): the next run() enqueues, behind
     * the op and inside its device-timed region, a one-thread delay kernel spinning for `seconds`
     * (0: an empty kernel) on the SM clock, whose rate is measured once per instance, so the op's
     * device-timed compute phase lasts that much longer, as a slower kernel would. The delay kernel
     * itself adds its start behind the op (about 1.4 us on an H200), which the caller must give its
     * baseline too (plant.h). Used once: the run after next has no delay kernel unless asked again.
     * HB_OK; HB_EINVAL for seconds < 0 or above 1 s. NULL: no device-side plant. */
    hb_status (*plant_delay)(hb_instance *inst, double seconds);
    /* Optional (a sequence of ops as one graph, as llama.cpp and vLLM launch decode; measure/chain.c):
     * graph_capture(begin = 1) starts recording what the next run_async calls enqueue instead of
     * running it (the device timer is disarmed meanwhile); graph_capture(begin = 0) ends the recording
     * and returns in *graph an executable graph the backend owns (freed by graph_free), or an error
     * (HB_EDEVICE) when an op could not be recorded (one that synchronizes or allocates inside: the
     * ops must have run once before, with their workspaces in place). graph_launch enqueues the graph
     * without waiting, as run_async does: the armed timer's events bracket it and the next blocking
     * hook waits for it. Collective steps may be recorded too (over several ranks every rank records
     * the same steps and launches its graph where it would have made the calls). NULL: the driver
     * times the launched stream only. */
    hb_status (*graph_capture)(hb_instance *inst, int begin, void **graph);
    hb_status (*graph_launch)(hb_instance *inst, void *graph);
    void (*graph_free)(hb_instance *inst, void *graph);
    /* Optional (the run's settings, core/config.h, docs/environment.md): called by the registry
     * before enumerate, with the process's configuration, which the backend reads from then on instead
     * of the environment. The backend keeps the pointer, not a copy: the caller keeps *cfg alive for
     * the backend's life (hb_config_get's struct lives as long as the process; a test may change its
     * own struct between calls and call configure again). cfg NULL: every setting unset (defaults).
     * Until it is called the backend uses every setting's default. NULL: the backend reads no setting. */
    void (*configure)(const hb_config *cfg);
    /* Optional (the merge gate's case list, `hybench gate-list`, docs/compare.md "The gate list"): the
     * name of the implementation this instance runs for case c, from the case alone (op, shape, dtype,
     * mode, route) and the instance's fixed facts (its ISA, its thread count, the libraries found),
     * before any run and without timing anything or allocating device memory: the name case_info's
     * "impl" gives after the run (the record's `impl`), where a choice made by timing at run time (the
     * cpu backend's OpenBLAS or oneDNN per matmul/bmm/conv2d shape) is left out, the path taken without
     * it named instead. A kernel that takes another code path by size (streaming stores, another loop
     * order) says so in its name, so that every path has a name. Returns a string owned by the
     * backend (static, or living as long as the instance); NULL when it cannot be told before a run.
     * NULL hook: the gate's rule knows no implementation for the backend's cases (one per op, dtype,
     * mode and route). */
    const char *(*impl_of)(hb_instance *inst, const hb_case *c);
} hb_backend_ops;

struct hb_instance {
    char name[48];          /* "cpu", "opencl:0:0", "cuda:0" */
    char description[160];  /* "Intel Xeon ... / OpenBLAS 0.3.21", "NVIDIA H100 80GB HBM3" */
    int host_memory;        /* 1 if it computes in host memory (h2d/d2h are 0) */
    const hb_backend_ops *ops;
    void *ctx;
};

/* Validate the required hooks of ops (fio style, at registration). HB_OK or HB_EINVAL. */
hb_status hb_backend_validate(const hb_backend_ops *ops);

#ifdef __cplusplus
}
#endif
#endif
