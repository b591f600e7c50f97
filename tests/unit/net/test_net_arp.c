/*
 * test_net_arp.c - neighbour resolution in net/netif.c, driven sans-I/O with
 * frames and a virtual clock: our own ARP (RFC 826, RFC 1122 2.3.2, RFC 5227
 * announcements) and the kernel neighbour mode used with af_xdp (the kernel
 * owns ARP; lunar mirrors its table and asks it to resolve).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net_test.h"

static const struct rte_ether_addr zero_mac;

/* Assert the frame is a marked datagram <n> from us to @mac / @ip. */
static void assert_marked_to(struct rte_mbuf *m, const struct rte_ether_addr *mac, uint32_t ip,
			     unsigned n)
{
	struct nt_pkt p;

	nt_parse(m, &p);
	assert_memory_equal(&p.eth.dst, mac, sizeof(*mac));
	assert_memory_equal(&p.eth.src, &our_mac, sizeof(our_mac));
	assert_int_equal(p.ip.src, OUR_IP);
	assert_int_equal(p.ip.dst, ip);
	assert_int_equal(nt_marker(m), n);
}

/*
 * RFC 826 "Packet Reception": a request whose target protocol address is
 * ours is answered with a reply carrying our hardware address, sent to the
 * requester; the requester's mapping is added (we are the target, so
 * merge_flag false -> add the triplet).
 */
static void test_request_for_us_replied(void **state)
{
	struct nt *t = *state;
	struct neigh_entry *e;
	struct nt_pkt p;

	nt_rx(t, nt_mk_arp(RTE_ARP_OP_REQUEST, &bcast_mac, &peer_mac, PEER_IP, NULL, OUR_IP), 10);
	assert_int_equal(nt_flush(t), 1);
	nt_parse(nt_tx(t, 0), &p);
	assert_int_equal(p.eth.ethertype, RTE_ETHER_TYPE_ARP);
	assert_memory_equal(&p.eth.dst, &peer_mac, 6);
	assert_memory_equal(&p.eth.src, &our_mac, 6);
	assert_int_equal(p.arp.op, RTE_ARP_OP_REPLY);
	assert_memory_equal(&p.arp.sha, &our_mac, 6);
	assert_int_equal(p.arp.spa, OUR_IP);
	assert_memory_equal(&p.arp.tha, &peer_mac, 6);
	assert_int_equal(p.arp.tpa, PEER_IP);
	assert_int_equal(netif_counter(&t->nif, "tx_arp_reply"), 1);
	assert_int_equal(netif_counter(&t->nif, "rx_arp"), 1);
	assert_int_equal(nt_total_drops(t), 0);

	e = neigh_find(&t->nif.neigh, PEER_IP);
	assert_non_null(e);
	assert_int_equal(e->state, NEIGH_REACHABLE);
	assert_memory_equal(&e->mac, &peer_mac, 6);
	assert_int_equal(e->expires_ns, 10 + T_REACHABLE);

	/* ...so a packet to the requester goes straight out, no request of ours. */
	nt_clear_tx(t);
	assert_int_equal(nt_send_marked(t, PEER_IP, 1), 0);
	assert_int_equal(nt_flush(t), 1);
	assert_marked_to(nt_tx(t, 0), &peer_mac, PEER_IP, 1);
	nt_clear_tx(t);
}

/*
 * RFC 826: a request for another host's address is not answered and, the
 * sender being unknown, teaches us nothing (only "?Am I the target" adds).
 */
static void test_request_for_other_ip(void **state)
{
	struct nt *t = *state;

	nt_rx(
	    t,
	    nt_mk_arp(RTE_ARP_OP_REQUEST, &bcast_mac, &peer_mac, PEER_IP, NULL, IP4(10, 0, 0, 77)),
	    10);
	assert_int_equal(nt_flush(t), 0);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ARP_NOT_FOR_US), 1);
	assert_int_equal(nt_total_drops(t), 1);
	assert_null(neigh_find(&t->nif.neigh, PEER_IP));
	assert_int_equal(t->nif.neigh.used, 0);
}

/*
 * RFC 826 merge: "If the pair <protocol type, sender protocol address> is
 * already in my translation table, update the sender hardware address" -
 * whoever the target is. The frame is still dropped ARP_NOT_FOR_US.
 */
