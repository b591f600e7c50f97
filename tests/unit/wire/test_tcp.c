/* test_tcp.c - unit tests for wire/tcp: golden segments, option layouts, every drop reason. */
#include <string.h>

#include "wire_test.h"
#include "golden.h"
#include "wire/checksum.h"
#include "wire/tcp.h"

#define TCP_OFF	 (GOLDEN_L3 + 20) /* golden TCP frames have a 20-byte IPv4 header */
#define SYN_LEN	 (sizeof(golden_tcp_syn) - TCP_OFF)
#define SACK_LEN (sizeof(golden_tcp_sack) - TCP_OFF)
#define A	 IP4(10, 0, 0, 1)
#define B	 IP4(10, 0, 0, 2)

static void assert_opts_equal(const struct tcp_options *a, const struct tcp_options *b)
{
	assert_int_equal(a->has_mss, b->has_mss);
	assert_int_equal(a->has_wscale, b->has_wscale);
	assert_int_equal(a->sack_permitted, b->sack_permitted);
	assert_int_equal(a->has_ts, b->has_ts);
	if (a->has_mss)
		assert_int_equal(a->mss, b->mss);
	if (a->has_wscale)
		assert_int_equal(a->wscale, b->wscale);
	if (a->has_ts) {
		assert_int_equal(a->ts_val, b->ts_val);
		assert_int_equal(a->ts_ecr, b->ts_ecr);
	}
	assert_int_equal(a->sack_count, b->sack_count);
	for (unsigned int i = 0; i < a->sack_count; i++) {
		assert_int_equal(a->sack[i].left, b->sack[i].left);
		assert_int_equal(a->sack[i].right, b->sack[i].right);
	}
}

static void assert_tcp_equal(const struct tcp_repr *a, const struct tcp_repr *b)
{
	assert_int_equal(a->sport, b->sport);
	assert_int_equal(a->dport, b->dport);
	assert_int_equal(a->seq, b->seq);
	assert_int_equal(a->ack, b->ack);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->window, b->window);
	assert_int_equal(a->urg, b->urg);
	assert_int_equal(a->payload_len, b->payload_len);
}

/*
 * A segment whose header carries @olen raw option bytes (a multiple of 4)
 * and 3 payload bytes, checksum valid for A -> B; returns its length.
 */
static size_t build_opts(uint8_t *buf, const uint8_t *opt, size_t olen)
{
	struct tcp_repr r = {.sport = 1,
			     .dport = 2,
			     .seq = 3,
			     .ack = 4,
			     .flags = RTE_TCP_ACK_FLAG,
			     .window = 5,
			     .payload_len = 3};
	size_t hlen = TCP_HDR_LEN + olen;

	assert_true(olen % 4 == 0 && olen <= TCP_OPT_MAX_LEN);
	tcp_emit(buf, TCP_HDR_LEN, &r, NULL, A, B, false);
	buf[12] = (uint8_t)(hlen / 4 << 4);
	memcpy(buf + TCP_HDR_LEN, opt, olen);
	memcpy(buf + hlen, "xyz", 3);
	tcp_fill_csum(buf, hlen + 3, A, B);
	return hlen + 3;
}

static void test_tcp_golden_syn(void **state)
{
	(void)state;
	const uint8_t *s = golden_tcp_syn + TCP_OFF;
	struct tcp_repr r;
	struct tcp_repr want = {
	    .sport = 43210,
	    .dport = 80,
	    .seq = 1000,
	    .ack = 0,
	    .flags = RTE_TCP_SYN_FLAG,
	    .window = 64240,
	    .urg = 0,
	    .payload_len = 0,
	    .opts = {.has_mss = true,
		     .mss = 1460,
		     .sack_permitted = true,
		     .has_ts = true,
		     .ts_val = 12345,
		     .ts_ecr = 0,
		     .has_wscale = true,
		     .wscale = 7},
	};
	uint8_t buf[TCP_HDR_MAX_LEN];

	assert_ok(tcp_parse(s, SYN_LEN, A, B, true, &r));
	assert_tcp_equal(&r, &want);
	assert_opts_equal(&r.opts, &want.opts);
	assert_int_equal(r.hdr_len, 40);
	assert_ptr_equal(r.payload, s + 40);
	/* Our NOP-aligned layout is Linux's, so our bytes are scapy's. */
	assert_int_equal(tcp_hdr_len(&want.opts), 40);
	assert_int_equal(tcp_emit(buf, sizeof(buf), &want, &want.opts, A, B, true), 40);
	assert_memory_equal(buf, s, SYN_LEN);
}

