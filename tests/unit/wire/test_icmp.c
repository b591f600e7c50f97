/* test_icmp.c - unit tests for wire/icmp: golden echo, in-place reply, short, checksum. */
#include <string.h>

#include "wire_test.h"
#include "golden.h"
#include "wire/icmp.h"

/* The golden echo request has a 20-byte IPv4 header. */
#define ICMP_OFF (GOLDEN_L3 + 20)
#define ICMP_LEN (sizeof(golden_icmp_echo) - ICMP_OFF)

static const char ping_data[] = "lunar-ping-0123456789";

static void test_icmp_golden(void **state)
{
	(void)state;
	const uint8_t *m = golden_icmp_echo + ICMP_OFF;
	struct icmp_repr r;
	uint8_t buf[64];

	assert_ok(icmp_parse(m, ICMP_LEN, &r));
	assert_int_equal(r.type, RTE_IP_ICMP_ECHO_REQUEST);
	assert_int_equal(r.code, 0);
	assert_int_equal(r.id, 0xbeef);
	assert_int_equal(r.seq, 7);
	assert_ptr_equal(r.data, m + ICMP_HDR_LEN);
	assert_int_equal(r.data_len, 21);
	assert_memory_equal(r.data, ping_data, 21);
	/* Our emitter (odd-length checksum included) produces scapy's bytes. */
	assert_int_equal(icmp_emit(buf, sizeof(buf), &r), ICMP_LEN);
	assert_memory_equal(buf, m, ICMP_LEN);
}

/* The net layer turns a request into a reply in place: data already at buf + 8. */
static void test_icmp_reply_in_place(void **state)
{
	(void)state;
	uint8_t buf[ICMP_LEN];
	struct icmp_repr r, back;

	memcpy(buf, golden_icmp_echo + ICMP_OFF, ICMP_LEN);
	assert_ok(icmp_parse(buf, sizeof(buf), &r));
	r.type = RTE_IP_ICMP_ECHO_REPLY;
	assert_int_equal(icmp_emit(buf, sizeof(buf), &r), ICMP_LEN);
	assert_ok(icmp_parse(buf, sizeof(buf), &back));
	assert_int_equal(back.type, RTE_IP_ICMP_ECHO_REPLY);
	assert_int_equal(back.id, 0xbeef);
	assert_int_equal(back.seq, 7);
	assert_int_equal(back.data_len, 21);
	assert_memory_equal(back.data, ping_data, 21);
}

static void test_icmp_roundtrip(void **state)
{
	(void)state;
	static const size_t lens[] = {0, 1, 2, 7, 56, 1472};
	static uint8_t data[1472], buf[1 + ICMP_HDR_LEN + 1472];

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		struct icmp_repr in = {.type = RTE_IP_ICMP_ECHO_REPLY,
				       .code = 0,
				       .id = (uint16_t)i,
				       .seq = 0xffff,
				       .data = data,
				       .data_len = lens[i]};
		struct icmp_repr r;
		uint8_t *p = buf + 1; /* odd address on purpose */

		assert_int_equal(icmp_emit(p, ICMP_HDR_LEN + lens[i], &in), ICMP_HDR_LEN + lens[i]);
		assert_ok(icmp_parse(p, ICMP_HDR_LEN + lens[i], &r));
		assert_int_equal(r.type, in.type);
		assert_int_equal(r.code, in.code);
		assert_int_equal(r.id, in.id);
		assert_int_equal(r.seq, in.seq);
		assert_int_equal(r.data_len, lens[i]);
		assert_memory_equal(r.data, data, lens[i]);
	}
}

/* data == NULL: the caller already wrote the data; other types work too. */
static void test_icmp_emit_null_data(void **state)
{
	(void)state;
	uint8_t buf[ICMP_HDR_LEN + 28];
	struct icmp_repr in = {
	    .type = 3, .code = 3, .id = 0, .seq = 0, .data = NULL, .data_len = 28};
	struct icmp_repr r;

	memset(buf + ICMP_HDR_LEN, 0x45, 28);
	assert_int_equal(icmp_emit(buf, sizeof(buf), &in), sizeof(buf));
	assert_ok(icmp_parse(buf, sizeof(buf), &r));
	assert_int_equal(r.type, 3);
	assert_int_equal(r.code, 3);
	assert_int_equal(r.data[27], 0x45);
}

static void test_icmp_emit_cap(void **state)
{
	(void)state;
	uint8_t buf[ICMP_HDR_LEN + 4];
	struct icmp_repr in = {.type = 8, .data = (const uint8_t *)"abcd", .data_len = 4};

	assert_int_equal(icmp_emit(buf, ICMP_HDR_LEN - 1, &in), 0);
	assert_int_equal(icmp_emit(buf, ICMP_HDR_LEN + 3, &in), 0);
	assert_int_equal(icmp_emit(buf, ICMP_HDR_LEN + 4, &in), ICMP_HDR_LEN + 4);
}

static void test_icmp_short(void **state)
{
	(void)state;
	struct icmp_repr r;

	for (size_t len = 0; len < ICMP_HDR_LEN; len++)
		assert_drop(icmp_parse(golden_icmp_echo + ICMP_OFF, len, &r),
			    LUNAR_DROP_ICMP_SHORT);
}

/* The checksum covers every byte of the message, header and data. */
static void test_icmp_bad_checksum(void **state)
{
	(void)state;
	uint8_t buf[ICMP_LEN];
	struct icmp_repr r;

	for (size_t i = 0; i < ICMP_LEN; i++) {
		memcpy(buf, golden_icmp_echo + ICMP_OFF, ICMP_LEN);
		buf[i] ^= 0x10;
		assert_drop(icmp_parse(buf, sizeof(buf), &r), LUNAR_DROP_ICMP_BAD_CHECKSUM);
	}
	/* A message cut short (e.g. a wrong IP total length) fails the checksum too. */
	assert_drop(icmp_parse(golden_icmp_echo + ICMP_OFF, ICMP_LEN - 1, &r),
		    LUNAR_DROP_ICMP_BAD_CHECKSUM);
	/* An all-zero message has no valid checksum of 0. */
	memset(buf, 0, ICMP_HDR_LEN);
	assert_drop(icmp_parse(buf, ICMP_HDR_LEN, &r), LUNAR_DROP_ICMP_BAD_CHECKSUM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_icmp_golden),	      cmocka_unit_test(test_icmp_reply_in_place),
	    cmocka_unit_test(test_icmp_roundtrip),    cmocka_unit_test(test_icmp_emit_null_data),
	    cmocka_unit_test(test_icmp_emit_cap),     cmocka_unit_test(test_icmp_short),
	    cmocka_unit_test(test_icmp_bad_checksum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
