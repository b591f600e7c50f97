/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lunar_plan.bpf.h - what lunar's two BPF steering programs share: the
 * config and listening-port maps, the IPv4/TCP header walk, and the
 * port-to-queue plan of LUNA §7.4.
 *
 *   lunar_steer.bpf.c       XDP on lunar's interface: which segments are
 *                           lunar's, and is this rx queue their owner?
 *   lunar_peer_steer.bpf.c  tc egress on a kernel peer's veth: which tx
 *                           queue makes a segment arrive on its owner?
 *
 * lunar_plan_owner() is flow_plan_queue_of() (src/ctl/flow_plan.c) in BPF:
 * the program cannot link the C file, so the two are kept equal by hand and
 * checked against each other by tests/unit/ctl/test_xdp.c, which runs both
 * programs with BPF_PROG_TEST_RUN over a sweep of ports and queues and
 * compares every answer with flow_plan_queue_of(). Change both or neither.
 */
#ifndef LUNAR_PLAN_BPF_H
#define LUNAR_PLAN_BPF_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "../src/ctl/steer_abi.h"

/* Fragment offset bits of iphdr.frag_off (host order after ntohs). */
#define IP_OFFSET_MASK 0x1fff

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lunar_steer_cfg);
} lunar_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LUNAR_STEER_NPORTS);
	__type(key, __u32);
	__type(value, __u32);
} lunar_ports SEC(".maps");

/*
 * The config in force: the map's value once the host wrote it, else the
 * LUNA range on a single queue (a fresh program steers before any host
 * code ran).
 */
static __always_inline struct lunar_steer_cfg lunar_cfg_get(void)
{
	struct lunar_steer_cfg c = {
	    .lo = LUNAR_STEER_DEFAULT_LO,
	    .hi = LUNAR_STEER_DEFAULT_HI,
	};
	__u32 key = 0;
	struct lunar_steer_cfg *m = bpf_map_lookup_elem(&lunar_cfg, &key);

	if (m && m->valid)
		c = *m;
	return c;
}

static __always_inline int lunar_reserved(const struct lunar_steer_cfg *c, __u16 port)
{
	return port >= c->lo && port <= c->hi;
}

/* Is @dport lunar's: in the reserved range, or a port lunar listens on? */
static __always_inline int lunar_port(const struct lunar_steer_cfg *c, __u16 dport)
{
	__u32 pkey = dport;
	__u32 *listen;

	/* The range first: the common case on clients. */
	if (lunar_reserved(c, dport))
		return 1;
	listen = bpf_map_lookup_elem(&lunar_ports, &pkey);
	return listen && *listen;
}

/*
 * The queue that owns a lunar segment (sport, dport) that arrived on (or
 * leaves through) queue @q. Must agree with flow_plan_queue_of():
 *  - n_queues 0 or 1: the single-queue plan, the segment's own queue;
 *  - dport in the reserved range: the index of its contiguous sub-range of
 *    (hi - lo + 1) / n ports, the last queue taking the remainder;
 *  - else (a listening port): source port % n, or in RSS mode @q itself.
 * A division by a zero-sized sub-range (a config no host code writes) is 0
 * in BPF, so a hand-written bad config still yields a queue below n.
 */
static __always_inline __u32 lunar_plan_owner(const struct lunar_steer_cfg *c, __u16 sport,
					      __u16 dport, __u32 q)
{
	__u32 n = c->n_queues;

	if (n <= 1)
		return q;
	if (lunar_reserved(c, dport)) {
		__u32 size = ((__u32)c->hi - c->lo + 1) / n;
		__u32 owner = size ? ((__u32)dport - c->lo) / size : 0;

		return owner < n ? owner : n - 1;
	}
	if (c->listen == LUNAR_STEER_LISTEN_RSS)
		return q;
	return (__u32)sport % n;
}

/*
 * Walk Ethernet/IPv4/TCP between @data and @data_end. Returns 1 and the
 * ports (host order) for an untagged IPv4 TCP segment that carries its
 * TCP header, 0 for anything else. Every access is bounds-checked first
 * (the verifier insists; a short frame must reach the kernel, which counts
 * and drops it).
 */
static __always_inline int lunar_parse_tcp4(void *data, void *data_end, __u16 *sport, __u16 *dport,
					    __u32 *daddr)
{
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct tcphdr *tcp;
	__u32 ihl;

	if ((void *)(eth + 1) > data_end)
		return 0;
	/*
	 * Only untagged IPv4. VLAN-tagged frames go to the kernel: lunar's
	 * ports are untagged, and a tagged frame is some other network's.
	 */
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return 0;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		return 0;
	if (ip->version != 4 || ip->protocol != IPPROTO_TCP)
		return 0;
	ihl = ip->ihl;
	if (ihl < 5)
		return 0;
	/*
	 * Non-first fragments carry no TCP header, so their port is unknown;
	 * the kernel gets them. A first fragment (offset 0, MF set) does carry
	 * the ports and goes to lunar, which counts and drops fragments: if it
	 * went to the kernel instead, the kernel could reassemble it and answer
	 * a lunar connection with a RST.
	 */
	if (ip->frag_off & bpf_htons(IP_OFFSET_MASK))
		return 0;
	/* Honour IPv4 options: the TCP header starts at ihl * 4. */
	tcp = (void *)ip + ihl * 4;
	if ((void *)(tcp + 1) > data_end)
		return 0;
	/* A total length shorter than the headers is malformed: kernel. */
	if (bpf_ntohs(ip->tot_len) < ihl * 4 + sizeof(*tcp))
		return 0;
	*sport = bpf_ntohs(tcp->source);
	*dport = bpf_ntohs(tcp->dest);
	*daddr = bpf_ntohl(ip->daddr);
	return 1;
}

#endif
