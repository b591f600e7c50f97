/*
 * fuzz_ipv4.c - libFuzzer target for ipv4_parse(). Input: flags byte
 * (FUZZ_F_*), IPv4 packet. On success: header and payload inside the
 * input and consistent with total length; ipv4_emit() of the repr (no
 * options) re-parses, with verification, to the same fields.
 */
#include "fuzz_common.h"
#include "wire/ipv4.h"

static void check_reemit(const struct fuzz_input *in, const struct ipv4_repr *r)
{
	size_t n = IPV4_HDR_LEN + r->payload_len;
	uint8_t *buf = malloc(n);
	struct ipv4_repr back;

	FUZZ_CHECK(buf != NULL);
	FUZZ_CHECK(ipv4_emit(buf, n, r, true) == IPV4_HDR_LEN);
	memcpy(buf + IPV4_HDR_LEN, r->payload, r->payload_len);
	FUZZ_CHECK_OK(ipv4_parse(buf, n, true, &back));
	FUZZ_CHECK(back.src == r->src && back.dst == r->dst && back.proto == r->proto);
	FUZZ_CHECK(back.ttl == r->ttl && back.tos == r->tos && back.id == r->id);
	FUZZ_CHECK(back.df == r->df && back.payload_len == r->payload_len);
	FUZZ_CHECK(back.hdr_len == IPV4_HDR_LEN && back.opt_flags == 0);
	FUZZ_CHECK(memcmp(back.payload, r->payload, r->payload_len) == 0);
	/* Without options, the header is ours byte for byte, except the checksum
	 * (0x0000 and 0xffff are both valid) and the reserved flag bit. */
	if (r->hdr_len == IPV4_HDR_LEN) {
		FUZZ_CHECK(memcmp(buf, in->pkt, 6) == 0);
		FUZZ_CHECK((buf[6] & 0x7f) == (in->pkt[6] & 0x7f) && buf[7] == in->pkt[7]);
		FUZZ_CHECK(memcmp(buf + 8, in->pkt + 8, 2) == 0);
		FUZZ_CHECK(memcmp(buf + 12, in->pkt + 12, 8) == 0);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in;
	struct ipv4_repr r;
	bool verify;
	enum lunar_drop why;

	if (!fuzz_input_init(&in, data, size, false))
		return 0;
	verify = in.flags & FUZZ_F_VERIFY;
	if (in.flags & FUZZ_F_FIXUP)
		fuzz_fix_ipv4(in.pkt, in.len);
	why = ipv4_parse(in.pkt, in.len, verify, &r);
	FUZZ_CHECK((why == LUNAR_DROP_IP_SHORT) == (in.len < IPV4_HDR_LEN));
	if (in.flags & FUZZ_F_FIXUP)
		FUZZ_CHECK(why != LUNAR_DROP_IP_BAD_CHECKSUM);
	if (why == LUNAR_DROP_NONE) {
		FUZZ_CHECK(r.hdr_len >= IPV4_HDR_LEN && r.hdr_len <= IPV4_HDR_MAX_LEN);
		FUZZ_CHECK(r.hdr_len % 4 == 0);
		FUZZ_CHECK(r.hdr_len <= r.total_len && r.total_len <= in.len);
		FUZZ_CHECK(r.payload == in.pkt + r.hdr_len);
		FUZZ_CHECK(r.payload_len == (size_t)(r.total_len - r.hdr_len));
		FUZZ_CHECK(fuzz_inside(in.pkt, in.len, r.payload, r.payload_len));
		FUZZ_CHECK((r.opt_flags == 0) || r.hdr_len > IPV4_HDR_LEN);
		/* Verification only ever removes packets. */
		if (verify) {
			struct ipv4_repr nv;

			FUZZ_CHECK_OK(ipv4_parse(in.pkt, in.len, false, &nv));
		}
		check_reemit(&in, &r);
	}
	fuzz_input_free(&in);
	return 0;
}
