/*
 * ocl.h - internals of the OpenCL backend plugin (build/hb_opencl.so). Not part of the harness API:
 * the harness sees only `hb_opencl_ops` (declared here, found by dlsym). Shared by the files of kernels/opencl/.
 *
 * Files: ocl_backend.c (hooks: enumerate, buffers, routes, timers, describe), ocl_program.c (kernel
 * sources, program builds, kernel cache, error names), ocl_run.c (the run hook: one dispatch per
 * op), ocl_matmul.c (GEMM through CLBlast or the own kernels), ocl_ceilings.c (ceiling probes),
 * ocl_convert.c (upload_f64/download_f64: mode convert-device).
 *
 * Environment variables read when an instance is opened (enumerate):
 *   HB_KERNEL_DIR          directory of the .cl files (else <plugin dir>/opencl/, else kernels/opencl/)
 *   HB_OPENCL_MATMUL       auto (default) | clblast | tiled: GEMM implementation (see ocl_matmul.c)
 *   HB_OPENCL_NO_CLBLAST=1 same as HB_OPENCL_MATMUL=tiled
 *   HB_OPENCL_STYLE        cpu | gpu: kernel variants (default: cpu for CL_DEVICE_TYPE_CPU devices)
 *   HB_OPENCL_FORCE_F16=1  run f16 cases (f16 storage, f32 arithmetic) on a device without
 *                          cl_khr_fp16 (for tests of the f16 paths; results are real, not emulated)
 */
#ifndef HB_OCL_H
#define HB_OCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdio.h>
#include "core/backend.h"

/* Everything below is internal to the plugin: hidden from its dynamic symbol table. */
#pragma GCC visibility push(hidden)

/* Programs: one per .cl file (hb_common.cl is prepended to each), in two storage variants (probe,
 * convert and qmatmul: f32 variant only; convert only on devices with cl_khr_fp64). */
typedef enum ocl_prog {
    OCL_P_ELEMENTWISE, OCL_P_MATMUL, OCL_P_CONV_POOL, OCL_P_REDUCE, OCL_P_PROBE, OCL_P_CONVERT, OCL_P_QMATMUL, OCL_P_COUNT
} ocl_prog;
/* Storage variant index: 0 f32, 1 f16. */
#define OCL_NVAR 2
/* Scratch slots (see ocl_scratch). */
enum { OCL_SCRATCH_OP = 0, OCL_SCRATCH_GEMM = 1, OCL_SCRATCH_COUNT = 2 };

typedef enum ocl_mm_impl { OCL_MM_TILED = 0, OCL_MM_CLBLAST = 1 } ocl_mm_impl;

/* Cached kernel object (kernels are stateful: one instance is used from one thread). */
typedef struct ocl_kcache { cl_program prog; char name[40]; cl_kernel k; } ocl_kcache;
/* Attention programs built per head dimension and storage variant, on first use. */
typedef struct ocl_attprog { int hd, var; cl_program prog; cl_int err; } ocl_attprog;
#define OCL_MAX_KCACHE 64
#define OCL_MAX_ATT 16

typedef struct ocl_ctx {
    cl_platform_id plat;
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    int pi, di;
    /* device facts */
    char dev_name[128], plat_name[128], plat_version[128], dev_version[128], drv_version[64];
    char vendor[64], clc_version[64];
    cl_device_type type;
    cl_ulong gmem, max_alloc, cache_bytes, local_mem;
    cl_uint cus, clock_mhz, addr_align_bits;
    int fp16, fp64, unified, is_cpu;
    int f16_ok;           /* f16 cases run: fp16, or HB_OPENCL_FORCE_F16=1 */
    int cpu_style;        /* kernel variants, see hb_common.cl */
    /* programs */
    char kdir[1024];
    cl_program prog[OCL_P_COUNT][OCL_NVAR];
    cl_int prog_err[OCL_P_COUNT][OCL_NVAR];  /* CL_SUCCESS, or why the program is missing */
    double build_s;
    ocl_kcache kc[OCL_MAX_KCACHE];
    int nkc;
    ocl_attprog att[OCL_MAX_ATT];
    int natt;
    /* matmul */
    ocl_mm_impl mm_impl;
    char mm_why[96];
    /* event collection between timer_begin and timer_end */
    int timing;
    cl_event *ev;
    int nev, evcap;
    /* scratch buffers, one per user that may be live at once (OCL_SCRATCH_*), and accounting */
    cl_mem scratch[OCL_SCRATCH_COUNT];
    size_t scratch_bytes[OCL_SCRATCH_COUNT];
    cl_mem flush[2];       /* flush_cache: two buffers of twice the device cache each, copied 0 -> 1 */
    size_t flush_bytes;    /* bytes of each */
    int64_t dev_allocated;
} ocl_ctx;

