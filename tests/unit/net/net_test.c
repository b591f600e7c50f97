/*
 * net_test.c - netif fixture, frame builders and frame checks shared by the
 * net/ unit tests (see net_test.h).
 */
#include "net_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_mempool.h>

#include "wire/checksum.h"

#define NT_POOL_SIZE 4095 /* room for a full transmit queue (NETIF_TXQ) and more */

const struct rte_ether_addr our_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
const struct rte_ether_addr peer_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}};
const struct rte_ether_addr peer2_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x03}};
const struct rte_ether_addr gw_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0xfe}};
const struct rte_ether_addr other_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x99}};
const struct rte_ether_addr bcast_mac = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
struct rte_mempool *nt_pool;

int nt_group_setup(void **state)
{
	(void)state;
	if (test_eal_init() != 0)
		return -1;
	nt_pool = test_pool_create("net_pool", NT_POOL_SIZE);
	return nt_pool ? 0 : -1;
}

int nt_group_teardown(void **state)
{
	(void)state;
	rte_mempool_free(nt_pool);
	nt_pool = NULL;
	return 0;
}

static int kernel_resolve(void *ctx, uint32_t ip, struct rte_ether_addr *mac)
{
	struct nt *t = ctx;

	t->kernel_asks++;
	t->last_ask_ip = ip;
	if (!t->kernel_knows)
		return 0;
	*mac = t->kernel_mac;
	return 1;
}

struct netif_config nt_config(struct nt *t, enum neigh_mode mode)
{
	return (struct netif_config){
	    .port = &t->fp.base,
	    .ip = OUR_IP,
	    .prefix_len = OUR_PREFIX,
	    .gateway = 0,
	    .neigh_mode = mode,
	    .arp_reachable_ns = T_REACHABLE,
	    .arp_retry_ns = T_RETRY,
	    .arp_retries = T_RETRIES,
	    .kernel_resolve = kernel_resolve,
	    .kernel_ctx = t,
	};
}

void nt_reinit(struct nt *t, const struct netif_config *cfg)
{
	netif_fini(&t->nif);
	assert_int_equal(netif_init(&t->nif, cfg), 0);
}

