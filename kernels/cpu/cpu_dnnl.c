/*
 * cpu_dnnl.c - conv2d of the cpu backend through oneDNN (Debian libdnnl-dev, C API oneapi/dnnl/dnnl.h,
 * built on libgomp like hybench), and the per-shape choice between it and the own im2col + sgemm
 * path (cpu_conv.c k_conv2d / k_conv2d_nhwc), made by measurement. Compiled in when the Makefile
 * finds the library (HB_HAVE_DNNL); without it every conv2d runs the own path and the case's extra
 * field `conv_choice` says why.
 *
 * Tensors (hybench.h, f32, dense, caller-owned, never kept between calls):
 *   NCHW: x [b, c, h, w] (oneDNN nchw), w [oc, c/g, kh, kw] (oihw; goihw as [g, oc/g, c/g, kh, kw]
 *         when g > 1), y [b, oc, oh, ow] (nchw)
 *   NHWC: x [b, h, w, c] (nhwc), w [oc, kh, kw, c/g] (ohwi; gohwi), y [b, oh, ow, oc] (nhwc)
 * Padding: left = ph/pw, right the same (oneDNN's size check then reproduces hybench's floor
 * formula exactly); dilation d is oneDNN's d - 1. No bias. prop_kind forward_inference, f32 with
 * oneDNN's default (strict) fp math: no bf16/tf32 down-conversion.
 *
 * Candidates per shape, each one primitive (plus reorders) created once, at the shape's first call:
 *   plain   src, weights, dst in the case's layout tags: no reorder (oneDNN's gemm-based or
 *           layout-native kernels).
 *   wany    src, dst in the case's layout, weights format_tag_any: the weights are reordered into
 *           the primitive's blocked layout in every call (counted in the call).
 *   any     all three format_tag_any (nChw8c-style blocked activations): every call reorders x and
 *           w in and y out (counted in the call).
 * Weights are reordered per call, never once and kept: no cpu mode declares them constant (convert
 * rewrites every operand, weights included, each call; hybench.h modes), so a cached reorder would
 * compute on a copy the case did not pass. A candidate whose chosen layouts equal an earlier one's
 * is dropped, and so is one that only oneDNN's reference loops implement ("ref:any": NHWC with
 * plain OHWI weights in 2.6, 7.7 s against 2 ms for the others on b1_3x3). Primitive creation, its scratchpad and the blocked buffers are set-up: done in the
 * shape's first call, which is the harness's untimed verification/warm-up call (measure/sample.c).
 *
 * The choice: in that first call every candidate and the own path run once untimed, then in
 * interleaved rounds (at least 3, at most 9, no new round after 0.3 s, or after 2 s from the first
 * on; the order rotates) each is timed with CLOCK_MONOTONIC (probe_best_of, cpu_probe.c, which the
 * matmul/bmm choice of cpu_dnnl_gemm.c shares); the fastest best-of (the minimum: on a shared
 * machine single runs lose 10-40 ms to other processes, the minimum is what the code itself costs)
 * is kept for the shape (and thread count) for the process. The figures go into the case's
 * extra.conv_choice.
 * The first call ends with a run of the winner on the caller's buffers. HB_CPU_CONV (read per call)
 * forces a path for tests: own, onednn (fastest oneDNN candidate), onednn-plain, onednn-wany,
 * onednn-any (that candidate; the own path, with the reason noted, when oneDNN cannot create it).
 *
 * Threads: oneDNN's OpenMP runtime takes omp_get_max_threads() of the calling thread, the count
 * hb_cpu_bind_threads set (--threads), on libgomp's one pool; the count is part of the cache key.
 * Errors: HB_ENOMEM when an allocation fails, HB_EDEVICE when oneDNN fails to execute a primitive it
 * created. The cache (CONV_CACHE entries, oldest replaced) is freed by conv_release (the backend's
 * close). One thread uses it at a time (backend.h). The oneDNN cpu engine and stream are created
 * here once per process, shared with cpu_dnnl_gemm.c (hb_dnnl_engine, cpu_dnnl.h) and destroyed by
 * dnnl_engine_release, after both caches are freed (the backend's close).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_priv.h"
#include "cpu_ref/kshape.h"

#include "cpu/cpu_dnnl.h"

/* forced path from HB_CPU_CONV */
enum { F_AUTO, F_OWN, F_DNNL, F_PLAIN, F_WANY, F_ANY };
enum { V_PLAIN, V_WANY, V_ANY, NVAR };

