#!/usr/bin/env python3
"""hybench's collective cases against nccl-tests, size by size (stdlib only).

Usage:
  tools/coll_vs_nccl_tests.py NCCL_TESTS RESULTS.jsonl [RESULTS2.jsonl ...] [--md OUT.md]

NCCL_TESTS   a folder of nccl-tests outputs (tools/nccl_tests.sh writes <op>_perf_<dtype>.txt), one such
             .txt file, or a .tar/.tgz/.tar.gz/.tar.xz of the folder (what a device call brings back)
RESULTS      hybench JSONL results; with several files (one per rank of one launch, docs/collectives.md)
             a case's time is the mean over the files that have it, as nccl-tests' -a 1 averages ranks
--md OUT.md  also write the Markdown to OUT.md

nccl-tests' data lines (src/util.cu, writeBenchmarkLinePreamble/Body), whitespace-separated:
  size(B) count(elements) type redop root | out-of-place: time(us) algbw(GB/s) busbw(GB/s) #wrong |
  in-place: time algbw busbw #wrong [| timestamp with -S 1]; with -I 1 each placement has 4 more columns
  (i_min i_max i_p99 i_cv%). size = max(send, recv) bytes: for all_gather and reduce_scatter the total
  (count x element size x ranks, count the per-rank count), as hybench's collective.size_bytes. #wrong is
  N/A without -c. Lines starting with # and anything else are skipped. time is the host wall time of -n
  back-to-back calls / n (averaged over ranks); hybench's time_s is the median of single calls timed with
  device events.

Matched: op, dtype (float/half/bfloat16 = f32/f16/bf16), size in bytes, in place or not, ranks; hybench
records of type "case", mode "resident", status "ok", collective.path "nccl"; nccl-tests redop sum/none,
root 0/-1.

Targets (verdict column): at sizes >= 256 MiB hybench's busbw >= 0.95 x nccl-tests'; at the smallest size of
each op/dtype/placement series both have (8 B where both have it) hybench's time within 20% or 2 us of
nccl-tests' (faster always meets it); other sizes: no target.

Exit 0, also when nothing matched; 2 when an input cannot be read (the message names it).
"""
import argparse
import io
import json
import math
import os
import re
import sys
import tarfile

DTYPES = {"float": "f32", "float32": "f32", "half": "f16", "float16": "f16", "bfloat16": "bf16",
          "double": "f64"}
BIG = 256 << 20          # bandwidth target from this size on
BW_RATIO = 0.95
LAT_REL, LAT_ABS_US = 0.20, 2.0


class InputError(Exception):
    pass


def fnum(tok):
    """A nccl-tests number (%.2f, %.1f, %.0f or %.1e); None for N/A or garbage."""
    try:
        v = float(tok)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def parse_nccl_text(text, name):
    """Rows of one nccl-tests output: dicts with op, dtype, size, count, ranks, inplace, time_us,
    algbw, busbw, wrong. Returns (rows, info)."""
    info = {"file": name, "version": None, "op": None, "ranks": None, "skipped_lines": 0}
    rank_lines = 0
    nthread = ngpus = None
    per_iter = False
    raw = []
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            m = re.match(r"#\s*nccl-tests version\s+(\S+)(.*)", s)
            if m:
                info["version"] = (m.group(1) + m.group(2)).strip()
            m = re.match(r"#\s*Collective test starting:\s*(\S+)", s)
            if m:
                info["op"] = re.sub(r"_perf.*$", "", m.group(1))
            m = re.match(r"#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)", s)
            if m:
                nthread, ngpus = int(m.group(1)), int(m.group(2))
            if re.match(r"#\s+Rank\s+\d+\s+Group\s+\d+", s):
                rank_lines += 1
            if "i_min" in s:
                per_iter = True
            continue
        toks = s.split()
        if len(toks) < 5 or not (toks[0].isdigit() and toks[1].isdigit()) or not re.fullmatch(r"-?\d+", toks[4]):
            info["skipped_lines"] += 1   # NCCL WARN/INFO lines, errors, anything else
            continue
        raw.append(toks)
    if info["op"] is None:  # from the file name: all_reduce_perf_float.txt
        m = re.match(r"(all_reduce|all_gather|reduce_scatter|broadcast|reduce|alltoall|gather|scatter|sendrecv)",
                     os.path.basename(name))
        info["op"] = m.group(1) if m else None
    if rank_lines:
        info["ranks"] = rank_lines
    elif nthread and ngpus:
        info["ranks"] = nthread * ngpus
    width = 8 if per_iter else 4
    rows = []
    for toks in raw:
        if len(toks) < 5 + 2 * width:
            info["skipped_lines"] += 1
            continue
        size, count, typ, redop, root = int(toks[0]), int(toks[1]), toks[2], toks[3], int(toks[4])
        if size == 0 or redop not in ("sum", "none") or root not in (0, -1):
            continue
        for inplace, base in ((False, 5), (True, 5 + width)):
            t, alg, bus = fnum(toks[base]), fnum(toks[base + 1]), fnum(toks[base + 2])
            if t is None or t <= 0:
                continue
            wrong = fnum(toks[base + 3])
            rows.append({"op": info["op"], "dtype": DTYPES.get(typ, typ), "size": size, "count": count,
                         "ranks": info["ranks"], "inplace": inplace, "time_us": t, "algbw": alg,
                         "busbw": bus, "wrong": wrong, "file": name})
    return rows, info


