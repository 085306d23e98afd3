/*
 * exec.h - the one executor that single ops (sample.c), chains (chain.c) and plan replays (replay.c)
 * run their steps with (exec.c): a step is an op on a backend instance with its buffers; the executor
 * places a step's inputs in its device's memory, runs it, times it and fetches its output. An op case
 * is a one-step graph, a chain N steps on one instance, a replay steps spread over instances.
 *
 * What the executor owns, each in one place:
 *   - the clock of a timed piece of work: the device timer (the backend's timer_begin/timer_end: the
 *     device's seconds from the work's start to its end) where the caller asks for it and the backend
 *     has one, else the host clock (hb_now); the host's seconds are returned beside it;
 *   - the start state of a timed run: the hot rule or --cold (prepare.h hb_compute_prepare), its
 *     seconds returned so that the caller takes them out of its total;
 *   - how a step is launched: run (waits for the device), or run_async (enqueues; the next blocking
 *     hook waits) where asked and the backend has it, and a segment of steps enqueued back to back
 *     under one device timer (hb_exec_enqueue: the layer as an executor runs it).
 * What it leaves to its callers: which buffers a mode moves and converts (sample.c's and chain.c's
 * modes, replay.c's copies between memories) and the driver's policy (warm-up, how many calls, the
 * rounds: rounds.h; the verification: verify.h).
 */
#ifndef HB_MEASURE_EXEC_H
#define HB_MEASURE_EXEC_H
#include "core/backend.h"
#include "measure/prepare.h"

/* One step: case c on inst, reading in[0..ninputs-1] (NULL past the op's inputs), writing out; prep
 * its hot-rule state (zeroed before its first call; may be NULL only with HB_EXEC_NO_PREP). Nothing
 * is owned. */
typedef struct hb_exec_step {
    hb_instance *inst;
    const hb_case *c;
    hb_buf *in[HB_MAX_INPUTS];
    hb_buf *out;
    hb_prep_state *prep;
    const hb_case *pre; /* NULL, or a case run first inside the timed region on the same buffers (the
                         * planted work of `make PLANT=1`, measure/plant.h) */
} hb_exec_step;

/* flags of hb_exec_run */
#define HB_EXEC_DEV_TIMER 1u /* time on the device timer where the backend has one */
#define HB_EXEC_ASYNC 2u     /* enqueue with run_async where the backend has it (no wait) */
#define HB_EXEC_NO_PREP 4u   /* no hot rule / cold eviction before the run (the caller did it, or the run
                              * follows an enqueued one and must not wait for it outside the timing) */

/* Place bufs[0..n-1] (host views filled by the caller) in inst's device memory (upload), as one timed
 * piece: *t_s += its seconds, on the device timer when dev_timer and the backend has one, else the
 * host clock. A host-memory backend's upload is its own (cpu: nothing). Returns HB_OK or the first
 * error (upload's, or timer_end's). */
hb_status hb_exec_place(hb_instance *inst, hb_buf *const *bufs, int n, int dev_timer, double *t_s);

/* Fetch bufs[0..n-1] from inst's device memory into their host views (download), timed as
 * hb_exec_place. */
hb_status hb_exec_fetch(hb_instance *inst, hb_buf *const *bufs, int n, int dev_timer, double *t_s);

/* Set-up moves, untimed: b placed in (hb_exec_setup_place) or fetched from (hb_exec_setup_fetch)
 * inst's device memory, as hb_exec_place / hb_exec_fetch of one buffer whose seconds no phase keeps
 * (parameters and start inputs placed before the timed calls, an output fetched to be verified).
 * Returns the upload's or download's status. */
hb_status hb_exec_setup_place(hb_instance *inst, hb_buf *b);
hb_status hb_exec_setup_fetch(hb_instance *inst, hb_buf *b);

/* One launch of a captured graph (the backend's graph_launch; chain.c's layer as one graph) under the
 * device timer (the backend must have one): *dev the device's seconds from its start to its end,
 * *enq the host's seconds to launch it. Returns HB_OK or the first error (timer_begin's, the
 * launch's, timer_end's; HB_EINVAL where the backend has no device timer). */
hb_status hb_exec_graph(hb_instance *inst, void *graph, double *dev, double *enq);

/* Step s launched once, untimed and with no start state (its pre case first where set, then run,
 * which waits for the device): the unit of work of a window another clock times (the energy window,
 * sample_facts.c). Returns the run's status. */
hb_status hb_exec_launch(const hb_exec_step *s);

/* Run step s once: unless HB_EXEC_NO_PREP, first its start state (prepare.h: hot, or cold when cold
 * is set; *prep_s gets its wall seconds, 0 otherwise; prep_s may be NULL with HB_EXEC_NO_PREP), then
 * the run (run_async with HB_EXEC_ASYNC where the backend has it, else run) between the host clock and,
 * with HB_EXEC_DEV_TIMER where the backend has one, the device timer (a timer that does not begin leaves
 * the host clock's seconds). *t_s gets the device's seconds
 * when so timed (and non-negative), else the host's; *host_s (may be NULL) the host's. Returns HB_OK or
 * the first error (the preparation's, the run's, the timer's). */
hb_status hb_exec_run(const hb_exec_step *s, int cold, unsigned flags, double *t_s, double *host_s, double *prep_s);

/* Enqueue s[0..n-1] back to back, every step on s[0].inst (run_async where the backend has it, else
 * run), with no hot rule between them: a segment as an executor launches it. The chain's layer as one
 * stream (chain.c) and a replayed plan on one device (replay.c) are both this call, so that the two
 * are compared on the same host work per step. With dev non-NULL (the backend must have a device
 * timer) one device timer is around the whole: *dev the device's seconds from the first step's start
 * to the last one's end (the launch gaps the device waits through are in it), which also waits for
 * them; with dev NULL nothing waits (a graph capture records them). *enq (may be NULL) the host's
 * seconds to enqueue them, step_s[i] (step_s may be NULL) step i's share of it. Returns HB_OK or the
 * first error (the steps after it are not launched); *failed (may be NULL) the failing step's index,
 * else -1. */
hb_status hb_exec_enqueue(const hb_exec_step *s, int n, double *dev, double *enq, double *step_s, int *failed);

#endif
