/*
 * knb_raw.c - knb's floor (--stack raw): a raw memif ping-pong with no
 * TCP/IP stack. Owns the raw frame layout and its handshake, the client's
 * request frames (built once, sent again by reference) and the server's
 * echo. The flow engine (knb_flow.c) still does the counting, the timeline
 * and the latency, so the JSON is the other stacks' (docs/KNB.md).
 *
 * What goes on the wire is what a TCP RPC of --msg-size bytes puts there:
 * ceil(S / MSS) frames of Ethernet + IPv4 + TCP without options (54 bytes)
 * plus up to MSS = MTU - 40 bytes of payload, the same back. A frame is
 * tagged in its TCP header (no payload byte is needed, so 1-byte messages
 * work too): the sequence number is the request's number, the
 * acknowledgment number is (frame index << 16 | frames per request). The
 * checksums are valid: the client fixes the TCP checksum for the new tag
 * (RFC 1624), and the server's echo swaps addresses and ports, which
 * leaves both checksums as they are.
 *
 * Bring-up goes through lunar_env_open (EAL on --core, the Zbuf-backed
 * packet pool, the memif port with its checks, --pcap, the teardown and
 * its leak count); the TCP stack is never created and the interface is
 * never polled, so nothing but these frames is sent: no ARP, no ACKs.
 *
 * Handshake: once the memif link is up the client sends a SYN whose
 * payload is knb's 32-byte hello (every 100 ms until answered, within
 * --connect-timeout); the server answers with a SYN|ACK carrying the
 * 16-byte ack, so another protocol version is refused as on the other
 * stacks. A hello also resets the server, which serves clients one after
 * the other. memif neither loses nor reorders frames, so there is no
 * retransmission: a frame out of turn is an error, and a client that gets
 * no response for --connect-timeout gives up.
 *
 * Goodbye: the client ends with a FIN and waits (briefly) for the server's
 * FIN|ACK before it closes the port; the server then stays out of the
 * memif receive path until the link has been down a moment. DPDK 22.11's
 * memif unmaps the peer's memory in its interrupt thread while the data
 * path may still be reading it, and a server polling as fast as this one
 * crashed there about once in ten disconnects without this.
 */
#include "knb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "loop/env.h"
#include "mem/zbuf.h"
#include "port/port.h"
#include "wire/checksum.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"

#define RAW_HDR_LEN	   (ETH_HDR_LEN + IPV4_HDR_LEN + TCP_HDR_LEN) /* 54 */
#define RAW_IP_OFF	   ETH_HDR_LEN
#define RAW_TCP_OFF	   (ETH_HDR_LEN + IPV4_HDR_LEN)
#define RAW_BURST	   32
#define RAW_HELLO_EVERY_NS 100000000ull	 /* the client resends its hello this often */
#define RAW_LINK_CHECK_NS  100000000ull	 /* a silence this long: is the link still up? */
#define RAW_BYE_WAIT_NS	   200000000ull	 /* the client waits this long for the FIN|ACK */
#define RAW_PARK_DOWN_NS   10000000ull	 /* server: the link down this long, then receive again */
#define RAW_PARK_MAX_NS	   1000000000ull /* server: or the link still up after this long */
#define RAW_FILL	   0x6b		 /* payload bytes, as knb_lunar.c */

/* The two ends of the frames this process sends. */
struct ends {
	struct rte_ether_addr mac, peer_mac;
	uint32_t ip, peer_ip; /* host order */
	uint16_t port, peer_port;
};

