/*
 * gguf.c - the GGUF reader (gguf.h): maps the file, walks the header, the key/values and the tensor
 * infos with a bounds-checked cursor, then checks the layout (alignment, the data section, every
 * tensor inside it, no two overlapping, no duplicate key or tensor name). Written from the format's
 * definition (ggml docs/gguf.md); the type sizes are ggml's (ggml.c type_traits, ggml-common.h).
 */
#include "workload/gguf.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/quant.h"

/* ---- types ---- */
static const char *const vnames[HB_GGUF_V_COUNT] = { "u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                                     "bool", "string", "array", "u64", "i64", "f64" };
static const int vsizes[HB_GGUF_V_COUNT] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };
const char *hb_gguf_vtype_name(uint32_t t) { return t < HB_GGUF_V_COUNT ? vnames[t] : "?"; }
int hb_gguf_vtype_size(uint32_t t) { return t < HB_GGUF_V_COUNT ? vsizes[t] : 0; }

/* ggml_type id -> name, elements per block, bytes per block (ggml.c type_traits of 2026-08). */
static const struct { const char *name; int blck, bytes; } gtypes[] = {
    [0] = { "f32", 1, 4 },        [1] = { "f16", 1, 2 },         [2] = { "q4_0", 32, 18 },
    [3] = { "q4_1", 32, 20 },     [6] = { "q5_0", 32, 22 },      [7] = { "q5_1", 32, 24 },
    [8] = { "q8_0", 32, 34 },     [9] = { "q8_1", 32, 36 },      [10] = { "q2_k", 256, 84 },
    [11] = { "q3_k", 256, 110 },  [12] = { "q4_k", 256, 144 },   [13] = { "q5_k", 256, 176 },
    [14] = { "q6_k", 256, 210 },  [15] = { "q8_k", 256, 292 },   [16] = { "iq2_xxs", 256, 66 },
    [17] = { "iq2_xs", 256, 74 }, [18] = { "iq3_xxs", 256, 98 }, [19] = { "iq1_s", 256, 50 },
    [20] = { "iq4_nl", 32, 18 },  [21] = { "iq3_s", 256, 110 },  [22] = { "iq2_s", 256, 82 },
    [23] = { "iq4_xs", 256, 136 },[24] = { "i8", 1, 1 },         [25] = { "i16", 1, 2 },
    [26] = { "i32", 1, 4 },       [27] = { "i64", 1, 8 },        [28] = { "f64", 1, 8 },
    [29] = { "iq1_m", 256, 56 },  [30] = { "bf16", 1, 2 },       [34] = { "tq1_0", 256, 54 },
    [35] = { "tq2_0", 256, 66 },  [39] = { "mxfp4", 32, 17 },    [40] = { "nvfp4", 64, 36 },
    [41] = { "q1_0", 128, 18 },   [42] = { "q2_0", 64, 18 },
};
#define N_GTYPES (sizeof gtypes / sizeof gtypes[0])
int hb_gguf_type_block(uint32_t t, int *block_bytes)
{
    const int ok = t < N_GTYPES && gtypes[t].name;
    if (block_bytes) *block_bytes = ok ? gtypes[t].bytes : 0;
    return ok ? gtypes[t].blck : 0;
}
const char *hb_gguf_type_name(uint32_t t) { return t < N_GTYPES ? gtypes[t].name : NULL; }
int hb_gguf_type_dtype(uint32_t t)
{
    switch (t) {
    case HB_GGUF_F32: return HB_F32;
    case HB_GGUF_F16: return HB_F16;
    case HB_GGUF_BF16: return HB_BF16;
    case HB_GGUF_Q8_0: return HB_Q8_0;
    case HB_GGUF_Q4_K: return HB_Q4_K;
    case HB_GGUF_Q5_K: return HB_Q5_K;
    case HB_GGUF_Q6_K: return HB_Q6_K;
    default: return -1;
    }
}

/* ---- the handle ---- */
typedef struct kv { char *key; uint64_t key_offset; hb_gguf_value v; } kv;
struct hb_gguf {
    char *path;
    const uint8_t *map;
    size_t size;
    uint32_t version, alignment;
    uint64_t data_offset, data_size;
    kv *kv;
    size_t n_kv, cap_kv;
    size_t *kv_sorted;
    hb_gguf_tensor *t;
    size_t n_t, cap_t;
    size_t *t_sorted;
};

/* little-endian loads */
static uint16_t ld16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t ld32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t ld64(const uint8_t *p) { return (uint64_t)ld32(p) | (uint64_t)ld32(p + 4) << 32; }

