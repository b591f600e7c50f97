/*
 * lsock.h - the socket-like interface (LUNA §5.1, Fig. 5a): BSD-style
 * calls and an epoll-like readiness set on one worker's TCP stack, so that
 * code written for non-blocking sockets and epoll ports to lunar's
 * run-to-completion loop with few changes.
 *
 * Every call is non-blocking and returns -errno, as the socket calls do
 * with errno set: -EAGAIN when nothing can be done now. The loop is:
 *
 *   for (;;) {
 *           lunar_env_poll(env);                  // the port and TCP
 *           n = lpoll_wait(ep, ev, 64);           // never blocks
 *           for each ev: lsock_accept / lsock_recv / lsock_send ...
 *   }
 *
 * Data: lsock_send()/lsock_recv() copy (and are counted in the stack's
 * copy_tx_bytes / copy_rx_bytes). Underneath them, and for applications that
 * want no copy, the io-vector calls: lsock_recv_zc() hands out slices of the
 * received frames (held bytes stay charged to the receive window until
 * lsock_recv_zc_done()), lsock_send_zc() sends Zbuf memory by reference.
 *
 * Readiness (lpoll): level-triggered by default, as epoll; LPOLL_ET makes a
 * registration edge-triggered (reported once per new event from the stack),
 * LPOLL_ONESHOT disables it after one report until lpoll_ctl(MOD). The
 * LPOLL_* bits have epoll's values, so EPOLLIN, EPOLLOUT, EPOLLERR,
 * EPOLLHUP, EPOLLRDHUP, EPOLLET and EPOLLONESHOT may be passed (not
 * EPOLLPRI or the *NORM bits: -EINVAL). Handles are pointers, as epoll's
 * data.ptr: a handle closed by an earlier event's handler in the same
 * batch must not be used by a later one. A
 * socket is in at most one set. Events are collected from the stack's
 * callbacks into a ready list; lpoll_wait() re-checks each entry's state, so
 * nothing stale is reported and a level-triggered entry stays until it is
 * no longer ready.
 *
 * Threads: one worker's loop thread only, like the stack under it.
 */
#ifndef LUNAR_API_LSOCK_H
#define LUNAR_API_LSOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tcp/tcp_conn.h"

struct tcp_stack;
struct lsock;
struct lpoll;

/* ---- sockets ---- */

/**
 * Listen on @port with room for @backlog connections not yet accepted.
 * @return the listening socket, or NULL and *err (-EADDRINUSE, -ENOMEM,
 *         -EADDRNOTAVAIL: @port lies in the reserved range and there are
 *         several workers; see tcp_listen_on()).
 */
struct lsock *lsock_listen(struct tcp_stack *st, uint16_t port, unsigned backlog, int *err);
/**
 * Take an established connection from a listening socket.
 * @return it, or NULL and *err: -EAGAIN (none ready), -EINVAL (@ls does
 *         not listen), -ENOMEM.
 */
struct lsock *lsock_accept(struct lsock *ls, int *err);
/**
 * Open a connection to @addr:@port (host byte order) from an ephemeral port
 * of this worker. It is in progress on return (as a non-blocking connect()
 * with EINPROGRESS): LPOLL_OUT reports it established, LPOLL_ERR failed
 * (lsock_error() says why). @return the socket, or NULL and *err.
 */
struct lsock *lsock_connect(struct tcp_stack *st, uint32_t addr, uint16_t port, int *err);
/**
 * Copy up to @len bytes into the send buffer.
 * @return bytes taken (maybe fewer than @len), or -EAGAIN (buffer full, or
 *         still connecting), -EPIPE (shut down for writing, or the peer is
 *         gone), -ECONNRESET / -ETIMEDOUT / -ECONNREFUSED (the connection
 *         failed), -ENOBUFS (Zbuf exhausted), -ENOMEM (the send buffer
 *         could not grow), -EINVAL (a listening socket).
 */
ssize_t lsock_send(struct lsock *s, const void *buf, size_t len);
/**
 * Copy up to @len received bytes into @buf.
 * @return bytes copied, 0 at end of stream (the peer closed and everything
 *         was read, or the connection ended without an error and without
 *         the peer's FIN, e.g. lsock_shutdown() while connecting), -EAGAIN
 *         (nothing yet), or the connection's error.
 */
