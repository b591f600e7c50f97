/*
 * knb_lunar.c - knb over lunar: one run-to-completion loop per worker
 * (--core 0,1 runs two, each on its own queue with its own connections;
 * the results are merged as the kernel stack's threads are).
 * Requests and bulk data are sent zero-copy from one Zbuf buffer (each send
 * takes a reference); received data is read zero-copy; the server echoes
 * the received frames themselves back (bounded in flight, as lunar-httpd).
 * --api copy is the socket-like interface instead (api/lsock.h): non-blocking
 * copying calls driven by an epoll-like readiness set, no callbacks.
 */
#include "knb.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "api/dispatch_tcp.h"
#include "api/lsock.h"
#include "base/cost.h"
#include "loop/env.h"
#include "loop/kernel_poll.h"
#include "mem/zbuf.h"
#include "port/port.h"
#include "tcp/tcp_stack.h"

#define PEND_MAX      64
#define ECHO_INFLIGHT (256u << 10) /* echoed bytes not yet acknowledged, per connection */

struct lconn {
	struct lctx *L;
	struct tcp_sock *s; /* callback interfaces (batch, inline) */
	struct lsock *ls;   /* the socket-like interface (copy) */
	struct knb_flow f;
	bool connected, closed, eof;
	uint16_t lport, rport;		 /* client: the connection's ports, for --verbose */
	struct tcp_slice pend[PEND_MAX]; /* server RPC: received, not yet echoed */
	unsigned pend_n, pend_head;
	uint32_t pend_off;
};

struct lctx {
	const struct knb_config *c;
	struct lunar_env *env; /* this worker */
	struct knb_result *r;  /* client: this worker's thread result goes to r->threads[index] */
	struct knb_meter meter;
	struct lconn **conns;
	unsigned n, cap;
	uint8_t *payload; /* KNB_BULK_CHUNK bytes of Zbuf memory */
	uint32_t snd_buf; /* each connection's send buffer */
	uint8_t *scratch; /* --api copy: where reads land (KNB_BULK_CHUNK bytes) */
	struct lpoll *ep; /* --api copy: this worker's readiness set */
	char err[300];
};

static void set_err(struct lctx *L, const char *msg)
{
	if (!L->err[0])
		snprintf(L->err, sizeof(L->err), "%s", msg);
}

static uint64_t now(struct lctx *L)
{
	return lunar_env_now_ns(L->env);
}

/* The time for knb_flow_on_tx()/_on_rx() of @n bytes, read only when the flow uses it. */
static uint64_t flow_time(struct lconn *k, uint64_t n, bool tx)
{
	return knb_flow_needs_time(&k->f, n, tx) ? now(k->L) : 0;
}

/*
 * Let go of the socket: no more events for us, then a graceful close (or a
 * RST). The stack frees it when the connection ends; the lconn stays until
 * the loop reaps it, so a callback that called this may still look at it.
 */
static void drop_sock(struct lconn *k, bool abort)
{
	k->closed = true;
	if (k->ls) {
		lsock_close(k->ls); /* a RST if data was left unread */
		k->ls = NULL;
	}
	if (!k->s)
		return;
	tcp_sock_set_ctx(k->s, NULL, NULL);
	if (abort)
		tcp_sock_abort(k->s);
	else
		tcp_sock_close(k->s);
	k->s = NULL;
}

static enum knb_api L_api(const struct lconn *k)
{
	return k->L->c->api;
}

/* The connection failed with @err (-ETIMEDOUT, -ECONNRESET, -ECONNREFUSED). */
static void conn_failed(struct lconn *k, int err)
{
	if (k->f.client)
		set_err(k->L, err == -ETIMEDOUT ? "a connection timed out"
			      : k->connected
				  ? "the server reset a connection"
				  : "connection refused: is a knb server listening there?");
	drop_sock(k, false); /* CLOSED already: this frees it */
}

/*
 * The RPC server's echo (zero-copy interfaces): the received slices still
 * waiting go back in one send, bounded in flight, and those sent whole are
 * given back in one call (the send buffer holds its own references).
 */
static void echo_out(struct lconn *k)
{
	struct tcp_iov v[PEND_MAX];
	uint64_t budget = knb_flow_tx_budget(&k->f);
	uint32_t held = k->L->snd_buf - tcp_sock_send_space(k->s), room, total = 0, sent;
	unsigned n = 0, first = k->pend_head, whole = 0;
	int rc;

	if (!k->pend_n || !budget || held >= ECHO_INFLIGHT)
		return;
	room = ECHO_INFLIGHT - held;
	if (room > budget)
		room = (uint32_t)budget;
	for (unsigned i = 0; i < k->pend_n && total < room; i++) {
		const struct tcp_slice *sl = &k->pend[k->pend_head + i];
		uint32_t off = i ? 0 : k->pend_off, len = sl->len - off;

		if (len > room - total)
			len = room - total;
		v[n++] = (struct tcp_iov){sl->data + off, len};
		total += len;
	}
	rc = tcp_sock_send_zcv(k->s, v, n);
	if (rc <= 0)
		return;				/* TCP_EV_WRITABLE, or the loop, resumes */
	knb_flow_on_tx(&k->f, (uint64_t)rc, 0); /* a server's sends use no time */
	for (sent = (uint32_t)rc; k->pend_n && sent >= k->pend[k->pend_head].len - k->pend_off;
	     whole++) {
		sent -= k->pend[k->pend_head].len - k->pend_off;
		k->pend_head++;
		k->pend_n--;
		k->pend_off = 0;
	}
	k->pend_off += sent;
	tcp_sock_zc_done_v(k->s, &k->pend[first], whole);
	if (!k->pend_n)
		k->pend_head = 0;
}