/* ---- the cursor ---- */
typedef struct rd {
    const uint8_t *b;
    uint64_t size, pos;
    const char *path;
    char *err;
    size_t errlen;
    hb_status st;
} rd;

static int fail(rd *r, uint64_t off, hb_status st, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(rd *r, uint64_t off, hb_status st, const char *fmt, ...)
{
    if (r->st == HB_OK) {
        r->st = st;
        if (r->err && r->errlen) {
            int k = snprintf(r->err, r->errlen, "%s: offset %llu: ", r->path, (unsigned long long)off);
            if (k >= 0 && (size_t)k < r->errlen) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(r->err + k, r->errlen - (size_t)k, fmt, ap);
                va_end(ap);
            }
        }
    }
    return -1;
}
static uint64_t left(const rd *r) { return r->size - r->pos; }
/* n more bytes for `what`, or an error at the cursor */
static int need(rd *r, uint64_t n, const char *what)
{
    if (n <= left(r)) return 0;
    return fail(r, r->pos, HB_EINVAL, "the file ends inside %s (%llu bytes needed, %llu left)", what,
                (unsigned long long)n, (unsigned long long)left(r));
}
static int get32(rd *r, uint32_t *v, const char *what)
{
    if (need(r, 4, what)) return -1;
    *v = ld32(r->b + r->pos);
    r->pos += 4;
    return 0;
}
static int get64(rd *r, uint64_t *v, const char *what)
{
    if (need(r, 8, what)) return -1;
    *v = ld64(r->b + r->pos);
    r->pos += 8;
    return 0;
}
/* A string: its length (at off) and bytes; *s points at them. */
static int get_str(rd *r, const uint8_t **s, uint64_t *len, const char *what)
{
    const uint64_t off = r->pos;
    if (get64(r, len, what)) return -1;
    if (*len > left(r))
        return fail(r, off, HB_EINVAL, "%s of %llu bytes runs past the end of the file (%llu bytes left)", what,
                    (unsigned long long)*len, (unsigned long long)left(r));
    *s = r->b + r->pos;
    r->pos += *len;
    return 0;
}

/* Read one value of type t at the cursor (depth: arrays around it); *v described when v != NULL. An
 * array of strings or arrays at depth 0 gets its index of element offsets (malloc'd into *v). */
static int read_value(rd *r, uint32_t t, int depth, hb_gguf_value *v)
{
    const uint64_t off = r->pos;
    hb_gguf_value x = { .type = t, .n = 1, .offset = off };
    if (t >= HB_GGUF_V_COUNT) return fail(r, off, HB_EINVAL, "value type %u unknown (0..12)", t);
    if (vsizes[t]) {
        if (need(r, (uint64_t)vsizes[t], vnames[t])) return -1;
        if (t == HB_GGUF_V_BOOL && r->b[r->pos] > 1)
            return fail(r, off, HB_EINVAL, "bool of value %u (must be 0 or 1)", r->b[r->pos]);
        x.p = r->b + r->pos;
        r->pos += (uint64_t)vsizes[t];
    } else if (t == HB_GGUF_V_STRING) {
        if (get_str(r, &x.p, &x.n, "string")) return -1;
    } else { /* array: u32 element type, u64 count, the elements */
        if (depth >= HB_GGUF_MAX_NEST) return fail(r, off, HB_EINVAL, "arrays nested deeper than %d", HB_GGUF_MAX_NEST);
        if (get32(r, &x.elem_type, "an array's element type")) return -1;
        if (x.elem_type >= HB_GGUF_V_COUNT) return fail(r, off, HB_EINVAL, "array element type %u unknown (0..12)", x.elem_type);
        if (get64(r, &x.n, "an array's length")) return -1;
        const uint64_t es = (uint64_t)vsizes[x.elem_type], min = es ? es : x.elem_type == HB_GGUF_V_STRING ? 8 : 12;
        if (x.n > left(r) / min)
            return fail(r, off + 4, HB_EINVAL, "array of %llu %s%s runs past the end of the file (%llu bytes left%s)",
                        (unsigned long long)x.n, vnames[x.elem_type], es ? "" : "s", (unsigned long long)left(r),
                        es ? "" : ", each element at least 8");
        x.p = r->b + r->pos;
        if (es) {
            if (x.elem_type == HB_GGUF_V_BOOL)
                for (uint64_t i = 0; i < x.n; i++)
                    if (x.p[i] > 1) return fail(r, r->pos + i, HB_EINVAL, "bool element %llu of value %u (must be 0 or 1)", (unsigned long long)i, x.p[i]);
            r->pos += x.n * es;
        } else {
            uint64_t *index = NULL;
            if (depth == 0 && v && x.n && !(index = malloc(x.n * sizeof *index)))
                return fail(r, off, HB_ENOMEM, "out of memory for an array of %llu", (unsigned long long)x.n);
            for (uint64_t i = 0; i < x.n; i++) {
                if (index) index[i] = r->pos - (uint64_t)(x.p - r->b);
                if (read_value(r, x.elem_type, depth + 1, NULL)) { free(index); return -1; }
            }
            x.index = index;
        }
    }
    if (v) *v = x;
    return 0;
}

