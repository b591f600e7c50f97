/*
 * test_tcp_loss.c - loss and silence, one behaviour each: the RFC 6298
 * retransmission timer on a real connection (samples, floor, backoff,
 * Karn), slow start after a timeout, fast retransmit and NewReno recovery,
 * giving up on a vanished peer, a lost FIN, and keep-alives; cwnd grows
 * only when the sender has been using it.
 */
#include "tcp_script.h"

#include <errno.h>

#define SEC (1000 * MS)

/*
 * RFC 6298 2.2, 2.3: from the handshake's sample R0 = 8 ms (SYN to SYN-ACK)
 * and two timed data segments (16 ms, then 1 ms):
 *   R0:  SRTT = 8,  RTTVAR = 4,                        RTO = 8 + 16 = 24
 *   16:  RTTVAR = (3*4 + |8-16|)/4 = 5,  SRTT = (7*8 + 16)/8 = 9,  RTO = 29
 *   1:   RTTVAR = (3*5 + |9-1|)/4 = 5.75, SRTT = (7*9 + 1)/8 = 8,  RTO = 31
 */
static void test_rto_from_rtt_samples(void **state)
{
	struct script s;

	(void)state;
	fixture_established_ex(&s, NULL, ISS, IRS, 8 * MS, true);
	assert_int_equal(s.c.rtt.srtt_ns, 8 * MS);
	assert_int_equal(s.c.rtt.rttvar_ns, 4 * MS);
	assert_int_equal(s.c.rtt.rto_ns, 24 * MS);
	prime_window(&s);

	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	assert_int_equal(s.c.rto_at, s.now + 24 * MS); /* RFC 6298 5.1 */
	advance(&s, 16 * MS);
	seg(&s, ACK, IRS + 1, ISS + 1001, 65535, 0);
	assert_int_equal(s.c.rtt.rttvar_ns, 5 * MS);
	assert_int_equal(s.c.rtt.srtt_ns, 9 * MS);
	assert_int_equal(s.c.rtt.rto_ns, 29 * MS);

	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1001, IRS + 1, 1000);
	assert_int_equal(s.c.rto_at, s.now + 29 * MS);
	advance(&s, 1 * MS);
	seg(&s, ACK, IRS + 1, ISS + 2001, 65535, 0);
	assert_int_equal(s.c.rtt.rttvar_ns, 5750 * US);
	assert_int_equal(s.c.rtt.srtt_ns, 8 * MS);
	assert_int_equal(s.c.rtt.rto_ns, 31 * MS);
	assert_int_equal(s.c.rto_at, 0); /* RFC 6298 5.2: all acknowledged */
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 6298 5.1: a segment sent while the timer runs does not restart it:
 * the timer still times the oldest outstanding data, which is resent one
 * RTO after it went, not one RTO after the latest segment.
 */
static void test_rto_not_restarted_by_new_data(void **state)
{
	struct script s;
	uint64_t t0;

	(void)state;
	fixture_established_ex(&s, NULL, ISS, IRS, 8 * MS, true); /* RTO 24 ms */
	prime_window(&s);
	t0 = s.now;
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	assert_int_equal(s.c.rto_at, t0 + 24 * MS);
	advance(&s, 10 * MS);
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1001, IRS + 1, 1000);
	assert_int_equal(s.c.rto_at, t0 + 24 * MS);
	advance(&s, 14 * MS - 1);
	expect_nothing(&s);
	advance(&s, 1); /* go-back-N from SND.UNA, one loss window */
	assert_true(expect_tx(&s, ACK, ISS + 1, IRS + 1, s.c.snd_mss)->retransmit);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 6298 3: one segment at a time is timed; one sent while it is
 * outstanding does not take its place. Segment A goes at t0, B at t0 +
 * 5 ms; the ACK of A at t0 + 8 ms is A's sample (8 ms: SRTT 8, RTTVAR
 * (3*4 + 0)/4 = 3), though B is not yet acknowledged.
 */
static void test_timed_segment_not_replaced(void **state)
{
	struct script s;

	(void)state;
	fixture_established_ex(&s, NULL, ISS, IRS, 8 * MS, true); /* SRTT 8, RTTVAR 4 */
	prime_window(&s);
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	advance(&s, 5 * MS);
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1001, IRS + 1, 1000);
	assert_int_equal(s.c.rtt_seq, ISS + 1001);
	advance(&s, 3 * MS);
	seg(&s, ACK, IRS + 1, ISS + 1001, 65535, 0);
	assert_int_equal(s.c.rtt.srtt_ns, 8 * MS);
	assert_int_equal(s.c.rtt.rttvar_ns, 3 * MS);
	seg(&s, ACK, IRS + 1, ISS + 2001, 65535, 0);
	expect_nothing(&s);
	script_end(&s);
}

/* RFC 6298 2.4 with LUNA's floor: SRTT + 4*RTTVAR = 300 us is raised to rto_min_ns = 4 ms. */
static void test_rto_floor(void **state)
{
	struct script s;

	(void)state;
	fixture_established_ex(&s, NULL, ISS, IRS, 100 * US, true);
	assert_int_equal(s.c.cfg.rto_min_ns, 4 * MS);
	assert_int_equal(s.c.rtt.srtt_ns, 100 * US);
	assert_int_equal(s.c.rtt.rttvar_ns, 50 * US);
	assert_int_equal(s.c.rtt.rto_ns, 4 * MS);
	prime_window(&s);
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	advance(&s, 4 * MS - 1);
	expect_nothing(&s);
	advance(&s, 1);
	assert_true(expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000)->retransmit);
	script_end(&s);
}

