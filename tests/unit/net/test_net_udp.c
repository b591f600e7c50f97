/*
 * test_net_udp.c - UDP in net/netif.c (RFC 768, RFC 1122 4.1): delivery to
 * a bound port with the payload bytes, a callback keeping the frame,
 * no-listener (port unreachable sent) and checksum drops, the zero "no checksum" value, bind
 * rules, and netif_udp_send() producing a valid datagram.
 *
 * Note: the stack's contract is that a callback returning true owns the
 * frame and releases it with zbuf_unref(payload). The test pool is a plain
 * DPDK pool, not Zbuf memory, so these tests free the kept frame with
 * rte_pktmbuf_free() on the mbuf they injected instead.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net_test.h"
#include "wire/checksum.h"

static const uint8_t msg[] = "hello over lunar udp";

struct udp_seen {
	unsigned calls;
	bool keep;
	uint32_t src;
	uint16_t sport, dport;
	const uint8_t *payload;
	size_t len;
	uint8_t copy[2048];
	uint64_t now;
};

static bool on_udp(void *ctx, uint32_t src, uint16_t sport, uint16_t dport, const uint8_t *payload,
		   size_t len, uint64_t now_ns)
{
	struct udp_seen *s = ctx;

	s->calls++;
	s->src = src;
	s->sport = sport;
	s->dport = dport;
	s->payload = payload;
	s->len = len;
	memcpy(s->copy, payload, len < sizeof(s->copy) ? len : sizeof(s->copy));
	s->now = now_ns;
	return s->keep;
}

static int setup(void **state)
{
	int rc = nt_setup(state);

	if (rc == 0)
		nt_learn(*state, PEER_IP, &peer_mac);
	return rc;
}

/* RFC 768, RFC 1122 4.1.3.1 / 4.1.4: the datagram's data reaches the bound port. */
static void test_delivered_to_bound_port(void **state)
{
	struct nt *t = *state;
	struct udp_seen s = {0};

	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &s), 0);
	nt_rx(t,
	      nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 5555, 7000, msg, sizeof(msg),
			NT_CSUM_OK),
	      123);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.src, PEER_IP);
	assert_int_equal(s.sport, 5555);
	assert_int_equal(s.dport, 7000);
	assert_int_equal(s.len, sizeof(msg));
	assert_memory_equal(s.copy, msg, sizeof(msg));
	assert_int_equal(s.now, 123);
	assert_int_equal(netif_counter(&t->nif, "rx_udp"), 1);
	assert_int_equal(nt_total_drops(t), 0);
	assert_int_equal(test_pool_in_use(nt_pool), 0); /* returned false: the stack freed it */
}

/*
 * RFC 1122 4.1.4 (data passed to the application) with lunar's zero-copy
 * contract (netif.h): a callback returning true keeps the frame - the
 * payload pointer is into the received frame and stays valid until released.
 */
static void test_callback_keeps_frame(void **state)
{
	struct nt *t = *state;
	struct udp_seen s = {.keep = true};
	struct rte_mbuf *m = nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 5555, 7000, msg,
				       sizeof(msg), NT_CSUM_OK);
	const uint8_t *lo = rte_pktmbuf_mtod(m, const uint8_t *);

	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &s), 0);
	nt_rx(t, m, 1);
	assert_int_equal(s.calls, 1);
	assert_true(s.payload >= lo && s.payload + s.len <= lo + m->data_len);
	assert_int_equal(test_pool_in_use(nt_pool), 1);
	assert_int_equal(rte_mbuf_refcnt_read(m), 1);
	assert_memory_equal(s.payload, msg, sizeof(msg)); /* still intact */
	rte_pktmbuf_free(m); /* plain pool: zbuf_unref(payload) in production */
}

/*
 * RFC 1122 4.1.3.1: a datagram for an unbound port is dropped
 * UDP_NO_LISTENER and answered with port unreachable (net/icmp tests the
 * error).
 */
