/*
 * cpu_conv.c - the cpu backend's pooling (maxpool, avgpool) and conv2d (im2col + single-threaded
 * sgemm, NCHW and NHWC). Split out of cpu_kernels.c; its header comment describes the methods.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "cpu/cpu_priv.h"
#include "cpu_ref/kshape.h"

/* ------------------------------------------------------------------ pooling ---------- */

/* Range [lo, hi) of output positions o with 0 <= o*s + off < in (off = k*d - p). */
static void tap_range(int64_t out, int64_t in, int64_t s, int64_t off, int64_t *lo, int64_t *hi)
{
    int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t h = in - 1 - off < 0 ? 0 : (in - 1 - off) / s + 1;
    if (h > out)
        h = out;
    if (l > h)
        l = h;
    *lo = l;
    *hi = h;
}

/* Pooling of one plane, window by window: for input rows narrower than POOL_ROW_MIN, where the row
 * method's vector loops are too short to pay. */
static void pool_plane_direct(const hbk_conv *p, int is_max, const float *restrict xp, float *restrict yp)
{
    for (int64_t oy = 0; oy < p->oh; oy++) {
        const int64_t iy0 = oy * p->sh - p->ph;
        for (int64_t ox = 0; ox < p->ow; ox++) {
            const int64_t ix0 = ox * p->sw - p->pw;
            float acc = is_max ? -HUGE_VALF : 0.0f;
            int64_t cnt = 0;
            for (int64_t ky = 0; ky < p->kh; ky++) {
                const int64_t iy = iy0 + ky * p->dh;
                if (iy < 0 || iy >= p->h)
                    continue;
                const float *xr = xp + iy * p->w;
                int64_t kx0 = 0, kx1 = p->kw;
                while (kx0 < kx1 && ix0 + kx0 * p->dw < 0)
                    kx0++;
                while (kx1 > kx0 && ix0 + (kx1 - 1) * p->dw >= p->w)
                    kx1--;
                cnt += kx1 - kx0;
                if (p->dw == 1) {
                    const float *xs = xr + ix0;
                    if (is_max) {
#pragma omp simd reduction(max : acc)
                        for (int64_t kx = kx0; kx < kx1; kx++)
                            acc = xs[kx] > acc ? xs[kx] : acc;
                    } else {
#pragma omp simd reduction(+ : acc)
                        for (int64_t kx = kx0; kx < kx1; kx++)
                            acc += xs[kx];
                    }
                } else {
                    for (int64_t kx = kx0; kx < kx1; kx++) {
                        const float v = xr[ix0 + kx * p->dw];
                        acc = is_max ? (v > acc ? v : acc) : acc + v;
                    }
                }
            }
            yp[oy * p->ow + ox] = cnt == 0 ? 0.0f : (is_max ? acc : acc / (float)cnt);
        }
    }
}

/* Horizontal pass of one output row: orow[ox] = reduction over the kw taps of v (the vertically
 * reduced input row). The interior [ilo, ihi), where every tap is in bounds, runs as one vectorized
 * loop (specialized for the 3-tap kernels of ResNet-style pooling); the few border columns are
 * counted tap by tap. avg divides by nky * (in-bounds taps). */
