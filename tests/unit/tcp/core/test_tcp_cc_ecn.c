/*
 * test_tcp_cc_ecn.c - ECN (RFC 3168) and the congestion control algorithms
 * as a connection uses them: the ECN-setup handshake both ways, what is
 * marked ECT (new data only), the classic receiver's ECE until CWR, the
 * sender's one reduction per window and its CWR, DCTCP's receiver echoing
 * each CE state change at once (RFC 8257 3.2) and its sender cutting by
 * alpha / 2 (RFC 8257 3.3), and CUBIC chosen per connection (RFC 9438 4.6).
 *
 * Every connection here negotiates timestamps (SMSS 1448) and SACK; the
 * peer's window is large, so cwnd alone limits the sender.
 */
#include <math.h>

#include "tcp_script.h"

#define ECE  RTE_TCP_ECE_FLAG
#define CWR  RTE_TCP_CWR_FLAG
#define SMSS 1448u

static uint32_t S(unsigned i)
{
	return ISS + 1 + i * SMSS;
}

static void ecn_config(struct tcp_config *cfg, uint8_t ecn, enum tcp_cc_algo algo)
{
	script_config(cfg);
	cfg->ecn = ecn;
	cfg->cc = algo;
}

/*
 * Active open: our SYN must carry exactly SYN | @syn_extra; the peer
 * answers SYN-ACK | @synack_extra. Ends ESTABLISHED with the window primed.
 */
static void open_active(struct script *s, const struct tcp_config *cfg, uint8_t syn_extra,
			uint8_t synack_extra)
{
	struct tcp_options o = {.has_mss = true,
				.mss = 1460,
				.has_wscale = true,
				.wscale = 7,
				.sack_permitted = true,
				.has_ts = true};

	fixture_closed(s, cfg);
	s->peer_ts_on = true;
	assert_int_equal(tcp_connect(&s->c, s->now, &s->out), 0);
	o.ts_ecr = expect_tx(s, SYN | syn_extra, ISS, 0, 0)->opts.ts_val;
	advance(s, 100 * US);
	o.ts_val = s->peer_ts;
	seg_opts(s, SYN | ACK | synack_extra, IRS, ISS + 1, 65535, 0, &o);
	assert_int_equal(expect_tx(s, ACK, ISS + 1, IRS + 1, 0)->ecn, TCP_ECN_NOT_ECT);
	assert_int_equal(s->c.state, TCP_ESTABLISHED);
	prime_window(s);
	assert_int_equal(s->c.snd_mss, SMSS);
}

/*
 * Passive open: the peer's SYN | @syn_extra; our SYN-ACK must be exactly SYN | ACK | @synack_extra.
 */
static void open_passive(struct script *s, const struct tcp_config *cfg, uint8_t syn_extra,
			 uint8_t synack_extra)
{
	struct tcp_options o = {.has_mss = true,
				.mss = 1460,
				.has_wscale = true,
				.wscale = 7,
				.sack_permitted = true,
				.has_ts = true};

	fixture_closed(s, cfg);
	s->peer_ts_on = true;
	tcp_listen(&s->c);
	o.ts_val = s->peer_ts;
	seg_opts(s, SYN | syn_extra, IRS, 0, 65535, 0, &o);
	assert_int_equal(expect_tx(s, SYN | ACK | synack_extra, ISS, IRS + 1, 0)->ecn,
			 TCP_ECN_NOT_ECT);
	seg(s, ACK, IRS + 1, ISS + 1, 65535, 0);
	expect_nothing(s);
	assert_int_equal(s->c.state, TCP_ESTABLISHED);
}

/*
 * @n full segments out at once from S(@first), each new data: ECT(0) on an
 * ECN connection (RFC 3168 6.1.5), CWR only on the first if @cwr.
 */
static void send_segments(struct script *s, unsigned first, unsigned n, bool cwr)
{
	assert_int_equal(app_send(s, n * SMSS), (int)(n * SMSS));
	for (unsigned i = 0; i < n; i++) {
		uint8_t f = ACK | (i == n - 1 ? PSH : 0) | (cwr && i == 0 ? CWR : 0);

		assert_int_equal(expect_tx(s, f, S(first + i), IRS + 1, SMSS)->ecn,
				 s->c.ecn_ok ? TCP_ECN_ECT0 : TCP_ECN_NOT_ECT);
	}
	expect_nothing(s);
}

