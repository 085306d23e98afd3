/*
 * config.h - a run's configuration as plain data (hb_config), filled once at the command-line
 * boundary (cli/main.c, hb_config_from_env, then cli/cmd_*.c from their options) and handed to each
 * backend through its configure hook (core/backend.h) and to harness code through hb_config_get.
 * Nothing below cli/ reads the environment for these settings: docs/environment.md lists every
 * variable, its default and its reader, and the few that stay environment by nature (child-process
 * and launcher protocols, variables a library reads itself), which tests/check_getenv.sh allows.
 *
 * Header-only for the struct and the name table (the plugins link no harness symbol); the two
 * functions are in core/config.c.
 *
 * Each field is the variable's text, or NULL when it is unset (the readers keep their own parsing
 * and defaults, given in docs/environment.md). The strings are the environment's own (getenv's
 * result; glibc never frees a value that setenv replaces, so they stay valid for the process's life).
 */
#ifndef HB_CONFIG_H
#define HB_CONFIG_H
#ifdef __cplusplus
extern "C" {
#endif

/* X(field, "VARIABLE"): every setting that reaches code below cli/; written once here. */
#define HB_CONFIG_VARS(X)                                                                                  \
    /* kernels/cpu */                                                                                      \
    X(cpu_isa, "HB_CPU_ISA") X(cpu_attn_isa, "HB_CPU_ATTN_ISA") X(cpu_attn_tq, "HB_CPU_ATTN_TQ")            \
    X(cpu_attn_tk, "HB_CPU_ATTN_TK") X(cpu_attn_nosplit, "HB_CPU_ATTN_NOSPLIT")                            \
    X(cpu_qmm_isa, "HB_CPU_QMM_ISA") X(cpu_gemm, "HB_CPU_GEMM") X(cpu_conv, "HB_CPU_CONV")                 \
    X(cpu_col_kib, "HB_CPU_COL_KIB") X(cpu_nt_min, "HB_CPU_NT_MIN")                                       \
    /* kernels/opencl */                                                                                   \
    X(opencl_style, "HB_OPENCL_STYLE") X(opencl_force_f16, "HB_OPENCL_FORCE_F16")                          \
    X(opencl_matmul, "HB_OPENCL_MATMUL") X(opencl_no_clblast, "HB_OPENCL_NO_CLBLAST")                      \
    X(kernel_dir, "HB_KERNEL_DIR")                                                                         \
    /* kernels/cuda */                                                                                     \
    X(cuda_conv_own_transpose, "HB_CUDA_CONV_OWN_TRANSPOSE") X(cuda_conv_gemm, "HB_CUDA_CONV_GEMM")        \
    X(cuda_conv_api, "HB_CUDA_CONV_API") X(cuda_conv_native_only, "HB_CUDA_CONV_NATIVE_ONLY")              \
    X(cuda_conv_nchw_only, "HB_CUDA_CONV_NCHW_ONLY") X(cuda_conv_rtc, "HB_CUDA_CONV_RTC")                  \
    X(cuda_conv_force_nhwc, "HB_CUDA_CONV_FORCE_NHWC") X(cuda_conv_force_other, "HB_CUDA_CONV_FORCE_OTHER") \
    X(cuda_attn, "HB_CUDA_ATTN") X(cuda_attn_tf32, "HB_CUDA_ATTN_TF32") X(cuda_attn_f32, "HB_CUDA_ATTN_F32") \
    X(cuda_attn_warps, "HB_CUDA_ATTN_WARPS") X(cuda_attn_mt, "HB_CUDA_ATTN_MT")                            \
    X(cuda_ew_small, "HB_CUDA_EW_SMALL") X(cuda_reduce_sub, "HB_CUDA_REDUCE_SUB") X(cuda_gate, "HB_CUDA_GATE") \
    X(algo_cache, "HB_ALGO_CACHE") X(nccl_lib, "HB_NCCL_LIB") X(coll_timeout, "HB_COLL_TIMEOUT")           \
    X(nccl_blocking, "HB_NCCL_BLOCKING") X(inject_skip, "HB_INJECT_SKIP")                                 \
    /* harness/ */                                                                                         \
    X(convert_nt_min, "HB_CONVERT_NT_MIN") X(plugin_dir, "HB_PLUGIN_DIR") X(plant, "HB_PLANT")             \
    X(plant_work, "HB_PLANT_WORK") X(inject_crash, "HB_INJECT_CRASH") X(inject_kill, "HB_INJECT_KILL")     \
    X(benchdnn_dir, "HB_BENCHDNN_DIR") X(tmpdir, "TMPDIR") X(user, "USER")

typedef struct hb_config {
#define HB_CONFIG_FIELD_(f, name) const char *f;
    HB_CONFIG_VARS(HB_CONFIG_FIELD_)
#undef HB_CONFIG_FIELD_
    /* Filled from options, not the environment (cli/cmd_run.c): the per-case time limit in seconds
     * (--case-timeout; 0: none), which a collective's watchdog also waits for (kernels/cuda). */
    double case_timeout_s;
} hb_config;

/* Fill *c from the process environment (every variable of HB_CONFIG_VARS; unset -> NULL; other
 * fields zero). Called by cli/main.c at start and by tests that set variables. */
void hb_config_from_env(hb_config *c);
/* The process's configuration: what cli/ filled (hb_config_boundary), all-unset before that.
 * Never NULL. */
const hb_config *hb_config_get(void);
/* The same struct, writable: for cli/ (the command-line boundary) and tests only. */
hb_config *hb_config_boundary(void);

#ifdef __cplusplus
}
#endif
#endif
