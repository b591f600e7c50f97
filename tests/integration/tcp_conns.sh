#!/usr/bin/env bash
# tcp_conns.sh - many concurrent TCP connections between two lunar processes
# over memif: lunar-httpd's echo listener (memif server) and lunar-get
# --conns (memif client). All CONNS connections (default 1000) are open at
# the same time, then each sends BYTES (default 16K) of its own stream,
# half-closes and checks the echo. Every connection completes, the server's
# counters account for each one accepted and closed, and neither side
# leaked a Zbuf object. The long suite runs it with CONNS=10000.
# POOL=N gives both processes only N packet buffers (--pool), far fewer than
# the connections' windows add up to: TCP's memory pressure levels must then
# keep the pool from running dry (tcp_stack.c), and the server's counters
# must show they acted (tcp_conns_pressure in CI).
source "$(dirname "$0")/lib.sh"
setup_test "tcp_conns${CONNS:+_$CONNS}${POOL:+_pool$POOL}" "$1"
GET="$BUILD/tools/lunar-get"
HTTPD="$BUILD/tools/lunar-httpd"
conns=${CONNS:-1000}
bytes=${BYTES:-16K}
# A stall fails the client well before meson's own timeout (300 s; long suite 3600 s).
timeout=${TIMEOUT:-$((conns <= 1000 ? 120 : 900))}

sock=/run/lunar/test-conns-$$.sock
"$TOPO" memif up >/dev/null
on_exit rm -f "$sock"

bg srv "$HTTPD" --port "memif:$sock:server" --ip 192.168.77.2/24 --core 1 \
	--echo 7 --max-conns 20000 --backlog 20000 --counters ${POOL:+--pool $POOL}
wait_for "memif socket" 100 test -S "$sock"
wait_for "echo listener" 100 grep -q "ready on" "$OUT/srv.log"
# One local port per connection: the client's ephemeral range must hold them all.
"$GET" --port "memif:$sock:client" --ip 192.168.77.1/24 --core 0 --reserved 10000-65535 \
	--connect 192.168.77.2:7 --conns "$conns" --echo "$bytes" --timeout "$timeout" \
	--counters ${POOL:+--pool $POOL} >"$OUT/get.log" 2>&1
get_rc=$?
stop srv
sed 's/^/    get | /' "$OUT/get.log" | grep -E 'conns:|memory|first error|tcp: (opened|segs|mem)|zbuf:'
sed 's/^/    srv | /' "$OUT/srv.log" | grep -E 'tcp: (opened|segs|mem)|httpd:|zbuf:'

expect_eq "lunar-get exit code" "$get_rc" 0
expect_grep "all connections opened, completed, none failed" \
	"^conns: requested $conns opened $conns completed $conns failed 0$" "$OUT/get.log"
expect_grep "all connections open at once" "^conns: peak_concurrent $conns$" "$OUT/get.log"
expect_grep "client: per-connection memory measured" "^memory per connection: " "$OUT/get.log"
expect_grep "server: every connection accepted and closed" \
	"^tcp: opened $conns accepted $conns closed $conns active 0 " "$OUT/srv.log"
expect_grep "server: no connection ended badly" "^httpd: aborted 0 peer_reset 0 timed_out 0$" \
	"$OUT/srv.log"
expect_grep "client leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/get.log"
expect_grep "server leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/srv.log"
expect_eq "server exit code" "$RC_srv" 0
if [ -n "${POOL:-}" ]; then
	prunes=$(sed -n 's/^tcp: mem_pressure_ms .* mem_prunes \([0-9]*\) .*/\1/p' "$OUT/srv.log")
	expect_ge "server: memory pressure reached the critical level (prunes)" "$prunes" 1
fi
