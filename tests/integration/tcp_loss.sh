#!/usr/bin/env bash
# tcp_loss.sh - lunar's TCP against the kernel's through a router namespace
# that drops 1% and then 5% of packets at random (nftables numgen), both
# directions, SHA-256 exact: lunar-get against socat, and curl against
# lunar-httpd (download and upload). SIZE (default 16M) sets the size.
source "$(dirname "$0")/lib.sh"
setup_test tcp_loss "$1"
GET="$BUILD/tools/lunar-get"
size=${SIZE:-16M}
bytes=$(numfmt --from=iec "$size")
# Every transfer is bounded: a stall fails the test instead of hanging it.
# 16 MiB takes a few seconds at 5% loss: 40 s, plus a second per MiB.
limit=$((40 + bytes / 1048576))
GET_TIMEOUT=(--timeout "$limit")

# A kernel receiver on $port in lunar-a, a background job named $1: the
# SHA-256 of what it reads lands in $OUT/sink.sha when the sender closes.
kernel_sink() {
	rm -f "$OUT/sink.sha"
	bg "$1" sh -c "$A socat -u TCP-LISTEN:$port,reuseaddr - | sha256sum | cut -c1-64 > $OUT/sink.sha"
	wait_for "kernel listener on $port" 50 ss_has $A ss -ltnH "sport = :$port"
}

"$TOPO" arb up >/dev/null
on_exit "$TOPO" arb down
A="ip netns exec lunar-a" B="ip netns exec lunar-b"
mkdir -p "$OUT/root"
head -c "$bytes" /dev/urandom >"$OUT/root/src.bin"
ln -s "$OUT/root/src.bin" "$OUT/src.bin"
want=$(sha256sum "$OUT/src.bin" | cut -c1-64)

for loss in 1 5; do
	"$TOPO" arb loss "$loss" >/dev/null
	port=$((9100 + loss))
	kernel_sink "sink$loss"
	$B "$GET" "${GET_TIMEOUT[@]}" --port af_xdp:arb-b --connect "10.78.1.1:$port" --send "$OUT/src.bin" --counters \
		--pcap "$OUT/send$loss.pcap" >"$OUT/send$loss.log" 2>&1
	expect_eq "$loss% loss, lunar -> kernel: exit code" "$?" 0
	# Retransmissions and SACKs included: every frame well-formed, every checksum right.
	# Only lunar's frames are judged: the kernel may send a checksum of 0xffff for
	# 0x0000 (RFC 1624), which tshark flags.
	bad=$(tcp_capture_bad "$OUT/send$loss.pcap" 10.78.2.2)
	expect_eq "$loss% loss: malformed frames or bad checksums in lunar's capture" "$bad" 0
	if [ "$bad" = 0 ]; then
		rm -f "$OUT/send$loss.pcap"
	else
		tcp_capture_bad "$OUT/send$loss.pcap" 10.78.2.2 -V
	fi
	wait_for "sink to finish" 100 test -s "$OUT/sink.sha"
	expect_eq "$loss% loss, lunar -> kernel: SHA-256" "$(cat "$OUT/sink.sha")" "$want"
	expect_ge "$loss% loss, lunar -> kernel: lunar retransmitted" \
		"$(grep -o ' retransmits [0-9]*' "$OUT/send$loss.log" | awk '{print $2}')" 1

	port=$((9200 + loss))
	bg "source$loss" $A socat -u "FILE:$OUT/src.bin" "TCP-LISTEN:$port,reuseaddr"
	wait_for "kernel listener on $port" 50 ss_has $A ss -ltnH "sport = :$port"
	$B "$GET" "${GET_TIMEOUT[@]}" --port af_xdp:arb-b --connect "10.78.1.1:$port" --recv >"$OUT/recv$loss.log" 2>&1
	expect_eq "$loss% loss, kernel -> lunar: exit code" "$?" 0
	expect_eq "$loss% loss, kernel -> lunar: SHA-256" "$(awk '/^sha256 / {print $2}' "$OUT/recv$loss.log")" "$want"
	expect_grep "$loss% loss: no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/recv$loss.log"
