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

#include <rte_byteorder.h>
#include <rte_flow.h>

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
	assert_int_equal(flow_rules_build(&p, NULL, 0, FLOW_LISTEN_RSS, (enum flow_range_form)5, r,
					  8, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "range form 5"));
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

/*
 * Room for @cap rules is all that is written, however many the plan needs;
 * the count is still the full one.
 */
static void test_cap_is_respected(void **state)
{
	struct flow_rule r[5];
	struct flow_plan p;
	char err[200];

	(void)state;
	assert_int_equal(flow_plan_init(&p, 4, 61440, 65535, err, sizeof(err)), 0);
	for (size_t cap = 0; cap < 4; cap++) {
		memset(r, 0, sizeof(r));
		r[cap] = (struct flow_rule){.dst = 0xabcd, .queue = 77}; /* the canary */
		assert_int_equal(flow_rules_build(&p, one_port, 1, FLOW_LISTEN_LOW_BITS,
						  FLOW_RANGE_PREFIX, r, cap, err, sizeof(err)),
				 8);
		assert_int_equal(r[cap].dst, 0xabcd);
		assert_int_equal(r[cap].queue, 77);
		if (cap)
			assert_int_equal(r[cap - 1].queue, cap - 1);
	}
}

/*
 * Listening ports inside the reserved range get no rules of their own (the
 * range rules already steer them), and a port listed twice gets its rules
 * once: counted with one rule per port (one queue).
 */
static void test_listen_ports_need_own_rules_once(void **state)
{
	static const uint16_t in_range[] = {61500, 65535};
	static const uint16_t twice[] = {8080, 8080, 9000, 8080, 9000};
	struct flow_rule r[16];
	struct flow_plan p;
	char err[400];

	(void)state;
	assert_int_equal(flow_plan_init(&p, 1, 61440, 65535, err, sizeof(err)), 0);
	assert_int_equal(flow_rules_build(&p, NULL, 0, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, r,
					  16, err, sizeof(err)),
			 1);
	assert_int_equal(flow_rules_build(&p, in_range, 2, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX,
					  r, 16, err, sizeof(err)),
			 1);
	assert_int_equal(flow_rules_build(&p, twice, 5, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, r,
					  16, err, sizeof(err)),
			 3);
	assert_int_equal(r[1].dst, 8080);
	assert_int_equal(r[2].dst, 9000);
	/* Only ports in the range: low bits with 12 workers needs no per-source rules. */
	assert_int_equal(flow_plan_init(&p, 12, 61440, 65535, err, sizeof(err)), 0);
	assert_int_equal(flow_rules_build(&p, in_range, 2, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX,
					  NULL, 0, err, sizeof(err)),
			 96);
}

/* What to_rte() hands the PMD for one rule, copied out of flow_rule_rte()'s callback. */
struct seen_rule {
	struct rte_flow_attr attr;
	enum rte_flow_item_type item[4];
	struct rte_flow_item_ipv4 ip_spec, ip_mask;
	struct rte_flow_item_tcp tcp_spec, tcp_mask, tcp_last;
	bool has_last;
	enum rte_flow_action_type action[2];
	struct rte_flow_action_queue queue;
	unsigned rss_n;
	uint16_t rss_queue[FLOW_PLAN_MAX_QUEUES];
};

static void see_rule(const struct rte_flow_attr *attr, const struct rte_flow_item *pattern,
		     const struct rte_flow_action *actions, void *arg)
{
	struct seen_rule *s = arg;

	memset(s, 0, sizeof(*s));
	s->attr = *attr;
	for (int i = 0; i < 4; i++)
		s->item[i] = pattern[i].type;
	s->ip_spec = *(const struct rte_flow_item_ipv4 *)pattern[1].spec;
	s->ip_mask = *(const struct rte_flow_item_ipv4 *)pattern[1].mask;
	s->tcp_spec = *(const struct rte_flow_item_tcp *)pattern[2].spec;
	s->tcp_mask = *(const struct rte_flow_item_tcp *)pattern[2].mask;
	s->has_last = pattern[2].last != NULL;
	if (s->has_last)
		s->tcp_last = *(const struct rte_flow_item_tcp *)pattern[2].last;
	s->action[0] = actions[0].type;
	s->action[1] = actions[1].type;
	if (actions[0].type == RTE_FLOW_ACTION_TYPE_QUEUE) {
		s->queue = *(const struct rte_flow_action_queue *)actions[0].conf;
	} else if (actions[0].type == RTE_FLOW_ACTION_TYPE_RSS) {
		const struct rte_flow_action_rss *rss = actions[0].conf;

		s->rss_n = rss->queue_num;
		memcpy(s->rss_queue, rss->queue, rss->queue_num * sizeof(uint16_t));
	}
}

