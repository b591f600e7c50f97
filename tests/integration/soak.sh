#!/usr/bin/env bash
# soak.sh - two lunar processes over memif, both through the fault wrapper
# (loss, reordering, duplication, corruption and delay, seeded), for
# SOAK_SECONDS (default 120; 1800 by hand, docs/TESTING.md): lunar-get
# --soak keeps --conns 32 echo connections coming and going to lunar-httpd's
# echo listener, each of its own size (0 B to 4 MiB) and every echo checked
# byte for byte, some aborted half way on purpose. The client sends with
# CUBIC and asks for ECN, the server runs DCTCP and keep-alive. Run in the
# ASan+UBSan build (meson registers it there only), so any memory error or
# leak fails it. Afterwards: no connection failed or stuck on either side,
# no socket and no TCP memory left, Zbuf in use back at its baseline, and
# every connection the server saw end badly is one the client aborted.
source "$(dirname "$0")/lib.sh"
setup_test soak "$1"
GET="$BUILD/tools/lunar-get" HTTPD="$BUILD/tools/lunar-httpd"
secs=${SOAK_SECONDS:-120}
sock=/run/lunar/test-soak-$$.sock
"$TOPO" memif up >/dev/null
on_exit rm -f "$sock"

faults="drop=1%,reorder=1%,dup=0.5%"
# Corruption at one point of each path, the server's wrapper (what it sends
# and what it receives): a frame flipped by both ends can carry two flips
# that cancel in the 16-bit checksum (RFC 1071), which no TCP detects. At
# 0.05% on each end that happened about once in seven runs; a link's CRC
# is what stops it on a real wire.
corrupt="corrupt=0.1%"
# Keep-alive ends a server connection whose client's RST was lost while
# the server had nothing to send (it would otherwise wait for data forever).
bg srv "$HTTPD" --port "memif:$sock:server" --ip 192.168.77.2/24 --core 1 --echo 7 \
	--cc dctcp --keepalive 2,0.5,4 --fault "$faults,$corrupt" --fault seed=11 --counters
wait_for "lunar-httpd ready" 300 grep -q ready "$OUT/srv.log"
"$GET" --port "memif:$sock:client" --ip 192.168.77.1/24 --core 0 --reserved 10000-65535 \
	--cc cubic --ecn on --fault "$faults,delay=20us" --fault seed=12 \
	--connect 192.168.77.2:7 --soak "$secs" --conns 32 --counters >"$OUT/cli.log" 2>&1
get_rc=$?
# Server connections whose client aborted and vanished end by keep-alive (2 s + 4 x 0.5 s).
sleep 5
stop srv
grep -E '^soak:' "$OUT/cli.log" | sed 's/^/    get | /'
grep -E '^(tcp: opened|tcp limits: conns|httpd: aborted|zbuf:)' "$OUT/srv.log" | sed 's/^/    srv | /'

expect_eq "lunar-get exit code (echoes checked, nothing left, Zbuf at baseline)" "$get_rc" 0
end=$(grep '^soak: end ' "$OUT/cli.log")
field() { awk -v f="$1" '{for (i = 1; i < NF; i++) if ($i == f) print $(i + 1)}' <<<"$end"; }
started=$(field started) aborted=$(field aborted)
expect_ge "client: connections started (the soak ran)" "${started:-0}" 100
expect_ge "client: connections completed" "$(field completed)" 50
expect_ge "client: connections aborted on purpose" "${aborted:-0}" 1
expect_eq "client: connections failed or stuck" "$(field failed)" 0
expect_eq "client: sockets left" "$(field sockets)" 0
expect_eq "client: TCP memory left" "$(field tcp_mem)" 0
# At or below: the baseline is the least seen over 200 ms before the soak.
expect_le "client: Zbuf in use back at its baseline" "$(field zbuf_in_use)" \
	"$(sed -n 's/.*(baseline \([0-9]*\))$/\1/p' <<<"$end")"
for who in cli srv; do
	for what in dropped reordered duplicated; do
		expect_ge "$who: fault wrapper $what packets (tx)" "$(fault_count "$OUT/$who.log" tx "$what")" 1
	done
done
for dir in tx rx; do
	expect_ge "srv: fault wrapper corrupted packets ($dir)" "$(fault_count "$OUT/srv.log" "$dir" corrupted)" 1
done
expect_ge "corrupted frames caught by checksums" \
	"$(($(counter "$OUT/cli.log" TCP_BAD_CHECKSUM) + $(counter "$OUT/cli.log" IP_BAD_CHECKSUM) + $(counter "$OUT/srv.log" TCP_BAD_CHECKSUM) + $(counter "$OUT/srv.log" IP_BAD_CHECKSUM)))" 1
expect_eq "server exit code (ASan: no error, no leak)" "$RC_srv" 0
expect_eq "server: accepted every connection the client started" \
	"$(line_field "$OUT/srv.log" httpd: accepted)" "$started"
expect_eq "server: connections still active" "$(line_field "$OUT/srv.log" tcp: active)" 0
expect_grep "server: no TCP memory left" "^tcp limits: conns 0/[0-9]* .* mem_bytes 0/" "$OUT/srv.log"
expect_eq "server: connections it aborted" "$(line_field "$OUT/srv.log" httpd: aborted)" 0
expect_le "server: connections reset or timed out (only those the client aborted)" \
	"$(($(line_field "$OUT/srv.log" httpd: peer_reset) + $(line_field "$OUT/srv.log" httpd: timed_out)))" \
	"${aborted:-0}"
expect_grep "client leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/cli.log"
expect_grep "server leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/srv.log"
