/*
 * tcp_rtt.h - round-trip time estimation and the retransmission timeout,
 * RFC 6298, with a configurable floor (LUNA §9 uses 4 ms in the
 * datacenter instead of RFC 6298 (2.4)'s one second). Pure arithmetic on
 * nanoseconds; the caller supplies samples (from timestamps, RFC 7323 4.1,
 * or from timing one segment at a time, Karn's algorithm).
 */
#ifndef LUNAR_TCP_TCP_RTT_H
#define LUNAR_TCP_TCP_RTT_H

#include <stdbool.h>
#include <stdint.h>

struct tcp_rtt {
	uint64_t srtt_ns;   /**< smoothed RTT (SRTT) */
	uint64_t rttvar_ns; /**< RTT variation (RTTVAR) */
	uint64_t rto_ns;    /**< current RTO, before backoff */
	uint64_t min_rto_ns, max_rto_ns;
	uint64_t granularity_ns; /**< G in RFC 6298 (2.2) */
	unsigned backoff;	 /**< exponent of the exponential backoff (5.5) */
	bool have_sample;
};

/**
 * RFC 6298 (2.1): RTO starts at @initial_ns (clamped to [min, max]) until
 * the first sample. A @max_ns below @min_ns is raised to it.
 */
void tcp_rtt_init(struct tcp_rtt *r, uint64_t initial_ns, uint64_t min_ns, uint64_t max_ns,
		  uint64_t granularity_ns);
/**
 * RFC 6298 (2.2), (2.3): fold in one measurement; clears the backoff (the
 * note after 5.7). First sample: SRTT = R, RTTVAR = R/2; later ones:
 * RTTVAR = (3*RTTVAR + |SRTT - R|)/4, then SRTT = (7*SRTT + R)/8, each
 * truncated to the nanosecond. RTO = SRTT + max(G, 4*RTTVAR) clamped to
 * [min, max]. Samples above 2^60 ns are taken as 2^60 ns.
 */
void tcp_rtt_sample(struct tcp_rtt *r, uint64_t rtt_ns);
/**
 * RFC 6298 (5.5): double the timeout after it expires, up to max. The
 * exponent stops growing once the timeout has reached max (and at 63).
 */
void tcp_rtt_backoff(struct tcp_rtt *r);
/** The timeout to arm now: rto << backoff, clamped to [min, max]. */
uint64_t tcp_rtt_timeout(const struct tcp_rtt *r);

#endif