def read_nccl_tests(path):
    """(rows, infos) from a folder, a .txt file or a tarball."""
    texts = []
    try:
        if os.path.isdir(path):
            for fn in sorted(os.listdir(path)):
                if fn.endswith(".txt") and fn not in ("summary.txt", "topo.txt"):
                    with open(os.path.join(path, fn), encoding="utf-8", errors="replace") as f:
                        texts.append((fn, f.read()))
        elif path.endswith((".tar", ".tgz", ".tar.gz", ".tar.xz", ".tar.bz2")):
            with tarfile.open(path) as tf:
                for m in sorted(tf.getmembers(), key=lambda m: m.name):
                    base = os.path.basename(m.name)
                    if m.isfile() and base.endswith(".txt") and base not in ("summary.txt", "topo.txt"):
                        texts.append((base, tf.extractfile(m).read().decode("utf-8", "replace")))
        else:
            with open(path, encoding="utf-8", errors="replace") as f:
                texts.append((os.path.basename(path), f.read()))
    except (OSError, tarfile.TarError) as e:
        raise InputError("cannot read nccl-tests output %s: %s" % (path, e))
    rows, infos = [], []
    for name, text in texts:
        r, info = parse_nccl_text(text, name)
        rows += r
        infos.append(info)
    return rows, infos


def read_hybench(paths):
    """Matched-candidate hybench cases keyed (op, dtype, size, inplace, ranks) -> dict; plus counts."""
    per_key = {}      # key -> list of (file index, record) : one per file (last record wins)
    stats = {"records": 0, "collective": 0, "not_ok": {}, "bad_lines": 0, "other_mode": 0, "other_path": 0}
    for fi, path in enumerate(paths):
        try:
            f = open(path, encoding="utf-8", errors="replace")
        except OSError as e:
            raise InputError("cannot read hybench results %s: %s" % (path, e))
        with f:
            seen = {}
            try:
                lines = f.readlines()
            except OSError as e:
                raise InputError("cannot read hybench results %s: %s" % (path, e))
            for line in lines:
                line = line.strip()
                if not line:
                    continue
                try:
                    r = json.loads(line)
                except ValueError:
                    stats["bad_lines"] += 1
                    continue
                if not isinstance(r, dict) or r.get("type") != "case":
                    continue
                stats["records"] += 1
                coll = r.get("collective")
                if r.get("family") != "collective" and not isinstance(coll, dict):
                    continue
                if str(r.get("backend", "")).startswith("cpu"):
                    continue   # the cpu backend skips collectives (its share is the host path)
                stats["collective"] += 1
                if r.get("mode") != "resident":
                    stats["other_mode"] += 1
                    continue
                shape = r.get("shape") or {}
                if not isinstance(coll, dict):
                    coll = {}
                path_ = coll.get("path", {0: "nccl", 1: "host", 2: "peer"}.get(shape.get("path", 0)))
                if path_ != "nccl":
                    stats["other_path"] += 1
                    continue
                st = r.get("status")
                if st != "ok":
                    stats["not_ok"][st] = stats["not_ok"].get(st, 0) + 1
                    continue
                try:
                    # the record's size_bytes is a JSON real written with 7 significant digits
                    # (1073742000 for 1 GiB): the exact size comes from the shape (count n per rank,
                    # element size, and the ranks for all_gather and reduce_scatter)
                    es = {"f32": 4, "f16": 2, "bf16": 2}.get(r.get("dtype"))
                    if es and shape.get("n") is not None:
                        size = int(shape["n"]) * es
                        if r.get("op") in ("all_gather", "reduce_scatter"):
                            size *= int(coll.get("ranks", shape.get("ranks", 1)))
                    else:
                        size = int(round(float(coll["size_bytes"])))
                    t = float(coll["time_s"])
                except (KeyError, TypeError, ValueError):
                    stats["bad_lines"] += 1
                    continue
                if not (t > 0 and math.isfinite(t)):
                    continue
                inplace = bool(coll.get("in_place", bool(shape.get("inplace", 0))))
                ranks = coll.get("ranks", shape.get("ranks"))
                key = (r.get("op"), r.get("dtype"), size, inplace, int(ranks) if ranks is not None else None)
                seen[key] = r
            for key, r in seen.items():
                per_key.setdefault(key, []).append((fi, r))
    out = {}
    for key, lst in per_key.items():
        ts = [float(r["collective"]["time_s"]) for _, r in lst]
        t = sum(ts) / len(ts)
        c = lst[-1][1]["collective"]
        size = key[2]
        factor = c.get("busbw_factor")
        if factor is None:
            alg, bus = c.get("algbw_gbps"), c.get("busbw_gbps")
            factor = (bus / alg) if alg and bus is not None else None
        algbw = size / t / 1e9
        out[key] = {"time_us": t * 1e6, "algbw": algbw,
                    "busbw": algbw * factor if factor is not None else c.get("busbw_gbps"),
                    "files": len(lst), "n": (lst[-1][1].get("shape") or {}).get("n")}
    return out, stats


