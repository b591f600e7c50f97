/*
 * test_net_route.c - output path of net/netif.c: next-hop selection
 * (RFC 1122 3.3.1: on-link destinations directly, others via a gateway;
 * the longest matching route prefix wins), NO_ROUTE drops, broadcast
 * destinations (RFC 919/922, RFC 1122 3.3.6), and the transmit batch
 * (flush, auto-flush at NETIF_TX_BURST, TX_RING_FULL drops with no leak).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net_test.h"

#define REMOTE_IP IP4(192, 0, 2, 10) /* TEST-NET-1, off-link */

static void reinit_with_gateway(struct nt *t, uint32_t gw)
{
	struct netif_config cfg = nt_config(t, NEIGH_MODE_ARP);

	cfg.gateway = gw;
	nt_reinit(t, &cfg);
}

/* RFC 1122 3.3.1.1: a destination on the connected subnet is its own next hop. */
static void test_on_link_next_hop(void **state)
{
	struct nt *t = *state;
	struct nt_pkt p;

	reinit_with_gateway(t, GW_IP);
	assert_int_equal(netif_next_hop(&t->nif, PEER_IP), PEER_IP);
	assert_int_equal(netif_next_hop(&t->nif, IP4(10, 0, 0, 200)), IP4(10, 0, 0, 200));
	assert_int_equal(nt_send_marked(t, PEER_IP, 0), 0);
	assert_int_equal(nt_flush(t), 1);
	nt_assert_arp_request(nt_tx(t, 0), &bcast_mac, PEER_IP); /* ARP for the host itself */
	nt_clear_tx(t);
	nt_learn(t, PEER_IP, &peer_mac);
	assert_int_equal(nt_flush(t), 1);
	nt_parse(nt_tx(t, 0), &p);
	assert_memory_equal(&p.eth.dst, &peer_mac, 6);
	nt_clear_tx(t);
}

/*
 * RFC 950 subnetting: with a /28 the link is 10.0.0.0-15; 10.0.0.100,
 * though in the same /24, is off-link (via the gateway) and 10.0.0.15 is
 * the subnet's broadcast.
 */
static void test_longer_prefix_subnet(void **state)
{
	struct nt *t = *state;
	struct netif_config cfg = nt_config(t, NEIGH_MODE_ARP);
	struct nt_pkt p;

	cfg.prefix_len = 28;
	cfg.gateway = IP4(10, 0, 0, 14);
	nt_reinit(t, &cfg);
	assert_int_equal(netif_next_hop(&t->nif, IP4(10, 0, 0, 9)), IP4(10, 0, 0, 9));
	assert_int_equal(netif_next_hop(&t->nif, IP4(10, 0, 0, 100)), IP4(10, 0, 0, 14));
	assert_int_equal(nt_send_marked(t, IP4(10, 0, 0, 15), 0), 0);
	assert_int_equal(nt_flush(t), 1);
	nt_parse(nt_tx(t, 0), &p);
	assert_memory_equal(&p.eth.dst, &bcast_mac, 6); /* no ARP: a broadcast */
	assert_int_equal(nt_marker(nt_tx(t, 0)), 0);
	nt_clear_tx(t);
}

/*
 * RFC 1122 3.3.1.2: an off-link destination goes to the gateway: the frame
 * is addressed to the gateway's MAC, the IPv4 destination stays the remote.
 */
static void test_gateway_next_hop(void **state)
{
	struct nt *t = *state;
	struct nt_pkt p;

	reinit_with_gateway(t, GW_IP);
	assert_int_equal(netif_next_hop(&t->nif, REMOTE_IP), GW_IP);
	assert_int_equal(nt_send_marked(t, REMOTE_IP, 1), 0);
	assert_int_equal(nt_flush(t), 1);
	nt_assert_arp_request(nt_tx(t, 0), &bcast_mac, GW_IP); /* resolve the gateway */
	nt_clear_tx(t);
	nt_rx(t, nt_mk_arp(RTE_ARP_OP_REPLY, &our_mac, &gw_mac, GW_IP, &our_mac, OUR_IP), 1);
	assert_int_equal(nt_flush(t), 1);
	nt_parse(nt_tx(t, 0), &p);
	assert_memory_equal(&p.eth.dst, &gw_mac, 6);
	assert_int_equal(p.ip.dst, REMOTE_IP);
	assert_int_equal(nt_marker(nt_tx(t, 0)), 1);
	assert_null(neigh_find(&t->nif.neigh, REMOTE_IP)); /* no entry for the remote */
	nt_clear_tx(t);
}