static void test_tcp_golden_sack(void **state)
{
	(void)state;
	const uint8_t *s = golden_tcp_sack + TCP_OFF;
	struct tcp_repr r;
	struct tcp_repr want = {
	    .sport = 80,
	    .dport = 43210,
	    .seq = 0x11223344,
	    .ack = 0x55667788,
	    .flags = RTE_TCP_PSH_FLAG | RTE_TCP_ACK_FLAG,
	    .window = 502,
	    .payload_len = 4,
	    .opts = {.has_ts = true,
		     .ts_val = 100,
		     .ts_ecr = 200,
		     .sack_count = 2,
		     .sack = {{3000, 4000}, {5000, 6000}}},
	};
	uint8_t buf[TCP_HDR_MAX_LEN + 4];

	assert_ok(tcp_parse(s, SACK_LEN, B, A, true, &r));
	assert_tcp_equal(&r, &want);
	assert_opts_equal(&r.opts, &want.opts);
	assert_int_equal(r.hdr_len, 52);
	assert_memory_equal(r.payload, "data", 4);
	/* Payload first, then emit with the checksum: scapy's bytes again. */
	memcpy(buf + tcp_hdr_len(&want.opts), "data", 4);
	assert_int_equal(tcp_emit(buf, sizeof(buf), &want, &want.opts, B, A, true), 52);
	assert_memory_equal(buf, s, SACK_LEN);
}

/* Most SACK blocks that fit in 40 option bytes with the other options packed. */
static unsigned int expected_sack(const struct tcp_options *o, unsigned int nsack)
{
	for (;; nsack--) {
		size_t n = (o->has_mss ? 4 : 0) + (o->sack_permitted ? 2 : 0) +
			   (o->has_ts ? 10 : 0) + (o->has_wscale ? 3 : 0) +
			   (nsack ? 2 + 8 * nsack : 0);

		if (n <= TCP_OPT_MAX_LEN)
			return nsack;
	}
}

/* Every option combination survives emit -> parse, aligned or packed. */
static void test_tcp_roundtrip_options(void **state)
{
	(void)state;
	static uint8_t buf[1 + TCP_HDR_MAX_LEN + 100];

	for (unsigned int mask = 0; mask < 16; mask++) {
		for (unsigned int nsack = 0; nsack <= TCP_MAX_SACK_BLOCKS; nsack++) {
			struct tcp_options o = {
			    .has_mss = mask & 1,
			    .mss = 8960,
			    .has_wscale = mask & 2,
			    .wscale = 14,
			    .sack_permitted = mask & 4,
			    .has_ts = mask & 8,
			    .ts_val = 0xdeadbeef,
			    .ts_ecr = 0xfeedface,
			    .sack_count = (uint8_t)nsack,
			};
			struct tcp_repr in = {.sport = 0xffff,
					      .dport = 1,
					      .seq = 0xfffffffe,
					      .ack = 7,
					      .flags = 0xff,
					      .window = 0x8000,
					      .urg = 0x1234,
					      .payload_len = 100};
			struct tcp_repr r;
			uint8_t *p = buf + 1; /* odd address on purpose */
			size_t hlen = tcp_hdr_len(&o);

			for (unsigned int b = 0; b < nsack; b++) {
				o.sack[b].left = 1000 * b + mask;
				o.sack[b].right = 1000 * b + 500;
			}
			assert_true(hlen % 4 == 0 && hlen <= TCP_HDR_MAX_LEN);
			memset(p + hlen, 0x5c, 100);
			assert_int_equal(tcp_emit(p, hlen + 100, &in, &o, A, B, true), hlen);
			assert_ok(tcp_parse(p, hlen + 100, A, B, true, &r));
			assert_tcp_equal(&r, &in);
			assert_int_equal(r.hdr_len, hlen);
			assert_ptr_equal(r.payload, p + hlen);
			/* Trailing SACK blocks are left out only if even packed they do not fit. */
			o.sack_count = (uint8_t)expected_sack(&o, nsack);
			assert_opts_equal(&r.opts, &o);
		}
	}
}

