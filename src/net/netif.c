/*
 * netif.c - Ethernet, ARP, IPv4, ICMP (echo; errors to TCP) and UDP for one
 * interface (see netif.h). Receive: parse with wire/, validate, dispatch, count every
 * drop by reason. Transmit: build headers into the mbuf headroom, resolve
 * the next hop, batch for netif_flush().
 */
#include "net/netif.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_mbuf.h>

#include "mem/zbuf.h"
#include "port/port.h"
#include "wire/arp.h"
#include "wire/checksum.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"
#include "wire/udp.h"

#define ONE_SECOND_NS 1000000000ull

static const struct rte_ether_addr eth_bcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

/* Limited or directed broadcast? /31 (RFC 3021) and /32 have no directed broadcast. */
static bool is_broadcast(const struct netif *nif, uint32_t ip)
{
	return ip == 0xffffffffu || (nif->prefix_len <= 30 && ip == (nif->ip | ~nif->netmask));
}

/* On our connected subnet? */
static bool on_subnet(const struct netif *nif, uint32_t ip)
{
	return ((ip ^ nif->ip) & nif->netmask) == 0;
}

const char *ip4_str(uint32_t ip, char *buf)
{
	snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
	return buf;
}

void netif_drop(struct netif *nif, struct rte_mbuf *m, enum lunar_drop reason)
{
	nif->ctr.drops[reason]++;
	rte_pktmbuf_free(m);
}

/* ---- transmit ---- */

static void tx_enqueue(struct netif *nif, struct rte_mbuf *m)
{
	if (nif->txq_len >= NETIF_TX_BURST)
		netif_flush(nif); /* send in bursts as they fill */
	if (nif->txq_len == NETIF_TXQ) {
		/* The port has refused frames for a whole queue's worth: drop, counted. */
		netif_drop(nif, m, LUNAR_DROP_TX_RING_FULL);
		return;
	}
	nif->txq[nif->txq_len++] = m;
}

void netif_flush(struct netif *nif)
{
	unsigned sent = 0;

	/*
	 * What a full ring refuses waits here for the next flush instead of
	 * being dropped: a drop the sender's TCP thinks was sent costs it a
	 * retransmission timeout.
	 */
	while (sent < nif->txq_len) {
		uint16_t n = (uint16_t)(nif->txq_len - sent < NETIF_TX_BURST ? nif->txq_len - sent
									     : NETIF_TX_BURST);
		uint16_t k = port_tx_burst(nif->port, nif->txq + sent, n);

		sent += k;
		if (k < n)
			break;
	}
	nif->ctr.tx_frames += sent;
	if (sent) {
		memmove(nif->txq, nif->txq + sent, (nif->txq_len - sent) * sizeof(nif->txq[0]));
		nif->txq_len -= sent;
	}
}

/* Prepend the Ethernet header and queue. */
static void eth_output(struct netif *nif, struct rte_mbuf *m, const struct rte_ether_addr *dst,
		       uint16_t ethertype)
{
	uint8_t *h = (uint8_t *)rte_pktmbuf_prepend(m, RTE_ETHER_HDR_LEN);

	if (!h) {
		netif_drop(nif, m, LUNAR_DROP_NO_MBUF);
		return;
	}
	eth_emit(h, RTE_ETHER_HDR_LEN, dst, &nif->mac, ethertype);
	tx_enqueue(nif, m);
}

static struct rte_mbuf *alloc_pkt(struct netif *nif)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(nif->port->pool);

	if (!m)
		nif->ctr.drops[LUNAR_DROP_NO_MBUF]++;
	return m;
}

static void arp_send(struct netif *nif, uint16_t op, const struct rte_ether_addr *eth_dst,
		     const struct rte_ether_addr *tha, uint32_t tpa)
{
	struct rte_mbuf *m = alloc_pkt(nif);
	struct arp_repr ar = {.op = op, .sha = nif->mac, .spa = nif->ip, .tpa = tpa};
	uint8_t *p;

	if (!m)
		return;
	if (tha)
		ar.tha = *tha;
	p = (uint8_t *)rte_pktmbuf_append(m, sizeof(struct rte_arp_hdr));
	arp_emit(p, sizeof(struct rte_arp_hdr), &ar);
	if (op == RTE_ARP_OP_REQUEST)
		nif->ctr.tx_arp_request++;
	else
		nif->ctr.tx_arp_reply++;
	eth_output(nif, m, eth_dst, RTE_ETHER_TYPE_ARP);
}

void netif_gratuitous_arp(struct netif *nif)
{
	/* RFC 5227 announcement: a request with sender and target both our address. */
	if (nif->neigh_mode == NEIGH_MODE_ARP)
		arp_send(nif, RTE_ARP_OP_REQUEST, &eth_bcast, NULL, nif->ip);
}

static void neigh_release(struct netif *nif, struct neigh_entry *e)
{
	for (unsigned i = 0; i < e->n_hold; i++)
		eth_output(nif, e->hold[i], &e->mac, RTE_ETHER_TYPE_IPV4);
	e->n_hold = 0;
}

static void neigh_fail(struct netif *nif, struct neigh_entry *e)
{
	for (unsigned i = 0; i < e->n_hold; i++)
		netif_drop(nif, e->hold[i], LUNAR_DROP_NEIGH_FAILED);
	e->n_hold = 0;
	neigh_remove(&nif->neigh, e);
}

