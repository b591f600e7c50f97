/*
 * flow_rules.c - the port-to-queue plan as rte_flow rules (see flow_rules.h):
 * a pure builder, and the DPDK calls that install its rules.
 */
#include "ctl/flow_rules.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>

#include "base/log.h"

size_t flow_port_blocks(uint16_t lo, uint16_t hi, struct flow_port_block *out, size_t cap)
{
	size_t n = 0;

	/* Greedy from lo: the largest block aligned at p that stays within hi. */
	for (uint32_t p = lo; p <= hi;) {
		uint32_t size = p ? p & (~p + 1) : 65536; /* p's alignment */

		while (p + size - 1 > hi)
			size >>= 1;
		if (out && n < cap)
			out[n] = (struct flow_port_block){.value = (uint16_t)p,
							  .mask = (uint16_t) ~(size - 1)};
		n++;
		p += size;
	}
	return n;
}

static void emit(struct flow_rule *out, size_t cap, size_t *count, struct flow_rule r)
{
	if (out && *count < cap)
		out[*count] = r;
	(*count)++;
}

static bool power_of_two(unsigned n)
{
	return n && !(n & (n - 1));
}

/* Does listening port @i get rules of its own (first time seen, outside the range)? */
static bool own_listen(const struct flow_plan *p, const uint16_t *listen, size_t i)
{
	if (flow_plan_reserved(p, listen[i]))
		return false; /* the range rules already send it by the plan */
	for (size_t j = 0; j < i; j++)
		if (listen[j] == listen[i])
			return false;
	return true;
}

int flow_rules_build(const struct flow_plan *plan, const uint16_t *listen, size_t n_listen,
		     enum flow_listen_mode mode, enum flow_range_form form, struct flow_rule *out,
		     size_t cap, char *err, size_t errlen)
{
	struct flow_plan check;
	size_t count = 0, n_own = 0;
	unsigned n;

	if (!plan || (n_listen && !listen)) {
		lunar_set_err(err, errlen, "no plan or no listening port list");
		return -EINVAL;
	}
	if (flow_plan_init(&check, plan->n_queues, plan->lo, plan->hi, err, errlen) < 0)
		return -EINVAL;
	if ((mode != FLOW_LISTEN_LOW_BITS && mode != FLOW_LISTEN_RSS) ||
	    (form != FLOW_RANGE_PREFIX && form != FLOW_RANGE_LAST)) {
		lunar_set_err(err, errlen, "unknown listen mode %d or range form %d", mode, form);
		return -EINVAL;
	}
	n = plan->n_queues;
	for (size_t i = 0; i < n_listen; i++)
		n_own += own_listen(plan, listen, i);
	if (n_own && n > 1 && mode == FLOW_LISTEN_LOW_BITS && !power_of_two(n)) {
		lunar_set_err(err, errlen,
			      "%u workers is not a power of two: spreading connections to a "
			      "listening port by source port %% %u takes one exact-match rule "
			      "per source port, 65536 per listening port (%zu for %zu port%s), "
			      "as no two ports a mask or a range can group leave the same "
			      "remainder; run 1, 2, 4, 8, 16, 32 or 64 workers, or spread "
			      "listening ports by RSS",
			      n, n, 65536 * n_own, n_own, n_own == 1 ? "" : "s");
		return -EINVAL;
	}

	for (unsigned q = 0; q < n; q++) {
		struct flow_port_block blocks[32];
		uint16_t lo, hi;
		size_t nb;

		flow_plan_client_range(plan, q, &lo, &hi);
		if (form == FLOW_RANGE_LAST) {
			emit(out, cap, &count,
			     (struct flow_rule){.dst = lo,
						.dst_last = hi,
						.dst_mask = 0xffff,
						.dst_range = true,
						.queue = (uint16_t)q});
			continue;
		}
		nb = flow_port_blocks(lo, hi, blocks, 32);
		for (size_t b = 0; b < nb; b++)
			emit(out, cap, &count,
			     (struct flow_rule){.dst = blocks[b].value,
						.dst_mask = blocks[b].mask,
						.queue = (uint16_t)q});
	}
	for (size_t i = 0; i < n_listen; i++) {
		struct flow_rule r = {.dst = listen[i], .dst_mask = 0xffff};

		if (!own_listen(plan, listen, i))
			continue;
		if (n == 1) {
			emit(out, cap, &count, r); /* queue 0 */
		} else if (mode == FLOW_LISTEN_RSS) {
			r.action = FLOW_RULE_RSS;
			r.queue = (uint16_t)n;
			emit(out, cap, &count, r);
		} else {
			/* n a power of two: source port % n is its low bits. */
			for (unsigned q = 0; q < n; q++) {
				r.src = (uint16_t)q;
				r.src_mask = (uint16_t)(n - 1);
				r.queue = (uint16_t)q;
				emit(out, cap, &count, r);
			}
		}
	}
	return (int)count;
}