/* SACK alone fits 4 blocks NOP-aligned; with timestamps 3 (RFC 2018 3). */
static void test_tcp_sack_layout(void **state)
{
	(void)state;
	struct tcp_options o = {.sack_count = 4};
	struct tcp_repr in = {.flags = RTE_TCP_ACK_FLAG}, r;
	uint8_t buf[TCP_HDR_MAX_LEN];

	assert_int_equal(tcp_hdr_len(&o), 20 + 36);
	tcp_emit(buf, sizeof(buf), &in, &o, A, B, true);
	assert_int_equal(buf[20], TCP_OPT_NOP);
	assert_int_equal(buf[21], TCP_OPT_NOP);
	assert_int_equal(buf[22], TCP_OPT_SACK);
	assert_int_equal(buf[23], 34);
	o.has_ts = true;
	assert_int_equal(tcp_hdr_len(&o), 20 + 40);
	tcp_emit(buf, sizeof(buf), &in, &o, A, B, true);
	assert_ok(tcp_parse(buf, 60, A, B, true, &r));
	assert_int_equal(r.opts.sack_count, 3);
	/* An out-of-range count is clamped, never read past sack[]. */
	o.has_ts = false;
	o.sack_count = 200;
	assert_int_equal(tcp_hdr_len(&o), 20 + 36);
	assert_int_equal(tcp_hdr_len(NULL), 20);
}

static void test_tcp_emit_limits(void **state)
{
	(void)state;
	struct tcp_options o = {.has_mss = true, .mss = 1460};
	struct tcp_repr in = {.payload_len = 10};
	uint8_t buf[TCP_HDR_LEN + 4 + 10];

	assert_int_equal(tcp_emit(buf, 23, &in, &o, A, B, false), 0);
	assert_int_equal(tcp_emit(buf, 24, &in, &o, A, B, false), 24);
	assert_int_equal(buf[16] | buf[17], 0); /* no checksum without fill_csum */
	/* fill_csum reads the payload, so it must be inside @cap. */
	assert_int_equal(tcp_emit(buf, 33, &in, &o, A, B, true), 0);
	assert_int_equal(tcp_emit(buf, 34, &in, &o, A, B, true), 24);
	/* Must fit an IPv4 packet: 20 + 24 + payload <= 65535. */
	in.payload_len = UINT16_MAX - 20 - 24 + 1;
	assert_int_equal(tcp_emit(buf, 24, &in, &o, A, B, false), 0);
	in.payload_len--;
	assert_int_equal(tcp_emit(buf, 24, &in, &o, A, B, false), 24);
}

static void test_tcp_fill_csum_later(void **state)
{
	(void)state;
	struct tcp_repr in = {.sport = 5, .dport = 6, .flags = RTE_TCP_ACK_FLAG, .payload_len = 5},
			r;
	uint8_t buf[TCP_HDR_LEN + 5];

	assert_int_equal(tcp_emit(buf, TCP_HDR_LEN, &in, NULL, A, B, false), TCP_HDR_LEN);
	memcpy(buf + TCP_HDR_LEN, "hello", 5);
	assert_drop(tcp_parse(buf, sizeof(buf), A, B, true, &r), LUNAR_DROP_TCP_BAD_CHECKSUM);
	tcp_fill_csum(buf, sizeof(buf), A, B);
	assert_ok(tcp_parse(buf, sizeof(buf), A, B, true, &r));
	assert_memory_equal(r.payload, "hello", 5);
}

static void test_tcp_short(void **state)
{
	(void)state;
	struct tcp_repr r;

	for (size_t len = 0; len < TCP_HDR_LEN; len++)
		assert_drop(tcp_parse(golden_tcp_syn + TCP_OFF, len, A, B, true, &r),
			    LUNAR_DROP_TCP_SHORT);
}

static void test_tcp_bad_offset(void **state)
{
	(void)state;
	uint8_t buf[TCP_HDR_MAX_LEN];
	struct tcp_repr r;

	for (uint8_t off = 0; off < 5; off++) {
		memcpy(buf, golden_tcp_syn + TCP_OFF, SYN_LEN);
		buf[12] = (uint8_t)(off << 4);
		assert_drop(tcp_parse(buf, SYN_LEN, A, B, false, &r), LUNAR_DROP_TCP_BAD_OFFSET);
	}
	/* Offset 10 (40 bytes) but only 39 received; offset 15 beyond 40. */
	assert_drop(tcp_parse(golden_tcp_syn + TCP_OFF, 39, A, B, false, &r),
		    LUNAR_DROP_TCP_BAD_OFFSET);
	memcpy(buf, golden_tcp_syn + TCP_OFF, SYN_LEN);
	buf[12] = 0xf0;
	assert_drop(tcp_parse(buf, SYN_LEN, A, B, false, &r), LUNAR_DROP_TCP_BAD_OFFSET);
	/* The 4 reserved bits next to the offset are ignored. */
	buf[12] = 0xaf;
	assert_ok(tcp_parse(buf, SYN_LEN, A, B, false, &r));
}

