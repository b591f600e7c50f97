/*
 * test_dispatch_tcp.c - TCP in dispatch mode (api/dispatch_tcp.h) on two
 * whole stacks back to back (tcp_pair.h): application threads that open,
 * use and close connections only through channels, while the test's main
 * thread plays the stack core of both sides. Then the requests that must
 * fail (stale handles, unknown ops, refused connects) and the application
 * that falls behind (a full ring, held buffers): nothing lost, every
 * buffer back, in_use at its baseline (api_teardown). Then the edges of a
 * connection's life: slots used again, closes that wait for the sends,
 * events kept in order behind a full ring, sends taken in pieces or
 * refused (a send buffer that cannot grow), resets and timeouts.
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

/*
 * The program is linked with -Wl,--wrap=malloc (meson.build): a test can
 * make the stack's allocations fail for one step (a send buffer that
 * cannot grow), as tests/unit/tcp/core/test_tcp_alloc.c does.
 */
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);

static bool malloc_fails;

void *__wrap_malloc(size_t size)
{
	return malloc_fails ? NULL : __real_malloc(size);
}

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

/* service_new() with the service configured by @cfg (NULL: the defaults). */
static struct dtcp *service_new_cfg(struct tcp_pair *p, unsigned nch, unsigned ring,
				    const struct dtcp_config *cfg, struct lunar_dispatch **d)
{
	struct lunar_chan_config cc = {.size = ring};
	struct dtcp *t;

	assert_int_equal(lunar_dispatch_create(nch, &cc, d), 0);
	assert_int_equal(dtcp_create(p->a.tcp, *d, cfg, &t), 0);
	return t;
}

/* A service on side a for @nch threads, their rings of @ring messages (0: the default). */
static struct dtcp *service_new(struct tcp_pair *p, unsigned nch, unsigned ring,
				struct lunar_dispatch **d)
{
	return service_new_cfg(p, nch, ring, NULL, d);
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

/* The DTCP_EV_SENTs of the sends that went in whole at once (none waited then). */
static void skip_sent(struct lunar_chan *ch)
{
	struct lunar_msg m;

	while (lunar_chan_app_recv(ch, &m, 1) == 1)
		assert_int_equal(m.op, DTCP_EV_SENT);
}

/*
 * @sends sends of 64 KiB of @z on @h to a peer that reads nothing: more
 * than its window and the send buffer hold, so some wait.
 */
static void sends_wait(struct tcp_pair *p, struct dtcp *t, struct lunar_chan *ch, uint64_t h,
		       uint8_t *z, unsigned sends)
{
	send_refs(p, t, ch, h, z, 65536, sends);
	pair_run(p, 20 * PAIR_STEP_NS);
	dtcp_poll(t);
	assert_true(dtcp_stats(t)->tx_bytes < (uint64_t)sends * 65536);
	skip_sent(ch);
}

/*
 * A connection's slot taken again by the next connection: the old handle
 * names nothing (its generation is stale: -EBADF, not the new
 * connection), and the new connection starts clean, though the old one
 * ended with its EOF given and a send partly in (closed while the sends
 * waited, then reset): the new one gets its own EOF, and its first send
 * goes whole.
 */
static void test_slot_used_again_starts_clean(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	uint8_t *z = zbuf_alloc_class(ZBUF_CLASS_64K), *small = zbuf_alloc(100), got[200];
	uint64_t h1, h2;

	assert_non_null(z);
	assert_non_null(small);
	for (unsigned i = 0; i < 100; i++)
		small[i] = (uint8_t)(i + 1);
	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	h1 = accept_one(p, t, ch, 100, &c);
	/* Sends of 65000 bytes to a peer that reads nothing: one is partly in. */
	send_refs(p, t, ch, h1, z, 65000, 12);
	pair_run(p, 20 * PAIR_STEP_NS);
	dtcp_poll(t);
	assert_true(dtcp_stats(t)->tx_bytes % 65000 != 0);
	skip_sent(ch);
	tcp_sock_shutdown(c);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_EOF);
	assert_int_equal(dtcp_app_close(ch, h1), 0);
	dtcp_poll(t);
	assert_int_equal(dtcp_conns(t), 1); /* closing: the sends wait */
	tcp_sock_abort(c);
	pair_run(p, 5 * PAIR_STEP_NS);
	dtcp_poll(t);
	assert_int_equal(dtcp_conns(t), 0);
	assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0);

	h2 = accept_one(p, t, ch, 101, &c);
	assert_int_equal((uint32_t)h2, (uint32_t)h1); /* the same slot */
	assert_true(h2 != h1);
	zbuf_ref(small);
	assert_int_equal(dtcp_app_send(ch, h1, small, 100), 0);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(dtcp_err(&m), -EBADF);
	assert_ptr_equal(m.buf, small);
	zbuf_unref(m.buf);
	send_refs(p, t, ch, h2, small, 100, 1);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_SENT);
	assert_int_equal(m.conn, h2);
	pair_run(p, 5 * PAIR_STEP_NS);
	assert_int_equal(tcp_sock_read(c, got, sizeof(got)), 100);
	assert_memory_equal(got, small, 100);
	tcp_sock_shutdown(c);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_EOF);
	assert_int_equal(m.conn, h2);
	close_both(p, t, ch, h2, c);
	zbuf_unref(small);
	zbuf_unref(z);
	service_free(p, t, d);
}

