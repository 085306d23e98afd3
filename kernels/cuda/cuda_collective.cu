/*
 * cuda_collective.cu - collectives on the CUDA backend (cuda_collective.h, docs/collectives.md):
 * NCCL loaded with dlopen, one communicator per process joined through NCCL's rendezvous
 * (ncclGetUniqueId + ncclCommInitRank), and the alternative data paths the plan would take instead:
 * host-staged (D2H, reduce on the CPU, H2D) and peer copies (cudaMemcpyPeer); the peer-to-peer
 * ceilings and the topology for describe().
 *
 * Several ranks: each collective case begins with the ranks' agreement (core/rendezvous.h, made in
 * supports): run it, skip it on every rank (one rank cannot run it, or one did not come), or make a
 * new communicator first (after a rank's process was restarted or a communicator was aborted). The
 * communicator is non-blocking (ncclCommInitRankConfig, blocking = 0), and a watchdog thread aborts
 * it (ncclCommAbort) when the case's stream has made no progress for HB_COLL_TIMEOUT seconds while
 * nothing new was enqueued: a rank that died inside a case then costs the others that case, not the
 * run.
 */
#include "cuda/cuda_collective.h"
#include "core/launch.h"
#include "core/rendezvous.h"
#include <pthread.h>
#if __has_include(<nccl.h>)
#include <nccl.h>
#else
/* No nccl.h on this build machine: NCCL is only ever dlopened, so the few types of its stable C ABI
 * that the plugin uses are declared here, with the values of nccl.h (NCCL 2.x). */
#define NCCL_UNIQUE_ID_BYTES 128
typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;
typedef struct ncclComm *ncclComm_t;
typedef enum { ncclSuccess = 0, ncclInProgress = 7 } ncclResult_t;
typedef enum { ncclSum = 0, ncclMax = 2 } ncclRedOp_t;
typedef enum { ncclInt32 = 2, ncclFloat16 = 6, ncclFloat32 = 7, ncclBfloat16 = 9 } ncclDataType_t;
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ NCCL via dlopen */

struct nccl_api {
    void *lib;
    int version;
    char why[200];
    ncclResult_t (*get_version)(int *);
    ncclResult_t (*get_unique_id)(ncclUniqueId *);
    ncclResult_t (*comm_init_rank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*comm_destroy)(ncclComm_t);
    ncclResult_t (*comm_abort)(ncclComm_t);                 /* NULL before NCCL 2.4 */
    ncclResult_t (*comm_async_error)(ncclComm_t, ncclResult_t *); /* NULL before NCCL 2.4 */
#if __has_include(<nccl.h>)
    ncclResult_t (*comm_init_config)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *); /* NULL before 2.14 */
#endif
    const char *(*error_string)(ncclResult_t);
    ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*all_gather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*reduce_scatter)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
};

/* The process's communicator (one per process: one rank per GPU). */
struct coll_state {
    int tried;                 /* dlopen attempted */
    nccl_api api;
    int comm_ok, comm_failed;  /* communicator made / its creation failed (why in api.why) */
    int dev;                   /* the GPU it lives on */
    int rank, ranks;
    ncclComm_t comm;
    int *vote_d, *vote_h;      /* one int on the device and pinned on the host */
    char *xbuf;                /* device scratch of hbc_coll_allgather_host */
    /* several ranks (core/rendezvous.h) */
    int rdv;                   /* 1: the ranks agree per case through the files in rdv_dir */
    char rdv_dir[1024];
    long long token;           /* the case seq at which the communicator was made; 0: none */
    long long last_seq;        /* the case whose agreement is cached below */
    hb_status last_st;
    char last_reason[400];
    /* the watchdog */
    pthread_t wd;
    int wd_started;
    cudaStream_t stream;       /* the stream the collectives are enqueued on */
    double last_enqueue;       /* monotonic seconds of the last NCCL call; 0: nothing outstanding */
    double timeout_s;          /* HB_COLL_TIMEOUT, or half of --case-timeout (at most 60 s) */
    int aborted;               /* the watchdog aborted the communicator (the case fails; the next rebuilds) */
    int capturing;             /* a graph capture is open on the stream (hbc_coll_capture): no query of it */
    int captured;              /* NCCL calls recorded by the open capture */
};
static coll_state g;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER; /* guards comm against the watchdog's abort */

template <class F> static bool sym(void *lib, const char *name, F *out)
{
    *out = (F)dlsym(lib, name);
    return *out != nullptr;
}

