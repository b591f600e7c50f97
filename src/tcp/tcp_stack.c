/*
 * tcp_stack.c - TCP on one worker: demultiplexing, receive trains (software
 * GRO), accept queues, timers, frames (software GSO) and application
 * events, and the bookkeeping a poll leaves until after its transmit (see
 * tcp_stack.h).
 */
#include "tcp/tcp_stack.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <sodium.h>

#include "base/compiler.h"
#include "base/cost.h"
#include "base/log.h"
#include "base/timer_wheel.h"
#include "mem/zbuf.h"
#include "net/netif.h"
#include "net/pmtu.h"
#include "port/port.h"
#include "tcp/tcp_icmp.h"
#include "tcp/tcp_seq.h"
#include "tcp/tcp_syncookie.h"
#include "tcp/tcp_table.h"
#include "wire/checksum.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"

#define MAX_SLICES 64
/* Received frames whose free waits for the transmit; past that many, freed at once. */
#define RX_DONE_MAX 64

struct tcp_listener {
	struct tcp_stack *st;
	uint16_t port;
	unsigned backlog;
	unsigned pending; /* embryonic + ready, against the backlog */
	unsigned ready;	  /* established, waiting for tcp_accept() */
	struct tcp_sock *ready_head, *ready_tail;
	tcp_accept_fn fn;
	void *ctx;
};

struct tcp_sock {
	struct tcp_conn conn; /* first: the core's view */
	struct tcp_stack *st;
	struct tcp_listener *listener; /* passive and not yet accepted */
	tcp_sock_fn fn;
	void *ctx;
	struct tw_entry timer; /* on the stack's wheel while the connection has a deadline */
	struct tcp_sock *ev_next, *ready_next, *dead_next;
	struct tcp_sock *burst_next; /* on the stack's list of work for the burst's end */
	bool burst_listed;
	/* on the stack's list of timers to re-arm after transmit; unlinked when killed */
	struct tcp_sock *resched_next, *resched_prev;
	bool resched_listed;
	struct tcp_sock *all_next, *all_prev; /* every socket of the stack, for teardown */
	bool ev_queued, in_table, app_owned, app_closed, dead;
	bool inline_mode; /* inline-r2c: callbacks run in place, once per run of segments */
	bool in_callback; /* never re-entered */
	/* limits (see "limits" below) */
	bool half_open;	  /* made from a SYN and not yet past SYN-RECEIVED: in st->half_open */
	bool in_tw;	  /* on the stack's TIME-WAIT list */
	bool snd_blocked; /* a send was cut by mem_max: gets TCP_EV_WRITABLE once memory frees */
	struct tcp_sock *tw_next, *tw_prev;
	uint64_t mem_charged; /* its bytes in st->mem_bytes */
};

/*
 * Software GRO: in-order data segments of one connection within a receive
 * burst, their headers alike but for the sequence number, held to go to
 * TCP together (gro_flush()). Linux's GRO and a NIC's LRO do the same.
 */
#define GRO_MAX 32
struct gro_train {
	unsigned n;
	uint32_t next_seq;   /* where the next segment must start (head.seq + the payload in all) */
	uint8_t last_flags;  /* the last segment's flags: PSH may end a train */
	struct ipv4_repr ir; /* the first segment's headers, every segment's but for... */
	struct tcp_repr head; /* ...seq, payload and (the last's) PSH */
	struct tcp_piece pc[GRO_MAX];
	struct rte_mbuf *m[GRO_MAX];
};

struct tcp_stack {
	struct netif *nif;
	struct tcp_table *table;
	struct tcp_config cfg;
	struct flow_plan plan;
	unsigned worker;
	struct flow_port_set eph;     /* this worker's client ports */
	struct timer_wheel timers;    /* every connection's next deadline */
	struct rte_mempool *hdr_pool; /* zero-copy frames' headers and attachments */
	struct tcp_sock *ev_head, *ev_tail, *dead;
	struct tcp_sock *burst_head; /* connections with held output or an ACK owed */
	struct tcp_sock *all;	     /* every live socket */
	/*
	 * The connection the last segment was for (4.4BSD's tcp_last_inpcb):
	 * the segments of a burst mostly belong to one, and comparing a tuple
	 * is cheaper than hashing it. Cleared when that socket leaves the table.
	 */
	struct tcp_sock *last_rx;
	/*
	 * inline-r2c's train: the socket whose callback waits for the end of
	 * its run of segments in this burst (deliver_inline()).
	 */
	struct tcp_sock *inline_next;
	struct gro_train gro; /* the burst's segments held for TCP (software GRO) */
	/*
	 * Work no frame waits for, left until the poll's frames are sent
	 * (tcp_stack_defer_to_tx()): the timers of the connections the burst
	 * touched, the received frames TCP is done with.
	 */
	bool defer_to_tx;
	unsigned timer_budget; /* connection timers fired per poll at most */
	bool in_burst_end;     /* timers re-armed by after() go on resched_head */
	bool after_tx_due;     /* tcp_stack_after_tx() has work from the last poll */
	struct tcp_sock *resched_head;
	unsigned rx_done_n;
	struct rte_mbuf *rx_done[RX_DONE_MAX];
	struct tcp_out out;
	uint8_t cookie_key[TCP_SYNCOOKIE_KEY_BYTES]; /* SYN cookies' secret */
	uint64_t cookie_sent_ns;		     /* when the last one went (0: never) */
	tcp_cookie_hook_fn cookie_hook;		     /* tcp_stack_set_cookie_hook() */
	void *cookie_hook_arg;
	uint64_t cookie_hook_ns; /* when it last ran (0: never) */
	uint64_t now;
	enum tcp_mem_pressure mem_pressure;  /* the pool's or mem_max's, as last sampled */
	enum tcp_mem_pressure pool_pressure; /* how low the packet pool runs */
	enum tcp_mem_pressure mem_seen; /* highest level given to a connection since the sample */
	uint64_t last_pool_check, next_prune; /* ns */
	unsigned sockets;
	/* limits (tcp_limits.h): what they count now */
	struct tcp_limits lim;
	unsigned table_cap; /* connections the table was made for */
	unsigned in_table, half_open, time_wait, snd_blocked;
	struct tcp_sock *tw_head, *tw_tail; /* TIME-WAIT connections, oldest first */
	uint64_t mem_bytes;		    /* every connection's conn_mem(), as last charged */
	struct tcp_stack_stats stats;
	/* what fragmentation-needed taught about each peer's path (RFC 1191) */
	struct pmtu_cache pmtu;
};

/* ---- timers ---- */

/* Re-file @s under its current next deadline. */
static void resched(struct tcp_sock *s)
{
	uint64_t d = tcp_next_deadline(&s->conn);

	if (d == UINT64_MAX)
		tw_cancel(&s->st->timers, &s->timer);
	else
		tw_schedule(&s->st->timers, &s->timer, d);
}

/*
 * Re-arm @s's timer, or, in burst_end() of a stack that leaves its
 * bookkeeping until after transmit, list it for tcp_stack_after_tx().
 * A timer set late is no loss: the wheel is next read in the next poll,
 * and tcp_stack_after_tx() runs before it.
 */
static void resched_soon(struct tcp_sock *s)
{
	struct tcp_stack *st = s->st;

	if (!st->in_burst_end) {
		/*
		 * Not left for tcp_stack_after_tx() (its mode turned off in
		 * this poll): an ACK's deferred work first, whose deadlines
		 * these are.
		 */
		tcp_ack_work(&s->conn);
		resched(s);
		return;
	}
	if (!s->resched_listed) {
		s->resched_listed = true;
		s->resched_prev = NULL;
		s->resched_next = st->resched_head;
		if (st->resched_head)
			st->resched_head->resched_prev = s;
		st->resched_head = s;
	}
}

/* ---- frames ---- */

/* Copy @len bytes of @c's send buffer at @seq into @m at offset @off, chaining mbufs as needed. */
static int copy_payload_cat(struct tcp_stack *st, struct tcp_conn *c, struct rte_mbuf *m,
			    uint8_t *dst, uint32_t room, uint32_t seq, uint32_t len);

static int copy_payload(struct tcp_stack *st, struct tcp_conn *c, struct rte_mbuf *m, uint8_t *dst,
			uint32_t room, uint32_t seq, uint32_t len)
{
	enum lunar_cost_cat prev = lunar_cost_enter(LUNAR_COST_COPY);
	int rc = copy_payload_cat(st, c, m, dst, room, seq, len);

	lunar_cost_leave(prev);
	return rc;
}

/*
 * A segment may span any number of the send buffer's chunks (one per
 * send: a thousand small writes make a segment of a thousand), so the
 * slices are taken MAX_SLICES at a time until all @len bytes are copied.
 */
static int copy_payload_cat(struct tcp_stack *st, struct tcp_conn *c, struct rte_mbuf *m,
			    uint8_t *dst, uint32_t room, uint32_t seq, uint32_t len)
{
	struct tcp_slice sl[MAX_SLICES];
	struct rte_mbuf *tail = m;
	unsigned n = 0, i = 0;

	for (; len; i++) {
		const uint8_t *src;
		uint32_t left;

		if (i == n) {
			n = tcp_tx_slices(c, seq, len, sl, MAX_SLICES);
			i = 0;
			if (!n)
				return -EINVAL; /* the send buffer does not hold it: never half a
						   frame */
		}
		src = sl[i].data;
		left = sl[i].len;
		seq += left;
		len -= left;

		while (left) {
			uint32_t k = left < room ? left : room;

			if (!k) {
				/* A TSO segment larger than one buffer continues in the next. */
				struct rte_mbuf *more = rte_pktmbuf_alloc(st->nif->port->pool);

				if (!more || rte_pktmbuf_chain(m, more)) {
					rte_pktmbuf_free(more);
					return -ENOBUFS;
				}
				tail = more;
				room = rte_pktmbuf_tailroom(tail);
				dst = rte_pktmbuf_mtod(tail, uint8_t *);
				continue;
			}
			memcpy(dst, src, k);
			if (tail != m) {
				tail->data_len += (uint16_t)k;
				m->pkt_len += k;
			}
			dst += k;
			src += k;
			left -= k;
			room -= k;
		}
	}
	return 0;
}

/*
 * Zero-copy framing (LUNA §6.2, Fig. 7 steps 7-8): the header goes in a
 * buffer of its own and each slice of the send buffer is attached to the
 * frame as an external buffer holding one more Zbuf reference, dropped
 * when the port is done with the frame. The shared-info record the mbuf
 * library needs lives in the attaching mbuf's own (otherwise unused) data
 * room, so nothing is written into the application's memory.
 */
#define ZC_MAX_SLICES 16

static void zc_release(void *addr, void *opaque)
{
	(void)opaque;
	zbuf_drop(addr);
}

static int attach_payload(struct tcp_stack *st, struct tcp_conn *c, struct rte_mbuf *m,
			  uint32_t seq, uint32_t len)
{
	struct tcp_slice sl[ZC_MAX_SLICES];
	unsigned n = tcp_tx_slices(c, seq, len, sl, ZC_MAX_SLICES);
	uint32_t got = 0;

	for (unsigned i = 0; i < n; i++)
		got += sl[i].len;
	if (got != len)
		return -E2BIG; /* scattered over too many small sends: copy instead */
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *a = rte_pktmbuf_alloc(st->hdr_pool);
		struct rte_mbuf_ext_shared_info *sh;

		if (!a)
			return -ENOBUFS;
		sh = rte_pktmbuf_mtod(a, struct rte_mbuf_ext_shared_info *);
		if (zbuf_try_hold(sl[i].data)) {
			rte_pktmbuf_free(a); /* nothing attached yet */
			return -E2BIG;	     /* referenced too widely: copy instead */
		}
		sh->free_cb = zc_release;
		sh->fcb_opaque = NULL;
		rte_mbuf_ext_refcnt_set(sh, 1);
		rte_pktmbuf_attach_extbuf(a, (void *)(uintptr_t)sl[i].data, zbuf_iova(sl[i].data),
					  (uint16_t)sl[i].len, sh);
		a->data_len = (uint16_t)sl[i].len;
		a->pkt_len = sl[i].len;
		if (rte_pktmbuf_chain(m, a)) {
			rte_pktmbuf_free(a); /* drops the reference through zc_release */
			return -E2BIG;
		}
	}
	return 0;
}

/*
 * A frame whose payload is attached, not copied: header and attachments
 * from the worker's small header pool, never from the receive pool the
 * port needs to take ACKs in. NULL when that cannot be done (no header
 * pool, no chained tx, pool empty, payload in too many pieces): copy.
 */
static struct rte_mbuf *frame_attached(struct tcp_stack *st, struct tcp_conn *c,
				       const struct tcp_tx *tx, size_t hdr, uint8_t **p)
{
	struct rte_mbuf *m;

	if (!tx->len || !c || !st->hdr_pool ||
	    !(st->nif->port->offloads & PORT_OFFLOAD_TX_MULTISEG))
		return NULL;
	m = rte_pktmbuf_alloc(st->hdr_pool);
	if (!m)
		return NULL;
	*p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)hdr);
	if (!*p || attach_payload(st, c, m, tx->seq, tx->len)) {
		rte_pktmbuf_free(m); /* drops what was attached */
		return NULL;
	}
	return m;
}

/*
 * A frame holding the header and one copy of the payload (chained beyond
 * one buffer for TSO). NULL when out of buffers, or, with *@unbuffered
 * set, when the send buffer does not hold the bytes.
 */
