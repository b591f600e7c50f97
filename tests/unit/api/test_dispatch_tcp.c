/*
 * test_dispatch_tcp.c - TCP in dispatch mode (api/dispatch_tcp.h) on two
 * whole stacks back to back (tcp_pair.h): application threads that open,
 * use and close connections only through channels, while the test's main
 * thread plays the stack core of both sides. Then the requests that must
 * fail (stale handles, unknown ops, refused connects) and the application
 * that falls behind (a full ring, held buffers): nothing lost, every
 * buffer back, in_use at its baseline (api_teardown).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rte_mbuf.h>

#include "api/dispatch_tcp.h"
#include "mem/zbuf.h"
#include "api_pair.h"

#define PORT	 90
#define CONNS	 4
#define PER_CONN 60000u
#define CHUNK	 4000u

static uint8_t pattern_byte(unsigned conn, uint32_t off)
{
	return (uint8_t)(conn * 31 + off * 7 + off / 253);
}

/* An error event counts (its buffer, if any, is ours again); others do not. */
static unsigned take_error(const struct lunar_msg *m)
{
	if (m->op != DTCP_EV_ERROR)
		return 0;
	if (m->buf)
		zbuf_unref(m->buf);
	return 1;
}

/* ---- the server threads: echo whatever comes, close at EOF ---- */

struct server_app {
	struct lunar_chan *ch;
	unsigned accepted, closed, errors;
	uint64_t echoed;
};

static void *server_main(void *arg)
{
	struct server_app *a = arg;
	struct lunar_msg m[32];
	int n;

	while (dtcp_app_listen(a->ch, PORT) == -ENOBUFS)
		;
	while ((n = lunar_chan_app_wait(a->ch, m, 32, -1)) > 0) {
		for (int i = 0; i < n; i++) {
			switch (m[i].op) {
			case DTCP_EV_ACCEPTED:
				a->accepted++;
				break;
			case DTCP_EV_DATA:
				/* The received slice goes straight back out: its reference moves
				 * to the send, and the window opens for the bytes. */
				while (dtcp_app_send(a->ch, m[i].conn, m[i].buf, m[i].len) ==
				       -ENOBUFS)
					;
				while (dtcp_app_done(a->ch, m[i].conn, NULL, m[i].len) == -ENOBUFS)
					;
				a->echoed += m[i].len;
				break;
			case DTCP_EV_EOF:
				while (dtcp_app_close(a->ch, m[i].conn) == -ENOBUFS)
					;
				a->closed++;
				break;
			default:
				a->errors += take_error(&m[i]);
				break;
			}
		}
	}
	return NULL;
}

/* ---- the client thread: CONNS connections, each sends PER_CONN bytes and checks the echo ---- */

struct client_conn {
	uint64_t h;
	uint32_t sent, got;
	bool connected, eof, bad;
};

struct client_app {
	struct lunar_chan *ch;
	struct client_conn c[CONNS];
	unsigned errors;
	atomic_bool done;
};

static struct client_conn *find(struct client_app *a, uint64_t h)
{
	for (unsigned i = 0; i < CONNS; i++)
		if (a->c[i].connected && a->c[i].h == h)
			return &a->c[i];
	return NULL;
}

static void client_send_all(struct client_app *a, unsigned i)
{
	struct client_conn *k = &a->c[i];

	while (k->sent < PER_CONN) {
		uint32_t len = PER_CONN - k->sent < CHUNK ? PER_CONN - k->sent : CHUNK;
		uint8_t *z = zbuf_alloc(len);

		assert_non_null(z);
		for (uint32_t j = 0; j < len; j++)
			z[j] = pattern_byte(i, k->sent + j);
		while (dtcp_app_send(a->ch, k->h, z, len) == -ENOBUFS)
			;
		k->sent += len;
	}
}