/* Send the handshake, then what the flow may send now. */
static void pump_out(struct lconn *k)
{
	const uint8_t *p;
	uint32_t hs = knb_flow_hs_pending(&k->f, &p);
	uint64_t budget;

	if (k->closed)
		return;
	if (hs) {
		int rc;

		if (L_api(k) == KNB_API_COPY) {
			rc = (int)lsock_send(k->ls, p, hs);
		} else {
			/*
			 * LUNA's send path: the application writes into Zbuf memory and sends it.
			 */
			uint8_t *z = zbuf_alloc(hs);

			if (!z)
				return;
			memcpy(z, p, hs);
			rc = tcp_sock_send_zc(k->s, z, hs);
			zbuf_unref(z); /* the send buffer holds its own reference */
		}

		if (rc > 0)
			knb_flow_hs_sent(&k->f, (uint32_t)rc);
		if (rc < (int)hs)
			return;
		if (k->f.close_after_hs) {
			drop_sock(k, false);
			return;
		}
	}
	if (!k->f.client && k->f.kind == KNB_FLOW_RPC) {
		if (L_api(k) != KNB_API_COPY) /* pump_in_copy echoes as it reads */
			echo_out(k);	      /* the received frames themselves */
		return;
	}
	while ((budget = knb_flow_tx_budget(&k->f)) > 0) {
		uint32_t len = budget < KNB_BULK_CHUNK ? (uint32_t)budget : KNB_BULK_CHUNK;
		const uint8_t *src = k->L->payload;
		int rc;

		rc = L_api(k) == KNB_API_COPY ? (int)lsock_send(k->ls, src, len)
					      : tcp_sock_send_zc(k->s, src, len);
		if (rc <= 0)
			return; /* TCP_EV_WRITABLE, or the loop, resumes */
		knb_flow_on_tx(&k->f, (uint64_t)rc, flow_time(k, (uint64_t)rc, true));
		if ((uint32_t)rc < len)
			return;
	}
}

/*
 * --api copy: the socket-like calls. Reads copy into scratch; the echo
 * server copies straight back out, reading no more than the send buffer
 * takes, so nothing waits in between.
 */
static void pump_in_copy(struct lconn *k)
{
	struct lctx *L = k->L;

	while (!k->closed) {
		size_t room = KNB_BULK_CHUNK, got;
		ssize_t n;
		bool echo = !k->f.client && k->f.kind == KNB_FLOW_RPC && k->f.ready;
		int hs = 0;

		if (!k->f.ready)
			room = k->f.hs_in_len - k->f.hs_in_got; /* the hello decides the rest */
		if (echo && lsock_send_space(k->ls) < room)
			room = lsock_send_space(k->ls);
		if (!room)
			return; /* still readable: the next wait comes back */
		n = lsock_recv(k->ls, L->scratch, room);
		if (n == 0)
			k->eof = true;
		if (n < 0 && n != -EAGAIN)
			conn_failed(k, (int)n);
		if (n <= 0)
			return;
		got = (size_t)n;
		if (!k->f.ready) {
			hs = knb_flow_hs_received(&k->f, L->scratch, (uint32_t)got);
			if (hs < 0) {
				if (k->f.client)
					set_err(L, k->f.error);
				drop_sock(k, true);
				return;
			}
		}
		if (got > (size_t)hs) {
			uint32_t rest = (uint32_t)got - (uint32_t)hs;

			if (knb_flow_on_rx(&k->f, rest, flow_time(k, rest, false)) < 0) {
				set_err(L, k->f.error); /* a client's: more than it asked for */
				drop_sock(k, true);
				return;
			}
			if (!k->f.client && k->f.kind == KNB_FLOW_RPC) {
				int rc = (int)lsock_send(k->ls, L->scratch + hs, rest);

				if (rc > 0)
					knb_flow_on_tx(&k->f, (uint64_t)rc,
						       flow_time(k, (uint64_t)rc, true));
			}
		}
		pump_out(k);
	}
}

