/*
 * netif.h - one network interface of lunar: Ethernet, ARP/neighbours,
 * IPv4 routing, ICMP (echo; errors handed to TCP) and UDP on top of one port.
 *
 * Run-to-completion: the owning worker calls netif_input() with a received
 * burst, netif_timers() with the current time, and netif_flush() at the end
 * of the iteration to send the batched transmit burst. Nothing here reads a
 * clock or blocks; time comes in as an argument.
 *
 * Neighbour resolution has two modes (LUNA §7.3):
 *  - NEIGH_MODE_KERNEL (af_xdp): lunar never answers ARP; the kernel owns the
 *    neighbour table, lunar mirrors it from netlink events and asks the
 *    kernel to resolve unknown next hops.
 *  - NEIGH_MODE_ARP (memif, tap): lunar runs its own ARP.
 */
#ifndef LUNAR_NET_NETIF_H
#define LUNAR_NET_NETIF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ether.h>

#include "base/drop.h"
#include "net/neigh.h"

struct port;
struct rte_mbuf;
struct ipv4_repr;
struct tcp_repr;
struct icmp_quote;

/**
 * The transport above IPv4 for TCP (tcp/tcp_stack.c). It owns @m from then
 * on; @ir and @tr point into it.
 */
typedef void (*netif_tcp_fn)(void *ctx, const struct ipv4_repr *ir, const struct tcp_repr *tr,
			     struct rte_mbuf *m);
/**
 * The same transport's handler of ICMP errors that quote one of its
 * segments (RFC 5927): @q (from wire/icmp.h) points into the message, which
 * the interface keeps. @return LUNAR_DROP_NONE if the transport acted on
 * it, else why it did not; the interface frees the message or counts it.
 */
typedef enum lunar_drop (*netif_tcp_icmp_fn)(void *ctx, const struct icmp_quote *q);
/**
 * The same transport, told that netif_input()'s burst is over, or that an
 * application callback (UDP, echo reply) is about to run: what it held of
 * the burst (a train of segments, software GRO) it takes now.
 */
typedef void (*netif_tcp_burst_fn)(void *ctx);

struct netif_counters {
#define X(name, desc) uint64_t name;
#include "net/counters.def"
#undef X
	uint64_t drops[LUNAR_DROP_COUNT];
};

#define NETIF_TX_BURST	 64
#define NETIF_IP_TTL	 64   /* TTL of every IPv4 packet the interface sends */
#define NETIF_TXQ	 2048 /* frames waiting for a full port ring, before drops */
#define NETIF_MAX_ROUTES 32
#define UDP_MAX_SOCKETS	 64

struct netif_route {
	uint32_t dst, gw; /* gw 0: on-link */
	uint8_t plen;
};

/** Called for each echo reply addressed to us (ICMP id matched by the caller). */
typedef void (*netif_echo_fn)(void *ctx, uint32_t src, uint16_t id, uint16_t seq,
			      const uint8_t *data, size_t len, uint64_t now_ns);
/**
 * Called for each UDP datagram to a bound port. @payload points into Zbuf
 * memory (the received frame). Return true to keep it: the callee then owns
 * one reference and releases it with zbuf_unref(payload). Return false and
 * the stack frees the frame.
 */
typedef bool (*netif_udp_fn)(void *ctx, uint32_t src, uint16_t sport, uint16_t dport,
			     const uint8_t *payload, size_t len, uint64_t now_ns);

struct udp_binding {
	uint16_t port;
	netif_udp_fn fn;
	void *ctx;
};

struct netif_config {
	struct port *port;
	uint32_t ip; /* host order */
	uint8_t prefix_len;
	uint32_t gateway; /* 0: none */
	enum neigh_mode neigh_mode;
	uint64_t arp_reachable_ns; /* ARP mode: entry lifetime (default 30 s) */
	uint64_t arp_retry_ns;	   /* between ARP requests / kernel asks (default 1 s) */
	unsigned arp_retries;	   /* requests sent before an entry fails (default 3) */
	/*
	 * kernel mode: how to ask the kernel to resolve a next hop. @return
	 * 1 with *mac set when the kernel's entry is known valid already
	 * (lunar had let its copy go, evicted from a full table: the kernel
	 * will not announce an entry it has), 0 when asked, or -errno.
	 */
	int (*kernel_resolve)(void *ctx, uint32_t ip, struct rte_ether_addr *mac);
	void *kernel_ctx;
	/*
	 * ICMP errors (port and protocol unreachable) sent at most this many
	 * a second by this netif (one per worker), in bursts of up to
	 * icmp_errors_burst (0: 1000 and 50, as Linux's icmp_msgs_per_sec and
	 * icmp_msgs_burst; in NEIGH_MODE_KERNEL none, as the kernel owns all
	 * but what is steered to lunar); NETIF_ICMP_ERRORS_OFF: none.
	 */
	uint32_t icmp_errors_per_sec, icmp_errors_burst;
};

#define NETIF_ICMP_ERRORS_OFF UINT32_MAX

