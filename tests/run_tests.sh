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
  # same kernels differently (f16 loads faulted only there), so the OpenCL tests also run under it.
  if [ "$name" = test_opencl ] || [ "$name" = test_opencl_ops ]; then
    if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
      run_bin "$name[avx2]" env POCL_LLVM_CPU_NAME=haswell POCL_KERNELLIB_NAME=avx2 "$t"
    else note "[$name[avx2]] SKIP: this CPU has no AVX2"; fi
  fi
  # gelu/silu pick their SLEEF loop at run time (AVX-512 where the CPU has it): the AVX2 loop is
  # checked on such a CPU too
  if [ "$name" = test_cpu_kernels ] && grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
    run_bin "$name[avx2]" env HB_CPU_ISA=avx2 "$t"
  fi
done
# End-to-end: hybench verify over every op with small shapes, per backend.
check() { # name, command...
  local name=$1; shift
  local log; log=$(mktemp)
  local rc=0
  "$@" >"$log" 2>&1 || rc=$?
  if [ $rc -eq 0 ]; then pass=$((pass + 1)); note "[e2e] PASS $name"
  elif [ $rc -eq 77 ]; then note "[e2e] SKIP $name: $(tail -1 "$log")" # a check that cannot run here says why (exit 77)
  else fail=$((fail + 1)); failed_names="$failed_names $name"; note "[e2e] FAIL $name (exit $rc)"; sed 's/^/    /' "$log" | tail -40; fi
  rm -f "$log"
}
mkdir -p build/test-results
rm -f build/test-results/*.jsonl # hybench run refuses to replace an existing results file without --force
for b in cpu-ref cpu opencl; do
  if [ "$b" = opencl ] && ! build/hybench list 2>/dev/null | grep -q '^opencl:.*available'; then
    note "[e2e] SKIP verify-$b: $(build/hybench list 2>/dev/null | grep '^opencl')"; continue; fi
  check "verify-$b" build/hybench verify --backend "$b" --out "build/test-results/verify-$b.jsonl" tests/data/verify_all.ini
done
# A crash inside one case is recorded as `crashed` and the run goes on (exit 8, later cases ok).
# matmul with quantized weights through the driver: random blocks, their reference, bytes, skips
check "quant-matmul-run" sh -c 'R=build/test-results/quant.jsonl; rm -f $R; build/hybench run --backend cpu-ref,cpu --op matmul --dtype q8_0,q4_k,q5_k,q6_k --mode convert,f32 --budget 0.01 --out $R tests/data/quant_small.ini >/dev/null 2>&1 || { echo "run failed"; exit 1; }; python3 tests/check_quant_run.py $R'
check "crash-is-recorded" sh -c 'HB_INJECT_CRASH="mul|n=4099" build/hybench verify --backend cpu --op add,mul,relu --out build/test-results/crash.jsonl tests/data/verify_all.ini >/dev/null 2>&1; rc=$?; [ $rc -eq 8 ] || { echo "exit $rc, wanted 8"; exit 1; }; grep -q "\"status\":\"crashed\"" build/test-results/crash.jsonl && grep -q "\"op\":\"relu\",.*\"status\":\"ok\"" build/test-results/crash.jsonl && grep -q "\"type\":\"end\"" build/test-results/crash.jsonl'
# The opencl backend process re-executes itself with libgomp's throttled spin count (child.c, "OpenMP
# wait policy"): its backend record says so, the cpu one keeps the default, and a crash inside an
# opencl case is still recorded while a fresh (re-executed) child goes on with the next case.
if build/hybench list 2>/dev/null | grep -q '^opencl:.*available'; then
check "opencl-child-wait-policy" sh -c 'R=build/test-results/waitpolicy.jsonl; HB_INJECT_CRASH="mul|n=4099" build/hybench verify --backend cpu,opencl --op add,mul,relu --out $R tests/data/verify_all.ini >/dev/null 2>&1; rc=$?; [ $rc -eq 8 ] || { echo "exit $rc, wanted 8"; exit 1; }; grep "\"type\":\"backend\",\"backend\":\"opencl" $R | grep -q "\"GOMP_SPINCOUNT\":\"1000\"" || { echo "opencl record lacks GOMP_SPINCOUNT 1000"; exit 1; }; grep "\"type\":\"backend\",\"backend\":\"cpu\"" $R | grep -q "\"GOMP_SPINCOUNT\":\"unset" || { echo "cpu record should keep the default"; exit 1; }; grep -q "\"backend\":\"opencl:0:0\".*\"status\":\"crashed\"" $R && grep -q "\"backend\":\"opencl:0:0\",\"op\":\"relu\".*\"status\":\"ok\"" $R'
fi
# Passes: a 2-pass run merges into one record per case with both passes' medians, removes its
# per-pass files, and a case that crashes in its passes stays crashed (a crash is never hidden).
check "passes-merge" sh -c 'R=build/test-results/passes.jsonl; HB_INJECT_CRASH="mul|n=4099" build/hybench run --backend cpu-ref,cpu --op add,mul --passes 2 --budget 0.02 --out $R tests/data/verify_all.ini >/dev/null 2>&1; rc=$?; [ $rc -eq 8 ] || { echo "exit $rc, wanted 8"; exit 1; }; ls $R.pass* 2>/dev/null && { echo "pass files left"; exit 1; }; [ $(grep -c "\"type\":\"case\"" $R) -eq $(grep -c "\"best_pass\"" $R) ] || { echo "a case without best_pass"; exit 1; }; grep -q "\"pass_medians\":{\"total\":\[[0-9.e-]*,[0-9.e-]*\]" $R || { echo "no 2-pass medians"; exit 1; }; grep -q "\"op\":\"mul\".*\"status\":\"crashed\"" $R || { echo "crash lost in merge"; exit 1; }; grep -q "\"passes\":2,\"interrupted\":false" $R'
# Ranks (docs/collectives.md, "Launching"): `run --ranks 2` starts one process per rank (HB_RANK,
# HB_NRANKS, a rendezvous folder), each writing its own file under X.ranks/, and merges them into the
# one file X (meta.ranks, the cpu-ref records of rank 1 dropped as duplicates and counted), which
# report and csv read; `merge-ranks` gives the same file from the rank files; --ranks is range-checked.
check "run-ranks-merge" sh -c 'T=build/test-results; R=$T/ranks.jsonl; rm -rf $R $T/ranks.ranks $T/ranks-report $T/ranks-again.jsonl; out=$(build/hybench run --ranks 2 --backend cpu-ref --op relu --quick --budget 0.01 --out $R 2>$T/ranks.err); rc=$?; [ $rc -eq 0 ] || { echo "exit $rc"; tail -20 $T/ranks.err; exit 1; }; [ "$(printf "%s\n" "$out" | tail -n 1)" = "$R" ] || { echo "stdout does not end with the results file: $out"; exit 1; }; [ -s $T/ranks.ranks/rank0.jsonl ] && [ -s $T/ranks.ranks/rank1.jsonl ] && [ -f $T/ranks.ranks/rank1.log ] || { echo "rank files missing"; ls -la $T/ranks.ranks; exit 1; }; [ $(grep -c "\"type\":\"meta\"" $R) -eq 1 ] && [ $(grep -c "\"type\":\"end\"" $R) -eq 1 ] || { echo "not one meta and one end"; exit 1; }; grep -q "\"ranks\":{\"n\":2,\"files\":\[\"rank0.jsonl\",\"rank1.jsonl\"\],\"merged\":true" $R || { echo "no meta.ranks"; head -c 3000 $R; exit 1; }; grep -q "\"launch\":{\"rank\":1,\"ranks\":2,\"local_rank\":1}" $T/ranks.ranks/rank1.jsonl || { echo "rank 1 file lacks its meta.launch"; exit 1; }; n0=$(grep -c "\"type\":\"case\"" $T/ranks.ranks/rank0.jsonl); n=$(grep -c "\"type\":\"case\"" $R); [ "$n" -eq "$n0" ] && [ "$n" -gt 0 ] || { echo "$n merged cases, rank 0 has $n0"; exit 1; }; grep -q "\"duplicates_dropped\":{\"cases\":$n0," $R || { echo "duplicates not counted"; exit 1; }; build/hybench report -q --svg-only --out $T/ranks-report $R || { echo "report failed"; exit 1; }; grep -q relu $T/ranks-report/report.md || { echo "report lacks the cases"; exit 1; }; c=$(build/hybench csv $R | tail -n +2 | wc -l); [ "$c" -eq "$n" ] || { echo "csv has $c rows"; exit 1; }; build/hybench merge-ranks -o $T/ranks-again.jsonl $T/ranks.ranks/rank1.jsonl $T/ranks.ranks/rank0.jsonl >/dev/null 2>&1 || { echo "merge-ranks failed"; exit 1; }; [ $(grep -c "\"type\":\"case\"" $T/ranks-again.jsonl) -eq "$n" ] || exit 1; build/hybench merge-ranks -o $T/ranks-one.jsonl $T/ranks.ranks/rank1.jsonl 2>&1 | grep -q "rank 0 of the 2-rank launch" || { echo "a missing rank not refused"; exit 1; }; for v in 0 1025 x ""; do o=$(build/hybench run --ranks "$v" --op relu --dry-run 2>&1); [ $? -eq 2 ] && echo "$o" | grep -q -- --ranks || { echo "--ranks \"$v\" accepted: $o"; exit 1; }; done'
# The modes of one case take their samples in turns (one group per op, shape, dtype, route): every ok
# record says how many other modes it was interleaved with; --no-interleave measures each alone.
# the nccl-tests comparison tool (tools/coll_vs_nccl_tests.py) on synthetic outputs of both tools
check "coll-vs-nccl-tests" sh -c 'command -v python3 >/dev/null || { echo "(no python3: skipped)"; exit 0; }; bash tools/test_coll_vs_nccl_tests.sh >build/test-results/coll_vs_nccl.log 2>&1 || { tail -20 build/test-results/coll_vs_nccl.log; exit 1; }'
check "ggml-compare" sh -c 'command -v python3 >/dev/null || { echo "(no python3: skipped)"; exit 0; }; bash tools/test_ggml_compare.sh >build/test-results/ggml_compare.log 2>&1 || { tail -20 build/test-results/ggml_compare.log; exit 1; }'
check "modes-interleaved" sh -c 'R=build/test-results/il.jsonl; R2=build/test-results/nil.jsonl; rm -f $R $R2; build/hybench run --backend cpu-ref,cpu --op add --budget 0.02 --out $R tests/data/verify_all.ini >/dev/null 2>&1 || exit 1; n=$(grep -c "\"status\":\"ok\"" $R); m=$(grep "\"status\":\"ok\"" $R | grep -c "\"interleaved_with\":1"); [ "$n" -gt 0 ] && [ "$n" -eq "$m" ] || { echo "$m of $n ok records interleaved"; exit 1; }; grep -q "\"type\":\"mode_check\"" $R || { echo "no mode_check"; exit 1; }; build/hybench run --no-interleave --backend cpu-ref --op add --budget 0.02 --out $R2 tests/data/verify_all.ini >/dev/null 2>&1 || exit 1; ! grep -q interleaved_with $R2 || { echo "--no-interleave interleaved"; exit 1; }'
# SIGINT: the run stops, writes what it measured with "interrupted": true, and exits 130.
check "interrupt-keeps-results" sh -c 'R=build/test-results/interrupt.jsonl; rm -f $R; build/hybench run --backend cpu-ref,cpu --passes 2 --budget 0.05 --out $R tests/data/verify_all.ini >/dev/null 2>&1 & p=$!; i=0; until grep -q "\"type\":\"case\"" $R 2>/dev/null; do sleep 0.2; i=$((i+1)); [ $i -lt 600 ] || break; done; kill -INT $p; wait $p; rc=$?; [ $rc -eq 130 ] || { echo "exit $rc, wanted 130"; exit 1; }; grep -q "\"interrupted\":true" $R && grep -q "\"type\":\"case\"" $R && ! ls $R.pass* 2>/dev/null'
# A malformed workload is refused with file:line before anything runs (exit 4); an unknown backend or
# op is a usage error with the option named.
check "bad-workload-refused" sh -c 'for f in tests/data/bad_*.ini; do out=$(build/hybench run --out build/test-results/bad.jsonl "$f" 2>&1); rc=$?; [ $rc -eq 4 ] || { echo "$f: exit $rc"; exit 1; }; echo "$out" | grep -q "$f:[0-9]" || echo "$out" | grep -q "$(basename $f)" || { echo "$f: no file:line in: $out"; exit 1; }; done; [ ! -e build/test-results/bad.jsonl ]'
check "bad-options-refused" sh -c 'build/hybench run --backend nosuch >/dev/null 2>&1; [ $? -eq 6 ] || exit 1; build/hybench run --op nosuch 2>&1 | grep -q -- "--op" || exit 1; build/hybench run --op nosuch >/dev/null 2>&1; [ $? -eq 2 ] || exit 1; build/hybench run --backend metal --quick --op add --out build/test-results/metal.jsonl >/dev/null 2>&1; [ $? -eq 6 ] || exit 1; grep -q "\"backend\":\"metal\",\"available\":false" build/test-results/metal.jsonl'
check "plan-refusals" sh -c 'D=tests/data/cpu_small.jsonl; o=$(build/hybench plan $D --model nope 2>&1); [ $? -eq 2 ] && echo "$o" | grep -q "unknown model .nope." || { echo "unknown model: $o"; exit 1; }; o=$(build/hybench plan $D --model resnet50-mb1 2>&1); [ $? -eq 9 ] && echo "$o" | grep -q "relu n=802816 (conv1.relu) on cpu" || { echo "missing ops: $o"; exit 1; }; build/hybench plan $D --model tinyllama-decode --backend nosuch >/dev/null 2>&1; [ $? -eq 6 ] || exit 1; build/hybench plan --model resnet50-block --workload | grep -q "^op = conv2d" || exit 1'
check "plan-decode-cpu" sh -c 'R=build/test-results/plan.jsonl; rm -f $R; build/hybench run --backend cpu --mode f32 --dtype f32 --filter decode --op matmul,attention,rmsnorm,silu,mul,add --budget 0.01 --max-samples 5 --out $R workloads/tinyllama.ini >/dev/null 2>&1 || exit 1; o=$(build/hybench plan $R --model tinyllama-decode); [ $? -eq 0 ] || { echo "$o"; exit 1; }; echo "$o" | grep -q "^| single: cpu |" && echo "$o" | grep -q "^| optimal |" && echo "$o" | grep -q "Route: none" || { echo "$o"; exit 1; }; build/hybench plan $R --model tinyllama-decode --json | python3 -c "import json,sys; d=json.load(sys.stdin); p=d[\"routes\"][0][\"plans\"]; assert len(p)==4 and all(len(x[\"steps\"])==14 for x in p), p" || exit 1'
check "list-shows-every-backend" sh -c 'o=$(build/hybench list); for b in cpu-ref cpu opencl cuda metal coreml; do echo "$o" | grep -q "^$b" || { echo "missing $b"; exit 1; }; done'
# Issue 17, history: the nightly script twice into a fresh store (each run imported, its JSONL kept, a
# trend page per machine fingerprint, the night's report and the history site holding both nights'
# reports); the former index.jsonl is imported into a new store; two machines' nights in one store are
# two trend pages; export gives back a file compare reads as equal.
check "nightly-into-store" sh -c 'T=build/test-results/nightly; rm -rf $T; mkdir -p $T/hist; for i in 1 2; do HB_STORE=$T/h.db HB_HISTORY=$T/hist HB_TREND_OUT=$T/trend HB_REPORTS=$T/reports HB_SITE_OUT=$T/site HB_BASELINES=$T/none tools/nightly.sh --backend cpu --op add --budget 0.02 --min-samples 3 tests/data/verify_all.ini >$T/log$i 2>&1 || { cat $T/log$i; exit 1; }; sleep 1; done; n=$(build/hybench history list --store $T/h.db | tail -n +2 | wc -l); [ "$n" -eq 2 ] || { echo "$n runs in the store"; exit 1; }; [ $(ls $T/hist/*.jsonl | wc -l) -eq 2 ] || exit 1; ls $T/trend/*/changes.md >/dev/null || { echo "no trend page"; exit 1; }; [ $(ls $T/site/runs | wc -l) -eq 2 ] && ls $T/site/m/*/index.html >/dev/null && grep -q "<td class=\"num\">2</td>" $T/site/index.html || { echo "no site or its nights reports"; exit 1; }; id=$(build/hybench history list --store $T/h.db | awk "NR==2{print \$1}"); build/hybench history export $id --store $T/h.db -o $T/exp.jsonl || exit 1; build/hybench compare $T/hist/$id.jsonl $T/exp.jsonl --quiet; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 11 ] || { echo "export differs from the run (compare exit $rc; 11, inconclusive, is what few samples give)"; exit 1; }; printf "{\"file\":\"%s\"}\n" $(ls $T/hist/*.jsonl) > $T/hist/index.jsonl; build/hybench history import $T/hist/index.jsonl --store $T/old.db >/dev/null || exit 1; [ $(build/hybench history list --store $T/old.db | tail -n +2 | wc -l) -eq 2 ] || { echo "index not imported"; exit 1; }'
check "trend-two-machines" sh -c 'T=build/test-results/twomach; rm -rf $T; build/synth_history --store $T/h.db --machines 2 --nights 40 --cases 60 >/dev/null || exit 1; [ $(build/hybench history machines --store $T/h.db | wc -l) -eq 2 ] || exit 1; build/hybench trend --store $T/h.db --out $T/trend --no-plot > $T/out || exit 1; [ $(grep -c "40 nights, 60 cases" $T/out) -eq 2 ] || { cat $T/out; exit 1; }; [ $(ls -d $T/trend/*/ | wc -l) -eq 2 ]; build/hybench history bogus >/dev/null 2>&1; [ $? -eq 2 ] || exit 1; build/hybench history import --store $T/h.db /nonexistent.jsonl >/dev/null 2>&1; [ $? -eq 2 ]'
check "roofline-and-targets-alias" sh -c 'r=$(build/hybench roofline results/h100-reference.jsonl); rc=$?; [ $rc -le 1 ] || exit 1; echo "$r" | grep -q "^| case family |" || exit 1; echo "$r" | grep -q "cuda matmul 8192" || exit 1; t=$(build/hybench targets results/h100-reference.jsonl); [ "$t" = "$r" ] || { echo "targets differs from roofline"; exit 1; }; build/hybench targets --help | grep -q "former name" || exit 1; build/hybench roofline >/dev/null 2>&1; [ $? -eq 2 ]'
# Issue 18. Every run option is range-checked: NaN, inf, empty lists, min above max are refused with
# the option named (exit 2), before anything runs.
check "run-options-range-checked" sh -c 'for a in "--budget nan" "--budget inf" "--budget 0" "--budget -1" "--op ," "--op add," "--ci-target nan" "--ci-target 1" "--passes 0" "--passes 4294967297" "--repetitions 17" "--ref-max-gflop inf" "--seed -1" "--seed 1x" "--case-timeout nan" "--case-timeout 0" "--min-samples 0" "--max-samples 1e3" "--mode ," "--filter="; do o=${a%% *}; out=$(build/hybench run $a --op add --dry-run 2>&1 >/dev/null); rc=$?; [ $rc -eq 2 ] || { echo "$a: exit $rc"; exit 1; }; echo "$out" | grep -q -- "${o%%=*}" || { echo "$a: option not named in: $out"; exit 1; }; done; out=$(build/hybench run --op "" --dry-run 2>&1); [ $? -eq 2 ] && echo "$out" | grep -q -- --op || { echo "--op \"\" accepted"; exit 1; }; out=$(build/hybench run --min-samples 10 --max-samples 2 --op add --dry-run 2>&1); [ $? -eq 2 ] && echo "$out" | grep -q -- "--min-samples 10 is above --max-samples 2" || { echo "min above max accepted: $out"; exit 1; }'
# The results file: an existing one is refused without --force (exit 2, left whole), --force replaces it,
# and while a run holds it (flock) a second run on it refuses (exit 7) and the first ends intact.
check "out-locked-never-truncated" sh -c 'R=build/test-results/lock.jsonl; rm -f $R; echo "{\"type\":\"meta\"}" > $R; build/hybench run --backend cpu --op add --budget 0.02 --out $R tests/data/verify_all.ini >/dev/null 2>&1; rc=$?; [ $rc -eq 2 ] || { echo "existing file: exit $rc, wanted 2"; exit 1; }; [ "$(cat $R)" = "{\"type\":\"meta\"}" ] || { echo "existing file changed"; exit 1; }; build/hybench run --backend cpu-ref,cpu --op add,mul --budget 0.1 --force --out $R tests/data/verify_all.ini >/dev/null 2>&1 & p=$!; i=0; until grep -q "\"type\":\"backend\"" $R 2>/dev/null; do sleep 0.1; i=$((i+1)); [ $i -lt 300 ] || { echo "first run wrote nothing"; exit 1; }; done; out=$(build/hybench run --backend cpu --op add --budget 0.02 --force --out $R tests/data/verify_all.ini 2>&1); rc=$?; [ $rc -eq 7 ] || { echo "second run: exit $rc, wanted 7"; exit 1; }; echo "$out" | grep -q "in use" || { echo "no clear message: $out"; exit 1; }; wait $p; rc=$?; [ $rc -eq 0 ] || { echo "first run: exit $rc"; exit 1; }; [ $(grep -c "\"type\":\"meta\"" $R) -eq 1 ] && [ $(grep -c "\"type\":\"end\"" $R) -eq 1 ] && [ $(grep -c "\"type\":\"case\"" $R) -eq 12 ] || { echo "the first run file is not whole"; exit 1; }'
# SIGKILL in the middle of pass 2 of a 2-pass run: the file holds every pass-1 case (pass 2 s records
# as pass_case, which readers skip), report, csv and compare read it completely, no pass files.
check "sigkill-mid-pass-keeps-cases" sh -c 'R=build/test-results/kill9.jsonl; rm -rf $R $R.tmp build/test-results/kill9-report; build/hybench run --backend cpu-ref,cpu --op add,mul --passes 2 --budget 0.3 --out $R tests/data/verify_all.ini >/dev/null 2>&1 & p=$!; i=0; until grep -q "\"type\":\"pass_case\"" $R 2>/dev/null; do sleep 0.2; i=$((i+1)); [ $i -lt 300 ] || { kill -9 $p; echo "pass 2 never began"; exit 1; }; done; kill -9 $p; wait $p 2>/dev/null; sleep 1; ls $R.pass* 2>/dev/null && { echo "pass files"; exit 1; }; n=$(grep -c "\"type\":\"case\"" $R); [ "$n" -eq 12 ] || { echo "$n pass-1 case records, wanted 12"; exit 1; }; build/hybench report -q --svg-only --out build/test-results/kill9-report $R || { echo "report failed"; exit 1; }; grep -q "add" build/test-results/kill9-report/report.md || { echo "report lacks the cases"; exit 1; }; c=$(build/hybench csv $R | tail -n +2 | wc -l); [ "$c" -eq 12 ] || { echo "csv has $c cases"; exit 1; }; build/hybench compare $R $R >/dev/null 2>&1; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 11 ] || { echo "compare of the file with itself: exit $rc (0 pass or 11 inconclusive wanted)"; exit 1; }'
# A full disk ends the run with exit 7 and a message naming the file and the error; every record before
# is whole (a small tmpfs where root may mount one; /dev/full always).
check "disk-full-exit-7" sh -c 'out=$(build/hybench run --backend cpu --op add --budget 0.02 --out /dev/full tests/data/verify_all.ini 2>&1); rc=$?; [ $rc -eq 7 ] || { echo "/dev/full: exit $rc"; exit 1; }; echo "$out" | grep -q "/dev/full: No space left on device" || { echo "no file and error in: $out"; exit 1; }; D=$(mktemp -d); if mount -t tmpfs -o size=20k tmpfs $D 2>/dev/null; then out=$(build/hybench run --backend cpu-ref,cpu --op add,mul --passes 2 --budget 0.1 --out $D/r.jsonl tests/data/verify_all.ini 2>&1); rc=$?; n=$(build/hybench csv $D/r.jsonl 2>/dev/null | tail -n +2 | wc -l); umount $D; rmdir $D; [ $rc -eq 7 ] || { echo "tmpfs: exit $rc"; exit 1; }; echo "$out" | grep "$D/r.jsonl" | grep -q "No space left on device" || { echo "no file and error in: $out"; exit 1; }; [ "$n" -gt 0 ] || { echo "no readable case kept"; exit 1; }; else rmdir $D; echo "(no tmpfs mount here: /dev/full only)"; fi'
# A backend child killed by a signal is crashed with the signal named (SIGKILL from outside is not an
# out-of-memory kill unless the kernel counted one), and the run exits 8.
check "killed-child-is-crashed" sh -c 'R=build/test-results/killed.jsonl; R2=build/test-results/segv.jsonl; rm -f $R $R2; HB_INJECT_KILL="mul|n=4099" build/hybench verify --backend cpu --op add,mul,relu --out $R tests/data/verify_all.ini >/dev/null 2>&1; rc=$?; [ $rc -eq 8 ] || { echo "exit $rc, wanted 8"; exit 1; }; grep -q "\"status\":\"no_resource\"" $R && { echo "recorded as no_resource"; exit 1; }; grep -q "\"status\":\"crashed\",\"reason\":\"child killed by SIGKILL" $R || grep "\"reason\":\"child killed by SIGKILL" $R | grep -q "\"status\":\"crashed\"" || { echo "no crashed SIGKILL record"; exit 1; }; HB_INJECT_CRASH="mul|n=4099" build/hybench verify --backend cpu --op mul --out $R2 tests/data/verify_all.ini >/dev/null 2>&1; grep -q "child killed by SIGSEGV" $R2 || { echo "no SIGSEGV in the reason"; exit 1; }; rm -f $R2; out=$(HB_INJECT_KILL=ceilings build/hybench verify --backend cpu --op add --out $R2 tests/data/verify_all.ini 2>&1); rc=$?; [ $rc -eq 8 ] || { echo "death outside a case: exit $rc, wanted 8"; exit 1; }; echo "$out" | grep -q "died outside a case (killed by SIGKILL)" || { echo "no message: $out"; exit 1; }'
# A kill the kernel counts as out-of-memory stays no_resource: run in a memory cgroup of 600 MB (v1 or v2,
# where root may make one) a case that needs several GB.
check "oom-kill-is-no-resource" sh -c 'v1=$(grep ":memory:" /proc/self/cgroup | cut -d: -f3); v2=$(grep "^0::" /proc/self/cgroup | cut -d: -f3); if [ -n "$v1" ] && [ -d /sys/fs/cgroup/memory$v1 ]; then CG=/sys/fs/cgroup/memory$v1/hb-oom-$$; LIM=memory.limit_in_bytes; else CG=/sys/fs/cgroup$v2/hb-oom-$$; LIM=memory.max; fi; mkdir $CG 2>/dev/null && echo 600M > $CG/$LIM 2>/dev/null || { rmdir $CG 2>/dev/null; echo "(no memory cgroup can be made here: skipped)"; exit 0; }; R=build/test-results/oom.jsonl; rm -f $R; printf "[big]\nop = add\nshape = n=200Mi\n" > build/test-results/oom.ini; sh -c "echo \$\$ > $CG/cgroup.procs && exec build/hybench run --backend cpu --mode f32 --budget 0.05 --out $R build/test-results/oom.ini" >/dev/null 2>&1; rc=$?; rmdir $CG; [ $rc -eq 0 ] || { echo "exit $rc, wanted 0"; exit 1; }; grep -q "\"status\":\"no_resource\",\"reason\":\"child killed by SIGKILL from the out-of-memory killer" $R || { echo "not no_resource:"; grep -o "\"status\":\"[a-z_]*\",\"reason\":\"[^\"]*\"" $R; exit 1; }'
for s in tests/check_*.sh; do
  [ -x "$s" ] || continue
  check "$(basename "$s" .sh)" "$s"
done
# Every case and plan record the checks above wrote (build/test-results) reads into its struct and is written
# back from it as it was read (tests/test_record_write.c): key order, forms and values.
if [ -x build/tests/test_record_write ]; then
check "records-written-back-alike" sh -c 'find build/test-results -name "*.jsonl" -print0 | xargs -0 -r build/tests/test_record_write >build/test-results/record_write.log 2>&1 || { grep -A3 "differs\|FAILED\|ERROR" build/test-results/record_write.log | head -40; exit 1; }; grep -q "records written back alike" build/test-results/record_write.log'
fi
[ -n "$failed_names" ] && note "failed:$failed_names"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
