/*
 * cpu_dnnl_gemm.c - matmul and bmm of the cpu backend: OpenBLAS (cpu_gemm.c, under the thread plans
 * measured at open) or oneDNN (Debian libdnnl-dev, C API oneapi/dnnl/dnnl.h, built on libgomp like
 * hybench), whichever a timed probe at the shape's first call found faster, as cpu_dnnl.c does for
 * conv2d. Compiled with oneDNN when the Makefile finds it (HB_HAVE_DNNL); without it every product
 * runs on OpenBLAS and the case's extra field `gemm_choice` says why.
 *
 * Tensors (hybench.h, f32, dense, row-major, caller-owned, never kept between calls):
 *   matmul  A [m, k], B [k, n] -> C [m, n]
 *   bmm     A [batch, m, k], B [batch, k, n] -> C [batch, m, n] (matrix b at b*m*k, b*k*n, b*m*n)
 * Only dtype f32 reaches here: the cpu backend refuses tf32/f16/bf16 cases as skips (cpu_backend.c
 * cpu_supports, "cpu backend computes in f32 only"). oneDNN runs with its default (strict) fp math:
 * no bf16/tf32 down-conversion; C = A B with beta 0 (C only written).
 *
 * Candidates per (op, shape, thread count):
 *   openblas       today's path: matmul gemm_plan_run under gemm_plan_for's plan (sgemv for m or
 *                  n = 1), bmm k_bmm (cpu_gemm.c); impl names the plan ("openblas-sgemm", ...).
 *   onednn-sgemm   dnnl_sgemm('N', 'N', ...) (row-major), once per matrix for bmm, each call on
 *                  oneDNN's OpenMP threads; impl "onednn-sgemm".
 *   onednn-matmul  oneDNN's matmul primitive, [m,k] x [k,n] (tags ab), for bmm one primitive with the
 *                  batch as leading dimension (abc), created in the shape's first call with a user
 *                  scratchpad; impl "onednn-matmul:<impl_info_str>" ("gemm:jit", "brg:avx512_core",
 *                  ...). One that only oneDNN's reference loops implement ("ref...") is dropped.
 * The choice: in the shape's first call (the harness's untimed verification call, measure/sample.c)
 * each oneDNN candidate runs once (below), then every candidate once untimed and in interleaved timed
 * rounds (probe_best_of, cpu_probe.c,
 * shared with conv2d's choice); the fastest best-of (minimum) is kept for the process and its
 * figures go into extra.gemm_choice ("probe best-of: openblas 0.41 ms, onednn-sgemm 0.38 ms
 * (chosen), ..."). The first call ends with a run of the winner on the caller's buffers.
 * HB_CPU_GEMM (read per call) forces a path: openblas, onednn (the faster oneDNN candidate, probed
 * without OpenBLAS), onednn-sgemm, onednn-matmul (that candidate; OpenBLAS, with the reason noted,
 * when oneDNN cannot create it); auto or unset: the probe.
 *
 * Threads: oneDNN's OpenMP runtime takes omp_get_max_threads() of the calling thread, the count
 * hb_cpu_bind_threads set (--threads); the count is part of the cache key and a oneDNN winner
 * reports it as the case's threads (oneDNN may use fewer inside). A region of fewer threads than the
 * team would end libgomp's surplus pool threads, and the ones it starts again would inherit the
 * master's one-core binding (cpu_ew.c ew_run). oneDNN's sgemm drivers open their regions on the whole
 * team under OpenMP ("nthr_spawn", gemm_driver.cpp), but a primitive need not: so each oneDNN
 * candidate's first run (untimed, before the probe) is followed by hb_cpu_rebind_team (cpu_sys.c),
 * and a candidate that lost pool threads there is followed by it in every later call (counted in
 * its time; gemm_choice says "rebinds the team"). Threading is decided per shape and thread count,
 * so one call tells.
 * Errors: HB_ENOMEM when oneDNN cannot allocate a primitive's buffers, HB_EDEVICE when a oneDNN call
 * fails at run time. The cache (GEMM_CACHE entries, oldest replaced) is freed by gemm_release (the
 * backend's close, before dnnl_engine_release). One thread uses it at a time (backend.h).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_dnnl.h"
#include "cpu/cpu_priv.h"
#include "cpu_ref/kshape.h"

/* HB_CPU_GEMM */
enum { G_AUTO, G_BLAS, G_DNNL, G_SGEMM, G_MATMUL };
/* oneDNN candidates */
enum { C_SGEMM, C_MATMUL, NCAND };

