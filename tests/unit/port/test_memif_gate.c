/*
 * test_memif_gate.c - the burst gate of memif ports (port/memif_gate.c):
 * munmap() waits while a queue is inside a burst and goes straight through
 * when none is; gates run out with a NULL, not an overrun; and a miniature of
 * DPDK 22.11's disconnect race (flag cleared, then the ring unmapped, while a
 * reader polls it) runs thousands of rounds without a fault.
 */
#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "port/memif_gate.h"

static size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static void *map_page(void)
{
	void *p = mmap(NULL, page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_ptr_not_equal(p, MAP_FAILED);
	return p;
}

static bool mapped(void *p)
{
	/* msync fails with ENOMEM on an address with no mapping. */
	return msync(p, page(), MS_ASYNC) == 0;
}

static void *unmap_thread(void *p)
{
	return (void *)(intptr_t)munmap(p, page());
}

/* A queue inside a burst holds munmap() back until it leaves. */
static void test_unmap_waits_for_running_burst(void **state)
{
	struct memif_gate *g = memif_gate_get();
	uint64_t waits = atomic_load(&memif_gate_stats.unmap_waits);
	volatile uint8_t *ring = map_page();
	pthread_t t;
	void *rc;

	(void)state;
	assert_non_null(g);
	ring[0] = 7;
	memif_gate_enter(g);
	assert_int_equal(pthread_create(&t, NULL, unmap_thread, (void *)ring), 0);
	while (atomic_load(&memif_gate_stats.unmap_waiting) == 0)
		sched_yield();
	/* The unmapping thread is waiting: the ring is still there. */
	assert_true(mapped((void *)ring));
	assert_int_equal(ring[0], 7);
	memif_gate_leave(g);
	assert_int_equal(pthread_join(t, &rc), 0);
	assert_int_equal((intptr_t)rc, 0);
	assert_false(mapped((void *)ring));
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(atomic_load(&memif_gate_stats.unmap_waits), waits + 1);
	assert_int_equal(atomic_load(&memif_gate_stats.unmap_waiting), 0);
	memif_gate_put(g);
}

/* Between bursts munmap() does not wait, and unmaps. */
static void test_unmap_between_bursts_goes_through(void **state)
{
	struct memif_gate *g = memif_gate_get();
	uint64_t waits = atomic_load(&memif_gate_stats.unmap_waits);
	void *ring = map_page();

	(void)state;
	assert_non_null(g);
	memif_gate_enter(g);
	memif_gate_leave(g);
	assert_int_equal(munmap(ring, page()), 0);
	assert_false(mapped(ring));
	assert_int_equal(atomic_load(&memif_gate_stats.unmap_waits), waits);
	/* Errors pass through as the system call gives them. */
	assert_int_equal(munmap((void *)1, page()), -1);
	assert_int_equal(errno, EINVAL);
	memif_gate_put(g);
}

/* Gates run out with NULL; one given back is handed out again. */
static void test_gates_run_out(void **state)
{
	struct memif_gate *all[MEMIF_GATE_MAX + 1];
	unsigned n = 0;

	(void)state;
	while (n <= MEMIF_GATE_MAX && (all[n] = memif_gate_get()))
		n++;
	assert_int_equal(n, MEMIF_GATE_MAX);
	assert_null(memif_gate_get());
	memif_gate_put(all[5]);
	assert_ptr_equal(memif_gate_get(), all[5]);
	for (unsigned i = 0; i < n; i++)
		memif_gate_put(all[i]);
	memif_gate_put(NULL);
}

/*
 * The race itself, in miniature. A poller does what memif's burst does:
 * enter, check the connected flag, read the ring, leave. A disconnector does
 * what memif_disconnect() does: clear the flag, unmap the ring; then it maps
 * a new one and connects again. Without the gate the poller's read after the
 * flag check can land on an unmapped page (SIGSEGV ends the test).
 */
#define RACE_ROUNDS 2000

struct race {
	struct memif_gate *gate;
	_Atomic(volatile uint64_t *) ring;
	_Atomic int connected;
	_Atomic int done;
	uint64_t reads, sum;
};

static void *poller(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->done)) {
		memif_gate_enter(r->gate);
		if (atomic_load_explicit(&r->connected, memory_order_relaxed)) {
			volatile uint64_t *ring =
			    atomic_load_explicit(&r->ring, memory_order_relaxed);

			/* A long burst: munmap() lands inside it unless held back. */
			for (unsigned pass = 0; pass < 64; pass++)
				for (unsigned i = 0; i < 64; i++)
					r->sum += ring[i * 8];
			/* one writer; the main thread spins on it */
			__atomic_store_n(&r->reads, r->reads + 1, __ATOMIC_RELAXED);
		}
		memif_gate_leave(r->gate);
	}
	return NULL;
}

static void test_disconnect_race_never_faults(void **state)
{
	struct race r = {.gate = memif_gate_get()};
	pthread_t t;

	(void)state;
	assert_non_null(r.gate);
	atomic_store(&r.ring, map_page());
	atomic_store(&r.connected, 1);
	assert_int_equal(pthread_create(&t, NULL, poller, &r), 0);
	for (unsigned round = 0; round < RACE_ROUNDS; round++) {
		volatile uint64_t *old = atomic_load(&r.ring);

		/* Let the poller in for a while (no timing: spin on its count). */
		for (uint64_t seen = __atomic_load_n(&r.reads, __ATOMIC_RELAXED);
		     __atomic_load_n(&r.reads, __ATOMIC_RELAXED) == seen;)
			sched_yield();
		atomic_store_explicit(&r.connected, 0, memory_order_relaxed);
		assert_int_equal(munmap((void *)old, page()), 0);
		atomic_store_explicit(&r.ring, map_page(), memory_order_relaxed);
		atomic_store(&r.connected, 1);
	}
	atomic_store(&r.done, 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(r.reads >= RACE_ROUNDS);
	assert_int_equal(r.sum, 0); /* fresh anonymous pages read as zero */
	munmap((void *)atomic_load(&r.ring), page());
	memif_gate_put(r.gate);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unmap_waits_for_running_burst),
	    cmocka_unit_test(test_unmap_between_bursts_goes_through),
	    cmocka_unit_test(test_gates_run_out),
	    cmocka_unit_test(test_disconnect_race_never_faults),
	};

	/* TEST_FILTER=test_disconnect_race_never_faults runs just the race (the
	 * other tests wait forever on a build with the gate disabled). */
	if (getenv("TEST_FILTER"))
		cmocka_set_test_filter(getenv("TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
