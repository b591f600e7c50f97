/* test_ipv4.c - unit tests for wire/ipv4: golden packets, round trip, every drop reason. */
#include <string.h>

#include "wire_test.h"
#include "golden.h"
#include "wire/checksum.h"
#include "wire/ipv4.h"

#define IP_OFF GOLDEN_L3

static const struct ipv4_repr base = {
    .src = IP4(10, 0, 0, 1),
    .dst = IP4(10, 0, 0, 2),
    .proto = IPPROTO_UDP,
    .ttl = 64,
    .tos = 0,
    .id = 0x4242,
    .df = true,
    .payload_len = 8,
};

/* Recompute the header checksum after a test edited the header. */
static void fix_csum(uint8_t *buf)
{
	size_t hlen = (size_t)(buf[0] & 0x0f) * 4;
	uint16_t c;

	buf[10] = buf[11] = 0;
	c = inet_csum(buf, hlen);
	memcpy(buf + 10, &c, 2);
}

/* A valid packet from base: header, 8 payload bytes; returns its length. */
static size_t build(uint8_t *buf, size_t cap)
{
	assert_int_equal(ipv4_emit(buf, cap, &base, true), IPV4_HDR_LEN);
	memset(buf + IPV4_HDR_LEN, 0xcc, base.payload_len);
	return IPV4_HDR_LEN + base.payload_len;
}

/*
 * A valid packet whose header carries @olen option bytes (@olen a multiple
 * of 4, at most 40) and 8 payload bytes; returns its length.
 */
static size_t build_opts(uint8_t *buf, const uint8_t *opt, size_t olen)
{
	size_t hlen = IPV4_HDR_LEN + olen, total = hlen + 8;

	assert_true(olen % 4 == 0 && olen <= 40);
	ipv4_emit(buf, IPV4_HDR_LEN, &base, false);
	buf[0] = (uint8_t)(0x40 | hlen / 4);
	buf[2] = (uint8_t)(total >> 8);
	buf[3] = (uint8_t)total;
	memcpy(buf + IPV4_HDR_LEN, opt, olen);
	memset(buf + hlen, 0xcc, 8);
	fix_csum(buf);
	return total;
}

static void assert_ipv4_fields(const struct ipv4_repr *a, const struct ipv4_repr *b)
{
	assert_int_equal(a->src, b->src);
	assert_int_equal(a->dst, b->dst);
	assert_int_equal(a->proto, b->proto);
	assert_int_equal(a->ttl, b->ttl);
	assert_int_equal(a->tos, b->tos);
	assert_int_equal(a->id, b->id);
	assert_int_equal(a->df, b->df);
	assert_int_equal(a->payload_len, b->payload_len);
}

static void test_ipv4_golden_icmp(void **state)
{
	(void)state;
	const uint8_t *ip = golden_icmp_echo + IP_OFF;
	size_t len = sizeof(golden_icmp_echo) - IP_OFF;
	struct ipv4_repr r;
	struct ipv4_repr want = {
	    .src = IP4(10, 0, 0, 1),
	    .dst = IP4(10, 0, 0, 2),
	    .proto = IPPROTO_ICMP,
	    .ttl = 64,
	    .tos = 0,
	    .id = 0x1234,
	    .df = true,
	    .payload_len = 29,
	};
	uint8_t buf[IPV4_HDR_LEN];

	assert_ok(ipv4_parse(ip, len, true, &r));
	assert_ipv4_fields(&r, &want);
	assert_int_equal(r.hdr_len, 20);
	assert_int_equal(r.total_len, 49);
	assert_ptr_equal(r.payload, ip + 20);
	assert_int_equal(r.opt_flags, 0);
	/* Our emitter (checksum included) produces scapy's bytes. */
	assert_int_equal(ipv4_emit(buf, sizeof(buf), &want, true), IPV4_HDR_LEN);
	assert_memory_equal(buf, ip, IPV4_HDR_LEN);
}

