/*
 * hybench.h - the core types every layer and backend shares: exit and status codes, the op table,
 * dtypes, modes, routes, shapes, cases, and the decoder-layer chain (defined in chain.c).
 *
 * One op table (X-macro, ggml style), one shape struct with named fields, one case struct.
 * Every tensor is dense and row-major (C order). Layouts per op:
 *   elementwise  in0,in1,out: [n]                      (the activations: one input;
 *                sigmoid(x) = 1 / (1 + exp(-x)), exp, add, div, neg: 4 FLOPs)
 *   dequantize   in0: [n] weights in a quantized dtype's blocks (core/quant.h; n whole blocks) -> out: [n]
 *                f32, each value as the format defines it (a multiply and a subtract: 2 FLOPs); the
 *                one-time cost of keeping a model's weights in f32 (docs/quantized.md); q dtypes only
 *   matmul       A[m,k] x B[k,n] -> C[m,n]
 *   bmm          A[batch,m,k] x B[batch,k,n] -> C[batch,m,n]
 *   conv2d       x[batch,c,h,w] (NCHW), w[oc,c/g,kh,kw] (OIHW) -> y[batch,oc,oh,ow], no bias
 *                layout=nhwc (channels-last, shape field `layout` = HB_LAYOUT_NHWC):
 *                x[batch,h,w,c] (NHWC), w[oc,kh,kw,c/g] (OHWI: cuDNN's KRSC, what PyTorch's
 *                channels_last and oneDNN's acdb store) -> y[batch,oh,ow,oc] (NHWC); same values
 *                and FLOPs as the NCHW case, only the element order of every tensor differs
 *   maxpool/avgpool x[batch,c,h,w] -> y[batch,c,oh,ow]; avg counts only in-bounds taps
 *                (count_include_pad=false, as cuDNN's EXCLUDE_PADDING mode)
 *   sum/mean/max (rows)  x[rows,cols] -> y[rows]   (over the last axis)
 *   sum_all      x[n] -> y[1]
 *   rmsnorm      x[rows,cols], g[cols] -> y[rows,cols], y = x / sqrt(mean(x^2) + 1e-5) * g
 *   attention    q[batch,heads,seq,head_dim], k,v[batch,kv_heads,kv_seq,head_dim]
 *                -> o[batch,heads,seq,head_dim]; o = softmax(q k^T / sqrt(head_dim) + mask) v;
 *                query head h reads kv head h / (heads / kv_heads) (grouped-query attention);
 *                causal: query i sees keys j <= i + (kv_seq - seq) (queries aligned to the end).
 *                layout=bshd: q and o [batch,seq,heads,head_dim], k,v [batch,kv_seq,kv_heads,head_dim]
 *                (the projections' [tokens, heads*head_dim] as they come, as FlashAttention takes them).
 *   all_reduce   x[n] on every rank -> y[n] = sum over the ranks' x (NCCL ncclAllReduce, ncclSum)
 *   all_gather   x[n] on every rank -> y[ranks*n], block r = rank r's x
 *   reduce_scatter x[ranks*n] on every rank -> y[n] on rank r = block r of the sum over the ranks' x
 *   broadcast    x[n] on the root (rank 0) -> y[n] on every rank
 *                Collectives (family "collective", docs/collectives.md): n counts elements per rank
 *                (NCCL's count / sendcount / recvcount); ranks and rank are the communicator's size
 *                and this process's rank (filled from the launcher's environment by
 *                hb_shape_normalize, core/launch.h); inplace=1 runs NCCL in place; path selects the
 *                data path: 0 NCCL, 1 host-staged (D2H, reduce on the CPU, H2D), 2 peer copies
 *                (cudaMemcpyPeer). Every rank draws the same input from the run's seed, so the
 *                reference of all_reduce is ranks * x.
 *   chain        one TinyLlama-1.1B decoder layer as a sequence of the ops above (declared below);
 *                shape: seq (tokens), kv_seq (key/value length; kv_seq > seq reads a KV cache),
 *                heads, kv_heads, head_dim, inter (another llama layer's sizes; absent: TinyLlama's 32,
 *                4, 64, 5632; hidden = heads * head_dim),
 *                ranks (the tensor-parallel layer over 1, 2 or 4 ranks; absent: the one-device chain).
 *                Backends never see it: the driver runs its ops one by one.
 * Output spatial size (conv2d, pooling): oh = (h + 2*ph - dh*(kh-1) - 1) / sh + 1, same for w.
 */
