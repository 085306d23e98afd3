/* benchdnn_find.c - where a benchdnn problem list is found (workload/benchdnn.h, hb_benchdnn_find):
 * beside the workload file, in its benchdnn/ folder, in $HB_BENCHDNN_DIR (also in a oneDNN checkout's
 * KIND/NAME layout) and in the workloads/benchdnn/ shipped beside the running executable. */
#include "workload/benchdnn.h"
#include "core/config.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static int readable(const char *p)
{
    FILE *f = fopen(p, "r");
    if (!f) return 0;
    fclose(f);
    return 1;
}

/* The directory of the running executable (/proc/self/exe) into buf; "" when it cannot be read. */
static void exe_dir(char *buf, size_t len)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    buf[0] = 0;
    if (n <= 0) return;
    exe[n] = 0;
    char *sl = strrchr(exe, '/');
    if (!sl) return;
    *sl = 0;
    snprintf(buf, len, "%s", exe);
}

hb_status hb_benchdnn_find(const char *name, const char *base_dir, char *buf, size_t buflen, char *err,
                           size_t errlen)
{
    char tried[1024] = "";
    size_t tl = 0;
    char cand[4096], exe[4096];
    const char *env = hb_config_get()->benchdnn_dir;
    /* a oneDNN checkout names the list KIND/REST where hybench's shipped copy says KIND_REST */
    char sub[512] = "";
    const char *us = strchr(name, '_');
    if (us && (size_t)(us - name) < 16 && !strchr(name, '/'))
        snprintf(sub, sizeof sub, "%.*s/%s", (int)(us - name), name, us + 1);
    exe_dir(exe, sizeof exe);
    for (int step = 0; step < 8; step++) {
        cand[0] = 0;
        if (name[0] == '/') {
            if (step == 0) snprintf(cand, sizeof cand, "%s", name);
        } else if (step == 0) {
            if (base_dir && *base_dir) snprintf(cand, sizeof cand, "%s/%s", base_dir, name);
            else snprintf(cand, sizeof cand, "%s", name);
        } else if (step == 1 && base_dir && *base_dir) {
            snprintf(cand, sizeof cand, "%s/" HB_BENCHDNN_SUBDIR "/%s", base_dir, name);
        } else if (step == 2 && env && *env) {
            snprintf(cand, sizeof cand, "%s/%s", env, name);
        } else if (step == 3 && env && *env && sub[0]) {
            snprintf(cand, sizeof cand, "%s/%s", env, sub);
        } else if (step >= 4 && exe[0]) {
            /* the executable's folder's parent and up to three more above it: build/hybench, a GPU
             * bundle's build/hybench, build/tests/test_*, build/<tree>/tests/test_* (sanitizers) */
            char up[16] = "";
            for (int k = 4; k < step; k++) strcat(up, "/..");
            int k = snprintf(cand, sizeof cand, "%s%s/../workloads/" HB_BENCHDNN_SUBDIR "/%s", exe, up, name);
            if (k < 0 || (size_t)k >= sizeof cand) cand[0] = 0; /* longer than a path: not a candidate */
        }
        if (!cand[0]) continue;
        if (readable(cand)) {
            char canon[PATH_MAX];
            if (step >= 4 && realpath(cand, canon) && strlen(canon) < sizeof cand) /* no "build/.." in sources */
                snprintf(cand, sizeof cand, "%s", canon);
            if (strlen(cand) >= buflen) { if (err && errlen) snprintf(err, errlen, "path too long: %s", cand); return HB_EINVAL; }
            snprintf(buf, buflen, "%s", cand);
            return HB_OK;
        }
        if (tl < sizeof tried) tl += (size_t)snprintf(tried + tl, sizeof tried - tl, "%s%s", tl ? ", " : "", cand);
    }
    if (err && errlen)
        snprintf(err, errlen,
           "cannot read benchdnn list \"%s\" (tried %s); the lists hybench ships are in workloads/" HB_BENCHDNN_SUBDIR
           "/, and HB_BENCHDNN_DIR=<oneDNN checkout>/tests/benchdnn/inputs reads oneDNN's own",
           name, tried);
    return HB_EDEVICE;
}
