#!/usr/bin/python3
"""fake_knb.py - a stand-in for tools/knb/knb, for testing bench/sweep.py.

It implements knb's command line (server and client, schema-1 JSON) well
enough that the sweep can run end to end without the real tool, DPDK,
hugepages, root or a topology:

  server  prints "knb server: ready ..." and sleeps until SIGINT/SIGTERM
          (exit 0); gives up by itself after FAKE_KNB_SERVER_MAX_S (300 s)
          so a bug in the sweep never leaves it running for long.
  client  sleeps FAKE_KNB_CLIENT_S (0.1 s), whatever --duration says, and
          writes a plausible schema-1 JSON whose numbers depend only on the
          stack (lunar memif / lunar af_xdp / kernel busy-poll / kernel
          blocking / raw memif, the floor and the fastest), --msg-size,
          --iodepth and --threads.

Failure injection, for the sweep's error paths:
  FAKE_KNB_FAIL=SUBSTR        a client whose command line contains SUBSTR
                              exits 1 with a message on stderr
  FAKE_KNB_SERVER_FAIL=SUBSTR a server whose command line contains SUBSTR
                              exits 1 before printing the ready line
  FAKE_KNB_SLOW=SUBSTR[,...]  a client whose command line contains one of
                              them runs as in the host's slow phase: every
                              RPC takes 4 times as long (sweep.py's
                              --slow-phase)
"""
import argparse
import json
import math
import os
import signal
import statistics
import sys
import time

PATTERNS = ["rpc", "stream", "incast", "outcast", "all-to-all", "mixed"]


def add_lunar_options(p):
    # The options every lunar program takes (README "Using lunar-ping").
    p.add_argument("--port")
    p.add_argument("--ip")
    p.add_argument("--gw")
    p.add_argument("--mtu", type=int)
    p.add_argument("--fault")
    p.add_argument("--pcap")
    p.add_argument("--reserved")
    p.add_argument("--pool", type=int)
    p.add_argument("--trust-link", action="store_true")


def parser():
    top = argparse.ArgumentParser(prog="knb")
    sub = top.add_subparsers(dest="role", required=True)
    for role in ("server", "client"):
        p = sub.add_parser(role)
        p.add_argument("--stack", choices=["kernel", "lunar", "raw"], required=True)
        add_lunar_options(p)
        p.add_argument("--threads", type=int, default=1)
        p.add_argument("--kernel-mode", choices=["blocking", "busy-poll"])
        p.add_argument("--core", type=int, default=0)
        p.add_argument("--json", required=(role == "client"))
        if role == "server":
            p.add_argument("--listen", required=True)
        else:
            p.add_argument("--connect", required=True)
            p.add_argument("--server-threads", type=int, default=1)
            p.add_argument("--pattern", choices=PATTERNS, default="rpc")
            p.add_argument("--flows", type=int, default=1)
            p.add_argument("--msg-size", type=int, required=True)
            p.add_argument("--iodepth", type=int, required=True)
            p.add_argument("--duration", type=float, required=True)
            p.add_argument("--warmup", type=float, required=True)
    return top


def check(a):
    """The cross-option rules the real knb would enforce."""
    if a.stack == "lunar":
        if not a.port:
            return "--stack lunar needs --port"
        if a.port.startswith("memif:") and not a.ip:
            return "--port memif needs --ip"
        if a.kernel_mode:
            return "--kernel-mode is for --stack kernel"
    elif a.stack == "raw":
        if not (a.port or "").startswith("memif:"):
            return "--stack raw needs --port memif:PATH[:server|client]"
        if not a.ip:
            return "--port memif needs --ip"
        if a.kernel_mode:
            return "--kernel-mode is for --stack kernel"
        if a.threads != 1 or (a.role == "client" and (a.pattern != "rpc" or a.flows != 1 or a.server_threads != 1)):
            return "--stack raw measures pattern rpc only, one flow, one thread"
    else:
        if a.port or a.ip:
            return "--port/--ip are for --stack lunar"
    if a.threads < 1:
        return "--threads must be >= 1"
    if a.role == "client":
        if a.msg_size < 1 or a.iodepth < 1 or a.duration <= 0 or a.warmup < 0:
            return "bad --msg-size/--iodepth/--duration/--warmup"
        if a.server_threads < 1:
            return "--server-threads must be >= 1"
    return None


def stack_key(a):
    if a.stack == "raw":
        return "raw-memif"
    if a.stack == "lunar":
        if a.port.startswith("memif:"):
            return "lunar-memif-trust" if a.trust_link else "lunar-memif"
        return "lunar-afxdp"
    return "kernel-blocking" if a.kernel_mode == "blocking" else "kernel"


# Per-stack model: fixed per-RPC cost (us), link bandwidth (Gbit/s) and how
# many requests in flight the stack overlaps before latency grows.
MODEL = {
    "lunar-memif": (6.0, 40.0, 8),
    "lunar-memif-trust": (5.0, 45.0, 8),
    "lunar-afxdp": (11.0, 20.0, 6),
    "kernel": (22.0, 12.0, 4),
    "kernel-blocking": (38.0, 10.0, 4),
    "raw-memif": (2.5, 60.0, 8),
}