static void *client_main(void *arg)
{
	struct client_app *a = arg;
	struct lunar_msg m[32];
	unsigned finished = 0;
	int n;

	for (unsigned i = 0; i < CONNS; i++)
		while (dtcp_app_connect(a->ch, PAIR_IP_B, PORT, 100 + i) == -ENOBUFS)
			;
	while (finished < CONNS && (n = lunar_chan_app_wait(a->ch, m, 32, 10000)) > 0) {
		for (int i = 0; i < n; i++) {
			struct client_conn *k;

			switch (m[i].op) {
			case DTCP_EV_CONNECTED: {
				unsigned idx = (unsigned)(m[i].arg - 100);

				a->c[idx].h = m[i].conn;
				a->c[idx].connected = true;
				client_send_all(a, idx);
				break;
			}
			case DTCP_EV_DATA:
				k = find(a, m[i].conn);
				if (!k) {
					a->errors++;
				} else {
					const uint8_t *p = m[i].buf;

					for (uint32_t j = 0; j < m[i].len; j++)
						if (p[j] !=
						    pattern_byte((unsigned)(k - a->c), k->got + j))
							k->bad = true;
					k->got += m[i].len;
				}
				while (dtcp_app_done(a->ch, m[i].conn, m[i].buf, m[i].len) ==
				       -ENOBUFS)
					;
				if (k && k->got == PER_CONN) {
					while (dtcp_app_close(a->ch, k->h) == -ENOBUFS)
						;
					finished++;
				}
				break;
			default:
				a->errors += take_error(&m[i]);
				break;
			}
		}
	}
	atomic_store(&a->done, true);
	return NULL;
}

/*
 * Both sides in dispatch mode: one client thread on a, two server threads
 * on b sharing one listening port. Every byte comes back in order, the
 * accepted connections are spread over both server threads, and the
 * application threads touched the stacks only through their channels.
 */
static void test_echo_across_threads(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *da, *db;
	struct dtcp *ta, *tb;
	struct client_app ca = {0};
	struct server_app sa[2] = {0};
	pthread_t tc, ts[2];
	struct lunar_chan_stats cs;

	assert_int_equal(lunar_dispatch_create(1, NULL, &da), 0);
	assert_int_equal(lunar_dispatch_create(2, NULL, &db), 0);
	assert_int_equal(dtcp_create(p->a.tcp, da, NULL, &ta), 0);
	assert_int_equal(dtcp_create(p->b.tcp, db, NULL, &tb), 0);
	for (unsigned i = 0; i < 2; i++) {
		sa[i].ch = lunar_dispatch_chan(db, i);
		assert_int_equal(pthread_create(&ts[i], NULL, server_main, &sa[i]), 0);
	}
	/* Both servers listen before the client connects. */
	while (dtcp_stats(tb)->requests < 2)
		dtcp_poll(tb);
	ca.ch = lunar_dispatch_chan(da, 0);
	assert_int_equal(pthread_create(&tc, NULL, client_main, &ca), 0);
	for (unsigned i = 0; i < 2000000 && !atomic_load(&ca.done); i++) {
		pair_step(p);
		dtcp_poll(ta);
		dtcp_poll(tb);
	}
	assert_int_equal(pthread_join(tc, NULL), 0);
	/* The FINs, the servers' CLOSEs (their threads may be slow to run). */
	for (unsigned i = 0; i < 2000000 && (dtcp_conns(ta) || dtcp_conns(tb)); i++) {
		pair_step(p);
		dtcp_poll(ta);
		dtcp_poll(tb);
	}
	lunar_dispatch_shutdown(db);
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(pthread_join(ts[i], NULL), 0);

	assert_int_equal(ca.errors, 0);
	for (unsigned i = 0; i < CONNS; i++) {
		assert_true(ca.c[i].connected);
		assert_int_equal(ca.c[i].got, PER_CONN);
		assert_false(ca.c[i].bad);
	}
	assert_int_equal(sa[0].accepted + sa[1].accepted, CONNS);
	assert_int_equal(sa[0].accepted, CONNS / 2); /* spread in turn */
	assert_int_equal(sa[0].closed + sa[1].closed, CONNS);
	assert_int_equal(sa[0].echoed + sa[1].echoed, (uint64_t)CONNS * PER_CONN);
	assert_int_equal(sa[0].errors + sa[1].errors, 0);
	assert_int_equal(dtcp_stats(ta)->conns_opened, CONNS);
	assert_int_equal(dtcp_stats(tb)->conns_accepted, CONNS);
	assert_int_equal(dtcp_stats(ta)->tx_bytes, (uint64_t)CONNS * PER_CONN);
	assert_int_equal(dtcp_stats(tb)->rx_bytes, (uint64_t)CONNS * PER_CONN);
	assert_int_equal(dtcp_stats(ta)->bad_handle + dtcp_stats(tb)->bad_handle, 0);
	assert_int_equal(dtcp_conns(ta), 0);
	assert_int_equal(dtcp_conns(tb), 0);
	/* Zero copy across the threads: no copying call ran on either stack. */
	assert_int_equal(tcp_stack_stats(p->a.tcp)->copy_rx_bytes, 0);
	assert_int_equal(tcp_stack_stats(p->b.tcp)->copy_rx_bytes, 0);
	lunar_chan_stats(ca.ch, &cs);
	assert_true(cs.to_stack > CONNS);
	dtcp_free(ta);
	dtcp_free(tb);
	lunar_dispatch_free(da, NULL, NULL);
	lunar_dispatch_free(db, NULL, NULL);
	pair_run(p, 100 * PAIR_STEP_NS);
}

