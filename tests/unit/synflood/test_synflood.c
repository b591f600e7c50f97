/*
 * test_synflood.c - lunar-synflood's frames and options (tools/synflood/):
 * every frame parses with lunar's own parsers, checksums verified, and
 * sums to 0xffff under an independent RFC 1071 sum; the options are a
 * Linux SYN's, byte for byte; the random fields stay in range and vary;
 * the source subnet's edges (/30, /31, /32, /0); one seed, one sequence;
 * and each bad command line is refused with a message that names it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "synflood.h"

#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static struct synflood_frame frame(uint32_t net, uint8_t prefix)
{
	struct synflood_frame f = {
	    .src_mac = {{0x02, 0, 0, 0, 0, 0x0a}},
	    .dst_mac = {{0x02, 0, 0, 0, 0, 0x0b}},
	    .src_net = net,
	    .src_prefix = prefix,
	    .dst_ip = IP4(10, 78, 2, 2),
	    .dst_port = 8080,
	    .mss = 1460,
	    .wscale = 7,
	};
	return f;
}

/* RFC 1071's sum written out, big-endian words: not lunar's checksum code. */
static uint32_t ref_sum(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t ref_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Parse @buf as lunar would receive it; check everything fixed about it. */
static void check_frame(const uint8_t *buf, size_t len, const struct synflood_frame *f,
			struct ipv4_repr *ir, struct tcp_repr *tr)
{
	struct eth_repr er;
	uint8_t pseudo[12];
	uint32_t sum;

	assert_int_equal(len, SYNFLOOD_FRAME_LEN);
	assert_int_equal(eth_parse(buf, len, &er), LUNAR_DROP_NONE);
	assert_memory_equal(&er.dst, &f->dst_mac, RTE_ETHER_ADDR_LEN);
	assert_memory_equal(&er.src, &f->src_mac, RTE_ETHER_ADDR_LEN);
	assert_int_equal(er.ethertype, RTE_ETHER_TYPE_IPV4);
	assert_int_equal(ipv4_parse(er.payload, er.payload_len, true, ir), LUNAR_DROP_NONE);
	assert_int_equal(ir->proto, IPPROTO_TCP);
	assert_int_equal(ir->dst, f->dst_ip);
	assert_int_equal(ir->ttl, 64);
	assert_true(ir->df);
	assert_int_equal(ir->total_len, 60);
	assert_int_equal(tcp_parse(ir->payload, ir->payload_len, ir->src, ir->dst, true, tr),
			 LUNAR_DROP_NONE);
	assert_int_equal(tr->flags, RTE_TCP_SYN_FLAG);
	assert_int_equal(tr->dport, f->dst_port);
	assert_int_equal(tr->ack, 0);
	assert_int_equal(tr->window, 64240);
	assert_int_equal(tr->hdr_len, 40);
	assert_int_equal(tr->payload_len, 0);
	assert_true(tr->opts.has_mss);
	assert_int_equal(tr->opts.mss, f->mss);
	assert_true(tr->opts.sack_permitted);
	assert_true(tr->opts.has_ts);
	assert_int_equal(tr->opts.ts_ecr, 0);
	assert_true(tr->opts.has_wscale);
	assert_int_equal(tr->opts.wscale, f->wscale);

	/* Independently: the IP header and pseudo-header + segment sum to 0xffff. */
	assert_int_equal(ref_fold(ref_sum(buf + ETH_HDR_LEN, IPV4_HDR_LEN, 0)), 0xffff);
	memcpy(pseudo, buf + ETH_HDR_LEN + 12, 8); /* source and destination as sent */
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_TCP;
	pseudo[10] = 0;
	pseudo[11] = 40;
	sum = ref_sum(pseudo, sizeof(pseudo), 0);
	assert_int_equal(ref_fold(ref_sum(buf + ETH_HDR_LEN + IPV4_HDR_LEN, 40, sum)), 0xffff);
}

static void test_frames_parse_and_vary(void **state)
{
	struct synflood_frame f = frame(IP4(10, 99, 0, 0), 16);
	uint64_t rng = synflood_rng_seed(42);
	uint8_t buf[SYNFLOOD_FRAME_LEN];
	static uint8_t seen_src[65536], seen_port[65536];
	unsigned distinct_src = 0, distinct_port = 0, same_isn = 0;
	uint32_t last_isn = 0;
	struct ipv4_repr ir;
	struct tcp_repr tr;

	(void)state;
	for (int i = 0; i < 20000; i++) {
		size_t len = synflood_build(buf, sizeof(buf), &f, &rng);

		check_frame(buf, len, &f, &ir, &tr);
		assert_int_equal(ir.src & 0xffff0000u, IP4(10, 99, 0, 0));
		assert_int_not_equal(ir.src & 0xffff, 0);
		assert_int_not_equal(ir.src & 0xffff, 0xffff);
		assert_true(tr.sport >= 1024);
		distinct_src += !seen_src[ir.src & 0xffff]++;
		distinct_port += !seen_port[tr.sport]++;
		same_isn += i && tr.seq == last_isn;
		last_isn = tr.seq;
	}
	/* 20000 draws from ~65000 values: about 17,400 distinct expected. */
	assert_true(distinct_src > 16000);
	assert_true(distinct_port > 16000);
	assert_int_equal(same_isn, 0);
}

/* The option bytes a Linux client's SYN carries, in its order. */
static void test_options_are_linux_order(void **state)
{
	struct synflood_frame f = frame(IP4(10, 99, 0, 0), 16);
	uint64_t rng = synflood_rng_seed(1);
	uint8_t buf[SYNFLOOD_FRAME_LEN];
	const uint8_t *o = buf + ETH_HDR_LEN + IPV4_HDR_LEN + 20;
	static const uint8_t head[] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10};
	static const uint8_t tail[] = {0, 0, 0, 0, 1, 3, 3, 7}; /* TSecr 0, NOP, WS 7 */

	(void)state;
	assert_int_equal(synflood_build(buf, sizeof(buf), &f, &rng), SYNFLOOD_FRAME_LEN);
	assert_memory_equal(o, head, sizeof(head));
	assert_memory_equal(o + 12, tail, sizeof(tail));
}

