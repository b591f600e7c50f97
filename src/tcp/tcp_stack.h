/*
 * tcp_stack.h - TCP on one worker: connects the sans-I/O core (tcp_conn)
 * to the interface (netif), and gives applications a thin socket API.
 *
 * It owns the connection table (4-tuples and listeners), the accept queues
 * with their backlog, a timer wheel over every connection's next deadline,
 * the building of frames from the core's segment descriptions, and the
 * dispatch of events to application callbacks after each burst
 * (LUNA's batch-r2c: process the burst, then run the callbacks).
 *
 * Memory: received payload stays in the received frame (Zbuf) until the
 * application takes it; sent payload is held by reference until ACKed.
 * The copying calls (tcp_sock_send, tcp_sock_read) copy once, and count it.
 */
#ifndef LUNAR_TCP_TCP_STACK_H
#define LUNAR_TCP_TCP_STACK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl/flow_plan.h"
#include "tcp/tcp_conn.h"
#include "tcp/tcp_limits.h"
#include "tcp/tcp_syncookie.h"

struct netif;
struct tcp_stack;
struct tcp_sock;
struct tcp_listener;

/** Events for a socket: enum tcp_event bits (CONNECTED, READABLE, ...). */
typedef void (*tcp_sock_fn)(struct tcp_sock *s, uint32_t events, void *ctx);
/** A listener has connections ready for tcp_accept(). */
typedef void (*tcp_accept_fn)(struct tcp_listener *l, void *ctx);