/* Take the next event on @ch (the main thread plays the application too). */
static struct lunar_msg next_event(struct tcp_pair *p, struct dtcp *t, struct lunar_chan *ch)
{
	struct lunar_msg m;

	for (unsigned i = 0; i < 5000; i++) {
		if (lunar_chan_app_recv(ch, &m, 1) == 1)
			return m;
		pair_step(p);
		dtcp_poll(t);
	}
	fail_msg("no event");
	return m;
}

/*
 * The dispatch thread listens on @port, side b's stack connects to it
 * (*@c, its end), the application takes the accept. @return the handle.
 */
static uint64_t accept_one(struct tcp_pair *p, struct dtcp *t, struct lunar_chan *ch, uint16_t port,
			   struct tcp_sock **c)
{
	struct lunar_msg m;
	int err;

	assert_int_equal(dtcp_app_listen(ch, port), 0);
	assert_int_equal(next_event(p, t, ch).op, DTCP_EV_LISTENING);
	*c = tcp_connect_to(p->b.tcp, PAIR_IP_A, port, NULL, NULL, &err);
	assert_non_null(*c);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_ACCEPTED);
	return m.conn;
}

/* Requests that must fail, each answered and counted, no buffer lost. */
static void test_bad_requests(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	uint8_t *z = zbuf_alloc(100);
	uint64_t h;

	assert_int_equal(lunar_dispatch_create(1, NULL, &d), 0);
	assert_int_equal(dtcp_create(p->a.tcp, d, NULL, &t), 0);
	ch = lunar_dispatch_chan(d, 0);

	/* A connect nobody answers: refused, named by the cookie. */
	assert_int_equal(dtcp_app_connect(ch, PAIR_IP_B, 99, 42), 0);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(m.len, DTCP_CONNECT);
	assert_int_equal(m.conn, 42);
	assert_int_equal(dtcp_err(&m), -ECONNREFUSED);
	assert_int_equal(dtcp_conns(t), 0);

	/* A send on a handle that never was: the buffer comes back. */
	assert_int_equal(dtcp_app_send(ch, 0x500000003ull, z, 100), 0);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(m.len, DTCP_SEND);
	assert_int_equal(dtcp_err(&m), -EBADF);
	assert_ptr_equal(m.buf, z);
	assert_int_equal(dtcp_stats(t)->bad_handle, 1);

	/* Unknown op, port 0, a close of nothing. */
	assert_int_equal(lunar_chan_app_send(ch, &(struct lunar_msg){.op = 77}), 0);
	m = next_event(p, t, ch);
	assert_int_equal(dtcp_err(&m), -EINVAL);
	assert_int_equal(dtcp_app_listen(ch, 0), 0);
	m = next_event(p, t, ch);
	assert_int_equal(dtcp_err(&m), -EINVAL);
	assert_int_equal(dtcp_app_close(ch, 7), 0);
	m = next_event(p, t, ch);
	assert_int_equal(dtcp_err(&m), -EBADF);
	assert_int_equal(dtcp_stats(t)->bad_request, 2);

	/* A real connection; then its handle after close is stale, and a send of
	 * memory that is not Zbuf is refused. */
	assert_int_equal(dtcp_app_listen(ch, 91), 0);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_LISTENING);
	{
		int err;
		struct tcp_sock *c = tcp_connect_to(p->b.tcp, PAIR_IP_A, 91, NULL, NULL, &err);
		static char plain[64];

		assert_non_null(c);
		m = next_event(p, t, ch);
		assert_int_equal(m.op, DTCP_EV_ACCEPTED);
		assert_int_equal(dtcp_addr_ip(m.arg), PAIR_IP_B);
		h = m.conn;
		assert_int_equal(dtcp_app_send(ch, h, plain, sizeof(plain)), 0);
		m = next_event(p, t, ch);
		assert_int_equal(m.op, DTCP_EV_ERROR);
		assert_int_equal(dtcp_err(&m), -EFAULT);
		assert_ptr_equal(m.buf, plain);
		assert_int_equal(dtcp_app_close(ch, h), 0);
		pair_run(p, 5 * PAIR_STEP_NS);
		dtcp_poll(t);
		assert_int_equal(dtcp_conns(t), 0);
		assert_int_equal(dtcp_app_send(ch, h, z, 100), 0); /* stale now */
		m = next_event(p, t, ch);
		assert_int_equal(dtcp_err(&m), -EBADF);
		assert_ptr_equal(m.buf, z);
		tcp_sock_close(c);
	}
	assert_int_equal(dtcp_stats(t)->bad_handle, 3);
	zbuf_unref(z);
	dtcp_free(t);
	lunar_dispatch_free(d, NULL, NULL);
	pair_run(p, 100 * PAIR_STEP_NS);
}

