/*
 * cuda_coll_paths.cu - the data paths a plan would take instead of NCCL (cuda_collective.h,
 * docs/collectives.md "Data paths"), with one rank or several:
 *   host-staged (path=1): each rank's input crosses to pinned host memory, the CPU combines the
 *     ranks' contributions (sum in f32 for the reductions, placement for all_gather and broadcast),
 *     the result crosses back. Several ranks share one host buffer (POSIX shared memory, registered
 *     with cudaHostRegister): every rank writes its slot, each reduces its 1/R share of an
 *     all_reduce's output, and every rank copies the whole result up.
 *   peer copies (path=2): the result's blocks are read from the GPU that holds them. Several ranks
 *     map each other's input buffers (CUDA IPC handles, exchanged once per case through NCCL) and
 *     read them directly over NVLink or PCIe: a copy per block for all_gather and broadcast, a
 *     kernel that sums the ranks' buffers for all_reduce and reduce_scatter.
 * Between ranks the paths synchronize through hbc_coll_barrier (an all-reduce of one int, which is
 * what any implementation of these paths must pay: a rank may read another's input only once it is
 * written, and overwrite its own only once every rank has read it); the barriers are timed.
 */
#include "cuda/cuda_collective.h"
#include "core/launch.h"
#include "core/rendezvous.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HBC_MAX_LOCAL_RANKS 16

static float ld(const void *p, size_t i, hb_dtype d)
{
    if (d == HB_F16) return __half2float(((const __half *)p)[i]);
    if (d == HB_BF16) return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    return ((const float *)p)[i];
}
static void st(void *p, size_t i, hb_dtype d, float v)
{
    if (d == HB_F16) ((__half *)p)[i] = __float2half(v);
    else if (d == HB_BF16) ((__nv_bfloat16 *)p)[i] = __float2bfloat16(v);
    else ((float *)p)[i] = v;
}

/* One rank: pinned staging of its own. */
static void *stage_in, *stage_out;
static size_t stage_in_bytes, stage_out_bytes;

static hb_status grow_pinned(hbc_ctx *c, void **p, size_t *have, size_t bytes)
{
    if (*p && *have >= bytes) return HB_OK;
    if (*p) { cudaFreeHost(*p); *p = nullptr; *have = 0; }
    HBC_TRY(HBC_RT(c, cudaHostAlloc(p, bytes, cudaHostAllocDefault)));
    *have = bytes;
    return HB_OK;
}

/* The state of the case whose cross-process resources are set up (several ranks). */
static struct {
    long long seq;
    const void *in;
    int ranks, rank;
    void *peer_in[HBC_MAX_LOCAL_RANKS]; /* every rank's input in this process's address space (own: in) */
    int opened;                         /* peer_in[q != rank] came from cudaIpcOpenMemHandle */
    void *shm;                          /* host path: the shared staging buffer (mapped), registered */
    size_t shm_bytes;
    char shm_name[96];
} xp;

static void xp_release(void)
{
    if (xp.opened)
        for (int q = 0; q < xp.ranks; q++)
            if (q != xp.rank && xp.peer_in[q]) cudaIpcCloseMemHandle(xp.peer_in[q]);
    if (xp.shm) {
        cudaHostUnregister(xp.shm);
        munmap(xp.shm, xp.shm_bytes);
        shm_unlink(xp.shm_name); /* every rank unlinks; the first one succeeds */
    }
    (void)cudaGetLastError();
    memset(&xp, 0, sizeof xp);
}

/* Several ranks, peer path: map every rank's input `in` of case cs into this process (IPC handles
 * all-gathered through NCCL), once per case and buffer. */
