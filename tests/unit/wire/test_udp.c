/* test_udp.c - unit tests for wire/udp: golden datagrams, round trip, lengths, checksum. */
#include <string.h>

#include "wire_test.h"
#include "golden.h"
#include "wire/udp.h"

/* The golden UDP frames: 20-byte IPv4 header, 20-byte datagram, 6 padding bytes. */
#define UDP_OFF (GOLDEN_L3 + 20)
#define UDP_LEN 20
#define SRC	IP4(192, 168, 1, 10)
#define DST	IP4(192, 168, 1, 20)

static void test_udp_golden(void **state)
{
	(void)state;
	const uint8_t *u = golden_udp + UDP_OFF;
	struct udp_repr r;
	uint8_t buf[UDP_LEN];

	assert_ok(udp_parse(u, UDP_LEN, SRC, DST, true, &r));
	assert_int_equal(r.sport, 40000);
	assert_int_equal(r.dport, 4791);
	assert_ptr_equal(r.payload, u + UDP_HDR_LEN);
	assert_int_equal(r.payload_len, 12);
	assert_memory_equal(r.payload, "hello, lunar", 12);
	/* Our emitter (pseudo-header checksum included) produces scapy's bytes. */
	memcpy(buf + UDP_HDR_LEN, "hello, lunar", 12);
	assert_int_equal(udp_emit(buf, sizeof(buf), &r, SRC, DST, true), UDP_HDR_LEN);
	assert_memory_equal(buf, u, UDP_LEN);
}

/* RFC 768 / RFC 1122 4.1.3.4: checksum 0 means "none" and is accepted. */
static void test_udp_no_checksum(void **state)
{
	(void)state;
	uint8_t buf[UDP_LEN];
	struct udp_repr r;

	memcpy(buf, golden_udp_nocsum + UDP_OFF, UDP_LEN);
	assert_ok(udp_parse(buf, sizeof(buf), SRC, DST, true, &r));
	assert_int_equal(r.payload_len, 12);
	/* ... even when the data or the pseudo-header would not match. */
	buf[UDP_LEN - 1] ^= 0xff;
	assert_ok(udp_parse(buf, sizeof(buf), SRC + 1, DST, true, &r));
}

static void test_udp_roundtrip(void **state)
{
	(void)state;
	static const size_t lens[] = {0, 1, 13, 1472, UINT16_MAX - UDP_HDR_LEN};
	static uint8_t buf[1 + UINT16_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		struct udp_repr in = {
		    .sport = (uint16_t)(i + 1), .dport = 0xffff, .payload_len = lens[i]};
		struct udp_repr r;
		uint8_t *p = buf + 1; /* odd address on purpose */
		size_t n = UDP_HDR_LEN + lens[i];

		for (size_t j = 0; j < lens[i]; j++)
			p[UDP_HDR_LEN + j] = (uint8_t)(j ^ i);
		assert_int_equal(udp_emit(p, n, &in, 0x01020304, 0xa0b0c0d0, true), UDP_HDR_LEN);
		assert_ok(udp_parse(p, n, 0x01020304, 0xa0b0c0d0, true, &r));
		assert_int_equal(r.sport, in.sport);
		assert_int_equal(r.dport, in.dport);
		assert_ptr_equal(r.payload, p + UDP_HDR_LEN);
		assert_int_equal(r.payload_len, lens[i]);
		/* The checksum is never sent as 0 when computed. */
		assert_false(p[6] == 0 && p[7] == 0);
	}
}

/* RFC 768: a computed checksum of 0 is sent as 0xffff (0 would mean "none"). */
static void test_udp_zero_sum_sent_as_ffff(void **state)
{
	(void)state;
	uint8_t buf[UDP_HDR_LEN + 2] = {0};
	struct udp_repr in = {.sport = 1, .dport = 2, .payload_len = 2}, r;

	/* With payload word w = ~(sum of everything else) the total sum is 0xffff. */
	udp_emit(buf, sizeof(buf), &in, SRC, DST, true);
	memcpy(buf + UDP_HDR_LEN, buf + 6, 2);
	udp_emit(buf, sizeof(buf), &in, SRC, DST, true);
	assert_int_equal(buf[6], 0xff);
	assert_int_equal(buf[7], 0xff);
	assert_ok(udp_parse(buf, sizeof(buf), SRC, DST, true, &r));
}

static void test_udp_fill_csum_later(void **state)
{
	(void)state;
	uint8_t buf[UDP_HDR_LEN + 5];
	struct udp_repr in = {.sport = 7, .dport = 9, .payload_len = 5}, r;

	/* Without fill_csum only the header needs room; the field is 0. */
	assert_int_equal(udp_emit(buf, UDP_HDR_LEN, &in, SRC, DST, false), UDP_HDR_LEN);
	assert_int_equal(buf[6] | buf[7], 0);
	memcpy(buf + UDP_HDR_LEN, "12345", 5);
	udp_fill_csum(buf, sizeof(buf), SRC, DST);
	assert_ok(udp_parse(buf, sizeof(buf), SRC, DST, true, &r));
	assert_memory_equal(r.payload, "12345", 5);
}

