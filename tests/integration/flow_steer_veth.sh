#!/usr/bin/env bash
# flow_steer_veth.sh - the flow-director emulation on veth (docs/TRAFFIC.md):
# topo.sh makes multi-queue veths; flow_steer_veth.sh refuses plans the link
# cannot carry, sets up, replaces and removes its tc program idempotently;
# and its kernel-only experiment shows every segment of real TCP connections
# landing on its owner's queue at the far end (none misqueued) once the peer
# steers, and connections failing without it.
source "$(dirname "$0")/lib.sh"
setup_test flow_steer_veth "$1"
STEER="$ROOT/scripts/flow_steer_veth.sh"
export LUNAR_PEER_STEER_OBJ="$BUILD/bpf/lunar_peer_steer.bpf.o"
export LUNAR_STEER_OBJ="$BUILD/bpf/lunar_steer.bpf.o"
# Our own namespaces: other topologies (lunar-a, lunar-b) may be in use.
export LUNAR_NS_A=lunar-fva-$$ LUNAR_NS_B=lunar-fvb-$$
A=$LUNAR_NS_A

LUNAR_QUEUES=4 "$TOPO" veth up >"$OUT/topo.log" 2>&1
expect_eq "4-queue veth up" "$?" 0
on_exit "$TOPO" veth down
expect_eq "veth-a has 4 tx queues" "$(ip netns exec "$A" sh -c 'ls -d /sys/class/net/veth-a/queues/tx-* | wc -l')" 4
LUNAR_QUEUES=4 "$TOPO" veth up >>"$OUT/topo.log" 2>&1
expect_eq "4-queue veth up again (idempotent)" "$?" 0

"$STEER" up "$A" veth-a 8 >"$OUT/err1.log" 2>&1
expect_eq "a plan of 8 workers on 4 queues is refused" "$?" 1
expect_grep "the refusal says how to fix it" "LUNAR_QUEUES=8" "$OUT/err1.log"
"$STEER" up "$A" veth-a 4 --reserved 65000-65100 >"$OUT/err2.log" 2>&1
expect_eq "a reserved range too small for 4 workers is refused" "$?" 1
expect_grep "the refusal names the range" "65000-65100 is too small" "$OUT/err2.log"

"$STEER" up "$A" veth-a 4 --listen 8080,9090 >"$OUT/up.log" 2>&1
expect_eq "steering up" "$?" 0
"$STEER" up "$A" veth-a 4 --listen 8080 --rss >>"$OUT/up.log" 2>&1
expect_eq "steering up again replaces it" "$?" 0
expect_eq "one lunar filter on veth-a egress" \
	"$(ip netns exec "$A" tc filter show dev veth-a egress | grep -c 'lunar_peer_steer')" 1
"$STEER" show "$A" veth-a >"$OUT/show.log" 2>&1
expect_grep "show prints the plan in force" "reserved 61440-65535, 4 worker\(s\), listening ports by RSS" "$OUT/show.log"
"$STEER" down "$A" veth-a >/dev/null 2>&1
expect_eq "steering down" "$?" 0
"$STEER" down "$A" veth-a >/dev/null 2>&1
expect_eq "steering down again (idempotent)" "$?" 0
expect_eq "no clsact left on veth-a" "$(ip netns exec "$A" tc qdisc show dev veth-a | grep -c clsact)" 0

"$STEER" demo >"$OUT/demo.log" 2>&1
expect_eq "demo: every connection completes with steering, none misqueued" "$?" 0
expect_grep "demo: with steering, nothing misqueued" "with steering: 24/24 connections, 0 segments misqueued" "$OUT/demo.log"
sed 's/^/    /' "$OUT/demo.log"
expect_eq "demo left no namespace" "$(ip netns list | grep -c "lunar-fs[ab]-")" 0
