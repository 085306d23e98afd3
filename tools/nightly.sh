#!/usr/bin/env bash
# tools/nightly.sh - the nightly job. `./run_all.sh --nightly [ARGS]` builds hybench and calls this;
# ARGS go to `hybench run` (e.g. --backend cpu,opencl). Steps:
#   1. build/hybench run ARGS --out results/history/<run-id>.jsonl   (the default sweep; the JSON
#      Lines file stays: it is the interchange format and the archive)
#   2. hybench history import: the run goes into the history store (HB_STORE: a SQLite file,
#      default results/history.db, or a postgresql:// URL that a fleet of machines shares). A store
#      that does not exist yet first takes the runs of the former index results/history/index.jsonl.
#   3. hybench trend: steps and drifts over each machine's whole series (machines told apart by their
#      fingerprint, not the host name): reports/trend/<fingerprint>/changes.md, index.html and one
#      SVG per op and backend (docs/history.md)
#   4. hybench report of the night (SVG only, quiet) into reports/<run-id>/, and hybench publish: the
#      browsable site of the whole history, reports/history-site/index.html (every machine, its steps
#      and drifts linked to their night's report, a graph per case; docs/history.md "The site")
#   5. when a baseline of this machine exists (results/baselines/<fingerprint>.jsonl, found by the
#      run's machine fingerprint, or a former results/baselines/<host>.jsonl; hybench baseline set):
#      hybench compare --baseline-dir results/baselines, written to
#      reports/trend/compare-<host>/compare-<run-id>.md/.json/.xml and printed
# Environment: HB (binary, default build/hybench), HB_HISTORY (results/history), HB_STORE
#   (results/history.db, or postgresql://... or a libpq key=value string such as service=hbhist:
#   keep the password out of it, in PGPASSWORD, ~/.pgpass or a service file, docs/history.md; the
#   log names the store with any password as ***; exported so that hybench finds it), HB_STORE_LEAN
#   (set: import --lean, the store keeps statistics and samples; the JSONL file stays whole),
#   HB_BASELINES (results/baselines), HB_TREND_OUT (reports/trend), HB_REPORTS (reports: the nights'
#   reports, REPORTS/<run-id>/), HB_SITE_OUT (reports/history-site; empty: no site), HB_COMPARE_ARGS
#   (extra options for compare, e.g. "--threshold 5% --threshold cuda=3%").
# Exit status: compare's when a baseline exists and it did not pass (1 regression or a case that
# became wrong/crashed/missing, 3 incomparable machine, 11 inconclusive: cases undecided); else
# hybench run's (0, 5 wrong, 8 failed);
# 7 when no results file was written or the run could not be put into the store.
set -uo pipefail
cd "$(dirname "$0")/.."
HB=${HB:-build/hybench}
HIST=${HB_HISTORY:-results/history}
BASEDIR=${HB_BASELINES:-results/baselines}
TREND_OUT=${HB_TREND_OUT:-reports/trend}
REPORTS=${HB_REPORTS:-reports}
SITE_OUT=${HB_SITE_OUT-reports/history-site}
export HB_STORE=${HB_STORE:-results/history.db}
mkdir -p "$HIST" || exit 7
# the store's engine and its name as messages give it (any password as ***: this log may be kept)
read -r store_engine store_name < <("$HB" history where)
# the former history (JSONL files listed in index.jsonl) goes into a new SQLite store once
if [ "$store_engine" = sqlite ] && [ ! -e "$HB_STORE" ] && [ -s "$HIST/index.jsonl" ]; then
  echo "nightly: importing the former history $HIST/index.jsonl into $store_name"
  "$HB" history import "$HIST/index.jsonl" || echo "nightly: some former runs were not imported (see above)" >&2
fi

host=$(hostname)
# same mapping as hb_host_slug() in harness/analysis/baseline.c: keep [A-Za-z0-9._-], anything else '_'
slug=$(printf '%s' "$host" | tr -c 'A-Za-z0-9._-' '_')
[ -z "$slug" ] && slug=unknown
runid=$(date -u +%Y%m%d-%H%M%S)-$slug
out=$HIST/$runid.jsonl

echo "nightly: run $runid -> $out"
"$HB" run --out "$out" "$@"
rc=$?
if [ ! -s "$out" ]; then
  echo "nightly: no results written (hybench run exit $rc)" >&2
  exit 7
fi
# shellcheck disable=SC2086
"$HB" history import ${HB_STORE_LEAN:+--lean} "$out" || exit 7

"$HB" trend --out "$TREND_OUT"
trc=$?
[ $trc -ne 0 ] && echo "nightly: hybench trend exited $trc (plots may be incomplete)" >&2

# the night's report (the site's steps and drifts link to it), then the site; neither changes the exit status.
# The report's folder is named by the run id of the results' meta record, which the site links: it
# is the second hybench run started in, and that may be one past the file name's $runid
reportid=$(head -n 1 "$out" | grep -o '"run_id":"[^"]*"' | head -n 1 | cut -d'"' -f4)
[ -n "$reportid" ] || reportid=$runid
"$HB" report -q --svg-only --out "$REPORTS/$reportid" "$out" \
  || echo "nightly: hybench report exited $? (the site links no report for $reportid)" >&2
if [ -n "$SITE_OUT" ]; then
  "$HB" publish --out "$SITE_OUT" --reports "$REPORTS"
  prc=$?
  [ $prc -ne 0 ] && echo "nightly: hybench publish exited $prc (10: install libjs-dygraphs; the site is not updated)" >&2
fi

if "$HB" baseline show --dir "$BASEDIR" "$out" >/dev/null 2>&1; then
  cdir=$TREND_OUT/compare-$slug
  mkdir -p "$cdir"
  # shellcheck disable=SC2086
  "$HB" compare --baseline-dir "$BASEDIR" "$out" --markdown "$cdir/compare-$runid.md" \
    --json "$cdir/compare-$runid.json" --junit "$cdir/compare-$runid.xml" ${HB_COMPARE_ARGS:-}
  crc=$?
  [ -f "$cdir/compare-$runid.md" ] && cat "$cdir/compare-$runid.md"
  echo "nightly: compare against the baseline of this machine (host $host): exit $crc"
  [ $crc -ne 0 ] && exit $crc
else
  echo "nightly: no baseline for this machine (host $host) in $BASEDIR (promote a run with: $HB baseline set $out --dir $BASEDIR)"
fi
echo "nightly: results $out; store $store_name; trend $TREND_OUT/<machine fingerprint>/index.html${SITE_OUT:+; site $SITE_OUT/index.html}"
exit $rc
