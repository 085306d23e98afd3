#!/usr/bin/env bash
# check_gate_map.sh - the merge gate's "changed code first" (docs/compare.md): tools/gate_map.txt read by
# tools/gate_map.sh, and tools/gate.sh's groups, order, outputs and exit status; run by tests/run_tests.sh.
#  1. The map's universes are the project's: its families are core/hybench.h's HB_FAMILY_LIST, its
#     backends the registry's implemented ones (measure/registry.c).
#  2. Known diffs: kernels/cpu/cpu_gemm.c -> matmul (and chain) on cpu first; a docs-only diff -> nothing
#     first; an unmapped file in kernels/cpu/ -> every family on cpu, in a new kernels folder or at the top
#     -> everything (conservative, never nothing); harness/measure -> everything first, no others; a cuda
#     file on a host-only gate -> nothing first, cuda named as touched but not run; an OpenCL instance
#     name is looked up by its type; a bad map line is refused naming file:line.
#  3. Coverage: every file git tracks is decided by a rule of the map (none falls to the default), and a
#     new file in every folder of kernels/ and harness/ (report/ aside: nothing that runs cases may call
#     it, tools/check_layers.sh) touches something.
#  4. tools/gate.sh end to end on a throwaway git repository whose "build" is a stub hybench (records
#     its arguments, writes a table, exits as told): the touched group runs first with --backend/--op,
#     the others after; a failure in the first group fails the gate and the others still run; a docs
#     diff runs one group of every case; a first group stopped at GATE_BUDGET makes the gate
#     inconclusive (11), the others "not run"; gate.md and gate.json say which group was which.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
M=tools/gate_map.sh
T=build/test-results/gate_map
rm -rf "$T"; mkdir -p "$T"
fail() { echo "check_gate_map: FAIL: $*"; exit 1; }
# field 3 of the first line of kind $2 in the output $1 whose field 2 is $3 ("" when none)
fam_of() { printf '%s\n' "$1" | awk -F'\t' -v k="$2" -v b="$3" '$1 == k && $2 == b {print $3; exit}'; }
kinds() { printf '%s\n' "$1" | awk -F'\t' -v k="$2" '$1 == k {printf "%s%s=%s", n++ ? " " : "", $2, $3}'; }

# 1. universes
fams=$(sed -n '/#define HB_FAMILY_LIST/,/^typedef/p' harness/core/hybench.h | grep -o 'X([A-Z0-9_]*, "[a-z0-9_]*")' | sed 's/.*"\(.*\)")/\1/' | tr '\n' ' ')
mfams=$(sed -n 's/^families: *//p' tools/gate_map.txt | tr -s ' ' | sed 's/ *$/ /')
[ -n "$fams" ] && [ "$fams" = "$mfams" ] || fail "map families \"$mfams\" are not core/hybench.h's HB_FAMILY_LIST \"$fams\""
bks=$(grep -o '{"[a-z0-9-]*", [^,]*, [^,]*,' harness/measure/registry.c | awk -F'[",]+' '{gsub(/ /, ""); if ($3 != "NULL" || $4 != "NULL") printf "%s ", $2}')
mbks=$(sed -n 's/^backends: *//p' tools/gate_map.txt | tr -s ' ' | sed 's/ *$/ /')
[ -n "$bks" ] && [ "$bks" = "$mbks" ] || fail "map backends \"$mbks\" are not the registry's \"$bks\""

