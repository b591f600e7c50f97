/*
 * test_tcp_stack_gro.c - software GRO (tcp_config.gro): a receive burst's
 * in-order segments of one connection, their headers alike, go to TCP as
 * one train (tcp_input_train()). A train must be taken exactly as its
 * segments one by one would be: the same bytes delivered, the same ACKs
 * sent, the same counters; and anything that is not "the next segment,
 * same header" (a PSH, another ACK or window, a gap, a segment filling
 * it) must end the train so that order is kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_pair.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"

#define MS 1000000ull

/* What of a frame the server sent must be the same with GRO and without. */
struct ack_seen {
	uint32_t seq, ack, ts_val, ts_ecr;
	uint16_t window;
	uint8_t flags;
	uint32_t payload_len;
};

/* Parse (checksums verified) every frame the server holds at its port into @seen. */
static unsigned take_server_frames(struct tcp_pair *p, struct ack_seen *seen, unsigned room)
{
	unsigned n = p->b.fp.n_tx;

	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = p->b.fp.tx[i];
		uint8_t buf[2048];
		uint32_t len = rte_pktmbuf_pkt_len(m);
		const uint8_t *d;
		struct eth_repr er;
		struct ipv4_repr ir;
		struct tcp_repr tr;

		assert_true(len <= sizeof(buf));
		assert_true(i < room);
		d = rte_pktmbuf_read(m, 0, len, buf);
		assert_int_equal(eth_parse(d, len, &er), LUNAR_DROP_NONE);
		assert_int_equal(ipv4_parse(er.payload, er.payload_len, true, &ir),
				 LUNAR_DROP_NONE);
		assert_int_equal(tcp_parse(ir.payload, ir.payload_len, ir.src, ir.dst, true, &tr),
				 LUNAR_DROP_NONE);
		seen[i] = (struct ack_seen){.seq = tr.seq,
					    .ack = tr.ack,
					    .ts_val = tr.opts.ts_val,
					    .ts_ecr = tr.opts.ts_ecr,
					    .window = tr.window,
					    .flags = tr.flags,
					    .payload_len = (uint32_t)tr.payload_len};
	}
	return n;
}

#define MAX_SEEN 4096

/*
 * The client streams @total bytes in sends of @chunk; every frame the
 * server sends back is recorded in @seen. @return how many.
 */
static unsigned stream(bool gro, bool delayed_ack, size_t total, size_t chunk,
		       struct ack_seen *seen, struct tcp_stack_stats *server,
		       struct tcp_conn_stats *conn, uint32_t *wl1)
{
	struct tcp_config cfg;
	struct tcp_pair p;
	uint8_t *buf = malloc(chunk);
	size_t sent = 0;
	unsigned n = 0;

	assert_non_null(buf);
	pair_config(&cfg);
	cfg.gro = gro;
	cfg.delayed_ack = delayed_ack;
	pair_open_cfgs(&p, true, &cfg, &cfg);
	p.hold_b = true;
	for (unsigned step = 0; step < 20000 && p.rcvd_len < total; step++) {
		if (sent < total) {
			size_t len = total - sent < chunk ? total - sent : chunk;
			int rc;

			pair_fill(buf, len, sent);
			rc = tcp_sock_send(p.cli, buf, (uint32_t)len);
			assert_true(rc >= 0);
			sent += (size_t)rc;
		}
		pair_step(&p);
		n += take_server_frames(&p, seen + n, MAX_SEEN - n);
		pair_release_b(&p, p.b.fp.n_tx);
	}
	pair_rcvd_ok(&p, total);
	*server = *tcp_stack_stats(p.b.tcp);
	*conn = tcp_sock_conn(p.srv)->stats;
	/* The window's last update: from the last segment, in a train as alone. */
	*wl1 = tcp_sock_conn(p.srv)->snd_wl1 - tcp_sock_conn(p.srv)->irs;
	pair_close(&p);
	free(buf);
	return n;
}

/*
 * 1 MiB streamed: with GRO the server takes trains (the client's frames
 * come several to a burst), and sends exactly the frames (ACKs: sequence,
 * acknowledgment, window, timestamps, flags) it sends without, in the same
 * order and virtual time; the connection counts the same segments. Without
 * delayed ACKs every segment's ACK is due at once: a train ends at each
 * (none of two is taken), and the ACKs are still the same.
 */
