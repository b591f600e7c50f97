/*
 * neigh.h - the neighbour table: IPv4 next hop -> MAC, with a small hold
 * queue per unresolved entry. Pure data structure: it decides, the netif
 * sends (ARP requests or kernel asks) and transmits released packets.
 */
#ifndef LUNAR_NET_NEIGH_H
#define LUNAR_NET_NEIGH_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

struct rte_mbuf;

enum neigh_mode { NEIGH_MODE_ARP, NEIGH_MODE_KERNEL };

enum neigh_state {
	NEIGH_FREE = 0,
	NEIGH_INCOMPLETE, /* asked, no answer yet; packets wait in hold[] */
	NEIGH_REACHABLE,  /* MAC known and fresh */
	NEIGH_STALE,	  /* ARP mode: lifetime over; still used while we re-ask */
};

#define NEIGH_TABLE_SIZE 256 /* power of two; open addressing */
#define NEIGH_HOLD	 8   /* packets kept per unresolved neighbour */
/*
 * Unresolved neighbours at once, at most: replies to a flood of spoofed
 * on-link sources (echo, SYN-ACK, RST) each make one, hold a packet and
 * cannot be evicted, so without a cap they would fill the table and push
 * out the resolved entries (the gateway's).
 */
#define NEIGH_INCOMPLETE_MAX (NEIGH_TABLE_SIZE / 4)

struct neigh_entry {
	uint32_t ip;
	enum neigh_state state;
	struct rte_ether_addr mac;
	uint64_t expires_ns;   /* REACHABLE -> STALE (ARP mode) */
	uint64_t next_try_ns;  /* next request/ask */
	uint64_t last_used_ns; /* last packet sent to it (idle STALE entries are removed) */
	unsigned tries;
	unsigned n_hold;
	struct rte_mbuf *hold[NEIGH_HOLD];
};

struct neigh_table {
	struct neigh_entry e[NEIGH_TABLE_SIZE];
	unsigned used;
};

/** @return the entry for @ip, or NULL. */
struct neigh_entry *neigh_find(struct neigh_table *t, uint32_t ip);
/**
 * @return the entry for @ip, created FREE->INCOMPLETE if absent. A full
 * table makes room by evicting its least recently used entry that holds no
 * packets; NULL only if every entry has packets waiting.
 */
struct neigh_entry *neigh_get(struct neigh_table *t, uint32_t ip);
/** Remove @e (its held packets must have been released by the caller). */
void neigh_remove(struct neigh_table *t, struct neigh_entry *e);
/** Entries still unresolved (INCOMPLETE): a walk of the table, for the rare unresolved path. */
unsigned neigh_incomplete(const struct neigh_table *t);
/** Record @mac for @e: state REACHABLE until @expires_ns (UINT64_MAX: never). */
void neigh_confirm(struct neigh_entry *e, const struct rte_ether_addr *mac, uint64_t expires_ns);

#endif
