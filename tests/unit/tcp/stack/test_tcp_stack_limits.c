/*
 * test_tcp_stack_limits.c - the stack-wide limits (tcp/tcp_limits.h,
 * docs/LIMITS.md), each hit with two stacks on a virtual clock: the
 * documented action happens, its counter (and drop reason) says so, and
 * the stack works normally once under the limit again.
 *
 *  - connections: a SYN on a full table is dropped, no RST (the SYN comes
 *    again and is taken once a connection ends); connect() gets -ENOBUFS;
 *    a TIME-WAIT connection gives way to a new one;
 *  - TIME-WAIT: one more than the cap ends the oldest;
 *  - half-open (RFC 4987): beyond the cap SYN cookies answer, or with
 *    cookies off the SYN is dropped; unanswered SYN-ACKs time out, counted;
 *  - memory: sends stop at mem_max and resume on TCP_EV_WRITABLE; the
 *    receiver drops payload it has not acknowledged, never what it has,
 *    never takes back the window it offered (RFC 7323 2.4), and still
 *    serves a connection that holds nothing; what is charged (held,
 *    out-of-order, nothing once a connection is gone) and the levels'
 *    exact thresholds;
 *  - timers: the per-poll budget, and none spent on idle connections;
 *  - the packet pool's pressure levels (1/4, 1/8, leaving at 3/8);
 *  - the socket calls at those limits: zero-copy sends cut, slices given
 *    back under pressure, want_space, FIN-WAIT-2 orphans; listeners
 *    (port taken and given back, backlog, accepted connections outliving
 *    them); our own TIME-WAIT reused only with timestamps; a stack freed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mempool.h>

#include "mem/zbuf.h"
#include "tcp/tcp_seq.h"
#include "tcp_pair.h"

#define MS	1000000ull
#define MAX_SRV 8

/* The server: accepts everything; each connection reads (or not) into a sink. */
struct sink {
	struct tcp_pair *p;
	uint64_t got; /* stream bytes read so far, checked against pair_byte() */
	bool lazy;    /* the application does not read */
	bool close_on_eof;
	uint32_t events;
};

struct srv {
	struct tcp_listener *lst;
	struct tcp_sock *s[MAX_SRV];
	struct sink k[MAX_SRV];
	unsigned accepted;
	bool lazy, close_on_eof;
};

static void sink_read(struct tcp_sock *s, struct sink *k)
{
	uint8_t buf[4096];
	size_t n;

	while ((n = tcp_sock_read(s, buf, sizeof(buf))) > 0) {
		for (size_t i = 0; i < n; i++)
			if (buf[i] != pair_byte(k->got + i))
				fail_msg("byte %lu is %#x, sent %#x", (unsigned long)(k->got + i),
					 buf[i], pair_byte(k->got + i));
		k->got += n;
	}
}

static void on_srv(struct tcp_sock *s, uint32_t events, void *ctx)
{
	struct sink *k = ctx;

	k->events |= events;
	if ((events & TCP_EV_READABLE) && !k->lazy)
		sink_read(s, k);
	if ((events & TCP_EV_EOF) && k->close_on_eof)
		tcp_sock_close(s);
}

static void on_accept(struct tcp_listener *l, void *ctx)
{
	struct srv *v = ctx;
	struct tcp_sock *s;

	while (v->accepted < MAX_SRV) {
		struct sink *k = &v->k[v->accepted];

		k->lazy = v->lazy;
		k->close_on_eof = v->close_on_eof;
		s = tcp_accept(l, on_srv, k);
		if (!s)
			break;
		v->s[v->accepted++] = s;
	}
}

static void listen_b(struct tcp_pair *p, struct srv *v, unsigned backlog)
{
	int rc;

	memset(v, 0, sizeof(*v));
	for (unsigned i = 0; i < MAX_SRV; i++)
		v->k[i].p = p;
	v->lst = tcp_listen_on(p->b.tcp, PAIR_PORT, backlog, on_accept, v, &rc);
	assert_non_null(v->lst);
	p->lst = v->lst;
}

static void on_cli(struct tcp_sock *s, uint32_t events, void *ctx)
{
	uint32_t *ev = ctx;

	(void)s;
	*ev |= events;
}

static struct tcp_sock *connect_a(struct tcp_pair *p, uint32_t *ev)
{
	int rc;
	struct tcp_sock *s = tcp_connect_to(p->a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, ev, &rc);

	assert_int_equal(rc, 0);
	assert_non_null(s);
	return s;
}

static void set_limits(struct tcp_stack *st, unsigned conns, unsigned half_open, unsigned time_wait,
		       uint64_t mem)
{
	struct tcp_limits l = {.max_conns = conns,
			       .max_half_open = half_open,
			       .max_time_wait = time_wait,
			       .mem_max = mem};

	assert_int_equal(tcp_stack_set_limits(st, &l), 0);
}

static struct tcp_limits_usage usage(struct tcp_stack *st)
{
	struct tcp_limits_usage u;

	tcp_stack_usage(st, &u);
	return u;
}

/* Send @len stream bytes from @off on @s as room allows. @return bytes taken. */
static size_t send_stream(struct tcp_sock *s, uint64_t off, size_t len)
{
	static uint8_t buf[300000];
	int k;

	assert_true(len <= sizeof(buf));
	pair_fill(buf, len, off);
	k = tcp_sock_send(s, buf, len);
	assert_true(k >= 0);
	return (size_t)k;
}

/*
 * max_conns, passive: a SYN on a full table is dropped and counted
 * (syn_dropped_conns, drop TCP_CONN_LIMIT) with no RST, as Linux does:
 * RFC 9293 3.10.7.2 leaves a SYN the listener cannot take to policy, and
 * a dropped SYN is retransmitted (RFC 6298 5) where a RST would fail the
 * connect. Once a connection ends, the SYN sent again is taken.
 */
static void test_conn_limit_drops_syn_then_recovers(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev1 = 0, ev2 = 0, ev3 = 0;
	const struct tcp_stack_stats *sb;
	struct tcp_sock *c3;
	uint64_t rst0;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16);
	set_limits(p.b.tcp, 2, 2, 1, 0);
	sb = tcp_stack_stats(p.b.tcp);
	connect_a(&p, &ev1);
	connect_a(&p, &ev2);
	pair_run(&p, 1 * MS);
	assert_true(ev1 & ev2 & TCP_EV_CONNECTED);
	assert_int_equal(v.accepted, 2);
	assert_int_equal(usage(p.b.tcp).conns, 2);

	rst0 = sb->rst_sent;
	c3 = connect_a(&p, &ev3);
	pair_run(&p, 1 * MS);
	assert_false(ev3 & TCP_EV_CONNECTED);
	assert_int_equal(tcp_sock_conn(c3)->state, TCP_SYN_SENT);
	assert_int_equal(sb->syn_dropped_conns, 1);
	assert_int_equal(p.b.nif.ctr.drops[LUNAR_DROP_TCP_CONN_LIMIT], 1);
	assert_int_equal(p.b.nif.ctr.drops[LUNAR_DROP_TCP_NO_LISTENER], 0);
	assert_int_equal(sb->rst_sent, rst0);

	tcp_sock_abort(v.s[0]); /* under the limit again */
	pair_run(&p, 300 * MS); /* the SYN's retransmission */
	assert_true(ev3 & TCP_EV_CONNECTED);
	assert_int_equal(v.accepted, 3);
	assert_int_equal(sb->syn_dropped_conns, 1);
	pair_close(&p);
}

/*
 * max_conns, active: connect() fails at once with -ENOBUFS, counted, and works once there is room.
 */
static void test_conn_limit_connect_enobufs(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev1 = 0, ev2 = 0;
	struct tcp_sock *c1, *c2;
	int rc;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16);
	set_limits(p.a.tcp, 1, 1, 1, 0);
	c1 = connect_a(&p, &ev1);
	c2 = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, &ev2, &rc);
	assert_null(c2);
	assert_int_equal(rc, -ENOBUFS);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->connect_refused, 1);
	pair_run(&p, 1 * MS);
	assert_true(ev1 & TCP_EV_CONNECTED);

	tcp_sock_abort(c1);
	pair_run(&p, 1 * MS);
	connect_a(&p, &ev2);
	pair_run(&p, 1 * MS);
	assert_true(ev2 & TCP_EV_CONNECTED);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->connect_refused, 1);
	pair_close(&p);
}

/* Close @s from the client (the active close: it ends in TIME-WAIT) and run the exchange. */
static void active_close(struct tcp_pair *p, struct tcp_sock *s)
{
	tcp_sock_close(s);
	pair_run(p, 1 * MS);
}

/*
 * A full table whose entries include a TIME-WAIT connection: the oldest
 * TIME-WAIT ends early (RFC 9293 3.10.7.4's 2 MSL cut short, tw_recycled)
 * and the new connection takes its entry.
 */
static void test_time_wait_gives_way_when_full(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev1 = 0, ev2 = 0;
	struct tcp_sock *c1;
	int rc;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16);
	v.close_on_eof = true;
	set_limits(p.a.tcp, 1, 1, 1, 0);
	c1 = connect_a(&p, &ev1);
	pair_run(&p, 1 * MS);
	assert_true(ev1 & TCP_EV_CONNECTED);
	active_close(&p, c1);
	assert_int_equal(usage(p.a.tcp).time_wait, 1);
	assert_int_equal(usage(p.a.tcp).conns, 1);

	assert_non_null(tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, &ev2, &rc));
	assert_int_equal(tcp_stack_stats(p.a.tcp)->tw_recycled, 1);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->connect_refused, 0);
	assert_int_equal(usage(p.a.tcp).time_wait, 0);
	pair_run(&p, 1 * MS);
	assert_true(ev2 & TCP_EV_CONNECTED);
	pair_close(&p);
}

static void on_srv_close_at_eof(struct tcp_sock *s, uint32_t events, void *ctx)
{
	uint8_t b[256];

	(void)ctx;
	while (tcp_sock_read(s, b, sizeof(b)))
		;
	if (events & TCP_EV_EOF)
		tcp_sock_close(s);
}

static void on_accept_closing(struct tcp_listener *l, void *ctx)
{
	(void)ctx;
	while (tcp_accept(l, on_srv_close_at_eof, NULL))
		;
}

/*
 * A client that closes first, with 16 client ports: after 16 connections
 * every port is held by a TIME-WAIT of its own, and the 17th connect takes
 * over the oldest (Linux's tcp_tw_reuse: timestamps on), with an ISS above
 * all the old connection sent, instead of failing with -EADDRNOTAVAIL.
 */
