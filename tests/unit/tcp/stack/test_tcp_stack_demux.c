/*
 * test_tcp_stack_demux.c - which connection a segment reaches. tcp_stack
 * remembers the connection the last segment was for (4.4BSD's
 * tcp_last_inpcb); a segment for a connection that has since been closed
 * must find no connection, not that memory: it is answered with a RST
 * (RFC 9293 3.10.7.1) and its data goes nowhere. A stale pointer there
 * is a use after free, which the ASan build (CI runs this test in it)
 * reports. A listener closed in the middle of a handshake takes the
 * half-open connection with it: the client's ACK finds nothing either.
 * An inline callback that aborts a connection before that connection's
 * segment in the same burst: the segment finds nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_pair.h"

#define US 1000ull

/* Data and its ACKs in both directions: the server's last segment came on this connection. */
static void exchange(struct tcp_pair *p, size_t len)
{
	uint8_t buf[512];

	assert_true(len <= sizeof(buf));
	pair_fill(buf, len, p->rcvd_len);
	assert_int_equal(tcp_sock_send(p->cli, buf, len), (int)len);
	pair_run(p, 100 * US);
}

/*
 * A connection the peer reset, which the application has not closed yet:
 * its 4-tuple is free at once. The same client port connecting again
 * reaches the listener (a half-open connection), not the dead
 * connection, which would answer with a RST.
 */
static void test_reset_connection_frees_its_tuple(void **state)
{
	struct tcp_pair p;
	struct tcp_limits_usage u;
	uint64_t rst;
	uint16_t port;

	(void)state;
	pair_open(&p, true);
	port = tcp_sock_conn(p.cli)->tuple.lport;
	tcp_sock_abort(p.cli);
	p.cli = NULL;
	pair_run(&p, 100 * US);
	assert_true(p.srv_events & TCP_EV_RESET);
	assert_int_equal(tcp_sock_conn(p.srv)->state, TCP_CLOSED); /* still the application's */
	rst = tcp_stack_stats(p.b.tcp)->rst_sent;
	pair_syn_nowhere(&p, port);
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.half_open, 1);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->rst_sent, rst);
	tcp_sock_close(p.srv);
	p.srv = NULL;
	pair_close(&p);
}

/*
 * RFC 6191, as Linux: the server closed first and holds the 4-tuple in
 * TIME-WAIT; the client connects again from the same port with a
 * sequence number beyond what the old connection used. The SYN opens a
 * new connection at once (a SYN-ACK, not a challenge ACK and 2 MSL to
 * wait), with an ISN above everything the old one sent.
 */
static void test_syn_reopens_time_wait(void **state)
{
	struct tcp_pair p;
	struct tcp_limits_usage u;
	struct tcp_limits lim;
	struct tcp_repr r = {0};
	const uint8_t *tcp;
	uint32_t srv_max, isn, seq, half_open;
	uint16_t port;

	(void)state;
	pair_open(&p, true);
	exchange(&p, 300);
	port = tcp_sock_conn(p.cli)->tuple.lport;
	seq = tcp_sock_conn(p.cli)->snd_max;
	srv_max = tcp_sock_conn(p.srv)->snd_max;
	tcp_sock_close(p.srv); /* the server first: it keeps TIME-WAIT */
	p.srv = NULL;
	pair_run(&p, 100 * US);
	tcp_sock_close(p.cli);
	p.cli = NULL;
	pair_run(&p, 100 * US);
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.time_wait, 1);
	r.sport = port;
	r.dport = PAIR_PORT;
	r.seq = seq + 100000;
	r.flags = RTE_TCP_SYN_FLAG;
	r.window = 65535;
	r.opts.has_mss = true;
	r.opts.mss = 1460;
	p.hold_b = true;
	/* No room for a half-open connection: the TIME-WAIT stays, the SYN waits to come again. */
	lim = *tcp_stack_limits(p.b.tcp);
	half_open = lim.max_half_open;
	lim.max_half_open = 0;
	assert_int_equal(tcp_stack_set_limits(p.b.tcp, &lim), 0);
	pair_inject(&p, &p.b, &r);
	pair_step(&p);
	assert_int_equal(p.b.fp.n_tx, 0);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->tw_reopen_deferred, 1);
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.time_wait, 1);
	lim.max_half_open = half_open;
	assert_int_equal(tcp_stack_set_limits(p.b.tcp, &lim), 0);
	pair_inject(&p, &p.b, &r);
	pair_step(&p);
	assert_int_equal(p.b.fp.n_tx, 1);
	tcp = rte_pktmbuf_mtod_offset(p.b.fp.tx[0], const uint8_t *, 14 + 20);
	assert_int_equal(tcp[13], RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	isn = (uint32_t)tcp[4] << 24 | tcp[5] << 16 | tcp[6] << 8 | tcp[7];
	assert_int_equal(isn, srv_max + 1 + 65535 + 2); /* its FIN took one */
	assert_int_equal(tcp_stack_stats(p.b.tcp)->tw_reopened, 1);
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.time_wait, 0);
	assert_int_equal(u.half_open, 1);
	pair_discard_tx(&p.b);
	p.hold_b = false;
	pair_close(&p);
}

