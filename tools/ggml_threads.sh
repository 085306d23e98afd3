#!/usr/bin/env bash
# Thread scaling of the CPU's quantized matmul: hybench's cpu backend against ggml's CPU backend at
# 1, 2, 4, ... threads on the same machine, in the same call, case by case (docs/ggml.md, "Thread
# scaling"). Both sides run confined to the same T physical cores (taskset, one CPU per core). Where hybench trails ggml on a many-core host but not at one or two threads, this says at
# which thread count the gap opens and whether the OpenMP team's wake-up is the cause (the same cases
# again with OMP_WAIT_POLICY=active: the team spins between calls, as ggml's thread pool does).
#
# Usage:
#   tools/ggml_threads.sh SRC_DIR OUT_DIR
#     SRC_DIR  ggml's source tree, as for tools/ggml_bench.sh (which builds it: CPU only, GGML_NATIVE).
#     OUT_DIR  gets threads.csv, one row per (threads, case):
#                threads,type,n,k,m,ggml_us,hybench_us,hybench_active_us,ratio,ratio_active
#              (ggml_us: median of single synchronous ggml_backend_graph_compute calls of one MUL_MAT
#              node, ggml_mm --bench --time-ms 300; hybench_us: phases.compute.median of the matmul
#              record, mode f32 (weights in host memory, as ggml's); ratio = hybench / ggml, above 1:
#              hybench slower), the hybench records (hb_T<threads>[_active].jsonl), build.log, BUILD_INFO.
# Environment: HB_EXE (the hybench command; default build/hybench, on the GPU machine
#   ".gpu-final/run.sh"); THREADS_LIST ("1 2 4 8 16", capped at nproc); CASES ("type:n:k:m ...", m =
#   tokens, default: 4096x14336 q4_K and q8_0 at m = 1, q4_K at m = 8, TinyLlama's gate/up 5632x2048
#   and down 2048x5632 q4_K at m = 1); GGML_WORK (/tmp/ggml-bench).
# Exit: 0 rows written; 2 usage; 3 build failed (tools/ggml_bench.sh's message); 5 no row came out.
set -u
[ $# -eq 2 ] || { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
SRC=$1
OUT=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HB=${HB_EXE:-build/hybench}
NPROC=$(nproc)
CASES=${CASES:-"q4_K:4096:14336:1 q8_0:4096:14336:1 q4_K:4096:14336:8 q4_K:5632:2048:1 q4_K:2048:5632:1"}
mkdir -p "$OUT" || exit 2
say() { echo "ggml_threads: $*"; }

GGML_CUDA=0 GGML_BUILD_ONLY=1 bash "$here/ggml_bench.sh" "$SRC" "$OUT" > "$OUT/ggml_build.txt" 2>&1 ||
  { tail -20 "$OUT/ggml_build.txt"; exit 3; }
MM=${GGML_WORK:-/tmp/ggml-bench}/build-cpu/ggml_mm
[ -x "$MM" ] || { say "ERROR: no $MM after the build"; exit 3; }

# hybench's workload: the same cases (its dtype names are lower case), mode f32, cpu only
ini=$OUT/threads.ini
{
  echo "# written by tools/ggml_threads.sh"
  for c in $CASES; do
    IFS=: read -r t n k m <<< "$c"
    d=$(tr 'A-Z' 'a-z' <<< "$t")
    printf '[mm_%s_n%s_k%s_m%s]\nop = matmul\nshape = m=%s n=%s k=%s\ndtypes = %s\nmodes = f32\n\n' "$d" "$n" "$k" "$m" "$m" "$n" "$k" "$d"
  done
} > "$ini"

# hybench's compute median (us) of the case type:n:k:m in a results file
hb_us() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
t, n, k, m = sys.argv[2].split(":")
for line in open(sys.argv[1]):
    r = json.loads(line)
    s = r.get("shape") or {}
    if r.get("type") == "case" and r.get("op") == "matmul" and r.get("status") == "ok" and r.get("dtype") == t.lower() \
            and [s.get("m"), s.get("n"), s.get("k")] == [int(m), int(n), int(k)]:
        print("%.2f" % (r["phases"]["compute"]["median"] * 1e6)); break
EOF
}

csv=$OUT/threads.csv
echo "threads,type,n,k,m,ggml_us,hybench_us,hybench_active_us,ratio,ratio_active" > "$csv"
# One CPU of each physical core, in core order: T threads run on the first T of them. hybench's cpu
# backend runs one thread per core of its CPU set (kernels/cpu/cpu_sys.c hb_cpu_bind_threads; it does
# not read OMP_NUM_THREADS), so both sides are confined with taskset to the same T CPUs.
CORE_CPUS=($(lscpu -p=CPU,CORE 2>/dev/null | grep -v '^#' | sort -t, -k2,2n -k1,1n | awk -F, '!seen[$2]++ {print $1}'))
[ ${#CORE_CPUS[@]} -gt 0 ] || CORE_CPUS=($(seq 0 $((NPROC - 1))))
say "${#CORE_CPUS[@]} physical cores, $NPROC CPUs; $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
for T in ${THREADS_LIST:-1 2 4 8 16}; do
  [ "$T" -le "${#CORE_CPUS[@]}" ] || { say "skipping $T threads: this machine has ${#CORE_CPUS[@]} cores"; continue; }
  set_=$(IFS=,; echo "${CORE_CPUS[*]:0:$T}")
  taskset -c "$set_" $HB run --backend cpu --out "$OUT/hb_T$T.jsonl" --force "$ini" > "$OUT/hb_T$T.log" 2>&1 ||
    say "hybench at $T threads exited $? (log: $OUT/hb_T$T.log)"
  OMP_WAIT_POLICY=active taskset -c "$set_" $HB run --backend cpu --out "$OUT/hb_T${T}_active.jsonl" --force "$ini" \
    > "$OUT/hb_T${T}_active.log" 2>&1 || say "hybench (active) at $T threads exited $?"
  for c in $CASES; do
    IFS=: read -r t n k m <<< "$c"
    g=$(taskset -c "$set_" "$MM" --bench --type "$t" --n "$n" --k "$k" --m "$m" --backend CPU --threads "$T" --time-ms 300 |
        sed -n 's/^ggml_mm: time.*median_us=\([0-9.]*\).*/\1/p')
    h=$(hb_us "$OUT/hb_T$T.jsonl" "$c" 2>/dev/null)
    a=$(hb_us "$OUT/hb_T${T}_active.jsonl" "$c" 2>/dev/null)
    r=$(python3 -c "import sys; g,h,a=sys.argv[1:]; f=lambda x,y: '%.3f'%(float(x)/float(y)) if x and y else ''; print(f(h,g)+','+f(a,g))" "$g" "$h" "$a")
    echo "$T,$t,$n,$k,$m,$g,$h,$a,$r" | tee -a "$csv"
  done
done
[ "$(wc -l < "$csv")" -gt 1 ] || { say "ERROR: no row"; exit 5; }
say "wrote $csv"