static void test_connect_reuses_own_time_wait(void **state)
{
	struct tcp_pair p;
	struct tcp_sock *c;
	uint32_t ev = 0, first_max = 0;
	uint16_t first_port = 0;
	int rc;

	(void)state;
	pair_reserved_lo = 65535 - 15;
	pair_stacks(&p, true);
	pair_reserved_lo = 61440;
	p.lst = tcp_listen_on(p.b.tcp, PAIR_PORT, 16, on_accept_closing, NULL, &rc);
	assert_non_null(p.lst);
	for (unsigned i = 0; i < 16; i++) {
		ev = 0;
		c = connect_a(&p, &ev);
		pair_run(&p, 1 * MS);
		assert_true(ev & TCP_EV_CONNECTED);
		assert_true(tcp_sock_conn(c)->ts_ok);
		if (i == 0) {
			first_port = tcp_sock_conn(c)->tuple.lport;
			first_max = tcp_sock_conn(c)->snd_max + 1; /* and the FIN */
		}
		active_close(&p, c);
	}
	assert_int_equal(usage(p.a.tcp).time_wait, 16);
	ev = 0;
	c = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, &ev, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(c);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->tw_reused, 1);
	assert_int_equal(tcp_sock_conn(c)->tuple.lport, first_port);
	assert_int_equal(tcp_sock_conn(c)->iss, first_max + 65535 + 2);
	assert_int_equal(usage(p.a.tcp).time_wait, 15);
	pair_run(&p, 1 * MS);
	assert_true(ev & TCP_EV_CONNECTED);
	tcp_sock_close(c);
	pair_close(&p);
}

/*
 * Forty connections whose data all goes unanswered at once: their probes
 * and RTOs come due together. With a budget of 8 a poll fires at most 8
 * connection timers (counted timer_budget_hit) and the rest wait for the
 * next polls; none is lost: every connection still probes and times out.
 */
static void test_timer_budget_spreads_due_timers(void **state)
{
	enum { N = 40 };
	struct tcp_pair p;
	struct tcp_sock *cs[N];
	struct tcp_stack_stats sum;
	static const uint8_t b[100];
	uint32_t ev = 0;
	int rc;

	(void)state;
	pair_stacks(&p, true);
	p.lst = tcp_listen_on(p.b.tcp, PAIR_PORT, 64, on_accept_closing, NULL, &rc);
	assert_non_null(p.lst);
	for (unsigned i = 0; i < N; i++)
		cs[i] = connect_a(&p, &ev);
	pair_run(&p, 1 * MS);
	assert_int_equal(usage(p.b.tcp).conns, N);
	tcp_stack_set_timer_budget(p.a.tcp, 8);
	p.hold_b = true; /* nothing b sends arrives */
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(tcp_sock_send(cs[i], b, sizeof(b)), sizeof(b));
	pair_run(&p, 2000 * MS);
	tcp_stack_stats_sum(p.a.tcp, &sum);
	assert_true(tcp_stack_stats(p.a.tcp)->timer_budget_hit > 0);
	assert_true(sum.timeouts >= N); /* every connection's RTO fired, none lost */
	for (unsigned i = 0; i < N; i++)
		tcp_sock_abort(cs[i]);
	pair_discard_tx(&p.b);
	p.hold_b = false;
	pair_run(&p, 1 * MS);
	pair_close(&p);
}

/*
 * The timer budget spent on nothing: a connection left with no deadline
 * (all it sent acknowledged, nothing to time) is taken off the timer
 * wheel, so no timer of it fires later for nothing, taking a poll's
 * budget from connections whose timers are due. With a budget of one
 * timer a poll, timer_budget_hit counts each poll that fired one: once
 * the ACK is in, none does.
 */
static void test_idle_conn_fires_no_timer(void **state)
{
	static const uint8_t b[100];
	const struct tcp_stack_stats *sa;
	const struct tcp_conn *cc;
	struct tcp_pair p;
	uint64_t hit;

	(void)state;
	pair_open(&p, true);
	sa = tcp_stack_stats(p.a.tcp);
	cc = tcp_sock_conn(p.cli);
	tcp_stack_set_timer_budget(p.a.tcp, 1);
	assert_int_equal(tcp_sock_send(p.cli, b, sizeof(b)), sizeof(b));
	for (unsigned i = 0; i < 1000 && cc->snd_una != cc->snd_max; i++)
		pair_step(&p);
	assert_int_equal(cc->snd_una, cc->snd_max);
	assert_true(tcp_next_deadline(cc) == UINT64_MAX);
	hit = sa->timer_budget_hit;
	pair_run(&p, 20 * MS); /* well past the RTO the data had */
	assert_int_equal(sa->timer_budget_hit, hit);
	pair_close(&p);
}

/*
 * A limit lowered below what is held: the table is fuller than full, and
 * ending one TIME-WAIT would not make room, so none is ended (its 2 MSL is
 * not cut short for nothing) and connect() gets -ENOBUFS. Once the open
 * connections are gone the table is just full, and the TIME-WAIT gives
 * way as usual.
 */
static void test_time_wait_kept_when_it_cannot_make_room(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev[4] = {0};
	struct tcp_sock *c[3];
	int rc;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16);
	v.close_on_eof = true;
	set_limits(p.a.tcp, 3, 3, 1, 0);
	for (unsigned i = 0; i < 3; i++)
		c[i] = connect_a(&p, &ev[i]);
	pair_run(&p, 1 * MS);
	active_close(&p, c[0]);
	assert_int_equal(usage(p.a.tcp).time_wait, 1);
	set_limits(p.a.tcp, 1, 1, 1, 0);
	assert_null(tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, &ev[3], &rc));
	assert_int_equal(rc, -ENOBUFS);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->tw_recycled, 0);
	assert_int_equal(usage(p.a.tcp).time_wait, 1);
	tcp_sock_abort(c[1]);
	tcp_sock_abort(c[2]);
	pair_run(&p, 1 * MS);
	assert_int_equal(usage(p.a.tcp).conns, 1);
	assert_non_null(tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, &ev[3], &rc));
	assert_int_equal(tcp_stack_stats(p.a.tcp)->tw_recycled, 1);
	pair_run(&p, 1 * MS);
	assert_true(ev[3] & TCP_EV_CONNECTED);
	pair_close(&p);
}

/*
 * RFC 6191's reopen of a TIME-WAIT by a new SYN, with the table limit
 * lowered below what the table holds: cutting the TIME-WAIT short would
 * not make room for the new connection, so it stays (its guard is not
 * given up for nothing) and the SYN is dropped for the peer to send again.
 * Once the other connections are gone the SYN reopens it as usual.
 */
static void test_time_wait_reopen_deferred_without_room(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev[3] = {0};
	struct tcp_sock *c[3];
	struct tcp_repr r = {.dport = PAIR_PORT, .flags = RTE_TCP_SYN_FLAG, .window = 65535};

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16);
	for (unsigned i = 0; i < 3; i++)
		c[i] = connect_a(&p, &ev[i]);
	pair_run(&p, 1 * MS);
	assert_int_equal(v.accepted, 3);
	r.sport = tcp_sock_conn(c[0])->tuple.lport;
	r.seq = tcp_sock_conn(c[0])->snd_max + 100000;
	tcp_sock_close(v.s[0]); /* the server first: it keeps TIME-WAIT */
	pair_run(&p, 1 * MS);
	tcp_sock_close(c[0]);
	pair_run(&p, 1 * MS);
	assert_int_equal(usage(p.b.tcp).time_wait, 1);
	assert_int_equal(usage(p.b.tcp).conns, 3);
	set_limits(p.b.tcp, 1, 1, 1, 0);

	p.hold_b = true;
	pair_inject(&p, &p.b, &r);
	pair_step(&p);
	assert_int_equal(p.b.fp.n_tx, 0);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->tw_reopen_deferred, 1);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->tw_reopened, 0);
	assert_int_equal(usage(p.b.tcp).time_wait, 1);

	pair_discard_tx(&p.b);
	p.hold_b = false;
	tcp_sock_abort(v.s[1]);
	tcp_sock_abort(v.s[2]);
	tcp_sock_abort(c[1]);
	tcp_sock_abort(c[2]);
	pair_run(&p, 1 * MS);
	assert_int_equal(usage(p.b.tcp).conns, 1);
	p.hold_b = true;
	pair_inject(&p, &p.b, &r);
	pair_step(&p);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->tw_reopened, 1);
	assert_int_equal(p.b.fp.n_tx, 1); /* the SYN-ACK */
	assert_int_equal(usage(p.b.tcp).time_wait, 0);
	pair_discard_tx(&p.b);
	p.hold_b = false;
	pair_close(&p);
}

/*
 * max_time_wait: a connection entering TIME-WAIT beyond the cap ends the
 * oldest one's (tw_overflow); the newest keeps its 2 MSL, when delayed
 * duplicates are likeliest (RFC 1337). With the cap at 0 none stays.
 */
static void test_time_wait_cap_ends_oldest(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev[3] = {0};
	struct tcp_sock *c[3];
	const struct tcp_stack_stats *sa;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16);
	v.close_on_eof = true;
	set_limits(p.a.tcp, 8, 8, 1, 0);
	sa = tcp_stack_stats(p.a.tcp);
	for (unsigned i = 0; i < 3; i++)
		c[i] = connect_a(&p, &ev[i]);
	pair_run(&p, 1 * MS);
	active_close(&p, c[0]);
	assert_int_equal(usage(p.a.tcp).time_wait, 1);
	assert_int_equal(sa->tw_overflow, 0);
	active_close(&p, c[1]);
	assert_int_equal(usage(p.a.tcp).time_wait, 1);
	assert_int_equal(sa->tw_overflow, 1);
	assert_int_equal(tcp_stack_sockets(p.a.tcp), 2); /* c[1] in TIME-WAIT, c[2] open */

	set_limits(p.a.tcp, 8, 8, 0, 0);
	active_close(&p, c[2]); /* ends c[1]'s TIME-WAIT, and skips its own */
	assert_int_equal(usage(p.a.tcp).time_wait, 0);
	assert_int_equal(sa->tw_overflow, 3);
	assert_int_equal(tcp_stack_sockets(p.a.tcp), 0);
	assert_int_equal(usage(p.a.tcp).conns, 0);
	pair_close(&p);
}

/* Half-close @s from the client: with the server closing at EOF it ends in TIME-WAIT, still the
 * application's. */
