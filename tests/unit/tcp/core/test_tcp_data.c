/*
 * test_tcp_data.c - the data path of an established connection, one
 * behaviour each: segmentation to the send MSS, delayed and immediate ACKs,
 * Nagle, zero-copy delivery, header prediction, out-of-order reassembly
 * with SACK, and sequence numbers that wrap past 2^32.
 */
#include "tcp_script.h"
#include "tcp/tcp_scoreboard.h"

#include <string.h>

/* The peer's segments when it uses timestamps: 1460 - 12 (RFC 9293 3.7.1). */
#define PEER_MSS 1448u

static const struct fixture_opts no_ts_opts = {
    .ts = false,
    .sack = true,
    .ws = true,
    .peer_wscale = 7,
    .peer_mss = 1460,
    .peer_window = 65535,
};

/* RFC 9293 3.7.1: Eff.snd.MSS is bounded by the MSS option the peer sent. */
static void test_mss_peer_option_smaller(void **state)
{
	struct fixture_opts o = no_ts_opts;
	struct script s;

	(void)state;
	o.peer_mss = 1000;
	fixture_established(&s, &o);
	assert_int_equal(s.c.snd_mss, 1000);
	assert_int_equal(app_send(&s, 2500), 2500);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 1000);
	expect_tx(&s, ACK, ISS + 1001, IRS + 1, 1000);
	expect_tx(&s, ACK | PSH, ISS + 2001, IRS + 1, 500);
	expect_nothing(&s);
	script_end(&s);
}

/* RFC 9293 3.7.1: no MSS option in the SYN-ACK means SendMSS = 536. */
static void test_mss_default_536(void **state)
{
	struct fixture_opts o = no_ts_opts;
	struct script s;

	(void)state;
	fixture_established_ex(&s, &o, ISS, IRS, 0, false);
	assert_int_equal(s.c.snd_mss, 536);
	assert_int_equal(app_send(&s, 1200), 1200);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 536);
	expect_tx(&s, ACK, ISS + 537, IRS + 1, 536);
	expect_tx(&s, ACK | PSH, ISS + 1073, IRS + 1, 128);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 9293 3.7.1: Eff.snd.MSS = min(SendMSS + 20, MMS_S) - TCPhdrsize, and
 * the 12 bytes of the timestamp option every segment carries are part of
 * TCPhdrsize (RFC 7323 3.2): 1000 - 12 = 988.
 */
static void test_mss_minus_timestamps(void **state)
{
	struct fixture_opts o = no_ts_opts;
	struct script s;

	(void)state;
	o.ts = true;
	o.peer_mss = 1000;
	fixture_established(&s, &o);
	assert_int_equal(s.c.snd_mss, 988);
	assert_int_equal(app_send(&s, 2000), 2000);
	assert_true(expect_tx(&s, ACK, ISS + 1, IRS + 1, 988)->opts.has_ts);
	assert_true(expect_tx(&s, ACK, ISS + 989, IRS + 1, 988)->opts.has_ts);
	assert_true(expect_tx(&s, ACK | PSH, ISS + 1977, IRS + 1, 24)->opts.has_ts);
	expect_nothing(&s);
	script_end(&s);
}

/* RFC 1122 4.2.3.2, RFC 5681 4.2: an ACK for at least every second full-sized segment. */
static void test_delack_every_second_segment(void **state)
{
	struct script s;
	uint32_t seq = IRS + 1;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	for (unsigned i = 0; i < 3; i++) {
		seg(&s, ACK, seq, ISS + 1, 65535, PEER_MSS);
		seq += PEER_MSS;
		expect_nothing(&s);
		assert_int_not_equal(s.c.delack_at, 0);
		seg(&s, ACK, seq, ISS + 1, 65535, PEER_MSS);
		seq += PEER_MSS;
		expect_tx(&s, ACK, ISS + 1, seq, 0);
		expect_nothing(&s);
		assert_int_equal(s.c.delack_at, 0);
	}
	assert_int_equal(recv_all(&s), 6 * PEER_MSS);
	script_end(&s);
}

/* RFC 1122 4.2.3.2: a lone segment is acknowledged when the delayed-ACK timer expires (< 0.5 s). */
static void test_delack_timer(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;

	(void)state;
	script_config(&cfg);
	cfg.delack_ns = 40 * MS;
	fixture_established(&s, &o);
	prime_window(&s);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 100);
	expect_nothing(&s);
	assert_int_equal(s.c.delack_at, s.now + 40 * MS);
	advance(&s, 40 * MS - 1);
	expect_nothing(&s);
	advance(&s, 1);
	expect_tx(&s, ACK, ISS + 1, IRS + 101, 0);
	expect_nothing(&s);
	assert_int_equal(recv_all(&s), 100);
	script_end(&s);
}

/* RFC 1122 4.2.3.2: delayed ACKs are optional; with them off every segment is ACKed. */
static void test_delack_off_acks_every_segment(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;
	uint32_t seq = IRS + 1;

	(void)state;
	script_config(&cfg);
	cfg.delayed_ack = false;
	fixture_established(&s, &o);
	prime_window(&s);
	for (unsigned i = 0; i < 4; i++) {
		seg(&s, ACK, seq, ISS + 1, 65535, PEER_MSS);
		seq += PEER_MSS;
		expect_tx(&s, ACK, ISS + 1, seq, 0);
		expect_nothing(&s);
		assert_int_equal(s.c.delack_at, 0);
	}
	assert_int_equal(recv_all(&s), 4 * PEER_MSS);
	script_end(&s);
}

/* RFC 5681 4.2, RFC 9293 3.10.7.4: out-of-order data is acknowledged at once (a duplicate ACK). */
static void test_ack_now_out_of_order(void **state)
{
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	seg(&s, ACK, IRS + 1 + PEER_MSS, ISS + 1, 65535, PEER_MSS);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(t->opts.sack_count, 1);
	assert_int_equal(t->opts.sack[0].left, IRS + 1 + PEER_MSS);
	assert_int_equal(t->opts.sack[0].right, IRS + 1 + 2 * PEER_MSS);
	assert_int_equal(s.c.stats.ooo_segs, 1);
	assert_int_equal(tcp_recv_bytes(&s.c), 0);
	script_end(&s);
}

