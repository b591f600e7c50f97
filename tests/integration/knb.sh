#!/usr/bin/env bash
# knb.sh - the knb benchmark counts right and every mode runs: each pattern
# for a second over the kernel (veth, two namespaces, busy-poll and
# blocking, two threads each side) and over lunar (memif), and the raw memif
# ping-pong (no stack) for a second; requests equal responses on both ends
# for RPC; the JSON follows schema 1 (tests/integration/knb_schema.py,
# docs/KNB.md); bad input gets a clear error and a non-zero exit without
# hanging: unknown option, iodepth 0, a message too large, lunar with two
# threads but one --core CPU, lunar options on the kernel stack, a refused and an unreachable
# peer (bounded by --connect-timeout), a peer speaking another protocol
# version, raw on af_xdp, raw with a pattern other than rpc.
source "$(dirname "$0")/lib.sh"
setup_test knb "$1"
KNB="$BUILD/tools/knb/knb"
SCHEMA=(/usr/bin/python3 "$(dirname "$0")/knb_schema.py")
A="ip netns exec lunar-a" B="ip netns exec lunar-b"
patterns=(rpc stream incast outcast all-to-all mixed)

"$TOPO" veth up >/dev/null
"$TOPO" memif up >/dev/null
on_exit "$TOPO" veth down

# client NAME STACK-ARGS...: a one-second run, JSON checked; sets $rc
client() {
	local name=$1
	shift
	timeout 60 "$@" --duration 1 --warmup 0.2 --json "$OUT/$name.json" >"$OUT/$name.log" 2>&1
	rc=$?
	expect_eq "$name: exit code" "$rc" 0
	[ "$rc" = 0 ] || { sed 's/^/    | /' "$OUT/$name.log" | tail -5; return; }
	"${SCHEMA[@]}" "$OUT/$name.json" >"$OUT/$name.schema" 2>&1
	expect_eq "$name: JSON follows schema 1" "$?" 0
	sed 's/^/    | /' "$OUT/$name.schema" | head -3
}


# 1. The kernel stack, two threads each side, every pattern, both modes.
for mode in busy-poll blocking; do
	srv=ksrv_${mode//-/_}
	bg "$srv" $B "$KNB" server --stack kernel --listen 10.77.0.2:7100 --threads 2 --core 0 \
		--kernel-mode "$mode"
	wait_for "kernel server ($mode)" 100 grep -q "ready" "$OUT/$srv.log"
	for p in "${patterns[@]}"; do
		client "kernel-$mode-$p" $A "$KNB" client --stack kernel --connect 10.77.0.2:7100 \
			--threads 2 --server-threads 2 --pattern "$p" --flows 2 --msg-size 4096 \
			--iodepth 4 --kernel-mode "$mode" --core 0
		[ "$rc" = 0 ] || continue
		case $p in
		rpc | mixed)
			expect_eq "kernel-$mode-$p: requests = responses" \
				"$(json "$OUT/kernel-$mode-$p.json" "d['requests'] - d['responses']")" 0
			expect_eq "kernel-$mode-$p: latency samples = RPCs in the window" \
				"$(json "$OUT/kernel-$mode-$p.json" "d['latency_us']['count'] == round(d['rpc_per_s'] * d['window_s'])")" True
			;;
		*)
			expect_eq "kernel-$mode-$p: bulk data moved" \
				"$(json "$OUT/kernel-$mode-$p.json" "d['gbps'] > 0")" True
			;;
		esac
	done
	stop "$srv"
	expect_eq "kernel server ($mode): exit code" "$(eval echo "\$RC_$srv")" 0
done
# The server answered exactly what it was asked (busy-poll run: all its patterns together).
read -r sreq sresp < <(sed -n 's/^knb server: requests \([0-9]*\) responses \([0-9]*\).*/\1 \2/p' \
	"$OUT/ksrv_busy_poll.log")
