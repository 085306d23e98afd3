#!/usr/bin/env bash
# ggml (the library under llama.cpp) as the yardstick for hybench's quantized matmul (issue 44 item 4,
# docs/ggml.md), built from its public source OUTSIDE this repository, as tools/nccl_tests.sh does for
# nccl-tests.
#
# Usage:
#   tools/ggml_bench.sh [SRC_DIR] OUT_DIR
#     SRC_DIR  ggml's source tree (src, include, cmake, CMakeLists.txt, tests; or $GGML_SRC). Get one with
#              `git clone https://github.com/ggml-org/ggml` (or a GitHub tarball of it); in this workplace
#              `git --git-dir=<fetched ggml> archive HEAD src include cmake CMakeLists.txt tests ggml.pc.in
#              LICENSE | tar x -C .ggml/src` (.ggml/ is git-ignored: carry ".ggml" to the GPU machine). A
#              file COMMIT beside them, if any, names the commit. It may be read-only: it is copied first.
#     OUT_DIR  gets ggml_perf.csv (the timings), agree.txt (the output checks), BUILD_INFO, perf_<backend>.sql
#              (test-backend-ops' raw records), build.log and ggml_bench.log.
#
# Steps (no network needed):
#   1. build with cmake (PATH, else the pip `cmake` module's binary, else /opt/torch/.venv/bin/cmake;
#      ninja when found): target test-backend-ops, Release, GGML_NATIVE (built where it runs); with CUDA
#      (-DGGML_CUDA=ON -DGGML_CUDA_FA=OFF -DCMAKE_CUDA_ARCHITECTURES=$GGML_CUDA_ARCH) when nvcc is found
#      and nvidia-smi lists a GPU (GGML_CUDA=0/1 forces it); then tools/ggml_mm.c with cc against it.
#   2. agreement: for each type, ggml_mm --bench --check (f64 product of ggml's dequantized weights)
#      at n=512 k=2048 m=1, 8, 64 on each backend; with two backends also CPU against CUDA0 (--compare).
#   3. timings: `test-backend-ops perf -b BACKEND -o MUL_MAT --test-file F`, F holding one MUL_MAT per
#      (type, shape) written by ggml_mm --perf-line; its time per call (us) per case into ggml_perf.csv.
#   4. (GGML_SINGLE=1) ggml_mm --bench --time-ms: the median of single synchronous calls, same cases.
#
# Environment: GGML_SRC; GGML_WORK (/tmp/ggml-bench: copy and builds); GGML_CUDA (auto|0|1);
#   GGML_CUDA_ARCH (90); GGML_TYPES ("q4_K q8_0 q6_K q5_K f16 f32"); GGML_SHAPES ("n:k:m ...", m = tokens;
#   default below); GGML_BACKENDS (default: CUDA0 CPU when built with CUDA, else CPU); GGML_SINGLE (0);
#   GGML_THREADS (ggml_mm's CPU threads; default nproc; test-backend-ops always uses all);
#   GGML_CASES ("type:n:k:m ...": exactly these timing cases instead of GGML_TYPES x GGML_SHAPES);
#   GGML_AGREE (1; 0 skips step 2); GGML_PERF_TIMEOUT (300 s per backend); GGML_BUDGET_S (0 = none: no step starts after this many
#   seconds from the start); GGML_BUILD_ONLY=1.
# Exit: 0 timings written; 1 an agreement check failed (timings still written); 2 usage; 3 no cmake or
#   build failed; 5 no timing came out.
set -euo pipefail

usage() { sed -n '2,35p' "$0" >&2; exit 2; }
case $# in
  1) SRC=${GGML_SRC:-}; OUT=$1 ;;
  2) SRC=$1; OUT=$2 ;;
  *) usage ;;
esac
[ -n "$SRC" ] || { echo "ggml_bench: no source folder: give SRC_DIR or set GGML_SRC (docs/ggml.md)" >&2; exit 2; }
[ -f "$SRC/CMakeLists.txt" ] && [ -f "$SRC/tests/test-backend-ops.cpp" ] || {
  echo "ggml_bench: $SRC is not a ggml source tree (CMakeLists.txt, tests/test-backend-ops.cpp)" >&2; exit 2; }
