/*
 * tcp_recovery.c - SACK loss recovery of one connection: feeds the
 * scoreboard (tcp_scoreboard.h) with what is sent and acknowledged, runs
 * RACK-TLP (tcp_rack.h) on each ACK and on its two timers, enters RFC 6675
 * recovery through tcp_cc, and retransmits what is lost within the pipe.
 * Used when SACK is negotiated and cfg.rack is on (the default); otherwise
 * the connection keeps NewReno's duplicate-ACK recovery in tcp_input.c.
 */
#include "tcp/tcp_conn.h"
#include "tcp/tcp_icmp.h"
#include "tcp/tcp_internal.h"
#include "tcp/tcp_seq.h"

/* The scoreboard could not grow: carry on with NewReno, which needs none. */
static void fall_back(struct tcp_conn *c)
{
	c->sb_on = false;
	tcp_sb_fini(&c->sb);
	c->cc.sack_recovery = false; /* a recovery under way goes on as NewReno's */
	c->rack_at = c->tlp_at = 0;
	c->stats.sb_nomem++;
	c->probe_mtu = 0; /* a probe needs the scoreboard to be judged */
	c->probe_seq = c->probe_end;
	c->probe_at = 0;
}

void tcp_rec_start(struct tcp_conn *c)
{
	c->sb_on = c->cfg.rack && c->sack_ok;
}

void tcp_rec_sent(struct tcp_conn *c, uint8_t flags, uint32_t seq, uint32_t len, uint64_t now)
{
	uint32_t end = seq + len + !!(flags & RTE_TCP_FIN_FLAG);

	if (!c->sb_on || (flags & (RTE_TCP_SYN_FLAG | RTE_TCP_RST_FLAG)) || end == seq)
		return;
	if (c->cc.sack_recovery)
		tcp_cc_prr_sent(&c->cc, len);
	if (tcp_sb_sent(&c->sb, seq, end, c->snd_mss, c->snd_una, now))
		fall_back(c);
}

/* What an ACK delivered (cumulatively or by SACK) goes to RACK and F-RTO. */
static void take_delivery(struct tcp_conn *c, const struct tcp_delivery *d, uint64_t now)
{
	tcp_rack_update(&c->rack, d, now);
	if (d->orig)
		tcp_frto_delivered(&c->frto, d->orig_start);
}

uint64_t tcp_rec_acked(struct tcp_conn *c, uint32_t ack, uint64_t now)
{
	struct tcp_delivery d = {0};

	tcp_sb_acked(&c->sb, ack, now, tcp_rack_min_rtt(&c->rack), &d);
	take_delivery(c, &d, now);
	return d.xmit_ns && now >= d.xmit_ns ? now - d.xmit_ns : 0;
}

/*
 * Whether what is marked lost includes the path MTU probe's data: if so,
 * the probe failed (tcp_icmp.h). @return true if nothing else is lost,
 * so that no congestion response is owed (RFC 4821 7.6.2; Linux's
 * tcp_simple_retransmit() after tcp_mtup_probe_failed()). The range is
 * kept past the failure until acknowledged: another ACK of the same
 * burst, before the resend goes, finds the same loss.
 */
static bool probe_lost_alone(struct tcp_conn *c, uint64_t now)
{
	uint32_t bytes = 0;

	for (uint32_t i = tcp_sb_first_lost(&c->sb); i < c->sb.count; i++) {
		const struct tcp_txseg *r = tcp_sb_at(&c->sb, i);

		if (seq_geq(r->start, c->probe_end))
			break;
		/*
		 * The probe's own transmission: its pieces resent and lost again are congestion's.
		 */
		if ((r->flags & (TCP_TXSEG_LOST | TCP_TXSEG_RETRANS)) == TCP_TXSEG_LOST &&
		    seq_geq(r->start, c->probe_seq))
			bytes += r->end - r->start;
	}
	if (!bytes)
		return false;
	if (c->probe_mtu)
		tcp_pmtu_probe_failed(c, now);
	return bytes == c->sb.lost;
}

