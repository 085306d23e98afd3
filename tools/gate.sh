#!/usr/bin/env bash
# tools/gate.sh BASE_REF [HEAD_REF] [-- hybench ab options]
#
# The merge gate (docs/compare.md, "tools/gate.sh"): builds BASE_REF and HEAD_REF (default HEAD) of
# this repository, each in its own git worktree under a temporary folder, then runs HEAD's
# `hybench ab BASE HEAD` (both builds interleaved, in rounds) over the quick case list, from HEAD's
# tree (its workloads are the case list). Its exit status is hybench ab's, passed through: 0 pass,
# 1 a case fails the gate, 2 usage / a build that cannot run, 3 the builds' rounds come from different
# machine fingerprints, 7 an output cannot be written, 11 inconclusive (no case fails, but cases are
# undecided or fewer rounds than --min-rounds ran: neither pass nor fail); 9 a build failed.
#
# Environment:
#   GATE_OUT      where the outputs go (default results/gate-<time>): gate.md, gate.json, gate.xml,
#                 base.jsonl, cur.jsonl (both builds' results, readable by report and compare), rounds/
#   GATE_ARGS     hybench ab options used when none follow "--"
#                 (default: --quick --budget 0.01)
#   GATE_MAKE     make arguments for both builds (default: WITH_CUDA=no), e.g. "PLANT=1 WITH_CUDA=no";
#                 with --instructions among the ab options, ARCH=-march=x86-64-v3 is added unless an ARCH= is given
#   GATE_KEEP=1   keep the worktrees and builds (default: removed at the end)
#   GATE_TMP      parent of the temporary folder (default: $TMPDIR or /tmp)
set -u
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in -h|--help) usage; exit 0;; esac
BASE_REF=$1; shift
HEAD_REF=HEAD
if [ $# -ge 1 ] && [ "$1" != "--" ]; then HEAD_REF=$1; shift; fi
[ "${1:-}" = "--" ] && shift
REPO=$(git rev-parse --show-toplevel) || { echo "gate.sh: not inside a git repository" >&2; exit 2; }
cd "$REPO"
base_sha=$(git rev-parse --verify "$BASE_REF^{commit}" 2>/dev/null) || { echo "gate.sh: unknown commit $BASE_REF" >&2; exit 2; }
head_sha=$(git rev-parse --verify "$HEAD_REF^{commit}" 2>/dev/null) || { echo "gate.sh: unknown commit $HEAD_REF" >&2; exit 2; }
OUT=${GATE_OUT:-$REPO/results/gate-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT" || exit 7
OUT=$(cd "$OUT" && pwd)
TMP=$(mktemp -d "${GATE_TMP:-${TMPDIR:-/tmp}}/hybench-gate.XXXXXX") || exit 7
cleanup() {
  if [ "${GATE_KEEP:-0}" = 1 ]; then echo "gate.sh: kept $TMP" >&2; return; fi
  git -C "$REPO" worktree remove --force "$TMP/base" >/dev/null 2>&1
  git -C "$REPO" worktree remove --force "$TMP/head" >/dev/null 2>&1
  rm -rf "$TMP"
  git -C "$REPO" worktree prune >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t0=$(date +%s)
read -r -a MAKEARGS <<< "${GATE_MAKE:-WITH_CUDA=no}"
if [ $# -gt 0 ]; then ARGS=("$@"); else read -r -a ARGS <<< "${GATE_ARGS:---quick --budget 0.01}"; fi
# --instructions runs the builds under valgrind, which has no AVX-512: build for AVX2 unless told
case " ${ARGS[*]} " in *" --instructions "*)
  case " ${MAKEARGS[*]} " in *" ARCH="*) ;; *) MAKEARGS+=(ARCH=-march=x86-64-v3);; esac;; esac
build() { # name sha
  git -C "$REPO" worktree add --detach "$TMP/$1" "$2" >/dev/null 2>&1 || { echo "gate.sh: git worktree add $2 failed" >&2; return 1; }
  echo "gate.sh: building $1 ($2) in $TMP/$1" >&2
  make -C "$TMP/$1" -j"$(nproc)" build "${MAKEARGS[@]}" > "$OUT/build-$1.log" 2>&1 \
    || { echo "gate.sh: the $1 build failed; see $OUT/build-$1.log" >&2; tail -20 "$OUT/build-$1.log" >&2; return 1; }
}
if [ "$base_sha" = "$head_sha" ]; then
  echo "gate.sh: BASE and HEAD are the same commit ($head_sha): an A/A run, built twice" >&2
fi
build base "$base_sha" || exit 9
build head "$head_sha" || exit 9
t1=$(date +%s)
cd "$TMP/head"
"$TMP/head/build/hybench" ab "$TMP/base" "$TMP/head" --out-dir "$OUT" --markdown "$OUT/gate.md" \
  --json "$OUT/gate.json" --junit "$OUT/gate.xml" "${ARGS[@]}"
rc=$?
t2=$(date +%s)
cat "$OUT/gate.md" 2>/dev/null
case $rc in 0) verdict=pass;; 1) verdict=FAIL;; 11) verdict=INCONCLUSIVE;; *) verdict=error;; esac
echo "gate.sh: exit $rc ($verdict); builds $((t1 - t0)) s, hybench ab $((t2 - t1)) s; outputs in $OUT" >&2
exit $rc