struct raw {
	const struct knb_config *c;
	struct lunar_env *env;
	struct port *port;
	struct knb_meter meter;
	struct knb_flow f;
	struct ends e;
	uint32_t mss, nframes; /* frames per request */
	/* client: the request frames, built once; template set k serves requests k, k + sets... */
	struct rte_mbuf **tmpl;
	uint16_t *tmpl_csum;   /* each template's TCP checksum with seq = ack = 0 */
	uint32_t *tmpl_stamp;  /* the burst a template is in (one mbuf, one tag per burst) */
	uint32_t ntmpl, burst; /* templates (sets x nframes); bursts sent */
	uint32_t rx_frame;     /* frames of the current request (server) or response (client) */
	uint32_t rx_req;       /* server: the request those frames belong to */
	uint64_t last_rx_ns;   /* client: when a frame last arrived */
	/* server: received frames, echoed once their request is complete */
	struct rte_mbuf **q;
	uint32_t q_cap, q_sent, q_ready, q_n; /* [q_sent, q_ready) may go, [q_ready, q_n) wait */
	/* server: since a FIN (0: receiving), since the link went down */
	uint64_t parked_at, down_at;
	bool bye_acked; /* client: the server answered our FIN */
	uint64_t ignored, copies, out_of_turn;
	char err[300];
};

static uint64_t now(const struct raw *R)
{
	return lunar_env_now_ns(R->env);
}

static void set_err(struct raw *R, const char *msg)
{
	if (!R->err[0])
		snprintf(R->err, sizeof(R->err), "%s", msg);
}

/*
 * Write a whole frame into the empty mbuf @m: headers, @len payload bytes
 * (@payload, or RAW_FILL when NULL) and both checksums. @return 0 or -1.
 */
static int frame_build(struct rte_mbuf *m, const struct ends *e, uint32_t seq, uint32_t ack,
		       uint8_t flags, const uint8_t *payload, uint32_t len)
{
	uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(RAW_HDR_LEN + len));
	struct ipv4_repr ir = {.src = e->ip,
			       .dst = e->peer_ip,
			       .proto = IPPROTO_TCP,
			       .ttl = 64,
			       .df = true,
			       .payload_len = TCP_HDR_LEN + len};
	struct tcp_repr tr = {.sport = e->port,
			      .dport = e->peer_port,
			      .seq = seq,
			      .ack = ack,
			      .flags = flags,
			      .window = 65535,
			      .payload_len = len};

	if (!p)
		return -1;
	if (payload)
		memcpy(p + RAW_HDR_LEN, payload, len);
	else
		memset(p + RAW_HDR_LEN, RAW_FILL, len);
	if (!eth_emit(p, ETH_HDR_LEN, &e->peer_mac, &e->mac, RTE_ETHER_TYPE_IPV4) ||
	    !ipv4_emit(p + RAW_IP_OFF, IPV4_HDR_LEN, &ir, true) ||
	    !tcp_emit(p + RAW_TCP_OFF, TCP_HDR_LEN + len, &tr, NULL, e->ip, e->peer_ip, true))
		return -1;
	return 0;
}

/* A new frame from the pool; NULL (and the error set) when it cannot be made. */
static struct rte_mbuf *frame_new(struct raw *R, uint32_t seq, uint32_t ack, uint8_t flags,
				  const uint8_t *payload, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(R->env->pool);

	if (m && frame_build(m, &R->e, seq, ack, flags, payload, len) == 0)
		return m;
	rte_pktmbuf_free(m);
	set_err(R, "could not build a frame: the packet pool is empty or the MTU too small");
	return NULL;
}

/* Retag a request frame; its checksum was @csum0 with seq = ack = 0 (RFC 1624). */
static void frame_tag(struct rte_mbuf *m, uint16_t csum0, uint32_t seq, uint32_t ack)
{
	struct rte_tcp_hdr *th = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, RAW_TCP_OFF);
	uint16_t sum = (uint16_t)~csum0, w[4];

	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(ack);
	memcpy(w, &th->sent_seq, sizeof(w)); /* seq and ack, as the checksum sees them */
	for (unsigned i = 0; i < 4; i++)
		sum = inet_csum_add(sum, w[i]);
	th->cksum = (uint16_t)~sum;
}

/* A received frame's fields (views into the mbuf). */
struct rxf {
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *tcp;
	const uint8_t *payload;
	uint32_t len, seq, ack;
	uint8_t flags;
};