/* Private part of an hb_buf. */
typedef struct ocl_buf {
    cl_mem dev;        /* what kernels use */
    cl_mem pinned;     /* pinned route: the CL_MEM_ALLOC_HOST_PTR staging buffer, mapped for life */
    void *host_alloc;  /* pageable/mapped: the aligned host allocation (free()d) */
    int host_owns;     /* mapped route: 1 while mapped (host may touch), 0 while the device owns it */
    size_t dev_bytes;  /* bytes counted in ocl_ctx.dev_allocated */
} ocl_buf;

/* ---- error checking (ggml CUDA_CHECK style) ---- */
/* Name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "CL_UNKNOWN_ERROR". */
const char *ocl_errname(cl_int e);
/* Log "hybench opencl: <call> failed: <name> (<code>) at <file>:<line>" to stderr when e != 0.
 * Returns e. */
cl_int ocl_check_at(cl_int e, const char *call, const char *file, int line);
#define OCL_CHECK(call) ocl_check_at((call), #call, __FILE__, __LINE__)
/* Map an OpenCL error to a status: allocation failures (CL_OUT_OF_RESOURCES,
 * CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_HOST_MEMORY, CL_INVALID_BUFFER_SIZE) -> HB_ENOMEM;
 * CL_SUCCESS -> HB_OK; anything else (a failed build, a lost device ...) -> HB_EDEVICE. */
hb_status ocl_status(cl_int e);

/* ---- programs and kernels (ocl_program.c) ---- */
/* The run's settings (core/config.h) as the configure hook gave them (ocl_cfg.c); every setting
 * unset until it is called. Never NULL. */
const hb_config *ocl_cfg(void);
/* Keep cfg (NULL: every setting unset) as the settings ocl_cfg returns (ocl_cfg.c; the configure hook). */
void ocl_set_cfg(const hb_config *cfg);
/* Find the kernel directory (setting HB_KERNEL_DIR, <dir of this plugin>/opencl, kernels/opencl) into dir.
 * Returns 0, or -1 when none holds hb_common.cl (dir then holds the last candidate). */
int ocl_find_kernel_dir(char *dir, size_t len);
/* Build every program of c (f32, and f16 when c->f16_ok) from c->kdir. A failed build prints the
 * build log to stderr and records the error in c->prog_err; it is not fatal. Sets c->build_s. */
void ocl_build_all(ocl_ctx *c);
/* Release programs and cached kernels. */
void ocl_release_programs(ocl_ctx *c);
/* The kernel `name` of program p, variant var (0 f32, 1 f16), created once and cached.
 * On failure returns NULL and sets *err (the program's build error, or clCreateKernel's). */
cl_kernel ocl_kernel(ocl_ctx *c, ocl_prog p, int var, const char *name, cl_int *err);
/* The attention kernel for head dimension hd (program built on first use with -DHD=hd). */
cl_kernel ocl_attention_kernel(ocl_ctx *c, int hd, int var, cl_int *err);

/* ---- enqueueing, timers, scratch (ocl_launch.c) ---- */
/* Where the next command's event goes: a fresh slot of the timer's list while timing (slot set to
 * NULL; ocl_ev_done() drops it again if the enqueue failed), else NULL (no event requested). */
cl_event *ocl_ev_slot(ocl_ctx *c);
void ocl_ev_done(ocl_ctx *c, cl_event *slot, cl_int err);
/* Release every event the timer collected. */
void ocl_ev_release_all(ocl_ctx *c);
/* Set args 0..nargs-1 with clSetKernelArg: nargs pairs (size_t size, const void *value) after the
 * count, written with OCL_ARG(variable). Returns the first error (each is logged). */
cl_int ocl_set_args(cl_kernel k, int nargs, ...);
#define OCL_ARG(v) sizeof(v), (const void *)&(v)
/* Enqueue k over dims dimensions (global gws rounded up to lws by the caller); lws may be NULL.
 * Records the event while timing. Returns the OpenCL error (logged). */