static uint64_t reachable_until(const struct netif *nif)
{
	return nif->neigh_mode == NEIGH_MODE_KERNEL ? UINT64_MAX
						    : nif->now_ns + nif->arp_reachable_ns;
}

/* @e is at @mac (counted when it was not reachable): its held packets go. */
static void neigh_resolve(struct netif *nif, struct neigh_entry *e,
			  const struct rte_ether_addr *mac)
{
	if (e->state != NEIGH_REACHABLE)
		nif->ctr.neigh_resolved++;
	neigh_confirm(e, mac, reachable_until(nif));
	neigh_release(nif, e);
}

/*
 * Ask for @e's MAC: ARP request (our ARP) or a kernel resolution request.
 * The kernel's answer may be at once (an entry it has, which lunar had let
 * go): then @e is resolved and its packets go.
 */
static void neigh_ask(struct netif *nif, struct neigh_entry *e, bool unicast)
{
	e->tries++;
	e->next_try_ns = nif->now_ns + nif->arp_retry_ns;
	if (nif->neigh_mode == NEIGH_MODE_KERNEL) {
		struct rte_ether_addr mac;

		nif->ctr.neigh_kernel_asks++;
		if (nif->kernel_resolve && nif->kernel_resolve(nif->kernel_ctx, e->ip, &mac) == 1) {
			nif->ctr.neigh_kernel_known++;
			neigh_resolve(nif, e, &mac);
		}
		return;
	}
	/* RFC 1122 2.3.2.1: refresh a stale entry with a unicast request. */
	arp_send(nif, RTE_ARP_OP_REQUEST, unicast ? &e->mac : &eth_bcast, NULL, e->ip);
}

void netif_neigh_update(struct netif *nif, uint32_t ip, const struct rte_ether_addr *mac,
			bool reachable)
{
	struct neigh_entry *e =
	    reachable ? neigh_get(&nif->neigh, ip) : neigh_find(&nif->neigh, ip);

	if (!e)
		return;
	if (!reachable) {
		/* The kernel forgot it or failed; held packets get another ask. */
		if (e->n_hold == 0)
			neigh_remove(&nif->neigh, e);
		else
			e->state = NEIGH_INCOMPLETE;
		return;
	}
	neigh_resolve(nif, e, mac);
}

/*
 * The Ethernet destination for @dst when a frame can go now: broadcast, or
 * a neighbour reachable or stale (a stale one is asked again, RFC 1122
 * 2.3.2.1). False when there is no route or the next hop is unresolved;
 * the next hop is left in *@hop then (0: no route), for the caller to ask.
 */
static bool l3_resolved(struct netif *nif, uint32_t dst, struct rte_ether_addr *mac, uint32_t *hop)
{
	struct neigh_entry *e;

	if (is_broadcast(nif, dst)) {
		*mac = eth_bcast;
		return true;
	}
	*hop = netif_next_hop(nif, dst);
	e = *hop ? neigh_find(&nif->neigh, *hop) : NULL;
	if (!e || (e->state != NEIGH_REACHABLE && e->state != NEIGH_STALE))
		return false;
	e->last_used_ns = nif->now_ns;
	if (e->state == NEIGH_STALE && nif->now_ns >= e->next_try_ns)
		neigh_ask(nif, e, true);
	*mac = e->mac;
	return true;
}

/* Route and resolve, then queue. Takes @m (L3 packet at data offset). */
static int l3_output(struct netif *nif, struct rte_mbuf *m, uint32_t dst)
{
	struct rte_ether_addr mac;
	uint32_t hop;
	struct neigh_entry *e;

	if (l3_resolved(nif, dst, &mac, &hop)) {
		eth_output(nif, m, &mac, RTE_ETHER_TYPE_IPV4);
		return 0;
	}
	if (!hop) {
		netif_drop(nif, m, LUNAR_DROP_NO_ROUTE);
		return -ENETUNREACH;
	}
	e = neigh_find(&nif->neigh, hop);
	if (!e && neigh_incomplete(&nif->neigh) >= NEIGH_INCOMPLETE_MAX) {
		nif->ctr.neigh_incomplete_cap++;
		netif_drop(nif, m, LUNAR_DROP_NEIGH_UNRESOLVED);
		return -ENOBUFS;
	}
	if (!e)
		e = neigh_get(&nif->neigh, hop);
	if (!e) {
		netif_drop(nif, m, LUNAR_DROP_NEIGH_UNRESOLVED);
		return -ENOBUFS;
	}
	e->last_used_ns = nif->now_ns;
	nif->ctr.neigh_miss++;
	if (e->n_hold == NEIGH_HOLD) {
		netif_drop(nif, m, LUNAR_DROP_NEIGH_UNRESOLVED);
		return -ENOBUFS;
	}
	e->hold[e->n_hold++] = m;
	if (e->tries == 0)
		neigh_ask(nif, e, false);
	return 0;
}

