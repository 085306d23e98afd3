/* machine.c - machine fingerprints of runs (machine.h). */
#include "results/machine.h"
#include "results/results.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void add(char *t, size_t tl, size_t *k, const char *s)
{
    if (!s || !*s || !t || *k + 1 >= tl) return;
    int n = snprintf(t + *k, tl - *k, "%s%s", *k ? " | " : "", s);
    if (n > 0) *k += (size_t)n < tl - *k ? (size_t)n : tl - *k - 1;
}

/* "OpenBLAS 0.3.21 NO_LAPACKE ..." -> "OpenBLAS 0.3.21" */
static void first_words(const char *s, int words, char *buf, size_t len)
{
    size_t k = 0;
    int w = 0;
    buf[0] = 0;
    if (!s) return;
    for (; s[k] && k + 1 < len; k++) {
        if (s[k] == ' ' && ++w == words) break;
        buf[k] = s[k];
    }
    buf[k] = 0;
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
    char t[2048], part[400], w[200];
    size_t k = 0;
    t[0] = 0;
    json_t *cpu = json_object_get(meta, "cpu");
    if (cpu) {
        snprintf(part, sizeof part, "%s, %lld cores", hb_rec_str(cpu, "model") ? hb_rec_str(cpu, "model") : "cpu ?",
                 (long long)json_integer_value(json_object_get(cpu, "cores")));
        add(t, sizeof t, &k, part);
    }
    json_t *mem = json_object_get(meta, "memory_bytes");
    if (json_is_number(mem)) {
        snprintf(part, sizeof part, "%.0f GiB", json_number_value(mem) / 1073741824.0);
        add(t, sizeof t, &k, part);
    }
    add(t, sizeof t, &k, hb_rec_str(meta, "os"));
    add(t, sizeof t, &k, hb_rec_str(meta, "compiler"));
    first_words(hb_rec_str(json_object_get(meta, "openblas"), "config"), 2, w, sizeof w);
    add(t, sizeof t, &k, w);
    size_t i;
    json_t *b;
    json_array_foreach(backends, i, b) {
        if (!json_is_true(json_object_get(b, "available"))) continue;
        const char *be = hb_rec_str(b, "backend");
        if (!be || !strncmp(be, "cpu", 3)) continue; /* the host is named above */
        json_t *info = json_object_get(b, "info");
        char dev[256];
        hb_machine_device(b, dev, sizeof dev);
        size_t pk = (size_t)snprintf(part, sizeof part, "%s", dev);
        static const char *const vers[] = {"nvml_driver_version", "driver_version", "runtime_version",
                                           "cublas_version", "cudnn_version", "driver", "opencl_version"};
        for (size_t v = 0; v < sizeof vers / sizeof *vers && pk < sizeof part; v++) {
            json_t *x = json_object_get(info, vers[v]);
            if (json_is_string(x)) pk += (size_t)snprintf(part + pk, sizeof part - pk, ", %s %s", vers[v], json_string_value(x));
            else if (json_is_integer(x))
                pk += (size_t)snprintf(part + pk, sizeof part - pk, ", %s %lld", vers[v], (long long)json_integer_value(x));
        }
        add(t, sizeof t, &k, part);
    }
    if (text && tlen) snprintf(text, tlen, "%s", t);
    if (id && idlen) {
        uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 offset basis and prime */
        for (const unsigned char *p = (const unsigned char *)t; *p; p++) { h ^= *p; h *= 0x100000001b3ULL; }
        snprintf(id, idlen, "fp-%012" PRIx64, h >> 16);
    }
}
