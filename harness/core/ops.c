/*
 * ops.c - the op metadata table, shape parsing/formatting, the enum name tables of hybench.h, and the
 * decoder-layer chain (core/hybench.h) whose cost is the sum of its steps'.
 * FLOP counts follow the usual conventions (a multiply-add is 2 FLOPs, as in BLAS/cuBLAS and
 * benchdnn reports); transcendental functions count 1. Bytes follow STREAM/BabelStream: each input
 * read once, the output written once.
 */
#include "core/hybench.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/launch.h"
#include "core/opdesc.h"
#include "core/quant.h"

static const char *const status_names[HB_STATUS_COUNT] = {
    "ok", "skipped", "no_resource", "failed", "invalid", "wrong", "crashed", "timed_out"};
_Static_assert(sizeof status_names / sizeof status_names[0] == HB_STATUS_COUNT, "status table");

const char *hb_status_name(hb_status s) { return (unsigned)s < HB_STATUS_COUNT ? status_names[s] : "unknown"; }
hb_status hb_status_from_name(const char *s)
{
    for (int i = 0; i < HB_STATUS_COUNT; i++)
        if (s && !strcmp(s, status_names[i])) return (hb_status)i;
    return HB_STATUS_COUNT;
}

static const char *const family_names[HB_FAM_COUNT] = {
#define HB_X(e, n) n,
    HB_FAMILY_LIST(HB_X)
#undef HB_X
};
const char *hb_family_name(hb_family f) { return (unsigned)f < HB_FAM_COUNT ? family_names[f] : "unknown"; }

static const char *const dtype_names[HB_DTYPE_COUNT] = {"f32", "tf32", "f16", "bf16", "q8_0", "q4_k", "q5_k", "q6_k"};
static const char *const mode_names[HB_MODE_COUNT] = {"convert", "f32", "resident", "convert-device"};
static const char *const route_names[HB_ROUTE_COUNT] = {"pageable", "pinned", "mapped"};

const char *hb_dtype_name(hb_dtype d) { return (unsigned)d < HB_DTYPE_COUNT ? dtype_names[d] : "?"; }
const char *hb_mode_name(hb_mode m) { return (unsigned)m < HB_MODE_COUNT ? mode_names[m] : "?"; }
const char *hb_route_name(hb_route r) { return (unsigned)r < HB_ROUTE_COUNT ? route_names[r] : "?"; }

static int find_name(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}
int hb_dtype_parse(const char *s) { return find_name(s, dtype_names, HB_DTYPE_COUNT); }
int hb_mode_parse(const char *s) { return find_name(s, mode_names, HB_MODE_COUNT); }
int hb_route_parse(const char *s) { return find_name(s, route_names, HB_ROUTE_COUNT); }

/* The table is HB_OP_LIST, built once in core/opdesc.h (hb_op_row). */
const hb_op_info *hb_op_get(hb_op op) { return hb_op_row(op); }
int hb_op_parse(const char *name)
{
    for (int i = 0; name && i < HB_OP_COUNT; i++)
        if (!strcmp(name, hb_op_row((hb_op)i)->name)) return i;
    return -1;
}

/* ---- shapes ---- */
#define F(x, h) {#x, offsetof(hb_shape, x), h}
const hb_shape_field hb_shape_fields[] = {
    F(n, "elements (elementwise, sum_all); columns of B/C (matmul)"),
    F(m, "rows of A and C (matmul)"), F(k, "inner dimension (matmul)"),
    F(batch, "batch (bmm, conv2d, pooling, attention)"),
    F(c, "input channels"), F(h, "input height"), F(w, "input width"),
    F(oc, "output channels (conv2d)"), F(kh, "kernel height"), F(kw, "kernel width"),
    F(sh, "stride height"), F(sw, "stride width"), F(ph, "padding height"), F(pw, "padding width"),
    F(dh, "dilation height (1 = none)"), F(dw, "dilation width (1 = none)"), F(g, "groups"),
    F(rows, "rows (reductions, rmsnorm)"), F(cols, "columns (reduced axis)"),
    F(heads, "query heads"), F(kv_heads, "key/value heads"), F(seq, "query length"),
    F(kv_seq, "key/value length"), F(head_dim, "head dimension"), F(causal, "causal mask (0/1)"),
    F(ranks, "collective: communicator size (default: the launch's, core/launch.h); chain: tensor-parallel ranks (1, 2 or 4; absent: the one-device layer)"),
    F(rank, "collective: this process's rank (always the launch's)"),
    F(inplace, "collective: 1 = in place (output buffer is the input)"),
    F(path, "collective: 0 NCCL, 1 host-staged, 2 peer copies"),
    F(layout, "tensor layout, by name: conv2d nchw (default; OIHW weights) or nhwc (OHWI weights); attention bshd (default: bhsd)"),
    F(inter, "chain: feed-forward width (default 5632; heads, kv_heads, head_dim default 32, 4, 64)"),
};
#undef F
const int hb_shape_nfields = (int)(sizeof hb_shape_fields / sizeof hb_shape_fields[0]);

