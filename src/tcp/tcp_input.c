/*
 * tcp_input.c - segment arrival, RFC 9293 3.10.7, with RFC 7323 PAWS,
 * RFC 5961 challenge ACKs, RFC 5681/6582 duplicate ACK handling and a fast
 * path for the datacenter's common case (LUNA §9): an in-order segment or a
 * pure ACK on an established connection skips the general checks.
 */
#include <errno.h>

#include "mem/zbuf.h"
#include "tcp/tcp_cc.h"
#include "tcp/tcp_conn.h"
#include "tcp/tcp_icmp.h"
#include "tcp/tcp_internal.h"
#include "tcp/tcp_seq.h"

#define PAWS_IDLE_NS (24ull * 24 * 3600 * 1000000000ull) /* RFC 7323 5.5: 24 days */
#define MIN_SND_MSS  64

static uint32_t seg_len(const struct tcp_repr *s)
{
	return (uint32_t)s->payload_len + !!(s->flags & RTE_TCP_SYN_FLAG) +
	       !!(s->flags & RTE_TCP_FIN_FLAG);
}

static uint32_t rcv_wnd_now(const struct tcp_conn *c)
{
	return seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
}

/* Options of a SYN or SYN-ACK: what both ends agreed on (RFC 9293 3.7.1, 7323, 2018). */
static void take_syn_options(struct tcp_conn *c, const struct tcp_repr *seg, uint64_t now)
{
	const struct tcp_options *o = &seg->opts;
	uint32_t mss = o->has_mss ? o->mss : 536; /* RFC 9293 3.7.1 default */
	bool ece = seg->flags & RTE_TCP_ECE_FLAG, cwr = seg->flags & RTE_TCP_CWR_FLAG;

	c->ws_ok = c->cfg.window_scaling && o->has_wscale;
	if (c->ws_ok) {
		c->snd_wscale = o->wscale > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : o->wscale;
	} else {
		c->snd_wscale = 0;
		c->rcv_wscale = 0; /* RFC 7323 2.2: both or neither */
	}
	c->sack_ok = c->cfg.sack && o->sack_permitted;
	/*
	 * RFC 3168 6.1.1: an ECN-setup SYN carries ECE and CWR; the SYN-ACK
	 * agreeing to it, ECE without CWR (a SYN-ACK with both is not one).
	 * After our fallback SYN (ecn_no_ect) an ECN-setup answer still
	 * agrees, to the first SYN: we echo the peer's marks but send no ECT.
	 */
	if (seg->flags & RTE_TCP_ACK_FLAG)
		c->ecn_ok = tcp_ecn_wanted(c) && ece && !cwr;
	else /* a SYN: passive (or simultaneous) open */
		c->ecn_ok = (c->cfg.ecn != TCP_ECN_OFF || c->cc.ops->needs_ecn) && ece && cwr;
	tcp_rec_start(c);
	c->ts_ok = c->cfg.timestamps && o->has_ts;
	if (c->ts_ok) {
		c->ts_recent = o->ts_val;
		c->ts_recent_ns = now;
	}
	if (mss > c->cfg.mss)
		mss = c->cfg.mss;
	/*
	 * Eff.snd.MSS leaves room for the options every segment carries (3.7.1).
	 * A peer's MSS below 12 must not wrap around: the floor below applies.
	 */
	if (c->ts_ok)
		mss = mss > 12 ? mss - 12 : 0;
	if (mss < MIN_SND_MSS)
		mss = MIN_SND_MSS;
	c->mss_clamp = (uint16_t)mss;
	c->snd_mss = tcp_path_mss(c); /* a path MTU known before the handshake (RFC 1191 5) */
	tcp_conn_cc_init(c);
}

/* The timed segment (Karn) is acknowledged: fold in its RTT. @return it, or 0. */
static uint64_t take_rtt_sample(struct tcp_conn *c, uint32_t ack, uint64_t now)
{
	uint64_t rtt = 0;

	if (c->rtt_start && seq_geq(ack, c->rtt_seq)) {
		rtt = now - c->rtt_start;
		tcp_rtt_sample(&c->rtt, rtt);
		c->rtt_start = 0;
	}
	return rtt;
}

/* Retransmit the first unacknowledged segment (fast retransmit, partial ACK). */
static void retransmit_first(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	uint32_t sent = c->snd_max - c->snd_una; /* only what was sent before is resent */
	uint32_t len = c->snd.bytes < c->snd_mss ? c->snd.bytes : c->snd_mss;

	if (len > sent)
		len = sent;
	uint8_t flags = RTE_TCP_ACK_FLAG;
	struct tcp_tx *t;

	if (c->fin_sent && c->snd_una + len == c->fin_seq && seq_gt(c->snd_max, c->fin_seq))
		flags |= RTE_TCP_FIN_FLAG;
	if (!len && !(flags & RTE_TCP_FIN_FLAG))
		return;
	t = tcp_xmit(c, out, flags, c->snd_una, len, now);
	if (!t)
		return;
	t->retransmit = true;
	c->rtt_start = 0; /* Karn */
	c->stats.retransmits++;
}

/* Window update rule, RFC 9293 3.10.7.4 fifth check, for a segment at @seq. */
static void update_window_at(struct tcp_conn *c, const struct tcp_repr *seg, uint32_t seq)
{
	if (seq_lt(c->snd_wl1, seq) || (c->snd_wl1 == seq && seq_leq(c->snd_wl2, seg->ack))) {
		c->snd_wnd = (uint32_t)seg->window << c->snd_wscale;
		c->snd_wl1 = seq;
		c->snd_wl2 = seg->ack;
		if (c->snd_wnd > c->max_snd_wnd)
			c->max_snd_wnd = c->snd_wnd;
		if (c->snd_wnd)
			c->persist_at = 0;
	}
}

