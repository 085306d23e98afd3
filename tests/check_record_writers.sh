#!/bin/sh
# check_record_writers.sh - records are written from their structs (results/record.h, results/write.c
# hb_rec_case_json), not built as JSON where they are measured: the calls that build JSON objects
# (json_object_set, json_object_set_new, json_pack, ...) in harness/measure/ and harness/cli/ may
# only go down. The limits are the counts left when the case and plan records began to be filled as
# structs where they are measured (sample.c's op cases with their timer agreement and energy window,
# chain.c's chain cases, a served round's members, merge.c's pass merge, replay.c's plan records, the
# end records of runner.c, serve.c and `plan --replay`, the backend records and a later pass's
# pass_case / pass_backend), then the meta record (meta.c hb_meta_fill, clockprobe.c's host_clock) and
# hybench ab's objects (cli/ab_account.c: the merged files' meta.ab, the JSON verdict's ab):
# what is left builds a case record's base fields, JSON maps kept as JSON (a model's weights, a plan's
# weight bytes, callgrind's events, the end record's backends), the host ceilings sent to the parent,
# and cli/'s other writers. Lower the limits as more writers move to results/. Prints the counts and
# exits 1 when one is over its limit.
cd "$(dirname "$0")/.." || exit 2
MEASURE_LIMIT=18
CLI_LIMIT=3
bad=0
count() { cat "$1"/*.c | grep -o -E 'json_object_set[a-z_]*|json_pack[a-z_]*' | wc -l; }
m=$(count harness/measure)
c=$(count harness/cli)
echo "check_record_writers: JSON built in harness/measure/: $m (limit $MEASURE_LIMIT), harness/cli/: $c (limit $CLI_LIMIT)"
if [ "$m" -gt "$MEASURE_LIMIT" ]; then
    grep -c -E 'json_object_set|json_pack' harness/measure/*.c | grep -v ':0$' | sed 's/^/  /'
    echo "check_record_writers: $m JSON-building calls in harness/measure/, more than $MEASURE_LIMIT: fill the record's struct (results/record.h, HB_REC_SET) and write it with results/write.c"
    bad=1
fi
if [ "$c" -gt "$CLI_LIMIT" ]; then
    echo "check_record_writers: $c JSON-building calls in harness/cli/, more than $CLI_LIMIT: write records from their structs (results/write.c)"
    bad=1
fi
exit $bad