static int64_t *field_ptr(hb_shape *s, int i) { return (int64_t *)((char *)s + hb_shape_fields[i].offset); }
static int64_t field_get(const hb_shape *s, int i) { return *(const int64_t *)((const char *)s + hb_shape_fields[i].offset); }

/* Fields whose 0 hb_shape_normalize would replace by a default (batch, w, kw, sh, sw, dh, dw, g,
 * kv_heads, kv_seq): a 0 written for one of them has no meaning. Fields that need a value > 0 (n, m,
 * c, ...) are refused by hb_shape_normalize with "needs X > 0"; ph, pw and causal take 0. */
static int shape_zero_refused(int fi)
{
    static const char *const names[] = {"batch", "w", "kw", "sh", "sw", "dh", "dw", "g", "kv_heads", "kv_seq"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(hb_shape_fields[fi].name, names[i])) return 1;
    return 0;
}

static const char *const layout_names[HB_LAYOUT_COUNT] = {"nchw", "nhwc", "bshd"};
const char *hb_layout_name(int64_t layout)
{
    return layout >= 0 && layout < HB_LAYOUT_COUNT ? layout_names[layout] : "?";
}

hb_status hb_shape_parse(const char *text, hb_shape *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    const char *p = text;
    while (*p) {
        while (*p && (isspace((unsigned char)*p) || *p == ',')) p++;
        if (!*p) break;
        const char *k0 = p;
        while (*p && (isalnum((unsigned char)*p) || *p == '_')) p++;
        size_t klen = (size_t)(p - k0);
        if (*p != '=' || klen == 0) {
            snprintf(err, errlen, "shape \"%s\": expected key=value at \"%.20s\"", text, k0);
            return HB_EINVAL;
        }
        p++;
        int fi = -1;
        for (int i = 0; i < hb_shape_nfields; i++)
            if (strlen(hb_shape_fields[i].name) == klen && !strncmp(hb_shape_fields[i].name, k0, klen)) fi = i;
        if (fi < 0) {
            snprintf(err, errlen, "shape \"%s\": unknown field \"%.*s\"", text, (int)klen, k0);
            return HB_EINVAL;
        }
        if (!strcmp(hb_shape_fields[fi].name, "layout")) { /* a name, not a number */
            const char *v0 = p;
            while (*p && (isalnum((unsigned char)*p) || *p == '_')) p++;
            int li = -1;
            for (int i = 0; i < HB_LAYOUT_COUNT; i++)
                if (strlen(layout_names[i]) == (size_t)(p - v0) && !strncmp(layout_names[i], v0, (size_t)(p - v0))) li = i;
            if (li < 0 || (*p && !isspace((unsigned char)*p) && *p != ',')) {
                snprintf(err, errlen, "shape \"%s\": bad layout \"%.*s\" (nchw or nhwc for conv2d, bshd for attention)", text,
                         (int)strcspn(v0, " \t,"), v0);
                return HB_EINVAL;
            }
            s->layout = li;
            continue;
        }
        errno = 0;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno) {
            snprintf(err, errlen, "shape \"%s\": bad number for %s", text, hb_shape_fields[fi].name);
            return HB_EINVAL;
        }
        const char *fname = hb_shape_fields[fi].name;
        /* optional binary suffixes Ki/Mi/Gi and 2^N, multiplied with an overflow check (a shift of a
         * negative or too large value is undefined behaviour) */
        if (*end == '^' && v == 2) {
            char *e2;
            errno = 0;
            long long ex = strtoll(end + 1, &e2, 10);
            if (e2 == end + 1 || errno || ex < 0 || ex > 62) {
                snprintf(err, errlen, "shape \"%s\": bad exponent for %s (2^0 .. 2^62)", text, fname);
                return HB_EINVAL;
            }
            v = 1LL << ex;
            end = e2;
        } else if ((end[0] == 'K' || end[0] == 'M' || end[0] == 'G') && end[1] == 'i') {
            long long unit = end[0] == 'K' ? 1LL << 10 : end[0] == 'M' ? 1LL << 20 : 1LL << 30;
            if (v < 0) {
                snprintf(err, errlen, "shape \"%s\": negative size: %s=%.*s", text, fname, (int)(end + 2 - p), p);
                return HB_EINVAL;
            }
            long long prod;
            if (__builtin_mul_overflow(v, unit, &prod)) {
                snprintf(err, errlen, "shape \"%s\": %s=%.*s overflows a 64-bit size", text, fname, (int)(end + 2 - p), p);
                return HB_EINVAL;
            }
            v = prod;
            end += 2;
        }
        if (*end && !isspace((unsigned char)*end) && *end != ',') {
            snprintf(err, errlen, "shape \"%s\": trailing characters after %s", text, fname);
            return HB_EINVAL;
        }
        /* 0 is "not given" in an hb_shape: hb_shape_normalize replaces it by a default. A 0 written
         * for a field that has a default would be silently replaced, so it is refused here. */
        if (v == 0 && shape_zero_refused(fi)) {
            snprintf(err, errlen, "shape \"%s\": %s=0 is meaningless (it must be > 0; leave %s out for its default)",
                     text, fname, fname);
            return HB_EINVAL;
        }
        *field_ptr(s, fi) = v;
        p = end;
    }
    return HB_OK;
}