/* RFC 5681 4.2: a segment that fills a hole is acknowledged at once, even a lone one. */
static void test_ack_now_when_hole_fills(void **state)
{
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = IRS + 1;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	seg(&s, ACK, IRS + 1 + PEER_MSS, ISS + 1, 65535, PEER_MSS);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, PEER_MSS);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1 + 2 * PEER_MSS, 0);
	expect_nothing(&s);
	assert_int_equal(t->opts.sack_count, 0); /* nothing is out of order any more */
	assert_int_equal(recv_in_order(&s, &next, 0), 2 * PEER_MSS);
	script_end(&s);
}

/*
 * A FIN beyond a gap is kept with the out-of-order data (RFC 9293 lets a
 * receiver drop it; Linux keeps it): its SACK block covers the FIN, so
 * the sender's last record is SACKed whole, and the segment filling the
 * gap takes the FIN too: one ACK of everything, CLOSE-WAIT, no FIN resent.
 */
static void test_fin_beyond_gap_taken_when_filled(void **state)
{
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = IRS + 1;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	seg(&s, FIN | ACK, IRS + 1 + PEER_MSS, ISS + 1, 65535, PEER_MSS);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(t->opts.sack_count, 1);
	assert_int_equal(t->opts.sack[0].left, IRS + 1 + PEER_MSS);
	assert_int_equal(t->opts.sack[0].right, IRS + 2 + 2 * PEER_MSS); /* the FIN too */
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_false(s.c.events & TCP_EV_EOF);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, PEER_MSS);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 2 + 2 * PEER_MSS, 0);
	expect_nothing(&s);
	assert_int_equal(t->opts.sack_count, 0);
	assert_int_equal(s.c.state, TCP_CLOSE_WAIT);
	assert_true(s.c.events & TCP_EV_EOF);
	assert_int_equal(recv_in_order(&s, &next, 0), 2 * PEER_MSS);
	script_end(&s);
}

/*
 * A bare FIN beyond a gap (the data before it lost) is kept the same way:
 * the lost data's retransmission, in order with nothing queued out of
 * order, takes it (not the fast path, which knows no FIN).
 */
static void test_bare_fin_beyond_gap(void **state)
{
	struct script s;
	uint32_t next = IRS + 1;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	seg(&s, FIN | ACK, IRS + 1 + PEER_MSS, ISS + 1, 65535, 0);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, PEER_MSS);
	expect_tx(&s, ACK, ISS + 1, IRS + 2 + PEER_MSS, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSE_WAIT);
	assert_int_equal(recv_in_order(&s, &next, 0), PEER_MSS);
	script_end(&s);
}

/*
 * Data that runs past a FIN kept beyond a gap (a FIN the peer never sent
 * there: forged, or a broken peer) forgets it: the stream goes on.
 */
static void test_data_past_kept_fin_forgets_it(void **state)
{
	struct script s;
	uint32_t next = IRS + 1;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	seg(&s, FIN | ACK, IRS + 101, ISS + 1, 65535, 0);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, PEER_MSS);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_false(s.c.fin_ooo);
	assert_false(s.c.events & TCP_EV_EOF);
	drain_tx(&s);
	seg(&s, FIN | ACK, IRS + 1 + PEER_MSS, ISS + 1, 65535, 0); /* the real one */
	expect_tx(&s, ACK, ISS + 1, IRS + 2 + PEER_MSS, 0);
	assert_int_equal(s.c.state, TCP_CLOSE_WAIT);
	assert_int_equal(recv_in_order(&s, &next, 0), PEER_MSS);
	script_end(&s);
}

/*
 * RFC 9293 3.7.4 (Nagle): with unacknowledged data in flight, a short
 * segment waits until the ACK comes; then everything queued goes together.
 */
static void test_nagle_small_segment_waits(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;

	(void)state;
	script_config(&cfg);
	cfg.nodelay = false;
	fixture_established(&s, &o);
	assert_int_equal(app_send(&s, 100), 100);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 100); /* nothing in flight: goes at once */
	assert_int_equal(app_send(&s, 100), 100);
	expect_nothing(&s);
	assert_int_equal(app_send(&s, 50), 50);
	expect_nothing(&s);
	advance(&s, 1 * MS);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 101, 65535, 0);
	expect_tx(&s, ACK | PSH, ISS + 101, IRS + 1, 150);
	expect_nothing(&s);
	script_end(&s);
}

/* RFC 9293 3.7.4: Nagle holds back only short segments; full-sized ones go. */
static void test_nagle_full_segments_not_delayed(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;
	uint32_t mss;

	(void)state;
	script_config(&cfg);
	cfg.nodelay = false;
	fixture_established(&s, &o);
	mss = s.c.snd_mss;
	assert_int_equal(app_send(&s, 100), 100);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 100);
	assert_int_equal(app_send(&s, 2 * mss + 104), 2 * mss + 104);
	expect_tx(&s, ACK, ISS + 101, IRS + 1, mss);
	expect_tx(&s, ACK, ISS + 101 + mss, IRS + 1, mss);
	expect_nothing(&s); /* the 104-byte tail waits */
	seg(&s, ACK, IRS + 1, ISS + 101 + 2 * mss, 65535, 0);
	expect_tx(&s, ACK | PSH, ISS + 101 + 2 * mss, IRS + 1, 104);
	expect_nothing(&s);
	script_end(&s);
}

/* RFC 9293 3.7.4: an application may disable Nagle; short segments then go at once. */
static void test_nodelay_sends_at_once(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	assert_true(s.c.cfg.nodelay);
	assert_int_equal(app_send(&s, 100), 100);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 100);
	assert_int_equal(app_send(&s, 100), 100);
	expect_tx(&s, ACK | PSH, ISS + 101, IRS + 1, 100);
	assert_int_equal(app_send(&s, 1), 1);
	expect_tx(&s, ACK | PSH, ISS + 201, IRS + 1, 1);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * hold_output (tcp_conn.h): while the layer below gathers a burst, sends
 * only queue; tcp_burst_end() sends them in one pass, two sends of 100
 * bytes as one segment of 200. An ACK that must go now is not held: an
 * out-of-order segment's duplicate ACK leaves at once and alone (data
 * would keep the peer from counting it, RFC 5681 2), one per segment, and
 * the held data follows at the burst's end.
 */
