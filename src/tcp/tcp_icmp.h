/*
 * tcp_icmp.h - what an ICMP error quoting one of our segments does to its
 * connection, sans-I/O like tcp_conn.h: the connection, the quote and `now`
 * in, segments to send in a struct tcp_out out.
 *
 * Read first: RFC 5927 (ICMP attacks against TCP: 4.1 the sequence check,
 * 4.2 hard errors as soft, 7 path MTU), RFC 1191 (path MTU discovery),
 * RFC 2923 2.1 and RFC 8899 4.3 (black holes),
 * RFC 6069 (reverting the RTO backoff on unreachables),
 * RFC 1122 4.2.3.9 (TCP's reaction to ICMP), RFC 6633 (source quench is
 * ignored, by net/ before it gets here). Linux's tcp_v4_err() makes the
 * same choices unless said otherwise below.
 *
 * Owns: the sequence check, the errno of each error, the soft/hard split,
 * the path MTU rule (floor, ignoring what does not lower it, a
 * connection's MSS following its path MTU), black-hole detection when
 * no error comes (RFC 2923 2.1) and the RTO revert. The
 * connection lookup and the path MTU cache belong to tcp_stack.c, the
 * parsing to wire/icmp.c.
 */
#ifndef LUNAR_TCP_TCP_ICMP_H
#define LUNAR_TCP_TCP_ICMP_H

#include <stdint.h>

#include "tcp/tcp_conn.h"
#include "wire/icmp.h"

/**
 * The smallest path MTU lunar believes (RFC 5927 7.2: a forged, in-window
 * "fragmentation needed" must not shrink segments to a few bytes). 576 is
 * the datagram every IPv4 host takes whole (RFC 791, RFC 1122 3.3.3), which
 * the default MSS of 536 fills (RFC 9293 3.7.1); Linux's floor, min_pmtu,
 * is 552. A next-hop MTU between 68 and this is raised to it.
 */
#define TCP_PMTU_MIN 576
/** No IPv4 link carries less (RFC 791; RFC 1191 3): a lower next-hop MTU is bogus. */
#define TCP_PMTU_ABSURD 68

/** A next-hop MTU as lunar believes it: raised to TCP_PMTU_MIN. */
static inline uint32_t tcp_pmtu_floored(uint32_t mtu)
{
	return mtu < TCP_PMTU_MIN ? TCP_PMTU_MIN : mtu;
}

/** What an error did, for the stack's counters. */
enum tcp_icmp_verdict {
	TCP_ICMP_OUT_OF_WINDOW, /**< quoted SEG.SEQ not in SND.UNA..SND.NXT: ignored (4.1) */
	TCP_ICMP_MTU_ABSURD,	/**< next-hop MTU below TCP_PMTU_ABSURD: ignored */
	TCP_ICMP_MTU_NOT_LOWER, /**< not below the path MTU known (or about a SYN): ignored */
	TCP_ICMP_MTU_RECORDED,	/**< below it, but segments already fit: only c->path_mtu lowered */
	TCP_ICMP_MSS_LOWERED,	/**< snd_mss now fits the reported MTU; in flight resent */
	TCP_ICMP_MSS_FLOORED,	/**< same, to TCP_PMTU_MIN: the MTU reported was below it */
	TCP_ICMP_SOFT_ERROR,	/**< recorded in c->soft_error; the connection goes on */
	TCP_ICMP_RTO_REVERTED,	/**< a soft error that also undid one RTO backoff (RFC 6069) */
	TCP_ICMP_ABORTED,	/**< a hard error in SYN-SENT: CLOSED with c->error */
};