static struct rte_mbuf *frame_copied(struct tcp_stack *st, struct tcp_conn *c,
				     const struct tcp_tx *tx, size_t hdr, uint8_t **p,
				     bool *unbuffered)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(st->nif->port->pool);
	uint32_t first = tx->len;
	int rc = 0;

	if (!m)
		return NULL;
	/* The header and as much payload as the first buffer holds (all of it without TSO). */
	if (hdr + first > rte_pktmbuf_tailroom(m))
		first = rte_pktmbuf_tailroom(m) - (uint32_t)hdr;
	*p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hdr + first));
	if (*p && tx->len)
		rc = copy_payload(st, c, m, *p + hdr, first, tx->seq, tx->len);
	if (!*p || rc) {
		*unbuffered = rc == -EINVAL;
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

/*
 * One's complement sum of every byte of a chain (inet_csum_add_at() puts
 * each buffer's sum at its offset). Not rte_raw_cksum_mbuf(): DPDK 22.11's truncates the 32-bit
 * partial sum to 16 bits before that swap, so segments after an odd-length one get a wrong
 * checksum, and a retransmission of the same bytes is wrong again.
 */
static uint16_t chain_csum_partial(const struct rte_mbuf *m)
{
	uint32_t done = 0;
	uint16_t sum = 0;

	for (; m; m = m->next) {
		uint16_t part = inet_csum_partial(rte_pktmbuf_mtod(m, const void *), m->data_len);

		sum = inet_csum_add_at(sum, part, done);
		done += m->data_len;
	}
	return sum;
}

/*
 * @frames frames not built, lost to the peer (RACK or the timers resend
 * what mattered), counted under their reason.
 */
static void count_unbuilt(struct tcp_stack *st, bool unbuffered, uint32_t frames)
{
	if (unbuffered)
		st->stats.tx_unbuffered += frames;
	else
		st->stats.tx_no_mbuf += frames;
}

/*
 * One frame of [tx->seq, tx->seq + tx->len) with @hdr bytes of TCP header,
 * written from @tx or, when @tmpl is not NULL, copied from there (the
 * header of the frame before it in one segment cut in software) and
 * patched for its sequence number and flags; its checksum finished. The
 * header is left at *@tcp. NULL when it cannot be built (counted; the
 * reason in *@unbuffered when that is not NULL).
 */
static struct rte_mbuf *build_frame(struct tcp_stack *st, struct tcp_conn *c,
				    const struct tcp_4tuple *t, const struct tcp_tx *tx, size_t hdr,
				    const uint8_t *tmpl, uint8_t **tcp, bool *unbuffered)
{
	struct netif *nif = st->nif;
	enum lunar_cost_cat prev = lunar_cost_enter(LUNAR_COST_BUFFERS);
	bool offload = (nif->port->offloads & PORT_OFFLOAD_TX_L4_CKSUM) || tx->tso_mss;
	uint8_t *p = NULL;
	bool not_in_buffer = false;
	struct rte_mbuf *m = frame_attached(st, c, tx, hdr, &p);
	bool zc = m != NULL;

	if (!zc)
		m = frame_copied(st, c, tx, hdr, &p, &not_in_buffer);
	lunar_cost_leave(prev);
	if (!m) {
		count_unbuilt(st, not_in_buffer, 1);
		if (unbuffered)
			*unbuffered = not_in_buffer;
		return NULL;
	}
	if (zc)
		st->stats.zc_tx_bytes += tx->len;
	else /* one copy into the frame: memif and af_xdp (copy mode) copy again anyway */
		st->stats.copy_tx_bytes += tx->len;
	if (tmpl) {
		uint32_t seq = rte_cpu_to_be_32(tx->seq);

		memcpy(p, tmpl, hdr);
		memcpy(p + 4, &seq, sizeof(seq));
		p[13] = tx->flags;
		if (!offload && !zc)
			tcp_fill_csum(p, hdr + tx->len, t->laddr, t->raddr);
	} else {
		struct tcp_repr r = {.sport = t->lport,
				     .dport = t->rport,
				     .seq = tx->seq,
				     .ack = tx->ack,
				     .flags = tx->flags,
				     .window = tx->wnd,
				     .payload_len = tx->len};

		/* Offloaded or chained, the payload is summed apart from the header. */
		tcp_emit(p, hdr + (offload || zc ? 0 : tx->len), &r, &tx->opts, t->laddr, t->raddr,
			 !offload && !zc);
	}
	if (offload) {
		/* DPDK: the pseudo-header sum, without the length for TSO. */
		uint16_t ph = inet_csum_pseudo(t->laddr, t->raddr, IPPROTO_TCP,
					       tx->tso_mss ? 0 : (uint32_t)(hdr + tx->len));

		memcpy(p + 16, &ph, sizeof(ph));
		m->l4_len = (uint8_t)hdr;
		m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
		if (tx->tso_mss) {
			m->tso_segsz = tx->tso_mss;
			m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
		}
	} else if (zc) {
		/* Software checksum over the header buffer and the attached payload. */
		uint16_t ph =
		    inet_csum_pseudo(t->laddr, t->raddr, IPPROTO_TCP, (uint32_t)(hdr + tx->len));
		uint16_t raw, sum;

		memset(p + 16, 0, 2);
		raw = chain_csum_partial(m);
		sum = (uint16_t)~inet_csum_add(ph, raw);
		memcpy(p + 16, &sum, sizeof(sum));
	}
	/* frames: a TSO segment counts those the port cuts */
	st->stats.segs_out += tx->tso_mss ? (tx->len + tx->tso_mss - 1) / tx->tso_mss : 1;
	*tcp = p;
	return m;
}

/*
 * Frames on their way to the IPv4 layer, handed over together (one route
 * and neighbour lookup for a connection's burst) and in order.
 */
#define TX_BATCH 64

struct tx_batch {
	struct rte_mbuf *m[TX_BATCH];
	unsigned n;
	uint32_t raddr;
	uint8_t ecn;
};

static void batch_flush(struct tcp_stack *st, struct tx_batch *b)
{
	if (b->n)
		netif_ipv4_output_n(st->nif, b->m, b->n, b->raddr, IPPROTO_TCP, b->ecn);
	b->n = 0;
}

static void batch_add(struct tcp_stack *st, struct tx_batch *b, struct rte_mbuf *m, uint8_t ecn)
{
	if (b->n && (b->n == TX_BATCH || b->ecn != ecn))
		batch_flush(st, b);
	b->ecn = ecn;
	b->m[b->n++] = m;
}

/*
 * Frame one segment of @c (or a bare reply when @c is NULL) into @b.
 *
 * Software segmentation (GSO, as Linux does for devices without TSO): on a
 * port without TSO the core still sends segments of several MSSs
 * (cfg.gso), and they are cut here into MSS-sized frames that share one
 * header build and option layout, and one route and neighbour lookup.
 * The core's scoreboard keeps MSS-sized records either way, so SACK and
 * retransmission see the frames the peer sees. As a NIC cuts a TSO
 * segment: FIN and PSH on the last frame only, CWR on the first only.
 */
static void frame_segment(struct tcp_stack *st, struct tcp_conn *c, const struct tcp_4tuple *t,
			  const struct tcp_tx *tx, struct tx_batch *b)
{
	size_t hdr = tcp_hdr_len(&tx->opts);
	uint8_t tmpl[TCP_HDR_MAX_LEN], *p;
	struct rte_mbuf *m;
	struct tcp_tx f;

	if (!tx->tso_mss || (st->nif->port->offloads & PORT_OFFLOAD_TX_TSO)) {
		m = build_frame(st, c, t, tx, hdr, NULL, &p, NULL);
		if (!m)
			return;
		if (tx->tso_mss)
			st->stats.tso_segs++;
		batch_add(st, b, m, tx->ecn);
		return;
	}
	f = *tx;
	f.tso_mss = 0;
	for (uint32_t off = 0; off < tx->len; off += f.len) {
		f.seq = tx->seq + off;
		f.len = tx->len - off < tx->tso_mss ? tx->len - off : tx->tso_mss;
		f.flags = tx->flags;
		if (off + f.len < tx->len)
			f.flags &= (uint8_t) ~(RTE_TCP_FIN_FLAG | RTE_TCP_PSH_FLAG);
		if (off)
			f.flags &= (uint8_t)~RTE_TCP_CWR_FLAG;
		bool unbuffered;

		m = build_frame(st, c, t, &f, hdr, off ? tmpl : NULL, &p, &unbuffered);
		if (!m) {
			/* Counted once there; the frames after it too, under the same reason. */
			count_unbuilt(st, unbuffered,
				      (tx->len - off - f.len + tx->tso_mss - 1) / tx->tso_mss);
			return;
		}
		if (!off) {
			/* The frame may be sent (and freed) before the next is built. */
			memcpy(tmpl, p, hdr);
			st->stats.gso_segs++;
		}
		batch_add(st, b, m, tx->ecn);
	}
}

/* Build and send one segment of @c (or a bare reply when @c is NULL). */
static void send_segment(struct tcp_stack *st, struct tcp_conn *c, const struct tcp_4tuple *t,
			 const struct tcp_tx *tx)
{
	struct tx_batch b;
	uint8_t *p;

	if (!tx->tso_mss) { /* one frame (an ACK, a reply within the MSS): no batch */
		struct rte_mbuf *m =
		    build_frame(st, c, t, tx, tcp_hdr_len(&tx->opts), NULL, &p, NULL);

		if (m)
			netif_ipv4_output(st->nif, m, t->raddr, IPPROTO_TCP, tx->ecn);
		return;
	}
	b.n = 0; /* not the array: an initializer would clear it all */
	b.raddr = t->raddr;
	frame_segment(st, c, t, tx, &b);
	batch_flush(st, &b);
}

/* Send what the core queued for @s: one batch of frames for the IPv4 layer. */
static void flush_out(struct tcp_stack *st, struct tcp_sock *s)
{
	struct tx_batch b;

	if (!st->out.n)
		return;
	if (st->out.n == 1) {
		send_segment(st, &s->conn, &s->conn.tuple, &st->out.seg[0]);
		st->out.n = 0;
		return;
	}
	b.n = 0;
	b.raddr = s->conn.tuple.raddr;
	for (unsigned i = 0; i < st->out.n; i++)
		frame_segment(st, &s->conn, &s->conn.tuple, &st->out.seg[i], &b);
	batch_flush(st, &b);
	st->out.n = 0;
}

/* ---- socket life ---- */

static void queue_events(struct tcp_sock *s)
{
	struct tcp_stack *st = s->st;

	if (!s->conn.events || s->ev_queued || s->dead)
		return;
	s->ev_queued = true;
	s->ev_next = NULL;
	if (st->ev_tail)
		st->ev_tail->ev_next = s;
	else
		st->ev_head = s;
	st->ev_tail = s;
}

/* Fold what one connection counted (its own counters and HyStart++'s) into @x. */
static void add_conn_stats(struct tcp_stack_stats *x, const struct tcp_conn *conn)
{
	const struct tcp_conn_stats *c = &conn->stats;
	const struct tcp_hystart *h = &conn->cc.hs;

	x->retransmits += c->retransmits;
	x->timeouts += c->timeouts;
	x->zero_window_probes += c->zero_window_probes;
	x->orphans_dropped += c->orphans_dropped;
	x->fastpath_ack += c->fastpath_ack;
	x->fastpath_data += c->fastpath_data;
	x->acks_worked_later += c->acks_worked_later;
	x->slowpath += c->slowpath;
	x->out_of_window += c->out_of_window;
	x->ack_unsent += c->ack_unsent;
	x->ack_too_old += c->ack_too_old;
	x->paws_rejects += c->paws_rejects;
	x->challenge_acks += c->challenge_acks;
	x->challenge_acks_limited += c->challenge_acks_limited;
	x->ooo_refused += c->ooo_refused;
	x->ooo_full += c->ooo_full;
	x->beyond_window += c->beyond_window;
	x->ooo_pruned_bytes += c->ooo_pruned_bytes;
	x->rcv_mem_dropped += c->rcv_mem_dropped;
	x->rcvq_compacted += c->rcvq_compacted;
	x->rcvq_compacted_bytes += c->rcvq_compacted_bytes;
	x->fast_retransmits += c->fast_retransmits;
	x->dupacks += c->dupacks;
	x->sack_blocks += c->sack_blocks;
	x->sack_invalid += c->sack_invalid;
	x->dsacks += c->dsacks;
	x->dsacks_sent += c->dsacks_sent;
	x->rack_lost += c->rack_lost;
	x->recoveries += c->recoveries;
	x->tlp_probes += c->tlp_probes;
	x->tlp_recoveries += c->tlp_recoveries;
	x->recovery_probes += c->recovery_probes;
	x->sb_nomem += c->sb_nomem;
	x->spurious_rtos += c->spurious_rtos;
	x->frto_spurious += c->frto_spurious;
	x->spurious_recoveries += c->spurious_recoveries;
	x->ecn_ce += c->ecn_ce;
	x->ecn_ece += c->ecn_ece;
	x->ecn_cuts += c->ecn_cuts;
	x->ecn_syn_fallbacks += c->ecn_syn_fallbacks;
	x->cwnd_unused_cuts += c->cwnd_unused_cuts;
	x->pmtu_probes += c->pmtu_probes;
	x->pmtu_probes_ok += c->pmtu_probes_ok;
	x->pmtu_probes_lost += c->pmtu_probes_lost;
	x->hystart_css += h->css_entries;
	x->hystart_css_spurious += h->css_spurious;
	x->hystart_exits += h->exits;
}

/*
 * ---- limits (tcp_limits.h; the policy table is docs/LIMITS.md) ----
 *
 * Connections: a SYN finding the table full ends the oldest TIME-WAIT,
 * if any, or is dropped (as Linux drops it; the peer's SYN comes again);
 * connect() gets -ENOBUFS. Half-open: beyond max_half_open a SYN is
 * answered with a SYN cookie (RFC 4987 3.6), or dropped with cookies
 * off. TIME-WAIT: one more than max_time_wait ends the oldest one's early
 * (the newest keeps the full 2 MSL, when stray duplicates are likeliest).
 * Memory: every connection's send buffer, receive queue and out-of-order
 * bytes are charged to the stack after each operation on it; mem_max
 * feeds the same pressure levels as the packet pool (see "memory
 * pressure"), and sends stop at it. Nothing acknowledged is ever dropped:
 * refused payload was not acknowledged, pruned out-of-order data only
 * SACKed (RFC 2018 8), and send-buffer data is never given up.
 */

static void after(struct tcp_sock *s);
static void raise_path_mtu(struct tcp_stack *st, uint32_t dst, uint16_t mtu);
static void learn_path_mtu(struct tcp_stack *st, uint32_t dst, uint16_t mtu, uint64_t lifetime_ns);

/* Bytes @c holds against mem_max. */
static uint64_t conn_mem(const struct tcp_conn *c)
{
	return (uint64_t)c->snd.bytes + c->rcvq_bytes + c->app_held + tcp_reass_bytes(&c->reass);
}

/* Bring st->mem_bytes up to date with @s: O(1), after each operation on it. */
static void charge(struct tcp_sock *s)
{
	struct tcp_stack *st = s->st;
	uint64_t m = s->dead ? 0 : conn_mem(&s->conn);

	st->mem_bytes = st->mem_bytes - s->mem_charged + m;
	s->mem_charged = m;
}

/* The pressure mem_max alone puts on the stack: from 3/4 of it low, at it critical. */
static enum tcp_mem_pressure mem_level_at(const struct tcp_stack *st, uint64_t bytes)
{
	uint64_t max = st->lim.mem_max;

	if (!max || bytes < max - max / 4)
		return TCP_MEM_NORMAL;
	return bytes < max ? TCP_MEM_LOW : TCP_MEM_CRITICAL;
}

static enum tcp_mem_pressure mem_level(const struct tcp_stack *st)
{
	return mem_level_at(st, st->mem_bytes);
}

/*
 * The pressure for @c before a call that may keep payload or open its
 * window: the pool's (sampled) or mem_max's (exact), the higher. A
 * connection holding less than one MSS of received data is spared the
 * critical level, as Linux's tcp_rmem[0] guarantee: it still takes
 * in-order data, so applications that never read cannot stop every
 * other connection (mem_max may so be passed by an MSS per connection).
 */
static enum tcp_mem_pressure pressure_for(struct tcp_stack *st, const struct tcp_conn *c)
{
	enum tcp_mem_pressure m = mem_level(st);

	if (m == TCP_MEM_CRITICAL &&
	    c->rcvq_bytes + c->app_held + tcp_reass_bytes(&c->reass) < c->cfg.mss)
		m = TCP_MEM_LOW;
	if (m > st->mem_seen)
		st->mem_seen = m;
	return m > st->pool_pressure ? m : st->pool_pressure;
}

/* Send-buffer bytes mem_max still allows. */
static uint32_t mem_room(const struct tcp_stack *st)
{
	uint64_t max = st->lim.mem_max;

	if (!max)
		return UINT32_MAX;
	if (st->mem_bytes >= max)
		return 0;
	return max - st->mem_bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)(max - st->mem_bytes);
}