static int setup_mode(void **state, enum neigh_mode mode)
{
	struct nt *t = calloc(1, sizeof(*t));
	struct netif_config cfg;

	if (!t)
		return -1;
	fake_port_init(&t->fp, nt_pool, "fake0", &our_mac);
	cfg = nt_config(t, mode);
	if (netif_init(&t->nif, &cfg) != 0) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

int nt_setup(void **state)
{
	return setup_mode(state, NEIGH_MODE_ARP);
}

int nt_setup_kernel(void **state)
{
	return setup_mode(state, NEIGH_MODE_KERNEL);
}

int nt_teardown(void **state)
{
	struct nt *t = *state;

	netif_fini(&t->nif);
	fake_port_release(&t->fp);
	free(t);
	/* Every test ends with no mbuf in use: the stack freed what it dropped. */
	assert_int_equal(test_pool_in_use(nt_pool), 0);
	return 0;
}

/* ---- building ---- */

size_t nt_arp_bytes(uint8_t *b, uint16_t op, const struct rte_ether_addr *sha, uint32_t spa,
		    const struct rte_ether_addr *tha, uint32_t tpa)
{
	struct arp_repr r = {.op = op, .sha = *sha, .spa = spa, .tpa = tpa};

	if (tha)
		r.tha = *tha;
	return arp_emit(b, ARP_PKT_LEN, &r);
}

size_t nt_ipv4_bytes(uint8_t *b, uint32_t src, uint32_t dst, uint8_t proto, const void *l4,
		     size_t l4len)
{
	struct ipv4_repr r = {.src = src,
			      .dst = dst,
			      .proto = proto,
			      .ttl = 64,
			      .id = 0x1234,
			      .df = true,
			      .payload_len = l4len};

	assert_int_equal(ipv4_emit(b, IPV4_HDR_LEN, &r, true), IPV4_HDR_LEN);
	memmove(b + IPV4_HDR_LEN, l4, l4len);
	return IPV4_HDR_LEN + l4len;
}

void nt_ipv4_fix_csum(uint8_t *ip)
{
	struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;
	size_t hl = (size_t)(h->version_ihl & 0x0f) * 4;

	h->hdr_checksum = 0;
	h->hdr_checksum = inet_csum(ip, hl);
}

size_t nt_icmp_bytes(uint8_t *b, uint8_t type, uint8_t code, uint16_t id, uint16_t seq,
		     const void *data, size_t len)
{
	struct icmp_repr r = {
	    .type = type, .code = code, .id = id, .seq = seq, .data = data, .data_len = len};
	size_t n = icmp_emit(b, ICMP_HDR_LEN + len, &r);

	assert_int_equal(n, ICMP_HDR_LEN + len);
	return n;
}

static void apply_csum(uint8_t *csum_field, enum nt_csum cs)
{
	uint16_t v;

	if (cs == NT_CSUM_ZERO) {
		memset(csum_field, 0, 2);
	} else if (cs == NT_CSUM_BAD) {
		memcpy(&v, csum_field, 2);
		v ^= 0x0101;
		if (v == 0)
			v = 0x0101; /* stay non-zero: zero would mean "no checksum" */
		memcpy(csum_field, &v, 2);
	}
}

size_t nt_udp_bytes(uint8_t *b, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
		    const void *data, size_t len, enum nt_csum cs)
{
	struct udp_repr r = {.sport = sport, .dport = dport, .payload_len = len};

	memcpy(b + UDP_HDR_LEN, data, len);
	assert_int_equal(udp_emit(b, UDP_HDR_LEN + len, &r, src, dst, true), UDP_HDR_LEN);
	apply_csum(b + 6, cs);
	return UDP_HDR_LEN + len;
}

size_t nt_tcp_bytes(uint8_t *b, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
		    uint8_t flags, enum nt_csum cs)
{
	struct tcp_repr r = {
	    .sport = sport, .dport = dport, .seq = 1000, .ack = 0, .flags = flags, .window = 65535};
	size_t n = tcp_emit(b, TCP_HDR_LEN, &r, NULL, src, dst, true);

	assert_int_equal(n, TCP_HDR_LEN);
	apply_csum(b + 16, cs);
	return n;
}

struct rte_mbuf *nt_frame(const struct rte_ether_addr *dst, const struct rte_ether_addr *src,
			  uint16_t ethertype, const void *payload, size_t len)
{
	uint8_t b[2048];

	assert_true(len + ETH_HDR_LEN <= sizeof(b));
	assert_int_equal(eth_emit(b, ETH_HDR_LEN, dst, src, ethertype), ETH_HDR_LEN);
	memcpy(b + ETH_HDR_LEN, payload, len);
	return test_mbuf(nt_pool, b, ETH_HDR_LEN + len);
}

struct rte_mbuf *nt_mk_arp(uint16_t op, const struct rte_ether_addr *eth_dst,
			   const struct rte_ether_addr *sha, uint32_t spa,
			   const struct rte_ether_addr *tha, uint32_t tpa)
{
	uint8_t b[ARP_PKT_LEN];

	nt_arp_bytes(b, op, sha, spa, tha, tpa);
	return nt_frame(eth_dst, sha, RTE_ETHER_TYPE_ARP, b, sizeof(b));
}

struct rte_mbuf *nt_mk_ip(const struct rte_ether_addr *eth_dst,
			  const struct rte_ether_addr *eth_src, uint32_t src, uint32_t dst,
			  uint8_t proto, const void *l4, size_t l4len)
{
	uint8_t b[2048];
	size_t n = nt_ipv4_bytes(b, src, dst, proto, l4, l4len);

	return nt_frame(eth_dst, eth_src, RTE_ETHER_TYPE_IPV4, b, n);
}

struct rte_mbuf *nt_mk_icmp(const struct rte_ether_addr *eth_dst,
			    const struct rte_ether_addr *eth_src, uint32_t src, uint32_t dst,
			    uint8_t type, uint16_t id, uint16_t seq, const void *data, size_t len)
{
	uint8_t b[2048];
	size_t n = nt_icmp_bytes(b, type, 0, id, seq, data, len);

	return nt_mk_ip(eth_dst, eth_src, src, dst, IPPROTO_ICMP, b, n);
}

struct rte_mbuf *nt_mk_udp(const struct rte_ether_addr *eth_dst,
			   const struct rte_ether_addr *eth_src, uint32_t src, uint32_t dst,
			   uint16_t sport, uint16_t dport, const void *data, size_t len,
			   enum nt_csum cs)
{
	uint8_t b[2048];
	size_t n = nt_udp_bytes(b, src, dst, sport, dport, data, len, cs);

	return nt_mk_ip(eth_dst, eth_src, src, dst, IPPROTO_UDP, b, n);
}

/* ---- driving ---- */

void nt_rx(struct nt *t, struct rte_mbuf *m, uint64_t now_ns)
{
	netif_input(&t->nif, &m, 1, now_ns);
}

unsigned nt_flush(struct nt *t)
{
	netif_flush(&t->nif);
	return t->fp.n_tx;
}

struct rte_mbuf *nt_tx(struct nt *t, unsigned i)
{
	assert_true(i < t->fp.n_tx);
	return t->fp.tx[i];
}

void nt_clear_tx(struct nt *t)
{
	fake_port_clear_tx(&t->fp);
}

uint64_t nt_drops(const struct nt *t, enum lunar_drop reason)
{
	return t->nif.ctr.drops[reason];
}

uint64_t nt_total_drops(const struct nt *t)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < LUNAR_DROP_COUNT; i++)
		n += t->nif.ctr.drops[i];
	return n;
}

