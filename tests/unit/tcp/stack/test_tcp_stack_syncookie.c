/*
 * test_tcp_stack_syncookie.c - SYN cookies in tcp_stack (RFC 4987 3.6).
 * Once a listener's backlog is full of half-open connections (forged
 * SYNs whose SYN-ACKs go nowhere), a real client's SYN is answered with a
 * cookie and no state; its ACK makes the connection, with the options the
 * SYN asked for (MSS, window scale, SACK, timestamps), and data flows. A
 * forged ACK with a guessed cookie makes nothing and is answered with a
 * RST. A valid cookie ACK finding the accept queue full is dropped, and
 * the client's data, which acknowledges the cookie too, makes the
 * connection once there is room.
 *
 * For the XDP responder (bpf/lunar_syncookie.bpf.h), which answers SYNs in
 * the stack's place: tcp_stack_cookie_template() describes exactly the
 * SYN-ACK the stack sends with a cookie, and the cookie hook runs when the
 * stack answers a SYN with a cookie itself, at most once per
 * TCP_COOKIE_HOOK_NS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_pair.h"
#include "wire/tcp.h"

#define US 1000ull
#define MS 1000000ull

struct srv {
	struct tcp_pair *p;
	struct tcp_listener *lst;
	bool accept_now;    /* accept from the listener callback */
	struct tcp_sock *s; /* the last connection accepted */
	unsigned accepted;
};

static void accept_one(struct srv *v)
{
	struct tcp_sock *s = tcp_accept(v->lst, pair_on_srv, v->p);

	if (s) {
		v->s = s;
		v->accepted++;
	}
}

static void on_listen(struct tcp_listener *l, void *ctx)
{
	struct srv *v = ctx;

	(void)l;
	if (v->accept_now)
		accept_one(v);
}

static void on_cli(struct tcp_sock *s, uint32_t events, void *ctx)
{
	uint32_t *ev = ctx;

	(void)s;
	*ev |= events;
}

static void listen_b(struct tcp_pair *p, struct srv *v, unsigned backlog, bool accept_now)
{
	int rc;

	memset(v, 0, sizeof(*v));
	v->p = p;
	v->accept_now = accept_now;
	v->lst = tcp_listen_on(p->b.tcp, PAIR_PORT, backlog, on_listen, v, &rc);
	assert_non_null(v->lst);
	p->lst = v->lst;
}

/* Send @len bytes of the stream from the client, running until the server has them. */
static void stream(struct tcp_pair *p, struct tcp_sock *cli, size_t len)
{
	static uint8_t buf[16384];
	size_t sent = 0;

	for (int i = 0; i < 100000 && p->rcvd_len < len; i++) {
		if (sent < len) {
			size_t n = len - sent < sizeof(buf) ? len - sent : sizeof(buf);
			int k;

			pair_fill(buf, n, sent);
			k = tcp_sock_send(cli, buf, n);
			if (k > 0)
				sent += (size_t)k;
		}
		pair_step(p);
	}
	pair_rcvd_ok(p, len);
}

