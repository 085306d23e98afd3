/*
 * instr.h - the deterministic measure of a case on host-CPU code: the instructions its timed call
 * executes, counted by valgrind's callgrind (`hybench run --instructions N --callgrind-dir DIR` run
 * under `valgrind --tool=callgrind --collect-atstart=no --trace-children=yes
 * --callgrind-out-file=DIR/cg.%p`; docs/compare.md, "Instruction counts"). Only the N calls are
 * counted: set-up, the reference, verification and warm-up run with collection off. sample.c's.
 */
#ifndef HB_INSTR_H
#define HB_INSTR_H
#include "core/hybench.h"
#include <jansson.h>
#include <stddef.h>

/* One timed call of the case (sample.c's call_once through its context). */
typedef hb_status (*hb_instr_call)(void *arg);

/* Count the events of ncalls (>= 1) calls of call(arg): CALLGRIND_ZERO_STATS, collection toggled on
 * (CALLGRIND_TOGGLE_COLLECT) around the calls only, then CALLGRIND_DUMP_STATS_AT; the dump, callgrind's
 * part k of this process (DIR/cg.PID.k, k counted here from 1 per process, as callgrind numbers them),
 * is read back by its documented "events:" and "summary:" lines (callgrind's format manual) and then
 * removed. Sets rec's "instructions": {"tool": "callgrind", "calls": ncalls, "per_call": Ir / ncalls,
 * "events": {EVENT: total / ncalls, ...}} (per call, in instructions or the event's own unit, e.g.
 * simulated cache misses with --cache-sim=yes). Errors: HB_EINVAL with the reason in err (size
 * errlen) when the process is not under valgrind, was built without <valgrind/callgrind.h>, or the
 * dump is missing or has no Ir (not callgrind); a call's own error status is returned as it is. */
/* Inside hb_instr_count's calls: collection off (pause 1) or on again (pause 0) around what the
 * timed call does that its time does not count either (the untimed settle runs of prepare.h, whose
 * number depends on timing: counted, they moved a case's count by up to 50% between processes).
 * Must come in pairs; does nothing outside hb_instr_count. */
void hb_instr_pause(int pause);

hb_status hb_instr_count(hb_instr_call call, void *arg, int ncalls, const char *dir, json_t *rec, char *err,
                         size_t errlen);
#endif