/* Take what arrived: handshake bytes, then payload (kept for the echo, or counted). */
static void pump_in(struct lconn *k)
{
	if (L_api(k) == KNB_API_COPY) {
		pump_in_copy(k);
		return;
	}
	struct lctx *L = k->L;
	bool echo = !k->f.client && k->f.kind == KNB_FLOW_RPC;

	while (!k->closed) {
		struct tcp_slice sl[32];
		unsigned room, n, done = 0;

		if (k->pend_head) {
			/* Room at the end of the backlog for what is read next. */
			memmove(k->pend, k->pend + k->pend_head, k->pend_n * sizeof(k->pend[0]));
			k->pend_head = 0;
		}
		room = echo || !k->f.ready ? PEND_MAX - k->pend_n : 32;

		if (!k->f.ready && !k->f.client)
			room = 1; /* the hello decides whether this is an echo */
		if (room > 32)
			room = 32;
		if (!room)
			return; /* echo backlog full: pump_out frees it */
		n = tcp_sock_read_zc(k->s, sl, room);
		if (!n)
			return;
		for (unsigned i = 0; i < n; i++) {
			int hs = k->closed ? (int)sl[i].len
					   : knb_flow_hs_received(&k->f, sl[i].data, sl[i].len);
			uint32_t rest;

			if (hs < 0) {
				if (k->f.client)
					set_err(L, k->f.error);
				drop_sock(k, true);
				hs = (int)sl[i].len;
			}
			rest = sl[i].len - (uint32_t)hs;
			/* the hello, consumed */
			if (hs && rest)
				tcp_sock_zc_done(k->s, NULL, (uint32_t)hs);
			echo = !k->f.client && k->f.kind == KNB_FLOW_RPC && k->f.ready;
			if (rest) {
				if (knb_flow_on_rx(&k->f, rest, flow_time(k, rest, false)) < 0) {
					set_err(L, k->f.error); /* more than it asked for */
					drop_sock(k, true);
				} else if (echo) {
					unsigned at = k->pend_head + k->pend_n++;

					k->pend[at] =
					    (struct tcp_slice){.seq = sl[i].seq + (uint32_t)hs,
							       .len = rest,
							       .data = sl[i].data + hs};
					continue; /* keeps the reference */
				}
			}
			/* Given back together after the loop: one call, one window update. */
			sl[done] = sl[i];
			sl[done++].len = rest ? rest : sl[i].len;
		}
		tcp_sock_zc_done_v(k->s, sl, done);
		if (k->closed)
			return;
		pump_out(k);
	}
}

static void on_event(struct tcp_sock *s, uint32_t ev, void *ctx)
{
	struct lconn *k = ctx;

	(void)s;
	if (ev & (TCP_EV_RESET | TCP_EV_TIMEOUT)) {
		conn_failed(k, ev & TCP_EV_TIMEOUT ? -ETIMEDOUT : -ECONNRESET);
		return;
	}
	if (ev & TCP_EV_CONNECTED)
		k->connected = true;
	if ((ev & TCP_EV_READABLE) && k->L->c->app_stall_us && !k->f.client) {
		uint64_t until = now(k->L) + k->L->c->app_stall_us * 1000ull;

		while (now(k->L) < until)
			; /* the application stalls inside its callback */
	}
	if (ev & TCP_EV_READABLE)
		pump_in(k);
	if (ev & TCP_EV_EOF)
		k->eof = true;
	if ((ev & (TCP_EV_CONNECTED | TCP_EV_WRITABLE)) && !k->closed)
		pump_out(k);
	if (k->eof && !k->f.client && !k->closed)
		drop_sock(k, false); /* the client is done */
}

/* A connection's readiness, in the socket-like interface: what on_event does for callbacks. */
static void on_ready(struct lconn *k, uint32_t ev)
{
	if (k->closed)
		return;
	if (ev & LPOLL_ERR) {
		conn_failed(k, lsock_error(k->ls));
		return;
	}
	if ((ev & LPOLL_OUT) && !k->connected) {
		/* Connected (a non-blocking connect's first OUT); from now on the
		 * loop sends, and readiness is wanted for reading only. */
		k->connected = true;
		lpoll_ctl(k->L->ep, LPOLL_CTL_MOD, k->ls, LPOLL_IN | LPOLL_RDHUP,
			  (uint64_t)(uintptr_t)k);
	}
	if (ev & LPOLL_IN)
		pump_in(k);
	if (k->connected && !k->closed)
		pump_out(k);
	if (k->eof && !k->f.client && !k->closed)
		drop_sock(k, false); /* the client is done */
}

static struct lconn *new_conn(struct lctx *L);

/* Every connection a listening socket has ready (the socket-like interface). */
static void accept_ready(struct lctx *L, struct lsock *ls)
{
	struct lsock *s;
	int err;

	while ((s = lsock_accept(ls, &err))) {
		struct lconn *k = new_conn(L);

		if (!k) {
			lsock_close(s);
			continue;
		}
		k->ls = s;
		k->connected = true;
		knb_flow_server(&k->f, L->env->index, L->env->n_workers, L->c->proto_version,
				&L->meter);
		if (lpoll_ctl(L->ep, LPOLL_CTL_ADD, s, LPOLL_IN | LPOLL_RDHUP,
			      (uint64_t)(uintptr_t)k))
			drop_sock(k, true);
	}
}

