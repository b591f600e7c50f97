/*
 * fuzz_icmp.c - libFuzzer target for icmp_parse(). Input: flags byte
 * (FUZZ_F_FIXUP makes the checksum valid), ICMP message. On success: data
 * inside the input; icmp_emit() of the repr into a fresh buffer re-parses
 * to the same fields and data.
 */
#include "fuzz_common.h"
#include "wire/icmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in;
	struct icmp_repr r, back;
	enum lunar_drop why;

	if (!fuzz_input_init(&in, data, size, false))
		return 0;
	if (in.flags & FUZZ_F_FIXUP)
		fuzz_fix_icmp(in.pkt, in.len);
	why = icmp_parse(in.pkt, in.len, &r);
	FUZZ_CHECK((why == LUNAR_DROP_ICMP_SHORT) == (in.len < ICMP_HDR_LEN));
	if (in.flags & FUZZ_F_FIXUP)
		FUZZ_CHECK(why != LUNAR_DROP_ICMP_BAD_CHECKSUM);
	if (why == LUNAR_DROP_NONE) {
		size_t n = ICMP_HDR_LEN + r.data_len;
		uint8_t *buf = malloc(n);

		FUZZ_CHECK(buf != NULL);
		FUZZ_CHECK(r.data == in.pkt + ICMP_HDR_LEN && r.data_len == in.len - ICMP_HDR_LEN);
		FUZZ_CHECK(fuzz_inside(in.pkt, in.len, r.data, r.data_len));
		FUZZ_CHECK(icmp_emit(buf, n, &r) == n);
		FUZZ_CHECK_OK(icmp_parse(buf, n, &back));
		FUZZ_CHECK(back.type == r.type && back.code == r.code);
		FUZZ_CHECK(back.id == r.id && back.seq == r.seq && back.data_len == r.data_len);
		FUZZ_CHECK(memcmp(back.data, r.data, r.data_len) == 0);
		/* In place, as an echo reply is built: still valid. */
		r.type = RTE_IP_ICMP_ECHO_REPLY;
		FUZZ_CHECK(icmp_emit(in.pkt, in.len, &r) == in.len);
		FUZZ_CHECK_OK(icmp_parse(in.pkt, in.len, &back));
		FUZZ_CHECK(back.type == RTE_IP_ICMP_ECHO_REPLY && back.data_len == r.data_len);
		free(buf);
	}
	fuzz_input_free(&in);
	return 0;
}