static void test_merge_updates_existing(void **state)
{
	struct nt *t = *state;
	struct neigh_entry *e;

	nt_learn(t, PEER_IP, &peer_mac);
	nt_rx(
	    t,
	    nt_mk_arp(RTE_ARP_OP_REQUEST, &bcast_mac, &peer2_mac, PEER_IP, NULL, IP4(10, 0, 0, 77)),
	    20);
	assert_int_equal(nt_flush(t), 0);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ARP_NOT_FOR_US), 1);
	e = neigh_find(&t->nif.neigh, PEER_IP);
	assert_non_null(e);
	assert_int_equal(e->state, NEIGH_REACHABLE);
	assert_memory_equal(&e->mac, &peer2_mac, 6);
	assert_int_equal(t->nif.neigh.used, 1);

	assert_int_equal(nt_send_marked(t, PEER_IP, 3), 0);
	assert_int_equal(nt_flush(t), 1);
	assert_marked_to(nt_tx(t, 0), &peer2_mac, PEER_IP, 3);
	nt_clear_tx(t);
}

/*
 * RFC 1122 2.3.2.2: packets to an unresolved address are queued (at least
 * one per address; we keep NEIGH_HOLD) while one broadcast request goes
 * out; the reply (RFC 826) completes the entry and releases them in order.
 */
static void test_reply_releases_held_in_order(void **state)
{
	struct nt *t = *state;
	struct neigh_entry *e;
	struct nt_pkt p;

	netif_timers(&t->nif, 100);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(nt_send_marked(t, PEER_IP, i), 0);
	assert_int_equal(nt_flush(t), 1); /* one request for three packets */
	nt_assert_arp_request(nt_tx(t, 0), &bcast_mac, PEER_IP);
	assert_int_equal(netif_counter(&t->nif, "tx_arp_request"), 1);
	assert_int_equal(netif_counter(&t->nif, "neigh_miss"), 3);
	e = neigh_find(&t->nif.neigh, PEER_IP);
	assert_non_null(e);
	assert_int_equal(e->state, NEIGH_INCOMPLETE);
	assert_int_equal(e->n_hold, 3);
	nt_clear_tx(t);

	nt_rx(t, nt_mk_arp(RTE_ARP_OP_REPLY, &our_mac, &peer_mac, PEER_IP, &our_mac, OUR_IP), 200);
	assert_int_equal(nt_flush(t), 3); /* the held packets, no ARP reply to a reply */
	for (unsigned i = 0; i < 3; i++)
		assert_marked_to(nt_tx(t, i), &peer_mac, PEER_IP, i);
	for (unsigned i = 0; i < 3; i++) {
		nt_parse(nt_tx(t, i), &p);
		assert_int_not_equal(p.eth.ethertype, RTE_ETHER_TYPE_ARP);
	}
	assert_int_equal(e->state, NEIGH_REACHABLE);
	assert_int_equal(e->n_hold, 0);
	assert_int_equal(netif_counter(&t->nif, "neigh_resolved"), 1);
	assert_int_equal(netif_counter(&t->nif, "tx_arp_reply"), 0);
	assert_int_equal(nt_total_drops(t), 0);
	nt_clear_tx(t);
}

/*
 * RFC 1122 2.3.2.1 (flooding prevention: at most one request per address
 * per retry interval) and 2.3.2.2: requests are repeated every arp_retry_ns,
 * arp_retries in all; then the entry fails and its queue is dropped
 * NEIGH_FAILED. The next packet starts a fresh resolution.
 */
static void test_retries_then_failed(void **state)
{
	struct nt *t = *state;
	const uint64_t t0 = 5000;

	netif_timers(&t->nif, t0);
	assert_int_equal(nt_send_marked(t, PEER_IP, 0), 0);
	assert_int_equal(nt_send_marked(t, PEER_IP, 1), 0);
	assert_int_equal(nt_flush(t), 1);
	for (unsigned k = 1; k < T_RETRIES; k++) {
		netif_timers(&t->nif, t0 + k * T_RETRY - 1);
		assert_int_equal(nt_flush(t), k); /* not before the interval */
		netif_timers(&t->nif, t0 + k * T_RETRY);
		assert_int_equal(nt_flush(t), k + 1);
		nt_assert_arp_request(nt_tx(t, k), &bcast_mac, PEER_IP);
	}
	assert_int_equal(netif_counter(&t->nif, "tx_arp_request"), T_RETRIES);
	netif_timers(&t->nif, t0 + T_RETRIES * T_RETRY - 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_NEIGH_FAILED), 0);
	netif_timers(&t->nif, t0 + T_RETRIES * T_RETRY);
	assert_int_equal(nt_flush(t), T_RETRIES); /* no further request */
	assert_int_equal(nt_drops(t, LUNAR_DROP_NEIGH_FAILED), 2);
	assert_int_equal(nt_total_drops(t), 2);
	assert_null(neigh_find(&t->nif.neigh, PEER_IP));
	assert_int_equal(t->nif.neigh.used, 0);
	assert_int_equal(test_pool_in_use(nt_pool), T_RETRIES); /* only the captured requests */
	nt_clear_tx(t);

	assert_int_equal(nt_send_marked(t, PEER_IP, 2), 0);
	assert_int_equal(nt_flush(t), 1);
	nt_assert_arp_request(nt_tx(t, 0), &bcast_mac, PEER_IP);
	nt_clear_tx(t);
}