/* @s waits for mem_max to free room: wake_senders() gives it TCP_EV_WRITABLE. */
static void mark_blocked(struct tcp_sock *s)
{
	if (!s->snd_blocked) {
		s->snd_blocked = true;
		s->st->snd_blocked++;
	}
}

/* A send took less than asked: count which limit cut it. */
static void send_cut(struct tcp_sock *s)
{
	struct tcp_stack *st = s->st;

	if (s->dead)
		return; /* nothing will wake it: kill_sock() has settled its count */
	if (mem_room(st) < tcp_send_space(&s->conn)) {
		st->stats.snd_mem_limited++;
		mark_blocked(s);
	} else {
		st->stats.snd_buf_full++;
	}
}

/* Memory fell below 3/4 of mem_max: senders it cut may go on. */
static void wake_senders(struct tcp_stack *st)
{
	for (struct tcp_sock *s = st->all; s && st->snd_blocked; s = s->all_next) {
		if (!s->snd_blocked)
			continue;
		s->snd_blocked = false;
		st->snd_blocked--;
		s->conn.events |= TCP_EV_WRITABLE;
		if (s->fn)
			queue_events(s);
	}
}

/* @s left SYN-RECEIVED, or dies in it: one half-open connection fewer. */
static void half_open_end(struct tcp_sock *s)
{
	struct tcp_stack *st = s->st;

	s->half_open = false;
	st->half_open--;
	/* RFC 4987 2.2: a spoofed SYN's SYN-ACKs go unanswered until the timer gives up. */
	if (s->conn.state == TCP_CLOSED && s->conn.error == -ETIMEDOUT)
		st->stats.half_open_timeouts++;
}

static void table_unlist(struct tcp_sock *s)
{
	struct tcp_stack *st = s->st;

	if (s->in_table) {
		tcp_table_remove(st->table, &s->conn.tuple);
		s->in_table = false;
		st->in_table--;
	}
	if (st->last_rx == s)
		st->last_rx = NULL;
}

static void tw_unlink(struct tcp_sock *s)
{
	struct tcp_stack *st = s->st;

	if (s->tw_prev)
		s->tw_prev->tw_next = s->tw_next;
	else
		st->tw_head = s->tw_next;
	if (s->tw_next)
		s->tw_next->tw_prev = s->tw_prev;
	else
		st->tw_tail = s->tw_prev;
	s->tw_next = s->tw_prev = NULL;
	s->in_tw = false;
	st->time_wait--;
}

/*
 * End @s's TIME-WAIT now, as its timer would (RFC 9293 3.10.7.4 TIME-WAIT
 * timeout; ending it early risks RFC 1337's hazards, the price of the
 * limit), and give its table entry back even if the application still
 * owns the socket. The caller runs after() on it.
 */
static void tw_cut(struct tcp_sock *s)
{
	struct tcp_stack *st = s->st;

	if (s->in_tw)
		tw_unlink(s);
	s->conn.timewait_at = st->now;
	tcp_timer(&s->conn, st->now, &st->out); /* CLOSED; nothing to send */
	table_unlist(s);
}

/*
 * The ISS of a connection that takes over TIME-WAIT @s's 4-tuple (an RFC
 * 6191 reopen, or our own connect reusing it): above all the old one sent,
 * as RFC 1122 4.2.2.13 and Linux (its write_seq + 65535 + 2).
 */
static uint32_t tw_successor_iss(const struct tcp_sock *s)
{
	return s->conn.snd_max + 65535 + 2;
}

/* End the oldest TIME-WAIT (the caller counts why). @return false if there is none. */
static bool tw_end_oldest(struct tcp_stack *st)
{
	struct tcp_sock *old = st->tw_head;

	if (!old)
		return false;
	tw_cut(old);
	after(old);
	return true;
}

/* @s entered TIME-WAIT: list it, within max_time_wait. */
static void tw_enter(struct tcp_sock *s)
{
	struct tcp_stack *st = s->st;

	while (st->time_wait >= st->lim.max_time_wait && tw_end_oldest(st))
		st->stats.tw_overflow++;
	if (st->time_wait >= st->lim.max_time_wait) { /* max_time_wait 0 */
		st->stats.tw_overflow++;
		tw_cut(s);
		return;
	}
	s->in_tw = true;
	s->tw_next = NULL;
	s->tw_prev = st->tw_tail;
	if (st->tw_tail)
		st->tw_tail->tw_next = s;
	else
		st->tw_head = s;
	st->tw_tail = s;
	st->time_wait++;
}

/* What the limits count, after any operation on @s. */
static void limits_after(struct tcp_sock *s)
{
	enum tcp_state state = s->conn.state;

	charge(s);
	if (s->half_open && state != TCP_SYN_RECEIVED && state != TCP_LISTEN)
		half_open_end(s);
	if (s->in_tw && state != TCP_TIME_WAIT)
		tw_unlink(s);
	else if (!s->in_tw && state == TCP_TIME_WAIT)
		tw_enter(s);
}

/*
 * A limit lowered below what the table holds leaves it fuller than full:
 * ending one entry (a TIME-WAIT) would not make room for another.
 */
static bool table_overfull(const struct tcp_stack *st)
{
	return st->in_table > st->lim.max_conns;
}

/*
 * Room in the table for one more connection, ending the oldest TIME-WAIT
 * if need be: only if that makes room (table_overfull(): a TIME-WAIT
 * ended then would be cut short for nothing).
 */
static bool conn_room(struct tcp_stack *st)
{
	if (st->in_table < st->lim.max_conns)
		return true;
	if (table_overfull(st) || !tw_end_oldest(st))
		return false;
	st->stats.tw_recycled++;
	return true;
}

static void kill_sock(struct tcp_sock *s)
{
	struct tcp_stack *st = s->st;

	if (s->dead)
		return;
	s->dead = true;
	tw_cancel(&st->timers, &s->timer);
	if (s->resched_listed) { /* free_dead() may free it before tcp_stack_after_tx() */
		s->resched_listed = false;
		if (s->resched_prev)
			s->resched_prev->resched_next = s->resched_next;
		else
			st->resched_head = s->resched_next;
		if (s->resched_next)
			s->resched_next->resched_prev = s->resched_prev;
	}
	table_unlist(s);
	charge(s); /* to 0: what it holds goes with it */
	if (s->half_open)
		half_open_end(s);
	if (s->in_tw)
		tw_unlink(s);
	if (s->snd_blocked) {
		s->snd_blocked = false;
		st->snd_blocked--;
	}
	if (s->listener && s->listener->pending)
		s->listener->pending--;
	add_conn_stats(&st->stats, &s->conn);
	if (s->all_prev)
		s->all_prev->all_next = s->all_next;
	else
		st->all = s->all_next;
	if (s->all_next)
		s->all_next->all_prev = s->all_prev;
	st->stats.conns_closed++;
	st->stats.conns_active--;
	s->dead_next = st->dead;
	st->dead = s; /* freed after event dispatch: a callback may still hold it */
}

/* After any operation on @s: send its segments, re-arm its timer, queue its events. */
static void after(struct tcp_sock *s)
{
	struct tcp_stack *st = s->st;
	struct tcp_conn *c = &s->conn;

	flush_out(st, s);
	/* A black hole (tcp_blackhole()): the peer's other connections too. */
	if (c->pmtu_guessed) {
		c->pmtu_guessed = false;
		st->stats.pmtu_blackholes++;
		learn_path_mtu(st, c->tuple.raddr, c->path_mtu, c->cfg.blackhole_hold_ns);
	}
	if (c->pmtu_probed) { /* a probe got through (tcp_icmp.h): the cache and the others too */
		c->pmtu_probed = false;
		raise_path_mtu(st, c->tuple.raddr, c->path_mtu);
	}
	limits_after(s);
	if (c->state == TCP_CLOSED) {
		if (s->app_closed || !s->app_owned) {
			kill_sock(s);
			return;
		}
		/*
		 * Gone, but the application has not let go yet: its 4-tuple is
		 * free now, or the peer connecting again from the same port
		 * would find it (and a RST) instead of the listener.
		 */
		table_unlist(s);
	}
	/*
	 * A connection in this receive burst comes back here from burst_end()
	 * in this same poll: its timers are filed once, then, rather than
	 * after each of its segments and each call its callbacks make.
	 */
	if (!s->burst_listed)
		resched_soon(s);
	/* A passive connection becomes acceptable once established. */
	if (s->listener && !s->app_owned && (c->events & TCP_EV_CONNECTED)) {
		struct tcp_listener *l = s->listener;

		c->events &= ~TCP_EV_CONNECTED;
		s->ready_next = NULL;
		if (l->ready_tail)
			l->ready_tail->ready_next = s;
		else
			l->ready_head = s;
		l->ready_tail = s;
		l->ready++;
		s->app_owned = true; /* owned by the accept queue until accepted */
		if (l->fn)
			l->fn(l, l->ctx);
	}
	if (s->fn)
		queue_events(s);
}

/*
 * The core's receive queue compaction (tcp_deliver()) copies small
 * segments into a packet buffer of the port's pool: one buffer for many
 * segments where each would have pinned its own, and counted in the pool's
 * pressure levels like every other received byte. NULL where the pool is
 * not Zbuf memory (tests' plain pools): the segments then stay as they came.
 */
static uint8_t *rx_buf_alloc(void *ctx, uint32_t *room)
{
	struct tcp_stack *st = ctx;

	return zbuf_pktbuf_alloc(st->nif->port->pool, room);
}

static struct tcp_sock *new_sock_iss(struct tcp_stack *st, const struct tcp_4tuple *t, uint32_t iss)
{
	struct tcp_sock *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->st = st;
	tw_entry_init(&s->timer);
	if (tcp_conn_init(&s->conn, &st->cfg, t, iss, st->now) ||
	    tcp_table_insert(st->table, t, s)) {
		free(s);
		return NULL;
	}
	s->conn.user = s;
	s->conn.rx_alloc = rx_buf_alloc;
	s->conn.rx_alloc_ctx = st;
	s->conn.path_mtu = pmtu_get(&st->pmtu, t->raddr, st->now); /* the handshake applies it */
	if (s->conn.path_mtu)
		st->stats.pmtu_conns_started++;
	s->in_table = true;
	st->in_table++;
	s->all_next = st->all;
	if (st->all)
		st->all->all_prev = s;
	st->all = s;
	st->sockets++;
	st->stats.conns_opened++;
	st->stats.conns_active++;
	return s;
}