#ifndef HYBENCH_H
#define HYBENCH_H

#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

#define HB_VERSION "0.1.0"
#define HB_SCHEMA_VERSION 1

/* ---- process exit statuses (distinct per outcome; documented in README) ---- */
enum {
    HB_EXIT_OK = 0,            /* everything ran and verified */
    HB_EXIT_REGRESSION = 1,    /* compare: a significant regression (or a case became wrong/crashed/missing) */
    HB_EXIT_USAGE = 2,         /* bad command line or bad input file for compare/report */
    HB_EXIT_INCOMPARABLE = 3,  /* compare, ab: another machine (fingerprint) or schema without --cross-machine / --force */
    HB_EXIT_BAD_WORKLOAD = 4,  /* a workload file is malformed: nothing was run */
    HB_EXIT_WRONG = 5,         /* at least one case failed verification */
    HB_EXIT_NO_BACKEND = 6,    /* --backend names a backend that is unknown or unavailable here */
    HB_EXIT_IO = 7,            /* cannot write results/report files */
    HB_EXIT_FAILED = 8,        /* no case wrong, but some failed, crashed or timed out */
    HB_EXIT_INCOMPLETE = 9,    /* plan: the results file lacks an op, shape, backend or transfer route a plan needs */
    HB_EXIT_NO_PACKAGE = 10,   /* publish, ab --instructions: a Debian package the command needs (libjs-dygraphs, valgrind) is not installed (named) */
    HB_EXIT_INCONCLUSIVE = 11, /* compare, ab: no case fails the gate, but some are undecided (or fewer rounds or
                                  samples than the minimum): neither pass nor fail */
    HB_EXIT_INTERRUPTED = 130  /* run: SIGINT/SIGTERM; the cases measured so far were written */
};

/* ---- status codes (returned by every API boundary; 0 is success) ---- */
typedef enum hb_status {
    HB_OK = 0,
    HB_ESKIP,      /* (op, dtype, route) unsupported by this backend: a skip, never a failure */
    HB_ENOMEM,     /* out of host or device memory, or size refused as absurd: "no_resource" */
    HB_EDEVICE,    /* a device/library call failed: "failed" */
    HB_EINVAL,     /* bad argument or input */
    HB_EWRONG,     /* verification over tolerance: "wrong" */
    HB_ECRASH,     /* the backend's child process died: "crashed" */
    HB_ETIMEOUT,   /* the case exceeded its wall budget by far: "timed_out" */
    HB_STATUS_COUNT
} hb_status;
/* Name used in results: "ok", "skipped", "no_resource", "failed", "invalid", "wrong", "crashed", "timed_out". */
const char *hb_status_name(hb_status s);
hb_status hb_status_from_name(const char *s); /* HB_STATUS_COUNT if unknown */

/* ---- op families and ops ---- */
/* X(ENUM, "name"), in the order the report lists the families (report/common.c family_order). */
#define HB_FAMILY_LIST(X)                                                                       \
    X(ELEMENTWISE, "elementwise") X(MATMUL, "matmul") X(CONV2D, "conv2d") X(POOLING, "pooling")  \
    X(REDUCTION, "reduction") X(ATTENTION, "attention") X(CHAIN, "chain") X(COLLECTIVE, "collective")
typedef enum hb_family {
#define HB_X(e, n) HB_FAM_##e,
    HB_FAMILY_LIST(HB_X)
#undef HB_X
    HB_FAM_COUNT
} hb_family;
const char *hb_family_name(hb_family f);

/* How an op reads its shape: the fields it uses, their defaults and checks, its tensor sizes, the
 * unit its FLOPs count and its reduction length (core/opdesc.h computes them; layouts above). */