/*
 * An application that falls behind: a ring of 8 messages, not read at all
 * for a while, then read but held (no DONE). Delivery stops at the full
 * ring (counted), the unread and then the held bytes close the window, the
 * sender waits; nothing is dropped. Then the application catches up and
 * every byte arrives, in order.
 */
#define HOLD_MAX 4096

static void test_slow_application(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_chan_config cc = {.size = 8};
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	enum { TOTAL = 3000000, UNREAD = 1000, HELD = 3000 }; /* TOTAL: many windows */
	uint8_t *z = zbuf_alloc_class(ZBUF_CLASS_64K);
	uint32_t sent = 0, got = 0;
	struct lunar_msg *held = calloc(HOLD_MAX, sizeof(*held));
	unsigned n_held = 0;
	uint64_t h;

	assert_non_null(z);
	assert_non_null(held);
	for (uint32_t j = 0; j < 65536; j++)
		z[j] = (uint8_t)(j % 251);
	assert_int_equal(lunar_dispatch_create(1, &cc, &d), 0);
	assert_int_equal(dtcp_create(p->a.tcp, d, NULL, &t), 0);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 92, &c);
	for (unsigned step = 0; got < TOTAL && step < 200000; step++) {
		while (sent < TOTAL) {
			uint32_t off = sent % 65536, len = 65536 - off;
			int rc =
			    tcp_sock_send_zc(c, z + off, len < TOTAL - sent ? len : TOTAL - sent);

			if (rc <= 0)
				break;
			sent += (uint32_t)rc;
		}
		pair_step(p);
		dtcp_poll(t);
		while (step >= UNREAD && lunar_chan_app_recv(ch, &m, 1) == 1) {
			assert_int_equal(m.op, DTCP_EV_DATA);
			assert_int_equal(m.conn, h);
			for (uint32_t j = 0; j < m.len; j++)
				assert_int_equal(((uint8_t *)m.buf)[j],
						 (uint8_t)((got + j) % 65536 % 251));
			got += m.len;
			if (step < HELD) {
				assert_true(n_held < HOLD_MAX);
				held[n_held++] = m;
			} else {
				assert_int_equal(dtcp_app_done(ch, h, m.buf, m.len), 0);
			}
		}
		if (step == HELD) { /* stalled with the window shut; nothing lost */
			assert_true(got < TOTAL);
			assert_true(dtcp_stats(t)->rx_waits > 0);
			/* No DONE came while held: delivery resumed from the poll's retry alone. */
			assert_true(n_held > cc.size);
			/* less than a segment: shut */
			assert_true(tcp_sock_conn(c)->snd_wnd < 1448);
			assert_int_equal(tcp_stack_stats(p->a.tcp)->rcv_mem_dropped, 0);
			/* The ring holds 8: let the stack take them. */
			for (unsigned i = 0; i < n_held; i++)
				while (dtcp_app_done(ch, h, held[i].buf, held[i].len) == -ENOBUFS)
					dtcp_poll(t);
			n_held = 0;
		}
	}
	assert_int_equal(got, TOTAL);
	assert_int_equal(n_held, 0); /* the stall was seen and let go */
	assert_int_equal(dtcp_app_close(ch, h), 0);
	pair_run(p, 5 * PAIR_STEP_NS);
	dtcp_poll(t);
	tcp_sock_close(c);
	zbuf_unref(z);
	free(held);
	dtcp_free(t);
	lunar_dispatch_free(d, NULL, NULL);
	pair_run(p, 100 * PAIR_STEP_NS);
}

