/* test_arp.c - unit tests for wire/arp: golden packets, round trip, every rejection. */
#include <string.h>

#include "wire_test.h"
#include "golden.h"
#include "wire/arp.h"

#define ARP_OFF GOLDEN_L3

static void assert_arp_equal(const struct arp_repr *a, const struct arp_repr *b)
{
	assert_int_equal(a->op, b->op);
	assert_mac_equal(&a->sha, &b->sha);
	assert_mac_equal(&a->tha, &b->tha);
	assert_int_equal(a->spa, b->spa);
	assert_int_equal(a->tpa, b->tpa);
}

static void test_arp_golden_request(void **state)
{
	(void)state;
	static const struct rte_ether_addr zero = {{0}};
	struct arp_repr r;

	/* Parse with the Ethernet padding still attached: it must be ignored. */
	assert_ok(
	    arp_parse(golden_arp_request + ARP_OFF, sizeof(golden_arp_request) - ARP_OFF, &r));
	assert_int_equal(r.op, RTE_ARP_OP_REQUEST);
	assert_mac_equal(&r.sha, &mac_a);
	assert_mac_equal(&r.tha, &zero);
	assert_int_equal(r.spa, IP4(10, 0, 0, 1));
	assert_int_equal(r.tpa, IP4(10, 0, 0, 2));
}

static void test_arp_golden_reply_emit(void **state)
{
	(void)state;
	struct arp_repr r;
	struct arp_repr want = {
	    .op = RTE_ARP_OP_REPLY,
	    .sha = mac_b,
	    .tha = mac_a,
	    .spa = IP4(10, 0, 0, 2),
	    .tpa = IP4(10, 0, 0, 1),
	};
	uint8_t buf[ARP_PKT_LEN];

	assert_ok(arp_parse(golden_arp_reply + ARP_OFF, sizeof(golden_arp_reply) - ARP_OFF, &r));
	assert_arp_equal(&r, &want);
	/* Our emitter produces scapy's bytes. */
	assert_int_equal(arp_emit(buf, sizeof(buf), &want), ARP_PKT_LEN);
	assert_memory_equal(buf, golden_arp_reply + ARP_OFF, ARP_PKT_LEN);
}

static void test_arp_roundtrip(void **state)
{
	(void)state;
	struct arp_repr r;
	struct arp_repr in = {
	    .op = RTE_ARP_OP_REQUEST,
	    .sha = mac_a,
	    .tha = {{0}},
	    .spa = 0, /* ARP probe, RFC 5227: a zero sender IP is legal */
	    .tpa = IP4(192, 168, 7, 9),
	};
	uint8_t buf[1 + ARP_PKT_LEN];

	/* Odd address on purpose: rte_arp_hdr is 2-byte aligned, @buf need not be. */
	assert_int_equal(arp_emit(buf + 1, ARP_PKT_LEN, &in), ARP_PKT_LEN);
	assert_ok(arp_parse(buf + 1, ARP_PKT_LEN, &r));
	assert_arp_equal(&r, &in);
	assert_int_equal(arp_emit(buf, ARP_PKT_LEN - 1, &in), 0);
}

static void test_arp_short(void **state)
{
	(void)state;
	struct arp_repr r;

	for (size_t len = 0; len < ARP_PKT_LEN; len++)
		assert_drop(arp_parse(golden_arp_reply + ARP_OFF, len, &r), LUNAR_DROP_ARP_SHORT);
}

static void test_arp_bad_format(void **state)
{
	(void)state;
	/* offset within the ARP packet, value that breaks it */
	static const struct {
		size_t off;
		uint8_t val;
	} bad[] = {
	    {1, 6},    /* htype IEEE 802 (6) instead of Ethernet (1) */
	    {0, 1},    /* htype 0x0101 */
	    {2, 0x86}, /* ptype 0x8600 */
	    {3, 0xdd}, /* ptype 0x08dd */
	    {4, 8},    /* hlen 8 */
	    {4, 0},    /* hlen 0 */
	    {5, 16},   /* plen 16 (IPv6) */
	    {5, 0},    /* plen 0 */
	};
	uint8_t buf[ARP_PKT_LEN];
	struct arp_repr r;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memcpy(buf, golden_arp_reply + ARP_OFF, ARP_PKT_LEN);
		buf[bad[i].off] = bad[i].val;
		assert_drop(arp_parse(buf, sizeof(buf), &r), LUNAR_DROP_ARP_BAD_FORMAT);
	}
}

static void test_arp_bad_op(void **state)
{
	(void)state;
	static const uint16_t ops[] = {0, 3, 4, 8, 9, 0x0101, 0xffff};
	uint8_t buf[ARP_PKT_LEN];
	struct arp_repr r;

	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		memcpy(buf, golden_arp_reply + ARP_OFF, ARP_PKT_LEN);
		buf[6] = (uint8_t)(ops[i] >> 8);
		buf[7] = (uint8_t)ops[i];
		assert_drop(arp_parse(buf, sizeof(buf), &r), LUNAR_DROP_ARP_BAD_OP);
	}
}

static void test_arp_bad_sender(void **state)
{
	(void)state;
	static const uint8_t senders[][RTE_ETHER_ADDR_LEN] = {
	    {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, /* broadcast */
	    {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}, /* IPv4 multicast */
	    {0x33, 0x33, 0x00, 0x00, 0x00, 0x01}, /* IPv6 multicast */
	    {0x03, 0x00, 0x00, 0x00, 0x00, 0x01}, /* locally administered group */
	    {0, 0, 0, 0, 0, 0},			  /* zero */
	};
	uint8_t buf[ARP_PKT_LEN];
	struct arp_repr r;

	for (size_t i = 0; i < ARRAY_SIZE(senders); i++) {
		memcpy(buf, golden_arp_reply + ARP_OFF, ARP_PKT_LEN);
		memcpy(buf + 8, senders[i], RTE_ETHER_ADDR_LEN);
		assert_drop(arp_parse(buf, sizeof(buf), &r), LUNAR_DROP_ARP_BAD_SENDER);
	}
	/* Target hardware address is not checked (zero in requests, RFC 826). */
	memcpy(buf, golden_arp_reply + ARP_OFF, ARP_PKT_LEN);
	memset(buf + 18, 0xff, RTE_ETHER_ADDR_LEN);
	assert_ok(arp_parse(buf, sizeof(buf), &r));
}

/* Checks run in the documented order: format before opcode before sender. */
static void test_arp_check_order(void **state)
{
	(void)state;
	uint8_t buf[ARP_PKT_LEN];
	struct arp_repr r;

	memcpy(buf, golden_arp_reply + ARP_OFF, ARP_PKT_LEN);
	buf[7] = 9;	       /* bad op */
	memset(buf + 8, 0, 6); /* bad sender */
	assert_drop(arp_parse(buf, sizeof(buf), &r), LUNAR_DROP_ARP_BAD_OP);
	buf[4] = 8; /* bad hlen */
	assert_drop(arp_parse(buf, sizeof(buf), &r), LUNAR_DROP_ARP_BAD_FORMAT);
	assert_drop(arp_parse(buf, sizeof(buf) - 1, &r), LUNAR_DROP_ARP_SHORT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_arp_golden_request), cmocka_unit_test(test_arp_golden_reply_emit),
	    cmocka_unit_test(test_arp_roundtrip),      cmocka_unit_test(test_arp_short),
	    cmocka_unit_test(test_arp_bad_format),     cmocka_unit_test(test_arp_bad_op),
	    cmocka_unit_test(test_arp_bad_sender),     cmocka_unit_test(test_arp_check_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
