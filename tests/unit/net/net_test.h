/*
 * net_test.h - test support for tests/unit/net: a netif over the fake port
 * (tests/unit/port/fake_port.h) with a virtual clock, frame builders made
 * with the wire/ emitters (ARP, IPv4, ICMP echo, UDP, TCP), and a parser
 * that checks transmitted frames with the wire/ parsers (checksums verified).
 *
 * Addresses: we are 10.0.0.1/24 with our_mac; the peers 10.0.0.2 and
 * 10.0.0.3 and the gateway 10.0.0.254 sit on the same link.
 */
#ifndef LUNAR_TEST_NET_TEST_H
#define LUNAR_TEST_NET_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "fake_port.h"
#include "net/netif.h"
#include "wire/arp.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"
#include "wire/udp.h"

/* Host-order address. Not RTE_IPV4: DPDK 22.11 shifts an int there, which is
 * undefined (and flagged by UBSan) for a first octet of 128 or more. */
#define IP4(a, b, c, d)                                                                            \
	(((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))

#define OUR_IP	     IP4(10, 0, 0, 1)
#define PEER_IP	     IP4(10, 0, 0, 2)
#define PEER2_IP     IP4(10, 0, 0, 3)
#define GW_IP	     IP4(10, 0, 0, 254)
#define SUBNET_BCAST IP4(10, 0, 0, 255)
#define OUR_PREFIX   24

/* Timers of the default configuration (virtual nanoseconds). */
#define T_RETRY	    1000000ull	/* arp_retry_ns: 1 ms */
#define T_RETRIES   3u		/* arp_retries */
#define T_REACHABLE 50000000ull /* arp_reachable_ns: 50 ms */

extern const struct rte_ether_addr our_mac, peer_mac, peer2_mac, gw_mac, other_mac, bcast_mac;
extern struct rte_mempool *nt_pool;

struct nt {
	struct fake_port fp;
	struct netif nif;
	unsigned kernel_asks; /* kernel_resolve calls */
	uint32_t last_ask_ip;
	bool kernel_knows; /* kernel_resolve answers at once, with kernel_mac */
	struct rte_ether_addr kernel_mac;
};

/* cmocka fixtures: EAL and pool per binary; a fresh netif per test. */
int nt_group_setup(void **state);
int nt_group_teardown(void **state);
int nt_setup(void **state);	   /* ARP mode, 10.0.0.1/24, no gateway */
int nt_setup_kernel(void **state); /* kernel neighbour mode, counting resolver */
int nt_teardown(void **state);	   /* netif_fini, free captures, assert no mbuf in use */

/** The configuration nt_setup uses (port, resolver and context filled in). */
struct netif_config nt_config(struct nt *t, enum neigh_mode mode);
/** Re-initialise t->nif with @cfg (call before any traffic). */
void nt_reinit(struct nt *t, const struct netif_config *cfg);

/* ---- building frames (host-order addresses) ---- */
enum nt_csum { NT_CSUM_OK, NT_CSUM_ZERO, NT_CSUM_BAD };

size_t nt_arp_bytes(uint8_t *b, uint16_t op, const struct rte_ether_addr *sha, uint32_t spa,
		    const struct rte_ether_addr *tha, uint32_t tpa);
/** IPv4 header (20 bytes, DF, TTL 64, checksum filled) followed by @l4. */
size_t nt_ipv4_bytes(uint8_t *b, uint32_t src, uint32_t dst, uint8_t proto, const void *l4,
		     size_t l4len);
size_t nt_icmp_bytes(uint8_t *b, uint8_t type, uint8_t code, uint16_t id, uint16_t seq,
		     const void *data, size_t len);
size_t nt_udp_bytes(uint8_t *b, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
		    const void *data, size_t len, enum nt_csum cs);
size_t nt_tcp_bytes(uint8_t *b, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
		    uint8_t flags, enum nt_csum cs);
/** Recompute the IPv4 header checksum of the header at @ip (after mutating it). */
void nt_ipv4_fix_csum(uint8_t *ip);

/** An Ethernet frame in an mbuf from nt_pool. */
struct rte_mbuf *nt_frame(const struct rte_ether_addr *dst, const struct rte_ether_addr *src,
			  uint16_t ethertype, const void *payload, size_t len);
/** ARP frame; Ethernet source = @sha. */
struct rte_mbuf *nt_mk_arp(uint16_t op, const struct rte_ether_addr *eth_dst,
			   const struct rte_ether_addr *sha, uint32_t spa,
			   const struct rte_ether_addr *tha, uint32_t tpa);
/** IPv4 frame carrying @l4. */
struct rte_mbuf *nt_mk_ip(const struct rte_ether_addr *eth_dst,
			  const struct rte_ether_addr *eth_src, uint32_t src, uint32_t dst,
			  uint8_t proto, const void *l4, size_t l4len);
/** ICMP message (echo request/reply for the usual types). */
struct rte_mbuf *nt_mk_icmp(const struct rte_ether_addr *eth_dst,
			    const struct rte_ether_addr *eth_src, uint32_t src, uint32_t dst,
			    uint8_t type, uint16_t id, uint16_t seq, const void *data, size_t len);
struct rte_mbuf *nt_mk_udp(const struct rte_ether_addr *eth_dst,
			   const struct rte_ether_addr *eth_src, uint32_t src, uint32_t dst,
			   uint16_t sport, uint16_t dport, const void *data, size_t len,
			   enum nt_csum cs);

/* ---- driving the netif ---- */
void nt_rx(struct nt *t, struct rte_mbuf *m, uint64_t now_ns);
/** netif_flush(); @return frames the fake has captured in total. */
unsigned nt_flush(struct nt *t);
struct rte_mbuf *nt_tx(struct nt *t, unsigned i);
void nt_clear_tx(struct nt *t);
uint64_t nt_drops(const struct nt *t, enum lunar_drop reason);
uint64_t nt_total_drops(const struct nt *t);
/** Record @ip -> @mac as reachable (netif_neigh_update). */
void nt_learn(struct nt *t, uint32_t ip, const struct rte_ether_addr *mac);
/** Send a UDP datagram 5000 -> 7000 whose payload is "pkt<n>". */
int nt_send_marked(struct nt *t, uint32_t dst, unsigned n);
/** The <n> of a transmitted marked datagram (asserts it is one). */
unsigned nt_marker(struct rte_mbuf *m);

/* ---- checking transmitted frames ---- */
struct nt_pkt {
	struct eth_repr eth;
	struct arp_repr arp;   /* ethertype ARP */
	struct ipv4_repr ip;   /* ethertype IPv4 */
	struct icmp_repr icmp; /* proto ICMP */
	struct udp_repr udp;   /* proto UDP */
};

/** Parse @m with wire/, asserting every layer (and checksum) is valid. */
void nt_parse(struct rte_mbuf *m, struct nt_pkt *o);
/** Assert @m is an ARP request from us for @tpa sent to @eth_dst. */
void nt_assert_arp_request(struct rte_mbuf *m, const struct rte_ether_addr *eth_dst, uint32_t tpa);
/**
 * Assert @m is a destination unreachable of @code from us to the peer
 * (RFC 792: id and seq "unused", 0); parsed into @p for the quote.
 */
void nt_assert_unreachable(struct rte_mbuf *m, uint8_t code, struct nt_pkt *p);

#endif