static int conv_force(void)
{
    const char *e = hb_cpu_cfg()->cpu_conv;
    if (!e || !*e || !strcmp(e, "auto")) return F_AUTO;
    if (!strcmp(e, "own")) return F_OWN;
    if (!strcmp(e, "onednn")) return F_DNNL;
    if (!strcmp(e, "onednn-plain")) return F_PLAIN;
    if (!strcmp(e, "onednn-wany")) return F_WANY;
    if (!strcmp(e, "onednn-any")) return F_ANY;
    return F_AUTO;
}

static hb_status conv_own(const hbk_conv *p, const float *x, const float *w, float *y)
{
    return p->nhwc ? k_conv2d_nhwc(p, x, w, y) : k_conv2d(p, x, w, y);
}

#ifdef HB_HAVE_DNNL

static const char *const var_name[NVAR] = { "plain", "wany", "any" };

/* One oneDNN candidate: the convolution and the reorders around it. u* are the case-layout memories
 * (handles set per call, owned by nothing here); c* the primitive's layout (== u* when no reorder,
 * else library-allocated buffers). */
typedef struct dnnl_cand {
    dnnl_primitive_t conv, r_src, r_wei, r_dst;
    dnnl_memory_t ux, uw, uy, cx, cw, cy, scratch;
    char info[64];   /* impl_info_str of the convolution */
} dnnl_cand;

static dnnl_engine_t g_eng;
static dnnl_stream_t g_strm;

static void cand_free(dnnl_cand *d)
{
    dnnl_primitive_t *pr[] = { &d->conv, &d->r_src, &d->r_wei, &d->r_dst };
    for (size_t i = 0; i < sizeof pr / sizeof pr[0]; i++)
        if (*pr[i]) dnnl_primitive_destroy(*pr[i]);
    dnnl_memory_t *m[] = { &d->ux, &d->uw, &d->uy, &d->cx, &d->cw, &d->cy, &d->scratch };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        if (i >= 3 && *m[i] && (*m[i] == d->ux || *m[i] == d->uw || *m[i] == d->uy)) continue; /* aliases */
        if (*m[i]) dnnl_memory_destroy(*m[i]);
    }
    memset(d, 0, sizeof *d);
}

static int engine_ready(void)
{
    if (g_eng && g_strm) return 1;
    if (!g_eng && dnnl_engine_create(&g_eng, dnnl_cpu, 0) != dnnl_success) { g_eng = NULL; return 0; }
    if (!g_strm && dnnl_stream_create(&g_strm, g_eng, dnnl_stream_default_flags) != dnnl_success) { g_strm = NULL; return 0; }
    return 1;
}

int hb_dnnl_engine(dnnl_engine_t *eng, dnnl_stream_t *strm)
{
    if (!engine_ready()) return 0;
    *eng = g_eng;
    *strm = g_strm;
    return 1;
}

/* A reorder primitive from md a to md b, or NULL (and *ok = 0) on failure. */
static dnnl_primitive_t make_reorder(const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b, int *ok)
{
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t r = NULL;
    if (dnnl_reorder_primitive_desc_create(&rpd, a, g_eng, b, g_eng, NULL) != dnnl_success ||
        dnnl_primitive_create(&r, rpd) != dnnl_success) {
        *ok = 0;
        r = NULL;
    }
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    return r;
}

