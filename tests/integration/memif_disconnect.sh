#!/usr/bin/env bash
# memif_disconnect.sh - a memif peer that comes and goes under load never
# takes the polling side down. DPDK 22.11's memif unmaps its rings from the
# interrupt thread when the peer disconnects, possibly while a worker is
# inside a burst on them; port/memif_gate.h makes the unmapping wait. A
# responder (memif server) answers ROUNDS pingers (memif clients) that flood
# it with -i 0; every other one is killed with SIGKILL mid-flood, so its
# disconnect comes without warning. The responder must survive all of them,
# answer a last pinger in full, exit cleanly and leak nothing. The race is
# rarely fatal within 16 rounds even without the gate (its memif_unmap_waits
# shows how often a disconnect did land in a burst); unit/port/memif_gate
# is the reproducer that fails without it.
source "$(dirname "$0")/lib.sh"
setup_test memif_disconnect "$1"

sock=/run/lunar/test-disc-$$.sock
"$TOPO" memif up >/dev/null
on_exit rm -f "$sock"
rounds=${ROUNDS:-16}

bg resp "$PING" --port "memif:$sock:server" --ip 192.168.77.2/24 --core 1 --responder --counters --link-timeout 60
wait_for "memif socket" 100 test -S "$sock"
killed=0
for round in $(seq 1 "$rounds"); do
	# Odd rounds end on their own; even ones would flood for minutes.
	count=$((round % 2 ? 20000 : 10000000))
	"$PING" --port "memif:$sock:client" --ip 192.168.77.1/24 --core 0 -c "$count" -i 0 -W 100 -q \
		192.168.77.2 >"$OUT/flood-$round.log" 2>&1 &
	flood=$!
	if [ $((round % 2)) = 0 ]; then
		# Killed once it is flooding (its first replies are counted), so
		# the disconnect lands while the responder's bursts are busy.
		wait_for "round $round started" 100 grep -q "ready on" "$OUT/flood-$round.log"
		sleep 0.$((RANDOM % 4 + 2))
		kill -KILL "$flood" 2>/dev/null && killed=$((killed + 1))
	fi
	wait "$flood" 2>/dev/null
	kill -0 "$PID_resp" 2>/dev/null || break
done
expect_eq "responder alive after $rounds peers came and went" "$(kill -0 "$PID_resp" 2>/dev/null && echo yes)" yes
expect_eq "pingers killed mid-flood" "$killed" $((rounds / 2))
"$PING" --port "memif:$sock:client" --ip 192.168.77.1/24 --core 0 -c 20 -i 5 -W 500 \
	192.168.77.2 >"$OUT/last.log" 2>&1
expect_eq "last pinger exit code" "$?" 0
expect_eq "last pinger: echo replies received" "$(awk '/transmitted/ {print $3}' "$OUT/last.log")" 20
stop resp
echo "    responder: $(grep -E 'memif_unmap_waits' "$OUT/resp.log" | tr -s ' ')"
echo "    responder: echo replies $(counter "$OUT/resp.log" tx_icmp_echo_reply)"
expect_ge "responder answered the floods" "$(counter "$OUT/resp.log" tx_icmp_echo_reply)" $((rounds * 100))
expect_grep "responder leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/resp.log"
expect_eq "responder exit code" "$RC_resp" 0
