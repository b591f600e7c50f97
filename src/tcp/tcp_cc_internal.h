/*
 * tcp_cc_internal.h - what the congestion control engine (tcp_cc.c) lends
 * the algorithms (tcp_cc_*.c) and nothing else calls: saturating byte
 * arithmetic and NewReno's pieces, which the others reuse.
 */
#ifndef LUNAR_TCP_TCP_CC_INTERNAL_H
#define LUNAR_TCP_TCP_CC_INTERNAL_H

#include "tcp/tcp_cc.h"

static inline uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static inline uint32_t max32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static inline uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/** RFC 5681 3.1 eq. 4: max(FlightSize / 2, 2*SMSS). */
uint32_t tcp_cc_halve_flight(const struct tcp_cc *cc, uint32_t flight);
/** RFC 5681 3.1 slow start with RFC 3465 2.2's L = 2*SMSS. */
void tcp_cc_slow_start(struct tcp_cc *cc, uint32_t acked);
/** NewReno's growth: slow start below ssthresh, else one SMSS per cwnd acknowledged. */
void tcp_cc_reno_grow(struct tcp_cc *cc, const struct tcp_cc_ack *a);

#endif
