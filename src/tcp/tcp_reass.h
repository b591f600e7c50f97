/*
 * tcp_reass.h - the receive side's out-of-order queue with bounded memory,
 * and the SACK blocks it implies (RFC 2018, RFC 9293 3.10.7.4 "seventh").
 *
 * Segments that arrive beyond rcv_nxt are kept by reference (zero copy:
 * each stored slice holds one Zbuf reference on the frame it points into)
 * until the gap before them fills. Overlaps are trimmed so the queue holds
 * each sequence number at most once. Memory is bounded by a segment count
 * and a byte count; a segment that does not fit is dropped (the peer will
 * retransmit), never half-stored.
 */
#ifndef LUNAR_TCP_TCP_REASS_H
#define LUNAR_TCP_TCP_REASS_H

#include <stdbool.h>
#include <stdint.h>

#define TCP_REASS_MAX_SEGS  65536 /* upper bound of max_segs */
#define TCP_REASS_MAX_ADD   64	  /* new sub-ranges one segment may fill at most */
#define TCP_SACK_MAX_BLOCKS 4

/** A run of received bytes: [seq, seq + len) at data. */
struct tcp_slice {
	uint32_t seq;
	uint32_t len;
	const uint8_t *data; /**< Zbuf memory; the holder owns one reference */
};

struct tcp_sack_block {
	uint32_t left, right; /**< [left, right) as in RFC 2018 3 */
};

struct tcp_reass {
	struct tcp_slice *segs; /* sorted by seq, disjoint; cap entries, allocated on first use */
	unsigned n, cap;	/* cap doubles from 16 up to max_segs */
	uint32_t bytes;		/* sum of segs[].len */
	uint32_t max_bytes;	/* bound on bytes held */
	unsigned max_segs;	/* bound on slices held (<= TCP_REASS_MAX_SEGS) */
	/*
	 * SACK recency (RFC 2018 4): every maximal contiguous run held, most
	 * recently reported (= most recently received into) first. Runs only
	 * grow by insertion and shrink from the left, so each entry is always
	 * exactly one run; there are never more runs than slices, hence the
	 * size: older runs stay known when newer ones leave via pop.
	 */
	struct tcp_sack_block *recent; /* cap entries, grown with segs */
	unsigned n_recent;
};

enum tcp_reass_result {
	TCP_REASS_STORED,    /**< some new bytes were queued */
	TCP_REASS_DUPLICATE, /**< every byte was already queued (or below rcv_nxt) */
	TCP_REASS_FULL,	     /**< no room: dropped, nothing stored */
};

/** Empty queue bounded by @max_bytes and @max_segs (clamped to TCP_REASS_MAX_SEGS). */
void tcp_reass_init(struct tcp_reass *r, uint32_t max_bytes, unsigned max_segs);
/**
 * Queue [seq, seq+len) at @data, which lies beyond @rcv_nxt (a part below
 * @rcv_nxt is ignored; held slices now below it are released first). Only
 * the bytes not held yet are stored, each new sub-range as its own slice
 * with its own Zbuf reference (zbuf_hold) on @data's object; the caller
 * keeps its own reference. If those bytes exceed max_bytes or need more
 * slices than max_segs allows, nothing is stored (TCP_REASS_FULL). Unless
 * FULL, the run now holding the segment becomes the first SACK block.
 * @dup (may be NULL), unless FULL: the first contiguous range of the
 * segment that was held already (RFC 2883 4's duplicate: all of it when
 * DUPLICATE, part of a partly new segment), left == right if none.
 */
enum tcp_reass_result tcp_reass_insert(struct tcp_reass *r, uint32_t rcv_nxt, uint32_t seq,
				       const uint8_t *data, uint32_t len,
				       struct tcp_sack_block *dup);
/**
 * Remove the slices that now continue the in-order stream at @rcv_nxt (and
 * any wholly below it, releasing those; one straddling it is trimmed). Up
 * to @max slices go to @out in sequence order, contiguous from @rcv_nxt,
 * with their references (the caller now owns them and advances rcv_nxt by
 * their lengths). @return how many.
 */
unsigned tcp_reass_pop(struct tcp_reass *r, uint32_t rcv_nxt, struct tcp_slice *out, unsigned max);
/**
 * The SACK blocks to send (RFC 2018 4): the first holds the most recently
 * received out-of-order segment, then the most recent others, each a
 * maximal contiguous run held in the queue starting above @rcv_nxt (a run
 * at @rcv_nxt is for tcp_reass_pop()), at most @max (3 when the timestamp
 * option is on, 4 otherwise). @return how many.
 */
unsigned tcp_reass_sack(const struct tcp_reass *r, uint32_t rcv_nxt, struct tcp_sack_block *out,
			unsigned max);
/** Bytes held, for the receive window computation. */
static inline uint32_t tcp_reass_bytes(const struct tcp_reass *r)
{
	return r->bytes;
}
/** Release every held slice (connection teardown). */
void tcp_reass_clear(struct tcp_reass *r);

#endif
