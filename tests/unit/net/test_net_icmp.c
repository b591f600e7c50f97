/*
 * test_net_icmp.c - ICMP echo in net/netif.c (RFC 792, RFC 1122 3.2.2.6):
 * requests are answered to the sender with the same identifier, sequence
 * number and data and a correct checksum; echo to broadcast is ignored;
 * bad checksums are dropped; replies go to the registered handler;
 * netif_icmp_echo() builds a valid request. ICMP errors (RFC 1122 3.2.2.1,
 * RFC 5927) that quote our TCP reach the TCP handler; every other one is
 * dropped under a named reason; source quench is ignored (RFC 6633).
 * Port and protocol unreachable are sent (RFC 1122 3.2.2.1), never where
 * RFC 1812 4.3.2.7 forbids, within 576 bytes and a rate limit.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net_test.h"
#include "wire/icmp.h"

static const uint8_t data[] = "lunar echo payload, 32 bytes...";

static int setup(void **state)
{
	int rc = nt_setup(state);

	if (rc == 0)
		nt_learn(*state, PEER_IP, &peer_mac);
	return rc;
}

/*
 * RFC 792 Echo: "the source and destination addresses are simply reversed,
 * the type code changed to 0, and the checksum recomputed"; identifier,
 * sequence number and data are returned unchanged (RFC 1122 3.2.2.6 MUST).
 * The reply goes to the requester's MAC.
 */
static void test_echo_request_answered(void **state)
{
	struct nt *t = *state;
	struct nt_pkt p;
	const uint8_t *icmp;

	nt_rx(t,
	      nt_mk_icmp(&our_mac, &peer_mac, PEER_IP, OUR_IP, RTE_IP_ICMP_ECHO_REQUEST, 0xbeef, 42,
			 data, sizeof(data)),
	      1);
	assert_int_equal(nt_flush(t), 1);
	nt_parse(nt_tx(t, 0), &p); /* IPv4 and ICMP checksums verified */
	assert_memory_equal(&p.eth.dst, &peer_mac, 6);
	assert_memory_equal(&p.eth.src, &our_mac, 6);
	assert_int_equal(p.ip.src, OUR_IP);
	assert_int_equal(p.ip.dst, PEER_IP);
	assert_int_equal(p.ip.proto, IPPROTO_ICMP);
	assert_true(p.ip.ttl > 0);
	assert_int_equal(p.icmp.type, RTE_IP_ICMP_ECHO_REPLY);
	assert_int_equal(p.icmp.code, 0);
	assert_int_equal(p.icmp.id, 0xbeef);
	assert_int_equal(p.icmp.seq, 42);
	assert_int_equal(p.icmp.data_len, sizeof(data));
	assert_memory_equal(p.icmp.data, data, sizeof(data));
	icmp = p.ip.payload;
	assert_int_not_equal(icmp[2] | icmp[3], 0); /* a checksum was computed */
	assert_int_equal(netif_counter(&t->nif, "rx_icmp"), 1);
	assert_int_equal(netif_counter(&t->nif, "tx_icmp_echo_reply"), 1);
	assert_int_equal(nt_total_drops(t), 0);
	nt_clear_tx(t);
}

/* RFC 792: an echo with no data, and one of maximum size for the MTU. */
static void test_echo_sizes(void **state)
{
	static uint8_t big[1500 - 20 - 8];
	struct nt *t = *state;
	struct nt_pkt p;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 13);
	nt_rx(t,
	      nt_mk_icmp(&our_mac, &peer_mac, PEER_IP, OUR_IP, RTE_IP_ICMP_ECHO_REQUEST, 1, 1, NULL,
			 0),
	      1);
	nt_rx(t,
	      nt_mk_icmp(&our_mac, &peer_mac, PEER_IP, OUR_IP, RTE_IP_ICMP_ECHO_REQUEST, 1, 2, big,
			 sizeof(big)),
	      1);
	assert_int_equal(nt_flush(t), 2);
	nt_parse(nt_tx(t, 0), &p);
	assert_int_equal(p.icmp.data_len, 0);
	nt_parse(nt_tx(t, 1), &p);
	assert_int_equal(p.icmp.seq, 2);
	assert_int_equal(p.ip.total_len, 1500);
	assert_memory_equal(p.icmp.data, big, sizeof(big));
	nt_clear_tx(t);
}