/* Is @m one of ours (IPv4, TCP without options, to @dport)? No checksum check: no stack. */
static bool frame_parse(struct rte_mbuf *m, uint16_t dport, struct rxf *x)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t tot;

	if (m->nb_segs != 1 || m->data_len < RAW_HDR_LEN)
		return false;
	x->eth = (struct rte_ether_hdr *)p;
	x->ip = (struct rte_ipv4_hdr *)(p + RAW_IP_OFF);
	x->tcp = (struct rte_tcp_hdr *)(p + RAW_TCP_OFF);
	tot = rte_be_to_cpu_16(x->ip->total_length);
	if (x->eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    x->ip->version_ihl != 0x45 || x->ip->next_proto_id != IPPROTO_TCP ||
	    x->tcp->data_off != (TCP_HDR_LEN / 4) << 4 ||
	    x->tcp->dst_port != rte_cpu_to_be_16(dport) || tot < IPV4_HDR_LEN + TCP_HDR_LEN ||
	    (uint32_t)tot + ETH_HDR_LEN > m->data_len)
		return false;
	x->payload = p + RAW_HDR_LEN;
	x->len = tot - IPV4_HDR_LEN - TCP_HDR_LEN;
	x->seq = rte_be_to_cpu_32(x->tcp->sent_seq);
	x->ack = rte_be_to_cpu_32(x->tcp->recv_ack);
	x->flags = x->tcp->tcp_flags;
	return true;
}

/* Payload bytes of a frame we send (0 for the handshake's). */
static uint32_t payload_len(struct rte_mbuf *m)
{
	const struct rte_tcp_hdr *th =
	    rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, RAW_TCP_OFF);

	return th->tcp_flags & RTE_TCP_SYN_FLAG ? 0 : m->pkt_len - RAW_HDR_LEN;
}

/* ---- the server: echo each request once all its frames are in ---- */

static void q_drop(struct raw *R)
{
	for (uint32_t i = R->q_sent; i < R->q_n; i++)
		rte_pktmbuf_free(R->q[i]);
	R->q_sent = R->q_ready = R->q_n = 0;
	R->rx_frame = 0;
}

/* Room for one more receive burst at the end of the queue, or false (send first). */
static bool q_room(struct raw *R)
{
	if (R->q_n + RAW_BURST <= R->q_cap)
		return true;
	if (R->q_sent) { /* what went out leaves room at the front */
		memmove(R->q, R->q + R->q_sent, (R->q_n - R->q_sent) * sizeof(*R->q));
		R->q_n -= R->q_sent;
		R->q_ready -= R->q_sent;
		R->q_sent = 0;
		if (R->q_n + RAW_BURST <= R->q_cap)
			return true;
	}
	if (R->q_ready > R->q_sent)
		return false; /* the ring is full: these go first */
	/* One request has more frames than the queue holds: grow it. */
	struct rte_mbuf **q = realloc(R->q, 2 * R->q_cap * sizeof(*q));

	if (!q)
		return false;
	R->q = q;
	R->q_cap *= 2;
	return true;
}

static void server_hello(struct raw *R, const struct rxf *x)
{
	struct rte_mbuf *ack;

	q_drop(R); /* a new client; whatever the last one left is void */
	knb_flow_server(&R->f, 0, 1, R->c->proto_version, &R->meter);
	if (x->len != KNB_HELLO_LEN || knb_flow_hs_received(&R->f, x->payload, x->len) < 0) {
		fprintf(stderr, "knb server: a SYN to port %u that is not a knb hello: ignored\n",
			R->c->port);
		R->f.ready = false;
		return;
	}
	if (R->f.error[0])
		fprintf(stderr, "knb server: %s\n", R->f.error);
	R->e.peer_mac = x->eth->src_addr;
	R->e.peer_ip = rte_be_to_cpu_32(x->ip->src_addr);
	R->e.ip = rte_be_to_cpu_32(x->ip->dst_addr);
	R->e.peer_port = rte_be_to_cpu_16(x->tcp->src_port);
	ack = frame_new(R, 0, x->seq + 1, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, R->f.hs_out,
			R->f.hs_out_len);
	if (!ack) {
		fprintf(stderr, "knb server: %s\n", R->err);
		R->err[0] = '\0';
		return;
	}
	knb_flow_hs_sent(&R->f, R->f.hs_out_len);
	R->q[R->q_n++] = ack;
	R->q_ready = R->q_n;
}

