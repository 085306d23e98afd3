/*
 * trend.h - the nightly history (`hybench trend`, docs/compare.md): results files listed in a JSON
 * Lines index (results/history/index.jsonl, appended by hb_history_append in baseline.h) and, per
 * host, each case's median over the last runs with the steps that compare would flag.
 */
#ifndef HB_TREND_H
#define HB_TREND_H
#include <limits.h>
#include <stddef.h>
#include "analysis/compare.h"

/* One run of the index. */
typedef struct hb_hist_entry { char run_id[128], date[64], commit[64], host[256], file[PATH_MAX]; } hb_hist_entry;

/* Read the index, sorted by host then date; a file path that does not exist as written is looked up
 * beside the index. NULL with the reason in err (unreadable, malformed, out of memory). */
hb_hist_entry *hb_trend_read_index(const char *index, size_t *n, char *err, size_t errlen);

typedef struct hb_trend_opts {
    hb_cmp_options cmp;
    const char *out, *tmpl;
    int last, plot;
} hb_trend_opts;

/* One host's series h[0..nh-1]: OUT/<host>/<op>__<backend>.svg and .dat (gnuplot on the template) and
 * OUT/<host>/index.html. Prints a line per host. Returns 0, or an HB_EXIT_* code. */
int hb_trend_host(const hb_hist_entry *h, size_t nh, const hb_trend_opts *t);
#endif