static unsigned misuses_noted;
static char misuse_noted[160];

static void note_misuse(const char *msg)
{
	misuses_noted++;
	snprintf(misuse_noted, sizeof(misuse_noted), "%s", msg);
}

/*
 * An application thread that gives a received buffer back twice (DONE,
 * DONE): the second is the application's reference it no longer holds,
 * named a double free and ignored, so the packet buffer goes back to its
 * pool once (pair_close() checks the pool), not twice into its ring. With
 * three buffers held, a second DONE of the first gives back none of the
 * others' bytes to the window (dtcp_held()).
 */
static void test_done_twice(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	static const char msg[] = "a block for the application thread";
	uint64_t h;

	assert_int_equal(lunar_dispatch_create(1, NULL, &d), 0);
	assert_int_equal(dtcp_create(p->a.tcp, d, NULL, &t), 0);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 93, &c);
	assert_int_equal(tcp_sock_send(c, msg, sizeof(msg)), sizeof(msg));
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_DATA);
	assert_int_equal(m.len, sizeof(msg));
	assert_memory_equal(m.buf, msg, sizeof(msg));
	assert_int_equal(zbuf_app_refcnt(m.buf), 1); /* the application's */
	misuses_noted = 0;
	zbuf_set_misuse_handler(note_misuse);
	assert_int_equal(dtcp_app_done(ch, h, m.buf, m.len), 0);
	assert_int_equal(dtcp_app_done(ch, h, m.buf, m.len), 0);
	pair_run(p, 5 * PAIR_STEP_NS);
	dtcp_poll(t);
	pair_run(p, 5 * PAIR_STEP_NS);
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(misuses_noted, 1);
	assert_non_null(strstr(misuse_noted, "zbuf: double free at 0x"));
	assert_int_equal(dtcp_held(t, h), 0);

	/* Three segments, three events, three buffers held. */
	{
		struct lunar_msg ev[3];

		for (unsigned i = 0; i < 3; i++) {
			assert_int_equal(tcp_sock_send(c, msg, sizeof(msg)), sizeof(msg));
			pair_run(p, 5 * PAIR_STEP_NS); /* each its own segment */
		}
		for (unsigned i = 0; i < 3; i++) {
			ev[i] = next_event(p, t, ch);
			assert_int_equal(ev[i].op, DTCP_EV_DATA);
			assert_int_equal(ev[i].len, sizeof(msg));
		}
		assert_int_equal(dtcp_held(t, h), 3 * sizeof(msg));
		zbuf_set_misuse_handler(note_misuse);
		assert_int_equal(dtcp_app_done(ch, h, ev[0].buf, ev[0].len), 0);
		assert_int_equal(dtcp_app_done(ch, h, ev[0].buf, ev[0].len), 0);
		/* Inside a deferral span too, as if the stack core ran it in a poll. */
		zbuf_defer_begin();
		dtcp_poll(t);
		assert_int_equal(misuses_noted, 2); /* at the call, not at the span's end */
		zbuf_defer_end();
		assert_int_equal(misuses_noted, 2);
		assert_int_equal(dtcp_held(t, h), 2 * sizeof(msg)); /* not 1 * */
		assert_int_equal(dtcp_app_done(ch, h, ev[1].buf, ev[1].len), 0);
		assert_int_equal(dtcp_app_done(ch, h, ev[2].buf, ev[2].len), 0);
		dtcp_poll(t);
		zbuf_set_misuse_handler(NULL);
		assert_int_equal(misuses_noted, 2);
		assert_int_equal(dtcp_held(t, h), 0);
	}
	assert_int_equal(dtcp_held(t, h + 1), 0); /* a handle of no connection */
	assert_int_equal(dtcp_app_close(ch, h), 0);
	pair_run(p, 5 * PAIR_STEP_NS);
	dtcp_poll(t);
	tcp_sock_close(c);
	dtcp_free(t);
	lunar_dispatch_free(d, NULL, NULL);
	pair_run(p, 100 * PAIR_STEP_NS);
}

