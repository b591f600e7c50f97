/*
 * test_tcp_stack_gso.c - software segmentation (tcp_config.gso): on a port
 * without TSO the core sends a segment of several MSSs and tcp_stack cuts
 * it into frames. What the peer sees must be what MSS-sized segments
 * would have been: each frame within the MSS, in sequence, checksummed,
 * the same ACK, window and options, PSH and FIN on the last frame only;
 * and a frame lost on the way costs one MSS resent, not the whole
 * segment. Each test runs with the payload copied into the frames and
 * attached to them (the two framings of tcp_stack.c). The last tests give
 * the port TSO instead (pair_tso: the wire cuts and checksums as a NIC
 * would), so the frames of up to 64 KiB, chained beyond one buffer when
 * copied, go out whole and must arrive as the stream that was sent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_pair.h"
#include "tcp/tcp_cc.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"

#define MSG 4000 /* at MTU 1500: 1448 + 1448 + 1104 */
#define MSS 1448

/* One frame the client sent, parsed (checksums verified) from a flat copy. */
struct frame {
	uint8_t buf[2048];
	struct ipv4_repr ip;
	struct tcp_repr tcp;
};

static void parse_frame(struct tcp_pair *p, unsigned i, struct frame *f)
{
	struct rte_mbuf *m = p->a.fp.tx[i];
	uint32_t len = rte_pktmbuf_pkt_len(m);
	const uint8_t *d;
	struct eth_repr er;

	assert_true(i < p->a.fp.n_tx);
	assert_true(len <= sizeof(f->buf));
	d = rte_pktmbuf_read(m, 0, len, f->buf);
	if (d != f->buf)
		memcpy(f->buf, d, len);
	assert_int_equal(eth_parse(f->buf, len, &er), LUNAR_DROP_NONE);
	assert_int_equal(
	    ipv4_parse(f->buf + RTE_ETHER_HDR_LEN, len - RTE_ETHER_HDR_LEN, true, &f->ip),
	    LUNAR_DROP_NONE);
	assert_int_equal(
	    tcp_parse(f->ip.payload, f->ip.payload_len, f->ip.src, f->ip.dst, true, &f->tcp),
	    LUNAR_DROP_NONE);
}

/* The client sends the stream's @len bytes from @off; its frames wait at its port. */
static void client_sends_from(struct tcp_pair *p, uint64_t off, size_t len)
{
	uint8_t *buf = malloc(len);

	assert_non_null(buf);
	pair_fill(buf, len, off);
	assert_int_equal(tcp_sock_send(p->cli, buf, len), (int)len);
	free(buf);
}

/* The client sends the stream's first @len bytes. */
static void client_sends(struct tcp_pair *p, size_t len)
{
	client_sends_from(p, 0, len);
}

/* Connected with @cfg on the client; the server reads into p->rcvd. */
static void open_with(struct tcp_pair *p, bool attach, const struct tcp_config *cfg_a)
{
	struct tcp_config cfg;

	pair_config(&cfg);
	pair_open_cfgs(p, attach, cfg_a, &cfg);
	assert_int_equal(tcp_sock_conn(p->cli)->snd_mss, MSS);
}

/*
 * 4000 bytes, one send: one segment for the core, three frames on the
 * wire, each a valid segment of its own in sequence; PSH on the last.
 */