/* RFC 8985 6.2 step 5 and 6: mark losses, arm the reordering timer, start recovery. */
static void rack_check(struct tcp_conn *c, uint64_t now)
{
	uint64_t reo, timeout;
	uint32_t lost;

	if (!c->sb.count) {
		c->rack_at = 0;
		return;
	}
	reo = tcp_rack_reo_wnd(&c->rack, tcp_cc_recovering(&c->cc, c->snd_una), c->sb.sacked_segs,
			       c->rtt.srtt_ns);
	timeout = tcp_rack_detect_loss(&c->rack, &c->sb, reo, now, &lost);
	c->stats.rack_lost += lost;
	c->rack_at = timeout ? now + timeout : 0;
	if (c->probe_seq != c->probe_end && c->sb.lost && probe_lost_alone(c, now) &&
	    !c->cc.in_recovery) {
		c->sb_kick = true; /* resent at once, in segments that fit */
		/* A tail loss probe that resent a piece of it: no loss of anything else to answer
		 * for. */
		if (c->rack.tlp_out && seq_leq(c->rack.tlp_end_seq, c->probe_end))
			c->rack.tlp_out = false;
		return;
	}
	if (c->sb.lost &&
	    tcp_cc_enter_recovery(&c->cc, c->snd_una, c->snd_max, c->snd_max - c->snd_una)) {
		tcp_rec_undo_begin(c, now);
		c->stats.recoveries++;
		c->stats.fast_retransmits++;
		c->sb_kick = true; /* RFC 6675 5 step 4.3: the first lost segment goes at once */
		/* recovery takes over the probe's episode and its response */
		c->rack.tlp_out = false;
		c->tlp_at = 0;
		c->stall_probes = 0;
	}
}

/*
 * RFC 8985 7.2's PTO, with room for the receiver's delayed ACK: for a lone
 * segment outside recovery, the one a delayed ACK waits on, the RTO floor
 * (set to cover it); else our own delayed-ACK timeout, which also keeps
 * the probe from firing within a burst when SRTT is a few microseconds
 * (Linux adds 2 ms for the same reason). In recovery the receiver holds a
 * hole, so it ACKs every segment at once (RFC 5681 4.2).
 */
static uint64_t probe_timeout(const struct tcp_conn *c)
{
	bool lone = !c->cc.in_recovery && c->snd_max - c->snd_una <= c->snd_mss;

	return tcp_rack_pto(c->rtt.have_sample, c->rtt.srtt_ns,
			    lone ? c->cfg.rto_min_ns : c->cfg.delack_ns);
}

/*
 * Whether another probe may go before the RTO: cfg.probe_max of them (0
 * counts as 1), and in recovery only with cfg.recovery_probe.
 */
static bool probe_allowed(const struct tcp_conn *c)
{
	return c->stall_probes < (c->cfg.probe_max ? c->cfg.probe_max : 1) &&
	       (!c->cc.in_recovery || c->cfg.recovery_probe);
}

/* The probe timer at a PTO from now, if that comes before the RTO. */
static void arm_probe(struct tcp_conn *c, uint64_t now)
{
	uint64_t pto = probe_timeout(c);

	if (now + pto < c->rto_at)
		c->tlp_at = now + pto;
}

void tcp_rec_arm_tlp(struct tcp_conn *c, uint64_t now)
{
	c->tlp_at = 0;
	/*
	 * Nor in RTO recovery (RFC 8985 7.2), until an ACK advances SND.UNA:
	 * the backed-off RTO times what it resent, even when that left nothing
	 * marked lost (a lone segment).
	 */
	if (!c->sb_on || c->snd_una == c->snd_max || !c->snd_wnd || !c->rto_at || c->cc.rto_repeat)
		return;
	if (c->cc.in_recovery ? !probe_allowed(c) : c->rack.tlp_out || c->sb.lost)
		return;
	arm_probe(c, now);
}

