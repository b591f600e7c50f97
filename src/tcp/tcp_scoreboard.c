/*
 * tcp_scoreboard.c - the sender's per-segment record (see tcp_scoreboard.h):
 * a ring of records in sequence order, SACK marking (RFC 6675 Update()),
 * D-SACK recognition (RFC 2883 4), lost marks and the running sums behind
 * RFC 6675's pipe. Owns the ring; the connection owns the send buffer.
 */
#include "tcp/tcp_scoreboard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp/tcp_seq.h"

void tcp_sb_init(struct tcp_scoreboard *sb)
{
	memset(sb, 0, sizeof(*sb));
}

void tcp_sb_fini(struct tcp_scoreboard *sb)
{
	free(sb->ring);
	memset(sb, 0, sizeof(*sb));
}

void tcp_sb_clear(struct tcp_scoreboard *sb)
{
	sb->head = sb->count = 0;
	sb->sacked = sb->sacked_segs = sb->lost = sb->lost_hint = 0;
}

/* Room for @more records; all or nothing. */
static int reserve(struct tcp_scoreboard *sb, uint32_t more)
{
	uint32_t ncap = sb->cap ? sb->cap : 16;
	struct tcp_txseg *r;

	if (sb->count + more <= sb->cap)
		return 0;
	if (more > UINT32_MAX / 2 - sb->count)
		return -ENOMEM;
	while (ncap < sb->count + more)
		ncap *= 2;
	r = malloc((size_t)ncap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < sb->count; i++)
		r[i] = *tcp_sb_at(sb, i);
	free(sb->ring);
	sb->ring = r;
	sb->cap = ncap;
	sb->head = 0;
	return 0;
}

