/*
 * test_lsock.c - the socket-like interface and its readiness sets
 * (api/lsock.h) on two whole stacks back to back (tcp_pair.h): a
 * connection's life through the BSD-style calls, epoll's level-triggered,
 * edge-triggered and one-shot semantics, errors as the socket calls give
 * them, and the zero-copy io-vector calls under the copying ones.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "api/lsock.h"
#include "mem/zbuf.h"
#include "wire/tcp.h"
#include "api_pair.h"

#define PORT 80

/* Wait (stepping the pair) until @ep reports something; @return how many. */
static int wait_events(struct tcp_pair *p, struct lpoll *ep, struct lpoll_event *ev, unsigned max)
{
	for (unsigned i = 0; i < 2000; i++) {
		int n = lpoll_wait(ep, ev, max);

		assert_true(n >= 0);
		if (n)
			return n;
		pair_step(p);
	}
	return 0;
}

/* A listener on b, a connection from a, accepted: both established. */
struct conn_pair {
	struct lsock *l, *c, *s; /* listener (b), client (a), server side (b) */
	struct lpoll *ea, *eb;
};

static void open_pair(struct tcp_pair *p, struct conn_pair *cp)
{
	struct lpoll_event ev[4];
	int err;

	cp->ea = lpoll_create();
	cp->eb = lpoll_create();
	cp->l = lsock_listen(p->b.tcp, PORT, 16, &err);
	assert_non_null(cp->l);
	assert_int_equal(lpoll_ctl(cp->eb, LPOLL_CTL_ADD, cp->l, LPOLL_IN, 1), 0);
	assert_int_equal(lpoll_wait(cp->eb, ev, 4), 0); /* nothing to accept yet */
	assert_null(lsock_accept(cp->l, &err));
	assert_int_equal(err, -EAGAIN);

	cp->c = lsock_connect(p->a.tcp, PAIR_IP_B, PORT, &err);
	assert_non_null(cp->c);
	assert_int_equal(lsock_send(cp->c, "x", 1), -EAGAIN); /* still connecting */
	assert_int_equal(lpoll_ctl(cp->ea, LPOLL_CTL_ADD, cp->c, LPOLL_OUT, 2), 0);
	assert_int_equal(lpoll_wait(cp->ea, ev, 4), 0);

	assert_int_equal(wait_events(p, cp->eb, ev, 4), 1);
	assert_int_equal(ev[0].events, LPOLL_IN);
	assert_int_equal(ev[0].data, 1);
	cp->s = lsock_accept(cp->l, &err);
	assert_non_null(cp->s);
	assert_int_equal(err, 0);
	assert_int_equal(lsock_tuple(cp->s)->rport, lsock_tuple(cp->c)->lport);
	assert_null(lsock_tuple(cp->l));

	assert_int_equal(wait_events(p, cp->ea, ev, 4), 1);
	assert_int_equal(ev[0].events, LPOLL_OUT);
	assert_int_equal(ev[0].data, 2);
	assert_int_equal(lpoll_ctl(cp->ea, LPOLL_CTL_DEL, cp->c, 0, 0), 0);
}

static void close_pair(struct tcp_pair *p, struct conn_pair *cp)
{
	lsock_close(cp->c);
	lsock_close(cp->s);
	lsock_close(cp->l);
	lpoll_free(cp->ea);
	lpoll_free(cp->eb);
	/* FINs, ACKs, TIME-WAIT timers need not finish: free releases */
	pair_run(p, 200 * PAIR_STEP_NS);
}

