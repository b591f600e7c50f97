/*
 * tcp_seq.h - sequence-number arithmetic modulo 2^32 (RFC 9293 3.4).
 * Every comparison of sequence or acknowledgment numbers goes through
 * these, so wraparound is handled in one place.
 */
#ifndef LUNAR_TCP_TCP_SEQ_H
#define LUNAR_TCP_TCP_SEQ_H

#include <stdbool.h>
#include <stdint.h>

static inline bool seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool seq_leq(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

static inline bool seq_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

static inline bool seq_geq(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}

/** a <= x < b, modulo 2^32. */
static inline bool seq_in(uint32_t x, uint32_t a, uint32_t b)
{
	return x - a < b - a;
}

static inline uint32_t seq_max(uint32_t a, uint32_t b)
{
	return seq_gt(a, b) ? a : b;
}

static inline uint32_t seq_min(uint32_t a, uint32_t b)
{
	return seq_lt(a, b) ? a : b;
}

#endif
