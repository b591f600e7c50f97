#!/usr/bin/env bash
# tcp_blackhole.sh - a path MTU black hole (RFC 2923 2.1): the router's
# link towards namespace A takes 1280 bytes and the router's "fragmentation
# needed" errors are dropped on their way out (nftables), as a filter that
# eats ICMP would. lunar-httpd (af_xdp, namespace B) sends its first window
# in 1500-byte datagrams that vanish without a word; after three timeouts
# in a row it tries 1400 bytes (still too large), after three more 1280,
# which pass: the download arrives byte for byte. The guess goes into the
# path MTU cache, held 60 s: a second download, a new connection, starts
# at 1280 and never stalls. Each step starts a search upwards (RFC 4821):
# its probes of 1500 and 1400 bytes are lost on this path.
source "$(dirname "$0")/lib.sh"
setup_test tcp_blackhole "$1"
HTTPD="$BUILD/tools/lunar-httpd"

"$TOPO" arb up >/dev/null
on_exit "$TOPO" arb down
A="ip netns exec lunar-a" R="ip netns exec lunar-r" B="ip netns exec lunar-b"
$R ip link set dev arb-ra mtu 1280
$R nft -f - <<'NFT'
table ip lunar_blackhole {
	chain out {
		type filter hook output priority 0;
		icmp type destination-unreachable icmp code frag-needed counter drop
	}
}
NFT
mkdir -p "$OUT/root"
head -c 4M /dev/urandom >"$OUT/root/big.bin"
want=$(sha256sum "$OUT/root/big.bin" | cut -c1-64)
eaten() { $R nft list table ip lunar_blackhole | grep -o 'packets [0-9]*' | awk '{print $2}'; }

bg httpd $B "$HTTPD" --port af_xdp:arb-b --listen 8080 --root "$OUT/root" --counters \
	--pcap "$OUT/httpd.pcap"
wait_for "lunar-httpd ready" 100 grep -q ready "$OUT/httpd.log"
ms() { echo $(($(date +%s%N) / 1000000)); }
t0=$(ms)
got=$($A curl -sS --max-time 20 http://10.78.2.2:8080/big.bin | sha256sum | cut -c1-64)
expect_eq "first download through the black hole: SHA-256" "$got" "$want"
t1=$(ms)
eaten1=$(eaten)
got=$($A curl -sS --max-time 20 http://10.78.2.2:8080/big.bin | sha256sum | cut -c1-64)
expect_eq "second download, a new connection: SHA-256" "$got" "$want"
t2=$(ms)
eaten2=$(eaten)
echo "    download times (not asserted): first $((t1 - t0)) ms, second $((t2 - t1)) ms"
stop httpd
expect_eq "lunar-httpd exit code" "$RC_httpd" 0

heard=$(tshark_count "$OUT/httpd.pcap" "icmp.type == 3")
at() { tshark_count "$OUT/httpd.pcap" "ip.src == 10.78.2.2 && !icmp && ip.len $1"; }
echo "    lunar's datagrams: over 1400 bytes $(at '> 1400'), 1353-1400 $(at '> 1352 && ip.len <= 1400'), over 1280 $(at '> 1280'); errors eaten by the filter $eaten1 + $((eaten2 - eaten1)), heard $heard"
expect_ge "the router's errors were eaten (it did try to tell)" "${eaten1:-0}" 1
expect_eq "lunar heard no ICMP error" "$heard" 0
expect_eq "two steps down: 1500 -> 1400 -> 1280" "$(line_field "$OUT/httpd.log" tcp blackholes)" 2
expect_ge "datagrams of 1400 bytes were tried (the first plateau)" \
	"$(at '> 1352 && ip.len <= 1400')" 1
probes=$(line_field "$OUT/httpd.log" tcp probes)
echo "    path MTU probes (RFC 4821): sent $probes, lost $(line_field "$OUT/httpd.log" tcp probes_lost), through $(line_field "$OUT/httpd.log" tcp probes_ok)"
expect_ge "the search upwards after the steps: probes sent" "${probes:-0}" 1
expect_eq "every probe lost on the narrow path" "$(line_field "$OUT/httpd.log" tcp probes_lost)" "$probes"
expect_eq "second download: nothing too large, nothing eaten" "$((eaten2 - eaten1))" 0
expect_eq "second download: started at the cached path MTU" \
	"$(line_field "$OUT/httpd.log" tcp conns_started)" 1
expect_grep "the cache holds the guess for 60 s" "^tcp pmtu: 10\.78\.1\.1 mtu 1280 expires in [0-9]{1,2} s" \
	"$OUT/httpd.log"
expect_eq "malformed frames or bad checksums in lunar's capture" \
	"$(tcp_capture_bad "$OUT/httpd.pcap" "10.78.2.2 && !icmp")" 0
expect_grep "no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/httpd.log"
finish
