/*
 * test_tcp_window.c - flow control, one behaviour each: the peer's window
 * bounds what we send and is updated by the SND.WL1/WL2 rule; zero windows
 * and their probes; our receive window (shrinking, never retracted, SWS
 * avoidance); sender SWS avoidance; window scaling on data.
 */
#include "tcp_script.h"

#include <errno.h>

/*
 * Most tests here use no window scaling (both shifts 0), so window fields
 * are bytes; timestamps stay on, so our SMSS is 1448.
 */
static struct fixture_opts unscaled(struct tcp_config *cfg, uint16_t peer_window)
{
	struct fixture_opts o = {.ts = true,
				 .sack = true,
				 .ws = false,
				 .peer_mss = 1460,
				 .peer_window = peer_window,
				 .cfg = cfg};

	return o;
}

/* Everything sent and not yet checked lies within SND.UNA + SND.WND (RFC 9293 3.8.6). */
static uint32_t take_all_within_window(struct script *s, uint32_t *next)
{
	uint32_t bytes = 0;

	while (pending_tx(s)) {
		const struct tcp_tx *t = take_tx(s);

		assert_int_equal(t->seq, *next);
		if (seq_gt(t->seq + t->len, s->c.snd_una + s->c.snd_wnd))
			fail_msg("sent [%u, %u) beyond the window's right edge %u", t->seq,
				 t->seq + t->len, s->c.snd_una + s->c.snd_wnd);
		*next += t->len;
		bytes += t->len;
	}
	return bytes;
}

/*
 * RFC 9293 3.8.6 / 3.10.7.4: the sender keeps SND.NXT within SND.UNA +
 * SND.WND; with a 3000-byte window a 10000-byte write goes out window by
 * window as ACKs move SND.UNA.
 */
