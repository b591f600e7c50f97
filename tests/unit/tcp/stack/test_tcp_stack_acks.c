/*
 * test_tcp_stack_acks.c - when tcp_stack acknowledges what a receive burst
 * brought (tcp_config.ack_per_burst). RFC 5681 4.2 asks for an ACK at
 * least every second full-sized segment; the stack sends it when the burst
 * ends, so several segments in one burst earn one ACK, and a reply sent
 * while handling the burst carries it with no pure ACK at all. A single
 * segment still waits for the delayed-ACK timer, and the sender ends up
 * with everything acknowledged in each case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <cmocka.h>

#include "tcp_pair.h"

#define US  1000ull
#define MSG 4000 /* three segments at this MTU: two full, then the rest */

static uint64_t segs_out(struct tcp_stack *st)
{
	return tcp_stack_stats(st)->segs_out;
}

/* How much each of the server's counters grew since @before. */
#define SRV_GREW(p, before, field) (tcp_stack_stats((p)->b.tcp)->field - (before).field)

/* The client sends @len bytes now; two steps later the server has had them in one burst. */
static void send_and_deliver(struct tcp_pair *p, size_t len, uint64_t *cli_segs)
{
	uint8_t *buf = malloc(len);
	uint64_t before = segs_out(p->a.tcp);

	assert_non_null(buf);
	pair_fill(buf, len, p->rcvd_len);
	assert_int_equal(tcp_sock_send(p->cli, buf, len), (int)len);
	free(buf);
	pair_step(p); /* a's frames go out and are carried to b */
	*cli_segs = segs_out(p->a.tcp) - before;
	pair_step(p); /* b receives them in one burst, and answers */
}

/*
 * Connected, and a first message exchanged: the SYN could only announce
 * 64 KiB of window, and the first read opens the rest with an update of
 * its own. What the tests count comes after that.
 */
static void open_settled(struct tcp_pair *p)
{
	uint64_t cli_segs;

	pair_open(p, true);
	send_and_deliver(p, MSG, &cli_segs);
	pair_run(p, 2000 * US);
}

/* Three segments in one burst: one ACK, at the burst's end, and no more later. */
static void test_one_ack_per_burst(void **state)
{
	struct tcp_pair p;
	struct tcp_stack_stats before;
	uint64_t cli_segs;
	uint32_t space;

	(void)state;
	open_settled(&p);
	space = (uint32_t)tcp_sock_send_space(p.cli);
	before = *tcp_stack_stats(p.b.tcp);
	send_and_deliver(&p, MSG, &cli_segs);
	assert_int_equal(cli_segs, 3);
	pair_rcvd_ok(&p, 2 * MSG);
	assert_int_equal(SRV_GREW(&p, before, segs_out), 1);
	/* Owed at the burst's end and sent then: the server's read, with the
	 * window already open, made no update to carry it. */
	assert_int_equal(SRV_GREW(&p, before, burst_acks), 1);
	/* Past the delayed-ACK time: nothing more was owed, nothing more sent. */
	pair_run(&p, 2000 * US);
	assert_int_equal(SRV_GREW(&p, before, segs_out), 1);
	/* That one ACK covered all three: the client's send buffer is empty again. */
	assert_int_equal(tcp_sock_send_space(p.cli), space);
	pair_close(&p);
}

/* A reply sent while the burst is handled carries the ACK: no pure ACK at all. */
static void test_reply_carries_burst_ack(void **state)
{
	struct tcp_pair p;
	struct tcp_stack_stats before;
	uint64_t cli_segs;

	(void)state;
	open_settled(&p);
	p.srv_echo = true;
	before = *tcp_stack_stats(p.b.tcp);
	send_and_deliver(&p, MSG, &cli_segs);
	assert_int_equal(cli_segs, 3);
	pair_rcvd_ok(&p, 2 * MSG);
	/* Three segments of echoed data and nothing else. */
	assert_int_equal(SRV_GREW(&p, before, segs_out), 3);
	assert_int_equal(SRV_GREW(&p, before, burst_acks), 0);
	assert_int_equal(SRV_GREW(&p, before, burst_acks_carried), 1);
	pair_run(&p, 2000 * US);
	assert_int_equal(SRV_GREW(&p, before, segs_out), 3);
	pair_close(&p);
}

/*
 * inline-r2c: a run of segments of one connection in a burst is one
 * delivery (as a NIC's LRO would merge them): the server's callback runs
 * once and finds all three 100-byte segments readable. What it sends waits
 * for the burst's end and leaves in one pass: one segment of 300 bytes,
 * carrying the ACK. A segment alone in its burst is a run of one.
 */
