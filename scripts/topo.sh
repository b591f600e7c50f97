#!/usr/bin/env bash
# topo.sh - the test topologies lunar runs on (no physical NIC here):
#
#   topo.sh veth up|down     lunar-a (veth-a 10.77.0.1/24) <-> lunar-b (veth-b 10.77.0.2/24)
#   topo.sh arb up|down      lunar-a (10.78.1.1/24) - lunar-r (router) - lunar-b (10.78.2.2/24)
#   topo.sh arb loss <pct>   drop pct% (e.g. 5 or 0.1) of packets forwarded by lunar-r at random
#   topo.sh arb mark <pct>   mark pct% of the ECN-capable packets lunar-r forwards CE (RFC 3168)
#   topo.sh arb unreach <pct>  answer pct% of the packets towards lunar-a with ICMP host
#                            unreachable instead of forwarding them (100: a path that is down)
#   topo.sh arb ecnsyn <pct> drop pct% of the ECN-setup SYNs (ECE and CWR) lunar-r forwards,
#                            as a middlebox that blocks them (RFC 3168 6.1.1.1)
#                            (nftables; 0 removes the rule; no argument shows it)
#   topo.sh memif up|down    run directory for memif sockets (/run/lunar); removes stale sockets
#   topo.sh down-all         everything above, plus XDP programs and processes left inside
#   topo.sh status           what exists now
#
# Every command is idempotent: `up` twice keeps one topology, `down` on
# nothing succeeds. `up` repairs a half-built topology (e.g. after a crash).
# veth and arb may be up together: they share the namespaces lunar-a and
# lunar-b, which are deleted when the last topology using them goes down.
#
# Environment (defaults in brackets):
#   LUNAR_NS_A [lunar-a] LUNAR_NS_B [lunar-b] LUNAR_NS_R [lunar-r]
#   LUNAR_MTU [1500]                 MTU of every link created
#   LUNAR_QUEUES [1]                 tx and rx queues of both ends of every veth
#                                    (1..64): one per lunar worker; a pair with
#                                    another count is made again. A kernel peer
#                                    then needs scripts/flow_steer_veth.sh to
#                                    send each segment on its owner's queue
#   LUNAR_VETH_A [veth-a] LUNAR_VETH_A_IP [10.77.0.1/24]
#   LUNAR_VETH_B [veth-b] LUNAR_VETH_B_IP [10.77.0.2/24]
#   LUNAR_ARB_A [arb-a] LUNAR_ARB_A_IP [10.78.1.1/24]     in lunar-a
#   LUNAR_ARB_RA [arb-ra] LUNAR_ARB_RA_IP [10.78.1.254/24] in lunar-r, towards A
#   LUNAR_ARB_RB [arb-rb] LUNAR_ARB_RB_IP [10.78.2.254/24] in lunar-r, towards B
#   LUNAR_ARB_B [arb-b] LUNAR_ARB_B_IP [10.78.2.2/24]     in lunar-b
#   LUNAR_RUN_DIR [/run/lunar]       memif socket directory
#
# Checksums: with transmit checksum offload on (the veth default) the kernel
# hands its veth peer TCP frames whose checksum is not filled in; an AF_XDP
# reader (lunar) would see wrong checksums. Real NICs do not do this. So the
# offload is turned off (`ethtool -K <if> tx off`) on the kernel's side of
# every veth. Which side is the kernel's depends on the test (lunar may run
# on either end of veth, on A or B in arb; a router forwards frames with the
# sender's unfinished checksum), so it is turned off on every end: on lunar's
# own end it costs nothing, because AF_XDP transmit bypasses the offload.
set -euo pipefail

NS_A=${LUNAR_NS_A:-lunar-a}
NS_B=${LUNAR_NS_B:-lunar-b}
NS_R=${LUNAR_NS_R:-lunar-r}
MTU=${LUNAR_MTU:-1500}
QUEUES=${LUNAR_QUEUES:-1}
VETH_A=${LUNAR_VETH_A:-veth-a}
VETH_B=${LUNAR_VETH_B:-veth-b}
VETH_A_IP=${LUNAR_VETH_A_IP:-10.77.0.1/24}
VETH_B_IP=${LUNAR_VETH_B_IP:-10.77.0.2/24}
ARB_A=${LUNAR_ARB_A:-arb-a}
ARB_RA=${LUNAR_ARB_RA:-arb-ra}
ARB_RB=${LUNAR_ARB_RB:-arb-rb}
ARB_B=${LUNAR_ARB_B:-arb-b}
ARB_A_IP=${LUNAR_ARB_A_IP:-10.78.1.1/24}
ARB_RA_IP=${LUNAR_ARB_RA_IP:-10.78.1.254/24}
ARB_RB_IP=${LUNAR_ARB_RB_IP:-10.78.2.254/24}
ARB_B_IP=${LUNAR_ARB_B_IP:-10.78.2.2/24}
RUN_DIR=${LUNAR_RUN_DIR:-/run/lunar}
LOSS_TABLE=lunar_loss
MARK_TABLE=lunar_mark
UNREACH_TABLE=lunar_unreach
ECNSYN_TABLE=lunar_ecnsyn

