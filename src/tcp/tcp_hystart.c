/*
 * tcp_hystart.c - HyStart++ (RFC 9406 4.2), see tcp_hystart.h. Owns the
 * per-round RTT minima and the slow start / CSS phase; the congestion
 * control engine (tcp_cc.c) owns cwnd and ssthresh and acts on the verdicts.
 */
#include "tcp/tcp_hystart.h"

#include <string.h>

#include "tcp/tcp_seq.h"

#define NONE UINT64_MAX

/* Slow start from a fresh round: no RTT history. */
static void fresh(struct tcp_hystart *h)
{
	h->last_round_min_ns = h->round_min_ns = h->css_baseline_ns = NONE;
	h->samples = 0;
	h->css_rounds = 0;
	h->round_open = false;
	h->phase = TCP_HYSTART_SS;
}

void tcp_hystart_init(struct tcp_hystart *h, uint64_t min_thresh_ns, uint64_t max_thresh_ns)
{
	memset(h, 0, sizeof(*h));
	if (!min_thresh_ns)
		return; /* TCP_HYSTART_OFF */
	h->min_thresh_ns = min_thresh_ns;
	h->max_thresh_ns = max_thresh_ns > min_thresh_ns ? max_thresh_ns : min_thresh_ns;
	fresh(h);
}

void tcp_hystart_undo(struct tcp_hystart *h, const struct tcp_hystart *prior)
{
	uint32_t entries = h->css_entries, spurious = h->css_spurious, exits = h->exits;

	*h = *prior;
	h->css_entries = entries;
	h->css_spurious = spurious;
	h->exits = exits;
}

void tcp_hystart_restart(struct tcp_hystart *h)
{
	if (tcp_hystart_active(h))
		fresh(h);
}

/* RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH)). */
static uint64_t rtt_thresh(const struct tcp_hystart *h)
{
	uint64_t t = h->last_round_min_ns / TCP_HYSTART_MIN_RTT_DIVISOR;

	if (t > h->max_thresh_ns)
		t = h->max_thresh_ns;
	return t < h->min_thresh_ns ? h->min_thresh_ns : t;
}

bool tcp_hystart_ack(struct tcp_hystart *h, uint32_t ack, uint32_t snd_nxt, uint64_t rtt_ns)
{
	if (!tcp_hystart_active(h))
		return false;
	/*
	 * A new round begins with the first ACK beyond the last round's data
	 * (so its samples time the segments sent in it, as Linux's HyStart
	 * does): the last round's minimum is kept, counting starts over.
	 */
	if (!h->round_open || seq_gt(ack, h->window_end)) {
		if (h->round_open && h->phase == TCP_HYSTART_CSS &&
		    ++h->css_rounds >= TCP_HYSTART_CSS_ROUNDS) {
			/* CSS_ROUNDS rounds of CSS: on to congestion avoidance. */
			h->phase = TCP_HYSTART_DONE;
			if (h->exits < UINT32_MAX)
				h->exits++;
			return true;
		}
		h->last_round_min_ns = h->round_min_ns;
		h->round_min_ns = NONE;
		h->samples = 0;
		h->window_end = snd_nxt;
		h->round_open = true;
	}

	if (!rtt_ns)
		return false;
	if (rtt_ns < h->round_min_ns)
		h->round_min_ns = rtt_ns;
	if (h->samples < UINT32_MAX)
		h->samples++;
	if (h->samples < TCP_HYSTART_N_RTT_SAMPLE)
		return false;
	if (h->phase == TCP_HYSTART_SS) {
		/* The round's least RTT rose by RttThresh over the last round's: CSS. */
		if (h->last_round_min_ns != NONE && h->round_min_ns >= h->last_round_min_ns &&
		    h->round_min_ns - h->last_round_min_ns >= rtt_thresh(h)) {
			h->css_baseline_ns = h->round_min_ns;
			h->phase = TCP_HYSTART_CSS;
			h->css_rounds = 0;
			if (h->css_entries < UINT32_MAX)
				h->css_entries++;
		}
	} else if (h->round_min_ns < h->css_baseline_ns) {
		/* The rise did not last: it was not the queue. Back to slow start. */
		h->css_baseline_ns = NONE;
		h->phase = TCP_HYSTART_SS;
		if (h->css_spurious < UINT32_MAX)
			h->css_spurious++;
	}
	return false;
}
