/* plant.c - planted slowdowns for testing the merge gate (plant.h; built only with make PLANT=1). */
#include "measure/plant.h"
typedef int hb_plant_unit_not_empty; /* ISO C wants a declaration in every translation unit */
#ifdef HB_PLANT
#include "core/stats.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double g_factor[HB_OP_COUNT];
static int g_parsed;
static volatile unsigned long long g_sink;

static void parse(void)
{
    for (int i = 0; i < HB_OP_COUNT; i++) g_factor[i] = 0;
    g_parsed = 1;
    const char *env = getenv("HB_PLANT");
    if (!env || !*env) return;
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
            if (!strcmp(tok, info->name) || !strcmp(tok, hb_family_name(info->family))) { g_factor[i] = f; hit = 1; }
        }
        if (!hit) fprintf(stderr, "hybench: HB_PLANT entry \"%s\": no op or family of that name\n", tok);
    }
    fprintf(stderr, "hybench: PLANTED SLOWDOWN active (built with PLANT=1): HB_PLANT=%s\n", env);
}

double hb_plant_factor(hb_op op)
{
    if (!g_parsed) parse();
    return (unsigned)op < HB_OP_COUNT ? g_factor[op] : 0;
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