static void test_cut_into_mss_frames(void **state)
{
	bool attach = *(bool *)*state;
	const uint32_t want[] = {MSS, MSS, MSG - 2 * MSS};
	struct tcp_config cfg;
	struct tcp_pair p;
	struct frame f[3];
	uint64_t gso0, core0;

	pair_config(&cfg);
	open_with(&p, attach, &cfg);
	gso0 = tcp_stack_stats(p.a.tcp)->gso_segs;
	core0 = tcp_sock_conn(p.cli)->stats.segs_out;
	client_sends(&p, MSG);
	netif_flush(&p.a.nif);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->gso_segs - gso0, 1);
	assert_int_equal(tcp_sock_conn(p.cli)->stats.segs_out - core0, 1);
	assert_int_equal(p.a.fp.n_tx, 3);
	for (unsigned i = 0; i < 3; i++) {
		parse_frame(&p, i, &f[i]);
		assert_int_equal(f[i].tcp.payload_len, want[i]);
		assert_int_equal(f[i].tcp.flags & ~RTE_TCP_PSH_FLAG, RTE_TCP_ACK_FLAG);
		assert_int_equal(!!(f[i].tcp.flags & RTE_TCP_PSH_FLAG), i == 2);
		for (uint32_t k = 0; k < want[i]; k++)
			assert_int_equal(f[i].tcp.payload[k], pair_byte(i * MSS + k));
		if (i) {
			assert_int_equal(f[i].tcp.seq, f[i - 1].tcp.seq + want[i - 1]);
			assert_int_equal(f[i].tcp.ack, f[0].tcp.ack);
			assert_int_equal(f[i].tcp.window, f[0].tcp.window);
			assert_int_equal(f[i].tcp.hdr_len, f[0].tcp.hdr_len);
			assert_true(f[i].tcp.opts.has_ts);
			assert_int_equal(f[i].tcp.opts.ts_val, f[0].tcp.opts.ts_val);
			assert_int_not_equal(f[i].ip.id, f[i - 1].ip.id);
		}
	}
	pair_run(&p, 2000000);
	pair_rcvd_ok(&p, MSG);
	assert_int_equal(p.b.nif.ctr.drops[LUNAR_DROP_TCP_BAD_CHECKSUM], 0);
	assert_int_equal(tcp_sock_conn(p.cli)->stats.retransmits, 0);
	pair_close(&p);
}

/* Without GSO the core makes the three segments itself; the wire sees the same frames. */
static void test_off_core_segments(void **state)
{
	bool attach = *(bool *)*state;
	struct tcp_config cfg;
	struct tcp_pair p;
	struct frame f;
	uint64_t core0;

	pair_config(&cfg);
	cfg.gso = false;
	open_with(&p, attach, &cfg);
	core0 = tcp_sock_conn(p.cli)->stats.segs_out;
	client_sends(&p, MSG);
	netif_flush(&p.a.nif);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->gso_segs, 0);
	assert_int_equal(tcp_sock_conn(p.cli)->stats.segs_out - core0, 3);
	assert_int_equal(p.a.fp.n_tx, 3);
	parse_frame(&p, 2, &f);
	assert_int_equal(f.tcp.payload_len, MSG - 2 * MSS);
	pair_run(&p, 2000000);
	pair_rcvd_ok(&p, MSG);
	pair_close(&p);
}

/*
 * A close while data waits for the congestion window: when the window
 * opens, data and FIN go as one segment, and the FIN rides on its last
 * frame only.
 */
static void test_fin_on_last_frame(void **state)
{
	bool attach = *(bool *)*state;
	const size_t iw = 10 * MSS; /* RFC 6928's initial window */
	uint8_t *buf = malloc(iw + MSG);
	struct tcp_config cfg;
	struct tcp_pair p;
	struct frame f;

	assert_non_null(buf);
	pair_config(&cfg);
	open_with(&p, attach, &cfg);
	pair_fill(buf, iw + MSG, 0);
	assert_int_equal(tcp_sock_send(p.cli, buf, iw + MSG), (int)(iw + MSG));
	free(buf);
	tcp_sock_close(p.cli);
	p.cli = NULL;
	pair_step(&p); /* the initial window goes; the rest and the FIN wait */
	p.hold_a = true;
	for (unsigned i = 0; i < 100 && !p.a.fp.n_tx; i++)
		pair_step(&p); /* the server's ACK opens the window */
	assert_int_equal(p.a.fp.n_tx, 3);
	for (unsigned i = 0; i < 3; i++) {
		parse_frame(&p, i, &f);
		assert_int_equal(!!(f.tcp.flags & RTE_TCP_FIN_FLAG), i == 2);
	}
	p.hold_a = false;
	pair_run(&p, 2000000);
	pair_rcvd_ok(&p, iw + MSG);
	assert_true(p.srv_events & TCP_EV_EOF);
	pair_close(&p);
}

