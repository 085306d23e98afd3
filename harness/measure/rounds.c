/* rounds.c - the one rounds driver (rounds.h). */
#include "measure/rounds.h"
#include <stdint.h>
#include <stdlib.h>

/* xorshift64* (Vigna 2016): the rounds' orders, from a fixed seed so that a schedule repeats */
static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

int hb_rounds_run(hb_round_part *p, int n)
{
    if (n <= 0) return 0;
    int *ord = malloc((size_t)n * sizeof *ord);
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    for (int k = 0; k < n; k++) p[k].state = HB_ROUND_MORE;
    int round = 0;
    for (;; round++) {
        /* this round's order: a fresh shuffle (Fisher-Yates), else (no memory) the rotation */
        for (int j = 0; ord && j < n; j++) ord[j] = j;
        for (int j = n - 1; ord && j > 0; j--) {
            int k = (int)(next(&rng) % (uint64_t)(j + 1)), t = ord[j];
            ord[j] = ord[k];
            ord[k] = t;
        }
        int more = 0;
        for (int j = 0; j < n; j++) {
            hb_round_part *x = &p[ord ? ord[j] : (j + round) % n];
            if (x->state == HB_ROUND_DONE) continue;
            x->state = x->sample(x->ctx);
            more |= x->state == HB_ROUND_MORE;
        }
        if (!more) break;
    }
    free(ord);
    return round + 1;
}