static int gemm_force(void)
{
    const char *e = hb_cpu_cfg()->cpu_gemm;
    if (!e || !*e || !strcmp(e, "auto")) return G_AUTO;
    if (!strcmp(e, "openblas")) return G_BLAS;
    if (!strcmp(e, "onednn")) return G_DNNL;
    if (!strcmp(e, "onednn-sgemm")) return G_SGEMM;
    if (!strcmp(e, "onednn-matmul")) return G_MATMUL;
    return G_AUTO;
}

/* The product of case c: batch (1 for matmul), m, n, k. */
typedef struct gemm_dims {
    int64_t batch, m, n, k;
} gemm_dims;

static gemm_dims dims_of(const hb_case *c)
{
    const gemm_dims d = { c->op == HB_OP_BMM ? hbk_def(c->shape.batch, 1) : 1, c->shape.m, c->shape.n, c->shape.k };
    return d;
}

/* Today's OpenBLAS path (cpu_gemm.c). */
static hb_status blas_run(const hb_case *c, const gemm_dims *d, const float *A, const float *B, float *C)
{
    if (c->op == HB_OP_BMM)
        return k_bmm(d->batch, d->m, d->n, d->k, A, B, C);
    gemm_plan_run(gemm_plan_for(d->m, d->n, d->k), d->m, d->n, d->k, A, B, C);
    return HB_OK;
}

#ifdef HB_HAVE_DNNL
static const char *const cand_name[NCAND] = { "onednn-sgemm", "onednn-matmul" };

/* The matmul primitive of one shape: user memories (handles set per call) and its scratchpad. */
typedef struct mm_prim {
    dnnl_primitive_t mm;
    dnnl_memory_t a, b, c, scratch;
    dnnl_stream_t strm;
    char info[64]; /* impl_info_str */
} mm_prim;

static void mm_free(mm_prim *p)
{
    if (p->mm) dnnl_primitive_destroy(p->mm);
    dnnl_memory_t *m[] = { &p->a, &p->b, &p->c, &p->scratch };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (*m[i]) dnnl_memory_destroy(*m[i]);
    memset(p, 0, sizeof *p);
}

/* Create the matmul primitive for d (2-D for batch 1 of matmul, 3-D for bmm). HB_OK; HB_ESKIP with
 * why when oneDNN has no (non-reference) implementation; HB_ENOMEM when its buffers fail. */
