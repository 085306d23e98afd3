#!/usr/bin/env bash
# check_ggml_agree.sh - the seeds' output check against ggml (docs/ggml.md, "Output agreement"; run by
# tests/run_tests.sh): for every quantized format, ggml_mm --make writes a GGUF weight/input pair (n=512
# k=2048 m=8), build/gguf_matmul runs hybench's cpu, cpu-ref, opencl and cuda on it (opencl and cuda
# where the machine has them: an unavailable one is listed with its reason, not failed), ggml_mm --run
# runs ggml's CPU product, and ggml_mm --compare holds each of hybench's outputs to ggml's MUL_MAT
# tolerance (NMSE <= 5e-4). Skipped (77) without a ggml_mm build: $HB_GGML_MM, or tools/ggml_bench.sh's
# default /tmp/ggml-bench/build-cpu/ggml_mm (ggml's source never ships with hybench). HB_GGUF_MATMUL
# names a gguf_matmul already built (the GPU bundle's), else `make build/gguf_matmul` builds it.
set -u
cd "$(dirname "$0")/.."
G=${HB_GGML_MM:-/tmp/ggml-bench/build-cpu/ggml_mm}
[ -x "$G" ] || { echo "SKIP: no ggml_mm (tools/ggml_bench.sh builds it; HB_GGML_MM names it)"; exit 77; }
T=build/test-results/ggml-agree
rm -rf "$T"; mkdir -p "$T"
M=${HB_GGUF_MATMUL:-build/gguf_matmul}
[ -n "${HB_GGUF_MATMUL:-}" ] || make -s build/gguf_matmul >/dev/null || { echo "check_ggml_agree: build/gguf_matmul did not build"; exit 1; }
fail() { echo "check_ggml_agree: $*"; exit 1; }
for t in q8_0 q4_K q5_K q6_K; do
  "$G" --make "$T/$t.gguf" --type "$t" --n 512 --k 2048 --m 8 --seed 7 >"$T/$t.make.log" 2>&1 || fail "ggml_mm --make $t"
  "$G" --run "$T/$t.gguf" --backend CPU --out "$T/$t.ggml.gguf" >"$T/$t.run.log" 2>&1 || fail "ggml_mm --run $t"
  for b in cpu cpu-ref opencl cuda; do
    "$M" "$T/$t.gguf" "$T/$t.$b.gguf" "$b" >"$T/$t.$b.log" 2>&1
    rc=$?
    if [ $rc = 8 ] && { [ $b = opencl ] || [ $b = cuda ]; } && grep -q "^gguf_matmul: $b: " "$T/$t.$b.log"; then
      echo "$t $b: not on this machine ($(head -1 "$T/$t.$b.log" | cut -c1-140))"; continue
    fi
    [ $rc = 0 ] || { cat "$T/$t.$b.log"; fail "gguf_matmul $t on $b"; }
    "$G" --compare "$T/$t.$b.gguf" "$T/$t.ggml.gguf" >"$T/$t.$b.cmp" 2>&1 || { cat "$T/$t.$b.cmp"; fail "$t on $b disagrees with ggml"; }
    grep -q "verdict=ok" "$T/$t.$b.cmp" || { cat "$T/$t.$b.cmp"; fail "$t on $b: no ok verdict"; }
    echo "$t $b: $(grep -o 'nmse=[^ ]*' "$T/$t.$b.cmp")"
  done
done
echo "check_ggml_agree: ok"
