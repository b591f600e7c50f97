/*
 * csum_bench.c - how long each Internet checksum version takes over one
 * segment's payload: DPDK's rte_raw_cksum() and wire/checksum.c's portable,
 * AVX2 and AVX-512 long sums (those the CPU runs). Hot cache, one buffer,
 * odd and even start in turn; the median of 9 rounds of 2,000,000 sums.
 *
 * usage: csum_bench [BYTES]   (default 1448: a full segment at MTU 1500 with timestamps)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wire/checksum.h"

#include <rte_ip.h>

#define ROUNDS 9
#define SUMS   2000000

typedef uint16_t (*sum_fn)(const void *, size_t);

static uint16_t dpdk_sum(const void *buf, size_t len)
{
	return rte_raw_cksum(buf, len);
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void run(const char *name, sum_fn fn, const uint8_t *buf, size_t len, uint16_t want)
{
	double ns[ROUNDS];
	volatile uint16_t sink = 0;

	for (int r = 0; r < ROUNDS; r++) {
		double t = now_ns();

		for (int i = 0; i < SUMS; i++)
			sink = fn(buf + (i & 1), len);
		ns[r] = (now_ns() - t) / SUMS;
	}
	qsort(ns, ROUNDS, sizeof(ns[0]), cmp_double);
	(void)sink;
	printf("%-14s %6.1f ns  (%zu bytes, %s)\n", name, ns[ROUNDS / 2], len,
	       fn(buf + 1, len) == want ? "sum agrees" : "SUM DIFFERS");
}

int main(int argc, char **argv)
{
	size_t len = argc > 1 ? strtoul(argv[1], NULL, 10) : 1448;
	uint8_t *buf = malloc(len + 1);
	uint16_t want;

	if (!buf || len == 0 || len > (1u << 24)) {
		fprintf(stderr, "usage: csum_bench [BYTES], 1 to 16777216\n");
		return 2;
	}
	srand(1);
	for (size_t i = 0; i < len + 1; i++)
		buf[i] = (uint8_t)rand();
	want = rte_raw_cksum(buf + 1, len);
	printf("chosen at load time: %s\n", inet_csum_long_name());
	run("rte_raw_cksum", dpdk_sum, buf, len, want);
	run("generic", inet_csum_long_generic, buf, len, want);
#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx2"))
		run("avx2", inet_csum_long_avx2, buf, len, want);
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
		run("avx512", inet_csum_long_avx512, buf, len, want);
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vnni"))
		run("avx512vnni", inet_csum_long_avx512vnni, buf, len, want);
#endif
	free(buf);
	return 0;
}