SRC=$(cd "$SRC" && pwd)
TOOLS=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
WORK=${GGML_WORK:-/tmp/ggml-bench}
mkdir -p "$WORK"
exec > >(tee -a "$OUT/ggml_bench.log") 2>&1
say() { echo "ggml_bench: $*"; }
T0=$SECONDS
BUDGET=${GGML_BUDGET_S:-0}
over_budget() { [ "$BUDGET" -gt 0 ] && [ $((SECONDS - T0)) -ge "$BUDGET" ]; }
NPROC=$(nproc 2>/dev/null || echo 2)
THREADS=${GGML_THREADS:-$NPROC}
TYPES=${GGML_TYPES:-"q4_K q8_0 q6_K q5_K f16 f32"}
# n:k:m with m = tokens. 4096x14336: test-backend-ops' own perf shape (issue 44's table); the rest are
# TinyLlama-1.1B's projections (q/o 2048x2048, k/v 256x2048, gate/up 5632x2048, down 2048x5632).
SHAPES=${GGML_SHAPES:-"4096:14336:1 4096:14336:8 4096:14336:512 2048:2048:1 2048:2048:512 256:2048:1 256:2048:512 5632:2048:1 5632:2048:512 2048:5632:1 2048:5632:512"}

# ---------------------------------------------------------------------------------------------------
# 1. build
CMAKE=""
for c in "$(command -v cmake 2>/dev/null || true)" \
         "$(python3 -c 'import cmake, os; print(os.path.join(cmake.CMAKE_BIN_DIR, "cmake"))' 2>/dev/null || true)" \
         /opt/torch/.venv/bin/cmake; do
  [ -n "$c" ] && [ -x "$c" ] && { CMAKE=$c; break; }
done
[ -n "$CMAKE" ] || { say "ERROR: no cmake (apt-get install cmake, or python3 -m pip install cmake)"; exit 3; }
GEN=()
NINJA=$(command -v ninja 2>/dev/null || true)
[ -z "$NINJA" ] && [ -x /opt/torch/.venv/bin/ninja ] && NINJA=/opt/torch/.venv/bin/ninja
[ -n "$NINJA" ] && GEN=(-G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA")

NVCC=""
for c in ${CUDA_HOME:+"$CUDA_HOME/bin/nvcc"} "$(command -v nvcc 2>/dev/null || true)" /usr/local/cuda/bin/nvcc; do
  [ -n "$c" ] && [ -x "$c" ] && { NVCC=$c; break; }
done
USE_CUDA=${GGML_CUDA:-auto}
if [ "$USE_CUDA" = auto ]; then
  if [ -n "$NVCC" ] && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then USE_CUDA=1; else USE_CUDA=0; fi
fi
if [ "$USE_CUDA" = 1 ] && [ -z "$NVCC" ]; then say "ERROR: GGML_CUDA=1 but no nvcc (set CUDA_HOME)"; exit 3; fi
ARCH=${GGML_CUDA_ARCH:-90}

# The copy keeps mtimes, so a warm machine's earlier build is reused; outside any git tree, so ggml's
# CMake records no foreign commit.
mkdir -p "$WORK/src"
cp -a "$SRC"/. "$WORK/src"/
chmod -R u+w "$WORK/src"
COMMIT=$(cat "$SRC/COMMIT" 2>/dev/null || git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)
VERSION=$(sed -n 's/^set(GGML_VERSION_MAJOR \([0-9]*\)).*/\1/p; s/^set(GGML_VERSION_MINOR \([0-9]*\)).*/.\1/p; s/^set(GGML_VERSION_PATCH \([0-9]*\)).*/.\1/p' "$SRC/CMakeLists.txt" | tr -d '\n')
if [ "$USE_CUDA" = 1 ]; then BUILD=$WORK/build-cuda; else BUILD=$WORK/build-cpu; fi
CFG=(-DCMAKE_BUILD_TYPE=Release -DGGML_BUILD_TESTS=ON -DGGML_BUILD_EXAMPLES=OFF -DGGML_NATIVE=ON)
[ "$USE_CUDA" = 1 ] && CFG+=(-DGGML_CUDA=ON -DGGML_CUDA_FA=OFF -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DCMAKE_CUDA_COMPILER="$NVCC")
say "ggml $VERSION commit $COMMIT from $SRC; cmake $("$CMAKE" --version | head -1 | awk '{print $3}') ($CMAKE)${NINJA:+, ninja}; CUDA=$USE_CUDA${NVCC:+ (nvcc $("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))}; $NPROC cores"
tb=$SECONDS
if ! { "$CMAKE" -S "$WORK/src" -B "$BUILD" "${GEN[@]}" "${CFG[@]}" &&
       "$CMAKE" --build "$BUILD" -j "$NPROC" --target test-backend-ops; } > "$OUT/build.log" 2>&1; then
  say "ERROR: build failed; the end of $OUT/build.log:"; tail -30 "$OUT/build.log"; exit 3