/*
 * RFC 6298 5.4-5.6: on each expiry the earliest unacknowledged segment is
 * retransmitted and the timer doubles: RTO, 2*RTO, 4*RTO, ... up to the
 * maximum (2.5), here 40 ms: 4, 8, 16, 32, 40, 40 ms.
 */
static void test_rto_backoff_capped(void **state)
{
	static const uint64_t gap_ms[] = {4, 8, 16, 32, 40, 40, 40};
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;

	(void)state;
	script_config(&cfg);
	cfg.rto_max_ns = 40 * MS;
	fixture_established(&s, &o);
	prime_window(&s);
	assert_int_equal(tcp_rtt_timeout(&s.c.rtt), 4 * MS);
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	for (unsigned i = 0; i < sizeof(gap_ms) / sizeof(gap_ms[0]); i++) {
		advance(&s, gap_ms[i] * MS - 1);
		expect_nothing(&s);
		advance(&s, 1);
		assert_true(expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000)->retransmit);
		expect_nothing(&s);
		assert_int_equal(s.c.stats.timeouts, i + 1);
	}
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	script_end(&s);
}

/*
 * RFC 6298 3 (Karn's algorithm) and 5.7: an ACK for retransmitted data
 * gives no RTT sample; the next segment sent fresh is timed again and its
 * sample recomputes RTO, collapsing the backoff.
 */
static void test_karn_no_sample_from_retransmission(void **state)
{
	struct script s;

	(void)state;
	fixture_established_ex(&s, NULL, ISS, IRS, 8 * MS, true); /* SRTT 8, RTTVAR 4, RTO 24 */
	prime_window(&s);
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	advance(&s, 24 * MS);
	assert_true(expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000)->retransmit);
	advance(&s, 2 * MS); /* ambiguous: 26 ms from the first copy, 2 ms from the second */
	seg(&s, ACK, IRS + 1, ISS + 1001, 65535, 0);
	assert_int_equal(s.c.rtt.srtt_ns, 8 * MS);
	assert_int_equal(s.c.rtt.rttvar_ns, 4 * MS);
	assert_int_equal(tcp_rtt_timeout(&s.c.rtt), 48 * MS); /* backed off until a new sample */

	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1001, IRS + 1, 1000);
	advance(&s, 8 * MS);
	seg(&s, ACK, IRS + 1, ISS + 2001, 65535, 0);
	assert_int_equal(s.c.rtt.srtt_ns, 8 * MS);
	assert_int_equal(s.c.rtt.rttvar_ns, 3 * MS);
	assert_int_equal(tcp_rtt_timeout(&s.c.rtt), 20 * MS);
	script_end(&s);
}

/*
 * RFC 6298 3 (Karn's algorithm): a fast retransmission (RFC 5681 3.2) of
 * the timed segment makes its ACK ambiguous too: the full ACK 15 ms after
 * the first copy gives no RTT sample, SRTT stays at the handshake's.
 */