static hb_status xp_map_inputs(hbc_ctx *c, const hb_case *cs, const void *in)
{
    if (xp.seq == cs->seq && xp.in == in && xp.opened) return HB_OK;
    xp_release();
    int R = hb_launch_ranks(), r = hb_launch_rank();
    if (R > HBC_MAX_LOCAL_RANKS) return HB_EINVAL;
    cudaIpcMemHandle_t mine, all[HBC_MAX_LOCAL_RANKS];
    HBC_TRY(HBC_RT(c, cudaIpcGetMemHandle(&mine, (void *)in)));
    HBC_TRY(hbc_coll_allgather_host(c, &mine, all, sizeof mine));
    xp.seq = cs->seq;
    xp.in = in;
    xp.ranks = R;
    xp.rank = r;
    xp.opened = 1;
    for (int q = 0; q < R; q++) {
        if (q == r) { xp.peer_in[q] = (void *)in; continue; }
        hb_status s = HBC_RT(c, cudaIpcOpenMemHandle(&xp.peer_in[q], all[q], cudaIpcMemLazyEnablePeerAccess));
        if (s != HB_OK) {
            fprintf(stderr, "hb_cuda: rank %d: cannot map rank %d's buffer (CUDA IPC needs the ranks on one machine)\n", r, q);
            xp.peer_in[q] = nullptr;
            return s;
        }
    }
    return HB_OK;
}

/* Several ranks, host path: the shared staging buffer of case cs: R input slots of in_bytes, then
 * the output of out_bytes. Named after the rendezvous directory and the case (every rank computes
 * the same name), created by whichever rank comes first. */
static hb_status xp_shared_host(hbc_ctx *c, const hb_case *cs, size_t in_bytes, size_t out_bytes)
{
    int R = hb_launch_ranks(), r = hb_launch_rank();
    size_t bytes = (size_t)R * in_bytes + out_bytes;
    if (xp.seq == cs->seq && xp.shm && xp.shm_bytes == bytes) return HB_OK;
    xp_release();
    char dir[1024] = "";
    if (hb_rdv_dir(dir, sizeof dir) != 0) snprintf(dir, sizeof dir, "%s", "nodir");
    unsigned long h = 5381;
    for (const char *p = dir; *p; p++) h = h * 33 + (unsigned char)*p;
    xp.seq = cs->seq;
    xp.ranks = R;
    xp.rank = r;
    snprintf(xp.shm_name, sizeof xp.shm_name, "/hb-%lx-%lld", h, cs->seq);
    int fd = shm_open(xp.shm_name, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
        fprintf(stderr, "hb_cuda: shared host buffer %s (%zu bytes): %s\n", xp.shm_name, bytes, strerror(errno));
        if (fd >= 0) close(fd);
        return HB_ENOMEM;
    }
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return HB_ENOMEM;
    xp.shm = p;
    xp.shm_bytes = bytes;
    hb_status s = HBC_RT(c, cudaHostRegister(p, bytes, cudaHostRegisterPortable));
    if (s != HB_OK) { munmap(p, bytes); xp.shm = nullptr; return s; }
    return HB_OK;
}

/* Sum of R buffers (each element loaded as f32, summed in f32, stored in the dtype): out[i] =
 * sum_q p[q][off + i], i < n. */
struct ptrs { const void *p[HBC_MAX_LOCAL_RANKS]; };
template <class T> __device__ __forceinline__ float to_f(T v) { return (float)v; }
template <> __device__ __forceinline__ float to_f<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_f<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> __device__ __forceinline__ T from_f(float v) { return (T)v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <class T> __global__ void k_sum_ranks(ptrs p, int R, size_t off, size_t n, T *out)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float acc = 0;
        for (int q = 0; q < R; q++) acc += to_f(((const T *)p.p[q])[off + i]);
        out[i] = from_f<T>(acc);
    }
}