/*
 * RFC 1122 2.3.2.2: the queue per unresolved address is bounded; beyond
 * NEIGH_HOLD packets the newest are dropped NEIGH_UNRESOLVED.
 */
static void test_hold_overflow(void **state)
{
	struct nt *t = *state;

	for (unsigned i = 0; i < NEIGH_HOLD; i++)
		assert_int_equal(nt_send_marked(t, PEER_IP, i), 0);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(nt_send_marked(t, PEER_IP, 100 + i), -ENOBUFS);
	assert_int_equal(nt_drops(t, LUNAR_DROP_NEIGH_UNRESOLVED), 3);
	assert_int_equal(nt_total_drops(t), 3);
	assert_int_equal(nt_flush(t), 1); /* still a single request */
	nt_clear_tx(t);

	nt_rx(t, nt_mk_arp(RTE_ARP_OP_REPLY, &our_mac, &peer_mac, PEER_IP, &our_mac, OUR_IP), 10);
	assert_int_equal(nt_flush(t), NEIGH_HOLD);
	for (unsigned i = 0; i < NEIGH_HOLD; i++)
		assert_marked_to(nt_tx(t, i), &peer_mac, PEER_IP, i);
	nt_clear_tx(t);
}

/*
 * RFC 1122 2.3.2.1: cached entries must time out; a stale entry is
 * revalidated with a unicast request to the cached MAC ("unicast poll")
 * while traffic keeps using it; an answer makes it REACHABLE again.
 */
static void test_expiry_unicast_refresh(void **state)
{
	struct nt *t = *state;
	const uint64_t t0 = 1000;
	struct neigh_entry *e;

	nt_rx(t, nt_mk_arp(RTE_ARP_OP_REQUEST, &bcast_mac, &peer_mac, PEER_IP, NULL, OUR_IP), t0);
	assert_int_equal(nt_flush(t), 1);
	nt_clear_tx(t);
	e = neigh_find(&t->nif.neigh, PEER_IP);
	assert_non_null(e);

	netif_timers(&t->nif, t0 + T_REACHABLE - 1);
	assert_int_equal(e->state, NEIGH_REACHABLE);
	netif_timers(&t->nif, t0 + T_REACHABLE);
	assert_int_equal(e->state, NEIGH_STALE);
	assert_int_equal(netif_counter(&t->nif, "neigh_expired"), 0); /* stale, not gone */
	assert_int_equal(nt_flush(t), 0); /* expiry alone sends nothing */

	assert_int_equal(nt_send_marked(t, PEER_IP, 7), 0);
	assert_int_equal(nt_flush(t), 2);
	nt_assert_arp_request(nt_tx(t, 0), &peer_mac, PEER_IP); /* unicast */
	assert_marked_to(nt_tx(t, 1), &peer_mac, PEER_IP, 7);	/* not held */
	nt_clear_tx(t);

	/* Within the retry interval: no second request. */
	assert_int_equal(nt_send_marked(t, PEER_IP, 8), 0);
	assert_int_equal(nt_flush(t), 1);
	assert_marked_to(nt_tx(t, 0), &peer_mac, PEER_IP, 8);
	nt_clear_tx(t);

	/* After it: another unicast request. */
	netif_timers(&t->nif, t0 + T_REACHABLE + T_RETRY);
	assert_int_equal(nt_send_marked(t, PEER_IP, 9), 0);
	assert_int_equal(nt_flush(t), 2);
	nt_assert_arp_request(nt_tx(t, 0), &peer_mac, PEER_IP);
	nt_clear_tx(t);

	nt_rx(t, nt_mk_arp(RTE_ARP_OP_REPLY, &our_mac, &peer_mac, PEER_IP, &our_mac, OUR_IP),
	      t0 + T_REACHABLE + T_RETRY + 5);
	assert_int_equal(e->state, NEIGH_REACHABLE);
	assert_int_equal(e->expires_ns, t0 + T_REACHABLE + T_RETRY + 5 + T_REACHABLE);
	assert_int_equal(nt_flush(t), 0);
}

