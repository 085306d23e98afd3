/* changepoint.c - Pettitt and Mann-Kendall tests and the binary segmentation of analysis/changepoint.h. */
#include "analysis/changepoint.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void hb_cp_defaults(hb_cp_opts *o)
{
    o->alpha = 0.001;
    o->alpha_trend = 0.005;
    o->min_change = 0.02;
    o->min_seg = 3;
}

typedef struct vi { double v; size_t i; } vi;
static int cmp_vi(const void *a, const void *b)
{
    const vi *x = a, *y = b;
    return x->v < y->v ? -1 : x->v > y->v;
}

double hb_cp_pettitt(const double *x, size_t n, size_t min_seg, size_t *t)
{
    *t = 0;
    if (min_seg < 1) min_seg = 1;
    if (n < 2 * min_seg || n < 2) return 1.0;
    vi *v = malloc(n * sizeof *v);
    double *d = malloc(n * sizeof *d);
    if (!v || !d) { free(v); free(d); return 1.0; }
    for (size_t i = 0; i < n; i++) v[i] = (vi){ x[i], i };
    qsort(v, n, sizeof *v, cmp_vi);
    /* midranks (1-based); sum_j sign(x_i - x_j) = 2 r_i - n - 1 */
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && v[j].v == v[i].v) j++;
        double r = 0.5 * (double)(i + 1 + j);
        for (size_t k = i; k < j; k++) d[v[k].i] = 2 * r - (double)n - 1;
        i = j;
    }
    double u = 0, best = -1;
    for (size_t k = 0; k + 1 < n; k++) {
        u += d[k]; /* U after k+1 values */
        size_t before = k + 1;
        if (before < min_seg || n - before < min_seg) continue;
        if (fabs(u) > best) { best = fabs(u); *t = before; }
    }
    free(v);
    free(d);
    double m = (double)n;
    double p = 2 * exp(-6 * best * best / (m * m * m + m * m));
    return p > 1 ? 1 : p;
}