static void test_hold_output_until_burst_end(void **state)
{
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	s.c.hold_output = true;
	assert_int_equal(app_send(&s, 100), 100);
	assert_int_equal(app_send(&s, 100), 100);
	expect_nothing(&s);
	assert_true(s.c.output_owed);
	assert_false(tcp_burst_end(&s.c, s.now, &s.out)); /* no ACK was owed */
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 200);
	expect_nothing(&s);
	assert_false(s.c.hold_output);
	assert_false(s.c.output_owed);

	s.c.hold_output = true;
	assert_int_equal(app_send(&s, 100), 100);
	seg(&s, ACK, IRS + 1 + PEER_MSS, ISS + 201, 65535, PEER_MSS); /* a hole before it */
	seg(&s, ACK, IRS + 1 + 2 * PEER_MSS, ISS + 201, 65535, PEER_MSS);
	for (unsigned i = 1; i <= 2; i++) {
		t = expect_tx(&s, ACK, ISS + 201, IRS + 1, 0);
		assert_int_equal(t->opts.sack_count, 1);
		assert_int_equal(t->opts.sack[0].right, IRS + 1 + (i + 1) * PEER_MSS);
	}
	expect_nothing(&s);
	assert_false(tcp_burst_end(&s.c, s.now, &s.out));
	expect_tx(&s, ACK | PSH, ISS + 201, IRS + 1, 100);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * tcp_conn.h "Buffers": received payload is queued by reference, never
 * copied. tcp_recv hands out the very bytes of each frame, in sequence
 * order across many segments, one reference per slice; after the
 * application releases them nothing is left (script_end checks).
 */
static void test_recv_zero_copy_in_order(void **state)
{
	enum { NSEG = 150, BATCH = 50 };
	struct script s;
	uint8_t *frame[NSEG];
	uint32_t seq = IRS + 1;
	unsigned got = 0;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	for (unsigned i = 0; i < NSEG; i++) {
		frame[i] = zbuf_alloc(PEER_MSS);
		assert_non_null(frame[i]);
		assert_true(zbuf_take(frame[i])); /* a received frame: lunar's reference */
		for (uint32_t k = 0; k < PEER_MSS; k++)
			frame[i][k] = (uint8_t)(i * 7 + k * 13);
		seg_data(&s, ACK, seq, ISS + 1, 65535, frame[i], PEER_MSS);
		seq += PEER_MSS;
		drain_tx(&s);
		assert_int_equal(zbuf_refcnt(frame[i]), 2); /* ours and the receive queue's */
		if ((i + 1) % BATCH)
			continue;
		while (got <= i) {
			struct tcp_slice sl[7];
			unsigned n = tcp_recv(&s.c, sl, 7, s.now, &s.out);

			assert_true(n > 0);
			for (unsigned j = 0; j < n; j++, got++) {
				assert_ptr_equal(sl[j].data, frame[got]); /* the frame itself */
				assert_int_equal(sl[j].seq, IRS + 1 + got * PEER_MSS);
				assert_int_equal(sl[j].len, PEER_MSS);
				for (uint32_t k = 0; k < PEER_MSS; k++)
					assert_int_equal(sl[j].data[k],
							 (uint8_t)(got * 7 + k * 13));
				zbuf_unref(sl[j].data);
				assert_int_equal(zbuf_refcnt(frame[got]), 1);
				zbuf_drop(frame[got]);
			}
			drain_tx(&s);
		}
	}
	assert_int_equal(got, NSEG);
	assert_int_equal(tcp_recv_bytes(&s.c), 0);
	assert_int_equal(s.c.rcv_nxt, IRS + 1 + NSEG * PEER_MSS);
	assert_int_equal(s.c.stats.bytes_in, NSEG * PEER_MSS);
	script_end(&s);
}

/*
 * Header prediction (tcp_input.c, RFC 9293 3.10.7.4's checks short-cut):
 * in-order data and pure ACKs on an established connection.
 */
static void test_fastpath_in_order_data_and_ack(void **state)
{
	struct script s;
	uint64_t slow;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s); /* the window changed from the SYN-ACK's: slow path */
	slow = s.c.stats.slowpath;
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	seg(&s, ACK | PSH, IRS + 1001, ISS + 1, 65535, 1000);
	expect_tx(&s, ACK, ISS + 1, IRS + 2001, 0);
	assert_int_equal(s.c.stats.fastpath_data, 2);
	assert_int_equal(app_send(&s, 3000), 3000);
	drain_tx(&s);
	seg(&s, ACK, IRS + 2001, ISS + 1 + s.c.snd_mss, 65535, 0);
	seg(&s, ACK, IRS + 2001, ISS + 3001, 65535, 0);
	assert_int_equal(s.c.stats.fastpath_ack, 2);
	assert_int_equal(s.c.snd_una, ISS + 3001);
	assert_int_equal(s.c.stats.slowpath, slow);
	assert_int_equal(recv_all(&s), 2000);
	script_end(&s);
}

/*
 * Header prediction declines out-of-order data, data while reassembly is
 * pending and a FIN: they take the full RFC 9293 3.10.7.4 path.
 */
static void test_slowpath_out_of_order_and_flagged(void **state)
{
	struct script s;
	uint64_t slow;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	slow = s.c.stats.slowpath;
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000); /* out of order */
	assert_int_equal(s.c.stats.slowpath, slow + 1);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000); /* fills the hole: reassembly pending */
	assert_int_equal(s.c.stats.slowpath, slow + 2);
	seg(&s, ACK | FIN, IRS + 2001, ISS + 1, 65535, 100); /* FIN */
	assert_int_equal(s.c.stats.slowpath, slow + 3);
	assert_int_equal(s.c.state, TCP_CLOSE_WAIT);
	assert_int_equal(s.c.stats.fastpath_data, 0);
	assert_int_equal(s.c.stats.fastpath_ack, 0);
	drain_tx(&s);
	assert_int_equal(recv_all(&s), 2100);
	script_end(&s);
}

