#!/usr/bin/env bash
# syn_flood.sh - a SYN flood against lunar-httpd, and the same flood against
# a kernel HTTP server, side by side (issue 6): does an established transfer
# keep its throughput, and do new connections still succeed?
#
# On `scripts/topo.sh arb up` (lunar-a 10.78.1.1 - lunar-r - lunar-b
# 10.78.2.2). Each round, for each server in turn (lunar-httpd on
# af_xdp:arb-b, CPU 1; then a Python ThreadingHTTPServer in lunar-b with
# net.ipv4.tcp_syncookies=1 and the same 1024 backlog, CPU 1):
#   base   PHASE_S seconds of curl downloading a 256 MiB file again and
#          again from lunar-a (CPU 0): Gbit/s = bytes / time;
#   flood  lunar-synflood starts in lunar-a (CPU 0, on arb-a towards the
#          router) at RATE pps (0: as fast as it can), SYNs to port 8080
#          from random addresses of 10.99.0.0/16; lunar-r drops their
#          SYN-ACKs as they come in from lunar-b (no one answers them, as
#          in a spoofed flood; ROUTER_DROP=route: a blackhole route);
#          after 1 s, PHASE_S seconds of the same downloads;
#   new    still under the flood, CONNS new curl connections one after the
#          other, each fetching a 4 KiB file with a 10 s limit: successes
#          (HTTP 200, SHA-256 exact) and connect times;
# BASE=sink runs the same flood during the base phase too, but to port
# 9, which the router drops as it comes in: the generator then takes its
# share of CPU 0 from curl in both phases, and the ratio shows what the
# flood does to the server rather than what the generator on this two-core
# machine does to the client (docs/benchmarks.md "SYN flood").
# Then the flood stops and prints its rate, and the server's counters are
# read (lunar: --counters at exit; kernel: nstat in lunar-b). Prints every
# phase, then medians over ROUNDS: the flood/base throughput ratio of each
# server (the target is >= 0.80), lunar/kernel, new connections, counters.
#
# SERVER_RX=server moves the receive work of the server's veth to the
# server's CPU (a pinned NAPI thread), as a NIC's interrupt affinity would.
# SERVER_RX=nic also moves what the server sends, once handed to its veth,
# off the server's CPU: the router's end of the link receives in a NAPI
# thread on CPU 0, as a NIC's transmit ends at the wire.
# IDLE_YIELD=N runs lunar-httpd with --idle-yield N: with SERVER_RX=server
# its CPU also runs the veth's NAPI thread, which then need not wait for
# the scheduler's tick to take its turn while lunar polls an empty ring.
# usage: [ROUTER_DROP=ingress|route] [XDP_SYNCOOKIES=on|off] [BASE=plain|sink] [SERVER_RX=sender|server|nic] [IDLE_YIELD=N] bench/syn_flood.sh [ROUNDS=3] [PHASE_S=10] [RATE=0] [CONNS=20]
# Needs root, the release build in build/, curl (and ethtool for
# SERVER_RX=server), and nothing else on CPUs
# 0-1; run under `flock /tmp/lunar-net.lock` on a shared machine.
set -u
rounds=${1:-3} phase=${2:-10} rate=${3:-0} conns=${4:-20}
for v in "$rounds" "$phase" "$rate" "$conns"; do
	[[ "$v" =~ ^[0-9]+$ ]] || { echo "usage: $0 [ROUNDS=3] [PHASE_S=10] [RATE=0 (pps; 0: no limit)] [CONNS=20]; '$v' is not a whole number" >&2; exit 2; }
done
[ "$rounds" -ge 1 ] && [ "$phase" -ge 1 ] && [ "$conns" -ge 1 ] ||
	{ echo "ROUNDS, PHASE_S and CONNS must be at least 1" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LUNAR_BUILD:-$root/build}
