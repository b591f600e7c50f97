#!/usr/bin/env bash
# bad_input.sh - bad arguments and bad environments get an error that names
# the problem and the fix, a non-zero exit, and leave nothing behind (no XDP
# program, no hugepage file, no stray socket).
source "$(dirname "$0")/lib.sh"
setup_test bad_input "$1"

# run_bad DESC WANT_RC PATTERN ARGS...: expect exit code and a message on stderr
run_bad() {
	local desc=$1 want=$2 pattern=$3
	shift 3
	# Bounded: a run that should have been refused must not hang the suite.
	timeout -s KILL 60 "$@" >"$OUT/out.log" 2>"$OUT/err.log"
	local rc=$?
	expect_eq "$desc: exit code" "$rc" "$want"
	expect_grep "$desc: message" "$pattern" "$OUT/err.log"
}

"$TOPO" memif up >/dev/null # /run/lunar, where the memif sockets below live
run_bad "unknown port kind" 2 "unknown port kind 'foo'.*af_xdp:<ifname>" \
	"$PING" --port foo:bar --responder
run_bad "port without kind" 2 "expected af_xdp:<ifname>" "$PING" --port eth0 --responder
run_bad "memif without --ip" 1 "needs --ip" "$PING" --port memif:/run/lunar/x.sock --responder
run_bad "bad --ip" 2 "expected an IPv4 address with prefix length" \
	"$PING" --port memif:/run/lunar/x.sock --ip 300.1.1.1/24 --responder
run_bad "bad --fault" 2 "not a probability" \
	"$PING" --port memif:/run/lunar/x.sock --ip 10.0.0.1/24 --fault drop=2 --responder
run_bad "bad --pool" 2 "expected 2048..262144 packet buffers" \
	"$PING" --port memif:/run/lunar/x.sock --ip 10.0.0.1/24 --pool 100 --responder
run_bad "bad memif role" 2 "neither 'server' nor 'client'" \
	"$PING" --port memif:/run/lunar/x.sock:master --ip 10.0.0.1/24 --responder
run_bad "memif socket in a missing directory" 1 "directory /nonexistent/dir does not exist.*mkdir -p" \
	"$PING" --port memif:/nonexistent/dir/x.sock:client --ip 10.0.0.1/24 --responder
run_bad "missing interface" 1 "interface nosuch0 not found" \
	"$PING" --port af_xdp:nosuch0 --responder
run_bad "--trust-link on a tap port" 1 "trust-link is for memif between two lunar processes" \
	"$PING" --trust-link --port tap:lt0 --ip 10.0.0.1/24 --responder
run_bad "--trust-link with corruption" 1 "nothing would catch the corruption" \
	"$PING" --port memif:/run/lunar/x.sock --trust-link --ip 10.0.0.1/24 --fault corrupt=0.1 --responder
# Tools that run one worker refuse a --core list, whose other queues nobody would poll.
for tool in lunar-ping lunar-httpd lunar-get; do
	args=(--responder)
	[ "$tool" = lunar-httpd ] && args=(--listen 8080)
	[ "$tool" = lunar-get ] && args=(--connect 10.0.0.2:80 --recv)
	run_bad "$tool with two --core CPUs" 2 "runs one worker.*give one CPU" \
		"$BUILD/tools/$tool" --port memif:/run/lunar/x.sock --ip 10.0.0.1/24 --core 0,1 "${args[@]}"
done
run_bad "lunar-get with two modes" 2 "give only one of --get, --put" \
	"$BUILD/tools/lunar-get" --port memif:/run/lunar/x.sock --ip 10.0.0.1/24 \
	--connect 10.0.0.2:80 --put /etc/hostname --send /etc/hostname
run_bad "watchdog budget that is not a number" 1 "LUNAR_ITER_BUDGET_US=abc: expected" \
	env LUNAR_ITER_BUDGET_US=abc "$PING" --port memif:/run/lunar/x.sock --ip 10.0.0.1/24 --responder
run_bad "gateway off the subnet" 1 "not on the subnet of --ip" \
	"$PING" --port memif:/run/lunar/x.sock --ip 10.0.0.1/24 --gw 10.9.9.9 --responder
# A memif client whose server is not there (a socket file nobody listens on).
nosrv=/run/lunar/test-nosrv-$$.sock
on_exit rm -f "$nosrv"
python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1])" "$nosrv"
run_bad "memif client without a server" 1 "no server accepted a connection on .*:server) first" \
	"$PING" --port "memif:$nosrv:client" --ip 10.0.0.1/24 --responder