static void test_udp_emit_limits(void **state)
{
	(void)state;
	uint8_t buf[UDP_HDR_LEN + 4];
	struct udp_repr in = {.sport = 1, .dport = 2, .payload_len = 4};

	assert_int_equal(udp_emit(buf, UDP_HDR_LEN - 1, &in, SRC, DST, false), 0);
	/* With fill_csum the payload must be inside @cap: the checksum reads it. */
	assert_int_equal(udp_emit(buf, UDP_HDR_LEN + 3, &in, SRC, DST, true), 0);
	assert_int_equal(udp_emit(buf, UDP_HDR_LEN + 4, &in, SRC, DST, true), UDP_HDR_LEN);
	in.payload_len = UINT16_MAX - UDP_HDR_LEN + 1;
	assert_int_equal(udp_emit(buf, SIZE_MAX, &in, SRC, DST, false), 0);
}

static void test_udp_short(void **state)
{
	(void)state;
	struct udp_repr r;

	for (size_t len = 0; len < UDP_HDR_LEN; len++)
		assert_drop(udp_parse(golden_udp + UDP_OFF, len, SRC, DST, true, &r),
			    LUNAR_DROP_UDP_SHORT);
}

static void test_udp_bad_len(void **state)
{
	(void)state;
	static const uint16_t bad[] = {0, 1, 7, UDP_LEN + 1, 0xffff};
	uint8_t buf[UDP_LEN];
	struct udp_repr r;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memcpy(buf, golden_udp + UDP_OFF, UDP_LEN);
		buf[4] = (uint8_t)(bad[i] >> 8);
		buf[5] = (uint8_t)bad[i];
		assert_drop(udp_parse(buf, sizeof(buf), SRC, DST, false, &r),
			    LUNAR_DROP_UDP_BAD_LEN);
	}
	/* Datagram cut short by the IP layer. */
	assert_drop(udp_parse(golden_udp + UDP_OFF, UDP_LEN - 1, SRC, DST, true, &r),
		    LUNAR_DROP_UDP_BAD_LEN);
	/* Bytes past the UDP length are ignored (and not checksummed). */
	assert_ok(udp_parse(golden_udp + UDP_OFF, UDP_LEN + 6, SRC, DST, true, &r));
	assert_int_equal(r.payload_len, 12);
	/* Length exactly 8: empty payload. */
	struct udp_repr in = {.sport = 1, .dport = 2, .payload_len = 0};
	udp_emit(buf, UDP_HDR_LEN, &in, SRC, DST, true);
	assert_ok(udp_parse(buf, sizeof(buf), SRC, DST, true, &r));
	assert_int_equal(r.payload_len, 0);
}

static void test_udp_bad_checksum(void **state)
{
	(void)state;
	uint8_t buf[UDP_LEN];
	struct udp_repr r;

	for (size_t i = 0; i < UDP_LEN; i++) {
		if (i == 4 || i == 5)
			continue; /* the length field: UDP_BAD_LEN or a shorter sum */
		memcpy(buf, golden_udp + UDP_OFF, UDP_LEN);
		buf[i] ^= 0x04;
		assert_drop(udp_parse(buf, sizeof(buf), SRC, DST, true, &r),
			    LUNAR_DROP_UDP_BAD_CHECKSUM);
		assert_ok(udp_parse(buf, sizeof(buf), SRC, DST, false, &r));
	}
	/* The pseudo-header binds the datagram to its addresses. */
	assert_drop(udp_parse(golden_udp + UDP_OFF, UDP_LEN, SRC, DST + 1, true, &r),
		    LUNAR_DROP_UDP_BAD_CHECKSUM);
	assert_drop(udp_parse(golden_udp + UDP_OFF, UDP_LEN, DST, SRC + 256, true, &r),
		    LUNAR_DROP_UDP_BAD_CHECKSUM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_udp_golden),
	    cmocka_unit_test(test_udp_no_checksum),
	    cmocka_unit_test(test_udp_roundtrip),
	    cmocka_unit_test(test_udp_zero_sum_sent_as_ffff),
	    cmocka_unit_test(test_udp_fill_csum_later),
	    cmocka_unit_test(test_udp_emit_limits),
	    cmocka_unit_test(test_udp_short),
	    cmocka_unit_test(test_udp_bad_len),
	    cmocka_unit_test(test_udp_bad_checksum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