/* Listening sockets are registered with their low bit set; connections are lconns. */
#define LISTENER_TAG 1u

/* One loop iteration: the stack, then (socket-like interface) what became ready. */
static void step(struct lctx *L)
{
	struct lpoll_event ev[64];
	int n;

	lunar_env_poll(L->env);
	if (!L->ep)
		return;
	n = lpoll_wait(L->ep, ev, 64);
	for (int i = 0; i < n; i++) {
		if (ev[i].data & LISTENER_TAG)
			accept_ready(
			    L, (struct lsock *)(uintptr_t)(ev[i].data & ~(uint64_t)LISTENER_TAG));
		else
			on_ready((struct lconn *)(uintptr_t)ev[i].data, ev[i].events);
	}
}

static struct lconn *new_conn(struct lctx *L)
{
	struct lconn *k;

	if (L->n == L->cap) {
		unsigned ncap = L->cap ? L->cap * 2 : 64;
		struct lconn **v = realloc(L->conns, ncap * sizeof(*v));

		if (!v)
			return NULL;
		L->conns = v;
		L->cap = ncap;
	}
	k = calloc(1, sizeof(*k));
	if (k) {
		k->L = L;
		L->conns[L->n++] = k;
	}
	return k;
}

static void release_pending(struct lconn *k)
{
	for (unsigned i = 0; i < k->pend_n; i++)
		tcp_sock_zc_done(k->s, k->pend[k->pend_head + i].data,
				 k->pend[k->pend_head + i].len);
	k->pend_n = 0;
}

static void on_accept(struct tcp_listener *l, void *ctx)
{
	struct lctx *L = ctx;

	for (;;) {
		struct lconn *k = new_conn(L);
		struct tcp_sock *s;

		if (!k) {
			s = tcp_accept(l, NULL, NULL);
			if (!s)
				return;
			tcp_sock_abort(s);
			continue;
		}
		s = tcp_accept(l, on_event, k);
		if (!s) {
			free(k);
			L->n--;
			return;
		}
		k->s = s;
		k->connected = true;
		tcp_sock_set_inline(s, L->c->api == KNB_API_INLINE);
		knb_flow_server(&k->f, L->env->index, L->env->n_workers, L->c->proto_version,
				&L->meter);
		pump_in(k);
	}
}

/* Server: free the connections that ended, keep the rest. */
static void reap(struct lctx *L)
{
	unsigned w = 0;

	for (unsigned i = 0; i < L->n; i++) {
		struct lconn *k = L->conns[i];

		if (k->closed && !k->f.client) {
			if (k->f.error[0])
				fprintf(stderr, "knb server: %s\n", k->f.error);
			release_pending(k);
			free(k);
			continue;
		}
		L->conns[w++] = k;
	}
	L->n = w;
}

/*
 * --kernel-echo: a kernel TCP echo served by the same run-to-completion
 * loop as lunar's connections (LUNA §7.2): the listening socket and each
 * accepted one are registered with the worker's kernel poller.
 */
static void kecho_conn(int fd, uint32_t ev, void *ctx)
{
	struct lunar_kpoll *kp = ctx;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	(void)ev;
	if (n > 0 && write(fd, buf, (size_t)n) == n)
		return;
	if (n < 0 && errno == EAGAIN)
		return;
	lunar_kpoll_del(kp, fd);
	close(fd);
}

static void kecho_accept(int fd, uint32_t ev, void *ctx)
{
	struct lunar_kpoll *kp = ctx;
	int c;

	(void)ev;
	while ((c = accept4(fd, NULL, NULL, SOCK_NONBLOCK)) >= 0)
		if (lunar_kpoll_add(kp, c, EPOLLIN | EPOLLRDHUP, kecho_conn, kp))
			close(c);
}

static int kecho_open(struct lunar_env *w, uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct lunar_kpoll *kp = lunar_env_kpoll(w);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0 || !kp)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64) ||
	    lunar_kpoll_add(kp, fd, EPOLLIN, kecho_accept, kp)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * --api dispatch (server): dispatch mode (LUNA §5.2). The worker's core
 * runs the stack and a dispatch_tcp service; the application (the echo and
 * the sink) runs on a thread of its own that knows the stack only through
 * its channel, and sleeps when idle. Received slices cross to the thread
 * by reference and go back out the same way: no copy on either side.
 */
#define DISPATCH_MAX_CONNS 4096

struct dapp {
	struct lctx *L;
	struct lunar_chan *ch;
	struct knb_flow *flows; /* by the handle's slot (its low 32 bits) */
	unsigned n_ports;
	atomic_uint listening;
	atomic_bool failed;
};