# No hugepages: the error says how to reserve them.
hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
saved=$(cat $hp)
on_exit "echo $saved > $hp"
echo 0 >$hp
run_bad "no hugepages" 1 "no free 2 MiB hugepages.*hugepages.sh" \
	"$PING" --port memif:/run/lunar/x.sock --ip 10.0.0.1/24 --responder
# ...unless EAL is told to run without them (valgrind's way).
LUNAR_EAL_ARGS="--no-huge -m 1024" timeout 60 "$PING" --port memif:/run/lunar/nohuge-$$.sock:server \
	--ip 10.0.0.1/24 --responder --duration 0.5 >"$OUT/nohuge.log" 2>&1
expect_eq "LUNAR_EAL_ARGS=--no-huge runs with no hugepages" "$?" 0
echo "$saved" >$hp

# A memif socket in use by another lunar process.
sock=/run/lunar/test-busy-$$.sock
on_exit rm -f "$sock"
bg first "$PING" --port "memif:$sock:server" --ip 192.168.79.2/24 --core 1 --responder
wait_for "memif socket" 100 test -S "$sock"
run_bad "memif socket in use" 1 "memif socket .* is in use by another process" \
	"$PING" --port "memif:$sock:server" --ip 192.168.79.3/24 --core 0 --responder
"$PING" --port "memif:$sock:client" --ip 192.168.79.1/24 --core 0 -c 3 -i 10 192.168.79.2 >"$OUT/ok.log" 2>&1
expect_eq "the first server still works after the refused second one" "$?" 0
stop first

# A stale memif socket (its process died) is cleaned up, not an error.
python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1])" "$sock"
"$PING" --port "memif:$sock:server" --ip 192.168.79.2/24 --responder --duration 0.5 >"$OUT/stale.log" 2>&1
expect_eq "a stale memif socket is replaced" "$?" 0

# An interface that already carries another XDP program is refused and left
# as it was. (A lunar_steer with no live lunar process behind it would be
# removed as stale: tests/integration/afxdp_crash.sh.)
"$TOPO" veth up >/dev/null
on_exit "$TOPO" veth down
printf '%s\n' '__attribute__((section("xdp"), used)) int other_xdp(void *ctx) { return 2; }' \
	'__attribute__((section("license"), used)) char _license[] = "GPL";' >"$OUT/other_xdp.c"
clang -O2 -target bpf -c "$OUT/other_xdp.c" -o "$OUT/other_xdp.o"
ip -n lunar-b link set dev veth-b xdpgeneric obj "$OUT/other_xdp.o" sec xdp
run_bad "interface with an XDP program" 1 "already has XDP program other_xdp.*xdp off" \
	ip netns exec lunar-b "$PING" --port af_xdp:veth-b --responder
expect_eq "the other XDP program is left in place" \
	"$(ip -n lunar-b link show veth-b | grep -c 'prog/xdp')" 1
ip -n lunar-b link set dev veth-b xdpgeneric off
# A path that would not fit in the PMD's arguments is refused, not cut short.
run_bad "XDP program path too long" 1 "device arguments do not fit in 256 bytes.*shorter" \
	env LUNAR_XDP_PROG="/tmp/$(printf 'x%.0s' $(seq 250)).o" ip netns exec lunar-b "$PING" --port af_xdp:veth-b --responder

# A reserved range over the kernel's own client ports (32768-60999 by default).
run_bad "reserved range over the kernel's client ports" 1 \
	"overlaps the kernel's own client ports.*ip_local_reserved_ports=32768-65535" \
	ip netns exec lunar-b "$PING" --port af_xdp:veth-b --reserved 32768-65535 --responder
# A kernel socket listening inside the reserved range on all addresses: its
# connections would be steered to lunar.
ip netns exec lunar-b socat TCP-LISTEN:61500,bind=0.0.0.0,reuseaddr,fork /dev/null &
KLISTENER=$!
on_exit kill "$KLISTENER"
wait_for "kernel listener on 61500" 50 ss_has ip netns exec lunar-b ss -Hltn 'sport = :61500'
run_bad "kernel listener inside the reserved range" 1 \
	"holds TCP port 61500, on which a kernel socket listens.*Move that listener" \
	ip netns exec lunar-b "$PING" --port af_xdp:veth-b --responder
kill "$KLISTENER"
expect_eq "no XDP program left on veth-b" "$(ip -n lunar-b link show veth-b | grep -c 'prog/xdp')" 0