/*
 * RFC 1122 2.3.2.2 with 3.2.2.6: a request from a host we have no entry
 * for is answered once its address is resolved (the reply waits, one ARP
 * request goes out).
 */
static void test_echo_from_unknown_neighbour(void **state)
{
	struct nt *t = *state;
	struct nt_pkt p;

	nt_rx(t,
	      nt_mk_icmp(&our_mac, &peer2_mac, PEER2_IP, OUR_IP, RTE_IP_ICMP_ECHO_REQUEST, 7, 8,
			 data, sizeof(data)),
	      1);
	assert_int_equal(nt_flush(t), 1);
	nt_assert_arp_request(nt_tx(t, 0), &bcast_mac, PEER2_IP);
	nt_clear_tx(t);
	nt_rx(t, nt_mk_arp(RTE_ARP_OP_REPLY, &our_mac, &peer2_mac, PEER2_IP, &our_mac, OUR_IP), 2);
	assert_int_equal(nt_flush(t), 1);
	nt_parse(nt_tx(t, 0), &p);
	assert_memory_equal(&p.eth.dst, &peer2_mac, 6);
	assert_int_equal(p.icmp.type, RTE_IP_ICMP_ECHO_REPLY);
	assert_int_equal(p.icmp.id, 7);
	assert_int_equal(p.icmp.seq, 8);
	nt_clear_tx(t);
}

/*
 * RFC 1122 3.2.2.6: "An ICMP Echo Request destined to an IP broadcast or IP
 * multicast address MAY be silently discarded" - lunar does, both the
 * limited (255.255.255.255) and the subnet-directed broadcast.
 */
static void test_echo_to_broadcast_dropped(void **state)
{
	struct nt *t = *state;

	nt_rx(t,
	      nt_mk_icmp(&bcast_mac, &peer_mac, PEER_IP, IP4(255, 255, 255, 255),
			 RTE_IP_ICMP_ECHO_REQUEST, 1, 1, data, sizeof(data)),
	      1);
	nt_rx(t,
	      nt_mk_icmp(&bcast_mac, &peer_mac, PEER_IP, SUBNET_BCAST, RTE_IP_ICMP_ECHO_REQUEST, 1,
			 2, data, sizeof(data)),
	      1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_BROADCAST_ECHO), 2);
	assert_int_equal(nt_total_drops(t), 2);
	assert_int_equal(nt_flush(t), 0);
}

/* RFC 1122 3.2.2: a message with a bad ICMP checksum is discarded. */
static void test_bad_icmp_checksum(void **state)
{
	struct nt *t = *state;
	uint8_t icmp[64];
	size_t n = nt_icmp_bytes(icmp, RTE_IP_ICMP_ECHO_REQUEST, 0, 1, 1, data, sizeof(data));

	icmp[ICMP_HDR_LEN + 3] ^= 0x10; /* data changed after the checksum */
	nt_rx(t, nt_mk_ip(&our_mac, &peer_mac, PEER_IP, OUR_IP, IPPROTO_ICMP, icmp, n), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_BAD_CHECKSUM), 1);
	nt_rx(t, nt_mk_ip(&our_mac, &peer_mac, PEER_IP, OUR_IP, IPPROTO_ICMP, icmp, 5), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_SHORT), 1);
	assert_int_equal(nt_total_drops(t), 2);
	assert_int_equal(nt_flush(t), 0);
}

/*
 * RFC 1122 3.2.2: types a host does not act on are silently discarded
 * (here timestamp, 13); and an echo request with a non-zero code.
 */
