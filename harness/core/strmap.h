/*
 * strmap.h - a map from strings to indices (size_t), for grouping and matching records by a key
 * built from their fields (analysis/, report/): open addressing over hb_hash64 (rstats.h), linear
 * probing, grown at 1/2 load. Keys are copied; lookups are exact (byte for byte).
 */
#ifndef HB_STRMAP_H
#define HB_STRMAP_H
#include <stddef.h>
#include "core/hybench.h"

typedef struct hb_strmap {
    char **keys;      /* owned; NULL for an empty slot */
    size_t *vals;
    size_t cap, n;    /* slots (a power of two, or 0), keys held */
} hb_strmap;

/* Zero-initialize an hb_strmap to start; free with hb_strmap_free (which leaves it empty and usable). */
void hb_strmap_free(hb_strmap *m);
/* The value of key, or `missing` when m does not hold it. key borrowed. */
size_t hb_strmap_get(const hb_strmap *m, const char *key, size_t missing);
/* 1 when m holds key. */
int hb_strmap_has(const hb_strmap *m, const char *key);
/* Set key (copied) to val, replacing a value it held. HB_OK or HB_ENOMEM (m unchanged). */
hb_status hb_strmap_set(hb_strmap *m, const char *key, size_t val);
#endif
