/*
 * test_tsc_ns.c - TSC cycles to nanoseconds by multiply and shift
 * (base/tsc_ns.h): within 1 ns of the exact 128-bit quotient for TSC
 * rates from 1 MHz to 10 GHz, at small counts, random ones, and counts
 * near 2^64; never above the exact value; and monotonic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/tsc_ns.h"

static uint64_t exact(uint64_t t, uint64_t hz)
{
	return (uint64_t)((__uint128_t)t * 1000000000u / hz);
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void check(uint64_t hz, uint64_t t)
{
	struct tsc_ns c = tsc_ns_init(hz);
	uint64_t want = exact(t, hz), got = tsc_ns(&c, t);

	assert_true(got <= want);
	assert_true(want - got <= 1);
}

static void test_matches_division(void **state)
{
	static const uint64_t rates[] = {1000000,    999999999,	 1000000000, 1000000001,
					 2100000000, 2994375000, 3600000000, 10000000000};
	uint64_t s = 0x9e3779b97f4a7c15ull;

	(void)state;
	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		uint64_t hz = rates[r];

		for (uint64_t t = 0; t < 5000; t++)
			check(hz, t);
		for (int i = 0; i < 100000; i++)
			check(hz, next_rand(&s));
		/* The largest counts whose exact value still fits in 64 bits. */
		for (uint64_t t = UINT64_MAX; t > UINT64_MAX - 1000; t--)
			if (hz >= 1000000000u)
				check(hz, t);
	}
}

static void test_monotonic(void **state)
{
	struct tsc_ns c = tsc_ns_init(2994375000u);
	uint64_t prev = 0, s = 42;

	(void)state;
	for (uint64_t t = 1u << 20, i = 0; i < 1000000; i++) {
		uint64_t ns;

		t += next_rand(&s) % 4096;
		ns = tsc_ns(&c, t);
		assert_true(ns >= prev);
		prev = ns;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_matches_division),
	    cmocka_unit_test(test_monotonic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
