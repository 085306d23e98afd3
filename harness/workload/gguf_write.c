/*
 * gguf_write.c - the GGUF writer (gguf.h): key/values encoded as they are added into one growing
 * buffer, tensors kept as (name, dims, type, pointer to the caller's bytes), written out in one pass.
 * Written from the format's definition (ggml docs/gguf.md); files it writes are what gguf.c reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "workload/gguf.h"

typedef struct wtensor {
    char *name;
    int n_dims;
    int64_t ne[HB_GGUF_MAX_DIMS];
    uint32_t type;
    const void *data;
    uint64_t bytes;
} wtensor;

struct hb_gguf_writer {
    uint32_t version, alignment;
    uint8_t *kv;       /* the encoded key/values */
    size_t kv_len, kv_cap;
    uint64_t n_kv;
    char **keys;       /* the keys given, for duplicates */
    size_t n_keys, cap_keys;
    wtensor *t;
    size_t n_t, cap_t;
    hb_status first;   /* the first add's error */
    char why[160];
};

static hb_status werr(hb_gguf_writer *w, hb_status st, const char *fmt, const char *arg)
{
    if (w->first == HB_OK) {
        w->first = st;
        snprintf(w->why, sizeof w->why, fmt, arg);
    }
    return st;
}

static int put(hb_gguf_writer *w, const void *p, size_t n)
{
    if (w->kv_len + n > w->kv_cap) {
        size_t c = w->kv_cap ? w->kv_cap : 256;
        while (c < w->kv_len + n) c *= 2;
        uint8_t *q = realloc(w->kv, c);
        if (!q) return -1;
        w->kv = q;
        w->kv_cap = c;
    }
    memcpy(w->kv + w->kv_len, p, n);
    w->kv_len += n;
    return 0;
}
static void le32(uint8_t *b, uint32_t v) { for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i)); }
static void le64(uint8_t *b, uint64_t v) { for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i)); }

static hb_status add_kv(hb_gguf_writer *w, const char *key, uint32_t type, const void *value, size_t len);

hb_status hb_gguf_writer_new(uint32_t version, uint32_t alignment, hb_gguf_writer **out)
{
    *out = NULL;
    if ((version != 2 && version != 3) || (alignment & (alignment - 1))) return HB_EINVAL;
    hb_gguf_writer *w = calloc(1, sizeof *w);
    if (!w) return HB_ENOMEM;
    w->version = version;
    w->alignment = alignment ? alignment : HB_GGUF_DEFAULT_ALIGNMENT;
    uint8_t b[4];
    le32(b, alignment);
    if (alignment && add_kv(w, "general.alignment", HB_GGUF_V_U32, b, 4) != HB_OK) {
        hb_gguf_writer_free(w);
        return HB_ENOMEM;
    }
    *out = w;
    return HB_OK;
}

void hb_gguf_writer_free(hb_gguf_writer *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->n_keys; i++) free(w->keys[i]);
    for (size_t i = 0; i < w->n_t; i++) free(w->t[i].name);
    free(w->keys);
    free(w->t);
    free(w->kv);
    free(w);
}

hb_status hb_gguf_add_raw(hb_gguf_writer *w, const char *key, uint32_t type, const void *value, size_t len)
{
    if (key && !strcmp(key, "general.alignment")) return werr(w, HB_EINVAL, "key %.60s: set by the writer's alignment argument", key);
    return add_kv(w, key, type, value, len);
}
static hb_status add_kv(hb_gguf_writer *w, const char *key, uint32_t type, const void *value, size_t len)
{
    const size_t kl = key ? strlen(key) : 0;
    if (kl == 0 || kl > HB_GGUF_MAX_KEY) return werr(w, HB_EINVAL, "a key of 1..65535 bytes, not \"%.40s\"", key ? key : "");
    for (size_t i = 0; i < kl; i++)
        if ((unsigned char)key[i] < 0x21 || (unsigned char)key[i] > 0x7e) return werr(w, HB_EINVAL, "key %.60s: not printable ASCII", key);
    if (type >= HB_GGUF_V_COUNT) return werr(w, HB_EINVAL, "key %.60s: unknown value type", key);
    for (size_t i = 0; i < w->n_keys; i++)
        if (!strcmp(w->keys[i], key)) return werr(w, HB_EINVAL, "key %.60s given twice", key);
    if (w->n_keys == w->cap_keys) {
        size_t c = w->cap_keys ? 2 * w->cap_keys : 16;
        char **k = realloc(w->keys, c * sizeof *k);
        if (!k) return werr(w, HB_ENOMEM, "out of memory%s", "");
        w->keys = k;
        w->cap_keys = c;
    }
    char *copy = strdup(key);
    uint8_t h[8], t[4];
    le64(h, kl);
    le32(t, type);
    const size_t mark = w->kv_len;
    if (!copy || put(w, h, 8) || put(w, key, kl) || put(w, t, 4) || (len && put(w, value, len))) {
        free(copy);
        w->kv_len = mark;
        return werr(w, HB_ENOMEM, "out of memory%s", "");
    }
    w->keys[w->n_keys++] = copy;
    w->n_kv++;
    return HB_OK;
}