struct tcp_stack_stats {
	uint64_t conns_opened, conns_accepted, conns_closed, conns_active;
	uint64_t syn_dropped_backlog; /* SYNs refused: backlog full, no SYN cookies */
	/* SYN cookies (RFC 4987): SYN-ACKs sent as cookies, handshakes completed
	 * from one, ACKs whose cookie failed (answered with a RST), and valid
	 * ones dropped because the accept queue was full */
	uint64_t syncookies_sent, syncookies_ok, syncookies_bad, syncookies_no_room;
	/* half-open connections replaced by the cookie handshake the peer completed instead */
	uint64_t syncookies_adopted;
	uint64_t foreign;  /* segments of another worker's connections (dropped) */
	uint64_t rst_sent; /* RSTs for segments without a connection */
	/* segs_in/segs_out: frames (a TSO segment counts the frames the port cuts);
	 * retransmits: MSS-sized segments resent, as the connections count them */
	uint64_t segs_in, segs_out, retransmits, timeouts;
	/* persist timer probes of a closed window (RFC 9293 3.8.6.1) */
	uint64_t zero_window_probes;
	/* orphans given up in a zero window after tcp_config.orphan_probes probes */
	uint64_t orphans_dropped;
	uint64_t fastpath_ack, fastpath_data, slowpath;
	/* ACK bookkeeping done after the transmit (tcp_conn.h ack_defer) */
	uint64_t acks_worked_later;
	/* ACKs owed at a receive burst's end (tcp_config.ack_per_burst): sent
	 * then, or carried by a segment sent during the burst (no pure ACK) */
	uint64_t burst_acks, burst_acks_carried;
	uint64_t copy_tx_bytes, copy_rx_bytes; /* bytes copied by copying calls and framing */
	uint64_t zc_tx_bytes;  /* payload framed without a copy (attached to the frame) */
	uint64_t inline_calls; /* inline-r2c callbacks run in place */
	uint64_t tx_no_mbuf;   /* frames not built: no packet buffer */
	/* frames not built: the send buffer did not hold the bytes (a lunar bug; never expected) */
	uint64_t tx_unbuffered;
	uint64_t tso_segs; /* segments handed to the port's TCP segmentation offload */
	uint64_t gso_segs; /* segments of several MSSs cut into frames in software (GSO) */
	/*
	 * software GRO: trains of which TCP took two or more segments at once, and those segments
	 */
	uint64_t gro_trains, gro_segs;
	/* segments dropped (and answered with an ACK) by rule, per RFC 9293 3.10.7.4 */
	uint64_t out_of_window, ack_unsent, ack_too_old, paws_rejects, challenge_acks;
	uint64_t challenge_acks_limited; /* not sent: over the per-connection limit (RFC 5961 7) */
	/* packet-pool pressure (see tcp_stack.c, "memory pressure") */
	uint64_t ooo_refused;	   /* out-of-order segments not kept */
	uint64_t ooo_pruned_bytes; /* out-of-order bytes given back */
	uint64_t rcv_mem_dropped;  /* segments whose payload was not kept: pool nearly empty */
	/* small in-order segments copied into a dense buffer, not pinned (tcp_deliver()),
	 * and their bytes: copies lunar makes on its own, apart from copy_rx_bytes */
	uint64_t rcvq_compacted, rcvq_compacted_bytes;
	uint64_t mem_prunes;	  /* times every out-of-order queue was emptied */
	uint64_t mem_pressure_ns; /* time spent under pressure (sampled) */
	/* SACK loss recovery (tcp_recovery.c): see struct tcp_conn_stats */
	uint64_t fast_retransmits, dupacks, sack_blocks, sack_invalid, dsacks, dsacks_sent,
	    rack_lost;
	uint64_t recoveries, tlp_probes, tlp_recoveries, recovery_probes, sb_nomem, spurious_rtos,
	    frto_spurious, spurious_recoveries;
	/* ECN (RFC 3168): CE marks received, ECE echoes received, window cuts for them */
	uint64_t ecn_ce, ecn_ece, ecn_cuts, ecn_syn_fallbacks;
	/* HyStart++ (RFC 9406): CSS entered, CSS left as spurious, slow starts it ended */
	uint64_t hystart_css, hystart_css_spurious, hystart_exits;
	uint64_t cwnd_unused_cuts; /* cwnd brought down for going unused an RTO (RFC 2861) */
	/*
	 * ICMP errors quoting our segments (tcp_icmp.h, RFC 5927): for no
	 * connection; quoted sequence outside the window (4.1); fragmentation
	 * needed with an absurd MTU, with one that lowers nothing, lowering the
	 * MSS, lowering it to the floor; recorded as soft errors; connects
	 * aborted by a hard error; soft errors that also undid an RTO backoff
	 * (RFC 6069; not in icmp_soft_errors)
	 */
	uint64_t icmp_no_conn, icmp_out_of_window, icmp_mtu_absurd, icmp_mtu_not_lower;
	uint64_t icmp_mss_lowered, icmp_mss_floored, icmp_soft_errors, icmp_aborts;
	uint64_t icmp_rto_reverts;
	/*
	 * Path MTU cache (net/pmtu.h, RFC 1191): fragmentation-needed reports
	 * below the known path MTU that lowered no MSS, the peer's MSS being
	 * already below the path (only recorded); connections opened with a
	 * path MTU from the cache; connections (any state, TIME-WAIT
	 * included) whose MSS a report about another connection to the same
	 * peer lowered; connections whose MSS went back up when the cache
	 * forgot their path's MTU or a probe raised it; path MTUs lowered to a plateau by
	 * black-hole detection (tcp_blackhole(), held in the cache for
	 * cfg.blackhole_hold_ns); path MTU probes (RFC 4821, tcp_icmp.h)
	 * sent, acknowledged (the path MTU raised), lost
	 */
	uint64_t icmp_mtu_recorded, pmtu_conns_started, pmtu_conns_lowered, pmtu_conns_raised;
	uint64_t pmtu_blackholes, pmtu_probes, pmtu_probes_ok, pmtu_probes_lost;
	/* limits (tcp_limits.h, docs/LIMITS.md): each action one of them caused */
	uint64_t syn_dropped_conns;	/* SYNs dropped: table full, no TIME-WAIT to end */
	uint64_t syn_dropped_half_open; /* SYNs dropped: max_half_open reached, cookies off */
	uint64_t syncookies_half_open;	/* of syncookies_sent: for max_half_open, not a backlog */
	uint64_t connect_refused;	/* active opens failed with -ENOBUFS: table full */
	uint64_t half_open_timeouts; /* SYN-RECEIVED connections whose SYN-ACKs went unanswered */
	uint64_t tw_recycled;	     /* TIME-WAIT ended early to make room for a new connection */
	uint64_t tw_overflow;	     /* TIME-WAIT ended early: max_time_wait reached */
	uint64_t tw_reopened;	     /* a new SYN took over a TIME-WAIT (RFC 6191) */
	uint64_t tw_reopen_deferred; /* such a SYN dropped, no room: the TIME-WAIT kept */
	uint64_t tw_reused; /* a connect with no free port took over its own TIME-WAIT (tw_reuse) */
	uint64_t timer_budget_hit; /* polls with more connection timers due than the budget */
	uint64_t snd_buf_full;	   /* sends cut short (or refused): the connection's snd_buf full */
	uint64_t snd_mem_limited;  /* sends cut short (or refused): mem_max reached */
	uint64_t rcv_mem_limited;  /* segments whose payload was not kept because of mem_max */
	uint64_t ooo_full;	/* out-of-order segments not kept: the connection's reass limits */
	uint64_t beyond_window; /* segments cut at the receive window's edge: rcv_buf full */
};