static void test_send_within_peer_window(void **state)
{
	struct fixture_opts o = unscaled(NULL, 3000);
	struct script s;
	uint32_t next = ISS + 1, sent = 0;

	(void)state;
	fixture_established(&s, &o);
	assert_int_equal(s.c.snd_wnd, 3000);
	assert_int_equal(app_send(&s, 10000), 10000);
	for (unsigned round = 0; sent < 10000; round++) {
		uint32_t got = take_all_within_window(&s, &next);

		assert_true(got > 0);
		assert_true(got <= 3000);
		assert_true(round < 20);
		sent += got;
		advance(&s, 100 * US);
		seg(&s, ACK, IRS + 1, next, 3000, 0);
	}
	assert_int_equal(sent, 10000);
	expect_nothing(&s);
	assert_int_equal(s.c.snd.bytes, 0);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 fifth: the window is taken from a segment only if
 * SND.WL1 < SEG.SEQ or (SND.WL1 = SEG.SEQ and SND.WL2 =< SEG.ACK): an old,
 * reordered ACK advertising 0 does not close a window a newer ACK opened.
 */
static void test_old_ack_does_not_shrink_window(void **state)
{
	struct fixture_opts o = unscaled(NULL, 10000);
	struct script s;

	(void)state;
	fixture_established(&s, &o);
	assert_int_equal(app_send(&s, 4000), 4000);
	drain_tx(&s);
	seg(&s, ACK, IRS + 1, ISS + 2897, 8000, 0); /* the newer ACK */
	assert_int_equal(s.c.snd_wnd, 8000);
	seg(&s, ACK, IRS + 1, ISS + 1449, 0, 0); /* sent before it, arrives after */
	expect_nothing(&s);
	assert_int_equal(s.c.snd_wnd, 8000);
	assert_int_equal(s.c.snd_wl2, ISS + 2897);
	assert_int_equal(s.c.snd_una, ISS + 2897);
	assert_int_equal(app_send(&s, 2000), 2000); /* 1104 in flight, 6896 usable */
	expect_tx(&s, ACK, ISS + 4001, IRS + 1, s.c.snd_mss);
	expect_tx(&s, ACK | PSH, ISS + 4001 + s.c.snd_mss, IRS + 1, 2000 - s.c.snd_mss);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 fifth, SND.WL1 < SEG.SEQ: the peer's data segment sent
 * earlier (lower SEG.SEQ) but arriving later carries an older window and
 * does not replace the newer one.
 */
static void test_old_seq_does_not_update_window(void **state)
{
	struct fixture_opts o = unscaled(NULL, 10000);
	struct script s;

	(void)state;
	fixture_established(&s, &o);
	seg(&s, ACK, IRS + 101, ISS + 1, 9000, 100); /* second segment first */
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(s.c.snd_wnd, 9000);
	seg(&s, ACK, IRS + 1, ISS + 1, 1000, 100); /* the first, with its older window */
	expect_tx(&s, ACK, ISS + 1, IRS + 201, 0);
	assert_int_equal(s.c.snd_wnd, 9000);
	assert_int_equal(s.c.snd_wl1, IRS + 101);
	assert_int_equal(recv_all(&s), 200);
	script_end(&s);
}

/*
 * 1000 bytes sent and acknowledged with a zero window; 2000 more queued.
 * RFC 9293 3.8.6.1: nothing is sent into the zero window; the persist
 * timer is armed for one RTO (RFC 1122 4.2.2.17).
 */
static void zero_window_setup(struct script *s, struct fixture_opts *o)
{
	fixture_established(s, o);
	assert_int_equal(app_send(s, 1000), 1000);
	expect_tx(s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	advance(s, 1 * MS);
	seg(s, ACK, IRS + 1, ISS + 1001, 0, 0);
	expect_nothing(s);
	assert_int_equal(s->c.snd_wnd, 0);
	assert_int_equal(app_send(s, 2000), 2000);
	expect_nothing(s);
	assert_int_equal(s->c.persist_at, s->now + tcp_rtt_timeout(&s->c.rtt));
}

/*
 * After a probe, refused, SND.MAX is one past the peer's RCV.NXT; at a
 * zero window only SEQ = RCV.NXT is acceptable (RFC 9293 3.10.7.4), so
 * our ACKs of the peer's data carry the window's edge (SND.UNA here), or
 * the peer would drop every one and its data would wait for our probes.
 */
static void test_acks_after_probe_acceptable(void **state)
{
	struct fixture_opts o = unscaled(NULL, 65535);
	struct script s;

	(void)state;
	zero_window_setup(&s, &o);
	advance_next(&s);
	expect_tx(&s, ACK, ISS + 1001, IRS + 1, 1);
	assert_int_equal(s.c.snd_max, ISS + 1002);
	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, ISS + 1001, 0, 500); /* the byte refused; data of its own */
	advance(&s, s.c.cfg.delack_ns);
	expect_tx(&s, ACK, ISS + 1001, IRS + 501, 0);
	expect_nothing(&s);
	assert_int_equal(recv_all(&s), 500);
	script_end(&s);
}

/*
 * An orphan (the application closed: tcp_sock_close() marks it) whose
 * data a zero window holds gives up after cfg.orphan_probes probes even
 * though each is answered, with a RST (the peer is alive), as Linux's
 * tcp_orphan_retries: else a peer could keep its window shut and hold the
 * send buffer for ever with no application to give up.
 */
static void test_orphan_gives_up_in_zero_window(void **state)
{
	struct fixture_opts o = unscaled(NULL, 65535);
	struct script s;
	unsigned probes = 0;

	(void)state;
	zero_window_setup(&s, &o);
	app_close(&s);
	s.c.orphan = true;
	while (s.c.state != TCP_CLOSED && probes < 20) {
		advance_next(&s);
		if (s.c.state == TCP_CLOSED)
			break;
		expect_tx(&s, ACK, ISS + 1001, IRS + 1, 1);
		probes++;
		advance(&s, 100 * US);
		seg(&s, ACK, IRS + 1, ISS + 1001, 0, 0); /* answered, window still shut */
	}
	assert_int_equal(probes, s.c.cfg.orphan_probes);
	expect_tx(&s, RST, ISS + 1001, 0, 0);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(s.c.error, -ETIMEDOUT);
	assert_int_equal(s.c.stats.orphans_dropped, 1);
	script_end(&s);
}

/* RFC 9293 3.8.6.1, RFC 1122 4.2.2.17: the first probe after one RTO, one byte at SND.UNA. */
static void test_zero_window_first_probe(void **state)
{
	struct fixture_opts o = unscaled(NULL, 65535);
	struct script s;
	uint64_t rto;

	(void)state;
	zero_window_setup(&s, &o);
	rto = tcp_rtt_timeout(&s.c.rtt);
	advance(&s, rto - 1);
	expect_nothing(&s);
	advance(&s, 1);
	expect_tx(&s, ACK, ISS + 1001, IRS + 1, 1);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.zero_window_probes, 1);
	script_end(&s);
}

/*
 * RFC 1122 4.2.2.17 / RFC 9293 3.8.6.1: the interval between successive
 * probes grows exponentially (here doubling, capped at rto_max_ns).
 */
static void test_zero_window_probe_backoff(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = unscaled(&cfg, 65535);
	struct script s;
	uint64_t rto, gap, prev = 0;

	(void)state;
	script_config(&cfg);
	cfg.rto_max_ns = 50 * MS;
	zero_window_setup(&s, &o);
	rto = tcp_rtt_timeout(&s.c.rtt);
	assert_int_equal(advance_next(&s), rto);
	expect_tx(&s, ACK, ISS + 1001, IRS + 1, 1);
	for (unsigned i = 0; i < 8; i++) {
		gap = advance_next(&s);
		expect_tx(&s, ACK, ISS + 1001, IRS + 1, 1);
		expect_nothing(&s);
		if (i == 0)
			assert_int_equal(gap, rto);
		else if (2 * prev <= cfg.rto_max_ns)
			assert_int_equal(gap, 2 * prev);
		else
			assert_int_equal(gap, cfg.rto_max_ns);
		prev = gap;
	}
	assert_int_equal(prev, cfg.rto_max_ns);
	script_end(&s);
}

/*
 * RFC 9293 3.8.6.1, 3.10.7.4: a receiver with a zero window answers a
 * probe with <ACK=RCV.NXT><WND=0> and drops the byte. While the window
 * stays zero the sender sends nothing but probes, however many answers
 * come back: nothing beyond SND.UNA + 1.
 */
static void test_zero_window_answered_probes_send_only_probes(void **state)
{
	struct fixture_opts o = unscaled(NULL, 65535);
	struct script s;

	(void)state;
	zero_window_setup(&s, &o);
	for (unsigned i = 0; i < 6; i++) {
		advance_next(&s);
		expect_tx(&s, ACK, ISS + 1001, IRS + 1, 1);
		expect_nothing(&s);
		advance(&s, 100 * US);
		seg(&s, ACK, IRS + 1, ISS + 1001, 0, 0);
		expect_nothing(&s);
	}
	assert_int_equal(s.c.stats.fast_retransmits, 0);
	assert_false(s.c.cc.in_recovery);
	script_end(&s);
}

/* zero_window_setup() with a user timeout of 100 ms and RTOs of at most 20 ms. */
static void zero_window_short_timeouts(struct script *s, struct tcp_config *cfg)
{
	struct fixture_opts o = unscaled(cfg, 65535);

	script_config(cfg);
	cfg->user_timeout_ns = 100 * MS;
	cfg->rto_max_ns = 20 * MS;
	zero_window_setup(s, &o);
}

/*
 * RFC 1122 4.2.2.17: the connection MUST stay open as long as the receiver
 * keeps answering the probes: well past user_timeout_ns.
 */
static void test_zero_window_not_dropped_while_answered(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint64_t t0;

	(void)state;
	zero_window_short_timeouts(&s, &cfg);
	t0 = s.now;
	while (s.now - t0 < 10 * cfg.user_timeout_ns) {
		advance_next(&s);
		drain_tx(&s);
		advance(&s, 100 * US);
		seg(&s, ACK, IRS + 1, ISS + 1001, 0, 0);
		drain_tx(&s);
		assert_int_equal(s.c.state, TCP_ESTABLISHED);
	}
	assert_true(s.c.stats.zero_window_probes >= 40);
	assert_int_equal(s.c.error, 0);
	assert_int_equal(s.c.events & (TCP_EV_TIMEOUT | TCP_EV_CLOSED), 0);
	script_end(&s);
}

/*
 * RFC 1122 4.2.2.17 again, when the window closes with data in flight: the
 * peer acknowledges part of it with a zero window, then answers every
 * probe. The unacknowledged data must not make the connection time out
 * (user_timeout_ns) while the receiver keeps acknowledging the probes.
 */
static void test_zero_window_with_data_in_flight_not_dropped(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = unscaled(&cfg, 65535);
	struct script s;
	uint64_t t0;
	uint32_t mss;

	(void)state;
	script_config(&cfg);
	cfg.user_timeout_ns = 100 * MS;
	cfg.rto_max_ns = 20 * MS;
	fixture_established(&s, &o);
	mss = s.c.snd_mss;
	assert_int_equal(app_send(&s, 3 * mss), 3 * mss);
	drain_tx(&s);
	advance(&s, 1 * MS);
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 0, 0); /* the rest was dropped: window full */
	expect_nothing(&s);
	t0 = s.now;
	while (s.now - t0 < 10 * cfg.user_timeout_ns) {
		advance_next(&s);
		drain_tx(&s);
		if (s.c.state != TCP_ESTABLISHED)
			fail_msg("dropped %llu ms into the zero window, every probe answered",
				 (unsigned long long)((s.now - t0) / MS));
		seg(&s, ACK, IRS + 1, ISS + 1 + mss, 0, 0);
		drain_tx(&s);
	}
	assert_int_equal(s.c.error, 0);
	assert_true(s.c.stats.zero_window_probes > 0);
	script_end(&s);
}

