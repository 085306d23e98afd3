/* strmap.c - the string -> index map of strmap.h. */
#include "core/strmap.h"
#include "core/rstats.h"
#include <stdlib.h>
#include <string.h>

void hb_strmap_free(hb_strmap *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->cap; i++) free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* The slot holding key, or the empty slot where it would go. m->cap > 0. */
static size_t slot_of(const hb_strmap *m, const char *key)
{
    size_t i = (size_t)hb_hash64(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key)) i = (i + 1) & (m->cap - 1);
    return i;
}

size_t hb_strmap_get(const hb_strmap *m, const char *key, size_t missing)
{
    if (!m->cap) return missing;
    size_t i = slot_of(m, key);
    return m->keys[i] ? m->vals[i] : missing;
}

int hb_strmap_has(const hb_strmap *m, const char *key) { return m->cap && m->keys[slot_of(m, key)] != NULL; }

static hb_status grow(hb_strmap *m)
{
    size_t nc = m->cap ? 2 * m->cap : 64;
    hb_strmap g = {calloc(nc, sizeof *g.keys), calloc(nc, sizeof *g.vals), nc, m->n};
    if (!g.keys || !g.vals) { free(g.keys); free(g.vals); return HB_ENOMEM; }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = slot_of(&g, m->keys[i]);
        g.keys[j] = m->keys[i];
        g.vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    *m = g;
    return HB_OK;
}

hb_status hb_strmap_set(hb_strmap *m, const char *key, size_t val)
{
    if ((m->n + 1) * 2 > m->cap && grow(m) != HB_OK) return HB_ENOMEM;
    size_t i = slot_of(m, key);
    if (!m->keys[i]) {
        if (!(m->keys[i] = strdup(key))) return HB_ENOMEM;
        m->n++;
    }
    m->vals[i] = val;
    return HB_OK;
}
