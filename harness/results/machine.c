/* machine.c - machine fingerprints of runs (machine.h): the one canonical description and its hash,
 * used by the history store (hb_store_fingerprint calls it), the CSV's machine column and the report's
 * run names, so that a run has one machine id everywhere. */
#include "results/machine.h"
#include "core/rstats.h"
#include "results/results.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(char *d, size_t len, size_t *l, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *d, size_t len, size_t *l, const char *fmt, ...)
{
    if (*l >= len) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d + *l, len - *l, fmt, ap);
    va_end(ap);
    if (n > 0) *l += (size_t)n;
    if (*l >= len) *l = len - 1;
}

/* an info field that names a model, a version or a build configuration */
static int ident_field(const char *k)
{
    static const char *const words[] = {"version", "config", "name", "model", "platform", "device", "compute_capability",
                                        "corename", "sm_count", "memory_bytes", NULL};
    for (int i = 0; words[i]; i++)
        if (strstr(k, words[i])) return 1;
    return 0;
}

static void put_json(char *d, size_t len, size_t *l, json_t *v)
{
    if (json_is_string(v)) put(d, len, l, "%s", json_string_value(v));
    else if (json_is_integer(v)) put(d, len, l, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) put(d, len, l, "%.6g", json_real_value(v));
    else if (json_is_boolean(v)) put(d, len, l, "%s", json_is_true(v) ? "true" : "false");
}

void hb_machine_device(json_t *b, char *buf, size_t len)
{
    if (!len) return;
    buf[0] = 0;
    if (!b) return;
    const char *n = hb_rec_str(json_object_get(b, "info"), "name");
    if (!n) n = hb_rec_str(b, "description");
    snprintf(buf, len, "%s", n ? n : "");
}

void hb_machine_fingerprint(json_t *meta, json_t *backends, char *text, size_t tlen, char *id, size_t idlen)
{
    char desc[4096]; /* the store hashes a 4096-byte description: the same bound keeps the same hash */
    size_t l = 0, dl = sizeof desc;
    desc[0] = 0;
    json_t *cpu = json_object_get(meta, "cpu");
    static const char *const cf[] = {"model", "sockets", "cores", "pus", "l1d_bytes", "l2_bytes", "l3_bytes", NULL};
    put(desc, dl, &l, "cpu:");
    for (int i = 0; cf[i]; i++) {
        put(desc, dl, &l, " %s=", cf[i]);
        put_json(desc, dl, &l, json_object_get(cpu, cf[i]));
    }
    put(desc, dl, &l, "; compiler=%s", hb_rec_str(meta, "compiler") ? hb_rec_str(meta, "compiler") : "?");
    put(desc, dl, &l, "; openblas=");
    put_json(desc, dl, &l, json_object_get(json_object_get(meta, "openblas"), "config"));
    /* available backends, sorted by name so that their order in the file does not matter */
    size_t nb = json_array_size(backends);
    const char **names = calloc(nb ? nb : 1, sizeof *names);
    size_t *ord = calloc(nb ? nb : 1, sizeof *ord);
    size_t k = 0;
    for (size_t i = 0; names && ord && i < nb; i++) {
        json_t *b = json_array_get(backends, i);
        if (!json_is_true(json_object_get(b, "available"))) continue;
        names[k] = hb_rec_str(b, "backend") ? hb_rec_str(b, "backend") : "";
        ord[k++] = i;
    }
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j]; names[j] = names[j - 1]; names[j - 1] = t;
            size_t u = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = u;
        }
    for (size_t i = 0; i < k; i++) {
        json_t *b = json_array_get(backends, ord[i]);
        put(desc, dl, &l, "; %s: %s", names[i], hb_rec_str(b, "description") ? hb_rec_str(b, "description") : "");
        json_t *info = json_object_get(b, "info");
        const char *key;
        json_t *v;
        const char *keys[64];
        size_t nk = 0;
        json_object_foreach(info, key, v) if (nk < 64 && ident_field(key) && !json_is_object(v) && !json_is_array(v)) keys[nk++] = key;
        for (size_t a = 1; a < nk; a++)
            for (size_t c = a; c > 0 && strcmp(keys[c - 1], keys[c]) > 0; c--) { const char *t = keys[c]; keys[c] = keys[c - 1]; keys[c - 1] = t; }
        for (size_t a = 0; a < nk; a++) {
            put(desc, dl, &l, " %s=", keys[a]);
            put_json(desc, dl, &l, json_object_get(info, keys[a]));
        }
    }
    free(names);
    free(ord);
    if (text && tlen) snprintf(text, tlen, "%s", desc);
    if (id && idlen) snprintf(id, idlen, "%016llx", (unsigned long long)hb_hash64(desc));
}
