/*
 * lockstep.h - a run that takes turns with another build's run (`hybench ab`, docs/compare.md,
 * "Lockstep").
 *
 * On a shared machine the time of a case moves by 10-25% over seconds, at times 1.4-1.8x (the
 * 2-vCPU VM: co-tenants, the host's scheduling of the vCPUs), while the samples of one case, taken
 * within a few tens of milliseconds, agree to 1-2% (measured in docs/compare.md). Two builds run one after the other see different host states; two
 * builds that take turns case by case see nearly the same. `hybench ab` therefore starts both
 * builds' runs of a round at once and hands a token to one at a time: a run computes only while it
 * holds the token and gives it back before each case group, so the two builds measure the same
 * case within a fraction of a second of each other, and never at the same time.
 *
 * Protocol: the environment variable HB_LOCKSTEP="RFD,WFD" names two inherited pipe ends. The run
 * waits for one byte on RFD before doing any work (hb_lockstep_begin); at every hand-back point
 * (hb_lockstep_yield) it writes one byte to WFD and waits for the next byte on RFD. The backend
 * processes the run forks or re-executes inherit both ends and the token: the parent waits for its
 * child, so only one process of the run's tree works at a time. When the run ends, the write ends
 * close and the controller reads end-of-file. Without HB_LOCKSTEP, or when a pipe fails (the
 * controller went away), both calls return at once and the run goes on alone.
 */
#ifndef HB_LOCKSTEP_H
#define HB_LOCKSTEP_H

/* First call in a run's top process (not in a backend child, which inherits the token): parses
 * HB_LOCKSTEP and blocks until the controller hands the token over. A malformed HB_LOCKSTEP is
 * reported on stderr (naming the variable) and ignored. No return value: a run never fails for it. */
void hb_lockstep_begin(void);

/* A hand-back point (before each case group): gives the token back and blocks until it comes
 * again. Returns at once when lockstep is off. A write to a closed pipe turns lockstep off: the
 * caller must ignore SIGPIPE (hb_lockstep_begin does). */
void hb_lockstep_yield(void);

/* ---- serving rounds (`run --serve-rounds N`, measure/serve.h) ----
 * A served run prepares every case once and then measures them in rounds. It marks two moments
 * with a byte of its own instead of 'y': HB_LOCKSTEP_PREPARED once every case is set up, and
 * HB_LOCKSTEP_ROUND after each round (its round file complete). The byte the token comes back
 * with after a mark says what comes next: HB_LOCKSTEP_GO (the next round, every case),
 * HB_LOCKSTEP_CASES (the next round, only the keys of the --serve-cases file, which the controller
 * rewrote), HB_LOCKSTEP_QUIT (no more rounds: the run ends). Inside a round the hand-backs are
 * hb_lockstep_yield's 'y', the token coming back with 'g'. */
#define HB_LOCKSTEP_PREPARED 'P'
#define HB_LOCKSTEP_ROUND 'R'
#define HB_LOCKSTEP_GO 'g'
#define HB_LOCKSTEP_CASES 'c'
#define HB_LOCKSTEP_QUIT 'q'

/* Hands the token back with mark m (HB_LOCKSTEP_PREPARED or HB_LOCKSTEP_ROUND) and waits for it;
 * returns the byte it came back with (HB_LOCKSTEP_GO when lockstep is off or the controller went
 * away: a served run then goes on with its rounds alone). */
int hb_lockstep_mark(char m);

/* 1 when this process takes turns with a controller (HB_LOCKSTEP parsed and its pipes working). */
int hb_lockstep_on(void);

#endif
