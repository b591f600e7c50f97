#!/usr/bin/env bash
# syn_flood.sh - lunar-httpd (af_xdp, namespace B, backlog 64) under a
# short SYN flood from spoofed addresses (lunar-synflood in A, capped at
# RATE pps, through the router, whose blackhole route swallows the
# SYN-ACKs): the flood is answered with SYN cookies (RFC 4987), a download
# and new connections made during it succeed, SHA-256 exact, and the
# generator sends at the rate asked with well-formed frames. Once lunar has
# answered a SYN with a cookie itself, its XDP program answers the rest of
# the flood (XDP_TX, bpf/lunar_syncookie.bpf.h) with lunar's cookies.
source "$(dirname "$0")/lib.sh"
setup_test syn_flood "$1"
FLOOD="$BUILD/tools/synflood/lunar-synflood"
rate=${RATE:-20000} secs=4

# The frames first, without root: every one well-formed, checksums right.
"$FLOOD" --pcap "$OUT/syn.pcap" --count 200 --dst 10.78.2.2:8080 --src-net 10.99.0.0/16 --quiet
expect_eq "lunar-synflood --pcap exit code" "$?" 0
expect_eq "SYNs in the capture" "$(tshark_count "$OUT/syn.pcap" 'tcp.flags == 0x002 && tcp.options.mss_val == 1460 && tcp.options.sack_perm && tcp.options.timestamp.tsval && tcp.options.wscale.shift == 7')" 200
expect_eq "malformed frames or bad checksums in the capture" "$(tcp_capture_bad "$OUT/syn.pcap" 10.99.0.0/16)" 0

"$TOPO" arb up >/dev/null
on_exit "$TOPO" arb down
A="ip netns exec lunar-a" B="ip netns exec lunar-b" R="ip netns exec lunar-r"
$R ip route replace blackhole 10.99.0.0/16
# lunar's XDP program answers most of the flood itself (XDP_TX); a veth
# delivers those frames only to a peer with an XDP program of its own.
$R ip link set dev arb-rb xdpdrv obj "$BUILD/bpf/lunar_xdp_pass.bpf.o" sec xdp
$R sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.arb-ra.rp_filter=0
rmac=$(ip -n lunar-r -br link show arb-ra | awk '{print $3}')
mkdir -p "$OUT/root"
head -c 8M /dev/urandom >"$OUT/root/big.bin"
want=$(sha256sum "$OUT/root/big.bin" | cut -c1-64)

bg httpd $B "$BUILD/tools/lunar-httpd" --port af_xdp:arb-b --core 1 --listen 8080 --root "$OUT/root" \
	--backlog 64 --counters
wait_for "lunar-httpd ready" 100 grep -q ready "$OUT/httpd.log"
bg flood $A "$FLOOD" --interface arb-a --dst-mac "$rmac" --dst 10.78.2.2:8080 --src-net 10.99.0.0/16 \
	--duration "$secs" --rate "$rate"
sleep 1
got=$($A curl -sS --max-time 20 http://10.78.2.2:8080/big.bin | sha256sum | cut -c1-64)
expect_eq "download during the flood: SHA-256" "$got" "$want"
ok=0
for _ in 1 2 3 4 5; do
	code=$($A curl -s --max-time 5 -o /dev/null -w '%{http_code}' http://10.78.2.2:8080/big.bin)
	[ "$code" = 200 ] && ok=$((ok + 1))
done
expect_eq "new connections during the flood that succeeded" "$ok" 5
wait "$PID_flood"
expect_eq "lunar-synflood exit code" "$?" 0
sent=$(awk '/^synflood: sent/ {print $3}' "$OUT/flood.log")
expect_ge "SYNs sent, at least 90% of the rate asked" "${sent:-0}" $((rate * secs * 9 / 10))
expect_le "SYNs sent, at most the rate asked and a batch" "${sent:-0}" $((rate * secs + 64))
stop httpd
expect_eq "lunar-httpd exit code" "$RC_httpd" 0
cookies=$(line_field "$OUT/httpd.log" tcp: syncookies_sent)
xdp_cookies=$(line_field "$OUT/httpd.log" xdp: syncookies)
expect_ge "the flood beyond the backlog was answered with SYN cookies (lunar's and its XDP program's)" \
	$((${cookies:-0} + ${xdp_cookies:-0})) $((rate * secs / 2))
expect_ge "most of the flood answered by the XDP program, off lunar's core" "${xdp_cookies:-0}" \
	$((rate * secs / 2))
expect_ge "legitimate connections completed by their cookie" "$(line_field "$OUT/httpd.log" tcp: syncookies_ok)" 1
expect_eq "no ACK carried a bad cookie" "$(line_field "$OUT/httpd.log" tcp: syncookies_bad)" 0
expect_grep "every request answered" "httpd: accepted [0-9]+ refused 0 requests 6 " "$OUT/httpd.log"
expect_grep "no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/httpd.log"
finish