/* RFC 3168 6.1.1: with ECN on, the SYN asks (ECE, CWR) and a SYN-ACK with ECE alone agrees. */
static void test_active_setup(void **state)
{
	struct script s;
	struct tcp_config cfg;

	(void)state;
	ecn_config(&cfg, TCP_ECN_ON, TCP_CC_NEWRENO);
	open_active(&s, &cfg, ECE | CWR, ECE);
	assert_true(s.c.ecn_ok);
	send_segments(&s, 0, 2, false);
	script_end(&s);

	/* A SYN-ACK with ECE and CWR is not an ECN-setup SYN-ACK (6.1.1); none is a refusal. */
	open_active(&s, &cfg, ECE | CWR, ECE | CWR);
	assert_false(s.c.ecn_ok);
	script_end(&s);
	open_active(&s, &cfg, ECE | CWR, 0);
	assert_false(s.c.ecn_ok);
	assert_int_equal(app_send(&s, SMSS), (int)SMSS);
	assert_int_equal(expect_tx(&s, ACK | PSH, S(0), IRS + 1, SMSS)->ecn, TCP_ECN_NOT_ECT);
	script_end(&s);

	/* Not asked (the default, accept only): the SYN is plain and an ECE in the answer means
	 * nothing. */
	ecn_config(&cfg, TCP_ECN_ACCEPT, TCP_CC_NEWRENO);
	open_active(&s, &cfg, 0, ECE);
	assert_false(s.c.ecn_ok);
	script_end(&s);
}

/* RFC 3168 6.1.1 from the listener's side, for each setting of cfg.ecn. */
static void test_passive_setup(void **state)
{
	struct script s;
	struct tcp_config cfg;

	(void)state;
	ecn_config(&cfg, TCP_ECN_ACCEPT, TCP_CC_NEWRENO);
	open_passive(&s, &cfg, ECE | CWR, ECE);
	assert_true(s.c.ecn_ok);
	script_end(&s);
	/* ECE alone in a SYN is not ECN-setup. */
	open_passive(&s, &cfg, ECE, 0);
	assert_false(s.c.ecn_ok);
	script_end(&s);

	ecn_config(&cfg, TCP_ECN_OFF, TCP_CC_NEWRENO);
	open_passive(&s, &cfg, ECE | CWR, 0);
	assert_false(s.c.ecn_ok);
	script_end(&s);
	/* DCTCP needs ECN: it accepts whatever cfg.ecn says. */
	ecn_config(&cfg, TCP_ECN_OFF, TCP_CC_DCTCP);
	open_passive(&s, &cfg, ECE | CWR, ECE);
	assert_true(s.c.ecn_ok);
	script_end(&s);
}

/*
 * Active open whose SYN goes unanswered @rtx times: the first SYN is
 * ECN-setup, each resent one SYN | @resent_extra; then the peer agrees to
 * ECN (SYN-ACK with ECE). Ends ESTABLISHED with one data segment sent,
 * ECT(0) exactly if @ect, and a CE-marked segment of the peer's echoed.
 */