static struct tcp_sock *new_sock(struct tcp_stack *st, const struct tcp_4tuple *t)
{
	return new_sock_iss(st, t, tcp_isn(st->table, t, st->now));
}

/*
 * The sockets killed in this poll go, except those still on the event
 * queue (dispatch() handles at most 1024 a poll and leaves the rest
 * queued; kill_sock() does not unlink them): they wait until dispatch()
 * has taken them off, or the queue would point into freed memory.
 */
static void free_dead(struct tcp_stack *st)
{
	struct tcp_sock *keep = NULL;

	while (st->dead) {
		struct tcp_sock *s = st->dead;

		st->dead = s->dead_next;
		if (s->ev_queued) {
			s->dead_next = keep;
			keep = s;
			continue;
		}
		tcp_conn_fini(&s->conn);
		free(s);
		st->sockets--;
	}
	st->dead = keep;
}

/*
 * inline-r2c (LUNA §5.1, Fig. 5b): the application's callback runs in
 * place, as the burst is processed, and what it sends goes into this
 * iteration's transmit batch with its headers. No event queue. A run of
 * segments of one connection in a burst is one delivery, as a NIC's
 * receive offload (LRO) would have merged them: the callback runs when
 * the next TCP segment is another connection's, an ICMP error is handled
 * for an inline socket, or the burst ends (inline_flush()), and finds
 * every segment of the run readable. The callback is never re-entered:
 * events its own calls cause wait for the next delivery or the batch
 * dispatch.
 */
static void deliver_inline(struct tcp_sock *s)
{
	uint32_t ev = s->conn.events;

	if (!ev || !s->fn || s->dead || s->in_callback)
		return;
	s->conn.events = 0; /* the queued entry, if any, finds nothing left */
	s->in_callback = true;
	{
		enum lunar_cost_cat prev = lunar_cost_enter(LUNAR_COST_APP);

		s->st->stats.inline_calls++;
		s->fn(s, ev, s->ctx);
		lunar_cost_leave(prev);
	}
	s->in_callback = false;
}

static bool same_tuple(const struct tcp_4tuple *a, const struct tcp_4tuple *b)
{
	return a->laddr == b->laddr && a->raddr == b->raddr && a->lport == b->lport &&
	       a->rport == b->rport;
}

/*
 * The run of segments waiting for its callback is over: deliver it, unless
 * the connection left inline mode meanwhile (an application callback in
 * the burst turned it off): then its events wait for the batch dispatch,
 * where after() queued them.
 */
static void inline_flush(struct tcp_stack *st)
{
	struct tcp_sock *s = st->inline_next;

	if (s) {
		st->inline_next = NULL;
		if (s->inline_mode)
			deliver_inline(s);
	}
}

/* ---- input from the interface ---- */

/* The listener a segment for no connection is for: its port's, and addressed to us. */
static struct tcp_listener *local_listener(struct tcp_stack *st, const struct ipv4_repr *ir,
					   const struct tcp_repr *tr)
{
	struct tcp_listener *l = tcp_table_listener(st->table, tr->dport);

	return l && ir->dst == st->nif->ip ? l : NULL;
}

/*
 * SYN cookies (RFC 4987 3.6). A SYN beyond the backlog is answered as a
 * fresh connection would answer it, with the cookie as ISN, by a
 * connection that exists only for this call.
 */
static void send_cookie(struct tcp_stack *st, const struct tcp_4tuple *t,
			const struct tcp_repr *syn)
{
	struct tcp_conn tmp;

	if (tcp_conn_init(&tmp, &st->cfg, t, tcp_syncookie_make(st->cookie_key, t, syn, st->now),
			  st->now))
		return;
	tcp_listen(&tmp);
	tcp_input(&tmp, syn, st->now, &st->out);
	for (unsigned i = 0; i < st->out.n; i++)
		send_segment(st, &tmp, t, &st->out.seg[i]);
	st->out.n = 0;
	tcp_conn_fini(&tmp);
	st->stats.syncookies_sent++;
	st->cookie_sent_ns = st->now;
	if (st->cookie_hook &&
	    (!st->cookie_hook_ns || st->now - st->cookie_hook_ns >= TCP_COOKIE_HOOK_NS)) {
		st->cookie_hook_ns = st->now;
		st->cookie_hook(st->cookie_hook_arg);
	}
}

void tcp_stack_set_cookie_hook(struct tcp_stack *st, tcp_cookie_hook_fn fn, void *arg)
{
	st->cookie_hook = fn;
	st->cookie_hook_arg = arg;
	st->cookie_hook_ns = 0;
}

int tcp_stack_cookie_template(struct tcp_stack *st, struct tcp_cookie_template *out)
{
	/* A SYN offering everything, as send_cookie() would answer it. */
	const struct tcp_4tuple t = {.laddr = st->nif->ip, .raddr = 1, .lport = 1, .rport = 1};
	const struct tcp_repr syn = {
	    .sport = 1,
	    .dport = 1,
	    .window = 65535,
	    .flags = RTE_TCP_SYN_FLAG | RTE_TCP_ECE_FLAG | RTE_TCP_CWR_FLAG,
	    .opts = {.has_mss = true,
		     .mss = 1460,
		     .has_wscale = true,
		     .wscale = 7,
		     .sack_permitted = true,
		     .has_ts = true,
		     .ts_val = 1},
	};
	struct tcp_out o = {.n = 0};
	struct tcp_conn tmp;
	const struct tcp_tx *tx = &o.seg[0];

	memset(out, 0, sizeof(*out));
	if (tcp_conn_init(&tmp, &st->cfg, &t, 0, st->now))
		return -ENOMEM;
	tcp_listen(&tmp);
	tcp_input(&tmp, &syn, st->now, &o);
	tcp_conn_fini(&tmp);
	memcpy(out->key, st->cookie_key, sizeof(out->key));
	out->laddr = st->nif->ip;
	out->ttl = NETIF_IP_TTL;
	out->mss = tx->opts.mss;
	out->window = tx->wnd;
	out->ws = tx->opts.has_wscale;
	out->wscale = tx->opts.wscale;
	out->sack = tx->opts.sack_permitted;
	out->ts = tx->opts.has_ts;
	out->ecn = tx->flags & RTE_TCP_ECE_FLAG;
	return 0;
}

/* Were cookies sent recently enough for an ACK to carry a valid one? */
static bool cookies_live(const struct tcp_stack *st)
{
	return st->cookie_sent_ns && st->now - st->cookie_sent_ns < 2ull
									<< TCP_SYNCOOKIE_SLOT_SHIFT;
}

enum cookie_verdict { COOKIE_BAD, COOKIE_NO_ROOM, COOKIE_OK };

/*
 * An ACK for no connection, to listener @l: the end of a handshake we
 * answered with a cookie? Then the connection is made as if the SYN had
 * been kept, and *@out is it, in SYN-RECEIVED, for the ACK to complete.
 */
static enum cookie_verdict cookie_conn(struct tcp_stack *st, struct tcp_listener *l,
				       const struct tcp_4tuple *t, const struct tcp_repr *ack,
				       struct tcp_sock **out)
{
	struct tcp_syncookie_opts o;
	struct tcp_repr syn;
	struct tcp_sock *s;

	if (!tcp_syncookie_check(st->cookie_key, t, ack, st->now, &o)) {
		st->stats.syncookies_bad++;
		return COOKIE_BAD;
	}
	if (l->ready >= l->backlog || !conn_room(st) || !(s = new_sock_iss(st, t, ack->ack - 1))) {
		st->stats.syncookies_no_room++; /* the peer's data will be retransmitted */
		return COOKIE_NO_ROOM;
	}
	memset(&syn, 0, sizeof(syn));
	syn.sport = ack->sport;
	syn.dport = ack->dport;
	syn.seq = ack->seq - 1;
	syn.flags = RTE_TCP_SYN_FLAG;
	if (o.ecn_setup)
		syn.flags |= RTE_TCP_ECE_FLAG | RTE_TCP_CWR_FLAG;
	syn.window = ack->window; /* replaced by the ACK's own, scaled */
	syn.opts.has_mss = true;
	syn.opts.mss = o.mss;
	syn.opts.has_wscale = o.has_wscale;
	syn.opts.wscale = o.wscale;
	syn.opts.sack_permitted = o.sack_permitted;
	/* Timestamps after the SYNs mean both SYNs had them (RFC 7323 3.2). */
	syn.opts.has_ts = ack->opts.has_ts;
	syn.opts.ts_val = ack->opts.ts_val;
	s->listener = l;
	l->pending++;
	tcp_listen(&s->conn);
	tcp_conn_from_cookie(&s->conn, &syn, st->now);
	st->stats.syncookies_ok++;
	*out = s;
	return COOKIE_OK;
}

/*
 * A SYN for listener @l: the connection in LISTEN, to take it. NULL when
 * the backlog or max_half_open is reached (a SYN cookie answers it, or
 * with cookies off it is dropped) or the table is full (dropped): @m is
 * consumed then, and the reason counted. @iss: the ISS to take (a SYN
 * over a TIME-WAIT), or NULL for a fresh one.
 */
/*
 * What leaves no room for a SYN's socket on @l: its accept queue
 * (TCP_BACKLOG_FULL) or the stack's half-open limit (TCP_HALF_OPEN_LIMIT);
 * LUNAR_DROP_NONE when there is room.
 */
static enum lunar_drop passive_full(const struct tcp_stack *st, const struct tcp_listener *l)
{
	if (l->pending >= l->backlog)
		return LUNAR_DROP_TCP_BACKLOG_FULL;
	if (st->half_open >= st->lim.max_half_open)
		return LUNAR_DROP_TCP_HALF_OPEN_LIMIT;
	return LUNAR_DROP_NONE;
}

static struct tcp_sock *passive_open(struct tcp_stack *st, struct tcp_listener *l,
				     const struct tcp_4tuple *t, const struct tcp_repr *syn,
				     struct rte_mbuf *m, const uint32_t *iss)
{
	enum lunar_drop full = passive_full(st, l);
	struct tcp_sock *s;

	if (full) {
		if (st->cfg.syncookies) { /* RFC 4987 3.6: no state until the ACK */
			st->stats.syncookies_half_open += full == LUNAR_DROP_TCP_HALF_OPEN_LIMIT;
			send_cookie(st, t, syn);
			rte_pktmbuf_free(m);
		} else { /* drop the SYN, the peer retries (as Linux does) */
			if (full == LUNAR_DROP_TCP_BACKLOG_FULL)
				st->stats.syn_dropped_backlog++;
			else
				st->stats.syn_dropped_half_open++;
			netif_drop(st->nif, m, full);
		}
		return NULL;
	}
	if (!conn_room(st) || !(s = iss ? new_sock_iss(st, t, *iss) : new_sock(st, t))) {
		st->stats.syn_dropped_conns++; /* as Linux: no RST, the SYN comes again */
		netif_drop(st->nif, m, LUNAR_DROP_TCP_CONN_LIMIT);
		return NULL;
	}
	s->listener = l;
	l->pending++;
	s->half_open = true;
	st->half_open++;
	tcp_listen(&s->conn);
	return s;
}

/*
 * A received frame TCP is done with (what the connection keeps of it, it
 * referenced itself): freed, or after the transmit (tcp_stack_defer_to_tx()).
 */
static void rx_done(struct tcp_stack *st, struct rte_mbuf *m)
{
	if (st->defer_to_tx && st->rx_done_n < RX_DONE_MAX) {
		st->rx_done[st->rx_done_n++] = m;
	} else {
		enum lunar_cost_cat prev = lunar_cost_enter(LUNAR_COST_BUFFERS);

		rte_pktmbuf_free(m);
		lunar_cost_leave(prev);
	}
}

/* What input_begin() noted for input_end(). */
struct conn_input {
	bool capped; /* by mem_max, not the pool */
	uint64_t refused;
};

/* Before segments go to @s's TCP: its memory pressure, its output held for the burst's end. */
static void input_begin(struct tcp_stack *st, struct tcp_sock *s, struct conn_input *in)
{
	s->conn.mem_pressure = pressure_for(st, &s->conn);
	in->capped = s->conn.mem_pressure > st->pool_pressure;
	in->refused = in->capped ? s->conn.stats.rcv_mem_dropped + s->conn.stats.ooo_refused : 0;
	/* What these segments and the callbacks they cause send goes at the burst's end. */
	s->conn.hold_output = true;
	/* An ACK's bookkeeping may wait for tcp_stack_after_tx(), which lists every burst's
	 * connection. */
	s->conn.ack_defer = st->defer_to_tx;
	if (!s->burst_listed) {
		s->burst_listed = true;
		s->burst_next = st->burst_head;
		st->burst_head = s;
	}
}

/* After: what mem_max refused counted, a closed application's data reset, after(). */
static void input_end(struct tcp_stack *st, struct tcp_sock *s, const struct conn_input *in)
{
	if (in->capped)
		st->stats.rcv_mem_limited +=
		    s->conn.stats.rcv_mem_dropped + s->conn.stats.ooo_refused - in->refused;
	/*
	 * RFC 1122 4.2.2.13: data for an application that has closed: reset.
	 * What this input queued goes too: its payload lives in the send
	 * buffer the abort releases.
	 */
	if (s->app_closed && tcp_recv_bytes(&s->conn) && s->conn.state != TCP_CLOSED) {
		st->out.n = 0;
		tcp_abort(&s->conn, st->now, &st->out);
	}
	after(s);
	if (s->inline_mode && !s->dead)
		st->inline_next = s; /* delivered at the end of its run */
}