static void test_subnet_edges(void **state)
{
	uint64_t rng = synflood_rng_seed(7);
	struct synflood_frame f30 = frame(IP4(192, 0, 2, 4), 30);
	struct synflood_frame f31 = frame(IP4(192, 0, 2, 8), 31);
	struct synflood_frame f32 = frame(IP4(192, 0, 2, 77), 32);
	struct synflood_frame f0 = frame(0, 0);
	unsigned seen30[4] = {0}, seen31[2] = {0};

	(void)state;
	for (int i = 0; i < 1000; i++) {
		uint32_t a = synflood_rand_src(&f30, &rng);

		assert_int_equal(a & ~3u, IP4(192, 0, 2, 4));
		seen30[a & 3]++;
		a = synflood_rand_src(&f31, &rng);
		assert_int_equal(a & ~1u, IP4(192, 0, 2, 8));
		seen31[a & 1]++;
		assert_int_equal(synflood_rand_src(&f32, &rng), IP4(192, 0, 2, 77));
		a = synflood_rand_src(&f0, &rng);
		assert_true(a != 0 && a != 0xffffffffu);
	}
	/* /30: only the two hosts; /31 (RFC 3021): both addresses. */
	assert_int_equal(seen30[0] + seen30[3], 0);
	assert_true(seen30[1] > 0 && seen30[2] > 0);
	assert_true(seen31[0] > 0 && seen31[1] > 0);
}

static void test_same_seed_same_frames(void **state)
{
	struct synflood_frame f = frame(IP4(10, 99, 0, 0), 16);
	uint64_t a = synflood_rng_seed(5), b = synflood_rng_seed(5), c = synflood_rng_seed(6);
	uint8_t fa[SYNFLOOD_FRAME_LEN], fb[SYNFLOOD_FRAME_LEN], fc[SYNFLOOD_FRAME_LEN];

	(void)state;
	assert_int_not_equal(synflood_rng_seed(0), 0);
	for (int i = 0; i < 100; i++) {
		synflood_build(fa, sizeof(fa), &f, &a);
		synflood_build(fb, sizeof(fb), &f, &b);
		synflood_build(fc, sizeof(fc), &f, &c);
		assert_memory_equal(fa, fb, sizeof(fa));
		assert_memory_not_equal(fa, fc, sizeof(fa));
	}
	assert_int_equal(synflood_build(fa, SYNFLOOD_FRAME_LEN - 1, &f, &a), 0);
}

