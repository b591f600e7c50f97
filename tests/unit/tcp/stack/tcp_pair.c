/*
 * tcp_pair.c - two TCP stacks over fake ports in one process, on a
 * virtual clock (see tcp_pair.h).
 */
#include "tcp_pair.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "mem/zbuf.h"
#include "wire/checksum.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"

#define POOL_MBUFS 1000 /* one mbuf zone; a 256 KiB window is about 180 frames */
#define RX_BURST   32

static const struct rte_ether_addr mac_a = {{0x02, 0, 0, 0, 0, 0x0a}};
static const struct rte_ether_addr mac_b = {{0x02, 0, 0, 0, 0, 0x0b}};
static struct rte_mempool *pool_a, *pool_b, *hdr_pool;
static unsigned pool_a_base, pool_b_base; /* in use when idle (slots under zone headers) */

int pair_group_setup(void **state)
{
	/* Small classes: a test can run the application's Zbuf out quickly. */
	struct zbuf_config zc = {
	    .backend = ZBUF_BACKEND_DPDK, .zones = {1, 1, 1, 1}, .socket_id = SOCKET_ID_ANY};
	uint16_t room;
	unsigned zones;

	(void)state;
	if (test_eal_init())
		return -1;
	if (zbuf_pktpool_geometry(POOL_MBUFS, 1500 + 64, &room, &zones))
		return -1;
	zc.mbuf_zones = 2 * zones;
	if (zbuf_init(&zc))
		return -1;
	pool_a = zbuf_pktpool_create("pair_a", POOL_MBUFS, room);
	pool_b = zbuf_pktpool_create("pair_b", POOL_MBUFS, room);
	hdr_pool = test_pool_create("pair_hdr", 2048);
	if (!pool_a || !pool_b || !hdr_pool)
		return -1;
	pool_a_base = rte_mempool_in_use_count(pool_a);
	pool_b_base = rte_mempool_in_use_count(pool_b);
	return 0;
}

int pair_group_teardown(void **state)
{
	(void)state;
	rte_mempool_free(hdr_pool);
	zbuf_fini(); /* frees the packet pools */
	return 0;
}

void pair_fill(uint8_t *buf, size_t len, uint64_t off)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pair_byte(off + i);
}

bool pair_copied = false, pair_attached = true;

void pair_rcvd_ok(const struct tcp_pair *p, size_t len)
{
	assert_int_equal(p->rcvd_len, len);
	for (size_t i = 0; i < len; i++)
		if (p->rcvd[i] != pair_byte(i))
			fail_msg("received byte %zu is %#x, sent %#x", i, p->rcvd[i], pair_byte(i));
}

static void on_cli(struct tcp_sock *s, uint32_t events, void *ctx)
{
	struct tcp_pair *p = ctx;

	(void)s;
	p->cli_events |= events;
}

/* The server takes everything that arrives, by copy, into p->rcvd. */
void pair_on_srv(struct tcp_sock *s, uint32_t events, void *ctx)
{
	struct tcp_pair *p = ctx;
	size_t n;

	p->srv_events |= events;
	if (!(events & TCP_EV_READABLE))
		return;
	do {
		if (p->rcvd_cap - p->rcvd_len < 4096) {
			p->rcvd_cap = p->rcvd_cap ? 2 * p->rcvd_cap : 65536;
			p->rcvd = realloc(p->rcvd, p->rcvd_cap);
			assert_non_null(p->rcvd);
		}
		n = tcp_sock_read(s, p->rcvd + p->rcvd_len, p->rcvd_cap - p->rcvd_len);
		if (p->srv_echo && n)
			assert_int_equal(tcp_sock_send(s, p->rcvd + p->rcvd_len, (uint32_t)n),
					 (int)n);
		p->rcvd_len += n;
	} while (n);
}

static void on_accept(struct tcp_listener *l, void *ctx)
{
	struct tcp_pair *p = ctx;

	assert_null(p->srv);
	p->srv = tcp_accept(l, pair_on_srv, p);
	assert_non_null(p->srv);
}