static void test_closed_connection_not_remembered(void **state)
{
	struct tcp_pair p;
	struct tcp_stack_stats before;
	uint64_t cli_out;

	(void)state;
	pair_open(&p, true);
	exchange(&p, 300);
	pair_rcvd_ok(&p, 300);
	/* The server aborts; its RST stays at its port, so the client still sends. */
	p.hold_b = true;
	tcp_sock_abort(p.srv);
	pair_step(&p); /* the server's socket is freed at the end of this poll */
	before = *tcp_stack_stats(p.b.tcp);
	assert_int_equal(before.conns_active, 0);
	cli_out = tcp_stack_stats(p.a.tcp)->segs_out;
	exchange(&p, 200);
	assert_true(tcp_stack_stats(p.a.tcp)->segs_out > cli_out);
	/* Answered as a segment for no connection; none of its data was taken. */
	assert_true(tcp_stack_stats(p.b.tcp)->rst_sent > before.rst_sent);
	pair_rcvd_ok(&p, 300);
	p.hold_b = false;
	pair_run(&p, 100 * US); /* the RSTs reach the client */
	pair_close(&p);
}

static void on_event(struct tcp_sock *s, uint32_t events, void *ctx)
{
	(void)s;
	*(uint32_t *)ctx |= events;
}

static void on_accept_none(struct tcp_listener *l, void *ctx)
{
	(void)l;
	(void)ctx;
	fail_msg("a connection became acceptable on a listener being closed");
}

/*
 * A listener closed while a handshake is half done: the half-open
 * connection cannot be accepted any more, so it is reset with the
 * listener, as those waiting in the accept queue are. Left alone, the
 * client's ACK would complete it into an established connection nobody
 * owns, never accepted and never closed.
 */
static void test_listener_closed_mid_handshake(void **state)
{
	struct tcp_pair p;
	uint32_t cli_events = 0;
	int rc;

	(void)state;
	pair_stacks(&p, false);
	p.lst = tcp_listen_on(p.b.tcp, PAIR_PORT, 4, on_accept_none, &p, &rc);
	assert_non_null(p.lst);
	p.cli = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_event, &cli_events, &rc);
	assert_non_null(p.cli);
	pair_step(&p); /* the SYN is carried to the server */
	pair_step(&p); /* the server answers it: SYN-RECEIVED, its SYN-ACK carried back */
	assert_int_equal(tcp_stack_stats(p.b.tcp)->conns_active, 1);
	tcp_listener_close(p.lst);
	p.lst = NULL;
	assert_int_equal(tcp_stack_stats(p.b.tcp)->conns_active, 0);
	pair_run(&p, 10000 * US); /* the client's ACK meets no connection either */
	assert_int_equal(tcp_stack_stats(p.b.tcp)->conns_active, 0);
	assert_int_equal(tcp_stack_sockets(p.b.tcp), 0);
	assert_true(cli_events & TCP_EV_RESET);
	assert_int_equal(tcp_sock_conn(p.cli)->state, TCP_CLOSED);
	tcp_sock_close(p.cli);
	p.cli = NULL;
	pair_close(&p);
}