static void test_unhandled_types(void **state)
{
	struct nt *t = *state;
	uint8_t icmp[64];
	size_t n;

	nt_rx(t, nt_mk_icmp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 13, 1, 1, data, 12), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_UNHANDLED_TYPE), 1);
	n = nt_icmp_bytes(icmp, RTE_IP_ICMP_ECHO_REQUEST, 1, 1, 1, data, sizeof(data));
	nt_rx(t, nt_mk_ip(&our_mac, &peer_mac, PEER_IP, OUR_IP, IPPROTO_ICMP, icmp, n), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_UNHANDLED_TYPE), 2);
	assert_int_equal(nt_flush(t), 0);
}

struct echo_seen {
	unsigned calls;
	uint32_t src;
	uint16_t id, seq;
	size_t len;
	uint8_t data[64];
	uint64_t now;
};

static void on_echo(void *ctx, uint32_t src, uint16_t id, uint16_t seq, const uint8_t *d,
		    size_t len, uint64_t now_ns)
{
	struct echo_seen *s = ctx;

	s->calls++;
	s->src = src;
	s->id = id;
	s->seq = seq;
	s->len = len;
	memcpy(s->data, d, len < sizeof(s->data) ? len : sizeof(s->data));
	s->now = now_ns;
}

/* RFC 792 Echo Reply: handed to the registered handler with id, seq and data. */
static void test_echo_reply_handler(void **state)
{
	struct nt *t = *state;
	struct echo_seen s = {0};

	/* Without a handler: counted, freed. */
	nt_rx(t,
	      nt_mk_icmp(&our_mac, &peer_mac, PEER_IP, OUR_IP, RTE_IP_ICMP_ECHO_REPLY, 3, 4, data,
			 sizeof(data)),
	      5);
	assert_int_equal(netif_counter(&t->nif, "rx_icmp_echo_reply"), 1);

	netif_set_echo_handler(&t->nif, on_echo, &s);
	nt_rx(t,
	      nt_mk_icmp(&our_mac, &peer_mac, PEER_IP, OUR_IP, RTE_IP_ICMP_ECHO_REPLY, 0x1234,
			 0x5678, data, sizeof(data)),
	      777);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.src, PEER_IP);
	assert_int_equal(s.id, 0x1234);
	assert_int_equal(s.seq, 0x5678);
	assert_int_equal(s.len, sizeof(data));
	assert_memory_equal(s.data, data, sizeof(data));
	assert_int_equal(s.now, 777);
	assert_int_equal(netif_counter(&t->nif, "rx_icmp_echo_reply"), 2);
	assert_int_equal(nt_total_drops(t), 0);
	assert_int_equal(nt_flush(t), 0);
}

/* RFC 792 Echo: netif_icmp_echo() sends a valid request with a pattern payload. */
static void test_send_echo_request(void **state)
{
	struct nt *t = *state;
	struct nt_pkt p;

	assert_int_equal(netif_icmp_echo(&t->nif, PEER_IP, 99, 3, 56), 0);
	assert_int_equal(nt_flush(t), 1);
	nt_parse(nt_tx(t, 0), &p);
	assert_memory_equal(&p.eth.dst, &peer_mac, 6);
	assert_int_equal(p.ip.dst, PEER_IP);
	assert_int_equal(p.icmp.type, RTE_IP_ICMP_ECHO_REQUEST);
	assert_int_equal(p.icmp.code, 0);
	assert_int_equal(p.icmp.id, 99);
	assert_int_equal(p.icmp.seq, 3);
	assert_int_equal(p.icmp.data_len, 56);
	for (unsigned i = 0; i < 56; i++)
		assert_int_equal(p.icmp.data[i], (uint8_t)i);
	assert_int_equal(netif_counter(&t->nif, "tx_icmp_echo_request"), 1);
	nt_clear_tx(t);

	/* Over the MTU: refused, nothing leaks. */
	assert_int_equal(netif_icmp_echo(&t->nif, PEER_IP, 99, 4, 1500), -EMSGSIZE);
	assert_int_equal(nt_flush(t), 0);
}

