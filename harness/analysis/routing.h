/*
 * routing.h - the rule of the routing table (routing.json, written by the report's Q5,
 * report/q5_selection.c) in one place, so that the greedy plan (analysis/plan.c, `hybench plan`)
 * is the routing table's choice and not a second reading of it (routing.c):
 *   - the case records that count: mode f32, dtype f32, status ok, not the chain (a whole layer), not
 *     the reference backend (cpu-ref verifies, it is not a candidate);
 *   - per op and shape and backend, its time is the lowest median total over the routes it ran;
 *   - the best backend is the one of lowest time (ties: the first).
 */
#ifndef HB_ROUTING_H
#define HB_ROUTING_H

#define HB_ROUTING_MODE "f32"
#define HB_ROUTING_DTYPE "f32"

/* 1 when a case record with these fields counts for the routing table. is_reference: its backend
 * is the verification reference (cpu-ref). */
int hb_routing_counts(const char *mode, const char *dtype, int ok, const char *family, int is_reference);
/* The index of the lowest finite t[d] among d < n with cand[d] (cand NULL: all), ties to the lowest
 * index; -1 when none. */
int hb_routing_best(const double *t, const int *cand, int n);

#endif