/* Put the IPv4 header in @m's headroom. Takes @m when it fails (counted). */
static int ipv4_prepend(struct netif *nif, struct rte_mbuf *m, uint32_t dst, uint8_t proto,
			uint8_t tos)
{
	struct ipv4_repr ir = {
	    .src = nif->ip,
	    .dst = dst,
	    .proto = proto,
	    .tos = tos,
	    .ttl = NETIF_IP_TTL,
	    .id = nif->ip_id++,
	    .df = true,
	    .payload_len = rte_pktmbuf_pkt_len(m),
	};
	uint8_t *h;

	/* A TSO packet is cut to the MTU by the port. */
	if (ir.payload_len + sizeof(struct rte_ipv4_hdr) > nif->mtu &&
	    !(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG)) {
		netif_drop(nif, m, LUNAR_DROP_IP_TOO_BIG); /* counted: a silent loss hides bugs */
		return -EMSGSIZE;
	}
	h = (uint8_t *)rte_pktmbuf_prepend(m, sizeof(struct rte_ipv4_hdr));
	if (!h) {
		netif_drop(nif, m, LUNAR_DROP_NO_MBUF);
		return -ENOBUFS;
	}
	if (m->ol_flags & (RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_TCP_SEG)) {
		/* An L4 checksum offload needs the header lengths whatever the IPv4 one does. */
		m->l2_len = RTE_ETHER_HDR_LEN;
		m->l3_len = sizeof(struct rte_ipv4_hdr);
		m->ol_flags |= RTE_MBUF_F_TX_IPV4;
	}
	if (nif->port->offloads & PORT_OFFLOAD_TX_IPV4_CKSUM) {
		/* The port fills the header checksum (DPDK tx offload contract). */
		m->l2_len = RTE_ETHER_HDR_LEN;
		m->l3_len = sizeof(struct rte_ipv4_hdr);
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
		nif->ctr.tx_csum_offload++;
		ipv4_emit(h, sizeof(struct rte_ipv4_hdr), &ir, false);
	} else {
		ipv4_emit(h, sizeof(struct rte_ipv4_hdr), &ir, true);
	}
	return 0;
}

int netif_ipv4_output(struct netif *nif, struct rte_mbuf *m, uint32_t dst, uint8_t proto,
		      uint8_t tos)
{
	int rc = ipv4_prepend(nif, m, dst, proto, tos);

	return rc ? rc : l3_output(nif, m, dst);
}

