#!/usr/bin/env bash
# loss_transfer.sh - one bulk transfer through a lossy router, lunar against
# the kernel as the sender, side by side: namespace B sends SIZE bytes to a
# kernel socat in A through lunar-r, which drops LOSS% of what it forwards
# in both directions (nftables numgen, scripts/topo.sh arb loss). lunar-get
# sends on af_xdp (arb-b) with congestion control CC (--cc); the kernel
# sends with socat from the same namespace, its congestion control set to
# CC too (net.ipv4 sysctl, per namespace; KERNEL_CC= names another where
# the kernel lacks CC, e.g. dctcp without CONFIG_TCP_CONG_DCTCP), SACK and
# RACK on as by default, and its RTO floor lowered to
# lunar's 4 ms (rto_min on the route; Linux's default is 200 ms). Runs alternate (lunar,
# kernel, lunar, ...) so that a slow phase of the VM hits both. The time
# is the receiver's (bench/tcp_sink.py), from the accepted connection to
# EOF, so neither sender's process start counts (lunar's DPDK start takes
# about 0.2 s); the receiver checks the byte count. lunar-get runs with
# --no-digest: its SHA-256 of the data would take more of the sender's CPU
# than the stack does (it did before 11ce28f, see docs/benchmarks.md). Sender on CPU 1,
# receiver on CPU 0. Prints every run, then per loss the median seconds
# and Gbit/s of each and the ratio, and lunar's retransmission counters.
#
# usage: bench/loss_transfer.sh [SIZE=256M] [ROUNDS=3] [CC=reno|cubic|dctcp] [LOSSES="0 0.1 1 5"]
# Needs the release build in build/ and nothing else on CPUs 0-1.
# LUNAR_GET=path runs another lunar-get (an older build, for a before/after).
# AB_GET=path: a before/after without the kernel: the second sender of each
# round is that lunar-get ("lunar-b", same options), and the ratio printed
# is lunar-b's time over lunar's.
# QUICKACK=1: the kernel receiver does not delay its ACKs (route quickack);
# by default it does, and an ACK held past the 4 ms RTO floor makes both
# senders time out spuriously at high loss (docs/benchmarks.md).
# MARK=pct: the router also marks pct% of ECN-capable packets CE
# (topo.sh arb mark); ECN=on: both senders ask for ECN (lunar --ecn on, the
# kernel net.ipv4.tcp_ecn=1); DCTCP asks for it anyway.
# SHAPE="RATE LIMIT": the router forwards towards A through a token bucket
# (tc tbf) of RATE (e.g. 500mbit) whose queue holds LIMIT bytes (e.g. 256k):
# a bottleneck whose queue fills and then drops, as a switch port's does.
# LUNAR_ARGS: more lunar-get options (e.g. "--hystart off").
# OUTAGE="AT FOR": AT seconds after each sender starts, the path goes down
# for FOR seconds (the router answers every packet towards A with host
# unreachable, topo.sh arb unreach; RFC 6069's case) and comes back; the
# time then includes how soon each sender found it back. Use a SIZE that
# takes longer than AT to send.
# SINK_RCVBUF=bytes: the receiver's fixed SO_RCVBUF (no autotuning; capped
# by net.core.rmem_max, then doubled by Linux; the sink prints what it got
# on its "listening" line): a window far above what a shaped path holds.
set -u
size=${1:-256M} rounds=${2:-3} cc=${3:-reno} losses=${4:-0 0.1 1 5}
root=$(cd "$(dirname "$0")/.." && pwd)
get=${LUNAR_GET:-$root/build/tools/lunar-get}
topo=$root/scripts/topo.sh
[ -x "$get" ] || { echo "build first: $get is missing" >&2; exit 2; }
log=$(mktemp -d /tmp/lunar-loss.XXXXXX)
A="ip netns exec lunar-a" B="ip netns exec lunar-b"
trap '"$topo" arb down >/dev/null 2>&1; rm -rf "$log"' EXIT
"$topo" arb up >/dev/null
kcc=${KERNEL_CC:-$cc}
# A namespace may only pick what the host allows (net.ipv4.tcp_allowed_congestion_control).
allowed=$(sysctl -n net.ipv4.tcp_allowed_congestion_control)
case " $allowed " in
*" $kcc "*) ;;
*)
	sysctl -qw net.ipv4.tcp_allowed_congestion_control="$allowed $kcc" 2>/dev/null &&
		trap '"$topo" arb down >/dev/null 2>&1; rm -rf "$log"; sysctl -qw net.ipv4.tcp_allowed_congestion_control="$allowed"' EXIT
	;;
esac
if ! $B sysctl -qw net.ipv4.tcp_congestion_control="$kcc"; then
	echo "the kernel has no $kcc ($(sysctl -n net.ipv4.tcp_available_congestion_control)); set KERNEL_CC" >&2
	exit 2
fi
# shellcheck disable=SC2046 # the route's own words
$B ip route change $(ip -n lunar-b route show default) rto_min 4ms || exit 2
# QUICKACK=1: the receiver ACKs every segment at once (quickack on its route):
# no delayed ACK outlasts the senders' 4 ms RTO floor.
if [ "${QUICKACK:-0}" = 1 ]; then
	# shellcheck disable=SC2046 # the route's own words
	$A ip route change $(ip -n lunar-a route show default) quickack 1 || exit 2
