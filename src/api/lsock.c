/*
 * lsock.c - the socket-like interface and its readiness sets (see lsock.h).
 *
 * An lsock wraps a tcp_sock or a tcp_listener. The stack's callbacks (run
 * after each receive burst) only note that something happened and put the
 * socket on its set's ready list; lpoll_wait() then asks the connection
 * itself what is true now. So the list may hold sockets that turn out not
 * to be ready (they are dropped) but never misses one that is.
 */
#include "api/lsock.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "tcp/tcp_stack.h"

struct lsock {
	struct tcp_stack *st;
	struct tcp_sock *ts;	 /* a connection, or */
	struct tcp_listener *tl; /* a listening socket */
	bool wr_shut;		 /* lsock_shutdown() was called */
	/* readiness set membership */
	struct lpoll *ep;
	uint32_t interest; /* LPOLL_* including ET / ONESHOT */
	uint64_t data;
	bool armed;  /* ONESHOT: not yet reported since the last ADD/MOD */
	bool edge;   /* ET: the stack reported something since the last report */
	bool queued; /* on ep's ready list */
	struct lsock *rprev, *rnext;
	struct lsock *mprev, *mnext; /* ep's members */
};

struct lpoll {
	struct lsock *head, *tail; /* the ready list: sockets that may be ready */
	unsigned n;
	struct lsock *members; /* every socket added, ready or not */
};

#define LPOLL_ALWAYS (LPOLL_ERR | LPOLL_HUP)
#define LPOLL_VALID                                                                                \
	(LPOLL_IN | LPOLL_OUT | LPOLL_ERR | LPOLL_HUP | LPOLL_RDHUP | LPOLL_ONESHOT | LPOLL_ET)

/* ---- the ready list ---- */

static void ready_push(struct lpoll *ep, struct lsock *s)
{
	s->queued = true;
	s->rnext = NULL;
	s->rprev = ep->tail;
	if (ep->tail)
		ep->tail->rnext = s;
	else
		ep->head = s;
	ep->tail = s;
	ep->n++;
}

static void ready_remove(struct lpoll *ep, struct lsock *s)
{
	if (!s->queued)
		return;
	if (s->rprev)
		s->rprev->rnext = s->rnext;
	else
		ep->head = s->rnext;
	if (s->rnext)
		s->rnext->rprev = s->rprev;
	else
		ep->tail = s->rprev;
	s->queued = false;
	s->rprev = s->rnext = NULL;
	ep->n--;
}

static void member_add(struct lpoll *ep, struct lsock *s)
{
	s->ep = ep;
	s->mprev = NULL;
	s->mnext = ep->members;
	if (ep->members)
		ep->members->mprev = s;
	ep->members = s;
}

/* @s leaves its set: off the ready list and the members. */
static void member_remove(struct lsock *s)
{
	struct lpoll *ep = s->ep;

	ready_remove(ep, s);
	if (s->mprev)
		s->mprev->mnext = s->mnext;
	else
		ep->members = s->mnext;
	if (s->mnext)
		s->mnext->mprev = s->mprev;
	s->mprev = s->mnext = NULL;
	s->ep = NULL;
}

/*
 * The stack says something happened to @s: it may be ready for the
 * LPOLL_* bits @may. An edge is an event the registration asked for (as
 * epoll wakes only on interest): an ACK freeing send space is no new edge
 * for a socket that waits only to read.
 */
static void note_event(struct lsock *s, uint32_t may)
{
	if (may & (s->interest | LPOLL_ALWAYS))
		s->edge = true;
	if (s->ep && !s->queued && s->armed)
		ready_push(s->ep, s);
}

/* The LPOLL_* conditions TCP's events @ev may have made true. */
static uint32_t lpoll_bits_of(uint32_t ev)
{
	uint32_t r = 0;

	if (ev & (TCP_EV_READABLE | TCP_EV_EOF))
		r |= LPOLL_IN | LPOLL_RDHUP;
	if (ev & (TCP_EV_CONNECTED | TCP_EV_WRITABLE))
		r |= LPOLL_OUT;
	if (ev & (TCP_EV_RESET | TCP_EV_TIMEOUT | TCP_EV_CLOSED))
		r |= LPOLL_ALWAYS | LPOLL_IN;
	return r;
}

/* ---- what is true now ---- */

static bool can_send_state(enum tcp_state st)
{
	return st == TCP_ESTABLISHED || st == TCP_CLOSE_WAIT;
}

