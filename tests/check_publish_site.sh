#!/usr/bin/env bash
# End-to-end check of `hybench publish` (docs/history.md, "The site"): a synthetic history of 60
# nights on two machines (tests/synth_nights.py: 40 cases of tests/data/cpu_small.jsonl, one of them
# 15% slower from night 40 on the first machine) imported with `hybench history import`, the step
# night's report rendered with `hybench report`, then the site published and checked in headless
# Chromium:
#   - the landing page, the machine page and the planted case's page load with no uncaught exception,
#     console error or missing file (DevTools protocol, tests/site_cdp.py load);
#   - the landing page lists both machines and the step as the largest change; the machine page lists the planted step first, on night 40,
#     its report link resolves to a file in the site, and its case table has one row per case;
#   - the case's graph has one point per night (data-points="60", written by the page after drawing,
#     read from --dump-dom);
#   - hovering the step night's point shows its run id and commit, and clicking it opens that night's
#     report (real mouse events through the DevTools protocol: tests/site_cdp.py click);
#   - bad input: no such store (2), an unknown option (2), an --out that cannot be made (7), the
#     libjs-dygraphs files missing (10, the package named), a store with no runs (2).
# Usage: tests/check_publish_site.sh      Exit 0 pass, 1 fail, 77 skip (no Chromium or python3).
# HB_BIN overrides the hybench executable (default build/hybench).
set -u
cd "$(dirname "$0")/.."
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "SKIP: no chromium (apt-get install chromium)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
hb=${HB_BIN:-build/hybench}
[ -x "$hb" ] || { echo "FAIL: $hb missing (make build)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hb_publish_check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export CHROMIUM=$chrome

planted=$(python3 tests/synth_nights.py --out "$tmp/nights" --nights 60 --cases 40 --step 0.15 --step-night 40 --machines 2) \
  || fail "synth_nights.py failed"
echo "$planted"
steprun=$(printf '%s\n' "$planted" | sed -n 's/.* run \([^ ]*\) (.*/\1/p')
[ -n "$steprun" ] || fail "no step run id in: $planted"
"$hb" history import --store "$tmp/h.db" "$tmp/nights"/*.jsonl >"$tmp/import.log" 2>&1 || { tail "$tmp/import.log"; fail "import failed"; }
"$hb" report -q --svg-only --out "$tmp/reports/$steprun" "$tmp/nights/$steprun.jsonl" || fail "hybench report of $steprun failed"
fp=$("$hb" history list --store "$tmp/h.db" | awk -v r="$steprun" '$1 == r { print $4 }')
[ -n "$fp" ] || fail "no machine for run $steprun"

"$hb" publish --store "$tmp/h.db" --out "$tmp/site" --reports "$tmp/reports" >"$tmp/publish.log" 2>&1 \
  || { cat "$tmp/publish.log"; fail "hybench publish exited $?"; }
cat "$tmp/publish.log"
site=$tmp/site
for f in index.html lib/dygraph.min.js lib/dygraph.css lib/site.js lib/site.css "m/$fp/index.html" "m/$fp/nights.js" \
         "runs/$steprun/index.html"; do
  [ -s "$site/$f" ] || fail "$f missing from the site"
done
[ "$(ls "$site/runs")" = "$steprun" ] || fail "runs/ should hold only the rendered report: $(ls "$site/runs")"
n=$(grep -c '<tr><td><a href="m/' "$site/index.html")
[ "$n" -eq 2 ] || fail "landing page lists $n machines, want 2"

# the machine page: the planted step first, on night 40, its report link resolving inside the site
mp=$site/m/$fp/index.html
first=$(sed -n '/id="changes-table"/,/<\/table>/p' "$mp" | grep -m1 '^<tr><td class="num">1</td>') || fail "no change listed on $mp"
echo "$first" | grep -q 'step (slower)' || fail "the largest change is not a slower step: $first"
echo "$first" | grep -q 'night 40, ' || fail "the step is not on night 40: $first"
href=$(echo "$first" | grep -o 'class="report" href="[^"]*"' | sed 's/.*href="//; s/"$//')
[ "$href" = "../../runs/$steprun/index.html" ] || fail "the step's report link is '$href'"
[ -s "$(dirname "$mp")/$href" ] || fail "the step's report link $href does not resolve to a file"
case_href=$(echo "$first" | grep -o '<a href="c/[0-9]*\.html#night=40"' | head -1 | sed 's/<a href="//; s/#night=40"$//')
[ -n "$case_href" ] || fail "the step names no case page"
cp=$(dirname "$mp")/$case_href
[ -s "$cp" ] || fail "case page $case_href missing"
top=$(sed -n '/id="top-changes"/,/<\/table>/p' "$site/index.html" | grep -m1 "^<tr><td><code>$fp</code>") \
  || fail "the landing page lists no largest change"
echo "$top" | grep -q "href=\"m/$fp/$case_href#night=40\"" || fail "the largest change on the landing page is not the step: $top"
nlinks=$(grep -o 'class="report"' "$mp" | wc -l)
nrows=$(sed -n '/<table id="cases">/,/<\/table>/p' "$mp" | grep -c '^<tr><td><a href="c/')
[ "$nrows" -eq 40 ] || fail "the case table has $nrows rows, want 40"

# headless Chromium: no console error on the three pages; the graph has one point per night
python3 tests/site_cdp.py load "file://$site/index.html" "file://$mp" "file://$cp" || fail "a page logged an error"
timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --dump-dom "file://$cp" \
  >"$tmp/case.dom" 2>"$tmp/chromium.log" || fail "chromium --dump-dom failed"
pts=$(grep -o 'id="graph" data-points="[0-9]*"' "$tmp/case.dom" | grep -o '[0-9]*"$' | tr -d '"')
[ "$pts" = 60 ] || fail "the case graph has '${pts}' points, want 60 (one per night)"
grep -q 'data-ready="1"' "$tmp/case.dom" || fail "the case page did not finish drawing"
timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --dump-dom "file://$mp" \
  >"$tmp/machine.dom" 2>>"$tmp/chromium.log" || fail "chromium --dump-dom of the machine page failed"
grep -q 'data-rows="40"' "$tmp/machine.dom" || fail "the machine page's filter did not see 40 rows"
# hover and click the step night's point: its run and commit in the legend, then its report opens
python3 tests/site_cdp.py click "file://$cp" 40 "runs/$steprun/index.html" || fail "clicking the step's point"

# updating in place: a second publish keeps the copied report and rewrites the pages
"$hb" publish --store "$tmp/h.db" --out "$tmp/site" --reports "$tmp/reports" >/dev/null 2>&1 || fail "second publish failed"

# HTML in the store's strings (run id, host, commit, case key and shape) is shown as text, never markup
python3 - "$tmp/nights/$steprun.jsonl" "$tmp/evil.jsonl" <<'PY' || fail "could not write the hostile run"
import json, sys
out = open(sys.argv[2], "w")
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "meta":
        r.update(run_id='x"><img src=x onerror=alert(1)>', host="<i>h</i>", git_commit="<script>alert(2)</script>")
    if r["type"] == "case":
        r["key"] = "<em>k</em>" + r["key"]
        r["shape_str"] = "<svg onload=alert(3)>"
        r["dtype"] = "f32<u>"
    out.write(json.dumps(r) + "\n")
PY
"$hb" history import --store "$tmp/evil.db" "$tmp/evil.jsonl" >/dev/null 2>&1 || fail "import of the hostile run"
"$hb" publish --store "$tmp/evil.db" --out "$tmp/evil" --reports "$tmp/reports" >/dev/null 2>&1 || fail "publish of the hostile run"
grep -rlE '<img src=x|<script>alert|<svg onload|<em>k|<i>h</i>|f32<u>' "$tmp/evil" --include='*.html' \
  && fail "a string from the store reached a page as markup"
ep=$(ls "$tmp"/evil/m/*/index.html)
python3 tests/site_cdp.py load "file://$tmp/evil/index.html" "file://$ep" "file://$(dirname "$ep")/$(grep -o 'c/[0-9]*\.html' "$ep" | head -1)" \
  || fail "a page of the hostile run logged an error"

