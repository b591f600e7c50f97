/*
 * dispatch_tcp.c - the stack core's side of TCP in dispatch mode (see
 * dispatch_tcp.h): requests from application threads become tcp_stack
 * calls, and the stack's callbacks become events on the owning thread's
 * channel. Everything here runs on the stack core.
 */
#include "api/dispatch_tcp.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mem/zbuf.h"
#include "tcp/tcp_stack.h"

#define MAX_LISTEN	   16
#define MAX_CHANS_PER_PORT 64
#define RX_BATCH	   32

struct dtcp_conn {
	struct dtcp *t;
	struct tcp_sock *s; /* NULL: the slot is free */
	uint32_t gen;	    /* bumped when the slot is freed: old handles go stale */
	unsigned chan;	    /* the owning application thread's channel */
	uint64_t cookie;    /* DTCP_CONNECT's, for DTCP_EV_CONNECTED */
	bool active, connected, eof_sent, closing, rx_waiting;
	int send_err;	    /* a send was refused: later ones are too (-ECANCELED) */
	bool listed;	    /* on the service's waiting list (kept across slot reuse) */
	unsigned next_wait; /* the next slot on that list */
	/* DTCP_SENDs waiting for send-buffer room, in order (pend_off into the first) */
	struct lunar_msg *pend;
	unsigned pend_head, pend_n;
	uint32_t pend_off;
	unsigned next_free;
};

struct dtcp_listen {
	struct dtcp *t;
	uint16_t port;
	struct tcp_listener *l;
	unsigned chans[MAX_CHANS_PER_PORT];
	unsigned n_chans, next; /* accepted connections go to chans[next++ % n_chans] */
};

/* Control events a full ring could not take, per channel, in order. */
struct deferred {
	struct lunar_msg *m;
	unsigned n, cap;
};

struct dtcp {
	struct tcp_stack *st;
	struct lunar_dispatch *d;
	struct dtcp_config cfg;
	struct dtcp_conn *conns;
	unsigned free_head, n_open; /* free slots: a list through next_free (cfg.max_conns = end) */
	struct dtcp_listen listens[MAX_LISTEN];
	unsigned n_listens;
	struct deferred *deferred; /* one per channel */
	/* Slots whose delivery waited for ring room, retried each poll: a list
	 * of n_listed slots from wait_head through next_wait, so a poll costs
	 * nothing when no one waits. A slot may stay listed after it stopped
	 * waiting; the poll skips it then. */
	unsigned wait_head, n_listed;
	struct dtcp_stats stats;
};

/* ---- handles ---- */

static uint64_t handle_of(const struct dtcp_conn *k)
{
	return (uint64_t)k->gen << 32 | (uint32_t)(k - k->t->conns);
}

static struct dtcp_conn *conn_of(struct dtcp *t, uint64_t h)
{
	uint32_t idx = (uint32_t)h;
	struct dtcp_conn *k;

	if (idx >= t->cfg.max_conns)
		return NULL;
	k = &t->conns[idx];
	return k->s && k->gen == (uint32_t)(h >> 32) && !k->closing ? k : NULL;
}

/* ---- events to applications ---- */

