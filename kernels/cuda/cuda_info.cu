/*
 * cuda_info.cu - what the CUDA backend reports beside its measurements: describe (the instance's
 * facts for the backend record: device, driver, runtime, library versions), case_info (the facts of
 * the last run: implementation, algorithm, workspace, the conv2d choice's timings, host enqueue time,
 * SM clocks) and mem_info, with NVML loaded by dlopen for the clocks and the driver version.
 */
#include "cuda/cuda_internal.h"
#include "cuda/cuda_collective.h"

#include <algorithm>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------ NVML via dlopen */

typedef int nvml_ret; /* nvmlReturn_t; NVML_SUCCESS = 0 */
enum { NVML_CLOCK_SM_ = 1 }; /* nvmlClockType_t NVML_CLOCK_SM (nvml.h) */

struct hbc_nvml {
    void *lib;
    nvml_ret (*shutdown)(void);
    nvml_ret (*clock)(void *, int, unsigned *);
    nvml_ret (*max_clock)(void *, int, unsigned *);
    void *dev;
    char driver[80];
};

hbc_nvml *nvml_open(int dev)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    typedef nvml_ret (*init_t)(void);
    typedef nvml_ret (*bypci_t)(const char *, void **);
    typedef nvml_ret (*drv_t)(char *, unsigned);
    init_t init = (init_t)dlsym(lib, "nvmlInit_v2");
    bypci_t bypci = (bypci_t)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    drv_t drv = (drv_t)dlsym(lib, "nvmlSystemGetDriverVersion");
    hbc_nvml *n = (hbc_nvml *)calloc(1, sizeof *n);
    if (!n) { dlclose(lib); return nullptr; }
    n->lib = lib;
    n->shutdown = (nvml_ret(*)(void))dlsym(lib, "nvmlShutdown");
    n->clock = (nvml_ret(*)(void *, int, unsigned *))dlsym(lib, "nvmlDeviceGetClockInfo");
    n->max_clock = (nvml_ret(*)(void *, int, unsigned *))dlsym(lib, "nvmlDeviceGetMaxClockInfo");
    char bus[32];
    if (!init || !bypci || !n->clock || !n->max_clock || init() != 0 || cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess ||
        bypci(bus, &n->dev) != 0) {
        (void)cudaGetLastError();
        if (n->shutdown && init) n->shutdown();
        dlclose(lib);
        free(n);
        return nullptr;
    }
    if (drv && drv(n->driver, sizeof n->driver) != 0) n->driver[0] = 0;
    return n;
}

void nvml_close(hbc_nvml *n)
{
    if (!n) return;
    if (n->shutdown) n->shutdown();
    dlclose(n->lib);
    free(n);
}

static const char *json_escape(const char *s, char *buf, size_t len)
{
    size_t j = 0;
    for (; *s && j + 7 < len; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') { buf[j++] = '\\'; buf[j++] = (char)ch; }
        else if (ch < 0x20) j += (size_t)snprintf(buf + j, len - j, "\\u%04x", ch);
        else buf[j++] = (char)ch;
    }
    buf[j] = 0;
    return buf;
}

/* ------------------------------------------------------------------ info hooks */

void cuda_mem_info(hb_instance *inst, int64_t *allocated, int64_t *free_b, int64_t *total_b)
{
    hbc_ctx *c = ctx_of(inst);
    if (allocated) *allocated = c ? c->dev_bytes : -1;
    if (free_b) *free_b = -1;
    if (total_b) *total_b = -1;
    if (!c || c->sticky) return;
    size_t f = 0, t = 0;
    cudaSetDevice(c->dev);
    if (cudaMemGetInfo(&f, &t) == cudaSuccess) {
        if (free_b) *free_b = (int64_t)f;
        if (total_b) *total_b = (int64_t)t;
    } else {
        (void)cudaGetLastError();
    }
}