/* Index of the first record ending after @seq (records are in sequence order). */
static uint32_t find(const struct tcp_scoreboard *sb, uint32_t seq)
{
	uint32_t base, lo = 0, hi = sb->count;

	if (!sb->count)
		return 0;
	base = tcp_sb_at(sb, 0)->start;
	if (seq_lt(seq, base))
		return 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (tcp_sb_at(sb, mid)->end - base > seq - base)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static uint32_t rec_len(const struct tcp_txseg *r)
{
	return r->end - r->start;
}

static void unlose(struct tcp_scoreboard *sb, struct tcp_txseg *r)
{
	if (r->flags & TCP_TXSEG_LOST) {
		r->flags &= (uint8_t)~TCP_TXSEG_LOST;
		sb->lost -= rec_len(r);
	}
}

int tcp_sb_sent(struct tcp_scoreboard *sb, uint32_t seq, uint32_t end, uint32_t mss,
		uint32_t snd_una, uint64_t now)
{
	uint32_t tail = tcp_sb_end(sb, snd_una);
	uint32_t from, need;

	if (!seq_lt(seq, end))
		return 0;
	if (!mss)
		mss = 1;
	if (!sb->count) {
		tail = seq;
		sb->fack = seq; /* everything below was delivered */
	}
	from = seq_gt(end, tail) ? tail : end;
	need = from == end ? 0 : (end - from + mss - 1) / mss;
	if (need && reserve(sb, need))
		return -ENOMEM;
	/* The part already recorded was sent again (an append, the common case, skips this). */
	for (uint32_t i = seq_lt(seq, tail) ? find(sb, seq) : sb->count; i < sb->count; i++) {
		struct tcp_txseg *r = tcp_sb_at(sb, i);

		if (!seq_lt(r->start, end))
			break;
		unlose(sb, r);
		r->flags |= TCP_TXSEG_RETRANS;
		r->xmit_ns = now;
	}
	/* The rest is new, one record per segment the peer will see. */
	while (from != end) {
		uint32_t take = end - from < mss ? end - from : mss;

		*tcp_sb_at(sb, sb->count) =
		    (struct tcp_txseg){.start = from, .end = from + take, .xmit_ns = now};
		sb->count++;
		from += take;
	}
	return 0;
}

/* A record newly delivered: RACK's candidate and its reordering test. */
static void delivered(struct tcp_scoreboard *sb, const struct tcp_txseg *r, uint64_t now,
		      uint64_t min_rtt_ns, struct tcp_delivery *d)
{
	d->segs++;
	if (!(r->flags & TCP_TXSEG_RETRANS) && (!d->orig || seq_lt(r->start, d->orig_start))) {
		d->orig = true;
		d->orig_start = r->start;
	}
	/*
	 * RFC 8985 6.2 step 3: delivered below what was delivered before,
	 * never resent. Before this ACK: its blocks come most recent first,
	 * and a lower block that first reaches us in the same ACK as a higher
	 * one (the ACK that carried it lost) is no evidence of reordering
	 * (Linux sorts the blocks to the same end).
	 */
	if (!d->fack_noted) {
		d->fack_noted = true;
		d->fack_before = sb->fack;
	}
	if (seq_lt(r->end, d->fack_before) && !(r->flags & TCP_TXSEG_RETRANS))
		d->reordered = true;
	if (seq_gt(r->end, sb->fack))
		sb->fack = r->end;
	/* Step 2: a retransmission acknowledged within min_RTT was the original's ACK. */
	if ((r->flags & TCP_TXSEG_RETRANS) && now - r->xmit_ns < min_rtt_ns)
		return;
	if (!d->xmit_ns || r->xmit_ns > d->xmit_ns ||
	    (r->xmit_ns == d->xmit_ns && seq_gt(r->end, d->end))) {
		d->xmit_ns = r->xmit_ns;
		d->end = r->end;
	}
}

void tcp_sb_acked(struct tcp_scoreboard *sb, uint32_t ack, uint64_t now, uint64_t min_rtt_ns,
		  struct tcp_delivery *d)
{
	while (sb->count) {
		struct tcp_txseg *r = tcp_sb_at(sb, 0);

		if (seq_leq(r->end, ack)) {
			if (r->flags & TCP_TXSEG_SACKED) {
				sb->sacked -= rec_len(r);
				sb->sacked_segs--;
			} else {
				delivered(sb, r, now, min_rtt_ns, d);
			}
			unlose(sb, r);
			sb->head = (sb->head + 1) & (sb->cap - 1);
			sb->count--;
			if (sb->lost_hint)
				sb->lost_hint--;
			continue;
		}
		if (seq_gt(ack, r->start)) {
			/* Cut by the ACK (a peer that acknowledges part of a segment). */
			uint32_t cut = ack - r->start;

			if (r->flags & TCP_TXSEG_SACKED)
				sb->sacked -= cut;
			if (r->flags & TCP_TXSEG_LOST)
				sb->lost -= cut;
			r->start = ack;
		}
		break;
	}
	if (!sb->count) {
		sb->head = 0;
		sb->lost_hint = 0;
	}
	if (seq_gt(ack, sb->fack))
		sb->fack = ack;
}

bool tcp_sb_is_dsack(const struct tcp_options *o, uint32_t ack)
{
	uint32_t l, r;

	if (!o->sack_count)
		return false;
	l = o->sack[0].left;
	r = o->sack[0].right;
	if (!seq_lt(l, r))
		return false;
	if (seq_leq(r, ack))
		return true;
	return o->sack_count > 1 && seq_geq(l, o->sack[1].left) && seq_leq(r, o->sack[1].right);
}

enum tcp_sack_verdict tcp_sb_sack(struct tcp_scoreboard *sb, uint32_t left, uint32_t right,
				  uint32_t snd_una, uint32_t snd_max, uint64_t now,
				  uint64_t min_rtt_ns, struct tcp_delivery *d)
{
	if (!seq_lt(left, right) || seq_lt(left, snd_una) || seq_gt(right, snd_max))
		return TCP_SACK_INVALID;
	for (uint32_t i = find(sb, left); i < sb->count; i++) {
		struct tcp_txseg *r = tcp_sb_at(sb, i);

		if (seq_gt(r->end, right))
			break;
		/* Only whole records: a part SACKed still needs sending (RFC 6675 3). */
		if (seq_lt(r->start, left) || (r->flags & TCP_TXSEG_SACKED))
			continue;
		r->flags |= TCP_TXSEG_SACKED;
		sb->sacked += rec_len(r);
		sb->sacked_segs++;
		unlose(sb, r);
		delivered(sb, r, now, min_rtt_ns, d);
	}
	return TCP_SACK_USED;
}

void tcp_sb_mark_lost(struct tcp_scoreboard *sb, uint32_t i)
{
	struct tcp_txseg *r = tcp_sb_at(sb, i);

	if (r->flags & (TCP_TXSEG_SACKED | TCP_TXSEG_LOST))
		return;
	r->flags |= TCP_TXSEG_LOST;
	sb->lost += rec_len(r);
	if (i < sb->lost_hint)
		sb->lost_hint = i;
}

void tcp_sb_mark_all_lost(struct tcp_scoreboard *sb, bool forget_sacks)
{
	for (uint32_t i = 0; i < sb->count; i++) {
		struct tcp_txseg *r = tcp_sb_at(sb, i);

		if (forget_sacks && (r->flags & TCP_TXSEG_SACKED)) {
			r->flags &= (uint8_t)~TCP_TXSEG_SACKED;
			sb->sacked -= rec_len(r);
			sb->sacked_segs--;
		}
		tcp_sb_mark_lost(sb, i);
	}
	sb->lost_hint = 0;
}

void tcp_sb_unmark_lost(struct tcp_scoreboard *sb)
{
	for (uint32_t i = 0; i < sb->count && sb->lost; i++) {
		struct tcp_txseg *r = tcp_sb_at(sb, i);

		if (r->flags & TCP_TXSEG_LOST) {
			r->flags &= (uint8_t)~TCP_TXSEG_LOST;
			sb->lost -= rec_len(r);
		}
	}
	sb->lost_hint = sb->count;
}

/* Too large for the path now: neither SACKed (it arrived) nor within @mss. */
static bool too_big(const struct tcp_txseg *r, uint32_t mss)
{
	return !(r->flags & TCP_TXSEG_SACKED) && rec_len(r) > mss;
}

int tcp_sb_resegment(struct tcp_scoreboard *sb, uint32_t mss)
{
	uint32_t more = 0, j;

	if (!mss)
		mss = 1;
	for (uint32_t i = 0; i < sb->count; i++) {
		const struct tcp_txseg *r = tcp_sb_at(sb, i);

		if (too_big(r, mss))
			more += (rec_len(r) + mss - 1) / mss - 1;
	}
	if (more && reserve(sb, more))
		return -ENOMEM;
	/* From the back, so each record moves once and none is overwritten unread. */
	j = sb->count + more;
	for (uint32_t i = sb->count; i-- > 0;) {
		struct tcp_txseg r = *tcp_sb_at(sb, i);
		uint32_t len = rec_len(&r);

		if (!too_big(&r, mss)) {
			*tcp_sb_at(sb, --j) = r;
			continue;
		}
		if (!(r.flags & TCP_TXSEG_LOST))
			sb->lost += len;
		for (uint32_t k = (len + mss - 1) / mss; k-- > 0;) {
			uint32_t start = r.start + k * mss;

			*tcp_sb_at(sb, --j) =
			    (struct tcp_txseg){.start = start,
					       .end = r.end - start > mss ? start + mss : r.end,
					       .xmit_ns = r.xmit_ns,
					       .flags = (uint8_t)(r.flags | TCP_TXSEG_LOST)};
		}
	}
	sb->count += more;
	sb->lost_hint = 0;
	return 0;
}

uint32_t tcp_sb_first_lost(struct tcp_scoreboard *sb)
{
	if (!sb->lost)
		return sb->count;
	for (uint32_t i = sb->lost_hint; i < sb->count; i++) {
		if (tcp_sb_at(sb, i)->flags & TCP_TXSEG_LOST) {
			sb->lost_hint = i;
			return i;
		}
	}
	return sb->count; /* not reached: sb->lost counts only records marked */
}
