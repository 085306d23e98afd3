#!/usr/bin/env bash
# The hybrid plans on a lent GPU machine (docs/plans.md, "Measured"): the per-op costs of every model of
# core/models.c on cuda:0 and the host CPU, then every plan of each model replayed end to end. Run from
# the repository root there with the GPU bundle carried (tools/gpu_bundle.sh; tools/gpu_run.md):
#   tools/gpu_plans.sh OUTDIR [MODELS] [ROUTES]
# MODELS: comma separated (default: tinyllama-decode,tinyllama-prefill512,resnet50-block,resnet50-mb1,
# resnet50-mb64); ROUTES: the replays' routes (default pinned,pageable).
#   1. costs: `hybench plan --model M --workload` for each model (the TinyLlama models' cases are in
#      workloads/tinyllama.ini, whose chain case the replay table sets beside the single-device plans),
#      run once on cuda:0 and cpu, modes f32 and resident, dtype f32, on the replays' routes;
#   2. replay: `hybench plan COSTS --model M --replay --mode f32 --route ROUTES` per model.
# OUTDIR gets three files (the device tool brings back at most 8): plans-costs.jsonl, plans-summary.txt
# and plans.tar.gz (replay-<model>.jsonl, replay-<model>.md: the replay's Markdown table, and every log).
# HB_PLANS_BACKENDS: the backends of the costs run (default cuda:0,cpu; on a two-GPU machine
# cuda:0,cuda:1,cpu plans over both GPUs, each with its own memory). HB_PLANS_ANE_STANDIN: the backend
# standing in for the seed heuristic's Neural Engine rule (`plan --ane-standin`; default: the GPU rule's
# backend; cuda:1 makes the seed plan span both GPUs and the host, as the seed's executor spans its GPU,
# its Neural Engine and its CPU). HB_BUNDLE names the bundle (default .gpu; the packed copy .gpu-final has lib/ in lib.tar.xz).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?outdir}
MODELS=${2:-tinyllama-decode,tinyllama-prefill512,resnet50-block,resnet50-mb1,resnet50-mb64}
ROUTES=${3:-pinned,pageable}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BUNDLE=${HB_BUNDLE:-.gpu}
if [ -s "$BUNDLE/lib.tar.xz" ] && [ ! -d "$BUNDLE/lib" ]; then (cd "$BUNDLE" && tar xJf lib.tar.xz); fi
HB="bash $BUNDLE/run.sh"
W=${HB_PLANS_WORK:-/tmp/hb-plans}
mkdir -p "$W"
t0=$SECONDS
say() { echo "[$((SECONDS - t0)) s] $*" | tee -a "$OUT/plans-summary.txt"; }
say "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"

files=()
tl=0
for m in ${MODELS//,/ }; do
  case $m in
    tinyllama-*) tl=1 ;;
    *) $HB plan --model "$m" --workload > "$W/$m.ini" 2> "$W/$m.workload.log" || { say "workload of $m failed: $(tail -1 "$W/$m.workload.log")"; exit 2; }
       files+=("$W/$m.ini") ;;
  esac
done
[ $tl = 1 ] && files=("$BUNDLE/workloads/tinyllama.ini" "${files[@]}")
say "costs: ${files[*]}"
$HB run --backend "${HB_PLANS_BACKENDS:-cuda:0,cpu}" --mode f32,resident --dtype f32 --route "$ROUTES" --budget 0.05 --ref-cache "$W/refcache" \
  --out "$OUT/plans-costs.jsonl" --force "${files[@]}" > "$W/costs.log" 2>&1
say "costs: rc $? $(tail -1 "$W/costs.log")"
rc=0
for m in ${MODELS//,/ }; do
  $HB plan "$OUT/plans-costs.jsonl" --model "$m" --route "$ROUTES" ${HB_PLANS_ANE_STANDIN:+--ane-standin "$HB_PLANS_ANE_STANDIN"} --replay --mode f32 --budget 0.1 --out "$W/replay-$m.jsonl" --force \
    > "$W/replay-$m.md" 2> "$W/replay-$m.log"
  r=$?
  [ $r -ne 0 ] && rc=$r
  say "replay $m: rc $r"
  grep -E '^\| (single|seed|greedy|optimal)' "$W/replay-$m.md" | cut -c1-300 >> "$OUT/plans-summary.txt"
done
tar czf "$OUT/plans.tar.gz" -C "$W" --exclude refcache . 2>/dev/null
say "done"
exit $rc