fi
ecn=${ECN:-accept}
if [ "$ecn" = on ]; then
	$B sysctl -qw net.ipv4.tcp_ecn=1 || exit 2
fi
if [ -n "${MARK:-}" ]; then
	"$topo" arb mark "$MARK" >/dev/null || exit 2
fi
if [ -n "${SHAPE:-}" ]; then
	read -r rate limit <<<"$SHAPE"
	ip netns exec lunar-r tc qdisc replace dev "${LUNAR_ARB_RA:-arb-ra}" root tbf rate "$rate" \
		burst 64k limit "$limit" || exit 2
fi
head -c "$(numfmt --from=iec "$size")" /dev/urandom >"$log/src.bin"
bytes=$(stat -c %s "$log/src.bin")
port=9400

run() { # lunar|kernel PORT: prints seconds
	local who=$1 port=$2 rcv snd out=$log/sink.$2
	rm -f "$out"
	$A taskset -c 0 /usr/bin/python3 "$root/bench/tcp_sink.py" --port "$port" \
		--rcvbuf "${SINK_RCVBUF:-0}" --timeout 600 >"$out" &
	rcv=$!
	for _ in $(seq 50); do grep -q listening "$out" 2>/dev/null && break; sleep 0.1; done
	if [ "$who" != kernel ]; then
		local g=$get
		[ "$who" = lunar-b ] && g=$AB_GET
		$B "$g" --timeout 600 --port af_xdp:arb-b --core 1 --connect "10.78.1.1:$port" \
			--send "$log/src.bin" --no-digest --cc "$cc" --ecn "$ecn" --counters ${LUNAR_ARGS:-} >"$log/lunar.log" 2>&1 &
	else
		$B taskset -c 1 socat -u "FILE:$log/src.bin" "TCP:10.78.1.1:$port" &
	fi
	snd=$!
	if [ -n "${OUTAGE:-}" ]; then
		read -r at dur <<<"$OUTAGE"
		(sleep "$at" && "$topo" arb unreach 100 >/dev/null && sleep "$dur" && "$topo" arb unreach 0 >/dev/null) &
		cut=$!
	fi
	# A sender that fails (a connect refused, a missing XDP program, or an
	# error after the data, such as a leak lunar-get finds at exit) fails
	# the run, and the receiver does not wait for an EOF that never comes.
	if ! wait "$snd"; then
		kill "$rcv" 2>/dev/null
		echo "loss_transfer.sh: the $who sender failed" >&2
		[ "$who" = kernel ] || cat "$log/lunar.log" >&2
		exit 1
	fi
	wait "$rcv"
	[ -z "${OUTAGE:-}" ] || wait "$cut"
	read -r _ got _ secs < <(tail -n 1 "$out")
	if [ "$got" != "$bytes" ]; then
		echo "loss_transfer.sh: the receiver got ${got:-no} bytes from $who, not $bytes; it said:" >&2
		cat "$out" >&2
		exit 1
	fi
	echo "$secs"
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
gbits() { echo "scale=3; $bytes * 8 / $1 / 1000000000" | bc; }

for loss in $losses; do
	"$topo" arb loss "$loss" >/dev/null
	second=kernel
	[ -n "${AB_GET:-}" ] && second=lunar-b
	: >"$log/t.lunar"
	: >"$log/t.$second"
	for r in $(seq "$rounds"); do
		for who in lunar $second; do
			port=$((port + 1))
			t=$(run "$who" "$port") || exit 1
			echo "$t" >>"$log/t.$who"
			extra=""
			[ "$who" = kernel ] || extra=$(grep -o ' retransmits [0-9]*\| timeouts [0-9]*\| icmp_rto_reverts [0-9]*\| recoveries [0-9]*\| tlp_probes [0-9]*\| recovery_probes [0-9]*\| spurious_rtos [0-9]*\| frto_spurious [0-9]*\| spurious_recoveries [0-9]*\| dsacks [0-9]*\| ecn_cuts [0-9]*\| hystart_css [0-9]*\| hystart_exits [0-9]*' \
				"$log/lunar.log" | tr -d '\n')
			printf 'loss %s%% run %d %-6s %7.2f s %6s Gbit/s%s\n' "$loss" "$r" "$who" "$t" "$(gbits "$t")" "$extra"
		done
	done
	l=$(median <"$log/t.lunar") k=$(median <"$log/t.$second")
	printf 'MEDIAN loss %s%% mark %s%% ecn %s shape %s outage %s args %s (%s, lunar %s, kernel %s): lunar %.2f s %s Gbit/s, %s %.2f s %s Gbit/s, lunar/%s throughput %.2fx\n' \
		"$loss" "${MARK:-0}" "$ecn" "${SHAPE:-none}" "${OUTAGE:-none}" "${LUNAR_ARGS:-none}" "$size" "$cc" "$kcc" "$l" "$(gbits "$l")" "$second" "$k" "$(gbits "$k")" "$second" "$(echo "scale=3; $k / $l" | bc)"
done