/*
 * RFC 1122 4.2.2.17 keeps the window open only while the probes are
 * answered: a receiver silent for user_timeout_ns since it closed the
 * window is gone, as a silent one is for retransmissions. Probes go out
 * until then; then the connection ends with ETIMEDOUT (else it, and its
 * send buffer, would be held for ever).
 */
static void test_zero_window_dropped_when_unanswered(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint64_t t0;

	(void)state;
	zero_window_short_timeouts(&s, &cfg);
	t0 = s.now - 1 * MS; /* the zero window came 1 ms before the send */
	while (s.c.state == TCP_ESTABLISHED) {
		assert_true(s.now - t0 < cfg.user_timeout_ns);
		advance_next(&s);
		drain_tx(&s);
	}
	assert_true(s.now - t0 >= cfg.user_timeout_ns);
	assert_true(s.c.stats.zero_window_probes >= 3);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_int_equal(s.c.error, -ETIMEDOUT);
	assert_int_equal(s.c.events & (TCP_EV_TIMEOUT | TCP_EV_CLOSED),
			 TCP_EV_TIMEOUT | TCP_EV_CLOSED);
	assert_int_equal(s.c.snd.bytes, 0); /* the send buffer is given back */
	script_end(&s);
}

/*
 * The probes' user timeout counts from the first probe owed, not from the
 * ACK that closed the window: data queued long after (the peer had nothing
 * to say meanwhile) is probed, and lives on while the probes are answered.
 */
static void test_zero_window_late_send_probed(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = unscaled(&cfg, 65535);
	struct script s;

	(void)state;
	script_config(&cfg);
	cfg.user_timeout_ns = 100 * MS;
	fixture_established(&s, &o);
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	advance(&s, 1 * MS);
	seg(&s, ACK, IRS + 1, ISS + 1001, 0, 0);
	expect_nothing(&s);
	advance(&s, 10 * cfg.user_timeout_ns); /* idle, nothing owed */
	assert_int_equal(app_send(&s, 500), 500);
	expect_nothing(&s);
	advance_next(&s);
	expect_tx(&s, ACK, ISS + 1001, IRS + 1, 1);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	seg(&s, ACK, IRS + 1, ISS + 1001, 0, 0); /* answered, still shut */
	drain_tx(&s);
	advance_next(&s);
	expect_tx(&s, ACK, ISS + 1001, IRS + 1, 1);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	script_end(&s);
}

/* RFC 9293 3.8.6.1: the probe byte is accepted and the window opens: sending resumes. */
static void test_zero_window_opens_resumes_sending(void **state)
{
	struct fixture_opts o = unscaled(NULL, 65535);
	struct script s;
	uint32_t mss;

	(void)state;
	zero_window_setup(&s, &o);
	mss = s.c.snd_mss;
	advance_next(&s);
	expect_tx(&s, ACK, ISS + 1001, IRS + 1, 1);
	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, ISS + 1002, 65535, 0);
	expect_tx(&s, ACK, ISS + 1002, IRS + 1, mss);
	expect_tx(&s, ACK | PSH, ISS + 1002 + mss, IRS + 1, 1999 - mss);
	expect_nothing(&s);
	assert_int_equal(s.c.persist_at, 0);
	seg(&s, ACK, IRS + 1, ISS + 3001, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.snd.bytes, 0);
	assert_int_equal(tcp_next_deadline(&s.c), UINT64_MAX);
	script_end(&s);
}