static void test_inline_replies_leave_together(void **state)
{
	struct tcp_pair p;
	struct tcp_stack_stats before;
	uint8_t buf[300];
	uint64_t cli_before;

	(void)state;
	open_settled(&p);
	p.srv_echo = true;
	tcp_sock_set_inline(p.srv, true);
	before = *tcp_stack_stats(p.b.tcp);
	cli_before = segs_out(p.a.tcp);
	pair_fill(buf, sizeof(buf), p.rcvd_len);
	for (unsigned i = 0; i < 3; i++) /* no Nagle in the pair: three segments */
		assert_int_equal(tcp_sock_send(p.cli, buf + 100 * i, 100), 100);
	pair_step(&p); /* the client's three frames go out */
	assert_int_equal(segs_out(p.a.tcp) - cli_before, 3);
	pair_step(&p); /* the server's burst: one callback for the run, one echo */
	assert_int_equal(SRV_GREW(&p, before, inline_calls), 1);
	assert_int_equal(p.rcvd_len, MSG + 300); /* all three read in that callback */
	assert_int_equal(SRV_GREW(&p, before, segs_out), 1);
	assert_int_equal(SRV_GREW(&p, before, burst_acks), 0);
	assert_int_equal(SRV_GREW(&p, before, burst_acks_carried), 1);
	pair_run(&p, 2000 * US);
	pair_rcvd_ok(&p, MSG + 300);
	assert_int_equal(tcp_sock_readable(p.cli), 300);
	/* One segment alone: its own delivery, before the poll's timers and output. */
	before = *tcp_stack_stats(p.b.tcp);
	assert_int_equal(tcp_sock_send(p.cli, buf, 100), 100);
	pair_step(&p);
	pair_step(&p);
	assert_int_equal(SRV_GREW(&p, before, inline_calls), 1);
	assert_int_equal(SRV_GREW(&p, before, segs_out), 1);
	pair_close(&p);
}

/* The client of test_rpc_acks_worked_after_tx(): the next request from the callback that read the
 * echo. */
struct rpc_client {
	struct tcp_pair *p;
	uint8_t sent[MSG], back[MSG];
	size_t got;
	unsigned done, want;
	bool bad;
};

static void rpc_send(struct rpc_client *r)
{
	pair_fill(r->sent, MSG, r->p->rcvd_len);
	if (tcp_sock_send(r->p->cli, r->sent, MSG) != MSG)
		r->bad = true;
}

static void rpc_on_cli(struct tcp_sock *s, uint32_t ev, void *ctx)
{
	struct rpc_client *r = ctx;

	if (!(ev & TCP_EV_READABLE))
		return;
	r->got += tcp_sock_read(s, r->back + r->got, MSG - r->got);
	if (r->got < MSG)
		return;
	if (memcmp(r->back, r->sent, MSG))
		r->bad = true;
	r->got = 0;
	if (++r->done < r->want)
		rpc_send(r); /* in the burst that brought the echo: it carries the ACK */
}

/*
 * An RPC ping-pong, the server echoing inline and the client sending each
 * request from the callback that read the last echo: every request then
 * acknowledges all of the reply before it and every reply all of its
 * request, so each side's stack leaves that ACK's bookkeeping until after
 * its transmit (tcp_conn.h ack_defer). 200 round trips: every byte back,
 * and not one timeout, probe or retransmission on either side.
 */
static void test_rpc_acks_worked_after_tx(void **state)
{
	struct tcp_pair p;
	struct tcp_conn_stats srv0, cli0;
	const struct tcp_conn_stats *srv, *cli;
	struct tcp_stack_stats sum;
	struct rpc_client *r = calloc(1, sizeof(*r));

	(void)state;
	assert_non_null(r);
	open_settled(&p);
	p.srv_echo = true;
	tcp_sock_set_inline(p.srv, true);
	r->p = &p;
	r->want = 200;
	tcp_sock_set_ctx(p.cli, rpc_on_cli, r);
	/* A live connection's counters are its own (the stack's take them at its end). */
	srv = &tcp_sock_conn(p.srv)->stats;
	cli = &tcp_sock_conn(p.cli)->stats;
	srv0 = *srv;
	cli0 = *cli;
	rpc_send(r);
	for (unsigned steps = 0; r->done < r->want && steps < 200 * 20; steps++)
		pair_step(&p);
	assert_false(r->bad);
	assert_int_equal(r->done, 200);
	pair_rcvd_ok(&p, 201 * MSG);
	assert_true(srv->acks_worked_later - srv0.acks_worked_later >= 199);
	assert_true(cli->acks_worked_later - cli0.acks_worked_later >= 199);
	assert_int_equal(srv->timeouts - srv0.timeouts, 0);
	assert_int_equal(srv->retransmits - srv0.retransmits, 0);
	assert_int_equal(srv->tlp_probes - srv0.tlp_probes, 0);
	assert_int_equal(cli->timeouts - cli0.timeouts, 0);
	assert_int_equal(cli->retransmits - cli0.retransmits, 0);
	assert_int_equal(cli->tlp_probes - cli0.tlp_probes, 0);
	/* Nothing left over: the last ACK's work was done, its timers filed. */
	assert_false(tcp_sock_conn(p.srv)->ack_work_due);
	assert_false(tcp_sock_conn(p.cli)->ack_work_due);
	/*
	 * The stack's sum holds the live connection's counts; its own counters only closed ones'.
	 */
	tcp_stack_stats_sum(p.b.tcp, &sum);
	assert_int_equal(sum.acks_worked_later,
			 tcp_stack_stats(p.b.tcp)->acks_worked_later + srv->acks_worked_later);
	assert_true(sum.acks_worked_later >= 199);
	assert_int_equal(sum.fastpath_data,
			 tcp_stack_stats(p.b.tcp)->fastpath_data + srv->fastpath_data);
	assert_int_equal(sum.segs_in, tcp_stack_stats(p.b.tcp)->segs_in);
	tcp_sock_set_ctx(p.cli, NULL, NULL);
	pair_close(&p);
	free(r);
}