/*
 * DTCP_CLOSE while sends wait for send-buffer room: the connection is
 * gone for the application at once (a send or a second close on its
 * handle is refused, -EBADF), yet every waiting send still goes out and
 * then the FIN (a graceful close), and no event follows the close.
 */
static void test_close_waits_for_the_sends(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	enum { SENDS = 12 };
	uint8_t *z = zbuf_alloc_class(ZBUF_CLASS_64K), *buf = malloc(65536);
	uint32_t got = 0;
	bool bad = false;
	uint64_t h;

	assert_non_null(z);
	assert_non_null(buf);
	for (uint32_t j = 0; j < 65536; j++)
		z[j] = (uint8_t)(j % 251);
	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 102, &c);
	sends_wait(p, t, ch, h, z, SENDS);
	assert_int_equal(dtcp_app_close(ch, h), 0);
	dtcp_poll(t);
	assert_int_equal(dtcp_conns(t), 1); /* closing: the sends wait */
	zbuf_ref(z);
	assert_int_equal(dtcp_app_send(ch, h, z, 100), 0);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(m.len, DTCP_SEND);
	assert_int_equal(dtcp_err(&m), -EBADF);
	assert_ptr_equal(m.buf, z);
	zbuf_unref(m.buf);
	assert_int_equal(dtcp_app_close(ch, h), 0);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(m.len, DTCP_CLOSE);
	assert_int_equal(dtcp_err(&m), -EBADF);
	/* The peer reads: every byte of the waiting sends, then the FIN. */
	for (unsigned i = 0; i < 100000 && !(tcp_sock_conn(c)->fin_rcvd && !tcp_sock_readable(c));
	     i++) {
		size_t n = tcp_sock_read(c, buf, 65536);

		for (size_t j = 0; j < n; j++)
			bad |= buf[j] != z[(got + j) % 65536];
		got += (uint32_t)n;
		pair_step(p);
		dtcp_poll(t);
		assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0);
	}
	assert_int_equal(got, SENDS * 65536);
	assert_false(bad);
	assert_true(tcp_sock_conn(c)->fin_rcvd);
	assert_int_equal(dtcp_conns(t), 0);
	tcp_sock_close(c);
	zbuf_unref(z);
	free(buf);
	service_free(p, t, d);
}

/*
 * Bytes that arrive after DTCP_CLOSE, while the close waits for the
 * sends: no data event (no event follows a close), though the ring has
 * room; the peer's reset then ends the connection, silently too.
 */
static void test_no_data_for_bytes_after_close(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	static const char msg[] = "late bytes";
	uint8_t *z = zbuf_alloc_class(ZBUF_CLASS_64K);
	uint64_t h;

	assert_non_null(z);
	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 103, &c);
	sends_wait(p, t, ch, h, z, 12);
	assert_int_equal(dtcp_app_close(ch, h), 0);
	dtcp_poll(t);
	assert_int_equal(dtcp_conns(t), 1); /* closing: the sends wait */
	assert_int_equal(tcp_sock_send(c, msg, sizeof(msg)), sizeof(msg));
	for (unsigned i = 0; i < 100; i++) {
		pair_step(p);
		dtcp_poll(t);
		assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0);
	}
	assert_int_equal(tcp_sock_conn(c)->snd_una, tcp_sock_conn(c)->snd_nxt); /* they came */
	tcp_sock_abort(c);
	pair_run(p, 5 * PAIR_STEP_NS);
	dtcp_poll(t);
	assert_int_equal(dtcp_conns(t), 0);
	assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0);
	zbuf_unref(z);
	service_free(p, t, d);
}