done

# A kernel without timestamps (net.ipv4.tcp_timestamps=0 in its namespace),
# as a Windows peer by default: an RTO cannot be judged by Eifel (RFC 3522)
# and F-RTO (RFC 5682) does it, sending new data after the first ACK.
# 5% loss, SACK on, RFC 8985's single probe (--probes rfc) so that RTOs
# happen (~25 in 16 MiB): byte for byte, and no timestamp option in lunar's
# frames after its SYN (which offers them: the kernel declines).
$A sysctl -qw net.ipv4.tcp_timestamps=0
port=9250
kernel_sink sink_nots
$B "$GET" "${GET_TIMEOUT[@]}" --port af_xdp:arb-b --connect "10.78.1.1:$port" --send "$OUT/src.bin" --counters \
	--probes rfc --pcap "$OUT/nots.pcap" >"$OUT/nots.log" 2>&1
expect_eq "no timestamps, 5% loss, lunar -> kernel: exit code" "$?" 0
wait_for "sink to finish" 100 test -s "$OUT/sink.sha"
expect_eq "no timestamps, 5% loss, lunar -> kernel: SHA-256" "$(cat "$OUT/sink.sha")" "$want"
expect_eq "no timestamps: none in lunar's frames" \
	"$(tshark_count "$OUT/nots.pcap" "ip.src == 10.78.2.2 && tcp.flags.syn == 0 && tcp.option_kind == 8")" 0
expect_ge "no timestamps: RTOs, F-RTO's to judge" \
	"$(grep -o ' timeouts [0-9]*' "$OUT/nots.log" | head -1 | awk '{print $2}')" 1
rm -f "$OUT/nots.pcap"
$A sysctl -qw net.ipv4.tcp_timestamps=1

# The other algorithms against the kernel at 1% loss: CUBIC (RFC 9438), and
# DCTCP (RFC 8257), which asks for ECN: the kernel's receiver agrees
# (RFC 3168 6.1.1), lunar's new data goes ECT(0), its pure ACKs do not.
"$TOPO" arb loss 1 >/dev/null
ccport=9300
for cc in cubic dctcp; do
	# The 1% loss can take DCTCP's ECN-setup SYN or the SYN-ACK, and then
	# lunar rightly falls back to a connection without ECN (RFC 3168
	# 6.1.1.1, shown below): such a run is done again, up to three times.
	for try in 1 2 3; do
		port=$((ccport += 1))
		kernel_sink "sink_$cc"
		$B "$GET" "${GET_TIMEOUT[@]}" --port af_xdp:arb-b --connect "10.78.1.1:$port" --send "$OUT/src.bin" \
			--cc "$cc" --counters --pcap "$OUT/$cc.pcap" >"$OUT/$cc.log" 2>&1
		rc=$?
		# Only a run that passed otherwise goes again; a fallen-back run is checked too.
		[ "$rc" = 0 ] && grep -q " ecn_syn_fallbacks [1-9]" "$OUT/$cc.log" || break
		echo "$cc: the random loss took the handshake's ECN negotiation (try $try)"
		wait_for "sink to finish" 100 test -s "$OUT/sink.sha"
		expect_eq "$cc, ECN fallen back (try $try): SHA-256" "$(cat "$OUT/sink.sha")" "$want"
		mv "$OUT/$cc.log" "$OUT/$cc.try$try.log"
	done
	expect_eq "$cc, 1% loss, lunar -> kernel: exit code" "$rc" 0
	wait_for "sink to finish" 100 test -s "$OUT/sink.sha"
	expect_eq "$cc, 1% loss, lunar -> kernel: SHA-256" "$(cat "$OUT/sink.sha")" "$want"
	expect_grep "$cc: the stack ran it" "^tcp: cc $cc " "$OUT/$cc.log"
	count() { tshark_count "$OUT/$cc.pcap" "$1"; }
	ours="ip.src == 10.78.2.2"
	if [ "$cc" = dctcp ]; then
		expect_ge "dctcp: our SYN asks for ECN (ECE and CWR)" \
			"$(count "$ours && tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.flags.ece == 1 && tcp.flags.cwr == 1")" 1
		expect_ge "dctcp: the kernel's SYN-ACK agrees (ECE, no CWR)" \
			"$(count "ip.dst == 10.78.2.2 && tcp.flags.syn == 1 && tcp.flags.ack == 1 && tcp.flags.ece == 1 && tcp.flags.cwr == 0")" 1
		expect_ge "dctcp: new data goes ECT(0)" "$(count "$ours && tcp.len > 0 && ip.dsfield.ecn == 2")" 1000
	else
		expect_eq "cubic: no ECN asked for by default" \
			"$(count "$ours && tcp.flags.syn == 1 && tcp.flags.ece == 1")" 0
	fi
	expect_eq "$cc: no pure ACK or SYN of ours is ECN-capable" \
		"$(count "$ours && (tcp.len == 0 || tcp.flags.syn == 1) && ip.dsfield.ecn != 0")" 0
	bad=$(tcp_capture_bad "$OUT/$cc.pcap" 10.78.2.2)
	expect_eq "$cc: malformed frames or bad checksums in lunar's capture" "$bad" 0
	[ "$bad" = 0 ] && rm -f "$OUT/$cc.pcap"
