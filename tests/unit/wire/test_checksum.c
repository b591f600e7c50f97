/* test_checksum.c - unit tests for wire/checksum.h against RFC 1071 and DPDK's own helpers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wire_test.h"
#include "golden.h"
#include "wire/checksum.h"

/* RFC 1071 1.(4) worked example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2. */
static void test_csum_rfc1071(void **state)
{
	(void)state;
	static const uint8_t data[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
	uint16_t c = inet_csum(data, sizeof(data));
	uint8_t wire[2];

	memcpy(wire, &c, 2);
	assert_int_equal(wire[0], 0x22);
	assert_int_equal(wire[1], 0x0d);
	/* Verification: the sum over data plus its checksum complements to 0. */
	uint8_t with[10];
	memcpy(with, data, 8);
	memcpy(with + 8, &c, 2);
	assert_int_equal(inet_csum(with, sizeof(with)), 0);
}

/* An odd trailing byte is padded with zero on the right (RFC 1071 4.1). */
static void test_csum_odd(void **state)
{
	(void)state;
	static const uint8_t odd[3] = {0x12, 0x34, 0x56}, even[4] = {0x12, 0x34, 0x56, 0};

	assert_int_equal(inet_csum(odd, 3), inet_csum(even, 4));
	assert_int_equal(inet_csum(odd, 0), 0xffff);
	assert_int_equal(inet_csum_add(0xffff, 0x0001), 0x0001);
	assert_int_equal(inet_csum_add(0x8000, 0x8000), 0x0001);
}

/* Our pseudo-header and L4 sums agree with DPDK's IPv4 helpers. */
static void test_csum_matches_dpdk(void **state)
{
	(void)state;
	static const struct {
		const uint8_t *frame;
		size_t len;
	} frames[] = {
	    {golden_udp, sizeof(golden_udp)},
	    {golden_tcp_syn, sizeof(golden_tcp_syn)},
	    {golden_tcp_sack, sizeof(golden_tcp_sack)},
	    {golden_ip_options, sizeof(golden_ip_options)},
	};

	for (size_t i = 0; i < ARRAY_SIZE(frames); i++) {
		const struct rte_ipv4_hdr *ip =
		    (const struct rte_ipv4_hdr *)(frames[i].frame + GOLDEN_L3);
		size_t hlen = rte_ipv4_hdr_len(ip);
		size_t l4len = rte_be_to_cpu_16(ip->total_length) - hlen;
		uint32_t src = rte_be_to_cpu_32(ip->src_addr), dst = rte_be_to_cpu_32(ip->dst_addr);
		const uint8_t *l4 = (const uint8_t *)ip + hlen;

		assert_int_equal(inet_csum_pseudo(src, dst, ip->next_proto_id, (uint32_t)l4len),
				 rte_ipv4_phdr_cksum(ip, 0));
		/* Golden checksums are valid: the full sum complements to 0. */
		assert_int_equal(inet_csum_l4(l4, l4len, src, dst, ip->next_proto_id), 0);
		assert_int_equal(inet_csum(ip, hlen), 0);
		assert_int_equal(rte_ipv4_cksum(ip), 0);
	}
}

/*
 * A region summed in pieces, cut at odd and even offsets (a frame over
 * chained buffers), sums as the whole does: what DPDK 22.11's
 * rte_raw_cksum_mbuf gets wrong once a piece's 32-bit sum has carries.
 */
static void test_csum_in_pieces(void **state)
{
	uint8_t buf[4096];
	uint32_t x = 12345;

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16) | 0x80; /* high bytes: carries in every piece */
	}
	for (unsigned trial = 0; trial < 200; trial++) {
		size_t off = 0;
		uint16_t sum = 0;

		while (off < sizeof(buf)) {
			size_t len;

			x = x * 1103515245u + 12345u;
			len = 1 + (x >> 16) % 1500;
			if (len > sizeof(buf) - off)
				len = sizeof(buf) - off;
			sum = inet_csum_add_at(sum, inet_csum_partial(buf + off, len), off);
			off += len;
		}
		assert_int_equal(sum, inet_csum_partial(buf, sizeof(buf)));
	}
}

