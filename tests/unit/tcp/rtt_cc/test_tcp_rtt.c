/*
 * test_tcp_rtt.c - the RFC 6298 estimator (tcp/tcp_rtt.c): the initial
 * RTO, the first-sample rule, the smoothing of later samples against
 * values worked out by hand, the floor (LUNA's 4 ms), the ceiling, the
 * clock-granularity term, and the exponential backoff (doubling, its cap,
 * and its reset by a new sample). Pure arithmetic: no EAL, no clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tcp/tcp_rtt.h"

#define US (UINT64_C(1000))
#define MS (UINT64_C(1000000))
#define S  (UINT64_C(1000000000))

/* The datacenter configuration: 1 s initial, 4 ms floor, 60 s ceiling, G = 1 us. */
static void init_dc(struct tcp_rtt *r)
{
	tcp_rtt_init(r, 1 * S, 4 * MS, 60 * S, 1 * US);
}

/* RFC 6298 (2.1): before any measurement, RTO is the initial value. */
static void test_initial_rto(void **state)
{
	struct tcp_rtt r;

	(void)state;
	init_dc(&r);
	assert_false(r.have_sample);
	assert_int_equal(r.backoff, 0);
	assert_int_equal(tcp_rtt_timeout(&r), 1 * S);
	/* An initial value under the floor is raised to it ((2.4)). */
	tcp_rtt_init(&r, 1 * MS, 4 * MS, 60 * S, 1 * US);
	assert_int_equal(tcp_rtt_timeout(&r), 4 * MS);
}

/* RFC 6298 (2.2): first sample R: SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4*RTTVAR). */
static void test_first_sample(void **state)
{
	struct tcp_rtt r;

	(void)state;
	init_dc(&r);
	tcp_rtt_sample(&r, 100 * MS);
	assert_true(r.have_sample);
	assert_int_equal(r.srtt_ns, 100 * MS);
	assert_int_equal(r.rttvar_ns, 50 * MS);
	/* 100 ms + 4 * 50 ms = 300 ms */
	assert_int_equal(r.rto_ns, 300 * MS);
	assert_int_equal(tcp_rtt_timeout(&r), 300 * MS);
	/* An odd sample: RTTVAR = R/2 truncates to the nanosecond. */
	init_dc(&r);
	tcp_rtt_sample(&r, 5 * MS + 1);
	assert_int_equal(r.srtt_ns, 5 * MS + 1);
	assert_int_equal(r.rttvar_ns, 2500000);
	assert_int_equal(r.rto_ns, 15 * MS + 1);
}

/*
 * RFC 6298 (2.3): later samples, alpha = 1/8, beta = 1/4, RTTVAR updated
 * with the old SRTT first. Worked by hand, in ns:
 *
 *  R = 100 ms: SRTT = 100 000 000, RTTVAR = 50 000 000,
 *              RTO = 100 000 000 + 200 000 000 = 300 000 000
 *  R = 120 ms: |SRTT - R| = 20 000 000
 *              RTTVAR = (3 * 50 000 000 + 20 000 000) / 4 = 42 500 000
 *              SRTT = (7 * 100 000 000 + 120 000 000) / 8 = 102 500 000
 *              RTO = 102 500 000 + 170 000 000 = 272 500 000
 *  R = 80 ms:  |SRTT - R| = 22 500 000
 *              RTTVAR = (3 * 42 500 000 + 22 500 000) / 4 = 37 500 000
 *              SRTT = (7 * 102 500 000 + 80 000 000) / 8 = 99 687 500
 *              RTO = 99 687 500 + 150 000 000 = 249 687 500
 *  R = 200 ms: |SRTT - R| = 100 312 500
 *              RTTVAR = (3 * 37 500 000 + 100 312 500) / 4 = 53 203 125
 *              SRTT = (7 * 99 687 500 + 200 000 000) / 8
 *                   = 897 812 500 / 8 = 112 226 562 (.5 truncated)
 *              RTO = 112 226 562 + 212 812 500 = 325 039 062
 */