/*
 * test_reply_beyond_old_cwnd(): the server fills its initial window, the
 * client's request acknowledges all of it, and the reply is twice that.
 */
#define IW    (10 * 1448)
#define REQ   100
#define REPLY (2 * IW)

struct big_reply {
	struct tcp_pair *p;
	uint8_t buf[REPLY];
	size_t cli_got, srv_got;
	bool replied, bad;
};

static void big_on_cli(struct tcp_sock *s, uint32_t ev, void *ctx)
{
	struct big_reply *b = ctx;
	bool had_iw = b->cli_got >= IW;
	int n;

	if (!(ev & TCP_EV_READABLE))
		return;
	while ((n = tcp_sock_read(s, b->buf, sizeof(b->buf))) > 0)
		b->cli_got += (size_t)n;
	if (had_iw || b->cli_got < IW)
		return;
	/* The request, from the burst that brought the window's last byte: it carries the ACK. */
	memset(b->buf, 'q', REQ);
	if (tcp_sock_send(s, b->buf, REQ) != REQ)
		b->bad = true;
	b->p->hold_b = true; /* the reply's frames wait at the server's port, to be counted */
}

static void big_on_srv(struct tcp_sock *s, uint32_t ev, void *ctx)
{
	struct big_reply *b = ctx;
	uint8_t req[REQ];
	int n;

	if (!(ev & TCP_EV_READABLE))
		return;
	while ((n = tcp_sock_read(s, req, sizeof(req))) > 0)
		b->srv_got += (size_t)n;
	if (b->srv_got < REQ || b->replied)
		return;
	b->replied = true;
	memset(b->buf, 'r', REPLY);
	if (tcp_sock_send(s, b->buf, REPLY) != REPLY)
		b->bad = true;
}

/*
 * A reply larger than the congestion window from before the request's
 * ACK, while that ACK's bookkeeping waits for after the transmit
 * (ack_defer): the output does the work first, so the reply goes with
 * the cwnd the ACK grew, as with the work done at once, not one round
 * trip later at the next ACK: 12 MSS leave, the 10 of the initial window
 * and the 2 slow start adds for the ACK (RFC 3465's L = 2), and all 20
 * arrive.
 */
static void test_reply_beyond_old_cwnd(void **state)
{
	struct tcp_pair p;
	struct big_reply *b = calloc(1, sizeof(*b));
	uint64_t later0, held = 0;

	(void)state;
	assert_non_null(b);
	open_settled(&p);
	b->p = &p;
	tcp_sock_set_ctx(p.cli, big_on_cli, b);
	tcp_sock_set_ctx(p.srv, big_on_srv, b);
	assert_int_equal(tcp_sock_conn(p.srv)->cc.cwnd, IW);
	later0 = tcp_sock_conn(p.srv)->stats.acks_worked_later;
	memset(b->buf, 'w', IW);
	assert_int_equal(tcp_sock_send(p.srv, b->buf, IW), IW);
	for (unsigned steps = 0; !b->replied && steps < 100; steps++)
		pair_step(&p);
	assert_true(b->replied);
	assert_false(b->bad);
	assert_int_equal(tcp_sock_conn(p.srv)->stats.acks_worked_later - later0, 1);
	assert_int_equal(tcp_sock_conn(p.srv)->cc.cwnd, IW + 2 * 1448);
	for (unsigned i = 0; i < p.b.fp.n_tx; i++)
		held += rte_pktmbuf_pkt_len(p.b.fp.tx[i]) - (14 + 20 + 32);
	assert_int_equal(held, IW + 2 * 1448);
	p.hold_b = false;
	pair_run(&p, 2000 * US);
	assert_int_equal(b->cli_got, IW + REPLY);
	assert_false(b->bad);
	assert_int_equal(tcp_sock_conn(p.srv)->stats.retransmits, 0);
	tcp_sock_set_ctx(p.cli, NULL, NULL);
	tcp_sock_set_ctx(p.srv, pair_on_srv, &p);
	pair_close(&p);
	free(b);
}

