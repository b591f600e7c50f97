/*
 * fuzz_tcp_stack.c - libFuzzer target for TCP at the level of the whole
 * stack: a struct tcp_stack (src/tcp/tcp_stack.c) on a netif, fed frames
 * through netif_input() as the loop hands them, on a virtual clock, while
 * the target plays the peers, the routers and the application. Where
 * fuzz_tcp_conn drives one connection's core, this reaches what lies
 * around it: the connection table and its demultiplexing (several
 * connections, listeners, segments for no connection), accept queues and
 * backlogs, SYN cookies, the limits of tcp_limits.h (connections,
 * half-open, TIME-WAIT, mem_max), ICMP errors (tcp_icmp.c through the
 * netif hook), the timer wheel, framing (copied or zero-copy), events and
 * the socket calls, callbacks included.
 *
 * Each input: a set-up block, then operations. The target keeps a model
 * of each peer (what it sent, what it saw the stack send), so a segment
 * "to connection k" carries the right 4-tuple and sequence numbers near
 * the real ones, plus a fuzzed offset. Consecutive peer operations form
 * one receive burst; any other operation first delivers it. After every
 * burst or call the loop iteration ends as lunar_env_poll() ends it
 * (tcp_stack_poll, netif_timers, netif_flush, and when the seed is odd, as
 * lunar_env_poll() runs it, the bookkeeping left until then:
 * tcp_stack_after_tx, zbuf_defer_end) and the invariants are checked.
 * Every violation abort()s with its condition.
 *
 * Set-up block (SETUP_LEN bytes; missing bytes read as 0):
 *   0  bit0-2 no timestamps / SACK / window scaling; bit3 nodelay; bit4 no
 *      delayed ACKs; bit5 no SYN cookies; bit6 zero-copy framing (a header
 *      pool, a port taking chained buffers); bit7 no RACK
 *   1  bit0-2 receive buffer, bit3-5 send buffer (tables below), bit6-7
 *      congestion control (NewReno, CUBIC, DCTCP, NewReno without software
 *      segmentation or GRO: MSS-sized segments from the core, each received
 *      one on its own; GRO is also off when bits 1-2 of the seed, bytes
 *      8-9, are both set)
 *   2  bit0-3 max_conns - 1 (the table: 1..16 connections); bit4-5 the MTU
 *      (1500, 9000, 1280, 600); bit6 ECN on; bit7 the stack is worker 0 of
 *      two (the other worker's segments are dropped as foreign)
 *   3  max_half_open, modulo max_conns + 1
 *   4  max_time_wait, modulo max_conns + 1
 *   5  mem_max: 0 none, 255 the default (1 GiB), else 64 KiB + (n - 1) * 4 KiB
 *   6  the peers' SYN options: bit0-2 timestamps / SACK-permitted / window
 *      scale; bit3-5 MSS (table); bit6-7 window shift (0, 2, 7, 15)
 *   7  bit0 keep-alive (1 s idle, 0.2 s x 2); bit1 syn_retries 1; bit2
 *      reass_max_segs 4; bit3 reass_max_bytes 3000; bit4-5 challenge ACK
 *      limit (20, none, 1, 1000); bit6 user timeout 1 s; bit7 initial
 *      window 1 segment
 *   8-9 the seed of the random bytes (libsodium's randombytes, replaced
 *      here so every run is the same: cookie key, ISNs, port offsets); odd,
 *      the stack leaves its bookkeeping until after the transmit
 *      (tcp_stack_defer_to_tx) and Zbuf its releases
 *
 * Operations: a selector byte, op = selector % 32 and k = selector / 32
 * (the peer flow, socket or listener it is about), then its bytes. Peer
 * flows are 4-tuples the target plays the far end of (8 of them, made by
 * a peer's SYN or by the application's connect); sockets are the 8 the
 * application holds; listeners are on ports 80 (k even) and 8080 (k odd).
 *
 *   0-3,28 segment from fields to flow k: flags; bases (bit0-1 SEQ from
 *         what the stack acknowledged / the peer's next / its ISS / the
 *         first + 2^31; bit2-3 ACK from all the stack sent / what the peer
 *         acknowledged / the stack's ISS / all - 65536; bit4 flip the
 *         timestamp option; bit5 a TSval delta byte follows; bit6 SACK
 *         blocks follow; bit7 a window follows); SEQ and ACK deltas (int16
 *         each); [window u16]; payload length u16 (bit0-13; bit14-15 the
 *         IP ECN field); [TSval delta int8]; [SACK: count byte, per block
 *         a left delta int16 from the ACK base and a length u16]
 *   4     the peer's SYN on flow k: byte (bit0-1 port: 80, 8080, 9 where
 *         nothing listens, 8080; bit2 a new 4-tuple; bit3 from the second
 *         peer address; bit4 ECN setup; bit5 options byte follows, as
 *         set-up byte 6; bit6 data follows), ISS u32, [options], [length]
 *   5     the peer's ACK ending the handshake of flow k (seq ISS + 1, ack
 *         the stack's ISS + 1 + a delta in bit4-7 as int4): byte (bit0
 *         data of the length byte that follows; bit1 FIN; bit2 flip the
 *         timestamp option)
 *   6     the peer's SYN-ACK to the stack's SYN on flow k: byte (bit0 ECN,
 *         bit4-7 ACK delta as int4), ISS u32
 *   7,29  data from the peer on flow k: byte (bit0 FIN; bit1 from what the
 *         stack acknowledged, not the peer's next; bit2 no PSH), length
 *         u16 as in 0-3
 *   8,30  the peer acknowledges all the stack sent: window high byte
 *   9     raw segment: byte (bit0 the ports, SEQ and ACK of flow k, the
 *         numbers relative; bit1 keep a wrong checksum; bit2-3 to our
 *         address, ours, the subnet's broadcast, 255.255.255.255; bit4-5
 *         from the first peer, the second, the router, flow k's peer;
 *         bit6-7 IP ECN), length byte and that many bytes (a TCP header
 *         as is, then payload the target fills from the content model)
 *   10    ICMP error quoting flow k's segment: kind byte (icmp_kinds,
 *         modulo 16), byte (bit0-1 quote 8 bytes of TCP, 20, 4 (cut
 *         short), 12; bit2 the quote's source is not us; bit3 the quote is
 *         UDP; bit4-5 its SEQ from what the peer acknowledged / the
 *         stack's last sent / its ISS / the first + 2^31; bit6 sent by the
 *         peer, not the router; bit7 delivered on its own, not in the
 *         burst), next-hop MTU u16, SEQ delta int16
 *   11    SYN flood from 10.0.0.4 (spoofed sources that never answer):
 *         byte (bit0-4 count - 1; bit5 to 8080; bit6 ECN setup)
 *   12,31 time: unit byte (bit0-2 1 us, 100 us, 1 ms, 4 ms, 50 ms, 250
 *         ms, 1 s, 10 s; bit3-4 mode: 0/3 advance mult x unit, one loop
 *         iteration; 1 the same in 8 iterations; 2 to the earliest
 *         deadline of the sockets held), mult byte
 *   13    one loop iteration, no time passing
 *   14    connect socket k (if free): byte (bit0 to the second peer;
 *         bit1-7 port 5000 + n); flow k becomes its 4-tuple
 *   15    accept from listener k (or the other, if k's has none ready) into
 *         socket k (or the first free)
 *   16    send (copying) on socket k: length u16
 *   17    send zero-copy (a Zbuf object, released at once): length u16
 *   18    read (copying): max byte (x 256, 0: 64 KiB)
 *   19    zero-copy read, held: max slices byte (% 8 + 1)
 *   20    give back socket k's oldest held slices: count byte (% 4 + 1)
 *   21    shutdown     22 close     23 abort (socket k)
 *   24    socket k's mode byte: bit0 inline callbacks; bit1 read in the
 *         callback; bit2 and reply with as many bytes; bit3 close in the
 *         callback on EOF, reset, timeout or close
 *   25    listen on listener k: byte (bit0-2 backlog, 0: the default 128;
 *         bit7 accept in the accept callback)
 *   26    close listener k
 *   27    set the limits: conns (% table + 1), half-open, TIME-WAIT (each
 *         % conns + 1), mem byte as set-up byte 5
 *
 * The peer's payload at sequence number s is pat_rx(s) and the
 * application's at stream offset o is pat_tx(o) (fuzz_tcp_model.h), so
 * the bytes are checked both ways.
 *
 * Checked after every loop iteration:
 *  - every frame the stack transmits: an IPv4 frame to the MAC of its
 *    destination, from our address and MAC, its IPv4 and TCP checksums
 *    right (wire/ parsers, checksums verified), not above the MTU, ECN
 *    field Not-ECT or ECT(0); for a 4-tuple some peer sent on or the
 *    application connected (to the SYN flood's source only SYN-ACKs and
 *    RSTs), a SYN only for a connect, a SYN-ACK only after a peer's SYN;
 *    on a socket the application holds: SEQ + length (+FIN) within
 *    SND.MAX, ACK within RCV.NXT, the window within RCV.ADV, timestamps
 *    iff negotiated, and the payload the bytes the application wrote
 *    there;
 *  - the counters: segs_out equals the TCP frames seen (none dropped as
 *    too big), conns_active = opened - closed = sockets allocated, the
 *    usage within the limits (the largest set), half-open + TIME-WAIT
 *    within the connections; the bytes the held sockets buffer within
 *    mem_bytes, and when every live connection is held, exactly it, no
 *    half-open and as many TIME-WAIT as held;
 *  - each socket held: SND.UNA <= SND.NXT <= SND.MAX, SND.UNA, SND.MAX and
 *    RCV.NXT never back, the send buffer within snd_buf holding exactly
 *    what was written and not acknowledged, the receive queue contiguous
 *    from what was read to RCV.NXT and within rcv_buf with the
 *    out-of-order bytes, tcp_sock_readable / _held / _send_space agreeing;
 *    events only for sockets held, TCP_EV_CLOSED only in CLOSED; every
 *    byte read, copied or zero-copy, the peer's at that sequence number;
 *  - ICMP: every error netif hands to TCP gets one verdict counter; one
 *    delivered on its own that quotes a live socket held (well formed,
 *    from our address, TCP) reaches it (not counted as for no connection);
 *  - the calls: connect's -ENOBUFS only with the table full and no
 *    TIME-WAIT recycled by it (one that gives way makes room), send never
 *    takes more than asked nor fails but as documented.
 * At the end the application gives back what it holds and closes every
 * socket and listener, and time runs on with the peers silent: every
 * connection must end within 10 virtual minutes, mem_bytes and the usage
 * reach 0, and after tcp_stack_free() no Zbuf object (packet buffers
 * included) is referenced beyond the baseline and no header is in use.
 *
 * FUZZ_TCP_STACK_VERBOSE=1 ./fuzz_tcp_stack <file> prints every operation,
 * every segment each way and the stack's counters at the end.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <sodium.h>

#include "ctl/flow_plan.h"
#include "fuzz_common.h"
#include "fuzz_tcp_model.h"
#include "mem/zbuf.h"
#include "net/netif.h"
#include "net/pmtu.h"
#include "port/port.h"
#include "tcp/tcp_conn.h"
#include "tcp/tcp_icmp.h"
#include "tcp/tcp_limits.h"
#include "tcp/tcp_seq.h"
#include "tcp/tcp_stack.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"

#define US	      1000ull
#define MS	      1000000ull
#define SEC	      1000000000ull
#define SETUP_LEN     10
#define N_FLOWS	      8
#define N_SOCKS	      8
#define N_LISTEN      2
#define N_KNOWN	      64
#define N_HELD	      64
#define BURST_MAX     32
#define POOL_MBUFS    512
#define FRAME_ROOM    9100 /* data room of a packet buffer: a 9000-byte MTU frame */
#define DRAIN_SECONDS 600

