#!/usr/bin/env bash
# The merge gate on a GPU runner (docs/compare.md, "On a GPU runner"): `hybench ab` of two GPU bundles
# (tools/gpu_bundle.sh; BASE and CUR each a bundle directory with its run.sh, lib/ or lib.tar.xz),
# cuda cases of the quick list, inside one call of the device tool (10 minutes).
#   tools/gpu_gate.sh OUTDIR NAME BASE CUR [gate options] [-- run options]
# Each build runs through its own bundle's run.sh, so each loads its own plugins and libraries.
# Gate options (hybench ab's) default to `--time-budget 540 --threads 0 --metric compute --pin <HB_GATE_PIN
# or all> --threshold cuda/dequantize=4%` (the device time between CUDA events: docs/compare.md says why;
# a later --metric total wins; the dequantize kernels' own threshold: on an H200 the 8.6 us q8_0 case
# spreads about 3% per round, which 64 rounds cannot clear at 2%; a later --threshold for the same scope wins);
# run options to `--quick --backend cuda:0 --mode resident --budget 0.01` (every mode does not fit one
# call: docs/compare.md). HB_GATE_GPU sets CUDA_VISIBLE_DEVICES, so
# that two gates can run at once on a machine of two GPUs, each on its own GPU and CPUs (HB_GATE_PIN).
# OUTDIR gets NAME.md (the gate's Markdown), NAME.json, NAME.tar.gz (the rounds, their logs, the merged
# results) and appends to gate-summary.txt: three files per gate (the device tool brings back 8).
# Exit status: the gate's.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?outdir}; NAME=${2:?name}; BASE=${3:?base bundle}; CUR=${4:?cur bundle}
shift 4
gate=(); run=()
while [ $# -gt 0 ]; do
  if [ "$1" = -- ]; then shift; run=("$@"); break; fi
  gate+=("$1"); shift
done
[ ${#run[@]} -eq 0 ] && run=(--quick --backend cuda:0 --mode resident --budget 0.01)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
for b in "$BASE" "$CUR"; do
  [ -x "$b/run.sh" ] || [ -f "$b/run.sh" ] || { echo "gpu_gate: $b has no run.sh (a bundle of tools/gpu_bundle.sh)" >&2; exit 2; }
  if [ -s "$b/lib.tar.xz" ] && [ ! -d "$b/lib" ]; then (cd "$b" && tar xJf lib.tar.xz); fi
  chmod +x "$b/run.sh"
done
BASE=$(cd "$BASE" && pwd); CUR=$(cd "$CUR" && pwd)
[ -n "${HB_GATE_GPU:-}" ] && export CUDA_VISIBLE_DEVICES=$HB_GATE_GPU
W=${HB_GATE_WORK:-/tmp/hb-gate-$NAME}
rm -rf "$W"; mkdir -p "$W"
t0=$SECONDS
cd "$BASE" # the case list: the bundle's workloads/ (the same in both bundles for --quick)
"$BASE/run.sh" ab --time-budget 540 --threads 0 --metric compute --pin "${HB_GATE_PIN:-all}" --threshold cuda/dequantize=4% "${gate[@]}" --out-dir "$W/ab" --markdown "$OUT/$NAME.md" \
  --json "$OUT/$NAME.json" "$BASE/run.sh" "$CUR/run.sh" "${run[@]}" > "$W/ab.log" 2>&1
rc=$?
python3 - "$OUT/$NAME.json" "$NAME" "$rc" "$((SECONDS - t0))" >> "$OUT/gate-summary.txt" <<'EOF'
import json, sys
path, name, rc, secs = sys.argv[1:5]
try:
    j = json.load(open(path))
except Exception as e:
    print("%s: exit %s after %s s, no JSON (%s)" % (name, rc, secs, e)); sys.exit()
ab = j.get("ab", {})
s = j.get("summary", {})
rs = ["%.0f+%.0f" % (r.get("base_s", 0), r.get("cur_s", 0)) for r in ab.get("round_seconds") or []]
print("%s: exit %s after %s s; %s rounds (stopped at %s; subset from round %s), round seconds base+cur: %s; "
      "verdict %s, %s compared, counts %s, undecided %s" % (name, rc, secs, ab.get("rounds"), ab.get("stopped_at"),
      ab.get("subset_from_round"), " ".join(rs), s.get("verdict"), s.get("tested"), json.dumps(s.get("counts")), ab.get("undecided")))
EOF
# the rounds' results files stay behind (tens of MB); base.jsonl and cur.jsonl hold every round's medians
tar czf "$OUT/$NAME.tar.gz" -C "$W" --exclude "rounds/*.jsonl" --exclude "refcache" --exclude "algocache" . 2>/dev/null
exit $rc
