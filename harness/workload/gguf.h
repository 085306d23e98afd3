/*
 * gguf.h - GGUF model files (ggml's format, versions 2 and 3): a validating reader (gguf.c) and a
 * small writer (gguf_write.c). Format: github.com/ggml-org/ggml docs/gguf.md; what is accepted and
 * refused, and why: docs/gguf.md.
 *
 * A file is: magic "GGUF", u32 version, u64 tensor_count, u64 metadata_kv_count, the key/values, the
 * tensor infos (name, u32 n_dims, u64 dims[n_dims] with dims[0] = ggml's ne0, the contiguous one,
 * u32 ggml type, u64 offset in the data section), zero padding to the alignment (general.alignment,
 * a u32, default 32), the data section. Every number is little-endian; strings are a u64 length and
 * that many bytes (no NUL).
 *
 * Errors of the reader are "PATH: offset N: what is wrong" in err (N: the byte offset in the file of
 * the field that is wrong, or that a cut file ends in), with HB_EINVAL for a malformed file,
 * HB_EDEVICE when the file cannot be opened, mapped or is not a regular file, HB_ENOMEM when out of
 * memory. The reader maps the file read-only (mmap); tensor data and metadata strings point into the
 * mapping and stay valid until hb_gguf_close. A file truncated by someone else while mapped gives
 * SIGBUS on access, as with any mmap reader.
 */
#ifndef HB_GGUF_H
#define HB_GGUF_H
#include <stddef.h>
#include <stdint.h>
#include "core/hybench.h"

#define HB_GGUF_MAX_DIMS 4          /* ggml's GGML_MAX_DIMS; the spec's "currently at most 4" */
#define HB_GGUF_DEFAULT_ALIGNMENT 32
#define HB_GGUF_MAX_NAME 64         /* a tensor name: at most 64 bytes (spec); the writer: 63 (ggml's limit) */
#define HB_GGUF_MAX_KEY 65535       /* a key: at most 2^16 - 1 bytes (spec) */
#define HB_GGUF_MAX_NEST 8          /* arrays of arrays: at most this deep (the reader's own limit) */

/* Metadata value types (gguf_metadata_value_type, the file's u32). */
typedef enum hb_gguf_vtype {
    HB_GGUF_V_U8 = 0, HB_GGUF_V_I8 = 1, HB_GGUF_V_U16 = 2, HB_GGUF_V_I16 = 3, HB_GGUF_V_U32 = 4,
    HB_GGUF_V_I32 = 5, HB_GGUF_V_F32 = 6, HB_GGUF_V_BOOL = 7, HB_GGUF_V_STRING = 8, HB_GGUF_V_ARRAY = 9,
    HB_GGUF_V_U64 = 10, HB_GGUF_V_I64 = 11, HB_GGUF_V_F64 = 12, HB_GGUF_V_COUNT = 13
} hb_gguf_vtype;
/* "u8", "i8", ..., "string", "array", "u64", "i64", "f64"; "?" for another number. */
const char *hb_gguf_vtype_name(uint32_t t);
/* Bytes of one value of a fixed-size type (1, 2, 4 or 8); 0 for string, array and unknown types. */
int hb_gguf_vtype_size(uint32_t t);

/* ggml tensor types (ggml_type ids 0..42 as ggml defines them in 2026-08; ids it removed: unknown).
 * Elements per block and bytes per block from ggml's type_traits (blck_size, sizeof(block_*));
 * 0 for an unknown id. */
int hb_gguf_type_block(uint32_t ggml_type, int *block_bytes);
/* "f32", "f16", "q4_0", ..., "q8_0", "q4_k", ..., "bf16", "mxfp4"; NULL for an unknown id. */
const char *hb_gguf_type_name(uint32_t ggml_type);
/* The hybench dtype of a ggml type: HB_F32, HB_F16, HB_BF16, HB_Q8_0, HB_Q4_K, HB_Q5_K, HB_Q6_K;
 * -1 for every other type (the reader still opens files holding them: see hb_gguf_get_tensor). */
int hb_gguf_type_dtype(uint32_t ggml_type);

/* A metadata value as the file holds it. For a scalar, p points at its n = 1 little-endian value; for
 * a string, at its n bytes (not NUL-terminated); for an array, at its first of n elements of
 * elem_type. offset: the file offset of the value's encoding (the scalar, the string's length, the
 * array's element type). index: for an array of strings or arrays directly under a key, the offset of
 * each element from p (n entries; owned by the file's handle); NULL otherwise. */
