/*
 * port.h - packet I/O behind one small interface.
 *
 * A port moves bursts of rte_mbufs in and out. Every kind (DPDK ethdev for
 * memif, af_xdp and tap; the fault-injection wrapper; the pcap tap) fills
 * in the same ops table, so the layers above never know which wire they
 * are on. Wrappers stack: pcap(fault(ethdev)) captures what the stack sees.
 *
 * Ownership (docs/MEMORY.md): rx_burst hands the caller one reference to
 * each mbuf; tx_burst takes the references of the mbufs it accepted (the
 * first n returned) and the caller keeps those it did not.
 */
#ifndef LUNAR_PORT_PORT_H
#define LUNAR_PORT_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ether.h>

struct rte_mbuf;
struct rte_mempool;
struct port;

/** Offloads a port can do for the stack. Checksums are verified in software otherwise. */
enum port_offload {
	PORT_OFFLOAD_RX_IPV4_CKSUM = 1u << 0, /**< rx: ol_flags say whether the IPv4 csum is good */
	PORT_OFFLOAD_RX_L4_CKSUM = 1u << 1,   /**< rx: ol_flags say whether TCP/UDP csum is good */
	PORT_OFFLOAD_TX_IPV4_CKSUM = 1u << 2, /**< tx: hardware fills the IPv4 csum */
	PORT_OFFLOAD_TX_L4_CKSUM = 1u << 3,   /**< tx: hardware fills TCP/UDP csum */
	PORT_OFFLOAD_TX_TSO = 1u << 4,	      /**< tx: TCP segmentation offload */
	/** tx: chained mbufs, external buffers (zero-copy frames) */
	PORT_OFFLOAD_TX_MULTISEG = 1u << 5,
};

/** Counters every port keeps (wrappers add their own). */
struct port_stats {
	uint64_t rx_packets, rx_bytes;
	uint64_t tx_packets, tx_bytes;
	uint64_t tx_full;   /**< packets tx_burst refused (ring full) */
	uint64_t rx_missed; /**< packets the device dropped before we polled */
};

struct port_ops {
	uint16_t (*rx_burst)(struct port *p, struct rte_mbuf **pkts, uint16_t n);
	uint16_t (*tx_burst)(struct port *p, struct rte_mbuf **pkts, uint16_t n);
	/** Fill @st; wrappers report their inner port's counters. */
	void (*stats)(struct port *p, struct port_stats *st);
	/** Print kind-specific counters (fault decisions, pcap bytes...) to @f. */
	void (*dump)(struct port *p, FILE *f);
	/** true once the link can carry packets (memif: peer connected). */
	bool (*link_up)(struct port *p);
	void (*close)(struct port *p);
};

struct port {
	const struct port_ops *ops;
	char name[64];		   /**< e.g. "af_xdp:veth-b", "fault(memif:/run/lunar/a.sock)" */
	struct rte_ether_addr mac; /**< source MAC for frames sent on this port */
	uint16_t mtu;		   /**< IP MTU */
	uint32_t offloads;	   /**< enum port_offload bits */
	struct rte_mempool *pool;  /**< where rx mbufs come from; tx allocates from it too */
	struct port *inner;	   /**< wrapped port, NULL for a device */
	uint16_t queue, n_queues;  /**< which queue pair of the device this is, of how many */
};

/** Queue pairs one port device offers lunar at most (one per worker). */
#define PORT_MAX_QUEUES 8

static inline uint16_t port_rx_burst(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	return p->ops->rx_burst(p, pkts, n);
}

static inline uint16_t port_tx_burst(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	return p->ops->tx_burst(p, pkts, n);
}

static inline bool port_link_up(struct port *p)
{
	return p->ops->link_up ? p->ops->link_up(p) : true;
}

/** Close @p and every port it wraps. */
void port_close(struct port *p);
/** Counters of @p (for a wrapper, of the device underneath). */
void port_stats(struct port *p, struct port_stats *st);
/** One line with @p's struct port_stats, for a device's dump op. */
void port_print_counters(struct port *p, FILE *f);
/** Print the counters of @p and of every wrapper around it. */
void port_dump(struct port *p, FILE *f);

#endif