static void pool_hrow(const hbk_conv *p, int is_max, const float *restrict v, float *restrict orow,
                      int64_t nky, int64_t ilo, int64_t ihi)
{
    const int64_t sw = p->sw, dw = p->dw, kw = p->kw, pw = p->pw, w = p->w, ow = p->ow;
    for (int64_t ox = 0; ox < ow; ox++) {
        if (ox == ilo && ihi > ilo)
            ox = ihi; /* skip the interior */
        if (ox >= ow)
            break;
        float acc = is_max ? -HUGE_VALF : 0.0f;
        int64_t cnt = 0;
        for (int64_t kx = 0; kx < kw; kx++) {
            const int64_t ix = ox * sw - pw + kx * dw;
            if (ix < 0 || ix >= w)
                continue;
            acc = is_max ? (v[ix] > acc ? v[ix] : acc) : acc + v[ix];
            cnt++;
        }
        orow[ox] = cnt == 0 ? 0.0f : (is_max ? acc : acc / ((float)nky * (float)cnt));
    }
    if (ihi <= ilo)
        return;
    const float inv = 1.0f / ((float)nky * (float)kw);
    if (kw == 3 && dw == 1 && sw == 2) {
        if (is_max) {
#pragma omp simd
            for (int64_t ox = ilo; ox < ihi; ox++) {
                const int64_t b = 2 * ox - pw;
                const float m = v[b] > v[b + 1] ? v[b] : v[b + 1];
                orow[ox] = m > v[b + 2] ? m : v[b + 2];
            }
        } else {
#pragma omp simd
            for (int64_t ox = ilo; ox < ihi; ox++) {
                const int64_t b = 2 * ox - pw;
                orow[ox] = (v[b] + v[b + 1] + v[b + 2]) * inv;
            }
        }
    } else if (kw == 3 && dw == 1 && sw == 1) {
        if (is_max) {
#pragma omp simd
            for (int64_t ox = ilo; ox < ihi; ox++) {
                const int64_t b = ox - pw;
                const float m = v[b] > v[b + 1] ? v[b] : v[b + 1];
                orow[ox] = m > v[b + 2] ? m : v[b + 2];
            }
        } else {
#pragma omp simd
            for (int64_t ox = ilo; ox < ihi; ox++) {
                const int64_t b = ox - pw;
                orow[ox] = (v[b] + v[b + 1] + v[b + 2]) * inv;
            }
        }
    } else {
        /* any kernel: tap by tap over the interior, each pass vectorized over ox */
        for (int64_t ox = ilo; ox < ihi; ox++)
            orow[ox] = v[ox * sw - pw];
        for (int64_t kx = 1; kx < kw; kx++) {
            const int64_t off = kx * dw - pw;
            if (is_max) {
#pragma omp simd
                for (int64_t ox = ilo; ox < ihi; ox++)
                    orow[ox] = v[ox * sw + off] > orow[ox] ? v[ox * sw + off] : orow[ox];
            } else {
#pragma omp simd
                for (int64_t ox = ilo; ox < ihi; ox++)
                    orow[ox] += v[ox * sw + off];
            }
        }
        if (!is_max)
            for (int64_t ox = ilo; ox < ihi; ox++)
                orow[ox] *= inv;
    }
}

/* Pooling of one plane, row by row: the kh input rows of an output row are first reduced
 * vertically into v (contiguous, vectorized), then v horizontally (pool_hrow). */
static void pool_plane_rows(const hbk_conv *p, int is_max, const float *restrict xp, float *restrict yp,
                            float *restrict v, int64_t ilo, int64_t ihi)
{
    const int64_t w = p->w;
    for (int64_t oy = 0; oy < p->oh; oy++) {
        float *restrict orow = yp + oy * p->ow;
        int64_t nky = 0;
        for (int64_t ky = 0; ky < p->kh; ky++) {
            const int64_t iy = oy * p->sh - p->ph + ky * p->dh;
            if (iy < 0 || iy >= p->h)
                continue;
            const float *restrict xr = xp + iy * w;
            if (nky == 0) {
                memcpy(v, xr, (size_t)w * sizeof(float));
            } else if (is_max) {
#pragma omp simd
                for (int64_t i = 0; i < w; i++)
                    v[i] = xr[i] > v[i] ? xr[i] : v[i];
            } else {
#pragma omp simd
                for (int64_t i = 0; i < w; i++)
                    v[i] += xr[i];
            }
            nky++;
        }
        if (nky == 0) { /* the window rows lie wholly in the padding (see ref.c) */
            memset(orow, 0, (size_t)p->ow * sizeof(float));
            continue;
        }
        pool_hrow(p, is_max, v, orow, nky, ilo, ihi);
    }
}

#define POOL_ROW_MIN 16

/* The pooling method of p: 0 the row method; 1 window by window (input rows under POOL_ROW_MIN). Until
 * 2026-11-27 the choice went by the output width, and a 3x3/2 pooling of 28x28 planes (output 14 wide)
 * ran window by window, each window's three taps an omp simd reduction: b8 c64 maxpool took 1993 us on
 * the development VM against 247 us for the 56x56 planes (4x the data), and 1.6x PyTorch's time on the
 * H100 host. 2: global pooling (one window = the whole plane, ResNet pool5), a contiguous reduction. */
static int pool_method(const hbk_conv *p)
{
    if (p->oh == 1 && p->ow == 1 && p->ph == 0 && p->pw == 0 && p->kh == p->h && p->kw == p->w)
        return 2;
    return p->w < POOL_ROW_MIN;
}

const char *pool_impl(const hbk_conv *p)
{
    static const char *const name[3] = {"own-omp", "own-omp+windows", "own-omp+global"};
    return name[pool_method(p)];
}

