/*
 * test_tcp_undo.c - the undo episode (tcp/tcp_undo.c): when a reduction
 * is proved spurious by an echoed timestamp (RFC 3522) or by D-SACKs for
 * every retransmission (RFC 3708), when it is not, and how an episode
 * ages; across the 2^32 wrap of sequence numbers and timestamps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tcp/tcp_undo.h"

#define MSS 1000u

/* A first RTO outside a recovery: a fresh reduction, nothing retransmitted before. */
static void fresh_rto(struct tcp_undo *u, uint32_t una, uint32_t max, uint32_t ts)
{
	tcp_undo_begin(u, una, max, ts, 0, una);
	tcp_undo_rto(u, max);
}

/*
 * Only an ACK echoing a nonzero TSval from before the episode's first
 * retransmission proves it; only the first after an RTO is asked.
 */
static void test_timestamp_proof(void **state)
{
	struct tcp_undo u = {0};

	(void)state;
	assert_false(tcp_undo_by_timestamp(&u, true, 1)); /* no episode */
	tcp_undo_rto(&u, 15000);			  /* none to join */
	assert_false(u.on);
	fresh_rto(&u, 5000, 15000, 100);
	assert_true(u.on && u.rto);
	assert_false(tcp_undo_by_timestamp(&u, true, 100)); /* the retransmission's own echo */
	assert_false(tcp_undo_by_timestamp(&u, true, 99));  /* asked once: too late now */

	fresh_rto(&u, 5000, 15000, 100);
	assert_false(tcp_undo_by_timestamp(&u, false, 0)); /* no timestamp: no proof */
	fresh_rto(&u, 5000, 15000, 100);
	assert_false(tcp_undo_by_timestamp(&u, true, 0)); /* a cleared echo: no proof */
	fresh_rto(&u, 5000, 15000, 100);
	assert_true(tcp_undo_by_timestamp(&u, true, 99));

	/* A recovery arms no timestamp check; its RTO compares with the recovery's start. */
	tcp_undo_begin(&u, 5000, 15000, 200, 0, 5000);
	assert_false(tcp_undo_by_timestamp(&u, true, 1));
	tcp_undo_rto(&u, 15000);
	assert_int_equal(u.ts, 200);
	assert_false(tcp_undo_by_timestamp(&u, true, 205)); /* after the fast retransmit */
	tcp_undo_rto(&u, 15000);
	assert_true(tcp_undo_by_timestamp(&u, true, 199));

	/* TSvals wrap as sequence numbers do. */
	fresh_rto(&u, 5000, 15000, 3);
	assert_true(tcp_undo_by_timestamp(&u, true, UINT32_MAX - 2));
}

/* Every retransmitted segment must be reported twice; a block outside what was retransmitted counts
 * nothing. */
static void test_dsack_proof(void **state)
{
	struct tcp_undo u = {0};

	(void)state;
	tcp_undo_begin(&u, 10000, 20000, 1, 0, 10000);
	assert_false(tcp_undo_by_dsack(&u, 10000, 11000, MSS)); /* nothing retransmitted yet */
	tcp_undo_retransmitted(&u, 10000, 11000, MSS);
	tcp_undo_retransmitted(&u, 12000, 14000, MSS); /* one record of two segments */
	assert_int_equal(u.retrans, 3);
	assert_int_equal(u.high, 14000);
	assert_false(tcp_undo_by_dsack(&u, 9000, 10000, MSS));	/* before the episode */
	assert_false(tcp_undo_by_dsack(&u, 14000, 15000, MSS)); /* never retransmitted */
	assert_false(tcp_undo_by_dsack(&u, 11000, 11000, MSS)); /* empty */
	assert_int_equal(u.retrans, 3);
	assert_false(tcp_undo_by_dsack(&u, 10000, 11000, MSS));
	assert_int_equal(u.retrans, 2);
	assert_true(tcp_undo_by_dsack(&u, 12000, 14000, MSS));
	assert_int_equal(u.retrans, 0);
	assert_false(tcp_undo_by_dsack(&u, 12000, 14000, MSS)); /* no more to prove */

	/* Across the wrap. */
	tcp_undo_begin(&u, UINT32_MAX - 499, 1500, 1, 0, UINT32_MAX - 499);
	tcp_undo_retransmitted(&u, UINT32_MAX - 499, 500, MSS);
	assert_int_equal(u.high, 500);
	assert_true(tcp_undo_by_dsack(&u, UINT32_MAX - 499, 500, MSS));

	/* Closed: retransmissions and reports no longer count. */
	tcp_undo_begin(&u, 0, 5000, 1, 0, 0);
	tcp_undo_close(&u);
	tcp_undo_retransmitted(&u, 0, 1000, MSS);
	assert_int_equal(u.retrans, 0);
	assert_false(tcp_undo_by_dsack(&u, 0, 1000, MSS));
}

