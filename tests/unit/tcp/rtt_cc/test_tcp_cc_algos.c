/*
 * test_tcp_cc_algos.c - the algorithms behind tcp_cc_ops and the engine's
 * ECN response, as pure arithmetic with a virtual clock:
 *  - CUBIC (RFC 9438): the 0.7 reduction, fast convergence, the concave
 *    climb that levels off at W_max after K seconds and the convex probe
 *    beyond it, the Reno-friendly region at datacenter RTTs, the first
 *    stage after a timeout (K = 0);
 *  - DCTCP (RFC 8257): alpha's update once per window, the alpha / 2 cut,
 *    NewReno's halving on loss;
 *  - the ECN echo response (RFC 3168 6.1.2): once per window, never while
 *    recovering, no growth from the ACK that carries it;
 *  - HyStart++ (RFC 9406) in the first slow start of every algorithm:
 *    Conservative Slow Start on an RTT rise, back to slow start when the
 *    rise does not last, congestion avoidance after CSS_ROUNDS rounds,
 *    RttThresh's clamp, too few samples, a loss or a timeout ending it;
 *  - the names --cc takes.
 * The tests play a sender that always has data: every ACK is of SMSS
 * bytes, and a "round" acknowledges one cwnd at one instant.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tcp/tcp_cc.h"

#define SMSS 1000u
#define MS   1000000ull
#define US   1000ull

struct sender {
	struct tcp_cc cc;
	uint32_t una, nxt;
	uint64_t now, rtt;
	uint64_t sample; /* every ACK's own RTT sample (HyStart++); 0: none */
};

static void sender_init(struct sender *s, enum tcp_cc_algo algo, uint32_t cwnd_segs, uint64_t rtt)
{
	tcp_cc_init(&s->cc, SMSS, 0, algo);
	s->cc.cwnd = cwnd_segs * SMSS;
	s->una = 1000;
	s->nxt = s->una + s->cc.cwnd;
	s->now = 1000 * MS;
	s->rtt = rtt;
	s->sample = 0;
}

static void sender_ack(struct sender *s, uint32_t bytes, bool ece)
{
	struct tcp_cc_ack a = {.acked = bytes,
			       .flight = s->nxt - s->una,
			       .ece = ece,
			       .now_ns = s->now,
			       .rtt_ns = s->rtt,
			       .rtt_sample_ns = s->sample};

	s->una += bytes;
	a.ack = s->una;
	/* The sender refills the window as it goes: what was acknowledged goes out again. */
	if (s->cc.cwnd > s->nxt - s->una)
		s->nxt = s->una + s->cc.cwnd;
	a.snd_nxt = s->nxt;
	tcp_cc_on_ack(&s->cc, &a);
	if (ece)
		tcp_cc_on_ece(&s->cc, s->una, s->nxt, s->nxt - s->una);
}

/* One round trip: a cwnd's worth of ACKs of SMSS each, then the clock moves on by an RTT. */
static void sender_round(struct sender *s)
{
	uint32_t n = s->cc.cwnd / SMSS;

	for (uint32_t i = 0; i < n; i++)
		sender_ack(s, SMSS, false);
	s->now += s->rtt;
}

/*
 * A SACK-based loss recovery entered and completed, the pipe kept full
 * meanwhile (a window of new data sent): cwnd ends where the algorithm's
 * ssthresh put it.
 */
static void sender_loss(struct sender *s)
{
	uint32_t recover = s->nxt;

	assert_true(tcp_cc_enter_recovery(&s->cc, s->una, s->nxt, s->nxt - s->una));
	s->nxt += s->cc.cwnd;
	sender_ack(s, recover - s->una, false); /* the full ACK ends the recovery */
	assert_false(s->cc.in_recovery);
}

static double segs(const struct sender *s)
{
	return (double)s->cc.cwnd / SMSS;
}

