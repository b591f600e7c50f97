/*
 * test_tcp_cc.c - NewReno congestion control (tcp/tcp_cc.c): the initial
 * window, slow start with appropriate byte counting, the switch to
 * congestion avoidance and its growth of one SMSS per window, fast
 * retransmit on the third duplicate ACK, inflation, partial and full ACKs,
 * RFC 6582's guard against re-entering recovery, the RTO response, the
 * restart after idle, Proportional Rate Reduction's arithmetic (RFC 6937)
 * in a SACK-based recovery, and all of it across the 2^32 sequence wrap. The
 * tests play the sender: they keep snd_una and snd_nxt and pass what
 * tcp_cc.h asks for (flight = snd_nxt - snd_una before the ACK).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tcp/tcp_cc.h"

#define SMSS 1000u

/*
 * A connection with SMSS = 1000 that has @flight bytes outstanding from
 * @una, and cwnd = @cwnd, ssthresh = @ssthresh.
 */
struct conn {
	struct tcp_cc cc;
	uint32_t una, nxt;
};

static void conn_init(struct conn *c, uint32_t una, uint32_t flight, uint32_t cwnd,
		      uint32_t ssthresh)
{
	tcp_cc_init(&c->cc, SMSS, 0, TCP_CC_NEWRENO);
	c->cc.cwnd = cwnd;
	c->cc.ssthresh = ssthresh;
	c->una = una;
	c->nxt = una + flight;
}

/* A cumulative ACK for @acked new bytes. */
static enum tcp_cc_action conn_ack(struct conn *c, uint32_t acked)
{
	uint32_t flight = c->nxt - c->una;

	c->una += acked;
	return tcp_cc_on_ack(
	    &c->cc, &(struct tcp_cc_ack){
			.ack = c->una, .acked = acked, .flight = flight, .snd_nxt = c->nxt});
}

static enum tcp_cc_action conn_dupack(struct conn *c)
{
	return tcp_cc_on_dupack(&c->cc, c->una, c->nxt, c->nxt - c->una);
}

/*
 * 20 segments outstanding from @una, cwnd 20000; three duplicate ACKs
 * enter recovery: ssthresh = 10000, cwnd = 13000, recover = una + 20000.
 */
static void conn_enter_recovery(struct conn *c, uint32_t una)
{
	conn_init(c, una, 20 * SMSS, 20 * SMSS, UINT32_MAX);
	assert_int_equal(conn_dupack(c), TCP_CC_NONE);
	assert_int_equal(conn_dupack(c), TCP_CC_NONE);
	assert_int_equal(conn_dupack(c), TCP_CC_RETRANSMIT_FIRST);
	assert_true(c->cc.in_recovery);
	assert_int_equal(c->cc.ssthresh, 10 * SMSS);
	assert_int_equal(c->cc.cwnd, 13 * SMSS);
	assert_int_equal(c->cc.recover, una + 20 * SMSS);
}

/* RFC 5681 3.1: IW by SMSS (whole segments); iw_segments overrides. */
static void test_initial_window(void **state)
{
	static const struct {
		uint32_t smss;
		unsigned segs;
		uint32_t iw;
	} t[] = {
	    {536, 0, 2144},		  /* <= 1095: 4 segments */
	    {1095, 0, 4380},		  /* 4 * 1095 */
	    {1096, 0, 3288},		  /* > 1095: 3 segments */
	    {1448, 0, 4344},		  /* 1500 MTU with timestamps: 3 segments */
	    {1460, 0, 4380},		  /* 1500 MTU: 3 segments, = RFC 3390's 4380 */
	    {2190, 0, 6570},		  /* <= 2190: still 3 segments */
	    {2191, 0, 4382},		  /* > 2190: 2 segments */
	    {8960, 0, 17920},		  /* 9000 MTU: 2 segments */
	    {1460, 10, 14600},		  /* RFC 6928-style override */
	    {8960, 1u << 20, UINT32_MAX}, /* saturates */
	};
	struct tcp_cc cc;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(tcp_cc_initial_window(t[i].smss, t[i].segs), t[i].iw);
		tcp_cc_init(&cc, t[i].smss, t[i].segs, TCP_CC_NEWRENO);
		assert_int_equal(cc.cwnd, t[i].iw);
		assert_int_equal(cc.smss, t[i].smss);
		/* RFC 5681 3.1: initial ssthresh arbitrarily high. */
		assert_int_equal(cc.ssthresh, UINT32_MAX);
		assert_false(cc.in_recovery);
		assert_int_equal(cc.dupacks, 0);
	}
}

