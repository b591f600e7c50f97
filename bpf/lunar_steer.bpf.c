// SPDX-License-Identifier: BSD-3-Clause
/*
 * lunar_steer.bpf.c - lunar's XDP steering program (LUNA §7.1 traffic
 * split, §7.4 per-queue plan). It owns three decisions:
 *
 * 1. Does this frame belong to lunar or to the kernel? IPv4 TCP segments
 *    whose destination port is in the reserved range [lo, hi] (default
 *    61440..65535) or is marked in lunar_ports are lunar's, and so are the
 *    ICMP errors about lunar's segments (destination unreachable, time
 *    exceeded, parameter problem quoting TCP from such a port: RFC 5927
 *    processing and path MTU need them); everything else (ARP, other ICMP,
 *    IPv6, UDP, other TCP ports, non-first fragments, VLAN-tagged and
 *    malformed frames) is passed to the kernel untouched, so the kernel
 *    keeps the control plane (LUNA §7.3) and legacy traffic.
 *
 * 2. With several lunar workers, one per rx queue: did the segment arrive
 *    on the queue of the worker that owns its connection (the plan of
 *    ctl/flow_plan.h, computed by lunar_plan_owner())? If so it goes into
 *    that queue's AF_XDP socket (xsks_map[rx queue]); if not it is counted
 *    as misqueued and dropped (see below). With the single-queue plan
 *    (n_queues 0 or 1, the default) every lunar segment goes to the socket
 *    of its own rx queue, as before the plan existed.
 *
 * 3. Under a SYN flood, with the worker's say-so: answer a SYN to one of
 *    lunar's listeners here, with a SYN cookie (lunar_syncookie.bpf.h).
 *
 * DPDK's net_af_xdp loads this object with xdp_prog=<path> and fills
 * xsks_map itself; the host side (src/ctl/xdp.c) finds the other maps of
 * the attached program by name. Map layouts live in src/ctl/steer_abi.h,
 * the shared maps, header walk and plan in lunar_plan.bpf.h.
 */
#include "lunar_plan.bpf.h"
#include "lunar_syncookie.bpf.h"

/* The MF bit of iphdr.frag_off (host order after ntohs). */
#define IP_MORE_FRAGMENTS 0x2000

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, LUNAR_STEER_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LUNAR_STEER_STAT_ROWS *LUNAR_STEER_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} lunar_stats SEC(".maps");

/* Count @stat in the row of rx queue @q (queues past the map share the last row). */
static __always_inline void count(__u32 q, __u32 stat)
{
	__u32 row = q < LUNAR_STEER_MAX_QUEUES ? q : LUNAR_STEER_STAT_ROWS - 1;
	__u32 idx = row * LUNAR_STEER_NSTATS + stat;
	__u64 *v = bpf_map_lookup_elem(&lunar_stats, &idx);

	/* Per-CPU slot: no other CPU writes it, a plain add is enough. */
	if (v)
		*v += 1;
}

/*
 * Is (@daddr, @dport) lunar's end of a connection: a lunar port, at lunar's
 * address when one is set? Another address on the interface (a
 * container's on a macvlan, a secondary one) is the kernel's.
 */
static __always_inline int lunar_dest(const struct lunar_steer_cfg *c, __u16 dport, __u32 daddr)
{
	return lunar_port(c, dport) && (!c->ip || daddr == c->ip);
}

/*
 * An untagged IPv4 ICMP error (types 3, 11, 12; RFC 792) that quotes a TCP
 * segment: 1 and the ports as a segment of that connection arriving here
 * would carry them (@sport the quoted destination, the peer; @dport the
 * quoted source, the local end) and the error's destination @daddr (host
 * order), else 0. RFC 792 guarantees the quoted
 * IPv4 header and 8 bytes after it, which hold the ports. A fragment of
 * an error, or a quote of a non-first fragment, is the kernel's.
 */