done

# RFC 3168 6.1.1.1: a middlebox drops ECN-setup SYNs. lunar asking for ECN
# (--ecn on) resends its SYN without ECE and CWR after the timeout (not all
# six retries into the same drop), the kernel answers the plain SYN, and
# the connection runs without ECN; 1 MiB, byte for byte.
"$TOPO" arb loss 0 >/dev/null
"$TOPO" arb ecnsyn 100 >/dev/null
port=9350
head -c 1048576 "$OUT/src.bin" >"$OUT/small.bin"
kernel_sink sink_ecnsyn
$B "$GET" "${GET_TIMEOUT[@]}" --port af_xdp:arb-b --connect "10.78.1.1:$port" --send "$OUT/small.bin" \
	--ecn on --counters --pcap "$OUT/ecnsyn.pcap" >"$OUT/ecnsyn.log" 2>&1
expect_eq "ECN-setup SYNs dropped: lunar -> kernel: exit code" "$?" 0
wait_for "sink to finish" 100 test -s "$OUT/sink.sha"
expect_eq "ECN-setup SYNs dropped: SHA-256" "$(cat "$OUT/sink.sha")" "$(sha256sum "$OUT/small.bin" | cut -c1-64)"
dropped=$(ip netns exec lunar-r nft list table ip lunar_ecnsyn | grep -o 'packets [0-9]*' | awk '{print $2}')
expect_eq "ECN-setup SYNs dropped: the router dropped lunar's first SYN" "$dropped" 1
expect_grep "ECN-setup SYNs dropped: one fallback counted" " ecn_syn_fallbacks 1 " "$OUT/ecnsyn.log"
count() { tshark_count "$OUT/ecnsyn.pcap" "$1"; }
ours="ip.src == 10.78.2.2"
expect_eq "ECN-setup SYNs dropped: one SYN of ours asked for ECN" \
	"$(count "$ours && tcp.flags.syn == 1 && tcp.flags.ece == 1 && tcp.flags.cwr == 1")" 1
expect_eq "ECN-setup SYNs dropped: the resent SYN did not" \
	"$(count "$ours && tcp.flags.syn == 1 && tcp.flags.ece == 0 && tcp.flags.cwr == 0")" 1
expect_eq "ECN-setup SYNs dropped: no ECT from lunar after the fallback" \
	"$(count "$ours && ip.dsfield.ecn != 0")" 0
"$TOPO" arb ecnsyn 0 >/dev/null
rm -f "$OUT/ecnsyn.pcap" "$OUT/small.bin"