/* RFC 5681 3.1 eq. 2 with RFC 3465 2.2: slow start adds the bytes acknowledged per ACK. */
static void test_slow_start_per_ack(void **state)
{
	struct conn c;

	(void)state;
	conn_init(&c, 1000, 4 * SMSS, 4 * SMSS, UINT32_MAX);
	assert_int_equal(conn_ack(&c, SMSS), TCP_CC_NONE);
	assert_int_equal(c.cc.cwnd, 5 * SMSS);
	/* A delayed ACK for two segments counts both (byte counting). */
	assert_int_equal(conn_ack(&c, 2 * SMSS), TCP_CC_NONE);
	assert_int_equal(c.cc.cwnd, 7 * SMSS);
	/* A small ACK counts its bytes, not a whole segment. */
	assert_int_equal(conn_ack(&c, 100), TCP_CC_NONE);
	assert_int_equal(c.cc.cwnd, 7 * SMSS + 100);
}

/* RFC 3465 2.2: in slow start one ACK grows cwnd by at most L = 2*SMSS. */
static void test_slow_start_byte_counting_cap(void **state)
{
	struct conn c;

	(void)state;
	conn_init(&c, 1000, 10 * SMSS, 10 * SMSS, UINT32_MAX);
	conn_ack(&c, 5 * SMSS);
	assert_int_equal(c.cc.cwnd, 12 * SMSS);
	conn_ack(&c, 2 * SMSS + 1);
	assert_int_equal(c.cc.cwnd, 14 * SMSS);
}

/*
 * RFC 5681 3.1: slow start while cwnd < ssthresh, congestion avoidance
 * once cwnd >= ssthresh (either is allowed at equality; this is CA).
 */
static void test_transition_to_ca(void **state)
{
	struct conn c;

	(void)state;
	conn_init(&c, 1000, 10 * SMSS, 4 * SMSS, 6 * SMSS);
	conn_ack(&c, SMSS);
	assert_int_equal(c.cc.cwnd, 5 * SMSS); /* slow start */
	conn_ack(&c, SMSS);
	assert_int_equal(c.cc.cwnd, 6 * SMSS); /* slow start reaches ssthresh */
	conn_ack(&c, SMSS);
	assert_int_equal(c.cc.cwnd, 6 * SMSS); /* now congestion avoidance */
	assert_int_equal(c.cc.bytes_acked, SMSS);
}

/* RFC 5681 3.1 / RFC 3465 2.1: in CA, cwnd grows by SMSS once cwnd bytes are acknowledged. */
static void test_ca_one_smss_per_window(void **state)
{
	struct conn c;

	(void)state;
	conn_init(&c, 1000, 50 * SMSS, 10 * SMSS, 10 * SMSS);
	for (int i = 0; i < 9; i++) {
		conn_ack(&c, SMSS);
		assert_int_equal(c.cc.cwnd, 10 * SMSS);
	}
	assert_int_equal(c.cc.bytes_acked, 9 * SMSS);
	conn_ack(&c, SMSS);
	assert_int_equal(c.cc.cwnd, 11 * SMSS);
	assert_int_equal(c.cc.bytes_acked, 0);
	/* The next window is 11 segments. */
	for (int i = 0; i < 10; i++)
		conn_ack(&c, SMSS);
	assert_int_equal(c.cc.cwnd, 11 * SMSS);
	conn_ack(&c, SMSS);
	assert_int_equal(c.cc.cwnd, 12 * SMSS);
	/* Partial-segment ACKs count their bytes: 24 * 500 = 12000 = cwnd. */
	for (int i = 0; i < 23; i++)
		conn_ack(&c, SMSS / 2);
	assert_int_equal(c.cc.cwnd, 12 * SMSS);
	conn_ack(&c, SMSS / 2);
	assert_int_equal(c.cc.cwnd, 13 * SMSS);
}