/* RFC 9438 4.6: ssthresh = cwnd = 0.7 * FlightSize; W_max = the window before. */
static void test_cubic_reduction(void **state)
{
	struct sender s;

	(void)state;
	sender_init(&s, TCP_CC_CUBIC, 100, 100 * MS);
	s.cc.ssthresh = 50 * SMSS;
	sender_loss(&s);
	assert_int_equal(s.cc.ssthresh, 70 * SMSS);
	assert_int_equal(s.cc.cwnd, 70 * SMSS);
	assert_true(s.cc.algo.cubic.w_max == 100.0);
	/* Never below 2 segments. */
	sender_init(&s, TCP_CC_CUBIC, 2, 100 * MS);
	sender_loss(&s);
	assert_int_equal(s.cc.ssthresh, 2 * SMSS);
}

/*
 * RFC 9438 4.6: the reduction is from min(cwnd, FlightSize): a sender that
 * had only 40 segments in flight under a 100-segment window (application
 * limited) goes to 28, with W_max 40, not to 70.
 */
static void test_cubic_reduction_from_flight(void **state)
{
	struct sender s;

	(void)state;
	sender_init(&s, TCP_CC_CUBIC, 100, 100 * MS);
	s.cc.ssthresh = 50 * SMSS;
	assert_true(tcp_cc_enter_recovery(&s.cc, s.una, s.una + 40 * SMSS, 40 * SMSS));
	assert_int_equal(s.cc.ssthresh, 28 * SMSS);
	assert_true(s.cc.algo.cubic.w_max == 40.0);
}

/*
 * RFC 9438 4.4-4.5: the target is at most 1.5 * cwnd. Ten seconds into a
 * stage with K = 0 at a 1 s RTT, W_cubic(t + RTT) is 542 segments against a
 * window of 10; one ACK of a segment may add at most (15 - 10) / 10 of one.
 */
static void test_cubic_target_clamped(void **state)
{
	struct sender s;

	(void)state;
	sender_init(&s, TCP_CC_CUBIC, 10, 1000 * MS);
	s.cc.ssthresh = 5 * SMSS;
	sender_ack(&s, SMSS, false); /* the stage begins: W_max = cwnd, K = 0 */
	assert_true(s.cc.algo.cubic.k == 0.0);
	s.now += 10000 * MS;
	sender_ack(&s, SMSS, false);
	assert_true(segs(&s) > 10.0 && segs(&s) <= 10.6);
}

/* RFC 9438 4.7: a loss before the window regained W_max sets W_max = cwnd * (1 + 0.7) / 2. */
static void test_cubic_fast_convergence(void **state)
{
	struct sender s;

	(void)state;
	sender_init(&s, TCP_CC_CUBIC, 100, 100 * MS);
	sender_loss(&s);
	/* past recover: the next loss is a new one (RFC 6582 step 1) */
	sender_ack(&s, SMSS, false);
	s.cc.cwnd = 80 * SMSS;
	s.nxt = s.una + s.cc.cwnd;
	sender_loss(&s);
	assert_true(s.cc.algo.cubic.w_max == 80.0 * 1.7 / 2);
	assert_int_equal(s.cc.ssthresh, 56 * SMSS);
}

/*
 * RFC 9438 4.2-4.5 at a 100 ms RTT, where the cubic is ahead of Reno:
 * from 70 segments after a loss at 100, the window climbs quickly then
 * levels off, reaching W_max after K = cbrt(100 * 0.3 / 0.4) = 4.22 s,
 * and then probes beyond it.
 */
static void test_cubic_concave_plateau_convex(void **state)
{
	struct sender s;
	double k = 4.217, at_1s = 0, at_k = 0, at_k3 = 0;
	uint64_t start;

	(void)state;
	sender_init(&s, TCP_CC_CUBIC, 100, 100 * MS);
	sender_loss(&s);
	start = s.now;
	while (s.now - start < 8000 * MS) {
		double t = (double)(s.now - start) / 1e9;

		sender_round(&s);
		if (!at_1s && t >= 1.0)
			at_1s = segs(&s);
		if (!at_k && t >= k)
			at_k = segs(&s);
		if (!at_k3 && t >= k + 3)
			at_k3 = segs(&s);
	}
	/* Concave: W(1) = 0.4 (1 - 4.22)^3 + 100 = 86.7; most of the way back within a second. */
	assert_true(at_1s > 84 && at_1s < 92);
	/* The plateau: within a few segments of W_max at K (W(K + RTT) = 100.0004). */
	assert_true(at_k >= 99 && at_k <= 103);
	/*
	 * Beyond W_max the window is at least the convex W(K + 3) = 100 + 0.4 * 27
	 * = 110.8; by then Reno-friendly W_est (one segment per RTT since it passed
	 * cwnd_prior at 5.7 s: about 115) is ahead and governs (4.3).
	 */
	assert_true(at_k3 >= 110 && at_k3 <= 118);
}