static void same_as_one_by_one(bool delayed_ack)
{
	static struct ack_seen with[MAX_SEEN], without[MAX_SEEN];
	struct tcp_stack_stats st_with, st_without;
	struct tcp_conn_stats c_with, c_without;
	unsigned n_with, n_without;
	uint32_t wl1_with, wl1_without;

	n_with = stream(true, delayed_ack, 1 << 20, 64 * 1024, with, &st_with, &c_with, &wl1_with);
	n_without = stream(false, delayed_ack, 1 << 20, 64 * 1024, without, &st_without, &c_without,
			   &wl1_without);
	assert_int_equal(wl1_with, wl1_without);
	assert_true(delayed_ack ? st_with.gro_trains > 0 : st_with.gro_trains == 0);
	assert_true(st_with.gro_segs >= 2 * st_with.gro_trains);
	print_message("%lu trains of %lu segments; %u frames from the server\n",
		      (unsigned long)st_with.gro_trains, (unsigned long)st_with.gro_segs, n_with);
	assert_int_equal(st_without.gro_trains, 0);
	assert_int_equal(st_without.gro_segs, 0);
	assert_int_equal(n_with, n_without);
	assert_true(n_with > 10);
	/*
	 * Sequence numbers and timestamps from each run's first frame: ISNs and clocks are random.
	 */
	for (unsigned i = n_with; i-- > 0;) {
		struct ack_seen *r[2] = {&with[i], &without[i]}, *f[2] = {&with[0], &without[0]};

		for (unsigned k = 0; k < 2; k++) {
			r[k]->seq -= f[k]->seq;
			r[k]->ack -= f[k]->ack;
			r[k]->ts_val -= f[k]->ts_val;
			r[k]->ts_ecr -= f[k]->ts_ecr;
		}
		if (with[i].seq != without[i].seq || with[i].ack != without[i].ack ||
		    with[i].ts_val != without[i].ts_val || with[i].ts_ecr != without[i].ts_ecr ||
		    with[i].window != without[i].window || with[i].flags != without[i].flags ||
		    with[i].payload_len != without[i].payload_len)
			fail_msg(
			    "server frame %u differs: ack +%u/+%u window %u/%u flags %02x/%02x", i,
			    with[i].ack, without[i].ack, with[i].window, without[i].window,
			    with[i].flags, without[i].flags);
	}
	assert_int_equal(st_with.segs_in, st_without.segs_in);
	assert_int_equal(c_with.segs_in, c_without.segs_in);
	assert_int_equal(c_with.fastpath_data, c_without.fastpath_data);
	assert_int_equal(c_with.slowpath, c_without.slowpath);
	assert_int_equal(c_with.bytes_in, c_without.bytes_in);
}

static void test_same_as_one_by_one(void **state)
{
	(void)state;
	same_as_one_by_one(true);
}

static void test_same_without_delayed_acks(void **state)
{
	(void)state;
	same_as_one_by_one(false);
}

/* One data segment from the client, made up: @off bytes into the stream. */
static void inject_data(struct tcp_pair *p, uint32_t iss, uint32_t ack, uint32_t off, uint32_t len,
			uint8_t flags, uint16_t window)
{
	static uint8_t data[4096];
	struct tcp_repr r;

	assert_true(len <= sizeof(data));
	pair_fill(data, len, off);
	memset(&r, 0, sizeof(r));
	r.sport = tcp_sock_conn(p->cli)->tuple.lport;
	r.dport = PAIR_PORT;
	r.seq = iss + off;
	r.ack = ack;
	r.flags = flags;
	r.window = window;
	r.payload = data;
	r.payload_len = len;
	pair_inject(p, &p->b, &r);
}

/*
 * One burst of made-up segments (timestamps off, so that any header may
 * be written): 0-1000 and 1000-2000 with PSH (a train, ended by the PSH),
 * 2000-3000, 3000-4000 with another window (each alone), 5000-6000 (a
 * gap: alone, out of order) and 4000-5000 (alone, filling it). All 6000
 * bytes arrive in order; one train of two was taken; a duplicate of the
 * train is taken one by one (acknowledging nothing new, it takes the full
 * path) and changes nothing.
 */
static void test_train_ends(void **state)
{
	bool attach = *(bool *)*state;
	struct tcp_config cfg;
	struct tcp_pair p;
	const struct tcp_stack_stats *st;
	uint32_t iss, ack, dups0;
	const uint8_t A = RTE_TCP_ACK_FLAG, AP = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;

	pair_config(&cfg);
	cfg.timestamps = false;
	pair_open_cfgs(&p, attach, &cfg, &cfg);
	pair_run(&p, MS);
	st = tcp_stack_stats(p.b.tcp);
	iss = tcp_sock_conn(p.cli)->snd_nxt;
	ack = tcp_sock_conn(p.cli)->rcv_nxt;
	p.hold_b = true; /* the server's ACKs are for data the client never sent */
	inject_data(&p, iss, ack, 0, 1000, A, 1000);
	inject_data(&p, iss, ack, 1000, 1000, AP, 1000);
	inject_data(&p, iss, ack, 2000, 1000, A, 1000);
	inject_data(&p, iss, ack, 3000, 1000, A, 999);
	inject_data(&p, iss, ack, 5000, 1000, A, 999);
	inject_data(&p, iss, ack, 4000, 1000, A, 999);
	pair_step(&p);
	pair_rcvd_ok(&p, 6000);
	assert_int_equal(st->gro_trains, 1);
	assert_int_equal(st->gro_segs, 2);
	assert_int_equal(tcp_sock_conn(p.srv)->stats.segs_in >= 6, true);

	dups0 = (uint32_t)tcp_sock_conn(p.srv)->stats.slowpath;
	inject_data(&p, iss, ack, 0, 1000, A, 1000);
	inject_data(&p, iss, ack, 1000, 1000, A, 1000);
	pair_step(&p);
	pair_rcvd_ok(&p, 6000);
	assert_int_equal(st->gro_trains, 1);
	assert_int_equal(tcp_sock_conn(p.srv)->stats.slowpath - dups0, 2);
	pair_discard_tx(&p.b);
	pair_close(&p);
}