ssize_t lsock_recv(struct lsock *s, void *buf, size_t len);
/**
 * Zero-copy read: up to @max slices pointing into the received frames; the
 * caller owns one Zbuf reference per slice and gives each back with
 * lsock_recv_zc_done() (the window stays charged until then).
 * @return slices taken, 0 at end of stream, -EAGAIN, or the error.
 */
int lsock_recv_zc(struct lsock *s, struct tcp_slice *out, unsigned max);
/**
 * Done with a slice from lsock_recv_zc(): drops its reference, opens the
 * window. After lsock_close(@s), pass NULL for @s (the slice stays valid).
 */
void lsock_recv_zc_done(struct lsock *s, const struct tcp_slice *sl);
/** One piece of Zbuf memory to send by reference. */
struct lsock_iov {
	const void *base;
	uint32_t len;
};
/**
 * Zero-copy send of @n pieces of Zbuf memory, in order: each piece taken
 * gets a reference of its own (the caller keeps its own). Pieces that do
 * not fit wait for the caller to send them again.
 * @return bytes taken (a prefix of the pieces), or an error as lsock_send()
 *         plus -EFAULT (a piece is not Zbuf memory).
 */
ssize_t lsock_send_zc(struct lsock *s, const struct lsock_iov *iov, unsigned n);
/** Bytes queued for reading; bytes the send buffer can take. */
uint32_t lsock_readable(const struct lsock *s);
uint32_t lsock_send_space(const struct lsock *s);
/** No more sends: a FIN follows the queued data (shutdown(SHUT_WR)). @return 0 or -ENOTCONN. */
int lsock_shutdown(struct lsock *s);
/** The connection's error (0, -ECONNRESET, -ECONNREFUSED, -ETIMEDOUT), as SO_ERROR. */
int lsock_error(const struct lsock *s);
/** The connection's four-tuple (NULL for a listening socket). */
const struct tcp_4tuple *lsock_tuple(const struct lsock *s);
/**
 * Close: a graceful close (a RST if received data was left unread, RFC
 * 1122 4.2.2.13), the socket leaves its set and the handle is freed; the
 * connection finishes on its own. A listening socket resets the
 * connections nobody accepted.
 */
void lsock_close(struct lsock *s);

/* ---- readiness ---- */

enum {
	LPOLL_IN = 0x001,	  /**< data or EOF to read; a listener: a connection to accept */
	LPOLL_OUT = 0x004,	  /**< established and the send buffer has room */
	LPOLL_ERR = 0x008,	  /**< the connection failed (always reported) */
	LPOLL_HUP = 0x010,	  /**< both directions are finished, or failed (always reported) */
	LPOLL_RDHUP = 0x2000,	  /**< the peer shut down its sending side */
	LPOLL_ONESHOT = 1u << 30, /**< report once, then disarm until LPOLL_CTL_MOD */
	LPOLL_ET = 1u << 31,	  /**< edge-triggered */
};
enum lpoll_op { LPOLL_CTL_ADD = 1, LPOLL_CTL_DEL = 2, LPOLL_CTL_MOD = 3 };

struct lpoll_event {
	uint32_t events;
	uint64_t data; /**< what lpoll_ctl() was given */
};

/** A readiness set. @return NULL on -ENOMEM. */
struct lpoll *lpoll_create(void);
/** Free the set; its sockets stay open and leave it (they may join another). */
void lpoll_free(struct lpoll *ep);
/**
 * Add @s with interest @events (and LPOLL_ET / LPOLL_ONESHOT) and cookie
 * @data, change it, or remove it. A socket already ready is reported by the
 * next wait. @return 0, -EEXIST (ADD: already in a set), -ENOENT (MOD/DEL:
 * not in this set), -EINVAL (unknown op or event bits).
 */
int lpoll_ctl(struct lpoll *ep, enum lpoll_op op, struct lsock *s, uint32_t events, uint64_t data);
/**
 * Up to @max ready sockets, never blocking (call it after lunar_env_poll()).
 * @return how many were written to @out (0: none ready), -EINVAL (@max 0).
 */
int lpoll_wait(struct lpoll *ep, struct lpoll_event *out, unsigned max);

#endif