/* RFC 4987 3.6: the backlog full, a SYN gets a cookie; the handshake and the transfer complete. */
static void test_cookie_handshake_and_transfer(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t cli_ev = 0;
	const struct tcp_stack_stats *st;
	const struct tcp_conn *sc, *cc;
	struct tcp_sock *cli;
	int rc;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 2, true);
	pair_syn_nowhere(&p, 50001);
	pair_syn_nowhere(&p, 50002);
	st = tcp_stack_stats(p.b.tcp);
	assert_int_equal(st->syncookies_sent, 0);
	assert_int_equal(st->conns_active, 2); /* two half-open: the backlog */

	cli = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, &cli_ev, &rc);
	assert_non_null(cli);
	pair_run(&p, 1 * MS);
	assert_true(cli_ev & TCP_EV_CONNECTED);
	assert_int_equal(st->syncookies_sent, 1);
	assert_int_equal(st->syncookies_ok, 1);
	assert_int_equal(st->syncookies_bad, 0);
	assert_int_equal(v.accepted, 1);
	assert_int_equal(st->conns_active, 3);

	/* The options the client's SYN asked for, recalled from the cookie alone. */
	sc = tcp_sock_conn(v.s);
	cc = tcp_sock_conn(cli);
	assert_int_equal(sc->state, TCP_ESTABLISHED);
	assert_true(sc->ws_ok && sc->sack_ok && sc->ts_ok);
	assert_int_equal(sc->snd_wscale, cc->rcv_wscale);
	assert_int_equal(sc->snd_mss, 1460 - 12); /* MSS 1460, less the timestamps */
	assert_int_equal(sc->iss, cc->irs);
	assert_int_equal(sc->irs, cc->iss);

	/* More than 64 KiB in flight needs the window scale right on both ends. */
	stream(&p, cli, 1 << 20);
	assert_int_equal(tcp_sock_conn(cli)->stats.retransmits, 0);
	pair_close(&p);
}

/* A blind ACK with a guessed cookie makes no connection and gets a RST (RFC 9293 3.10.7.2). */
static void test_forged_ack_refused(void **state)
{
	struct tcp_pair p;
	struct srv v;
	struct tcp_repr r;
	const struct tcp_stack_stats *st;
	uint64_t rst_before;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 1, true);
	pair_syn_nowhere(&p, 50001);
	pair_syn_nowhere(&p, 50002); /* beyond the backlog: a cookie, so cookies are live */
	st = tcp_stack_stats(p.b.tcp);
	assert_int_equal(st->syncookies_sent, 1);
	rst_before = st->rst_sent;
	for (uint32_t g = 0; g < 64; g++) {
		memset(&r, 0, sizeof(r));
		r.sport = (uint16_t)(51000 + g);
		r.dport = PAIR_PORT;
		r.seq = 77 + g;
		r.ack = g * 0x9e3779b9u;
		r.flags = RTE_TCP_ACK_FLAG;
		r.window = 1000;
		p.hold_b = true;
		pair_inject(&p, &p.b, &r);
		pair_step(&p);
		pair_discard_tx(&p.b);
	}
	p.hold_b = false;
	assert_int_equal(st->syncookies_bad, 64);
	assert_int_equal(st->syncookies_ok, 0);
	assert_int_equal(st->rst_sent - rst_before, 64);
	assert_int_equal(p.b.nif.ctr.drops[LUNAR_DROP_TCP_BAD_COOKIE], 64);
	assert_int_equal(v.accepted, 0);
	assert_int_equal(st->conns_active, 1); /* the one half-open connection, no more */
	pair_close(&p);
}

/*
 * A valid cookie while the accept queue is full: the ACK is dropped
 * (counted), the client believes it is connected; once the application
 * accepts, the client's data, acknowledging the cookie as its ACK did,
 * makes the connection, and nothing is lost.
 */
static void test_no_room_then_data(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev1 = 0, ev2 = 0;
	const struct tcp_stack_stats *st;
	struct tcp_sock *c1, *c2;
	uint8_t buf[3000];
	int rc;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 1, false); /* the application does not accept yet */
	st = tcp_stack_stats(p.b.tcp);
	c1 = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, &ev1, &rc);
	assert_non_null(c1);
	pair_run(&p, 1 * MS);
	assert_true(ev1 & TCP_EV_CONNECTED); /* established, waiting in the accept queue */
	c2 = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, &ev2, &rc);
	assert_non_null(c2);
	pair_run(&p, 1 * MS);
	assert_true(ev2 & TCP_EV_CONNECTED);
	assert_int_equal(st->syncookies_sent, 1);
	assert_int_equal(st->syncookies_no_room, 1);
	assert_int_equal(p.b.nif.ctr.drops[LUNAR_DROP_TCP_COOKIE_NO_ROOM], 1);
	assert_int_equal(st->conns_active, 1);

	accept_one(&v); /* c1 leaves the queue */
	assert_int_equal(v.accepted, 1);
	pair_fill(buf, sizeof(buf), 0);
	assert_int_equal(tcp_sock_send(c2, buf, sizeof(buf)), (int)sizeof(buf));
	pair_run(&p, 1 * MS);
	assert_int_equal(st->syncookies_ok, 1);
	accept_one(&v);
	assert_int_equal(v.accepted, 2);
	pair_run(&p, 1 * MS);
	pair_rcvd_ok(&p, sizeof(buf));
	pair_close(&p);
}