/* Hand a request to the stack core, which drains the ring every iteration. */
static void dsend(struct dapp *a, const struct lunar_msg *m)
{
	int rc;

	while ((rc = lunar_chan_app_send(a->ch, m)) == -ENOBUFS)
		;
	if (rc && m->buf)
		zbuf_unref(m->buf); /* shut down: nobody takes it (a SEND's or a DONE's) */
}

static void dapp_data(struct dapp *a, const struct lunar_msg *m)
{
	struct knb_flow *f = &a->flows[(uint32_t)m->conn];
	const uint8_t *p = m->buf, *out;
	uint32_t rest, n;
	int hs = 0;

	if (!f->ready) {
		hs = knb_flow_hs_received(f, p, m->len);
		if (hs < 0) {
			fprintf(stderr, "knb server: %s\n", f->error);
			hs = (int)m->len;
		}
		if ((n = knb_flow_hs_pending(f, &out))) {
			uint8_t *z = zbuf_alloc(n);

			if (z) {
				memcpy(z, out, n);
				dsend(a, &(struct lunar_msg){
					     .op = DTCP_SEND, .conn = m->conn, .buf = z, .len = n});
				knb_flow_hs_sent(f, n);
			}
		}
		if (f->close_after_hs || f->error[0])
			dsend(a, &(struct lunar_msg){.op = DTCP_CLOSE, .conn = m->conn});
	}
	rest = m->len - (uint32_t)hs;
	if (rest && f->ready) {
		uint64_t t = lunar_env_now_ns(a->L->env);

		(void)knb_flow_on_rx(f, rest, t); /* a server's: never refused */
		if (f->kind == KNB_FLOW_RPC) {
			/* The echo: the slice's reference moves into the send; the window
			 * opens for the whole message. */
			dsend(a, &(struct lunar_msg){.op = DTCP_SEND,
						     .conn = m->conn,
						     .buf = (uint8_t *)p + hs,
						     .len = rest});
			dsend(a,
			      &(struct lunar_msg){.op = DTCP_DONE, .conn = m->conn, .len = m->len});
			knb_flow_on_tx(f, rest, t);
			return;
		}
		if (f->kind == KNB_FLOW_DOWN && !f->error[0]) {
			snprintf(f->error, sizeof(f->error),
				 "--api dispatch serves rpc and stream "
				 "flows, not the server's sending side");
			fprintf(stderr, "knb server: %s\n", f->error);
			dsend(a, &(struct lunar_msg){.op = DTCP_CLOSE, .conn = m->conn});
		}
	}
	dsend(a,
	      &(struct lunar_msg){.op = DTCP_DONE, .conn = m->conn, .buf = m->buf, .len = m->len});
}

static void *dapp_main(void *arg)
{
	struct dapp *a = arg;
	struct lctx *L = a->L;
	struct lunar_msg m[32];
	int n;

	for (unsigned i = 0; i < a->n_ports; i++)
		dsend(a, &(struct lunar_msg){.op = DTCP_LISTEN, .arg = L->c->port + i});
	while ((n = lunar_chan_app_wait(a->ch, m, 32, 100)) != -EPIPE) {
		for (int i = 0; i < n; i++) {
			switch (m[i].op) {
			case DTCP_EV_LISTENING:
				atomic_fetch_add(&a->listening, 1);
				break;
			case DTCP_EV_ACCEPTED:
				knb_flow_server(&a->flows[(uint32_t)m[i].conn], L->env->index,
						L->env->n_workers, L->c->proto_version, &L->meter);
				break;
			case DTCP_EV_DATA:
				dapp_data(a, &m[i]);
				break;
			case DTCP_EV_EOF: /* the client is done */
				dsend(a, &(struct lunar_msg){.op = DTCP_CLOSE, .conn = m[i].conn});
				break;
			case DTCP_EV_ERROR:
				if (m[i].buf)
					zbuf_unref(m[i].buf);
				if (m[i].len == DTCP_SEND && dtcp_err(&m[i]) != -ECANCELED)
					fprintf(stderr, "knb server: a send was refused: %s\n",
						strerror(-dtcp_err(&m[i])));
				if (m[i].len == DTCP_LISTEN) {
					fprintf(
					    stderr, "knb server: cannot listen on port %lu: %s\n",
					    (unsigned long)L->c->port, strerror(-dtcp_err(&m[i])));
					atomic_store(&a->failed, true);
				}
				break;
			default: /* CLOSED, SENT */
				break;
			}
		}
	}
	return NULL;
}

