#!/usr/bin/env bash
# tap_ping.sh - lunar to lunar over two tap ports joined by a kernel bridge,
# inside a namespace of its own: lunar's own ARP across a real L2 segment;
# then the namespace's kernel finds lunar answers a UDP port and a protocol
# it has nothing for with destination unreachable.
# Optional FAULT env: a --fault spec for the pinger (tap_fault.sh uses it).
source "$(dirname "$0")/lib.sh"
setup_test "tap_ping${FAULT:+_fault}" "$1"
count=${COUNT:-20}
fault_args=()
[ -n "${FAULT:-}" ] && fault_args=(--fault "$FAULT" --fault seed=11)

ns=lunar-tap-$$
ip netns add "$ns"
on_exit ip netns del "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" link add lunarbr0 type bridge
ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n "$ns" link set lunarbr0 up

# Persistent taps on the bridge before lunar attaches to them, so the first
# ARP request is not sent into a tap that is not on the bridge yet.
for t in ltap0 ltap1; do
	ip -n "$ns" tuntap add dev $t mode tap multi_queue
	ip -n "$ns" link set $t master lunarbr0 up
done
bg resp ip netns exec "$ns" "$PING" --port tap:ltap0 --ip 192.168.78.2/24 --core 1 --responder --counters
wait_for "responder ready" 100 grep -q ready "$OUT/resp.log"
# Its tap forwards on the bridge only once the kernel has seen the carrier
# (up to a second later); the pinger waits for its own tap likewise.
wait_for "responder's tap forwarding" 200 \
	ip netns exec "$ns" grep -qx 3 /sys/class/net/ltap0/brport/state
ip netns exec "$ns" "$PING" --port tap:ltap1 --ip 192.168.78.1/24 --core 0 -c "$count" -i 20 -W 1000 \
	--counters "${fault_args[@]}" 192.168.78.2 >"$OUT/ping.log" 2>&1
ping_rc=$?
if [ -z "${FAULT:-}" ]; then
	# The namespace's kernel on the bridge: a UDP port and a protocol lunar
	# has nothing for get destination unreachable (RFC 1122 3.2.2.1), which
	# Linux reports to the UDP socket as ECONNREFUSED.
	ip -n "$ns" addr add 192.168.78.9/24 dev lunarbr0
	ip netns exec "$ns" /usr/bin/python3 - >"$OUT/unreach.log" 2>&1 <<'PY'
import socket

u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(1)
u.connect(("192.168.78.2", 9))
for _ in range(5):
    u.send(b"anyone there?")
    try:
        u.recv(100)
    except ConnectionRefusedError:
        print("udp: refused")
        break
    except socket.timeout:
        pass
icmp = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
icmp.settimeout(1)
raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, 253)
for _ in range(5):
    raw.sendto(b"experimental", ("192.168.78.2", 0))
    try:
        d, a = icmp.recvfrom(2048)
    except socket.timeout:
        continue
    if a[0] == "192.168.78.2" and d[20] == 3 and d[20 + 8 + 9] == 253:
        print("proto: type %d code %d" % (d[20], d[21]))
        break
PY
	expect_grep "kernel UDP socket refused by port unreachable" "^udp: refused$" "$OUT/unreach.log"
	expect_grep "protocol unreachable for protocol 253" "^proto: type 3 code 2$" "$OUT/unreach.log"
fi
stop resp

received=$(awk '/transmitted/ {print $3}' "$OUT/ping.log")
if [ -z "${FAULT:-}" ]; then
	expect_eq "pinger exit code" "$ping_rc" 0
	expect_eq "echo replies received" "$received" "$count"
else
	# 20% loss each way: about 64% of echoes come back; far from 0 and from all.
	expect_ge "echo replies received under loss" "$received" $((count * 25 / 100))
	expect_le "echo replies received under loss" "$received" $((count * 90 / 100))
	expect_ge "fault wrapper drops" "$(awk '/^fault tx:/ {print $6}' "$OUT/ping.log")" 1
fi
expect_ge "pinger ARP requests" "$(counter "$OUT/ping.log" tx_arp_request)" 1
expect_ge "responder ARP replies" "$(counter "$OUT/resp.log" tx_arp_reply)" 1
if [ -z "${FAULT:-}" ]; then
	expect_ge "responder's unreachables sent" "$(counter "$OUT/resp.log" tx_icmp_unreach)" 2
fi
expect_grep "pinger leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/ping.log"
expect_grep "responder leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/resp.log"
expect_eq "responder exit code" "$RC_resp" 0
expect_grep "pinger's tap: no bad frame, no error" "^tap ltap1: rx_bad_frames 0 rx_errors 0 tx_errors 0$" \
	"$OUT/ping.log"
