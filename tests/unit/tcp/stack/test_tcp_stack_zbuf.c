/*
 * test_tcp_stack_zbuf.c - bad Zbuf input from applications at the socket
 * calls (LUNA 6.2): each gets a clear error or a named count, never
 * corruption. An application that frees a buffer still in flight: the
 * data arrives intact (the stack holds its own reference) and the object
 * is released exactly once, after the ACK. One that unrefs more than it
 * holds: a named misuse; a received slice given back twice opens the
 * window once. One that runs Zbuf dry: the copying send says
 * -ENOBUFS and takes nothing, and once buffers are back everything works
 * and nothing is left in use. One that sends in many small pieces: a
 * segment spans a hundred and more of them, every byte arrives. The
 * io-vector calls: references per piece, prefixes, short sends, and slices
 * given back together. Each with
 * payload copied into frames (as on af_xdp) and attached to them by
 * reference (as on memif and tap).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mem/zbuf.h"
#include "tcp_pair.h"

#define MS 1000000ull

static uint64_t misuses(void)
{
	struct zbuf_stats s;

	zbuf_stats(&s);
	return s.misuse;
}

static uint8_t *stream_buf(size_t len, uint64_t off)
{
	uint8_t *b = zbuf_alloc(len);

	assert_non_null(b);
	pair_fill(b, len, off);
	return b;
}

/*
 * The application sends a buffer zero-copy and frees its reference at
 * once. The stack's own reference keeps the object: the application's
 * next buffer is another object (scribbled over, it would otherwise
 * overwrite the data in flight), the data arrives intact, the object is
 * not released while unacknowledged, and after the ACK it is released
 * exactly once, with no misuse.
 */
static void test_free_while_in_flight(void **state)
{
	const bool attach = *(const bool *)*state;
	const uint32_t len = 10000; /* seven segments, a 16K object */
	struct zbuf_stats before, after;
	struct tcp_pair p;
	uint64_t misuse0 = misuses();
	uint8_t *b, *next;

	pair_open(&p, attach);
	zbuf_class_stats(ZBUF_CLASS_16K, &before);
	b = stream_buf(len, 0);
	assert_int_equal(tcp_sock_send_zc(p.cli, b, len), len);
	zbuf_free(b); /* the application is done with it; the data is not */
	if (attach)
		assert_true(zbuf_refcnt(b) > 1); /* the send buffer's, and the frames' */
	else
		assert_int_equal(zbuf_refcnt(b), 1); /* the send buffer's */
	next = zbuf_alloc(len);
	assert_non_null(next);
	assert_ptr_not_equal(next, b);
	memset(next, 0xee, len);

	/* Delivered, but the ACKs held back: the object stays. */
	p.hold_b = true;
	pair_run(&p, MS);
	pair_rcvd_ok(&p, len);
	assert_int_equal(zbuf_refcnt(b), 1); /* the frames are gone, the send buffer holds it */
	zbuf_class_stats(ZBUF_CLASS_16K, &after);
	assert_int_equal(after.frees, before.frees);

	/*
	 * Framed as the variant says: attached without a copy, or copied. With
	 * the ACKs held back a tail loss probe (RFC 8985 7) resends the last
	 * segment, framed the same way: at least len bytes.
	 */
	assert_true(tcp_stack_stats(p.a.tcp)->zc_tx_bytes >= (attach ? len : 0));
	assert_true(tcp_stack_stats(p.a.tcp)->copy_tx_bytes >= (attach ? 0 : len));
	assert_int_equal(tcp_stack_stats(p.a.tcp)->zc_tx_bytes == 0, !attach);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->copy_tx_bytes == 0, attach);

	/* The ACKs arrive: released, once. */
	p.hold_b = false;
	pair_run(&p, 5 * MS);
	pair_rcvd_ok(&p, len);
	assert_int_equal(zbuf_refcnt(b), 0);
	zbuf_class_stats(ZBUF_CLASS_16K, &after);
	assert_int_equal(after.allocs, before.allocs + 2);
	assert_int_equal(after.frees, before.frees + 1);
	assert_int_equal(misuses(), misuse0);
	zbuf_free(next);
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * A poll's bookkeeping waits for its transmit, as lunar_env_poll() runs
 * the stack (tcp_stack_defer_to_tx()): with the data read and the ACK for
 * it already in the server's transmit queue, the frames that brought it
 * are still held; tcp_stack_after_tx() and zbuf_defer_end() free them. A
 * caller that skips tcp_stack_after_tx() has it done at the start of its
 * next poll.
 */