unsigned pair_max_conns = 64;
unsigned pair_workers = 1;
bool pair_tso = false;
uint16_t pair_reserved_lo = 61440;

static void side_open(struct tcp_pair *p, struct pair_side *s, uint32_t ip, uint32_t peer_ip,
		      const struct rte_ether_addr *peer_mac, const struct tcp_config *cfg,
		      bool attach)
{
	struct netif_config nc = {
	    .port = &s->fp.base, .ip = ip, .prefix_len = 24, .neigh_mode = NEIGH_MODE_ARP};

	if (attach)
		s->fp.base.offloads = PORT_OFFLOAD_TX_MULTISEG;
	s->tso = pair_tso;
	if (pair_tso) /* as tap's: the checksum and TSO, chains taken (the copy needs them) */
		s->fp.base.offloads =
		    PORT_OFFLOAD_TX_MULTISEG | PORT_OFFLOAD_TX_L4_CKSUM | PORT_OFFLOAD_TX_TSO;
	assert_int_equal(netif_init(&s->nif, &nc), 0);
	s->nif.now_ns = p->now;
	netif_neigh_update(&s->nif, peer_ip, peer_mac, true);
	s->tcp = tcp_stack_create(&s->nif, cfg, pair_max_conns, &p->plan, 0);
	assert_non_null(s->tcp);
	if (attach)
		tcp_stack_set_hdr_pool(s->tcp, hdr_pool);
	tcp_stack_defer_to_tx(s->tcp, true); /* as lunar_env_poll() runs it */
	tcp_stack_poll(s->tcp, p->now);	     /* the time, before any call */
}

void pair_config(struct tcp_config *cfg)
{
	tcp_config_default(cfg);
	cfg->nodelay = true;
	cfg->snd_buf = cfg->rcv_buf = 262144; /* a window of frames fits either pool 5 times over */
}

void pair_stacks_cfg(struct tcp_pair *p, bool attach, const struct tcp_config *cfg)
{
	pair_stacks_cfgs(p, attach, cfg, cfg);
}

void pair_stacks_cfgs(struct tcp_pair *p, bool attach, const struct tcp_config *cfg_a,
		      const struct tcp_config *cfg_b)
{
	char err[128];

	memset(p, 0, sizeof(*p));
	p->now = 1000000000ull;
	assert_int_equal(
	    flow_plan_init(&p->plan, pair_workers, pair_reserved_lo, 65535, err, sizeof(err)), 0);
	fake_port_init(&p->a.fp, pool_a, "pair_a", &mac_a);
	fake_port_init(&p->b.fp, pool_b, "pair_b", &mac_b);
	side_open(p, &p->a, PAIR_IP_A, PAIR_IP_B, &mac_b, cfg_a, attach);
	side_open(p, &p->b, PAIR_IP_B, PAIR_IP_A, &mac_a, cfg_b, attach);
}

void pair_stacks(struct tcp_pair *p, bool attach)
{
	struct tcp_config cfg;

	pair_config(&cfg);
	pair_stacks_cfg(p, attach, &cfg);
}

void pair_open(struct tcp_pair *p, bool attach)
{
	struct tcp_config cfg;

	pair_config(&cfg);
	pair_open_cfgs(p, attach, &cfg, &cfg);
}

void pair_open_cfgs(struct tcp_pair *p, bool attach, const struct tcp_config *cfg_a,
		    const struct tcp_config *cfg_b)
{
	int rc;

	pair_stacks_cfgs(p, attach, cfg_a, cfg_b);
	p->lst = tcp_listen_on(p->b.tcp, PAIR_PORT, 4, on_accept, p, &rc);
	assert_non_null(p->lst);
	p->cli = tcp_connect_to(p->a.tcp, PAIR_IP_B, PAIR_PORT, on_cli, p, &rc);
	assert_non_null(p->cli);
	pair_run(p, 1000000);
	assert_true(p->cli_events & TCP_EV_CONNECTED);
	assert_non_null(p->srv);
}

