/*
 * tcp_cc.c - the congestion control engine (see tcp_cc.h) and NewReno:
 * slow start and congestion avoidance (RFC 5681 3.1) with appropriate byte
 * counting (RFC 3465), fast retransmit and fast recovery (RFC 5681 3.2)
 * with the NewReno response to partial ACKs (RFC 6582), the loss window
 * after an RTO and the restart window after idle (RFC 5681 3.1, 4.1), the
 * ECN echo response (RFC 3168 6.1.2).
 *
 * Owns: cwnd, ssthresh, the byte counter, the duplicate ACK count, the
 * recovery state (in_recovery, recover and its step 1 guard) and the ECN
 * response window; the algorithm owns cc->algo. It never sends: it tells
 * the caller when to retransmit the first unacknowledged segment, and the
 * caller sends whatever cwnd then allows. Byte arithmetic saturates at
 * UINT32_MAX; sequence comparisons go through tcp_seq.h.
 */
#include "tcp/tcp_cc.h"

#include <limits.h>
#include <string.h>
#include <strings.h>

#include "tcp/tcp_cc_internal.h"
#include "tcp/tcp_seq.h"

/* RFC 5681 3.2: fast retransmit on the third duplicate ACK. */
#define DUPTHRESH 3u

static const struct tcp_cc_ops *const algos[TCP_CC_ALGO_COUNT] = {
    [TCP_CC_NEWRENO] = &tcp_cc_newreno_ops,
    [TCP_CC_CUBIC] = &tcp_cc_cubic_ops,
    [TCP_CC_DCTCP] = &tcp_cc_dctcp_ops,
};

const char *tcp_cc_algo_name(enum tcp_cc_algo a)
{
	return (unsigned)a < TCP_CC_ALGO_COUNT ? algos[a]->name : NULL;
}

int tcp_cc_algo_by_name(const char *name)
{
	if (!strcasecmp(name, "reno"))
		return TCP_CC_NEWRENO;
	for (int i = 0; i < TCP_CC_ALGO_COUNT; i++)
		if (!strcasecmp(name, algos[i]->name))
			return i;
	return -1;
}

/* RFC 5681 3.1 eq. 4: ssthresh = max(FlightSize / 2, 2*SMSS). */
uint32_t tcp_cc_halve_flight(const struct tcp_cc *cc, uint32_t flight)
{
	return max32(flight / 2, sat32(2 * (uint64_t)cc->smss));
}

/*
 * RFC 3168 6.1.2: react to ECE at most once per window of data, and not
 * again for a window a loss already reduced: only once SND.UNA passed
 * what was sent when the window was last reduced.
 */
static bool ecn_window_open(const struct tcp_cc *cc, uint32_t snd_una)
{
	return !cc->ecn_armed || seq_gt(snd_una, cc->ecn_recover);
}

/*
 * A loss in the window an ECN echo already reduced (SND.UNA not yet at
 * what was sent then): the same congestion, cut once (RFC 3168 6.1.2:
 * once per window for drops and CE together; Linux keeps ssthresh when it
 * enters recovery during CWR). The recovery keeps that ssthresh.
 */
static bool ecn_reduced_this_window(const struct tcp_cc *cc, uint32_t snd_una)
{
	return cc->ecn_armed && seq_lt(snd_una, cc->ecn_recover);
}