/*
 * RFC 9438 4.2 eq. 2: the stage that starts at the first ACK after the
 * recovery has K = cbrt((W_max - cwnd_epoch) / C) = cbrt(30 / 0.4) = 4.2172 s,
 * and cwnd_epoch, W_est start at cwnd (70 segments).
 */
static void test_cubic_k(void **state)
{
	struct sender s;

	(void)state;
	sender_init(&s, TCP_CC_CUBIC, 100, 100 * MS);
	sender_loss(&s);
	sender_ack(&s, SMSS, false);
	assert_true(s.cc.algo.cubic.epoch_ns == s.now);
	assert_true(s.cc.algo.cubic.cwnd_epoch == 70.0);
	assert_true(s.cc.algo.cubic.k > 4.2171 && s.cc.algo.cubic.k < 4.2173);
}

/*
 * RFC 9438 4.3: at a datacenter RTT (100 us) the cubic barely moves in
 * wall-clock time, so the Reno-friendly estimate governs: about 0.53
 * segments per RTT until W_est passes cwnd_prior, then one per RTT, as
 * Reno would grow.
 */
static void test_cubic_reno_friendly(void **state)
{
	struct sender s;

	(void)state;
	sender_init(&s, TCP_CC_CUBIC, 100, 100 * US);
	sender_loss(&s);
	for (int r = 0; r < 56; r++)
		sender_round(&s);
	/* 70 + 56 * 0.529 = 99.6; the cubic alone would be at 71.3. */
	assert_true(segs(&s) > 97 && segs(&s) < 101);
	for (int r = 0; r < 100; r++)
		sender_round(&s);
	assert_true(segs(&s) > 195 && segs(&s) < 202);
}

/*
 * RFC 9438 4.8: after a timeout, ssthresh = 0.7 * the window; the first
 * congestion avoidance stage starts with K = 0 and W_max = cwnd there.
 */
static void test_cubic_after_timeout(void **state)
{
	struct sender s;

	(void)state;
	sender_init(&s, TCP_CC_CUBIC, 100, 100 * MS);
	tcp_cc_on_timeout(&s.cc, s.nxt - s.una, s.nxt);
	assert_int_equal(s.cc.cwnd, SMSS);
	assert_int_equal(s.cc.ssthresh, 70 * SMSS);
	while (s.cc.cwnd < s.cc.ssthresh)
		sender_round(&s);
	sender_round(&s);
	assert_true(s.cc.algo.cubic.k == 0.0);
	assert_true(s.cc.algo.cubic.w_max >= 70.0 && s.cc.algo.cubic.w_max < 75.0);
	assert_false(s.cc.algo.cubic.after_rto);
}

/*
 * A timeout inside a SACK recovery: PRR has deflated cwnd to a few
 * segments, and CUBIC's ssthresh (from min(cwnd, flight)) taken from it
 * would end the next slow start at ~3 segments. The recovery's cut holds.
 */
static void test_cubic_timeout_in_recovery_keeps_ssthresh(void **state)
{
	struct sender s;

	(void)state;
	sender_init(&s, TCP_CC_CUBIC, 100, 100 * MS);
	assert_true(tcp_cc_enter_recovery(&s.cc, s.una, s.nxt, s.nxt - s.una));
	assert_int_equal(s.cc.ssthresh, 70 * SMSS);
	tcp_cc_prr_ack(&s.cc, SMSS, 2 * SMSS); /* most of the window lost: pipe 2 */
	assert_true(s.cc.cwnd < 10 * SMSS);
	assert_false(tcp_cc_on_timeout(&s.cc, s.nxt - s.una, s.nxt)); /* not fresh */
	assert_int_equal(s.cc.cwnd, SMSS);
	assert_int_equal(s.cc.ssthresh, 70 * SMSS);
}

