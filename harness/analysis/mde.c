/* mde.c - the minimum detectable effect of a case (analysis/mde.h): its one formula, the spread it
 * reads, and the smallest p the gate's rank tests can reach. */
#include "analysis/mde.h"
#include "core/rstats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

double hb_mde(const hb_mde_in *in)
{
    if (!in || !(in->se > 0) || !isfinite(in->se) || !(in->alpha > 0 && in->alpha < 1) || in->m < 1 ||
        !(in->confidence > 0 && in->confidence < 1) || !(in->threshold >= 0))
        return NAN;
    size_t k = in->k < 1 ? 1 : in->k > in->m ? in->m : in->k;
    double alpha1 = in->alpha * (double)k / (double)in->m;
    if (in->p_floor > alpha1) return INFINITY;
    double za = hb_rs_normal_quantile(1 - alpha1 / 2), zb = hb_rs_normal_quantile(HB_MDE_POWER);
    double zc = hb_rs_normal_quantile((1 + in->confidence) / 2);
    double test = (za + zb) * sqrt(M_PI / 3) * in->se;
    double rule = log1p(in->threshold) + (in->rule_point ? zb : zc + zb) * sqrt(M_PI / 2) * in->se;
    return expm1(test > rule ? test : rule);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hb_mde_spread(const double *x, size_t n)
{
    if (n < 2) return NAN;
    double *y = malloc(n * sizeof *y);
    if (!y) return NAN;
    memcpy(y, x, n * sizeof *y);
    qsort(y, n, sizeof *y, cmp_dbl);
    double med = hb_rs_median_sorted(y, n), mean = 0, ss = 0;
    for (size_t i = 0; i < n; i++) mean += x[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) {
        ss += (x[i] - mean) * (x[i] - mean);
        y[i] = fabs(x[i] - med);
    }
    qsort(y, n, sizeof *y, cmp_dbl);
    double s = 1.4826 * hb_rs_median_sorted(y, n);
    free(y);
    return s > 0 ? s : sqrt(ss / (double)(n - 1));
}

double hb_mde_floor_signed_rank(size_t n)
{
    return n <= 1 ? 1 : fmin(1, ldexp(1.0, 1 - (int)(n < 1100 ? n : 1100)));
}

double hb_mde_floor_mann_whitney(size_t nx, size_t ny)
{
    if (!nx || !ny) return 1;
    double lc = lgamma((double)(nx + ny) + 1) - lgamma((double)nx + 1) - lgamma((double)ny + 1);
    return fmin(1, 2 * exp(-lc));
}
