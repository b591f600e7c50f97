/*
 * tcp_syncookie.h - SYN cookies (RFC 4987 3.6): how a listener whose backlog
 * is full still answers a SYN, keeping no state until the handshake's ACK.
 *
 * Owns the cookie's format. The SYN-ACK's ISN is the cookie:
 *
 *   bits 31-29  MSS, as an index into a table of common values (rounded down)
 *   bits 28-25  the peer's window scale (0-14), or 15: it sent none
 *   bit  24     the peer sent SACK-permitted
 *   bit  23     the SYN asked for ECN (ECE and CWR, RFC 3168 6.1.1)
 *   bits 22-0   a MAC: SipHash-2-4 under a per-stack secret of the 4-tuple,
 *               the peer's ISN, those 9 bits and a time slot (~17 s)
 *
 * The ACK completing the handshake acknowledges cookie + 1 and carries the
 * peer's ISN + 1; a cookie from this slot or the one before is accepted.
 * Timestamps need no bit: a peer may send them after the SYN only if both
 * SYNs had them (RFC 7323 3.2), so an ACK carrying them says they were
 * negotiated. A blind attacker must guess 23 bits per 4-tuple.
 */
#ifndef LUNAR_TCP_TCP_SYNCOOKIE_H
#define LUNAR_TCP_TCP_SYNCOOKIE_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp/tcp_table.h"
#include "wire/tcp.h"

#define TCP_SYNCOOKIE_KEY_BYTES 16
/** A cookie lives for the slot it was made in and the next one: 17-34 s. */
#define TCP_SYNCOOKIE_SLOT_SHIFT 34 /* ns >> 34: a 17.2 s slot */

/** What a valid cookie gives back of the peer's SYN. */
struct tcp_syncookie_opts {
	uint16_t mss;	     /**< the peer's MSS, rounded down to the table's value */
	bool has_wscale;     /**< the peer sent a window scale ... */
	uint8_t wscale;	     /**< ... of this shift (0-14) */
	bool sack_permitted; /**< the peer sent SACK-permitted */
	bool ecn_setup;	     /**< the peer's SYN was ECN-setup (ECE and CWR) */
};

/** Is @syn an ECN-setup SYN (RFC 3168 6.1.1: ECE and CWR)? */
bool tcp_syncookie_ecn_setup(const struct tcp_repr *syn);

/**
 * The cookie to use as the ISN of the SYN-ACK answering @syn on @t
 * (local = the listener). @key: TCP_SYNCOOKIE_KEY_BYTES secret bytes.
 */
uint32_t tcp_syncookie_make(const uint8_t *key, const struct tcp_4tuple *t,
			    const struct tcp_repr *syn, uint64_t now_ns);

/**
 * Is @ack (an ACK without SYN or RST for no connection) the third segment
 * of a handshake we answered with a cookie, in this slot or the previous
 * one? Fills @out with the peer's SYN options when it is.
 */
bool tcp_syncookie_check(const uint8_t *key, const struct tcp_4tuple *t, const struct tcp_repr *ack,
			 uint64_t now_ns, struct tcp_syncookie_opts *out);

#endif
