#!/usr/bin/env bash
# tcp_memif_fault.sh - lunar to lunar over memif through the fault wrapper:
# 5% loss, 5% reordering, 1% duplication and 0.1% corruption in each
# direction (seeded). lunar-get sends SIZE bytes (64M; the long suite 1G)
# to lunar-httpd's echo listener and checks every byte that comes back:
# SIZE each way, SHA-256 exact, no Zbuf object leaked on either side, and
# the duplicates reported as D-SACKs (RFC 2883) and recognised.
# MTU=9000 FAULT=none (tcp_memif_jumbo.sh) runs it with jumbo frames and no faults.
source "$(dirname "$0")/lib.sh"
setup_test "tcp_memif_${MTU:+jumbo}${MTU:-fault}" "$1"
HTTPD="$BUILD/tools/lunar-httpd" GET="$BUILD/tools/lunar-get"
size=${SIZE:-64M}
sock=/run/lunar/test-tcp-$$.sock
"$TOPO" memif up >/dev/null
on_exit rm -f "$sock"

mtu_args=()
[ -n "${MTU:-}" ] && mtu_args=(--mtu "$MTU")
fault_args=(--fault drop=5%,reorder=5%,dup=1%,corrupt=0.1% --fault seed=42)
[ "${FAULT:-}" = none ] && fault_args=()
bg srv "$HTTPD" --port "memif:$sock:server" --ip 192.168.77.2/24 --core 1 --echo 7 --counters "${mtu_args[@]}"
wait_for "lunar-httpd ready" 100 grep -q ready "$OUT/srv.log"
"$GET" --port "memif:$sock:client" --ip 192.168.77.1/24 --core 0 --timeout 1500 \
	"${fault_args[@]}" "${mtu_args[@]}" \
	--connect 192.168.77.2:7 --echo "$size" --counters >"$OUT/cli.log" 2>&1
expect_eq "lunar-get exit code (it checks the echo)" "$?" 0
expect_eq "bytes sent" "$(awk '/^bytes / {print $2}' "$OUT/cli.log")" "$(numfmt --from=iec "$size")"
expect_eq "bytes echoed back" "$(awk '/^echoed / {print $2}' "$OUT/cli.log")" "$(numfmt --from=iec "$size")"
expect_eq "SHA-256 of what came back" "$(awk '/^sha256_echoed / {print $2}' "$OUT/cli.log")" \
	"$(awk '/^sha256 / {print $2}' "$OUT/cli.log")"
if [ ${#fault_args[@]} -gt 0 ]; then
	for what in dropped reordered duplicated corrupted; do
		expect_ge "fault wrapper $what packets (tx)" "$(fault_count "$OUT/cli.log" tx "$what")" 1
	done
	expect_ge "corrupted frames caught by checksums" \
		"$(( $(counter "$OUT/cli.log" TCP_BAD_CHECKSUM) + $(counter "$OUT/cli.log" IP_BAD_CHECKSUM) + $(counter "$OUT/srv.log" TCP_BAD_CHECKSUM) + $(counter "$OUT/srv.log" IP_BAD_CHECKSUM) ))" 1
fi
if [ -n "${MTU:-}" ]; then
	# Segments fill the jumbo MTU: data frames are far fewer than bytes / 1500.
	expect_le "frames sent for $size at MTU $MTU (data and ACKs)" \
		"$(counter "$OUT/cli.log" tx_frames)" $(( $(numfmt --from=iec "$size") / 4000 ))
	expect_eq "frames spread over several buffers" "$(counter "$OUT/cli.log" ETH_CHAINED)" 0
	expect_eq "packets too big for the MTU" "$(counter "$OUT/cli.log" IP_TOO_BIG)" 0
fi
expect_grep "client leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/cli.log"
stop srv
expect_grep "server leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/srv.log"
if [ ${#fault_args[@]} -gt 0 ]; then
	# RFC 2883: data received twice is reported, and the sender recognises the report.
	expect_ge "D-SACKs the server sent (client's data duplicated)" \
		"$(line_field "$OUT/srv.log" tcp: dsacks_sent)" 1
	expect_ge "D-SACKs the client recognised" "$(line_field "$OUT/cli.log" tcp: dsacks)" 1
fi
