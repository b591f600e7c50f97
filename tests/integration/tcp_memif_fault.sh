#!/usr/bin/env bash
# tcp_memif_fault.sh - lunar to lunar over memif through the fault wrapper:
# 5% loss, 5% reordering, 1% duplication and 0.1% corruption in each
# direction (seeded). lunar-get sends SIZE bytes (64M; the long suite 1G)
# to lunar-httpd's echo listener and checks every byte that comes back:
# SIZE each way, SHA-256 exact, no Zbuf object leaked on either side.
source "$(dirname "$0")/lib.sh"
setup_test tcp_memif_fault "$1"
HTTPD="$BUILD/tools/lunar-httpd" GET="$BUILD/tools/lunar-get"
size=${SIZE:-64M}
sock=/run/lunar/test-tcp-$$.sock
"$TOPO" memif up >/dev/null
on_exit rm -f "$sock"

bg srv "$HTTPD" --port "memif:$sock:server" --ip 192.168.77.2/24 --core 1 --echo 7 --counters
wait_for "lunar-httpd ready" 100 grep -q ready "$OUT/srv.log"
"$GET" --port "memif:$sock:client" --ip 192.168.77.1/24 --core 0 --timeout 1500 \
	--fault drop=5%,reorder=5%,dup=1%,corrupt=0.1% --fault seed=42 \
	--connect 192.168.77.2:7 --echo "$size" --counters >"$OUT/cli.log" 2>&1
expect_eq "lunar-get exit code (it checks the echo)" "$?" 0
expect_eq "bytes sent" "$(awk '/^bytes / {print $2}' "$OUT/cli.log")" "$(numfmt --from=iec "$size")"
expect_eq "bytes echoed back" "$(awk '/^echoed / {print $2}' "$OUT/cli.log")" "$(numfmt --from=iec "$size")"
expect_eq "SHA-256 of what came back" "$(awk '/^sha256_echoed / {print $2}' "$OUT/cli.log")" \
	"$(awk '/^sha256 / {print $2}' "$OUT/cli.log")"
for what in dropped reordered duplicated corrupted; do
	expect_ge "fault wrapper $what packets (tx)" \
		"$(grep '^fault tx:' "$OUT/cli.log" | grep -o "$what [0-9]*" | awk '{print $2}')" 1
done
expect_ge "corrupted frames caught by checksums" \
	"$(( $(counter "$OUT/cli.log" TCP_BAD_CHECKSUM) + $(counter "$OUT/cli.log" IP_BAD_CHECKSUM) + $(counter "$OUT/srv.log" TCP_BAD_CHECKSUM) + $(counter "$OUT/srv.log" IP_BAD_CHECKSUM) ))" 1
expect_grep "client leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/cli.log"
stop srv
expect_grep "server leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/srv.log"
