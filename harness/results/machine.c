/* machine.c - machine fingerprints of runs (machine.h): the one canonical description and its hash,
 * used by the history store (hb_store_fingerprint calls it), the CSV's machine column and the report's
 * run names, so that a run has one machine id everywhere. */
#include "results/machine.h"
#include "core/appendf.h"
#include "core/rstats.h"
#include "results/results.h"
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* An info field that names a model, a version or a build configuration, and holds nothing that
 * changes from run to run (free or used memory, load, clocks, temperatures, dates: a word below).
 * The OpenCL device's memory is "global_mem_bytes" (not one of these words): PoCL reports a share of
 * the memory free when the run starts. CUDA's "memory_bytes" is the GPU's total memory. */
static int ident_field(const char *k)
{
    static const char *const words[] = {"version", "config", "name", "model", "platform", "device", "compute_capability",
                                        "corename", "sm_count", "memory_bytes", NULL};
    static const char *const volatile_words[] = {"free", "avail", "used", "load", "clock", "temp", "util", "power",
                                                 "date", "elapsed", "pci_bus", NULL};
    for (int i = 0; volatile_words[i]; i++)
        if (strstr(k, volatile_words[i])) return 0;
    for (int i = 0; words[i]; i++)
        if (strstr(k, words[i])) return 1;
    return 0;
}

/* Free text (a backend's description) with what may change from run to run blanked: a number followed
 * by a memory unit (B, bytes, KB, KiB, MB, MiB, GB, GiB, TB, TiB), by CU/CUs (OpenCL compute units,
 * which PoCL takes from POCL_CPU_MAX_CU_COUNT) or by thread/threads (OMP_NUM_THREADS) becomes "#":
 * "13.5 GiB, 2 CU" -> "# GiB, # CU". Other numbers (versions, sm_90, core counts) are kept. Writes
 * into out (NUL-terminated, truncated to len). */
static void stable_text(const char *in, char *out, size_t len)
{
    static const char *const units[] = {"bytes", "B", "KB", "KiB", "MB", "MiB", "GB", "GiB", "TB", "TiB", "CUs", "CU",
                                        "threads", "thread", NULL};
    size_t o = 0;
    if (!len) return;
    for (size_t i = 0; in[i] && o + 1 < len;) {
        int starts = isdigit((unsigned char)in[i]) &&
                     (i == 0 || !(isalnum((unsigned char)in[i - 1]) || in[i - 1] == '.' || in[i - 1] == '_'));
        if (starts) {
            size_t j = i;
            while (isdigit((unsigned char)in[j]) || (in[j] == '.' && isdigit((unsigned char)in[j + 1]))) j++;
            size_t u = j;
            while (in[u] == ' ') u++;
            for (int k = 0; units[k]; k++) {
                size_t ul = strlen(units[k]);
                if (!strncmp(in + u, units[k], ul) && !isalnum((unsigned char)in[u + ul])) {
                    out[o++] = '#';
                    i = j; /* the unit and the space before it are copied as they are */
                    break;
                }
            }
            if (i == j) continue;
            while (i < j && o + 1 < len) out[o++] = in[i++];
            continue;
        }
        out[o++] = in[i++];
    }
    out[o] = 0;
}