typedef struct hb_gguf_value {
    uint32_t type, elem_type;
    uint64_t n;
    const uint8_t *p;
    uint64_t offset;
    const uint64_t *index;
} hb_gguf_value;

/* A tensor: name NUL-terminated (owned by the handle), ne[0..3] in ggml's order (ne[0] the
 * contiguous dimension; 1 past n_dims), its ggml type and hybench dtype (-1: none), its bytes
 * (ne's product / block * block bytes) at data (in the mapping), offset in the data section and
 * file_offset in the file, info_offset the file offset of its tensor info. */
typedef struct hb_gguf_tensor {
    const char *name;
    int n_dims;
    int64_t ne[HB_GGUF_MAX_DIMS];
    uint32_t ggml_type;
    int dtype;
    uint64_t bytes, offset, file_offset, info_offset;
    const void *data;
} hb_gguf_tensor;

typedef struct hb_gguf hb_gguf;

/* Open and validate the GGUF file at path (every check of docs/gguf.md) into *out (the caller
 * closes it with hb_gguf_close). On error *out is NULL and err (size errlen) holds "PATH: offset N:
 * reason"; HB_EINVAL, HB_EDEVICE or HB_ENOMEM as above. */
hb_status hb_gguf_open(const char *path, hb_gguf **out, char *err, size_t errlen);
void hb_gguf_close(hb_gguf *g); /* NULL is fine */

uint32_t hb_gguf_version(const hb_gguf *g);
uint32_t hb_gguf_alignment(const hb_gguf *g);
uint64_t hb_gguf_data_offset(const hb_gguf *g); /* file offset of the data section */
const char *hb_gguf_path(const hb_gguf *g);

/* Tensors in the file's order; i < hb_gguf_n_tensors, else NULL. */
size_t hb_gguf_n_tensors(const hb_gguf *g);
const hb_gguf_tensor *hb_gguf_tensor_at(const hb_gguf *g, size_t i);
/* The tensor named name, or NULL (binary search; names are unique). */
const hb_gguf_tensor *hb_gguf_find_tensor(const hb_gguf *g, const char *name);
/* The tensor named name for a computation in dtype want (-1: any type): HB_OK with *out; HB_EINVAL
 * "PATH: no tensor named X" or "PATH: offset N: tensor X is q4_k, not f32" (want given and the dtype
 * differs); HB_ESKIP "PATH: offset N: tensor X is q4_0, which hybench does not compute" when its ggml
 * type has no hybench dtype. */
hb_status hb_gguf_get_tensor(const hb_gguf *g, const char *name, int want, const hb_gguf_tensor **out, char *err,
                             size_t errlen);

/* Metadata in the file's order; i < hb_gguf_n_kv, else NULL. Keys are NUL-terminated copies. */
size_t hb_gguf_n_kv(const hb_gguf *g);
const char *hb_gguf_kv_key(const hb_gguf *g, size_t i);
const hb_gguf_value *hb_gguf_kv_value(const hb_gguf *g, size_t i);
/* The value of key, or NULL (binary search; keys are unique). */
const hb_gguf_value *hb_gguf_find_kv(const hb_gguf *g, const char *key);

/* Typed getters of a key's value. A missing key: HB_EINVAL "PATH: no metadata key K"; a value of
 * another type or out of range: HB_EINVAL "PATH: offset N: key K is TYPE VALUE, wanted ...".
 * u32/u64/i32 take any integer type whose value fits (the spec asks readers to take u32 where u64
 * is standard); f32 takes f32 only; str gives the bytes and their length (not NUL-terminated).
 * Nothing is written to *out on error. */
hb_status hb_gguf_get_u32(const hb_gguf *g, const char *key, uint32_t *out, char *err, size_t errlen);
hb_status hb_gguf_get_u64(const hb_gguf *g, const char *key, uint64_t *out, char *err, size_t errlen);
hb_status hb_gguf_get_i32(const hb_gguf *g, const char *key, int32_t *out, char *err, size_t errlen);
hb_status hb_gguf_get_f32(const hb_gguf *g, const char *key, float *out, char *err, size_t errlen);
hb_status hb_gguf_get_str(const hb_gguf *g, const char *key, const char **s, size_t *len, char *err, size_t errlen);
/* An array's element type and length. */
hb_status hb_gguf_get_array(const hb_gguf *g, const char *key, uint32_t *elem_type, uint64_t *n, char *err,
                            size_t errlen);