static void update_window(struct tcp_conn *c, const struct tcp_repr *seg)
{
	update_window_at(c, seg, seg->seq);
}

/* The handshake completed; a CLOSE that came during it now sends its FIN. */
static void established(struct tcp_conn *c, uint64_t now)
{
	tcp_set_state(c, TCP_ESTABLISHED, now);
	tcp_keepalive_touch(c, now);
	if (c->fin_queued)
		tcp_set_state(c, TCP_FIN_WAIT_1, now);
}

/*
 * What ack_advance() may leave for tcp_ack_work() (ack_defer): an ACK of
 * everything sent, with no undo episode or path MTU probe to settle, so
 * that the work left can neither send nor change what is sent but for
 * cwnd, which only grows, and the probe timers, which then re-arm.
 */
static bool ack_work_may_wait(const struct tcp_conn *c, uint32_t ack)
{
	return c->ack_defer && ack == c->snd_max && !c->undo.on && c->probe_seq == c->probe_end &&
	       !c->cc.in_recovery;
}

/* With a scoreboard every ACK times the last segment it delivered (RACK): @a's RTT sample. */
static void ack_scoreboard(struct tcp_conn *c, struct tcp_cc_ack *a)
{
	if (c->sb_on) {
		uint64_t rtt = tcp_rec_acked(c, a->ack, a->now_ns);

		if (rtt)
			a->rtt_sample_ns = rtt;
	}
}

/* RFC 6298 5.2, 5.3: stop the timer when all is acknowledged, else restart it. */
static void ack_rearm_rto(struct tcp_conn *c, uint64_t now)
{
	c->rto_at = c->snd_una == c->snd_max ? 0 : now + tcp_rtt_timeout(&c->rtt);
}

/*
 * RFC 8985 6.2 step 4: a fast or an RTO recovery (tcp_cc_recovering()) that
 * @was going on before this ACK and is over now counts toward the end of a
 * D-SACK's wider reordering window.
 */
static void ack_recovery_ended(struct tcp_conn *c, bool was)
{
	if (c->sb_on && was && !tcp_cc_recovering(&c->cc, c->snd_una))
		tcp_rack_recovery_done(&c->rack);
}

/* The scoreboard and RACK, congestion control, the RTO and the probe timer, for ACK @a. */
static void ack_work(struct tcp_conn *c, struct tcp_cc_ack *a)
{
	ack_scoreboard(c, a);
	a->rtt_ns = c->rtt.srtt_ns;
	tcp_cc_on_ack(&c->cc, a); /* no recovery to act in: ack_work_may_wait() */
	ack_rearm_rto(c, a->now_ns);
	if (c->sb_on)
		tcp_rec_arm_tlp(c, a->now_ns);
}

void tcp_ack_work(struct tcp_conn *c)
{
	if (!c->ack_work_due)
		return;
	c->ack_work_due = false;
	if (c->state != TCP_CLOSED)
		ack_work(c, &c->ack_work);
}

/* SND.UNA < SEG.ACK =< SND.MAX: new data acknowledged. */
static void ack_advance(struct tcp_conn *c, const struct tcp_repr *seg, bool ece, bool may_wait,
			uint64_t now, struct tcp_out *out)
{
	uint32_t ack = seg->ack;
	uint32_t acked = ack - c->snd_una;
	uint32_t flight = c->snd_max - c->snd_una;
	struct tcp_cc_ack a = {.ack = ack,
			       .acked = acked,
			       .flight = flight,
			       .snd_nxt = c->snd_max,
			       .ece = ece,
			       .now_ns = now,
			       .app_limited = !tcp_conn_cwnd_limited(c)};
	bool was_recovering = tcp_cc_recovering(&c->cc, c->snd_una);
	enum tcp_cc_action act;

	if (tcp_sndbuf_ack(c, acked))
		c->events |= TCP_EV_WRITABLE;
	c->snd_una = ack;
	if (seq_lt(c->snd_nxt, ack))
		c->snd_nxt = ack; /* after a timeout rolled snd_nxt back */
	a.rtt_sample_ns = take_rtt_sample(c, ack, now);
	c->retries = 0;
	c->rtos_at_size = 0;
	c->soft_error = 0; /* something got through: an earlier ICMP error is stale */
	c->unacked_since = now;
	if (may_wait && ack_work_may_wait(c, ack)) {
		c->ack_work = a;
		c->ack_work_due = true;
		c->stats.acks_worked_later++;
		ack_recovery_ended(c, was_recovering);
		return;
	}
	ack_scoreboard(c, &a);
	/* RFC 3522: the first ACK since an RTO echoes a TSval from before it. */
	if (tcp_undo_by_timestamp(&c->undo, c->ts_ok && seg->opts.has_ts, seg->opts.ts_ecr) &&
	    tcp_rec_undo(c))
		was_recovering = false; /* the undo counted its end */
	a.rtt_ns = c->rtt.srtt_ns;
	act = tcp_cc_on_ack(&c->cc, &a);
	ack_recovery_ended(c, was_recovering);
	if (act == TCP_CC_RETRANSMIT_FIRST)
		retransmit_first(c, now, out);
	ack_rearm_rto(c, now);
	if (c->probe_seq != c->probe_end && seq_geq(ack, c->probe_end)) {
		/* a path MTU probe none of which was resent got through whole */
		if (c->probe_mtu)
			tcp_pmtu_probe_acked(c, now, out);
		c->probe_seq = c->probe_end; /* a failed one's range is done with too */
	}
}

