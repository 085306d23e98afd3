/* plant.c - planted slowdowns for testing the merge gate (plant.h; built only with make PLANT=1). */
#include "measure/plant.h"
#include "core/config.h"
#include "core/quant.h"
typedef int hb_plant_unit_not_empty; /* ISO C wants a declaration in every translation unit */
#ifdef HB_PLANT
#include "core/stats.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double g_factor[HB_OP_COUNT];
static int g_work[HB_OP_COUNT];
static int g_parsed;
static volatile unsigned long long g_sink;

static void parse(void)
{
    for (int i = 0; i < HB_OP_COUNT; i++) g_factor[i] = 0, g_work[i] = 0;
    g_parsed = 1;
    const char *env = hb_config_get()->plant;
    if (!env || !*env) return;
    const char *wenv = hb_config_get()->plant_work;
    int work = wenv && !strcmp(wenv, "1");
    if (wenv && *wenv && strcmp(wenv, "1") && strcmp(wenv, "0"))
        fprintf(stderr, "hybench: HB_PLANT_WORK=\"%s\" ignored: want 1 (real work) or 0 (the timed spin)\n", wenv);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", env);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':'), *end = NULL;
        double f = colon ? strtod(colon + 1, &end) : 0;
        if (!colon || end == colon + 1 || *end || !(f >= 1 && f <= 10)) {
            fprintf(stderr, "hybench: HB_PLANT entry \"%s\" ignored: want OP:FACTOR with FACTOR in [1, 10]\n", tok);
            continue;
        }
        *colon = 0;
        int hit = 0;
        for (int i = 0; i < HB_OP_COUNT; i++) {
            const hb_op_info *info = hb_op_get((hb_op)i);
            if (!strcmp(tok, info->name) || !strcmp(tok, hb_family_name(info->family))) { g_factor[i] = f; g_work[i] = work; hit = 1; }
        }
        if (!hit) fprintf(stderr, "hybench: HB_PLANT entry \"%s\": no op or family of that name\n", tok);
    }
    fprintf(stderr, "hybench: PLANTED SLOWDOWN active (built with PLANT=1): HB_PLANT=%s (%s)\n", env,
            work ? "real work: HB_PLANT_WORK=1" : "a timed spin");
}

double hb_plant_factor(hb_op op)
{
    if (!g_parsed) parse();
    return (unsigned)op < HB_OP_COUNT ? g_factor[op] : 0;
}

int hb_plant_is_work(hb_op op)
{
    if (!g_parsed) parse();
    return (unsigned)op < HB_OP_COUNT ? g_work[op] : 0;
}

/* The shape fields that size a problem (the others: strides, paddings, groups, layouts, ranks). */
static int size_field(const char *name)
{
    static const char *const names[] = {"n", "m", "k", "batch", "c", "h", "w", "oc", "rows", "cols",
                                        "heads", "seq", "kv_seq", "head_dim"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(name, names[i])) return 1;
    return 0;
}

/* sub fits the buffers of full: no input or output has more elements. */
static int fits(hb_op op, const hb_shape *sub, const hb_shape *full)
{
    for (int i = 0; i < hb_op_get(op)->ninputs; i++)
        if (hb_op_input_elems(op, sub, i) > hb_op_input_elems(op, full, i)) return 0;
    return hb_op_output_elems(op, sub) <= hb_op_output_elems(op, full);
}

int hb_plant_sub_shape(hb_op op, hb_dtype dtype, const hb_shape *full, double fraction, hb_shape *sub)
{
    double f0 = hb_op_flops(op, full);
    if (!(fraction > 0 && fraction < 1) || !(f0 > 0)) return -1;
    double best = INFINITY;
    char err[256];
    for (int fi = 0; fi < hb_shape_nfields; fi++) {
        if (!size_field(hb_shape_fields[fi].name)) continue;
        int64_t v = *(const int64_t *)((const char *)full + hb_shape_fields[fi].offset);
        if (v < 2) continue;
        /* the FLOPs grow with the field: bisect for the value whose FLOPs are nearest fraction x f0 */
        int64_t lo = 1, hi = v;
        while (hi - lo > 1) {
            int64_t mid = lo + (hi - lo) / 2;
            hb_shape t = *full;
            *(int64_t *)((char *)&t + hb_shape_fields[fi].offset) = mid;
            if (hb_op_flops(op, &t) < fraction * f0) lo = mid; else hi = mid;
        }
        for (int64_t cand = lo; cand <= hi; cand++) {
            hb_shape t = *full;
            *(int64_t *)((char *)&t + hb_shape_fields[fi].offset) = cand;
            if (hb_shape_normalize(op, &t, err, sizeof err) != HB_OK || !fits(op, &t, full)) continue;
            const hb_case tc = {.op = op, .dtype = dtype, .shape = t};
            if (!hb_quant_blocks_whole(&tc, NULL, 0)) continue; /* a quantized k stays whole blocks */
            double r = hb_op_flops(op, &t) / f0;
            double miss = fabs(log(r / fraction));
            if (miss < best) { best = miss; *sub = t; }
        }
    }
    return isfinite(best) ? 0 : -1;
}

void hb_plant_spin(double seconds)
{
    if (!(seconds > 0)) return;
    double until = hb_now() + seconds;
    unsigned long long x = 1;
    /* a few dependent multiply-adds between clock reads (a few ns), so that the spin ends within
     * about one clock read (25 ns here) of its target; the result is kept so it is not optimised out */
    do {
        for (int i = 0; i < 4; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    } while (hb_now() < until);
    g_sink ^= x;
}
#endif