/* RFC 9293 3.10.7.4 seventh: segments arriving 3, 1, 2 are delivered 1, 2, 3. */
static void test_reass_312_in_order(void **state)
{
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = IRS + 1;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	seg(&s, ACK, IRS + 2001, ISS + 1, 65535, 1000);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(t->opts.sack_count, 1);
	assert_int_equal(tcp_recv_bytes(&s.c), 0);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1001, 0);
	assert_int_equal(t->opts.sack_count, 1);
	assert_int_equal(t->opts.sack[0].left, IRS + 2001);
	assert_int_equal(t->opts.sack[0].right, IRS + 3001);
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 3001, 0);
	assert_int_equal(t->opts.sack_count, 0);
	expect_nothing(&s);
	assert_int_equal(tcp_recv_bytes(&s.c), 3000);
	assert_int_equal(recv_in_order(&s, &next, 0), 3000);
	assert_int_equal(next, IRS + 3001);
	script_end(&s);
}

static void expect_sack(const struct tcp_tx *t, unsigned i, uint32_t left, uint32_t right)
{
	assert_true(i < t->opts.sack_count);
	if (t->opts.sack[i].left != left || t->opts.sack[i].right != right)
		fail_msg("SACK block %u is [%u, %u), expected [%u, %u)", i, t->opts.sack[i].left,
			 t->opts.sack[i].right, left, right);
}

/*
 * The next segment is a pure ACK of @ack with exactly the @n SACK blocks
 * [b[2i], b[2i + 1]), the first of them read as a D-SACK (RFC 2883 4, as
 * our own sender reads it) exactly when @dsack.
 */
static void expect_ack_sacks(struct script *s, uint32_t ack, bool dsack, unsigned n,
			     const uint32_t *b)
{
	const struct tcp_tx *t = expect_tx(s, ACK, ISS + 1, ack, 0);

	assert_int_equal(t->opts.sack_count, n);
	for (unsigned i = 0; i < n; i++)
		expect_sack(t, i, b[2 * i], b[2 * i + 1]);
	assert_int_equal(tcp_sb_is_dsack(&t->opts, t->ack), dsack);
}

/*
 * RFC 2018 4: the first SACK block holds the segment that triggered the
 * ACK, the others the most recently reported blocks; with timestamps at
 * most 3 blocks fit (RFC 2018 3).
 */
static void test_sack_most_recent_first_three_with_ts(void **state)
{
	struct script s;
	const struct tcp_tx *t;
	const uint32_t b = IRS + 1;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	for (unsigned k = 1; k <= 4; k++) {
		seg(&s, ACK, b + 2000 * k, ISS + 1, 65535, 1000);
		t = expect_tx(&s, ACK, ISS + 1, b, 0);
		assert_int_equal(t->opts.sack_count, k < 3 ? k : 3);
		for (unsigned i = 0; i < t->opts.sack_count; i++)
			expect_sack(t, i, b + 2000 * (k - i), b + 2000 * (k - i) + 1000);
	}
	/* [5000, 6000) joins the blocks at 4000 and 6000: that run goes first. */
	seg(&s, ACK, b + 5000, ISS + 1, 65535, 1000);
	t = expect_tx(&s, ACK, ISS + 1, b, 0);
	assert_int_equal(t->opts.sack_count, 3);
	expect_sack(t, 0, b + 4000, b + 7000);
	expect_sack(t, 1, b + 8000, b + 9000);
	expect_sack(t, 2, b + 2000, b + 3000);
	expect_nothing(&s);
	script_end(&s);
}

/* RFC 2018 3: without the timestamp option up to 4 SACK blocks are sent. */
static void test_sack_four_blocks_without_ts(void **state)
{
	struct script s;
	const struct tcp_tx *t;
	const uint32_t b = IRS + 1;

	(void)state;
	fixture_established(&s, &no_ts_opts);
	prime_window(&s);
	for (unsigned k = 1; k <= 5; k++) {
		seg(&s, ACK, b + 2000 * k, ISS + 1, 65535, 1000);
		t = expect_tx(&s, ACK, ISS + 1, b, 0);
		assert_false(t->opts.has_ts);
		assert_int_equal(t->opts.sack_count, k < 4 ? k : 4);
		for (unsigned i = 0; i < t->opts.sack_count; i++)
			expect_sack(t, i, b + 2000 * (k - i), b + 2000 * (k - i) + 1000);
	}
	script_end(&s);
}

/* RFC 2018 4: every duplicate ACK sent while data is held out of order carries SACK. */
static void test_dupack_carries_sack(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	seg(&s, ACK, IRS + 2001, ISS + 1, 65535, 1000);
	expect_ack_sacks(&s, IRS + 1001, false, 1, (const uint32_t[]){IRS + 2001, IRS + 3001});
	/* An old duplicate below RCV.NXT: a duplicate ACK, its range first (RFC 2883 4.1.1) ... */
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	expect_ack_sacks(&s, IRS + 1001, true, 2,
			 (const uint32_t[]){IRS + 1, IRS + 1001, IRS + 2001, IRS + 3001});
	/* ... a second copy of the out-of-order segment: it, then the run holding it (4.2.1). */
	seg(&s, ACK, IRS + 2001, ISS + 1, 65535, 1000);
	expect_ack_sacks(&s, IRS + 1001, true, 2,
			 (const uint32_t[]){IRS + 2001, IRS + 3001, IRS + 2001, IRS + 3001});
	/* ... and each is reported once: new out-of-order data brings plain blocks. */
	seg(&s, ACK, IRS + 4001, ISS + 1, 65535, 1000);
	expect_ack_sacks(&s, IRS + 1001, false, 2,
			 (const uint32_t[]){IRS + 4001, IRS + 5001, IRS + 2001, IRS + 3001});
	expect_nothing(&s);
	assert_int_equal(s.c.stats.dsacks_sent, 2);
	assert_int_equal(recv_all(&s), 1000);
	script_end(&s);
}

/*
 * RFC 2883 4: a D-SACK reports bytes of the stream received twice, never
 * sequence space before its first byte (IRS + 1). A stale segment reaching
 * back past it is cut there; one 2^31 away, whose range straddles the half
 * of sequence space ahead of RCV.NXT (its left edge reads as ahead, its
 * right as behind), holds no byte of the stream at all: a plain ACK.
 */
