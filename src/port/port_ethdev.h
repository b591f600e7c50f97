/*
 * port_ethdev.h - ports on DPDK ethdev virtual devices: net_memif and
 * net_af_xdp (with lunar's XDP steering program). Real NICs would go
 * through the same code with a PCI device instead of a vdev. (Tap ports
 * are port_tap.h: DPDK's net_tap cannot carry jumbo frames.)
 */
#ifndef LUNAR_PORT_PORT_ETHDEV_H
#define LUNAR_PORT_PORT_ETHDEV_H

#include <stddef.h>

#include "port/port.h"
#include "port/port_spec.h"

struct port_ethdev_args {
	const struct port_spec *spec;
	unsigned n_queues; /**< queue pairs, one per worker (0 means 1) */
	struct rte_mempool *
	    *pools;	      /**< rx buffers of each queue (Zbuf-backed, zbuf_pktpool_create) */
	const char *xdp_prog; /**< af_xdp: path of lunar_steer.bpf.o */
	uint16_t rx_desc, tx_desc;
};

/**
 * Check what can be checked before any device is created, so a bad
 * argument leaves nothing behind: the interface exists, carries no XDP
 * program (af_xdp), the memif socket is not in use by another process.
 * A stale memif socket file (no listener) is removed.
 * @return 0 or a negative errno with a message in @err naming the fix.
 */
int port_ethdev_precheck(const struct port_spec *spec, char *err, size_t errlen);

/**
 * Create, configure and start the device with n_queues queue pairs. EAL
 * must be initialised. @out gets one port per queue (out[i] polls queue
 * i); the device closes with the last of them.
 */
int port_ethdev_open(const struct port_ethdev_args *args, struct port **out, char *err,
		     size_t errlen);

/** DPDK port id of an ethdev port (or of the device under wrappers). */
uint16_t port_ethdev_id(struct port *p);

#endif
