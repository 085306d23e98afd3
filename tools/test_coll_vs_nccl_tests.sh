#!/usr/bin/env bash
# Self-test of tools/coll_vs_nccl_tests.py and of tools/nccl_tests.sh's run loop, no GPU needed.
# Usage: tools/test_coll_vs_nccl_tests.sh        (prints "N passed, M failed"; exit 1 on a failure)
#
# Everything below is SYNTHETIC: nccl-tests outputs in the real layout of nccl-tests 2.19.6 (the printf
# formats of src/util.cu: writeResultHeader, writeBenchmarkLinePreamble, writeBenchmarkLineBody and its
# getFloatStr number formatting), with invented times, and invented hybench JSONL records. No value here
# is a measurement.
# shellcheck disable=SC2015  # "cond && ok || bad": ok always succeeds
set -euo pipefail
cd "$(dirname "$0")/.."
T=$(mktemp -d "${TMPDIR:-/tmp}/test_coll_vs_nccl.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
has() {  # file fixed-string description
  if grep -qF -- "$2" "$1"; then ok; else bad "$3: no line with '$2' in $1"; sed 's/^/    /' "$1" >&2; fi
}

# getFloatStr(value, width): %.2f, else %.1f, else %.0f, else %.1e / %.0e, whichever fits the width
ff() {
  local w=$1 v=$2 s
  for f in %.2f %.1f %.0f; do
    # shellcheck disable=SC2059  # the format is one of the three above
    printf -v s "$f" "$v"; if [ ${#s} -le "$w" ]; then printf "%*s" "$w" "$s"; return; fi
  done
  if [ "$w" -ge 7 ]; then printf "%*.1e" "$w" "$v"; else printf "%*.0e" "$w" "$v"; fi
}
# one nccl-tests placement: time(us) and the busbw factor -> "  time  algbw  busbw  #wrong"
body() {  # size time_us factor
  local alg bus
  alg=$(awk -v s="$1" -v t="$2" 'BEGIN{printf "%.6f", s / 1e9 / (t * 1e-6)}')
  bus=$(awk -v a="$alg" -v f="$3" 'BEGIN{printf "%.6f", a * f}')
  printf "  %7s  %6s  %6s  %6g" "$(ff 7 "$2")" "$(ff 6 "$alg")" "$(ff 6 "$bus")" 0
}
row() {  # size count type redop root factor t_out t_in
  printf "%12s  %12s  %8s  %6s  %6s" "$1" "$2" "$3" "$4" "$(printf %6i "$5")"
  body "$1" "$7" "$6"; body "$1" "$8" "$6"; printf "\n"
}
header() {  # prog ranks
  echo "# SYNTHETIC nccl-tests output for tools/test_coll_vs_nccl_tests.sh: invented values, nccl-tests 2.19.6 layout"
  echo "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809"
  echo "# Collective test starting: $1"
  echo "# nThread 1 nGpus $2 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 10 iters: 50 agg iters: 1 validation: 1 graph: 0 unalign: 0"
  echo "#"
  echo "# Using devices"
  local r
  for ((r = 0; r < $2; r++)); do
    printf "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n" "$r" 0 4242 synth "$r" 0 $((24 + r)) 0 "SYNTHETIC GPU"
  done
  echo "#"
  printf "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n" "" "" "" "" ""
  printf "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n" size count type redop root \
    time algbw busbw "#wrong" time algbw busbw "#wrong" 0 ""
  printf "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n" "(B)" "(elements)" "" "" "" \
    "(us)" "(GB/s)" "(GB/s)" "" "(us)" "(GB/s)" "(GB/s)" "" 0 ""
}
footer() {
  echo "# Out of bounds values : 0 OK"
  echo "# Avg bus bandwidth    : 123.456 "
  echo "#"
  echo "# Collective test concluded: $1"
}

NT=$T/nt; mkdir -p "$NT"
G=268435456   # 256 MiB
# times (us) chosen for busbw: all_reduce 2 ranks factor 1, all_gather factor 1/2, broadcast 1
t_ar256=$(awk -v s=$G 'BEGIN{print s / 360e3}')           # busbw 360
t_ar1g=$(awk -v s=$((4 * G)) 'BEGIN{print s / 370e3}')    # busbw 370
t_ag256=$(awk -v s=$G 'BEGIN{print s / 360e3}')           # algbw 360, busbw 180
t_bc512=$(awk -v s=$((2 * G)) 'BEGIN{print s / 300e3}')   # busbw 300
{
  header all_reduce_perf 2
  row 8 2 float sum -1 1 10 10
  row 1024 256 float sum -1 1 12 12
  echo "synth:4242:4243 [0] NCCL WARN a SYNTHETIC warning line between data lines"
  row $G $((G / 4)) float sum -1 1 "$t_ar256" "$t_ar256"
  row $((4 * G)) $G float sum -1 1 "$t_ar1g" "$t_ar1g"
  footer all_reduce_perf
} > "$NT/all_reduce_perf_float.txt"
{
  header all_gather_perf 2
  row 0 0 float none -1 0.5 6 6          # -b 8 and 16: count rounds to 0 (nccl-tests prints size 0)
  row 32 4 float none -1 0.5 9 9
  row $G $((G / 8)) float none -1 0.5 "$t_ag256" "$t_ag256"
  footer all_gather_perf
} > "$NT/all_gather_perf_float.txt"
{
  header broadcast_perf 2
  row 8 4 half none 0 1 8 8
  row $((2 * G)) $G half none 0 1 "$t_bc512" "$t_bc512"
  footer broadcast_perf
} > "$NT/broadcast_perf_half.txt"
echo "# SYNTHETIC summary, not an output" > "$NT/summary.txt"

# hybench records (SYNTHETIC): rank 0 and rank 1 files of one 2-rank launch
python3 - "$T" <<'EOF'
import json, sys
T = sys.argv[1]
G = 268435456
def case(op, dtype, n, esize, t, inplace=False, ranks=2, mode="resident", path="nccl", status="ok",
         backend="cuda:0", factor=None):
    size = n * esize * (ranks if op in ("all_gather", "reduce_scatter") else 1)
    if factor is None:
        factor = {"all_reduce": 2 * (ranks - 1) / ranks, "all_gather": (ranks - 1) / ranks,
                  "reduce_scatter": (ranks - 1) / ranks, "broadcast": 1.0}[op]
    shape = {"n": n, "ranks": ranks}
    if inplace: shape["inplace"] = 1
    if path != "nccl": shape["path"] = {"host": 1, "peer": 2}[path]
    r = {"type": "case", "schema": 1, "backend": backend, "op": op, "family": "collective", "shape": shape,
         "dtype": dtype, "mode": mode, "route": "pageable", "status": status}
    if status == "ok":
        alg = size / t / 1e9
        r["collective"] = {"size_bytes": float(size), "time_s": t, "algbw_gbps": alg, "busbw_gbps": alg * factor,
                           "busbw_factor": factor, "ranks": ranks, "path": path, "in_place": inplace}
    return r
def recs(t1g):
    return [
        {"type": "meta", "schema": 1, "note": "SYNTHETIC"},
        case("all_reduce", "f32", 2, 4, 11.5e-6),                    # lat ok (15%)
        case("all_reduce", "f32", 2, 4, 13.0e-6, inplace=True),      # lat MISS (30%, 3 us)
        case("all_reduce", "f32", 256, 4, 12e-6),                    # no target
        case("all_reduce", "f32", G // 4, 4, G / 350e9),             # busbw 350 vs 360: ok
        case("all_reduce", "f32", G, 4, t1g),                        # rank mean
        case("all_gather", "f32", 4, 4, 10.5e-6),                    # lat ok (16.7%)
        case("all_gather", "f32", G // 8, 4, G / 344e9),             # busbw 172 vs 180: ok
        case("broadcast", "f16", 4, 2, 9.9e-6),                      # lat ok by the 2 us rule
        case("broadcast", "f16", G, 2, 2 * G / 310e9),               # busbw 310 vs 300: ok
        # distractors: none of these may appear in the table
        case("all_reduce", "f32", G, 4, 1e-3, mode="f32"),
        case("all_reduce", "f32", G, 4, 1e-3, path="host"),
        case("all_reduce", "f32", G, 4, 1e-3, ranks=1),
        case("all_reduce", "f32", 2 * G, 4, 1e-3, status="wrong"),
        case("all_reduce", "f32", G, 4, 1e-3, backend="cpu"),
        {"type": "pass_case", "pass": 1, "op": "all_reduce", "dtype": "f32", "mode": "resident",
         "collective": {"size_bytes": 8.0, "time_s": 1.0, "ranks": 2, "path": "nccl", "in_place": False}},
    ]
for rank, t1g in ((0, 3.0e-3), (1, 3.2e-3)):
    with open("%s/rank%d.jsonl" % (T, rank), "w") as f:
        for r in recs(t1g):
            f.write(json.dumps(r) + "\n")
        if rank == 0:
            f.write('{"type": "case", "truncated SYNTHETIC line\n')
EOF

C=tools/coll_vs_nccl_tests.py
# 1. two rank files: the 1 GiB time is their mean (3.1 ms): busbw 346.37 vs 370 -> MISS
python3 $C "$NT" "$T/rank0.jsonl" "$T/rank1.jsonl" --md "$T/out.md" > "$T/out.txt" 2> "$T/err.txt" || bad "exit status $? (want 0)"
cmp -s "$T/out.txt" "$T/out.md" && ok || bad "--md differs from stdout"
has "$T/out.txt" "| all_reduce | f32 | 8 B | out | 10.00 | 0.00 | 11.50 | 6.96e-04 | 0.870 | ok (lat) |" "all_reduce 8 B latency ok"
has "$T/out.txt" "| all_reduce | f32 | 8 B | in | 10.00 | 0.00 | 13.00 | 6.15e-04 | 0.769 | MISS (lat) |" "all_reduce 8 B in place latency miss"
has "$T/out.txt" "| all_reduce | f32 | 1 KiB | out | 12.00 | 0.09 | 12.00 | 0.09 | 1.000 | - |" "no target between"
has "$T/out.txt" "| all_reduce | f32 | 256 MiB | out | 745.65 | 360.00 | 766.96 | 350.00 | 0.972 | ok (bw) |" "all_reduce 256 MiB"
has "$T/out.txt" "| all_reduce | f32 | 1 GiB | out | 2902.00 | 370.00 | 3100.00 | 346.37 | 0.936 | MISS (bw) |" "all_reduce 1 GiB, mean of ranks"
has "$T/out.txt" "| all_gather | f32 | 32 B | out | 9.00 | 0.00 | 10.50 | 1.52e-03 | 0.857 | ok (lat) |" "all_gather smallest = 32 B total"
has "$T/out.txt" "| all_gather | f32 | 256 MiB | out | 745.65 | 180.00 | 780.34 | 172.00 | 0.956 | ok (bw) |" "all_gather total size matched"
has "$T/out.txt" "| broadcast | f16 | 8 B | out | 8.00 | 0.00 | 9.90 | 8.08e-04 | 0.808 | ok (lat) |" "broadcast 2 us rule"
has "$T/out.txt" "| broadcast | f16 | 512 MiB | out | 1789.57 | 300.00 | 1731.84 | 310.00 | 1.033 | ok (bw) |" "broadcast"
has "$T/out.txt" "**Summary: 6 of 8 rows with a target meet it** (bandwidth >= 256 MiB: 3 of 4; latency at the smallest size: 3 of 4); 9 rows matched, 1 without a target." "summary"
has "$T/out.txt" "hybench resident NCCL cases not ok: wrong 2" "non-ok counted (one per file)"
has "$T/out.txt" "1 unreadable hybench lines skipped" "truncated line skipped"
has "$T/out.txt" "1 non-data lines in nccl-tests outputs skipped" "NCCL WARN line skipped"
has "$T/out.txt" "nccl-tests: $NT (2.19.6 nccl-headers=22809 nccl-library=22809; 3 output files)" "version, summary.txt not read"
rows=$(grep -cE '^\| (all_reduce|all_gather|reduce_scatter|broadcast) \| ' "$T/out.txt" || true)
[ "$rows" = 9 ] && ok || bad "table has $rows rows, want 9 (distractors leaked?)"

# 2. rank 0 alone: 1 GiB at 3.0 ms -> busbw 357.91, ratio 0.967 -> ok; and from a tarball
tar -czf "$T/nt.tgz" -C "$T" nt
python3 $C "$T/nt.tgz" "$T/rank0.jsonl" > "$T/out0.txt" 2>/dev/null || bad "tarball: exit status $?"
has "$T/out0.txt" "| all_reduce | f32 | 1 GiB | out | 2902.00 | 370.00 | 3000.00 | 357.91 | 0.967 | ok (bw) |" "rank 0 only, tarball input"
has "$T/out0.txt" "**Summary: 7 of 8 rows with a target meet it**" "summary rank 0"

# 3. unreadable inputs: exit 2 naming the file; an empty nccl-tests folder is not an error
set +e
python3 $C "$NT" "$T/missing.jsonl" > /dev/null 2> "$T/e1.txt"; rc=$?
set -e
[ "$rc" = 2 ] && ok || bad "missing JSONL: exit $rc (want 2)"
has "$T/e1.txt" "$T/missing.jsonl" "missing JSONL named"
set +e
python3 $C "$T/no-such-dir" "$T/rank0.jsonl" > /dev/null 2> "$T/e2.txt"; rc=$?
set -e
[ "$rc" = 2 ] && ok || bad "missing nccl-tests folder: exit $rc (want 2)"
has "$T/e2.txt" "$T/no-such-dir" "missing folder named"
mkdir -p "$T/empty"
python3 $C "$T/empty" "$T/rank0.jsonl" > "$T/out_e.txt" 2>/dev/null && ok || bad "empty folder: exit $? (want 0)"
has "$T/out_e.txt" "**Summary: 0 of 0 rows" "empty folder summary"

# 4. tools/nccl_tests.sh's run loop with fake binaries (SYNTHETIC) and a fake NCCL: it must pass the
#    documented options, keep NCCL_NVLS_ENABLE=0, write each run's output, env.sh and summary.txt.
FB=$T/fakebin; FN=$T/fakenccl; mkdir -p "$FB" "$FN/include" "$FN/lib" "$T/fakesrc/src"
printf '#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 9\n' > "$FN/include/nccl.h"
: > "$FN/lib/libnccl.so.2"
echo '#define NCCL_TESTS_VERSION "2.19.6"' > "$T/fakesrc/src/common.h"
for op in all_reduce all_gather reduce_scatter broadcast; do
  cat > "$FB/${op}_perf" <<EOF
#!/usr/bin/env bash
# SYNTHETIC stand-in for nccl-tests' ${op}_perf
[ "\${1:-}" = -h ] && { echo "USAGE: ${op}_perf"; exit 0; }
echo "\$*" >> "$T/args.${op}"
[ "\${NCCL_NVLS_ENABLE-unset}" = 0 ] || { echo "NCCL_NVLS_ENABLE is '\${NCCL_NVLS_ENABLE-unset}'"; exit 9; }
dt=float; while [ \$# -gt 0 ]; do [ "\$1" = -d ] && dt=\$2; shift; done
f="$NT/${op}_perf_\$dt.txt"
if [ -f "\$f" ]; then cat "\$f"; else echo "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809"; fi
EOF
  chmod +x "$FB/${op}_perf"
done
set +e
NCCL_NVLS_ENABLE=1 NCCL_HOME=$FN NCCLT_BIN=$FB NCCLT_WORK=$T/work NCCLT_RUNS="all_reduce:float all_gather:float broadcast:half" \
  bash tools/nccl_tests.sh "$T/fakesrc" "$T/ntout" 2 > "$T/run.log" 2>&1; rc=$?
set -e
[ "$rc" = 0 ] && ok || { bad "nccl_tests.sh with fake binaries: exit $rc"; cat "$T/run.log" >&2; }
has "$T/args.all_reduce" "-b 8 -e 1G -f 2 -g 2 -d float -w 10 -n 50 -c 1" "all_reduce options"
has "$T/args.broadcast" "-b 4 -e 1G -f 2 -g 2 -d half -w 10 -n 50 -c 1" "broadcast half options"
has "$T/args.all_gather" "-b 8 -e 2147483648 -f 2 -g 2 -d float -w 10 -n 50 -c 1" "all_gather: 1 GiB per rank, total size"
has "$T/ntout/summary.txt" "all_reduce float rc=0" "summary.txt"
has "$T/ntout/env.sh" "export NCCL_NVLS_ENABLE=0" "env.sh keeps multicast off"
has "$T/ntout/env.sh" "export HB_NCCL_LIB=$FN/lib/libnccl.so.2" "env.sh names the library"
has "$T/run.log" "# nccl-tests version 2.19.6" "version line printed"
python3 $C "$T/ntout" "$T/rank0.jsonl" > "$T/out_run.txt" 2>/dev/null || bad "compare on nccl_tests.sh output: exit $?"
has "$T/out_run.txt" "**Summary: 7 of 8 rows with a target meet it**" "compare on nccl_tests.sh's output folder"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