expect_eq "kernel server: requests = responses" "${sreq:-x}" "${sresp:-y}"
expect_ge "kernel server: requests answered" "${sreq:-0}" 100

# 2. lunar over memif, every pattern (one thread; lunar's ports share one server).
sock=/run/lunar/knb-test-$$.sock
on_exit rm -f "$sock"
bg lsrv "$KNB" server --stack lunar --port "memif:$sock:server" --ip 192.168.77.2/24 \
	--listen 192.168.77.2:7000 --core 1
wait_for "lunar server" 100 grep -q "ready" "$OUT/lsrv.log"
for p in "${patterns[@]}"; do
	client "lunar-$p" "$KNB" client --stack lunar --port "memif:$sock:client" --ip 192.168.77.1/24 \
		--connect 192.168.77.2:7000 --pattern "$p" --flows 2 --msg-size 4096 --iodepth 4 --core 0 \
		$([ "$p" = rpc ] && echo --cpu-breakdown)
	[ "$rc" = 0 ] || continue
	expect_grep "lunar-$p: no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/lunar-$p.log"
	case $p in
	rpc | mixed)
		expect_eq "lunar-$p: requests = responses" \
			"$(json "$OUT/lunar-$p.json" "d['requests'] - d['responses']")" 0
		expect_ge "lunar-$p: RPCs answered" "$(json "$OUT/lunar-$p.json" "d['responses']")" 100 ;;
	*)
		expect_eq "lunar-$p: bulk data moved" "$(json "$OUT/lunar-$p.json" "d['gbps'] > 0")" True ;;
	esac
done
expect_eq "lunar: the CPU breakdown adds up to 100%" \
	"$(json "$OUT/lunar-rpc.json" "abs(sum(d['cpu_breakdown_pct'].values()) - 100) < 0.5")" True

# 3. Bad input: a clear message, a non-zero exit, no hang.
bad() { # NAME WANT-IN-STDERR CMD...
	local name=$1 want=$2
	shift 2
	timeout 30 "$@" >"$OUT/bad.log" 2>&1
	local got=$?
	expect_eq "bad input, $name: exit code is an error" "$([ "$got" != 0 ] && [ "$got" != 124 ] && echo yes || echo "no ($got)")" yes
	expect_grep "bad input, $name: says why" "$want" "$OUT/bad.log"
}
bad "unknown option" "see knb --help" "$KNB" client --stack kernel --connect 10.77.0.2:7100 --frobnicate
bad "no mode" "first argument is server or client" "$KNB" --stack kernel
bad "iodepth 0" "iodepth" "$KNB" client --stack kernel --connect 10.77.0.2:7100 --iodepth 0
bad "message too large" "msg-size 2M: expected 1 to" "$KNB" client --stack kernel --connect 10.77.0.2:7100 --msg-size 2M
bad "lunar with two threads on one CPU" "one thread per worker" "$KNB" client --stack lunar --port "memif:$sock:client" \
	--ip 192.168.77.1/24 --connect 192.168.77.2:7000 --threads 2
bad "lunar options on the kernel stack" "port is lunar's" "$KNB" client --stack kernel --port memif:/x \
	--connect 10.77.0.2:7100
bad "a TCP option on the kernel stack, named" "cc is lunar's" "$KNB" client --stack kernel --cc cubic \
	--connect 10.77.0.2:7100
bad "a CPU the host does not have" "this host has CPUs 0\\.\\." "$KNB" client --stack kernel --core 64 \
	--connect 10.77.0.2:7100
bad "a CPU list not one per thread" "give one CPU per thread" "$KNB" client --stack kernel --core 0,1 \
	--threads 3 --connect 10.77.0.2:7100
bad "a TCP option on the raw ping-pong" "cc sets lunar's TCP" "$KNB" client --stack raw \
	--port "memif:$sock:client" --ip 192.168.77.1/24 --connect 192.168.77.2:7000 --cc cubic
