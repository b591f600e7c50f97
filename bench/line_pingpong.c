/*
 * line_pingpong.c - how long one cache line takes to go from CPU A to CPU
 * B and back: the host's placement of the two vCPUs the benchmarks pin
 * client and server to. Every memif round trip moves a few dozen lines
 * each way (descriptors, ring indexes, 4 KiB of payload), so when this
 * figure jumps (about 90 ns to about 340 ns on the AMD EPYC hosts of
 * 2026-11-29, the two vCPUs put on distant cores by the host), raw memif
 * and lunar over memif slow down alike, by about 5 us a 4 KiB round trip;
 * docs/benchmarks.md. Run it before and after a measurement to tell the
 * host's phase.
 *
 * usage: line_pingpong [CPU_A CPU_B [ROUND_TRIPS]]   (default 0 1 200000)
 * Prints the median ns per round trip over 9 batches (built with _GNU_SOURCE,
 * which the project sets, for sched_setaffinity()).
 */
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCHES 9

static alignas(64) _Atomic unsigned long line;
static unsigned long trips;
static int cpu_b;
static atomic_bool b_failed;

static int pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return sched_setaffinity(0, sizeof(s), &s);
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* B: answers each odd value with the next even one. */
static void *answer(void *arg)
{
	(void)arg;
	if (pin(cpu_b)) {
		atomic_store(&b_failed, true);
		return NULL;
	}
	for (unsigned long i = 0; i < BATCHES * trips; i++) {
		while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 1)
			;
		atomic_store_explicit(&line, 2 * i + 2, memory_order_release);
	}
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int cpu_a = argc > 2 ? atoi(argv[1]) : 0;
	double ns[BATCHES];
	pthread_t t;

	cpu_b = argc > 2 ? atoi(argv[2]) : 1;
	trips = argc > 3 ? strtoul(argv[3], NULL, 10) : 200000;
	if (argc == 2 || argc > 4 || trips == 0 || cpu_a == cpu_b) {
		fprintf(stderr, "usage: line_pingpong [CPU_A CPU_B [ROUND_TRIPS]] (two CPUs)\n");
		return 2;
	}
	if (pin(cpu_a)) {
		fprintf(stderr, "line_pingpong: cannot run on CPU %d\n", cpu_a);
		return 1;
	}
	if (pthread_create(&t, NULL, answer, NULL)) {
		fprintf(stderr, "line_pingpong: pthread_create failed\n");
		return 1;
	}
	for (unsigned long b = 0, i = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		for (unsigned long end = i + trips; i < end; i++) {
			atomic_store_explicit(&line, 2 * i + 1, memory_order_release);
			while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 2)
				if (atomic_load_explicit(&b_failed, memory_order_relaxed))
					goto b_gone;
		}
		ns[b] = (now_ns() - t0) / (double)trips;
	}
	pthread_join(t, NULL);
	qsort(ns, BATCHES, sizeof(ns[0]), cmp);
	printf("CPU %d <-> CPU %d: %.0f ns a cache-line round trip (median of %d x %lu; "
	       "min %.0f, max %.0f)\n",
	       cpu_a, cpu_b, ns[BATCHES / 2], BATCHES, trips, ns[0], ns[BATCHES - 1]);
	return 0;
b_gone:
	pthread_join(t, NULL);
	fprintf(stderr, "line_pingpong: cannot run on CPU %d\n", cpu_b);
	return 1;
}