/*
 * RFC 9293 3.10.7.2 (LISTEN): an incoming RST is ignored, whatever else
 * it carries. A segment with SYN and RST opens nothing and is not
 * answered (no SYN-ACK, and never a RST for a RST); a plain SYN from the
 * same port then opens as usual.
 */
static void test_syn_rst_to_listener_ignored(void **state)
{
	struct tcp_pair p;
	struct tcp_limits_usage u;
	struct tcp_repr r = {.sport = 40000,
			     .dport = PAIR_PORT,
			     .seq = 12345,
			     .flags = RTE_TCP_SYN_FLAG | RTE_TCP_RST_FLAG,
			     .window = 65535};
	int rc;

	(void)state;
	pair_stacks(&p, false);
	p.lst = tcp_listen_on(p.b.tcp, PAIR_PORT, 4, on_accept_none, &p, &rc);
	assert_non_null(p.lst);
	p.hold_b = true;
	pair_inject(&p, &p.b, &r);
	pair_step(&p);
	assert_int_equal(p.b.fp.n_tx, 0);
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.half_open, 0);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->conns_active, 0);
	r.flags = RTE_TCP_SYN_FLAG;
	pair_inject(&p, &p.b, &r);
	pair_step(&p);
	assert_int_equal(p.b.fp.n_tx, 1); /* the SYN-ACK */
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.half_open, 1);
	pair_discard_tx(&p.b);
	p.hold_b = false;
	pair_close(&p);
}

static void on_accept_later(struct tcp_listener *l, void *ctx)
{
	(void)l;
	(*(unsigned *)ctx)++; /* the application accepts later: the connection waits */
}

/*
 * A listener closed with a connection established but never accepted:
 * nobody can take it now, so it is reset (RFC 9293 3.10.4, ABORT), and
 * the client learns at once, not only once it sends something that
 * meets no connection.
 */
static void test_listener_closed_with_unaccepted_resets(void **state)
{
	struct tcp_pair p;
	uint32_t cli_events = 0;
	unsigned ready = 0;
	int rc;

	(void)state;
	pair_stacks(&p, false);
	p.lst = tcp_listen_on(p.b.tcp, PAIR_PORT, 4, on_accept_later, &ready, &rc);
	assert_non_null(p.lst);
	p.cli = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_event, &cli_events, &rc);
	assert_non_null(p.cli);
	pair_run(&p, 1000 * US);
	assert_int_equal(ready, 1);
	assert_true(tcp_listener_ready(p.lst));
	assert_true(cli_events & TCP_EV_CONNECTED);
	tcp_listener_close(p.lst);
	p.lst = NULL;
	assert_int_equal(tcp_stack_stats(p.b.tcp)->conns_active, 0);
	pair_run(&p, 1000 * US);
	assert_true(cli_events & TCP_EV_RESET);
	assert_int_equal(tcp_sock_conn(p.cli)->state, TCP_CLOSED);
	tcp_sock_close(p.cli);
	p.cli = NULL;
	pair_close(&p);
}

/*
 * With two workers the reserved range is their client ports, each
 * sub-range steered to its owner: a listener there would have every
 * connection land on one worker (and over memif be dropped by the other),
 * so it is refused; a port below the range is fine.
 */
static void test_listen_in_reserved_range_refused_with_workers(void **state)
{
	struct tcp_pair p;
	struct tcp_listener *l;
	int rc = 0;

	(void)state;
	pair_workers = 2;
	pair_stacks(&p, false);
	pair_workers = 1;
	assert_null(tcp_listen_on(p.b.tcp, 62000, 4, on_accept_none, &p, &rc));
	assert_int_equal(rc, -EADDRNOTAVAIL);
	assert_null(tcp_listen_on(p.b.tcp, 61440, 4, on_accept_none, &p, &rc));
	assert_int_equal(rc, -EADDRNOTAVAIL);
	l = tcp_listen_on(p.b.tcp, 61439, 4, on_accept_none, &p, &rc);
	assert_non_null(l);
	assert_int_equal(rc, 0);
	tcp_listener_close(l);
	pair_close(&p);

	pair_stacks(&p, false); /* one worker: the whole range is its own */
	l = tcp_listen_on(p.b.tcp, 62000, 4, on_accept_none, &p, &rc);
	assert_non_null(l);
	tcp_listener_close(l);
	pair_close(&p);
}