/* RFC 5681 3.1: a stretch ACK of three windows still adds only one SMSS. */
static void test_ca_stretch_ack(void **state)
{
	struct conn c;

	(void)state;
	conn_init(&c, 1000, 40 * SMSS, 10 * SMSS, 10 * SMSS);
	conn_ack(&c, 30 * SMSS);
	assert_int_equal(c.cc.cwnd, 11 * SMSS);
	assert_true(c.cc.bytes_acked < c.cc.cwnd);
}

/* RFC 5681 3.2 step 1: the first and second duplicate ACKs leave cwnd and ssthresh alone. */
static void test_dupacks_1_2_do_nothing(void **state)
{
	struct conn c;

	(void)state;
	conn_init(&c, 1000, 20 * SMSS, 20 * SMSS, 30 * SMSS);
	assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_int_equal(c.cc.dupacks, 2);
	assert_int_equal(c.cc.cwnd, 20 * SMSS);
	assert_int_equal(c.cc.ssthresh, 30 * SMSS);
	assert_false(c.cc.in_recovery);
	/* A new ACK restarts the count: two more are again only two. */
	conn_ack(&c, SMSS);
	assert_int_equal(c.cc.dupacks, 0);
	assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_false(c.cc.in_recovery);
}

/*
 * RFC 5681 3.2 steps 2-3, RFC 6582 3.2 steps 1-2: the third duplicate ACK
 * sets ssthresh = max(FlightSize/2, 2*SMSS), recover = snd_nxt,
 * cwnd = ssthresh + 3*SMSS and retransmits, once; later ones do not.
 */
static void test_third_dupack_enters_once(void **state)
{
	struct conn c;

	(void)state;
	conn_enter_recovery(&c, 5000); /* checks the entry values */
	for (int i = 0; i < 20; i++)
		assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_true(c.cc.in_recovery);
	assert_int_equal(c.cc.ssthresh, 10 * SMSS);
	assert_int_equal(c.cc.recover, 25000);
}

/* RFC 5681 3.1 eq. 4: ssthresh is at least 2*SMSS, even for a small flight. */
static void test_ssthresh_floor(void **state)
{
	struct conn c;

	(void)state;
	conn_init(&c, 1000, 3 * SMSS, 10 * SMSS, UINT32_MAX);
	conn_dupack(&c);
	conn_dupack(&c);
	assert_int_equal(conn_dupack(&c), TCP_CC_RETRANSMIT_FIRST);
	assert_int_equal(c.cc.ssthresh, 2 * SMSS); /* not 1500 */
	assert_int_equal(c.cc.cwnd, 5 * SMSS);
}

/* RFC 5681 3.2 step 4, RFC 6582 3.2 step 3: each further dupack inflates cwnd by SMSS. */
static void test_inflation(void **state)
{
	struct conn c;

	(void)state;
	conn_enter_recovery(&c, 5000);
	assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_int_equal(c.cc.cwnd, 14 * SMSS);
	assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_int_equal(c.cc.cwnd, 15 * SMSS);
	assert_int_equal(c.cc.ssthresh, 10 * SMSS);
}

/*
 * RFC 6582 3.2 step 5, partial ACK: retransmit the first unacknowledged
 * segment, deflate cwnd by the bytes acknowledged, add back SMSS if that
 * was at least SMSS, stay in recovery.
 */