/*
 * A probe's retransmission still out when the episode begins is the
 * episode's own: the RTO's needless retransmission reported twice does not
 * prove a reduction the probe's repair earned spurious.
 */
static void test_earlier_retransmission_counts(void **state)
{
	struct tcp_undo u = {0};

	(void)state;
	/* Segment [9000, 10000) went again at TSval 50; the RTO fires at 60. */
	tcp_undo_begin(&u, 0, 10000, 50, 1, 10000);
	tcp_undo_rto(&u, 10000);
	assert_int_equal(u.high, 10000);
	tcp_undo_retransmitted(&u, 0, 1000, MSS);
	assert_false(tcp_undo_by_dsack(&u, 0, 1000, MSS)); /* the probe's is still owed */
	assert_true(tcp_undo_by_dsack(&u, 9000, 10000, MSS));
	/* The timestamp proof needs an echo from before the probe. */
	tcp_undo_begin(&u, 0, 10000, 50, 1, 10000);
	tcp_undo_rto(&u, 10000);
	assert_false(tcp_undo_by_timestamp(&u, true, 55));
	tcp_undo_begin(&u, 0, 10000, 50, 1, 10000);
	tcp_undo_rto(&u, 10000);
	assert_true(tcp_undo_by_timestamp(&u, true, 49));
	/* A high below SND.UNA means none: the range starts at SND.UNA. */
	tcp_undo_begin(&u, 5000, 10000, 50, 0, 0);
	assert_int_equal(u.high, 5000);
}

/* An episode lasts a round trip past what was outstanding at its start, then closes. */
static void test_episode_ages(void **state)
{
	struct tcp_undo u = {0};

	(void)state;
	tcp_undo_begin(&u, 0, 10000, 1, 0, 0);
	tcp_undo_retransmitted(&u, 0, 1000, MSS);
	tcp_undo_advanced(&u, 5000, 12000); /* short of the end */
	assert_true(u.on);
	assert_false(u.closing);
	tcp_undo_advanced(&u, 10000, 16000); /* the end: one more round */
	assert_true(u.on);
	assert_int_equal(u.end, 16000);
	assert_true(tcp_undo_by_dsack(&u, 0, 1000, MSS)); /* a late D-SACK still proves it */
	tcp_undo_advanced(&u, 16000, 20000);
	assert_false(u.on);

	/* An RTO moves the end to what is outstanding then, and restarts the closing. */
	tcp_undo_begin(&u, 0, 10000, 1, 0, 0);
	tcp_undo_advanced(&u, 10000, 14000);
	assert_true(u.closing);
	tcp_undo_rto(&u, 14000);
	assert_false(u.closing);
	assert_int_equal(u.end, 14000);
	assert_int_equal(u.marker, 0); /* the same episode */
	/* A fresh one starts over. */
	fresh_rto(&u, 14000, 20000, 9);
	assert_int_equal(u.marker, 14000);
	assert_int_equal(u.retrans, 0);
}

/*
 * RFC 3708 2: the reduction is undone only once every retransmission came
 * back as a duplicate. A short one (the tail, less than an MSS) is a
 * segment to account for like a full one: one D-SACK for the full segment
 * is not enough.
 */
static void test_short_retransmission_counts(void **state)
{
	struct tcp_undo u = {0};

	(void)state;
	tcp_undo_begin(&u, 5000, 7100, 100, 0, 5000);
	tcp_undo_retransmitted(&u, 5000, 6000, MSS);
	tcp_undo_retransmitted(&u, 7000, 7100, MSS); /* the 100-byte tail */
	assert_int_equal(u.retrans, 2);
	assert_false(tcp_undo_by_dsack(&u, 5000, 6000, MSS));
	assert_true(tcp_undo_by_dsack(&u, 7000, 7100, MSS));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_timestamp_proof),
	    cmocka_unit_test(test_dsack_proof),
	    cmocka_unit_test(test_earlier_retransmission_counts),
	    cmocka_unit_test(test_episode_ages),
	    cmocka_unit_test(test_short_retransmission_counts),
	};

	return cmocka_run_group_tests_name("tcp/undo", tests, NULL, NULL);
}