cl_int ocl_launch(ocl_ctx *c, cl_kernel k, cl_uint dims, const size_t *gws, const size_t *lws);
/* Make sure the device owns buffer b (mapped route: unmap if the host holds it). */
hb_status ocl_buf_to_device(ocl_ctx *c, hb_buf *b);
/* Scratch device memory of at least bytes in slot `slot` (grown on demand, kept until close). Slots
 * separate users whose data is live at the same time: OCL_SCRATCH_OP (an op's own temporaries:
 * im2col columns, reduction partials, convert-device f64 staging), OCL_SCRATCH_GEMM (partials inside
 * ocl_gemm, which conv2d calls with its columns in OCL_SCRATCH_OP). NULL + *st set on failure
 * (HB_ENOMEM or HB_EDEVICE). */
cl_mem ocl_scratch(ocl_ctx *c, int slot, size_t bytes, hb_status *st);

/* ---- ops (ocl_run.c, ocl_matmul.c) ---- */
hb_status ocl_run(hb_instance *inst, const hb_case *cs, hb_buf *const *in, hb_buf *out);
/* The hb_elementwise.cl kernel of an elementwise op (ocl_run.c's ocl_ew_table), or NULL when the
 * backend has none (a skip). The string is static. */
const char *ocl_ew_kernel(hb_op op);
/* Batched GEMM C[b] = A[b] x B[b] (layout and offsets as in hb_matmul.cl, all in elements) in
 * storage variant var, with c->mm_impl (f16 always takes the own kernel). */
hb_status ocl_gemm(ocl_ctx *c, int var, int M, int N, int K,
                   cl_mem A, size_t a_off, int lda, size_t a_stride,
                   cl_mem B, size_t b_off, int ldb, size_t b_stride,
                   cl_mem C, size_t c_off, int ldc, size_t c_stride, int batch);
/* Which GEMM runs for storage variant var: "clblast" or "tiled", and the kernel's name. */
const char *ocl_gemm_impl_name(const ocl_ctx *c, int var);
const char *ocl_gemm_kernel_name(const ocl_ctx *c, int var);
/* Choose c->mm_impl from the environment and device (sets c->mm_why). */
void ocl_gemm_choose(ocl_ctx *c);
/* 1 when CLBlast was compiled in. */
int ocl_have_clblast(void);

/* The hb_qmatmul.cl kernel of a quantized dtype ("hb_qmm_q4_k", ...), or NULL for another dtype (ocl_run.c). */
const char *ocl_qmm_kernel(hb_dtype d);

/* ---- convert-device (ocl_convert.c) ---- */
/* Hooks of backend.h: f64 host data -> device f64 scratch (clEnqueueWriteBuffer, *copy_s) -> kernel
 * conversion into b's storage type (*convert_s), and the reverse. Blocking. HB_ESKIP without
 * cl_khr_fp64. b's storage type is inferred from its size (hb_buf has no dtype): bytes == 2n -> f16,
 * bytes == 4n -> f32 (the driver allocates exactly n elements); anything else -> HB_EINVAL. */
hb_status ocl_upload_f64(hb_instance *inst, hb_buf *b, const double *src, size_t n, double *copy_s, double *convert_s);
hb_status ocl_download_f64(hb_instance *inst, hb_buf *b, double *dst, size_t n, double *copy_s, double *convert_s);
/* Record e in the timer's list while timing (ownership passes), else release it. */
void ocl_ev_keep(ocl_ctx *c, cl_event e);

/* ---- ceilings (ocl_ceilings.c) ---- */
int ocl_ceilings(hb_instance *inst, hb_ceiling *out, int max);

/* ---- hooks used across files (ocl_backend.c) ---- */
hb_status ocl_buf_alloc(hb_instance *inst, size_t bytes, hb_route route, hb_buf *out);
void ocl_buf_free(hb_instance *inst, hb_buf *b);
hb_status ocl_upload(hb_instance *inst, hb_buf *b);
hb_status ocl_download(hb_instance *inst, hb_buf *b);
/* The device-event timer hooks (ocl_launch.c). */
hb_status ocl_timer_begin(hb_instance *inst);
hb_status ocl_timer_end(hb_instance *inst, double *seconds);

#pragma GCC visibility pop
/* The plugin's one export (ocl_backend.c), looked up by measure/registry.c with dlsym. */
extern const hb_backend_ops hb_opencl_ops;
#endif