static hb_status sum_ranks(hbc_ctx *c, hb_dtype d, size_t off, size_t n, void *out)
{
    ptrs p;
    memset(&p, 0, sizeof p);
    for (int q = 0; q < xp.ranks; q++) p.p[q] = xp.peer_in[q];
    int blocks = (int)((n + 255) / 256);
    /* a grid-stride loop: enough blocks to fill the device (16 per SM), not one per 256 elements */
    const int cap = 16 * (c->prop.multiProcessorCount > 0 ? c->prop.multiProcessorCount : 1);
    if (blocks > cap) blocks = cap;
    if (blocks < 1) blocks = 1;
    if (d == HB_F16) k_sum_ranks<__half><<<blocks, 256, 0, c->stream>>>(p, xp.ranks, off, n, (__half *)out);
    else if (d == HB_BF16) k_sum_ranks<__nv_bfloat16><<<blocks, 256, 0, c->stream>>>(p, xp.ranks, off, n, (__nv_bfloat16 *)out);
    else k_sum_ranks<float><<<blocks, 256, 0, c->stream>>>(p, xp.ranks, off, n, (float *)out);
    return HBC_RT(c, cudaGetLastError());
}

hb_status hbc_coll_peer_prepare(hbc_ctx *c, const hb_case *cs, const void *in)
{
    if (hb_launch_ranks() < 2) return HB_OK;
    return xp_map_inputs(c, cs, in);
}

hb_status hbc_coll_run_peer(hbc_ctx *c, const hb_case *cs, const void *in, void *out)
{
    const hb_shape *s = &cs->shape;
    const size_t es = hbc_esize(cs->dtype), n = (size_t)s->n;
    if (hb_launch_ranks() < 2) {
        /* one rank: every block is this GPU's own: one device-to-device copy through the peer API */
        const char *src = (const char *)in + (cs->op == HB_OP_REDUCE_SCATTER ? (size_t)s->rank * n * es : 0);
        return HBC_RT(c, cudaMemcpyPeerAsync(out, c->dev, src, c->dev, n * es, c->stream));
    }
    /* several ranks (inputs mapped by hbc_coll_peer_prepare before the timer started) */
    HBC_TRY(hbc_coll_barrier(c, 0)); /* every rank's input is written */
    /* timed: from here (every rank has arrived), as the NCCL path's hbc_coll_aligned_start */
    if (c->tarmed && c->tstarted) HBC_TRY(HBC_RT(c, cudaEventRecord(c->ev_begin, c->stream)));
    switch (cs->op) {
    case HB_OP_ALL_GATHER:
        for (int q = 0; q < xp.ranks; q++)
            HBC_TRY(HBC_RT(c, cudaMemcpyAsync((char *)out + (size_t)q * n * es, xp.peer_in[q], n * es, cudaMemcpyDefault, c->stream)));
        break;
    case HB_OP_BROADCAST:
        HBC_TRY(HBC_RT(c, cudaMemcpyAsync(out, xp.peer_in[0], n * es, cudaMemcpyDefault, c->stream)));
        break;
    case HB_OP_ALL_REDUCE: HBC_TRY(sum_ranks(c, cs->dtype, 0, n, out)); break;
    default: HBC_TRY(sum_ranks(c, cs->dtype, (size_t)xp.rank * n, n, out)); break; /* reduce_scatter */
    }
    return hbc_coll_barrier(c, 0); /* every rank has read the inputs: they may change again */
}