/*
 * RFC 1812 5.2.4.3 / RFC 1122 3.3.1.2: among matching routes the longest
 * prefix wins; a route without gateway is on-link (next hop = destination);
 * nothing matching falls back to the default gateway.
 */
static void test_longest_prefix(void **state)
{
	struct nt *t = *state;
	const uint32_t gw_a = IP4(10, 0, 0, 250), gw_b = IP4(10, 0, 0, 251),
		       gw_c = IP4(10, 0, 0, 252);

	reinit_with_gateway(t, GW_IP);
	assert_int_equal(netif_route_add(&t->nif, IP4(192, 168, 0, 0), 16, gw_a), 0);
	assert_int_equal(netif_route_add(&t->nif, IP4(192, 168, 1, 0), 24, gw_b), 0);
	assert_int_equal(netif_route_add(&t->nif, IP4(192, 168, 1, 128), 25, gw_c), 0);
	assert_int_equal(netif_route_add(&t->nif, IP4(172, 16, 0, 0), 12, 0), 0);

	assert_int_equal(netif_next_hop(&t->nif, IP4(192, 168, 2, 5)), gw_a);
	assert_int_equal(netif_next_hop(&t->nif, IP4(192, 168, 1, 5)), gw_b);
	assert_int_equal(netif_next_hop(&t->nif, IP4(192, 168, 1, 200)), gw_c);
	assert_int_equal(netif_next_hop(&t->nif, IP4(172, 20, 1, 1)), IP4(172, 20, 1, 1));
	assert_int_equal(netif_next_hop(&t->nif, IP4(8, 8, 8, 8)), GW_IP);

	/* Order of insertion does not matter: re-adding the /16 last changes nothing. */
	assert_int_equal(netif_route_add(&t->nif, IP4(192, 168, 77, 1), 16, gw_a), 0);
	assert_int_equal(netif_next_hop(&t->nif, IP4(192, 168, 1, 5)), gw_b);
	assert_int_equal(t->nif.n_routes, 4); /* same prefix replaced, host bits ignored */

	/* Removing the /24 uncovers the /16. */
	netif_route_del(&t->nif, IP4(192, 168, 1, 0), 24);
	assert_int_equal(netif_next_hop(&t->nif, IP4(192, 168, 1, 5)), gw_a);
	assert_int_equal(netif_next_hop(&t->nif, IP4(192, 168, 1, 200)), gw_c);

	/* A default route (/0) is the least specific of all. */
	assert_int_equal(netif_route_add(&t->nif, 0, 0, gw_b), 0);
	assert_int_equal(netif_next_hop(&t->nif, IP4(8, 8, 8, 8)), gw_b);
	assert_int_equal(netif_next_hop(&t->nif, IP4(192, 168, 9, 9)), gw_a);
	/* An on-link default (`ip route add default dev X`): the destination is the next hop. */
	assert_int_equal(netif_route_add(&t->nif, 0, 0, 0), 0);
	assert_int_equal(netif_next_hop(&t->nif, IP4(8, 8, 8, 8)), IP4(8, 8, 8, 8));
}

/*
 * A route is its prefix and its length (RFC 1122 3.3.1.2): a /16 and a
 * /24 at the same network address are two routes; adding one replaces
 * neither, and deleting the /24 leaves the /16.
 */
static void test_same_address_other_length(void **state)
{
	struct nt *t = *state;
	const uint32_t gw_a = IP4(10, 0, 0, 250), gw_b = IP4(10, 0, 0, 251);

	reinit_with_gateway(t, GW_IP);
	assert_int_equal(netif_route_add(&t->nif, IP4(192, 168, 0, 0), 16, gw_a), 0);
	assert_int_equal(netif_route_add(&t->nif, IP4(192, 168, 0, 0), 24, gw_b), 0);
	assert_int_equal(t->nif.n_routes, 2);
	assert_int_equal(netif_next_hop(&t->nif, IP4(192, 168, 0, 5)), gw_b);
	assert_int_equal(netif_next_hop(&t->nif, IP4(192, 168, 5, 5)), gw_a);
	netif_route_del(&t->nif, IP4(192, 168, 0, 0), 24);
	assert_int_equal(t->nif.n_routes, 1);
	assert_int_equal(netif_next_hop(&t->nif, IP4(192, 168, 0, 5)), gw_a);
}