/*
 * RFC 9293 3.8.6.1, 3.10.7.4: the probe byte was refused (<ACK=SND.UNA>,
 * window 0); when the window update comes the receiver still expects
 * SND.UNA, and the usable window starts there: the data goes out from
 * SND.UNA, not from SND.UNA + 1 leaving a one-byte hole for the RTO.
 */
static void test_zero_window_refused_probe_byte_resent(void **state)
{
	struct fixture_opts o = unscaled(NULL, 65535);
	struct script s;
	uint32_t mss;

	(void)state;
	zero_window_setup(&s, &o);
	mss = s.c.snd_mss;
	advance_next(&s);
	expect_tx(&s, ACK, ISS + 1001, IRS + 1, 1);
	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, ISS + 1001, 0, 0); /* refused */
	expect_nothing(&s);
	advance(&s, 1 * MS);
	seg(&s, ACK, IRS + 1, ISS + 1001, 65535, 0); /* window update */
	expect_tx(&s, ACK, ISS + 1001, IRS + 1, mss);
	expect_tx(&s, ACK | PSH, ISS + 1001 + mss, IRS + 1, 2000 - mss);
	expect_nothing(&s);
	script_end(&s);
}

/* Configuration for the receive-window tests: an 8000-byte buffer, every segment ACKed. */
static void small_rcv_buf(struct tcp_config *cfg)
{
	script_config(cfg);
	cfg->rcv_buf = 8000;
	cfg->delayed_ack = false;
}

/*
 * RFC 9293 3.8.6.2.2, 3.10.7.4: data queued and not read shrinks the
 * window we advertise, segment by segment, down to 0, while the right edge
 * RCV.NXT + RCV.WND stays put; a segment at a zero window is refused and
 * answered with <ACK=RCV.NXT><WND=0>.
 */
static void test_rcv_window_shrinks_to_zero(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = unscaled(&cfg, 65535);
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	small_rcv_buf(&cfg);
	fixture_established(&s, &o);
	assert_int_equal(s.c.rcv_wscale, 0);
	assert_int_equal(s.c.rcv_adv, IRS + 8001);
	for (unsigned i = 1; i <= 8; i++) {
		seg(&s, ACK, IRS + 1 + 1000 * (i - 1), ISS + 1, 65535, 1000);
		t = expect_tx(&s, ACK, ISS + 1, IRS + 1 + 1000 * i, 0);
		assert_int_equal(t->wnd, 8000 - 1000 * i);
		assert_int_equal(t->ack + t->wnd, IRS + 8001);
		expect_nothing(&s);
	}
	seg(&s, ACK, IRS + 8001, ISS + 1, 65535, 1000);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 8001, 0);
	assert_int_equal(t->wnd, 0);
	expect_nothing(&s);
	assert_int_equal(tcp_recv_bytes(&s.c), 8000);
	assert_int_equal(recv_all(&s), 8000);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 (first check, trimming): a segment whose data runs
 * past the window's right edge is cut to the window, and its FIN, beyond
 * the edge, is not taken: the connection stays ESTABLISHED and the
 * sequence number after the window's last byte is not consumed.
 */
