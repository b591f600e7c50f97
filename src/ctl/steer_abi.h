/*
 * steer_abi.h - the contract between lunar's XDP steering program
 * (bpf/lunar_steer.bpf.c) and its host side (ctl/xdp.c): map names, map
 * layouts and counter indexes. Both sides include this one file so they can
 * never disagree about a layout; it therefore uses only <linux/types.h>
 * types, which exist in both the BPF and the host compilation.
 */
#ifndef LUNAR_CTL_STEER_ABI_H
#define LUNAR_CTL_STEER_ABI_H

#include <linux/types.h>

/* DPDK's net_af_xdp looks the XSKMAP up by exactly this name. */
#define LUNAR_STEER_XSKS_MAP "xsks_map"
#define LUNAR_STEER_CFG_MAP "lunar_cfg"
#define LUNAR_STEER_PORTS_MAP "lunar_ports"
#define LUNAR_STEER_STATS_MAP "lunar_stats"

/* The reserved client port range of LUNA §7.1 (61440..65535). */
#define LUNAR_STEER_DEFAULT_LO 61440
#define LUNAR_STEER_DEFAULT_HI 65535

/* Size of the xsks_map: one slot per rx queue lunar may bind. */
#define LUNAR_STEER_MAX_QUEUES 64

/*
 * Single entry (key 0) of the lunar_cfg ARRAY map. A freshly loaded program
 * sees an all-zero value; "valid == 0" therefore means "use the defaults",
 * so the program steers the reserved range before any host code ran. A
 * written config with lo > hi is an empty range (only lunar_ports steer).
 */
struct lunar_steer_cfg {
	__u32 valid;
	__u16 lo;
	__u16 hi;
};

/*
 * lunar_ports ARRAY map: key = TCP destination port (0..65535), value
 * nonzero = lunar listens there. One entry per port keeps every update a
 * single atomic map write (no read-modify-write of a shared bitmap word).
 */
#define LUNAR_STEER_NPORTS 65536

/* lunar_stats PERCPU_ARRAY map: key = counter index, value = __u64. */
enum lunar_steer_stat {
	LUNAR_STEER_TO_LUNAR = 0,	 /* redirected into an AF_XDP socket */
	LUNAR_STEER_TO_KERNEL = 1,	 /* not lunar's: passed to the kernel */
	LUNAR_STEER_REDIRECT_FAILED = 2, /* lunar's, but no socket on that queue */
	LUNAR_STEER_NSTATS = 3,
};

#endif