/**
 * An ICMP error @q (destination unreachable, time exceeded, parameter
 * problem; wire/icmp.h) quoting a segment of @c arrived.
 *
 * - RFC 5927 4.1: acted on only if the quoted sequence number lies in
 *   SND.UNA =< SEG.SEQ < SND.MAX (lunar's SND.MAX is RFC 9293's SND.NXT:
 *   its snd_nxt goes back after a timeout, the quote may be older).
 * - Fragmentation needed (3/4; RFC 1191, RFC 5927 7): a next-hop MTU,
 *   raised to TCP_PMTU_MIN, below the path MTU known (c->path_mtu, else the
 *   interface's) becomes c->path_mtu, which the stack then gives to its
 *   cache and so to the peer's other connections. The largest segment
 *   we send becomes what fits it (tcp_path_mtu()),
 *   never above what it was; what is in flight is sent again in segments
 *   of the new size (Linux's tcp_simple_retransmit()): with a scoreboard
 *   the records too large for the path are cut and marked lost, without
 *   one the sender goes back to SND.UNA. No congestion response: the path
 *   is narrower, not congested. A report about our SYN or SYN-ACK lowers
 *   nothing (a SYN is far below the floor; the SYN-ACK sets the MSS), but
 *   the stack's cache may give a connection a path MTU before or during
 *   its handshake (tcp_path_mtu()).
 * - Other errors in SYN-SENT: the hard ones (destination unreachable
 *   codes 2, 3, 6-10, 13-15, as Linux's icmp_err_convert[] marks fatal,
 *   and parameter problem) abort the connect with Linux's errno (port
 *   unreachable: -ECONNREFUSED; administratively prohibited:
 *   -EHOSTUNREACH...) and TCP_EV_RESET; the soft ones (0, 1, 5, 11, 12,
 *   time exceeded) are recorded, as RFC 1122 4.2.3.9 says they MUST NOT
 *   abort (Linux aborts on them too; lunar does not).
 * - In every other state, every error is soft (RFC 5927 4.2, RFC 1122
 *   4.2.3.9): c->soft_error keeps it, a later timeout reports it instead
 *   of -ETIMEDOUT, and an ACK of new data clears it.
 * - RFC 6069 (TCP-LCD), in synchronized states: a net or host unreachable
 *   quoting exactly SND.UNA while the RTO is backed off (after a timeout)
 *   undoes one doubling of it, counted from when the timer was armed; if
 *   that time has passed, the timer expires at once and SND.UNA is sent
 *   again. A path that comes back is then found one RTO sooner per error,
 *   not after a timeout doubled for every retransmission lost while it was
 *   down. Not in SYN-SENT or SYN-RECEIVED: the connect's retries would
 *   run out sooner. Unlike Linux, whose exponent keeps counting past the
 *   ceiling (and which measures from SND.UNA's last send), one error
 *   deep into an outage takes the timer below the ceiling again.
 */
enum tcp_icmp_verdict tcp_icmp_error(struct tcp_conn *c, const struct icmp_quote *q, uint64_t now,
				     struct tcp_out *out);

/**
 * The path to @c's peer takes @mtu bytes (0: the interface's MTU again,
 * when the cache forgets a lower one; RFC 1191 6.3). c->path_mtu becomes
 * @mtu and snd_mss follows within what the handshake allowed
 * (c->mss_clamp). Lowered in a synchronized state, what is in flight is
 * sent again in segments of the new size, as for a "fragmentation needed"
 * about @c itself; raised, only later segments are larger (cwnd kept in
 * bytes, but never below one segment). Before the SYN-ACK the handshake
 * applies it; in SYN-RECEIVED congestion control starts over in the new
 * size (only the SYN-ACK is out). The caller has judged @mtu credible
 * (the stack's cache only holds what tcp_icmp_error() took).
 * @return true if snd_mss changed.
 */
bool tcp_path_mtu(struct tcp_conn *c, uint16_t mtu, uint64_t now, struct tcp_out *out);