/*
 * A path MTU lowers the segment size in the middle of a CUBIC stage: cwnd
 * stays in bytes, and W_max is rescaled to the new size with it, so the
 * window goes on growing. Counted in the old size W_max lay far below
 * cwnd (now almost three times as many segments) and growth stopped.
 */
static void test_cubic_mss_change_keeps_growing(void **state)
{
	struct sender s;
	uint32_t before;

	(void)state;
	sender_init(&s, TCP_CC_CUBIC, 100, 10 * MS);
	sender_loss(&s);
	for (int i = 0; i < 20; i++)
		sender_round(&s);
	before = s.cc.cwnd;
	tcp_cc_set_smss(&s.cc, 536);
	assert_true(s.cc.algo.cubic.w_max > 100.0 * SMSS / 536 - 1);
	for (int r = 0; r < 100; r++) { /* a second of round trips, ACKs of 536 bytes */
		uint32_t n = s.cc.cwnd / 536;

		for (uint32_t i = 0; i < n; i++)
			sender_ack(&s, 536, false);
		s.now += s.rtt;
	}
	assert_true(s.cc.cwnd > before + 50 * 536);
}

/* After idle the next stage starts from now: time spent idle is not growth owed. */
static void test_cubic_idle_restarts_epoch(void **state)
{
	struct sender s;

	(void)state;
	sender_init(&s, TCP_CC_CUBIC, 100, 100 * MS);
	sender_loss(&s);
	sender_round(&s);
	assert_true(s.cc.algo.cubic.epoch_ns != 0);
	tcp_cc_on_idle(&s.cc, 0);
	assert_int_equal(s.cc.algo.cubic.epoch_ns, 0);
	s.now += 10000 * MS; /* ten seconds later the cubic would be far past W_max */
	s.nxt = s.una + s.cc.cwnd;
	sender_round(&s);
	assert_true(segs(&s) < 10);
}

/*
 * RFC 8257 3.3: alpha starts at 1 and, at the end of each window of data,
 * becomes (1 - 1/16) alpha + F / 16, F the fraction of bytes whose ACK
 * carried ECE.
 */
static void test_dctcp_alpha(void **state)
{
	struct sender s;
	double alpha;

	(void)state;
	sender_init(&s, TCP_CC_DCTCP, 10, 100 * US);
	assert_int_equal(s.cc.algo.dctcp.alpha, 1u << 20);
	s.cc.ssthresh = 5 * SMSS; /* congestion avoidance: the window stays 10-ish */
	s.cc.algo.dctcp.started = true;
	s.cc.algo.dctcp.window_end = s.nxt; /* the window of observation: these ten segments */
	/* Half of the window marked: ECE on the first five ACKs (the cut itself spent already). */
	s.cc.ecn_armed = true;
	s.cc.ecn_recover = s.nxt; /* reductions spent for this window: only alpha moves */
	for (int i = 0; i < 10; i++)
		sender_ack(&s, SMSS, i < 5);
	alpha = (double)s.cc.algo.dctcp.alpha / (1 << 20);
	assert_true(alpha > 0.9687 && alpha < 0.9688); /* 15/16 + 0.5/16 */
	/* Ten windows unmarked: alpha * (15/16)^10. */
	for (int w = 0; w < 10; w++)
		sender_round(&s);
	alpha = (double)s.cc.algo.dctcp.alpha / (1 << 20);
	assert_true(alpha > 0.9687 * 0.5243 - 0.002 && alpha < 0.9687 * 0.5243 + 0.002);
}

/* RFC 8257 3.3 step 9 and 3.5: an echo cuts cwnd * alpha / 2; a loss halves FlightSize. */
static void test_dctcp_cuts(void **state)
{
	struct sender s;
	double alpha;
	uint32_t before;

	(void)state;
	sender_init(&s, TCP_CC_DCTCP, 100, 100 * US);
	s.cc.algo.dctcp.alpha = 1u << 18; /* 0.25 */
	s.cc.algo.dctcp.started = true;
	s.cc.algo.dctcp.window_end = s.nxt + 1000000; /* this ACK does not end the window */
	before = s.cc.cwnd;
	sender_ack(&s, SMSS, true);
	alpha = 0.25;
	assert_int_equal(s.cc.cwnd, (uint32_t)(before * (1 - alpha / 2)));
	assert_int_equal(s.cc.ssthresh, s.cc.cwnd);

	sender_init(&s, TCP_CC_DCTCP, 100, 100 * US);
	s.cc.algo.dctcp.alpha = 1u << 18;
	sender_loss(&s);
	assert_int_equal(s.cc.ssthresh, 50 * SMSS);
}

