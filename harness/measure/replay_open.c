/* replay_open.c - the process side of a replay (replay.h): the OpenMP wait policy it runs under, and
 * the backend instances of a plan's cost table opened in it. */
#include "measure/replay.h"
#include "measure/internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void hb_replay_wait_policy(const hb_plan_costs *c, int argc, char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || getenv("HB_REPLAY_REEXEC")) return;
    int ocl = 0;
    for (int d = 0; d < c->ndev; d++) ocl |= !strcmp(c->dev[d].type, "opencl");
    if (!ocl) return;
    char **av = calloc((size_t)argc + 2, sizeof *av);
    if (!av) return;
    av[0] = (char *)"hybench";
    for (int i = 0; i < argc; i++) av[i + 1] = argv[i];
    setenv("GOMP_SPINCOUNT", "1000", 1);
    setenv("HB_REPLAY_REEXEC", "1", 1);
    fflush(NULL);
    execv("/proc/self/exe", av);
    unsetenv("GOMP_SPINCOUNT");
    free(av);
}

/* ---- opening the plan's instances ---- */

hb_status hb_replay_open(const hb_plan_costs *c, hb_instance inst[HB_PLAN_MAXDEV], char *err, size_t errlen)
{
    memset(inst, 0, sizeof(hb_instance) * HB_PLAN_MAXDEV);
    for (int d = 0; d < c->ndev; d++) {
        const hb_backend_entry *e = hb_backend_find(c->dev[d].type);
        hb_instance all[MAX_INST];
        char why[256] = "";
        int n = e ? hb_backend_open(e, all, MAX_INST, why, sizeof why) : 0;
        int got = -1;
        for (int k = 0; k < n; k++) {
            if (got < 0 && !strcmp(all[k].name, c->dev[d].id)) got = k;
            else all[k].ops->close(&all[k]);
        }
        if (got < 0) {
            snprintf(err, errlen, "backend %s is not available in this process: %s", c->dev[d].id,
                     !e ? "unknown type" : n ? "no instance of that name here" : why);
            hb_replay_close(c, inst);
            return HB_ESKIP;
        }
        inst[d] = all[got];
    }
    return HB_OK;
}

void hb_replay_close(const hb_plan_costs *c, hb_instance inst[HB_PLAN_MAXDEV])
{
    for (int d = 0; d < c->ndev; d++)
        if (inst[d].ops) { inst[d].ops->close(&inst[d]); inst[d].ops = NULL; }
}
