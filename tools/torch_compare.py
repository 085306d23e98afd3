#!/usr/bin/env python3
"""torch_compare.py - time exactly the cases of a hybench results file with PyTorch on the same machine
and compare: hybench's compute median against PyTorch's median per call (issue 33's yardstick).

Usage: tools/torch_compare.py RESULTS.jsonl [--out TABLE.md] [--json OUT.json] [--min-time S]
                              [--backends cuda,cpu] [--dry-run]

Which cases: every ok case of backend cuda:* (mode resident: the data lives on the GPU, as PyTorch's
tensors do) and cpu (mode f32: f32 host data, no conversion), dtype f32, tf32, f16 or bf16. Cases of
other backends, modes or ops (chain, collectives) are listed as not compared, with the reason.

What PyTorch runs (the layouts of harness/core/hybench.h):
  add, mul, relu, gelu (tanh approximation: hybench's gelu), silu   elementwise over n
  matmul      A[m,k] @ B[k,n];   bmm   A[b,m,k] @ B[b,k,n]          (torch.matmul)
  conv2d      F.conv2d, NCHW, or channels_last for layout=nhwc, stride/padding/dilation/groups
  maxpool, avgpool  F.max_pool2d / F.avg_pool2d(count_include_pad=False)
  sum, mean, max    over the last axis of [rows, cols];  sum_all over n
  rmsnorm     x * rsqrt(mean(x^2) + 1e-5) * g over the last axis of [rows, cols]
  attention   F.scaled_dot_product_attention, q [b,h,s,d], k, v [b,kvh,kvs,d] (enable_gqa), causal
              aligned to the end as hybench's (an explicit boolean mask when seq != kv_seq), or the
              bshd layout (transposed views)
dtype: f32 with TF32 off (torch.backends.cuda.matmul.allow_tf32 = False, cudnn.allow_tf32 = False),
tf32 with both on, f16, bf16. CPU: torch.set_num_threads(the cpu backend's bound thread count from the
results file's backend record, else all CPUs).

Timing: inputs allocated once on the device; warm-up calls until 0.2 s or 20 calls; then timed samples
until --min-time (default 0.3 s) and at least 10. CUDA: one pair of CUDA events around each call, with
a spin kernel (torch.cuda._sleep) enqueued before the start event so that the GPU is busy while the host
launches the call: the events bracket its device execution without PyTorch's launch latency, as
hybench's launch-gated device timer (nvbench's blocking kernel) excludes its own (`torch_timing`
"gated"; "ungated" where this PyTorch has no _sleep); CPU: time.perf_counter around each call.
The figure is the median per call. ratio = hybench / PyTorch (above 1: hybench is slower).

Output: a Markdown table (stdout or --out) with every compared case and a summary per backend:
cases within 5% or faster, within 10%, beyond 25%, and the slowest ratios; --json writes the rows.
--dry-run lists what would be compared without importing torch.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

ELEMENTWISE = {"add", "mul", "relu", "gelu", "silu"}
REDUCTIONS = {"sum", "mean", "max", "sum_all", "rmsnorm"}
SUPPORTED = ELEMENTWISE | REDUCTIONS | {"matmul", "bmm", "conv2d", "maxpool", "avgpool", "attention"}


def load(path):
    meta, backends, cases = None, {}, []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit("torch_compare: %s:%d: not JSON (%s)" % (path, lineno, e))
            t = r.get("type")
            if t == "meta":
                meta = r
            elif t == "backend":
                backends[r.get("backend")] = r
            elif t == "case":
                cases.append(r)
    if meta is None:
        sys.exit("torch_compare: %s: no meta record: not a hybench results file" % path)
    if not cases:
        sys.exit("torch_compare: %s: no case records" % path)
    return meta, backends, cases


def why_not(r, want):
    """None when case r is compared, else the reason."""
    be = r.get("backend", "")
    kind = be.split(":")[0]
    if kind not in want:
        return "backend %s not compared" % be
    if r.get("status") != "ok":
        return "status %s" % r.get("status")
    if r.get("op") not in SUPPORTED:
        return "op %s has no PyTorch counterpart here" % r.get("op")
    mode = r.get("mode")
    if kind == "cuda" and mode != "resident":
        return "cuda mode %s (compared: resident)" % mode
    if kind == "cpu" and mode != "f32":
        return "cpu mode %s (compared: f32)" % mode
    if r.get("dtype") not in ("f32", "tf32", "f16", "bf16"):
        return "dtype %s" % r.get("dtype")
    if kind == "cpu" and r.get("dtype") != "f32":
        return "cpu dtype %s" % r.get("dtype")
    comp = ((r.get("phases") or {}).get("compute") or {}).get("median")
    if not comp or comp <= 0:
        return "no compute median"
    return None


def g(s, k, d=0):
    """Shape field k of s, d where it is absent or 0 (hybench's "default" value)."""
    v = s.get(k)
    return v if v else d


class Runner:
    def __init__(self, torch, device, dtype_name):
        self.torch = torch
        self.F = torch.nn.functional
        self.dev = device
        tf32 = dtype_name == "tf32"
        if device == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
        self.dt = {"f32": torch.float32, "tf32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype_name]

    def rnd(self, *shape):
        return self.torch.randn(*shape, device=self.dev, dtype=self.dt)

    def build(self, r):
        """A no-argument callable that computes case r's op once."""
        torch, F = self.torch, self.F
        op, s = r["op"], r["shape"]
        if op in ELEMENTWISE:
            n = s["n"]
            x, y = self.rnd(n), self.rnd(n)
            return {
                "add": lambda: torch.add(x, y),
                "mul": lambda: torch.mul(x, y),
                "relu": lambda: torch.relu(x),
                "gelu": lambda: F.gelu(x, approximate="tanh"),
                "silu": lambda: F.silu(x),
            }[op]
        if op == "matmul":
            a, b = self.rnd(s["m"], s["k"]), self.rnd(s["k"], s["n"])
            return lambda: torch.matmul(a, b)
        if op == "bmm":
            bt = g(s, "batch", 1)
            a, b = self.rnd(bt, s["m"], s["k"]), self.rnd(bt, s["k"], s["n"])
            return lambda: torch.bmm(a, b)
        if op in ("conv2d", "maxpool", "avgpool"):
            bt, c, h = g(s, "batch", 1), s["c"], s["h"]
            w = g(s, "w", h)
            kh = s["kh"]
            kw = g(s, "kw", kh)
            sh = g(s, "sh", 1)
            sw = g(s, "sw", sh)
            ph = s.get("ph", 0)
            pw = s.get("pw", ph if kw == kh else 0)
            x = self.rnd(bt, c, h, w)
            nhwc = s.get("layout") == 1
            if nhwc:
                x = x.contiguous(memory_format=torch.channels_last)
            if op == "maxpool":
                return lambda: F.max_pool2d(x, (kh, kw), (sh, sw), (ph, pw))
            if op == "avgpool":
                return lambda: F.avg_pool2d(x, (kh, kw), (sh, sw), (ph, pw), count_include_pad=False)
            grp, dh = g(s, "g", 1), g(s, "dh", 1)
            dw = g(s, "dw", dh)
            wt = self.rnd(s["oc"], c // grp, kh, kw)
            if nhwc:
                wt = wt.contiguous(memory_format=torch.channels_last)
            return lambda: F.conv2d(x, wt, None, (sh, sw), (ph, pw), (dh, dw), grp)
        if op in ("sum", "mean", "max"):
            x = self.rnd(s["rows"], s["cols"])
            return {"sum": lambda: torch.sum(x, -1), "mean": lambda: torch.mean(x, -1), "max": lambda: torch.amax(x, -1)}[op]
        if op == "sum_all":
            x = self.rnd(s["n"])
            return lambda: torch.sum(x)
        if op == "rmsnorm":
            x, gm = self.rnd(s["rows"], s["cols"]), self.rnd(s["cols"])
            return lambda: x * torch.rsqrt(torch.mean(x * x, -1, keepdim=True) + 1e-5) * gm
        if op == "attention":
            bt, hq, sq, d = g(s, "batch", 1), s["heads"], s["seq"], s["head_dim"]
            hk = g(s, "kv_heads", hq)
            skv = g(s, "kv_seq", sq)
            causal = bool(s.get("causal"))
            bshd = s.get("layout") == 2
            if bshd:  # the data in [b, s, h, d], SDPA given [b, h, s, d] views
                q = self.rnd(bt, sq, hq, d).transpose(1, 2)
                k = self.rnd(bt, skv, hk, d).transpose(1, 2)
                v = self.rnd(bt, skv, hk, d).transpose(1, 2)
            else:
                q, k, v = self.rnd(bt, hq, sq, d), self.rnd(bt, hk, skv, d), self.rnd(bt, hk, skv, d)
            gqa = hk != hq
            if causal and sq != skv:  # hybench aligns the mask to the end: query i sees keys j <= i + (kvs - s)
                i = torch.arange(sq, device=self.dev)[:, None]
                j = torch.arange(skv, device=self.dev)[None, :]
                mask = j <= i + (skv - sq)
                return lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)
            return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
        raise KeyError(op)


def time_calls(torch, fn, device, min_time):
    t0 = time.perf_counter()
    for i in range(20):
        fn()
        if time.perf_counter() - t0 > 0.2:
            break
    samples = []
    if device == "cuda":
        # the device time of one call without the host's launch latency, as hybench's launch gate (and
        # nvbench's blocking kernel) measures it: a spin kernel (torch.cuda._sleep, ~100 us) keeps the GPU
        # busy while the host records the start event and launches the call, so the events bracket the
        # call's device execution alone
        torch.cuda.synchronize()
        spin = getattr(torch.cuda, "_sleep", None)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        while len(samples) < 10 or time.perf_counter() - t0 < min_time:
            if spin:
                spin(200000)
            start.record()
            fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1e-3)
            if len(samples) >= 2000:
                break
        return statistics.median(samples), len(samples), "gated" if spin else "ungated"
    else:
        t0 = time.perf_counter()
        while len(samples) < 10 or time.perf_counter() - t0 < min_time:
            a = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - a)
            if len(samples) >= 5000:
                break
    return statistics.median(samples), len(samples), "call"