void nt_learn(struct nt *t, uint32_t ip, const struct rte_ether_addr *mac)
{
	netif_neigh_update(&t->nif, ip, mac, true);
}

int nt_send_marked(struct nt *t, uint32_t dst, unsigned n)
{
	char b[32];
	int len = snprintf(b, sizeof(b), "pkt%u", n);

	return netif_udp_send(&t->nif, 5000, dst, 7000, b, (size_t)len);
}

unsigned nt_marker(struct rte_mbuf *m)
{
	struct nt_pkt p;
	char b[32];
	unsigned n;

	nt_parse(m, &p);
	assert_int_equal(p.ip.proto, IPPROTO_UDP);
	assert_true(p.udp.payload_len < sizeof(b));
	memcpy(b, p.udp.payload, p.udp.payload_len);
	b[p.udp.payload_len] = '\0';
	assert_int_equal(sscanf(b, "pkt%u", &n), 1);
	return n;
}

/* ---- checking ---- */

void nt_parse(struct rte_mbuf *m, struct nt_pkt *o)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);

	memset(o, 0, sizeof(*o));
	assert_int_equal(m->nb_segs, 1);
	assert_int_equal(m->pkt_len, m->data_len);
	assert_int_equal(eth_parse(d, m->data_len, &o->eth), LUNAR_DROP_NONE);
	if (o->eth.ethertype == RTE_ETHER_TYPE_ARP) {
		assert_int_equal(arp_parse(o->eth.payload, o->eth.payload_len, &o->arp),
				 LUNAR_DROP_NONE);
		return;
	}
	assert_int_equal(o->eth.ethertype, RTE_ETHER_TYPE_IPV4);
	assert_int_equal(ipv4_parse(o->eth.payload, o->eth.payload_len, true, &o->ip),
			 LUNAR_DROP_NONE);
	assert_int_equal(o->ip.total_len, o->eth.payload_len); /* no stray bytes */
	if (o->ip.proto == IPPROTO_ICMP)
		assert_int_equal(icmp_parse(o->ip.payload, o->ip.payload_len, &o->icmp),
				 LUNAR_DROP_NONE);
	else if (o->ip.proto == IPPROTO_UDP)
		assert_int_equal(udp_parse(o->ip.payload, o->ip.payload_len, o->ip.src, o->ip.dst,
					   true, &o->udp),
				 LUNAR_DROP_NONE);
}

void nt_assert_arp_request(struct rte_mbuf *m, const struct rte_ether_addr *eth_dst, uint32_t tpa)
{
	static const struct rte_ether_addr zero_mac;
	struct nt_pkt p;

	nt_parse(m, &p);
	assert_int_equal(p.eth.ethertype, RTE_ETHER_TYPE_ARP);
	assert_memory_equal(&p.eth.dst, eth_dst, sizeof(*eth_dst));
	assert_memory_equal(&p.eth.src, &our_mac, sizeof(our_mac));
	assert_int_equal(p.arp.op, RTE_ARP_OP_REQUEST);
	assert_memory_equal(&p.arp.sha, &our_mac, sizeof(our_mac));
	assert_int_equal(p.arp.spa, OUR_IP);
	assert_memory_equal(&p.arp.tha, &zero_mac, sizeof(zero_mac));
	assert_int_equal(p.arp.tpa, tpa);
}

void nt_assert_unreachable(struct rte_mbuf *m, uint8_t code, struct nt_pkt *p)
{
	nt_parse(m, p); /* IPv4 and ICMP checksums verified */
	assert_memory_equal(&p->eth.dst, &peer_mac, sizeof(peer_mac));
	assert_int_equal(p->ip.src, OUR_IP);
	assert_int_equal(p->ip.dst, PEER_IP);
	assert_int_equal(p->ip.proto, IPPROTO_ICMP);
	assert_int_equal(p->icmp.type, ICMP_TYPE_DEST_UNREACH);
	assert_int_equal(p->icmp.code, code);
	assert_int_equal(p->icmp.id, 0);
	assert_int_equal(p->icmp.seq, 0);
}