/* checked arithmetic: core/opdesc.h */
int64_t hb_shape_oh(const hb_shape *s) { return hb_out_dim_(s->h, s->ph, s->dh, s->kh, s->sh); }
int64_t hb_shape_ow(const hb_shape *s) { return hb_out_dim_(s->w, s->pw, s->dw, s->kw, s->sw); }

/* Largest element count hybench accepts for one tensor: 2^34 (64 GiB of f32). Beyond that a shape is
 * "absurd" for every device of today and is refused up front. */
#define HB_MAX_TENSOR_ELEMS (1LL << 34)

#define NEED(f) do { if (s->f <= 0) { snprintf(err, errlen, "%s needs %s > 0", info->name, #f); return HB_EINVAL; } } while (0)

hb_status hb_shape_normalize(hb_op op, hb_shape *s, char *err, size_t errlen)
{
    const hb_op_info *info = hb_op_get(op);
    if (!info) { snprintf(err, errlen, "unknown op %d", (int)op); return HB_EINVAL; }
    for (int i = 0; i < hb_shape_nfields; i++) {
        if (field_get(s, i) < 0) {
            snprintf(err, errlen, "%s: negative %s", info->name, hb_shape_fields[i].name);
            return HB_EINVAL;
        }
        if (field_get(s, i) > HB_MAX_TENSOR_ELEMS) {
            snprintf(err, errlen, "%s: absurd size: %s=%lld (limit 2^34)", info->name, hb_shape_fields[i].name,
                     (long long)field_get(s, i));
            return HB_EINVAL;
        }
    }
    if (s->layout >= HB_LAYOUT_COUNT) { snprintf(err, errlen, "%s: layout is nchw, nhwc or bshd", info->name); return HB_EINVAL; }
    if (s->layout != HB_LAYOUT_NCHW && !(op == HB_OP_CONV2D && s->layout == HB_LAYOUT_NHWC) &&
        !(op == HB_OP_ATTENTION && s->layout == HB_LAYOUT_BSHD)) {
        snprintf(err, errlen, "%s: layout=%s is not one of its layouts (conv2d: nchw or nhwc; attention: bshd)", info->name,
                 hb_layout_name(s->layout));
        return HB_EINVAL;
    }
    const int64_t batch0 = s->batch;
    hb_shape_defaults(op, s); /* core/opdesc.h; the checks follow */
    switch (info->kind) {
    case HB_SK_EW: case HB_SK_ALL:
        NEED(n); break;
    case HB_SK_BMM: if (batch0 <= 0) { snprintf(err, errlen, "%s needs batch > 0", info->name); return HB_EINVAL; }
        /* fall through */
    case HB_SK_MATMUL: NEED(m); NEED(n); NEED(k); break;
    case HB_SK_CONV2D: case HB_SK_POOL:
        NEED(c); NEED(h); NEED(kh);
        if (info->kind == HB_SK_CONV2D) {
            NEED(oc);
            if (s->c % s->g || s->oc % s->g) { snprintf(err, errlen, "conv2d: groups %lld must divide c and oc", (long long)s->g); return HB_EINVAL; }
        } else {
            if (s->dh != 1 || s->dw != 1 || s->g != 1) { snprintf(err, errlen, "%s: no dilation or groups", info->name); return HB_EINVAL; }
            if (s->ph * 2 > s->kh || s->pw * 2 > s->kw) { snprintf(err, errlen, "%s: padding over half the kernel", info->name); return HB_EINVAL; }
        }
        if (hb_shape_oh(s) <= 0 || hb_shape_ow(s) <= 0) { snprintf(err, errlen, "%s: kernel larger than padded input", info->name); return HB_EINVAL; }
        break;
    case HB_SK_ROWS: case HB_SK_NORM:
        NEED(rows); NEED(cols); break;
    case HB_SK_CHAIN:
        NEED(seq);
        if (s->kv_seq < s->seq) { snprintf(err, errlen, "chain: kv_seq must be >= seq"); return HB_EINVAL; }
        if (s->seq > 65536 || s->kv_seq > 65536) { snprintf(err, errlen, "chain: absurd size: seq and kv_seq are limited to 65536"); return HB_EINVAL; }
        {
            const hb_chain_dims d = hb_chain_dims_of(s);
            if (d.heads < 1 || d.kv_heads < 1 || d.head_dim < 1 || d.inter < 1 || d.heads % d.kv_heads) {
                snprintf(err, errlen, "chain: heads, kv_heads, head_dim and inter must be positive, kv_heads dividing heads");
                return HB_EINVAL;
            }
            if (d.hidden > 65536 || d.inter > 262144) {
                snprintf(err, errlen, "chain: absurd size: hidden (heads x head_dim) over 65536 or inter over 262144");
                return HB_EINVAL;
            }
            if (s->ranks != 0 && s->ranks != 1 && s->ranks != 2 && s->ranks != 4) {
                snprintf(err, errlen, "chain: ranks=%lld: the tensor-parallel layer runs over 1, 2 or 4 ranks", (long long)s->ranks);
                return HB_EINVAL;
            }
            if (s->ranks > 1 && (d.kv_heads % s->ranks || d.inter % s->ranks)) {
                snprintf(err, errlen, "chain: ranks=%lld must divide kv_heads (%lld) and inter (%lld): each rank holds whole heads",
                         (long long)s->ranks, (long long)d.kv_heads, (long long)d.inter);
                return HB_EINVAL;
            }
        }
        /* this process's place in the launch; a launch of another size skips the case (measure/chain.c) */
        s->rank = s->ranks > 0 && hb_launch_ranks() == s->ranks ? hb_launch_rank() : 0;
        return HB_OK;
    case HB_SK_COLL: case HB_SK_GATHER: case HB_SK_SCATTER: {
        NEED(n);
        s->rank = hb_launch_rank();
        if (s->ranks > 65535) { snprintf(err, errlen, "%s: ranks over 65535", info->name); return HB_EINVAL; }
        if (s->rank >= s->ranks) {
            snprintf(err, errlen, "%s: this process is rank %lld of the launch, the case has ranks=%lld", info->name,
                     (long long)s->rank, (long long)s->ranks);
            return HB_EINVAL;
        }
        if (s->inplace > 1) { snprintf(err, errlen, "%s: inplace is 0 or 1", info->name); return HB_EINVAL; }
        if (s->path >= HB_COLL_PATH_COUNT) { snprintf(err, errlen, "%s: path is 0 (nccl), 1 (host) or 2 (peer)", info->name); return HB_EINVAL; }
        break;
    }
    case HB_SK_ATTENTION:
        NEED(heads); NEED(seq); NEED(head_dim);
        if (s->heads % s->kv_heads) { snprintf(err, errlen, "attention: kv_heads must divide heads"); return HB_EINVAL; }
        if (s->causal > 1) { snprintf(err, errlen, "attention: causal is 0 or 1"); return HB_EINVAL; }
        if (s->causal && s->kv_seq < s->seq) { snprintf(err, errlen, "attention: causal needs kv_seq >= seq"); return HB_EINVAL; }
        break;
    default: break;
    }
    /* absurd sizes: any tensor over 2^34 elements, or products that overflow */
    for (int i = 0; i <= info->ninputs; i++) {
        int64_t v = i < info->ninputs ? hb_op_input_elems(op, s, i) : hb_op_output_elems(op, s);
        double e = (double)v;
        if (v <= 0 || e > (double)HB_MAX_TENSOR_ELEMS) {
            snprintf(err, errlen, "%s: absurd size: %s has %.3g elements (limit 2^34)", info->name,
                     i < info->ninputs ? "an input" : "the output", e);
            return HB_EINVAL;
        }
    }
    return HB_OK;
}