# The header comment is the help text.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die() { echo "topo.sh: $*" >&2; exit 1; }
say() { echo "topo.sh: $*"; }

ns_exists() { [ -e "/run/netns/$1" ]; }
# The router namespace, which the arb rules need: there, or die saying how.
need_router() { ns_exists "$NS_R" || die "router namespace $NS_R does not exist; run 'topo.sh arb up' first"; }
link_exists() { ns_exists "$1" && ip -n "$1" link show dev "$2" >/dev/null 2>&1; }
addr_of() { echo "${1%/*}"; }

ensure_ns() {
	local ns=$1
	if ! ns_exists "$ns"; then
		ip netns add "$ns"
		say "created namespace $ns"
	fi
	ip -n "$ns" link set lo up
}

# Number of rx queues of $2 in namespace $1.
rx_queues() { ip netns exec "$1" sh -c "ls -d /sys/class/net/$2/queues/rx-* | wc -l"; }

# A veth pair $2 (in $1) <-> $4 (in $3) with $QUEUES tx and rx queues on
# each end (a veth delivers on the peer's rx queue equal to the tx queue it
# sent on). A half-built pair (one end missing, e.g. after a crash) or one
# with another queue count is deleted and made again. "name" and "dev"
# are spelled out: `ip link` would read a name like "ma" as "master".
ensure_veth() {
	local ns1=$1 if1=$2 ns2=$3 if2=$4
	if link_exists "$ns1" "$if1" && link_exists "$ns2" "$if2" &&
		[ "$(rx_queues "$ns1" "$if1")" = "$QUEUES" ] &&
		[ "$(rx_queues "$ns2" "$if2")" = "$QUEUES" ]; then
		return
	fi
	ip -n "$ns1" link del dev "$if1" 2>/dev/null || true
	ip -n "$ns2" link del dev "$if2" 2>/dev/null || true
	ip -n "$ns1" link add name "$if1" numtxqueues "$QUEUES" numrxqueues "$QUEUES" \
		type veth peer name "$if2" netns "$ns2" numtxqueues "$QUEUES" numrxqueues "$QUEUES"
	say "created veth $ns1/$if1 <-> $ns2/$if2, $QUEUES queue(s)"
}

# Address, MTU, checksum offload off (see the header), up.
config_if() {
	local ns=$1 ifname=$2 cidr=$3
	ip -n "$ns" link set dev "$ifname" mtu "$MTU"
	ip -n "$ns" addr replace "$cidr" dev "$ifname"
	ip netns exec "$ns" ethtool -K "$ifname" tx off >/dev/null
	ip -n "$ns" link set dev "$ifname" up
}

# Wait (bounded, 3 s) until the kernel reports carrier on each named
# "ns/if": link-state changes go through linkwatch, which may delay them up
# to a second, and until then the device drops what it transmits. Callers
# that start traffic right after `up` would otherwise lose their first
# packets.
wait_carrier() {
	local spec ns ifname
	for _ in $(seq 30); do
		local all=1
		for spec in "$@"; do
			ns=${spec%%/*} ifname=${spec#*/}
			[ "$(ip netns exec "$ns" cat "/sys/class/net/$ifname/carrier" 2>/dev/null)" = 1 ] &&
				[ "$(ip netns exec "$ns" cat "/sys/class/net/$ifname/operstate" 2>/dev/null)" = up ] || all=0
		done
		[ "$all" = 1 ] && return 0
		sleep 0.1
	done
	echo "topo.sh: warning: no carrier yet on $* after 3 s" >&2
}

# Remove a veth pair (deleting one end deletes both), its XDP program first
# so a DPDK process still holding it sees a clean detach.
del_veth() {
	local ns=$1 ifname=$2
	if link_exists "$ns" "$ifname"; then
		ip -n "$ns" link set dev "$ifname" xdp off 2>/dev/null || true
		ip -n "$ns" link del "$ifname"
		say "deleted $ns/$ifname and its peer"
	fi
}

