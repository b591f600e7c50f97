/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lunar_syncookie.bpf.h - the XDP SYN-cookie responder: under a SYN flood,
 * answer a SYN to one of lunar's listeners with XDP_TX, with exactly the
 * SYN-ACK lunar's worker would send (why and when: lunar_cookie in
 * src/ctl/steer_abi.h).
 *
 * The cookie is tcp_syncookie_make() (src/tcp/tcp_syncookie.c) in BPF: the
 * same bit layout, the same SipHash-2-4 (libsodium's crypto_shorthash) over
 * the same 32 input bytes, the same ~17 s slot of the worker's clock. The
 * SYN-ACK is the one tcp_xmit() builds for a fresh passive connection whose
 * ISS is the cookie: MSS; SACK-permitted, timestamps (TSval = the worker's
 * milliseconds + ISS, TSecr = the peer's TSval) and window scale when the
 * SYN offered them and the worker agrees; ECE for an ECN-setup SYN. Its
 * layout is fixed at 40 bytes of TCP header, NOPs standing in for options
 * not agreed to. tests/unit/ctl/test_xdp.c checks cookie and segment
 * against lunar's C code. Change both or neither.
 *
 * Anything unusual is not answered here but goes to lunar as before, which
 * counts and drops it under its reason or handles it: IPv4 options, a bad
 * IPv4 or TCP checksum, a SYN with data or other flags (ACK, RST, FIN), a
 * malformed option, a source lunar refuses, another destination address,
 * a frame that cannot grow to the SYN-ACK's size.
 *
 * The reply goes back to the MAC address the SYN came from, which is the
 * router (or the peer) on a datacenter's routed network.
 */
#ifndef LUNAR_SYNCOOKIE_BPF_H
#define LUNAR_SYNCOOKIE_BPF_H

#include "lunar_plan.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LUNAR_STEER_MAX_QUEUES);
	__type(key, __u32);
	__type(value, struct lunar_cookie_cfg);
} lunar_cookie SEC(".maps");

#define SC_ETH_LEN	  14
#define SC_IP_LEN	  20
#define SC_TCP_MAX	  60
#define SC_SYNACK_TCP_LEN 40
#define SC_SYNACK_LEN	  (SC_ETH_LEN + SC_IP_LEN + SC_SYNACK_TCP_LEN)
#define SC_NS_PER_MS	  1000000ull
#define SC_SLOT_SHIFT	  34 /* TCP_SYNCOOKIE_SLOT_SHIFT */
#define SC_MAC_BITS	  23 /* tcp_syncookie.c MAC_BITS */
#define SC_WSCALE_NONE	  15
#define SC_TCP_FIN	  0x01
#define SC_TCP_SYN	  0x02
#define SC_TCP_RST	  0x04
#define SC_TCP_ACK	  0x10
#define SC_TCP_ECE	  0x40
#define SC_TCP_CWR	  0x80

/* ---- SipHash-2-4 with a 64-bit result (libsodium crypto_shorthash) ---- */

#define SC_ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SC_SIPROUND                                                                                \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = SC_ROTL(v1, 13);                                                              \
		v1 ^= v0;                                                                          \
		v0 = SC_ROTL(v0, 32);                                                              \
		v2 += v3;                                                                          \
		v3 = SC_ROTL(v3, 16);                                                              \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = SC_ROTL(v3, 21);                                                              \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = SC_ROTL(v1, 17);                                                              \
		v1 ^= v2;                                                                          \
		v2 = SC_ROTL(v2, 32);                                                              \
	} while (0)