typedef enum hb_shape_kind {
    HB_SK_EW,        /* n: every input and the output [n] (elementwise) */
    HB_SK_MATMUL,    /* m n k */
    HB_SK_BMM,       /* batch m n k */
    HB_SK_CONV2D,    /* batch c h w oc kh kw sh sw ph pw dh dw g layout */
    HB_SK_POOL,      /* batch c h w kh kw sh sw ph pw */
    HB_SK_ROWS,      /* rows cols: x[rows,cols] -> y[rows] */
    HB_SK_ALL,       /* n: x[n] -> y[1] */
    HB_SK_NORM,      /* rows cols: x[rows,cols], g[cols] -> y[rows,cols] */
    HB_SK_ATTENTION, /* batch heads kv_heads seq kv_seq head_dim causal layout */
    HB_SK_CHAIN,     /* seq kv_seq ranks (the driver runs its steps) */
    HB_SK_COLL,      /* n ranks inplace path: x[n] -> y[n] (all_reduce, broadcast) */
    HB_SK_GATHER,    /* x[n] -> y[ranks*n] */
    HB_SK_SCATTER,   /* x[ranks*n] -> y[n] */
    HB_SK_COUNT
} hb_shape_kind;

/* The op descriptor: one row per op, every fact about the op that is not a kernel.
 * X(ENUM, "name", family, number of inputs, bound (0 memory-bound, 1 compute-bound), shape kind,
 *   activation (1: a pointwise nonlinearity; the planner's activation rule, analysis/plan.c),
 *   FLOPs per unit of the kind's work (core/opdesc.h hb_op_work: elements for HB_SK_EW, m*n*k for
 *   matmul, ...; a multiply-add counts 2, exp/tanh 1), sums (1: each output sums terms, so the f32
 *   tolerance grows with the reduction length; hb_op_tolerance))
 * A new elementwise op is its row here, its f64 reference (kernels/cpu_ref/ref.c) and one kernel-table
 * row per backend (docs/architecture.md, "A new op"). */
#define HB_OP_LIST(X)                                                                  \
    X(ADD,       "add",       HB_FAM_ELEMENTWISE, 2, 0, HB_SK_EW,        0, 1, 0)       \
    X(MUL,       "mul",       HB_FAM_ELEMENTWISE, 2, 0, HB_SK_EW,        0, 1, 0)       \
    X(RELU,      "relu",      HB_FAM_ELEMENTWISE, 1, 0, HB_SK_EW,        1, 1, 0)       \
    X(GELU,      "gelu",      HB_FAM_ELEMENTWISE, 1, 0, HB_SK_EW,        1, 8, 0)       \
    X(SILU,      "silu",      HB_FAM_ELEMENTWISE, 1, 0, HB_SK_EW,        1, 4, 0)       \
    X(SIGMOID,   "sigmoid",   HB_FAM_ELEMENTWISE, 1, 0, HB_SK_EW,        1, 4, 0)       \
    X(DEQUANTIZE, "dequantize", HB_FAM_ELEMENTWISE, 1, 0, HB_SK_EW,      0, 2, 0)       \
    X(MATMUL,    "matmul",    HB_FAM_MATMUL,      2, 1, HB_SK_MATMUL,    0, 2, 1)       \
    X(BMM,       "bmm",       HB_FAM_MATMUL,      2, 1, HB_SK_BMM,       0, 2, 1)       \
    X(CONV2D,    "conv2d",    HB_FAM_CONV2D,      2, 1, HB_SK_CONV2D,    0, 2, 1)       \
    X(MAXPOOL,   "maxpool",   HB_FAM_POOLING,     1, 0, HB_SK_POOL,      0, 1, 0)       \
    X(AVGPOOL,   "avgpool",   HB_FAM_POOLING,     1, 0, HB_SK_POOL,      0, 1, 0)       \
    X(SUM,       "sum",       HB_FAM_REDUCTION,   1, 0, HB_SK_ROWS,      0, 1, 1)       \
    X(MEAN,      "mean",      HB_FAM_REDUCTION,   1, 0, HB_SK_ROWS,      0, 1, 1)       \
    X(MAX,       "max",       HB_FAM_REDUCTION,   1, 0, HB_SK_ROWS,      0, 1, 0)       \
    X(SUM_ALL,   "sum_all",   HB_FAM_REDUCTION,   1, 0, HB_SK_ALL,       0, 1, 1)       \
    X(RMSNORM,   "rmsnorm",   HB_FAM_REDUCTION,   2, 0, HB_SK_NORM,      0, 4, 1)       \
    X(ATTENTION, "attention", HB_FAM_ATTENTION,   3, 1, HB_SK_ATTENTION, 0, 4, 1)       \
    X(CHAIN,     "chain",     HB_FAM_CHAIN,       0, 1, HB_SK_CHAIN,     0, 0, 0)       \
    X(ALL_REDUCE, "all_reduce", HB_FAM_COLLECTIVE, 1, 0, HB_SK_COLL,     0, 1, 1)       \
    X(ALL_GATHER, "all_gather", HB_FAM_COLLECTIVE, 1, 0, HB_SK_GATHER,   0, 0, 0)       \
    X(REDUCE_SCATTER, "reduce_scatter", HB_FAM_COLLECTIVE, 1, 0, HB_SK_SCATTER, 0, 1, 1) \
    X(BROADCAST, "broadcast", HB_FAM_COLLECTIVE,  1, 0, HB_SK_COLL,      0, 0, 0)

