/*
 * fuzz_neigh.c - libFuzzer target for lunar's own ARP with its state: a
 * netif in ARP mode (net/netif.c's arp_input, resolution, hold queues and
 * timers over the table of net/neigh.c) fed ARP frames built from the
 * input or taken raw, IPv4 packets to send (which wait for resolution),
 * gratuitous ARPs and time. fuzz_arp and fuzz_frame check the parser;
 * this checks what a hostile or confused neighbour can make the table do.
 *
 * Input: a set-up byte (bits 0-1 ARP retries - 1, bits 2-3 the retry
 * interval in 100 ms steps - 1, bits 4-5 the entry lifetime in seconds - 1,
 * bit 6 a default route), then operations, each a selector byte and its
 * arguments (missing bytes read as 0). Addresses come from a small pool
 * (hosts on the link, ours, the link's broadcast, 0.0.0.0, 255.255.255.255,
 * the gateway, an address off the link), so that frames meet table entries.
 *
 * After every operation the frames sent are checked, and the table:
 *  - every frame is from our MAC; an ARP frame from our MAC and address;
 *  - an IPv4 frame goes to the broadcast MAC only for a broadcast address,
 *    else to a MAC some ARP frame claimed for its next hop;
 *  - an ARP request asks for an address we sent to (or our own: the
 *    gratuitous one), by broadcast or to a MAC claimed for it, and at most
 *    arp_retries of them follow each send to that address; an ARP reply
 *    answers a request for our address, to the MAC that asked;
 *  - nothing is lost: every packet the netif accepted was sent, is held,
 *    or was dropped as NEIGH_FAILED (the port takes every frame); held
 *    packets only wait on incomplete entries, at most NEIGH_HOLD each; the
 *    table counts what it holds;
 *  - at the end no packet buffer is left in use.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_common.h"
#include "net/netif.h"
#include "port/port.h"
#include "wire/arp.h"
#include "wire/eth.h"
#include "wire/ipv4.h"

#define MS	   1000000ull
#define SEC	   1000000000ull
#define OUR_IP	   0x0a000001u /* 10.0.0.1/24 */
#define GW_IP	   0x0a0000feu /* 10.0.0.254 */
#define OFF_LINK   0xc0a80505u /* 192.168.5.5 */
#define N_MACS	   8	       /* the stations' MACs, 02:00:00:00:00:01..08 */
#define MAX_CLAIMS 256
#define MAX_ASKERS 64
#define POOL_MBUFS 4095

static const uint32_t ip_pool[] = {
    0x0a000002u, 0x0a000003u, 0x0a000004u, 0x0a000005u, 0x0a000006u, 0x0a000007u,
    OUR_IP,	 0x0a0000ffu, 0,	   0xffffffffu, GW_IP,	     OFF_LINK,
};
#define N_IPS (sizeof(ip_pool) / sizeof(ip_pool[0]))

struct cap_port {
	struct port base;
	struct rte_mbuf *tx[NETIF_TXQ];
	unsigned n;
};

/* An (address, MAC) pair seen in an ARP frame: a claim, or a request for our address. */
struct pair {
	uint32_t ip;
	struct rte_ether_addr mac;
};

static struct {
	struct cap_port port;
	struct netif nif;
	uint64_t now;
	struct pair claims[MAX_CLAIMS], askers[MAX_ASKERS];
	unsigned n_claims, n_askers;
	bool claims_full, askers_full;
	bool asked[N_IPS];	  /* we sent to this pool address's next hop */
	unsigned requests[N_IPS]; /* requests for its next hop since we last sent there */
	uint64_t accepted;	  /* packets netif_udp_send() took (returned 0) */
	uint64_t ipv4_frames;	  /* IPv4 frames sent */
} fz;

static struct rte_mempool *pool;
static unsigned pool_base;

static struct rte_ether_addr station_mac(unsigned i)
{
	return (struct rte_ether_addr){{0x02, 0, 0, 0, 0, (uint8_t)(i + 1)}};
}

static uint16_t cap_tx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct cap_port *cp = (struct cap_port *)p;
	uint16_t room = (uint16_t)(NETIF_TXQ - cp->n);

	if (n > room)
		n = room; /* the rest stays queued in the netif: checked next time */
	memcpy(cp->tx + cp->n, pkts, n * sizeof(*pkts));
	cp->n += n;
	return n;
}

