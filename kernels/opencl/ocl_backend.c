/*
 * ocl_backend.c - the OpenCL backend's hooks (backend.h) through the ocl-icd loader: discovery (one
 * instance per device of every platform, named opencl:<platform>:<device>), the buffer hooks
 * (ocl_buf.c: the three transfer routes), and the describe/case_info/mem_info hooks (device-event timers, scratch memory and kernel
 * launches: ocl_launch.c). Exports hb_opencl_ops.
 *
 * Timers: timer_begin starts collecting the events of every command this backend enqueues;
 * timer_end waits for the queue and returns max(END) - min(START) over them (CL_PROFILING_COMMAND_*,
 * the queue has CL_QUEUE_PROFILING_ENABLE), in seconds; 0 when nothing was enqueued.
 */
#include "opencl/ocl.h"
#include "core/opdesc.h"
#include "core/quant.h"

#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CTX(inst) ((ocl_ctx *)(inst)->ctx)

/* ---- discovery ---- */

static void dev_str(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
    buf[0] = 0;
    if (clGetDeviceInfo(d, what, len, buf, NULL) != CL_SUCCESS) snprintf(buf, len, "?");
    buf[len - 1] = 0;
}

static int dev_has_ext(cl_device_id d, const char *ext)
{
    size_t n = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || n == 0) return 0;
    char *s = malloc(n + 1);
    if (!s) return 0;
    int found = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, s, NULL) == CL_SUCCESS) {
        s[n] = 0;
        size_t el = strlen(ext);
        for (char *p = strstr(s, ext); p; p = strstr(p + 1, ext))
            if ((p == s || p[-1] == ' ') && (p[el] == 0 || p[el] == ' ')) { found = 1; break; }
    }
    free(s);
    return found;
}

/* The configure hook: the settings kept by ocl_cfg.c. */
static void ocl_configure(const hb_config *cfg) { ocl_set_cfg(cfg); }

/* Whether setting v (NULL: unset) reads val. */
static int cfg_is(const char *v, const char *val) { return v && !strcmp(v, val); }

static void ctx_destroy(ocl_ctx *c)
{
    if (!c) return;
    if (c->q) clFinish(c->q);
    ocl_ev_release_all(c);
    free(c->ev);
    for (int i = 0; i < OCL_SCRATCH_COUNT; i++)
        if (c->scratch[i]) clReleaseMemObject(c->scratch[i]);
    for (int i = 0; i < 2; i++)
        if (c->flush[i]) clReleaseMemObject(c->flush[i]);
    ocl_release_programs(c);
    if (c->q) clReleaseCommandQueue(c->q);
    if (c->ctx) clReleaseContext(c->ctx);
    free(c);
}