/* The memory for md in the primitive's layout: the user memory when the layouts agree (no reorder),
 * else a library-allocated one plus a reorder (to_user: primitive -> user). */
static dnnl_memory_t side(const dnnl_memory_desc_t *user, const dnnl_memory_desc_t *prim, dnnl_memory_t um, int to_user,
                          dnnl_primitive_t *reorder, int *ok)
{
    if (dnnl_memory_desc_equal(user, prim)) return um;
    dnnl_memory_t m = NULL;
    if (dnnl_memory_create(&m, prim, g_eng, DNNL_MEMORY_ALLOCATE) != dnnl_success) { *ok = 0; return NULL; }
    *reorder = to_user ? make_reorder(prim, user, ok) : make_reorder(user, prim, ok);
    return m;
}

/* Create candidate v for p. HB_OK; HB_ESKIP with why when oneDNN has no implementation or fails. */
static hb_status cand_make(const hbk_conv *p, int v, dnnl_cand *d, char *why, size_t wlen)
{
    memset(d, 0, sizeof *d);
    if (!engine_ready()) { snprintf(why, wlen, "oneDNN cpu engine not created"); return HB_ESKIP; }
    const int grp = p->g > 1;
    dnnl_dims_t xd = { p->b, p->c, p->h, p->w }, yd = { p->b, p->oc, p->oh, p->ow };
    dnnl_dims_t wd5 = { p->g, p->ocg, p->cg, p->kh, p->kw }, wd4 = { p->oc, p->cg, p->kh, p->kw };
    const dnnl_format_tag_t act = p->nhwc ? dnnl_nhwc : dnnl_nchw;
    const dnnl_format_tag_t wtag = grp ? (p->nhwc ? dnnl_gohwi : dnnl_goihw) : (p->nhwc ? dnnl_ohwi : dnnl_oihw);
    dnnl_memory_desc_t ux, uw, uy, ax, aw, ay;
    int ok = dnnl_memory_desc_init_by_tag(&ux, 4, xd, dnnl_f32, act) == dnnl_success &&
             dnnl_memory_desc_init_by_tag(&uy, 4, yd, dnnl_f32, act) == dnnl_success &&
             dnnl_memory_desc_init_by_tag(&uw, grp ? 5 : 4, grp ? wd5 : wd4, dnnl_f32, wtag) == dnnl_success;
    ok = ok && dnnl_memory_desc_init_by_tag(&ax, 4, xd, dnnl_f32, v == V_ANY ? dnnl_format_tag_any : act) == dnnl_success &&
         dnnl_memory_desc_init_by_tag(&ay, 4, yd, dnnl_f32, v == V_ANY ? dnnl_format_tag_any : act) == dnnl_success &&
         dnnl_memory_desc_init_by_tag(&aw, grp ? 5 : 4, grp ? wd5 : wd4, dnnl_f32,
                                      v == V_PLAIN ? wtag : dnnl_format_tag_any) == dnnl_success;
    if (!ok) { snprintf(why, wlen, "oneDNN rejected the memory descriptors"); return HB_ESKIP; }
    dnnl_dims_t st = { p->sh, p->sw }, dil = { p->dh - 1, p->dw - 1 }, pad = { p->ph, p->pw };
    dnnl_convolution_desc_t cd;
    if (dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &ax, &aw, NULL,
                                                   &ay, st, dil, pad, pad) != dnnl_success) {
        snprintf(why, wlen, "oneDNN rejected the convolution descriptor");
        return HB_ESKIP;
    }
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    ok = dnnl_primitive_attr_create(&attr) == dnnl_success &&
         dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success;
    if (!ok || dnnl_primitive_desc_create(&pd, &cd, attr, g_eng, NULL) != dnnl_success) {
        if (attr) dnnl_primitive_attr_destroy(attr);
        snprintf(why, wlen, "oneDNN has no %s implementation for this shape", var_name[v]);
        return HB_ESKIP;
    }
    dnnl_primitive_attr_destroy(attr);
    const char *info = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &info);
    snprintf(d->info, sizeof d->info, "%s", info ? info : "?");
    /* oneDNN's reference loops ("ref:any": NHWC with plain weights here) are thousands of times slower
     * than either path (7.7 s against 2 ms measured): not worth a probe */
    if (!strncmp(d->info, "ref", 3)) {
        dnnl_primitive_desc_destroy(pd);
        snprintf(why, wlen, "only oneDNN's reference implementation (%.40s)", d->info);
        return HB_ESKIP;
    }
    const dnnl_memory_desc_t *px = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *pw = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *py = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    const dnnl_memory_desc_t *ps = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    ok = px && pw && py && dnnl_primitive_create(&d->conv, pd) == dnnl_success;
    ok = ok && dnnl_memory_create(&d->ux, &ux, g_eng, DNNL_MEMORY_NONE) == dnnl_success &&
         dnnl_memory_create(&d->uw, &uw, g_eng, DNNL_MEMORY_NONE) == dnnl_success &&
         dnnl_memory_create(&d->uy, &uy, g_eng, DNNL_MEMORY_NONE) == dnnl_success;
    if (ok) {
        d->cx = side(&ux, px, d->ux, 0, &d->r_src, &ok);
        if (ok) d->cw = side(&uw, pw, d->uw, 0, &d->r_wei, &ok);
        if (ok) d->cy = side(&uy, py, d->uy, 1, &d->r_dst, &ok);
    }
    if (ok && ps && dnnl_memory_desc_get_size(ps) > 0)
        ok = dnnl_memory_create(&d->scratch, ps, g_eng, DNNL_MEMORY_ALLOCATE) == dnnl_success;
    dnnl_primitive_desc_destroy(pd);
    if (!ok) {
        cand_free(d);
        snprintf(why, wlen, "oneDNN failed to create the %s primitive or its buffers", var_name[v]);
        return HB_ENOMEM;
    }
    return HB_OK;
}