/*
 * A FIN kept beyond a gap (fin_ooo) is forgotten once data is held past
 * it: data past a FIN cannot be, so that FIN was not the peer's. (RCV.NXT
 * going past it forgets it too; a later FIN elsewhere moves it.)
 */
static void fin_ooo_check(struct tcp_conn *c)
{
	const struct tcp_reass *r = &c->reass;

	/* Sorted: the last run ends highest. */
	if (c->fin_ooo && r->n &&
	    seq_gt(r->segs[r->n - 1].seq + r->segs[r->n - 1].len, c->fin_ooo_seq))
		c->fin_ooo = false;
}

/* The peer's FIN at @seq came beyond a gap: remembered (not taken) until RCV.NXT reaches it. */
static void fin_beyond_gap(struct tcp_conn *c, uint32_t seq)
{
	c->fin_ooo = true;
	c->fin_ooo_seq = seq;
	fin_ooo_check(c);
}

/* In-order data: queue it and decide when to acknowledge (RFC 1122 4.2.3.2). */
static void data_in_order(struct tcp_conn *c, const uint8_t *data, uint32_t len)
{
	if (tcp_deliver(c, data, c->rcv_nxt, len, true))
		return; /* out of memory: not accepted, the peer will retransmit */
	c->rcv_nxt += len;
	c->stats.bytes_in += len;
	if (c->reass.n) {
		struct tcp_slice s[16];
		bool full = false;
		unsigned n;

		/* The gap is filled: deliver what was waiting, ACK at once (RFC 5681 4.2). */
		while (!full && (n = tcp_reass_pop(&c->reass, c->rcv_nxt, s, 16)) > 0) {
			for (unsigned i = 0; i < n; i++) {
				if (!full &&
				    !tcp_deliver(c, s[i].data, s[i].seq, s[i].len, false)) {
					c->rcv_nxt = s[i].seq + s[i].len;
					c->stats.bytes_in += s[i].len;
					continue;
				}
				/*
				 * Out of memory for the receive queue (tcp_deliver()
				 * gave back the slice it failed on): the rest of those
				 * popped are given back too, reneging on what was
				 * SACKed (RFC 2018 8); the peer sends it again.
				 */
				if (full)
					zbuf_drop(s[i].data);
				full = true;
				c->stats.ooo_pruned_bytes += s[i].len;
			}
		}
		c->ack_now = true;
		return;
	}
	/*
	 * ACK at least every second full-sized segment, else within delack_ns;
	 * with ack_per_burst, the second segment's ACK goes at the end of the
	 * receive burst, where one ACK covers all the burst brought (as GRO
	 * gives Linux one ACK per aggregated segment), unless a reply made
	 * during the burst carried it.
	 */
	if (!c->cfg.delayed_ack)
		c->ack_now = true;
	else if (++c->ack_pending >= 2 && !c->ack_now) {
		if (c->cfg.ack_per_burst)
			c->ack_burst = true;
		else
			c->ack_now = true;
	}
}

/*
 * RFC 5961 7: the ACKs answering an in-window RST (3.2), a SYN anywhere
 * (4.2), an unacceptable ACK field (5.2) or an empty segment out of the
 * window (a forged or looping ACK) are throttled, at most
 * cfg.challenge_ack_limit a second per connection (0: no limit), so that
 * forged segments cannot turn the stack into an ACK source. Per
 * connection, not per host: a host-wide budget tells an off-path attacker,
 * by how many challenge ACKs it can still draw, whether its guesses hit a
 * connection (CVE-2016-5696, Cao et al., USENIX Security 2016).
 */
static void challenge_ack(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	if (now - c->challenge_since >= 1000000000ull) {
		c->challenge_since = now;
		c->challenge_n = 0;
	}
	if (c->cfg.challenge_ack_limit && c->challenge_n >= c->cfg.challenge_ack_limit) {
		c->stats.challenge_acks_limited++;
		return;
	}
	c->challenge_n++;
	c->stats.challenge_acks++;
	tcp_send_ack(c, now, out);
}

/*
 * RFC 2883 4: [left, right) arrived twice; the next ACK reports it as its
 * first SACK block, once. Every duplicate is acknowledged at once (ack_now
 * or a direct ACK), so at most one is ever waiting. Only bytes of the
 * stream are reported: a segment reaching back before its first byte (a
 * stale or forged one) is cut at IRS + 1.
 */
static void dsack_note(struct tcp_conn *c, uint32_t left, uint32_t right)
{
	if (!c->sack_ok || !c->cfg.dsack)
		return;
	/*
	 * A range below RCV.NXT (by either end: one 2^31 long may straddle the
	 * half of sequence space ahead) reaching back past IRS + 1. Below 4 GiB
	 * in all (stats.bytes_in), the stream's length since IRS is exact.
	 */
	if ((seq_lt(left, c->rcv_nxt) || seq_leq(right, c->rcv_nxt)) &&
	    c->stats.bytes_in < (1ull << 32) &&
	    (uint32_t)(c->rcv_nxt - left) > (uint32_t)(c->rcv_nxt - (c->irs + 1))) {
		left = c->irs + 1;
		if (!seq_lt(left, right))
			return;
	}
	c->dsack.left = left;
	c->dsack.right = right;
	c->dsack_pending = true;
}

static void update_ts_recent(struct tcp_conn *c, const struct tcp_repr *seg, uint64_t now)
{
	/*
	 * RFC 7323 4.3 (2); after 24 days idle TS.Recent is no longer valid and
	 * the new segment's TSval replaces it whatever its value (5.5, R3).
	 */
	bool stale = now - c->ts_recent_ns > PAWS_IDLE_NS;

	if (c->ts_ok && seg->opts.has_ts && (stale || seq_geq(seg->opts.ts_val, c->ts_recent)) &&
	    seq_leq(seg->seq, c->last_ack_sent)) {
		c->ts_recent = seg->opts.ts_val;
		c->ts_recent_ns = now;
	}
}