void tcp_rec_on_ack(struct tcp_conn *c, const struct tcp_repr *seg,
		    const struct tcp_rec_mark *before, uint64_t now)
{
	struct tcp_delivery d = {0};
	bool dsack = false;
	unsigned i = 0;

	if (seg->opts.sack_count) {
		if (tcp_sb_is_dsack(&seg->opts, seg->ack)) {
			/* RFC 2883: the first block reports a duplicate; the rest are SACKs. */
			dsack = true;
			c->stats.dsacks++;
			i = 1;
		}
		for (; i < seg->opts.sack_count; i++) {
			if (tcp_sb_sack(&c->sb, seg->opts.sack[i].left, seg->opts.sack[i].right,
					c->snd_una, c->snd_max, now, tcp_rack_min_rtt(&c->rack),
					&d) == TCP_SACK_USED)
				c->stats.sack_blocks++;
			else
				c->stats.sack_invalid++;
		}
		take_delivery(c, &d, now);
	}
	tcp_rack_update_reo_mult(&c->rack, dsack, c->snd_una, c->snd_max);
	/* RFC 3708: every retransmission of the episode came back as a duplicate. */
	if (dsack && tcp_undo_by_dsack(&c->undo, seg->opts.sack[0].left, seg->opts.sack[0].right,
				       c->snd_mss))
		tcp_rec_undo(c);
	/*
	 * RFC 8985 7.4, as Linux's tcp_process_tlp_ack(): the probe's episode
	 * ends with the first ACK at or past TLP.end_seq that tells what
	 * happened. After a probe of new data there is nothing to tell. After
	 * a retransmitted one, a D-SACK or a pure duplicate ACK says both
	 * copies arrived (no loss); an ACK beyond TLP.end_seq with neither says
	 * the probe repaired a loss, and the congestion response is owed. An
	 * ACK of exactly TLP.end_seq may be the original's own late ACK, with
	 * the probe's D-SACK still to come: wait. After a second copy
	 * (cfg.probe_max) one duplicate may be a copy of a copy, the original
	 * lost: only one duplicate per copy says no loss.
	 */
	if (c->rack.tlp_out && seq_geq(seg->ack, c->rack.tlp_end_seq)) {
		bool dup = dsack || (seg->ack == before->snd_una &&
				     c->sb.sacked == before->sacked && !seg->payload_len);

		if (!c->rack.tlp_retrans || (dup && c->rack.tlp_copies <= 1)) {
			c->rack.tlp_out = false;
		} else if (dup) {
			c->rack.tlp_copies--;
		} else if (seq_gt(seg->ack, c->rack.tlp_end_seq)) {
			c->rack.tlp_out = false;
			if (!c->cc.in_recovery) {
				/* The flight the loss was in, not what this ACK leaves (often
				 * nothing). */
				tcp_cc_reduce(&c->cc, c->snd_max - before->snd_una);
				/* an undo must not erase this reduction */
				tcp_undo_close(&c->undo);
				c->stats.tlp_recoveries++;
			}
		}
	}
	/* Progress: the next stall in recovery may have its probes (a tail probe's episode has its
	 * own). */
	if (seg->ack != before->snd_una || c->sb.sacked != before->sacked)
		c->stall_probes = 0;
	rack_check(c, now);
	/*
	 * RFC 6937: on each ACK starting or during the recovery (not the one
	 * that ends it: tcp_cc_on_ack() has left it then), what it delivered
	 * sets how much may be sent. Modulo 2^32 the sum is right even when
	 * the ACK retired more SACKed bytes than the SACK blocks added.
	 */
	if (c->cc.sack_recovery)
		tcp_cc_prr_ack(&c->cc,
			       (c->snd_una - before->snd_una) + (c->sb.sacked - before->sacked),
			       tcp_sb_pipe(&c->sb, c->snd_max - c->snd_una));
	/*
	 * RFC 8985 7.2: the probe timer restarts on an ACK that acknowledges
	 * new data cumulatively; one that does not (the peer's data repeating
	 * the same SACK blocks, at less than a PTO apart) keeps its deadline,
	 * or the probe would never fire and the tail wait for the RTO. Each is
	 * still checked: one may have ended the probe's reason.
	 */
	if (seg->ack == before->snd_una && c->tlp_at) {
		uint64_t at = c->tlp_at;

		tcp_rec_arm_tlp(c, now);
		if (c->tlp_at)
			c->tlp_at = at;
		return;
	}
	tcp_rec_arm_tlp(c, now);
}

/* Send record @r again, its FIN with it if it holds ours. */
static bool resend(struct tcp_conn *c, const struct tcp_txseg *r, uint64_t now, struct tcp_out *out)
{
	bool fin = c->fin_sent && r->end == c->fin_seq + 1;
	struct tcp_tx *t = tcp_xmit(c, out, RTE_TCP_ACK_FLAG | (fin ? RTE_TCP_FIN_FLAG : 0),
				    r->start, r->end - r->start - fin, now);

	if (!t)
		return false;
	t->retransmit = true;
	c->stats.retransmits++;
	tcp_pmtu_probe_resent(c, r->start, r->end, now);
	tcp_undo_retransmitted(&c->undo, r->start, r->end, c->snd_mss);
	if (c->rtt_start && seq_lt(r->start, c->rtt_seq))
		c->rtt_start = 0; /* Karn: the timed segment was sent again */
	c->last_send_ns = now;
	return true;
}