httpd=$build/tools/lunar-httpd flood=$build/tools/synflood/lunar-synflood
topo=$root/scripts/topo.sh
for p in "$httpd" "$flood"; do
	[ -x "$p" ] || { echo "build first: $p is missing (ninja -C build)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "run as root (namespaces, XDP, AF_PACKET)" >&2; exit 2; }
log=$(mktemp -d /tmp/lunar-synflood.XXXXXX)
A="ip netns exec lunar-a" B="ip netns exec lunar-b" R="ip netns exec lunar-r"
spoofed=10.99.0.0/16 dst=10.78.2.2 port=8080
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	"$topo" arb down >/dev/null 2>&1
	rm -rf "$log"
}
trap cleanup EXIT
"$topo" arb up >/dev/null || exit 2
# The SYN-ACKs to spoofed sources die in the router, unanswered and
# without ICMP; no reverse-path check drops the spoofed SYNs on the way in.
# By default an nftables ingress rule on the router's port to lunar-b drops
# them as they arrive, as a network's edge would, before any route lookup:
# with veth that work lands on the sending server's core, and a route
# lookup and ICMP-less blackhole for every reply to a new address costs it
# as much as its own SYN handling (docs/benchmarks.md "SYN flood").
# ROUTER_DROP=route keeps the blackhole route alone (the first runs).
router_drop=${ROUTER_DROP:-ingress}
case "$router_drop" in
ingress | route) ;;
*) echo "ROUTER_DROP=$router_drop: expected ingress (the default) or route" >&2; exit 2 ;;
esac
$R ip route replace blackhole "$spoofed"
if [ "$router_drop" = ingress ]; then
	$R nft -f - <<EOF || exit 2
table netdev lunar_flood {
	chain from_b { type filter hook ingress device "arb-rb" priority -500; ip daddr $spoofed drop; }
}
EOF
fi
base_mode=${BASE:-plain} sink_port=9
case "$base_mode" in
plain) ;;
sink)
	$R nft -f - <<EOF || exit 2
table netdev lunar_sink {
	chain from_a { type filter hook ingress device "arb-ra" priority -500; tcp dport $sink_port drop; }
}
EOF
	;;
*) echo "BASE=$base_mode: expected plain (the default) or sink" >&2; exit 2 ;;
esac
$R sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.arb-ra.rp_filter=0
# Once flooded, lunar arms its XDP program to answer SYNs with its cookies
# (XDP_TX on the CPU that receives them, as the kernel answers in softirq;
# --xdp-syncookies). A veth delivers those frames only to a peer with an
# XDP program of its own (bpf/lunar_xdp_pass.bpf.c; a NIC needs nothing),
# which the kernel server's runs pass through too. XDP_SYNCOOKIES=off runs
# lunar without the responder, for comparison.
$R ip link set dev arb-rb xdpdrv obj "$build/bpf/lunar_xdp_pass.bpf.o" sec xdp || exit 2
xdp_syncookies=${XDP_SYNCOOKIES:-on}
idle_yield=${IDLE_YIELD:-0}
[[ "$idle_yield" =~ ^[0-9]+$ ]] || { echo "IDLE_YIELD=$idle_yield: expected a whole number (0: lunar-httpd always polls)" >&2; exit 2; }
$B sysctl -qw net.ipv4.tcp_syncookies=1
rmac=$(ip -n lunar-r -br link show arb-ra | awk '{print $3}')
mkdir -p "$log/root"
head -c 256M /dev/urandom >"$log/root/big.bin"
head -c 4096 /dev/urandom >"$log/root/small.bin"
small_sha=$(sha256sum "$log/root/small.bin" | cut -c1-64)

# The kernel's server: HTTP/1.0 like lunar-httpd's answers, backlog 1024 as lunar-httpd's.
kernel_server='
import functools, http.server, sys
class S(http.server.ThreadingHTTPServer):
    request_queue_size = 1024
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[2])
h.func.log_message = lambda *a: None
print("ready", flush=True)
S(("0.0.0.0", int(sys.argv[1])), h).serve_forever()
'