/* Every LPOLL_* condition that holds for @s now (interest not applied). */
static uint32_t ready_bits(const struct lsock *s)
{
	const struct tcp_conn *c;
	uint32_t r = 0;

	if (s->tl)
		return tcp_listener_ready(s->tl) ? LPOLL_IN : 0;
	c = tcp_sock_conn(s->ts);
	if (c->error)
		return LPOLL_ERR | LPOLL_HUP | LPOLL_IN; /* recv() says why */
	if (tcp_recv_bytes(c) || c->fin_rcvd)
		r |= LPOLL_IN;
	if (c->fin_rcvd)
		r |= LPOLL_RDHUP;
	if (can_send_state(c->state) && !s->wr_shut && tcp_sock_send_space(s->ts))
		r |= LPOLL_OUT;
	if (c->state == TCP_CLOSED || (c->fin_rcvd && s->wr_shut))
		r |= LPOLL_HUP;
	return r;
}

/* ---- sockets ---- */

static void on_sock_event(struct tcp_sock *ts, uint32_t ev, void *ctx)
{
	(void)ts;
	note_event(ctx, lpoll_bits_of(ev));
}

static void on_listener_event(struct tcp_listener *l, void *ctx)
{
	(void)l;
	note_event(ctx, LPOLL_IN);
}

static struct lsock *lsock_new(struct tcp_stack *st, int *err)
{
	struct lsock *s = calloc(1, sizeof(*s));

	if (!s)
		*err = -ENOMEM;
	else
		s->st = st;
	return s;
}

struct lsock *lsock_listen(struct tcp_stack *st, uint16_t port, unsigned backlog, int *err)
{
	struct lsock *s = lsock_new(st, err);

	if (s && !(s->tl = tcp_listen_on(st, port, backlog, on_listener_event, s, err))) {
		free(s);
		s = NULL;
	}
	return s;
}

struct lsock *lsock_accept(struct lsock *ls, int *err)
{
	struct lsock *s;

	if (!ls->tl) {
		*err = -EINVAL;
		return NULL;
	}
	if (!tcp_listener_ready(ls->tl)) {
		*err = -EAGAIN;
		return NULL;
	}
	s = lsock_new(ls->st, err);
	if (!s)
		return NULL;
	s->ts = tcp_accept(ls->tl, on_sock_event, s);
	if (!s->ts) { /* every ready one died before it was taken */
		free(s);
		*err = -EAGAIN;
		return NULL;
	}
	*err = 0;
	return s;
}

struct lsock *lsock_connect(struct tcp_stack *st, uint32_t addr, uint16_t port, int *err)
{
	struct lsock *s = lsock_new(st, err);

	if (s && !(s->ts = tcp_connect_to(st, addr, port, on_sock_event, s, err))) {
		free(s);
		s = NULL;
	}
	return s;
}

/* Why @s cannot send now, or 0 if it can. */
static int send_check(const struct lsock *s)
{
	const struct tcp_conn *c;

	if (s->tl)
		return -EINVAL;
	c = tcp_sock_conn(s->ts);
	if (c->error)
		return c->error;
	if (s->wr_shut)
		return -EPIPE;
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED)
		return -EAGAIN; /* still connecting */
	if (!can_send_state(c->state))
		return -EPIPE;
	return 0;
}

ssize_t lsock_send(struct lsock *s, const void *buf, size_t len)
{
	int rc = send_check(s);

	if (rc)
		return rc;
	if (!len)
		return 0;
	rc = tcp_sock_send(s->ts, buf, len);
	return rc ? rc : -EAGAIN;
}

ssize_t lsock_send_zc(struct lsock *s, const struct lsock_iov *iov, unsigned n)
{
	ssize_t done = 0;
	int rc = send_check(s);

	if (rc)
		return rc;
	for (unsigned i = 0; i < n; i++) {
		if (!iov[i].len)
			continue;
		rc = tcp_sock_send_zc(s->ts, iov[i].base, iov[i].len);
		if (rc < 0)
			return done ? done : rc;
		done += rc;
		if ((uint32_t)rc < iov[i].len)
			break;
	}
	return done ? done : -EAGAIN;
}

/* What a read that found nothing queued returns: EOF, the error, or try again. */
static int recv_empty(const struct lsock *s)
{
	const struct tcp_conn *c;

	if (s->tl)
		return -EINVAL;
	c = tcp_sock_conn(s->ts);
	if (c->error)
		return c->error;
	/*
	 * The end of the stream; or a connection closed with no error and no
	 * FIN (lsock_shutdown() while connecting): nothing will ever come, and
	 * -EAGAIN would keep a reader that LPOLL_HUP woke spinning.
	 */
	if (c->fin_rcvd || c->state == TCP_CLOSED)
		return 0;
	return -EAGAIN;
}

