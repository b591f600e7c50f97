/*
 * pmtu.h - the path MTU cache (RFC 1191 5 and 6.3): what a credible
 * "fragmentation needed" taught about the path to a destination, kept so
 * that every connection to it, open or still to come, sends datagrams
 * that fit, until the lesson is PMTU_LIFETIME_NS old and the larger MTU
 * is tried again. Linux keeps the same thing as a route exception
 * (net.ipv4.route.mtu_expires, 600 s).
 *
 * A pure data structure, one per worker like everything a worker owns:
 * no locks, no clock of its own (`now` comes in). It holds the MTU only;
 * judging an ICMP error (RFC 5927) and acting on connections is the
 * transport's (tcp/tcp_icmp.c, tcp/tcp_stack.c).
 */
#ifndef LUNAR_NET_PMTU_H
#define LUNAR_NET_PMTU_H

#include <stdbool.h>
#include <stdint.h>

#define PMTU_SLOTS 256 /* power of two */
#define PMTU_WAYS  8   /* a destination lives in one of the 8 slots from its home (hash) on */
/*
 * An entry younger than this is not evicted for a newcomer, which is then
 * not cached (its own connection keeps what it learned): otherwise nine
 * destinations homed in one set, learned in turn (a peer with nine
 * addresses sending frag-needed for each in a loop), evict each other for
 * ever, and each eviction walks every connection.
 */
#define PMTU_MIN_AGE_NS (10ull * 1000000000ull)
/** RFC 1191 6.3: try a larger MTU again after 10 minutes; Linux's mtu_expires. */
#define PMTU_LIFETIME_NS (600ull * 1000000000ull)

struct pmtu_entry {
	uint32_t dst;	     /* IPv4, host order */
	uint16_t mtu;	     /* 0: a free slot */
	uint64_t expires_ns; /* when the entry is forgotten */
	uint64_t learned_ns; /* when the destination entered the cache */
};

struct pmtu_stats {
	uint64_t learned;   /* a destination entered the cache */
	uint64_t lowered;   /* a known destination's MTU went lower */
	uint64_t refreshed; /* the same MTU reported again: its lifetime starts over */
	uint64_t expired;   /* forgotten after its lifetime (the larger MTU tried again) */
	uint64_t evicted;   /* forgotten early: all PMTU_WAYS slots of a new destination in use */
	uint64_t refused;   /* not cached: those slots all younger than PMTU_MIN_AGE_NS */
	uint64_t raised;    /* a probe showed the path takes more (RFC 4821): raised or forgotten */
};

struct pmtu_cache {
	struct pmtu_entry e[PMTU_SLOTS];
	uint64_t lifetime_ns;
	uint64_t next_expiry_ns; /* no entry expires before this (UINT64_MAX: empty) */
	unsigned used;
	struct pmtu_stats stats;
};

/** An empty cache whose entries live @lifetime_ns (0: PMTU_LIFETIME_NS). */
void pmtu_init(struct pmtu_cache *pc, uint64_t lifetime_ns);

/** @return the path MTU known for @dst at @now, or 0 if none is (the interface's MTU holds). */
uint16_t pmtu_get(const struct pmtu_cache *pc, uint32_t dst, uint64_t now);

/**
 * The path to @dst takes at most @mtu bytes (already judged credible and
 * floored by the caller), for @lifetime_ns from @now (0: the cache's
 * lifetime; a guess, such as a black hole's, may be held for less).
 * RFC 1191 3 and 5: only a lower MTU is taken; the
 * same one again restarts its lifetime (as Linux's route exceptions); a
 * higher one changes nothing. A new destination whose PMTU_WAYS slots
 * from its home are all in use evicts the entry among them that would
 * expire first (that of another destination, which may be homed
 * elsewhere): *@evicted is then its destination, else 0; but none
 * younger than PMTU_MIN_AGE_NS: then @dst is not cached (refused).
 * @return true if @dst's MTU is now lower than it was (or newly known).
 */
bool pmtu_learn(struct pmtu_cache *pc, uint32_t dst, uint16_t mtu, uint64_t now,
		uint64_t lifetime_ns, uint32_t *evicted);

/**
 * A probe got through (RFC 4821 7.6.1): the path to @dst takes @mtu
 * after all, or the interface's MTU when @mtu is 0. An entry below it is
 * raised to it, keeping its expiry, or forgotten (@mtu 0); one expired
 * and not yet purged too, since connections hold what it says until then.
 * @return true if @dst's entry changed.
 */
bool pmtu_raise(struct pmtu_cache *pc, uint32_t dst, uint16_t mtu);

/**
 * Forget every entry whose lifetime is over at @now, so that the
 * destinations' connections can try the larger MTU (pmtu_get() says 0 for
 * them now). One comparison when nothing is due.
 * @return the number forgotten.
 */
unsigned pmtu_expire(struct pmtu_cache *pc, uint64_t now);

#endif