/*
 * Control events a full ring could not take wait in the channel's queue,
 * and what comes after them waits behind them, though the ring has room
 * again: an accept (a control event) and received bytes (a data event)
 * that come meanwhile reach the application after the queued events.
 */
static void test_deferred_events_keep_their_order(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	static const char msg[] = "after the queued events";
	uint64_t h;
	int err;

	t = service_new(p, 1, 8, &d);
	ch = lunar_dispatch_chan(d, 0);
	/* Ten answers for a ring of 8: two wait in the channel's queue. */
	for (unsigned i = 0; i < 10; i++)
		while (dtcp_app_listen(ch, 104) == -ENOBUFS)
			dtcp_poll(t);
	dtcp_poll(t);
	assert_int_equal(dtcp_stats(t)->deferred, 2);
	/* Room for two: the application takes two answers; no poll runs from here. */
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 1);
		assert_int_equal(m.op, DTCP_EV_LISTENING);
	}
	c = tcp_connect_to(p->b.tcp, PAIR_IP_A, 104, NULL, NULL, &err);
	assert_non_null(c);
	pair_run(p, 10 * PAIR_STEP_NS); /* accepted, on the stack's callback */
	assert_int_equal(dtcp_stats(t)->conns_accepted, 1);
	assert_int_equal(tcp_sock_send(c, msg, sizeof(msg)), sizeof(msg));
	pair_run(p, 10 * PAIR_STEP_NS); /* received, on the stack's callback */
	for (unsigned i = 0; i < 8; i++) {
		m = next_event(p, t, ch);
		assert_int_equal(m.op, DTCP_EV_LISTENING);
		assert_int_equal(m.arg, 104);
	}
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_ACCEPTED);
	h = m.conn;
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_DATA);
	assert_int_equal(m.conn, h);
	assert_int_equal(m.len, sizeof(msg));
	assert_memory_equal(m.buf, msg, sizeof(msg));
	assert_int_equal(dtcp_app_done(ch, h, m.buf, m.len), 0);
	close_both(p, t, ch, h, c);
	service_free(p, t, d);
}

/*
 * max_conns connections at once, the last slot included: with one, a
 * connect gets the slot (and the peer's answer: refused), and a second
 * one while it is open gets -ENFILE.
 */
static void test_connection_limit(void **state)
{
	struct tcp_pair *p = *state;
	const struct dtcp_config cfg = {.max_conns = 1};
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;

	t = service_new_cfg(p, 1, 0, &cfg, &d);
	ch = lunar_dispatch_chan(d, 0);
	assert_int_equal(dtcp_app_connect(ch, PAIR_IP_B, 99, 1), 0);
	assert_int_equal(dtcp_app_connect(ch, PAIR_IP_B, 99, 2), 0);
	dtcp_poll(t);
	assert_int_equal(dtcp_conns(t), 1);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(m.len, DTCP_CONNECT);
	assert_int_equal(m.conn, 2);
	assert_int_equal(dtcp_err(&m), -ENFILE);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(m.len, DTCP_CONNECT);
	assert_int_equal(m.conn, 1);
	assert_int_equal(dtcp_err(&m), -ECONNREFUSED);
	assert_int_equal(dtcp_conns(t), 0);
	service_free(p, t, d);
}

/*
 * DTCP_EV_EOF comes once: the peer's FIN and then its reset give EOF,
 * then DTCP_EV_CLOSED, with no second EOF in front of it.
 */
static void test_eof_once(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	uint64_t h;

	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 105, &c);
	tcp_sock_shutdown(c);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_EOF);
	assert_int_equal(m.conn, h);
	tcp_sock_abort(c);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_CLOSED);
	assert_int_equal(m.conn, h);
	assert_int_equal(dtcp_err(&m), -ECONNRESET);
	assert_int_equal(dtcp_conns(t), 0);
	dtcp_poll(t);
	assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0);
	service_free(p, t, d);
}