/* The client's FIN: answer it, then keep out of rx until its disconnect is over. */
static void server_bye(struct raw *R, const struct rxf *x, uint64_t t)
{
	struct rte_mbuf *fin;

	q_drop(R);
	R->f.ready = false; /* whatever follows is not this client's */
	R->e.peer_mac = x->eth->src_addr;
	R->e.peer_ip = rte_be_to_cpu_32(x->ip->src_addr);
	R->e.ip = rte_be_to_cpu_32(x->ip->dst_addr);
	R->e.peer_port = rte_be_to_cpu_16(x->tcp->src_port);
	fin = frame_new(R, 0, x->seq + 1, RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG, NULL, 0);
	if (fin) {
		R->q[R->q_n++] = fin;
		R->q_ready = R->q_n;
	} else {
		R->err[0] = '\0';
	}
	R->parked_at = t;
	R->down_at = 0;
}

/* Parked after a FIN: receive again once the link has been down a moment. */
static void server_parked(struct raw *R)
{
	uint64_t t = now(R);

	if (R->q_sent < R->q_ready)
		return; /* the FIN|ACK first */
	if (port_link_up(R->port)) {
		if (t - R->parked_at > RAW_PARK_MAX_NS)
			R->parked_at = 0; /* the client stayed: receive again */
		return;
	}
	if (!R->down_at)
		R->down_at = t;
	else if (t - R->down_at > RAW_PARK_DOWN_NS)
		R->parked_at = 0;
}

/* One request frame: keep it, turned around, until its request is complete. */
static void server_data(struct raw *R, struct rte_mbuf *m, const struct rxf *x, uint64_t t)
{
	uint32_t idx = x->ack >> 16, cnt = x->ack & 0xffff;
	struct rte_ether_addr mac = x->eth->src_addr;
	rte_be32_t ip = x->ip->src_addr;
	rte_be16_t port = x->tcp->src_port;

	if (!R->f.ready) {
		R->ignored++; /* no hello yet (or a refused one) */
		rte_pktmbuf_free(m);
		return;
	}
	if (!cnt || idx >= cnt || idx != R->rx_frame || (idx && x->seq != R->rx_req)) {
		if (!R->out_of_turn++)
			fprintf(stderr,
				"knb server: request %u frame %u of %u out of turn (expected "
				"frame %u of request %u): dropped with its request\n",
				x->seq, idx, cnt, R->rx_frame, R->rx_req);
		for (uint32_t i = R->q_ready; i < R->q_n; i++) /* the request's frames so far */
			rte_pktmbuf_free(R->q[i]);
		R->q_n = R->q_ready;
		R->rx_frame = 0;
		rte_pktmbuf_free(m);
		return;
	}
	/* Turn it around: swapped addresses and ports leave both checksums valid. */
	x->eth->src_addr = x->eth->dst_addr;
	x->eth->dst_addr = mac;
	x->ip->src_addr = x->ip->dst_addr;
	x->ip->dst_addr = ip;
	x->tcp->src_port = x->tcp->dst_port;
	x->tcp->dst_port = port;
	R->rx_req = x->seq;
	R->q[R->q_n++] = m;
	(void)knb_flow_on_rx(&R->f, x->len, t); /* a server's: never refused */
	if (++R->rx_frame == cnt) {
		R->q_ready = R->q_n;
		R->rx_frame = 0;
	}
}