#define OUR_IP	    0x0a000001u /* 10.0.0.1/24 */
#define PEER_A	    0x0a000002u /* the peers the flows are with */
#define PEER_B	    0x0a000003u
#define FLOOD_IP    0x0a000004u /* the SYN flood's spoofed source */
#define ROUTER_IP   0x0a0000feu /* ICMP errors */
#define BCAST_IP    0x0a0000ffu
#define CLOSED_PORT 9

static const uint16_t listen_ports[N_LISTEN] = {80, 8080};
static const uint32_t rcv_bufs[8] = {65536, 4096, 16384, 1000, 262144, 3000, 65535, 1u << 20};
static const uint32_t snd_bufs[8] = {65536, 4096, 16384, 1500, 262144, 100, 200000, 1u << 20};
static const uint16_t mtus[4] = {1500, 9000, 1280, 600};
static const uint16_t peer_mss[8] = {1460, 536, 8960, 64, 0, 1200, 65535, 88};
static const uint8_t peer_wscale[4] = {0, 2, 7, 15};
static const uint32_t challenge_limits[4] = {20, 0, 1, 1000};
static const uint64_t units[8] = {1 * US,  100 * US, 1 * MS, 4 * MS,
				  50 * MS, 250 * MS, SEC,    10 * SEC};
/* ICMP errors an operation can send: (type, code), fragmentation needed most. */
static const uint8_t icmp_kinds[16][2] = {
    {3, 4},  {3, 4}, {3, 4}, {3, 4},  {3, 0},  {3, 1}, {3, 2},	{3, 3},
    {3, 13}, {3, 9}, {3, 6}, {11, 0}, {12, 0}, {4, 0}, {3, 15}, {3, 20},
};

/* ---- the target's state: one input's world ---- */

/* A 4-tuple the target is the far end of, and what it knows. */
struct flow {
	bool used;
	struct tcp_4tuple t; /* as the stack sees it: laddr us, raddr the peer */
	unsigned gen;	     /* new 4-tuples of this flow so far (its ports) */
	/* the peer's own sequence space */
	uint32_t iss, nxt;	     /* its ISN; just past the highest it sent */
	struct tcp_options syn_opts; /* what its SYNs offer */
	uint16_t wnd;		     /* the window field it sends */
	uint32_t acked;		     /* the last ACK it sent */
	/* what it saw of the stack */
	bool seen_syn; /* the stack's SYN or SYN-ACK: its ISS */
	uint32_t stack_iss, seen_max, seen_ack;
	bool ts_ok;	    /* both SYNs had timestamps */
	uint32_t ts_recent; /* the stack's last TSval */
};

/* A socket the application holds. */
struct app_sock {
	struct tcp_sock *s;
	uint32_t events; /* every event bit delivered */
	uint32_t wrote;	 /* stream bytes written */
	uint32_t rd_seq; /* sequence number of the next byte to read (once rd_init) */
	bool rd_init;
	uint8_t mode; /* MODE_* */
	uint32_t held_bytes;
	/* only move forward */
	bool prev_ok, prev_rcv_ok;
	uint32_t prev_una, prev_max, prev_rcv_nxt;
	uint64_t born; /* fz.iter when the socket took this connection */
};

#define MODE_INLINE 0x01
#define MODE_READ   0x02
#define MODE_REPLY  0x04
#define MODE_CLOSE  0x08

/* A slice taken zero-copy, until given back; owner -1 once its socket is closed. */
struct held {
	const uint8_t *data;
	uint32_t len;
	int owner;
};

struct listener {
	struct tcp_listener *l;
	bool auto_accept;
};

/* A 4-tuple something was sent on (transmitted segments must belong to one). */
struct known {
	uint32_t raddr;
	uint16_t rport, lport;
	bool active;   /* the application connected it */
	bool peer_syn; /* a peer sent a SYN on it */
};

/* The port: transmitted frames are kept for the checks. */
struct cap_port {
	struct port base;
	struct rte_mbuf **tx;
	unsigned n, cap;
};

static struct {
	struct cap_port port;
	struct netif nif;
	struct tcp_stack *st;
	struct flow_plan plan;
	struct tcp_config cfg;
	unsigned table_conns;	   /* what the table was made for */
	struct tcp_limits lim_max; /* the largest of each limit set so far */
	uint64_t now;
	struct flow flows[N_FLOWS];
	struct app_sock socks[N_SOCKS];
	struct listener lst[N_LISTEN];
	struct held held[N_HELD];
	unsigned n_held;
	struct known known[N_KNOWN];
	unsigned n_known;
	bool known_full;
	struct rte_mbuf *burst[BURST_MAX];
	unsigned n_burst;
	struct tcp_options syn_opts; /* set-up byte 6 */
	uint64_t tcp_frames;	     /* TCP segments transmitted */
	uint64_t cookies_checked;    /* syncookies_sent when the last frames were checked */
	uint64_t closed_checked;     /* closed, likewise */
	uint64_t iter;		     /* iterations ended */
	unsigned flood_n;
	uint16_t ip_id;
	bool defer; /* the loop leaves its bookkeeping until after the transmit (set-up 8-9) */
} fz;

static struct rte_mempool *rx_pool, *hdr_pool;
static uint64_t zbuf_base;
static unsigned rx_pool_base;
static uint8_t io_buf[65536 + 4096];

static bool verbose(void)
{
	static int v = -1;

	if (v < 0)
		v = getenv("FUZZ_TCP_STACK_VERBOSE") != NULL;
	return v;
}

#define VLOG(...)                                                                                  \
	do {                                                                                       \
		if (verbose())                                                                     \
			fprintf(stderr, __VA_ARGS__);                                              \
	} while (0)

/* ---- deterministic random bytes (libsodium's, for the table's and the cookies' keys) ---- */

static uint64_t rng_state;

static uint32_t rng_random(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 16);
}

static void rng_buf(void *const buf, const size_t size)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < size; i++)
		p[i] = (uint8_t)rng_random();
}

static const char *rng_name(void)
{
	return "fuzz_tcp_stack";
}

static randombytes_implementation rng_impl = {
    .implementation_name = rng_name, .random = rng_random, .buf = rng_buf};

/* ---- addresses ---- */

static struct rte_ether_addr mac_of(uint32_t ip)
{
	return (struct rte_ether_addr){{0x02, 0, 0, 0, 0, (uint8_t)ip}};
}

static bool is_peer(uint32_t ip)
{
	return ip == PEER_A || ip == PEER_B || ip == FLOOD_IP || ip == ROUTER_IP;
}

/* ---- the capturing port ---- */

static uint16_t cap_tx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct cap_port *cp = (struct cap_port *)p;

	if (cp->n + n > cp->cap) {
		cp->cap = (cp->n + n) * 2;
		cp->tx = realloc(cp->tx, cp->cap * sizeof(*cp->tx));
		FUZZ_CHECK(cp->tx != NULL);
	}
	memcpy(cp->tx + cp->n, pkts, n * sizeof(*pkts));
	cp->n += n;
	return n;
}

static const struct port_ops cap_ops = {.rx_burst = fuzz_port_no_rx, .tx_burst = cap_tx};

/* ---- the model's bookkeeping ---- */

static struct known *known_find(uint32_t raddr, uint16_t rport, uint16_t lport)
{
	for (unsigned i = 0; i < fz.n_known; i++) {
		struct known *k = &fz.known[i];

		if (k->raddr == raddr && k->rport == rport && k->lport == lport)
			return k;
	}
	return NULL;
}

/* Something will be sent on this 4-tuple (by a peer, or by the application's connect). */
static void known_note(uint32_t raddr, uint16_t rport, uint16_t lport, bool active, bool syn)
{
	struct known *k = known_find(raddr, rport, lport);

	if (!k) {
		if (fz.n_known == N_KNOWN) {
			fz.known_full = true; /* too many to tell: the tuple check stops */
			return;
		}
		k = &fz.known[fz.n_known++];
		*k = (struct known){.raddr = raddr, .rport = rport, .lport = lport};
	}
	k->active |= active;
	k->peer_syn |= syn;
}

static struct flow *flow_of(uint32_t raddr, uint16_t rport, uint16_t lport)
{
	for (unsigned i = 0; i < N_FLOWS; i++) {
		struct flow *f = &fz.flows[i];

		if (f->used && f->t.raddr == raddr && f->t.rport == rport && f->t.lport == lport)
			return f;
	}
	return NULL;
}