/* netif_init() takes a prefix of 0 to 32 bits; 33 is refused, -EINVAL. */
static void test_init_prefix_len_bounds(void **state)
{
	struct nt *t = *state;
	struct netif_config cfg = nt_config(t, NEIGH_MODE_ARP);
	struct netif nif;

	cfg.prefix_len = 33;
	assert_int_equal(netif_init(&nif, &cfg), -EINVAL);
	cfg.prefix_len = 32;
	assert_int_equal(netif_init(&nif, &cfg), 0);
	assert_int_equal(nif.netmask, 0xffffffffu);
	netif_fini(&nif);
}

/*
 * RFC 1122 3.3.1.2 route table, bounded by lunar (netif.h): NETIF_MAX_ROUTES,
 * then -ENOSPC; replacing an existing prefix still works when full.
 */
static void test_route_table_full(void **state)
{
	struct nt *t = *state;

	for (unsigned i = 0; i < NETIF_MAX_ROUTES; i++)
		assert_int_equal(netif_route_add(&t->nif, IP4(100, (uint8_t)i, 0, 0), 16, GW_IP),
				 0);
	assert_int_equal(netif_route_add(&t->nif, IP4(101, 0, 0, 0), 16, GW_IP), -ENOSPC);
	assert_int_equal(netif_counter(&t->nif, "routes_full"), 1);
	assert_int_equal(netif_route_add(&t->nif, IP4(100, 3, 0, 0), 16, PEER_IP), 0);
	assert_int_equal(netif_next_hop(&t->nif, IP4(100, 3, 1, 1)), PEER_IP);
}

/*
 * RFC 1122 3.3.1.2: with no route and no default gateway an off-link
 * destination is unreachable: the packet is dropped NO_ROUTE and the
 * caller sees -ENETUNREACH.
 */
static void test_no_route(void **state)
{
	struct nt *t = *state;

	assert_int_equal(netif_next_hop(&t->nif, REMOTE_IP), 0);
	assert_int_equal(nt_send_marked(t, REMOTE_IP, 0), -ENETUNREACH);
	assert_int_equal(netif_icmp_echo(&t->nif, REMOTE_IP, 1, 1, 8), -ENETUNREACH);
	assert_int_equal(nt_drops(t, LUNAR_DROP_NO_ROUTE), 2);
	assert_int_equal(nt_total_drops(t), 2);
	assert_int_equal(nt_flush(t), 0);
	assert_int_equal(t->nif.neigh.used, 0);
}

/*
 * RFC 1122 3.3.6 / RFC 919 / RFC 922: the limited broadcast and our
 * subnet's directed broadcast go to ff:ff:ff:ff:ff:ff without ARP.
 */
static void test_broadcast_destination(void **state)
{
	struct nt *t = *state;
	struct nt_pkt p;

	assert_int_equal(nt_send_marked(t, IP4(255, 255, 255, 255), 0), 0);
	assert_int_equal(nt_send_marked(t, SUBNET_BCAST, 1), 0);
	assert_int_equal(nt_flush(t), 2);
	for (unsigned i = 0; i < 2; i++) {
		nt_parse(nt_tx(t, i), &p);
		assert_memory_equal(&p.eth.dst, &bcast_mac, 6);
		assert_int_equal(nt_marker(nt_tx(t, i)), i);
	}
	assert_int_equal(p.ip.dst, SUBNET_BCAST);
	assert_int_equal(netif_counter(&t->nif, "tx_arp_request"), 0);
	assert_int_equal(t->nif.neigh.used, 0);
	nt_clear_tx(t);
}

/*
 * RFC 3021 2.2: on a /31 link both addresses are host addresses - there is
 * no directed broadcast, so the peer's address must be resolved and
 * unicast. (Known to fail: netif.c treats ip | ~netmask - on a /31 the
 * peer - as the directed broadcast and sends to ff:ff:ff:ff:ff:ff.)
 */