hb_status hbc_coll_run_host(hbc_ctx *c, const hb_case *cs, const void *in, void *out)
{
    const hb_shape *s = &cs->shape;
    const size_t es = hbc_esize(cs->dtype), n = (size_t)s->n, R = (size_t)s->ranks;
    const size_t in_el = cs->op == HB_OP_REDUCE_SCATTER ? n * R : n;
    const size_t out_el = cs->op == HB_OP_ALL_GATHER ? n * R : n;
    const hb_dtype d = cs->dtype;
    hbc_gate_release(c); /* the path synchronizes in the middle */
    if (R < 2) {
        HBC_TRY(grow_pinned(c, &stage_in, &stage_in_bytes, in_el * es));
        HBC_TRY(grow_pinned(c, &stage_out, &stage_out_bytes, out_el * es));
        HBC_TRY(HBC_RT(c, cudaMemcpyAsync(stage_in, in, in_el * es, cudaMemcpyDeviceToHost, c->stream)));
        HBC_TRY(HBC_RT(c, cudaStreamSynchronize(c->stream)));
        if (cs->op == HB_OP_ALL_REDUCE || cs->op == HB_OP_REDUCE_SCATTER) {
            const size_t off = cs->op == HB_OP_REDUCE_SCATTER ? (size_t)s->rank * n : 0;
            for (size_t i = 0; i < n; i++) st(stage_out, i, d, ld(stage_in, off + i, d));
        } else {
            memcpy(stage_out, stage_in, n * es); /* all_gather of one rank, broadcast from itself */
        }
        return HBC_RT(c, cudaMemcpyAsync(out, stage_out, out_el * es, cudaMemcpyHostToDevice, c->stream));
    }
    /* several ranks: slots[q] holds rank q's input; res the all_reduce's result */
    const size_t in_bytes = in_el * es;
    char *base = nullptr;
    /* the buffer was set up by hbc_coll_host_prepare before the timer started */
    if (!xp.shm || xp.seq != cs->seq) return HB_EINVAL;
    base = (char *)xp.shm;
    char *mine = base + (size_t)xp.rank * in_bytes, *res = base + R * in_bytes;
    HBC_TRY(HBC_RT(c, cudaMemcpyAsync(mine, in, in_bytes, cudaMemcpyDeviceToHost, c->stream)));
    HBC_TRY(hbc_coll_barrier(c, 1)); /* every slot is written (the barrier synchronizes the stream) */
    switch (cs->op) {
    case HB_OP_ALL_REDUCE: {
        /* this rank reduces its share of the result; then every rank copies the whole result up */
        size_t lo = n * (size_t)xp.rank / R, hi = n * (size_t)(xp.rank + 1) / R;
        for (size_t i = lo; i < hi; i++) {
            float acc = 0;
            for (size_t q = 0; q < R; q++) acc += ld(base + q * in_bytes, i, d);
            st(res, i, d, acc);
        }
        HBC_TRY(hbc_coll_barrier(c, 1));
        HBC_TRY(HBC_RT(c, cudaMemcpyAsync(out, res, n * es, cudaMemcpyHostToDevice, c->stream)));
        break;
    }
    case HB_OP_REDUCE_SCATTER: {
        /* this rank's block of the sum, reduced by this rank into its own block of res */
        char *part = res + (size_t)xp.rank * n * es;
        for (size_t i = 0; i < n; i++) {
            float acc = 0;
            for (size_t q = 0; q < R; q++) acc += ld(base + q * in_bytes, (size_t)xp.rank * n + i, d);
            st(part, i, d, acc);
        }
        HBC_TRY(HBC_RT(c, cudaMemcpyAsync(out, part, n * es, cudaMemcpyHostToDevice, c->stream)));
        break;
    }
    case HB_OP_ALL_GATHER:
        for (size_t q = 0; q < R; q++)
            HBC_TRY(HBC_RT(c, cudaMemcpyAsync((char *)out + q * n * es, base + q * in_bytes, n * es, cudaMemcpyHostToDevice, c->stream)));
        break;
    default: /* broadcast: rank 0's slot */
        HBC_TRY(HBC_RT(c, cudaMemcpyAsync(out, base, n * es, cudaMemcpyHostToDevice, c->stream)));
        break;
    }
    return hbc_coll_barrier(c, 1); /* every rank has read the slots: the next call may write them */
}

hb_status hbc_coll_host_prepare(hbc_ctx *c, const hb_case *cs)
{
    const hb_shape *s = &cs->shape;
    if (s->ranks < 2) return HB_OK;
    const size_t es = hbc_esize(cs->dtype), n = (size_t)s->n, R = (size_t)s->ranks;
    const size_t in_el = cs->op == HB_OP_REDUCE_SCATTER ? n * R : n;
    /* reduce_scatter keeps each rank's block apart: R blocks of n after the slots */
    const size_t res_el = cs->op == HB_OP_REDUCE_SCATTER ? n * R : n;
    return xp_shared_host(c, cs, in_el * es, res_el * es);
}
