/*
 * commands.h - entry points of the `hybench` subcommands, one file of cli/ each (cmd_<name>.c: its
 * options, help and exit status; the work is done by the layers below). main.c dispatches argv[1].
 * Each takes the arguments after the subcommand name (argv[0] is the subcommand name) and returns
 * a process exit status from the HB_EXIT_* list in hybench.h. Each prints its own --help.
 */
#ifndef HB_COMMANDS_H
#define HB_COMMANDS_H
int hb_cmd_run(int argc, char **argv);       /* cmd_run.c:      run the workloads, write results */
int hb_cmd_verify(int argc, char **argv);    /* cmd_run.c:      verify-only run (one sample per case) */
int hb_cmd_list(int argc, char **argv);      /* cmd_list.c:     list backends with availability */
int hb_cmd_report(int argc, char **argv);    /* cmd_report.c:   render reports/<name>/ from results */
int hb_cmd_compare(int argc, char **argv);   /* cmd_compare.c:  regression gate */
int hb_cmd_ab(int argc, char **argv);        /* cmd_ab.c:       merge gate, two builds interleaved */
int hb_cmd_gate_list(int argc, char **argv); /* cmd_gate_list.c: the merge gate's case list, one case per kernel path */
/* The workload files `run` reads when none is named (cmd_run.c), NULL-terminated; `gate-list`'s candidates. */
extern const char *const hb_default_workloads[];
int hb_cmd_trend(int argc, char **argv);     /* cmd_trend.c:    nightly history plots */
int hb_cmd_history(int argc, char **argv);   /* cmd_history.c:  the history store: import, export, list */
int hb_cmd_publish(int argc, char **argv);   /* cmd_publish.c:  a static site of the nightly history */
int hb_cmd_baseline(int argc, char **argv);  /* cmd_baseline.c: baseline set|show */
int hb_cmd_csv(int argc, char **argv);       /* cmd_csv.c:      CSV export */
int hb_cmd_gbench(int argc, char **argv);    /* cmd_gbench.c:   Google Benchmark JSON export */
int hb_cmd_merge_ranks(int argc, char **argv); /* cmd_merge_ranks.c: the ranks' results files of a launch -> one */
int hb_cmd_plan(int argc, char **argv);      /* cmd_plan.c:     a model's device plans under measured costs */
/* A number option's value v (a trailing % allowed) within [lo, hi] into *out: 0, or -1 after a message
 * "hybench CMD: OPT V: want a number in [lo, hi]" on stderr (the caller returns HB_EXIT_USAGE).
 * cmd_trend.c; trend and publish share their trend options through it. */
int hb_cli_parse_num(const char *cmd, const char *opt, const char *v, double lo, double hi, double *out);
int hb_cmd_roofline(int argc, char **argv);  /* cmd_roofline.c: each case family's fraction of its ceiling
                                                (also dispatched as "targets", its former name) */
#endif