# 2. known diffs (the gate's default backends with --instructions: cpu-ref,cpu)
o=$($M --backends cpu-ref,cpu kernels/cpu/cpu_gemm.c) || fail "gate_map.sh exit $?"
[ "$(kinds "$o" first)" = "cpu=matmul,chain" ] || fail "cpu_gemm.c: first $(kinds "$o" first), wanted cpu=matmul,chain"
[ "$(fam_of "$o" others cpu-ref)" = '*' ] || fail "cpu_gemm.c: cpu-ref not all in others: $o"
[ "$(fam_of "$o" others cpu)" = "elementwise,conv2d,pooling,reduction,attention,collective" ] || fail "cpu_gemm.c: cpu's others: $o"
o=$($M --backends cpu-ref,cpu docs/compare.md docs/img/x.png)
[ -z "$(kinds "$o" first)" ] && [ "$(kinds "$o" others)" = "cpu-ref,cpu=*" ] || fail "docs only: $o"
o=$($M --backends cpu-ref,cpu kernels/cpu/cpu_newkernel.c)
[ "$(kinds "$o" first)" = "cpu=*" ] && [ "$(kinds "$o" others)" = "cpu-ref=*" ] || fail "unmapped kernels/cpu file: $o"
o=$($M --backends cpu-ref,cpu kernels/metal/mtl.m)
[ "$(kinds "$o" first)" = "cpu-ref,cpu=*" ] && [ -z "$(kinds "$o" others)" ] || fail "new kernels folder: $o"
o=$($M --backends cpu-ref,cpu newdir/file.c)
printf '%s\n' "$o" | grep -q "^path	newdir/file.c	(default)	\*	\*$" && [ "$(kinds "$o" first)" = "cpu-ref,cpu=*" ] || fail "unmapped top-level path: $o"
o=$($M --backends cpu-ref,cpu,opencl harness/measure/sample.c docs/x.md)
[ "$(kinds "$o" first)" = "cpu-ref,cpu,opencl=*" ] && [ -z "$(kinds "$o" others)" ] || fail "harness/measure: $o"
o=$($M --backends cpu-ref,cpu kernels/cuda/cuda_attention.cu)
[ -z "$(kinds "$o" first)" ] && [ "$(kinds "$o" outside)" = "cuda=attention,chain" ] || fail "cuda file on a host gate: $o"
o=$($M --backends cpu-ref,cpu,opencl:0:0 kernels/opencl/hb_matmul.cl kernels/cpu/cpu_conv.c)
[ "$(kinds "$o" first)" = "cpu=conv2d,pooling opencl:0:0=matmul,conv2d,chain" ] || fail "opencl instance + cpu_conv.c: $o"
[ "$(kinds "$o" others)" = "cpu-ref=* cpu=elementwise,matmul,reduction,attention,chain,collective opencl:0:0=elementwise,pooling,reduction,attention,collective" ] || fail "their others: $o"
o=$($M --backends cpu-ref,cpu kernels/cpu/cpu_ew.c)
[ "$(kinds "$o" first)" = "cpu=elementwise,pooling,reduction,attention,chain" ] || fail "cpu_ew.c (sum/max shared with pooling, attention): $o"
o=$($M)
[ "$(kinds "$o" others)" = "cpu-ref,cpu,opencl,cuda=*" ] || fail "empty diff: $o"
printf 'backends: cpu-ref cpu\nfamilies: matmul\nkernels/*  cpu  matmull\n' > $T/bad.txt
$M --map $T/bad.txt x > /dev/null 2> $T/bad.err; rc=$?
[ $rc -eq 2 ] && grep -q "bad.txt:3: unknown family \"matmull\"" $T/bad.err || fail "a bad map: exit $rc, $(cat $T/bad.err)"
printf 'backends: cpu\nfamilies: matmul\nkernels/*  -  matmul\n' > $T/bad2.txt
$M --map $T/bad2.txt x > /dev/null 2> $T/bad2.err; [ $? -eq 2 ] && grep -q "bad2.txt:3:" $T/bad2.err || fail "'-' in one field accepted"

# 3. coverage of the repository
git ls-files > $T/files.txt
[ -s $T/files.txt ] || { echo "check_gate_map: SKIP: not a git checkout"; exit 77; }
$M - < $T/files.txt > $T/files.tsv || fail "gate_map.sh over the tracked files"
[ "$(grep -c '^path' $T/files.tsv)" -eq "$(wc -l < $T/files.txt)" ] || fail "not one path line per tracked file"
d=$(awk -F'\t' '$1 == "path" && $3 == "(default)" {print $2}' $T/files.tsv)
[ -z "$d" ] || fail "tracked files no rule of tools/gate_map.txt decides (add a rule): $d"
for dir in $(git ls-files kernels harness | sed 's|/[^/]*$||' | sort -u); do
  [ "$dir" = harness/report ] && continue
  o=$($M "$dir/zz_new_file.c")
  printf '%s\n' "$o" | grep -q "^path	$dir/zz_new_file.c	.*	-	-$" && fail "a new file in $dir/ touches nothing: $o"
  [ -n "$(kinds "$o" first)" ] || fail "a new file in $dir/ puts nothing first: $o"