/* Open device d of platform plat as instance (pi, di). NULL (with why) on failure. */
static ocl_ctx *ctx_open(cl_platform_id plat, cl_device_id d, int pi, int di, const char *kdir, char *why, size_t whylen)
{
    ocl_ctx *c = calloc(1, sizeof *c);
    if (!c) { snprintf(why, whylen, "out of host memory"); return NULL; }
    c->plat = plat;
    c->dev = d;
    c->pi = pi;
    c->di = di;
    clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof c->plat_name, c->plat_name, NULL);
    clGetPlatformInfo(plat, CL_PLATFORM_VERSION, sizeof c->plat_version, c->plat_version, NULL);
    c->plat_name[sizeof c->plat_name - 1] = c->plat_version[sizeof c->plat_version - 1] = 0;
    dev_str(d, CL_DEVICE_NAME, c->dev_name, sizeof c->dev_name);
    dev_str(d, CL_DEVICE_VERSION, c->dev_version, sizeof c->dev_version);
    dev_str(d, CL_DRIVER_VERSION, c->drv_version, sizeof c->drv_version);
    dev_str(d, CL_DEVICE_VENDOR, c->vendor, sizeof c->vendor);
    dev_str(d, CL_DEVICE_OPENCL_C_VERSION, c->clc_version, sizeof c->clc_version);
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof c->type, &c->type, NULL);
    clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof c->gmem, &c->gmem, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof c->max_alloc, &c->max_alloc, NULL);
    clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof c->cache_bytes, &c->cache_bytes, NULL);
    clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof c->local_mem, &c->local_mem, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof c->cus, &c->cus, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof c->clock_mhz, &c->clock_mhz, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof c->addr_align_bits, &c->addr_align_bits, NULL);
    cl_bool unified = CL_FALSE;
    clGetDeviceInfo(d, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL);
    c->unified = unified == CL_TRUE;
    c->is_cpu = (c->type & CL_DEVICE_TYPE_CPU) != 0;
    c->fp16 = dev_has_ext(d, "cl_khr_fp16");
    c->fp64 = dev_has_ext(d, "cl_khr_fp64");
    c->f16_ok = c->fp16 || cfg_is(ocl_cfg()->opencl_force_f16, "1");
    c->cpu_style = cfg_is(ocl_cfg()->opencl_style, "gpu") ? 0 : cfg_is(ocl_cfg()->opencl_style, "cpu") ? 1 : c->is_cpu;
    if (c->cus == 0) c->cus = 1;
    snprintf(c->kdir, sizeof c->kdir, "%s", kdir);

    cl_int e;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    c->ctx = clCreateContext(props, 1, &d, NULL, NULL, &e);
    if (OCL_CHECK(e)) { c->ctx = NULL; snprintf(why, whylen, "clCreateContext: %s", ocl_errname(e)); goto fail; }
    c->q = clCreateCommandQueue(c->ctx, d, CL_QUEUE_PROFILING_ENABLE, &e);
    if (OCL_CHECK(e)) { c->q = NULL; snprintf(why, whylen, "clCreateCommandQueue: %s", ocl_errname(e)); goto fail; }
    ocl_build_all(c);
    ocl_gemm_choose(c);
    return c;
fail:
    ctx_destroy(c);
    return NULL;
}

static void describe_short(const ocl_ctx *c, char *buf, size_t len)
{
    char t[512];
    snprintf(t, sizeof t, "%s (%s, driver %s), %.1f GiB, %u CU, fp16 %s, fp64 %s", c->dev_name, c->plat_name,
             c->drv_version, (double)c->gmem / (1024.0 * 1024 * 1024), c->cus, c->fp16 ? "yes" : "no", c->fp64 ? "yes" : "no");
    size_t n = strlen(t) < len - 1 ? strlen(t) : len - 1;  /* truncate to the instance's field */
    memcpy(buf, t, n);
    buf[n] = 0;
}

/* PoCL's CPU device computes on its own worker threads, one per core. Left to the scheduler, two of
 * them at times shared one core while another sat idle: on the 2-vCPU VM, gelu n=262144 read 80 or
 * 148 us from one sample to the next (148 us: the time of one worker alone, POCL_MAX_PTHREAD_COUNT=1),
 * in runs of tens of samples, so two modes of one case differed by up to 1.7x. POCL_AFFINITY=1 binds
 * each worker to its core (PoCL's pthread driver reads it when the platform loads, i.e. at the first
 * clGetPlatformIDs of the process): the quick run's opencl mode check went from 123 to 130 of 133
 * pairs within 5%. Set unless the user set it; other platforms ignore it. The value in force is
 * recorded in describe ("pocl_affinity"). */
static void pocl_bind_workers(void)
{
    setenv("POCL_AFFINITY", "1", 0);
}