/* The flow plan gives @t to another worker (LUNA §7.4): never half-handle it here. */
static bool foreign(const struct tcp_stack *st, const struct tcp_4tuple *t)
{
	return st->plan.n_queues > 1 && !flow_plan_owns(&st->plan, st->worker, t->lport, t->rport);
}

/*
 * The connection of a segment for @t (NULL: none). Another connection's
 * segment ends the run waiting for its callback, which goes first: what it
 * does (a connection it closes or opens) decides what this segment finds.
 */
static struct tcp_sock *sock_for(struct tcp_stack *st, const struct tcp_4tuple *t)
{
	struct tcp_sock *s;

	if (st->inline_next && !same_tuple(&st->inline_next->conn.tuple, t))
		inline_flush(st);
	s = st->last_rx;
	if (!s || !same_tuple(&s->conn.tuple, t))
		s = st->last_rx = tcp_table_lookup(st->table, t);
	return s;
}

/* The flags that say what a segment opens or ends: SYN, ACK and RST. */
static uint8_t open_flags(const struct tcp_repr *tr)
{
	return tr->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG);
}

/*
 * RFC 6191, as Linux: a SYN for a connection in TIME-WAIT that is provably
 * of a new incarnation (PAWS passes, and its sequence number is beyond
 * RCV.NXT or its TSval newer than TS.Recent) may open it again at once,
 * instead of drawing a challenge ACK and waiting out 2 MSL (a client
 * reusing its port after the server closed first).
 */
static bool tw_syn_new(const struct tcp_conn *c, const struct tcp_repr *tr)
{
	bool ts = c->ts_ok && tr->opts.has_ts;

	if (open_flags(tr) != RTE_TCP_SYN_FLAG)
		return false;
	if (ts && seq_lt(tr->opts.ts_val, c->ts_recent))
		return false;
	return seq_gt(tr->seq, c->rcv_nxt) || (ts && seq_gt(tr->opts.ts_val, c->ts_recent));
}

/* One segment through the stack to its connection (or listener, or a RST). */
static void segment_input(struct tcp_stack *st, const struct ipv4_repr *ir,
			  const struct tcp_repr *tr, struct rte_mbuf *m)
{
	struct tcp_4tuple t = {
	    .laddr = ir->dst, .raddr = ir->src, .lport = tr->dport, .rport = tr->sport};
	struct tcp_sock *s;
	struct conn_input in;
	bool bad_cookie;
	uint32_t reopen_iss;
	struct tcp_listener *reopen_l;
	const uint32_t *iss = NULL;

	s = sock_for(st, &t);
	st->now = st->nif->now_ns;
	st->stats.segs_in++;
	if (foreign(st, &t)) {
		/* The steering sent another worker's segment here: never half-handle it. */
		st->stats.foreign++;
		netif_drop(st->nif, m, LUNAR_DROP_TCP_FOREIGN_QUEUE);
		return;
	}
	/*
	 * A half-open connection whose peer completed another handshake: the
	 * XDP responder, which cannot see this connection, answered the peer's
	 * SYN sent again with a cookie, and the peer's ACK acknowledges that
	 * (ACK = cookie + 1, SEQ = IRS + 1). Resetting it (RFC 9293's answer to
	 * an unacceptable ACK in SYN-RECEIVED) would kill a good connection:
	 * the cookie's connection takes this one's place.
	 */
	if (s && s->conn.state == TCP_SYN_RECEIVED && s->listener && !s->app_owned &&
	    open_flags(tr) == RTE_TCP_ACK_FLAG && tr->ack != s->conn.iss + 1 &&
	    tr->seq == s->conn.irs + 1) {
		struct tcp_syncookie_opts o;
		struct tcp_listener *l = s->listener;

		if (tcp_syncookie_check(st->cookie_key, &t, tr, st->now, &o)) {
			kill_sock(s); /* not the application's yet: gone, without a word */
			s = NULL;
			if (cookie_conn(st, l, &t, tr, &s) != COOKIE_OK) {
				netif_drop(st->nif, m, LUNAR_DROP_TCP_COOKIE_NO_ROOM);
				return;
			}
			st->stats.syncookies_adopted++;
		}
	}
	if (s && s->conn.state == TCP_TIME_WAIT && tw_syn_new(&s->conn, tr) &&
	    (reopen_l = local_listener(st, ir, tr))) {
		/*
		 * No room for the new connection (the accept queue, the
		 * half-open limit, or a table limit lowered below what it
		 * holds, so that this entry's place would not do): the
		 * TIME-WAIT stays and the SYN is dropped for the peer to send
		 * again. Cut first, the SYN would get a cookie (an ISN not
		 * above the old one's) or nothing, and the old connection's
		 * guard would be gone.
		 */
		enum lunar_drop full = passive_full(st, reopen_l);

		if (!full && table_overfull(st))
			full = LUNAR_DROP_TCP_CONN_LIMIT;
		if (full) {
			st->stats.tw_reopen_deferred++;
			netif_drop(st->nif, m, full);
			return;
		}
		reopen_iss = tw_successor_iss(s);
		iss = &reopen_iss;
		st->stats.tw_reopened++;
		tw_cut(s);
		after(s);
		s = NULL;
	}
	if (!s && open_flags(tr) == RTE_TCP_SYN_FLAG) {
		struct tcp_listener *l = local_listener(st, ir, tr);

		if (l && !(s = passive_open(st, l, &t, tr, m, iss)))
			return; /* answered with a cookie, or dropped */
	}
	bad_cookie = false;
	if (!s && open_flags(tr) == RTE_TCP_ACK_FLAG && cookies_live(st)) {
		struct tcp_listener *l = local_listener(st, ir, tr);

		if (l) {
			enum cookie_verdict v = cookie_conn(st, l, &t, tr, &s);

			if (v == COOKIE_NO_ROOM) {
				netif_drop(st->nif, m, LUNAR_DROP_TCP_COOKIE_NO_ROOM);
				return;
			}
			bad_cookie = v == COOKIE_BAD;
		}
	}
	if (!s) {
		struct tcp_tx rst;

		/* RFC 9293 3.10.7.1: no connection, no listener: answer with a RST. */
		if (tcp_reset_for(tr, &rst)) {
			st->stats.rst_sent++;
			send_segment(st, NULL, &t, &rst);
		}
		netif_drop(st->nif, m,
			   bad_cookie ? LUNAR_DROP_TCP_BAD_COOKIE : LUNAR_DROP_TCP_NO_LISTENER);
		return;
	}
	input_begin(st, s, &in);
	tcp_input(&s->conn, tr, st->now, &st->out);
	rx_done(st, m);
	input_end(st, s, &in);
}

/* ---- software GRO ---- */

/* A segment that may be in a train: data, flags ACK (PSH allowed), no SYN-time options or SACK. */
static bool gro_candidate(const struct tcp_repr *tr)
{
	return (tr->flags & ~RTE_TCP_PSH_FLAG) == RTE_TCP_ACK_FLAG && tr->payload_len &&
	       !tr->opts.sack_count && !tr->opts.has_mss && !tr->opts.has_wscale &&
	       !tr->opts.sack_permitted;
}

/* @tr (a candidate) continues the train: same connection, next in sequence, same header. */
static bool gro_continues(const struct gro_train *g, const struct ipv4_repr *ir,
			  const struct tcp_repr *tr)
{
	const struct tcp_repr *h = &g->head;

	return g->n < GRO_MAX && !(g->last_flags & RTE_TCP_PSH_FLAG) && tr->seq == g->next_seq &&
	       ir->src == g->ir.src && ir->dst == g->ir.dst && tr->sport == h->sport &&
	       tr->dport == h->dport && tr->ack == h->ack && tr->window == h->window &&
	       tr->ecn == h->ecn && tr->opts.has_ts == h->opts.has_ts &&
	       (!h->opts.has_ts ||
		(tr->opts.ts_val == h->opts.ts_val && tr->opts.ts_ecr == h->opts.ts_ecr));
}

static void gro_add(struct gro_train *g, const struct tcp_repr *tr, struct rte_mbuf *m)
{
	g->pc[g->n].data = tr->payload;
	g->pc[g->n].len = (uint32_t)tr->payload_len;
	g->m[g->n++] = m;
	g->last_flags = tr->flags;
	g->next_seq = tr->seq + (uint32_t)tr->payload_len;
}

/*
 * A train of two or more to its connection, if it has one and header
 * prediction takes the train (what segment_input() does for one segment,
 * once). @return the segments taken, from the first; 0: none.
 */
static unsigned train_input(struct tcp_stack *st, const struct gro_train *g, unsigned n)
{
	const struct tcp_repr *h = &g->head;
	struct tcp_4tuple t = {
	    .laddr = g->ir.dst, .raddr = g->ir.src, .lport = h->dport, .rport = h->sport};
	struct tcp_sock *s;
	struct conn_input in;
	unsigned taken;

	s = sock_for(st, &t);
	/*
	 * Near mem_max one segment can change the pressure the next meets
	 * (pressure_for() is asked once a train): one by one there.
	 */
	if (mem_level_at(st, st->mem_bytes + (g->next_seq - h->seq)) != TCP_MEM_NORMAL)
		return 0;
	if (!s || s->conn.state != TCP_ESTABLISHED || foreign(st, &t))
		return 0; /* one by one: a RST, a foreign drop, or the full path */
	st->now = st->nif->now_ns;
	input_begin(st, s, &in);
	taken = tcp_input_train(&s->conn, h, g->pc, n, st->now, &st->out);
	if (!taken) {
		input_end(st, s, &in); /* nothing was taken: it only pairs input_begin() */
		return 0;
	}
	st->stats.segs_in += taken;
	if (taken > 1) {
		st->stats.gro_trains++;
		st->stats.gro_segs += taken;
	}
	for (unsigned i = 0; i < taken; i++)
		rx_done(st, g->m[i]);
	input_end(st, s, &in);
	return taken;
}

/* The train held, to TCP: whole if it takes it, else (the rest) one segment at a time. */
static void gro_flush(struct tcp_stack *st)
{
	struct gro_train *g = &st->gro;
	unsigned n = g->n, taken = 0;
	uint32_t seq = g->head.seq;

	g->n = 0;
	if (n > 1)
		taken = train_input(st, g, n);
	for (unsigned i = 0; i < n; i++) {
		if (i >= taken) {
			struct tcp_repr tr = g->head;

			tr.seq = seq;
			tr.payload = g->pc[i].data;
			tr.payload_len = g->pc[i].len;
			tr.flags = i + 1 == n ? g->last_flags : g->head.flags;
			segment_input(st, &g->ir, &tr, g->m[i]);
		}
		seq += g->pc[i].len;
	}
}

/*
 * netif's TCP input. A data segment that may start a train is held
 * (software GRO, cfg.gro); the next segment either joins it or ends it,
 * as do an ICMP error, a PSH (joining) and the burst's end (stack_burst()),
 * so segments reach TCP in the order they came.
 */
static void stack_input(void *ctx, const struct ipv4_repr *ir, const struct tcp_repr *tr,
			struct rte_mbuf *m)
{
	struct tcp_stack *st = ctx;
	struct gro_train *g = &st->gro;

	if (g->n) {
		if (gro_candidate(tr) && gro_continues(g, ir, tr)) {
			gro_add(g, tr, m);
			if (tr->flags & RTE_TCP_PSH_FLAG)
				gro_flush(st); /* nothing follows a PSH */
			return;
		}
		gro_flush(st);
	}
	if (st->cfg.gro && gro_candidate(tr) && !(tr->flags & RTE_TCP_PSH_FLAG)) {
		g->ir = *ir;
		g->head = *tr;
		gro_add(g, tr, m);
		return;
	}
	segment_input(st, ir, tr, m);
}

/* netif_input()'s burst is over: the train it left goes to TCP. */
static void stack_burst(void *ctx)
{
	struct tcp_stack *st = ctx;

	if (st->gro.n)
		gro_flush(st);
}

/* ---- path MTU (net/pmtu.h) ---- */

/*
 * Hand @s the path MTU @mtu (0: the interface's again), counted. What it
 * has in flight may go again, smaller.
 */
static void give_path_mtu(struct tcp_sock *s, uint16_t mtu)
{
	struct tcp_stack *st = s->st;
	uint16_t was = s->conn.snd_mss;

	if (!tcp_path_mtu(&s->conn, mtu, st->now, &st->out))
		return;
	if (s->conn.snd_mss < was)
		st->stats.pmtu_conns_lowered++;
	else
		st->stats.pmtu_conns_raised++;
	after(s);
}

/* A path MTU as a bound: 0, the interface's, above any other. */
static uint32_t mtu_bound(uint16_t mtu)
{
	return mtu ? mtu : UINT32_MAX;
}

/*
 * The path to @dst takes @mtu (0: the interface's): every open connection
 * to it follows (RFC 1191 5: the path MTU is a property of the path, not
 * of the connection that learned it; Linux keeps it in the route), the
 * way the news goes: @up (a probe got through) raises those below it, else
 * those above it are lowered; a connection that already knows a lower one
 * keeps it. O(connections), once per MTU learned or raised.
 */
static void path_mtu_to_conns(struct tcp_stack *st, uint32_t dst, uint16_t mtu, bool up)
{
	for (struct tcp_sock *s = st->all, *next; s; s = next) {
		uint32_t known = mtu_bound(s->conn.path_mtu), want = mtu_bound(mtu);

		next = s->all_next;
		if (s->conn.tuple.raddr == dst && (up ? known < want : known > want))
			give_path_mtu(s, mtu);
	}
}

