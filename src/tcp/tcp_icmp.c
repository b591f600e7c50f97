/*
 * tcp_icmp.c - a connection's reaction to ICMP errors: the RFC 5927 4.1
 * sequence check, path MTU (RFC 1191) and black holes that send no
 * error (RFC 2923 2.1), soft/hard errors (RFC 1122 4.2.3.9) and the RTO
 * revert of RFC 6069. See tcp_icmp.h.
 */
#include "tcp/tcp_icmp.h"

#include <errno.h>

#include "tcp/tcp_internal.h"
#include "tcp/tcp_seq.h"

/* The MTU lunar sends at without a lower path MTU: its interface's (what cfg.mss was made from). */
static uint32_t iface_mtu(const struct tcp_conn *c)
{
	return c->cfg.mss + 40u; /* tcp_conn_init() made a cfg.mss of 0 1460 */
}

/* The MTU lunar sends at now. */
static uint32_t cur_mtu(const struct tcp_conn *c)
{
	return c->path_mtu ? c->path_mtu : iface_mtu(c);
}

/*
 * No search now: the next from the interface's MTU in cfg.probe_interval_ns
 * (RFC 8899 5.1.1's PMTU_RAISE_TIMER), if the path MTU is still below it.
 */
static void search_later(struct tcp_conn *c, uint64_t now)
{
	uint32_t top = iface_mtu(c);

	c->search_high = (uint16_t)(top > UINT16_MAX ? UINT16_MAX : top);
	c->probe_at = c->path_mtu && c->cfg.probe_interval_ns ? now + c->cfg.probe_interval_ns : 0;
}

/*
 * Destination unreachable codes as Linux's icmp_err_convert[] reads them:
 * the errno, and whether the error is hard (fatal) while connecting.
 */
static const struct {
	int err;
	bool hard;
} unreach[16] = {
    [0] = {ENETUNREACH, false},	  /* net unreachable */
    [1] = {EHOSTUNREACH, false},  /* host unreachable */
    [2] = {ENOPROTOOPT, true},	  /* protocol unreachable */
    [3] = {ECONNREFUSED, true},	  /* port unreachable */
    [4] = {EMSGSIZE, false},	  /* fragmentation needed: handled apart */
    [5] = {EOPNOTSUPP, false},	  /* source route failed */
    [6] = {ENETUNREACH, true},	  /* destination network unknown */
    [7] = {EHOSTDOWN, true},	  /* destination host unknown */
    [8] = {ENONET, true},	  /* source host isolated */
    [9] = {ENETUNREACH, true},	  /* network administratively prohibited */
    [10] = {EHOSTUNREACH, true},  /* host administratively prohibited */
    [11] = {ENETUNREACH, false},  /* network unreachable for TOS */
    [12] = {EHOSTUNREACH, false}, /* host unreachable for TOS */
    [13] = {EHOSTUNREACH, true},  /* communication administratively prohibited */
    [14] = {EHOSTUNREACH, true},  /* host precedence violation */
    [15] = {EHOSTUNREACH, true},  /* precedence cutoff in effect */
};

/* Send what is in flight again, in segments of the new snd_mss. */
static void resend_smaller(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	if (c->snd_una == c->snd_max)
		return;
	c->rtt_start = 0; /* Karn: what is timed is sent again */
	if (c->sb_on)
		tcp_rec_mss_lowered(c); /* the records too large are lost; may fall back */
	if (!c->sb_on)
		c->snd_nxt = c->snd_una;
	tcp_output(c, now, out);
}

static enum tcp_icmp_verdict frag_needed(struct tcp_conn *c, uint32_t mtu, uint32_t seq,
					 uint64_t now, struct tcp_out *out)
{
	bool floored = mtu < TCP_PMTU_MIN;

	if (mtu < TCP_PMTU_ABSURD)
		return TCP_ICMP_MTU_ABSURD;
	mtu = tcp_pmtu_floored(mtu);
	/*
	 * RFC 1191 3: a report that does not lower the path MTU we know
	 * changes nothing. Nor does one about our SYN or SYN-ACK (far below
	 * 576 bytes, as Linux): resending "what is in flight" would take
	 * SND.NXT back onto the SYN's sequence number, below SND.UNA once the
	 * ACK comes.
	 */
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED || mtu >= cur_mtu(c)) {
		/* About our probe: what the path takes is what the search tries next. */
		if (c->probe_mtu && mtu < c->probe_mtu && seq_geq(seq, c->probe_seq) &&
		    seq_lt(seq, c->probe_end) && mtu < c->search_high)
			c->search_high = (uint16_t)mtu;
		return TCP_ICMP_MTU_NOT_LOWER;
	}
	if (!tcp_path_mtu(c, (uint16_t)mtu, now, out))
		return TCP_ICMP_MTU_RECORDED; /* for the peer's other connections */
	return floored ? TCP_ICMP_MSS_FLOORED : TCP_ICMP_MSS_LOWERED;
}

