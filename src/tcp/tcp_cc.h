/*
 * tcp_cc.h - congestion control: slow start and congestion avoidance
 * (RFC 5681 3.1), fast retransmit and NewReno fast recovery (RFC 5681 3.2,
 * RFC 6582), and the restart after a timeout (RFC 5681 3.1, eq. 4 and the
 * loss window). Pure state: the caller reports ACKs, duplicate ACKs and
 * timeouts and asks what to (re)send. Counts bytes, not segments (RFC 3465
 * appropriate byte counting with L = 2*SMSS in slow start).
 */
#ifndef LUNAR_TCP_TCP_CC_H
#define LUNAR_TCP_TCP_CC_H

#include <stdbool.h>
#include <stdint.h>

struct tcp_cc {
	uint32_t cwnd;     /**< congestion window, bytes */
	uint32_t ssthresh; /**< slow start threshold, bytes */
	uint32_t smss;     /**< sender maximum segment size */
	uint32_t bytes_acked; /**< congestion avoidance byte counter (RFC 3465) */
	unsigned dupacks;  /**< consecutive duplicate ACKs */
	bool in_recovery;  /**< fast recovery in progress */
	/**
	 * The recovery is SACK-based (RFC 6675, entered by tcp_cc_enter_recovery()):
	 * what is sent is paced by the pipe, so partial ACKs neither deflate
	 * cwnd nor ask for a retransmission, and duplicate ACKs do not inflate it.
	 */
	bool sack_recovery;
	/**
	 * RFC 6582 "recover", stored as snd_nxt when recovery began or the RTO
	 * fired, i.e. one past RFC 6582's "highest sequence number
	 * transmitted". So an ACK "covers more than recover" when
	 * ack > recover, and acknowledges "all of the data up to and including
	 * recover" (a full ACK) when ack >= recover, both modulo 2^32.
	 */
	uint32_t recover;
	/**
	 * The step 1 guard is armed: no ACK has yet covered more than recover
	 * since it was set. False after init (RFC 6582 3.2 sets recover to the
	 * ISS, which every ACK of data covers) and once an ACK passes recover,
	 * so a recover left behind by 2^31 bytes never blocks fast retransmit.
	 */
	bool recover_armed;
	/**
	 * An RTO fired and no ACK has advanced snd_una since: the next RTO is a
	 * repeat for the same segment and holds ssthresh (RFC 5681 3.1, after
	 * eq. 4).
	 */
	bool rto_repeat;
};

/** What the sender must do after an event. */
enum tcp_cc_action {
	TCP_CC_NONE,
	TCP_CC_RETRANSMIT_FIRST, /**< retransmit the first unacknowledged segment */
};

/**
 * The initial window, bytes. @iw_segments nonzero: iw_segments * SMSS
 * (saturating). Zero: RFC 5681 3.1's upper bound, in whole segments:
 * 4*SMSS if SMSS <= 1095, 3*SMSS if SMSS <= 2190, else 2*SMSS. That is
 * RFC 3390 (1), min(4*SMSS, max(2*SMSS, 4380)), where it is a whole number
 * of segments (SMSS <= 1095, 1460, > 2190); between those RFC 5681's "MUST
 * NOT be more than 3 segments" governs (SMSS = 1448 gives 4344, not 4380).
 */
uint32_t tcp_cc_initial_window(uint32_t smss, unsigned iw_segments);
/**
 * cwnd = IW (tcp_cc_initial_window()), ssthresh = UINT32_MAX (RFC 5681 3.1:
 * "arbitrarily high"), no recovery, step 1 guard disarmed.
 */
void tcp_cc_init(struct tcp_cc *cc, uint32_t smss, unsigned iw_segments);
/**
 * An ACK that advanced snd_una by @acked bytes (> 0) to @ack.
 * @flight: bytes in flight before this ACK (snd_nxt - old snd_una).
 * Outside recovery: slow start (cwnd < ssthresh) adds min(acked, 2*SMSS)
 * (RFC 3465 2.2, L = 2); congestion avoidance adds SMSS per cwnd bytes
 * acknowledged (RFC 3465 2.1).
 * In recovery, a full ACK (ack >= recover) leaves it with
 * cwnd = min(ssthresh, max(flight - acked, SMSS) + SMSS) (RFC 6582 3.2
 * step 5, option 1); a partial ACK deflates cwnd by @acked, adds back SMSS
 * if acked >= SMSS (never below 1 SMSS) and asks for a retransmit. The
 * caller also resets the retransmission timer on the first partial ACK
 * (RFC 6582 3.2 step 5).
 */
enum tcp_cc_action tcp_cc_on_ack(struct tcp_cc *cc, uint32_t ack, uint32_t acked,
				 uint32_t flight);
/**
 * A duplicate ACK (RFC 5681 2 definition) of @ack while @snd_nxt was the
 * next sequence to send (snd_max: the highest sent plus one). The first two
 * change nothing here (limited transmit, RFC 3042, is the caller's). The
 * third starts fast retransmit (RFC 6582 3.2 step 2: ssthresh =
 * max(flight/2, 2*SMSS), recover = snd_nxt, cwnd = ssthresh + 3*SMSS,
 * returns TCP_CC_RETRANSMIT_FIRST) unless the ACK does not cover more than
 * "recover" (step 1's guard against spurious re-entry after a timeout or a
 * previous recovery). In recovery each one inflates cwnd by SMSS (step 3).
 */
enum tcp_cc_action tcp_cc_on_dupack(struct tcp_cc *cc, uint32_t ack, uint32_t snd_nxt,
				    uint32_t flight);
/**
 * Loss detected on a SACK connection (RACK, RFC 8985, or RFC 6675
 * IsLost()) while not in recovery: unless the RFC 6582 3.2 step 1 guard
 * holds (@snd_una not past recover), enter SACK-based recovery
 * (RFC 6675 5 step 4): ssthresh = cwnd = max(flight/2, 2*SMSS),
 * recover = @snd_nxt. @return whether recovery was entered.
 */
bool tcp_cc_enter_recovery(struct tcp_cc *cc, uint32_t snd_una, uint32_t snd_nxt, uint32_t flight);
/**
 * A loss repaired by a tail loss probe alone (RFC 8985 7.4.2): the same
 * reduction as a fast recovery, ssthresh = cwnd = max(flight/2, 2*SMSS),
 * without entering one.
 */
void tcp_cc_reduce(struct tcp_cc *cc, uint32_t flight);
/**
 * RTO expired (RFC 5681 3.1 eq. 4: ssthresh = max(flight/2, 2*SMSS), held
 * on a repeated timeout with no ACK between; cwnd = the loss window,
 * 1 SMSS). Leaves recovery and sets recover = @snd_nxt (snd_max, before any
 * go-back-N rewind) with the step 1 guard armed (RFC 6582 3.2, "after a
 * retransmit timeout").
 */
void tcp_cc_on_timeout(struct tcp_cc *cc, uint32_t flight, uint32_t snd_nxt);
/**
 * RFC 5681 4.1: restart after the connection was idle longer than an RTO:
 * cwnd = min(cwnd, RW) with RW = IW (tcp_cc_initial_window()).
 */
void tcp_cc_on_idle(struct tcp_cc *cc, unsigned iw_segments);

#endif