/*
 * The peer's bytes and FIN come while the application's ring is full
 * (delivery waits): DTCP_EV_EOF comes after the last byte, not queued
 * ahead of the bytes still waiting.
 */
static void test_eof_after_all_data(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	enum { BYTES = 40000 }; /* ~28 segments for a ring of 8 */
	uint8_t *data = malloc(BYTES);
	uint32_t got = 0;
	uint64_t h;

	assert_non_null(data);
	for (uint32_t i = 0; i < BYTES; i++)
		data[i] = pattern_byte(2, i);
	t = service_new(p, 1, 8, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 106, &c);
	assert_int_equal(tcp_sock_send(c, data, BYTES), BYTES);
	tcp_sock_shutdown(c);
	for (unsigned i = 0; i < 50; i++) {
		pair_step(p);
		dtcp_poll(t);
	}
	assert_true(tcp_sock_conn(c)->fin_sent);
	assert_true(dtcp_stats(t)->rx_waits > 0);
	for (;;) {
		m = next_event(p, t, ch);
		if (m.op != DTCP_EV_DATA)
			break;
		assert_true(got + m.len <= BYTES);
		assert_memory_equal(m.buf, data + got, m.len);
		got += m.len;
		assert_int_equal(dtcp_app_done(ch, h, m.buf, m.len), 0);
	}
	assert_int_equal(m.op, DTCP_EV_EOF);
	assert_int_equal(got, BYTES);
	close_both(p, t, ch, h, c);
	free(data);
	service_free(p, t, d);
}

/*
 * DTCP_EV_SENT says every waiting send is in the send buffer: it comes
 * from the poll that put them in, once; the acknowledgements that follow
 * (send-buffer room: TCP_EV_WRITABLE) bring no other.
 */
static void test_sent_once_when_all_in(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	uint8_t *z = zbuf_alloc(100), got[200];
	uint64_t h;

	assert_non_null(z);
	memset(z, 's', 100);
	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 107, &c);
	send_refs(p, t, ch, h, z, 100, 1);
	dtcp_poll(t); /* no step: nothing acknowledged yet */
	assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 1);
	assert_int_equal(m.op, DTCP_EV_SENT);
	assert_int_equal(m.conn, h);
	for (unsigned i = 0; i < 200; i++) { /* past the peer's delayed ACK */
		pair_step(p);
		dtcp_poll(t);
		assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0);
	}
	assert_int_equal(tcp_sock_read(c, got, sizeof(got)), 100);
	close_both(p, t, ch, h, c);
	zbuf_unref(z);
	service_free(p, t, d);
}

/*
 * A send the send buffer cannot take for want of memory (its ring of
 * chunks, full at 16, cannot grow: malloc fails) comes back with
 * -ENOMEM and no DTCP_EV_SENT, and it ends sending on the connection as
 * any refused send does: the next one, memory back, is -ECANCELED, and
 * the peer gets the bytes of the sends before it only (no hole).
 */
static void test_send_buffer_cannot_grow(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	uint8_t *z = zbuf_alloc(100), got[2000];
	uint64_t h;

	assert_non_null(z);
	memset(z, 'g', 100);
	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 108, &c);
	send_refs(p, t, ch, h, z, 100, 16); /* 16 chunks, none acknowledged (no step) */
	dtcp_poll(t);
	for (unsigned i = 0; i < 16; i++) {
		assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 1);
		assert_int_equal(m.op, DTCP_EV_SENT);
	}
	send_refs(p, t, ch, h, z, 100, 1);
	malloc_fails = true;
	dtcp_poll(t);
	malloc_fails = false;
	assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 1);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(m.len, DTCP_SEND);
	assert_int_equal(dtcp_err(&m), -ENOMEM);
	assert_ptr_equal(m.buf, z);
	zbuf_unref(m.buf);
	assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0); /* no SENT */
	send_refs(p, t, ch, h, z, 100, 1);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(dtcp_err(&m), -ECANCELED);
	assert_ptr_equal(m.buf, z);
	zbuf_unref(m.buf);
	assert_int_equal(dtcp_stats(t)->send_refused, 2);
	pair_run(p, 10 * PAIR_STEP_NS);
	dtcp_poll(t);
	assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0);
	assert_int_equal(tcp_sock_read(c, got, sizeof(got)), 16 * 100);
	close_both(p, t, ch, h, c);
	zbuf_unref(z);
	service_free(p, t, d);
}

