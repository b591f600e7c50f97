/*
 * tcp_limits.h - what one worker's TCP may hold at most: connections,
 * half-open connections, TIME-WAIT connections and buffered bytes, their
 * defaults and their checks. tcp_stack enforces them and counts every
 * action they cause; docs/LIMITS.md is the policy table.
 *
 * The per-connection limits (send and receive buffer, out-of-order queue)
 * are struct tcp_config's; these are the stack-wide ones, as Linux's
 * tcp_max_syn_backlog, tcp_max_tw_buckets and tcp_mem are.
 */
#ifndef LUNAR_TCP_TCP_LIMITS_H
#define LUNAR_TCP_TCP_LIMITS_H

#include <stddef.h>
#include <stdint.h>

struct tcp_limits {
	/** Connections in any state (the connection table's size). */
	unsigned max_conns;
	/**
	 * Connections in SYN-RECEIVED made from a SYN, all listeners together
	 * (RFC 4987 3.1's half-open connections). Beyond it a SYN is answered
	 * with a SYN cookie, or dropped with SYN cookies off. 0: cookies for
	 * every SYN.
	 */
	unsigned max_half_open;
	/**
	 * Connections in TIME-WAIT. One more ends the oldest one's TIME-WAIT
	 * early. 0: no connection stays in TIME-WAIT.
	 */
	unsigned max_time_wait;
	/**
	 * Bytes held in every connection's send buffer, receive queue (what the
	 * application holds zero-copy included) and out-of-order queue
	 * together; 0: no cap. At 3/4 of it the stack is under memory pressure
	 * (TCP_MEM_LOW), at all of it critical (TCP_MEM_CRITICAL) and sends
	 * are refused.
	 */
	uint64_t mem_max;
};

#define TCP_LIMITS_HALF_OPEN_DEFAULT 4096u /* Linux's tcp_max_syn_backlog on a large host */
#define TCP_LIMITS_MEM_DEFAULT	     ((uint64_t)1 << 30)  /* per worker */
#define TCP_LIMITS_MEM_MIN	     ((uint64_t)64 << 10) /* one 64 KiB window must fit */
#define TCP_LIMITS_CONNS_MAX	     (1u << 24)

/** Which fields of a struct tcp_limits a user set (struct tcp_limits_spec.given). */
enum tcp_limit_bit {
	TCP_LIMIT_CONNS = 1u << 0,
	TCP_LIMIT_HALF_OPEN = 1u << 1,
	TCP_LIMIT_TIME_WAIT = 1u << 2,
	TCP_LIMIT_MEM = 1u << 3,
};

/** What a user asked for: the values, and which of them were given. */
struct tcp_limits_spec {
	struct tcp_limits v;
	unsigned given; /* enum tcp_limit_bit */
};

/**
 * The defaults for a table of @max_conns: half-open min(4096, @max_conns),
 * TIME-WAIT @max_conns / 2, memory TCP_LIMITS_MEM_DEFAULT.
 */
void tcp_limits_default(struct tcp_limits *l, unsigned max_conns);
/**
 * @return 0, or -EINVAL with what is wrong and how to fix it in @err
 * (a limit out of range, half-open or TIME-WAIT beyond the connections).
 */
int tcp_limits_check(const struct tcp_limits *l, char *err, size_t errlen);
/**
 * The limits to run with: the defaults for the spec's connections (or
 * @max_conns when it gives none), overridden by what it gives; defaults
 * above the connections are lowered to them, given values are not.
 * @return 0, or -EINVAL as tcp_limits_check().
 */
int tcp_limits_resolve(const struct tcp_limits_spec *spec, unsigned max_conns,
		       struct tcp_limits *out, char *err, size_t errlen);

#endif
