/*
 * xdp.h - host side of lunar's XDP steering program (bpf/lunar_steer.bpf.c).
 *
 * DPDK's net_af_xdp loads and attaches the program (xdp_prog=<object>) and
 * fills its xsks_map; this module owns everything else: checking before
 * start-up that the interface exists and is free of other XDP programs,
 * finding the attached program's maps afterwards, writing the reserved port
 * range and the listening ports, reading the steering counters, and
 * detaching a stale program after a crash.
 *
 * Every function returns 0 or a negative errno; functions taking err/errlen
 * also write a message naming the problem and its fix.
 */
#ifndef LUNAR_CTL_XDP_H
#define LUNAR_CTL_XDP_H

#include <stddef.h>
#include <stdint.h>

#include "ctl/flow_plan.h"
#include "ctl/steer_abi.h"

/** Handles on the maps of the steering program attached to one interface. */
struct xdp_steer {
	int ifindex;	  /**< interface the program is attached to */
	uint32_t prog_id; /**< kernel id of the attached program */
	int cfg_fd;	  /**< lunar_cfg: reserved range and queue plan */
	int ports_fd;	  /**< lunar_ports: one entry per listening port */
	int stats_fd;	  /**< lunar_stats: per-CPU counters per rx queue */
	int cookie_fd;	  /**< lunar_cookie: each queue's SYN-cookie responder */
	/* The config last written (or found at open), so that setting the
	 * range keeps the plan and the other way round. */
	uint16_t lo, hi;
	uint16_t n_queues; /**< 0/1: single queue; else the plan's worker count */
	uint16_t listen;   /**< enum flow_listen_mode */
	uint32_t ip;	   /**< lunar's address (host order); 0: any */
};

/** Steering counters of one rx queue, or of all (xdp_steer_counters()). */
struct xdp_steer_counters {
	uint64_t to_lunar;	  /**< redirected into an AF_XDP socket */
	uint64_t to_kernel;	  /**< not lunar's, passed to the kernel */
	uint64_t redirect_failed; /**< lunar's, on its owner queue, no socket there */
	uint64_t misqueued;	  /**< lunar's, on another worker's queue: dropped */
	uint64_t syncookies;	  /**< SYNs answered with a cookie by the program (XDP_TX) */
};

/** Queue argument of xdp_steer_counters(): the sum over every queue. */
#define XDP_STEER_ALL_QUEUES UINT32_MAX

/**
 * xdp_check_free() - check that @ifname exists and carries no XDP program.
 * @ifname: interface name.
 * @err: buffer for a message naming the problem and its fix (may be NULL).
 * @errlen: size of @err.
 *
 * Call before handing the interface to net_af_xdp: the kernel allows one XDP
 * program per interface here (no libxdp dispatcher). A lunar_steer program
 * whose process is gone (killed, crashed: nobody holds xdp_owner_lock() on
 * the interface) is stale: it is detached, with a warning, and the
 * interface is free. Any other program is reported.
 *
 * Return: 0 if free (or freed); -ENODEV if the interface does not exist;
 * -EBUSY if a program is attached (another program, or lunar_steer of a
 * live lunar process); another negative errno on query error.
 */
int xdp_check_free(const char *ifname, char *err, size_t errlen);

/**
 * xdp_owner_lock() - mark @ifname as driven by this process, for as long as
 * the returned descriptor stays open (an flock(2) on a file under
 * /run/lunar named by the network namespace and the interface; the kernel
 * drops it when the process dies, however it dies). The file holds our PID.
 * @ifname: interface name.
 * @err: buffer for a message naming the owner and the fix (may be NULL).
 * @errlen: size of @err.
 *
 * Return: the descriptor (>= 0); -EBUSY if another live process holds it;
 * another negative errno if the lock file cannot be made.
 */
int xdp_owner_lock(const char *ifname, char *err, size_t errlen);
/**
 * xdp_owner_unlock() - give up what xdp_owner_lock(@ifname) returned
 * (< 0: nothing), removing the lock file. A process killed before this
 * leaves its file behind; the next xdp_owner_lock() reuses it.
 */
void xdp_owner_unlock(const char *ifname, int fd);

/**
 * xdp_steer_open() - find the maps of the steering program on @ifname.
 * @ifname: interface on which net_af_xdp attached lunar_steer.bpf.o.
 * @out: filled with the map fds on success; untouched on failure.
 * @err: buffer for a message naming the problem and its fix (may be NULL).
 * @errlen: size of @err.
 *
 * Return: 0 on success; -ENODEV if the interface does not exist; -ENOENT if
 * no program is attached or it lacks lunar's maps; -EPROTO if a map has a
 * layout other than steer_abi.h (object from another lunar version).
 */
int xdp_steer_open(const char *ifname, struct xdp_steer *out, char *err, size_t errlen);

/**
 * xdp_steer_set_range() - set the reserved destination-port range.
 * @st: opened steering handle.
 * @lo: first port of the range.
 * @hi: last port of the range (inclusive); @lo > @hi makes the range empty,
 *      so only ports added with xdp_steer_add_port() are steered.
 *
 * Until this is called the program uses 61440..65535 (LUNA §7.1). The
 * queue plan (xdp_steer_set_plan()) is kept; with several workers the new
 * range must still give each of them a sub-range (flow_plan_init()).
 *
 * Return: 0, -EINVAL if the range does not fit the plan's workers, or a
 * negative errno.
 */
int xdp_steer_set_range(struct xdp_steer *st, uint16_t lo, uint16_t hi);