/* 200 KB each way through the copying calls, an echo on the server side. */
static void test_copy_echo(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	enum { TOTAL = 200000 };
	uint8_t *out = malloc(TOTAL), *back = malloc(TOTAL), buf[5000];
	size_t sent = 0, got = 0;

	assert_non_null(out);
	assert_non_null(back);
	for (size_t i = 0; i < TOTAL; i++)
		out[i] = (uint8_t)(i * 7 + i / 251);
	open_pair(p, &cp);
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_ADD, cp.s, LPOLL_IN, 3), 0);
	for (unsigned step = 0; got < TOTAL && step < 100000; step++) {
		struct lpoll_event ev[4];
		ssize_t n;

		if (sent < TOTAL) {
			n = lsock_send(cp.c, out + sent, TOTAL - sent);
			assert_true(n > 0 || n == -EAGAIN);
			if (n > 0)
				sent += (size_t)n;
		}
		for (int k = lpoll_wait(cp.eb, ev, 4) - 1; k >= 0; k--) {
			if (ev[k].data != 3)
				continue;
			/* Echo no more than the send buffer takes now: nothing waits between. */
			size_t room = lsock_send_space(cp.s);

			n = lsock_recv(cp.s, buf, room < sizeof(buf) ? room : sizeof(buf));
			if (n > 0)
				assert_int_equal(lsock_send(cp.s, buf, (size_t)n), n);
		}
		n = lsock_recv(cp.c, back + got, TOTAL - got);
		assert_true(n > 0 || n == -EAGAIN);
		if (n > 0)
			got += (size_t)n;
		pair_step(p);
	}
	assert_int_equal(got, TOTAL);
	assert_memory_equal(out, back, TOTAL);
	assert_true(tcp_stack_stats(p->a.tcp)->copy_tx_bytes >= TOTAL);
	assert_true(tcp_stack_stats(p->b.tcp)->copy_rx_bytes >= TOTAL);
	close_pair(p, &cp);
	free(out);
	free(back);
}

/* Level-triggered: reported at every wait while unread; gone once read. */
static void test_level_triggered(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct lpoll_event ev[4];
	char buf[16];

	open_pair(p, &cp);
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_ADD, cp.s, LPOLL_IN, 7), 0);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 0);
	assert_int_equal(lsock_send(cp.c, "hello", 5), 5);
	assert_int_equal(wait_events(p, cp.eb, ev, 4), 1);
	assert_int_equal(ev[0].events, LPOLL_IN);
	assert_int_equal(ev[0].data, 7);
	pair_run(p, 5 * PAIR_STEP_NS);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 1); /* still unread: again */
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 1);
	assert_int_equal(lsock_readable(cp.s), 5);
	assert_int_equal(lsock_recv(cp.s, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 0); /* read: no longer */
	assert_int_equal(lsock_recv(cp.s, buf, sizeof(buf)), -EAGAIN);
	close_pair(p, &cp);
}

/* Edge-triggered: once per arrival, however much stays unread. */
static void test_edge_triggered(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct lpoll_event ev[4];
	uint32_t room;

	open_pair(p, &cp);
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_ADD, cp.s, LPOLL_IN | LPOLL_ET, 9), 0);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 0);
	assert_int_equal(lsock_send(cp.c, "one", 3), 3);
	assert_int_equal(wait_events(p, cp.eb, ev, 4), 1);
	assert_int_equal(ev[0].events, LPOLL_IN);
	pair_run(p, 5 * PAIR_STEP_NS);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 0); /* unread, but no new edge */
	assert_int_equal(lsock_send(cp.c, "two", 3), 3);
	assert_int_equal(wait_events(p, cp.eb, ev, 4), 1); /* new data: a new edge */
	assert_int_equal(lsock_readable(cp.s), 6);
	/* Its own data acknowledged frees send space: no edge for a reader (as epoll). */
	room = lsock_send_space(cp.s);
	assert_int_equal(lsock_send(cp.s, "reply", 5), 5);
	pair_run(p, 100000 * PAIR_STEP_NS); /* a second: the delayed ACK came too */
	assert_int_equal(lsock_readable(cp.c), 5);
	assert_int_equal(lsock_send_space(cp.s), room); /* acknowledged */
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 0);
	close_pair(p, &cp);
}

/* One-shot: one report, then nothing until re-armed with MOD. */
static void test_oneshot_and_ctl_errors(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct lpoll_event ev[4];
	struct lpoll *other = lpoll_create();

	open_pair(p, &cp);
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_ADD, cp.s, LPOLL_IN | LPOLL_ONESHOT, 5), 0);
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_ADD, cp.s, LPOLL_IN, 5), -EEXIST);
	assert_int_equal(lpoll_ctl(other, LPOLL_CTL_ADD, cp.s, LPOLL_IN, 5), -EEXIST);
	assert_int_equal(lpoll_ctl(other, LPOLL_CTL_MOD, cp.s, LPOLL_IN, 5), -ENOENT);
	assert_int_equal(lpoll_ctl(other, LPOLL_CTL_DEL, cp.s, 0, 0), -ENOENT);
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_MOD, cp.s, 0x40000, 5), -EINVAL);
	assert_int_equal(lpoll_ctl(cp.eb, (enum lpoll_op)9, cp.s, LPOLL_IN, 5), -EINVAL);
	assert_int_equal(lpoll_wait(cp.eb, ev, 0), -EINVAL);
	assert_int_equal(lsock_send(cp.c, "abc", 3), 3);
	assert_int_equal(wait_events(p, cp.eb, ev, 4), 1);
	pair_run(p, 3 * PAIR_STEP_NS);
	assert_int_equal(lsock_send(cp.c, "def", 3), 3);
	pair_run(p, 10 * PAIR_STEP_NS);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 0); /* disarmed */
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_MOD, cp.s, LPOLL_IN | LPOLL_ONESHOT, 6), 0);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 1);
	assert_int_equal(ev[0].data, 6);
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_DEL, cp.s, 0, 0), 0);
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_MOD, cp.s, LPOLL_IN, 6), -ENOENT);
	lpoll_free(other);
	close_pair(p, &cp);
}