/*
 * RFC 3168 6.1.2 (NewReno): an echo halves the window as a loss would,
 * once per window of data; not during a loss recovery; the ACK carrying
 * it does not grow the window first.
 */
static void test_ece_once_per_window(void **state)
{
	struct sender s;
	uint32_t first_window_end;

	(void)state;
	sender_init(&s, TCP_CC_NEWRENO, 20, 100 * US);
	s.cc.ssthresh = UINT32_MAX; /* slow start: the ACK would add SMSS */
	sender_ack(&s, SMSS, true);
	/*
	 * FlightSize / 2, the flight as the ACK left it (refilled to the 20 segments cwnd allowed).
	 */
	assert_int_equal(s.cc.ssthresh, 10 * SMSS);
	assert_int_equal(s.cc.cwnd, 10 * SMSS);
	first_window_end = s.cc.ecn_recover;
	/* More echoes for the same window: nothing. */
	while (s.una + SMSS <= first_window_end) {
		assert_false(tcp_cc_on_ece(&s.cc, s.una + SMSS, s.nxt, s.nxt - s.una));
		sender_ack(&s, SMSS, false);
	}
	/* Past it: again. */
	sender_ack(&s, SMSS, false);
	assert_true(tcp_cc_on_ece(&s.cc, s.una, s.nxt, s.nxt - s.una));

	/* In recovery the loss response stands. */
	sender_init(&s, TCP_CC_NEWRENO, 20, 100 * US);
	assert_true(tcp_cc_enter_recovery(&s.cc, s.una, s.nxt, s.nxt - s.una));
	assert_false(tcp_cc_on_ece(&s.cc, s.una, s.nxt, s.nxt - s.una));
	assert_int_equal(s.cc.cwnd, 10 * SMSS);
}

/*
 * The once-per-window guard is spent once SND.UNA passes it: an echo 2^31
 * bytes later (a fast connection's 2 GiB with no reduction between) still
 * cuts, where a guard left to a modular comparison would read as not
 * passed for the next 2 GiB and ignore every echo.
 */
static void test_ece_guard_spent(void **state)
{
	struct sender s;
	uint32_t una;

	(void)state;
	sender_init(&s, TCP_CC_NEWRENO, 20, 100 * US);
	assert_true(tcp_cc_on_ece(&s.cc, s.una, s.nxt, s.cc.cwnd));
	sender_ack(&s, s.cc.ecn_recover - s.una + SMSS, false); /* past the guard */
	una = s.una + 0x80000000u;
	assert_true(tcp_cc_on_ece(&s.cc, una, una + s.cc.cwnd, s.cc.cwnd));
}

/* A slow-start round whose every ACK measures @rtt. */
static void ss_round(struct sender *s, uint64_t rtt)
{
	s->sample = rtt;
	sender_round(s);
}

/* A sender at 10 segments in its first slow start, HyStart++ with RFC 9406's bounds. */
static void hystart_sender(struct sender *s, enum tcp_cc_algo algo)
{
	sender_init(s, algo, 10, 10 * MS);
	tcp_hystart_init(&s->cc.hs, TCP_HYSTART_MIN_RTT_THRESH_NS, TCP_HYSTART_MAX_RTT_THRESH_NS);
}

/* Two rounds at 10 ms, one at 14 ms: in CSS (the test below shows each step). */
static void into_css(struct sender *s, enum tcp_cc_algo algo)
{
	hystart_sender(s, algo);
	ss_round(s, 10 * MS);
	ss_round(s, 10 * MS);
	ss_round(s, 14 * MS);
	assert_int_equal(s->cc.hs.phase, TCP_HYSTART_CSS);
}

