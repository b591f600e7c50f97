/*
 * test_tcp_rst_syn.c - what a synchronized connection does with segments it
 * did not expect: RSTs in every state (RFC 9293 3.10.7.4 second check with
 * RFC 5961 3.2), SYNs (RFC 5961 4.2), the acceptability test (3.10.7.4
 * first check), bad ACK fields (3.10.7.4 fifth, RFC 5961 5.2), PAWS and
 * TS.Recent (RFC 7323 4.3, 5.3) and the window scale option's edge cases
 * (RFC 7323 2.2, 2.3). One behaviour per test.
 */
#include <errno.h>

#include "tcp_script.h"

#define TS_RECENT 777u /* the peer's TSval in the fixtures' handshake (tcp_script.c) */

/* ---- RST in each state ---- */

/* A state as a fixture leaves it: SND.NXT and RCV.NXT. */
struct state_case {
	script_fixture_fn fix;
	enum tcp_state state;
	uint32_t snd_nxt, rcv_nxt;
};

static const struct state_case st_syn_received = {fixture_syn_received, TCP_SYN_RECEIVED, ISS + 1,
						  IRS + 1};
static const struct state_case st_established = {fixture_established, TCP_ESTABLISHED, ISS + 1,
						 IRS + 1};
static const struct state_case st_fin_wait_1 = {fixture_fin_wait_1, TCP_FIN_WAIT_1, ISS + 2,
						IRS + 1};
static const struct state_case st_fin_wait_2 = {fixture_fin_wait_2, TCP_FIN_WAIT_2, ISS + 2,
						IRS + 1};
static const struct state_case st_close_wait = {fixture_close_wait, TCP_CLOSE_WAIT, ISS + 1,
						IRS + 2};
static const struct state_case st_closing = {fixture_closing, TCP_CLOSING, ISS + 2, IRS + 2};
static const struct state_case st_last_ack = {fixture_last_ack, TCP_LAST_ACK, ISS + 2, IRS + 2};
static const struct state_case st_time_wait = {fixture_time_wait, TCP_TIME_WAIT, ISS + 2, IRS + 2};

static uint32_t rcv_wnd_of(const struct tcp_conn *c)
{
	return c->rcv_adv - c->rcv_nxt;
}

/*
 * RFC 9293 3.10.7.4 second, ESTABLISHED/FIN-WAIT-1/FIN-WAIT-2/CLOSE-WAIT:
 * "If the RST bit is set, then any outstanding RECEIVEs and SEND should
 * receive 'reset' responses. All segment queues should be flushed. ...
 * Enter the CLOSED state". SEG.SEQ == RCV.NXT (RFC 5961 3.2 case 2).
 */
