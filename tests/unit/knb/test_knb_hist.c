/*
 * test_knb_hist.c - the knb latency histogram (tools/knb/knb_hist.c): the
 * empty and single-sample cases, the 1/128 error bound at every magnitude,
 * exact values below 256 ns, percentiles of a uniform and of an
 * exponential distribution against their exact and analytic values, the
 * exact min, max and mean, values at and above the 2^40 ns top, merging,
 * the cumulative distribution and its downsampling, and percentiles that
 * never leave [min, max]. Deterministic data only, no timing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "knb_hist.h"

#define TOP (UINT64_C(1) << 40)

/* Histograms are ~34 KiB each: keep them out of the stack. */
static struct knb_hist h1, h2, h3;

/* A deterministic 64-bit generator (Knuth's MMIX LCG), upper bits used. */
static uint64_t lcg_next(uint64_t *state)
{
	*state = *state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return *state >> 11;
}

/* A value of a random magnitude: 2^(0..44) scaled by a random mantissa. */
static uint64_t lcg_wide(uint64_t *state)
{
	unsigned bits = (unsigned)(lcg_next(state) % 45);

	return lcg_next(state) >> (53 - bits);
}

/* @got reports @exact within the documented bound: exact <= got <= exact * (1 + 1/128). */
static void assert_within_bound(uint64_t got, uint64_t exact)
{
	assert_true(got >= exact);
	assert_true(got - exact <= exact / 128);
}

static void assert_within_1pct(uint64_t got, double expected)
{
	assert_true(fabs((double)got - expected) <= expected * 0.01);
}

static void test_empty(void **state)
{
	(void)state;
	struct knb_cdf_point pts[4];

	knb_hist_init(&h1);
	assert_int_equal(knb_hist_count(&h1), 0);
	assert_int_equal(knb_hist_min(&h1), 0);
	assert_int_equal(knb_hist_max(&h1), 0);
	assert_true(knb_hist_mean(&h1) == 0);
	assert_int_equal(knb_hist_percentile(&h1, 0), 0);
	assert_int_equal(knb_hist_percentile(&h1, 50), 0);
	assert_int_equal(knb_hist_percentile(&h1, 99.9), 0);
	assert_int_equal(knb_hist_percentile(&h1, 100), 0);
	assert_int_equal(knb_hist_cdf(&h1, pts, 4), 0);
}

static void test_single_value(void **state)
{
	(void)state;
	const double ps[] = {-1, 0, 0.001, 1, 25, 50, 90, 99, 99.999, 100, 101, NAN};
	const uint64_t values[] = {0, 1, 127, 255, 256, 12345, 1000001, TOP - 1, TOP, UINT64_MAX};
	struct knb_cdf_point pts[4];

	for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
		knb_hist_init(&h1);
		knb_hist_record(&h1, values[v]);
		assert_int_equal(knb_hist_count(&h1), 1);
		assert_int_equal(knb_hist_min(&h1), values[v]);
		assert_int_equal(knb_hist_max(&h1), values[v]);
		assert_true(knb_hist_mean(&h1) == (double)values[v]);
		for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
			assert_int_equal(knb_hist_percentile(&h1, ps[i]), values[v]);
		assert_int_equal(knb_hist_cdf(&h1, pts, 4), 1);
		assert_int_equal(pts[0].value_ns, values[v]);
		assert_true(pts[0].fraction == 1.0);
	}
}

/*
 * With a second, much larger sample, p50 is the first bucket's reported
 * value: the highest of the bucket of v, so it shows the bucket's width.
 */
static void test_error_bound_every_magnitude(void **state)
{
	(void)state;
	uint64_t seed = 1;

	for (int i = 0; i < 3000; i++) {
		uint64_t v;

		if (i < 40 * 3) /* around each power of two */
			v = (UINT64_C(1) << (i / 3)) + (uint64_t)(i % 3) - 1;
		else
			v = lcg_next(&seed) >> (53 - 40);
		if (v >= TOP)
			v = TOP - 1;
		knb_hist_init(&h1);
		knb_hist_record(&h1, v);
		knb_hist_record(&h1, UINT64_MAX);
		uint64_t got = knb_hist_percentile(&h1, 50);

		assert_within_bound(got, v);
		if (v < 256)
			assert_int_equal(got, v);
	}
}