void pair_poll_to_tx(struct tcp_pair *p, struct pair_side *s)
{
	struct rte_mbuf *pkts[RX_BURST];
	uint16_t n;

	zbuf_defer_begin();
	while ((n = port_rx_burst(&s->fp.base, pkts, RX_BURST)) > 0)
		netif_input(&s->nif, pkts, n, p->now);
	tcp_stack_poll(s->tcp, p->now);
	netif_timers(&s->nif, p->now);
	netif_flush(&s->nif);
}

/* One loop iteration of a side, as lunar_env_poll() runs it. */
static void side_poll(struct tcp_pair *p, struct pair_side *s)
{
	pair_poll_to_tx(p, s);
	tcp_stack_after_tx(s->tcp);
	zbuf_defer_end();
}

/* @len bytes of frame at @f into a buffer of @to's pool, received at its next step. */
static void wire_deliver(struct pair_side *to, const uint8_t *f, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(to->fp.base.pool);
	uint8_t *d;

	assert_non_null(m);
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	assert_non_null(d);
	memcpy(d, f, len);
	fake_port_inject(&to->fp, m);
}

/*
 * The TCP checksum a NIC puts in: the sum of the segment with the
 * pseudo-header's partial sum the stack left in the field (DPDK's rule),
 * plus the segment's length when the stack left it out (TSO).
 */
static void nic_tcp_csum(uint8_t *l4, uint32_t l4_len, bool add_len)
{
	uint16_t sum = inet_csum_partial(l4, l4_len);

	if (add_len)
		sum = inet_csum_add(sum, rte_cpu_to_be_16((uint16_t)l4_len));
	sum = (uint16_t)~sum;
	memcpy(l4 + 16, &sum, sizeof(sum));
}

/*
 * What a NIC does with frame @f's transmit offloads (pair_tso): the TCP
 * checksum (RTE_MBUF_F_TX_TCP_CKSUM), and with RTE_MBUF_F_TX_TCP_SEG the
 * frame cut into segments of @segsz payload bytes, each with its own IP
 * length, ID and checksum and sequence number, FIN and PSH on the last
 * only and CWR on the first only (RFC 3168 6.1.2, as Linux's GSO does).
 */
static void nic_transmit(struct pair_side *to, uint8_t *f, uint32_t len, uint64_t ol,
			 uint16_t segsz)
{
	static uint8_t seg[RTE_ETHER_HDR_LEN + 60 + 60 + 9000];
	uint8_t *ip = f + RTE_ETHER_HDR_LEN, *l4;
	uint32_t ihl = (ip[0] & 0xfu) * 4, thl, hdrs, pay, seq;
	uint16_t id;

	if (!(ol & RTE_MBUF_F_TX_TCP_CKSUM)) {
		wire_deliver(to, f, len);
		return;
	}
	l4 = ip + ihl;
	thl = (l4[12] >> 4) * 4u;
	hdrs = RTE_ETHER_HDR_LEN + ihl + thl;
	assert_true(len >= hdrs);
	if (!(ol & RTE_MBUF_F_TX_TCP_SEG)) {
		nic_tcp_csum(l4, len - RTE_ETHER_HDR_LEN - ihl, false);
		wire_deliver(to, f, len);
		return;
	}
	assert_true(segsz > 0 && segsz <= 9000);
	pay = len - hdrs;
	assert_true(pay > segsz); /* a frame for the NIC to cut is more than one segment */
	seq = (uint32_t)l4[4] << 24 | (uint32_t)l4[5] << 16 | (uint32_t)l4[6] << 8 | l4[7];
	id = (uint16_t)(ip[4] << 8 | ip[5]);
	for (uint32_t off = 0, i = 0; off < pay; off += segsz, i++) {
		uint32_t n = pay - off < segsz ? pay - off : segsz;
		uint8_t *sip = seg + RTE_ETHER_HDR_LEN, *sl4 = sip + ihl;
		uint16_t tot = (uint16_t)(ihl + thl + n), csum;
		uint32_t sseq = seq + off;

		memcpy(seg, f, hdrs);
		memcpy(seg + hdrs, f + hdrs + off, n);
		sip[2] = (uint8_t)(tot >> 8);
		sip[3] = (uint8_t)tot;
		sip[4] = (uint8_t)((id + i) >> 8);
		sip[5] = (uint8_t)(id + i);
		sip[10] = sip[11] = 0;
		csum = inet_csum(sip, ihl);
		memcpy(sip + 10, &csum, sizeof(csum));
		sl4[4] = (uint8_t)(sseq >> 24);
		sl4[5] = (uint8_t)(sseq >> 16);
		sl4[6] = (uint8_t)(sseq >> 8);
		sl4[7] = (uint8_t)sseq;
		if (off + n < pay)
			sl4[13] &= (uint8_t) ~(RTE_TCP_FIN_FLAG | RTE_TCP_PSH_FLAG);
		if (i)
			sl4[13] &= (uint8_t)~RTE_TCP_CWR_FLAG;
		nic_tcp_csum(sl4, thl + n, true);
		wire_deliver(to, seg, hdrs + n);
	}
}

