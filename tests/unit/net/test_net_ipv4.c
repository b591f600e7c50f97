/*
 * test_net_ipv4.c - Ethernet and IPv4 receive checks in net/netif.c:
 * frames not for us, unknown EtherTypes, and one frame per malformed IPv4
 * header class (RFC 791 3.1, RFC 1122 3.2.1), each dropped with its own
 * reason and nothing sent; plus the things that must be accepted (valid
 * options, Ethernet padding, checksums the port verified).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net_test.h"

static const uint8_t echo_data[16] = "0123456789abcdef";

/* Echo request bytes (IPv4 + ICMP) from PEER to @dst; @return the length. */
static size_t echo_packet(uint8_t *b, uint32_t src, uint32_t dst)
{
	uint8_t icmp[64];
	size_t n =
	    nt_icmp_bytes(icmp, RTE_IP_ICMP_ECHO_REQUEST, 0, 1, 1, echo_data, sizeof(echo_data));

	return nt_ipv4_bytes(b, src, dst, IPPROTO_ICMP, icmp, n);
}

/* Receive @len bytes of IPv4 @b from the (known) peer at time 1. */
static void rx_ip(struct nt *t, const uint8_t *b, size_t len)
{
	nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, len), 1);
}

/* Exactly one drop, for @reason; nothing transmitted, nothing delivered. */
static void assert_only_drop(struct nt *t, enum lunar_drop reason)
{
	assert_int_equal(nt_drops(t, reason), 1);
	assert_int_equal(nt_total_drops(t), 1);
	assert_int_equal(nt_flush(t), 0);
}

static int setup(void **state)
{
	int rc = nt_setup(state);

	if (rc == 0)
		nt_learn(*state, PEER_IP, &peer_mac);
	return rc;
}

/* Control (RFC 792 echo): the unmodified packet is accepted and answered. */
static void test_valid_echo_answered(void **state)
{
	struct nt *t = *state;
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, OUR_IP);

	rx_ip(t, b, n);
	assert_int_equal(nt_total_drops(t), 0);
	assert_int_equal(netif_counter(&t->nif, "rx_ipv4"), 1);
	assert_int_equal(nt_flush(t), 1);
	nt_clear_tx(t);
}

/*
 * RFC 894 / RFC 1122 2.4: frames for another unicast MAC, or for a multicast
 * MAC we did not join, are not ours.
 */
static void test_eth_not_for_us(void **state)
{
	static const struct rte_ether_addr mcast = {{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}};
	struct nt *t = *state;
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, OUR_IP);

	nt_rx(t, nt_frame(&other_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), 1);
	assert_only_drop(t, LUNAR_DROP_ETH_NOT_FOR_US);
	nt_rx(t, nt_frame(&mcast, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ETH_NOT_FOR_US), 2);
	assert_int_equal(netif_counter(&t->nif, "rx_frames"), 2);
	assert_int_equal(netif_counter(&t->nif, "rx_ipv4"), 0);
}

/* RFC 894 / RFC 826: EtherTypes other than IPv4 and ARP (here IPv6): ETH_UNKNOWN_TYPE. */
static void test_eth_unknown_type(void **state)
{
	struct nt *t = *state;
	uint8_t b[40] = {0x60};

	nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV6, b, sizeof(b)), 1);
	assert_only_drop(t, LUNAR_DROP_ETH_UNKNOWN_TYPE);
}

/* RFC 894 framing: shorter than an Ethernet header; IEEE 802.1Q tags (unsupported). */
static void test_eth_short_and_vlan(void **state)
{
	struct nt *t = *state;
	uint8_t raw[10] = {0};
	uint8_t tag[4] = {0x00, 0x05, 0x08, 0x00};

	nt_rx(t, test_mbuf(nt_pool, raw, sizeof(raw)), 1);
	assert_only_drop(t, LUNAR_DROP_ETH_SHORT);
	/* By name too (the first reason after NONE, as the ctl's counters read it). */
	assert_int_equal(netif_counter(&t->nif, "ETH_SHORT"), 1);
	nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_VLAN, tag, sizeof(tag)), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ETH_VLAN), 1);
	assert_int_equal(nt_total_drops(t), 2);
}