/* A key: 1..65535 printable ASCII bytes (spec: ASCII; hierarchical lower_snake_case is not enforced). */
static int read_key(rd *r, char **key, const char *what)
{
    const uint64_t off = r->pos;
    const uint8_t *s = NULL;
    uint64_t len;
    if (get_str(r, &s, &len, what)) return -1;
    if (len == 0) return fail(r, off, HB_EINVAL, "empty %s", what);
    if (len > HB_GGUF_MAX_KEY) return fail(r, off, HB_EINVAL, "%s of %llu bytes (at most %d)", what, (unsigned long long)len, HB_GGUF_MAX_KEY);
    for (uint64_t i = 0; i < len; i++)
        if (s[i] < 0x21 || s[i] > 0x7e)
            return fail(r, off + 8 + i, HB_EINVAL, "%s byte %llu is 0x%02x, not printable ASCII", what, (unsigned long long)i, s[i]);
    if (!(*key = malloc(len + 1))) return fail(r, off, HB_ENOMEM, "out of memory");
    memcpy(*key, s, len);
    (*key)[len] = 0;
    return 0;
}

static int grow(void **v, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return 0;
    size_t c = *cap ? 2 * *cap : 16;
    void *p = realloc(*v, c * elem);
    if (!p) return -1;
    *v = p;
    *cap = c;
    return 0;
}

/* comparisons for qsort_r (glibc; _GNU_SOURCE): by key, by tensor name, by data offset; ties by index */
static int cmp_key(const void *a, const void *b, void *ctx)
{
    const hb_gguf *g = ctx;
    const size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const int c = strcmp(g->kv[i].key, g->kv[j].key);
    return c ? c : (i > j) - (i < j);
}
static int cmp_name(const void *a, const void *b, void *ctx)
{
    const hb_gguf *g = ctx;
    const size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const int c = strcmp(g->t[i].name, g->t[j].name);
    return c ? c : (i > j) - (i < j);
}
static int cmp_off(const void *a, const void *b, void *ctx)
{
    const hb_gguf *g = ctx;
    const size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const uint64_t x = g->t[i].offset, y = g->t[j].offset;
    return x != y ? (x > y) - (x < y) : (i > j) - (i < j);
}
static void sort_idx(hb_gguf *g, size_t *idx, size_t n, int (*cmp)(const void *, const void *, void *))
{
    for (size_t i = 0; i < n; i++) idx[i] = i;
    if (n > 1) qsort_r(idx, n, sizeof *idx, cmp, g);
}

static int read_header(rd *r, hb_gguf *g, uint64_t *nt, uint64_t *nkv)
{
    if (need(r, 4, "the magic")) return -1;
    if (memcmp(r->b, "GGUF", 4))
        return fail(r, 0, HB_EINVAL, "not a GGUF file: the magic is %02x %02x %02x %02x, not \"GGUF\"", r->b[0], r->b[1], r->b[2], r->b[3]);
    r->pos = 4;
    if (get32(r, &g->version, "the version")) return -1;
    if (g->version == 1) return fail(r, 4, HB_EINVAL, "GGUF version 1 (32-bit counts) is not read; versions 2 and 3 are");
    if (g->version == 0x02000000u || g->version == 0x03000000u)
        return fail(r, 4, HB_EINVAL, "a big-endian GGUF file (version %u byte-swapped); only little-endian files are read",
                    g->version >> 24);
    if (g->version != 2 && g->version != 3) return fail(r, 4, HB_EINVAL, "GGUF version %u unknown (2 and 3 are read)", g->version);
    if (get64(r, nt, "the tensor count") || get64(r, nkv, "the metadata key/value count")) return -1;
    /* counts that cannot fit: a tensor info takes at least 24 bytes (name length, n_dims, type, offset),
     * a key/value at least 13 (key length, type, a 1-byte value) */
    const uint64_t rest = left(r);
    if (*nt > rest / 24)
        return fail(r, 8, HB_EINVAL, "tensor_count %llu cannot fit: each tensor info takes at least 24 bytes and %llu follow the header",
                    (unsigned long long)*nt, (unsigned long long)rest);
    if (*nkv > (rest - *nt * 24) / 13)
        return fail(r, 16, HB_EINVAL, "metadata_kv_count %llu cannot fit: each key/value takes at least 13 bytes and %llu follow the header (less %llu for the tensor infos)",
                    (unsigned long long)*nkv, (unsigned long long)rest, (unsigned long long)(*nt * 24));
    return 0;
}