/* RFC 1071's definition, one 16-bit word at a time, the odd last byte padded with zero. */
static uint16_t reference_sum(const uint8_t *p, size_t len)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		uint16_t w;

		memcpy(&w, p + i, 2);
		s = (s & 0xffff) + (s >> 16) + w;
	}
	if (len & 1) {
		uint16_t w = 0;

		memcpy(&w, p + len - 1, 1);
		s = (s & 0xffff) + (s >> 16) + w;
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

typedef uint16_t (*long_sum_fn)(const void *, size_t);

/* Every long-sum version this CPU runs; the AVX ones only where it has them. */
static unsigned long_sums(long_sum_fn *fn, const char **name)
{
	unsigned n = 0;

	fn[n] = inet_csum_long_generic;
	name[n++] = "generic";
#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx2")) {
		fn[n] = inet_csum_long_avx2;
		name[n++] = "avx2";
	}
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
		fn[n] = inet_csum_long_avx512;
		name[n++] = "avx512";
	}
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vnni")) {
		fn[n] = inet_csum_long_avx512vnni;
		name[n++] = "avx512vnni";
	}
#endif
	return n;
}

/* Every long-sum version and inet_csum_partial() give RFC 1071's sum of @len bytes at @p. */
static void check_versions(const uint8_t *p, size_t len)
{
	long_sum_fn fn[4];
	const char *name[4];
	unsigned n = long_sums(fn, name);
	uint16_t want = reference_sum(p, len);

	for (unsigned i = 0; i < n; i++) {
		uint16_t got = fn[i](p, len);

		if (got != want)
			fail_msg(
			    "%s: sum of %zu bytes at address ...%02x is %04x, RFC 1071 gives %04x",
			    name[i], len, (unsigned)((uintptr_t)p & 0xff), got, want);
	}
	assert_int_equal(inet_csum_partial(p, len), want);
}

/* check_versions(), and DPDK's rte_raw_cksum() agrees (it does below 64 KiB). */
static void check_all(const uint8_t *p, size_t len)
{
	check_versions(p, len);
	assert_int_equal(rte_raw_cksum(p, len), reference_sum(p, len));
}

/*
 * Every version of the long sum (checksum.c) gives RFC 1071's sum: every
 * length up to 600 (each SIMD tail and loop count) at every alignment mod
 * 8, then long regions; random bytes, and all-ones bytes where every add
 * carries. Each version's last bytes sit at the end of a heap block, so
 * the ASan build catches a read past the region.
 */
static void test_long_sums_agree(void **state)
{
	enum { MAX = 66000 };
	uint8_t *buf = malloc(MAX + 8);
	uint32_t x = 777;

	(void)state;
	assert_non_null(buf);
	for (int fill = 0; fill < 2; fill++) {
		for (size_t i = 0; i < MAX + 8; i++) {
			x = x * 1103515245u + 12345u;
			buf[i] = fill ? 0xff : (uint8_t)(x >> 16);
		}
		for (size_t len = 0; len <= 600; len++)
			for (size_t off = 0; off < 8; off++)
				check_all(buf + off, len);
		for (size_t len = 1400; len <= 1520; len++)
			check_all(buf + MAX + 8 - len, len);
		check_all(buf + 1, 65535);
		check_all(buf, MAX + 8);
		check_all(buf + MAX + 8 - 9000, 9000);
	}
	free(buf);
}

/*
 * Regions longer than one round of the AVX2 sum (512 KiB: its 32-bit
 * lanes are emptied between rounds), all-ones where every lane is at its
 * extreme, and random: every version still gives RFC 1071's sum (DPDK's
 * rte_raw_cksum() does not at this size: it is left out).
 */