/*
 * A SYN offering every option, ECN-setup, from 10.0.0.1:@sport, held at b's port with b's answer.
 */
static void syn_all_options(struct tcp_pair *p, uint16_t sport)
{
	struct tcp_repr r;

	memset(&r, 0, sizeof(r));
	r.sport = sport;
	r.dport = PAIR_PORT;
	r.seq = 77u * sport;
	r.flags = RTE_TCP_SYN_FLAG | RTE_TCP_ECE_FLAG | RTE_TCP_CWR_FLAG;
	r.window = 65535;
	r.opts.has_mss = true;
	r.opts.mss = 1460;
	r.opts.has_wscale = true;
	r.opts.wscale = 9;
	r.opts.sack_permitted = true;
	r.opts.has_ts = true;
	r.opts.ts_val = 12345;
	p->hold_b = true;
	pair_inject(p, &p->b, &r);
	pair_step(p);
	p->hold_b = false;
}

/* The TCP segment of b's only held frame (Ethernet, IPv4 without options). */
static void held_segment(struct tcp_pair *p, struct tcp_repr *out)
{
	struct rte_mbuf *m;
	const uint8_t *d;

	assert_int_equal(p->b.fp.n_tx, 1);
	m = p->b.fp.tx[0];
	d = rte_pktmbuf_mtod(m, const uint8_t *);
	assert_int_equal(
	    tcp_parse(d + 34, rte_pktmbuf_pkt_len(m) - 34, PAIR_IP_B, PAIR_IP_A, true, out),
	    LUNAR_DROP_NONE);
	pair_discard_tx(&p->b);
}

/* The template is the cookie SYN-ACK the stack sends, for both ECN settings. */
static void check_template(bool ecn)
{
	struct tcp_config cfg;
	struct tcp_pair p;
	struct srv v;
	struct tcp_repr sa;
	struct tcp_cookie_template t;

	pair_config(&cfg);
	cfg.ecn = ecn ? TCP_ECN_ON : TCP_ECN_OFF;
	pair_stacks_cfg(&p, true, &cfg);
	listen_b(&p, &v, 1, false);
	pair_syn_nowhere(&p, 50001); /* the backlog is full */
	syn_all_options(&p, 50002);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->syncookies_sent, 1);
	held_segment(&p, &sa);
	assert_int_equal(tcp_stack_cookie_template(p.b.tcp, &t), 0);

	assert_int_equal(sa.flags & ~RTE_TCP_ECE_FLAG, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(!!(sa.flags & RTE_TCP_ECE_FLAG), t.ecn);
	assert_int_equal(t.ecn, ecn);
	assert_int_equal(sa.window, t.window);
	assert_true(sa.opts.has_mss);
	assert_int_equal(sa.opts.mss, t.mss);
	assert_true(t.ws && t.sack && t.ts); /* pair_config() turns all three on */
	assert_int_equal(sa.opts.has_wscale, t.ws);
	assert_int_equal(sa.opts.wscale, t.wscale);
	assert_int_equal(sa.opts.sack_permitted, t.sack);
	assert_int_equal(sa.opts.has_ts, t.ts);
	assert_int_equal(t.laddr, PAIR_IP_B);
	assert_int_equal(t.ttl, NETIF_IP_TTL);
	/* The ISS is the cookie; its check under the template's key passes. */
	{
		struct tcp_4tuple tu = {
		    .laddr = PAIR_IP_B, .raddr = PAIR_IP_A, .lport = PAIR_PORT, .rport = 50002};
		struct tcp_repr ack = {.seq = 77u * 50002 + 1, .ack = sa.seq + 1};
		struct tcp_syncookie_opts o;

		assert_true(tcp_syncookie_check(t.key, &tu, &ack, p.now, &o));
		assert_int_equal(o.mss, 1460);
		assert_int_equal(o.wscale, 9);
		assert_true(o.has_wscale && o.sack_permitted && o.ecn_setup);
		/* TSval is the stack's milliseconds plus the ISS (tcp_ts_now()). */
		assert_int_equal(sa.opts.ts_val, (uint32_t)(p.now / MS) + sa.seq);
		assert_int_equal(sa.opts.ts_ecr, 12345);
	}
	pair_close(&p);
}