static void active_shutdown(struct tcp_pair *p, struct tcp_sock *s)
{
	tcp_sock_shutdown(s);
	pair_run(p, 1 * MS);
	assert_int_equal(tcp_sock_conn(s)->state, TCP_TIME_WAIT);
}

/*
 * TIME-WAIT connections end oldest first, whichever limit ends them: the
 * cap (max_time_wait) when one more enters, then a full table when a new
 * connection needs an entry. The newer ones keep their 2 MSL, when stray
 * duplicates are likeliest (RFC 1337). The client only half-closes, so its
 * sockets stay its own and each one's state can be read.
 */
static void test_time_wait_ends_oldest_first(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev[5] = {0};
	struct tcp_sock *c[5];
	const struct tcp_stack_stats *sa;
	int rc;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16);
	v.close_on_eof = true;
	set_limits(p.a.tcp, 8, 8, 2, 0);
	sa = tcp_stack_stats(p.a.tcp);
	for (unsigned i = 0; i < 4; i++)
		c[i] = connect_a(&p, &ev[i]);
	pair_run(&p, 1 * MS);
	active_shutdown(&p, c[0]);
	active_shutdown(&p, c[1]);
	assert_int_equal(usage(p.a.tcp).time_wait, 2);
	assert_int_equal(sa->tw_overflow, 0);

	/* One more than the cap: the oldest ends, neither the one after it nor the newest. */
	tcp_sock_shutdown(c[2]);
	pair_run(&p, 1 * MS);
	assert_int_equal(sa->tw_overflow, 1);
	assert_int_equal(tcp_sock_conn(c[0])->state, TCP_CLOSED);
	assert_int_equal(tcp_sock_conn(c[1])->state, TCP_TIME_WAIT);
	assert_int_equal(tcp_sock_conn(c[2])->state, TCP_TIME_WAIT);
	/* Again: the oldest is now the second. */
	tcp_sock_shutdown(c[3]);
	pair_run(&p, 1 * MS);
	assert_int_equal(sa->tw_overflow, 2);
	assert_int_equal(tcp_sock_conn(c[1])->state, TCP_CLOSED);
	assert_int_equal(tcp_sock_conn(c[2])->state, TCP_TIME_WAIT);
	assert_int_equal(tcp_sock_conn(c[3])->state, TCP_TIME_WAIT);
	assert_int_equal(usage(p.a.tcp).time_wait, 2);
	assert_int_equal(usage(p.a.tcp).conns, 2);

	/* A full table: a new connection takes the entry of the oldest left, the third. */
	set_limits(p.a.tcp, 2, 2, 2, 0);
	c[4] = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, &ev[4], &rc);
	assert_non_null(c[4]);
	assert_int_equal(sa->tw_recycled, 1);
	assert_int_equal(tcp_sock_conn(c[2])->state, TCP_CLOSED);
	assert_int_equal(tcp_sock_conn(c[3])->state, TCP_TIME_WAIT);
	assert_int_equal(usage(p.a.tcp).time_wait, 1);
	assert_int_equal(usage(p.a.tcp).conns, 2);
	pair_run(&p, 1 * MS);
	assert_true(ev[4] & TCP_EV_CONNECTED);
	for (unsigned i = 0; i < 5; i++)
		tcp_sock_close(c[i]);
	pair_run(&p, 1 * MS);
	pair_close(&p);
}

/*
 * max_half_open, SYN cookies on (RFC 4987 3.6): SYN-RECEIVED connections
 * from SYNs that are never completed fill the cap, across listeners; the
 * next SYN gets a cookie and no state (syncookies_half_open), and a real
 * client's handshake completes through it.
 */
static void test_half_open_cap_answers_with_cookies(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev = 0;
	const struct tcp_stack_stats *sb;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 64); /* the backlog is not what stops them */
	set_limits(p.b.tcp, 64, 2, 32, 0);
	sb = tcp_stack_stats(p.b.tcp);
	pair_syn_nowhere(&p, 50001);
	pair_syn_nowhere(&p, 50002);
	assert_int_equal(usage(p.b.tcp).half_open, 2);
	assert_int_equal(sb->syncookies_sent, 0);
	pair_syn_nowhere(&p, 50003);
	assert_int_equal(sb->syncookies_sent, 1);
	assert_int_equal(sb->syncookies_half_open, 1);
	assert_int_equal(sb->conns_active, 2);

	connect_a(&p, &ev);
	pair_run(&p, 1 * MS);
	assert_true(ev & TCP_EV_CONNECTED);
	assert_int_equal(sb->syncookies_ok, 1);
	assert_int_equal(v.accepted, 1);
	assert_int_equal(usage(p.b.tcp).half_open, 2);
	pair_close(&p);
}

/*
 * max_half_open, SYN cookies off: the SYN beyond the cap is dropped
 * (syn_dropped_half_open, drop TCP_HALF_OPEN_LIMIT), not as a backlog's.
 * The half-open connections' SYN-ACKs go unanswered until the timer gives
 * up (RFC 4987 3.2's timer; half_open_timeouts); then SYNs are taken again.
 */
static void test_half_open_cap_drops_and_times_out(void **state)
{
	struct tcp_pair p;
	struct tcp_config cfg;
	struct srv v;
	uint32_t ev = 0;
	const struct tcp_stack_stats *sb;

	(void)state;
	pair_config(&cfg);
	cfg.syncookies = false;
	cfg.syn_retries = 1; /* SYN-ACK, one retransmission, then give up: 300 ms */
	pair_stacks_cfg(&p, true, &cfg);
	listen_b(&p, &v, 64);
	set_limits(p.b.tcp, 64, 2, 32, 0);
	sb = tcp_stack_stats(p.b.tcp);
	pair_syn_nowhere(&p, 50001);
	pair_syn_nowhere(&p, 50002);
	pair_syn_nowhere(&p, 50003);
	assert_int_equal(sb->syn_dropped_half_open, 1);
	assert_int_equal(sb->syn_dropped_backlog, 0);
	assert_int_equal(sb->syncookies_sent, 0);
	assert_int_equal(p.b.nif.ctr.drops[LUNAR_DROP_TCP_HALF_OPEN_LIMIT], 1);
	assert_int_equal(usage(p.b.tcp).half_open, 2);

	for (uint64_t end = p.now + 400 * MS; p.now < end;) { /* the SYN-ACKs go nowhere */
		p.hold_b = true;
		pair_step(&p);
		pair_discard_tx(&p.b);
	}
	p.hold_b = false;
	assert_int_equal(sb->half_open_timeouts, 2);
	assert_int_equal(usage(p.b.tcp).half_open, 0);
	assert_int_equal(sb->conns_active, 0);

	connect_a(&p, &ev);
	pair_run(&p, 1 * MS);
	assert_true(ev & TCP_EV_CONNECTED);
	assert_int_equal(v.accepted, 1);
	pair_close(&p);
}

/*
 * half_open_timeouts counts the half-open connections whose SYN-ACKs went
 * unanswered until the timer gave up (RFC 4987 2.2's spoofed SYNs), not
 * those ended otherwise: closing their listener resets them (RFC 9293
 * 3.10.4), and they leave the half-open count without a timeout.
 */
static void test_half_open_closed_with_listener_not_timed_out(void **state)
{
	struct tcp_pair p;
	struct srv v;
	const struct tcp_stack_stats *sb;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 64);
	sb = tcp_stack_stats(p.b.tcp);
	pair_syn_nowhere(&p, 50001);
	pair_syn_nowhere(&p, 50002);
	assert_int_equal(usage(p.b.tcp).half_open, 2);
	tcp_listener_close(v.lst);
	p.lst = NULL;
	assert_int_equal(usage(p.b.tcp).half_open, 0);
	assert_int_equal(sb->conns_active, 0);
	assert_int_equal(sb->half_open_timeouts, 0);
	pair_run(&p, 1 * MS);
	pair_close(&p);
}

/*
 * snd_buf, through the stack: a send beyond the connection's buffer is
 * short (snd_buf_full), a full buffer takes nothing; ACKs bring
 * TCP_EV_WRITABLE and the rest goes, every byte intact.
 */
static void test_snd_buf_full_short_send(void **state)
{
	struct tcp_pair p;
	const struct tcp_stack_stats *sa;
	size_t sent;

	(void)state;
	pair_open(&p, true);
	sa = tcp_stack_stats(p.a.tcp);
	p.hold_b = true; /* no ACKs: nothing leaves the buffer */
	sent = send_stream(p.cli, 0, 300000);
	assert_int_equal(sent, 262144);
	assert_int_equal(sa->snd_buf_full, 1);
	assert_int_equal(tcp_sock_send_space(p.cli), 0);
	assert_int_equal(send_stream(p.cli, sent, 1000), 0);
	assert_int_equal(sa->snd_buf_full, 2);
	assert_int_equal(sa->snd_mem_limited, 0);
	p.hold_b = false;
	p.cli_events = 0;
	for (int i = 0; i < 100000 && p.rcvd_len < 300000; i++) {
		if (sent < 300000 && (p.cli_events & TCP_EV_WRITABLE))
			sent += send_stream(p.cli, sent, 300000 - sent);
		pair_step(&p);
	}
	pair_rcvd_ok(&p, 300000);
	pair_close(&p);
}

/*
 * mem_max, sending: sends stop at the cap (short, then nothing:
 * snd_mem_limited) for every connection of the stack, whoever holds the
 * memory. A connection refused with nothing in flight of its own gets
 * TCP_EV_WRITABLE once the stack is under 3/4 of the cap; nothing queued
 * is ever given up.
 */
