#!/usr/bin/env bash
# workers.sh - two workers on two queues (LUNA 5, 7.4): a knb client and
# server, each with two workers (--core 0,1) over one two-queue memif link.
# Every connection lands on the worker that owns it and none cross: each
# worker opens (client) and accepts (server) its own connections, no
# segment is ever given to the wrong worker (tcp "foreign" counter 0), a
# client worker's local ports lie in its own sub-range of the reserved
# range with its own residue (ctl/flow_plan.h), bytes and RPCs balance in
# both directions, and nothing leaks.
source "$(dirname "$0")/lib.sh"
setup_test workers "$1"
KNB="$BUILD/tools/knb/knb"
mkdir -p /run/lunar
sock=/run/lunar/workers-test-$$.sock
on_exit rm -f "$sock"

for pattern in rpc all-to-all; do
	conns=3 # --flows 3 per worker; all-to-all opens one up and one down per flow
	[ "$pattern" = all-to-all ] && conns=6
	bg srv "$KNB" server --stack lunar --port "memif:$sock:server" --ip 192.168.77.2/24 \
		--listen 192.168.77.2:7000 --core 0,1 --verbose
	wait_for "lunar server" 100 grep -q "ready" "$OUT/srv.log"
	timeout 120 "$KNB" client --stack lunar --port "memif:$sock:client" --ip 192.168.77.1/24 \
		--connect 192.168.77.2:7000 --pattern "$pattern" --flows 3 --msg-size 4096 --iodepth 2 \
		--core 0,1 --duration 1 --warmup 0.2 --verbose --json "$OUT/$pattern.json" \
		>"$OUT/cli-$pattern.log" 2>&1
	expect_eq "$pattern: client exit code" "$?" 0
	stop srv
	mv "$OUT/srv.log" "$OUT/srv-$pattern.log"
	cli="$OUT/cli-$pattern.log" srv="$OUT/srv-$pattern.log"
	expect_eq "$pattern: client reports two threads" \
		"$(json "$OUT/$pattern.json" "len(d['threads'])")" 2
	for w in 0 1; do
		expect_eq "$pattern: client worker $w opened its $conns connections" \
			"$(worker_field "$cli" $w opened)" "$conns"
		expect_eq "$pattern: server worker $w accepted $conns connections" \
			"$(worker_field "$srv" $w accepted)" "$conns"
		expect_eq "$pattern: client worker $w got no other worker's segment" \
			"$(worker_field "$cli" $w foreign)" 0
		expect_eq "$pattern: server worker $w got no other worker's segment" \
			"$(worker_field "$srv" $w foreign)" 0
		expect_own_ports "$pattern: client" "$cli" "$w" 2 "$conns"
	done
	expect_grep "$pattern: client leaked no Zbuf object" "^zbuf: 0 objects in use" "$cli"
	expect_grep "$pattern: server leaked no Zbuf object" "^zbuf: 0 objects in use" "$srv"
	if [ "$pattern" = rpc ]; then
		expect_eq "rpc: requests = responses" \
			"$(json "$OUT/rpc.json" "d['requests'] - d['responses']")" 0
		expect_ge "rpc: RPCs completed" "$(json "$OUT/rpc.json" "d['responses']")" 10
		read -r sreq sresp < <(awk '/^knb server: requests/ {print $4, $6}' "$srv")
		expect_eq "rpc: the server answered every request" "${sreq:-x}" "${sresp:-y}"
	else
		# Both directions carried data on both workers' connections.
		expect_ge "all-to-all: bytes up" "$(json "$OUT/all-to-all.json" "d['bytes_sent']")" 1000000
		expect_ge "all-to-all: bytes down" "$(json "$OUT/all-to-all.json" "d['bytes_received']")" 1000000
	fi
done
