#!/usr/bin/env bash
# End-to-end check of `hybench report`: render a report from results files, load index.html in
# headless Chromium and check that the page loaded with every plot present and nothing on the console:
# the number of <svg> elements in the rendered DOM must equal the number of plots summary.json lists,
# every listed plot must be drawn, the runs table must open the page (one row per run, no metadata
# paragraph), the five question sections and the five cards (each with its per-device table behind a
# <details>) must be there. Also takes a screenshot and checks that it is not blank.
# Without arguments it checks two pages: the checked-in tests/data/cpu_small.jsonl, and the synthetic
# 4-GPU x 2-run input that test_report_multi writes from results/h100-reference.jsonl (skipped, said,
# when either is absent).
# Usage: tests/check_report_html.sh [RESULTS.jsonl ...]      Exit 0 pass, 1 fail, 77 skip (no Chromium).
# HB_BIN overrides the hybench executable (default build/hybench).
set -u
cd "$(dirname "$0")/.."
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "SKIP: no chromium (apt-get install chromium)"; exit 77; }
hb=${HB_BIN:-build/hybench}
[ -x "$hb" ] || { echo "FAIL: $hb missing (make build)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hb_report_check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

check_page() { # name nruns files...
  local name=$1 nruns=$2; shift 2
  local out=$tmp/$name
  local start end nplots nfailed nsvg ncards nruns_rows size
  for f in "$@"; do [ -r "$f" ] || fail "$f not readable"; done
  start=$(date +%s.%N)
  "$hb" report "$@" --out "$out" --name "$name" || fail "hybench report exited $?"
  end=$(date +%s.%N)
  echo "$name: report rendered in $(awk "BEGIN { printf \"%.2f\", $end - $start }") s"
  [ -s "$out/index.html" ] || fail "$name: index.html missing"
  [ -s "$out/report.md" ] || fail "$name: report.md missing"
  [ -s "$out/routing.json" ] || fail "$name: routing.json missing"
  # summary.json is written with one key per line: every plot object, and nothing else, has "script"
  nplots=$(grep -c '"script":' "$out/summary.json")
  nfailed=$(grep -c '"ok": false' "$out/summary.json")
  [ "$nplots" -gt 0 ] || fail "$name: summary.json lists no plot"
  [ "$nfailed" -eq 0 ] || fail "$name: $nfailed plot(s) listed as not drawn"

  # Chromium writes the DOM after loading the page (and, with logging on, every console message as a
  # ":CONSOLE" line); count the inline SVGs in it.
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --enable-logging=stderr --v=0 --dump-dom \
    "file://$out/index.html" >"$tmp/$name.dom.html" 2>"$tmp/$name.chromium.log" || { tail -5 "$tmp/$name.chromium.log"; fail "$name: chromium --dump-dom failed"; }
  grep ':CONSOLE' "$tmp/$name.chromium.log" && fail "$name: the page wrote to the console"
  nsvg=$(grep -o '<svg' "$tmp/$name.dom.html" | wc -l)
  [ "$nsvg" -eq "$nplots" ] || fail "$name: page has $nsvg <svg> elements, summary.json lists $nplots plots"
  for id in summary q1 q2 q3 q4 q5 roofline ops meta; do
    grep -q "id=\"$id\"" "$tmp/$name.dom.html" || fail "$name: section #$id missing from the page"
  done
  ncards=$(grep -o 'class="card ' "$tmp/$name.dom.html" | wc -l)
  [ "$ncards" -eq 5 ] || fail "$name: summary box has $ncards verdict cards, want 5"
  # the runs table opens the page: its header, one row per run, the folded command lines; the old
  # metadata paragraph ("From N results files: ...; machine ...") is gone
  sed -n '/<h1/,/id="summary"/p' "$tmp/$name.dom.html" > "$tmp/$name.top.html"
  grep -q '<th>run id</th>' "$tmp/$name.top.html" || fail "$name: no runs table before the summary"
  nruns_rows=$(grep -c '<details class="more">' "$tmp/$name.top.html")
  [ "$nruns_rows" -eq "$nruns" ] || fail "$name: the runs table folds $nruns_rows command lines, want $nruns"
  grep -q 'results files\?: .*machine [0-9a-f]\{16\}' "$tmp/$name.top.html" && fail "$name: the metadata paragraph is back"
  # every answered card has its table one click away
  sed -n '/class="verdicts"/,/<\/section>/p' "$tmp/$name.dom.html" > "$tmp/$name.cards.html"
  nans=$(grep -o '"verdict">unanswered<' "$tmp/$name.cards.html" | wc -l)
  ndet=$(grep -o '<details>' "$tmp/$name.cards.html" | wc -l)
  [ "$ndet" -eq $((5 - nans)) ] || fail "$name: $ndet cards carry a per-device table, want $((5 - nans))"
  grep -q '<script' "$tmp/$name.dom.html" && fail "$name: page contains a script element (it should need no JavaScript)"
  grep -q 'Plot not drawn' "$tmp/$name.dom.html" && fail "$name: page reports a plot not drawn"

  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
    --window-size=1400,3000 --screenshot="$tmp/$name.png" "file://$out/index.html" >>"$tmp/$name.chromium.log" 2>&1 \
    || fail "$name: chromium --screenshot failed"
  size=$(stat -c %s "$tmp/$name.png" 2>/dev/null || echo 0)
  [ "$size" -gt 100000 ] || fail "$name: screenshot is $size bytes: the page looks blank"
  echo "PASS $name: $nplots plots, $nsvg inline SVGs, 5 verdict cards, $nruns run(s) in the runs table, no console message, screenshot $size bytes"
}

if [ $# -gt 0 ]; then
  check_page check $# "$@"
  exit 0
fi
check_page cpu_small 1 tests/data/cpu_small.jsonl
gen=build/tests/test_report_multi ref=results/h100-reference.jsonl
if [ -x "$gen" ] && [ -r "$ref" ]; then
  "$gen" --write-fixture "$ref" "$tmp/multi1.jsonl" 1 && "$gen" --write-fixture "$ref" "$tmp/multi2.jsonl" 2 || fail "$gen could not write the synthetic multi-GPU input"
  check_page multi_gpu 2 "$tmp/multi1.jsonl" "$tmp/multi2.jsonl"
else
  echo "(no synthetic multi-GPU page: $gen or $ref missing; make test builds and unpacks both)"
fi
