/*
 * commands.h - entry points of the `hybench` subcommands. main.c dispatches argv[1] to these.
 * Each takes the arguments after the subcommand name (argv[0] is the subcommand name) and returns
 * a process exit status from the HB_EXIT_* list in hybench.h. Each prints its own --help.
 */
#ifndef HB_COMMANDS_H
#define HB_COMMANDS_H
int hb_cmd_run(int argc, char **argv);       /* driver.c:   run the workloads, write results */
int hb_cmd_verify(int argc, char **argv);    /* driver.c:   verify-only run (one sample per case) */
int hb_cmd_list(int argc, char **argv);      /* registry.c: list backends with availability */
int hb_cmd_report(int argc, char **argv);    /* report.c:   render reports/<name>/ from results */
int hb_cmd_compare(int argc, char **argv);   /* compare.c:  regression gate */
int hb_cmd_trend(int argc, char **argv);     /* trend.c:    nightly history plots */
int hb_cmd_baseline(int argc, char **argv);  /* trend.c:    baseline set|show */
int hb_cmd_csv(int argc, char **argv);       /* resultsio.c: CSV export */
int hb_cmd_gbench(int argc, char **argv);    /* gbench.c:   Google Benchmark JSON export */
int hb_cmd_targets(int argc, char **argv);   /* targets.c:  the issues' performance targets */
#endif