static int ocl_enumerate(hb_instance *out, int max, char *reason, size_t reasonlen)
{
    cl_uint np = 0;
    pocl_bind_workers();
    cl_int e = clGetPlatformIDs(0, NULL, &np);
    if (e != CL_SUCCESS || np == 0) {
        snprintf(reason, reasonlen, "no OpenCL platform: the ICD loader found none (clGetPlatformIDs: %s); "
                 "install a vendor driver or pocl-opencl-icd", e != CL_SUCCESS ? ocl_errname(e) : "0 platforms");
        return 0;
    }
    cl_platform_id plats[16];
    if (np > 16) np = 16;
    if (OCL_CHECK(clGetPlatformIDs(np, plats, NULL))) {
        snprintf(reason, reasonlen, "clGetPlatformIDs failed");
        return 0;
    }
    char kdir[1024];
    if (ocl_find_kernel_dir(kdir, sizeof kdir) != 0) {
        snprintf(reason, reasonlen, "OpenCL kernel sources (hb_common.cl ...) not found: set HB_KERNEL_DIR, or keep "
                 "build/opencl/ beside the plugin (last tried %s)", kdir);
        return 0;
    }
    int n = 0;
    char why[256] = "";
    for (cl_uint pi = 0; pi < np && n < max; pi++) {
        cl_uint nd = 0;
        cl_device_id devs[16];
        e = clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, 16, devs, &nd);
        if (e == CL_DEVICE_NOT_FOUND || nd == 0) continue;
        if (OCL_CHECK(e)) continue;
        if (nd > 16) nd = 16;
        for (cl_uint di = 0; di < nd && n < max; di++) {
            cl_bool avail = CL_TRUE;
            clGetDeviceInfo(devs[di], CL_DEVICE_AVAILABLE, sizeof avail, &avail, NULL);
            if (!avail) { snprintf(why, sizeof why, "device %u:%u reports CL_DEVICE_AVAILABLE false", pi, di); continue; }
            ocl_ctx *c = ctx_open(plats[pi], devs[di], (int)pi, (int)di, kdir, why, sizeof why);
            if (!c) continue;
            hb_instance *in = &out[n++];
            snprintf(in->name, sizeof in->name, "opencl:%u:%u", pi, di);
            describe_short(c, in->description, sizeof in->description);
            in->host_memory = 0;
            in->ops = &hb_opencl_ops;
            in->ctx = c;
        }
    }
    if (n == 0)
        snprintf(reason, reasonlen, "no usable OpenCL device on %u platform(s)%s%s", np, why[0] ? ": " : "", why);
    return n;
}

static void ocl_close(hb_instance *inst)
{
    ctx_destroy(CTX(inst));
    inst->ctx = NULL;
}

/* ---- capability query ---- */

static hb_status skip(char *reason, size_t len, const char *fmt, const char *arg)
{
    snprintf(reason, len, fmt, arg);
    return HB_ESKIP;
}

