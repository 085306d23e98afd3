/*
 * registry.c - every backend type hybench knows, with its availability (stress-ng style: a type
 * whose dependency is missing still registers, with the reason), plugin loading, and `hybench list`.
 */
#include "measure/registry.h"
#include "cpu/cpu.h"
#include "cpu_ref/ref.h"
#include "cli/commands.h"
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
    const char *env = getenv("HB_PLUGIN_DIR");
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
    int n = ops->enumerate(out, max, reason, reasonlen);
    if (n <= 0 && !reason[0]) snprintf(reason, reasonlen, "no device found");
    for (int i = 0; i < n; i++)
        if (!out[i].ops) out[i].ops = ops;
    return n < 0 ? 0 : n;
}

int hb_cmd_list(int argc, char **argv)
{
    int verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: hybench list [-v]\n  Lists every backend type with its availability; available ones with each device\n"
                   "  instance; unavailable ones with the reason. -v adds each instance's facts (JSON).\n");
            return HB_EXIT_OK;
        } else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) verbose = 1;
        else { fprintf(stderr, "hybench list: unknown option %s\n", argv[i]); return HB_EXIT_USAGE; }
    }
    printf("%-12s %-10s %s\n", "BACKEND", "STATUS", "DEVICE / REASON");
    for (int i = 0; i < hb_nbackends; i++) {
        hb_instance inst[16];
        char reason[512];
        int n = hb_backend_open(&hb_backends[i], inst, 16, reason, sizeof reason);
        if (n == 0) { printf("%-12s %-10s %s\n", hb_backends[i].type, "unavailable", reason); continue; }
        for (int j = 0; j < n; j++) {
            printf("%-12s %-10s %s\n", inst[j].name, "available", inst[j].description);
            if (inst[j].ops->describe) {
                char buf[4096];
                if (inst[j].ops->describe(&inst[j], buf, sizeof buf) == HB_OK && (verbose || strlen(buf) < 400))
                    printf("%-12s %-10s %s\n", "", "", buf);
            }
            inst[j].ops->close(&inst[j]);
        }
    }
    return HB_EXIT_OK;
}