/*
 * The middle frame is lost: the server's SACK names the third, and the
 * client resends the one MSS it lacks (the scoreboard keeps MSS-sized
 * records of the cut segment), not the segment the core sent.
 */
static void test_lost_frame_resends_one_mss(void **state)
{
	bool attach = *(bool *)*state;
	struct tcp_config cfg;
	struct tcp_pair p;
	uint64_t bytes0;

	pair_config(&cfg);
	open_with(&p, attach, &cfg);
	client_sends(&p, MSG);
	netif_flush(&p.a.nif);
	assert_int_equal(p.a.fp.n_tx, 3);
	rte_pktmbuf_free(p.a.fp.tx[1]);
	p.a.fp.tx[1] = p.a.fp.tx[2];
	p.a.fp.n_tx = 2;
	bytes0 = tcp_sock_conn(p.cli)->stats.bytes_out;
	pair_run(&p, 200000000);
	pair_rcvd_ok(&p, MSG);
	assert_int_equal(tcp_sock_conn(p.cli)->stats.retransmits, 1);
	assert_int_equal(tcp_sock_conn(p.cli)->stats.bytes_out - bytes0, MSS);
	pair_close(&p);
}

/* The IPv4 header checksum filled in, as a router or a NIC does (DPDK's own sum). */
static void fill_ipv4_csum(struct rte_ipv4_hdr *ip)
{
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

/* Mark the client's held frame @i Congestion Experienced, as a router would (RFC 3168 5). */
static void mark_ce(struct tcp_pair *p, unsigned i)
{
	struct rte_ipv4_hdr *ip =
	    rte_pktmbuf_mtod_offset(p->a.fp.tx[i], struct rte_ipv4_hdr *, RTE_ETHER_HDR_LEN);

	assert_int_equal(ip->type_of_service & 3, 2); /* sent ECT(0) */
	ip->type_of_service |= 3;
	fill_ipv4_csum(ip);
}

/*
 * ECN: after an ECE the next new data carries CWR (RFC 3168 6.1.2), and
 * a segment cut in software carries it on its first frame only, as a NIC
 * cuts a TSO segment; the server's ACKs stop echoing once it has it.
 */
static void test_cwr_on_first_frame_only(void **state)
{
	bool attach = *(bool *)*state;
	struct tcp_config cfg;
	struct tcp_pair p;
	struct frame f[3];

	pair_config(&cfg);
	cfg.ecn = TCP_ECN_ON;
	open_with(&p, attach, &cfg);
	/* The initial window, so that half of it still holds the next segment's three frames. */
	p.hold_a = true;
	client_sends(&p, 10 * MSS);
	netif_flush(&p.a.nif);
	assert_int_equal(p.a.fp.n_tx, 10);
	mark_ce(&p, 0);
	p.hold_a = false;
	pair_run(&p, 2000000);
	pair_rcvd_ok(&p, 10 * MSS);
	assert_int_equal(tcp_sock_conn(p.srv)->stats.ecn_ce, 1);
	assert_int_equal(tcp_sock_conn(p.cli)->stats.ecn_cuts, 1);
	p.hold_a = true;
	client_sends_from(&p, 10 * MSS, MSG);
	netif_flush(&p.a.nif);
	assert_int_equal(p.a.fp.n_tx, 3);
	for (unsigned i = 0; i < 3; i++) {
		parse_frame(&p, i, &f[i]);
		assert_int_equal(!!(f[i].tcp.flags & RTE_TCP_CWR_FLAG), i == 0);
		assert_int_equal(f[i].tcp.flags & RTE_TCP_ECE_FLAG, 0);
		assert_int_equal(f[i].ip.tos & 3, 2); /* every frame ECT(0) */
	}
	p.hold_a = false;
	pair_run(&p, 2000000);
	pair_rcvd_ok(&p, 10 * MSS + MSG);
	/* CWR seen: the server echoes no more, and the client cut its window once. */
	client_sends_from(&p, 10 * MSS + MSG, MSG);
	pair_run(&p, 2000000);
	pair_rcvd_ok(&p, 10 * MSS + 2 * MSG);
	assert_int_equal(tcp_sock_conn(p.cli)->stats.ecn_cuts, 1);
	assert_int_equal(p.b.nif.ctr.drops[LUNAR_DROP_TCP_BAD_CHECKSUM], 0);
	pair_close(&p);
}

/*
 * RFC 3168 6.1.4, 6.1.5: with ECN set up, a segment of new data that goes
 * as one frame (not cut: the framing's single-frame path) is ECT(0), and
 * the pure ACK answering it is not ECN-capable.
 */
static void test_single_frame_data_ect(void **state)
{
	bool attach = *(bool *)*state;
	struct tcp_config cfg;
	struct tcp_pair p;
	struct frame f;

	pair_config(&cfg);
	cfg.ecn = TCP_ECN_ON;
	open_with(&p, attach, &cfg);
	assert_true(tcp_sock_conn(p.cli)->ecn_ok);
	p.hold_a = true;
	client_sends(&p, 100);
	netif_flush(&p.a.nif);
	assert_int_equal(p.a.fp.n_tx, 1);
	parse_frame(&p, 0, &f);
	assert_int_equal(f.tcp.payload_len, 100);
	assert_int_equal(f.ip.tos & 3, 2); /* ECT(0) */
	p.hold_a = false;
	p.hold_b = true;
	pair_step(&p);
	pair_step(&p);
	assert_int_equal(p.b.fp.n_tx, 1); /* the ACK */
	{
		struct rte_mbuf *m = p.b.fp.tx[0];
		const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, RTE_ETHER_HDR_LEN);

		assert_int_equal(m->pkt_len, RTE_ETHER_HDR_LEN + IPV4_HDR_LEN +
						 (ip[IPV4_HDR_LEN + 12] >> 4) * 4);
		assert_int_equal(ip[1] & 3, 0); /* not ECN-capable */
	}
	p.hold_b = false;
	pair_run(&p, 1000000);
	pair_rcvd_ok(&p, 100);
	pair_close(&p);
}