/*
 * Header prediction: the common case on an established connection. The
 * next segment in order, flags just ACK (PSH allowed), nothing in
 * recovery, no SACK blocks, an open window, timestamps in order; then
 * either an ACK of new data, with or without data of its own (an RPC's
 * reply acknowledges the request), or data acknowledging nothing new.
 * Window changes are taken by the RFC 9293 rule. Everything else (a
 * duplicate ACK, a pure window update, a zero window, an ACK beyond
 * SND.MAX) takes the full path.
 *
 * @seg's payload may come as a train (tcp_input_train()): @n pieces of
 * @len bytes in all, in sequence from @seg->seq, every other field of
 * their headers @seg's. It is taken as its segments one by one would be:
 * the first acknowledges, each piece is queued in turn and counted, and
 * the window's last update is the last piece's. @return the pieces taken
 * (all, or up to the one the receive queue had no room for, which is
 * dropped as one segment would be, or the one that made an ACK due at
 * once, which goes now as that segment's), or 0: the full path's.
 */
static unsigned fast_path(struct tcp_conn *c, const struct tcp_repr *seg,
			  const struct tcp_piece *pc, unsigned n, uint32_t len, uint64_t now,
			  struct tcp_out *out)
{
	const uint8_t mask = RTE_TCP_SYN_FLAG | RTE_TCP_FIN_FLAG | RTE_TCP_RST_FLAG |
			     RTE_TCP_URG_FLAG | RTE_TCP_ACK_FLAG;
	unsigned taken = n;
	bool acks_new;

	if ((seg->flags & mask) != RTE_TCP_ACK_FLAG || seg->seq != c->rcv_nxt ||
	    c->snd_nxt != c->snd_max || c->cc.in_recovery || c->cc.dupacks ||
	    seg->opts.sack_count || !seg->window || c->sb.sacked || c->sb.lost || c->rack.tlp_out ||
	    c->frto.step || c->fin_ooo)
		return 0;
	/* ECN signals, and a DCTCP receiver's CE state to leave, take the slow path. */
	if (c->ecn_ok && ((seg->flags & (RTE_TCP_ECE_FLAG | RTE_TCP_CWR_FLAG)) ||
			  seg->ecn == TCP_ECN_CE || c->ecn_echo))
		return 0;
	if (c->ts_ok && (!seg->opts.has_ts || seq_lt(seg->opts.ts_val, c->ts_recent)))
		return 0;
	acks_new = seq_gt(seg->ack, c->snd_una);
	if (acks_new ? seq_gt(seg->ack, c->snd_max) : (seg->ack != c->snd_una || !len))
		return 0;
	if (len && (c->reass.n || len > rcv_wnd_now(c) || c->mem_pressure != TCP_MEM_NORMAL))
		return 0;
	update_ts_recent(c, seg, now);
	if (acks_new) {
		/* with data: a reply is to go first */
		ack_advance(c, seg, false, len != 0, now, out);
		tcp_undo_advanced(&c->undo, c->snd_una, c->snd_max);
	}
	update_window(c, seg);
	/*
	 * The RTO moved: so does the probe, under the window this ACK brings
	 * (the slow path's tcp_rec_on_ack() does this after its update_window()).
	 */
	if (acks_new && c->sb_on && !c->ack_work_due)
		tcp_rec_arm_tlp(c, now);
	if (len) {
		uint32_t seq = seg->seq;

		for (unsigned i = 0; i < n; i++) {
			/* after the first piece, the window as the piece's own segment would */
			if (i)
				update_window_at(c, seg, seq);
			data_in_order(c, pc[i].data, pc[i].len);
			c->stats.fastpath_data++;
			/*
			 * Not queued: the rest are out of order now. Or an ACK due at
			 * once (no delayed ACKs): one by one, each segment's own.
			 */
			if (c->rcv_nxt != seq + pc[i].len || c->ack_now) {
				taken = i + 1;
				break;
			}
			seq += pc[i].len;
		}
	} else {
		c->stats.fastpath_ack++;
	}
	tcp_keepalive_touch(c, now);
	tcp_output(c, now, out);
	return taken;
}

/* A SYN taken in LISTEN (RFC 9293 3.10.7.2): SYN-RECEIVED, the SYN-ACK into @out. */
static void syn_taken(struct tcp_conn *c, const struct tcp_repr *seg, uint64_t now,
		      struct tcp_out *out)
{
	c->irs = seg->seq;
	c->dsack_pending = false; /* nothing of an earlier incarnation */
	c->rcv_nxt = seg->seq + 1;
	c->rcv_adv = c->rcv_nxt; /* nothing advertised yet: the window's right edge starts here */
	take_syn_options(c, seg, now);
	/* RFC 7323 2.2: the window of a SYN is not scaled. */
	c->snd_wnd = c->max_snd_wnd = seg->window;
	c->snd_wl1 = seg->seq;
	c->snd_wl2 = c->iss;
	tcp_set_state(c, TCP_SYN_RECEIVED, now);
	c->snd_nxt = c->snd_max = c->iss + 1;
	tcp_xmit(c, out, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, c->iss, 0, now);
	c->rtt_seq = c->iss + 1;
	c->rtt_start = now;
	c->rto_at = now + tcp_rtt_timeout(&c->rtt);
	tcp_keepalive_touch(c, now);
}

