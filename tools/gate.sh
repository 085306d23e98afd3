#!/usr/bin/env bash
# tools/gate.sh BASE_REF [HEAD_REF] [-- hybench ab options]
#
# The merge gate (docs/compare.md, "tools/gate.sh"): builds BASE_REF and HEAD_REF (default HEAD) of
# this repository, each in its own git worktree under a temporary folder, then runs HEAD's
# `hybench ab BASE HEAD` (both builds interleaved, in rounds) from HEAD's tree (its workloads are the
# case list). Changed code first (docs/compare.md "Changed code first"): the files of
# `git diff --name-only BASE HEAD` go through tools/gate_map.txt (tools/gate_map.sh) to the backends and
# op families they touch; one `hybench ab` per group of those runs first ("changed first"), then the
# rest of the cases ("others") while the budget lasts, each group with --backend/--op; the output
# names which were which. Exit status: 0 pass, 1 a case fails the gate (in any group), 2 usage / a
# build that cannot run, 3 the builds' rounds come from different machine fingerprints, 7 an output
# cannot be written, 11 inconclusive (no case fails, but a group is undecided, or was stopped or never
# started because the budget was spent: never a pass); 9 a build failed; 10 valgrind missing.
#
# Environment:
#   GATE_OUT      where the outputs go (default results/gate-<time>): gate.md, gate.json, gate.xml over
#                 every group; changed.txt (the diff's files), changed.tsv (each one's map rule, the
#                 groups); per group a folder first-N/ or others-N/ with its hybench ab outputs
#                 (gate.md, gate.json, gate.xml, base.jsonl, cur.jsonl, rounds/)
#   GATE_BUDGET   seconds for the whole gate, builds included (default 900): each group gets what is
#                 left as --time-budget (unless one is given) and is stopped GATE_GRACE s (default 60)
#                 after it; a group not started (under 30 s left) or stopped for lack of time makes the
#                 gate inconclusive (exit 11)
#   GATE_CHANGED_FIRST=0  one hybench ab over every case (as when --op is among the options)
#   GATE_ARGS     hybench ab options used when none follow "--"
#                 (default: --quick --budget 0.01)
#                 The case list: the workload files among the options, else the gate list (the cheapest
#                 case of every kernel path, docs/compare.md "The gate list"), drawn up once by HEAD's
#                 `hybench gate-list` into GATE_OUT/gate-list.ini and .keys (each backend's cases, passed as
#                 --cases-from; BASE needs `run --cases-from`) (with --instructions: its cost cut;
#                 --with-time then times that list too); --no-gate-list: the list `run` reads (with
#                 --quick the whole quick list, as before the gate list)
#   GATE_MAKE     make arguments for both builds (default: WITH_CUDA=no), e.g. "PLANT=1 WITH_CUDA=no";
#                 with --instructions among the ab options, ARCH=-march=x86-64-v3 is added unless an ARCH= is given
#   GATE_KEEP=1   keep the worktrees and builds (default: removed at the end)
#   GATE_TMP      parent of the temporary folder (default: $TMPDIR or /tmp)
set -u
GMAP=$(cd "$(dirname "$0")" && pwd)/gate_map.sh   # the map's reader beside this script (before any cd)
usage() { sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in -h|--help) usage; exit 0;; esac
BASE_REF=$1; shift
HEAD_REF=HEAD
if [ $# -ge 1 ] && [ "$1" != "--" ]; then HEAD_REF=$1; shift; fi
[ "${1:-}" = "--" ] && shift
REPO=$(git rev-parse --show-toplevel) || { echo "gate.sh: not inside a git repository" >&2; exit 2; }
cd "$REPO" || exit 2
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
cd "$TMP/head" || exit 2
# ---- changed code first (docs/compare.md "Changed code first"): the diff through tools/gate_map.txt ----
# ARGS read for what the split needs: the gate's backends, a user's --op, the run options (dry runs)
AB_VALUED=" rounds min-rounds time-budget threshold alpha confidence bootstrap rule metric min-delta max-rows out-dir
  markdown json junit order-seed threads pin cur-env round-stat subset-from redecide ref-cache algo-cache instr-rounds
  instr-calls instr-threshold "
RUN_VALUED=" backend op mode route dtype filter batch budget ci-target min-samples max-samples ref-max-gflop
  case-timeout repetitions seed passes cases-from "
PASS=() RUNARGS=() GLARGS=() USER_BK="" has_op=0 has_tb=0 instr=0 wtime=0 has_wl=0 nogl=0 THR=1 PIN=""
i=0
while [ $i -lt ${#ARGS[@]} ]; do
  a=${ARGS[$i]} v="" nm=""
  case "$a" in --*=*) nm=${a%%=*}; nm=${nm#--}; v=${a#*=};; --*) nm=${a#--};; esac
  if [ -n "$nm" ] && [ -z "$v" ] && [[ $AB_VALUED$RUN_VALUED == *" $nm "* ]]; then i=$((i + 1)); v=${ARGS[$i]:-}; fi
  case "$nm" in
    backend) USER_BK=$v; GLARGS+=("--backend" "$v");;
    dtype|mode|route) GLARGS+=("--$nm" "$v"); PASS+=("--$nm" "$v"); RUNARGS+=("--$nm" "$v");;
    threads) THR=$v; PASS+=("--threads" "$v");;
    pin) PIN=$v; PASS+=("--pin" "$v");;
    no-gate-list) nogl=1; PASS+=("$a");;
    op) has_op=1; PASS+=("--op" "$v"); RUNARGS+=("--op" "$v");;
    time-budget) has_tb=1; PASS+=("--time-budget" "$v");;
    instructions) instr=1; PASS+=("$a");;
    with-time) wtime=1; PASS+=("$a");;
    quick|cold) PASS+=("$a"); RUNARGS+=("$a");;
    "") has_wl=1; PASS+=("$a"); RUNARGS+=("$a");;    # a workload file
    *) if [[ $RUN_VALUED == *" $nm "* ]]; then PASS+=("--$nm" "$v"); RUNARGS+=("--$nm" "$v");
       elif [[ $AB_VALUED == *" $nm "* ]]; then PASS+=("--$nm" "$v"); else PASS+=("$a"); fi;;
  esac
  i=$((i + 1))
