/* test_eth.c - unit tests for wire/eth: round trip, truncation, VLAN, golden frames. */
#include <string.h>

#include "wire_test.h"
#include "golden.h"
#include "wire/eth.h"

static void test_eth_roundtrip(void **state)
{
	(void)state;
	uint8_t buf[64];
	struct eth_repr r;

	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(eth_emit(buf, sizeof(buf), &mac_b, &mac_a, RTE_ETHER_TYPE_IPV4),
			 ETH_HDR_LEN);
	assert_ok(eth_parse(buf, sizeof(buf), &r));
	assert_mac_equal(&r.dst, &mac_b);
	assert_mac_equal(&r.src, &mac_a);
	assert_int_equal(r.ethertype, RTE_ETHER_TYPE_IPV4);
	assert_ptr_equal(r.payload, buf + ETH_HDR_LEN);
	assert_int_equal(r.payload_len, sizeof(buf) - ETH_HDR_LEN);
	/* Payload bytes were not touched by emit. */
	assert_int_equal(buf[ETH_HDR_LEN], 0xa5);
}

static void test_eth_header_only(void **state)
{
	(void)state;
	uint8_t buf[ETH_HDR_LEN];
	struct eth_repr r;

	assert_int_equal(eth_emit(buf, sizeof(buf), &mac_a, &mac_b, RTE_ETHER_TYPE_ARP),
			 ETH_HDR_LEN);
	assert_ok(eth_parse(buf, sizeof(buf), &r));
	assert_int_equal(r.payload_len, 0);
	assert_int_equal(r.ethertype, RTE_ETHER_TYPE_ARP);
}

static void test_eth_emit_cap(void **state)
{
	(void)state;
	uint8_t buf[ETH_HDR_LEN];

	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(eth_emit(buf, ETH_HDR_LEN - 1, &mac_a, &mac_b, RTE_ETHER_TYPE_IPV4), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0x5a);
}

static void test_eth_short(void **state)
{
	(void)state;
	struct eth_repr r;

	for (size_t len = 0; len < ETH_HDR_LEN; len++)
		assert_drop(eth_parse(golden_icmp_echo, len, &r), LUNAR_DROP_ETH_SHORT);
}

static void test_eth_vlan(void **state)
{
	(void)state;
	static const uint16_t tags[] = {RTE_ETHER_TYPE_VLAN, RTE_ETHER_TYPE_QINQ,
					RTE_ETHER_TYPE_QINQ1};
	uint8_t buf[sizeof(golden_icmp_echo)];
	struct eth_repr r;

	for (size_t i = 0; i < ARRAY_SIZE(tags); i++) {
		memcpy(buf, golden_icmp_echo, sizeof(buf));
		buf[12] = (uint8_t)(tags[i] >> 8);
		buf[13] = (uint8_t)tags[i];
		assert_drop(eth_parse(buf, sizeof(buf), &r), LUNAR_DROP_ETH_VLAN);
	}
}

/* Other EtherTypes (even 802.3 lengths) are reported, not judged: net/ decides. */
static void test_eth_other_types(void **state)
{
	(void)state;
	static const uint16_t types[] = {RTE_ETHER_TYPE_IPV6, 0x0042, 0x88cc};
	uint8_t buf[20] = {0};
	struct eth_repr r;

	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		eth_emit(buf, sizeof(buf), &mac_a, &mac_b, types[i]);
		assert_ok(eth_parse(buf, sizeof(buf), &r));
		assert_int_equal(r.ethertype, types[i]);
	}
}

static void test_eth_golden(void **state)
{
	(void)state;
	static const struct rte_ether_addr bcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
	uint8_t buf[ETH_HDR_LEN];
	struct eth_repr r;

	assert_ok(eth_parse(golden_arp_request, sizeof(golden_arp_request), &r));
	assert_mac_equal(&r.dst, &bcast);
	assert_mac_equal(&r.src, &mac_a);
	assert_int_equal(r.ethertype, RTE_ETHER_TYPE_ARP);
	assert_int_equal(r.payload_len, sizeof(golden_arp_request) - ETH_HDR_LEN);

	assert_ok(eth_parse(golden_tcp_syn, sizeof(golden_tcp_syn), &r));
	assert_mac_equal(&r.dst, &mac_b);
	assert_mac_equal(&r.src, &mac_a);
	assert_int_equal(r.ethertype, RTE_ETHER_TYPE_IPV4);

	/* Our emitter produces scapy's bytes. */
	eth_emit(buf, sizeof(buf), &mac_b, &mac_a, RTE_ETHER_TYPE_IPV4);
	assert_memory_equal(buf, golden_tcp_syn, ETH_HDR_LEN);
}

/* Frames may start at any address; nothing may assume 2-byte alignment. */
static void test_eth_unaligned(void **state)
{
	(void)state;
	uint8_t buf[1 + sizeof(golden_udp)];
	struct eth_repr r;

	memcpy(buf + 1, golden_udp, sizeof(golden_udp));
	assert_ok(eth_parse(buf + 1, sizeof(golden_udp), &r));
	assert_int_equal(r.ethertype, RTE_ETHER_TYPE_IPV4);
	assert_int_equal(eth_emit(buf + 1, sizeof(golden_udp), &mac_a, &mac_b, 0x1234),
			 ETH_HDR_LEN);
	assert_ok(eth_parse(buf + 1, sizeof(golden_udp), &r));
	assert_mac_equal(&r.dst, &mac_a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_eth_roundtrip), cmocka_unit_test(test_eth_header_only),
	    cmocka_unit_test(test_eth_emit_cap),  cmocka_unit_test(test_eth_short),
	    cmocka_unit_test(test_eth_vlan),	  cmocka_unit_test(test_eth_other_types),
	    cmocka_unit_test(test_eth_golden),	  cmocka_unit_test(test_eth_unaligned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
