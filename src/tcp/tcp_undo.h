/*
 * tcp_undo.h - detecting that a window reduction was spurious: that what
 * the sender took for lost had arrived after all, so the reduction can be
 * taken back (tcp_cc_undo()). Two proofs, as Linux's undo:
 *  - the timestamp (Eifel, RFC 3522): the first ACK after an RTO echoes a
 *    TSval older than the episode's first retransmission, so an original
 *    transmission, not a retransmission, drew it. This catches the common
 *    datacenter case of an RTO floor below the receiver's delayed-ACK timer.
 *  - D-SACKs (RFC 3708): the receiver reported every segment retransmitted
 *    in the episode as received twice.
 *
 * An episode begins with a fresh reduction (a recovery entered, or a
 * first RTO outside one). Retransmissions still outstanding from before it
 * (a tail loss probe's) count as its own, from the time the oldest went,
 * as Linux seeds undo_retrans and retrans_stamp: else a probe that
 * repaired a real loss, followed by an RTO, would let the RTO's needless
 * retransmission prove the whole episode spurious. It closes a round trip
 * after SND.UNA passes what was outstanding when it began (or when its
 * last RTO fired), so late D-SACKs still count but an old episode is never
 * undone long after; another reduction (an ECN echo's, a repaired probe's)
 * closes it at once, so an undo never erases that one.
 *
 * A network that duplicates a retransmission fools the D-SACK proof, as it
 * fools Linux's (RFC 3708 5): the duplicate's D-SACK takes back a reduction
 * that a real loss had earned.
 *
 * Pure state: the connection reports reductions, retransmissions, ACKs,
 * D-SACK blocks and echoed timestamps, and does the undoing.
 */
#ifndef LUNAR_TCP_TCP_UNDO_H
#define LUNAR_TCP_TCP_UNDO_H

#include <stdbool.h>
#include <stdint.h>

struct tcp_undo {
	uint32_t marker;  /**< SND.UNA when the episode began */
	uint32_t high;	  /**< one past the highest byte retransmitted in it */
	uint32_t end;	  /**< the next step of closing comes when SND.UNA reaches this */
	uint32_t retrans; /**< segments retransmitted in it not yet reported received twice */
	uint32_t ts;	  /**< our TSval clock at its first retransmission */
	bool on;	  /**< an episode is open: it may still be undone */
	bool rto;	  /**< an RTO fired in it */
	bool ts_check;	  /**< the next ACK of new data is the first since an RTO */
	bool closing;	  /**< SND.UNA passed the first end: one more round */
};

/**
 * A fresh reduction: a new episode over [@snd_una, @snd_max); any open one
 * is dropped. @retrans segments retransmitted earlier are still
 * outstanding, the highest ending at @high (@snd_una if none), and @ts is
 * our TSval clock when the oldest of them went (now if none).
 */
void tcp_undo_begin(struct tcp_undo *u, uint32_t snd_una, uint32_t snd_max, uint32_t ts,
		    uint32_t retrans, uint32_t high);
/**
 * The RTO fired with data up to @snd_max outstanding, after the caller
 * began an episode if the RTO was a fresh reduction: the open episode
 * now includes it (its first ACK of new data is asked for the timestamp
 * proof) and closes a round after @snd_max. Nothing if none is open.
 */
void tcp_undo_rto(struct tcp_undo *u, uint32_t snd_max);
/** [@seq, @end) was sent again, in segments of at most @mss bytes. */
void tcp_undo_retransmitted(struct tcp_undo *u, uint32_t seq, uint32_t end, uint32_t mss);
/**
 * An ACK of new data: is it the first since an RTO and does it echo
 * (@has_ts) a nonzero TSval @ts_ecr older than the episode's first
 * retransmission? Then the RTO, and what the episode reduced before it,
 * was spurious (RFC 3522 3.2). Only the first such ACK is asked. A zero
 * echo proves nothing (a peer or middlebox may clear it; Linux ignores
 * it too).
 */
bool tcp_undo_by_timestamp(struct tcp_undo *u, bool has_ts, uint32_t ts_ecr);
/**
 * A D-SACK block [@left, @right) (RFC 2883): if it lies in what the
 * episode retransmitted, that many segments (of @mss) were not lost.
 * @return true when every retransmission of the episode has been reported
 * so (RFC 3708 3): it was spurious.
 */
bool tcp_undo_by_dsack(struct tcp_undo *u, uint32_t left, uint32_t right, uint32_t mss);
/** The episode was undone, or must no longer be: close it. */
static inline void tcp_undo_close(struct tcp_undo *u)
{
	u->on = false;
}
/**
 * After an ACK that advanced SND.UNA to @snd_una (its D-SACKs taken):
 * the first time it reaches the episode's end the end moves to @snd_max,
 * the second time the episode closes.
 */
void tcp_undo_advanced(struct tcp_undo *u, uint32_t snd_una, uint32_t snd_max);

#endif