/*
 * The wire: each frame @from sent is copied into a buffer of @to's pool
 * (a chain, attached payload included, arrives as one frame; with
 * pair_tso the NIC's offloads done first) and the original freed, as a
 * port does once it has put a frame on the wire.
 */
/* The first @n frames @from sent (all if fewer) carried; the rest wait. */
static void carry_n(struct pair_side *from, struct pair_side *to, unsigned n)
{
	static uint8_t frame[RTE_ETHER_HDR_LEN + 65535];

	if (n > from->fp.n_tx)
		n = from->fp.n_tx;
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *f = from->fp.tx[i];
		const void *src;

		assert_true(f->pkt_len <= sizeof(frame));
		src = rte_pktmbuf_read(f, 0, f->pkt_len, frame);
		if (src != frame)
			memcpy(frame, src, f->pkt_len);
		if (from->tso) {
			from->nic_segs_in += !!(f->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
			nic_transmit(to, frame, f->pkt_len, f->ol_flags, f->tso_segsz);
		} else {
			wire_deliver(to, frame, f->pkt_len);
		}
		rte_pktmbuf_free(f);
	}
	from->fp.n_tx -= n;
	if (from->fp.n_tx) /* (tx is NULL until the port's first frame) */
		memmove(from->fp.tx, from->fp.tx + n, from->fp.n_tx * sizeof(from->fp.tx[0]));
}

static void carry(struct pair_side *from, struct pair_side *to)
{
	carry_n(from, to, from->fp.n_tx);
}

void pair_release_b(struct tcp_pair *p, unsigned n)
{
	carry_n(&p->b, &p->a, n);
}

struct rte_mempool *pair_hdr_pool(void)
{
	return hdr_pool;
}

void pair_release_a(struct tcp_pair *p, unsigned n)
{
	carry_n(&p->a, &p->b, n);
}

void pair_inject(struct tcp_pair *p, struct pair_side *to, const struct tcp_repr *r)
{
	bool to_b = to == &p->b;
	struct ipv4_repr ir = {.src = to_b ? PAIR_IP_A : PAIR_IP_B,
			       .dst = to_b ? PAIR_IP_B : PAIR_IP_A,
			       .proto = IPPROTO_TCP,
			       .ttl = 64};
	struct rte_mbuf *m = rte_pktmbuf_alloc(to->fp.base.pool);
	size_t th = tcp_hdr_len(&r->opts),
	       len = RTE_ETHER_HDR_LEN + IPV4_HDR_LEN + th + r->payload_len;
	uint8_t *d;

	assert_non_null(m);
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	assert_non_null(d);
	eth_emit(d, len, to_b ? &mac_b : &mac_a, to_b ? &mac_a : &mac_b, RTE_ETHER_TYPE_IPV4);
	ir.payload_len = th + r->payload_len;
	assert_int_equal(ipv4_emit(d + RTE_ETHER_HDR_LEN, len - RTE_ETHER_HDR_LEN, &ir, true),
			 IPV4_HDR_LEN);
	if (r->payload_len)
		memcpy(d + RTE_ETHER_HDR_LEN + IPV4_HDR_LEN + th, r->payload, r->payload_len);
	assert_int_equal(tcp_emit(d + RTE_ETHER_HDR_LEN + IPV4_HDR_LEN, th + r->payload_len, r,
				  &r->opts, ir.src, ir.dst, true),
			 th);
	fake_port_inject(&to->fp, m);
}