static void put_json(char *d, size_t len, size_t *l, json_t *v)
{
    if (json_is_string(v)) hb_appendf(d, len, l, "%s", json_string_value(v));
    else if (json_is_integer(v)) hb_appendf(d, len, l, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) hb_appendf(d, len, l, "%.6g", json_real_value(v));
    else if (json_is_boolean(v)) hb_appendf(d, len, l, "%s", json_is_true(v) ? "true" : "false");
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

void hb_run_fingerprint(const hb_run *r, char *text, size_t tlen, char *id, size_t idlen)
{
    hb_machine_fingerprint(r->meta, r->backends, text, tlen, id, idlen);
}

void hb_machine_fingerprint(json_t *meta, json_t *backends, char *text, size_t tlen, char *id, size_t idlen)
{
    char desc[4096]; /* the store hashes a 4096-byte description: the same bound keeps the same hash */
    size_t l = 0, dl = sizeof desc;
    desc[0] = 0;
    json_t *cpu = json_object_get(meta, "cpu");
    static const char *const cf[] = {"model", "sockets", "cores", "pus", "l1d_bytes", "l2_bytes", "l3_bytes", NULL};
    hb_appendf(desc, dl, &l, "cpu:");
    for (int i = 0; cf[i]; i++) {
        hb_appendf(desc, dl, &l, " %s=", cf[i]);
        put_json(desc, dl, &l, json_object_get(cpu, cf[i]));
    }
    /* the host's total memory to the nearest GiB (sysinfo's total moves by a few MB between kernels) */
    json_t *mem = json_object_get(meta, "memory_bytes");
    if (json_is_number(mem) && json_number_value(mem) > 0)
        hb_appendf(desc, dl, &l, "; memory=%.0f GiB", round(json_number_value(mem) / 1073741824.0));
    hb_appendf(desc, dl, &l, "; compiler=%s", hb_rec_str(meta, "compiler") ? hb_rec_str(meta, "compiler") : "?");
    hb_appendf(desc, dl, &l, "; openblas=");
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
        hb_appendf(desc, dl, &l, "; %s:", names[i]);
        /* the info fields that name the device and its software, sorted by name; the description
         * (free text: it repeats them, with memory sizes and counts that may change from run to run)
         * only for a backend that has none of them, with those sizes and counts blanked */
        json_t *info = json_object_get(b, "info");
        const char *key;
        json_t *v;
        const char *keys[64];
        size_t nk = 0;
        json_object_foreach(info, key, v) if (nk < 64 && ident_field(key) && !json_is_object(v) && !json_is_array(v)) keys[nk++] = key;
        for (size_t a = 1; a < nk; a++)
            for (size_t c = a; c > 0 && strcmp(keys[c - 1], keys[c]) > 0; c--) { const char *t = keys[c]; keys[c] = keys[c - 1]; keys[c - 1] = t; }
        for (size_t a = 0; a < nk; a++) {
            hb_appendf(desc, dl, &l, " %s=", keys[a]);
            put_json(desc, dl, &l, json_object_get(info, keys[a]));
        }
        if (!nk) {
            char st[1024];
            stable_text(hb_rec_str(b, "description") ? hb_rec_str(b, "description") : "", st, sizeof st);
            hb_appendf(desc, dl, &l, " %s", st);
        }
    }
    free(names);
    free(ord);
    if (text && tlen) snprintf(text, tlen, "%s", desc);
    if (id && idlen) snprintf(id, idlen, "%016llx", (unsigned long long)hb_hash64(desc));
}

/* The name of the part p (up to end): what precedes its first "=" or ": ". */
static size_t part_name_len(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == '=' || (p[i] == ':' && i + 1 < n && p[i + 1] == ' ')) return i;
    return n;
}

/* The k-th (from 0) part of text named (name, nl): its start and length, or NULL. A name may come
 * twice: "cpu" is the CPU's part and the cpu backend's. */
static const char *find_part(const char *text, const char *name, size_t nl, int k, size_t *len)
{
    for (const char *p = text; p && *p;) {
        const char *e = strstr(p, "; ");
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (part_name_len(p, n) == nl && !strncmp(p, name, nl) && k-- == 0) { *len = n; return p; }
        p = e ? e + 2 : NULL;
    }
    return NULL;
}

void hb_machine_text_diff(const char *a, const char *b, char *out, size_t len)
{
    size_t l = 0;
    if (!len) return;
    out[0] = 0;
    for (int side = 0; side < 2; side++) {
        const char *x = side ? b : a, *y = side ? a : b;
        for (const char *p = x; p && *p;) {
            const char *e = strstr(p, "; ");
            size_t n = e ? (size_t)(e - p) : strlen(p), nl = part_name_len(p, n), yn = 0;
            int k = 0; /* earlier parts of x with this name */
            for (const char *r = x; r < p;) {
                const char *re = strstr(r, "; ");
                size_t rn = re ? (size_t)(re - r) : strlen(r);
                k += part_name_len(r, rn) == nl && !strncmp(r, p, nl);
                r = re ? re + 2 : p;
            }
            const char *q = find_part(y, p, nl, k, &yn);
            if (!q && side == 0)
                hb_appendf(out, len, &l, "%s%.*s: %.*s vs absent", l ? " | " : "", (int)nl, p, (int)n, p);
            else if (!q)
                hb_appendf(out, len, &l, "%s%.*s: absent vs %.*s", l ? " | " : "", (int)nl, p, (int)n, p);
            else if (side == 0 && (yn != n || strncmp(p, q, n)))
                hb_appendf(out, len, &l, "%s%.*s: %.*s vs %.*s", l ? " | " : "", (int)nl, p, (int)n, p, (int)yn, q);
            p = e ? e + 2 : NULL;
        }
    }
}