bool tcp_rec_send_lost(struct tcp_conn *c, uint32_t cwnd, uint64_t now, struct tcp_out *out)
{
	bool sent = false;

	while (c->sb.lost) {
		uint32_t i = tcp_sb_first_lost(&c->sb);
		const struct tcp_txseg *r;
		uint32_t len, pipe;

		if (i == c->sb.count)
			break;
		r = tcp_sb_at(&c->sb, i);
		len = r->end - r->start;
		/*
		 * RFC 6675 5 (C): only while cwnd - pipe leaves room, but one
		 * always when the pipe is empty (after an RTO) or recovery has
		 * just begun (step 4.3).
		 */
		pipe = tcp_sb_pipe(&c->sb, c->snd_max - c->snd_una);
		if (pipe && (uint64_t)pipe + len > cwnd && !c->sb_kick)
			break;
		c->sb_kick = false;
		if (!resend(c, r, now, out))
			break;
		sent = true;
	}
	return sent;
}

void tcp_rec_timeout(struct tcp_conn *c, bool repeat)
{
	/*
	 * RFC 8985 6.3: after an RTO every segment not SACKed is lost; they go
	 * again, oldest first, as cwnd (1 SMSS now) grows. A second RTO with no
	 * progress forgets the SACKs too: the receiver may have reneged on them
	 * (RFC 2018 8), as lunar's own receiver does under memory pressure.
	 */
	tcp_sb_mark_all_lost(&c->sb, repeat);
	c->sb_kick = false;
	c->rack.tlp_out = false;
	c->stall_probes = 0;
	c->rack_at = c->tlp_at = 0;
}

void tcp_rec_undo_begin(struct tcp_conn *c, uint64_t now)
{
	uint64_t first = now;
	uint32_t retrans = 0, high = c->snd_una;

	/*
	 * Retransmissions still out (not SACKed) are the episode's too, from the oldest one's time.
	 */
	for (uint32_t i = 0; c->sb_on && i < c->sb.count; i++) {
		const struct tcp_txseg *r = tcp_sb_at(&c->sb, i);

		if ((r->flags & (TCP_TXSEG_RETRANS | TCP_TXSEG_SACKED)) != TCP_TXSEG_RETRANS)
			continue;
		retrans++;
		high = r->end;
		if (r->xmit_ns < first)
			first = r->xmit_ns;
	}
	tcp_undo_begin(&c->undo, c->snd_una, c->snd_max, tcp_ts_now(c, first), retrans, high);
}

bool tcp_rec_undo(struct tcp_conn *c)
{
	bool was_recovering = tcp_cc_recovering(&c->cc, c->snd_una);

	if (c->undo.rto)
		c->stats.spurious_rtos++;
	else
		c->stats.spurious_recoveries++;
	tcp_undo_close(&c->undo);
	tcp_frto_end(&c->frto);
	tcp_cc_undo(&c->cc);
	if (c->sb_on) {
		tcp_sb_unmark_lost(&c->sb);
		c->sb_kick = false;
		if (was_recovering)
			tcp_rack_recovery_done(&c->rack); /* RFC 8985 6.2 step 4 */
	}
	if (seq_lt(c->snd_nxt, c->snd_max))
		c->snd_nxt = c->snd_max;
	return c->sb_on && was_recovering;
}

void tcp_rec_mss_lowered(struct tcp_conn *c)
{
	/*
	 * Linux's tcp_simple_retransmit(): a segment larger than the path now
	 * takes was dropped on the way; one that fits may have arrived. The
	 * next ACK's RACK check may still start a recovery for what the out
	 * array could not take at once.
	 */
	if (tcp_sb_resegment(&c->sb, c->snd_mss))
		fall_back(c);
}

void tcp_rec_rack_timer(struct tcp_conn *c, uint64_t now)
{
	c->rack_at = 0;
	if (c->sb_on)
		rack_check(c, now);
}

/*
 * A probe went (a segment resent or new data): the RTO covers it, as after
 * RFC 8985 7.3's probe; with cfg.probe_max > 1, another probe first if
 * this one draws no ACK for a PTO.
 */
static void probe_sent(struct tcp_conn *c, uint64_t now)
{
	c->stall_probes++;
	c->rto_at = now + tcp_rtt_timeout(&c->rtt);
	if (probe_allowed(c))
		arm_probe(c, now);
}