/*
 * A window wider than 64 MSS: one output call sends 64 frames
 * (TCP_OUT_MAX, cut from one segment in software), a full batch for the
 * IPv4 layer (TX_BATCH) and a full port burst (NETIF_TX_BURST). Each goes
 * once, in sequence, a valid segment with the stream's bytes; the rest
 * of the send follows as the ACKs come back.
 */
static void test_full_batch_of_64_frames(void **state)
{
	bool attach = *(bool *)*state;
	const size_t warm = 4 * 1024 * 1024, big = 200 * 1024;
	uint8_t *buf = malloc(warm + big);
	struct tcp_config cfg;
	struct tcp_pair p;
	struct frame *f = malloc(sizeof(*f));
	uint32_t next_seq = 0;
	size_t sent = 0, got = 0;

	assert_non_null(buf);
	assert_non_null(f);
	pair_config(&cfg);
	open_with(&p, attach, &cfg);
	pair_fill(buf, warm + big, 0);
	/* Slow start opens the window beyond 100 MSS (it grows only while it limits the sender). */
	for (unsigned steps = 0; sent < warm && steps < 100000; steps++) {
		int n = tcp_sock_send(p.cli, buf + sent, warm - sent);

		assert_true(n >= 0);
		sent += (size_t)n;
		pair_step(&p);
	}
	pair_run(&p, 2000000);
	pair_rcvd_ok(&p, warm);
	assert_true(tcp_sock_conn(p.cli)->cc.cwnd > 100 * MSS);
	p.hold_a = true;
	assert_int_equal(tcp_sock_send(p.cli, buf + warm, big), (int)big);
	pair_step(&p);
	netif_flush(&p.a.nif);
	assert_int_equal(p.a.fp.n_tx, TCP_OUT_MAX);
	for (unsigned i = 0; i < p.a.fp.n_tx; i++) {
		parse_frame(&p, i, f);
		if (i)
			assert_int_equal(f->tcp.seq, next_seq);
		assert_true(f->tcp.payload_len <= MSS);
		for (uint32_t k = 0; k < f->tcp.payload_len; k++)
			assert_int_equal(f->tcp.payload[k], pair_byte(warm + got + k));
		got += f->tcp.payload_len;
		next_seq = f->tcp.seq + (uint32_t)f->tcp.payload_len;
	}
	assert_int_equal(got, TCP_OUT_MAX * MSS);
	p.hold_a = false;
	pair_run(&p, 2000000);
	pair_rcvd_ok(&p, warm + big);
	assert_int_equal(tcp_sock_conn(p.cli)->stats.retransmits, 0);
	free(buf);
	free(f);
	pair_close(&p);
}