/*
 * RFC 9406 4.2 for each algorithm: two rounds at 10 ms, then a round at
 * 14 ms (RttThresh = max(4 ms, min(10 ms / 8, 16 ms)) = 4 ms above): CSS
 * from that round's eighth sample, cwnd growing a quarter as fast; after
 * CSS_ROUNDS rounds of CSS, congestion avoidance with ssthresh = cwnd.
 */
static void test_hystart_css_then_avoidance(void **state)
{
	(void)state;
	for (int algo = 0; algo < TCP_CC_ALGO_COUNT; algo++) {
		struct sender s;

		hystart_sender(&s, (enum tcp_cc_algo)algo);
		ss_round(&s, 10 * MS);
		ss_round(&s, 10 * MS);
		assert_int_equal(s.cc.cwnd, 40 * SMSS); /* standard slow start */
		assert_int_equal(s.cc.hs.phase, TCP_HYSTART_SS);
		ss_round(&s, 14 * MS);
		assert_int_equal(s.cc.hs.phase, TCP_HYSTART_CSS);
		assert_int_equal(s.cc.hs.css_entries, 1);
		/*
		 * About ten ACKs at a full SMSS (HyStart++'s round began an ACK
		 * or two into this one), the rest of the round at a quarter.
		 */
		assert_true(s.cc.cwnd > 52 * SMSS && s.cc.cwnd < 60 * SMSS);
		struct sender one = s; /* one more ACK, on a copy: the rounds stay whole */

		sender_ack(&one, SMSS, false);
		assert_int_equal(one.cc.cwnd, s.cc.cwnd + SMSS / 4);
		assert_int_equal(s.cc.ssthresh, UINT32_MAX);
		/* Each round begins one more of CSS; the fifth to begin ends it. */
		for (int r = 0; r < 4; r++) {
			ss_round(&s, 14 * MS);
			assert_int_equal(s.cc.hs.phase, TCP_HYSTART_CSS);
			assert_int_equal(s.cc.hs.css_rounds, r + 1);
		}
		ss_round(&s, 14 * MS);
		assert_int_equal(s.cc.hs.phase, TCP_HYSTART_DONE);
		assert_int_equal(s.cc.hs.exits, 1);
		assert_true(s.cc.ssthresh < UINT32_MAX);
		assert_true(s.cc.cwnd >= s.cc.ssthresh && s.cc.cwnd - s.cc.ssthresh <= SMSS);
		/* Congestion avoidance from here: a round adds about one segment. */
		uint32_t before = s.cc.cwnd;

		ss_round(&s, 14 * MS);
		assert_true(s.cc.cwnd - before <= 2 * SMSS);
		assert_int_equal(s.cc.hs.phase, TCP_HYSTART_DONE);
	}
}

/*
 * RFC 9406 4.2: in CSS, a round whose minimum falls below the one that
 * began CSS means the rise was not the queue: back to slow start.
 */
static void test_hystart_css_spurious(void **state)
{
	struct sender s;

	(void)state;
	into_css(&s, TCP_CC_NEWRENO);
	ss_round(&s, 10 * MS);
	assert_int_equal(s.cc.hs.phase, TCP_HYSTART_SS);
	assert_int_equal(s.cc.hs.css_spurious, 1);
	/* Slow start's growth again: a full SMSS an ACK. */
	struct sender one = s;

	sender_ack(&one, SMSS, false);
	assert_int_equal(one.cc.cwnd, s.cc.cwnd + SMSS);
	ss_round(&s, 10 * MS);
	assert_int_equal(s.cc.hs.phase, TCP_HYSTART_SS);
	assert_int_equal(s.cc.ssthresh, UINT32_MAX);
}

/*
 * RttThresh = clamp(lastRoundMinRTT / 8, min, max): 4 ms at 10 ms (a rise
 * of 3.9 ms is not enough), 12.5 ms at 100 ms, 16 ms at 200 ms, and the
 * configured bounds: 20 us at 100 us with bounds 20..200 us.
 */