static void open_after_syn_timeouts(struct script *s, const struct tcp_config *cfg, unsigned rtx,
				    uint8_t resent_extra, bool ect)
{
	struct tcp_options o = {.has_mss = true,
				.mss = 1460,
				.has_wscale = true,
				.wscale = 7,
				.sack_permitted = true,
				.has_ts = true};

	fixture_closed(s, cfg);
	s->peer_ts_on = true;
	assert_int_equal(tcp_connect(&s->c, s->now, &s->out), 0);
	o.ts_ecr = expect_tx(s, SYN | ECE | CWR, ISS, 0, 0)->opts.ts_val;
	for (unsigned i = 0; i < rtx; i++) {
		advance_next(s);
		o.ts_ecr = expect_tx(s, SYN | resent_extra, ISS, 0, 0)->opts.ts_val;
		expect_nothing(s);
	}
	advance(s, 100 * US);
	o.ts_val = s->peer_ts;
	seg_opts(s, SYN | ACK | ECE, IRS, ISS + 1, 65535, 0, &o);
	expect_tx(s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(s->c.state, TCP_ESTABLISHED);
	assert_true(s->c.ecn_ok);
	prime_window(s);
	assert_int_equal(app_send(s, SMSS), (int)SMSS);
	assert_int_equal(expect_tx(s, ACK | PSH, S(0), IRS + 1, SMSS)->ecn,
			 ect ? TCP_ECN_ECT0 : TCP_ECN_NOT_ECT);
	s->peer_ecn = TCP_ECN_CE;
	seg(s, ACK, IRS + 1, S(1), 65535, 1000);
	expect_tx(s, ACK | ECE, S(1), IRS + 1001, 0);
}

/*
 * RFC 3168 6.1.1.1: a SYN that drew no answer goes again without ECN
 * setup, once counted. The SYN-ACK that still agrees answers the first
 * SYN (the peer may be Linux, which then sends ECT): we echo its marks,
 * but our data goes without ECT (6.1.1: not after sending a non-ECN-setup
 * SYN). DCTCP falls back the same way; cfg.ecn_fallback off, every SYN asks.
 */
static void test_syn_ecn_fallback(void **state)
{
	struct script s;
	struct tcp_config cfg;

	(void)state;
	ecn_config(&cfg, TCP_ECN_ON, TCP_CC_NEWRENO);
	open_after_syn_timeouts(&s, &cfg, 2, 0, false);
	assert_int_equal(s.c.stats.ecn_syn_fallbacks, 1);
	assert_int_equal(s.c.stats.timeouts, 2);
	script_end(&s);

	ecn_config(&cfg, TCP_ECN_OFF, TCP_CC_DCTCP);
	open_after_syn_timeouts(&s, &cfg, 1, 0, false);
	assert_int_equal(s.c.stats.ecn_syn_fallbacks, 1);
	script_end(&s);

	ecn_config(&cfg, TCP_ECN_ON, TCP_CC_NEWRENO);
	cfg.ecn_fallback = false;
	open_after_syn_timeouts(&s, &cfg, 2, ECE | CWR, true);
	assert_int_equal(s.c.stats.ecn_syn_fallbacks, 0);
	script_end(&s);

	/* No timeout, no fallback: ECT on new data. */
	ecn_config(&cfg, TCP_ECN_ON, TCP_CC_NEWRENO);
	open_after_syn_timeouts(&s, &cfg, 0, 0, true);
	assert_int_equal(s.c.stats.ecn_syn_fallbacks, 0);
	script_end(&s);

	/* Simultaneous open after the fallback: the peer's ECN-setup SYN is agreed to, no ECT. */
	ecn_config(&cfg, TCP_ECN_ON, TCP_CC_NEWRENO);
	fixture_closed(&s, &cfg);
	assert_int_equal(tcp_connect(&s.c, s.now, &s.out), 0);
	expect_tx(&s, SYN | ECE | CWR, ISS, 0, 0);
	advance_next(&s);
	expect_tx(&s, SYN, ISS, 0, 0);
	seg(&s, SYN | ECE | CWR, IRS, 0, 65535, 0);
	expect_tx(&s, SYN | ACK | ECE, ISS, IRS + 1, 0);
	assert_int_equal(s.c.state, TCP_SYN_RECEIVED);
	assert_true(s.c.ecn_ok && s.c.ecn_no_ect);
	script_end(&s);
}

/*
 * The other end of a fallback: our ECN-setup SYN-ACK answered the peer's
 * first SYN, and its resent SYN is plain (Linux's net.ipv4.tcp_ecn_fallback).
 * The peer may have taken either SYN-ACK: we still answer with ECE and
 * echo its marks, but send no ECT (RFC 3168 6.1.1: not after receiving a
 * non-ECN-setup SYN). A resent ECN-setup SYN changes nothing.
 */
static void test_peer_syn_ecn_fallback(void **state)
{
	struct script s;
	struct tcp_config cfg;

	(void)state;
	for (int plain = 0; plain < 2; plain++) {
		ecn_config(&cfg, TCP_ECN_ACCEPT, TCP_CC_NEWRENO);
		fixture_closed(&s, &cfg);
		tcp_listen(&s.c);
		seg(&s, SYN | ECE | CWR, IRS, 0, 65535, 0);
		expect_tx(&s, SYN | ACK | ECE, ISS, IRS + 1, 0);
		seg(&s, SYN | (plain ? 0 : ECE | CWR), IRS, 0, 65535, 0);
		expect_tx(&s, SYN | ACK | ECE, ISS, IRS + 1, 0);
		seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
		assert_int_equal(s.c.state, TCP_ESTABLISHED);
		assert_true(s.c.ecn_ok);
		assert_int_equal(s.c.ecn_no_ect, plain);
		assert_int_equal(app_send(&s, 100), 100);
		assert_int_equal(take_tx(&s)->ecn, plain ? TCP_ECN_NOT_ECT : TCP_ECN_ECT0);
		s.peer_ecn = TCP_ECN_CE;
		seg(&s, ACK, IRS + 1, ISS + 101, 65535, 1000);
		expect_tx(&s, ACK | ECE, ISS + 101, IRS + 1001, 0);
		script_end(&s);
	}
}

/*
 * An RPC's reply acknowledged whole by an ACK with ECE: the window halves
 * from cwnd; the flight the ACK leaves (nothing) would have cut it to the
 * 2-segment floor, and every later reply over 2 segments to two rounds.
 */
static void test_ece_on_full_ack_halves_cwnd(void **state)
{
	struct script s;
	struct tcp_config cfg;

	(void)state;
	ecn_config(&cfg, TCP_ECN_ON, TCP_CC_NEWRENO);
	open_active(&s, &cfg, ECE | CWR, ECE);
	send_segments(&s, 0, 3, false);
	advance(&s, 100 * US);
	seg(&s, ACK | ECE, IRS + 1, S(3), 65535, 0);
	assert_int_equal(s.c.stats.ecn_cuts, 1);
	assert_int_equal(s.c.cc.ssthresh, 10 * SMSS / 2);
	assert_int_equal(s.c.cc.cwnd, 10 * SMSS / 2);
	script_end(&s);
}

/*
 * RFC 3168 6.1.2: an ECE halves the window once ("halves the congestion
 * window cwnd", as Linux: cwnd / 2 for NewReno, not the FlightSize the
 * ACK leaves), the next new data says CWR, further ECEs in the same
 * window change nothing, and an ECE for data sent after the reduction
 * cuts again. 6.1.5: a retransmission is not ECN-capable.
 */
static void test_sender_reduces_once_per_window(void **state)
{
	struct script s;
	struct tcp_config cfg;

	(void)state;
	ecn_config(&cfg, TCP_ECN_ON, TCP_CC_NEWRENO);
	open_active(&s, &cfg, ECE | CWR, ECE);
	send_segments(&s, 0, 10, false);
	advance(&s, 100 * US);
	seg(&s, ACK | ECE, IRS + 1, S(1), 65535, 0);
	expect_nothing(&s); /* nine segments out, cwnd below them */
	assert_int_equal(s.c.cc.ssthresh, 10 * SMSS / 2);
	assert_int_equal(s.c.cc.cwnd, 10 * SMSS / 2);
	assert_int_equal(s.c.stats.ecn_ece, 1);
	assert_int_equal(s.c.stats.ecn_cuts, 1);

	seg(&s, ACK | ECE, IRS + 1, S(5), 65535, 0);
	assert_int_equal(s.c.stats.ecn_ece, 2);
	assert_int_equal(s.c.stats.ecn_cuts, 1);
	assert_int_equal(s.c.cc.ssthresh, 10 * SMSS / 2);
	seg(&s, ACK | ECE, IRS + 1, S(10), 65535, 0);
	assert_int_equal(s.c.stats.ecn_cuts, 1);

	/* The first new data after the reduction carries CWR, the next not. */
	send_segments(&s, 10, 1, true);
	send_segments(&s, 11, 1, false);
	seg(&s, ACK | ECE, IRS + 1, S(11), 65535, 0);
	assert_int_equal(s.c.stats.ecn_cuts, 2);
	assert_true(s.c.cc.cwr_owed);

	/* RTO: the segment goes again, not ECT (and the CWR waits for new data). */
	advance_next(&s);
	{
		const struct tcp_tx *t = expect_tx(&s, ACK | PSH, S(11), IRS + 1, SMSS);

		assert_true(t->retransmit);
		assert_int_equal(t->ecn, TCP_ECN_NOT_ECT);
	}
	script_end(&s);
}

/* An ACK of @ack with flags @flags and @n SACK blocks [b[2i], b[2i+1]). */
static void ack_sacks(struct script *s, uint8_t flags, uint32_t ack, unsigned n, const uint32_t *b)
{
	struct tcp_options o = {0};

	opts_sack(&o, n, b);
	seg_opts(s, flags, IRS + 1, ack, 65535, 0, &o);
}

/*
 * An ECN and RACK connection with ten segments out; segment 0 is ACKed,
 * 2..4 SACKed, so segment 1 is lost (RFC 8985 6.2): fast recovery, its
 * retransmission checked. @return ssthresh before the recovery.
 */
static uint32_t recovery_on_segment_1(struct script *s, struct tcp_config *cfg)
{
	const uint32_t sacked[2] = {S(2), S(5)};
	uint32_t ssthresh;

	ecn_config(cfg, TCP_ECN_ON, TCP_CC_NEWRENO);
	cfg->rack = true;
	open_active(s, cfg, ECE | CWR, ECE);
	send_segments(s, 0, 10, false);
	advance(s, 100 * US);
	seg(s, ACK, IRS + 1, S(1), 65535, 0);
	ssthresh = s->c.cc.ssthresh;
	ack_sacks(s, ACK, S(1), 1, sacked);
	assert_true(s->c.cc.in_recovery);
	assert_true(expect_tx(s, ACK, S(1), IRS + 1, SMSS)->retransmit);
	return ssthresh;
}

/*
 * RFC 3168 6.1.2: CWR follows any reduction, a loss's too (as Linux
 * queues it on recovery and timeout): without it a classic receiver that
 * saw CE in the same window echoes ECE until it sees CWR, and the next
 * window is cut again for congestion already answered.
 */
static void test_loss_reduction_sends_cwr(void **state)
{
	struct script s;
	struct tcp_config cfg;

	(void)state;
	recovery_on_segment_1(&s, &cfg);
	assert_true(s.c.cc.cwr_owed); /* the retransmission is not new data: it waits */
	seg(&s, ACK, IRS + 1, S(10), 65535, 0);
	assert_false(s.c.cc.in_recovery);
	drain_tx(&s);
	send_segments(&s, 10, 1, true);
	send_segments(&s, 11, 1, false);
	assert_false(s.c.cc.cwr_owed);
	script_end(&s);
}

/*
 * CE marks and a loss in one window: the echo cut the window, and the
 * loss RACK then finds in that same window enters recovery without a
 * second cut (RFC 3168 6.1.2: once per window for drops and CE together).
 */
static void test_loss_in_ecn_reduced_window_not_cut_again(void **state)
{
	struct script s;
	struct tcp_config cfg;
	const uint32_t sacked[2] = {S(2), S(5)};

	(void)state;
	ecn_config(&cfg, TCP_ECN_ON, TCP_CC_NEWRENO);
	cfg.rack = true;
	open_active(&s, &cfg, ECE | CWR, ECE);
	send_segments(&s, 0, 10, false);
	advance(&s, 100 * US);
	seg(&s, ACK | ECE, IRS + 1, S(1), 65535, 0);
	assert_int_equal(s.c.stats.ecn_cuts, 1);
	assert_int_equal(s.c.cc.ssthresh, 10 * SMSS / 2);
	ack_sacks(&s, ACK, S(1), 1, sacked);
	assert_true(s.c.cc.in_recovery);
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, SMSS)->retransmit);
	assert_int_equal(s.c.cc.ssthresh, 10 * SMSS / 2); /* not cut from the flight again */
	drain_tx(&s);
	script_end(&s);
}