/* A connection refused: ERR and HUP (always reported), and the error on every call. */
static void test_refused(void **state)
{
	struct tcp_pair *p = *state;
	struct lpoll *ep = lpoll_create();
	struct lpoll_event ev[4];
	char buf[8];
	int err;
	struct lsock *c = lsock_connect(p->a.tcp, PAIR_IP_B, 81, &err);

	assert_non_null(c);
	assert_int_equal(lpoll_ctl(ep, LPOLL_CTL_ADD, c, LPOLL_OUT, 1), 0);
	assert_int_equal(wait_events(p, ep, ev, 4), 1);
	assert_int_equal(ev[0].events & (LPOLL_ERR | LPOLL_HUP), LPOLL_ERR | LPOLL_HUP);
	assert_false(ev[0].events & LPOLL_OUT);
	assert_int_equal(lsock_error(c), -ECONNREFUSED);
	assert_int_equal(lsock_send(c, "x", 1), -ECONNREFUSED);
	assert_int_equal(lsock_recv(c, buf, sizeof(buf)), -ECONNREFUSED);
	assert_int_equal(lsock_send_space(c), 0);
	assert_null(lsock_accept(c, &err)); /* not a listener */
	assert_int_equal(err, -EINVAL);
	lsock_close(c);
	lpoll_free(ep);
	pair_run(p, 10 * PAIR_STEP_NS);
}

/* The peer's FIN: IN and RDHUP, reads return 0; both sides shut: HUP. */
static void test_eof_and_hup(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct lpoll_event ev[4];
	char buf[8];

	open_pair(p, &cp);
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_ADD, cp.s, LPOLL_IN | LPOLL_RDHUP, 1), 0);
	assert_int_equal(lsock_send(cp.c, "bye", 3), 3);
	assert_int_equal(lsock_shutdown(cp.c), 0);
	assert_int_equal(lsock_send(cp.c, "more", 4), -EPIPE);
	pair_run(p, 10 * PAIR_STEP_NS);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 1);
	assert_int_equal(ev[0].events, LPOLL_IN | LPOLL_RDHUP);
	assert_int_equal(lsock_recv(cp.s, buf, sizeof(buf)), 3);
	assert_int_equal(lsock_recv(cp.s, buf, sizeof(buf)), 0); /* end of stream */
	assert_int_equal(lsock_send(cp.s, "ok", 2), 2);		 /* half-close: b may still send */
	assert_int_equal(lsock_shutdown(cp.s), 0);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 1);
	assert_true(ev[0].events & LPOLL_HUP);
	pair_run(p, 10 * PAIR_STEP_NS);
	assert_int_equal(lsock_recv(cp.c, buf, sizeof(buf)), 2);
	assert_int_equal(lsock_recv(cp.c, buf, sizeof(buf)), 0);
	assert_int_equal(lsock_shutdown(cp.l), -ENOTCONN);
	assert_int_equal(lsock_send(cp.l, "x", 1), -EINVAL);
	close_pair(p, &cp);
}

/*
 * A freed set lets go of every member, not only those on its ready list
 * at the time: a socket reported and taken off the list may join another
 * set, and its next event touches no freed memory (ASan would see it).
 */
