/*
 * test_icmp.c - unit tests for wire/icmp: golden echo, in-place reply,
 * short, checksum; the quote of error messages (RFC 792, RFC 1191 4).
 */
#include <string.h>

#include "wire_test.h"
#include "golden.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"

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

/* ---- error messages: the quoted datagram (RFC 792) ---- */

/*
 * An error message of @type/@code (next-hop MTU @mtu) quoting a TCP
 * segment 10.0.0.1:61440 -> 10.0.0.2:80 with sequence number 0x01020304,
 * whose IPv4 header has @ihl words; @l4 bytes of its TCP header are quoted.
 * @return the message's length.
 */
static size_t mk_error(uint8_t *buf, uint8_t type, uint8_t code, uint16_t mtu, unsigned ihl,
		       size_t l4)
{
	uint8_t *q = buf + ICMP_HDR_LEN;
	size_t hlen = ihl * 4;
	static const uint8_t tcp[20] = {0xf0, 0x00, 0x00, 80, 1, 2, 3, 4, 0, 0, 0, 9, 0x50, 0x10};

	memset(q, 0, hlen);
	q[0] = (uint8_t)(0x40 | ihl);
	q[2] = 0x05; /* total length 1500 */
	q[3] = 0xdc;
	q[6] = 0x40; /* DF */
	q[8] = 64;
	q[9] = IPPROTO_TCP;
	q[12] = 10, q[13] = 0, q[14] = 0, q[15] = 1;
	q[16] = 10, q[17] = 0, q[18] = 0, q[19] = 2;
	for (size_t i = 20; i < hlen; i++)
		q[i] = IPV4_OPT_TYPE_NOP;
	memcpy(q + hlen, tcp, l4);
	return icmp_emit(
	    buf, ICMP_HDR_LEN + hlen + l4,
	    &(struct icmp_repr){.type = type, .code = code, .seq = mtu, .data_len = hlen + l4});
}

/* After a test changed a byte of @buf's first @n: its checksum made right again. */
static size_t fix_csum(uint8_t *buf, size_t n)
{
	return icmp_emit(buf, n,
			 &(struct icmp_repr){.type = buf[0],
					     .code = buf[1],
					     .seq = (uint16_t)(buf[6] << 8 | buf[7]),
					     .data_len = n - ICMP_HDR_LEN});
}

static void parse_quote(const uint8_t *buf, size_t len, struct icmp_quote *q, enum lunar_drop want)
{
	struct icmp_repr r;

	assert_ok(icmp_parse(buf, len, &r));
	assert_true(icmp_is_error(r.type));
	assert_drop(icmp_error_parse(&r, q), want);
}

/* RFC 1191 4: fragmentation needed carries the next-hop MTU in the low 16 bits of word 2. */
static void test_icmp_quote_frag_needed(void **state)
{
	(void)state;
	uint8_t buf[128];
	size_t n = mk_error(buf, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 1280, 5, 8);
	struct icmp_quote q;

	parse_quote(buf, n, &q, LUNAR_DROP_NONE);
	assert_int_equal(q.type, 3);
	assert_int_equal(q.code, 4);
	assert_int_equal(q.mtu, 1280);
	assert_int_equal(q.src, IP4(10, 0, 0, 1));
	assert_int_equal(q.dst, IP4(10, 0, 0, 2));
	assert_int_equal(q.proto, IPPROTO_TCP);
	assert_int_equal(q.total_len, 1500);
	assert_int_equal(q.sport, 61440);
	assert_int_equal(q.dport, 80);
	assert_int_equal(q.seq, 0x01020304);
	assert_ptr_equal(q.l4, buf + ICMP_HDR_LEN + 20);
	assert_int_equal(q.l4_len, 8);
}

/* Port unreachable, time exceeded, parameter problem: no MTU, whatever word 2 holds. */
static void test_icmp_quote_other_errors(void **state)
{
	(void)state;
	static const uint8_t types[][2] = {{3, 3}, {3, 13}, {11, 0}, {12, 0}};
	uint8_t buf[128];
	struct icmp_quote q;

	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		size_t n = mk_error(buf, types[i][0], types[i][1], 1280, 5, 20);

		parse_quote(buf, n, &q, LUNAR_DROP_NONE);
		assert_int_equal(q.type, types[i][0]);
		assert_int_equal(q.code, types[i][1]);
		assert_int_equal(q.mtu, 0);
		assert_int_equal(q.seq, 0x01020304);
		assert_int_equal(q.l4_len, 20); /* more than 8 quoted (RFC 1812 4.3.2.3) */
	}
	assert_false(icmp_is_error(RTE_IP_ICMP_ECHO_REPLY));
	assert_false(icmp_is_error(ICMP_TYPE_SOURCE_QUENCH));
	assert_false(icmp_is_error(5)); /* redirect */
}