/*
 * The cache forgot destinations (expired, RFC 1191 6.3, or evicted): their
 * connections try the interface's MTU again. One walk for all of them.
 */
static void path_mtu_forgotten(struct tcp_stack *st)
{
	for (struct tcp_sock *s = st->all, *next; s; s = next) {
		next = s->all_next;
		if (s->conn.path_mtu && !pmtu_get(&st->pmtu, s->conn.tuple.raddr, st->now))
			give_path_mtu(s, 0);
	}
}

/*
 * A probe showed the path to @dst takes @mtu (0: the interface's MTU):
 * the cache's entry goes up, and the peer's connections below it with it.
 */
static void raise_path_mtu(struct tcp_stack *st, uint32_t dst, uint16_t mtu)
{
	if (pmtu_raise(&st->pmtu, dst, mtu))
		path_mtu_to_conns(st, dst, mtu, true);
}

/* Entries past their lifetime forgotten, and their connections told. */
static void expire_path_mtus(struct tcp_stack *st)
{
	if (pmtu_expire(&st->pmtu, st->now)) /* one comparison unless one is due */
		path_mtu_forgotten(st);
}

/*
 * A path MTU a connection believed: into the cache for @lifetime_ns (0:
 * the cache's), and to the peer's other connections.
 */
static void learn_path_mtu(struct tcp_stack *st, uint32_t dst, uint16_t mtu, uint64_t lifetime_ns)
{
	uint32_t evicted;

	if (pmtu_learn(&st->pmtu, dst, mtu, st->now, lifetime_ns, &evicted))
		path_mtu_to_conns(st, dst, mtu, false);
	if (evicted)
		path_mtu_forgotten(st);
}

/*
 * An ICMP error quoting one of our segments (netif's tcp_icmp_fn): the
 * quoted source is us, so the quoted tuple read backwards is the
 * connection's. tcp_icmp_error() decides what it is worth.
 */
static enum lunar_drop stack_icmp(void *ctx, const struct icmp_quote *q)
{
	struct tcp_stack *st = ctx;
	struct tcp_4tuple t = {
	    .laddr = q->src, .raddr = q->dst, .lport = q->sport, .rport = q->dport};
	struct tcp_sock *s;
	uint16_t path_mtu, floored;

	stack_burst(st); /* the segments before it go first */
	st->now = st->nif->now_ns;
	expire_path_mtus(st); /* none is taken again past its lifetime */
	if (foreign(st, &t)) {
		st->stats.foreign++;
		return LUNAR_DROP_TCP_FOREIGN_QUEUE;
	}
	s = tcp_table_lookup(st->table, &t);
	if (!s) {
		st->stats.icmp_no_conn++;
		return LUNAR_DROP_TCP_ICMP_NO_CONN;
	}
	switch (tcp_icmp_error(&s->conn, q, st->now, &st->out)) {
	case TCP_ICMP_OUT_OF_WINDOW:
		st->stats.icmp_out_of_window++;
		return LUNAR_DROP_TCP_ICMP_OUT_OF_WINDOW;
	case TCP_ICMP_MTU_ABSURD:
		st->stats.icmp_mtu_absurd++;
		return LUNAR_DROP_TCP_ICMP_BAD_MTU;
	case TCP_ICMP_MTU_NOT_LOWER:
		st->stats.icmp_mtu_not_lower++;
		/* The path MTU known, reported again: it still holds (its lifetime restarts). */
		floored = (uint16_t)tcp_pmtu_floored(q->mtu);
		if (s->conn.path_mtu && floored == s->conn.path_mtu)
			learn_path_mtu(st, t.raddr, floored, 0);
		return LUNAR_DROP_TCP_ICMP_MTU_NOT_LOWER;
	case TCP_ICMP_MTU_RECORDED:
		st->stats.icmp_mtu_recorded++;
		break;
	case TCP_ICMP_MSS_LOWERED:
		st->stats.icmp_mss_lowered++;
		break;
	case TCP_ICMP_MSS_FLOORED:
		st->stats.icmp_mss_floored++;
		break;
	case TCP_ICMP_SOFT_ERROR:
		st->stats.icmp_soft_errors++;
		break;
	case TCP_ICMP_RTO_REVERTED:
		st->stats.icmp_rto_reverts++;
		break;
	case TCP_ICMP_ABORTED:
		st->stats.icmp_aborts++;
		break;
	}
	path_mtu = s->conn.path_mtu;
	after(s); /* segments sent again, or the events of an aborted connect */
	if (s->inline_mode) {
		inline_flush(st); /* a run still waiting goes first */
		deliver_inline(s);
	}
	/*
	 * A lower path MTU (tcp_icmp_error() took only a lower one): the peer's other connections.
	 */
	if (q->type == ICMP_TYPE_DEST_UNREACH && q->code == ICMP_CODE_FRAG_NEEDED && path_mtu)
		learn_path_mtu(st, t.raddr, path_mtu, 0);
	return LUNAR_DROP_NONE;
}

/* ---- events ---- */

/* Never inlined, as burst_end(): a profile can count the callbacks apart (docs/benchmarks.md). */
static LUNAR_NOINLINE void dispatch(struct tcp_stack *st)
{
	/* Bounded: callbacks may queue new events (a reply can free space...). */
	for (unsigned rounds = 0; st->ev_head && rounds < 1024; rounds++) {
		struct tcp_sock *s = st->ev_head;
		uint32_t ev;

		st->ev_head = s->ev_next;
		if (!st->ev_head)
			st->ev_tail = NULL;
		s->ev_queued = false;
		ev = s->conn.events;
		s->conn.events = 0;
		if (!s->dead && ev && s->fn) {
			enum lunar_cost_cat prev = lunar_cost_enter(LUNAR_COST_APP);

			s->in_callback = true;
			s->fn(s, ev, s->ctx);
			s->in_callback = false;
			lunar_cost_leave(prev);
		}
	}
}

/*
 * Memory pressure. Received frames stay in the packet pool while TCP holds
 * them (zero copy), and the pool is shared by every connection and by the
 * port's receive ring. With thousands of connections each holding a window
 * of segments (out-of-order ones beyond a hole, in-order ones the
 * application has not taken, or forwarded zero-copy and not yet
 * acknowledged), the pool can run dry; then the port cannot receive the
 * retransmissions that would fill the holes, nor the ACKs that would free
 * anything, and every connection stalls until it times out. So, as Linux
 * does under tcp_mem pressure, by the pool's free share:
 *  - below 1/4 (TCP_MEM_LOW): out-of-order segments are not kept and no
 *    receive window opens further;
 *  - below 1/8 (TCP_MEM_CRITICAL): no payload is kept at all, and every
 *    out-of-order queue is emptied (RFC 2018 8 allows this reneging), at
 *    most once per millisecond.
 * When the pressure ends, windows that can open are announced at once
 * rather than when the peers next probe.
 */
#define POOL_CHECK_NS	  10000ull /* sample the pool every 10 us */
#define PRUNE_INTERVAL_NS 1000000ull

/*
 * Free buffers in @mp: its common store plus this worker's own cache.
 * Not rte_mempool_avail_count(): that also reads every lcore's cache,
 * RTE_MAX_LCORE lengths each in its own cache line kilobytes apart, some
 * 700 instructions and as many scattered loads every POOL_CHECK_NS on the
 * worker's loop. Other workers' caches (at most cache_size buffers each)
 * are left out, so the estimate errs toward pressure, never away from it.
 */
static unsigned pool_avail(struct rte_mempool *mp)
{
	struct rte_mempool_cache *cache = rte_mempool_default_cache(mp, rte_lcore_id());
	/* rte_mempool_ops_get_count(), which this DPDK does not export. */
	unsigned n = rte_mempool_get_ops(mp->ops_index)->get_count(mp) + (cache ? cache->len : 0);

	return n < mp->size ? n : mp->size;
}

static void check_pool(struct tcp_stack *st)
{
	struct rte_mempool *mp = st->nif->port->pool;
	enum tcp_mem_pressure was = st->mem_pressure, bytes;
	unsigned avail = 0;

	if (st->now < st->last_pool_check + POOL_CHECK_NS)
		return;
	if (st->mem_seen > was)
		was = st->mem_seen; /* mem_max pressed between the samples */
	if (was != TCP_MEM_NORMAL)
		st->stats.mem_pressure_ns += st->now - st->last_pool_check;
	st->last_pool_check = st->now;
	if (mp) {
		avail = pool_avail(mp);
		st->pool_pressure = avail < mp->size / 8   ? TCP_MEM_CRITICAL
				    : avail < mp->size / 4 ? TCP_MEM_LOW
							   : TCP_MEM_NORMAL;
	}
	bytes = mem_level(st);
	st->mem_seen = TCP_MEM_NORMAL;
	st->mem_pressure = bytes > st->pool_pressure ? bytes : st->pool_pressure;
	/*
	 * Leaving pressure walks every connection (below): only once well
	 * clear of it, under half of mem_max and with 3/8 of the pool free,
	 * or memory hovering at a threshold (a busy pool near 1/4 free, a
	 * peer filling queues near 3/4 of mem_max) would cost a walk of every
	 * connection every other sample. Connections themselves see the
	 * exact level (pressure_for()) all along.
	 */
	if (was != TCP_MEM_NORMAL && st->mem_pressure == TCP_MEM_NORMAL &&
	    ((st->lim.mem_max && st->mem_bytes >= st->lim.mem_max / 2) ||
	     (mp && (uint64_t)avail * 8 < (uint64_t)mp->size * 3)))
		st->mem_pressure = TCP_MEM_LOW;
	if (st->mem_pressure == TCP_MEM_CRITICAL && st->now >= st->next_prune) {
		st->next_prune = st->now + PRUNE_INTERVAL_NS;
		st->stats.mem_prunes++;
		for (struct tcp_sock *s = st->all; s; s = s->all_next)
			if (s->conn.reass.n) {
				tcp_prune_ooo(&s->conn);
				charge(s);
			}
	}
	if (st->snd_blocked && bytes == TCP_MEM_NORMAL)
		wake_senders(st);
	if (was != TCP_MEM_NORMAL && st->mem_pressure == TCP_MEM_NORMAL) {
		for (struct tcp_sock *s = st->all, *next; s; s = next) {
			next = s->all_next;
			s->conn.mem_pressure = TCP_MEM_NORMAL;
			tcp_window_update(&s->conn, st->now, &st->out);
			after(s);
		}
	}
}

/* A connection's deadline has come: run its timers. */
static void sock_timer(struct tw_entry *e, void *ctx)
{
	struct tcp_sock *s = container_of(e, struct tcp_sock, timer);
	struct tcp_stack *st = ctx;

	tcp_timer(&s->conn, st->now, &st->out);
	after(s);
}

/*
 * The receive burst is over and its callbacks have run: each connection it
 * touched sends what it held, in one pass, then the ACK its segments
 * earned unless that data carried it. Dead sockets stay allocated until
 * free_dead(), after this. Never inlined: a profile can count the
 * framing of each burst's output apart from the poll's timers (callgrind
 * --toggle-collect=burst_end, docs/benchmarks.md).
 */
static LUNAR_NOINLINE void burst_end(struct tcp_stack *st)
{
	struct tcp_sock *s;
	bool owed;

	st->in_burst_end = st->defer_to_tx;
	while ((s = st->burst_head)) {
		st->burst_head = s->burst_next;
		s->burst_listed = false;
		if (s->dead)
			continue;
		owed = s->conn.ack_burst;
		if (tcp_burst_end(&s->conn, st->now, &st->out))
			st->stats.burst_acks++;
		else if (owed)
			st->stats.burst_acks_carried++;
		after(s);
	}
	st->in_burst_end = false;
}

/*
 * The burst's last inline run, delivered. Never inlined, as burst_end():
 * a profile counts the callbacks with the rest of the burst's work.
 */
static LUNAR_NOINLINE void burst_deliver(struct tcp_stack *st)
{
	inline_flush(st);
}

void tcp_stack_after_tx(struct tcp_stack *st)
{
	struct tcp_sock *s;

	while ((s = st->resched_head)) {
		st->resched_head = s->resched_next;
		s->resched_listed = false;
		/* what its ACK left (ack_defer): before its timers are filed */
		tcp_ack_work(&s->conn);
		resched(s); /* never a dead one: kill_sock() unlinks it */
	}
	if (st->rx_done_n) {
		enum lunar_cost_cat prev = lunar_cost_enter(LUNAR_COST_BUFFERS);

		rte_pktmbuf_free_bulk(st->rx_done, st->rx_done_n);
		st->rx_done_n = 0;
		lunar_cost_leave(prev);
	}
	st->after_tx_due = false;
}

void tcp_stack_set_timer_budget(struct tcp_stack *st, unsigned budget)
{
	st->timer_budget = budget ? budget : 1;
}

void tcp_stack_defer_to_tx(struct tcp_stack *st, bool on)
{
	if (!on && st->after_tx_due)
		tcp_stack_after_tx(st);
	st->defer_to_tx = on;
}

void tcp_stack_poll(struct tcp_stack *st, uint64_t now)
{
	if (st->after_tx_due)
		tcp_stack_after_tx(st); /* the caller did not: before anything reads the timers */
	stack_burst(st);
	if (st->inline_next)
		burst_deliver(st);
	/*
	 * Each connection's timers run at most once per poll, whatever they
	 * re-arm: what a timer re-arms at or before @now waits for the next.
	 */
	st->now = now;
	check_pool(st);
	expire_path_mtus(st);
	if (tw_expire(&st->timers, now, sock_timer, st, st->timer_budget) == st->timer_budget)
		st->stats.timer_budget_hit++; /* perhaps more due: the next poll fires them */
	if (st->ev_head)
		dispatch(st);
	if (st->burst_head)
		burst_end(st);
	/* Last: a callback may still hold a socket killed in this poll. */
	free_dead(st);
	if (st->defer_to_tx)
		st->after_tx_due = true;
	else
		tcp_stack_after_tx(st);
}

