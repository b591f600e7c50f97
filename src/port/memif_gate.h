/*
 * memif_gate.h - keeps a memif peer's disconnect from unmapping the shared
 * rings while a worker is inside a burst on them.
 *
 * DPDK 22.11's memif handles its control socket in the EAL interrupt thread.
 * When the peer goes away, memif_disconnect() clears the device's CONNECTED
 * flag and then munmap()s the regions holding the rings and buffers, with no
 * wait for the data path. A worker already past the flag check in
 * rte_eth_rx_burst() or rte_eth_tx_burst() then touches unmapped memory and
 * the process dies with SIGSEGV.
 *
 * The gate closes that window without changing DPDK. Every memif burst is
 * bracketed by memif_gate_enter()/memif_gate_leave(), which move a per-queue
 * sequence number to odd and back to even. This file also defines munmap()
 * for the whole process (the executables export it so the memif PMD, a
 * shared object, calls it): before unmapping, it waits for every queue that
 * is inside a burst to leave it. A burst that enters after that wait sees the
 * cleared CONNECTED flag (both sides use sequentially consistent ordering)
 * and returns without touching the rings. A munmap with no queue inside a
 * burst costs one fence and a scan of the registered slots.
 */
#ifndef LUNAR_PORT_MEMIF_GATE_H
#define LUNAR_PORT_MEMIF_GATE_H

#include <stdatomic.h>
#include <stdint.h>

/* One queue's gate: odd while its worker is inside a burst. */
struct memif_gate {
	_Atomic uint64_t seq;
	_Atomic int in_use;
};

/* Process-wide counts of munmap() calls that had to wait for a burst. */
struct memif_gate_stats {
	_Atomic uint64_t unmap_waits;	/* munmap() calls that found a burst running */
	_Atomic uint64_t unmap_waiting; /* munmap() calls waiting right now */
};

extern struct memif_gate_stats memif_gate_stats;

/* Take a gate for one queue; NULL if all MEMIF_GATE_MAX are taken. */
#define MEMIF_GATE_MAX 64
struct memif_gate *memif_gate_get(void);
/* Give it back (the queue is closed; no burst may be running on it). */
void memif_gate_put(struct memif_gate *g);

/* Bracket one rx or tx burst. Enter orders the odd store before the PMD's
 * read of its CONNECTED flag; leave releases the ring accesses before it.
 * A NULL gate (a queue that is not memif's) does nothing. */
static inline void memif_gate_enter(struct memif_gate *g)
{
	if (g)
		atomic_fetch_add_explicit(&g->seq, 1, memory_order_seq_cst);
}

static inline void memif_gate_leave(struct memif_gate *g)
{
	if (g)
		atomic_fetch_add_explicit(&g->seq, 1, memory_order_release);
}

/* What munmap() does first: wait until no burst that began before this call
 * is still running. Exposed for tests. */
void memif_gate_quiesce(void);

#endif