typedef enum hb_op {
#define HB_X(e, n, f, ni, b, k, a, fl, su) HB_OP_##e,
    HB_OP_LIST(HB_X)
#undef HB_X
    HB_OP_COUNT
} hb_op;

#define HB_MAX_INPUTS 3

/* ---- compute dtype, host mode, transfer route ---- */
/* The quantized dtypes (core/quant.h) are matmul with its weight operand in a GGUF block format
 * (q8_0, q4_k, q5_k, q6_k), stored as ggml does, W[n,k] with blocks along k (C = A W^T), and f32
 * activations and output; dequantize (blocks in, f32 out); the chain with such weights; every other op
 * skips them. */
typedef enum hb_dtype { HB_F32, HB_TF32, HB_F16, HB_BF16, HB_Q8_0, HB_Q4_K, HB_Q5_K, HB_Q6_K, HB_DTYPE_COUNT } hb_dtype;
/* convert-device: f64 host tensors uploaded as f64 and converted on the device (backends with the
 * upload_f64/download_f64 hooks); a design option measured beside `convert`. */
typedef enum hb_mode { HB_MODE_CONVERT, HB_MODE_F32, HB_MODE_RESIDENT, HB_MODE_CONVERT_DEVICE, HB_MODE_COUNT } hb_mode;
typedef enum hb_route { HB_ROUTE_PAGEABLE, HB_ROUTE_PINNED, HB_ROUTE_MAPPED, HB_ROUTE_COUNT } hb_route;

const char *hb_dtype_name(hb_dtype d);  /* "f32","tf32","f16","bf16","q8_0","q4_k","q5_k","q6_k" */
/* 1 for the quantized-weight dtypes (HB_Q8_0 .. HB_Q6_K), else 0 (inline: the plugins use it too). */
static inline int hb_dtype_is_quant(hb_dtype d) { return d == HB_Q8_0 || d == HB_Q4_K || d == HB_Q5_K || d == HB_Q6_K; }
/* The input of case (op, d) stored in d's blocks: 1 for a quantized matmul (the weight), 0 for
 * dequantize, -1 otherwise (every operand in d's element type, f32 for a quantized d). */
static inline int hb_quant_input(hb_op op, hb_dtype d)
{
    if (!hb_dtype_is_quant(d)) return -1;
    return op == HB_OP_MATMUL ? 1 : op == HB_OP_DEQUANTIZE ? 0 : -1;
}

const char *hb_mode_name(hb_mode m);    /* "convert","f32","resident","convert-device" */
const char *hb_route_name(hb_route r);  /* "pageable","pinned","mapped" */
/* Parse a name; return the enum value, or -1 if unknown. */
int hb_dtype_parse(const char *s);
int hb_mode_parse(const char *s);
int hb_route_parse(const char *s);
/* Bytes per element of a dtype as stored on a device: 4 for f32/tf32, 2 for f16/bf16; 4 for the
 * quantized dtypes (their activations and output; the weight's bytes: hb_quant_bytes, core/quant.h). */
static inline size_t hb_dtype_size(hb_dtype d) { return (d == HB_F16 || d == HB_BF16) ? 2 : 4; }

/* ---- shapes ---- */
/* One struct with named fields; each op reads the fields its layout (above) names.
 * Unused fields are 0. The text form is "key=value key=value ..." with these field names. */
