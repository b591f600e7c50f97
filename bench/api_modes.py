#!/usr/bin/env python3
"""api_modes.py - lunar's application interfaces side by side with the
kernel, in one run (LUNA Fig. 11 and the issue-5 speed targets).

For 4 KiB RPC at iodepth 1 and 16, and a 64 KiB one-way stream on one
connection, it runs knb over: lunar memif with --api inline, batch and
copy, and a dispatch-mode server (its thread on the stack's core); the
raw memif ping-pong (no stack, the floor); and the kernel over
veth (busy-poll). Runs are interleaved, medians of --runs. Client on CPU 0,
server on CPU 1. Prints a Markdown table and ratios; results as JSON in
--out.

  sudo bench/api_modes.py [--runs 3] [--duration 3] [--out DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOPO = os.path.join(ROOT, "scripts", "topo.sh")
SOCK = "/run/lunar/api-bench.sock"

MEMIF_S = ["--port", f"memif:{SOCK}:server", "--ip", "192.168.77.2/24", "--listen", "192.168.77.2:7000"]
MEMIF_C = ["--port", f"memif:{SOCK}:client", "--ip", "192.168.77.1/24", "--connect", "192.168.77.2:7000"]
STACKS = {
    "lunar inline": (["--stack", "lunar", "--api", "inline"] + MEMIF_S, ["--stack", "lunar", "--api", "inline"] + MEMIF_C, None),
    "lunar batch": (["--stack", "lunar", "--api", "batch"] + MEMIF_S, ["--stack", "lunar", "--api", "batch"] + MEMIF_C, None),
    "lunar copy": (["--stack", "lunar", "--api", "copy"] + MEMIF_S, ["--stack", "lunar", "--api", "copy"] + MEMIF_C, None),
    # --trust-link: both ends lunar on this host, no checksums (as the kernel over veth).
    "lunar inline, trusted": (["--stack", "lunar", "--api", "inline", "--trust-link"] + MEMIF_S,
                              ["--stack", "lunar", "--api", "inline", "--trust-link"] + MEMIF_C, None),
    "lunar batch, trusted": (["--stack", "lunar", "--api", "batch", "--trust-link"] + MEMIF_S,
                             ["--stack", "lunar", "--api", "batch", "--trust-link"] + MEMIF_C, None),
    # Dispatch mode (LUNA 5.2): the server's application on a thread of its own, which on
    # 2 CPUs shares the stack's core; the stack yields that core when idle.
    "lunar dispatch, shared core": (["--stack", "lunar", "--api", "dispatch", "--idle-yield", "1"] + MEMIF_S,
                                    ["--stack", "lunar", "--api", "batch"] + MEMIF_C, None),
    "raw memif": (["--stack", "raw"] + MEMIF_S, ["--stack", "raw"] + MEMIF_C, None),
    "kernel busy-poll": (["--stack", "kernel", "--kernel-mode", "busy-poll", "--listen", "10.77.0.2:7000"],
                         ["--stack", "kernel", "--kernel-mode", "busy-poll", "--connect", "10.77.0.2:7000"], "veth"),
}
POINTS = [("rpc", 4096, 1), ("rpc", 4096, 16), ("stream", 65536, 1)]


def run_one(knb, stack, point, args, out):
    sopts, copts, topo = STACKS[stack]
    pattern, msg, depth = point
    if pattern != "rpc" and stack == "raw memif":
        return None
    ns_s = ["ip", "netns", "exec", "lunar-b"] if topo else []
    ns_c = ["ip", "netns", "exec", "lunar-a"] if topo else []
    if not topo and os.path.exists(SOCK):
        os.unlink(SOCK)
    srv = subprocess.Popen(ns_s + [knb, "server"] + sopts + ["--core", "1"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 15
    line = ""
    while time.time() < deadline:
        line = srv.stdout.readline()
        if "ready" in line or not line:
            break
    js = os.path.join(out, f"{stack.replace(' ', '_')}_{pattern}_{msg}_{depth}_{int(time.time()*1000)}.json")
    cmd = ns_c + [knb, "client"] + copts + ["--core", "0", "--pattern", pattern, "--msg-size", str(msg),
                                             "--iodepth", str(depth), "--duration", str(args.duration),
                                             "--warmup", "0.5", "--json", js]
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120).returncode
    srv.terminate()
    try:
        srv.wait(timeout=10)
    except subprocess.TimeoutExpired:
        srv.kill()
    if rc != 0 or not os.path.exists(js):
        print(f"  {stack} {point}: failed (rc {rc})", file=sys.stderr)
        return None
    with open(js) as f:
        d = json.load(f)
    return {"p50": d["latency_us"]["p50"], "p99": d["latency_us"]["p99"], "rps": d["rpc_per_s"], "gbps": d["gbps"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--duration", type=float, default=3)
    ap.add_argument("--knb", default=os.path.join(ROOT, "build", "tools", "knb", "knb"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", time.strftime("%Y%m%d-%H%M%S") + "-api"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("api_modes.py: run as root (namespaces, hugepages)")
    os.makedirs(args.out, exist_ok=True)
    os.makedirs("/run/lunar", exist_ok=True)
    subprocess.run([TOPO, "veth", "up"], check=True, stdout=subprocess.DEVNULL)
    res = {}
    try:
        for r in range(args.runs):
            for point in POINTS:
                for stack in STACKS:
                    m = run_one(args.knb, stack, point, args, args.out)
                    if m:
                        res.setdefault((stack, point), []).append(m)
                        print(f"# run {r + 1}/{args.runs} {stack} {point}: p50 {m['p50']:.2f} us p99 {m['p99']:.2f} us "
                              f"{m['rps']:.0f} RPC/s {m['gbps']:.2f} Gbit/s", flush=True)
    finally:
        subprocess.run([TOPO, "veth", "down"], stdout=subprocess.DEVNULL)
    med = {k: {f: statistics.median(x[f] for x in v) for f in v[0]} for k, v in res.items()}
    print(f"\nmedians of {args.runs}, client CPU 0, server CPU 1\n")
    print("| stack | 4K d1 p50 us | 4K d1 p99 us | 4K d1 RPC/s | 4K d16 RPC/s | 64K stream Gbit/s |")
    print("|---|---|---|---|---|---|")

    def g(stack, point, f):
        return med.get((stack, point), {}).get(f)

    for stack in STACKS:
        cells = [g(stack, POINTS[0], "p50"), g(stack, POINTS[0], "p99"), g(stack, POINTS[0], "rps"),
                 g(stack, POINTS[1], "rps"), g(stack, POINTS[2], "gbps")]
        print(f"| {stack} | " + " | ".join("-" if c is None else f"{c:,.2f}" if c < 100 else f"{c:,.0f}" for c in cells) + " |")
    k = "kernel busy-poll"
    print("\nratios (lunar inline vs kernel; latency: lunar/kernel, lower is better; throughput: lunar/kernel)")
    for stack in [s for s in STACKS if s.startswith("lunar")]:
        def ratio(point, f, inv):
            a, b = g(stack, point, f), g(k, point, f)
            return "-" if not a or not b else f"{(a / b):.2f}x"
        print(f"  {stack}: p50 {ratio(POINTS[0], 'p50', True)} p99 {ratio(POINTS[0], 'p99', True)} "
              f"RPC/s d1 {ratio(POINTS[0], 'rps', False)} d16 {ratio(POINTS[1], 'rps', False)} "
              f"stream {ratio(POINTS[2], 'gbps', False)}")
    a, b = g("lunar inline", POINTS[0], "p99"), g("lunar copy", POINTS[0], "p99")
    if a and b:
        print(f"  inline p99 vs copy p99: {(1 - a / b) * 100:.0f}% lower")
    for stack in ("lunar inline", "lunar inline, trusted"):
        a, b = g(stack, POINTS[0], "p50"), g("raw memif", POINTS[0], "p50")
        if a and b:
            print(f"  {stack} round trip (p50) vs raw memif: {a / b:.2f}x")
    with open(os.path.join(args.out, "medians.json"), "w") as f:
        json.dump({f"{s}|{p}": v for (s, p), v in med.items()}, f, indent=1)


if __name__ == "__main__":
    main()