static void test_mem_max_stops_sends_then_wakes(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev1 = 0, ev2 = 0, ev3 = 0;
	struct tcp_sock *c1, *c2, *c3;
	const struct tcp_stack_stats *sa;
	size_t sent1, sent2 = 0;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16);
	set_limits(p.a.tcp, 64, 32, 32, 64 << 10);
	sa = tcp_stack_stats(p.a.tcp);
	c1 = connect_a(&p, &ev1);
	c2 = connect_a(&p, &ev2);
	c3 = connect_a(&p, &ev3);
	pair_run(&p, 1 * MS);
	assert_int_equal(v.accepted, 3);

	p.hold_b = true;
	sent1 = send_stream(c1, 0, 100000);
	assert_int_equal(sent1, 64 << 10);
	assert_int_equal(sa->snd_mem_limited, 1);
	assert_int_equal(usage(p.a.tcp).mem_bytes, 64 << 10);
	assert_int_equal(tcp_sock_send_space(c2), 0);
	assert_int_equal(send_stream(c2, 0, 1000), 0);
	assert_int_equal(sa->snd_mem_limited, 2);
	assert_int_equal(sa->snd_buf_full, 0);
	/*
	 * A send the connection cannot take whatever the room says so, at
	 * mem_max too (not 0, "later"): after a shutdown -EPIPE, after an
	 * abort its error; neither is counted as blocked.
	 */
	{
		static const uint8_t b[10];

		assert_int_equal(tcp_sock_send_space(c3), 0);
		tcp_sock_shutdown(c3);
		assert_int_equal(tcp_sock_send(c3, b, sizeof(b)), -EPIPE);
		assert_int_equal(tcp_sock_send_zc(c3, b, sizeof(b)), -EPIPE);
		assert_int_equal(sa->snd_mem_limited, 2);
		tcp_sock_abort(c3);
	}

	ev2 = 0;
	p.hold_b = false;
	for (int i = 0; i < 1000 && !(ev2 & TCP_EV_WRITABLE); i++)
		pair_step(&p);
	assert_true(ev2 & TCP_EV_WRITABLE);
	assert_true(usage(p.a.tcp).mem_bytes < 48 << 10);

	for (int i = 0; i < 200000 && (v.k[0].got < 100000 || v.k[1].got < 1000); i++) {
		if (sent1 < 100000)
			sent1 += send_stream(c1, sent1, 100000 - sent1);
		if (sent2 < 1000)
			sent2 += send_stream(c2, sent2, 1000 - sent2);
		pair_step(&p);
	}
	assert_int_equal(v.k[0].got, 100000);
	assert_int_equal(v.k[1].got, 1000);
	pair_run(&p, 1 * MS);
	assert_int_equal(usage(p.a.tcp).mem_bytes, 0);
	pair_close(&p);
}

/*
 * A send cut where mem_max leaves exactly the room the connection's own
 * buffer does: its own buffer is what cut it (snd_buf_full), not mem_max
 * (snd_mem_limited counts only sends mem_max cut shorter).
 */
static void test_snd_cut_at_own_buffer_and_mem_max_alike(void **state)
{
	struct tcp_pair p;
	const struct tcp_stack_stats *sa;

	(void)state;
	pair_open(&p, true);
	set_limits(p.a.tcp, 64, 32, 32, 262144); /* the send buffer's size */
	sa = tcp_stack_stats(p.a.tcp);
	p.hold_b = true;
	assert_int_equal(send_stream(p.cli, 0, 300000), 262144);
	assert_int_equal(usage(p.a.tcp).mem_bytes, 262144);
	assert_int_equal(tcp_sock_send_space(p.cli), 0);
	assert_int_equal(sa->snd_buf_full, 1);
	assert_int_equal(sa->snd_mem_limited, 0);
	p.hold_b = false;
	pair_close(&p);
}

/*
 * mem_max's wake-up (docs/LIMITS.md, "Memory"): a sender refused at the
 * cap gets TCP_EV_WRITABLE once the stack is under 3/4 of it, not at 3/4,
 * and in that same poll, though with memory still above half of mem_max
 * the stack stays under pressure (no walk of every connection that would
 * bring the event along).
 */
static void test_mem_max_wakes_under_three_quarters(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev[4] = {0};
	struct tcp_sock *c[4];
	const struct tcp_stack_stats *sa;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16);
	set_limits(p.a.tcp, 64, 32, 32, 64 << 10);
	sa = tcp_stack_stats(p.a.tcp);
	for (unsigned i = 0; i < 4; i++)
		c[i] = connect_a(&p, &ev[i]);
	pair_run(&p, 1 * MS);
	assert_int_equal(v.accepted, 4);

	p.hold_b = true; /* nothing is acknowledged: what is sent stays charged */
	assert_int_equal(send_stream(c[0], 0, 40 << 10), 40 << 10);
	assert_int_equal(send_stream(c[1], 0, 8 << 10), 8 << 10);
	assert_int_equal(send_stream(c[2], 0, 16 << 10), 16 << 10);
	assert_int_equal(usage(p.a.tcp).mem_bytes, 64 << 10);
	assert_int_equal(send_stream(c[3], 0, 1000), 0);
	assert_int_equal(sa->snd_mem_limited, 1);

	ev[3] = 0;
	tcp_sock_abort(c[2]);
	assert_int_equal(usage(p.a.tcp).mem_bytes, 48 << 10); /* 3/4 exactly */
	pair_run(&p, 1 * MS);
	assert_false(ev[3] & TCP_EV_WRITABLE);

	tcp_sock_abort(c[1]); /* 40K: under 3/4, above half */
	pair_step(&p);
	assert_true(ev[3] & TCP_EV_WRITABLE);
	assert_true(tcp_sock_send_space(c[3]) > 0);
	pair_discard_tx(&p.b);
	p.hold_b = false;
	pair_close(&p);
}

#define WOKEN 1100

/*
 * Sockets woken together; the first callback aborts 50 created first and
 * 50 created last (each sends a RST: the pair carries about a pool's
 * worth of frames a step), so that whichever order the stack queued them
 * in, some of those aborted are beyond the 1024 one poll dispatches.
 */
struct woken {
	struct tcp_sock *s[WOKEN];
	unsigned calls, accepted, aborted;
};

static void on_woken(struct tcp_sock *s, uint32_t events, void *ctx)
{
	struct woken *w = ctx;

	unsigned live = 0;

	if (!(events & TCP_EV_WRITABLE))
		return;
	for (unsigned i = 0; i < WOKEN; i++)
		live += w->s[i] == s;
	assert_int_equal(live, 1); /* an aborted socket gets no callback */
	w->calls++;
	if (w->aborted)
		return;
	for (unsigned i = 0; i < WOKEN; i++)
		if (w->s[i] && w->s[i] != s && (i < 58 || i >= WOKEN - 50)) {
			tcp_sock_abort(w->s[i]);
			w->s[i] = NULL;
			w->aborted++;
		}
}

static void on_accept_any(struct tcp_listener *l, void *ctx)
{
	struct woken *w = ctx;

	while (tcp_accept(l, NULL, NULL))
		w->accepted++;
}

/*
 * More than 1024 sockets woken at once (mem_max freed: every blocked
 * sender gets TCP_EV_WRITABLE in one poll), and the first callback aborts
 * all the others. A poll dispatches at most 1024 events; the sockets
 * still queued behind them were freed at the poll's end while the queue
 * still pointed at them (the ASan build caught it as a use after free in
 * the next poll's dispatch). They wait on the dead list until dispatched.
 */
static void test_killed_while_queued_not_freed(void **state)
{
	struct tcp_pair p;
	struct tcp_listener *lst;
	struct woken *w = calloc(1, sizeof(*w));
	const struct tcp_stack_stats *sa;
	int rc;

	(void)state;
	assert_non_null(w);
	pair_max_conns = 2048;
	pair_stacks(&p, true);
	pair_max_conns = 64;
	set_limits(p.a.tcp, 2048, 2048, 32, 64 << 10);
	lst = tcp_listen_on(p.b.tcp, PAIR_PORT, 2048, on_accept_any, w, &rc);
	assert_non_null(lst);
	p.lst = lst;
	for (unsigned i = 0; i < WOKEN; i++) {
		w->s[i] = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_woken, w, &rc);
		assert_non_null(w->s[i]);
		if (i % 32 == 31) /* a port burst's worth at a time: no SYN waits for its RTO */
			pair_run(&p, 20 * PAIR_STEP_NS);
	}
	for (unsigned i = 0; i < 2000 && w->accepted < WOKEN; i++)
		pair_step(&p);
	assert_int_equal(w->accepted, WOKEN);
	sa = tcp_stack_stats(p.a.tcp);
	p.hold_b = true;
	for (unsigned i = 0; i < WOKEN; i++)
		send_stream(w->s[i], 0, 8192);
	assert_true(sa->snd_mem_limited > 1024); /* blocked: all but the first eight */
	p.hold_b = false;
	for (unsigned i = 0; i < 1000 && !w->calls; i++)
		pair_step(&p);
	assert_true(w->aborted >= 99);
	pair_run(&p, 1 * MS); /* the next polls dispatch and free the rest */
	assert_int_equal(usage(p.a.tcp).conns, WOKEN - w->aborted);
	assert_true(w->calls > 900); /* the woken not aborted; no aborted one (on_woken) */
	for (unsigned i = 0; i < WOKEN; i++)
		if (w->s[i]) {
			tcp_sock_abort(w->s[i]);
			if (i % 32 == 31)
				pair_step(&p); /* the RSTs a port burst at a time */
		}
	pair_run(&p, 1 * MS);
	free(w);
	pair_close(&p);
}

/*
 * A pair whose server (b) does not read, its stack's mem_max @mem_max
 * (0: none); one connection from a, accepted. @return the client's socket.
 */
static struct tcp_sock *lazy_receiver(struct tcp_pair *p, struct srv *v, uint32_t *ev,
				      uint64_t mem_max)
{
	struct tcp_sock *c;

	pair_stacks(p, true);
	listen_b(p, v, 16);
	v->lazy = true;
	if (mem_max)
		set_limits(p->b.tcp, 64, 32, 32, mem_max);
	c = connect_a(p, ev);
	pair_run(p, 1 * MS);
	assert_int_equal(v->accepted, 1);
	return c;
}

/* lazy_receiver() with mem_max 64K. */
static struct tcp_sock *lazy_receiver_capped(struct tcp_pair *p, struct srv *v, uint32_t *ev)
{
	return lazy_receiver(p, v, ev, 64 << 10);
}

/*
 * mem_max, receiving, with an application that does not read: from 3/4
 * of the cap the window stops opening and out-of-order data is not kept,
 * at the cap payload is not kept (rcv_mem_limited) though still ACK-
 * processed. What was acknowledged is all queued (nothing ACKed is ever
 * dropped), the right edge offered never moves left (RFC 7323 2.4, RFC
 * 9293 3.8.6.2.2), and a second connection holding nothing still gets its
 * data in (tcp_rmem[0]'s guarantee). Once the application reads, every
 * byte arrives, in order.
 */
