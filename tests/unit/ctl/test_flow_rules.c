/*
 * test_flow_rules.c - the plan as rte_flow rules (ctl/flow_rules.h):
 * the block decomposition covers exactly [lo, hi] with aligned blocks; the
 * rules, read the way a NIC reads them, send every segment where
 * flow_plan_queue_of() says; the rule counts for 1 to 16 workers; a worker count that is not a
 * power of two is refused in low-bits mode with the count it would take, and accepted in RSS mode.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/flow_plan.h"
#include "ctl/flow_rules.h"

#define MAX_RULES 4096

static uint8_t seen[65536];

/* Blocks of [lo, hi]: aligned, ascending, disjoint, exactly covering it. */
static void check_blocks(uint16_t lo, uint16_t hi)
{
	struct flow_port_block b[32];
	size_t n = flow_port_blocks(lo, hi, b, 32);

	assert_true(n >= 1 && n <= 30);
	memset(seen, 0, sizeof(seen));
	for (size_t i = 0; i < n; i++) {
		uint32_t size = (uint32_t)(uint16_t)~b[i].mask + 1;

		/* A mask is a prefix (ones then zeros) and the value is aligned to it. */
		assert_int_equal(size & (size - 1), 0);
		assert_int_equal(b[i].value & ~b[i].mask & 0xffff, 0);
		if (i)
			assert_true(b[i].value > b[i - 1].value);
		for (uint32_t p = b[i].value; p < b[i].value + size; p++) {
			assert_int_equal(seen[p], 0);
			seen[p] = 1;
		}
	}
	for (uint32_t p = 0; p < 65536; p++)
		if (seen[p] != (p >= lo && p <= hi))
			fail_msg("[%u, %u]: port %u %s", lo, hi, p,
				 seen[p] ? "covered but outside" : "not covered");
}

static void test_blocks_cover_exactly(void **state)
{
	struct flow_port_block b[32];

	(void)state;
	check_blocks(0, 65535);
	check_blocks(61440, 65535);
	check_blocks(1, 65534);
	check_blocks(7, 7);
	check_blocks(0, 0);
	check_blocks(65535, 65535);
	check_blocks(61440, 61780);
	srand(42);
	for (int i = 0; i < 300; i++) {
		uint16_t a = (uint16_t)rand(), c = (uint16_t)rand();

		check_blocks(a < c ? a : c, a < c ? c : a);
	}
	/* The fewest blocks: one for an aligned power of two, 30 at worst. */
	assert_int_equal(flow_port_blocks(0, 65535, b, 32), 1);
	assert_int_equal(b[0].mask, 0);
	assert_int_equal(flow_port_blocks(61440, 65535, b, 32), 1);
	assert_int_equal(b[0].value, 61440);
	assert_int_equal(b[0].mask, 0xf000);
	assert_int_equal(flow_port_blocks(1, 65534, NULL, 0), 30);
	assert_int_equal(flow_port_blocks(2, 1, NULL, 0), 0);
	/* Counting past cap writes nothing beyond it. */
	b[1].value = 0xabcd;
	assert_int_equal(flow_port_blocks(1, 6, b, 1), 4); /* 1, 2-3, 4-5, 6 */
	assert_int_equal(b[1].value, 0xabcd);
}

/* What a NIC does with the rules: the first that matches decides. */
static const struct flow_rule *match(const struct flow_rule *r, size_t n, uint16_t sport,
				     uint16_t dport)
{
	for (size_t i = 0; i < n; i++) {
		bool dst = r[i].dst_range ? dport >= r[i].dst && dport <= r[i].dst_last
					  : (dport & r[i].dst_mask) == r[i].dst;

		if (dst && (sport & r[i].src_mask) == r[i].src)
			return &r[i];
	}
	return NULL;
}

/*
 * Build for @n workers and check every (sport, dport) that matters: the
 * reserved range's ports, each listening port with many source ports, and
 * ports nobody owns (no rule: the kernel's in isolated mode).
 */