/*
 * On a /32 interface there is no directed broadcast (RFC 3021 discusses
 * /31; a /32 has no other host address at all), so an echo to our own
 * address is an ordinary unicast echo and must be answered (RFC 1122
 * 3.2.2.6 MUST). (Known to fail: netif.c computes the directed broadcast
 * as ip | ~netmask, which for a /32 is our own address, so the request is
 * dropped ICMP_BROADCAST_ECHO.)
 */
static void test_echo_on_slash32(void **state)
{
	struct nt *t = *state;
	struct netif_config cfg = nt_config(t, NEIGH_MODE_ARP);

	cfg.prefix_len = 32;
	cfg.gateway = GW_IP;
	nt_reinit(t, &cfg);
	assert_int_equal(netif_route_add(&t->nif, GW_IP, 32, 0), 0);
	nt_learn(t, GW_IP, &gw_mac);
	nt_rx(t,
	      nt_mk_icmp(&our_mac, &gw_mac, IP4(192, 168, 7, 7), OUR_IP, RTE_IP_ICMP_ECHO_REQUEST,
			 1, 1, data, sizeof(data)),
	      1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_BROADCAST_ECHO), 0);
	assert_int_equal(nt_flush(t), 1);
	nt_clear_tx(t);
}

/* ---- errors: handed to TCP or dropped with a reason ---- */

struct tcp_icmp_seen {
	unsigned calls;
	struct icmp_quote q;
	enum lunar_drop verdict; /* what the handler answers */
};

static enum lunar_drop on_tcp_icmp(void *ctx, const struct icmp_quote *q)
{
	struct tcp_icmp_seen *s = ctx;

	s->calls++;
	s->q = *q;
	return s->verdict;
}

/* Stand in for the TCP stack's handler (NULL: no TCP, as before). */
static void handle_tcp_icmp(struct nt *t, struct tcp_icmp_seen *seen)
{
	t->nif.tcp_icmp_fn = seen ? on_tcp_icmp : NULL;
	t->nif.tcp_ctx = seen;
}

/*
 * An error of @type/@code (word 2's low half @mtu) from a router, quoting
 * @quote_len bytes of a datagram @src -> @dst of protocol @proto whose
 * transport header starts 61440, 80, sequence number 0x01020304.
 */
static struct rte_mbuf *mk_error(uint8_t type, uint8_t code, uint16_t mtu, uint32_t src,
				 uint8_t proto, size_t quote_len)
{
	static const uint8_t l4[8] = {0xf0, 0x00, 0x00, 80, 1, 2, 3, 4};
	uint8_t quote[28], icmp[64];
	size_t n;

	nt_ipv4_bytes(quote, src, PEER_IP, proto, l4, sizeof(l4));
	n = nt_icmp_bytes(icmp, type, code, 0, mtu, quote, quote_len);
	return nt_mk_ip(&our_mac, &peer_mac, IP4(10, 0, 0, 254), OUR_IP, IPPROTO_ICMP, icmp, n);
}

/* RFC 5927 / RFC 1191: the quote reaches TCP's handler, which decides. */
static void test_error_to_tcp_handler(void **state)
{
	struct nt *t = *state;
	struct tcp_icmp_seen seen = {.verdict = LUNAR_DROP_NONE};

	handle_tcp_icmp(t, &seen);
	nt_rx(t, mk_error(3, 4, 1280, OUR_IP, IPPROTO_TCP, 28), 1);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.q.type, 3);
	assert_int_equal(seen.q.code, 4);
	assert_int_equal(seen.q.mtu, 1280);
	assert_int_equal(seen.q.src, OUR_IP);
	assert_int_equal(seen.q.dst, PEER_IP);
	assert_int_equal(seen.q.sport, 61440);
	assert_int_equal(seen.q.dport, 80);
	assert_int_equal(seen.q.seq, 0x01020304);
	assert_int_equal(netif_counter(&t->nif, "rx_icmp_error_tcp"), 1);
	assert_int_equal(nt_total_drops(t), 0);
	/* What the handler refuses is counted under its reason. */
	seen.verdict = LUNAR_DROP_TCP_ICMP_OUT_OF_WINDOW;
	nt_rx(t, mk_error(11, 0, 0, OUR_IP, IPPROTO_TCP, 28), 2);
	assert_int_equal(seen.calls, 2);
	assert_int_equal(nt_drops(t, LUNAR_DROP_TCP_ICMP_OUT_OF_WINDOW), 1);
	assert_int_equal(nt_flush(t), 0); /* an error is never answered (RFC 1122 3.2.2) */
	handle_tcp_icmp(t, NULL);
}