/*
 * The server closed first and holds the client's 4-tuple in TIME-WAIT,
 * with timestamps. @return its connection (alive until TIME-WAIT ends),
 * *@port the client's port.
 */
static const struct tcp_conn *server_time_wait(struct tcp_pair *p, uint16_t *port)
{
	const struct tcp_conn *c;
	struct tcp_limits_usage u;

	pair_open(p, true);
	exchange(p, 300);
	*port = tcp_sock_conn(p->cli)->tuple.lport;
	c = tcp_sock_conn(p->srv);
	tcp_sock_close(p->srv);
	p->srv = NULL;
	pair_run(p, 100 * US);
	tcp_sock_close(p->cli);
	p->cli = NULL;
	pair_run(p, 100 * US);
	tcp_stack_usage(p->b.tcp, &u);
	assert_int_equal(u.time_wait, 1);
	assert_int_equal(c->state, TCP_TIME_WAIT);
	assert_true(c->ts_ok);
	return c;
}

/*
 * A SYN-like segment with @flags, @seq and (@has_ts) TSval @ts_val from the
 * client's old port to the server in TIME-WAIT: @return whether it opened
 * the 4-tuple again (RFC 6191). The server's answer is thrown away.
 */
static bool tw_try(struct tcp_pair *p, uint16_t port, uint8_t flags, uint32_t seq, bool has_ts,
		   uint32_t ts_val)
{
	uint64_t before = tcp_stack_stats(p->b.tcp)->tw_reopened;
	struct tcp_repr r = {0};

	r.sport = port;
	r.dport = PAIR_PORT;
	r.seq = seq;
	r.ack = flags & RTE_TCP_ACK_FLAG ? 12345 : 0;
	r.flags = flags;
	r.window = 65535;
	r.opts.has_mss = true;
	r.opts.mss = 1460;
	r.opts.has_ts = has_ts;
	r.opts.ts_val = ts_val;
	p->hold_b = true;
	pair_inject(p, &p->b, &r);
	pair_step(p);
	pair_discard_tx(&p->b);
	p->hold_b = false;
	return tcp_stack_stats(p->b.tcp)->tw_reopened != before;
}

/*
 * RFC 6191 (as Linux): a segment on a TIME-WAIT opens it again only if it
 * is a SYN alone and provably of a new incarnation: PAWS passes (its TSval
 * is not older than TS.Recent) and its sequence number is beyond RCV.NXT
 * or its TSval beyond TS.Recent. A SYN at RCV.NXT without timestamps, or
 * with a TSval equal to TS.Recent, proves nothing; a SYN-ACK is no
 * opening; an older TSval fails PAWS whatever its sequence number. A TSval
 * equal to TS.Recent passes PAWS, and with a sequence number beyond
 * RCV.NXT the SYN opens the connection again.
 */
static void test_tw_reopen_conditions(void **state)
{
	struct tcp_pair p;
	const struct tcp_conn *c;
	struct tcp_limits_usage u;
	uint16_t port;
	uint32_t nxt, recent;

	(void)state;
	c = server_time_wait(&p, &port);
	nxt = c->rcv_nxt;
	recent = c->ts_recent;
	assert_false(tw_try(&p, port, RTE_TCP_SYN_FLAG, nxt, false, 0));
	assert_false(tw_try(&p, port, RTE_TCP_SYN_FLAG, nxt, true, recent));
	assert_false(tw_try(&p, port, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, nxt + 100000, false, 0));
	assert_false(tw_try(&p, port, RTE_TCP_SYN_FLAG, nxt + 100000, true, recent - 1));
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.time_wait, 1);
	assert_int_equal(c->state, TCP_TIME_WAIT);
	assert_int_equal(c->rcv_nxt, nxt);
	assert_int_equal(c->ts_recent, recent);
	assert_true(tw_try(&p, port, RTE_TCP_SYN_FLAG, nxt + 100000, true, recent));
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.time_wait, 0);
	assert_int_equal(u.half_open, 1);
	pair_close(&p);
}