hb_status cuda_case_info(hb_instance *inst, const hb_case *cs, char *buf, size_t len)
{
    hbc_ctx *c = ctx_of(inst);
    if (!c || !buf || len < 3) return HB_EINVAL;
    size_t j = (size_t)snprintf(buf, len, "{\"impl\":\"%s\"", c->last_impl);
    if (c->last_algo[0] && j < len) j += (size_t)snprintf(buf + j, len - j, ",\"algo\":\"%s\"", c->last_algo);
    if (c->last_qimpl[0] && j < len) j += (size_t)snprintf(buf + j, len - j, ",\"qmatmul_impl\":\"%s\"", c->last_qimpl);
    if (cs && (cs->op == HB_OP_CONV2D || cs->op == HB_OP_ATTENTION) && j < len) j += (size_t)snprintf(buf + j, len - j, ",\"workspace_bytes\":%zu", c->last_ws);
    if (cs && cs->op == HB_OP_CONV2D && c->last_conv && j < len) {
        /* the one-off choice's timings (ms, launch-gated events, best of 3; 0 = not available) and
         * the ratio of the exhaustive best to the chosen pipeline (>= 1: at least as fast as the
         * fastest cuDNN algorithm or engine found for this shape). The exhaustive best is taken in
         * either layout for an NCHW case (hybench's own layout, which a framework may transpose away
         * from) and in its own layout for a layout=nhwc case (what a channels-last framework runs);
         * exhaustive_best_either_ms is the best of all four in both. other_layout_pipeline_ms: the
         * convolution in the other layout inside the transforms there and back; cublas_gemm_ms: a
         * pointwise convolution as one cuBLAS gemm (cuda_conv_gemm.cu; 0 for other shapes). The
         * exhaustive best counts cuDNN only, so a chosen gemm shows as a ratio above 1. */
        const hbc_conv_choice *v = c->last_conv;
        const bool nhwc = cs->shape.layout == HB_LAYOUT_NHWC;
        float ex = 0, ex_all = 0;
        const float cand[4] = {v->legacy_nchw_ms, v->graph_nchw_ms, v->legacy_nhwc_ms, v->graph_nhwc_ms};
        for (int i = 0; i < 4; i++) {
            if (cand[i] > 0 && (ex_all == 0 || cand[i] < ex_all)) ex_all = cand[i];
            if (cand[i] > 0 && (!nhwc || i >= 2) && (ex == 0 || cand[i] < ex)) ex = cand[i];
        }
        j += (size_t)snprintf(buf + j, len - j,
                              ",\"conv_choice\":{\"layout\":\"%s\",\"chosen_ms\":%.5g,\"legacy_nchw_ms\":%.5g,\"graph_nchw_ms\":%.5g,"
                              "\"graph_nchw_engines\":%d,\"legacy_nhwc_ms\":%.5g,\"graph_nhwc_ms\":%.5g,"
                              "\"graph_nhwc_engines\":%d,\"%s\":%.5g,\"exhaustive_best_ms\":%.5g,"
                              "\"exhaustive_best_layout\":\"%s\",\"exhaustive_best_either_ms\":%.5g,"
                              "\"exhaustive_best_over_chosen\":%.4g,\"cublas_gemm_ms\":%.5g%s}",
                              nhwc ? "nhwc" : "nchw", (double)v->chosen_ms, (double)v->legacy_nchw_ms, (double)v->graph_nchw_ms,
                              v->graph_nchw_n, (double)v->legacy_nhwc_ms, (double)v->graph_nhwc_ms, v->graph_nhwc_n,
                              nhwc ? "nchw_pipeline_ms" : "nhwc_pipeline_ms", (double)v->nhwc_pipe_ms, (double)ex,
                              nhwc ? "nhwc" : "either", (double)ex_all,
                              v->chosen_ms > 0 ? (double)(ex / v->chosen_ms) : 0.0, (double)v->gemm_ms,
                              v->cache == HBC_CACHE_HIT ? ",\"from_cache\":true" : "");
    }
    /* the algorithm-choice cache (HB_ALGO_CACHE, cuda_choice_cache.cpp), for a case that made a one-off
     * choice (conv2d, f16/bf16 attention): how it was obtained; on a hit the choice's times above (and
     * attention's in "algo") are the original process's, read from the entry, and algo_cache_check_ms
     * is the chosen implementation timed here, the check that it runs */
    const char *cst = hbc_cache_state_name(c->last_cache);
    if (cst && j < len) j += (size_t)snprintf(buf + j, len - j, ",\"algo_cache\":\"%s\"", cst);
    if (cst && c->last_cache == HBC_CACHE_HIT && j < len)
        j += (size_t)snprintf(buf + j, len - j, ",\"algo_cache_check_ms\":%.5g", (double)c->last_cache_check_ms);
    if (cst && c->last_cache_note[0] && j < len) {
        char esc[400];
        j += (size_t)snprintf(buf + j, len - j, ",\"algo_cache_note\":\"%s\"", json_escape(c->last_cache_note, esc, sizeof esc));
    }
    if (c->gate_on && j < len) j += (size_t)snprintf(buf + j, len - j, ",\"device_timer\":\"events, launch-gated\"");
    if (c->enqueue_n > 0 && j < len) {
        const size_t n = (size_t)(c->enqueue_n < HBC_ENQ_KEEP ? c->enqueue_n : HBC_ENQ_KEEP);
        std::sort(c->enqueue_s, c->enqueue_s + n);
        const double med = n % 2 ? c->enqueue_s[n / 2] : 0.5 * (c->enqueue_s[n / 2 - 1] + c->enqueue_s[n / 2]);
        j += (size_t)snprintf(buf + j, len - j, ",\"host_enqueue_s\":%.9g", med);
    }
    c->enqueue_n = 0;
    if (cs) hbc_coll_case_info(cs, buf, len, &j);
    if (c->nvml && j < len) {
        unsigned sm = 0, smax = 0;
        if (c->nvml->clock(c->nvml->dev, NVML_CLOCK_SM_, &sm) == 0 && c->nvml->max_clock(c->nvml->dev, NVML_CLOCK_SM_, &smax) == 0)
            j += (size_t)snprintf(buf + j, len - j, ",\"sm_clock_mhz\":%u,\"sm_clock_max_mhz\":%u,\"throttled\":%s", sm, smax,
                                  (double)sm < 0.9 * (double)smax ? "true" : "false");
    }
    if (j + 2 > len) return HB_EINVAL;
    snprintf(buf + j, len - j, "}");
    return HB_OK;
}

