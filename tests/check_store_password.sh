#!/usr/bin/env bash
# check_store_password.sh - no credentials in logs (issue 32 item 6; run by tests/run_tests.sh): with a
# PostgreSQL store that cannot be reached (nothing listens on 127.0.0.1:1), named with its password in
# URI form (percent-encoded special characters) and in key=value form, `hybench history list`,
# `hybench history import`, `hybench trend` and a whole nightly job (tools/nightly.sh, HB_STORE) fail
# (exit 7) with logs that name the store with "***" and never hold the password, decoded or as written.
set -u
cd "$(dirname "$0")/.."
HB=build/hybench
T=build/test-results/store-password
rm -rf "$T"; mkdir -p "$T"
fail() { echo "check_store_password: $*"; exit 1; }
clean() { # log file, secret texts...: none of them in the log, and the mask is
  local f=$1; shift
  for x in "$@"; do grep -qF -- "$x" "$f" && { cat "$f"; fail "$f shows the password ($x)"; }; done
  grep -qF '***' "$f" || { cat "$f"; fail "$f does not name the store with ***"; }
}
U='postgresql://hb:S3cr%40t%3Apw%2F1@127.0.0.1:1/hbhist?connect_timeout=3'
K="host=127.0.0.1 port=1 user=hb password='S3cr@t pw\\'2' dbname=hbhist connect_timeout=3"
i=0
for s in "$U" "$K"; do
  i=$((i + 1))
  $HB history list --store "$s" >$T/list$i.log 2>&1; rc=$?
  [ $rc -eq 7 ] || { cat $T/list$i.log; fail "history list: exit $rc, wanted 7"; }
  $HB history import --store "$s" tests/data/cpu_small.jsonl >$T/import$i.log 2>&1; [ $? -eq 7 ] || fail "history import: not 7"
  HB_STORE="$s" $HB trend --no-plot --out $T/trend >$T/trend$i.log 2>&1; [ $? -eq 7 ] || fail "trend: not 7"
  $HB history where --store "$s" >$T/where$i.log 2>&1 || fail "history where failed"
done
for f in $T/list1.log $T/import1.log $T/trend1.log $T/where1.log; do clean $f 'S3cr@t:pw/1' 'S3cr%40t%3Apw%2F1'; done
for f in $T/list2.log $T/import2.log $T/trend2.log $T/where2.log; do clean $f "S3cr@t pw'2" "S3cr@t pw\\'2"; done
grep -q "cannot connect to postgresql://hb:\*\*\*@127.0.0.1:1/hbhist" $T/list1.log || { cat $T/list1.log; fail "the store is not named"; }
# the nightly job: its run is kept, the import fails (exit 7), and its log holds no password
HB_STORE="$U" HB_HISTORY=$T/hist HB_TREND_OUT=$T/nt HB_BASELINES=$T/none tools/nightly.sh --backend cpu --op add \
  --budget 0.02 --min-samples 3 tests/data/verify_all.ini >$T/nightly.log 2>&1; rc=$?
[ $rc -eq 7 ] || { cat $T/nightly.log; fail "nightly with an unreachable store: exit $rc, wanted 7"; }
[ "$(ls $T/hist/*.jsonl 2>/dev/null | wc -l)" -eq 1 ] || fail "nightly did not keep its run"
clean $T/nightly.log 'S3cr@t:pw/1' 'S3cr%40t%3Apw%2F1'
echo "check_store_password: ok"