hb_status k_pool(const hbk_conv *p, int is_max, const float *x, float *y)
{
    const int64_t planes = p->b * p->c;
    /* the row method unless the input rows are short (pool_method) */
    const int direct = p->w < POOL_ROW_MIN;
    const int global = pool_method(p) == 2;
    /* interior output columns: every horizontal tap in bounds */
    int64_t ilo, ihi, lo2, hi2;
    tap_range(p->ow, p->w, p->sw, -p->pw, &ilo, &ihi);
    tap_range(p->ow, p->w, p->sw, (p->kw - 1) * p->dw - p->pw, &lo2, &hi2);
    ilo = ilo > lo2 ? ilo : lo2;
    ihi = ihi < hi2 ? ihi : hi2;
    if (ihi < ilo)
        ihi = ilo;
    int failed = 0;
    const int par = planes > 1 && planes * p->oh * p->ow * p->kh * p->kw >= EW_PAR_MIN;
#pragma omp parallel if (par)
    {
        float *v = direct ? NULL : scratch(omp_get_thread_num(), (size_t)p->w);
        if (!direct && !v) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(static)
        for (int64_t pl = 0; pl < planes; pl++) {
            const float *xp = x + pl * p->h * p->w;
            float *yp = y + pl * p->oh * p->ow;
            if (global)
                yp[0] = is_max ? max_f32(xp, p->h * p->w)
                               : (float)(sum_f32(xp, p->h * p->w) / (double)(p->h * p->w));
            else if (direct)
                pool_plane_direct(p, is_max, xp, yp);
            else if (v)
                pool_plane_rows(p, is_max, xp, yp, v, ilo, ihi);
        }
    }
    return failed ? HB_ENOMEM : HB_OK;
}

/* ------------------------------------------------------------------ conv2d ----------- */

int conv_is_direct(const hbk_conv *p)
{
    return p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->ph == 0 && p->pw == 0;
}

/* im2col of output columns [col0, col0 + ncols) (column j = output pixel oy*ow + ox) for the input
 * channels of group g of one image: row r = (ci, ky, kx) of the group at col + r * ld. */
static void im2col_block(const hbk_conv *p, const float *xb, int64_t g, int64_t col0, int64_t ncols,
                         float *restrict col, int64_t ld)
{
    const int64_t kk = p->kh * p->kw, kg = p->cg * kk;
    for (int64_t r = 0; r < kg; r++) {
        const int64_t ci = g * p->cg + r / kk, ky = (r / p->kw) % p->kh, kx = r % p->kw;
        const float *xc = xb + ci * p->h * p->w;
        const int64_t off = kx * p->dw - p->pw;
        int64_t lo, hi;
        tap_range(p->ow, p->w, p->sw, off, &lo, &hi);
        float *dst = col + r * ld;
        int64_t j = 0, oy = col0 / p->ow, ox = col0 % p->ow;
        while (j < ncols) {
            /* output columns [a, b) of output row oy go to d[0 .. b-a) */
            const int64_t a = ox, b = ox + (p->ow - ox < ncols - j ? p->ow - ox : ncols - j);
            float *d = dst + j;
            const int64_t iy = oy * p->sh - p->ph + ky * p->dh;
            if (iy < 0 || iy >= p->h) {
                memset(d, 0, (size_t)(b - a) * sizeof(float));
            } else {
                const float *xr = xc + iy * p->w;
                /* in-bounds taps [lo, hi) clamped to [a, b) */
                const int64_t l = lo > a ? (lo < b ? lo : b) : a, h = hi < b ? (hi > l ? hi : l) : b;
                for (int64_t q = a; q < l; q++)
                    d[q - a] = 0.0f;
                if (p->sw == 1) {
                    if (h > l)
                        memcpy(d + (l - a), xr + l + off, (size_t)(h - l) * sizeof(float));
                } else {
                    const int64_t sw = p->sw;
                    for (int64_t q = l; q < h; q++)
                        d[q - a] = xr[q * sw + off];
                }
                for (int64_t q = h; q < b; q++)
                    d[q - a] = 0.0f;
            }
            const int64_t seg = b - a;
            j += seg;
            oy++;
            ox = 0;
        }
    }
}

/* Target size of one im2col block: 512 KiB (a quarter to a half of the per-core L2 of current
 * x86 cores, so the block and OpenBLAS's packed panels stay in L2). HB_CPU_COL_KIB overrides it
 * for measurements. */
static int64_t col_block_bytes(void)
{
    static int64_t cached;
    int64_t v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v)
        return v;
    v = 512 * 1024;
    const char *e = hb_cpu_cfg()->cpu_col_kib;
    if (e && atoll(e) > 0)
        v = atoll(e) * 1024;
    __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    return v;
}