int flow_rule_format(const struct flow_rule *r, char *buf, size_t len)
{
	char dst[64], src[48] = "", act[64];

	if (r->dst_range)
		snprintf(dst, sizeof(dst), "dst spec %u dst last %u dst mask 0xffff", r->dst,
			 r->dst_last);
	else if (r->dst_mask == 0xffff)
		snprintf(dst, sizeof(dst), "dst is %u", r->dst);
	else
		snprintf(dst, sizeof(dst), "dst spec %u dst mask 0x%04x", r->dst, r->dst_mask);
	if (r->src_mask)
		snprintf(src, sizeof(src), " src spec %u src mask 0x%04x", r->src, r->src_mask);
	if (r->action == FLOW_RULE_RSS)
		snprintf(act, sizeof(act), "rss types ipv4-tcp end queues 0..%u end", r->queue - 1);
	else
		snprintf(act, sizeof(act), "queue index %u", r->queue);
	return snprintf(buf, len,
			"ingress pattern eth / ipv4 proto is 6 / tcp %s%s / end actions %s / end",
			dst, src, act);
}

/* One rule as rte_flow items and actions (the structs live in the caller's frame). */
struct rte_rule {
	struct rte_flow_attr attr;
	struct rte_flow_item_ipv4 ip_spec, ip_mask;
	struct rte_flow_item_tcp tcp_spec, tcp_mask, tcp_last;
	struct rte_flow_item pattern[4];
	struct rte_flow_action_queue queue;
	struct rte_flow_action_rss rss;
	uint16_t rss_queues[FLOW_PLAN_MAX_QUEUES];
	struct rte_flow_action actions[2];
};

static void to_rte(const struct flow_rule *r, struct rte_rule *x)
{
	memset(x, 0, sizeof(*x));
	x->attr.ingress = 1;
	x->ip_spec.hdr.next_proto_id = IPPROTO_TCP;
	x->ip_mask.hdr.next_proto_id = 0xff;
	x->tcp_spec.hdr.dst_port = rte_cpu_to_be_16(r->dst);
	x->tcp_mask.hdr.dst_port = rte_cpu_to_be_16(r->dst_range ? 0xffff : r->dst_mask);
	x->tcp_spec.hdr.src_port = rte_cpu_to_be_16(r->src);
	x->tcp_mask.hdr.src_port = rte_cpu_to_be_16(r->src_mask);
	x->pattern[0] = (struct rte_flow_item){.type = RTE_FLOW_ITEM_TYPE_ETH};
	x->pattern[1] = (struct rte_flow_item){
	    .type = RTE_FLOW_ITEM_TYPE_IPV4, .spec = &x->ip_spec, .mask = &x->ip_mask};
	x->pattern[2] = (struct rte_flow_item){
	    .type = RTE_FLOW_ITEM_TYPE_TCP, .spec = &x->tcp_spec, .mask = &x->tcp_mask};
	if (r->dst_range) {
		/* Only the destination is a range: the source's last equals its spec. */
		x->tcp_last.hdr.dst_port = rte_cpu_to_be_16(r->dst_last);
		x->tcp_last.hdr.src_port = x->tcp_spec.hdr.src_port;
		x->pattern[2].last = &x->tcp_last;
	}
	x->pattern[3] = (struct rte_flow_item){.type = RTE_FLOW_ITEM_TYPE_END};
	if (r->action == FLOW_RULE_RSS) {
		unsigned n = r->queue < FLOW_PLAN_MAX_QUEUES ? r->queue : FLOW_PLAN_MAX_QUEUES;

		for (unsigned q = 0; q < n; q++)
			x->rss_queues[q] = (uint16_t)q;
		x->rss = (struct rte_flow_action_rss){.func = RTE_ETH_HASH_FUNCTION_DEFAULT,
						      .types = RTE_ETH_RSS_NONFRAG_IPV4_TCP,
						      .queue_num = n,
						      .queue = x->rss_queues};
		x->actions[0] =
		    (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_RSS, .conf = &x->rss};
	} else {
		x->queue.index = r->queue;
		x->actions[0] =
		    (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &x->queue};
	}
	x->actions[1] = (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_END};
}