static void test_mem_max_receive_keeps_acked_data(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev1 = 0, ev2 = 0;
	struct tcp_sock *c1, *c2;
	const struct tcp_stack_stats *sb;
	const struct tcp_conn *sc;
	size_t sent = 0;
	uint32_t edge;

	(void)state;
	c1 = lazy_receiver_capped(&p, &v, &ev1);
	sb = tcp_stack_stats(p.b.tcp);
	sc = tcp_sock_conn(v.s[0]);
	edge = sc->rcv_adv;

	sent = send_stream(c1, 0, 200000);
	for (int i = 0; i < 2000; i++) {
		pair_step(&p);
		assert_false(seq_lt(sc->rcv_adv, edge));
		edge = sc->rcv_adv;
		/* Everything acknowledged is queued for the application. */
		assert_int_equal(sc->rcv_nxt - sc->irs - 1, tcp_sock_readable(v.s[0]));
		assert_false(seq_gt(tcp_sock_conn(c1)->snd_una, sc->rcv_nxt));
	}
	assert_true(sb->rcv_mem_limited > 0);
	assert_true(tcp_sock_readable(v.s[0]) >= 64 << 10);
	assert_true(usage(p.b.tcp).mem_bytes < (64 << 10) + 1500);
	assert_true(sb->mem_pressure_ns > 0);

	c2 = connect_a(&p, &ev2);
	pair_run(&p, 1 * MS);
	assert_int_equal(v.accepted, 2);
	assert_int_equal(send_stream(c2, 0, 1000), 1000);
	pair_run(&p, 1 * MS);
	assert_int_equal(tcp_sock_readable(v.s[1]), 1000);

	v.k[0].lazy = v.k[1].lazy = false;
	sink_read(v.s[1], &v.k[1]);
	for (int i = 0; i < 300000 && v.k[0].got < 200000; i++) {
		sink_read(v.s[0], &v.k[0]);
		if (sent < 200000)
			sent += send_stream(c1, sent, 200000 - sent);
		pair_step(&p);
	}
	assert_int_equal(v.k[0].got, 200000);
	assert_int_equal(v.k[1].got, 1000);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 0);
	pair_close(&p);
}

/* Read @n bytes the server holds unread (they leave mem_max's count). */
static void read_some(struct tcp_sock *s, size_t n)
{
	static uint8_t b[4096];

	while (n) {
		size_t k = tcp_sock_read(s, b, n < sizeof(b) ? n : sizeof(b));

		assert_true(k > 0);
		n -= k;
	}
}

/*
 * Pressure is left only well clear of it (under half of mem_max): memory
 * that falls just under 3/4 stays under pressure, so hovering at the
 * threshold cannot cost a walk of every connection every other sample.
 * Below half it ends.
 */
static void test_mem_pressure_ends_below_half(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev = 0;
	struct tcp_sock *c;
	const struct tcp_stack_stats *sb;
	uint64_t before;

	(void)state;
	c = lazy_receiver_capped(&p, &v, &ev);
	sb = tcp_stack_stats(p.b.tcp);
	send_stream(c, 0, 200000);
	pair_run(&p, 5 * MS);
	assert_true(usage(p.b.tcp).mem_bytes >= 60 << 10);
	p.hold_a = true;					  /* nothing more arrives */
	read_some(v.s[0], usage(p.b.tcp).mem_bytes - (40 << 10)); /* 40K: under 3/4, over 1/2 */
	pair_run(&p, 1 * MS);
	before = sb->mem_pressure_ns;
	pair_run(&p, 1 * MS);
	assert_true(sb->mem_pressure_ns >= before + 9 * MS / 10); /* still under pressure */
	read_some(v.s[0], 20 << 10);				  /* 20K: under half */
	pair_run(&p, 1 * MS);
	before = sb->mem_pressure_ns;
	pair_run(&p, 1 * MS);
	assert_int_equal(sb->mem_pressure_ns, before); /* over */
	p.hold_a = false;
	pair_close(&p);
}

/*
 * What mem_max counts (docs/LIMITS.md): received bytes the application
 * holds zero-copy count until given back, as queued ones do, and so do
 * out-of-order ones held beyond a hole.
 */
static void test_mem_counts_held_and_out_of_order(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev = 0;
	struct tcp_sock *c;
	struct tcp_slice sl[16];
	uint32_t held = 0;
	unsigned n;

	(void)state;
	c = lazy_receiver(&p, &v, &ev, 0);
	assert_int_equal(send_stream(c, 0, 1000), 1000);
	pair_run(&p, 1 * MS);
	assert_int_equal(send_stream(c, 1000, 2000), 2000);
	pair_run(&p, 1 * MS);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 3000);

	/* Held zero-copy: still charged, until each slice is given back. */
	n = tcp_sock_read_zc(v.s[0], sl, 16);
	assert_true(n >= 2);
	for (unsigned i = 0; i < n; i++)
		held += sl[i].len;
	assert_int_equal(held, 3000);
	tcp_sock_zc_done(v.s[0], sl[0].data, sl[0].len);
	assert_int_equal(tcp_sock_held(v.s[0]), 3000 - sl[0].len);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 3000 - sl[0].len);
	tcp_sock_zc_done_v(v.s[0], &sl[1], n - 1);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 0);

	/* Out of order: the first segment lost on the way, the second kept beyond the hole. */
	p.mtu_a = 1000;
	assert_int_equal(send_stream(c, 3000, 1200), 1200);
	assert_int_equal(send_stream(c, 4200, 100), 100);
	pair_step(&p);
	pair_step(&p);
	p.mtu_a = 0;
	assert_int_equal(tcp_sock_readable(v.s[0]), 0);
	assert_int_equal(tcp_sock_conn(v.s[0])->reass.n, 1);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 100);
	pair_run(&p, 20 * MS); /* the retransmission fills the hole */
	assert_int_equal(tcp_sock_readable(v.s[0]), 1300);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 1300);
	pair_close(&p);
}

/*
 * What a connection holds when it ends leaves mem_max's count with it:
 * data never read, and what the application still holds zero-copy after
 * closing (docs/LIMITS.md: not charged), given back later without the
 * socket.
 */
static void test_mem_uncharged_when_conn_ends(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev = 0;
	struct tcp_sock *c;
	struct tcp_slice sl[1];

	(void)state;
	c = lazy_receiver(&p, &v, &ev, 0);
	assert_int_equal(send_stream(c, 0, 1000), 1000);
	pair_run(&p, 1 * MS);
	assert_int_equal(send_stream(c, 1000, 2000), 2000);
	pair_run(&p, 1 * MS);
	assert_int_equal(tcp_sock_read_zc(v.s[0], sl, 1), 1);
	assert_true(tcp_sock_readable(v.s[0]) > 0); /* the rest unread */
	tcp_sock_close(v.s[0]);			    /* unread data: a RST (RFC 1122 4.2.2.13) */
	assert_int_equal(usage(p.b.tcp).mem_bytes, 0);
	pair_run(&p, 1 * MS);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 0);
	tcp_sock_zc_done(NULL, sl[0].data, sl[0].len);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 0);
	pair_close(&p);
}

/*
 * lazy_receiver_capped(), then exactly mem_max of the stream, all of it
 * taken (each segment came under the cap): the server's stack holds
 * mem_max to the byte.
 */
static struct tcp_sock *receiver_at_cap(struct tcp_pair *p, struct srv *v, uint32_t *ev)
{
	struct tcp_sock *c = lazy_receiver_capped(p, v, ev);

	assert_int_equal(send_stream(c, 0, 64 << 10), 64 << 10);
	pair_run(p, 5 * MS);
	assert_int_equal(tcp_sock_readable(v->s[0]), 64 << 10);
	assert_int_equal(usage(p->b.tcp).mem_bytes, 64 << 10);
	assert_int_equal(tcp_stack_stats(p->b.tcp)->rcv_mem_limited, 0);
	return c;
}

/*
 * At mem_max exactly the pressure is critical ("at it", docs/LIMITS.md):
 * the next segment's payload is not kept (rcv_mem_limited), in order and
 * in the window though it is.
 */
static void test_mem_max_reached_is_critical(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev = 0;
	struct tcp_sock *c;
	const struct tcp_stack_stats *sb;

	(void)state;
	c = receiver_at_cap(&p, &v, &ev);
	sb = tcp_stack_stats(p.b.tcp);
	assert_int_equal(send_stream(c, 64 << 10, 100), 100);
	pair_run(&p, 2 * MS);
	assert_true(sb->rcv_mem_limited >= 1);
	assert_int_equal(tcp_sock_readable(v.s[0]), 64 << 10);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 64 << 10);
	pair_close(&p);
}

/*
 * At mem_max a connection holding less than one MSS is spared the
 * critical level, not the low one: its in-order data is taken, but an
 * out-of-order segment is not kept (ooo_refused, counted in
 * rcv_mem_limited) and has to come again.
 */
static void test_mem_max_spared_conn_keeps_no_ooo(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev1 = 0, ev2 = 0;
	struct tcp_sock *c2;
	const struct tcp_stack_stats *sb;
	const struct tcp_conn *sc;
	uint64_t limited;

	(void)state;
	receiver_at_cap(&p, &v, &ev1);
	sb = tcp_stack_stats(p.b.tcp);
	c2 = connect_a(&p, &ev2);
	pair_run(&p, 1 * MS);
	assert_int_equal(v.accepted, 2);
	sc = tcp_sock_conn(v.s[1]);
	limited = sb->rcv_mem_limited;

	p.mtu_a = 1000; /* the first segment is lost on the way */
	assert_int_equal(send_stream(c2, 0, 1200), 1200);
	assert_int_equal(send_stream(c2, 1200, 100), 100);
	pair_step(&p);
	pair_step(&p);
	p.mtu_a = 0;
	assert_int_equal(sc->stats.ooo_refused, 1);
	assert_int_equal(sc->reass.n, 0);
	assert_int_equal(sb->rcv_mem_limited, limited + 1);
	pair_run(&p, 20 * MS);
	assert_int_equal(tcp_sock_readable(v.s[1]), 1300);
	pair_close(&p);
}

/*
 * Two connections to a server (b) that does not read, its stack's mem_max
 * 64K, each with a 16K receive window; the first one's window filled and
 * shut (16K queued, unread). @ev1, @ev2: the clients' event bits.
 */
static void first_window_shut(struct tcp_pair *p, struct srv *v, uint32_t *ev1, uint32_t *ev2)
{
	struct tcp_config cfg;
	struct tcp_sock *c;

	pair_config(&cfg);
	cfg.rcv_buf = 16 << 10; /* a window the client can fill */
	pair_stacks_cfg(p, true, &cfg);
	listen_b(p, v, 16);
	v->lazy = true;
	set_limits(p->b.tcp, 64, 32, 32, 64 << 10);
	c = connect_a(p, ev1);
	connect_a(p, ev2);
	pair_run(p, 1 * MS);
	assert_int_equal(v->accepted, 2);
	assert_int_equal(send_stream(c, 0, 16 << 10), 16 << 10);
	pair_run(p, 1 * MS);
	assert_int_equal(tcp_sock_readable(v->s[0]), 16 << 10);
}