# bad input, each with its own exit status and the option or file named
o=$("$hb" publish --store "$tmp/none.db" --out "$tmp/x" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$o" | grep -q -- "--store $tmp/none.db: no such store" || fail "missing store: exit $rc: $o"
[ ! -e "$tmp/none.db" ] || fail "publish created the missing store"
o=$("$hb" publish --bogus 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$o" | grep -q -- "--bogus: unknown option" || fail "unknown option: exit $rc: $o"
: >"$tmp/file"
o=$("$hb" publish --store "$tmp/h.db" --out "$tmp/file/site" 2>&1); rc=$?
[ $rc -eq 7 ] && echo "$o" | grep -q -- "--out $tmp/file/site" || fail "unwritable --out: exit $rc: $o"
o=$(HB_DYGRAPHS_DIR="$tmp/nolib" "$hb" publish --store "$tmp/h.db" --out "$tmp/site2" 2>&1); rc=$?
[ $rc -eq 10 ] && echo "$o" | grep -q "libjs-dygraphs" && echo "$o" | grep -q "$tmp/nolib/dygraph.min.js" \
  || fail "missing dygraphs: exit $rc: $o"
"$hb" history import --store "$tmp/empty.db" /dev/null >/dev/null 2>&1
o=$("$hb" publish --store "$tmp/empty.db" --out "$tmp/site3" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$o" | grep -q "no runs" || fail "empty store: exit $rc: $o"
echo "PASS: 2 machines, step on night 40 linked to runs/$steprun/index.html, $pts points in the case graph, $nrows cases, $nlinks report links; bad input refused"
