#!/usr/bin/env bash
# flow_steer_veth.sh - a NIC's flow director, emulated on a veth (docs/TRAFFIC.md):
#
#   flow_steer_veth.sh up NS IF N [options]  steer what IF (in namespace NS) sends, so each
#                                            lunar segment arrives on its owner's queue
#                                            at the other end (N lunar workers)
#   flow_steer_veth.sh down NS IF            remove it
#   flow_steer_veth.sh show NS IF            the plan in force and the segments per queue
#   flow_steer_veth.sh demo                  kernel-only experiment (no lunar): TCP
#                                            connections to each port sub-range and to a
#                                            listening port, without and with the
#                                            steering, counted per rx queue at the far
#                                            end; exits 1 if the steering misses
#
# Options of up (the plan, as lunar gets it; ctl/flow_plan.h):
#   --reserved LO-HI     lunar's reserved client range [61440-65535]
#   --listen P[,P...]    ports lunar listens on
#   --rss                spread listening-port connections by the kernel's flow hash
#                        (a NIC's RSS) instead of source port % N
#   --obj PATH           lunar_peer_steer.bpf.o [$LUNAR_PEER_STEER_OBJ, else the
#                        newest build*/bpf/ of this repository]
#
# Why: a veth delivers a frame on the peer's rx queue equal to the tx queue it
# was sent on. lunar's N workers each own one rx queue and the XDP program on
# lunar's side drops a segment that arrives on another worker's queue (it
# cannot be moved between AF_XDP sockets). A real NIC's flow-director rules
# put each segment on the right queue; here a tc BPF program on the kernel
# peer's egress (bpf/lunar_peer_steer.bpf.c) picks the tx queue by the same
# plan. This kernel has no flower classifier and no skbedit action, so the
# program sets the recorded queue (skb->queue_mapping = queue + 1) that the
# kernel's tx queue choice honours when no XPS map is set: `up` clears XPS.
#
# The veth needs N queues on both ends: LUNAR_QUEUES=N scripts/topo.sh veth up.
# `up` replaces an earlier setup on IF; deleting the namespace or the veth
# removes it too. Needs root, tc, bpftool and /usr/bin/python3.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREF=4900 # tc filter priority of lunar's program on the egress hook
PY=/usr/bin/python3

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die() { echo "flow_steer_veth.sh: $*" >&2; exit 1; }
say() { echo "flow_steer_veth.sh: $*"; }

# The newest object named $1 under build*/bpf of this repository.
find_obj() {
	local f best=""
	for f in "$ROOT"/build*/bpf/"$1"; do
		[ -f "$f" ] || continue
		if [ -z "$best" ] || [ "$f" -nt "$best" ]; then best=$f; fi
	done
	[ -n "$best" ] || die "no $1 under $ROOT/build*/bpf: build lunar first (meson setup build && ninja -C build) or pass --obj"
	echo "$best"
}

in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
tx_queues() { in_ns "$1" sh -c "ls -d /sys/class/net/$2/queues/tx-* | wc -l"; }

# Map id of the map named $2 used by program id $1.
map_of_prog() {
	bpftool -j prog show id "$1" | "$PY" -c '
import json, subprocess, sys
for m in json.load(sys.stdin).get("map_ids", []):
    info = json.loads(subprocess.check_output(["bpftool", "-j", "map", "show", "id", str(m)]))
    if info["name"] == sys.argv[1]:
        print(m); break
' "$2"
}

# Little-endian bytes of integer $1 in $2 bytes, as bpftool wants them.
le_bytes() {
	local v=$1 n=$2 out="" i
	for ((i = 0; i < n; i++)); do
		out+="$((v & 255)) "
		v=$((v >> 8))
	done
	echo "$out"
}