/*
 * An ECN reduction made while the undo episode of a fast recovery is still
 * open stands: the recovery's late D-SACK (RFC 3708) proves the recovery
 * needless, not the congestion the ECE reported (RFC 3168 6.1.2).
 */
static void test_ecn_cut_survives_undo(void **state)
{
	struct script s;
	struct tcp_config cfg;
	const uint32_t more[2] = {S(2), S(10)}, late[2] = {S(1), S(2)};
	uint32_t ssthresh;

	(void)state;
	recovery_on_segment_1(&s, &cfg);
	/* More SACKs let new data out during the recovery; the full ACK ends it. */
	assert_int_equal(app_send(&s, 4 * SMSS), 4 * SMSS);
	ack_sacks(&s, ACK, S(1), 1, more);
	drain_tx(&s);
	assert_true(seq_gt(s.c.snd_max, S(11)));
	seg(&s, ACK, IRS + 1, S(10), 65535, 0);
	drain_tx(&s);
	assert_false(s.c.cc.in_recovery);
	assert_true(s.c.undo.on);
	/* Congestion on the new data: a reduction of its own, which ends the episode. */
	seg(&s, ACK | ECE, IRS + 1, S(11), 65535, 0);
	assert_int_equal(s.c.stats.ecn_cuts, 1);
	assert_false(s.c.undo.on);
	ssthresh = s.c.cc.ssthresh;
	/* Segment 1's retransmission was a duplicate after all. */
	ack_sacks(&s, ACK, S(11), 1, late);
	assert_int_equal(s.c.stats.dsacks, 1);
	assert_int_equal(s.c.stats.spurious_recoveries, 0);
	assert_int_equal(s.c.cc.ssthresh, ssthresh);
	drain_tx(&s);
	script_end(&s);
}

