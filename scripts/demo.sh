#!/usr/bin/env bash
# demo.sh - lunar's main job until the knb benchmark lands: on a fresh
# Debian 12 machine, install, build, and show what the foundation does:
#  1. lunar and the Linux kernel sharing one interface (LUNA §7): lunar on
#     af_xdp owns its reserved TCP ports while the kernel keeps answering
#     ping and serving its own TCP port on the same address;
#  2. lunar to lunar over memif, with lunar's own ARP, next to the kernel's
#     ping between two namespaces over veth.
# Run as root. Everything it creates is removed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
[ "$(id -u)" = 0 ] || { echo "demo.sh: run as root (namespaces, XDP, hugepages)" >&2; exit 2; }

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "installing dependencies and reserving hugepages"
scripts/install-deps.sh
scripts/hugepages.sh
say "building (release)"
[ -f build/build.ninja ] || meson setup build -Dbuildtype=release >/dev/null
ninja -C build >/dev/null
PING=build/tools/lunar-ping
CRAFT=tests/integration/craft.py

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	sleep 0.3
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	scripts/topo.sh down-all >/dev/null 2>&1 || true
	rm -f /run/lunar/demo.sock
}
trap cleanup EXIT
scripts/topo.sh down-all >/dev/null 2>&1 || true
out=$(mktemp -d /tmp/lunar-demo.XXXXXX)

say "1. one interface, two stacks: namespaces lunar-a (kernel) and lunar-b (kernel + lunar)"
scripts/topo.sh veth up
A="ip netns exec lunar-a" B="ip netns exec lunar-b"
$B socat TCP-LISTEN:8080,reuseaddr,fork SYSTEM:'echo hello from the kernel on 8080' &
pids+=($!)
$B "$PING" --port af_xdp:veth-b --core 1 --responder --counters >"$out/lunar.log" 2>&1 &
lunar_pid=$!
pids+=($lunar_pid)
for _ in $(seq 1 100); do grep -q ready "$out/lunar.log" && break; sleep 0.1; done
grep ready "$out/lunar.log"
echo "-- kernel ping A -> B (ICMP stays with the kernel):"
$A ping -c 3 -i 0.2 10.77.0.2 | tail -2
echo "-- kernel TCP service on B:8080 (a port lunar does not own):"
$A socat -T 5 - TCP:10.77.0.2:8080 </dev/null
echo "-- 10 TCP SYNs to B:61500 (lunar's reserved range), 3 UDP and 2 TCP to the kernel's ports:"
$A "$CRAFT" veth-a 10.77.0.1 10.77.0.2 "$(ip -n lunar-b -br link show veth-b | awk '{print $3}')" steer
kill -TERM $lunar_pid # it drains its port before printing the counters
wait $lunar_pid || true
echo "-- lunar's counters (it saw only what its XDP program steered to it):"
grep -E 'rx_tcp|rx_frames|^xdp:|zbuf:' "$out/lunar.log"
scripts/topo.sh veth down >/dev/null

say "2. lunar to lunar over memif (lunar's own ARP), next to the kernel over veth: 2000 pings each"
scripts/topo.sh memif up >/dev/null
"$PING" --port memif:/run/lunar/demo.sock:server --ip 192.168.77.2/24 --core 1 --responder >"$out/resp.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -S /run/lunar/demo.sock ] && break; sleep 0.1; done
"$PING" --port memif:/run/lunar/demo.sock:client --ip 192.168.77.1/24 --core 0 -c 2000 -i 1 192.168.77.2 >"$out/lunar-ping.log"
scripts/topo.sh veth up >/dev/null
$A taskset -c 0 ping -c 2000 -i 0.001 10.77.0.2 >"$out/kernel-ping.log"
python3 - "$out/lunar-ping.log" "$out/kernel-ping.log" <<'PY'
import re, sys

def rtts_us(path):
    text = open(path).read()
    us = [float(x) for x in re.findall(r"time=([\d.]+) us", text)]
    ms = [float(x) * 1000 for x in re.findall(r"time=([\d.]+) ms", text)]
    return sorted(us + ms)

def pct(v, p):
    return v[min(len(v) - 1, int(len(v) * p))]

lunar, kernel = rtts_us(sys.argv[1]), rtts_us(sys.argv[2])
print(f"{'ICMP echo round trip (us)':<28}{'p50':>8}{'p90':>8}{'p99':>8}{'replies':>9}")
for name, v in (("lunar <-> lunar, memif", lunar), ("kernel <-> kernel, veth", kernel)):
    print(f"{name:<28}{pct(v, .5):>8.1f}{pct(v, .9):>8.1f}{pct(v, .99):>8.1f}{len(v):>9}")
print(f"{'ratio kernel / lunar':<28}{pct(kernel, .5) / pct(lunar, .5):>8.2f}{pct(kernel, .9) / pct(lunar, .9):>8.2f}{pct(kernel, .99) / pct(lunar, .99):>8.2f}")
PY
echo
echo "Both are pings on this machine, in one run: lunar's timed from the TSC in-process,"
echo "the kernel's by ping(8). The TCP comparison with one tool for both stacks (knb) comes next."
echo "logs: $out"
