/*
 * tsc_ns.h - TSC cycles to nanoseconds by one multiplication and a shift.
 *
 * The loop reads the time on every iteration; a 128-bit division there
 * (__udivti3, tens of cycles) was a fifth of an idle client loop. The
 * factor is 1e9 / hz in fixed point with as many fraction bits as fit in
 * 64: with a 2-4 GHz TSC, 64 bits, so the result is within 1 ns of the
 * exact quotient for any count.
 */
#ifndef LUNAR_BASE_TSC_NS_H
#define LUNAR_BASE_TSC_NS_H

#include <stdint.h>

struct tsc_ns {
	uint64_t mult;
	unsigned shift;
};

/* The factor for a TSC of @hz cycles per second (hz > 0). */
static inline struct tsc_ns tsc_ns_init(uint64_t hz)
{
	struct tsc_ns c = {0, 64};

	/* The largest shift whose multiplier still fits in 64 bits. */
	for (; c.shift > 0; c.shift--) {
		__uint128_t m = ((__uint128_t)1000000000u << c.shift) / hz;

		if (!(m >> 64)) {
			c.mult = (uint64_t)m;
			break;
		}
	}
	return c;
}

static inline uint64_t tsc_ns(const struct tsc_ns *c, uint64_t cycles)
{
	return (uint64_t)(((__uint128_t)cycles * c->mult) >> c->shift);
}

#endif