void netif_ipv4_output_n(struct netif *nif, struct rte_mbuf *const *m, unsigned n, uint32_t dst,
			 uint8_t proto, uint8_t tos)
{
	struct rte_ether_addr mac;
	uint32_t hop;

	if (n > 1 && l3_resolved(nif, dst, &mac, &hop)) {
		for (unsigned i = 0; i < n; i++)
			if (ipv4_prepend(nif, m[i], dst, proto, tos) == 0)
				eth_output(nif, m[i], &mac, RTE_ETHER_TYPE_IPV4);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		netif_ipv4_output(nif, m[i], dst, proto, tos);
}

/* ---- routes ---- */

static uint32_t mask_of(uint8_t plen)
{
	return plen ? ~0u << (32 - plen) : 0;
}

int netif_route_add(struct netif *nif, uint32_t dst, uint8_t plen, uint32_t gw)
{
	netif_route_del(nif, dst, plen);
	if (nif->n_routes == NETIF_MAX_ROUTES) {
		nif->ctr.routes_full++;
		return -ENOSPC;
	}
	nif->routes[nif->n_routes++] = (struct netif_route){dst & mask_of(plen), gw, plen};
	return 0;
}

void netif_route_del(struct netif *nif, uint32_t dst, uint8_t plen)
{
	for (unsigned i = 0; i < nif->n_routes; i++) {
		if (nif->routes[i].plen == plen && nif->routes[i].dst == (dst & mask_of(plen))) {
			nif->routes[i] = nif->routes[--nif->n_routes];
			return;
		}
	}
}

uint32_t netif_next_hop(const struct netif *nif, uint32_t dst)
{
	/* Longest prefix wins; the connected subnet is an on-link route. */
	const struct netif_route *best = NULL;
	int best_plen = -1;

	if (on_subnet(nif, dst))
		best_plen = nif->prefix_len;
	for (unsigned i = 0; i < nif->n_routes; i++) {
		const struct netif_route *r = &nif->routes[i];

		if ((dst & mask_of(r->plen)) == r->dst && (int)r->plen > best_plen) {
			best = r;
			best_plen = r->plen;
		}
	}
	if (best)
		return best->gw ? best->gw : dst;
	if (best_plen >= 0)
		return dst;
	return nif->gateway;
}

/* ---- receive ---- */

static void arp_input(struct netif *nif, struct rte_mbuf *m, const uint8_t *p, size_t len)
{
	struct arp_repr ar;
	enum lunar_drop why = arp_parse(p, len, &ar);
	struct neigh_entry *e;

	if (why) {
		netif_drop(nif, m, why);
		return;
	}
	nif->ctr.rx_arp++;
	if (nif->neigh_mode == NEIGH_MODE_KERNEL) {
		/* The XDP program leaves ARP to the kernel; seeing one is a steering bug. */
		netif_drop(nif, m, LUNAR_DROP_STEERED_WRONG);
		return;
	}
	/* RFC 5227: another host claims our address; nothing it says is learned. */
	if (ar.spa == nif->ip) {
		nif->ctr.arp_conflicts++;
		netif_drop(nif, m, LUNAR_DROP_ARP_NOT_FOR_US);
		return;
	}
	/* A sender no neighbour can be (off the subnet, broadcast, class D): not learned. */
	if (ar.spa != 0 && (!on_subnet(nif, ar.spa) || is_broadcast(nif, ar.spa) ||
			    (ar.spa & 0xf0000000u) == 0xe0000000u)) {
		netif_drop(nif, m, LUNAR_DROP_ARP_BAD_SENDER);
		return;
	}
	/* RFC 826 merge: update a sender we already know, whoever the target. */
	e = neigh_find(&nif->neigh, ar.spa);
	if (e && ar.spa != 0)
		neigh_resolve(nif, e, &ar.sha);
	if (ar.tpa != nif->ip) {
		netif_drop(nif, m, LUNAR_DROP_ARP_NOT_FOR_US);
		return;
	}
	if (!e && ar.spa != 0) { /* RFC 826: we are the target, so the sender is added */
		e = neigh_get(&nif->neigh, ar.spa);
		if (e)
			neigh_resolve(nif, e, &ar.sha); /* new: unresolved, nothing held */
	}
	if (ar.op == RTE_ARP_OP_REQUEST)
		arp_send(nif, RTE_ARP_OP_REPLY, &ar.sha, &ar.sha, ar.spa);
	rte_pktmbuf_free(m);
}

/*
 * An error message (RFC 1122 3.2.2.1, 3.2.2.4, 3.2.2.5): if it quotes one
 * of our TCP segments, the TCP stack decides (RFC 5927: whether the quote
 * is believable, what it changes). UDP sockets have no error reporting.
 */
static void icmp_error_input(struct netif *nif, struct rte_mbuf *m, const struct icmp_repr *icr)
{
	struct icmp_quote q;
	enum lunar_drop why = icmp_error_parse(icr, &q);

	if (!why && q.src != nif->ip)
		why = LUNAR_DROP_ICMP_QUOTE_NOT_OURS; /* we never sent it */
	if (!why && q.proto != IPPROTO_TCP)
		why = LUNAR_DROP_ICMP_QUOTE_NOT_TCP;
	if (!why) {
		nif->ctr.rx_icmp_error_tcp++;
		why = nif->tcp_icmp_fn ? nif->tcp_icmp_fn(nif->tcp_ctx, &q)
				       : LUNAR_DROP_TCP_ICMP_NO_CONN;
	}
	if (why)
		netif_drop(nif, m, why);
	else
		rte_pktmbuf_free(m);
}

/*
 * A new packet with room for an L4 header of @hdr bytes and @payload more
 * at *@p, or an error: -EMSGSIZE if it cannot fit the MTU, -ENOBUFS if the
 * pool is empty.
 */
static int alloc_l4(struct netif *nif, size_t hdr, size_t payload, struct rte_mbuf **m, uint8_t **p)
{
	size_t l4_len;

	if (payload > UINT16_MAX - hdr) /* checked before the sum: a huge length must not wrap */
		return -EMSGSIZE;
	l4_len = hdr + payload;
	if (l4_len + sizeof(struct rte_ipv4_hdr) > nif->mtu)
		return -EMSGSIZE;
	*m = alloc_pkt(nif);
	if (!*m)
		return -ENOBUFS;
	*p = (uint8_t *)rte_pktmbuf_append(*m, (uint16_t)l4_len);
	if (!*p) {
		rte_pktmbuf_free(*m);
		return -EMSGSIZE; /* larger than one buffer: the pool was sized for the MTU */
	}
	return 0;
}

/*
 * A message may go: a token from the bucket, refilled for the time since
 * the last (none if the clock went back).
 */
static bool icmp_error_token(struct netif *nif)
{
	uint64_t full = (uint64_t)nif->icmp_errors_burst * ONE_SECOND_NS;
	uint64_t elapsed = 0, add;

	if (nif->now_ns > nif->icmp_refill_ns) {
		elapsed = nif->now_ns - nif->icmp_refill_ns;
		nif->icmp_refill_ns = nif->now_ns;
	}
	/* Capped before the product can overflow; tokens + add stays below 2^64. */
	add = elapsed > full / nif->icmp_errors_per_sec ? full : elapsed * nif->icmp_errors_per_sec;
	nif->icmp_tokens = nif->icmp_tokens + add < full ? nif->icmp_tokens + add : full;
	if (nif->icmp_tokens < ONE_SECOND_NS) {
		nif->ctr.icmp_errors_limited++;
		return false;
	}
	nif->icmp_tokens -= ONE_SECOND_NS;
	return true;
}

/*
 * Whether an ICMP error may go to @src: a single host's address (RFC 1812
 * 4.3.2.7: not 0.0.0.0, class D or E, or ours; ipv4_parse() has refused
 * loopback and multicast sources already) whose next hop lunar has
 * resolved. A datagram from an unresolved source gets no error, so that
 * spoofed sources cannot fill the neighbour table with held errors; a real
 * peer has asked for our address (ARP merges it in) before it sent.
 */
static bool error_destination(struct netif *nif, uint32_t src)
{
	const struct neigh_entry *e;

	if (src == 0 || src >= 0xe0000000u || src == nif->ip)
		return false;
	e = neigh_find(&nif->neigh, netif_next_hop(nif, src));
	return e && (e->state == NEIGH_REACHABLE || e->state == NEIGH_STALE);
}

/*
 * Destination unreachable for a datagram lunar cannot deliver (RFC 1122
 * 3.2.2.1: protocol and port unreachable SHOULD be sent), never for what
 * RFC 1122 3.2.2 and RFC 1812 4.3.2.7 exclude: a datagram to a broadcast
 * or multicast address or in a link-layer broadcast, a fragment (lunar
 * takes none), one whose source is not a single host, an ICMP error (no
 * ICMP datagram comes here). Quotes the datagram's header and as much of
 * its data as keeps the error within 576 bytes (RFC 1812 4.3.2.3), and
 * goes only with a token of the rate limit (RFC 1812 4.3.2.8).
 */
static void icmp_unreachable(struct netif *nif, const struct ipv4_repr *ir, uint8_t code,
			     bool to_bcast)
{
	enum { QUOTE_MAX = 576 - 20 - 8 };
	size_t quote = ir->total_len < QUOTE_MAX ? ir->total_len : QUOTE_MAX;
	struct icmp_repr icr = {.type = ICMP_TYPE_DEST_UNREACH,
				.code = code,
				.data = ir->payload - ir->hdr_len,
				.data_len = quote};
	struct rte_mbuf *r;
	uint8_t *p;

	if (nif->icmp_errors_per_sec == NETIF_ICMP_ERRORS_OFF || to_bcast ||
	    !error_destination(nif, ir->src) || !icmp_error_token(nif))
		return;
	if (alloc_l4(nif, 8, quote, &r, &p)) /* at most 556 bytes: fits any MTU lunar takes */
		return;
	icmp_emit(p, 8 + quote, &icr);
	if (netif_ipv4_output(nif, r, ir->src, IPPROTO_ICMP, 0) == 0)
		nif->ctr.tx_icmp_unreach++;
}

/*
 * The TCP segments of the burst so far reach TCP (its GRO train ends):
 * at the burst's end, and before an application callback (a datagram, an
 * echo reply) that must see TCP as of the segments before it.
 */
static void tcp_catch_up(struct netif *nif)
{
	if (nif->tcp_burst_fn)
		nif->tcp_burst_fn(nif->tcp_ctx);
}

static void icmp_input(struct netif *nif, struct rte_mbuf *m, const struct ipv4_repr *ir,
		       bool to_bcast)
{
	struct icmp_repr icr;
	enum lunar_drop why = icmp_parse(ir->payload, ir->payload_len, &icr);

	if (why) {
		netif_drop(nif, m, why);
		return;
	}
	nif->ctr.rx_icmp++;
	if (icr.type == RTE_IP_ICMP_ECHO_REQUEST && icr.code == 0) {
		struct rte_mbuf *r;
		uint8_t *p;

		if (to_bcast) {
			/* RFC 1122 3.2.2.6: a host MAY ignore echo to broadcast; we do. */
			netif_drop(nif, m, LUNAR_DROP_ICMP_BROADCAST_ECHO);
			return;
		}
		r = alloc_pkt(nif);
		if (!r) {
			rte_pktmbuf_free(m);
			return;
		}
		p = (uint8_t *)rte_pktmbuf_append(r, (uint16_t)(8 + icr.data_len));
		if (!p) {
			rte_pktmbuf_free(r);
			netif_drop(nif, m, LUNAR_DROP_NO_MBUF);
			return;
		}
		icr.type = RTE_IP_ICMP_ECHO_REPLY;
		icmp_emit(p, 8 + icr.data_len, &icr);
		rte_pktmbuf_free(m);
		nif->ctr.tx_icmp_echo_reply++;
		netif_ipv4_output(nif, r, ir->src, IPPROTO_ICMP, 0);
		return;
	}
	if (icr.type == RTE_IP_ICMP_ECHO_REPLY) {
		nif->ctr.rx_icmp_echo_reply++;
		if (nif->echo_fn) {
			tcp_catch_up(nif);
			nif->echo_fn(nif->echo_ctx, ir->src, icr.id, icr.seq, icr.data,
				     icr.data_len, nif->now_ns);
		}
		rte_pktmbuf_free(m);
		return;
	}
	if (icmp_is_error(icr.type)) {
		if (to_bcast) /* errors are about our unicast datagrams; one to all is forged */
			netif_drop(nif, m, LUNAR_DROP_ICMP_ERROR_BROADCAST);
		else
			icmp_error_input(nif, m, &icr);
		return;
	}
	if (icr.type == ICMP_TYPE_SOURCE_QUENCH) {
		/* RFC 6633 2: a host MUST silently ignore source quench (counted here). */
		netif_drop(nif, m, LUNAR_DROP_ICMP_SOURCE_QUENCH);
		return;
	}
	netif_drop(nif, m, LUNAR_DROP_ICMP_UNHANDLED_TYPE);
}

static void udp_input(struct netif *nif, struct rte_mbuf *m, const struct ipv4_repr *ir,
		      bool l4_verified, bool to_bcast)
{
	struct udp_repr ur;
	enum lunar_drop why =
	    udp_parse(ir->payload, ir->payload_len, ir->src, ir->dst, !l4_verified, &ur);

	if (why) {
		netif_drop(nif, m, why);
		return;
	}
	for (unsigned i = 0; i < nif->n_udp; i++) {
		struct udp_binding *b = &nif->udp[i];

		if (b->port != ur.dport)
			continue;
		nif->ctr.rx_udp++;
		tcp_catch_up(nif);
		/*
		 * Zero-copy: the payload stays in the received Zbuf frame, whose
		 * reference is the callee's to keep (given before the call, as
		 * the callee may release it inside) or to decline.
		 */
		void *obj = rte_pktmbuf_mtod(m, void *);
		bool counted = zbuf_contains(obj); /* not for a pool outside Zbuf memory (tests') */

		if (counted)
			zbuf_give(obj);
		if (!b->fn(b->ctx, ir->src, ur.sport, ur.dport, ur.payload, ur.payload_len,
			   nif->now_ns)) {
			/*
			 * Declined after releasing it anyway: not freed twice;
			 * zbuf_take() reports it.
			 */
			if (!counted || zbuf_take(obj))
				rte_pktmbuf_free(m);
		}
		return;
	}
	icmp_unreachable(nif, ir, ICMP_CODE_PORT_UNREACH, to_bcast);
	netif_drop(nif, m, LUNAR_DROP_UDP_NO_LISTENER);
}

static void ipv4_input(struct netif *nif, struct rte_mbuf *m, const uint8_t *p, size_t len,
		       bool link_bcast)
{
	uint64_t ol = m->ol_flags;
	/*
	 * GOOD, or NONE: the field holds no valid sum but the port verified
	 * the data (virtio's NEEDS_CSUM frames), which is as good.
	 */
	uint64_t ip_ck = ol & RTE_MBUF_F_RX_IP_CKSUM_MASK, l4_ck = ol & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	bool ip_ok = ip_ck == RTE_MBUF_F_RX_IP_CKSUM_GOOD || ip_ck == RTE_MBUF_F_RX_IP_CKSUM_NONE;
	bool l4_ok = l4_ck == RTE_MBUF_F_RX_L4_CKSUM_GOOD || l4_ck == RTE_MBUF_F_RX_L4_CKSUM_NONE;
	struct ipv4_repr ir;
	enum lunar_drop why;
	bool bcast;

	if ((ol & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_BAD) {
		netif_drop(nif, m, LUNAR_DROP_IP_BAD_CHECKSUM);
		return;
	}
	if ((ol & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_BAD) {
		/* The port checked it; report under the protocol's own reason below. */
		l4_ok = false;
	}
	if (ip_ok)
		nif->ctr.rx_csum_hw_ok++;
	why = ipv4_parse(p, len, !ip_ok, &ir);
	if (why) {
		netif_drop(nif, m, why);
		return;
	}
	bcast = is_broadcast(nif, ir.dst);
	if (ir.dst != nif->ip && !bcast) {
		netif_drop(nif, m, LUNAR_DROP_IP_NOT_FOR_US);
		return;
	}
	/*
	 * RFC 1122 3.2.1.3: a (directed) broadcast is never a source; nor is
	 * our own address (a spoof: answering it would ARP for ourselves), nor
	 * 0.0.0.0 but to a broadcast (a booting host's DHCP): a reply would go
	 * to 0.0.0.0, which (a) forbids as a destination. As Linux's martians.
	 */
	if (is_broadcast(nif, ir.src) || ir.src == nif->ip || (ir.src == 0 && !bcast)) {
		netif_drop(nif, m, LUNAR_DROP_IP_BAD_SRC);
		return;
	}
	/* RFC 1122 3.3.6: a link-layer broadcast must carry an IP broadcast. */
	if (link_bcast && !bcast) {
		netif_drop(nif, m, LUNAR_DROP_IP_LINK_BCAST);
		return;
	}
	/*
	 * A source route asks the answer to go back along it (RFC 1122
	 * 3.2.1.8), which lunar does not do: answered directly it would reach
	 * a sender that spoofed the source address behind the route.
	 */
	if (ir.opt_flags & (IPV4_OPT_LSRR | IPV4_OPT_SSRR)) {
		netif_drop(nif, m, LUNAR_DROP_IP_SOURCE_ROUTE);
		return;
	}
	nif->ctr.rx_ipv4++;
	switch (ir.proto) {
	case IPPROTO_ICMP:
		icmp_input(nif, m, &ir, bcast);
		return;
	case IPPROTO_UDP:
		udp_input(nif, m, &ir, l4_ok, bcast || link_bcast);
		return;
	case IPPROTO_TCP: {
		struct tcp_repr tr;

		/*
		 * RFC 1122 4.2.3.10: a SYN to a broadcast address MUST be
		 * discarded. No connection can have one at its end, so no other
		 * segment either, and nothing may answer one (a RST would even
		 * claim the broadcast address as its source).
		 */
		if (bcast) {
			netif_drop(nif, m, LUNAR_DROP_TCP_BROADCAST);
			return;
		}
		why = tcp_parse(ir.payload, ir.payload_len, ir.src, ir.dst, !l4_ok, &tr);
		if (why) {
			netif_drop(nif, m, why);
			return;
		}
		nif->ctr.rx_tcp++;
		tr.ecn = ir.tos & TCP_ECN_MASK;
		if (nif->tcp_fn)
			nif->tcp_fn(nif->tcp_ctx, &ir, &tr, m);
		else
			netif_drop(nif, m, LUNAR_DROP_TCP_NO_LISTENER);
		return;
	}
	default:
		icmp_unreachable(nif, &ir, ICMP_CODE_PROTO_UNREACH, bcast || link_bcast);
		netif_drop(nif, m, LUNAR_DROP_IP_UNKNOWN_PROTO);
	}
}

void netif_input(struct netif *nif, struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	nif->now_ns = now_ns;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct eth_repr er;
		enum lunar_drop why;

		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		nif->ctr.rx_frames++;
		if (m->nb_segs != 1) {
			/* The pool is sized for the MTU, so only an oversized frame chains. */
			netif_drop(nif, m, LUNAR_DROP_ETH_CHAINED);
			continue;
		}
		why = eth_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), &er);
		if (why) {
			netif_drop(nif, m, why);
			continue;
		}
		if (!rte_is_same_ether_addr(&er.dst, &nif->mac) &&
		    !rte_is_broadcast_ether_addr(&er.dst)) {
			netif_drop(nif, m, LUNAR_DROP_ETH_NOT_FOR_US);
			continue;
		}
		switch (er.ethertype) {
		case RTE_ETHER_TYPE_ARP:
			arp_input(nif, m, er.payload, er.payload_len);
			break;
		case RTE_ETHER_TYPE_IPV4:
			ipv4_input(nif, m, er.payload, er.payload_len,
				   rte_is_broadcast_ether_addr(&er.dst));
			break;
		default:
			netif_drop(nif, m, LUNAR_DROP_ETH_UNKNOWN_TYPE);
		}
	}
	tcp_catch_up(nif);
}

