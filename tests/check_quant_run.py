#!/usr/bin/env python3
"""The records of `hybench run --op matmul --dtype q* --backend cpu-ref,cpu tests/data/quant_small.ini`
(tests/run_tests.sh "quant-matmul-run"): every f32-mode case ok, its bytes A (f32) + the weight's blocks
+ C (f32) and host_bytes the same, convert skipped with the reason that names the mode; cpu's impl
is its own fused kernel. Exit 1 with what is wrong."""
import json, sys

BLOCK = {"q8_0": (32, 34), "q4_k": (256, 144), "q5_k": (256, 176), "q6_k": (256, 210)}
bad, seen = [], 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") != "case":
        continue
    d = r["dtype"]
    if d not in BLOCK:
        bad.append("unexpected dtype %s" % d)
        continue
    s = r["shape"]
    m, n, k = s["m"], s["n"], s["k"]
    be, bb = BLOCK[d]
    want = 4 * m * k + n * (k // be) * bb + 4 * m * n
    key = "%s %s %s m=%d" % (r["backend"], d, r["mode"], m)
    if r["mode"] == "convert":
        if r["status"] != "skipped" or "convert mode does not apply" not in r.get("reason", ""):
            bad.append("%s: %s %s" % (key, r["status"], r.get("reason")))
        continue
    seen += 1
    if r["status"] != "ok":
        bad.append("%s: %s %s" % (key, r["status"], r.get("reason")))
    if r["bytes"] != want:
        bad.append("%s: bytes %s, want %d" % (key, r["bytes"], want))
    if r.get("mem", {}).get("host_bytes") != want:
        bad.append("%s: host_bytes %s, want %d" % (key, r.get("mem", {}).get("host_bytes"), want))
    if r["backend"] == "cpu" and not r.get("impl", "").startswith("own-%s-" % d):
        bad.append("%s: impl %s" % (key, r.get("impl")))
if seen != 2 * 4 * 2:
    bad.append("%d f32-mode records, want 16 (2 backends x 4 dtypes x 2 shapes)" % seen)
print("\n".join(bad) if bad else "ok: %d records" % seen)
sys.exit(1 if bad else 0)