static void server_rx(struct raw *R)
{
	struct rte_mbuf *pkts[RAW_BURST];
	uint16_t n;
	uint64_t t;

	if (!q_room(R))
		return;
	n = port_rx_burst(R->port, pkts, RAW_BURST);
	if (!n)
		return;
	t = now(R);
	for (uint16_t i = 0; i < n; i++) {
		struct rxf x;

		if (!frame_parse(pkts[i], R->c->port, &x)) {
			R->ignored++;
			rte_pktmbuf_free(pkts[i]);
		} else if ((x.flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) == RTE_TCP_SYN_FLAG) {
			server_hello(R, &x);
			rte_pktmbuf_free(pkts[i]);
		} else if (x.flags & RTE_TCP_FIN_FLAG) {
			server_bye(R, &x, t);
			rte_pktmbuf_free(pkts[i]);
		} else {
			server_data(R, pkts[i], &x, t);
		}
	}
}

static void server_tx(struct raw *R)
{
	while (R->q_sent < R->q_ready) {
		uint32_t n = R->q_ready - R->q_sent, len[RAW_BURST];
		uint64_t bytes = 0;
		uint16_t sent;

		if (n > RAW_BURST)
			n = RAW_BURST;
		/* lengths first: the port may free the frames at once */
		for (uint32_t i = 0; i < n; i++)
			len[i] = payload_len(R->q[R->q_sent + i]);
		sent = port_tx_burst(R->port, R->q + R->q_sent, (uint16_t)n);
		for (uint16_t i = 0; i < sent; i++)
			bytes += len[i];
		R->q_sent += sent;
		if (bytes)
			knb_flow_on_tx(&R->f, bytes, now(R));
		if (sent < n)
			return; /* ring full */
	}
	if (R->q_sent == R->q_n)
		R->q_sent = R->q_ready = R->q_n = 0;
}

static int run_server(struct raw *R)
{
	R->q_cap = 4096;
	R->q = malloc(R->q_cap * sizeof(*R->q));
	if (!R->q) {
		set_err(R, "out of memory");
		return 1;
	}
	printf("knb server: ready, raw memif ping-pong (no stack) on %s, port %u\n", R->port->name,
	       R->c->port);
	fflush(stdout);
	while (!knb_stop_requested()) {
		server_tx(R);
		if (R->parked_at)
			server_parked(R);
		else
			server_rx(R);
	}
	q_drop(R);
	free(R->q);
	return 0;
}

/* ---- the client ---- */

/* The request frames, once: @sets copies of a request's nframes frames. */
static int build_templates(struct raw *R)
{
	const struct knb_config *c = R->c;
	uint32_t sets = RAW_BURST / R->nframes;

	/* Several sets let small requests share a burst (a template goes once per burst). */
	if (sets < 1)
		sets = 1;
	if (sets > c->iodepth)
		sets = c->iodepth;
	R->ntmpl = sets * R->nframes;
	R->tmpl = calloc(R->ntmpl, sizeof(*R->tmpl));
	R->tmpl_csum = calloc(R->ntmpl, sizeof(*R->tmpl_csum));
	R->tmpl_stamp = calloc(R->ntmpl, sizeof(*R->tmpl_stamp));
	if (!R->tmpl || !R->tmpl_csum || !R->tmpl_stamp) {
		set_err(R, "out of memory");
		return -1;
	}
	for (uint32_t k = 0; k < R->ntmpl; k++) {
		uint32_t i = k % R->nframes, len = c->msg_size - i * R->mss;
		struct rte_mbuf *m;

		if (len > R->mss)
			len = R->mss;
		m = frame_new(R, 0, 0,
			      RTE_TCP_ACK_FLAG | (i == R->nframes - 1 ? RTE_TCP_PSH_FLAG : 0), NULL,
			      len);
		if (!m)
			return -1;
		R->tmpl[k] = m;
		R->tmpl_csum[k] =
		    rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, RAW_TCP_OFF)->cksum;
	}
	return 0;
}

