/*
 * test_tcp_rack.c - SACK loss recovery, one behaviour each: the RFC 6675
 * scoreboard and pipe, RACK's time-based loss detection (RFC 8985 6), its
 * reordering window and timer, lost retransmissions, tail loss probes
 * (RFC 8985 7), D-SACK (RFC 2883), the sending rate in recovery
 * (PRR, RFC 6937), hostile SACK blocks, and the RTO with a scoreboard
 * (RFC 8985 6.3, RFC 2018 8).
 *
 * Every test sends ten (or fewer) full segments at t0; S(i) is the first
 * sequence number of segment i. The RTT is 100 us throughout. The peer's ACKs carry timestamps and
 * the SACK blocks given.
 */
#include "tcp_script.h"
#include "tcp/tcp_internal.h"

/*
 * Every script's MSS: 1460 less the timestamp option (RF_NO_TS scripts
 * have the peer offer 1448). A constant, as tests build their SACK blocks
 * from S() before their fixture runs.
 */
static const uint32_t mss_ = 1448;

static uint32_t S(unsigned i)
{
	return ISS + 1 + i * mss_;
}

enum rack_flags {
	RF_TLP_NEW_DATA = 1, /* tcp_config.tlp_new_data */
	/*
	 * lunar's probes beyond RFC 8985's one tail loss probe: in recovery,
	 * and a second when the first draws no ACK (the defaults). Without
	 * this flag a script has the RFC's single probe, then the RTO.
	 */
	RF_MORE_PROBES = 2,
	RF_NO_TS = 4, /* no timestamps: F-RTO, not Eifel, judges an RTO */
};

/*
 * A SACK connection with RACK-TLP (the default; the other scripts turn it
 * off), an initial window of @iw segments (0: the default) and @flags.
 */
static void rack_fixture_cc(struct script *s, struct tcp_config *cfg, unsigned iw,
			    enum tcp_cc_algo cc, unsigned flags, uint64_t rtt_ns)
{
	struct fixture_opts o = fixture_opts_with(cfg);

	script_config(cfg);
	cfg->rack = true;
	cfg->cc = cc;
	cfg->tlp_new_data = flags & RF_TLP_NEW_DATA;
	if (!(flags & RF_MORE_PROBES)) {
		cfg->recovery_probe = false;
		cfg->probe_max = 1;
	}
	if (iw)
		cfg->iw_segments = iw;
	if (flags & RF_NO_TS) {
		o.ts = false;
		o.peer_mss = (uint16_t)mss_;
	}
	/* A handshake RTT of 100 us (or @rtt_ns), as the data's: SRTT starts where it stays. */
	fixture_established_ex(s, &o, ISS, IRS, rtt_ns ? rtt_ns : 100 * US, true);
	prime_window(s);
	assert_true(s->c.sb_on);
	assert_int_equal(s->c.snd_mss, mss_);
}

static void rack_fixture_iw(struct script *s, struct tcp_config *cfg, unsigned iw)
{
	rack_fixture_cc(s, cfg, iw, TCP_CC_NEWRENO, 0, 0);
}

static void rack_fixture(struct script *s, struct tcp_config *cfg)
{
	rack_fixture_iw(s, cfg, 0);
}

/* @n full segments out at once. */
static void send_segments(struct script *s, unsigned n)
{
	assert_int_equal(app_send(s, n * mss_), (int)(n * mss_));
	for (unsigned i = 0; i < n; i++)
		expect_tx(s, ACK | (i == n - 1 ? PSH : 0), S(i), IRS + 1, mss_);
	expect_nothing(s);
}

/*
 * An ACK of @ack with @n SACK blocks [blocks[2i], blocks[2i+1]), echoing
 * the TSval @ts_ecr.
 */
static void sack_ecr(struct script *s, uint32_t ack, unsigned n, const uint32_t *blocks,
		     uint32_t ts_ecr)
{
	struct tcp_options o = {.has_ts = true, .ts_val = s->peer_ts, .ts_ecr = ts_ecr};

	opts_sack(&o, n, blocks);
	seg_opts(s, ACK, IRS + 1, ack, 65535, 0, &o);
}

/* The same, echoing the last segment sent. */
static void sack(struct script *s, uint32_t ack, unsigned n, const uint32_t *blocks)
{
	sack_ecr(s, ack, n, blocks, s->out.n ? s->out.seg[s->out.n - 1].opts.ts_val : 0);
}

static void sack1(struct script *s, uint32_t ack, uint32_t l, uint32_t r)
{
	const uint32_t b[2] = {l, r};

	sack(s, ack, 1, b);
}

/* Ten segments out at t0; one RTT (100 us) later segment 0 is acknowledged. */
static void ten_out_first_acked(struct script *s, struct tcp_config *cfg)
{
	rack_fixture(s, cfg);
	send_segments(s, 10);
	advance(s, 100 * US);
	sack(s, S(1), 0, NULL);
}

/*
 * RFC 8985 6.2: once DupThresh (3) segments are SACKed and no reordering
 * was seen, the reordering window is zero, so the hole is lost as soon as
 * a segment sent after it is delivered one RTT later: fast recovery per
 * RFC 6675 5 step 4 (ssthresh = cwnd = FlightSize / 2, the first lost
 * segment at once), then nothing beyond the pipe; the full ACK ends it.
 */
static void test_three_sacks_start_recovery(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	ten_out_first_acked(&s, &cfg); /* segment 0 arrived, 1 is lost */
	sack1(&s, S(1), S(2), S(3));
	sack1(&s, S(1), S(2), S(4));
	expect_nothing(&s);
	assert_false(s.c.cc.in_recovery);
	sack1(&s, S(1), S(2), S(5));
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_true(s.c.cc.in_recovery);
	assert_int_equal(s.c.cc.ssthresh, 9 * mss_ / 2);
	/*
	 * RFC 6937: cwnd = pipe + sndcnt, the pipe (5 segments once the hole
	 * is lost) plus CEIL(delivered 1 * ssthresh 4.5 / RecoverFS 9) = half
	 * a segment; the retransmission went by the fast retransmit rule.
	 */
	assert_int_equal(s.c.cc.cwnd, 5 * mss_ + mss_ / 2);
	assert_int_equal(s.c.stats.recoveries, 1);
	assert_int_equal(s.c.stats.rack_lost, 1);
	assert_int_equal(s.c.stats.sack_blocks, 3);
	assert_int_equal(s.c.sb.sacked_segs, 3);
	/* pipe = 9 out - 3 SACKed = 6 segments (the retransmission replaces the lost one) */
	assert_int_equal(tcp_sb_pipe(&s.c.sb, s.c.snd_max - s.c.snd_una), 6 * mss_);

	/*
	 * The rest arrives: the pipe shrinks to the retransmission; cwnd is
	 * not inflated: PRR's slow-start bound stops it at ssthresh.
	 */
	sack1(&s, S(1), S(2), S(10));
	expect_nothing(&s);
	assert_int_equal(tcp_sb_pipe(&s.c.sb, s.c.snd_max - s.c.snd_una), mss_);
	assert_int_equal(s.c.cc.cwnd, 9 * mss_ / 2);
	advance(&s, 100 * US);
	sack(&s, S(10), 0, NULL);
	expect_nothing(&s);
	assert_false(s.c.cc.in_recovery);
	assert_int_equal(s.c.sb.count, 0);
	assert_int_equal(s.c.stats.timeouts, 0);
	assert_int_equal(s.c.stats.retransmits, 1);
	script_end(&s);
}

/*
 * RFC 6675 5 step 4.3 and (C): entering recovery, the first lost segment
 * goes at once whatever the pipe; the others only as cwnd - pipe leaves
 * room. Segments 1 to 3 are lost, 4 to 6 SACKed, 7 to 9 still out: PRR
 * (RFC 6937) sets cwnd = pipe (3) + 1.5 segments, so after the first
 * retransmission (pipe 4) the second waits for the next ACK.
 */
static void test_recovery_kick_sends_one(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	ten_out_first_acked(&s, &cfg);
	sack1(&s, S(1), S(4), S(7));
	assert_true(s.c.cc.in_recovery);
	assert_int_equal(s.c.stats.rack_lost, 3);
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.sb.lost, 2 * mss_); /* segments 2 and 3 wait */
	assert_int_equal(s.c.stats.retransmits, 1);
	assert_false(s.c.sb_kick);
	sack1(&s, S(1), S(4), S(8)); /* one more delivered: the next goes */
	assert_true(expect_tx(&s, ACK, S(2), IRS + 1, mss_)->retransmit);
	sack(&s, S(10), 0, NULL);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 8985 6.2 step 3: only a segment never retransmitted that is
 * delivered below RACK.fack is evidence of reordering. The retransmission
 * that fills the hole of a recovery is not: after it, the reordering
 * window stays zero.
 */