static int build_and_check(unsigned n, enum flow_listen_mode mode, enum flow_range_form form,
			   const uint16_t *listen, size_t nl)
{
	static struct flow_rule r[MAX_RULES];
	struct flow_plan p;
	char err[400];
	int nr;

	assert_int_equal(flow_plan_init(&p, n, 61440, 65535, err, sizeof(err)), 0);
	nr = flow_rules_build(&p, listen, nl, mode, form, r, MAX_RULES, err, sizeof(err));
	if (nr < 0)
		fail_msg("n=%u: %s", n, err);
	assert_true(nr <= MAX_RULES);
	/* Counting alone gives the same number. */
	assert_int_equal(flow_rules_build(&p, listen, nl, mode, form, NULL, 0, err, sizeof(err)),
			 nr);
	for (uint32_t dport = 61440 - 100; dport <= 65535; dport++) {
		const struct flow_rule *m = match(r, (size_t)nr, 40000, (uint16_t)dport);

		if (!flow_plan_reserved(&p, (uint16_t)dport)) {
			bool listening = false;

			for (size_t i = 0; i < nl; i++)
				listening |= listen[i] == dport;
			if (!listening)
				assert_null(m);
			continue;
		}
		assert_non_null(m);
		assert_int_equal(m->action, FLOW_RULE_QUEUE);
		assert_int_equal(m->queue, flow_plan_queue_of(&p, 40000, (uint16_t)dport));
	}
	for (size_t i = 0; i < nl; i++) {
		if (flow_plan_reserved(&p, listen[i]))
			continue;
		for (uint32_t sport = 0; sport < 65536; sport += 7) {
			const struct flow_rule *m =
			    match(r, (size_t)nr, (uint16_t)sport, listen[i]);

			assert_non_null(m);
			if (mode == FLOW_LISTEN_RSS && n > 1) {
				assert_int_equal(m->action, FLOW_RULE_RSS);
				assert_int_equal(m->queue, n);
			} else {
				assert_int_equal(m->action, FLOW_RULE_QUEUE);
				assert_int_equal(
				    m->queue, flow_plan_queue_of(&p, (uint16_t)sport, listen[i]));
			}
		}
	}
	assert_null(match(r, (size_t)nr, 40000, 22));
	return nr;
}

static const uint16_t one_port[] = {8080};

static void test_rules_realise_the_plan(void **state)
{
	static const uint16_t ports[] = {8080, 9000, 8080 /* twice */, 61500 /* in the range */};

	(void)state;
	/* 16 workers is the most flow_plan_init() allows on the LUNA range. */
	for (unsigned n = 1; n <= 16; n *= 2) {
		build_and_check(n, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, ports, 4);
		build_and_check(n, FLOW_LISTEN_RSS, FLOW_RANGE_PREFIX, ports, 4);
		build_and_check(n, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_LAST, ports, 4);
	}
	for (unsigned n = 3; n <= 15; n += 2) /* not powers of two: ranges only, or RSS */
		build_and_check(n, FLOW_LISTEN_RSS, FLOW_RANGE_PREFIX, one_port, 1);
	build_and_check(12, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, NULL, 0);
}

/*
 * The counts TRAFFIC.md quotes: prefix blocks per sub-range plus one rule
 * per queue per listening port (low bits) or one per port (RSS).
 */
static void test_rule_counts(void **state)
{
	(void)state;
	/* 4096 ports split in 2^k aligned sub-ranges: one block each. */
	assert_int_equal(build_and_check(1, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, one_port, 1),
			 2);
	assert_int_equal(build_and_check(2, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, one_port, 1),
			 4);
	assert_int_equal(build_and_check(4, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, one_port, 1),
			 8);
	assert_int_equal(build_and_check(8, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, one_port, 1),
			 16);
	assert_int_equal(build_and_check(16, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, one_port, 1),
			 32);
	assert_int_equal(build_and_check(4, FLOW_LISTEN_RSS, FLOW_RANGE_PREFIX, one_port, 1), 5);
	/* With range matching: one rule per queue whatever n is. */
	assert_int_equal(build_and_check(12, FLOW_LISTEN_RSS, FLOW_RANGE_LAST, one_port, 1), 13);
	/* 12 sub-ranges of 341 ports (the last 345): unaligned, 8 blocks each. */
	assert_int_equal(build_and_check(12, FLOW_LISTEN_RSS, FLOW_RANGE_PREFIX, NULL, 0), 96);
	assert_int_equal(build_and_check(12, FLOW_LISTEN_RSS, FLOW_RANGE_PREFIX, one_port, 1), 97);
	assert_int_equal(build_and_check(6, FLOW_LISTEN_RSS, FLOW_RANGE_PREFIX, one_port, 1), 46);
	assert_int_equal(build_and_check(3, FLOW_LISTEN_RSS, FLOW_RANGE_PREFIX, one_port, 1), 24);
}

