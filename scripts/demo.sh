#!/usr/bin/env bash
# demo.sh - lunar's main job: on a fresh Debian 12 machine, install, build,
# and put lunar side by side with the Linux kernel:
#  1. one interface, two stacks (LUNA §7): lunar on af_xdp owns its
#     reserved TCP ports while the kernel keeps answering ping and serving
#     its own TCP port on the same address (about 10 s);
#  2. knb, the same RPC benchmark over lunar (memif and af_xdp on veth) and
#     over the kernel (veth, busy-poll), 4 KiB requests at iodepth 1 and 16,
#     median of 3 runs each, printed as a table with ratios (about 2-5 minutes:
#     rounds a slow phase of the host hits are run again).
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

say "2. knb: 4 KiB RPC over lunar and over the kernel, same run, median of 3 runs each"
/usr/bin/python3 bench/sweep.py --demo --knb build/tools/knb/knb
echo "logs: $out"