/* RFC 1122 2.3.2.1: a stale entry whose unicast polls go unanswered is removed. */
static void test_stale_unanswered_removed(void **state)
{
	struct nt *t = *state;
	uint64_t now = 0;

	nt_learn(t, PEER_IP, &peer_mac);
	now = T_REACHABLE;
	netif_timers(&t->nif, now);
	for (unsigned k = 0; k < T_RETRIES; k++) {
		assert_int_equal(nt_send_marked(t, PEER_IP, k), 0);
		now += T_RETRY;
		netif_timers(&t->nif, now);
	}
	assert_int_equal(netif_counter(&t->nif, "tx_arp_request"), T_RETRIES);
	assert_null(neigh_find(&t->nif.neigh, PEER_IP));
	assert_int_equal(nt_flush(t), 2 * T_RETRIES); /* each packet still went out */
	for (unsigned k = 0; k < T_RETRIES; k++) {
		nt_assert_arp_request(nt_tx(t, 2 * k), &peer_mac, PEER_IP);
		assert_marked_to(nt_tx(t, 2 * k + 1), &peer_mac, PEER_IP, k);
	}
	nt_clear_tx(t);

	/* Back to a broadcast request and holding. */
	assert_int_equal(nt_send_marked(t, PEER_IP, 50), 0);
	assert_int_equal(nt_flush(t), 1);
	nt_assert_arp_request(nt_tx(t, 0), &bcast_mac, PEER_IP);
	nt_clear_tx(t);
}

/*
 * RFC 1122 2.3.2.1: the last unicast poll of a stale entry gets its retry
 * interval to be answered; the entry goes only when that has passed.
 */
static void test_stale_last_poll_waits(void **state)
{
	struct nt *t = *state;
	uint64_t now = T_REACHABLE;

	nt_learn(t, PEER_IP, &peer_mac);
	netif_timers(&t->nif, now);
	assert_int_equal(neigh_find(&t->nif.neigh, PEER_IP)->state, NEIGH_STALE);
	for (unsigned k = 0; k < T_RETRIES; k++) {
		if (k)
			netif_timers(&t->nif, now);
		assert_int_equal(nt_send_marked(t, PEER_IP, k), 0); /* in use: polled */
		now += T_RETRY;
	}
	assert_int_equal(nt_flush(t), 2 * T_RETRIES);
	nt_assert_arp_request(nt_tx(t, 2 * (T_RETRIES - 1)), &peer_mac, PEER_IP); /* unicast */
	nt_clear_tx(t);
	netif_timers(&t->nif, now - 1);
	assert_non_null(neigh_find(&t->nif.neigh, PEER_IP)); /* the answer may still come */
	netif_timers(&t->nif, now);
	assert_null(neigh_find(&t->nif.neigh, PEER_IP));
	assert_int_equal(netif_counter(&t->nif, "neigh_expired"), 1);
}

/*
 * RFC 1122 2.3.2.1 (flushing entries nobody uses): a stale entry no
 * packet has gone to for arp_reachable_ns (a never used one: since it was
 * confirmed) is forgotten at the next pass, without a poll; one still in
 * use stays, and is polled.
 */
static void test_stale_unused_forgotten(void **state)
{
	struct nt *t = *state;
	const uint64_t t0 = 7 * T_REACHABLE;

	netif_timers(&t->nif, t0);
	nt_learn(t, PEER_IP, &peer_mac);
	nt_learn(t, PEER2_IP, &peer2_mac);
	netif_timers(&t->nif, t0 + T_REACHABLE);
	assert_int_equal(neigh_find(&t->nif.neigh, PEER_IP)->state, NEIGH_STALE);
	assert_int_equal(nt_send_marked(t, PEER2_IP, 1), 0); /* PEER2 in use */
	netif_timers(&t->nif, t0 + T_REACHABLE + 1);
	assert_null(neigh_find(&t->nif.neigh, PEER_IP));
	assert_non_null(neigh_find(&t->nif.neigh, PEER2_IP));
	assert_int_equal(netif_counter(&t->nif, "neigh_expired"), 1);
	assert_int_equal(nt_flush(t), 2); /* PEER2's poll and datagram; nothing to PEER */
	nt_assert_arp_request(nt_tx(t, 0), &peer2_mac, PEER2_IP);
	nt_clear_tx(t);
}