/*
 * The same refusal after DTCP_CLOSE, on the stack's callback (the
 * acknowledgement that made room in the full send buffer): the waiting
 * send is released, not given back (no event follows a close), and the
 * connection closes.
 */
static void test_close_and_send_buffer_cannot_grow(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	uint8_t *z = zbuf_alloc_class(ZBUF_CLASS_64K);
	uint64_t h;

	assert_non_null(z);
	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 109, &c);
	p->hold_b = true; /* the peer's ACKs wait until the test lets one go */
	/* 16 chunks fill the 256 KiB send buffer; one more send waits; then the close. */
	send_refs(p, t, ch, h, z, 16384, 16);
	send_refs(p, t, ch, h, z, 100, 1);
	assert_int_equal(dtcp_app_close(ch, h), 0);
	dtcp_poll(t);
	for (unsigned i = 0; i < 16; i++) {
		assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 1);
		assert_int_equal(m.op, DTCP_EV_SENT);
	}
	assert_int_equal(dtcp_conns(t), 1); /* closing: one send waits */
	pair_run(p, 5 * PAIR_STEP_NS);	    /* the first flight reaches the peer */
	/* One ACK (less than the first chunk): room, on side a's callback, and no memory. */
	malloc_fails = true;
	pair_release_b(p, 1);
	pair_poll_to_tx(p, &p->a);
	tcp_stack_after_tx(p->a.tcp);
	zbuf_defer_end();
	malloc_fails = false;
	assert_int_equal(dtcp_stats(t)->send_refused, 1);
	assert_int_equal(dtcp_conns(t), 0);
	dtcp_poll(t);
	assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0);
	p->hold_b = false;
	pair_run(p, 5 * PAIR_STEP_NS);
	tcp_sock_abort(c);
	zbuf_unref(z);
	service_free(p, t, d);
}

/*
 * A send partly in the send buffer when the connection fails comes back
 * (DTCP_EV_ERROR, the reset's error) from its first byte not taken; the
 * sends after it come back whole (-ECANCELED).
 */
static void test_partly_sent_comes_back_from_first_byte_not_taken(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	enum { SENDS = 12, LEN = 65000 };
	uint8_t *z = zbuf_alloc_class(ZBUF_CLASS_64K);
	unsigned errors = 0;
	uint64_t h, in, off;

	assert_non_null(z);
	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 110, &c);
	send_refs(p, t, ch, h, z, LEN, SENDS); /* to a peer that reads nothing */
	pair_run(p, 20 * PAIR_STEP_NS);
	dtcp_poll(t);
	in = dtcp_stats(t)->tx_bytes / LEN;  /* sends all in */
	off = dtcp_stats(t)->tx_bytes % LEN; /* of the next one */
	assert_true(off != 0);
	skip_sent(ch);
	tcp_sock_abort(c);
	for (m = next_event(p, t, ch); m.op == DTCP_EV_ERROR; m = next_event(p, t, ch)) {
		assert_int_equal(m.len, DTCP_SEND);
		assert_int_equal(dtcp_err(&m), errors ? -ECANCELED : -ECONNRESET);
		assert_ptr_equal(m.buf, errors ? z : z + off);
		zbuf_unref(m.buf);
		errors++;
	}
	assert_int_equal(m.op, DTCP_EV_CLOSED);
	assert_int_equal(m.conn, h);
	assert_int_equal(errors, SENDS - in);
	zbuf_unref(z);
	service_free(p, t, d);
}

/*
 * A send the send buffer takes in pieces, as acknowledgements make room
 * (each TCP_EV_WRITABLE takes a few segments' worth): each piece goes on
 * from where the last ended, so the peer gets every byte once, in order.
 */