static void test_fin_beyond_window_not_taken(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = unscaled(&cfg, 65535);
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	small_rcv_buf(&cfg);
	fixture_established(&s, &o);
	assert_int_equal(s.c.rcv_adv, IRS + 8001);
	seg(&s, FIN | ACK, IRS + 1, ISS + 1, 65535, 9000); /* 8000 of 9000 bytes fit */
	t = expect_tx(&s, ACK, ISS + 1, IRS + 8001, 0);
	assert_int_equal(t->wnd, 0);
	expect_nothing(&s);
	assert_false(s.c.fin_rcvd);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_false(s.c.events & TCP_EV_EOF);
	assert_int_equal(recv_all(&s), 8000);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 5681 2: a segment with FIN set is never a duplicate ACK. Our window
 * is shut (the application reads nothing) and data of ours is in flight;
 * the peer's FIN at RCV.NXT is refused by the zero window and comes
 * again, with our SND.UNA and the same window, three times: no duplicate
 * ACKs counted, no fast retransmit (NewReno: no SACK).
 */
static void test_refused_fin_is_not_a_dupack(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = unscaled(&cfg, 65535);
	struct script s;

	(void)state;
	small_rcv_buf(&cfg);
	o.sack = false;
	fixture_established(&s, &o);
	for (unsigned i = 0; i < 8; i++)
		seg(&s, ACK, IRS + 1 + 1000 * i, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(app_send(&s, 3000), 3000);
	drain_tx(&s);
	assert_true(s.c.snd_max != s.c.snd_una);
	for (unsigned i = 0; i < 3; i++) {
		seg(&s, FIN | ACK, IRS + 8001, ISS + 1, 65535, 0);
		drain_tx(&s);
	}
	assert_false(s.c.fin_rcvd);
	assert_int_equal(s.c.stats.dupacks, 0);
	assert_int_equal(s.c.stats.fast_retransmits, 0);
	assert_int_equal(recv_all(&s), 8000);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 9293 3.8.6 / RFC 1122 4.2.2.16: the receiver SHOULD NOT shrink the
 * window (move its right edge left). Through in-order data, out-of-order
 * data, a segment past the edge, partial reads and window updates, the
 * edge each ACK advertises never moves left.
 */
static void test_rcv_right_edge_never_moves_left(void **state)
{
	static const struct {
		int32_t off;  /* segment at RCV.NXT + off, or a read if len == 0 */
		uint32_t len; /* payload; 0 = the application takes @off slices */
	} step[] = {
	    {0, 1000},	  {2000, 1000}, {0, 1000}, {3000, 500}, {1, 0},	   {0, 1000},
	    {0, 700},	  {500, 2000},	{0, 1200}, {2, 0},	{0, 1448}, {100, 1448},
	    {0, 100},	  {3, 0},	{0, 1448}, {0, 1448},	{1, 0},	   {0, 1448},
	    {4000, 1000}, {0, 1448},	{16, 0},   {0, 1448},	{0, 1448}, {16, 0},
	};
	struct tcp_config cfg;
	struct fixture_opts o = unscaled(&cfg, 65535);
	struct script s;
	uint32_t edge, adv, next = IRS + 1;

	(void)state;
	small_rcv_buf(&cfg);
	fixture_established(&s, &o);
	edge = adv = s.c.rcv_adv;
	for (unsigned i = 0; i < sizeof(step) / sizeof(step[0]); i++) {
		if (step[i].len)
			seg(&s, ACK, s.c.rcv_nxt + (uint32_t)step[i].off, ISS + 1, 65535,
			    step[i].len);
		else
			recv_in_order(&s, &next, (unsigned)step[i].off);
		while (pending_tx(&s)) {
			const struct tcp_tx *t = take_tx(&s);

			if (seq_lt(t->ack + t->wnd, edge))
				fail_msg("step %u: advertised right edge %u is left of %u", i,
					 t->ack + t->wnd, edge);
			edge = t->ack + t->wnd;
		}
		assert_true(seq_geq(s.c.rcv_adv, adv));
		adv = s.c.rcv_adv;
	}
	recv_in_order(&s, &next, 0);
	assert_int_equal(next, s.c.rcv_nxt);
	drain_tx(&s);
	script_end(&s);
}

/*
 * LUNA 6.2 zero-copy receive: bytes the application holds (taken with
 * tcp_recv_hold, not yet released) still count against the receive
 * buffer. Taking them opens no window; with the buffer full of held data a
 * new segment is refused (not kept, not lost: the peer retransmits it), and
 * releasing them reopens the window with an update.
 */
static void test_rcv_held_buffers_shrink_window(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = unscaled(&cfg, 65535);
	struct tcp_slice sl[16];
	struct script s;
	const struct tcp_tx *t;
	unsigned n;

	(void)state;
	small_rcv_buf(&cfg);
	fixture_established(&s, &o);
	for (unsigned i = 1; i <= 8; i++) {
		seg(&s, ACK, IRS + 1 + 1000 * (i - 1), ISS + 1, 65535, 1000);
		drain_tx(&s);
	}
	n = tcp_recv_hold(&s.c, sl, 16);
	assert_int_equal(n, 8);
	assert_int_equal(s.c.app_held, 8000);
	assert_int_equal(tcp_recv_bytes(&s.c), 0);
	expect_nothing(&s); /* holding is not reading: no window update */
	/* The window is still closed: the next segment is not accepted. */
	seg(&s, ACK, IRS + 8001, ISS + 1, 65535, 1000);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 8001, 0);
	assert_int_equal(t->wnd, 0);
	assert_int_equal(tcp_recv_bytes(&s.c), 0);
	/* Releasing reopens it, and the peer is told. */
	for (unsigned i = 0; i < n; i++)
		zbuf_unref(sl[i].data);
	tcp_recv_release(&s.c, 8000, s.now, &s.out);
	assert_int_equal(s.c.app_held, 0);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 8001, 0);
	assert_int_equal(t->wnd, 8000);
	/* Now the retransmitted segment is taken. */
	seg(&s, ACK, IRS + 8001, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(tcp_recv_bytes(&s.c), 1000);
	assert_int_equal(recv_all(&s), 1000);
	script_end(&s);
}

/*
 * Tiny segments do not pin a buffer each (docs/MEMORY.md, "Receive queue
 * compaction"): 5000 one-byte segments to an application that does not
 * read fill the window by 5000 bytes, and would hold 5000 payload buffers
 * (here 2 KiB Zbuf objects, as packet buffers on a port). Past
 * TCP_RCVQ_COMPACT_AFTER queued slices their bytes are copied into dense
 * 4 KiB objects and each segment's buffer goes back at once. The first
 * object fills exactly and the next (likely its neighbour in memory) takes
 * over: no slice may run from one into the other. Every byte still reads
 * back in order, and nothing leaks (script_end()).
 */
static void test_rcv_tiny_segments_compacted(void **state)
{
	const uint32_t n = 5000, copied = n - TCP_RCVQ_COMPACT_AFTER;
	struct script s;
	uint32_t next = IRS + 1;
	uint64_t held;

	(void)state;
	fixture_established(&s, NULL);
	for (uint32_t i = 0; i < n; i++)
		seg(&s, ACK, IRS + 1 + i, ISS + 1, 65535, 1);
	drain_tx(&s);
	assert_int_equal(s.c.rcv_nxt, IRS + 1 + n);
	assert_int_equal(tcp_recv_bytes(&s.c), n);
	held = zbuf_in_use() - s.zbuf_base;
	/* The first slices as they came, then 4984 bytes in two 4 KiB objects. */
	assert_true(held <= TCP_RCVQ_COMPACT_AFTER + 2);
	assert_int_equal(s.c.stats.rcvq_compacted, copied);
	assert_int_equal(s.c.stats.rcvq_compacted_bytes, copied);
	assert_int_equal(s.c.rcvq_count, TCP_RCVQ_COMPACT_AFTER + 2);
	assert_int_equal(recv_in_order(&s, &next, 0), n);
	/* A full segment is never copied. */
	seg(&s, ACK, IRS + 1 + n, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(s.c.stats.rcvq_compacted, copied);
	assert_int_equal(recv_in_order(&s, &next, 0), 1000);
	script_end(&s);
}

/*
 * The same through the out-of-order queue: tiny segments held beyond a
 * hole are compacted when the hole is filled and they join the in-order
 * queue. Then the application holds (tcp_recv_hold) a compacted slice
 * while the queue still has 16 full segments, so more tiny segments are
 * copied into the same buffer, right behind the bytes it holds: those stay
 * as they were, and everything reads back in order.
 */
static void test_rcv_tiny_compaction_from_reass_and_held(void **state)
{
	struct tcp_slice sl[64];
	const struct tcp_slice *tail;
	struct script s;
	uint32_t next = IRS + 1, got = 0, seq;
	const uint8_t *c1_end;
	unsigned n;

	(void)state;
	fixture_established(&s, NULL);
	for (uint32_t i = 1; i < 100; i++)
		seg(&s, ACK, IRS + 1 + i, ISS + 1, 65535, 1); /* beyond the hole at IRS + 1 */
	drain_tx(&s);
	assert_int_equal(s.c.reass.n, 99);	  /* a slice each */
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1); /* fills it */
	drain_tx(&s);
	assert_int_equal(s.c.rcv_nxt, IRS + 101);
	assert_int_equal(s.c.stats.rcvq_compacted, 100 - TCP_RCVQ_COMPACT_AFTER);
	assert_int_equal(s.c.rcvq_count, TCP_RCVQ_COMPACT_AFTER + 1);
	assert_true(zbuf_in_use() - s.zbuf_base <= TCP_RCVQ_COMPACT_AFTER + 1);
	seq = IRS + 101;
	for (unsigned i = 0; i < TCP_RCVQ_COMPACT_AFTER; i++, seq += 1000)
		seg(&s, ACK, seq, ISS + 1, 65535, 1000); /* full segments: queued as they came */
	drain_tx(&s);
	assert_int_equal(s.c.stats.rcvq_compacted, 100 - TCP_RCVQ_COMPACT_AFTER);
	n = tcp_recv_hold(&s.c, sl, TCP_RCVQ_COMPACT_AFTER + 1);
	assert_int_equal(n, TCP_RCVQ_COMPACT_AFTER + 1);
	assert_int_equal(sl[n - 1].len, 100 - TCP_RCVQ_COMPACT_AFTER); /* the compacted one */
	c1_end = sl[n - 1].data + sl[n - 1].len;
	assert_int_equal(s.c.rcvq_count, TCP_RCVQ_COMPACT_AFTER);
	for (uint32_t i = 0; i < 100; i++)
		seg(&s, ACK, seq + i, ISS + 1, 65535, 1);
	drain_tx(&s);
	assert_int_equal(s.c.stats.rcvq_compacted, 200 - TCP_RCVQ_COMPACT_AFTER);
	tail = &s.c.rcvq[(s.c.rcvq_head + s.c.rcvq_count - 1) & (s.c.rcvq_cap - 1)];
	assert_ptr_equal(tail->data, c1_end); /* copied right behind the held bytes */
	assert_int_equal(tail->len, 100);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(sl[i].seq, next);
		for (uint32_t k = 0; k < sl[i].len; k++)
			assert_int_equal(sl[i].data[k], (uint8_t)(sl[i].seq + k));
		next += sl[i].len;
		got += sl[i].len;
		zbuf_unref(sl[i].data);
	}
	assert_int_equal(got, 100);
	tcp_recv_release(&s.c, got, s.now, &s.out);
	assert_int_equal(recv_in_order(&s, &next, 0), TCP_RCVQ_COMPACT_AFTER * 1000 + 100);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 9293 3.8.6.2.2 / RFC 1122 4.2.3.3 (receiver SWS avoidance): with the
 * window at 0, the application taking 1000 bytes does not reopen it (the
 * edge may move only by min(RCV.BUFF/2, MSS) = 1460 or more); taking 1000
 * more does, and a window update ACK says so.
 */
static void test_rcv_sws_avoidance(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = unscaled(&cfg, 65535);
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = IRS + 1;

	(void)state;
	small_rcv_buf(&cfg);
	fixture_established(&s, &o);
	for (unsigned i = 0; i < 8; i++)
		seg(&s, ACK, IRS + 1 + 1000 * i, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(s.c.rcv_adv, IRS + 8001);
	assert_int_equal(recv_in_order(&s, &next, 1), 1000);
	expect_nothing(&s);
	assert_int_equal(s.c.rcv_adv, IRS + 8001);
	/* An ACK sent now for another reason (an old duplicate) still advertises 0. */
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 8001, 0);
	assert_int_equal(t->wnd, 0);
	expect_nothing(&s);
	assert_int_equal(recv_in_order(&s, &next, 1), 1000);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 8001, 0);
	assert_int_equal(t->wnd, 2000);
	expect_nothing(&s);
	assert_int_equal(recv_in_order(&s, &next, 0), 6000);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 9293 3.8.6.2.2: the edge moves once RCV.BUFF - RCV.USER - RCV.WND
 * >= min(Fr * RCV.BUFF, Eff.snd.MSS): at exactly one MSS (1460) freed from
 * a zero window, the window reopens and an update says so.
 */
static void test_rcv_sws_reopens_at_exactly_mss(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = unscaled(&cfg, 65535);
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = IRS + 1;

	(void)state;
	small_rcv_buf(&cfg);
	fixture_established(&s, &o);
	for (unsigned i = 0; i < 5; i++)
		seg(&s, ACK, IRS + 1 + 1460 * i, ISS + 1, 65535, 1460);
	seg(&s, ACK, IRS + 1 + 7300, ISS + 1, 65535, 700);
	drain_tx(&s);
	assert_int_equal(s.c.rcv_adv, IRS + 8001);
	assert_int_equal(recv_in_order(&s, &next, 1), 1460);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 8001, 0);
	assert_int_equal(t->wnd, 1460);
	expect_nothing(&s);
	assert_int_equal(recv_in_order(&s, &next, 0), 6540);
	drain_tx(&s);
	script_end(&s);
}

/* Sender SWS tests: Nagle on, no window scaling, peer window @peer_window. */
static void sws_fixture(struct script *s, struct tcp_config *cfg, uint16_t peer_window)
{
	struct fixture_opts o = unscaled(cfg, peer_window);

	script_config(cfg);
	cfg->nodelay = false;
	fixture_established(s, &o);
	assert_int_equal(s->c.max_snd_wnd, peer_window);
}

/*
 * RFC 9293 3.8.6.2.1 / RFC 1122 4.2.3.4 (sender SWS avoidance): a window
 * that opens by a few bytes, less than a full segment, less than half the
 * largest window seen and less than the data waiting, is not used.
 */
static void test_snd_sws_tiny_window_not_used(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t mss;

	(void)state;
	sws_fixture(&s, &cfg, 4000);
	mss = s.c.snd_mss;
	assert_int_equal(app_send(&s, 10000), 10000);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, mss);
	expect_tx(&s, ACK, ISS + 1 + mss, IRS + 1, mss);
	expect_nothing(&s); /* 1104 usable: held */
	seg(&s, ACK, IRS + 1, ISS + 1 + 2 * mss, 0, 0);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + 2 * mss, 100, 0);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + 2 * mss, 1400, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.snd_wnd, 1400);
	seg(&s, ACK, IRS + 1, ISS + 1 + 2 * mss, (uint16_t)mss, 0); /* a full segment fits */
	expect_tx(&s, ACK, ISS + 1 + 2 * mss, IRS + 1, mss);
	expect_nothing(&s);
	script_end(&s);
}