void pair_inject_ip(struct tcp_pair *p, struct pair_side *to, uint32_t src, uint8_t proto,
		    const void *l4, size_t len)
{
	bool to_b = to == &p->b;
	struct ipv4_repr ir = {.src = src,
			       .dst = to_b ? PAIR_IP_B : PAIR_IP_A,
			       .proto = proto,
			       .ttl = 64,
			       .payload_len = len};
	struct rte_mbuf *m = rte_pktmbuf_alloc(to->fp.base.pool);
	size_t flen = RTE_ETHER_HDR_LEN + IPV4_HDR_LEN + len;
	uint8_t *d;

	assert_non_null(m);
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)flen);
	assert_non_null(d);
	eth_emit(d, flen, to_b ? &mac_b : &mac_a, to_b ? &mac_a : &mac_b, RTE_ETHER_TYPE_IPV4);
	assert_int_equal(ipv4_emit(d + RTE_ETHER_HDR_LEN, flen - RTE_ETHER_HDR_LEN, &ir, true),
			 IPV4_HDR_LEN);
	memcpy(d + RTE_ETHER_HDR_LEN + IPV4_HDR_LEN, l4, len);
	fake_port_inject(&to->fp, m);
}

void pair_syn_nowhere(struct tcp_pair *p, uint16_t sport)
{
	struct tcp_repr r;

	memset(&r, 0, sizeof(r));
	r.sport = sport;
	r.dport = PAIR_PORT;
	r.seq = 1000u * sport;
	r.flags = RTE_TCP_SYN_FLAG;
	r.window = 65535;
	r.opts.has_mss = true;
	r.opts.mss = 1460;
	p->hold_b = true;
	pair_inject(p, &p->b, &r);
	pair_step(p);
	pair_discard_tx(&p->b);
	p->hold_b = false;
}

void pair_discard_tx(struct pair_side *s)
{
	for (unsigned i = 0; i < s->fp.n_tx; i++)
		rte_pktmbuf_free(s->fp.tx[i]);
	s->fp.n_tx = 0;
}

/* Frames @s sent whose IPv4 datagram is larger than @mtu are lost (a black hole: no error). */
static void discard_over(struct pair_side *s, uint16_t mtu)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < s->fp.n_tx; i++) {
		struct rte_mbuf *f = s->fp.tx[i];

		if (rte_pktmbuf_pkt_len(f) - RTE_ETHER_HDR_LEN > mtu)
			rte_pktmbuf_free(f);
		else
			s->fp.tx[kept++] = f;
	}
	s->fp.n_tx = kept;
}

void pair_step(struct tcp_pair *p)
{
	p->now += PAIR_STEP_NS;
	side_poll(p, &p->a);
	side_poll(p, &p->b);
	if (p->cut_a)
		pair_discard_tx(&p->a);
	if (p->mtu_a)
		discard_over(&p->a, p->mtu_a);
	if (!p->hold_a)
		carry(&p->a, &p->b);
	if (!p->hold_b)
		carry(&p->b, &p->a);
}

void pair_run(struct tcp_pair *p, uint64_t ns)
{
	for (uint64_t end = p->now + ns; p->now < end;)
		pair_step(p);
}

static void side_close(struct pair_side *s)
{
	tcp_stack_free(s->tcp); /* resets what is still open */
	netif_flush(&s->nif);
	fake_port_release(&s->fp);
	netif_fini(&s->nif);
}

void pair_close(struct tcp_pair *p)
{
	if (p->lst)
		tcp_listener_close(p->lst);
	side_close(&p->a);
	side_close(&p->b);
	free(p->rcvd);
	/* Every frame either side held or sent is back in its pool, every header too. */
	assert_int_equal(rte_mempool_in_use_count(pool_a), pool_a_base);
	assert_int_equal(rte_mempool_in_use_count(pool_b), pool_b_base);
	assert_int_equal(rte_mempool_in_use_count(hdr_pool), 0);
}