static void test_dsack_only_stream_bytes(void **state)
{
	const uint32_t far = IRS + 1001 + 0x80000000u - 50; /* RCV.NXT + 2^31 - 50 */
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	drain_tx(&s);
	seg(&s, ACK, IRS - 99, ISS + 1, 65535, 200); /* [IRS - 99, IRS + 101) */
	expect_ack_sacks(&s, IRS + 1001, true, 1, (const uint32_t[]){IRS + 1, IRS + 101});
	seg(&s, ACK, far, ISS + 1, 65535, 100);
	expect_ack_sacks(&s, IRS + 1001, false, 0, NULL);
	expect_nothing(&s);
	assert_false(s.c.dsack_pending);
	assert_int_equal(s.c.stats.dsacks_sent, 1);
	assert_int_equal(recv_all(&s), 1000);
	script_end(&s);
}

/*
 * RFC 2883 4.1.2: a segment partly below RCV.NXT delivers its new bytes
 * and reports the old ones; the D-SACK block is the part received twice.
 */
static void test_dsack_partial_duplicate(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	drain_tx(&s);
	seg(&s, ACK, IRS + 501, ISS + 1, 65535, 1000);
	expect_ack_sacks(&s, IRS + 1501, true, 1, (const uint32_t[]){IRS + 501, IRS + 1001});
	expect_nothing(&s);
	assert_int_equal(s.c.stats.dsacks_sent, 1);
	assert_int_equal(recv_all(&s), 1500);
	script_end(&s);
}

/*
 * RFC 2883 4 with RFC 1122 4.2.3.2: a segment partly below RCV.NXT is
 * acknowledged at once, its D-SACK with it, even when it is the only
 * segment a delayed ACK would wait on: the sender of the needless
 * retransmission learns of it now.
 */
static void test_dsack_partial_duplicate_not_delayed(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	assert_true(s.c.cfg.delayed_ack);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	expect_nothing(&s); /* one segment: its ACK is delayed */
	advance(&s, s.c.cfg.delack_ns);
	expect_tx(&s, ACK, ISS + 1, IRS + 1001, 0);
	seg(&s, ACK, IRS + 501, ISS + 1, 65535, 1000);
	expect_ack_sacks(&s, IRS + 1501, true, 1, (const uint32_t[]){IRS + 501, IRS + 1001});
	expect_nothing(&s);
	assert_int_equal(s.c.delack_at, 0);
	assert_int_equal(recv_all(&s), 1500);
	script_end(&s);
}

/*
 * RFC 2883 4 (as Linux does): a segment beyond a gap that is partly held
 * out of order already stores its new bytes and reports the repeated
 * ones, then the run now holding them.
 */
static void test_dsack_partial_duplicate_out_of_order(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	drain_tx(&s);
	seg(&s, ACK, IRS + 1501, ISS + 1, 65535, 1000);
	expect_ack_sacks(&s, IRS + 1, true, 2,
			 (const uint32_t[]){IRS + 1501, IRS + 2001, IRS + 1001, IRS + 2501});
	expect_nothing(&s);
	assert_int_equal(s.c.stats.dsacks_sent, 1);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(recv_all(&s), 2500);
	script_end(&s);
}

/*
 * RFC 2883 4: a duplicate's D-SACK goes with the next ACK. When that ACK
 * rides on a full-sized data segment (a segment partly received before,
 * whose ACK field opens the window for data waiting), no option fits
 * beside the data: the D-SACK waits for the next ACK with room instead
 * of being dropped.
 */
static void test_dsack_waits_for_room(void **state)
{
	struct script s;
	const struct tcp_tx *t;
	uint32_t mss, burst;
	bool found = false;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	drain_tx(&s);
	mss = s.c.snd_mss;
	burst = s.c.cc.cwnd / mss * mss;
	assert_int_equal(app_send(&s, burst + 2 * mss), (int)(burst + 2 * mss));
	drain_tx(&s);
	assert_int_equal(s.c.snd_max - (ISS + 1), burst); /* two segments wait for cwnd */
	/* Half old, half new, acknowledging our first segment: data goes. */
	seg(&s, ACK, IRS + 501, ISS + 1 + mss, 65535, 1000);
	assert_true(pending_tx(&s) > 0);
	while (pending_tx(&s)) {
		t = take_tx(&s);
		assert_int_equal(t->len, mss);
		assert_int_equal(t->opts.sack_count, 0);
	}
	assert_int_equal(s.c.stats.dsacks_sent, 0);
	/* New data from the peer: its ACK has room, and the D-SACK. */
	seg(&s, ACK, IRS + 1501, ISS + 1 + mss, 65535, 100);
	advance(&s, s.c.cfg.delack_ns);
	while (pending_tx(&s)) {
		t = take_tx(&s);
		if (t->len == 0 && t->opts.sack_count) {
			expect_sack(t, 0, IRS + 501, IRS + 1001);
			found = true;
		}
	}
	assert_true(found);
	assert_int_equal(s.c.stats.dsacks_sent, 1);
	assert_int_equal(recv_all(&s), 1600);
	script_end(&s);
}

/* cfg.dsack off (Linux's net.ipv4.tcp_dsack=0), or no SACK negotiated: duplicates are ACKed
 * plainly. */
static void test_dsack_off(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o;
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	for (int round = 0; round < 2; round++) {
		script_config(&cfg);
		o = fixture_opts_with(&cfg);
		if (round == 0)
			cfg.dsack = false;
		else
			o.sack = false;
		fixture_established(&s, &o);
		prime_window(&s);
		seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
		drain_tx(&s);
		seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
		t = expect_tx(&s, ACK, ISS + 1, IRS + 1001, 0);
		assert_int_equal(t->opts.sack_count, 0);
		expect_nothing(&s);
		assert_int_equal(s.c.stats.dsacks_sent, 0);
		assert_false(s.c.dsack_pending);
		assert_int_equal(recv_all(&s), 1000);
		script_end(&s);
	}
}

/*
 * tcp_reass.h, RFC 9293 3.10.7.4 seventh ("may" keep out-of-order data):
 * the out-of-order queue is bounded by a slice count; a segment beyond the
 * bound is dropped, not SACKed, and is taken when the peer retransmits it.
 */
