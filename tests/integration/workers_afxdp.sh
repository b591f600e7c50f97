#!/usr/bin/env bash
# workers_afxdp.sh - two workers on two queues over af_xdp (LUNA 5, 7.4):
# lunar with --core 0,1 on a two-queue veth, the kernel's TCP on the other
# end, and scripts/flow_steer_veth.sh on the kernel's veth in the role of a
# NIC's flow director. Both directions:
#  - lunar serves (knb server, port shared by both workers) 8 connections
#    of a kernel knb client whose source ports are 4 even and 4 odd: each
#    worker accepts the 4 of its residue (source port mod 2);
#  - lunar is the client (knb client, 4 connections per worker) of a kernel
#    knb server: each worker's local ports lie in its own sub-range of the
#    reserved range and its replies come back on its own queue.
# Every segment arrives on its owner's queue (XDP misqueued 0 on both
# queues), no stack sees another worker's segment (tcp foreign 0),
# requests = responses, nothing leaks. Then a control: with the peer
# sending everything on queue 0 (XPS, no flow director), the XDP program
# drops worker 1's segments as misqueued and worker 1 accepts nothing.
# Also: two workers on a one-queue veth are refused with the fix.
source "$(dirname "$0")/lib.sh"
setup_test workers_afxdp "$1"
KNB="$BUILD/tools/knb/knb"
STEER="$ROOT/scripts/flow_steer_veth.sh"
export LUNAR_PEER_STEER_OBJ="$BUILD/bpf/lunar_peer_steer.bpf.o"
# Our own namespaces and interfaces (other tests use lunar-a, lunar-b, veth-a, veth-b).
export LUNAR_NS_A=lunar-wxa-$$ LUNAR_NS_B=lunar-wxb-$$ LUNAR_VETH_A=wxa$$ LUNAR_VETH_B=wxb$$
export LUNAR_QUEUES=2
A=$LUNAR_NS_A B=$LUNAR_NS_B VA=$LUNAR_VETH_A VB=$LUNAR_VETH_B
CONNS=8 # kernel client: 2 threads x 4 flows
KCLI=(client --stack kernel --threads 2 --flows 4 --kernel-mode blocking --duration 1 --warmup 0.2)

"$TOPO" veth up >"$OUT/topo.log" 2>&1
expect_eq "two-queue veth up" "$?" 0
on_exit "$TOPO" veth down
expect_eq "$VB has 2 rx queues" "$(ip netns exec "$B" sh -c "ls -d /sys/class/net/$VB/queues/rx-* | wc -l")" 2

# Two workers need two queues: a one-queue veth is refused, with the fix.
ip -n "$B" link add name "wx1$$" type veth peer name "wx2$$"
on_exit ip -n "$B" link del "wx1$$"
ip -n "$B" link set dev "wx1$$" up
ip netns exec "$B" "$KNB" server --stack lunar --port "af_xdp:wx1$$" --ip 10.88.0.2/24 \
	--listen 10.88.0.2:7000 --core 0,1 >"$OUT/one-queue.log" 2>&1
expect_eq "two workers on a one-queue veth: refused" "$?" 1
expect_grep "the refusal names the fix" "2 workers need 2 queues, but wx1$$ has 1.*numrxqueues 2" \
	"$OUT/one-queue.log"
expect_eq "no XDP program left on the one-queue veth" \
	"$(ip -n "$B" link show "wx1$$" | grep -c prog/xdp)" 0

# One worker on the two-queue veth: half its flows would land on a queue
# nobody polls and the kernel would reset them; refused, with the fix.
ip netns exec "$B" "$KNB" server --stack lunar --port "af_xdp:$VB" --ip 10.88.0.2/24 \
	--listen 10.88.0.2:7000 --core 0 >"$OUT/fewer-workers.log" 2>&1
expect_eq "one worker on a two-queue veth: refused" "$?" 1
expect_grep "the refusal names the fix" "$VB has 2 queues but lunar runs 1 worker on it.*run 2 workers" \
	"$OUT/fewer-workers.log"
expect_eq "no XDP program left on the two-queue veth" \
	"$(ip -n "$B" link show "$VB" | grep -c prog/xdp)" 0

# The flow director: lunar's segments leave A on the queue of the worker that owns them.
"$STEER" up "$A" "$VA" 2 --listen 7000,7001 >"$OUT/steer.log" 2>&1
expect_eq "flow director on $VA" "$?" 0

# checks_per_worker LOG DESC: both workers' XDP queues carried lunar's
# segments, none misqueued or unclaimed, and no stack got another's segment.
checks_per_worker() {
	local log=$1 desc=$2 w
	for w in 0 1; do
		expect_ge "$desc: XDP queue $w redirected to worker $w" "$(worker_field "$log" $w to_lunar xdp:)" 1
		expect_eq "$desc: XDP queue $w misqueued" "$(worker_field "$log" $w misqueued xdp:)" 0
		expect_eq "$desc: XDP queue $w found no socket" "$(worker_field "$log" $w redirect_failed xdp:)" 0
		expect_eq "$desc: worker $w got no other worker's segment" "$(worker_field "$log" $w foreign)" 0
	done
	expect_grep "$desc: no Zbuf object leaked" "^zbuf: 0 objects in use at exit" "$log"
}

