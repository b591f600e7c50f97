#!/usr/bin/python3
"""knb_schema.py FILE - check a knb client JSON against schema 1 (docs/KNB.md).

Prints what is wrong and exits 1, or exits 0 silently.
"""
import json
import sys

NUM = (int, float)
TOP = {
    "knb_version": int, "schema": int, "role": str, "config": dict, "window_s": NUM,
    "requests": int, "responses": int, "rpc_per_s": NUM, "gbps": NUM,
    "bytes_sent": int, "bytes_received": int, "latency_us": dict, "cdf": list,
    "threads": list, "cpu_breakdown_pct": (dict, type(None)),
}
CONFIG = {
    "stack": str, "threads": int, "server_threads": int, "pattern": str, "flows": int,
    "msg_size": int, "iodepth": int, "duration_s": NUM, "warmup_s": NUM, "command": str,
}
LATENCY = ("count", "min", "mean", "p50", "p90", "p99", "p999", "max")
CPU = ("rx", "protocol", "app", "tx", "timers", "buffers", "copy", "idle")


def check(d):
    errs = []
    for k, t in TOP.items():
        if not isinstance(d.get(k, KeyError), t):
            errs.append(f"{k}: missing or not {t}")
    if errs:
        return errs
    if d["schema"] != 1 or d["role"] != "client":
        errs.append("schema must be 1 and role client")
    for k, t in CONFIG.items():
        if not isinstance(d["config"].get(k), t):
            errs.append(f"config.{k}: missing or not {t}")
    lat = d["latency_us"]
    for k in LATENCY:
        if not isinstance(lat.get(k), NUM):
            errs.append(f"latency_us.{k}: missing")
    if not errs and lat["count"]:
        seq = [lat[k] for k in ("min", "p50", "p90", "p99", "p999", "max")]
        if seq != sorted(seq):
            errs.append(f"latency percentiles out of order: {seq}")
        if not d["cdf"] or d["cdf"][-1][1] != 1.0 or d["cdf"][-1][0] != lat["max"]:
            errs.append("cdf must end at (max, 1.0)")
        pts = d["cdf"]
        if any(b[0] < a[0] or b[1] < a[1] for a, b in zip(pts, pts[1:])):
            errs.append("cdf not monotonic")
    for t in d["threads"]:
        for k in ("index", "cpu_pct", "requests", "responses", "bytes"):
            if k not in t:
                errs.append(f"threads[].{k}: missing")
    if d["cpu_breakdown_pct"] is not None:
        for k in CPU:
            if not isinstance(d["cpu_breakdown_pct"].get(k), NUM):
                errs.append(f"cpu_breakdown_pct.{k}: missing")
    return errs


def main():
    with open(sys.argv[1]) as f:
        errs = check(json.load(f))
    for e in errs:
        print(e)
    sys.exit(1 if errs else 0)


if __name__ == "__main__":
    main()