# SERVER_RX=server runs the receive work of the server's veth (arb-b) in a
# NAPI thread pinned to the server's CPU 1, as a NIC's interrupt affinity
# would: otherwise a veth receives on the sender's CPU, so every flooded
# SYN (and lunar's XDP answer) is handled on CPU 0, the client's.
server_rx=${SERVER_RX:-sender}
case "$server_rx" in
sender) ;;
server | nic)
	$B ethtool -K arb-b gro on >/dev/null || exit 2 # a veth has NAPI with GRO or XDP
	$B sh -c 'echo 1 > /sys/class/net/arb-b/threaded' || exit 2
	# arb-rb has NAPI already: it carries an XDP program (above).
	[ "$server_rx" = nic ] && { $R sh -c 'echo 1 > /sys/class/net/arb-rb/threaded' || exit 2; }
	;;
*) echo "SERVER_RX=$server_rx: expected sender (the default), server or nic" >&2; exit 2 ;;
esac
# Pin DEV's NAPI threads (made anew when an XDP program comes or goes) to CPU.
pin_napi() { # DEV CPU
	local n=0 pid
	for pid in $(pgrep "^napi/$1"); do
		taskset -pc "$2" "$pid" >/dev/null && n=$((n + 1))
	done
	[ "$n" -gt 0 ] || { echo "SERVER_RX=$server_rx: no NAPI thread of $1 to pin" >&2; exit 1; }
}
pin_server_rx() {
	[ "$server_rx" = sender ] && return 0
	pin_napi arb-b 1
	[ "$server_rx" = nic ] && pin_napi arb-rb 0
	return 0
}

start_server() { # lunar|kernel
	: >"$log/server.log"
	if [ "$1" = lunar ]; then
		$B "$httpd" --port af_xdp:arb-b --core 1 --listen "$port" --root "$log/root" \
			--xdp-syncookies "$xdp_syncookies" --idle-yield "$idle_yield" --counters \
			>"$log/server.log" 2>&1 &
	else
		$B taskset -c 1 /usr/bin/python3 -c "$kernel_server" "$port" "$log/root" >"$log/server.log" 2>&1 &
	fi
	server=$!
	pids+=("$server")
	for _ in $(seq 100); do grep -q ready "$log/server.log" && { pin_server_rx; return 0; }; sleep 0.1; done
	echo "the $1 server did not start:" >&2
	cat "$log/server.log" >&2
	exit 1
}

