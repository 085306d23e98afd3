#!/usr/bin/env bash
# check_incomparable.sh - nothing is compared silently (issue 32 item 4; run by tests/run_tests.sh):
# `hybench compare X X`, `hybench baseline set X --force` and `hybench ab --redecide` (a round's file)
# exit 3 and name the file X when X holds only a meta record, has no meta record, or says
# "schema": 999; the good file they are made from still compares (exit 0, or 11: inconclusive with its 3 samples).
set -u
cd "$(dirname "$0")/.."
HB=build/hybench
T=build/test-results/incomparable
rm -rf "$T"; mkdir -p "$T"
fail() { echo "check_incomparable: $*"; exit 1; }
G=tests/data/results_good.jsonl
head -n 1 $G > $T/meta_only.jsonl
grep -v '"type":"meta"' $G > $T/no_meta.jsonl
sed '1s/"schema":1/"schema":999/' $G > $T/schema999.jsonl
grep -q '"schema":999' $T/schema999.jsonl || fail "could not make the schema-999 file"
# the good file compares with itself: exit 11 (inconclusive: 3 samples a case cannot exclude a 5% slowdown), not 3
$HB compare $G $G --quiet 2>$T/good.err; rc=$?
[ $rc -eq 0 ] || [ $rc -eq 11 ] || { cat $T/good.err; fail "the good file does not compare with itself (exit $rc)"; }
for f in meta_only no_meta schema999; do
  X=$T/$f.jsonl
  $HB compare $X $X --quiet 2>$T/$f.compare.err; rc=$?
  [ $rc -eq 3 ] || { cat $T/$f.compare.err; fail "compare $f $f: exit $rc, wanted 3"; }
  grep -q "incomparable: $X: " $T/$f.compare.err || { cat $T/$f.compare.err; fail "compare $f: the file is not named"; }
  $HB compare $G $X --quiet --force 2>$T/$f.force.err; rc=$?
  [ $rc -eq 3 ] || { cat $T/$f.force.err; fail "compare --force GOOD $f: exit $rc, wanted 3"; }
  $HB baseline set $X --force --dir $T/baselines 2>$T/$f.baseline.err; rc=$?
  [ $rc -eq 3 ] || { cat $T/$f.baseline.err; fail "baseline set $f --force: exit $rc, wanted 3"; }
  grep -q "$X: " $T/$f.baseline.err || { cat $T/$f.baseline.err; fail "baseline set $f: the file is not named"; }
  mkdir -p $T/ab-$f/rounds; cp $G $T/ab-$f/rounds/base-r01.jsonl; cp $X $T/ab-$f/rounds/cur-r01.jsonl
  $HB ab --redecide $T/ab-$f --quiet 2>$T/$f.ab.err; rc=$?
  [ $rc -eq 3 ] || { cat $T/$f.ab.err; fail "ab with $f as a round: exit $rc, wanted 3"; }
  grep -q "incomparable: $T/ab-$f/rounds/cur-r01.jsonl: " $T/$f.ab.err || { cat $T/$f.ab.err; fail "ab $f: the file is not named"; }
done
[ ! -e $T/baselines/h.jsonl ] || fail "a refused file became a baseline"
echo "check_incomparable: ok"
