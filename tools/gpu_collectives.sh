#!/usr/bin/env bash
# The multi-GPU collective checks on a lent machine of several GPUs (docs/collectives.md, "Measured"),
# run from the repository root there with the GPU bundle (.gpu, tools/gpu_bundle.sh) and nccl-tests'
# source (.ncclt, tools/nccl_tests.sh) carried:
#   tools/gpu_collectives.sh PHASES OUTDIR [NGPUS]
# PHASES, comma separated, run in this order:
#   ncclt   nccl-tests beside hybench (tools/nccl_tests.sh): every collective, 8 B to 1 GiB per rank
#   fail    the failure drills on a 7-case all_reduce list (n=2..512Ki by 8): rank 1 SIGKILLed inside
#           case 4 (HB_INJECT_KILL), rank 1 skipping case 6 (HB_INJECT_SKIP); HB_COLL_TIMEOUT=10
#   main    hybench run --ranks NGPUS --backend cuda workloads/collectives-ranks.ini (154 cases)
#   socket  NCCL's network transport forced on one host (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1):
#           hybench all_reduce and all_gather f32 8 B .. 1 GiB, and nccl-tests' all_reduce beside it
#   hostpath the host-staged and peer paths across the ranks (all four collectives, 3 sizes)
#   tp      the tensor-parallel TinyLlama layer (workloads/tinyllama-tp.ini): on GPU 0 alone (ranks=1,
#           with the one-device chain of workloads/tinyllama.ini beside it, and the attention cases as
#           a check of the attention kernels), then over NGPUS ranks; f32, f16, bf16, resident
# OUTDIR gets summary.txt, <phase>.jsonl (the merged results of each hybench phase), ncclt.tar.gz
# (nccl-tests' outputs) and logs.tar.gz (every log, every rank's file and the rendezvous files, under
# hb-coll/): at most 8 files, as the device tool brings back.
# Multicast stays off (NCCL_NVLS_ENABLE=0): a program that uses it can take the host's GPUs out of
# service for others.
set -uo pipefail
cd "$(dirname "$0")/.."
PHASES=${1:?phases}
OUT=${2:?outdir}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
NG=${3:-$(nvidia-smi -L 2>/dev/null | wc -l)}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=${HB_COLL_WORK:-/tmp/hb-coll}
mkdir -p "$W"
# the bundle: .gpu, or the packed copy of tools/gpu_run.md (HB_BUNDLE=.gpu-final, lib/ in lib.tar.xz)
BUNDLE=${HB_BUNDLE:-.gpu}
if [ -s "$BUNDLE/lib.tar.xz" ] && [ ! -d "$BUNDLE/lib" ]; then (cd "$BUNDLE" && tar xJf lib.tar.xz); fi
HB="bash $BUNDLE/run.sh"
t0=$SECONDS
say() { echo "[$((SECONDS - t0)) s] $*" | tee -a "$OUT/summary.txt"; }
say "GPUs: $NG; $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | tr '\n' ' ')"
nvidia-smi topo -m > "$W/topo.txt" 2>&1 || true

