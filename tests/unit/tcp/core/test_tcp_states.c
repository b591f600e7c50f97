/*
 * test_tcp_states.c - the state machine of RFC 9293 3.3.2 figure 5, one
 * transition (or one request in one state) per test, checked against the
 * event processing text of RFC 9293 3.10.
 */
#include <errno.h>

#include "tcp_script.h"

static const struct fixture_opts plain_opts = {
    .ts = true,
    .sack = true,
    .ws = true,
    .peer_wscale = 7,
    .peer_mss = 1460,
    .peer_window = 65535,
};

/* ---- opening ---- */

/*
 * RFC 9293 3.10.1 OPEN (active) and 3.10.7.3: SYN-SENT sends <SEQ=ISS><CTL=SYN>;
 * a SYN,ACK acknowledging it moves to ESTABLISHED and is acknowledged with
 * <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>.
 */
static void test_active_open(void **state)
{
	struct script s;
	const struct tcp_tx *syn;

	(void)state;
	fixture_syn_sent(&s, NULL);
	syn = &s.out.seg[0];
	assert_true(syn->opts.has_mss && syn->opts.has_wscale && syn->opts.has_ts &&
		    syn->opts.sack_permitted);
	assert_int_equal(s.c.snd_una, ISS);
	assert_int_equal(s.c.snd_nxt, ISS + 1);
	seg(&s, SYN | ACK, IRS, ISS + 1, 65535, 0);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_true(s.c.events & TCP_EV_CONNECTED);
	assert_int_equal(s.c.irs, IRS);
	assert_int_equal(s.c.snd_una, ISS + 1);
	assert_int_equal(s.c.rcv_nxt, IRS + 1);
	assert_int_equal(s.c.rto_at, 0); /* RFC 6298 5.2: everything acknowledged */
	script_end(&s);
}

/*
 * RFC 9293 3.10.1 OPEN (passive), 3.10.7.2 and 3.10.7.4 fifth: LISTEN takes a
 * SYN, answers <SEQ=ISS><ACK=RCV.NXT><CTL=SYN,ACK> in SYN-RECEIVED, and the
 * ACK of our SYN moves to ESTABLISHED.
 */
static void test_passive_open(void **state)
{
	struct script s;

	(void)state;
	fixture_closed(&s, NULL);
	tcp_listen(&s.c);
	assert_int_equal(s.c.state, TCP_LISTEN);
	seg(&s, SYN, IRS, 0, 65535, 0);
	expect_tx(&s, SYN | ACK, ISS, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_SYN_RECEIVED);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_true(s.c.events & TCP_EV_CONNECTED);
	assert_int_equal(s.c.snd_una, ISS + 1);
	script_end(&s);
}

/* RFC 9293 3.10.7.2 LISTEN, first: an incoming RST is ignored. */
static void test_listen_ignores_rst(void **state)
{
	struct script s;

	(void)state;
	fixture_closed(&s, NULL);
	tcp_listen(&s.c);
	seg(&s, RST, IRS, 0, 0, 0);
	seg(&s, RST | ACK, IRS, ISS + 1, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_LISTEN);
	script_end(&s);
}