static void test_no_listener(void **state)
{
	struct nt *t = *state;
	struct udp_seen s = {0};
	struct nt_pkt p;

	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &s), 0);
	nt_rx(t,
	      nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 5555, 7001, msg, sizeof(msg),
			NT_CSUM_OK),
	      1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_UDP_NO_LISTENER), 1);
	assert_int_equal(nt_total_drops(t), 1);
	assert_int_equal(s.calls, 0);
	assert_int_equal(netif_counter(&t->nif, "tx_icmp_unreach"), 1);
	assert_int_equal(nt_flush(t), 1);
	nt_assert_unreachable(nt_tx(t, 0), ICMP_CODE_PORT_UNREACH, &p);
	nt_clear_tx(t);
}

/* RFC 1122 4.1.3.4: a datagram with a wrong checksum is silently discarded. */
static void test_bad_checksum(void **state)
{
	struct nt *t = *state;
	struct udp_seen s = {0};

	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &s), 0);
	nt_rx(t,
	      nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 5555, 7000, msg, sizeof(msg),
			NT_CSUM_BAD),
	      1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_UDP_BAD_CHECKSUM), 1);
	assert_int_equal(nt_total_drops(t), 1);
	assert_int_equal(s.calls, 0);
}

/* RFC 768: an all-zero checksum means the sender computed none; accepted. */
static void test_zero_checksum_accepted(void **state)
{
	struct nt *t = *state;
	struct udp_seen s = {0};

	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &s), 0);
	nt_rx(t,
	      nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 5555, 7000, msg, sizeof(msg),
			NT_CSUM_ZERO),
	      1);
	assert_int_equal(s.calls, 1);
	assert_memory_equal(s.copy, msg, sizeof(msg));
	assert_int_equal(nt_total_drops(t), 0);
}

/* RFC 768: the length field covers header and data (>= 8, <= IP payload). */
static void test_bad_length(void **state)
{
	struct nt *t = *state;
	struct udp_seen s = {0};
	uint8_t l4[64];
	size_t n = nt_udp_bytes(l4, PEER_IP, OUR_IP, 5555, 7000, msg, sizeof(msg), NT_CSUM_ZERO);

	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &s), 0);
	l4[4] = 0;
	l4[5] = (uint8_t)(n + 1);
	nt_rx(t, nt_mk_ip(&our_mac, &peer_mac, PEER_IP, OUR_IP, IPPROTO_UDP, l4, n), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_UDP_BAD_LEN), 1);
	nt_rx(t, nt_mk_ip(&our_mac, &peer_mac, PEER_IP, OUR_IP, IPPROTO_UDP, l4, 6), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_UDP_SHORT), 1);
	assert_int_equal(nt_total_drops(t), 2);
	assert_int_equal(s.calls, 0);
}

/*
 * RFC 1122 4.1.3.4 with checksum offload (port.h): a port-verified L4
 * checksum (RTE_MBUF_F_RX_L4_CKSUM_GOOD) is not rechecked; one the port
 * marked bad is dropped UDP_BAD_CHECKSUM.
 */
static void test_hw_l4_checksum_good(void **state)
{
	struct nt *t = *state;
	struct udp_seen s = {0};
	struct rte_mbuf *m = nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 5555, 7000, msg,
				       sizeof(msg), NT_CSUM_BAD);

	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &s), 0);
	m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	nt_rx(t, m, 1);
	assert_int_equal(s.calls, 1);
	m = nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 5555, 7000, msg, sizeof(msg),
		      NT_CSUM_BAD);
	m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_BAD;
	nt_rx(t, m, 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_UDP_BAD_CHECKSUM), 1);
	assert_int_equal(s.calls, 1);
	/* NONE (virtio's NEEDS_CSUM): the field holds a partial sum, the data was verified. */
	m = nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 5555, 7000, msg, sizeof(msg),
		      NT_CSUM_BAD);
	m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_NONE;
	nt_rx(t, m, 1);
	assert_int_equal(s.calls, 2);
	assert_int_equal(nt_drops(t, LUNAR_DROP_UDP_BAD_CHECKSUM), 1);
}