typedef struct hb_shape {
    int64_t n;                          /* elementwise/sum_all: elements; matmul: columns of B and C */
    int64_t m, k;                       /* matmul: rows of A and C; inner dimension */
    int64_t batch;                      /* bmm, conv2d, pooling, attention (benchdnn "mb") */
    int64_t c, h, w;                    /* conv2d/pooling input channels, height, width */
    int64_t oc, kh, kw;                 /* conv2d output channels; conv/pool kernel size */
    int64_t sh, sw, ph, pw, dh, dw, g;  /* strides, paddings, dilations (1 = none), groups */
    int64_t rows, cols;                 /* sum/mean/max/rmsnorm */
    int64_t heads, kv_heads, seq, kv_seq, head_dim, causal; /* attention */
    int64_t ranks, rank, inplace, path;  /* collectives (see the layouts above) */
    int64_t layout;                     /* conv2d tensor layout: HB_LAYOUT_NCHW (0, default) or HB_LAYOUT_NHWC;
                                         * attention: 0 (default: q [batch, heads, seq, head_dim], k and v
                                         * [batch, kv_heads, kv_seq, head_dim]) or HB_LAYOUT_BSHD (q and o
                                         * [batch, seq, heads, head_dim], k and v [batch, kv_seq, kv_heads,
                                         * head_dim]: the projections' own layout, no transpose) */
    int64_t inter;                      /* chain: the feed-forward (intermediate) width; 0: TinyLlama's 5632.
                                         * A chain's heads, kv_heads and head_dim are its layer's (0: 32, 4, 64;
                                         * hidden = heads * head_dim), as a model file gives them (--model) */
    int64_t in_chain;                   /* not a text field: 1 on a collective step of a chain case
                                         * (hb_chain_step_case): the collective starts when its stream
                                         * reaches it, with no barrier that aligns the ranks' start first
                                         * (the layer's real cost includes the wait for the slowest rank) */
} hb_shape;

/* Tensor layouts (shape field `layout`; text form layout=nchw / nhwc for conv2d, layout=bshd for
 * attention; layouts above). */
enum { HB_LAYOUT_NCHW = 0, HB_LAYOUT_NHWC = 1, HB_LAYOUT_BSHD = 2, HB_LAYOUT_COUNT };
const char *hb_layout_name(int64_t layout); /* "nchw", "nhwc", "bshd", "?" */

/* Descriptor of one shape field, for parsers and printers (fio-style option table). */
typedef struct hb_shape_field { const char *name; size_t offset; const char *help; } hb_shape_field;
extern const hb_shape_field hb_shape_fields[];
extern const int hb_shape_nfields;

/* Fill defaults for op (strides 1, dilation 1, groups 1, kv_heads = heads, kv_seq = seq, kw = kh
 * and so on) and check the shape. Returns HB_OK, or HB_EINVAL with a reason in err (size errlen). */
hb_status hb_shape_normalize(hb_op op, hb_shape *s, char *err, size_t errlen);
/* Parse "m=1 n=2 k=3" (separators: spaces, commas, 'x' not allowed) into s (zeroed first).
 * The field `layout` takes a name, nchw or nhwc (hb_layout_name), never a number.
 * Values are decimal int64 with an optional suffix Ki/Mi/Gi (x 2^10/2^20/2^30, overflow-checked:
 * "n=17179869185Gi" is refused, never wrapped) or 2^N (N 0..62). Refused: a suffixed negative value,
 * and 0 for a field that hb_shape_normalize would default (batch, w, kw, sh, sw, dh, dw, g, kv_heads,
 * kv_seq). Returns HB_OK or HB_EINVAL with the reason in err (size errlen). Does not normalize. */
hb_status hb_shape_parse(const char *text, hb_shape *s, char *err, size_t errlen);
/* Print the non-zero fields the op uses as "m=1 n=2 k=3" into buf. Returns buf. */
char *hb_shape_format(hb_op op, const hb_shape *s, char *buf, size_t len);
/* Output spatial sizes for conv2d/pooling; <= 0 when the dilated kernel exceeds the padded input,
 * the stride is not positive or the arithmetic would overflow (checked). */
int64_t hb_shape_oh(const hb_shape *s);
int64_t hb_shape_ow(const hb_shape *s);

