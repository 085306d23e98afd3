/*
 * rounds.h - the one rounds driver: measurements that must meet the host's drift alike take their
 * timed calls in rounds, one call each per round, in a fresh order every round (rounds.c).
 *
 * On the GPU hosts the host's launch rate drifts by 10-20% and more over seconds (docs/plans.md, "Two
 * replays of the same plan"): two launch-bound measurements sampled one after the other, or in two
 * processes, differ by that drift; sampled in the same rounds of one process they meet it alike.
 * What a participant's call follows matters too: a call right after the host's OpenMP work (a cpu
 * participant: libgomp's threads spin on after it) launched slower. With the order only rotating,
 * each participant always followed the same one: on the H200 host the all-GPU decode plan, replayed
 * as `single: cuda:0` after the cpu chain case and as `optimal` after a GPU plan, read 127.3 [125.9,
 * 129.6] against 124.2 [123.2, 125.5] us and 132.3 [128.3, 136.8] against 124.5 [122.8, 126.8] us in
 * two processes (the same plan; docs/plans.md). A shuffled order gives every participant every
 * predecessor alike. The
 * driver owns the order and the end of the rounds; each participant owns its call (its executor: place,
 * run, time, fetch) and its own stop rule. Used by measure/replay.c for a model's plans and the model's
 * chain case (measure/chain.c hb_chain_part_*) sampled together.
 */
#ifndef HB_MEASURE_ROUNDS_H
#define HB_MEASURE_ROUNDS_H

/* What a participant's call returned (hb_round_part.sample). */
enum {
    HB_ROUND_DONE = 0,   /* no more calls: its stop rule ended it, it reached its maximum, or it failed */
    HB_ROUND_ENOUGH = 1, /* its stop rule is met, but it takes more calls while the others sample */
    HB_ROUND_MORE = 2    /* its stop rule wants more calls */
};

typedef struct hb_round_part {
    void *ctx;               /* the participant (not owned) */
    int (*sample)(void *ctx); /* one timed call of ctx; returns HB_ROUND_* */
    int state;               /* the last call's answer (hb_rounds_run sets it) */
} hb_round_part;

/* Run rounds over p[0..n-1]: in every round each participant whose state is not HB_ROUND_DONE takes
 * one call, in an order shuffled afresh each round (Fisher-Yates over xorshift64* from a fixed seed:
 * the same schedule every run; the rotation (j + r) % n when out of memory); the rounds go on while any participant answered
 * HB_ROUND_MORE in the last round. Every state starts as HB_ROUND_MORE, so a participant that cannot
 * be sampled (set-up failed) must answer HB_ROUND_DONE at its first call without calling anything.
 * Returns the number of rounds run. */
int hb_rounds_run(hb_round_part *p, int n);

#endif