/* Broadcast datagrams (limited and subnet-directed) reach the bound port (RFC 1122 3.3.6). */
static void test_broadcast_delivered(void **state)
{
	struct nt *t = *state;
	struct udp_seen s = {0};

	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &s), 0);
	nt_rx(t,
	      nt_mk_udp(&bcast_mac, &peer_mac, PEER_IP, IP4(255, 255, 255, 255), 5555, 7000, msg,
			sizeof(msg), NT_CSUM_OK),
	      1);
	nt_rx(t,
	      nt_mk_udp(&bcast_mac, &peer_mac, PEER_IP, SUBNET_BCAST, 5555, 7000, msg, sizeof(msg),
			NT_CSUM_OK),
	      1);
	assert_int_equal(s.calls, 2);
	assert_int_equal(nt_total_drops(t), 0);
}

/*
 * RFC 1122 3.2.1.3 (a): 0.0.0.0 is a legal source while a host boots
 * (a DHCP DISCOVER, RFC 2131 4.1, goes 0.0.0.0 -> 255.255.255.255): such a
 * datagram to a broadcast address reaches the bound port; to our unicast
 * address it is dropped (a reply would go to 0.0.0.0).
 */
static void test_unspecified_source_to_broadcast(void **state)
{
	struct nt *t = *state;
	struct udp_seen s = {0};

	assert_int_equal(netif_udp_bind(&t->nif, 67, on_udp, &s), 0);
	nt_rx(t,
	      nt_mk_udp(&bcast_mac, &peer_mac, 0, IP4(255, 255, 255, 255), 68, 67, msg, sizeof(msg),
			NT_CSUM_OK),
	      1);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.src, 0);
	assert_int_equal(nt_total_drops(t), 0);
	nt_rx(t, nt_mk_udp(&our_mac, &peer_mac, 0, OUR_IP, 68, 67, msg, sizeof(msg), NT_CSUM_OK),
	      2);
	assert_int_equal(s.calls, 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_IP_BAD_SRC), 1);
	assert_int_equal(nt_flush(t), 0);
}

/*
 * RFC 768 / RFC 1122 4.1.3.1: a port names one receiver - binding a bound
 * port is -EADDRINUSE, unbinding frees it, UDP_MAX_SOCKETS at most.
 */
static void test_bind_rules(void **state)
{
	struct nt *t = *state;
	struct udp_seen a = {0}, b = {0};

	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &a), 0);
	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &b), -EADDRINUSE);
	nt_rx(t, nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 1, 7000, msg, 4, NT_CSUM_OK), 1);
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 0);

	netif_udp_unbind(&t->nif, 7000);
	nt_rx(t, nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 1, 7000, msg, 4, NT_CSUM_OK), 1);
	assert_int_equal(nt_drops(t, LUNAR_DROP_UDP_NO_LISTENER), 1);
	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &b), 0);
	nt_rx(t, nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 1, 7000, msg, 4, NT_CSUM_OK), 1);
	assert_int_equal(b.calls, 1);
	assert_int_equal(a.calls, 1);

	for (uint16_t p = 1; p < UDP_MAX_SOCKETS; p++)
		assert_int_equal(netif_udp_bind(&t->nif, (uint16_t)(8000 + p), on_udp, &a), 0);
	assert_int_equal(netif_udp_bind(&t->nif, 9999, on_udp, &a), -ENOSPC);
	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &a), -EADDRINUSE);

	/* Unbinding one of many leaves the others reachable. */
	netif_udp_unbind(&t->nif, 8001);
	nt_rx(t,
	      nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, 1, (uint16_t)(8000 + 63), msg, 4,
			NT_CSUM_OK),
	      1);
	assert_int_equal(a.calls, 2);
}

/*
 * RFC 768 / RFC 1122 4.1.3.4: netif_udp_send() emits a datagram with a
 * correct, non-zero checksum, the given ports and the data, in an IPv4
 * packet from our address (RFC 791: valid header checksum, DF, TTL > 0).
 */
