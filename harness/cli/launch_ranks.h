/*
 * launch_ranks.h - `hybench run --ranks N`: one process per rank started by hybench itself, their
 * results files merged into the run's one results file (docs/collectives.md, "Launching"). Used by
 * cmd_run.c only.
 */
#ifndef HB_LAUNCH_RANKS_H
#define HB_LAUNCH_RANKS_H
#include <getopt.h>

/* 1 when this process is already a rank of a launch (HB_RANK set, or core/launch.h finds more than
 * one process: mpirun, srun, or hybench's own launcher), so --ranks must not start ranks again. */
int hb_ranks_in_launch(void);

/* Start nranks (2..1024) copies of this hybench (fork + execv of /proc/self/exe), wait for them all,
 * merge their files into out_path and return the exit status.
 *   argc, argv: the subcommand's arguments as cmd_run.c's getopt_long left them (argv[0] = "run" or
 *     "verify", borrowed); each rank gets them without --ranks, --out and --force, plus
 *     `--out DIR/rank<r>.jsonl --force`. lo: the subcommand's long options (borrowed; which ones take
 *     an argument, so that option values are never taken for options; its short options take none).
 *   out_path: the run's results file (borrowed); the caller has opened, locked and, with --force,
 *     emptied it. DIR is out_path without ".jsonl" plus ".ranks" (results/<run-id>.ranks/), made
 *     when missing; it keeps the rank files and the logs rank<r>.log of ranks 1.. (rank 0's output
 *     is this process's). Environment of rank r: HB_NRANKS=nranks, HB_RANK=r, HB_LOCAL_RANK=r,
 *     HB_RDV_DIR=DIR/rdv (made empty), HB_NCCL_ID_FILE=DIR/nccl-id (removed first); everything else,
 *     NCCL_* included, passes through.
 * SIGINT and SIGTERM are forwarded to every rank still running. A rank that exits non-zero gets its
 * log's last lines printed; one killed by a signal does not stop the others, and its file is merged
 * as far as it got (results/ranks.h: its missing cases are marked). Prints "hybench CMD: ..." lines
 * on stderr and, when the merge wrote out_path, out_path on stdout. Returns the worst of the ranks'
 * exit statuses and the merge's (severity: 7 cannot write > 2 usage or bad rank file > 4 > 130
 * interrupted > 6 > 5 wrong > 8 failed > 0; a rank killed by another signal, or an exit status
 * outside the README's list, counts as 8); HB_EXIT_IO when DIR cannot be made or no rank started. */
int hb_ranks_launch(int nranks, int argc, char **argv, const struct option *lo, const char *cmd, const char *out_path);
#endif