/**
 * Attach a TCP stack to @nif (it registers itself as the interface's TCP
 * handler). @max_conns sizes the connection table. The stack is worker
 * @worker of @plan: its client ports are that worker's share of the
 * reserved range, and segments the plan gives to another worker are
 * dropped (LUNAR_DROP_TCP_FOREIGN_QUEUE), never half-handled.
 */
struct tcp_stack *tcp_stack_create(struct netif *nif, const struct tcp_config *cfg,
				   unsigned max_conns, const struct flow_plan *plan,
				   unsigned worker);
void tcp_stack_free(struct tcp_stack *st);
/**
 * Replace the stack-wide limits (tcp_stack_create() sets
 * tcp_limits_default(max_conns)). @l->max_conns may not exceed the table
 * made for tcp_stack_create()'s @max_conns. Limits lowered below what is
 * held now act on what comes next: nothing held is taken back.
 * @return 0, or -EINVAL (tcp_limits_check(), or too many connections).
 */
int tcp_stack_set_limits(struct tcp_stack *st, const struct tcp_limits *l);
const struct tcp_limits *tcp_stack_limits(const struct tcp_stack *st);
/** What the limits count now: connections, half-open, TIME-WAIT, bytes. */
struct tcp_limits_usage {
	unsigned conns, half_open, time_wait;
	uint64_t mem_bytes;
};
void tcp_stack_usage(const struct tcp_stack *st, struct tcp_limits_usage *u);
struct rte_mempool;
/**
 * Frame payload without copying it (LUNA §6.2) on ports that take chained
 * buffers: headers and the attaching buffers come from @mp, a pool of
 * small buffers of the worker's own, so sending never uses the receive
 * pool the port needs to take ACKs in. NULL (the default): copy.
 */
void tcp_stack_set_hdr_pool(struct tcp_stack *st, struct rte_mempool *mp);
/*
 * SYN cookies answered outside the stack. Under a SYN flood something
 * closer to the wire (the XDP program's responder, ctl/xdp.h) may answer
 * SYNs beyond the backlog in the stack's place, with the stack's own
 * cookies (tcp_syncookie.h), so the ACKs come back valid. It needs the
 * key and the SYN-ACK the stack would send, and it answers only while the
 * stack keeps saying it is flooded.
 */
struct tcp_cookie_template {
	uint8_t key[TCP_SYNCOOKIE_KEY_BYTES]; /**< the stack's cookie secret */
	uint32_t laddr;			      /**< the interface's address (host order) */
	uint16_t mss;			      /**< the SYN-ACK's MSS option */
	uint16_t window;		      /**< its (unscaled) window */
	uint8_t wscale;			      /**< our shift, when window scaling is agreed */
	uint8_t ttl;			      /**< the IPv4 TTL */
	/* What a SYN-ACK agrees to when the SYN offers it. */
	bool ws, sack, ts, ecn;
};
/** Fill @out with what the stack's own cookie SYN-ACK holds. @return 0 or -ENOMEM. */
int tcp_stack_cookie_template(struct tcp_stack *st, struct tcp_cookie_template *out);
/**
 * Called when the stack itself has answered a SYN with a cookie, at most
 * once per TCP_COOKIE_HOOK_NS: @fn may arm an outside responder for about
 * TCP_COOKIE_ARM_NS. Then SYNs
 * reach the stack again; if it is still flooded it answers one with a
 * cookie and the hook runs again. NULL @fn: none.
 */
typedef void (*tcp_cookie_hook_fn)(void *arg);
void tcp_stack_set_cookie_hook(struct tcp_stack *st, tcp_cookie_hook_fn fn, void *arg);
#define TCP_COOKIE_HOOK_NS 100000000ull	 /* 100 ms */
#define TCP_COOKIE_ARM_NS  1000000000ull /* 1 s */
/** Run due timers and deliver pending events. Call once per loop iteration. */
void tcp_stack_poll(struct tcp_stack *st, uint64_t now);
/**
 * With @on, tcp_stack_poll() leaves the work no frame waits for (re-arming
 * the timers of the connections its burst touched, freeing the received
 * frames TCP is done with) to tcp_stack_after_tx(), which the caller runs
 * once the poll's frames are sent: replies leave sooner (lunar_env_poll()
 * does this). Off by default: tcp_stack_poll() does it all before it
 * returns. A caller that skips tcp_stack_after_tx() has it run at the
 * start of the next tcp_stack_poll().
 */