static void test_hystart_threshold(void **state)
{
	static const struct {
		uint64_t base, below, at, lo, hi;
	} c[] = {
	    {10 * MS, 13900 * US, 14 * MS, 0, 0},
	    {100 * MS, 112 * MS, 112500 * US, 0, 0},
	    {200 * MS, 215 * MS, 216 * MS, 0, 0},
	    {100 * US, 119 * US, 120 * US, 20 * US, 200 * US},
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		for (int hit = 0; hit < 2; hit++) {
			struct sender s;

			hystart_sender(&s, TCP_CC_NEWRENO);
			if (c[i].lo)
				tcp_hystart_init(&s.cc.hs, c[i].lo, c[i].hi);
			ss_round(&s, c[i].base);
			ss_round(&s, c[i].base);
			ss_round(&s, hit ? c[i].at : c[i].below);
			assert_int_equal(s.cc.hs.phase, hit ? TCP_HYSTART_CSS : TCP_HYSTART_SS);
		}
	}
}

/* Fewer than N_RTT_SAMPLE samples in a round decide nothing, however large the rise. */
static void test_hystart_needs_samples(void **state)
{
	struct sender s;

	(void)state;
	hystart_sender(&s, TCP_CC_NEWRENO);
	ss_round(&s, 10 * MS);
	ss_round(&s, 10 * MS);
	/* ACKs without a sample until HyStart++'s next round begins, then 7 of 50 ms. */
	uint32_t end = s.cc.hs.window_end;

	s.sample = 0;
	while (s.cc.hs.window_end == end)
		sender_ack(&s, SMSS, false);
	s.sample = 50 * MS;
	for (int i = 0; i < 7; i++)
		sender_ack(&s, SMSS, false);
	s.sample = 0;
	for (int i = 0; i < 30; i++)
		sender_ack(&s, SMSS, false);
	assert_int_equal(s.cc.hs.samples, 7);
	assert_int_equal(s.cc.hs.phase, TCP_HYSTART_SS);
}

/*
 * RFC 9406 4.2: only a rise of the round's minimum RTT by RttThresh
 * counts. A round whose minimum fell (20 ms, then 10 ms: a queue that
 * drained) is no rise, however the difference is taken: slow start goes
 * on doubling, CSS is not entered.
 */
static void test_hystart_fall_is_no_rise(void **state)
{
	struct sender s;

	(void)state;
	hystart_sender(&s, TCP_CC_NEWRENO);
	ss_round(&s, 20 * MS);
	ss_round(&s, 20 * MS);
	ss_round(&s, 10 * MS);
	assert_int_equal(s.cc.hs.phase, TCP_HYSTART_SS);
	assert_int_equal(s.cc.hs.css_entries, 0);
	assert_int_equal(s.cc.cwnd, 80 * SMSS); /* three doublings */
	assert_int_equal(s.cc.ssthresh, UINT32_MAX);
}

/*
 * RFC 9406 4.2, 4.3: a loss in CSS, or a timeout in slow start, ends
 * HyStart++ for good: the next slow start is the standard one. Off
 * (a zero threshold): the rise changes nothing.
 */
static void test_hystart_ended_by_loss_or_off(void **state)
{
	struct sender s;

	(void)state;
	into_css(&s, TCP_CC_CUBIC);
	sender_loss(&s);
	assert_int_equal(s.cc.hs.phase, TCP_HYSTART_DONE);
	assert_int_equal(s.cc.hs.exits, 0);

	hystart_sender(&s, TCP_CC_NEWRENO);
	ss_round(&s, 10 * MS);
	tcp_cc_on_timeout(&s.cc, s.nxt - s.una, s.nxt);
	assert_int_equal(s.cc.hs.phase, TCP_HYSTART_DONE);
	s.cc.ssthresh = 1000 * SMSS; /* room for rounds of 8 samples and more */
	s.nxt = s.una + s.cc.cwnd;
	while (s.cc.cwnd < 16 * SMSS)
		ss_round(&s, 10 * MS);
	uint32_t at = s.cc.cwnd;

	ss_round(&s, 30 * MS);
	ss_round(&s, 30 * MS);
	assert_int_equal(s.cc.cwnd, 4 * at); /* two doublings: standard slow start */
	assert_int_equal(s.cc.hs.css_entries, 0);

	hystart_sender(&s, TCP_CC_NEWRENO);
	tcp_hystart_init(&s.cc.hs, 0, 0);
	ss_round(&s, 10 * MS);
	ss_round(&s, 10 * MS);
	ss_round(&s, 30 * MS);
	assert_int_equal(s.cc.hs.phase, TCP_HYSTART_OFF);
	assert_int_equal(s.cc.cwnd, 80 * SMSS);
}

