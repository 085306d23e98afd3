#!/usr/bin/env python3
"""hybench's matmul against ggml (tools/ggml_bench.sh's ggml_perf.csv), case by case (stdlib only).

Usage:
  tools/ggml_compare.py ratio GGML_PERF.csv RESULTS.jsonl [--ggml-backend CUDA0] [--hb-backend cuda:0]
                        [--source test-backend-ops] [--md OUT.md]
      hybench / ggml time per (weight type, m, n, k). Matched: hybench records of type "case", op matmul,
      status ok, shape {m, n, k} (m = tokens; C[m,n] = A[m,k] W[n,k]^T, harness/core/quant.h) and ggml rows
      of the same m (ggml_perf.csv column m = tokens, n = weight rows, k), with the dtype mapped
      q4_k->q4_K, q5_k->q5_K, q6_k->q6_K, q8_0->q8_0, f32->f32, f16->f16. hybench's time is
      phases.compute.median (seconds); ggml's us_per_call. Without --ggml-backend, cuda:* pairs with CUDA0
      and cpu with CPU. Modes: every mode of a case is listed (resident is the one that keeps the
      weights where ggml keeps them). ratio > 1: hybench is slower.
  tools/ggml_compare.py sql RAW.sql BACKEND [DEVICE] [THREADS] [COMMIT]
      re-reads test-backend-ops' --output sql records of tools/ggml_bench.sh's cases (named
      hb_<type>_n<N>_k<K>_m<M>) as ggml_perf.csv rows (no header), e.g. from a run cut off mid-way.

Exit 0, also when nothing matched; 2 when an input cannot be read (the message names it).
"""
import csv
import json
import math
import re
import sys

DTYPE_TO_GGML = {"q4_k": "q4_K", "q5_k": "q5_K", "q6_k": "q6_K", "q8_0": "q8_0", "f32": "f32", "f16": "f16"}


def sql_rows(path, backend, device="", threads="", commit=""):
    out = []
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError as e:
        sys.exit("ggml_compare: cannot read %s: %s" % (path, e.strerror))
    for line in lines:
        if not line.startswith("INSERT INTO") or " VALUES " not in line:
            continue
        vals = re.findall(r"'((?:[^']|'')*)'", line.split(" VALUES ", 1)[1])
        if len(vals) < 14:
            continue
        params, supported, time_us, runs = vals[4], vals[6], vals[9], vals[13]
        m = re.search(r"name=hb_([A-Za-z0-9_]+?)_n(\d+)_k(\d+)_m(\d+)", params)
        if not m:
            continue
        t, n, k, mm = m.groups()
        us = "%.3f" % float(time_us) if supported == "1" else "unsupported"
        out.append(["test-backend-ops", backend, device.replace(",", ";"), t, n, k, mm, us, "", runs, threads, commit])
    return out


def read_ggml(path, source):
    try:
        rows = list(csv.DictReader(open(path)))
    except OSError as e:
        sys.exit("ggml_compare: cannot read %s: %s" % (path, e.strerror))
    got = {}
    for r in rows:
        if r.get("source") != source:
            continue
        try:
            us = float(r["us_per_call"])
            key = (r["backend"], r["type"], int(r["m"]), int(r["n"]), int(r["k"]))
        except (KeyError, ValueError):
            continue
        got[key] = (us, r.get("device", ""))
    return got


def read_hybench(path):
    recs = []
    try:
        f = open(path)
    except OSError as e:
        sys.exit("ggml_compare: cannot read %s: %s" % (path, e.strerror))
    for i, line in enumerate(f, 1):
        line = line.strip()
        if not line:
            continue
        try:
            r = json.loads(line)
        except ValueError:
            sys.exit("ggml_compare: %s line %d: not JSON" % (path, i))
        if r.get("type") != "case" or r.get("op") != "matmul" or r.get("status") != "ok":
            continue
        sh = r.get("shape") or {}
        if set(sh) - {"m", "n", "k"}:
            continue
        try:
            t = r["phases"]["compute"]["median"]
        except (KeyError, TypeError):
            continue
        if t is None or not math.isfinite(t) or t <= 0:
            continue
        recs.append(r)
    return recs


def ggml_backend_for(hb_backend):
    if hb_backend.startswith("cuda"):
        return "CUDA" + (hb_backend.split(":", 1)[1] if ":" in hb_backend else "0")
    if hb_backend == "cpu":
        return "CPU"
    return None


def ratio(args):
    opts = {"--ggml-backend": None, "--hb-backend": None, "--source": "test-backend-ops", "--md": None}
    pos = []
    i = 0
    while i < len(args):
        if args[i] in opts and i + 1 < len(args):
            opts[args[i]] = args[i + 1]
            i += 2
        elif args[i].startswith("--"):
            sys.exit("ggml_compare: unknown option %s" % args[i])
        else:
            pos.append(args[i])
            i += 1
    if len(pos) != 2:
        sys.exit(__doc__)
    ggml = read_ggml(pos[0], opts["--source"])
    lines = ["| hybench backend | mode | dtype | m (tokens) | n | k | hybench us | ggml backend | ggml us | ratio |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    ratios = []
    unmatched = 0
    for r in read_hybench(pos[1]):
        hb = r.get("backend", "")
        if opts["--hb-backend"] and hb != opts["--hb-backend"]:
            continue
        gb = opts["--ggml-backend"] or ggml_backend_for(hb)
        gt = DTYPE_TO_GGML.get(r.get("dtype"))
        sh = r["shape"]
        key = (gb, gt, sh.get("m"), sh.get("n"), sh.get("k"))
        if gb is None or gt is None or key not in ggml:
            unmatched += 1
            continue
        hus = r["phases"]["compute"]["median"] * 1e6
        gus = ggml[key][0]
        q = hus / gus
        ratios.append(q)
        lines.append("| %s | %s | %s | %d | %d | %d | %.2f | %s | %.2f | %.2f |" % (
            hb, r.get("mode", ""), r.get("dtype"), sh["m"], sh["n"], sh["k"], hus, gb, gus, q))
    if ratios:
        gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        lines.append("")
        lines.append("%d cases matched (%d matmul cases not in the ggml file); within 10%% or faster: %d; "
                     "geometric mean ratio %.3f" % (len(ratios), unmatched, sum(1 for x in ratios if x <= 1.10), gm))
    else:
        lines.append("")
        lines.append("no case matched (%d matmul cases not in the ggml file)" % unmatched)
    text = "\n".join(lines)
    print(text)
    if opts["--md"]:
        open(opts["--md"], "w").write(text + "\n")


def main(argv):
    if len(argv) >= 2 and argv[1] == "sql" and len(argv) >= 4:
        w = csv.writer(sys.stdout, lineterminator="\n")
        for row in sql_rows(*argv[2:7]):
            w.writerow(row)
        return 0
    if len(argv) >= 2 and argv[1] == "ratio":
        ratio(argv[2:])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