/* RFC 1122 3.2.1.3: a host silently discards datagrams not addressed to it. */
static void test_ip_not_for_us(void **state)
{
	struct nt *t = *state;
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, IP4(10, 0, 0, 77));

	rx_ip(t, b, n);
	assert_only_drop(t, LUNAR_DROP_IP_NOT_FOR_US);
	assert_int_equal(netif_counter(&t->nif, "rx_ipv4"), 0);
}

/* RFC 1122 3.2.1.1: version other than 4 is silently discarded. */
static void test_ip_bad_version(void **state)
{
	struct nt *t = *state;
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, OUR_IP);

	b[0] = 0x65;
	nt_ipv4_fix_csum(b);
	b[0] = 0x65;
	rx_ip(t, b, n);
	assert_only_drop(t, LUNAR_DROP_IP_BAD_VERSION);
}

/* RFC 791 3.1: IHL is at least 5; and the header cannot run past the packet. */
static void test_ip_bad_ihl(void **state)
{
	struct nt *t = *state;
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, OUR_IP);

	b[0] = 0x44;
	rx_ip(t, b, n);
	assert_only_drop(t, LUNAR_DROP_IP_BAD_IHL);

	n = echo_packet(b, PEER_IP, OUR_IP); /* 44 bytes: IHL 15 (60) runs past it */
	b[0] = 0x4f;
	rx_ip(t, b, n);
	assert_int_equal(nt_drops(t, LUNAR_DROP_IP_BAD_IHL), 2);
	assert_int_equal(nt_total_drops(t), 2);
	assert_int_equal(nt_flush(t), 0);
}

/* RFC 791 3.1: total length covers the header and cannot exceed what arrived. */
static void test_ip_bad_total_len(void **state)
{
	struct nt *t = *state;
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, OUR_IP);
	struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)b;

	h->total_length = rte_cpu_to_be_16(19);
	nt_ipv4_fix_csum(b);
	rx_ip(t, b, n);
	assert_only_drop(t, LUNAR_DROP_IP_BAD_TOTAL_LEN);

	n = echo_packet(b, PEER_IP, OUR_IP);
	h->total_length = rte_cpu_to_be_16((uint16_t)(n + 1));
	nt_ipv4_fix_csum(b);
	rx_ip(t, b, n);
	assert_int_equal(nt_drops(t, LUNAR_DROP_IP_BAD_TOTAL_LEN), 2);
	assert_int_equal(nt_total_drops(t), 2);
}

/* RFC 1122 3.2.1.2: a host MUST verify the header checksum and discard on failure. */
static void test_ip_bad_checksum(void **state)
{
	struct nt *t = *state;
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, OUR_IP);

	b[10] ^= 0x01;
	rx_ip(t, b, n);
	assert_only_drop(t, LUNAR_DROP_IP_BAD_CHECKSUM);
}

/* RFC 791 3.2: MF set or a non-zero offset is a fragment; lunar does not reassemble. */
static void test_ip_fragment(void **state)
{
	struct nt *t = *state;
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, OUR_IP);
	struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)b;

	h->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG);
	nt_ipv4_fix_csum(b);
	rx_ip(t, b, n);
	assert_only_drop(t, LUNAR_DROP_IP_FRAGMENT);

	n = echo_packet(b, PEER_IP, OUR_IP);
	h->fragment_offset = rte_cpu_to_be_16(185); /* last fragment, offset 1480 */
	nt_ipv4_fix_csum(b);
	rx_ip(t, b, n);
	assert_int_equal(nt_drops(t, LUNAR_DROP_IP_FRAGMENT), 2);
	assert_int_equal(nt_total_drops(t), 2);
}

/*
 * RFC 1122 3.2.1.3: a host MUST silently discard a datagram whose source is
 * a broadcast, multicast (class D) or loopback address. Also (Linux's
 * martians) our own address, a spoof whose reply would ARP for ourselves,
 * and 0.0.0.0 to a unicast address, whose reply would go to 0.0.0.0,
 * which (a) forbids as a destination; nothing is answered.
 */
