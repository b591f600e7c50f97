#!/usr/bin/env bash
# topo_scripts.sh - the topology scripts are idempotent and clean up: each
# topology comes up twice without error, carries traffic (A - R - B routed,
# with nftables loss, ECN marking, unreachables and ECN-setup SYN drops in
# the router), and goes down twice leaving nothing.
source "$(dirname "$0")/lib.sh"
setup_test topo_scripts "$1"
on_exit "$TOPO" down-all

for t in veth arb memif; do
	"$TOPO" $t up >"$OUT/up1.log" 2>&1
	expect_eq "$t up" "$?" 0
	"$TOPO" $t up >"$OUT/up2.log" 2>&1
	expect_eq "$t up again (idempotent)" "$?" 0
done
expect_eq "namespaces after up" "$(ip netns list | grep -cE '^lunar-(a|b|r)( |$)')" 3
test -d /run/lunar
expect_eq "memif run directory exists" "$?" 0

ip netns exec lunar-a ping -c 2 -i 0.2 -W 2 10.77.0.2 >/dev/null 2>&1
expect_eq "veth: A reaches B" "$?" 0
ip netns exec lunar-a ping -c 2 -i 0.2 -W 2 10.78.2.2 >/dev/null 2>&1
expect_eq "arb: A reaches B through the router" "$?" 0
expect_eq "kernel side of veth-a has tx checksum offload off" \
	"$(ip netns exec lunar-a ethtool -k veth-a | awk '/^tx-checksumming:/ {print $2}')" off

# 100% loss in the router: nothing gets through; 0% restores it.
"$TOPO" arb loss 100 >/dev/null
ip netns exec lunar-a ping -c 2 -i 0.2 -W 1 10.78.2.2 >/dev/null 2>&1
expect_eq "arb loss 100: nothing crosses the router" "$?" 1
"$TOPO" arb loss 0 >/dev/null
ip netns exec lunar-a ping -c 2 -i 0.2 -W 2 10.78.2.2 >/dev/null 2>&1
expect_eq "arb loss 0: traffic flows again" "$?" 0
# A path that is down: B's packets towards A are answered with host unreachable.
"$TOPO" arb unreach 100 >/dev/null
ip netns exec lunar-b ping -c 1 -W 1 10.78.1.1 >"$OUT/unreach.log" 2>&1
expect_grep "arb unreach 100: the router answers host unreachable" "Destination Host Unreachable" "$OUT/unreach.log"
"$TOPO" arb unreach 0 >/dev/null
ip netns exec lunar-b ping -c 2 -i 0.2 -W 2 10.78.1.1 >/dev/null 2>&1
expect_eq "arb unreach 0: traffic flows again" "$?" 0
# Tenths of a percent become a rule over 1000; a bad value is refused by name.
"$TOPO" arb loss 0.1 >/dev/null
expect_eq "arb loss 0.1: rule drops 1 in 1000" \
	"$(ip netns exec lunar-r nft list ruleset | grep -c 'numgen random mod 1000 < 1 ')" 1
"$TOPO" arb loss 0 >/dev/null
"$TOPO" arb loss 0.15 >/dev/null 2>&1
expect_eq "arb loss 0.15 is refused" "$?" 1
# ECN marking in the router: ECN-capable packets leave CE, others pass untouched.
"$TOPO" arb mark 100 >/dev/null
ip netns exec lunar-a ping -c 3 -i 0.2 -W 2 -Q 0 10.78.2.2 >/dev/null 2>&1
expect_eq "arb mark 100: packets that are not ECN-capable still cross" "$?" 0
marked() { ip netns exec lunar-r nft list table ip lunar_mark | awk '/counter/ {for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1)}'; }
expect_eq "arb mark 100: not-ECT packets are not marked" "$(marked)" 0
ip netns exec lunar-a ping -c 3 -i 0.2 -W 2 -Q 2 10.78.2.2 >/dev/null 2>&1
expect_eq "arb mark 100: ECT(0) packets cross" "$?" 0
expect_ge "arb mark 100: ECT(0) packets are marked CE" "$(marked)" 3
"$TOPO" arb mark 0 >/dev/null
expect_eq "arb mark 0: the rule is gone" "$(ip netns exec lunar-r nft list tables | grep -c lunar_mark)" 0
"$TOPO" arb mark 7.25 >/dev/null 2>&1
expect_eq "arb mark 7.25 is refused" "$?" 1
# ECN-setup SYNs (ECE and CWR) dropped in the router; plain SYNs cross.
"$TOPO" arb ecnsyn 100 >/dev/null
ecnsyn_drops() { ip netns exec lunar-r nft list table ip lunar_ecnsyn | grep -o 'packets [0-9]*' | awk '{print $2}'; }
ip netns exec lunar-b timeout 3 bash -c 'exec 3<>/dev/tcp/10.78.1.1/9' 2>"$OUT/ecnsyn.log"
expect_grep "arb ecnsyn 100: a plain SYN crosses (A refuses it)" "refused" "$OUT/ecnsyn.log"
expect_eq "arb ecnsyn 100: a plain SYN is not dropped" "$(ecnsyn_drops)" 0
# The kernel asking for ECN: its first SYN is dropped, its fallback crosses after 1 s.
ip netns exec lunar-b sysctl -qw net.ipv4.tcp_ecn=1
ip netns exec lunar-b timeout 5 bash -c 'exec 3<>/dev/tcp/10.78.1.1/9' 2>"$OUT/ecnsyn.log"
ip netns exec lunar-b sysctl -qw net.ipv4.tcp_ecn=2
expect_grep "arb ecnsyn 100: the kernel's plain SYN after it crosses" "refused" "$OUT/ecnsyn.log"
expect_eq "arb ecnsyn 100: the ECN-setup SYN is dropped" "$(ecnsyn_drops)" 1
"$TOPO" arb ecnsyn 0 >/dev/null
expect_eq "arb ecnsyn 0: the rule is gone" "$(ip netns exec lunar-r nft list tables | grep -c lunar_ecnsyn)" 0


for t in veth arb memif; do
	"$TOPO" $t down >/dev/null 2>&1
	expect_eq "$t down" "$?" 0
	"$TOPO" $t down >/dev/null 2>&1
	expect_eq "$t down again (idempotent)" "$?" 0
done
expect_eq "namespaces after down" "$(ip netns list | grep -cE '^lunar-(a|b|r)( |$)')" 0
