/*
 * cuda_algocache.h - the CUDA plugin's algorithm-choice cache on disk, its file format and files
 * (plain C, no CUDA: tests/test_algocache.c exercises it without a GPU). docs/backends.md, "The
 * algorithm-choice cache".
 *
 * With HB_ALGO_CACHE=DIR (`hybench run --algo-cache DIR`; `hybench ab` sets OUT/algocache for both
 * builds) the plugin keeps each one-off implementation choice it times (conv2d: cuda_conv_pool.cu's
 * conv_choose; attention: cuda_sdpa.cpp's cuDNN SDPA plan against the own kernel) in DIR, and a later
 * process with the same key builds and uses only the chosen candidate. The key and the fields are
 * made by the CUDA side (cuda_choice_cache.cpp); this file only keeps them.
 *
 * An entry is one file DIR/<16 hex digits>.algo (FNV-1a 64 of the key) holding one JSON object, written
 * and read with jansson (compact, sorted members, nothing before or after it):
 *     {"fields":{"<name>":"<value>",...},"format":"hybench-algo-cache","key":"<key>","sum":"<16 hex>","version":1}
 * sum: FNV-1a 64, 16 lowercase hex digits, of {"fields":...,"key":...} as jansson writes it compact
 * with sorted members. Names are [a-z0-9_], 1..HBAC_NAME_MAX-1 characters; keys and values strings of
 * printable ASCII (0x20..0x7e, spaces allowed), at most HBAC_KEY_MAX-1 and HBAC_VALUE_MAX-1 characters,
 * 0..HBAC_MAX_FIELDS fields. Refused: text that is not one JSON object (jansson's error is the
 * reason), a duplicate member, another member set, format or version, a name, key or value outside
 * the rules, a wrong sum; a different key is a miss. A file is written whole to a temporary name in
 * DIR and renamed into
 * place, so a reader sees a complete entry or the one before it, whatever other processes write.
 */
#ifndef HB_CUDA_ALGOCACHE_H
#define HB_CUDA_ALGOCACHE_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

#define HBAC_KEY_MAX 1024
#define HBAC_MAX_FIELDS 32
#define HBAC_NAME_MAX 32
#define HBAC_VALUE_MAX 256
#define HBAC_FILE_MAX 65536 /* a longer file is refused without being read further */

/* One entry: the key (the text that names everything the choice depends on) and its fields. Plain
 * value, no owned memory (about 10 KiB). */
typedef struct hbac_entry {
    char key[HBAC_KEY_MAX];
    int n;                                  /* fields used */
    char name[HBAC_MAX_FIELDS][HBAC_NAME_MAX];
    char value[HBAC_MAX_FIELDS][HBAC_VALUE_MAX];
} hbac_entry;

/* What a lookup found. */
typedef enum hbac_status {
    HBAC_HIT = 0,  /* a sound entry of this key: *out filled */
    HBAC_MISS,     /* no entry of this key (no file, or the file holds another key: a hash collision) */
    HBAC_CORRUPT,  /* a file that fails the format or its sum: never used; why says what failed */
} hbac_status;

/* The directory HB_ALGO_CACHE names, or NULL when it is unset or empty (the cache is off). */
const char *hbac_dir(void);

/* FNV-1a 64 of n bytes at p, continuing from h (start with HBAC_FNV_START). */
#define HBAC_FNV_START 0xcbf29ce484222325ULL
uint64_t hbac_fnv1a(const void *p, size_t n, uint64_t h);

/* Empty *e with key (copied). 0, or -1 (e untouched) when key is empty, too long or has a byte
 * outside 0x20..0x7e. */
int hbac_init(hbac_entry *e, const char *key);

/* Set field name to value (replacing an existing one of that name). 0, or -1 (e unchanged) when the
 * name or value is not allowed (see above) or all HBAC_MAX_FIELDS are used. */
int hbac_set(hbac_entry *e, const char *name, const char *value);
/* hbac_set with v printed as a decimal integer / with "%.9g" (v must be finite: -1 otherwise). */
int hbac_set_i64(hbac_entry *e, const char *name, int64_t v);
int hbac_set_f(hbac_entry *e, const char *name, double v);

/* The value of field name, or NULL when e has none. The pointer is into e. */
const char *hbac_get(const hbac_entry *e, const char *name);
/* The field as a decimal integer in [lo, hi] / as a finite number (strtod, every character used).
 * 0 with *out set, or -1 (out untouched) when absent, malformed or out of range. */
int hbac_get_i64(const hbac_entry *e, const char *name, int64_t lo, int64_t hi, int64_t *out);
int hbac_get_f(const hbac_entry *e, const char *name, double *out);

/* e as the file's text into buf (size len, NUL-terminated). Returns the bytes written (without the
 * NUL), or -1 when buf is too small or e is not valid (a field or key that hbac_set/hbac_init would
 * refuse, n out of range). */
long hbac_serialize(const hbac_entry *e, char *buf, size_t len);

/* Parse n bytes of a file's text (need not be NUL-terminated) into *out. want_key: the key the caller
 * looks up (NULL: any). HBAC_HIT; HBAC_MISS when the file is sound but holds another key; HBAC_CORRUPT
 * otherwise, with the reason in why (size whylen, may be NULL). *out is undefined unless HBAC_HIT. */
hbac_status hbac_parse(const char *text, size_t n, const char *want_key, hbac_entry *out, char *why, size_t whylen);

/* The entry's path for key: DIR/<16 hex>.algo into buf (size len). Returns buf, or NULL when it does
 * not fit. */
char *hbac_path(const char *dir, const char *key, char *buf, size_t len);

/* Look key up in dir: HBAC_HIT with *out; HBAC_MISS (no file, or another key); HBAC_CORRUPT (why
 * says what: unreadable, too long, format, sum). Reads at most HBAC_FILE_MAX bytes. */
hbac_status hbac_load(const char *dir, const char *key, hbac_entry *out, char *why, size_t whylen);

/* Store e as the entry of e->key in dir (dir and its parents created, mode 0755, when missing):
 * written to DIR/.<16 hex>.tmp.<pid>.<n> and renamed over the entry, so concurrent writers of one key
 * leave one whole entry (the last rename's). 0, or -1 with the reason in why (e invalid, a directory
 * that cannot be made, a write that failed: the temporary file is removed). */
int hbac_store(const char *dir, const hbac_entry *e, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif
#endif