static void test_ip_bad_source(void **state)
{
	static const uint32_t bad[] = {
	    IP4(224, 0, 0, 5), IP4(127, 0, 0, 1), IP4(255, 255, 255, 255), OUR_IP, 0, SUBNET_BCAST};
	struct nt *t = *state;
	uint8_t b[128];

	for (unsigned i = 0; i < 6; i++) {
		size_t n = echo_packet(b, bad[i], OUR_IP);

		rx_ip(t, b, n);
		assert_int_equal(nt_drops(t, LUNAR_DROP_IP_BAD_SRC), i + 1);
	}
	assert_int_equal(nt_total_drops(t), 6); /* the subnet's broadcast too: 3.2.1.3 (d) */
	assert_int_equal(nt_flush(t), 0);
}

/*
 * RFC 1122 3.3.6: a datagram that arrived in a link-layer broadcast but
 * is not addressed to an IP broadcast address MUST be silently
 * discarded: an echo to our unicast address in a broadcast frame is
 * dropped IP_LINK_BCAST, not answered.
 */
static void test_ip_link_broadcast_unicast_dst(void **state)
{
	struct nt *t = *state;
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, OUR_IP);

	nt_rx(t, nt_frame(&bcast_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), 1);
	assert_only_drop(t, LUNAR_DROP_IP_LINK_BCAST);
	assert_int_equal(netif_counter(&t->nif, "tx_icmp_echo_reply"), 0);
}

/*
 * The pool is sized for the MTU, so only an oversized frame arrives as an
 * mbuf chain; netif parses one segment and drops a chain ETH_CHAINED
 * (a valid echo split over two segments is not answered).
 */
static void test_eth_chained_dropped(void **state)
{
	struct nt *t = *state;
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, OUR_IP);
	struct rte_mbuf *m = nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n);
	struct rte_mbuf *tail = rte_pktmbuf_alloc(nt_pool);

	assert_non_null(tail);
	assert_non_null(rte_pktmbuf_append(tail, 4));
	assert_int_equal(rte_pktmbuf_chain(m, tail), 0);
	nt_rx(t, m, 1);
	assert_only_drop(t, LUNAR_DROP_ETH_CHAINED);
	assert_int_equal(test_pool_in_use(nt_pool), 0);
}

/* Echo packet with a 4-byte option area holding @opt (IHL 6). */
static size_t echo_with_options(uint8_t *b, const uint8_t opt[4])
{
	uint8_t plain[128];
	size_t n = echo_packet(plain, PEER_IP, OUR_IP);
	struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)b;

	memcpy(b, plain, IPV4_HDR_LEN);
	memcpy(b + IPV4_HDR_LEN, opt, 4);
	memcpy(b + IPV4_HDR_LEN + 4, plain + IPV4_HDR_LEN, n - IPV4_HDR_LEN);
	h->version_ihl = 0x46;
	h->total_length = rte_cpu_to_be_16((uint16_t)(n + 4));
	nt_ipv4_fix_csum(b);
	return n + 4;
}

/*
 * RFC 1122 3.2.1.8: malformed options (an option length below 2, or one
 * running past the header) are dropped IP_BAD_OPTIONS; well-formed options,
 * even ones lunar does not act on, are accepted.
 */
static void test_ip_options(void **state)
{
	static const uint8_t short_len[4] = {IPV4_OPT_TYPE_RR, 1, 0, 0};
	static const uint8_t too_long[4] = {IPV4_OPT_TYPE_TS, 8, 5, 0};
	static const uint8_t nops[4] = {IPV4_OPT_TYPE_NOP, IPV4_OPT_TYPE_NOP, IPV4_OPT_TYPE_NOP,
					IPV4_OPT_TYPE_EOL};
	static const uint8_t ra[4] = {IPV4_OPT_TYPE_RA, 4, 0, 0};
	struct nt *t = *state;
	uint8_t b[128];
	size_t n;

	n = echo_with_options(b, short_len);
	rx_ip(t, b, n);
	assert_only_drop(t, LUNAR_DROP_IP_BAD_OPTIONS);
	n = echo_with_options(b, too_long);
	rx_ip(t, b, n);
	assert_int_equal(nt_drops(t, LUNAR_DROP_IP_BAD_OPTIONS), 2);

	n = echo_with_options(b, nops);
	rx_ip(t, b, n);
	n = echo_with_options(b, ra);
	rx_ip(t, b, n);
	assert_int_equal(nt_total_drops(t), 2);
	assert_int_equal(nt_flush(t), 2); /* both answered */
	nt_clear_tx(t);
}