static void test_karn_no_sample_after_fast_retransmit(void **state)
{
	struct script s;
	uint32_t mss;

	(void)state;
	fixture_established_ex(&s, NULL, ISS, IRS, 8 * MS, true); /* SRTT 8, RTTVAR 4 */
	prime_window(&s);
	mss = s.c.snd_mss;
	assert_int_equal(app_send(&s, 5 * mss), 5 * mss);
	for (unsigned i = 0; i < 5; i++)
		take_tx(&s);
	assert_int_equal(s.c.rtt_seq, ISS + 1 + mss); /* the first segment is timed */
	advance(&s, 5 * MS);
	for (unsigned i = 0; i < 3; i++)
		seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0); /* the first segment lost */
	assert_true(expect_tx(&s, ACK, ISS + 1, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	advance(&s, 10 * MS); /* before the RTO (24 ms) */
	seg(&s, ACK, IRS + 1, ISS + 1 + 5 * mss, 65535, 0);
	assert_false(s.c.cc.in_recovery);
	assert_int_equal(s.c.stats.timeouts, 0);
	assert_int_equal(s.c.rtt.srtt_ns, 8 * MS); /* no 15 ms sample */
	assert_int_equal(s.c.rtt.rttvar_ns, 4 * MS);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 5681 3.1: after a timeout cwnd is the loss window (1 SMSS) and
 * ssthresh = max(FlightSize/2, 2*SMSS); only the first segment is resent.
 * Its ACK grows cwnd in slow start and the rest follows, go-back-N.
 */
static void test_rto_then_slow_start(void **state)
{
	struct script s;
	uint32_t mss;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	mss = s.c.snd_mss;
	assert_int_equal(app_send(&s, 5 * mss), 5 * mss);
	for (unsigned i = 0; i < 5; i++)
		take_tx(&s);
	expect_nothing(&s);
	advance(&s, tcp_rtt_timeout(&s.c.rtt));
	assert_true(expect_tx(&s, ACK, ISS + 1, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.cc.cwnd, mss);
	assert_int_equal(s.c.cc.ssthresh, 5 * mss / 2);

	advance(&s, 1 * MS);
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 65535, 0);
	assert_int_equal(s.c.cc.cwnd, 2 * mss);
	assert_true(expect_tx(&s, ACK, ISS + 1 + mss, IRS + 1, mss)->retransmit);
	assert_true(expect_tx(&s, ACK, ISS + 1 + 2 * mss, IRS + 1, mss)->retransmit);
	expect_nothing(&s);

	advance(&s, 1 * MS);
	seg(&s, ACK, IRS + 1, ISS + 1 + 3 * mss, 65535, 0);
	assert_true(expect_tx(&s, ACK, ISS + 1 + 3 * mss, IRS + 1, mss)->retransmit);
	assert_true(expect_tx(&s, ACK | PSH, ISS + 1 + 4 * mss, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + 5 * mss, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.snd.bytes, 0);
	script_end(&s);
}

/*
 * RFC 3522 and RFC 4015 without SACK: the first ACK after the RTO echoes
 * the originals' TSval, so they arrived (the ACK was only late): the
 * window comes back (ssthresh too), SND.NXT returns to SND.MAX (4 step
 * 4) so go-back-N resends nothing more, and the episode is counted.
 */
static void test_spurious_rto_undone_without_sack(void **state)
{
	struct fixture_opts o = {.ts = true};
	struct tcp_options ack = {.has_ts = true};
	struct script s;
	uint32_t mss, cwnd, ts_sent;

	(void)state;
	fixture_established(&s, &o);
	prime_window(&s);
	assert_true(s.c.ts_ok);
	assert_false(s.c.sb_on);
	mss = s.c.snd_mss;
	cwnd = s.c.cc.cwnd;
	assert_int_equal(app_send(&s, 5 * mss), 5 * mss);
	ts_sent = take_tx(&s)->opts.ts_val;
	for (unsigned i = 1; i < 5; i++)
		take_tx(&s);
	advance(&s, tcp_rtt_timeout(&s.c.rtt));
	assert_true(expect_tx(&s, ACK, ISS + 1, IRS + 1, mss)->retransmit);
	assert_int_equal(s.c.cc.cwnd, mss);
	assert_int_equal(s.c.snd_nxt, ISS + 1 + mss);

	advance(&s, 1 * MS);
	ack.ts_val = s.peer_ts;
	ack.ts_ecr = ts_sent;
	seg_opts(&s, ACK, IRS + 1, ISS + 1 + 3 * mss, 65535, 0, &ack);
	assert_int_equal(s.c.stats.spurious_rtos, 1);
	assert_true(s.c.cc.cwnd >= cwnd);
	assert_int_equal(s.c.cc.ssthresh, UINT32_MAX);
	assert_int_equal(s.c.snd_nxt, s.c.snd_max);
	expect_nothing(&s); /* segments 3 and 4 are on their way: not sent again */
	seg(&s, ACK, IRS + 1, ISS + 1 + 5 * mss, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.snd.bytes, 0);
	script_end(&s);
}

/*
 * Five segments out, then an RTO with neither timestamps nor SACK: segment
 * 0 goes again, cwnd 1 SMSS; three more segments wait in the send buffer.
 * Returns the window before; *ssthresh the halved one.
 */
static uint32_t five_then_rto(struct script *s, const struct tcp_config *cfg, uint32_t *ssthresh)
{
	struct fixture_opts o = {.cfg = (struct tcp_config *)cfg}; /* no timestamps, no SACK */
	uint32_t mss, cwnd;

	fixture_established(s, &o);
	prime_window(s);
	assert_false(s->c.ts_ok || s->c.sb_on);
	mss = s->c.snd_mss;
	cwnd = s->c.cc.cwnd;
	assert_int_equal(app_send(s, 5 * mss), 5 * mss);
	for (unsigned i = 0; i < 5; i++)
		take_tx(s);
	advance(s, tcp_rtt_timeout(&s->c.rtt));
	assert_true(expect_tx(s, ACK, ISS + 1, IRS + 1, mss)->retransmit);
	assert_int_equal(app_send(s, 3 * mss), 3 * mss);
	expect_nothing(s);
	*ssthresh = s->c.cc.ssthresh;
	return cwnd;
}

/*
 * RFC 5682 2.1 (F-RTO) without timestamps, where Eifel cannot tell: the
 * first ACK acknowledges only the retransmission, so two new segments go
 * (step 2b), not segments 1 and 2 again; the next ACK acknowledges
 * segments never retransmitted (step 3b): the originals were late, not
 * lost. The RTO is undone as an Eifel-detected one (RFC 4015): the window
 * back, SND.NXT at SND.MAX, nothing resent.
 */
static void test_frto_spurious_rto(void **state)
{
	struct script s;
	uint32_t mss, cwnd, ssthresh;

	(void)state;
	cwnd = five_then_rto(&s, NULL, &ssthresh);
	mss = s.c.snd_mss;
	advance(&s, 1 * MS);
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 65535, 0);
	assert_false(expect_tx(&s, ACK, ISS + 1 + 5 * mss, IRS + 1, mss)->retransmit);
	assert_false(expect_tx(&s, ACK, ISS + 1 + 6 * mss, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.frto.step, TCP_FRTO_PROBE_ACK);
	assert_int_equal(s.c.stats.spurious_rtos, 0);

	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, ISS + 1 + 3 * mss, 65535, 0);
	assert_int_equal(s.c.stats.spurious_rtos, 1);
	assert_int_equal(s.c.stats.frto_spurious, 1);
	assert_true(s.c.cc.cwnd >= cwnd);
	assert_int_equal(s.c.cc.ssthresh, UINT32_MAX);
	assert_true(ssthresh < UINT32_MAX);
	/* The last waiting segment goes; 3 and 4 are on their way. */
	assert_false(expect_tx(&s, ACK | PSH, ISS + 1 + 7 * mss, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + 8 * mss, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.snd.bytes, 0);
	assert_int_equal(s.c.stats.retransmits, 1);
	script_end(&s);
}

/* five_then_rto(), then the first ACK (of segment 0): F-RTO's two new segments went. */
static uint32_t frto_new_data_out(struct script *s, uint32_t *ssthresh)
{
	uint32_t mss;

	five_then_rto(s, NULL, ssthresh);
	mss = s->c.snd_mss;
	advance(s, 1 * MS);
	seg(s, ACK, IRS + 1, ISS + 1 + mss, 65535, 0);
	assert_int_equal(pending_tx(s), 2);
	drain_tx(s);
	return mss;
}

/*
 * RFC 5682 2.1 step 3a: a duplicate ACK answers the new data, so segment
 * 1 was lost: go-back-N after all, in slow start from cwnd 2 SMSS, the
 * reduction kept.
 */
static void test_frto_real_loss(void **state)
{
	struct script s;
	uint32_t mss, ssthresh;

	(void)state;
	mss = frto_new_data_out(&s, &ssthresh);
	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 65535, 0);
	assert_int_equal(s.c.frto.step, TCP_FRTO_OFF);
	assert_int_equal(s.c.stats.spurious_rtos, 0);
	assert_int_equal(s.c.cc.ssthresh, ssthresh);
	assert_int_equal(s.c.cc.cwnd, 2 * mss);
	assert_true(expect_tx(&s, ACK, ISS + 1 + mss, IRS + 1, mss)->retransmit);
	assert_true(expect_tx(&s, ACK, ISS + 1 + 2 * mss, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + 7 * mss, 65535, 0); /* 1..6 in (5 and 6 once) */
	assert_false(expect_tx(&s, ACK | PSH, ISS + 1 + 7 * mss, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + 8 * mss, 65535, 0);
	assert_int_equal(s.c.snd.bytes, 0);
	script_end(&s);
}

/*
 * RFC 5682 2.1 step 1: an RTO while the data sent before the first one is
 * still being recovered (SND.UNA below its recover) is not judged again:
 * the ACKs of go-back-N's own retransmissions, sent before it, would look
 * like late originals.
 */
static void test_frto_not_on_rto_in_recovery(void **state)
{
	struct script s;
	uint32_t mss, ssthresh;

	(void)state;
	mss = frto_new_data_out(&s, &ssthresh);
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 65535, 0); /* loss: go back */
	drain_tx(&s);					/* 1 and 2 again */
	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, ISS + 1 + 2 * mss, 65535, 0); /* 1 arrived, 2 is lost again */
	drain_tx(&s);
	advance(&s, s.c.rto_at - s.now);
	assert_int_equal(s.c.stats.timeouts, 2);
	assert_true(expect_tx(&s, ACK, ISS + 1 + 2 * mss, IRS + 1, mss)->retransmit);
	assert_int_equal(s.c.frto.step, TCP_FRTO_OFF);
	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, ISS + 1 + 3 * mss, 65535, 0);
	assert_int_equal(s.c.stats.spurious_rtos, 0);
	/* Go-back-N goes on from 3, not new data first. */
	assert_true(expect_tx(&s, ACK, ISS + 1 + 3 * mss, IRS + 1, mss)->retransmit);
	drain_tx(&s);
	script_end(&s);
}

/*
 * The window closes while F-RTO waits on its new data: the zero-window
 * probe's ACK moves SND.UNA by a byte, which must not pass for an
 * original's late ACK. The probe ends detection; go-back-N resumes.
 */
static void test_frto_ends_at_zero_window_probe(void **state)
{
	struct script s;
	uint32_t mss, ssthresh;

	(void)state;
	mss = frto_new_data_out(&s, &ssthresh);
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 0, 0);
	assert_int_equal(s.c.frto.step, TCP_FRTO_PROBE_ACK);
	advance(&s, s.c.persist_at - s.now);
	expect_tx(&s, ACK, ISS + 1 + mss, IRS + 1, 1);
	assert_int_equal(s.c.frto.step, TCP_FRTO_OFF);
	seg(&s, ACK, IRS + 1, ISS + 2 + mss, 65535, 0);
	assert_int_equal(s.c.stats.spurious_rtos, 0);
	assert_true(expect_tx(&s, ACK, ISS + 2 + mss, IRS + 1, mss)->retransmit);
	drain_tx(&s);
	script_end(&s);
}

