#!/usr/bin/env bash
# restart_recovery.sh - after a restart lunar has its neighbours and routes
# from the kernel before the first packet (LUNA §7.3, §7.4). lunar-get runs
# on af_xdp in namespace B, sharing the veth with B's kernel, against
# kernel servers in namespace A. B's kernel has resolved A. A first lunar
# process moves data and is stopped (SIGTERM); a second one starts on the
# same interface, connects to an address that only a kernel route of B's
# reaches (10.79.9.1 via A) and echoes 4 MiB. The restarted process sent
# its SYN without waiting for a neighbour (neigh_miss 0), asked the kernel
# nothing (neigh_kernel_asks 0), sent no ARP of its own (tx_arp_request
# 0), and a capture on A's side of the link saw lunar's SYN but no ARP
# request from B's address while it ran. The control: with B's neighbour
# entry flushed, the same run does count a miss and a kernel ask, and the
# capture does see the kernel's ARP request for lunar, so the counters and
# the capture really measure resolution; and without B's route the far
# address is unreachable and the drops are counted (NO_ROUTE).
#
# Namespaces, interfaces and addresses are its own (suffixed with the
# PID), so it cannot collide with the fixed lunar-a/lunar-b topology.
source "$(dirname "$0")/lib.sh"
setup_test restart_recovery "$1"
GET="$BUILD/tools/lunar-get"

export LUNAR_NS_A="lrr-a-$$" LUNAR_NS_B="lrr-b-$$"
export LUNAR_VETH_A="rra$$" LUNAR_VETH_B="rrb$$"
export LUNAR_VETH_A_IP=10.79.0.1/24 LUNAR_VETH_B_IP=10.79.0.2/24
NS_A=$LUNAR_NS_A NS_B=$LUNAR_NS_B VA=$LUNAR_VETH_A VB=$LUNAR_VETH_B
IP_A=10.79.0.1 IP_B=10.79.0.2
IP_FAR=10.79.9.1 # A's, on its loopback; B reaches it through a route via A
A="ip netns exec $NS_A" B="ip netns exec $NS_B"
# Every run is bounded, on a small pool (hugepages are shared with other tests).
LUNAR=(--port "af_xdp:$VB" --core 1 --pool 4096 --timeout 60 --counters)

on_exit "$TOPO" veth down
"$TOPO" veth up >"$OUT/topo.log" 2>&1 || { fail "topology up"; exit 1; }
ip -n "$NS_A" addr add "$IP_FAR/32" dev lo
ip -n "$NS_B" route add 10.79.9.0/24 via "$IP_A" dev "$VB"

# B's kernel resolves A afresh: delete the entry, then a kernel ping ARPs
# for it. Done right before each capture so the entry is REACHABLE (not
# STALE) throughout: a STALE entry the kernel itself sends through (an RST
# for the stopped process's connection) is re-probed by a unicast ARP from
# B's address, which the capture would count though lunar caused nothing.
kernel_resolve_peer() {
	ip -n "$NS_B" neigh del "$IP_A" dev "$VB" 2>/dev/null
	$B ping -c 1 -W 2 "$IP_A" >/dev/null 2>&1
	ip -n "$NS_B" neigh show "$IP_A" dev "$VB" | grep -q REACHABLE
}

# A capture on A's end of the veth: ARP, and TCP SYNs only (the transfer's
# data stays out of it). One line per frame: ARP opcode, ARP sender IP,
# ARP target IP, IP source.
CAP_FILTER='arp or (tcp[tcpflags] & tcp-syn != 0)'
cap_start() { # NAME MARKER_IP
	bg "cap_$1" $A tshark -l -n -i "$VA" -f "$CAP_FILTER" -T fields -E separator=, \
		-e arp.opcode -e arp.src.proto_ipv4 -e arp.dst.proto_ipv4 -e ip.src
	wait_for "capture $1 running" 100 grep -q "Capturing on" "$OUT/cap_$1.log" &&
		marker "$1" "$2"
}
# marker NAME IP: A's kernel ARPs for IP (an address nobody has), and the
# capture shows it. Sent before a run, it proves the capture was live when
# lunar started; after, that every earlier frame has been written out.
# A request from A for another address changes nothing in B's table.
marker() {
	for _ in $(seq 1 30); do
		$A ping -c 1 -W 0.2 "$2" >/dev/null 2>&1
		grep -q "^1,$IP_A,$2," "$OUT/cap_$1.log" && return 0
	done
	fail "capture $1: marker ARP for $2 never seen"
	return 1
}
cap_stop() { # NAME MARKER_IP
	marker "$1" "$2"
	stop "cap_$1"
}
# ARP requests from B's (and lunar's) address, and SYNs from it, in a capture.
arp_from_b() { grep -c "^1,$IP_B," "$OUT/cap_$1.log"; }
syn_from_b() { grep -c "^,,,$IP_B$" "$OUT/cap_$1.log"; }

# counters_ok LOG DESC: the run printed its interface counters (absent
# counters read as 0, so a run that died early must not pass for clean).
counters_ok() {
	expect_grep "$2: interface counters printed" "^netif $IP_B mac .* mode kernel-neigh" "$1"
}

kernel_resolve_peer
expect_eq "B's kernel resolved A (REACHABLE)" "$?" 0

