/*
 * tcp_scoreboard.h - the sender's record of every segment in flight: the
 * SACK scoreboard of RFC 6675 with the per-segment state RACK-TLP needs
 * (RFC 8985 6.1: transmit time, end sequence, lost, retransmitted).
 *
 * Records partition [SND.UNA, SND.MAX) in sequence order, each at most one
 * SMSS (a TSO segment is recorded as the segments the port cuts it into),
 * so SACK blocks from a receiver, which name whole segments, mark whole
 * records. A FIN takes its sequence number in the last record.
 *
 * Pure bookkeeping: no clock, no sending. The caller reports what it sent
 * (tcp_sb_sent()), what the peer acknowledged (tcp_sb_acked(),
 * tcp_sb_sack()) and asks what is lost. Bytes SACKed and bytes lost are
 * kept as running sums so that RFC 6675's pipe is O(1).
 */
#ifndef LUNAR_TCP_TCP_SCOREBOARD_H
#define LUNAR_TCP_TCP_SCOREBOARD_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/tcp.h"

enum tcp_txseg_flag {
	TCP_TXSEG_SACKED = 1u << 0,  /**< the receiver holds it (RFC 2018) */
	TCP_TXSEG_LOST = 1u << 1,    /**< deemed lost and not retransmitted since */
	TCP_TXSEG_RETRANS = 1u << 2, /**< retransmitted at least once (RTT ambiguous) */
};

/** One segment sent: [start, end) of the sequence space. */
struct tcp_txseg {
	uint32_t start, end;
	uint64_t xmit_ns; /**< its last (re)transmission */
	uint8_t flags;	  /**< enum tcp_txseg_flag */
};

/**
 * What an ACK newly delivered (cumulatively or by SACK): the most recently
 * sent delivered segment whose RTT is not ambiguous, for RACK (RFC 8985
 * 6.2 step 2), and whether anything delivered shows reordering (step 3).
 */
struct tcp_delivery {
	uint64_t xmit_ns; /**< 0: none unambiguous */
	uint32_t end;
	bool reordered;
	uint32_t segs;	      /**< segments newly delivered */
	bool orig;	      /**< one of them was never retransmitted (F-RTO, RFC 5682 3) */
	uint32_t orig_start;  /**< the lowest such one's start */
	bool fack_noted;      /**< fack_before is set (at the first delivery) */
	uint32_t fack_before; /**< RACK.fack before this ACK: the reordering test's mark */
};

struct tcp_scoreboard {
	struct tcp_txseg *ring;
	uint32_t cap, head, count; /* ring capacity (power of two), first, number */
	uint32_t sacked;	   /**< bytes SACKed */
	uint32_t sacked_segs;	   /**< segments SACKed */
	uint32_t lost;		   /**< bytes marked lost and not retransmitted since */
	uint32_t fack;		   /**< highest sequence delivered so far (RACK.fack) */
	uint32_t lost_hint;	   /**< no lost record before this index */
};

void tcp_sb_init(struct tcp_scoreboard *sb);
void tcp_sb_fini(struct tcp_scoreboard *sb);
/** Forget every record (the connection left the synchronized states). */
void tcp_sb_clear(struct tcp_scoreboard *sb);

static inline struct tcp_txseg *tcp_sb_at(const struct tcp_scoreboard *sb, uint32_t i)
{
	return &sb->ring[(sb->head + i) & (sb->cap - 1)];
}

/** Sequence number past the last record (SND.MAX as the scoreboard knows it). */
static inline uint32_t tcp_sb_end(const struct tcp_scoreboard *sb, uint32_t snd_una)
{
	return sb->count ? tcp_sb_at(sb, sb->count - 1)->end : snd_una;
}

/**
 * [@seq, @end) went out at @now. What lies below the last record is a
 * retransmission: each record it touches is marked retransmitted, no
 * longer lost, and timed at @now. What lies beyond becomes new records of
 * at most @mss each. @snd_una: the first unacknowledged sequence number
 * (where records start when there are none).
 * @return 0, or -ENOMEM when the ring could not grow (nothing recorded).
 */
int tcp_sb_sent(struct tcp_scoreboard *sb, uint32_t seq, uint32_t end, uint32_t mss,
		uint32_t snd_una, uint64_t now);

/**
 * The cumulative ACK reached @ack: records wholly below it go, one cut by
 * it keeps its upper part. Delivered records not SACKed before are folded
 * into @d; one retransmitted less than @min_rtt_ns ago gives no RTT
 * (RFC 8985 6.2 step 2: its ACK is likely for the original).
 */
void tcp_sb_acked(struct tcp_scoreboard *sb, uint32_t ack, uint64_t now, uint64_t min_rtt_ns,
		  struct tcp_delivery *d);

/** Why a SACK block was not used. */
enum tcp_sack_verdict {
	TCP_SACK_USED,
	TCP_SACK_INVALID, /**< empty, reversed, or outside (SND.UNA, SND.MAX] */
};

/**
 * RFC 2883 4: the first block of an ACK is a D-SACK if it lies at or
 * below the cumulative ACK @ack, or within the second block.
 */
bool tcp_sb_is_dsack(const struct tcp_options *o, uint32_t ack);

/**
 * Mark the records wholly inside [@left, @right) SACKed (RFC 6675 Update()).
 * @snd_una, @snd_max bound what a block may name. Newly SACKed records go
 * into @d as in tcp_sb_acked(). @return the verdict for the block. A D-SACK
 * is the caller's to recognise first (tcp_sb_is_dsack()) and not to pass.
 */
enum tcp_sack_verdict tcp_sb_sack(struct tcp_scoreboard *sb, uint32_t left, uint32_t right,
				  uint32_t snd_una, uint32_t snd_max, uint64_t now,
				  uint64_t min_rtt_ns, struct tcp_delivery *d);

/** Mark record @i lost (RFC 8985 6.2 step 5 / RFC 6675 IsLost()). */
void tcp_sb_mark_lost(struct tcp_scoreboard *sb, uint32_t i);
/**
 * After a retransmission timeout every record not SACKed is lost
 * (RFC 8985 6.3); with @forget_sacks the SACKed ones too, as the receiver
 * may have reneged (RFC 2018 8: SACKs are advisory).
 */
void tcp_sb_mark_all_lost(struct tcp_scoreboard *sb, bool forget_sacks);
/**
 * A reduction proved spurious (tcp_undo.h): no record is lost any more
 * (Linux's tcp_undo_cwnd_reduction() unmarks them the same way); RACK
 * marks again what later ACKs show lost.
 */
void tcp_sb_unmark_lost(struct tcp_scoreboard *sb);
/**
 * The path took no more than @mss per segment (a lowered path MTU): every
 * record not SACKed and longer than @mss is cut into records of @mss (the
 * last one shorter), marked lost, with the original's flags and send time.
 * @return 0, or -ENOMEM when the ring could not grow (nothing changed).
 */
int tcp_sb_resegment(struct tcp_scoreboard *sb, uint32_t mss);
/** Index of the first record marked lost, or sb->count if none. */
uint32_t tcp_sb_first_lost(struct tcp_scoreboard *sb);

/**
 * RFC 6675 SetPipe(): the bytes the sender believes are in the network,
 * @outstanding (SND.MAX - SND.UNA) less those SACKed and those lost and
 * not yet retransmitted.
 */
static inline uint32_t tcp_sb_pipe(const struct tcp_scoreboard *sb, uint32_t outstanding)
{
	uint32_t gone = sb->sacked + sb->lost;

	return outstanding > gone ? outstanding - gone : 0;
}

#endif