static void test_lpoll_free_releases_members(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct lpoll_event ev[4];
	struct lpoll *ep2 = lpoll_create();

	open_pair(p, &cp);
	assert_non_null(ep2);
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_ADD, cp.s, LPOLL_IN | LPOLL_ET, 7), 0);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 0); /* nothing ready: both left the list */
	lpoll_free(cp.eb);
	cp.eb = lpoll_create();
	assert_int_equal(lpoll_ctl(ep2, LPOLL_CTL_ADD, cp.s, LPOLL_IN, 8), 0);
	assert_int_equal(lsock_send(cp.c, "hello", 5), 5);
	assert_int_equal(wait_events(p, ep2, ev, 4), 1);
	assert_int_equal(ev[0].data, 8);
	assert_int_equal(ev[0].events, LPOLL_IN);
	lsock_close(cp.s); /* leaves ep2 */
	cp.s = NULL;
	lpoll_free(ep2);
	close_pair(p, &cp);
}

/*
 * A connection ended by lsock_shutdown() while connecting has no error
 * and no FIN: its HUP is reported, and a read says end of stream rather
 * than -EAGAIN for ever.
 */
static void test_shutdown_while_connecting(void **state)
{
	struct tcp_pair *p = *state;
	struct lpoll_event ev[4];
	struct lpoll *ep = lpoll_create();
	struct lsock *c;
	char buf[8];
	int err;

	c = lsock_connect(p->a.tcp, PAIR_IP_B, PORT, &err);
	assert_non_null(c);
	assert_int_equal(lpoll_ctl(ep, LPOLL_CTL_ADD, c, LPOLL_IN, 3), 0);
	assert_int_equal(lsock_shutdown(c), 0);
	pair_run(p, 10 * PAIR_STEP_NS);
	assert_int_equal(lpoll_wait(ep, ev, 4), 1);
	assert_true(ev[0].events & LPOLL_HUP);
	assert_int_equal(lsock_error(c), 0);
	assert_int_equal(lsock_recv(c, buf, sizeof(buf)), 0);
	lsock_close(c);
	lpoll_free(ep);
}

/*
 * Closed with data unread after its own FIN was sent (LAST-ACK), and that
 * FIN lost: the close still sends a RST (RFC 2525 2.17, as Linux), or the
 * peer, in FIN-WAIT-2 with its socket open, would wait for ever.
 */
static void test_close_unread_after_shutdown_resets(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	char buf[8];

	open_pair(p, &cp);
	assert_int_equal(lsock_send(cp.c, "data", 4), 4);
	assert_int_equal(lsock_shutdown(cp.c), 0);
	pair_run(p, 10 * PAIR_STEP_NS); /* b: 4 bytes and the FIN, unread: CLOSE-WAIT */
	assert_int_equal(lsock_readable(cp.s), 4);
	assert_int_equal(lsock_shutdown(cp.s), 0);
	p->hold_b = true;
	pair_step(p);		/* b's FIN leaves (LAST-ACK)... */
	pair_discard_tx(&p->b); /* ...and is lost */
	p->hold_b = false;
	assert_int_equal(lsock_recv(cp.c, buf, sizeof(buf)), -EAGAIN); /* a: FIN-WAIT-2 */
	lsock_close(cp.s);
	cp.s = NULL;
	pair_run(p, 10 * PAIR_STEP_NS);
	assert_int_equal(lsock_error(cp.c), -ECONNRESET);
	assert_int_equal(lsock_recv(cp.c, buf, sizeof(buf)), -ECONNRESET);
	close_pair(p, &cp);
}

/*
 * A connection that opens while the stack-wide memory cap (mem_max) is
 * spent by received data the application holds: it is established with
 * no room, so LPOLL_OUT cannot be reported yet; once the data is given
 * back LPOLL_OUT must follow, though this socket never tried to send (no
 * send was cut to wake it).
 */
