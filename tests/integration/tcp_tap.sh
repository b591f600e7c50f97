#!/usr/bin/env bash
# tcp_tap.sh - lunar's TCP on a tap port against the kernel on the tap's
# other side, with TCP segmentation offload: the tap port hands segments
# of up to 64 KiB to the kernel (virtio-net GSO), which cuts them to the
# MTU. Both directions, SHA-256 exact; the TSO counter shows it was used.
# MTU=9000 (tcp_tap_jumbo): lunar sets the tap's MTU, and the average frame
# each way shows jumbo frames carried the data.
source "$(dirname "$0")/lib.sh"
setup_test "tcp_tap${MTU:+_$MTU}" "$1"
GET="$BUILD/tools/lunar-get"
size=${SIZE:-64M}
mtu=${MTU:-1500}

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
wait_for "kernel listener on 9000" 50 ss_has $N ss -ltnH 'sport = :9000'
$N "$GET" --port tap:ltapk --mtu "$mtu" --ip 10.88.0.2/24 --connect 10.88.0.1:9000 --bytes "$size" --timeout 120 \
	--counters >"$OUT/send.log" 2>&1
expect_eq "lunar -> kernel over tap: exit code" "$?" 0
wait_for "sink to finish" 100 test -s "$OUT/sink.sha"
expect_eq "lunar -> kernel over tap: SHA-256" "$(cat "$OUT/sink.sha")" "$(awk '/^sha256 / {print $2}' "$OUT/send.log")"
expect_ge "segments handed to the tap's TSO" "$(grep -o 'tso_segs [0-9]*' "$OUT/send.log" | awk '{print $2}')" 100
expect_grep "lunar -> kernel over tap: no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/send.log"
expect_eq "lunar set the tap's MTU" "$($N cat /sys/class/net/ltapk/mtu)" "$mtu"
# The kernel's MSS option follows the MTU; lunar's segments carry that less timestamps.
expect_eq "lunar -> kernel: send MSS" "$(awk '/^mss / {print $2}' "$OUT/send.log")" $((mtu - 40 - 12))
# The kernel takes lunar's TSO frames whole (GSO): far larger than one MTU on average.
rx_avg=$(( $($N cat /sys/class/net/ltapk/statistics/rx_bytes) / $($N cat /sys/class/net/ltapk/statistics/rx_packets) ))
expect_ge "lunar -> kernel: average frame (bytes), GSO" "$rx_avg" 16384

head -c "$(numfmt --from=iec "$size")" /dev/urandom >"$OUT/src.bin"
bg source $N socat -u "FILE:$OUT/src.bin" TCP-LISTEN:9001,reuseaddr
wait_for "kernel listener on 9001" 50 ss_has $N ss -ltnH 'sport = :9001'
$N "$GET" --port tap:ltapk --mtu "$mtu" --ip 10.88.0.2/24 --connect 10.88.0.1:9001 --recv --timeout 120 \
	--counters >"$OUT/recv.log" 2>&1
expect_eq "kernel -> lunar over tap: exit code" "$?" 0
expect_eq "kernel -> lunar over tap: SHA-256" "$(awk '/^sha256 / {print $2}' "$OUT/recv.log")" \
	"$(sha256sum "$OUT/src.bin" | cut -c1-64)"
# Frames lunar got from the kernel, on average (port line: rx PKTS pkts BYTES bytes).
read -r pkts bytes < <(sed -n 's/^port tap:ltapk: rx \([0-9]*\) pkts \([0-9]*\) bytes.*/\1 \2/p' "$OUT/recv.log")
expect_ge "kernel -> lunar: average frame (bytes)" "$(( ${bytes:-0} / ${pkts:-1} ))" $((mtu * 2 / 3))
expect_grep "kernel -> lunar over tap: no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/recv.log"
