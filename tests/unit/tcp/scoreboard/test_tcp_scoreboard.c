/*
 * test_tcp_scoreboard.c - the sender's scoreboard (tcp_scoreboard.c) and
 * RACK-TLP's arithmetic (tcp_rack.c), without a connection: records and
 * their flags, the running sums behind the pipe, SACK marking of whole
 * records only, D-SACK recognition, loss marking by time, the reordering
 * window and the probe timeout. Sequence numbers start near 2^32 so that
 * every test crosses the wrap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "tcp/tcp_rack.h"
#include "tcp/tcp_scoreboard.h"

#define US   1000ull
#define MSS  1000u
#define BASE 0xfffff000u /* 4096 bytes below the wrap */

static uint32_t at(unsigned i)
{
	return BASE + i * MSS;
}

/* @n segments of MSS sent at @t, as one TSO burst. */
static void sent(struct tcp_scoreboard *sb, unsigned n, uint64_t t)
{
	assert_int_equal(tcp_sb_sent(sb, at(0), at(n), MSS, at(0), t), 0);
}

static void test_sent_splits_and_marks_retransmissions(void **state)
{
	struct tcp_scoreboard sb;

	(void)state;
	tcp_sb_init(&sb);
	/* 10 segments and a FIN: 10 records, the last one MSS/2 + the FIN. */
	assert_int_equal(tcp_sb_sent(&sb, at(0), at(9) + MSS / 2 + 1, MSS, at(0), 10 * US), 0);
	assert_int_equal(sb.count, 10);
	assert_int_equal(tcp_sb_end(&sb, 0), at(9) + MSS / 2 + 1);
	for (unsigned i = 0; i < 9; i++) {
		assert_int_equal(tcp_sb_at(&sb, i)->start, at(i));
		assert_int_equal(tcp_sb_at(&sb, i)->end, at(i + 1));
		assert_int_equal(tcp_sb_at(&sb, i)->flags, 0);
	}
	/* A resend of bytes 1500..3500 touches records 1-3 only; past the end is new. */
	tcp_sb_mark_lost(&sb, 2);
	assert_int_equal(sb.lost, MSS);
	assert_int_equal(tcp_sb_sent(&sb, at(1) + 500, at(3) + 500, MSS, at(0), 20 * US), 0);
	for (unsigned i = 0; i < 10; i++) {
		const struct tcp_txseg *r = tcp_sb_at(&sb, i);
		bool resent = i >= 1 && i <= 3;

		assert_int_equal(!!(r->flags & TCP_TXSEG_RETRANS), resent);
		assert_int_equal(r->xmit_ns, resent ? 20 * US : 10 * US);
	}
	assert_int_equal(sb.lost, 0); /* a resend is no longer lost */
	assert_int_equal(tcp_sb_first_lost(&sb), sb.count);
	tcp_sb_fini(&sb);
}

static void test_acked_trims_and_sums(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_delivery d = {0};

	(void)state;
	tcp_sb_init(&sb);
	sent(&sb, 6, 10 * US);
	assert_int_equal(tcp_sb_sack(&sb, at(3), at(5), at(0), at(6), 50 * US, 0, &d),
			 TCP_SACK_USED);
	assert_int_equal(sb.sacked, 2 * MSS);
	assert_int_equal(sb.sacked_segs, 2);
	tcp_sb_mark_lost(&sb, 0);
	tcp_sb_mark_lost(&sb, 1);
	tcp_sb_mark_lost(&sb, 3); /* SACKed: not lost */
	assert_int_equal(sb.lost, 2 * MSS);
	assert_int_equal(tcp_sb_pipe(&sb, 6 * MSS), 2 * MSS);
	/* Half of record 1 acknowledged: lost bytes shrink with it. */
	memset(&d, 0, sizeof(d));
	tcp_sb_acked(&sb, at(1) + 400, 60 * US, 0, &d);
	assert_int_equal(sb.count, 5);
	assert_int_equal(tcp_sb_at(&sb, 0)->start, at(1) + 400);
	assert_int_equal(sb.lost, MSS - 400);
	assert_int_equal(d.segs, 1);
	/* Up to record 4: the SACKed ones leave the sums, not counted as delivered again. */
	memset(&d, 0, sizeof(d));
	tcp_sb_acked(&sb, at(5), 70 * US, 0, &d);
	assert_int_equal(sb.count, 1);
	assert_int_equal(sb.sacked, 0);
	assert_int_equal(sb.sacked_segs, 0);
	assert_int_equal(sb.lost, 0);
	assert_int_equal(d.segs, 2); /* records 1 and 2 */
	tcp_sb_acked(&sb, at(6), 80 * US, 0, &d);
	assert_int_equal(sb.count, 0);
	tcp_sb_fini(&sb);
}