static int read_kvs(rd *r, hb_gguf *g, uint64_t nkv)
{
    for (uint64_t i = 0; i < nkv; i++) {
        if (grow((void **)&g->kv, &g->cap_kv, g->n_kv, sizeof *g->kv)) return fail(r, r->pos, HB_ENOMEM, "out of memory");
        kv *e = &g->kv[g->n_kv];
        memset(e, 0, sizeof *e);
        e->key_offset = r->pos;
        if (read_key(r, &e->key, "key")) return -1;
        g->n_kv++;
        uint32_t t;
        const uint64_t toff = r->pos;
        if (get32(r, &t, "a value type")) return -1;
        if (t >= HB_GGUF_V_COUNT) return fail(r, toff, HB_EINVAL, "key %s: value type %u unknown (0..12)", e->key, t);
        if (read_value(r, t, 0, &e->v)) return -1;
    }
    g->kv_sorted = malloc((g->n_kv ? g->n_kv : 1) * sizeof *g->kv_sorted);
    if (!g->kv_sorted) return fail(r, r->pos, HB_ENOMEM, "out of memory");
    sort_idx(g, g->kv_sorted, g->n_kv, cmp_key);
    for (size_t i = 1; i < g->n_kv; i++) {
        const kv *a = &g->kv[g->kv_sorted[i - 1]], *b = &g->kv[g->kv_sorted[i]];
        if (!strcmp(a->key, b->key))
            return fail(r, b->key_offset, HB_EINVAL, "key %s again (first at offset %llu)", b->key, (unsigned long long)a->key_offset);
    }
    g->alignment = HB_GGUF_DEFAULT_ALIGNMENT;
    const hb_gguf_value *al = hb_gguf_find_kv(g, "general.alignment");
    if (al) {
        if (al->type != HB_GGUF_V_U32) return fail(r, al->offset, HB_EINVAL, "general.alignment has type %s, not u32", vnames[al->type]);
        const uint32_t a = ld32(al->p);
        if (a == 0 || (a & (a - 1)))
            return fail(r, al->offset, HB_EINVAL, "general.alignment %u is not a power of two", a);
        g->alignment = a;
    }
    return 0;
}