static const struct port_ops cap_ops = {.rx_burst = fuzz_port_no_rx, .tx_burst = cap_tx};

/* ---- the model ---- */

static bool pair_in(const struct pair *v, unsigned n, uint32_t ip, const struct rte_ether_addr *mac)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i].ip == ip && rte_is_same_ether_addr(&v[i].mac, mac))
			return true;
	return false;
}

static void pair_add(struct pair *v, unsigned *n, unsigned cap, bool *full, uint32_t ip,
		     const struct rte_ether_addr *mac)
{
	if (pair_in(v, *n, ip, mac))
		return;
	if (*n == cap) {
		*full = true; /* too many to follow: that check is off for this input */
		return;
	}
	v[*n].ip = ip;
	v[(*n)++].mac = *mac;
}

/* What an ARP frame offered to the netif could teach it (whether it is taken or not). */
static void learn(const uint8_t *frame, size_t len)
{
	struct eth_repr er;
	struct arp_repr ar;

	if (eth_parse(frame, len, &er) || er.ethertype != RTE_ETHER_TYPE_ARP ||
	    arp_parse(er.payload, er.payload_len, &ar))
		return;
	/* A frame for another station teaches nothing: netif drops it (ETH_NOT_FOR_US). */
	if (!rte_is_broadcast_ether_addr(&er.dst) && !rte_is_same_ether_addr(&er.dst, &fz.nif.mac))
		return;
	pair_add(fz.claims, &fz.n_claims, MAX_CLAIMS, &fz.claims_full, ar.spa, &ar.sha);
	if (ar.op == RTE_ARP_OP_REQUEST && ar.tpa == OUR_IP)
		pair_add(fz.askers, &fz.n_askers, MAX_ASKERS, &fz.askers_full, ar.spa, &ar.sha);
}

static bool is_bcast_ip(uint32_t ip)
{
	return ip == 0xffffffffu || ip == 0x0a0000ffu;
}

/*
 * Count a request for next hop @hop: the requests for it since we last sent
 * there, this one included, or 0 if we never sent there. Every pool address
 * with that next hop is reset together (op_send), so they count alike.
 */
static unsigned count_request(uint32_t hop)
{
	unsigned n = 0;

	for (unsigned i = 0; i < N_IPS; i++)
		if (fz.asked[i] && netif_next_hop(&fz.nif, ip_pool[i]) == hop)
			n = ++fz.requests[i];
	return n;
}

static void check_arp_frame(const struct eth_repr *er)
{
	struct arp_repr ar;

	FUZZ_CHECK_OK(arp_parse(er->payload, er->payload_len, &ar));
	FUZZ_CHECK(rte_is_same_ether_addr(&ar.sha, &fz.nif.mac) && ar.spa == OUR_IP);
	if (ar.op == RTE_ARP_OP_REQUEST) {
		/* Only for an address we sent to, and each send starts at most
		 * one resolution (or one refresh of a stale entry): arp_retries
		 * requests, no storm. Our own address: the gratuitous one. */
		if (ar.tpa != OUR_IP) {
			unsigned n = count_request(ar.tpa);

			FUZZ_CHECK(n >= 1 && n <= fz.nif.arp_retries);
		}
		FUZZ_CHECK(rte_is_broadcast_ether_addr(&er->dst) || fz.claims_full ||
			   pair_in(fz.claims, fz.n_claims, ar.tpa, &er->dst));
	} else {
		FUZZ_CHECK(ar.op == RTE_ARP_OP_REPLY);
		FUZZ_CHECK(rte_is_same_ether_addr(&er->dst, &ar.tha));
		FUZZ_CHECK(fz.askers_full || pair_in(fz.askers, fz.n_askers, ar.tpa, &er->dst));
	}
}

static void check_ipv4_frame(const struct eth_repr *er)
{
	struct ipv4_repr ir;

	FUZZ_CHECK_OK(ipv4_parse(er->payload, er->payload_len, true, &ir));
	FUZZ_CHECK(ir.src == OUR_IP);
	fz.ipv4_frames++;
	if (rte_is_broadcast_ether_addr(&er->dst)) {
		FUZZ_CHECK(is_bcast_ip(ir.dst));
		return;
	}
	FUZZ_CHECK(!is_bcast_ip(ir.dst));
	FUZZ_CHECK(fz.claims_full ||
		   pair_in(fz.claims, fz.n_claims, netif_next_hop(&fz.nif, ir.dst), &er->dst));
}