static void test_sack_whole_records_only(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_delivery d = {0};

	(void)state;
	tcp_sb_init(&sb);
	sent(&sb, 6, 10 * US);
	/* [2.5, 4.5): only record 3 is wholly inside (RFC 6675: a part SACKed is not). */
	tcp_sb_sack(&sb, at(2) + 500, at(4) + 500, at(0), at(6), 20 * US, 0, &d);
	assert_int_equal(sb.sacked_segs, 1);
	assert_true(tcp_sb_at(&sb, 3)->flags & TCP_TXSEG_SACKED);
	/* The same again changes nothing. */
	tcp_sb_sack(&sb, at(3), at(4), at(0), at(6), 20 * US, 0, &d);
	assert_int_equal(sb.sacked, MSS);
	assert_int_equal(d.segs, 1);
	/* Out of range, reversed, empty. */
	assert_int_equal(tcp_sb_sack(&sb, at(5), at(7), at(0), at(6), 0, 0, &d), TCP_SACK_INVALID);
	assert_int_equal(tcp_sb_sack(&sb, at(0) - 1, at(1), at(0), at(6), 0, 0, &d),
			 TCP_SACK_INVALID);
	assert_int_equal(tcp_sb_sack(&sb, at(4), at(2), at(0), at(6), 0, 0, &d), TCP_SACK_INVALID);
	assert_int_equal(tcp_sb_sack(&sb, at(4), at(4), at(0), at(6), 0, 0, &d), TCP_SACK_INVALID);
	assert_int_equal(sb.sacked, MSS);
	tcp_sb_fini(&sb);
}

static void test_dsack_forms(void **state)
{
	struct tcp_options o = {0};

	(void)state;
	/* RFC 2883 4.1.1: the first block below the cumulative ACK. */
	o.sack_count = 1;
	o.sack[0].left = at(0);
	o.sack[0].right = at(1);
	assert_true(tcp_sb_is_dsack(&o, at(2)));
	assert_true(tcp_sb_is_dsack(&o, at(1)));
	assert_false(tcp_sb_is_dsack(&o, at(0)));
	/* 4.1.2: the first block inside the second. */
	o.sack_count = 2;
	o.sack[0].left = at(4);
	o.sack[0].right = at(5);
	o.sack[1].left = at(3);
	o.sack[1].right = at(6);
	assert_true(tcp_sb_is_dsack(&o, at(1)));
	o.sack[1].left = at(5);
	o.sack[1].right = at(7);
	assert_false(tcp_sb_is_dsack(&o, at(1)));
	o.sack_count = 0;
	assert_false(tcp_sb_is_dsack(&o, at(9)));
}

static void test_mark_all_lost_and_forget(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_delivery d = {0};

	(void)state;
	tcp_sb_init(&sb);
	sent(&sb, 4, 10 * US);
	tcp_sb_sack(&sb, at(2), at(3), at(0), at(4), 20 * US, 0, &d);
	tcp_sb_mark_all_lost(&sb, false);
	assert_int_equal(sb.lost, 3 * MSS);
	assert_int_equal(sb.sacked, MSS);
	assert_int_equal(tcp_sb_first_lost(&sb), 0);
	tcp_sb_sent(&sb, at(0), at(1), MSS, at(0), 30 * US);
	assert_int_equal(tcp_sb_first_lost(&sb), 1);
	tcp_sb_mark_all_lost(&sb, true);
	assert_int_equal(sb.sacked, 0);
	assert_int_equal(sb.sacked_segs, 0);
	assert_int_equal(sb.lost, 4 * MSS);
	assert_int_equal(tcp_sb_pipe(&sb, 4 * MSS), 0);
	tcp_sb_fini(&sb);
}