/* Fields each shape kind uses, for printing, in order. */
static const char *const kind_fields[HB_SK_COUNT] = {
    [HB_SK_EW] = "n", [HB_SK_MATMUL] = "m n k", [HB_SK_BMM] = "batch m n k",
    [HB_SK_CONV2D] = "batch c h w oc kh kw sh sw ph pw dh dw g layout", [HB_SK_POOL] = "batch c h w kh kw sh sw ph pw",
    [HB_SK_ROWS] = "rows cols", [HB_SK_ALL] = "n", [HB_SK_NORM] = "rows cols",
    [HB_SK_ATTENTION] = "batch heads kv_heads seq kv_seq head_dim causal layout", [HB_SK_CHAIN] = "seq kv_seq ranks heads kv_heads head_dim inter",
    [HB_SK_COLL] = "n ranks inplace path", [HB_SK_GATHER] = "n ranks inplace path", [HB_SK_SCATTER] = "n ranks rank inplace path",
};

char *hb_shape_format(hb_op op, const hb_shape *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    const char *list = hb_op_kind(op) < HB_SK_COUNT ? kind_fields[hb_op_kind(op)] : "";
    char name[16];
    while (*list) {
        int nl = 0;
        while (list[nl] && list[nl] != ' ') nl++;
        snprintf(name, sizeof name, "%.*s", nl, list);
        list += nl;
        while (*list == ' ') list++;
        for (int i = 0; i < hb_shape_nfields; i++) {
            if (strcmp(hb_shape_fields[i].name, name)) continue;
            int64_t v = field_get(s, i);
            /* omit defaults that carry no information */
            if ((!strcmp(name, "dh") || !strcmp(name, "dw") || !strcmp(name, "g")) && v == 1) break;
            if ((!strcmp(name, "causal") || !strcmp(name, "inplace") || !strcmp(name, "path") || !strcmp(name, "layout") ||
                 !strcmp(name, "ranks") || !strcmp(name, "inter") || (hb_op_kind(op) == HB_SK_CHAIN && (!strcmp(name, "heads") ||
                 !strcmp(name, "kv_heads") || !strcmp(name, "head_dim")))) &&
                v == 0)
                break;
            if (!strcmp(name, "layout")) { /* by name: layout=nhwc */
                if (used < len) used += (size_t)snprintf(buf + used, len - used, "%slayout=%s", used ? " " : "", hb_layout_name(v));
                break;
            }
            if (used < len)
                used += (size_t)snprintf(buf + used, len - used, "%s%s=%lld", used ? " " : "", name, (long long)v);
        }
    }
    return buf;
}