/*
 * An error sent to a broadcast address (the subnet's, or all ones) is
 * about none of our unicast datagrams: a forgery, dropped before TCP sees
 * it (as Linux's icmp_rcv()).
 */
static void test_error_to_broadcast_dropped(void **state)
{
	static const uint8_t l4[8] = {0xf0, 0x00, 0x00, 80, 1, 2, 3, 4};
	static const uint32_t to[2] = {SUBNET_BCAST, IP4(255, 255, 255, 255)};
	struct nt *t = *state;
	struct tcp_icmp_seen seen = {.verdict = LUNAR_DROP_NONE};
	uint8_t quote[28], icmp[64];
	size_t n;

	handle_tcp_icmp(t, &seen);
	nt_ipv4_bytes(quote, OUR_IP, PEER_IP, IPPROTO_TCP, l4, sizeof(l4));
	n = nt_icmp_bytes(icmp, 3, 4, 0, 1280, quote, sizeof(quote));
	for (unsigned i = 0; i < 2; i++)
		nt_rx(t,
		      nt_mk_ip(&bcast_mac, &peer_mac, IP4(10, 0, 0, 254), to[i], IPPROTO_ICMP, icmp,
			       n),
		      1);
	assert_int_equal(seen.calls, 0);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_ERROR_BROADCAST), 2);
	assert_int_equal(nt_total_drops(t), 2);
	handle_tcp_icmp(t, NULL);
}

/* Without a TCP stack an error quoting TCP has no connection to reach. */
static void test_error_without_tcp(void **state)
{
	struct nt *t = *state;

	nt_rx(t, mk_error(3, 3, 0, OUR_IP, IPPROTO_TCP, 28), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_TCP_ICMP_NO_CONN), 1);
	assert_int_equal(nt_total_drops(t), 1);
}

/* Bad input: each malformed or foreign error is dropped under its own reason, TCP never sees it. */
static void test_error_bad_quotes(void **state)
{
	struct nt *t = *state;
	struct tcp_icmp_seen seen = {.verdict = LUNAR_DROP_NONE};

	handle_tcp_icmp(t, &seen);
	/* RFC 792: the header and 64 bits; 27 bytes is one short. */
	nt_rx(t, mk_error(3, 4, 1280, OUR_IP, IPPROTO_TCP, 27), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_QUOTE_SHORT), 1);
	nt_rx(t, mk_error(12, 0, 0, OUR_IP, IPPROTO_TCP, 0), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_QUOTE_SHORT), 2);
	/* A datagram some other host sent. */
	nt_rx(t, mk_error(3, 3, 0, PEER_IP, IPPROTO_TCP, 28), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_QUOTE_NOT_OURS), 1);
	/* Our UDP: no error reporting there. */
	nt_rx(t, mk_error(3, 3, 0, OUR_IP, IPPROTO_UDP, 28), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_QUOTE_NOT_TCP), 1);
	/* RFC 6633 2: source quench is ignored, whatever it quotes. */
	nt_rx(t, mk_error(4, 0, 0, OUR_IP, IPPROTO_TCP, 28), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_SOURCE_QUENCH), 1);
	/* Redirect (5) is not acted on (RFC 1122 3.2.2.2 leaves it to routing; lunar has none). */
	nt_rx(t, mk_error(5, 1, 0, OUR_IP, IPPROTO_TCP, 28), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_ICMP_UNHANDLED_TYPE), 1);
	assert_int_equal(nt_total_drops(t), 6);
	assert_int_equal(seen.calls, 0);
	assert_int_equal(netif_counter(&t->nif, "rx_icmp_error_tcp"), 0);
	assert_int_equal(nt_flush(t), 0);
	handle_tcp_icmp(t, NULL);
}