/* RFC 894 padding: bytes past total_len are excluded from the payload. */
static void test_ipv4_golden_padded(void **state)
{
	(void)state;
	const uint8_t *ip = golden_udp + IP_OFF;
	size_t len = sizeof(golden_udp) - IP_OFF;
	struct ipv4_repr r;
	uint8_t buf[IPV4_HDR_LEN];

	assert_int_equal(len, 46);
	assert_ok(ipv4_parse(ip, len, true, &r));
	assert_int_equal(r.src, IP4(192, 168, 1, 10));
	assert_int_equal(r.dst, IP4(192, 168, 1, 20));
	assert_int_equal(r.proto, IPPROTO_UDP);
	assert_int_equal(r.tos, 0x10);
	assert_int_equal(r.id, 1);
	assert_false(r.df);
	assert_int_equal(r.total_len, 40);
	assert_int_equal(r.payload_len, 20);
	assert_int_equal(ipv4_emit(buf, sizeof(buf), &r, true), IPV4_HDR_LEN);
	assert_memory_equal(buf, ip, IPV4_HDR_LEN);
}

static void test_ipv4_golden_options(void **state)
{
	(void)state;
	const uint8_t *ip = golden_ip_options + IP_OFF;
	struct ipv4_repr r;

	assert_ok(ipv4_parse(ip, sizeof(golden_ip_options) - IP_OFF, true, &r));
	assert_int_equal(r.hdr_len, 32);
	assert_int_equal(r.opt_flags, IPV4_OPT_RR | IPV4_OPT_RA);
	assert_int_equal(r.ttl, 1);
	assert_int_equal(r.payload_len, 11);
	assert_ptr_equal(r.payload, ip + 32);
	assert_int_equal(r.src, IP4(10, 1, 2, 3));
}

static void test_ipv4_roundtrip(void **state)
{
	(void)state;
	static const struct ipv4_repr cases[] = {
	    {.src = IP4(1, 2, 3, 4),
	     .dst = IP4(5, 6, 7, 8),
	     .proto = 6,
	     .ttl = 1,
	     .tos = 0xb8,
	     .id = 0,
	     .df = false,
	     .payload_len = 0},
	    {.src = 0,
	     .dst = 0xffffffff,
	     .proto = 17,
	     .ttl = 255,
	     .tos = 0,
	     .id = 0xffff,
	     .df = true,
	     .payload_len = 100},
	    {.src = IP4(240, 0, 0, 1),
	     .dst = IP4(224, 0, 0, 251),
	     .proto = 1,
	     .ttl = 0,
	     .tos = 3,
	     .id = 7,
	     .df = true,
	     .payload_len = 3},
	};
	uint8_t buf[1 + IPV4_HDR_LEN + 100];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ipv4_repr r;
		uint8_t *p = buf + 1; /* odd address on purpose */
		size_t n = IPV4_HDR_LEN + cases[i].payload_len;

		memset(buf, 0x77, sizeof(buf));
		assert_int_equal(ipv4_emit(p, n, &cases[i], true), IPV4_HDR_LEN);
		assert_ok(ipv4_parse(p, n, true, &r));
		assert_ipv4_fields(&r, &cases[i]);
		assert_int_equal(r.hdr_len, IPV4_HDR_LEN);
		assert_int_equal(r.total_len, n);
		assert_ptr_equal(r.payload, p + IPV4_HDR_LEN);
		assert_int_equal(r.opt_flags, 0);
	}
}

static void test_ipv4_emit_limits(void **state)
{
	(void)state;
	struct ipv4_repr r = base;
	uint8_t buf[IPV4_HDR_LEN];

	assert_int_equal(ipv4_emit(buf, IPV4_HDR_LEN - 1, &r, true), 0);
	r.payload_len = UINT16_MAX - IPV4_HDR_LEN;
	assert_int_equal(ipv4_emit(buf, sizeof(buf), &r, true), IPV4_HDR_LEN);
	assert_int_equal(buf[2], 0xff);
	assert_int_equal(buf[3], 0xff);
	r.payload_len++;
	assert_int_equal(ipv4_emit(buf, sizeof(buf), &r, true), 0);
}