static void test_send_taken_in_pieces(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	enum { SENDS = 12 };
	uint8_t *z = zbuf_alloc_class(ZBUF_CLASS_64K), buf[4096];
	uint64_t cut0 = tcp_stack_stats(p->a.tcp)->snd_buf_full;
	uint32_t got = 0;
	bool bad = false;
	uint64_t h;

	assert_non_null(z);
	for (uint32_t j = 0; j < 65536; j++)
		z[j] = (uint8_t)(j % 251);
	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 111, &c);
	send_refs(p, t, ch, h, z, 65536, SENDS);
	for (unsigned i = 0; i < 200000 && got < SENDS * 65536; i++) {
		size_t n;

		pair_step(p);
		dtcp_poll(t);
		n = tcp_sock_read(c, buf, sizeof(buf));
		for (size_t j = 0; j < n; j++)
			bad |= buf[j] != z[(got + j) % 65536];
		got += (uint32_t)n;
		while (lunar_chan_app_recv(ch, &m, 1) == 1)
			assert_int_equal(m.op, DTCP_EV_SENT);
	}
	assert_int_equal(got, SENDS * 65536);
	assert_false(bad);
	/* Sends cut short: many more than one per send. */
	assert_true(tcp_stack_stats(p->a.tcp)->snd_buf_full - cut0 > 2 * SENDS);
	close_both(p, t, ch, h, c);
	zbuf_unref(z);
	service_free(p, t, d);
}

/*
 * A connect no answer ever comes to (every SYN lost on the way): when
 * the SYN retransmissions give up (TCP_EV_TIMEOUT), DTCP_EV_ERROR names
 * the cookie with -ETIMEDOUT, and the slot is free again.
 */
static void test_connect_times_out(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	unsigned n = 0;

	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	p->cut_a = true;
	assert_int_equal(dtcp_app_connect(ch, PAIR_IP_B, 112, 7), 0);
	for (unsigned i = 0; i < 1000000 && !n; i++) { /* 10 s: the SYNs' 4.5 s and more */
		pair_step(p);
		dtcp_poll(t);
		n = lunar_chan_app_recv(ch, &m, 1);
	}
	p->cut_a = false;
	assert_int_equal(n, 1);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(m.len, DTCP_CONNECT);
	assert_int_equal(m.conn, 7);
	assert_int_equal(dtcp_err(&m), -ETIMEDOUT);
	assert_int_equal(dtcp_conns(t), 0);
	service_free(p, t, d);
}

/*
 * An active connection reset after DTCP_EV_CONNECTED fails as an open
 * connection does (DTCP_EV_CLOSED on its handle, -ECONNRESET), not as a
 * connect that failed (an error naming the cookie).
 */
static void test_reset_after_connected(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_listener *l;
	struct tcp_sock *s;
	uint64_t h;
	int err;

	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	l = tcp_listen_on(p->b.tcp, 113, 8, NULL, NULL, &err);
	assert_non_null(l);
	assert_int_equal(dtcp_app_connect(ch, PAIR_IP_B, 113, 5), 0);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_CONNECTED);
	assert_int_equal(m.arg, 5);
	h = m.conn;
	pair_run(p, 5 * PAIR_STEP_NS);
	s = tcp_accept(l, NULL, NULL);
	assert_non_null(s);
	tcp_sock_abort(s);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_CLOSED);
	assert_int_equal(m.conn, h);
	assert_int_equal(dtcp_err(&m), -ECONNRESET);
	assert_int_equal(dtcp_conns(t), 0);
	tcp_listener_close(l);
	service_free(p, t, d);
}

/* DTCP_EV_ACCEPTED names the peer: its address and its port (the connecting end's own). */
static void test_accepted_names_the_peer(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	int err;

	t = service_new(p, 1, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	assert_int_equal(dtcp_app_listen(ch, 114), 0);
	assert_int_equal(next_event(p, t, ch).op, DTCP_EV_LISTENING);
	c = tcp_connect_to(p->b.tcp, PAIR_IP_A, 114, NULL, NULL, &err);
	assert_non_null(c);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_ACCEPTED);
	assert_int_equal(dtcp_addr_ip(m.arg), PAIR_IP_B);
	assert_int_equal(dtcp_addr_port(m.arg), tcp_sock_conn(c)->tuple.lport);
	assert_int_not_equal(dtcp_addr_port(m.arg), 114);
	close_both(p, t, ch, m.conn, c);
	service_free(p, t, d);
}

/*
 * send_queue sends may wait, not one fewer: with a queue of one, a send
 * goes in (DTCP_EV_SENT); with one waiting for room, the next is refused
 * (-ENOBUFS), and the ones after it are canceled.
 */
