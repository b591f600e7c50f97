#!/usr/bin/env bash
# rt_vs_raw.sh - lunar's 4 KiB RPC round trip against raw memif's (knb
# --stack raw: the same frames, no stack), interleaved round by round so
# that the VM's slow phases hit every series alike: per round raw memif and
# lunar (checksummed and trusted) at each MTU given. Prints each run's
# client p50 / p99 (us) and RPC/s. Needs /run/lunar (scripts/topo.sh memif
# up) and nothing else on CPUs 0-1 (client on core 0, server on core 1).
#
# usage: bench/rt_vs_raw.sh [ROUNDS [MTU...]]   # 3 rounds, MTUs 1500 9000
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
knb=${KNB:-$here/build/tools/knb/knb}
rounds=${1:-3}
shift || true
mtus=("$@")
[ ${#mtus[@]} -gt 0 ] || mtus=(1500 9000)
[ -x "$knb" ] || { echo "rt_vs_raw.sh: no $knb; build it first" >&2; exit 2; }
sock=/run/lunar/rt-vs-raw.sock
log=$(mktemp -d /tmp/lunar-rtraw.XXXXXX)
srv=
cleanup() {
	[ -n "$srv" ] && kill -INT "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
	rm -rf "$log"
}
trap cleanup EXIT

run() { # STACK MTU [knb arguments]: one pair; prints its line
	local stack=$1 mtu=$2
	shift 2
	"$knb" server --stack "$stack" --port "memif:$sock:server" --ip 192.168.77.2/24 --mtu "$mtu" \
		--listen 192.168.77.2:7000 --core 1 "$@" >"$log/srv" 2>&1 &
	srv=$!
	for _ in $(seq 50); do grep -q ready "$log/srv" && break; sleep 0.1; done
	"$knb" client --stack "$stack" --port "memif:$sock:client" --ip 192.168.77.1/24 --mtu "$mtu" \
		--connect 192.168.77.2:7000 --pattern rpc --msg-size 4096 --iodepth 1 --duration 2 \
		--warmup 0.5 --core 0 "$@" >"$log/cli" 2>&1
	kill -INT "$srv"
	wait "$srv"
	srv=
	printf '%-32s p50 %5s  p99 %5s  %8s RPC/s\n' "$stack, MTU $mtu${*:+ $*}" \
		"$(grep -o 'p50 [0-9.]*' "$log/cli" | head -1 | cut -d' ' -f2)" \
		"$(grep -o 'p99 [0-9.]*' "$log/cli" | head -1 | cut -d' ' -f2)" \
		"$(grep -o '[0-9]* RPC/s' "$log/cli" | head -1 | cut -d' ' -f1)"
}
for r in $(seq "$rounds"); do
	echo "-- round $r"
	for mtu in "${mtus[@]}"; do
		run raw "$mtu"
		run lunar "$mtu"
		run lunar "$mtu" --trust-link
	done
done
