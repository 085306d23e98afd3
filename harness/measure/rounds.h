/*
 * rounds.h - the one rounds driver: measurements that must meet the host's drift alike take their
 * timed calls in rounds, one call each per round, the order rotating every round (rounds.c).
 *
 * On the GPU hosts the host's launch rate drifts by 10-20% and more over seconds (docs/plans.md, "Two
 * replays of the same plan"): two launch-bound measurements sampled one after the other, or in two
 * processes, differ by that drift; sampled in the same rounds of one process they meet it alike. The
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

/* Run rounds over p[0..n-1]: in round r every participant whose state is not HB_ROUND_DONE takes one
 * call, participant (j + r) % n at place j; the rounds go on while any participant answered
 * HB_ROUND_MORE in the last round. Every state starts as HB_ROUND_MORE, so a participant that cannot
 * be sampled (set-up failed) must answer HB_ROUND_DONE at its first call without calling anything.
 * Returns the number of rounds run. */
int hb_rounds_run(hb_round_part *p, int n);

#endif
