#!/usr/bin/env bash
# tcp_attack.sh - a blind attacker (RFC 5961 1) against an established
# transfer: lunar on af_xdp in namespace B receives 48 MiB from the kernel in
# A, paced over 8 s; meanwhile scapy in A sends RSTs, SYNs and data
# segments on the same 4-tuple with random sequence and acknowledgment
# numbers (craft.py blind). The transfer must end intact (SHA-256 exact),
# nothing forged may be taken, each forged segment is counted, and the ACKs
# they draw stay under the per-connection limit (RFC 5961 7).
source "$(dirname "$0")/lib.sh"
setup_test tcp_attack "$1"
GET="$BUILD/tools/lunar-get"
CRAFT="$ROOT/tests/integration/craft.py"
N=${N:-1000} # forged segments of each kind

"$TOPO" veth up >/dev/null
on_exit "$TOPO" veth down
A="ip netns exec lunar-a" B="ip netns exec lunar-b"
mac_b=$(ip -n lunar-b -br link show veth-b | awk '{print $3}')

head -c 48M /dev/urandom >"$OUT/src.bin"
bg source $A "$ROOT/tests/integration/paced_source.py" 9010 "$OUT/src.bin" 8
wait_for "kernel sender on 9010" 50 ss_has $A ss -ltnH 'sport = :9010'
bg get $B "$GET" --timeout 60 --port af_xdp:veth-b --connect 10.77.0.1:9010 --recv --counters
wait_for "the transfer to start" 100 sh -c "$A ss -tnH state established '( sport = :9010 )' | grep -q ."
lport=$($A ss -tnH state established '( sport = :9010 )' | awk '{split($4, a, ":"); print a[2]}' | head -1)
expect_ge "lunar's port of the transfer" "${lport:-0}" 1024

$A "$CRAFT" veth-a 10.77.0.1 10.77.0.2 "$mac_b" blind 9010 "$lport" "$N" >"$OUT/craft.log" 2>&1
expect_eq "craft.py exit code" "$?" 0
expect_grep "forged segments sent" "sent blind-data $N" "$OUT/craft.log"
wait "$PID_get" # bounded by its --timeout
expect_eq "lunar-get exit code" "$?" 0
expect_eq "SHA-256 of what lunar received" \
	"$(awk '/^sha256 / {print $2}' "$OUT/get.log")" "$(sha256sum "$OUT/src.bin" | cut -c1-64)"
expect_grep "every byte arrived, the connection was not reset" "^bytes 50331648$" "$OUT/get.log"
# A random sequence number lands in a 256 KiB window once in 16384 tries:
# nearly every forged segment is out of the window, counted and dropped.
oow=$(line_field "$OUT/get.log" tcp: out_of_window)
expect_ge "forged segments counted out of the window" "${oow:-0}" $((3 * N * 95 / 100))
sent=$(line_field "$OUT/get.log" tcp: challenge_acks)
limited=$(line_field "$OUT/get.log" tcp: challenge_acks_limited)
expect_ge "forged RSTs and SYNs beyond the limit, not answered" "${limited:-0}" $((N / 2))
expect_le "ACKs drawn, at most 20 a second over the 8 s transfer, and a margin" "${sent:-0}" 200
expect_grep "no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/get.log"
finish