/* Sizes: core/opdesc.h (the plugins read the same code). */
int64_t hb_op_input_elems(hb_op op, const hb_shape *s, int i) { return i >= 0 ? hb_op_elems(op, s, i) : 0; }
int64_t hb_op_output_elems(hb_op op, const hb_shape *s) { return hb_op_elems(op, s, -1); }

/* Attention's work: b*h*s*s_kv*d; its row's 4 FLOPs per unit make FlashAttention's convention (QK^T
 * and PV are 2*seq*kv_seq*head_dim each per (batch, head)); causal masks count only the visible part;
 * softmax is not counted. */
static double attention_work(const hb_shape *s)
{
    double pairs = (double)s->seq * (double)s->kv_seq;
    if (s->causal) {
        /* query i sees i + (kv_seq - seq) + 1 keys */
        double off = (double)(s->kv_seq - s->seq);
        pairs = (double)s->seq * (off + 1) + (double)s->seq * ((double)s->seq - 1) / 2;
    }
    return (double)s->batch * (double)s->heads * pairs * (double)s->head_dim;
}

/* Units of work of one call, by shape kind: elements (elementwise, sum_all), m*n*k (matmul), output
 * elements x taps (conv2d: x c/g, pooling), rows*cols (rows, rmsnorm), (batch, head, query, key)
 * pairs x head_dim (attention), (ranks-1)*n (the additions of a sum over ranks). FLOPs are these times
 * the row's flops_per_unit. */
