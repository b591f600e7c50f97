/*
 * steer_abi.h - the contract between lunar's BPF steering programs
 * (bpf/lunar_steer.bpf.c on lunar's interface, bpf/lunar_peer_steer.bpf.c
 * on a veth peer) and their host side (ctl/xdp.c, scripts/flow_steer_veth.sh):
 * map names, map layouts and counter indexes. Both sides include this one
 * file so they can never disagree about a layout; it therefore uses only
 * <linux/types.h> types, which exist in both the BPF and the host
 * compilation.
 */
#ifndef LUNAR_CTL_STEER_ABI_H
#define LUNAR_CTL_STEER_ABI_H

#include <linux/types.h>

/*
 * Map names. The kernel keeps 15 characters of a map's name, and tools
 * that find a map by its kernel name (bpftool, scripts/flow_steer_veth.sh)
 * see only those: keep every name within 15.
 * DPDK's net_af_xdp looks the XSKMAP up by exactly this name.
 */
#define LUNAR_STEER_XSKS_MAP   "xsks_map"
#define LUNAR_STEER_CFG_MAP    "lunar_cfg"
#define LUNAR_STEER_PORTS_MAP  "lunar_ports"
#define LUNAR_STEER_STATS_MAP  "lunar_stats"
#define LUNAR_STEER_COOKIE_MAP "lunar_cookie"

/* The reserved client port range of LUNA §7.1 (61440..65535). */
#define LUNAR_STEER_DEFAULT_LO 61440
#define LUNAR_STEER_DEFAULT_HI 65535

/*
 * Size of the xsks_map: one slot per rx queue lunar may bind. Equal to
 * FLOW_PLAN_MAX_QUEUES (ctl/flow_plan.h; xdp.c checks it at compile time).
 */
#define LUNAR_STEER_MAX_QUEUES 64

/*
 * How segments to a listening port are spread over the queues when the
 * plan has several (flow_plan.h, enum flow_listen_mode):
 *  LOW_BITS: the connection belongs to queue (source port % n_queues);
 *  RSS:      it belongs to whichever queue it arrived on (the NIC's hash).
 */
#define LUNAR_STEER_LISTEN_LOW_BITS 0
#define LUNAR_STEER_LISTEN_RSS	    1

/*
 * Single entry (key 0) of the lunar_cfg ARRAY map. A freshly loaded program
 * sees an all-zero value; "valid == 0" therefore means "use the defaults",
 * so the program steers the reserved range before any host code ran. A
 * written config with lo > hi is an empty range (only lunar_ports steer).
 *
 * n_queues 0 or 1 is the single-queue plan: every lunar segment goes to the
 * AF_XDP socket of the queue it arrived on. With n_queues >= 2 the program
 * computes the owner queue of each segment (flow_plan_queue_of()) and drops
 * a segment that arrived on another queue (LUNAR_STEER_MISQUEUED).
 */
struct lunar_steer_cfg {
	__u32 valid;
	__u16 lo;
	__u16 hi;
	__u16 n_queues;
	__u16 listen; /* LUNAR_STEER_LISTEN_* */
	/*
	 * lunar's IPv4 address, host order: segments to another address
	 * (a container's, a secondary one) are the kernel's whatever their
	 * port. 0: any (the peer's program, a config not yet written).
	 */
	__u32 ip;
};

/*
 * lunar_ports ARRAY map: key = TCP destination port (0..65535), value
 * nonzero = lunar listens there. One entry per port keeps every update a
 * single atomic map write (no read-modify-write of a shared bitmap word).
 */
#define LUNAR_STEER_NPORTS 65536

/*
 * lunar_stats PERCPU_ARRAY map of __u64: one row of LUNAR_STEER_NSTATS
 * counters per rx queue the frame arrived on, key = row * NSTATS + counter.
 * Queues 0..MAX_QUEUES-1 have their own row; frames on higher queues share
 * the last row (LUNAR_STEER_STAT_ROWS - 1), which no AF_XDP socket can
 * serve anyway (xsks_map has MAX_QUEUES slots).
 */
