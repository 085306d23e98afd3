/* rstats.c - robust two-sample statistics (core/rstats.h): RNG, quantiles, bootstrap CI of a ratio
 * of medians, Mann-Whitney U, Benjamini-Hochberg. */
#include "core/rstats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- RNG ---- */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void hb_rng_seed(hb_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t hb_rng_next(hb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double hb_rng_uniform(hb_rng *r) { return (double)(hb_rng_next(r) >> 11) * 0x1.0p-53; }

double hb_rng_normal(hb_rng *r)
{
    double u1;
    do u1 = hb_rng_uniform(r); while (u1 <= 0.0);
    double u2 = hb_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

uint64_t hb_hash64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 offset basis and prime (Fowler/Noll/Vo) */
    for (; s && *s; s++) { h ^= (unsigned char)*s; h *= 0x100000001b3ULL; }
    return h;
}

/* A stream of 32-bit words, two per 64-bit draw. */
typedef struct rng32 { hb_rng *r; uint64_t buf; int have; } rng32;
static inline uint32_t next32(rng32 *g)
{
    if (g->have) { g->have = 0; return (uint32_t)(g->buf >> 32); }
    g->buf = hb_rng_next(g->r);
    g->have = 1;
    return (uint32_t)g->buf;
}
/* Uniform integer in [0, n), n >= 1: Lemire's multiply-shift with rejection (unbiased;
 * "Fast Random Integer Generation in an Interval", ACM TOMACS 2019). */
static inline uint32_t below(rng32 *g, uint32_t n)
{
    uint64_t m = (uint64_t)next32(g) * n;
    uint32_t l = (uint32_t)m;
    if (l < n) {
        uint32_t t = (uint32_t)(-n) % n;
        while (l < t) { m = (uint64_t)next32(g) * n; l = (uint32_t)m; }
    }
    return (uint32_t)(m >> 32);
}

/* ---- order statistics ---- */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void hb_rs_sort(double *x, size_t n) { if (n > 1) qsort(x, n, sizeof *x, cmp_double); }