static void test_retransmission_below_fack_not_reordering(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	ten_out_first_acked(&s, &cfg);
	sack1(&s, S(1), S(2), S(10));
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	assert_true(s.c.cc.in_recovery);
	advance(&s, 100 * US);
	sack(&s, S(10), 0, NULL); /* the retransmission, below fack = S(10) */
	assert_false(s.c.cc.in_recovery);
	assert_false(s.c.rack.reordering_seen);
	assert_int_equal(tcp_rack_reo_wnd(&s.c.rack, false, 3, s.c.rtt.srtt_ns), 0);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 8985 6.2 step 2: of the segments an ACK delivers, RACK takes the
 * most recently sent. Two segments go at t0, two more at t0 + 50 us; one
 * ACK of all four at t0 + 150 us gives RACK.rtt = 100 us, of the later.
 */
static void test_rack_takes_most_recently_sent(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint64_t t1;

	(void)state;
	rack_fixture(&s, &cfg);
	send_segments(&s, 2);
	advance(&s, 50 * US);
	t1 = s.now;
	assert_int_equal(app_send(&s, 2 * mss_), (int)(2 * mss_));
	expect_tx(&s, ACK, S(2), IRS + 1, mss_);
	expect_tx(&s, ACK | PSH, S(3), IRS + 1, mss_);
	advance(&s, 100 * US);
	sack(&s, S(4), 0, NULL);
	assert_int_equal(s.c.rack.xmit_ns, t1);
	assert_int_equal(s.c.rack.end_seq, S(4));
	assert_int_equal(s.c.rack.rtt_ns, 100 * US);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 8985 6.2 step 5: every segment sent before RACK.xmit_ts is checked,
 * also behind a retransmission sent after it. Segment 1 is lost (the RACK
 * timer) and resent; then segment 5, sent before that retransmission, is
 * SACKed: segments 3 and 4, in the scoreboard after the retransmitted 1,
 * are lost too.
 */
static void test_rack_checks_past_retransmission(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t b[4] = {S(5), S(6), S(2), S(3)};

	(void)state;
	ten_out_first_acked(&s, &cfg);
	sack1(&s, S(1), S(2), S(3));
	expect_nothing(&s);
	advance(&s, s.c.rack_at - s.now);
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	assert_int_equal(s.c.stats.rack_lost, 1);
	advance(&s, 25 * US);
	sack(&s, S(1), 2, b);
	assert_int_equal(s.c.stats.rack_lost, 3);
	sack(&s, S(10), 0, NULL);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 6675 5 and RFC 6937: the full ACK ends the SACK recovery and PRR
 * with it: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS) (RFC 6582
 * 3.2 step 5), here 2 segments with nothing left in flight, and no later
 * ACK recomputes it as PRR's pipe + sndcnt.
 */
static void test_sack_recovery_exit_ends_prr(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	ten_out_first_acked(&s, &cfg);
	sack1(&s, S(1), S(2), S(5));
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	assert_true(s.c.cc.sack_recovery);
	advance(&s, 100 * US);
	sack(&s, S(10), 0, NULL);
	assert_false(s.c.cc.in_recovery);
	assert_int_equal(s.c.cc.cwnd, 2 * mss_);
	assert_false(s.c.cc.sack_recovery);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 6298 3 (Karn) in SACK recovery: segment 0, the timed one, is lost
 * and resent; the ACK that finally covers it, 300 us after the first
 * copy, gives no RTT sample: SRTT stays 100 us.
 */
static void test_karn_sack_retransmission_not_timed(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	rack_fixture(&s, &cfg);
	send_segments(&s, 10);
	assert_int_equal(s.c.rtt_seq, S(1));
	advance(&s, 100 * US);
	sack1(&s, S(0), S(1), S(4));
	assert_true(expect_tx(&s, ACK, S(0), IRS + 1, mss_)->retransmit);
	advance(&s, 200 * US);
	sack(&s, S(10), 0, NULL);
	assert_false(s.c.cc.in_recovery);
	assert_int_equal(s.c.rtt.srtt_ns, 100 * US);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 8985 6.2 step 6: with one segment SACKed, the hole is not yet lost:
 * the reordering window is min_RTT / 4 (25 us here) and the RACK timer
 * fires when it has passed, retransmitting without three duplicates.
 */
static void test_reordering_timer_detects_single_sack(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	ten_out_first_acked(&s, &cfg);
	sack1(&s, S(1), S(2), S(3));
	expect_nothing(&s);
	assert_int_equal(tcp_rack_min_rtt(&s.c.rack), 100 * US);
	assert_int_equal(s.c.rack_at, s.now + 25 * US);
	advance(&s, 24 * US);
	expect_nothing(&s);
	advance(&s, 1 * US);
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	assert_int_equal(s.c.stats.recoveries, 1);
	assert_int_equal(s.c.stats.rack_lost, 1);
	assert_int_equal(s.c.stats.dupacks, 1);
	sack(&s, S(10), 0, NULL);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 8985 2.2, 6.2: a retransmission that is lost again is detected like
 * any segment, when data sent after it is delivered, not by the RTO.
 */
static void test_lost_retransmission_detected(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t late[4] = {S(2), S(10), S(10), S(11)};

	(void)state;
	ten_out_first_acked(&s, &cfg);
	sack1(&s, S(1), S(2), S(5));
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	sack1(&s, S(1), S(2), S(10)); /* everything but the hole */
	expect_nothing(&s);
	/* With the pipe down to the retransmission, new data goes out with it. */
	assert_int_equal(app_send(&s, mss_), (int)mss_);
	expect_tx(&s, ACK | PSH, S(10), IRS + 1, mss_);
	expect_nothing(&s);
	advance(&s, 100 * US);
	sack(&s, S(1), 2, late); /* the new segment arrived, the retransmission did not */
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.rack_lost, 2);
	assert_int_equal(s.c.stats.recoveries, 1);
	assert_int_equal(s.c.stats.timeouts, 0);
	sack(&s, S(11), 0, NULL);
	assert_false(s.c.cc.in_recovery);
	drain_tx(&s);
	script_end(&s);
}

/*
 * Not reordering: segments 1 and 4 lost, and the ACK that SACKed 2..3
 * lost too, so the next ACK carries [5,7) first (most recent) and [2,4)
 * second. [2,4) reaches us with [5,7), not after it: nothing was
 * delivered out of order, and the reordering window must stay 0 in
 * recovery (RFC 8985 6.2 step 3 against RACK.fack before the ACK).
 */
static void test_sack_blocks_of_one_ack_not_reordering(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	ten_out_first_acked(&s, &cfg);
	sack(&s, S(1), 2, (const uint32_t[]){S(5), S(7), S(2), S(4)});
	assert_false(s.c.rack.reordering_seen);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 8985 6.2 step 3: a segment delivered below one delivered before,
 * never retransmitted, shows reordering; from then on three SACKed
 * segments no longer make the reordering window zero.
 */
static void test_reordering_seen_keeps_window(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	ten_out_first_acked(&s, &cfg);
	sack1(&s, S(1), S(2), S(3));
	sack(&s, S(3), 0, NULL); /* segment 1 came after all, late */
	assert_true(s.c.rack.reordering_seen);
	assert_int_equal(s.c.rack_at, 0);
	sack1(&s, S(3), S(4), S(7)); /* three SACKed: would be a loss without reordering */
	expect_nothing(&s);
	assert_int_equal(s.c.stats.recoveries, 0);
	assert_int_equal(s.c.rack_at, s.now + 25 * US);
	sack(&s, S(10), 0, NULL);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.retransmits, 0);
	script_end(&s);
}

/*
 * RFC 8985 7.2: with one segment in flight (FlightSize = 1 SMSS, a full
 * one) the PTO allows for the receiver's delayed ACK (here the RTO floor,
 * 4 ms), which puts it past the RTO: no probe, the RTO resends it. Two
 * segments in flight have the probe at 2 * SRTT + our delayed-ACK time.
 */
static void test_pto_lone_full_segment(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	rack_fixture(&s, &cfg);
	send_segments(&s, 1);
	assert_int_equal(s.c.tlp_at, 0);
	advance(&s, s.c.rto_at - s.now - 1);
	expect_nothing(&s);
	advance(&s, 1);
	assert_true(expect_tx(&s, ACK, S(0), IRS + 1, mss_)->retransmit);
	assert_int_equal(s.c.stats.timeouts, 1);
	assert_int_equal(s.c.stats.tlp_probes, 0);
	advance(&s, 100 * US);
	sack(&s, S(1), 0, NULL);
	expect_nothing(&s);
	assert_int_equal(app_send(&s, 2 * mss_), (int)(2 * mss_));
	expect_tx(&s, ACK, S(1), IRS + 1, mss_);
	expect_tx(&s, ACK | PSH, S(2), IRS + 1, mss_);
	assert_int_equal(s.c.tlp_at, s.now + 2 * s.c.rtt.srtt_ns + cfg.delack_ns);
	sack(&s, S(3), 0, NULL);
	script_end(&s);
}

/*
 * RFC 2883 4: a first block at or below the cumulative ACK, or inside the
 * second block, is a D-SACK: counted, not taken as new SACK information,
 * and (RFC 8985 6.2 step 4) it widens the reordering window once per
 * round trip.
 */
static void test_dsack_counted(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t inside[4] = {S(3), S(4), S(3), S(5)};

	(void)state;
	ten_out_first_acked(&s, &cfg);
	sack(&s, S(1), 2, inside);
	assert_int_equal(s.c.stats.dsacks, 1);
	assert_int_equal(s.c.stats.sack_blocks, 1);
	assert_int_equal(s.c.sb.sacked_segs, 2);
	assert_int_equal(s.c.rack.reo_wnd_mult, 2);
	sack1(&s, S(1), S(0), S(1)); /* below the ACK; same round: no second widening */
	assert_int_equal(s.c.stats.dsacks, 2);
	assert_int_equal(s.c.rack.reo_wnd_mult, 2);
	assert_int_equal(s.c.sb.sacked_segs, 2);
	sack(&s, S(10), 0, NULL);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 8985 6.2 step 4: a D-SACK widens the reordering window for
 * reo_wnd_persist (16) successful recoveries. A recovery counts once,
 * when it ends (the full ACK), not on the ACKs during it.
 */
static void test_reo_wnd_persist_counts_recoveries(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t inside[4] = {S(2), S(3), S(2), S(5)};

	(void)state;
	ten_out_first_acked(&s, &cfg);
	/* A D-SACK, and segments 2 to 4 SACKed: segment 1 lost */
	sack(&s, S(1), 2, inside);
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	assert_true(s.c.cc.in_recovery);
	assert_int_equal(s.c.rack.reo_wnd_mult, 2);
	assert_int_equal(s.c.rack.reo_wnd_persist, TCP_RACK_REO_PERSIST);
	advance(&s, 100 * US);
	sack1(&s, S(1), S(2), S(8)); /* more delivered, still in recovery */
	assert_true(s.c.cc.in_recovery);
	assert_int_equal(s.c.rack.reo_wnd_persist, TCP_RACK_REO_PERSIST);
	sack(&s, S(10), 0, NULL); /* the full ACK: one recovery done */
	assert_false(s.c.cc.in_recovery);
	assert_int_equal(s.c.rack.reo_wnd_persist, TCP_RACK_REO_PERSIST - 1);
	assert_int_equal(s.c.rack.reo_wnd_mult, 2);
	drain_tx(&s);
	script_end(&s);
}

/*
 * Bad input: blocks beyond SND.MAX, below SND.UNA (not first, so not a
 * D-SACK), reversed or empty are counted and change nothing.
 */
static void test_invalid_sack_blocks_ignored(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t bad[8] = {S(11), S(12), S(2), S(2), S(5), S(4), ISS - 5000, ISS};

	(void)state;
	ten_out_first_acked(&s, &cfg);
	sack(&s, S(1), 4, bad);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.sack_invalid, 4);
	assert_int_equal(s.c.stats.sack_blocks, 0);
	assert_int_equal(s.c.sb.sacked, 0);
	assert_int_equal(s.c.rack_at, 0);
	assert_false(s.c.cc.in_recovery);
	sack(&s, S(10), 0, NULL);
	script_end(&s);
}

/*
 * RFC 8985 7: the tail is lost and no ACK comes; a probe timeout of
 * 2*SRTT plus the ACK delay allowance later, the last segment goes again.
 * Its ACK with a D-SACK says the original had arrived (its ACK was lost):
 * no congestion response (7.4).
 */
static void test_tlp_spurious_probe_no_reduction(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t cwnd;

	(void)state;
	rack_fixture(&s, &cfg);
	send_segments(&s, 4);
	advance(&s, 100 * US);
	sack(&s, S(2), 0, NULL);
	assert_true(s.c.tlp_at > s.now && s.c.tlp_at < s.c.rto_at);
	assert_int_equal(s.c.tlp_at, s.now + 2 * s.c.rtt.srtt_ns + cfg.delack_ns);
	cwnd = s.c.cc.cwnd;
	advance(&s, s.c.tlp_at - s.now);
	assert_true(expect_tx(&s, ACK, S(3), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.tlp_probes, 1);
	assert_true(s.c.rack.tlp_out);
	assert_int_equal(s.c.tlp_at, 0);
	assert_int_equal(s.c.rto_at, s.now + tcp_rtt_timeout(&s.c.rtt));
	sack(&s, S(4), 0, NULL); /* the original's late ACK: no verdict yet */
	assert_true(s.c.rack.tlp_out);
	sack1(&s, S(4), S(3), S(4));
	assert_int_equal(s.c.stats.dsacks, 1);
	assert_false(s.c.rack.tlp_out);
	assert_int_equal(s.c.stats.tlp_recoveries, 0);
	assert_true(s.c.cc.cwnd >= cwnd);
	script_end(&s);
}

/*
 * RFC 8985 7.2: the probe timer restarts on an ACK that acknowledges new
 * data, not on every segment: the last segment lost, the one before it
 * SACKed, and the peer's segments keep repeating the same ACK and SACK
 * block at a quarter of a PTO apart. The probe still goes at its first
 * deadline (each one pushing it back left the tail to the RTO).
 */
static void test_tlp_not_pushed_back_by_repeats(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint64_t probe_at, step;

	(void)state;
	rack_fixture(&s, &cfg);
	send_segments(&s, 4);
	advance(&s, 100 * US);
	sack1(&s, S(2), S(2), S(3)); /* 0 and 1 acknowledged, 2 SACKed, 3 lost */
	probe_at = s.c.tlp_at;
	assert_true(probe_at > s.now);
	step = (probe_at - s.now) / 4;
	for (unsigned i = 0; i < 3; i++) {
		advance(&s, step);
		sack1(&s, S(2), S(2), S(3));
		expect_nothing(&s);
		assert_int_equal(s.c.tlp_at, probe_at);
	}
	advance(&s, probe_at - s.now);
	assert_true(expect_tx(&s, ACK, S(3), IRS + 1, mss_)->retransmit);
	assert_int_equal(s.c.stats.tlp_probes, 1);
	assert_int_equal(s.c.stats.timeouts, 0);
	script_end(&s);
}

/*
 * Four segments, the first two acknowledged, the tail probe (the last
 * one again) gone, and an ACK of exactly its end: it may be the
 * original's late ACK, its D-SACK to come, so the probe is still out.
 */
static void probe_to_its_end(struct script *s, struct tcp_config *cfg)
{
	rack_fixture(s, cfg);
	send_segments(s, 4);
	advance(s, 100 * US);
	sack(s, S(2), 0, NULL);
	advance(s, s->c.tlp_at - s->now);
	assert_true(expect_tx(s, ACK, S(3), IRS + 1, mss_)->retransmit);
	sack(s, S(4), 0, NULL);
	assert_true(s->c.rack.tlp_out);
}

/*
 * RFC 8985 7.4, as Linux: a probe that repaired the loss (no D-SACK and no
 * pure duplicate ACK by the time an ACK passes the probe's end) owes the
 * congestion response of a fast recovery.
 */
static void test_tlp_repairs_tail(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	probe_to_its_end(&s, &cfg);
	assert_int_equal(s.c.stats.tlp_recoveries, 0);
	/* Past the end with no D-SACK: the probe repaired a loss. */
	assert_int_equal(app_send(&s, mss_), (int)mss_);
	expect_tx(&s, ACK | PSH, S(4), IRS + 1, mss_);
	sack(&s, S(5), 0, NULL);
	assert_false(s.c.rack.tlp_out);
	assert_int_equal(s.c.stats.tlp_recoveries, 1);
	assert_int_equal(s.c.cc.ssthresh, 2 * mss_);
	assert_int_equal(s.c.cc.cwnd, 2 * mss_);
	assert_int_equal(s.c.stats.timeouts, 0);
	script_end(&s);
}

/*
 * The same response sized by the flight the loss happened in: six
 * segments sent after the probe, all acknowledged by the ACK that passes
 * its end. FlightSize / 2 of what was out (3 segments), not of what the
 * ACK leaves (nothing, which would give the 2-segment floor).
 */
static void test_tlp_repair_response_from_flight(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	probe_to_its_end(&s, &cfg);
	assert_int_equal(app_send(&s, 6 * mss_), (int)(6 * mss_));
	for (unsigned i = 0; i < 6; i++)
		expect_tx(&s, ACK | (i == 5 ? PSH : 0), S(4 + i), IRS + 1, mss_);
	sack(&s, S(10), 0, NULL);
	assert_int_equal(s.c.stats.tlp_recoveries, 1);
	assert_int_equal(s.c.cc.ssthresh, 3 * mss_);
	script_end(&s);
}

/*
 * RFC 8985 7.4: when the probe's ACK shows a hole below it, RACK starts a
 * fast recovery, which takes over the episode: the congestion response
 * happens once, not again when the probe's data is acknowledged.
 */
static void test_tlp_then_recovery_one_response(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t ssthresh;

	(void)state;
	rack_fixture(&s, &cfg);
	send_segments(&s, 4);
	advance(&s, 100 * US);
	sack(&s, S(2), 0, NULL); /* 2 and 3 lost */
	advance(&s, s.c.tlp_at - s.now);
	assert_true(expect_tx(&s, ACK, S(3), IRS + 1, mss_)->retransmit);
	advance(&s, 100 * US);
	sack1(&s, S(2), S(3), S(4)); /* the probe arrived: 2 is lost */
	assert_true(expect_tx(&s, ACK, S(2), IRS + 1, mss_)->retransmit);
	assert_true(s.c.cc.in_recovery);
	assert_false(s.c.rack.tlp_out);
	ssthresh = s.c.cc.ssthresh;
	advance(&s, 100 * US);
	sack(&s, S(4), 0, NULL);
	assert_false(s.c.cc.in_recovery);
	assert_int_equal(s.c.stats.tlp_recoveries, 0);
	assert_int_equal(s.c.cc.ssthresh, ssthresh);
	assert_int_equal(s.c.stats.recoveries, 1);
	script_end(&s);
}

/*
 * Four segments out beyond the ten of slow start, a fifth waiting behind
 * cwnd, then silence until the probe timer fires.
 */
static void tail_with_data_waiting(struct script *s, struct tcp_config *cfg, bool tlp_new_data)
{
	rack_fixture_cc(s, cfg, 0, TCP_CC_NEWRENO, tlp_new_data ? RF_TLP_NEW_DATA : 0, 0);
	send_segments(s, 10);
	advance(s, 100 * US);
	sack(s, S(2), 0, NULL); /* slow start: cwnd 12, 8 out: four more may go */
	assert_int_equal(app_send(s, 5 * mss_), (int)(5 * mss_));
	for (unsigned i = 10; i < 14; i++)
		expect_tx(s, ACK, S(i), IRS + 1, mss_);
	expect_nothing(s);
	advance(s, s->c.tlp_at - s->now);
}

/*
 * With tcp_config.tlp_new_data, a probe sends new data when there is some
 * and the peer's window takes it, even beyond cwnd (RFC 8985 7.3).
 */
static void test_tlp_sends_new_data(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	tail_with_data_waiting(&s, &cfg, true);
	assert_false(expect_tx(&s, ACK | PSH, S(14), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.tlp_probes, 1);
	assert_false(s.c.rack.tlp_retrans);
	sack(&s, S(15), 0, NULL);
	assert_int_equal(s.c.stats.tlp_recoveries, 0);
	script_end(&s);
}

/*
 * By default the probe is the last segment again, new data waiting or
 * not: a receiver delaying its ACK answers the duplicate at once with a
 * D-SACK (RFC 2883), which shows the tail arrived; no reduction follows
 * (RFC 8985 7.4) and the waiting data goes.
 */
static void test_tlp_retransmits_by_default(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t dup[2] = {S(13), S(14)};

	(void)state;
	tail_with_data_waiting(&s, &cfg, false);
	assert_true(expect_tx(&s, ACK, S(13), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.tlp_probes, 1);
	assert_true(s.c.rack.tlp_retrans);
	assert_int_equal(s.c.snd_max, S(14));
	sack(&s, S(14), 1, dup);
	assert_int_equal(s.c.stats.tlp_recoveries, 0);
	assert_int_equal(s.c.stats.dsacks, 1);
	assert_false(s.c.rack.tlp_out);
	expect_tx(&s, ACK | PSH, S(14), IRS + 1, mss_);
	expect_nothing(&s);
	sack(&s, S(15), 0, NULL);
	script_end(&s);
}

/*
 * lunar's recovery probe (tcp_config.recovery_probe, beyond RFC 8985 7.2):
 * in recovery the retransmission of the hole is lost, and so is the ACK of
 * the last segment; nothing sent after the retransmission can be
 * delivered for RACK to judge it by. No ACK for a PTO (2*SRTT + the
 * delayed-ACK timeout): the oldest segment not SACKed (the hole, not the
 * tail) goes again, and once more a PTO later (probe_max 2), then only the
 * RTO; an ACK that makes progress allows two more. Without the option
 * (RFC 8985) nothing goes before the RTO, 4 ms away.
 */
static void lost_retransmission_stall(struct script *s, struct tcp_config *cfg, unsigned flags)
{
	rack_fixture_cc(s, cfg, 0, TCP_CC_NEWRENO, flags, 0);
	send_segments(s, 10);
	advance(s, 100 * US);
	sack(s, S(1), 0, NULL);
	sack1(s, S(1), S(2), S(5));
	assert_true(expect_tx(s, ACK, S(1), IRS + 1, mss_)->retransmit);
	expect_nothing(s);
	sack1(s, S(1), S(2), S(9)); /* all but the hole and the tail; the retransmission is lost */
	expect_nothing(s);
	assert_true(s->c.cc.in_recovery);
}

static void test_recovery_probe_resends_lost_retransmission(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t prr_out;

	(void)state;
	lost_retransmission_stall(&s, &cfg, RF_MORE_PROBES);
	assert_int_equal(s.c.tlp_at, s.now + 2 * s.c.rtt.srtt_ns + cfg.delack_ns);
	assert_true(s.c.tlp_at < s.c.rto_at);
	prr_out = s.c.cc.prr_out;
	advance(&s, s.c.tlp_at - s.now);
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.recovery_probes, 1);
	assert_int_equal(s.c.cc.prr_out, prr_out + mss_); /* RFC 6937: sent in recovery */
	assert_int_equal(s.c.rto_at, s.now + tcp_rtt_timeout(&s.c.rtt));
	/* The tail's SACK comes through, the probe's answer does not: progress. */
	sack1(&s, S(1), S(2), S(10));
	expect_nothing(&s);
	assert_int_equal(s.c.tlp_at, s.now + 2 * s.c.rtt.srtt_ns + cfg.delack_ns);
	/* The probe is lost again: two more, then none before the RTO. */
	for (unsigned i = 0; i < 2; i++) {
		advance(&s, s.c.tlp_at - s.now);
		assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
		expect_nothing(&s);
	}
	assert_int_equal(s.c.stats.recovery_probes, 3);
	assert_int_equal(s.c.tlp_at, 0);
	assert_int_equal(s.c.stats.tlp_probes, 0);
	assert_int_equal(s.c.stats.timeouts, 0);
	/* It arrives: the hole is filled, recovery ends without an RTO. */
	sack(&s, S(10), 0, NULL);
	assert_false(s.c.cc.in_recovery);
	assert_int_equal(s.c.stats.timeouts, 0);
	assert_int_equal(s.c.stats.recoveries, 1);
	script_end(&s);
}

static void test_no_recovery_probe_by_rfc(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	lost_retransmission_stall(&s, &cfg, 0);
	assert_int_equal(s.c.tlp_at, 0);
	advance(&s, s.c.rto_at - s.now);
	assert_int_equal(s.c.stats.timeouts, 1);
	assert_int_equal(s.c.stats.recovery_probes, 0);
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	drain_tx(&s);
	script_end(&s);
}

/*
 * A duplicate of the last ACK (SND.UNA and the SACKed bytes where they
 * were) is no progress: the probes it finds out still count, so after
 * probe_max of them the RTO comes, not a third probe.
 */
static void test_recovery_probes_end_without_progress(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	lost_retransmission_stall(&s, &cfg, RF_MORE_PROBES);
	for (unsigned i = 0; i < 2; i++) {
		assert_true(s.c.tlp_at != 0);
		advance(&s, s.c.tlp_at - s.now);
		assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
		expect_nothing(&s);
		sack1(&s, S(1), S(2), S(9)); /* the same ACK again */
		expect_nothing(&s);
	}
	assert_int_equal(s.c.stats.recovery_probes, 2);
	assert_int_equal(s.c.tlp_at, 0);
	assert_int_equal(s.c.stats.timeouts, 0);
	advance(&s, s.c.rto_at - s.now);
	assert_int_equal(s.c.stats.timeouts, 1);
	assert_int_equal(s.c.stats.recovery_probes, 2);
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	drain_tx(&s);
	script_end(&s);
}

/*
 * An ACK of new data that also reopens a zero window, taken by the fast
 * path: the probe is armed under the window it brings, as the slow path
 * arms it after its window update.
 */
static void test_probe_armed_when_ack_reopens_window(void **state)
{
	struct tcp_options o = {.has_ts = true};
	struct tcp_config cfg;
	struct script s;
	uint64_t fast;

	(void)state;
	rack_fixture_cc(&s, &cfg, 0, TCP_CC_NEWRENO, RF_MORE_PROBES, 0);
	send_segments(&s, 4);
	advance(&s, 100 * US);
	o.ts_val = s.peer_ts;
	o.ts_ecr = s.c.ts_recent;		    /* any echo: no RTT sample is checked here */
	seg_opts(&s, ACK, IRS + 1, S(1), 0, 0, &o); /* the window shuts */
	expect_nothing(&s);
	assert_int_equal(s.c.snd_wnd, 0);
	assert_int_equal(s.c.tlp_at, 0);
	advance(&s, 10 * US);
	fast = s.c.stats.fastpath_ack;
	sack(&s, S(2), 0, NULL); /* new data acknowledged, the window open again */
	assert_int_equal(s.c.stats.fastpath_ack, fast + 1);
	assert_true(s.c.snd_wnd > 0);
	assert_int_equal(s.c.tlp_at, s.now + 2 * s.c.rtt.srtt_ns + cfg.delack_ns);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 8985 7.2: no probe in RTO recovery. The RTO resent the one segment
 * there is, which leaves nothing marked lost: still the next transmission
 * is the backed-off RTO's, not a probe's.
 */
static void test_no_probe_after_rto(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint64_t rto;

	(void)state;
	rack_fixture_cc(&s, &cfg, 0, TCP_CC_NEWRENO, RF_MORE_PROBES, 0);
	send_segments(&s, 1);
	while (s.c.tlp_at && s.c.tlp_at < s.c.rto_at) {
		advance(&s, s.c.tlp_at - s.now);
		assert_true(expect_tx(&s, ACK, S(0), IRS + 1, mss_)->retransmit);
	}
	advance(&s, s.c.rto_at - s.now);
	assert_int_equal(s.c.stats.timeouts, 1);
	assert_true(expect_tx(&s, ACK, S(0), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.sb.lost, 0);
	assert_int_equal(s.c.tlp_at, 0);
	rto = tcp_rtt_timeout(&s.c.rtt);
	assert_int_equal(s.c.rto_at, s.now + rto);
	advance(&s, rto - 1);
	expect_nothing(&s);
	advance(&s, 1);
	assert_int_equal(s.c.stats.timeouts, 2);
	assert_true(expect_tx(&s, ACK, S(0), IRS + 1, mss_)->retransmit);
	drain_tx(&s);
	script_end(&s);
}

/*
 * A zero window in recovery: the receiver takes no data, the hole's
 * retransmission included (RFC 9293 3.10.7.4), so no probe goes and the
 * persist timer, not the RTO, keeps the connection (3.8.6.1). The window's
 * reopening brings the probe back.
 */
static void test_no_recovery_probe_into_zero_window(void **state)
{
	const uint32_t b[2] = {S(2), S(9)};
	struct tcp_options o = {.has_ts = true};
	struct tcp_config cfg;
	struct script s;

	(void)state;
	lost_retransmission_stall(&s, &cfg, RF_MORE_PROBES);
	assert_true(s.c.tlp_at != 0);
	o.ts_val = s.peer_ts;
	opts_sack(&o, 1, b);
	seg_opts(&s, ACK, IRS + 1, S(1), 0, 0, &o); /* the window shuts */
	expect_nothing(&s);
	assert_int_equal(s.c.snd_wnd, 0);
	assert_int_equal(s.c.tlp_at, 0);
	assert_int_equal(s.c.rto_at, 0);
	assert_true(s.c.persist_at != 0);
	advance(&s, s.c.persist_at - s.now);
	expect_tx(&s, ACK, S(1), IRS + 1, 1); /* the persist timer's byte */
	expect_nothing(&s);
	assert_int_equal(s.c.stats.recovery_probes, 0);
	assert_int_equal(s.c.stats.timeouts, 0);
	sack1(&s, S(1), S(2), S(9)); /* open again */
	assert_int_equal(s.c.tlp_at, s.now + 2 * s.c.rtt.srtt_ns + cfg.delack_ns);
	advance(&s, s.c.tlp_at - s.now);
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	assert_int_equal(s.c.stats.recovery_probes, 1);
	drain_tx(&s);
	script_end(&s);
}

/*
 * tcp_config.probe_max (2 by default; RFC 8985 7.3 sends one): a tail loss
 * probe that draws no ACK for a PTO is sent again before the RTO, once.
 * With two copies out, one duplicate proves nothing (it may be the second
 * copy of a first that repaired the loss, its ACK lost): a D-SACK for
 * each copy says no loss; one D-SACK and then an ACK beyond the probe
 * says a repair, and the congestion response is owed (RFC 8985 7.4).
 */
static void two_tail_probes(struct script *s, struct tcp_config *cfg)
{
	uint64_t pto;

	rack_fixture_cc(s, cfg, 0, TCP_CC_NEWRENO, RF_MORE_PROBES, 0);
	send_segments(s, 4);
	advance(s, 100 * US);
	sack(s, S(2), 0, NULL);
	pto = s->c.tlp_at - s->now;
	advance(s, pto);
	assert_true(expect_tx(s, ACK, S(3), IRS + 1, mss_)->retransmit);
	expect_nothing(s);
	assert_int_equal(s->c.stats.tlp_probes, 1);
	assert_int_equal(s->c.tlp_at, s->now + pto);
	advance(s, pto);
	assert_true(expect_tx(s, ACK, S(3), IRS + 1, mss_)->retransmit);
	expect_nothing(s);
	assert_int_equal(s->c.stats.tlp_probes, 2);
	assert_int_equal(s->c.tlp_at, 0);
	assert_int_equal(s->c.rto_at, s->now + tcp_rtt_timeout(&s->c.rtt));
	assert_true(s->c.rack.tlp_out);
	sack1(s, S(4), S(3), S(4)); /* one duplicate: no verdict yet */
	assert_true(s->c.rack.tlp_out);
}

static void test_second_tail_probe_no_loss(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	two_tail_probes(&s, &cfg);
	sack1(&s, S(4), S(3), S(4)); /* the other: all three copies arrived */
	assert_false(s.c.rack.tlp_out);
	assert_int_equal(s.c.stats.tlp_recoveries, 0);
	assert_int_equal(s.c.stats.timeouts, 0);
	script_end(&s);
}

static void test_second_tail_probe_repair(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	two_tail_probes(&s, &cfg);
	/* New data, and its ACK with no second D-SACK: the original was lost. */
	assert_int_equal(app_send(&s, mss_), (int)mss_);
	expect_tx(&s, ACK | PSH, S(4), IRS + 1, mss_);
	sack(&s, S(5), 0, NULL);
	assert_false(s.c.rack.tlp_out);
	assert_int_equal(s.c.stats.tlp_recoveries, 1);
	assert_int_equal(s.c.cc.cwnd, 2 * mss_);
	assert_int_equal(s.c.stats.timeouts, 0);
	script_end(&s);
}

/*
 * New data sent after a tail loss probe is itself a probe: no second copy
 * of the first goes when the PTO passes.
 */
static void test_no_second_probe_after_new_data(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	rack_fixture_cc(&s, &cfg, 0, TCP_CC_NEWRENO, RF_MORE_PROBES, 0);
	send_segments(&s, 4);
	advance(&s, 100 * US);
	sack(&s, S(2), 0, NULL);
	advance(&s, s.c.tlp_at - s.now);
	assert_true(expect_tx(&s, ACK, S(3), IRS + 1, mss_)->retransmit);
	assert_int_equal(app_send(&s, mss_), (int)mss_);
	expect_tx(&s, ACK | PSH, S(4), IRS + 1, mss_);
	assert_true(s.c.tlp_at != 0);
	advance(&s, s.c.tlp_at - s.now);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.tlp_probes, 1);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 8985 6.3: after an RTO everything not SACKed is lost and goes again,
 * from cwnd = 1 SMSS; a SACKed segment does not. A second RTO with no ACK
 * in between forgets the SACKs (RFC 2018 8: the receiver may renege).
 */
static void test_rto_keeps_then_forgets_sacks(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	rack_fixture(&s, &cfg);
	send_segments(&s, 5);
	advance(&s, 100 * US);
	sack(&s, S(0), 0, NULL);     /* an RTT sample from nothing: a dupack */
	sack1(&s, S(0), S(4), S(5)); /* the last arrived */
	expect_nothing(&s);
	assert_int_equal(s.c.sb.sacked_segs, 1);
	/* The RACK timer marks 0-3 lost; recovery resends within the pipe. */
	advance(&s, s.c.rack_at - s.now);
	assert_true(s.c.cc.in_recovery);
	drain_tx(&s);
	/* Nothing more arrives: the RTO. */
	advance(&s, s.c.rto_at - s.now);
	assert_int_equal(s.c.stats.timeouts, 1);
	assert_int_equal(s.c.cc.cwnd, mss_);
	assert_true(expect_tx(&s, ACK, S(0), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.sb.sacked_segs, 1);
	assert_int_equal(s.c.sb.lost, 3 * mss_);
	advance(&s, s.c.rto_at - s.now);
	assert_int_equal(s.c.stats.timeouts, 2);
	assert_true(expect_tx(&s, ACK, S(0), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.sb.sacked_segs, 0);
	assert_int_equal(s.c.sb.lost, 4 * mss_);
	/* The ACKs come back: slow start resends 1..4, the formerly SACKed one too. */
	advance(&s, 100 * US);
	sack(&s, S(1), 0, NULL);
	expect_tx(&s, ACK, S(1), IRS + 1, mss_);
	expect_tx(&s, ACK, S(2), IRS + 1, mss_);
	expect_nothing(&s);
	sack(&s, S(3), 0, NULL);
	expect_tx(&s, ACK, S(3), IRS + 1, mss_);
	expect_tx(&s, ACK, S(4), IRS + 1, mss_);
	sack(&s, S(5), 0, NULL);
	assert_int_equal(s.c.snd_una, S(5));
	assert_int_equal(s.c.sb.count, 0);
	script_end(&s);
}

/*
 * RFC 8985 6.2 step 4: the reordering window is 0 "in fast or timeout
 * recovery" while no reordering was seen. After an RTO the resent 2 and 3
 * leave together; 3's SACK says 2's retransmission was lost, at once, not
 * a quarter of min_RTT later when the reordering timer would fire (the
 * recovery is the RTO's: in_recovery is false, SND.UNA below "recover").
 */
static void test_timeout_recovery_no_reordering_window(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t three[2] = {S(3), S(4)};
	const struct tcp_tx *t;
	uint32_t ts;

	(void)state;
	rack_fixture(&s, &cfg);
	send_segments(&s, 5);
	advance(&s, 100 * US);
	sack(&s, S(1), 0, NULL); /* RACK's min_RTT: 100 us */
	advance(&s, s.c.tlp_at - s.now);
	assert_true(expect_tx(&s, ACK, S(4), IRS + 1, mss_)->retransmit);
	advance(&s, s.c.rto_at - s.now);
	assert_int_equal(s.c.stats.timeouts, 1);
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	advance(&s, 100 * US);
	sack(&s, S(2), 0, NULL); /* no echo of the original: no undo */
	assert_true(expect_tx(&s, ACK, S(2), IRS + 1, mss_)->retransmit);
	t = expect_tx(&s, ACK, S(3), IRS + 1, mss_);
	assert_true(t->retransmit);
	ts = t->opts.ts_val;
	expect_nothing(&s);
	assert_false(s.c.cc.in_recovery);
	assert_int_equal(s.c.stats.rack_lost, 0);
	advance(&s, 100 * US);
	sack_ecr(&s, S(2), 1, three, ts); /* 3's echo: its delivery, not the original's */
	assert_false(s.c.rack.reordering_seen);
	assert_int_equal(s.c.stats.rack_lost, 1);
	assert_true(expect_tx(&s, ACK, S(2), IRS + 1, mss_)->retransmit);
	drain_tx(&s);
	sack(&s, S(5), 0, NULL);
	assert_int_equal(s.c.stats.timeouts, 1);
	drain_tx(&s);
	script_end(&s);
}

/*
 * A receiver that reneged (RFC 2018 8) and D-SACKs what the RTO sent
 * instead: segments 1 and 2 were SACKed, then the ACK stops at 1 with no
 * SACK (the receiver dropped them under memory pressure, as lunar's does).
 * The probe and the first RTO resend the only segment not SACKed, 3, which
 * the receiver had: its D-SACKs prove that RTO spurious and undo it (and
 * SACK 3). The second RTO still comes with no new data ACKed since the
 * first, so it must forget the SACKs and resend 1. Were the undo to make
 * it a first RTO again, it would keep the SACKs and send nothing; with
 * many segments received but never SACKed, each RTO would resend one of
 * them and be undone, and the connection would stall until its user
 * timeout (tcp_conns_pressure under ASan, twelfth session).
 */
static void test_rto_after_undo_still_forgets_sacks(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t sacked[2] = {S(1), S(3)}, dup[4] = {S(3), S(4), S(3), S(4)};

	(void)state;
	rack_fixture(&s, &cfg);
	send_segments(&s, 4);
	advance(&s, 100 * US);
	sack(&s, S(0), 1, sacked);
	sack(&s, S(1), 0, NULL); /* 0 arrived; 1 and 2 were dropped after all */
	expect_nothing(&s);
	assert_false(s.c.cc.in_recovery);
	/* The tail loss probe resends 3 and draws no answer; then the RTO resends it too. */
	advance(&s, s.c.tlp_at - s.now);
	assert_true(expect_tx(&s, ACK, S(3), IRS + 1, mss_)->retransmit);
	advance(&s, s.c.rto_at - s.now);
	assert_int_equal(s.c.stats.timeouts, 1);
	assert_true(expect_tx(&s, ACK, S(3), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	/* Both copies come back as duplicates. */
	sack(&s, S(1), 2, dup);
	sack(&s, S(1), 2, dup);
	assert_int_equal(s.c.stats.spurious_rtos, 1);
	advance(&s, s.c.rto_at - s.now);
	assert_int_equal(s.c.stats.timeouts, 2);
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.sb.sacked_segs, 0);
	drain_tx(&s);
	script_end(&s);
}

/*
 * Ten segments out at t0, then silence: the tail loss probe (segment 9
 * again) and the RTO (segment 0 again, cwnd 1 SMSS). The RTT is 1 ms here,
 * so the probe (2 RTTs on) carries a later TSval (a 1 ms clock) than the
 * originals. Returns the TSval the originals carried; *cwnd and *ssthresh
 * are the window before.
 */
static uint32_t ten_out_then_rto(struct script *s, struct tcp_config *cfg, uint32_t *cwnd,
				 uint32_t *ssthresh)
{
	uint32_t ts_sent;

	rack_fixture_cc(s, cfg, 0, TCP_CC_NEWRENO, 0, 1 * MS);
	assert_int_equal(app_send(s, 10 * mss_), (int)(10 * mss_));
	ts_sent = expect_tx(s, ACK, S(0), IRS + 1, mss_)->opts.ts_val;
	drain_tx(s);
	*cwnd = s->c.cc.cwnd;
	*ssthresh = s->c.cc.ssthresh;
	advance(s, s->c.tlp_at - s->now);
	assert_true(expect_tx(s, ACK, S(9), IRS + 1, mss_)->retransmit);
	assert_true(seq_lt(ts_sent, tcp_ts_now(&s->c, s->now)));
	advance(s, s->c.rto_at - s->now);
	assert_int_equal(s->c.stats.timeouts, 1);
	assert_true(expect_tx(s, ACK, S(0), IRS + 1, mss_)->retransmit);
	expect_nothing(s);
	assert_int_equal(s->c.cc.cwnd, mss_);
	assert_int_equal(s->c.sb.lost, 9 * mss_);
	assert_true(seq_lt(ts_sent, tcp_ts_now(&s->c, s->now)));
	return ts_sent;
}

/*
 * RFC 3522 (Eifel detection), RFC 4015 (its response): the first ACK after
 * an RTO echoes a TSval older than the retransmission, so the original
 * arrived and only its ACK was late (a receiver's delayed ACK outlasting a
 * short RTO, as Linux's 40 ms against lunar's 4 ms floor): the window
 * comes back, nothing outstanding is lost any more, nothing goes again.
 */
static void test_spurious_rto_undone_by_timestamp(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t cwnd, ssthresh, ts_sent;

	(void)state;
	ts_sent = ten_out_then_rto(&s, &cfg, &cwnd, &ssthresh);
	advance(&s, 100 * US);
	sack_ecr(&s, S(5), 0, NULL, ts_sent); /* half the originals, ACKed late */
	assert_int_equal(s.c.stats.spurious_rtos, 1);
	assert_int_equal(s.c.stats.spurious_recoveries, 0);
	assert_int_equal(s.c.cc.ssthresh, ssthresh);
	assert_true(s.c.cc.cwnd >= cwnd);
	assert_int_equal(s.c.sb.lost, 0);
	expect_nothing(&s); /* 5..9 are in flight, not lost: not sent again */
	assert_false(s.c.undo.on);
	sack(&s, S(10), 0, NULL);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.retransmits, 2); /* the probe and the RTO's */
	script_end(&s);
}

/*
 * RFC 8985 6.2 step 4: the end of an RTO recovery counts toward the end of
 * a D-SACK's wider reordering window, as a fast recovery's does. After an
 * RTO cc.in_recovery stays false; the recovery is SND.UNA below the RTO's
 * "recover" (tcp_cc_recovering()).
 */
static void test_rto_recovery_end_counts_for_reo_wnd(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t cwnd, ssthresh;

	(void)state;
	ten_out_then_rto(&s, &cfg, &cwnd, &ssthresh);
	s.c.rack.reo_wnd_mult = 3; /* as after two D-SACK rounds */
	s.c.rack.reo_wnd_persist = 2;
	advance(&s, 100 * US);
	sack(&s, S(1), 0, NULL); /* the resent first segment: still recovering */
	assert_int_equal(s.c.stats.spurious_rtos, 0);
	assert_int_equal(s.c.rack.reo_wnd_persist, 2);
	drain_tx(&s);
	advance(&s, 100 * US);
	sack(&s, S(10), 0, NULL); /* everything: the recovery is over */
	assert_int_equal(s.c.rack.reo_wnd_persist, 1);
	assert_int_equal(s.c.rack.reo_wnd_mult, 3);
	drain_tx(&s);
	script_end(&s);
}

/*
 * An RTO found spurious by the ACK that also ends its recovery counts once:
 * the undo does not see the recovery (SND.UNA is past "recover" already),
 * the ACK's own check does.
 */
static void test_rto_undone_at_recovery_end_counts_once(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t cwnd, ssthresh, ts_sent;

	(void)state;
	ts_sent = ten_out_then_rto(&s, &cfg, &cwnd, &ssthresh);
	s.c.rack.reo_wnd_mult = 3;
	s.c.rack.reo_wnd_persist = 2;
	advance(&s, 100 * US);
	sack_ecr(&s, S(10), 0, NULL, ts_sent); /* all the originals, ACKed late */
	assert_int_equal(s.c.stats.spurious_rtos, 1);
	assert_int_equal(s.c.rack.reo_wnd_persist, 1);
	assert_int_equal(s.c.rack.reo_wnd_mult, 3);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * The probe went before the RTO: an echo of the probe's TSval is no
 * proof, as the probe may have repaired the loss it was sent for (the
 * episode's first retransmission is the probe's, not the RTO's).
 */
static void test_probe_echo_no_proof(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t cwnd, ssthresh, ts_probe;

	(void)state;
	ten_out_then_rto(&s, &cfg, &cwnd, &ssthresh);
	ts_probe = s.c.undo.ts;
	assert_true(seq_lt(ts_probe, tcp_ts_now(&s.c, s.now)));
	advance(&s, 100 * US);
	sack_ecr(&s, S(10), 0, NULL, ts_probe);
	assert_int_equal(s.c.stats.spurious_rtos, 0);
	assert_int_equal(s.c.cc.ssthresh, 10 * mss_ / 2);
	script_end(&s);
}

/*
 * RFC 3708: the ACK echoes the retransmission (the original's ACK was
 * not on its way; the receiver sat on it) but reports it as received
 * twice: every retransmission of the episode was a duplicate.
 */
static void test_spurious_rto_undone_by_dsack(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t cwnd, ssthresh;
	const uint32_t dup[2] = {S(0), S(1)}, probe_dup[2] = {S(9), S(10)};

	(void)state;
	ten_out_then_rto(&s, &cfg, &cwnd, &ssthresh);
	advance(&s, 100 * US);
	sack(&s, S(10), 1, dup);
	assert_int_equal(s.c.stats.dsacks, 1);
	/* The probe's copy of segment 9 is the episode's too: it may have repaired a loss. */
	assert_int_equal(s.c.stats.spurious_rtos, 0);
	assert_int_equal(s.c.cc.ssthresh, 10 * mss_ / 2);
	sack(&s, S(10), 1, probe_dup);
	assert_int_equal(s.c.stats.dsacks, 2);
	assert_int_equal(s.c.stats.spurious_rtos, 1);
	assert_int_equal(s.c.cc.ssthresh, ssthresh);
	assert_true(s.c.cc.cwnd >= cwnd);
	expect_nothing(&s);
	script_end(&s);
}

/* An ACK of @ack with @n SACK blocks and no timestamp (RF_NO_TS). */
static void sack_no_ts(struct script *s, uint32_t ack, unsigned n, const uint32_t *blocks)
{
	struct tcp_options o = {0};

	opts_sack(&o, n, blocks);
	seg_opts(s, ACK, IRS + 1, ack, 65535, 0, &o);
}

/*
 * Ten segments out without timestamps, the probe (segment 9 again), the
 * RTO (segment 0 again, all else marked lost); five more segments wait.
 */
static void ten_then_rto_no_ts(struct script *s, struct tcp_config *cfg)
{
	rack_fixture_cc(s, cfg, 0, TCP_CC_NEWRENO, RF_NO_TS, 0);
	assert_false(s->c.ts_ok);
	send_segments(s, 10);
	advance(s, s->c.tlp_at - s->now);
	assert_true(expect_tx(s, ACK, S(9), IRS + 1, mss_)->retransmit);
	advance(s, s->c.rto_at - s->now);
	assert_true(expect_tx(s, ACK, S(0), IRS + 1, mss_)->retransmit);
	assert_int_equal(s->c.sb.lost, 9 * mss_);
	assert_int_equal(app_send(s, 5 * mss_), (int)(5 * mss_));
	expect_nothing(s);
}

/*
 * RFC 5682 3.1 (SACK-enhanced F-RTO): the first ACK after the RTO covers
 * only its retransmission, so two new segments go instead of segments
 * 1..9 marked lost (step 2b); the next ACK acknowledges 1 and 2, sent
 * once and never SACKed (step 3b): they were late, and so was the RTO.
 * Undone: the window back, nothing lost, nothing more resent.
 */
static void test_frto_sack_spurious(void **state)
{
	struct tcp_config cfg;
	struct script s;

	(void)state;
	ten_then_rto_no_ts(&s, &cfg);
	advance(&s, 100 * US);
	sack_no_ts(&s, S(1), 0, NULL);
	assert_false(expect_tx(&s, ACK, S(10), IRS + 1, mss_)->retransmit);
	assert_false(expect_tx(&s, ACK, S(11), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.sb.lost, 9 * mss_);
	assert_int_equal(s.c.stats.spurious_rtos, 0);
	advance(&s, 100 * US);
	sack_no_ts(&s, S(3), 0, NULL);
	assert_int_equal(s.c.stats.spurious_rtos, 1);
	assert_int_equal(s.c.stats.frto_spurious, 1);
	assert_int_equal(s.c.sb.lost, 0);
	assert_int_equal(s.c.cc.ssthresh, UINT32_MAX);
	assert_int_equal(s.c.cc.cwnd, 10 * mss_);
	/* 3..11 in flight, 9 segments of the 10 the window allows: new data, none resent. */
	assert_false(expect_tx(&s, ACK, S(12), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	sack_no_ts(&s, S(13), 0, NULL);
	drain_tx(&s);
	sack_no_ts(&s, S(15), 0, NULL);
	assert_int_equal(s.c.snd.bytes, 0);
	assert_int_equal(s.c.stats.retransmits, 2); /* the probe and the RTO's */
	script_end(&s);
}

/*
 * RFC 5682 3.1 step 3a: the ACK after the new data SACKs only the new
 * data, a hole at segment 1: the loss was real, the lost segments go
 * again in slow start, the reduction stands. The same when that ACK
 * carries data (@with_data), and so is no duplicate ACK (as Linux's
 * FLAG_DATA_SACKED).
 */
static void frto_sack_real_loss(bool with_data)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t new_data[2] = {S(10), S(12)};

	ten_then_rto_no_ts(&s, &cfg);
	advance(&s, 100 * US);
	sack_no_ts(&s, S(1), 0, NULL);
	drain_tx(&s);
	advance(&s, 100 * US);
	if (with_data) {
		/* Not a duplicate ACK (it carries data): its SACKs still say the old was lost. */
		struct tcp_options o = {0};

		opts_sack(&o, 1, new_data);
		seg_opts(&s, ACK, IRS + 1, S(1), 65535, 100, &o);
		assert_int_equal(s.c.stats.dupacks, 0);
	} else {
		sack_no_ts(&s, S(1), 1, new_data);
	}
	assert_int_equal(s.c.frto.step, TCP_FRTO_OFF);
	assert_int_equal(s.c.stats.spurious_rtos, 0);
	assert_int_equal(s.c.cc.ssthresh, 10 * mss_ / 2);
	assert_true(expect_tx(&s, ACK, S(1), s.c.rcv_nxt, mss_)->retransmit);
	assert_true(expect_tx(&s, ACK, S(2), s.c.rcv_nxt, mss_)->retransmit);
	expect_nothing(&s);
	if (!with_data) {
		sack_no_ts(&s, S(12), 0, NULL);
		drain_tx(&s);
		sack_no_ts(&s, S(15), 0, NULL);
		assert_int_equal(s.c.snd.bytes, 0);
	}
	script_end(&s);
}

static void test_frto_sack_real_loss(void **state)
{
	(void)state;
	frto_sack_real_loss(false);
}

static void test_frto_sack_real_loss_data_ack(void **state)
{
	(void)state;
	frto_sack_real_loss(true);
}

/*
 * The RTO was needed: the ACK echoes the retransmission and reports no
 * duplicate. The reduction stands (RFC 5681 3.1: slow start from 1 SMSS
 * below the halved ssthresh), the rest goes again; a D-SACK for a range
 * never retransmitted later does not undo it either.
 */
static void test_needed_rto_not_undone(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t cwnd, ssthresh;
	const uint32_t not_resent[2] = {S(0), S(1)};

	(void)state;
	ten_out_then_rto(&s, &cfg, &cwnd, &ssthresh);
	advance(&s, 100 * US);
	sack(&s, S(1), 0, NULL);
	assert_int_equal(s.c.stats.spurious_rtos, 0);
	assert_int_equal(s.c.cc.ssthresh, 10 * mss_ / 2);
	assert_int_equal(s.c.cc.cwnd, 2 * mss_);
	expect_tx(&s, ACK, S(1), IRS + 1, mss_);
	expect_tx(&s, ACK, S(2), IRS + 1, mss_);
	expect_nothing(&s);
	/* Segment 0 again, from the network: its D-SACK proves nothing of 1 and 2. */
	sack(&s, S(1), 1, not_resent);
	assert_int_equal(s.c.stats.dsacks, 1);
	assert_int_equal(s.c.stats.spurious_rtos, 0);
	assert_int_equal(s.c.cc.ssthresh, 10 * mss_ / 2);
	sack(&s, S(10), 0, NULL);
	drain_tx(&s);
	script_end(&s);
}

/*
 * A probe's reduction made while an RTO's undo episode is still open
 * stands (RFC 8985 7.4 against RFC 3708). Ten segments, a probe, an RTO:
 * the ten go again in slow start, new data behind them; with 7..12 out and
 * segment 10 not yet acknowledged (the episode's end), a probe resends 12.
 * An ACK past the probe's end with no D-SACK says it repaired a loss: a
 * reduction of its own, which closes the episode. D-SACKs that then report
 * every retransmission of the episode as duplicates would prove the RTO
 * needless, but must not take back the probe's reduction with it.
 */
static void test_probe_cut_survives_rto_undo(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t cwnd, ssthresh;
	const uint32_t rto_dup[2] = {S(0), S(10)}, first_probe_dup[2] = {S(9), S(10)},
		       probe_dup[2] = {S(12), S(13)};

	(void)state;
	ten_out_then_rto(&s, &cfg, &cwnd, &ssthresh);
	/* F-RTO would prove the RTO spurious by the ACK of 1..2 (never resent): not this test's
	 * proof. */
	tcp_frto_end(&s.c.frto);
	assert_int_equal(app_send(&s, 20 * mss_), (int)(20 * mss_));
	for (unsigned ack = 1; ack <= 7; ack = ack * 2 + 1) { /* ACKs of 0, 1..2, 3..6 */
		advance(&s, 1 * MS);
		sack(&s, S(ack), 0, NULL);
		drain_tx(&s);
	}
	assert_int_equal(s.c.snd_max, S(13));
	advance(&s, s.c.tlp_at - s.now);
	assert_true(expect_tx(&s, ACK, S(12), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_true(s.c.rack.tlp_out && s.c.rack.tlp_retrans);
	/* Room for new data beyond the probe's end, the episode still open. */
	advance(&s, 1 * MS);
	sack(&s, S(9), 0, NULL);
	drain_tx(&s);
	assert_int_equal(s.c.snd_max, S(15));
	assert_true(s.c.undo.on);
	/* Past the probe's end (13), no D-SACK: the probe repaired a loss. */
	advance(&s, 1 * MS);
	sack(&s, S(14), 0, NULL);
	assert_int_equal(s.c.stats.tlp_recoveries, 1);
	assert_false(s.c.undo.on);
	ssthresh = s.c.cc.ssthresh;
	drain_tx(&s);
	/* Every copy the episode sent, reported received twice. */
	sack(&s, S(14), 1, rto_dup);
	sack(&s, S(14), 1, first_probe_dup);
	sack(&s, S(14), 1, probe_dup);
	assert_int_equal(s.c.stats.dsacks, 3);
	assert_int_equal(s.c.stats.spurious_rtos, 0);
	assert_int_equal(s.c.cc.ssthresh, ssthresh);
	drain_tx(&s);
	script_end(&s);
}

/*
 * RFC 3708 for a fast recovery: segment 1 was only late (reordered); its
 * retransmission comes back as a duplicate, so the halving is taken back,
 * with CUBIC's state (RFC 9438 4.9).
 */
static void test_spurious_recovery_undone_by_dsack(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t cwnd;
	struct tcp_cc_cubic before;
	const uint32_t dup[2] = {S(1), S(2)};

	(void)state;
	rack_fixture_cc(&s, &cfg, 0, TCP_CC_CUBIC, 0, 0);
	send_segments(&s, 10);
	advance(&s, 100 * US);
	sack(&s, S(1), 0, NULL);
	cwnd = s.c.cc.cwnd;
	before = s.c.cc.algo.cubic;
	sack1(&s, S(1), S(2), S(3));
	sack1(&s, S(1), S(2), S(4));
	sack1(&s, S(1), S(2), S(5));
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_true(s.c.cc.in_recovery);
	assert_true(s.c.cc.cwnd < cwnd);
	assert_true(s.c.cc.algo.cubic.w_max != before.w_max);
	/* The original was late, the retransmission a duplicate. */
	sack(&s, S(10), 1, dup);
	assert_int_equal(s.c.stats.spurious_recoveries, 1);
	assert_int_equal(s.c.stats.spurious_rtos, 0);
	assert_false(s.c.cc.in_recovery);
	assert_true(s.c.cc.cwnd >= cwnd);
	assert_true(s.c.cc.algo.cubic.w_max == before.w_max);
	assert_true(s.c.cc.algo.cubic.k == before.k);
	assert_int_equal(s.c.cc.algo.cubic.epoch_ns, before.epoch_ns);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 3708 2: the D-SACK for the retransmission may come after the ACK
 * that ended the recovery. The episode ages only with ACKs that advance
 * SND.UNA: a duplicate ACK in between (nothing new sent) leaves it open,
 * and the late D-SACK still undoes the reduction.
 */
static void test_late_dsack_undoes_after_duplicate_ack(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t cwnd;
	const uint32_t dup[2] = {S(1), S(2)};

	(void)state;
	ten_out_first_acked(&s, &cfg);
	cwnd = s.c.cc.cwnd;
	sack1(&s, S(1), S(2), S(5));
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	assert_true(s.c.cc.in_recovery);
	assert_true(s.c.cc.cwnd < cwnd);
	advance(&s, 100 * US);
	sack(&s, S(10), 0, NULL); /* the full ACK: recovery over */
	assert_false(s.c.cc.in_recovery);
	sack(&s, S(10), 0, NULL); /* a duplicate */
	assert_true(s.c.undo.on);
	sack(&s, S(10), 1, dup); /* the retransmission was a duplicate */
	assert_int_equal(s.c.stats.spurious_recoveries, 1);
	assert_true(s.c.cc.cwnd >= cwnd);
	expect_nothing(&s);
	script_end(&s);
}

/* Without SACK negotiated there is no scoreboard: NewReno (RFC 6582) as before. */
/*
 * RFC 6937 3.1, Proportional Rate Reduction: while the pipe is above
 * ssthresh, each ACK lets out ssthresh / RecoverFS of what it delivered,
 * so the sender keeps sending through the recovery at half the delivery
 * rate (NewReno's halving) instead of falling silent until the pipe has
 * drained to ssthresh (RFC 6675's rule alone); once the pipe is below
 * ssthresh it grows back to ssthresh at most one segment beyond what is
 * delivered (the slow-start reduction bound).
 *
 * 20 segments out, then 3 more as the first ACK and SACKs come, segment 1
 * lost: RecoverFS = 23 segments, ssthresh = 11.5, so one segment for
 * every two delivered.
 */
static void test_prr_paces_recovery(void **state)
{
	struct tcp_config cfg;
	struct script s;
	unsigned next = 20; /* the next new segment */

	(void)state;
	rack_fixture_iw(&s, &cfg, 20);
	send_segments(&s, 20);
	assert_int_equal(app_send(&s, 30 * mss_), (int)(30 * mss_)); /* queued behind cwnd */
	expect_nothing(&s);
	advance(&s, 100 * US);
	sack(&s, S(1), 0, NULL); /* slow start: two new segments */
	for (; next < 22; next++)
		expect_tx(&s, ACK, S(next), IRS + 1, mss_);
	/* RFC 6675: each SACKed segment leaves the pipe, and a new one takes its place. */
	sack1(&s, S(1), S(2), S(3));
	expect_tx(&s, ACK, S(next++), IRS + 1, mss_);
	sack1(&s, S(1), S(2), S(4));
	expect_tx(&s, ACK, S(next++), IRS + 1, mss_);
	expect_nothing(&s);
	advance(&s, 10 * US);	     /* the retransmission goes after segments 22 and 23 */
	sack1(&s, S(1), S(2), S(5)); /* recovery: the hole goes at once */
	assert_true(expect_tx(&s, ACK, S(1), IRS + 1, mss_)->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.cc.ssthresh, 23 * mss_ / 2);
	assert_int_equal(s.c.cc.recover_fs, 23 * mss_);

	/* ssthresh / RecoverFS = 1/2: a new segment on every second ACK. */
	for (unsigned j = 1; j <= 10; j++) {
		sack1(&s, S(1), S(2), S(5 + j));
		if (j >= 3 && j % 2 == 1) {
			expect_tx(&s, ACK, S(next), IRS + 1, mss_);
			next++;
		}
		expect_nothing(&s);
		assert_int_equal(s.c.cc.prr_delivered, (1 + j) * mss_);
		assert_int_equal(s.c.cc.prr_out, (1 + (j - 1) / 2) * mss_);
	}
	/* pipe = the retransmission + segments 15..23 + 4 new = 14 > ssthresh 11.5 */
	assert_int_equal(tcp_sb_pipe(&s.c.sb, s.c.snd_max - s.c.snd_una), 14 * mss_);

	/*
	 * Segments 15..23 arrive at once: the pipe falls to 5, below
	 * ssthresh: sndcnt = MIN(ssthresh - pipe = 6.5, MAX(prr_delivered -
	 * prr_out = 20 - 5, 9) + 1): six new segments, half of one held.
	 */
	sack1(&s, S(1), S(2), S(24));
	for (unsigned i = 0; i < 6; i++, next++)
		expect_tx(&s, ACK, S(next), IRS + 1, mss_);
	expect_nothing(&s);
	assert_int_equal(s.c.cc.cwnd, 23 * mss_ / 2);
	assert_int_equal(tcp_sb_pipe(&s.c.sb, s.c.snd_max - s.c.snd_una), 11 * mss_);
	assert_int_equal(s.c.stats.timeouts, 0);
	assert_int_equal(s.c.stats.retransmits, 1);
	sack(&s, S(next), 0, NULL);
	assert_false(s.c.cc.in_recovery);
	drain_tx(&s);
	script_end(&s);
}

static void test_no_sack_no_scoreboard(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;

	(void)state;
	script_config(&cfg);
	cfg.rack = true;
	o.sack = false;
	fixture_established(&s, &o);
	assert_false(s.c.sb_on);
	prime_window(&s);
	assert_int_equal(s.c.snd_mss, mss_);
	send_segments(&s, 3);
	assert_int_equal(s.c.sb.count, 0);
	sack(&s, S(3), 0, NULL);
	script_end(&s);
}

/*
 * The RPC case of ack_defer (tcp_conn.h): ten segments out (the initial
 * window), then 100 us later the peer's reply, 200 bytes that acknowledge
 * them all. With
 * @defer the connection takes SND.UNA, the window and the RTT at once and
 * leaves the scoreboard, RACK, cwnd and the timers to tcp_ack_work().
 */
static uint32_t reply_acks_all(struct script *s, struct tcp_config *cfg, bool defer)
{
	struct tcp_options o = {.has_ts = true};
	uint32_t cwnd;

	rack_fixture(s, cfg);
	s->c.ack_defer = defer;
	send_segments(s, 10); /* the initial window: cwnd-limited, so the ACK grows cwnd */
	cwnd = s->c.cc.cwnd;
	advance(s, 100 * US);
	o.ts_val = s->peer_ts;
	o.ts_ecr = s->out.seg[s->out.n - 1].opts.ts_val;
	seg_opts(s, ACK | PSH, IRS + 1, S(10), 65535, 200, &o);
	return cwnd; /* before the ACK */
}

/*
 * ack_defer: the bookkeeping an ACK of everything leaves waits, visibly,
 * and when done gives the connection the state the ACK would have given
 * at once (cwnd, SRTT, RACK, the scoreboard, the timers).
 */
static void test_ack_work_later_same_result(void **state)
{
	struct tcp_config cfg;
	struct script s;
	struct tcp_conn now_; /* the connection as the ACK left it with all its work done */
	uint32_t cwnd_before;

	(void)state;
	reply_acks_all(&s, &cfg, false);
	assert_false(s.c.ack_work_due);
	assert_int_equal(s.c.stats.acks_worked_later, 0);
	assert_int_equal(s.c.sb.count, 0);
	assert_int_equal(s.c.rto_at, 0);
	now_ = s.c; /* the fields compared below are plain values */
	drain_tx(&s);
	recv_all(&s);
	script_end(&s);

	cwnd_before = reply_acks_all(&s, &cfg, true);
	assert_true(s.c.ack_work_due);
	assert_int_equal(s.c.stats.acks_worked_later, 1);
	/* Taken at once: what a reply sent now is measured against. */
	assert_int_equal(s.c.snd_una, S(10));
	assert_int_equal(s.c.snd_wnd, now_.snd_wnd);
	assert_int_equal(s.c.rtt.srtt_ns, now_.rtt.srtt_ns);
	assert_int_equal(s.c.snd.bytes, 0);
	/* Left: the scoreboard's records, cwnd's growth, the RTO of acknowledged data. */
	assert_int_equal(s.c.sb.count, 10);
	assert_int_equal(s.c.cc.cwnd, cwnd_before);
	assert_int_not_equal(s.c.rto_at, 0);

	tcp_ack_work(&s.c);
	assert_false(s.c.ack_work_due);
	assert_int_equal(s.c.sb.count, 0);
	assert_true(now_.cc.cwnd > cwnd_before);
	assert_int_equal(s.c.cc.cwnd, now_.cc.cwnd);
	assert_int_equal(s.c.cc.ssthresh, now_.cc.ssthresh);
	assert_int_equal(s.c.rack.rtt_ns, now_.rack.rtt_ns);
	assert_int_equal(s.c.rack.xmit_ns, now_.rack.xmit_ns);
	assert_int_equal(s.c.rto_at, now_.rto_at);
	assert_int_equal(s.c.tlp_at, now_.tlp_at);
	tcp_ack_work(&s.c); /* nothing left: a second call changes nothing */
	assert_int_equal(s.c.cc.cwnd, now_.cc.cwnd);
	drain_tx(&s);
	recv_all(&s);
	script_end(&s);
}

/*
 * The core does the work itself before anything that reads what it
 * updates: a timer falling due (here the RTO of the acknowledged data,
 * still armed) retransmits nothing, and the next segment's input finds
 * the scoreboard up to date.
 */
static void test_ack_work_before_timer_and_input(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint64_t rto_at;

	(void)state;
	reply_acks_all(&s, &cfg, true);
	assert_true(s.c.ack_work_due);
	rto_at = s.c.rto_at;
	assert_true(rto_at > s.now);
	advance(&s, rto_at - s.now + 1 * MS); /* past the stale RTO: the timer runs */
	assert_int_equal(s.c.stats.timeouts, 0);
	assert_int_equal(s.c.stats.retransmits, 0);
	assert_int_equal(s.c.stats.tlp_probes, 0);
	assert_false(s.c.ack_work_due);
	assert_int_equal(s.c.sb.count, 0);
	drain_tx(&s);
	recv_all(&s);
	script_end(&s);

	reply_acks_all(&s, &cfg, true);
	assert_true(s.c.ack_work_due);
	seg(&s, ACK, IRS + 1 + 200, S(10), 65535, 100); /* more data, the same ACK */
	assert_false(s.c.ack_work_due);
	assert_int_equal(s.c.sb.count, 0);
	assert_int_equal(s.c.stats.acks_worked_later, 1);
	drain_tx(&s);
	recv_all(&s);
	script_end(&s);
}

/* Not with part of the flight still out, nor without ack_defer, nor for a pure ACK. */
static void test_ack_work_later_only_when_all_acked(void **state)
{
	struct tcp_config cfg;
	struct script s;
	struct tcp_options o = {.has_ts = true};

	(void)state;
	rack_fixture(&s, &cfg);
	s.c.ack_defer = true;
	send_segments(&s, 3);
	advance(&s, 100 * US);
	o.ts_val = s.peer_ts;
	o.ts_ecr = s.out.seg[s.out.n - 1].opts.ts_val;
	seg_opts(&s, ACK | PSH, IRS + 1, S(2), 65535, 200, &o); /* two of three */
	assert_false(s.c.ack_work_due);
	assert_int_equal(s.c.sb.count, 1);
	o.ts_val = s.peer_ts;
	seg_opts(&s, ACK, IRS + 1 + 200, S(3), 65535, 0, &o); /* the rest, no data: a pure ACK */
	assert_false(s.c.ack_work_due);
	assert_int_equal(s.c.sb.count, 0);
	assert_int_equal(s.c.stats.acks_worked_later, 0);
	drain_tx(&s);
	recv_all(&s);
	script_end(&s);
}

/*
 * One round trip of a sender that always has data: @rtt after the last
 * round's segments left, each is acknowledged on its own (so each ACK
 * measures @rtt through RACK's delivery times), the application refilling
 * the send buffer as it goes.
 */
static void acked_round(struct script *s, uint64_t rtt)
{
	uint32_t end = s->c.snd_max;

	advance(s, rtt);
	for (uint32_t a = s->c.snd_una + mss_; seq_leq(a, end); a += mss_) {
		sack(s, a, 0, NULL);
		drain_tx(s);
		app_send(s, mss_);
	}
}

/*
 * HyStart++ (RFC 9406 4.2) on a live connection: with a scoreboard every
 * ACK is an RTT sample (the segment it delivered, RFC 8985's RACK.rtt),
 * so a round of ten or more ACKs decides. With datacenter bounds (20 to
 * 200 us) a rise from 100 to 130 us starts Conservative Slow Start, and
 * five rounds later the connection is in congestion avoidance.
 */
static void test_hystart_from_rack_samples(void **state)
{
	struct tcp_config cfg;
	struct script s;
	uint32_t before;

	(void)state;
	rack_fixture_iw(&s, &cfg, 10);
	/* tcp_config's default reached the connection: RFC 9406's bounds. */
	assert_int_equal(s.c.cc.hs.min_thresh_ns, TCP_HYSTART_MIN_RTT_THRESH_NS);
	assert_int_equal(s.c.cc.hs.max_thresh_ns, TCP_HYSTART_MAX_RTT_THRESH_NS);
	tcp_hystart_init(&s.c.cc.hs, 20 * US, 200 * US);
	for (int i = 0; i < 8; i++)
		assert_int_equal(app_send(&s, 16 * 1024), 16 * 1024);
	drain_tx(&s);
	acked_round(&s, 100 * US);
	acked_round(&s, 100 * US);
	assert_int_equal(s.c.cc.hs.phase, TCP_HYSTART_SS);
	before = s.c.cc.cwnd;
	acked_round(&s, 130 * US);
	assert_int_equal(s.c.cc.hs.phase, TCP_HYSTART_CSS);
	assert_int_equal(s.c.cc.hs.css_entries, 1);
	assert_true(s.c.cc.cwnd < 2 * before - 8 * mss_); /* not the doubling of slow start */
	for (int r = 0; r < 5; r++)
		acked_round(&s, 130 * US);
	assert_int_equal(s.c.cc.hs.phase, TCP_HYSTART_DONE);
	assert_int_equal(s.c.cc.hs.exits, 1);
	assert_true(s.c.cc.ssthresh < UINT32_MAX);
	assert_int_equal(s.c.stats.retransmits, 0);
	script_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_three_sacks_start_recovery),
	    cmocka_unit_test(test_karn_sack_retransmission_not_timed),
	    cmocka_unit_test(test_sack_recovery_exit_ends_prr),
	    cmocka_unit_test(test_retransmission_below_fack_not_reordering),
	    cmocka_unit_test(test_rack_takes_most_recently_sent),
	    cmocka_unit_test(test_rack_checks_past_retransmission),
	    cmocka_unit_test(test_recovery_kick_sends_one),
	    cmocka_unit_test(test_reordering_timer_detects_single_sack),
	    cmocka_unit_test(test_lost_retransmission_detected),
	    cmocka_unit_test(test_sack_blocks_of_one_ack_not_reordering),
	    cmocka_unit_test(test_reordering_seen_keeps_window),
	    cmocka_unit_test(test_dsack_counted),
	    cmocka_unit_test(test_reo_wnd_persist_counts_recoveries),
	    cmocka_unit_test(test_invalid_sack_blocks_ignored),
	    cmocka_unit_test(test_tlp_spurious_probe_no_reduction),
	    cmocka_unit_test(test_pto_lone_full_segment),
	    cmocka_unit_test(test_tlp_repairs_tail),
	    cmocka_unit_test(test_tlp_repair_response_from_flight),
	    cmocka_unit_test(test_tlp_not_pushed_back_by_repeats),
	    cmocka_unit_test(test_tlp_then_recovery_one_response),
	    cmocka_unit_test(test_tlp_sends_new_data),
	    cmocka_unit_test(test_tlp_retransmits_by_default),
	    cmocka_unit_test(test_recovery_probe_resends_lost_retransmission),
	    cmocka_unit_test(test_no_recovery_probe_by_rfc),
	    cmocka_unit_test(test_recovery_probes_end_without_progress),
	    cmocka_unit_test(test_no_recovery_probe_into_zero_window),
	    cmocka_unit_test(test_no_probe_after_rto),
	    cmocka_unit_test(test_probe_armed_when_ack_reopens_window),
	    cmocka_unit_test(test_second_tail_probe_no_loss),
	    cmocka_unit_test(test_second_tail_probe_repair),
	    cmocka_unit_test(test_no_second_probe_after_new_data),
	    cmocka_unit_test(test_rto_keeps_then_forgets_sacks),
	    cmocka_unit_test(test_rto_after_undo_still_forgets_sacks),
	    cmocka_unit_test(test_timeout_recovery_no_reordering_window),
	    cmocka_unit_test(test_prr_paces_recovery),
	    cmocka_unit_test(test_spurious_rto_undone_by_timestamp),
	    cmocka_unit_test(test_rto_recovery_end_counts_for_reo_wnd),
	    cmocka_unit_test(test_rto_undone_at_recovery_end_counts_once),
	    cmocka_unit_test(test_spurious_rto_undone_by_dsack),
	    cmocka_unit_test(test_needed_rto_not_undone),
	    cmocka_unit_test(test_frto_sack_spurious),
	    cmocka_unit_test(test_frto_sack_real_loss),
	    cmocka_unit_test(test_frto_sack_real_loss_data_ack),
	    cmocka_unit_test(test_probe_echo_no_proof),
	    cmocka_unit_test(test_spurious_recovery_undone_by_dsack),
	    cmocka_unit_test(test_late_dsack_undoes_after_duplicate_ack),
	    cmocka_unit_test(test_probe_cut_survives_rto_undo),
	    cmocka_unit_test(test_no_sack_no_scoreboard),
	    cmocka_unit_test(test_hystart_from_rack_samples),
	    cmocka_unit_test(test_ack_work_later_same_result),
	    cmocka_unit_test(test_ack_work_before_timer_and_input),
	    cmocka_unit_test(test_ack_work_later_only_when_all_acked),
	};

	return cmocka_run_group_tests(tests, script_group_setup, script_group_teardown);
}
