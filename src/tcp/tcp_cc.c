/*
 * tcp_cc.c - NewReno congestion control (see tcp_cc.h): slow start and
 * congestion avoidance (RFC 5681 3.1) with appropriate byte counting
 * (RFC 3465), fast retransmit and fast recovery (RFC 5681 3.2) with the
 * NewReno response to partial ACKs (RFC 6582), the loss window after an
 * RTO and the restart window after idle (RFC 5681 3.1, 4.1).
 *
 * Owns: cwnd, ssthresh, the byte counter, the duplicate ACK count and the
 * recovery state (in_recovery, recover and its step 1 guard). It never
 * sends: it tells the caller when to retransmit the first unacknowledged
 * segment, and the caller sends whatever cwnd then allows. Byte arithmetic
 * saturates at UINT32_MAX; sequence comparisons go through tcp_seq.h.
 */
#include "tcp/tcp_cc.h"

#include <limits.h>

#include "tcp/tcp_seq.h"

/* RFC 5681 3.2: fast retransmit on the third duplicate ACK. */
#define DUPTHRESH 3u

static uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint32_t max32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* RFC 5681 3.1 eq. 4: ssthresh = max(FlightSize / 2, 2*SMSS). */
static uint32_t halve_flight(const struct tcp_cc *cc, uint32_t flight)
{
	return max32(flight / 2, sat32(2 * (uint64_t)cc->smss));
}

uint32_t tcp_cc_initial_window(uint32_t smss, unsigned iw_segments)
{
	if (iw_segments)
		return sat32((uint64_t)iw_segments * smss);
	/* RFC 5681 3.1: IW upper bound by SMSS, in whole segments. */
	if (smss > 2190)
		return sat32(2 * (uint64_t)smss);
	if (smss > 1095)
		return 3 * smss;
	return 4 * smss;
}

void tcp_cc_init(struct tcp_cc *cc, uint32_t smss, unsigned iw_segments)
{
	cc->smss = smss;
	cc->cwnd = tcp_cc_initial_window(smss, iw_segments);
	/* RFC 5681 3.1: initial ssthresh "arbitrarily high". */
	cc->ssthresh = UINT32_MAX;
	cc->bytes_acked = 0;
	cc->dupacks = 0;
	cc->in_recovery = false;
	cc->sack_recovery = false;
	/*
	 * RFC 6582 3.2: recover starts at the ISS, which any ACK of data
	 * covers; the guard is disarmed so the value does not matter.
	 */
	cc->recover = 0;
	cc->recover_armed = false;
	cc->rto_repeat = false;
}

/* Outside recovery: grow cwnd for @acked newly acknowledged bytes. */
static void grow(struct tcp_cc *cc, uint32_t acked)
{
	if (cc->cwnd < cc->ssthresh) {
		/*
		 * RFC 5681 3.1 slow start (cwnd < ssthresh), eq. 2 with RFC 3465
		 * 2.2's limit L = 2*SMSS: cwnd += min(N, L).
		 */
		cc->cwnd = sat32((uint64_t)cc->cwnd + min32(acked, sat32(2 * (uint64_t)cc->smss)));
		return;
	}
	/*
	 * RFC 5681 3.1 congestion avoidance (cwnd >= ssthresh) by byte counting
	 * (RFC 3465 2.1): when bytes_acked reaches cwnd, subtract cwnd and add
	 * SMSS. The carry is kept below the new cwnd so that one stretch ACK
	 * cannot buy more than one further SMSS ahead of time (RFC 5681 3.1: no
	 * more than SMSS per RTT).
	 */
	cc->bytes_acked = sat32((uint64_t)cc->bytes_acked + acked);
	if (cc->cwnd && cc->bytes_acked >= cc->cwnd) {
		cc->bytes_acked -= cc->cwnd;
		cc->cwnd = sat32((uint64_t)cc->cwnd + cc->smss);
		if (cc->bytes_acked >= cc->cwnd)
			cc->bytes_acked = cc->cwnd - 1;
	}
}

enum tcp_cc_action tcp_cc_on_ack(struct tcp_cc *cc, uint32_t ack, uint32_t acked, uint32_t flight)
{
	/* The duplicate ACK count is of consecutive duplicates (RFC 5681 3.2). */
	cc->dupacks = 0;
	/* snd_una moved: the next RTO is for a different segment (RFC 5681 3.1). */
	cc->rto_repeat = false;
	/*
	 * RFC 6582 3.2 step 1: once an ACK covers more than recover, every later
	 * one does (ACKs only advance), so the guard is spent. In recovery only
	 * a full ACK can pass recover.
	 */
	if (cc->recover_armed && seq_gt(ack, cc->recover))
		cc->recover_armed = false;

	if (!cc->in_recovery) {
		grow(cc, acked);
		return TCP_CC_NONE;
	}

	if (seq_geq(ack, cc->recover)) {
		/*
		 * RFC 6582 3.2 step 5, full acknowledgment: cwnd =
		 * min(ssthresh, max(FlightSize, SMSS) + SMSS) (option 1), with
		 * FlightSize what is outstanding once this ACK is applied; exit
		 * fast recovery.
		 */
		uint32_t after = flight > acked ? flight - acked : 0;

		cc->cwnd = min32(cc->ssthresh, sat32((uint64_t)max32(after, cc->smss) + cc->smss));
		cc->in_recovery = false;
		cc->sack_recovery = false;
		cc->bytes_acked = 0;
		return TCP_CC_NONE;
	}

