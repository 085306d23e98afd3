#!/usr/bin/env bash
# Self-test of tools/ggml_compare.py (no ggml build needed). Usage: tools/test_ggml_compare.sh
# (prints "N passed, M failed"; exit 1 on a failure). Everything here is SYNTHETIC: test-backend-ops
# --output sql records in the layout of ggml d99724f (tests/test-backend-ops.cpp, sql_printer and
# test_result::get_fields) with invented times, and invented hybench records. No value is a measurement.
set -euo pipefail
cd "$(dirname "$0")/.."
T=$(mktemp -d "${TMPDIR:-/tmp}/test_ggml_compare.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
has() { if grep -qF -- "$2" "$1"; then ok; else bad "$3: no '$2' in $1"; sed 's/^/    /' "$1" >&2; fi; }
hasnt() { if grep -qF -- "$2" "$1"; then bad "$3: '$2' in $1"; else ok; fi; }

F="test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name"
rec() {  # name supported time_us runs
  echo "INSERT INTO test_backend_ops ($F) VALUES ('2026-11-28T03:22:43Z', 'abc', 'CUDA0', 'MUL_MAT', 'name=$1,type=f32,ne=[4096,1,1,1],op_params=[],sources=q4_K[14336,4096,1,1],f32[14336,1,1,1]', 'perf', '$2', '$2', '', '$3', '0.000000', '1.0', '2320', '$4', '', '');"
}
{
  echo "CREATE TABLE IF NOT EXISTS test_backend_ops ("; echo "  backend_reg_name TEXT"; echo ");"
  rec hb_q4_K_n4096_k14336_m1 1 16.500000 6000
  rec hb_q8_0_n2048_k2048_m512 1 40.000000 900
  rec hb_q6_K_n256_k2048_m8 0 0.000000 0
  echo "INSERT INTO test_backend_ops ($F) VALUES ('x', 'abc', 'CUDA0', 'MUL_MAT', 'type_a=q4_K,m=4096', 'perf', '1', '1', '', '9.0', '0', '0', '0', '1', '', '');"
} > "$T/perf.sql"
python3 tools/ggml_compare.py sql "$T/perf.sql" CUDA0 "Test GPU, rev 1" "" abc > "$T/rows.csv"
has "$T/rows.csv" "test-backend-ops,CUDA0,Test GPU; rev 1,q4_K,4096,14336,1,16.500,,6000,,abc" "sql: a supported case"
has "$T/rows.csv" "q6_K,256,2048,8,unsupported" "sql: an unsupported case"
[ "$(wc -l < "$T/rows.csv")" = 3 ] && ok || bad "sql: a case not named hb_* was read"

{ echo "source,backend,device,type,n,k,m,us_per_call,min_us,runs,threads,ggml_commit"; cat "$T/rows.csv"
  echo "test-backend-ops,CPU,Test CPU,q4_K,4096,14336,1,300.000,,100,16,abc"; } > "$T/ggml.csv"
cat > "$T/hb.jsonl" <<'J'
{"type":"run","schema":1}
{"type":"case","schema":1,"op":"matmul","status":"ok","backend":"cuda:0","mode":"resident","dtype":"q4_k","shape":{"m":1,"n":4096,"k":14336},"phases":{"compute":{"median":1.65e-5}}}
{"type":"case","schema":1,"op":"matmul","status":"ok","backend":"cpu","mode":"f32","dtype":"q4_k","shape":{"m":1,"n":4096,"k":14336},"phases":{"compute":{"median":6.0e-4}}}
{"type":"case","schema":1,"op":"matmul","status":"ok","backend":"cuda:0","mode":"resident","dtype":"q8_0","shape":{"m":512,"n":2048,"k":2048},"phases":{"compute":{"median":4.3e-5}}}
{"type":"case","schema":1,"op":"matmul","status":"skipped","backend":"cuda:0","mode":"resident","dtype":"q6_k","shape":{"m":8,"n":256,"k":2048},"phases":{"compute":{"median":1e-5}}}
{"type":"case","schema":1,"op":"matmul","status":"ok","backend":"cuda:0","mode":"resident","dtype":"bf16","shape":{"m":1,"n":4096,"k":14336},"phases":{"compute":{"median":1e-5}}}
J
python3 tools/ggml_compare.py ratio "$T/ggml.csv" "$T/hb.jsonl" --md "$T/out.md" > "$T/out.txt"
has "$T/out.txt" "| cuda:0 | resident | q4_k | 1 | 4096 | 14336 | 16.50 | CUDA0 | 16.50 | 1.00 |" "ratio: equal times"
has "$T/out.txt" "| cpu | f32 | q4_k | 1 | 4096 | 14336 | 600.00 | CPU | 300.00 | 2.00 |" "ratio: cpu pairs with CPU"
has "$T/out.txt" "| cuda:0 | resident | q8_0 | 512 | 2048 | 2048 | 43.00 | CUDA0 | 40.00 | 1.07 |" "ratio: m is the tokens"
hasnt "$T/out.txt" "q6_k" "ratio: a skipped case"
has "$T/out.txt" "3 cases matched (1 matmul cases not in the ggml file); within 10% or faster: 2" "ratio: summary"
has "$T/out.md" "geometric mean ratio 1.29" "ratio: --md"
python3 tools/ggml_compare.py ratio "$T/ggml.csv" "$T/hb.jsonl" --hb-backend cpu --ggml-backend CPU > "$T/cpu.txt"
hasnt "$T/cpu.txt" "cuda:0" "ratio: --hb-backend"
if python3 tools/ggml_compare.py ratio "$T/ggml.csv" "$T/missing.jsonl" 2> "$T/err.txt"; then bad "missing file accepted"; else has "$T/err.txt" "missing.jsonl" "error names the file"; fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