/* Two subnet addresses whose home slots in the neighbour table are the same. */
static void colliding_pair(uint32_t *a, uint32_t *b)
{
	static struct neigh_table scratch;
	unsigned home[256];

	for (unsigned h = 2; h < 255; h++) {
		struct neigh_entry *e = neigh_get(&scratch, IP4(10, 0, 0, h));

		home[h] = (unsigned)(e - scratch.e);
		neigh_remove(&scratch, e);
		for (unsigned k = 2; k < h; k++)
			if (home[k] == home[h]) {
				*a = IP4(10, 0, 0, k);
				*b = IP4(10, 0, 0, h);
				return;
			}
	}
	fail_msg("no two subnet addresses collide");
}

/*
 * netif_timers() removes entries while it walks the table, and a removal
 * shifts the next entry of the probe run back into the slot just visited:
 * two colliding neighbours failing (RFC 1122 2.3.2.2: unanswered requests)
 * or forgotten at the same time both go in the same pass.
 */
static void test_timers_remove_colliding_entries(void **state)
{
	struct nt *t = *state;
	uint32_t a, b;

	colliding_pair(&a, &b);
	assert_int_equal(nt_send_marked(t, a, 0), 0);
	assert_int_equal(nt_send_marked(t, b, 1), 0);
	for (unsigned k = 1; k <= T_RETRIES; k++)
		netif_timers(&t->nif, k * T_RETRY);
	assert_null(neigh_find(&t->nif.neigh, a));
	assert_null(neigh_find(&t->nif.neigh, b));
	assert_int_equal(nt_drops(t, LUNAR_DROP_NEIGH_FAILED), 2);
	assert_int_equal(t->nif.neigh.used, 0);
	nt_clear_tx(t);

	netif_timers(&t->nif, T_REACHABLE);
	nt_learn(t, a, &peer_mac);
	nt_learn(t, b, &peer2_mac);
	netif_timers(&t->nif, 2 * T_REACHABLE); /* both stale */
	netif_timers(&t->nif, 3 * T_REACHABLE); /* both unused for a lifetime */
	assert_null(neigh_find(&t->nif.neigh, a));
	assert_null(neigh_find(&t->nif.neigh, b));
	assert_int_equal(netif_counter(&t->nif, "neigh_expired"), 2);
	assert_int_equal(t->nif.neigh.used, 0);
}

/*
 * RFC 5227 2.3 ARP Announcement (gratuitous ARP): a broadcast request whose
 * sender and target protocol addresses are both ours, target MAC zero.
 */
static void test_gratuitous_arp(void **state)
{
	struct nt *t = *state;
	struct nt_pkt p;

	netif_gratuitous_arp(&t->nif);
	assert_int_equal(nt_flush(t), 1);
	nt_parse(nt_tx(t, 0), &p);
	assert_int_equal(p.eth.ethertype, RTE_ETHER_TYPE_ARP);
	assert_memory_equal(&p.eth.dst, &bcast_mac, 6);
	assert_memory_equal(&p.eth.src, &our_mac, 6);
	assert_int_equal(p.arp.op, RTE_ARP_OP_REQUEST);
	assert_memory_equal(&p.arp.sha, &our_mac, 6);
	assert_int_equal(p.arp.spa, OUR_IP);
	assert_int_equal(p.arp.tpa, OUR_IP);
	assert_memory_equal(&p.arp.tha, &zero_mac, 6);
	assert_int_equal(netif_counter(&t->nif, "tx_arp_request"), 1);
	nt_clear_tx(t);
}

/*
 * RFC 826: an unsolicited reply addressed to us adds the sender (we are the
 * target); a reply is never answered.
 */
static void test_unsolicited_reply_learned(void **state)
{
	struct nt *t = *state;
	struct neigh_entry *e;

	nt_rx(t, nt_mk_arp(RTE_ARP_OP_REPLY, &our_mac, &peer_mac, PEER_IP, &our_mac, OUR_IP), 10);
	assert_int_equal(nt_flush(t), 0);
	e = neigh_find(&t->nif.neigh, PEER_IP);
	assert_non_null(e);
	assert_int_equal(e->state, NEIGH_REACHABLE);
	assert_memory_equal(&e->mac, &peer_mac, 6);
	assert_int_equal(nt_total_drops(t), 0);
}

/*
 * RFC 5227 2.4 (conflict): an ARP claiming our own address as its sender
 * is not answered and creates no entry for our address.
 */