/*
 * Pressure that comes and goes between two samples of the stack (10 us)
 * still counts (mem_pressure_ns), and its end is announced as any other's
 * (docs/LIMITS.md, "Memory"): a connection whose window a read under it
 * left shut gets it opened in the next poll, without waiting for the
 * peer's probe.
 */
static void test_mem_pressure_between_samples(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev1 = 0, ev2 = 0;
	const struct tcp_stack_stats *sb;
	const struct tcp_conn *sc;
	uint32_t edge;

	(void)state;
	first_window_shut(&p, &v, &ev1, &ev2);
	sb = tcp_stack_stats(p.b.tcp);
	sc = tcp_sock_conn(v.s[0]);
	edge = sc->rcv_adv;
	assert_int_equal(edge, sc->rcv_nxt); /* shut */
	assert_int_equal(sb->mem_pressure_ns, 0);

	/*
	 * Between two polls the server's other connection fills mem_max (3/4 of it is still
	 * taken once the first has read all it holds)...
	 */
	assert_int_equal(send_stream(v.s[1], 0, 48 << 10), 48 << 10);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 64 << 10);
	read_some(v.s[0], 16 << 10); /* ...reads under it open no window... */
	assert_int_equal(sc->rcv_adv, edge);
	tcp_sock_abort(v.s[1]); /* ...and the memory is free again. */
	assert_int_equal(usage(p.b.tcp).mem_bytes, 0);
	pair_step(&p);
	assert_int_equal(sb->mem_pressure_ns, PAIR_STEP_NS);
	assert_true(seq_gt(sc->rcv_adv, edge));
	pair_close(&p);
}

/*
 * Receive queue compaction (docs/MEMORY.md): a peer sending one-byte
 * segments to an application that does not read. Without it each segment
 * would pin a packet buffer of the server's pool (1000 of them here) and
 * 3000 bytes would put the whole stack under memory pressure, every other
 * connection's windows with it; with it the small segments are copied
 * into a few packet buffers, and those they came in go back. Counted, no
 * pressure, and every byte read back in order when the application reads.
 */
static void test_tiny_segments_do_not_drain_pool(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev = 0;
	struct tcp_sock *c;
	const struct tcp_stack_stats *sb;
	struct tcp_stack_stats sum;
	struct rte_mempool *pool;
	unsigned idle, most = 0;
	size_t sent = 0;

	(void)state;
	pair_stacks(&p, true);
	pool = p.b.fp.base.pool;
	listen_b(&p, &v, 16);
	v.lazy = true;
	sb = tcp_stack_stats(p.b.tcp);
	c = connect_a(&p, &ev);
	pair_run(&p, 1 * MS);
	assert_int_equal(v.accepted, 1);
	idle = rte_mempool_in_use_count(pool);
	while (sent < 3000) {
		uint8_t b = pair_byte(sent);

		/* Nagle is off: a segment each (a 2 KiB Zbuf object each on the client, too) */
		if (tcp_sock_send(c, &b, 1) != 1)
			break;
		if (++sent % 16 == 0) {
			pair_step(&p);
			if (rte_mempool_in_use_count(pool) > most)
				most = rte_mempool_in_use_count(pool);
		}
	}
	pair_run(&p, 10 * MS);
	assert_true(most < idle + 64);
	assert_int_equal(sent, 3000);
	assert_int_equal(tcp_sock_readable(v.s[0]), 3000);
	assert_true(rte_mempool_in_use_count(pool) < idle + TCP_RCVQ_COMPACT_AFTER + 8);
	assert_int_equal(sb->mem_pressure_ns, 0);
	tcp_stack_stats_sum(p.b.tcp, &sum);
	assert_true(sum.rcvq_compacted > 3000 - 2 * TCP_RCVQ_COMPACT_AFTER);
	assert_int_equal(sum.rcvq_compacted_bytes, sum.rcvq_compacted);
	v.k[0].lazy = false;
	sink_read(v.s[0], &v.k[0]);
	assert_int_equal(v.k[0].got, 3000);
	pair_close(&p);
}

/* The limits' own checks: what is wrong is refused, and said. */
static void test_limits_checked(void **state)
{
	struct tcp_pair p;
	struct tcp_limits l;
	struct tcp_limits_spec sp = {.v = {.max_half_open = 100}, .given = TCP_LIMIT_HALF_OPEN};
	char err[256];

	(void)state;
	tcp_limits_default(&l, 64);
	assert_int_equal(l.max_half_open, 64);
	assert_int_equal(l.max_time_wait, 32);
	assert_int_equal(tcp_limits_check(&l, err, sizeof(err)), 0);
	l.mem_max = 1000;
	assert_int_equal(tcp_limits_check(&l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "mem=0"));
	assert_int_equal(tcp_limits_resolve(&sp, 64, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "raise conns or lower half-open"));
	assert_int_equal(tcp_limits_resolve(&sp, 1000, &l, err, sizeof(err)), 0);
	assert_int_equal(l.max_half_open, 100);

	pair_stacks(&p, true);
	tcp_limits_default(&l, 65); /* beyond the table the stack was made with */
	assert_int_equal(tcp_stack_set_limits(p.b.tcp, &l), -EINVAL);
	assert_int_equal(tcp_stack_limits(p.b.tcp)->max_conns, 64);
	pair_close(&p);
}

/*
 * A table of no connections is refused (tcp_limits.h: conns 1..2^24), by
 * the check and by the stack, which keeps what it had. A spec that gives
 * conns is resolved from it, not from the program's number: the defaults
 * (half-open, TIME-WAIT) follow the given conns.
 */
static void test_limits_conns_zero_and_given(void **state)
{
	struct tcp_pair p;
	struct tcp_limits l;
	struct tcp_limits_spec sp = {.v = {.max_conns = 100}, .given = TCP_LIMIT_CONNS};
	char err[256] = "";

	(void)state;
	tcp_limits_default(&l, 0);
	assert_int_equal(tcp_limits_check(&l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "conns=0"));
	assert_int_equal(tcp_limits_resolve(&sp, 1000, &l, err, sizeof(err)), 0);
	assert_int_equal(l.max_conns, 100);
	assert_int_equal(l.max_half_open, 100);
	assert_int_equal(l.max_time_wait, 50);

	pair_stacks(&p, true);
	tcp_limits_default(&l, 0);
	assert_int_equal(tcp_stack_set_limits(p.b.tcp, &l), -EINVAL);
	assert_int_equal(tcp_stack_limits(p.b.tcp)->max_conns, 64);
	pair_close(&p);
}

/*
 * A connection that dies with the listener before it was accepted
 * (RFC 9293 3.10.4: reset) takes what it held out of mem_max's count:
 * the data it received, never read.
 */
static void test_mem_uncharged_when_listener_closes(void **state)
{
	struct tcp_pair p;
	uint32_t ev = 0;
	struct tcp_sock *c;
	struct tcp_listener *l;
	int rc;

	(void)state;
	pair_stacks(&p, true);
	l = tcp_listen_on(p.b.tcp, PAIR_PORT, 4, NULL, NULL, &rc);
	assert_non_null(l);
	c = connect_a(&p, &ev);
	pair_run(&p, 1 * MS);
	assert_true(ev & TCP_EV_CONNECTED); /* waiting in the accept queue */
	assert_int_equal(send_stream(c, 0, 1000), 1000);
	pair_run(&p, 1 * MS);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 1000);
	tcp_listener_close(l);
	assert_int_equal(usage(p.b.tcp).conns, 0);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 0);
	pair_run(&p, 1 * MS);
	assert_true(ev & TCP_EV_RESET);
	tcp_sock_close(c);
	pair_close(&p);
}

/*
 * rcv_mem_limited counts each segment mem_max refused once: at the cap,
 * two segments whose payload is not kept, with the connection's own drops
 * from before, add exactly the connection's new drops.
 */
static void test_mem_limited_counts_each_drop_once(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev = 0;
	struct tcp_sock *c;
	const struct tcp_stack_stats *sb;
	const struct tcp_conn *sc;

	(void)state;
	c = receiver_at_cap(&p, &v, &ev);
	sb = tcp_stack_stats(p.b.tcp);
	sc = tcp_sock_conn(v.s[0]);
	assert_int_equal(send_stream(c, 64 << 10, 100), 100);
	pair_run(&p, 2 * MS);
	assert_true(sc->stats.rcv_mem_dropped >= 1);
	assert_int_equal(sb->rcv_mem_limited, sc->stats.rcv_mem_dropped + sc->stats.ooo_refused);
	assert_int_equal(send_stream(c, (64 << 10) + 100, 100), 100);
	pair_run(&p, 2 * MS);
	assert_true(sc->stats.rcv_mem_dropped >= 2);
	assert_int_equal(sb->rcv_mem_limited, sc->stats.rcv_mem_dropped + sc->stats.ooo_refused);
	pair_close(&p);
}

/*
 * A zero-copy send on a full send buffer says "later" (0), counted
 * (snd_buf_full) and whatever vectors follow: once one vector was cut
 * the rest are not tried, so one the send could not take anyway (not
 * Zbuf memory, which would be -EFAULT) is not looked at.
 */
static void test_send_zcv_full_buffer_says_later(void **state)
{
	static uint8_t plain[100]; /* not Zbuf memory */
	struct tcp_pair p;
	const struct tcp_stack_stats *sa;
	struct tcp_iov v[2];
	uint8_t *zb;

	(void)state;
	pair_open(&p, true);
	sa = tcp_stack_stats(p.a.tcp);
	p.hold_b = true;
	assert_int_equal(send_stream(p.cli, 0, 300000), 262144);
	assert_int_equal(sa->snd_buf_full, 1);
	zb = zbuf_alloc(100);
	assert_non_null(zb);
	v[0] = (struct tcp_iov){zb, 100};
	v[1] = (struct tcp_iov){plain, sizeof(plain)};
	assert_int_equal(tcp_sock_send_zcv(p.cli, v, 2), 0);
	assert_int_equal(sa->snd_buf_full, 2);
	assert_int_equal(sa->snd_mem_limited, 0);
	zbuf_unref(zb);
	p.hold_b = false;
	pair_close(&p);
}