static double op_work(hb_op op, const hb_shape *s)
{
    const double n = (double)s->n, g = (double)(s->g > 0 ? s->g : 1);
    switch (hb_op_kind(op)) {
    case HB_SK_EW: case HB_SK_ALL: return n;
    case HB_SK_MATMUL: return (double)s->m * (double)s->n * (double)s->k;
    case HB_SK_BMM: return (double)s->batch * (double)s->m * (double)s->n * (double)s->k;
    case HB_SK_CONV2D: return (double)hb_op_output_elems(op, s) * (double)(s->c / (int64_t)g) * (double)s->kh * (double)s->kw;
    case HB_SK_POOL: return (double)hb_op_output_elems(op, s) * (double)s->kh * (double)s->kw;
    case HB_SK_ROWS: case HB_SK_NORM: return (double)s->rows * (double)s->cols;
    case HB_SK_ATTENTION: return attention_work(s);
    case HB_SK_COLL: case HB_SK_GATHER: case HB_SK_SCATTER: return (double)(s->ranks > 1 ? s->ranks - 1 : 0) * n;
    default: return 0;
    }
}

double hb_op_flops(hb_op op, const hb_shape *s)
{
    const hb_op_info *info = hb_op_get(op);
    if (!info) return 0;
    if (info->kind == HB_SK_CHAIN) return hb_chain_flops(s);
    return info->flops_per_unit * op_work(op, s);
}

double hb_op_bytes(hb_op op, const hb_shape *s, size_t elem_size)
{
    const hb_op_info *info = hb_op_get(op);
    if (!info) return 0;
    if (op == HB_OP_CHAIN) return hb_chain_bytes(s, elem_size);
    if (hb_op_is_collective(op)) return hb_coll_bytes(op, s, elem_size);
    double e = (double)hb_op_output_elems(op, s);
    for (int i = 0; i < info->ninputs; i++) {
        /* attention reads K and V: inputs 1 and 2 */
        e += (double)hb_op_input_elems(op, s, i);
    }
    return e * (double)elem_size;
}

/* Reduction length of one output element (how many products/terms are summed into it); 1 for the
 * ops whose row says they sum nothing (max, the pointwise ops, broadcast, all_gather). */
static double reduction_length(hb_op op, const hb_shape *s)
{
    const hb_op_info *info = hb_op_get(op);
    if (!info || !info->sums) return 1;
    switch (info->kind) {
    case HB_SK_MATMUL: case HB_SK_BMM: return (double)s->k;
    case HB_SK_CONV2D: return (double)(s->c / (s->g > 0 ? s->g : 1)) * (double)s->kh * (double)s->kw;
    case HB_SK_ROWS: case HB_SK_NORM: return (double)s->cols;
    case HB_SK_ALL: return (double)s->n;
    case HB_SK_ATTENTION: return (double)(s->kv_seq > s->head_dim ? s->kv_seq : s->head_dim);
    case HB_SK_COLL: case HB_SK_SCATTER: return (double)(s->ranks > 1 ? s->ranks : 1);
    default: return 1;
    }
}

/* Tolerances: f32 rounding grows like sqrt(L) * 2^-24 for a random-sign sum of length L (Higham,
 * "Accuracy and Stability of Numerical Algorithms", 2nd ed., sec. 3.1, probabilistic bound); we allow
 * 100x that, floor 1e-5, cap 1e-3. tf32 keeps 10 mantissa bits (2^-11 ~ 4.9e-4 per product),
 * f16 10 bits, bf16 7 bits (2^-8 ~ 3.9e-3); the caps follow the method notes' observed ranges
 * (tf32 ~3e-4, bf16 1e-3..1e-2) with headroom. The pointwise ops (sums = 0 in their row: no
 * reduction) get the f32 floor, 1e-5: their kernels' expf/exp2f/tanhf err by a few ulp (~1e-7). */