static void test_sender_is_our_ip(void **state)
{
	struct nt *t = *state;

	nt_rx(t, nt_mk_arp(RTE_ARP_OP_REQUEST, &bcast_mac, &other_mac, OUR_IP, NULL, OUR_IP), 10);
	assert_int_equal(nt_flush(t), 0);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ARP_NOT_FOR_US), 1);
	assert_int_equal(netif_counter(&t->nif, "arp_conflicts"), 1);
	assert_null(neigh_find(&t->nif.neigh, OUR_IP));
}

/*
 * A sender no neighbour can be (off our subnet, the subnet's broadcast,
 * class D) is not learned, even addressed to us, and not answered:
 * ARP_BAD_SENDER. A neighbour table is no place for such an address.
 */
static void test_sender_not_a_neighbour(void **state)
{
	static const uint32_t bad[] = {IP4(10, 9, 9, 9), IP4(10, 0, 0, 255), IP4(224, 0, 0, 1)};
	struct nt *t = *state;

	for (unsigned i = 0; i < 3; i++) {
		nt_rx(t, nt_mk_arp(RTE_ARP_OP_REQUEST, &bcast_mac, &peer_mac, bad[i], NULL, OUR_IP),
		      10);
		assert_null(neigh_find(&t->nif.neigh, bad[i]));
	}
	assert_int_equal(nt_drops(t, LUNAR_DROP_ARP_BAD_SENDER), 3);
	assert_int_equal(nt_flush(t), 0);
}

/*
 * RFC 5227 2.1.1: a probe carries sender protocol address 0.0.0.0 "to
 * avoid polluting ARP caches". One for our address is answered like any
 * request (RFC 826: we are the target), to the prober's MAC; 0.0.0.0 is no
 * sender to check against the subnet, and no entry is made for it.
 */
static void test_probe_answered_not_learned(void **state)
{
	struct nt *t = *state;
	struct nt_pkt p;

	nt_rx(t, nt_mk_arp(RTE_ARP_OP_REQUEST, &bcast_mac, &peer_mac, 0, NULL, OUR_IP), 10);
	assert_int_equal(nt_total_drops(t), 0);
	assert_int_equal(nt_flush(t), 1);
	nt_parse(nt_tx(t, 0), &p);
	assert_int_equal(p.eth.ethertype, RTE_ETHER_TYPE_ARP);
	assert_memory_equal(&p.eth.dst, &peer_mac, 6);
	assert_int_equal(p.arp.op, RTE_ARP_OP_REPLY);
	assert_int_equal(p.arp.spa, OUR_IP);
	assert_memory_equal(&p.arp.tha, &peer_mac, 6);
	assert_int_equal(p.arp.tpa, 0);
	assert_null(neigh_find(&t->nif.neigh, 0));
	assert_int_equal(t->nif.neigh.used, 0);
	nt_clear_tx(t);
}

/* RFC 826 "Packet Reception": formats we do not speak are dropped, each with its reason. */
static void test_malformed_arp(void **state)
{
	struct nt *t = *state;
	uint8_t b[ARP_PKT_LEN];

	nt_arp_bytes(b, 3, &peer_mac, PEER_IP, NULL, OUR_IP); /* RARP request */
	nt_rx(t, nt_frame(&bcast_mac, &peer_mac, RTE_ETHER_TYPE_ARP, b, sizeof(b)), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ARP_BAD_OP), 1);

	nt_arp_bytes(b, RTE_ARP_OP_REQUEST, &bcast_mac, PEER_IP, NULL, OUR_IP);
	nt_rx(t, nt_frame(&bcast_mac, &peer_mac, RTE_ETHER_TYPE_ARP, b, sizeof(b)), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ARP_BAD_SENDER), 1);

	nt_arp_bytes(b, RTE_ARP_OP_REQUEST, &peer_mac, PEER_IP, NULL, OUR_IP);
	b[4] = 8; /* hardware address length */
	nt_rx(t, nt_frame(&bcast_mac, &peer_mac, RTE_ETHER_TYPE_ARP, b, sizeof(b)), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ARP_BAD_FORMAT), 1);

	nt_rx(t, nt_frame(&bcast_mac, &peer_mac, RTE_ETHER_TYPE_ARP, b, 20), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ARP_SHORT), 1);

	assert_int_equal(nt_total_drops(t), 4);
	assert_int_equal(nt_flush(t), 0);
	assert_int_equal(t->nif.neigh.used, 0);
}

/* ---- kernel neighbour mode (LUNA 7.3) ---- */