static void test_after_tx_work(void **state)
{
	const bool attach = *(const bool *)*state;
	const uint32_t len = 3000; /* three segments: the second earns an ACK at the burst's end */
	struct tcp_pair p;
	struct rte_mempool *pool;
	unsigned idle;
	uint8_t buf[3000];

	pair_open(&p, attach);
	pool = p.b.fp.base.pool;
	pair_run(&p, MS);
	idle = rte_mempool_in_use_count(pool);
	p.hold_b = true;
	for (uint32_t round = 0; round < 2; round++) {
		pair_fill(buf, len, round * len);
		assert_int_equal(tcp_sock_send(p.cli, buf, len), len);
		pair_step(&p); /* the data to the server's port */
		assert_int_equal(p.b.fp.n_tx, 0);
		pair_poll_to_tx(&p, &p.b);
		assert_int_equal(p.rcvd_len, (round + 1) * len); /* read, in the poll */
		assert_true(p.b.fp.n_tx >= 1);			 /* its ACK sent */
		/*
		 * The frames that brought the data still held, beside the ACK (from the same pool).
		 */
		assert_true(rte_mempool_in_use_count(pool) > idle + p.b.fp.n_tx);
		if (round == 0)
			tcp_stack_after_tx(p.b.tcp);
		zbuf_defer_end();
		if (round == 0) {
			assert_int_equal(rte_mempool_in_use_count(pool), idle + p.b.fp.n_tx);
		} else {
			/* Skipped: the next poll does it first. */
			assert_true(rte_mempool_in_use_count(pool) > idle + p.b.fp.n_tx);
			zbuf_defer_begin();
			tcp_stack_poll(p.b.tcp, p.now);
			zbuf_defer_end();
			assert_int_equal(rte_mempool_in_use_count(pool), idle + p.b.fp.n_tx);
			tcp_stack_after_tx(p.b.tcp);
		}
		pair_release_b(&p, p.b.fp.n_tx);
	}
	p.hold_b = false;
	pair_run(&p, MS);
	pair_rcvd_ok(&p, 2 * len);
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * tcp_stack_defer_to_tx(false) with a poll's bookkeeping still waiting
 * for its transmit does it at once (the caller will not call
 * tcp_stack_after_tx() any more): the frame that brought the ACK goes
 * back to its pool then, not at the next poll.
 */
static void test_defer_off_does_waiting_work(void **state)
{
	const bool attach = *(const bool *)*state;
	struct tcp_pair p;
	struct rte_mempool *pool;
	uint8_t buf[1000];
	unsigned idle;

	pair_open(&p, attach);
	pool = p.a.fp.base.pool;
	pair_run(&p, MS);
	idle = rte_mempool_in_use_count(pool);
	p.hold_b = true;
	pair_fill(buf, sizeof(buf), 0);
	assert_int_equal(tcp_sock_send(p.cli, buf, sizeof(buf)), sizeof(buf));
	for (unsigned i = 0; i < 10000 && !p.b.fp.n_tx; i++)
		pair_step(&p);
	assert_int_equal(p.b.fp.n_tx, 1); /* the server's ACK, held */
	pair_release_b(&p, 1);
	pair_poll_to_tx(&p, &p.a);
	assert_int_equal(tcp_sock_conn(p.cli)->snd_una, tcp_sock_conn(p.cli)->snd_max);
	tcp_stack_defer_to_tx(p.a.tcp, false);
	zbuf_defer_end();
	assert_int_equal(rte_mempool_in_use_count(pool), idle);
	tcp_stack_defer_to_tx(p.a.tcp, true);
	p.hold_b = false;
	pair_run(&p, MS);
	pair_rcvd_ok(&p, sizeof(buf));
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * The poll after a skipped tcp_stack_after_tx() receives the segment that
 * ends a connection (the ACK of the server's FIN in LAST-ACK): the socket
 * dies in netif_input(), before tcp_stack_poll() catches up on the skipped
 * work, and stays allocated until the poll is done with it (the ASan
 * build checks that nothing reads it freed).
 */
static void test_after_tx_skipped_conn_ends(void **state)
{
	const bool attach = *(const bool *)*state;
	struct tcp_pair p;

	pair_open(&p, attach);
	tcp_sock_close(p.cli);
	pair_run(&p, MS); /* the server in CLOSE-WAIT */
	assert_int_equal(tcp_sock_conn(p.srv)->state, TCP_CLOSE_WAIT);
	p.hold_a = true;
	tcp_sock_close(p.srv);
	pair_run(&p, MS); /* its FIN out, the client's ACK held */
	assert_int_equal(tcp_sock_conn(p.srv)->state, TCP_LAST_ACK);
	assert_true(p.a.fp.n_tx >= 1);
	assert_int_equal(tcp_stack_sockets(p.b.tcp), 1);
	pair_poll_to_tx(&p, &p.b); /* an iteration whose tcp_stack_after_tx() is skipped */
	zbuf_defer_end();
	pair_release_a(&p, p.a.fp.n_tx);
	pair_poll_to_tx(&p, &p.b); /* the ACK: the socket dies */
	tcp_stack_after_tx(p.b.tcp);
	zbuf_defer_end();
	assert_int_equal(tcp_stack_sockets(p.b.tcp), 0);
	p.hold_a = false;
	pair_run(&p, MS);
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

/* An echo server's: send back what arrives. */
static void on_echo(struct tcp_sock *s, uint32_t events, void *ctx)
{
	uint8_t buf[2048];
	size_t n;

	(void)ctx;
	if (!(events & TCP_EV_READABLE))
		return;
	while ((n = tcp_sock_read(s, buf, sizeof(buf))) > 0)
		assert_int_equal(tcp_sock_send(s, buf, n), (int)n);
}

struct echo_srv {
	struct tcp_sock *s[3];
	unsigned n;
};

static void on_echo_accept(struct tcp_listener *l, void *ctx)
{
	struct echo_srv *e = ctx;
	struct tcp_sock *s;

	while (e->n < 3 && (s = tcp_accept(l, on_echo, NULL)))
		e->s[e->n++] = s;
}

/* A client's: count what comes back. */
static void on_echo_cli(struct tcp_sock *s, uint32_t events, void *ctx)
{
	size_t *got = ctx, n;
	uint8_t buf[2048];

	if (!(events & TCP_EV_READABLE))
		return;
	while ((n = tcp_sock_read(s, buf, sizeof(buf))) > 0)
		*got += n;
}

/*
 * The connections a poll's burst touched have their timers filed after the
 * transmit (tcp_stack_after_tx()). One of them killed in between (the
 * application aborts it before the loop gets there) leaves that list, and
 * the others stay on it, wherever the killed one was: each still gets its
 * retransmission timer, so its reply, lost on the way, is sent again.
 * Three connections, the middle one on the list killed.
 */
static void test_after_tx_kill_keeps_others_timers(void **state)
{
	const bool attach = *(const bool *)*state;
	struct tcp_pair p;
	struct echo_srv e = {.n = 0};
	struct tcp_sock *c[3], *victim = NULL;
	size_t got[3] = {0};
	uint8_t buf[100];
	int rc;

	pair_stacks(&p, attach);
	p.lst = tcp_listen_on(p.b.tcp, PAIR_PORT, 4, on_echo_accept, &e, &rc);
	assert_non_null(p.lst);
	for (unsigned i = 0; i < 3; i++) {
		c[i] = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_echo_cli, &got[i], &rc);
		assert_non_null(c[i]);
	}
	pair_run(&p, MS);
	assert_int_equal(e.n, 3);
	for (unsigned i = 0; i < 3; i++)
		if (tcp_sock_conn(e.s[i])->tuple.rport == tcp_sock_conn(c[1])->tuple.lport)
			victim = e.s[i];
	assert_non_null(victim);

	pair_fill(buf, sizeof(buf), 0);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(tcp_sock_send(c[i], buf, sizeof(buf)), sizeof(buf));
	p.hold_b = true;
	pair_step(&p);		   /* the three requests to the server's port */
	pair_poll_to_tx(&p, &p.b); /* one burst: read and echoed, timers left for after_tx */
	tcp_sock_abort(victim);	   /* the second request's: the middle of the list */
	tcp_stack_after_tx(p.b.tcp);
	zbuf_defer_end();
	pair_discard_tx(&p.b); /* the replies are lost */
	p.hold_b = false;
	pair_run(&p, 50 * MS);
	assert_int_equal(got[0], sizeof(buf));
	assert_int_equal(got[2], sizeof(buf));
	assert_int_equal(got[1], 0);
	assert_int_equal(tcp_sock_conn(c[1])->state, TCP_CLOSED); /* reset when it asked again */
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

static unsigned noted;
static char noted_msg[160];

static void note_misuse(const char *msg)
{
	noted++;
	snprintf(noted_msg, sizeof(noted_msg), "%s", msg);
}

/*
 * The application frees a buffer it sent twice, one reference more than it
 * holds, while the connection still holds it (not yet acknowledged). The
 * second free is refused at once: the application's share of the count
 * is already 0, whatever the stack holds. The stack's reference stays, so
 * the buffer is not freed before the ACK nor handed out again meanwhile;
 * the data arrives intact, the ACK frees it exactly once (no second
 * report), and nothing stays in use.
 */
static void test_unref_more_than_held(void **state)
{
	const bool attach = *(const bool *)*state;
	const uint32_t len = 3000;
	struct tcp_pair p;
	uint64_t misuse0 = misuses();
	uint8_t *b, *again, more[3000];
	uint32_t held;

	pair_open(&p, attach);
	b = stream_buf(len, 0);
	assert_int_equal(tcp_sock_send_zc(p.cli, b, len), len);
	held = zbuf_refcnt(b); /* ours, the send buffer's, and in-flight frames' if attached */
	assert_true(held >= 2);
	noted = 0;
	zbuf_set_misuse_handler(note_misuse);
	zbuf_free(b);
	zbuf_free(b); /* one too many: refused now, though the connection holds it */
	assert_int_equal(noted, 1);
	assert_non_null(strstr(noted_msg, "zbuf: double free at 0x"));
	assert_int_equal(zbuf_refcnt(b), held - 1); /* the stack's, untouched */
	again = zbuf_alloc(len);
	assert_non_null(again);
	assert_ptr_not_equal(zbuf_obj(again), zbuf_obj(b)); /* not reused while in flight */
	zbuf_free(again);
	pair_run(&p, 5 * MS);
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(noted, 1);
	assert_int_equal(misuses(), misuse0 + 1);
	pair_rcvd_ok(&p, len);
	assert_int_equal(zbuf_refcnt(b), 0); /* the ACK freed it, once */

	pair_fill(more, len, len);
	assert_int_equal(tcp_sock_send(p.cli, more, len), len);
	pair_run(&p, 5 * MS);
	pair_rcvd_ok(&p, 2 * len);
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

enum { THREE_SLICES_LEN = 4000 }; /* three segments */

/*
 * Open @p; the client sends THREE_SLICES_LEN bytes and the server reads
 * them zero-copy, three slices, into @sl[0..2].
 */
static void read_three_slices(struct tcp_pair *p, bool attach, struct tcp_slice sl[8])
{
	uint8_t data[THREE_SLICES_LEN];

	pair_open(p, attach);
	tcp_sock_set_ctx(p->srv, NULL, NULL); /* read below, zero-copy */
	pair_fill(data, sizeof(data), 0);
	assert_int_equal(tcp_sock_send(p->cli, data, sizeof(data)), sizeof(data));
	pair_run(p, MS);
	assert_int_equal(tcp_sock_read_zc(p->srv, sl, 8), 3);
}

/*
 * The application gives a received slice back twice, with tcp_sock_zc_done()
 * and in a tcp_sock_zc_done_v() that names one slice twice. Each second
 * reference is refused as a double free, and its bytes do not go back to
 * the receive window: what the stack counts as held stays what the
 * application still holds, so the window never opens past the buffers
 * actually free. Then every slice goes back and nothing stays in use.
 */
static void test_slice_given_back_twice(void **state)
{
	const bool attach = *(const bool *)*state;
	const uint32_t len = THREE_SLICES_LEN;
	struct tcp_slice sl[8], v[3];
	struct tcp_pair p;
	uint64_t misuse0 = misuses();
	uint32_t got = 0;

	read_three_slices(&p, attach, sl);
	for (unsigned i = 0; i < 3; i++)
		got += sl[i].len;
	assert_int_equal(got, len);
	assert_int_equal(tcp_sock_held(p.srv), len);

	noted = 0;
	zbuf_set_misuse_handler(note_misuse);
	tcp_sock_zc_done(p.srv, sl[0].data, sl[0].len);
	tcp_sock_zc_done(p.srv, sl[0].data, sl[0].len); /* refused: opens nothing */
	assert_int_equal(noted, 1);
	assert_non_null(strstr(noted_msg, "zbuf: double free at 0x"));
	assert_int_equal(tcp_sock_held(p.srv), len - sl[0].len);
	v[0] = sl[1];
	v[1] = sl[1]; /* the same slice twice in one call */
	v[2] = sl[0]; /* and one already given back */
	tcp_sock_zc_done_v(p.srv, v, 3);
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(noted, 3);
	assert_int_equal(misuses(), misuse0 + 3);
	assert_int_equal(tcp_sock_held(p.srv), sl[2].len);
	tcp_sock_zc_done_v(p.srv, &sl[2], 1);
	assert_int_equal(tcp_sock_held(p.srv), 0);
	pair_run(&p, 5 * MS);
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * A received slice given back and then sent zero-copy (an echo server's
 * use-after-free): a free packet buffer's count reads 1 as one in use, so
 * only the application's share tells; the send is refused as a misuse
 * with -EFAULT and takes nothing, so the pool's next receive cannot end
 * up in this connection's send buffer. The same inside a deferral span,
 * where the buffer is not yet back in its pool.
 */
static void test_send_of_given_back_slice_refused(void **state)
{
	const bool attach = *(const bool *)*state;
	struct tcp_slice sl[8];
	struct tcp_pair p;
	uint64_t misuse0 = misuses();

	read_three_slices(&p, attach, sl);
	noted = 0;
	zbuf_set_misuse_handler(note_misuse);
	tcp_sock_zc_done(p.srv, sl[0].data, sl[0].len);
	assert_int_equal(tcp_sock_send_zc(p.srv, sl[0].data, sl[0].len), -EFAULT);
	assert_int_equal(noted, 1);
	assert_non_null(strstr(noted_msg, "send of a buffer the application does not hold"));
	zbuf_defer_begin();
	tcp_sock_zc_done(p.srv, sl[1].data, sl[1].len);
	assert_int_equal(tcp_sock_send_zc(p.srv, sl[1].data, sl[1].len), -EFAULT);
	zbuf_defer_end();
	assert_int_equal(noted, 2);
	assert_int_equal(tcp_sock_send_zc(p.srv, sl[2].data, sl[2].len), (int)sl[2].len); /* held */
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(misuses(), misuse0 + 2);
	tcp_sock_zc_done(p.srv, sl[2].data, sl[2].len);
	pair_run(&p, 5 * MS);
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * The same inside a deferral span, where a poll's callbacks run and their
 * releases wait for the poll's end: the application's share still goes
 * down at the call, so the second give-back is refused there and the
 * window is credited once; the buffers are freed when the span ends.
 */
static void test_slice_given_back_twice_in_span(void **state)
{
	const bool attach = *(const bool *)*state;
	const uint32_t len = THREE_SLICES_LEN;
	struct tcp_slice sl[8];
	struct tcp_pair p;
	uint64_t in_use;

	read_three_slices(&p, attach, sl);
	in_use = zbuf_in_use();

	noted = 0;
	zbuf_set_misuse_handler(note_misuse);
	zbuf_defer_begin();
	tcp_sock_zc_done(p.srv, sl[0].data, sl[0].len);
	tcp_sock_zc_done(p.srv, sl[0].data, sl[0].len); /* refused at the call */
	assert_int_equal(noted, 1);
	assert_int_equal(tcp_sock_held(p.srv), len - sl[0].len);
	tcp_sock_zc_done_v(p.srv, &sl[1], 2);
	tcp_sock_zc_done_v(p.srv, &sl[1], 1); /* again */
	assert_int_equal(noted, 2);
	assert_int_equal(tcp_sock_held(p.srv), 0);
	assert_int_equal(zbuf_in_use(), in_use); /* nothing freed before the end */
	zbuf_defer_end();
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(noted, 2);
	assert_true(zbuf_in_use() < in_use);
	pair_run(&p, 5 * MS);
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

/* Allocate every object of every class (each fails once, at the end); @return them, *n of them. */
static void **run_dry(size_t *n)
{
	size_t cap = 4096;
	void **held = malloc(cap * sizeof(*held));
	void *o;

	assert_non_null(held);
	*n = 0;
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++) {
		while ((o = zbuf_alloc_class((enum zbuf_class)c)) != NULL) {
			assert_true(*n < cap);
			held[(*n)++] = o;
		}
		assert_int_equal(errno, ENOMEM);
	}
	return held;
}

/* The index in @held of an object of class @cls. */
static size_t held_of_class(void **held, size_t n, enum zbuf_class cls)
{
	for (size_t i = 0; i < n; i++)
		if (zbuf_obj_size(held[i]) == zbuf_class_size(cls))
			return i;
	fail_msg("no held object of class %d", cls);
	return 0;
}

/*
 * The application runs Zbuf dry. Each allocation that finds nothing is
 * counted (failures). A copying send has nowhere to copy to: -ENOBUFS,
 * and nothing is taken, copied or sent. Zero-copy sends of buffers the
 * application already has still go, and their ACKs still get in (packets
 * live in the pool's own zones, not the application's classes). With one
 * 64K object back, a send of 100 000 bytes takes the 65 536 it found room
 * for, says so and sends them (a later chunk's failed allocation once
 * left them queued until the next call); the rest is refused. Once
 * everything is freed the rest goes, the receiver has every byte in
 * order, and in_use is back where it was.
 */
static void test_exhaustion(void **state)
{
	const bool attach = *(const bool *)*state;
	const uint32_t zc_len = 5000, big = 100000;
	struct zbuf_stats s0, s1;
	struct tcp_pair p;
	uint64_t base, misuse0 = misuses(), copied_before, segs_before;
	uint32_t space;
	uint8_t *src, *zc;
	size_t n, i;
	void **held;
	int rc;

	pair_open(&p, attach);
	base = zbuf_in_use();
	src = malloc(big);
	assert_non_null(src);
	pair_fill(src, big, zc_len);

	zbuf_stats(&s0);
	held = run_dry(&n);
	zbuf_stats(&s1);
	assert_int_equal(s1.failures, s0.failures + ZBUF_CLASS_COUNT);
	assert_int_equal(s1.in_use, s0.in_use + n);

	space = tcp_sock_send_space(p.cli);
	copied_before = tcp_stack_stats(p.a.tcp)->copy_tx_bytes;
	segs_before = tcp_stack_stats(p.a.tcp)->segs_out;
	assert_int_equal(tcp_sock_send(p.cli, src, 1000), -ENOBUFS);
	zbuf_stats(&s1);
	assert_int_equal(s1.failures, s0.failures + ZBUF_CLASS_COUNT + 1);
	assert_int_equal(tcp_sock_send_space(p.cli), space);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->copy_tx_bytes, copied_before);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->segs_out, segs_before);

	/* Buffers already held still go zero-copy, and are released on their ACK. */
	zc = held[held_of_class(held, n, ZBUF_CLASS_16K)];
	pair_fill(zc, zc_len, 0);
	assert_int_equal(tcp_sock_send_zc(p.cli, zc, zc_len), zc_len);
	pair_run(&p, 5 * MS);
	pair_rcvd_ok(&p, zc_len);
	assert_int_equal(zbuf_refcnt(zc), 1); /* the application's only */

	/* One 64K object back: the first 64 KiB of a bigger send is taken, and said. */
	i = held_of_class(held, n, ZBUF_CLASS_64K);
	zbuf_free(held[i]);
	held[i] = held[--n];
	rc = tcp_sock_send(p.cli, src, big);
	assert_int_equal(rc, 65536);
	assert_int_equal(tcp_sock_send(p.cli, src + rc, big - (uint32_t)rc), -ENOBUFS);
	pair_run(&p, 20 * MS);
	pair_rcvd_ok(&p, zc_len + 65536);

	/* Everything back: the rest goes, every byte arrives in order. */
	for (i = 0; i < n; i++)
		zbuf_free(held[i]);
	free(held);
	assert_int_equal(tcp_sock_send(p.cli, src + rc, big - (uint32_t)rc), big - (uint32_t)rc);
	pair_run(&p, 20 * MS);
	pair_rcvd_ok(&p, zc_len + big);
	assert_int_equal(zbuf_in_use(), base);
	assert_int_equal(misuses(), misuse0);
	free(src);
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * Many small sends queued behind a full window, each a chunk of the send
 * buffer of its own: once the ACKs come, every segment carrying them
 * spans about 145 chunks, more than the framing takes in one go. Every
 * byte arrives as written (a frame built from only the first chunks would
 * carry whatever its buffer held before), and nothing stays in use.
 */
static void test_segment_of_many_sends(void **state)
{
	const bool attach = *(const bool *)*state;
	const size_t first = 20000, small = 10, n_small = 500;
	struct tcp_pair p;
	uint8_t *big = malloc(first), buf[10];

	assert_non_null(big);
	pair_open(&p, attach);
	p.hold_b = true; /* no ACK yet: the initial window fills, the rest waits */
	pair_fill(big, first, 0);
	assert_int_equal(tcp_sock_send(p.cli, big, first), first);
	for (size_t i = 0; i < n_small; i++) {
		pair_fill(buf, small, first + i * small);
		assert_int_equal(tcp_sock_send(p.cli, buf, small), small);
	}
	assert_true(tcp_sock_conn(p.cli)->snd.count > n_small);
	pair_step(&p);
	p.hold_b = false;
	pair_run(&p, 5 * MS);
	pair_rcvd_ok(&p, first + n_small * small);
	free(big);
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * The io-vector calls. Several pieces of Zbuf memory go in one
 * tcp_sock_send_zcv(), each with a reference of its own; a piece that is
 * not Zbuf memory ends the prefix taken (and alone is -EFAULT); a send
 * buffer that fills cuts the last piece taken, counted as a short send.
 * Slices read zero-copy go back in one tcp_sock_zc_done_v(): every
 * reference dropped, the window opened by their total, nothing left held.
 */
static void test_io_vectors(void **state)
{
	const bool attach = *(const bool *)*state;
	enum { A = 3000, B = 2000, BIG = 60000, NBIG = 5 };
	uint8_t *a = stream_buf(A, 0), *b = stream_buf(B, A), *big[NBIG], not_zbuf[100];
	struct tcp_iov v[] = {{a, A}, {b, B}, {not_zbuf, sizeof(not_zbuf)}}, vb[NBIG];
	struct tcp_slice sl[64];
	struct tcp_pair p;
	uint32_t got = 0, space;
	unsigned n;

	pair_open(&p, attach);
	tcp_sock_set_ctx(p.srv, NULL, NULL); /* read below, zero-copy */
	assert_int_equal(tcp_sock_send_zcv(p.cli, v, 3), A + B);
	assert_int_equal(zbuf_refcnt(a) >= 2, true); /* ours and the send buffer's */
	assert_int_equal(zbuf_refcnt(b) >= 2, true);
	assert_int_equal(tcp_sock_send_zcv(p.cli, &v[2], 1), -EFAULT);
	assert_int_equal(tcp_sock_send_zcv(p.cli, v, 0), 0);
	zbuf_free(a);
	zbuf_free(b);
	pair_run(&p, MS);
	n = tcp_sock_read_zc(p.srv, sl, 64);
	for (unsigned i = 0; i < n; i++) {
		for (uint32_t j = 0; j < sl[i].len; j++)
			assert_int_equal(sl[i].data[j], pair_byte(got + j));
		got += sl[i].len;
	}
	assert_int_equal(got, A + B);
	assert_int_equal(tcp_sock_held(p.srv), A + B);
	tcp_sock_zc_done_v(p.srv, sl, n);
	assert_int_equal(tcp_sock_held(p.srv), 0);
	pair_run(&p, 5 * MS);
	assert_int_equal(zbuf_refcnt(a), 0); /* acknowledged, released */
	assert_int_equal(zbuf_refcnt(b), 0);

	/* More than the send buffer takes: a prefix, the last piece cut, counted. */
	p.hold_b = true;
	space = tcp_sock_send_space(p.cli);
	assert_true(space < NBIG * BIG);
	for (unsigned i = 0; i < NBIG; i++) {
		big[i] = stream_buf(BIG, A + B + i * BIG);
		vb[i] = (struct tcp_iov){big[i], BIG};
	}
	assert_int_equal(tcp_sock_send_zcv(p.cli, vb, NBIG), space);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->snd_buf_full, 1);
	for (unsigned i = 0; i < NBIG; i++)
		zbuf_free(big[i]);
	p.hold_b = false;
	pair_run(&p, 5 * MS);
	n = tcp_sock_read_zc(p.srv, sl, 64);
	got = 0;
	for (unsigned i = 0; i < n; i++)
		got += sl[i].len;
	tcp_sock_zc_done_v(p.srv, sl, n);
	assert_true(got > 0);
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

static void ignore_events(struct tcp_sock *s, uint32_t ev, void *ctx)
{
	(void)s;
	(void)ev;
	(void)ctx;
}

/*
 * A received packet buffer sent on, zero-copy, by a server that has
 * already referenced it ~64k times (a fan-out to every connection): the
 * count is DPDK's 16 bits. At ZBUF_MBUF_REF_MAX the send is refused with
 * -EOVERFLOW and nothing is taken; one below it the send buffer takes the
 * last reference allowed and the frame, finding none left to attach the
 * payload with, copies it: the bytes arrive intact and every reference
 * comes back, no count wrapped.
 */
static void test_send_of_widely_referenced_buffer(void **state)
{
	bool attach = *(bool *)*state;
	const uint32_t len = 1000;
	struct tcp_slice sl[4];
	struct tcp_pair p;
	struct rte_mbuf *m;
	uint8_t *buf = malloc(len), got[1000];
	uint16_t r0, extra;
	uint64_t zc0, copy0;

	assert_non_null(buf);
	pair_open(&p, attach);
	tcp_sock_set_ctx(p.srv, ignore_events, NULL);
	pair_fill(buf, len, 0);
	assert_int_equal(tcp_sock_send(p.cli, buf, len), (int)len);
	pair_run(&p, 1 * MS);
	assert_int_equal(tcp_sock_read_zc(p.srv, sl, 4), 1);
	assert_int_equal(sl[0].len, len);
	m = zbuf_obj(sl[0].data);
	assert_non_null(m);
	r0 = rte_mbuf_refcnt_read(m);
	extra = (uint16_t)(ZBUF_MBUF_REF_MAX - r0);
	rte_mbuf_refcnt_update(m, (int16_t)extra); /* the fan-out's references */
	assert_int_equal(tcp_sock_send_zc(p.srv, sl[0].data, len), -EOVERFLOW);
	assert_int_equal(rte_mbuf_refcnt_read(m), ZBUF_MBUF_REF_MAX);
	rte_mbuf_refcnt_update(m, -1);
	zc0 = tcp_stack_stats(p.b.tcp)->zc_tx_bytes;
	copy0 = tcp_stack_stats(p.b.tcp)->copy_tx_bytes;
	assert_int_equal(tcp_sock_send_zc(p.srv, sl[0].data, len), (int)len);
	pair_step(&p);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->zc_tx_bytes, zc0);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->copy_tx_bytes - copy0, len);
	pair_run(&p, 2 * MS);
	/* The bytes came back whole; the send buffer's reference is gone with the ACK. */
	assert_int_equal(tcp_sock_read(p.cli, got, sizeof(got)), (int)len);
	assert_memory_equal(got, buf, len);
	assert_int_equal(rte_mbuf_refcnt_read(m), ZBUF_MBUF_REF_MAX - 1);
	rte_mbuf_refcnt_update(m, (int16_t) - (extra - 1));
	assert_int_equal(rte_mbuf_refcnt_read(m), r0);
	tcp_sock_zc_done_v(p.srv, sl, 1);
	free(buf);
	tcp_sock_set_ctx(p.srv, pair_on_srv, &p);
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

/* What test_udp_handoff's callback saw and does. */
struct udp_seen {
	unsigned calls;
	const uint8_t *payload;
	size_t len;
	uint32_t share; /* the application's share of the frame inside the call */
	bool keep, free_inside;
};

static bool on_udp(void *ctx, uint32_t src, uint16_t sport, uint16_t dport, const uint8_t *payload,
		   size_t len, uint64_t now_ns)
{
	struct udp_seen *u = ctx;

	(void)src, (void)sport, (void)dport, (void)now_ns;
	u->calls++;
	u->payload = payload;
	u->len = len;
	u->share = zbuf_app_refcnt(payload);
	if (u->free_inside)
		zbuf_free(payload);
	return u->keep;
}

/*
 * A UDP datagram's frame is handed to the callback as the application's
 * reference (docs/MEMORY.md): kept, it is released with zbuf_free() and a
 * second free is refused; declined, the stack frees it; freed inside the
 * callback and kept, nothing more happens; freed inside and then declined
 * as well (the application's mistake), the frame is freed once and the
 * mistake named when the stack takes the reference back. Every frame is
 * back in its pool at the end (pair_close()).
 */
static void test_udp_handoff(void **state)
{
	const bool attach = *(const bool *)*state;
	static const char msg[] = "one block, one datagram";
	struct udp_seen u = {.keep = true};
	struct tcp_pair p;
	uint64_t misuse0 = misuses();

	pair_stacks(&p, attach);
	assert_int_equal(netif_udp_bind(&p.b.nif, 9000, on_udp, &u), 0);
	assert_int_equal(netif_udp_send(&p.a.nif, 9001, PAIR_IP_B, 9000, msg, sizeof(msg)), 0);
	pair_run(&p, MS);
	assert_int_equal(u.calls, 1);
	assert_int_equal(u.len, sizeof(msg));
	assert_memory_equal(u.payload, msg, sizeof(msg));
	assert_int_equal(u.share, 1);
	assert_int_equal(zbuf_app_refcnt(u.payload), 1); /* kept */
	zbuf_free(u.payload);
	noted = 0;
	zbuf_set_misuse_handler(note_misuse);
	zbuf_free(u.payload); /* outside a poll: refused at the call */
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(noted, 1);
	assert_non_null(strstr(noted_msg, "zbuf: double free at 0x"));

	u.keep = false; /* declined: the stack frees it */
	assert_int_equal(netif_udp_send(&p.a.nif, 9001, PAIR_IP_B, 9000, msg, sizeof(msg)), 0);
	pair_run(&p, MS);
	assert_int_equal(u.calls, 2);
	assert_int_equal(u.share, 1);

	u.keep = true; /* kept and released inside the call */
	u.free_inside = true;
	assert_int_equal(netif_udp_send(&p.a.nif, 9001, PAIR_IP_B, 9000, msg, sizeof(msg)), 0);
	pair_run(&p, MS);
	assert_int_equal(u.calls, 3);
	assert_int_equal(misuses(), misuse0 + 1);

	u.keep = false; /* released inside and declined: one release too many */
	noted = 0;
	zbuf_set_misuse_handler(note_misuse);
	assert_int_equal(netif_udp_send(&p.a.nif, 9001, PAIR_IP_B, 9000, msg, sizeof(msg)), 0);
	pair_run(&p, MS);
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(u.calls, 4);
	assert_int_equal(noted, 1);
	assert_non_null(
	    strstr(noted_msg, "zbuf: take of a reference the application does not hold"));
	assert_int_equal(misuses(), misuse0 + 2);
	netif_udp_unbind(&p.b.nif, 9000);
	pair_close(&p);
	assert_int_equal(zbuf_in_use(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    PAIR_BOTH_FRAMINGS(test_free_while_in_flight),
	    PAIR_BOTH_FRAMINGS(test_unref_more_than_held),
	    PAIR_BOTH_FRAMINGS(test_slice_given_back_twice),
	    PAIR_BOTH_FRAMINGS(test_slice_given_back_twice_in_span),
	    PAIR_BOTH_FRAMINGS(test_send_of_given_back_slice_refused),
	    PAIR_BOTH_FRAMINGS(test_exhaustion),
	    PAIR_BOTH_FRAMINGS(test_segment_of_many_sends),
	    PAIR_BOTH_FRAMINGS(test_io_vectors),
	    PAIR_BOTH_FRAMINGS(test_after_tx_work),
	    PAIR_BOTH_FRAMINGS(test_defer_off_does_waiting_work),
	    PAIR_BOTH_FRAMINGS(test_after_tx_skipped_conn_ends),
	    PAIR_BOTH_FRAMINGS(test_after_tx_kill_keeps_others_timers),
	    PAIR_BOTH_FRAMINGS(test_send_of_widely_referenced_buffer),
	    PAIR_BOTH_FRAMINGS(test_udp_handoff),
	};

	return cmocka_run_group_tests_name("tcp/stack_zbuf", tests, pair_group_setup,
					   pair_group_teardown);
}
