/*
 * tcp_rtt.c - the RFC 6298 round-trip estimator and retransmission timeout
 * (see tcp_rtt.h).
 *
 * Owns: SRTT, RTTVAR, the RTO they give, its clamp to [min, max] and the
 * exponential backoff exponent. Integer nanoseconds throughout, no floating
 * point: alpha = 1/8 and beta = 1/4 are divisions by 8 and 4, truncating
 * (at nanosecond resolution the truncation is far below any clock's
 * granularity). Samples are capped at RTT_SAMPLE_MAX_NS so that 7*SRTT and
 * 3*RTTVAR cannot overflow 64 bits.
 */
#include "tcp/tcp_rtt.h"

/* ~36.5 years: no real sample is larger; keeps 8*SRTT below 2^64. */
#define RTT_SAMPLE_MAX_NS (UINT64_C(1) << 60)

/*
 * The backoff exponent never exceeds this, so rto << backoff is always a
 * defined shift (tcp_rtt_timeout() checks the product against max first).
 */
#define RTT_BACKOFF_MAX 63u

static uint64_t clamp_rto(const struct tcp_rtt *r, uint64_t rto)
{
	if (rto < r->min_rto_ns)
		return r->min_rto_ns;
	if (rto > r->max_rto_ns)
		return r->max_rto_ns;
	return rto;
}

void tcp_rtt_init(struct tcp_rtt *r, uint64_t initial_ns, uint64_t min_ns, uint64_t max_ns,
		  uint64_t granularity_ns)
{
	r->srtt_ns = 0;
	r->rttvar_ns = 0;
	r->min_rto_ns = min_ns;
	/* RFC 6298 (2.5): a maximum MAY be placed on RTO; never below the floor. */
	r->max_rto_ns = max_ns < min_ns ? min_ns : max_ns;
	r->granularity_ns = granularity_ns;
	r->backoff = 0;
	r->have_sample = false;
	/* RFC 6298 (2.1): until a measurement is made, RTO = the initial value. */
	r->rto_ns = clamp_rto(r, initial_ns);
}

void tcp_rtt_sample(struct tcp_rtt *r, uint64_t rtt_ns)
{
	uint64_t var4; /* max(G, K*RTTVAR) */

	if (rtt_ns > RTT_SAMPLE_MAX_NS)
		rtt_ns = RTT_SAMPLE_MAX_NS;
	if (!r->have_sample) {
		/* RFC 6298 (2.2): SRTT <- R, RTTVAR <- R/2. */
		r->srtt_ns = rtt_ns;
		r->rttvar_ns = rtt_ns / 2;
		r->have_sample = true;
	} else {
		/*
		 * RFC 6298 (2.3), in this order (RTTVAR uses the old SRTT):
		 * RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|, beta = 1/4
		 * SRTT <- (1 - alpha) * SRTT + alpha * R', alpha = 1/8
		 */
		uint64_t delta = r->srtt_ns > rtt_ns ? r->srtt_ns - rtt_ns : rtt_ns - r->srtt_ns;

		r->rttvar_ns = (3 * r->rttvar_ns + delta) / 4;
		r->srtt_ns = (7 * r->srtt_ns + rtt_ns) / 8;
	}
	/*
	 * RFC 6298 (2.2)/(2.3): RTO <- SRTT + max(G, K*RTTVAR), K = 4; then
	 * (2.4) the floor (here min_rto_ns, LUNA §9) and (2.5) the ceiling.
	 */
	var4 = 4 * r->rttvar_ns;
	if (var4 < r->granularity_ns)
		var4 = r->granularity_ns;
	/* Saturate: G is the caller's and may be anything. */
	r->rto_ns = clamp_rto(r, var4 > UINT64_MAX - r->srtt_ns ? UINT64_MAX : r->srtt_ns + var4);
	/*
	 * RFC 6298 section 5, the note after (5.7): a new measurement recomputes
	 * RTO per section 2, collapsing any backoff of (5.5).
	 */
	r->backoff = 0;
}

void tcp_rtt_backoff(struct tcp_rtt *r)
{
	/*
	 * RFC 6298 (5.5): RTO <- RTO * 2, bounded by the (2.5) maximum. Once the
	 * timeout has reached max, doubling changes nothing, so the exponent
	 * stops there (and at RTT_BACKOFF_MAX whatever happens).
	 */
	if (r->backoff < RTT_BACKOFF_MAX && tcp_rtt_timeout(r) < r->max_rto_ns)
		r->backoff++;
}

uint64_t tcp_rtt_timeout(const struct tcp_rtt *r)
{
	/* rto << backoff > max, tested without shifting out bits. */
	if (r->backoff >= 64 || r->rto_ns > (r->max_rto_ns >> r->backoff))
		return r->max_rto_ns;
	return clamp_rto(r, r->rto_ns << r->backoff);
}