static void test_cookie_template(void **state)
{
	(void)state;
	check_template(false);
	check_template(true);
}

/*
 * The XDP responder answers a SYN the worker already holds half-open
 * (it cannot see the worker's connections: the peer's first SYN-ACK was
 * lost and its SYN came again during a flood). The peer's ACK then
 * acknowledges the cookie, not the worker's ISS: the cookie's connection
 * takes the half-open one's place, where a RST would have killed it.
 */
static void test_cookie_ack_adopted_over_half_open(void **state)
{
	struct tcp_pair p;
	struct srv v;
	struct tcp_cookie_template t;
	struct tcp_repr syn = {0}, ack = {0};
	struct tcp_4tuple tu = {
	    .laddr = PAIR_IP_B, .raddr = PAIR_IP_A, .lport = PAIR_PORT, .rport = 50004};
	struct tcp_limits_usage u;
	uint64_t rst;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 16, true);
	syn.sport = 50004;
	syn.dport = PAIR_PORT;
	syn.seq = 4242;
	syn.flags = RTE_TCP_SYN_FLAG;
	syn.window = 65535;
	syn.opts.has_mss = true;
	syn.opts.mss = 1460;
	p.hold_b = true; /* the worker's SYN-ACK is lost */
	pair_inject(&p, &p.b, &syn);
	pair_step(&p);
	pair_discard_tx(&p.b);
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.half_open, 1);
	/* The responder's SYN-ACK for the SYN sent again; the peer acknowledges it. */
	assert_int_equal(tcp_stack_cookie_template(p.b.tcp, &t), 0);
	ack.sport = 50004;
	ack.dport = PAIR_PORT;
	ack.seq = syn.seq + 1;
	ack.ack = tcp_syncookie_make(t.key, &tu, &syn, p.now) + 1;
	ack.flags = RTE_TCP_ACK_FLAG;
	ack.window = 65535;
	rst = tcp_stack_stats(p.b.tcp)->rst_sent;
	pair_inject(&p, &p.b, &ack);
	pair_step(&p);
	assert_int_equal(p.b.fp.n_tx, 0); /* no RST */
	assert_int_equal(tcp_stack_stats(p.b.tcp)->rst_sent, rst);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->syncookies_adopted, 1);
	assert_int_equal(v.accepted, 1);
	assert_int_equal(tcp_sock_conn(v.s)->state, TCP_ESTABLISHED);
	assert_int_equal(tcp_sock_conn(v.s)->iss + 1, ack.ack);
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.half_open, 0);
	assert_int_equal(u.conns, 1);
	p.hold_b = false;
	pair_close(&p);
}

/* Let @ns pass with b's retransmitted SYN-ACKs lost: its half-open connection stays. */
static void wait_nowhere(struct tcp_pair *p, uint64_t ns)
{
	p->hold_b = true;
	pair_run(p, ns);
	pair_discard_tx(&p->b);
	p->hold_b = false;
}

static void count_hook(void *arg)
{
	uint64_t *calls = arg;

	(*calls)++;
}