static void test_reass_bounded_segments(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = IRS + 1;

	(void)state;
	script_config(&cfg);
	cfg.reass_max_segs = 2;
	fixture_established(&s, &o);
	prime_window(&s);
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	seg(&s, ACK, IRS + 2001, ISS + 1, 65535, 1000);
	drain_tx(&s);
	seg(&s, ACK, IRS + 3001, ISS + 1, 65535, 1000); /* no room: dropped */
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(t->opts.sack_count, 1);
	expect_sack(t, 0, IRS + 1001, IRS + 3001);
	assert_int_equal(s.c.reass.n, 2);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000); /* the hole */
	expect_tx(&s, ACK, ISS + 1, IRS + 3001, 0);
	seg(&s, ACK, IRS + 3001, ISS + 1, 65535, 1000); /* the retransmission */
	drain_tx(&s);
	assert_int_equal(s.c.rcv_nxt, IRS + 4001);
	assert_int_equal(recv_in_order(&s, &next, 0), 4000);
	script_end(&s);
}

/* Same with the byte bound: what does not fit is dropped whole, then recovered. */
static void test_reass_bounded_bytes(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = IRS + 1;

	(void)state;
	script_config(&cfg);
	cfg.reass_max_bytes = 1500;
	fixture_established(&s, &o);
	prime_window(&s);
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	drain_tx(&s);
	seg(&s, ACK, IRS + 2001, ISS + 1, 65535, 1000); /* 2000 > 1500: dropped */
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(t->opts.sack_count, 1);
	expect_sack(t, 0, IRS + 1001, IRS + 2001);
	assert_int_equal(tcp_reass_bytes(&s.c.reass), 1000);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	expect_tx(&s, ACK, ISS + 1, IRS + 2001, 0);
	seg(&s, ACK, IRS + 2001, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(recv_in_order(&s, &next, 0), 3000);
	assert_int_equal(next, IRS + 3001);
	script_end(&s);
}

/*
 * RFC 9293 3.4: sequence numbers are modulo 2^32. A bulk transfer whose
 * data crosses 2^32, with an out-of-order segment just past the wrap and
 * the one straddling it filling the hole, is delivered whole and in order.
 */
static void test_seq_wrap_receive(void **state)
{
	enum { NSEG = 20 };
	const uint32_t irs = 0xffffffffu - 3000u;
	const uint32_t b = irs + 1;
	const unsigned order[NSEG] = {0,  1,  3,  2,  4,  5,  6,  7,  8,  9,
				      10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = b;

	(void)state;
	fixture_established_ex(&s, NULL, ISS, irs, 0, true);
	seg(&s, ACK, b, ISS + 1, 65535, 0);
	/* Segment 2 straddles 2^32. */
	assert_true(b + 2 * PEER_MSS > b + 3 * PEER_MSS);
	for (unsigned i = 0; i < NSEG; i++) {
		uint32_t seq = b + order[i] * PEER_MSS;

		seg(&s, ACK, seq, ISS + 1, 65535, PEER_MSS);
		if (order[i] == 3) {
			t = expect_tx(&s, ACK, ISS + 1, b + 2 * PEER_MSS, 0);
			expect_sack(t, 0, b + 3 * PEER_MSS, b + 4 * PEER_MSS);
		} else if (order[i] == 2) {
			t = expect_tx(&s, ACK, ISS + 1, b + 4 * PEER_MSS, 0);
			assert_int_equal(t->opts.sack_count, 0);
		}
		drain_tx(&s);
	}
	assert_int_equal(s.c.rcv_nxt, b + NSEG * PEER_MSS);
	assert_true(s.c.rcv_nxt < b); /* it wrapped */
	assert_int_equal(recv_in_order(&s, &next, 0), NSEG * PEER_MSS);
	assert_int_equal(next, b + NSEG * PEER_MSS);
	script_end(&s);
}

/* app_send()'s data: the byte at stream offset @k. */
static uint8_t offset_byte(uint32_t k)
{
	return (uint8_t)k;
}

/*
 * tcp_tx_slices() for [@seq, +@len) must cover it exactly, in order, with
 * the stream's bytes: byte(k) at stream offset k, the stream starting at
 * sequence number @origin.
 */
static void assert_tx_bytes(struct script *s, uint32_t seq, uint32_t len, uint32_t origin,
			    uint8_t (*byte)(uint32_t))
{
	struct tcp_slice sl[64];
	unsigned n = tcp_tx_slices(&s->c, seq, len, sl, 64);
	uint32_t off = 0;

	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(sl[i].seq, seq + off);
		for (uint32_t k = 0; k < sl[i].len; k++)
			assert_int_equal(sl[i].data[k], byte(seq + off + k - origin));
		off += sl[i].len;
	}
	assert_int_equal(off, len);
}

/*
 * RFC 9293 3.4 on the sending side: our ISS just below 2^32; 40000 bytes go
 * out in order across the wrap, each segment's payload is the right part of
 * the send buffer, and the ACKs release it all.
 */
static void test_seq_wrap_send(void **state)
{
	const uint32_t iss = 0xffffffffu - 2000u;
	const uint32_t total = 40000;
	struct script s;
	uint32_t next = iss + 1;

	(void)state;
	fixture_established_ex(&s, NULL, iss, IRS, 0, true);
	seg(&s, ACK, IRS + 1, iss + 1, 65535, 0);
	assert_int_equal(app_send(&s, total), total);
	while (s.c.snd_una != iss + 1 + total) {
		assert_true(pending_tx(&s) > 0);
		while (pending_tx(&s)) {
			const struct tcp_tx *t = take_tx(&s);

			assert_int_equal(t->seq, next);
			assert_true(t->len > 0 && t->len <= s.c.snd_mss);
			assert_false(t->retransmit);
			assert_tx_bytes(&s, t->seq, t->len, iss + 1, offset_byte);
			next += t->len;
		}
		advance(&s, 100 * US);
		seg(&s, ACK, IRS + 1, next, 65535, 0);
	}
	expect_nothing(&s);
	assert_true(s.c.snd_una < iss); /* it wrapped */
	assert_int_equal(s.c.snd.bytes, 0);
	assert_int_equal(s.c.snd.count, 0);
	assert_int_equal(s.c.rto_at, 0);
	script_end(&s);
}

/* The byte at stream offset @k of test_tx_slices_cursor's data. */
static uint8_t cursor_byte(uint32_t k)
{
	return (uint8_t)(k * 7u + k / 251u);
}

/* Append @n chunks of uneven sizes, stream offsets from *@sent on. */
static void cursor_append(struct script *s, unsigned n, uint32_t *sent)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = 1 + (*sent * 13u + i * 389u) % 1500u;
		uint8_t *p = zbuf_alloc(len);

		assert_non_null(p);
		for (uint32_t k = 0; k < len; k++)
			p[k] = cursor_byte(*sent + k);
		assert_int_equal(tcp_send(&s->c, p, len), (int)len);
		zbuf_unref(p);
		*sent += len;
	}
}

