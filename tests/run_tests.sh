#!/usr/bin/env bash
# Runs every cmocka test binary given as arguments, then the end-to-end checks (hybench verify over
# every op on each available backend, the report page in headless Chromium), and prints one closing
# line CI can read: "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
pass=0; fail=0; failed_names=""
note() { printf '%s\n' "$*"; }
run_bin() { # name, command...: one cmocka binary; its PASSED/FAILED counts go into the totals
  local name=$1; shift
  local out rc p f
  out=$("$@" 2>&1); rc=$?
  printf '%s\n' "$out" | sed "s/^/[$name] /"
  p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
  f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed before its summary
  pass=$((pass + p)); fail=$((fail + f))
  [ "$f" -gt 0 ] && failed_names="$failed_names $name"
}
for t in "$@"; do
  name=$(basename "$t")
  run_bin "$name" "$t"
  # PoCL picks its kernel library by CPU (avx512 on an AVX-512 host); its avx2 library compiles the
  # same kernels differently (f16 loads faulted only there), so test_opencl also runs under it.
  if [ "$name" = test_opencl ]; then
    if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
      run_bin "$name[avx2]" env POCL_LLVM_CPU_NAME=haswell POCL_KERNELLIB_NAME=avx2 "$t"
    else note "[$name[avx2]] SKIP: this CPU has no AVX2"; fi
  fi
done
# End-to-end: hybench verify over every op with small shapes, per backend.
check() { # name, command...
  local name=$1; shift
  local log; log=$(mktemp)
  if "$@" >"$log" 2>&1; then pass=$((pass + 1)); note "[e2e] PASS $name"
  else fail=$((fail + 1)); failed_names="$failed_names $name"; note "[e2e] FAIL $name (exit $?)"; sed 's/^/    /' "$log" | tail -40; fi
  rm -f "$log"
}
mkdir -p build/test-results
for b in cpu-ref cpu opencl; do
  if [ "$b" = opencl ] && ! build/hybench list 2>/dev/null | grep -q '^opencl:.*available'; then
    note "[e2e] SKIP verify-$b: $(build/hybench list 2>/dev/null | grep '^opencl')"; continue; fi
  check "verify-$b" build/hybench verify --backend "$b" --out "build/test-results/verify-$b.jsonl" tests/data/verify_all.ini