static void test_partial_ack(void **state)
{
	struct conn c;

	(void)state;
	conn_enter_recovery(&c, 5000); /* cwnd 13000, recover 25000 */
	conn_dupack(&c);
	conn_dupack(&c); /* cwnd 15000 */
	/* 3000 acked: 15000 - 3000 + 1000 = 13000 */
	assert_int_equal(conn_ack(&c, 3 * SMSS), TCP_CC_RETRANSMIT_FIRST);
	assert_int_equal(c.cc.cwnd, 13 * SMSS);
	assert_true(c.cc.in_recovery);
	/* 500 acked (< SMSS): 13000 - 500, nothing added back */
	assert_int_equal(conn_ack(&c, SMSS / 2), TCP_CC_RETRANSMIT_FIRST);
	assert_int_equal(c.cc.cwnd, 12 * SMSS + SMSS / 2);
	assert_true(c.cc.in_recovery);
	assert_int_equal(c.cc.ssthresh, 10 * SMSS);
	/* Dupacks after a partial ACK keep inflating (RFC 6582 3.2 step 3). */
	assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_int_equal(c.cc.cwnd, 13 * SMSS + SMSS / 2);
	/* Exactly SMSS acked is "at least one SMSS": 13500 - 1000 + 1000. */
	assert_int_equal(conn_ack(&c, SMSS), TCP_CC_RETRANSMIT_FIRST);
	assert_int_equal(c.cc.cwnd, 13 * SMSS + SMSS / 2);
}

/*
 * RFC 6582 3.2 step 5, full ACK: exit recovery with
 * cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS), FlightSize being
 * what is outstanding after the ACK.
 */
static void test_full_ack_exits(void **state)
{
	struct conn c;

	(void)state;
	/* Nothing left outstanding: min(10000, max(0, 1000) + 1000) = 2000. */
	conn_enter_recovery(&c, 5000);
	assert_int_equal(conn_ack(&c, 20 * SMSS), TCP_CC_NONE);
	assert_false(c.cc.in_recovery);
	assert_int_equal(c.cc.cwnd, 2 * SMSS);
	assert_int_equal(c.cc.dupacks, 0);

	/* 8000 new bytes sent during recovery: min(10000, 8000 + 1000) = 9000. */
	conn_enter_recovery(&c, 5000);
	c.nxt += 8 * SMSS;
	assert_int_equal(conn_ack(&c, 20 * SMSS), TCP_CC_NONE);
	assert_false(c.cc.in_recovery);
	assert_int_equal(c.cc.cwnd, 9 * SMSS);

	/* 15000 outstanding after: min(10000, 16000) = ssthresh. */
	conn_enter_recovery(&c, 5000);
	c.nxt += 15 * SMSS;
	assert_int_equal(conn_ack(&c, 20 * SMSS), TCP_CC_NONE);
	assert_int_equal(c.cc.cwnd, 10 * SMSS);

	/* After exit, cwnd < ssthresh: the next ACK is slow start again. */
	conn_enter_recovery(&c, 5000);
	c.nxt += 8 * SMSS;
	conn_ack(&c, 20 * SMSS); /* cwnd 9000 */
	conn_ack(&c, SMSS);
	assert_int_equal(c.cc.cwnd, 10 * SMSS);
}

/*
 * RFC 6582 3.2 step 1: after a timeout, duplicate ACKs that do not cover
 * more than recover (the retransmitted old data being acknowledged twice)
 * must not start fast retransmit or touch ssthresh; once an ACK passes
 * recover they may.
 */
static void test_step1_guard_after_timeout(void **state)
{
	struct conn c;

	(void)state;
	conn_init(&c, 5000, 20 * SMSS, 20 * SMSS, UINT32_MAX);
	tcp_cc_on_timeout(&c.cc, c.nxt - c.una, c.nxt);
	assert_int_equal(c.cc.recover, 25000);
	assert_int_equal(c.cc.ssthresh, 10 * SMSS);
	/* go-back-N: some of the old data is acknowledged... */
	conn_ack(&c, SMSS);
	assert_int_equal(c.cc.cwnd, 2 * SMSS);
	/* ...then duplicates below recover: nothing. */
	for (int i = 0; i < 6; i++)
		assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_false(c.cc.in_recovery);
	assert_int_equal(c.cc.ssthresh, 10 * SMSS);
	assert_int_equal(c.cc.cwnd, 2 * SMSS);

	/* An ACK of exactly recover covers recover, not more: still guarded. */
	conn_ack(&c, 19 * SMSS);
	assert_int_equal(c.una, c.cc.recover);
	c.nxt = c.una + 5 * SMSS;
	for (int i = 0; i < 3; i++)
		assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_false(c.cc.in_recovery);

	/* Past recover, the third dupack enters recovery again. */
	conn_ack(&c, SMSS);
	conn_dupack(&c);
	conn_dupack(&c);
	assert_int_equal(conn_dupack(&c), TCP_CC_RETRANSMIT_FIRST);
	assert_true(c.cc.in_recovery);
}