bool tcp_path_mtu(struct tcp_conn *c, uint16_t mtu, uint64_t now, struct tcp_out *out)
{
	uint16_t was = c->snd_mss;
	uint32_t before = cur_mtu(c);

	tcp_ack_work(c); /* what is in flight, and may go again smaller, is the scoreboard's */

	c->path_mtu = mtu;
	/*
	 * A probe out: lowered under it, its data goes again smaller, so its
	 * ACK would prove nothing (lost); raised to its size or more, what it
	 * would have shown is known.
	 */
	if (c->probe_mtu && mtu && mtu < before)
		c->stats.pmtu_probes_lost++;
	if (!mtu || mtu < before || c->probe_mtu <= mtu)
		c->probe_mtu = 0;
	if (!mtu || mtu < before || !c->probe_at || c->search_high <= mtu)
		search_later(c, now); /* a lowering says the path takes less: not again soon */
	if (c->state == TCP_CLOSED || c->state == TCP_LISTEN || c->state == TCP_SYN_SENT)
		return false; /* the SYN-ACK's options will meet it (take_syn_options) */
	c->snd_mss = tcp_path_mss(c);
	if (c->snd_mss == was)
		return false;
	c->rtos_at_size = 0; /* timeouts so far were at the old size */
	if (c->state == TCP_SYN_RECEIVED) {
		tcp_conn_cc_init(c); /* nothing sent yet but the SYN-ACK: IW in the new size */
		return true;
	}
	tcp_cc_set_smss(&c->cc, c->snd_mss); /* cwnd stays in bytes: the units changed */
	if (c->cc.cwnd < c->snd_mss)
		c->cc.cwnd = c->snd_mss; /* raised: never less than one segment (RFC 5681 3.1) */
	if (c->snd_mss < was)
		resend_smaller(c, now, out);
	return true;
}

/* Path MTUs a black hole is tried at, highest first (tcp_icmp.h). */
static const uint16_t plateaus[] = {1500, 1400, 1280, 1024, TCP_PMTU_MIN};

/* The highest plateau below @mtu, or 0 at the floor. */
static uint16_t plateau_below(uint32_t mtu)
{
	for (unsigned i = 0; i < sizeof(plateaus) / sizeof(plateaus[0]); i++)
		if (plateaus[i] < mtu)
			return plateaus[i];
	return 0;
}

/* Payload of what an RTO resends first: SND.UNA's record, or what go-back-N sends (no FIN). */
static uint32_t head_len(const struct tcp_conn *c)
{
	uint32_t len = c->snd_max - c->snd_una;

	if (c->sb_on && c->sb.count)
		len = tcp_sb_at(&c->sb, 0)->end - c->snd_una;
	else if (len > c->snd_wnd)
		len = c->snd_wnd;
	if (c->fin_sent && seq_gt(c->snd_una + len, c->fin_seq))
		len = c->fin_seq - c->snd_una;
	return len;
}

bool tcp_blackhole(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	uint32_t sent = c->snd_mss + tcp_hdr_bytes(c); /* the datagram SND.UNA goes in */
	unsigned backoff = c->rtt.backoff;
	uint32_t cwnd = c->cc.cwnd;
	uint16_t next;

	if (!c->cfg.blackhole_rtos || c->rtos_at_size < c->cfg.blackhole_rtos ||
	    now - c->unacked_since < c->cfg.blackhole_min_ns)
		return false;
	/*
	 * Only a full-sized segment at SND.UNA (the largest datagram we send)
	 * says anything about size; a net or host unreachable since data was
	 * last acknowledged says the path is broken, not narrow
	 * (c->soft_error, which that ACK clears).
	 */
	if (head_len(c) < c->snd_mss || c->soft_error)
		return false;
	next = plateau_below(sent);
	if (!next)
		return false; /* already at the floor */
	/*
	 * The timeouts were the size's, not the path's load: the smaller
	 * resend is timed from the base RTO, or the second step would wait
	 * out a backoff of 2^blackhole_rtos (seconds, not ms).
	 */
	c->rtt.backoff = 0;
	/* RFC 5681 3.1's loss window after a timeout: one segment, of the new size. */
	c->cc.cwnd = next - tcp_hdr_bytes(c);
	tcp_rec_frto_abandon(c); /* what goes now is not what F-RTO would send */
	if (!tcp_path_mtu(c, next, now, out)) {
		c->rtt.backoff = backoff;
		c->cc.cwnd = cwnd;
		return false;
	}
	c->pmtu_guessed = true;
	c->stats.pmtu_blackholes++;
	if (c->cfg.probe_interval_ns) /* tcp_path_mtu() set the search from the top */
		c->probe_at = now;    /* it may have been an outage: look up again at once */
	return true;
}

/* Payload of a probe of @mtu: what the datagram leaves, within what the handshake allows. */
static uint32_t probe_payload(const struct tcp_conn *c, uint32_t mtu)
{
	uint32_t hdr = tcp_hdr_bytes(c), len = mtu > hdr ? mtu - hdr : 0;

	return len < c->mss_clamp ? len : c->mss_clamp;
}

