/*
 * fuzz_icmp.c - libFuzzer target for icmp_parse(). Input: flags byte
 * (FUZZ_F_FIXUP makes the checksum valid), ICMP message. On success: data
 * inside the input; icmp_emit() of the repr into a fresh buffer re-parses
 * to the same fields and data. An error message's quote
 * (icmp_error_parse()) lies inside the input, holds at least 8 transport
 * bytes, and its fields are the bytes they name.
 */
#include "fuzz_common.h"
#include "wire/icmp.h"

static void check_quote(const struct icmp_repr *r, const uint8_t *pkt, size_t len)
{
	struct icmp_quote q;
	enum lunar_drop why = icmp_error_parse(r, &q);

	FUZZ_CHECK(why == LUNAR_DROP_NONE || why == LUNAR_DROP_ICMP_QUOTE_SHORT ||
		   why == LUNAR_DROP_ICMP_QUOTE_BAD_HDR);
	if (r->data_len < 28)
		FUZZ_CHECK(why == LUNAR_DROP_ICMP_QUOTE_SHORT);
	if (why != LUNAR_DROP_NONE)
		return;
	FUZZ_CHECK(q.type == r->type && q.code == r->code);
	FUZZ_CHECK(q.l4_len >= ICMP_QUOTE_L4_LEN);
	FUZZ_CHECK(fuzz_inside(pkt, len, q.l4, q.l4_len));
	FUZZ_CHECK(q.l4 >= r->data + 20 && q.l4 + q.l4_len == r->data + r->data_len);
	FUZZ_CHECK(q.l4 - r->data == (r->data[0] & 0x0f) * 4);
	FUZZ_CHECK(q.sport == (q.l4[0] << 8 | q.l4[1]) && q.dport == (q.l4[2] << 8 | q.l4[3]));
	FUZZ_CHECK(q.proto == r->data[9]);
	FUZZ_CHECK(q.mtu == (r->type == 3 && r->code == 4 ? r->seq : 0));
}

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
	if (why == LUNAR_DROP_NONE && icmp_is_error(r.type))
		check_quote(&r, in.pkt, in.len);
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