static void test_tcp_bad_checksum(void **state)
{
	(void)state;
	uint8_t buf[SACK_LEN];
	struct tcp_repr r;

	for (size_t i = 0; i < SACK_LEN; i++) {
		if (i == 12)
			continue; /* data offset: TCP_BAD_OFFSET may come first */
		memcpy(buf, golden_tcp_sack + TCP_OFF, SACK_LEN);
		buf[i] ^= 0x80;
		assert_drop(tcp_parse(buf, sizeof(buf), B, A, true, &r),
			    LUNAR_DROP_TCP_BAD_CHECKSUM);
	}
	/* Wrong pseudo-header (addresses) or a segment cut short. */
	assert_drop(tcp_parse(golden_tcp_sack + TCP_OFF, SACK_LEN, A, A, true, &r),
		    LUNAR_DROP_TCP_BAD_CHECKSUM);
	assert_drop(tcp_parse(golden_tcp_sack + TCP_OFF, SACK_LEN - 1, B, A, true, &r),
		    LUNAR_DROP_TCP_BAD_CHECKSUM);
	/* Not verified when the NIC did it. */
	assert_ok(tcp_parse(golden_tcp_sack + TCP_OFF, SACK_LEN, A, A, false, &r));
}

static void test_tcp_options_ok(void **state)
{
	(void)state;
	uint8_t buf[TCP_HDR_MAX_LEN + 3];
	struct tcp_repr r;
	size_t n;

	/* Unknown kinds with a valid length are skipped (RFC 9293 3.1, MUST-6). */
	static const uint8_t unknown[12] = {30, 4, 0xaa, 0xbb, 254, 2, 2, 4, 0x05, 0xb4, 0, 0};
	n = build_opts(buf, unknown, sizeof(unknown));
	assert_ok(tcp_parse(buf, n, A, B, true, &r));
	assert_true(r.opts.has_mss);
	assert_int_equal(r.opts.mss, 1460);
	assert_int_equal(r.payload_len, 3);
	assert_memory_equal(r.payload, "xyz", 3);

	/* EOL ends the list: what follows is padding, even if it looks like garbage. */
	static const uint8_t eol[8] = {1, 0, 2, 1, 0xff, 0xff, 0xff, 0xff};
	n = build_opts(buf, eol, sizeof(eol));
	assert_ok(tcp_parse(buf, n, A, B, true, &r));
	assert_false(r.opts.has_mss);

	/* RFC 7323 2.3: a shift above 14 is used as 14. */
	static const uint8_t ws15[4] = {3, 3, 15, 0};
	n = build_opts(buf, ws15, sizeof(ws15));
	assert_ok(tcp_parse(buf, n, A, B, true, &r));
	assert_true(r.opts.has_wscale);
	assert_int_equal(r.opts.wscale, 14);
	static const uint8_t ws0[4] = {3, 3, 0, 0};
	n = build_opts(buf, ws0, sizeof(ws0));
	assert_ok(tcp_parse(buf, n, A, B, true, &r));
	assert_int_equal(r.opts.wscale, 0);

	/* A repeated option: the last one wins. */
	static const uint8_t twice[8] = {2, 4, 0, 100, 2, 4, 0, 200};
	n = build_opts(buf, twice, sizeof(twice));
	assert_ok(tcp_parse(buf, n, A, B, true, &r));
	assert_int_equal(r.opts.mss, 200);

	/* Options exactly filling 40 bytes. */
	static const uint8_t full[40] = {2, 4, 0x23, 0x00, 4, 2, 8,  10, 0, 0, 0, 1, 0, 0,
					 0, 2, 3,    3,	   9, 5, 18, 1,	 1, 1, 1, 2, 2, 2,
					 2, 3, 3,    3,	   3, 4, 4,  4,	 4, 1, 1, 1};
	n = build_opts(buf, full, sizeof(full));
	assert_ok(tcp_parse(buf, n, A, B, true, &r));
	assert_int_equal(r.hdr_len, 60);
	assert_int_equal(r.opts.mss, 0x2300);
	assert_true(r.opts.sack_permitted);
	assert_int_equal(r.opts.ts_val, 1);
	assert_int_equal(r.opts.ts_ecr, 2);
	assert_int_equal(r.opts.wscale, 9);
	assert_int_equal(r.opts.sack_count, 2);
	assert_int_equal(r.opts.sack[1].right, 0x04040404);
}