/*
 * A source route (a completed LSRR, an SSRR) asks for the answer to go
 * back along it, which lunar does not do: dropped, as Linux's
 * accept_source_route=0, not answered directly.
 */
static void test_ip_source_route(void **state)
{
	static const uint8_t lsrr[4] = {IPV4_OPT_TYPE_LSRR, 3, 4, IPV4_OPT_TYPE_EOL};
	static const uint8_t ssrr[4] = {IPV4_OPT_TYPE_SSRR, 3, 4, IPV4_OPT_TYPE_EOL};
	struct nt *t = *state;
	uint8_t b[128];
	size_t n;

	n = echo_with_options(b, lsrr);
	rx_ip(t, b, n);
	assert_only_drop(t, LUNAR_DROP_IP_SOURCE_ROUTE);
	n = echo_with_options(b, ssrr);
	rx_ip(t, b, n);
	assert_int_equal(nt_drops(t, LUNAR_DROP_IP_SOURCE_ROUTE), 2);
	assert_int_equal(nt_flush(t), 0);
}

/* RFC 791 3.1: shorter than the 20-byte minimum header. */
static void test_ip_short(void **state)
{
	struct nt *t = *state;
	uint8_t b[128];

	echo_packet(b, PEER_IP, OUR_IP);
	rx_ip(t, b, 12);
	assert_only_drop(t, LUNAR_DROP_IP_SHORT);
}

/*
 * RFC 1122 3.2.1 / 3.2.2: an unsupported protocol is dropped
 * IP_UNKNOWN_PROTO, and answered with protocol unreachable (net/icmp
 * tests the error).
 */
static void test_ip_unknown_proto(void **state)
{
	struct nt *t = *state;
	struct nt_pkt p;
	uint8_t l4[8] = {1, 2, 3, 4, 5, 6, 7, 8};

	nt_rx(t, nt_mk_ip(&our_mac, &peer_mac, PEER_IP, OUR_IP, 99, l4, sizeof(l4)), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_IP_UNKNOWN_PROTO), 1);
	assert_int_equal(nt_total_drops(t), 1);
	assert_int_equal(netif_counter(&t->nif, "rx_ipv4"), 1);
	assert_int_equal(netif_counter(&t->nif, "tx_icmp_unreach"), 1);
	assert_int_equal(nt_flush(t), 1);
	nt_assert_unreachable(nt_tx(t, 0), ICMP_CODE_PROTO_UNREACH, &p);
	nt_clear_tx(t);
}

/*
 * RFC 894: Ethernet pads short frames to 60 bytes; the IPv4 total length,
 * not the frame, tells where the datagram ends.
 */
static void test_ethernet_padding_ignored(void **state)
{
	struct nt *t = *state;
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, OUR_IP);

	memset(b + n, 0xee, 30); /* trailer bytes after the datagram */
	rx_ip(t, b, n + 30);
	assert_int_equal(nt_total_drops(t), 0);
	assert_int_equal(nt_flush(t), 1);
	nt_clear_tx(t);
}

/*
 * RFC 1122 3.2.1.2 with offload (port.h PORT_OFFLOAD_RX_IPV4_CKSUM): a
 * header checksum the port marked bad is dropped IP_BAD_CHECKSUM, one it
 * marked good is not checked again in software.
 */
static void test_hw_checksum_flags(void **state)
{
	struct nt *t = *state;
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, OUR_IP);
	struct rte_mbuf *m;

	m = nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n);
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_BAD;
	nt_rx(t, m, 1);
	assert_only_drop(t, LUNAR_DROP_IP_BAD_CHECKSUM);

	b[10] ^= 0x40; /* wrong, but the port says good */
	m = nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n);
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	nt_rx(t, m, 1);
	assert_int_equal(nt_total_drops(t), 1);
	assert_int_equal(netif_counter(&t->nif, "rx_csum_hw_ok"), 1);
	assert_int_equal(nt_flush(t), 1);
	nt_clear_tx(t);
	/* NONE: no valid sum in the field, but the port verified the header. */
	m = nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n);
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_NONE;
	nt_rx(t, m, 1);
	assert_int_equal(nt_total_drops(t), 1);
	assert_int_equal(nt_flush(t), 1);
	nt_clear_tx(t);
}

/*
 * TCP (RFC 9293 3.1): until tcp/ exists, a valid segment is counted and
 * dropped TCP_NO_LISTENER; a bad checksum is dropped TCP_BAD_CHECKSUM.
 */