/*
 * The other way round: once a recovery is undone, its reduction no longer
 * covers the window (RFC 3168 6.1.2 "once per window" counted a reduction
 * that was taken back), so an ECE for that same window cuts.
 */
static void test_ecn_after_undo_cuts(void **state)
{
	struct script s;
	struct tcp_config cfg;
	const uint32_t dup[2] = {S(1), S(2)};
	uint32_t ssthresh;

	(void)state;
	ssthresh = recovery_on_segment_1(&s, &cfg);
	/* Segment 1 was only late: its copy comes back as a duplicate. */
	ack_sacks(&s, ACK, S(5), 1, dup);
	assert_int_equal(s.c.stats.spurious_recoveries, 1);
	assert_int_equal(s.c.cc.ssthresh, ssthresh);
	drain_tx(&s);
	seg(&s, ACK | ECE, IRS + 1, S(6), 65535, 0);
	assert_int_equal(s.c.stats.ecn_cuts, 1);
	assert_true(s.c.cc.ssthresh < ssthresh);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 3168 6.1.6: window probes are not ECN-capable, even when the byte they
 * carry is new data; once the window opens, new data is ECT(0) again.
 */
static void test_zero_window_probe_not_ect(void **state)
{
	struct script s;
	struct tcp_config cfg;

	(void)state;
	ecn_config(&cfg, TCP_ECN_ON, TCP_CC_NEWRENO);
	open_active(&s, &cfg, ECE | CWR, ECE);
	send_segments(&s, 0, 1, false);
	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, S(1), 0, 0); /* all acknowledged, the window shut */
	assert_int_equal(app_send(&s, SMSS), (int)SMSS);
	expect_nothing(&s);
	advance_next(&s); /* the persist timer */
	{
		const struct tcp_tx *t = expect_tx(&s, ACK, S(1), IRS + 1, 1);

		assert_int_equal(t->ecn, TCP_ECN_NOT_ECT);
		assert_false(t->flags & CWR);
	}
	assert_int_equal(s.c.stats.zero_window_probes, 1);
	expect_nothing(&s);
	/* The probe's byte taken, the window open: the rest is new data, ECT(0). */
	seg(&s, ACK, IRS + 1, S(1) + 1, 65535, 0);
	assert_int_equal(expect_tx(&s, ACK | PSH, S(1) + 1, IRS + 1, SMSS - 1)->ecn, TCP_ECN_ECT0);
	script_end(&s);
}