/*
 * The held socket whose connection owns this 4-tuple in the stack's table.
 * One already CLOSED (reset, timed out) owns nothing: the application may
 * still hold it, but a new connection may have taken its 4-tuple (a SYN
 * after a RST, RFC 9293 3.10.7.4).
 */
static struct app_sock *sock_of(uint32_t raddr, uint16_t rport, uint16_t lport)
{
	for (unsigned i = 0; i < N_SOCKS; i++) {
		struct app_sock *as = &fz.socks[i];
		const struct tcp_conn *c;

		if (!as->s)
			continue;
		c = tcp_sock_conn(as->s);
		if (c->state != TCP_CLOSED && c->tuple.raddr == raddr && c->tuple.rport == rport &&
		    c->tuple.lport == lport)
			return as;
	}
	return NULL;
}

/* Forget what the peer knew of flow @f's connection: a new one starts on its 4-tuple. */
static void flow_reset(struct flow *f)
{
	struct tcp_4tuple t = f->t;
	unsigned gen = f->gen;

	*f = (struct flow){.used = true, .t = t, .gen = gen, .syn_opts = fz.syn_opts, .wnd = 65535};
}

/* Flow @k, given a 4-tuple to our port 80 from the first peer if it has none yet. */
static struct flow *flow_get(unsigned k)
{
	struct flow *f = &fz.flows[k];

	if (!f->used) {
		f->t = (struct tcp_4tuple){.laddr = OUR_IP,
					   .raddr = PEER_A,
					   .lport = listen_ports[0],
					   .rport = (uint16_t)(20000 + 64 * k)};
		flow_reset(f);
	}
	return f;
}

/* The peer's timestamp clock: 1 ms ticks, the same for every peer. */
static uint32_t peer_ts(void)
{
	return (uint32_t)(fz.now / MS) + 1000;
}

/* The last ACK the stack sent on @f, or (before any) the peer's next. */
static uint32_t stack_rcv_nxt(const struct flow *f)
{
	return f->seen_syn ? f->seen_ack : f->nxt;
}

/* ---- frames to the stack ---- */

/* A packet buffer for a frame of @len bytes (at most FRAME_ROOM), or NULL. */
static uint8_t *frame_new(struct rte_mbuf **m, size_t len)
{
	uint8_t *p;

	*m = rte_pktmbuf_alloc(rx_pool);
	if (!*m)
		return NULL; /* the stack holds every buffer: nothing to send with */
	p = (uint8_t *)rte_pktmbuf_append(*m, (uint16_t)len);
	if (!p) {
		rte_pktmbuf_free(*m);
		return NULL;
	}
	return p;
}

/* Queue @m for the next burst (delivered when full or before any other operation). */
static void burst_add(struct rte_mbuf *m);

/* An IPv4 datagram from @src to @dst with @len bytes of @proto at the returned pointer. */
static uint8_t *ip_frame(struct rte_mbuf **m, uint32_t src, uint32_t dst, uint8_t proto,
			 uint8_t tos, size_t len)
{
	struct rte_ether_addr smac = mac_of(src), dmac = mac_of(OUR_IP);
	struct ipv4_repr ir = {.src = src,
			       .dst = dst,
			       .proto = proto,
			       .tos = tos,
			       .ttl = 64,
			       .id = fz.ip_id++,
			       .payload_len = len};
	uint8_t *p = frame_new(m, RTE_ETHER_HDR_LEN + IPV4_HDR_LEN + len);

	if (!p)
		return NULL;
	eth_emit(p, RTE_ETHER_HDR_LEN, &dmac, &smac, RTE_ETHER_TYPE_IPV4);
	FUZZ_CHECK(ipv4_emit(p + RTE_ETHER_HDR_LEN, IPV4_HDR_LEN + len, &ir, true) == IPV4_HDR_LEN);
	return p + RTE_ETHER_HDR_LEN + IPV4_HDR_LEN;
}

/* Most payload a received frame can carry after @hdr bytes of TCP header. */
static size_t payload_room(size_t hdr)
{
	return FRAME_ROOM - RTE_ETHER_HDR_LEN - IPV4_HDR_LEN - hdr;
}

/* Segment @r from @src to us, its payload from the content model; into the burst. */
static void peer_segment(uint32_t src, struct tcp_repr *r, uint8_t ecn)
{
	size_t hdr = tcp_hdr_len(&r->opts);
	struct rte_mbuf *m;
	uint8_t *p;

	if (r->payload_len > payload_room(hdr))
		r->payload_len = payload_room(hdr);
	p = ip_frame(&m, src, OUR_IP, IPPROTO_TCP, ecn & TCP_ECN_MASK, hdr + r->payload_len);
	if (!p)
		return;
	fill_rx(p + hdr, r->seq + !!(r->flags & SYN), r->payload_len);
	FUZZ_CHECK(tcp_emit(p, hdr + r->payload_len, r, &r->opts, src, OUR_IP, true) == hdr);
	if (src != FLOOD_IP) /* the flood's 4-tuples are too many to list: all of 10.0.0.4 */
		known_note(src, r->sport, r->dport, false, r->flags & SYN);
	VLOG("  peer %u->%u flags %02x seq %u ack %u len %zu wnd %u\n", r->sport, r->dport,
	     r->flags, r->seq, r->ack, r->payload_len, r->window);
	burst_add(m);
}

/* A segment of flow @f's peer: its ports, window, and timestamps as negotiated (or flipped). */
static struct tcp_repr flow_repr(const struct flow *f, uint8_t flags, uint32_t seq, uint32_t ack,
				 bool flip_ts)
{
	struct tcp_repr r = {.sport = f->t.rport,
			     .dport = f->t.lport,
			     .seq = seq,
			     .ack = ack,
			     .flags = flags,
			     .window = f->wnd,
			     .hdr_len = 20};
	bool ts = (flags & SYN) ? f->syn_opts.has_ts : f->ts_ok;

	if (flags & SYN) {
		r.opts = f->syn_opts;
		r.opts.has_ts = false;
	}
	if (ts != flip_ts) {
		r.opts.has_ts = true;
		r.opts.ts_val = peer_ts();
		r.opts.ts_ecr = f->ts_recent;
	}
	return r;
}

/* Send @r on flow @f and note what the peer has now sent and acknowledged. */
static void flow_send(struct flow *f, struct tcp_repr *r, uint8_t ecn)
{
	uint32_t end;

	peer_segment(f->t.raddr, r, ecn);
	end = r->seq + !!(r->flags & SYN) + (uint32_t)r->payload_len + !!(r->flags & FIN);
	/* The peer's next: what it sent contiguously from it. */
	if (seq_leq(r->seq, f->nxt) && seq_gt(end, f->nxt) && end - f->nxt < (1u << 20))
		f->nxt = end;
	if ((r->flags & ACK) && seq_gt(r->ack, f->acked) && seq_leq(r->ack, f->seen_max))
		f->acked = r->ack;
}

/* ---- the loop ---- */

static void check_frames(void);
static void check_socks(void);
static void check_stack(void);

/* The end of a loop iteration (lunar_env_poll()): timers, events, transmit; then the checks. */
static void iteration_end(void)
{
	tcp_stack_poll(fz.st, fz.now);
	netif_timers(&fz.nif, fz.now);
	netif_flush(&fz.nif);
	if (fz.defer) {
		tcp_stack_after_tx(fz.st);
		zbuf_defer_end();
	}
	check_frames();
	check_socks();
	check_stack();
	fz.cookies_checked = tcp_stack_stats(fz.st)->syncookies_sent;
	fz.closed_checked = tcp_stack_stats(fz.st)->conns_closed;
	fz.iter++;
}

/* The burst received so far, processed as one, and its iteration ended. */
static void deliver(void)
{
	if (!fz.n_burst)
		return;
	if (fz.defer)
		zbuf_defer_begin();
	netif_input(&fz.nif, fz.burst, (uint16_t)fz.n_burst, fz.now);
	fz.n_burst = 0;
	iteration_end();
}

static void burst_add(struct rte_mbuf *m)
{
	if (fz.n_burst == BURST_MAX)
		deliver();
	fz.burst[fz.n_burst++] = m;
}

/* ---- checks of what the stack sent ---- */

/* Segment @r, sent on the socket @as holds: within what the connection sent and received. */
static void check_sent_on_sock(const struct app_sock *as, const struct tcp_repr *r)
{
	const struct tcp_conn *c = tcp_sock_conn(as->s);
	uint32_t len = (uint32_t)r->payload_len;

	if (r->flags & RST) {
		FUZZ_CHECK(len == 0);
		return;
	}
	/*
	 * Frames are checked at the iteration's end, so a SYN cookie (RFC 4987
	 * 3.6: no state) answering a SYN on this 4-tuple earlier in the burst,
	 * before the ACK of an older cookie made this connection, shows up
	 * here. Another ISS is allowed only as such a cookie.
	 */
	if ((r->flags & (SYN | ACK)) == (SYN | ACK) && r->seq != c->iss) {
		FUZZ_CHECK(tcp_stack_stats(fz.st)->syncookies_sent > fz.cookies_checked);
		return;
	}
	FUZZ_CHECK(seq_leq(r->seq + !!(r->flags & SYN) + len + !!(r->flags & FIN), c->snd_max));
	if (r->flags & SYN) {
		FUZZ_CHECK(r->seq == c->iss && len == 0);
		if (r->flags & ACK)
			FUZZ_CHECK(r->ack == c->irs + 1 && seq_leq(r->ack + r->window, c->rcv_adv));
		return;
	}
	FUZZ_CHECK(r->flags & ACK);
	/*
	 * Likewise a connection on this 4-tuple that closed earlier in the
	 * iteration (reset in SYN-RECEIVED, say) and whose place this one,
	 * made since from a new SYN, took: same ISS (RFC 6528: the same tuple
	 * at the same time), another IRS. Its frames are its own. (An ACK
	 * exactly 2^31 from RCV.NXT is the old one's too: serial arithmetic
	 * calls that distance "before", as seq_leq() does.)
	 */
	if ((uint32_t)(c->rcv_nxt - r->ack) >= 0x80000000u && as->born == fz.iter &&
	    tcp_stack_stats(fz.st)->conns_closed > fz.closed_checked)
		return;
	FUZZ_CHECK(seq_leq(r->ack, c->rcv_nxt));
	FUZZ_CHECK(seq_leq(r->ack + ((uint32_t)r->window << c->rcv_wscale), c->rcv_adv));
	FUZZ_CHECK(r->opts.has_ts == c->ts_ok);
	FUZZ_CHECK(!r->opts.has_mss && !r->opts.has_wscale && !r->opts.sack_permitted);
	FUZZ_CHECK(r->opts.sack_count == 0 || c->sack_ok);
	/* The payload: the bytes the application wrote at that offset of its stream. */
	if (len && !is_tx(r->payload, r->seq - (c->iss + 1), len)) {
		uint32_t off = r->seq - (c->iss + 1), i = 0;

		while (r->payload[i] == pat_tx(off + i))
			i++;
		fprintf(stderr,
			"segment seq %u len %u (stream offset %u, %u written): byte %u is %#x, "
			"written %#x\n",
			r->seq, len, off, as->wrote, i, r->payload[i], pat_tx(off + i));
		FUZZ_CHECK(!"payload sent is not what the application wrote");
	}
}

