/*
 * plant.h - planted slowdowns, for testing the merge gate only (`make PLANT=1`; docs/compare.md
 * "Planted slowdowns"). Compiled to nothing unless HB_PLANT is defined, so a normal build has no
 * hook at all. With it, the environment variable HB_PLANT="OP:FACTOR,..." (an op name such as
 * "matmul" or a family such as "elementwise"; FACTOR in [1, 10], e.g. 1.10) makes every timed call
 * of those ops last FACTOR times as long: sample.c's call_once spins, inside its timed region, for
 * (FACTOR - 1) x the time the call took so far. The spin is real work (a dependent integer chain,
 * checked against the monotonic clock), not a number edited afterwards.
 * With HB_PLANT_WORK=1 as well the plant is the op's own work instead: inside its timed compute
 * phase, before the real call, the backend runs the op on a sub-problem of (FACTOR - 1) x its FLOPs
 * (hb_plant_sub_shape) on the same buffers, and the real call then rewrites the output, so the
 * result still verifies and time and instruction counts (`run --instructions`) both see the work;
 * where the host converts the data around the call (modes convert, and f32 with a device dtype other
 * than f32), (FACTOR - 1) of each input and of the output is converted again as well (the same
 * values), so that a call whose conversions outweigh the op is planted by the factor too.
 * On a device backend with the plant_delay hook (cuda) the compute phase is planted on the device:
 * behind every call of a named op, inside its device-timed region, a delay kernel spins for
 * (FACTOR - 1) x the op's last compute time (the delay kernel included), so a gate judging the
 * device-timed compute (`--metric compute`) sees the factor as it would see a slower kernel; the
 * call's total is then longer by that delay alone (no host spin), as with a slower kernel. The
 * delay kernel itself costs about 1.4 us behind an op (H200, 2026-11-27), more than 5% of the
 * smallest kernels: a device-side test therefore names the op in both builds, FACTOR 1 in BASE
 * (HB_PLANT=matmul:1 in the gate's environment, --cur-env HB_PLANT=matmul:1.05), so that both carry
 * the delay kernel and the factor applies to the op plus it.
 */
#ifndef HB_PLANT_H
#define HB_PLANT_H
#ifdef HB_PLANT
#include "core/hybench.h"
/* The factor planted for op: 0 when HB_PLANT does not name it, else its FACTOR (1 included: the
 * device-side delay kernel then runs with no delay). Parses HB_PLANT once per process; a malformed
 * entry is reported on stderr (naming the entry) and ignored. Announces the active plant once on
 * stderr. */
double hb_plant_factor(hb_op op);
/* 1 when HB_PLANT_WORK=1 was set with HB_PLANT (read once with it): the plant of op is real work of
 * the op itself (hb_plant_sub_shape), not the timed spin. HB_PLANT_WORK set to anything but 0 or 1
 * is reported on stderr and ignored. */
int hb_plant_is_work(hb_op op);
/* A sub-problem of op on shape full whose FLOPs (hb_op_flops) are nearest fraction x those of full
 * (fraction in (0, 1), e.g. 0.03 for a factor 1.03), found by shrinking one size field (n, m, k,
 * batch, c, h, w, oc, rows, cols, heads, seq, kv_seq, head_dim) by bisection, the field whose
 * nearest value misses the target by the smallest log ratio; the sub-problem must pass
 * hb_shape_normalize and have no input or output larger than full's, so it runs on full's buffers
 * (its output is garbage until the real call rewrites it). Writes *sub; 0, or -1 when no field
 * can shrink (e.g. every size field 1) or fraction is out of range. With a quantized dtype the
 * sub-problem keeps core/quant.h's block rule (hb_quant_blocks_whole: k a whole number of blocks), so
 * the planted call is one the backend runs. Pure; no allocation. */
int hb_plant_sub_shape(hb_op op, hb_dtype dtype, const hb_shape *full, double fraction, hb_shape *sub);
/* Busy work for `seconds` (returns at once for seconds <= 0). */
void hb_plant_spin(double seconds);
#endif
#endif
