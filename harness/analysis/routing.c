/* routing.c - the routing table's rule (routing.h). */
#include "analysis/routing.h"
#include <math.h>
#include <string.h>

int hb_routing_counts(const char *mode, const char *dtype, int ok, const char *family, int is_reference)
{
    return ok && !is_reference && mode && dtype && !strcmp(mode, HB_ROUTING_MODE) && !strcmp(dtype, HB_ROUTING_DTYPE) &&
           !(family && !strcmp(family, "chain"));
}

int hb_routing_best(const double *t, const int *cand, int n)
{
    int best = -1;
    for (int d = 0; d < n; d++)
        if ((!cand || cand[d]) && isfinite(t[d]) && (best < 0 || t[d] < t[best])) best = d;
    return best;
}