/* ---- op metadata table (one row per op: HB_OP_LIST; core/opdesc.h) ---- */
typedef struct hb_op_info {
    const char *name;
    hb_family family;
    int ninputs;
    int compute_bound;        /* 1: GFLOP/s against the peak-FLOP ceiling; 0: GB/s against copy bandwidth */
    hb_shape_kind kind;       /* fields, defaults, sizes, FLOP unit (HB_SK_*) */
    int activation;           /* 1: a pointwise nonlinearity (relu, gelu, silu, ...) */
    double flops_per_unit;    /* FLOPs per unit of hb_op_work */
    int sums;                 /* 1: outputs sum terms (tolerance grows with the reduction length) */
} hb_op_info;
const hb_op_info *hb_op_get(hb_op op);
int hb_op_parse(const char *name);         /* -1 if unknown */
/* Element counts of input i (0..ninputs-1) and of the output. Products are overflow-checked: a count
 * beyond int64 saturates at INT64_MAX (and a negative field gives -1), which hb_shape_normalize
 * refuses as an absurd size. */
int64_t hb_op_input_elems(hb_op op, const hb_shape *s, int i);
int64_t hb_op_output_elems(hb_op op, const hb_shape *s);
/* Floating-point operations of one call (a multiply-add counts 2; exp/tanh count 1; see ops.c). */
double hb_op_flops(hb_op op, const hb_shape *s);
/* Minimal bytes moved through memory by one call: every input read once and the output written
 * once, at elem_size bytes per element (STREAM/BabelStream convention; no write-allocate). */
double hb_op_bytes(hb_op op, const hb_shape *s, size_t elem_size);
/* Verification tolerance on ||out-ref||_2 / ||ref||_2 for this op, shape and compute dtype.
 * f32: 1e-5 x sqrt(reduction length) floor 1e-5 capped 1e-3; tf32: 5e-3; f16: 1e-2; bf16: 3e-2;
 * the quantized dtypes (matmul over the exactly dequantized weights): 1e-2, the layer with quantized weights (chain)
 * 3e-2 (ops.c says why). */
double hb_op_tolerance(hb_op op, const hb_shape *s, hb_dtype d);

/* ---- collectives (nccl-tests' doc/PERFORMANCE.md) ----
 * Data paths of a collective case (shape field `path`). */
enum { HB_COLL_NCCL = 0, HB_COLL_HOST = 1, HB_COLL_PEER = 2, HB_COLL_PATH_COUNT };
const char *hb_coll_path_name(int64_t path); /* "nccl", "host", "peer", "?" */
/* 1 for the ops of the collective family. */
int hb_op_is_collective(hb_op op);
/* nccl-tests' size S in bytes of one call: count * elem_size for all_reduce and broadcast,
 * count * elem_size * ranks for all_gather and reduce_scatter (the whole gathered/reduced array).
 * algbw = S / t. */
double hb_coll_bytes(hb_op op, const hb_shape *s, size_t elem_size);
/* nccl-tests' bus-bandwidth factor busbw / algbw for n = s->ranks: all_reduce 2(n-1)/n,
 * all_gather and reduce_scatter (n-1)/n, broadcast 1; 0 for other ops. With one rank the
 * factor is 0 for all but broadcast (no byte crosses a link), as in nccl-tests. */
double hb_coll_busbw_factor(hb_op op, const hb_shape *s);

/* ---- a case: one measurement ---- */
typedef struct hb_case {
    hb_op op;
    hb_shape shape;
    hb_dtype dtype;
    hb_mode mode;
    hb_route route;
    char name[96];       /* label from the workload ("tinyllama.decode.qkv"), may be empty */
    char source[160];    /* "workloads/default.ini:12" where it was defined */
    char model[48];      /* model name for model totals ("resnet_50"), may be empty */
    double weight;       /* repeat count in the model (benchdnn "*N"), default 1 */
    int quick;           /* part of the --quick subset */
    long long seq;       /* the case's position in the run (pass and list index, measure/child.c), the same
                          * on every rank of a launch: names the case in the ranks' per-case agreement
                          * (core/rendezvous.h); 0 outside a run */
} hb_case;

/* Stable key of a case for matching across runs:
 * "op|shape|backend|mode|route|dtype". buf must hold 256 bytes. */
char *hb_case_key(const hb_case *c, const char *backend, char *buf, size_t len);
/* 1 (reason written, size rlen) when case c cannot run on any backend for its quantized dtype: the q
 * dtypes are for matmul (k whole blocks), dequantize (n whole blocks; and dequantize takes nothing else)
 * and the chain; the modes that start from f64 host tensors (convert, convert-device) have no f64 form
 * of a block format to convert from. The driver skips those once (measure/sample.c). 0 for every other
 * case. Defined in core/ops.c. */