/*
 * mem_max bounds a zero-copy send's vectors together: two of 40K under a
 * 64K cap take 40K and 24K, and the send is counted as cut by mem_max.
 */
static void test_send_zcv_vectors_share_mem_max(void **state)
{
	struct tcp_pair p;
	const struct tcp_stack_stats *sa;
	struct tcp_iov v[2];
	uint8_t *zb[2];

	(void)state;
	pair_open(&p, true);
	set_limits(p.a.tcp, 64, 32, 32, 64 << 10);
	sa = tcp_stack_stats(p.a.tcp);
	p.hold_b = true;
	for (unsigned i = 0; i < 2; i++) {
		zb[i] = zbuf_alloc(40 << 10);
		assert_non_null(zb[i]);
		pair_fill(zb[i], 40 << 10, i * (40 << 10));
		v[i] = (struct tcp_iov){zb[i], 40 << 10};
	}
	assert_int_equal(tcp_sock_send_zcv(p.cli, v, 2), 64 << 10);
	assert_int_equal(usage(p.a.tcp).mem_bytes, 64 << 10);
	assert_int_equal(sa->snd_mem_limited, 1);
	zbuf_unref(zb[0]);
	zbuf_unref(zb[1]);
	p.hold_b = false;
	pair_run(&p, 5 * MS);
	pair_rcvd_ok(&p, 64 << 10);
	pair_close(&p);
}

/*
 * tcp_sock_zc_done_v() with a slice whose reference the application
 * already dropped (data NULL, tcp_stack.h): its bytes still go back to
 * the window and leave mem_max's count.
 */
static void test_zc_done_v_null_slice_gives_back(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev = 0;
	struct tcp_sock *c;
	struct tcp_slice sl[1];

	(void)state;
	c = lazy_receiver(&p, &v, &ev, 0);
	assert_int_equal(send_stream(c, 0, 1000), 1000);
	pair_run(&p, 1 * MS);
	assert_int_equal(tcp_sock_read_zc(v.s[0], sl, 1), 1);
	assert_int_equal(sl[0].len, 1000);
	assert_int_equal(tcp_sock_held(v.s[0]), 1000);
	zbuf_unref(sl[0].data);
	sl[0].data = NULL;
	tcp_sock_zc_done_v(v.s[0], sl, 1);
	assert_int_equal(tcp_sock_held(v.s[0]), 0);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 0);
	pair_close(&p);
}

/*
 * Slices given back zero-copy under memory pressure open no window, as
 * reads under it do not (docs/LIMITS.md, "Memory"): the pressure is
 * taken when they are given back, not what the connection saw last. Once
 * the memory is free the next poll opens it.
 */
static void test_zc_give_back_under_pressure_opens_no_window(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev1 = 0, ev2 = 0;
	struct tcp_slice sl[64];
	const struct tcp_conn *sc;
	uint32_t edge, held = 0;
	unsigned n;

	(void)state;
	first_window_shut(&p, &v, &ev1, &ev2);
	sc = tcp_sock_conn(v.s[0]);
	n = tcp_sock_read_zc(v.s[0], sl, 64);
	for (unsigned i = 0; i < n; i++)
		held += sl[i].len;
	assert_int_equal(held, 16 << 10);
	edge = sc->rcv_adv;
	assert_int_equal(edge, sc->rcv_nxt); /* shut */

	assert_int_equal(send_stream(v.s[1], 0, 48 << 10), 48 << 10); /* mem_max reached */
	assert_int_equal(usage(p.b.tcp).mem_bytes, 64 << 10);
	tcp_sock_zc_done_v(v.s[0], sl, n);
	assert_int_equal(tcp_sock_held(v.s[0]), 0);
	assert_int_equal(sc->rcv_adv, edge);
	tcp_sock_abort(v.s[1]);
	pair_step(&p);
	assert_true(seq_gt(sc->rcv_adv, edge));
	pair_close(&p);
}

/*
 * tcp_sock_want_space() on a connection that can send nothing any more
 * (shut down: a send would be -EPIPE) does not wait for memory: no
 * TCP_EV_WRITABLE comes when mem_max frees room, while one that can send
 * and asked gets it.
 */
static void test_want_space_after_shutdown_not_woken(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev1 = 0, ev2 = 0, ev3 = 0;
	struct tcp_sock *c1, *c2, *c3;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16);
	set_limits(p.a.tcp, 64, 32, 32, 64 << 10);
	c1 = connect_a(&p, &ev1);
	c2 = connect_a(&p, &ev2);
	c3 = connect_a(&p, &ev3);
	pair_run(&p, 1 * MS);
	assert_int_equal(v.accepted, 3);
	tcp_sock_shutdown(c2);
	pair_run(&p, 1 * MS); /* its FIN acknowledged */
	assert_int_equal(tcp_sock_conn(c2)->state, TCP_FIN_WAIT_2);

	p.hold_b = true;
	assert_int_equal(send_stream(c1, 0, 100000), 64 << 10);
	ev2 = ev3 = 0;
	tcp_sock_want_space(c2);
	tcp_sock_want_space(c3);
	p.hold_b = false;
	pair_run(&p, 5 * MS);
	assert_int_equal(usage(p.a.tcp).mem_bytes, 0);
	assert_true(ev3 & TCP_EV_WRITABLE);
	assert_false(ev2 & TCP_EV_WRITABLE);
	pair_close(&p);
}

/*
 * A connection the application closed, in FIN-WAIT-2 with a peer that
 * never sends its FIN: nobody can read or close it any more, so it ends
 * after fin_wait2_ns (Linux's tcp_fin_timeout), whether the close came
 * before the peer acknowledged our FIN or after (a shutdown first; until
 * the close it waits, as the application may still read).
 */
static void test_closed_fin_wait_2_times_out(void **state)
{
	struct tcp_pair p;
	struct tcp_config cfg;

	(void)state;
	pair_config(&cfg);
	cfg.fin_wait2_ns = 50 * MS;
	/* Closed while established: FIN-WAIT-1, then FIN-WAIT-2 as an orphan. */
	pair_open_cfgs(&p, true, &cfg, &cfg);
	tcp_sock_close(p.cli);
	p.cli = NULL;
	pair_run(&p, 1 * MS);
	assert_int_equal(usage(p.a.tcp).conns, 1);
	assert_true(p.srv_events & TCP_EV_EOF);
	pair_run(&p, 60 * MS);
	assert_int_equal(usage(p.a.tcp).conns, 0);
	assert_int_equal(tcp_stack_sockets(p.a.tcp), 0);
	pair_close(&p);

	/* Shut down first: FIN-WAIT-2 is reached with the application still there. */
	pair_open_cfgs(&p, true, &cfg, &cfg);
	tcp_sock_shutdown(p.cli);
	pair_run(&p, 1 * MS);
	assert_int_equal(tcp_sock_conn(p.cli)->state, TCP_FIN_WAIT_2);
	pair_run(&p, 100 * MS);
	assert_int_equal(tcp_sock_conn(p.cli)->state, TCP_FIN_WAIT_2);
	tcp_sock_close(p.cli);
	p.cli = NULL;
	pair_run(&p, 40 * MS);
	assert_int_equal(usage(p.a.tcp).conns, 1);
	pair_run(&p, 20 * MS);
	assert_int_equal(usage(p.a.tcp).conns, 0);
	pair_close(&p);
}

/* A second listener on a port taken is refused (-EADDRINUSE); the first goes on. */
static void test_listen_twice_refused(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev = 0;
	int rc = 0;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16);
	assert_null(tcp_listen_on(p.b.tcp, PAIR_PORT, 16, on_accept, &v, &rc));
	assert_int_equal(rc, -EADDRINUSE);
	connect_a(&p, &ev);
	pair_run(&p, 1 * MS);
	assert_true(ev & TCP_EV_CONNECTED);
	assert_int_equal(v.accepted, 1);
	pair_close(&p);
}

/*
 * A closed listener gives its port back: a SYN to it is refused with a
 * RST (RFC 9293 3.10.7.1), and the port can be listened on again.
 * Connections it accepted are the application's and live on; only those
 * never accepted go with it.
 */
static void test_listener_close_frees_port_keeps_accepted(void **state)
{
	struct tcp_pair p;
	struct srv v, v2;
	uint32_t ev1 = 0, ev2 = 0, ev3 = 0;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16);
	connect_a(&p, &ev1);
	pair_run(&p, 1 * MS);
	assert_int_equal(v.accepted, 1);
	tcp_listener_close(v.lst);
	p.lst = NULL;
	assert_int_equal(tcp_sock_conn(v.s[0])->state, TCP_ESTABLISHED);
	assert_int_equal(usage(p.b.tcp).conns, 1);

	connect_a(&p, &ev2);
	pair_run(&p, 1 * MS);
	assert_true(ev2 & TCP_EV_RESET);
	assert_int_equal(p.b.nif.ctr.drops[LUNAR_DROP_TCP_NO_LISTENER], 1);

	listen_b(&p, &v2, 16);
	connect_a(&p, &ev3);
	pair_run(&p, 1 * MS);
	assert_true(ev3 & TCP_EV_CONNECTED);
	assert_int_equal(v2.accepted, 1);
	assert_false(ev1 & (TCP_EV_RESET | TCP_EV_EOF)); /* the first lives on */
	assert_int_equal(tcp_sock_conn(v.s[0])->state, TCP_ESTABLISHED);
	pair_close(&p);
}

/*
 * The backlog bounds connections waiting to be accepted, not those ever
 * accepted: with a backlog of 2, connections accepted one after another
 * are taken without end, none refused or answered with a cookie.
 */
static void test_backlog_counts_only_unaccepted(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev[5] = {0};
	const struct tcp_stack_stats *sb;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 2);
	sb = tcp_stack_stats(p.b.tcp);
	for (unsigned i = 0; i < 5; i++) {
		connect_a(&p, &ev[i]);
		pair_run(&p, 1 * MS);
		assert_true(ev[i] & TCP_EV_CONNECTED);
		assert_int_equal(v.accepted, i + 1);
	}
	assert_int_equal(sb->syncookies_sent, 0);
	assert_int_equal(sb->syn_dropped_backlog, 0);
	pair_close(&p);
}

/*
 * Our own TIME-WAITs are taken over only when their connection had
 * timestamps (Linux's tcp_tw_reuse): without them the peer's PAWS could
 * not tell the old connection's segments from the new one's, so with
 * every client port held by one, connect() fails with -EADDRNOTAVAIL.
 */