# Kill what still runs inside $1 (TERM, then KILL), never this script.
kill_ns_pids() {
	local ns=$1 pids p
	ns_exists "$ns" || return 0
	pids=$(ip netns pids "$ns" 2>/dev/null | grep -vx "$$" || true)
	[ -n "$pids" ] || return 0
	say "stopping processes in $ns: $(echo $pids)"
	kill -TERM $pids 2>/dev/null || true
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		pids=$(ip netns pids "$ns" 2>/dev/null | grep -vx "$$" || true)
		[ -n "$pids" ] || return 0
		sleep 0.2
	done
	kill -KILL $pids 2>/dev/null || true
}

# Delete namespace $1 once no interface but lo is left in it.
del_ns_if_empty() {
	local ns=$1
	ns_exists "$ns" || return 0
	if ip -n "$ns" -o link show | awk -F': ' '{print $2}' | grep -qvx lo; then
		return 0
	fi
	kill_ns_pids "$ns"
	ip netns del "$ns"
	say "deleted namespace $ns"
}

del_ns() {
	local ns=$1 ifname
	ns_exists "$ns" || return 0
	# XDP programs go first: they may hold AF_XDP sockets of killed processes.
	for ifname in $(ip -n "$ns" -o link show | awk -F': ' '{print $2}' | cut -d@ -f1); do
		[ "$ifname" = lo ] && continue
		ip -n "$ns" link set dev "$ifname" xdp off 2>/dev/null || true
	done
	kill_ns_pids "$ns"
	ip netns del "$ns"
	say "deleted namespace $ns"
}

show_ns() {
	local ns=$1 line ifname nq
	ns_exists "$ns" || return 0
	echo "namespace $ns:"
	ip -n "$ns" -br addr show | grep -v '^lo ' | sed 's/^/  /' || true
	for ifname in $(ip -n "$ns" -o link show | awk -F': ' '{print $2}' | cut -d@ -f1); do
		[ "$ifname" = lo ] && continue
		nq=$(rx_queues "$ns" "$ifname" 2>/dev/null || echo 1)
		if [ "$nq" -gt 1 ]; then echo "  $ifname: $nq rx/tx queues"; fi
	done
	# `ip -o link` puts each link, its XDP program included, on one line.
	ip -n "$ns" -o link show | while read -r line; do
		if [[ "$line" =~ prog/xdp[a-z]*\ id\ ([0-9]+) ]]; then
			echo "  xdp program id ${BASH_REMATCH[1]} on $(awk -F': ' '{print $2}' <<<"$line" | cut -d@ -f1)"
		fi
	done
	ip -n "$ns" route show | sed 's/^/  route: /'
}

veth_up() {
	ensure_ns "$NS_A"
	ensure_ns "$NS_B"
	ensure_veth "$NS_A" "$VETH_A" "$NS_B" "$VETH_B"
	config_if "$NS_A" "$VETH_A" "$VETH_A_IP"
	config_if "$NS_B" "$VETH_B" "$VETH_B_IP"
	wait_carrier "$NS_A/$VETH_A" "$NS_B/$VETH_B"
	say "veth: $NS_A/$VETH_A $VETH_A_IP <-> $NS_B/$VETH_B $VETH_B_IP, mtu $MTU, $QUEUES queue(s), tx checksum offload off"
}

veth_down() {
	del_veth "$NS_A" "$VETH_A"
	del_veth "$NS_B" "$VETH_B"
	del_ns_if_empty "$NS_A"
	del_ns_if_empty "$NS_B"
	say "veth: down"
}

arb_up() {
	ensure_ns "$NS_A"
	ensure_ns "$NS_B"
	ensure_ns "$NS_R"
	ensure_veth "$NS_A" "$ARB_A" "$NS_R" "$ARB_RA"
	ensure_veth "$NS_B" "$ARB_B" "$NS_R" "$ARB_RB"
	config_if "$NS_A" "$ARB_A" "$ARB_A_IP"
	config_if "$NS_R" "$ARB_RA" "$ARB_RA_IP"
	config_if "$NS_R" "$ARB_RB" "$ARB_RB_IP"
	config_if "$NS_B" "$ARB_B" "$ARB_B_IP"
	ip netns exec "$NS_R" sysctl -qw net.ipv4.ip_forward=1
	wait_carrier "$NS_A/$ARB_A" "$NS_R/$ARB_RA" "$NS_R/$ARB_RB" "$NS_B/$ARB_B"
	# A default route on each host via its router address. `replace`
	# keeps a second `up` from failing on the existing route.
	ip -n "$NS_A" route replace default via "$(addr_of "$ARB_RA_IP")" dev "$ARB_A"
	ip -n "$NS_B" route replace default via "$(addr_of "$ARB_RB_IP")" dev "$ARB_B"
	say "arb: $NS_A/$ARB_A $ARB_A_IP -> $NS_R ($ARB_RA $ARB_RA_IP | $ARB_RB $ARB_RB_IP, forwarding) <- $NS_B/$ARB_B $ARB_B_IP, mtu $MTU, tx checksum offload off"
}

