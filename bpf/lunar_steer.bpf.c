// SPDX-License-Identifier: BSD-3-Clause
/*
 * lunar_steer.bpf.c - lunar's XDP steering program (LUNA §7.1, traffic
 * split). It owns the decision "does this frame belong to lunar or to the
 * kernel": IPv4 TCP segments whose destination port is in the reserved range
 * [lo, hi] (default 61440..65535) or is marked in lunar_ports are redirected
 * into the AF_XDP socket of their rx queue (xsks_map); everything else (ARP,
 * ICMP, IPv6, UDP, other TCP ports, non-first fragments, VLAN-tagged and
 * malformed frames) is passed to the kernel untouched, so the kernel keeps
 * the control plane (LUNA §7.3) and legacy traffic.
 *
 * DPDK's net_af_xdp loads this object with xdp_prog=<path> and fills
 * xsks_map itself; the host side (src/ctl/xdp.c) finds the other maps of
 * the attached program by name. Map layouts live in src/ctl/steer_abi.h.
 */
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
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, LUNAR_STEER_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LUNAR_STEER_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} lunar_stats SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&lunar_stats, &idx);

	/* Per-CPU slot: no other CPU writes it, a plain add is enough. */
	if (v)
		*v += 1;
}

/*
 * Is dport lunar's? The range check comes first because it is the common
 * case on clients (every active connection uses a reserved source port).
 */
static __always_inline int is_lunar_port(__u16 dport)
{
	__u32 key = 0, pkey = dport;
	struct lunar_steer_cfg *cfg;
	__u16 lo = LUNAR_STEER_DEFAULT_LO, hi = LUNAR_STEER_DEFAULT_HI;
	__u32 *listen;

	cfg = bpf_map_lookup_elem(&lunar_cfg, &key);
	/* All-zero value = nobody configured us yet: keep the defaults. */
	if (cfg && cfg->valid) {
		lo = cfg->lo;
		hi = cfg->hi;
	}
	if (dport >= lo && dport <= hi)
		return 1;
	listen = bpf_map_lookup_elem(&lunar_ports, &pkey);
	return listen && *listen;
}

/*
 * Classify one frame. Returns 1 for lunar, 0 for the kernel. Every header
 * access is bounds-checked against data_end first (the verifier insists, and
 * a short frame must reach the kernel, which counts and drops it).
 */
static __always_inline int classify(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
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
	return is_lunar_port(bpf_ntohs(tcp->dest));
}

SEC("xdp")
int lunar_steer(struct xdp_md *ctx)
{
	long ret;

	if (!classify(ctx)) {
		count(LUNAR_STEER_TO_KERNEL);
		return XDP_PASS;
	}
	/*
	 * XDP_PASS as the fallback action: when no AF_XDP socket is bound to
	 * this queue (lunar not running, or the queue not owned by lunar) the
	 * kernel still sees the frame (and answers RST for a closed port)
	 * instead of a silent drop; the miss is counted.
	 */
	ret = bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
	if (ret == XDP_REDIRECT)
		count(LUNAR_STEER_TO_LUNAR);
	else
		count(LUNAR_STEER_REDIRECT_FAILED);
	return ret;
}

char _license[] SEC("license") = "Dual BSD/GPL";