/**
 * xdp_steer_set_addr() - steer only segments to lunar's address @ip.
 * @st: opened steering handle.
 * @ip: IPv4 address, host order; 0 steers segments to any address (the
 *      default until this is called).
 *
 * A segment to a lunar port but another address (a container's on a
 * macvlan or bridge port of the interface, a secondary kernel address)
 * goes to the kernel, and so does an ICMP error to another address
 * quoting such a segment. The range and plan are kept.
 *
 * Return: 0 or a negative errno from the map update.
 */
int xdp_steer_set_addr(struct xdp_steer *st, uint32_t ip);

/**
 * xdp_steer_set_plan() - steer by the per-queue plan of several workers.
 * @st: opened steering handle.
 * @plan: the plan (flow_plan_init()): worker count and reserved range,
 *        which replaces the one set by xdp_steer_set_range().
 * @mode: how connections to listening ports are spread: FLOW_LISTEN_LOW_BITS
 *        (source port % n, the plan's rule) or FLOW_LISTEN_RSS (the queue the
 *        segment arrived on, where the NIC's RSS hash spreads them).
 *
 * From then on a lunar segment that arrives on a queue other than its owner
 * queue (flow_plan_queue_of(), or the arrival queue for RSS) is dropped and
 * counted as misqueued; see bpf/lunar_steer.bpf.c for why it cannot be
 * passed on. A plan of one worker restores the single-queue behaviour:
 * every lunar segment goes to the socket of the queue it arrived on.
 *
 * Return: 0; -EINVAL for a plan flow_plan_init() would refuse or an unknown
 * mode; or another negative errno from the map update.
 */
int xdp_steer_set_plan(struct xdp_steer *st, const struct flow_plan *plan,
		       enum flow_listen_mode mode);

/**
 * xdp_steer_add_port() - steer TCP segments to destination @port to lunar.
 * @st: opened steering handle.
 * @port: a port lunar listens on (host byte order).
 *
 * Return: 0 or a negative errno.
 */
int xdp_steer_add_port(struct xdp_steer *st, uint16_t port);

/**
 * xdp_steer_del_port() - stop steering @port (undo xdp_steer_add_port()).
 * @st: opened steering handle.
 * @port: port in host byte order. Ports inside the range stay steered.
 *
 * Return: 0 or a negative errno.
 */
int xdp_steer_del_port(struct xdp_steer *st, uint16_t port);

/**
 * xdp_steer_set_cookie() - arm (or, with until_ktime 0, disarm) the SYN-cookie
 * responder of rx queue @queue: SYNs to lunar's listening ports arriving
 * there are answered by the program with the SYN-ACK @cfg describes until
 * bpf_ktime_get_ns() reaches @cfg->until_ktime (steer_abi.h, lunar_cookie).
 * @st: opened steering handle.
 * @queue: the worker's rx queue (below LUNAR_STEER_MAX_QUEUES).
 * @cfg: the whole entry, written in one map update.
 *
 * Return: 0, -EINVAL for a closed handle or a queue out of range, or a
 * negative errno from the map update.
 */
int xdp_steer_set_cookie(struct xdp_steer *st, uint32_t queue, const struct lunar_cookie_cfg *cfg);

/**
 * xdp_steer_stats() - read the steering counters, summed over all CPUs and
 * all queues (xdp_steer_counters() has them per queue, misqueued included).
 * @st: opened steering handle.
 * @to_lunar: frames redirected into an AF_XDP socket (may be NULL).
 * @to_kernel: frames that were not lunar's, passed to the kernel (may be NULL).
 * @redirect_failed: lunar's frames that found no socket on their rx queue
 *                   and went to the kernel instead (may be NULL).
 *
 * Return: 0 or a negative errno.
 */
int xdp_steer_stats(struct xdp_steer *st, uint64_t *to_lunar, uint64_t *to_kernel,
		    uint64_t *redirect_failed);

/**
 * xdp_steer_counters() - read the steering counters of one rx queue.
 * @st: opened steering handle.
 * @queue: rx queue the frames arrived on, or XDP_STEER_ALL_QUEUES for the
 *         sum over all queues. Queues from LUNAR_STEER_MAX_QUEUES (64) up
 *         share one set of counters, read with queue 64.
 * @out: the counters, summed over all CPUs.
 *
 * Return: 0, -EINVAL for a closed handle or a queue above 64, or a
 * negative errno.
 */
int xdp_steer_counters(const struct xdp_steer *st, uint32_t queue, struct xdp_steer_counters *out);

/**
 * xdp_steer_close() - close the map fds (the program stays attached; it
 * belongs to DPDK's port). Safe on a zeroed or already closed handle.
 * @st: handle from xdp_steer_open().
 */
void xdp_steer_close(struct xdp_steer *st);

/**
 * xdp_detach() - remove any XDP program from @ifname, in driver and generic
 * mode. For cleanup after a crash, when DPDK could not detach its program.
 * @ifname: interface name.
 *
 * Return: 0 (also when nothing was attached), -ENODEV if the interface does
 * not exist, or another negative errno.
 */
int xdp_detach(const char *ifname);

/**
 * xdp_detach_lunar() - remove the XDP program on @ifname only if it is
 * lunar's steering program (by its kernel name, "lunar_steer"): a port's
 * cleanup must never remove a program someone else attached meanwhile.
 *
 * Return: 0 if removed or nothing is attached, -EPERM if another program
 * is attached, or a negative errno.
 */
int xdp_detach_lunar(const char *ifname);

#endif