done
# A crash inside one case is recorded as `crashed` and the run goes on (exit 8, later cases ok).
check "crash-is-recorded" sh -c 'HB_INJECT_CRASH="mul|n=4099" build/hybench verify --backend cpu --op add,mul,relu --out build/test-results/crash.jsonl tests/data/verify_all.ini >/dev/null 2>&1; rc=$?; [ $rc -eq 8 ] || { echo "exit $rc, wanted 8"; exit 1; }; grep -q "\"status\":\"crashed\"" build/test-results/crash.jsonl && grep -q "\"op\":\"relu\",.*\"status\":\"ok\"" build/test-results/crash.jsonl && grep -q "\"type\":\"end\"" build/test-results/crash.jsonl'
# The opencl backend process re-executes itself with libgomp's throttled spin count (runner.c, "OpenMP
# wait policy"): its backend record says so, the cpu one keeps the default, and a crash inside an
# opencl case is still recorded while a fresh (re-executed) child goes on with the next case.
if build/hybench list 2>/dev/null | grep -q '^opencl:.*available'; then
check "opencl-child-wait-policy" sh -c 'R=build/test-results/waitpolicy.jsonl; HB_INJECT_CRASH="mul|n=4099" build/hybench verify --backend cpu,opencl --op add,mul,relu --out $R tests/data/verify_all.ini >/dev/null 2>&1; rc=$?; [ $rc -eq 8 ] || { echo "exit $rc, wanted 8"; exit 1; }; grep "\"type\":\"backend\",\"backend\":\"opencl" $R | grep -q "\"GOMP_SPINCOUNT\":\"1000\"" || { echo "opencl record lacks GOMP_SPINCOUNT 1000"; exit 1; }; grep "\"type\":\"backend\",\"backend\":\"cpu\"" $R | grep -q "\"GOMP_SPINCOUNT\":\"unset" || { echo "cpu record should keep the default"; exit 1; }; grep -q "\"backend\":\"opencl:0:0\".*\"status\":\"crashed\"" $R && grep -q "\"backend\":\"opencl:0:0\",\"op\":\"relu\".*\"status\":\"ok\"" $R'
fi
# Passes: a 2-pass run merges into one record per case with both passes' medians, removes its
# per-pass files, and a case that crashes in its passes stays crashed (a crash is never hidden).
check "passes-merge" sh -c 'R=build/test-results/passes.jsonl; HB_INJECT_CRASH="mul|n=4099" build/hybench run --backend cpu-ref,cpu --op add,mul --passes 2 --budget 0.02 --out $R tests/data/verify_all.ini >/dev/null 2>&1; rc=$?; [ $rc -eq 8 ] || { echo "exit $rc, wanted 8"; exit 1; }; ls $R.pass* 2>/dev/null && { echo "pass files left"; exit 1; }; [ $(grep -c "\"type\":\"case\"" $R) -eq $(grep -c "\"best_pass\"" $R) ] || { echo "a case without best_pass"; exit 1; }; grep -q "\"pass_medians\":{\"total\":\[[0-9.e-]*,[0-9.e-]*\]" $R || { echo "no 2-pass medians"; exit 1; }; grep -q "\"op\":\"mul\".*\"status\":\"crashed\"" $R || { echo "crash lost in merge"; exit 1; }; grep -q "\"passes\":2,\"interrupted\":false" $R'
# SIGINT: the run stops, writes what it measured with "interrupted": true, and exits 130.
check "interrupt-keeps-results" sh -c 'R=build/test-results/interrupt.jsonl; build/hybench run --backend cpu-ref,cpu --passes 2 --budget 0.05 --out $R tests/data/verify_all.ini >/dev/null 2>&1 & p=$!; sleep 4; kill -INT $p; wait $p; rc=$?; [ $rc -eq 130 ] || { echo "exit $rc, wanted 130"; exit 1; }; grep -q "\"interrupted\":true" $R && grep -q "\"type\":\"case\"" $R && ! ls $R.pass* 2>/dev/null'
# A malformed workload is refused with file:line before anything runs (exit 4); an unknown backend or
# op is a usage error with the option named.
check "bad-workload-refused" sh -c 'for f in tests/data/bad_*.ini; do out=$(build/hybench run --out build/test-results/bad.jsonl "$f" 2>&1); rc=$?; [ $rc -eq 4 ] || { echo "$f: exit $rc"; exit 1; }; echo "$out" | grep -q "$f:[0-9]" || echo "$out" | grep -q "$(basename $f)" || { echo "$f: no file:line in: $out"; exit 1; }; done; [ ! -e build/test-results/bad.jsonl ]'
check "bad-options-refused" sh -c 'build/hybench run --backend nosuch >/dev/null 2>&1; [ $? -eq 6 ] || exit 1; build/hybench run --op nosuch 2>&1 | grep -q -- "--op" || exit 1; build/hybench run --op nosuch >/dev/null 2>&1; [ $? -eq 2 ] || exit 1; build/hybench run --backend metal --quick --op add --out build/test-results/metal.jsonl >/dev/null 2>&1; [ $? -eq 6 ] || exit 1; grep -q "\"backend\":\"metal\",\"available\":false" build/test-results/metal.jsonl'
check "list-shows-every-backend" sh -c 'o=$(build/hybench list); for b in cpu-ref cpu opencl cuda metal coreml; do echo "$o" | grep -q "^$b" || { echo "missing $b"; exit 1; }; done'
check "roofline-and-targets-alias" sh -c 'r=$(build/hybench roofline results/h100-reference.jsonl); rc=$?; [ $rc -le 1 ] || exit 1; echo "$r" | grep -q "^| case family |" || exit 1; echo "$r" | grep -q "cuda matmul 8192" || exit 1; t=$(build/hybench targets results/h100-reference.jsonl); [ "$t" = "$r" ] || { echo "targets differs from roofline"; exit 1; }; build/hybench targets --help | grep -q "former name" || exit 1; build/hybench roofline >/dev/null 2>&1; [ $? -eq 2 ]'
for s in tests/check_*.sh; do
  [ -x "$s" ] || continue
  check "$(basename "$s" .sh)" "$s"
done
[ -n "$failed_names" ] && note "failed:$failed_names"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