done
echo "check_gate_map: map: $(wc -l < $T/files.txt) tracked files each decided by a rule; $(awk -F'\t' '$1 == "path" && $4 == "-"' $T/files.tsv | wc -l) of them change nothing measured"

# 4. tools/gate.sh on a throwaway repository with a stub hybench
R=$T/repo
mkdir -p $R/stub $R/kernels/cpu $R/docs $R/tests/data
cat > $R/stub/hybench <<'EOF'
#!/usr/bin/env bash
# stub hybench for check_gate_map.sh: list, run --dry-run, ab (its arguments logged to $STUB_LOG)
case "$1" in
  list) printf 'BACKEND STATUS\ncpu-ref      available  x\ncpu          available  y\ncuda         unavailable z\n'; exit 0;;
  run) echo "1 workload entries, 4 cases per backend before per-backend filtering"; exit 0;;
  ab) shift; echo "ab $*" >> "$STUB_LOG"; md="" ju=""; a="$*"
      while [ $# -gt 0 ]; do [ "$1" = --markdown ] && md=$2; [ "$1" = --junit ] && ju=$2; shift; done
      rc=0; [ -n "${STUB_FAIL_ON:-}" ] && [[ $a == *"$STUB_FAIL_ON"* ]] && rc=1
      [ -n "${STUB_SLEEP_ON:-}" ] && [[ $a == *"$STUB_SLEEP_ON"* ]] && sleep "${STUB_SLEEP:-0}"
      printf '# hybench ab --instructions: %s\n\n| case | verdict |\n| --- | --- |\n| stub | %s |\n' "$rc" "$rc" > "$md"
      [ -n "$ju" ] && printf '<?xml version="1.0"?>\n<testsuites name="hybench compare">\n  <testsuite name="hybench.compare.stub">\n    <testcase name="%s"/>\n  </testsuite>\n</testsuites>\n' "$rc" > "$ju"
      exit $rc;;
esac
exit 2
EOF
chmod +x $R/stub/hybench
printf 'build:\n\tmkdir -p build && cp stub/hybench build/hybench\n' > $R/Makefile
echo 'int gemm;' > $R/kernels/cpu/cpu_gemm.c; echo 'x' > $R/docs/a.md; echo '[x]' > $R/tests/data/l.ini
(cd $R && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base) || fail "git init"
(cd $R && echo 'int gemm2;' >> kernels/cpu/cpu_gemm.c && git -c user.name=t -c user.email=t@t commit -qam gemm && git tag gemm) || fail "commit"
(cd $R && echo 'y' >> docs/a.md && git -c user.name=t -c user.email=t@t commit -qam docs && git tag docs) || fail "commit"
G=../../../../tools/gate.sh   # relative, as a CI job calls it (the script finds its map from there)
gate() { # name base head [env...] : run the gate, its exit in $T/name.rc
  local n=$1 b=$2 h=$3; shift 3
  (cd $R && env STUB_LOG="$ROOT/$T/$n.log" GATE_OUT="$ROOT/$T/$n" GATE_TMP="$ROOT/$T" "$@" "$G" "$b" "$h" -- ${GARGS:---instructions} tests/data/l.ini \
     > "$ROOT/$T/$n.out" 2> "$ROOT/$T/$n.err"); echo $? > $T/$n.rc
}
gate g1 gemm~1 gemm
[ "$(cat $T/g1.rc)" = 0 ] || fail "gemm diff, all pass: exit $(cat $T/g1.rc), wanted 0: $(tail -3 $T/g1.err)"
[ "$(wc -l < $T/g1.log)" -eq 3 ] || fail "gemm diff: $(wc -l < $T/g1.log) hybench ab runs, wanted 3 (changed first; others: cpu-ref, cpu)"
sed -n 1p $T/g1.log | grep -q -- "--markdown [^ ]*/g1/first-1/gate.md --instructions tests/data/l.ini --backend cpu --op matmul,chain --time-budget" || fail "the first ab is not matmul,chain on cpu: $(sed -n 1p $T/g1.log)"
sed -n 2p $T/g1.log | grep -q -- "--backend cpu-ref,cpu --time-budget" && fail "others ran cpu's matmul again"
grep -q "^gate.sh: changed first: cpu: matmul, chain$" $T/g1.err || fail "no 'changed first' line: $(cat $T/g1.err)"
grep -q "^gate.sh: others: cpu-ref: every family; cpu: elementwise, conv2d, pooling, reduction, attention, collective$" $T/g1.err || fail "no 'others' line"
grep -q '^- \*\*changed first\*\*: cpu: matmul, chain$' $T/g1/gate.md && grep -q '^| changed first | cpu | matmul, chain | 0 | pass |' $T/g1/gate.md || fail "gate.md lacks the changed-first group"
grep -q '^| `kernels/cpu/cpu_gemm.c` | `kernels/cpu/cpu_gemm.c` | cpu | matmul,chain |$' $T/g1/gate.md || fail "gate.md lacks the file's rule"
[ "$(grep -c '^### hybench ab --instructions' $T/g1/gate.md)" -eq 3 ] && grep -q '^## changed first: cpu: matmul, chain$' $T/g1/gate.md || fail "gate.md lacks a group's own table under its heading"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['exit']==0 and [p['phase'] for p in j['phases']]==['first','others','others'], j" $T/g1/gate.json || fail "gate.json"
gate g2 gemm~1 gemm STUB_FAIL_ON="--op matmul,chain"
[ "$(cat $T/g2.rc)" = 1 ] || fail "a failure in the first group: exit $(cat $T/g2.rc), wanted 1"
[ "$(wc -l < $T/g2.log)" -eq 3 ] || fail "the others did not run after the first group failed"
grep -q '^# tools/gate.sh: FAIL$' $T/g2/gate.md || fail "gate.md's verdict"
gate g3 docs~1 docs
[ "$(cat $T/g3.rc)" = 0 ] && [ "$(wc -l < $T/g3.log)" -eq 1 ] || fail "docs diff: exit $(cat $T/g3.rc), $(wc -l < $T/g3.log) ab runs, wanted 0 and 1"
grep -q -- "--backend cpu-ref,cpu --time-budget" $T/g3.log && grep -q "^gate.sh: changed first: nothing$" $T/g3.err || fail "docs diff: not one group of every case: $(cat $T/g3.log)"
# a time gate (no --instructions): the backends from HEAD's `hybench list`, JSON and JUnit per group, one gate.xml
GARGS="--quick" gate g5 gemm~1 gemm
[ "$(cat $T/g5.rc)" = 0 ] && sed -n 1p $T/g5.log | grep -q -- "--json [^ ]*/first-1/gate.json --junit [^ ]*/first-1/gate.xml --quick tests/data/l.ini --backend cpu --op matmul,chain" \
  || fail "time gate: exit $(cat $T/g5.rc), first ab: $(sed -n 1p $T/g5.log)"
grep -q "^gate.sh: others: cpu-ref: every family; cpu: elementwise" $T/g5.err || fail "time gate: the backends are not hybench list's available ones: $(grep others: $T/g5.err)"
[ "$(grep -c '<testsuite name="\(first-1\|others-1\|others-2\)\.hybench.compare.stub"' $T/g5/gate.xml)" -eq 3 ] && python3 -c "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])" $T/g5/gate.xml || fail "time gate: gate.xml does not gather the 3 groups' suites"
t0=$(date +%s)
gate g4 gemm~1 gemm GATE_BUDGET=31 GATE_GRACE=0 STUB_SLEEP_ON="--op matmul" STUB_SLEEP=120
[ "$(cat $T/g4.rc)" = 11 ] || fail "first group stopped at the budget: exit $(cat $T/g4.rc), wanted 11"
[ "$(wc -l < $T/g4.log)" -eq 1 ] || fail "budget spent: the others started anyway"
grep -q '| changed first | cpu | matmul, chain | 11 | INCONCLUSIVE: stopped at the gate' $T/g4/gate.md && grep -q '| others | cpu-ref | every family | 11 | INCONCLUSIVE: not run' $T/g4/gate.md \
  || fail "gate.md does not say the groups were stopped / not run: $(grep '^| ' $T/g4/gate.md | head -5)"
[ $(( $(date +%s) - t0 )) -lt 90 ] || fail "the stopped group was not stopped at the budget"
echo "check_gate_map: PASS"
