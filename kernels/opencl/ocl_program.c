/*
 * ocl_program.c - OpenCL error names and checking, the kernel directory, program builds (once per
 * device when an instance opens) and the kernel object cache. See ocl.h.
 */
#include "opencl/ocl.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *ocl_errname(cl_int e)
{
    switch (e) {
#define E(x) case x: return #x;
    E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_IMAGE_FORMAT_MISMATCH)
    E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE)
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    E(CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE)
    E(CL_DEVICE_PARTITION_FAILED) E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE)
    E(CL_INVALID_CONTEXT) E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE)
    E(CL_INVALID_HOST_PTR) E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    E(CL_INVALID_IMAGE_SIZE) E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS)
    E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
    E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
    E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
    E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
    E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT)
    E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT) E(CL_INVALID_BUFFER_SIZE)
    E(CL_INVALID_MIP_LEVEL) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
    E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS) E(CL_INVALID_LINKER_OPTIONS)
    E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef E
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL_UNKNOWN_ERROR";
    }
}

cl_int ocl_check_at(cl_int e, const char *call, const char *file, int line)
{
    if (e != CL_SUCCESS)
        fprintf(stderr, "hybench opencl: %s failed: %s (%d) at %s:%d\n", call, ocl_errname(e), (int)e, file, line);
    return e;
}

hb_status ocl_status(cl_int e)
{
    switch (e) {
    case CL_SUCCESS: return HB_OK;
    case CL_OUT_OF_RESOURCES: case CL_MEM_OBJECT_ALLOCATION_FAILURE: case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE:
        return HB_ENOMEM;
    default: return HB_EDEVICE;
    }
}

/* ---- kernel directory ---- */

static int dir_has_common(const char *dir)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/hb_common.cl", dir);
    return access(p, R_OK) == 0;
}

int ocl_find_kernel_dir(char *dir, size_t len)
{
    const char *env = ocl_cfg()->kernel_dir;
    if (env && *env) {
        snprintf(dir, len, "%s", env);
        return dir_has_common(dir) ? 0 : -1;
    }
    Dl_info info;
    if (dladdr((const void *)&hb_opencl_ops, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
        char so[1024];
        snprintf(so, sizeof so, "%s", info.dli_fname);
        *strrchr(so, '/') = 0;
        snprintf(dir, len, "%s/opencl", so);
        if (dir_has_common(dir)) return 0;
    }
    snprintf(dir, len, "kernels/opencl");
    return dir_has_common(dir) ? 0 : -1;
}

/* Read dir/name into a malloc'd NUL-terminated string (caller frees); NULL on error. */
static char *read_source(const char *dir, const char *name)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f) { fprintf(stderr, "hybench opencl: cannot read kernel source %s\n", p); return NULL; }
    char *s = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (s = malloc((size_t)n + 1))) {
            if (fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
            else s[n] = 0;
        }
    }
    fclose(f);
    return s;
}

static const char *const prog_file[OCL_P_COUNT] = {
    [OCL_P_ELEMENTWISE] = "hb_elementwise.cl", [OCL_P_MATMUL] = "hb_matmul.cl",
    [OCL_P_CONV_POOL] = "hb_conv_pool.cl", [OCL_P_REDUCE] = "hb_reduce.cl", [OCL_P_PROBE] = "hb_probe.cl",
    [OCL_P_CONVERT] = "hb_convert.cl", [OCL_P_QMATMUL] = "hb_qmatmul.cl",
};

