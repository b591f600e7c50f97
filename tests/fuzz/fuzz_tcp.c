/*
 * fuzz_tcp.c - libFuzzer target for tcp_parse(). Input: flags byte
 * (FUZZ_F_*), IPv4 source and destination (8 bytes, network order), TCP
 * segment. On success: header and payload inside the input, options
 * within their limits; tcp_emit() of the repr and its options re-parses,
 * verified, to exactly the same header fields and options.
 */
#include "fuzz_common.h"
#include "wire/tcp.h"

static void check_opts_equal(const struct tcp_options *a, const struct tcp_options *b)
{
	FUZZ_CHECK(a->has_mss == b->has_mss && (!a->has_mss || a->mss == b->mss));
	FUZZ_CHECK(a->has_wscale == b->has_wscale && (!a->has_wscale || a->wscale == b->wscale));
	FUZZ_CHECK(a->sack_permitted == b->sack_permitted);
	FUZZ_CHECK(a->has_ts == b->has_ts);
	FUZZ_CHECK(!a->has_ts || (a->ts_val == b->ts_val && a->ts_ecr == b->ts_ecr));
	FUZZ_CHECK(a->sack_count == b->sack_count);
	for (unsigned int i = 0; i < a->sack_count; i++)
		FUZZ_CHECK(a->sack[i].left == b->sack[i].left &&
			   a->sack[i].right == b->sack[i].right);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in;
	struct tcp_repr r, back;
	bool verify;
	enum lunar_drop why;

	if (!fuzz_input_init(&in, data, size, true))
		return 0;
	verify = in.flags & FUZZ_F_VERIFY;
	if (in.flags & FUZZ_F_FIXUP)
		fuzz_fix_tcp(in.pkt, in.len, in.src, in.dst);
	why = tcp_parse(in.pkt, in.len, in.src, in.dst, verify, &r);
	FUZZ_CHECK((why == LUNAR_DROP_TCP_SHORT) == (in.len < TCP_HDR_LEN));
	if (why == LUNAR_DROP_NONE) {
		size_t hl = tcp_hdr_len(&r.opts), n = hl + r.payload_len;
		uint8_t *buf = malloc(n);

		FUZZ_CHECK(buf != NULL);
		FUZZ_CHECK(r.hdr_len >= TCP_HDR_LEN && r.hdr_len <= TCP_HDR_MAX_LEN);
		FUZZ_CHECK(r.hdr_len % 4 == 0);
		FUZZ_CHECK(r.payload == in.pkt + r.hdr_len && r.payload_len == in.len - r.hdr_len);
		FUZZ_CHECK(fuzz_inside(in.pkt, in.len, r.payload, r.payload_len));
		FUZZ_CHECK(r.opts.sack_count <= TCP_MAX_SACK_BLOCKS);
		FUZZ_CHECK(!r.opts.has_wscale || r.opts.wscale <= TCP_MAX_WSCALE);
		FUZZ_CHECK(hl <= TCP_HDR_MAX_LEN && hl % 4 == 0);
		memcpy(buf + hl, r.payload, r.payload_len);
		if (r.payload_len <= UINT16_MAX - 20 - hl) {
			FUZZ_CHECK(tcp_emit(buf, n, &r, &r.opts, in.src, in.dst, true) == hl);
			FUZZ_CHECK_OK(tcp_parse(buf, n, in.src, in.dst, true, &back));
			FUZZ_CHECK(back.sport == r.sport && back.dport == r.dport);
			FUZZ_CHECK(back.seq == r.seq && back.ack == r.ack && back.flags == r.flags);
			FUZZ_CHECK(back.window == r.window && back.urg == r.urg);
			FUZZ_CHECK(back.hdr_len == hl && back.payload_len == r.payload_len);
			check_opts_equal(&back.opts, &r.opts);
		} else {
			/* Larger than any IPv4 packet can carry: emit refuses. */
			FUZZ_CHECK(tcp_emit(buf, n, &r, &r.opts, in.src, in.dst, true) == 0);
		}
		free(buf);
	}
	fuzz_input_free(&in);
	return 0;
}