/* A service on side a for @nch threads, their rings of @ring messages (0: the default). */
static struct dtcp *service_new(struct tcp_pair *p, unsigned nch, unsigned ring,
				struct lunar_dispatch **d)
{
	struct lunar_chan_config cc = {.size = ring};
	struct dtcp *t;

	assert_int_equal(lunar_dispatch_create(nch, &cc, d), 0);
	assert_int_equal(dtcp_create(p->a.tcp, *d, NULL, &t), 0);
	return t;
}

/* The application closes @h, the peer @c closes its end. */
static void close_both(struct tcp_pair *p, struct dtcp *t, struct lunar_chan *ch, uint64_t h,
		       struct tcp_sock *c)
{
	assert_int_equal(dtcp_app_close(ch, h), 0);
	pair_run(p, 5 * PAIR_STEP_NS);
	dtcp_poll(t);
	tcp_sock_close(c);
}

/* The service and its dispatcher go; the stacks finish what they were doing. */
static void service_free(struct tcp_pair *p, struct dtcp *t, struct lunar_dispatch *d)
{
	dtcp_free(t);
	lunar_dispatch_free(d, NULL, NULL);
	pair_run(p, 100 * PAIR_STEP_NS);
}

/* The application hands the stack @n sends of @len bytes of @z, one reference each. */
static void send_refs(struct tcp_pair *p, struct dtcp *t, struct lunar_chan *ch, uint64_t h,
		      uint8_t *z, uint32_t len, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		zbuf_ref(z);
		while (dtcp_app_send(ch, h, z, len) == -ENOBUFS) {
			pair_step(p);
			dtcp_poll(t);
		}
	}
}

/*
 * A send the stack refuses ends sending on the connection: the sends
 * after it come back too (-ECANCELED), so the peer gets the bytes of the
 * sends before it and nothing after a hole. Each refusal names its reason.
 */
static void test_refused_send_ends_sending(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	uint8_t *z = zbuf_alloc(100), got[300];
	uint64_t h;

	assert_non_null(z);
	memset(z, 'x', 100);
	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 94, &c);
	send_refs(p, t, ch, h, z, 100, 1);
	assert_int_equal(next_event(p, t, ch).op, DTCP_EV_SENT);
	/* Past its object's end, then length 0: refused; then a good one, canceled. */
	send_refs(p, t, ch, h, z, (uint32_t)zbuf_span(z) + 1, 1);
	send_refs(p, t, ch, h, z, 0, 1);
	send_refs(p, t, ch, h, z, 100, 1);
	for (unsigned i = 0; i < 3; i++) {
		static const int want[3] = {-EFAULT, -ECANCELED, -ECANCELED};

		m = next_event(p, t, ch);
		assert_int_equal(m.op, DTCP_EV_ERROR);
		assert_int_equal(m.len, DTCP_SEND);
		assert_int_equal(dtcp_err(&m), want[i]);
		assert_ptr_equal(m.buf, z);
		zbuf_unref(m.buf);
	}
	assert_int_equal(dtcp_stats(t)->send_refused, 3);
	pair_run(p, 5 * PAIR_STEP_NS);
	assert_int_equal(tcp_sock_read(c, got, sizeof(got)), 100); /* the first send's only */
	/* A fresh connection: a send of no buffer is -EINVAL. */
	close_both(p, t, ch, h, c);
	h = accept_one(p, t, ch, 95, &c);
	assert_int_equal(dtcp_app_send(ch, h, NULL, 10), 0);
	m = next_event(p, t, ch);
	assert_int_equal(dtcp_err(&m), -EINVAL);
	close_both(p, t, ch, h, c);
	zbuf_unref(z);
	service_free(p, t, d);
}

/*
 * A received packet buffer echoed back while referenced ~64k times (the
 * count is DPDK's 16 bits): the send buffer cannot take one more, so the
 * service sends a copy, in order, and the application sees no error.
 */