/* tcp_config.frto off: the first ACK after the RTO resends segments 1 and 2 (go-back-N). */
static void test_frto_off(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t mss, ssthresh;

	(void)state;
	script_config(&cfg);
	cfg.frto = false;
	five_then_rto(&s, &cfg, &ssthresh);
	mss = s.c.snd_mss;
	assert_int_equal(s.c.frto.step, TCP_FRTO_OFF);
	advance(&s, 1 * MS);
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 65535, 0);
	assert_true(expect_tx(&s, ACK, ISS + 1 + mss, IRS + 1, mss)->retransmit);
	assert_true(expect_tx(&s, ACK, ISS + 1 + 2 * mss, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + 8 * mss, 65535, 0);
	drain_tx(&s);
	script_end(&s);
}

/* Five full segments sent; the peer acknowledged the first. */
static uint32_t five_in_flight(struct script *s)
{
	uint32_t mss;

	fixture_established(s, NULL);
	prime_window(s);
	mss = s->c.snd_mss;
	assert_int_equal(app_send(s, 5 * mss), 5 * mss);
	for (unsigned i = 0; i < 5; i++)
		take_tx(s);
	expect_nothing(s);
	advance(s, 100 * US);
	seg(s, ACK, IRS + 1, ISS + 1 + mss, 65535, 0);
	expect_nothing(s);
	return mss;
}

/*
 * RFC 5681 3.2: the first and second duplicate ACKs retransmit nothing;
 * the third retransmits the missing segment at once, ssthresh =
 * max(FlightSize/2, 2*SMSS), cwnd = ssthresh + 3*SMSS.
 */