static int defer(struct deferred *q, const struct lunar_msg *m)
{
	if (q->n == q->cap) {
		unsigned cap = q->cap ? q->cap * 2 : 64;
		struct lunar_msg *v = realloc(q->m, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		q->m = v;
		q->cap = cap;
	}
	q->m[q->n++] = *m;
	return 0;
}

/* Deliver a control event in order: behind the channel's deferred ones, if any. */
static void emit(struct dtcp *t, unsigned chan, const struct lunar_msg *m)
{
	struct deferred *q = &t->deferred[chan];
	struct lunar_chan *ch = lunar_dispatch_chan(t->d, chan);

	if (!q->n && lunar_chan_stack_send(ch, m) == 0)
		return;
	if (defer(q, m) == 0) {
		t->stats.deferred++;
		return;
	}
	t->stats.events_lost++; /* out of memory: the one case an event cannot travel */
	if (m->buf)
		zbuf_unref(m->buf);
}

static void flush_deferred(struct dtcp *t, unsigned chan)
{
	struct deferred *q = &t->deferred[chan];
	unsigned done;

	if (!q->n)
		return;
	done = lunar_chan_stack_send_burst(lunar_dispatch_chan(t->d, chan), q->m, q->n);
	memmove(q->m, q->m + done, (q->n - done) * sizeof(*q->m));
	q->n -= done;
}

static void emit_error(struct dtcp *t, unsigned chan, const struct lunar_msg *req, int err)
{
	struct lunar_msg m = {.op = DTCP_EV_ERROR,
			      .len = req->op,
			      .conn = req->conn,
			      .buf = req->buf,
			      .arg = (uint64_t)(int64_t)err};

	emit(t, chan, &m);
}

static void emit_conn(struct dtcp_conn *k, uint32_t op, uint64_t arg)
{
	struct lunar_msg m = {.op = op, .conn = handle_of(k), .arg = arg};

	emit(k->t, k->chan, &m);
}

/* ---- connection slots ---- */

static struct dtcp_conn *slot_take(struct dtcp *t, unsigned chan)
{
	struct dtcp_conn *k;

	if (t->free_head == t->cfg.max_conns)
		return NULL;
	k = &t->conns[t->free_head];
	t->free_head = k->next_free;
	k->chan = chan;
	k->active = k->connected = k->eof_sent = k->closing = k->rx_waiting = false;
	k->send_err = 0;
	k->pend_head = k->pend_n = 0;
	k->pend_off = 0;
	t->n_open++;
	return k;
}

/* The slot back on the free list; its handles go stale. */
static void slot_put(struct dtcp_conn *k)
{
	struct dtcp *t = k->t;

	k->s = NULL;
	k->gen++;
	k->next_free = t->free_head;
	t->free_head = (unsigned)(k - t->conns);
	t->n_open--;
}

/* A connection's slot: the waiting sends' buffers are released, then the slot. */
static void slot_free(struct dtcp_conn *k)
{
	struct dtcp *t = k->t;

	for (unsigned i = 0; i < k->pend_n; i++)
		zbuf_unref(k->pend[(k->pend_head + i) % t->cfg.send_queue].buf);
	k->pend_n = 0;
	k->rx_waiting = false;
	t->stats.conns_closed++;
	slot_put(k);
}

/* The application let go (DTCP_CLOSE, and the waiting sends are in): close, forget. */
static void conn_close(struct dtcp_conn *k)
{
	tcp_sock_close(k->s); /* no more callbacks; the stack frees it when done */
	slot_free(k);
}

/* ---- data ---- */

/* DTCP_EV_EOF once, when the peer's FIN has come. */
static void emit_eof(struct dtcp_conn *k)
{
	if (!k->eof_sent && tcp_sock_conn(k->s)->fin_rcvd) {
		k->eof_sent = true;
		emit_conn(k, DTCP_EV_EOF, 0);
	}
}

/*
 * The waiting sends back to the application in DTCP_EV_ERROR, in order:
 * the first with @err and its buffer from its first byte not taken (the
 * send buffer has the rest), the others with -ECANCELED. Released instead
 * once the application has closed the connection.
 */
static void give_back_sends(struct dtcp_conn *k, int err)
{
	struct dtcp *t = k->t;

	while (k->pend_n) {
		struct lunar_msg m = k->pend[k->pend_head];

		m.buf = (uint8_t *)m.buf + k->pend_off;
		if (k->closing) /* no events after DTCP_CLOSE: nobody wants it back */
			zbuf_unref(m.buf);
		else
			emit_error(t, k->chan, &m, err);
		t->stats.send_refused++;
		err = -ECANCELED;
		k->pend_off = 0;
		k->pend_head = (k->pend_head + 1) % t->cfg.send_queue;
		k->pend_n--;
	}
}

/* A received slice as the DTCP_EV_DATA that hands it to the application (counted). */
static struct lunar_msg data_event(struct dtcp_conn *k, const struct tcp_slice *sl)
{
	k->t->stats.rx_bytes += sl->len;
	k->t->stats.data_events++;
	return (struct lunar_msg){
	    .op = DTCP_EV_DATA, .conn = handle_of(k), .buf = (void *)sl->data, .len = sl->len};
}

/* Received bytes to the application, as far as its ring has room; then EOF. */
static void deliver(struct dtcp_conn *k)
{
	struct dtcp *t = k->t;
	struct lunar_chan *ch = lunar_dispatch_chan(t->d, k->chan);
	bool waiting = false;

	for (;;) {
		unsigned room = t->deferred[k->chan].n ? 0 : lunar_chan_stack_room(ch);
		struct tcp_slice sl[RX_BATCH];
		struct lunar_msg m[RX_BATCH];
		unsigned n;

		if (!tcp_sock_readable(k->s))
			break;
		if (!room) {
			waiting = true; /* the rest stays charged to the window */
			break;
		}
		n = tcp_sock_read_zc(k->s, sl, room < RX_BATCH ? room : RX_BATCH);
		for (unsigned i = 0; i < n; i++)
			m[i] = data_event(k, &sl[i]);
		/* The room was checked and this core is the ring's one producer, so
		 * only a channel shut down meanwhile refuses: nobody will read these. */
		for (unsigned i = lunar_chan_stack_send_burst(ch, m, n); i < n; i++)
			tcp_sock_zc_done(k->s, m[i].buf, m[i].len);
	}
	if (waiting && !k->rx_waiting)
		t->stats.rx_waits++;
	k->rx_waiting = waiting;
	if (waiting && !k->listed) {
		k->listed = true;
		k->next_wait = t->wait_head;
		t->wait_head = (unsigned)(k - t->conns);
		t->n_listed++;
	}
	if (!waiting)
		emit_eof(k);
}

/*
 * A connection that failed: everything it received goes to the
 * application now, behind the ring in the channel's queue if need be,
 * as do the sends still waiting (given back with @err), before
 * DTCP_EV_CLOSED; the slot is freed right after.
 */
static void deliver_all(struct dtcp_conn *k, int err)
{
	struct dtcp *t = k->t;
	struct tcp_slice sl[RX_BATCH];
	unsigned n;

	deliver(k); /* as far as the ring has room */
	while ((n = tcp_sock_read_zc(k->s, sl, RX_BATCH)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			struct lunar_msg m = data_event(k, &sl[i]);

			emit(t, k->chan, &m);
		}
	}
	emit_eof(k);
	give_back_sends(k, err);
}

/* Waiting sends into the send buffer, in order, as far as it takes them. */
static void flush_sends(struct dtcp_conn *k)
{
	struct dtcp *t = k->t;
	bool had = k->pend_n > 0;

	while (k->pend_n) {
		struct lunar_msg *m = &k->pend[k->pend_head];
		const uint8_t *at = (const uint8_t *)m->buf + k->pend_off;
		int rc = tcp_sock_send_zc(k->s, at, m->len - k->pend_off);

		if (rc == -EOVERFLOW) /* referenced too widely to take one more: a copy goes */
			rc = tcp_sock_send(k->s, at, m->len - k->pend_off);
		if (rc < 0) {
			/* No byte may go after the hole: this send and every later one fail. */
			k->send_err = rc;
			give_back_sends(k, rc);
			had = false; /* not all in: no DTCP_EV_SENT */
			break;
		}
		t->stats.tx_bytes += (uint64_t)rc;
		k->pend_off += (uint32_t)rc;
		if (k->pend_off < m->len)
			return;	    /* TCP_EV_WRITABLE brings us back */
		zbuf_unref(m->buf); /* the send buffer holds its own reference */
		k->pend_off = 0;
		k->pend_head = (k->pend_head + 1) % t->cfg.send_queue;
		k->pend_n--;
	}
	if (k->closing) {
		conn_close(k);
		return;
	}
	if (had)
		emit_conn(k, DTCP_EV_SENT, 0);
}

/* ---- the stack's callbacks ---- */

static void on_sock(struct tcp_sock *s, uint32_t ev, void *ctx)
{
	struct dtcp_conn *k = ctx;

	(void)s;
	if (ev & (TCP_EV_RESET | TCP_EV_TIMEOUT)) {
		int err = tcp_sock_conn(k->s)->error;

		if (k->closing) {
			conn_close(k);
			return;
		}
		/* refused or unreachable: the cookie says which */
		if (k->active && !k->connected) {
			struct lunar_msg m = {.op = DTCP_EV_ERROR,
					      .len = DTCP_CONNECT,
					      .conn = k->cookie,
					      .arg = (uint64_t)(int64_t)err};

			emit(k->t, k->chan, &m);
		} else {
			err = err ? err : -ECONNRESET;
			/* What arrived before the reset is still the application's. */
			deliver_all(k, err);
			emit_conn(k, DTCP_EV_CLOSED, (uint64_t)(int64_t)err);
		}
		conn_close(k);
		return;
	}
	if ((ev & TCP_EV_CONNECTED) && k->active && !k->connected) {
		k->connected = true;
		emit_conn(k, DTCP_EV_CONNECTED, k->cookie);
	}
	if (ev & TCP_EV_WRITABLE)
		flush_sends(k);
	if (k->s && (ev & (TCP_EV_READABLE | TCP_EV_EOF)) && !k->closing)
		deliver(k);
}

static void on_accept(struct tcp_listener *l, void *ctx)
{
	struct dtcp_listen *L = ctx;
	struct dtcp *t = L->t;
	struct tcp_sock *s;

	while (tcp_listener_ready(l)) {
		unsigned chan = L->chans[L->next % L->n_chans];
		struct dtcp_conn *k = slot_take(t, chan);
		const struct tcp_conn *c;

		if (!k) { /* no slot: refuse what waits rather than hold it */
			while ((s = tcp_accept(l, NULL, NULL)))
				tcp_sock_abort(s);
			return;
		}
		s = tcp_accept(l, on_sock, k);
		if (!s) {
			slot_put(k);
			return;
		}
		k->s = s;
		k->connected = true;
		L->next++;
		t->stats.conns_accepted++;
		c = tcp_sock_conn(s);
		emit_conn(k, DTCP_EV_ACCEPTED, dtcp_addr(c->tuple.raddr, c->tuple.rport));
	}
}

/* ---- requests ---- */

static void req_listen(struct dtcp *t, unsigned chan, struct lunar_msg *m)
{
	struct dtcp_listen *L = NULL;
	int err = 0;

	if (m->arg == 0 || m->arg > 65535) {
		t->stats.bad_request++;
		emit_error(t, chan, m, -EINVAL);
		return;
	}
	for (unsigned i = 0; i < t->n_listens; i++)
		if (t->listens[i].port == m->arg)
			L = &t->listens[i];
	if (!L) {
		if (t->n_listens == MAX_LISTEN) {
			emit_error(t, chan, m, -ENOSPC);
			return;
		}
		L = &t->listens[t->n_listens];
		*L = (struct dtcp_listen){.t = t, .port = (uint16_t)m->arg};
		L->l = tcp_listen_on(t->st, L->port, t->cfg.backlog, on_accept, L, &err);
		if (!L->l) {
			emit_error(t, chan, m, err);
			return;
		}
		t->n_listens++;
	}
	for (unsigned i = 0; i < L->n_chans; i++)
		if (L->chans[i] == chan)
			goto listening; /* already */
	if (L->n_chans == MAX_CHANS_PER_PORT) {
		emit_error(t, chan, m, -ENOSPC);
		return;
	}
	L->chans[L->n_chans++] = chan;
listening:
	emit(t, chan, &(struct lunar_msg){.op = DTCP_EV_LISTENING, .arg = m->arg});
}

static void req_connect(struct dtcp *t, unsigned chan, struct lunar_msg *m)
{
	struct dtcp_conn *k = slot_take(t, chan);
	int err = -ENFILE;

	if (k) {
		k->active = true;
		k->cookie = m->conn;
		k->s = tcp_connect_to(t->st, dtcp_addr_ip(m->arg), dtcp_addr_port(m->arg), on_sock,
				      k, &err);
		if (k->s) {
			t->stats.conns_opened++;
			return;
		}
		slot_put(k);
	}
	emit_error(t, chan, m, err);
}

/*
 * A send refused fails every later one on the connection too (-ECANCELED):
 * the stream holds exactly the bytes of the sends before it, never a hole.
 */
static void req_send(struct dtcp *t, unsigned chan, struct lunar_msg *m, struct dtcp_conn *k)
{
	int err = 0;

	if (k->send_err)
		err = -ECANCELED;
	else if (!m->buf || !m->len)
		err = -EINVAL;
	else if (zbuf_span(m->buf) < m->len) /* not Zbuf, or past its object's end */
		err = -EFAULT;
	else if (k->pend_n == t->cfg.send_queue)
		err = -ENOBUFS;
	if (err) {
		if (!k->send_err)
			k->send_err = err;
		t->stats.send_refused++;
		emit_error(t, chan, m, err);
		return;
	}
	k->pend[(k->pend_head + k->pend_n++) % t->cfg.send_queue] = *m;
	if (k->pend_n == 1)
		flush_sends(k);
}

/*
 * Received bytes given back. A slice may come from any thread (one that
 * was handed it): it opens its connection's window all the same. A closed
 * connection's slices are still released; only the window is gone.
 */
static void req_done(struct dtcp *t, unsigned chan, struct lunar_msg *m, struct dtcp_conn *k)
{
	size_t span = m->buf ? zbuf_span(m->buf) : 0;

	/* Not a slice Zbuf handed out (a span of 0: not Zbuf memory at all, whatever the length).
	 */
	if (m->buf && (!span || span < m->len)) {
		t->stats.bad_request++;
		emit_error(t, chan, m, -EFAULT);
		return;
	}
	if (!k) {
		if (m->buf)
			zbuf_unref(m->buf);
		return;
	}
	tcp_sock_zc_done(k->s, m->buf, m->len);
	if (k->rx_waiting)
		deliver(k);
}

static void on_request(struct lunar_chan *ch, unsigned chan, struct lunar_msg *m, void *ctx)
{
	struct dtcp *t = ctx;
	struct dtcp_conn *k;

	(void)ch;
	t->stats.requests++;
	switch (m->op) {
	case DTCP_LISTEN:
		req_listen(t, chan, m);
		return;
	case DTCP_CONNECT:
		req_connect(t, chan, m);
		return;
	case DTCP_SEND:
	case DTCP_DONE:
	case DTCP_CLOSE:
		break;
	default:
		t->stats.bad_request++;
		emit_error(t, chan, m, -EINVAL);
		return;
	}
	k = conn_of(t, m->conn);
	if (m->op == DTCP_DONE) {
		req_done(t, chan, m, k);
		return;
	}
	if (k && k->chan != chan)
		k = NULL; /* another thread's connection */
	if (!k) {
		t->stats.bad_handle++;
		emit_error(t, chan, m, -EBADF);
		return;
	}
	if (m->op == DTCP_SEND) {
		req_send(t, chan, m, k);
	} else if (k->pend_n) {
		k->closing = true;     /* closes once the waiting sends are in */
		k->rx_waiting = false; /* and delivers nothing more */
	} else {
		conn_close(k);
	}
}

/* ---- the service ---- */

int dtcp_create(struct tcp_stack *st, struct lunar_dispatch *d, const struct dtcp_config *cfg,
		struct dtcp **out)
{
	struct dtcp *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->st = st;
	t->d = d;
	if (cfg)
		t->cfg = *cfg;
	if (!t->cfg.max_conns)
		t->cfg.max_conns = 1024;
	if (!t->cfg.backlog)
		t->cfg.backlog = 128;
	if (!t->cfg.send_queue)
		t->cfg.send_queue = 64;
	if (t->cfg.max_conns > (1u << 24) || t->cfg.send_queue > 4096) {
		free(t);
		return -EINVAL;
	}
	t->conns = calloc(t->cfg.max_conns, sizeof(*t->conns));
	t->deferred = calloc(lunar_dispatch_count(d), sizeof(*t->deferred));
	if (t->conns)
		for (unsigned i = 0; i < t->cfg.max_conns; i++) {
			t->conns[i] = (struct dtcp_conn){.t = t, .gen = 1, .next_free = i + 1};
			t->conns[i].pend = calloc(t->cfg.send_queue, sizeof(struct lunar_msg));
			if (!t->conns[i].pend) {
				t->cfg.max_conns = i;
				dtcp_free(t);
				return -ENOMEM;
			}
		}
	if (!t->conns || !t->deferred) {
		dtcp_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

unsigned dtcp_poll(struct dtcp *t)
{
	unsigned n, nch = lunar_dispatch_count(t->d), idx, left;

	for (unsigned c = 0; c < nch; c++)
		flush_deferred(t, c);
	n = lunar_dispatch_poll(t->d, on_request, t, 0);
	/* Deliveries that waited for room (DONEs also restart them as they come);
	 * one still waiting lists itself again. */
	idx = t->wait_head;
	left = t->n_listed;
	t->n_listed = 0; /* taken: deliver() starts a new list */
	while (left--) {
		struct dtcp_conn *k = &t->conns[idx];

		idx = k->next_wait; /* before deliver() lists it again */
		k->listed = false;
		if (k->s && k->rx_waiting && !k->closing)
			deliver(k);
	}
	return n;
}

void dtcp_free(struct dtcp *t)
{
	if (!t)
		return;
	for (unsigned i = 0; t->conns && i < t->cfg.max_conns; i++) {
		struct dtcp_conn *k = &t->conns[i];

		if (k->s) {
			tcp_sock_abort(k->s);
			slot_free(k);
		}
		free(k->pend);
	}
	for (unsigned i = 0; i < t->n_listens; i++)
		tcp_listener_close(t->listens[i].l);
	for (unsigned c = 0; t->deferred && c < lunar_dispatch_count(t->d); c++) {
		struct deferred *q = &t->deferred[c];

		for (unsigned j = 0; j < q->n; j++)
			if (q->m[j].buf)
				zbuf_unref(q->m[j].buf);
		free(q->m);
	}
	free(t->deferred);
	free(t->conns);
	free(t);
}

const struct dtcp_stats *dtcp_stats(const struct dtcp *t)
{
	return &t->stats;
}

unsigned dtcp_conns(const struct dtcp *t)
{
	return t->n_open;
}

uint32_t dtcp_held(struct dtcp *t, uint64_t conn)
{
	struct dtcp_conn *k = conn_of(t, conn);

	return k ? tcp_sock_held(k->s) : 0;
}

void dtcp_dump(const struct dtcp *t, FILE *f)
{
	const struct dtcp_stats *s = &t->stats;

	fprintf(f,
		"dtcp: requests %lu bad_handle %lu bad_request %lu send_refused %lu "
		"conns_opened %lu conns_accepted %lu conns_closed %lu open %u data_events %lu "
		"rx_bytes %lu tx_bytes %lu rx_waits %lu deferred %lu events_lost %lu\n",
		(unsigned long)s->requests, (unsigned long)s->bad_handle,
		(unsigned long)s->bad_request, (unsigned long)s->send_refused,
		(unsigned long)s->conns_opened, (unsigned long)s->conns_accepted,
		(unsigned long)s->conns_closed, t->n_open, (unsigned long)s->data_events,
		(unsigned long)s->rx_bytes, (unsigned long)s->tx_bytes, (unsigned long)s->rx_waits,
		(unsigned long)s->deferred, (unsigned long)s->events_lost);
}
