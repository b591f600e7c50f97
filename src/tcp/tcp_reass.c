/*
 * tcp_reass.c - the receive side's out-of-order queue (RFC 9293 3.10.7.4,
 * "seventh, process the segment text") and the SACK blocks it implies
 * (RFC 2018).
 *
 * Owns: the sorted, disjoint array of held slices, the Zbuf references
 * those slices hold (one per slice, taken with zbuf_hold() on insert and
 * either handed to the caller by pop or dropped with zbuf_drop()), the
 * byte and slice accounting against the bounds, and the recency order of
 * the held runs that decides which SACK blocks are sent first.
 *
 * Every comparison of sequence numbers goes through tcp_seq.h: everything
 * held lies within the receive window above rcv_nxt (well under 2^31), so
 * the modular comparisons order it correctly across 2^32.
 */
#include "tcp/tcp_reass.h"

#include <stdlib.h>
#include <string.h>

#include "mem/zbuf.h"
#include "tcp/tcp_seq.h"

static uint32_t slice_end(const struct tcp_slice *s)
{
	return s->seq + s->len;
}

void tcp_reass_init(struct tcp_reass *r, uint32_t max_bytes, unsigned max_segs)
{
	memset(r, 0, sizeof(*r));
	r->max_bytes = max_bytes;
	r->max_segs = max_segs < TCP_REASS_MAX_SEGS ? max_segs : TCP_REASS_MAX_SEGS;
}