/* What flow @f's peer learns from the stack's segment @r. */
static void flow_saw(struct flow *f, const struct tcp_repr *r)
{
	uint32_t end = r->seq + !!(r->flags & SYN) + (uint32_t)r->payload_len + !!(r->flags & FIN);

	if (r->flags & RST)
		return;
	if (r->flags & SYN) {
		f->seen_syn = true;
		f->stack_iss = r->seq;
		f->seen_max = end;
		f->acked = r->seq;
		f->ts_ok = f->syn_opts.has_ts && r->opts.has_ts;
	} else if (f->seen_syn && seq_gt(end, f->seen_max)) {
		f->seen_max = end;
	}
	if (r->flags & ACK) {
		f->seen_ack = r->ack;
		/* What the stack acknowledges the peer sent: its next is past it. */
		if (f->seen_syn && seq_gt(r->ack, f->nxt))
			f->nxt = r->ack;
	}
	if (r->opts.has_ts)
		f->ts_recent = r->opts.ts_val;
}

/* One transmitted frame: well formed, for a known 4-tuple, consistent with its connection. */
static void check_frame(const uint8_t *p, size_t len)
{
	struct eth_repr er;
	struct ipv4_repr ir;
	struct tcp_repr r;
	struct rte_ether_addr dmac;
	const struct known *k;
	struct app_sock *as;
	struct flow *f;

	FUZZ_CHECK_OK(eth_parse(p, len, &er));
	FUZZ_CHECK(er.ethertype == RTE_ETHER_TYPE_IPV4); /* every neighbour is known: no ARP */
	FUZZ_CHECK(rte_is_same_ether_addr(&er.src, &fz.nif.mac));
	FUZZ_CHECK_OK(ipv4_parse(er.payload, er.payload_len, true, &ir));
	FUZZ_CHECK(ir.src == OUR_IP && ir.proto == IPPROTO_TCP && is_peer(ir.dst));
	FUZZ_CHECK(ir.total_len <= fz.nif.mtu);
	dmac = mac_of(ir.dst);
	FUZZ_CHECK(rte_is_same_ether_addr(&er.dst, &dmac));
	FUZZ_CHECK((ir.tos & TCP_ECN_MASK) == TCP_ECN_NOT_ECT ||
		   (ir.tos & TCP_ECN_MASK) == TCP_ECN_ECT0);
	FUZZ_CHECK_OK(tcp_parse(ir.payload, ir.payload_len, ir.src, ir.dst, true, &r));
	fz.tcp_frames++;
	VLOG("  stack %u->%u flags %02x seq %u ack %u len %zu wnd %u%s\n", r.sport, r.dport,
	     r.flags, r.seq, r.ack, r.payload_len, r.window, (ir.tos & 3) ? " ect" : "");
	if (ir.dst == FLOOD_IP) {
		/*
		 * Spoofed SYNs get SYN-ACKs (or cookies); their 4-tuples get nothing else but RSTs.
		 */
		FUZZ_CHECK((r.flags & (SYN | ACK | RST | FIN)) == (SYN | ACK) || (r.flags & RST));
		return;
	}
	k = known_find(ir.dst, r.dport, r.sport);
	if (!k && !fz.known_full) {
		fprintf(stderr, "segment to %x:%u from port %u\n", ir.dst, r.dport, r.sport);
		FUZZ_CHECK(!"segment for a 4-tuple nobody opened or sent on");
	}
	if (k && (r.flags & SYN))
		FUZZ_CHECK((r.flags & ACK) ? k->peer_syn : k->active);
	as = sock_of(ir.dst, r.dport, r.sport);
	if (as)
		check_sent_on_sock(as, &r);
	f = flow_of(ir.dst, r.dport, r.sport);
	if (f)
		flow_saw(f, &r);
}

static void check_frames(void)
{
	struct cap_port *cp = &fz.port;

	for (unsigned i = 0; i < cp->n; i++) {
		struct rte_mbuf *m = cp->tx[i];
		const uint8_t *p;

		FUZZ_CHECK(m->pkt_len <= sizeof(io_buf));
		p = rte_pktmbuf_read(m, 0, m->pkt_len, io_buf);
		FUZZ_CHECK(p != NULL);
		check_frame(p, m->pkt_len);
		rte_pktmbuf_free(m); /* a zero-copy frame's payload references go with it */
	}
	cp->n = 0;
}

/* ---- checks of the sockets held and of the stack ---- */

/* The receive side is numbered (the peer's SYN was taken): where reading starts. */
static bool rd_ready(struct app_sock *as, const struct tcp_conn *c)
{
	if (!as->rd_init && (c->irs | c->rcv_nxt)) {
		as->rd_seq = c->irs + 1;
		as->rd_init = true;
	}
	return as->rd_init;
}

static void check_sock(struct app_sock *as)
{
	const struct tcp_conn *c = tcp_sock_conn(as->s);
	bool rcv = rd_ready(as, c);

	FUZZ_CHECK(seq_leq(c->snd_una, c->snd_nxt) && seq_leq(c->snd_nxt, c->snd_max));
	if (as->prev_ok) {
		FUZZ_CHECK(seq_geq(c->snd_una, as->prev_una));
		FUZZ_CHECK(seq_geq(c->snd_max, as->prev_max));
	}
	/* RCV.NXT from the peer's SYN on (before it, it is 0). */
	if (as->prev_rcv_ok)
		FUZZ_CHECK(seq_geq(c->rcv_nxt, as->prev_rcv_nxt));
	as->prev_ok = true;
	as->prev_una = c->snd_una;
	as->prev_max = c->snd_max;
	as->prev_rcv_ok = rcv;
	as->prev_rcv_nxt = c->rcv_nxt;

	FUZZ_CHECK(c->snd.bytes <= c->cfg.snd_buf);
	FUZZ_CHECK((uint64_t)c->rcvq_bytes + c->reass.bytes <= c->cfg.rcv_buf);
	FUZZ_CHECK(tcp_sock_readable(as->s) == c->rcvq_bytes);
	FUZZ_CHECK(tcp_sock_held(as->s) == as->held_bytes && c->app_held == as->held_bytes);
	FUZZ_CHECK(tcp_sock_send_space(as->s) <= c->cfg.snd_buf - c->snd.bytes);
	if (c->state == TCP_CLOSED)
		return;
	/*
	 * The send buffer holds exactly what was written and not acknowledged:
	 * stream offset 0 is ISS + 1, and an acknowledged FIN takes one more.
	 */
	{
		uint32_t una_off = c->snd_una - (c->iss + seq_gt(c->snd_una, c->iss));

		if (c->fin_sent && seq_gt(c->snd_una, c->fin_seq))
			una_off--;
		if (una_off + c->snd.bytes != as->wrote) {
			fprintf(stderr, "una_off %u + bytes %u != written %u (state %s)\n", una_off,
				c->snd.bytes, as->wrote, tcp_state_name(c->state));
			FUZZ_CHECK(
			    !"send buffer does not hold what was written and not acknowledged");
		}
	}
	/* The receive queue runs from what was read to RCV.NXT (less the peer's FIN). */
	if (rcv && c->state != TCP_SYN_SENT)
		FUZZ_CHECK(as->rd_seq + c->rcvq_bytes == c->rcv_nxt - c->fin_rcvd);
}

static void check_socks(void)
{
	for (unsigned i = 0; i < N_SOCKS; i++)
		if (fz.socks[i].s)
			check_sock(&fz.socks[i]);
}

/* Bytes @c holds against mem_max (tcp_stack.c's conn_mem()). */
static uint64_t conn_bytes(const struct tcp_conn *c)
{
	return (uint64_t)c->snd.bytes + c->rcvq_bytes + c->app_held + c->reass.bytes;
}

/*
 * The path MTU cache and the connections agree (RFC 1191 5): each knows
 * exactly what the cache holds for its peer (expired or not: the purge
 * comes with the next poll or ICMP error), or nothing, and sends at most
 * that; a raised MSS leaves cwnd at least one segment.
 */
static void check_path_mtu(const struct tcp_conn *c)
{
	const struct pmtu_cache *pc = tcp_stack_pmtu(fz.st);
	uint16_t cached = 0;

	for (unsigned i = 0; i < PMTU_SLOTS; i++)
		if (pc->e[i].mtu && pc->e[i].dst == c->tuple.raddr)
			cached = pc->e[i].mtu;
	FUZZ_CHECK(c->path_mtu == cached);
	FUZZ_CHECK(!c->pmtu_guessed); /* a black hole's guess went into the cache */
	FUZZ_CHECK(c->cc.cwnd >= c->cc.smss);
	FUZZ_CHECK(!cached || cached >= TCP_PMTU_MIN);
	FUZZ_CHECK(c->snd_mss <= c->mss_clamp);
	if (c->state >= TCP_ESTABLISHED) {
		uint32_t fits =
		    c->path_mtu ? c->path_mtu - 40u - (c->ts_ok ? 12u : 0u) : UINT32_MAX;

		FUZZ_CHECK(c->snd_mss == (fits < c->mss_clamp ? fits : c->mss_clamp));
	}
}