static void test_out_after_memory_frees(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct lpoll_event ev[4];
	struct tcp_limits lim = *tcp_stack_limits(p->a.tcp);
	static char data[96 * 1024];
	struct tcp_slice sl[256];
	struct lsock *c2, *s2;
	int n = 0, got, err;
	size_t sent = 0;

	open_pair(p, &cp);
	lim.mem_max = TCP_LIMITS_MEM_MIN;
	assert_int_equal(tcp_stack_set_limits(p->a.tcp, &lim), 0);
	while (sent < sizeof(data)) { /* b to a, held by a's application */
		ssize_t k = lsock_send(cp.s, data + sent, sizeof(data) - sent);

		if (k > 0)
			sent += (size_t)k;
		pair_run(p, 10 * PAIR_STEP_NS);
		while (n < 256 && (got = lsock_recv_zc(cp.c, sl + n, (unsigned)(256 - n))) > 0)
			n += got;
		if (!lsock_readable(cp.c) && k <= 0 && !lsock_send_space(cp.s))
			break;
		if (p->now > 2000000000ull)
			break;
	}
	assert_true(n > 0);
	c2 = lsock_connect(p->a.tcp, PAIR_IP_B, PORT, &err);
	assert_non_null(c2);
	assert_int_equal(lpoll_ctl(cp.ea, LPOLL_CTL_ADD, c2, LPOLL_OUT, 5), 0);
	assert_int_equal(wait_events(p, cp.eb, ev, 4), 1); /* b's listener */
	s2 = lsock_accept(cp.l, &err);
	assert_non_null(s2);
	pair_run(p, 10 * PAIR_STEP_NS);
	assert_int_equal(lsock_send_space(c2), 0); /* established, but no room */
	assert_int_equal(lpoll_wait(cp.ea, ev, 4), 0);
	for (int i = 0; i < n; i++)
		lsock_recv_zc_done(cp.c, &sl[i]);
	assert_int_equal(wait_events(p, cp.ea, ev, 4), 1);
	assert_int_equal(ev[0].events, LPOLL_OUT);
	assert_int_equal(ev[0].data, 5);
	lsock_close(c2);
	lsock_close(s2);
	close_pair(p, &cp);
}

/*
 * The io-vector calls: slices point into the received frames, and held
 * bytes keep the window shut until given back; a zero-copy send of pieces
 * takes a reference per piece and refuses memory that is not Zbuf.
 */
static void test_zero_copy_iovec(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct tcp_slice sl[64];
	uint8_t *z = zbuf_alloc(3000);
	char plain[16] = "not zbuf";
	struct lsock_iov iov[2];
	int n;

	open_pair(p, &cp);
	assert_non_null(z);
	memset(z, 0x5a, 3000);
	iov[0] = (struct lsock_iov){z, 1000};
	iov[1] = (struct lsock_iov){z + 1000, 2000};
	assert_int_equal(lsock_send_zc(cp.c, iov, 2), 3000);
	assert_int_equal(zbuf_refcnt(z), 3); /* ours and one per piece */
	zbuf_unref(z);			     /* the sender may let go at once */
	iov[0] = (struct lsock_iov){plain, sizeof(plain)};
	assert_int_equal(lsock_send_zc(cp.c, iov, 1), -EFAULT);
	pair_run(p, 20 * PAIR_STEP_NS);
	n = lsock_recv_zc(cp.s, sl, 64);
	assert_true(n >= 3);
	{
		uint32_t total = 0;

		for (int i = 0; i < n; i++) {
			assert_true(zbuf_contains(sl[i].data));
			for (uint32_t j = 0; j < sl[i].len; j++)
				assert_int_equal(sl[i].data[j], 0x5a);
			total += sl[i].len;
		}
		assert_int_equal(total, 3000);
	}
	assert_int_equal(lsock_readable(cp.s), 0); /* taken, though still held */
	assert_int_equal(lsock_recv_zc(cp.s, sl + n, 4), -EAGAIN);
	for (int i = 0; i < n; i++)
		lsock_recv_zc_done(cp.s, &sl[i]);
	pair_run(p, 20 * PAIR_STEP_NS);
	close_pair(p, &cp);
}

/* Drain @ep: wait until a whole wait reports nothing. */
static void drain(struct lpoll *ep)
{
	struct lpoll_event ev[4];

	for (unsigned i = 0; i < 8 && lpoll_wait(ep, ev, 4) > 0; i++)
		;
	assert_int_equal(lpoll_wait(ep, ev, 4), 0);
}

/*
 * Zero-length calls, as send(2)/recv(2) with len 0 on a connected socket:
 * a send of nothing returns 0 (not -EAGAIN: the buffer has room), and a
 * read of nothing with data queued returns 0 (not -EAGAIN, which would
 * say nothing is there) and takes nothing.
 */