/* Work split of a convolution. An item is one im2col block (kg x columns, about col_block_bytes)
 * and one single-threaded sgemm (ocb x columns x kg) for one group; items are spread over the
 * OpenMP threads. Columns are output pixels: of one image, split into blocks of nb (>= 64) when
 * an image is larger than a block or when there are fewer than 4 items per thread; or of nimg
 * images side by side when several small images fit one block (ResNet's 7x7 layers), the sgemm
 * result then being scattered to the images. Output channels are split into blocks of ocb (>= 16)
 * only when there is still less than one item per thread. */
typedef struct conv_plan { int64_t nimg, nbg, nb, ncb, ocb, nob, items; } conv_plan;

static int64_t round16(int64_t v) { return (v + 15) / 16 * 16; }

static void conv_plan_make(const hbk_conv *p, int direct, int T, conv_plan *pl)
{
    const int64_t ohw = p->oh * p->ow, kg = p->cg * p->kh * p->kw;
    int64_t cols = col_block_bytes() / (kg * 4); /* columns of one block */
    if (cols < 64)
        cols = 64;
    pl->nimg = 1;
    if (!direct && p->b > 1 && 2 * ohw <= cols) {
        int64_t nimg = cols / ohw;
        int64_t par = (p->b * p->g) / T; /* images per item that still leave one item per thread */
        if (par < 1)
            par = 1;
        nimg = nimg < par ? nimg : par;
        pl->nimg = nimg < p->b ? nimg : p->b;
    }
    pl->nbg = (p->b + pl->nimg - 1) / pl->nimg;
    const int64_t units = pl->nbg * p->g;
    int64_t nb = ohw;
    if (pl->nimg == 1) {
        if (nb > cols)
            nb = round16(cols);
        const int64_t want = 4 * (int64_t)T;
        if (units * ((ohw + nb - 1) / nb) < want) {
            int64_t per = (want + units - 1) / units; /* column blocks wanted per image-group */
            int64_t nb2 = round16((ohw + per - 1) / per);
            if (nb2 < nb)
                nb = nb2;
        }
        if (nb < 64)
            nb = ohw < 64 ? ohw : 64;
        int64_t ncb = (ohw + nb - 1) / nb; /* balance the blocks: no sliver at the end */
        nb = round16((ohw + ncb - 1) / ncb);
        if (nb > ohw)
            nb = ohw;
    }
    pl->nb = nb;
    pl->ncb = (ohw + nb - 1) / nb;
    pl->nob = 1;
    if (units * pl->ncb < T) {
        int64_t nob = (T + units * pl->ncb - 1) / (units * pl->ncb);
        int64_t maxob = p->ocg / 16 > 0 ? p->ocg / 16 : 1;
        pl->nob = nob < maxob ? nob : maxob;
    }
    pl->ocb = (p->ocg + pl->nob - 1) / pl->nob;
    pl->nob = (p->ocg + pl->ocb - 1) / pl->ocb;
    pl->items = units * pl->ncb * pl->nob;
}

hb_status k_conv2d(const hbk_conv *p, const float *x, const float *wt, float *y)
{
    const int T = omp_get_max_threads();
    const int64_t ohw = p->oh * p->ow, kg = p->cg * p->kh * p->kw, chw = p->c * p->h * p->w;
    const int direct = conv_is_direct(p);
    conv_plan pl;
    conv_plan_make(p, direct, T, &pl);
    /* scratch per thread: the col block, and for grouped images the sgemm result before scatter */
    const size_t need = direct ? 0
                      : pl.nimg > 1 ? (size_t)((kg + pl.ocb) * pl.nimg * ohw)
                                    : (size_t)(kg * pl.nb);
    int failed = 0;
    blas_serial_begin();
#pragma omp parallel if (pl.items > 1)
    {
        float *col = need ? scratch(omp_get_thread_num(), need) : NULL;
        if (need && !col) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < pl.items; it++) {
            if (need && !col)
                continue;
            const int64_t ob = it % pl.nob, cb = (it / pl.nob) % pl.ncb, bgi = it / (pl.nob * pl.ncb);
            const int64_t g = bgi % p->g, b0 = (bgi / p->g) * pl.nimg;
            const int64_t o0 = ob * pl.ocb, mo = p->ocg - o0 < pl.ocb ? p->ocg - o0 : pl.ocb;
            const float *A = wt + (g * p->ocg + o0) * kg;
            if (pl.nimg > 1) {
                const int64_t ni = p->b - b0 < pl.nimg ? p->b - b0 : pl.nimg, ld = ni * ohw;
                float *C = col + kg * ld;
                for (int64_t i = 0; i < ni; i++)
                    im2col_block(p, x + (b0 + i) * chw, g, 0, ohw, col + i * ohw, ld);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mo, (int)ld, (int)kg, 1.0f, A,
                            (int)kg, col, (int)ld, 0.0f, C, (int)ld);
                for (int64_t o = 0; o < mo; o++)
                    for (int64_t i = 0; i < ni; i++)
                        memcpy(y + ((b0 + i) * p->oc + g * p->ocg + o0 + o) * ohw, C + o * ld + i * ohw,
                               (size_t)ohw * sizeof(float));
                continue;
            }
            const int64_t col0 = cb * pl.nb, ncols = ohw - col0 < pl.nb ? ohw - col0 : pl.nb;
            const float *xb = x + b0 * chw;
            const float *B;
            int64_t ldb;
            if (direct) { /* 1x1, stride 1, no padding: the input plane block is the col block */
                B = xb + g * p->cg * ohw + col0;
                ldb = ohw;
            } else {
                im2col_block(p, xb, g, col0, ncols, col, ncols);
                B = col;
                ldb = ncols;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mo, (int)ncols, (int)kg, 1.0f, A,
                        (int)kg, B, (int)ldb, 0.0f, y + (b0 * p->oc + g * p->ocg + o0) * ohw + col0, (int)ohw);
        }
    }
    blas_serial_end(T);
    return failed ? HB_ENOMEM : HB_OK;
}