double hb_cp_mann_kendall(const double *x, size_t n, double *s)
{
    double S = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) S += (x[j] > x[i]) - (x[j] < x[i]);
    *s = S;
    if (n < 3) return 1.0;
    double m = (double)n, var = m * (m - 1) * (2 * m + 5) / 18;
    double z = S > 0 ? (S - 1) / sqrt(var) : S < 0 ? (S + 1) / sqrt(var) : 0; /* continuity correction */
    return erfc(fabs(z) / sqrt(2.0));
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(const double *x, size_t n, double *tmp)
{
    memcpy(tmp, x, n * sizeof *x);
    qsort(tmp, n, sizeof *tmp, cmp_d);
    return n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

/* Residual sum of squares of two means split after t values. */
static double rss_step(const double *x, size_t n, size_t t)
{
    double m1 = 0, m2 = 0, r = 0;
    for (size_t i = 0; i < t; i++) m1 += x[i];
    for (size_t i = t; i < n; i++) m2 += x[i];
    m1 /= (double)t;
    m2 /= (double)(n - t);
    for (size_t i = 0; i < n; i++) { double e = x[i] - (i < t ? m1 : m2); r += e * e; }
    return r;
}

/* Best ramp y = c + s * z_i, z_i = clamp(i - h1, 0, h2 - h1) (flat, a straight line in log time from
 * night h1 to night h2, flat again; h2 = n: the line runs to the end) over 0 <= h1, h1 + 2 <= h2 <= n,
 * by least squares, O(n^2) with prefix sums. Returns its RSS; *h1, *h2, *slope. */
static double rss_ramp(const double *x, size_t n, size_t *bh1, size_t *bh2, double *slope)
{
    double *sy = malloc((n + 1) * sizeof *sy), *siy = malloc((n + 1) * sizeof *siy);
    double best = INFINITY, syy = 0;
    *bh1 = *bh2 = 0;
    *slope = 0;
    if (!sy || !siy) { free(sy); free(siy); return best; }
    sy[0] = siy[0] = 0;
    for (size_t i = 0; i < n; i++) {
        sy[i + 1] = sy[i] + x[i];
        siy[i + 1] = siy[i] + (double)i * x[i];
        syy += x[i] * x[i];
    }
    double m = (double)n, ty = sy[n];
    for (size_t h1 = 0; h1 + 2 <= n; h1++)
        for (size_t h2 = h1 + 2; h2 <= n; h2++) {
            /* rising part i = h1+1 .. e-1 with z = i - h1 (e = min(h2, n)); plateau i = h2 .. n-1, z = L */
            size_t e = h2 < n ? h2 : n;
            double L = (double)(h2 - h1);
            double k = (double)(e - h1 - 1);               /* number of rising points: z = 1..k */
            double sz = k * (k + 1) / 2, szz = k * (k + 1) * (2 * k + 1) / 6;
            double szy = (siy[e] - siy[h1 + 1]) - (double)h1 * (sy[e] - sy[h1 + 1]);
            if (h2 < n) {
                double np = (double)(n - h2);
                sz += L * np;
                szz += L * L * np;
                szy += L * (sy[n] - sy[h2]);
            }
            double den = m * szz - sz * sz;
            if (den <= 0) continue;
            double sl = (m * szy - sz * ty) / den, c = (ty - sl * sz) / m;
            double r = syy - c * ty - sl * szy;
            if (r < best) { best = r; *bh1 = h1; *bh2 = h2; *slope = sl; }
        }
    free(sy);
    free(siy);
    return best;
}

typedef struct seg { size_t a, b; } seg;

size_t hb_changepoints(const double *x, size_t n, const hb_cp_opts *o, hb_change *out, size_t maxout)
{
    hb_cp_opts def;
    if (!o) { hb_cp_defaults(&def); o = &def; }
    size_t ms = o->min_seg ? o->min_seg : 1;
    if (n < 2 * ms || n < 3) return 0;
    seg *stack = malloc(2 * n * sizeof *stack);
    double *tmp = malloc(n * sizeof *tmp);
    hb_change *found = malloc(n * sizeof *found);
    if (!stack || !tmp || !found) { free(stack); free(tmp); free(found); return 0; }
    size_t sp = 0, nf = 0;
    stack[sp++] = (seg){ 0, n };
    while (sp) {
        seg g = stack[--sp];
        size_t m = g.b - g.a;
        if (m < 2 * ms || m < 3) continue;
        const double *y = x + g.a;
        size_t t;
        double pp = hb_cp_pettitt(y, m, ms, &t), s;
        double pm = hb_cp_mann_kendall(y, m, &s);
        if (pp >= o->alpha && pm >= o->alpha_trend) continue;
        if (t == 0) t = m / 2;
        /* step or drift: a drift when a ramp over at least 3 nights fits better than the step by
         * more than its extra breakpoint costs (Schwarz: m ln(RSS_step / RSS_ramp) > ln m) */
        size_t h1, h2;
        double slope;
        double rs = rss_step(y, m, t), rr = rss_ramp(y, m, &h1, &h2, &slope);
        hb_change c = { 0 };
        c.p = pp < pm ? pp : pm;
        size_t last = h2 < m ? h2 : m - 1; /* the last night of the ramp */
        if (slope != 0 && last >= h1 + 3 && rr > 0 && (double)m * log(rs / rr) > log((double)m)) {
            c.kind = HB_CP_DRIFT;
            c.begin = g.a + h1 + 1;
            c.end = g.a + last;
            c.rate = expm1(slope);
            c.size = expm1(slope * (double)(last - h1));
        } else {
            c.kind = HB_CP_STEP;
            c.begin = c.end = g.a + t;
            double mb = median_of(y, t, tmp), ma = median_of(y + t, m - t, tmp);
            c.size = expm1(ma - mb);
            c.rate = 0;
        }
        if (fabs(c.size) < o->min_change) continue;
        found[nf++] = c;
        if (c.kind == HB_CP_STEP) {
            stack[sp++] = (seg){ g.a, g.a + t };
            stack[sp++] = (seg){ g.a + t, g.b };
        } else {
            stack[sp++] = (seg){ g.a, c.begin };
            if (c.end + 1 < g.b) stack[sp++] = (seg){ c.end + 1, g.b };
        }
    }
    /* order by begin */
    for (size_t i = 1; i < nf; i++)
        for (size_t j = i; j > 0 && found[j - 1].begin > found[j].begin; j--) {
            hb_change u = found[j]; found[j] = found[j - 1]; found[j - 1] = u;
        }
    /* a step's size between its neighbours: the segment before it (from the previous change) and
     * the one after it (to the next change), not the larger segment where it was first found */
    for (size_t i = 0; i < nf; i++) {
        if (found[i].kind != HB_CP_STEP) continue;
        size_t a = i ? found[i - 1].begin : 0, b = i + 1 < nf ? found[i + 1].begin : n, t = found[i].begin;
        if (i && found[i - 1].kind == HB_CP_DRIFT) a = found[i - 1].end + 1 > t ? a : found[i - 1].end + 1;
        if (t > a && b > t) found[i].size = expm1(median_of(x + t, b - t, tmp) - median_of(x + a, t - a, tmp));
    }
    if (out) memcpy(out, found, (nf < maxout ? nf : maxout) * sizeof *out);
    free(stack);
    free(tmp);
    free(found);
    return nf;
}
