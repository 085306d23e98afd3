/*
 * refcache.h - the f64 references kept on disk between processes (docs/measurement.md, "The reference
 * cache"): `hybench run --ref-cache DIR` (or HB_REF_CACHE=DIR; off by default, on in `hybench ab`'s
 * rounds) stores each expensive reference output once and every later process of the same build
 * (the other backends' children, the next rounds) reads it back instead of computing it again.
 *
 * An entry is one plain file DIR/<16 hex digits>.ref: a fixed header (magic "HBREF01", the key's
 * length, the output's element count, a 64-bit checksum), the key text, then the output as native
 * f64. The key (hb_refcache_key) names everything the output depends on: op, shape (its text and a
 * hash of every field), the reference's row subsampling step, the run's seed and the item's input
 * streams, a hash of the input arrays themselves, and the reference code's version (HB_REF_VERSION:
 * a hash of kernels/cpu_ref's sources, core/ops.c, the compiler and its flags, made by the Makefile).
 * The checksum covers the key and the data: a truncated, corrupted or foreign entry is never used;
 * the caller recomputes it (and the record says "recomputed"). Writes go to a temporary file renamed
 * into place, so concurrent processes (the two builds of a duet round) see whole entries or none.
 * Used by sample.c only.
 */
#ifndef HB_MEASURE_REFCACHE_H
#define HB_MEASURE_REFCACHE_H
#include <stddef.h>
#include <stdint.h>
#include "core/hybench.h"

/* How a process got a reference (the case record's "reference_cache", present when the cache is on). */
typedef enum hb_refc_state {
    HB_REFC_OFF = 0,     /* no cache directory: computed, as without the cache */
    HB_REFC_HIT,         /* read from a sound entry (not computed) */
    HB_REFC_MISS,        /* no entry: computed, and stored */
    HB_REFC_RECOMPUTED,  /* an entry was there but failed its checks (named on stderr): computed, replaced */
    HB_REFC_CHEAP,       /* not cached: the reference costs about as little as reading it (elementwise) */
} hb_refc_state;

/* "off", "hit", "miss", "recomputed", "cheap". */
const char *hb_refc_state_name(hb_refc_state s);

/* A 64-bit hash of n bytes at p continuing from h (start with 0): 8 bytes per step, a multiply-rotate
 * mix; not cryptographic, for keys and corruption checks. */
uint64_t hb_refcache_hash(const void *p, size_t n, uint64_t h);

/* 1 when case c's reference (with row_step) is worth keeping: it costs at least 16 flops per output
 * element (matmul, conv2d, attention, long reductions); 0 for the cheap ones. */
int hb_refcache_worth(const hb_case *c, int64_t row_step);

/* The key of case c's reference into buf (size len; truncation is refused): inputs in[0..nin) of
 * input_elems[i] doubles, drawn from seed on streams stream0 + i. Returns buf, or NULL when it does
 * not fit. */
char *hb_refcache_key(const hb_case *c, int64_t row_step, unsigned long long seed, unsigned long long stream0,
                      const double *const *in, const size_t *input_elems, int nin, char *buf, size_t len);

/* The entry's file name for key into path (size len). Returns path. */
char *hb_refcache_path(const char *dir, const char *key, char *path, size_t len);

/* Read the entry of key from dir into out (nout doubles, caller-owned). HB_REFC_HIT when out holds a
 * sound entry's data; HB_REFC_MISS when there is no entry (out untouched); HB_REFC_RECOMPUTED when an
 * entry exists but is unsound (short, wrong magic, another key, another size, checksum mismatch):
 * why (size wlen) says which; out's contents are then undefined and the caller must compute it. */
hb_refc_state hb_refcache_load(const char *dir, const char *key, double *out, size_t nout, char *why, size_t wlen);

/* Store out (nout doubles) as the entry of key in dir (created when missing, one level), through a
 * temporary file renamed into place. 0, or -1 with errno's reason in why (size wlen); a failed store
 * leaves no partial entry. */
int hb_refcache_store(const char *dir, const char *key, const double *out, size_t nout, char *why, size_t wlen);
#endif
