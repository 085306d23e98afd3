#!/bin/sh
# check_typed_records.sh - analysis/ and report/ read records as structs (results/record.h), never by
# JSON key: in harness/analysis/ and harness/report/ no call of the string-key record accessors
# (hb_rec_str, hb_rec_num, hb_case_phase, hb_run_meta, hb_run_cpu_model) and no json_object_get in
# analysis/. report/ still builds its own document and summary as JSON (doc.c renders the blocks,
# the question files read back the summary rows they built, and a few JSON objects serve as maps):
# those json_object_get calls are not record reads, and their number may only go down: the limit
# below is the count left when the records became structs (report/: 100). Prints each offending
# line (or the count) and exits 1; 0 when clean.
cd "$(dirname "$0")/.." || exit 2
REPORT_LIMIT=100
bad=0
acc=$(grep -n -E '\b(hb_rec_str|hb_rec_num|hb_case_phase|hb_run_meta|hb_run_cpu_model) *\(' harness/analysis/*.c harness/report/*.c)
if [ -n "$acc" ]; then
    printf '%s\n' "$acc" | sed 's/^/check_typed_records: a record read by key (use the structs of results\/record.h): /'
    bad=1
fi
ana=$(grep -n 'json_object_get' harness/analysis/*.c)
if [ -n "$ana" ]; then
    printf '%s\n' "$ana" | sed 's/^/check_typed_records: json_object_get in analysis\/ (read the structs of results\/record.h): /'
    bad=1
fi
n=$(cat harness/report/*.c | grep -o 'json_object_get' | wc -l)
if [ "$n" -gt "$REPORT_LIMIT" ]; then
    echo "check_typed_records: $n json_object_get in harness/report/, more than the $REPORT_LIMIT left for the report's own JSON: a record is read from its struct (results/record.h), not by key"
    bad=1
fi
exit $bad