def fmt_size(b):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div and b % div == 0:
            return "%d %s" % (b // div, unit)
    return "%d B" % b


def fmt(v, nd=2):
    if v is None:
        return "-"
    if v != 0 and abs(v) < 0.01:
        return "%.2e" % v
    return "%.*f" % (nd, v)


def compare(nt_rows, hb):
    """Table rows (dicts) for every nccl-tests row that hybench has."""
    nt = {}
    for r in nt_rows:
        nt[(r["op"], r["dtype"], r["size"], r["inplace"], r["ranks"])] = r   # a later file wins
    matched = sorted(set(nt) & set(hb), key=lambda k: (str(k[0]), str(k[1]), k[3], k[4] or 0, k[2]))
    smallest = {}
    for k in matched:
        s = (k[0], k[1], k[3], k[4])
        smallest[s] = min(smallest.get(s, k[2]), k[2])
    out = []
    for k in matched:
        a, b = nt[k], hb[k]
        # hybench busbw / nccl-tests busbw, from the times: same size and same factor, so the ratio is the
        # same, and nccl-tests prints its time with more digits than its busbw (0.00 GB/s below ~5 KB);
        # with one rank busbw is 0 for both (no byte crosses a link) and the time ratio still holds.
        ratio = a["time_us"] / b["time_us"]
        bus_ratio = None
        if a["busbw"] and a["busbw"] >= 10 and b["busbw"]:   # >= 4 significant digits printed
            bus_ratio = b["busbw"] / a["busbw"]
        target = verdict = None
        if k[2] >= BIG:
            target = "bw"
            verdict = ratio >= BW_RATIO
        elif k[2] == smallest[(k[0], k[1], k[3], k[4])]:
            target = "lat"
            verdict = (b["time_us"] - a["time_us"]) <= max(LAT_REL * a["time_us"], LAT_ABS_US)
        out.append({"key": k, "nt": a, "hb": b, "ratio": ratio, "bus_ratio": bus_ratio, "target": target,
                    "ok": verdict})
    return out, set(nt) - set(hb), set(hb) - set(nt)


def render(rows, nt_only, hb_only, infos, hb_stats, hb_paths, nt_path):
    L = []
    vers = sorted({i["version"] for i in infos if i["version"]})
    ranks = sorted({k[4] for k in [r["key"] for r in rows]} | {i["ranks"] for i in infos if i["ranks"]},
                   key=lambda x: (x is None, x))
    L.append("## hybench collectives vs nccl-tests")
    L.append("")
    L.append("nccl-tests: %s (%s; %d output files)" % (nt_path, ", ".join(vers) or "version unknown", len(infos)))
    L.append("hybench: %s (resident, NCCL path; %d files: time averaged over them)" % (", ".join(hb_paths), len(hb_paths)))
    L.append("ranks: %s. nccl-tests time = wall time of back-to-back calls / calls; hybench = median single call "
             "(device events). ratio = hybench busbw / nccl-tests busbw, computed as nccl-tests time / hybench time (same size, same factor)." %
             (", ".join(str(x) for x in ranks) or "?"))
    L.append("Targets: >= %s: ratio >= %.2f; smallest size of each series: hybench time within %d%% or %.0f us." %
             (fmt_size(BIG), BW_RATIO, int(LAT_REL * 100), LAT_ABS_US))
    L.append("")
    multi_ranks = len({r["key"][4] for r in rows}) > 1
    hdr = ["op", "dtype", "size", "place"] + (["ranks"] if multi_ranks else []) + \
          ["nccl-tests time (us)", "nccl-tests busbw (GB/s)", "hybench time (us)", "hybench busbw (GB/s)",
           "ratio", "verdict"]
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "|".join(" --- " for _ in hdr) + "|")
    for r in rows:
        k, a, b = r["key"], r["nt"], r["hb"]
        if r["target"] is None:
            v = "-"
        elif r["target"] == "bw":
            v = ("ok" if r["ok"] else "MISS") + " (bw)"
        else:
            v = ("ok" if r["ok"] else "MISS") + " (lat)"
        if a.get("wrong"):
            v += " nccl-tests #wrong=%g" % a["wrong"]
        ratio = fmt(r["ratio"], 3)
        cells = [k[0], k[1], fmt_size(k[2]), "in" if k[3] else "out"] + ([str(k[4])] if multi_ranks else []) + \
                [fmt(a["time_us"]), fmt(a["busbw"]), fmt(b["time_us"]), fmt(b["busbw"]), ratio, v]
        L.append("| " + " | ".join(cells) + " |")
    L.append("")
    tgt = [r for r in rows if r["target"]]
    bw = [r for r in tgt if r["target"] == "bw"]
    lat = [r for r in tgt if r["target"] == "lat"]
    L.append("**Summary: %d of %d rows with a target meet it** (bandwidth >= %s: %d of %d; latency at the "
             "smallest size: %d of %d); %d rows matched, %d without a target." %
             (sum(1 for r in tgt if r["ok"]), len(tgt), fmt_size(BIG), sum(1 for r in bw if r["ok"]), len(bw),
              sum(1 for r in lat if r["ok"]), len(lat), len(rows), len(rows) - len(tgt)))
    notes = []
    if nt_only:
        notes.append("%d nccl-tests rows without a hybench case (e.g. %s)" %
                     (len(nt_only), ", ".join(_k(k) for k in sorted(nt_only, key=str)[:3])))
    if hb_only:
        notes.append("%d hybench cases without a nccl-tests row (e.g. %s)" %
                     (len(hb_only), ", ".join(_k(k) for k in sorted(hb_only, key=str)[:3])))
    odd = [r for r in rows if r["bus_ratio"] is not None and abs(r["bus_ratio"] / r["ratio"] - 1) > 0.01]
    if odd:
        notes.append("busbw factor differs from nccl-tests' (busbw ratio != time ratio by > 1%%) in %d rows, e.g. %s: "
                     "busbw ratio %.3f, time ratio %.3f" % (len(odd), _k(odd[0]["key"]), odd[0]["bus_ratio"], odd[0]["ratio"]))
    if hb_stats["not_ok"]:
        notes.append("hybench resident NCCL cases not ok: " +
                     ", ".join("%s %d" % (s, n) for s, n in sorted(hb_stats["not_ok"].items(), key=str)))
    if hb_stats["bad_lines"]:
        notes.append("%d unreadable hybench lines skipped" % hb_stats["bad_lines"])
    skipped = sum(i["skipped_lines"] for i in infos)
    if skipped:
        notes.append("%d non-data lines in nccl-tests outputs skipped" % skipped)
    if not infos:
        notes.append("no nccl-tests output found")
    for n in notes:
        L.append("- " + n)
    return "\n".join(L) + "\n"


