/*
 * netlink.h - lunar's view of the kernel control plane (LUNA §7.3).
 *
 * The kernel keeps ARP and routing (lunar only handles TCP to its ports);
 * lunar reads that state over rtnetlink: once at start-up for the
 * interface's identity (nl_query_if) and continuously through a watcher
 * (nl_watch_*) that reports neighbour and route changes on one interface,
 * after a full dump so that a restarted lunar regains the whole state.
 *
 * Every IPv4 address in this API is in HOST byte order. All functions act
 * in the network namespace of the calling thread at the time of the call
 * (nl_watch_*: at the time of nl_watch_open).
 */
#ifndef LUNAR_CTL_NETLINK_H
#define LUNAR_CTL_NETLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Identity of one interface as the kernel configured it. */
struct nl_ifinfo {
	int ifindex;	    /**< kernel interface index */
	uint8_t mac[6];	    /**< Ethernet address */
	uint32_t addr;	    /**< first (primary) IPv4 address, host order */
	uint8_t prefix_len; /**< prefix length of @addr */
	uint32_t gateway;   /**< default gateway via this interface, 0 if none */
	unsigned mtu;	    /**< interface MTU */
};

/**
 * nl_query_if() - read index, MAC, MTU, IPv4 address and default gateway.
 * @ifname: interface name.
 * @out: filled on success.
 * @err: buffer for a message naming the problem and its fix (may be NULL).
 * @errlen: size of @err.
 *
 * The gateway is the main-table default route whose next hop leaves through
 * @ifname (lowest metric wins; multipath next hops are searched too). No
 * default route is not an error: @out->gateway is 0.
 *
 * Return: 0; -ENODEV if the interface does not exist; -EADDRNOTAVAIL if it
 * has no IPv4 address; -EPROTONOSUPPORT if it is not Ethernet; another
 * negative errno if netlink fails.
 */
int nl_query_if(const char *ifname, struct nl_ifinfo *out, char *err, size_t errlen);

/** Callbacks of a watcher; either may be NULL. */
struct nl_watch_ops {
	/**
	 * @neigh: neighbour @ip has link address @mac (reachable = true:
	 * REACHABLE, STALE, DELAY, PROBE, PERMANENT or NOARP, all of which
	 * hold a usable address), or no longer has one (reachable = false:
	 * deleted, FAILED, INCOMPLETE or NONE; @mac is then the last known
	 * address or zeros).
	 */
	void (*neigh)(void *ctx, uint32_t ip, const uint8_t mac[6], bool reachable);
	/**
	 * @route: main-table unicast route @dst/@plen via gateway @gw (0 for
	 * an on-link route) leaving through the watched interface was added
	 * (or replaced) or removed.
	 */
	void (*route)(void *ctx, uint32_t dst, uint8_t plen, uint32_t gw, bool add);
};

struct nl_watch;

/**
 * nl_watch_open() - watch the neighbour and route tables of one interface.
 * @ifindex: interface to watch (from nl_query_if()).
 * @ops: callbacks, copied.
 * @ctx: passed to every callback.
 *
 * Subscribes to RTNLGRP_NEIGH and RTNLGRP_IPV4_ROUTE first, then requests a
 * dump of both tables, so that no change between the dump and the
 * subscription is lost. Callbacks run only inside nl_watch_poll(); the
 * first poll delivers the dumped state.
 *
 * Return: the watcher, or NULL with errno set (the reason is logged).
 */
struct nl_watch *nl_watch_open(int ifindex, const struct nl_watch_ops *ops, void *ctx);

/**
 * nl_watch_open_detached() - a watcher without sockets, for tests and fuzzing.
 * @ifindex: interface to watch (> 0).
 * @ops: callbacks, copied.
 * @ctx: passed to every callback.
 *
 * Exists so that the message handling can be driven without a kernel
 * (tests/fuzz/fuzz_netlink.c): messages come only from nl_watch_feed().
 * The state is that of nl_watch_open() just after it requested the first
 * dump, except that dump requests are recorded, never sent: the watcher's
 * port id is 0 and its sequence numbers start at 0, so the neighbour dump
 * is in progress with sequence number 1, and each later dump (routes once
 * the neighbour dump ends with NLMSG_DONE or NLMSG_ERROR, then any resync)
 * takes the next number. Replies count as dump replies when they carry the
 * pending dump's sequence number and port id 0.
 *
 * nl_watch_fd(), nl_watch_poll() and nl_watch_resolve() return -EBADF
 * (nothing is sent, not even nl_resolve_udp()'s datagram); free it with
 * nl_watch_close().
 *
 * Return: the watcher, or NULL with errno set (EINVAL, ENOMEM).
 */