static __always_inline int parse_tcp_error(void *data, void *data_end, __u16 *sport, __u16 *dport,
					   __u32 *daddr)
{
	struct ethhdr *eth = data;
	struct iphdr *ip, *qip;
	__u8 *icmp, *qtcp;
	__u32 ihl, qihl;

	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return 0;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end || ip->version != 4 || ip->protocol != IPPROTO_ICMP)
		return 0;
	ihl = ip->ihl;
	if (ihl < 5 || (ip->frag_off & bpf_htons(IP_MORE_FRAGMENTS | IP_OFFSET_MASK)))
		return 0;
	icmp = (void *)ip + ihl * 4;
	if ((void *)(icmp + 8) > data_end)
		return 0;
	if (icmp[0] != 3 && icmp[0] != 11 && icmp[0] != 12)
		return 0;
	qip = (void *)(icmp + 8);
	if ((void *)(qip + 1) > data_end || qip->version != 4 || qip->protocol != IPPROTO_TCP)
		return 0;
	qihl = qip->ihl;
	if (qihl < 5 || (qip->frag_off & bpf_htons(IP_OFFSET_MASK)))
		return 0;
	qtcp = (void *)qip + qihl * 4;
	if ((void *)(qtcp + 8) > data_end)
		return 0;
	*dport = (__u16)(qtcp[0] << 8 | qtcp[1]);
	*sport = (__u16)(qtcp[2] << 8 | qtcp[3]);
	*daddr = bpf_ntohl(ip->daddr);
	return 1;
}

SEC("xdp")
int lunar_steer(struct xdp_md *ctx)
{
	struct lunar_steer_cfg cfg = lunar_cfg_get();
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 q = ctx->rx_queue_index;
	__u16 sport, dport;
	__u32 daddr;
	long ret;

	if (!lunar_parse_tcp4(data, data_end, &sport, &dport, &daddr)) {
		/*
		 * An error about one of lunar's connections goes to the worker
		 * that owns it, if it came in on that worker's queue. RSS hashes
		 * ICMP by addresses alone, so it may come in on any queue, and no
		 * AF_XDP socket takes another queue's frame (below); elsewhere the
		 * kernel gets it, which is harmless: it has no such connection,
		 * and nobody answers an ICMP error (RFC 1122 3.2.2). Lunar loses
		 * only the hint. An error to another address is about another
		 * host's connection (a container's), as for segments below.
		 */
		if (!parse_tcp_error(data, data_end, &sport, &dport, &daddr) ||
		    !lunar_dest(&cfg, dport, daddr) ||
		    lunar_plan_owner(&cfg, sport, dport, q) != q) {
			count(q, LUNAR_STEER_TO_KERNEL);
			return XDP_PASS;
		}
		goto redirect;
	}
	if (!lunar_dest(&cfg, dport, daddr)) {
		count(q, LUNAR_STEER_TO_KERNEL);
		return XDP_PASS;
	}
	if (lunar_plan_owner(&cfg, sport, dport, q) != q) {
		/*
		 * Lunar's segment on another worker's queue. It cannot be handed
		 * to the owner's socket: an AF_XDP socket only takes frames from
		 * the device and queue it is bound to, in copy mode as in
		 * zero-copy mode (Linux net/xdp/xsk.c, xsk_rcv_check(): "if
		 * (xs->dev != xdp->rxq->dev || xs->queue_id !=
		 * xdp->rxq->queue_index) return -EINVAL;", called from both
		 * xsk_rcv() and xsk_generic_rcv()). bpf_redirect_map() to the
		 * owner's slot would even report XDP_REDIRECT and then lose the
		 * frame in xdp_do_redirect(), uncounted.
		 *
		 * Drop, not PASS: the kernel has no socket for the connection
		 * and would answer it with a RST, killing a connection lunar
		 * owns; this queue's worker has no state for it either and
		 * would reset it too. A drop looks like loss to the peer, which
		 * retransmits; the counter says why. Misqueued segments mean
		 * the sender's or the NIC's steering disagrees with the plan
		 * (docs/TRAFFIC.md).
		 */
		count(q, LUNAR_STEER_MISQUEUED);
		return XDP_DROP;
	}
	/* Under a SYN flood: a SYN answered here, off lunar's core. */
	if (lunar_syncookie_answer(ctx, q, dport)) {
		count(q, LUNAR_STEER_SYNCOOKIE);
		return XDP_TX;
	}
	/*
	 * XDP_PASS as the fallback action: when no AF_XDP socket is bound to
	 * this queue (lunar not running, or the queue not owned by lunar) the
	 * kernel still sees the frame (and answers RST for a closed port)
	 * instead of a silent drop; the miss is counted.
	 */
redirect:
	ret = bpf_redirect_map(&xsks_map, q, XDP_PASS);
	count(q, ret == XDP_REDIRECT ? LUNAR_STEER_TO_LUNAR : LUNAR_STEER_REDIRECT_FAILED);
	return ret;
}

char _license[] SEC("license") = "Dual BSD/GPL";