/* RFC 8985 6.2 step 5: lost when RACK.rtt + reo_wnd has passed since it was sent. */
/*
 * RFC 8985 6.2 (a lost retransmission is found like any segment) with the
 * first-lost hint: once 0-3 are lost and 0 and 1 resent, the hint has
 * moved past them; 0's retransmission lost again must put it back, or
 * recovery would resend 2 and 3 and leave 0 for the RTO.
 */
static void test_first_lost_after_retransmission_lost_again(void **state)
{
	struct tcp_scoreboard sb;

	(void)state;
	tcp_sb_init(&sb);
	sent(&sb, 6, 10 * US);
	for (unsigned i = 0; i < 4; i++)
		tcp_sb_mark_lost(&sb, i);
	assert_int_equal(tcp_sb_first_lost(&sb), 0);
	assert_int_equal(tcp_sb_sent(&sb, at(0), at(1), MSS, at(0), 20 * US), 0);
	assert_int_equal(tcp_sb_first_lost(&sb), 1);
	assert_int_equal(tcp_sb_sent(&sb, at(1), at(2), MSS, at(0), 20 * US), 0);
	assert_int_equal(tcp_sb_first_lost(&sb), 2);
	tcp_sb_mark_lost(&sb, 0);
	assert_int_equal(sb.lost, 3 * MSS);
	assert_int_equal(tcp_sb_first_lost(&sb), 0);
	tcp_sb_fini(&sb);
}

static void test_rack_detects_by_time(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_rack r;
	struct tcp_delivery d = {0};
	uint32_t lost;
	uint64_t t;

	(void)state;
	tcp_sb_init(&sb);
	tcp_rack_init(&r);
	sent(&sb, 3, 0);					       /* 0..2 at t=0 */
	tcp_sb_sent(&sb, at(3), at(5), MSS, at(0), 10 * US);	       /* 3..4 at 10 us */
	tcp_sb_sack(&sb, at(3), at(4), at(0), at(5), 110 * US, 0, &d); /* 3 delivered */
	tcp_rack_update(&r, &d, 110 * US);
	assert_int_equal(r.rtt_ns, 100 * US);
	assert_int_equal(tcp_rack_min_rtt(&r), 100 * US);
	assert_int_equal(r.xmit_ns, 10 * US);
	/* 0..2 were sent 10 us before it: with a 20 us window, due at 120 us. */
	t = tcp_rack_detect_loss(&r, &sb, 20 * US, 110 * US, &lost);
	assert_int_equal(lost, 0);
	assert_int_equal(t, 10 * US);
	t = tcp_rack_detect_loss(&r, &sb, 20 * US, 120 * US, &lost);
	assert_int_equal(lost, 3);
	assert_int_equal(t, 0);
	/* Record 4, sent with the delivered one but after it in sequence, is not. */
	assert_false(tcp_sb_at(&sb, 4)->flags & TCP_TXSEG_LOST);
	assert_int_equal(sb.lost, 3 * MSS);
	tcp_sb_fini(&sb);
}

/* RFC 8985 6.2 step 2: a resend acknowledged within min_RTT gives no RTT. */
static void test_rack_ignores_ambiguous_rtt(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_rack r;
	struct tcp_delivery d = {0};

	(void)state;
	tcp_sb_init(&sb);
	tcp_rack_init(&r);
	sent(&sb, 2, 1000 * US);
	tcp_sb_acked(&sb, at(1), 1100 * US, tcp_rack_min_rtt(&r), &d);
	tcp_rack_update(&r, &d, 1100 * US);
	assert_int_equal(tcp_rack_min_rtt(&r), 100 * US);
	tcp_sb_sent(&sb, at(1), at(2), MSS, at(1), 1150 * US); /* resent */
	memset(&d, 0, sizeof(d));
	/* 10 us later: the original's ACK */
	tcp_sb_acked(&sb, at(2), 1160 * US, tcp_rack_min_rtt(&r), &d);
	assert_int_equal(d.segs, 1);
	assert_int_equal(d.xmit_ns, 0);
	tcp_rack_update(&r, &d, 1160 * US);
	assert_int_equal(r.xmit_ns, 1000 * US); /* still the first segment's */
	assert_int_equal(tcp_rack_min_rtt(&r), 100 * US);
	tcp_sb_fini(&sb);
}

