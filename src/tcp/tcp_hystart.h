/*
 * tcp_hystart.h - HyStart++ (RFC 9406): leave the first slow start when
 * the round trip starts to grow, before the doubling window overflows the
 * bottleneck's queue and loses a window's worth of segments.
 *
 * Per round (a window of data: until an ACK reaches what was sent when the
 * round began) it keeps the least RTT sample. When, after N_RTT_SAMPLE
 * samples, this round's minimum is at least RttThresh above the last
 * round's, the sender enters Conservative Slow Start (CSS): cwnd grows a
 * quarter as fast. If the minimum falls back below the one that triggered
 * CSS the rise was noise and slow start resumes; after CSS_ROUNDS rounds
 * of CSS the sender goes to congestion avoidance with ssthresh = cwnd.
 * RttThresh = clamp(last round's minimum / 8, min_thresh, max_thresh),
 * RFC 9406's 4 and 16 ms by default; a datacenter's round trips are tens
 * of microseconds, so the bounds are configurable (tcp_config).
 *
 * Only the first slow start (RFC 9406 4.3): a window reduction ends it
 * for the connection's lifetime, unless it is proved spurious and undone
 * (tcp_hystart_undo()). Pure state; tcp_cc.c drives it.
 */
#ifndef LUNAR_TCP_TCP_HYSTART_H
#define LUNAR_TCP_TCP_HYSTART_H

#include <stdbool.h>
#include <stdint.h>

/** RFC 9406 4.2 constants. */
#define TCP_HYSTART_MIN_RTT_THRESH_NS  4000000ull  /**< MIN_RTT_THRESH, 4 ms */
#define TCP_HYSTART_MAX_RTT_THRESH_NS  16000000ull /**< MAX_RTT_THRESH, 16 ms */
#define TCP_HYSTART_MIN_RTT_DIVISOR    8u
#define TCP_HYSTART_N_RTT_SAMPLE       8u
#define TCP_HYSTART_CSS_GROWTH_DIVISOR 4u
#define TCP_HYSTART_CSS_ROUNDS	       5u

enum tcp_hystart_phase {
	TCP_HYSTART_OFF,  /**< not used on this connection */
	TCP_HYSTART_SS,	  /**< standard slow start, watching the RTT */
	TCP_HYSTART_CSS,  /**< Conservative Slow Start */
	TCP_HYSTART_DONE, /**< left for congestion avoidance, or a reduction came first */
};

struct tcp_hystart {
	uint64_t min_thresh_ns, max_thresh_ns; /**< RttThresh's bounds */
	uint64_t last_round_min_ns;	       /**< lastRoundMinRTT; UINT64_MAX: none */
	uint64_t round_min_ns;		       /**< currentRoundMinRTT; UINT64_MAX: none */
	uint64_t css_baseline_ns; /**< cssBaselineMinRtt: the round minimum that began CSS */
	uint32_t window_end;	  /**< the round ends when an ACK reaches this */
	uint32_t samples;	  /**< rttSampleCount, this round */
	uint8_t phase;		  /**< enum tcp_hystart_phase */
	uint8_t css_rounds;	  /**< rounds begun in CSS */
	bool round_open;	  /**< window_end is set */
	/* What it did on this connection (tcp_stack sums them). */
	uint32_t css_entries;  /**< CSS entered */
	uint32_t css_spurious; /**< CSS left for slow start again: the rise did not last */
	uint32_t exits;	       /**< slow start ended by HyStart++ (ssthresh = cwnd) */
};

/**
 * Start watching the first slow start with RttThresh clamped to
 * [@min_thresh_ns, @max_thresh_ns] (a max below the min is raised to it).
 * @min_thresh_ns 0: HyStart++ off (standard slow start throughout).
 */
void tcp_hystart_init(struct tcp_hystart *h, uint64_t min_thresh_ns, uint64_t max_thresh_ns);

/** Whether slow start is still HyStart++'s to watch (SS or CSS). */
static inline bool tcp_hystart_active(const struct tcp_hystart *h)
{
	return h->phase == TCP_HYSTART_SS || h->phase == TCP_HYSTART_CSS;
}

/** Whether slow start growth is divided by CSS_GROWTH_DIVISOR now. */
static inline bool tcp_hystart_in_css(const struct tcp_hystart *h)
{
	return h->phase == TCP_HYSTART_CSS;
}

/**
 * An ACK of new data in the first slow start: @ack the new SND.UNA,
 * @snd_nxt the highest sequence sent plus one, @rtt_ns this ACK's RTT
 * sample (0: none; RFC 6298's Karn rules apply to what the caller gives).
 * @return true when slow start is over: the caller sets ssthresh = cwnd.
 */
bool tcp_hystart_ack(struct tcp_hystart *h, uint32_t ack, uint32_t snd_nxt, uint64_t rtt_ns);

/** The window was reduced (loss, ECN, RTO): HyStart++ is done (RFC 9406 4.2, 4.3). */
static inline void tcp_hystart_stop(struct tcp_hystart *h)
{
	if (tcp_hystart_active(h))
		h->phase = TCP_HYSTART_DONE;
}

/**
 * The reduction that stopped it was spurious (tcp_cc_undo()): back to
 * where it was then, @prior, the counts kept. The first slow start goes on.
 */
void tcp_hystart_undo(struct tcp_hystart *h, const struct tcp_hystart *prior);

/**
 * cwnd restarted from the initial window after idle (RFC 5681 4.1): the
 * rounds' RTTs are stale. Still in the first slow start: slow start again
 * from a fresh round, not the rest of an old CSS.
 */
void tcp_hystart_restart(struct tcp_hystart *h);

#endif