static hb_status ocl_supports(hb_instance *inst, const hb_case *cs, char *reason, size_t reasonlen)
{
    ocl_ctx *c = CTX(inst);
    const hb_shape *s = &cs->shape;
    switch (cs->dtype) {
    case HB_F32: break;
    case HB_F16:
        if (!c->f16_ok) return skip(reason, reasonlen, "f16 needs cl_khr_fp16, which %s does not report", c->dev_name);
        break;
    case HB_TF32:
        return skip(reason, reasonlen, "tf32: OpenCL 1.2 has no tf32 type or extension (%s)", "no tensor-float path");
    case HB_BF16:
        return skip(reason, reasonlen, "bf16: OpenCL 1.2 has no bf16 arithmetic extension (%s)", "no cl_*_bfloat16 path");
    case HB_Q8_0: case HB_Q4_K: case HB_Q5_K: case HB_Q6_K: /* hb_qmatmul.cl */
        if (cs->op == HB_OP_DEQUANTIZE) {
            if (cs->mode == HB_MODE_CONVERT || cs->mode == HB_MODE_CONVERT_DEVICE)
                return skip(reason, reasonlen, "quantized weights: no f64 form of the blocks (%s)", "modes f32 and resident only");
            if (s->n <= 0 || s->n % hb_quant_block_elems(cs->dtype) || s->n / 32 > INT_MAX)
                return skip(reason, reasonlen, "dequantize: n must be a positive multiple of the format's block (%s)",
                            cs->dtype == HB_Q8_0 ? "32" : "256");
            break;
        }
        if (cs->op != HB_OP_MATMUL) return skip(reason, reasonlen, "quantized weights: matmul and dequantize only%s", "");
        if (cs->mode == HB_MODE_CONVERT || cs->mode == HB_MODE_CONVERT_DEVICE)
            return skip(reason, reasonlen, "quantized weights: no f64 form of the blocks (%s)", "modes f32 and resident only");
        if (s->m <= 0 || s->n <= 0 || s->k <= 0 || s->k % hb_quant_block_elems(cs->dtype))
            return skip(reason, reasonlen, "quantized matmul: k must be a positive multiple of the format's block (%s)",
                        cs->dtype == HB_Q8_0 ? "32" : "256");
        break;
    default: return skip(reason, reasonlen, "unknown dtype%s", "");
    }
    if ((unsigned)cs->route >= HB_ROUTE_COUNT || (unsigned)cs->mode >= HB_MODE_COUNT)
        return skip(reason, reasonlen, "unknown route or mode%s", "");
    if (cs->mode == HB_MODE_CONVERT_DEVICE && !c->fp64)
        return skip(reason, reasonlen, "convert-device needs f64 on the device (cl_khr_fp64), which %s lacks", c->dev_name);
    /* kernels take shape dimensions as int */
    const int64_t *f = &s->n;
    for (size_t i = 0; i < sizeof *s / sizeof *f; i++)
        if (f[i] > INT_MAX) return skip(reason, reasonlen, "a shape dimension exceeds 2^31-1 (%s)", "int kernel arguments");
    if (cs->op == HB_OP_DEQUANTIZE) /* hb_qmatmul.cl's hb_dq_*: a quantized dtype only (checked above) */
        return hb_dtype_is_quant(cs->dtype) ? HB_OK : skip(reason, reasonlen, "dequantize takes a quantized dtype%s", "");
    if (hb_op_is_ew(cs->op)) /* ocl_run.c's kernel table */
        return ocl_ew_kernel(cs->op) ? HB_OK : skip(reason, reasonlen, "no OpenCL kernel for this elementwise op%s", "");
    switch (cs->op) {
    case HB_OP_MATMUL: case HB_OP_BMM: case HB_OP_CONV2D: case HB_OP_MAXPOOL: case HB_OP_AVGPOOL:
    case HB_OP_SUM: case HB_OP_MEAN: case HB_OP_MAX: case HB_OP_SUM_ALL: case HB_OP_RMSNORM:
        return HB_OK;
    case HB_OP_ATTENTION:
        if (s->layout == HB_LAYOUT_BSHD)
            return skip(reason, reasonlen, "attention layout=bshd: %s", "the fused kernel reads the default layout [batch, heads, seq, head_dim] only");
        if (s->head_dim > 512)
            return skip(reason, reasonlen, "attention: head_dim over 512 (%s)", "the fused kernel keeps a row in private memory");
        return HB_OK;
    default:
        return skip(reason, reasonlen, "op not implemented by the OpenCL backend%s", "");
    }
}

/* ---- facts ---- */

static hb_status dump_json(json_t *o, char *buf, size_t len)
{
    if (!o) return HB_ENOMEM;
    size_t need = json_dumpb(o, NULL, 0, JSON_COMPACT);
    hb_status st = HB_OK;
    if (need == 0 || need + 1 > len) st = HB_EINVAL;
    else {
        json_dumpb(o, buf, len, JSON_COMPACT);
        buf[need] = 0;
    }
    json_decref(o);
    return st;
}

static const char *type_name(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU) return "GPU";
    if (t & CL_DEVICE_TYPE_CPU) return "CPU";
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return "ACCELERATOR";
    return "OTHER";
}

