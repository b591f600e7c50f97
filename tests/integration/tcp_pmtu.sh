#!/usr/bin/env bash
# tcp_pmtu.sh - path MTU discovery (RFC 1191) through a real router. The
# router's link towards namespace A takes 1280 bytes while both ends'
# interfaces take 1500, so the kernel in A advertises an MSS of 1460 and
# lunar's first full-sized segments cannot pass: the router's kernel drops
# them (DF set) and answers "fragmentation needed, MTU 1280". lunar-httpd
# (af_xdp, namespace B) lowers its MSS and the download arrives byte for
# byte. A second download is a new connection: it starts at the path MTU
# lunar's cache kept (RFC 1191 5), so nothing it sends is too large and
# the router has nothing more to say.
source "$(dirname "$0")/lib.sh"
setup_test tcp_pmtu "$1"
HTTPD="$BUILD/tools/lunar-httpd"

"$TOPO" arb up >/dev/null
on_exit "$TOPO" arb down
A="ip netns exec lunar-a" R="ip netns exec lunar-r" B="ip netns exec lunar-b"
$R ip link set dev arb-ra mtu 1280
mkdir -p "$OUT/root"
head -c 4M /dev/urandom >"$OUT/root/big.bin"
want=$(sha256sum "$OUT/root/big.bin" | cut -c1-64)
icmp_out() { $R nstat -az IcmpOutDestUnreachs | awk '/IcmpOutDestUnreachs/ {print $2}'; }

bg httpd $B "$HTTPD" --port af_xdp:arb-b --listen 8080 --root "$OUT/root" --counters \
	--pcap "$OUT/httpd.pcap"
wait_for "lunar-httpd ready" 100 grep -q ready "$OUT/httpd.log"
icmp0=$(icmp_out)
got=$($A curl -sS --max-time 20 http://10.78.2.2:8080/big.bin | sha256sum | cut -c1-64)
expect_eq "first download through the 1280-byte link: SHA-256" "$got" "$want"
icmp1=$(icmp_out)
got=$($A curl -sS --max-time 20 http://10.78.2.2:8080/big.bin | sha256sum | cut -c1-64)
expect_eq "second download, a new connection: SHA-256" "$got" "$want"
icmp2=$(icmp_out)
stop httpd
expect_eq "lunar-httpd exit code" "$RC_httpd" 0

# "!icmp": an error's quote names lunar's address and length too.
too_big=$(tshark_count "$OUT/httpd.pcap" "ip.src == 10.78.2.2 && ip.len > 1280 && !icmp")
heard=$(tshark_count "$OUT/httpd.pcap" "icmp.type == 3 && icmp.code == 4 && icmp.mtu == 1280")
echo "    datagrams over 1280 bytes sent: $too_big; fragmentation needed: router sent $((icmp1 - icmp0)) + $((icmp2 - icmp1)), lunar heard $heard"
expect_ge "first download: segments too large for the path, before lunar knew" "$too_big" 1
expect_eq "the router answered each with fragmentation needed" "$((icmp1 - icmp0))" "$too_big"
expect_eq "lunar heard every one (the XDP program steers them)" "$heard" "$too_big"
expect_eq "the MSS lowered once; the other errors told nothing new" \
	"$(line_field "$OUT/httpd.log" tcp: icmp_mss_lowered)" 1
# Counted as such, or out of the window if the smaller resend was acknowledged first.
expect_eq "...and were counted as such" \
	"$(($(line_field "$OUT/httpd.log" tcp: icmp_mtu_not_lower) + $(line_field "$OUT/httpd.log" tcp: icmp_out_of_window)))" \
	"$((too_big - 1))"
expect_eq "second download: no error from the router (nothing too large)" "$((icmp2 - icmp1))" 0
expect_eq "second download: started at the cached path MTU" \
	"$(line_field "$OUT/httpd.log" tcp conns_started)" 1
expect_grep "the cache knows the path to A" "^tcp pmtu: 10\.78\.1\.1 mtu 1280 expires in 5[0-9][0-9] s" \
	"$OUT/httpd.log"
expect_eq "malformed frames or bad checksums in lunar's capture" \
	"$(tcp_capture_bad "$OUT/httpd.pcap" "10.78.2.2 && !icmp")" 0
expect_grep "no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/httpd.log"
finish
