# lib.sh - helpers shared by the integration tests (sourced, not run).
# Each test: source this, call `setup_test NAME BUILDDIR`, register cleanup
# with `on_exit CMD...`, start lunar processes with `bg NAME CMD...`, and
# assert with `expect_eq`, `expect_ge`, `expect_grep`. Everything the test
# started is stopped and removed on exit, whether it passed or not.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TOPO="$ROOT/scripts/topo.sh"
FAILS=0
CLEANUPS=()
# ASan builds: leaks inside DPDK's af_xdp PMD are suppressed (tests/lsan.supp);
# the full unwinder is needed for the suppression to see the PMD's frame.
export LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
PIDS=()

setup_test() {
	TEST_NAME=$1
	BUILD=$(cd "$2" && pwd)
	PING="$BUILD/tools/lunar-ping"
	OUT=$(mktemp -d "/tmp/lunar-$TEST_NAME.XXXXXX")
	# nstat keeps its history in /tmp/.nstat.u$UID unless told otherwise.
	export NSTAT_HISTORY="$OUT/nstat.history"
	trap finish EXIT
	trap 'exit 130' INT TERM
	echo "# $TEST_NAME: logs in $OUT"
}

on_exit() { CLEANUPS+=("$*"); }

# bg NAME CMD... : start CMD in the background, output to $OUT/NAME.log
bg() {
	local name=$1
	shift
	"$@" >"$OUT/$name.log" 2>&1 &
	PIDS+=($!)
	eval "PID_$name=$!"
}

# stop NAME: SIGTERM the process and wait for it (bounded), keep its exit code in RC_NAME
stop() {
	local name=$1 pid
	eval "pid=\${PID_$name}"
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null
	eval "RC_$name=$?"
}

# wait_for DESC TRIES CMD...: retry CMD every 0.1 s (bounded), fail if never true
wait_for() {
	local desc=$1 tries=$2
	shift 2
	for _ in $(seq 1 "$tries"); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "timed out waiting for $desc"
	return 1
}

# ss_has CMD...: CMD (an ss listing) printed at least one socket. ss itself
# exits 0 with none, so a wait_for on it alone never waits.
ss_has() { "$@" 2>/dev/null | grep -q .; }

fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}

pass() { echo "ok: $*"; }

expect_eq() { # DESC GOT WANT
	if [ "$2" = "$3" ]; then pass "$1 = $3"; else fail "$1: got '$2', want '$3'"; fi
}

expect_ge() { # DESC GOT MIN
	if [ "${2:-0}" -ge "$3" ] 2>/dev/null; then pass "$1 = $2 (>= $3)"; else fail "$1: got '$2', want >= $3"; fi
}

expect_le() { # DESC GOT MAX
	if [ "${2:-0}" -le "$3" ] 2>/dev/null; then pass "$1 = $2 (<= $3)"; else fail "$1: got '$2', want <= $3"; fi
}

# Frames from SRC_IP in PCAP that tshark finds malformed, in error, or with a
# bad IPv4 or TCP checksum: a count, or with -V their details. TCP payload is
# decoded as plain data and never reassembled: random bytes would otherwise
# be taken for some protocol (a heuristic dissector) and reported as its
# error, or a retransmission with other boundaries as malformed; the data
# itself is checked by SHA-256 at the receiver.
# The same options keep every read of a capture fast: with reassembly on, a
# random source port that some dissector claims can take tshark 30 s and
# more over one 16 MiB transfer.
TSHARK_PLAIN=(-d 'tcp.port==1-65535,data' -o tcp.desegment_tcp_streams:FALSE)
tcp_capture_bad() { # PCAP SRC_IP [-V]
	local filter="ip.src == $2 && (ip.checksum.status == \"Bad\" || tcp.checksum.status == \"Bad\" || _ws.malformed || _ws.expert.severity == \"Error\")"
	local args=(-r "$1" "${TSHARK_PLAIN[@]}" -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE -Y "$filter")
	if [ "${3:-}" = -V ]; then
		tshark "${args[@]}" -V 2>/dev/null | grep -iE "expert|malformed|bad|frame [0-9]+:" | head -20
	else
		tshark "${args[@]}" 2>/dev/null | wc -l
	fi
}