void netif_timers(struct netif *nif, uint64_t now_ns)
{
	nif->now_ns = now_ns;
	for (unsigned i = 0; i < NEIGH_TABLE_SIZE; i++) {
		struct neigh_entry *e = &nif->neigh.e[i];

		switch (e->state) {
		case NEIGH_INCOMPLETE:
			if (now_ns < e->next_try_ns)
				break;
			if (e->tries >= nif->arp_retries) {
				neigh_fail(nif, e);
				i--; /* backward shift may have moved an entry here */
				break;
			}
			neigh_ask(nif, e, false);
			break;
		case NEIGH_REACHABLE:
			if (now_ns >= e->expires_ns) {
				/* RFC 1122 2.3.2.1: stale entries are revalidated, not trusted
				 * forever. */
				e->state = NEIGH_STALE;
				e->tries = 0;
				e->next_try_ns = now_ns;
				if (e->last_used_ns < e->expires_ns - nif->arp_reachable_ns)
					e->last_used_ns = e->expires_ns - nif->arp_reachable_ns;
			}
			break;
		case NEIGH_STALE:
			/* Unanswered refreshes, or nobody sent to it for a lifetime: forget it. */
			if ((e->tries >= nif->arp_retries && now_ns >= e->next_try_ns) ||
			    now_ns - e->last_used_ns >= nif->arp_reachable_ns) {
				neigh_remove(&nif->neigh, e);
				nif->ctr.neigh_expired++;
				i--;
			}
			break;
		default:
			break;
		}
	}
}

