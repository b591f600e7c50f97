#!/usr/bin/env bash
# api_modes.sh - each of lunar's application interfaces works end to end
# over memif (LUNA 5.1, 6.2): inline-r2c zero-copy callbacks, batch-r2c
# zero-copy events, the socket-like copying calls (api/lsock.h: epoll-like
# readiness, no callbacks), and dispatch mode (api/dispatch_tcp.h: the
# server's application on its own thread, over a channel), each a 4 KiB RPC
# run with requests = responses on both ends and no Zbuf object leaked.
# The zero-copy modes copy zero payload bytes on either side (the copy
# counters), inline mode really runs callbacks in place, the copying mode
# counts its copies; kernel sockets in the loop: the batch server also
# echoes kernel TCP on 127.0.0.1 from the same loop (LUNA 7.2). Then the watchdog: a server application that stalls
# 2 ms in each callback gets its loop iterations counted over budget and
# reported, and still answers every request correctly. A server that
# yields its CPU when idle (--idle-yield) still answers every request, in
# dispatch mode too, where the thread's messages count as work.
source "$(dirname "$0")/lib.sh"
setup_test api_modes "$1"
KNB="$BUILD/tools/knb/knb"
mkdir -p /run/lunar
sock=/run/lunar/api-test-$$.sock
on_exit rm -f "$sock"