# tshark_count PCAP [FILTER]: frames in PCAP that match FILTER (all if none)
tshark_count() {
	tshark -r "$1" "${TSHARK_PLAIN[@]}" ${2:+-Y "$2"} 2>/dev/null | wc -l
}

# fault_count LOG rx|tx WHAT: the fault wrapper's WHAT counter (dropped,
# corrupted, ...) of one direction, from the "fault rx:|tx:" line in LOG
fault_count() {
	grep "^fault $2:" "$1" | grep -o "$3 [0-9]*" | awk '{print $2}'
}

expect_grep() { # DESC PATTERN FILE
	if grep -qE "$2" "$3"; then pass "$1"; else fail "$1: /$2/ not in $3"; sed 's/^/    | /' "$3" | tail -20; fi
}

# json FILE EXPR: EXPR evaluated with d = the JSON document in FILE
json() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# counter FILE NAME: value of a counter line "  NAME VALUE" printed by --counters (0 if absent)
counter() {
	awk -v n="$2" '($1 == n) {print $2; f = 1} ($1 == "drop" && $2 == n) {print $3; f = 1} END {if (!f) print 0}' "$1" | head -1
}

# line_field LOG LINE FIELD: counter FIELD on the first "LINE" line of a
# --verbose dump ("tcp:", "loop:", "dtcp:", ...), where counters follow
# their names: "tcp: opened 1 accepted 1 ..."
line_field() {
	awk -v l="$2" -v f="$3" '$1 == l {for (i = 2; i < NF; i++) if ($i == f) print $(i + 1)}' "$1" | head -1
}

# worker_field LOG WORKER FIELD [LINE]: counter FIELD on worker WORKER's "LINE"
# line ("tcp:" unless given; "xdp:", "loop:") of a multi-worker --verbose dump
worker_field() {
	awk -v w="worker $2:" -v f="$3" -v l="${4:-tcp:}" '$0 == w {on = 1; next} /^worker [0-9]+:/ {on = 0}
		on && $1 == l {for (i = 2; i < NF; i++) if ($i == f) print $(i + 1)}' "$1" | head -1
}

# expect_own_ports DESC LOG WORKER N: the local ports of the connections
# worker WORKER opened, as knb --verbose lists them ("knb conn L->R", each
# one, whether it ended in TIME-WAIT or by a RST), lie in its own sub-range
# of the default reserved range and leave its own residue mod N
# (ctl/flow_plan.h); exactly WANT of them are listed.
expect_own_ports() { # DESC LOG WORKER N WANT
	local desc=$1 log=$2 w=$3 n=$4 want=$5 p bad=0 count=0
	local size=$((4096 / n))
	local lo=$((61440 + w * size)) hi=$((61440 + (w + 1) * size - 1))
	[ "$((w + 1))" = "$n" ] && hi=65535
	for p in $(awk -v w="worker $w:" '$0 == w {on = 1; next} /^worker [0-9]+:/ {on = 0}
		on && /^knb conn / {split($3, a, "->"); print a[1]}' "$log"); do
		count=$((count + 1))
		if [ "$p" -lt "$lo" ] || [ "$p" -gt "$hi" ] || [ $((p % n)) != "$w" ]; then
			bad=$((bad + 1))
			echo "    worker $w uses port $p, outside $lo-$hi or not = $w mod $n"
		fi
	done
	expect_eq "$desc: worker $w's connections listed" "$count" "$want"
	expect_eq "$desc: worker $w's ports are its own" "$bad" 0
}

finish() {
	local rc=$?
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	sleep 0.2
	for pid in "${PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do
		eval "${CLEANUPS[$i]}" >/dev/null 2>&1 || true
	done
	if [ "$FAILS" -gt 0 ]; then
		echo "# $TEST_NAME: $FAILS check(s) failed; logs kept in $OUT"
		exit 1
	fi
	if [ "$rc" = 130 ]; then
		echo "# $TEST_NAME: interrupted (a timeout, or by hand); logs kept in $OUT"
		exit 130
	fi
	[ "$rc" = 0 ] || { echo "# $TEST_NAME: script error (exit $rc)"; exit "$rc"; }
	[ -n "${KEEP_OUT:-}" ] || rm -rf "$OUT"
	echo "# $TEST_NAME: all checks passed"
	exit 0
}