/* A SYN from the client's old port and a newer TSval, at RCV.NXT: opened again (RFC 6191). */
static void test_tw_reopen_by_newer_ts(void **state)
{
	struct tcp_pair p;
	const struct tcp_conn *c;
	uint16_t port;

	(void)state;
	c = server_time_wait(&p, &port);
	assert_true(tw_try(&p, port, RTE_TCP_SYN_FLAG, c->rcv_nxt, true, c->ts_recent + 1));
	pair_close(&p);
}

/*
 * LUNA 7.4: with two workers, the flow plan gives a segment to a listener's
 * port to the worker its source port's low bits name; the steering sent it
 * here by mistake: dropped and counted (never half-handled: no SYN-ACK
 * from the wrong worker). Worker 0's own SYN is answered.
 */
static void test_foreign_segment_dropped(void **state)
{
	struct tcp_pair p;
	struct tcp_repr r = {0};
	int rc;

	(void)state;
	pair_workers = 2;
	pair_stacks(&p, false);
	pair_workers = 1;
	p.lst = tcp_listen_on(p.b.tcp, PAIR_PORT, 4, on_accept_none, &p, &rc);
	assert_non_null(p.lst);
	r.sport = 1001; /* odd: worker 1's */
	r.dport = PAIR_PORT;
	r.seq = 5000;
	r.flags = RTE_TCP_SYN_FLAG;
	r.window = 65535;
	p.hold_b = true;
	pair_inject(&p, &p.b, &r);
	pair_step(&p);
	assert_int_equal(p.b.fp.n_tx, 0);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->foreign, 1);
	assert_int_equal(p.b.nif.ctr.drops[LUNAR_DROP_TCP_FOREIGN_QUEUE], 1);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->conns_active, 0);
	r.sport = 1000; /* even: this worker's */
	pair_inject(&p, &p.b, &r);
	pair_step(&p);
	assert_int_equal(p.b.fp.n_tx, 1);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->foreign, 1);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->conns_active, 1);
	pair_discard_tx(&p.b);
	p.hold_b = false;
	pair_close(&p);
}

/*
 * RFC 1122 4.2.2.13: data for an application that has closed (its FIN
 * sent and acknowledged) cannot be delivered: the connection is reset,
 * and the peer learns it.
 */
static void test_data_after_close_resets(void **state)
{
	struct tcp_pair p;

	(void)state;
	pair_open(&p, true);
	exchange(&p, 300);
	tcp_sock_close(p.srv); /* nothing unread: a FIN */
	p.srv = NULL;
	pair_run(&p, 100 * US);
	assert_int_equal(tcp_sock_conn(p.cli)->state, TCP_CLOSE_WAIT);
	exchange(&p, 100);
	assert_true(p.cli_events & TCP_EV_RESET);
	assert_int_equal(tcp_sock_conn(p.cli)->state, TCP_CLOSED);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->conns_active, 0);
	pair_rcvd_ok(&p, 300);
	pair_close(&p);
}

struct two_srv {
	struct tcp_sock *srv[2];
	unsigned calls[2];
};

/* Server 0's inline callback reads what came and, once data came, aborts server 1's connection. */
static void on_srv0_abort_other(struct tcp_sock *s, uint32_t events, void *ctx)
{
	struct two_srv *t = ctx;
	uint8_t buf[256];
	size_t got = 0, n;

	(void)events;
	t->calls[0]++;
	while ((n = tcp_sock_read(s, buf, sizeof(buf))))
		got += n;
	if (got && t->srv[1]) {
		tcp_sock_abort(t->srv[1]);
		t->srv[1] = NULL;
	}
}