/*
 * A port that fills the checksums (the DPDK tx offload contract, as a NIC
 * or the tap port's virtio-net header): each frame cut in software asks
 * for both checksums, with the header lengths set and the pseudo-header
 * sum in the TCP checksum field as rte_ipv4_phdr_cksum() gives it. The
 * test then does the NIC's part, and the server takes every frame.
 */
static void test_checksum_offload_frames(void **state)
{
	bool attach = *(bool *)*state;
	const uint32_t want[] = {MSS, MSS, MSG - 2 * MSS};
	struct tcp_config cfg;
	struct tcp_pair p;
	struct frame f;

	pair_config(&cfg);
	open_with(&p, attach, &cfg);
	p.a.fp.base.offloads |= PORT_OFFLOAD_TX_IPV4_CKSUM | PORT_OFFLOAD_TX_L4_CKSUM;
	p.hold_a = true;
	client_sends(&p, MSG);
	netif_flush(&p.a.nif);
	assert_int_equal(p.a.fp.n_tx, 3);
	for (unsigned i = 0; i < 3; i++) {
		struct rte_mbuf *m = p.a.fp.tx[i];
		struct rte_ipv4_hdr *ip =
		    rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, RTE_ETHER_HDR_LEN);
		uint8_t *th = (uint8_t *)ip + IPV4_HDR_LEN;
		uint16_t field, sum;
		uint32_t len = m->pkt_len;
		const uint8_t *d;

		assert_true(m->ol_flags & RTE_MBUF_F_TX_IPV4);
		assert_true(m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM);
		assert_int_equal(m->ol_flags & RTE_MBUF_F_TX_L4_MASK, RTE_MBUF_F_TX_TCP_CKSUM);
		assert_false(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
		assert_int_equal(m->l2_len, RTE_ETHER_HDR_LEN);
		assert_int_equal(m->l3_len, IPV4_HDR_LEN);
		assert_int_equal(m->l4_len, (th[12] >> 4) * 4);
		assert_int_equal(len, RTE_ETHER_HDR_LEN + IPV4_HDR_LEN + m->l4_len + want[i]);
		memcpy(&field, th + 16, 2);
		assert_int_equal(field, rte_ipv4_phdr_cksum(ip, m->ol_flags));
		/*
		 * The NIC's part: the header's checksum, then the segment's over the whole chain.
		 */
		fill_ipv4_csum(ip);
		assert_true(len <= sizeof(f.buf));
		d = rte_pktmbuf_read(m, 0, len, f.buf);
		if (d != f.buf)
			memcpy(f.buf, d, len);
		tcp_fill_csum(f.buf + RTE_ETHER_HDR_LEN + IPV4_HDR_LEN,
			      len - RTE_ETHER_HDR_LEN - IPV4_HDR_LEN, PAIR_IP_A, PAIR_IP_B);
		memcpy(&sum, f.buf + RTE_ETHER_HDR_LEN + IPV4_HDR_LEN + 16, 2);
		memcpy(th + 16, &sum, 2);
		parse_frame(&p, i, &f);
		assert_int_equal(f.tcp.payload_len, want[i]);
	}
	p.hold_a = false;
	pair_run(&p, 2000000);
	pair_rcvd_ok(&p, MSG);
	assert_int_equal(p.b.nif.ctr.drops[LUNAR_DROP_TCP_BAD_CHECKSUM], 0);
	assert_int_equal(p.b.nif.ctr.drops[LUNAR_DROP_IP_BAD_CHECKSUM], 0);
	assert_int_equal(tcp_sock_conn(p.cli)->stats.retransmits, 0);
	pair_close(&p);
}