static void test_fast_retransmit_third_dupack(void **state)
{
	struct script s;
	uint32_t mss;

	(void)state;
	mss = five_in_flight(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 65535, 0);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.dupacks, 2);
	assert_int_equal(s.c.stats.fast_retransmits, 0);
	seg(&s, ACK, IRS + 1, ISS + 1 + mss, 65535, 0);
	assert_true(expect_tx(&s, ACK, ISS + 1 + mss, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.fast_retransmits, 1);
	assert_true(s.c.cc.in_recovery);
	assert_int_equal(s.c.cc.ssthresh, 2 * mss);
	assert_int_equal(s.c.cc.cwnd, 5 * mss);
	assert_int_equal(s.c.stats.timeouts, 0);
	script_end(&s);
}

/*
 * RFC 5681 2: an ACK is a duplicate only while the sender has data
 * outstanding (condition (a)). With everything acknowledged, repeated
 * pure ACKs (a peer's window probes, keep-alive answers) count for
 * nothing: no fast retransmit, no reduction.
 */
static void test_no_dupacks_with_nothing_outstanding(void **state)
{
	struct script s;
	uint32_t cwnd, ssthresh;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, ISS + 1001, 65535, 0);
	cwnd = s.c.cc.cwnd;
	ssthresh = s.c.cc.ssthresh;
	for (unsigned i = 0; i < 4; i++)
		seg(&s, ACK, IRS + 1, ISS + 1001, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.dupacks, 0);
	assert_int_equal(s.c.cc.dupacks, 0);
	assert_false(s.c.cc.in_recovery);
	assert_int_equal(s.c.cc.cwnd, cwnd);
	assert_int_equal(s.c.cc.ssthresh, ssthresh);
	script_end(&s);
}

/*
 * RFC 5681 3.2 step 1 / RFC 3042 (limited transmit): on the first and
 * second duplicate ACKs a sender SHOULD send a segment of new data if the
 * peer's window allows and FlightSize stays within cwnd + 2*SMSS. Here
 * cwnd (10 segments) is full and two more segments wait.
 */