static void check_stack(void)
{
	const struct tcp_stack_stats *x = tcp_stack_stats(fz.st);
	const struct tcp_limits *lm = &fz.lim_max;
	struct tcp_limits_usage u;
	unsigned held = 0, held_open = 0, held_tw = 0;
	uint64_t held_mem = 0;

	tcp_stack_usage(fz.st, &u);
	for (unsigned i = 0; i < N_SOCKS; i++) {
		const struct tcp_conn *c;

		if (!fz.socks[i].s)
			continue;
		c = tcp_sock_conn(fz.socks[i].s);
		check_path_mtu(c);
		held++;
		held_open += c->state != TCP_CLOSED;
		held_tw += c->state == TCP_TIME_WAIT;
		held_mem += conn_bytes(c);
	}
	/* Every segment built went on the wire: none too big for the MTU, none lost. */
	FUZZ_CHECK(fz.nif.ctr.drops[LUNAR_DROP_IP_TOO_BIG] == 0);
	if (x->segs_out != fz.tcp_frames) {
		fprintf(stderr, "segs_out %llu, TCP frames on the wire %llu\n",
			(unsigned long long)x->segs_out, (unsigned long long)fz.tcp_frames);
		FUZZ_CHECK(!"segs_out is not the number of TCP segments transmitted");
	}
	/* Connections: counted once each way; every one allocated is live (the dead are freed). */
	FUZZ_CHECK(x->conns_active == x->conns_opened - x->conns_closed);
	FUZZ_CHECK(tcp_stack_sockets(fz.st) == x->conns_active);
	FUZZ_CHECK(held <= x->conns_active);
	/* The limits hold (a lowered one acts on what comes next: the largest set). */
	FUZZ_CHECK(u.conns <= lm->max_conns && u.conns <= x->conns_active);
	FUZZ_CHECK(u.half_open <= lm->max_half_open);
	FUZZ_CHECK(u.time_wait <= lm->max_time_wait);
	FUZZ_CHECK(u.half_open + u.time_wait <= u.conns);
	FUZZ_CHECK(x->syncookies_half_open <= x->syncookies_sent);
	/* Every ICMP error netif hands to TCP gets exactly one verdict (or is another worker's). */
	{
		uint64_t verdicts = x->icmp_no_conn + x->icmp_out_of_window + x->icmp_mtu_absurd +
				    x->icmp_mtu_not_lower + x->icmp_mtu_recorded +
				    x->icmp_mss_lowered + x->icmp_mss_floored +
				    x->icmp_soft_errors + x->icmp_aborts + x->icmp_rto_reverts;
		uint64_t handed = fz.nif.ctr.rx_icmp_error_tcp;

		FUZZ_CHECK(verdicts <= handed && handed <= verdicts + x->foreign);
		if (fz.plan.n_queues == 1)
			FUZZ_CHECK(verdicts == handed);
	}
	FUZZ_CHECK(u.mem_bytes >= held_mem);
	if (held == x->conns_active) {
		/* Every live connection is the application's: the usage is theirs exactly. */
		FUZZ_CHECK(u.half_open == 0 && u.time_wait == held_tw);
		FUZZ_CHECK(held_open <= u.conns && u.conns <= held);
		if (u.mem_bytes != held_mem) {
			fprintf(stderr, "mem_bytes %llu, the connections hold %llu\n",
				(unsigned long long)u.mem_bytes, (unsigned long long)held_mem);
			FUZZ_CHECK(!"mem_bytes is not what the connections hold");
		}
	}
}

/* ---- the application ---- */

static void held_release(unsigned i)
{
	struct held *h = &fz.held[i];

	if (h->owner >= 0) {
		struct app_sock *as = &fz.socks[h->owner];

		as->held_bytes -= h->len;
		tcp_sock_zc_done(as->s, h->data, h->len);
	} else {
		/* the socket is closed: only the reference */
		tcp_sock_zc_done(NULL, h->data, h->len);
	}
	fz.held[i] = fz.held[--fz.n_held];
}

/* Socket @as goes (closed or aborted): what it holds zero-copy stays the application's. */
static void sock_forget(struct app_sock *as)
{
	int idx = (int)(as - fz.socks);

	for (unsigned i = 0; i < fz.n_held; i++)
		if (fz.held[i].owner == idx)
			fz.held[i].owner = -1;
	*as = (struct app_sock){0};
}

/* Copying read of up to @max bytes, checked against the content model. @return bytes read. */
static size_t app_read(struct app_sock *as, size_t max)
{
	const struct tcp_conn *c = tcp_sock_conn(as->s);
	uint32_t avail = tcp_sock_readable(as->s);
	size_t n;

	if (max > sizeof(io_buf))
		max = sizeof(io_buf);
	n = tcp_sock_read(as->s, io_buf, max);
	FUZZ_CHECK(n <= max && n <= avail);
	if (!n)
		return 0;
	FUZZ_CHECK(rd_ready(as, c));
	if (!is_rx(io_buf, as->rd_seq, n)) {
		fprintf(stderr, "read %zu bytes at seq %u: not what the peer sent\n", n,
			as->rd_seq);
		FUZZ_CHECK(!"bytes read are not the peer's");
	}
	as->rd_seq += (uint32_t)n;
	return n;
}

/* Copying send of @len bytes of the application's stream. @return what tcp_sock_send() did. */
static int app_send(struct app_sock *as, uint32_t len)
{
	const struct tcp_conn *c = tcp_sock_conn(as->s);
	uint8_t *buf = malloc(len ? len : 1);
	int rc;

	FUZZ_CHECK(buf != NULL);
	fill_tx(buf, as->wrote, len);
	rc = tcp_sock_send(as->s, buf, len);
	free(buf);
	VLOG("  send %u bytes at offset %u: %d\n", len, as->wrote, rc);
	FUZZ_CHECK(rc <= (int)len);
	if (rc > 0)
		as->wrote += (uint32_t)rc;
	else
		FUZZ_CHECK(rc == 0 || rc == -ENOTCONN || rc == -EPIPE || rc == -ENOBUFS ||
			   rc == -ENOMEM || rc == c->error);
	return rc;
}

static void on_sock(struct tcp_sock *s, uint32_t events, void *ctx)
{
	struct app_sock *as = ctx;
	const struct tcp_conn *c = tcp_sock_conn(s);

	if (as->s != s)
		FUZZ_CHECK(!"event for a socket the application does not hold");
	VLOG("  event socket %d: %#x (%s)\n", (int)(as - fz.socks), events,
	     tcp_state_name(c->state));
	as->events |= events;
	if (events & TCP_EV_CLOSED)
		FUZZ_CHECK(c->state == TCP_CLOSED);
	if ((events & TCP_EV_READABLE) && (as->mode & (MODE_READ | MODE_REPLY))) {
		size_t n = app_read(as, sizeof(io_buf));

		if (n && (as->mode & MODE_REPLY))
			app_send(as, (uint32_t)n);
	}
	if ((events & (TCP_EV_EOF | TCP_EV_RESET | TCP_EV_TIMEOUT | TCP_EV_CLOSED)) &&
	    (as->mode & MODE_CLOSE)) {
		tcp_sock_close(s);
		sock_forget(as);
	}
}

static struct app_sock *free_sock(unsigned k)
{
	if (!fz.socks[k].s)
		return &fz.socks[k];
	for (unsigned i = 0; i < N_SOCKS; i++)
		if (!fz.socks[i].s)
			return &fz.socks[i];
	return NULL;
}

/* Take every connection listener @l has ready that a free socket can hold, into slot @k first. */
static void app_accept(struct listener *l, unsigned k, bool all)
{
	struct app_sock *as;

	while ((as = free_sock(k)) && tcp_listener_ready(l->l)) {
		struct tcp_sock *s = tcp_accept(l->l, on_sock, as);
		const struct tcp_conn *c;

		if (!s)
			break;
		c = tcp_sock_conn(s);
		/* Only connections that completed the handshake are accepted. */
		FUZZ_CHECK(c->state != TCP_LISTEN && c->state != TCP_SYN_SENT &&
			   c->state != TCP_SYN_RECEIVED);
		*as = (struct app_sock){.s = s, .born = fz.iter};
		VLOG("  accepted %u<-%x:%u (%s) as socket %d\n", c->tuple.lport, c->tuple.raddr,
		     c->tuple.rport, tcp_state_name(c->state), (int)(as - fz.socks));
		if (!all)
			break;
	}
}

/* One connection from listener k (or, with none ready there, the other) into socket k. */
static void op_accept(unsigned k)
{
	for (unsigned i = 0; i < N_LISTEN; i++) {
		struct listener *l = &fz.lst[(k + i) % N_LISTEN];

		if (l->l && tcp_listener_ready(l->l)) {
			app_accept(l, k, false);
			return;
		}
	}
}

static void on_accept(struct tcp_listener *tl, void *ctx)
{
	struct listener *l = ctx;

	FUZZ_CHECK(l->l == tl);
	if (l->auto_accept)
		app_accept(l, 0, true);
}

/* ---- operations: the peers ---- */

static uint32_t seq_base(const struct flow *f, unsigned sel)
{
	switch (sel & 3) {
	case 0:
		return stack_rcv_nxt(f);
	case 1:
		return f->nxt;
	case 2:
		return f->iss;
	default:
		return stack_rcv_nxt(f) + 0x80000000u;
	}
}

static uint32_t ack_base(const struct flow *f, unsigned sel)
{
	switch (sel & 3) {
	case 0:
		return f->seen_max;
	case 1:
		return f->acked;
	case 2:
		return f->stack_iss;
	default:
		return f->seen_max - 65536;
	}
}