/*
 * The header pool runs dry in the middle of a cut segment. The first
 * frame takes the last two buffers (header and attachment); the next two
 * find a header but no attachment, give the header back, and are copied
 * from the port's pool instead. The segment still leaves whole: three
 * frames in sequence, checksummed, with the right bytes, one zero-copy
 * and two copied.
 */
static void test_header_pool_dry_mid_segment(void **state)
{
	const uint32_t want[] = {MSS, MSS, MSG - 2 * MSS};
	struct rte_mempool *hp = pair_hdr_pool();
	static struct rte_mbuf *held[4096];
	const struct tcp_stack_stats *st;
	struct tcp_config cfg;
	struct tcp_pair p;
	struct frame f[3];
	uint64_t zc0, copy0, no_mbuf0;
	unsigned n = 0;

	(void)state;
	pair_config(&cfg);
	open_with(&p, true, &cfg);
	st = tcp_stack_stats(p.a.tcp);
	zc0 = st->zc_tx_bytes;
	copy0 = st->copy_tx_bytes;
	no_mbuf0 = st->tx_no_mbuf;
	while (rte_mempool_avail_count(hp) > 3) {
		assert_true(n < sizeof(held) / sizeof(held[0]));
		held[n] = rte_pktmbuf_alloc(hp);
		assert_non_null(held[n]);
		n++;
	}
	client_sends(&p, MSG);
	netif_flush(&p.a.nif);
	assert_int_equal(p.a.fp.n_tx, 3);
	for (unsigned i = 0; i < 3; i++) {
		parse_frame(&p, i, &f[i]);
		assert_int_equal(f[i].tcp.payload_len, want[i]);
		assert_int_equal(f[i].tcp.seq, f[0].tcp.seq + i * MSS);
		assert_int_equal(!!(f[i].tcp.flags & RTE_TCP_PSH_FLAG), i == 2);
		for (uint32_t k = 0; k < want[i]; k++)
			assert_int_equal(f[i].tcp.payload[k], pair_byte(i * MSS + k));
	}
	assert_int_equal(p.a.fp.tx[0]->nb_segs, 2); /* header + attachment */
	assert_int_equal(p.a.fp.tx[1]->nb_segs, 1); /* copied */
	assert_int_equal(st->zc_tx_bytes - zc0, MSS);
	/* The copying send's own copy, then the two frames' */
	assert_int_equal(st->copy_tx_bytes - copy0, MSG + (MSG - MSS));
	assert_int_equal(st->tx_no_mbuf, no_mbuf0);
	while (n)
		rte_pktmbuf_free(held[--n]);
	pair_run(&p, 2000000);
	pair_rcvd_ok(&p, MSG);
	assert_int_equal(tcp_sock_conn(p.cli)->stats.retransmits, 0);
	pair_close(&p);
}

/*
 * The client sends 300,000 bytes in sends of odd sizes, the server echoes
 * it back (its copying send framing too), for up to 50 ms of virtual time;
 * both ends receive every byte in order, with no checksum failure and
 * nothing resent. Odd sizes put a frame's slices at odd offsets, which the
 * software checksum of an attached chain must byte-swap (RFC 1071 2(B)).
 * With @tso the port cuts segments of several MSSs (see below).
 */
