// SPDX-License-Identifier: BSD-3-Clause
/*
 * lunar_peer_steer.bpf.c - a NIC's flow director, emulated on a veth
 * (docs/TRAFFIC.md). A veth delivers a frame on the peer's rx queue equal
 * to the tx queue it was sent on (veth_xmit() uses skb->queue_mapping). So
 * to make a kernel peer's segments arrive on the lunar queue that owns
 * them, this tc program runs on the peer's egress (clsact, direct action)
 * and picks the tx queue by the same plan the XDP program checks at
 * lunar's end (lunar_plan_owner(), lunar_plan.bpf.h): a segment to lunar's
 * reserved range goes to its sub-range's queue, one to a listening port to
 * source port % n (LOW_BITS mode; in RSS mode the kernel's own flow hash
 * stays, like a NIC's RSS). Everything else is left alone.
 *
 * How the queue is set. This kernel has neither act_skbedit nor flower
 * (CONFIG_NET_ACT_SKBEDIT, CONFIG_NET_CLS_FLOWER off), and a tc BPF write
 * of skb->queue_mapping on egress is not honoured by itself: only
 * act_skbedit sets the "skip tx queue selection" flag that
 * __dev_queue_xmit() checks after the egress hook. What this program uses
 * instead is the "recorded rx queue" convention: queue_mapping holds
 * queue + 1 (0 means none recorded), and when the kernel then picks the tx
 * queue (netdev_pick_tx(): socket's cached queue, else XPS, else
 * skb_tx_hash()), skb_tx_hash() returns the recorded queue. The script that
 * attaches the program (scripts/flow_steer_veth.sh) therefore clears XPS
 * on the device; a socket caches the queue its first segment got, which is
 * this program's answer, so later segments keep it.
 *
 * Config: lunar_cfg and lunar_ports as in steer_abi.h (the script writes
 * them with bpftool). Counters: lunar_peer_cnt[q] segments steered to
 * queue q, [LUNAR_PEER_STAT_UNTOUCHED] everything left alone.
 */
#include <linux/pkt_cls.h>

#include "lunar_plan.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LUNAR_PEER_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} lunar_peer_cnt SEC(".maps");

/* Ethernet + the largest IPv4 header + a TCP header without options. */
#define PEER_HDRS (14 + 60 + 20)

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&lunar_peer_cnt, &idx);

	if (v)
		*v += 1;
}

SEC("tc")
int lunar_peer_steer(struct __sk_buff *skb)
{
	struct lunar_steer_cfg cfg = lunar_cfg_get();
	__u16 sport, dport;
	__u32 q, daddr;

	/*
	 * The headers the walk needs must be in the linear part; a locally
	 * built segment has them there already, so this rarely pulls.
	 */
	if ((void *)(long)skb->data + PEER_HDRS > (void *)(long)skb->data_end)
		bpf_skb_pull_data(skb, skb->len < PEER_HDRS ? skb->len : PEER_HDRS);
	if (!lunar_parse_tcp4((void *)(long)skb->data, (void *)(long)skb->data_end, &sport, &dport,
			      &daddr) ||
	    !lunar_port(&cfg, dport) || cfg.n_queues <= 1 ||
	    (!lunar_reserved(&cfg, dport) && cfg.listen == LUNAR_STEER_LISTEN_RSS)) {
		count(LUNAR_PEER_STAT_UNTOUCHED);
		return TC_ACT_OK;
	}
	/* @q is unused by the plan here: the reserved range and LOW_BITS
	 * modes do not depend on it, and RSS was left alone above. */
	q = lunar_plan_owner(&cfg, sport, dport, 0);
	if (q >= LUNAR_STEER_MAX_QUEUES) {
		count(LUNAR_PEER_STAT_UNTOUCHED);
		return TC_ACT_OK;
	}
	skb->queue_mapping = q + 1; /* recorded queue q: see above */
	count(q);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "Dual BSD/GPL";