/* RFC 6582 3.2 step 1: the same guard after a recovery that ended with a full ACK. */
static void test_step1_guard_after_recovery(void **state)
{
	struct conn c;

	(void)state;
	conn_enter_recovery(&c, 5000);
	conn_ack(&c, 20 * SMSS); /* full ACK, una = recover */
	c.nxt = c.una + 4 * SMSS;
	for (int i = 0; i < 3; i++)
		assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_false(c.cc.in_recovery);
}

/*
 * SACK recovery ends with the full ACK of its recovery point; a loss found
 * after that (the first segment sent during the recovery, say) belongs to
 * a new window and enters a recovery of its own, with its own cut.
 */
static void test_sack_recovery_again_at_recover(void **state)
{
	struct conn c;

	(void)state;
	conn_init(&c, 5000, 20 * SMSS, 20 * SMSS, UINT32_MAX);
	assert_true(tcp_cc_enter_recovery(&c.cc, c.una, c.nxt, c.nxt - c.una));
	assert_int_equal(c.cc.ssthresh, 10 * SMSS);
	assert_false(tcp_cc_enter_recovery(&c.cc, c.una, c.nxt, c.nxt - c.una)); /* in it */
	conn_ack(&c, 20 * SMSS); /* full ACK: una = recover */
	assert_false(c.cc.in_recovery);
	c.nxt = c.una + 10 * SMSS;
	assert_true(tcp_cc_enter_recovery(&c.cc, c.una, c.nxt, c.nxt - c.una));
	assert_true(c.cc.in_recovery);
	assert_int_equal(c.cc.ssthresh, 5 * SMSS);
	assert_int_equal(c.cc.recover, c.nxt);
}

/*
 * RFC 3168 6.1.2: the window is reduced once per window of data for drops
 * and echoes together. An echo cut ssthresh to 10000 (half of cwnd); a
 * loss found in the same window (SND.UNA not past the echo's point) enters
 * recovery but keeps that ssthresh, though FlightSize / 2 would be 15000.
 */
static void test_loss_after_echo_same_window(void **state)
{
	struct conn c;

	(void)state;
	conn_init(&c, 5000, 30 * SMSS, 20 * SMSS, UINT32_MAX);
	assert_true(tcp_cc_on_ece(&c.cc, c.una, c.nxt, c.cc.cwnd));
	assert_int_equal(c.cc.ssthresh, 10 * SMSS);
	assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_int_equal(conn_dupack(&c), TCP_CC_RETRANSMIT_FIRST);
	assert_true(c.cc.in_recovery);
	assert_int_equal(c.cc.ssthresh, 10 * SMSS);
	assert_int_equal(c.cc.cwnd, 13 * SMSS);
}

/*
 * RFC 5681 3.1 eq. 4 and the loss window, RFC 6582 3.2 ("after a
 * retransmit timeout"): ssthresh = max(FlightSize/2, 2*SMSS), cwnd = SMSS,
 * recovery left, recover = snd_nxt, dupacks cleared. A timeout inside a
 * recovery keeps the recovery's ssthresh (that window was cut already;
 * Linux's tcp_enter_loss() does the same).
 */