/* RFC 9293 3.8.6.2.1 (3): Fs = 1/2 of the largest window seen is sent, even below one MSS. */
static void test_snd_sws_half_max_window_sent(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t mss;

	(void)state;
	sws_fixture(&s, &cfg, 2000);
	mss = s.c.snd_mss;
	assert_int_equal(app_send(&s, 10000), 10000);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, mss);
	expect_nothing(&s); /* 552 < 1000: held */
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 0, 0);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 999, 0);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 1000, 0);
	expect_tx(&s, ACK, ISS + 1 + mss, IRS + 1, 1000);
	expect_nothing(&s);
	script_end(&s);
}

/* RFC 9293 3.8.6.2.1 (2): a small window that takes all the queued data is used. */
static void test_snd_sws_all_remaining_sent(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t mss;

	(void)state;
	sws_fixture(&s, &cfg, 4000);
	mss = s.c.snd_mss;
	assert_int_equal(app_send(&s, 2 * mss + 104), 2 * mss + 104);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, mss);
	expect_tx(&s, ACK, ISS + 1 + mss, IRS + 1, mss);
	expect_nothing(&s); /* Nagle: the 104-byte tail waits for the ACK */
	seg(&s, ACK, IRS + 1, ISS + 1 + 2 * mss, 0, 0);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + 2 * mss, 104, 0);
	expect_tx(&s, ACK | PSH, ISS + 1 + 2 * mss, IRS + 1, 104);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 9293 3.8.6.2.1 / RFC 1122 4.2.3.4: Max(SND.WND) is only an estimate
 * of the receiver's buffer, which may shrink; "to avoid a resulting
 * deadlock, it is necessary to have a timeout to force transmission of
 * data, overriding the SWS avoidance algorithm" (0.1 to 1.0 s). Here the
 * receiver's whole window is now 1000 bytes (< MSS, < 4000/2) with nothing
 * in flight: within 1 s the sender must use it.
 */