def fmt_t(s):
    return "%.3g us" % (s * 1e6) if s < 1e-3 else "%.3g ms" % (s * 1e3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("--out")
    ap.add_argument("--json")
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--backends", default="cuda,cpu")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    want = set(a.backends.split(","))
    meta, backends, cases = load(a.results)
    todo, skipped = [], []
    for r in cases:
        w = why_not(r, want)
        (skipped if w else todo).append((r, w))
    if a.dry_run:
        for r, _ in todo:
            print("compare %s %s %s %s %s" % (r["backend"], r["op"], r.get("shape_str", ""), r["mode"], r["dtype"]))
        print("%d to compare, %d not compared" % (len(todo), len(skipped)))
        return 0
    import torch

    threads = None
    cpu_rec = backends.get("cpu")
    if cpu_rec:
        threads = (cpu_rec.get("info") or {}).get("omp_threads")
    torch.set_num_threads(int(threads or os.cpu_count()))
    rows = []
    for r, _ in todo:
        kind = r["backend"].split(":")[0]
        device = "cuda" if kind == "cuda" else "cpu"
        if device == "cuda":
            idx = int(r["backend"].split(":")[1]) if ":" in r["backend"] else 0
            torch.cuda.set_device(idx)
        try:
            fn = Runner(torch, device, r["dtype"]).build(r)
            tt, n, how = time_calls(torch, fn, device, a.min_time)
        except Exception as e:  # a shape PyTorch refuses: listed, never dropped
            rows.append({"backend": r["backend"], "op": r["op"], "shape": r.get("shape_str", ""), "dtype": r["dtype"], "error": str(e)[:160]})
            continue
        hb = r["phases"]["compute"]["median"]
        rows.append({"backend": r["backend"], "op": r["op"], "shape": r.get("shape_str", ""), "dtype": r["dtype"], "mode": r["mode"],
                     "impl": r.get("impl", ""), "hybench_s": hb, "torch_s": tt, "torch_samples": n, "torch_timing": how, "ratio": hb / tt})
        if device == "cuda":
            torch.cuda.empty_cache()
    out = []
    out.append("# hybench against PyTorch %s: %s" % (torch.__version__, os.path.basename(a.results)))
    out.append("")
    out.append("Host %s, run %s. ratio = hybench compute median / PyTorch median per call (above 1: hybench slower)." %
               (meta.get("host", "?"), meta.get("run_id", "?")))
    out.append("")
    for kind in sorted({x["backend"].split(":")[0] for x in rows}):
        rs = [x for x in rows if x["backend"].split(":")[0] == kind and "ratio" in x]
        if not rs:
            continue
        w5 = sum(1 for x in rs if x["ratio"] <= 1.05)
        w10 = sum(1 for x in rs if x["ratio"] <= 1.10)
        b25 = sum(1 for x in rs if x["ratio"] > 1.25)
        worst = sorted(rs, key=lambda x: -x["ratio"])[:5]
        geo = math.exp(sum(math.log(x["ratio"]) for x in rs) / len(rs))
        out.append("**%s**: %d cases; within 5%% or faster %d, within 10%% %d, beyond 25%% %d; geometric mean ratio %.3f; slowest: %s" %
                   (kind, len(rs), w5, w10, b25, geo, "; ".join("%s %s %s %.2fx" % (x["op"], x["shape"], x["dtype"], x["ratio"]) for x in worst)))
        out.append("")
    out.append("| backend | op | shape | dtype | impl | hybench | PyTorch | ratio |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for x in rows:
        if "error" in x:
            out.append("| %s | %s | %s | %s | | | PyTorch refused: %s | |" % (x["backend"], x["op"], x["shape"], x["dtype"], x["error"].replace("|", "/")))
        else:
            out.append("| %s | %s | %s | %s | %s | %s | %s | %.2f |" % (x["backend"], x["op"], x["shape"], x["dtype"], x["impl"], fmt_t(x["hybench_s"]),
                                                                   fmt_t(x["torch_s"]), x["ratio"]))
    out.append("")
    out.append("Not compared: %d cases (%s)." % (len(skipped), ", ".join(sorted({w.split(" (")[0] for _, w in skipped}))[:600]))
    text = "\n".join(out) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"torch": torch.__version__, "results": a.results, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