/* 0 .. 255 once each: every percentile is the exact order statistic. */
static void test_exact_below_256(void **state)
{
	(void)state;

	knb_hist_init(&h1);
	for (uint64_t v = 0; v < 256; v++)
		knb_hist_record(&h1, v);
	for (unsigned k = 1; k <= 256; k++) {
		double p = 100.0 * (k - 0.5) / 256; /* rank k - 0.5: the k-th sample */

		assert_int_equal(knb_hist_percentile(&h1, p), k - 1);
	}
	assert_int_equal(knb_hist_percentile(&h1, 0), 0);
	assert_int_equal(knb_hist_percentile(&h1, 50), 127);
	assert_true(knb_hist_mean(&h1) == 127.5);
}

static void test_uniform(void **state)
{
	(void)state;
	const uint64_t n = 1000000;
	const double ps[] = {1, 10, 25, 50, 75, 90, 99, 99.9, 99.99};

	knb_hist_init(&h1);
	for (uint64_t v = 1; v <= n; v++)
		knb_hist_record(&h1, v);
	assert_int_equal(knb_hist_count(&h1), n);
	assert_int_equal(knb_hist_min(&h1), 1);
	assert_int_equal(knb_hist_max(&h1), n);
	assert_true(knb_hist_mean(&h1) == 500000.5);
	assert_int_equal(knb_hist_percentile(&h1, 0), 1);
	assert_int_equal(knb_hist_percentile(&h1, 100), n);

	/* The exact p-th percentile of 1..n is ceil(p% of n). */
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		uint64_t exact = (uint64_t)llround(ps[i] * (double)n / 100);
		uint64_t got = knb_hist_percentile(&h1, ps[i]);

		assert_within_1pct(got, (double)exact);
		assert_within_bound(got, exact);
	}
	assert_within_bound(knb_hist_percentile(&h1, 50), 500000);
	assert_within_bound(knb_hist_percentile(&h1, 90), 900000);
	assert_within_bound(knb_hist_percentile(&h1, 99), 990000);
	assert_within_bound(knb_hist_percentile(&h1, 99.9), 999000);
}

/* Exponential with mean MU: the inverse CDF at the midpoints (i + 0.5) / N. */
#define EXP_N  1000000
#define EXP_MU 100000.0

static uint64_t exp_sample(int i)
{
	return (uint64_t)llround(-EXP_MU * log(1 - (i + 0.5) / EXP_N));
}

static void test_exponential(void **state)
{
	(void)state;
	const double ps[] = {1, 10, 50, 90, 99, 99.9, 99.99};
	uint64_t sum = 0;

	knb_hist_init(&h1);
	for (int i = 0; i < EXP_N; i++) {
		uint64_t v = exp_sample(i);

		knb_hist_record(&h1, v);
		sum += v;
	}
	assert_int_equal(knb_hist_count(&h1), EXP_N);
	assert_int_equal(knb_hist_min(&h1), exp_sample(0));
	assert_int_equal(knb_hist_max(&h1), exp_sample(EXP_N - 1));
	assert_true(knb_hist_mean(&h1) == (double)sum / EXP_N);
	assert_true(fabs(knb_hist_mean(&h1) - EXP_MU) < EXP_MU * 0.001);
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double analytic = -EXP_MU * log(1 - ps[i] / 100);

		assert_within_1pct(knb_hist_percentile(&h1, ps[i]), analytic);
	}
}

