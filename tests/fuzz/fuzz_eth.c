/*
 * fuzz_eth.c - libFuzzer target for eth_parse(). Input: flags byte, frame.
 * On success: payload inside the input, and eth_emit() of the repr gives
 * back the same 14 header bytes (every header bit is in the repr).
 */
#include "fuzz_common.h"
#include "wire/eth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in;
	struct eth_repr r, back;
	uint8_t hdr[ETH_HDR_LEN];
	enum lunar_drop why;

	if (!fuzz_input_init(&in, data, size, false))
		return 0;
	why = eth_parse(in.pkt, in.len, &r);
	FUZZ_CHECK(why == LUNAR_DROP_NONE || why == LUNAR_DROP_ETH_SHORT ||
		   why == LUNAR_DROP_ETH_VLAN);
	FUZZ_CHECK((why == LUNAR_DROP_ETH_SHORT) == (in.len < ETH_HDR_LEN));
	if (why == LUNAR_DROP_NONE) {
		FUZZ_CHECK(r.payload == in.pkt + ETH_HDR_LEN);
		FUZZ_CHECK(r.payload_len == in.len - ETH_HDR_LEN);
		FUZZ_CHECK(fuzz_inside(in.pkt, in.len, r.payload, r.payload_len));
		FUZZ_CHECK(eth_emit(hdr, sizeof(hdr), &r.dst, &r.src, r.ethertype) == ETH_HDR_LEN);
		FUZZ_CHECK(memcmp(hdr, in.pkt, ETH_HDR_LEN) == 0);
		FUZZ_CHECK_OK(eth_parse(hdr, sizeof(hdr), &back));
		FUZZ_CHECK(back.ethertype == r.ethertype && back.payload_len == 0);
	}
	fuzz_input_free(&in);
	return 0;
}