/* ---- setup ---- */

struct tcp_stack *tcp_stack_create(struct netif *nif, const struct tcp_config *cfg,
				   unsigned max_conns, const struct flow_plan *plan,
				   unsigned worker)
{
	static unsigned seq;
	struct tcp_stack *st = calloc(1, sizeof(*st));
	char name[20];

	if (!st)
		return NULL;
	snprintf(name, sizeof(name), "lunar_tcp%u", seq++);
	st->table = tcp_table_create(name, max_conns);
	if (!st->table) {
		free(st);
		return NULL;
	}
	st->nif = nif;
	st->cfg = *cfg;
	st->table_cap = max_conns;
	pmtu_init(&st->pmtu, 0);
	tcp_limits_default(&st->lim, max_conns);
	randombytes_buf(st->cookie_key, sizeof(st->cookie_key)); /* sodium_init(): the table's */
	st->cfg.ack_per_burst = true; /* tcp_stack_poll() ends each burst (burst_acks) */
	/* Our MSS: what fits the interface's MTU (RFC 9293 3.7.1), or less if asked. */
	if (nif->mtu > 40 && (!st->cfg.mss || st->cfg.mss > nif->mtu - 40))
		st->cfg.mss = (uint16_t)(nif->mtu - 40);
	/*
	 * Segments up to 64 KiB, cut by the port (TSO) or else in software (GSO, frame_segment()).
	 */
	if (nif->port->offloads & PORT_OFFLOAD_TX_TSO)
		st->cfg.gso = false; /* the port cuts them */
	st->cfg.tso_max =
	    (nif->port->offloads & PORT_OFFLOAD_TX_TSO) || st->cfg.gso ? 65535 - 20 - 60 : 0;
	st->plan = *plan;
	st->timer_budget = TCP_TIMER_BUDGET;
	st->worker = worker;
	st->eph = flow_plan_client_ports(plan, worker);
	tw_init(&st->timers, nif->now_ns);
	nif->tcp_fn = stack_input;
	nif->tcp_icmp_fn = stack_icmp;
	nif->tcp_burst_fn = stack_burst;
	nif->tcp_ctx = st;
	return st;
}

void tcp_stack_free(struct tcp_stack *st)
{
	if (!st)
		return;
	for (unsigned i = 0; i < st->gro.n; i++)
		rte_pktmbuf_free(st->gro.m[i]); /* a train never handed over */
	st->gro.n = 0;
	/* Abort what is left: an exiting process must not leave half-open peers waiting. */
	while (st->all) {
		struct tcp_sock *s = st->all;

		tcp_abort(&s->conn, st->now, &st->out);
		flush_out(st, s);
		kill_sock(s); /* unlinks it from st->all */
	}
	for (struct tcp_sock *s = st->ev_head; s; s = s->ev_next)
		s->ev_queued = false; /* all dead: free_dead() takes them */
	st->ev_head = st->ev_tail = NULL;
	tcp_stack_after_tx(st); /* the frames it still held */
	free_dead(st);
	if (st->nif->tcp_ctx == st) {
		st->nif->tcp_fn = NULL;
		st->nif->tcp_icmp_fn = NULL;
		st->nif->tcp_burst_fn = NULL;
		st->nif->tcp_ctx = NULL;
	}
	tcp_table_free(st->table);
	free(st);
}

int tcp_stack_set_limits(struct tcp_stack *st, const struct tcp_limits *l)
{
	char err[200];

	if (tcp_limits_check(l, err, sizeof(err))) {
		LOG_ERR("%s", err);
		return -EINVAL;
	}
	if (l->max_conns > st->table_cap) {
		LOG_ERR("TCP limit conns=%u: the stack's table was made for %u; create the stack "
			"with the larger number",
			l->max_conns, st->table_cap);
		return -EINVAL;
	}
	st->lim = *l;
	return 0;
}

const struct tcp_limits *tcp_stack_limits(const struct tcp_stack *st)
{
	return &st->lim;
}

void tcp_stack_usage(const struct tcp_stack *st, struct tcp_limits_usage *u)
{
	u->conns = st->in_table;
	u->half_open = st->half_open;
	u->time_wait = st->time_wait;
	u->mem_bytes = st->mem_bytes;
}

const struct tcp_stack_stats *tcp_stack_stats(struct tcp_stack *st)
{
	return &st->stats;
}

const struct pmtu_cache *tcp_stack_pmtu(const struct tcp_stack *st)
{
	return &st->pmtu;
}

unsigned tcp_stack_sockets(const struct tcp_stack *st)
{
	return st->sockets;
}

/* The path MTU cache: its counters, then each destination it knows (the first 16). */
static void dump_pmtu(const struct tcp_stack *st, const struct tcp_stack_stats *x, FILE *f)
{
	const struct pmtu_cache *pc = &st->pmtu;
	unsigned shown = 0;
	char ip[16];

	fprintf(
	    f,
	    "tcp pmtu: entries %u learned %lu lowered %lu refreshed %lu expired %lu evicted %lu "
	    "refused %lu raised %lu icmp_mtu_recorded %lu blackholes %lu probes %lu probes_ok %lu "
	    "probes_lost %lu conns_started %lu conns_lowered %lu conns_raised %lu\n",
	    pc->used, pc->stats.learned, pc->stats.lowered, pc->stats.refreshed, pc->stats.expired,
	    pc->stats.evicted, pc->stats.refused, pc->stats.raised, x->icmp_mtu_recorded,
	    x->pmtu_blackholes, x->pmtu_probes, x->pmtu_probes_ok, x->pmtu_probes_lost,
	    x->pmtu_conns_started, x->pmtu_conns_lowered, x->pmtu_conns_raised);
	for (unsigned i = 0; i < PMTU_SLOTS && shown < 16; i++) {
		const struct pmtu_entry *e = &pc->e[i];

		if (!e->mtu || e->expires_ns <= st->now)
			continue;
		fprintf(f, "tcp pmtu: %s mtu %u expires in %lu s\n", ip4_str(e->dst, ip), e->mtu,
			(unsigned long)((e->expires_ns - st->now) / 1000000000u));
		shown++;
	}
}

void tcp_stack_stats_sum(const struct tcp_stack *st, struct tcp_stack_stats *out)
{
	*out = st->stats;
	/* Closed connections were folded in when they died; add the live ones. */
	for (const struct tcp_sock *s = st->all; s; s = s->all_next)
		add_conn_stats(out, &s->conn);
}

void tcp_stack_dump(struct tcp_stack *st, FILE *f)
{
	struct tcp_stack_stats all;
	const struct tcp_stack_stats *x = &all;

	tcp_stack_stats_sum(st, &all);

	fprintf(f,
		"tcp: opened %lu accepted %lu closed %lu active %lu syn_dropped_backlog %lu "
		"rst_sent %lu foreign %lu\n"
		"tcp: segs_in %lu segs_out %lu retransmits %lu timeouts %lu fastpath_ack %lu "
		"fastpath_data %lu slowpath %lu acks_worked_later %lu burst_acks %lu "
		"burst_acks_carried %lu zero_window_probes %lu orphans_dropped %lu\n"
		"tcp: copy_tx_bytes %lu copy_rx_bytes %lu zc_tx_bytes %lu inline_calls %lu "
		"tx_no_mbuf %lu tx_unbuffered %lu tso_segs %lu gso_segs %lu gro_trains %lu "
		"gro_segs %lu sockets %u\n"
		"tcp: out_of_window %lu ack_unsent %lu ack_too_old %lu paws_rejects %lu "
		"challenge_acks %lu challenge_acks_limited %lu\n"
		"tcp: syncookies_sent %lu syncookies_ok %lu syncookies_bad %lu "
		"syncookies_no_room %lu syncookies_adopted %lu\n",
		x->conns_opened, x->conns_accepted, x->conns_closed, x->conns_active,
		x->syn_dropped_backlog, x->rst_sent, x->foreign, x->segs_in, x->segs_out,
		x->retransmits, x->timeouts, x->fastpath_ack, x->fastpath_data, x->slowpath,
		x->acks_worked_later, x->burst_acks, x->burst_acks_carried, x->zero_window_probes,
		x->orphans_dropped, x->copy_tx_bytes, x->copy_rx_bytes, x->zc_tx_bytes,
		x->inline_calls, x->tx_no_mbuf, x->tx_unbuffered, x->tso_segs, x->gso_segs,
		x->gro_trains, x->gro_segs, st->sockets, x->out_of_window, x->ack_unsent,
		x->ack_too_old, x->paws_rejects, x->challenge_acks, x->challenge_acks_limited,
		x->syncookies_sent, x->syncookies_ok, x->syncookies_bad, x->syncookies_no_room,
		x->syncookies_adopted);
	fprintf(f,
		"tcp: mem_pressure_ms %lu ooo_refused %lu ooo_pruned_bytes %lu mem_prunes %lu "
		"rcv_mem_dropped %lu rcvq_compacted %lu rcvq_compacted_bytes %lu\n",
		x->mem_pressure_ns / 1000000, x->ooo_refused, x->ooo_pruned_bytes, x->mem_prunes,
		x->rcv_mem_dropped, x->rcvq_compacted, x->rcvq_compacted_bytes);
	fprintf(f,
		"tcp: fast_retransmits %lu dupacks %lu sack_blocks %lu sack_invalid %lu dsacks %lu "
		"dsacks_sent %lu rack_lost %lu recoveries %lu tlp_probes %lu tlp_recoveries %lu "
		"recovery_probes %lu sb_nomem %lu spurious_rtos %lu frto_spurious %lu "
		"spurious_recoveries %lu\n",
		x->fast_retransmits, x->dupacks, x->sack_blocks, x->sack_invalid, x->dsacks,
		x->dsacks_sent, x->rack_lost, x->recoveries, x->tlp_probes, x->tlp_recoveries,
		x->recovery_probes, x->sb_nomem, x->spurious_rtos, x->frto_spurious,
		x->spurious_recoveries);
	fprintf(
	    f,
	    "tcp: cc %s ecn_ce %lu ecn_ece %lu ecn_cuts %lu ecn_syn_fallbacks %lu hystart_css %lu "
	    "hystart_css_spurious %lu hystart_exits %lu cwnd_unused_cuts %lu\n",
	    tcp_cc_algo_name(st->cfg.cc), x->ecn_ce, x->ecn_ece, x->ecn_cuts, x->ecn_syn_fallbacks,
	    x->hystart_css, x->hystart_css_spurious, x->hystart_exits, x->cwnd_unused_cuts);
	fprintf(f,
		"tcp: icmp_no_conn %lu icmp_out_of_window %lu icmp_mtu_absurd %lu "
		"icmp_mtu_not_lower %lu icmp_mss_lowered %lu icmp_mss_floored %lu "
		"icmp_soft_errors %lu icmp_aborts %lu icmp_rto_reverts %lu\n",
		x->icmp_no_conn, x->icmp_out_of_window, x->icmp_mtu_absurd, x->icmp_mtu_not_lower,
		x->icmp_mss_lowered, x->icmp_mss_floored, x->icmp_soft_errors, x->icmp_aborts,
		x->icmp_rto_reverts);
	dump_pmtu(st, x, f);
	fprintf(
	    f,
	    "tcp limits: conns %u/%u half_open %u/%u time_wait %u/%u mem_bytes %lu/%lu\n"
	    "tcp limits: syn_dropped_conns %lu syn_dropped_half_open %lu syncookies_half_open %lu "
	    "connect_refused %lu half_open_timeouts %lu tw_recycled %lu tw_overflow %lu "
	    "tw_reopened %lu tw_reopen_deferred %lu tw_reused %lu timer_budget_hit %lu\n"
	    "tcp limits: snd_buf_full %lu snd_mem_limited %lu rcv_mem_limited %lu ooo_full %lu "
	    "beyond_window %lu\n",
	    st->in_table, st->lim.max_conns, st->half_open, st->lim.max_half_open, st->time_wait,
	    st->lim.max_time_wait, (unsigned long)st->mem_bytes, (unsigned long)st->lim.mem_max,
	    x->syn_dropped_conns, x->syn_dropped_half_open, x->syncookies_half_open,
	    x->connect_refused, x->half_open_timeouts, x->tw_recycled, x->tw_overflow,
	    x->tw_reopened, x->tw_reopen_deferred, x->tw_reused, x->timer_budget_hit,
	    x->snd_buf_full, x->snd_mem_limited, x->rcv_mem_limited, x->ooo_full, x->beyond_window);
	/* An ss-like line per connection. */
	for (const struct tcp_sock *k = st->all; k; k = k->all_next) {
		const struct tcp_conn *c = &k->conn;

		fprintf(f,
			"tcp conn %u->%u %s una %u nxt %u max %u snd_wnd %u cwnd %u ssthresh %u "
			"inflight %u sndbuf %u rcv_nxt %u rcv_wnd %u rcvq %u ooo %u/%u rto_at %+ld "
			"persist_at %+ld delack_at %+ld retries %u rto %lu us cc %s%s\n",
			c->tuple.lport, c->tuple.rport, tcp_state_name(c->state),
			c->snd_una - c->iss, c->snd_nxt - c->iss, c->snd_max - c->iss, c->snd_wnd,
			c->cc.cwnd, c->cc.ssthresh, c->snd_max - c->snd_una, c->snd.bytes,
			c->rcv_nxt - c->irs, c->rcv_wnd, c->rcvq_bytes, c->reass.n, c->reass.bytes,
			c->rto_at ? (long)(c->rto_at - st->now) : 0,
			c->persist_at ? (long)(c->persist_at - st->now) : 0,
			c->delack_at ? (long)(c->delack_at - st->now) : 0, c->retries,
			(unsigned long)(tcp_rtt_timeout(&c->rtt) / 1000), c->cc.ops->name,
			c->ecn_ok ? " ecn" : "");
	}
}