double hb_rs_median_sorted(const double *s, size_t n)
{
    if (n == 0) return NAN;
    return (n & 1) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

double hb_rs_quantile_sorted(const double *s, size_t n, double q)
{
    if (n == 0) return NAN;
    if (q <= 0) return s[0];
    if (q >= 1) return s[n - 1];
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    double f = h - (double)lo;
    if (lo + 1 >= n) return s[n - 1];
    return s[lo] + f * (s[lo + 1] - s[lo]);
}

/* ---- bootstrap ---- */
/* Median of one resample of sorted x[n], drawn directly: n indices, a histogram of them, the middle
 * order statistic(s) read off the cumulative counts. counts[n] is scratch. O(n) per resample. */
static double resample_median_direct(const double *x, uint32_t n, uint32_t *counts, rng32 *g)
{
    memset(counts, 0, n * sizeof *counts);
    for (uint32_t i = 0; i < n; i++) counts[below(g, n)]++;
    uint32_t k1 = (n - 1) / 2, k2 = n / 2; /* 0-based ranks of the lower and upper middle */
    uint32_t cum = 0, i = 0;
    while (cum + counts[i] <= k1) cum += counts[i++];
    double a = x[i];
    if (k2 == k1) return a;
    while (cum + counts[i] <= k2) cum += counts[i++];
    return 0.5 * (a + x[i]);
}

/* The order-statistic sampler: the distribution of the indices (into the sorted sample) of the
 * middle order statistic(s) of a resample, computed once per n, then sampled by inversion, O(log n)
 * per resample. With C_j = number of the n draws whose index is <= j, C_j ~ Binomial(n, (j+1)/n):
 *   lower middle L (0-based rank k1 = (n-1)/2):  P(L <= j) = G1(j) = P(C_j >= k1+1)
 *   upper middle U (rank k2 = k1+1, even n):     P(U <= j) = G2(j) = P(C_j >= k1+2)
 *   P(L = j, U = j) = G2(j) - G1(j-1) + P(C_{j-1} = k1+1) (1 - 1/(n-j))^(n-k1-1)
 * (the draws with index >= j fall on j with probability 1/(n-j) each). Given L = j and U > j, the
 * n-k1-1 draws above j are iid uniform on {j+1..n-1}, so U - j - 1 is the minimum of n-k1-1 iid
 * uniform integers on [0, n-j-1): floor((n-j-1)(1 - V^(1/(n-k1-1)))).
 * Binomial tails are summed upward from k with the pmf recurrence, the first pmf from lgamma. */
typedef struct os_table {
    uint32_t n;
    double *cdf;      /* cdf[j] = P(L <= j) */
    double *pboth;    /* even n: P(U = j | L = j); NULL for odd n */
    uint32_t *guide;  /* guide[i] = smallest j with cdf[j] > i/n (Chen & Asau 1974 guide table) */
} os_table;

static void os_free(os_table *t)
{
    free(t->cdf); free(t->pboth); free(t->guide);
    t->cdf = t->pboth = NULL;
    t->guide = NULL;
}

static int os_build(os_table *t, uint32_t n)
{
    t->n = n;
    t->cdf = malloc(n * sizeof *t->cdf);
    t->guide = malloc(n * sizeof *t->guide);
    t->pboth = (n % 2 == 0) ? malloc(n * sizeof *t->pboth) : NULL;
    double *p1 = (n % 2 == 0) ? malloc(n * sizeof *p1) : NULL;
    if (!t->cdf || !t->guide || ((n % 2 == 0) && (!t->pboth || !p1))) { os_free(t); free(p1); return -1; }
    uint32_t k = (n - 1) / 2 + 1; /* C_j >= k1 + 1 */
    double lgn = lgamma((double)n + 1);
    for (uint32_t j = 0; j < n; j++) {
        double p = (double)(j + 1) / n;
        double tail, first;
        if (j + 1 == n) { tail = 1; first = (k == n) ? 1 : 0; }
        else {
            double lp = log(p), lq = log1p(-p), ratio = p / (1 - p);
            double pmf = exp(lgn - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) +
                             (double)k * lp + (double)(n - k) * lq);
            first = pmf;
            if ((double)k > (double)n * p) {
                /* above the mean: the pmf falls from c = k upward, sum the upper tail */
                tail = 0;
                for (uint32_t c = k; c <= n; c++) {
                    tail += pmf;
                    if (pmf < 1e-300 * tail) break;
                    pmf *= (double)(n - c) / (double)(c + 1) * ratio;
                }
            } else {
                /* at or below the mean: 1 - the lower tail, summed from c = k-1 downward */
                double low = 0;
                pmf *= (double)k / (double)(n - k + 1) / ratio; /* pmf(k-1) */
                for (uint32_t c = k; c-- > 0;) {
                    low += pmf;
                    if (pmf < 1e-300 * (low + 1e-300) || c == 0) break;
                    pmf *= (double)c / (double)(n - c + 1) / ratio;
                }
                tail = 1 - low;
            }
        }
        t->cdf[j] = tail > 1 ? 1 : tail;
        if (p1) p1[j] = first;
    }
    t->cdf[n - 1] = 1;
    for (uint32_t i = 0, j = 0; i < n; i++) {
        while (j + 1 < n && t->cdf[j] <= (double)i / n) j++;
        t->guide[i] = j;
    }
    if (p1) {
        double m = (double)(n - k); /* n - k1 - 1 */
        for (uint32_t j = 0; j < n; j++) {
            double g1 = t->cdf[j], g1m = j ? t->cdf[j - 1] : 0;
            double g2 = g1 - p1[j];
            double both = g2 - g1m + (j ? p1[j - 1] * pow(1 - 1.0 / (double)(n - j), m) : 0);
            double pl = g1 - g1m;
            double r = pl > 0 ? both / pl : 1;
            t->pboth[j] = r < 0 ? 0 : r > 1 ? 1 : r;
        }
        free(p1);
    }
    return 0;
}

static double resample_median_os(const double *x, const os_table *t, hb_rng *r)
{
    uint32_t n = t->n;
    double u = hb_rng_uniform(r);
    uint32_t b = (uint32_t)(u * n);
    uint32_t lo = t->guide[b < n ? b : n - 1]; /* then the smallest j with cdf[j] > u */
    while (lo + 1 < n && t->cdf[lo] <= u) lo++;
    if (!t->pboth) return x[lo];
    uint32_t up = lo;
    if (hb_rng_uniform(r) >= t->pboth[lo] && lo + 1 < n) {
        double w = 1 - hb_rng_uniform(r); /* (0, 1] */
        double m = (double)(n - (n - 1) / 2 - 1);
        double span = (double)(n - lo - 1);
        uint32_t d = (uint32_t)(span * (1 - pow(w, 1 / m)));
        if (d >= n - lo - 1) d = n - lo - 2;
        up = lo + 1 + d;
    }
    return 0.5 * (x[lo] + x[up]);
}