/*
 * Send what the flow may send now, a frame at a time. Frames go by
 * reference: memif copies a frame into its ring inside tx_burst and drops
 * the reference it was given, so a template is ours again (refcnt 1) when
 * the call returns and can be retagged for the next request. Should a port
 * still hold one, that frame is sent as a copy instead (R->copies).
 */
static void client_tx(struct raw *R)
{
	const uint32_t msg = R->c->msg_size;
	uint64_t budget = knb_flow_tx_budget(&R->f);

	while (budget) {
		struct rte_mbuf *pkts[RAW_BURST];
		uint32_t len[RAW_BURST];
		uint64_t off = R->f.tx_bytes, bytes = 0, t;
		uint16_t n = 0, sent;

		R->burst++;
		while (budget && n < RAW_BURST) {
			uint64_t req = off / msg;
			uint32_t within = (uint32_t)(off % msg), i = within / R->mss;
			uint32_t k = (uint32_t)(req % (R->ntmpl / R->nframes)) * R->nframes + i;
			struct rte_mbuf *m = R->tmpl[k];

			if (R->tmpl_stamp[k] == R->burst)
				break; /* already in this burst: send it first */
			R->tmpl_stamp[k] = R->burst;
			if (rte_mbuf_refcnt_read(m) == 1) {
				rte_mbuf_refcnt_update(m, 1); /* the port takes this one */
			} else {
				m = rte_pktmbuf_copy(m, R->env->pool, 0, UINT32_MAX);
				if (!m)
					break; /* the pool is empty: later */
				R->copies++;
			}
			frame_tag(m, R->tmpl_csum[k], (uint32_t)req, i << 16 | R->nframes);
			len[n] = msg - within < R->mss ? msg - within : R->mss;
			pkts[n++] = m;
			off += len[n - 1];
			budget -= len[n - 1];
		}
		if (!n)
			return;
		t = now(R); /* a request's time starts as its first frame is handed to the port */
		sent = port_tx_burst(R->port, pkts, n);
		for (uint16_t j = sent; j < n; j++)
			rte_pktmbuf_free(pkts[j]); /* drops our extra reference (or the copy) */
		for (uint16_t j = 0; j < sent; j++)
			bytes += len[j];
		if (bytes)
			knb_flow_on_tx(&R->f, bytes, t);
		if (sent < n)
			return; /* ring full: the rest next time */
	}
}

/* The server's ack to our hello. */
static void client_ack(struct raw *R, const struct rxf *x)
{
	if (R->f.ready)
		return; /* an answer to a hello sent again */
	if (x->len != KNB_ACK_LEN) {
		set_err(R, "the peer answered the hello, but not as a knb raw server: is "
			   "`knb server --stack raw` at the other end of the memif socket?");
		return;
	}
	if (knb_flow_hs_received(&R->f, x->payload, x->len) < 0) {
		set_err(R, R->f.error);
		return;
	}
	R->e.peer_mac = x->eth->src_addr;
}

/* One response frame: it must be the next one, in order. */
static void client_data(struct raw *R, const struct rxf *x, uint64_t t)
{
	uint32_t idx = x->ack >> 16, cnt = x->ack & 0xffff;

	if (!R->f.ready) {
		R->ignored++; /* an echo meant for a client before us */
		return;
	}
	if (x->seq != (uint32_t)R->f.responses || idx != R->rx_frame || cnt != R->nframes ||
	    R->f.responses >= R->f.requests) {
		char m[200];

		snprintf(m, sizeof(m),
			 "response frame out of turn: request %u frame %u of %u, "
			 "expected frame %u of %u of request %u",
			 x->seq, idx, cnt, R->rx_frame, R->nframes, (uint32_t)R->f.responses);
		set_err(R, m);
		return;
	}
	if (++R->rx_frame == R->nframes)
		R->rx_frame = 0;
	/* the last frame completes the response */
	if (knb_flow_on_rx(&R->f, x->len, t) < 0)
		set_err(R, R->f.error);
}