/* At and above the top: counted, max and the sum exact, nothing reported outside [min, max]. */
static void test_top_and_above(void **state)
{
	(void)state;
	const uint64_t values[] = {1000, TOP - 1, TOP, TOP + 1, 2 * TOP, TOP << 10, UINT64_MAX};
	const size_t n = sizeof(values) / sizeof(values[0]);
	double sum = 0;

	knb_hist_init(&h1);
	for (size_t i = 0; i < n; i++) {
		knb_hist_record(&h1, values[i]);
		sum += (double)values[i];
		assert_int_equal(knb_hist_count(&h1), i + 1);
		assert_int_equal(knb_hist_max(&h1), values[i]);
	}
	assert_int_equal(knb_hist_min(&h1), 1000);
	/* The sum passed 2^64: the mean is still right. */
	assert_true(fabs(knb_hist_mean(&h1) - sum / (double)n) <= sum / (double)n * 1e-12);
	assert_within_bound(knb_hist_percentile(&h1, 50.0 / (double)n), 1000);
	/* The rest share the top bucket: saturated below p100, exact max at p100. */
	assert_int_equal(knb_hist_percentile(&h1, 30), TOP - 1);
	assert_int_equal(knb_hist_percentile(&h1, 99), TOP - 1);
	assert_int_equal(knb_hist_percentile(&h1, 100), UINT64_MAX);

	/* Only values above the range: max stays exact, percentiles stay in [min, max]. */
	knb_hist_init(&h1);
	for (uint64_t i = 0; i < 1000; i++)
		knb_hist_record(&h1, TOP + i * 1000);
	assert_int_equal(knb_hist_count(&h1), 1000);
	assert_int_equal(knb_hist_min(&h1), TOP);
	assert_int_equal(knb_hist_max(&h1), TOP + 999 * 1000);
	assert_int_equal(knb_hist_percentile(&h1, 0), TOP);
	assert_int_equal(knb_hist_percentile(&h1, 50), TOP);
	assert_int_equal(knb_hist_percentile(&h1, 100), TOP + 999 * 1000);

	/* The top of the bucket below the top one is exact; the top bucket keeps the bound. */
	knb_hist_init(&h1);
	knb_hist_record(&h1, TOP - (TOP >> 8) - 1);
	knb_hist_record(&h1, TOP - (TOP >> 8));
	knb_hist_record(&h1, TOP + 5);
	assert_int_equal(knb_hist_percentile(&h1, 20), TOP - (TOP >> 8) - 1);
	assert_within_bound(knb_hist_percentile(&h1, 50), TOP - (TOP >> 8));
	assert_int_equal(knb_hist_percentile(&h1, 99), TOP - 1);
	assert_int_equal(knb_hist_percentile(&h1, 100), TOP + 5);
	assert_int_equal(knb_hist_count(&h1), 3);
}

static void assert_same_hist(const struct knb_hist *a, const struct knb_hist *b)
{
	struct knb_cdf_point pa[64], pb[64];

	assert_int_equal(knb_hist_count(a), knb_hist_count(b));
	assert_int_equal(knb_hist_min(a), knb_hist_min(b));
	assert_int_equal(knb_hist_max(a), knb_hist_max(b));
	assert_true(knb_hist_mean(a) == knb_hist_mean(b));
	for (int i = 0; i <= 1000; i++) {
		double p = i / 10.0;

		assert_int_equal(knb_hist_percentile(a, p), knb_hist_percentile(b, p));
	}
	assert_int_equal(knb_hist_percentile(a, 99.99), knb_hist_percentile(b, 99.99));
	assert_int_equal(knb_hist_percentile(a, 99.999), knb_hist_percentile(b, 99.999));

	size_t na = knb_hist_cdf(a, pa, 64), nb = knb_hist_cdf(b, pb, 64);

	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		assert_int_equal(pa[i].value_ns, pb[i].value_ns);
		assert_true(pa[i].fraction == pb[i].fraction);
	}
}

static void test_merge(void **state)
{
	(void)state;
	uint64_t seed = 42;

	/* h1 and h2 get different sets, h3 gets both. */
	knb_hist_init(&h1);
	knb_hist_init(&h2);
	knb_hist_init(&h3);
	for (int i = 0; i < 100000; i++) {
		uint64_t a = 5000 + lcg_next(&seed) % 20000;
		uint64_t b = lcg_wide(&seed);

		knb_hist_record(&h1, a);
		knb_hist_record(&h2, b);
		knb_hist_record(&h3, a);
		knb_hist_record(&h3, b);
	}
	knb_hist_record(&h2, UINT64_MAX); /* the sums carry */
	knb_hist_record(&h3, UINT64_MAX);
	knb_hist_merge(&h1, &h2);
	assert_int_equal(knb_hist_count(&h1), 200001);
	assert_same_hist(&h1, &h3);
	assert_memory_equal(&h1, &h3, sizeof(h1));

	/* Merging an empty histogram changes nothing; merging into one copies. */
	knb_hist_init(&h2);
	knb_hist_merge(&h1, &h2);
	assert_same_hist(&h1, &h3);
	knb_hist_merge(&h2, &h3);
	assert_same_hist(&h2, &h3);
	assert_int_equal(knb_hist_min(&h2), knb_hist_min(&h3));
}