static hb_status exec1(dnnl_primitive_t r, dnnl_memory_t from, dnnl_memory_t to)
{
    dnnl_exec_arg_t a[2] = { { DNNL_ARG_FROM, from }, { DNNL_ARG_TO, to } };
    return dnnl_primitive_execute(r, g_strm, 2, a) == dnnl_success ? HB_OK : HB_EDEVICE;
}

/* One call of candidate d on the caller's tensors: reorders in, convolution, reorder out. */
static hb_status cand_run(dnnl_cand *d, const float *x, const float *w, float *y)
{
    if (dnnl_memory_set_data_handle(d->ux, (void *)x) != dnnl_success ||
        dnnl_memory_set_data_handle(d->uw, (void *)w) != dnnl_success ||
        dnnl_memory_set_data_handle(d->uy, y) != dnnl_success)
        return HB_EDEVICE;
    hb_status st = HB_OK;
    if (d->r_src) st = exec1(d->r_src, d->ux, d->cx);
    if (st == HB_OK && d->r_wei) st = exec1(d->r_wei, d->uw, d->cw);
    if (st == HB_OK) {
        dnnl_exec_arg_t a[4] = { { DNNL_ARG_SRC, d->cx }, { DNNL_ARG_WEIGHTS, d->cw }, { DNNL_ARG_DST, d->cy },
                                 { DNNL_ARG_SCRATCHPAD, d->scratch } };
        st = dnnl_primitive_execute(d->conv, g_strm, d->scratch ? 4 : 3, a) == dnnl_success ? HB_OK : HB_EDEVICE;
    }
    if (st == HB_OK && d->r_dst) st = exec1(d->r_dst, d->cy, d->uy);
    if (dnnl_stream_wait(g_strm) != dnnl_success) st = HB_EDEVICE;
    return st;
}