/* The application thread, on --app-core's CPU if given (else it inherits the stack's). */
static int start_app_thread(pthread_t *th, struct dapp *a)
{
	const struct knb_config *c = a->L->c;
	pthread_attr_t attr;
	cpu_set_t set;
	int rc;

	if (pthread_attr_init(&attr))
		return -1;
	if (c->app_core_given) {
		CPU_ZERO(&set);
		CPU_SET(c->app_core, &set);
		rc = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	} else {
		rc = 0;
	}
	if (!rc)
		rc = pthread_create(th, &attr, dapp_main, a);
	pthread_attr_destroy(&attr);
	if (rc && c->app_core_given)
		fprintf(stderr,
			"knb server: cannot start the application thread on CPU %u (--app-core): "
			"%s; give a CPU this process may run on (taskset -p $$)\n",
			c->app_core, strerror(rc));
	else if (rc)
		fprintf(stderr, "knb server: cannot start the application thread: %s\n",
			strerror(rc));
	return rc ? -1 : 0;
}

static int run_server_dispatch(struct lctx *L)
{
	const struct knb_config *c = L->c;
	struct dtcp_config dc = {.max_conns = DISPATCH_MAX_CONNS};
	struct dapp a = {.L = L, .n_ports = L->env->n_workers};
	struct lunar_dispatch *d = NULL;
	struct dtcp *t = NULL;
	struct lunar_chan_stats cs;
	pthread_t th;
	int rc = 1;

	a.flows = calloc(DISPATCH_MAX_CONNS, sizeof(*a.flows));
	if (!a.flows || lunar_dispatch_create(1, NULL, &d) ||
	    dtcp_create(L->env->tcp, d, &dc, &t)) {
		fprintf(stderr, "knb server: cannot set up dispatch mode: out of memory\n");
		goto out;
	}
	a.ch = lunar_dispatch_chan(d, 0);
	for (unsigned i = 0; i < a.n_ports; i++)
		if (lunar_env_steer_port(L->env, (uint16_t)(c->port + i))) {
			fprintf(stderr, "knb server: cannot steer port %u to lunar\n", c->port + i);
			goto out;
		}
	if (start_app_thread(&th, &a))
		goto out;
	while (atomic_load(&a.listening) < a.n_ports && !atomic_load(&a.failed) &&
	       !knb_stop_requested()) {
		lunar_env_poll(L->env);
		dtcp_poll(t);
	}
	if (!atomic_load(&a.failed)) {
		rc = 0;
		if (L->env->index == 0) {
			printf(
			    "knb server: ready, lunar stack on %s, port %u, %u worker%s, dispatch "
			    "mode\n",
			    L->env->port->name, c->port, L->env->n_workers,
			    L->env->n_workers > 1 ? "s" : "");
			fflush(stdout);
		}
		while (!knb_stop_requested()) {
			lunar_env_poll(L->env);
			/* no yield with the thread's work just taken */
			if (dtcp_poll(t))
				lunar_env_note_work(L->env);
		}
	}
	lunar_dispatch_shutdown(d);
	pthread_join(th, NULL);
	if (c->lo.verbose) {
		lunar_chan_stats(a.ch, &cs);
		dtcp_dump(t, stdout);
		printf(
		    "chan: to_app %lu from_app %lu app_full %lu wakeups %lu wakeups_deferred %lu "
		    "handoffs %lu sleeps %lu spins %lu spins_skipped %lu\n",
		    (unsigned long)cs.to_app, (unsigned long)cs.from_app,
		    (unsigned long)cs.app_full, (unsigned long)cs.wakeups,
		    (unsigned long)cs.wakeups_deferred, (unsigned long)lunar_dispatch_handoffs(d),
		    (unsigned long)cs.sleeps, (unsigned long)cs.spins,
		    (unsigned long)cs.spins_skipped);
	}
out:
	dtcp_free(t);
	if (d)
		lunar_dispatch_free(d, NULL, NULL);
	free(a.flows);
	return rc;
}

static int run_server(struct lctx *L)
{
	const struct knb_config *c = L->c;
	struct tcp_listener *l[KNB_MAX_THREADS] = {0};
	struct lsock *ls[KNB_MAX_THREADS] = {0};
	unsigned n = L->env->n_workers;
	int err = 0, rc = 0;

	if (c->api == KNB_API_DISPATCH)
		return run_server_dispatch(L);
	/*
	 * Every worker listens on PORT..PORT+n-1 (a client's server thread s
	 * dials PORT+s); the flow plan gives each connection to one worker.
	 */
	for (unsigned i = 0; i < n; i++) {
		uint16_t port = (uint16_t)(c->port + i);

		if (L->ep) {
			ls[i] = lsock_listen(L->env->tcp, port, 1024, &err);
			if (ls[i] && lpoll_ctl(L->ep, LPOLL_CTL_ADD, ls[i], LPOLL_IN,
					       (uint64_t)(uintptr_t)ls[i] | LISTENER_TAG))
				err = -ENOMEM;
		} else {
			l[i] = tcp_listen_on(L->env->tcp, port, 1024, on_accept, L, &err);
		}
		if ((!l[i] && !ls[i]) || err || lunar_env_steer_port(L->env, port)) {
			fprintf(stderr, "knb server: cannot listen on port %u: %s%s\n", port,
				strerror(err ? -err : EIO),
				err == -EADDRNOTAVAIL ? " (it lies in --reserved, the workers' "
							"client ports: listen below the range)"
						      : "");
			rc = 1;
			goto out;
		}
	}
	if (L->env->index == 0 && c->kernel_echo_port &&
	    kecho_open(L->env, (uint16_t)c->kernel_echo_port) < 0) {
		fprintf(stderr, "knb server: cannot serve the kernel echo on 127.0.0.1:%u: %s\n",
			c->kernel_echo_port, strerror(errno));
		rc = 1;
		goto out;
	}
	if (L->env->index == 0) {
		printf("knb server: ready, lunar stack on %s, port %u, %u worker%s\n",
		       L->env->port->name, c->port, n, n > 1 ? "s" : "");
		fflush(stdout);
	}
	while (!knb_stop_requested()) {
		step(L);
		for (unsigned i = 0; i < L->n; i++)
			if (knb_flow_tx_budget(&L->conns[i]->f))
				pump_out(L->conns[i]);
		reap(L);
	}
out:
	for (unsigned i = 0; i < n; i++) {
		if (l[i])
			tcp_listener_close(l[i]);
		lsock_close(ls[i]);
	}
	return rc;
}

