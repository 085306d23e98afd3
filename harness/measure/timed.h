/*
 * timed.h - one timed piece of work on a backend instance (timed.c): the host clock (hb_now,
 * CLOCK_MONOTONIC) around it and, where asked and the backend has them, the device timer (the
 * backend's timer_begin / timer_end: the device's seconds from the work's start to its end). The one
 * place the measuring code reads the two clocks of a piece of work: the executor (exec.c), the hot
 * rule's settle runs (prepare.c) and a chain's graph launch (chain.c) all time through it.
 */
#ifndef HB_MEASURE_TIMED_H
#define HB_MEASURE_TIMED_H
#include "core/backend.h"

/* 1 when inst's backend has device timers (timer_begin and timer_end), else 0. */
int hb_timed_has_timer(const hb_instance *inst);

/* Begins a timed piece: *t0 the host clock now (seconds, read before the device timer begins, so the
 * host's time includes the timer's own calls, as the timer agreement has always compared it); with dev_timer and a backend that has
 * device timers, the device timer begun, *dev_timed 1 when it began. Returns timer_begin's status
 * (HB_OK when no device timer was asked for or the backend has none): a timer that does not begin
 * leaves *dev_timed 0, and the piece is timed on the host clock. */
hb_status hb_timed_begin(hb_instance *inst, int dev_timer, double *t0, int *dev_timed);

/* Ends it: *t_s the device's seconds where the device timer ran and answered a non-negative time,
 * else the host's since t0; *host_s (may be NULL) the host's. Returns timer_end's status (HB_OK
 * without a device timer). */
hb_status hb_timed_end(hb_instance *inst, int dev_timed, double t0, double *t_s, double *host_s);
#endif
