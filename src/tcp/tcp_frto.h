/*
 * tcp_frto.h - F-RTO (RFC 5682): telling a spurious retransmission
 * timeout from a real one without timestamps, by what the ACKs after it
 * acknowledge. Eifel (tcp_undo.h) needs the peer's timestamps; a peer
 * without them (Windows by default) left every spurious RTO a go-back-N
 * resend of the whole window and a cut to one segment.
 *
 * After a first RTO outside recovery only the first unacknowledged
 * segment goes again. If the first ACK after it advances SND.UNA without
 * covering everything sent before the RTO ("recover"), the sender sends
 * up to two new segments instead of more retransmissions (step 2b). The
 * ACK after those tells (step 3): one that acknowledges more of the data
 * sent before the RTO, which was never retransmitted, shows that data
 * was only late, and the RTO was spurious; a duplicate ACK shows it was
 * lost, and the usual RTO recovery goes on (go-back-N, or the scoreboard's
 * lost segments) in slow start.
 *
 * With SACK (RFC 5682 3), a segment sent before the RTO, never
 * retransmitted and below "recover", newly acknowledged cumulatively or
 * by SACK proves the timeout spurious at either ACK, as in Linux's
 * tcp_process_loss(); SACKs for the new data only say the old was lost.
 * Without SACK (RFC 5682 2) only step 3's advance of SND.UNA proves it: a
 * first ACK that jumps may just be the retransmission filling the hole
 * below segments the receiver held.
 *
 * Pure state: the connection reports the RTO, what each ACK did, and what
 * it delivered, and does what the verdict says.
 */
#ifndef LUNAR_TCP_TCP_FRTO_H
#define LUNAR_TCP_TCP_FRTO_H

#include <stdbool.h>
#include <stdint.h>

enum tcp_frto_step {
	TCP_FRTO_OFF,	    /**< not detecting: no RTO, or the verdict is in */
	TCP_FRTO_FIRST_ACK, /**< step 2: the RTO's retransmission is out */
	TCP_FRTO_SEND_NEW,  /**< step 2b: two new segments are to go */
	TCP_FRTO_PROBE_ACK, /**< step 3: they went; the next ACK decides */
};

enum tcp_frto_verdict {
	TCP_FRTO_WAIT,	   /**< nothing decided by this ACK */
	TCP_FRTO_NEW_DATA, /**< step 2b: send new data, not retransmissions */
	TCP_FRTO_SPURIOUS, /**< the RTO was spurious: undo it */
	TCP_FRTO_LOSS,	   /**< the loss was real: conventional RTO recovery */
};

struct tcp_frto {
	uint8_t step;	  /**< enum tcp_frto_step */
	bool sack;	  /**< the SACK-enhanced algorithm (RFC 5682 3) */
	bool orig;	  /**< this ACK delivered a never-retransmitted segment below recover */
	uint32_t recover; /**< SND.MAX when the RTO fired */
};

/** A first RTO outside recovery fired with data up to @snd_max sent: step 1. */
void tcp_frto_begin(struct tcp_frto *f, uint32_t snd_max, bool sack);
/** Stop detecting (a later RTO, an undo by another proof). */
static inline void tcp_frto_end(struct tcp_frto *f)
{
	f->step = TCP_FRTO_OFF;
	f->orig = false;
}
/**
 * The ACK being processed newly delivered (cumulatively or by SACK) a
 * segment starting at @start that was never retransmitted.
 */
void tcp_frto_delivered(struct tcp_frto *f, uint32_t start);
/**
 * The ACK being processed, after its SACK blocks and its
 * tcp_frto_delivered() reports: it moved SND.UNA to @snd_una (@advanced)
 * or was a duplicate ACK (@dup); neither (a window update, data) decides
 * nothing. @can_send_new: unsent data waits and the peer's window takes
 * some (step 2b needs it). On TCP_FRTO_SPURIOUS and TCP_FRTO_LOSS
 * detection is over.
 */
enum tcp_frto_verdict tcp_frto_ack(struct tcp_frto *f, bool advanced, bool dup, uint32_t snd_una,
				   bool can_send_new);
/**
 * Step 2b's new data is going now: step 3 waits for the ACK after it.
 * If none could go, the caller ends detection (tcp_frto_end(); RFC 5682
 * 2.1 2b: no step 3 without new data).
 */
void tcp_frto_sent_new(struct tcp_frto *f);

#endif