void tcp_stack_defer_to_tx(struct tcp_stack *st, bool on);
/**
 * Connection timers one tcp_stack_poll() fires at most (TCP_TIMER_BUDGET
 * by default); the rest stay due for the next poll (`timer_budget_hit`
 * counts polls that had more). After a stall, or when a large population's
 * timers line up (RTOs after an outage), one poll would otherwise fire
 * and send for every connection at once and trip the watchdog again.
 */
void tcp_stack_set_timer_budget(struct tcp_stack *st, unsigned budget);
#define TCP_TIMER_BUDGET 4096
/** The work tcp_stack_poll() left, with tcp_stack_defer_to_tx() on; nothing otherwise. */
void tcp_stack_after_tx(struct tcp_stack *st);
/**
 * The stack's own counters, live. The per-connection ones (retransmits,
 * fastpath_*, acks_worked_later, the SACK, ECN and HyStart++ counts: what
 * struct tcp_conn_stats holds) are folded in when a connection closes, so
 * here they cover closed connections only; tcp_stack_stats_sum() adds the
 * live ones, and tcp_sock_conn()->stats has one connection's.
 */
const struct tcp_stack_stats *tcp_stack_stats(struct tcp_stack *st);
/** A snapshot of every counter: tcp_stack_stats() plus each live connection's. */
void tcp_stack_stats_sum(const struct tcp_stack *st, struct tcp_stack_stats *out);
void tcp_stack_dump(struct tcp_stack *st, FILE *f);
struct pmtu_cache;
/** The stack's path MTU cache (read only; for tests and dumps). */
const struct pmtu_cache *tcp_stack_pmtu(const struct tcp_stack *st);
/** Sockets still allocated (for leak checks at exit). */
unsigned tcp_stack_sockets(const struct tcp_stack *st);

/**
 * Listen on @port with room for @backlog connections not yet accepted.
 * NULL and *err on failure: -EADDRINUSE, -ENOMEM, or -EADDRNOTAVAIL for a
 * port inside the reserved range when the plan has several workers (that
 * range is their client ports: listen below it).
 */
struct tcp_listener *tcp_listen_on(struct tcp_stack *st, uint16_t port, unsigned backlog,
				   tcp_accept_fn fn, void *ctx, int *err);
void tcp_listener_close(struct tcp_listener *l);
/** Whether established connections wait in @l's accept queue. */
bool tcp_listener_ready(const struct tcp_listener *l);
/** Take one established connection from the queue (NULL if none); set its callback. */
struct tcp_sock *tcp_accept(struct tcp_listener *l, tcp_sock_fn fn, void *ctx);

/**
 * Active open to @raddr:@rport from an ephemeral port. NULL and *err on
 * failure: -EADDRNOTAVAIL (no free port), -ENOBUFS (the connection table
 * is full and no TIME-WAIT connection can give way: connect_refused),
 * -ENOMEM.
 */
struct tcp_sock *tcp_connect_to(struct tcp_stack *st, uint32_t raddr, uint16_t rport,
				tcp_sock_fn fn, void *ctx, int *err);

/**
 * Copying send: copies up to @len bytes into Zbuf buffers. @return bytes
 * taken (short, or 0, when the send buffer or the stack's mem_max is
 * full: snd_buf_full / snd_mem_limited count it, and a TCP_EV_WRITABLE
 * follows once there is room) or -errno.
 */
int tcp_sock_send(struct tcp_sock *s, const void *data, size_t len);
/**
 * Zero-copy send of Zbuf memory (a reference is taken). @return bytes
 * taken or -errno: -EFAULT not Zbuf memory, or a freed object (misuse,
 * reported), -EOVERFLOW the object is referenced too widely to take one
 * more (ZBUF_MBUF_REF_MAX: a packet buffer sent on ~64k connections; copy
 * it), -EPIPE / -ENOTCONN as for tcp_sock_send().
 */
int tcp_sock_send_zc(struct tcp_sock *s, const uint8_t *zbuf_data, uint32_t len);
/** One piece of Zbuf memory for tcp_sock_send_zcv(). */
struct tcp_iov {
	const uint8_t *data;
	uint32_t len;
};
/**
 * Zero-copy send of @n pieces of Zbuf memory, in order, in one call (one
 * output pass and one round of bookkeeping, where tcp_sock_send_zc() per
 * piece pays each): every piece taken gets a reference of its own.
 * @return bytes taken, a prefix of the pieces (the last one taken may be
 *         cut short), as tcp_sock_send_zc() would have taken them, or -errno.
 */
