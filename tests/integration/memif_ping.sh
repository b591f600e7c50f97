#!/usr/bin/env bash
# memif_ping.sh - lunar to lunar over memif with lunar's own ARP: a responder
# (memif server) and a pinger (memif client); every echo is answered, ARP
# resolved the peer, each side announced its address (gratuitous ARP), and
# neither side leaked a Zbuf object.
# Optional FAULT env: a --fault spec for the pinger (the fault test reuses this);
# optional MTU env: both ends use that MTU and the pings fill it (jumbo test).
source "$(dirname "$0")/lib.sh"
setup_test "memif_ping${FAULT:+_fault}${MTU:+_mtu$MTU}" "$1"

sock=/run/lunar/test-ping-$$.sock
"$TOPO" memif up >/dev/null
on_exit rm -f "$sock"
count=${COUNT:-20}

mtu_args=()
[ -n "${MTU:-}" ] && mtu_args=(--mtu "$MTU" -s $((MTU - 28)))
bg resp "$PING" --port "memif:$sock:server" --ip 192.168.77.2/24 --core 1 --responder --counters \
	${MTU:+--mtu "$MTU"}
wait_for "memif socket" 100 test -S "$sock"
fault_args=(--pcap "$OUT/ping.pcap")
[ -n "${FAULT:-}" ] && fault_args=(--fault "$FAULT" --fault seed=7)
"$PING" --port "memif:$sock:client" --ip 192.168.77.1/24 --core 0 -c "$count" -i "${INTERVAL:-10}" \
	-W 500 --counters "${fault_args[@]}" "${mtu_args[@]}" 192.168.77.2 >"$OUT/ping.log" 2>&1
ping_rc=$?
stop resp

received=$(awk '/transmitted/ {print $3}' "$OUT/ping.log")
if [ -z "${FAULT:-}" ]; then
	expect_eq "pinger exit code" "$ping_rc" 0
	expect_eq "echo replies received" "$received" "$count"
	expect_eq "responder ARP replies" "$(counter "$OUT/resp.log" tx_arp_reply)" 1
	expect_eq "responder echo replies" "$(counter "$OUT/resp.log" tx_icmp_echo_reply)" "$count"
	# The capture: tshark reads it, sees every frame, and finds nothing malformed or bad.
	frames=$(tshark_count "$OUT/ping.pcap")
	expect_eq "frames in the pcap capture (rx + tx)" "$frames" \
		$(($(counter "$OUT/ping.log" rx_frames) + $(counter "$OUT/ping.log" tx_frames)))
	bad=$(tshark -r "$OUT/ping.pcap" -o ip.check_checksum:TRUE -Y \
		'ip.checksum.status == "Bad" || icmp.checksum.status == "Bad" || _ws.malformed || _ws.expert.severity >= "Warning"' \
		2>/dev/null | wc -l)
	expect_eq "malformed frames or bad checksums in the capture" "$bad" 0
	# RFC 5227 announcement once the link carries frames (memif's never reads up).
	expect_eq "pinger's gratuitous ARP in the capture" "$(tshark_count "$OUT/ping.pcap" \
		'arp.opcode == 1 && arp.src.proto_ipv4 == 192.168.77.1 && arp.dst.proto_ipv4 == 192.168.77.1')" 1
	expect_ge "responder's gratuitous ARP (ARP requests sent)" "$(counter "$OUT/resp.log" tx_arp_request)" 1
else
	# 20% loss each way: about 64% of echoes come back; far from 0 and from all.
	expect_ge "echo replies received under loss" "$received" $((count * 25 / 100))
	expect_le "echo replies received under loss" "$received" $((count * 90 / 100))
	expect_ge "fault wrapper drops" "$(awk '/^fault tx:/ {print $6}' "$OUT/ping.log")" 1
	expect_ge "ARP requests sent (retried through loss)" "$(counter "$OUT/ping.log" tx_arp_request)" 1
fi
expect_ge "pinger resolved the responder by ARP" "$(counter "$OUT/ping.log" neigh_resolved)" 1
expect_grep "pinger leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/ping.log"
expect_grep "responder leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/resp.log"
expect_eq "responder exit code" "$RC_resp" 0