/* Element i of array value arr (from hb_gguf_find_kv or an enclosing hb_gguf_array_elem) into *out:
 * constant time for fixed-size elements and for strings/arrays directly under a key (their index),
 * a walk over the i elements before it for arrays nested deeper. HB_EINVAL when arr is not an array
 * or i >= arr->n. */
hb_status hb_gguf_array_elem(const hb_gguf_value *arr, uint64_t i, hb_gguf_value *out);
/* Conversions of one value: 0 and *out when the value has a type that converts exactly (u64: any
 * non-negative integer; i64: any integer up to INT64_MAX; f64: f32 or f64; bool: bool), else -1. */
int hb_gguf_value_u64(const hb_gguf_value *v, uint64_t *out);
int hb_gguf_value_i64(const hb_gguf_value *v, int64_t *out);
int hb_gguf_value_f64(const hb_gguf_value *v, double *out);
int hb_gguf_value_bool(const hb_gguf_value *v, int *out);

/* ---- the writer (gguf_write.c) ----
 * Collects metadata and tensors, then writes one GGUF file: the key/values in the order added, the
 * tensor infos in the order added, each tensor's data at the next multiple of the alignment (zero
 * padding, also after the last tensor, as ggml writes). Every add checks its arguments as the reader
 * would (a printable-ASCII key of 1..65535 bytes not given before, a tensor name of 1..63 bytes
 * without NUL not given before, 1..4 dims each >= 1 whose product fits, ne[0] a multiple of the
 * type's block, bytes equal to the type's size of that many elements) and returns HB_EINVAL (or
 * HB_ENOMEM) without adding anything when they do not hold; the first such error is kept and
 * hb_gguf_write reports it. */
typedef struct hb_gguf_writer hb_gguf_writer;
/* version 2 or 3; alignment 0 (the default 32, no general.alignment key) or a power of two (then
 * general.alignment is written as the first key). HB_EINVAL for others; HB_ENOMEM. */
hb_status hb_gguf_writer_new(uint32_t version, uint32_t alignment, hb_gguf_writer **out);
void hb_gguf_writer_free(hb_gguf_writer *w);
/* A value already encoded as the file holds it (type's encoding, len bytes at value; for strings
 * and arrays with their length prefixes): what the typed adds below use, and the tests' way to
 * write any value (nested arrays). The encoding is not checked: a wrong one makes a wrong file. */
hb_status hb_gguf_add_raw(hb_gguf_writer *w, const char *key, uint32_t type, const void *value, size_t len);
hb_status hb_gguf_add_u32(hb_gguf_writer *w, const char *key, uint32_t v);
hb_status hb_gguf_add_u64(hb_gguf_writer *w, const char *key, uint64_t v);
hb_status hb_gguf_add_i32(hb_gguf_writer *w, const char *key, int32_t v);
hb_status hb_gguf_add_f32(hb_gguf_writer *w, const char *key, float v);
hb_status hb_gguf_add_bool(hb_gguf_writer *w, const char *key, int v);
hb_status hb_gguf_add_str(hb_gguf_writer *w, const char *key, const char *s); /* NUL-terminated */
hb_status hb_gguf_add_str_array(hb_gguf_writer *w, const char *key, const char *const *v, size_t n);
/* An array of n fixed-size values of elem_type (host-order values at elems, e.g. uint32_t[] for u32,
 * unsigned char 0/1 for bool); HB_EINVAL for string/array/unknown elem_type or a bool not 0/1. */
hb_status hb_gguf_add_array(hb_gguf_writer *w, const char *key, uint32_t elem_type, const void *elems, size_t n);
/* A tensor of n_dims dims ne[] (ggml's order) and ggml_type whose bytes are data[0..bytes); data is
 * not copied: it must stay valid until hb_gguf_write. */
hb_status hb_gguf_add_tensor(hb_gguf_writer *w, const char *name, int n_dims, const int64_t *ne, uint32_t ggml_type,
                             const void *data, size_t bytes);
/* Write the file to path (replaced; a partial file is removed on error). HB_OK; the first add's
 * error; HB_EDEVICE "PATH: cannot write: ..." with err set. */
hb_status hb_gguf_write(hb_gguf_writer *w, const char *path, char *err, size_t errlen);
#endif