/* Without ECN negotiated, ECE on ACKs and CE marks are not signals (RFC 3168 6.1.1). */
static void test_not_negotiated_ignored(void **state)
{
	struct script s;
	struct tcp_config cfg;

	(void)state;
	ecn_config(&cfg, TCP_ECN_ACCEPT, TCP_CC_NEWRENO);
	open_active(&s, &cfg, 0, 0);
	assert_false(s.c.ecn_ok);
	send_segments(&s, 0, 10, false); /* not ECT */
	advance(&s, 100 * US);
	seg(&s, ACK | ECE, IRS + 1, S(1), 65535, 0);
	assert_int_equal(s.c.cc.cwnd, 11 * SMSS); /* slow start went on */
	assert_int_equal(s.c.stats.ecn_ece, 0);
	assert_int_equal(s.c.stats.ecn_cuts, 0);
	drain_tx(&s);
	s.peer_ecn = TCP_ECN_CE;
	seg(&s, ACK, IRS + 1, S(1), 65535, 1000);
	if (!pending_tx(&s))
		advance(&s, cfg.delack_ns);
	expect_tx(&s, ACK, S(10), IRS + 1001, 0); /* no ECE */
	assert_int_equal(s.c.stats.ecn_ce, 0);
	script_end(&s);
}

