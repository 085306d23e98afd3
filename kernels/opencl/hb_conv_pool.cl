/*
 * hb_conv_pool.cl - im2col for conv2d (the GEMM then runs through ocl_matmul.c) and 2-D pooling.
 * Layouts (hybench.h): x[batch,c,h,w] NCHW, w[oc,c/g,kh,kw] OIHW, y[batch,oc|c,oh,ow]; conv2d
 * layout=nhwc: x[batch,h,w,c], w[oc,kh,kw,c/g] (OHWI), y[batch,oh,ow,oc] (hb_im2col_nhwc, hb_wtrans).
 * Output size: oh = (h + 2ph - dh(kh-1) - 1)/sh + 1, likewise ow.
 */

/* im2col for images b0..b0+nb-1 and group g (cg = c/g channels): for image bi (0..nb-1),
 * col[bi*Kd*P + kidx*P + p] = x[b0+bi, g*cg + ci, oy*sh - ph + ky*dh, ox*sw - pw + kx*dw] or 0
 * outside the input, with kidx = (ci*kh + ky)*kw + kx (< Kd = cg*kh*kw), p = oy*ow + ox (< P).
 * Launch: global (ceil(P/64)*64, Kd, nb). */
__kernel void hb_im2col(__global const TS *x, __global TS *col, int b0, int g, int C, int H, int W,
                        int cg, int kh, int kw, int sh, int sw, int ph, int pw, int dh, int dw,
                        int oh, int ow)
{
    const int p = (int)get_global_id(0), kidx = (int)get_global_id(1), bi = (int)get_global_id(2);
    const int P = oh * ow, Kd = cg * kh * kw;
    if (p >= P) return;
    const int kx = kidx % kw, ky = (kidx / kw) % kh, ci = kidx / (kw * kh);
    const int oy = p / ow, ox = p % ow;
    const int iy = oy * sh - ph + ky * dh, ix = ox * sw - pw + kx * dw;
    float v = 0.0f;
    if (iy >= 0 && iy < H && ix >= 0 && ix < W)
        v = LD1((((size_t)(b0 + bi) * C + (size_t)g * cg + ci) * H + iy) * (size_t)W + ix, x);
    ST1(v, ((size_t)bi * Kd + kidx) * (size_t)P + p, col);
}

/* Max and average pooling, one output element per work-item: gid0 = ox, gid1 = oy, gid2 = the
 * (image, channel) plane, so no index division. Only in-bounds taps count: max ignores padding, avg
 * divides by the number of in-bounds taps (count_include_pad = false).
 * Launch: global (ceil(ow/L)*L, oh, batch*c), local (L, 1, 1). */
#define HB_POOL(NAME, INIT, ACC, FIN)                                                          \
__kernel void NAME(__global const TS *x, __global TS *y, int H, int W, int kh, int kw, int sh, \
                   int sw, int ph, int pw, int oh, int ow)                                     \
{                                                                                              \
    const int ox = (int)get_global_id(0), oy = (int)get_global_id(1);                          \
    const size_t bc = get_global_id(2);                                                        \
    if (ox >= ow) return;                                                                      \
    __global const TS *xp = x + bc * (size_t)H * W;                                            \
    const int y0 = oy * sh - ph, x0 = ox * sw - pw;                                            \
    const int ya = max(y0, 0), yb = min(y0 + kh, H), xa = max(x0, 0), xb = min(x0 + kw, W);   \
    float r = INIT;                                                                            \
    for (int iy = ya; iy < yb; iy++)                                                           \
        for (int ix = xa; ix < xb; ix++) { float v = LD1((size_t)iy * W + ix, xp); ACC; }      \
    const float cnt = (float)((yb - ya) * (xb - xa));                                          \
    ST1(FIN, (bc * oh + oy) * (size_t)ow + ox, y);                                             \
}
HB_POOL(hb_maxpool, -INFINITY, r = fmax(r, v), r)
HB_POOL(hb_avgpool, 0.0f, r += v, r / cnt)

/* conv2d layout=nhwc (hybench.h: x[batch,h,w,c] NHWC, w[oc,kh,kw,c/g] OHWI, y[batch,oh,ow,oc]):
 * NHWC im2col of output pixels q0..q0+nq-1 (q = (b*oh + oy)*ow + ox, batch merged) for group g:
 * col[r*Kd + kidx] = x[b, iy, ix, g*cg + ci] or 0 outside the input, kidx = (ky*kw + kx)*cg + ci
 * (< Kd = kh*kw*cg, the OHWI order of one filter), r = q - q0. Launch: global (ceil(Kd/64)*64, nq). */
__kernel void hb_im2col_nhwc(__global const TS *x, __global TS *col, int q0, int g, int C, int H, int W,
                             int cg, int kh, int kw, int sh, int sw, int ph, int pw, int dh, int dw,
                             int oh, int ow)
{
    const int kidx = (int)get_global_id(0), r = (int)get_global_id(1);
    const int Kd = cg * kh * kw;
    if (kidx >= Kd) return;
    const int ci = kidx % cg, kx = (kidx / cg) % kw, ky = kidx / (cg * kw);
    const long q = (long)q0 + r, P = (long)oh * ow;
    const int bi = (int)(q / P), p = (int)(q % P), oy = p / ow, ox = p % ow;
    const int iy = oy * sh - ph + ky * dh, ix = ox * sw - pw + kx * dw;
    float v = 0.0f;
    if (iy >= 0 && iy < H && ix >= 0 && ix < W)
        v = LD1((((size_t)bi * H + iy) * (size_t)W + ix) * (size_t)C + (size_t)g * cg + ci, x);
    ST1(v, (size_t)r * Kd + kidx, col);
}

/* Weights OHWI w[o*Kd + k] -> wt[wo + k*OC + o] (K-major, so that the GEMM reads W^T without a
 * transpose flag). Launch: global (ceil(OC/64)*64, Kd). */
__kernel void hb_wtrans(__global const TS *w, __global TS *wt, int wo, int OC, int Kd)
{
    const int o = (int)get_global_id(0), k = (int)get_global_id(1);
    if (o >= OC) return;
    ST1(LD1((size_t)o * Kd + k, w), (size_t)wo + (size_t)k * OC + o, wt);
}