static nccl_api *api_load(void)
{
    if (g.tried) return g.api.lib ? &g.api : nullptr;
    g.tried = 1;
    const char *name = hbc_cfg()->nccl_lib;
    void *lib = dlopen(name && *name ? name : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(g.api.why, sizeof g.api.why, "NCCL not found: dlopen(%s) failed (install libnccl2, or set HB_NCCL_LIB)",
                 name && *name ? name : "libnccl.so.2");
        return nullptr;
    }
    nccl_api *a = &g.api;
    bool ok = sym(lib, "ncclGetVersion", &a->get_version) && sym(lib, "ncclGetUniqueId", &a->get_unique_id) &&
              sym(lib, "ncclCommInitRank", &a->comm_init_rank) && sym(lib, "ncclCommDestroy", &a->comm_destroy) &&
              sym(lib, "ncclGetErrorString", &a->error_string) && sym(lib, "ncclAllReduce", &a->all_reduce) &&
              sym(lib, "ncclAllGather", &a->all_gather) && sym(lib, "ncclReduceScatter", &a->reduce_scatter) &&
              sym(lib, "ncclBroadcast", &a->broadcast);
    if (ok) { /* optional: the failure handling of several ranks */
        if (!sym(lib, "ncclCommAbort", &a->comm_abort)) a->comm_abort = nullptr;
        if (!sym(lib, "ncclCommGetAsyncError", &a->comm_async_error)) a->comm_async_error = nullptr;
#if __has_include(<nccl.h>)
        if (!sym(lib, "ncclCommInitRankConfig", &a->comm_init_config)) a->comm_init_config = nullptr;
#endif
    }
    if (!ok || a->get_version(&a->version) != ncclSuccess) {
        snprintf(a->why, sizeof a->why, "libnccl.so.2 lacks the NCCL 2 API (ncclGetVersion, ncclCommInitRank, ...)");
        dlclose(lib);
        return nullptr;
    }
    a->lib = lib;
    return a;
}

static double mono_s(void) { return hb_rdv_now_(); }

/* A non-blocking communicator's call may return ncclInProgress: wait for it to finish (its state
 * through ncclCommGetAsyncError) up to the watchdog's timeout. */
static ncclResult_t nccl_settle(ncclResult_t r)
{
    if (r != ncclInProgress || !g.api.comm_async_error || !g.comm) return r;
    double t0 = mono_s();
    while (r == ncclInProgress) {
        if (g.api.comm_async_error(g.comm, &r) != ncclSuccess) break;
        if (r == ncclInProgress) {
            double w = mono_s() - t0;
            if (w > g.timeout_s) break;
            /* spin for the first millisecond: a sleep costs 50-150 us of wake-up on these hosts, and a
             * collective's enqueue is usually done within microseconds; sleep only when it is not */
            if (w > 1e-3) usleep(100);
        }
    }
    return r;
}

static hb_status nccl_check(ncclResult_t r, const char *what, const char *file, int line)
{
    r = nccl_settle(r);
    if (r == ncclSuccess) return HB_OK;
    fprintf(stderr, "hb_cuda: %s failed: %s (%s:%d)\n", what, g.api.error_string ? g.api.error_string(r) : "?", file, line);
    return HB_EDEVICE;
}
#define HBC_NCCL(call) nccl_check((call), #call, __FILE__, __LINE__)

/* The GPU (device index among the visible ones) that this process's rank drives. */
static int rank_device(void)
{
    int nd = 0;
    if (cudaGetDeviceCount(&nd) != cudaSuccess || nd < 1) { (void)cudaGetLastError(); return 0; }
    return hb_launch_local_rank() % nd;
}

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}
static bool id_from_hex(const char *s, ncclUniqueId *id)
{
    if (strlen(s) < 2 * NCCL_UNIQUE_ID_BYTES) return false;
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++) {
        int h = hexval(s[2 * i]), l = hexval(s[2 * i + 1]);
        if (h < 0 || l < 0) return false;
        id->internal[i] = (char)(h * 16 + l);
    }
    return true;
}
static void id_to_hex(const ncclUniqueId *id, char *s)
{
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++) sprintf(s + 2 * i, "%02x", (unsigned char)id->internal[i]);
}

/* The rendezvous: the unique id that every rank passes to ncclCommInitRank. */
static hb_status get_unique_id(int rank, int ranks, ncclUniqueId *id)
{
    const char *env = getenv("HB_NCCL_ID"), *file = getenv("HB_NCCL_ID_FILE");
    if (env && *env) {
        if (!id_from_hex(env, id)) { snprintf(g.api.why, sizeof g.api.why, "HB_NCCL_ID is not %d hex digits", 2 * NCCL_UNIQUE_ID_BYTES); return HB_EINVAL; }
        return HB_OK;
    }
    if (ranks == 1) return HBC_NCCL(g.api.get_unique_id(id));
    if (!file || !*file) {
        snprintf(g.api.why, sizeof g.api.why, "%d ranks need a rendezvous: set HB_NCCL_ID_FILE (a path every rank sees) or HB_NCCL_ID", ranks);
        return HB_EINVAL;
    }
    char hex[2 * NCCL_UNIQUE_ID_BYTES + 2];
    if (rank == 0) {
        HBC_TRY(HBC_NCCL(g.api.get_unique_id(id)));
        id_to_hex(id, hex);
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%s.tmp.%d", file, (int)getpid());
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%s\n", hex) < 0 || fclose(f) != 0 || rename(tmp, file) != 0) {
            snprintf(g.api.why, sizeof g.api.why, "cannot write HB_NCCL_ID_FILE %.120s", file);
            return HB_EDEVICE;
        }
        return HB_OK;
    }
    for (int waited_ms = 0; waited_ms < 120000; waited_ms += 50) {
        FILE *f = fopen(file, "r");
        if (f) {
            bool ok = fgets(hex, sizeof hex, f) && id_from_hex(hex, id);
            fclose(f);
            if (ok) return HB_OK;
        }
        usleep(50000);
    }
    snprintf(g.api.why, sizeof g.api.why, "rank %d waited 120 s for rank 0 to write HB_NCCL_ID_FILE %.120s", rank, file);
    return HB_EDEVICE;
}