static void test_send_valid_datagram(void **state)
{
	struct nt *t = *state;
	struct nt_pkt p, q;
	const uint8_t *udp;

	assert_int_equal(netif_udp_send(&t->nif, 4000, PEER_IP, 4001, msg, sizeof(msg)), 0);
	assert_int_equal(netif_udp_send(&t->nif, 4000, PEER_IP, 4001, msg, 0), 0);
	assert_int_equal(nt_flush(t), 2);
	nt_parse(nt_tx(t, 0), &p); /* IPv4 and UDP checksums verified */
	assert_memory_equal(&p.eth.dst, &peer_mac, 6);
	assert_memory_equal(&p.eth.src, &our_mac, 6);
	assert_int_equal(p.eth.ethertype, RTE_ETHER_TYPE_IPV4);
	assert_int_equal(p.ip.src, OUR_IP);
	assert_int_equal(p.ip.dst, PEER_IP);
	assert_int_equal(p.ip.proto, IPPROTO_UDP);
	assert_int_equal(p.ip.hdr_len, 20);
	assert_true(p.ip.ttl > 0);
	assert_true(p.ip.df);
	assert_int_equal(p.ip.total_len, 20 + 8 + sizeof(msg));
	assert_int_equal(p.udp.sport, 4000);
	assert_int_equal(p.udp.dport, 4001);
	assert_int_equal(p.udp.payload_len, sizeof(msg));
	assert_memory_equal(p.udp.payload, msg, sizeof(msg));
	udp = p.ip.payload;
	assert_int_not_equal(udp[6] | udp[7], 0); /* checksum present */
	nt_parse(nt_tx(t, 1), &q);
	assert_int_equal(q.udp.payload_len, 0);
	assert_int_not_equal(p.ip.id, q.ip.id); /* RFC 6864: ids differ between datagrams */
	assert_int_equal(netif_counter(&t->nif, "tx_udp"), 2);
	assert_int_equal(netif_counter(&t->nif, "tx_frames"), 2);
	nt_clear_tx(t);
}

/*
 * A port with UDP checksum offload but not IPv4's (port.h): the DPDK tx
 * offload contract wants RTE_MBUF_F_TX_UDP_CKSUM with RTE_MBUF_F_TX_IPV4,
 * l2_len, l3_len and l4_len set, and the pseudo-header sum in the
 * checksum field; the IPv4 header checksum is filled in software.
 */
static void test_send_l4_csum_offload(void **state)
{
	struct nt *t = *state;
	const size_t len = sizeof(msg);
	uint16_t phdr = inet_csum_pseudo(OUR_IP, PEER_IP, IPPROTO_UDP, (uint32_t)(8 + len));
	struct rte_mbuf *m;
	const uint8_t *ip;
	struct ipv4_repr ir;

	t->fp.base.offloads = PORT_OFFLOAD_TX_L4_CKSUM;
	assert_int_equal(netif_udp_send(&t->nif, 4000, PEER_IP, 4001, msg, len), 0);
	assert_int_equal(nt_flush(t), 1);
	m = nt_tx(t, 0);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_UDP_CKSUM);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_IPV4);
	assert_false(m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM);
	assert_int_equal(m->l2_len, RTE_ETHER_HDR_LEN);
	assert_int_equal(m->l3_len, 20);
	assert_int_equal(m->l4_len, 8);
	ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, RTE_ETHER_HDR_LEN);
	assert_int_equal(ipv4_parse(ip, rte_pktmbuf_pkt_len(m) - RTE_ETHER_HDR_LEN, true, &ir),
			 LUNAR_DROP_NONE);
	assert_memory_equal(ip + 20 + 6, &phdr, 2);
	nt_clear_tx(t);
}

/*
 * RFC 791 / RFC 1122 3.3.3: lunar sets DF and does not fragment, so the
 * largest datagram is the one that fits the MTU; one byte more is
 * -EMSGSIZE and nothing leaks.
 */