static void test_sample_sequence(void **state)
{
	static const struct {
		uint64_t r, srtt, rttvar, rto;
	} step[] = {
	    {100 * MS, 100000000, 50000000, 300000000},
	    {120 * MS, 102500000, 42500000, 272500000},
	    {80 * MS, 99687500, 37500000, 249687500},
	    {200 * MS, 112226562, 53203125, 325039062},
	};
	struct tcp_rtt r;

	(void)state;
	init_dc(&r);
	for (size_t i = 0; i < sizeof(step) / sizeof(step[0]); i++) {
		tcp_rtt_sample(&r, step[i].r);
		assert_int_equal(r.srtt_ns, step[i].srtt);
		assert_int_equal(r.rttvar_ns, step[i].rttvar);
		assert_int_equal(r.rto_ns, step[i].rto);
		assert_int_equal(tcp_rtt_timeout(&r), step[i].rto);
	}
}

/*
 * RFC 6298 (2.4) with LUNA's datacenter floor: a 20 us RTT gives
 * 20 us + 4 * 10 us = 60 us, raised to the 4 ms minimum.
 */
static void test_min_rto_floor(void **state)
{
	struct tcp_rtt r;

	(void)state;
	init_dc(&r);
	tcp_rtt_sample(&r, 20 * US);
	assert_int_equal(r.srtt_ns, 20 * US);
	assert_int_equal(r.rttvar_ns, 10 * US);
	assert_int_equal(r.rto_ns, 4 * MS);
	assert_int_equal(tcp_rtt_timeout(&r), 4 * MS);
	/* Just above the floor it is not touched: 2 ms + 4 * 1 ms = 6 ms. */
	init_dc(&r);
	tcp_rtt_sample(&r, 2 * MS);
	assert_int_equal(tcp_rtt_timeout(&r), 6 * MS);
}

/* RFC 6298 (2.5): a maximum may be placed on RTO: 30 s + 4 * 15 s = 90 s -> 60 s. */
static void test_max_rto_ceiling(void **state)
{
	struct tcp_rtt r;

	(void)state;
	init_dc(&r);
	tcp_rtt_sample(&r, 30 * S);
	assert_int_equal(r.srtt_ns, 30 * S);
	assert_int_equal(r.rto_ns, 60 * S);
	assert_int_equal(tcp_rtt_timeout(&r), 60 * S);
}

/*
 * RFC 6298 (2.2)/(2.3): RTO = SRTT + max(G, 4*RTTVAR). G = 10 ms, floor 1 ms:
 *  R = 2 ms: 4*RTTVAR = 4 ms < G, so RTO = 2 + 10 = 12 ms;
 *  R = 8 ms: 4*RTTVAR = 16 ms > G, so RTO = 8 + 16 = 24 ms;
 *  a steady 2 ms drives RTTVAR toward 0 and RTO stays SRTT + G = 12 ms.
 */
static void test_granularity_term(void **state)
{
	struct tcp_rtt r;

	(void)state;
	tcp_rtt_init(&r, 1 * S, 1 * MS, 60 * S, 10 * MS);
	tcp_rtt_sample(&r, 2 * MS);
	assert_int_equal(r.rto_ns, 12 * MS);

	tcp_rtt_init(&r, 1 * S, 1 * MS, 60 * S, 10 * MS);
	tcp_rtt_sample(&r, 8 * MS);
	assert_int_equal(r.rto_ns, 24 * MS);

	tcp_rtt_init(&r, 1 * S, 1 * MS, 60 * S, 10 * MS);
	for (int i = 0; i < 64; i++)
		tcp_rtt_sample(&r, 2 * MS);
	assert_int_equal(r.srtt_ns, 2 * MS);
	assert_true(4 * r.rttvar_ns < 10 * MS);
	assert_int_equal(tcp_rtt_timeout(&r), 12 * MS);
}