static void on_srv1(struct tcp_sock *s, uint32_t events, void *ctx)
{
	(void)s;
	(void)events;
	((struct two_srv *)ctx)->calls[1]++;
}

/*
 * inline-r2c delivers a run of segments when another connection's segment
 * comes, and that callback runs before the new segment is looked up: a
 * connection it aborts is gone for the segment, which finds no connection
 * (a RST, RFC 9293 3.10.7.1, its data taken by nobody) rather than the
 * aborted one's memory. One burst carries a segment for connection 0 and
 * then one for connection 1; connection 0's callback aborts connection 1.
 */
static void test_inline_run_ends_before_next_lookup(void **state)
{
	struct tcp_pair p;
	struct two_srv t = {0};
	struct tcp_sock *cli[2];
	uint32_t cli_events[2] = {0, 0};
	uint64_t no_listener, rst_sent;
	uint8_t buf[100];
	int rc;

	(void)state;
	pair_stacks(&p, false);
	p.lst = tcp_listen_on(p.b.tcp, PAIR_PORT, 4, NULL, NULL, &rc);
	assert_non_null(p.lst);
	for (unsigned i = 0; i < 2; i++) {
		cli[i] =
		    tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_event, &cli_events[i], &rc);
		assert_non_null(cli[i]);
	}
	pair_run(&p, 1000 * US);
	for (unsigned i = 0; i < 2; i++) {
		assert_true(cli_events[i] & TCP_EV_CONNECTED);
		t.srv[i] = tcp_accept(p.lst, i ? on_srv1 : on_srv0_abort_other, &t);
		assert_non_null(t.srv[i]);
		tcp_sock_set_inline(t.srv[i], true);
	}
	pair_run(&p, 100 * US); /* what the accepted sockets were owed is delivered */
	t.calls[0] = t.calls[1] = 0;
	no_listener = p.b.nif.ctr.drops[LUNAR_DROP_TCP_NO_LISTENER];
	rst_sent = tcp_stack_stats(p.b.tcp)->rst_sent;
	memset(buf, 7, sizeof(buf));
	assert_int_equal(tcp_sock_send(cli[0], buf, sizeof(buf)), sizeof(buf));
	assert_int_equal(tcp_sock_send(cli[1], buf, sizeof(buf)), sizeof(buf));
	pair_step(&p); /* both segments go out in one client burst */
	pair_step(&p); /* and arrive in one server burst: 0's, then 1's */
	assert_int_equal(t.calls[0], 1);
	assert_int_equal(t.calls[1], 0); /* aborted before its segment was looked up */
	assert_int_equal(p.b.nif.ctr.drops[LUNAR_DROP_TCP_NO_LISTENER], no_listener + 1);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->rst_sent, rst_sent + 1);
	pair_run(&p, 1000 * US);
	assert_true(cli_events[1] & TCP_EV_RESET);
	assert_false(cli_events[0] & TCP_EV_RESET);
	for (unsigned i = 0; i < 2; i++)
		tcp_sock_abort(cli[i]);
	tcp_sock_abort(t.srv[0]);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_closed_connection_not_remembered),
	    cmocka_unit_test(test_reset_connection_frees_its_tuple),
	    cmocka_unit_test(test_syn_reopens_time_wait),
	    cmocka_unit_test(test_listener_closed_mid_handshake),
	    cmocka_unit_test(test_syn_rst_to_listener_ignored),
	    cmocka_unit_test(test_listener_closed_with_unaccepted_resets),
	    cmocka_unit_test(test_listen_in_reserved_range_refused_with_workers),
	    cmocka_unit_test(test_inline_run_ends_before_next_lookup),
	    cmocka_unit_test(test_tw_reopen_conditions),
	    cmocka_unit_test(test_tw_reopen_by_newer_ts),
	    cmocka_unit_test(test_foreign_segment_dropped),
	    cmocka_unit_test(test_data_after_close_resets),
	};

	return cmocka_run_group_tests_name("tcp/stack_demux", tests, pair_group_setup,
					   pair_group_teardown);
}