static void test_timeout_resets(void **state)
{
	struct conn c;

	(void)state;
	conn_enter_recovery(&c, 5000);
	conn_dupack(&c);
	c.nxt += 6 * SMSS; /* sent during recovery: snd_nxt = 31000 */
	tcp_cc_on_timeout(&c.cc, 26 * SMSS, c.nxt);
	assert_int_equal(c.cc.ssthresh, 10 * SMSS);
	assert_int_equal(c.cc.cwnd, SMSS);
	assert_false(c.cc.in_recovery);
	assert_int_equal(c.cc.recover, 31000);
	assert_int_equal(c.cc.dupacks, 0);
	assert_int_equal(c.cc.bytes_acked, 0);
	/* Outside a recovery: eq. 4. */
	conn_init(&c, 5000, 26 * SMSS, 30 * SMSS, UINT32_MAX);
	tcp_cc_on_timeout(&c.cc, 26 * SMSS, c.nxt);
	assert_int_equal(c.cc.ssthresh, 13 * SMSS);
	/* A small flight: ssthresh floor 2*SMSS. */
	conn_init(&c, 5000, SMSS, 10 * SMSS, UINT32_MAX);
	tcp_cc_on_timeout(&c.cc, SMSS, c.nxt);
	assert_int_equal(c.cc.ssthresh, 2 * SMSS);
	assert_int_equal(c.cc.cwnd, SMSS);
}

/*
 * RFC 5681 3.1, after eq. 4: when the segment was already retransmitted by
 * the timer, ssthresh is held constant; an ACK in between makes the next
 * RTO a first one again.
 */
static void test_repeated_timeout_holds_ssthresh(void **state)
{
	struct conn c;

	(void)state;
	conn_init(&c, 5000, 20 * SMSS, 20 * SMSS, UINT32_MAX);
	tcp_cc_on_timeout(&c.cc, 20 * SMSS, c.nxt);
	assert_int_equal(c.cc.ssthresh, 10 * SMSS);
	/* The retransmission is lost too; only it is in flight now. */
	tcp_cc_on_timeout(&c.cc, SMSS, c.nxt);
	assert_int_equal(c.cc.ssthresh, 10 * SMSS);
	assert_int_equal(c.cc.cwnd, SMSS);
	/* It gets through; then a new loss halves the new flight. */
	conn_ack(&c, SMSS);
	tcp_cc_on_timeout(&c.cc, 6 * SMSS, c.nxt);
	assert_int_equal(c.cc.ssthresh, 3 * SMSS);
}

/* RFC 5681 4.1: after idle, cwnd = min(cwnd, RW), RW = IW. */
static void test_idle_restart(void **state)
{
	struct tcp_cc cc;

	(void)state;
	tcp_cc_init(&cc, 1460, 0, TCP_CC_NEWRENO);
	cc.cwnd = 100000;
	tcp_cc_on_idle(&cc, 0);
	assert_int_equal(cc.cwnd, 4380);
	/* Never raises a smaller cwnd. */
	cc.cwnd = 1460;
	tcp_cc_on_idle(&cc, 0);
	assert_int_equal(cc.cwnd, 1460);
	/* With an IW override. */
	cc.cwnd = 100000;
	tcp_cc_on_idle(&cc, 10);
	assert_int_equal(cc.cwnd, 14600);
}

/*
 * RFC 9293 3.4 (comparisons modulo 2^32) applied to RFC 6582's recover:
 * recovery entered 10000 bytes below 2^32 with recover wrapped past zero;
 * partial ACKs on both sides of the wrap, the full ACK at recover, the
 * step 1 guard at recover, and re-entry once past it.
 */