/*
 * NOP, NOP, TS (read at once) gives what the same timestamps in another
 * layout (read by the option loop) give; a bad TS length in that layout
 * is still refused.
 */
static void test_tcp_aligned_timestamps(void **state)
{
	(void)state;
	static const uint32_t vals[][2] = {
	    {0, 0}, {1, 2}, {0x80000000u, 0xffffffffu}, {0x01020304, 0xa0b0c0d0}};
	uint8_t buf[TCP_HDR_MAX_LEN + 3];
	struct tcp_repr fast, loop;

	for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		uint8_t aligned[12] = {1, 1, 8, 10},
			other[12] = {8, 10, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1};

		for (int k = 0; k < 4; k++) {
			aligned[4 + k] = other[2 + k] = (uint8_t)(vals[i][0] >> (24 - 8 * k));
			aligned[8 + k] = other[6 + k] = (uint8_t)(vals[i][1] >> (24 - 8 * k));
		}
		assert_ok(
		    tcp_parse(buf, build_opts(buf, aligned, sizeof(aligned)), A, B, true, &fast));
		assert_ok(tcp_parse(buf, build_opts(buf, other, sizeof(other)), A, B, true, &loop));
		assert_true(fast.opts.has_ts && loop.opts.has_ts);
		assert_int_equal(fast.opts.ts_val, vals[i][0]);
		assert_int_equal(fast.opts.ts_ecr, vals[i][1]);
		assert_int_equal(fast.opts.ts_val, loop.opts.ts_val);
		assert_int_equal(fast.opts.ts_ecr, loop.opts.ts_ecr);
		assert_false(fast.opts.has_mss || fast.opts.has_wscale ||
			     fast.opts.sack_permitted || fast.opts.sack_count);
		assert_int_equal(fast.hdr_len, loop.hdr_len);
	}
	{
		static const uint8_t bad[12] = {1, 1, 8, 9, 0, 0, 0, 1, 0, 0, 0, 2};

		assert_int_equal(
		    tcp_parse(buf, build_opts(buf, bad, sizeof(bad)), A, B, true, &fast),
		    LUNAR_DROP_TCP_BAD_OPTION);
	}
}

/* SACK with 1..4 blocks: length 2 + 8n, RFC 2018 3. */
static void test_tcp_sack_blocks(void **state)
{
	(void)state;
	/* +8: quiets GCC bounds guess */
	uint8_t opt[TCP_OPT_MAX_LEN + 8], buf[TCP_HDR_MAX_LEN + 3];
	struct tcp_repr r;

	for (unsigned int nb = 1; nb <= TCP_MAX_SACK_BLOCKS; nb++) {
		size_t olen = 2 + 8 * nb, padded = (olen + 2 + 3) & ~(size_t)3, n;

		memset(opt, TCP_OPT_EOL, sizeof(opt));
		opt[0] = TCP_OPT_NOP;
		opt[1] = TCP_OPT_NOP;
		opt[2] = TCP_OPT_SACK;
		opt[3] = (uint8_t)olen;
		for (unsigned int b = 0; b < nb; b++) {
			uint8_t *p = opt + 4 + 8 * b;

			p[3] = (uint8_t)(2 * b);     /* left = 2b */
			p[7] = (uint8_t)(2 * b + 1); /* right = 2b + 1 */
			p[0] = 0x80;		     /* top bits set: unsigned, big-endian */
			p[4] = 0x80;
		}
		n = build_opts(buf, opt, padded);
		assert_ok(tcp_parse(buf, n, A, B, true, &r));
		assert_int_equal(r.opts.sack_count, nb);
		for (unsigned int b = 0; b < nb; b++) {
			assert_int_equal(r.opts.sack[b].left, 0x80000000u | (2 * b));
			assert_int_equal(r.opts.sack[b].right, 0x80000000u | (2 * b + 1));
		}
	}
}

