/*
 * tcp_frto.c - the F-RTO detection of tcp_frto.h (RFC 5682 2 and 3):
 * which ACK after an RTO proves it spurious, and when new data goes
 * instead of retransmissions.
 */
#include "tcp/tcp_frto.h"

#include "tcp/tcp_seq.h"

void tcp_frto_begin(struct tcp_frto *f, uint32_t snd_max, bool sack)
{
	*f = (struct tcp_frto){.step = TCP_FRTO_FIRST_ACK, .sack = sack, .recover = snd_max};
}

void tcp_frto_delivered(struct tcp_frto *f, uint32_t start)
{
	if (f->step != TCP_FRTO_OFF && seq_lt(start, f->recover))
		f->orig = true;
}

enum tcp_frto_verdict tcp_frto_ack(struct tcp_frto *f, bool advanced, bool dup, uint32_t snd_una,
				   bool can_send_new)
{
	bool orig = f->orig;

	f->orig = false;
	if (f->step == TCP_FRTO_OFF)
		return TCP_FRTO_WAIT;
	/*
	 * 2a: everything sent before the RTO is acknowledged at the first
	 * step. The retransmission may have filled the only hole (with SACK:
	 * below segments whose SACKs were lost); the loss may have been real.
	 */
	if (f->step != TCP_FRTO_PROBE_ACK && advanced && !seq_lt(snd_una, f->recover)) {
		tcp_frto_end(f);
		return TCP_FRTO_LOSS;
	}
	/*
	 * RFC 5682 3.1 step 3b (and, as Linux, at step 2 too): data sent
	 * before the RTO and never resent arrived. Without SACK (2.1 step
	 * 3b): SND.UNA moved past what step 1 resent, after new data went.
	 */
	if (f->sack ? orig : (f->step == TCP_FRTO_PROBE_ACK && advanced)) {
		tcp_frto_end(f);
		return TCP_FRTO_SPURIOUS;
	}
	if (!advanced && !dup)
		return TCP_FRTO_WAIT;
	/*
	 * Step 2b: the first ACK (or, while the new data waits for the end of
	 * the receive burst, a later one) advanced SND.UNA but not to recover.
	 */
	if (f->step != TCP_FRTO_PROBE_ACK && advanced && can_send_new) {
		f->step = TCP_FRTO_SEND_NEW;
		return TCP_FRTO_NEW_DATA;
	}
	/*
	 * 2a: a duplicate ACK, or nothing new to send; 3a: a duplicate ACK,
	 * or an advance with SACK that delivered nothing sent before the RTO.
	 */
	tcp_frto_end(f);
	return TCP_FRTO_LOSS;
}

void tcp_frto_sent_new(struct tcp_frto *f)
{
	if (f->step == TCP_FRTO_SEND_NEW)
		f->step = TCP_FRTO_PROBE_ACK;
}