/*
 * A reduction proved spurious (tcp_cc_undo()) gives the first slow start
 * back with HyStart++ where it was (RFC 9406 4.3: it watches while
 * ssthresh has its initial value); an idle restart in CSS starts slow
 * start over from a fresh round, not the rest of a stale CSS.
 */
static void test_hystart_after_undo_and_idle(void **state)
{
	struct sender s;

	(void)state;
	into_css(&s, TCP_CC_CUBIC);
	uint32_t rounds = s.cc.hs.css_rounds;

	tcp_cc_on_timeout(&s.cc, s.nxt - s.una, s.nxt);
	assert_int_equal(s.cc.hs.phase, TCP_HYSTART_DONE);
	tcp_cc_undo(&s.cc);
	assert_int_equal(s.cc.ssthresh, UINT32_MAX);
	assert_int_equal(s.cc.hs.phase, TCP_HYSTART_CSS);
	assert_int_equal(s.cc.hs.css_rounds, rounds);
	assert_int_equal(s.cc.hs.css_entries, 1); /* counts are not undone */

	tcp_cc_on_idle(&s.cc, 0);
	assert_int_equal(s.cc.hs.phase, TCP_HYSTART_SS);
	assert_false(s.cc.hs.round_open);
	assert_int_equal(s.cc.hs.last_round_min_ns, UINT64_MAX);
	assert_int_equal(s.cc.hs.css_entries, 1);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_algo_by_name("newreno"), TCP_CC_NEWRENO);
	assert_int_equal(tcp_cc_algo_by_name("reno"), TCP_CC_NEWRENO);
	assert_int_equal(tcp_cc_algo_by_name("CUBIC"), TCP_CC_CUBIC);
	assert_int_equal(tcp_cc_algo_by_name("dctcp"), TCP_CC_DCTCP);
	assert_int_equal(tcp_cc_algo_by_name("bbr"), -1);
	assert_string_equal(tcp_cc_algo_name(TCP_CC_CUBIC), "cubic");
	assert_null(tcp_cc_algo_name(TCP_CC_ALGO_COUNT));
	assert_true(tcp_cc_dctcp_ops.needs_ecn);
	assert_false(tcp_cc_cubic_ops.needs_ecn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cubic_reduction),
	    cmocka_unit_test(test_cubic_reduction_from_flight),
	    cmocka_unit_test(test_cubic_target_clamped),
	    cmocka_unit_test(test_cubic_fast_convergence),
	    cmocka_unit_test(test_cubic_concave_plateau_convex),
	    cmocka_unit_test(test_cubic_k),
	    cmocka_unit_test(test_cubic_reno_friendly),
	    cmocka_unit_test(test_cubic_after_timeout),
	    cmocka_unit_test(test_cubic_mss_change_keeps_growing),
	    cmocka_unit_test(test_cubic_timeout_in_recovery_keeps_ssthresh),
	    cmocka_unit_test(test_cubic_idle_restarts_epoch),
	    cmocka_unit_test(test_dctcp_alpha),
	    cmocka_unit_test(test_dctcp_cuts),
	    cmocka_unit_test(test_ece_once_per_window),
	    cmocka_unit_test(test_ece_guard_spent),
	    cmocka_unit_test(test_hystart_css_then_avoidance),
	    cmocka_unit_test(test_hystart_css_spurious),
	    cmocka_unit_test(test_hystart_threshold),
	    cmocka_unit_test(test_hystart_needs_samples),
	    cmocka_unit_test(test_hystart_fall_is_no_rise),
	    cmocka_unit_test(test_hystart_ended_by_loss_or_off),
	    cmocka_unit_test(test_hystart_after_undo_and_idle),
	    cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests_name("tcp/cc_algos", tests, NULL, NULL);
}