# RFC 6069: the path goes down for 2 s in the middle of a transfer (the
# router answers every packet towards A with host unreachable) and comes
# back. Each error quoting SND.UNA undoes one backoff of lunar's timer
# (icmp_rto_reverts), and the transfer completes, byte for byte.
"$TOPO" arb loss 0 >/dev/null
port=9400
kernel_sink sink_lcd
bg lcd $B "$GET" --timeout 120 --port af_xdp:arb-b --connect "10.78.1.1:$port" --bytes 1G --counters
wait_for "transfer under way" 300 ss_has $A ss -tnH state established "sport = :$port"
# The path must go down while lunar is sending data: the router then
# rejects the rest of a flight at once, hundreds of packets. A handful
# means it was not (the kernel's window closed while its reader was off
# the CPU, and lunar's probes of a closed window are not retransmissions
# RFC 6069 speaks of): the path goes down again, up to three times.
most=0
for try in 1 2 3; do
	kill -0 "$PID_lcd" 2>/dev/null || break # the transfer is over
	sleep 0.3
	ip netns exec lunar-r nstat -n # counters from here
	"$TOPO" arb unreach 100 >/dev/null
	sleep 2
	rejected=$(ip netns exec lunar-r nft list table ip lunar_unreach | grep -o 'packets [0-9]*' | awk '{print $2}')
	"$TOPO" arb unreach 0 >/dev/null
	echo "path down (try $try): the router rejected ${rejected:-0} packets; its ICMP counters since:"
	ip netns exec lunar-r nstat -z IcmpOutMsgs IcmpOutDestUnreachs 'IcmpOutRateLimit*' IcmpOutErrors |
		grep '^Icmp' | sed 's/^/  /'
	[ "${rejected:-0}" -le "$most" ] || most=${rejected:-0}
	[ "$most" -lt 20 ] || break
done
expect_ge "path down: the router answered lunar's packets with host unreachable" "$most" 1
wait "$PID_lcd"
expect_eq "path down and back: exit code" "$?" 0
wait_for "sink to finish" 100 test -s "$OUT/sink.sha"
expect_eq "path down and back: SHA-256" "$(cat "$OUT/sink.sha")" "$(awk '/^sha256 / {print $2}' "$OUT/lcd.log")"
tcp_count() { grep -o " $1 [0-9]*" "$OUT/lcd.log" | head -1 | awk '{print $2}'; }
expect_ge "path down: timeouts while it was down" "$(tcp_count timeouts)" 1
expect_ge "path down: RTO backoffs undone (RFC 6069)" "$(tcp_count icmp_rto_reverts)" 1
echo "path down: lunar's zero-window probes $(tcp_count zero_window_probes), ICMP soft errors $(tcp_count icmp_soft_errors)"

# One lunar process per interface: lunar-httpd takes arb-b once lunar-get is done.
bg httpd $B "$BUILD/tools/lunar-httpd" --port af_xdp:arb-b --core 1 --listen 8080 --root "$OUT/root"
wait_for "lunar-httpd ready" 100 grep -q ready "$OUT/httpd.log"
for loss in 1 5; do
	"$TOPO" arb loss "$loss" >/dev/null
	got=$($A curl -sS --max-time "$limit" http://10.78.2.2:8080/src.bin | sha256sum | cut -c1-64)
	expect_eq "$loss% loss, curl GET from lunar-httpd: SHA-256" "$got" "$want"
	answer=$($A curl -sS --max-time "$limit" -T "$OUT/src.bin" "http://10.78.2.2:8080/up$loss.bin")
	expect_eq "$loss% loss, curl PUT to lunar-httpd: SHA-256 it computed" "$(echo "$answer" | tr -d '[:space:]')" "$want"
	expect_eq "$loss% loss, curl PUT: SHA-256 of the stored file" \
		"$(sha256sum "$OUT/root/up$loss.bin" | cut -c1-64)" "$want"
done
stop httpd
expect_grep "lunar-httpd leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/httpd.log"