/* Two candidates run the same thing when their convolution and every reorder side agree. */
static int cand_same(const dnnl_cand *a, const dnnl_cand *b)
{
    return !strcmp(a->info, b->info) && !a->r_src == !b->r_src && !a->r_wei == !b->r_wei && !a->r_dst == !b->r_dst;
}

#else
typedef struct dnnl_cand { int unused; } dnnl_cand;
#endif /* HB_HAVE_DNNL */

/* One shape's choice. */
typedef struct conv_entry {
    int used;
    hb_shape shape;
    int threads, force;
    int dnnl;          /* 1: run d, 0: the own path */
    dnnl_cand d;
    char impl[128];    /* the case's impl: "onednn:<impl_info_str>[+reorder ...]" or NULL -> own name */
    char note[400];    /* the probe's figures or why oneDNN is not used */
} conv_entry;

#define CONV_CACHE 128
static conv_entry g_conv[CONV_CACHE];
static int g_conv_next;

static conv_entry *conv_find(const hb_case *c, int T, int force)
{
    for (int i = 0; i < CONV_CACHE; i++)
        if (g_conv[i].used && g_conv[i].threads == T && g_conv[i].force == force &&
            !memcmp(&g_conv[i].shape, &c->shape, sizeof c->shape))
            return &g_conv[i];
    return NULL;
}

#ifdef HB_HAVE_DNNL
static void entry_name(conv_entry *e)
{
    snprintf(e->impl, sizeof e->impl, "onednn:%s%s%s%s%s", e->d.info,
             e->d.r_src || e->d.r_wei || e->d.r_dst ? "+reorder" : "", e->d.r_src ? "-x" : "", e->d.r_wei ? "-w" : "",
             e->d.r_dst ? "-y" : "");
}

/* The probe's slots (probe_best_of): k < n candidate var[k] of cand, k == n the own path. */
typedef struct probe_ctx {
    dnnl_cand *cand;
    const int *var;
    int n;
    const hbk_conv *p;
    const float *x, *w;
    float *y;
} probe_ctx;

static hb_status probe_run(void *ctx, int k)
{
    probe_ctx *c = ctx;
    return k < c->n ? cand_run(&c->cand[c->var[k]], c->x, c->w, c->y) : conv_own(c->p, c->x, c->w, c->y);
}

/* Create the candidates the force allows, probe them against the own path (unless forced), keep the
 * winner in e. Runs the candidates on the caller's buffers; the caller runs the winner last. */
static hb_status conv_choose(conv_entry *e, const hbk_conv *p, const float *x, const float *w, float *y)
{
    dnnl_cand cand[NVAR];
    int have[NVAR] = { 0 }, var[NVAR], n = 0;
    char why[NVAR][96];
    const int only = e->force == F_PLAIN ? V_PLAIN : e->force == F_WANY ? V_WANY : e->force == F_ANY ? V_ANY : -1;
    for (int v = 0; v < NVAR; v++) {
        why[v][0] = 0;
        if (only >= 0 && v != only) continue;
        if (cand_make(p, v, &cand[v], why[v], sizeof why[v]) != HB_OK) continue;
        int dup = 0;
        for (int j = 0; j < v && only < 0; j++)
            if (have[j] && cand_same(&cand[j], &cand[v])) dup = 1;
        if (dup) { cand_free(&cand[v]); snprintf(why[v], sizeof why[v], "same as an earlier candidate"); continue; }
        have[v] = 1;
        var[n++] = v;
    }
    if (n == 0) {
        e->dnnl = 0;
        snprintf(e->note, sizeof e->note, "own path: oneDNN: %s", why[only >= 0 ? only : V_PLAIN]);
        return HB_OK;
    }
    /* slot k < n: candidate var[k]; slot n: the own path (timed unless oneDNN is forced) */
    const int with_own = e->force == F_AUTO;
    const int slots = n + with_own;
    double best[NVAR + 1];
    probe_ctx pc = { cand, var, n, p, x, w, y };
    const hb_status st = probe_best_of(slots, probe_run, &pc, best);
    int win = 0;
    for (int k = 1; k < slots; k++)
        if (best[k] < best[win]) win = k;
    int len = snprintf(e->note, sizeof e->note, "probe best-of:");
    for (int k = 0; k < slots && len < (int)sizeof e->note; k++)
        len += snprintf(e->note + len, sizeof e->note - (size_t)len, "%s %s%s%s %.4g ms%s", k ? "," : "",
                        k < n ? var_name[var[k]] : "own", k < n ? "=" : "", k < n ? cand[var[k]].info : "", 1e3 * best[k],
                        k == win ? " (chosen)" : "");
    for (int v = 0; v < NVAR && len < (int)sizeof e->note; v++)
        if (!have[v] && why[v][0])
            len += snprintf(e->note + len, sizeof e->note - (size_t)len, "; %s: %s", var_name[v], why[v]);
    for (int k = 0; k < n; k++)
        if (k != win) cand_free(&cand[var[k]]);
    if (win < n) {
        e->dnnl = 1;
        e->d = cand[var[win]];
        entry_name(e);
    } else {
        e->dnnl = 0;
    }
    return st;
}
#endif