/* conv2d, layout=nhwc (hybench.h: x [b,h,w,c], w [oc,kh,kw,c/g] (OHWI), y [b,oh,ow,oc]): channels-last
 * is a matrix product without reordering the output. The b*oh*ow output pixels (batch merged) are cut
 * into row blocks; per (block, group) one NHWC im2col (pixel rows x kh*kw*cg, the taps in OHWI order)
 * and one single-threaded sgemm Y[rows, ocg] = col x W_g^T written straight into y (ldc = oc). A 1x1
 * stride-1 unpadded convolution uses the input rows as col (lda = c). Blocks spread over the OpenMP
 * threads as in k_conv2d. */
static void im2col_nhwc_rows(const hbk_conv *p, const float *x, int64_t g, int64_t q0, int64_t nq, float *col)
{
    const int64_t kk = p->kh * p->kw * p->cg, ohw = p->oh * p->ow;
    for (int64_t r = 0; r < nq; r++) {
        const int64_t q = q0 + r, bi = q / ohw, oy = q / p->ow % p->oh, ox = q % p->ow;
        float *dst = col + r * kk;
        for (int64_t ky = 0; ky < p->kh; ky++) {
            const int64_t iy = oy * p->sh - p->ph + ky * p->dh;
            for (int64_t kx = 0; kx < p->kw; kx++, dst += p->cg) {
                const int64_t ix = ox * p->sw - p->pw + kx * p->dw;
                if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w)
                    memset(dst, 0, (size_t)p->cg * sizeof(float));
                else
                    memcpy(dst, x + ((bi * p->h + iy) * p->w + ix) * p->c + g * p->cg, (size_t)p->cg * sizeof(float));
            }
        }
    }
}

hb_status k_conv2d_nhwc(const hbk_conv *p, const float *x, const float *wt, float *y)
{
    const int T = omp_get_max_threads();
    const int64_t kk = p->kh * p->kw * p->cg, P = p->b * p->oh * p->ow;
    const int direct = conv_is_direct(p) && p->g == 1;
    /* rows per block: a col block of about 256 KiB (L2), at least 16 rows, and at least 4 items per thread */
    int64_t rb = (int64_t)(65536 / (kk > 0 ? kk : 1));
    if (rb < 16) rb = 16;
    while (rb > 16 && ((P + rb - 1) / rb) * p->g < 4 * T) rb /= 2;
    const int64_t nblk = (P + rb - 1) / rb, items = nblk * p->g;
    int failed = 0;
    blas_serial_begin();
#pragma omp parallel if (items > 1)
    {
        float *col = direct ? NULL : scratch(omp_get_thread_num(), (size_t)(rb * kk));
        if (!direct && !col) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < items; it++) {
            if (!direct && !col)
                continue;
            const int64_t g = it % p->g, q0 = (it / p->g) * rb, nq = P - q0 < rb ? P - q0 : rb;
            const float *A;
            int64_t lda;
            if (direct) {
                A = x + q0 * p->c;
                lda = p->c;
            } else {
                im2col_nhwc_rows(p, x, g, q0, nq, col);
                A = col;
                lda = kk;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)p->ocg, (int)kk, 1.0f, A, (int)lda,
                        wt + g * p->ocg * kk, (int)kk, 0.0f, y + q0 * p->oc + g * p->ocg, (int)p->oc);
        }
    }
    blas_serial_end(T);
    return failed ? HB_ENOMEM : HB_OK;
}
