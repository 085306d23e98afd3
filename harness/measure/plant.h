/*
 * plant.h - planted slowdowns, for testing the merge gate only (`make PLANT=1`; docs/compare.md
 * "Planted slowdowns"). Compiled to nothing unless HB_PLANT is defined, so a normal build has no
 * hook at all. With it, the environment variable HB_PLANT="OP:FACTOR,..." (an op name such as
 * "matmul" or a family such as "elementwise"; FACTOR in [1, 10], e.g. 1.10) makes every timed call
 * of those ops last FACTOR times as long: sample.c's call_once spins, inside its timed region, for
 * (FACTOR - 1) x the time the call took so far. The spin is real work (a dependent integer chain,
 * checked against the monotonic clock), not a number edited afterwards.
 */
#ifndef HB_PLANT_H
#define HB_PLANT_H
#ifdef HB_PLANT
#include "core/hybench.h"
/* The factor planted for op (1 when none). Parses HB_PLANT once per process; a malformed entry is
 * reported on stderr (naming the entry) and ignored. Announces the active plant once on stderr. */
double hb_plant_factor(hb_op op);
/* Busy work for `seconds` (returns at once for seconds <= 0). */
void hb_plant_spin(double seconds);
#endif
#endif