/* ---- ICMP echo and UDP sockets ---- */

int netif_icmp_echo(struct netif *nif, uint32_t dst, uint16_t id, uint16_t seq, size_t len)
{
	struct rte_mbuf *m;
	uint8_t *p;
	int rc = alloc_l4(nif, 8, len, &m, &p);

	if (rc)
		return rc;
	for (size_t i = 0; i < len; i++)
		p[8 + i] = (uint8_t)i; /* a pattern, like ping(8), to spot corruption */
	icmp_emit(p, 8 + len,
		  &(struct icmp_repr){.type = RTE_IP_ICMP_ECHO_REQUEST,
				      .id = id,
				      .seq = seq,
				      .data = p + 8,
				      .data_len = len});
	nif->ctr.tx_icmp_echo_request++;
	return netif_ipv4_output(nif, m, dst, IPPROTO_ICMP, 0);
}

void netif_set_echo_handler(struct netif *nif, netif_echo_fn fn, void *ctx)
{
	nif->echo_fn = fn;
	nif->echo_ctx = ctx;
}

int netif_udp_bind(struct netif *nif, uint16_t port, netif_udp_fn fn, void *ctx)
{
	for (unsigned i = 0; i < nif->n_udp; i++)
		if (nif->udp[i].port == port)
			return -EADDRINUSE;
	if (nif->n_udp == UDP_MAX_SOCKETS)
		return -ENOSPC;
	nif->udp[nif->n_udp++] = (struct udp_binding){port, fn, ctx};
	return 0;
}

