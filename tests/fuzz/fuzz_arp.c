/*
 * fuzz_arp.c - libFuzzer target for arp_parse(). Input: flags byte, ARP
 * packet. On success the checks passed imply every one of the 28 bytes,
 * so arp_emit() of the repr must reproduce them exactly and re-parse.
 */
#include "fuzz_common.h"
#include "wire/arp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in;
	struct arp_repr r, back;
	uint8_t pkt[ARP_PKT_LEN];
	enum lunar_drop why;

	if (!fuzz_input_init(&in, data, size, false))
		return 0;
	why = arp_parse(in.pkt, in.len, &r);
	FUZZ_CHECK((why == LUNAR_DROP_ARP_SHORT) == (in.len < ARP_PKT_LEN));
	if (why == LUNAR_DROP_NONE) {
		FUZZ_CHECK(r.op == RTE_ARP_OP_REQUEST || r.op == RTE_ARP_OP_REPLY);
		FUZZ_CHECK(!rte_is_multicast_ether_addr(&r.sha) && !rte_is_zero_ether_addr(&r.sha));
		FUZZ_CHECK(arp_emit(pkt, sizeof(pkt), &r) == ARP_PKT_LEN);
		FUZZ_CHECK(memcmp(pkt, in.pkt, ARP_PKT_LEN) == 0);
		FUZZ_CHECK_OK(arp_parse(pkt, sizeof(pkt), &back));
		FUZZ_CHECK(back.op == r.op && back.spa == r.spa && back.tpa == r.tpa);
		FUZZ_CHECK(rte_is_same_ether_addr(&back.sha, &r.sha));
		FUZZ_CHECK(rte_is_same_ether_addr(&back.tha, &r.tha));
	}
	fuzz_input_free(&in);
	return 0;
}
