#!/usr/bin/env bash
# snapshot_outputs.sh OUT [HYBENCH] - every output that reads results records, rendered from fixed
# inputs into OUT, so that two builds can be diffed byte for byte (`diff -r OUT1 OUT2`): a change that
# only moves how records are read (results/record.h) must leave every file identical.
# Inputs: the results files the tests use (tests/data, tests/fuzz/corpus/report, docs/collectives,
# docs/ggml) and a synthetic history (tests/synth_nights.py, fixed seed). Outputs: report (report.md,
# summary.json, routing.json, index.html, plot data and scripts), compare (Markdown, JSON, JUnit, exit
# status), roofline, plan (Markdown and JSON per model), csv, gbench, baseline set/show, trend and
# publish over a SQLite store of the nights. What differs between two runs of one build (the date a
# report or a site was generated, temporary paths) is masked by the sed at the end.
# Exit 0; a command's own exit status is recorded in OUT/status.txt, not acted on. Not for two
# snapshots at once (the working folder has a fixed name).
set -u
out=${1:?usage: tools/snapshot_outputs.sh OUT [HYBENCH]}
hb=$(realpath "${2:-build/hybench}")
cd "$(dirname "$0")/.."
rm -rf "$out"; mkdir -p "$out"
out=$(realpath "$out")
tmp=${TMPDIR:-/tmp}/hb_snapshot_work # one fixed path: the inputs' paths appear in the outputs (escaped)
rm -rf "$tmp"; mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
st() { echo "$1 $2" >>"$out/status.txt"; }
run() { # name, command...: stdout to OUT/name.out, stderr to OUT/name.err, status recorded
  local name=$1; shift
  "$@" >"$out/$name.out" 2>"$out/$name.err"; st "$name" $?
}
zcat tests/data/h100-reference.jsonl.gz >"$tmp/h100.jsonl"
python3 tests/synth_nights.py --out "$tmp/nights" --nights 12 --cases 40 --step 0.15 --step-night 8 --machines 2 --seed 3 >"$out/nights.txt"
nights=("$tmp"/nights/*.jsonl)
vm=("$tmp"/nights/*-vm.jsonl) # the first machine's nights
n1=${vm[0]}; n2=${vm[9]}
files=(tests/data/cpu_small.jsonl tests/data/results_good.jsonl tests/data/results_nosamples.jsonl "$tmp/h100.jsonl"
       docs/collectives/h200x2-tp1-graph.jsonl docs/collectives/h200x2-tp2-graph.jsonl
       docs/collectives/h200x2-tp2-quant-graph.jsonl docs/ggml/h100-hybench-qmm-cpu.jsonl
       docs/ggml/h100-hybench-qmm-cuda.jsonl tests/fuzz/corpus/report/*.jsonl "$n1")
# HB_SNAP_EXTRA: more results files (e.g. a run of `hybench plan --model M --workload`'s cases and the
# plan records of its --replay), space-separated
for f in ${HB_SNAP_EXTRA:-}; do files+=("$f"); done
i=0
for f in "${files[@]}"; do
  i=$((i + 1)); b=$(printf '%02d_%s' $i "$(basename "$f" .jsonl)")
  run "csv_$b" "$hb" csv "$f"
  run "gbench_$b" "$hb" gbench "$f"
  run "gbench_err_$b" "$hb" gbench --errors --aggregates-only --metric compute "$f"
  run "roofline_$b" "$hb" roofline "$f"
  for m in tinyllama-decode tinyllama-prefill512 resnet50-block; do
    run "plan_${b}_$m" "$hb" plan "$f" --model $m
    run "plan_json_${b}_$m" "$hb" plan "$f" --model $m --json
  done
  run "report_$b" "$hb" report -q --svg-only --jobs 2 --out "$tmp/rep_$b" "$f"
  mkdir -p "$out/report_$b"
  cp "$tmp/rep_$b"/*.md "$tmp/rep_$b"/*.json "$tmp/rep_$b"/*.html "$tmp/rep_$b"/*.dat "$tmp/rep_$b"/*.gp "$out/report_$b/" 2>/dev/null
done
# several runs in one report
run report_multi "$hb" report -q --svg-only --jobs 2 --out "$tmp/rep_multi" tests/data/cpu_small.jsonl "$tmp/h100.jsonl" "$n1" "$n2"
mkdir -p "$out/report_multi"; cp "$tmp/rep_multi"/*.md "$tmp/rep_multi"/*.json "$tmp/rep_multi"/*.html "$tmp/rep_multi"/*.dat "$tmp/rep_multi"/*.gp "$out/report_multi/" 2>/dev/null
run report_coll "$hb" report -q --svg-only --jobs 2 --out "$tmp/rep_coll" docs/collectives/h200x2-tp1-graph.jsonl docs/collectives/h200x2-tp2-graph.jsonl docs/collectives/h200x2-tp2-quant-graph.jsonl
mkdir -p "$out/report_coll"; cp "$tmp/rep_coll"/*.md "$tmp/rep_coll"/*.json "$tmp/rep_coll"/*.html "$tmp/rep_coll"/*.dat "$tmp/rep_coll"/*.gp "$out/report_coll/" 2>/dev/null
# compare: two nights of one machine, a run against itself, two machines
run compare_nights "$hb" compare --markdown - --json "$tmp/c1.json" --junit "$tmp/c1.xml" "$n1" "$n2"
cp "$tmp/c1.json" "$out/compare_nights.json"; cp "$tmp/c1.xml" "$out/compare_nights.xml"
run compare_nights_compute "$hb" compare --metric compute --noise-scale 3 --rule point --markdown - "$n1" "$n2"
run compare_self "$hb" compare --json - tests/data/cpu_small.jsonl tests/data/cpu_small.jsonl
run compare_cross "$hb" compare --cross-machine --markdown - tests/data/cpu_small.jsonl "$tmp/h100.jsonl"
run compare_incomparable "$hb" compare tests/data/cpu_small.jsonl "$tmp/h100.jsonl"
run compare_nosamples "$hb" compare tests/data/results_good.jsonl tests/data/results_nosamples.jsonl
# baselines
run baseline_set "$hb" baseline set "$n1" --dir "$tmp/bl"
run baseline_show "$hb" baseline show --dir "$tmp/bl" "$n2"
run baseline_list "$hb" baseline show --dir "$tmp/bl"
run compare_bl "$hb" compare --baseline-dir "$tmp/bl" --markdown - "$n2"
# the history: trend and the site
run history_import "$hb" history import --store "$tmp/h.db" "${nights[@]}"
run trend "$hb" trend --store "$tmp/h.db" --no-plot --out "$tmp/trend"
mkdir -p "$out/trend"; (cd "$tmp/trend" && find . -type f \( -name '*.md' -o -name '*.html' -o -name '*.json' -o -name '*.dat' -o -name '*.js' \) | sort | while read -r f; do mkdir -p "$out/trend/$(dirname "$f")"; cp "$f" "$out/trend/$f"; done)
run publish "$hb" publish --store "$tmp/h.db" --out "$tmp/site" --reports "$tmp/none"
mkdir -p "$out/site"; (cd "$tmp/site" && find . -type f ! -path './lib/*' | sort | while read -r f; do mkdir -p "$out/site/$(dirname "$f")"; cp "$f" "$out/site/$f"; done)
# mask what differs between two runs of one build: the temporary folder, generation dates
grep -rlI "$tmp" "$out" | while read -r f; do sed -i "s#$tmp#TMP#g" "$f"; done
grep -rlIE 'generated|Generated|Published' "$out" | while read -r f; do
  sed -i -E -e 's/(Published )[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{5}( UTC)/\1DATE/' -e 's/(enerated[^0-9]{0,40})[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:]{5,8}(Z| UTC)?/\1DATE/g' "$f"; done
# the commands' own durations and the baseline's set_at
grep -rlIE '"elapsed_s"|time="|set_at|undecided \(' "$out" | while read -r f; do
  sed -i -E -e 's/("elapsed_s": )[0-9.e-]+/\1ELAPSED/' -e 's/(<testsuites[^>]* time=")[0-9.]+/\1ELAPSED/' \
            -e 's/(set_at +)[0-9T:Z-]+/\1DATE/' -e 's/(undecided) \([0-9.]+ s\)/\1 (ELAPSED s)/' "$f"; done
exit 0