/* Fill out[resamples] with resample medians of sorted x[n] by either method. */
static hb_status boot_medians(const double *x, uint32_t n, int resamples, hb_rng *r,
                              hb_boot_method method, double *out)
{
    if (method == HB_BOOT_AUTO) method = (n <= (uint32_t)resamples && n <= 4096) ? HB_BOOT_ORDER_STAT : HB_BOOT_DIRECT;
    if (method == HB_BOOT_ORDER_STAT) {
        os_table t;
        if (os_build(&t, n)) return HB_ENOMEM;
        for (int b = 0; b < resamples; b++) out[b] = resample_median_os(x, &t, r);
        os_free(&t);
        return HB_OK;
    }
    uint32_t *counts = malloc(n * sizeof *counts);
    if (!counts) return HB_ENOMEM;
    rng32 g = { r, 0, 0 };
    for (int b = 0; b < resamples; b++) out[b] = resample_median_direct(x, n, counts, &g);
    free(counts);
    return HB_OK;
}

/* k-th smallest (0-based) of x[0..n-1], partially reordering x (Hoare's selection with a
 * median-of-three pivot). Expected O(n). */
static double select_kth(double *x, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (hi > lo) {
        size_t mid = lo + (hi - lo) / 2;
        double a = x[lo], b = x[mid], c = x[hi];
        double piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        while (i <= j) {
            while (x[i] < piv) i++;
            while (x[j] > piv) j--;
            if (i <= j) {
                double t = x[i]; x[i] = x[j]; x[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return x[k];
    }
    return x[k];
}

/* Type-7 quantile q of unsorted x[n] (reordered), by selection. */
static double quantile_select(double *x, size_t n, double q)
{
    double h = (double)(n - 1) * q;
    size_t k = (size_t)floor(h);
    double f = h - (double)k;
    double a = select_kth(x, n, k);
    if (f == 0 || k + 1 >= n) return a;
    /* after selection, x[k+1..n-1] >= a: the next order statistic is their minimum */
    double b = x[k + 1];
    for (size_t i = k + 2; i < n; i++) if (x[i] < b) b = x[i];
    return a + f * (b - a);
}

hb_status hb_rs_bootstrap_medians(const double *sorted, size_t n, int resamples, uint64_t seed,
                                  hb_boot_method method, double *out)
{
    if (!sorted || n == 0 || n > (1u << 31) || resamples < 1 || !out) return HB_EINVAL;
    hb_rng r;
    hb_rng_seed(&r, seed);
    return boot_medians(sorted, (uint32_t)n, resamples, &r, method, out);
}

hb_status hb_rs_bootstrap_ratio(const double *base, size_t nb, const double *cur, size_t nc,
                                int resamples, double conf, uint64_t seed,
                                double *ratio, double *lo, double *hi)
{
    *ratio = *lo = *hi = NAN;
    if (!base || !cur || nb == 0 || nc == 0 || nb > (1u << 31) || nc > (1u << 31)) return HB_EINVAL;
    if (resamples < 100 || resamples > 1000000 || !(conf > 0 && conf < 1)) return HB_EINVAL;
    double mb = hb_rs_median_sorted(base, nb), mc = hb_rs_median_sorted(cur, nc);
    if (!(mb > 0) || !(mc > 0) || !isfinite(mb) || !isfinite(mc)) return HB_EINVAL;
    double *rb = malloc((size_t)resamples * sizeof *rb);
    double *rc = malloc((size_t)resamples * sizeof *rc);
    if (!rb || !rc) { free(rb); free(rc); return HB_ENOMEM; }
    hb_rng r;
    hb_rng_seed(&r, seed);
    hb_status st = boot_medians(base, (uint32_t)nb, resamples, &r, HB_BOOT_AUTO, rb);
    if (st == HB_OK) st = boot_medians(cur, (uint32_t)nc, resamples, &r, HB_BOOT_AUTO, rc);
    int nrep = 0;
    if (st == HB_OK) {
        /* a resample median of 0 is possible only if base holds zeros; such replicates are left out */
        for (int b = 0; b < resamples; b++)
            if (rb[b] > 0) rb[nrep++] = rc[b] / rb[b];
        if (nrep < resamples / 2) st = HB_EINVAL;
    }
    if (st == HB_OK) {
        *ratio = mc / mb;
        *lo = quantile_select(rb, (size_t)nrep, (1 - conf) / 2);
        *hi = quantile_select(rb, (size_t)nrep, (1 + conf) / 2);
    }
    free(rb);
    free(rc);
    return st;
}

/* ---- Mann-Whitney U ---- */
double hb_rs_normal_sf(double z) { return 0.5 * erfc(z / M_SQRT2); }

/* AS 241 (Wichura 1988), PPND16: rational approximations in three regions of q = p - 0.5. */
static double poly(const double *c, int n, double x)
{
    double v = c[n - 1];
    for (int i = n - 2; i >= 0; i--) v = v * x + c[i];
    return v;
}

double hb_rs_normal_quantile(double p)
{
    static const double a[8] = {3.3871328727963666080e0, 1.3314166789178437745e+2, 1.9715909503065514427e+3,
                                1.3731693765509461125e+4, 4.5921953931549871457e+4, 6.7265770927008700853e+4,
                                3.3430575583588128105e+4, 2.5090809287301226727e+3};
    static const double b[8] = {1.0, 4.2313330701600911252e+1, 6.8718700749205790830e+2, 5.3941960214247511077e+3,
                                2.1213794301586595867e+4, 3.9307895800092710610e+4, 2.8729085735721942674e+4,
                                5.2264952788528545610e+3};
    static const double c[8] = {1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0,
                                3.64784832476320460504e0, 1.27045825245236838258e0, 2.41780725177450611770e-1,
                                2.27238449892691845833e-2, 7.74545014278341407640e-4};
    static const double d[8] = {1.0, 2.05319162663775882187e0, 1.67638483018380384940e0, 6.89767334985100004550e-1,
                                1.48103976427480074590e-1, 1.51986665636164571966e-2, 5.47593808499534494600e-4,
                                1.05075007164441684324e-9};
    static const double e[8] = {6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0,
                                2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
                                2.71155556874348757815e-5, 2.01033439929228813265e-7};
    static const double f[8] = {1.0, 5.99832206555887937690e-1, 1.36929880922735805310e-1, 1.48753612908506148525e-2,
                                7.86869131145613259100e-4, 1.84631831751005468180e-5, 1.42151175831644588870e-7,
                                2.04426310338993978564e-15};
    if (!(p >= 0 && p <= 1)) return NAN;
    if (p == 0) return -INFINITY;
    if (p == 1) return INFINITY;
    double q = p - 0.5;
    if (fabs(q) <= 0.425) {
        double r = 0.180625 - q * q;
        return q * poly(a, 8, r) / poly(b, 8, r);
    }
    double r = sqrt(-log(q < 0 ? p : 1 - p)), z;
    if (r <= 5) {
        r -= 1.6;
        z = poly(c, 8, r) / poly(d, 8, r);
    } else {
        r -= 5;
        z = poly(e, 8, r) / poly(f, 8, r);
    }
    return q < 0 ? -z : z;
}

typedef struct tagged { double v; int from_x; } tagged;
static int cmp_tagged(const void *a, const void *b)
{
    double x = ((const tagged *)a)->v, y = ((const tagged *)b)->v;
    return (x > y) - (x < y);
}

/* Counts c[0..nx*ny] of U = u under H0 (all C(nx+ny, nx) orderings equally likely). */
static double *mwu_exact_counts(size_t nx, size_t ny)
{
    size_t deg = nx * ny;
    /* the product reaches degree i*ny + i before the division by (1 - q^i) */
    double *c = calloc(deg + nx + 1, sizeof *c);
    if (!c) return NULL;
    c[0] = 1;
    size_t d = 0; /* current degree */
    for (size_t i = 1; i <= nx; i++) {
        /* multiply by (1 - q^(ny+i)) */
        size_t sh = ny + i;
        for (size_t j = d + 1; j-- > 0;) c[j + sh] -= c[j];
        d += sh;
        /* divide by (1 - q^i): exact, so a running sum with stride i */
        for (size_t j = i; j <= d; j++) c[j] += c[j - i];
        d -= i;
    }
    return c;
}

hb_status hb_rs_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
                             hb_mwu_method method, hb_mwu *out)
{
    out->u = out->z = out->p = NAN;
    out->exact = 0;
    if (!x || !y || nx == 0 || ny == 0) return HB_EINVAL;
    size_t n = nx + ny;
    tagged *t = malloc(n * sizeof *t);
    if (!t) return HB_ENOMEM;
    for (size_t i = 0; i < nx; i++) {
        if (!isfinite(x[i])) { free(t); return HB_EINVAL; }
        t[i].v = x[i]; t[i].from_x = 1;
    }
    for (size_t j = 0; j < ny; j++) {
        if (!isfinite(y[j])) { free(t); return HB_EINVAL; }
        t[nx + j].v = y[j]; t[nx + j].from_x = 0;
    }
    qsort(t, n, sizeof *t, cmp_tagged);
    /* midranks (1-based), rank sum of x, tie term sum(t^3 - t) */
    double rx = 0, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && t[j].v == t[i].v) j++;
        double g = (double)(j - i);
        double mid = 0.5 * ((double)i + 1 + (double)j); /* mean of ranks i+1..j */
        for (size_t k = i; k < j; k++) if (t[k].from_x) rx += mid;
        if (j - i > 1) ties += g * g * g - g;
        i = j;
    }
    free(t);
    double dnx = (double)nx, dny = (double)ny, dn = (double)n;
    double u = rx - dnx * (dnx + 1) / 2;
    out->u = u;
    int use_exact = 0;
    if (method == HB_MWU_EXACT) {
        if (ties > 0 || nx * ny > 10000) return HB_EINVAL;
        use_exact = 1;
    } else if (method == HB_MWU_AUTO) {
        use_exact = ties == 0 && nx <= 30 && ny <= 30 && nx * ny <= 400;
    }
    if (use_exact) {
        double *c = mwu_exact_counts(nx, ny);
        if (!c) return HB_ENOMEM;
        size_t deg = nx * ny, ui = (size_t)llround(u);
        double total = 0, le = 0, ge = 0;
        for (size_t k = 0; k <= deg; k++) {
            total += c[k];
            if (k <= ui) le += c[k];
            if (k >= ui) ge += c[k];
        }
        free(c);
        double p = 2 * fmin(le, ge) / total;
        out->p = p > 1 ? 1 : p;
        out->z = 0;
        out->exact = 1;
        return HB_OK;
    }
    double mu = dnx * dny / 2;
    double var = dnx * dny / 12 * ((dn + 1) - ties / (dn * (dn - 1)));
    if (!(var > 0)) { out->z = 0; out->p = 1; return HB_OK; }
    double sd = sqrt(var);
    double d = fabs(u - mu) - 0.5;
    if (d < 0) d = 0;
    double z = d / sd;
    double p = 2 * hb_rs_normal_sf(z);
    out->z = u >= mu ? z : -z;
    out->p = p > 1 ? 1 : p;
    return HB_OK;
}

/* ---- Benjamini-Hochberg ---- */
typedef struct pidx { double p; size_t i; } pidx;
static int cmp_pidx(const void *a, const void *b)
{
    const pidx *x = a, *y = b;
    if (x->p != y->p) return (x->p > y->p) - (x->p < y->p);
    return (x->i > y->i) - (x->i < y->i);
}

hb_status hb_rs_bh_adjust(const double *p, size_t m, double *q)
{
    pidx *v = malloc((m ? m : 1) * sizeof *v);
    if (!v) return HB_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (!isnan(p[i])) { v[k].p = p[i]; v[k].i = i; k++; }
    qsort(v, k, sizeof *v, cmp_pidx);
    for (size_t i = 0; i < m; i++) if (isnan(p[i])) q[i] = NAN;
    double run = 1;
    for (size_t j = k; j-- > 0;) {
        double a = (double)k * v[j].p / (double)(j + 1);
        if (a < run) run = a;
        v[j].p = run;
    }
    for (size_t j = 0; j < k; j++) q[v[j].i] = v[j].p;
    free(v);
    return HB_OK;
}