fi
LIBDIR=$(dirname "$(find "$BUILD" -name 'libggml.so' -o -name 'libggml.a' | head -1)")
TBO=$(find "$BUILD" -type f -name test-backend-ops | head -1)
MM=$BUILD/ggml_mm
LIBS=(-lggml -lggml-base -lggml-cpu)
cc -O2 -std=c11 "$TOOLS/ggml_mm.c" -I "$WORK/src/include" -L "$LIBDIR" -Wl,-rpath,"$LIBDIR" "${LIBS[@]}" -lm -o "$MM" \
  >> "$OUT/build.log" 2>&1 || { say "ERROR: ggml_mm did not build:"; tail -20 "$OUT/build.log"; exit 3; }
say "built in $((SECONDS - tb)) s: $TBO, $MM"
{
  echo "ggml_version=$VERSION"
  echo "ggml_commit=$COMMIT"
  if [ "$USE_CUDA" = 1 ]; then echo "cuda=1 arch=$ARCH nvcc=$("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"; else echo "cuda=0"; fi
  echo "cmake_flags=${CFG[*]}"
  echo "host=$(hostname 2>/dev/null || echo ?) cores=$NPROC cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  "$MM" --list | sed 's/^ggml_mm: //'
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu=/' || true
} > "$OUT/BUILD_INFO"
cat "$OUT/BUILD_INFO"
[ "${GGML_BUILD_ONLY:-0}" = 1 ] && exit 0

if [ -n "${GGML_BACKENDS:-}" ]; then BACKENDS=$GGML_BACKENDS
elif [ "$USE_CUDA" = 1 ]; then BACKENDS="CUDA0 CPU"
else BACKENDS="CPU"; fi
desc_of() { sed -n "s/^device name=$1 description=\"\(.*\)\"$/\1/p" "$OUT/BUILD_INFO" | head -1; }

# ---------------------------------------------------------------------------------------------------
# 2. agreement with the f64 product of ggml's own dequantization (and CPU against CUDA0)
agree_rc=0
: > "$OUT/agree.txt"
[ "${GGML_AGREE:-1}" = 1 ] && for t in $TYPES; do
  for m in 1 8 64; do
    prev=""
    for b in $BACKENDS; do
      y=$WORK/y_${t}_${m}_$b.gguf
      if "$MM" --bench --type "$t" --n 512 --k 2048 --m "$m" --seed 44 --backend "$b" --check --out "$y" \
           --threads "$THREADS" | grep '^ggml_mm: check' | sed 's/^ggml_mm: //' >> "$OUT/agree.txt"; then :; else agree_rc=1; fi
      if [ -n "$prev" ]; then
        "$MM" --compare "$y" "$prev" | sed 's/^ggml_mm: //' >> "$OUT/agree.txt" || agree_rc=1
      fi
      prev=$y
    done
  done
done
grep -q 'verdict=FAIL' "$OUT/agree.txt" && agree_rc=1
say "agreement: $(grep -c 'verdict=ok' "$OUT/agree.txt") ok, $(grep -c 'verdict=FAIL' "$OUT/agree.txt") FAIL (agree.txt)"
grep 'FAIL' "$OUT/agree.txt" || true

