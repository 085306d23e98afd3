#!/usr/bin/env python3
"""synth_nights.py - a synthetic nightly history as results files, for `hybench publish` (tests and the
screenshots of docs/history.md, "The site").

Takes a real results file as the template (default tests/data/cpu_small.jsonl) and writes one results
file a night into OUT/: the template's meta, backend and end records with the night's run id, date and
commit, and a subset of its case records (--cases, spread over the file; the planted case always
included) whose times (every phase's statistics, the raw samples, the pass medians) are multiplied by
the night's factor: exp(N(0, --noise)) per case and night, times 1 + --step from night --step-night on
for the planted case. --machines 2 writes a second machine's nights too (its CPU model renamed, so its
fingerprint differs; no step). Prints the planted case's key, its night and the run id of that night.
Only the standard library (json, random); the same files for the same arguments.

usage: tests/synth_nights.py --out DIR [--template FILE] [--nights 60] [--cases 40] [--step 0.15]
                             [--step-night 40] [--step-key KEY] [--noise 0.02] [--seed 1] [--machines 1]
"""
import argparse
import datetime
import hashlib
import json
import math
import os
import random
import sys

TIME_KEYS = ("min", "max", "mean", "median", "p10", "p90", "mad", "stddev", "ci_lo", "ci_hi")


def scale_case(rec, f):
    """The case record rec (a copy) with every time multiplied by f and every rate divided by it."""
    for ph in (rec.get("phases") or {}).values():
        if isinstance(ph, dict):
            for k in TIME_KEYS:
                if isinstance(ph.get(k), (int, float)):
                    ph[k] = ph[k] * f
    for name, arr in (rec.get("samples") or {}).items():
        if isinstance(arr, list):
            rec["samples"][name] = [x * f if isinstance(x, (int, float)) else x for x in arr]
    for name, arr in (rec.get("pass_medians") or {}).items():
        if isinstance(arr, list):
            rec["pass_medians"][name] = [x * f if isinstance(x, (int, float)) else x for x in arr]
    for k in ("gflops", "gbps", "gflops_total", "gbps_total", "fraction"):
        if isinstance(rec.get(k), (int, float)):
            rec[k] = rec[k] / f
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--template", default="tests/data/cpu_small.jsonl")
    ap.add_argument("--nights", type=int, default=60)
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--step", type=float, default=0.15)
    ap.add_argument("--step-night", type=int, default=40)
    ap.add_argument("--step-key", default=None, help="default: the first ok matmul case on cpu")
    ap.add_argument("--noise", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--machines", type=int, default=1)
    a = ap.parse_args()
    if a.nights < 1 or a.cases < 1 or not 0 <= a.step_night < a.nights or a.machines not in (1, 2):
        ap.error("--nights, --cases >= 1; 0 <= --step-night < --nights; --machines 1 or 2")
    with open(a.template) as fh:
        recs = [json.loads(line) for line in fh if line.strip()]
    meta = next(r for r in recs if r.get("type") == "meta")
    backends = [r for r in recs if r.get("type") == "backend"]
    end = next((r for r in recs if r.get("type") == "end"), {"type": "end", "schema": 1})
    cases = [r for r in recs if r.get("type") == "case" and r.get("status") == "ok"]
    key = a.step_key or next((c["key"] for c in cases if c["op"] == "matmul" and c["backend"] == "cpu"), cases[0]["key"])
    planted = next((c for c in cases if c["key"] == key), None)
    if planted is None:
        sys.exit("synth_nights.py: --step-key %s: no ok case with that key in %s" % (key, a.template))
    stride = max(1, len(cases) // a.cases)
    chosen = cases[::stride][: a.cases]
    if planted not in chosen:
        chosen[-1] = planted
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    start = datetime.datetime(2026, 9, 1, 2, 0, 0)
    step_run = None
    for m in range(a.machines):
        for night in range(a.nights):
            day = start + datetime.timedelta(days=night)
            suffix = "vm" if m == 0 else "vm2"
            run_id = day.strftime("%Y%m%d-%H%M%S-") + suffix
            mt = json.loads(json.dumps(meta))
            mt["run_id"] = run_id
            mt["date"] = day.strftime("%Y-%m-%dT%H:%M:%SZ")
            mt["git_commit"] = hashlib.sha1(("synthetic night %d" % night).encode()).hexdigest()
            mt["host"] = "vm" if m == 0 else "vm2"
            if m == 1 and isinstance(mt.get("cpu"), dict):
                mt["cpu"]["model"] = str(mt["cpu"].get("model", "CPU")) + " (second machine)"
            lines = [mt] + backends
            for c in chosen:
                f = math.exp(rng.gauss(0.0, a.noise))
                if m == 0 and c is planted and night >= a.step_night:
                    f *= 1.0 + a.step
                lines.append(scale_case(json.loads(json.dumps(c)), f))
            e = dict(end)
            for k in ("ok", "cases"):
                if k in e:
                    e[k] = len(chosen)
            for k in ("wrong", "failed", "skipped", "crashed", "no_resource", "timed_out"):
                if k in e:
                    e[k] = 0
            lines.append(e)
            with open(os.path.join(a.out, run_id + ".jsonl"), "w") as fh:
                for r in lines:
                    fh.write(json.dumps(r, separators=(",", ":")) + "\n")
            if m == 0 and night == a.step_night:
                step_run = run_id
    print("planted %s +%g%% from night %d run %s (%d nights, %d cases, %d machine%s in %s)" % (
        key, 100 * a.step, a.step_night, step_run, a.nights, len(chosen), a.machines, "" if a.machines == 1 else "s", a.out))


if __name__ == "__main__":
    main()
