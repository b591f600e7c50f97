/*
 * checksum.c - the long-buffer Internet checksum, chosen for this CPU.
 *
 * Owns the sums of payload-sized regions (a TCP segment's data, checked on
 * receive and filled on send without offload): a portable version and
 * AVX2, AVX-512 and AVX-512 VNNI versions, one picked at load time. Short
 * regions (headers, the pseudo-header) stay inline in checksum.h.
 *
 * The portable and AVX-512 versions add the buffer as 32-bit words into
 * 64-bit lanes; the AVX2 and VNNI ones add 16-bit words into 32-bit lanes
 * with a multiply-add (VNNI's dot product accumulates in the same
 * instruction), in rounds short enough that no lane overflows. Each folds
 * its total to 16 bits at the end. The one's complement sum is the same
 * whatever word size adds it (2^16 = 1 mod 2^16 - 1; RFC 1071 2(C)
 * "parallel summation"), so the result equals rte_raw_cksum()'s (below
 * 64 KiB, where DPDK 22.11's is right), byte order of the buffer
 * included. An odd trailing byte is padded with zero on the right
 * (RFC 1071).
 *
 * Measured on an earlier host's EPYC, 1448 bytes (a full segment's
 * payload): rte_raw_cksum (SSE4.2 build) 50 ns, the first AVX2 version
 * 22 ns, AVX-512 17 ns. The multiply-add AVX2 version takes ~0.17
 * instructions a byte, calls included, against that one's ~0.29
 * (callgrind, docs/benchmarks.md, thirtieth session). On this session's
 * host (bench/csum_bench, 1448 / 4096 bytes): AVX2 16.3 / 34.9 ns,
 * AVX-512 16.2 / 42.2 ns, VNNI 12.0 / 26.8 ns (thirty-second session).
 */
#include "wire/checksum.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>

/* Whole 32-bit words, four accumulators so the adds do not wait on each other. */
static uint64_t sum_words(const uint8_t *p, size_t len)
{
	uint64_t a = 0, b = 0, c = 0, d = 0;

	for (; len >= 16; p += 16, len -= 16) {
		uint32_t w[4];

		memcpy(w, p, sizeof(w));
		a += w[0];
		b += w[1];
		c += w[2];
		d += w[3];
	}
	return a + b + c + d + inet_csum_words(p, len);
}

uint16_t inet_csum_long_generic(const void *buf, size_t len)
{
	return inet_csum_fold(sum_words(buf, len));
}

#if defined(__x86_64__)

/*
 * 32 bytes as sixteen 16-bit words, summed in pairs into eight 32-bit
 * lanes by one multiply-add with ones (vpmaddwd). _mm256_madd_epi16() reads signed
 * words, so each is biased first (w ^ 0x8000 is w - 32768 as a signed
 * word) and the bias is added back once per round: 16 * 32768 a block.
 */
__attribute__((target("avx2,tune=haswell"))) static inline __m256i sum16_avx2(const uint8_t *p)
{
	const __m256i bias = _mm256_set1_epi16((short)0x8000), ones = _mm256_set1_epi16(1);
	__m256i x = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)p), bias);

	return _mm256_madd_epi16(x, ones);
}

/* The exact sum of the 16-bit words of @blocks 32-byte blocks, from their biased lane sums. */
__attribute__((target("avx2,tune=haswell"))) static inline uint64_t lanes_avx2(__m256i acc,
									       size_t blocks)
{
	int32_t lane[8];
	int64_t s = (int64_t)blocks * 16 * 32768;

	_mm256_storeu_si256((__m256i *)lane, acc);
	for (unsigned i = 0; i < 8; i++)
		s += lane[i];
	return (uint64_t)s;
}