int hb_quant_case_skip(const hb_case *c, char *reason, size_t rlen);
/* Bytes of input i (0..ninputs-1) of case c as a backend's buffer holds it: elements x
 * hb_dtype_size(dtype), except a quantized matmul's weight (input 1), which holds its blocks:
 * hb_quant_bytes(dtype, n*k) (core/quant.h). 0 for an index out of range, or a quantized weight whose
 * k is no whole number of blocks. */
size_t hb_case_input_bytes(const hb_case *c, int i);
/* Bytes of case c's output buffer: elements x hb_dtype_size(dtype) (f32 for the quantized dtypes). */
size_t hb_case_output_bytes(const hb_case *c);
/* Minimal bytes one call of case c moves through memory (its records' "bytes", the GB/s figures):
 * hb_op_bytes at the dtype's element size, except that a quantized matmul counts its weight's block
 * bytes (hb_case_input_bytes) and its f32 activations and output at 4 bytes. The one place a case's
 * bytes are computed. A quantized chain counts each step as it runs (hb_chain_step_case: the projections in
 * the layer's mix, the other steps in f32). */
double hb_case_bytes(const hb_case *c);

/* ---- the decoder-layer chain (the HB_OP_CHAIN row; core/chain.c) ----
 * The transformer-block chain: one TinyLlama-1.1B decoder layer (hidden 2048, intermediate
 * 5632, 32 query heads, 4 key/value heads, head dim 64) run op by op:
 *   xn = rmsnorm(x, g1); q = xn Wq; k = xn Wk; v = xn Wv; a = attention(q, k|Kcache, v|Vcache, causal);
 *   h = x + a Wo; hn = rmsnorm(h, g2); y = h + (silu(hn Wg) * (hn Wu)) Wd
 * with T = seq tokens. kv_seq > seq (decode) reads a key/value cache of kv_seq positions, which is an
 * input of the chain; kv_seq == seq (prefill) uses the projected k and v.
 * Shape field `ranks`:
 *   0 (absent): the layer on one backend, buffers reinterpreted without transposes ([T, heads*64] is
 *     read as [1, heads, T, 64]): the cost is the real layer's, the values a fixed permutation of it,
 *     and the reference does the same.
 *   R >= 1 (1, 2 or 4): the tensor-parallel layer of core/chain.c over the R ranks of the launch, in
 *     the real head layout (attention layout=bshd; the KV cache [kv_seq, 4 kv heads, 64]). Rank r
 *     (shape field `rank`, from the launch) holds its column or row block of each weight and of the
 *     cache (hb_chain_shard), and two all_reduce steps sum the partial out- and down-projections;
 *     every rank ends with the whole y. R = 1 is the same layer on one device, without collectives:
 *     the one-GPU point of the scaling curve.
 * Modes: convert = f64 host tensors converted at every op boundary (weights too: a library storing
 * f64 converts each operand per call); f32 = host tensors in the compute dtype, H2D/D2H at every op
 * boundary; resident = weights and KV cache live on the device (uploaded once, before timing); per
 * call the layer's input is uploaded once and its output downloaded once.
 */
/* Tensors of the layer; the first HB_CHAIN_NINPUTS are its inputs (weights, x, the KV cache).
 * OR and DR: the all-reduced out- and down-projections (ranks > 1 only). */
enum { HB_CT_X, HB_CT_G1, HB_CT_G2, HB_CT_WQ, HB_CT_WK, HB_CT_WV, HB_CT_WO, HB_CT_WG, HB_CT_WU, HB_CT_WD, HB_CT_KC, HB_CT_VC,
       HB_CT_XN, HB_CT_Q, HB_CT_K, HB_CT_V, HB_CT_A, HB_CT_O, HB_CT_H, HB_CT_HN, HB_CT_GT, HB_CT_UP, HB_CT_SG, HB_CT_M, HB_CT_D,
       HB_CT_Y, HB_CT_OR, HB_CT_DR, HB_CT_COUNT };
#define HB_CHAIN_NINPUTS (HB_CT_VC + 1)

