#!/usr/bin/env bash
# check_gate_list.sh - the merge gate's case list end to end (`hybench gate-list`, docs/compare.md
# "The gate list"); run by tests/run_tests.sh. On this host's backends (cpu-ref, cpu, and opencl
# where available), on one CPU (the cpu backend then skips its timed thread calibration, so two
# processes name the same plans) and with the cpu backend's timed choices fixed (HB_CPU_GEMM=openblas,
# HB_CPU_CONV=own):
#  1. coverage: every path (kernel: op, backend, dtype, mode, impl; route: backend, mode, route) that
#     the quick list has, and every path of all the workloads' cases, is a path of the gate list, and
#     the gate list has no other; one section per kept case;
#  2. the names: the gate list run for real (one sample per case, --cases-from its keys) records on
#     every backend exactly the (op, backend, dtype, mode, impl) of its kernel paths, as impl_of named
#     them before the run; each backend runs only its own paths' cases;
#  3. --instructions: cpu-ref and cpu only, every kept path's case at most the cut, the paths over it
#     listed in the file's comments;
#  4. hybench ab with no workload file runs the gate list (written to its folder, its keys the rounds'
#     cases); --no-gate-list runs the list `run` reads;
#  5. usage errors: exit 2, 4 and 6 with the option or file named.
set -u
cd "$(dirname "$0")/.."
HB=build/hybench
T=build/test-results/gate_list
rm -rf "$T"; mkdir -p "$T"
fail() { echo "check_gate_list: FAIL: $*"; exit 1; }
export HB_CPU_GEMM=openblas HB_CPU_CONV=own
one() { taskset -c 0 "$@"; }
# 1. coverage
one $HB gate-list --quick --paths > $T/quick.tsv 2> $T/quick.err || fail "gate-list --quick --paths: $(cat $T/quick.err)"
one $HB gate-list --paths > $T/all.tsv 2> $T/all.err || fail "gate-list --paths: $(cat $T/all.err)"
one $HB gate-list --out $T/gl.ini --keys $T/gl.keys 2> $T/gl.err || fail "gate-list: $(cat $T/gl.err)"
one $HB gate-list --paths $T/gl.ini > $T/gl.tsv 2> /dev/null || fail "gate-list --paths of the gate list"
cut -f1-6 $T/quick.tsv | sort -u > $T/quick.k
cut -f1-6 $T/all.tsv | sort -u > $T/all.k
cut -f1-6 $T/gl.tsv | sort -u > $T/gl.k
[ -s $T/quick.k ] && [ "$(wc -l < $T/gl.k)" -gt 20 ] || fail "too few paths: $(wc -l < $T/quick.k) quick, $(wc -l < $T/gl.k) in the list"
miss=$(comm -23 $T/quick.k $T/gl.k); [ -z "$miss" ] || fail "quick paths not in the gate list: $miss"
miss=$(comm -3 $T/all.k $T/gl.k); [ -z "$miss" ] || fail "the gate list's paths differ from the workloads': $miss"
awk -F'\t' '$1 != "route" {k[$2]++} END {exit !(k["cpu"] > 10 && k["cpu-ref"] > 10)}' $T/gl.k || fail "no cpu or cpu-ref kernel paths"
grep -q $'\tcpu\tf32\tf32\t\\*\town-omp+nt\t' $T/gl.tsv || fail "no streaming-store (+nt) elementwise path on cpu"
grep -q $'^avgpool\tcpu\tf32\tf32\t\\*\town-omp+global\t' $T/gl.tsv || fail "no global pooling path on cpu"
nsec=$(grep -c '^\[' $T/gl.ini)
npaths=$(grep -c '^# \(path\|route\):' $T/gl.ini)
[ "$npaths" -eq "$(wc -l < $T/gl.tsv)" ] || fail "the list names $npaths paths, --paths $(wc -l < $T/gl.tsv)"
[ "$nsec" -le "$npaths" ] || fail "$nsec sections for $npaths paths"
# 2. the names: a real run of the list records the implementations named before it
OCL=cpu-ref,cpu; $HB list 2>/dev/null | grep -q '^opencl:.*available' && OCL=cpu-ref,cpu,opencl
one $HB run $T/gl.ini --cases-from $T/gl.keys --backend $OCL --budget 0.001 --min-samples 1 --max-samples 1 --passes 1 \
  --repetitions 1 --quick --out $T/run.jsonl > /dev/null 2> $T/run.err || fail "the gate list's run: $(tail -3 $T/run.err)"
python3 - "$T" "$OCL" <<'EOF' || fail "records against the named paths"
import json, sys
t, backends = sys.argv[1], sys.argv[2].split(',')
recs, keys = set(), set()
for l in open(t + '/run.jsonl'):
    r = json.loads(l)
    if r.get('type') != 'case': continue
    if r['status'] != 'ok': sys.exit('not ok: %s %s' % (r['key'], r.get('reason')))
    recs.add((r['op'], r['backend'], r['dtype'], r['mode'], 'chain' if r['op'] == 'chain' else r['impl']))
    keys.add(r['key'])