/*
 * The rte_flow form of each kind of rule: ingress, ETH / IPV4 proto TCP /
 * TCP, ports in network order; a range rule's last holds the destination's
 * end and the source's spec (a source last of 0 below a non-zero spec
 * would be an empty range); QUEUE names the rule's queue; RSS lists
 * queues 0..n-1.
 */
static void test_rte_form(void **state)
{
	struct seen_rule s;
	struct flow_plan p;
	struct flow_rule r[40];
	char err[200];
	int n;

	(void)state;
	assert_int_equal(flow_plan_init(&p, 4, 61440, 65535, err, sizeof(err)), 0);
	n = flow_rules_build(&p, one_port, 1, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, r, 40, err,
			     sizeof(err));
	assert_int_equal(n, 8);
	for (int i = 0; i < n; i++) {
		flow_rule_rte(&r[i], see_rule, &s);
		assert_int_equal(s.attr.ingress, 1);
		assert_int_equal(s.item[0], RTE_FLOW_ITEM_TYPE_ETH);
		assert_int_equal(s.item[1], RTE_FLOW_ITEM_TYPE_IPV4);
		assert_int_equal(s.item[2], RTE_FLOW_ITEM_TYPE_TCP);
		assert_int_equal(s.item[3], RTE_FLOW_ITEM_TYPE_END);
		assert_int_equal(s.ip_spec.hdr.next_proto_id, 6);
		assert_int_equal(s.ip_mask.hdr.next_proto_id, 0xff);
		assert_int_equal(rte_be_to_cpu_16(s.tcp_spec.hdr.dst_port), r[i].dst);
		assert_int_equal(rte_be_to_cpu_16(s.tcp_mask.hdr.dst_port), r[i].dst_mask);
		assert_int_equal(rte_be_to_cpu_16(s.tcp_spec.hdr.src_port), r[i].src);
		assert_int_equal(rte_be_to_cpu_16(s.tcp_mask.hdr.src_port), r[i].src_mask);
		assert_false(s.has_last);
		assert_int_equal(s.action[0], RTE_FLOW_ACTION_TYPE_QUEUE);
		assert_int_equal(s.action[1], RTE_FLOW_ACTION_TYPE_END);
		assert_int_equal(s.queue.index, r[i].queue);
	}
	assert_int_equal(r[3].queue, 3);    /* the last sub-range's queue, not 0 */
	assert_int_equal(s.queue.index, 3); /* 8080 with source port low bits 3 */

	/* Range form: one rule per queue, spec..last on the destination. */
	n = flow_rules_build(&p, one_port, 1, FLOW_LISTEN_RSS, FLOW_RANGE_LAST, r, 40, err,
			     sizeof(err));
	assert_int_equal(n, 5);
	flow_rule_rte(&r[2], see_rule, &s);
	assert_true(s.has_last);
	assert_int_equal(rte_be_to_cpu_16(s.tcp_spec.hdr.dst_port), 63488);
	assert_int_equal(rte_be_to_cpu_16(s.tcp_last.hdr.dst_port), 64511);
	assert_int_equal(rte_be_to_cpu_16(s.tcp_mask.hdr.dst_port), 0xffff);
	assert_int_equal(s.queue.index, 2);
	flow_rule_rte(&r[4], see_rule, &s); /* 8080 by RSS over the four queues */
	assert_false(s.has_last);
	assert_int_equal(s.action[0], RTE_FLOW_ACTION_TYPE_RSS);
	assert_int_equal(s.rss_n, 4);
	for (unsigned q = 0; q < 4; q++)
		assert_int_equal(s.rss_queue[q], q);

	/* A range rule that also matches source ports: the source's last is its spec. */
	{
		const struct flow_rule both = {.dst = 61440,
					       .dst_last = 62463,
					       .dst_mask = 0xffff,
					       .dst_range = true,
					       .src = 3,
					       .src_mask = 3,
					       .queue = 1};

		flow_rule_rte(&both, see_rule, &s);
		assert_true(s.has_last);
		assert_int_equal(rte_be_to_cpu_16(s.tcp_spec.hdr.src_port), 3);
		assert_int_equal(rte_be_to_cpu_16(s.tcp_last.hdr.src_port), 3);
		assert_int_equal(rte_be_to_cpu_16(s.tcp_last.hdr.dst_port), 62463);
		assert_int_equal(s.queue.index, 1);
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
	    cmocka_unit_test(test_cap_is_respected),
	    cmocka_unit_test(test_listen_ports_need_own_rules_once),
	    cmocka_unit_test(test_rte_form),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
