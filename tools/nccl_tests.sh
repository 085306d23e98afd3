#!/usr/bin/env bash
# nccl-tests (NVIDIA's collective yardstick) on the lent GPU machine, for the comparison with hybench's
# `collective` cases (tools/coll_vs_nccl_tests.py, docs/collectives.md).
#
# Usage (ON the GPU machine):
#   tools/nccl_tests.sh SRC_DIR OUT_DIR [NGPUS]
#     SRC_DIR  nccl-tests source tree (here: .ncclt/src, exported from github:NVIDIA/nccl-tests; ignored,
#              name ".ncclt" in the run call's carry). It may be read-only: it is copied to /tmp first.
#     OUT_DIR  gets <op>_perf_<dtype>.txt (each run's stdout+stderr), env.sh, summary.txt, topo.txt,
#              build.log (when it builds) and nccl_tests.log (this script's own output).
#     NGPUS    ranks (GPUs of this one process, nccl-tests -g); default: the GPUs nvidia-smi -L lists.
#   Then: . OUT_DIR/env.sh   gives hybench's plugin the same libnccl (HB_NCCL_LIB, LD_LIBRARY_PATH).
#
#   Here (no GPU needed): NCCLT_BUILD_ONLY=1 tools/nccl_tests.sh .ncclt/src .ncclt/bin
#     builds, and writes .ncclt/bin/nccl-tests-bin.tar.xz (4 stripped binaries + BUILD_INFO, ~0.6 MB);
#     on the GPU machine the script then uses it (SRC_DIR/../bin/) instead of building (~1-2 min saved).
#
# Environment: NCCL_HOME, CUDA_HOME (where to look first); NCCLT_BIN (a folder or .tar.xz of prebuilt
#   *_perf binaries); NCCLT_FORCE_BUILD=1; NCCLT_RUNS ("op:dtype ..." instead of the default list);
#   NCCLT_MINBYTES / NCCLT_MAXBYTES (instead of the sizes below); NCCLT_ITERS (50); NCCLT_WARMUP (10);
#   NCCLT_RUN_TIMEOUT (90 s a run);
#   NCCLT_BUDGET_S (240: no run starts after this many seconds of runs); NCCLT_WORK (/tmp/ncclt-build).
#
# No MPI: nccl-tests built with MPI=0 drives all NGPUS GPUs from one process (-g NGPUS: one thread, one
# communicator rank per GPU, ncclCommInitRank(Config) for each inside ncclGroupStart/End). Its time is the host
# wall time of ITERS back-to-back launches divided by ITERS (-a 1, the default, averages it over ranks;
# with one process there is one value); hybench's is the median of device-event-timed single calls.
#
# Runs (each under timeout; multicast stays off: NCCL_NVLS_ENABLE=0, never -R 2 / -D):
#   <op>_perf -b MIN -e MAX -f 2 -g NGPUS -d DTYPE -w 10 -n 50 -c 1
#   for all_reduce, all_gather, reduce_scatter, broadcast in float first, then half and bfloat16
#   (all_reduce first); out of place and in place, each size checked once (-c 1: #wrong).
#   MIN = 8 B for float, 4 B for half/bfloat16 (two elements: hybench's smallest n=2 in every dtype).
#   MAX = 1G for all_reduce and broadcast; NGPUS x 1G for all_gather and reduce_scatter, whose nccl-tests
#   size is the total (count x element size x ranks, as hybench's size_bytes): 1 GiB per rank, the
#   largest case of workloads/collectives-ranks.ini (n=256Mi f32). So with 2 GPUs:
#     all_reduce_perf -b 8 -e 1G ... -d float;  all_gather_perf -b 8 -e 2147483648 ... -d float;
#     all_reduce_perf -b 4 -e 1G ... -d half   (28-29 sizes a run)
# Why -w 10 -n 50: at 8 B a call takes ~10 us, so 20 calls (the default) are a 0.2 ms window in which
#   one 10 us hiccup moves the mean by 5%; 50 calls cut that to 2%. At 1 GiB (~3 ms a call on 2 H100s) 50
#   calls x 2 placements cost 0.3 s (0.6 s for the 2 GiB all_gather), and all sizes together about
#   twice the largest, so each run is
#   dominated by process start, CUDA context and NCCL init (~3-6 s). 10 warm-up calls per size (done
#   once for all sizes before timing) cover NCCL's lazy connection set-up.
# Expected time on 2 H100s: 12 runs x ~4-8 s = ~1-1.5 min with the prebuilt binaries; building there
#   first adds ~1-1.5 min (16 cores; verifiable.cu is the long pole). NCCLT_BUDGET_S caps the runs.
# Exit: 0 when at least one run produced data; 3 NCCL or nvcc not found / build failed; 4 no GPU; 5 no
#   run succeeded; 2 usage.
set -euo pipefail

