/*
 * fuzz_udp.c - libFuzzer target for udp_parse(). Input: flags byte
 * (FUZZ_F_*), IPv4 source and destination (8 bytes, network order), UDP
 * datagram. On success: payload inside the input and consistent with the
 * length field; udp_emit() of the repr re-parses, verified, to the same.
 */
#include "fuzz_common.h"
#include "wire/udp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in;
	struct udp_repr r, back;
	bool verify;
	enum lunar_drop why;

	if (!fuzz_input_init(&in, data, size, true))
		return 0;
	verify = in.flags & FUZZ_F_VERIFY;
	if (in.flags & FUZZ_F_FIXUP)
		fuzz_fix_udp(in.pkt, in.len, in.src, in.dst);
	why = udp_parse(in.pkt, in.len, in.src, in.dst, verify, &r);
	FUZZ_CHECK((why == LUNAR_DROP_UDP_SHORT) == (in.len < UDP_HDR_LEN));
	if (why == LUNAR_DROP_NONE) {
		size_t n = UDP_HDR_LEN + r.payload_len;
		uint8_t *buf = malloc(n);

		FUZZ_CHECK(buf != NULL);
		FUZZ_CHECK(r.payload == in.pkt + UDP_HDR_LEN);
		FUZZ_CHECK(fuzz_inside(in.pkt, in.len, r.payload, r.payload_len));
		FUZZ_CHECK(((size_t)in.pkt[4] << 8 | in.pkt[5]) == n);
		memcpy(buf + UDP_HDR_LEN, r.payload, r.payload_len);
		FUZZ_CHECK(udp_emit(buf, n, &r, in.src, in.dst, true) == UDP_HDR_LEN);
		FUZZ_CHECK(memcmp(buf, in.pkt, 6) == 0);
		FUZZ_CHECK(buf[6] != 0 || buf[7] != 0); /* computed 0 goes out as 0xffff */
		FUZZ_CHECK_OK(udp_parse(buf, n, in.src, in.dst, true, &back));
		FUZZ_CHECK(back.sport == r.sport && back.dport == r.dport);
		FUZZ_CHECK(back.payload_len == r.payload_len);
		free(buf);
	}
	fuzz_input_free(&in);
	return 0;
}