/*
 * Assert @m is a destination unreachable of @code from us to the peer,
 * quoting the first @quote_len bytes of the IPv4 datagram @orig.
 */
static void assert_unreachable(struct rte_mbuf *m, uint8_t code, const uint8_t *orig,
			       size_t quote_len)
{
	struct nt_pkt p;

	nt_assert_unreachable(m, code, &p);
	assert_int_equal(p.icmp.data_len, quote_len);
	assert_memory_equal(p.icmp.data, orig, quote_len);
}

/* An IPv4 datagram in @b: UDP from the peer's port 5555 to @dst port 7001 (nothing bound). */
static size_t udp_datagram(uint8_t *b, uint32_t dst, const void *payload, size_t len)
{
	uint8_t u[1500];
	size_t n = nt_udp_bytes(u, PEER_IP, dst, 5555, 7001, payload, len, NT_CSUM_OK);

	return nt_ipv4_bytes(b, PEER_IP, dst, IPPROTO_UDP, u, n);
}

/*
 * RFC 1122 3.2.2.1: port unreachable SHOULD be sent for a datagram no
 * socket takes (4.1.3.1), quoting its IP header and data (RFC 792: at
 * least 8 bytes; lunar all of it up to 576 bytes in all, RFC 1812 4.3.2.3).
 * The datagram is still dropped under its reason.
 */
static void test_port_unreachable(void **state)
{
	struct nt *t = *state;
	uint8_t b[1500];
	size_t n;

	n = udp_datagram(b, OUR_IP, data, sizeof(data));
	nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_UDP_NO_LISTENER), 1);
	assert_int_equal(nt_total_drops(t), 1);
	assert_int_equal(nt_flush(t), 1);
	assert_unreachable(nt_tx(t, 0), ICMP_CODE_PORT_UNREACH, b, n);
	assert_int_equal(netif_counter(&t->nif, "tx_icmp_unreach"), 1);
	nt_clear_tx(t);
}

/* RFC 1122 3.2.2.1: protocol unreachable for a protocol lunar does not handle. */
static void test_protocol_unreachable(void **state)
{
	struct nt *t = *state;
	uint8_t l4[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint8_t b[64];
	size_t n = nt_ipv4_bytes(b, PEER_IP, OUR_IP, 99, l4, sizeof(l4));

	nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_IP_UNKNOWN_PROTO), 1);
	assert_int_equal(nt_flush(t), 1);
	assert_unreachable(nt_tx(t, 0), ICMP_CODE_PROTO_UNREACH, b, n);
	nt_clear_tx(t);
}

/* RFC 1812 4.3.2.3: the quote stops where the error would pass 576 bytes. */
static void test_unreachable_quote_capped(void **state)
{
	struct nt *t = *state;
	static const uint8_t big[1000];
	uint8_t b[1500];
	size_t n = udp_datagram(b, OUR_IP, big, sizeof(big));

	nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), 1);
	assert_int_equal(nt_flush(t), 1);
	assert_int_equal(rte_pktmbuf_pkt_len(nt_tx(t, 0)), 14 + 576);
	assert_unreachable(nt_tx(t, 0), ICMP_CODE_PORT_UNREACH, b, 576 - 28);
	nt_clear_tx(t);
}

/*
 * RFC 1122 3.2.2 and RFC 1812 4.3.2.7: no error for a datagram to a
 * broadcast address or from an address that is not one host's (here: the
 * unspecified address, class E and our own; ipv4_parse() refuses loopback
 * and multicast sources before), and none to a source not yet resolved
 * (10.0.0.3: no entry for it to fill the neighbour table with).
 */
