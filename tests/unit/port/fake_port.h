/*
 * fake_port.h - test support shared by tests/unit/port and tests/unit/net:
 * one-time EAL start-up without hugepages, a plain mbuf pool, and a fake
 * port whose tx_burst captures mbufs into an array and whose rx_burst
 * returns injected mbufs. The fake can refuse frames (a full tx ring) and
 * can free what it accepts at once (a device that completes immediately).
 */
#ifndef LUNAR_TEST_FAKE_PORT_H
#define LUNAR_TEST_FAKE_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "port/port.h"

#define FAKE_RX_MAX 8192

struct fake_port {
	struct port base;
	struct rte_mbuf **tx; /* accepted frames in order (NULL slots if free_on_tx) */
	unsigned n_tx, cap_tx;
	struct rte_mbuf *rx[FAKE_RX_MAX]; /* injected, returned by rx_burst in order */
	unsigned rx_head, rx_n;
	int accept;	 /* per tx_burst call: -1 = everything, else at most this many */
	bool free_on_tx; /* free accepted frames immediately instead of keeping them */
	unsigned tx_calls, rx_calls, closed;
	/* free_on_tx met a chain whose head was shared but a later segment was not */
	unsigned unsafe_chain_frees;
	struct port_stats st;
};

/** Start the EAL once per process (--no-huge, --no-shconf). @return 0 or -1. */
int test_eal_init(void);
/** A plain (non-Zbuf) pktmbuf pool of @n mbufs without a per-core cache. */
struct rte_mempool *test_pool_create(const char *name, unsigned n);
/** mbufs of @mp currently allocated. */
unsigned test_pool_in_use(const struct rte_mempool *mp);
/** One mbuf holding a copy of @len bytes of @data (asserts on failure). */
struct rte_mbuf *test_mbuf(struct rte_mempool *mp, const void *data, size_t len);
/** Busy-wait @us microseconds on the TSC. */
void test_spin_us(uint64_t us);

void fake_port_init(struct fake_port *fp, struct rte_mempool *pool, const char *name,
		    const struct rte_ether_addr *mac);
/** Queue @m to be returned by a later rx_burst (the fake owns it until then). */
void fake_port_inject(struct fake_port *fp, struct rte_mbuf *m);
/** Free every captured tx frame and forget them. */
void fake_port_clear_tx(struct fake_port *fp);
/** Free everything the fake holds (tx captures, pending rx) and its array. */
void fake_port_release(struct fake_port *fp);

#endif