__attribute__((target("avx2,tune=haswell"))) uint16_t inet_csum_long_avx2(const void *buf,
									  size_t len)
{
	const uint8_t *p = buf;
	uint64_t sum = 0;

	while (len >= 32) {
		/*
		 * At most 512 KiB a round: a lane then sums at most 16384
		 * blocks of at most 65536 in magnitude, 2^30: inside 32 bits.
		 */
		size_t n = len < (1u << 19) ? len & ~(size_t)31 : (1u << 19);
		const uint8_t *end = p + n;
		__m256i acc = _mm256_setzero_si256();

		/* Four blocks an iteration, added in pairs: short dependency chains. */
		for (; end - p >= 128; p += 128)
			acc = _mm256_add_epi32(
			    acc, _mm256_add_epi32(
				     _mm256_add_epi32(sum16_avx2(p), sum16_avx2(p + 32)),
				     _mm256_add_epi32(sum16_avx2(p + 64), sum16_avx2(p + 96))));
		for (; p < end; p += 32)
			acc = _mm256_add_epi32(acc, sum16_avx2(p));
		sum += lanes_avx2(acc, n / 32);
		len -= n;
	}
	/*
	 * Clean upper halves before the SSE code around (DPDK is built for
	 * corei7): GCC inserts no vzeroupper in this function on its own,
	 * and every SSE instruction after it then paid for the dirty state.
	 */
	_mm256_zeroupper();
	return inet_csum_fold(sum + sum_words(p, len));
}

/* 64 bytes: sixteen 32-bit words widened into eight 64-bit lanes, twice. */
__attribute__((target("avx512f,avx512bw"))) static inline __m512i add64_avx512(__m512i acc,
									       __m512i x)
{
	const __m512i zero = _mm512_setzero_si512();

	return _mm512_add_epi64(
	    acc, _mm512_add_epi64(_mm512_unpacklo_epi32(x, zero), _mm512_unpackhi_epi32(x, zero)));
}

/* The first @len (< 64) bytes at @p, zeros past them: no read beyond the buffer. */
__attribute__((target("avx512f,avx512bw"))) static inline __m512i load_part(const uint8_t *p,
									    size_t len)
{
	return _mm512_maskz_loadu_epi8((__mmask64)((1ull << len) - 1), p);
}

__attribute__((target("avx512f,avx512bw"))) uint16_t inet_csum_long_avx512(const void *buf,
									   size_t len)
{
	const uint8_t *p = buf;
	__m512i acc0 = _mm512_setzero_si512(), acc1 = acc0;

	for (; len >= 128; p += 128, len -= 128) {
		acc0 = add64_avx512(acc0, _mm512_loadu_si512(p));
		acc1 = add64_avx512(acc1, _mm512_loadu_si512(p + 64));
	}
	if (len >= 64) {
		acc0 = add64_avx512(acc0, _mm512_loadu_si512(p));
		p += 64;
		len -= 64;
	}
	/* Zero padding adds nothing, and an odd last byte lands in the low half of its word. */
	if (len)
		acc1 = add64_avx512(acc1, load_part(p, len));
	return inet_csum_fold((uint64_t)_mm512_reduce_add_epi64(_mm512_add_epi64(acc0, acc1)));
}

/*
 * AVX-512 VNNI: 64 bytes as thirty-two 16-bit words, biased as in the
 * AVX2 version and added in pairs into sixteen 32-bit lanes by one
 * dot-product instruction (vpdpwssd, ones as the other operand): two
 * instructions a block. A lane gains at most 65536 in magnitude a block.
 */
#define VNNI_ROUND (1u << 20) /* 16384 blocks: a lane stays within 2^30 */

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static inline __m512i dot_vnni(__m512i acc,
										      __m512i x)
{
	const __m512i bias = _mm512_set1_epi16((short)0x8000), ones = _mm512_set1_epi16(1);

	return _mm512_dpwssd_epi32(acc, _mm512_xor_si512(x, bias), ones);
}