# (a) lunar serves, the kernel connects. Linux's connect() takes ephemeral
# ports of one parity first (__inet_hash_connect()), which would give every
# connection to worker 0; a range of exactly $CONNS ports makes it use them
# all, 4 even and 4 odd.
ip netns exec "$A" sysctl -qw net.ipv4.ip_local_port_range="40000 $((40000 + CONNS - 1))"
bg srv ip netns exec "$B" "$KNB" server --stack lunar --port "af_xdp:$VB" \
	--listen 10.77.0.2:7000 --core 0,1 --verbose
wait_for "lunar server" 100 grep -q "ready" "$OUT/srv.log"
timeout 60 ip netns exec "$A" "$KNB" "${KCLI[@]}" --connect 10.77.0.2:7000 \
	--json "$OUT/server.json" >"$OUT/kcli.log" 2>&1
expect_eq "lunar server: kernel client exit code" "$?" 0
stop srv
mv "$OUT/srv.log" "$OUT/srv-server.log"
srv=$OUT/srv-server.log
expect_eq "lunar server: exit code" "$RC_srv" 0
expect_eq "lunar server: requests = responses (kernel client)" \
	"$(json "$OUT/server.json" "d['requests'] - d['responses']")" 0
expect_ge "lunar server: RPCs completed" "$(json "$OUT/server.json" "d['responses']")" 10
read -r sreq sresp < <(awk '/^knb server: requests/ {print $4, $6}' "$srv")
expect_eq "lunar server: it answered every request" "${sreq:-x}" "${sresp:-y}"
for w in 0 1; do
	expect_eq "lunar server: worker $w accepted the connections of source port % 2 = $w" \
		"$(worker_field "$srv" $w accepted)" $((CONNS / 2))
done
checks_per_worker "$srv" "lunar server"

# (b) lunar connects, the kernel serves.
bg ksrv ip netns exec "$A" "$KNB" server --stack kernel --listen 10.77.0.1:7000 --kernel-mode blocking
wait_for "kernel knb server" 50 ss_has ip netns exec "$A" ss -Hltn 'sport = :7000'
timeout 60 ip netns exec "$B" "$KNB" client --stack lunar --port "af_xdp:$VB" --core 0,1 \
	--connect 10.77.0.1:7000 --flows 4 --duration 1 --warmup 0.2 --verbose \
	--json "$OUT/client.json" >"$OUT/cli.log" 2>&1
expect_eq "lunar client: exit code" "$?" 0
stop ksrv
cli=$OUT/cli.log
expect_eq "lunar client: two threads reported" "$(json "$OUT/client.json" "len(d['threads'])")" 2
expect_eq "lunar client: requests = responses" \
	"$(json "$OUT/client.json" "d['requests'] - d['responses']")" 0
expect_ge "lunar client: RPCs completed" "$(json "$OUT/client.json" "d['responses']")" 10
for w in 0 1; do
	expect_eq "lunar client: worker $w opened its 4 connections" "$(worker_field "$cli" $w opened)" 4
	expect_ge "lunar client: worker $w's RPCs" \
		"$(json "$OUT/client.json" "d['threads'][$w]['responses']")" 1
	expect_own_ports "lunar client" "$cli" $w 2 4
done
checks_per_worker "$cli" "lunar client"

# Control: no flow director, and A sends everything on tx queue 0 (XPS),
# as a NIC without rules would hash all of it to one queue. Worker 1's
# segments then arrive on queue 0: dropped there as misqueued, never given
# to worker 0's stack; worker 1 accepts nothing and the client gives up.
"$STEER" down "$A" "$VA" >>"$OUT/steer.log" 2>&1
# Every CPU, as the comma-separated 32-bit words of a cpumask.
all_cpus=$(/usr/bin/python3 -c 'import os; n = os.cpu_count(); m = (1 << n) - 1
print(",".join("%08x" % (m >> s & 0xffffffff) for s in range((n - 1) // 32 * 32, -1, -32)))')
ip netns exec "$A" sh -c "echo $all_cpus > /sys/class/net/$VA/queues/tx-0/xps_cpus; echo 0 > /sys/class/net/$VA/queues/tx-1/xps_cpus"
ip netns exec "$A" sysctl -qw net.ipv4.ip_local_port_range="40100 $((40100 + CONNS - 1))"
bg srv ip netns exec "$B" "$KNB" server --stack lunar --port "af_xdp:$VB" \
	--listen 10.77.0.2:7000 --core 0,1 --verbose
wait_for "lunar server" 100 grep -q "ready" "$OUT/srv.log"
timeout 60 ip netns exec "$A" "$KNB" "${KCLI[@]}" --connect 10.77.0.2:7000 --connect-timeout 2 \
	>"$OUT/kcli-control.log" 2>&1
expect_eq "control: the kernel client could not connect everything" "$?" 1
stop srv
mv "$OUT/srv.log" "$OUT/srv-control.log"
ctl=$OUT/srv-control.log
expect_ge "control: XDP queue 0 dropped worker 1's segments as misqueued" \
	"$(worker_field "$ctl" 0 misqueued xdp:)" $((CONNS / 2))
expect_eq "control: nothing arrived on queue 1" "$(worker_field "$ctl" 1 to_lunar xdp:)" 0
expect_eq "control: worker 1 accepted nothing" "$(worker_field "$ctl" 1 accepted)" 0
expect_eq "control: worker 0's stack got none of them" "$(worker_field "$ctl" 0 foreign)" 0
expect_grep "control: no Zbuf object leaked" "^zbuf: 0 objects in use at exit" "$ctl"