# 1. The first process: receives a stream from a kernel source until stopped.
bg src $A socat -u OPEN:/dev/zero TCP-LISTEN:9000,reuseaddr
wait_for "kernel source on 9000" 50 ss_has $A ss -ltnH 'sport = :9000'
bg first $B "$GET" "${LUNAR[@]}" --connect "$IP_A:9000" --recv
# Data moves: A's kernel has had at least 1 MiB acknowledged by lunar.
acked_1m() {
	$A ss -tinH state established '( sport = :9000 )' |
		grep -o 'bytes_acked:[0-9]*' | awk -F: '$2 >= 1048576 {ok = 1} END {exit !ok}'
}
wait_for "the first process to receive 1 MiB" 200 acked_1m
stop first # SIGTERM: it closes its connection and detaches its XDP program
stop src
expect_eq "first process: exit code (interrupted)" "$RC_first" 1
expect_grep "first process: it was stopped, not failed" "interrupted" "$OUT/first.log"
counters_ok "$OUT/first.log" "first process"
expect_ge "first process: TCP segments received" "$(counter "$OUT/first.log" rx_tcp)" 100
expect_eq "first process: no XDP program left on $VB" \
	"$(ip -n "$NS_B" link show "$VB" | grep -c 'prog/xdp')" 0

# 2. The restart: a new process on the same interface, with B's kernel
# knowing A and the route to 10.79.9.0/24 through it, must send its first
# segment without resolving anything (without the route it could not send
# at all: B has no default gateway).
bg echo1 $A "$ROOT/tests/integration/echo_server.py" 9001
wait_for "kernel echo on 9001" 50 ss_has $A ss -ltnH 'sport = :9001'
kernel_resolve_peer
expect_eq "restart: B's kernel has A REACHABLE before the restart" "$?" 0
cap_start restart 10.79.0.201
$B "$GET" "${LUNAR[@]}" --connect "$IP_FAR:9001" --echo 4M >"$OUT/restart.log" 2>&1
expect_eq "restart: lunar-get exit code (the 4 MiB echo came back intact)" "$?" 0
cap_stop restart 10.79.0.202
log="$OUT/restart.log"
counters_ok "$log" restart
expect_grep "restart: 4 MiB echoed" "^echoed 4194304$" "$log"
expect_eq "restart: segments that waited for a neighbour (neigh_miss)" \
	"$(counter "$log" neigh_miss)" 0
expect_eq "restart: times lunar asked the kernel to resolve (neigh_kernel_asks)" \
	"$(counter "$log" neigh_kernel_asks)" 0
expect_eq "restart: ARP requests lunar sent itself (tx_arp_request)" \
	"$(counter "$log" tx_arp_request)" 0
expect_eq "restart: segments dropped for want of a route (NO_ROUTE)" \
	"$(counter "$log" NO_ROUTE)" 0
# Exactly one: a first SYN dropped for want of a route would be sent again.
expect_eq "restart: SYNs from lunar in the capture" "$(syn_from_b restart)" 1
expect_eq "restart: ARP requests from B's address on the wire" "$(arp_from_b restart)" 0
expect_grep "restart: no Zbuf object leaked" "^zbuf: 0 objects in use" "$log"

# 3. The control: the same run with B's entry for A flushed must resolve,
# and both the counters and the capture must show it.
bg echo2 $A "$ROOT/tests/integration/echo_server.py" 9002
wait_for "kernel echo on 9002" 50 ss_has $A ss -ltnH 'sport = :9002'
cap_start control 10.79.0.203
ip -n "$NS_B" neigh flush dev "$VB"
expect_eq "control: B's kernel has no entry for A" \
	"$(ip -n "$NS_B" neigh show "$IP_A" dev "$VB" | grep -c lladdr)" 0
$B "$GET" "${LUNAR[@]}" --connect "$IP_A:9002" --echo 4M >"$OUT/control.log" 2>&1
expect_eq "control: lunar-get exit code" "$?" 0
cap_stop control 10.79.0.204
log="$OUT/control.log"
counters_ok "$log" control
expect_ge "control: segments that waited for a neighbour (neigh_miss)" \
	"$(counter "$log" neigh_miss)" 1
expect_ge "control: times lunar asked the kernel to resolve (neigh_kernel_asks)" \
	"$(counter "$log" neigh_kernel_asks)" 1
expect_ge "control: the kernel's answer reached lunar (neigh_resolved)" \
	"$(counter "$log" neigh_resolved)" 1
expect_eq "control: ARP requests lunar sent itself (tx_arp_request; the kernel ARPs)" \
	"$(counter "$log" tx_arp_request)" 0
expect_ge "control: the capture saw the kernel's ARP request from B's address" \
	"$(arp_from_b control)" 1
expect_ge "control: the capture saw lunar's SYN" "$(syn_from_b control)" 1

# And without the kernel's route the far address cannot be reached: what
# the restarted process sent there went through the route it read at start.
ip -n "$NS_B" route del 10.79.9.0/24
$B "$GET" "${LUNAR[@]}" --timeout 2 --connect "$IP_FAR:9001" --echo 1K >"$OUT/noroute.log" 2>&1
expect_eq "no route: lunar-get exit code" "$?" 1
counters_ok "$OUT/noroute.log" "no route"
expect_ge "no route: SYNs dropped for want of a route (NO_ROUTE)" \
	"$(counter "$OUT/noroute.log" NO_ROUTE)" 1