/* How long a collective may make no progress before the watchdog aborts the communicator, and how
 * long a non-blocking call may stay in progress: HB_COLL_TIMEOUT seconds, else half of
 * --case-timeout (hb_config.case_timeout_s, from the run's option), between 1 and 60 s. */
/* --case-timeout in seconds (hb_config.case_timeout_s, from the run's option), or 0 when unset. */
static double case_timeout(void)
{
    return hbc_cfg()->case_timeout_s > 0 ? hbc_cfg()->case_timeout_s : 0;
}

static double coll_timeout(void)
{
    const char *e = hbc_cfg()->coll_timeout;
    if (e && atof(e) > 0) return atof(e);
    double t = case_timeout() > 0 ? case_timeout() / 2 : 60;
    return t > 60 ? 60 : t < 1 ? 1 : t;
}

/* The watchdog: every 100 ms, when a collective was enqueued and the stream is still busy although
 * nothing was enqueued for timeout_s, the communicator is aborted (ncclCommAbort ends its kernels,
 * so the host's wait on the stream returns). The case then fails on this rank; the next case's
 * agreement makes a new communicator. */
static void *watchdog(void *)
{
    cudaSetDevice(g.dev);
    for (;;) {
        usleep(100000);
        pthread_mutex_lock(&g_mu);
        /* a capturing stream must not be queried (the query would invalidate the capture) */
        if (g.comm_ok && g.last_enqueue > 0 && g.stream && !g.capturing) {
            cudaError_t q = cudaStreamQuery(g.stream);
            if (q == cudaSuccess) {
                g.last_enqueue = 0; /* everything enqueued has finished */
            } else if (q == cudaErrorNotReady && mono_s() - g.last_enqueue > g.timeout_s) {
                fprintf(stderr, "hb_cuda: rank %d of %d: a collective made no progress for %.0f s (another rank left the case): "
                        "aborting the NCCL communicator\n", g.rank, g.ranks, g.timeout_s);
                if (g.api.comm_abort) g.api.comm_abort(g.comm);
                g.comm = nullptr;
                g.comm_ok = 0;
                g.aborted = 1;
                g.token = 0;
                g.last_enqueue = 0;
            }
        }
        pthread_mutex_unlock(&g_mu);
    }
    return nullptr;
}

/* Before each NCCL call: HB_EDEVICE when the watchdog aborted the communicator, else notes the call
 * for the watchdog. */
static hb_status enqueue_begin(hbc_ctx *c)
{
    pthread_mutex_lock(&g_mu);
    int ok = g.comm_ok;
    if (ok && g.capturing) {
        g.captured++; /* recorded into a graph, not run: the graph's launch notes it (hbc_coll_graph_launch) */
    } else if (ok) {
        g.stream = c->stream;
        g.last_enqueue = mono_s();
    }
    pthread_mutex_unlock(&g_mu);
    if (!ok) {
        fprintf(stderr, "hb_cuda: rank %d: the NCCL communicator was aborted (a rank left a collective): this case fails\n", g.rank);
        return HB_EDEVICE;
    }
    return HB_OK;
}

/* Drop the communicator (ncclCommAbort where the library has it: a peer may be gone, and
 * ncclCommDestroy would wait for it). */
static void comm_drop(void)
{
    pthread_mutex_lock(&g_mu);
    if (g.comm) {
        if (g.api.comm_abort) g.api.comm_abort(g.comm);
        else g.api.comm_destroy(g.comm);
    }
    g.comm = nullptr;
    g.comm_ok = 0;
    g.token = 0;
    g.last_enqueue = 0;
    pthread_mutex_unlock(&g_mu);
}

/* Make the communicator of id on c's GPU: non-blocking (ncclCommInitRankConfig with blocking = 0)
 * where NCCL has it, so that a rank that never joins costs timeout_s, not the run. */