static void echo_odd_sends(struct tcp_pair *p, bool attach, bool tso)
{
	const size_t total = 300000, sizes[] = {1, 4095, 65537, 3, 17000, 100001};
	static uint8_t back[300000];
	struct tcp_config cfg;
	uint8_t *buf = malloc(total);
	size_t sent = 0, got = 0;
	unsigned k = 0;

	assert_non_null(buf);
	pair_fill(buf, total, 0);
	pair_tso = tso;
	pair_config(&cfg);
	open_with(p, attach, &cfg);
	pair_tso = false;
	p->srv_echo = true;
	for (int step = 0; step < 5000 && (sent < total || got < total); step++) {
		size_t want = sizes[k % 6] < total - sent ? sizes[k % 6] : total - sent;
		size_t n;
		int rc;

		if (want) {
			rc = tcp_sock_send(p->cli, buf + sent, want);
			if (rc > 0) {
				sent += (size_t)rc;
				k++;
			}
		}
		pair_step(p);
		while ((n = tcp_sock_read(p->cli, back + got, sizeof(back) - got)) > 0)
			got += n;
	}
	assert_int_equal(sent, total);
	assert_int_equal(got, total);
	assert_memory_equal(back, buf, total);
	pair_rcvd_ok(p, total);
	assert_int_equal(p->a.nif.ctr.drops[LUNAR_DROP_TCP_BAD_CHECKSUM], 0);
	assert_int_equal(p->b.nif.ctr.drops[LUNAR_DROP_TCP_BAD_CHECKSUM], 0);
	assert_int_equal(tcp_sock_conn(p->cli)->stats.retransmits, 0);
	assert_int_equal(tcp_sock_conn(p->srv)->stats.retransmits, 0);
	free(buf);
}

/* Software segmentation and checksums, the sends' slices at odd offsets. */
static void test_odd_sends_arrive_whole(void **state)
{
	struct tcp_pair p;

	echo_odd_sends(&p, *(bool *)*state, false);
	assert_true(tcp_stack_stats(p.a.tcp)->gso_segs > 0);
	assert_int_equal(p.a.nic_segs_in, 0);
	pair_close(&p);
}

/*
 * TSO: frames of several MSSs go to the port to cut (each asking for the
 * TCP checksum, its pseudo-header sum without the length), copied frames
 * chained over many buffers; the wire cuts and checksums them as a NIC
 * would.
 */
static void test_tso_frames_arrive_whole(void **state)
{
	struct tcp_pair p;

	echo_odd_sends(&p, *(bool *)*state, true);
	assert_true(p.a.nic_segs_in > 0);
	assert_true(p.b.nic_segs_in > 0);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->gso_segs, 0);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    PAIR_BOTH_FRAMINGS(test_cut_into_mss_frames),
	    PAIR_BOTH_FRAMINGS(test_off_core_segments),
	    PAIR_BOTH_FRAMINGS(test_fin_on_last_frame),
	    PAIR_BOTH_FRAMINGS(test_lost_frame_resends_one_mss),
	    PAIR_BOTH_FRAMINGS(test_cwr_on_first_frame_only),
	    PAIR_BOTH_FRAMINGS(test_single_frame_data_ect),
	    PAIR_BOTH_FRAMINGS(test_full_batch_of_64_frames),
	    PAIR_BOTH_FRAMINGS(test_checksum_offload_frames),
	    cmocka_unit_test(test_header_pool_dry_mid_segment),
	    PAIR_BOTH_FRAMINGS(test_odd_sends_arrive_whole),
	    PAIR_BOTH_FRAMINGS(test_tso_frames_arrive_whole),
	};

	return cmocka_run_group_tests_name("tcp/stack_gso", tests, pair_group_setup,
					   pair_group_teardown);
}
