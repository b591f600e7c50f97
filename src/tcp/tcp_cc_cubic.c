/*
 * tcp_cc_cubic.c - CUBIC congestion control (RFC 9438) behind tcp_cc_ops.
 *
 * Owns cc->algo.cubic. Slow start is NewReno's (RFC 9438 4.10; no
 * HyStart++). In congestion avoidance cwnd follows the cubic
 * W_cubic(t) = C*(t - K)^3 + W_max (4.2) of the time since the stage
 * began, aiming each ACK at W_cubic(t + RTT) clamped to [cwnd, 1.5*cwnd]
 * (4.4, 4.5), unless the Reno-friendly estimate W_est (4.3) is ahead: then
 * cwnd follows W_est. A congestion signal multiplies the window by
 * beta = 0.7 (4.6) with fast convergence (4.7); a timeout starts the next
 * stage with K = 0 and W_max = cwnd (4.8).
 *
 * "The window" reduced is min(cwnd, FlightSize): RFC 9438 4.6 reduces
 * flight_size, and a cwnd that grew while the application sent less must
 * not set W_max (lunar grows cwnd without checking that it was used).
 * Windows are kept in segments, as doubles: the cube needs the range, the
 * once-per-ACK cost is a few multiplications.
 */
#include <math.h>

#include "tcp/tcp_cc_internal.h"

#define CUBIC_C	   0.4 /* RFC 9438 4.2: segments per second cubed */
#define CUBIC_BETA 0.7 /* RFC 9438 4.6 */
/* RFC 9438 4.3: alpha_cubic = 3 * (1 - beta) / (1 + beta), Reno-friendly below cwnd_prior. */
#define CUBIC_ALPHA (3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA))

static double segs(const struct tcp_cc *cc, uint64_t bytes)
{
	return (double)bytes / cc->smss;
}

static uint32_t cubic_ssthresh(struct tcp_cc *cc, uint32_t flight, enum tcp_cc_signal sig)
{
	struct tcp_cc_cubic *cu = &cc->algo.cubic;
	double w = segs(cc, min32(cc->cwnd, flight));

	/* 4.7: a window that stopped short of the last W_max releases some for others. */
	cu->w_max = w < cu->w_max ? w * (1.0 + CUBIC_BETA) / 2.0 : w;
	cu->cwnd_prior = w;
	cu->epoch_ns = 0;
	cu->after_rto = sig == TCP_CC_SIG_RTO;
	/* 4.6: ssthresh = flight_size * beta, at least 2 segments. */
	return max32(sat32((uint64_t)(w * CUBIC_BETA * cc->smss)), sat32(2 * (uint64_t)cc->smss));
}

/* W_cubic(t), segments (RFC 9438 eq. 1). */
static double w_cubic(const struct tcp_cc_cubic *cu, double t)
{
	double d = t - cu->k;

	return CUBIC_C * d * d * d + cu->w_max;
}

static void cubic_grow(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
	struct tcp_cc_cubic *cu = &cc->algo.cubic;
	double cwnd = segs(cc, cc->cwnd), acked = segs(cc, a->acked), t, target, inc;

	if (cc->cwnd < cc->ssthresh) {
		tcp_cc_slow_start(cc, a->acked);
		return;
	}
	if (!cu->epoch_ns) {
		/* 4.2: a congestion avoidance stage begins. */
		cu->epoch_ns = a->now_ns ? a->now_ns : 1;
		cu->cwnd_epoch = cwnd;
		cu->w_est = cwnd;
		cu->carry = 0;
		if (cu->after_rto || cu->w_max <= cwnd) {
			/* 4.8 after a timeout, or already past W_max: the plateau is here. */
			cu->w_max = cwnd;
			cu->k = 0;
		} else {
			cu->k = cbrt((cu->w_max - cwnd) / CUBIC_C); /* eq. 2 */
		}
		cu->after_rto = false;
	}
	t = a->now_ns > cu->epoch_ns ? (double)(a->now_ns - cu->epoch_ns) / 1e9 : 0;
	/* 4.3: W_est grows alpha per window acknowledged; 1 once past cwnd_prior. */
	cu->w_est += (cu->w_est >= cu->cwnd_prior ? 1.0 : CUBIC_ALPHA) * acked / cwnd;
	if (w_cubic(cu, t) < cu->w_est) {
		/* Reno-friendly region (4.3): go as fast as Reno would have. */
		uint32_t est = sat32((uint64_t)(cu->w_est * cc->smss));

		if (est > cc->cwnd)
			cc->cwnd = est;
		return;
	}
	/* 4.4, 4.5: aim at W_cubic(t + RTT), no lower than cwnd and no higher than 1.5 * cwnd. */
	target = w_cubic(cu, t + (double)a->rtt_ns / 1e9);
	if (target < cwnd)
		target = cwnd;
	if (target > 1.5 * cwnd)
		target = 1.5 * cwnd;
	/* cwnd += (target - cwnd) / cwnd per segment acknowledged, in bytes. */
	inc = (target - cwnd) / cwnd * (double)a->acked + cu->carry;
	cu->carry = inc - floor(inc);
	cc->cwnd = sat32((uint64_t)cc->cwnd + (uint64_t)inc);
}

/* After idle the cubic's clock must not have run (RFC 9438 5.8): a new stage at the next ACK. */
static void cubic_idle(struct tcp_cc *cc)
{
	cc->algo.cubic.epoch_ns = 0;
}

/* RFC 9438 4.9: a spurious reduction restores W_max, K, the epoch and W_est as they were. */
static void cubic_undo(struct tcp_cc *cc, const union tcp_cc_algo_state *prior)
{
	cc->algo.cubic = prior->cubic;
}

/*
 * The segment size changed: W_max and cwnd_prior are segments of the old
 * size, in the new one as many bytes (a smaller MSS otherwise puts cwnd
 * far above W_max and the Reno-friendly estimate, and growth stalls). The
 * stage starts again at the next ACK with K, cwnd_epoch and W_est of the
 * new size; the state an undo would restore is rescaled alike.
 */
static void cubic_mss_changed(struct tcp_cc *cc, uint32_t old_smss)
{
	double f = (double)old_smss / cc->smss;

	cc->algo.cubic.w_max *= f;
	cc->algo.cubic.cwnd_prior *= f;
	cc->algo.cubic.epoch_ns = 0;
	cc->prior.algo.cubic.w_max *= f;
	cc->prior.algo.cubic.cwnd_prior *= f;
	cc->prior.algo.cubic.epoch_ns = 0;
}

const struct tcp_cc_ops tcp_cc_cubic_ops = {
    .name = "cubic",
    .grow = cubic_grow,
    .ssthresh = cubic_ssthresh,
    .idle = cubic_idle,
    .undo = cubic_undo,
    .mss_changed = cubic_mss_changed,
};