/* fill_csum = false leaves 0 for the NIC; only a verifying parse notices. */
static void test_ipv4_no_csum(void **state)
{
	(void)state;
	uint8_t buf[64];
	struct ipv4_repr r;

	ipv4_emit(buf, sizeof(buf), &base, false);
	assert_int_equal(buf[10], 0);
	assert_int_equal(buf[11], 0);
	assert_ok(ipv4_parse(buf, IPV4_HDR_LEN + 8, false, &r));
	assert_drop(ipv4_parse(buf, IPV4_HDR_LEN + 8, true, &r), LUNAR_DROP_IP_BAD_CHECKSUM);
}

static void test_ipv4_short(void **state)
{
	(void)state;
	struct ipv4_repr r;

	for (size_t len = 0; len < IPV4_HDR_LEN; len++)
		assert_drop(ipv4_parse(golden_icmp_echo + IP_OFF, len, true, &r),
			    LUNAR_DROP_IP_SHORT);
}

static void test_ipv4_bad_version(void **state)
{
	(void)state;
	static const uint8_t versions[] = {0, 1, 5, 6, 15};
	uint8_t buf[64];
	struct ipv4_repr r;
	size_t n;

	for (size_t i = 0; i < ARRAY_SIZE(versions); i++) {
		n = build(buf, sizeof(buf));
		buf[0] = (uint8_t)(versions[i] << 4 | 5);
		fix_csum(buf);
		assert_drop(ipv4_parse(buf, n, true, &r), LUNAR_DROP_IP_BAD_VERSION);
	}
}

static void test_ipv4_bad_ihl(void **state)
{
	(void)state;
	uint8_t buf[64];
	struct ipv4_repr r;
	size_t n;

	for (uint8_t ihl = 0; ihl < 5; ihl++) {
		n = build(buf, sizeof(buf));
		buf[0] = (uint8_t)(0x40 | ihl);
		assert_drop(ipv4_parse(buf, n, false, &r), LUNAR_DROP_IP_BAD_IHL);
	}
	/* IHL 7 = 28 bytes, but only 24 received. */
	n = build(buf, sizeof(buf));
	buf[0] = 0x47;
	assert_drop(ipv4_parse(buf, 24, false, &r), LUNAR_DROP_IP_BAD_IHL);
	/* IHL 15 = 60 bytes, 28 received. */
	buf[0] = 0x4f;
	assert_drop(ipv4_parse(buf, n, false, &r), LUNAR_DROP_IP_BAD_IHL);
}

static void test_ipv4_bad_total_len(void **state)
{
	(void)state;
	uint8_t buf[64];
	struct ipv4_repr r;
	size_t n = build(buf, sizeof(buf));
	static const uint16_t bad[] = {0, 1, 19, 29, 0xffff};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		build(buf, sizeof(buf));
		buf[2] = (uint8_t)(bad[i] >> 8);
		buf[3] = (uint8_t)bad[i];
		fix_csum(buf);
		assert_drop(ipv4_parse(buf, n, true, &r), LUNAR_DROP_IP_BAD_TOTAL_LEN);
	}
	/* With IHL 6 (24 bytes): total_len 23 is below the header, 24 is an empty payload. */
	static const uint8_t nops[4] = {1, 1, 1, 1};
	n = build_opts(buf, nops, sizeof(nops));
	buf[2] = 0;
	buf[3] = 23;
	fix_csum(buf);
	assert_drop(ipv4_parse(buf, n, true, &r), LUNAR_DROP_IP_BAD_TOTAL_LEN);
	buf[3] = 24;
	fix_csum(buf);
	assert_ok(ipv4_parse(buf, n, true, &r));
	assert_int_equal(r.payload_len, 0);
	/* Truncated by one byte. */
	n = build(buf, sizeof(buf));
	assert_drop(ipv4_parse(buf, n - 1, true, &r), LUNAR_DROP_IP_BAD_TOTAL_LEN);
	/* Padding of any size is excluded. */
	assert_ok(ipv4_parse(buf, sizeof(buf), true, &r));
	assert_int_equal(r.payload_len, 8);
}

