#!/usr/bin/env bash
# End-to-end check of `hybench report`: render a report from a results file (default: the checked-in
# tests/data/cpu_small.jsonl), load index.html in headless Chromium and check that the page loaded
# with every plot present: the number of <svg> elements in the rendered DOM must equal the number of
# plots summary.json lists, every listed plot must be drawn, and the five question sections and the
# summary box must be there. Also takes a screenshot and checks that it is not blank.
# Usage: tests/check_report_html.sh [RESULTS.jsonl ...]      Exit 0 pass, 1 fail, 77 skip (no Chromium).
# HB_BIN overrides the hybench executable (default build/hybench).
set -u
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- tests/data/cpu_small.jsonl
for f in "$@"; do [ -r "$f" ] || { echo "FAIL: $f not readable"; exit 1; }; done
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "SKIP: no chromium (apt-get install chromium)"; exit 77; }
hb=${HB_BIN:-build/hybench}
[ -x "$hb" ] || { echo "FAIL: $hb missing (make build)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hb_report_check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

start=$(date +%s.%N)
"$hb" report "$@" --out "$tmp/r" --name check || fail "hybench report exited $?"
end=$(date +%s.%N)
echo "report rendered in $(awk "BEGIN { printf \"%.2f\", $end - $start }") s"
[ -s "$tmp/r/index.html" ] || fail "index.html missing"
[ -s "$tmp/r/report.md" ] || fail "report.md missing"
[ -s "$tmp/r/routing.json" ] || fail "routing.json missing"
# summary.json is written with one key per line: every plot object, and nothing else, has "script"
nplots=$(grep -c '"script":' "$tmp/r/summary.json")
nfailed=$(grep -c '"ok": false' "$tmp/r/summary.json")
[ "$nplots" -gt 0 ] || fail "summary.json lists no plot"
[ "$nfailed" -eq 0 ] || fail "$nfailed plot(s) listed as not drawn"

# Chromium writes the DOM after loading the page; count the inline SVGs in it.
timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --dump-dom \
  "file://$tmp/r/index.html" >"$tmp/dom.html" 2>"$tmp/chromium.log" || { tail -5 "$tmp/chromium.log"; fail "chromium --dump-dom failed"; }
nsvg=$(grep -o '<svg' "$tmp/dom.html" | wc -l)
[ "$nsvg" -eq "$nplots" ] || fail "page has $nsvg <svg> elements, summary.json lists $nplots plots"
for id in summary q1 q2 q3 q4 q5 roofline ops meta; do
  grep -q "id=\"$id\"" "$tmp/dom.html" || fail "section #$id missing from the page"
done
ncards=$(grep -o 'class="card ' "$tmp/dom.html" | wc -l)
[ "$ncards" -eq 5 ] || fail "summary box has $ncards verdict cards, want 5"
grep -q '<script' "$tmp/dom.html" && fail "page contains a script element (it should need no JavaScript)"
grep -q 'Plot not drawn' "$tmp/dom.html" && fail "page reports a plot not drawn"

timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
  --window-size=1400,3000 --screenshot="$tmp/page.png" "file://$tmp/r/index.html" >>"$tmp/chromium.log" 2>&1 \
  || fail "chromium --screenshot failed"
size=$(stat -c %s "$tmp/page.png" 2>/dev/null || echo 0)
[ "$size" -gt 100000 ] || fail "screenshot is $size bytes: the page looks blank"
echo "PASS: $nplots plots, $nsvg inline SVGs, 5 verdict cards, screenshot $size bytes"
