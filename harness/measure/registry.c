/*
 * registry.c - every backend type hybench knows, with its availability (stress-ng style: a type
 * whose dependency is missing still registers, with the reason), and plugin loading.
 */
#include "measure/registry.h"
#include "cpu/cpu.h"
#include "cpu_ref/ref.h"
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const hb_backend_entry hb_backends[] = {
    {"cpu-ref", &hb_cpu_ref_ops, NULL, NULL, NULL},
    {"cpu", &hb_cpu_ops, NULL, NULL, NULL},
    {"opencl", NULL, "hb_opencl.so", "hb_opencl_ops", NULL},
    {"cuda", NULL, "hb_cuda.so", "hb_cuda_ops", NULL},
#ifdef __APPLE__
    {"metal", NULL, NULL, NULL, "the Metal backend is not implemented yet in hybench"},
    {"coreml", NULL, NULL, NULL, "the Core ML backend is not implemented yet in hybench"},
#else
    {"metal", NULL, NULL, NULL, "Metal exists only on Apple hardware under macOS; this host is not one"},
    {"coreml", NULL, NULL, NULL, "Core ML (Neural Engine) exists only on Apple hardware under macOS; this host is not one"},
#endif
};
const int hb_nbackends = (int)(sizeof hb_backends / sizeof hb_backends[0]);

const hb_backend_entry *hb_backend_find(const char *type)
{
    for (int i = 0; i < hb_nbackends; i++) {
        size_t l = strlen(hb_backends[i].type);
        if (!strncmp(type, hb_backends[i].type, l) && (type[l] == 0 || type[l] == ':')) return &hb_backends[i];
    }
    return NULL;
}

static void plugin_dir(char *dir, size_t len)
{
    const char *env = hb_config_get()->plugin_dir;
    if (env && *env) { snprintf(dir, len, "%s", env); return; }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) { snprintf(dir, len, "build"); return; }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    snprintf(dir, len, "%s", exe);
}

const hb_backend_ops *hb_backend_load(const hb_backend_entry *e, char *reason, size_t reasonlen)
{
    const hb_backend_ops *ops = e->ops;
    if (!ops && e->plugin) {
        char dir[PATH_MAX], path[PATH_MAX + 64];
        plugin_dir(dir, sizeof dir);
        snprintf(path, sizeof path, "%s/%s", dir, e->plugin);
        if (access(path, R_OK) != 0) {
            snprintf(reason, reasonlen, "plugin %s was not built (see `make` output: its SDK was not found at build time)", path);
            return NULL;
        }
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) { snprintf(reason, reasonlen, "cannot load %s: %s", path, dlerror()); return NULL; }
        ops = (const hb_backend_ops *)dlsym(h, e->symbol);
        if (!ops) { snprintf(reason, reasonlen, "%s lacks symbol %s", path, e->symbol); return NULL; }
    }
    if (!ops) { snprintf(reason, reasonlen, "%s", e->unavailable ? e->unavailable : "not built"); return NULL; }
    if (hb_backend_validate(ops) != HB_OK) {
        snprintf(reason, reasonlen, "backend %s: ABI mismatch or a required hook missing", e->type);
        return NULL;
    }
    return ops;
}

int hb_backend_open(const hb_backend_entry *e, hb_instance *out, int max, char *reason, size_t reasonlen)
{
    memset(out, 0, sizeof *out * (size_t)max);
    reason[0] = 0;
    const hb_backend_ops *ops = hb_backend_load(e, reason, reasonlen);
    if (!ops) return 0;
    /* the run's settings, filled at the command-line boundary (core/config.h) */
    if (ops->configure) ops->configure(hb_config_get());
    int n = ops->enumerate(out, max, reason, reasonlen);
    if (n <= 0 && !reason[0]) snprintf(reason, reasonlen, "no device found");
    for (int i = 0; i < n; i++)
        if (!out[i].ops) out[i].ops = ops;
    return n < 0 ? 0 : n;
}