static void test_ipv4_bad_checksum(void **state)
{
	(void)state;
	uint8_t buf[64];
	struct ipv4_repr r;
	size_t n;

	/* A flipped bit anywhere in the header is caught; the payload is not covered. */
	for (size_t i = 0; i < IPV4_HDR_LEN; i++) {
		n = build(buf, sizeof(buf));
		if (i == 0 || i == 2 || i == 3 || i == 6 || i == 7)
			continue; /* version/IHL, length, fragment: other reasons apply */
		buf[i] ^= 0x01;
		assert_drop(ipv4_parse(buf, n, true, &r), LUNAR_DROP_IP_BAD_CHECKSUM);
		assert_ok(ipv4_parse(buf, n, false, &r));
	}
	n = build(buf, sizeof(buf));
	buf[IPV4_HDR_LEN] ^= 0xff;
	assert_ok(ipv4_parse(buf, n, true, &r));
	/* The checksum also covers options. */
	static const uint8_t rr[8] = {IPV4_OPT_TYPE_RR, 7, 4, 0, 0, 0, 0, 0};
	n = build_opts(buf, rr, sizeof(rr));
	buf[IPV4_HDR_LEN + 3] = 1;
	assert_drop(ipv4_parse(buf, n, true, &r), LUNAR_DROP_IP_BAD_CHECKSUM);
}

static void test_ipv4_options_ok(void **state)
{
	(void)state;
	static const struct {
		uint8_t opt[12];
		size_t len;
		uint8_t flags;
	} cases[] = {
	    {{1, 1, 1, 1}, 4, 0},	   /* NOPs only */
	    {{0, 0, 0, 0}, 4, 0},	   /* EOL */
	    {{0, 0xff, 0xff, 0xff}, 4, 0}, /* EOL ends: garbage after ignored */
	    {{IPV4_OPT_TYPE_RR, 7, 4, 0, 0, 0, 0, 0}, 8, IPV4_OPT_RR},
	    {{IPV4_OPT_TYPE_TS, 4, 5, 0}, 4, IPV4_OPT_TS},
	    {{IPV4_OPT_TYPE_LSRR, 7, 4, 1, 2, 3, 4, 0}, 8, IPV4_OPT_LSRR},
	    {{IPV4_OPT_TYPE_SSRR, 7, 4, 1, 2, 3, 4, 0}, 8, IPV4_OPT_SSRR},
	    {{IPV4_OPT_TYPE_RA, 4, 0, 0}, 4, IPV4_OPT_RA},
	    {{30, 4, 0xaa, 0xbb}, 4, IPV4_OPT_OTHER}, /* unknown, well-formed */
	    {{0x99, 2, 1, 0}, 4, IPV4_OPT_OTHER},     /* unknown, length 2, then NOP, EOL */
	    {{1, IPV4_OPT_TYPE_RA, 4, 0, 0, 30, 3, 9, 1, 1, 1, 1},
	     12,
	     IPV4_OPT_RA | IPV4_OPT_OTHER},
	    {{IPV4_OPT_TYPE_TS, 4, 5, 0, IPV4_OPT_TYPE_RR, 3, 4, 0}, 8, IPV4_OPT_TS | IPV4_OPT_RR},
	};
	uint8_t buf[80];
	struct ipv4_repr r;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t n = build_opts(buf, cases[i].opt, cases[i].len);

		assert_ok(ipv4_parse(buf, n, true, &r));
		assert_int_equal(r.opt_flags, cases[i].flags);
		assert_int_equal(r.hdr_len, IPV4_HDR_LEN + cases[i].len);
		assert_int_equal(r.payload_len, 8);
	}
	/* 40 option bytes: the longest header. */
	uint8_t big[40];
	memset(big, 1, sizeof(big));
	big[36] = 30;
	big[37] = 4;
	size_t n = build_opts(buf, big, sizeof(big));
	assert_ok(ipv4_parse(buf, n, true, &r));
	assert_int_equal(r.hdr_len, IPV4_HDR_MAX_LEN);
	assert_int_equal(r.opt_flags, IPV4_OPT_OTHER);
}