/* A step: op, input tensors (-1: none), output tensor. */
typedef struct hb_chain_step { hb_op op; int in[3]; int out; } hb_chain_step;
#define HB_CHAIN_NSTEPS 14   /* one device (ranks 0 or 1) */
#define HB_CHAIN_MAXSTEPS 16 /* over several ranks: the two all_reduce steps added */
/* The one-device layer's steps in order (ranks 0 and 1). */
extern const hb_chain_step hb_chain_steps[HB_CHAIN_NSTEPS];
/* Number of steps of a chain with shape s, and step i (NULL when out of range). */
int hb_chain_nsteps(const hb_shape *s);
const hb_chain_step *hb_chain_step_at(const hb_shape *s, int i);

/* Elements of tensor t (HB_CT_*) on one rank for chain shape s (its shard where the tensor is split;
 * 0 for the KV cache in prefill and for OR, DR on one device). */
size_t hb_chain_tensor_elems(int t, const hb_shape *s);
/* Where an input tensor t (< HB_CHAIN_NINPUTS) of rank s->rank lies in the whole layer's tensor: the
 * whole tensor is a row-major [full_rows, full_cols] matrix, the rank's shard its block of rows
 * [r0, r0 + rows) x columns [c0, c0 + cols), stored row-major and contiguous on the rank. Replicated
 * tensors (x, g1, g2, and every input when ranks <= 1) are the whole matrix. Returns 0, or -1 for a
 * tensor that is no input of this shape (the cache in prefill, an intermediate). */
typedef struct hb_chain_block { int64_t full_rows, full_cols, r0, c0, rows, cols; } hb_chain_block;
int hb_chain_shard(int t, const hb_shape *s, hb_chain_block *b);
/* A quantized weight t (HB_CT_WQ..HB_CT_WD) in dtype wd over several ranks: this rank's shard (the
 * block hb_chain_shard gives in the f32 weights' [k, n] layout) cut from the whole W[n,k] in wd's
 * blocks along k (`whole`, hb_quant_bytes(wd, n * k) bytes) into dst (hb_quant_bytes of the shard):
 * column-parallel shards are whole rows of W, row-parallel ones a run of each row's blocks. Returns 0;
 * -1 with why when the run does not start and end on a block (a rank's share of k is no whole number
 * of blocks) or t has no shard. whole/dst NULL: the check only. */
int hb_chain_qshard(int t, const hb_shape *s, hb_dtype wd, const void *whole, void *dst, char *why, size_t whylen);
/* The dtype tensor t (HB_CT_*) is stored in, in a chain of dtype d: d for f32, tf32, f16, bf16; for a
 * quantized d (the layer with quantized weights, core/quant.h) a projection's weight is in d's
 * llama.cpp mix (q4_k: Q4_K_M, attn_v and ffn_down in Q6_K as in layer 0; q5_k: Q5_K_M likewise;
 * q8_0, q6_k: every projection in d), stored as ggml does, W[n,k] with blocks along k, and every other
 * tensor in f32 (core/chain.c). */
hb_dtype hb_chain_weight_dtype(int t, hb_dtype d);
/* Bytes of one rank's projection weights (Wq ... Wd) of chain shape s stored as dtype d stores them
 * (4 per f32/tf32 element, 2 per f16/bf16, the blocks of a quantized mix): the layer's weight memory. */
double hb_chain_weight_bytes(const hb_shape *s, hb_dtype d);
/* Bytes of chain tensor t with shape s stored as wd (hb_dtype_size per element, or a quantized
 * format's blocks: 0 when its element count is no whole number of blocks). */
size_t hb_chain_tensor_bytes(int t, const hb_shape *s, hb_dtype wd);
/* The case of step i of chain case `chain`, and its real input tensors in[] (the attention step
 * reads the cache in decode). An all_reduce step carries the chain's ranks and rank and in_chain = 1.
 * In a quantized chain a projection step's dtype is its weight's (hb_chain_weight_dtype), every other
 * step's f32. */
hb_case hb_chain_step_case(const hb_case *chain, int i, int in[3]);

/* FLOPs and minimal bytes (every weight and activation read once, each output written once) of the
 * whole layer with shape s (seq, kv_seq; over ranks: all ranks together, the collectives included)
 * at elem_size bytes per element. */
double hb_chain_flops(const hb_shape *s);
double hb_chain_bytes(const hb_shape *s, size_t elem_size);

#ifdef __cplusplus
}
#endif
#endif