bad "refused peer" "Connection refused" $A "$KNB" client --stack kernel --connect 10.77.0.2:7999
start=$(date +%s)
bad "unreachable peer" "within 1.0 s" $A "$KNB" client --stack kernel --connect 10.77.0.99:7100 \
	--connect-timeout 1
expect_le "unreachable peer: gave up within the timeout (s)" $(($(date +%s) - start)) 5
bad "another protocol version (lunar server)" "protocol version" "$KNB" client --stack lunar \
	--port "memif:$sock:client" --ip 192.168.77.1/24 --connect 192.168.77.2:7000 --protocol-version 2
stop lsrv
expect_eq "lunar server: exit code" "$RC_lsrv" 0
expect_grep "lunar server: no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/lsrv.log"
expect_grep "lunar server: told of the other version" "protocol version 2, this server 1" "$OUT/lsrv.log"

# 4. The raw memif ping-pong (no stack): the same frames, counted the same way.
rsock=/run/lunar/knb-raw-test-$$.sock
on_exit rm -f "$rsock"
bg rsrv "$KNB" server --stack raw --port "memif:$rsock:server" --ip 192.168.77.2/24 \
	--listen 192.168.77.2:7000 --core 1
wait_for "raw server" 100 grep -q "ready" "$OUT/rsrv.log"
for depth in 1 4; do
	client "raw-d$depth" "$KNB" client --stack raw --port "memif:$rsock:client" --ip 192.168.77.1/24 \
		--connect 192.168.77.2:7000 --msg-size 4096 --iodepth "$depth" --core 0
	[ "$rc" = 0 ] || continue
	expect_eq "raw-d$depth: the JSON says stack raw" "$(json "$OUT/raw-d$depth.json" "d['config']['stack']")" raw
	expect_eq "raw-d$depth: nonzero rpc_per_s" "$(json "$OUT/raw-d$depth.json" "d['rpc_per_s'] > 0")" True
	expect_eq "raw-d$depth: requests = responses" \
		"$(json "$OUT/raw-d$depth.json" "d['requests'] - d['responses']")" 0
	expect_eq "raw-d$depth: latency samples = RPCs in the window" \
		"$(json "$OUT/raw-d$depth.json" "d['latency_us']['count'] == round(d['rpc_per_s'] * d['window_s'])")" True
	expect_grep "raw-d$depth: 3 frames per 4 KiB request at MTU 1500" "^knb client: raw memif ping-pong .*: 3 frames of at most 1514 bytes" "$OUT/raw-d$depth.log"
	expect_grep "raw-d$depth: no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/raw-d$depth.log"
done
bad "raw on af_xdp" "stack raw needs --port memif" "$KNB" client --stack raw --port af_xdp:veth-a \
	--connect 10.77.0.2:7000
bad "raw with pattern stream" "measures pattern rpc only" "$KNB" client --stack raw \
	--port "memif:$rsock:client" --ip 192.168.77.1/24 --connect 192.168.77.2:7000 --pattern stream
bad "raw with --idle-yield" "idle-yield is for --stack lunar" "$KNB" client --stack raw \
	--port "memif:$rsock:client" --ip 192.168.77.1/24 --connect 192.168.77.2:7000 --idle-yield 8
bad "raw with another protocol version" "protocol version" "$KNB" client --stack raw \
	--port "memif:$rsock:client" --ip 192.168.77.1/24 --connect 192.168.77.2:7000 --protocol-version 2
stop rsrv
expect_eq "raw server: exit code" "$RC_rsrv" 0
expect_grep "raw server: no Zbuf object leaked" "^zbuf: 0 objects in use" "$OUT/rsrv.log"
read -r sreq sresp < <(sed -n 's/^knb server: requests \([0-9]*\) responses \([0-9]*\).*/\1 \2/p' "$OUT/rsrv.log")
expect_eq "raw server: requests = responses" "${sreq:-x}" "${sresp:-y}"
expect_ge "raw server: requests answered" "${sreq:-0}" 100
