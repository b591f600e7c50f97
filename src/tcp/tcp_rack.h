/*
 * tcp_rack.h - RACK-TLP loss detection (RFC 8985): a segment is lost when
 * one sent after it was delivered and more than an RTT plus a reordering
 * window has passed since it was sent (RACK); a probe sent two RTTs after
 * the last transmission brings the ACK that lets RACK see a lost tail
 * (TLP). Time based rather than count based, so it needs no three
 * duplicate ACKs, detects lost retransmissions, and tolerates reordering
 * by widening its window when D-SACKs show it was too eager.
 *
 * Pure state over a tcp_scoreboard; the connection supplies the time,
 * the smoothed RTT and what each ACK delivered, and sends.
 */
#ifndef LUNAR_TCP_TCP_RACK_H
#define LUNAR_TCP_TCP_RACK_H

#include <stdbool.h>
#include <stdint.h>

#include "base/win_min.h"
#include "tcp/tcp_scoreboard.h"

/* RFC 8985 6.2 step 4: the reordering window stays widened for 16 recoveries. */
#define TCP_RACK_REO_PERSIST 16
/*
 * RFC 8985 6.2 step 1: min_RTT over a window, as Linux's tcp_min_rtt_wlen
 * (300 s), so that a path whose RTT rose (a new route) is believed again.
 */
#define TCP_RACK_MIN_RTT_WIN_NS (300ull * 1000000000ull)
/* RFC 8985 6.2: reo_wnd = 0 once DupThresh segments are SACKed (no reordering seen). */
#define TCP_RACK_DUPTHRESH 3

struct tcp_rack {
	uint64_t xmit_ns;	/**< RACK.xmit_ts: send time of the latest delivered segment */
	uint32_t end_seq;	/**< RACK.end_seq */
	uint64_t rtt_ns;	/**< RACK.rtt: that segment's RTT */
	struct win_min min_rtt; /**< RACK.min_RTT: read with tcp_rack_min_rtt() */
	bool reordering_seen;
	uint8_t reo_wnd_mult;	 /**< RACK.reo_wnd_mult, >= 1 */
	uint8_t reo_wnd_persist; /**< RACK.reo_wnd_persist */
	bool dsack_round_on;	 /**< RACK.dsack_round is set */
	uint32_t dsack_round;
	/* TLP (RFC 8985 7) */
	bool tlp_out;	      /**< a probe is out and its episode not over */
	bool tlp_retrans;     /**< it was a retransmission (TLP.is_retrans) */
	uint8_t tlp_copies;   /**< retransmitted copies sent (tcp_config.probe_max) */
	uint32_t tlp_end_seq; /**< SND.MAX when it was sent (TLP.end_seq) */
};

void tcp_rack_init(struct tcp_rack *r);

/** RACK.min_RTT: the lowest RTT of the last TCP_RACK_MIN_RTT_WIN_NS (UINT64_MAX: none yet). */
static inline uint64_t tcp_rack_min_rtt(const struct tcp_rack *r)
{
	return win_min_get(&r->min_rtt);
}

/** RFC 8985 6.2 steps 1-3: fold in what one ACK delivered. */
void tcp_rack_update(struct tcp_rack *r, const struct tcp_delivery *d, uint64_t now);

/**
 * Step 4, the reordering window's multiplier: widen it once per round
 * trip that brings a D-SACK (@dsack), with @snd_una and @snd_nxt marking
 * the round.
 */
void tcp_rack_update_reo_mult(struct tcp_rack *r, bool dsack, uint32_t snd_una, uint32_t snd_nxt);
/** A loss recovery ended: after 16 with no D-SACK, the multiplier returns to 1. */
void tcp_rack_recovery_done(struct tcp_rack *r);

/**
 * Step 4, RACK.reo_wnd: zero while no reordering was seen and either a
 * recovery is on, a fast one or a timeout's (@recovering,
 * tcp_cc_recovering()), or @sacked_segs reached DupThresh; else
 * min(min_RTT / 4 * multiplier, @srtt_ns).
 */
uint64_t tcp_rack_reo_wnd(const struct tcp_rack *r, bool recovering, uint32_t sacked_segs,
			  uint64_t srtt_ns);

/**
 * Step 5: mark lost every record sent before the latest delivered one and
 * longer ago than RACK.rtt + @reo_wnd. @return nanoseconds until the next
 * record would be (the RACK reordering timer; 0: none), and the number
 * newly marked in @newly_lost.
 */
uint64_t tcp_rack_detect_loss(struct tcp_rack *r, struct tcp_scoreboard *sb, uint64_t reo_wnd,
			      uint64_t now, uint32_t *newly_lost);

/**
 * RFC 8985 7.2, the probe timeout: 2 * SRTT plus @ack_delay_ns, the time
 * the receiver may hold its ACK (the caller's choice: larger when only one
 * segment is out, as a lone segment is the one a delayed ACK waits on);
 * 1 s without an RTT sample. The caller caps it at the RTO.
 */
uint64_t tcp_rack_pto(bool have_srtt, uint64_t srtt_ns, uint64_t ack_delay_ns);

#endif