paths = set()
for l in open(t + '/gl.tsv'):
    f = l.rstrip('\n').split('\t')
    if f[0] != 'route' and any(f[1].startswith(b) for b in backends): paths.add((f[0], f[1], f[2], f[3], f[5]))
want = set(l.strip() for l in open(t + '/gl.keys') if not l.startswith('#'))
want = set(k for k in want if any(k.split('|')[2].startswith(b) for b in backends))
if recs != paths: sys.exit('recorded, not named: %s; named, not recorded: %s' % (sorted(recs - paths), sorted(paths - recs)))
if keys != want: sys.exit('cases run that are not its keys: %s; keys not run: %s' % (sorted(keys - want), sorted(want - keys)))
print('check_gate_list: %d kernel paths recorded as named, %d cases' % (len(recs), len(keys)))
EOF
# 3. the instruction gate's list
one $HB gate-list --instructions --paths > $T/gi.tsv 2> $T/gi.err || fail "gate-list --instructions"
cut=$(sed -n 's/.*costs at most \([0-9.e+]*\).*/\1/p' <($HB gate-list --help))
[ -n "$cut" ] || fail "the cut is not in gate-list --help"
awk -F'\t' -v cut="$cut" '($2 != "cpu" && $2 != "cpu-ref") || ($9 == "kept") != ($8 <= cut + 0) {bad++} END {exit bad > 0}' $T/gi.tsv \
  || fail "--instructions: a path of another backend, or kept/over-cut against the cut $cut"
grep -q over-cut $T/gi.tsv && grep -q kept $T/gi.tsv || fail "--instructions: the cut keeps all or nothing"
one $HB gate-list --instructions --out $T/gi.ini 2> /dev/null
[ "$(grep -c '^# over the cut:' $T/gi.ini)" -eq "$(grep -c over-cut $T/gi.tsv)" ] || fail "the paths over the cut are not all named in the list"
# 4. hybench ab: the gate list by default, --no-gate-list as before
one $HB ab $HB $HB --backend cpu --op add --quick --budget 0.01 --rounds 2 --min-rounds 2 --out-dir $T/ab --quiet 2> $T/ab.err
rc=$?; [ $rc -eq 0 ] || [ $rc -eq 11 ] || fail "ab on the gate list: exit $rc: $(tail -3 $T/ab.err)"
[ -s $T/ab/gate-list.ini ] && [ -s $T/ab/gate-list.keys ] || fail "ab wrote no gate list"
grep -v '^#' $T/ab/gate-list.keys | grep '|cpu|' | sort > $T/ab.want
python3 -c "import json,sys; [print(r['key']) for r in map(json.loads, open('$T/ab/rounds/base-r01.jsonl')) if r.get('type') == 'case']" | sort > $T/ab.got
[ -s $T/ab.want ] && cmp -s $T/ab.want $T/ab.got || fail "ab's rounds ran other cases than the gate list's: $(diff $T/ab.want $T/ab.got | head)"
one $HB ab $HB $HB --no-gate-list --backend cpu --op add --quick --budget 0.01 --rounds 2 --min-rounds 2 --out-dir $T/abq --quiet 2> $T/abq.err
rc=$?; [ $rc -eq 0 ] || [ $rc -eq 11 ] || fail "ab --no-gate-list: exit $rc"
[ ! -e $T/abq/gate-list.ini ] || fail "--no-gate-list wrote a gate list"
python3 -c "import json,sys; [print(r['key']) for r in map(json.loads, open('$T/abq/rounds/base-r01.jsonl')) if r.get('type') == 'case']" | sort > $T/abq.got
grep -q 'n=65536' $T/abq.got && ! cmp -s $T/abq.got $T/ab.got || fail "--no-gate-list ran the gate list, not the quick list: $(cat $T/abq.got)"
# 5. usage errors
$HB gate-list --max-cost -1 > /dev/null 2> $T/u.err; rc=$?
[ $rc -eq 2 ] && grep -q -- --max-cost $T/u.err || fail "--max-cost -1: exit $rc"
$HB gate-list --op nosuchop > /dev/null 2> $T/u.err; rc=$?
[ $rc -eq 2 ] && grep -q nosuchop $T/u.err || fail "--op nosuchop: exit $rc"
$HB gate-list tests/data/bad_unknown_op.ini > /dev/null 2> $T/u.err; rc=$?
[ $rc -eq 4 ] && grep -q bad_unknown_op.ini $T/u.err || fail "a bad workload: exit $rc"
$HB gate-list --backend metal > /dev/null 2> $T/u.err; rc=$?
[ $rc -eq 6 ] && grep -q metal $T/u.err || fail "--backend metal: exit $rc"
echo "check_gate_list: PASS ($(wc -l < $T/gl.k) paths, $nsec cases in the list; quick: $(wc -l < $T/quick.k) paths)"
