#!/usr/bin/env bash
# The GPU merge gate's acceptance runs (docs/compare.md, "On a GPU runner"), one GPU and an equal share
# of the CPUs each, judged on the device time (tools/gpu_gate.sh's --metric compute): on a machine of 4
# GPUs four gates at once, A/A and a planted 5% matmul slowdown, in mode resident and in every mode; on
# a machine of 2 or 3 GPUs the two gates of mode resident (A/A and planted); on one GPU the two one after
# the other, each with half the time budget.
#   tools/gpu_gate_check.sh BUNDLE OUTDIR [TIME_BUDGET_S [GATE OPTIONS...]]
# GATE OPTIONS (hybench ab's, e.g. --serve) are given to every gate.
# BUNDLE: a bundle of tools/gpu_bundle.sh whose build/hybench is a `make PLANT=1` one (CUR is a copy of
# it). Both builds get HB_PLANT=matmul:1 (they carry the planted delay kernel alike: harness/measure/
# plant.h), CUR --cur-env HB_PLANT=matmul:1.05 in the planted gates. OUTDIR gets gates.tar.gz (each
# gate's Markdown, JSON, rounds' logs, merged results, and gate-summary.txt); the summary is printed.
# Exit status: 0 when both A/A gates passed and both planted gates failed, else 1.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:?bundle}" && pwd); O=${2:?outdir}; TB=${3:-420}
EXTRA=("${@:4}")
mkdir -p "$O"; O=$(cd "$O" && pwd)
if [ -s "$B/lib.tar.xz" ] && [ ! -d "$B/lib" ]; then (cd "$B" && tar xJf lib.tar.xz); fi
C=$(mktemp -d /tmp/hb-gate-cur.XXXXXX)
cp -a "$B/." "$C/"
export HB_PLANT=matmul:1
RES=(--quick --backend cuda:0 --mode resident --budget 0.01)
ALL=(--quick --backend cuda:0 --budget 0.01)
NG=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$NG" -ge 1 ] || { echo "gpu_gate_check: no GPU (nvidia-smi -L lists none)" >&2; exit 2; }
NC=$(nproc); W=$(( NC / (NG >= 4 ? 4 : (NG >= 2 ? 2 : 1)) ))
gate() { HB_GATE_GPU=$1 HB_GATE_PIN=$(($1 * W))-$(($1 * W + W - 1)) "$here/tools/gpu_gate.sh" "$O" "$2" "$B" "$C" --time-budget "$TB" "${EXTRA[@]}" "${@:3}"; }
ok=0
if [ "$NG" -ge 4 ]; then
  NAMES="aa-res p5-res aa-all p5-all"
  gate 0 aa-res -- "${RES[@]}" & p0=$!
  gate 1 p5-res --cur-env HB_PLANT=matmul:1.05 -- "${RES[@]}" & p1=$!
  gate 2 aa-all --subset-from 3 -- "${ALL[@]}" & p2=$!
  gate 3 p5-all --subset-from 3 --cur-env HB_PLANT=matmul:1.05 -- "${ALL[@]}" & p3=$!
  wait $p0 || ok=1; wait $p2 || ok=1
  wait $p1 && ok=1; wait $p3 && ok=1
elif [ "$NG" -ge 2 ]; then
  NAMES="aa-res p5-res"
  gate 0 aa-res -- "${RES[@]}" & p0=$!
  gate 1 p5-res --cur-env HB_PLANT=matmul:1.05 -- "${RES[@]}" & p1=$!
  wait $p0 || ok=1; wait $p1 && ok=1
else
  NAMES="aa-res p5-res"; TB=$(( TB / 2 ))
  gate 0 aa-res -- "${RES[@]}" || ok=1
  gate 0 p5-res --cur-env HB_PLANT=matmul:1.05 -- "${RES[@]}" && ok=1
fi
for n in $NAMES; do
  [ -f "/tmp/hb-gate-$n/ab/base.jsonl" ] && tar czf "$O/$n-merged.tar.gz" -C "/tmp/hb-gate-$n/ab" base.jsonl cur.jsonl
done
cat "$O/gate-summary.txt"
(cd "$O" && tar czf "$C/gates.tar.gz" ./*.md ./*.json ./*.tar.gz gate-summary.txt && rm -f ./*.md ./*.json ./*.tar.gz gate-summary.txt && mv "$C/gates.tar.gz" .)
rm -rf "$C"
exit $ok