static void test_no_unreachable_for_broadcast_or_bad_source(void **state)
{
	static const uint32_t srcs[] = {0, IP4(240, 0, 0, 1), OUR_IP, IP4(10, 0, 0, 3)};
	struct nt *t = *state;
	uint8_t b[1500];
	size_t n;

	n = udp_datagram(b, SUBNET_BCAST, data, 8);
	nt_rx(t, nt_frame(&bcast_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), 1);
	n = nt_ipv4_bytes(b, PEER_IP, 0xffffffffu, 99, data, 8);
	nt_rx(t, nt_frame(&bcast_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), 1);
	for (unsigned i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		n = nt_ipv4_bytes(b, srcs[i], OUR_IP, 99, data, 8);
		nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), 1);
	}
	assert_int_equal(nt_total_drops(t), 6);
	assert_int_equal(nt_flush(t), 0);
	assert_int_equal(netif_counter(&t->nif, "tx_icmp_unreach"), 0);
	assert_null(neigh_find(&t->nif.neigh, IP4(10, 0, 0, 3)));
}

/*
 * RFC 1122 2.3.2.1: a stale neighbour is still used (and asked again by
 * unicast), so an error to it goes like any packet: its ARP refresh first,
 * then the protocol unreachable.
 */
static void test_unreachable_to_stale_neighbour(void **state)
{
	struct nt *t = *state;
	struct neigh_entry *e = neigh_find(&t->nif.neigh, PEER_IP);
	uint8_t l4[8] = {0};
	uint8_t b[64];
	size_t n = nt_ipv4_bytes(b, PEER_IP, OUR_IP, 99, l4, sizeof(l4));
	struct nt_pkt p;

	assert_non_null(e);
	netif_timers(&t->nif, T_REACHABLE);
	assert_int_equal(e->state, NEIGH_STALE);
	nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), T_REACHABLE + 1);
	assert_int_equal(netif_counter(&t->nif, "tx_icmp_unreach"), 1);
	assert_int_equal(nt_flush(t), 2);
	nt_assert_arp_request(nt_tx(t, 0), &peer_mac, PEER_IP);
	nt_assert_unreachable(nt_tx(t, 1), ICMP_CODE_PROTO_UNREACH, &p);
	nt_clear_tx(t);
}

/*
 * RFC 1812 4.3.2.7: no error to a class E source even when its next hop
 * (the gateway) is resolved, while an off-link unicast source behind the
 * same gateway gets one: the address, not an unresolved hop, decides.
 */
static void test_no_unreachable_to_class_e_via_gateway(void **state)
{
	struct nt *t = *state;
	struct netif_config cfg = nt_config(t, NEIGH_MODE_ARP);
	uint8_t l4[8] = {0};
	uint8_t b[64];
	size_t n;

	cfg.gateway = GW_IP;
	nt_reinit(t, &cfg);
	nt_learn(t, GW_IP, &gw_mac);
	n = nt_ipv4_bytes(b, IP4(240, 0, 0, 1), OUR_IP, 99, l4, sizeof(l4));
	nt_rx(t, nt_frame(&our_mac, &gw_mac, RTE_ETHER_TYPE_IPV4, b, n), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_IP_UNKNOWN_PROTO), 1);
	assert_int_equal(nt_flush(t), 0);
	n = nt_ipv4_bytes(b, IP4(192, 0, 2, 1), OUR_IP, 99, l4, sizeof(l4));
	nt_rx(t, nt_frame(&our_mac, &gw_mac, RTE_ETHER_TYPE_IPV4, b, n), 2);
	assert_int_equal(nt_flush(t), 1);
	assert_int_equal(netif_counter(&t->nif, "tx_icmp_unreach"), 1);
	nt_clear_tx(t);
}

/* Kernel neighbour mode (af_xdp): the kernel owns the address; lunar sends no errors. */
static void test_no_unreachable_in_kernel_mode(void **state)
{
	struct nt *t = *state;
	struct netif_config cfg = nt_config(t, NEIGH_MODE_KERNEL);
	uint8_t b[64];
	size_t n = nt_ipv4_bytes(b, PEER_IP, OUR_IP, 99, data, 8);

	nt_reinit(t, &cfg);
	nt_learn(t, PEER_IP, &peer_mac);
	nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_IP_UNKNOWN_PROTO), 1);
	assert_int_equal(nt_flush(t), 0);
}