# Write the plan into the lunar_cfg and lunar_ports maps of program $1 (the
# layouts of src/ctl/steer_abi.h: struct lunar_steer_cfg {u32 valid; u16 lo,
# hi, n_queues, listen; u32 ip (0: any address)}, one u32 per port).
write_plan() { # PROG_ID LO HI N LISTEN_MODE PORTS
	local id=$1 lo=$2 hi=$3 n=$4 mode=$5 ports=$6 cfg pmap p
	cfg=$(map_of_prog "$id" lunar_cfg)
	pmap=$(map_of_prog "$id" lunar_ports)
	[ -n "$cfg" ] && [ -n "$pmap" ] || die "program $id has no lunar_cfg/lunar_ports map: not lunar's object?"
	# shellcheck disable=SC2046
	bpftool map update id "$cfg" key 0 0 0 0 value $(le_bytes 1 4) $(le_bytes "$lo" 2) \
		$(le_bytes "$hi" 2) $(le_bytes "$n" 2) $(le_bytes "$mode" 2) $(le_bytes 0 4)
	for p in ${ports//,/ }; do
		# shellcheck disable=SC2046
		bpftool map update id "$pmap" key $(le_bytes "$p" 4) value 1 0 0 0
	done
}

# Program id of our filter on IF's egress, or nothing.
peer_prog_id() {
	in_ns "$1" tc filter show dev "$2" egress pref "$PREF" 2>/dev/null |
		grep -oE ' id [0-9]+' | awk '{print $2}' | head -1
}

# Sum of a PERCPU_ARRAY map's values, one line "key sum" per key.
percpu_sums() {
	bpftool -j map dump id "$1" | "$PY" -c '
import json, sys
for e in json.load(sys.stdin):
    k = int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little") if isinstance(e["key"], list) else int(e["key"])
    vals = e.get("values", [])
    total = 0
    for v in vals:
        x = v["value"]
        total += int.from_bytes(bytes(int(b, 16) for b in x), "little") if isinstance(x, list) else int(x)
    print(k, total)
'
}

parse_plan() { # sets LO HI PORTS MODE OBJ from the options
	LO=61440 HI=65535 PORTS="" MODE=0 OBJ=${LUNAR_PEER_STEER_OBJ:-}
	while [ $# -gt 0 ]; do
		case "$1" in
		--reserved)
			[[ "${2:-}" =~ ^([0-9]+)-([0-9]+)$ ]] || die "--reserved wants LO-HI, got '${2:-}'"
			LO=${BASH_REMATCH[1]} HI=${BASH_REMATCH[2]}
			shift 2 ;;
		--listen)
			[[ "${2:-}" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--listen wants P[,P...], got '${2:-}'"
			PORTS=$2
			shift 2 ;;
		--rss) MODE=1; shift ;;
		--obj) OBJ=${2:-}; shift 2 ;;
		*) die "unknown option '$1' (try --help)" ;;
		esac
	done
	local p
	for p in $LO $HI ${PORTS//,/ }; do
		[ "$p" -le 65535 ] || die "port $p is above 65535"
	done
}