void netif_udp_unbind(struct netif *nif, uint16_t port)
{
	for (unsigned i = 0; i < nif->n_udp; i++)
		if (nif->udp[i].port == port)
			nif->udp[i] = nif->udp[--nif->n_udp];
}

int netif_udp_send(struct netif *nif, uint16_t sport, uint32_t dst, uint16_t dport,
		   const void *data, size_t len)
{
	struct udp_repr ur = {.sport = sport, .dport = dport, .payload_len = len};
	struct rte_mbuf *m;
	uint8_t *p;
	int rc = alloc_l4(nif, 8, len, &m, &p);

	if (rc)
		return rc;
	memcpy(p + 8, data, len); /* the copying API; zero-copy send comes with api/ */
	if (nif->port->offloads & PORT_OFFLOAD_TX_L4_CKSUM) {
		/* DPDK contract: the checksum field holds the pseudo-header sum. */
		uint16_t phdr = inet_csum_pseudo(nif->ip, dst, IPPROTO_UDP, (uint32_t)(8 + len));

		udp_emit(p, 8 + len, &ur, nif->ip, dst, false);
		memcpy(p + 6, &phdr, sizeof(phdr));
		m->l4_len = 8;
		m->ol_flags |= RTE_MBUF_F_TX_UDP_CKSUM;
	} else {
		udp_emit(p, 8 + len, &ur, nif->ip, dst, true);
	}
	nif->ctr.tx_udp++;
	return netif_ipv4_output(nif, m, dst, IPPROTO_UDP, 0);
}