static void test_wraparound(void **state)
{
	const uint32_t una = UINT32_MAX - 9999; /* 2^32 - 10000 */
	struct conn c;

	(void)state;
	conn_enter_recovery(&c, una);
	assert_int_equal(c.cc.recover, 10000); /* 2^32 - 10000 + 20000 */
	/* Partial, still below 2^32. */
	assert_int_equal(conn_ack(&c, 5 * SMSS), TCP_CC_RETRANSMIT_FIRST);
	assert_true(c.una > UINT32_MAX - 10000);
	assert_true(c.cc.in_recovery);
	/* Partial, across the wrap: una = 5000 < recover = 10000. */
	assert_int_equal(conn_ack(&c, 10 * SMSS), TCP_CC_RETRANSMIT_FIRST);
	assert_int_equal(c.una, 5000);
	assert_true(c.cc.in_recovery);
	/* Full at recover. */
	assert_int_equal(conn_ack(&c, 5 * SMSS), TCP_CC_NONE);
	assert_false(c.cc.in_recovery);
	/* Guarded at recover... */
	c.nxt = c.una + 10 * SMSS;
	for (int i = 0; i < 3; i++)
		assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_false(c.cc.in_recovery);
	/* ...free past it. */
	conn_ack(&c, SMSS);
	conn_dupack(&c);
	conn_dupack(&c);
	assert_int_equal(conn_dupack(&c), TCP_CC_RETRANSMIT_FIRST);

	/* A timeout just below 2^32 guards dupacks just above it, too. */
	conn_init(&c, UINT32_MAX - 2 * SMSS + 1, 4 * SMSS, 10 * SMSS, UINT32_MAX);
	tcp_cc_on_timeout(&c.cc, 4 * SMSS, c.nxt);
	assert_int_equal(c.cc.recover, 2 * SMSS);
	conn_ack(&c, 3 * SMSS); /* una = 1000, across the wrap, below recover */
	for (int i = 0; i < 3; i++)
		assert_int_equal(conn_dupack(&c), TCP_CC_NONE);
	assert_false(c.cc.in_recovery);
}

/*
 * RFC 6582 3.2 step 1 with modular comparisons: a recover left 2^31 or
 * more bytes behind must not block fast retransmit (it would compare as
 * "ahead" of the ACK).
 */
static void test_stale_recover(void **state)
{
	struct conn c;

	(void)state;
	conn_enter_recovery(&c, 5000);
	conn_ack(&c, 20 * SMSS); /* full */
	c.nxt = c.una + 2 * SMSS;
	conn_ack(&c, SMSS); /* past recover */
	/* 3 GB acknowledged since: una - recover > 2^31. */
	for (int i = 0; i < 3; i++) {
		c.nxt = c.una + 1000000000u + 20 * SMSS;
		conn_ack(&c, 1000000000u);
	}
	assert_true((int32_t)(c.una - c.cc.recover) < 0);
	conn_dupack(&c);
	conn_dupack(&c);
	assert_int_equal(conn_dupack(&c), TCP_CC_RETRANSMIT_FIRST);
	assert_true(c.cc.in_recovery);
}

/*
 * RFC 6937 3.1 in bytes, a SACK-based recovery of 20000 outstanding
 * (ssthresh 10000): above ssthresh the sends follow the deliveries at
 * ssthresh / RecoverFS, rounded up; an entry with nothing delivered still
 * lets the fast retransmit go; below ssthresh, sndcnt is bounded by both
 * ssthresh - pipe and (SSRB) what was delivered and not yet sent plus one
 * SMSS; prr_out counts what went.
 */
static void test_prr_arithmetic(void **state)
{
	struct conn c;

	(void)state;
	conn_init(&c, 5000, 20 * SMSS, 20 * SMSS, UINT32_MAX);
	assert_true(tcp_cc_enter_recovery(&c.cc, c.una, c.nxt, c.nxt - c.una));
	assert_int_equal(c.cc.ssthresh, 10 * SMSS);
	assert_int_equal(c.cc.recover_fs, 20 * SMSS);
	assert_int_equal(c.cc.prr_delivered, 0);
	assert_int_equal(c.cc.prr_out, 0);

	tcp_cc_prr_ack(&c.cc, 0, 19 * SMSS); /* nothing delivered: the fast retransmit */
	assert_int_equal(c.cc.cwnd, 20 * SMSS);
	tcp_cc_prr_sent(&c.cc, SMSS);
	tcp_cc_prr_ack(&c.cc, 1, 20 * SMSS); /* CEIL(1 * 1/2) - 1000 < 0: nothing */
	assert_int_equal(c.cc.cwnd, 20 * SMSS);
	tcp_cc_prr_ack(&c.cc, 2999, 17 * SMSS); /* CEIL(3000 / 2) - 1000 */
	assert_int_equal(c.cc.prr_delivered, 3 * SMSS);
	assert_int_equal(c.cc.cwnd, 17 * SMSS + 500);
	tcp_cc_prr_ack(&c.cc, 1001, 16 * SMSS); /* CEIL(4001 / 2) - 1000 */
	assert_int_equal(c.cc.cwnd, 16 * SMSS + 1001);
	tcp_cc_prr_sent(&c.cc, SMSS);

	/* pipe 6000: MIN(10000 - 6000, MAX(10001 - 2000, 6000) + 1000) */
	tcp_cc_prr_ack(&c.cc, 6000, 6 * SMSS);
	assert_int_equal(c.cc.cwnd, 10 * SMSS);
	tcp_cc_prr_sent(&c.cc, 4 * SMSS);
	/* pipe 2000 after a big delivery: MIN(8000, MAX(13001 - 6000, 3000) + 1000) */
	tcp_cc_prr_ack(&c.cc, 3000, 2 * SMSS);
	assert_int_equal(c.cc.cwnd, 10 * SMSS);
	/* SSRB: all that was delivered went, so one delivered segment lets two go */
	tcp_cc_prr_sent(&c.cc, 7001);
	tcp_cc_prr_ack(&c.cc, SMSS, SMSS);
	assert_int_equal(c.cc.cwnd, SMSS + 2 * SMSS);
}