cmd_up() {
	[ $# -ge 3 ] || die "usage: flow_steer_veth.sh up NS IF N [options]"
	local ns=$1 ifname=$2 n=$3 ntx id q
	shift 3
	parse_plan "$@"
	[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "N must be 1..64 workers, got '$n'"
	# The same check as flow_plan_init(): every worker keeps 16 ports of its own.
	[ "$LO" -le "$HI" ] && [ $((HI - LO + 1)) -ge $((16 * n * n)) ] ||
		die "reserved range $LO-$HI is too small for $n workers: each needs at least $((16 * n)) ports"
	[ -n "$OBJ" ] || OBJ=$(find_obj lunar_peer_steer.bpf.o)
	[ -r "$OBJ" ] || die "cannot read $OBJ"
	in_ns "$ns" ip link show dev "$ifname" >/dev/null 2>&1 || die "no interface $ifname in namespace $ns"
	ntx=$(tx_queues "$ns" "$ifname")
	[ "$ntx" -ge "$n" ] || die "$ns/$ifname has $ntx tx queue(s), the plan needs $n: LUNAR_QUEUES=$n scripts/topo.sh veth up"

	case "$(in_ns "$ns" tc qdisc show dev "$ifname")" in
	*clsact*) ;;
	*) in_ns "$ns" tc qdisc add dev "$ifname" clsact ;;
	esac
	in_ns "$ns" tc filter del dev "$ifname" egress pref "$PREF" 2>/dev/null || true
	in_ns "$ns" tc filter add dev "$ifname" egress pref "$PREF" handle 1 bpf da obj "$OBJ" sec tc
	id=$(peer_prog_id "$ns" "$ifname")
	[ -n "$id" ] || die "the tc filter on $ns/$ifname did not load"
	write_plan "$id" "$LO" "$HI" "$n" "$MODE" "$PORTS"
	# No XPS map, so the recorded queue decides (see the header).
	for ((q = 0; q < ntx; q++)); do
		in_ns "$ns" sh -c "echo 0 > /sys/class/net/$ifname/queues/tx-$q/xps_cpus" 2>/dev/null || true
		in_ns "$ns" sh -c "echo 0 > /sys/class/net/$ifname/queues/tx-$q/xps_rxqs" 2>/dev/null || true
	done
	say "$ns/$ifname egress: program $id steers $LO-$HI in $n sub-ranges${PORTS:+, listening ports $PORTS by $([ "$MODE" = 1 ] && echo "RSS (left to the kernel's hash)" || echo "source port % $n")}"
}

cmd_down() {
	[ $# -eq 2 ] || die "usage: flow_steer_veth.sh down NS IF"
	local ns=$1 ifname=$2
	if [ -e "/run/netns/$ns" ] && in_ns "$ns" ip link show dev "$ifname" >/dev/null 2>&1; then
		in_ns "$ns" tc filter del dev "$ifname" egress pref "$PREF" 2>/dev/null || true
		# The clsact qdisc goes too unless someone else has filters on it.
		if [ -z "$(in_ns "$ns" tc filter show dev "$ifname" egress)$(in_ns "$ns" tc filter show dev "$ifname" ingress)" ]; then
			in_ns "$ns" tc qdisc del dev "$ifname" clsact 2>/dev/null || true
		fi
	fi
	say "$ns/$ifname: no steering"
}

cmd_show() {
	[ $# -eq 2 ] || die "usage: flow_steer_veth.sh show NS IF"
	local ns=$1 ifname=$2 id stats
	id=$(peer_prog_id "$ns" "$ifname")
	[ -n "$id" ] || { say "$ns/$ifname: no steering"; return 0; }
	echo "$ns/$ifname egress: program $id"
	bpftool -j map lookup id "$(map_of_prog "$id" lunar_cfg)" key 0 0 0 0 | "$PY" -c '
import json, struct, sys
e = json.load(sys.stdin)
v = e.get("value", e.get("formatted", {}).get("value"))
b = bytes(int(x, 16) for x in v) if isinstance(v, list) else None
if b is None:
    print("  config:", v)
else:
    valid, lo, hi, n, mode, ip = struct.unpack("<IHHHHI", b)
    print("  config: reserved %d-%d, %d worker(s), listening ports by %s%s" % (lo, hi, n,
          "RSS" if mode == 1 else "source port %% %d" % max(n, 1), "" if valid else " (not written: defaults)"))
'
	stats=$(map_of_prog "$id" lunar_peer_cnt)
	percpu_sums "$stats" | awk '$2 > 0 { if ($1 == 64) print "  left alone: " $2; else print "  to queue " $1 ": " $2 }'
}

# ---- demo: the kernel-only experiment --------------------------------------

# Counters of the XDP program at B per rx queue: "q redirect_failed misqueued"
# (steer_abi.h: key = queue * LUNAR_STEER_NSTATS + counter; 2 = lunar's on
# its owner queue, no socket; 3 = lunar's on another queue, dropped). The row
# width is read from steer_abi.h, so a new counter cannot shift these.
XDP_NSTATS=$(sed -n 's/^[[:space:]]*LUNAR_STEER_NSTATS = \([0-9]*\),.*/\1/p' "$ROOT/src/ctl/steer_abi.h")
: "${XDP_NSTATS:?cannot read LUNAR_STEER_NSTATS from $ROOT/src/ctl/steer_abi.h}"
xdp_queue_counts() { # XDP_PROG_ID N
	percpu_sums "$(map_of_prog "$1" lunar_stats)" | awk -v n="$2" -v w="$XDP_NSTATS" '
		{ q = int($1 / w); c = $1 % w; if (c == 2) ok[q] = $2; if (c == 3) mis[q] = $2 }
		END { for (q = 0; q < n; q++) print q, ok[q] + 0, mis[q] + 0 }'
}

# One group of connections: $4 is "client" (B connects from its reserved
# ports to A) or "server" (A connects to B's listening port from chosen
# source ports). Prints per queue what arrived and returns the number of
# connections that completed.
demo_group() { # LABEL XDP_ID N KIND PORTS...
	local label=$1 xid=$2 n=$3 kind=$4 before after ok
	shift 4
	before=$(xdp_queue_counts "$xid" "$n")
	if [ "$kind" = client ]; then
		ok=$(in_ns "$DEMO_B" "$PY" "$DEMO_PY" connect 10.79.0.2 10.79.0.1 9000 "$@")
	else
		ok=$(in_ns "$DEMO_A" "$PY" "$DEMO_PY" connect 10.79.0.1 10.79.0.2 8080 "$@")
	fi
	after=$(xdp_queue_counts "$xid" "$n")
	paste -d' ' <(echo "$before") <(echo "$after") | awk -v l="$label" -v ok="$ok" -v t=$# '
		{ d_ok = $5 - $2; d_mis = $6 - $3
		  s = s sprintf(" q%d:%d", $1, d_ok); if (d_mis) s = s sprintf("(+%d misqueued)", d_mis)
		  mis += d_mis }
		END { printf "  %-34s connections %d/%d, lunar segments on queue%s\n", l, ok, t, s
		      print mis > "/dev/stderr" }' 2>>"$DEMO_OUT/misqueued"
	echo "$ok" >>"$DEMO_OUT/ok"
}

# RUN (0, 1) shifts every source port: a connection of the first run may
# sit in TIME-WAIT on the client's side, and the kernel refuses to connect
# the same 4-tuple again (tcp_tw_reuse is for loopback only), which would
# count as a steering miss. Residues mod N stay the same.
demo_run() { # XDP_ID N LO HI RUN
	local xid=$1 n=$2 lo=$3 hi=$4 run=$5 q qlo first size ports
	size=$(((hi - lo + 1) / n))
	for ((q = 0; q < n; q++)); do
		qlo=$((lo + q * size))
		first=$((qlo + 16 + 2 * q + 8 * run))
		ports="$first $((first + 84)) $((first + 184))"
		demo_group "B client, ports $qlo-$((q + 1 == n ? hi : qlo + size - 1))" "$xid" "$n" client $ports
	done
	for ((q = 0; q < n; q++)); do
		first=$((40000 + 3 * n * run + q))
		ports="$first $((first + n)) $((first + 2 * n))"
		demo_group "A client to B:8080, sport%$n=$q" "$xid" "$n" server $ports
	done
}

cmd_demo() {
	local n=4 lo=61440 hi=65535 xobj pobj xid misq okc total
	xobj=${LUNAR_STEER_OBJ:-$(find_obj lunar_steer.bpf.o)}
	pobj=${LUNAR_PEER_STEER_OBJ:-$(find_obj lunar_peer_steer.bpf.o)}
	DEMO_A=lunar-fsa-$$ DEMO_B=lunar-fsb-$$
	DEMO_OUT=$(mktemp -d /tmp/lunar-flow-demo.XXXXXX)
	DEMO_PY=$DEMO_OUT/tcp.py
	trap 'ip netns pids $DEMO_A 2>/dev/null | xargs -r kill 2>/dev/null; ip netns pids $DEMO_B 2>/dev/null | xargs -r kill 2>/dev/null; ip netns del $DEMO_A 2>/dev/null; ip netns del $DEMO_B 2>/dev/null; rm -rf "$DEMO_OUT"' EXIT
	cat >"$DEMO_PY" <<-'EOF'
		# connect SRC DST DPORT SPORT...: one TCP connection per source port, 1 s each;
		# prints how many completed. listen IP PORT: accept and close, forever.
		import socket, sys
		if sys.argv[1] == "listen":
		    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
		    s.bind((sys.argv[2], int(sys.argv[3]))); s.listen(64); print("ready", flush=True)
		    while True:
		        c, _ = s.accept(); c.close()
		ok = 0
		for sport in sys.argv[5:]:
		    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
		    s.settimeout(1.0)
		    try:
		        s.bind((sys.argv[2], int(sport))); s.connect((sys.argv[3], int(sys.argv[4]))); ok += 1
		    except OSError:
		        pass
		    s.close()
		print(ok)
	EOF
	ip netns add "$DEMO_A"
	ip netns add "$DEMO_B"
	ip -n "$DEMO_A" link set lo up
	ip -n "$DEMO_B" link set lo up
	ip -n "$DEMO_A" link add name fsa numtxqueues $n numrxqueues $n type veth \
		peer name fsb netns "$DEMO_B" numtxqueues $n numrxqueues $n
	ip -n "$DEMO_A" addr add 10.79.0.1/24 dev fsa
	ip -n "$DEMO_B" addr add 10.79.0.2/24 dev fsb
	in_ns "$DEMO_A" ethtool -K fsa tx off >/dev/null
	in_ns "$DEMO_B" ethtool -K fsb tx off >/dev/null
	ip -n "$DEMO_A" link set dev fsa up
	ip -n "$DEMO_B" link set dev fsb up
	# lunar's side, without lunar: its XDP program with the plan, no AF_XDP
	# socket, so a segment on its owner queue passes to B's kernel (counted
	# redirect_failed) and one on another queue is dropped (misqueued).
	ip -n "$DEMO_B" link set dev fsb xdp obj "$xobj" sec xdp
	xid=$(ip -n "$DEMO_B" -d link show dev fsb | grep -oE 'prog/xdp id [0-9]+' | awk '{print $3}')
	write_plan "$xid" $lo $hi $n 0 8080
	in_ns "$DEMO_A" "$PY" "$DEMO_PY" listen 10.79.0.1 9000 >"$DEMO_OUT/a.log" 2>&1 &
	in_ns "$DEMO_B" "$PY" "$DEMO_PY" listen 10.79.0.2 8080 >"$DEMO_OUT/b.log" 2>&1 &
	for _ in $(seq 50); do
		grep -q ready "$DEMO_OUT/a.log" && grep -q ready "$DEMO_OUT/b.log" && break
		sleep 0.1
	done
	in_ns "$DEMO_A" ping -c 1 -W 2 10.79.0.2 >/dev/null # neighbours first
	echo "$n queues, XDP program $xid on $DEMO_B/fsb with the plan: $n workers, reserved $lo-$hi, listening port 8080 by source port % $n"
	echo
	echo "1. without steering: $DEMO_A's kernel picks fsa's tx queue by its flow hash"
	demo_run "$xid" $n $lo $hi 0
	echo
	"$0" up "$DEMO_A" fsa $n --reserved $lo-$hi --listen 8080 --obj "$pobj" >/dev/null
	: >"$DEMO_OUT/misqueued"
	: >"$DEMO_OUT/ok"
	echo "2. with steering (flow_steer_veth.sh up $DEMO_A fsa $n --listen 8080)"
	demo_run "$xid" $n $lo $hi 1
	"$0" show "$DEMO_A" fsa | sed 's/^/   /'
	echo
	echo "ethtool -S fsb (rx packets per queue through XDP, all runs):"
	in_ns "$DEMO_B" ethtool -S fsb | grep -E 'rx_queue_[0-9]+_xdp_(packets|drops):' | paste - - | sed 's/^ */  /'
	misq=$(awk '{s += $1} END {print s + 0}' "$DEMO_OUT/misqueued")
	okc=$(awk '{s += $1} END {print s + 0}' "$DEMO_OUT/ok")
	total=$((2 * n * 3))
	if [ "$misq" -eq 0 ] && [ "$okc" -eq "$total" ]; then
		echo "with steering: $okc/$total connections, 0 segments misqueued"
		return 0
	fi
	echo "with steering: $okc/$total connections, $misq segments misqueued: the steering missed"
	return 1
}

[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in
-h | --help | help) usage; exit 0 ;;
esac
[ "$(id -u)" = 0 ] || die "run as root (namespaces, tc, bpftool)"
command -v bpftool >/dev/null || die "bpftool not found: apt-get install bpftool"
cmd=$1
shift
case "$cmd" in
up) cmd_up "$@" ;;
down) cmd_down "$@" ;;
show) cmd_show "$@" ;;
demo) cmd_demo "$@" ;;
*) die "unknown command '$cmd' (try --help)" ;;
esac