static int read_tensor_infos(rd *r, hb_gguf *g, uint64_t nt)
{
    for (uint64_t i = 0; i < nt; i++) {
        if (grow((void **)&g->t, &g->cap_t, g->n_t, sizeof *g->t)) return fail(r, r->pos, HB_ENOMEM, "out of memory");
        hb_gguf_tensor *t = &g->t[g->n_t];
        memset(t, 0, sizeof *t);
        t->info_offset = r->pos;
        const uint8_t *s = NULL;
        uint64_t len;
        if (get_str(r, &s, &len, "a tensor name")) return -1;
        if (len == 0 || len > HB_GGUF_MAX_NAME)
            return fail(r, t->info_offset, HB_EINVAL, "tensor name of %llu bytes (1..%d)", (unsigned long long)len, HB_GGUF_MAX_NAME);
        if (memchr(s, 0, len)) return fail(r, t->info_offset + 8 + (uint64_t)((const uint8_t *)memchr(s, 0, len) - s), HB_EINVAL, "NUL byte in a tensor name");
        char *name = malloc(len + 1);
        if (!name) return fail(r, t->info_offset, HB_ENOMEM, "out of memory");
        memcpy(name, s, len);
        name[len] = 0;
        t->name = name;
        g->n_t++;
        uint32_t nd;
        const uint64_t ndoff = r->pos;
        if (get32(r, &nd, "a tensor's n_dims")) return -1;
        if (nd == 0 || nd > HB_GGUF_MAX_DIMS)
            return fail(r, ndoff, HB_EINVAL, "tensor %s: n_dims %u (1..%d)", name, nd, HB_GGUF_MAX_DIMS);
        t->n_dims = (int)nd;
        const uint64_t dimoff = r->pos;
        uint64_t count = 1;
        for (int d = 0; d < HB_GGUF_MAX_DIMS; d++) t->ne[d] = 1;
        for (uint32_t d = 0; d < nd; d++) {
            uint64_t x;
            const uint64_t off = r->pos;
            if (get64(r, &x, "a tensor's dimensions")) return -1;
            if (x == 0) return fail(r, off, HB_EINVAL, "tensor %s: dimension %u is 0", name, d);
            if (x > (uint64_t)INT64_MAX / count)
                return fail(r, off, HB_EINVAL, "tensor %s: dimension %u (%llu) makes the element count overflow 63 bits", name, d, (unsigned long long)x);
            count *= x;
            t->ne[d] = (int64_t)x;
        }
        const uint64_t toff = r->pos;
        if (get32(r, &t->ggml_type, "a tensor's type")) return -1;
        int bb;
        const int blck = hb_gguf_type_block(t->ggml_type, &bb);
        if (!blck) return fail(r, toff, HB_EINVAL, "tensor %s: ggml type %u unknown", name, t->ggml_type);
        if (t->ne[0] % blck)
            return fail(r, dimoff, HB_EINVAL, "tensor %s: ne0 %lld is not a multiple of %s's block of %d", name, (long long)t->ne[0],
                        gtypes[t->ggml_type].name, blck);
        if (count / (uint64_t)blck > UINT64_MAX / (uint64_t)bb)
            return fail(r, dimoff, HB_EINVAL, "tensor %s: %llu elements of %s overflow a 64-bit byte count", name, (unsigned long long)count,
                        gtypes[t->ggml_type].name);
        t->bytes = count / (uint64_t)blck * (uint64_t)bb;
        t->dtype = hb_gguf_type_dtype(t->ggml_type);
        const uint64_t ooff = r->pos;
        if (get64(r, &t->offset, "a tensor's data offset")) return -1;
        if (t->offset % g->alignment)
            return fail(r, ooff, HB_EINVAL, "tensor %s: data offset %llu is not a multiple of the alignment %u", name,
                        (unsigned long long)t->offset, g->alignment);
    }
    return 0;
}

/* The data section and every tensor in it; no duplicate names, no overlap. */
static int check_layout(rd *r, hb_gguf *g)
{
    const uint64_t end = r->pos, a = g->alignment;
    g->data_offset = end % a ? end + (a - end % a) : end; /* end < 2^63 (a file size): no overflow */
    if (g->n_t == 0) {
        g->data_size = g->data_offset <= r->size ? r->size - g->data_offset : 0;
        if (g->data_offset > r->size) g->data_offset = r->size;
    } else {
        if (g->data_offset > r->size)
            return fail(r, end, HB_EINVAL, "the file ends (at %llu) before its data section (at %llu, the tensor infos' end aligned to %u)",
                        (unsigned long long)r->size, (unsigned long long)g->data_offset, g->alignment);
        g->data_size = r->size - g->data_offset;
    }
    for (size_t i = 0; i < g->n_t; i++) {
        hb_gguf_tensor *t = &g->t[i];
        const uint64_t ooff = t->info_offset + 8 + strlen(t->name) + 4 + 8 * (uint64_t)t->n_dims + 4;
        if (t->offset > g->data_size || t->bytes > g->data_size - t->offset)
            return fail(r, ooff, HB_EINVAL, "tensor %s: its %llu bytes at data offset %llu run past the data section's %llu bytes (the file ends at %llu)",
                        t->name, (unsigned long long)t->bytes, (unsigned long long)t->offset, (unsigned long long)g->data_size,
                        (unsigned long long)r->size);
        t->file_offset = g->data_offset + t->offset;
        t->data = r->b + t->file_offset;
    }
    size_t *idx = malloc((g->n_t ? g->n_t : 1) * sizeof *idx);
    g->t_sorted = malloc((g->n_t ? g->n_t : 1) * sizeof *g->t_sorted);
    if (!idx || !g->t_sorted) { free(idx); return fail(r, end, HB_ENOMEM, "out of memory"); }
    sort_idx(g, g->t_sorted, g->n_t, cmp_name);
    for (size_t i = 1; i < g->n_t; i++) {
        const hb_gguf_tensor *x = &g->t[g->t_sorted[i - 1]], *y = &g->t[g->t_sorted[i]];
        if (!strcmp(x->name, y->name)) {
            free(idx);
            return fail(r, y->info_offset, HB_EINVAL, "tensor name %s again (first at offset %llu)", y->name, (unsigned long long)x->info_offset);
        }
    }
    sort_idx(g, idx, g->n_t, cmp_off);
    for (size_t i = 1; i < g->n_t; i++) {
        const hb_gguf_tensor *x = &g->t[idx[i - 1]], *y = &g->t[idx[i]];
        if (y->offset < x->offset + x->bytes) {
            const uint64_t ooff = y->info_offset + 8 + strlen(y->name) + 4 + 8 * (uint64_t)y->n_dims + 4;
            free(idx);
            return fail(r, ooff, HB_EINVAL, "tensor %s: data [%llu, %llu) overlaps tensor %s's [%llu, %llu)", y->name,
                        (unsigned long long)y->offset, (unsigned long long)(y->offset + y->bytes), x->name,
                        (unsigned long long)x->offset, (unsigned long long)(x->offset + x->bytes));
        }
    }
    free(idx);
    return 0;
}