/*
 * RFC 8985 6.2 step 1: min_RTT is the lowest of a window (300 s, as
 * Linux): an RTT that rose for good is believed once the low one is older.
 */
static void test_rack_min_rtt_window(void **state)
{
	struct tcp_rack r;
	struct tcp_delivery d = {.end = 1000, .segs = 1};
	uint64_t t0 = 1000 * US;

	(void)state;
	tcp_rack_init(&r);
	d.xmit_ns = t0;
	tcp_rack_update(&r, &d, t0 + 100 * US);
	assert_int_equal(tcp_rack_min_rtt(&r), 100 * US);
	d.xmit_ns = t0 + TCP_RACK_MIN_RTT_WIN_NS / 2;
	tcp_rack_update(&r, &d, d.xmit_ns + 900 * US);	  /* the path got slower */
	assert_int_equal(tcp_rack_min_rtt(&r), 100 * US); /* the low one is still recent */
	d.xmit_ns = t0 + TCP_RACK_MIN_RTT_WIN_NS + 1000 * US;
	tcp_rack_update(&r, &d, d.xmit_ns + 1000 * US);
	assert_int_equal(tcp_rack_min_rtt(&r), 900 * US); /* the 100 us aged out; the best left */
}

/* RFC 8985 6.2 step 4. */
static void test_reo_wnd(void **state)
{
	struct tcp_rack r;

	(void)state;
	tcp_rack_init(&r);
	assert_int_equal(tcp_rack_reo_wnd(&r, false, 0, 1000 * US), 0);	  /* no RTT yet */
	win_min_update(&r.min_rtt, TCP_RACK_MIN_RTT_WIN_NS, 0, 400 * US); /* min_RTT 400 us */
	assert_int_equal(tcp_rack_reo_wnd(&r, false, 2, 1000 * US), 100 * US);
	assert_int_equal(tcp_rack_reo_wnd(&r, false, 3, 1000 * US), 0);
	assert_int_equal(tcp_rack_reo_wnd(&r, true, 0, 1000 * US), 0);
	assert_int_equal(tcp_rack_reo_wnd(&r, false, 2, 50 * US), 50 * US); /* capped at SRTT */
	r.reordering_seen = true;
	assert_int_equal(tcp_rack_reo_wnd(&r, true, 5, 1000 * US), 100 * US);
	/* A D-SACK widens it once per round, for 16 recoveries. */
	tcp_rack_update_reo_mult(&r, true, 100, 200);
	tcp_rack_update_reo_mult(&r, true, 150, 300);
	assert_int_equal(r.reo_wnd_mult, 2);
	assert_int_equal(tcp_rack_reo_wnd(&r, true, 5, 1000 * US), 200 * US);
	tcp_rack_update_reo_mult(&r, true, 200, 300); /* the round passed */
	assert_int_equal(r.reo_wnd_mult, 3);
	for (unsigned i = 0; i < TCP_RACK_REO_PERSIST - 1; i++)
		tcp_rack_recovery_done(&r);
	assert_int_equal(r.reo_wnd_mult, 3);
	tcp_rack_recovery_done(&r);
	assert_int_equal(r.reo_wnd_mult, 1);
}

static void test_pto(void **state)
{
	(void)state;
	assert_int_equal(tcp_rack_pto(false, 0, 0), 1000000 * US);
	assert_int_equal(tcp_rack_pto(true, 30 * US, 500 * US), 560 * US);
}