static void rst_exact_resets(const struct state_case *k)
{
	struct script s;

	k->fix(&s, NULL);
	s.c.events = 0;
	seg(&s, RST | ACK, k->rcv_nxt, k->snd_nxt, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(s.c.error, -ECONNRESET);
	assert_true(s.c.events & TCP_EV_RESET);
	assert_true(s.c.events & TCP_EV_CLOSED);
	assert_int_equal(s.c.snd.bytes, 0);
	assert_int_equal(tcp_next_deadline(&s.c), UINT64_MAX);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 second, CLOSING/LAST-ACK/TIME-WAIT: "If the RST bit is
 * set, then enter the CLOSED state, delete the TCB, and return" (no error
 * for the user: its side is already closed).
 */
static void rst_exact_closes(const struct state_case *k)
{
	struct script s;

	k->fix(&s, NULL);
	s.c.events = 0;
	seg(&s, RST | ACK, k->rcv_nxt, k->snd_nxt, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(s.c.error, 0);
	assert_false(s.c.events & TCP_EV_RESET);
	assert_true(s.c.events & TCP_EV_CLOSED);
	assert_int_equal(tcp_next_deadline(&s.c), UINT64_MAX);
	script_end(&s);
}

/*
 * RFC 5961 3.2 case 3 (RFC 9293 3.10.7.4 second, item 3): a RST in the
 * window but not at RCV.NXT gets a challenge ACK <SEQ=SND.NXT><ACK=RCV.NXT>
 * <CTL=ACK> and changes nothing.
 */
static void rst_inexact_challenge(const struct state_case *k)
{
	struct script s;
	uint32_t wnd;

	k->fix(&s, NULL);
	s.c.events = 0;
	wnd = rcv_wnd_of(&s.c);
	assert_true(wnd > 1);
	seg(&s, RST | ACK, k->rcv_nxt + 1, k->snd_nxt, 65535, 0);
	expect_tx(&s, ACK, k->snd_nxt, k->rcv_nxt, 0);
	seg(&s, RST, k->rcv_nxt + wnd - 1, 0, 0, 0); /* the last sequence number in the window */
	expect_tx(&s, ACK, k->snd_nxt, k->rcv_nxt, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, k->state);
	assert_int_equal(s.c.error, 0);
	assert_int_equal(s.c.events & (TCP_EV_RESET | TCP_EV_CLOSED), 0);
	assert_int_equal(s.c.stats.challenge_acks, 2);
	assert_int_equal(s.c.snd_nxt, k->snd_nxt);
	assert_int_equal(s.c.rcv_nxt, k->rcv_nxt);
	script_end(&s);
}

/* RFC 5961 3.2 case 1 (RFC 9293 3.10.7.4 second, item 1): out-of-window RST: silently dropped. */
static void rst_outside_dropped(const struct state_case *k)
{
	struct script s;
	uint32_t wnd;

	k->fix(&s, NULL);
	s.c.events = 0;
	wnd = rcv_wnd_of(&s.c);
	seg(&s, RST | ACK, k->rcv_nxt - 1, k->snd_nxt, 65535, 0);
	seg(&s, RST, k->rcv_nxt + wnd, 0, 0, 0);
	seg(&s, RST, k->rcv_nxt + 0x40000000u, 0, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, k->state);
	assert_int_equal(s.c.error, 0);
	assert_int_equal(s.c.events & (TCP_EV_RESET | TCP_EV_CLOSED), 0);
	assert_int_equal(s.c.stats.challenge_acks, 0);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 second, SYN-RECEIVED from a passive OPEN: "return this
 * connection to LISTEN state and return. The user need not be informed."
 * Here the embryonic connection is per SYN (the listener lives above the
 * core), so it goes to CLOSED, sends nothing, and never reports CONNECTED.
 */
static void test_rst_exact_syn_received_passive(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_received(&s, NULL);
	seg(&s, RST, IRS + 1, 0, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_false(s.c.events & TCP_EV_CONNECTED);
	assert_int_equal(tcp_next_deadline(&s.c), UINT64_MAX);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 second, SYN-RECEIVED from an active OPEN (simultaneous
 * open): "the connection was refused; signal the user 'connection
 * refused'" ... "enter the CLOSED state".
 */
static void test_rst_exact_syn_received_active(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_received_active(&s, NULL);
	seg(&s, RST, IRS + 1, 0, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(s.c.error, -ECONNREFUSED);
	assert_true(s.c.events & TCP_EV_RESET);
	assert_int_equal(tcp_next_deadline(&s.c), UINT64_MAX);
	script_end(&s);
}

/* RFC 9293 3.10.7.4 second, ESTABLISHED, with unacknowledged data: flushed, ECONNRESET. */
static void test_rst_exact_established_flushes(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	assert_int_equal(app_send(&s, 2000), 2000);
	drain_tx(&s);
	seg(&s, RST, IRS + 1, 0, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(s.c.error, -ECONNRESET);
	assert_true(s.c.events & TCP_EV_RESET);
	assert_int_equal(s.c.snd.bytes, 0);
	assert_int_equal(tcp_send(&s.c, (const uint8_t *)"x", 1) < 0, 1);
	script_end(&s);
}

#define RST_TESTS(name, st)                                                                        \
	static void test_rst_inexact_##name(void **state)                                          \
	{                                                                                          \
		(void)state;                                                                       \
		rst_inexact_challenge(&st);                                                        \
	}                                                                                          \
	static void test_rst_outside_##name(void **state)                                          \
	{                                                                                          \
		(void)state;                                                                       \
		rst_outside_dropped(&st);                                                          \
	}

#define RST_RESET_TEST(name, st)                                                                   \
	static void test_rst_exact_##name(void **state)                                            \
	{                                                                                          \
		(void)state;                                                                       \
		rst_exact_resets(&st);                                                             \
	}

#define RST_CLOSE_TEST(name, st)                                                                   \
	static void test_rst_exact_##name(void **state)                                            \
	{                                                                                          \
		(void)state;                                                                       \
		rst_exact_closes(&st);                                                             \
	}

RST_TESTS(syn_received, st_syn_received)
RST_TESTS(established, st_established)
RST_TESTS(fin_wait_1, st_fin_wait_1)
RST_TESTS(fin_wait_2, st_fin_wait_2)
RST_TESTS(close_wait, st_close_wait)
RST_TESTS(closing, st_closing)
RST_TESTS(last_ack, st_last_ack)
RST_TESTS(time_wait, st_time_wait)
RST_RESET_TEST(established, st_established)
RST_RESET_TEST(fin_wait_1, st_fin_wait_1)
RST_RESET_TEST(fin_wait_2, st_fin_wait_2)
RST_RESET_TEST(close_wait, st_close_wait)
RST_CLOSE_TEST(closing, st_closing)
RST_CLOSE_TEST(last_ack, st_last_ack)
RST_CLOSE_TEST(time_wait, st_time_wait)

/* ---- SYN in a synchronized state ---- */

/*
 * RFC 5961 7: challenge ACKs are throttled per connection. 30 in-window
 * inexact RSTs, SYNs and ACKs of unsent data within one second draw
 * exactly challenge_ack_limit (20) ACKs; the rest are counted, not
 * answered, and change nothing. A second later the budget is back.
 * Empty segments out of the window share the budget, data out of it does
 * not. With the limit 0 nothing is throttled.
 */
static void test_challenge_acks_throttled(void **state)
{
	struct script s;
	struct tcp_config cfg;
	struct fixture_opts o;

	(void)state;
	fixture_established(&s, NULL);
	assert_int_equal(s.c.cfg.challenge_ack_limit, 20);
	for (int i = 0; i < 30; i++) {
		if (i % 3 == 0)
			seg(&s, RST, IRS + 1 + 10 + (uint32_t)i, 0, 0, 0);
		else if (i % 3 == 1)
			seg(&s, SYN, IRS + 1 + (uint32_t)i, 0, 65535, 0);
		else /* acknowledges nothing sent */
			seg(&s, ACK, IRS + 1, ISS + 1 + 100000, 65535, 0);
		if (i < 20)
			expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
		advance(&s, 10 * MS);
	}
	expect_nothing(&s);
	assert_int_equal(s.c.stats.challenge_acks, 20); /* sent, whatever drew them */
	assert_int_equal(s.c.stats.ack_unsent, 10);
	assert_int_equal(s.c.stats.challenge_acks_limited, 10);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_int_equal(s.c.rcv_nxt, IRS + 1);
	advance(&s, 1000 * MS);
	seg(&s, RST, IRS + 1 + 10, 0, 0, 0);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	expect_nothing(&s);
	script_end(&s);

	/*
	 * Out of the window: empty segments (forged or looping ACKs) share
	 * the budget; data is always answered, as a needless retransmission's
	 * sender needs the ACK.
	 */
	fixture_established(&s, NULL);
	for (int i = 0; i < 25; i++) {
		seg(&s, ACK, IRS + 1 + 0x40000000u + (uint32_t)i, ISS + 1, 65535, 0);
		if (i < 20)
			expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	}
	expect_nothing(&s);
	assert_int_equal(s.c.stats.challenge_acks_limited, 5);
	for (int i = 0; i < 10; i++) {
		seg(&s, ACK, IRS + 1 - 1000, ISS + 1, 65535, 100); /* an old retransmission */
		expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	}
	assert_int_equal(s.c.stats.out_of_window, 35);
	script_end(&s);

	script_config(&cfg);
	cfg.challenge_ack_limit = 0;
	o = fixture_opts_with(&cfg);
	fixture_established(&s, &o);
	for (int i = 0; i < 50; i++) {
		seg(&s, RST, IRS + 1 + 10, 0, 0, 0);
		expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	}
	assert_int_equal(s.c.stats.challenge_acks_limited, 0);
	script_end(&s);
}

/*
 * RFC 5961 4.2 (RFC 9293 3.10.7.4 fourth): a SYN in ESTABLISHED, in the
 * window or exactly at RCV.NXT, gets a challenge ACK; the state is unchanged.
 */
static void test_syn_in_window_established_challenge_ack(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	seg(&s, SYN, IRS + 1, 0, 65535, 0);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	seg(&s, SYN, IRS + 1000, 0, 65535, 0);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	seg(&s, SYN | ACK, IRS + 5000, ISS + 1, 65535, 0);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_int_equal(s.c.stats.challenge_acks, 3);
	assert_int_equal(s.c.rcv_nxt, IRS + 1);
	assert_int_equal(s.c.events, 0);
	script_end(&s);
}

/*
 * RFC 5961 4.2: "irrespective of the sequence number": an old or far SYN
 * (e.g. the peer's retransmitted original SYN) also gets just an ACK.
 */
static void test_syn_outside_window_established_ack(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	seg(&s, SYN, IRS, 0, 65535, 0);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	seg(&s, SYN, IRS + 0x40000000u, 0, 65535, 0);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	seg(&s, SYN | ACK, IRS, ISS + 1, 65535, 0); /* retransmitted SYN,ACK: our ACK was lost */
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_int_equal(s.c.rcv_nxt, IRS + 1);
	assert_int_equal(s.c.events, 0);
	script_end(&s);
}

/* ---- the acceptability test (RFC 9293 3.10.7.4 first) ---- */

/* What an unacceptable segment must leave alone. */
struct snapshot {
	enum tcp_state state;
	uint32_t snd_una, snd_nxt, snd_wnd, rcv_nxt, rcvq_bytes, reass_bytes;
};

static struct snapshot snap(const struct script *s)
{
	return (struct snapshot){s->c.state,
				 s->c.snd_una,
				 s->c.snd_nxt,
				 s->c.snd_wnd,
				 s->c.rcv_nxt,
				 s->c.rcvq_bytes,
				 tcp_reass_bytes(&s->c.reass)};
}

static void assert_unchanged(const struct script *s, const struct snapshot *b)
{
	struct snapshot a = snap(s);

	assert_int_equal(a.state, b->state);
	assert_int_equal(a.snd_una, b->snd_una);
	assert_int_equal(a.snd_nxt, b->snd_nxt);
	assert_int_equal(a.snd_wnd, b->snd_wnd);
	assert_int_equal(a.rcv_nxt, b->rcv_nxt);
	assert_int_equal(a.rcvq_bytes, b->rcvq_bytes);
	assert_int_equal(a.reass_bytes, b->reass_bytes);
}

/* Established, 100 bytes of ours in flight (so an ACK field has something to acknowledge). */
static void established_with_flight(struct script *s, const struct fixture_opts *o)
{
	fixture_established(s, o);
	seg(s, ACK, IRS + 1, ISS + 1, 65535, 0); /* the first scaled window */
	assert_int_equal(app_send(s, 100), 100);
	expect_tx(s, ACK | PSH, ISS + 1, IRS + 1, 100);
	expect_nothing(s);
}

/*
 * RFC 9293 3.10.7.4 first, SEG.LEN = 0, RCV.WND > 0: acceptable iff
 * RCV.NXT =< SEG.SEQ < RCV.NXT+RCV.WND. Below the window: "send an
 * acknowledgment <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>" and drop it; its ACK
 * field and window are not used.
 */
static void test_accept_empty_below_window(void **state)
{
	struct script s;
	struct snapshot b;

	(void)state;
	established_with_flight(&s, NULL);
	b = snap(&s);
	seg(&s, ACK, IRS, ISS + 101, 100, 0);
	expect_tx(&s, ACK, ISS + 101, IRS + 1, 0);
	expect_nothing(&s);
	assert_unchanged(&s, &b);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 first, SEG.LEN = 0, RCV.WND > 0: SEG.SEQ = RCV.NXT+RCV.WND
 * is outside (ACK, dropped); RCV.NXT+RCV.WND-1 is inside (processed).
 */
static void test_accept_empty_right_edge(void **state)
{
	struct script s;
	struct snapshot b;
	uint32_t wnd;

	(void)state;
	established_with_flight(&s, NULL);
	wnd = rcv_wnd_of(&s.c);
	b = snap(&s);
	seg(&s, ACK, IRS + 1 + wnd, ISS + 101, 100, 0);
	expect_tx(&s, ACK, ISS + 101, IRS + 1, 0);
	expect_nothing(&s);
	assert_unchanged(&s, &b);
	seg(&s, ACK, IRS + wnd, ISS + 101, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.snd_una, ISS + 101);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 first, SEG.LEN > 0, RCV.WND > 0: not acceptable when
 * neither the first nor the last byte is in the window: ACK, nothing stored.
 */
static void test_accept_data_beyond_window(void **state)
{
	struct script s;
	struct snapshot b;
	uint32_t wnd;

	(void)state;
	established_with_flight(&s, NULL);
	wnd = rcv_wnd_of(&s.c);
	b = snap(&s);
	seg(&s, ACK, IRS + 1 + wnd, ISS + 101, 100, 100);
	expect_tx(&s, ACK, ISS + 101, IRS + 1, 0);
	expect_nothing(&s);
	assert_unchanged(&s, &b);
	assert_int_equal(s.c.stats.ooo_segs, 0);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 first, SEG.LEN > 0, RCV.WND > 0: acceptable when the
 * last byte is in the window; "only the new parts are processed" (the old
 * part is trimmed, the new part delivered).
 */
static void test_accept_data_straddling_left_edge(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	seg(&s, ACK, IRS + 951, ISS + 1, 65535, 100);
	expect_tx(&s, ACK, ISS + 1, IRS + 1051, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.rcv_nxt, IRS + 1051);
	assert_int_equal(recv_all(&s), 1050);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 first, SEG.LEN > 0, RCV.WND > 0: acceptable when the
 * first byte is the window's last one; what lies beyond is not taken.
 */
static void test_accept_data_straddling_right_edge(void **state)
{
	struct script s;
	uint32_t wnd;

	(void)state;
	fixture_established(&s, NULL);
	wnd = rcv_wnd_of(&s.c);
	seg(&s, ACK, IRS + wnd, ISS + 1, 65535, 100);
	assert_int_equal(s.c.stats.ooo_segs, 1);
	assert_true(tcp_reass_bytes(&s.c.reass) <= 1);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0); /* out of order: ACK at once (RFC 5681 4.2) */
	assert_int_equal(s.c.rcv_nxt, IRS + 1);
	drain_tx(&s);
	script_end(&s);
}

/* A small receive buffer, filled: RCV.WND = 0 and 100 bytes of ours in flight. */
static void zero_window(struct script *s, struct tcp_config *cfg)
{
	struct fixture_opts o = {.ts = true,
				 .sack = true,
				 .ws = true,
				 .peer_wscale = 7,
				 .peer_mss = 1460,
				 .peer_window = 65535,
				 .cfg = cfg};
	const struct tcp_tx *t;

	script_config(cfg);
	cfg->rcv_buf = 4096;
	fixture_established(s, &o);
	seg(s, ACK, IRS + 1, ISS + 1, 65535, 2048);
	seg(s, ACK, IRS + 2049, ISS + 1, 65535, 2048);
	t = expect_tx(s, ACK, ISS + 1, IRS + 4097, 0);
	assert_int_equal(t->wnd, 0);
	assert_int_equal(rcv_wnd_of(&s->c), 0);
	assert_int_equal(app_send(s, 100), 100);
	expect_tx(s, ACK | PSH, ISS + 1, IRS + 4097, 100);
	expect_nothing(s);
}

/*
 * RFC 9293 3.10.7.4 first, SEG.LEN = 0, RCV.WND = 0: acceptable iff
 * SEG.SEQ = RCV.NXT; such an ACK is processed (SND.UNA advances, no reply),
 * any other is answered with an ACK and dropped.
 */
static void test_accept_zero_window_empty(void **state)
{
	struct tcp_config cfg;
	struct script s;
	struct snapshot b;

	(void)state;
	zero_window(&s, &cfg);
	b = snap(&s);
	seg(&s, ACK, IRS + 4098, ISS + 101, 65535, 0);
	expect_tx(&s, ACK, ISS + 101, IRS + 4097, 0);
	assert_unchanged(&s, &b);
	seg(&s, ACK, IRS + 4097, ISS + 101, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.snd_una, ISS + 101);
	assert_int_equal(recv_all(&s), 4096);
	drain_tx(&s); /* the window update */
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 first, SEG.LEN > 0, RCV.WND = 0: not acceptable ("no
 * segments will be acceptable, but special allowance should be made to
 * accept valid ACKs"): the data is refused and acknowledged with
 * <SEQ=SND.NXT><ACK=RCV.NXT> and a zero window, the ACK field is used.
 */
static void test_accept_zero_window_data(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	zero_window(&s, &cfg);
	seg(&s, ACK, IRS + 4097, ISS + 101, 65535, 100);
	t = expect_tx(&s, ACK, ISS + 101, IRS + 4097, 0);
	assert_int_equal(t->wnd, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.snd_una, ISS + 101);
	assert_int_equal(s.c.rcv_nxt, IRS + 4097);
	assert_int_equal(s.c.rcvq_bytes, 4096);
	assert_int_equal(recv_all(&s), 4096);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 first, RCV.WND = 0: "special allowance should be made to
 * accept valid ... RSTs": a RST at RCV.NXT still resets the connection.
 */
static void test_accept_zero_window_rst(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	zero_window(&s, &cfg);
	seg(&s, RST, IRS + 4097, 0, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(s.c.error, -ECONNRESET);
	assert_int_equal(recv_all(&s), 4096);
	script_end(&s);
}

/* RFC 9293 3.10.7.4 first: an old duplicate wholly below RCV.NXT gets an ACK, no delivery. */
static void test_old_duplicate_gets_ack(void **state)
{
	struct script s;
	struct snapshot b;

	(void)state;
	fixture_established(&s, NULL);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	advance(&s, s.c.cfg.delack_ns);
	expect_tx(&s, ACK, ISS + 1, IRS + 1001, 0);
	b = snap(&s);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	expect_tx(&s, ACK, ISS + 1, IRS + 1001, 0);
	seg(&s, ACK, IRS + 501, ISS + 1, 65535, 500); /* ends just below RCV.NXT */
	expect_tx(&s, ACK, ISS + 1, IRS + 1001, 0);
	expect_nothing(&s);
	assert_unchanged(&s, &b);
	assert_int_equal(recv_all(&s), 1000);
	script_end(&s);
}

/* ---- the ACK field (RFC 9293 3.10.7.4 fifth, RFC 5961 5.2) ---- */

/*
 * RFC 9293 3.10.7.4 fifth, ESTABLISHED: "If the ACK acks something not yet
 * sent (SEG.ACK > SND.NXT), then send an ACK, drop the segment, and return."
 */
static void test_ack_of_unsent_data(void **state)
{
	struct script s;
	struct snapshot b;

	(void)state;
	established_with_flight(&s, NULL);
	b = snap(&s);
	seg(&s, ACK, IRS + 1, ISS + 102, 65535, 0);
	expect_tx(&s, ACK, ISS + 101, IRS + 1, 0);
	seg(&s, ACK, IRS + 1, ISS + 5000, 65535, 200); /* with data: not delivered */
	expect_tx(&s, ACK, ISS + 101, IRS + 1, 0);
	expect_nothing(&s);
	assert_unchanged(&s, &b);
	script_end(&s);
}

/*
 * RFC 5961 5.2: acceptable ACKs lie in (SND.UNA - MAX.SND.WND) =< SEG.ACK
 * =< SND.NXT; others: "discarded and an ACK sent back". At the lower bound
 * the segment is processed (its data delivered); one below, it is not.
 */
static void test_ack_too_old(void **state)
{
	struct script s;
	struct snapshot b;
	uint32_t lo;

	(void)state;
	fixture_established(&s, NULL);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	assert_int_equal(s.c.max_snd_wnd, 65535u << 7);
	lo = ISS + 1 - s.c.max_snd_wnd;
	b = snap(&s);
	seg(&s, ACK, IRS + 1, lo - 1, 65535, 100);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	expect_nothing(&s);
	assert_unchanged(&s, &b);
	seg(&s, ACK, IRS + 1, lo, 65535, 100);
	assert_int_equal(s.c.rcvq_bytes, 100);
	assert_int_equal(recv_all(&s), 100);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 5961 5.2 with a small MAX.SND.WND (no window scaling, the peer offers
 * 1000 bytes): an ACK 2000 below SND.UNA is outside the acceptable range.
 */
static void test_ack_too_old_small_window(void **state)
{
	struct fixture_opts o = {
	    .ts = true, .sack = true, .ws = false, .peer_mss = 1460, .peer_window = 1000};
	struct script s;
	struct snapshot b;

	(void)state;
	fixture_established(&s, &o);
	seg(&s, ACK, IRS + 1, ISS + 1, 1000, 0);
	assert_int_equal(s.c.max_snd_wnd, 1000);
	b = snap(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 - 2000, 1000, 100);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	expect_nothing(&s);
	assert_unchanged(&s, &b);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 fifth: "if the ACK bit is off, drop the segment and
 * return": its data is not delivered, its FIN not taken.
 */
static void test_no_ack_bit_dropped(void **state)
{
	struct script s;
	struct snapshot b;

	(void)state;
	fixture_established(&s, NULL);
	b = snap(&s);
	seg(&s, PSH, IRS + 1, 0, 65535, 100);
	seg(&s, FIN, IRS + 1, 0, 65535, 0);
	advance(&s, s.c.cfg.delack_ns);
	expect_nothing(&s);
	assert_unchanged(&s, &b);
	assert_false(s.c.events & (TCP_EV_READABLE | TCP_EV_EOF));
	script_end(&s);
}

/* ---- timestamps: PAWS and TS.Recent (RFC 7323) ---- */

/*
 * RFC 7323 5.3 R1: "If there is a Timestamps option in the arriving
 * segment, SEG.TSval < TS.Recent, TS.Recent is valid, and the RST bit is not
 * set, then treat the arriving segment as not acceptable: Send an
 * acknowledgment in reply ... and drop the segment."
 */
static void test_paws_rejects_old_tsval(void **state)
{
	struct script s;
	struct snapshot b;

	(void)state;
	fixture_established(&s, NULL);
	assert_int_equal(s.c.ts_recent, TS_RECENT);
	b = snap(&s);
	seg_ts(&s, ACK, IRS + 1, ISS + 1, 65535, 100, TS_RECENT - 10);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	expect_nothing(&s);
	assert_unchanged(&s, &b);
	assert_int_equal(s.c.stats.paws_rejects, 1);
	assert_int_equal(s.c.ts_recent, TS_RECENT);
	assert_false(s.c.events & TCP_EV_READABLE);
	script_end(&s);
}

/* RFC 7323 5.3 R1 ("and the RST bit is not set"), 5.2: a RST with an old TSval still resets. */
static void test_paws_rst_old_tsval_processed(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	seg_ts(&s, RST, IRS + 1, 0, 0, 0, TS_RECENT - 10);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(s.c.error, -ECONNRESET);
	assert_int_equal(s.c.stats.paws_rejects, 0);
	script_end(&s);
}

/*
 * RFC 7323 4.3 (2): "If SEG.TSval >= TS.Recent and SEG.SEQ =< Last.ACK.sent,
 * then SEG.TSval is copied to TS.Recent"; with a delayed ACK the echo is the
 * earliest unacknowledged segment's TSval (4.3 case A).
 */
static void test_ts_recent_only_up_to_last_ack_sent(void **state)
{
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	fixture_established(&s, NULL);
	assert_int_equal(s.c.last_ack_sent, IRS + 1);
	seg_ts(&s, ACK, IRS + 1, ISS + 1, 65535, 100, 800); /* SEG.SEQ == Last.ACK.sent */
	expect_nothing(&s);				    /* ACK delayed */
	assert_int_equal(s.c.ts_recent, 800);
	seg_ts(&s, ACK, IRS + 101, ISS + 1, 65535, 100, 900); /* SEG.SEQ > Last.ACK.sent */
	t = expect_tx(&s, ACK, ISS + 1, IRS + 201, 0);
	assert_int_equal(s.c.ts_recent, 800);
	assert_true(t->opts.has_ts);
	assert_int_equal(t->opts.ts_ecr, 800);
	assert_int_equal(recv_all(&s), 200);
	script_end(&s);
}

/*
 * RFC 7323 4.3 (3): "When a TSopt is sent, its TSecr field is set to the
 * current TS.Recent value"; an out-of-order segment (SEG.SEQ > Last.ACK.sent)
 * does not move TS.Recent (4.3 case B), the segment filling the hole does.
 */
static void test_tsecr_echoes_ts_recent(void **state)
{
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	fixture_established(&s, NULL);
	t = &s.out.seg[s.next - 1]; /* the handshake's ACK */
	assert_true(t->opts.has_ts);
	assert_int_equal(t->opts.ts_ecr, TS_RECENT);
	seg_ts(&s, ACK, IRS + 1001, ISS + 1, 65535, 100, 900);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(t->opts.ts_ecr, TS_RECENT);
	assert_int_equal(s.c.ts_recent, TS_RECENT);
	seg_ts(&s, ACK, IRS + 1, ISS + 1, 65535, 1000, 950);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1101, 0);
	assert_int_equal(t->opts.ts_ecr, 950);
	assert_int_equal(s.c.ts_recent, 950);
	assert_int_equal(recv_all(&s), 1100);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 7323 5.5 (outdated timestamps): after more than 24 days idle TS.Recent
 * is invalid: "the segment is accepted, regardless of the failure of the
 * timestamp check, and rule R3 updates TS.Recent with the TSval from the
 * new segment" (the peer's clock may have wrapped its sign bit meanwhile).
 */
static void test_paws_ts_recent_invalid_after_24_days(void **state)
{
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	fixture_established(&s, NULL);
	advance(&s, 25ull * 24 * 3600 * 1000 * MS);
	seg_ts(&s, ACK, IRS + 1, ISS + 1, 65535, 100, TS_RECENT - 1000);
	assert_int_equal(s.c.stats.paws_rejects, 0);
	assert_int_equal(s.c.rcvq_bytes, 100);
	assert_int_equal(s.c.ts_recent, TS_RECENT - 1000);
	advance(&s, s.c.cfg.delack_ns);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 101, 0);
	assert_int_equal(t->opts.ts_ecr, TS_RECENT - 1000);
	assert_int_equal(recv_all(&s), 100);
	script_end(&s);
}

/*
 * RFC 7323 4.3 (2) with RFC 5961 5.2: a segment in the window whose ACK
 * acknowledges data never sent (a blind attacker's: only the sequence
 * number had to fall in the window) draws a challenge ACK and leaves
 * TS.Recent alone, so the peer's next real segment, with its own TSval,
 * is not dropped by PAWS (Linux bd090dfc634d fixed the same).
 */
static void test_bad_ack_leaves_ts_recent(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	seg_ts(&s, ACK, IRS + 1, ISS + 1 + 0x40000000u, 65535, 100, TS_RECENT + 0x40000000u);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.ack_unsent, 1);
	assert_int_equal(s.c.ts_recent, TS_RECENT);
	seg_ts(&s, ACK, IRS + 1, ISS + 1, 65535, 100, TS_RECENT + 1);
	assert_int_equal(s.c.stats.paws_rejects, 0);
	assert_int_equal(s.c.ts_recent, TS_RECENT + 1);
	assert_int_equal(recv_all(&s), 100);
	drain_tx(&s);
	script_end(&s);
}

/*
 * A RST or SYN whose data overlaps RCV.NXT is trimmed (a duplicate owes an
 * ACK) before its challenge: once the budget is spent, that owed ACK must
 * not go out anyway with the next output, here the peer's next pure ACK.
 */
static void test_suppressed_challenge_not_sent_later(void **state)
{
	struct script s;
	unsigned limit;

	(void)state;
	fixture_established(&s, NULL);
	limit = s.c.cfg.challenge_ack_limit;
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 100);
	assert_int_equal(recv_all(&s), 100);
	drain_tx(&s);
	for (unsigned i = 0; i < limit; i++)
		seg(&s, SYN, IRS + 1 + 200 + i, 0, 65535, 0);
	assert_int_equal(pending_tx(&s), limit);
	drain_tx(&s);
	seg(&s, RST, IRS + 1 + 50, 0, 0, 100); /* 50 seen bytes, 50 new */
	seg(&s, SYN, IRS + 1 + 50, 0, 65535, 100);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.challenge_acks_limited, 2);
	seg(&s, ACK, IRS + 1 + 100, ISS + 1, 65535, 0); /* needs no answer */
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_int_equal(s.c.rcv_nxt, IRS + 1 + 100);
	script_end(&s);
}

/*
 * PAWS is checked before the window, so its ACK needs no sequence number
 * guessed: segments with no data are answered within the challenge ACK
 * budget (RFC 5961 7; Linux rate-limits these too), data always.
 */
static void test_paws_acks_of_empty_segments_limited(void **state)
{
	struct script s;
	unsigned limit;

	(void)state;
	fixture_established(&s, NULL);
	limit = s.c.cfg.challenge_ack_limit;
	assert_true(limit > 0);
	for (unsigned i = 0; i < limit + 3; i++)
		seg_ts(&s, ACK, IRS + 1 + i * 7919, ISS + 1, 65535, 0, TS_RECENT - 10);
	assert_int_equal(pending_tx(&s), limit);
	drain_tx(&s);
	assert_int_equal(s.c.stats.paws_rejects, limit + 3);
	assert_int_equal(s.c.stats.challenge_acks_limited, 3);
	seg_ts(&s, ACK, IRS + 1, ISS + 1, 65535, 100, TS_RECENT - 10); /* data: answered */
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.ts_recent, TS_RECENT);
	script_end(&s);
}

/* ---- window scale (RFC 7323 2.2, 2.3) ---- */

static void big_buffer(struct tcp_config *cfg, struct fixture_opts *o)
{
	script_config(cfg);
	cfg->rcv_buf = 4u << 20;
	*o = (struct fixture_opts){.ts = true,
				   .sack = true,
				   .ws = true,
				   .peer_wscale = 7,
				   .peer_mss = 1460,
				   .peer_window = 65535,
				   .cfg = cfg};
}

/*
 * RFC 7323 2.2: "The window field in a segment where the SYN bit is set
 * (i.e., a <SYN> or <SYN,ACK>) MUST NOT be scaled": a 4 MB buffer still
 * puts 65535 in our SYN, with shift 7 offered.
 */
static void test_ws_syn_window_unscaled_active(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o;
	struct script s;

	(void)state;
	big_buffer(&cfg, &o);
	fixture_syn_sent(&s, &o);
	assert_int_equal(s.out.seg[0].wnd, 65535);
	assert_true(s.out.seg[0].opts.has_wscale);
	assert_int_equal(s.out.seg[0].opts.wscale, 7);
	script_end(&s);
}

/* RFC 7323 2.2 for the <SYN,ACK>, then 2.3: later windows are shifted by our 7. */
static void test_ws_syn_ack_window_unscaled_passive(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o;
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	big_buffer(&cfg, &o);
	fixture_syn_received(&s, &o);
	assert_int_equal(s.out.seg[0].wnd, 65535);
	assert_true(s.out.seg[0].opts.has_wscale);
	assert_int_equal(s.out.seg[0].opts.wscale, 7);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 2001, 0);
	assert_int_equal(t->wnd, ((4u << 20) - 2000) >> 7);
	assert_int_equal(recv_all(&s), 2000);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 9293 3.8.6 (the right edge never moves left) across RFC 7323 2.2:
 * in SYN-RECEIVED an ACK to an unacceptable segment offers the scaled
 * window (4 MiB); the retransmitted <SYN,ACK>, whose window field is
 * unscaled (65535), must not take that back: data 70000 bytes on is
 * still in the window once the handshake completes.
 */
static void test_syn_ack_retransmit_keeps_right_edge(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o;
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	big_buffer(&cfg, &o);
	fixture_syn_received(&s, &o);
	assert_int_equal(s.c.rcv_adv, IRS + 1 + 65535);
	seg(&s, ACK, IRS + 1 + 100000, ISS + 1, 65535, 0); /* out of the window: an ACK */
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(t->wnd, (4u << 20) >> 7);
	assert_int_equal(s.c.rcv_adv, IRS + 1 + (4u << 20));
	advance_next(&s); /* the SYN-ACK's timer */
	t = expect_tx(&s, SYN | ACK, ISS, IRS + 1, 0);
	assert_true(t->retransmit);
	assert_int_equal(t->wnd, 65535);
	assert_int_equal(s.c.rcv_adv, IRS + 1 + (4u << 20));
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	seg(&s, ACK, IRS + 1 + 70000, ISS + 1, 65535, 1000);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(t->opts.sack_count, 1); /* kept out of order */
	assert_int_equal(s.c.reass.n, 1);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 7323 2.2/2.3: scaling is in effect only if both sides sent the option.
 * The peer's SYN,ACK has none: our window field is unscaled (at most 65535)
 * and the peer's window is taken as is.
 */
static void test_ws_peer_without_option_active(void **state)
{
	struct script s;
	struct tcp_options po = {
	    .has_mss = true, .mss = 1460, .sack_permitted = true, .has_ts = true};
	const struct tcp_tx *t;

	(void)state;
	fixture_syn_sent(&s, NULL);
	assert_true(s.out.seg[0].opts.has_wscale); /* we offered it in our SYN */
	po.ts_val = s.peer_ts;
	po.ts_ecr = s.out.seg[0].opts.ts_val;
	s.peer_ts_on = true;
	seg_opts(&s, SYN | ACK, IRS, ISS + 1, 65535, 0, &po);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_int_equal(t->wnd, 65535); /* 256 KB, unscaled, capped */
	assert_int_equal(s.c.rcv_wscale, 0);
	assert_int_equal(s.c.snd_wscale, 0);
	seg(&s, ACK, IRS + 1, ISS + 1, 1000, 0);
	assert_int_equal(s.c.snd_wnd, 1000);
	script_end(&s);
}

/*
 * RFC 7323 2.2: a <SYN,ACK> carries the option "only if a Window Scale
 * option was received in the initial <SYN>"; without it nothing is scaled.
 */
static void test_ws_peer_without_option_passive(void **state)
{
	struct fixture_opts o = {
	    .ts = true, .sack = true, .ws = false, .peer_mss = 1460, .peer_window = 65535};
	struct script s;

	(void)state;
	fixture_syn_received(&s, &o);
	assert_false(s.out.seg[0].opts.has_wscale);
	seg(&s, ACK, IRS + 1, ISS + 1, 1000, 0);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_int_equal(s.c.snd_wnd, 1000);
	seg(&s, ACK, IRS + 1, ISS + 1, 1000, 1000);
	seg(&s, ACK, IRS + 1001, ISS + 1, 1000, 1000);
	assert_int_equal(expect_tx(&s, ACK, ISS + 1, IRS + 2001, 0)->wnd, 65535);
	assert_int_equal(recv_all(&s), 2000);
	drain_tx(&s);
	script_end(&s);
}

/* RFC 7323 2.2: with window scaling off here, the peer's offered shift is not applied. */
static void test_ws_disabled_locally(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = {.ts = true,
				 .sack = true,
				 .ws = true,
				 .peer_wscale = 7,
				 .peer_mss = 1460,
				 .peer_window = 65535,
				 .cfg = &cfg};
	struct tcp_options po = {.has_mss = true,
				 .mss = 1460,
				 .has_wscale = true,
				 .wscale = 7,
				 .sack_permitted = true,
				 .has_ts = true};
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	script_config(&cfg);
	cfg.window_scaling = false;
	fixture_syn_sent(&s, &o);
	assert_false(s.out.seg[0].opts.has_wscale);
	po.ts_val = s.peer_ts;
	po.ts_ecr = s.out.seg[0].opts.ts_val;
	s.peer_ts_on = true;
	seg_opts(&s, SYN | ACK, IRS, ISS + 1, 65535, 0, &po); /* the peer offers a shift anyway */
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(t->wnd, 65535);
	assert_int_equal(s.c.snd_wscale, 0);
	seg(&s, ACK, IRS + 1, ISS + 1, 1000, 0);
	assert_int_equal(s.c.snd_wnd, 1000);
	script_end(&s);
}

/* RFC 7323 2.3: a shift of 14 is used as is: SND.WND = SEG.WND << 14. */
static void test_ws_peer_shift_14(void **state)
{
	struct fixture_opts o = {.ts = true,
				 .sack = true,
				 .ws = true,
				 .peer_wscale = 14,
				 .peer_mss = 1460,
				 .peer_window = 65535};
	struct script s;

	(void)state;
	fixture_established(&s, &o);
	assert_int_equal(s.c.snd_wscale, 14);
	assert_int_equal(s.c.snd_wnd, 65535); /* the SYN,ACK's, unscaled */
	seg(&s, ACK, IRS + 1, ISS + 1, 3, 0);
	assert_int_equal(s.c.snd_wnd, 3u << 14);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	assert_int_equal(s.c.snd_wnd, 65535u << 14);
	script_end(&s);
}

/*
 * RFC 7323 2.3: "If a Window Scale option is received with a shift.cnt
 * value larger than 14, the TCP ... MUST use 14 instead".
 */
static void test_ws_peer_shift_above_14_clamped(void **state)
{
	static const uint8_t shifts[] = {15, 255};

	(void)state;
	for (unsigned i = 0; i < sizeof(shifts); i++) {
		struct fixture_opts o = {.ts = true,
					 .sack = true,
					 .ws = true,
					 .peer_wscale = shifts[i],
					 .peer_mss = 1460,
					 .peer_window = 65535};
		struct script s;

		fixture_syn_received(&s, &o);
		assert_int_equal(s.c.snd_wscale, 14);
		seg(&s, ACK, IRS + 1, ISS + 1, 3, 0);
		assert_int_equal(s.c.state, TCP_ESTABLISHED);
		assert_int_equal(s.c.snd_wnd, 3u << 14);
		script_end(&s);
	}
}

/*
 * RFC 7323 2.3: every non-SYN segment carries SEG.WND = RCV.WND >>
 * Rcv.Wind.Shift (256 KB buffer: shift 3).
 */
static void test_ws_advertised_window_shifted(void **state)
{
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	fixture_established(&s, NULL);
	assert_int_equal(s.c.rcv_wscale, 3);
	t = &s.out.seg[s.next - 1]; /* the handshake's ACK */
	assert_int_equal(t->wnd, (256u * 1024) >> 3);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	advance(&s, s.c.cfg.delack_ns);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1001, 0);
	assert_int_equal(t->wnd, (256u * 1024 - 1000) >> 3);
	assert_int_equal(recv_all(&s), 1000);
	drain_tx(&s);
	script_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rst_exact_syn_received_passive),
	    cmocka_unit_test(test_rst_exact_syn_received_active),
	    cmocka_unit_test(test_rst_exact_established),
	    cmocka_unit_test(test_rst_exact_established_flushes),
	    cmocka_unit_test(test_rst_exact_fin_wait_1),
	    cmocka_unit_test(test_rst_exact_fin_wait_2),
	    cmocka_unit_test(test_rst_exact_close_wait),
	    cmocka_unit_test(test_rst_exact_closing),
	    cmocka_unit_test(test_rst_exact_last_ack),
	    cmocka_unit_test(test_rst_exact_time_wait),
	    cmocka_unit_test(test_rst_inexact_syn_received),
	    cmocka_unit_test(test_rst_inexact_established),
	    cmocka_unit_test(test_rst_inexact_fin_wait_1),
	    cmocka_unit_test(test_rst_inexact_fin_wait_2),
	    cmocka_unit_test(test_rst_inexact_close_wait),
	    cmocka_unit_test(test_rst_inexact_closing),
	    cmocka_unit_test(test_rst_inexact_last_ack),
	    cmocka_unit_test(test_rst_inexact_time_wait),
	    cmocka_unit_test(test_rst_outside_syn_received),
	    cmocka_unit_test(test_rst_outside_established),
	    cmocka_unit_test(test_rst_outside_fin_wait_1),
	    cmocka_unit_test(test_rst_outside_fin_wait_2),
	    cmocka_unit_test(test_rst_outside_close_wait),
	    cmocka_unit_test(test_rst_outside_closing),
	    cmocka_unit_test(test_rst_outside_last_ack),
	    cmocka_unit_test(test_rst_outside_time_wait),
	    cmocka_unit_test(test_syn_in_window_established_challenge_ack),
	    cmocka_unit_test(test_challenge_acks_throttled),
	    cmocka_unit_test(test_suppressed_challenge_not_sent_later),
	    cmocka_unit_test(test_syn_outside_window_established_ack),
	    cmocka_unit_test(test_accept_empty_below_window),
	    cmocka_unit_test(test_accept_empty_right_edge),
	    cmocka_unit_test(test_accept_data_beyond_window),
	    cmocka_unit_test(test_accept_data_straddling_left_edge),
	    cmocka_unit_test(test_accept_data_straddling_right_edge),
	    cmocka_unit_test(test_accept_zero_window_empty),
	    cmocka_unit_test(test_accept_zero_window_data),
	    cmocka_unit_test(test_accept_zero_window_rst),
	    cmocka_unit_test(test_old_duplicate_gets_ack),
	    cmocka_unit_test(test_ack_of_unsent_data),
	    cmocka_unit_test(test_ack_too_old),
	    cmocka_unit_test(test_ack_too_old_small_window),
	    cmocka_unit_test(test_no_ack_bit_dropped),
	    cmocka_unit_test(test_paws_rejects_old_tsval),
	    cmocka_unit_test(test_paws_rst_old_tsval_processed),
	    cmocka_unit_test(test_ts_recent_only_up_to_last_ack_sent),
	    cmocka_unit_test(test_tsecr_echoes_ts_recent),
	    cmocka_unit_test(test_paws_ts_recent_invalid_after_24_days),
	    cmocka_unit_test(test_bad_ack_leaves_ts_recent),
	    cmocka_unit_test(test_paws_acks_of_empty_segments_limited),
	    cmocka_unit_test(test_ws_syn_window_unscaled_active),
	    cmocka_unit_test(test_ws_syn_ack_window_unscaled_passive),
	    cmocka_unit_test(test_syn_ack_retransmit_keeps_right_edge),
	    cmocka_unit_test(test_ws_peer_without_option_active),
	    cmocka_unit_test(test_ws_peer_without_option_passive),
	    cmocka_unit_test(test_ws_disabled_locally),
	    cmocka_unit_test(test_ws_peer_shift_14),
	    cmocka_unit_test(test_ws_peer_shift_above_14_clamped),
	    cmocka_unit_test(test_ws_advertised_window_shifted),
	};

	return cmocka_run_group_tests(tests, script_group_setup, script_group_teardown);
}