hb_status hb_gguf_add_u32(hb_gguf_writer *w, const char *key, uint32_t v)
{
    uint8_t b[4];
    le32(b, v);
    return hb_gguf_add_raw(w, key, HB_GGUF_V_U32, b, 4);
}
hb_status hb_gguf_add_u64(hb_gguf_writer *w, const char *key, uint64_t v)
{
    uint8_t b[8];
    le64(b, v);
    return hb_gguf_add_raw(w, key, HB_GGUF_V_U64, b, 8);
}
hb_status hb_gguf_add_i32(hb_gguf_writer *w, const char *key, int32_t v)
{
    uint8_t b[4];
    le32(b, (uint32_t)v);
    return hb_gguf_add_raw(w, key, HB_GGUF_V_I32, b, 4);
}
hb_status hb_gguf_add_f32(hb_gguf_writer *w, const char *key, float v)
{
    uint32_t u;
    uint8_t b[4];
    memcpy(&u, &v, 4);
    le32(b, u);
    return hb_gguf_add_raw(w, key, HB_GGUF_V_F32, b, 4);
}
hb_status hb_gguf_add_bool(hb_gguf_writer *w, const char *key, int v)
{
    if (v != 0 && v != 1) return werr(w, HB_EINVAL, "key %.60s: a bool is 0 or 1", key ? key : "");
    const uint8_t b = (uint8_t)v;
    return hb_gguf_add_raw(w, key, HB_GGUF_V_BOOL, &b, 1);
}

/* strings: the u64 length and the bytes, into a new buffer */
static uint8_t *enc_strings(const char *const *v, size_t n, int with_header, size_t *len)
{
    size_t total = with_header ? 12 : 0;
    for (size_t i = 0; i < n; i++) total += 8 + strlen(v[i]);
    uint8_t *b = malloc(total ? total : 1), *p = b;
    if (!b) return NULL;
    if (with_header) {
        le32(p, HB_GGUF_V_STRING);
        le64(p + 4, n);
        p += 12;
    }
    for (size_t i = 0; i < n; i++) {
        const size_t l = strlen(v[i]);
        le64(p, l);
        memcpy(p + 8, v[i], l);
        p += 8 + l;
    }
    *len = total;
    return b;
}
hb_status hb_gguf_add_str(hb_gguf_writer *w, const char *key, const char *s)
{
    size_t len;
    uint8_t *b = s ? enc_strings(&s, 1, 0, &len) : NULL;
    if (!b) return werr(w, s ? HB_ENOMEM : HB_EINVAL, "key %.60s: no string", key ? key : "");
    const hb_status st = hb_gguf_add_raw(w, key, HB_GGUF_V_STRING, b, len);
    free(b);
    return st;
}
hb_status hb_gguf_add_str_array(hb_gguf_writer *w, const char *key, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!v[i]) return werr(w, HB_EINVAL, "key %.60s: a NULL string", key ? key : "");
    size_t len;
    uint8_t *b = enc_strings(v, n, 1, &len);
    if (!b) return werr(w, HB_ENOMEM, "out of memory%s", "");
    const hb_status st = hb_gguf_add_raw(w, key, HB_GGUF_V_ARRAY, b, len);
    free(b);
    return st;
}
hb_status hb_gguf_add_array(hb_gguf_writer *w, const char *key, uint32_t elem_type, const void *elems, size_t n)
{
    const int es = hb_gguf_vtype_size(elem_type);
    if (!es) return werr(w, HB_EINVAL, "key %.60s: an array of a fixed-size type", key ? key : "");
    if (n > (SIZE_MAX - 12) / (size_t)es) return werr(w, HB_ENOMEM, "key %.60s: array too long", key ? key : "");
    uint8_t *b = malloc(12 + n * (size_t)es);
    if (!b) return werr(w, HB_ENOMEM, "out of memory%s", "");
    le32(b, elem_type);
    le64(b + 4, n);
    const uint8_t *src = elems;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 0;
        switch (es) { /* host order to little-endian */
        case 1: v = src[i]; break;
        case 2: { uint16_t x; memcpy(&x, src + 2 * i, 2); v = x; break; }
        case 4: { uint32_t x; memcpy(&x, src + 4 * i, 4); v = x; break; }
        default: memcpy(&v, src + 8 * i, 8); break;
        }
        if (elem_type == HB_GGUF_V_BOOL && v > 1) { free(b); return werr(w, HB_EINVAL, "key %.60s: a bool is 0 or 1", key ? key : ""); }
        for (int k = 0; k < es; k++) b[12 + i * (size_t)es + (size_t)k] = (uint8_t)(v >> (8 * k));
    }
    const hb_status st = hb_gguf_add_raw(w, key, HB_GGUF_V_ARRAY, b, 12 + n * (size_t)es);
    free(b);
    return st;
}