/* One segment earns no burst ACK: it waits for the delayed-ACK timer (RFC 1122 4.2.3.2). */
static void test_single_segment_waits_for_delayed_ack(void **state)
{
	struct tcp_pair p;
	struct tcp_stack_stats before;
	uint64_t cli_segs;
	uint32_t space;

	(void)state;
	open_settled(&p);
	space = (uint32_t)tcp_sock_send_space(p.cli);
	before = *tcp_stack_stats(p.b.tcp);
	send_and_deliver(&p, 100, &cli_segs);
	assert_int_equal(cli_segs, 1);
	assert_int_equal(SRV_GREW(&p, before, segs_out), 0);
	pair_run(&p, 2000 * US);
	assert_int_equal(SRV_GREW(&p, before, segs_out), 1);
	/* Neither sent nor carried at a burst's end: the timer sent it. */
	assert_int_equal(
	    SRV_GREW(&p, before, burst_acks) + SRV_GREW(&p, before, burst_acks_carried), 0);
	assert_int_equal(tcp_sock_send_space(p.cli), space);
	pair_close(&p);
}

/* A UDP datagram's callback (application code in the middle of a burst) turns inline mode off. */
static bool inline_off(void *ctx, uint32_t src, uint16_t sport, uint16_t dport,
		       const uint8_t *payload, size_t len, uint64_t now_ns)
{
	struct tcp_pair *p = ctx;

	(void)src, (void)sport, (void)dport, (void)payload, (void)len, (void)now_ns;
	tcp_sock_set_inline(p->srv, false);
	return false; /* not kept: the interface frees it */
}

/*
 * Inline mode turned off while a run of the connection's segments waits
 * for its callback (here by a UDP callback between two segments of the
 * run): the run is delivered as the connection now asks, by the batch
 * dispatch, not inline; nothing is lost and nothing is delivered twice.
 */
static void test_inline_off_mid_run(void **state)
{
	static const uint8_t udp[12] = {0x30, 0x39, 0x1f, 0x90, 0, 12, 0, 0, 'p', 'i', 'n', 'g'};
	struct tcp_pair p;
	struct tcp_stack_stats before;
	uint8_t buf[300];

	(void)state;
	open_settled(&p);
	tcp_sock_set_inline(p.srv, true);
	assert_int_equal(netif_udp_bind(&p.b.nif, 8080, inline_off, &p), 0);
	before = *tcp_stack_stats(p.b.tcp);
	pair_fill(buf, sizeof(buf), p.rcvd_len);
	p.hold_a = true;
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(tcp_sock_send(p.cli, buf + 100 * i, 100), 100);
	pair_step(&p); /* the client's three frames wait at its port */
	assert_int_equal(p.a.fp.n_tx, 3);
	pair_release_a(&p, 1);
	pair_inject_ip(&p, &p.b, PAIR_IP_A, IPPROTO_UDP, udp, sizeof(udp));
	pair_release_a(&p, 2);
	p.hold_a = false;
	pair_step(&p); /* the server's burst: segment, datagram, segments */
	assert_int_equal(p.b.nif.ctr.rx_udp, 1);
	assert_int_equal(SRV_GREW(&p, before, inline_calls), 0);
	assert_int_equal(p.rcvd_len, MSG + 300); /* read once each, by the batch callback */
	pair_run(&p, 2000 * 1000);
	pair_rcvd_ok(&p, MSG + 300);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_ack_per_burst),
	    cmocka_unit_test(test_reply_carries_burst_ack),
	    cmocka_unit_test(test_single_segment_waits_for_delayed_ack),
	    cmocka_unit_test(test_inline_replies_leave_together),
	    cmocka_unit_test(test_inline_off_mid_run),
	    cmocka_unit_test(test_rpc_acks_worked_after_tx),
	    cmocka_unit_test(test_reply_beyond_old_cwnd),
	};

	return cmocka_run_group_tests_name("tcp/stack_acks", tests, pair_group_setup,
					   pair_group_teardown);
}