/* argv from a string of words (at most 31). */
static int parse(const char *line, struct synflood_opts *o, char *err, size_t errlen)
{
	static char buf[1024];
	char *argv[32] = {"lunar-synflood"};
	int argc = 1;

	strcpy(buf, line);
	for (char *w = strtok(buf, " "); w && argc < 31; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	return synflood_parse_args(argc, argv, o, err, errlen);
}

#define BASE "--dst 10.78.2.2:8080 --src-net 10.99.0.0/16 "

static void test_args_good(void **state)
{
	struct synflood_opts o;
	char err[256] = "";

	(void)state;
	assert_int_equal(parse(BASE "--interface arb-a --dst-mac 02:00:00:00:00:0B --rate 5000 "
				    "--batch 32 --seed 9",
			       &o, err, sizeof(err)),
			 0);
	assert_string_equal(o.ifname, "arb-a");
	assert_int_equal(o.frame.dst_ip, IP4(10, 78, 2, 2));
	assert_int_equal(o.frame.dst_port, 8080);
	assert_int_equal(o.frame.src_net, IP4(10, 99, 0, 0));
	assert_int_equal(o.frame.src_prefix, 16);
	assert_int_equal(o.frame.dst_mac.addr_bytes[5], 0x0b);
	assert_int_equal(o.rate_pps, 5000);
	assert_int_equal(o.batch, 32);
	assert_int_equal(o.seed, 9);
	assert_true(o.duration_s == 10.0); /* the default bound */
	assert_int_equal(o.frame.mss, 1460);
	assert_int_equal(o.frame.wscale, 7);

	assert_int_equal(
	    parse(BASE "--pcap /tmp/x.pcap --count 10 --mss 536 --wscale 14", &o, err, sizeof(err)),
	    0);
	assert_int_equal(o.count, 10);
	assert_true(o.duration_s == 0.0);
	assert_int_equal(o.frame.mss, 536);
	assert_int_equal(o.frame.wscale, 14);
}

static void test_args_bad(void **state)
{
	static const struct {
		const char *line, *says;
	} cases[] = {
	    {"--src-net 10.99.0.0/16 --pcap x --count 1", "--dst IP:PORT is required"},
	    {"--dst 10.78.2.2:8080 --pcap x --count 1", "--src-net CIDR is required"},
	    {"--dst 10.78.2.2 "
	     "--src-net 10.99.0.0/16 --pcap x --count 1",
	     "expected IPv4:PORT"},
	    {"--dst 10.78.2.2:0 --src-net 10.99.0.0/16 --pcap x --count 1", "port 1..65535"},
	    {"--dst 10.78.2.2:80 --src-net 10.99.1.0/16 --pcap x --count 1", "host bits set"},
	    {"--dst 10.78.2.2:80 --src-net 10.99.0.0/33 --pcap x --count 1", "prefix 0..32"},
	    {"--dst 10.78.2.2:80 --src-net 10.99.0.0 --pcap x --count 1", "ADDRESS/PREFIX"},
	    {BASE "--interface a --dst-mac 02:00:00:00:00", "six hex pairs"},
	    {BASE "--interface a --dst-mac 02:00:00:00:00:0g", "six hex pairs"},
	    {BASE "--interface a --dst-mac -1:-2:3:4:5:6", "six hex pairs"},
	    {BASE "--interface a --dst-mac 2:0:0:0:0:1", "six hex pairs"},
	    {BASE "--interface a", "needs --dst-mac"},
	    {BASE "--interface a --pcap x --count 1 --dst-mac 02:00:00:00:00:01", "exactly one of"},
	    {BASE "--count 1", "exactly one of"},
	    {BASE "--pcap x", "--pcap needs --count"},
	    {BASE "--pcap x --count 2 --duration 1", "--pcap needs --count"},
	    {BASE "--pcap x --count 2000000", "--pcap needs --count"},
	    {BASE "--interface a --dst-mac 02:00:00:00:00:01 --duration 0", "never stop"},
	    {BASE "--interface a --dst-mac 02:00:00:00:00:01 --batch 0", "--batch 0: expected"},
	    {BASE "--interface a --dst-mac 02:00:00:00:00:01 --batch 2048", "1 to 1024"},
	    {BASE "--interface a --dst-mac 02:00:00:00:00:01 --rate fast", "--rate fast"},
	    {BASE "--interface a --dst-mac 02:00:00:00:00:01 --wscale 15", "--wscale 15"},
	    {BASE "--interface a --dst-mac 02:00:00:00:00:01 --duration -1", "seconds from 0"},
	    {BASE "--interface a --dst-mac 02:00:00:00:00:01 extra", "unexpected argument 'extra'"},
	    {BASE "--interface a --dst-mac 02:00:00:00:00:01 --flood", "unknown option"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct synflood_opts o;
		char err[256] = "";

		assert_int_equal(parse(cases[i].line, &o, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].says))
			fail_msg("'%s': got '%s', want '%s' in it", cases[i].line, err,
				 cases[i].says);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frames_parse_and_vary),
	    cmocka_unit_test(test_options_are_linux_order),
	    cmocka_unit_test(test_subnet_edges),
	    cmocka_unit_test(test_same_seed_same_frames),
	    cmocka_unit_test(test_args_good),
	    cmocka_unit_test(test_args_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