/* SipHash-2-4 of the 32 bytes m[0..3] (little-endian words) under k[0..1]. */
static __always_inline __u64 sc_siphash32(const __u64 *k, const __u64 *m)
{
	__u64 v0 = k[0] ^ 0x736f6d6570736575ull, v1 = k[1] ^ 0x646f72616e646f6dull;
	__u64 v2 = k[0] ^ 0x6c7967656e657261ull, v3 = k[1] ^ 0x7465646279746573ull;
	__u64 b = 32ull << 56; /* the length byte; 32 leaves no tail */

#pragma unroll
	for (int i = 0; i < 4; i++) {
		v3 ^= m[i];
		SC_SIPROUND;
		SC_SIPROUND;
		v0 ^= m[i];
	}
	v3 ^= b;
	SC_SIPROUND;
	SC_SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SC_SIPROUND;
	SC_SIPROUND;
	SC_SIPROUND;
	SC_SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* tcp_syncookie.c's mss_table, ascending. */
static __always_inline __u32 sc_mss_index(__u16 mss)
{
	const __u16 t[8] = {536, 1200, 1360, 1440, 1460, 4036, 8948, 8960};
	__u32 idx = 0;

#pragma unroll
	for (int i = 0; i < 8; i++)
		if (t[i] <= mss)
			idx = i;
	return idx;
}

/* ---- Internet checksum (RFC 1071) over a stack buffer ---- */

static __always_inline __u16 sc_fold(__u64 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* Sum of the 16-bit words of @p[0..len), len even and at most SC_TCP_MAX. */
static __always_inline __u64 sc_sum(const __u8 *p, __u32 len)
{
	__u64 sum = 0;

	for (__u32 i = 0; i < SC_TCP_MAX; i += 2) {
		if (i >= len)
			break;
		sum += (__u32)p[i] << 8 | p[i + 1]; /* big-endian words: no byte swap at the end */
	}
	return sum;
}

/* The pseudo-header's sum (RFC 9293 3.1) of a TCP segment of @len bytes. */
static __always_inline __u64 sc_pseudo(__u32 saddr_be, __u32 daddr_be, __u32 len)
{
	__u32 s = bpf_ntohl(saddr_be), d = bpf_ntohl(daddr_be);

	return (s >> 16) + (s & 0xffff) + (d >> 16) + (d & 0xffff) + IPPROTO_TCP + len;
}

/* Store @v big-endian at @p (any alignment). */
static __always_inline void sc_put32(__u8 *p, __u32 v)
{
	p[0] = (__u8)(v >> 24);
	p[1] = (__u8)(v >> 16);
	p[2] = (__u8)(v >> 8);
	p[3] = (__u8)v;
}

/* ---- the SYN ---- */

/* A SYN's header and what its options say, walked by sc_syn_option(). */
struct sc_syn {
	__u8 h[64]; /* the TCP header */
	__u32 hlen; /* its length, 20-60 */
	__u32 i;    /* the next option's offset */
	int bad;    /* an option lunar would drop the segment for */
	__u16 mss;
	__u8 wscale; /* SC_WSCALE_NONE: none offered */
	__u8 sack;
	__u8 has_ts;
	__u32 ts_val;
};

/*
 * One step of reading a SYN's options as tcp_parse_options() does, a
 * bpf_loop() callback (a plain loop's branches make too many verifier
 * states): 0 to go on, 1 at the end; o->bad where lunar would drop it.
 */
static long sc_syn_option(__u64 index, void *ctx)
{
	struct sc_syn *o = ctx;
	__u32 i = o->i, hlen = o->hlen;
	__u8 kind, olen;

	(void)index;
	if (i >= hlen || i >= 60)
		return 1;
	kind = o->h[i & 63];
	if (kind == 0) /* EOL */
		return 1;
	if (kind == 1) { /* NOP */
		o->i = i + 1;
		return 0;
	}
	if (i + 1 >= hlen)
		goto bad;
	olen = o->h[(i + 1) & 63];
	if (olen < 2 || i + olen > hlen)
		goto bad;
	if (kind == 2) { /* MSS */
		if (olen != 4)
			goto bad;
		o->mss = (__u16)(o->h[(i + 2) & 63] << 8 | o->h[(i + 3) & 63]);
	} else if (kind == 3) { /* window scale */
		if (olen != 3)
			goto bad;
		o->wscale = o->h[(i + 2) & 63] > 14 ? 14 : o->h[(i + 2) & 63];
	} else if (kind == 4) { /* SACK-permitted */
		if (olen != 2)
			goto bad;
		o->sack = 1;
	} else if (kind == 5) { /* SACK blocks: only their shape matters */
		if (olen < 10 || (olen - 2) % 8)
			goto bad;
	} else if (kind == 8) { /* timestamps */
		if (olen != 10)
			goto bad;
		o->has_ts = 1;
		o->ts_val = (__u32)o->h[(i + 2) & 63] << 24 | (__u32)o->h[(i + 3) & 63] << 16 |
			    (__u32)o->h[(i + 4) & 63] << 8 | o->h[(i + 5) & 63];
	}
	o->i = i + olen;
	return 0;
bad:
	o->bad = 1;
	return 1;
}

/* ipv4_parse()'s refused sources: broadcast, multicast, loopback. */
static __always_inline int sc_bad_source(__u32 saddr_be)
{
	__u32 s = bpf_ntohl(saddr_be);

	return s == 0xffffffffu || (s & 0xf0000000u) == 0xe0000000u ||
	       (s & 0xff000000u) == 0x7f000000u;
}

struct sc_synack {
	struct ethhdr eth;
	struct iphdr ip;
	struct tcphdr tcp;
	__u8 opt[SC_SYNACK_TCP_LEN - 20];
} __attribute__((packed));

/*
 * Answer the frame in @ctx if it is a plain SYN to a listener of queue @q's
 * worker while its responder is armed: 1 when the frame now holds the
 * SYN-ACK (return XDP_TX), 0 to let it go on to lunar.
 */
static __always_inline int lunar_syncookie_answer(struct xdp_md *ctx, __u32 q, __u16 dport)
{
	const struct lunar_cookie_cfg *cfg = bpf_map_lookup_elem(&lunar_cookie, &q);
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct sc_synack r = {};
	struct sc_syn o = {
	    .i = 20, .mss = 536 /* RFC 9293 3.7.1 default */, .wscale = SC_WSCALE_NONE};
	const __u8 *h = o.h;
	__u32 pkey = dport, *listen, hlen, frame_len, bits, cookie, isn;
	__u64 ktime, now, m[4], ts_ms;
	__u8 flags, ws;

	/* The common case first, cheaply: not a SYN alone. */
	if ((void *)ip + SC_IP_LEN + 20 > data_end || ip->ihl != 5)
		return 0;
	flags = ((const __u8 *)ip)[SC_IP_LEN + 13];
	if ((flags & (SC_TCP_SYN | SC_TCP_ACK | SC_TCP_RST | SC_TCP_FIN)) != SC_TCP_SYN)
		return 0;
	ktime = bpf_ktime_get_ns();
	if (!cfg || ktime >= cfg->until_ktime)
		return 0;
	listen = bpf_map_lookup_elem(&lunar_ports, &pkey);
	if (!listen || !*listen)
		return 0; /* a SYN to a client port: lunar resets it */
	if (ip->daddr != cfg->ip || sc_bad_source(ip->saddr) ||
	    (ip->frag_off & bpf_htons(0x2000 | IP_OFFSET_MASK)))
		return 0;
	if (sc_fold(sc_sum((const __u8 *)ip, SC_IP_LEN)) != 0xffff)
		return 0; /* bad IPv4 checksum: lunar counts it */
	hlen = (__u32)(((const __u8 *)ip)[SC_IP_LEN + 12] >> 4) * 4;
	if (hlen < 20 || hlen > SC_TCP_MAX || bpf_ntohs(ip->tot_len) != SC_IP_LEN + hlen)
		return 0; /* a bad data offset, or data on the SYN */
	o.hlen = hlen;
	if (bpf_xdp_load_bytes(ctx, SC_ETH_LEN + SC_IP_LEN, o.h, hlen))
		return 0;
	if (sc_fold(sc_sum(h, hlen) + sc_pseudo(ip->saddr, ip->daddr, hlen)) != 0xffff)
		return 0;		    /* bad TCP checksum: lunar counts it */
	bpf_loop(40, sc_syn_option, &o, 0); /* an option takes at least one byte */
	if (o.bad)
		return 0;

	/* The cookie (tcp_syncookie_make()). */
	isn = (__u32)h[4] << 24 | (__u32)h[5] << 16 | (__u32)h[6] << 8 | h[7];
	now = ktime + (__u64)cfg->clock_off;
	ws = o.wscale;
	bits = sc_mss_index(o.mss) << 6 | (__u32)ws << 2 | (o.sack ? 2u : 0u) |
	       ((flags & (SC_TCP_ECE | SC_TCP_CWR)) == (SC_TCP_ECE | SC_TCP_CWR) ? 1u : 0u);
	m[0] = (__u64)bpf_ntohl(ip->daddr) | (__u64)bpf_ntohl(ip->saddr) << 32;
	m[1] = (__u64)dport | (__u64)((__u32)h[0] << 8 | h[1]) << 16 | (__u64)isn << 32;
	m[2] = bits;
	m[3] = now >> SC_SLOT_SHIFT;
	cookie =
	    bits << SC_MAC_BITS | ((__u32)sc_siphash32(cfg->key, m) & ((1u << SC_MAC_BITS) - 1));

	/* The SYN-ACK, addressed back. */
	__builtin_memcpy(r.eth.h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(r.eth.h_source, eth->h_dest, ETH_ALEN);
	r.eth.h_proto = bpf_htons(ETH_P_IP);
	r.ip.version = 4;
	r.ip.ihl = 5;
	r.ip.tot_len = bpf_htons(SC_IP_LEN + SC_SYNACK_TCP_LEN);
	r.ip.frag_off = bpf_htons(0x4000); /* DF, as netif_ipv4_output() */
	r.ip.ttl = cfg->ttl;
	r.ip.protocol = IPPROTO_TCP;
	r.ip.saddr = ip->daddr;
	r.ip.daddr = ip->saddr;
	r.ip.check = bpf_htons((__u16)~sc_fold(sc_sum((const __u8 *)&r.ip, SC_IP_LEN)));
	r.tcp.source = bpf_htons(dport);
	r.tcp.dest = bpf_htons((__u16)((__u32)h[0] << 8 | h[1]));
	r.tcp.seq = bpf_htonl(cookie);
	r.tcp.ack_seq = bpf_htonl(isn + 1);
	r.tcp.doff = SC_SYNACK_TCP_LEN / 4;
	r.tcp.syn = 1;
	r.tcp.ack = 1;
	r.tcp.ece = (bits & 1) && (cfg->flags & LUNAR_COOKIE_ECN);
	r.tcp.window = bpf_htons(cfg->window);
	__builtin_memset(r.opt, 1, sizeof(r.opt)); /* NOPs */
	r.opt[0] = 2;
	r.opt[1] = 4;
	r.opt[2] = (__u8)(cfg->mss >> 8);
	r.opt[3] = (__u8)cfg->mss;
	if (o.sack && (cfg->flags & LUNAR_COOKIE_SACK)) {
		r.opt[4] = 4;
		r.opt[5] = 2;
	}
	if (o.has_ts && (cfg->flags & LUNAR_COOKIE_TS)) {
		ts_ms = now / SC_NS_PER_MS;
		r.opt[6] = 8;
		r.opt[7] = 10;
		sc_put32(&r.opt[8], (__u32)ts_ms + cookie);
		sc_put32(&r.opt[12], o.ts_val);
	}
	if (ws != SC_WSCALE_NONE && (cfg->flags & LUNAR_COOKIE_WS)) {
		r.opt[17] = 3;
		r.opt[18] = 3;
		r.opt[19] = cfg->wscale;
	}
	r.tcp.check =
	    bpf_htons((__u16)~sc_fold(sc_sum((const __u8 *)&r.tcp, SC_SYNACK_TCP_LEN) +
				      sc_pseudo(r.ip.saddr, r.ip.daddr, SC_SYNACK_TCP_LEN)));

	/* The frame becomes the SYN-ACK: 74 bytes. */
	frame_len = (__u32)(data_end - data);
	if (bpf_xdp_adjust_tail(ctx, (int)SC_SYNACK_LEN - (int)frame_len))
		return 0;
	if (bpf_xdp_store_bytes(ctx, 0, &r, sizeof(r)))
		return 0; /* cannot fail once the tail fits (lunar would drop the frame as short) */
	return 1;
}

#endif