/* A quoted header with options: the transport header starts after them. */
static void test_icmp_quote_ip_options(void **state)
{
	(void)state;
	uint8_t buf[128];
	size_t n = mk_error(buf, 3, 4, 1400, 15, 8);
	struct icmp_quote q;

	parse_quote(buf, n, &q, LUNAR_DROP_NONE);
	assert_ptr_equal(q.l4, buf + ICMP_HDR_LEN + 60);
	assert_int_equal(q.l4_len, 8); /* what follows the 60-byte header, not the 20-byte one */
	assert_int_equal(q.sport, 61440);
	assert_int_equal(q.seq, 0x01020304);
}

/* RFC 792: an IPv4 header and 64 bits of data; anything shorter is dropped. */
static void test_icmp_quote_short(void **state)
{
	(void)state;
	uint8_t buf[128];
	struct icmp_quote q;

	for (size_t l4 = 0; l4 < ICMP_QUOTE_L4_LEN; l4++) {
		size_t n = mk_error(buf, 3, 3, 0, 5, l4);

		parse_quote(buf, n, &q, LUNAR_DROP_ICMP_QUOTE_SHORT);
		n = mk_error(buf, 3, 3, 0, 6, l4); /* an option word, then too little */
		parse_quote(buf, n, &q, LUNAR_DROP_ICMP_QUOTE_SHORT);
	}
	/* Not even a whole IPv4 header and 8 bytes: cut anywhere. */
	for (size_t len = 0; len < IPV4_HDR_LEN + ICMP_QUOTE_L4_LEN; len++) {
		mk_error(buf, 11, 0, 0, 5, 8);
		parse_quote(buf, fix_csum(buf, ICMP_HDR_LEN + len), &q,
			    LUNAR_DROP_ICMP_QUOTE_SHORT);
	}
	/* A 60-byte header claimed, 28 bytes quoted: the IHL runs past the quote. */
	mk_error(buf, 3, 3, 0, 15, 8);
	parse_quote(buf, fix_csum(buf, ICMP_HDR_LEN + 28), &q, LUNAR_DROP_ICMP_QUOTE_SHORT);
}

/* Version 6, IHL below 5, a non-first fragment: no transport header to read. */
static void test_icmp_quote_bad_header(void **state)
{
	(void)state;
	uint8_t buf[128];
	struct icmp_quote q;
	size_t n;

	for (unsigned ihl = 0; ihl < 5; ihl++) {
		n = mk_error(buf, 3, 3, 0, 5, 8);
		buf[ICMP_HDR_LEN] = (uint8_t)(0x40 | ihl);
		parse_quote(buf, fix_csum(buf, n), &q, LUNAR_DROP_ICMP_QUOTE_BAD_HDR);
	}
	n = mk_error(buf, 3, 3, 0, 5, 8);
	buf[ICMP_HDR_LEN] = 0x65;
	parse_quote(buf, fix_csum(buf, n), &q, LUNAR_DROP_ICMP_QUOTE_BAD_HDR);
	n = mk_error(buf, 3, 3, 0, 5, 8);
	buf[ICMP_HDR_LEN + 7] = 1; /* fragment offset 8 bytes */
	parse_quote(buf, fix_csum(buf, n), &q, LUNAR_DROP_ICMP_QUOTE_BAD_HDR);
	/* More-fragments alone is a first fragment: its ports are there. */
	n = mk_error(buf, 3, 3, 0, 5, 8);
	buf[ICMP_HDR_LEN + 6] = 0x20;
	parse_quote(buf, fix_csum(buf, n), &q, LUNAR_DROP_NONE);
	/*
	 * RFC 791 3.1: the offset is 13 bits, 5 of them in byte 6: DF with
	 * offset 256 (2048 bytes in) is no first fragment either.
	 */
	n = mk_error(buf, 3, 3, 0, 5, 8);
	buf[ICMP_HDR_LEN + 6] = 0x41;
	parse_quote(buf, fix_csum(buf, n), &q, LUNAR_DROP_ICMP_QUOTE_BAD_HDR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_icmp_golden),
	    cmocka_unit_test(test_icmp_reply_in_place),
	    cmocka_unit_test(test_icmp_roundtrip),
	    cmocka_unit_test(test_icmp_emit_null_data),
	    cmocka_unit_test(test_icmp_emit_cap),
	    cmocka_unit_test(test_icmp_short),
	    cmocka_unit_test(test_icmp_bad_checksum),
	    cmocka_unit_test(test_icmp_quote_frag_needed),
	    cmocka_unit_test(test_icmp_quote_other_errors),
	    cmocka_unit_test(test_icmp_quote_ip_options),
	    cmocka_unit_test(test_icmp_quote_short),
	    cmocka_unit_test(test_icmp_quote_bad_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