static void test_slash31_peer_is_unicast(void **state)
{
	struct nt *t = *state;
	struct netif_config cfg = nt_config(t, NEIGH_MODE_ARP);
	struct nt_pkt p;

	cfg.ip = IP4(10, 9, 0, 0);
	cfg.prefix_len = 31;
	nt_reinit(t, &cfg);
	assert_int_equal(nt_send_marked(t, IP4(10, 9, 0, 1), 0), 0);
	assert_int_equal(nt_flush(t), 1);
	nt_parse(nt_tx(t, 0), &p);
	nt_clear_tx(t);
	assert_int_equal(p.eth.ethertype, RTE_ETHER_TYPE_ARP); /* resolution first */
}

/*
 * No RFC clause - lunar's run-to-completion batching (netif.h): frames wait
 * until netif_flush() and are handed over in order (RFC 1122 3.3: no
 * reordering by the sender).
 */
static void test_batch_and_flush(void **state)
{
	struct nt *t = *state;

	nt_learn(t, PEER_IP, &peer_mac);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(nt_send_marked(t, PEER_IP, i), 0);
	assert_int_equal(t->fp.n_tx, 0); /* nothing until the flush */
	assert_int_equal(nt_flush(t), 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(nt_marker(nt_tx(t, i)), i);
	assert_int_equal(netif_counter(&t->nif, "tx_frames"), 5);
	nt_clear_tx(t);

	/* More than NETIF_TX_BURST: the batch flushes itself when full. */
	for (unsigned i = 0; i < NETIF_TX_BURST + 10; i++)
		assert_int_equal(nt_send_marked(t, PEER_IP, i), 0);
	assert_int_equal(t->fp.n_tx, NETIF_TX_BURST);
	assert_int_equal(nt_flush(t), NETIF_TX_BURST + 10);
	for (unsigned i = 0; i < NETIF_TX_BURST + 10; i++)
		assert_int_equal(nt_marker(nt_tx(t, i)), i);
	nt_clear_tx(t);
}

/*
 * netif.h: a full ring keeps frames queued for the next flush (a frame TCP
 * believes sent but dropped here would cost it a timeout); only a queue
 * that overflows drops, counted TX_RING_FULL.
 */
static void test_tx_ring_full(void **state)
{
	struct nt *t = *state;

	nt_learn(t, PEER_IP, &peer_mac);
	t->fp.accept = 0;
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(nt_send_marked(t, PEER_IP, i), 0);
	assert_int_equal(nt_flush(t), 0);
	assert_true(t->fp.tx_calls >= 1);
	assert_int_equal(nt_total_drops(t), 0);
	assert_int_equal(t->nif.txq_len, 6); /* waiting, in order */
	t->fp.accept = 64;
	assert_int_equal(nt_flush(t), 6);
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(nt_marker(nt_tx(t, i)), i);
	assert_int_equal(netif_counter(&t->nif, "tx_frames"), 6);
	assert_int_equal(t->nif.txq_len, 0);
	nt_clear_tx(t);
	/* A ring that never drains: beyond NETIF_TXQ frames, drops are counted. */
	t->fp.accept = 0;
	for (unsigned i = 0; i < NETIF_TXQ + 5; i++)
		nt_send_marked(t, PEER_IP, i);
	assert_int_equal(t->nif.txq_len, NETIF_TXQ);
	assert_int_equal(nt_drops(t, LUNAR_DROP_TX_RING_FULL), 5);
	netif_fini(&t->nif);
	assert_int_equal(test_pool_in_use(nt_pool), 0);
}

/*
 * A ring that takes one frame per call: each flush sends what it can, in
 * order; the rest waits for the next flush and nothing is dropped.
 */
static void test_tx_ring_partial(void **state)
{
	struct nt *t = *state;
	unsigned sent = 0;

	nt_learn(t, PEER_IP, &peer_mac);
	t->fp.accept = 1;
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(nt_send_marked(t, PEER_IP, i), 0);
	for (int round = 0; round < 20 && sent < 10; round++)
		sent = nt_flush(t); /* frames the port has taken so far */
	assert_int_equal(sent, 10);
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(nt_marker(nt_tx(t, i)), i);
	assert_int_equal(nt_total_drops(t), 0);
	assert_int_equal(netif_counter(&t->nif, "tx_frames"), 10);
	nt_clear_tx(t);
	assert_int_equal(test_pool_in_use(nt_pool), 0);
}

/*
 * RFC 1122 3.3.3 (no fragmentation by lunar) / netif.h: oversized packets are
 * the caller's mistake: -EMSGSIZE, no drop counted, no leak.
 */
static void test_ipv4_output_too_big(void **state)
{
	struct nt *t = *state;
	struct rte_mbuf *m = rte_pktmbuf_alloc(nt_pool);

	assert_non_null(m);
	assert_non_null(rte_pktmbuf_append(m, 1481));
	nt_learn(t, PEER_IP, &peer_mac);
	assert_int_equal(netif_ipv4_output(&t->nif, m, PEER_IP, 253, 0), -EMSGSIZE);
	/* Counted, not silent: a layer above that overflows the MTU shows up. */
	assert_int_equal(nt_total_drops(t), 1);
	assert_int_equal(netif_counter(&t->nif, "IP_TOO_BIG"), 1);
	assert_int_equal(nt_flush(t), 0);
}

/*
 * A TSO packet (RTE_MBUF_F_TX_TCP_SEG) is larger than the MTU by design:
 * the port cuts it into MTU-sized segments, so netif queues it with the
 * header lengths the offload needs, and counts no drop.
 */
static void test_ipv4_output_tso_not_too_big(void **state)
{
	struct nt *t = *state;
	struct rte_mbuf *m = rte_pktmbuf_alloc(nt_pool), *out;

	assert_non_null(m);
	assert_non_null(rte_pktmbuf_append(m, 1481));
	m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
	nt_learn(t, PEER_IP, &peer_mac);
	assert_int_equal(netif_ipv4_output(&t->nif, m, PEER_IP, IPPROTO_TCP, 0), 0);
	assert_int_equal(nt_total_drops(t), 0);
	assert_int_equal(nt_flush(t), 1);
	out = nt_tx(t, 0);
	assert_int_equal(rte_pktmbuf_pkt_len(out), 14 + 20 + 1481);
	assert_true(out->ol_flags & RTE_MBUF_F_TX_IPV4);
	assert_int_equal(out->l2_len, RTE_ETHER_HDR_LEN);
	assert_int_equal(out->l3_len, 20);
	nt_clear_tx(t);
}

/*
 * RFC 1122 3.3.1.2 in kernel neighbour mode: an off-link destination makes
 * lunar ask the kernel to resolve the gateway, not the destination.
 */
static void test_kernel_mode_asks_for_gateway(void **state)
{
	struct nt *t = *state;
	struct netif_config cfg = nt_config(t, NEIGH_MODE_KERNEL);

	cfg.gateway = GW_IP;
	nt_reinit(t, &cfg);
	assert_int_equal(nt_send_marked(t, REMOTE_IP, 0), 0);
	assert_int_equal(t->kernel_asks, 1);
	assert_int_equal(t->last_ask_ip, GW_IP);
	assert_int_equal(nt_flush(t), 0);
	netif_neigh_update(&t->nif, GW_IP, &gw_mac, true);
	assert_int_equal(nt_flush(t), 1);
	assert_int_equal(nt_marker(nt_tx(t, 0)), 0);
	nt_clear_tx(t);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, nt_setup, nt_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_on_link_next_hop),
	    T(test_gateway_next_hop),
	    T(test_longest_prefix),
	    T(test_same_address_other_length),
	    T(test_longer_prefix_subnet),
	    T(test_init_prefix_len_bounds),
	    T(test_route_table_full),
	    T(test_no_route),
	    T(test_broadcast_destination),
	    T(test_slash31_peer_is_unicast),
	    T(test_batch_and_flush),
	    T(test_tx_ring_full),
	    T(test_tx_ring_partial),
	    T(test_ipv4_output_too_big),
	    T(test_ipv4_output_tso_not_too_big),
	    T(test_kernel_mode_asks_for_gateway),
	};
#undef T

	return cmocka_run_group_tests_name("net/route", tests, nt_group_setup, nt_group_teardown);
}
