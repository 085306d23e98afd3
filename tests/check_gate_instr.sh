#!/usr/bin/env bash
# check_gate_instr.sh - the merge gate's deterministic measure end to end (`hybench ab --instructions`,
# docs/compare.md "Instruction counts"); run by tests/run_tests.sh. Needs valgrind and the PLANT=1
# build (build/plant/hybench); without valgrind it prints SKIP with the reason and exits 77.
#  1. One round under callgrind of the planted build against itself, CUR with a real-work plant
#     (HB_PLANT=matmul:1.03 HB_PLANT_WORK=1) on matmul m=1 n=k=1024 (cpu, convert mode: a case whose
#     sub-problem costs in proportion; small ones rise by more, docs/compare.md "Plants that do real work"): exit 1; the case
#     flagged by "instructions"; its count per call 2-6% above BASE's; CUR's record still verified (ok,
#     rel_err within tolerance); the record names the tool and the calls counted.
#  3. Both measures (--with-time): a planted add flagged by "both", the unplanted cases never by the
#     instruction count (a flag by time alone is noted, not failed: the VM's timing noise).
#  2. Usage errors: --instr-rounds 0, --instr-threshold 2 (exit 2, the option named); `run
#     --instructions` without --callgrind-dir (exit 2), and outside valgrind (the case fails, reason named).
set -u
cd "$(dirname "$0")/.."
PL=${HB_PLANT_EXE:-build/plant/hybench}
T=build/test-results/gate_instr
rm -rf "$T"; mkdir -p "$T"
fail() { echo "check_gate_instr: FAIL: $*"; exit 1; }
command -v valgrind >/dev/null || { echo "check_gate_instr: SKIP: valgrind is not installed (Debian package valgrind)"; exit 77; }
[ -x "$PL" ] || fail "$PL missing (make plant-build)"
printf '[gi.matmul]\nop = matmul\nshape = gemv: m=1 n=1024 k=1024\n' > $T/one.ini
# 2. usage errors first (cheap)
$PL ab $PL $PL --instructions --instr-rounds 0 $T/one.ini > /dev/null 2> $T/u1.err; rc=$?
[ $rc -eq 2 ] && grep -q -- "--instr-rounds" $T/u1.err || fail "--instr-rounds 0: exit $rc, wanted 2 naming the option"
$PL ab $PL $PL --instructions --instr-threshold 2 $T/one.ini > /dev/null 2> $T/u2.err; rc=$?
[ $rc -eq 2 ] && grep -q -- "--instr-threshold" $T/u2.err || fail "--instr-threshold 2: exit $rc, wanted 2 naming the option"
$PL run --instructions 3 --backend cpu --out $T/x.jsonl $T/one.ini > /dev/null 2> $T/u3.err; rc=$?
[ $rc -eq 2 ] && grep -q -- "--callgrind-dir" $T/u3.err || fail "run --instructions without --callgrind-dir: exit $rc, wanted 2"
$PL run --instructions 3 --callgrind-dir $T --backend cpu --mode f32 --out $T/nv.jsonl $T/one.ini > /dev/null 2>&1
grep -q 'not running under valgrind' $T/nv.jsonl || fail "run --instructions outside valgrind: no reason in the record"
# 1. the planted real work, one round under callgrind
t0=$(date +%s)
$PL ab $PL $PL --instructions --instr-rounds 1 --backend cpu --mode convert --out-dir $T/p --markdown $T/p.md \
  --cur-env HB_PLANT=matmul:1.03 --cur-env HB_PLANT_WORK=1 --budget 0.01 $T/one.ini > /dev/null 2> $T/p.err; rc=$?
[ $rc -eq 1 ] || { tail -5 $T/p.err; fail "planted 3% real work: exit $rc, wanted 1"; }
grep -q '| regression | instructions |' $T/p.md || fail "the planted case is not flagged by instructions"
python3 - "$T/p/rounds" <<'PY' || fail "planted counts"
import json, sys
d = sys.argv[1]
def cases(p):
    return {r["key"]: r for r in map(json.loads, open(p)) if r["type"] == "case" and r["status"] != "skipped"}
b, c = cases(d + "/base-i01.jsonl"), cases(d + "/cur-i01.jsonl")
assert b and b.keys() == c.keys(), (b.keys(), c.keys())
for k in b:
    ib, ic = b[k]["instructions"], c[k]["instructions"]
    assert ib["tool"] == "callgrind" and ib["calls"] == 3, ib
    r = ic["per_call"] / ib["per_call"]
    assert 1.02 <= r <= 1.06, (k, r)  # 3% of the op and of its conversions, plus the sub-call's fixed cost
    assert c[k]["status"] == "ok" and c[k]["rel_err"] <= c[k]["tolerance"], c[k]["status"]
    print("check_gate_instr: %s: instructions x%.4f under HB_PLANT=matmul:1.03 HB_PLANT_WORK=1, verified" % (k, r))
PY
# 3. both measures (--with-time): a 50% real-work plant in add on the small list, 8 time rounds and
#    one instruction round: exit 1; every add case flagged by "both", mul and relu by neither
$PL ab $PL $PL --instructions --with-time --instr-rounds 1 --rounds 8 --min-rounds 8 --backend cpu --budget 0.01 \
  --cur-env HB_PLANT=add:1.5 --cur-env HB_PLANT_WORK=1 --out-dir $T/wt --markdown $T/wt.md tests/data/ab_small.ini > /dev/null 2> $T/wt.err; rc=$?
[ $rc -eq 1 ] || { tail -5 $T/wt.err; fail "--with-time, planted add: exit $rc, wanted 1"; }
[ -s $T/wt/instructions.md ] || fail "--with-time: no instructions.md"
[ "$(grep -c '^| add.* | both |$' $T/wt.md)" -eq 4 ] || fail "--with-time: the 4 add cases are not all flagged by both"
# the unplanted cases: never by the instruction count (deterministic); a flag by time alone is the time
# gate's own false-positive rate on a loaded machine (8 rounds on a shared VM while make test runs other
# tests beside it: seen once in 2026-11-28's runs), which a test must not assert on
grep -E '^\| (mul|relu)' $T/wt.md | grep -q 'both |$\|instructions |$' && fail "--with-time: an unplanted case flagged by its instruction count"
grep -E '^\| (mul|relu)' $T/wt.md | grep 'time |$' | sed 's/^/check_gate_instr: note: flagged by time alone (noise): /'
$PL ab $PL $PL --with-time $T/one.ini > /dev/null 2> $T/u4.err; rc=$?
[ $rc -eq 2 ] && grep -q -- "--with-time" $T/u4.err || fail "--with-time without --instructions: exit $rc, wanted 2"
echo "check_gate_instr: PASS ($(( $(date +%s) - t0 )) s under callgrind)"