struct netif {
	struct port *port;
	struct rte_ether_addr mac;
	uint32_t ip, netmask, gateway;
	uint8_t prefix_len;
	uint16_t mtu;
	uint16_t ip_id;
	enum neigh_mode neigh_mode;
	uint64_t arp_reachable_ns, arp_retry_ns;
	unsigned arp_retries;
	int (*kernel_resolve)(void *ctx, uint32_t ip, struct rte_ether_addr *mac);
	void *kernel_ctx;
	struct neigh_table neigh;
	struct netif_route routes[NETIF_MAX_ROUTES];
	unsigned n_routes;
	struct udp_binding udp[UDP_MAX_SOCKETS];
	unsigned n_udp;
	netif_echo_fn echo_fn;
	void *echo_ctx;
	netif_tcp_fn tcp_fn;		 /* NULL: TCP is counted and dropped (TCP_NO_LISTENER) */
	netif_tcp_icmp_fn tcp_icmp_fn;	 /* NULL: errors quoting TCP dropped (TCP_ICMP_NO_CONN) */
	netif_tcp_burst_fn tcp_burst_fn; /* NULL: nothing to tell */
	void *tcp_ctx;			 /* the TCP handlers' */
	struct rte_mbuf *txq[NETIF_TXQ]; /* frames to send, in order; [0, txq_len) */
	unsigned txq_len;
	uint64_t now_ns; /* time of the burst being processed */
	/* ICMP errors' token bucket: a message costs 1e9, the rate refills per ns. */
	uint32_t icmp_errors_per_sec, icmp_errors_burst;
	uint64_t icmp_tokens, icmp_refill_ns;
	struct netif_counters ctr;
};

/** Set up @nif over cfg->port. @return 0 or negative errno. */
int netif_init(struct netif *nif, const struct netif_config *cfg);
/** Free held packets and queued transmits (the port is the caller's). */
void netif_fini(struct netif *nif);

/** Process a received burst. Takes ownership of every mbuf. */
void netif_input(struct netif *nif, struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns);
/** Run neighbour timers (retries, expiry). */
void netif_timers(struct netif *nif, uint64_t now_ns);
/** Send the batched transmit burst. */
void netif_flush(struct netif *nif);

/** Announce our address with a gratuitous ARP (ARP mode only). */
void netif_gratuitous_arp(struct netif *nif);

/**
 * A neighbour learned elsewhere (kernel netlink event, or a test): record
 * or forget @ip's MAC and release packets waiting for it.
 */
void netif_neigh_update(struct netif *nif, uint32_t ip, const struct rte_ether_addr *mac,
			bool reachable);

/** Add or remove a route (from config or netlink). */
int netif_route_add(struct netif *nif, uint32_t dst, uint8_t plen, uint32_t gw);
void netif_route_del(struct netif *nif, uint32_t dst, uint8_t plen);
/** Next hop for @dst, or 0 if there is no route. */
uint32_t netif_next_hop(const struct netif *nif, uint32_t dst);

/**
 * Send an IPv4 packet. @m holds the L4 header and payload at its data
 * offset, with headroom for the IPv4 and Ethernet headers. Takes @m.
 * @tos: the TOS octet (DSCP and the ECN field, RFC 3168 5).
 * @return 0 if sent or queued for neighbour resolution, negative errno if
 *         dropped (counted).
 */
int netif_ipv4_output(struct netif *nif, struct rte_mbuf *m, uint32_t dst, uint8_t proto,
		      uint8_t tos);
/**
 * netif_ipv4_output() for @n packets to one destination, with one route
 * and neighbour lookup for them all when the neighbour is resolved (else
 * each goes alone, and may wait for resolution). For a transport's burst
 * of segments, such as the frames cut from one segment in software
 * (GSO). Takes every mbuf.
 */
void netif_ipv4_output_n(struct netif *nif, struct rte_mbuf *const *m, unsigned n, uint32_t dst,
			 uint8_t proto, uint8_t tos);

/** Send an ICMP echo request with @len bytes of pattern payload. */
int netif_icmp_echo(struct netif *nif, uint32_t dst, uint16_t id, uint16_t seq, size_t len);
void netif_set_echo_handler(struct netif *nif, netif_echo_fn fn, void *ctx);

/** Bind a UDP port to a receive callback. -EADDRINUSE if taken. */
int netif_udp_bind(struct netif *nif, uint16_t port, netif_udp_fn fn, void *ctx);
void netif_udp_unbind(struct netif *nif, uint16_t port);
/** Send a UDP datagram (copies @data). */
int netif_udp_send(struct netif *nif, uint16_t sport, uint32_t dst, uint16_t dport,
		   const void *data, size_t len);

/** Count a drop and free the packet. */
void netif_drop(struct netif *nif, struct rte_mbuf *m, enum lunar_drop reason);
/** Print counters and nonzero drop reasons. */
void netif_dump(const struct netif *nif, FILE *f);
/** Look up a counter by name (tests, tools); -1 if unknown. */
int64_t netif_counter(const struct netif *nif, const char *name);

/** Format a host-order IPv4 address into @buf (at least 16 bytes). */
const char *ip4_str(uint32_t ip, char *buf);

#endif