/*
 * RFC 3168 6.1.3: a CE-marked data segment is answered at once with ECE,
 * and every ACK carries ECE until a segment with CWR arrives.
 */
static void test_receiver_echoes_until_cwr(void **state)
{
	struct script s;
	struct tcp_config cfg;

	(void)state;
	ecn_config(&cfg, TCP_ECN_ON, TCP_CC_NEWRENO);
	open_active(&s, &cfg, ECE | CWR, ECE);
	s.peer_ecn = TCP_ECN_CE;
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	assert_int_equal(expect_tx(&s, ACK | ECE, ISS + 1, IRS + 1001, 0)->ecn, TCP_ECN_NOT_ECT);
	assert_int_equal(s.c.stats.ecn_ce, 1);

	s.peer_ecn = TCP_ECN_ECT0;
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	if (!pending_tx(&s))
		advance(&s, cfg.delack_ns);
	expect_tx(&s, ACK | ECE, ISS + 1, IRS + 2001, 0);

	seg(&s, ACK | CWR, IRS + 2001, ISS + 1, 65535, 1000);
	if (!pending_tx(&s))
		advance(&s, cfg.delack_ns);
	expect_tx(&s, ACK, ISS + 1, IRS + 3001, 0);
	assert_int_equal(s.c.stats.ecn_ce, 1);
	script_end(&s);
}

/*
 * RFC 8257 3.2: a DCTCP receiver's ECE says exactly which data was marked.
 * When the CE state changes, the data before the change is acknowledged
 * at once with the old state, and the segment that changed it at once
 * with the new one; while it holds, ACKs are delayed as usual.
 */
static void test_dctcp_receiver_state_changes(void **state)
{
	struct script s;
	struct tcp_config cfg;

	(void)state;
	ecn_config(&cfg, TCP_ECN_OFF, TCP_CC_DCTCP);
	open_active(&s, &cfg, ECE | CWR, ECE); /* DCTCP asks for ECN itself */
	s.peer_ecn = TCP_ECN_ECT0;
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	expect_nothing(&s); /* delayed */

	s.peer_ecn = TCP_ECN_CE;
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	expect_tx(&s, ACK, ISS + 1, IRS + 1001, 0);
	expect_tx(&s, ACK | ECE, ISS + 1, IRS + 2001, 0);
	expect_nothing(&s);

	seg(&s, ACK, IRS + 2001, ISS + 1, 65535, 1000);
	expect_nothing(&s); /* same state: delayed */
	advance(&s, cfg.delack_ns);
	expect_tx(&s, ACK | ECE, ISS + 1, IRS + 3001, 0);

	s.peer_ecn = TCP_ECN_ECT0;
	seg(&s, ACK, IRS + 3001, ISS + 1, 65535, 1000);
	expect_tx(&s, ACK, ISS + 1, IRS + 4001, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.ecn_ce, 2);
	script_end(&s);
}

/*
 * RFC 8257 3.3: the sender's alpha starts at 1 (the first echo halves
 * cwnd, not FlightSize), falls by 1/16 for each window without marks, and
 * an echo then cuts cwnd by only alpha / 2.
 */