/* RFC 9293 3.10.7.2 LISTEN, second: any ACK gets <SEQ=SEG.ACK><CTL=RST>. */
static void test_listen_ack_gets_rst(void **state)
{
	struct script s;

	(void)state;
	fixture_closed(&s, NULL);
	tcp_listen(&s.c);
	seg(&s, ACK, IRS, 4242, 65535, 0);
	expect_tx(&s, RST, 4242, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_LISTEN);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.3 SYN-SENT fourth ("Otherwise, enter SYN-RECEIVED, form a
 * SYN,ACK segment <SEQ=ISS><ACK=RCV.NXT><CTL=SYN,ACK>") and 3.5 figure 8
 * line 3: simultaneous open, the peer's SYN alone.
 */
static void test_simultaneous_open_syn(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_sent(&s, NULL);
	seg(&s, SYN, IRS, 0, 65535, 0);
	expect_tx(&s, SYN | ACK, ISS, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_SYN_RECEIVED);
	assert_int_equal(s.c.rcv_nxt, IRS + 1);
	assert_int_equal(s.c.snd_una, ISS); /* our SYN is not acknowledged yet */
	assert_false(s.c.events & TCP_EV_CONNECTED);
	script_end(&s);
}

/*
 * RFC 9293 3.5 figure 8 line 6: in a simultaneous open, the peer's
 * <SEQ=IRS><ACK=ISS+1><CTL=SYN,ACK> moves SYN-RECEIVED to ESTABLISHED.
 */
static void test_simultaneous_open_syn_ack(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_received_active(&s, NULL);
	seg(&s, SYN | ACK, IRS, ISS + 1, 65535, 0);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_true(s.c.events & TCP_EV_CONNECTED);
	assert_int_equal(s.c.snd_una, ISS + 1);
	assert_int_equal(s.c.rcv_nxt, IRS + 1);
	drain_tx(&s); /* an ACK here is allowed, nothing else is checked */
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 fifth, SYN-RECEIVED: after a simultaneous open, an ACK
 * with SND.UNA < SEG.ACK =< SND.NXT enters ESTABLISHED.
 */
static void test_simultaneous_open_ack(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_received_active(&s, NULL);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_true(s.c.events & TCP_EV_CONNECTED);
	assert_int_equal(s.c.snd_una, ISS + 1);
	assert_int_equal(s.c.rto_at, 0);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.3 SYN-SENT first: "If SEG.ACK =< ISS or SEG.ACK > SND.NXT,
 * send a reset <SEQ=SEG.ACK><CTL=RST>", and stay in SYN-SENT.
 */
static void test_syn_sent_bad_ack_gets_rst(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_sent(&s, NULL);
	seg(&s, SYN | ACK, IRS, ISS, 65535, 0); /* SEG.ACK =< ISS */
	expect_tx(&s, RST, ISS, 0, 0);
	seg(&s, ACK, IRS, ISS + 2, 65535, 0); /* SEG.ACK > SND.NXT */
	expect_tx(&s, RST, ISS + 2, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_SYN_SENT);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.3 SYN-SENT second: a RST whose ACK is acceptable: "signal
 * to the user 'error: connection reset', drop the segment, enter CLOSED".
 */
static void test_syn_sent_rst_with_ack_refused(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_sent(&s, NULL);
	seg(&s, RST | ACK, 0, ISS + 1, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(s.c.error, -ECONNREFUSED);
	assert_true(s.c.events & TCP_EV_RESET);
	assert_true(s.c.events & TCP_EV_CLOSED);
	assert_int_equal(tcp_next_deadline(&s.c), UINT64_MAX);
	script_end(&s);
}

/* RFC 9293 3.10.7.3 SYN-SENT second: a RST without ACK: "drop the segment and return". */
static void test_syn_sent_rst_without_ack_ignored(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_sent(&s, NULL);
	seg(&s, RST, IRS, 0, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_SYN_SENT);
	assert_int_equal(s.c.error, 0);
	assert_int_equal(s.c.events, 0);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.3 SYN-SENT first: a RST with an unacceptable ACK is
 * dropped ("unless the RST bit is set, if so drop the segment and return").
 */
static void test_syn_sent_rst_bad_ack_dropped(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_sent(&s, NULL);
	seg(&s, RST | ACK, 0, ISS + 7, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_SYN_SENT);
	assert_int_equal(s.c.events, 0);
	script_end(&s);
}

static void short_syn_config(struct tcp_config *cfg)
{
	script_config(cfg);
	cfg->rto_init_ns = 100 * MS;
	cfg->rto_max_ns = 60000 * MS;
	cfg->syn_retries = 3;
}

/*
 * RFC 9293 3.8.1 and RFC 6298 5.4/5.5: the SYN is retransmitted when the
 * timer expires, and each timeout is twice the previous one.
 */
static void test_syn_sent_retransmit_backoff(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = plain_opts;
	struct script s;
	uint64_t rto = 100 * MS;

	(void)state;
	short_syn_config(&cfg);
	o.cfg = &cfg;
	fixture_syn_sent(&s, &o);
	for (unsigned i = 0; i < 3; i++, rto *= 2) {
		advance(&s, rto - 1);
		expect_nothing(&s);
		advance(&s, 1);
		assert_true(expect_tx(&s, SYN, ISS, 0, 0)->retransmit);
		expect_nothing(&s);
		assert_int_equal(s.c.state, TCP_SYN_SENT);
	}
	script_end(&s);
}

/* RFC 9293 3.8.3 (R2) / RFC 1122 4.2.3.5: after syn_retries retransmissions, give up. */
static void test_syn_sent_gives_up(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = plain_opts;
	struct script s;

	(void)state;
	short_syn_config(&cfg);
	o.cfg = &cfg;
	fixture_syn_sent(&s, &o);
	advance(&s, (100 + 200 + 400) * MS);
	for (unsigned i = 0; i < 3; i++)
		expect_tx(&s, SYN, ISS, 0, 0);
	advance(&s, 800 * MS - 1);
	assert_int_equal(s.c.state, TCP_SYN_SENT);
	advance(&s, 1);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(s.c.error, -ETIMEDOUT);
	assert_true(s.c.events & TCP_EV_TIMEOUT);
	assert_true(s.c.events & TCP_EV_CLOSED);
	script_end(&s);
}

/*
 * RFC 9293 3.8.1 / 3.10.7.4 (SYN-RECEIVED): the peer retransmitted its SYN,
 * so our SYN,ACK was lost: it is sent again, <SEQ=ISS><ACK=RCV.NXT>
 * <CTL=SYN,ACK> (a bare ACK could not complete the handshake).
 */
static void test_syn_received_retransmitted_syn(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_received(&s, NULL);
	advance(&s, 10 * MS);
	seg(&s, SYN, IRS, 0, 65535, 0);
	expect_tx(&s, SYN | ACK, ISS, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_SYN_RECEIVED);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 fifth, SYN-RECEIVED: "If the segment acknowledgment is
 * not acceptable, form a reset segment <SEQ=SEG.ACK><CTL=RST>".
 */
static void test_syn_received_bad_ack_gets_rst(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_received(&s, NULL);
	seg(&s, ACK, IRS + 1, ISS + 100, 65535, 0); /* SEG.ACK > SND.NXT */
	expect_tx(&s, RST, ISS + 100, 0, 0);
	seg(&s, ACK, IRS + 1, ISS, 65535, 0); /* SEG.ACK =< SND.UNA */
	expect_tx(&s, RST, ISS, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_SYN_RECEIVED);
	assert_false(s.c.events & TCP_EV_CONNECTED);
	script_end(&s);
}

/* RFC 9293 3.8.1, RFC 6298 5.4/5.5: the SYN,ACK is retransmitted with backoff. */
static void test_syn_received_retransmit_backoff(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = plain_opts;
	struct script s;
	uint64_t rto = 100 * MS;

	(void)state;
	short_syn_config(&cfg);
	o.cfg = &cfg;
	fixture_syn_received(&s, &o);
	for (unsigned i = 0; i < 3; i++, rto *= 2) {
		advance(&s, rto - 1);
		expect_nothing(&s);
		advance(&s, 1);
		assert_true(expect_tx(&s, SYN | ACK, ISS, IRS + 1, 0)->retransmit);
		expect_nothing(&s);
		assert_int_equal(s.c.state, TCP_SYN_RECEIVED);
	}
	script_end(&s);
}

/* RFC 9293 3.8.3 (R2): SYN-RECEIVED gives up after syn_retries: TCP_EV_TIMEOUT. */
static void test_syn_received_gives_up(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = plain_opts;
	struct script s;

	(void)state;
	short_syn_config(&cfg);
	o.cfg = &cfg;
	fixture_syn_received(&s, &o);
	advance(&s, (100 + 200 + 400) * MS);
	for (unsigned i = 0; i < 3; i++)
		expect_tx(&s, SYN | ACK, ISS, IRS + 1, 0);
	advance(&s, 800 * MS);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_true(s.c.events & TCP_EV_TIMEOUT);
	assert_int_equal(s.c.error, -ETIMEDOUT);
	script_end(&s);
}

/* ---- closing ---- */

/*
 * RFC 9293 3.10.7.4 fifth, FIN-WAIT-1: "if the FIN segment is now
 * acknowledged, then enter FIN-WAIT-2".
 */
static void test_fin_wait_1_to_fin_wait_2(void **state)
{
	struct script s;

	(void)state;
	fixture_fin_wait_1(&s, NULL);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0); /* acknowledges nothing new */
	assert_int_equal(s.c.state, TCP_FIN_WAIT_1);
	seg(&s, ACK, IRS + 1, ISS + 2, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_FIN_WAIT_2);
	assert_int_equal(s.c.rto_at, 0);
	script_end(&s);
}

/* RFC 9293 3.10.7.4 seventh: data is still delivered in FIN-WAIT-1 (half-close, 3.6). */
static void test_fin_wait_1_receives_data(void **state)
{
	struct script s;

	(void)state;
	fixture_fin_wait_1(&s, NULL);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	expect_tx(&s, ACK, ISS + 2, IRS + 2001, 0);
	assert_int_equal(s.c.state, TCP_FIN_WAIT_1);
	assert_true(s.c.events & TCP_EV_READABLE);
	assert_int_equal(recv_all(&s), 2000);
	script_end(&s);
}

/*
 * RFC 9293 3.6 (half-close) and 3.10.7.4 seventh: in FIN-WAIT-2 the peer may
 * still send; its data is delivered and acknowledged.
 */
static void test_fin_wait_2_receives_data(void **state)
{
	struct script s;

	(void)state;
	fixture_fin_wait_2(&s, NULL);
	seg(&s, ACK, IRS + 1, ISS + 2, 65535, 1000);
	seg(&s, ACK, IRS + 1001, ISS + 2, 65535, 1000);
	expect_tx(&s, ACK, ISS + 2, IRS + 2001, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_FIN_WAIT_2);
	assert_true(s.c.events & TCP_EV_READABLE);
	assert_int_equal(recv_all(&s), 2000);
	/* and its FIN afterwards ends in TIME-WAIT (3.10.7.4 eighth) */
	seg(&s, FIN | ACK, IRS + 2001, ISS + 2, 65535, 0);
	expect_tx(&s, ACK, ISS + 2, IRS + 2002, 0);
	assert_int_equal(s.c.state, TCP_TIME_WAIT);
	script_end(&s);
}

/* RFC 9293 3.10.2 SEND, CLOSE-WAIT: "Queue this request until ... sent"; data still flows. */
static void test_close_wait_can_send(void **state)
{
	struct script s;

	(void)state;
	fixture_close_wait(&s, NULL);
	assert_int_equal(app_send(&s, 500), 500);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 2, 500);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 2, ISS + 501, 65535, 0);
	assert_int_equal(s.c.snd_una, ISS + 501);
	assert_int_equal(s.c.state, TCP_CLOSE_WAIT);
	script_end(&s);
}

/*
 * RFC 9293 3.10.4 CLOSE in CLOSE-WAIT (FIN after the queued data, LAST-ACK)
 * and 3.10.7.4 fifth LAST-ACK: "If our FIN is now acknowledged, delete the
 * TCB, enter the CLOSED state".
 */
static void test_close_wait_send_close_last_ack(void **state)
{
	struct script s;

	(void)state;
	fixture_close_wait(&s, NULL);
	assert_int_equal(app_send(&s, 500), 500);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 2, 500);
	app_close(&s);
	expect_tx(&s, FIN | ACK, ISS + 501, IRS + 2, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_LAST_ACK);
	seg(&s, ACK, IRS + 2, ISS + 501, 65535, 0); /* the data, not the FIN */
	assert_int_equal(s.c.state, TCP_LAST_ACK);
	seg(&s, ACK, IRS + 2, ISS + 502, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_true(s.c.events & TCP_EV_CLOSED);
	assert_int_equal(s.c.error, 0);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 fifth, CLOSING: "if the ACK acknowledges our FIN, then
 * enter the TIME-WAIT state"; the 2 MSL timer starts (3.10.7.4 eighth).
 */
static void test_closing_to_time_wait(void **state)
{
	struct script s;

	(void)state;
	fixture_closing(&s, NULL);
	seg(&s, ACK, IRS + 2, ISS + 2, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_TIME_WAIT);
	assert_int_equal(tcp_next_deadline(&s.c), s.now + 2 * s.c.cfg.msl_ns);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 fifth, CLOSING: "otherwise, ignore the segment": an
 * ACK that does not acknowledge our FIN (SEG.ACK = our FIN's own sequence
 * number) leaves the connection in CLOSING, our FIN still timed.
 */
static void test_closing_stays_until_fin_acked(void **state)
{
	struct script s;

	(void)state;
	fixture_closing(&s, NULL);
	seg(&s, ACK, IRS + 2, ISS + 1, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSING);
	assert_true(s.c.rto_at != 0);
	seg(&s, ACK, IRS + 2, ISS + 2, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_TIME_WAIT);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 eighth, FIN-WAIT-1: "If our FIN has been ACKed (perhaps
 * in this segment), then enter TIME-WAIT".
 */
static void test_fin_wait_1_fin_ack_to_time_wait(void **state)
{
	struct script s;

	(void)state;
	fixture_fin_wait_1(&s, NULL);
	seg(&s, FIN | ACK, IRS + 1, ISS + 2, 65535, 0);
	expect_tx(&s, ACK, ISS + 2, IRS + 2, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_TIME_WAIT);
	assert_true(s.c.events & TCP_EV_EOF);
	assert_int_equal(tcp_next_deadline(&s.c), s.now + 2 * s.c.cfg.msl_ns);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 eighth, TIME-WAIT: "The only thing that can arrive in
 * this state is a retransmission of the remote FIN. Acknowledge it, and
 * restart the 2 MSL timeout."
 */
static void test_time_wait_fin_restarts_timer(void **state)
{
	struct script s;
	uint64_t msl2;

	(void)state;
	fixture_time_wait(&s, NULL);
	msl2 = 2 * s.c.cfg.msl_ns;
	advance(&s, msl2 / 2);
	seg(&s, FIN | ACK, IRS + 1, ISS + 2, 65535, 0);
	expect_tx(&s, ACK, ISS + 2, IRS + 2, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_TIME_WAIT);
	advance(&s, msl2 - 1); /* past the first deadline */
	assert_int_equal(s.c.state, TCP_TIME_WAIT);
	advance(&s, 1);
	assert_int_equal(s.c.state, TCP_CLOSED);
	script_end(&s);
}

/*
 * The same rule's other side: only the peer's FIN again restarts the
 * timer. A FIN at another sequence number (out of the window) is answered
 * but leaves the deadline, or one forged FIN a second would hold the
 * 4-tuple in TIME-WAIT for ever.
 */
static void test_time_wait_other_fin_keeps_timer(void **state)
{
	struct script s;
	uint64_t msl2;

	(void)state;
	fixture_time_wait(&s, NULL);
	msl2 = 2 * s.c.cfg.msl_ns;
	advance(&s, msl2 / 2);
	seg(&s, FIN | ACK, IRS - 5000, ISS + 2, 65535, 0);
	drain_tx(&s);
	assert_int_equal(s.c.state, TCP_TIME_WAIT);
	advance(&s, msl2 - msl2 / 2); /* the first deadline */
	assert_int_equal(s.c.state, TCP_CLOSED);
	script_end(&s);
}

/* RFC 9293 3.10.8: TIME-WAIT ends exactly 2 * MSL after it began (msl_ns configured). */
static void test_time_wait_expires_at_2msl(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = plain_opts;
	struct script s;

	(void)state;
	script_config(&cfg);
	cfg.msl_ns = 7 * MS;
	o.cfg = &cfg;
	fixture_time_wait(&s, &o);
	assert_int_equal(tcp_next_deadline(&s.c), s.now + 14 * MS);
	advance(&s, 14 * MS - 1);
	assert_int_equal(s.c.state, TCP_TIME_WAIT);
	assert_false(s.c.events & TCP_EV_CLOSED);
	advance(&s, 1);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_true(s.c.events & TCP_EV_CLOSED);
	assert_int_equal(s.c.error, 0);
	assert_int_equal(tcp_next_deadline(&s.c), UINT64_MAX);
	script_end(&s);
}

/* ---- CLOSE (RFC 9293 3.10.4) ---- */

/* RFC 9293 3.10.4 LISTEN: "Delete TCB, enter CLOSED state". */
static void test_close_listen(void **state)
{
	struct script s;

	(void)state;
	fixture_closed(&s, NULL);
	tcp_listen(&s.c);
	app_close(&s);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	script_end(&s);
}

/* RFC 9293 3.10.4 SYN-SENT: "Delete the TCB"; no SYN is retransmitted afterwards. */
static void test_close_syn_sent(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_sent(&s, NULL);
	app_close(&s);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(tcp_next_deadline(&s.c), UINT64_MAX);
	advance(&s, 10000 * MS);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 9293 3.10.4 SYN-RECEIVED: CLOSE may be queued "for processing after
 * entering ESTABLISHED state". lunar queues it (a FIN sent before our SYN
 * is acknowledged would be dropped by a peer still in SYN-SENT): nothing
 * is sent at once; the handshake's ACK then sends the FIN and the
 * connection enters FIN-WAIT-1.
 */
static void test_close_syn_received(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_received(&s, NULL);
	app_close(&s);
	assert_int_equal(s.c.state, TCP_SYN_RECEIVED);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	expect_tx(&s, FIN | ACK, ISS + 1, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_FIN_WAIT_1);
	script_end(&s);
}

/*
 * RFC 9293 3.10.4 SYN-RECEIVED then 3.8.1: our SYN is still unacknowledged
 * after CLOSE, so a retransmission timeout resends it (<SEQ=ISS>, SYN set);
 * once the handshake completes the FIN takes ISS+1, never ISS.
 */
static void test_close_syn_received_retransmits_syn(void **state)
{
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	fixture_syn_received(&s, NULL);
	app_close(&s);
	drain_tx(&s);
	advance(&s, s.c.cfg.rto_init_ns);
	t = take_tx(&s);
	assert_int_equal(t->seq, ISS);
	assert_true(t->flags & SYN);
	drain_tx(&s);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	expect_tx(&s, FIN | ACK, ISS + 1, IRS + 1, 0);
	/* the peer acknowledges the FIN: FIN-WAIT-2 */
	seg(&s, ACK, IRS + 1, ISS + 2, 65535, 0);
	assert_int_equal(s.c.state, TCP_FIN_WAIT_2);
	drain_tx(&s);
	script_end(&s);
}

/* RFC 9293 3.10.4 ESTABLISHED: queued data, then a FIN; FIN-WAIT-1. */
static void test_close_established(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	assert_int_equal(app_send(&s, 300), 300);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 300);
	app_close(&s);
	expect_tx(&s, FIN | ACK, ISS + 301, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_FIN_WAIT_1);
	script_end(&s);
}

/*
 * RFC 9293 3.10.4 CLOSE-WAIT: "Queue this request until all preceding SENDs
 * have been segmentized; then send a FIN segment, enter LAST-ACK state".
 */
static void test_close_close_wait(void **state)
{
	struct script s;

	(void)state;
	fixture_close_wait(&s, NULL);
	app_close(&s);
	expect_tx(&s, FIN | ACK, ISS + 1, IRS + 2, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_LAST_ACK);
	script_end(&s);
}

static const struct {
	const char *name;
	script_fixture_fn fix;
	enum tcp_state state;
} closing_states[] = {
    {"FIN-WAIT-1", fixture_fin_wait_1, TCP_FIN_WAIT_1},
    {"FIN-WAIT-2", fixture_fin_wait_2, TCP_FIN_WAIT_2},
    {"CLOSING", fixture_closing, TCP_CLOSING},
    {"LAST-ACK", fixture_last_ack, TCP_LAST_ACK},
    {"TIME-WAIT", fixture_time_wait, TCP_TIME_WAIT},
};

/*
 * RFC 9293 3.10.4 FIN-WAIT-1/2 ("an 'ok' response would be acceptable, too,
 * as long as a second FIN is not emitted"), CLOSING, LAST-ACK, TIME-WAIT
 * ("error: connection closing"): a second CLOSE sends nothing, changes nothing.
 */
static void test_close_in_closing_states_noop(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sizeof(closing_states) / sizeof(closing_states[0]); i++) {
		struct script s;

		closing_states[i].fix(&s, NULL);
		app_close(&s);
		if (pending_tx(&s))
			fail_msg("%s: CLOSE sent a segment", closing_states[i].name);
		assert_int_equal(s.c.state, closing_states[i].state);
		script_end(&s);
	}
}

/* RFC 9293 3.10.2 SEND after CLOSE: "error: connection closing" (-EPIPE). */
static void test_send_after_close_epipe(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sizeof(closing_states) / sizeof(closing_states[0]); i++) {
		struct script s;

		closing_states[i].fix(&s, NULL);
		assert_int_equal(app_send(&s, 100), -EPIPE);
		if (pending_tx(&s))
			fail_msg("%s: SEND after CLOSE sent a segment", closing_states[i].name);
		assert_int_equal(s.c.snd.bytes, 0);
		script_end(&s);
	}
}

/* RFC 9293 3.10.2 SEND in CLOSED: "error: connection does not exist" (-ENOTCONN). */
static void test_send_closed_enotconn(void **state)
{
	struct script s;

	(void)state;
	fixture_closed(&s, NULL);
	assert_int_equal(app_send(&s, 100), -ENOTCONN);
	expect_nothing(&s);
	assert_int_equal(s.c.snd.bytes, 0);
	script_end(&s);
}

/* ---- ABORT (RFC 9293 3.10.5) ---- */

/*
 * RFC 9293 3.10.5 SYN-RECEIVED, ESTABLISHED, FIN-WAIT-1, FIN-WAIT-2,
 * CLOSE-WAIT: "Send a reset segment: <SEQ=SND.NXT><CTL=RST>", then CLOSED.
 */
static void test_abort_synchronized_sends_rst(void **state)
{
	static const struct {
		const char *name;
		script_fixture_fn fix;
		uint32_t snd_nxt;
	} k[] = {
	    {"SYN-RECEIVED", fixture_syn_received, ISS + 1},
	    {"ESTABLISHED", fixture_established, ISS + 1},
	    {"FIN-WAIT-1", fixture_fin_wait_1, ISS + 2},
	    {"FIN-WAIT-2", fixture_fin_wait_2, ISS + 2},
	    {"CLOSE-WAIT", fixture_close_wait, ISS + 1},
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct script s;

		k[i].fix(&s, NULL);
		app_abort(&s);
		expect_tx(&s, RST, k[i].snd_nxt, 0, 0);
		expect_nothing(&s);
		if (s.c.state != TCP_CLOSED)
			fail_msg("%s: ABORT left state %s", k[i].name, tcp_state_name(s.c.state));
		assert_int_equal(tcp_next_deadline(&s.c), UINT64_MAX);
		script_end(&s);
	}
}

/* RFC 9293 3.10.5 with unsent and unacknowledged data: the RST carries SND.NXT. */
static void test_abort_established_with_data(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	assert_int_equal(app_send(&s, 700), 700);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 700);
	app_abort(&s);
	expect_tx(&s, RST, ISS + 701, 0, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(s.c.snd.bytes, 0); /* "all queued SENDs ... flushed" */
	script_end(&s);
}

/*
 * After an RTO rolled SND.NXT back (go-back-N, no SACK), the peer has
 * seen up to SND.MAX: a RST numbered SND.NXT would lie below its RCV.NXT,
 * outside its window, and be dropped unseen (RFC 5961 3); it carries
 * SND.MAX, as our ACKs do.
 */
static void test_abort_after_go_back_n(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;

	(void)state;
	script_config(&cfg);
	o.sack = false;
	fixture_established(&s, &o);
	assert_int_equal(app_send(&s, 3000), 3000);
	drain_tx(&s);
	advance_next(&s); /* the RTO: SND.NXT back to SND.UNA, one segment resent */
	assert_true(seq_lt(s.c.snd_nxt, s.c.snd_max));
	drain_tx(&s);
	app_abort(&s);
	expect_tx(&s, RST, ISS + 3001, 0, 0);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 9293 3.10.5 LISTEN, SYN-SENT (not synchronized: no RST) and CLOSING,
 * LAST-ACK, TIME-WAIT ("Respond with ok and delete the TCB"): CLOSED, silently.
 */
static void test_abort_unsynchronized_or_closing_no_rst(void **state)
{
	static const struct {
		const char *name;
		script_fixture_fn fix;
	} k[] = {
	    {"SYN-SENT", fixture_syn_sent},
	    {"CLOSING", fixture_closing},
	    {"LAST-ACK", fixture_last_ack},
	    {"TIME-WAIT", fixture_time_wait},
	};
	struct script s;

	(void)state;
	fixture_closed(&s, NULL);
	tcp_listen(&s.c);
	app_abort(&s);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	script_end(&s);
	for (unsigned i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		k[i].fix(&s, NULL);
		app_abort(&s);
		if (pending_tx(&s))
			fail_msg("%s: ABORT sent a segment", k[i].name);
		assert_int_equal(s.c.state, TCP_CLOSED);
		assert_int_equal(tcp_next_deadline(&s.c), UINT64_MAX);
		script_end(&s);
	}
}

/* ---- CLOSED (RFC 9293 3.10.7.1) ---- */

static struct tcp_repr closed_seg(uint8_t flags, uint32_t seq, uint32_t ack, size_t len)
{
	static const uint8_t payload[64];

	return (struct tcp_repr){.sport = 80,
				 .dport = 61440,
				 .seq = seq,
				 .ack = ack,
				 .flags = flags,
				 .window = 1000,
				 .hdr_len = 20,
				 .payload = len ? payload : NULL,
				 .payload_len = len};
}

/* RFC 9293 3.10.7.1: "If the ACK bit is on, <SEQ=SEG.ACK><CTL=RST>". */
static void test_closed_reply_to_ack(void **state)
{
	struct tcp_repr r = closed_seg(ACK | PSH, 1234, 98765, 10);
	struct tcp_tx rst;
	struct script s;

	(void)state;
	assert_true(tcp_reset_for(&r, &rst));
	assert_int_equal(rst.flags, RST);
	assert_int_equal(rst.seq, 98765);
	assert_int_equal(rst.len, 0);
	/* the same through a connection in CLOSED */
	fixture_closed(&s, NULL);
	seg(&s, ACK, 1234, 98765, 1000, 10);
	expect_tx(&s, RST, 98765, 0, 0);
	expect_nothing(&s);
	seg(&s, FIN | ACK, 1, 0xffffffffu, 1000, 0);
	expect_tx(&s, RST, 0xffffffffu, 0, 0);
	assert_int_equal(s.c.state, TCP_CLOSED);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.1: "If the ACK bit is off, sequence number zero is used,
 * <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>"; SEG.LEN counts SYN and FIN.
 */
static void test_closed_reply_to_no_ack(void **state)
{
	static const struct {
		uint8_t flags;
		uint32_t seq;
		size_t len;
		uint32_t ack;
	} k[] = {
	    {SYN, 100, 0, 101},	      {SYN | FIN, 100, 10, 112},    {FIN, 500, 0, 501},
	    {PSH, 700, 20, 720},      {0, 0xfffffff0u, 0x20, 0x10}, /* wraps */
	    {SYN, 0xffffffffu, 0, 0},
	};
	struct script s;

	(void)state;
	for (unsigned i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct tcp_repr r = closed_seg(k[i].flags, k[i].seq, 0, k[i].len);
		struct tcp_tx rst;

		assert_true(tcp_reset_for(&r, &rst));
		assert_int_equal(rst.flags, RST | ACK);
		assert_int_equal(rst.seq, 0);
		assert_int_equal(rst.ack, k[i].ack);
		assert_int_equal(rst.len, 0);
	}
	fixture_closed(&s, NULL);
	seg(&s, SYN, 100, 0, 1000, 0);
	expect_tx(&s, RST | ACK, 0, 101, 0);
	seg(&s, SYN | FIN, 100, 0, 1000, 10);
	expect_tx(&s, RST | ACK, 0, 112, 0);
	expect_nothing(&s);
	script_end(&s);
}

/* RFC 9293 3.10.7.1: "An incoming segment containing a RST is discarded." */
static void test_closed_no_reply_to_rst(void **state)
{
	struct tcp_repr r1 = closed_seg(RST, 5, 0, 0), r2 = closed_seg(RST | ACK, 5, 9, 0);
	struct tcp_tx rst;
	struct script s;

	(void)state;
	assert_false(tcp_reset_for(&r1, &rst));
	assert_false(tcp_reset_for(&r2, &rst));
	fixture_closed(&s, NULL);
	seg(&s, RST, 5, 0, 0, 0);
	seg(&s, RST | ACK, 5, 9, 0, 0);
	expect_nothing(&s);
	script_end(&s);
}

/* ---- wraparound (RFC 9293 3.4: arithmetic modulo 2^32) ---- */

/*
 * RFC 9293 3.4: active open, data both ways and close, with ISS and IRS a
 * few bytes below 2^32, so every stream crosses zero.
 */
static void test_wraparound_active(void **state)
{
	const uint32_t iss = 0xffffff00u, irs = 0xffffffc0u;
	struct tcp_options o = {.has_mss = true,
				.mss = 1460,
				.has_wscale = true,
				.wscale = 7,
				.sack_permitted = true,
				.has_ts = true};
	struct script s;

	(void)state;
	fixture_closed_iss(&s, NULL, iss);
	assert_int_equal(tcp_connect(&s.c, s.now, &s.out), 0);
	expect_tx(&s, SYN, iss, 0, 0);
	o.ts_val = s.peer_ts;
	o.ts_ecr = s.out.seg[0].opts.ts_val;
	s.peer_ts_on = true;
	seg_opts(&s, SYN | ACK, irs, iss + 1, 65535, 0, &o);
	expect_tx(&s, ACK, iss + 1, irs + 1, 0);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	/* our data: [iss + 1, iss + 1001) crosses 2^32 */
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, iss + 1, irs + 1, 1000);
	seg(&s, ACK, irs + 1, iss + 1001, 65535, 0);
	assert_int_equal(s.c.snd_una, iss + 1001);
	assert_int_equal(s.c.snd.bytes, 0);
	assert_int_equal(s.c.rto_at, 0);
	/* the peer's data: [irs + 1, irs + 1001) crosses 2^32 */
	seg(&s, ACK, irs + 1, iss + 1001, 65535, 500);
	seg(&s, ACK, irs + 501, iss + 1001, 65535, 500);
	expect_tx(&s, ACK, iss + 1001, irs + 1001, 0);
	assert_int_equal(recv_all(&s), 1000);
	/* and close */
	app_close(&s);
	expect_tx(&s, FIN | ACK, iss + 1001, irs + 1001, 0);
	seg(&s, FIN | ACK, irs + 1001, iss + 1002, 65535, 0);
	expect_tx(&s, ACK, iss + 1002, irs + 1002, 0);
	assert_int_equal(s.c.state, TCP_TIME_WAIT);
	advance(&s, 2 * s.c.cfg.msl_ns);
	assert_int_equal(s.c.state, TCP_CLOSED);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 9293 3.4: passive open with ISS = IRS = 2^32 - 1 (the SYNs take the
 * last sequence number, data starts at 0), data both ways, passive close.
 */
static void test_wraparound_passive(void **state)
{
	const uint32_t iss = 0xffffffffu, irs = 0xffffffffu;
	struct tcp_options o = {.has_mss = true,
				.mss = 1460,
				.has_wscale = true,
				.wscale = 7,
				.sack_permitted = true,
				.has_ts = true};
	struct script s;

	(void)state;
	fixture_closed_iss(&s, NULL, iss);
	tcp_listen(&s.c);
	o.ts_val = s.peer_ts;
	s.peer_ts_on = true;
	seg_opts(&s, SYN, irs, 0, 65535, 0, &o);
	expect_tx(&s, SYN | ACK, iss, 0, 0);
	seg(&s, ACK, 0, 0, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_int_equal(app_send(&s, 100), 100);
	expect_tx(&s, ACK | PSH, 0, 0, 100);
	seg(&s, ACK, 0, 100, 65535, 300);
	seg(&s, ACK, 300, 100, 65535, 300);
	expect_tx(&s, ACK, 100, 600, 0);
	assert_int_equal(s.c.snd_una, 100);
	assert_int_equal(recv_all(&s), 600);
	seg(&s, FIN | ACK, 600, 100, 65535, 0);
	expect_tx(&s, ACK, 100, 601, 0);
	assert_int_equal(s.c.state, TCP_CLOSE_WAIT);
	app_close(&s);
	expect_tx(&s, FIN | ACK, 100, 601, 0);
	assert_int_equal(s.c.state, TCP_LAST_ACK);
	seg(&s, ACK, 601, 101, 65535, 0);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(s.c.error, 0);
	expect_nothing(&s);
	script_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_active_open),
	    cmocka_unit_test(test_passive_open),
	    cmocka_unit_test(test_listen_ignores_rst),
	    cmocka_unit_test(test_listen_ack_gets_rst),
	    cmocka_unit_test(test_simultaneous_open_syn),
	    cmocka_unit_test(test_simultaneous_open_syn_ack),
	    cmocka_unit_test(test_simultaneous_open_ack),
	    cmocka_unit_test(test_syn_sent_bad_ack_gets_rst),
	    cmocka_unit_test(test_syn_sent_rst_with_ack_refused),
	    cmocka_unit_test(test_syn_sent_rst_without_ack_ignored),
	    cmocka_unit_test(test_syn_sent_rst_bad_ack_dropped),
	    cmocka_unit_test(test_syn_sent_retransmit_backoff),
	    cmocka_unit_test(test_syn_sent_gives_up),
	    cmocka_unit_test(test_syn_received_retransmitted_syn),
	    cmocka_unit_test(test_syn_received_bad_ack_gets_rst),
	    cmocka_unit_test(test_syn_received_retransmit_backoff),
	    cmocka_unit_test(test_syn_received_gives_up),
	    cmocka_unit_test(test_fin_wait_1_to_fin_wait_2),
	    cmocka_unit_test(test_fin_wait_1_receives_data),
	    cmocka_unit_test(test_fin_wait_2_receives_data),
	    cmocka_unit_test(test_close_wait_can_send),
	    cmocka_unit_test(test_close_wait_send_close_last_ack),
	    cmocka_unit_test(test_closing_to_time_wait),
	    cmocka_unit_test(test_closing_stays_until_fin_acked),
	    cmocka_unit_test(test_fin_wait_1_fin_ack_to_time_wait),
	    cmocka_unit_test(test_time_wait_fin_restarts_timer),
	    cmocka_unit_test(test_time_wait_expires_at_2msl),
	    cmocka_unit_test(test_time_wait_other_fin_keeps_timer),
	    cmocka_unit_test(test_close_listen),
	    cmocka_unit_test(test_close_syn_sent),
	    cmocka_unit_test(test_close_syn_received),
	    cmocka_unit_test(test_close_syn_received_retransmits_syn),
	    cmocka_unit_test(test_close_established),
	    cmocka_unit_test(test_close_close_wait),
	    cmocka_unit_test(test_close_in_closing_states_noop),
	    cmocka_unit_test(test_send_after_close_epipe),
	    cmocka_unit_test(test_send_closed_enotconn),
	    cmocka_unit_test(test_abort_synchronized_sends_rst),
	    cmocka_unit_test(test_abort_established_with_data),
	    cmocka_unit_test(test_abort_after_go_back_n),
	    cmocka_unit_test(test_abort_unsynchronized_or_closing_no_rst),
	    cmocka_unit_test(test_closed_reply_to_ack),
	    cmocka_unit_test(test_closed_reply_to_no_ack),
	    cmocka_unit_test(test_closed_no_reply_to_rst),
	    cmocka_unit_test(test_wraparound_active),
	    cmocka_unit_test(test_wraparound_passive),
	};

	return cmocka_run_group_tests(tests, script_group_setup, script_group_teardown);
}
