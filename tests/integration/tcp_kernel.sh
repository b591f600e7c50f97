#!/usr/bin/env bash
# tcp_kernel.sh - lunar's TCP against the Linux kernel's, across a veth:
# lunar on af_xdp in namespace B, the kernel (socat) in A. Both directions
# and an echo, SHA-256 exact; a capture that tshark finds clean; a refused
# connection reported as such; no Zbuf object leaked; D-SACKs (RFC 2883)
# exchanged with the kernel when lunar's port duplicates frames.
# SIZE (default 64M) sets the transfer size; the long suite uses 1G.
source "$(dirname "$0")/lib.sh"
setup_test tcp_kernel "$1"
GET="$BUILD/tools/lunar-get"
# Every transfer is bounded: a stall fails the test instead of hanging it.
GET_TIMEOUT=(--timeout 120)
size=${SIZE:-64M}

"$TOPO" veth up >/dev/null
on_exit "$TOPO" veth down
A="ip netns exec lunar-a" B="ip netns exec lunar-b"

# 1. lunar sends to a kernel sink.
bg sink sh -c "$A socat -u TCP-LISTEN:9000,reuseaddr - | sha256sum | cut -c1-64 > $OUT/sink.sha"
wait_for "kernel listener on 9000" 50 ss_has $A ss -ltnH 'sport = :9000'
$B "$GET" "${GET_TIMEOUT[@]}" --port af_xdp:veth-b --connect 10.77.0.1:9000 --bytes "$size" --counters >"$OUT/send.log" 2>&1
expect_eq "lunar -> kernel: lunar-get exit code" "$?" 0
wait_for "sink to finish" 100 test -s "$OUT/sink.sha"
expect_eq "lunar -> kernel: SHA-256 of what the kernel received" \
	"$(cat "$OUT/sink.sha")" "$(awk '/^sha256 / {print $2}' "$OUT/send.log")"
expect_grep "lunar -> kernel: no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/send.log"

# 1b. --no-digest (bench/loss_transfer.sh sends a file with it): no hash, the
# same bytes; refused where it would change nothing or drop the check.
head -c 1M /dev/urandom >"$OUT/nd.bin"
bg sink_nd sh -c "$A socat -u TCP-LISTEN:9005,reuseaddr - | sha256sum | cut -c1-64 > $OUT/sink_nd.sha"
wait_for "kernel listener on 9005" 50 ss_has $A ss -ltnH 'sport = :9005'
$B "$GET" "${GET_TIMEOUT[@]}" --port af_xdp:veth-b --connect 10.77.0.1:9005 --send "$OUT/nd.bin" --no-digest >"$OUT/send_nd.log" 2>&1
expect_eq "--no-digest: lunar-get exit code" "$?" 0
wait_for "sink to finish" 100 test -s "$OUT/sink_nd.sha"
expect_eq "--no-digest: SHA-256 of what the kernel received" "$(cat "$OUT/sink_nd.sha")" "$(sha256sum "$OUT/nd.bin" | cut -c1-64)"
expect_grep "--no-digest: no hash printed" "^sha256 none$" "$OUT/send_nd.log"
"$GET" --connect 10.77.0.1:9005 --echo 1M --no-digest >"$OUT/echo_nd.log" 2>&1
expect_eq "--no-digest with --echo: refused (exit code 2)" "$?" 2
expect_grep "--no-digest with --echo: says why" "echo checks the echo by its SHA-256" "$OUT/echo_nd.log"
"$GET" --connect 10.77.0.1:9005 --conns 2 --bytes 1M --no-digest >"$OUT/conns_nd.log" 2>&1
expect_eq "--no-digest with --conns: refused (exit code 2)" "$?" 2
expect_grep "--no-digest with --conns: says why" "hash nothing" "$OUT/conns_nd.log"