/* RFC 9293 3.10.7.2 */
static void listen_input(struct tcp_conn *c, const struct tcp_repr *seg, uint64_t now,
			 struct tcp_out *out)
{
	if (seg->flags & RTE_TCP_RST_FLAG)
		return;
	if (seg->flags & RTE_TCP_ACK_FLAG) {
		tcp_send_rst(out, seg->ack);
		return;
	}
	if (seg->flags & RTE_TCP_SYN_FLAG)
		syn_taken(c, seg, now, out);
}

void tcp_conn_from_cookie(struct tcp_conn *c, const struct tcp_repr *syn, uint64_t now)
{
	struct tcp_out sent = {.n = 0};

	/* The state a SYN-ACK sent now leaves; the real one went earlier, statelessly. */
	syn_taken(c, syn, now, &sent);
	c->rtt_start = 0; /* its send time is unknown: no RTT sample from the handshake */
}

/* RFC 9293 3.10.7.3 */
static void syn_sent_input(struct tcp_conn *c, const struct tcp_repr *seg, uint64_t now,
			   struct tcp_out *out)
{
	bool ack = seg->flags & RTE_TCP_ACK_FLAG;

	if (ack && (seq_leq(seg->ack, c->iss) || seq_gt(seg->ack, c->snd_max))) {
		if (!(seg->flags & RTE_TCP_RST_FLAG))
			tcp_send_rst(out, seg->ack);
		return;
	}
	if (seg->flags & RTE_TCP_RST_FLAG) {
		/* Acceptable only if it acknowledges our SYN (RFC 5961 3.2 / 9293). */
		if (ack)
			tcp_drop(c, -ECONNREFUSED, TCP_EV_RESET, now);
		return;
	}
	if (!(seg->flags & RTE_TCP_SYN_FLAG))
		return;
	c->irs = seg->seq;
	c->dsack_pending = false; /* nothing of an earlier incarnation */
	c->rcv_nxt = seg->seq + 1;
	c->rcv_adv = c->rcv_nxt; /* nothing advertised yet: the window's right edge starts here */
	take_syn_options(c, seg, now);
	c->snd_wnd = c->max_snd_wnd = seg->window; /* unscaled in a SYN */
	c->snd_wl1 = seg->seq;
	if (ack) {
		c->snd_una = seg->ack;
		c->snd_wl2 = seg->ack;
		take_rtt_sample(c, seg->ack, now);
	}
	tcp_keepalive_touch(c, now);
	if (seq_gt(c->snd_una, c->iss)) {
		c->rto_at = 0;
		c->retries = 0;
		established(c, now);
		c->ack_now = true;
		tcp_output(c, now, out);
		return;
	}
	/* Simultaneous open: SYN-RECEIVED, answer <SEQ=ISS><ACK=RCV.NXT><CTL=SYN,ACK>. */
	tcp_set_state(c, TCP_SYN_RECEIVED, now);
	tcp_xmit(c, out, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, c->iss, 0, now);
}

/*
 * An ACK echoed congestion (ECE, RFC 3168 6.1.2): reduce the window once
 * per window of data, then say so with CWR on the next new data. The
 * response "halves the congestion window" (as Linux's tcp_enter_cwr()):
 * from cwnd, not from what the ACK leaves in flight, which for a reply
 * acknowledged whole is nothing and would cut an RPC connection to two
 * segments at every echo.
 */
static void ecn_echoed(struct tcp_conn *c)
{
	c->stats.ecn_ece++;
	if (tcp_cc_on_ece(&c->cc, c->snd_una, c->snd_max, c->cc.cwnd)) {
		tcp_undo_close(&c->undo); /* an undo must not erase this reduction */
		c->stats.ecn_cuts++;	  /* the cut owes CWR (cc.cwr_owed) */
	}
}

/* A data segment on an ECN connection: what our ACKs must echo (before the data is taken). */
static void ecn_data_in(struct tcp_conn *c, const struct tcp_repr *seg, uint64_t now,
			struct tcp_out *out)
{
	bool ce = seg->ecn == TCP_ECN_CE;

	if (ce)
		c->stats.ecn_ce++;
	if (c->cc.ops->ece_exact) {
		/*
		 * RFC 8257 3.2: ECE tells exactly which data was marked. When the
		 * CE state changes, the data received before it is acknowledged at
		 * once with the old state, and this segment's ACK goes at once too.
		 */
		if (ce == c->ecn_echo)
			return;
		if (c->ack_pending || c->delack_at)
			tcp_send_ack(c, now, out);
		c->ecn_echo = ce;
		c->ack_now = true;
		return;
	}
	/* RFC 3168 6.1.3: ECE on every ACK from a CE until a CWR (a CE with the CWR wins). */
	if (seg->flags & RTE_TCP_CWR_FLAG)
		c->ecn_echo = false;
	if (ce) {
		c->ecn_echo = true;
		c->ack_now = true; /* the sender's window may be small: tell it now */
	}
}

/* RFC 9293 3.10.7.4: SYN-RECEIVED and the synchronized states. */
static void sync_input(struct tcp_conn *c, const struct tcp_repr *seg, uint64_t now,
		       struct tcp_out *out)
{
	const uint8_t *data = seg->payload;
	uint32_t len = (uint32_t)seg->payload_len;
	uint32_t rwnd = rcv_wnd_now(c);
	uint32_t dseq = seg->seq + !!(seg->flags & RTE_TCP_SYN_FLAG);
	uint32_t slen = seg_len(seg);
	bool rst = seg->flags & RTE_TCP_RST_FLAG;
	bool fin = seg->flags & RTE_TCP_FIN_FLAG;
	bool ece = c->ecn_ok && (seg->flags & RTE_TCP_ECE_FLAG);
	bool acceptable, data_refused = false, ack_owed = false;

