/*
 * xsk_channels.h - how many queues an AF_XDP socket can bind to on an
 * interface, and that number as DPDK 22.11's af_xdp PMD wants to hear it.
 *
 * The PMD takes queue_count=N only if ETHTOOL_GCHANNELS reports at least N
 * combined channels (drivers/net/af_xdp/rte_eth_af_xdp.c, init_internals():
 * "Specified queue count %d is larger than combined queue count %d"), and a
 * device with no combined channels counts as one queue. A veth reports its
 * queues as separate rx and tx channels (veth_get_channels()), so without
 * help lunar could run only one worker on a veth. But what an AF_XDP
 * socket needs is a queue id below both the rx and the tx queue counts
 * (xsk_bind() in net/xdp/xsk.c), which is min(rx, tx) on any device: that
 * is the answer given here.
 */
#ifndef LUNAR_PORT_XSK_CHANNELS_H
#define LUNAR_PORT_XSK_CHANNELS_H

#include <stdbool.h>

#include <linux/ethtool.h>

/**
 * Rewrite an ETHTOOL_GCHANNELS answer that has no combined channels but
 * rx and tx channels into combined ones: combined = min(rx, tx), max =
 * min(max rx, max tx). An answer with combined channels is left alone.
 * @return true if @ch was rewritten.
 */
bool xsk_channels_as_combined(struct ethtool_channels *ch);

/**
 * Queue ids an AF_XDP socket can bind to on @ifname (combined channels,
 * else min(rx, tx); 1 for a device that reports no channels).
 * @return the count, or a negative errno.
 */
int xsk_channels_count(const char *ifname);

/**
 * While on, every ETHTOOL_GCHANNELS ioctl of this process is answered
 * through xsk_channels_as_combined(): switched on around the creation of
 * a multi-queue af_xdp device only (port_ethdev.c), so the PMD, which
 * asks during its probe, sees the queues an AF_XDP socket can bind to.
 * This file defines ioctl() itself for that (the PMD is a shared object
 * loaded by EAL; the executable's definition comes first in its symbol
 * lookup, and the port library's link arguments export it). Every other
 * ioctl goes straight to the system call, as glibc's does.
 */
void xsk_channels_translate(bool on);

#endif