/* ---- listeners ---- */

struct tcp_listener *tcp_listen_on(struct tcp_stack *st, uint16_t port, unsigned backlog,
				   tcp_accept_fn fn, void *ctx, int *err)
{
	struct tcp_listener *l;
	int rc;

	/*
	 * A port of the reserved range belongs to one worker's client
	 * sub-range (flow_plan_queue_of() decides by it first): with several
	 * workers every connection to it would go to that worker, and over
	 * memif, where the peer picks the queue, be dropped by the others.
	 */
	if (st->plan.n_queues > 1 && flow_plan_reserved(&st->plan, port)) {
		*err = -EADDRNOTAVAIL;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		*err = -ENOMEM;
		return NULL;
	}
	*l = (struct tcp_listener){
	    .st = st, .port = port, .backlog = backlog ? backlog : 128, .fn = fn, .ctx = ctx};
	rc = tcp_table_listen(st->table, port, l);
	if (rc) {
		free(l);
		*err = rc;
		return NULL;
	}
	*err = 0;
	return l;
}

void tcp_listener_close(struct tcp_listener *l)
{
	struct tcp_stack *st = l->st;

	tcp_table_unlisten(st->table, l->port);
	/* Connections never accepted are reset (RFC 9293 3.10.4 on the queue). */
	while (l->ready_head) {
		struct tcp_sock *s = l->ready_head;

		l->ready_head = s->ready_next;
		s->listener = NULL;
		tcp_abort(&s->conn, st->now, &st->out);
		flush_out(st, s);
		kill_sock(s);
	}
	/*
	 * Half-open ones too: nobody can accept them now, and left alone the
	 * peer's ACK would complete the handshake into an established
	 * connection that nothing owns and nothing ever closes.
	 */
	for (struct tcp_sock *s = st->all, *next; s; s = next) {
		next = s->all_next;
		if (s->listener != l)
			continue;
		s->listener = NULL;
		tcp_abort(&s->conn, st->now, &st->out);
		flush_out(st, s);
		kill_sock(s);
	}
	free(l);
}

bool tcp_listener_ready(const struct tcp_listener *l)
{
	return l->ready_head != NULL;
}

struct tcp_sock *tcp_accept(struct tcp_listener *l, tcp_sock_fn fn, void *ctx)
{
	struct tcp_sock *s;

	while ((s = l->ready_head)) {
		l->ready_head = s->ready_next;
		if (!l->ready_head)
			l->ready_tail = NULL;
		if (l->pending)
			l->pending--;
		l->ready--;
		s->listener = NULL;
		if (s->dead)
			continue;
		s->fn = fn;
		s->ctx = ctx;
		l->st->stats.conns_accepted++;
		s->conn.events |= TCP_EV_CONNECTED;
		queue_events(s);
		return s;
	}
	return NULL;
}

/* ---- active open ---- */

/*
 * Every port of this worker's share to @raddr:@rport is taken, and some by
 * TIME-WAITs our own closes left (a client that closes first opens ports
 * faster than TIME-WAIT frees them: 1/N^2 of the reserved range per worker
 * and destination): the oldest such one whose connection had timestamps,
 * as Linux's tcp_tw_reuse. The new connection starts above all the old one
 * sent, and timestamps let the peer's PAWS tell its segments from the old
 * one's. NULL if there is none.
 */
static struct tcp_sock *tw_reusable(struct tcp_stack *st, uint32_t raddr, uint16_t rport)
{
	for (struct tcp_sock *s = st->tw_head; s; s = s->tw_next) {
		const struct tcp_4tuple *t = &s->conn.tuple;

		if (t->raddr == raddr && t->rport == rport && s->conn.ts_ok &&
		    t->lport >= st->eph.lo && t->lport <= st->eph.hi &&
		    t->lport % st->eph.mod == st->eph.rem &&
		    !tcp_table_listener(st->table, t->lport))
			return s;
	}
	return NULL;
}

struct tcp_sock *tcp_connect_to(struct tcp_stack *st, uint32_t raddr, uint16_t rport,
				tcp_sock_fn fn, void *ctx, int *err)
{
	struct tcp_4tuple t = {.laddr = st->nif->ip, .raddr = raddr, .rport = rport};
	struct tcp_sock *s, *old;
	uint32_t iss = 0;
	bool reuse = false;
	int rc;

	rc = tcp_table_pick_port_in(st->table, t.laddr, raddr, rport, st->eph.lo, st->eph.hi,
				    st->eph.mod, st->eph.rem, &t.lport);
	if (rc == -EADDRNOTAVAIL && (old = tw_reusable(st, raddr, rport))) {
		t.lport = old->conn.tuple.lport;
		iss = tw_successor_iss(old);
		tw_cut(old);
		after(old);
		st->stats.tw_reused++;
		reuse = true;
		rc = 0;
	}
	if (rc) {
		*err = rc;
		return NULL;
	}
	if (!conn_room(st)) {
		st->stats.connect_refused++;
		*err = -ENOBUFS;
		return NULL;
	}
	s = reuse ? new_sock_iss(st, &t, iss) : new_sock(st, &t);
	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	s->app_owned = true;
	s->fn = fn;
	s->ctx = ctx;
	tcp_connect(&s->conn, st->now, &st->out);
	after(s);
	*err = 0;
	return s;
}

/* ---- data ---- */

int tcp_sock_send_zcv(struct tcp_sock *s, const struct tcp_iov *v, unsigned n)
{
	enum lunar_cost_cat prev;
	uint32_t room, done = 0;
	bool cut = false;
	int rc = tcp_send_state(&s->conn);

	/* First: with no room the loop would not ask, and 0 would say "later". */
	if (rc)
		return rc;
	prev = lunar_cost_enter(LUNAR_COST_PROTOCOL);
	room = mem_room(s->st);

	for (unsigned i = 0; i < n && !cut; i++) {
		uint32_t len = v[i].len < room - done ? v[i].len : room - done;

		if (!v[i].len)
			continue;
		rc = len ? tcp_send(&s->conn, v[i].data, len) : 0;
		if (rc < 0)
			break;
		done += (uint32_t)rc;
		cut = (uint32_t)rc < v[i].len;
	}
	if (cut) {
		charge(s); /* which limit cut it: mem_max counts what was just taken */
		send_cut(s);
	}
	if (done) {
		tcp_output(&s->conn, s->st->now, &s->st->out);
		after(s);
	}
	lunar_cost_leave(prev);
	return done ? (int)done : rc;
}

int tcp_sock_send_zc(struct tcp_sock *s, const uint8_t *zbuf_data, uint32_t len)
{
	const struct tcp_iov v = {zbuf_data, len};

	return tcp_sock_send_zcv(s, &v, 1);
}

int tcp_sock_send(struct tcp_sock *s, const void *data, size_t len)
{
	const uint8_t *src = data;
	enum lunar_cost_cat prev;
	size_t done = 0;
	int err = tcp_send_state(&s->conn);

	if (err) /* first: with no room the loop would not ask, and 0 would say "later" */
		return err;

	while (done < len) {
		uint32_t room = tcp_sock_send_space(s);
		uint32_t chunk = len - done < room ? (uint32_t)(len - done) : room;
		uint8_t *buf;
		int rc;

		if (chunk > 65536)
			chunk = 65536;
		if (!chunk)
			break;
		prev = lunar_cost_enter(LUNAR_COST_BUFFERS);
		buf = zbuf_alloc(chunk);
		lunar_cost_leave(prev);
		if (!buf) {
			err = -ENOBUFS;
			break;
		}
		prev = lunar_cost_enter(LUNAR_COST_COPY);
		memcpy(buf, src + done, chunk);
		lunar_cost_leave(prev);
		s->st->stats.copy_tx_bytes += chunk;
		rc = tcp_send(&s->conn, buf, chunk);
		zbuf_unref(buf); /* the connection holds its own reference */
		if (rc <= 0) {
			err = rc;
			break;
		}
		done += (size_t)rc;
		charge(s); /* mem_room() for the next chunk */
	}
	if (done < len)
		send_cut(s);
	/* What earlier chunks queued goes now, even when a later one failed. */
	if (done) {
		tcp_output(&s->conn, s->st->now, &s->st->out);
		after(s);
	}
	return done ? (int)done : err;
}

unsigned tcp_sock_read_zc(struct tcp_sock *s, struct tcp_slice *out, unsigned max)
{
	enum lunar_cost_cat prev = lunar_cost_enter(LUNAR_COST_PROTOCOL);
	unsigned n = tcp_recv_hold(&s->conn, out, max);

	lunar_cost_leave(prev);
	return n;
}

/* @len bytes the application held go back to @s's receive window (none once it is gone). */
static void zc_give_back(struct tcp_sock *s, uint32_t len)
{
	if (!s || s->dead)
		return;
	enum lunar_cost_cat prev = lunar_cost_enter(LUNAR_COST_PROTOCOL);

	s->conn.mem_pressure = pressure_for(s->st, &s->conn); /* whether the window may open */
	tcp_recv_release(&s->conn, len, s->st->now, &s->st->out);
	after(s);
	lunar_cost_leave(prev);
}

/* A slice whose reference was refused (given back twice) opens no window. */
void tcp_sock_zc_done(struct tcp_sock *s, const void *data, uint32_t len)
{
	if (data && !zbuf_unref(data))
		return;
	zc_give_back(s, len);
}

void tcp_sock_zc_done_v(struct tcp_sock *s, const struct tcp_slice *v, unsigned n)
{
	uint32_t len = 0;

	for (unsigned i = 0; i < n; i++)
		if (!v[i].data || zbuf_unref(v[i].data))
			len += v[i].len;
	if (len)
		zc_give_back(s, len);
}

uint32_t tcp_sock_held(const struct tcp_sock *s)
{
	return s->conn.app_held;
}

size_t tcp_sock_read(struct tcp_sock *s, void *buf, size_t len)
{
	struct tcp_conn *c = &s->conn;
	uint8_t *dst = buf;
	size_t done = 0;

	c->mem_pressure = pressure_for(s->st, c); /* whether the window may open */
	/* Copy from the queued slices in place; trim the first one if partly read. */
	while (done < len && c->rcvq_count) {
		struct tcp_slice *sl = &c->rcvq[c->rcvq_head];
		size_t take = sl->len < len - done ? sl->len : len - done;
		enum lunar_cost_cat prev = lunar_cost_enter(LUNAR_COST_COPY);

		memcpy(dst + done, sl->data, take);
		lunar_cost_leave(prev);
		done += take;
		if (take < sl->len) {
			sl->data += take;
			sl->seq += (uint32_t)take;
			sl->len -= (uint32_t)take;
			c->rcvq_bytes -= (uint32_t)take;
			break;
		}
		{
			struct tcp_slice one;

			tcp_recv(c, &one, 1, s->st->now, &s->st->out);
			zbuf_unref(one.data);
		}
	}
	s->st->stats.copy_rx_bytes += done;
	after(s);
	return done;
}

void tcp_sock_want_space(struct tcp_sock *s)
{
	if (!s->dead && !tcp_send_state(&s->conn) && mem_room(s->st) < tcp_send_space(&s->conn))
		mark_blocked(s);
}

uint32_t tcp_sock_send_space(const struct tcp_sock *s)
{
	uint32_t own = tcp_send_space(&s->conn), room = mem_room(s->st);

	return own < room ? own : room;
}

uint32_t tcp_sock_readable(const struct tcp_sock *s)
{
	return tcp_recv_bytes(&s->conn);
}

void tcp_sock_shutdown(struct tcp_sock *s)
{
	tcp_close(&s->conn, s->st->now, &s->st->out);
	after(s);
}

void tcp_sock_close(struct tcp_sock *s)
{
	s->app_closed = true;
	s->fn = NULL;
	s->conn.orphan = true;
	/* RFC 1122 4.2.2.13: closing with unread data resets instead of a FIN. */
	if (tcp_recv_bytes(&s->conn))
		tcp_abort_unread(&s->conn, s->st->now, &s->st->out);
	else
		tcp_close(&s->conn, s->st->now, &s->st->out);
	if (s->conn.state == TCP_FIN_WAIT_2 && !s->conn.timewait_at)
		s->conn.timewait_at = s->st->now + s->conn.cfg.fin_wait2_ns;
	after(s);
}

void tcp_sock_abort(struct tcp_sock *s)
{
	s->app_closed = true;
	s->fn = NULL;
	tcp_abort(&s->conn, s->st->now, &s->st->out);
	after(s);
}

const struct tcp_conn *tcp_sock_conn(const struct tcp_sock *s)
{
	return &s->conn;
}

void tcp_stack_set_hdr_pool(struct tcp_stack *st, struct rte_mempool *mp)
{
	st->hdr_pool = mp;
}

void tcp_sock_set_inline(struct tcp_sock *s, bool on)
{
	s->inline_mode = on;
}

void tcp_sock_set_ctx(struct tcp_sock *s, tcp_sock_fn fn, void *ctx)
{
	s->fn = fn;
	s->ctx = ctx;
}