/* Build hb_common.cl + file with options; returns the program or NULL (*err set; log printed). */
static cl_program build_one(ocl_ctx *c, const char *file, const char *extra, int var, cl_int *err)
{
    char *common = read_source(c->kdir, "hb_common.cl");
    char *body = read_source(c->kdir, file);
    cl_program p = NULL;
    *err = CL_SUCCESS;
    if (!common || !body) { *err = CL_INVALID_PROGRAM; goto out; }
    const char *srcs[2] = {common, body};
    p = clCreateProgramWithSource(c->ctx, 2, srcs, NULL, err);
    if (OCL_CHECK(*err)) { p = NULL; goto out; }
    char opts[256];
    snprintf(opts, sizeof opts, "-cl-std=CL1.2 -DHB_HALF=%d -DHB_CPU_STYLE=%d %s", var, c->cpu_style, extra ? extra : "");
    *err = clBuildProgram(p, 1, &c->dev, opts, NULL, NULL);
    if (*err != CL_SUCCESS) {
        size_t loglen = 0;
        clGetProgramBuildInfo(p, c->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &loglen);
        char *log = malloc(loglen + 1);
        if (log) {
            log[0] = 0;
            clGetProgramBuildInfo(p, c->dev, CL_PROGRAM_BUILD_LOG, loglen, log, NULL);
            log[loglen] = 0;
        }
        fprintf(stderr, "hybench opencl: build of %s/%s (%s, options \"%s\") for %s failed: %s (%d)\n"
                "---- build log ----\n%s\n---- end of build log ----\n",
                c->kdir, file, var ? "f16" : "f32", opts, c->dev_name, ocl_errname(*err), (int)*err, log ? log : "");
        free(log);
        clReleaseProgram(p);
        p = NULL;
    }
out:
    free(common);
    free(body);
    return p;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void ocl_build_all(ocl_ctx *c)
{
    double t0 = now_s();
    for (int p = 0; p < OCL_P_COUNT; p++)
        for (int v = 0; v < OCL_NVAR; v++) {
            c->prog[p][v] = NULL;
            c->prog_err[p][v] = CL_INVALID_PROGRAM;
            if (v == 1 && (!c->f16_ok || p == OCL_P_PROBE || p == OCL_P_CONVERT || p == OCL_P_QMATMUL)) continue;
            if (p == OCL_P_CONVERT && !c->fp64) continue;
            c->prog[p][v] = build_one(c, prog_file[p], NULL, v, &c->prog_err[p][v]);
        }
    c->build_s = now_s() - t0;
}

void ocl_release_programs(ocl_ctx *c)
{
    for (int i = 0; i < c->nkc; i++)
        if (c->kc[i].k) clReleaseKernel(c->kc[i].k);
    c->nkc = 0;
    for (int p = 0; p < OCL_P_COUNT; p++)
        for (int v = 0; v < OCL_NVAR; v++)
            if (c->prog[p][v]) { clReleaseProgram(c->prog[p][v]); c->prog[p][v] = NULL; }
    for (int i = 0; i < c->natt; i++)
        if (c->att[i].prog) clReleaseProgram(c->att[i].prog);
    c->natt = 0;
}

static cl_kernel cached_kernel(ocl_ctx *c, cl_program prog, const char *name, cl_int *err)
{
    for (int i = 0; i < c->nkc; i++)
        if (c->kc[i].prog == prog && !strcmp(c->kc[i].name, name)) return c->kc[i].k;
    cl_kernel k = clCreateKernel(prog, name, err);
    if (OCL_CHECK(*err)) return NULL;
    if (c->nkc < OCL_MAX_KCACHE) {
        ocl_kcache *e = &c->kc[c->nkc++];
        e->prog = prog;
        snprintf(e->name, sizeof e->name, "%s", name);
        e->k = k;
    } else {
        /* cache full (never with the kernels of this backend): keep the oldest entry's slot */
        clReleaseKernel(c->kc[0].k);
        c->kc[0].prog = prog;
        snprintf(c->kc[0].name, sizeof c->kc[0].name, "%s", name);
        c->kc[0].k = k;
    }
    return k;
}

cl_kernel ocl_kernel(ocl_ctx *c, ocl_prog p, int var, const char *name, cl_int *err)
{
    if ((unsigned)p >= OCL_P_COUNT || var < 0 || var >= OCL_NVAR || !c->prog[p][var]) {
        *err = (unsigned)p < OCL_P_COUNT && var >= 0 && var < OCL_NVAR ? c->prog_err[p][var] : CL_INVALID_VALUE;
        if (*err == CL_SUCCESS) *err = CL_INVALID_PROGRAM;
        return NULL;
    }
    return cached_kernel(c, c->prog[p][var], name, err);
}

cl_kernel ocl_attention_kernel(ocl_ctx *c, int hd, int var, cl_int *err)
{
    ocl_attprog *a = NULL;
    for (int i = 0; i < c->natt; i++)
        if (c->att[i].hd == hd && c->att[i].var == var) a = &c->att[i];
    if (!a) {
        if (c->natt == OCL_MAX_ATT) {  /* many head dims: drop the oldest program */
            for (int i = 0; i < c->nkc; i++)
                if (c->kc[i].prog == c->att[0].prog) { clReleaseKernel(c->kc[i].k); c->kc[i] = c->kc[--c->nkc]; i--; }
            if (c->att[0].prog) clReleaseProgram(c->att[0].prog);
            memmove(&c->att[0], &c->att[1], sizeof c->att[0] * (OCL_MAX_ATT - 1));
            c->natt--;
        }
        a = &c->att[c->natt++];
        a->hd = hd;
        a->var = var;
        char extra[32];
        snprintf(extra, sizeof extra, "-DHD=%d", hd);
        a->prog = build_one(c, "hb_attention.cl", extra, var, &a->err);
    }
    if (!a->prog) { *err = a->err != CL_SUCCESS ? a->err : CL_INVALID_PROGRAM; return NULL; }
    return cached_kernel(c, a->prog, "hb_attention", err);
}