static void test_send_size_limit(void **state)
{
	static uint8_t big[1500 - 28 + 1];
	struct nt *t = *state;
	struct nt_pkt p;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i ^ 0x5a);
	assert_int_equal(netif_udp_send(&t->nif, 1, PEER_IP, 2, big, sizeof(big) - 1), 0);
	assert_int_equal(netif_udp_send(&t->nif, 1, PEER_IP, 2, big, sizeof(big)), -EMSGSIZE);
	/* A length that would wrap the header's addition is refused before it. */
	assert_int_equal(netif_udp_send(&t->nif, 1, PEER_IP, 2, big, SIZE_MAX - 3), -EMSGSIZE);
	/* Refused before a packet is built: nothing counted sent, no drop. */
	assert_int_equal(netif_counter(&t->nif, "tx_udp"), 1);
	assert_int_equal(nt_total_drops(t), 0);
	assert_int_equal(nt_flush(t), 1);
	nt_parse(nt_tx(t, 0), &p);
	assert_int_equal(p.ip.total_len, 1500);
	assert_memory_equal(p.udp.payload, big, sizeof(big) - 1);
	nt_clear_tx(t);
}

/*
 * The MTU is the port's (netif_init(): 1500 only when the port gives
 * none): on a 1280-byte link the largest datagram carries 1252 bytes.
 */
static void test_send_size_follows_port_mtu(void **state)
{
	static uint8_t big[1280 - 28 + 1];
	struct nt *t = *state;
	struct netif_config cfg = nt_config(t, NEIGH_MODE_ARP);

	t->fp.base.mtu = 1280;
	nt_reinit(t, &cfg);
	nt_learn(t, PEER_IP, &peer_mac);
	assert_int_equal(t->nif.mtu, 1280);
	assert_int_equal(netif_udp_send(&t->nif, 1, PEER_IP, 2, big, sizeof(big)), -EMSGSIZE);
	assert_int_equal(netif_udp_send(&t->nif, 1, PEER_IP, 2, big, sizeof(big) - 1), 0);
	assert_int_equal(nt_flush(t), 1);
	assert_int_equal(rte_pktmbuf_pkt_len(nt_tx(t, 0)), 14 + 1280);
	nt_clear_tx(t);
}

/* RFC 768: what we send is what a receiver (here lunar itself) accepts. */
static void test_send_then_receive(void **state)
{
	struct nt *t = *state;
	struct udp_seen s = {0};
	struct rte_mbuf *m;
	struct nt_pkt p;

	assert_int_equal(netif_udp_send(&t->nif, 4000, PEER_IP, 7000, msg, sizeof(msg)), 0);
	assert_int_equal(nt_flush(t), 1);
	nt_parse(nt_tx(t, 0), &p);
	m = nt_mk_udp(&our_mac, &peer_mac, PEER_IP, OUR_IP, p.udp.sport, p.udp.dport, p.udp.payload,
		      p.udp.payload_len, NT_CSUM_OK);
	nt_clear_tx(t);
	assert_int_equal(netif_udp_bind(&t->nif, 7000, on_udp, &s), 0);
	nt_rx(t, m, 1);
	assert_int_equal(s.calls, 1);
	assert_memory_equal(s.copy, msg, sizeof(msg));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, nt_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_delivered_to_bound_port),
	    T(test_callback_keeps_frame),
	    T(test_no_listener),
	    T(test_bad_checksum),
	    T(test_zero_checksum_accepted),
	    T(test_bad_length),
	    T(test_hw_l4_checksum_good),
	    T(test_broadcast_delivered),
	    T(test_unspecified_source_to_broadcast),
	    T(test_bind_rules),
	    T(test_send_valid_datagram),
	    T(test_send_l4_csum_offload),
	    T(test_send_size_limit),
	    T(test_send_size_follows_port_mtu),
	    T(test_send_then_receive),
	};
#undef T

	return cmocka_run_group_tests_name("net/udp", tests, nt_group_setup, nt_group_teardown);
}
