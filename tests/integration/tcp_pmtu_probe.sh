#!/usr/bin/env bash
# tcp_pmtu_probe.sh - an outage taken for a black hole, and the probe that
# undoes the mistake (RFC 4821 7, RFC 8899 4.3). lunar-httpd (af_xdp,
# namespace B) serves curl a large download through the router
# (a sparse file of 512 MiB, at full speed, a second or more): for 1.5 s
# from its start the router drops everything B sends
# (nftables). Three timeouts of full-sized segments with no error look
# like a black hole, so lunar steps the path MTU down, perhaps several
# plateaus; once the path is back, the search upwards that each step
# starts sends a 1500-byte probe, which gets through: the path MTU goes
# back up, the cache forgets the guess, and the rest of the download goes
# in full-sized segments again. Nothing here needs ICMP.
source "$(dirname "$0")/lib.sh"
setup_test tcp_pmtu_probe "$1"
HTTPD="$BUILD/tools/lunar-httpd"

"$TOPO" arb up >/dev/null
on_exit "$TOPO" arb down
A="ip netns exec lunar-a" R="ip netns exec lunar-r" B="ip netns exec lunar-b"
$R nft -f - <<'NFT'
table ip lunar_outage {
	chain hold {
		type filter hook forward priority 0;
	}
}
NFT
[ $? = 0 ] || fail "nft: the table"
mkdir -p "$OUT/root"
truncate -s 512M "$OUT/root/big.bin"

bg httpd $B "$HTTPD" --port af_xdp:arb-b --listen 8080 --root "$OUT/root" --counters
wait_for "lunar-httpd ready" 100 grep -q ready "$OUT/httpd.log"
# Full-sized segments at full speed (a receiver that reads slowly would
# shrink them to what its window takes, and small segments lost say
# nothing of size); the outage falls within the first seconds.
$A curl -sS --max-time 60 -o /dev/null -w '%{size_download}\n' http://10.78.2.2:8080/big.bin \
	>"$OUT/curl.out" &
curl_pid=$!
PIDS+=($curl_pid)
sleep 0.3
$R nft add rule ip lunar_outage hold ip saddr 10.78.2.2 counter drop || fail "nft: the outage rule"
sleep 1.5
$R nft flush chain ip lunar_outage hold
$R nft add rule ip lunar_outage hold ip saddr 10.78.2.2 ip length 1500 counter ||
	fail "nft: the counting rule"
t0=$(date +%s%N)
wait $curl_pid
echo "    the download went on $(( ($(date +%s%N) - t0) / 1000000 )) ms after the outage (not asserted)"
expect_eq "the download across the outage: bytes" "$(cat "$OUT/curl.out")" $((512 << 20))
stop httpd
expect_eq "lunar-httpd exit code" "$RC_httpd" 0

steps=$(line_field "$OUT/httpd.log" tcp blackholes)
echo "    $(grep -o 'timeouts [0-9]*' "$OUT/httpd.log" | head -1); steps down $steps; probes sent $(line_field "$OUT/httpd.log" tcp probes), through $(line_field "$OUT/httpd.log" tcp probes_ok), lost $(line_field "$OUT/httpd.log" tcp probes_lost); cache raised $(line_field "$OUT/httpd.log" tcp raised)"
expect_ge "the outage was taken for a black hole" "${steps:-0}" 1
expect_eq "a probe got through once the path was back" "$(line_field "$OUT/httpd.log" tcp probes_ok)" 1
expect_eq "the cache forgot the guess (raised by the probe)" "$(line_field "$OUT/httpd.log" tcp raised)" 1
expect_eq "no path MTU is held for the peer" "$(grep -c '^tcp pmtu: 10\.78\.1\.1 mtu' "$OUT/httpd.log")" 0
full_after=$($R nft list chain ip lunar_outage hold | grep -o 'packets [0-9]*' | awk '{print $2}')
echo "    datagrams of 1500 bytes after the outage: $full_after"
expect_ge "full-sized datagrams again afterwards" "${full_after:-0}" 100
expect_grep "no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/httpd.log"
finish
