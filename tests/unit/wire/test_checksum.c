/* test_checksum.c - unit tests for wire/checksum.h against RFC 1071 and DPDK's own helpers. */
#include <string.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_csum_rfc1071),
	    cmocka_unit_test(test_csum_odd),
	    cmocka_unit_test(test_csum_matches_dpdk),
	    cmocka_unit_test(test_csum_in_pieces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