static void test_snd_sws_override_timeout(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const struct tcp_tx *t;
	uint32_t mss;

	(void)state;
	sws_fixture(&s, &cfg, 4000);
	mss = s.c.snd_mss;
	assert_int_equal(app_send(&s, 10000), 10000);
	drain_tx(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + 2 * mss, 1000, 0);
	expect_nothing(&s);
	advance(&s, 1000 * MS);
	t = take_tx(&s);
	assert_int_equal(t->seq, ISS + 1 + 2 * mss);
	assert_true(t->len > 0 && t->len <= 1000);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 7323 2.3: the window field we send is our window >> Rcv.Wind.Shift
 * (256 KiB buffer: shift 3), after the SYN.
 */
static void test_wscale_our_window_field(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	script_config(&cfg);
	cfg.delayed_ack = false;
	fixture_established(&s, &o);
	assert_int_equal(s.c.rcv_wscale, 3);
	assert_int_equal(s.c.rcv_adv, IRS + 1 + 256 * 1024);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1001, 0);
	assert_int_equal(t->wnd, (256 * 1024 - 1000) >> 3);
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1448);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 2449, 0);
	assert_int_equal(t->wnd, (256 * 1024 - 2448) >> 3);
	assert_int_equal(s.c.rcv_wnd, 256 * 1024 - 2448);
	assert_int_equal(recv_all(&s), 2448);
	script_end(&s);
}