/* The table's own bookkeeping, and that no accepted packet went missing. */
static void check_table(void)
{
	unsigned used = 0, held = 0;
	int64_t failed = netif_counter(&fz.nif, "NEIGH_FAILED");

	for (unsigned i = 0; i < NEIGH_TABLE_SIZE; i++) {
		const struct neigh_entry *e = &fz.nif.neigh.e[i];

		if (e->state == NEIGH_FREE) {
			FUZZ_CHECK(e->n_hold == 0);
			continue;
		}
		used++;
		FUZZ_CHECK(e->n_hold <= NEIGH_HOLD);
		FUZZ_CHECK(e->n_hold == 0 || e->state == NEIGH_INCOMPLETE);
		held += e->n_hold;
	}
	FUZZ_CHECK(used == fz.nif.neigh.used);
	FUZZ_CHECK(failed >= 0);
	FUZZ_CHECK(fz.nif.txq_len == 0); /* the port took every frame at the flush */
	FUZZ_CHECK(fz.accepted == fz.ipv4_frames + held + (uint64_t)failed);
}

/* End the step as the loop ends an iteration, then check what went out. */
static void step_end(void)
{
	netif_flush(&fz.nif);
	for (unsigned i = 0; i < fz.port.n; i++) {
		struct rte_mbuf *m = fz.port.tx[i];
		struct eth_repr er;

		FUZZ_CHECK(rte_pktmbuf_is_contiguous(m));
		FUZZ_CHECK_OK(
		    eth_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), &er));
		FUZZ_CHECK(rte_is_same_ether_addr(&er.src, &fz.nif.mac));
		if (er.ethertype == RTE_ETHER_TYPE_ARP)
			check_arp_frame(&er);
		else if (er.ethertype == RTE_ETHER_TYPE_IPV4)
			check_ipv4_frame(&er);
		else
			FUZZ_CHECK(!"a frame of another type");
		rte_pktmbuf_free(m);
	}
	fz.port.n = 0;
	check_table();
}

/* ---- operations ---- */

static void deliver(const uint8_t *frame, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;

	FUZZ_CHECK(m != NULL);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	FUZZ_CHECK(p != NULL);
	memcpy(p, frame, len);
	learn(frame, len);
	netif_input(&fz.nif, &m, 1, fz.now);
}

/* An ARP frame from the pool's addresses and MACs, or with a sender MAC of the input's. */
static void op_arp(struct reader *in)
{
	uint8_t how = rd8(in), who = rd8(in), spa = rd8(in), tpa = rd8(in);
	uint8_t frame[ETH_HDR_LEN + ARP_PKT_LEN];
	struct rte_ether_addr bcast, dst;
	struct arp_repr ar = {.op = (how & 1) ? RTE_ARP_OP_REPLY : RTE_ARP_OP_REQUEST,
			      .spa = ip_pool[spa % N_IPS],
			      .tpa = ip_pool[tpa % N_IPS]};

	memset(&bcast, 0xff, sizeof(bcast));
	if (how & 2)
		ar.op = 3; /* neither */
	if (who % (N_MACS + 1) == N_MACS) {
		for (unsigned i = 0; i < RTE_ETHER_ADDR_LEN; i++)
			ar.sha.addr_bytes[i] = rd8(in); /* perhaps a group or zero address */
	} else {
		ar.sha = station_mac(who % (N_MACS + 1));
	}
	ar.tha = (how & 4) ? fz.nif.mac : station_mac(how >> 5);
	switch ((how >> 3) & 3) {
	case 0:
		dst = bcast;
		break;
	case 1:
		dst = fz.nif.mac;
		break;
	default:
		dst = station_mac(how >> 5); /* not ours: the link is shared */
		break;
	}
	FUZZ_CHECK(eth_emit(frame, sizeof(frame), &dst, &ar.sha, RTE_ETHER_TYPE_ARP) ==
		   ETH_HDR_LEN);
	FUZZ_CHECK(arp_emit(frame + ETH_HDR_LEN, ARP_PKT_LEN, &ar) == ARP_PKT_LEN);
	deliver(frame, sizeof(frame));
}