static void test_limited_transmit_on_first_two_dupacks(void **state)
{
	struct script s;
	uint32_t mss;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	mss = s.c.snd_mss;
	assert_int_equal(s.c.cc.cwnd, 10 * mss);
	assert_int_equal(app_send(&s, 12 * mss), 12 * mss);
	for (unsigned i = 0; i < 10; i++)
		take_tx(&s);
	expect_nothing(&s); /* cwnd-limited */
	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0); /* segment 1 lost, 2 arrived */
	assert_false(expect_tx(&s, ACK, ISS + 1 + 10 * mss, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	assert_false(expect_tx(&s, ACK | PSH, ISS + 1 + 11 * mss, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	assert_true(expect_tx(&s, ACK, ISS + 1, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 5681 4.1: after an idle period longer than the RTO, cwnd SHOULD be
 * no more than the restart window RW = min(IW, cwnd) before sending again.
 * cwnd grew to 20 segments; after 1 s idle a large write sends 10.
 */
static void test_cwnd_restart_after_idle(void **state)
{
	struct script s;
	uint32_t mss, next = ISS + 1;
	unsigned n = 0;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	mss = s.c.snd_mss;
	assert_int_equal(app_send(&s, 10 * mss), 10 * mss);
	for (unsigned i = 0; i < 5; i++) {
		advance(&s, 100 * US);
		next += 2 * mss;
		seg(&s, ACK, IRS + 1, next, 65535, 0);
	}
	drain_tx(&s);
	assert_int_equal(s.c.cc.cwnd, 20 * mss);
	assert_int_equal(s.c.snd_una, s.c.snd_max);
	advance(&s, 1000 * MS);
	assert_true(1000 * MS > tcp_rtt_timeout(&s.c.rtt));
	assert_int_equal(app_send(&s, 30 * mss), 30 * mss);
	while (pending_tx(&s)) {
		take_tx(&s);
		n++;
	}
	assert_int_equal(n, 10);
	script_end(&s);
}

/* The application writes two segments; 100 us later the peer acknowledges them (*@next). */
static void two_segments_acked(struct script *s, uint32_t *next)
{
	uint32_t mss = s->c.snd_mss;

	assert_int_equal(app_send(s, 2 * mss), 2 * mss);
	drain_tx(s);
	advance(s, 100 * US);
	*next += 2 * mss;
	seg(s, ACK, IRS + 1, *next, 65535, 0);
	drain_tx(s);
}

/*
 * RFC 9438 5.8 (and RFC 7661's aim, as Linux's tcp_is_cwnd_limited()): a
 * sender that does not fill its window has not tested it, so ACKs do not
 * grow cwnd. Two segments a round, 20 rounds, leave it where it was, in
 * slow start and in congestion avoidance alike (without the check: +40
 * and +3 segments). A write that fills cwnd grows it again at once.
 */
static uint32_t held_then_filled(struct script *s, uint32_t *next, bool in_ca)
{
	uint32_t mss, iw;

	fixture_established(s, NULL);
	prime_window(s);
	mss = s->c.snd_mss;
	iw = s->c.cc.cwnd;
	assert_true(s->c.cc.cwnd < s->c.cc.ssthresh); /* slow start */
	if (in_ca)
		s->c.cc.ssthresh = iw; /* congestion avoidance from the start */
	for (unsigned i = 0; i < 20; i++) {
		two_segments_acked(s, next);
	}
	assert_int_equal(s->c.cc.cwnd, iw);
	/* A write larger than cwnd: it fills it. */
	assert_int_equal(app_send(s, 30 * mss), 30 * mss);
	drain_tx(s);
	return iw;
}

static void test_cwnd_held_when_app_limited(void **state)
{
	struct script s;
	uint32_t iw, next = ISS + 1;

	(void)state;
	iw = held_then_filled(&s, &next, false);
	/* The first ACK grows it (L = 2 SMSS). */
	advance(&s, 100 * US);
	next += 2 * s.c.snd_mss;
	seg(&s, ACK, IRS + 1, next, 65535, 0);
	drain_tx(&s);
	assert_int_equal(s.c.cc.cwnd, iw + 2 * s.c.snd_mss);
	script_end(&s);
}

static void test_cwnd_held_when_app_limited_in_ca(void **state)
{
	struct script s;
	uint32_t iw, next = ISS + 1;

	(void)state;
	iw = held_then_filled(&s, &next, true);
	/* A whole window of ACKs: one SMSS more (RFC 5681 3.1, RFC 3465). */
	for (unsigned i = 0; i < iw / s.c.snd_mss; i++) {
		advance(&s, 10 * US);
		next += s.c.snd_mss;
		seg(&s, ACK, IRS + 1, next, 65535, 0);
		drain_tx(&s);
	}
	assert_int_equal(s.c.cc.cwnd, iw + s.c.snd_mss);
	script_end(&s);
}

/*
 * A sender whose cwnd is 40 segments (ssthresh @ssthresh_segs, 0: slow
 * start) sends two segments at a time, each pair acknowledged 100 us
 * later, until cwnd first comes down for going unused (RFC 2861 3, as
 * Linux): that takes one RTO. @return the cwnd before, in bytes.
 */
static uint32_t unused_for_an_rto(struct script *s, uint32_t *next, unsigned ssthresh_segs)
{
	uint64_t t0;
	uint32_t mss, before;

	fixture_established(s, NULL);
	prime_window(s);
	mss = s->c.snd_mss;
	s->c.cc.cwnd = before = 40 * mss;
	if (ssthresh_segs)
		s->c.cc.ssthresh = ssthresh_segs * mss;
	t0 = s->now;
	while (!s->c.stats.cwnd_unused_cuts) {
		assert_int_equal(s->c.cc.cwnd, before);
		assert_true(s->now - t0 <= 2 * tcp_rtt_timeout(&s->c.rtt));
		two_segments_acked(s, next);
	}
	/* Not before an RTO of it (the first send stamped the start). */
	assert_true(s->now - t0 >= tcp_rtt_timeout(&s->c.rtt));
	return before;
}

/*
 * RFC 2861 3: halfway down to the most in flight (here two segments, so
 * the initial window, 10 segments, is the floor); ssthresh at least 3/4 of
 * the old cwnd; each further RTO of the same halves the rest.
 */
static void test_unused_cwnd_decays(void **state)
{
	struct script s;
	uint32_t next = ISS + 1, mss, iw, before;

	(void)state;
	before = unused_for_an_rto(&s, &next, 20);
	mss = s.c.snd_mss;
	iw = tcp_cc_initial_window(mss, s.c.cfg.iw_segments);
	assert_int_equal(s.c.cc.cwnd, (before + iw) / 2);
	assert_int_equal(s.c.cc.ssthresh, before * 3 / 4); /* was 20 segments: raised */
	/* Each further RTO of the same halves the rest, down to the initial window. */
	for (int round = 0; round < 2; round++) {
		uint64_t cuts = s.c.stats.cwnd_unused_cuts, t0 = s.now;

		while (s.now - t0 < 20 * tcp_rtt_timeout(&s.c.rtt)) {
			two_segments_acked(&s, &next);
		}
		assert_int_equal(s.c.cc.cwnd, iw);
		if (round) /* there it stays: nothing more is counted */
			assert_int_equal(s.c.stats.cwnd_unused_cuts, cuts);
	}
	script_end(&s);
}

/* In slow start ssthresh stays "arbitrarily high" (max(ssthresh, 3/4 cwnd)). */
static void test_unused_cwnd_decays_in_slow_start(void **state)
{
	struct script s;
	uint32_t next = ISS + 1, before;

	(void)state;
	before = unused_for_an_rto(&s, &next, 0);
	assert_int_equal(s.c.cc.cwnd,
			 (before + tcp_cc_initial_window(s.c.snd_mss, s.c.cfg.iw_segments)) / 2);
	assert_int_equal(s.c.cc.ssthresh, UINT32_MAX);
	script_end(&s);
}

/*
 * A sender that keeps cwnd full for an RTO and more loses none of it; when
 * it then sends little, the RTO counts from the last time cwnd was full.
 */
static void test_used_cwnd_kept(void **state)
{
	struct script s;
	uint32_t next = ISS + 1, mss;
	uint64_t t0;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	mss = s.c.snd_mss;
	s.c.cc.cwnd = 8 * mss;
	s.c.cc.ssthresh = 8 * mss;
	assert_int_equal(app_send(&s, 60 * 1024), 60 * 1024);
	t0 = s.now;
	while (s.now - t0 < 3 * tcp_rtt_timeout(&s.c.rtt)) {
		drain_tx(&s);
		advance(&s, 100 * US);
		next += mss;
		seg(&s, ACK, IRS + 1, next, 65535, 0);
		assert_int_equal(app_send(&s, mss), mss); /* keep the buffer topped up */
	}
	drain_tx(&s);
	assert_int_equal(s.c.stats.cwnd_unused_cuts, 0);
	assert_true(s.c.cc.cwnd >= 8 * mss);
	/* Now two segments at a time: nothing comes down for an RTO. */
	next = s.c.snd_max;
	seg(&s, ACK, IRS + 1, next, 65535, 0);
	drain_tx(&s);
	t0 = s.now;
	while (!s.c.stats.cwnd_unused_cuts) {
		two_segments_acked(&s, &next);
	}
	assert_true(s.now - t0 >= tcp_rtt_timeout(&s.c.rtt));
	script_end(&s);
}

/*
 * RFC 6582 3.2 steps 5: segments 2 and 4 of 5 lost. After fast retransmit
 * of 2, the partial ACK (up to 4) retransmits 4 at once and deflates cwnd
 * (by the 2*SMSS acknowledged, plus SMSS back); the full ACK ends recovery
 * with cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
 */
static void test_newreno_partial_then_full_ack(void **state)
{
	struct script s;
	uint32_t mss;

	(void)state;
	mss = five_in_flight(&s);
	for (unsigned i = 0; i < 3; i++)
		seg(&s, ACK, IRS + 1, ISS + 1 + mss, 65535, 0);
	assert_true(expect_tx(&s, ACK, ISS + 1 + mss, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.cc.recover, ISS + 1 + 5 * mss);

	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, ISS + 1 + 3 * mss, 65535, 0); /* partial */
	assert_true(expect_tx(&s, ACK, ISS + 1 + 3 * mss, IRS + 1, mss)->retransmit);
	expect_nothing(&s);
	assert_true(s.c.cc.in_recovery);
	assert_int_equal(s.c.cc.cwnd, 4 * mss);

	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, ISS + 1 + 5 * mss, 65535, 0); /* full */
	expect_nothing(&s);
	assert_false(s.c.cc.in_recovery);
	assert_int_equal(s.c.cc.cwnd, 2 * mss);
	assert_int_equal(s.c.stats.fast_retransmits, 1);
	assert_int_equal(s.c.stats.retransmits, 2);
	assert_int_equal(s.c.stats.timeouts, 0);
	assert_int_equal(s.c.rto_at, 0);
	script_end(&s);
}

/*
 * RFC 9293 3.8.3 (R2) / RFC 1122 4.2.3.5: with data outstanding and no ACK
 * for user_timeout_ns the connection gives up: TCP_EV_TIMEOUT, ETIMEDOUT,
 * CLOSED, and the send buffer's references are released.
 */
static void test_peer_vanishes_user_timeout(void **state)
{
	struct script s;
	uint64_t t0, limit;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	assert_int_equal(app_send(&s, 3000), 3000);
	drain_tx(&s);
	t0 = s.now;
	limit = t0 + s.c.cfg.user_timeout_ns;
	while (s.now < limit - 1) {
		uint64_t d = tcp_next_deadline(&s.c);

		assert_true(d != UINT64_MAX);
		advance(&s, (d < limit - 1 ? d : limit - 1) - s.now);
		drain_tx(&s);
	}
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_int_equal(s.c.events & TCP_EV_TIMEOUT, 0);
	assert_true(s.c.stats.retransmits >= 8);
	advance(&s, s.c.cfg.rto_max_ns + 1);
	drain_tx(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_true(s.c.events & TCP_EV_TIMEOUT);
	assert_true(s.c.events & TCP_EV_CLOSED);
	assert_int_equal(s.c.error, -ETIMEDOUT);
	assert_int_equal(s.c.snd.bytes, 0);
	assert_int_equal(zbuf_in_use(), s.zbuf_base); /* released by the drop, not by fini */
	assert_int_equal(tcp_next_deadline(&s.c), UINT64_MAX);
	script_end(&s);
}

/* RFC 9293 3.10.4, RFC 6298 5: our FIN occupies a sequence number and is retransmitted on RTO. */
static void test_lost_fin_retransmitted(void **state)
{
	struct script s;

	(void)state;
	fixture_fin_wait_1(&s, NULL);
	advance(&s, 4 * MS - 1);
	expect_nothing(&s);
	advance(&s, 1);
	assert_true(expect_tx(&s, FIN | ACK, ISS + 1, IRS + 1, 0)->retransmit);
	expect_nothing(&s);
	advance(&s, 8 * MS);
	assert_true(expect_tx(&s, FIN | ACK, ISS + 1, IRS + 1, 0)->retransmit);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 2, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_FIN_WAIT_2);
	assert_int_equal(s.c.rto_at, 0);
	script_end(&s);
}

/* Same when the FIN rode on the last data segment: both are resent together. */
static void test_lost_data_and_fin_retransmitted(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	assert_int_equal(app_send(&s, 500), 500);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 500);
	app_close(&s);
	expect_tx(&s, FIN | ACK, ISS + 501, IRS + 1, 0);
	expect_nothing(&s);
	advance(&s, tcp_rtt_timeout(&s.c.rtt));
	assert_true(expect_tx(&s, ACK | PSH | FIN, ISS + 1, IRS + 1, 500)->retransmit);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 502, 65535, 0);
	assert_int_equal(s.c.state, TCP_FIN_WAIT_2);
	assert_int_equal(s.c.snd.bytes, 0);
	script_end(&s);
}

/* RFC 1122 4.2.3.6: keep-alives MUST default to off: an idle connection sends nothing, ever. */
static void test_keepalive_off_by_default(void **state)
{
	struct tcp_config def;
	struct script s;

	(void)state;
	tcp_config_default(&def);
	assert_false(def.keepalive);
	fixture_established(&s, NULL);
	assert_int_equal(s.c.keepalive_at, 0);
	advance(&s, 24ull * 3600 * SEC);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	script_end(&s);
}

/*
 * RFC 1122 4.2.3.6: with keep-alives on, after keepalive_idle_ns without a
 * segment from the peer a probe <SEQ=SND.NXT-1> without data goes out, then
 * one every keepalive_intvl_ns; an answer resets the count (and the idle
 * timer), so a full set of unanswered probes is needed again.
 */
static void test_keepalive_probe_and_answer(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;
	uint64_t idle, intvl;

	(void)state;
	script_config(&cfg);
	cfg.keepalive = true;
	cfg.keepalive_probes = 3;
	idle = cfg.keepalive_idle_ns;
	intvl = cfg.keepalive_intvl_ns;
	assert_true(idle >= 7200 * SEC); /* RFC 1122 4.2.3.6: no less than two hours */
	fixture_established(&s, &o);
	advance(&s, idle - 1);
	expect_nothing(&s);
	advance(&s, 1);
	expect_tx(&s, ACK, ISS, IRS + 1, 0);
	expect_nothing(&s);
	advance(&s, intvl);
	expect_tx(&s, ACK, ISS, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.keepalive_sent, 2);

	advance(&s, 1 * SEC);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0); /* the answer */
	expect_nothing(&s);
	assert_int_equal(s.c.keepalive_sent, 0);
	advance(&s, idle - 1);
	expect_nothing(&s);
	advance(&s, 1);
	expect_tx(&s, ACK, ISS, IRS + 1, 0);
	for (unsigned i = 1; i < 3; i++) {
		advance(&s, intvl);
		expect_tx(&s, ACK, ISS, IRS + 1, 0);
	}
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	advance(&s, intvl);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	script_end(&s);
}

/* RFC 1122 4.2.3.6: keepalive_probes unanswered probes: the peer is dead, TCP_EV_TIMEOUT. */
static void test_keepalive_unanswered_times_out(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;

	(void)state;
	script_config(&cfg);
	cfg.keepalive = true;
	cfg.keepalive_idle_ns = 60 * SEC;
	cfg.keepalive_intvl_ns = 10 * SEC;
	cfg.keepalive_probes = 4;
	fixture_established(&s, &o);
	advance(&s, 60 * SEC);
	expect_tx(&s, ACK, ISS, IRS + 1, 0);
	for (unsigned i = 1; i < 4; i++) {
		advance(&s, 10 * SEC - 1);
		expect_nothing(&s);
		advance(&s, 1);
		expect_tx(&s, ACK, ISS, IRS + 1, 0);
	}
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	advance(&s, 10 * SEC);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_true(s.c.events & TCP_EV_TIMEOUT);
	assert_int_equal(s.c.error, -ETIMEDOUT);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 first check, seen from the peer: after a timeout made
 * us resend from SND.UNA, an ACK we send must still be acceptable to the
 * peer, whose RCV.NXT may already be past everything we sent (SND.MAX).
 * Numbered SND.NXT (rolled back) it would be dropped there with its
 * acknowledgment, and two such ends answer each other's ACKs forever.
 */
static void test_ack_after_timeout_numbered_snd_max(void **state)
{
	struct script s;
	uint32_t mss;

	(void)state;
	fixture_established(&s, NULL);
	s.c.cfg.blackhole_rtos = 0; /* the timeouts below would take it for a black hole */
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	mss = s.c.snd_mss;
	assert_int_equal(app_send(&s, 3 * mss), 3 * mss);
	drain_tx(&s);
	advance(&s, s.c.cfg.rto_init_ns); /* the timer resends the first segment */
	expect_tx(&s, ACK, ISS + 1, IRS + 1, mss);
	drain_tx(&s);
	assert_int_equal(s.c.snd_nxt, ISS + 1 + mss);
	/* Data from the peer that still ACKs nothing new: our ACK carries SND.MAX. */
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 100);
	seg(&s, ACK, IRS + 101, ISS + 1, 65535, 100);
	expect_tx(&s, ACK, ISS + 1 + 3 * mss, IRS + 201, 0);
	drain_tx(&s);
	recv_all(&s);
	script_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ack_after_timeout_numbered_snd_max),
	    cmocka_unit_test(test_rto_from_rtt_samples),
	    cmocka_unit_test(test_rto_not_restarted_by_new_data),
	    cmocka_unit_test(test_timed_segment_not_replaced),
	    cmocka_unit_test(test_rto_floor),
	    cmocka_unit_test(test_rto_backoff_capped),
	    cmocka_unit_test(test_karn_no_sample_from_retransmission),
	    cmocka_unit_test(test_karn_no_sample_after_fast_retransmit),
	    cmocka_unit_test(test_rto_then_slow_start),
	    cmocka_unit_test(test_spurious_rto_undone_without_sack),
	    cmocka_unit_test(test_frto_spurious_rto),
	    cmocka_unit_test(test_frto_real_loss),
	    cmocka_unit_test(test_frto_off),
	    cmocka_unit_test(test_frto_not_on_rto_in_recovery),
	    cmocka_unit_test(test_frto_ends_at_zero_window_probe),
	    cmocka_unit_test(test_fast_retransmit_third_dupack),
	    cmocka_unit_test(test_no_dupacks_with_nothing_outstanding),
	    cmocka_unit_test(test_limited_transmit_on_first_two_dupacks),
	    cmocka_unit_test(test_newreno_partial_then_full_ack),
	    cmocka_unit_test(test_cwnd_restart_after_idle),
	    cmocka_unit_test(test_cwnd_held_when_app_limited),
	    cmocka_unit_test(test_cwnd_held_when_app_limited_in_ca),
	    cmocka_unit_test(test_unused_cwnd_decays),
	    cmocka_unit_test(test_unused_cwnd_decays_in_slow_start),
	    cmocka_unit_test(test_used_cwnd_kept),
	    cmocka_unit_test(test_peer_vanishes_user_timeout),
	    cmocka_unit_test(test_lost_fin_retransmitted),
	    cmocka_unit_test(test_lost_data_and_fin_retransmitted),
	    cmocka_unit_test(test_keepalive_off_by_default),
	    cmocka_unit_test(test_keepalive_probe_and_answer),
	    cmocka_unit_test(test_keepalive_unanswered_times_out),
	};

	return cmocka_run_group_tests(tests, script_group_setup, script_group_teardown);
}