static void test_echo_of_widely_referenced_buffer(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	static const char msg[] = "one block, referenced everywhere";
	struct rte_mbuf *mb;
	uint16_t extra;
	char got[sizeof(msg)];
	uint64_t h;

	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 96, &c);
	assert_int_equal(tcp_sock_send(c, msg, sizeof(msg)), sizeof(msg));
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_DATA);
	mb = zbuf_obj(m.buf);
	assert_non_null(mb);
	zbuf_ref(m.buf); /* one to send, one to give back */
	extra = (uint16_t)(ZBUF_MBUF_REF_MAX - rte_mbuf_refcnt_read(mb));
	rte_mbuf_refcnt_update(mb, (int16_t)extra); /* the fan-out's references */
	assert_int_equal(dtcp_app_send(ch, h, m.buf, m.len), 0);
	assert_int_equal(next_event(p, t, ch).op, DTCP_EV_SENT);
	rte_mbuf_refcnt_update(mb, (int16_t)-extra);
	assert_int_equal(dtcp_app_done(ch, h, m.buf, m.len), 0);
	assert_int_equal(dtcp_stats(t)->send_refused, 0);
	pair_run(p, 5 * PAIR_STEP_NS);
	assert_int_equal(tcp_sock_read(c, got, sizeof(got)), sizeof(msg));
	assert_memory_equal(got, msg, sizeof(msg));
	close_both(p, t, ch, h, c);
	service_free(p, t, d);
}

#define PEER_BYTES 100000u

/*
 * Connection @h (the peer's end @c) stalled both ways: 40 sends of 64 KiB
 * of @z to a peer that reads nothing (some wait for send-buffer room) and
 * PEER_BYTES of @data from the peer, more than a ring of 8 holds
 * (delivery waits).
 */
static void stall_both_ways(struct tcp_pair *p, struct dtcp *t, struct lunar_chan *ch, uint64_t h,
			    struct tcp_sock *c, uint8_t *z, const uint8_t *data)
{
	uint32_t sent = 0;

	send_refs(p, t, ch, h, z, 65536, 40);
	while (sent < PEER_BYTES) {
		int rc = tcp_sock_send(c, data + sent, PEER_BYTES - sent);

		assert_true(rc >= 0);
		sent += (uint32_t)rc;
		pair_step(p);
		dtcp_poll(t);
	}
	pair_run(p, 20 * PAIR_STEP_NS);
	dtcp_poll(t);
	assert_true(dtcp_stats(t)->rx_waits > 0);
}

/*
 * A connection with a full ring (delivery waiting) and sends waiting for
 * room (the peer reads nothing): the peer sends PEER_BYTES and resets.
 * Everything received comes to the application before DTCP_EV_CLOSED,
 * though its ring held 8 (the rest waits in the channel's queue), and
 * the waiting sends come back, the first with the reset's error.
 */
static void test_reset_delivers_everything(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	uint8_t *z = zbuf_alloc_class(ZBUF_CLASS_64K), *data = malloc(PEER_BYTES);
	uint32_t got = 0;
	unsigned errors = 0, canceled = 0;
	bool closed = false;
	uint64_t h;

	assert_non_null(z);
	assert_non_null(data);
	for (uint32_t i = 0; i < PEER_BYTES; i++)
		data[i] = pattern_byte(1, i);
	t = service_new(p, 1, 8, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 97, &c);
	/* 2.5 MiB to a peer that reads nothing: beyond its window and the send buffer. */
	stall_both_ways(p, t, ch, h, c, z, data);
	assert_int_equal(tcp_sock_conn(c)->snd_una, tcp_sock_conn(c)->snd_nxt); /* all received */
	tcp_sock_abort(c);
	pair_run(p, 5 * PAIR_STEP_NS);
	while (!closed) {
		m = next_event(p, t, ch);
		switch (m.op) {
		case DTCP_EV_DATA:
			assert_false(errors); /* data first */
			assert_true(got + m.len <= PEER_BYTES);
			assert_memory_equal(m.buf, data + got, m.len);
			got += m.len;
			assert_int_equal(dtcp_app_done(ch, h, m.buf, m.len),
					 0); /* a stale handle now */
			break;
		case DTCP_EV_ERROR:
			assert_int_equal(m.len, DTCP_SEND);
			assert_int_equal(dtcp_err(&m), errors ? -ECANCELED : -ECONNRESET);
			canceled += errors > 0;
			errors++;
			assert_true(zbuf_obj(m.buf) == zbuf_obj(z));
			zbuf_unref(m.buf);
			break;
		case DTCP_EV_CLOSED:
			assert_int_equal(dtcp_err(&m), -ECONNRESET);
			closed = true;
			break;
		default: /* DTCP_EV_SENT of the sends that went in */
			assert_int_equal(m.op, DTCP_EV_SENT);
			assert_false(errors);
		}
	}
	assert_int_equal(got, PEER_BYTES);
	assert_true(errors > 0); /* some sends were still waiting */
	assert_int_equal(canceled, errors - 1);
	assert_int_equal(dtcp_conns(t), 0);
	dtcp_poll(t);
	assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0); /* nothing after CLOSED */
	zbuf_unref(z);
	free(data);
	service_free(p, t, d);
}