hb_status hb_gguf_add_tensor(hb_gguf_writer *w, const char *name, int n_dims, const int64_t *ne, uint32_t ggml_type,
                             const void *data, size_t bytes)
{
    const size_t nl = name ? strlen(name) : 0;
    if (nl == 0 || nl >= HB_GGUF_MAX_NAME) return werr(w, HB_EINVAL, "a tensor name of 1..63 bytes, not \"%.70s\"", name ? name : "");
    for (size_t i = 0; i < w->n_t; i++)
        if (!strcmp(w->t[i].name, name)) return werr(w, HB_EINVAL, "tensor %.60s given twice", name);
    if (n_dims < 1 || n_dims > HB_GGUF_MAX_DIMS) return werr(w, HB_EINVAL, "tensor %.60s: 1..4 dims", name);
    int bb;
    const int blck = hb_gguf_type_block(ggml_type, &bb);
    if (!blck) return werr(w, HB_EINVAL, "tensor %.60s: unknown ggml type", name);
    uint64_t count = 1;
    for (int d = 0; d < n_dims; d++) {
        if (ne[d] < 1 || (uint64_t)ne[d] > (uint64_t)INT64_MAX / count) return werr(w, HB_EINVAL, "tensor %.60s: dims < 1 or too many elements", name);
        count *= (uint64_t)ne[d];
    }
    if (ne[0] % blck) return werr(w, HB_EINVAL, "tensor %.60s: ne0 not a multiple of the type's block", name);
    if (count / (uint64_t)blck > UINT64_MAX / (uint64_t)bb || count / (uint64_t)blck * (uint64_t)bb != bytes || (bytes && !data))
        return werr(w, HB_EINVAL, "tensor %.60s: bytes differ from the type's size of its elements", name);
    if (w->n_t == w->cap_t) {
        size_t c = w->cap_t ? 2 * w->cap_t : 16;
        wtensor *t = realloc(w->t, c * sizeof *t);
        if (!t) return werr(w, HB_ENOMEM, "out of memory%s", "");
        w->t = t;
        w->cap_t = c;
    }
    wtensor *t = &w->t[w->n_t];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name))) return werr(w, HB_ENOMEM, "out of memory%s", "");
    t->n_dims = n_dims;
    for (int d = 0; d < HB_GGUF_MAX_DIMS; d++) t->ne[d] = d < n_dims ? ne[d] : 1;
    t->type = ggml_type;
    t->data = data;
    t->bytes = bytes;
    w->n_t++;
    return HB_OK;
}

static uint64_t pad_to(uint64_t x, uint64_t a) { return x % a ? x + (a - x % a) : x; }
static int zeros(FILE *f, uint64_t n)
{
    static const uint8_t z[64];
    while (n) {
        const size_t k = n < sizeof z ? (size_t)n : sizeof z;
        if (fwrite(z, 1, k, f) != k) return -1;
        n -= k;
    }
    return 0;
}

hb_status hb_gguf_write(hb_gguf_writer *w, const char *path, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (w->first != HB_OK) {
        if (err && errlen) snprintf(err, errlen, "%s: %s", path, w->why);
        return w->first;
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        if (err && errlen) snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return HB_EDEVICE;
    }
    uint8_t h[24];
    memcpy(h, "GGUF", 4);
    le32(h + 4, w->version);
    le64(h + 8, w->n_t);
    le64(h + 16, w->n_kv);
    int bad = fwrite(h, 1, 24, f) != 24 || (w->kv_len && fwrite(w->kv, 1, w->kv_len, f) != w->kv_len);
    uint64_t pos = 24 + w->kv_len, off = 0;
    for (size_t i = 0; i < w->n_t && !bad; i++) { /* infos: each tensor at the next aligned data offset */
        const wtensor *t = &w->t[i];
        uint8_t b[8 + HB_GGUF_MAX_NAME + 4 + 8 * HB_GGUF_MAX_DIMS + 12], *p = b;
        const size_t nl = strlen(t->name);
        le64(p, nl);
        memcpy(p + 8, t->name, nl);
        p += 8 + nl;
        le32(p, (uint32_t)t->n_dims);
        p += 4;
        for (int d = 0; d < t->n_dims; d++, p += 8) le64(p, (uint64_t)t->ne[d]);
        le32(p, t->type);
        le64(p + 4, off);
        p += 12;
        bad = fwrite(b, 1, (size_t)(p - b), f) != (size_t)(p - b);
        pos += (uint64_t)(p - b);
        off = pad_to(off + t->bytes, w->alignment);
    }
    if (!bad && w->n_t) bad = zeros(f, pad_to(pos, w->alignment) - pos);
    for (size_t i = 0; i < w->n_t && !bad; i++) {
        const wtensor *t = &w->t[i];
        bad = (t->bytes && fwrite(t->data, 1, t->bytes, f) != t->bytes) || zeros(f, pad_to(t->bytes, w->alignment) - t->bytes);
    }
    int e = bad ? errno : 0;
    if (fclose(f) != 0 && !bad) bad = 1, e = errno;
    if (bad) {
        if (err && errlen) snprintf(err, errlen, "%s: cannot write: %s", path, strerror(e ? e : EIO));
        unlink(path);
        return HB_EDEVICE;
    }
    return HB_OK;
}