	c->stats.slowpath++;
	/* A retransmitted SYN while we wait for the handshake's ACK: answer it again. */
	if (c->state == TCP_SYN_RECEIVED && (seg->flags & RTE_TCP_SYN_FLAG) &&
	    !(seg->flags & RTE_TCP_ACK_FLAG) && seg->seq == c->irs) {
		/* RFC 3168 6.1.1: after a non-ECN-setup SYN (the peer's fallback), no ECT. */
		if (c->ecn_ok && (~seg->flags & (RTE_TCP_ECE_FLAG | RTE_TCP_CWR_FLAG)))
			c->ecn_no_ect = true;
		tcp_xmit(c, out, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, c->iss, 0, now);
		return;
	}
	/*
	 * Simultaneous open (RFC 9293 3.5 figure 8, line 6): our SYN crossed the
	 * peer's; its SYN,ACK acknowledges ours and completes the handshake.
	 */
	if (c->state == TCP_SYN_RECEIVED && (seg->flags & RTE_TCP_SYN_FLAG) &&
	    (seg->flags & RTE_TCP_ACK_FLAG) && !rst && seg->seq == c->irs &&
	    seg->ack == c->iss + 1) {
		c->snd_una = seg->ack;
		c->rto_at = 0;
		c->retries = 0;
		c->snd_wnd = c->max_snd_wnd = seg->window; /* unscaled in a SYN */
		c->snd_wl1 = seg->seq;
		c->snd_wl2 = seg->ack;
		established(c, now);
		c->ack_now = true;
		tcp_output(c, now, out);
		return;
	}
	/*
	 * PAWS, RFC 7323 5.3 R1 (RSTs are exempt, 5.2). Its ACK is checked
	 * before the window, so anyone with the 4-tuple could draw one per
	 * segment: one with no data is answered within the challenge budget
	 * (as Linux rate-limits these), data always (no ACK loop carries it).
	 */
	if (c->ts_ok && seg->opts.has_ts && !rst && seq_lt(seg->opts.ts_val, c->ts_recent) &&
	    now - c->ts_recent_ns <= PAWS_IDLE_NS) {
		c->stats.paws_rejects++;
		if (slen == 0)
			challenge_ack(c, now, out);
		else
			tcp_send_ack(c, now, out);
		return;
	}
	/* First: is the segment acceptable? (the four cases of 3.10.7.4) */
	if (slen == 0)
		acceptable = rwnd == 0 ? seg->seq == c->rcv_nxt
				       : seq_in(seg->seq, c->rcv_nxt, c->rcv_nxt + rwnd);
	else
		acceptable =
		    rwnd != 0 && (seq_in(seg->seq, c->rcv_nxt, c->rcv_nxt + rwnd) ||
				  seq_in(seg->seq + slen - 1, c->rcv_nxt, c->rcv_nxt + rwnd));
	if (!acceptable) {
		/* With a zero window, ACKs and RSTs at RCV.NXT are still processed. */
		if (rwnd == 0 && seg->seq == c->rcv_nxt) {
			data_refused = len > 0 || fin;
		} else {
			c->stats.out_of_window++;
			if (rst)
				return;
			/* The peer's FIN again (RFC 9293 3.10.7.4): not any FIN, or a
			 * forged one a second would hold the 4-tuple forever. */
			if (c->state == TCP_TIME_WAIT && fin && seg->seq + slen == c->rcv_nxt)
				c->timewait_at = now + 2 * c->cfg.msl_ns;
			/*
			 * A SYN anywhere draws a challenge ACK (RFC 5961 4.2), and
			 * so does a segment with no data (a forged or looping
			 * ACK): both under the 7 limit. Data gets its ACK
			 * always: the sender of a needless retransmission needs it.
			 */
			if ((seg->flags & RTE_TCP_SYN_FLAG) || slen == 0) {
				challenge_ack(c, now, out);
				return;
			}
			if (len && seq_leq(dseq + len, c->rcv_nxt))
				dsack_note(c, dseq, dseq + len); /* all of it came before */
			tcp_send_ack(c, now, out);
			return;
		}
	}
	/* Trim to the window: what lies below RCV.NXT was seen, what lies beyond is not taken. */
	if (data_refused) {
		c->stats.beyond_window++;
		len = 0;
		fin = false;
		ack_owed = true;
	}
	if (seq_lt(dseq, c->rcv_nxt)) {
		uint32_t cut = c->rcv_nxt - dseq;

		if (cut > len)
			cut = len;
		if (cut)
			dsack_note(c, dseq, dseq + cut);
		data += cut;
		len -= cut;
		dseq += cut;
		ack_owed = true; /* a duplicate: let the sender know at once */
	}
	if (fin && seq_lt(dseq + len, c->rcv_nxt))
		fin = false; /* an old FIN */
	if (seq_gt(dseq + len, c->rcv_nxt + rwnd)) {
		c->stats.beyond_window++;
		len = seq_gt(c->rcv_nxt + rwnd, dseq) ? c->rcv_nxt + rwnd - dseq : 0;
		fin = false;
	}
	/*
	 * TS.Recent and keepalive wait for the ACK checks below: a segment
	 * with an in-window sequence number and a bad ACK (RFC 5961 5.2)
	 * must not set TS.Recent, or a blind attacker's random TSval makes
	 * PAWS drop the peer's real segments for days (Linux bd090dfc634d).
	 */

