#!/usr/bin/env bash
# cg_request.sh - the instructions lunar's stack spends on one 4 KiB RPC
# request, counted by callgrind: repeatable where wall time is not (this
# VM has no PMU, and its memif has a slow mode; docs/benchmarks.md).
#
# One side of a knb RPC pair (memif, --trust-link) runs under callgrind,
# the server by default, counting only netif_input (parsing, TCP input,
# inline callbacks) and the steps of tcp_stack_poll() that do a burst's
# work: burst_deliver() (inline mode's callback for the burst's last run
# of segments), dispatch() (batch mode's callbacks) and burst_end() (each
# connection's output, framed; the client's next request starts in its
# callback, so it is counted there), and the work left until after the
# transmit (tcp_stack_after_tx(), zbuf_defer_end()), which is also given
# apart: what a reply does not wait for. Neither the memif PMD, the port's transmit and
# frees, nor the idle loop is counted. The other side runs natively; the
# client drives the pair for 3 s; the total is divided by the requests
# the counted side answered or completed. The same build gives the same
# figure to within about 1% (the share of bursts of each size varies).
#
#   sudo bench/cg_request.sh [API [MTU [IODEPTH [SIDE]]]]  # inline 1500 1 server
#
# CG_TRUST=0 drops --trust-link on both sides (software checksums).
#
# Needs a build with symbols and without link-time optimisation (which
# inlines the counted functions into their callers, so callgrind's toggles
# miss most of the work): meson setup build-prof --buildtype=release
# -Db_lto=false -Dc_args=-g && ninja -C build-prof tools/knb/knb (KNB_PROF
# to override; KNB for the uncounted side, default build/tools/knb/knb).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
api=${1:-inline} mtu=${2:-1500} depth=${3:-1} side=${4:-server}
prof=${KNB_PROF:-$here/build-prof/tools/knb/knb}
knb=${KNB:-$here/build/tools/knb/knb}
case "$api" in inline | batch) ;; *) echo "cg_request.sh: API is inline or batch (copy mode works outside the counted steps), not '$api'" >&2; exit 2 ;; esac
case "$side" in server | client) ;; *) echo "cg_request.sh: SIDE is server or client, not '$side'" >&2; exit 2 ;; esac
for b in "$prof" "$knb"; do
	[ -x "$b" ] || { echo "cg_request.sh: no $b; build it first (see the header)" >&2; exit 2; }
done
command -v valgrind >/dev/null || { echo "cg_request.sh: valgrind is not installed" >&2; exit 2; }
out=$(mktemp -d /tmp/lunar-cg.XXXXXX)
sock=/run/lunar/cg-request.sock
mkdir -p /run/lunar
rm -f "$sock"
srv=
cleanup() {
	[ -n "$srv" ] && kill -INT "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
	rm -f "$sock"
}
trap cleanup EXIT
# EAL cannot reserve hugepage address space under valgrind: no hugepages.
counted=(env LUNAR_EAL_ARGS="--no-huge -m 512" valgrind --tool=callgrind --fair-sched=yes --collect-atstart=no
	--toggle-collect=netif_input --toggle-collect=burst_deliver --toggle-collect=dispatch
	--toggle-collect=burst_end --toggle-collect=tcp_stack_after_tx --toggle-collect=zbuf_defer_end
	--callgrind-out-file="$out/callgrind.out" "$prof")
trust=(--trust-link)
[ "${CG_TRUST:-1}" = 0 ] && trust=()
server_args=(server --stack lunar --api "$api" "${trust[@]}" --mtu "$mtu"
	--port "memif:$sock:server" --ip 192.168.77.2/24 --listen 192.168.77.2:7000 --core 1)
client_args=(client --stack lunar --api "$api" "${trust[@]}" --mtu "$mtu" --port "memif:$sock:client"
	--ip 192.168.77.1/24 --connect 192.168.77.2:7000 --core 0 --connect-timeout 60
	--iodepth "$depth" --duration 3 --warmup 0.5)
if [ "$side" = server ]; then
	"${counted[@]}" "${server_args[@]}" >"$out/server.log" 2>&1 &
else
	"$knb" "${server_args[@]}" >"$out/server.log" 2>&1 &
fi
srv=$!
for _ in $(seq 100); do grep -q ready "$out/server.log" && break; sleep 0.1; done
grep -q ready "$out/server.log" || { cat "$out/server.log" >&2; exit 1; }
if [ "$side" = server ]; then
	"$knb" "${client_args[@]}" >"$out/client.log" 2>&1 || { cat "$out/client.log" >&2; exit 1; }
else
	"${counted[@]}" "${client_args[@]}" >"$out/client.log" 2>&1 || { cat "$out/client.log" >&2; exit 1; }
fi
kill -INT "$srv"
wait "$srv" || true
srv=
requests=$(grep -o 'requests [0-9]*' "$out/$side.log" | tail -1 | awk '{print $2}')
total=$(callgrind_annotate "$out/callgrind.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
# callgrind_annotate may list a function twice (absolute and relative file names): the larger.
late=$(cd "$out" && callgrind_annotate --inclusive=yes callgrind.out 2>/dev/null |
	awk 'match($0, /:(tcp_stack_after_tx|zbuf_defer_end)( |$)/) {
		f = substr($0, RSTART + 1, RLENGTH - 1); gsub(" ", "", f); gsub(",", "", $1)
		if ($1 + 0 > max[f]) max[f] = $1 + 0 }
	END {for (f in max) n += max[f]; print n + 0}')
[ -n "$requests" ] && [ "$requests" -gt 0 ] && [ -n "$total" ] ||
	{ echo "cg_request.sh: no requests counted (see $out)" >&2; exit 1; }
echo "$side, api $api mtu $mtu iodepth $depth${CG_TRUST:+ trust ${CG_TRUST}}: $requests requests, $((total / requests)) instructions a request, $(((total - late) / requests)) before the transmit"
echo "(profile: callgrind_annotate $out/callgrind.out)"