static hb_status mm_make(const hb_case *c, const gemm_dims *d, mm_prim *p, char *why, size_t wlen)
{
    memset(p, 0, sizeof *p);
    dnnl_engine_t eng;
    if (!hb_dnnl_engine(&eng, &p->strm)) { snprintf(why, wlen, "oneDNN cpu engine not created"); return HB_ESKIP; }
    const int nd = c->op == HB_OP_BMM ? 3 : 2;
    dnnl_dims_t ad = { d->batch, d->m, d->k }, bd = { d->batch, d->k, d->n }, cd = { d->batch, d->m, d->n };
    if (nd == 2) { /* drop the batch */
        ad[0] = d->m, ad[1] = d->k;
        bd[0] = d->k, bd[1] = d->n;
        cd[0] = d->m, cd[1] = d->n;
    }
    const dnnl_format_tag_t tag = nd == 3 ? dnnl_abc : dnnl_ab;
    dnnl_memory_desc_t am, bm, cm;
    dnnl_matmul_desc_t md;
    if (dnnl_memory_desc_init_by_tag(&am, nd, ad, dnnl_f32, tag) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&bm, nd, bd, dnnl_f32, tag) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&cm, nd, cd, dnnl_f32, tag) != dnnl_success ||
        dnnl_matmul_desc_init(&md, &am, &bm, NULL, &cm) != dnnl_success) {
        snprintf(why, wlen, "oneDNN rejected the matmul descriptors");
        return HB_ESKIP;
    }
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    int ok = dnnl_primitive_attr_create(&attr) == dnnl_success &&
             dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success;
    if (!ok || dnnl_primitive_desc_create(&pd, &md, attr, eng, NULL) != dnnl_success) {
        if (attr) dnnl_primitive_attr_destroy(attr);
        snprintf(why, wlen, "oneDNN has no matmul implementation for this shape");
        return HB_ESKIP;
    }
    dnnl_primitive_attr_destroy(attr);
    const char *info = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &info);
    snprintf(p->info, sizeof p->info, "%s", info ? info : "?");
    if (!strncmp(p->info, "ref", 3)) { /* oneDNN's reference loops: not worth a probe (cpu_dnnl.c) */
        dnnl_primitive_desc_destroy(pd);
        snprintf(why, wlen, "only oneDNN's reference implementation (%.40s)", p->info);
        return HB_ESKIP;
    }
    const dnnl_memory_desc_t *ps = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    ok = dnnl_primitive_create(&p->mm, pd) == dnnl_success &&
         dnnl_memory_create(&p->a, &am, eng, DNNL_MEMORY_NONE) == dnnl_success &&
         dnnl_memory_create(&p->b, &bm, eng, DNNL_MEMORY_NONE) == dnnl_success &&
         dnnl_memory_create(&p->c, &cm, eng, DNNL_MEMORY_NONE) == dnnl_success;
    if (ok && ps && dnnl_memory_desc_get_size(ps) > 0)
        ok = dnnl_memory_create(&p->scratch, ps, eng, DNNL_MEMORY_ALLOCATE) == dnnl_success;
    dnnl_primitive_desc_destroy(pd);
    if (!ok) {
        mm_free(p);
        snprintf(why, wlen, "oneDNN failed to create the matmul primitive or its buffers");
        return HB_ENOMEM;
    }
    return HB_OK;
}

static hb_status mm_run(mm_prim *p, const float *A, const float *B, float *C)
{
    if (dnnl_memory_set_data_handle(p->a, (void *)A) != dnnl_success ||
        dnnl_memory_set_data_handle(p->b, (void *)B) != dnnl_success ||
        dnnl_memory_set_data_handle(p->c, C) != dnnl_success)
        return HB_EDEVICE;
    dnnl_exec_arg_t a[4] = { { DNNL_ARG_SRC, p->a }, { DNNL_ARG_WEIGHTS, p->b }, { DNNL_ARG_DST, p->c },
                             { DNNL_ARG_SCRATCHPAD, p->scratch } };
    hb_status st = dnnl_primitive_execute(p->mm, p->strm, p->scratch ? 4 : 3, a) == dnnl_success ? HB_OK : HB_EDEVICE;
    if (dnnl_stream_wait(p->strm) != dnnl_success) st = HB_EDEVICE;
    return st;
}

/* dnnl_sgemm once per matrix (row-major, no transpose, alpha 1, beta 0). */
static hb_status sgemm_run(const gemm_dims *d, const float *A, const float *B, float *C)
{
    for (int64_t b = 0; b < d->batch; b++)
        if (dnnl_sgemm('N', 'N', d->m, d->n, d->k, 1.0f, A + b * d->m * d->k, d->k, B + b * d->k * d->n, d->n, 0.0f,
                       C + b * d->m * d->n, d->n) != dnnl_success)
            return HB_EDEVICE;
    return HB_OK;
}

/* oneDNN candidate k on the caller's buffers; with guard, the team's binding restored after it (header
 * comment). */