/*
 * The send buffer's framing cursor: ranges of a buffer of many uneven
 * chunks, asked in order (the cursor's case), backwards (a retransmission
 * walks from the front), at random, after ACKs release chunks and after
 * the ring grows, always give the stream's own bytes.
 */
static void test_tx_slices_cursor(void **state)
{
	struct script s;
	uint32_t sent = 0, rnd = 12345;

	(void)state;
	fixture_established(&s, NULL);
	cursor_append(&s, 40, &sent);
	for (uint32_t off = 0; off + 1000 <= sent; off += 1000)
		assert_tx_bytes(&s, ISS + 1 + off, 1000, ISS + 1, cursor_byte);
	assert_tx_bytes(&s, ISS + 1, 1448, ISS + 1, cursor_byte); /* back to the front */
	assert_tx_bytes(&s, ISS + sent, 1, ISS + 1, cursor_byte); /* the last byte */
	assert_tx_bytes(&s, ISS + 1 + 700, 5000, ISS + 1, cursor_byte);
	for (int i = 0; i < 200; i++) {
		uint32_t una_off = s.c.snd_una - (ISS + 1), held = sent - una_off, a, b;

		rnd = rnd * 1103515245u + 12345u;
		a = (rnd >> 8) % held;
		b = 1 + (rnd >> 3) % (held - a < 3000 ? held - a : 3000);
		assert_tx_bytes(&s, s.c.snd_una + a, b, ISS + 1, cursor_byte);
		if (i % 50 == 49) {
			/* the peer ACKs what was sent, part of a chunk included */
			uint32_t ack = s.c.snd_nxt;

			advance(&s, 100 * US);
			seg(&s, ACK, IRS + 1, ack, 65535, 0);
			assert_int_equal(s.c.snd_una, ack);
			drain_tx(&s);
			cursor_append(&s, 30, &sent); /* the ring grows */
		}
	}
	script_end(&s);
}

/*
 * RFC 9293 3.7.1 with TCP segmentation offload: with cfg.tso_max the core
 * hands the port segments of whole MSSs (and the tail), marked with the MSS
 * to cut at; without it, every segment is at most one MSS.
 */
/* Established, with segments up to 64 KiB and an initial window of 100 segments; @cfg as given. */
static uint32_t tso_established(struct script *s, struct tcp_config *cfg)
{
	struct fixture_opts o = {.ts = true,
				 .sack = true,
				 .ws = true,
				 .peer_wscale = 7,
				 .peer_mss = 1460,
				 .peer_window = 65535,
				 .cfg = cfg};

	cfg->tso_max = 65535 - 80;
	cfg->iw_segments = 100; /* the whole 100 000 bytes fit the first window */
	fixture_established(s, &o);
	seg(s, ACK, IRS + 1, ISS + 1, 65535, 0);
	return s->c.snd_mss;
}

static void test_tso_segments(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const struct tcp_tx *t;
	uint32_t mss, total = 0;

	(void)state;
	script_config(&cfg);
	mss = tso_established(&s, &cfg);
	assert_int_equal(app_send(&s, 50000), 50000);
	assert_int_equal(app_send(&s, 50000), 50000);
	while (pending_tx(&s)) {
		t = take_tx(&s);
		if (t->len > mss) {
			assert_int_equal(t->tso_mss, mss);
			assert_true(t->len <= cfg.tso_max);
			/* whole MSSs, except the tail of what the application had queued */
			assert_true(t->len % mss == 0 || total + t->len == 50000 ||
				    total + t->len == 100000);
		} else {
			assert_int_equal(t->tso_mss, 0);
		}
		assert_int_equal(t->seq, ISS + 1 + total);
		total += t->len;
	}
	assert_int_equal(total, 100000);
	assert_true(s.c.stats.segs_out < 100000 / mss); /* fewer segments than MSSs */
	seg(&s, ACK, IRS + 1, ISS + 1 + 100000, 65535, 0);
	assert_int_equal(s.c.snd.bytes, 0);
	script_end(&s);
}

/*
 * Large segments cut in software (cfg.gso): the RTT is timed on the first
 * MSS, whose ACK no delayed ACK holds back (as Linux samples a partial
 * ACK of a TSO segment); one call sends at most TCP_OUT_MAX frames' worth,
 * as it would without GSO; and with Nagle on, a short tail stays behind
 * while data is in flight (RFC 9293 3.7.4; Linux's tcp_mss_split_point()).
 */