static void assert_cdf_valid(const struct knb_hist *h, size_t max_points, size_t *np)
{
	static struct knb_cdf_point pts[KNB_HIST_BUCKETS];
	size_t n = knb_hist_cdf(h, pts, max_points);

	assert_true(n >= 1);
	assert_true(n <= max_points);
	assert_true(pts[0].value_ns >= knb_hist_min(h));
	assert_true(pts[0].fraction > 0);
	for (size_t i = 1; i < n; i++) {
		assert_true(pts[i].value_ns > pts[i - 1].value_ns);
		assert_true(pts[i].fraction >= pts[i - 1].fraction);
	}
	assert_true(pts[n - 1].fraction == 1.0);
	assert_int_equal(pts[n - 1].value_ns, knb_hist_max(h));
	/* Each point but the last is the percentile at its fraction. */
	for (size_t i = 0; i + 1 < n; i++)
		assert_int_equal(pts[i].value_ns,
				 knb_hist_percentile(h, pts[i].fraction * 100 * (1 - 1e-12)));
	*np = n;
}

static void test_cdf(void **state)
{
	(void)state;
	const size_t limits[] = {1, 2, 3, 10, 100, 1000, KNB_HIST_BUCKETS};
	struct knb_cdf_point pts[10];
	size_t n;

	knb_hist_init(&h1);
	for (int i = 0; i < EXP_N; i++)
		knb_hist_record(&h1, exp_sample(i));
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		assert_cdf_valid(&h1, limits[i], &n);
	/* Enough room: one point per non-empty bucket, so fewer than the buckets. */
	assert_true(n > 1000 && n < KNB_HIST_BUCKETS);
	assert_int_equal(knb_hist_cdf(&h1, pts, 0), 0);

	/* Uniform 1..10^6 into 10 points: fractions step by about 1/10 each. */
	knb_hist_init(&h1);
	for (uint64_t v = 1; v <= 1000000; v++)
		knb_hist_record(&h1, v);
	assert_int_equal(knb_hist_cdf(&h1, pts, 10), 10);
	for (size_t i = 0; i < 10; i++) {
		double due = (double)(i + 1) / 10;

		assert_true(pts[i].fraction >= due - 1e-12);
		assert_true(pts[i].fraction <= due + 0.01);
	}
	assert_cdf_valid(&h1, 10, &n);

	/* Few distinct values: every one of them, with exact fractions. */
	knb_hist_init(&h1);
	knb_hist_record(&h1, 7);
	knb_hist_record(&h1, 7);
	knb_hist_record(&h1, 100);
	knb_hist_record(&h1, 5000000);
	assert_int_equal(knb_hist_cdf(&h1, pts, 10), 3);
	assert_int_equal(pts[0].value_ns, 7);
	assert_true(pts[0].fraction == 0.5);
	assert_int_equal(pts[1].value_ns, 100);
	assert_true(pts[1].fraction == 0.75);
	assert_int_equal(pts[2].value_ns, 5000000);
	assert_true(pts[2].fraction == 1.0);
	/* Squeezed into 2 points: one of the first two, then the last. */
	assert_int_equal(knb_hist_cdf(&h1, pts, 2), 2);
	assert_int_equal(pts[0].value_ns, 7);
	assert_int_equal(pts[1].value_ns, 5000000);
	assert_true(pts[1].fraction == 1.0);
}

/* Over data of every magnitude, percentiles rise with p and stay in [min, max]. */
static void test_percentile_within_min_max(void **state)
{
	(void)state;
	uint64_t seed = 7;

	for (int round = 0; round < 20; round++) {
		knb_hist_init(&h1);
		int n = 1 + (int)(lcg_next(&seed) % 5000);

		for (int i = 0; i < n; i++)
			knb_hist_record(&h1, lcg_wide(&seed) + (uint64_t)round * 1000);
		uint64_t min = knb_hist_min(&h1), max = knb_hist_max(&h1), prev = 0;

		for (int i = -4; i <= 404; i++) {
			uint64_t v = knb_hist_percentile(&h1, i / 4.0);

			assert_true(v >= min);
			assert_true(v <= max);
			assert_true(v >= prev);
			prev = v;
		}
		assert_int_equal(knb_hist_percentile(&h1, 0), min);
		assert_int_equal(knb_hist_percentile(&h1, 100), max);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_single_value),
	    cmocka_unit_test(test_error_bound_every_magnitude),
	    cmocka_unit_test(test_exact_below_256),
	    cmocka_unit_test(test_uniform),
	    cmocka_unit_test(test_exponential),
	    cmocka_unit_test(test_top_and_above),
	    cmocka_unit_test(test_merge),
	    cmocka_unit_test(test_cdf),
	    cmocka_unit_test(test_percentile_within_min_max),
	};

	return cmocka_run_group_tests_name("knb/hist", tests, NULL, NULL);
}