/* RFC 7323 2.3: the peer's window field is shifted left by Snd.Wind.Shift (7): 50 is 6400 bytes. */
static void test_wscale_peer_window_field(void **state)
{
	struct script s;
	uint32_t next = ISS + 1, mss;

	(void)state;
	fixture_established(&s, NULL);
	mss = s.c.snd_mss;
	seg(&s, ACK, IRS + 1, ISS + 1, 50, 0);
	assert_int_equal(s.c.snd_wnd, 50u << 7);
	assert_int_equal(app_send(&s, 20000), 20000);
	assert_int_equal(take_all_within_window(&s, &next), 4 * mss); /* 6400 / 1448 */
	seg(&s, ACK, IRS + 1, next, 100, 0);
	assert_int_equal(s.c.snd_wnd, 100u << 7);
	assert_int_equal(take_all_within_window(&s, &next), 8 * mss); /* 12800 / 1448 */
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 7323 2.4: with a scaled window the advertised right edge may fall
 * back by less than 2^shift; the receiver MUST still accept any segment
 * that was in the window of any ACK it sent (it tracks the largest edge).
 */
static void test_wscale_old_right_edge_honoured(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;
	const struct tcp_tx *t;
	uint32_t edge, seq, next = IRS + 1;

	(void)state;
	script_config(&cfg);
	cfg.rcv_buf = 140000;
	cfg.delayed_ack = false;
	fixture_established(&s, &o);
	assert_int_equal(s.c.rcv_wscale, 2);
	edge = IRS + 1 + 140000; /* from the handshake's ACK: 35000 << 2 */
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 2, 0);
	assert_int_equal(t->wnd, 139999 >> 2);
	assert_true(seq_lt(t->ack + ((uint32_t)t->wnd << 2), edge)); /* retracted by 3 */
	/* The peer fills the window of the first ACK, up to its edge. */
	for (seq = IRS + 2; seq != edge;) {
		uint32_t len = edge - seq < 1448 ? edge - seq : 1448;

		seg(&s, ACK, seq, ISS + 1, 65535, len);
		seq += len;
		drain_tx(&s);
	}
	assert_int_equal(s.c.rcv_nxt, edge);
	assert_int_equal(recv_in_order(&s, &next, 0), 140000);
	script_end(&s);
}

/*
 * RFC 9293 3.8.6.2.2 / 3.3.1: the first window we advertise is our free
 * buffer, whatever the peer's initial sequence number. (A right edge left
 * at 0 while RCV.NXT = IRS + 1 sits above 2^31 once read as a huge window.)
 */
static void test_first_window_with_high_irs(void **state)
{
	const uint32_t irs[] = {0x7fffffffu, 0x80000000u, 0xfffffff0u, 0xc0000000u};

	(void)state;
	for (unsigned i = 0; i < sizeof(irs) / sizeof(irs[0]); i++) {
		struct script s;
		const struct tcp_tx *t;

		fixture_established_ex(&s, NULL, ISS, irs[i], 100 * US, true);
		seg(&s, ACK, irs[i] + 1, ISS + 1, 65535, 100);
		advance(&s, s.c.cfg.delack_ns);
		t = take_tx(&s);
		assert_true(((uint32_t)t->wnd << s.c.rcv_wscale) <= s.c.cfg.rcv_buf);
		assert_true(seq_leq(s.c.rcv_adv, s.c.rcv_nxt + s.c.cfg.rcv_buf));
		drain_tx(&s);
		recv_all(&s);
		script_end(&s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_first_window_with_high_irs),
	    cmocka_unit_test(test_send_within_peer_window),
	    cmocka_unit_test(test_old_ack_does_not_shrink_window),
	    cmocka_unit_test(test_old_seq_does_not_update_window),
	    cmocka_unit_test(test_zero_window_first_probe),
	    cmocka_unit_test(test_acks_after_probe_acceptable),
	    cmocka_unit_test(test_orphan_gives_up_in_zero_window),
	    cmocka_unit_test(test_zero_window_probe_backoff),
	    cmocka_unit_test(test_zero_window_answered_probes_send_only_probes),
	    cmocka_unit_test(test_zero_window_not_dropped_while_answered),
	    cmocka_unit_test(test_zero_window_with_data_in_flight_not_dropped),
	    cmocka_unit_test(test_zero_window_dropped_when_unanswered),
	    cmocka_unit_test(test_zero_window_late_send_probed),
	    cmocka_unit_test(test_zero_window_opens_resumes_sending),
	    cmocka_unit_test(test_zero_window_refused_probe_byte_resent),
	    cmocka_unit_test(test_rcv_window_shrinks_to_zero),
	    cmocka_unit_test(test_refused_fin_is_not_a_dupack),
	    cmocka_unit_test(test_fin_beyond_window_not_taken),
	    cmocka_unit_test(test_rcv_right_edge_never_moves_left),
	    cmocka_unit_test(test_rcv_sws_avoidance),
	    cmocka_unit_test(test_rcv_sws_reopens_at_exactly_mss),
	    cmocka_unit_test(test_rcv_held_buffers_shrink_window),
	    cmocka_unit_test(test_snd_sws_tiny_window_not_used),
	    cmocka_unit_test(test_snd_sws_half_max_window_sent),
	    cmocka_unit_test(test_snd_sws_all_remaining_sent),
	    cmocka_unit_test(test_snd_sws_override_timeout),
	    cmocka_unit_test(test_wscale_our_window_field),
	    cmocka_unit_test(test_wscale_peer_window_field),
	    cmocka_unit_test(test_wscale_old_right_edge_honoured),
	    cmocka_unit_test(test_rcv_tiny_segments_compacted),
	    cmocka_unit_test(test_rcv_tiny_compaction_from_reass_and_held),
	};

	return cmocka_run_group_tests(tests, script_group_setup, script_group_teardown);
}
