/*
 * tcp_conn.c - a connection's buffers, the application requests (connect,
 * listen, send, recv, close, abort), segment construction and output, and
 * the timers. Segment arrival is in tcp_input.c. See tcp_conn.h.
 */
#include "tcp/tcp_conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/compiler.h"
#include "mem/zbuf.h"
#include "tcp/tcp_icmp.h"
#include "tcp/tcp_internal.h"
#include "tcp/tcp_seq.h"

#define NS_PER_MS 1000000ull
#define NS_PER_US 1000ull

const char *tcp_state_name(enum tcp_state s)
{
	static const char *const names[] = {
	    [TCP_CLOSED] = "CLOSED",	       [TCP_LISTEN] = "LISTEN",
	    [TCP_SYN_SENT] = "SYN-SENT",       [TCP_SYN_RECEIVED] = "SYN-RECEIVED",
	    [TCP_ESTABLISHED] = "ESTABLISHED", [TCP_FIN_WAIT_1] = "FIN-WAIT-1",
	    [TCP_FIN_WAIT_2] = "FIN-WAIT-2",   [TCP_CLOSE_WAIT] = "CLOSE-WAIT",
	    [TCP_CLOSING] = "CLOSING",	       [TCP_LAST_ACK] = "LAST-ACK",
	    [TCP_TIME_WAIT] = "TIME-WAIT",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

void tcp_config_default(struct tcp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mss = 0; /* 0: the interface's MTU - 40 (tcp_stack), 1460 for a bare connection */
	cfg->rcv_buf = 1u << 20;
	cfg->snd_buf = 1u << 20;
	cfg->gso = true;
	cfg->gro = true;
	cfg->window_scaling = true;
	cfg->timestamps = true;
	cfg->sack = true;
	cfg->dsack = true;
	cfg->rack = true;
	cfg->recovery_probe = true;
	cfg->probe_max = 2;
	cfg->frto = true;
	cfg->blackhole_rtos = 3;
	cfg->blackhole_min_ns = 200 * NS_PER_MS;
	cfg->blackhole_hold_ns = 60000 * NS_PER_MS;
	cfg->probe_interval_ns = 600000 * NS_PER_MS;
	cfg->cc = TCP_CC_NEWRENO;
	cfg->hystart_min_ns = TCP_HYSTART_MIN_RTT_THRESH_NS;
	cfg->hystart_max_ns = TCP_HYSTART_MAX_RTT_THRESH_NS;
	cfg->ecn = TCP_ECN_ACCEPT; /* as Linux: answer an ECN-setup SYN, ask for none */
	cfg->ecn_fallback = true;
	cfg->syncookies = true;
	cfg->nodelay = false;
	cfg->delayed_ack = true;
	cfg->delack_ns = 500 * NS_PER_US;      /* well under the 4 ms RTO floor */
	cfg->rto_init_ns = 100 * NS_PER_MS;    /* datacenter: far below RFC 6298's 1 s */
	cfg->rto_min_ns = 4 * NS_PER_MS;       /* LUNA §9 */
	cfg->rto_max_ns = 1000 * NS_PER_MS;    /* LUNA recovers from failures in under 2 s */
	cfg->msl_ns = 500 * NS_PER_MS;	       /* TIME-WAIT 1 s in the datacenter */
	cfg->fin_wait2_ns = 10000 * NS_PER_MS; /* a peer that never sends its FIN */
	cfg->orphan_probes = 8;
	cfg->user_timeout_ns = 5000 * NS_PER_MS;
	cfg->syn_retries = 6;
	cfg->keepalive = false;
	cfg->keepalive_idle_ns = 7200000 * NS_PER_MS; /* RFC 1122 4.2.3.6: >= 2 hours */
	cfg->keepalive_intvl_ns = 75000 * NS_PER_MS;
	cfg->keepalive_probes = 9;
	cfg->challenge_ack_limit = 20;
	cfg->iw_segments = 10;	 /* RFC 6928 */
	cfg->reass_max_segs = 0; /* 0: one slot per 512 bytes of the receive buffer */
}

/* ---- timestamps: a 1 ms clock with a per-connection random offset (RFC 7323 5.4) ---- */

uint32_t tcp_ts_now(const struct tcp_conn *c, uint64_t now)
{
	return (uint32_t)(now / NS_PER_MS) + c->iss;
}

/* ---- send buffer ---- */

static void output(struct tcp_conn *c, uint64_t now, struct tcp_out *out, bool force,
		   uint32_t extra);

static int sndbuf_grow(struct tcp_sndbuf *b)
{
	uint32_t ncap = b->cap ? b->cap * 2 : 16;
	struct tcp_chunk *r = malloc(ncap * sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < b->count; i++)
		r[i] = b->ring[(b->head + i) & (b->cap - 1)];
	free(b->ring);
	b->ring = r;
	b->cap = ncap;
	b->head = 0;
	return 0;
}

/* Release @bytes acknowledged bytes from the front of the send buffer. */
static void sndbuf_ack(struct tcp_sndbuf *b, uint32_t bytes)
{
	b->bytes -= bytes;
	while (bytes) {
		struct tcp_chunk *ch = &b->ring[b->head];
		uint32_t left = ch->len - b->head_off;

		if (bytes < left) {
			b->head_off += bytes;
			return;
		}
		bytes -= left;
		zbuf_drop(ch->data);
		b->head = (b->head + 1) & (b->cap - 1);
		b->count--;
		b->released++;
		b->head_off = 0;
	}
}

static void sndbuf_clear(struct tcp_sndbuf *b)
{
	for (uint32_t i = 0; i < b->count; i++)
		zbuf_drop(b->ring[(b->head + i) & (b->cap - 1)].data);
	free(b->ring);
	memset(b, 0, sizeof(*b));
}

unsigned tcp_tx_slices(struct tcp_conn *c, uint32_t seq, uint32_t len, struct tcp_slice *out,
		       unsigned max)
{
	struct tcp_sndbuf *b = &c->snd;
	uint32_t i = 0, start = c->snd_una - b->head_off; /* chunk i's first sequence number */
	unsigned n = 0;

	/*
	 * Segments are framed in order, each after the last: start from the
	 * chunk the last call ended in when it is still held and not past @seq
	 * (a retransmission from further back walks from the front).
	 */
	if (b->cur_valid && b->cur_chunk - b->released < b->count && seq_geq(seq, b->cur_seq)) {
		i = b->cur_chunk - b->released;
		start = b->cur_seq;
	}
	for (; i < b->count && len && n < max; i++) {
		const struct tcp_chunk *ch = &b->ring[(b->head + i) & (b->cap - 1)];
		uint32_t off = seq - start, take;

		if (off >= ch->len) {
			start += ch->len;
			continue;
		}
		take = ch->len - off < len ? ch->len - off : len;
		out[n++] = (struct tcp_slice){.seq = seq, .len = take, .data = ch->data + off};
		b->cur_chunk = b->released + i;
		b->cur_seq = start;
		b->cur_valid = true;
		seq += take;
		len -= take;
		start += ch->len;
	}
	return n;
}

/* ---- receive queue ---- */

static int rcvq_push(struct tcp_conn *c, const uint8_t *data, uint32_t seq, uint32_t len)
{
	if (c->rcvq_count == c->rcvq_cap) {
		uint32_t ncap = c->rcvq_cap ? c->rcvq_cap * 2 : 64;
		struct tcp_slice *q = malloc(ncap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		for (uint32_t i = 0; i < c->rcvq_count; i++)
			q[i] = c->rcvq[(c->rcvq_head + i) & (c->rcvq_cap - 1)];
		free(c->rcvq);
		c->rcvq = q;
		c->rcvq_cap = ncap;
		c->rcvq_head = 0;
	}
	c->rcvq[(c->rcvq_head + c->rcvq_count) & (c->rcvq_cap - 1)] =
	    (struct tcp_slice){.seq = seq, .len = len, .data = data};
	c->rcvq_count++;
	c->rcvq_bytes += len;
	return 0;
}

/* Without rx_alloc, the buffer compaction copies into. */
#define TCP_RCVQ_FILL_CLASS ZBUF_CLASS_4K

/* No more copying into the fill buffer: lunar's reference on it goes. */
static void fill_end(struct tcp_conn *c)
{
	if (c->rcvq_fill_obj)
		zbuf_drop(c->rcvq_fill_obj);
	c->rcvq_fill_obj = c->rcvq_fill = NULL;
	c->rcvq_fill_room = 0;
}

/* A fresh fill buffer with room for @len bytes. @return false if none. */
static bool fill_renew(struct tcp_conn *c, uint32_t len)
{
	uint32_t room = (uint32_t)zbuf_class_size(TCP_RCVQ_FILL_CLASS);
	uint8_t *p;

	if (c->rx_alloc) {
		p = c->rx_alloc(c->rx_alloc_ctx, &room);
	} else {
		p = zbuf_alloc_class(TCP_RCVQ_FILL_CLASS);
		if (p)
			zbuf_take(p); /* lunar's, not the application's */
	}
	if (!p)
		return false;
	if (room < len) {
		zbuf_drop(p);
		return false;
	}
	fill_end(c);
	c->rcvq_fill_obj = c->rcvq_fill = p;
	c->rcvq_fill_room = room;
	return true;
}

/*
 * Copy [seq, seq + len) at @data to the fill object: onto the queue's last
 * slice when that one ends where the copy goes, else as a new slice with a
 * reference of its own. The caller's reference on @data is its own.
 * @return false (nothing queued) when no fill object or queue slot is to be had.
 */
static bool rcvq_compact(struct tcp_conn *c, const uint8_t *data, uint32_t seq, uint32_t len)
{
	struct tcp_slice *tail = &c->rcvq[(c->rcvq_head + c->rcvq_count - 1) & (c->rcvq_cap - 1)];

	if (c->rcvq_fill_room < len && !fill_renew(c, len))
		return false;
	memcpy(c->rcvq_fill, data, len);
	/* The last slice is in this object (not merely ending where it starts) and ends here. */
	if (tail->data >= c->rcvq_fill_obj && tail->data + tail->len == c->rcvq_fill &&
	    tail->seq + tail->len == seq) {
		tail->len += len;
		c->rcvq_bytes += len;
	} else {
		zbuf_hold(c->rcvq_fill);
		if (rcvq_push(c, c->rcvq_fill, seq, len)) {
			zbuf_drop(c->rcvq_fill);
			return false;
		}
	}
	c->rcvq_fill += len;
	c->rcvq_fill_room -= len;
	c->stats.rcvq_compacted++;
	c->stats.rcvq_compacted_bytes += len;
	return true;
}

/*
 * Queue in-order data for the application, zero copy: the slice keeps the
 * buffer the segment arrived in (a reference taken here if @take_ref, else
 * the caller's passes to the queue, or is dropped on failure).
 *
 * A slice pins its whole packet buffer (a data room of ~2 KiB at MTU 1500)
 * however few bytes it carries, and the window counts bytes: a peer sending
 * one-byte segments to an application that does not read would pin one
 * buffer per byte of the window, and drain the packet pool every
 * connection and the port share. So once TCP_RCVQ_COMPACT_AFTER slices are
 * queued, a segment under half an MSS is copied into a dense buffer and the
 * queue keeps no reference on the one it came in, as Linux collapses its
 * receive queue. An application that reads as data comes seldom meets it
 * (a receive burst of more than that before its callback); the copies are
 * counted (rcvq_compacted, rcvq_compacted_bytes).
 */
int tcp_deliver(struct tcp_conn *c, const uint8_t *data, uint32_t seq, uint32_t len, bool take_ref)
{
	if (unlikely(c->rcvq_count >= TCP_RCVQ_COMPACT_AFTER && len < c->cfg.mss / 2) &&
	    rcvq_compact(c, data, seq, len)) {
		if (!take_ref)
			zbuf_drop(data);
		c->events |= TCP_EV_READABLE;
		return 0;
	}
	if (take_ref)
		zbuf_hold(data);
	if (rcvq_push(c, data, seq, len)) {
		zbuf_drop(data);
		return -ENOMEM;
	}
	c->events |= TCP_EV_READABLE;
	return 0;
}

static void rcvq_clear(struct tcp_conn *c)
{
	for (uint32_t i = 0; i < c->rcvq_count; i++)
		zbuf_drop(c->rcvq[(c->rcvq_head + i) & (c->rcvq_cap - 1)].data);
	free(c->rcvq);
	c->rcvq = NULL;
	c->rcvq_cap = c->rcvq_head = c->rcvq_count = c->rcvq_bytes = 0;
	fill_end(c);
}

/* ---- windows ---- */

/* Free receive buffer: what we could offer right now. */
static uint32_t rcv_space(const struct tcp_conn *c)
{
	uint32_t used = c->rcvq_bytes + c->app_held + tcp_reass_bytes(&c->reass);

	return used >= c->cfg.rcv_buf ? 0 : c->cfg.rcv_buf - used;
}

/*
 * The window to advertise (RFC 9293 3.8.6.2.2, receiver-side SWS avoidance):
 * never move the right edge left, and move it right only by at least
 * min(RCV.BUFF / 2, MSS).
 */
static uint32_t rcv_window(const struct tcp_conn *c)
{
	uint32_t cur = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	uint32_t space = rcv_space(c);
	uint32_t step = c->cfg.rcv_buf / 2 < c->cfg.mss ? c->cfg.rcv_buf / 2 : c->cfg.mss;

	if (c->mem_pressure != TCP_MEM_NORMAL || space <= cur || space - cur < step)
		return cur;
	return space;
}

/* ---- segment construction ---- */

static struct tcp_tx *tx_slot(struct tcp_out *out)
{
	return out->n < TCP_OUT_MAX ? &out->seg[out->n++] : NULL;
}

/*
 * Append one segment: @flags, [seq, seq + len) of the send buffer. Fills in
 * ACK, window and options, and records what the peer now knows.
 */
bool tcp_ecn_wanted(const struct tcp_conn *c)
{
	return c->cfg.ecn == TCP_ECN_ON || c->cc.ops->needs_ecn;
}

struct tcp_tx *tcp_xmit(struct tcp_conn *c, struct tcp_out *out, uint8_t flags, uint32_t seq,
			uint32_t len, uint64_t now)
{
	struct tcp_tx *t = tx_slot(out);
	uint32_t wnd;

	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->seq = seq;
	t->len = len;
	t->flags = flags;
	if (flags & RTE_TCP_SYN_FLAG) {
		/* RFC 7323 2.2: the window in a SYN is never scaled. */
		wnd = rcv_space(c);
		t->wnd = wnd > 65535 ? 65535 : (uint16_t)wnd;
		t->opts.has_mss = true;
		t->opts.mss = c->cfg.mss;
		if (c->cfg.window_scaling && (c->state == TCP_SYN_SENT || c->ws_ok)) {
			t->opts.has_wscale = true;
			t->opts.wscale = c->rcv_wscale;
		}
		if (c->cfg.sack && (c->state == TCP_SYN_SENT || c->sack_ok))
			t->opts.sack_permitted = true;
		if (c->cfg.timestamps && (c->state == TCP_SYN_SENT || c->ts_ok)) {
			t->opts.has_ts = true;
			t->opts.ts_val = tcp_ts_now(c, now);
			t->opts.ts_ecr = c->state == TCP_SYN_SENT ? 0 : c->ts_recent;
		}
		/* RFC 3168 6.1.1: an ECN-setup SYN has ECE and CWR, its SYN-ACK ECE alone. */
		if (!(flags & RTE_TCP_ACK_FLAG) && tcp_ecn_wanted(c) && !c->ecn_no_ect)
			t->flags |= RTE_TCP_ECE_FLAG | RTE_TCP_CWR_FLAG;
		else if ((flags & RTE_TCP_ACK_FLAG) && c->ecn_ok)
			t->flags |= RTE_TCP_ECE_FLAG;
		/*
		 * Never move the right edge left (3.8.6.2.2): a retransmitted
		 * SYN-ACK's unscaled window may offer less than an ACK sent
		 * meanwhile in SYN-RECEIVED (to an unacceptable segment) had, scaled.
		 */
		if ((c->state != TCP_SYN_SENT || (flags & RTE_TCP_ACK_FLAG)) &&
		    seq_gt(c->rcv_nxt + t->wnd, c->rcv_adv))
			c->rcv_adv = c->rcv_nxt + t->wnd;
	} else {
		uint32_t field;

		wnd = rcv_window(c);
		field = wnd >> c->rcv_wscale;
		if (field > 65535)
			field = 65535;
		t->wnd = (uint16_t)field;
		if (seq_gt(c->rcv_nxt + (field << c->rcv_wscale), c->rcv_adv))
			c->rcv_adv = c->rcv_nxt + (field << c->rcv_wscale);
		if (c->ts_ok) {
			t->opts.has_ts = true;
			t->opts.ts_val = tcp_ts_now(c, now);
			t->opts.ts_ecr = c->ts_recent;
		}
		if (c->sack_ok && (c->reass.n || c->dsack_pending)) {
			struct tcp_sack_block b[TCP_SACK_MAX_BLOCKS];
			/*
			 * The blocks share the segment with its data: together they
			 * must fit the MSS (RFC 9293 3.7.1, RFC 2018 3). snd_mss already
			 * leaves room for the timestamp option; each block costs 8
			 * bytes, the SACK option 2, rounded up to 4.
			 */
			uint32_t budget = c->snd_mss > len ? c->snd_mss - len : 0;
			unsigned fit = budget >= 4 ? (budget - 4) / 8 : 0;
			unsigned max = c->ts_ok ? 3 : 4;
			unsigned nb = 0;
			bool dsack;

			if (len == 0)
				fit = max;
			if (fit > max)
				fit = max;
			/*
			 * RFC 2883 4: the duplicate first, then the usual blocks; by this ACK only.
			 */
			dsack = c->dsack_pending && fit;
			/* No room beside a full segment's data: the next ACK with room has it. */
			if (fit)
				c->dsack_pending = false;
			if (dsack)
				b[nb++] = c->dsack;
			nb += tcp_reass_sack(&c->reass, c->rcv_nxt, b + nb, fit - nb);
			/* A run the peer's FIN ends: the FIN is held too (its sequence number). */
			for (unsigned i = dsack; c->fin_ooo && i < nb; i++)
				if (b[i].right == c->fin_ooo_seq)
					b[i].right++;

			for (unsigned i = 0; i < nb; i++) {
				t->opts.sack[i].left = b[i].left;
				t->opts.sack[i].right = b[i].right;
			}
			t->opts.sack_count = (uint8_t)nb;
			/*
			 * It must read as one at the peer (4.2: above the ACK only
			 * with the block holding it next), or the peer would take it
			 * for a plain SACK of bytes no longer held: then it is left out.
			 */
			if (dsack && !tcp_sb_is_dsack(&t->opts, c->rcv_nxt)) {
				memmove(t->opts.sack, t->opts.sack + 1,
					--nb * sizeof(t->opts.sack[0]));
				t->opts.sack_count = (uint8_t)nb;
			} else if (dsack) {
				c->stats.dsacks_sent++;
			}
		}
	}
	if (c->ecn_ok && !(flags & RTE_TCP_SYN_FLAG)) {
		if (c->ecn_echo && (flags & RTE_TCP_ACK_FLAG))
			t->flags |= RTE_TCP_ECE_FLAG;
		/*
		 * RFC 3168 6.1.5: new data is ECN-capable, retransmissions are not
		 * (nor pure ACKs, 6.1.4, nor probes of a zero window, 6.1.6: the
		 * peer may drop them unread), none at all after a non-ECN-setup
		 * SYN (ecn_no_ect, 6.1.1); 6.1.2: the first new data after a
		 * reduction carries CWR.
		 */
		if (len && seq_geq(seq, c->snd_max) && c->snd_wnd && !c->ecn_no_ect) {
			t->ecn = TCP_ECN_ECT0;
			if (c->cc.cwr_owed) {
				t->flags |= RTE_TCP_CWR_FLAG;
				c->cc.cwr_owed = false;
			}
		}
	}
	c->rcv_wnd = c->rcv_adv - c->rcv_nxt;
	if (flags & RTE_TCP_ACK_FLAG) {
		t->ack = c->rcv_nxt;
		c->last_ack_sent = c->rcv_nxt;
		c->ack_pending = 0;
		c->ack_now = false;
		c->ack_burst = false;
		c->delack_at = 0;
	}
	c->stats.segs_out++;
	c->stats.bytes_out += len;
	tcp_rec_sent(c, flags, seq, len, now);
	return t;
}

/*
 * The sequence number for a segment without data (an ACK, a RST) the peer
 * will take. <SEQ=SND.NXT>, except that after a timeout rolled SND.NXT
 * back the peer has already seen up to SND.MAX: one numbered below its
 * RCV.NXT would be unacceptable there (RFC 9293 3.10.7.4 first check),
 * its acknowledgment ignored, and two such ends would answer each other's
 * ACKs forever. But not beyond the window the peer offers: a zero-window
 * probe's byte, refused, raised SND.MAX past its RCV.NXT, where at a zero
 * window only SEQ = RCV.NXT is acceptable; then the window's right edge
 * (as Linux's tcp_acceptable_seq()). Until synchronized, SND.MAX.
 */
static uint32_t acceptable_seq(const struct tcp_conn *c)
{
	uint32_t edge = c->snd_una + c->snd_wnd;

	if (c->state < TCP_ESTABLISHED || seq_leq(c->snd_max, edge))
		return c->snd_max;
	return edge;
}

void tcp_send_ack(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	tcp_xmit(c, out, RTE_TCP_ACK_FLAG, acceptable_seq(c), 0, now);
}

bool tcp_burst_end(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	c->hold_output = false;
	if (c->output_owed) {
		c->output_owed = false;
		output(c, now, out, false, 0);
	}
	if (!c->ack_burst)
		return false; /* a segment sent during the burst carried it */
	c->ack_burst = false;
	tcp_send_ack(c, now, out); /* ack_burst implies ack_pending: tcp_xmit clears both */
	return true;
}

void tcp_send_rst(struct tcp_out *out, uint32_t seq)
{
	struct tcp_tx *t = tx_slot(out);

	if (t)
		*t = (struct tcp_tx){.seq = seq, .flags = RTE_TCP_RST_FLAG};
}

/* ---- state changes ---- */

void tcp_set_state(struct tcp_conn *c, enum tcp_state s, uint64_t now)
{
	c->state = s;
	if (s == TCP_ESTABLISHED)
		c->events |= TCP_EV_CONNECTED;
	if (s == TCP_FIN_WAIT_2 && c->orphan) {
		/* Nobody will read or close: don't hold the connection for a silent peer. */
		c->timewait_at = now + c->cfg.fin_wait2_ns;
	}
	if (s == TCP_TIME_WAIT) {
		/* RFC 9293 3.10.7.4: wait 2 MSL; nothing else is pending. */
		c->rto_at = c->delack_at = c->persist_at = c->keepalive_at = 0;
		c->rack_at = c->tlp_at = 0;
		c->timewait_at = now + 2 * c->cfg.msl_ns;
	}
	if (s == TCP_CLOSED) {
		c->rto_at = c->delack_at = c->persist_at = c->keepalive_at = c->timewait_at = 0;
		c->rack_at = c->tlp_at = 0;
		c->events |= TCP_EV_CLOSED;
	}
}

/* Enter CLOSED with an error: flush the queues (RFC 9293 3.10.7.4 RST processing). */
void tcp_drop(struct tcp_conn *c, int error, uint32_t ev, uint64_t now)
{
	/* RFC 1122 4.2.3.9: a timeout reports the soft error that explains it (as Linux). */
	c->error = error == -ETIMEDOUT && c->soft_error ? c->soft_error : error;
	c->events |= ev;
	sndbuf_clear(&c->snd);
	tcp_reass_clear(&c->reass);
	tcp_sb_clear(&c->sb);
	tcp_set_state(c, TCP_CLOSED, now);
}

/* ---- life cycle and application requests ---- */

static uint8_t wscale_for(uint32_t buf)
{
	uint8_t s = 0;

	while (s < TCP_MAX_WSCALE && (buf >> s) > 65535)
		s++;
	return s;
}

int tcp_conn_init(struct tcp_conn *c, const struct tcp_config *cfg, const struct tcp_4tuple *tuple,
		  uint32_t iss, uint64_t now)
{
	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	if (!c->cfg.mss)
		c->cfg.mss = 1460;
	if (!c->cfg.reass_max_bytes)
		c->cfg.reass_max_bytes = c->cfg.rcv_buf;
	/*
	 * Room for a whole window of out-of-order segments: with too few slots
	 * the segments after a loss are dropped unSACKed and the sender can only
	 * recover by timeouts.
	 */
	if (!c->cfg.reass_max_segs) {
		uint32_t n = c->cfg.rcv_buf / 512;

		c->cfg.reass_max_segs = n < 64			 ? 64
					: n > TCP_REASS_MAX_SEGS ? TCP_REASS_MAX_SEGS
								 : n;
	}
	c->tuple = *tuple;
	c->state = TCP_CLOSED;
	c->iss = iss;
	c->snd_una = c->snd_nxt = c->snd_max = iss;
	c->rcv_wscale = c->cfg.window_scaling ? wscale_for(c->cfg.rcv_buf) : 0;
	c->snd_mss = 536; /* RFC 9293 3.7.1: the default until the peer says more */
	c->mss_clamp = 536;
	tcp_rtt_init(&c->rtt, c->cfg.rto_init_ns, c->cfg.rto_min_ns, c->cfg.rto_max_ns, NS_PER_US);
	tcp_conn_cc_init(c);
	tcp_reass_init(&c->reass, c->cfg.reass_max_bytes, c->cfg.reass_max_segs);
	tcp_sb_init(&c->sb);
	tcp_rack_init(&c->rack);
	c->last_rx_ns = now;
	return 0;
}

void tcp_conn_fini(struct tcp_conn *c)
{
	sndbuf_clear(&c->snd);
	rcvq_clear(c);
	tcp_reass_clear(&c->reass);
	tcp_sb_fini(&c->sb);
}

int tcp_connect(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	if (c->state != TCP_CLOSED)
		return -EISCONN;
	tcp_set_state(c, TCP_SYN_SENT, now);
	c->snd_nxt = c->snd_max = c->iss + 1;
	tcp_xmit(c, out, RTE_TCP_SYN_FLAG, c->iss, 0, now);
	c->rtt_seq = c->iss + 1;
	c->rtt_start = now;
	c->rto_at = now + tcp_rtt_timeout(&c->rtt);
	return 0;
}

void tcp_listen(struct tcp_conn *c)
{
	c->state = TCP_LISTEN;
}

static bool can_send_data(enum tcp_state s)
{
	return s == TCP_ESTABLISHED || s == TCP_CLOSE_WAIT || s == TCP_SYN_SENT ||
	       s == TCP_SYN_RECEIVED;
}

static inline uint32_t sndbuf_space(const struct tcp_conn *c)
{
	return c->snd.bytes >= c->cfg.snd_buf ? 0 : c->cfg.snd_buf - c->snd.bytes;
}

uint32_t tcp_send_space(const struct tcp_conn *c)
{
	return sndbuf_space(c);
}

int tcp_send_state(const struct tcp_conn *c)
{
	if (c->fin_queued)
		return -EPIPE; /* RFC 9293 3.10.2: connection closing */
	if (!can_send_data(c->state))
		return c->state == TCP_CLOSED && c->error ? c->error : -ENOTCONN;
	return 0;
}

int tcp_send(struct tcp_conn *c, const uint8_t *data, uint32_t len)
{
	struct tcp_sndbuf *b = &c->snd;
	uint32_t take;
	int rc = 0, held;

	if (!len)
		return 0;
	/*
	 * Zero-copy send takes a reference: the memory must be Zbuf, all of it
	 * in one object (-EFAULT), referenced less than on ~64k connections
	 * (-EOVERFLOW). Taken first, in the one translation; given back when
	 * the send cannot go on.
	 */
	held = zbuf_try_hold_span(data, len);
	if (held == -EFAULT)
		return held;
	rc = tcp_send_state(c);
	take = sndbuf_space(c);
	if (take > len)
		take = len;
	if (!rc && take && b->count == b->cap && sndbuf_grow(b))
		rc = -ENOMEM;
	/* Those first, as before the reference was taken here: -EOVERFLOW last. */
	if (rc || !take || held) {
		if (!held)
			zbuf_drop(data);
		return rc || !take ? rc : held;
	}
	b->ring[(b->head + b->count) & (b->cap - 1)] = (struct tcp_chunk){data, take};
	b->count++;
	b->bytes += take;
	return (int)take;
}

unsigned tcp_recv(struct tcp_conn *c, struct tcp_slice *out, unsigned max, uint64_t now,
		  struct tcp_out *o)
{
	unsigned n = 0;

	while (n < max && c->rcvq_count) {
		out[n] = c->rcvq[c->rcvq_head];
		zbuf_give(out[n].data); /* the caller's now */
		c->rcvq_bytes -= out[n].len;
		c->rcvq_head = (c->rcvq_head + 1) & (c->rcvq_cap - 1);
		c->rcvq_count--;
		n++;
	}
	if (unlikely(c->rcvq_fill_obj) && !c->rcvq_count)
		fill_end(c); /* caught up: no need to keep it */
	/* Taking data opens the window: tell the peer if it grew enough. */
	if (n)
		tcp_window_update(c, now, o);
	return n;
}

unsigned tcp_recv_hold(struct tcp_conn *c, struct tcp_slice *out, unsigned max)
{
	unsigned n = 0;

	while (n < max && c->rcvq_count) {
		out[n] = c->rcvq[c->rcvq_head];
		zbuf_give(out[n].data); /* the caller's now */
		c->rcvq_bytes -= out[n].len;
		c->app_held += out[n].len;
		c->rcvq_head = (c->rcvq_head + 1) & (c->rcvq_cap - 1);
		c->rcvq_count--;
		n++;
	}
	if (unlikely(c->rcvq_fill_obj) && !c->rcvq_count)
		fill_end(c);
	return n; /* the space only moved from queued to held: the window stays */
}

void tcp_recv_release(struct tcp_conn *c, uint32_t len, uint64_t now, struct tcp_out *o)
{
	c->app_held = len < c->app_held ? c->app_held - len : 0;
	tcp_window_update(c, now, o);
}

void tcp_window_update(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	uint32_t adv = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	uint32_t wnd;

	if (c->state == TCP_CLOSED || c->state == TCP_LISTEN || c->state == TCP_SYN_SENT)
		return;
	wnd = rcv_window(c);
	if (wnd <= adv)
		return;
	if (adv < c->cfg.mss || wnd - adv >= c->cfg.rcv_buf / 2)
		c->ack_now = true;
	tcp_output(c, now, out);
}

void tcp_close(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	switch (c->state) {
	case TCP_LISTEN:
	case TCP_SYN_SENT:
		tcp_drop(c, 0, 0, now); /* RFC 9293 3.10.4: delete the TCB */
		return;
	case TCP_SYN_RECEIVED:
		/*
		 * RFC 9293 3.10.4 lets the FIN wait until ESTABLISHED; sending it
		 * before our SYN is acknowledged would only be dropped by a peer
		 * still in SYN-SENT. tcp_input moves on to FIN-WAIT-1 then.
		 */
		c->fin_queued = true;
		return;
	case TCP_ESTABLISHED:
		c->fin_queued = true;
		tcp_set_state(c, TCP_FIN_WAIT_1, now);
		break;
	case TCP_CLOSE_WAIT:
		c->fin_queued = true;
		tcp_set_state(c, TCP_LAST_ACK, now);
		break;
	default:
		return; /* already closing: "error: connection closing" is a no-op here */
	}
	tcp_output(c, now, out);
}

uint32_t tcp_prune_ooo(struct tcp_conn *c)
{
	uint32_t bytes = tcp_reass_bytes(&c->reass);

	tcp_reass_clear(&c->reass); /* usable again: its arrays come back on first use */
	c->stats.ooo_pruned_bytes += bytes;
	return bytes;
}

void tcp_abort(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	switch (c->state) {
	case TCP_SYN_RECEIVED:
	case TCP_ESTABLISHED:
	case TCP_FIN_WAIT_1:
	case TCP_FIN_WAIT_2:
	case TCP_CLOSE_WAIT:
		/*
		 * RFC 9293 3.10.5: <SEQ=SND.NXT><CTL=RST>, numbered as our ACKs
		 * are: after a go-back-N SND.NXT may be below the peer's RCV.NXT,
		 * and a RST outside its window is dropped unseen (RFC 5961 3).
		 */
		tcp_send_rst(out, acceptable_seq(c));
		break;
	default:
		break;
	}
	tcp_drop(c, -ECONNABORTED, 0, now);
}

void tcp_abort_unread(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	if (c->state == TCP_LAST_ACK || c->state == TCP_CLOSING)
		tcp_send_rst(out, acceptable_seq(c));
	tcp_abort(c, now, out);
}

bool tcp_reset_for(const struct tcp_repr *seg, struct tcp_tx *rst)
{
	uint32_t seg_len = (uint32_t)seg->payload_len + !!(seg->flags & RTE_TCP_SYN_FLAG) +
			   !!(seg->flags & RTE_TCP_FIN_FLAG);

	if (seg->flags & RTE_TCP_RST_FLAG)
		return false; /* never answer a RST with a RST */
	memset(rst, 0, sizeof(*rst));
	if (seg->flags & RTE_TCP_ACK_FLAG) {
		rst->seq = seg->ack; /* <SEQ=SEG.ACK><CTL=RST> */
		rst->flags = RTE_TCP_RST_FLAG;
	} else {
		rst->seq = 0; /* <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK> */
		rst->ack = seg->seq + seg_len;
		rst->flags = RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG;
	}
	return true;
}

/* ---- output ---- */

static void arm_rto(struct tcp_conn *c, uint64_t now)
{
	if (!c->rto_at)
		c->rto_at = now + tcp_rtt_timeout(&c->rtt);
}

/*
 * What output() may send now, with @cwnd as the congestion window. cwnd
 * limits what is in the network: with a scoreboard, RFC 6675's pipe
 * (SACKed and lost bytes have left it), else FlightSize. The peer's window
 * limits the sequence space. @unsent is what is written and not yet sent.
 */
struct send_room {
	uint32_t pipe, c_room, r_room, unsent;
};

static struct send_room send_room(const struct tcp_conn *c, uint32_t cwnd)
{
	uint32_t in_flight = c->snd_nxt - c->snd_una, end = tcp_data_end(c);
	uint32_t pipe = c->sb_on ? tcp_sb_pipe(&c->sb, c->snd_max - c->snd_una) : in_flight;

	return (struct send_room){
	    .pipe = pipe,
	    .c_room = cwnd > pipe ? cwnd - pipe : 0,
	    .r_room = c->snd_wnd > in_flight ? c->snd_wnd - in_flight : 0,
	    .unsent = seq_gt(end, c->snd_nxt) ? end - c->snd_nxt : 0,
	};
}

/*
 * After output(): was cwnd what stopped it (the pipe is full, or data
 * waits that the peer's window would take and cwnd would not)? Kept per
 * window of data, so an ACK late in a window that filled cwnd early still
 * grows it. A cwnd that stopped nothing for an RTO is not known to be
 * safe any more: it comes down halfway to what was used (RFC 2861 3, as
 * Linux), so an application that sent little for a while cannot then
 * burst a stale window into the network.
 */
static void cwnd_validate(struct tcp_conn *c, uint64_t now)
{
	struct send_room r = send_room(c, c->cc.cwnd);
	uint32_t flight = c->snd_max - c->snd_una;
	bool limited = r.pipe >= c->cc.cwnd || (r.unsent > r.c_room && r.c_room <= r.r_room);

	if (seq_geq(c->snd_una, c->cwnd_usage_seq) || limited ||
	    (!c->cwnd_limited && flight > c->max_flight)) {
		c->cwnd_limited = limited;
		c->max_flight = flight;
		c->cwnd_usage_seq = c->snd_nxt;
	}
	if (limited || !c->cwnd_stamp_ns) {
		c->cwnd_used = 0;
		c->cwnd_stamp_ns = now;
		return;
	}
	if (flight > c->cwnd_used)
		c->cwnd_used = flight;
	if (now - c->cwnd_stamp_ns >= tcp_rtt_timeout(&c->rtt)) {
		if (tcp_cc_unused(&c->cc, c->cwnd_used, c->cfg.iw_segments))
			c->stats.cwnd_unused_cuts++;
		c->cwnd_used = 0;
		c->cwnd_stamp_ns = now;
	}
}

void tcp_conn_cc_init(struct tcp_conn *c)
{
	tcp_cc_init(&c->cc, c->snd_mss, c->cfg.iw_segments, c->cfg.cc);
	tcp_hystart_init(&c->cc.hs, c->cfg.hystart_min_ns, c->cfg.hystart_max_ns);
}

bool tcp_conn_cwnd_limited(const struct tcp_conn *c)
{
	if (c->cc.cwnd < c->cc.ssthresh) /* slow start: up to twice what was used */
		return c->cc.cwnd < 2 * (uint64_t)c->max_flight;
	return c->cwnd_limited;
}

/* RFC 9293 3.8.6.2.1 / RFC 1122 4.2.3.4: the override timeout for sender SWS avoidance. */
#define SWS_OVERRIDE_NS (200 * NS_PER_MS)

/*
 * F-RTO step 2b (RFC 5682 2.1, 3.1): up to two new segments, whatever
 * Nagle or sender SWS avoidance would hold, each within the peer's
 * window but beyond cwnd if need be: the two that slow start would have
 * retransmitted (the pipe still counts what go-back-N has not resent).
 * If none can go, the RTO recovery goes on as usual.
 */
static void frto_send_new(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	uint32_t before = c->snd_max, tso_max = c->cfg.tso_max;

	tcp_frto_sent_new(&c->frto);
	c->cfg.tso_max = 0; /* two segments of one MSS, not TSO's larger ones */
	for (unsigned i = 0; i < 2; i++) {
		struct send_room r = send_room(c, c->cc.cwnd);
		uint32_t want = r.pipe + c->snd_mss;

		output(c, now, out, true, want > c->cc.cwnd ? want - c->cc.cwnd : 0);
	}
	c->cfg.tso_max = tso_max;
	if (c->snd_max != before)
		return;
	tcp_rec_frto_abandon(c);
	output(c, now, out, false, 0);
}

/*
 * Send what the windows allow. @force sends one segment even when sender
 * SWS avoidance or Nagle would hold it (the override timer expired);
 * @extra lets @extra bytes beyond cwnd go (RFC 3042 limited transmit).
 */
static void output(struct tcp_conn *c, uint64_t now, struct tcp_out *out, bool force,
		   uint32_t extra)
{
	bool sent = false, held = false;

	if (c->state == TCP_SYN_SENT || c->state == TCP_LISTEN || c->state == TCP_CLOSED)
		return;
	if (c->state == TCP_SYN_RECEIVED) {
		c->ack_now = false; /* the SYN-ACK timer covers this state */
		return;
	}
	/*
	 * An ACK's bookkeeping left for later (ack_defer) has not grown cwnd
	 * yet: when the cwnd it would grow is what holds data back, done now,
	 * so that what is sent (and cwnd_validate()'s verdict) is what the
	 * ACK worked at once would give. A reply within the old cwnd leaves
	 * it for after the transmit.
	 */
	if (c->ack_work_due) {
		struct send_room r = send_room(c, c->cc.cwnd);

		if (r.unsent > r.c_room)
			tcp_ack_work(c);
	}
	/*
	 * RFC 5681 4.1: after an idle period longer than an RTO, restart from the initial window.
	 */
	if (c->snd_una == c->snd_max && c->last_send_ns &&
	    now - c->last_send_ns > tcp_rtt_timeout(&c->rtt))
		tcp_cc_on_idle(&c->cc, c->cfg.iw_segments);
	if (c->frto.step == TCP_FRTO_SEND_NEW) {
		frto_send_new(c, now, out);
		return;
	}
	/*
	 * Lost segments first (SACK recovery, RFC 6675 5 (C.1)), within the
	 * pipe; not while F-RTO waits to learn whether they were lost at all.
	 */
	if (c->sb_on && c->sb.lost && c->frto.step < TCP_FRTO_SEND_NEW &&
	    tcp_rec_send_lost(c, c->cc.cwnd + extra, now, out))
		sent = true;
	for (unsigned frames = 0; !c->cfg.gso || frames < TCP_OUT_MAX;) {
		uint32_t end = tcp_data_end(c);
		uint32_t in_flight = c->snd_nxt - c->snd_una;
		struct send_room r = send_room(c, c->cc.cwnd + extra);
		uint32_t usable = r.c_room < r.r_room ? r.c_room : r.r_room;
		uint32_t unsent = r.unsent;
		uint32_t len = unsent < usable ? unsent : usable;
		uint32_t probe = c->probe_at && !force && !extra && !sent
				     ? tcp_pmtu_probe_len(c, now, usable, unsent)
				     : 0;
		uint8_t flags = RTE_TCP_ACK_FLAG;
		bool fin_now = false;
		uint32_t segs;

		/*
		 * A path MTU probe: one segment larger than the MSS (tcp_icmp.h).
		 * Else one MSS per segment, or with TSO up to tso_max whole MSSs
		 * (the port cuts them; RFC 9293 3.7.1 still holds on the wire).
		 * Such a segment carries no SACK blocks: tcp_xmit finds no room.
		 */
		if (probe) {
			len = probe;
		} else if (c->cfg.tso_max >= 2u * c->snd_mss && len > c->snd_mss) {
			uint32_t cap = c->cfg.tso_max - c->cfg.tso_max % c->snd_mss;

			if (len > cap)
				len = cap;
			/*
			 * Cut in software (GSO): at most TCP_OUT_MAX frames a call, as without it.
			 */
			if (c->cfg.gso && len > (TCP_OUT_MAX - frames) * c->snd_mss)
				len = (TCP_OUT_MAX - frames) * c->snd_mss;
			/*
			 * Whole segments unless it is the tail, and the tail only
			 * when Nagle would send it alone (as Linux's
			 * tcp_mss_split_point()): never a short last frame while
			 * data is in flight.
			 */
			if (len % c->snd_mss && (len != unsent || !(c->cfg.nodelay || !in_flight ||
								    c->fin_queued || force)))
				len -= len % c->snd_mss;
		} else if (len > c->snd_mss) {
			len = c->snd_mss;
		}
		if (len) {
			/*
			 * Sender SWS avoidance and Nagle (RFC 9293 3.8.6.2.1, 3.7.4):
			 * send a full segment, everything left when nothing is in
			 * flight (or Nagle is off), at least half the largest window,
			 * or anything once the connection is closing.
			 */
			bool all = len == unsent;

			if (!(len >= c->snd_mss || (all && (c->cfg.nodelay || !in_flight)) ||
			      len >= c->max_snd_wnd / 2 || (all && c->fin_queued) || force)) {
				held = true;
				break;
			}
			if (all)
				flags |= RTE_TCP_PSH_FLAG;
		}
		/*
		 * FIN: after the last data byte, once; again after a timeout rolled snd_nxt back.
		 */
		if (c->fin_queued && c->snd_nxt + len == end &&
		    (!c->fin_sent || c->snd_nxt + len == c->fin_seq))
			fin_now = true;
		if (!len && !fin_now)
			break;
		if (fin_now)
			flags |= RTE_TCP_FIN_FLAG;
		if (c->snd_una == c->snd_max)
			c->unacked_since = now; /* the clock of the user timeout starts */
		if (!tcp_xmit(c, out, flags, c->snd_nxt, len, now))
			break;
		if (probe)
			tcp_pmtu_probe_sent(c, c->snd_nxt, len);
		else if (len > c->snd_mss)
			out->seg[out->n - 1].tso_mss = c->snd_mss;
		/* A TSO segment is the MSS-sized frames the port or GSO cuts; a probe is one. */
		segs = len > c->snd_mss && !probe ? (len + c->snd_mss - 1) / c->snd_mss : 1;
		if (seq_lt(c->snd_nxt, c->snd_max)) { /* go-back-N after an RTO, or a lower MSS */
			out->seg[out->n - 1].retransmit = true;
			c->stats.retransmits += segs;
			tcp_pmtu_probe_resent(c, c->snd_nxt, c->snd_nxt + len, now);
		} else if (!c->rtt_start && len) {
			/*
			 * Time this segment (Karn: new data only); of a TSO segment
			 * its first MSS, whose ACK no delayed ACK holds back.
			 */
			c->rtt_seq = c->snd_nxt + (segs > 1 ? c->snd_mss : len);
			c->rtt_start = now;
		}
		frames += segs;
		c->snd_nxt += len;
		if (fin_now) {
			c->fin_seq = c->snd_nxt;
			c->fin_sent = true;
			c->snd_nxt++;
		}
		if (seq_gt(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		c->last_send_ns = now;
		arm_rto(c, now);
		sent = true;
		if (fin_now || force || extra)
			break;
	}
	if (sent && c->sb_on && !c->tlp_at)
		tcp_rec_arm_tlp(c, now);
	cwnd_validate(c, now);
	if (c->snd_wnd == 0 && seq_gt(tcp_data_end(c), c->snd_una)) {
		/* Zero window with data waiting: probe it, don't time it out (RFC 9293 3.8.6.1). */
		c->rto_at = 0;
		if (!c->persist_at) {
			c->persist_backoff = 0;
			c->persist_at = now + tcp_rtt_timeout(&c->rtt);
			if (c->snd_una == c->snd_max)
				c->unacked_since = now; /* the probes' user timeout starts now */
		}
	} else {
		if (c->snd_una != c->snd_max && !c->rto_at) {
			/* Outstanding data is always timed (RFC 6298 5.1)... */
			arm_rto(c, now);
			/* ...and a window that has just reopened may have its probe first. */
			if (c->sb_on)
				tcp_rec_arm_tlp(c, now);
		}
		if (held && c->snd_nxt == c->snd_una && !c->persist_at)
			c->persist_at = now + SWS_OVERRIDE_NS; /* the SWS override timer */
	}
	if (!sent && c->ack_now)
		tcp_send_ack(c, now, out);
	else if (!sent && c->ack_pending && !c->delack_at)
		c->delack_at = now + c->cfg.delack_ns;
}

void tcp_output(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	if (c->hold_output) {
		/*
		 * Data waits for tcp_burst_end(); an ACK that must go now goes
		 * alone, so a duplicate ACK stays one pure ACK per segment
		 * (RFC 5681 2: a segment with data is not one).
		 */
		if (c->ack_now)
			tcp_send_ack(c, now, out);
		c->output_owed = true;
		return;
	}
	c->output_owed = false;
	output(c, now, out, false, 0);
}

void tcp_output_probe(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	output(c, now, out, true, c->snd_mss);
}

void tcp_limited_transmit(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	/*
	 * RFC 3042: one new segment per early duplicate ACK, within rwnd, with
	 * FlightSize at most cwnd + 2*SMSS after the second (cwnd itself unchanged).
	 */
	output(c, now, out, false, c->cc.dupacks * c->snd_mss);
}

/* ---- timers ---- */

uint64_t tcp_next_deadline(const struct tcp_conn *c)
{
	uint64_t d = UINT64_MAX;
	const uint64_t t[] = {c->rto_at,      c->delack_at, c->persist_at, c->keepalive_at,
			      c->timewait_at, c->rack_at,   c->tlp_at};

	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i] && t[i] < d)
			d = t[i];
	return d;
}

/* RFC 6298 5.4-5.6 and RFC 5681 3.1: the retransmission timer expired. */
void tcp_rto_expired(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	bool frto;

	c->rto_at = 0;
	c->stats.timeouts++;
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED) {
		if (++c->retries > c->cfg.syn_retries) {
			tcp_drop(c, -ETIMEDOUT, TCP_EV_TIMEOUT, now);
			return;
		}
		tcp_rtt_backoff(&c->rtt);
		c->rtt_start = 0;
		if (c->state == TCP_SYN_SENT) {
			/* RFC 3168 6.1.1.1: an ECN-setup SYN may be what a middlebox drops. */
			if (c->cfg.ecn_fallback && tcp_ecn_wanted(c) && !c->ecn_no_ect) {
				c->ecn_no_ect = true;
				c->stats.ecn_syn_fallbacks++;
			}
			tcp_xmit(c, out, RTE_TCP_SYN_FLAG, c->iss, 0, now);
		} else
			tcp_xmit(c, out, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, c->iss, 0, now);
		if (out->n)
			out->seg[out->n - 1].retransmit = true;
		c->stats.retransmits++;
		c->rto_at = now + tcp_rtt_timeout(&c->rtt);
		return;
	}
	if (c->snd_una == c->snd_max)
		return; /* everything was acknowledged meanwhile */
	if (now - c->unacked_since >= c->cfg.user_timeout_ns) {
		tcp_drop(c, -ETIMEDOUT, TCP_EV_TIMEOUT, now); /* the peer vanished */
		return;
	}
	/*
	 * Resend what is not SACKed; from the second RTO with no ACK of new
	 * data between, what is SACKed too. Counted by retries, which only new
	 * data acknowledged resets: an undo in between (a D-SACK for what the
	 * first resent) must not make the receiver's reneging invisible.
	 */
	c->retries++;
	c->rtos_at_size++;
	/*
	 * RFC 5682 2.1, 3.1 step 1: F-RTO judges a first RTO, not one while
	 * the data sent before an earlier RTO or loss is still being recovered
	 * (SND.UNA below its "recover"): go-back-N's own retransmissions,
	 * sent before this RTO, could be taken for late originals.
	 */
	frto = c->cfg.frto && !tcp_cc_recovering(&c->cc, c->snd_una);
	tcp_rec_frto_abandon(c);
	if (c->sb_on)
		tcp_rec_timeout(c, c->retries > 1);
	if (tcp_cc_on_timeout(&c->cc, c->snd_max - c->snd_una, c->snd_max)) {
		tcp_rec_undo_begin(c, now);
		if (frto)
			tcp_frto_begin(&c->frto, c->snd_max, c->sb_on);
	}
	tcp_undo_rto(&c->undo, c->snd_max);
	tcp_rtt_backoff(&c->rtt);
	c->rtt_start = 0; /* Karn: no sample from retransmitted data */
	if (!c->sb_on)
		c->snd_nxt = c->snd_una; /* go back: resend from the first unacknowledged byte */
	if (c->probe_mtu)
		tcp_pmtu_probe_failed(c, now); /* lost with the rest, or not: no telling */
	tcp_blackhole(c, now, out);	       /* or what is resent may be too large again */
	tcp_output(c, now, out);
	if (!c->rto_at)
		c->rto_at = now + tcp_rtt_timeout(&c->rtt);
}

/*
 * The persist timer: probe a zero window with one byte (RFC 9293 3.8.6.1),
 * or, with an open window, end sender SWS avoidance's wait (RFC 1122 4.2.3.4).
 */
static void persist_expired(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	uint64_t t;

	c->persist_at = 0;
	if (!seq_gt(tcp_data_end(c), c->snd_una))
		return;
	if (c->snd_wnd) {
		output(c, now, out, true, 0);
		return;
	}
	/*
	 * The byte at SND.UNA; SND.NXT stays, so a refused probe leaves no
	 * hole. Its ACK would move SND.UNA, which F-RTO must not take for an
	 * original's late ACK: detection ends.
	 */
	tcp_rec_frto_abandon(c);
	if (tcp_xmit(c, out, RTE_TCP_ACK_FLAG, c->snd_una, 1, now)) {
		c->stats.zero_window_probes++;
		if (seq_gt(c->snd_una + 1, c->snd_max))
			c->snd_max = c->snd_una + 1;
	}
	/* Exponential backoff, capped; RFC 1122 4.2.2.17: never give up while answered. */
	t = tcp_rtt_timeout(&c->rtt) << (c->persist_backoff < 6 ? c->persist_backoff : 6);
	if (t > c->cfg.rto_max_ns)
		t = c->cfg.rto_max_ns;
	c->persist_backoff++;
	c->persist_at = now + t;
}

/*
 * RFC 1122 4.2.2.17 keeps a zero window open as long as the receiver
 * answers the probes (each answer refreshes unacked_since); one that says
 * nothing for user_timeout_ns is gone, as an unanswered retransmission
 * says (Linux's tcp_probe_timer() gives up the same way). Else a peer that
 * closes its window and vanishes would hold the connection, and its send
 * buffer, for ever, whether the application is still there or not.
 */
static bool probes_unanswered(const struct tcp_conn *c, uint64_t now)
{
	return c->persist_at && now >= c->persist_at && c->snd_wnd == 0 &&
	       seq_gt(tcp_data_end(c), c->snd_una) &&
	       now - c->unacked_since >= c->cfg.user_timeout_ns;
}

/*
 * An orphan (the application closed) whose data a zero window holds back:
 * after cfg.orphan_probes probes it gives up, answered or not, as Linux's
 * tcp_orphan_retries. RFC 1122 4.2.2.17's "as long as the receiver
 * answers" is for a connection someone waits on; here a peer keeping its
 * window shut while answering would hold the send buffer, and the
 * stack's mem_max, for ever, with no application to give up.
 */
static bool orphan_stuck(const struct tcp_conn *c, uint64_t now)
{
	return c->orphan && c->cfg.orphan_probes && c->persist_at && now >= c->persist_at &&
	       c->snd_wnd == 0 && seq_gt(tcp_data_end(c), c->snd_una) &&
	       c->persist_backoff >= c->cfg.orphan_probes;
}

/* RFC 1122 4.2.3.6: a keep-alive is <SEQ=SND.NXT-1> with no data. */
static void keepalive_expired(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	c->keepalive_at = 0;
	if (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT)
		return;
	if (c->keepalive_sent >= c->cfg.keepalive_probes) {
		tcp_drop(c, -ETIMEDOUT, TCP_EV_TIMEOUT, now);
		return;
	}
	tcp_xmit(c, out, RTE_TCP_ACK_FLAG, c->snd_nxt - 1, 0, now);
	c->keepalive_sent++;
	c->keepalive_at = now + c->cfg.keepalive_intvl_ns;
}

void tcp_timer(struct tcp_conn *c, uint64_t now, struct tcp_out *out)
{
	tcp_ack_work(c); /* the deadlines below are an ACK's to re-arm */
	if (c->timewait_at && now >= c->timewait_at) {
		c->timewait_at = 0;
		tcp_set_state(c, TCP_CLOSED, now);
		return;
	}
	/*
	 * Keep-alive first: when it gives up, tcp_drop() releases the send
	 * buffer, so no data segment (a retransmission, a zero-window probe)
	 * may already be in @out, its payload gone before the caller copies it.
	 */
	if (c->keepalive_at && now >= c->keepalive_at)
		keepalive_expired(c, now, out);
	if (c->state == TCP_CLOSED)
		return;
	if (probes_unanswered(c, now)) { /* first too, for the same reason */
		tcp_drop(c, -ETIMEDOUT, TCP_EV_TIMEOUT, now);
		return;
	}
	if (orphan_stuck(c, now)) {
		tcp_send_rst(out, acceptable_seq(c)); /* it answers: tell it */
		c->stats.orphans_dropped++;
		tcp_drop(c, -ETIMEDOUT, TCP_EV_TIMEOUT, now);
		return;
	}
	if (c->rto_at && now >= c->rto_at)
		tcp_rto_expired(c, now, out);
	if (c->state == TCP_CLOSED)
		return;
	if (c->persist_at && now >= c->persist_at)
		persist_expired(c, now, out);
	if (c->rack_at && now >= c->rack_at) {
		tcp_rec_rack_timer(c, now);
		tcp_output(c, now, out); /* what it found lost goes now */
	}
	if (c->tlp_at && now >= c->tlp_at)
		tcp_rec_tlp_timer(c, now, out);
	if (c->delack_at && now >= c->delack_at) {
		c->delack_at = 0;
		tcp_send_ack(c, now, out);
	}
}

void tcp_keepalive_touch(struct tcp_conn *c, uint64_t now)
{
	c->last_rx_ns = now;
	c->keepalive_sent = 0;
	if (c->cfg.keepalive && (c->state == TCP_ESTABLISHED || c->state == TCP_CLOSE_WAIT))
		c->keepalive_at = now + c->cfg.keepalive_idle_ns;
}

uint32_t tcp_sndbuf_ack(struct tcp_conn *c, uint32_t acked)
{
	/* The FIN occupies a sequence number but no byte of the send buffer. */
	uint32_t bytes = acked;

	if (c->fin_sent && seq_lt(c->snd_una, c->fin_seq + 1) &&
	    seq_geq(c->snd_una + acked, c->fin_seq + 1))
		bytes--;
	if (bytes > c->snd.bytes)
		bytes = c->snd.bytes;
	sndbuf_ack(&c->snd, bytes);
	return bytes;
}