def _k(k):
    return "%s %s %s %s ranks=%s" % (k[0], k[1], fmt_size(k[2]), "in" if k[3] else "out", k[4])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("nccl_tests", help="nccl-tests output folder, .txt file or tarball")
    ap.add_argument("results", nargs="+", help="hybench results JSONL (one per rank)")
    ap.add_argument("--md", help="also write the Markdown here")
    a = ap.parse_args(argv)
    try:
        if not os.path.exists(a.nccl_tests):
            raise InputError("cannot read nccl-tests output %s: no such file or folder" % a.nccl_tests)
        nt_rows, infos = read_nccl_tests(a.nccl_tests)
        hb, hb_stats = read_hybench(a.results)
    except InputError as e:
        print("coll_vs_nccl_tests: %s" % e, file=sys.stderr)
        return 2
    if not nt_rows:
        print("coll_vs_nccl_tests: warning: no nccl-tests data lines in %s" % a.nccl_tests, file=sys.stderr)
    rows, nt_only, hb_only = compare(nt_rows, hb)
    md = render(rows, nt_only, hb_only, infos, hb_stats, a.results, a.nccl_tests)
    sys.stdout.write(md)
    if a.md:
        try:
            with io.open(a.md, "w", encoding="utf-8") as f:
                f.write(md)
        except OSError as e:
            print("coll_vs_nccl_tests: cannot write %s: %s" % (a.md, e), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