static void test_tcp_options_bad(void **state)
{
	(void)state;
	static const struct {
		uint8_t opt[12];
		size_t len;
		const char *why;
	} cases[] = {
	    {{30, 0, 0, 0}, 4, "unknown, length 0"},
	    {{30, 1, 0, 0}, 4, "unknown, length 1"},
	    {{2, 0, 0, 0}, 4, "MSS, length 0"},
	    {{2, 1, 0, 0}, 4, "MSS, length 1"},
	    {{30, 5, 0, 0}, 4, "unknown, runs past the header by 1"},
	    {{30, 255, 0, 0}, 4, "length 255"},
	    {{1, 1, 1, 30}, 4, "no room for the length octet"},
	    {{1, 1, 1, 2}, 4, "MSS kind in the last byte"},
	    {{2, 3, 5, 0}, 4, "MSS length 3"},
	    {{2, 5, 5, 0xb4, 0, 0, 0, 0}, 8, "MSS length 5"},
	    {{3, 2, 1, 1}, 4, "WS length 2"},
	    {{3, 4, 7, 0}, 4, "WS length 4"},
	    {{4, 3, 0, 0}, 4, "SACK-permitted length 3"},
	    {{4, 4, 0, 0}, 4, "SACK-permitted length 4"},
	    {{5, 2, 0, 0}, 4, "SACK with no block"},
	    {{5, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 12, "SACK length 9"},
	    {{5, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 12, "SACK length 11"},
	    {{5, 10, 0, 0, 0, 0, 0, 0}, 8, "SACK block past the header"},
	    {{8, 8, 0, 0, 0, 0, 0, 0}, 8, "TS length 8"},
	    {{8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 12, "TS length 12"},
	    {{1, 1, 8, 10, 0, 0, 0, 0, 0, 0, 0}, 8, "TS past the header"},
	    {{2, 4, 5, 0xb4, 3, 3, 7, 1, 30, 0}, 12, "good, good, then length 0"},
	};
	uint8_t buf[TCP_HDR_MAX_LEN + 3];
	struct tcp_repr r;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t n = build_opts(buf, cases[i].opt, cases[i].len);
		enum lunar_drop got = tcp_parse(buf, n, A, B, true, &r);

		if (got != LUNAR_DROP_TCP_BAD_OPTION)
			fail_msg("%s: got %s", cases[i].why, lunar_drop_name(got));
		/* Options are checked whether or not the checksum is. */
		assert_drop(tcp_parse(buf, n, A, B, false, &r), LUNAR_DROP_TCP_BAD_OPTION);
	}
	/* SACK longer than 4 blocks cannot fit; 42 runs past even a 60-byte header. */
	uint8_t big[40] = {5, 42};
	size_t n = build_opts(buf, big, sizeof(big));
	assert_drop(tcp_parse(buf, n, A, B, true, &r), LUNAR_DROP_TCP_BAD_OPTION);
	/* An option may not run into the payload either. */
	static const uint8_t into[4] = {1, 1, 30, 4};
	n = build_opts(buf, into, sizeof(into));
	assert_drop(tcp_parse(buf, n, A, B, true, &r), LUNAR_DROP_TCP_BAD_OPTION);
}

/* The checksum is checked before options: corruption explains a bad option. */
static void test_tcp_check_order(void **state)
{
	(void)state;
	static const uint8_t bad[4] = {30, 0, 0, 0};
	uint8_t buf[TCP_HDR_MAX_LEN + 3];
	struct tcp_repr r;
	size_t n = build_opts(buf, bad, sizeof(bad));

	buf[16] ^= 1;
	assert_drop(tcp_parse(buf, n, A, B, true, &r), LUNAR_DROP_TCP_BAD_CHECKSUM);
	assert_drop(tcp_parse(buf, n, A, B, false, &r), LUNAR_DROP_TCP_BAD_OPTION);
	assert_drop(tcp_parse(buf, 23, A, B, true, &r), LUNAR_DROP_TCP_BAD_OFFSET);
	assert_drop(tcp_parse(buf, 19, A, B, true, &r), LUNAR_DROP_TCP_SHORT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tcp_golden_syn),
	    cmocka_unit_test(test_tcp_golden_sack),
	    cmocka_unit_test(test_tcp_roundtrip_options),
	    cmocka_unit_test(test_tcp_sack_layout),
	    cmocka_unit_test(test_tcp_emit_limits),
	    cmocka_unit_test(test_tcp_fill_csum_later),
	    cmocka_unit_test(test_tcp_short),
	    cmocka_unit_test(test_tcp_bad_offset),
	    cmocka_unit_test(test_tcp_bad_checksum),
	    cmocka_unit_test(test_tcp_options_ok),
	    cmocka_unit_test(test_tcp_aligned_timestamps),
	    cmocka_unit_test(test_tcp_sack_blocks),
	    cmocka_unit_test(test_tcp_options_bad),
	    cmocka_unit_test(test_tcp_check_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
