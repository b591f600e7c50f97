#!/usr/bin/env bash
# ab_rpc.sh - two knb builds against each other, interleaved, on the
# 4 KiB RPC round trip over memif (inline API, iodepth 1, 2 s a run):
# A, B, A, B, ... so that the VM's slow phases hit both alike. Prints each
# run's client p50 (us) / server rx_iter_avg_ns / RPC/s / p99 (us), then
# the medians. KNB may be a script that sets the environment and execs knb
# (LUNAR_CSUM=avx2, say).
# Needs /run/lunar (scripts/topo.sh memif up) and nothing else on CPUs 0-1.
#
# usage: bench/ab_rpc.sh ROUNDS KNB_A KNB_B [more knb arguments, e.g. --trust-link]
set -u
[ $# -ge 3 ] || { sed -n 2,9p "$0"; exit 2; }
rounds=$1 a=$2 b=$3
shift 3
sock=/run/lunar/ab-rpc.sock
log=$(mktemp -d /tmp/lunar-ab.XXXXXX)
trap 'rm -rf "$log"' EXIT

run() { # KNB [args]: one server/client pair, prints p50/rx_iter_avg_ns/RPC/s/p99
	local knb=$1 srv
	shift
	"$knb" server --stack lunar --api inline --port "memif:$sock:server" --ip 192.168.77.2/24 \
		--listen 192.168.77.2:7000 --core 1 --pattern rpc --msg-size 4096 --verbose "$@" \
		>"$log/srv" 2>&1 &
	srv=$!
	for _ in $(seq 50); do grep -q ready "$log/srv" && break; sleep 0.1; done
	"$knb" client --stack lunar --api inline --port "memif:$sock:client" --ip 192.168.77.1/24 \
		--connect 192.168.77.2:7000 --core 0 --pattern rpc --msg-size 4096 --iodepth 1 \
		--duration 2 --warmup 0.5 "$@" >"$log/cli" 2>&1
	kill -INT "$srv"
	wait "$srv"
	echo "$(grep -o 'p50 [0-9.]*' "$log/cli" | cut -d' ' -f2)/$(grep -o 'rx_iter_avg_ns [0-9]*' "$log/srv" | cut -d' ' -f2)/$(grep -o '[0-9]* RPC/s' "$log/cli" | cut -d' ' -f1)/$(grep -o 'p99 [0-9.]*' "$log/cli" | head -1 | cut -d' ' -f2)"
}
median() { # FIELD values...: the median of field FIELD (1 p50, 3 RPC/s, 4 p99)
	local f=$1
	shift
	printf '%s\n' "$@" | cut -d/ -f"$f" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}
ra=() rb=()
for _ in $(seq "$rounds"); do
	ra+=("$(run "$a" "$@")")
	rb+=("$(run "$b" "$@")")
done
echo "A: ${ra[*]}  median p50 $(median 1 "${ra[@]}") us, p99 $(median 4 "${ra[@]}") us, RPC/s $(median 3 "${ra[@]}")"
echo "B: ${rb[*]}  median p50 $(median 1 "${rb[@]}") us, p99 $(median 4 "${rb[@]}") us, RPC/s $(median 3 "${rb[@]}")"