# run NAME SERVER-ARGS -- CLIENT-ARGS: one server and one 1-second client run
run() {
	local name=$1
	shift
	local sargs=() cargs=()
	while [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	bg "srv_$name" "$KNB" server --stack lunar --port "memif:$sock:server" --ip 192.168.77.2/24 \
		--listen 192.168.77.2:7000 --core 1 --verbose "${sargs[@]}"
	wait_for "$name server" 100 grep -q "ready" "$OUT/srv_$name.log"
	# Kernel sockets in the same loop: a kernel TCP echo while lunar serves RPCs.
	[ -n "${KECHO:-}" ] && /usr/bin/python3 - "$KECHO" >"$OUT/kecho-$name.log" 2>&1 <<'PY' &
import os, socket, sys, time
port = int(sys.argv[1]); ok = 0
for i in range(20):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    msg = os.urandom(1000 + 200 * i)
    s.sendall(msg); got = b""
    while len(got) < len(msg):
        b = s.recv(65536)
        if not b: break
        got += b
    ok += got == msg; s.close(); time.sleep(0.02)
print("kernel echo ok", ok)
PY
	timeout 60 "$KNB" client --stack lunar --port "memif:$sock:client" --ip 192.168.77.1/24 \
		--connect 192.168.77.2:7000 --pattern rpc --msg-size 4096 --iodepth 2 --core 0 \
		--duration 1 --warmup 0.2 --verbose --json "$OUT/$name.json" "${cargs[@]}" \
		>"$OUT/cli-$name.log" 2>&1
	expect_eq "$name: client exit code" "$?" 0
	stop "srv_$name"
	cli="$OUT/cli-$name.log" srv="$OUT/srv_$name.log"
	expect_eq "$name: requests = responses" \
		"$(json "$OUT/$name.json" "d['requests'] - d['responses']")" 0
	expect_ge "$name: RPCs completed" "$(json "$OUT/$name.json" "d['responses']")" 20
	read -r sreq sresp < <(awk '/^knb server: requests/ {print $4, $6}' "$srv")
	expect_eq "$name: the server answered every request" "${sreq:-x}" "${sresp:-y}"
	expect_grep "$name: client leaked no Zbuf object" "^zbuf: 0 objects in use" "$cli"
	expect_grep "$name: server leaked no Zbuf object" "^zbuf: 0 objects in use" "$srv"
}

for api in inline batch; do
	KECHO=$([ "$api" = batch ] && echo 7999) run "$api" --api "$api" $([ "$api" = batch ] && echo --kernel-echo 7999) -- --api "$api"
	for f in "$OUT/cli-$api.log" "$OUT/srv_$api.log"; do
		side=$(basename "$f" .log)
		expect_eq "$api ($side): payload bytes copied on send" "$(line_field "$f" tcp: copy_tx_bytes)" 0
		expect_eq "$api ($side): payload bytes copied on receive" "$(line_field "$f" tcp: copy_rx_bytes)" 0
		expect_eq "$api ($side): no received segment compacted (all are large)" \
			"$(line_field "$f" tcp: rcvq_compacted_bytes)" 0
		expect_ge "$api ($side): payload framed without a copy" "$(line_field "$f" tcp: zc_tx_bytes)" 100000
	done
done
expect_ge "inline: server callbacks run in place" "$(line_field "$OUT/srv_inline.log" tcp: inline_calls)" 20
wait
expect_grep "batch: a kernel TCP echo served from lunar's loop, 20 of 20 right" "^kernel echo ok 20$" \
	"$OUT/kecho-batch.log"
expect_eq "batch: no callback runs in place" "$(line_field "$OUT/srv_batch.log" tcp: inline_calls)" 0
expect_eq "inline: the JSON names the interface" "$(json "$OUT/inline.json" "d['config']['api']")" inline

# The copy run's server also gives its CPU away when idle (--idle-yield 1):
# it still answers every request (run's checks), and counts its yields.
run copy --api copy --idle-yield 1 -- --api copy
expect_ge "copy: the client's sends are copied" "$(line_field "$OUT/cli-copy.log" tcp: copy_tx_bytes)" 100000
expect_ge "copy: the idle server yielded its CPU" "$(line_field "$OUT/srv_copy.log" loop: idle_yields)" 1
expect_eq "copy: the client, always polling, never yielded" "$(line_field "$OUT/cli-copy.log" loop: idle_yields)" 0
# Only iterations that received nothing may yield.
srv_iter=$(line_field "$OUT/srv_copy.log" loop: iterations)
srv_rx=$(line_field "$OUT/srv_copy.log" loop: rx_iterations)
expect_ge "copy: no yield in an iteration that received" "$((srv_iter - srv_rx))" \
	"$(line_field "$OUT/srv_copy.log" loop: idle_yields)"
expect_ge "copy: the server's reads are copied" "$(line_field "$OUT/srv_copy.log" tcp: copy_rx_bytes)" 100000

# A trusted link (--trust-link, both ends): no checksum computed or checked,
# every frame taken as the port's "good"; one end alone cannot talk to the
# other, and says why in a drop counter.
run trusted --api inline --trust-link -- --api inline --trust-link
expect_ge "trusted: the server took frames as checked" "$(counter "$OUT/srv_trusted.log" rx_csum_hw_ok)" 100
expect_ge "trusted: the client left checksums to the link" "$(counter "$OUT/cli-trusted.log" tx_csum_offload)" 100
bg srv_half "$KNB" server --stack lunar --port "memif:$sock:server" --ip 192.168.77.2/24 \
	--listen 192.168.77.2:7000 --core 1 --verbose --trust-link
wait_for "half-trusted server" 100 grep -q "ready" "$OUT/srv_half.log"
timeout 30 "$KNB" client --stack lunar --port "memif:$sock:client" --ip 192.168.77.1/24 \
	--connect 192.168.77.2:7000 --pattern rpc --msg-size 4096 --core 0 --duration 1 \
	--connect-timeout 1 --verbose >"$OUT/cli-half.log" 2>&1
expect_eq "one end trusting: the client cannot connect" "$?" 1
expect_grep "one end trusting: the checking end drops and names it" "drop IP_BAD_CHECKSUM" "$OUT/cli-half.log"
stop srv_half

# Dispatch mode (LUNA 5.2): the server's application on a thread of its own,
# talking to the stack core only through its channel; zero copy across. The
# stack core yields when idle (--idle-yield 1). The thread shares the
# stack's core, so it sleeps at once instead of spinning first.
run dispatch --api dispatch --idle-yield 1 -- --api batch
srv="$OUT/srv_dispatch.log"
expect_grep "dispatch: the server says so" "ready, .* dispatch mode" "$srv"
expect_ge "dispatch: the thread's requests reached the stack core" "$(line_field "$srv" dtcp: requests)" 40
expect_eq "dispatch: the connection came to the thread" "$(line_field "$srv" dtcp: conns_accepted)" 1
expect_eq "dispatch: no request named a dead connection" "$(line_field "$srv" dtcp: bad_handle)" 0
expect_eq "dispatch: no send was refused" "$(line_field "$srv" dtcp: send_refused)" 0
expect_eq "dispatch: the thread gave back every connection" "$(line_field "$srv" dtcp: open)" 0
expect_ge "dispatch: received bytes crossed to the thread" "$(line_field "$srv" dtcp: rx_bytes)" 80000
expect_ge "dispatch: the idle thread slept" "$(line_field "$srv" chan: sleeps)" 1
expect_ge "dispatch: the idle stack core yielded" "$(line_field "$srv" loop: idle_yields)" 1
# The thread runs on the stack's core (it inherits the worker's CPU): a
# spin there would only keep the stack from making the reply it waits for.
expect_ge "dispatch: the thread on the stack's core slept without spinning" \
	"$(line_field "$srv" chan: spins_skipped)" 20
expect_le "dispatch: it spun only while the stack had sent nothing yet" \
	"$(line_field "$srv" chan: spins)" 2
# ...and is woken by the stack core's next dispatcher poll, which then
# yields to it, not by each message (a 4 KiB request is three data events).
expect_ge "dispatch: the stack core yielded to the thread it woke" \
	"$(line_field "$srv" chan: handoffs)" 20
expect_eq "dispatch: every wakeup of the thread on the stack's core waited for the poll" \
	"$(line_field "$srv" chan: wakeups_deferred)" "$(line_field "$srv" chan: wakeups)"
expect_eq "dispatch: payload bytes copied on send" "$(line_field "$srv" tcp: copy_tx_bytes)" 0
expect_eq "dispatch: payload bytes copied on receive" "$(line_field "$srv" tcp: copy_rx_bytes)" 0
expect_eq "dispatch: no received segment compacted (all are large)" \
	"$(line_field "$srv" tcp: rcvq_compacted_bytes)" 0

# The thread on another core (the client's: this machine has two), as LUNA
# runs it: woken by each send, no hand-off. Its requests come in between the
# stack core's iterations; one that finds a yield pending calls it off.
run dispatch_apart --api dispatch --app-core 0 --idle-yield 1 -- --api batch
srv="$OUT/srv_dispatch_apart.log"
expect_ge "dispatch apart: the thread's requests reached the stack core" \
	"$(line_field "$srv" dtcp: requests)" 40
expect_ge "dispatch apart: the thread was woken" "$(line_field "$srv" chan: wakeups)" 1
expect_eq "dispatch apart: no wakeup waited for the poll" \
	"$(line_field "$srv" chan: wakeups_deferred)" 0
expect_eq "dispatch apart: the stack core never yielded to it" "$(line_field "$srv" chan: handoffs)" 0
expect_ge "dispatch apart: the thread's messages called pending yields off" \
	"$(line_field "$srv" loop: yields_called_off)" 1

# The watchdog: 2 ms stalls against the default 1 ms budget.
run stall --api inline --app-stall-us 2000 -- --api inline
expect_ge "stall: iterations over budget counted" "$(line_field "$OUT/srv_stall.log" loop: over_budget)" 5
expect_ge "stall: worst iteration reported" "$(line_field "$OUT/srv_stall.log" loop: worst_iter_us)" 2000
expect_grep "stall: the stall is reported, and not blamed on the port" \
	"loop iteration took .* in the port's transmit: is an application callback blocking" \
	"$OUT/srv_stall.log"