static void test_zero_length_send_recv(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	char buf[8];

	open_pair(p, &cp);
	assert_true(lsock_send_space(cp.c) > 0);
	assert_int_equal(lsock_send(cp.c, buf, 0), 0);
	assert_int_equal(lsock_send(cp.c, "abc", 3), 3);
	pair_run(p, 10 * PAIR_STEP_NS);
	assert_int_equal(lsock_readable(cp.s), 3);
	assert_int_equal(lsock_recv(cp.s, buf, 0), 0);
	assert_int_equal(lsock_readable(cp.s), 3); /* nothing taken */
	assert_int_equal(lsock_recv(cp.s, buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "abc", 3);
	close_pair(p, &cp);
}

/*
 * The edge-triggered writer's loop (epoll(7): with EPOLLET, write until
 * EAGAIN, then wait): a send the full buffer cannot take returns -EAGAIN
 * (never 0), no report while it stays full, and once ACKs free room a new
 * LPOLL_OUT edge is reported, as Linux wakes an EPOLLET|EPOLLOUT waiter
 * when send space frees.
 */
static void test_edge_triggered_writer(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct lpoll_event ev[4];
	static char data[64 * 1024];
	size_t sent = 0;
	ssize_t n;
	int got = 0;

	open_pair(p, &cp);
	assert_int_equal(lpoll_ctl(cp.ea, LPOLL_CTL_ADD, cp.c, LPOLL_OUT | LPOLL_ET, 4), 0);
	assert_int_equal(lpoll_wait(cp.ea, ev, 4), 1); /* writable when added */
	assert_int_equal(ev[0].events, LPOLL_OUT);
	assert_int_equal(lpoll_wait(cp.ea, ev, 4), 0); /* reported: no new edge */
	while ((n = lsock_send(cp.c, data, sizeof(data))) > 0)
		sent += (size_t)n;
	assert_int_equal(n, -EAGAIN); /* full */
	assert_true(sent > 0);
	assert_int_equal(lsock_send_space(cp.c), 0);
	assert_int_equal(lpoll_wait(cp.ea, ev, 4), 0);
	/* b reads as it comes: its ACKs free a's buffer. */
	for (unsigned i = 0; i < 20000 && !got; i++) {
		char buf[4096];

		while (lsock_recv(cp.s, buf, sizeof(buf)) > 0)
			;
		pair_step(p);
		got = lpoll_wait(cp.ea, ev, 4);
	}
	assert_int_equal(got, 1); /* room again: a new edge */
	assert_int_equal(ev[0].events, LPOLL_OUT);
	assert_int_equal(ev[0].data, 4);
	assert_true(lsock_send_space(cp.c) > 0);
	close_pair(p, &cp);
}

/*
 * A reset is always reported, whatever was asked for: epoll reports
 * EPOLLERR and EPOLLHUP without being asked, edge-triggered too (the
 * RST is a new event). A writer registered LPOLL_OUT | LPOLL_ET, its
 * writable edge already taken, learns of the peer's RST with ERR | HUP.
 */
static void test_edge_triggered_reset_reported(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct lpoll_event ev[4];

	open_pair(p, &cp);
	assert_int_equal(lpoll_ctl(cp.ea, LPOLL_CTL_ADD, cp.c, LPOLL_OUT | LPOLL_ET, 4), 0);
	assert_int_equal(lsock_send(cp.c, "data", 4), 4);
	pair_run(p, 100000 * PAIR_STEP_NS); /* delivered, and acknowledged */
	assert_int_equal(lsock_readable(cp.s), 4);
	drain(cp.ea);	   /* every writable edge taken */
	lsock_close(cp.s); /* unread data: a RST (RFC 1122 4.2.2.13) */
	cp.s = NULL;
	assert_int_equal(wait_events(p, cp.ea, ev, 4), 1);
	assert_int_equal(ev[0].events, LPOLL_ERR | LPOLL_HUP); /* IN and OUT were not asked for */
	assert_int_equal(ev[0].data, 4);
	assert_int_equal(lsock_error(cp.c), -ECONNRESET);
	close_pair(p, &cp);
}

/*
 * A reader registered for LPOLL_IN on a connection the peer resets gets
 * IN with ERR and HUP, as Linux's tcp_poll() gives EPOLLIN | EPOLLERR |
 * EPOLLHUP for a reset socket: the reader wakes and its recv() says why.
 */
static void test_reset_reader_sees_in(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct lpoll_event ev[4];
	char buf[8];

	open_pair(p, &cp);
	assert_int_equal(lpoll_ctl(cp.ea, LPOLL_CTL_ADD, cp.c, LPOLL_IN, 6), 0);
	assert_int_equal(lsock_send(cp.c, "data", 4), 4);
	pair_run(p, 10 * PAIR_STEP_NS);
	assert_int_equal(lsock_readable(cp.s), 4);
	assert_int_equal(lpoll_wait(cp.ea, ev, 4), 0);
	lsock_close(cp.s); /* unread data: a RST */
	cp.s = NULL;
	assert_int_equal(wait_events(p, cp.ea, ev, 4), 1);
	assert_int_equal(ev[0].events, LPOLL_IN | LPOLL_ERR | LPOLL_HUP);
	assert_int_equal(lsock_recv(cp.c, buf, sizeof(buf)), -ECONNRESET);
	close_pair(p, &cp);
}

/*
 * Edge-triggered, the peer's FIN alone (no data with it) is a new edge:
 * Linux wakes an EPOLLET reader with EPOLLIN | EPOLLRDHUP when the FIN
 * arrives, so that its read sees the end of the stream.
 */
static void test_edge_triggered_eof(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct lpoll_event ev[4];
	char buf[8];

	open_pair(p, &cp);
	assert_int_equal(
	    lpoll_ctl(cp.eb, LPOLL_CTL_ADD, cp.s, LPOLL_IN | LPOLL_RDHUP | LPOLL_ET, 3), 0);
	assert_int_equal(lsock_send(cp.c, "x", 1), 1);
	assert_int_equal(wait_events(p, cp.eb, ev, 4), 1);
	assert_int_equal(ev[0].events, LPOLL_IN);
	assert_int_equal(lsock_recv(cp.s, buf, sizeof(buf)), 1);
	pair_run(p, 100000 * PAIR_STEP_NS); /* the delayed ACK too: nothing else is coming */
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 0);
	assert_int_equal(lsock_shutdown(cp.c), 0); /* a FIN with no data */
	assert_int_equal(wait_events(p, cp.eb, ev, 4), 1);
	assert_int_equal(ev[0].events, LPOLL_IN | LPOLL_RDHUP);
	assert_int_equal(ev[0].data, 3);
	assert_int_equal(lsock_recv(cp.s, buf, sizeof(buf)), 0);
	close_pair(p, &cp);
}