/* Raw bytes after an Ethernet header to us with the ARP type. */
static void op_raw(struct reader *in)
{
	uint8_t frame[ETH_HDR_LEN + 64];
	size_t len = ETH_HDR_LEN + rd8(in) % 65;
	struct rte_ether_addr src = station_mac(0);

	FUZZ_CHECK(eth_emit(frame, sizeof(frame), &fz.nif.mac, &src, RTE_ETHER_TYPE_ARP) ==
		   ETH_HDR_LEN);
	for (size_t i = ETH_HDR_LEN; i < len; i++)
		frame[i] = rd8(in);
	deliver(frame, len);
}

static void op_send(struct reader *in)
{
	uint8_t to = rd8(in), size = rd8(in);
	static const uint8_t payload[255];
	unsigned k = to % N_IPS;
	uint32_t hop = netif_next_hop(&fz.nif, ip_pool[k]);

	fz.nif.now_ns = fz.now;
	/* Resolution only for an address with a route, and not a broadcast one. */
	if (!is_bcast_ip(ip_pool[k]) && hop != 0) {
		fz.asked[k] = true;
		for (unsigned i = 0; i < N_IPS; i++)
			if (netif_next_hop(&fz.nif, ip_pool[i]) == hop)
				fz.requests[i] = 0;
	}
	if (netif_udp_send(&fz.nif, 40000, ip_pool[k], 9, payload, size) == 0)
		fz.accepted++;
}

static void op_time(struct reader *in)
{
	uint8_t a = rd8(in);

	fz.now += (a & 0x80) ? (uint64_t)(a & 0x7f) * 250 * MS : (uint64_t)a * MS;
	netif_timers(&fz.nif, fz.now);
}

/* ---- set-up and tear-down ---- */

static void setup(struct reader *in)
{
	uint8_t o = rd8(in);
	struct netif_config nc = {.port = &fz.port.base,
				  .ip = OUR_IP,
				  .prefix_len = 24,
				  .neigh_mode = NEIGH_MODE_ARP,
				  .arp_retries = (o & 3) + 1u,
				  .arp_retry_ns = (((o >> 2) & 3) + 1u) * 100 * MS,
				  .arp_reachable_ns = (((o >> 4) & 3) + 1u) * SEC};

	memset(&fz, 0, sizeof(fz));
	fz.now = SEC;
	fz.port.base = (struct port){.ops = &cap_ops,
				     .name = "fuzz",
				     .mac = {{0x02, 0, 0, 0, 0, 0xaa}},
				     .mtu = 1500,
				     .pool = pool};
	FUZZ_CHECK(netif_init(&fz.nif, &nc) == 0);
	fz.nif.now_ns = fz.now;
	if (o & 0x40)
		FUZZ_CHECK(netif_route_add(&fz.nif, 0, 0, GW_IP) == 0);
}

static void teardown(void)
{
	netif_flush(&fz.nif);
	for (unsigned i = 0; i < fz.port.n; i++)
		rte_pktmbuf_free(fz.port.tx[i]);
	fz.port.n = 0;
	netif_fini(&fz.nif);
	FUZZ_CHECK(rte_mempool_in_use_count(pool) == pool_base);
}

static void init_once(void)
{
	static bool done;
	/* No hugepages, no files: as the unit tests' EAL (tests/unit/port/fake_port.c). */
	char *argv[] = {
	    "fuzz_neigh", "--no-pci", "--no-shconf", "--no-telemetry", "--no-huge", "-m",
	    "64",	  "-l",	      "0",	     "--log-level=3",  NULL};

	if (done)
		return;
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		abort();
	}
	pool = rte_pktmbuf_pool_create("fuzz_neigh", POOL_MBUFS, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       (int)rte_socket_id());
	FUZZ_CHECK(pool != NULL);
	pool_base = rte_mempool_in_use_count(pool);
	done = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reader in = {.p = data, .n = size};

	init_once();
	if (size < 1)
		return 0;
	setup(&in);
	while (in.i < in.n) {
		switch (rd8(&in) % 5) {
		case 0:
			op_arp(&in);
			break;
		case 1:
			op_raw(&in);
			break;
		case 2:
			op_send(&in);
			break;
		case 3:
			op_time(&in);
			break;
		default:
			netif_gratuitous_arp(&fz.nif);
			break;
		}
		step_end();
	}
	teardown();
	return 0;
}