/* A window reduction for @sig: the algorithm's new ssthresh; byte counting starts over. */
static uint32_t cut(struct tcp_cc *cc, uint32_t flight, enum tcp_cc_signal sig)
{
	cc->cwr_owed = true;
	cc->bytes_acked = 0;
	tcp_hystart_stop(&cc->hs); /* RFC 9406 4.2: a loss or an echo ends slow start for good */
	return cc->ops->ssthresh(cc, flight, sig);
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

void tcp_cc_init(struct tcp_cc *cc, uint32_t smss, unsigned iw_segments, enum tcp_cc_algo algo)
{
	memset(cc, 0, sizeof(*cc));
	cc->ops = algos[(unsigned)algo < TCP_CC_ALGO_COUNT ? algo : TCP_CC_NEWRENO];
	cc->smss = smss;
	cc->cwnd = tcp_cc_initial_window(smss, iw_segments);
	/* RFC 5681 3.1: initial ssthresh "arbitrarily high". */
	cc->ssthresh = UINT32_MAX;
	/*
	 * The rest starts at zero: no recovery, no counts, and RFC 6582 3.2's
	 * recover at the ISS, which any ACK of data covers, its guard disarmed
	 * so the value does not matter.
	 */
	if (cc->ops->init)
		cc->ops->init(cc);
}

/*
 * RFC 5681 3.1 slow start (cwnd < ssthresh), eq. 2 with RFC 3465 2.2's
 * limit L = 2*SMSS: cwnd += min(N, L). HyStart++'s CSS grows a quarter of
 * that (RFC 9406 4.2; its L for unpaced senders is 8, lunar keeps 2).
 */
void tcp_cc_slow_start(struct tcp_cc *cc, uint32_t acked)
{
	uint32_t inc = min32(acked, sat32(2 * (uint64_t)cc->smss));

	if (tcp_hystart_in_css(&cc->hs))
		inc /= TCP_HYSTART_CSS_GROWTH_DIVISOR;
	cc->cwnd = sat32((uint64_t)cc->cwnd + inc);
}

/* NewReno, outside recovery: grow cwnd for newly acknowledged bytes. */
void tcp_cc_reno_grow(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
	uint32_t acked = a->acked;

	if (cc->cwnd < cc->ssthresh) {
		tcp_cc_slow_start(cc, acked);
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

static uint32_t reno_ssthresh(struct tcp_cc *cc, uint32_t flight, enum tcp_cc_signal sig)
{
	(void)sig;
	return tcp_cc_halve_flight(cc, flight);
}

const struct tcp_cc_ops tcp_cc_newreno_ops = {
    .name = "newreno",
    .grow = tcp_cc_reno_grow,
    .ssthresh = reno_ssthresh,
};

enum tcp_cc_action tcp_cc_on_ack(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
	uint32_t ack = a->ack, acked = a->acked, flight = a->flight;

	if (cc->ops->acked)
		cc->ops->acked(cc, a);
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
	/* The same for ECN's window: a guard left armed would read wrong 2^31 bytes on. */
	if (cc->ecn_armed && seq_gt(ack, cc->ecn_recover))
		cc->ecn_armed = false;

	if (!cc->in_recovery) {
		/* RFC 9406 4.2: CSS_ROUNDS rounds of CSS end slow start. */
		if (cc->cwnd < cc->ssthresh &&
		    tcp_hystart_ack(&cc->hs, ack, a->snd_nxt, a->rtt_sample_ns))
			cc->ssthresh = cc->cwnd;
		/*
		 * An echo about to reduce the window (tcp_cc_on_ece()) must not
		 * find it grown first; a window the sender did not fill has not
		 * been tested, so it does not grow either (RFC 9438 5.8: not when
		 * limited by the application or the receiver's window).
		 */
		if (!a->app_limited && !(a->ece && ecn_window_open(cc, ack)))
			cc->ops->grow(cc, a);
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

/* A fresh reduction is about to be made: keep what it changes, for tcp_cc_undo(). */
static void save_prior(struct tcp_cc *cc)
{
	cc->prior.cwnd = cc->cwnd;
	cc->prior.ssthresh = cc->ssthresh;
	cc->prior.algo = cc->algo;
	cc->prior.hs = cc->hs;
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

	save_prior(cc);
	/*
	 * RFC 6582 3.2 step 1 (recover = highest sent) and step 2 = RFC 5681 3.2
	 * steps 2 and 3: ssthresh per eq. 4, retransmit the lost segment,
	 * cwnd = ssthresh + 3*SMSS for the three segments that left.
	 */
	if (!ecn_reduced_this_window(cc, ack))
		cc->ssthresh = cut(cc, flight, TCP_CC_SIG_LOSS);
	cc->recover = snd_nxt;
	cc->recover_armed = true;
	cc->in_recovery = true;
	cc->cwnd = sat32((uint64_t)cc->ssthresh + 3 * (uint64_t)cc->smss);
	cc->ecn_recover = snd_nxt;
	cc->ecn_armed = true;
	return TCP_CC_RETRANSMIT_FIRST;
}

bool tcp_cc_enter_recovery(struct tcp_cc *cc, uint32_t snd_una, uint32_t snd_nxt, uint32_t flight)
{
	/*
	 * Not again for the same window: while SND.UNA is below the last
	 * recovery's (or timeout's) point. At the point itself everything
	 * sent before was delivered and the recovery ended (full ACK), so a
	 * loss SACK finds now, such as the first segment sent during that
	 * recovery, is a new window's and is cut for (Linux: high_seq). The
	 * NewReno path keeps RFC 6582's "more than recover" (on_dupack).
	 */
	if (tcp_cc_recovering(cc, snd_una))
		return false;
	save_prior(cc);
	/* RFC 6675 5 step 4: RecoveryPoint = HighData, cwnd = ssthresh. */
	if (!ecn_reduced_this_window(cc, snd_una))
		cc->ssthresh = cut(cc, flight, TCP_CC_SIG_LOSS);
	cc->cwnd = cc->ssthresh;
	cc->recover = snd_nxt;
	cc->recover_armed = true;
	cc->in_recovery = true;
	cc->sack_recovery = true;
	/* RFC 6937 3.1: the PRR state starts with the recovery. */
	cc->prr_delivered = cc->prr_out = 0;
	cc->recover_fs = max32(flight, 1);
	cc->ecn_recover = snd_nxt;
	cc->ecn_armed = true;
	return true;
}

void tcp_cc_prr_ack(struct tcp_cc *cc, uint32_t delivered, uint32_t pipe)
{
	uint64_t sndcnt;

	cc->prr_delivered = sat32((uint64_t)cc->prr_delivered + delivered);
	if (pipe > cc->ssthresh) {
		/* Proportional: CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out. */
		uint64_t due = ((uint64_t)cc->prr_delivered * cc->ssthresh + cc->recover_fs - 1) /
			       cc->recover_fs;

		sndcnt = due > cc->prr_out ? due - cc->prr_out : 0;
	} else {
		/* SSRB: MIN(ssthresh - pipe, MAX(prr_delivered - prr_out, DeliveredData) + MSS). */
		uint32_t owed =
		    cc->prr_delivered > cc->prr_out ? cc->prr_delivered - cc->prr_out : 0;
		uint64_t limit = (uint64_t)max32(owed, delivered) + cc->smss;

		sndcnt = cc->ssthresh - pipe < limit ? cc->ssthresh - pipe : limit;
	}
	/* "Force a fast retransmit upon entering recovery." */
	if (!cc->prr_out && !sndcnt)
		sndcnt = cc->smss;
	cc->cwnd = sat32((uint64_t)pipe + sndcnt);
}

void tcp_cc_reduce(struct tcp_cc *cc, uint32_t flight)
{
	cc->ssthresh = cut(cc, flight, TCP_CC_SIG_LOSS);
	cc->cwnd = cc->ssthresh;
}

bool tcp_cc_on_ece(struct tcp_cc *cc, uint32_t snd_una, uint32_t snd_nxt, uint32_t flight)
{
	if (cc->in_recovery || !ecn_window_open(cc, snd_una))
		return false;
	/* "as if ... a dropped packet": ssthresh per the algorithm, cwnd = ssthresh, no
	 * retransmission. */
	cc->ssthresh = cut(cc, flight, TCP_CC_SIG_ECN);
	cc->cwnd = max32(cc->ssthresh, cc->smss);
	cc->ecn_recover = snd_nxt;
	cc->ecn_armed = true;
	return true;
}

bool tcp_cc_on_timeout(struct tcp_cc *cc, uint32_t flight, uint32_t snd_nxt)
{
	bool fresh = !cc->rto_repeat && !cc->in_recovery;

	if (fresh)
		save_prior(cc);
	/*
	 * RFC 5681 3.1 eq. 4, except that a segment already retransmitted by the
	 * timer holds ssthresh constant (the paragraph after eq. 4), and so
	 * does a timeout inside a recovery, which already cut for this window
	 * (as Linux's tcp_enter_loss()): cwnd there is PRR's momentary pipe +
	 * sndcnt, often a few segments, and CUBIC cut from it would leave
	 * ssthresh at a fraction of the window the recovery chose.
	 */
	if (fresh)
		cc->ssthresh = cut(cc, flight, TCP_CC_SIG_RTO);
	cc->cwr_owed = true; /* the loss window is a reduction too */
	cc->rto_repeat = true;
	/* RFC 5681 3.1: cwnd = the loss window, LW = 1 full-sized segment. */
	cc->cwnd = cc->smss;
	cc->bytes_acked = 0;
	cc->ecn_recover = snd_nxt;
	cc->ecn_armed = true;
	cc->dupacks = 0;
	/*
	 * RFC 6582 3.2, after a retransmit timeout: record the highest sequence
	 * number transmitted in recover and exit fast recovery.
	 */
	cc->in_recovery = false;
	cc->sack_recovery = false;
	cc->recover = snd_nxt;
	cc->recover_armed = true;
	return fresh;
}

void tcp_cc_set_smss(struct tcp_cc *cc, uint32_t smss)
{
	uint32_t old = cc->smss;

	cc->smss = smss;
	if (old != smss && cc->ops->mss_changed)
		cc->ops->mss_changed(cc, old);
}

void tcp_cc_undo(struct tcp_cc *cc)
{
	cc->cwnd = max32(cc->cwnd, cc->prior.cwnd);
	cc->ssthresh = max32(cc->ssthresh, cc->prior.ssthresh);
	if (cc->ops->undo)
		cc->ops->undo(cc, &cc->prior.algo);
	tcp_hystart_undo(&cc->hs, &cc->prior.hs);
	cc->in_recovery = false;
	cc->sack_recovery = false;
	cc->rto_repeat = false;
	cc->recover_armed = false;
	cc->dupacks = 0;
	cc->bytes_acked = 0;
	cc->ecn_armed = false; /* the undone reduction's ECN window goes with it */
}

bool tcp_cc_unused(struct tcp_cc *cc, uint32_t used, unsigned iw_segments)
{
	uint32_t win = max32(used, tcp_cc_initial_window(cc->smss, iw_segments));

	if (cc->in_recovery || win >= cc->cwnd)
		return false;
	cc->ssthresh = max32(cc->ssthresh, sat32((uint64_t)cc->cwnd * 3 / 4));
	cc->cwnd = sat32(((uint64_t)cc->cwnd + win) / 2);
	return true;
}

void tcp_cc_on_idle(struct tcp_cc *cc, unsigned iw_segments)
{
	/* RFC 5681 4.1: cwnd = min(RW, cwnd), RW = min(IW, cwnd). */
	cc->cwnd = min32(cc->cwnd, tcp_cc_initial_window(cc->smss, iw_segments));
	tcp_hystart_restart(&cc->hs);
	if (cc->ops->idle)
		cc->ops->idle(cc);
}