ssize_t lsock_recv(struct lsock *s, void *buf, size_t len)
{
	if (!s->tl && len && tcp_sock_readable(s->ts))
		return (ssize_t)tcp_sock_read(s->ts, buf, len);
	return len || s->tl ? recv_empty(s) : 0;
}

int lsock_recv_zc(struct lsock *s, struct tcp_slice *out, unsigned max)
{
	unsigned n;

	if (s->tl || !max)
		return s->tl ? -EINVAL : 0;
	n = tcp_sock_read_zc(s->ts, out, max);
	return n ? (int)n : recv_empty(s);
}

void lsock_recv_zc_done(struct lsock *s, const struct tcp_slice *sl)
{
	tcp_sock_zc_done(s ? s->ts : NULL, sl->data, sl->len);
}

uint32_t lsock_readable(const struct lsock *s)
{
	return s->tl ? 0 : tcp_sock_readable(s->ts);
}

uint32_t lsock_send_space(const struct lsock *s)
{
	return s->tl || send_check(s) ? 0 : tcp_sock_send_space(s->ts);
}

int lsock_shutdown(struct lsock *s)
{
	if (s->tl)
		return -ENOTCONN;
	if (!s->wr_shut) {
		s->wr_shut = true;
		tcp_sock_shutdown(s->ts);
	}
	return 0;
}

int lsock_error(const struct lsock *s)
{
	return s->tl ? 0 : tcp_sock_conn(s->ts)->error;
}

const struct tcp_4tuple *lsock_tuple(const struct lsock *s)
{
	return s->tl ? NULL : &tcp_sock_conn(s->ts)->tuple;
}

void lsock_close(struct lsock *s)
{
	if (!s)
		return;
	if (s->ep)
		member_remove(s);
	if (s->tl)
		tcp_listener_close(s->tl);
	else
		tcp_sock_close(s->ts); /* no more callbacks: the stack frees it when done */
	free(s);
}

/* ---- readiness sets ---- */

struct lpoll *lpoll_create(void)
{
	return calloc(1, sizeof(struct lpoll));
}

void lpoll_free(struct lpoll *ep)
{
	if (!ep)
		return;
	while (ep->members) /* each leaves the set, ready or not, and may join another */
		member_remove(ep->members);
	free(ep);
}

/* After ADD or MOD: report what is already true at the next wait. */
static void arm(struct lpoll *ep, struct lsock *s, uint32_t events, uint64_t data)
{
	s->interest = events;
	s->data = data;
	s->armed = true;
	s->edge = true;
	if (!s->queued)
		ready_push(ep, s);
}

int lpoll_ctl(struct lpoll *ep, enum lpoll_op op, struct lsock *s, uint32_t events, uint64_t data)
{
	if (events & ~(uint32_t)LPOLL_VALID)
		return -EINVAL;
	switch (op) {
	case LPOLL_CTL_ADD:
		if (s->ep)
			return -EEXIST;
		member_add(ep, s);
		arm(ep, s, events, data);
		return 0;
	case LPOLL_CTL_MOD:
		if (s->ep != ep)
			return -ENOENT;
		arm(ep, s, events, data);
		return 0;
	case LPOLL_CTL_DEL:
		if (s->ep != ep)
			return -ENOENT;
		member_remove(s);
		return 0;
	}
	return -EINVAL;
}

int lpoll_wait(struct lpoll *ep, struct lpoll_event *out, unsigned max)
{
	unsigned n = 0, todo = ep->n;

	if (!max)
		return -EINVAL;
	/*
	 * Visit each listed socket once, oldest first; a level-triggered one
	 * still ready goes to the back, so a busy socket cannot starve the rest
	 * when @max is smaller than the list.
	 */
	while (n < max && todo--) {
		struct lsock *s = ep->head;
		uint32_t now = s->armed ? ready_bits(s) : 0;
		uint32_t bits = now & (s->interest | LPOLL_ALWAYS);
		bool et = s->interest & LPOLL_ET;

		/* Waiting for room the stack-wide memory cap withholds: be told when it frees. */
		if (s->armed && (s->interest & LPOLL_OUT) && !(now & LPOLL_OUT) && s->ts &&
		    !s->wr_shut)
			tcp_sock_want_space(s->ts);

		ready_remove(ep, s);
		if (!bits || (et && !s->edge))
			continue;
		out[n++] = (struct lpoll_event){.events = bits, .data = s->data};
		s->edge = false;
		if (s->interest & LPOLL_ONESHOT)
			s->armed = false;
		else if (!et)
			ready_push(ep, s);
	}
	return (int)n;
}