def client(a, slow=False):
    key = stack_key(a)
    base, bw, overlap = MODEL[key]
    if slow:
        base, bw = base * 4, bw / 4
    wire_us = a.msg_size * 2 * 8 / (bw * 1e3)  # request and response
    service = base + wire_us
    p50 = service * max(1.0, a.iodepth / overlap)
    per_thread_rps = a.iodepth / p50 * 1e6
    threads = min(a.threads, a.server_threads)
    rps = per_thread_rps * threads
    gbps = rps * a.msg_size * 8 / 1e9
    stream = a.pattern in ("stream",)
    nd = statistics.NormalDist()
    sigma = 0.45 if a.stack == "kernel" else 0.25

    def q(f):
        return p50 * math.exp(sigma * nd.inv_cdf(f))

    lat_min = q(0.0005)
    lat_max = q(0.9999)
    cdf = []
    if not stream:
        n = 60
        for i in range(1, n + 1):
            f = i / n
            cdf.append([round(q(min(f, 0.9999)), 3), round(f, 6)])
        cdf[-1] = [round(lat_max, 3), 1.0]
    responses = int(rps * a.duration)
    total_bytes = responses * a.msg_size
    doc = {
        "knb_version": 1,
        "schema": 1,
        "role": "client",
        "config": {
            "stack": a.stack,
            "port": a.port,
            "connect": a.connect,
            "threads": a.threads,
            "server_threads": a.server_threads,
            "pattern": a.pattern,
            "flows": a.flows,
            "msg_size": a.msg_size,
            "iodepth": a.iodepth,
            "duration_s": a.duration,
            "warmup_s": a.warmup,
            "kernel_mode": a.kernel_mode if a.stack == "kernel" else None,
            "core": a.core,
        },
        "requests": responses + a.iodepth * threads,
        "responses": responses,
        "rpc_per_s": round(rps, 3),
        "gbps": round(gbps, 6),
        "bytes_sent": total_bytes,
        "bytes_received": total_bytes,
        "latency_us": {
            "count": responses,
            "min": round(lat_min, 3),
            "mean": round(p50 * math.exp(sigma * sigma / 2), 3),
            "p50": round(p50, 3),
            "p90": round(q(0.90), 3),
            "p99": round(q(0.99), 3),
            "p999": round(q(0.999), 3),
            "max": round(lat_max, 3),
        },
        "cdf": cdf,
        "threads": [
            {
                "index": i,
                "core": a.core + i,
                "cpu_pct": 99.7 if (a.stack != "kernel" or a.kernel_mode == "busy-poll") else 61.0,
                "requests": responses // a.threads,
                "bytes": total_bytes // a.threads,
            }
            for i in range(a.threads)
        ],
        "cpu_breakdown_pct": (
            {"rx": 14.0, "protocol": 22.0, "app": 18.0, "tx": 12.0, "timers": 2.0, "buffers": 4.0, "copy": 8.0, "idle": 20.0}
            if a.stack == "lunar"
            else None
        ),
    }
    time.sleep(float(os.environ.get("FAKE_KNB_CLIENT_S", "0.1")))
    tmp = a.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, a.json)
    print(f"knb client: {responses} responses, {rps:.0f} RPC/s, {gbps:.3f} Gbit/s, p50 {p50:.1f} us")
    return 0


def server(a):
    stop = []

    def on_signal(signum, frame):
        stop.append(signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    print(f"knb server: ready, {a.stack} listening on {a.listen}, {a.threads} thread(s)", flush=True)
    limit = time.monotonic() + float(os.environ.get("FAKE_KNB_SERVER_MAX_S", "300"))
    while not stop and time.monotonic() < limit:
        time.sleep(0.02)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"knb_version": 1, "schema": 1, "role": "server", "config": {"stack": a.stack, "listen": a.listen, "threads": a.threads}}, f)
    if not stop:
        print("knb server: fake gave up waiting for a signal", file=sys.stderr)
        return 3
    return 0


def main(argv):
    a = parser().parse_args(argv)
    err = check(a)
    if err:
        print(f"knb {a.role}: {err}", file=sys.stderr)
        return 2
    line = " ".join(argv)
    if a.role == "client":
        fail = os.environ.get("FAKE_KNB_FAIL")
        if fail and fail in line:
            print(f"knb client: injected failure (FAKE_KNB_FAIL={fail})", file=sys.stderr)
            return 1
        slow = [x for x in os.environ.get("FAKE_KNB_SLOW", "").split(",") if x]
        return client(a, any(x in line for x in slow))
    fail = os.environ.get("FAKE_KNB_SERVER_FAIL")
    if fail and fail in line:
        print(f"knb server: injected failure (FAKE_KNB_SERVER_FAIL={fail})", file=sys.stderr)
        return 1
    return server(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