static void test_ipv4_options_bad(void **state)
{
	(void)state;
	static const struct {
		uint8_t opt[8];
		size_t len;
	} cases[] = {
	    {{IPV4_OPT_TYPE_RR, 0, 0, 0}, 4},		   /* length 0 */
	    {{IPV4_OPT_TYPE_RR, 1, 0, 0}, 4},		   /* length 1 */
	    {{30, 0, 0, 0}, 4},				   /* unknown, length 0 */
	    {{30, 1, 1, 1}, 4},				   /* unknown, length 1 */
	    {{IPV4_OPT_TYPE_RR, 5, 4, 0}, 4},		   /* past the header by one */
	    {{IPV4_OPT_TYPE_RA, 4, 0, 0, 30, 9, 0, 0}, 8}, /* second one past the end */
	    {{30, 255, 0, 0}, 4},			   /* length 255 */
	    {{1, 1, 1, IPV4_OPT_TYPE_RR}, 4},		   /* no room for the length octet */
	    {{1, 1, 1, 30}, 4},				   /* same, unknown type */
	};
	uint8_t buf[80];
	struct ipv4_repr r;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t n = build_opts(buf, cases[i].opt, cases[i].len);

		assert_drop(ipv4_parse(buf, n, true, &r), LUNAR_DROP_IP_BAD_OPTIONS);
		/* Options are checked whether or not the checksum is. */
		assert_drop(ipv4_parse(buf, n, false, &r), LUNAR_DROP_IP_BAD_OPTIONS);
	}
	/* An option must fit the header even when the payload follows it. */
	static const uint8_t past[4] = {30, 6, 0, 0};
	size_t n = build_opts(buf, past, sizeof(past));
	assert_drop(ipv4_parse(buf, n, true, &r), LUNAR_DROP_IP_BAD_OPTIONS);
}

static void test_ipv4_fragment(void **state)
{
	(void)state;
	static const uint16_t frags[] = {
	    RTE_IPV4_HDR_MF_FLAG,			 /* first fragment */
	    1,						 /* offset 8 bytes, last fragment */
	    RTE_IPV4_HDR_MF_FLAG | 100,			 /* middle fragment */
	    RTE_IPV4_HDR_OFFSET_MASK,			 /* largest offset */
	    RTE_IPV4_HDR_DF_FLAG | 1,			 /* DF does not excuse an offset */
	    RTE_IPV4_HDR_DF_FLAG | RTE_IPV4_HDR_MF_FLAG, /* nor MF */
	};
	uint8_t buf[64];
	struct ipv4_repr r;
	size_t n;

	for (size_t i = 0; i < ARRAY_SIZE(frags); i++) {
		n = build(buf, sizeof(buf));
		buf[6] = (uint8_t)(frags[i] >> 8);
		buf[7] = (uint8_t)frags[i];
		fix_csum(buf);
		assert_drop(ipv4_parse(buf, n, true, &r), LUNAR_DROP_IP_FRAGMENT);
	}
	/* DF alone, or the reserved bit (RFC 791: must be zero, not checked), is not a fragment. */
	n = build(buf, sizeof(buf));
	buf[6] = 0x80;
	buf[7] = 0;
	fix_csum(buf);
	assert_ok(ipv4_parse(buf, n, true, &r));
	assert_false(r.df);
}

