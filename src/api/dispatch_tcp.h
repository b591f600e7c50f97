/*
 * dispatch_tcp.h - TCP in dispatch mode (LUNA §5.2; NetChannel's decoupling
 * of application work from protocol work): application threads on other
 * cores open, use and close lunar TCP connections by messages over the
 * channels of loop/dispatch.h, while one core runs the stack and polls the
 * port. The application threads spin briefly, then sleep, when idle; only
 * the stack core polls.
 *
 * The stack core creates a service over its TCP stack and a dispatcher (one
 * channel per application thread) and calls dtcp_poll() once per loop
 * iteration, after lunar_env_poll(). Application threads use the dtcp_app_*
 * calls to make requests and lunar_chan_app_wait() to receive events.
 *
 * Connections are named by 64-bit handles (slot and generation): a request
 * naming a connection that is closed, or never existed, is answered with
 * DTCP_EV_ERROR (-EBADF) and counted, never acted on another connection.
 *
 * Buffers move with messages and are never lost:
 *  - DTCP_SEND hands a Zbuf buffer (one reference) to the stack; it goes
 *    into the send buffer by reference (zero copy; a copy when the buffer
 *    is referenced too widely for one more, -EOVERFLOW in
 *    tcp_sock_send_zc()). A send the stack cannot take comes back in a
 *    DTCP_EV_ERROR with the buffer: -EBADF (no such connection, or
 *    closing), -EINVAL (no buffer or length 0), -EFAULT (not Zbuf memory,
 *    or it runs past its object's end), -ENOBUFS (send_queue sends
 *    already wait: keep fewer outstanding, DTCP_EV_SENT says when all are
 *    in), or the connection's -errno when it can send no more. A refused
 *    send on a connection refuses every later one on it too, with
 *    -ECANCELED (so the stream never has a hole with bytes after it);
 *    close it. One partly sent comes back from its first byte not taken.
 *  - DTCP_EV_DATA hands the application a slice of a received frame (one
 *    reference), charged to the receive window until the application
 *    answers DTCP_DONE with the same pointer and length, from any of the
 *    dispatcher's threads (a second DTCP_DONE of one slice is a double
 *    free to Zbuf and opens nothing, unless the application still holds
 *    another slice of the same buffer: see tcp_sock_zc_done(); a pointer
 *    that is not Zbuf memory comes back in DTCP_EV_ERROR, -EFAULT). So an
 *    application thread that falls behind shrinks the window instead of
 *    losing data. When a connection fails, the data it received comes
 *    first, then DTCP_EV_EOF if the peer had finished, then its waiting
 *    sends in DTCP_EV_ERROR, then DTCP_EV_CLOSED.
 *  - A request lunar_chan_app_send() refuses (-EPIPE: shut down) leaves
 *    its buffer with the application.
 * Data events are produced only while the channel has room; control events
 * that find the ring full wait in a queue of the channel's own, in order.
 *
 * Listening: DTCP_LISTEN from several channels on one port spreads the
 * accepted connections over them in turn. On af_xdp the stack core must
 * also steer the port to lunar (lunar_env_steer_port).
 *
 * Threads: dtcp_create/poll/free and the statistics on the stack core; the
 * dtcp_app_* calls on the channel's own application thread.
 */
#ifndef LUNAR_API_DISPATCH_TCP_H
#define LUNAR_API_DISPATCH_TCP_H

#include <stdint.h>
#include <stdio.h>

#include "loop/dispatch.h"

struct tcp_stack;

/** lunar_msg.op values. Requests go application -> stack, events the other way. */
enum dtcp_op {
	/* requests */
	DTCP_LISTEN = 1,  /**< arg: port. Answer: DTCP_EV_LISTENING or an error */
	DTCP_CONNECT = 2, /**< arg: dtcp_addr(ip, port); conn: the application's cookie */
	DTCP_SEND = 3,	  /**< conn, buf (a Zbuf reference, moved), len */
	DTCP_DONE = 4,	  /**< conn, buf and len of a DTCP_EV_DATA: done with it */
	DTCP_CLOSE = 5,	  /**< conn: graceful close after the data sent; no events follow */
	/* events */
	DTCP_EV_LISTENING = 16, /**< arg: the port */
	DTCP_EV_ACCEPTED = 17,	/**< conn: a new connection, arg: dtcp_addr of the peer */
	DTCP_EV_CONNECTED = 18, /**< conn: the new connection, arg: the cookie of DTCP_CONNECT */
	DTCP_EV_DATA = 19,	/**< conn, buf, len: received bytes; answer DTCP_DONE */
	DTCP_EV_EOF = 20,	/**< conn: the peer finished sending, after all its data */
	/** conn: failed, arg: -errno; the handle is dead (send DONEs still) */
	DTCP_EV_CLOSED = 21,
	DTCP_EV_ERROR = 22, /**< a request failed: len: its op, conn: its conn (or cookie),
				 arg: -errno, buf: its buffer, given back */
	DTCP_EV_SENT = 23,  /**< conn: every waiting DTCP_SEND is in the send buffer now */
};