static hb_status comm_make(hbc_ctx *c, const ncclUniqueId *id)
{
    g.rank = hb_launch_rank();
    g.ranks = hb_launch_ranks();
    g.timeout_s = coll_timeout();
    HBC_TRY(HBC_RT(c, cudaSetDevice(c->dev)));
    ncclComm_t comm = nullptr;
    ncclResult_t r;
#if __has_include(<nccl.h>)
    if (g.api.comm_init_config && g.api.comm_async_error) {
        ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
        /* non-blocking, so that the watchdog's ncclCommAbort can end a collective a rank left;
         * HB_NCCL_BLOCKING=1 makes a blocking one (its calls return once enqueued) to measure what the
         * non-blocking calls' polling costs the host */
        const char *bl = hbc_cfg()->nccl_blocking;
        cfg.blocking = bl && !strcmp(bl, "1") ? 1 : 0;
        r = g.api.comm_init_config(&comm, g.ranks, *id, g.rank, &cfg);
        double t0 = mono_s();
        while (r == ncclInProgress && comm) {
            if (g.api.comm_async_error(comm, &r) != ncclSuccess) break;
            if (r == ncclInProgress && mono_s() - t0 > g.timeout_s) {
                snprintf(g.api.why, sizeof g.api.why, "ncclCommInitRankConfig: the other ranks did not join within %.0f s", g.timeout_s);
                if (g.api.comm_abort) g.api.comm_abort(comm);
                return HB_EDEVICE;
            }
            if (r == ncclInProgress) usleep(1000);
        }
    } else
#endif
        r = g.api.comm_init_rank(&comm, g.ranks, *id, g.rank);
    if (r != ncclSuccess) {
        snprintf(g.api.why, sizeof g.api.why, "ncclCommInitRank: %s", g.api.error_string ? g.api.error_string(r) : "failed");
        if (comm && g.api.comm_abort) g.api.comm_abort(comm);
        return HB_EDEVICE;
    }
    if (!g.vote_d) HBC_TRY(HBC_RT(c, cudaMalloc((void **)&g.vote_d, 64)));
    if (!g.vote_h) HBC_TRY(HBC_RT(c, cudaHostAlloc((void **)&g.vote_h, 64, cudaHostAllocDefault)));
    pthread_mutex_lock(&g_mu);
    g.comm = comm;
    g.dev = c->dev;
    g.comm_ok = 1;
    g.aborted = 0;
    g.last_enqueue = 0;
    pthread_mutex_unlock(&g_mu);
    if (!g.wd_started && g.ranks > 1 && pthread_create(&g.wd, nullptr, watchdog, nullptr) == 0) {
        pthread_detach(g.wd);
        g.wd_started = 1;
    }
    return HB_OK;
}

/* The communicator of this process, on c's GPU. With the per-case agreement it is made in supports
 * (REBUILD); without it (one rank, or HB_NCCL_ID and no rendezvous directory), once, here. */
static hb_status comm_ready(hbc_ctx *c)
{
    if (g.comm_ok) return g.dev == c->dev ? HB_OK : HB_ESKIP;
    if (g.rdv || g.aborted) return HB_EDEVICE; /* aborted: the next case's agreement makes a new one */
    if (g.comm_failed || !api_load()) return HB_EDEVICE;
    g.rank = hb_launch_rank();
    g.ranks = hb_launch_ranks();
    ncclUniqueId id;
    hb_status st = get_unique_id(g.rank, g.ranks, &id);
    if (st == HB_OK) st = comm_make(c, &id);
    if (st != HB_OK) {
        g.comm_failed = 1;
        if (!g.api.why[0]) snprintf(g.api.why, sizeof g.api.why, "ncclCommInitRank failed");
        fprintf(stderr, "hb_cuda: no NCCL communicator: %s\n", g.api.why);
        return HB_EDEVICE;
    }
    return HB_OK;
}

/* REBUILD at case seq: rank 0 makes the id and writes it to the rendezvous directory, the others
 * read it; every rank makes the communicator; its token is seq. */
static hb_status comm_rebuild(hbc_ctx *c, long long seq, char *why, size_t whylen)
{
    comm_drop();
    ncclUniqueId id;
    char hex[2 * NCCL_UNIQUE_ID_BYTES + 2] = "";
    int rank = hb_launch_rank();
    if (rank == 0) {
        if (HBC_NCCL(g.api.get_unique_id(&id)) != HB_OK) { snprintf(why, whylen, "ncclGetUniqueId failed"); return HB_EDEVICE; }
        id_to_hex(&id, hex);
    }
    if (hb_rdv_id(g.rdv_dir, seq, rank, hex, sizeof hex, coll_timeout(), why, whylen) != 0) return HB_EDEVICE;
    if (rank != 0 && !id_from_hex(hex, &id)) { snprintf(why, whylen, "rank 0's communicator id is malformed"); return HB_EDEVICE; }
    g.api.why[0] = 0;
    if (comm_make(c, &id) != HB_OK) { snprintf(why, whylen, "%s", g.api.why); return HB_EDEVICE; }
    g.token = seq;
    return HB_OK;
}