static void test_send_queue_of_one(void **state)
{
	struct tcp_pair *p = *state;
	const struct dtcp_config cfg = {.send_queue = 1};
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch;
	struct lunar_msg m;
	struct tcp_sock *c;
	uint8_t *z = zbuf_alloc_class(ZBUF_CLASS_64K);
	unsigned sent = 0;
	uint64_t h;

	assert_non_null(z);
	t = service_new_cfg(p, 1, 0, &cfg, &d);
	ch = lunar_dispatch_chan(d, 0);
	h = accept_one(p, t, ch, 115, &c);
	send_refs(p, t, ch, h, z, 100, 1);
	m = next_event(p, t, ch);
	assert_int_equal(m.op, DTCP_EV_SENT);
	pair_run(p, 100 * PAIR_STEP_NS); /* acknowledged */
	/* 6 * 64 KiB in one poll, no step: 4 fill the 256 KiB send buffer, one waits. */
	send_refs(p, t, ch, h, z, 65536, 6);
	dtcp_poll(t);
	while (lunar_chan_app_recv(ch, &m, 1) == 1 && m.op == DTCP_EV_SENT)
		sent++;
	assert_int_equal(sent, 4);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(dtcp_err(&m), -ENOBUFS);
	zbuf_unref(m.buf);
	assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0);
	tcp_sock_abort(c); /* the waiting send comes back, then the connection is gone */
	for (m = next_event(p, t, ch); m.op == DTCP_EV_ERROR; m = next_event(p, t, ch))
		zbuf_unref(m.buf);
	assert_int_equal(m.op, DTCP_EV_CLOSED);
	zbuf_unref(z);
	service_free(p, t, d);
}

/*
 * A connection is its own thread's: a send or a close of it from another
 * of the dispatcher's threads is refused there (-EBADF, the buffer back,
 * counted) and touches nothing.
 */
static void test_another_threads_connection(void **state)
{
	struct tcp_pair *p = *state;
	struct lunar_dispatch *d;
	struct dtcp *t;
	struct lunar_chan *ch, *other;
	struct lunar_msg m;
	struct tcp_sock *c;
	uint8_t *z = zbuf_alloc(100);
	uint64_t h;

	assert_non_null(z);
	t = service_new(p, 2, 0, &d);
	ch = lunar_dispatch_chan(d, 0);
	other = lunar_dispatch_chan(d, 1);
	h = accept_one(p, t, ch, 116, &c);
	assert_int_equal(dtcp_app_send(other, h, z, 100), 0);
	m = next_event(p, t, other);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(m.len, DTCP_SEND);
	assert_int_equal(dtcp_err(&m), -EBADF);
	assert_ptr_equal(m.buf, z);
	assert_int_equal(dtcp_app_close(other, h), 0);
	m = next_event(p, t, other);
	assert_int_equal(m.op, DTCP_EV_ERROR);
	assert_int_equal(m.len, DTCP_CLOSE);
	assert_int_equal(dtcp_err(&m), -EBADF);
	assert_int_equal(dtcp_stats(t)->bad_handle, 2);
	pair_run(p, 10 * PAIR_STEP_NS);
	dtcp_poll(t);
	assert_int_equal(dtcp_conns(t), 1);
	assert_int_equal(tcp_sock_readable(c), 0);
	assert_int_equal(lunar_chan_app_recv(ch, &m, 1), 0);
	close_both(p, t, ch, h, c);
	zbuf_unref(z);
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
	    cmocka_unit_test_setup_teardown(test_slot_used_again_starts_clean, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_close_waits_for_the_sends, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_no_data_for_bytes_after_close, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_deferred_events_keep_their_order, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_connection_limit, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_eof_once, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_eof_after_all_data, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_sent_once_when_all_in, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_send_buffer_cannot_grow, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_close_and_send_buffer_cannot_grow, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_partly_sent_comes_back_from_first_byte_not_taken,
					    api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_send_taken_in_pieces, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_connect_times_out, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_reset_after_connected, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_accepted_names_the_peer, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_send_queue_of_one, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_another_threads_connection, api_setup,
					    api_teardown),
	};

	return cmocka_run_group_tests(tests, pair_group_setup, pair_group_teardown);
}