/* Index of the first slice that ends after @seq (n if none). */
static unsigned first_ending_after(const struct tcp_reass *r, uint32_t seq)
{
	unsigned lo = 0, hi = r->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (seq_gt(slice_end(&r->segs[mid]), seq))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Forget the parts of the recency list below @edge (RFC 2018 4: a SACK
 * block never covers data at or below the cumulative ACK). */
static void recent_trim(struct tcp_reass *r, uint32_t edge)
{
	unsigned w = 0;

	for (unsigned i = 0; i < r->n_recent; i++) {
		struct tcp_sack_block b = r->recent[i];

		if (seq_leq(b.right, edge))
			continue;
		if (seq_lt(b.left, edge))
			b.left = edge;
		r->recent[w++] = b;
	}
	r->n_recent = w;
}

/*
 * Make @b, the run that now holds the segment just received, the first
 * entry (RFC 2018 4: "The first SACK block ... MUST specify the contiguous
 * block of data containing the segment which triggered this ACK"). Entries
 * for runs that @b swallowed (a segment that filled the gap between them)
 * are removed, so the list keeps one entry per run, each run once.
 */
static void recent_touch(struct tcp_reass *r, struct tcp_sack_block b)
{
	unsigned w = 0;

	for (unsigned i = 0; i < r->n_recent; i++) {
		const struct tcp_sack_block *e = &r->recent[i];

		if (seq_lt(e->left, b.right) && seq_gt(e->right, b.left))
			continue;
		r->recent[w++] = *e;
	}
	if (w == r->cap)
		w--; /* cannot happen: runs <= slices; forget the oldest */
	memmove(&r->recent[1], &r->recent[0], w * sizeof(r->recent[0]));
	r->recent[0] = b;
	r->n_recent = w + 1;
}

/*
 * Room for @need slices (and as many SACK runs): the arrays come with the
 * first out-of-order segment, since most connections never need them, and
 * double as needed up to max_segs. @return 0, or -1 without memory.
 */
static int grow(struct tcp_reass *r, unsigned need)
{
	unsigned ncap = r->cap ? r->cap : 16;
	struct tcp_slice *segs;
	struct tcp_sack_block *recent;

	if (need <= r->cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	if (ncap > r->max_segs)
		ncap = r->max_segs;
	segs = realloc(r->segs, ncap * sizeof(*segs));
	if (!segs)
		return -1;
	r->segs = segs;
	recent = realloc(r->recent, ncap * sizeof(*recent));
	if (!recent)
		return -1; /* segs is larger, cap is not: still consistent */
	r->recent = recent;
	r->cap = ncap;
	return 0;
}

/* The maximal contiguous run of held slices that contains @seq. */
static struct tcp_sack_block run_containing(const struct tcp_reass *r, uint32_t seq)
{
	unsigned lo = first_ending_after(r, seq), hi = lo;
	struct tcp_sack_block b;

	while (lo > 0 && slice_end(&r->segs[lo - 1]) == r->segs[lo].seq)
		lo--;
	while (hi + 1 < r->n && slice_end(&r->segs[hi]) == r->segs[hi + 1].seq)
		hi++;
	b.left = r->segs[lo].seq;
	b.right = slice_end(&r->segs[hi]);
	return b;
}

/*
 * Drop what lies below @rcv_nxt: slices wholly below it are released, one
 * straddling it is trimmed to start there (its reference covers the whole
 * object, so it stays as it is).
 */
static void advance(struct tcp_reass *r, uint32_t rcv_nxt)
{
	unsigned k = 0;

	while (k < r->n && seq_leq(slice_end(&r->segs[k]), rcv_nxt)) {
		r->bytes -= r->segs[k].len;
		zbuf_drop(r->segs[k].data);
		k++;
	}
	if (k > 0) {
		r->n -= k;
		memmove(&r->segs[0], &r->segs[k], r->n * sizeof(r->segs[0]));
	}
	if (r->n > 0 && seq_lt(r->segs[0].seq, rcv_nxt)) {
		struct tcp_slice *s = &r->segs[0];
		uint32_t skip = rcv_nxt - s->seq;

		s->seq = rcv_nxt;
		s->data += skip;
		s->len -= skip;
		r->bytes -= skip;
	}
	recent_trim(r, rcv_nxt);
}

/*
 * Merge the @k sorted slices @add, disjoint from every held slice, into the
 * queue (room checked by the caller). Merging from the back moves each
 * held slice at most once.
 */
static void merge_in(struct tcp_reass *r, const struct tcp_slice *add, unsigned k)
{
	unsigned w = r->n + k, a = k, h = r->n;

	while (a > 0) {
		if (h > 0 && seq_gt(r->segs[h - 1].seq, add[a - 1].seq))
			r->segs[--w] = r->segs[--h];
		else
			r->segs[--w] = add[--a];
	}
	r->n += k;
}

enum tcp_reass_result tcp_reass_insert(struct tcp_reass *r, uint32_t rcv_nxt, uint32_t seq,
				       const uint8_t *data, uint32_t len,
				       struct tcp_sack_block *dup)
{
	struct tcp_slice add[TCP_REASS_MAX_ADD];
	unsigned k = 0, room, j, first;
	uint32_t end, cur, nb = 0;
	enum tcp_reass_result res;

	if (dup)
		*dup = (struct tcp_sack_block){0, 0};

	/* RFC 9293 3.10.7.4 "first, check sequence number": only the part at
	 * or above RCV.NXT is new; the part below was delivered already. */
	if (len == 0 || seq_leq(seq + len, rcv_nxt))
		return TCP_REASS_DUPLICATE;
	if (seq_lt(seq, rcv_nxt)) {
		uint32_t skip = rcv_nxt - seq;

		seq += skip;
		data += skip;
		len -= skip;
	}
	end = seq + len;
	/* Whatever the caller has since received in order is no longer ours. */
	advance(r, rcv_nxt);

	/* The holes of the queue that [seq, end) covers: the new sub-ranges.
	 * Slices are sorted and disjoint, so one walk finds them in order. */
	room = r->max_segs > r->n ? r->max_segs - r->n : 0;
	if (room > TCP_REASS_MAX_ADD)
		room = TCP_REASS_MAX_ADD;
	cur = seq;
	first = first_ending_after(r, seq);
	for (j = first; j < r->n && seq_lt(r->segs[j].seq, end); j++) {
		if (seq_lt(cur, r->segs[j].seq)) {
			if (k == room)
				return TCP_REASS_FULL;
			add[k].seq = cur;
			add[k].len = r->segs[j].seq - cur;
			k++;
		}
		cur = slice_end(&r->segs[j]);
	}
	/*
	 * RFC 2883 4: what of [seq, end) was held already, before the new
	 * bytes join it: the run of the first slice reaching into it, clipped.
	 */
	if (dup && first < r->n && seq_lt(r->segs[first].seq, end)) {
		*dup = run_containing(r, r->segs[first].seq);
		if (seq_lt(dup->left, seq))
			dup->left = seq;
		if (seq_gt(dup->right, end))
			dup->right = end;
	}
	if (seq_lt(cur, end)) {
		if (k == room)
			return TCP_REASS_FULL;
		add[k].seq = cur;
		add[k].len = end - cur;
		k++;
	}

	if (k == 0) {
		res = TCP_REASS_DUPLICATE;
	} else {
		for (unsigned p = 0; p < k; p++)
			nb += add[p].len;
		/* Never store part of a segment: all of its new bytes or none. */
		if (r->bytes > r->max_bytes || nb > r->max_bytes - r->bytes || grow(r, r->n + k))
			return TCP_REASS_FULL;

		/* Each new sub-range is its own slice with its own reference
		 * on the one object the segment lives in. */
		for (unsigned p = 0; p < k; p++) {
			add[p].data = data + (add[p].seq - seq);
			zbuf_hold(add[p].data);
		}
		merge_in(r, add, k);
		r->bytes += nb;
		res = TCP_REASS_STORED;
	}

	/* The whole of [seq, end) is held now: its run goes first. */
	recent_touch(r, run_containing(r, seq));
	return res;
}

unsigned tcp_reass_pop(struct tcp_reass *r, uint32_t rcv_nxt, struct tcp_slice *out, unsigned max)
{
	unsigned k = 0;
	uint32_t next = rcv_nxt;

	advance(r, rcv_nxt);
	while (k < max && k < r->n && r->segs[k].seq == next) {
		out[k] = r->segs[k]; /* the reference goes with it */
		next += r->segs[k].len;
		r->bytes -= r->segs[k].len;
		k++;
	}
	if (k > 0) {
		r->n -= k;
		memmove(&r->segs[0], &r->segs[k], r->n * sizeof(r->segs[0]));
		recent_trim(r, next);
	}
	return k;
}

unsigned tcp_reass_sack(const struct tcp_reass *r, uint32_t rcv_nxt, struct tcp_sack_block *out,
			unsigned max)
{
	unsigned k = 0;

	/* RFC 2018 4: blocks in recency order, each a run actually held
	 * ("contiguous and isolated", RFC 2018 3) strictly above the
	 * cumulative ACK; a run reaching rcv_nxt is deliverable, not
	 * out of order, and is left for tcp_reass_pop(). */
	for (unsigned i = 0; i < r->n_recent && k < max; i++) {
		if (seq_gt(r->recent[i].left, rcv_nxt))
			out[k++] = r->recent[i];
	}
	return k;
}

void tcp_reass_clear(struct tcp_reass *r)
{
	for (unsigned i = 0; i < r->n; i++)
		zbuf_drop(r->segs[i].data);
	free(r->segs);
	free(r->recent);
	r->segs = NULL;
	r->recent = NULL;
	r->cap = 0;
	r->n = 0;
	r->bytes = 0;
	r->n_recent = 0;
}