/*
 * Kernel mode: an unknown next hop is resolved by asking the kernel (the
 * callback), never by sending ARP; asks repeat every arp_retry_ns; the
 * netlink mirror (netif_neigh_update) releases the held packets in order.
 * Kernel entries do not age in lunar (the kernel does RFC 1122 2.3.2.1).
 */
static void test_kernel_resolve(void **state)
{
	struct nt *t = *state;
	struct neigh_entry *e;

	netif_timers(&t->nif, 100);
	assert_int_equal(nt_send_marked(t, PEER_IP, 0), 0);
	assert_int_equal(nt_send_marked(t, PEER_IP, 1), 0);
	assert_int_equal(t->kernel_asks, 1);
	assert_int_equal(t->last_ask_ip, PEER_IP);
	assert_int_equal(netif_counter(&t->nif, "neigh_kernel_asks"), 1);
	assert_int_equal(nt_flush(t), 0); /* no ARP of ours */
	assert_int_equal(netif_counter(&t->nif, "tx_arp_request"), 0);

	netif_timers(&t->nif, 100 + T_RETRY);
	assert_int_equal(t->kernel_asks, 2);
	assert_int_equal(nt_flush(t), 0);

	netif_neigh_update(&t->nif, PEER_IP, &peer_mac, true);
	assert_int_equal(nt_flush(t), 2);
	assert_marked_to(nt_tx(t, 0), &peer_mac, PEER_IP, 0);
	assert_marked_to(nt_tx(t, 1), &peer_mac, PEER_IP, 1);
	assert_int_equal(netif_counter(&t->nif, "neigh_resolved"), 1);
	nt_clear_tx(t);

	e = neigh_find(&t->nif.neigh, PEER_IP);
	assert_non_null(e);
	assert_int_equal(e->expires_ns, UINT64_MAX);
	netif_timers(&t->nif, UINT64_MAX - 1);
	assert_int_equal(e->state, NEIGH_REACHABLE);
	assert_int_equal(t->kernel_asks, 2);
}

/*
 * Kernel mode: a next hop whose entry lunar let go (evicted from a full
 * table) while the kernel's stayed valid: the kernel announces nothing for
 * an entry it has, so the ask's answer is at once, from the mirror, and
 * the packet goes; no retries, nothing NEIGH_FAILED.
 */
static void test_kernel_known_at_once(void **state)
{
	struct nt *t = *state;

	t->kernel_knows = true;
	t->kernel_mac = peer_mac;
	assert_int_equal(nt_send_marked(t, PEER_IP, 0), 0);
	assert_int_equal(t->kernel_asks, 1);
	assert_int_equal(nt_flush(t), 1);
	assert_marked_to(nt_tx(t, 0), &peer_mac, PEER_IP, 0);
	assert_int_equal(netif_counter(&t->nif, "neigh_kernel_known"), 1);
	assert_int_equal(netif_counter(&t->nif, "neigh_resolved"), 1);
	assert_int_equal(neigh_find(&t->nif.neigh, PEER_IP)->state, NEIGH_REACHABLE);
	nt_clear_tx(t);
	for (unsigned k = 1; k <= T_RETRIES; k++)
		netif_timers(&t->nif, k * T_RETRY);
	assert_int_equal(t->kernel_asks, 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_NEIGH_FAILED), 0);
}

/*
 * Replies to a flood of spoofed on-link sources each make an unresolved
 * entry that holds a packet and cannot be evicted: at most
 * NEIGH_INCOMPLETE_MAX at once, then a packet to a new next hop is
 * dropped (counted), so the table never fills with them and a resolved
 * neighbour keeps its entry and its traffic.
 */
static void test_incomplete_capped(void **state)
{
	struct nt *t = *state;

	netif_neigh_update(&t->nif, PEER_IP, &peer_mac, true);
	for (unsigned i = 0; i < NEIGH_INCOMPLETE_MAX; i++)
		assert_int_equal(nt_send_marked(t, IP4(10, 0, 0, 10 + i), i), 0);
	assert_int_equal(neigh_incomplete(&t->nif.neigh), NEIGH_INCOMPLETE_MAX);
	assert_int_equal(nt_send_marked(t, IP4(10, 0, 0, 200), 99), -ENOBUFS);
	assert_int_equal(nt_drops(t, LUNAR_DROP_NEIGH_UNRESOLVED), 1);
	assert_int_equal(netif_counter(&t->nif, "neigh_incomplete_cap"), 1);
	/* A next hop already waiting still takes packets. */
	assert_int_equal(nt_send_marked(t, IP4(10, 0, 0, 10), 100), 0);
	assert_int_equal(nt_drops(t, LUNAR_DROP_NEIGH_UNRESOLVED), 1);
	assert_int_equal(nt_send_marked(t, PEER_IP, 7), 0);
	assert_int_equal(nt_flush(t), 1);
	assert_marked_to(nt_tx(t, 0), &peer_mac, PEER_IP, 7);
}

