#!/usr/bin/env bash
# tcp_tap.sh - lunar's TCP on a tap port against the kernel on the tap's
# other side, with TCP segmentation offload: net_tap offers TSO, so lunar
# hands it segments of up to 64 KiB that the port cuts to the MTU. Both
# directions, SHA-256 exact; the TSO counter shows it was used.
source "$(dirname "$0")/lib.sh"
setup_test tcp_tap "$1"
GET="$BUILD/tools/lunar-get"
size=${SIZE:-64M}

ns=lunar-tcptap-$$
ip netns add "$ns"
on_exit ip netns del "$ns"
N="ip netns exec $ns"
ip -n "$ns" link set lo up
$N sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
# A persistent tap: the kernel's end gets 10.88.0.1, lunar attaches to it as 10.88.0.2.
ip -n "$ns" tuntap add dev ltapk mode tap multi_queue
ip -n "$ns" addr add 10.88.0.1/24 dev ltapk
ip -n "$ns" link set ltapk up

bg sink sh -c "$N socat -u TCP-LISTEN:9000,reuseaddr - | sha256sum | cut -c1-64 > $OUT/sink.sha"
wait_for "kernel listener on 9000" 50 $N ss -ltnH 'sport = :9000'
$N "$GET" --port tap:ltapk --ip 10.88.0.2/24 --connect 10.88.0.1:9000 --bytes "$size" --timeout 120 \
	--counters >"$OUT/send.log" 2>&1
expect_eq "lunar -> kernel over tap: exit code" "$?" 0
wait_for "sink to finish" 100 test -s "$OUT/sink.sha"
expect_eq "lunar -> kernel over tap: SHA-256" "$(cat "$OUT/sink.sha")" "$(awk '/^sha256 / {print $2}' "$OUT/send.log")"
expect_ge "segments handed to the tap's TSO" "$(grep -o 'tso_segs [0-9]*' "$OUT/send.log" | awk '{print $2}')" 100
expect_grep "lunar -> kernel over tap: no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/send.log"

head -c "$(numfmt --from=iec "$size")" /dev/urandom >"$OUT/src.bin"
bg source $N socat -u "FILE:$OUT/src.bin" TCP-LISTEN:9001,reuseaddr
wait_for "kernel listener on 9001" 50 $N ss -ltnH 'sport = :9001'
$N "$GET" --port tap:ltapk --ip 10.88.0.2/24 --connect 10.88.0.1:9001 --recv --timeout 120 >"$OUT/recv.log" 2>&1
expect_eq "kernel -> lunar over tap: exit code" "$?" 0
expect_eq "kernel -> lunar over tap: SHA-256" "$(awk '/^sha256 / {print $2}' "$OUT/recv.log")" \
	"$(sha256sum "$OUT/src.bin" | cut -c1-64)"