/*
 * An edge-triggered listener is woken by every new connection (each one
 * that joins the accept queue is an edge, as for an EPOLLET listening
 * socket on Linux), not only by the first after it was added.
 */
static void test_edge_triggered_listener(void **state)
{
	struct tcp_pair *p = *state;
	struct lpoll *ep = lpoll_create();
	struct lpoll_event ev[4];
	struct lsock *l, *c1, *c2, *s1, *s2;
	int err;

	l = lsock_listen(p->b.tcp, PORT, 16, &err);
	assert_non_null(l);
	assert_int_equal(lpoll_ctl(ep, LPOLL_CTL_ADD, l, LPOLL_IN | LPOLL_ET, 1), 0);
	c1 = lsock_connect(p->a.tcp, PAIR_IP_B, PORT, &err);
	assert_non_null(c1);
	assert_int_equal(wait_events(p, ep, ev, 4), 1);
	assert_int_equal(ev[0].events, LPOLL_IN);
	s1 = lsock_accept(l, &err);
	assert_non_null(s1);
	pair_run(p, 10 * PAIR_STEP_NS);
	assert_int_equal(lpoll_wait(ep, ev, 4), 0);
	c2 = lsock_connect(p->a.tcp, PAIR_IP_B, PORT, &err);
	assert_non_null(c2);
	assert_int_equal(wait_events(p, ep, ev, 4), 1); /* the second connection: a new edge */
	assert_int_equal(ev[0].events, LPOLL_IN);
	s2 = lsock_accept(l, &err);
	assert_non_null(s2);
	lsock_close(c1);
	lsock_close(c2);
	lsock_close(s1);
	lsock_close(s2);
	lsock_close(l);
	lpoll_free(ep);
	pair_run(p, 200 * PAIR_STEP_NS);
}

/*
 * ADD or MOD reports what is already true at the next wait, edge-triggered
 * too: data that arrived before the socket joined the set, and data still
 * unread when the registration is changed, are reported once (epoll_ctl
 * ADD and MOD check readiness and queue a ready file, EPOLLET or not).
 */
static void test_edge_triggered_ready_when_added(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct lpoll_event ev[4];

	open_pair(p, &cp);
	assert_int_equal(lsock_send(cp.c, "early", 5), 5);
	pair_run(p, 10 * PAIR_STEP_NS);
	assert_int_equal(lsock_readable(cp.s), 5); /* arrived before the ADD */
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_ADD, cp.s, LPOLL_IN | LPOLL_ET, 8), 0);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 1);
	assert_int_equal(ev[0].events, LPOLL_IN);
	assert_int_equal(ev[0].data, 8);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 0); /* once */
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_MOD, cp.s, LPOLL_IN | LPOLL_ET, 9), 0);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 1); /* still unread: reported after MOD */
	assert_int_equal(ev[0].data, 9);
	assert_int_equal(lpoll_wait(cp.eb, ev, 4), 0);
	close_pair(p, &cp);
}

