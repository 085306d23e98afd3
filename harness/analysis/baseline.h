/*
 * baseline.h - per-machine baselines (`hybench baseline`, compared against by `hybench compare
 * --baseline-dir`) and the nightly history index (`hybench trend --add`). docs/compare.md.
 * A baseline is stored and found by its run's machine fingerprint (results/machine.h), never by host
 * name (a CI runner gets a new name every night): DIR/<fingerprint>.jsonl and .json. A baseline of the
 * layout before, DIR/<host>.jsonl, is still found by the host name, with a notice.
 */
#ifndef HB_BASELINE_H
#define HB_BASELINE_H
#include <stddef.h>
#include "results/results.h"

/* Host name made safe for a file name: [A-Za-z0-9._-] kept, anything else '_'; "unknown" if empty.
 * Returns buf. */
char *hb_host_slug(const char *host, char *buf, size_t len);
/* Paths of the baseline named name in dir: "<dir>/<slug>.jsonl" and "<dir>/<slug>.json" (name: a
 * machine fingerprint, or a host name for the former layout). */
void hb_baseline_paths(const char *dir, const char *name, char *jsonl, char *json, size_t len);
/* The baseline of run r's machine in dir: DIR/<fingerprint of r>.jsonl when it exists, else the former
 * layout's DIR/<host of r>.jsonl (*legacy = 1, and a notice on stderr saying to set it again). Paths
 * into jsonl and json (len each); fp (>= 17 bytes, may be NULL) gets r's fingerprint. Returns 0 when
 * one exists, -1 when none (jsonl then names where it would be). */
int hb_baseline_find(const char *dir, const hb_run *r, char *jsonl, char *json, size_t len, char *fp, int *legacy);
/* Append one line {run_id, date, commit, host, cpu_model, file, cases, ok, wrong, crashed,
 * complete} describing results file `results` to the JSON Lines index `index_path` (created if
 * absent). Errors: HB_EINVAL (results unreadable; reason in err), HB_EDEVICE (cannot write). */
hb_status hb_history_append(const char *index_path, const char *results, char *err, size_t errlen);
/* Promote results file `results` to the baseline of its machine in dir (<fingerprint>.jsonl plus
 * <fingerprint>.json with provenance: host, fingerprint and its text, run, commit, who and when); refused for a run cut short or with wrong/crashed cases unless force (HB_EXIT_USAGE),
 * and always for a file that cannot be compared (hb_run_check_comparable: no meta record, a newer
 * schema, no case records; HB_EXIT_INCOMPARABLE, the file named). Prints what it did; returns an
 * HB_EXIT_* status. */
int hb_baseline_set(const char *results, const char *dir, int force);
/* Print the baseline of results file `results`'s machine (hb_baseline_find), or the baselines whose
 * provenance names host (and a former-layout DIR/<host>.jsonl); with neither, list every baseline in
 * dir. HB_EXIT_USAGE when there is none. */
int hb_baseline_show(const char *dir, const char *host, const char *results);
/* mkdir -p for the directory part of path (dir_only: path itself is the directory). 0 or -1. */
int hb_mkdirs(const char *path, int dir_only);
#endif