static void client_rx(struct raw *R)
{
	struct rte_mbuf *pkts[RAW_BURST];
	uint16_t n = port_rx_burst(R->port, pkts, RAW_BURST);
	uint64_t t;

	if (!n)
		return;
	t = now(R);
	R->last_rx_ns = t;
	for (uint16_t i = 0; i < n; i++) {
		struct rxf x;

		if (!frame_parse(pkts[i], R->e.port, &x) ||
		    x.tcp->src_port != rte_cpu_to_be_16(R->e.peer_port))
			R->ignored++;
		else if (x.flags & RTE_TCP_RST_FLAG)
			set_err(R, "the peer answered with a TCP reset: it runs a TCP stack, not "
				   "`knb server --stack raw`");
		else if (x.flags & RTE_TCP_SYN_FLAG)
			client_ack(R, &x);
		else if (x.flags & RTE_TCP_FIN_FLAG)
			R->bye_acked = true;
		else
			client_data(R, &x, t);
		rte_pktmbuf_free(pkts[i]);
	}
}

/* Link up, hello, ack: within --connect-timeout. */
static int client_connect(struct raw *R)
{
	const struct knb_config *c = R->c;
	struct knb_flow_spec spec = {
	    .kind = KNB_FLOW_RPC, .msg_size = c->msg_size, .iodepth = c->iodepth};
	uint64_t deadline = now(R) + (uint64_t)(c->connect_timeout_s * 1e9), next_hello = 0;
	char m[200];

	knb_flow_client(&R->f, &spec, 0, c->proto_version, &R->meter);
	while (!port_link_up(R->port)) {
		if (now(R) > deadline || knb_stop_requested()) {
			set_err(R,
				"the link did not come up within --connect-timeout (is the memif "
				"server running?)");
			return -1;
		}
	}
	memset(&R->e.peer_mac, 0xff, sizeof(R->e.peer_mac)); /* broadcast until the ack */
	while (!R->f.ready) {
		uint64_t t = now(R);

		if (R->err[0])
			return -1;
		if (t > deadline || knb_stop_requested()) {
			snprintf(m, sizeof(m),
				 "no knb raw server answered within %.1f s: is `knb "
				 "server --stack raw` at the other end of the memif socket?",
				 c->connect_timeout_s);
			set_err(R, m);
			return -1;
		}
		if (t >= next_hello) {
			struct rte_mbuf *h =
			    frame_new(R, 0, 0, RTE_TCP_SYN_FLAG, R->f.hs_out, KNB_HELLO_LEN);

			if (!h)
				return -1;
			if (port_tx_burst(R->port, &h, 1) != 1)
				rte_pktmbuf_free(h);
			else if (!R->f.hs_out_sent)
				knb_flow_hs_sent(&R->f, KNB_HELLO_LEN);
			next_hello = t + RAW_HELLO_EVERY_NS;
		}
		client_rx(R);
	}
	return build_templates(R);
}

/* After a hello: a FIN, and the server's FIN|ACK (or a short wait) before the port closes. */
static void client_bye(struct raw *R)
{
	struct rte_mbuf *fin;
	uint64_t until;

	if (!R->f.hs_out_sent || !port_link_up(R->port))
		return;
	fin = frame_new(R, 0, 0, RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG, NULL, 0);
	if (!fin)
		return;
	if (port_tx_burst(R->port, &fin, 1) != 1) {
		rte_pktmbuf_free(fin);
		return;
	}
	for (until = now(R) + RAW_BYE_WAIT_NS; !R->bye_acked && now(R) < until;)
		client_rx(R);
}

/* A response overdue: the link went down, or the server stopped answering. */
static bool client_stalled(struct raw *R, uint64_t t)
{
	char m[200];

	if (R->f.responses == R->f.requests) {
		R->last_rx_ns = t;
		return false;
	}
	if (t - R->last_rx_ns < RAW_LINK_CHECK_NS)
		return false;
	if (!port_link_up(R->port)) {
		set_err(R, "the memif link went down: did the server stop?");
		return true;
	}
	if (t - R->last_rx_ns < (uint64_t)(R->c->connect_timeout_s * 1e9))
		return false;
	snprintf(m, sizeof(m), "no response for %.1f s (--connect-timeout): did the server stop?",
		 R->c->connect_timeout_s);
	set_err(R, m);
	return true;
}