struct nl_watch *nl_watch_open_detached(int ifindex, const struct nl_watch_ops *ops, void *ctx);

/**
 * nl_watch_feed() - handle one datagram as if nl_watch_poll() received it.
 * @w: watcher, normally from nl_watch_open_detached().
 * @buf: the datagram: netlink messages back to back, as recv() returns
 *       them, 4-byte aligned as the messages' headers need; only read,
 *       and never past @len. NULL (with @len 0) stands
 *       for a receive error ENOBUFS (notifications lost), which makes the
 *       watcher re-dump both tables just as nl_watch_poll() does.
 * @len: bytes in @buf.
 *
 * Runs the same path as nl_watch_poll() for one datagram: every complete
 * message is handled (callbacks run here), malformed ones are skipped,
 * then the next wanted dump is requested (on a detached watcher: only
 * recorded, see nl_watch_open_detached()).
 *
 * Return: number of callbacks delivered (>= 0), or a negative errno
 * (-EINVAL for bad arguments; on a watcher with sockets also a failed dump
 * request).
 */
int nl_watch_feed(struct nl_watch *w, const void *buf, size_t len);

/**
 * nl_watch_fd() - file descriptor that becomes readable when events wait.
 * @w: watcher.
 *
 * Return: the netlink socket fd, for epoll (EPOLLIN); -EBADF for a detached
 * watcher.
 */
int nl_watch_fd(struct nl_watch *w);

/**
 * nl_watch_poll() - process every pending message, never blocking.
 * @w: watcher.
 *
 * If the kernel dropped notifications because the socket buffer overflowed
 * (ENOBUFS), both tables are dumped again and entries that vanished meanwhile
 * are reported as unreachable / removed.
 *
 * Return: number of callbacks delivered (>= 0), or a negative errno
 * (-EBADF for a detached watcher).
 */
int nl_watch_poll(struct nl_watch *w);

/**
 * nl_watch_known() - the kernel's valid entry for neighbour @ip, if the
 * watcher has one (the last MAC it reported reachable, not since reported
 * gone): an entry lunar let go can be had again without asking, which
 * matters because the kernel announces nothing for an entry it already has.
 * Return: true with @mac set, or false.
 */
bool nl_watch_known(const struct nl_watch *w, uint32_t ip, uint8_t mac[6]);

/**
 * nl_watch_resolve() - ask the kernel to resolve neighbour @ip.
 * @w: watcher.
 * @ip: IPv4 address on the watched interface's link, host order.
 *
 * Sends RTM_NEWNEIGH with NTF_USE (the kernel's neigh_event_send() path):
 * the kernel creates an INCOMPLETE entry if needed and sends ARP requests;
 * the answer arrives later as a neigh event through nl_watch_poll(). An
 * already valid entry is left alone. lunar never ARPs itself (LUNA §7.3).
 * If the kernel refuses the request (EPERM without CAP_NET_ADMIN, or
 * EINVAL/EOPNOTSUPP), falls back to nl_resolve_udp().
 *
 * Return: 0 if the kernel accepted the request, or a negative errno
 * (-EBADF for a detached watcher).
 */
int nl_watch_resolve(struct nl_watch *w, uint32_t ip);

/**
 * nl_resolve_udp() - make the kernel resolve @ip by sending it traffic.
 * @ifindex: interface to resolve on (bound with SO_BINDTOIFINDEX when
 *           permitted; otherwise the kernel's route to @ip decides).
 * @ip: IPv4 address, host order.
 *
 * Sends an empty UDP datagram to @ip port 9 (discard) from a connected
 * socket: the kernel queues it, ARPs, and sends it once resolved. Works
 * without CAP_NET_ADMIN, but the peer does receive a datagram (and may
 * answer ICMP port unreachable), so nl_watch_resolve() prefers NTF_USE.
 *
 * Return: 0 or a negative errno.
 */
int nl_resolve_udp(int ifindex, uint32_t ip);

/**
 * nl_watch_close() - close the sockets and free the watcher (NULL is fine).
 * @w: watcher.
 */
void nl_watch_close(struct nl_watch *w);

#endif
