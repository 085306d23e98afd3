/* templates.c - finding the template folder (templates.h). */
#include "cli/templates.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int holds(const char *dir, const char *marker)
{
    char p[PATH_MAX + 64];
    if (snprintf(p, sizeof p, "%s/%s", dir, marker) >= (int)sizeof p) return 0;
    return access(p, R_OK) == 0;
}

int hb_find_templates(const char *opt, const char *marker, char *out, size_t len)
{
    if (opt) {
        snprintf(out, len, "%s", opt);
        return holds(opt, marker) ? 0 : -1;
    }
    const char *env = getenv("HB_REPORT_TEMPLATES"); /* the command-line boundary (docs/environment.md) */
    if (env && *env && holds(env, marker)) { snprintf(out, len, "%s", env); return 0; }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        const char *dir = dirname(exe);
        static const char *const rel[] = { "/../templates", "/../../templates" };
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char cand[PATH_MAX + 32];
            if (snprintf(cand, sizeof cand, "%s%s", dir, rel[i]) >= (int)sizeof cand) continue;
            if (holds(cand, marker) && snprintf(out, len, "%s", cand) < (int)len) return 0;
        }
    }
    snprintf(out, len, "templates");
    return holds("templates", marker) ? 0 : -1;
}
