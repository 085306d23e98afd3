#!/usr/bin/env bash
# check_one_machine.sh - one machine, one series (issue 32 item 5; run by tests/run_tests.sh): two real
# runs of this machine with the OpenCL backend, and a copy of the first whose OpenCL backend record
# says what PoCL says when less memory is free (its device's memory is a share of the memory free when
# the run starts: "5.3 GiB" and "12.3 GiB" half an hour apart on this VM), imported into a fresh store,
# are one machine with three runs, whose text holds no device memory; the CSV's machine column is one
# fingerprint for all three. Skipped where OpenCL is not available.
set -u
cd "$(dirname "$0")/.."
HB=build/hybench
T=build/test-results/one-machine
rm -rf "$T"; mkdir -p "$T"
fail() { echo "check_one_machine: $*"; exit 1; }
$HB list 2>/dev/null | grep -q '^opencl:.*available' || { echo "check_one_machine: SKIP (no OpenCL device)"; exit 0; }
for r in a b; do
  $HB run --backend cpu,opencl --op add --budget 0.02 --min-samples 3 --out $T/$r.jsonl tests/data/verify_all.ini >/dev/null 2>&1 ||
    fail "run $r failed"
done
python3 - $T/a.jsonl $T/c.jsonl <<'PY' || fail "could not make the less-free-memory copy"
import json, re, sys
out = open(sys.argv[2], 'w')
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get('type') == 'meta':
        r['run_id'] += '-less-free-memory'
    if r.get('type') == 'backend' and r.get('backend', '').startswith('opencl') and r.get('available'):
        d = re.sub(r'[0-9.]+ GiB', '5.3 GiB', r['description'])
        assert d != r['description'] or '5.3 GiB' in d
        r['description'] = d
        r['info']['global_mem_bytes'] = int(5.3 * 2**30)
        r['info']['max_alloc_bytes'] = int(5.3 * 2**28)
    out.write(json.dumps(r, separators=(',', ':')) + '\n')
PY
$HB history import --store $T/h.db $T/a.jsonl $T/b.jsonl $T/c.jsonl >/dev/null || fail "import failed"
n=$($HB history machines --store $T/h.db | wc -l)
[ "$n" -eq 1 ] || { $HB history machines --store $T/h.db; grep -h '"backend":"opencl' $T/*.jsonl | cut -c1-200; fail "$n machines, wanted 1"; }
[ $($HB history list --store $T/h.db | tail -n +2 | wc -l) -eq 3 ] || fail "the store does not hold the three runs"
$HB history machines --store $T/h.db | grep -q "GiB," && fail "the machine's text holds the OpenCL device's memory"
m=$(for r in a b c; do $HB csv $T/$r.jsonl; done | python3 -c "
import csv, sys
print(len({row['machine'] for row in csv.DictReader(sys.stdin) if row['machine'] != 'machine'}))")
[ "$m" -eq 1 ] || fail "the CSV gives $m machine fingerprints"
echo "check_one_machine: ok (3 runs, one machine)"
