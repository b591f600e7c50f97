/*
 * tcp_rack.c - RACK-TLP (RFC 8985, see tcp_rack.h): the RACK state, the
 * reordering window and its D-SACK driven growth, time-based loss
 * marking over the scoreboard, and the probe timeout. Owns struct
 * tcp_rack; sending the probe and reacting to losses are the connection's.
 */
#include "tcp/tcp_rack.h"

#include <string.h>

#include "tcp/tcp_seq.h"

#define NS_PER_S 1000000000ull

void tcp_rack_init(struct tcp_rack *r)
{
	memset(r, 0, sizeof(*r));
	win_min_init(&r->min_rtt);
	r->reo_wnd_mult = 1;
}

/* RFC 8985 6.2: RACK_sent_after(t1, seq1, t2, seq2). */
static bool sent_after(uint64_t t1, uint32_t seq1, uint64_t t2, uint32_t seq2)
{
	return t1 > t2 || (t1 == t2 && seq_gt(seq1, seq2));
}

void tcp_rack_update(struct tcp_rack *r, const struct tcp_delivery *d, uint64_t now)
{
	if (d->reordered)
		r->reordering_seen = true; /* step 3 */
	if (!d->xmit_ns || now < d->xmit_ns)
		return;
	/* Step 1: min_RTT over the window (the caller excluded ambiguous samples). */
	win_min_update(&r->min_rtt, TCP_RACK_MIN_RTT_WIN_NS, now, now - d->xmit_ns);
	/* Step 2: the most recently sent segment delivered. */
	if (!r->xmit_ns || sent_after(d->xmit_ns, d->end, r->xmit_ns, r->end_seq)) {
		r->rtt_ns = now - d->xmit_ns;
		r->xmit_ns = d->xmit_ns;
		r->end_seq = d->end;
	}
}

void tcp_rack_update_reo_mult(struct tcp_rack *r, bool dsack, uint32_t snd_una, uint32_t snd_nxt)
{
	if (r->dsack_round_on && seq_geq(snd_una, r->dsack_round))
		r->dsack_round_on = false;
	if (!r->dsack_round_on && dsack) {
		r->dsack_round_on = true;
		r->dsack_round = snd_nxt;
		if (r->reo_wnd_mult < UINT8_MAX)
			r->reo_wnd_mult++;
		r->reo_wnd_persist = TCP_RACK_REO_PERSIST;
	}
}

void tcp_rack_recovery_done(struct tcp_rack *r)
{
	if (r->reo_wnd_persist && --r->reo_wnd_persist == 0)
		r->reo_wnd_mult = 1;
}

uint64_t tcp_rack_reo_wnd(const struct tcp_rack *r, bool recovering, uint32_t sacked_segs,
			  uint64_t srtt_ns)
{
	uint64_t w;

	if (!r->reordering_seen && (recovering || sacked_segs >= TCP_RACK_DUPTHRESH))
		return 0;
	if (tcp_rack_min_rtt(r) == UINT64_MAX)
		return 0;
	w = tcp_rack_min_rtt(r) / 4 * r->reo_wnd_mult;
	return w < srtt_ns ? w : srtt_ns;
}

uint64_t tcp_rack_detect_loss(struct tcp_rack *r, struct tcp_scoreboard *sb, uint64_t reo_wnd,
			      uint64_t now, uint32_t *newly_lost)
{
	uint64_t timeout = 0;

	*newly_lost = 0;
	if (!r->xmit_ns)
		return 0;
	for (uint32_t i = 0; i < sb->count; i++) {
		struct tcp_txseg *s = tcp_sb_at(sb, i);
		uint64_t due;

		if (s->flags & (TCP_TXSEG_SACKED | TCP_TXSEG_LOST))
			continue;
		if (!sent_after(r->xmit_ns, r->end_seq, s->xmit_ns, s->end)) {
			/*
			 * Never resent: every record after it was first sent after
			 * it, and a resent one later still, so none is older.
			 */
			if (!(s->flags & TCP_TXSEG_RETRANS))
				break;
			continue;
		}
		due = s->xmit_ns + r->rtt_ns + reo_wnd;
		if (due <= now) {
			tcp_sb_mark_lost(sb, i);
			(*newly_lost)++;
		} else if (due - now > timeout) {
			timeout = due - now;
		}
	}
	return timeout;
}

uint64_t tcp_rack_pto(bool have_srtt, uint64_t srtt_ns, uint64_t ack_delay_ns)
{
	if (!have_srtt)
		return NS_PER_S;
	return 2 * srtt_ns + ack_delay_ns;
}