done
# the gate's backends: --backend as given, else those --instructions counts (cpu-ref,cpu), else every
# backend HEAD's build finds available (hybench list)
if [ -n "$USER_BK" ]; then GBK=$USER_BK
elif [ $instr = 1 ]; then GBK=cpu-ref,cpu
else GBK=$("$TMP/head/build/hybench" list 2>/dev/null | awk '$2 == "available" {sub(/:.*/, "", $1); if (!s[$1]++) printf "%s%s", n++ ? "," : "", $1}')
  [ -n "$GBK" ] || { echo "gate.sh: hybench list of the HEAD build names no available backend" >&2; exit 2; }
fi
# the case list: the gate list unless workload files or --no-gate-list are given, drawn up once here by
# HEAD's build with the threads of the gate's runs (the cpu backend's plans depend on them; 1 under
# callgrind) and passed to every group's hybench ab as its workload file
if [ $has_wl = 0 ] && [ $nogl = 0 ]; then
  GL=(--out "$OUT/gate-list.ini" --keys "$OUT/gate-list.keys"); GLENV=()
  [ $instr = 1 ] && { GL+=(--instructions); THR=1; GLENV=(HB_CPU_ISA=avx2); }
  [ "$THR" = 0 ] || GLENV+=(OMP_NUM_THREADS="$THR" OPENBLAS_NUM_THREADS="$THR")
  # pinned as hybench ab pins its runs (--pin, default the last CPU; on one CPU the cpu backend skips
  # its timed thread calibration, which decides the -rows plans and their names)
  [ -n "$PIN" ] || PIN=$(taskset -pc $$ 2>/dev/null | sed 's/.*: //' | tr ',' '\n' | tail -1 | sed 's/.*-//')
  TS=(); [ "$PIN" = all ] || [ -z "$PIN" ] || ! command -v taskset >/dev/null || TS=(taskset -c "$PIN")
  env "${GLENV[@]}" "${TS[@]}" "$TMP/head/build/hybench" gate-list "${GL[@]}" "${GLARGS[@]}" 2> "$OUT/gate-list.log" \
    || { echo "gate.sh: HEAD's hybench gate-list failed; see $OUT/gate-list.log" >&2; cat "$OUT/gate-list.log" >&2; exit 2; }
  echo "gate.sh: the case list: the gate list ($(tail -1 "$OUT/gate-list.log" | sed 's/^hybench gate-list: //'))" >&2
  # each backend runs only its own paths' cases (run --cases-from; a BASE older than that option cannot)
  PASS+=("$OUT/gate-list.ini" --cases-from "$OUT/gate-list.keys"); RUNARGS+=("$OUT/gate-list.ini")