/*
 * Segments that acknowledge different data are not one train: a train is
 * taken with its first segment's header, and a later segment's ACK of the
 * server's data (RFC 9293 3.10.7.4: SND.UNA advances) must not be lost.
 */
static void test_other_ack_ends_train(void **state)
{
	bool attach = *(bool *)*state;
	struct tcp_config cfg;
	struct tcp_pair p;
	const struct tcp_stack_stats *st;
	uint8_t data[500];
	uint32_t iss, ack;

	pair_config(&cfg);
	cfg.timestamps = false;
	pair_open_cfgs(&p, attach, &cfg, &cfg);
	pair_run(&p, MS);
	st = tcp_stack_stats(p.b.tcp);
	iss = tcp_sock_conn(p.cli)->snd_nxt;
	ack = tcp_sock_conn(p.cli)->rcv_nxt;
	p.hold_b = true; /* the server's data never reaches the client */
	pair_fill(data, sizeof(data), 0);
	assert_int_equal(tcp_sock_send(p.srv, data, sizeof(data)), (int)sizeof(data));
	pair_step(&p);
	assert_int_equal(tcp_sock_conn(p.srv)->snd_max, ack + 500);
	inject_data(&p, iss, ack, 0, 1000, RTE_TCP_ACK_FLAG, 1000);
	inject_data(&p, iss, ack + 500, 1000, 1000, RTE_TCP_ACK_FLAG, 1000);
	pair_step(&p);
	pair_rcvd_ok(&p, 2000);
	assert_int_equal(st->gro_trains, 0);
	assert_int_equal(tcp_sock_conn(p.srv)->snd_una, ack + 500);
	pair_discard_tx(&p.b);
	pair_close(&p);
}

/*
 * Near mem_max (from 3/4 of it, tcp_limits.mem_max) one segment changes
 * the memory pressure the next meets: a train that would take the stack
 * there goes one segment at a time. Below, a train is taken whole. The
 * server's unacknowledged data holds most of the memory.
 */
static void test_no_train_near_mem_max(void **state)
{
	bool attach = *(bool *)*state;
	static uint8_t data[44000];
	struct tcp_config cfg;
	struct tcp_pair p;
	struct tcp_limits lim;
	struct tcp_limits_usage u;
	const struct tcp_stack_stats *st;
	uint32_t iss, ack;

	pair_config(&cfg);
	cfg.timestamps = false;
	pair_open_cfgs(&p, attach, &cfg, &cfg);
	pair_run(&p, MS);
	st = tcp_stack_stats(p.b.tcp);
	lim = *tcp_stack_limits(p.b.tcp);
	lim.mem_max = 65536; /* low pressure from 49152 bytes */
	assert_int_equal(tcp_stack_set_limits(p.b.tcp, &lim), 0);
	iss = tcp_sock_conn(p.cli)->snd_nxt;
	ack = tcp_sock_conn(p.cli)->rcv_nxt;
	p.hold_b = true; /* the server's data is never acknowledged */
	pair_fill(data, sizeof(data), 0);
	assert_int_equal(tcp_sock_send(p.srv, data, sizeof(data)), (int)sizeof(data));
	pair_step(&p);
	pair_discard_tx(&p.b);
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.mem_bytes, sizeof(data));
	for (uint32_t i = 0; i < 4; i++) /* 48000 bytes with the train */
		inject_data(&p, iss, ack, i * 1000, 1000, RTE_TCP_ACK_FLAG, 1000);
	pair_step(&p);
	pair_rcvd_ok(&p, 4000);
	assert_int_equal(st->gro_trains, 1);
	assert_int_equal(st->gro_segs, 4);
	for (uint32_t i = 4; i < 10; i++) /* 50000 bytes with the train */
		inject_data(&p, iss, ack, i * 1000, 1000, RTE_TCP_ACK_FLAG, 1000);
	pair_step(&p);
	pair_rcvd_ok(&p, 10000);
	assert_int_equal(st->gro_trains, 1);
	assert_int_equal(st->gro_segs, 4);
	pair_discard_tx(&p.b);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_as_one_by_one),
	    cmocka_unit_test(test_same_without_delayed_acks),
	    PAIR_BOTH_FRAMINGS(test_train_ends),
	    PAIR_BOTH_FRAMINGS(test_other_ack_ends_train),
	    PAIR_BOTH_FRAMINGS(test_no_train_near_mem_max),
	};

	return cmocka_run_group_tests_name("tcp/stack_gro", tests, pair_group_setup,
					   pair_group_teardown);
}