arb_down() {
	del_veth "$NS_A" "$ARB_A"
	del_veth "$NS_B" "$ARB_B"
	del_ns "$NS_R"
	del_ns_if_empty "$NS_A"
	del_ns_if_empty "$NS_B"
	say "arb: down"
}

# A percentage with at most one decimal (0.1 for the loss benchmarks) as
# thousandths, for numgen; dies naming @what if it is not one.
permille_of() {
	local what=$1 pct=$2 permille
	[[ "$pct" =~ ^[0-9]+(\.[0-9])?$ ]] || die "$what must be a percentage 0..100 with at most one decimal, got '$pct'"
	permille=$((${pct%.*} * 10))
	[[ "$pct" != *.* ]] || permille=$((permille + ${pct#*.}))
	[ "$permille" -le 1000 ] || die "$what must be a percentage 0..100, got '$pct'"
	echo "$permille"
}

# Random drops in the router's forward hook: on the receiver XDP runs before
# nftables, and AF_XDP transmit skips the sender's egress hook, so the
# router is the only place that sees every packet.
# One random rule in the router's forward hook, in its own nftables
# @table (replaced, never stacked) at hook priority @prio: packets that
# match @pre get @action with probability pct%. @what names the rule in
# messages; @says is what it does, for the message once it is in place.
# No pct: show the rule; 0: remove it.
router_random_rule() {
	local table=$1 prio=$2 what=$3 pre=$4 action=$5 says=$6
	shift 6
	need_router
	if [ $# -eq 0 ]; then
		if ip netns exec "$NS_R" nft list table ip "$table" 2>/dev/null; then :; else
			say "arb: no $what rule in $NS_R"
		fi
		return
	fi
	local pct=$1 permille
	permille=$(permille_of "$what" "$pct") || exit 1
	if ip netns exec "$NS_R" nft list table ip "$table" >/dev/null 2>&1; then
		ip netns exec "$NS_R" nft delete table ip "$table"
	fi
	if [ "$permille" -eq 0 ]; then
		say "arb: $what rule removed from $NS_R"
		return
	fi
	# numgen's range is 0..999, so 100% needs no numgen.
	local match="numgen random mod 1000 < $permille "
	[ "$permille" -lt 1000 ] || match=""
	ip netns exec "$NS_R" nft -f - <<-EOF
		table ip $table {
			chain forward {
				type filter hook forward priority $prio; policy accept;
				${pre}${match}${action}
			}
		}
	EOF
	say "arb: $NS_R ${says/PCT/$pct%}"
}

arb_loss() {
	router_random_rule "$LOSS_TABLE" 0 loss "" "counter drop" \
		"drops PCT of forwarded packets at random" "$@"
}

# ECN marks in the router's forward hook: pct% of the ECN-capable packets
# it forwards (ECT(0) or ECT(1), RFC 3168 5) leave with CE, at random, as
# an AQM would mark instead of dropping; others pass untouched.
arb_mark() {
	router_random_rule "$MARK_TABLE" 1 "ECN marking" "ip ecn { ect0, ect1 } " \
		"counter ip ecn set ce" "marks PCT of forwarded ECN-capable packets CE at random" "$@"
}

# A middlebox that drops ECN-setup SYNs (SYN with ECE and CWR, no ACK),
# which RFC 3168 6.1.1.1 answers with a SYN resent without them.
arb_ecnsyn() {
	router_random_rule "$ECNSYN_TABLE" 3 "ECN-setup SYN drop" \
		"tcp flags & (syn | ack | ecn | cwr) == syn | ecn | cwr " "counter drop" \
		"drops PCT of the ECN-setup SYNs it forwards" "$@"
}

# A path that is down behind the router: pct% of the packets towards
# lunar-a are answered with ICMP host unreachable (what a router with no
# route says, RFC 1812 5.2.7.1), not forwarded. While the rule is in place
# the router's per-destination ICMP rate limit (1 s) is lifted, so that
# each retransmission can draw its error (RFC 6069's case); the global
# limit (icmp_msgs_per_sec, 1000/s) still holds.
arb_unreach() {
	local permille=0
	if [ $# -gt 0 ]; then
		permille=$(permille_of "unreachable" "$1") || exit 1
		need_router
	fi
	# The limit goes before the first reject and comes back after the last.
	[ "$permille" -eq 0 ] || ip netns exec "$NS_R" sysctl -qw net.ipv4.icmp_ratelimit=0
	router_random_rule "$UNREACH_TABLE" 2 "unreachable" "ip daddr ${ARB_A_IP%/*} " \
		"counter reject with icmp type host-unreachable" \
		"answers PCT of the packets towards ${ARB_A_IP%/*} with host unreachable" "$@"
	[ $# -eq 0 ] || ip netns exec "$NS_R" nft list table ip "$UNREACH_TABLE" >/dev/null 2>&1 ||
		ip netns exec "$NS_R" sysctl -qw net.ipv4.icmp_ratelimit=1000
}

# A memif socket file is stale when nothing listens on it any more (its
# server crashed); a new server would fail with "address in use".
memif_clean() {
	[ -d "$RUN_DIR" ] || return 0
	local live f
	live=$(ss -xlnH 2>/dev/null | awk '{print $5}')
	for f in "$RUN_DIR"/*; do
		[ -S "$f" ] || continue
		if ! grep -qxF "$f" <<<"$live"; then
			rm -f "$f"
			say "removed stale socket $f"
		fi
	done
}

memif_up() {
	mkdir -p "$RUN_DIR"
	chmod 0755 "$RUN_DIR"
	memif_clean
	say "memif: socket directory $RUN_DIR ready"
}

memif_down() {
	memif_clean
	if [ -d "$RUN_DIR" ] && rmdir "$RUN_DIR" 2>/dev/null; then
		say "memif: removed $RUN_DIR"
	else
		say "memif: down"
	fi
}

status() {
	local any=0 ns
	for ns in "$NS_A" "$NS_R" "$NS_B"; do
		if ns_exists "$ns"; then
			show_ns "$ns"
			any=1
		fi
	done
	[ "$any" = 1 ] || echo "no lunar namespaces ($NS_A, $NS_R, $NS_B)"
	if ns_exists "$NS_R" && ip netns exec "$NS_R" nft list table ip "$LOSS_TABLE" >/dev/null 2>&1; then
		echo "loss rule in $NS_R: $(ip netns exec "$NS_R" nft list table ip "$LOSS_TABLE" | grep -oE '(numgen.*|counter.*drop)' | head -1)"
	fi
	if [ -d "$RUN_DIR" ]; then
		echo "memif directory $RUN_DIR: $(ls -A "$RUN_DIR" | wc -l) entries"
	else
		echo "memif directory $RUN_DIR: absent"
	fi
}

[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in
-h | --help | help) usage; exit 0 ;;
esac
[ "$(id -u)" = 0 ] || die "run as root (network namespaces, nftables, XDP)"
[[ "$MTU" =~ ^[0-9]+$ ]] && [ "$MTU" -ge 68 ] || die "LUNAR_MTU must be a number >= 68, got '$MTU'"
[[ "$QUEUES" =~ ^[0-9]+$ ]] && [ "$QUEUES" -ge 1 ] && [ "$QUEUES" -le 64 ] ||
	die "LUNAR_QUEUES must be a number 1..64, got '$QUEUES'"

cmd=$1
shift
case "$cmd" in
veth | arb | memif)
	[ $# -ge 1 ] || die "usage: topo.sh $cmd up|down (try --help)"
	sub=$1
	shift
	case "$cmd:$sub" in
	veth:up) veth_up ;;
	veth:down) veth_down ;;
	arb:up) arb_up ;;
	arb:down) arb_down ;;
	arb:loss) arb_loss "$@" ;;
	arb:mark) arb_mark "$@" ;;
	arb:unreach) arb_unreach "$@" ;;
	arb:ecnsyn) arb_ecnsyn "$@" ;;
	memif:up) memif_up ;;
	memif:down) memif_down ;;
	*) die "unknown command '$cmd $sub' (try --help)" ;;
	esac
	;;
down-all)
	veth_down
	arb_down
	# Whatever else was left inside (other links, processes, XDP).
	del_ns "$NS_A"
	del_ns "$NS_B"
	del_ns "$NS_R"
	memif_down
	;;
status) status ;;
*) die "unknown command '$cmd' (try --help)" ;;
esac