/* The quantized dtypes: the reference multiplies the activations by the weights' exact dequantized
 * values (core/quant.c) in f64, and a kernel may quantize each activation row to 8 bits as ggml does
 * (blocks of 32 or 256 elements, scale amax/127; kernels/cpu/cpu_qmatmul.c, ggml's Q8_0 / Q8_K). That
 * rounding errs by up to half a step, uniformly: an RMS of amax / (127 sqrt(12)) per element, and the
 * dot product's relative error is that over the activations' RMS (independent errors against random
 * weights). hybench's inputs are uniform on [-1, 1] (amax / rms = sqrt(3)): 3.9e-3 (2^-8); Gaussian
 * activations over a 256-element block (amax ~ 3 sigma): 6.8e-3. 1e-2 keeps headroom over both and
 * stays below ggml's own test-backend-ops bound for quantized matmul (NMSE 5e-4, a relative error of
 * 2.2e-2); a kernel that multiplies the dequantized weights in f32 errs ~1e-6. A wrong scale, min or
 * bit of a block moves its sub-block's products by O(1) relative: far above it. */
#define HB_QUANT_TOLERANCE 1e-2

double hb_op_tolerance(hb_op op, const hb_shape *s, hb_dtype d)
{
    /* the layer with quantized weights: seven projections in sequence, each free to round its
     * activations to 8 bits; the residual adds keep their errors from multiplying, not from adding
     * (the cpu's int8 kernels read 4e-3 to 9e-3 on TinyLlama-sized layers, H100 2026-11-28) */
    if (hb_dtype_is_quant(d)) return op == HB_OP_CHAIN ? 3 * HB_QUANT_TOLERANCE : HB_QUANT_TOLERANCE;
    switch (d) {
    case HB_TF32: return 5e-3;
    case HB_F16: return 1e-2;
    case HB_BF16: return 3e-2;
    default: break;
    }
    if (op == HB_OP_CHAIN) return 1e-3; /* 14 ops (16 over ranks), reductions up to 5632 long, softmax */
    double t = 100.0 * sqrt(reduction_length(op, s)) * 5.96e-8;
    if (t < 1e-5) t = 1e-5;
    if (t > 1e-3) t = 1e-3;
    return t;
}

/* ---- collectives ---- */
const char *hb_coll_path_name(int64_t path)
{
    static const char *const names[HB_COLL_PATH_COUNT] = {"nccl", "host", "peer"};
    return path >= 0 && path < HB_COLL_PATH_COUNT ? names[path] : "?";
}

int hb_op_is_collective(hb_op op) { return (unsigned)op < HB_OP_COUNT && hb_op_get(op)->family == HB_FAM_COLLECTIVE; }

double hb_coll_bytes(hb_op op, const hb_shape *s, size_t elem_size)
{
    double r = (double)(s->ranks > 0 ? s->ranks : 1), e = (double)s->n * (double)elem_size;
    switch (op) {
    case HB_OP_ALL_REDUCE: case HB_OP_BROADCAST: return e;
    case HB_OP_ALL_GATHER: case HB_OP_REDUCE_SCATTER: return e * r;
    default: return 0;
    }
}

double hb_coll_busbw_factor(hb_op op, const hb_shape *s)
{
    double n = (double)(s->ranks > 0 ? s->ranks : 1);
    switch (op) {
    case HB_OP_ALL_REDUCE: return 2 * (n - 1) / n;
    case HB_OP_ALL_GATHER: case HB_OP_REDUCE_SCATTER: return (n - 1) / n;
    case HB_OP_BROADCAST: return 1;
    default: return 0;
    }
}

char *hb_case_key(const hb_case *c, const char *backend, char *buf, size_t len)
{
    char sh[160];
    hb_shape_format(c->op, &c->shape, sh, sizeof sh);
    snprintf(buf, len, "%s|%s|%s|%s|%s|%s", hb_op_get(c->op) ? hb_op_get(c->op)->name : "?", sh, backend,
             hb_mode_name(c->mode), hb_route_name(c->route), hb_dtype_name(c->dtype));
    return buf;
}