static hb_status ocl_describe(hb_instance *inst, char *buf, size_t len)
{
    ocl_ctx *c = CTX(inst);
    static const char *const pname[OCL_P_COUNT] = {"elementwise", "matmul", "conv_pool", "reduce", "probe", "convert", "qmatmul"};
    json_t *failed = json_array();
    for (int p = 0; p < OCL_P_COUNT; p++)
        for (int v = 0; v < OCL_NVAR; v++)
            if (!c->prog[p][v] && (p != OCL_P_CONVERT || c->fp64) &&
                (v == 0 || (c->f16_ok && p != OCL_P_PROBE && p != OCL_P_CONVERT && p != OCL_P_QMATMUL))) {
                char s[64];
                snprintf(s, sizeof s, "%s/%s: %s", pname[p], v ? "f16" : "f32", ocl_errname(c->prog_err[p][v]));
                json_array_append_new(failed, json_string(s));
            }
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:i, s:i, s:b, s:b, s:b, s:b, s:s, s:s, s:s, s:b, s:s, s:f, s:o}",
                          "platform", c->plat_name, "platform_version", c->plat_version, "device", c->dev_name,
                          "vendor", c->vendor, "device_type", type_name(c->type), "device_version", c->dev_version,
                          "driver_version", c->drv_version, "opencl_c_version", c->clc_version,
                          "global_mem_bytes", (json_int_t)c->gmem, "max_alloc_bytes", (json_int_t)c->max_alloc,
                          "global_cache_bytes", (json_int_t)c->cache_bytes, "local_mem_bytes", (json_int_t)c->local_mem,
                          "compute_units", (int)c->cus, "max_clock_mhz", (int)c->clock_mhz,
                          "fp16", c->fp16, "fp64", c->fp64, "host_unified_memory", c->unified,
                          "zero_copy_mapped", c->unified || c->is_cpu,
                          "kernel_style", c->cpu_style ? "cpu" : "gpu", "matmul_impl", ocl_gemm_impl_name(c, 0),
                          "matmul_policy", c->mm_why, "clblast_available", ocl_have_clblast(),
                          "kernel_dir", c->kdir, "build_s", c->build_s, "programs_failed", failed);
    if (o) json_object_set_new(o, "pocl_affinity", json_string(getenv("POCL_AFFINITY") ? getenv("POCL_AFFINITY") : "unset"));
    return dump_json(o, buf, len);
}

/* impl_of (backend.h), and case_info's "impl": CLBlast where its sgemm/hgemm runs the matrix product
 * (matmul, bmm, and conv2d's im2col product), hybench's own OpenCL kernels else */
static const char *ocl_impl_of(hb_instance *inst, const hb_case *cs)
{
    ocl_ctx *c = CTX(inst);
    int mm = cs->op == HB_OP_MATMUL || cs->op == HB_OP_BMM || cs->op == HB_OP_CONV2D;
    int clb = mm && !strcmp(ocl_gemm_impl_name(c, cs->dtype == HB_F16), "clblast") && hb_quant_block_elems(cs->dtype) == 0;
    return clb ? (cs->op == HB_OP_CONV2D ? "clblast-im2col" : "clblast") : "own-cl";
}

