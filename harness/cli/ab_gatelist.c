/* ab_gatelist.c - `hybench ab`'s default case list: the gate list drawn up by CUR (cli/ab_gatelist.h). */
#include "cli/ab_gatelist.h"
#include "cli/ab_instr_run.h"
#include "core/hybench.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int hb_ab_gate_list(const char *exe, char **fwd, int nfwd, int instr, const hb_ab_noise *no, const char *path, const char *log)
{
    static const char *const keep1[] = {"--backend", "--op", "--dtype", "--mode", "--route"};
    char *av[AB_MAX_FWD + 8];
    int k = 0;
    av[k++] = (char *)exe;
    av[k++] = (char *)"gate-list";
    av[k++] = (char *)"--out";
    av[k++] = (char *)path;
    if (instr) av[k++] = (char *)"--instructions";
    for (int i = 0; i < nfwd && k < AB_MAX_FWD; i++) {
        if (!strcmp(fwd[i], "--quick")) { av[k++] = fwd[i]; continue; }
        for (size_t j = 0; j < sizeof keep1 / sizeof *keep1; j++)
            if (!strcmp(fwd[i], keep1[j]) && i + 1 < nfwd) { av[k++] = fwd[i]; av[k++] = fwd[++i]; break; }
    }
    av[k] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { perror("hybench ab: fork"); return -1; }
    if (pid == 0) {
        int lf = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644), nul = open("/dev/null", O_WRONLY);
        if (lf >= 0) dup2(lf, 2);
        if (nul >= 0) dup2(nul, 1);
        if (no->threads > 0) {
            char t[16];
            snprintf(t, sizeof t, "%d", instr ? 1 : no->threads);
            setenv("OMP_NUM_THREADS", t, 1);
            setenv("OPENBLAS_NUM_THREADS", t, 1);
        }
        for (int i = 0; instr && i < hb_ab_nvg_env; i++) putenv(hb_ab_vg_env[i]);
        execv(exe, av);
        fprintf(stderr, "hybench ab: cannot run %s\n", exe);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {}
    int x = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (x == HB_EXIT_OK) {
        fprintf(stderr, "hybench ab: the case list: the gate list, one case per kernel path (%s; --no-gate-list: the list `run` reads)\n", path);
        return 0;
    }
    FILE *lf = fopen(log, "r");
    char line[512];
    int unknown = 0;
    while (lf && fgets(line, sizeof line, lf)) unknown |= strstr(line, "unknown command") != NULL;
    if (lf) fclose(lf);
    if (unknown)
        fprintf(stderr, "hybench ab: the CUR build %s has no `gate-list` (older than the gate list): name the workload files, "
                        "or --no-gate-list for the list `run` reads\n", exe);
    else fprintf(stderr, "hybench ab: `%s gate-list` failed (exit %d): see %s\n", exe, x, log);
    return -1;
}