# 2. The kernel sends a file to lunar.
head -c "$(numfmt --from=iec "$size")" /dev/urandom >"$OUT/src.bin"
bg source $A socat -u "FILE:$OUT/src.bin" TCP-LISTEN:9001,reuseaddr
wait_for "kernel listener on 9001" 50 ss_has $A ss -ltnH 'sport = :9001'
$B "$GET" "${GET_TIMEOUT[@]}" --port af_xdp:veth-b --connect 10.77.0.1:9001 --recv --counters >"$OUT/recv.log" 2>&1
expect_eq "kernel -> lunar: lunar-get exit code" "$?" 0
expect_eq "kernel -> lunar: SHA-256 of what lunar received" \
	"$(awk '/^sha256 / {print $2}' "$OUT/recv.log")" "$(sha256sum "$OUT/src.bin" | cut -c1-64)"
expect_ge "kernel -> lunar: segments on the fast path (header prediction)" \
	"$(grep -o 'fastpath_data [0-9]*' "$OUT/recv.log" | awk '{print $2}')" 1000
expect_grep "kernel -> lunar: no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/recv.log"

# 2b. RFC 2883 with the kernel: lunar's port duplicates 2% of frames each way
# (seeded). lunar reports the kernel's data it got twice as D-SACKs, which the
# kernel counts (TCPDSACKRecv). (tcp_memif_fault checks lunar recognises them.)
kernel_dsacks() { $A nstat -saz TcpExtTCPDSACKRecv | awk '$1 == "TcpExtTCPDSACKRecv" {print $2}'; }
dsack_before=$(kernel_dsacks)
bg source_dup $A socat -u "FILE:$OUT/src.bin" TCP-LISTEN:9004,reuseaddr
wait_for "kernel listener on 9004" 50 ss_has $A ss -ltnH 'sport = :9004'
$B "$GET" "${GET_TIMEOUT[@]}" --port af_xdp:veth-b --fault dup=2% --fault seed=7 \
	--connect 10.77.0.1:9004 --recv --counters >"$OUT/dup.log" 2>&1
expect_eq "kernel -> lunar, duplicates: lunar-get exit code" "$?" 0
expect_eq "kernel -> lunar, duplicates: SHA-256 of what lunar received" \
	"$(awk '/^sha256 / {print $2}' "$OUT/dup.log")" "$(sha256sum "$OUT/src.bin" | cut -c1-64)"
expect_ge "kernel -> lunar, duplicates: D-SACKs lunar sent" "$(line_field "$OUT/dup.log" tcp: dsacks_sent)" 1
expect_ge "kernel -> lunar, duplicates: D-SACKs the kernel received (TcpExtTCPDSACKRecv)" \
	"$(( $(kernel_dsacks) - dsack_before ))" 1

# 3. Both ways at once through a kernel echo.
bg echo $A "$ROOT/tests/integration/echo_server.py" 9002
wait_for "kernel echo on 9002" 50 ss_has $A ss -ltnH 'sport = :9002'
$B "$GET" "${GET_TIMEOUT[@]}" --port af_xdp:veth-b --connect 10.77.0.1:9002 --echo 16M >"$OUT/echo.log" 2>&1
expect_eq "echo through the kernel: exit code (it compares what came back)" "$?" 0

# 4. A capture of a transfer: every frame well-formed, every checksum right.
bg sink2 $A socat -u TCP-LISTEN:9003,reuseaddr /dev/null
wait_for "kernel listener on 9003" 50 ss_has $A ss -ltnH 'sport = :9003'
$B "$GET" "${GET_TIMEOUT[@]}" --port af_xdp:veth-b --connect 10.77.0.1:9003 --bytes 4M --pcap "$OUT/t.pcap" >"$OUT/pcap.log" 2>&1
expect_eq "captured transfer: exit code" "$?" 0
expect_ge "frames in the capture" "$(tshark_count "$OUT/t.pcap")" 2000
bad=$(tcp_capture_bad "$OUT/t.pcap" 10.77.0.2)
expect_eq "malformed frames or bad checksums in the capture" "$bad" 0

# 5. A port nobody listens on: the kernel answers RST, lunar reports it.
$B "$GET" "${GET_TIMEOUT[@]}" --port af_xdp:veth-b --connect 10.77.0.1:9999 --recv >"$OUT/refused.log" 2>&1
expect_eq "connection to a closed port: exit code" "$?" 1
expect_grep "connection to a closed port: reported as refused" "reset \(or refused\)" "$OUT/refused.log"