/* The boundary: a record of exactly the new MSS fits and is neither cut nor lost. */
static void test_resegment_exact_fit(void **state)
{
	struct tcp_scoreboard sb;

	(void)state;
	tcp_sb_init(&sb);
	sent(&sb, 2, 10 * US);
	assert_int_equal(tcp_sb_resegment(&sb, MSS), 0);
	assert_int_equal(sb.count, 2);
	assert_int_equal(sb.lost, 0);
	assert_int_equal(tcp_sb_first_lost(&sb), sb.count);
	assert_int_equal(tcp_sb_resegment(&sb, MSS - 1), 0);
	assert_int_equal(sb.count, 4);
	assert_int_equal(sb.lost, 2 * MSS);
	tcp_sb_fini(&sb);
}

/*
 * A lowered path MTU (tcp_icmp.c, Linux's tcp_simple_retransmit()): every
 * record too large for the new MSS is cut into records of it, lost, with
 * the original's send time and flags; SACKed ones arrived and stay whole,
 * small ones fit and stay as they were; the sums follow.
 */
static void test_resegment(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_delivery d = {0};
	static const uint32_t want[][2] = {
	    {0, 400},	  {400, 800},	{800, 1000},  /* record 0, cut in three */
	    {1000, 2000},			      /* SACKed: whole */
	    {2000, 2400}, {2400, 2800}, {2800, 3000}, /* record 2, lost before */
	    {3000, 3300},			      /* 300 bytes: fits */
	};

	(void)state;
	tcp_sb_init(&sb);
	sent(&sb, 3, 10 * US);
	assert_int_equal(tcp_sb_sent(&sb, at(3), at(3) + 300, MSS, at(0), 11 * US), 0);
	assert_int_equal(tcp_sb_sack(&sb, at(1), at(2), at(0), at(3) + 300, 20 * US, 0, &d),
			 TCP_SACK_USED);
	tcp_sb_mark_lost(&sb, 2);
	assert_int_equal(sb.lost, MSS);
	assert_int_equal(tcp_sb_resegment(&sb, 400), 0);
	assert_int_equal(sb.count, ARRAY_SIZE(want));
	for (unsigned i = 0; i < sb.count; i++) {
		const struct tcp_txseg *r = tcp_sb_at(&sb, i);
		bool cut = i < 3 || (i >= 4 && i < 7);

		assert_int_equal(r->start, BASE + want[i][0]);
		assert_int_equal(r->end, BASE + want[i][1]);
		assert_int_equal(!!(r->flags & TCP_TXSEG_LOST), cut);
		assert_int_equal(!!(r->flags & TCP_TXSEG_SACKED), i == 3);
		assert_int_equal(r->xmit_ns, i == 7 ? 11 * US : 10 * US);
	}
	assert_int_equal(sb.lost, 2 * MSS);
	assert_int_equal(sb.sacked, MSS);
	assert_int_equal(tcp_sb_first_lost(&sb), 0);
	assert_int_equal(tcp_sb_pipe(&sb, 3 * MSS + 300), 300);
	/* Nothing left too large: a second call changes nothing. */
	assert_int_equal(tcp_sb_resegment(&sb, 400), 0);
	assert_int_equal(sb.count, ARRAY_SIZE(want));
	assert_int_equal(sb.lost, 2 * MSS);
	tcp_sb_fini(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sent_splits_and_marks_retransmissions),
	    cmocka_unit_test(test_acked_trims_and_sums),
	    cmocka_unit_test(test_sack_whole_records_only),
	    cmocka_unit_test(test_dsack_forms),
	    cmocka_unit_test(test_mark_all_lost_and_forget),
	    cmocka_unit_test(test_first_lost_after_retransmission_lost_again),
	    cmocka_unit_test(test_rack_detects_by_time),
	    cmocka_unit_test(test_rack_ignores_ambiguous_rtt),
	    cmocka_unit_test(test_rack_min_rtt_window),
	    cmocka_unit_test(test_reo_wnd),
	    cmocka_unit_test(test_pto),
	    cmocka_unit_test(test_resegment),
	    cmocka_unit_test(test_resegment_exact_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