static void test_ipv4_bad_src(void **state)
{
	(void)state;
	static const uint32_t bad[] = {
	    IP4(255, 255, 255, 255), IP4(224, 0, 0, 1), IP4(224, 0, 0, 0), IP4(239, 255, 255, 255),
	    IP4(230, 1, 2, 3),	     IP4(127, 0, 0, 1), IP4(127, 0, 0, 0), IP4(127, 255, 255, 255),
	};
	static const uint32_t good[] = {
	    IP4(0, 0, 0, 0),	     /* booting host, RFC 1122 3.2.1.3 (a) */
	    IP4(240, 0, 0, 1),	     /* class E: reserved, not forbidden */
	    IP4(255, 255, 255, 254), /* class E */
	    IP4(126, 255, 255, 255), IP4(128, 0, 0, 0), IP4(223, 255, 255, 255), IP4(10, 0, 0, 255),
	};
	struct ipv4_repr in = base, r;
	uint8_t buf[64];

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		in.src = bad[i];
		ipv4_emit(buf, sizeof(buf), &in, true);
		assert_drop(ipv4_parse(buf, IPV4_HDR_LEN + 8, true, &r), LUNAR_DROP_IP_BAD_SRC);
	}
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		in.src = good[i];
		ipv4_emit(buf, sizeof(buf), &in, true);
		assert_ok(ipv4_parse(buf, IPV4_HDR_LEN + 8, true, &r));
		assert_int_equal(r.src, good[i]);
	}
	/* Only the source is judged: any destination is net/'s business. */
	in.src = base.src;
	in.dst = IP4(127, 0, 0, 1);
	ipv4_emit(buf, sizeof(buf), &in, true);
	assert_ok(ipv4_parse(buf, IPV4_HDR_LEN + 8, true, &r));
}

/* When several things are wrong, the documented order decides the reason. */
static void test_ipv4_check_order(void **state)
{
	(void)state;
	static const uint8_t bad_opt[4] = {30, 0, 0, 0};
	struct ipv4_repr in = base, r;
	uint8_t buf[64];
	size_t n;

	/* bad source + fragment -> fragment */
	in.src = IP4(127, 0, 0, 1);
	ipv4_emit(buf, sizeof(buf), &in, false);
	buf[6] |= 0x20; /* MF */
	fix_csum(buf);
	assert_drop(ipv4_parse(buf, IPV4_HDR_LEN + 8, true, &r), LUNAR_DROP_IP_FRAGMENT);
	/* + bad options -> options */
	n = build_opts(buf, bad_opt, sizeof(bad_opt));
	buf[6] |= 0x20;
	buf[12] = 127;
	fix_csum(buf);
	assert_drop(ipv4_parse(buf, n, true, &r), LUNAR_DROP_IP_BAD_OPTIONS);
	/* + bad checksum -> checksum */
	buf[10] ^= 0xff;
	assert_drop(ipv4_parse(buf, n, true, &r), LUNAR_DROP_IP_BAD_CHECKSUM);
	/* + total length past the data -> total length */
	assert_drop(ipv4_parse(buf, n - 1, true, &r), LUNAR_DROP_IP_BAD_TOTAL_LEN);
	/* + IHL past the data -> IHL */
	assert_drop(ipv4_parse(buf, 23, true, &r), LUNAR_DROP_IP_BAD_IHL);
	/* + version -> version */
	buf[0] = 0x66;
	assert_drop(ipv4_parse(buf, 23, true, &r), LUNAR_DROP_IP_BAD_VERSION);
	assert_drop(ipv4_parse(buf, 19, true, &r), LUNAR_DROP_IP_SHORT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ipv4_golden_icmp),	cmocka_unit_test(test_ipv4_golden_padded),
	    cmocka_unit_test(test_ipv4_golden_options), cmocka_unit_test(test_ipv4_roundtrip),
	    cmocka_unit_test(test_ipv4_emit_limits),	cmocka_unit_test(test_ipv4_no_csum),
	    cmocka_unit_test(test_ipv4_short),		cmocka_unit_test(test_ipv4_bad_version),
	    cmocka_unit_test(test_ipv4_bad_ihl),	cmocka_unit_test(test_ipv4_bad_total_len),
	    cmocka_unit_test(test_ipv4_bad_checksum),	cmocka_unit_test(test_ipv4_options_ok),
	    cmocka_unit_test(test_ipv4_options_bad),	cmocka_unit_test(test_ipv4_fragment),
	    cmocka_unit_test(test_ipv4_bad_src),	cmocka_unit_test(test_ipv4_check_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