static hb_status cand_run(int k, int guard, mm_prim *p, const gemm_dims *d, const float *A, const float *B,
                          float *C)
{
    const hb_status st = k == C_SGEMM ? sgemm_run(d, A, B, C) : mm_run(p, A, B, C);
    if (guard)
        hb_cpu_rebind_team();
    return st;
}
#else
typedef struct mm_prim { int unused; } mm_prim;
#endif /* HB_HAVE_DNNL */

/* One shape's choice. */
typedef struct gemm_entry {
    int used;
    hb_op op;
    hb_shape shape;
    int threads, force;
    int win;           /* -1: OpenBLAS, else the oneDNN candidate C_* */
    int guard;         /* the winner lost pool threads in its first run: rebind after each call */
    mm_prim mm;        /* the matmul primitive when win == C_MATMUL */
    char impl[96];     /* the case's impl when oneDNN runs */
    char note[480];    /* extra.gemm_choice: the probe's figures or why OpenBLAS runs */
} gemm_entry;

#define GEMM_CACHE 128
static gemm_entry g_gemm[GEMM_CACHE];
static int g_gemm_next;

static gemm_entry *gemm_find(const hb_case *c, int T, int force)
{
    for (int i = 0; i < GEMM_CACHE; i++)
        if (g_gemm[i].used && g_gemm[i].op == c->op && g_gemm[i].threads == T && g_gemm[i].force == force &&
            !memcmp(&g_gemm[i].shape, &c->shape, sizeof c->shape))
            return &g_gemm[i];
    return NULL;
}

#ifdef HB_HAVE_DNNL
/* The probe's slots (probe_best_of): k < n the oneDNN candidate var[k], k == n OpenBLAS. */
typedef struct gprobe {
    const hb_case *c;
    const gemm_dims *d;
    mm_prim *mm;
    const int *var, *guard;
    int n;
    const float *A, *B;
    float *C;
} gprobe;

static hb_status gprobe_run(void *ctx, int k)
{
    gprobe *g = ctx;
    return k < g->n ? cand_run(g->var[k], g->guard[k], g->mm, g->d, g->A, g->B, g->C)
                    : blas_run(g->c, g->d, g->A, g->B, g->C);
}

/* Create the candidates the force allows, probe them (with OpenBLAS unless oneDNN is forced), keep the
 * winner in e. Runs on the caller's buffers; the caller runs the winner last. */
static hb_status gemm_choose(gemm_entry *e, const hb_case *c, const gemm_dims *d, const float *A, const float *B,
                             float *C)
{
    int var[NCAND], n = 0;
    char why[NCAND][96] = { "", "" };
    mm_prim mm;
    memset(&mm, 0, sizeof mm);
    if (e->force != G_MATMUL)
        var[n++] = C_SGEMM;
    if (e->force != G_SGEMM) {
        const hb_status ms = mm_make(c, d, &mm, why[C_MATMUL], sizeof why[C_MATMUL]);
        if (ms == HB_OK)
            var[n++] = C_MATMUL;
        else if (ms != HB_ESKIP)
            return ms;
    }
    if (n == 0) {
        e->win = -1;
        snprintf(e->note, sizeof e->note, "openblas: oneDNN: %s", why[C_MATMUL]);
        return HB_OK;
    }
    /* each oneDNN candidate's first run (JIT, page faults): did it end pool threads? */
    int guard[NCAND] = { 0, 0 };
    hb_status st = HB_OK;
    for (int k = 0; k < n && st == HB_OK; k++) {
        st = cand_run(var[k], 0, &mm, d, A, B, C);
        guard[k] = hb_cpu_rebind_team() > 0;
    }
    if (st != HB_OK) {
        if (mm.mm) mm_free(&mm);
        return st;
    }
    const int slots = n + (e->force == G_AUTO);
    double best[NCAND + 1];
    int win = 0;
    if (slots > 1) {
        gprobe g = { c, d, &mm, var, guard, n, A, B, C };
        st = probe_best_of(slots, gprobe_run, &g, best);
        for (int k = 1; k < slots; k++)
            if (best[k] < best[win]) win = k;
        int len = snprintf(e->note, sizeof e->note, "probe best-of:");
        for (int k = 0; k < slots && len < (int)sizeof e->note; k++)
            len += snprintf(e->note + len, sizeof e->note - (size_t)len, "%s %s%s%s %.4g ms%s", k ? "," : "",
                            k < n ? cand_name[var[k]] : "openblas", k < n && var[k] == C_MATMUL ? "=" : "",
                            k < n && var[k] == C_MATMUL ? mm.info : "", 1e3 * best[k], k == win ? " (chosen)" : "");
        if (why[C_MATMUL][0] && len < (int)sizeof e->note)
            snprintf(e->note + len, sizeof e->note - (size_t)len, "; onednn-matmul: %s", why[C_MATMUL]);
    } else {
        snprintf(e->note, sizeof e->note, "%s: forced by HB_CPU_GEMM%s%s", cand_name[var[0]],
                 why[C_MATMUL][0] ? "; onednn-matmul: " : "", why[C_MATMUL]);
    }
    e->win = win < n ? var[win] : -1;
    e->guard = win < n && guard[win];
    for (int k = 0; k < n; k++) {
        const size_t len = strlen(e->note);
        if (guard[k])
            snprintf(e->note + len, sizeof e->note - len, "; %s ended pool threads: rebinds the team after each call",
                     cand_name[var[k]]);
    }
    if (e->win == C_MATMUL)
        e->mm = mm;
    else if (mm.mm)
        mm_free(&mm);
    if (e->win == C_SGEMM)
        snprintf(e->impl, sizeof e->impl, "onednn-sgemm");
    else if (e->win == C_MATMUL)
        snprintf(e->impl, sizeof e->impl, "onednn-matmul:%s", e->mm.info);
    return st;
}
#endif

