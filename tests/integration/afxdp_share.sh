#!/usr/bin/env bash
# afxdp_share.sh - LUNA's traffic model on one interface (LUNA §7.1, §7.3).
# lunar runs on af_xdp on veth-b in namespace B with B's own address. From
# namespace A: the kernel in B still answers ping and serves TCP on port
# 8080; lunar receives exactly the TCP packets to its reserved ports; each
# hostile packet is dropped under its own reason; lunar sends through the
# kernel's neighbour table, and lunar-ping, yielding its core when idle,
# sends each echo before it yields; and nothing (no XDP program) is left
# behind.
source "$(dirname "$0")/lib.sh"
setup_test afxdp_share "$1"
CRAFT="$ROOT/tests/integration/craft.py"

"$TOPO" veth up >/dev/null
on_exit "$TOPO" veth down
A="ip netns exec lunar-a" B="ip netns exec lunar-b"
mac_b=$(ip -n lunar-b -br link show veth-b | awk '{print $3}')

# The kernel's own TCP service on B, on a port outside lunar's range.
bg socat $B socat TCP-LISTEN:8080,reuseaddr,fork SYSTEM:'echo kernel-tcp-ok'
wait_for "socat on 8080" 50 ss_has $B ss -ltn 'sport = :8080' -H

# lunar takes B's address, prefix and default gateway from the kernel (LUNA §7.3).
ip -n lunar-b route replace default via 10.77.0.1 dev veth-b
bg lunar $B "$PING" --port af_xdp:veth-b --core 1 --responder --counters
wait_for "XDP program on veth-b" 100 sh -c "ip -n lunar-b link show veth-b | grep -q xdp"
wait_for "lunar ready" 100 grep -q "ready" "$OUT/lunar.log"

expect_grep "address, prefix and gateway borrowed from the kernel" \
	"ready on af_xdp:veth-b, 10.77.0.2/24, gateway 10.77.0.1," "$OUT/lunar.log"

# The kernel keeps ICMP and its own TCP ports.
$A ping -c 3 -i 0.2 -W 2 10.77.0.2 >"$OUT/kping.log" 2>&1
expect_eq "kernel answers ping on the shared interface" "$?" 0
got=$($A socat -T 5 - TCP:10.77.0.2:8080 </dev/null 2>&1)
expect_eq "kernel TCP service on 8080 answers" "$got" "kernel-tcp-ok"

# Exact traffic: 10 TCP to lunar's range, 3 UDP and 2 TCP that stay with the kernel.
$A "$CRAFT" veth-a 10.77.0.1 10.77.0.2 "$mac_b" steer >"$OUT/steer.log" 2>&1
expect_grep "crafted steer traffic sent" "sent tcp-reserved 10" "$OUT/steer.log"
$A "$CRAFT" veth-a 10.77.0.1 10.77.0.2 "$mac_b" hostile >"$OUT/hostile.log" 2>&1
expect_grep "crafted hostile traffic sent" "sent TCP_BAD_OPTION 1" "$OUT/hostile.log"
stop lunar # lunar-ping drains its port before it prints the counters

expect_eq "lunar exit code" "$RC_lunar" 0
expect_eq "frames lunar received: exactly the 16 steered ones" "$(counter "$OUT/lunar.log" rx_frames)" 16
expect_eq "TCP segments to the reserved range reached lunar" "$(counter "$OUT/lunar.log" rx_tcp)" 10
expect_eq "lunar saw no ARP (the kernel's)" "$(counter "$OUT/lunar.log" rx_arp)" 0
expect_eq "lunar saw no ICMP (the kernel's)" "$(counter "$OUT/lunar.log" rx_icmp)" 0
expect_eq "lunar saw no UDP (the kernel's)" "$(counter "$OUT/lunar.log" rx_udp)" 0
for reason in IP_BAD_CHECKSUM TCP_BAD_CHECKSUM IP_FRAGMENT IP_BAD_OPTIONS TCP_BAD_OFFSET TCP_BAD_OPTION; do
	expect_eq "hostile packet dropped as $reason" "$(counter "$OUT/lunar.log" "$reason")" 1
done
to_lunar=$(awk '/^xdp:/ {print $3}' "$OUT/lunar.log")
expect_eq "XDP program redirected exactly the steered packets" "$to_lunar" 16
expect_eq "no XDP program left on veth-b" "$(ip -n lunar-b link show veth-b | grep -c 'prog/xdp')" 0
expect_grep "lunar leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/lunar.log"

# Transmit through the kernel's neighbour table: flush B's entry for A, let
# lunar ask the kernel to resolve it, and count the echo requests A receives.
# (The echo replies belong to B's kernel, as ICMP is not steered to lunar.)
# lunar-ping yields its core when idle (--idle-yield 1): an echo it queues
# between two polls, after idle ones, must go out before the loop yields.
ip -n lunar-b neigh flush dev veth-b
before=$($A nstat -az IcmpInEchos | awk '/IcmpInEchos/ {print $2}')
$B "$PING" --port af_xdp:veth-b --core 1 -c 5 -i 20 -W 200 --counters --idle-yield 1 10.77.0.1 \
	>"$OUT/tx.log" 2>&1
after=$($A nstat -az IcmpInEchos | awk '/IcmpInEchos/ {print $2}')
expect_eq "echo requests from lunar reached A's kernel" "$((after - before))" 5
expect_ge "lunar asked the kernel to resolve A" "$(counter "$OUT/tx.log" neigh_kernel_asks)" 1
expect_ge "the kernel's answer reached lunar over netlink" "$(counter "$OUT/tx.log" neigh_resolved)" 1
expect_ge "lunar-ping yielded while it waited" "$(line_field "$OUT/tx.log" loop: idle_yields)" 1
expect_ge "queued echoes called the pending yield off" \
	"$(line_field "$OUT/tx.log" loop: yields_called_off_tx)" 1
expect_grep "lunar (tx) leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/tx.log"