hb_status conv_run(const hb_case *c, const hbk_conv *p, const float *x, const float *w, float *y)
{
    const int T = omp_get_max_threads(), force = conv_force();
    if (force == F_OWN) return conv_own(p, x, w, y);
    conv_entry *e = conv_find(c, T, force);
    if (!e) {
        e = &g_conv[g_conv_next];
        g_conv_next = (g_conv_next + 1) % CONV_CACHE;
#ifdef HB_HAVE_DNNL
        if (e->used && e->dnnl) cand_free(&e->d);
#endif
        memset(e, 0, sizeof *e);
        e->shape = c->shape;
        e->threads = T;
        e->force = force;
#ifdef HB_HAVE_DNNL
        hb_status st = conv_choose(e, p, x, w, y);
        if (st != HB_OK) {
            if (e->dnnl) cand_free(&e->d);
            memset(e, 0, sizeof *e);
            return st;
        }
#else
        snprintf(e->note, sizeof e->note, "own path: oneDNN not in this build (libdnnl-dev absent when it was built)");
#endif
        e->used = 1;
    }
#ifdef HB_HAVE_DNNL
    if (e->dnnl) return cand_run(&e->d, x, w, y);
#endif
    return conv_own(p, x, w, y);
}

const char *conv_impl(const hb_case *c)
{
    const conv_entry *e = conv_find(c, omp_get_max_threads(), conv_force());
    return e && e->dnnl ? e->impl : NULL;
}

const char *conv_note(const hb_case *c)
{
    if (conv_force() == F_OWN) return "own path: forced by HB_CPU_CONV=own";
    const conv_entry *e = conv_find(c, omp_get_max_threads(), conv_force());
    return e ? e->note : NULL;
}

void conv_release(void)
{
#ifdef HB_HAVE_DNNL
    for (int i = 0; i < CONV_CACHE; i++)
        if (g_conv[i].used && g_conv[i].dnnl) cand_free(&g_conv[i].d);
#endif
    memset(g_conv, 0, sizeof g_conv);
    g_conv_next = 0;
}

void dnnl_engine_release(void)
{
#ifdef HB_HAVE_DNNL
    if (g_strm) dnnl_stream_destroy(g_strm);
    if (g_eng) dnnl_engine_destroy(g_eng);
    g_strm = NULL;
    g_eng = NULL;
#endif
}

const char *conv_dnnl_version(char *buf, size_t len)
{
#ifdef HB_HAVE_DNNL
    const dnnl_version_t *v = dnnl_version();
    snprintf(buf, len, "%d.%d.%d (%s)", v->major, v->minor, v->patch, v->hash ? v->hash : "?");
#else
    snprintf(buf, len, "not in this build");
#endif
    return buf;
}