void hb_gguf_close(hb_gguf *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->n_kv; i++) {
        free(g->kv[i].key);
        free((void *)g->kv[i].v.index);
    }
    for (size_t i = 0; i < g->n_t; i++) free((void *)g->t[i].name);
    free(g->kv);
    free(g->kv_sorted);
    free(g->t);
    free(g->t_sorted);
    if (g->map && g->size) munmap((void *)g->map, g->size);
    free(g->path);
    free(g);
}

hb_status hb_gguf_open(const char *path, hb_gguf **out, char *err, size_t errlen)
{
    *out = NULL;
    if (err && errlen) err[0] = 0;
    rd r = { .path = path, .err = err, .errlen = errlen };
    hb_gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->path = strdup(path))) {
        free(g);
        fail(&r, 0, HB_ENOMEM, "out of memory");
        return HB_ENOMEM;
    }
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fail(&r, 0, HB_EDEVICE, "cannot open: %s", strerror(errno));
        if (fd >= 0) close(fd);
        hb_gguf_close(g);
        return HB_EDEVICE;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        fail(&r, 0, HB_EDEVICE, "not a regular file");
        hb_gguf_close(g);
        return HB_EDEVICE;
    }
    g->size = (size_t)st.st_size;
    if (g->size) {
        void *m = mmap(NULL, g->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            const int e = errno;
            close(fd);
            g->size = 0;
            fail(&r, 0, e == ENOMEM ? HB_ENOMEM : HB_EDEVICE, "cannot map: %s", strerror(e));
            hb_gguf_close(g);
            return r.st;
        }
        g->map = m;
    }
    close(fd);
    r.b = g->map ? g->map : (const uint8_t *)"";
    r.size = g->size;
    uint64_t nt = 0, nkv = 0;
    if (read_header(&r, g, &nt, &nkv) || read_kvs(&r, g, nkv) || read_tensor_infos(&r, g, nt) || check_layout(&r, g)) {
        hb_gguf_close(g);
        return r.st;
    }
    *out = g;
    return HB_OK;
}

uint32_t hb_gguf_version(const hb_gguf *g) { return g->version; }
uint32_t hb_gguf_alignment(const hb_gguf *g) { return g->alignment; }
uint64_t hb_gguf_data_offset(const hb_gguf *g) { return g->data_offset; }
const char *hb_gguf_path(const hb_gguf *g) { return g->path; }
size_t hb_gguf_n_tensors(const hb_gguf *g) { return g->n_t; }
const hb_gguf_tensor *hb_gguf_tensor_at(const hb_gguf *g, size_t i) { return i < g->n_t ? &g->t[i] : NULL; }
size_t hb_gguf_n_kv(const hb_gguf *g) { return g->n_kv; }
const char *hb_gguf_kv_key(const hb_gguf *g, size_t i) { return i < g->n_kv ? g->kv[i].key : NULL; }
const hb_gguf_value *hb_gguf_kv_value(const hb_gguf *g, size_t i) { return i < g->n_kv ? &g->kv[i].v : NULL; }

const hb_gguf_tensor *hb_gguf_find_tensor(const hb_gguf *g, const char *name)
{
    size_t lo = 0, hi = g->n_t;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(g->t[g->t_sorted[mid]].name, name);
        if (!c) return &g->t[g->t_sorted[mid]];
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return NULL;
}
const hb_gguf_value *hb_gguf_find_kv(const hb_gguf *g, const char *key)
{
    size_t lo = 0, hi = g->n_kv;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(g->kv[g->kv_sorted[mid]].key, key);
        if (!c) return &g->kv[g->kv_sorted[mid]].v;
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return NULL;
}