/*
 * Removing one member of a set leaves the others members: here the member
 * added first (not the newest) leaves, and the set freed after lets go of
 * the one left, which may then join another set and be reported there.
 */
static void test_del_keeps_other_members(void **state)
{
	struct tcp_pair *p = *state;
	struct conn_pair cp;
	struct lpoll_event ev[4];
	struct lpoll *ep2 = lpoll_create();

	open_pair(p, &cp);
	assert_non_null(ep2);
	/* eb holds the listener (added first); the connection joins after it. */
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_ADD, cp.s, LPOLL_IN, 7), 0);
	assert_int_equal(lpoll_ctl(cp.eb, LPOLL_CTL_DEL, cp.l, 0, 0), 0);
	lpoll_free(cp.eb);
	cp.eb = lpoll_create();
	assert_int_equal(lpoll_ctl(ep2, LPOLL_CTL_ADD, cp.s, LPOLL_IN, 8), 0);
	assert_int_equal(lsock_send(cp.c, "hi", 2), 2);
	assert_int_equal(wait_events(p, ep2, ev, 4), 1);
	assert_int_equal(ev[0].data, 8);
	assert_int_equal(lpoll_ctl(ep2, LPOLL_CTL_DEL, cp.s, 0, 0), 0);
	lpoll_free(ep2);
	close_pair(p, &cp);
}

/*
 * A simultaneous open (RFC 9293 3.5, figure 8) leaves the connecting side
 * in SYN-RECEIVED: still connecting, so a send is -EAGAIN (RFC 9293
 * 3.10.2: SEND in SYN-RECEIVED queues the data until ESTABLISHED), not
 * -EPIPE as for a connection that is gone, and no LPOLL_OUT yet.
 */
static void test_send_while_syn_received(void **state)
{
	struct tcp_pair *p = *state;
	struct lpoll *ep = lpoll_create();
	struct lpoll_event ev[4];
	struct tcp_repr syn = {0};
	struct lsock *c;
	int err;

	p->cut_a = true; /* a's SYN and SYN-ACK are lost */
	c = lsock_connect(p->a.tcp, PAIR_IP_B, 81, &err);
	assert_non_null(c);
	assert_int_equal(lpoll_ctl(ep, LPOLL_CTL_ADD, c, LPOLL_OUT, 1), 0);
	pair_step(p);
	/* The peer's own SYN crosses a's: a goes from SYN-SENT to SYN-RECEIVED. */
	syn.sport = 81;
	syn.dport = lsock_tuple(c)->lport;
	syn.seq = 4242;
	syn.flags = RTE_TCP_SYN_FLAG;
	syn.window = 65535;
	syn.opts.has_mss = true;
	syn.opts.mss = 1460;
	pair_inject(p, &p->a, &syn);
	pair_run(p, 5 * PAIR_STEP_NS);
	assert_int_equal(lsock_error(c), 0);
	assert_int_equal(lsock_send(c, "x", 1), -EAGAIN);
	assert_int_equal(lsock_send_space(c), 0);
	assert_int_equal(lpoll_wait(ep, ev, 4), 0);
	lsock_close(c);
	lpoll_free(ep);
	p->cut_a = false;
	pair_run(p, 10 * PAIR_STEP_NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_copy_echo, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_level_triggered, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_edge_triggered, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_oneshot_and_ctl_errors, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_refused, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_eof_and_hup, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_zero_copy_iovec, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_out_after_memory_frees, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_lpoll_free_releases_members, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_shutdown_while_connecting, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_close_unread_after_shutdown_resets, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_zero_length_send_recv, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_edge_triggered_writer, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_edge_triggered_reset_reported, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_reset_reader_sees_in, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_edge_triggered_eof, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_edge_triggered_listener, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_edge_triggered_ready_when_added, api_setup,
					    api_teardown),
	    cmocka_unit_test_setup_teardown(test_del_keeps_other_members, api_setup, api_teardown),
	    cmocka_unit_test_setup_teardown(test_send_while_syn_received, api_setup, api_teardown),
	};

	return cmocka_run_group_tests(tests, pair_group_setup, pair_group_teardown);
}