# ---------------------------------------------------------------------------------------------------
# 3. test-backend-ops perf on the shapes above
CASES=$WORK/cases.txt
LIST=${GGML_CASES:-}
if [ -z "$LIST" ]; then
  for t in $TYPES; do for s in $SHAPES; do LIST="$LIST $t:$s"; done; done
fi
: > "$CASES"
for c in $LIST; do
  IFS=: read -r t n k m <<< "$c"
  "$MM" --perf-line "hb_${t}_n${n}_k${k}_m${m}" --type "$t" --n "$n" --k "$k" --m "$m" >> "$CASES"
done
CSV=$OUT/ggml_perf.csv
echo "source,backend,device,type,n,k,m,us_per_call,min_us,runs,threads,ggml_commit" > "$CSV"
PT=${GGML_PERF_TIMEOUT:-300}
for b in $BACKENDS; do
  if over_budget; then say "skipped test-backend-ops on $b: budget of $BUDGET s spent"; continue; fi
  raw=$OUT/perf_$b.sql
  say "run: timeout $PT test-backend-ops perf -b $b -o MUL_MAT --test-file $CASES --output sql > $raw"
  tp=$SECONDS
  rc=0; timeout -k 10 "$PT" stdbuf -oL "$TBO" perf -b "$b" -o MUL_MAT --test-file "$CASES" --output sql > "$raw" 2>&1 || rc=$?
  th=$NPROC; case $b in CPU*) ;; *) th="";; esac
  python3 "$TOOLS/ggml_compare.py" sql "$raw" "$b" "$(desc_of "$b")" "$th" "$COMMIT" >> "$CSV"
  say "  rc=$rc $((SECONDS - tp)) s, $(grep -c "^test-backend-ops,$b," "$CSV" || true) cases"
done

# ---------------------------------------------------------------------------------------------------
# 4. single synchronous calls (optional)
if [ "${GGML_SINGLE:-0}" = 1 ]; then
  for b in $BACKENDS; do
    for c in $LIST; do
        over_budget && { say "single calls stopped: budget of $BUDGET s spent"; break 2; }
        IFS=: read -r t n k m <<< "$c"
        line=$("$MM" --bench --type "$t" --n "$n" --k "$k" --m "$m" --backend "$b" --threads "$THREADS" --time-ms 300 | grep '^ggml_mm: time' || true)
        med=$(sed -n 's/.*median_us=\([0-9.]*\).*/\1/p' <<< "$line"); runs=$(sed -n 's/.*samples=\([0-9]*\).*/\1/p' <<< "$line")
        mn=$(sed -n 's/.*min_us=\([0-9.]*\).*/\1/p' <<< "$line")
        th=$THREADS; case $b in CPU*) ;; *) th="";; esac
        [ -n "$med" ] && echo "ggml_mm-single,$b,$(desc_of "$b" | tr ',' ';'),$t,$n,$k,$m,$med,$mn,$runs,$th,$COMMIT" >> "$CSV"
    done
  done
fi

rows=$(($(wc -l < "$CSV") - 1))
say "done: $rows timings in $CSV, $((SECONDS - T0)) s in all"
# The table: us per call per case and backend
python3 - "$CSV" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
keys = sorted({(r["source"], r["backend"]) for r in rows})
cases = []
for r in rows:
    c = (r["type"], int(r["n"]), int(r["k"]), int(r["m"]))
    if c not in cases:
        cases.append(c)
val = {(r["source"], r["backend"], r["type"], int(r["n"]), int(r["k"]), int(r["m"])): r["us_per_call"] for r in rows}
print("type n k m | " + " | ".join("%s %s" % (b, s.split("-")[0]) for s, b in keys))
for c in cases:
    print("%s %d %d %d | " % c + " | ".join(val.get((s, b) + c, "-") for s, b in keys))
EOF
[ "$rows" -gt 0 ] || exit 5
exit $agree_rc