fi
BUDGET=${GATE_BUDGET:-900}
PH_KIND=() PH_BK=() PH_FAM=()
git -C "$REPO" diff --no-renames --name-only "$base_sha" "$head_sha" > "$OUT/changed.txt" || exit 2
if [ "${GATE_CHANGED_FIRST:-1}" = 0 ] || [ $has_op = 1 ]; then
  why="GATE_CHANGED_FIRST=0"; [ $has_op = 1 ] && why="--op given"
  echo "gate.sh: changed code first: off ($why): one gate over every case" >&2
  PH_KIND=(all) PH_BK=("$GBK") PH_FAM=('*')
else
  "$GMAP" --backends "$GBK" - < "$OUT/changed.txt" > "$OUT/changed.tsv" || exit 2
  while IFS=$'\t' read -r kind bk fam; do
    case "$kind" in first|others) PH_KIND+=("$kind"); PH_BK+=("$bk"); PH_FAM+=("$fam");; esac
  done < "$OUT/changed.tsv"
fi
fams() { [ "$1" = '*' ] && echo "every family" || echo "${1//,/, }"; }
describe() { # kind: "cpu: conv2d, pooling; cpu-ref: every family" or "nothing"
  local k out="" j
  for ((j = 0; j < ${#PH_KIND[@]}; j++)); do
    [ "${PH_KIND[$j]}" = "$1" ] || continue
    out="${out:+$out; }${PH_BK[$j]//,/, }: $(fams "${PH_FAM[$j]}")"
  done
  echo "${out:-nothing}"
}
nchanged=$(wc -l < "$OUT/changed.txt")
if [ "${PH_KIND[0]}" != all ]; then
  outside=$(awk -F'\t' '$1 == "outside" {printf "%s%s: %s", n++ ? "; " : "", $2, $3}' "$OUT/changed.tsv" | sed 's/,/, /g')
  echo "gate.sh: the diff changes $nchanged file(s) (tools/gate_map.txt; each one's rule in $OUT/changed.tsv)" >&2
  echo "gate.sh: changed first: $(describe first)" >&2
  echo "gate.sh: others: $(describe others)" >&2
  [ -n "$outside" ] && echo "gate.sh: touched but not run by this gate (backends $GBK): $outside" >&2
fi
# ---- the phases: each group one hybench ab, in order, while time remains ----
PH_DIR=() PH_RC=() PH_SECS=() PH_NOTE=()
rc=0 nfirst=0 nother=0
for ((j = 0; j < ${#PH_KIND[@]}; j++)); do
  k=${PH_KIND[$j]}; lab=$k; [ "$k" = first ] && lab="changed first"
  case "$k" in all) d="$OUT";; first) nfirst=$((nfirst + 1)); d="$OUT/first-$nfirst";; *) nother=$((nother + 1)); d="$OUT/others-$nother";; esac
  PH_DIR[$j]=$d PH_RC[$j]="" PH_SECS[$j]=0 PH_NOTE[$j]=""
  FILT=(--backend "${PH_BK[$j]}")
  [ "${PH_FAM[$j]}" = '*' ] || FILT+=(--op "${PH_FAM[$j]}")
  # a group the case list has no case of has nothing to decide (hybench run --dry-run counts them)
  n=$("$TMP/head/build/hybench" run --dry-run "${RUNARGS[@]}" "${FILT[@]}" 2>/dev/null | sed -n 's/.* \([0-9][0-9]*\) cases per backend.*/\1/p' | tail -1)
  if [ "${n:-1}" = 0 ]; then PH_RC[$j]=0; PH_NOTE[$j]="no case of the list"; echo "gate.sh: $lab: ${PH_BK[$j]}: $(fams "${PH_FAM[$j]}"): no case of the list" >&2; continue; fi
  rem=$((BUDGET - ($(date +%s) - t0)))
  if [ $rem -lt 30 ]; then
    PH_RC[$j]=11; PH_NOTE[$j]="not run: the gate's budget (GATE_BUDGET=$BUDGET s) was spent"
    echo "gate.sh: $lab: ${PH_BK[$j]}: $(fams "${PH_FAM[$j]}"): ${PH_NOTE[$j]}" >&2; continue
  fi
  TB=(); [ $has_tb = 1 ] || TB=(--time-budget "$rem")
  OUTS=(--markdown "$d/gate.md")   # --instructions alone writes Markdown only
  [ $instr = 1 ] && [ $wtime = 0 ] || OUTS+=(--json "$d/gate.json" --junit "$d/gate.xml")
  mkdir -p "$d" || exit 7
  echo "gate.sh: $lab: ${PH_BK[$j]}: $(fams "${PH_FAM[$j]}") (${rem} s left; outputs in $d)" >&2
  p0=$(date +%s)
  timeout --signal=TERM --kill-after=30 $((rem + ${GATE_GRACE:-60})) "$TMP/head/build/hybench" ab "$TMP/base" "$TMP/head" --out-dir "$d" \
    "${OUTS[@]}" "${PASS[@]}" "${FILT[@]}" "${TB[@]}"
  r=$?
  PH_SECS[$j]=$(($(date +%s) - p0))
  if [ $r -eq 124 ] || [ $r -eq 137 ]; then r=11; PH_NOTE[$j]="stopped at the gate's budget (GATE_BUDGET=$BUDGET s) before its cases were decided"; fi
  PH_RC[$j]=$r
done
t2=$(date +%s)
# one exit status: 1 when any phase flags a case; else a phase's error (2, 3, 7, 10); else 11 when any
# phase is inconclusive or was stopped or not run for lack of time; else 0
for r in "${PH_RC[@]}"; do [ "$r" = 1 ] && rc=1; done
if [ $rc = 0 ]; then for r in "${PH_RC[@]}"; do case "$r" in 0|11) ;; *) rc=$r; break;; esac; done; fi
if [ $rc = 0 ]; then for r in "${PH_RC[@]}"; do [ "$r" = 11 ] && rc=11; done; fi
vname() { case $1 in 0) echo pass;; 1) echo FAIL;; 11) echo INCONCLUSIVE;; *) echo error;; esac; }
verdict=$(vname $rc)
if [ "${PH_KIND[0]}" = all ]; then
  cat "$OUT/gate.md" 2>/dev/null