/*
 * RFC 4015 3 / RFC 9438 4.9: a spurious reduction is taken back to the
 * window before it (never below what grew since), out of recovery; a
 * timeout inside the recovery keeps the recovery's starting point.
 */
static void test_undo_restores_prior(void **state)
{
	struct conn c;

	(void)state;
	conn_enter_recovery(&c, 1000);
	/* within the recovery: not fresh */
	assert_false(tcp_cc_on_timeout(&c.cc, 20 * SMSS, c.nxt));
	assert_int_equal(c.cc.cwnd, SMSS);
	tcp_cc_undo(&c.cc);
	assert_int_equal(c.cc.cwnd, 20 * SMSS);
	assert_int_equal(c.cc.ssthresh, UINT32_MAX);
	assert_false(c.cc.in_recovery);
	assert_false(c.cc.rto_repeat);
	assert_false(c.cc.recover_armed);
	/* A fresh timeout saves anew; what grew after the reduction is kept. */
	conn_init(&c, 5000, 10 * SMSS, 10 * SMSS, 30 * SMSS);
	assert_true(tcp_cc_on_timeout(&c.cc, 10 * SMSS, c.nxt));
	assert_false(tcp_cc_on_timeout(&c.cc, SMSS, c.nxt)); /* a repeat */
	c.cc.cwnd = 12 * SMSS;
	tcp_cc_undo(&c.cc);
	assert_int_equal(c.cc.cwnd, 12 * SMSS);
	assert_int_equal(c.cc.ssthresh, 30 * SMSS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_initial_window),
	    cmocka_unit_test(test_slow_start_per_ack),
	    cmocka_unit_test(test_slow_start_byte_counting_cap),
	    cmocka_unit_test(test_transition_to_ca),
	    cmocka_unit_test(test_ca_one_smss_per_window),
	    cmocka_unit_test(test_ca_stretch_ack),
	    cmocka_unit_test(test_dupacks_1_2_do_nothing),
	    cmocka_unit_test(test_third_dupack_enters_once),
	    cmocka_unit_test(test_ssthresh_floor),
	    cmocka_unit_test(test_inflation),
	    cmocka_unit_test(test_partial_ack),
	    cmocka_unit_test(test_full_ack_exits),
	    cmocka_unit_test(test_step1_guard_after_timeout),
	    cmocka_unit_test(test_step1_guard_after_recovery),
	    cmocka_unit_test(test_sack_recovery_again_at_recover),
	    cmocka_unit_test(test_loss_after_echo_same_window),
	    cmocka_unit_test(test_timeout_resets),
	    cmocka_unit_test(test_repeated_timeout_holds_ssthresh),
	    cmocka_unit_test(test_idle_restart),
	    cmocka_unit_test(test_wraparound),
	    cmocka_unit_test(test_stale_recover),
	    cmocka_unit_test(test_prr_arithmetic),
	    cmocka_unit_test(test_undo_restores_prior),
	};

	return cmocka_run_group_tests_name("tcp/cc", tests, NULL, NULL);
}