static void op_segment(struct reader *in, unsigned k)
{
	struct flow *f = flow_get(k);
	uint8_t flags = rd8(in), bases = rd8(in);
	int16_t dseq = (int16_t)rd16(in), dack = (int16_t)rd16(in);
	uint32_t abase = ack_base(f, bases >> 2);
	struct tcp_repr r = flow_repr(f, flags, seq_base(f, bases) + (uint32_t)(int32_t)dseq,
				      abase + (uint32_t)(int32_t)dack, bases & 0x10);
	uint16_t pl;

	if (bases & 0x80)
		r.window = f->wnd = rd16(in);
	pl = rd16(in);
	r.payload_len = pl & 0x3fff;
	if (bases & 0x20)
		r.opts.ts_val += (uint32_t)(int32_t)(int8_t)rd8(in);
	if (bases & 0x40) {
		unsigned n = rd8(in) % TCP_MAX_SACK_BLOCKS + 1;

		for (unsigned i = 0; i < n; i++) {
			uint32_t left = abase + (uint32_t)(int32_t)(int16_t)rd16(in);

			r.opts.sack[i].left = left;
			r.opts.sack[i].right = left + rd16(in);
		}
		r.opts.sack_count = (uint8_t)n;
	}
	flow_send(f, &r, (uint8_t)(pl >> 14));
}

/* Options byte as set-up byte 6: what a peer's SYNs offer. */
static struct tcp_options syn_options(uint8_t o)
{
	uint16_t mss = peer_mss[(o >> 3) & 7];

	return (struct tcp_options){.has_ts = o & 0x01,
				    .sack_permitted = o & 0x02,
				    .has_wscale = o & 0x04,
				    .wscale = peer_wscale[o >> 6],
				    .has_mss = mss != 0,
				    .mss = mss};
}

static void op_syn(struct reader *in, unsigned k)
{
	struct flow *f = &fz.flows[k];
	uint8_t b = rd8(in);
	uint32_t iss = rd32(in);
	struct tcp_repr r;

	if (!f->used || (b & 0x04)) {
		f->gen++;
		f->t = (struct tcp_4tuple){.laddr = OUR_IP,
					   .raddr = (b & 0x08) ? PEER_B : PEER_A,
					   .rport = (uint16_t)(20000 + 64 * k + f->gen % 64)};
	}
	f->t.lport = (b & 3) == 2 ? CLOSED_PORT : listen_ports[b & 1];
	flow_reset(f);
	if (b & 0x20)
		f->syn_opts = syn_options(rd8(in));
	f->iss = f->nxt = f->acked = iss;
	r = flow_repr(f, SYN | ((b & 0x10) ? ECE | CWR : 0), iss, 0, false);
	if (b & 0x40)
		r.payload_len = rd8(in);
	flow_send(f, &r, 0);
}

/* The ACK of the stack's SYN-ACK (or of its SYN cookie): the handshake's third segment. */
static void op_handshake_ack(struct reader *in, unsigned k)
{
	struct flow *f = flow_get(k);
	uint8_t b = rd8(in);
	int32_t dack = (int8_t)(b & 0xf0) >> 4;
	struct tcp_repr r = flow_repr(f, ACK | ((b & 0x02) ? FIN : 0), f->iss + 1,
				      f->stack_iss + 1 + (uint32_t)dack, b & 0x04);

	if (b & 0x01)
		r.payload_len = rd8(in);
	flow_send(f, &r, 0);
}

/* The peer's SYN-ACK to the stack's SYN (an active open). */
static void op_synack(struct reader *in, unsigned k)
{
	struct flow *f = flow_get(k);
	uint8_t b = rd8(in);
	int32_t dack = (int8_t)(b & 0xf0) >> 4;
	uint32_t iss = rd32(in);
	struct tcp_repr r;

	f->iss = f->nxt = iss;
	r = flow_repr(f, SYN | ACK | ((b & 0x01) ? ECE : 0), iss, f->stack_iss + 1 + (uint32_t)dack,
		      false);
	flow_send(f, &r, 0);
}

static void op_data(struct reader *in, unsigned k)
{
	struct flow *f = flow_get(k);
	uint8_t b = rd8(in);
	uint16_t pl = rd16(in);
	uint8_t flags = ACK | ((b & 0x01) ? FIN : 0) | ((b & 0x04) ? 0 : PSH);
	struct tcp_repr r =
	    flow_repr(f, flags, (b & 0x02) ? stack_rcv_nxt(f) : f->nxt, f->seen_max, false);

	r.payload_len = pl & 0x3fff;
	flow_send(f, &r, (uint8_t)(pl >> 14));
}

static void op_ack_all(struct reader *in, unsigned k)
{
	struct flow *f = flow_get(k);
	uint8_t w = rd8(in);
	struct tcp_repr r;

	f->wnd = (uint16_t)(w << 8 | (w ? 0xff : 0)); /* 0: a zero window */
	r = flow_repr(f, ACK, f->nxt, f->seen_max, false);
	flow_send(f, &r, 0);
}

static const uint32_t raw_dst[4] = {OUR_IP, OUR_IP, BCAST_IP, 0xffffffffu};

