#!/usr/bin/env bash
# check_model.sh - `hybench verify --model FILE.gguf` end to end (run by tests/run_tests.sh): llama GGUF
# files written by build/tests/test_model --write (a small layer: 4 heads, 2 kv heads, head_dim 64,
# inter 512; Q4_K_M's mix and f16) run as the decoder-layer chain on cpu-ref, cpu and opencl (where
# present): every record ok, weight_bytes the file's, model_file naming the file and layer; a file that
# is not GGUF and a layer past the last exit 4 naming the file.
set -u
cd "$(dirname "$0")/.."
HB=build/hybench
T=build/test-results/model
rm -rf "$T"; mkdir -p "$T"
fail() { echo "check_model: $*"; exit 1; }
for f in q4_k_m f16; do
  build/tests/test_model --write "$T/$f.gguf" "$f" || fail "could not write $f.gguf"
  $HB verify --model "$T/$f.gguf" --backend cpu-ref,cpu,opencl --out "$T/$f.jsonl" >"$T/$f.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || { tail -5 "$T/$f.log"; fail "verify --model $f.gguf: exit $rc"; }
  python3 - "$T/$f.jsonl" "$T/$f.gguf" "$f" <<'PY' || fail "records of $f.gguf"
import json, sys
path, gguf, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
n = 0
# the layer's projection weights as the file stores them (hidden 256, kv 128, inter 512):
# q4_k 144 bytes per 256, q6_k 210 per 256 (attn_v, ffn_down); f16 files run in f32 (4 bytes)
q, o, v, g, d = 256 * 256, 256 * 256, 128 * 256, 512 * 256, 256 * 512
want = (q + 128 * 256 + o + 2 * g) * 144 // 256 + (v + d) * 210 // 256 if fmt == "q4_k_m" else (q + 2 * 128 * 256 + o + 3 * g) * 4
for line in open(path):
    r = json.loads(line)
    if r.get("type") != "case": continue
    if r["status"] == "skipped": continue
    n += 1
    assert r["status"] == "ok", (r["key"], r["status"], r.get("reason"))
    assert r["dtype"] == ("q4_k" if fmt == "q4_k_m" else "f32"), r["dtype"]
    assert r["model_file"]["path"] == gguf and r["model_file"]["layer"] == 0, r["model_file"]
    assert r["weight_bytes"] == want, (r["weight_bytes"], want)
assert n >= 4, n
PY
done
echo notgguf > "$T/bad.gguf"
$HB verify --model "$T/bad.gguf" --backend cpu-ref --out "$T/bad.jsonl" 2>"$T/bad.err"; rc=$?
[ $rc -eq 4 ] && grep -q "$T/bad.gguf: offset 0" "$T/bad.err" || { cat "$T/bad.err"; fail "a file that is not GGUF: exit $rc, wanted 4 naming it"; }
$HB verify --model "$T/f16.gguf" --layer 3 --backend cpu-ref --out "$T/l3.jsonl" 2>"$T/l3.err"; rc=$?
[ $rc -eq 4 ] && grep -q -- "--layer 3" "$T/l3.err" || { cat "$T/l3.err"; fail "--layer 3 of a one-layer file: exit $rc, wanted 4"; }
echo "check_model: ok"