has() { case ",$PHASES," in *",$1,"*) return 0 ;; esac; return 1; }
# the device's libnccl for the plugin (it dlopens libnccl.so.2, or HB_NCCL_LIB): the system's, else
# the first one under /usr or /opt (PyTorch's wheel); nccl_tests.sh's env.sh names the same one
if [ -z "${HB_NCCL_LIB:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2 '; then
  lib=$(find /usr /opt -name 'libnccl.so.2' 2>/dev/null | head -1)
  if [ -n "$lib" ]; then export HB_NCCL_LIB=$lib LD_LIBRARY_PATH=$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
fi
say "NCCL for hybench: ${HB_NCCL_LIB:-libnccl.so.2 through the loader search path}"
summary_of() { # merged results file -> one line per status
  python3 - "$1" <<'EOF'
import json, sys, collections
c = collections.Counter(); bad = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") != "case": continue
    c[r.get("status")] += 1
    if r.get("status") not in ("ok", "skipped"):
        bad.append("%s %s %s %s: %s" % (r.get("op"), r.get("shape_str", ""), r.get("dtype"), r.get("status"), (r.get("reason") or "")[:160]))
print(dict(c))
for b in bad[:20]: print("  ", b)
EOF
}

if has ncclt; then
  say "nccl-tests ..."
  NCCLT_BUDGET_S=${NCCLT_BUDGET_S:-110} timeout ${NCCLT_TIMEOUT:-170} bash tools/nccl_tests.sh .ncclt/src "$W/ncclt" "$NG" > "$W/ncclt.log" 2>&1
  say "nccl-tests exit $?"
  [ -s "$W/ncclt/env.sh" ] && . "$W/ncclt/env.sh"
  tar czf "$OUT/ncclt.tar.gz" -C "$W" ncclt topo.txt 2>/dev/null
fi

if has fail; then
  cat > "$W/drill.ini" <<'EOF'
[all_reduce]
op = all_reduce
sweep = n=2..512Ki*8
dtypes = f32
modes = resident
EOF
  say "drill: rank 1 killed in case 4 (n=1024), rank 1 skips case 6 (n=65536) ..."
  HB_COLL_TIMEOUT=10 HB_INJECT_KILL="n=1024 ranks=$NG|cuda:1|" HB_INJECT_SKIP=1:6 \
    timeout ${FAIL_TIMEOUT:-150} $HB run --ranks "$NG" --backend cuda --budget 0.05 --case-timeout 60 --out "$W/fail.jsonl" "$W/drill.ini" \
    > "$W/fail.log" 2>&1
  say "drill exit $? (8: a case crashed, as planted)"
  cp "$W/fail.jsonl" "$OUT/" 2>/dev/null; summary_of "$W/fail.jsonl" 2>&1 | tee -a "$OUT/summary.txt"
fi

if has main; then
  say "main: hybench run --ranks $NG workloads/collectives-ranks.ini ..."
  timeout ${MAIN_TIMEOUT:-300} $HB run --ranks "$NG" --backend cuda --budget 0.05 --case-timeout 120 --out "$W/main.jsonl" \
    workloads/collectives-ranks.ini > "$W/main.log" 2>&1
  say "main exit $?"
  cp "$W/main.jsonl" "$OUT/" 2>/dev/null; summary_of "$W/main.jsonl" 2>&1 | tee -a "$OUT/summary.txt"
fi

if has hostpath; then
  cat > "$W/paths.ini" <<'EOF'
[paths]
op = all_reduce
shape = n=2 path=1
shape = n=131072 path=1
shape = n=16Mi path=1
shape = n=2 path=2
shape = n=131072 path=2
shape = n=16Mi path=2
dtypes = f32
modes = resident
[paths.gather]
op = all_gather
shape = n=131072 path=1
shape = n=131072 path=2
dtypes = f32 bf16
modes = resident
[paths.rs]
op = reduce_scatter
shape = n=131072 path=1
shape = n=131072 path=2
dtypes = f32 f16
modes = resident
[paths.bcast]
op = broadcast
shape = n=131072 path=1
shape = n=131072 path=2
dtypes = f32
modes = resident
EOF
  say "host-staged and peer paths across $NG ranks ..."
  timeout 150 $HB run --ranks "$NG" --backend cuda --budget 0.05 --case-timeout 60 --out "$W/hostpath.jsonl" "$W/paths.ini" \
    > "$W/hostpath.log" 2>&1
  say "hostpath exit $?"
  cp "$W/hostpath.jsonl" "$OUT/" 2>/dev/null; summary_of "$W/hostpath.jsonl" 2>&1 | tee -a "$OUT/summary.txt"
fi

if has socket; then
  cat > "$W/socket.ini" <<'EOF'
[all_reduce]
op = all_reduce
sweep = n=2..256Mi*8
dtypes = f32
modes = resident
[all_gather]
op = all_gather
sweep = n=2..256Mi*8
dtypes = f32
modes = resident
EOF
  say "socket transport: hybench ..."
  NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 timeout 200 $HB run --ranks "$NG" --backend cuda --budget 0.05 --case-timeout 120 \
    --out "$W/socket.jsonl" "$W/socket.ini" > "$W/socket.log" 2>&1
  say "socket exit $?"
  cp "$W/socket.jsonl" "$OUT/" 2>/dev/null; summary_of "$W/socket.jsonl" 2>&1 | tee -a "$OUT/summary.txt"
  say "socket transport: nccl-tests all_reduce, all_gather ..."
  NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCLT_RUNS="all_reduce:float all_gather:float" NCCLT_BUDGET_S=60 \
    timeout 100 bash tools/nccl_tests.sh .ncclt/src "$W/ncclt-socket" "$NG" >> "$W/socket.log" 2>&1
fi
if has tp; then
  say "tensor-parallel layer on 1 GPU (and the one-device chain, and attention) ..."
  CUDA_VISIBLE_DEVICES=0 timeout ${TP1_TIMEOUT:-200} $HB run --backend cuda --op chain,attention --mode resident --dtype f32,f16,bf16 \
    --budget ${TP_BUDGET:-0.1} --case-timeout 120 --out "$W/tp1.jsonl" workloads/tinyllama-tp.ini workloads/tinyllama.ini > "$W/tp1.log" 2>&1
  say "tp1 exit $?"
  cp "$W/tp1.jsonl" "$OUT/" 2>/dev/null; summary_of "$W/tp1.jsonl" 2>&1 | tee -a "$OUT/summary.txt"
  say "tensor-parallel layer over $NG ranks ..."
  timeout ${TPN_TIMEOUT:-200} $HB run --ranks "$NG" --backend cuda --mode resident --dtype f32,f16,bf16 --budget ${TP_BUDGET:-0.1} \
    --case-timeout 120 --out "$W/tp$NG.jsonl" workloads/tinyllama-tp.ini > "$W/tp$NG.log" 2>&1
  say "tp$NG exit $?"
  cp "$W/tp$NG.jsonl" "$OUT/" 2>/dev/null; summary_of "$W/tp$NG.jsonl" 2>&1 | tee -a "$OUT/summary.txt"
fi
tar czf "$OUT/logs.tar.gz" -C "$(dirname "$W")" "$(basename "$W")" 2>/dev/null
say "done"