usage() { sed -n '2,22p' "$0" >&2; exit 2; }
if [ $# -lt 2 ] || [ $# -gt 3 ]; then usage; fi
SRC_DIR=$1
OUT_DIR=$2
NGPUS=${3:-}
[ -d "$SRC_DIR" ] || { echo "nccl_tests: no source folder $SRC_DIR" >&2; exit 2; }
SRC_DIR=$(cd "$SRC_DIR" && pwd)
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
WORK=${NCCLT_WORK:-/tmp/ncclt-build}
mkdir -p "$WORK"
BUILD_ONLY=${NCCLT_BUILD_ONLY:-0}

# NVLink multicast must stay off on the lent machines (KINDS.md): keep it exported, never unset it.
export NCCL_NVLS_ENABLE=0

if [ "$BUILD_ONLY" != 1 ]; then
  exec > >(tee -a "$OUT_DIR/nccl_tests.log") 2>&1
fi
say() { echo "nccl_tests: $*"; }
T_START=$SECONDS

# ---------------------------------------------------------------------------------------------------
# NCCL: a header (nccl.h) and a library (libnccl.so.2 or libnccl.so) of one installation.
hdr_version() {  # nccl.h -> "2.28.9 22809"
  awk '/#define NCCL_MAJOR/{a=$3} /#define NCCL_MINOR/{b=$3} /#define NCCL_PATCH/{c=$3}
       END{ if (a != "") printf "%s.%s.%s %d\n", a, b, c, (a <= 2 && b <= 8) ? a*1000+b*100+c : a*10000+b*100+c }' "$1" 2>/dev/null || true
}
lib_in() {  # folder -> its libnccl.so.2 (or libnccl.so, or libnccl.so.2.x), first found
  local d=$1 f
  for f in "$d/libnccl.so.2" "$d/libnccl.so" "$d"/libnccl.so.2.*; do
    [ -e "$f" ] && { echo "$f"; return 0; }
  done
  return 1
}
NCCL_INC=""; NCCL_LIB=""; NCCL_FROM=""
try_nccl() {  # include-dir lib-dir... ; sets NCCL_INC/NCCL_LIB when both are there
  local inc=$1 d l; shift
  [ -n "$NCCL_LIB" ] && [ -n "$NCCL_INC" ] && return 0
  [ -f "$inc/nccl.h" ] || return 1
  for d in "$@"; do
    if l=$(lib_in "$d"); then NCCL_INC=$inc; NCCL_LIB=$l; return 0; fi
  done
  return 1
}
LIB_ONLY=""   # a library found with no header beside it (enough for prebuilt binaries)
note_lib() { local l; if [ -z "$LIB_ONLY" ] && l=$(lib_in "$1"); then LIB_ONLY=$l; fi; }

find_nccl() {
  local h d py p
  if [ -n "${NCCL_HOME:-}" ]; then
    try_nccl "$NCCL_HOME/include" "$NCCL_HOME/lib" "$NCCL_HOME/lib64" "$NCCL_HOME/lib/x86_64-linux-gnu" && { NCCL_FROM="NCCL_HOME"; return 0; }
    note_lib "$NCCL_HOME/lib"; note_lib "$NCCL_HOME/lib64"
  fi
  if [ -n "${HB_NCCL_LIB:-}" ] && [ -e "$HB_NCCL_LIB" ]; then  # what hybench was told to load
    d=$(dirname "$(readlink -f "$HB_NCCL_LIB")")
    try_nccl "$d/../include" "$d" && { NCCL_FROM="HB_NCCL_LIB"; return 0; }
  fi
  try_nccl /usr/include /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib && { NCCL_FROM="system package"; return 0; }
  note_lib /usr/lib/x86_64-linux-gnu
  for h in ${CUDA_HOME:+"$CUDA_HOME"} /usr/local/cuda /usr/local/cuda-*; do
    [ -d "$h" ] || continue
    try_nccl "$h/include" "$h/lib" "$h/lib64" "$h/targets/x86_64-linux/lib" && { NCCL_FROM="CUDA toolkit $h"; return 0; }
    note_lib "$h/lib"; note_lib "$h/lib64"
  done
  try_nccl /usr/local/include /usr/local/lib /usr/local/lib64 && { NCCL_FROM="/usr/local"; return 0; }
  # the Python wheel (nvidia-nccl-cu13: nvidia/nccl/{include,lib}); nvidia.nccl may be a namespace package
  for py in python3 /opt/torch/.venv/bin/python3 /usr/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    p=$("$py" -c 'import nvidia.nccl as m, os; print(os.path.dirname(m.__file__) if getattr(m, "__file__", None) else list(m.__path__)[0])' 2>/dev/null) || continue
    [ -n "$p" ] || continue
    try_nccl "$p/include" "$p/lib" "$p/lib64" && { NCCL_FROM="Python wheel ($py)"; return 0; }
    note_lib "$p/lib"
  done
  # anywhere else
  while IFS= read -r l; do
    d=$(dirname "$l")
    try_nccl "$d/../include" "$d" && { NCCL_FROM="found $d"; return 0; }
    try_nccl "$d/../../include" "$d" && { NCCL_FROM="found $d"; return 0; }
    note_lib "$d"
  done < <(find / \( -path /proc -o -path /sys -o -path /dev \) -prune -o -name 'libnccl.so*' -print 2>/dev/null | head -20 || true)
  return 1
}

if find_nccl; then
  NCCL_INC=$(cd "$NCCL_INC" && pwd)
  say "NCCL from $NCCL_FROM: header $NCCL_INC/nccl.h, library $NCCL_LIB"
elif [ -n "$LIB_ONLY" ]; then
  NCCL_LIB=$LIB_ONLY
  say "NCCL library $NCCL_LIB, no nccl.h found beside it (prebuilt binaries only)"
else
  say "ERROR: NCCL not found (nccl.h + libnccl.so*): set NCCL_HOME"; exit 3
fi
NCCL_LIB=$(readlink -f "$NCCL_LIB")
NCCL_LIBDIR=$(dirname "$NCCL_LIB")
HDR_VER=""; [ -n "$NCCL_INC" ] && HDR_VER=$(hdr_version "$NCCL_INC/nccl.h")
# The library's own version (ncclGetVersion), when a python3 can load it; informational.
LIB_VER=$(python3 - "$NCCL_LIB" 2>/dev/null <<'EOF' || true
import ctypes, sys
v = ctypes.c_int(0)
ctypes.CDLL(sys.argv[1]).ncclGetVersion(ctypes.byref(v))
c = v.value
print("%d.%d.%d %d" % ((c // 10000, c // 100 % 100, c % 100, c) if c >= 10000 else (c // 1000, c // 100 % 10, c % 100, c)))
EOF
)
say "NCCL version: header ${HDR_VER:-?} library ${LIB_VER:-?} ($NCCL_LIB)"

# A private NCCL_HOME for the build: include/ and lib/libnccl.so whatever the installation's layout
# (the wheel has only libnccl.so.2, which -lnccl does not find).
NH=$WORK/nccl_home
rm -rf "$NH"; mkdir -p "$NH/lib"
[ -n "$NCCL_INC" ] && ln -s "$NCCL_INC" "$NH/include"
ln -s "$NCCL_LIB" "$NH/lib/libnccl.so"
ln -s "$NCCL_LIB" "$NH/lib/libnccl.so.2"
# The folder to run with: the library's own when it has libnccl.so.2, else the private one.
if [ -e "$NCCL_LIBDIR/libnccl.so.2" ] && [ "$(readlink -f "$NCCL_LIBDIR/libnccl.so.2")" = "$NCCL_LIB" ]; then
  RUN_LIBDIR=$NCCL_LIBDIR
else
  RUN_LIBDIR=$NH/lib
fi
export LD_LIBRARY_PATH=$RUN_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# ---------------------------------------------------------------------------------------------------
# Binaries: prebuilt (BUILD_INFO's NCCL major.minor must match) or built here from SRC_DIR.
OPS=(all_reduce all_gather reduce_scatter broadcast)
BIN=""
bins_ok() {  # dir: all four run (-h prints the usage after loading libnccl)
  local d=$1 o
  for o in "${OPS[@]}"; do
    [ -x "$d/${o}_perf" ] || return 1
    if ldd "$d/${o}_perf" 2>/dev/null | grep -q 'not found'; then
      say "prebuilt $d/${o}_perf: $(ldd "$d/${o}_perf" | grep 'not found' | tr -s ' \t' ' ' | head -3)"; return 1
    fi
    "$d/${o}_perf" -h 2>&1 | grep -q USAGE || { say "prebuilt $d/${o}_perf does not start"; return 1; }
  done
}
use_prebuilt() {
  local src=${NCCLT_BIN:-$(dirname "$SRC_DIR")/bin} d=$WORK/prebuilt info_ver
  [ "${NCCLT_FORCE_BUILD:-0}" = 1 ] && return 1
  [ -f "$src/nccl-tests-bin.tar.xz" ] && src=$src/nccl-tests-bin.tar.xz
  rm -rf "$d"; mkdir -p "$d"
  if [ -f "$src" ]; then
    tar -xJf "$src" -C "$d" 2>/dev/null || { say "cannot unpack $src"; return 1; }
  elif [ -d "$src" ] && [ -x "$src/all_reduce_perf" ]; then
    cp -a "$src"/. "$d"/
  else
    return 1
  fi
  chmod +x "$d"/*_perf 2>/dev/null || true
  info_ver=$(sed -n 's/^nccl_header=\([0-9]*\.[0-9]*\)\..*/\1/p' "$d/BUILD_INFO" 2>/dev/null || true)
  local have=${LIB_VER:-$HDR_VER}; have=${have%% *}; have=${have%.*}
  if [ -n "$info_ver" ] && [ -n "$have" ] && [ "$info_ver" != "$have" ] && [ -n "$NCCL_INC" ]; then
    say "prebuilt binaries were built for NCCL $info_ver, this NCCL is $have: building here"; return 1
  fi
  bins_ok "$d" || return 1
  BIN=$d
  say "using prebuilt binaries from $src ($(grep -h '^' "$d/BUILD_INFO" 2>/dev/null | tr '\n' ' '))"
}

build() {
  local nvcc="" c h cudalib="" rtlib=cudart B=$WORK/out t0=$SECONDS
  [ -n "$NCCL_INC" ] || { say "ERROR: no nccl.h found: cannot build nccl-tests (set NCCL_HOME)"; exit 3; }
  for c in ${CUDA_HOME:+"$CUDA_HOME/bin/nvcc"} "$(command -v nvcc 2>/dev/null || true)" /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do
    [ -n "$c" ] && [ -x "$c" ] && { nvcc=$c; break; }
  done
  [ -n "$nvcc" ] || { say "ERROR: nvcc not found (set CUDA_HOME)"; exit 3; }
  h=$(dirname "$(dirname "$nvcc")")
  # cudart: static when the toolkit has it (the binaries then need only libnccl at run time)
  for c in "$h/lib64" "$h/lib" "$h/targets/x86_64-linux/lib"; do
    if [ -f "$c/libcudart_static.a" ]; then cudalib=$c; rtlib=cudart_static; break; fi
    if [ -z "$cudalib" ] && [ -e "$c/libcudart.so" ]; then cudalib=$c; fi
  done
  [ -n "$cudalib" ] || cudalib=$h/lib64
  say "building nccl-tests with $nvcc ($("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')), CUDA_LIB=$cudalib -l$rtlib, NCCL_HOME=$NH (-> $NCCL_INC)"
  mkdir -p "$WORK/src"
  cp -a "$SRC_DIR"/. "$WORK/src"/   # keeps mtimes: a warm machine's earlier build is reused
  chmod -R u+w "$WORK/src"
  local targets=() o
  for o in "${OPS[@]}"; do targets+=("$B/${o}_perf"); done
  if ! make -C "$WORK/src/src" -j"$(nproc)" MPI=0 CUDA_HOME="$h" CUDA_LIB="$cudalib" CUDARTLIB="$rtlib" \
        NCCL_HOME="$NH" NVCC="$nvcc" NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BUILDDIR="$B" \
        "${targets[@]}" > "$OUT_DIR/build.log" 2>&1; then
    say "ERROR: build failed; the end of $OUT_DIR/build.log:"; tail -40 "$OUT_DIR/build.log"; exit 3
  fi
  {
    echo "nccl_tests_version=$(sed -n 's/^#define NCCL_TESTS_VERSION "\(.*\)"/\1/p' "$SRC_DIR/src/common.h")"
    [ -f "$SRC_DIR/COMMIT" ] && echo "nccl_tests_commit=$(cat "$SRC_DIR/COMMIT")"
    echo "nccl_header=${HDR_VER% *}"
    echo "cuda=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') cudart=$rtlib gencode=sm_90"
  } > "$B/BUILD_INFO"
  BIN=$B
  say "built in $((SECONDS - t0)) s"
}

if [ "$BUILD_ONLY" = 1 ]; then
  build
  st=$WORK/strip; rm -rf "$st"; mkdir -p "$st"
  for o in "${OPS[@]}"; do cp "$BIN/${o}_perf" "$st/"; strip "$st/${o}_perf" 2>/dev/null || true; done
  cp "$BIN/BUILD_INFO" "$st/"
  tar -cJf "$OUT_DIR/nccl-tests-bin.tar.xz" -C "$st" .
  cp "$BIN/BUILD_INFO" "$OUT_DIR/BUILD_INFO"
  say "wrote $OUT_DIR/nccl-tests-bin.tar.xz ($(du -h "$OUT_DIR/nccl-tests-bin.tar.xz" | cut -f1)): $(tr '\n' ' ' < "$BIN/BUILD_INFO")"
  exit 0
fi

use_prebuilt || build
bins_ok "$BIN" || { say "ERROR: the binaries in $BIN do not start (ldd: $(ldd "$BIN/all_reduce_perf" 2>&1 | grep 'not found' | head -3 | tr '\n' ' '))"; exit 3; }

# env.sh: hybench's CUDA plugin dlopens HB_NCCL_LIB (or libnccl.so.2 along LD_LIBRARY_PATH): the same library.
{
  echo "# written by tools/nccl_tests.sh on $(hostname 2>/dev/null || echo ?) $(date -u +%FT%TZ 2>/dev/null || true): NCCL ${LIB_VER:-$HDR_VER} from $NCCL_FROM"
  echo "export NCCL_NVLS_ENABLE=0"
  # shellcheck disable=SC2016  # expanded when env.sh is sourced
  printf 'export LD_LIBRARY_PATH=%q${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n' "$RUN_LIBDIR"
  printf 'export HB_NCCL_LIB=%q\n' "$RUN_LIBDIR/libnccl.so.2"
} > "$OUT_DIR/env.sh"
say "wrote $OUT_DIR/env.sh (LD_LIBRARY_PATH=$RUN_LIBDIR, HB_NCCL_LIB=$RUN_LIBDIR/libnccl.so.2)"

# ---------------------------------------------------------------------------------------------------
# GPUs
if [ -z "$NGPUS" ]; then
  if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    NGPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c . || true)
  else
    NGPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  fi
  if [ -z "$NGPUS" ] || [ "$NGPUS" = 0 ]; then
    NGPUS=$(python3 -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
  fi
fi
case $NGPUS in ''|*[!0-9]*) say "ERROR: NGPUS '$NGPUS' is not a number"; exit 2;; esac
[ "$NGPUS" -ge 1 ] || { say "ERROR: no GPU found (nvidia-smi -L)"; exit 4; }
nvidia-smi -L 2>/dev/null || true
nvidia-smi topo -m > "$OUT_DIR/topo.txt" 2>&1 || true
say "NGPUS=$NGPUS (one process, -g $NGPUS), NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"

# ---------------------------------------------------------------------------------------------------
# Runs, most wanted first (NCCLT_BUDGET_S may cut the tail)
RUNS=${NCCLT_RUNS:-"all_reduce:float all_gather:float reduce_scatter:float broadcast:float all_reduce:half all_reduce:bfloat16 all_gather:half all_gather:bfloat16 reduce_scatter:half reduce_scatter:bfloat16 broadcast:half broadcast:bfloat16"}
ITERS=${NCCLT_ITERS:-50}
WARM=${NCCLT_WARMUP:-10}
RT=${NCCLT_RUN_TIMEOUT:-90}
BUDGET=${NCCLT_BUDGET_S:-240}
: > "$OUT_DIR/summary.txt"
ok=0; T_RUNS=$SECONDS; printed_version=0
for r in $RUNS; do
  op=${r%%:*}; dt=${r#*:}
  out=$OUT_DIR/${op}_perf_${dt}.txt
  if [ $((SECONDS - T_RUNS)) -ge "$BUDGET" ]; then
    say "skipped $op $dt: the runs' budget of $BUDGET s is spent"; echo "$op $dt skipped budget" >> "$OUT_DIR/summary.txt"; continue
  fi
  [ -x "$BIN/${op}_perf" ] || { say "no $BIN/${op}_perf"; echo "$op $dt missing" >> "$OUT_DIR/summary.txt"; continue; }
  case $dt in half|bfloat16) minb=4;; *) minb=8;; esac
  case $op in all_gather|reduce_scatter) maxb=$((NGPUS * 1073741824));; *) maxb=1G;; esac
  minb=${NCCLT_MINBYTES:-$minb}; maxb=${NCCLT_MAXBYTES:-$maxb}
  cmd=("$BIN/${op}_perf" -b "$minb" -e "$maxb" -f 2 -g "$NGPUS" -d "$dt" -w "$WARM" -n "$ITERS" -c 1)
  say "run: NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE timeout -k 10 $RT ${cmd[*]} > $out"
  t0=$SECONDS
  if timeout -k 10 "$RT" "${cmd[@]}" > "$out" 2>&1; then rc=0; else rc=$?; fi
  dt_s=$((SECONDS - t0))
  rows=$(grep -cE '^ *[0-9]+ +[0-9]+ +[A-Za-z0-9_]+ ' "$out" || true)
  if [ "$printed_version" = 0 ] && grep -q '^# nccl-tests version' "$out"; then
    grep -m1 '^# nccl-tests version' "$out"; printed_version=1
  fi
  avg=$(sed -n 's/^# Avg bus bandwidth *: *\([^ ]*\).*/\1/p' "$out" | tail -1)
  oob=$(sed -n 's/^# Out of bounds values *: *\(.*\)/\1/p' "$out" | tail -1)
  say "  rc=$rc ${dt_s} s, $rows sizes, avg busbw ${avg:-?} GB/s, out of bounds: ${oob:-?}"
  [ "$rc" = 0 ] || { say "  the end of $out:"; tail -15 "$out"; }
  [ "$rows" -gt 0 ] && ok=$((ok + 1))
  echo "$op $dt rc=$rc ${dt_s}s rows=$rows avg_busbw=${avg:-?} oob=${oob:-?}" >> "$OUT_DIR/summary.txt"
done
say "done: $ok runs with data, $((SECONDS - T_START)) s in all; outputs in $OUT_DIR"
[ "$ok" -gt 0 ] || exit 5