static void test_tcp_segments(void **state)
{
	struct nt *t = *state;
	uint8_t l4[TCP_HDR_LEN];

	nt_tcp_bytes(l4, PEER_IP, OUR_IP, 40000, 80, RTE_TCP_SYN_FLAG, NT_CSUM_OK);
	nt_rx(t, nt_mk_ip(&our_mac, &peer_mac, PEER_IP, OUR_IP, IPPROTO_TCP, l4, sizeof(l4)), 1);
	assert_only_drop(t, LUNAR_DROP_TCP_NO_LISTENER);
	assert_int_equal(netif_counter(&t->nif, "rx_tcp"), 1);

	nt_tcp_bytes(l4, PEER_IP, OUR_IP, 40000, 80, RTE_TCP_SYN_FLAG, NT_CSUM_BAD);
	nt_rx(t, nt_mk_ip(&our_mac, &peer_mac, PEER_IP, OUR_IP, IPPROTO_TCP, l4, sizeof(l4)), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_TCP_BAD_CHECKSUM), 1);
	assert_int_equal(netif_counter(&t->nif, "rx_tcp"), 1);
	assert_int_equal(nt_total_drops(t), 2);
}

/*
 * RFC 1122 4.2.3.10: TCP to a broadcast address (the subnet's or the
 * limited one) is discarded before TCP sees it: no connection has such an
 * address, and nothing answers (no RST).
 */
static void test_tcp_to_broadcast(void **state)
{
	static const uint32_t bcast[] = {SUBNET_BCAST, IP4(255, 255, 255, 255)};
	struct nt *t = *state;
	uint8_t l4[TCP_HDR_LEN];

	for (unsigned i = 0; i < 2; i++) {
		nt_tcp_bytes(l4, PEER_IP, bcast[i], 40000, 80, RTE_TCP_SYN_FLAG, NT_CSUM_OK);
		nt_rx(t,
		      nt_mk_ip(&our_mac, &peer_mac, PEER_IP, bcast[i], IPPROTO_TCP, l4, sizeof(l4)),
		      1);
		assert_int_equal(nt_drops(t, LUNAR_DROP_TCP_BROADCAST), i + 1);
	}
	assert_int_equal(netif_counter(&t->nif, "rx_tcp"), 0);
	assert_int_equal(nt_total_drops(t), 2);
	assert_int_equal(nt_flush(t), 0);
}

/* RFC 1122 3.2.1: each datagram is validated on its own; a mixed burst, each counted once. */
static void test_mixed_burst(void **state)
{
	struct nt *t = *state;
	struct rte_mbuf *burst[4];
	uint8_t b[128];
	size_t n = echo_packet(b, PEER_IP, OUR_IP);

	burst[0] = nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n);
	burst[1] = nt_frame(&other_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n);
	burst[2] = nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV6, b, n);
	burst[3] = nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n);
	netif_input(&t->nif, burst, 4, 1);
	assert_int_equal(netif_counter(&t->nif, "rx_frames"), 4);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ETH_NOT_FOR_US), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ETH_UNKNOWN_TYPE), 1);
	assert_int_equal(nt_total_drops(t), 2);
	assert_int_equal(nt_flush(t), 2);
	nt_clear_tx(t);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, nt_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_valid_echo_answered), T(test_eth_not_for_us),
	    T(test_eth_unknown_type),	 T(test_eth_short_and_vlan),
	    T(test_ip_not_for_us),	 T(test_ip_bad_version),
	    T(test_ip_bad_ihl),		 T(test_ip_bad_total_len),
	    T(test_ip_bad_checksum),	 T(test_ip_fragment),
	    T(test_ip_bad_source),	 T(test_ip_link_broadcast_unicast_dst),
	    T(test_eth_chained_dropped), T(test_ip_options),
	    T(test_ip_source_route),	 T(test_ip_short),
	    T(test_ip_unknown_proto),	 T(test_ethernet_padding_ignored),
	    T(test_hw_checksum_flags),	 T(test_tcp_segments),
	    T(test_tcp_to_broadcast),	 T(test_mixed_burst),
	};
#undef T

	return cmocka_run_group_tests_name("net/ipv4", tests, nt_group_setup, nt_group_teardown);
}