/**
 * An RTO of @c's (tcp_rto_expired(), before it resends): black-hole
 * detection (RFC 2923 2.1, RFC 8899 4.3), for a path that drops datagrams
 * too large for it and sends no "fragmentation needed" (filtered ICMP, a
 * tunnel). Once c->cfg.blackhole_rtos RTOs in a row have come at the
 * current size (c->rtos_at_size: a step, an ICMP error or the cache
 * lowering snd_mss starts the count again) and data has gone
 * unacknowledged at least c->cfg.blackhole_min_ns, if what the RTO
 * resends first (SND.UNA's scoreboard record, else go-back-N's segment)
 * is full-sized and no ICMP error has come since data was last
 * acknowledged (c->soft_error: an unreachable means a broken path, not a
 * narrow one), the highest plateau below the datagram's size (1500,
 * 1400, 1280, 1024, 576: Ethernet, common tunnels, IPv6's minimum, about
 * Linux's base MSS, the floor) becomes
 * c->path_mtu through tcp_path_mtu(), which sends what is in flight
 * again in the smaller segments, timed from the base RTO (the backoff so
 * far was the size's doing) with a loss window of one new segment;
 * c->pmtu_guessed tells the stack, counted in c->stats.pmtu_blackholes.
 * A smaller segment lost that long (a short RPC, a tail) changes nothing.
 * A 9000-byte path goes to 1500 at the first step (no plateau between);
 * each step takes cfg.blackhole_rtos more RTOs. A step may be an outage
 * taken for a narrow path: each starts a search upwards at once (below),
 * and the stack's cache forgets the guess after cfg.blackhole_hold_ns.
 * @return true if the path MTU was lowered.
 */
bool tcp_blackhole(struct tcp_conn *c, uint64_t now, struct tcp_out *out);

/*
 * Path MTU search (RFC 4821 7.2-7.7; RFC 8899 5.1.1's PMTU_RAISE_TIMER),
 * for a connection whose path MTU is below its interface's. A probe is
 * one segment of new data as large as c->search_high takes (the largest
 * MTU not yet found too large), sent only at a quiet moment: a scoreboard
 * (SACK and cfg.rack) to tell its loss from others, not in any recovery,
 * no timeout backed off, nothing to resend, room in cwnd and the peer's
 * window for all of it, and that much data waiting. Its data is recorded
 * in records of the current MSS, so what is lost of it goes again in
 * segments that fit.
 * - Acknowledged whole: the path takes it (tcp_path_mtu(), raised;
 *   c->pmtu_probed tells the stack, which raises its cache and the peer's
 *   other connections). The search is over.
 * - Lost (RACK marks its data lost, any of it is resent, a timeout
 *   comes, as Linux's tcp_mtup_probe_failed()): the next plateau below it
 *   is tried at once, or the MTU an ICMP error about it reported. If the
 *   probe's data, never resent, was all that was lost and no recovery is
 *   under way, there is no congestion response (RFC 4821 7.6.2, as
 *   Linux's tcp_simple_retransmit()): it goes again in segments that fit,
 *   and a tail loss probe that resent a piece of it is forgiven too.
 * - A lower path MTU while it is out (an ICMP error, the cache) counts it
 *   lost; a raise to its size or more drops it uncounted.
 * - A search starts at once after a black-hole step, and
 *   cfg.probe_interval_ns after any other lowering (which ends a search
 *   under way) or after a search ends (found or not), from the
 *   interface's MTU again; none while at the interface's MTU.
 */

/**
 * output(), about to send new data at @now with @usable bytes of cwnd and
 * window room and @unsent bytes written: the payload of the probe to send
 * now as one segment (never cut by TSO), or 0.
 */
uint32_t tcp_pmtu_probe_len(struct tcp_conn *c, uint64_t now, uint32_t usable, uint32_t unsent);
/** The probe went: [@seq, @seq + @len). Counted in c->stats.pmtu_probes. */
void tcp_pmtu_probe_sent(struct tcp_conn *c, uint32_t seq, uint32_t len);
/**
 * [@seq, @end) goes again: if it overlaps the probe in flight, the probe
 * failed (what arrives now is not the probe; its ACK would prove nothing).
 */
void tcp_pmtu_probe_resent(struct tcp_conn *c, uint32_t seq, uint32_t end, uint64_t now);
/** SND.UNA reached the probe's end with none of it resent: the path takes it. */
void tcp_pmtu_probe_acked(struct tcp_conn *c, uint64_t now, struct tcp_out *out);
/** The probe was lost (its data marked lost, or a timeout): the search goes on lower. */
void tcp_pmtu_probe_failed(struct tcp_conn *c, uint64_t now);

#endif