/* The lanes' exact sum, as 64-bit numbers (four accumulators' lanes may pass 2^31 together). */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static inline int64_t lanes_vnni(__m512i a,
											__m512i b)
{
	__m512i w = _mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(a)),
				     _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(a, 1)));

	w = _mm512_add_epi64(w, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(b)));
	w = _mm512_add_epi64(w, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(b, 1)));
	return _mm512_reduce_add_epi64(w);
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) uint16_t
inet_csum_long_avx512vnni(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t sum = 0;

	while (len) {
		/* Whole blocks, the last of them cut short and zero-padded (no read past the
		 * buffer). */
		size_t n = len < VNNI_ROUND ? len : VNNI_ROUND, blocks = (n + 63) / 64;
		const uint8_t *end = p + (n & ~(size_t)63);
		__m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;

		/* Four blocks an iteration into four accumulators: the adds do not wait on each
		 * other. */
		for (; end - p >= 256; p += 256) {
			a0 = dot_vnni(a0, _mm512_loadu_si512(p));
			a1 = dot_vnni(a1, _mm512_loadu_si512(p + 64));
			a2 = dot_vnni(a2, _mm512_loadu_si512(p + 128));
			a3 = dot_vnni(a3, _mm512_loadu_si512(p + 192));
		}
		for (; p < end; p += 64)
			a0 = dot_vnni(a0, _mm512_loadu_si512(p));
		/* A zero-padded word is biased like the others, so the correction is per block. */
		if (n & 63) {
			a1 = dot_vnni(a1, load_part(p, n & 63));
			p += n & 63;
		}
		sum += (uint64_t)(lanes_vnni(_mm512_add_epi32(a0, a2), _mm512_add_epi32(a1, a3)) +
				  (int64_t)blocks * 32 * 32768);
		len -= n;
	}
	return inet_csum_fold(sum);
}

#endif

uint16_t (*inet_csum_long)(const void *buf, size_t len) = inet_csum_long_generic;

/*
 * Every version, by name: whether this CPU runs it (filled in at load)
 * and whether it may be chosen without being named.
 */
static struct long_sum {
	const char *name;
	uint16_t (*fn)(const void *buf, size_t len);
	bool runs, by_default;
} long_sums[] = {
    {"generic", inet_csum_long_generic, true, true},
#if defined(__x86_64__)
    {"avx2", inet_csum_long_avx2, false, true},
    {"avx512", inet_csum_long_avx512, false, true},
    {"avx512vnni", inet_csum_long_avx512vnni, false, false},
#endif
};
#define LONG_SUMS (sizeof(long_sums) / sizeof(long_sums[0]))

/*
 * Pick a version before main() and any worker thread: the last of
 * long_sums[] this CPU runs that may be chosen unnamed (AVX-512, else
 * AVX2, else the generic loop). LUNAR_CSUM names another, to measure one
 * against another; one this CPU cannot run, or an unknown name, is
 * reported on stderr and ignored.
 *
 * Not the VNNI version by default, though it is the fastest in a loop
 * (bench/csum_bench: 26.8 ns for 4 KiB against 42.2): in the stack, on a
 * Xeon with VNNI, it made the 4 KiB RPC's p99 6.2 us against 4.4 with
 * the plain AVX-512 sum, and its RPC/s 8% lower (docs/benchmarks.md,
 * thirty-sixth session; the AVX2 version, once it cleaned its upper
 * halves, equals the plain AVX-512 one there). Its 512-bit dot product
 * is a multiply, which the plain sum (adds and widenings) does not use.
 */
__attribute__((constructor)) static void choose_long_sum(void)
{
	const char *want = getenv("LUNAR_CSUM");
	const struct long_sum *pick = NULL, *named = NULL;

#if defined(__x86_64__)
	__builtin_cpu_init();
	long_sums[1].runs = __builtin_cpu_supports("avx2");
	long_sums[2].runs = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
	long_sums[3].runs = long_sums[2].runs && __builtin_cpu_supports("avx512vnni");
#endif
	for (const struct long_sum *v = long_sums; v < long_sums + LONG_SUMS; v++) {
		if (v->runs && v->by_default)
			pick = v;
		if (want && v->runs && !strcmp(want, v->name))
			named = v;
	}
	if (want && *want && !named) {
		fprintf(stderr, "lunar: LUNAR_CSUM=%s ignored: not one of", want);
		for (const struct long_sum *v = long_sums; v < long_sums + LONG_SUMS; v++)
			if (v->runs)
				fprintf(stderr, " %s", v->name);
		fprintf(stderr, " (the versions this CPU runs); using %s\n", pick->name);
	}
	inet_csum_long = (named ? named : pick)->fn;
}

const char *inet_csum_long_name(void)
{
	for (const struct long_sum *v = long_sums; v < long_sums + LONG_SUMS; v++)
		if (v->fn == inet_csum_long)
			return v->name;
	return "generic";
}