static void test_dctcp_sender_cuts_by_alpha(void **state)
{
	struct script s;
	struct tcp_config cfg;
	uint32_t before;
	double alpha;
	unsigned next;

	(void)state;
	ecn_config(&cfg, TCP_ECN_OFF, TCP_CC_DCTCP);
	open_active(&s, &cfg, ECE | CWR, ECE);
	send_segments(&s, 0, 10, false);
	advance(&s, 100 * US);
	seg(&s, ACK | ECE, IRS + 1, S(1), 65535, 0);
	/* 10 * SMSS * (1 - 1/2), not grown by the ACK first */
	assert_int_equal(s.c.cc.cwnd, 5 * SMSS);
	assert_int_equal(s.c.cc.ssthresh, 5 * SMSS);
	seg(&s, ACK, IRS + 1, S(10), 65535, 0);
	drain_tx(&s);

	/* Twenty windows of one segment, none marked: alpha = (15/16)^20 * alpha. */
	next = 10;
	for (unsigned w = 0; w < 20; w++) {
		send_segments(&s, next, 1, w == 0);
		next++;
		advance(&s, 100 * US);
		seg(&s, ACK, IRS + 1, S(next), 65535, 0);
		drain_tx(&s);
	}
	alpha = (double)s.c.cc.algo.dctcp.alpha / (1 << 20);
	assert_true(alpha > 0.2 && alpha < 0.35);

	send_segments(&s, next, 4, false);
	advance(&s, 100 * US);
	before = s.c.cc.cwnd;
	seg(&s, ACK | ECE, IRS + 1, S(next + 1), 65535, 0);
	alpha = (double)s.c.cc.algo.dctcp.alpha / (1 << 20); /* this ACK's window ended too */
	/* cwnd * (1 - alpha / 2), alpha as this ACK's window left it. */
	assert_true(fabs(s.c.cc.cwnd - before * (1 - alpha / 2)) <= 1.0);
	assert_true(s.c.cc.cwnd > before * 3 / 4); /* not a halving */
	assert_int_equal(s.c.stats.ecn_cuts, 2);
	script_end(&s);
}

/* RFC 9438 4.6: CUBIC, chosen per connection, answers a loss with beta = 0.7, not 1/2. */
static void test_cubic_loss_response(void **state)
{
	struct script s;
	struct tcp_config cfg;

	(void)state;
	ecn_config(&cfg, TCP_ECN_ACCEPT, TCP_CC_CUBIC);
	open_active(&s, &cfg, 0, 0);
	assert_ptr_equal(s.c.cc.ops, &tcp_cc_cubic_ops);
	send_segments(&s, 0, 10, false);
	advance(&s, 100 * US);
	for (int i = 0; i < 3; i++)
		seg(&s, ACK, IRS + 1, S(0), 65535, 0);
	/* NewReno's recovery (rack off in the scripts), CUBIC's reduction: 0.7 * FlightSize. */
	assert_true(s.c.cc.in_recovery);
	assert_int_equal(s.c.cc.ssthresh, (uint32_t)(10 * SMSS * 0.7));
	assert_int_equal(s.c.cc.algo.cubic.w_max, 10.0);
	drain_tx(&s);
	script_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_active_setup),
	    cmocka_unit_test(test_passive_setup),
	    cmocka_unit_test(test_syn_ecn_fallback),
	    cmocka_unit_test(test_peer_syn_ecn_fallback),
	    cmocka_unit_test(test_sender_reduces_once_per_window),
	    cmocka_unit_test(test_ece_on_full_ack_halves_cwnd),
	    cmocka_unit_test(test_zero_window_probe_not_ect),
	    cmocka_unit_test(test_not_negotiated_ignored),
	    cmocka_unit_test(test_receiver_echoes_until_cwr),
	    cmocka_unit_test(test_dctcp_receiver_state_changes),
	    cmocka_unit_test(test_dctcp_sender_cuts_by_alpha),
	    cmocka_unit_test(test_cubic_loss_response),
	    cmocka_unit_test(test_loss_reduction_sends_cwr),
	    cmocka_unit_test(test_loss_in_ecn_reduced_window_not_cut_again),
	    cmocka_unit_test(test_ecn_cut_survives_undo),
	    cmocka_unit_test(test_ecn_after_undo_cuts),
	};

	return cmocka_run_group_tests(tests, script_group_setup, script_group_teardown);
}
