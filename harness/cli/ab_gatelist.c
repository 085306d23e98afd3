/* ab_gatelist.c - `hybench ab`'s default case list: the gate list drawn up by CUR (cli/ab_gatelist.h). */
#include "cli/ab_gatelist.h"
#include "cli/ab_instr_run.h"
#include "core/hybench.h"
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int hb_ab_gate_list(const char *const exe[2], char **fwd, int nfwd, int instr, const hb_ab_noise *no, const char *dir,
                    char **extra, int *nextra)
{
    static const char *const keep1[] = {"--backend", "--op", "--dtype", "--mode", "--route"};
    char path[1300], keys[1300], log[1300];
    const char *stem = instr ? "gate-list-instructions" : "gate-list";
    snprintf(path, sizeof path, "%s/%s.ini", dir, stem);
    snprintf(keys, sizeof keys, "%s/%s.keys", dir, stem);
    snprintf(log, sizeof log, "%s/%s.log", dir, stem);
    *nextra = 0;
    char *av[AB_MAX_FWD + 8];
    int k = 0;
    av[k++] = (char *)exe[1];
    av[k++] = (char *)"gate-list";
    av[k++] = (char *)"--out";
    av[k++] = path;
    av[k++] = (char *)"--keys";
    av[k++] = keys;
    if (instr) av[k++] = (char *)"--instructions";
    for (int i = 0; i < nfwd && k < AB_MAX_FWD; i++) {
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
        if (no->threads > 0 || instr) {
            char t[16];
            snprintf(t, sizeof t, "%d", instr ? 1 : no->threads);
            setenv("OMP_NUM_THREADS", t, 1);
            setenv("OPENBLAS_NUM_THREADS", t, 1);
        }
        /* pinned as the runs are: on one CPU the cpu backend skips its timed thread calibration, which
         * would otherwise decide the -rows plans (and their names) by this process's timings */
        if (no->have_pin) sched_setaffinity(0, sizeof no->pin, &no->pin);
        for (int i = 0; instr && i < hb_ab_nvg_env; i++) putenv(hb_ab_vg_env[i]);
        execv(exe[1], av);
        fprintf(stderr, "hybench ab: cannot run %s\n", exe[1]);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {}
    int x = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (x != HB_EXIT_OK) {
        FILE *lf = fopen(log, "r");
        char line[512];
        int unknown = 0;
        while (lf && fgets(line, sizeof line, lf)) unknown |= strstr(line, "unknown command") != NULL;
        if (lf) fclose(lf);
        if (unknown)
            fprintf(stderr, "hybench ab: the CUR build %s has no `gate-list` (older than the gate list): name the workload "
                            "files, or --no-gate-list for the list `run` reads\n", exe[1]);
        else fprintf(stderr, "hybench ab: `%s gate-list` failed (exit %d): see %s\n", exe[1], x, log);
        return -1;
    }
    extra[(*nextra)++] = strdup(path);
    if (hb_ab_exe_has_option(exe[0], "--cases-from") && hb_ab_exe_has_option(exe[1], "--cases-from")) {
        extra[(*nextra)++] = strdup("--cases-from");
        extra[(*nextra)++] = strdup(keys);
    } else
        fprintf(stderr, "hybench ab: a build has no `run --cases-from`: every backend runs every case of the gate list\n");
    fprintf(stderr, "hybench ab: the case list%s: the gate list, one case per kernel path (%s; --no-gate-list: the list "
                    "`run` reads)\n", instr ? " of the instruction rounds" : "", path);
    return 0;
}