static int run_client(struct raw *R, struct knb_result *r)
{
	const struct knb_config *c = R->c;
	struct knb_timeline tl;

	if (client_connect(R))
		return 1;
	printf("knb client: raw memif ping-pong (no stack): %u frame%s of at most %u bytes per "
	       "request and per response (MSS %u)\n",
	       R->nframes, R->nframes > 1 ? "s" : "", RAW_HDR_LEN + R->mss, R->mss);
	knb_timeline_start(&tl, c, now(R));
	R->last_rx_ns = now(R);
	for (;;) {
		uint64_t t = now(R);
		enum knb_tick tick =
		    knb_timeline_tick(&tl, &R->meter, t, tl.drain_until && knb_flow_drained(&R->f));

		if (tick == KNB_TICK_DONE)
			break;
		if (tick == KNB_TICK_CLOSED)
			R->f.stopping = true;
		if (knb_stop_requested()) {
			set_err(R, "interrupted");
			return 1;
		}
		if (R->err[0] || client_stalled(R, t))
			return 1;
		client_rx(R);
		client_tx(R);
	}
	r->window_s = (double)(tl.win_end - tl.win_start) / 1e9;
	r->threads[0].cpu_pct = knb_timeline_cpu_pct(&tl);
	return 0;
}

int knb_raw_run(const struct knb_config *c, const char *prog)
{
	struct raw R = {.c = c};
	struct knb_thread_result tr = {.index = 0};
	struct knb_result res = {.nthreads = 1, .threads = &tr};
	uint64_t leaked;
	char err[512];
	int rc;

	knb_hist_init(&R.meter.hist);
	lunar_handle_signals();
	rc = lunar_env_open(&c->lo, prog, &R.env, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "knb: %s\n", err);
		return 1;
	}
	R.port = R.env->port;
	R.mss = (R.port->mtu ? R.port->mtu : 1500) - IPV4_HDR_LEN - TCP_HDR_LEN;
	R.nframes = (c->msg_size + R.mss - 1) / R.mss;
	R.e.mac = R.port->mac;
	R.e.ip = c->lo.ip;
	R.e.peer_ip = c->addr;
	if (c->server) {
		R.e.port = c->port;
	} else {
		/* Any port of the reserved range; the server answers whatever it is. */
		R.e.port =
		    (uint16_t)(c->lo.reserved_lo +
			       (unsigned)getpid() % (c->lo.reserved_hi - c->lo.reserved_lo + 1u));
		R.e.peer_port = c->port;
	}
	rc = c->server ? run_server(&R) : run_client(&R, &res);
	if (rc && R.err[0] && strcmp(R.err, "interrupted"))
		fprintf(stderr, "knb %s: %s\n", c->server ? "server" : "client", R.err);
	if (!c->server)
		client_bye(&R);
	if (c->lo.verbose) {
		printf("raw: frames ignored %lu, out of turn %lu, sent as copies %lu\n",
		       (unsigned long)R.ignored, (unsigned long)R.out_of_turn,
		       (unsigned long)R.copies);
		port_dump(R.port, stdout);
	}
	tr.core = (int)c->lo.core;
	tr.meter = R.meter;
	if ((!rc || c->server) && knb_report(c, &res))
		rc = 1;
	for (uint32_t k = 0; k < R.ntmpl; k++)
		rte_pktmbuf_free(R.tmpl[k]);
	free(R.tmpl);
	free(R.tmpl_csum);
	free(R.tmpl_stamp);
	leaked = lunar_env_close(R.env);
	printf("zbuf: %lu objects in use at exit\n", (unsigned long)leaked);
	return rc;
}