/** A peer or destination as one lunar_msg.arg: IPv4 (host order) and port. */
static inline uint64_t dtcp_addr(uint32_t ip, uint16_t port)
{
	return (uint64_t)ip << 16 | port;
}
static inline uint32_t dtcp_addr_ip(uint64_t a)
{
	return (uint32_t)(a >> 16);
}
static inline uint16_t dtcp_addr_port(uint64_t a)
{
	return (uint16_t)a;
}
/** The -errno of a DTCP_EV_ERROR or DTCP_EV_CLOSED. */
static inline int dtcp_err(const struct lunar_msg *m)
{
	return (int)(int64_t)m->arg;
}

struct dtcp_config {
	unsigned max_conns;  /**< connections at once (0: 1024) */
	unsigned backlog;    /**< per listening port (0: 128) */
	unsigned send_queue; /**< DTCP_SENDs waiting for send-buffer room, per connection (0: 64) */
};

struct dtcp_stats {
	uint64_t requests;     /**< messages from applications */
	uint64_t bad_handle;   /**< requests naming no live connection (answered -EBADF) */
	uint64_t bad_request;  /**< unknown ops, bad arguments */
	uint64_t send_refused; /**< sends given back (see DTCP_SEND above) */
	uint64_t conns_opened, conns_accepted, conns_closed;
	uint64_t data_events, rx_bytes, tx_bytes;
	uint64_t rx_waits;    /**< times delivery stopped: a channel's ring was full */
	uint64_t deferred;    /**< control events queued behind a full ring */
	uint64_t events_lost; /**< events no memory could queue (buffers released) */
};

struct dtcp;

/**
 * A service on @st for the application threads of @d's channels.
 * @return 0, -ENOMEM, or -EINVAL (a bad @cfg).
 */
int dtcp_create(struct tcp_stack *st, struct lunar_dispatch *d, const struct dtcp_config *cfg,
		struct dtcp **out);
/**
 * Once per loop iteration on the stack core: requests from the application
 * threads, deferred deliveries and events. @return requests handled.
 */
unsigned dtcp_poll(struct dtcp *t);
/**
 * Close every connection (abort) and listener, and free the service. Call
 * after the application threads stopped; buffers still in messages are
 * released by lunar_dispatch_free().
 */
void dtcp_free(struct dtcp *t);
const struct dtcp_stats *dtcp_stats(const struct dtcp *t);
void dtcp_dump(const struct dtcp *t, FILE *f);
/** Connections open (for leak checks). */
unsigned dtcp_conns(const struct dtcp *t);
/**
 * Bytes of connection @conn delivered to its application thread and not
 * yet given back with DTCP_DONE (they keep its receive window shut); 0 for
 * a handle that names no open connection, and for one the application has
 * asked to close (its slices still come back with DTCP_DONE). On the
 * stack core.
 */
uint32_t dtcp_held(struct dtcp *t, uint64_t conn);

/* ---- application side: build and send one request (-ENOBUFS: retry) ---- */

static inline int dtcp_app_listen(struct lunar_chan *ch, uint16_t port)
{
	struct lunar_msg m = {.op = DTCP_LISTEN, .arg = port};

	return lunar_chan_app_send(ch, &m);
}
static inline int dtcp_app_connect(struct lunar_chan *ch, uint32_t ip, uint16_t port,
				   uint64_t cookie)
{
	struct lunar_msg m = {.op = DTCP_CONNECT, .conn = cookie, .arg = dtcp_addr(ip, port)};

	return lunar_chan_app_send(ch, &m);
}
/** @buf: Zbuf memory; its reference moves to the stack when this returns 0. */
static inline int dtcp_app_send(struct lunar_chan *ch, uint64_t conn, void *buf, uint32_t len)
{
	struct lunar_msg m = {.op = DTCP_SEND, .conn = conn, .buf = buf, .len = len};

	return lunar_chan_app_send(ch, &m);
}
/** Done with received bytes: @buf NULL opens the window only (the reference moved on). */
static inline int dtcp_app_done(struct lunar_chan *ch, uint64_t conn, void *buf, uint32_t len)
{
	struct lunar_msg m = {.op = DTCP_DONE, .conn = conn, .buf = buf, .len = len};

	return lunar_chan_app_send(ch, &m);
}
static inline int dtcp_app_close(struct lunar_chan *ch, uint64_t conn)
{
	struct lunar_msg m = {.op = DTCP_CLOSE, .conn = conn};

	return lunar_chan_app_send(ch, &m);
}

#endif
