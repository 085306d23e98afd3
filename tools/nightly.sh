#!/usr/bin/env bash
# tools/nightly.sh - the nightly job. `./run_all.sh --nightly [ARGS]` builds hybench and calls this;
# ARGS go to `hybench run` (e.g. --backend cpu,opencl). Steps:
#   1. build/hybench run ARGS --out results/history/<run-id>.jsonl   (the default sweep)
#   2. append the run to results/history/index.jsonl                (hybench trend --add)
#   3. hybench trend: reports/trend/<host>/index.html and one SVG per op and backend, with the steps
#      that `hybench compare` calls regressions marked
#   4. when results/baselines/<host>.jsonl exists (hybench baseline set RESULTS):
#      hybench compare --baseline-dir results/baselines, written to
#      reports/trend/<host>/compare-<run-id>.md/.json/.xml and printed
# Environment: HB (binary, default build/hybench), HB_HISTORY (results/history),
#   HB_BASELINES (results/baselines), HB_TREND_OUT (reports/trend), HB_COMPARE_ARGS (extra options
#   for compare, e.g. "--threshold 5% --threshold cuda=3%").
# Exit status: compare's when a baseline exists and it did not pass (1 regression or a case that
# became wrong/crashed/missing, 3 incomparable machine); else hybench run's (0, 5 wrong, 8 failed);
# 7 when no results file was written or the history index could not be appended.
set -uo pipefail
cd "$(dirname "$0")/.."
HB=${HB:-build/hybench}
HIST=${HB_HISTORY:-results/history}
BASEDIR=${HB_BASELINES:-results/baselines}
TREND_OUT=${HB_TREND_OUT:-reports/trend}
mkdir -p "$HIST" || exit 7

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
"$HB" trend --add "$out" --index "$HIST/index.jsonl" || exit 7

"$HB" trend --history "$HIST" --out "$TREND_OUT"
trc=$?
[ $trc -ne 0 ] && echo "nightly: hybench trend exited $trc (plots may be incomplete)" >&2

if "$HB" baseline show --dir "$BASEDIR" "$out" >/dev/null 2>&1; then
  cdir=$TREND_OUT/$slug
  mkdir -p "$cdir"
  # shellcheck disable=SC2086
  "$HB" compare --baseline-dir "$BASEDIR" "$out" --markdown "$cdir/compare-$runid.md" \
    --json "$cdir/compare-$runid.json" --junit "$cdir/compare-$runid.xml" ${HB_COMPARE_ARGS:-}
  crc=$?
  [ -f "$cdir/compare-$runid.md" ] && cat "$cdir/compare-$runid.md"
  echo "nightly: compare against the baseline of $host: exit $crc"
  [ $crc -ne 0 ] && exit $crc
else
  echo "nightly: no baseline for $host in $BASEDIR (promote a run with: $HB baseline set $out --dir $BASEDIR)"
fi
echo "nightly: results $out; trend $TREND_OUT/$slug/index.html"
exit $rc