/* Kernel mode: unanswered asks end like ARP retries, held packets NEIGH_FAILED. */
static void test_kernel_resolve_fails(void **state)
{
	struct nt *t = *state;

	assert_int_equal(nt_send_marked(t, PEER_IP, 0), 0);
	for (unsigned k = 1; k <= T_RETRIES; k++)
		netif_timers(&t->nif, k * T_RETRY);
	assert_int_equal(t->kernel_asks, T_RETRIES);
	assert_int_equal(nt_drops(t, LUNAR_DROP_NEIGH_FAILED), 1);
	assert_null(neigh_find(&t->nif.neigh, PEER_IP));
	assert_int_equal(nt_flush(t), 0);
}

/*
 * Kernel mode: the XDP program leaves ARP to the kernel, so an ARP frame
 * reaching lunar is a steering bug: dropped STEERED_WRONG, not answered,
 * nothing learned.
 */
static void test_kernel_arp_steered_wrong(void **state)
{
	struct nt *t = *state;

	nt_rx(t, nt_mk_arp(RTE_ARP_OP_REQUEST, &bcast_mac, &peer_mac, PEER_IP, NULL, OUR_IP), 1);
	nt_rx(t, nt_mk_arp(RTE_ARP_OP_REPLY, &our_mac, &peer_mac, PEER_IP, &our_mac, OUR_IP), 2);
	assert_int_equal(nt_drops(t, LUNAR_DROP_STEERED_WRONG), 2);
	assert_int_equal(nt_total_drops(t), 2);
	assert_int_equal(nt_flush(t), 0);
	assert_null(neigh_find(&t->nif.neigh, PEER_IP));

	netif_gratuitous_arp(&t->nif); /* the kernel announces, not us */
	assert_int_equal(nt_flush(t), 0);
}

/*
 * Kernel mode: the kernel forgetting a neighbour removes the mirror entry;
 * with packets waiting, the entry goes back to INCOMPLETE and is asked again.
 */
static void test_kernel_neigh_forgotten(void **state)
{
	struct nt *t = *state;
	struct neigh_entry *e;

	netif_neigh_update(&t->nif, PEER_IP, &peer_mac, true);
	netif_neigh_update(&t->nif, PEER_IP, NULL, false);
	assert_null(neigh_find(&t->nif.neigh, PEER_IP));

	assert_int_equal(nt_send_marked(t, PEER2_IP, 0), 0);
	netif_neigh_update(&t->nif, PEER2_IP, NULL, false);
	e = neigh_find(&t->nif.neigh, PEER2_IP);
	assert_non_null(e);
	assert_int_equal(e->state, NEIGH_INCOMPLETE);
	assert_int_equal(e->n_hold, 1);
	netif_neigh_update(&t->nif, PEER2_IP, &peer2_mac, true);
	assert_int_equal(nt_flush(t), 1);
	assert_marked_to(nt_tx(t, 0), &peer2_mac, PEER2_IP, 0);
	nt_clear_tx(t);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, nt_setup, nt_teardown)
#define K(fn) cmocka_unit_test_setup_teardown(fn, nt_setup_kernel, nt_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_request_for_us_replied),
	    T(test_request_for_other_ip),
	    T(test_merge_updates_existing),
	    T(test_reply_releases_held_in_order),
	    T(test_retries_then_failed),
	    T(test_hold_overflow),
	    T(test_expiry_unicast_refresh),
	    T(test_stale_unanswered_removed),
	    T(test_stale_last_poll_waits),
	    T(test_stale_unused_forgotten),
	    T(test_timers_remove_colliding_entries),
	    T(test_gratuitous_arp),
	    T(test_unsolicited_reply_learned),
	    T(test_sender_is_our_ip),
	    T(test_sender_not_a_neighbour),
	    T(test_probe_answered_not_learned),
	    T(test_malformed_arp),
	    K(test_kernel_resolve),
	    K(test_kernel_resolve_fails),
	    K(test_kernel_known_at_once),
	    K(test_incomplete_capped),
	    K(test_kernel_arp_steered_wrong),
	    K(test_kernel_neigh_forgotten),
	};
#undef T
#undef K

	return cmocka_run_group_tests_name("net/arp", tests, nt_group_setup, nt_group_teardown);
}
