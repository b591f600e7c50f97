/*
 * flow_rules.h - the port-to-queue plan (flow_plan.h) as a NIC's rte_flow
 * rules (LUNA §7.1 flow bifurcation, §7.4 "complex filtering rules").
 *
 * On a NIC with a bifurcated driver (mlx5, or a PF with flow director) the
 * port runs in isolated mode: only traffic that matches a rule reaches
 * lunar, everything else stays with the kernel. One rule set realises the
 * plan:
 *  - per queue q: ETH / IPV4 (TCP) / TCP dst in q's client sub-range
 *    -> QUEUE q. Either one rule with a spec/last range, for NICs that
 *    match ranges, or the sub-range cut into aligned power-of-two blocks
 *    (dst & mask == value), which is all a commodity flow director can
 *    match: at most 30 rules per sub-range, usually far fewer;
 *  - per listening port P: with FLOW_LISTEN_LOW_BITS and n a power of two,
 *    one rule per queue, TCP dst P and src & (n - 1) == q -> QUEUE q; with
 *    FLOW_LISTEN_RSS one rule, TCP dst P -> RSS over queues 0..n-1.
 *    Source port % n for any other n cannot be written with masks or
 *    ranges (see flow_rules_build()) and is refused.
 *
 * The builder is pure (rules are plain structs, unit-tested); applying
 * them needs a started EAL and a configured port.
 */
#ifndef LUNAR_CTL_FLOW_RULES_H
#define LUNAR_CTL_FLOW_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/flow_plan.h"

/** An aligned power-of-two block of ports: port & mask == value. */
struct flow_port_block {
	uint16_t value, mask;
};

/** How a rule matches a range of destination ports. */
enum flow_range_form {
	FLOW_RANGE_PREFIX = 0, /**< aligned blocks, value/mask: every flow director */
	FLOW_RANGE_LAST = 1,   /**< one rule, spec..last: NICs that match ranges */
};

enum flow_rule_action {
	FLOW_RULE_QUEUE = 0, /**< to rx queue @queue */
	FLOW_RULE_RSS = 1,   /**< spread over queues 0..@queue - 1 by the TCP/IPv4 hash */
};

/** One rule: ETH / IPV4 proto TCP / TCP ports -> action. */
struct flow_rule {
	/* Destination port: dst..dst_last if dst_range, else (dport & dst_mask) == dst. */
	uint16_t dst, dst_mask, dst_last;
	bool dst_range;
	/* Source port: (sport & src_mask) == src; mask 0 matches every port. */
	uint16_t src, src_mask;
	enum flow_rule_action action;
	uint16_t queue; /**< QUEUE: the queue; RSS: the number of queues */
};

/**
 * flow_port_blocks() - cut [lo, hi] into the fewest aligned power-of-two
 * blocks (what a flow director's port mask can match).
 * @out: where the blocks go (may be NULL to count), in ascending order.
 * @cap: room in @out; blocks beyond it are counted, not written.
 *
 * Return: the number of blocks [lo, hi] needs: 1..30 (0 if lo > hi).
 */
size_t flow_port_blocks(uint16_t lo, uint16_t hi, struct flow_port_block *out, size_t cap);

/**
 * flow_rules_build() - the rules that realise @plan on a NIC.
 * @plan: the plan (flow_plan_init()).
 * @listen: ports lunar listens on (duplicates and ports inside the reserved
 *          range, which the range rules already cover, get no rule of their own).
 * @n_listen: number of entries in @listen.
 * @mode: how listening-port connections are spread.
 * @form: how a destination-port range is written.
 * @out: where the rules go (may be NULL to count them); reserved-range
 *       rules first, queue by queue, then the listening ports'.
 * @cap: room in @out; rules beyond it are counted, not written.
 * @err: buffer for the reason of a refusal (may be NULL).
 * @errlen: size of @err.
 *
 * FLOW_LISTEN_LOW_BITS with listening ports and a worker count that is not
 * a power of two is refused: no two source ports that differ in one bit
 * (a mask's wildcard) or are adjacent (a range) have the same residue mod
 * such an n, so every rule could match only one source port, 65536 rules
 * per listening port. The message names that count and the ways out (a
 * power-of-two number of workers, or RSS mode).
 *
 * Return: the number of rules the plan needs (may exceed @cap), or -EINVAL
 * with the reason in @err.
 */
int flow_rules_build(const struct flow_plan *plan, const uint16_t *listen, size_t n_listen,
		     enum flow_listen_mode mode, enum flow_range_form form, struct flow_rule *out,
		     size_t cap, char *err, size_t errlen);

/**
 * flow_rule_format() - a rule in dpdk-testpmd's `flow create` syntax, for
 * logs and error messages ("ingress pattern eth / ipv4 proto is 6 / tcp
 * dst spec 61440 dst mask 0xfc00 / end actions queue index 0 / end").
 *
 * Return: as snprintf().
 */
int flow_rule_format(const struct flow_rule *r, char *buf, size_t len);

struct rte_flow;
struct rte_flow_attr;
struct rte_flow_item;
struct rte_flow_action;

/**
 * flow_rule_rte() - for unit tests only: call @see with the attribute,
 * pattern and actions flow_rules_apply() gives the PMD for @r (valid only
 * during the call). No device a unit test can reach takes rte_flow rules,
 * so this is how a test reads what a NIC would be given.
 */
void flow_rule_rte(const struct flow_rule *r,
		   void (*see)(const struct rte_flow_attr *attr,
			       const struct rte_flow_item *pattern,
			       const struct rte_flow_action *actions, void *arg),
		   void *arg);

/**
 * flow_rules_apply() - put a port in isolated mode and install @rules.
 * @port_id: a configured, not yet started ethdev port. Isolation is set
 *           first (rte_flow_isolate(); DPDK recommends it before
 *           rte_eth_dev_configure(), and some PMDs refuse it on a started
 *           port); the QUEUE/RSS actions need the rx queues set up.
 * @rules: from flow_rules_build().
 * @n: number of rules.
 * @handles: @n slots, filled with the created flows (for flow_rules_remove()).
 * @err: buffer naming the device and the reason of a failure (may be NULL).
 * @errlen: size of @err.
 *
 * Every rule is validated before any is created; on a failure the rules
 * already created are destroyed again and isolated mode is turned off
 * (untested here: no device on these machines accepts isolated mode). A device without flow support
 * (DPDK 22.11: ENOSYS from memif, af_xdp, null and ring vdevs, which have
 * no flow ops; ENOTSUP from a PMD that says so itself) is reported by name
 * with the way out: the af_xdp port and lunar's XDP steering.
 *
 * Return: 0, or a negative errno (-ENOTSUP for a device without flow rules).
 */
int flow_rules_apply(uint16_t port_id, const struct flow_rule *rules, size_t n,
		     struct rte_flow **handles, char *err, size_t errlen);

/** flow_rules_remove() - destroy the flows flow_rules_apply() created. */
void flow_rules_remove(uint16_t port_id, struct rte_flow **handles, size_t n);

#endif