static int connect_all(struct lctx *L)
{
	const struct knb_config *c = L->c;
	struct knb_flow_spec plan[KNB_MAX_FLOWS];
	unsigned nflows = knb_plan(c, L->env->index, plan, KNB_MAX_FLOWS), ready = 0;
	uint64_t deadline = now(L) + (uint64_t)(c->connect_timeout_s * 1e9);

	while (!port_link_up(L->env->port)) {
		if (now(L) > deadline || knb_stop_requested()) {
			set_err(L,
				"the link did not come up within --connect-timeout (is the memif "
				"server running?)");
			return -1;
		}
		step(L);
	}
	for (unsigned i = 0; i < nflows; i++) {
		struct lconn *k = new_conn(L);
		const struct tcp_4tuple *t;
		int err = 0;

		if (!k)
			return -1;
		knb_flow_client(&k->f, &plan[i], L->env->index, c->proto_version, &L->meter);
		if (L->ep) {
			k->ls = lsock_connect(L->env->tcp, c->addr,
					      (uint16_t)(c->port + plan[i].server_thread), &err);
			if (k->ls &&
			    lpoll_ctl(L->ep, LPOLL_CTL_ADD, k->ls,
				      LPOLL_IN | LPOLL_OUT | LPOLL_RDHUP, (uint64_t)(uintptr_t)k))
				err = -ENOMEM;
		} else {
			k->s = tcp_connect_to(L->env->tcp, c->addr,
					      (uint16_t)(c->port + plan[i].server_thread), on_event,
					      k, &err);
			if (k->s)
				tcp_sock_set_inline(k->s, c->api == KNB_API_INLINE);
		}
		if ((!k->s && !k->ls) || err) {
			char m[160];

			snprintf(m, sizeof(m), "cannot connect: %s", strerror(-err));
			set_err(L, m);
			return -1;
		}
		t = k->ls ? lsock_tuple(k->ls) : &tcp_sock_conn(k->s)->tuple;
		k->lport = t->lport;
		k->rport = t->rport;
	}
	while (ready < L->n) {
		if (L->err[0])
			return -1;
		if (now(L) > deadline || knb_stop_requested()) {
			set_err(L, "could not connect within --connect-timeout: is a knb server "
				   "running there, and reachable?");
			return -1;
		}
		step(L);
		ready = 0;
		for (unsigned i = 0; i < L->n; i++)
			ready += L->conns[i]->f.ready;
	}
	if (L->conns[0]->f.server_threads < c->server_threads) {
		char m[160];

		snprintf(m, sizeof(m), "the server runs %u threads but --server-threads is %u",
			 L->conns[0]->f.server_threads, c->server_threads);
		set_err(L, m);
		return -1;
	}
	return 0;
}

static int run_client(struct lctx *L)
{
	struct knb_result *r = L->r;
	struct knb_thread_result *tr = &r->threads[L->env->index];
	const struct knb_config *c = L->c;
	struct knb_timeline tl;

	if (connect_all(L))
		return 1;
	knb_timeline_start(&tl, c, now(L));
	for (;;) {
		bool drained = true;
		enum knb_tick tick;

		for (unsigned i = 0; tl.drain_until && i < L->n; i++)
			drained = drained && knb_flow_drained(&L->conns[i]->f);
		/* The loop's own time: window edges an iteration late cost nothing. */
		tick = knb_timeline_tick(&tl, &L->meter, lunar_env_loop_ns(L->env), drained);
		if (tick == KNB_TICK_DONE)
			break;
		if (tick == KNB_TICK_OPENED)
			lunar_cost_start(c->cpu_breakdown);
		if (tick == KNB_TICK_CLOSED) {
			lunar_cost_stop();
			for (unsigned i = 0; i < L->n; i++)
				L->conns[i]->f.stopping = true;
		}
		if (knb_stop_requested()) {
			set_err(L, "interrupted");
			return 1;
		}
		if (L->err[0])
			return 1;
		step(L);
		for (unsigned i = 0; i < L->n; i++)
			if (knb_flow_tx_budget(&L->conns[i]->f))
				pump_out(L->conns[i]);
	}
	if (L->env->index == 0)
		r->window_s = (double)(tl.win_end - tl.win_start) / 1e9;
	tr->cpu_pct = knb_timeline_cpu_pct(&tl);
	if (c->cpu_breakdown && L->env->index == 0) { /* worker 0's loop */
		r->have_cpu_breakdown = true;
		lunar_cost_percent(r->cpu_breakdown_pct, KNB_CPU_CATEGORIES);
	}
	return 0;
}