static void test_gso_timing_cap_and_nagle(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const struct tcp_tx *t;
	uint32_t mss, total = 0;

	(void)state;
	script_config(&cfg);
	cfg.gso = true;
	cfg.nodelay = false;
	mss = tso_established(&s, &cfg);
	/* Nothing in flight: the whole 4000 bytes go as one segment, timed on its first MSS. */
	assert_int_equal(app_send(&s, 4000), 4000);
	t = take_tx(&s);
	assert_int_equal(t->len, 4000);
	assert_int_equal(t->tso_mss, mss);
	assert_false(pending_tx(&s));
	assert_int_equal(s.c.rtt_seq, ISS + 1 + mss);
	/* Data in flight: of 2 MSS + 100 the whole MSSs go, the 100 bytes wait (Nagle). */
	assert_int_equal(app_send(&s, 2 * mss + 100), (int)(2 * mss + 100));
	t = take_tx(&s);
	assert_int_equal(t->seq, ISS + 1 + 4000);
	assert_int_equal(t->len, 2 * mss);
	assert_false(pending_tx(&s));
	/* Everything acknowledged: the tail goes. */
	seg(&s, ACK, IRS + 1, ISS + 1 + 4000 + 2 * mss, 65535, 0);
	t = take_tx(&s);
	assert_int_equal(t->len, 100);
	assert_false(pending_tx(&s));
	/* 90 MSSs queued behind a closed window that then opens: 64 MSSs' worth go, the next ACK
	 * the rest. */
	seg(&s, ACK, IRS + 1, ISS + 1 + 4000 + 2 * mss + 100, 0, 0);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(app_send(&s, 30 * mss), (int)(30 * mss));
	while (pending_tx(&s))
		assert_int_equal(take_tx(&s)->len, 0); /* nothing but ACKs or a window probe's */
	seg(&s, ACK, IRS + 1, ISS + 1 + 4000 + 2 * mss + 100, 65535, 0);
	while (pending_tx(&s))
		total += take_tx(&s)->len;
	assert_int_equal(total, TCP_OUT_MAX * mss);
	seg(&s, ACK, IRS + 1, ISS + 1 + 4000 + 2 * mss + 100 + 10 * mss, 65535, 0);
	while (pending_tx(&s))
		total += take_tx(&s)->len;
	assert_int_equal(total, 90 * mss);
	script_end(&s);
}

/*
 * tcp_input_train() takes a train only while the connection's output is
 * held for the burst's end (tcp_conn.hold_output, as tcp_stack sets it):
 * one segment at a time would otherwise send between them (data carrying
 * an ACK, changing the ACK count and TS.Recent), which one call cannot
 * reproduce. Not held, it takes nothing and leaves the connection as it
 * was; held, it takes both pieces, acknowledged by one ACK.
 */
static void test_train_needs_held_output(void **state)
{
	struct script s;
	struct tcp_piece pc[2];
	struct tcp_repr r = {.sport = 80,
			     .dport = 61440,
			     .seq = IRS + 1,
			     .ack = ISS + 1,
			     .flags = ACK,
			     .window = 65535,
			     .hdr_len = 20};
	uint32_t next = IRS + 1;
	uint8_t *data;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	data = zbuf_alloc(2000);
	assert_non_null(data);
	assert_true(zbuf_take(data)); /* a received frame: lunar's reference */
	for (uint32_t k = 0; k < 2000; k++)
		data[k] = (uint8_t)(IRS + 1 + k); /* what recv_in_order() checks */
	pc[0] = (struct tcp_piece){data, 1000};
	pc[1] = (struct tcp_piece){data + 1000, 1000};
	r.payload = data;
	r.payload_len = 1000;
	if (s.peer_ts_on) {
		r.opts.has_ts = true;
		r.opts.ts_val = s.peer_ts;
		r.hdr_len = 32;
	}
	assert_false(s.c.hold_output);
	assert_int_equal(tcp_input_train(&s.c, &r, pc, 2, s.now, &s.out), 0);
	assert_int_equal(s.c.rcv_nxt, IRS + 1);
	expect_nothing(&s);
	s.c.hold_output = true;
	assert_int_equal(tcp_input_train(&s.c, &r, pc, 2, s.now, &s.out), 2);
	assert_int_equal(s.c.rcv_nxt, IRS + 2001);
	tcp_burst_end(&s.c, s.now, &s.out);
	expect_tx(&s, ACK, ISS + 1, IRS + 2001, 0); /* two segments: an ACK (RFC 5681 4.2) */
	expect_nothing(&s);
	zbuf_drop(data);
	assert_int_equal(recv_in_order(&s, &next, 0), 2000);
	script_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tso_segments),
	    cmocka_unit_test(test_gso_timing_cap_and_nagle),
	    cmocka_unit_test(test_mss_peer_option_smaller),
	    cmocka_unit_test(test_mss_default_536),
	    cmocka_unit_test(test_mss_minus_timestamps),
	    cmocka_unit_test(test_delack_every_second_segment),
	    cmocka_unit_test(test_delack_timer),
	    cmocka_unit_test(test_delack_off_acks_every_segment),
	    cmocka_unit_test(test_ack_now_out_of_order),
	    cmocka_unit_test(test_ack_now_when_hole_fills),
	    cmocka_unit_test(test_fin_beyond_gap_taken_when_filled),
	    cmocka_unit_test(test_bare_fin_beyond_gap),
	    cmocka_unit_test(test_data_past_kept_fin_forgets_it),
	    cmocka_unit_test(test_nagle_small_segment_waits),
	    cmocka_unit_test(test_nagle_full_segments_not_delayed),
	    cmocka_unit_test(test_nodelay_sends_at_once),
	    cmocka_unit_test(test_hold_output_until_burst_end),
	    cmocka_unit_test(test_recv_zero_copy_in_order),
	    cmocka_unit_test(test_fastpath_in_order_data_and_ack),
	    cmocka_unit_test(test_slowpath_out_of_order_and_flagged),
	    cmocka_unit_test(test_reass_312_in_order),
	    cmocka_unit_test(test_sack_most_recent_first_three_with_ts),
	    cmocka_unit_test(test_sack_four_blocks_without_ts),
	    cmocka_unit_test(test_dupack_carries_sack),
	    cmocka_unit_test(test_dsack_partial_duplicate),
	    cmocka_unit_test(test_dsack_partial_duplicate_not_delayed),
	    cmocka_unit_test(test_dsack_only_stream_bytes),
	    cmocka_unit_test(test_dsack_partial_duplicate_out_of_order),
	    cmocka_unit_test(test_dsack_off),
	    cmocka_unit_test(test_dsack_waits_for_room),
	    cmocka_unit_test(test_reass_bounded_segments),
	    cmocka_unit_test(test_reass_bounded_bytes),
	    cmocka_unit_test(test_seq_wrap_receive),
	    cmocka_unit_test(test_seq_wrap_send),
	    cmocka_unit_test(test_tx_slices_cursor),
	    cmocka_unit_test(test_train_needs_held_output),
	};

	return cmocka_run_group_tests(tests, script_group_setup, script_group_teardown);
}
