/*
 * tcp_undo.c - the undo episode of tcp_undo.h: what was retransmitted
 * since a reduction and the two proofs (timestamp, D-SACK) that it was
 * spurious.
 */
#include "tcp/tcp_undo.h"

#include "tcp/tcp_seq.h"

/* Segments of at most @mss bytes that @len bytes took (one if @mss is unknown). */
static uint32_t segments(uint32_t len, uint32_t mss)
{
	return mss ? (len + mss - 1) / mss : 1;
}

void tcp_undo_begin(struct tcp_undo *u, uint32_t snd_una, uint32_t snd_max, uint32_t ts,
		    uint32_t retrans, uint32_t high)
{
	*u = (struct tcp_undo){.marker = snd_una,
			       .high = seq_gt(high, snd_una) ? high : snd_una,
			       .end = snd_max,
			       .retrans = retrans,
			       .ts = ts,
			       .on = true};
}

void tcp_undo_rto(struct tcp_undo *u, uint32_t snd_max)
{
	if (!u->on)
		return;
	u->rto = true;
	u->ts_check = true;
	u->end = snd_max;
	u->closing = false;
}

void tcp_undo_retransmitted(struct tcp_undo *u, uint32_t seq, uint32_t end, uint32_t mss)
{
	if (!u->on || !seq_lt(seq, end))
		return;
	u->retrans += segments(end - seq, mss);
	if (seq_gt(end, u->high))
		u->high = end;
}

bool tcp_undo_by_timestamp(struct tcp_undo *u, bool has_ts, uint32_t ts_ecr)
{
	if (!u->on || !u->ts_check)
		return false;
	u->ts_check = false;
	/* TSvals compare as sequence numbers do (RFC 7323 5.2). */
	return has_ts && ts_ecr && seq_lt(ts_ecr, u->ts);
}

bool tcp_undo_by_dsack(struct tcp_undo *u, uint32_t left, uint32_t right, uint32_t mss)
{
	uint32_t segs;

	if (!u->on || !u->retrans || !seq_lt(left, right) || seq_lt(left, u->marker) ||
	    seq_gt(right, u->high))
		return false;
	segs = segments(right - left, mss);
	u->retrans -= segs < u->retrans ? segs : u->retrans;
	return u->retrans == 0;
}

void tcp_undo_advanced(struct tcp_undo *u, uint32_t snd_una, uint32_t snd_max)
{
	if (!u->on || !seq_geq(snd_una, u->end))
		return;
	if (u->closing) {
		u->on = false;
		return;
	}
	u->closing = true;
	u->end = snd_max;
}
