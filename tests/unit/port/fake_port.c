/*
 * fake_port.c - the test port and EAL/pool helpers (see fake_port.h).
 */
#include "fake_port.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

int test_eal_init(void)
{
	static int done;
	/*
	 * DPDK 22.11 rejects --in-memory with --no-huge ("--legacy-mem is not
	 * compatible with --in-memory"); --no-shconf likewise keeps the EAL
	 * from creating run-time files, so test binaries can run in parallel.
	 */
	char *argv[] = {"t",   "--no-pci", "--no-shconf", "--no-telemetry", "--no-huge", "-m",
			"256", "-l",	   "0",		  "--log-level=3",  NULL};

	if (done)
		return done > 0 ? 0 : -1;
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		done = -1;
		return -1;
	}
	done = 1;
	return 0;
}

struct rte_mempool *test_pool_create(const char *name, unsigned n)
{
	struct rte_mempool *mp =
	    rte_pktmbuf_pool_create(name, n, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());

	if (!mp)
		fprintf(stderr, "pool %s: %s\n", name, rte_strerror(rte_errno));
	return mp;
}

unsigned test_pool_in_use(const struct rte_mempool *mp)
{
	return rte_mempool_in_use_count(mp);
}

struct rte_mbuf *test_mbuf(struct rte_mempool *mp, const void *data, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	char *p;

	assert_non_null(m);
	p = rte_pktmbuf_append(m, (uint16_t)len);
	assert_non_null(p);
	memcpy(p, data, len);
	return m;
}

void test_spin_us(uint64_t us)
{
	uint64_t end = rte_get_tsc_cycles() + us * (rte_get_tsc_hz() / 1000000);

	while (rte_get_tsc_cycles() < end)
		;
}

static uint16_t fake_rx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct fake_port *fp = (struct fake_port *)p;
	uint16_t k = 0;

	fp->rx_calls++;
	while (k < n && fp->rx_head < fp->rx_n) {
		pkts[k] = fp->rx[fp->rx_head++];
		fp->st.rx_packets++;
		fp->st.rx_bytes += pkts[k]->pkt_len;
		k++;
	}
	if (fp->rx_head == fp->rx_n)
		fp->rx_head = fp->rx_n = 0;
	return k;
}

/* The head is shared but a later segment is not: freeing the chain frees that segment. */
static bool chain_shared_unevenly(const struct rte_mbuf *m)
{
	uint16_t head_refs = rte_mbuf_refcnt_read(m);

	if (head_refs < 2)
		return false;
	for (const struct rte_mbuf *s = m->next; s; s = s->next)
		if (rte_mbuf_refcnt_read(s) < head_refs)
			return true;
	return false;
}

static uint16_t fake_tx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct fake_port *fp = (struct fake_port *)p;
	uint16_t k = n;

	fp->tx_calls++;
	if (fp->accept >= 0 && k > fp->accept)
		k = (uint16_t)fp->accept;
	for (uint16_t i = 0; i < k; i++) {
		if (fp->n_tx == fp->cap_tx) {
			fp->cap_tx = fp->cap_tx ? fp->cap_tx * 2 : 256;
			fp->tx = realloc(fp->tx, fp->cap_tx * sizeof(*fp->tx));
			assert_non_null(fp->tx);
		}
		fp->st.tx_packets++;
		fp->st.tx_bytes += pkts[i]->pkt_len;
		if (fp->free_on_tx) {
			if (chain_shared_unevenly(pkts[i])) {
				/*
				 * rte_pktmbuf_free() would return segments that the
				 * other holder of the head still reaches: note it and
				 * drop only our reference to the head instead.
				 */
				fp->unsafe_chain_frees++;
				rte_mbuf_refcnt_update(pkts[i], -1);
			} else {
				rte_pktmbuf_free(pkts[i]);
			}
			fp->tx[fp->n_tx++] = NULL;
		} else {
			fp->tx[fp->n_tx++] = pkts[i];
		}
	}
	fp->st.tx_full += n - k;
	return k;
}

static void fake_stats(struct port *p, struct port_stats *st)
{
	*st = ((struct fake_port *)p)->st;
}

static void fake_close(struct port *p)
{
	struct fake_port *fp = (struct fake_port *)p;

	fp->closed++;
	fake_port_release(fp);
}

static const struct port_ops fake_ops = {
    .rx_burst = fake_rx,
    .tx_burst = fake_tx,
    .stats = fake_stats,
    .close = fake_close,
};

void fake_port_init(struct fake_port *fp, struct rte_mempool *pool, const char *name,
		    const struct rte_ether_addr *mac)
{
	memset(fp, 0, sizeof(*fp));
	fp->base.ops = &fake_ops;
	snprintf(fp->base.name, sizeof(fp->base.name), "%s", name);
	fp->base.mac = *mac;
	fp->base.mtu = 1500;
	fp->base.pool = pool;
	fp->accept = -1;
}

void fake_port_inject(struct fake_port *fp, struct rte_mbuf *m)
{
	assert_true(fp->rx_n < FAKE_RX_MAX);
	fp->rx[fp->rx_n++] = m;
}

void fake_port_clear_tx(struct fake_port *fp)
{
	for (unsigned i = 0; i < fp->n_tx; i++)
		rte_pktmbuf_free(fp->tx[i]); /* NULL-safe */
	fp->n_tx = 0;
}

void fake_port_release(struct fake_port *fp)
{
	fake_port_clear_tx(fp);
	free(fp->tx);
	fp->tx = NULL;
	fp->cap_tx = 0;
	while (fp->rx_head < fp->rx_n)
		rte_pktmbuf_free(fp->rx[fp->rx_head++]);
	fp->rx_head = fp->rx_n = 0;
}