int tcp_sock_send_zcv(struct tcp_sock *s, const struct tcp_iov *v, unsigned n);
/** Copying read of up to @len bytes. @return bytes copied (0: nothing queued). */
size_t tcp_sock_read(struct tcp_sock *s, void *buf, size_t len);
/**
 * Zero-copy read (LUNA §6.2): an io-vector of slices pointing into the
 * received frames; the caller owns one reference per slice. Held bytes
 * stay charged to the receive window (it shrinks rather than the buffers
 * running out) until given back with tcp_sock_zc_done().
 */
unsigned tcp_sock_read_zc(struct tcp_sock *s, struct tcp_slice *out, unsigned max);
/**
 * Done with @len bytes taken by tcp_sock_read_zc() at @data: drops the
 * reference (when @data is not NULL) and opens the window by @len. @s may be
 * NULL once the socket is closed (only the reference is dropped). Sending
 * the bytes on with tcp_sock_send_zc() first is fine: the send buffer takes
 * its own reference. A reference Zbuf refuses (a slice given back twice,
 * reported as a double free) opens no window, inside a poll's callbacks
 * too. Zbuf counts the application's references per buffer, not per
 * slice: while it holds another slice of the same buffer (several small
 * segments compacted into one, or pieces of one frame), a slice given
 * back twice takes that slice's reference instead and is not seen; the
 * buffer may then be freed under that slice, whose own give-back is the
 * one refused.
 */
void tcp_sock_zc_done(struct tcp_sock *s, const void *data, uint32_t len);
/**
 * tcp_sock_zc_done() for @n whole slices from tcp_sock_read_zc(), in one
 * call: every reference dropped, the window opened once by their total.
 */
void tcp_sock_zc_done_v(struct tcp_sock *s, const struct tcp_slice *v, unsigned n);
/** Bytes the application holds from zero-copy reads. */
uint32_t tcp_sock_held(const struct tcp_sock *s);
/** Send-buffer space: the connection's, within what the stack's mem_max leaves. */
uint32_t tcp_sock_send_space(const struct tcp_sock *s);
/**
 * The application waits to send on @s (a readiness set's LPOLL_OUT): if
 * the stack-wide mem_max is what leaves no room, TCP_EV_WRITABLE follows
 * once memory frees, as for a send it cut (Linux's SOCK_NOSPACE). Without
 * it a socket that never tried to send would wait for ever.
 */
void tcp_sock_want_space(struct tcp_sock *s);
/** Bytes queued for reading. */
uint32_t tcp_sock_readable(const struct tcp_sock *s);
/**
 * Half-close: FIN after queued data; reading and events go on (RFC 9293
 * 3.6). Before the handshake is done there is nothing to half-close: the
 * connection ends (CLOSED, no error).
 */
void tcp_sock_shutdown(struct tcp_sock *s);
/**
 * Graceful close (FIN after queued data); the socket is freed when the
 * connection ends. With received data unread, a RST instead (RFC 1122
 * 4.2.2.13; tcp_abort_unread()).
 */
void tcp_sock_close(struct tcp_sock *s);
/** Abort (RST); the socket is freed. */
void tcp_sock_abort(struct tcp_sock *s);
/**
 * The connection, read-only (state, error, stats). Inside a poll's
 * callbacks, what the last ACK changes beyond SND.UNA, the send buffer,
 * the window and the RTT (cwnd and ssthresh, the scoreboard, the RTO and
 * probe deadlines, the counters of that work) may still be as before
 * it: the stack finishes that ACK's work after the poll's transmit
 * (tcp_conn.h ack_defer). Read them outside callbacks to see them whole.
 */
const struct tcp_conn *tcp_sock_conn(const struct tcp_sock *s);
void tcp_sock_set_ctx(struct tcp_sock *s, tcp_sock_fn fn, void *ctx);
/**
 * inline-r2c (LUNA §5.1): run this socket's callback in place as the burst
 * is processed, instead of after it (batch-r2c, the default): once for each
 * run of its segments (consecutive in the burst, as a NIC's LRO would merge
 * them), when the next TCP segment is another connection's, an ICMP error
 * is handled for an inline socket, or the burst ends. The callback may read
 * zero-copy and reply at once; the reply joins this iteration's transmit
 * batch. It must be short: the whole burst waits for it (the worker's
 * watchdog counts iterations over budget).
 */
void tcp_sock_set_inline(struct tcp_sock *s, bool on);

#endif
