/*
 * tcp_cc_dctcp.c - DCTCP congestion control (RFC 8257) behind tcp_cc_ops.
 *
 * Owns cc->algo.dctcp: the estimate alpha of the fraction of bytes the
 * network marked CE, updated once per window of data from the ECN echoes
 * of the receiver's ACKs (RFC 8257 3.3 steps 1-8, g = 1/16 as 4.2
 * recommends, alpha starting at 1 as Linux does), and the reduction
 * cwnd * (1 - alpha / 2) once per window on an echo (step 9; the engine's
 * tcp_cc_on_ece() keeps it to once a window). Losses and timeouts halve
 * the window as NewReno does (3.5), and growth is NewReno's. The receiver
 * side (3.2, echoing CE state changes at once) is tcp_input.c's.
 */
#include "tcp/tcp_cc_internal.h"
#include "tcp/tcp_seq.h"

#define ALPHA_SHIFT 20 /* alpha in 1/2^20 */
#define ALPHA_ONE   (1u << ALPHA_SHIFT)
#define G_SHIFT	    4 /* g = 1/16 */

static void dctcp_init(struct tcp_cc *cc)
{
	cc->algo.dctcp.alpha = ALPHA_ONE;
}

/* RFC 8257 3.3 steps 3-8, on every ACK of new data. */
static void dctcp_acked(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
	struct tcp_cc_dctcp *d = &cc->algo.dctcp;
	uint64_t f;

	if (!d->started) {
		d->window_end = a->snd_nxt;
		d->started = true;
	}
	d->bytes_acked += a->acked;
	if (a->ece)
		d->bytes_marked += a->acked;
	if (seq_lt(a->ack, d->window_end))
		return;
	/* The window of observation is over: F = marked / acked; alpha = (1 - g) alpha + g F. */
	f = d->bytes_acked ? (d->bytes_marked << ALPHA_SHIFT) / d->bytes_acked : 0;
	d->alpha = (uint32_t)(d->alpha - (d->alpha >> G_SHIFT) + (f >> G_SHIFT));
	if (d->alpha > ALPHA_ONE)
		d->alpha = ALPHA_ONE;
	d->window_end = a->snd_nxt;
	d->bytes_acked = 0;
	d->bytes_marked = 0;
}

static uint32_t dctcp_ssthresh(struct tcp_cc *cc, uint32_t flight, enum tcp_cc_signal sig)
{
	uint64_t cut;

	if (sig != TCP_CC_SIG_ECN) /* 3.5: a loss is answered as conventional TCP does */
		return tcp_cc_halve_flight(cc, flight);
	/* Step 9: cwnd = cwnd * (1 - alpha / 2). */
	cut = ((uint64_t)cc->cwnd * cc->algo.dctcp.alpha) >> (ALPHA_SHIFT + 1);
	return max32(cc->cwnd - (uint32_t)cut, sat32(2 * (uint64_t)cc->smss));
}

const struct tcp_cc_ops tcp_cc_dctcp_ops = {
    .name = "dctcp",
    .needs_ecn = true,
    .ece_exact = true,
    .init = dctcp_init,
    .grow = tcp_cc_reno_grow,
    .acked = dctcp_acked,
    .ssthresh = dctcp_ssthresh,
};