static hb_status ocl_case_info(hb_instance *inst, const hb_case *cs, char *buf, size_t len)
{
    ocl_ctx *c = CTX(inst);
    int var = cs->dtype == HB_F16;
    json_t *o = json_pack("{s:s}", "kernel_style", c->cpu_style ? "cpu" : "gpu");
    if (!o) return HB_ENOMEM;
    if (cs->op == HB_OP_MATMUL || cs->op == HB_OP_BMM || cs->op == HB_OP_CONV2D) {
        json_object_set_new(o, "matmul_impl", json_string(ocl_gemm_impl_name(c, var)));
        json_object_set_new(o, "matmul_kernel", json_string(ocl_gemm_kernel_name(c, var)));
    }
    /* impl (lifted to the record's top level by the driver) */
    json_object_set_new(o, "impl", json_string(ocl_impl_of(inst, cs)));
    if (cs->op == HB_OP_CONV2D)
        json_object_set_new(o, "conv_algo", json_string(cs->shape.layout == HB_LAYOUT_NHWC ? "nhwc im2col+gemm (W^T)" : "im2col+gemm"));
    if (cs->op == HB_OP_ATTENTION) json_object_set_new(o, "attention_kernel", json_string("fused, online softmax, one work-item per query row"));
    if (hb_quant_block_elems(cs->dtype) > 0 && cs->op == HB_OP_MATMUL) {
        const char *kn = ocl_qmm_kernel(cs->dtype);
        json_object_set_new(o, "matmul_impl", json_string("own-cl"));
        json_object_set_new(o, "matmul_kernel", json_string(kn));
        json_object_set_new(o, "qmatmul_impl", json_string(kn));
    }
    if (var) json_object_set_new(o, "f16_arith", json_string(c->fp16 ? "f32 (f16 storage)" : "f32 (f16 storage; forced, no cl_khr_fp16)"));
    return dump_json(o, buf, len);
}

/* Evict the device cache between samples of a cold run: copy a buffer of twice the device's global
 * cache (at least 8 MiB) into another with hb_copy. Not timed (no event); failures are logged and
 * ignored (the next sample then runs warm). */
static void ocl_flush_cache(hb_instance *inst)
{
    ocl_ctx *c = CTX(inst);
    cl_int e;
    if (!c->flush[1]) {
        size_t bytes = c->cache_bytes > 0 ? 2 * (size_t)c->cache_bytes : 0;
        if (bytes < ((size_t)8 << 20)) bytes = (size_t)8 << 20;
        if (bytes > c->max_alloc) bytes = (size_t)c->max_alloc;
        bytes &= ~(size_t)1023;
        for (int i = 0; i < 2; i++) {
            c->flush[i] = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
            if (OCL_CHECK(e)) {
                c->flush[i] = NULL;
                if (i) { clReleaseMemObject(c->flush[0]); c->flush[0] = NULL; }
                return;
            }
        }
        c->flush_bytes = bytes;
        c->dev_allocated += 2 * (int64_t)bytes;
    }
    cl_kernel k = ocl_kernel(c, OCL_P_PROBE, 0, "hb_copy", &e);
    if (!k) return;
    size_t l = 64, g = c->flush_bytes / 16 / l * l;
    if (ocl_set_args(k, 2, OCL_ARG(c->flush[0]), OCL_ARG(c->flush[1])) == CL_SUCCESS)
        OCL_CHECK(clEnqueueNDRangeKernel(c->q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    OCL_CHECK(clFinish(c->q));
}

static void ocl_mem_info(hb_instance *inst, int64_t *allocated, int64_t *free_b, int64_t *total_b)
{
    ocl_ctx *c = CTX(inst);
    if (allocated) *allocated = c->dev_allocated;
    if (free_b) *free_b = -1;
    if (total_b) *total_b = (int64_t)c->gmem;
}

__attribute__((visibility("default"))) const hb_backend_ops hb_opencl_ops = {
    .abi = HB_BACKEND_ABI,
    .type = "opencl",
    .enumerate = ocl_enumerate,
    .configure = ocl_configure,
    .close = ocl_close,
    .supports = ocl_supports,
    .buf_alloc = ocl_buf_alloc,
    .buf_free = ocl_buf_free,
    .upload = ocl_upload,
    .download = ocl_download,
    .run = ocl_run,
    .timer_begin = ocl_timer_begin,
    .timer_end = ocl_timer_end,
    .ceilings = ocl_ceilings,
    .mem_info = ocl_mem_info,
    .case_info = ocl_case_info,
    .impl_of = ocl_impl_of,
    .describe = ocl_describe,
    .flush_cache = ocl_flush_cache,
    .upload_f64 = ocl_upload_f64,
    .download_f64 = ocl_download_f64,
};