/*
 * DTCP_CLOSE while delivery waits for ring room and sends wait for the
 * send buffer: the close waits for the sends, and no data event follows
 * it, though the ring has room again.
 */
static void test_no_data_after_close(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	uint8_t *z = zbuf_alloc_class(ZBUF_CLASS_64K), *data = calloc(1, PEER_BYTES);
	struct lunar_msg held[8];
	unsigned n_held = 0;
	uint64_t h;

	assert_non_null(z);
	assert_non_null(data);
	t = service_new(p, 1, 8, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 98, &c);
	stall_both_ways(p, t, ch, h, c, z, data);
	/* Read the ring empty (holding the data), then close: no poll between. */
	while (lunar_chan_app_recv(ch, &m, 1) == 1)
		if (m.op == DTCP_EV_DATA)
			held[n_held++] = m;
	assert_true(n_held > 0);
	assert_int_equal(dtcp_app_close(ch, h), 0);
	for (unsigned i = 0; i < 20; i++) {
		pair_step(p);
		dtcp_poll(t);
		assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0);
	}
	assert_int_equal(dtcp_conns(t), 1); /* still closing: the sends wait */
	for (unsigned i = 0; i < n_held; i++)
		zbuf_unref(held[i].buf);
	tcp_sock_abort(c); /* the peer gives up: the waiting sends are released */
	pair_run(p, 5 * PAIR_STEP_NS);
	dtcp_poll(t);
	assert_int_equal(dtcp_conns(t), 0);
	assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0);
	zbuf_unref(z);
	free(data);
	service_free(p, t, d);
}

/*
 * DTCP_DONE from another of the dispatcher's threads (one the slice was
 * handed to) opens the connection's window; one of memory that is not
 * Zbuf comes back as an error instead of reaching Zbuf as a misuse.
 */
static void test_done_from_another_thread(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch, *other;
	struct lunar_msg m;
	struct tcp_sock *c;
	static const char msg[] = "handed from thread to thread";
	static char plain[64];
	uint64_t h;

	t = service_new(p, 2, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	other = lunar_dispatch_chan(d, 1);
	h = accept_one(p, t, ch, 99, &c);
	assert_int_equal(tcp_sock_send(c, msg, sizeof(msg)), sizeof(msg));
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_DATA);
	assert_int_equal(dtcp_held(t, h), sizeof(msg));
	assert_int_equal(dtcp_app_done(other, h, m.buf, m.len), 0);
	dtcp_poll(t);
	assert_int_equal(dtcp_held(t, h), 0);
	assert_int_equal(dtcp_app_done(other, h, plain, sizeof(plain)), 0);
	m = next_event(p, t, other);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(m.len, DTCP_DONE);
	assert_int_equal(dtcp_err(&m), -EFAULT);
	assert_ptr_equal(m.buf, plain);
	assert_int_equal(dtcp_stats(t)->bad_request, 1);
	assert_int_equal(dtcp_app_done(other, h, plain, 0), 0); /* no length: still not Zbuf */
	m = next_event(p, t, other);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(dtcp_err(&m), -EFAULT);
	assert_int_equal(dtcp_stats(t)->bad_request, 2);
	close_both(p, t, ch, h, c);
	service_free(p, t, d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_echo_across_threads, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_bad_requests, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_slow_application, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_done_twice, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_refused_send_ends_sending, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_echo_of_widely_referenced_buffer, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_reset_delivers_everything, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_no_data_after_close, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_done_from_another_thread, api_setup, api_teardown),
	};

	return cmocka_run_group_tests(tests, pair_group_setup, pair_group_teardown);
}
