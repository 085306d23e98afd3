#!/usr/bin/env bash
# check_serve.sh - served rounds (`run --serve-rounds`, measure/serve.h; `hybench ab --serve`), run by
# tests/run_tests.sh:
#  1. a served run of 3 rounds writes 3 round files whose records have the shape of a plain
#     `run --passes 1`'s (the same record types, case keys and fields per case, "served" aside), and
#     no round after the set-up repeats it: every prepared case's "served" says 0 set-ups and 0
#     references obtained in its round, the process's set-up count the same in every round, and its
#     wall_s.setup 0; every round after the first moved the buffers (served.placements = the round);
#     a chain case is set up in every round and says so;
#  2. `hybench ab` A/A serves its rounds (one set-up per build, said on stderr and in gate.json);
#  3. an older build whose `run` lacks --serve-rounds: the gate falls back to a run per round, says so;
#  4. usage: --serve-rounds with --passes 2, --serve-cases alone.
set -u
cd "$(dirname "$0")/.."
HB=build/hybench
T=build/test-results/serve
rm -rf "$T"; mkdir -p "$T"
fail() { echo "check_serve: $*"; exit 1; }
L="--backend cpu-ref,cpu --budget 0.01 tests/data/ab_small.ini tests/data/serve_chain.ini"
# 1. served against plain
$HB run --serve-rounds 3 --out $T/s.jsonl $L > $T/s.out 2> $T/s.err || { cat $T/s.err; fail "served run failed"; }
$HB run --passes 1 --repetitions 1 --out $T/p.jsonl $L > /dev/null 2> $T/p.err || { cat $T/p.err; fail "plain run failed"; }
python3 - "$T" <<'PY' || fail "served records"
import json, sys
d = sys.argv[1]
def load(f):
    return [json.loads(l) for l in open(f)]
plain = load(d + "/p.jsonl")
ptypes = sorted({r["type"] for r in plain})
pcases = {r["key"]: r for r in plain if r["type"] == "case"}
setups = {}
for r in (1, 2, 3):
    recs = load("%s/s-r%02d.jsonl" % (d, r))
    assert recs[0]["type"] == "meta" and recs[0]["serve"]["round"] == r, recs[0].get("serve")
    assert recs[-1]["type"] == "end" and recs[-1]["cases"] == len(pcases), recs[-1]
    assert sorted({x["type"] for x in recs}) == ptypes, (r, ptypes)
    cases = {x["key"]: x for x in recs if x["type"] == "case"}
    assert set(cases) == set(pcases), (r, set(cases) ^ set(pcases))
    chains = 0
    for k, c in cases.items():
        p = pcases[k]
        assert c["status"] == p["status"], (k, c["status"], p["status"])
        assert set(c) - {"served"} == set(p), (k, set(c) ^ set(p))
        sv = c["served"]
        assert sv["round"] == r, (k, sv)
        if c["op"] == "chain":
            chains += 1
            assert sv["prepared_per_round"] and "chain" in sv["why"], (k, sv)
            continue
        assert not sv["prepared_per_round"], (k, sv)
        assert sv["setups_in_round"] == 0 and sv["references_in_round"] == 0, (k, sv)
        assert sv["placements"] == r, (k, sv)   # moved to new memory before every round after the first
        if c["status"] == "ok":
            assert c["wall_s"]["setup"] == 0 and sv["setup_s"] > 0 and c["samples"]["total"], (k, c["wall_s"], sv)
        setups.setdefault((c["backend"], r), set()).add(sv["setups"] - 0)
    assert chains > 0, "no chain case"
# a backend process's set-up count is the same at the end of every round: no round set anything up
# (chains, measured whole, add theirs: compare the smallest per round, before any chain of the round)
for b in {b for b, _ in setups}:
    mins = [min(setups[(b, r)]) for r in (1, 2, 3)]
    assert len(set(mins)) == 1 or b == "cpu-ref" and False, (b, mins)
PY
# 2. ab A/A, served
$HB ab $HB $HB --serve --rounds 3 --min-rounds 3 --out-dir $T/aa --json $T/aa/gate.json --quiet --backend cpu --budget 0.01 tests/data/ab_small.ini 2> $T/aa.err
rc=$?; [ $rc -eq 0 ] || [ $rc -eq 11 ] || { cat $T/aa.err; fail "served A/A: exit $rc, wanted 0 or 11"; }
grep -q "served rounds: each build set every case up once" $T/aa.err || { cat $T/aa.err; fail "served A/A: no served rounds"; }
[ "$(ls $T/aa/rounds/*-r0?.jsonl | wc -l)" -eq 6 ] || fail "served A/A: wanted 6 round files"
python3 - "$T/aa" <<'PY' || fail "served A/A: gate.json"
import json, sys
g = json.load(open(sys.argv[1] + "/gate.json"))
assert g["ab"]["served"] is True and g["ab"]["serve_setup_s"]["base"] > 0, g["ab"]
assert g["ab"]["lockstep_rounds"] == 3, g["ab"]
PY
grep -q "served run per build that set every case up once" $T/aa/base.jsonl || grep -q "served" $T/aa/gate.json || fail "served A/A: method"
# 3. an older build: `run --help` without --serve-rounds
printf '#!/bin/sh\nif [ "$1" = run ] && [ "$2" = --help ]; then "%s" run --help | grep -v serve; exit 0; fi\nexec "%s" "$@"\n' "$PWD/$HB" "$PWD/$HB" > $T/oldbuild
chmod +x $T/oldbuild
$HB ab $T/oldbuild $HB --serve --rounds 2 --min-rounds 2 --out-dir $T/old --json $T/old/gate.json --quiet --backend cpu --budget 0.01 tests/data/ab_small.ini 2> $T/old.err
rc=$?; [ $rc -eq 0 ] || [ $rc -eq 11 ] || { cat $T/old.err; fail "older build: exit $rc"; }
grep -q 'the base build has no `run --serve-rounds`' $T/old.err || { cat $T/old.err; fail "older build: the fallback is not said"; }
grep -q '"served": false' $T/old/gate.json || fail "older build: gate.json says served"
# 4. usage
out=$($HB run --serve-rounds 2 --passes 2 --out $T/u.jsonl $L 2>&1); [ $? -eq 2 ] && echo "$out" | grep -q "passes" || fail "--serve-rounds --passes 2 accepted: $out"
out=$($HB run --serve-cases $T/x.txt --out $T/u.jsonl $L 2>&1); [ $? -eq 2 ] && echo "$out" | grep -q "serve-rounds" || fail "--serve-cases alone accepted: $out"
exit 0
