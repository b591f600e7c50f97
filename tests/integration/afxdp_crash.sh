#!/usr/bin/env bash
# afxdp_crash.sh - restart after a crash on af_xdp (LUNA §7.3): a lunar
# process that dies without cleaning up (SIGKILL) leaves its XDP program
# attached, and the interface would refuse the next one. Each lunar process
# holds a lock on its interface (xdp_owner_lock(), released by the kernel
# however the process dies), so the next one can tell a dead owner from a
# live one. Shown here: a second process on an interface a live one drives
# is refused, naming that process, and the live one keeps its program; the
# owner is SIGKILLed and its program stays behind; a new process removes
# it, says so, and serves a kernel client; stopped normally, it leaves no
# program behind.
#
# Namespaces and interfaces are its own (suffixed with the PID).
source "$(dirname "$0")/lib.sh"
setup_test afxdp_crash "$1"
KNB="$BUILD/tools/knb/knb"

export LUNAR_NS_A="lxc-a-$$" LUNAR_NS_B="lxc-b-$$"
export LUNAR_VETH_A="xca$$" LUNAR_VETH_B="xcb$$"
export LUNAR_VETH_A_IP=10.81.0.1/24 LUNAR_VETH_B_IP=10.81.0.2/24
NS_B=$LUNAR_NS_B VB=$LUNAR_VETH_B
A="ip netns exec $LUNAR_NS_A" B="ip netns exec $LUNAR_NS_B"
SERVER=(server --stack lunar --port "af_xdp:$VB" --pool 4096 --listen 10.81.0.2:7000
	--pattern rpc --msg-size 4096)

on_exit "$TOPO" veth down
"$TOPO" veth up >"$OUT/topo.log" 2>&1 || { fail "topology up"; exit 1; }
prog_id() { ip -n "$NS_B" link show "$VB" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p'; }
rpc_ok() { # NAME: a kernel client's RPCs against the lunar server for 1 s
	$A "$KNB" client --stack kernel --connect 10.81.0.2:7000 --core 0 --pattern rpc \
		--msg-size 4096 --duration 1 --warmup 0.2 >"$OUT/$1.log" 2>&1
	sed -n 's/^requests \([0-9]*\) responses.*/\1/p' "$OUT/$1.log"
}

# 1. The first owner, serving.
bg first $B "$KNB" "${SERVER[@]}" --core 1
wait_for "first server ready" 100 grep -q "ready" "$OUT/first.log"
first_prog=$(prog_id)
expect_ge "first server: its XDP program is attached" "${first_prog:-0}" 1
expect_ge "first server: a kernel client's RPCs are answered" "$(rpc_ok rpc1)" 1

# 2. A second process on the same interface is refused while the first lives.
$B "$KNB" "${SERVER[@]}" --core 0 >"$OUT/second.log" 2>&1
expect_eq "second process on a driven interface: exit code" "$?" 1
expect_grep "second process: the refusal names the live owner" \
	"interface $VB is driven by another lunar process \\(pid $PID_first," "$OUT/second.log"
expect_eq "the live owner keeps its XDP program" "$(prog_id)" "$first_prog"
expect_ge "the live owner still serves" "$(rpc_ok rpc2)" 1

# 3. The owner is killed: nothing detaches its program.
kill -KILL "$PID_first"
wait "$PID_first" 2>/dev/null
expect_eq "after SIGKILL the program stays behind" "$(prog_id)" "$first_prog"

# 4. The next process removes it, says so, and serves.
bg third $B "$KNB" "${SERVER[@]}" --core 1
wait_for "third server ready" 100 grep -q "ready" "$OUT/third.log"
expect_grep "third server: removed the dead process's program" \
	"removing XDP program lunar_steer \\(id $first_prog, .*\\) left by a lunar process that died" \
	"$OUT/third.log"
third_prog=$(prog_id)
expect_ge "third server: its own XDP program is attached" "${third_prog:-0}" 1
[ "$third_prog" != "$first_prog" ]
expect_eq "third server's program is a new one" "$?" 0
expect_ge "third server: a kernel client's RPCs are answered" "$(rpc_ok rpc3)" 1
stop third
expect_eq "third server exit code" "$RC_third" 0
expect_eq "stopped normally, no XDP program left" "$(prog_id)" ""
expect_grep "third server leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/third.log"
