#!/usr/bin/env bash
# hybench main job: install what is missing, build, run the workloads on every available backend,
# then render the report.
#   ./run_all.sh            default sweep (workloads/default.ini, tinyllama.ini, resnet50.ini)
#   ./run_all.sh --quick    the quick subset (2 passes; progress lines on stderr every 30 s or 5% of cases
#                           when it is not a terminal, e.g. ./run_all.sh --quick > log 2>&1)
#   ./run_all.sh --nightly  default sweep kept under results/history/, trend plots, the history site
#                           (reports/history-site/index.html, hybench publish), baseline compare
# Any other arguments are passed to `hybench run` (e.g. --backend cpu,opencl --op matmul).
set -uo pipefail
cd "$(dirname "$0")"
./tools/install_deps.sh || exit 1
make -s build >/dev/null || { echo "run_all.sh: build failed (run make to see why)" >&2; exit 1; }
if [ "${1:-}" = "--nightly" ]; then shift; exec ./tools/nightly.sh "$@"; fi
out=$(build/hybench run "$@"); rc=$?
results=$(printf '%s\n' "$out" | tail -n 1)
if [ ! -s "$results" ]; then echo "run_all.sh: no results written (hybench run exit $rc)" >&2; exit $rc; fi
build/hybench report "$results"; rrc=$?
echo "Roofline: each case family's fraction of the ceilings measured in this run, against its goal (informative, not a gate):"
build/hybench roofline "$results" || true
echo "results: $results"
[ $rc -ne 0 ] && echo "run_all.sh: hybench run exited $rc (see its summary above)" >&2
[ $rc -eq 0 ] && exit $rrc
exit $rc
