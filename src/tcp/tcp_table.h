/*
 * tcp_table.h - where a segment finds its connection: an O(1) hash of
 * established 4-tuples (DPDK rte_hash, cuckoo hashing; stays O(1) at 100 000
 * connections and beyond), a listener table by local port, and ephemeral
 * port selection from lunar's reserved range (RFC 6056 algorithm 3, so the
 * ports of successive connections are not predictable).
 * Per worker: one table per core, no locks.
 */
#ifndef LUNAR_TCP_TCP_TABLE_H
#define LUNAR_TCP_TCP_TABLE_H

#include <stdbool.h>
#include <stdint.h>

struct tcp_4tuple {
	uint32_t laddr, raddr; /* host order */
	uint16_t lport, rport;
};

struct tcp_table;

/*
 * Longest table name: rte_hash names its internal ring "HT_EXT_<name>" in a
 * 29-byte buffer, so longer names would be truncated and could collide.
 */
#define TCP_TABLE_NAME_MAX 21

/**
 * @max_conns: capacity of the 4-tuple hash: exactly max(@max_conns, 8)
 *   connections fit (extendable buckets: no early failure on collisions).
 * @name: unique per process (rte_hash names are global), at most
 *   TCP_TABLE_NAME_MAX characters.
 * EAL must be initialised. Draws the table's two random secrets (port
 * offsets, ISNs). @return NULL on failure, errno set: EINVAL, ENAMETOOLONG,
 * EEXIST (name in use), ENOMEM.
 */
struct tcp_table *tcp_table_create(const char *name, unsigned max_conns);
void tcp_table_free(struct tcp_table *t);

/**
 * @conn must not be NULL (-EINVAL). @return 0, -EEXIST if the tuple is taken
 * (the existing entry is left alone), -ENOSPC if full.
 */
int tcp_table_insert(struct tcp_table *t, const struct tcp_4tuple *k, void *conn);
/** @return the connection or NULL. */
void *tcp_table_lookup(const struct tcp_table *t, const struct tcp_4tuple *k);
/** @return 0 or -ENOENT. */
int tcp_table_remove(struct tcp_table *t, const struct tcp_4tuple *k);
/** Number of connections in the table. */
unsigned tcp_table_count(const struct tcp_table *t);

/**
 * Listeners by local port (any local address): a flat 65536-entry array.
 * @return 0, -EADDRINUSE, or -EINVAL for port 0 or a NULL @listener.
 */
int tcp_table_listen(struct tcp_table *t, uint16_t lport, void *listener);
void tcp_table_unlisten(struct tcp_table *t, uint16_t lport);
void *tcp_table_listener(const struct tcp_table *t, uint16_t lport);

/**
 * Pick a local port in [lo, hi] so that (laddr, port, raddr, rport) is not
 * in use, per RFC 6056 3.3.3 (hash of the 3-tuple and a secret as the
 * starting offset, plus a counter). Ports with a listener, and port 0, are
 * skipped. Does not insert anything: the caller inserts the 4-tuple.
 * @return 0 and *port, -EADDRNOTAVAIL when every port in the range is taken
 * for that destination, -EINVAL if lo > hi.
 */
int tcp_table_pick_port(struct tcp_table *t, uint32_t laddr, uint32_t raddr, uint16_t rport,
			uint16_t lo, uint16_t hi, uint16_t *port);
/**
 * The same among the ports p of [lo, hi] with p % @mod == @rem only: a
 * worker's own client ports (ctl/flow_plan.h). -EINVAL if mod is 0 or
 * rem >= mod.
 */
int tcp_table_pick_port_in(struct tcp_table *t, uint32_t laddr, uint32_t raddr, uint16_t rport,
			   uint16_t lo, uint16_t hi, uint16_t mod, uint16_t rem, uint16_t *port);

/**
 * RFC 6528 initial sequence number: a 4-microsecond clock (@now_ns / 4000)
 * plus a keyed hash (SipHash-2-4, truncated to 32 bits) of the 4-tuple with
 * the table's random secret, fixed for the table's life.
 */
uint32_t tcp_isn(const struct tcp_table *t, const struct tcp_4tuple *k, uint64_t now_ns);

#endif