static void test_long_sums_many_rounds(void **state)
{
	const size_t len = (5u << 19) + 37; /* five rounds, a partial block and an odd tail */
	uint8_t *buf = malloc(len);

	(void)state;
	assert_non_null(buf);
	memset(buf, 0xff, len);
	check_versions(buf, len); /* every lane at its positive extreme */
	memset(buf, 0, len);
	check_versions(buf, len); /* its negative extreme; and the sum is 0, not 0xffff */
	assert_int_equal(inet_csum_partial(buf, len), 0);
	srand(7);
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)rand();
	check_versions(buf, len);
	check_versions(buf + 1, len - 1);
	free(buf);
}

/*
 * The VNNI sum's 32-bit lanes hold a bounded number of blocks per round
 * (two accumulators are added in 32 bits at its end): 16 MiB of all-ones
 * and of all-zero bytes, each word at its biased extreme, would overflow
 * them with a round eight times as long. Only on a CPU with AVX-512 VNNI.
 */
static void test_vnni_lanes_do_not_overflow(void **state)
{
	const size_t len = 16u << 20;
	uint8_t *buf;

	(void)state;
#if defined(__x86_64__)
	if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
	    !__builtin_cpu_supports("avx512vnni"))
		skip();
	buf = malloc(len);
	assert_non_null(buf);
	memset(buf, 0xff, len);
	assert_int_equal(inet_csum_long_avx512vnni(buf, len), inet_csum_long_generic(buf, len));
	memset(buf, 0, len);
	assert_int_equal(inet_csum_long_avx512vnni(buf, len), inet_csum_long_generic(buf, len));
	free(buf);
#else
	(void)len;
	(void)buf;
	skip();
#endif
}

/* The version chosen at load time: AVX-512 (not its VNNI variant), else the widest. */
static void test_long_sum_choice(void **state)
{
	long_sum_fn fn[4];
	const char *name[4];
	unsigned n = long_sums(fn, name), want = n - 1;

	(void)state;
	if (!strcmp(name[want], "avx512vnni"))
		want--;
	assert_string_equal(inet_csum_long_name(), name[want]);
	assert_ptr_equal(inet_csum_long, fn[want]);
}

/* This binary run again with LUNAR_CSUM=@value: the version it chose. */
static void choice_with_env(const char *value, char *out, size_t size)
{
	char cmd[256];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "LUNAR_CSUM=%s /proc/%d/exe --print-choice 2>/dev/null", value,
		 (int)getpid());
	f = popen(cmd, "r");
	assert_non_null(f);
	if (!fgets(out, (int)size, f))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	assert_int_equal(pclose(f), 0);
	assert_true(out[0] != '\0');
}

/* LUNAR_CSUM picks any version this CPU runs; anything else leaves the default. */
static void test_long_sum_env(void **state)
{
	long_sum_fn fn[4];
	const char *name[4];
	unsigned n = long_sums(fn, name);
	char got[64];

	(void)state;
	for (unsigned i = 0; i < n; i++) {
		choice_with_env(name[i], got, sizeof(got));
		assert_string_equal(got, name[i]);
	}
	choice_with_env("avx1024", got, sizeof(got));
	assert_string_equal(got, inet_csum_long_name());
	choice_with_env("", got, sizeof(got));
	assert_string_equal(got, inet_csum_long_name());
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--print-choice")) {
		puts(inet_csum_long_name()); /* for test_long_sum_env */
		return 0;
	}
	if (getenv("LUNAR_CSUM")) {
		/* The choice is made before main(): run again without the caller's. */
		unsetenv("LUNAR_CSUM");
		execv("/proc/self/exe", argv);
		return 1;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_csum_rfc1071),
	    cmocka_unit_test(test_csum_odd),
	    cmocka_unit_test(test_csum_matches_dpdk),
	    cmocka_unit_test(test_csum_in_pieces),
	    cmocka_unit_test(test_long_sums_agree),
	    cmocka_unit_test(test_long_sums_many_rounds),
	    cmocka_unit_test(test_vnni_lanes_do_not_overflow),
	    cmocka_unit_test(test_long_sum_choice),
	    cmocka_unit_test(test_long_sum_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
