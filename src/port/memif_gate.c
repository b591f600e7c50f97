/*
 * memif_gate.c - the per-queue burst gates of memif ports and the process's
 * munmap(), which waits for running bursts before unmapping (see
 * memif_gate.h for the DPDK 22.11 race this closes).
 */
#include "port/memif_gate.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct memif_gate_stats memif_gate_stats;

static struct memif_gate gates[MEMIF_GATE_MAX];
/* Slots ever handed out: munmap() scans only these. */
static _Atomic unsigned gates_used;

typedef int (*munmap_fn)(void *, size_t);
/* The next munmap() after ours (libc's, or a sanitizer's interceptor). */
static _Atomic(munmap_fn) next_munmap;

struct memif_gate *memif_gate_get(void)
{
	/* The sanitizer's interceptor, if any, keeps its shadow memory right;
	 * resolved here, on the thread opening ports, never inside munmap(). */
	if (!atomic_load(&next_munmap))
		atomic_store(&next_munmap, (munmap_fn)dlsym(RTLD_NEXT, "munmap"));
	for (unsigned i = 0; i < MEMIF_GATE_MAX; i++) {
		int expect = 0;

		if (atomic_compare_exchange_strong(&gates[i].in_use, &expect, 1)) {
			unsigned used = atomic_load(&gates_used);

			while (used < i + 1 &&
			       !atomic_compare_exchange_weak(&gates_used, &used, i + 1))
				;
			return &gates[i];
		}
	}
	return NULL;
}

void memif_gate_put(struct memif_gate *g)
{
	if (g)
		atomic_store(&g->in_use, 0);
}

void memif_gate_quiesce(void)
{
	unsigned n = atomic_load(&gates_used);
	bool counted = false;

	/* Pairs with memif_gate_enter(): the caller's earlier stores (the PMD
	 * clearing CONNECTED) are visible to any burst whose entry we miss. */
	atomic_thread_fence(memory_order_seq_cst);
	for (unsigned i = 0; i < n; i++) {
		uint64_t seq = atomic_load(&gates[i].seq);
		unsigned spins = 0;

		if (!(seq & 1))
			continue;
		if (!counted) {
			counted = true;
			atomic_fetch_add(&memif_gate_stats.unmap_waits, 1);
			atomic_fetch_add(&memif_gate_stats.unmap_waiting, 1);
		}
		/* A burst is microseconds long; a descheduled worker may take
		 * longer, so stop spinning hard after a while. */
		while (atomic_load(&gates[i].seq) == seq)
			if (++spins > 1000)
				sched_yield();
	}
	if (counted)
		atomic_fetch_sub(&memif_gate_stats.unmap_waiting, 1);
}

int munmap(void *addr, size_t len)
{
	munmap_fn next = atomic_load_explicit(&next_munmap, memory_order_relaxed);

	if (atomic_load_explicit(&gates_used, memory_order_relaxed))
		memif_gate_quiesce();
	if (next)
		return next(addr, len);
	return (int)syscall(SYS_munmap, addr, len);
}