	/* RFC 6675: the pipe decides what is sent; cwnd stays at ssthresh. */
	if (cc->sack_recovery)
		return TCP_CC_NONE;
	/*
	 * RFC 6582 3.2 step 5, partial acknowledgment: retransmit the first
	 * unacknowledged segment, deflate cwnd by the amount of new data
	 * acknowledged, and add back SMSS if that was at least SMSS. Stay in
	 * fast recovery. cwnd never drops below the loss window (1 SMSS,
	 * RFC 5681 3.1).
	 */
	cc->cwnd = cc->cwnd > acked ? cc->cwnd - acked : 0;
	if (acked >= cc->smss)
		cc->cwnd = sat32((uint64_t)cc->cwnd + cc->smss);
	cc->cwnd = max32(cc->cwnd, cc->smss);
	return TCP_CC_RETRANSMIT_FIRST;
}

enum tcp_cc_action tcp_cc_on_dupack(struct tcp_cc *cc, uint32_t ack, uint32_t snd_nxt,
				    uint32_t flight)
{
	if (cc->dupacks < UINT_MAX)
		cc->dupacks++;

	if (cc->in_recovery) {
		/*
		 * RFC 5681 3.2 step 4 / RFC 6582 3.2 step 3: each further duplicate
		 * ACK inflates cwnd by SMSS (a segment has left the network).
		 */
		cc->cwnd = sat32((uint64_t)cc->cwnd + cc->smss);
		return TCP_CC_NONE;
	}

	/* RFC 5681 3.2 step 1: the first and second duplicate ACKs do nothing here. */
	if (cc->dupacks != DUPTHRESH)
		return TCP_CC_NONE;

	/*
	 * RFC 6582 3.2 step 1: enter fast retransmit only if the cumulative ACK
	 * covers more than recover; otherwise neither retransmit nor touch
	 * ssthresh (these are duplicates for data sent before the last
	 * timeout or recovery).
	 */
	if (cc->recover_armed && !seq_gt(ack, cc->recover))
		return TCP_CC_NONE;

	/*
	 * RFC 6582 3.2 step 1 (recover = highest sent) and step 2 = RFC 5681 3.2
	 * steps 2 and 3: ssthresh per eq. 4, retransmit the lost segment,
	 * cwnd = ssthresh + 3*SMSS for the three segments that left.
	 */
	cc->ssthresh = halve_flight(cc, flight);
	cc->recover = snd_nxt;
	cc->recover_armed = true;
	cc->in_recovery = true;
	cc->cwnd = sat32((uint64_t)cc->ssthresh + 3 * (uint64_t)cc->smss);
	cc->bytes_acked = 0;
	return TCP_CC_RETRANSMIT_FIRST;
}

bool tcp_cc_enter_recovery(struct tcp_cc *cc, uint32_t snd_una, uint32_t snd_nxt, uint32_t flight)
{
	if (cc->in_recovery || (cc->recover_armed && !seq_gt(snd_una, cc->recover)))
		return false;
	/* RFC 6675 5 step 4: RecoveryPoint = HighData, cwnd = ssthresh. */
	cc->ssthresh = halve_flight(cc, flight);
	cc->cwnd = cc->ssthresh;
	cc->recover = snd_nxt;
	cc->recover_armed = true;
	cc->in_recovery = true;
	cc->sack_recovery = true;
	cc->bytes_acked = 0;
	return true;
}

void tcp_cc_reduce(struct tcp_cc *cc, uint32_t flight)
{
	cc->ssthresh = halve_flight(cc, flight);
	cc->cwnd = cc->ssthresh;
	cc->bytes_acked = 0;
}

void tcp_cc_on_timeout(struct tcp_cc *cc, uint32_t flight, uint32_t snd_nxt)
{
	/*
	 * RFC 5681 3.1 eq. 4, except that a segment already retransmitted by the
	 * timer holds ssthresh constant (the paragraph after eq. 4).
	 */
	if (!cc->rto_repeat)
		cc->ssthresh = halve_flight(cc, flight);
	cc->rto_repeat = true;
	/* RFC 5681 3.1: cwnd = the loss window, LW = 1 full-sized segment. */
	cc->cwnd = cc->smss;
	cc->bytes_acked = 0;
	cc->dupacks = 0;
	/*
	 * RFC 6582 3.2, after a retransmit timeout: record the highest sequence
	 * number transmitted in recover and exit fast recovery.
	 */
	cc->in_recovery = false;
	cc->sack_recovery = false;
	cc->recover = snd_nxt;
	cc->recover_armed = true;
}

void tcp_cc_on_idle(struct tcp_cc *cc, unsigned iw_segments)
{
	/* RFC 5681 4.1: cwnd = min(RW, cwnd), RW = min(IW, cwnd). */
	cc->cwnd = min32(cc->cwnd, tcp_cc_initial_window(cc->smss, iw_segments));
}