/* The hook runs on the stack's own cookies only, at most once per TCP_COOKIE_HOOK_NS. */
static void test_cookie_hook(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint64_t calls = 0;

	(void)state;
	pair_stacks(&p, true);
	tcp_stack_set_cookie_hook(p.b.tcp, count_hook, &calls);
	listen_b(&p, &v, 1, false);
	pair_syn_nowhere(&p, 50001); /* fills the backlog: no cookie, no call */
	assert_int_equal(calls, 0);
	pair_syn_nowhere(&p, 50002);
	assert_int_equal(calls, 1);
	pair_syn_nowhere(&p, 50003);
	pair_syn_nowhere(&p, 50004);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->syncookies_sent, 3);
	assert_int_equal(calls, 1);
	wait_nowhere(&p, TCP_COOKIE_HOOK_NS);
	pair_syn_nowhere(&p, 50005);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->syncookies_sent, 4);
	assert_int_equal(calls, 2);
	tcp_stack_set_cookie_hook(p.b.tcp, NULL, NULL);
	wait_nowhere(&p, TCP_COOKIE_HOOK_NS);
	pair_syn_nowhere(&p, 50006);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->syncookies_sent, 5);
	assert_int_equal(calls, 2);
	pair_close(&p);
}

/* A RST for the half-open connection pair_syn_nowhere(@sport) left: it dies. */
static void rst_nowhere(struct tcp_pair *p, uint16_t sport)
{
	struct tcp_repr r;

	memset(&r, 0, sizeof(r));
	r.sport = sport;
	r.dport = PAIR_PORT;
	r.seq = 1000u * sport + 1;
	r.flags = RTE_TCP_RST_FLAG;
	p->hold_b = true;
	pair_inject(p, &p->b, &r);
	pair_step(p);
	pair_discard_tx(&p->b);
	p->hold_b = false;
}

/*
 * The backlog counts half-open connections: one that dies (its peer's
 * RST, RFC 9293 3.10.7.3) gives its place back, and the next SYN is taken
 * as a half-open connection, not answered with a cookie.
 */
static void test_half_open_death_frees_backlog(void **state)
{
	struct tcp_pair p;
	struct srv v;
	struct tcp_limits_usage u;
	const struct tcp_stack_stats *st;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 1, false);
	st = tcp_stack_stats(p.b.tcp);
	pair_syn_nowhere(&p, 50001);
	rst_nowhere(&p, 50001);
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.half_open, 0);
	assert_int_equal(st->conns_active, 0);
	pair_syn_nowhere(&p, 50002);
	assert_int_equal(st->syncookies_sent, 0);
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.half_open, 1);
	pair_close(&p);
}

/*
 * A connection made from a cookie waits in the accept queue and counts
 * against the backlog as one made from a kept SYN: with the backlog's
 * half-open connection gone, it alone fills a backlog of 1, and the next
 * SYN gets a cookie.
 */
static void test_cookie_conn_counts_in_backlog(void **state)
{
	struct tcp_pair p;
	struct srv v;
	uint32_t ev = 0;
	struct tcp_limits_usage u;
	const struct tcp_stack_stats *st;
	struct tcp_sock *cli;
	int rc;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 1, false);
	st = tcp_stack_stats(p.b.tcp);
	pair_syn_nowhere(&p, 50001); /* the backlog is full */
	cli = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, &ev, &rc);
	assert_non_null(cli);
	pair_run(&p, 1 * MS);
	assert_true(ev & TCP_EV_CONNECTED);
	assert_int_equal(st->syncookies_ok, 1);
	rst_nowhere(&p, 50001);
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.half_open, 0);
	pair_syn_nowhere(&p, 50003);
	assert_int_equal(st->syncookies_sent, 2);
	tcp_stack_usage(p.b.tcp, &u);
	assert_int_equal(u.half_open, 0);
	accept_one(&v);
	assert_int_equal(v.accepted, 1);
	pair_close(&p);
}

/*
 * RFC 3168 6.1.1 through a cookie: the cookie remembers whether the SYN
 * was ECN-setup, and the connection its ACK makes has ECN only if it was.
 */