static hb_status gerr(const hb_gguf *g, char *err, size_t errlen, hb_status st, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static hb_status gerr(const hb_gguf *g, char *err, size_t errlen, hb_status st, const char *fmt, ...)
{
    if (err && errlen) {
        int k = snprintf(err, errlen, "%s: ", g->path);
        if (k >= 0 && (size_t)k < errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return st;
}

hb_status hb_gguf_get_tensor(const hb_gguf *g, const char *name, int want, const hb_gguf_tensor **out, char *err, size_t errlen)
{
    const hb_gguf_tensor *t = hb_gguf_find_tensor(g, name);
    if (!t) return gerr(g, err, errlen, HB_EINVAL, "no tensor named %s", name);
    if (t->dtype < 0)
        return gerr(g, err, errlen, HB_ESKIP, "offset %llu: tensor %s is %s, which hybench does not compute",
                    (unsigned long long)t->info_offset, name, gtypes[t->ggml_type].name);
    if (want >= 0 && t->dtype != want)
        return gerr(g, err, errlen, HB_EINVAL, "offset %llu: tensor %s is %s, not %s", (unsigned long long)t->info_offset, name,
                    gtypes[t->ggml_type].name, hb_dtype_name((hb_dtype)want));
    *out = t;
    return HB_OK;
}

/* ---- values ---- */
int hb_gguf_value_u64(const hb_gguf_value *v, uint64_t *out)
{
    int64_t s;
    switch (v->type) {
    case HB_GGUF_V_U8: *out = v->p[0]; return 0;
    case HB_GGUF_V_U16: *out = ld16(v->p); return 0;
    case HB_GGUF_V_U32: *out = ld32(v->p); return 0;
    case HB_GGUF_V_U64: *out = ld64(v->p); return 0;
    case HB_GGUF_V_I8: case HB_GGUF_V_I16: case HB_GGUF_V_I32: case HB_GGUF_V_I64:
        if (hb_gguf_value_i64(v, &s) || s < 0) return -1;
        *out = (uint64_t)s;
        return 0;
    default: return -1;
    }
}
int hb_gguf_value_i64(const hb_gguf_value *v, int64_t *out)
{
    uint64_t u;
    switch (v->type) {
    case HB_GGUF_V_I8: *out = (int8_t)v->p[0]; return 0;
    case HB_GGUF_V_I16: *out = (int16_t)ld16(v->p); return 0;
    case HB_GGUF_V_I32: *out = (int32_t)ld32(v->p); return 0;
    case HB_GGUF_V_I64: *out = (int64_t)ld64(v->p); return 0;
    case HB_GGUF_V_U8: case HB_GGUF_V_U16: case HB_GGUF_V_U32: case HB_GGUF_V_U64:
        if (hb_gguf_value_u64(v, &u) || u > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)u;
        return 0;
    default: return -1;
    }
}
int hb_gguf_value_f64(const hb_gguf_value *v, double *out)
{
    if (v->type == HB_GGUF_V_F32) { uint32_t b = ld32(v->p); float f; memcpy(&f, &b, 4); *out = (double)f; return 0; }
    if (v->type == HB_GGUF_V_F64) { uint64_t b = ld64(v->p); memcpy(out, &b, 8); return 0; }
    return -1;
}
int hb_gguf_value_bool(const hb_gguf_value *v, int *out)
{
    if (v->type != HB_GGUF_V_BOOL) return -1;
    *out = v->p[0];
    return 0;
}

/* Bytes of the encoded value at p of type t (already validated by the reader). */
static uint64_t value_span(const uint8_t *p, uint32_t t)
{
    if (vsizes[t]) return (uint64_t)vsizes[t];
    if (t == HB_GGUF_V_STRING) return 8 + ld64(p);
    const uint32_t et = ld32(p);
    const uint64_t n = ld64(p + 4);
    if (vsizes[et]) return 12 + n * (uint64_t)vsizes[et];
    uint64_t k = 12;
    for (uint64_t i = 0; i < n; i++) k += value_span(p + k, et);
    return k;
}

hb_status hb_gguf_array_elem(const hb_gguf_value *arr, uint64_t i, hb_gguf_value *out)
{
    if (arr->type != HB_GGUF_V_ARRAY || i >= arr->n) return HB_EINVAL;
    const uint32_t et = arr->elem_type;
    const uint64_t first = arr->offset + 12;
    uint64_t k;
    if (vsizes[et]) k = i * (uint64_t)vsizes[et];
    else if (arr->index) k = arr->index[i];
    else {
        k = 0;
        for (uint64_t j = 0; j < i; j++) k += value_span(arr->p + k, et);
    }
    const uint8_t *p = arr->p + k;
    hb_gguf_value x = { .type = et, .n = 1, .p = p, .offset = first + k };
    if (et == HB_GGUF_V_STRING) x.n = ld64(p), x.p = p + 8;
    else if (et == HB_GGUF_V_ARRAY) x.elem_type = ld32(p), x.n = ld64(p + 4), x.p = p + 12;
    *out = x;
    return HB_OK;
}

/* The value of key as text for messages ("u32 7", "string", "array of 3 i32"). */
static void describe(const hb_gguf_value *v, char *buf, size_t n)
{
    uint64_t u;
    int64_t s;
    double f;
    if (!hb_gguf_value_u64(v, &u)) snprintf(buf, n, "%s %llu", vnames[v->type], (unsigned long long)u);
    else if (!hb_gguf_value_i64(v, &s)) snprintf(buf, n, "%s %lld", vnames[v->type], (long long)s);
    else if (!hb_gguf_value_f64(v, &f)) snprintf(buf, n, "%s %g", vnames[v->type], f);
    else if (v->type == HB_GGUF_V_ARRAY) snprintf(buf, n, "an array of %llu %s", (unsigned long long)v->n, vnames[v->elem_type]);
    else snprintf(buf, n, "a %s", vnames[v->type]);
}
static hb_status lookup(const hb_gguf *g, const char *key, const hb_gguf_value **v, char *err, size_t errlen)
{
    if (!(*v = hb_gguf_find_kv(g, key))) return gerr(g, err, errlen, HB_EINVAL, "no metadata key %s", key);
    return HB_OK;
}
static hb_status wrong(const hb_gguf *g, const char *key, const hb_gguf_value *v, const char *wanted, char *err, size_t errlen)
{
    char d[96];
    describe(v, d, sizeof d);
    return gerr(g, err, errlen, HB_EINVAL, "offset %llu: key %s is %s, wanted %s", (unsigned long long)v->offset, key, d, wanted);
}

hb_status hb_gguf_get_u64(const hb_gguf *g, const char *key, uint64_t *out, char *err, size_t errlen)
{
    const hb_gguf_value *v;
    uint64_t u;
    if (lookup(g, key, &v, err, errlen)) return HB_EINVAL;
    if (hb_gguf_value_u64(v, &u)) return wrong(g, key, v, "a non-negative integer", err, errlen);
    *out = u;
    return HB_OK;
}
hb_status hb_gguf_get_u32(const hb_gguf *g, const char *key, uint32_t *out, char *err, size_t errlen)
{
    const hb_gguf_value *v;
    uint64_t u;
    if (lookup(g, key, &v, err, errlen)) return HB_EINVAL;
    if (hb_gguf_value_u64(v, &u) || u > UINT32_MAX) return wrong(g, key, v, "an integer that fits u32", err, errlen);
    *out = (uint32_t)u;
    return HB_OK;
}
hb_status hb_gguf_get_i32(const hb_gguf *g, const char *key, int32_t *out, char *err, size_t errlen)
{
    const hb_gguf_value *v;
    int64_t s;
    if (lookup(g, key, &v, err, errlen)) return HB_EINVAL;
    if (hb_gguf_value_i64(v, &s) || s < INT32_MIN || s > INT32_MAX) return wrong(g, key, v, "an integer that fits i32", err, errlen);
    *out = (int32_t)s;
    return HB_OK;
}
hb_status hb_gguf_get_f32(const hb_gguf *g, const char *key, float *out, char *err, size_t errlen)
{
    const hb_gguf_value *v;
    double f;
    if (lookup(g, key, &v, err, errlen)) return HB_EINVAL;
    if (v->type != HB_GGUF_V_F32 || hb_gguf_value_f64(v, &f)) return wrong(g, key, v, "an f32", err, errlen);
    *out = (float)f;
    return HB_OK;
}
hb_status hb_gguf_get_str(const hb_gguf *g, const char *key, const char **s, size_t *len, char *err, size_t errlen)
{
    const hb_gguf_value *v;
    if (lookup(g, key, &v, err, errlen)) return HB_EINVAL;
    if (v->type != HB_GGUF_V_STRING) return wrong(g, key, v, "a string", err, errlen);
    *s = (const char *)v->p;
    *len = (size_t)v->n;
    return HB_OK;
}
hb_status hb_gguf_get_array(const hb_gguf *g, const char *key, uint32_t *elem_type, uint64_t *n, char *err, size_t errlen)
{
    const hb_gguf_value *v;
    if (lookup(g, key, &v, err, errlen)) return HB_EINVAL;
    if (v->type != HB_GGUF_V_ARRAY) return wrong(g, key, v, "an array", err, errlen);
    *elem_type = v->elem_type;
    *n = v->n;
    return HB_OK;
}
