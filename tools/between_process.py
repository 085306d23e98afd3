#!/usr/bin/env python3
"""Between-process differences of the same binary (docs/compare.md, "Between-process noise on a GPU").

    tools/between_process.py RUN1.jsonl RUN2.jsonl [RUN3.jsonl ...] [--metric compute|total] [--top N]

Each file is one `hybench run` process of the same build on the same machine, one after the other.
For every case key that is ok in every file: the per-process medians of samples.<metric>, the spread
max/min - 1, and what else differed between the processes in the records: the implementation and the
algorithm the backend chose (`impl`, `extra.algo`), the SM clock read with the case (`extra.sm_clock_mhz`).
Prints, per backend, how many cases moved by more than 2% and 5%, how many of those changed algorithm,
and the cases that moved most, with the reason where one is in the records. Needs only the standard
library. Exit status 0, or 2 on a file that is not a results file.
"""
import argparse
import json
import statistics
import sys


def load(path):
    cases = {}
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                if r.get("type") == "case" and r.get("status") == "ok":
                    cases[r["key"]] = r
    except (OSError, ValueError) as e:
        sys.exit("between_process: %s: %s" % (path, e))
    return cases


def med(r, metric):
    s = (r.get("samples") or {}).get(metric)
    if s:
        return statistics.median(s)
    p = (r.get("phases") or {}).get(metric) or {}
    return p.get("median")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--metric", default="compute", choices=["compute", "total"])
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    if len(a.files) < 2:
        sys.exit("between_process: name at least two results files")
    runs = [load(p) for p in a.files]
    keys = set(runs[0])
    for r in runs[1:]:
        keys &= set(r)
    per_backend = {}
    rows = []
    for k in sorted(keys):
        recs = [r[k] for r in runs]
        m = [med(r, a.metric) for r in recs]
        if any(x is None or x <= 0 for x in m):
            continue
        spread = max(m) / min(m) - 1
        # impl names the choice (cuDNN engine and knobs, cuBLAS, own kernel); extra.algo adds the
        # timed figures of the choice, which differ in every process
        algos = [(r.get("impl") or (r.get("extra") or {}).get("algo") or "") for r in recs]
        clocks = [(r.get("extra") or {}).get("sm_clock_mhz") for r in recs]
        changed = len(set(algos)) > 1
        b = recs[0]["backend"]
        s = per_backend.setdefault(b, {"cases": 0, "over2": 0, "over5": 0, "over2_algo": 0, "algo_changed": 0})
        s["cases"] += 1
        s["over2"] += spread > 0.02
        s["over5"] += spread > 0.05
        s["algo_changed"] += changed
        s["over2_algo"] += spread > 0.02 and changed
        rows.append((spread, k, m, algos, clocks, changed))
    print("%d processes, %d cases ok in every one, metric %s" % (len(runs), len(rows), a.metric))
    print("| backend | cases | moved > 2% | moved > 5% | algorithm differed | moved > 2% with the algorithm |")
    print("| --- | --- | --- | --- | --- | --- |")
    for b, s in sorted(per_backend.items()):
        print("| %s | %d | %d | %d | %d | %d |" % (b, s["cases"], s["over2"], s["over5"], s["algo_changed"], s["over2_algo"]))
    print("\nMoved most:\n")
    print("| case | spread | medians (us) | algorithm per process | SM clock (MHz) |")
    print("| --- | --- | --- | --- | --- |")
    for spread, k, m, algos, clocks, changed in sorted(rows, reverse=True)[: a.top]:
        al = " / ".join(algos) if changed else (algos[0] or "-") + " (same)"
        print("| %s | %+.1f%% | %s | %s | %s |" % (k, 100 * spread, " ".join("%.2f" % (x * 1e6) for x in m), al[:200],
                                                  " ".join(str(c) for c in clocks)))


if __name__ == "__main__":
    main()