static void test_connect_reuses_no_time_wait_without_timestamps(void **state)
{
	struct tcp_pair p;
	struct tcp_config cfg;
	struct tcp_sock *c;
	uint32_t ev = 0;
	int rc;

	(void)state;
	pair_config(&cfg);
	cfg.timestamps = false;
	pair_reserved_lo = 65535 - 15;
	pair_stacks_cfg(&p, true, &cfg);
	pair_reserved_lo = 61440;
	p.lst = tcp_listen_on(p.b.tcp, PAIR_PORT, 16, on_accept_closing, NULL, &rc);
	assert_non_null(p.lst);
	for (unsigned i = 0; i < 16; i++) {
		ev = 0;
		c = connect_a(&p, &ev);
		pair_run(&p, 1 * MS);
		assert_true(ev & TCP_EV_CONNECTED);
		assert_false(tcp_sock_conn(c)->ts_ok);
		active_close(&p, c);
	}
	assert_int_equal(usage(p.a.tcp).time_wait, 16);
	c = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, &ev, &rc);
	assert_null(c);
	assert_int_equal(rc, -EADDRNOTAVAIL);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->tw_reused, 0);
	assert_int_equal(usage(p.a.tcp).time_wait, 16);
	pair_close(&p);
}

/*
 * A stack replaced on its interface by another, then freed: what it had
 * open is reset (an exiting process must not leave its peers waiting),
 * and it leaves the interface to the new stack rather than unhooking it.
 * The new stack's MSS, with none configured, is what fits the interface's
 * MTU (RFC 9293 3.7.1): 1400 - 40.
 */
static void test_stack_freed_resets_and_leaves_new_one(void **state)
{
	struct tcp_pair p;
	struct tcp_config cfg;
	struct tcp_stack *st2;
	struct tcp_sock *c;
	uint32_t ev = 0;
	int rc;

	(void)state;
	pair_open(&p, true);
	pair_config(&cfg);
	assert_int_equal(cfg.mss, 0);
	p.a.nif.mtu = 1400;
	st2 = tcp_stack_create(&p.a.nif, &cfg, 64, &p.plan, 0);
	assert_non_null(st2);
	assert_ptr_equal(p.a.nif.tcp_ctx, st2);
	tcp_stack_free(p.a.tcp);
	p.cli = NULL;
	assert_ptr_equal(p.a.nif.tcp_ctx, st2);
	assert_non_null(p.a.nif.tcp_fn);
	assert_non_null(p.a.nif.tcp_burst_fn);
	p.a.tcp = st2;
	tcp_stack_set_hdr_pool(st2, pair_hdr_pool());
	tcp_stack_defer_to_tx(st2, true);
	tcp_stack_poll(st2, p.now);

	pair_run(&p, 1 * MS); /* the RST the old stack sent */
	assert_true(p.srv_events & TCP_EV_RESET);
	assert_int_equal(tcp_sock_conn(p.srv)->state, TCP_CLOSED);
	tcp_sock_close(p.srv);
	p.srv = NULL;

	c = tcp_connect_to(st2, PAIR_IP_B, PAIR_PORT, on_cli, &ev, &rc);
	assert_non_null(c);
	assert_int_equal(tcp_sock_conn(c)->cfg.mss, 1360);
	pair_run(&p, 1 * MS);
	assert_true(ev & TCP_EV_CONNECTED);
	assert_non_null(p.srv);
	pair_close(&p);
}

/* Packet buffers a test takes from a pool to set how many it has free. */
struct pool_take {
	struct rte_mempool *mp;
	struct rte_mbuf *m[2048];
	unsigned n;
};

/* Take or give back buffers until @t's pool has @avail free. */
static void pool_free_to(struct pool_take *t, unsigned avail)
{
	while (rte_mempool_avail_count(t->mp) > avail) {
		assert_true(t->n < 2048);
		t->m[t->n] = rte_pktmbuf_alloc(t->mp);
		assert_non_null(t->m[t->n]);
		t->n++;
	}
	while (rte_mempool_avail_count(t->mp) < avail && t->n)
		rte_pktmbuf_free(t->m[--t->n]);
	assert_int_equal(rte_mempool_avail_count(t->mp), avail);
}

/*
 * The packet pool's pressure levels (tcp_stack.c, "memory pressure", as
 * Linux's tcp_mem): free under 1/4 of the pool is low, under 1/8
 * critical (every out-of-order queue emptied, RFC 2018 8, at most once a
 * millisecond, and what it held uncharged); under 1/2 nothing. Pressure
 * ends only with 3/8 of the pool free again (with no mem_max to hold it
 * too). Measured by the time spent
 * under pressure, the prunes, and an out-of-order segment's fate.
 */
static void test_pool_pressure_levels(void **state)
{
	struct tcp_pair p;
	struct pool_take *t = calloc(1, sizeof(*t));
	const struct tcp_stack_stats *sb;
	const struct tcp_conn *sc;
	unsigned size;
	uint64_t ns;
	size_t sent;

	(void)state;
	assert_non_null(t);
	pair_open(&p, true);
	set_limits(p.b.tcp, 64, 32, 32, 0); /* no mem_max: the pool alone */
	sb = tcp_stack_stats(p.b.tcp);
	sc = tcp_sock_conn(p.srv);
	t->mp = p.b.fp.base.pool;
	size = t->mp->size;

	pool_free_to(t, size / 2 - 2); /* under half: no pressure yet */
	pair_run(&p, 1 * MS);
	assert_int_equal(sb->mem_pressure_ns, 0);

	pool_free_to(t, size / 4 - 2); /* under 1/4: low */
	pair_run(&p, 1 * MS);
	ns = sb->mem_pressure_ns;
	assert_true(ns >= 9 * MS / 10);
	assert_int_equal(sb->mem_prunes, 0);

	pool_free_to(t, size * 3 / 8 - 2); /* over 1/4, under 3/8: still under pressure */
	pair_run(&p, 1 * MS);
	assert_true(sb->mem_pressure_ns >= ns + 9 * MS / 10);

	pool_free_to(t, size * 3 / 8 + 2); /* over 3/8: over */
	pair_run(&p, 1 * MS);
	ns = sb->mem_pressure_ns;
	pair_run(&p, 1 * MS);
	assert_int_equal(sb->mem_pressure_ns, ns);

	/* An out-of-order segment held beyond a hole... */
	p.mtu_a = 1000; /* the first segment is lost on the way */
	sent = send_stream(p.cli, 0, 1200);
	sent += send_stream(p.cli, sent, 100);
	pair_step(&p);
	pair_step(&p);
	p.mtu_a = 0;
	p.hold_a = true; /* and its retransmission held back */
	assert_int_equal(sc->reass.n, 1);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 100);
	/* ...is dropped under 1/8 (critical), and uncharged; once a millisecond. */
	pool_free_to(t, size / 8 - 4);
	pair_step(&p);
	assert_int_equal(sb->mem_prunes, 1);
	assert_int_equal(sc->reass.n, 0);
	assert_int_equal(usage(p.b.tcp).mem_bytes, 0);
	pair_run(&p, 1 * MS);
	assert_true(sb->mem_prunes <= 2);

	pool_free_to(t, size / 2);
	while (t->n)
		rte_pktmbuf_free(t->m[--t->n]);
	p.hold_a = false;
	pair_run(&p, 50 * MS);
	pair_rcvd_ok(&p, sent);
	free(t);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_conn_limit_drops_syn_then_recovers),
	    cmocka_unit_test(test_conn_limit_connect_enobufs),
	    cmocka_unit_test(test_time_wait_gives_way_when_full),
	    cmocka_unit_test(test_time_wait_kept_when_it_cannot_make_room),
	    cmocka_unit_test(test_time_wait_reopen_deferred_without_room),
	    cmocka_unit_test(test_time_wait_cap_ends_oldest),
	    cmocka_unit_test(test_time_wait_ends_oldest_first),
	    cmocka_unit_test(test_connect_reuses_own_time_wait),
	    cmocka_unit_test(test_timer_budget_spreads_due_timers),
	    cmocka_unit_test(test_idle_conn_fires_no_timer),
	    cmocka_unit_test(test_half_open_cap_answers_with_cookies),
	    cmocka_unit_test(test_half_open_cap_drops_and_times_out),
	    cmocka_unit_test(test_half_open_closed_with_listener_not_timed_out),
	    cmocka_unit_test(test_snd_buf_full_short_send),
	    cmocka_unit_test(test_snd_cut_at_own_buffer_and_mem_max_alike),
	    cmocka_unit_test(test_mem_max_stops_sends_then_wakes),
	    cmocka_unit_test(test_mem_max_wakes_under_three_quarters),
	    cmocka_unit_test(test_killed_while_queued_not_freed),
	    cmocka_unit_test(test_mem_max_receive_keeps_acked_data),
	    cmocka_unit_test(test_mem_pressure_ends_below_half),
	    cmocka_unit_test(test_mem_counts_held_and_out_of_order),
	    cmocka_unit_test(test_mem_uncharged_when_conn_ends),
	    cmocka_unit_test(test_mem_max_reached_is_critical),
	    cmocka_unit_test(test_mem_max_spared_conn_keeps_no_ooo),
	    cmocka_unit_test(test_mem_uncharged_when_listener_closes),
	    cmocka_unit_test(test_mem_limited_counts_each_drop_once),
	    cmocka_unit_test(test_mem_pressure_between_samples),
	    cmocka_unit_test(test_tiny_segments_do_not_drain_pool),
	    cmocka_unit_test(test_limits_checked),
	    cmocka_unit_test(test_limits_conns_zero_and_given),
	    cmocka_unit_test(test_send_zcv_full_buffer_says_later),
	    cmocka_unit_test(test_send_zcv_vectors_share_mem_max),
	    cmocka_unit_test(test_zc_done_v_null_slice_gives_back),
	    cmocka_unit_test(test_zc_give_back_under_pressure_opens_no_window),
	    cmocka_unit_test(test_want_space_after_shutdown_not_woken),
	    cmocka_unit_test(test_closed_fin_wait_2_times_out),
	    cmocka_unit_test(test_listen_twice_refused),
	    cmocka_unit_test(test_listener_close_frees_port_keeps_accepted),
	    cmocka_unit_test(test_backlog_counts_only_unaccepted),
	    cmocka_unit_test(test_connect_reuses_no_time_wait_without_timestamps),
	    cmocka_unit_test(test_stack_freed_resets_and_leaves_new_one),
	    cmocka_unit_test(test_pool_pressure_levels),
	};

	return cmocka_run_group_tests(tests, pair_group_setup, pair_group_teardown);
}