/* The last segment sent (not SACKed), or the first with @first. */
static const struct tcp_txseg *unsacked(const struct tcp_conn *c, bool first)
{
	for (uint32_t n = 0; n < c->sb.count; n++) {
		const struct tcp_txseg *r = tcp_sb_at(&c->sb, first ? n : c->sb.count - 1 - n);

		if (!(r->flags & TCP_TXSEG_SACKED))
			return r;
	}
	return NULL;
}

/*
 * The recovery probe (cfg.recovery_probe): no ACK for a PTO in recovery.
 * The oldest segment not SACKed is the hole the receiver waits on, most
 * often a retransmission lost with nothing sent after it, which RACK can
 * judge only by a later delivery: it goes again. Its ACK (the hole
 * filled, or a D-SACK) lets RACK judge the rest.
 */
static void recovery_probe(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	const struct tcp_txseg *r = unsacked(c, true);

	if (!probe_allowed(c) || !r || !resend(c, r, now, out))
		return;
	c->stats.recovery_probes++;
	probe_sent(c, now);
}

void tcp_rec_tlp_timer(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	uint32_t max = c->snd_max;
	const struct tcp_txseg *r;

	c->tlp_at = 0;
	if (!c->sb_on || c->snd_una == c->snd_max)
		return;
	if (c->cc.in_recovery) {
		recovery_probe(c, now, out);
		return;
	}
	if (c->rack.tlp_out) {
		/*
		 * The probe drew no ACK: the same segment once more (cfg.probe_max),
		 * unless new data went after it, whose ACK will tell.
		 */
		r = unsacked(c, false);
		if (!probe_allowed(c) || c->snd_max != c->rack.tlp_end_seq || !r ||
		    !resend(c, r, now, out))
			return;
		c->rack.tlp_copies += c->rack.tlp_retrans;
		c->stats.tlp_probes++;
		probe_sent(c, now);
		return;
	}
	/*
	 * RFC 8985 7.3: new data if the receive window takes it, beyond cwnd
	 * (only with cfg.tlp_new_data: see there)...
	 */
	if (c->cfg.tlp_new_data)
		tcp_output_probe(c, now, out);
	if (c->snd_max != max) {
		c->rack.tlp_retrans = false;
	} else {
		/* ...else the last segment sent (not SACKed) again. */
		r = unsacked(c, false);
		if (!r || !resend(c, r, now, out))
			return;
		c->rack.tlp_retrans = true;
		c->rack.tlp_copies = 1;
	}
	c->rack.tlp_out = true;
	c->rack.tlp_end_seq = c->snd_max;
	c->stats.tlp_probes++;
	c->stall_probes = 0;
	probe_sent(c, now);
}

/* F-RTO ended in step @was: a go-back-N held at SND.MAX for its new data goes back. */
static void frto_go_back(struct tcp_conn *c, enum tcp_frto_step was)
{
	if (!c->sb_on && was >= TCP_FRTO_SEND_NEW)
		c->snd_nxt = c->snd_una;
}

void tcp_rec_frto_abandon(struct tcp_conn *c)
{
	enum tcp_frto_step was = c->frto.step;

	tcp_frto_end(&c->frto);
	frto_go_back(c, was);
}

void tcp_rec_frto_ack(struct tcp_conn *c, bool advanced, bool dup)
{
	bool can_send_new =
	    seq_gt(tcp_data_end(c), c->snd_max) && seq_lt(c->snd_max, c->snd_una + c->snd_wnd);
	enum tcp_frto_step step = c->frto.step;

	switch (tcp_frto_ack(&c->frto, advanced, dup, c->snd_una, can_send_new)) {
	case TCP_FRTO_NEW_DATA:
		/* Without a scoreboard, go-back-N's SND.NXT waits at SND.MAX meanwhile. */
		if (!c->sb_on)
			c->snd_nxt = c->snd_max;
		break;
	case TCP_FRTO_SPURIOUS:
		/*
		 * The episode the RTO began is still open (an ECN or probe
		 * reduction cannot come between: ECN waits past the RTO's
		 * recover, no probe goes while segments are marked lost).
		 */
		if (c->undo.on) {
			c->stats.frto_spurious++;
			tcp_rec_undo(c);
		}
		break;
	case TCP_FRTO_LOSS:
		frto_go_back(c, step);
		break;
	case TCP_FRTO_WAIT:
		break;
	}
}
