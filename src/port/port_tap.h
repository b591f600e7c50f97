/*
 * port_tap.h - a Linux tap interface driven through its file descriptor
 * (/dev/net/tun), not through DPDK's tap PMD: any MTU up to 9000, and
 * checksum offload and TSO handed to the kernel in the virtio-net header
 * that precedes each frame (IFF_VNET_HDR).
 *
 * DPDK 22.11's net_tap refuses frames above a 1504-byte MTU on transmit
 * and cannot be told otherwise through the ethdev API, so it cannot carry
 * jumbo frames; the kernel's tap can. This port reads and writes the same
 * device the PMD would have, one frame per system call, as the PMD does.
 */
#ifndef LUNAR_PORT_PORT_TAP_H
#define LUNAR_PORT_PORT_TAP_H

#include <stddef.h>

#include "port/port.h"
#include "port/port_spec.h"

/**
 * What can be checked before anything is created: a name that exists must
 * be a tap (a persistent one, from `ip tuntap add`), not another interface.
 * @return 0 or a negative errno with the fix in @err.
 */
int port_tap_precheck(const struct port_spec *spec, char *err, size_t errlen);

/**
 * Attach to tap @spec->ifname (created, and gone at close, if it does not
 * exist), set its MTU to @spec->mtu (0: keep the interface's, at most
 * 9000) and bring it up. Frames are received into mbufs of @pool.
 */
int port_tap_open(const struct port_spec *spec, struct rte_mempool *pool, struct port **out,
		  char *err, size_t errlen);

#endif