/* Set up one worker's TCP and payload; run its side; close its connections. */
static int worker_main(struct lunar_env *w, void *arg)
{
	struct lctx *L = &((struct lctx *)arg)[w->index];
	const struct knb_config *c = L->c;
	int rc;

	L->env = w;
	rc = c->server ? run_server(L) : run_client(L);
	if (rc && L->err[0] && strcmp(L->err, "interrupted"))
		fprintf(stderr, "knb %s: %s\n", c->server ? "server" : "client", L->err);
	/* Close everything gracefully, then let the FINs go out. */
	for (unsigned i = 0; i < L->n; i++) {
		struct lconn *k = L->conns[i];

		release_pending(k);
		drop_sock(k, false);
	}
	for (uint64_t until = now(L) + 200000000ull; now(L) < until && tcp_stack_sockets(w->tcp);)
		step(L);
	return rc;
}

int knb_lunar_run(const struct knb_config *c, const char *prog)
{
	struct lctx L[LUNAR_MAX_WORKERS] = {0};
	struct knb_thread_result tr[LUNAR_MAX_WORKERS] = {0};
	struct knb_result r = {.threads = tr};
	struct lunar_env *env;
	struct tcp_config cfg;
	uint64_t leaked;
	char err[512];
	int rc;

	lunar_handle_signals();
	rc = lunar_env_open(&c->lo, prog, &env, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "knb: %s\n", err);
		return 1;
	}
	tcp_config_default(&cfg);
	lunar_options_tcp(&c->lo, &cfg);
	cfg.nodelay = true; /* as the kernel side's TCP_NODELAY */
	r.nthreads = env->n_workers;
	for (unsigned i = 0; i < env->n_workers; i++) {
		struct lunar_env *w = lunar_env_worker(env, i);

		L[i] = (struct lctx){.c = c, .env = w, .r = &r, .snd_buf = cfg.snd_buf};
		knb_hist_init(&L[i].meter.hist);
		tr[i].index = i;
		tr[i].core = (int)w->lcore;
		if (!lunar_env_tcp(w, &cfg, 4096)) {
			fprintf(stderr, "knb: could not start TCP\n");
			lunar_env_close(env);
			return 1;
		}
		L[i].payload = zbuf_alloc(KNB_BULK_CHUNK);
		L[i].scratch = malloc(KNB_BULK_CHUNK);
		if (c->api == KNB_API_COPY)
			L[i].ep = lpoll_create();
		if (!L[i].payload || !L[i].scratch || (c->api == KNB_API_COPY && !L[i].ep)) {
			fprintf(stderr, "knb: out of Zbuf memory\n");
			lunar_env_close(env);
			return 1;
		}
		memset(L[i].payload, 0x6b, KNB_BULK_CHUNK);
	}
	rc = lunar_env_run(env, worker_main, L);
	for (unsigned i = 0; i < env->n_workers; i++) {
		struct lunar_env *w = lunar_env_worker(env, i);

		if (c->lo.verbose) { /* --verbose: the interface's, the port's and TCP's counters */
			if (env->n_workers > 1)
				printf("worker %u:\n", i);
			lunar_env_dump(w, stdout);
			/* Every connection this worker opened, closed or not (the dump lists live
			 * ones). */
			for (unsigned j = 0; j < L[i].n; j++)
				if (L[i].conns[j]->lport)
					printf("knb conn %u->%u\n", L[i].conns[j]->lport,
					       L[i].conns[j]->rport);
			netif_dump(&w->nif, stdout);
			port_dump(w->port, stdout);
			tcp_stack_dump(w->tcp, stdout);
		}
		tr[i].meter = L[i].meter;
	}
	if ((!rc || c->server) && knb_report(c, &r))
		rc = 1;
	for (unsigned i = 0; i < env->n_workers; i++) {
		for (unsigned j = 0; j < L[i].n; j++)
			free(L[i].conns[j]);
		free(L[i].conns);
		if (L[i].payload)
			zbuf_unref(L[i].payload);
		free(L[i].scratch);
		lpoll_free(L[i].ep);
	}
	leaked = lunar_env_close(env);
	printf("zbuf: %lu objects in use at exit\n", (unsigned long)leaked);
	return rc;
}