# Download big.bin again and again for $phase seconds; prints Gbit/s.
downloads() {
	local until bytes=0 ns=0 line
	until=$(($(date +%s%N) + phase * 1000000000))
	while [ "$(date +%s%N)" -lt "$until" ]; do
		line=$($A taskset -c 0 curl -s -o /dev/null --max-time 60 -w '%{size_download} %{time_total}' \
			"http://$dst:$port/big.bin")
		[ -n "$line" ] || line="0 0"
		bytes=$((bytes + ${line% *}))
		ns=$((ns + $(printf '%.0f' "$(echo "${line#* } * 1000000000" | bc)")))
	done
	awk -v b="$bytes" -v ns="$ns" 'BEGIN {printf "%.3f\n", ns ? b * 8 / ns : 0}'
}

# $conns new connections, one after the other: "OK/N median_connect_ms max_connect_ms".
new_conns() {
	local ok=0 out code ms
	: >"$log/connect.ms"
	for _ in $(seq "$conns"); do
		out=$($A taskset -c 0 curl -s --max-time 10 -w '%{http_code} %{time_connect}' \
			"http://$dst:$port/small.bin" -o "$log/small.got")
		code=${out% *} ms=${out#* }
		if [ "$code" = 200 ] && [ "$(sha256sum "$log/small.got" | cut -c1-64)" = "$small_sha" ]; then
			ok=$((ok + 1))
			awk -v s="$ms" 'BEGIN {printf "%.3f\n", s * 1000}' >>"$log/connect.ms"
		fi
		rm -f "$log/small.got"
	done
	echo "$ok/$conns $(median <"$log/connect.ms") $(sort -g "$log/connect.ms" | tail -1)"
}

start_flood() { # destination port
	$A taskset -c 0 "$flood" --interface arb-a --dst-mac "$rmac" --dst "$dst:$1" \
		--src-net "$spoofed" --duration 3600 --rate "$rate" --quiet >"$log/flood.log" 2>&1 &
	fpid=$!
	pids+=("$fpid")
}
stop_flood() { kill "$fpid"; wait "$fpid"; }
flood_pps() { awk '/^synflood: sent/ {print $(NF - 4)}' "$log/flood.log"; }

median() { sort -g | awk '{v[NR] = $1} END {if (!NR) print "-"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
field() { awk -v f="$2" '{for (i = 1; i < NF; i++) if ($i == f) {print $(i + 1); exit}}' "$1"; }
kernel_counters() { $B nstat -asz TcpExtSyncookiesSent TcpExtSyncookiesRecv TcpExtSyncookiesFailed \
	TcpExtListenOverflows TcpExtListenDrops TcpExtTCPReqQFullDoCookies | awk 'NR > 1 {print $1, $2}'; }

for r in $(seq "$rounds"); do
	for who in lunar kernel; do
		start_server "$who"
		[ "$who" = kernel ] && kernel_counters >"$log/nstat.before"
		sink_pps=-
		if [ "$base_mode" = sink ]; then
			start_flood "$sink_port"
			sleep 1
			base=$(downloads)
			stop_flood
			sink_pps=$(flood_pps)
		else
			base=$(downloads)
		fi
		start_flood "$port"
		sleep 1
		under=$(downloads)
		newc=$(new_conns)
		stop_flood
		kill "$server"
		wait "$server"
		pps=$(flood_pps)
		ratio=$(awk -v u="$under" -v b="$base" 'BEGIN {printf "%.3f\n", (b > 0 ? u / b : 0)}')
		if [ "$who" = lunar ]; then
			extra="syncookies_sent $(field "$log/server.log" syncookies_sent) syncookies_ok $(field "$log/server.log" syncookies_ok)"
			extra+=" syncookies_bad $(field "$log/server.log" syncookies_bad) syncookies_half_open $(field "$log/server.log" syncookies_half_open)"
			extra+=" syn_dropped_backlog $(field "$log/server.log" syn_dropped_backlog) syn_dropped_half_open $(field "$log/server.log" syn_dropped_half_open)"
			extra+=" syn_dropped_conns $(field "$log/server.log" syn_dropped_conns)"
			extra+=" | $(grep -E '^(xdp|af_xdp|port|ethdev|loop)' "$log/server.log" | tr '\n' ' ')"
		else
			kernel_counters >"$log/nstat.after"
			extra=$(join "$log/nstat.before" "$log/nstat.after" | awk '{printf "%s %d ", $1, $3 - $2}')
		fi
		printf 'round %d %-6s base %s Gbit/s, flood %s Gbit/s, ratio %s, new connections %s (ok, median and max connect ms), flood %s pps (base phase %s) | %s\n' \
			"$r" "$who" "$base" "$under" "$ratio" "$newc" "$pps" "$sink_pps" "$extra"
		echo "$base" >>"$log/base.$who"
		echo "$under" >>"$log/under.$who"
		echo "$ratio" >>"$log/ratio.$who"
		echo "$pps" >>"$log/pps.$who"
		echo "${newc%%/*}" >>"$log/ok.$who"
		echo "$newc" | awk '{print $2}' >>"$log/conn_ms.$who"
	done
done
for who in lunar kernel; do
	printf 'MEDIAN %-6s base %s Gbit/s, flood %s Gbit/s, ratio %s (target >= 0.80), new connections %s of %d ok, median connect %s ms, flood %s pps\n' \
		"$who" "$(median <"$log/base.$who")" "$(median <"$log/under.$who")" "$(median <"$log/ratio.$who")" \
		"$(paste -sd+ "$log/ok.$who" | bc)" $((rounds * conns)) "$(median <"$log/conn_ms.$who")" "$(median <"$log/pps.$who")"
done
div() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f\n", (b > 0 ? a / b : 0)}'; }
printf 'MEDIAN lunar/kernel: base throughput %s, under flood %s, ratio under flood / base %s\n' \
	"$(div "$(median <"$log/base.lunar")" "$(median <"$log/base.kernel")")" \
	"$(div "$(median <"$log/under.lunar")" "$(median <"$log/under.kernel")")" \
	"$(div "$(median <"$log/ratio.lunar")" "$(median <"$log/ratio.kernel")")"