	/* Second: RST (RFC 5961 3.2: only an exact match resets; else a challenge ACK). */
	if (rst) {
		if (seg->seq != c->rcv_nxt) {
			challenge_ack(c, now, out);
			return;
		}
		switch (c->state) {
		case TCP_SYN_RECEIVED:
			tcp_drop(c, -ECONNREFUSED, TCP_EV_RESET, now);
			break;
		case TCP_ESTABLISHED:
		case TCP_FIN_WAIT_1:
		case TCP_FIN_WAIT_2:
		case TCP_CLOSE_WAIT:
			tcp_drop(c, -ECONNRESET, TCP_EV_RESET, now);
			break;
		default:
			tcp_set_state(c, TCP_CLOSED, now);
		}
		return;
	}
	/* Fourth: a SYN in a synchronized state gets a challenge ACK (RFC 5961 4.2). */
	if (seg->flags & RTE_TCP_SYN_FLAG) {
		challenge_ack(c, now, out);
		return;
	}
	/* Fifth: the ACK field. */
	if (!(seg->flags & RTE_TCP_ACK_FLAG))
		return;
	if (c->state == TCP_SYN_RECEIVED) {
		if (!seq_gt(seg->ack, c->snd_una) || seq_gt(seg->ack, c->snd_max)) {
			tcp_send_rst(out, seg->ack);
			return;
		}
		update_ts_recent(c, seg, now);
		tcp_keepalive_touch(c, now);
		c->snd_una = seg->ack;
		take_rtt_sample(c, seg->ack, now);
		c->rto_at = 0;
		c->retries = 0;
		c->snd_wnd = (uint32_t)seg->window << c->snd_wscale;
		c->snd_wl1 = seg->seq;
		c->snd_wl2 = seg->ack;
		if (c->snd_wnd > c->max_snd_wnd)
			c->max_snd_wnd = c->snd_wnd;
		established(c, now);
	} else {
		uint32_t max_wnd = c->max_snd_wnd;
		/* What this ACK delivers, for PRR (tcp_rec_on_ack). */
		struct tcp_rec_mark before = {.snd_una = c->snd_una, .sacked = c->sb.sacked};
		bool dup = false;

		if (seq_gt(seg->ack, c->snd_max)) {
			c->stats.ack_unsent++;
			challenge_ack(c, now, out); /* RFC 5961 5.2: acknowledges data never sent */
			return;
		}
		if (seq_lt(seg->ack, c->snd_una - max_wnd)) {
			c->stats.ack_too_old++;
			challenge_ack(c, now, out); /* RFC 5961 5.2: far too old */
			return;
		}
		update_ts_recent(c, seg, now);
		tcp_keepalive_touch(c, now);
		if (seq_gt(seg->ack, c->snd_una)) {
			ack_advance(c, seg, ece, false, now, out);
		} else if (seg->ack == c->snd_una && seg->payload_len == 0 &&
			   !(seg->flags & RTE_TCP_FIN_FLAG) && /* the flag: fin may be cleared */
			   ((uint32_t)seg->window << c->snd_wscale) == c->snd_wnd && c->snd_wnd &&
			   c->snd_max != c->snd_una) {
			/*
			 * RFC 5681 2: a duplicate ACK (not the answer to a zero-window
			 * probe: the window is open).
			 */
			c->stats.dupacks++;
			dup = true;
			if (c->sb_on) {
				/*
				 * SACK recovery: the scoreboard and RACK decide (tcp_rec_on_ack).
				 */
			} else if (c->frto.step) {
				/*
				 * F-RTO judges it (below): no limited transmit, which
				 * would send its held new data before the verdict.
				 */
			} else if (tcp_cc_on_dupack(&c->cc, seg->ack, c->snd_max,
						    c->snd_max - c->snd_una) ==
				   TCP_CC_RETRANSMIT_FIRST) {
				tcp_rec_undo_begin(c, now);
				c->stats.fast_retransmits++;
				retransmit_first(c, now, out);
			} else if (c->cc.dupacks <= 2 && !c->cc.in_recovery) {
				tcp_limited_transmit(c, now, out);
			}
		}
		update_window(c, seg);
		if (c->snd_wnd == 0)
			c->unacked_since = now; /* a zero window answered: the peer is alive */
		if (c->sb_on)
			tcp_rec_on_ack(c, seg, &before, now);
		/* After its D-SACK, whether this ACK ages the undo episode. */
		if (seq_gt(c->snd_una, before.snd_una))
			tcp_undo_advanced(&c->undo, c->snd_una, c->snd_max);
		/*
		 * F-RTO's loss signal (RFC 5682 3.1 step 3a): a duplicate ACK, or
		 * new SACK information in any ACK (one carrying data or a new
		 * window too), as Linux's FLAG_DATA_SACKED.
		 */
		if (c->frto.step)
			tcp_rec_frto_ack(c, seq_gt(c->snd_una, before.snd_una),
					 dup || c->sb.sacked != before.sacked);
		if (ece)
			ecn_echoed(c);
	}
	/*
	 * Owed by the trim above, but only now that RST, SYN and the ACK field
	 * passed: a challenge ACK the limit suppressed must not go out anyway
	 * with the next output.
	 */
	if (ack_owed)
		c->ack_now = true;
	switch (c->state) {
	case TCP_FIN_WAIT_1:
		if (c->fin_sent && seq_gt(c->snd_una, c->fin_seq))
			tcp_set_state(c, TCP_FIN_WAIT_2, now);
		break;
	case TCP_CLOSING:
		if (c->fin_sent && seq_gt(c->snd_una, c->fin_seq))
			tcp_set_state(c, TCP_TIME_WAIT, now);
		else
			tcp_output(c, now, out); /* data and FIN may still wait for this window */
		return;
	case TCP_LAST_ACK:
		if (c->fin_sent && seq_gt(c->snd_una, c->fin_seq)) {
			tcp_set_state(c, TCP_CLOSED, now);
			return;
		}
		break;
	default:
		break;
	}