/*
 * RFC 1812 4.3.2.8 (a host SHOULD limit them too, RFC 1122 3.2.2): a
 * token bucket, 1000 a second in bursts of 50 by default, as Linux's
 * icmp_msgs_per_sec and icmp_msgs_burst; over it the datagram is still
 * dropped and the error counted as limited. Off: none at all.
 */
static void test_unreachable_rate_limited(void **state)
{
	struct nt *t = *state;
	struct netif_config cfg;
	uint8_t l4[8] = {0};
	uint8_t b[64];
	size_t n = nt_ipv4_bytes(b, PEER_IP, OUR_IP, 99, l4, sizeof(l4));
	uint64_t now = 5000000000ull;

	for (unsigned i = 0; i < 60; i++)
		nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), now);
	assert_int_equal(nt_flush(t), 50);
	assert_int_equal(netif_counter(&t->nif, "icmp_errors_limited"), 10);
	assert_int_equal(nt_drops(t, LUNAR_DROP_IP_UNKNOWN_PROTO), 60);
	nt_clear_tx(t);
	/* A clock that goes back refills nothing. */
	nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), now - 1000000000ull);
	assert_int_equal(nt_flush(t), 0);
	/* 2.5 ms: two more tokens and a half. */
	for (unsigned i = 0; i < 5; i++)
		nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), now + 2500000);
	assert_int_equal(nt_flush(t), 2);
	nt_clear_tx(t);
	/* The half token stays: 0.5 ms more makes a whole one. */
	nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), now + 3000000);
	assert_int_equal(nt_flush(t), 1);
	nt_clear_tx(t);
	/* A second later the bucket is full again, not fuller. */
	for (unsigned i = 0; i < 60; i++)
		nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n),
		      now + 2000000000ull);
	assert_int_equal(nt_flush(t), 50);
	nt_clear_tx(t);

	cfg = nt_config(t, NEIGH_MODE_ARP);
	cfg.icmp_errors_per_sec = 10;
	cfg.icmp_errors_burst = 2;
	nt_reinit(t, &cfg);
	nt_learn(t, PEER_IP, &peer_mac);
	for (unsigned i = 0; i < 4; i++)
		nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), now);
	assert_int_equal(nt_flush(t), 2);
	nt_clear_tx(t);
	nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), now + 100000000);
	assert_int_equal(nt_flush(t), 1);
	nt_clear_tx(t);

	cfg.icmp_errors_per_sec = NETIF_ICMP_ERRORS_OFF;
	nt_reinit(t, &cfg);
	nt_learn(t, PEER_IP, &peer_mac);
	nt_rx(t, nt_frame(&our_mac, &peer_mac, RTE_ETHER_TYPE_IPV4, b, n), now);
	assert_int_equal(nt_flush(t), 0);
	assert_int_equal(nt_drops(t, LUNAR_DROP_IP_UNKNOWN_PROTO), 1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, nt_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_echo_request_answered),
	    T(test_echo_sizes),
	    T(test_echo_from_unknown_neighbour),
	    T(test_echo_to_broadcast_dropped),
	    T(test_bad_icmp_checksum),
	    T(test_unhandled_types),
	    T(test_echo_reply_handler),
	    T(test_send_echo_request),
	    T(test_echo_on_slash32),
	    T(test_error_to_tcp_handler),
	    T(test_error_to_broadcast_dropped),
	    T(test_error_without_tcp),
	    T(test_error_bad_quotes),
	    T(test_port_unreachable),
	    T(test_protocol_unreachable),
	    T(test_unreachable_quote_capped),
	    T(test_no_unreachable_for_broadcast_or_bad_source),
	    T(test_unreachable_rate_limited),
	    T(test_unreachable_to_stale_neighbour),
	    T(test_no_unreachable_to_class_e_via_gateway),
	    T(test_no_unreachable_in_kernel_mode),
	};
#undef T

	return cmocka_run_group_tests_name("net/icmp", tests, nt_group_setup, nt_group_teardown);
}