uint32_t tcp_pmtu_probe_len(struct tcp_conn *c, uint64_t now, uint32_t usable, uint32_t unsent)
{
	uint32_t len;

	if (!c->probe_at || now < c->probe_at || c->probe_mtu)
		return 0;
	if (!c->sb_on || (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT) ||
	    c->snd_nxt != c->snd_max || c->sb.lost || tcp_cc_recovering(&c->cc, c->snd_una) ||
	    c->rtt.backoff || c->frto.step || c->rack.tlp_out || c->undo.on)
		return 0; /* a quiet moment (no recovery, RTO's included), when a loss can only be
			     the probe's */
	len = probe_payload(c, c->search_high);
	if (len <= c->snd_mss) {
		search_later(c, now); /* nothing larger to try */
		return 0;
	}
	return unsent >= len && usable >= len ? len : 0;
}

void tcp_pmtu_probe_sent(struct tcp_conn *c, uint32_t seq, uint32_t len)
{
	c->probe_mtu = (uint16_t)(len + tcp_hdr_bytes(c));
	c->probe_seq = seq;
	c->probe_end = seq + len;
	c->stats.pmtu_probes++;
}

void tcp_pmtu_probe_resent(struct tcp_conn *c, uint32_t seq, uint32_t end, uint64_t now)
{
	if (c->probe_mtu && seq_lt(seq, c->probe_end) && seq_gt(end, c->probe_seq))
		tcp_pmtu_probe_failed(c, now);
}

void tcp_pmtu_probe_acked(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	uint32_t mtu = c->probe_mtu;

	c->probe_mtu = 0;
	c->stats.pmtu_probes_ok++;
	c->pmtu_probed = true;
	tcp_path_mtu(c, mtu >= iface_mtu(c) ? 0 : (uint16_t)mtu, now, out);
	search_later(c, now); /* the largest MTU not found too large: found */
}

void tcp_pmtu_probe_failed(struct tcp_conn *c, uint64_t now)
{
	uint32_t mtu = c->probe_mtu, next = plateau_below(mtu);

	c->probe_mtu = 0;
	c->stats.pmtu_probes_lost++;
	if (c->search_high < mtu)
		next = c->search_high; /* what an ICMP error about the probe reported
					  (frag_needed()) */
	if (next <= cur_mtu(c)) {
		search_later(c, now);
		return;
	}
	c->search_high = (uint16_t)next;
	c->probe_at = now;
}

/*
 * RFC 6069 4 (TCP-LCD): a net or host unreachable quoting SND.UNA while the
 * retransmission timer is backed off says that retransmission was lost to
 * a broken path, not to congestion. One doubling is undone, measured from
 * when the timer was armed; if the shorter timeout has passed already, it
 * expires now (as Linux's tcp_ld_RTO_revert(); see tcp_icmp.h for how it
 * differs). Each later timeout doubles again, so errors can bring the
 * timer down to its base RTO, never below.
 */
static bool lcd_revert(struct tcp_conn *c, const struct icmp_quote *q, uint64_t now,
		       struct tcp_out *out)
{
	uint64_t timeout, armed;

	if (q->type != ICMP_TYPE_DEST_UNREACH ||
	    (q->code != ICMP_CODE_NET_UNREACH && q->code != ICMP_CODE_HOST_UNREACH))
		return false;
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED || q->seq != c->snd_una ||
	    !c->retries || !c->rtt.backoff || !c->rto_at)
		return false;
	timeout = tcp_rtt_timeout(&c->rtt);
	armed = c->rto_at > timeout ? c->rto_at - timeout : 0;
	c->rtt.backoff--;
	c->rto_at = armed + tcp_rtt_timeout(&c->rtt);
	if (c->rto_at <= now)
		tcp_rto_expired(c, now, out);
	return true;
}

enum tcp_icmp_verdict tcp_icmp_error(struct tcp_conn *c, const struct icmp_quote *q, uint64_t now,
				     struct tcp_out *out)
{
	int err = EHOSTUNREACH; /* time exceeded (Linux's choice) */
	bool hard = false;

	tcp_ack_work(c); /* the scoreboard and timers this may resend from */
	/* RFC 5927 4.1: an error about data we never sent, or that was acknowledged, is forged. */
	if (!seq_geq(q->seq, c->snd_una) || !seq_lt(q->seq, c->snd_max))
		return TCP_ICMP_OUT_OF_WINDOW;
	if (q->type == ICMP_TYPE_DEST_UNREACH && q->code == ICMP_CODE_FRAG_NEEDED)
		return frag_needed(c, q->mtu, q->seq, now, out);
	if (q->type == ICMP_TYPE_DEST_UNREACH && q->code < 16) {
		err = unreach[q->code].err;
		hard = unreach[q->code].hard;
	} else if (q->type == ICMP_TYPE_PARAM_PROBLEM) {
		err = EPROTO;
		hard = true;
	}
	if (hard && c->state == TCP_SYN_SENT) {
		tcp_drop(c, -err, TCP_EV_RESET, now);
		return TCP_ICMP_ABORTED;
	}
	c->soft_error = -err;
	return lcd_revert(c, q, now, out) ? TCP_ICMP_RTO_REVERTED : TCP_ICMP_SOFT_ERROR;
}