static void test_refusals(void **state)
{
	struct flow_rule r[8];
	struct flow_plan p;
	char err[400] = "";

	(void)state;
	assert_int_equal(flow_plan_init(&p, 12, 61440, 65535, err, sizeof(err)), 0);
	assert_int_equal(flow_rules_build(&p, one_port, 1, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX,
					  r, 8, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "12 workers is not a power of two"));
	assert_non_null(strstr(err, "65536 per listening port (65536 for 1 port)"));
	assert_non_null(strstr(err, "RSS"));
	{
		static const uint16_t two[] = {80, 443};

		assert_int_equal(flow_rules_build(&p, two, 2, FLOW_LISTEN_LOW_BITS,
						  FLOW_RANGE_PREFIX, r, 8, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "(131072 for 2 ports)"));
	}
	/* A plan flow_plan_init() would refuse, and unknown enums. */
	p = (struct flow_plan){.n_queues = 0, .lo = 61440, .hi = 65535};
	assert_int_equal(flow_rules_build(&p, NULL, 0, FLOW_LISTEN_RSS, FLOW_RANGE_PREFIX, r, 8,
					  err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "workers"));
	p.n_queues = 4;
	assert_int_equal(flow_rules_build(&p, NULL, 0, (enum flow_listen_mode)5, FLOW_RANGE_PREFIX,
					  r, 8, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(flow_rules_build(NULL, NULL, 0, FLOW_LISTEN_RSS, FLOW_RANGE_PREFIX, r, 8,
					  err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(flow_rules_build(&p, NULL, 1, FLOW_LISTEN_RSS, FLOW_RANGE_PREFIX, r, 8,
					  err, sizeof(err)),
			 -EINVAL);
}

static void test_format(void **state)
{
	static const struct {
		enum flow_listen_mode mode;
		enum flow_range_form form;
		size_t rule;
		const char *text;
	} cases[] = {
	    {FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, 1,
	     "ingress pattern eth / ipv4 proto is 6 / tcp dst spec 62464 dst mask 0xfc00 / "
	     "end actions queue index 1 / end"},
	    {FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, 7,
	     "ingress pattern eth / ipv4 proto is 6 / tcp dst is 8080 src spec 3 src mask "
	     "0x0003 / end actions queue index 3 / end"},
	    {FLOW_LISTEN_RSS, FLOW_RANGE_LAST, 0,
	     "ingress pattern eth / ipv4 proto is 6 / tcp dst spec 61440 dst last 62463 dst "
	     "mask 0xffff / end actions queue index 0 / end"},
	    {FLOW_LISTEN_RSS, FLOW_RANGE_LAST, 4,
	     "ingress pattern eth / ipv4 proto is 6 / tcp dst is 8080 / end actions rss types "
	     "ipv4-tcp end queues 0..3 end / end"},
	};
	struct flow_rule r[8];
	struct flow_plan p;
	char err[200], text[256];

	(void)state;
	assert_int_equal(flow_plan_init(&p, 4, 61440, 65535, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = flow_rules_build(&p, one_port, 1, cases[i].mode, cases[i].form, r, 8, err,
					 sizeof(err));

		assert_true(n > (int)cases[i].rule && n <= 8);
		flow_rule_format(&r[cases[i].rule], text, sizeof(text));
		assert_string_equal(text, cases[i].text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blocks_cover_exactly),
	    cmocka_unit_test(test_rules_realise_the_plan),
	    cmocka_unit_test(test_rule_counts),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
