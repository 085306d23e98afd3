/* rounds.c - the one rounds driver (rounds.h). */
#include "measure/rounds.h"

int hb_rounds_run(hb_round_part *p, int n)
{
    if (n <= 0) return 0;
    for (int k = 0; k < n; k++) p[k].state = HB_ROUND_MORE;
    int round = 0;
    for (;; round++) {
        int more = 0;
        for (int j = 0; j < n; j++) {
            hb_round_part *x = &p[(j + round) % n];
            if (x->state == HB_ROUND_DONE) continue;
            x->state = x->sample(x->ctx);
            more |= x->state == HB_ROUND_MORE;
        }
        if (!more) break;
    }
    return round + 1;
}