hb_status cuda_describe(hb_instance *inst, char *buf, size_t len)
{
    hbc_ctx *c = ctx_of(inst);
    if (!c || !buf) return HB_EINVAL;
    int drv = 0, rt = 0, blas = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    const char *ready_err = nullptr;
    if (ensure_ready(c) != HB_OK) ready_err = "library handles could not be created";
    if (c->blas) cublasGetVersion(c->blas, &blas);
    char name[512];
    json_escape(c->prop.name, name, sizeof name);
    snprintf(buf, len,
             "{\"name\":\"%s\",\"compute_capability\":\"%d.%d\",\"sm_count\":%d,\"memory_bytes\":%zu,"
             "\"l2_bytes\":%d,\"sm_clock_max_mhz\":%d,\"mem_clock_max_mhz\":%d,\"memory_bus_bits\":%d,"
             "\"shared_mem_per_block_optin\":%zu,\"driver_version\":\"%d.%d\",\"nvml_driver_version\":\"%s\","
             "\"runtime_version\":\"%d.%d\",\"cublas_version\":%d,\"cudnn_version\":%zu,\"cudnn_version_built\":%d,"
             "\"pci_bus_id\":\"%04x:%02x:%02x\",\"can_map_host_memory\":%s%s%s%s}",
             name, c->prop.major, c->prop.minor, c->prop.multiProcessorCount, c->prop.totalGlobalMem, c->l2_bytes,
             c->sm_clock_khz / 1000, c->mem_clock_khz / 1000, c->prop.memoryBusWidth, c->prop.sharedMemPerBlockOptin,
             drv / 1000, (drv % 1000) / 10, c->nvml ? c->nvml->driver : "", rt / 1000, (rt % 1000) / 10, blas,
             cudnnGetVersion(), CUDNN_VERSION, c->prop.pciDomainID, c->prop.pciBusID, c->prop.pciDeviceID,
             c->prop.canMapHostMemory ? "true" : "false", ready_err ? ",\"error\":\"" : "", ready_err ? ready_err : "",
             ready_err ? "\"" : "");
    hbc_coll_describe(c, buf, len); /* NCCL version, launch, topology */
    return HB_OK;
}