enum lunar_steer_stat {
	LUNAR_STEER_TO_LUNAR = 0,	 /* redirected into an AF_XDP socket */
	LUNAR_STEER_TO_KERNEL = 1,	 /* not lunar's: passed to the kernel */
	LUNAR_STEER_REDIRECT_FAILED = 2, /* lunar's, right queue, no socket there */
	LUNAR_STEER_MISQUEUED = 3,	 /* lunar's, another queue owns it: dropped */
	LUNAR_STEER_SYNCOOKIE = 4,	 /* a SYN answered here with a cookie (XDP_TX) */
	LUNAR_STEER_NSTATS = 5,
};
#define LUNAR_STEER_STAT_ROWS (LUNAR_STEER_MAX_QUEUES + 1)

/*
 * lunar_cookie ARRAY map, key = rx queue: the SYN-cookie responder of the
 * queue's worker (bpf/lunar_syncookie.bpf.h). Under a SYN flood lunar's
 * worker answers SYNs beyond its backlog with SYN cookies
 * (src/tcp/tcp_syncookie.h), keeping no state. Each answer costs the worker
 * a transmit, and on AF_XDP in copy mode that transmit is a system call with
 * a copy: the flood takes the worker's core from the connections it serves.
 * So once the worker itself has sent a cookie, it arms this entry, and
 * until until_ktime the program answers such SYNs on the receiving CPU with
 * XDP_TX, with the SYN-ACK the worker would have sent (same cookie, same
 * options), as the kernel answers in softirq. The handshake's ACK still goes
 * to the worker, which checks the cookie with the same key.
 *
 * An all-zero entry (until_ktime 0) never answers. The host writes a whole
 * entry in one map update.
 */
#define LUNAR_COOKIE_WS	  0x1 /* agree to window scaling (RFC 7323) */
#define LUNAR_COOKIE_SACK 0x2 /* agree to SACK (RFC 2018) */
#define LUNAR_COOKIE_TS	  0x4 /* agree to timestamps (RFC 7323) */
#define LUNAR_COOKIE_ECN  0x8 /* agree to ECN (RFC 3168 6.1.1) */

struct lunar_cookie_cfg {
	__u64 key[2];	   /* the worker's SipHash key: its 16 bytes, as two little-endian words */
	__u64 until_ktime; /* answer while bpf_ktime_get_ns() (CLOCK_MONOTONIC) is below */
	__s64 clock_off;   /* the worker's clock (ns) = bpf_ktime_get_ns() + clock_off */
	__u32 ip;	   /* the worker's address, network order: SYNs to it only */
	__u16 mss;	   /* the SYN-ACK's MSS option */
	__u16 window;	   /* its window (a SYN's is never scaled) */
	__u8 wscale;	   /* our shift, sent if the SYN offered window scaling */
	__u8 flags;	   /* LUNAR_COOKIE_*: what the worker agrees to */
	__u8 ttl;	   /* the IPv4 TTL of the worker's segments */
	__u8 pad[5];
};

/*
 * The peer program (bpf/lunar_peer_steer.bpf.c) emulates a NIC's flow
 * director on a veth: on the kernel peer's egress it picks the tx queue
 * that makes a segment arrive on its owner queue at lunar's end. It reads
 * the same lunar_cfg and lunar_ports layouts; its own counters are one
 * PERCPU __u64 per queue it steered to, plus a last slot for segments it
 * left alone (not lunar's, or RSS mode).
 */
#define LUNAR_PEER_STATS_MAP	  "lunar_peer_cnt"
#define LUNAR_PEER_STAT_UNTOUCHED LUNAR_STEER_MAX_QUEUES
#define LUNAR_PEER_NSTATS	  (LUNAR_STEER_MAX_QUEUES + 1)

#endif