void flow_rule_rte(const struct flow_rule *r,
		   void (*see)(const struct rte_flow_attr *attr,
			       const struct rte_flow_item *pattern,
			       const struct rte_flow_action *actions, void *arg),
		   void *arg)
{
	struct rte_rule x;

	to_rte(r, &x);
	see(&x.attr, x.pattern, x.actions, arg);
}

/* "port 0 (net_memif0, driver net_memif)" */
static void describe_port(uint16_t port_id, char *buf, size_t len)
{
	char name[RTE_ETH_NAME_MAX_LEN] = "?";
	struct rte_eth_dev_info info;
	const char *drv = "?";

	rte_eth_dev_get_name_by_port(port_id, name);
	if (rte_eth_dev_info_get(port_id, &info) == 0 && info.driver_name)
		drv = info.driver_name;
	snprintf(buf, len, "port %u (%s, driver %s)", port_id, name, drv);
}

static const char *flow_msg(const struct rte_flow_error *fe, int rc)
{
	return fe->message ? fe->message : rte_strerror(-rc);
}

void flow_rules_remove(uint16_t port_id, struct rte_flow **handles, size_t n)
{
	struct rte_flow_error fe;

	for (size_t i = 0; i < n; i++) {
		if (handles[i])
			rte_flow_destroy(port_id, handles[i], &fe);
		handles[i] = NULL;
	}
}

/*
 * Rules refused: the port goes back to taking all traffic. Left isolated,
 * it would deliver nothing at all to whoever drives it next (the kernel's
 * fallback, a retry with other rules).
 */
static void leave_isolated(uint16_t port_id)
{
	struct rte_flow_error fe;

	memset(&fe, 0, sizeof(fe));
	rte_flow_isolate(port_id, 0, &fe);
}

int flow_rules_apply(uint16_t port_id, const struct flow_rule *rules, size_t n,
		     struct rte_flow **handles, char *err, size_t errlen)
{
	struct rte_flow_error fe;
	struct rte_rule x;
	char port[RTE_ETH_NAME_MAX_LEN + 64], text[256];
	int rc;

	if (!rte_eth_dev_is_valid_port(port_id)) {
		lunar_set_err(err, errlen, "port %u does not exist", port_id);
		return -ENODEV;
	}
	if (n && (!rules || !handles)) {
		lunar_set_err(err, errlen, "no rules or no room for their handles");
		return -EINVAL;
	}
	describe_port(port_id, port, sizeof(port));
	memset(&fe, 0, sizeof(fe));
	rc = rte_flow_isolate(port_id, 1, &fe);
	if (rc == -ENOSYS || rc == -ENOTSUP) {
		lunar_set_err(err, errlen,
			      "%s has no rte_flow support (rte_flow_isolate: %s), so it cannot "
			      "split traffic between lunar and the kernel in hardware; on this "
			      "device use an af_xdp port, whose XDP program does the split "
			      "(docs/TRAFFIC.md)",
			      port, flow_msg(&fe, rc));
		return -ENOTSUP;
	}
	if (rc) {
		lunar_set_err(
		    err, errlen,
		    "%s refused isolated mode: %s (call this before "
		    "rte_eth_dev_start(); some PMDs want it before rte_eth_dev_configure())",
		    port, flow_msg(&fe, rc));
		return rc;
	}
	/* All or nothing: validate every rule before creating any. */
	for (size_t i = 0; i < n; i++) {
		to_rte(&rules[i], &x);
		memset(&fe, 0, sizeof(fe));
		rc = rte_flow_validate(port_id, &x.attr, x.pattern, x.actions, &fe);
		if (rc) {
			flow_rule_format(&rules[i], text, sizeof(text));
			lunar_set_err(err, errlen,
				      "%s refuses rule %zu of %zu (flow create %u %s): %s", port,
				      i + 1, n, port_id, text, flow_msg(&fe, rc));
			leave_isolated(port_id);
			return rc;
		}
	}
	for (size_t i = 0; i < n; i++) {
		to_rte(&rules[i], &x);
		memset(&fe, 0, sizeof(fe));
		handles[i] = rte_flow_create(port_id, &x.attr, x.pattern, x.actions, &fe);
		if (!handles[i]) {
			rc = rte_errno ? -rte_errno : -EIO;
			flow_rule_format(&rules[i], text, sizeof(text));
			lunar_set_err(err, errlen,
				      "%s validated but could not create rule %zu of %zu (flow "
				      "create %u %s): %s; the %zu rules before it were removed",
				      port, i + 1, n, port_id, text, flow_msg(&fe, rc), i);
			flow_rules_remove(port_id, handles, i);
			leave_isolated(port_id);
			return rc;
		}
	}
	return 0;
}