else
  # the gate's own Markdown, JSON and JUnit over the phases (each phase's files in its folder)
  jstr() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }
  {
    echo "# tools/gate.sh: $verdict"
    echo
    echo "BASE $BASE_REF ($base_sha), HEAD $HEAD_REF ($head_sha); backends $GBK; hybench ab ${PASS[*]}; budget $BUDGET s."
    echo
    echo "## Changed code first"
    echo
    echo "The diff changes $nchanged file(s); through tools/gate_map.txt (docs/compare.md, \"Changed code first\"):"
    echo
    echo "- **changed first**: $(describe first)"
    echo "- **others**: $(describe others)"
    [ -n "$outside" ] && echo "- touched, but not run by this gate: $outside"
    echo
    echo "| phase | backends | families | exit | verdict | time | outputs |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    for ((j = 0; j < ${#PH_KIND[@]}; j++)); do
      k=${PH_KIND[$j]}; [ "$k" = first ] && k="changed first"
      echo "| $k | ${PH_BK[$j]//,/, } | $(fams "${PH_FAM[$j]}") | ${PH_RC[$j]} | $(vname "${PH_RC[$j]}")${PH_NOTE[$j]:+: ${PH_NOTE[$j]}} | ${PH_SECS[$j]} s | ${PH_DIR[$j]#"$OUT"/} |"
    done
    echo
    echo "| changed file | map rule | backends | families |"
    echo "| --- | --- | --- | --- |"
    awk -F'\t' '$1 == "path" {if (++n <= 60) printf "| `%s` | `%s` | %s | %s |\n", $2, $3, $4, $5} END {if (n > 60) printf "\n(%d more in changed.tsv)\n", n - 60}' "$OUT/changed.tsv"
    for ((j = 0; j < ${#PH_KIND[@]}; j++)); do
      [ -s "${PH_DIR[$j]}/gate.md" ] || continue
      k=${PH_KIND[$j]}; [ "$k" = first ] && k="changed first"
      echo
      echo "## $k: ${PH_BK[$j]//,/, }: $(fams "${PH_FAM[$j]}")"
      echo
      sed 's/^#/###/' "${PH_DIR[$j]}/gate.md"   # its headings under the group's
    done
  } > "$OUT/gate.md"
  {
    printf '{"tool":"tools/gate.sh","verdict":"%s","exit":%d,"base":%s,"head":%s,"backends":%s,"budget_s":%d,' \
      "$verdict" "$rc" "$(jstr "$base_sha")" "$(jstr "$head_sha")" "$(jstr "$GBK")" "$BUDGET"
    printf '"builds_s":%d,"gate_s":%d,"changed_files":%d,"changed_first":%s,"others":%s,"phases":[' \
      $((t1 - t0)) $((t2 - t1)) "$nchanged" "$(jstr "$(describe first)")" "$(jstr "$(describe others)")"
    for ((j = 0; j < ${#PH_KIND[@]}; j++)); do
      [ $j -gt 0 ] && printf ','
      printf '{"phase":"%s","backends":%s,"families":%s,"exit":%s,"verdict":"%s","seconds":%d,"note":%s,"dir":%s}' \
        "${PH_KIND[$j]}" "$(jstr "${PH_BK[$j]}")" "$(jstr "${PH_FAM[$j]}")" "${PH_RC[$j]}" "$(vname "${PH_RC[$j]}")" \
        "${PH_SECS[$j]}" "$(jstr "${PH_NOTE[$j]}")" "$(jstr "${PH_DIR[$j]#"$OUT"/}")"
    done
    printf ']}\n'
  } > "$OUT/gate.json"
  # JUnit: every phase's test suites under one root (time gates write them; --instructions alone does not)
  xs=(); for d in "${PH_DIR[@]}"; do [ -s "$d/gate.xml" ] && xs+=("$d/gate.xml"); done
  if [ ${#xs[@]} -gt 0 ]; then
    { echo '<?xml version="1.0" encoding="UTF-8"?>'; echo '<testsuites name="tools/gate.sh">'
      for x in "${xs[@]}"; do   # each suite named after its group's folder: first-1.hybench.compare.cpu
        g=$(basename "$(dirname "$x")")
        sed -n '/^  <testsuite/,/^  <\/testsuite>/p' "$x" | sed "s|^  <testsuite name=\"|  <testsuite name=\"$g.|"
      done
      echo '</testsuites>'; } > "$OUT/gate.xml"
  fi
  cat "$OUT/gate.md"
  echo "gate.sh: changed first: $(describe first)" >&2
  echo "gate.sh: others: $(describe others)" >&2
  for ((j = 0; j < ${#PH_KIND[@]}; j++)); do
    k=${PH_KIND[$j]}; [ "$k" = first ] && k="changed first"
    echo "gate.sh:   $k: ${PH_BK[$j]}: $(fams "${PH_FAM[$j]}"): exit ${PH_RC[$j]} ($(vname "${PH_RC[$j]}"))${PH_NOTE[$j]:+, ${PH_NOTE[$j]}}, ${PH_SECS[$j]} s" >&2
  done
fi
echo "gate.sh: exit $rc ($verdict); builds $((t1 - t0)) s, hybench ab $((t2 - t1)) s; outputs in $OUT" >&2
exit $rc