int hb_quant_case_skip(const hb_case *c, char *reason, size_t rlen)
{
    if (c->op == HB_OP_DEQUANTIZE && !hb_dtype_is_quant(c->dtype)) {
        snprintf(reason, rlen, "dequantize takes a quantized dtype (q8_0, q4_k, q5_k, q6_k), not %s", hb_dtype_name(c->dtype));
        return 1;
    }
    if (!hb_dtype_is_quant(c->dtype)) return 0;
    const char *q = hb_dtype_name(c->dtype);
    if (c->op != HB_OP_MATMUL && c->op != HB_OP_CHAIN && c->op != HB_OP_DEQUANTIZE)
        snprintf(reason, rlen, "%s is a quantized-weight dtype: matmul, dequantize and the decoder-layer chain only (docs/quantized.md)", q);
    else if (c->mode == HB_MODE_CONVERT || c->mode == HB_MODE_CONVERT_DEVICE)
        snprintf(reason, rlen, "%s weights have no f64 form to convert from: %s mode does not apply to quantized dtypes "
                 "(f32 and resident do; docs/quantized.md)", q, hb_mode_name(c->mode));
    else if (c->op != HB_OP_CHAIN && !hb_quant_blocks_whole(c, reason, rlen))
        return 1;
    else
        return 0;
    return 1;
}

/* a quantized matmul: its weight (input 1) in blocks, activations and output f32 */
static int quant_matmul(const hb_case *c) { return hb_quant_input(c->op, c->dtype) >= 0; }

size_t hb_case_input_bytes(const hb_case *c, int i)
{
    const hb_op_info *info = hb_op_get(c->op);
    if (!info || i < 0 || i >= info->ninputs) return 0;
    if (quant_matmul(c) && i == hb_quant_input(c->op, c->dtype))
        return hb_quant_bytes(c->dtype, hb_op_input_elems(c->op, &c->shape, i));
    return (size_t)hb_op_input_elems(c->op, &c->shape, i) * hb_dtype_size(c->dtype);
}

size_t hb_case_output_bytes(const hb_case *c)
{
    return (size_t)hb_op_output_elems(c->op, &c->shape) * hb_dtype_size(c->dtype);
}

double hb_case_bytes(const hb_case *c)
{
    if (c->op == HB_OP_CHAIN && hb_dtype_is_quant(c->dtype)) {
        /* a quantized layer: each step as it runs (its projections' blocks in the layer's mix, the rest f32) */
        hb_case ch = *c;
        if (ch.shape.ranks > 0) { ch.shape.ranks = 1; ch.shape.rank = 0; }
        double b = 0;
        int in[3];
        for (int i = 0; i < hb_chain_nsteps(&ch.shape); i++) {
            hb_case st = hb_chain_step_case(&ch, i, in);
            b += hb_case_bytes(&st);
        }
        return b;
    }
    if (!quant_matmul(c)) return hb_op_bytes(c->op, &c->shape, hb_dtype_size(c->dtype));
    return (double)hb_case_input_bytes(c, 0) + (double)hb_case_input_bytes(c, 1) + (double)hb_case_output_bytes(c);
}

/* ---- the chain's cost (core/hybench.h): the sum of its steps' (core/chain.c) ---- */

/* The whole layer: the steps of one rank holding every shard (ranks = 1), in the chain's head layout. */
static hb_shape whole(const hb_shape *s)
{
    hb_shape w = *s;
    if (w.ranks > 0) { w.ranks = 1; w.rank = 0; }
    return w;
}

double hb_chain_flops(const hb_shape *s)
{
    hb_case ch = {.op = HB_OP_CHAIN, .shape = whole(s)};
    double f = 0;
    int in[3];
    for (int i = 0; i < hb_chain_nsteps(&ch.shape); i++) {
        hb_case c = hb_chain_step_case(&ch, i, in);
        f += hb_op_flops(c.op, &c.shape);
    }
    return f;
}

double hb_chain_bytes(const hb_shape *s, size_t elem_size)
{
    hb_case ch = {.op = HB_OP_CHAIN, .shape = whole(s)};
    double b = 0;
    int in[3];
    for (int i = 0; i < hb_chain_nsteps(&ch.shape); i++) {
        hb_case c = hb_chain_step_case(&ch, i, in);
        b += hb_op_bytes(c.op, &c.shape, elem_size);
    }
    return b;
}