hb_status gemm_run(const hb_case *c, const float *A, const float *B, float *C)
{
    const gemm_dims d = dims_of(c);
    const int T = omp_get_max_threads(), force = gemm_force();
    if (force == G_BLAS)
        return blas_run(c, &d, A, B, C);
    gemm_entry *e = gemm_find(c, T, force);
    if (!e) {
        e = &g_gemm[g_gemm_next];
        g_gemm_next = (g_gemm_next + 1) % GEMM_CACHE;
#ifdef HB_HAVE_DNNL
        if (e->used && e->win == C_MATMUL) mm_free(&e->mm);
#endif
        memset(e, 0, sizeof *e);
        e->op = c->op;
        e->shape = c->shape;
        e->threads = T;
        e->force = force;
        e->win = -1;
#ifdef HB_HAVE_DNNL
        const hb_status st = gemm_choose(e, c, &d, A, B, C);
        if (st != HB_OK) {
            if (e->win == C_MATMUL) mm_free(&e->mm);
            memset(e, 0, sizeof *e);
            return st;
        }
#else
        snprintf(e->note, sizeof e->note, "openblas: oneDNN not in this build (libdnnl-dev absent when it was built)");
#endif
        e->used = 1;
    }
#ifdef HB_HAVE_DNNL
    if (e->win >= 0) return cand_run(e->win, e->guard, &e->mm, &d, A, B, C);
#endif
    return blas_run(c, &d, A, B, C);
}

const char *gemm_impl(const hb_case *c)
{
    const gemm_entry *e = gemm_find(c, omp_get_max_threads(), gemm_force());
    return e && e->win >= 0 ? e->impl : NULL;
}

const char *gemm_note(const hb_case *c)
{
    if (gemm_force() == G_BLAS) return "openblas: forced by HB_CPU_GEMM=openblas";
    const gemm_entry *e = gemm_find(c, omp_get_max_threads(), gemm_force());
    return e ? e->note : NULL;
}

void gemm_release(void)
{
#ifdef HB_HAVE_DNNL
    for (int i = 0; i < GEMM_CACHE; i++)
        if (g_gemm[i].used && g_gemm[i].win == C_MATMUL) mm_free(&g_gemm[i].mm);
#endif
    memset(g_gemm, 0, sizeof g_gemm);
    g_gemm_next = 0;
}