static void op_raw(struct reader *in, unsigned k)
{
	struct flow *f = flow_get(k);
	uint8_t b = rd8(in);
	size_t len = rd8(in), avail = in->n - in->i, hdr = 20;
	uint32_t src_of[4] = {PEER_A, PEER_B, ROUTER_IP, f->t.raddr};
	uint32_t src = src_of[(b >> 4) & 3], dst = raw_dst[(b >> 2) & 3];
	struct tcp_repr r;
	struct rte_mbuf *m;
	uint8_t *p;

	if (len > avail)
		len = avail;
	p = ip_frame(&m, src, dst, IPPROTO_TCP, b >> 6, len);
	if (!p) {
		in->i += len;
		return;
	}
	memcpy(p, in->p + in->i, len);
	in->i += len;
	if (len >= 20) {
		if (b & 0x01) {
			/* Flow k's 4-tuple, SEQ and ACK relative to what each side has seen. */
			uint32_t seq =
			    (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | p[6] << 8 | p[7];
			uint32_t ack =
			    (uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 | p[10] << 8 | p[11];

			seq += stack_rcv_nxt(f);
			ack += f->seen_max;
			p[0] = (uint8_t)(f->t.rport >> 8);
			p[1] = (uint8_t)f->t.rport;
			p[2] = (uint8_t)(f->t.lport >> 8);
			p[3] = (uint8_t)f->t.lport;
			for (int i = 0; i < 4; i++) {
				p[4 + i] = (uint8_t)(seq >> (24 - 8 * i));
				p[8 + i] = (uint8_t)(ack >> (24 - 8 * i));
			}
		}
		/* The payload after the header (if it parses) from the content model. */
		if (tcp_parse(p, len, src, dst, false, &r) == LUNAR_DROP_NONE) {
			hdr = r.hdr_len;
			fill_rx(p + hdr, r.seq + !!(r.flags & SYN), len - hdr);
			known_note(src, r.sport, r.dport, false, r.flags & SYN);
		}
		if (!(b & 0x02))
			fuzz_fix_tcp(p, len, src, dst);
	}
	VLOG("  raw %zu bytes %x->%x\n", len, src, dst);
	burst_add(m);
}

static void op_icmp(struct reader *in, unsigned k)
{
	static const size_t l4_len[4] = {8, 20, 4, 12};
	struct flow *f = flow_get(k);
	const uint8_t *kind = icmp_kinds[rd8(in) % 16];
	uint8_t b = rd8(in);
	uint16_t mtu = rd16(in);
	int16_t dseq = (int16_t)rd16(in);
	uint32_t bases[4] = {f->acked, f->seen_max - 1, f->stack_iss, f->acked + 0x80000000u};
	struct ipv4_repr qi = {.src = (b & 0x04) ? f->t.raddr : OUR_IP,
			       .dst = f->t.raddr,
			       .proto = (b & 0x08) ? IPPROTO_UDP : IPPROTO_TCP,
			       .ttl = 64,
			       .payload_len = 40};
	struct tcp_repr qt = {.sport = f->t.lport,
			      .dport = f->t.rport,
			      .seq = bases[(b >> 4) & 3] + (uint32_t)(int32_t)dseq,
			      .ack = stack_rcv_nxt(f),
			      .flags = ACK,
			      .window = 1000};
	uint8_t quote[IPV4_HDR_LEN + TCP_HDR_LEN], msg[ICMP_HDR_LEN + sizeof(quote)];
	size_t qlen = IPV4_HDR_LEN + l4_len[b & 3], n;
	uint32_t from = (b & 0x40) ? f->t.raddr : ROUTER_IP;
	struct rte_mbuf *m;
	uint8_t *p;

	FUZZ_CHECK(ipv4_emit(quote, sizeof(quote), &qi, true) == IPV4_HDR_LEN);
	FUZZ_CHECK(tcp_emit(quote + IPV4_HDR_LEN, TCP_HDR_LEN, &qt, NULL, qi.src, qi.dst, false) ==
		   TCP_HDR_LEN);
	n = icmp_emit(
	    msg, sizeof(msg),
	    &(struct icmp_repr){
		.type = kind[0], .code = kind[1], .seq = mtu, .data = quote, .data_len = qlen});
	FUZZ_CHECK(n == ICMP_HDR_LEN + qlen);
	if (b & 0x80)
		deliver(); /* on its own: the state it meets is the state now */
	p = ip_frame(&m, from, OUR_IP, IPPROTO_ICMP, 0, n);
	if (!p)
		return;
	memcpy(p, msg, n);
	VLOG("  icmp %u/%u mtu %u quoting seq %u of %u->%u\n", kind[0], kind[1], mtu, qt.seq,
	     qt.sport, qt.dport);
	burst_add(m);
	if (b & 0x80) {
		/*
		 * A well-formed error quoting a connection the application holds,
		 * not closed (so in the table): it must reach that connection.
		 */
		struct app_sock *as = sock_of(f->t.raddr, f->t.rport, f->t.lport);
		bool meant = as && icmp_is_error(kind[0]) && !(b & 0x0c) /* ours, TCP */ &&
			     (b & 3) != 2 /* not cut short */ && fz.plan.n_queues == 1;
		uint64_t no_conn = tcp_stack_stats(fz.st)->icmp_no_conn;

		deliver();
		if (meant)
			FUZZ_CHECK(tcp_stack_stats(fz.st)->icmp_no_conn == no_conn);
	}
}

/* Spoofed SYNs from FLOOD_IP, one source port each, answered by nobody. */
static void op_flood(struct reader *in)
{
	uint8_t b = rd8(in);
	unsigned n = (b & 31) + 1;

	for (unsigned i = 0; i < n; i++) {
		uint16_t sport = (uint16_t)(1024 + fz.flood_n++);
		struct tcp_repr r = {.sport = sport,
				     .dport = listen_ports[(b >> 5) & 1],
				     .seq = 7919u * sport,
				     .flags = SYN | ((b & 0x40) ? ECE | CWR : 0),
				     .window = 65535,
				     .hdr_len = 20,
				     .opts = fz.syn_opts};

		r.opts.ts_val = peer_ts();
		peer_segment(FLOOD_IP, &r, 0);
	}
}

/* ---- operations: time and the application ---- */

static void advance(uint64_t ns)
{
	fz.now += ns;
	iteration_end();
}

static void op_time(struct reader *in)
{
	uint8_t u = rd8(in), mult = rd8(in);
	uint64_t amount = units[u & 7] * mult;

	switch ((u >> 3) & 3) {
	case 1:
		for (int i = 0; i < 8; i++)
			advance(amount);
		break;
	case 2: {
		/* The earliest deadline of a socket held, as an idle loop would wake for it. */
		uint64_t d = UINT64_MAX;

		for (unsigned i = 0; i < N_SOCKS; i++) {
			uint64_t t;

			if (!fz.socks[i].s)
				continue;
			t = tcp_next_deadline(tcp_sock_conn(fz.socks[i].s));
			if (t < d)
				d = t;
		}
		advance(d != UINT64_MAX && d > fz.now ? d - fz.now : amount);
		break;
	}
	default:
		advance(amount);
		break;
	}
}

static void op_connect(struct reader *in, unsigned k)
{
	uint8_t b = rd8(in);
	uint32_t raddr = (b & 1) ? PEER_B : PEER_A;
	uint16_t rport = (uint16_t)(5000 + (b >> 1));
	struct app_sock *as = &fz.socks[k];
	struct tcp_limits_usage u;
	struct tcp_sock *s;
	struct flow *f;
	uint64_t recycled;
	int err;

	if (as->s)
		return;
	tcp_stack_usage(fz.st, &u);
	recycled = tcp_stack_stats(fz.st)->tw_recycled;
	*as = (struct app_sock){.born = fz.iter};
	s = tcp_connect_to(fz.st, raddr, rport, on_sock, as, &err);
	if (!s) {
		VLOG("  connect: %d\n", err);
		FUZZ_CHECK(err == -EADDRNOTAVAIL || err == -ENOBUFS || err == -ENOMEM);
		/*
		 * -ENOBUFS: the table was full and no TIME-WAIT could give way
		 * (one that did made room: its entry is given back).
		 */
		if (err == -ENOBUFS) {
			FUZZ_CHECK(u.conns >= tcp_stack_limits(fz.st)->max_conns);
			FUZZ_CHECK(tcp_stack_stats(fz.st)->tw_recycled == recycled);
		}
		return;
	}
	as->s = s;
	f = &fz.flows[k];
	f->t = tcp_sock_conn(s)->tuple;
	flow_reset(f);
	known_note(raddr, rport, f->t.lport, true, false);
	VLOG("  connect %u->%x:%u as socket %u\n", f->t.lport, raddr, rport, k);
}

static void op_send_zc(struct app_sock *as, uint32_t len)
{
	const struct tcp_conn *c = tcp_sock_conn(as->s);
	uint8_t *buf;
	int rc;

	if (len > 65536)
		len = 65536;
	buf = zbuf_alloc(len ? len : 1);
	if (!buf)
		return; /* the application's Zbuf is used up */
	fill_tx(buf, as->wrote, len);
	if (len >= 3 && (len & 1)) {
		/* An odd length goes as an io-vector of three pieces of the one object. */
		const struct tcp_iov v[3] = {{buf, len / 3},
					     {buf + len / 3, len / 3},
					     {buf + 2 * (len / 3), len - 2 * (len / 3)}};

		rc = tcp_sock_send_zcv(as->s, v, 3);
	} else {
		rc = tcp_sock_send_zc(as->s, buf, len);
	}
	zbuf_unref(buf); /* the send buffer took its own reference */
	VLOG("  send_zc %u bytes at offset %u: %d\n", len, as->wrote, rc);
	FUZZ_CHECK(rc <= (int)len);
	if (rc > 0)
		as->wrote += (uint32_t)rc;
	else
		FUZZ_CHECK(rc == 0 || rc == -ENOTCONN || rc == -EPIPE || rc == -ENOMEM ||
			   rc == c->error);
}

static void op_read_zc(struct app_sock *as, unsigned max)
{
	struct tcp_slice sl[8];
	const struct tcp_conn *c = tcp_sock_conn(as->s);
	unsigned n;

	if (max > N_HELD - fz.n_held)
		max = N_HELD - fz.n_held;
	if (!max)
		return;
	n = tcp_sock_read_zc(as->s, sl, max);
	FUZZ_CHECK(n <= max);
	for (unsigned i = 0; i < n; i++) {
		FUZZ_CHECK(rd_ready(as, c));
		FUZZ_CHECK(sl[i].seq == as->rd_seq && sl[i].len > 0);
		if (!is_rx(sl[i].data, sl[i].seq, sl[i].len))
			FUZZ_CHECK(!"bytes read zero-copy are not the peer's");
		as->rd_seq += sl[i].len;
		as->held_bytes += sl[i].len;
		fz.held[fz.n_held++] = (struct held){
		    .data = sl[i].data, .len = sl[i].len, .owner = (int)(as - fz.socks)};
	}
}

static void op_zc_done(struct app_sock *as, unsigned count)
{
	int idx = (int)(as - fz.socks);

	if (count > 1) {
		/* Several slices given back in one call (tcp_sock_zc_done_v()). */
		struct tcp_slice sl[N_HELD];
		unsigned n = 0;

		for (unsigned i = 0; i < fz.n_held && n < count;) {
			if (fz.held[i].owner == idx) {
				sl[n++] = (struct tcp_slice){.data = fz.held[i].data,
							     .len = fz.held[i].len};
				as->held_bytes -= fz.held[i].len;
				fz.held[i] = fz.held[--fz.n_held];
			} else {
				i++;
			}
		}
		tcp_sock_zc_done_v(as->s, sl, n);
		return;
	}
	for (unsigned i = 0; i < fz.n_held && count;) {
		if (fz.held[i].owner == idx) {
			held_release(i); /* the last one moves into i */
			count--;
		} else {
			i++;
		}
	}
}

static void op_mode(struct app_sock *as, uint8_t mode)
{
	as->mode = mode;
	tcp_sock_set_inline(as->s, mode & MODE_INLINE);
}

static void op_listen(struct reader *in, unsigned k)
{
	struct listener *l = &fz.lst[k % N_LISTEN];
	uint8_t b = rd8(in);
	int err;

	if (l->l)
		return;
	l->auto_accept = b & 0x80;
	l->l = tcp_listen_on(fz.st, listen_ports[k % N_LISTEN], b & 7, on_accept, l, &err);
	FUZZ_CHECK(l->l != NULL && err == 0);
}

/* Set-up byte 5 / the limits operation's memory byte. */
static uint64_t mem_of(uint8_t b)
{
	if (b == 255)
		return TCP_LIMITS_MEM_DEFAULT;
	return b ? TCP_LIMITS_MEM_MIN + (uint64_t)(b - 1) * 4096 : 0;
}

static void set_limits(unsigned conns, uint8_t half_open, uint8_t time_wait, uint8_t mem)
{
	struct tcp_limits l = {.max_conns = conns,
			       .max_half_open = half_open % (conns + 1),
			       .max_time_wait = time_wait % (conns + 1),
			       .mem_max = mem_of(mem)};
	struct tcp_limits *m = &fz.lim_max;

	FUZZ_CHECK(tcp_stack_set_limits(fz.st, &l) == 0);
	FUZZ_CHECK(tcp_stack_limits(fz.st)->max_conns == conns);
	if (l.max_conns > m->max_conns)
		m->max_conns = l.max_conns;
	if (l.max_half_open > m->max_half_open)
		m->max_half_open = l.max_half_open;
	if (l.max_time_wait > m->max_time_wait)
		m->max_time_wait = l.max_time_wait;
	VLOG("  limits conns %u half-open %u time-wait %u mem %llu\n", l.max_conns, l.max_half_open,
	     l.max_time_wait, (unsigned long long)l.mem_max);
}

/* Operations on socket k; nothing if the application holds none there. */
static void op_app(unsigned op, struct reader *in, unsigned k)
{
	struct app_sock *as = &fz.socks[k];
	uint16_t arg16 = 0;
	uint8_t arg8 = 0;

	if (op == 16 || op == 17)
		arg16 = rd16(in);
	else if (op != 21 && op != 22 && op != 23)
		arg8 = rd8(in);
	if (!as->s)
		return;
	VLOG("  app op %u on socket %u (%s)\n", op, k, tcp_state_name(tcp_sock_conn(as->s)->state));
	switch (op) {
	case 16:
		app_send(as, arg16);
		break;
	case 17:
		op_send_zc(as, arg16);
		break;
	case 18:
		app_read(as, arg8 ? (size_t)arg8 * 256 : 65536);
		break;
	case 19:
		op_read_zc(as, arg8 % 8 + 1);
		break;
	case 20:
		op_zc_done(as, arg8 % 4 + 1);
		break;
	case 21:
		tcp_sock_shutdown(as->s);
		break;
	case 22:
		tcp_sock_close(as->s);
		sock_forget(as);
		break;
	case 23:
		tcp_sock_abort(as->s);
		sock_forget(as);
		break;
	default:
		op_mode(as, arg8);
		break;
	}
}

/* ---- set-up and tear-down ---- */

static void setup(struct reader *in)
{
	uint8_t o = rd8(in), bufs = rd8(in), b2 = rd8(in), half_open = rd8(in);
	uint8_t time_wait = rd8(in), mem = rd8(in), syn = rd8(in), misc = rd8(in);
	uint16_t seed = rd16(in);
	unsigned conns = (b2 & 15) + 1;
	struct tcp_config *cfg = &fz.cfg;
	struct netif_config nc = {.port = &fz.port.base,
				  .ip = OUR_IP,
				  .prefix_len = 24,
				  .neigh_mode = NEIGH_MODE_ARP,
				  .arp_reachable_ns = 1ull << 62}; /* neighbours never go stale */
	char err[128];

	memset(&fz, 0, sizeof(fz));
	rng_state = seed;
	fz.now = SEC;
	fz.syn_opts = syn_options(syn);
	tcp_config_default(cfg);
	cfg->timestamps = !(o & 0x01);
	cfg->sack = !(o & 0x02);
	cfg->window_scaling = !(o & 0x04);
	cfg->nodelay = o & 0x08;
	cfg->delayed_ack = !(o & 0x10);
	cfg->syncookies = !(o & 0x20);
	cfg->rack = !(o & 0x80);
	cfg->rcv_buf = rcv_bufs[bufs & 7];
	cfg->snd_buf = snd_bufs[(bufs >> 3) & 7];
	cfg->cc = (enum tcp_cc_algo)((bufs >> 6) % TCP_CC_ALGO_COUNT);
	cfg->gso = (bufs >> 6) != 3;
	/* GRO off for a quarter of the seeds too, whatever the congestion control. */
	cfg->gro = (bufs >> 6) != 3 && (seed & 6) != 6;
	cfg->ecn = (b2 & 0x40) ? TCP_ECN_ON : TCP_ECN_ACCEPT;
	if (misc & 0x01) {
		cfg->keepalive = true;
		cfg->keepalive_idle_ns = SEC;
		cfg->keepalive_intvl_ns = 200 * MS;
		cfg->keepalive_probes = 2;
	}
	if (misc & 0x02)
		cfg->syn_retries = 1;
	if (misc & 0x04)
		cfg->reass_max_segs = 4;
	if (misc & 0x08)
		cfg->reass_max_bytes = 3000;
	cfg->challenge_ack_limit = challenge_limits[(misc >> 4) & 3];
	if (misc & 0x40)
		cfg->user_timeout_ns = SEC;
	if (misc & 0x80)
		cfg->iw_segments = 1;

	fz.port.base = (struct port){.ops = &cap_ops,
				     .name = "fuzz",
				     .mac = mac_of(OUR_IP),
				     .mtu = mtus[(b2 >> 4) & 3],
				     .pool = rx_pool};
	if (o & 0x40)
		fz.port.base.offloads = PORT_OFFLOAD_TX_MULTISEG;
	FUZZ_CHECK(netif_init(&fz.nif, &nc) == 0);
	fz.nif.now_ns = fz.now;
	for (uint32_t ip = PEER_A; ip <= FLOOD_IP; ip++) {
		struct rte_ether_addr mac = mac_of(ip);

		netif_neigh_update(&fz.nif, ip, &mac, true);
	}
	{
		struct rte_ether_addr mac = mac_of(ROUTER_IP);

		netif_neigh_update(&fz.nif, ROUTER_IP, &mac, true);
	}
	FUZZ_CHECK(flow_plan_init(&fz.plan, (b2 & 0x80) ? 2 : 1, 61440, 65535, err, sizeof(err)) ==
		   0);
	fz.table_conns = conns;
	fz.st = tcp_stack_create(&fz.nif, cfg, conns, &fz.plan, 0);
	FUZZ_CHECK(fz.st != NULL);
	if (o & 0x40)
		tcp_stack_set_hdr_pool(fz.st, hdr_pool);
	fz.defer = seed & 1;
	tcp_stack_defer_to_tx(fz.st, fz.defer);
	set_limits(conns, half_open, time_wait, mem);
	tcp_stack_poll(fz.st, fz.now);
}

/* The application lets go of everything; the peers fall silent; every connection must end. */
static void teardown(void)
{
	const struct tcp_stack_stats *x = tcp_stack_stats(fz.st);
	struct tcp_limits_usage u;
	unsigned waited = 0;

	deliver();
	while (fz.n_held)
		held_release(0);
	for (unsigned i = 0; i < N_SOCKS; i++)
		if (fz.socks[i].s) {
			tcp_sock_close(fz.socks[i].s);
			sock_forget(&fz.socks[i]);
		}
	for (unsigned i = 0; i < N_LISTEN; i++)
		if (fz.lst[i].l) {
			tcp_listener_close(fz.lst[i].l);
			fz.lst[i].l = NULL;
		}
	iteration_end();
	while (x->conns_active && waited++ < DRAIN_SECONDS)
		advance(SEC);
	if (x->conns_active) {
		tcp_stack_dump(fz.st, stderr);
		FUZZ_CHECK(!"connections outlived the application by 10 minutes of silent peers");
	}
	tcp_stack_usage(fz.st, &u);
	FUZZ_CHECK(u.conns == 0 && u.half_open == 0 && u.time_wait == 0 && u.mem_bytes == 0);
	if (verbose())
		tcp_stack_dump(fz.st, stderr);
	tcp_stack_free(fz.st);
	netif_flush(&fz.nif);
	FUZZ_CHECK(fz.port.n == 0); /* nothing was left to reset */
	netif_fini(&fz.nif);
	free(fz.port.tx);
	fz.port.tx = NULL;
	if (zbuf_in_use() != zbuf_base) {
		fprintf(stderr, "zbuf: %llu objects in use at the end, %llu at the start\n",
			(unsigned long long)zbuf_in_use(), (unsigned long long)zbuf_base);
		FUZZ_CHECK(!"a Zbuf object (or packet buffer) leaked");
	}
	FUZZ_CHECK(rte_mempool_in_use_count(rx_pool) == rx_pool_base);
	FUZZ_CHECK(rte_mempool_in_use_count(hdr_pool) == 0);
}

static void init_once(void)
{
	static bool done;
	/* No hugepages, no files: as the unit tests' EAL (tests/unit/port/fake_port.c). */
	char *argv[] = {"fuzz_tcp_stack",
			"--no-pci",
			"--no-shconf",
			"--no-telemetry",
			"--no-huge",
			"-m",
			"256",
			"-l",
			"0",
			"--log-level=3",
			NULL};
	struct zbuf_config zc = {
	    .backend = ZBUF_BACKEND_DPDK, .zones = {2, 2, 1, 1}, .socket_id = SOCKET_ID_ANY};
	uint16_t room;
	unsigned zones;

	if (done)
		return;
	/*
	 * Every key and ISN from the input's seed. sodium_init() draws random
	 * bytes of its own the first time: here, not in the first input only.
	 */
	FUZZ_CHECK(randombytes_set_implementation(&rng_impl) == 0);
	FUZZ_CHECK(sodium_init() >= 0);
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		abort();
	}
	FUZZ_CHECK(zbuf_pktpool_geometry(POOL_MBUFS, FRAME_ROOM, &room, &zones) == 0);
	zc.mbuf_zones = zones;
	FUZZ_CHECK(zbuf_init(&zc) == 0);
	rx_pool = zbuf_pktpool_create("fuzz_rx", POOL_MBUFS, room);
	hdr_pool = rte_pktmbuf_pool_create("fuzz_hdr", 2047, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					   (int)rte_socket_id());
	FUZZ_CHECK(rx_pool != NULL && hdr_pool != NULL);
	zbuf_base = zbuf_in_use();
	rx_pool_base = rte_mempool_in_use_count(rx_pool);
	done = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reader in = {.p = data, .n = size};

	init_once();
	if (size < SETUP_LEN)
		return 0;
	setup(&in);
	while (in.i < in.n) {
		uint8_t sel = rd8(&in);
		unsigned op = sel % 32, k = sel / 32;

		VLOG("t=%llu.%03llus op %u k %u\n", (unsigned long long)(fz.now / SEC),
		     (unsigned long long)(fz.now % SEC / MS), op, k);
		if (op <= 11 || op == 28 || op == 29 || op == 30) {
			/* A peer's segment: joins the burst. */
			switch (op) {
			case 4:
				op_syn(&in, k);
				break;
			case 5:
				op_handshake_ack(&in, k);
				break;
			case 6:
				op_synack(&in, k);
				break;
			case 7:
			case 29:
				op_data(&in, k);
				break;
			case 8:
			case 30:
				op_ack_all(&in, k);
				break;
			case 9:
				op_raw(&in, k);
				break;
			case 10:
				op_icmp(&in, k);
				break;
			case 11:
				op_flood(&in);
				break;
			default:
				op_segment(&in, k);
				break;
			}
			continue;
		}
		deliver();
		switch (op) {
		case 12:
		case 31:
			op_time(&in);
			continue; /* ends its own iterations */
		case 13:
			break;
		case 14:
			op_connect(&in, k);
			break;
		case 15:
			op_accept(k);
			break;
		case 25:
			op_listen(&in, k);
			break;
		case 26:
			if (fz.lst[k % N_LISTEN].l) {
				tcp_listener_close(fz.lst[k % N_LISTEN].l);
				fz.lst[k % N_LISTEN].l = NULL;
			}
			break;
		case 27: {
			uint8_t c = rd8(&in), h = rd8(&in), t = rd8(&in), mem = rd8(&in);

			set_limits(c % fz.table_conns + 1, h, t, mem);
			break;
		}
		default:
			op_app(op, &in, k);
			break;
		}
		iteration_end();
	}
	teardown();
	return 0;
}