/* ---- setup and introspection ---- */

int netif_init(struct netif *nif, const struct netif_config *cfg)
{
	memset(nif, 0, sizeof(*nif));
	if (!cfg->port || !cfg->ip || cfg->prefix_len > 32)
		return -EINVAL;
	nif->port = cfg->port;
	nif->mac = cfg->port->mac;
	nif->mtu = cfg->port->mtu ? cfg->port->mtu : 1500;
	nif->ip = cfg->ip;
	nif->prefix_len = cfg->prefix_len;
	nif->netmask = mask_of(cfg->prefix_len);
	nif->gateway = cfg->gateway;
	nif->neigh_mode = cfg->neigh_mode;
	nif->arp_reachable_ns = cfg->arp_reachable_ns ? cfg->arp_reachable_ns : 30 * ONE_SECOND_NS;
	nif->arp_retry_ns = cfg->arp_retry_ns ? cfg->arp_retry_ns : ONE_SECOND_NS;
	nif->arp_retries = cfg->arp_retries ? cfg->arp_retries : 3;
	nif->kernel_resolve = cfg->kernel_resolve;
	nif->kernel_ctx = cfg->kernel_ctx;
	if (cfg->icmp_errors_per_sec)
		nif->icmp_errors_per_sec = cfg->icmp_errors_per_sec;
	else /* the kernel owns all but what is steered to lunar */
		nif->icmp_errors_per_sec =
		    cfg->neigh_mode == NEIGH_MODE_KERNEL ? NETIF_ICMP_ERRORS_OFF : 1000;
	nif->icmp_errors_burst = cfg->icmp_errors_burst ? cfg->icmp_errors_burst : 50;
	nif->icmp_tokens = (uint64_t)nif->icmp_errors_burst * ONE_SECOND_NS;
	return 0;
}

void netif_fini(struct netif *nif)
{
	for (unsigned i = 0; i < NEIGH_TABLE_SIZE; i++) {
		struct neigh_entry *e = &nif->neigh.e[i];

		for (unsigned k = 0; k < e->n_hold; k++)
			rte_pktmbuf_free(e->hold[k]);
		e->n_hold = 0;
	}
	for (unsigned i = 0; i < nif->txq_len; i++)
		rte_pktmbuf_free(nif->txq[i]);
	nif->txq_len = 0;
}

static const char *const counter_names[] = {
#define X(name, desc) #name,
#include "net/counters.def"
#undef X
};

int64_t netif_counter(const struct netif *nif, const char *name)
{
	const uint64_t *v = (const uint64_t *)&nif->ctr;

	for (unsigned i = 0; i < sizeof(counter_names) / sizeof(counter_names[0]); i++)
		if (!strcmp(counter_names[i], name))
			return (int64_t)v[i];
	for (unsigned i = 1; i < LUNAR_DROP_COUNT; i++)
		if (!strcmp(lunar_drop_name(i), name))
			return (int64_t)nif->ctr.drops[i];
	return -1;
}

void netif_dump(const struct netif *nif, FILE *f)
{
	const uint64_t *v = (const uint64_t *)&nif->ctr;
	char a[16];

	fprintf(f, "netif %s mac " RTE_ETHER_ADDR_PRT_FMT " mtu %u mode %s\n", ip4_str(nif->ip, a),
		RTE_ETHER_ADDR_BYTES(&nif->mac), nif->mtu,
		nif->neigh_mode == NEIGH_MODE_KERNEL ? "kernel-neigh" : "own-arp");
	for (unsigned i = 0; i < sizeof(counter_names) / sizeof(counter_names[0]); i++)
		if (v[i])
			fprintf(f, "  %-22s %lu\n", counter_names[i], v[i]);
	for (unsigned i = 1; i < LUNAR_DROP_COUNT; i++)
		if (nif->ctr.drops[i])
			fprintf(f, "  drop %-17s %lu  (%s)\n", lunar_drop_name(i),
				nif->ctr.drops[i], lunar_drop_desc(i));
}