/* HB_INJECT_SKIP="R:SEQ[,SEQ...]" (the tests' fault injection): rank R skips the cases of those seqs. */
static int injected_skip(long long seq)
{
    const char *e = hbc_cfg()->inject_skip;
    if (!e || !*e) return 0;
    char *end;
    long r = strtol(e, &end, 10);
    if (*end != ':' || r != hb_launch_rank()) return 0;
    for (const char *p = end + 1; *p;) {
        long long q = strtoll(p, &end, 10);
        if (end == p) break;
        if (q == seq) return 1;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

/* ------------------------------------------------------------------ supports */

/* This rank's own answer for case cs (nothing agreed yet). */
static hb_status coll_local_supports(hbc_ctx *c, const hb_case *cs, char *reason, size_t len)
{
    const hb_shape *s = &cs->shape;
    if (!api_load()) { snprintf(reason, len, "%s", g.api.why); return HB_ESKIP; }
    if (g.comm_failed) { snprintf(reason, len, "no NCCL communicator: %s", g.api.why); return HB_ESKIP; }
    int ranks = hb_launch_ranks(), rank = hb_launch_rank();
    if (s->ranks != ranks) {
        snprintf(reason, len, "the case has ranks=%lld, the launch has %d process%s (core/launch.h)", (long long)s->ranks, ranks,
                 ranks == 1 ? "" : "es");
        return HB_ESKIP;
    }
    if (c) {
        int want = g.comm_ok ? g.dev : rank_device();
        if (c->dev != want) {
            snprintf(reason, len, "rank %d drives cuda:%d (local rank %d mod the visible GPUs), not this instance", rank, want,
                     hb_launch_local_rank());
            return HB_ESKIP;
        }
    }
    if (s->path != HB_COLL_NCCL && s->inplace) { snprintf(reason, len, "in place is a variant of the NCCL path only"); return HB_ESKIP; }
    if (cs->op == HB_OP_REDUCE_SCATTER && s->inplace) {
        snprintf(reason, len, "in-place reduce_scatter writes into its ranks*n input; the case's output holds n: not offered");
        return HB_ESKIP;
    }
    if (s->path == HB_COLL_PEER && ranks > 1 && cs->route == HB_ROUTE_MAPPED) {
        snprintf(reason, len, "peer copies between processes map device buffers (CUDA IPC); the mapped route's buffers are host memory");
        return HB_ESKIP;
    }
    if (s->path != HB_COLL_NCCL && ranks > 16) {
        snprintf(reason, len, "the host-staged and peer paths serve at most 16 ranks of one machine");
        return HB_ESKIP;
    }
    if (cs->dtype == HB_TF32) { snprintf(reason, len, "tf32 is a matrix-product mode"); return HB_ESKIP; }
    if (injected_skip(cs->seq)) { snprintf(reason, len, "rank %d skips it by fault injection (HB_INJECT_SKIP)", rank); return HB_ESKIP; }
    return HB_OK;
}

hb_status hbc_coll_supports(hbc_ctx *c, const hb_case *cs, char *reason, size_t len)
{
    int ranks = hb_launch_ranks(), rank = hb_launch_rank();
    if (ranks < 2 || cs->shape.ranks != ranks || cs->seq <= 0 || !c) return coll_local_supports(c, cs, reason, len);
    if (!g.rdv && !g.rdv_dir[0]) g.rdv = hb_rdv_dir(g.rdv_dir, sizeof g.rdv_dir) == 0;
    if (!g.rdv) return coll_local_supports(c, cs, reason, len);
    if (cs->seq == g.last_seq) { snprintf(reason, len, "%s", g.last_reason); return g.last_st; }
    char why[400] = "";
    hb_status mine = coll_local_supports(c, cs, why, sizeof why);
    double wait_s = case_timeout() > 0 ? case_timeout() : 600; /* 600: hybench run's default --case-timeout */
    hb_rdv_result res;
    hb_status st = HB_ESKIP;
    char out[400] = "";
    if (hb_rdv_case(g.rdv_dir, cs->seq, rank, ranks, mine == HB_OK, why, g.comm_ok ? g.token : 0, wait_s, &res) != 0) {
        snprintf(out, sizeof out, "the ranks' agreement failed: %s", res.reason);
    } else if (res.verdict == HB_RDV_RUN) {
        st = HB_OK;
    } else if (res.verdict == HB_RDV_REBUILD) {
        char e[400] = "";
        if (comm_rebuild(c, cs->seq, e, sizeof e) == HB_OK) st = HB_OK;
        else snprintf(out, sizeof out, "no NCCL communicator for this case: %s", e);
    } else {
        snprintf(out, sizeof out, "%s", res.reason);
    }
    g.last_seq = cs->seq;
    g.last_st = st;
    snprintf(g.last_reason, sizeof g.last_reason, "%s", out);
    snprintf(reason, len, "%s", out);
    return st;
}

/* ------------------------------------------------------------------ run */

static ncclDataType_t nccl_type(hb_dtype d)
{
    return d == HB_F16 ? ncclFloat16 : d == HB_BF16 ? ncclBfloat16 : ncclFloat32;
}

const char *hbc_coll_impl(const hb_case *cs)
{
    return cs->shape.path == HB_COLL_HOST ? "host-staged" : cs->shape.path == HB_COLL_PEER ? "cuda-peer" : "nccl";
}

hb_status hbc_coll_run(hbc_ctx *c, const hb_case *cs, const void *in, void *out, hb_status (*mark)(hbc_ctx *))
{
    hb_status r = comm_ready(c);
    if (r != HB_OK) return r;
    const hb_shape *s = &cs->shape;
    const size_t es = hbc_esize(cs->dtype), n = (size_t)s->n;
    const ncclDataType_t t = nccl_type(cs->dtype);
    snprintf(c->last_impl, sizeof c->last_impl, "%s", hbc_coll_impl(cs));
    if (s->path == HB_COLL_HOST) {
        snprintf(c->last_algo, sizeof c->last_algo, s->ranks > 1 ? "D2H into a shared host buffer, f32 reduce of each rank's share on the host, H2D"
                                                                 : "D2H, f32 reduce on the host, H2D through pinned staging");
        HBC_TRY(hbc_coll_host_prepare(c, cs)); /* once per case, before the timer */
        HBC_TRY(mark(c));
        return hbc_coll_run_host(c, cs, in, out);
    }
    if (s->path == HB_COLL_PEER) {
        snprintf(c->last_algo, sizeof c->last_algo, s->ranks > 1 ? "CUDA IPC: direct reads of the other ranks' buffers (copies, or a summing kernel)"
                                                                 : "cudaMemcpyPeerAsync");
        HBC_TRY(hbc_coll_peer_prepare(c, cs, in)); /* once per case, before the timer */
        HBC_TRY(mark(c));
        return hbc_coll_run_peer(c, cs, in, out);
    }
    snprintf(c->last_algo, sizeof c->last_algo, "NCCL %d, %s", g.api.version, s->inplace ? "in place" : "out of place");
    const void *send = in;
    if (s->inplace) {
        /* NCCL's in-place layouts: all_gather sends from its own block of the output */
        char *dst = (char *)out + (cs->op == HB_OP_ALL_GATHER ? (size_t)s->rank * n * es : 0);
        HBC_TRY(HBC_RT(c, cudaMemcpyAsync(dst, in, n * es, cudaMemcpyDeviceToDevice, c->stream)));
        send = dst;
    }
    HBC_TRY(mark(c));
    /* a case of its own starts its timer after the ranks align; a chain's step starts when its stream gets
     * there, and its time includes the wait for the slowest rank, as a real layer's does */
    if (!s->in_chain) HBC_TRY(hbc_coll_aligned_start(c));
    HBC_TRY(enqueue_begin(c));
    switch (cs->op) {
    case HB_OP_ALL_REDUCE: return HBC_NCCL(g.api.all_reduce(send, out, n, t, ncclSum, g.comm, c->stream));
    case HB_OP_ALL_GATHER: return HBC_NCCL(g.api.all_gather(send, out, n, t, g.comm, c->stream));
    case HB_OP_REDUCE_SCATTER: return HBC_NCCL(g.api.reduce_scatter(send, out, n, t, ncclSum, g.comm, c->stream));
    case HB_OP_BROADCAST: return HBC_NCCL(g.api.broadcast(send, out, n, t, 0, g.comm, c->stream));
    default: return HB_ESKIP;
    }
}

void hbc_coll_capture(int on)
{
    pthread_mutex_lock(&g_mu);
    g.capturing = on;
    if (on) g.captured = 0;
    pthread_mutex_unlock(&g_mu);
}

int hbc_coll_captured(void)
{
    pthread_mutex_lock(&g_mu);
    int n = g.captured;
    pthread_mutex_unlock(&g_mu);
    return n;
}

hb_status hbc_coll_graph_launch(hbc_ctx *c)
{
    return enqueue_begin(c);
}

int hbc_coll_vote(hb_instance *inst, const hb_case *cs, int stop)
{
    (void)cs;
    hbc_ctx *c = inst ? (hbc_ctx *)inst->ctx : nullptr;
    if (!c || comm_ready(c) != HB_OK) return stop; /* no communicator: the case fails on its own */
    *g.vote_h = stop ? 1 : 0;
    if (enqueue_begin(c) != HB_OK ||
        HBC_RT(c, cudaMemcpyAsync(g.vote_d, g.vote_h, sizeof(int), cudaMemcpyHostToDevice, c->stream)) != HB_OK ||
        HBC_NCCL(g.api.all_reduce(g.vote_d, g.vote_d, 1, ncclInt32, ncclMax, g.comm, c->stream)) != HB_OK ||
        HBC_RT(c, cudaMemcpyAsync(g.vote_h, g.vote_d, sizeof(int), cudaMemcpyDeviceToHost, c->stream)) != HB_OK ||
        HBC_RT(c, cudaStreamSynchronize(c->stream)) != HB_OK)
        return 1; /* cannot agree: stop (a collective error follows on every rank) */
    return *g.vote_h != 0;
}

hb_status hbc_coll_barrier(hbc_ctx *c, int host_sync)
{
    HBC_TRY(comm_ready(c));
    HBC_TRY(enqueue_begin(c));
    HBC_TRY(HBC_NCCL(g.api.all_reduce(g.vote_d + 1, g.vote_d + 1, 1, ncclInt32, ncclMax, g.comm, c->stream)));
    return host_sync ? HBC_RT(c, cudaStreamSynchronize(c->stream)) : HB_OK;
}

hb_status hbc_coll_aligned_start(hbc_ctx *c)
{
    if (g.ranks < 2 || !c->tarmed || !c->tstarted) return HB_OK;
    HBC_TRY(hbc_coll_barrier(c, 0));
    return HBC_RT(c, cudaEventRecord(c->ev_begin, c->stream));
}

hb_status hbc_coll_allgather_host(hbc_ctx *c, const void *mine, void *all, size_t bytes)
{
    HBC_TRY(comm_ready(c));
    const size_t R = (size_t)g.ranks, need = R * bytes;
    if (need > 16 * 1024) return HB_EINVAL;
    if (!g.xbuf) HBC_TRY(HBC_RT(c, cudaMalloc((void **)&g.xbuf, 16 * 1024)));
    HBC_TRY(HBC_RT(c, cudaMemcpyAsync(g.xbuf + (size_t)g.rank * bytes, mine, bytes, cudaMemcpyHostToDevice, c->stream)));
    HBC_TRY(enqueue_begin(c));
    HBC_TRY(HBC_NCCL(g.api.all_gather(g.xbuf + (size_t)g.rank * bytes, g.xbuf, bytes, (ncclDataType_t)0 /* ncclInt8 */, g.comm, c->stream)));
    HBC_TRY(HBC_RT(c, cudaMemcpyAsync(all, g.xbuf, need, cudaMemcpyDeviceToHost, c->stream)));
    return HBC_RT(c, cudaStreamSynchronize(c->stream));
}

/* ------------------------------------------------------------------ ceilings and facts */

void hbc_coll_ceilings(hbc_ctx *c, hb_ceiling *out, int max, int *n)
{
    /* several ranks: each process measures only the GPU it drives (the probe would copy into
     * another rank's GPU while that rank measures) */
    if (hb_launch_ranks() > 1) return;
    int nd = 0;
    if (cudaGetDeviceCount(&nd) != cudaSuccess) { (void)cudaGetLastError(); return; }
    const size_t bytes = (size_t)256 << 20;
    for (int i = 0; i < nd; i++) {
        for (int j = 0; j < nd; j++) {
            if (i == j || *n >= max) continue;
            int can = 0;
            if (cudaDeviceCanAccessPeer(&can, j, i) != cudaSuccess || !can) { (void)cudaGetLastError(); continue; }
            void *a = nullptr, *b = nullptr;
            cudaStream_t sj = nullptr;
            cudaEvent_t e0 = nullptr, e1 = nullptr;
            float ms = 0, best = 0;
            bool ok = cudaSetDevice(i) == cudaSuccess && cudaMalloc(&a, bytes) == cudaSuccess && cudaSetDevice(j) == cudaSuccess &&
                      cudaMalloc(&b, bytes) == cudaSuccess;
            if (ok) {
                cudaError_t pe = cudaDeviceEnablePeerAccess(i, 0); /* j reads i's memory */
                if (pe == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
                ok = (pe == cudaSuccess || pe == cudaErrorPeerAccessAlreadyEnabled) && cudaStreamCreate(&sj) == cudaSuccess &&
                     cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess;
            }
            for (int rep = 0; ok && rep < 4; rep++) { /* the first copy warms up; best of the rest */
                ok = cudaEventRecord(e0, sj) == cudaSuccess && cudaMemcpyPeerAsync(b, j, a, i, bytes, sj) == cudaSuccess &&
                     cudaEventRecord(e1, sj) == cudaSuccess && cudaEventSynchronize(e1) == cudaSuccess &&
                     cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess;
                if (ok && rep > 0 && ms > 0 && (best == 0 || ms < best)) best = ms;
            }
            if (ok && best > 0) {
                hb_ceiling *h = &out[(*n)++];
                memset(h, 0, sizeof *h);
                snprintf(h->name, sizeof h->name, "p2p_gbps_%d_%d", i, j);
                h->value = (double)bytes / ((double)best * 1e-3) / 1e9;
                snprintf(h->unit, sizeof h->unit, "GB/s");
                snprintf(h->how, sizeof h->how, "cudaMemcpyPeerAsync cuda:%d -> cuda:%d, 256 MiB, best of 3", i, j);
            }
            (void)cudaGetLastError();
            if (e0) cudaEventDestroy(e0);
            if (e1) cudaEventDestroy(e1);
            if (sj) cudaStreamDestroy(sj);
            if (b) { cudaSetDevice(j); cudaFree(b); }
            if (a) { cudaSetDevice(i); cudaFree(a); }
        }
    }
    cudaSetDevice(c->dev);
}

static void json_str(const char *s, char *out, size_t len)
{
    size_t j = 0;
    for (; *s && j + 7 < len; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') { out[j++] = '\\'; out[j++] = (char)ch; }
        else if (ch == '\n') { out[j++] = '\\'; out[j++] = 'n'; }
        else if (ch < 0x20) j += (size_t)snprintf(out + j, len - j, "\\u%04x", ch);
        else out[j++] = (char)ch;
    }
    out[j] = 0;
}

void hbc_coll_describe(hbc_ctx *c, char *buf, size_t len)
{
    (void)c;
    size_t l = strlen(buf);
    if (l < 2 || buf[l - 1] != '}') return;
    char topo[4096] = "", esc[6144];
    /* NVML has the same facts (nvmlDeviceGetTopologyCommonAncestor, NVLink state); nvidia-smi's
     * matrix is the form people read and compare */
    FILE *p = popen("nvidia-smi topo -m 2>&1", "r");
    if (p) {
        size_t k = fread(topo, 1, sizeof topo - 1, p);
        topo[k] = 0;
        if (pclose(p) != 0 && k == 0) snprintf(topo, sizeof topo, "nvidia-smi topo -m failed");
    } else {
        snprintf(topo, sizeof topo, "nvidia-smi not runnable");
    }
    json_str(topo, esc, sizeof esc);
    int nd = 0;
    if (cudaGetDeviceCount(&nd) != cudaSuccess) { (void)cudaGetLastError(); nd = -1; }
    nccl_api *a = api_load();
    char ver[240];
    if (a) snprintf(ver, sizeof ver, "\"%d\"", a->version);
    else { char e[220]; json_str(g.api.why, e, sizeof e); snprintf(ver, sizeof ver, "null,\"nccl_missing\":\"%s\"", e); }
    char tail[8192];
    int need = snprintf(tail, sizeof tail,
                        ",\"nccl_version\":%s,\"launch\":{\"rank\":%d,\"ranks\":%d,\"local_rank\":%d},\"gpu_count\":%d,\"topology\":\"%s\"}",
                        ver, hb_launch_rank(), hb_launch_ranks(), hb_launch_local_rank(), nd, esc);
    if (need < 0 || (size_t)need >= sizeof tail || (l - 1) + (size_t)need >= len)
        need = snprintf(tail, sizeof tail, ",\"nccl_version\":%s,\"gpu_count\":%d,\"topology\":\"(longer than the describe buffer)\"}", ver, nd);
    if (need > 0 && (l - 1) + (size_t)need < len) memcpy(buf + l - 1, tail, (size_t)need + 1);
}

/* The transport NCCL was told to use, from its environment (NCCL picks among those allowed and has no
 * call that names the one it chose; NCCL_DEBUG=INFO's "via" lines do): "net:Socket" where NCCL_NET
 * names a network plugin or P2P and SHM are both disabled (the inter-node path on one host), "shm"
 * where only P2P is disabled, else "p2p" (NVLink or PCIe peer access between the GPUs of one host;
 * one rank moves no byte between GPUs: "local"). */
static void coll_transport(char *out, size_t len)
{
    const char *net = getenv("NCCL_NET"), *p2p = getenv("NCCL_P2P_DISABLE"), *shm = getenv("NCCL_SHM_DISABLE");
    int p2p_off = p2p && atoi(p2p) == 1, shm_off = shm && atoi(shm) == 1;
    if (hb_launch_ranks() < 2) snprintf(out, len, "local");
    else if (net && *net) snprintf(out, len, "net:%.40s", net);
    else if (p2p_off && shm_off) snprintf(out, len, "net:Socket");
    else if (p2p_off) snprintf(out, len, "shm");
    else snprintf(out, len, "p2p");
}

void hbc_coll_case_info(const hb_case *cs, char *buf, size_t len, size_t *j)
{
    if (!hbc_is_coll(cs->op) || *j >= len) return;
    static const char *const paths[] = {"nccl", "host", "peer"};
    const int64_t p = cs->shape.path;
    *j += (size_t)snprintf(buf + *j, len - *j, ",\"coll_path\":\"%s\",\"in_place\":%s,\"ranks\":%lld,\"rank\":%lld,\"nccl_version\":%d",
                           p >= 0 && p < 3 ? paths[p] : "?", cs->shape.inplace ? "true" : "false", (long long)cs->shape.ranks,
                           (long long)cs->shape.rank, g.api.version);
    if (*j < len && p == HB_COLL_NCCL) {
        char tr[200];
        coll_transport(tr, sizeof tr);
        *j += (size_t)snprintf(buf + *j, len - *j, ",\"transport\":\"%s\"", tr);
    }
}