static void cookie_ecn(bool client_ecn)
{
	struct tcp_config cfg_a, cfg_b;
	struct tcp_pair p;
	struct srv v;
	uint32_t ev = 0;
	struct tcp_sock *cli;
	int rc;

	pair_config(&cfg_a);
	pair_config(&cfg_b);
	cfg_a.ecn = client_ecn ? TCP_ECN_ON : TCP_ECN_OFF;
	cfg_b.ecn = TCP_ECN_ON;
	pair_stacks_cfgs(&p, true, &cfg_a, &cfg_b);
	listen_b(&p, &v, 1, true);
	pair_syn_nowhere(&p, 50001);
	cli = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, &ev, &rc);
	assert_non_null(cli);
	pair_run(&p, 1 * MS);
	assert_true(ev & TCP_EV_CONNECTED);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->syncookies_ok, 1);
	assert_int_equal(v.accepted, 1);
	assert_int_equal(tcp_sock_conn(cli)->ecn_ok, client_ecn);
	assert_int_equal(tcp_sock_conn(v.s)->ecn_ok, client_ecn);
	pair_close(&p);
}

static void test_cookie_keeps_ecn_setup(void **state)
{
	(void)state;
	cookie_ecn(true);
	cookie_ecn(false);
}

/*
 * A cookie lives for the slot it was made in and the next (17-34 s): its
 * ACK coming more than one slot's length after the cookie was sent, but
 * within the next slot, still makes the connection.
 */
static void test_cookie_ack_late_in_next_slot(void **state)
{
	struct tcp_pair p;
	struct srv v;
	struct tcp_repr sa, ack;
	const struct tcp_stack_stats *st;

	(void)state;
	pair_stacks(&p, true);
	listen_b(&p, &v, 1, true);
	st = tcp_stack_stats(p.b.tcp);
	pair_syn_nowhere(&p, 50001);
	syn_all_options(&p, 50002);
	assert_int_equal(st->syncookies_sent, 1);
	held_segment(&p, &sa);
	/* One slot and 100 ms later, still within the next slot (the clock began at 1 s). */
	assert_true(p.now < (1ull << TCP_SYNCOOKIE_SLOT_SHIFT) - 200 * MS);
	p.now += (1ull << TCP_SYNCOOKIE_SLOT_SHIFT) + 100 * MS;
	memset(&ack, 0, sizeof(ack));
	ack.sport = 50002;
	ack.dport = PAIR_PORT;
	ack.seq = 77u * 50002 + 1;
	ack.ack = sa.seq + 1;
	ack.flags = RTE_TCP_ACK_FLAG;
	ack.window = 1000;
	ack.opts.has_ts = true;
	ack.opts.ts_val = 12346;
	ack.opts.ts_ecr = sa.opts.ts_val;
	p.hold_b = true;
	pair_inject(&p, &p.b, &ack);
	pair_step(&p);
	pair_discard_tx(&p.b);
	p.hold_b = false;
	assert_int_equal(st->syncookies_ok, 1);
	assert_int_equal(st->syncookies_bad, 0);
	assert_int_equal(v.accepted, 1);
	assert_int_equal(tcp_sock_conn(v.s)->state, TCP_ESTABLISHED);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cookie_handshake_and_transfer),
	    cmocka_unit_test(test_forged_ack_refused),
	    cmocka_unit_test(test_no_room_then_data),
	    cmocka_unit_test(test_cookie_template),
	    cmocka_unit_test(test_cookie_ack_adopted_over_half_open),
	    cmocka_unit_test(test_cookie_hook),
	    cmocka_unit_test(test_half_open_death_frees_backlog),
	    cmocka_unit_test(test_cookie_conn_counts_in_backlog),
	    cmocka_unit_test(test_cookie_keeps_ecn_setup),
	    cmocka_unit_test(test_cookie_ack_late_in_next_slot),
	};

	return cmocka_run_group_tests(tests, pair_group_setup, pair_group_teardown);
}