	/* Seventh: the text, in ESTABLISHED and FIN-WAIT-1/2 only. */
	if (len && (c->state == TCP_ESTABLISHED || c->state == TCP_FIN_WAIT_1 ||
		    c->state == TCP_FIN_WAIT_2)) {
		if (c->ecn_ok)
			ecn_data_in(c, seg, now, out);
		if (c->mem_pressure == TCP_MEM_CRITICAL) {
			/*
			 * No memory to keep it: as if lost; a duplicate ACK tells the peer at once.
			 */
			c->stats.rcv_mem_dropped++;
			c->ack_now = true;
			fin = false;
		} else if (dseq == c->rcv_nxt) {
			data_in_order(c, data, len);
		} else {
			struct tcp_sack_block dup;
			bool kept = false;

			/* Out of order: keep it (bounded) and send a duplicate ACK now (RFC
			 * 5681 4.2). */
			c->stats.ooo_segs++;
			if (c->mem_pressure != TCP_MEM_NORMAL) {
				c->stats.ooo_refused++;
			} else if (tcp_reass_insert(&c->reass, c->rcv_nxt, dseq, data, len, &dup) ==
				   TCP_REASS_FULL) {
				c->stats.ooo_full++;
			} else {
				kept = true;
				/* Wholly or partly held already: the duplicate, then its run (RFC
				 * 2883 4, 4.2). */
				if (dup.left != dup.right)
					dsack_note(c, dup.left, dup.right);
			}
			c->ack_now = true;
			if (fin && kept)
				fin_beyond_gap(c, dseq + len);
			else if (kept)
				fin_ooo_check(c);
			fin = false; /* taken once the gap is filled, or when it comes again */
		}
	} else if (fin && !len && seq_gt(dseq, c->rcv_nxt) &&
		   (c->state == TCP_ESTABLISHED || c->state == TCP_FIN_WAIT_1 ||
		    c->state == TCP_FIN_WAIT_2)) {
		/* A bare FIN beyond a gap (the data before it lost): the same. */
		fin_beyond_gap(c, dseq);
		c->ack_now = true;
		fin = false;
	}
	/* The gap before a FIN that came early is filled: it counts as arriving now. */
	if (c->fin_ooo && !c->fin_rcvd && seq_geq(c->rcv_nxt, c->fin_ooo_seq)) {
		c->fin_ooo = false;
		if (c->rcv_nxt == c->fin_ooo_seq) {
			fin = true;
			dseq = c->rcv_nxt;
			len = 0;
		}
	}

	/*
	 * Eighth: FIN, once everything before it has arrived; only the first:
	 * nothing follows the peer's FIN, so RCV.NXT never moves past it.
	 */
	if (fin && !c->fin_rcvd && dseq + len == c->rcv_nxt) {
		c->rcv_nxt++;
		c->fin_rcvd = true;
		c->ack_now = true;
		c->events |= TCP_EV_EOF;
		switch (c->state) {
		case TCP_SYN_RECEIVED:
		case TCP_ESTABLISHED:
			tcp_set_state(c, TCP_CLOSE_WAIT, now);
			break;
		case TCP_FIN_WAIT_1:
			tcp_set_state(c,
				      c->fin_sent && seq_gt(c->snd_una, c->fin_seq) ? TCP_TIME_WAIT
										    : TCP_CLOSING,
				      now);
			break;
		case TCP_FIN_WAIT_2:
			tcp_set_state(c, TCP_TIME_WAIT, now);
			break;
		case TCP_TIME_WAIT:
			c->timewait_at = now + 2 * c->cfg.msl_ns;
			break;
		default:
			break;
		}
	}
	tcp_output(c, now, out);
	/* TIME-WAIT has no output of its own but the FIN must still be acknowledged. */
	if (c->state == TCP_TIME_WAIT && c->ack_now)
		tcp_send_ack(c, now, out);
}

void tcp_input(struct tcp_conn *c, const struct tcp_repr *seg, uint64_t now, struct tcp_out *out)
{
	tcp_ack_work(c);
	c->stats.segs_in++;
	switch (c->state) {
	case TCP_CLOSED: {
		struct tcp_tx rst;

		if (tcp_reset_for(seg, &rst) && out->n < TCP_OUT_MAX)
			out->seg[out->n++] = rst;
		return;
	}
	case TCP_LISTEN:
		listen_input(c, seg, now, out);
		return;
	case TCP_SYN_SENT:
		syn_sent_input(c, seg, now, out);
		return;
	case TCP_ESTABLISHED: {
		struct tcp_piece one = {.data = seg->payload, .len = (uint32_t)seg->payload_len};

		if (fast_path(c, seg, &one, 1, one.len, now, out))
			return;
		break;
	}
	default:
		break;
	}
	sync_input(c, seg, now, out);
}

unsigned tcp_input_train(struct tcp_conn *c, const struct tcp_repr *seg, const struct tcp_piece *pc,
			 unsigned n, uint64_t now, struct tcp_out *out)
{
	uint32_t len = 0;
	unsigned taken;

	tcp_ack_work(c);
	/*
	 * Only while output waits for the burst's end: one segment at a time
	 * would otherwise send between them, which one call cannot match.
	 */
	if (c->state != TCP_ESTABLISHED || !n || !c->hold_output)
		return 0;
	for (unsigned i = 0; i < n; i++)
		len += pc[i].len;
	taken = fast_path(c, seg, pc, n, len, now, out);
	c->stats.segs_in += taken;
	return taken;
}