/* RFC 6298 (5.5): each expiry doubles the timeout, bounded by the (2.5) maximum. */
static void test_backoff_doubling(void **state)
{
	static const uint64_t expect[] = {1 * S,  2 * S,  4 * S,  8 * S, 16 * S,
					  32 * S, 60 * S, 60 * S, 60 * S};
	struct tcp_rtt r;

	(void)state;
	init_dc(&r);
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		assert_int_equal(tcp_rtt_timeout(&r), expect[i]);
		tcp_rtt_backoff(&r);
	}
	/* 2^6 s > 60 s: the exponent stopped where doubling stopped mattering. */
	assert_int_equal(r.backoff, 6);
	/* The base RTO itself is untouched ("before backoff"). */
	assert_int_equal(r.rto_ns, 1 * S);
}

/*
 * RFC 6298 (5.5) and (2.5): the exponent is capped so rto << backoff is
 * never an overflowing (or undefined) shift, whatever the bounds.
 */
static void test_backoff_cap(void **state)
{
	struct tcp_rtt r;

	(void)state;
	/* No real ceiling: 1 s << 35 > 2^64 - 1, so it saturates at max there. */
	tcp_rtt_init(&r, 1 * S, 4 * MS, UINT64_MAX, 1 * US);
	for (int i = 0; i < 1000; i++)
		tcp_rtt_backoff(&r);
	assert_int_equal(r.backoff, 35);
	assert_true(tcp_rtt_timeout(&r) == UINT64_MAX);

	/* A zero RTO never reaches max: the exponent still stops at 63. */
	tcp_rtt_init(&r, 0, 0, 60 * S, 0);
	for (int i = 0; i < 1000; i++)
		tcp_rtt_backoff(&r);
	assert_int_equal(r.backoff, 63);
	assert_int_equal(tcp_rtt_timeout(&r), 0);

	/* A huge base: the timeout is clamped, not wrapped. */
	tcp_rtt_init(&r, 50 * S, 4 * MS, 60 * S, 1 * US);
	tcp_rtt_backoff(&r);
	assert_int_equal(tcp_rtt_timeout(&r), 60 * S);
}

/*
 * RFC 6298 section 5, the note after (5.7): a new measurement recomputes
 * RTO per section 2 and collapses the backoff.
 */
static void test_sample_resets_backoff(void **state)
{
	struct tcp_rtt r;

	(void)state;
	init_dc(&r);
	tcp_rtt_sample(&r, 10 * MS); /* RTO = 10 + 20 = 30 ms */
	tcp_rtt_backoff(&r);
	tcp_rtt_backoff(&r);
	tcp_rtt_backoff(&r);
	assert_int_equal(r.backoff, 3);
	assert_int_equal(tcp_rtt_timeout(&r), 240 * MS);
	/*
	 * Second sample R = 10 ms: |SRTT - R| = 0, RTTVAR = 3 * 5 / 4 = 3.75 ms,
	 * SRTT = 10 ms, RTO = 10 + 15 = 25 ms, with no backoff.
	 */
	tcp_rtt_sample(&r, 10 * MS);
	assert_int_equal(r.backoff, 0);
	assert_int_equal(r.rttvar_ns, 3750 * US);
	assert_int_equal(tcp_rtt_timeout(&r), 25 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_initial_rto),		  cmocka_unit_test(test_first_sample),
	    cmocka_unit_test(test_sample_sequence),	  cmocka_unit_test(test_min_rto_floor),
	    cmocka_unit_test(test_max_rto_ceiling),	  cmocka_unit_test(test_granularity_term),
	    cmocka_unit_test(test_backoff_doubling),	  cmocka_unit_test(test_backoff_cap),
	    cmocka_unit_test(test_sample_resets_backoff),
	};

	return cmocka_run_group_tests_name("tcp/rtt", tests, NULL, NULL);
}
