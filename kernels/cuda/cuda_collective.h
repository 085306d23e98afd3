/*
 * cuda_collective.h - the CUDA plugin's collectives (cuda_collective.cu, docs/collectives.md) and
 * energy counter (cuda_energy.cu, docs/energy.md), and the data paths (cuda_coll_paths.cu). Private to
 * kernels/cuda; the plugin's hooks (cuda_backend.cu, cuda_ceilings.cu, cuda_info.cu) call these.
 *
 * NCCL is loaded with dlopen("libnccl.so.2") on first use (not linked: the plugin loads on machines
 * without it, and the GPU bundle carries no libnccl: the device has its own). One communicator per
 * process: this process is rank hb_launch_rank() of hb_launch_ranks() (core/launch.h) and drives the
 * GPU local_rank mod (visible GPUs); the other instances of the process answer "skipped" for
 * collectives. The communicator is made with ncclCommInitRank from a ncclUniqueId that rank 0 creates
 * (one rank: itself; several: from HB_NCCL_ID, 256 hex digits, or through the file HB_NCCL_ID_FILE,
 * which rank 0 writes and the others wait up to 120 s for).
 */
#ifndef HB_CUDA_COLLECTIVE_H
#define HB_CUDA_COLLECTIVE_H
#include "cuda/cuda_internal.h"

/* 1 for all_reduce, all_gather, reduce_scatter, broadcast. */
static inline int hbc_is_coll(hb_op op)
{
    return op == HB_OP_ALL_REDUCE || op == HB_OP_ALL_GATHER || op == HB_OP_REDUCE_SCATTER || op == HB_OP_BROADCAST;
}

/* supports() for a collective case cs on instance c: HB_OK, or HB_ESKIP with the reason (no NCCL,
 * ranks of the case differ from the launch's, this instance is not the rank's GPU, a path or
 * in-place variant not offered). Allocates nothing on the device. */
hb_status hbc_coll_supports(hbc_ctx *c, const hb_case *cs, char *reason, size_t len);
/* The implementation of collective case cs (case_info's "impl"), by its shape's path: "host-staged"
 * (path=host), "cuda-peer" (path=peer) or "nccl". One statement for the run and impl_of. */
const char *hbc_coll_impl(const hb_case *cs);
/* Run collective cs on c->stream: input in (device, hb_op_input_elems elements), output out.
 * mark(c) records the device timer's start (launch-gated) and is called after the in-place copy and
 * before the collective. Enqueues and, for the host path, synchronizes; the caller records the stop
 * event and synchronizes. Writes the implementation into c->last_impl. HB_EDEVICE on NCCL errors
 * (logged with the call text, file and line). */
hb_status hbc_coll_run(hbc_ctx *c, const hb_case *cs, const void *in, void *out, hb_status (*mark)(hbc_ctx *));
/* Graph capture (cuda_graph.cu) of steps that may hold collectives. hbc_coll_capture(1) when a
 * capture opens on the instance's stream, (0) when it ends: while it is open the watchdog does not
 * query the stream (a query of a capturing stream invalidates the capture) and NCCL calls are counted,
 * not noted as outstanding; hbc_coll_captured() is that count. hbc_coll_graph_launch(c): before each
 * launch of a graph that holds collectives, notes them for the watchdog (which then aborts a hung
 * launch as it does a hung call); HB_EDEVICE when the communicator was aborted. */
void hbc_coll_capture(int on);
int hbc_coll_captured(void);
hb_status hbc_coll_graph_launch(hbc_ctx *c);
/* coll_vote hook: 1 when any rank's stop is 1 (ncclAllReduce, ncclMax, one int), else 0. */
int hbc_coll_vote(hb_instance *inst, const hb_case *cs, int stop);
/* Ceilings of the collectives: p2p_gbps_<i>_<j> (cudaMemcpyPeer, 256 MiB, per ordered pair of
 * visible GPUs with peer access) appended to out[*n..max-1]. None with one GPU. */
void hbc_coll_ceilings(hbc_ctx *c, hb_ceiling *out, int max, int *n);
/* describe(): append ,"nccl_version":...,"launch":{...},"gpu_count":N,"topology":"<nvidia-smi topo
 * -m>" into the JSON object text buf (before its final '}'). */
void hbc_coll_describe(hbc_ctx *c, char *buf, size_t len);
/* case_info(): append the collective's facts (path, in_place, ranks, nccl version) to the JSON
 * text being built at buf + *j. */
void hbc_coll_case_info(const hb_case *cs, char *buf, size_t len, size_t *j);

/* Every rank of the communicator reaches this point: an all-reduce (max) of one int on c->stream;
 * with host_sync the host then waits for it (the host-staged path reads what the others wrote). The
 * stream order makes it a barrier for the device work before and after it. HB_EDEVICE when the
 * communicator is gone. */
hb_status hbc_coll_barrier(hbc_ctx *c, int host_sync);
/* A timed call over several ranks (the device timer armed and started by mark): a barrier, then the
 * start event recorded again after it, so that the device time starts when every rank has reached
 * the collective. A single call's time otherwise includes the skew between the ranks' launches (the
 * first rank's kernel waits for the last): on 2 H200s all_reduce 1-16 MiB read 0.4-0.9x of
 * nccl-tests' busbw, whose figure is an average over 50 back-to-back calls, where the skew is paid
 * once. The barrier's own time is not counted. With one rank, or untimed: nothing. */
hb_status hbc_coll_aligned_start(hbc_ctx *c);
/* All-gather of `bytes` host bytes per rank (at most 16 KiB in all): all[q * bytes ..] = rank q's
 * `mine`. Through NCCL and a device scratch buffer; synchronizes. Used for the CUDA IPC handles. */
hb_status hbc_coll_allgather_host(hbc_ctx *c, const void *mine, void *all, size_t bytes);

/* The data paths (cuda_coll_paths.cu; docs/collectives.md "Data paths"). *_prepare: once per case
 * and buffer, before the device timer starts (several ranks: map the other ranks' inputs through
 * CUDA IPC; set up the shared host staging buffer); HB_OK with one rank. run_*: the path itself on
 * c->stream, in (device, the op's input) to out (device, its output); the host path synchronizes in
 * the middle (it releases the launch gate first). */
hb_status hbc_coll_peer_prepare(hbc_ctx *c, const hb_case *cs, const void *in);
hb_status hbc_coll_run_peer(hbc_ctx *c, const hb_case *cs, const void *in, void *out);
hb_status hbc_coll_host_prepare(hbc_ctx *c, const hb_case *cs);
hb_status hbc_coll_run_host(hbc_ctx *c, const hb_case *cs, const void *in, void *out);

/* energy_read hook (cuda_energy.cu): NVML's nvmlDeviceGetTotalEnergyConsumption for the instance's
 * GPU, mJ since the driver loaded, returned in joules. HB_ESKIP with the reason when NVML or the
 * counter is not available (Volta and later have it). */
hb_status hbc_energy_read(hb_instance *inst, double *joules, char *why, size_t whylen);
#endif
