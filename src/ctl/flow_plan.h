/*
 * flow_plan.h - which worker (rx queue) owns which TCP traffic (LUNA §7.4).
 *
 * One plan, read by everything that must agree on it: the TCP stack (which
 * client ports a worker may pick), the XDP steering program (which queue a
 * segment must arrive on), rte_flow rules for real NICs, and tests.
 *
 * With N workers and the reserved range [lo, hi]:
 *  - Client side: worker q owns the q-th of N contiguous sub-ranges of the
 *    reserved range (LUNA: "dest port 61440-62463 to Thread1"). Segments to
 *    a port in that sub-range belong to q.
 *  - Server side: a listening port is shared by every worker; a connection
 *    belongs to worker (source port mod N): LUNA's "lowest bits of the TCP
 *    source port" when N is a power of two. Where the port spreads
 *    connections by RSS instead, a connection belongs to the queue its SYN
 *    arrived on and this rule is not used.
 *  - A client worker q picks only ports of its sub-range whose value mod N
 *    is q. A lunar server with as many workers then serves the connection
 *    on its worker q too: over memif, where the sender picks the queue, that
 *    is the only queue the segments can come back on.
 * Pure functions, no state beyond the struct: unit-tested directly.
 */
#ifndef LUNAR_CTL_FLOW_PLAN_H
#define LUNAR_CTL_FLOW_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FLOW_PLAN_MAX_QUEUES 64

struct flow_plan {
	unsigned n_queues;
	uint16_t lo, hi; /* the reserved client range */
};

/**
 * How connections to a listening port are spread over the queues: by the
 * source port's low bits (the plan's own rule, flow_plan_queue_of()), or by
 * the NIC's RSS hash, the connection then belonging to the queue its SYN
 * arrived on. The steering program and the rte_flow rules take this
 * alongside the plan; the values equal LUNAR_STEER_LISTEN_* (steer_abi.h).
 */
enum flow_listen_mode {
	FLOW_LISTEN_LOW_BITS = 0,
	FLOW_LISTEN_RSS = 1,
};

/** Ports a client connection of one queue may use: p in [lo, hi] with p % mod == rem. */
struct flow_port_set {
	uint16_t lo, hi;
	uint16_t mod, rem;
};

/**
 * @return 0, or -EINVAL with a reason in @err (no queues, too many, or a
 *         reserved range too small to give each queue 16 usable ports).
 */
int flow_plan_init(struct flow_plan *p, unsigned n_queues, uint16_t lo, uint16_t hi, char *err,
		   size_t errlen);

/**
 * On an interface shared with the kernel (af_xdp), the reserved range
 * @lo..@hi must not hold ports the kernel picks for its own connections:
 * the steering program would give their replies to lunar, which resets
 * them. @klo..@khi is net.ipv4.ip_local_port_range, @kreserved
 * net.ipv4.ip_local_reserved_ports ("8080,9000-9100"; ports the kernel
 * never picks). @return 0, or -EINVAL with the overlap and the fix in
 * @err.
 */
int flow_plan_check_kernel_ports(uint16_t lo, uint16_t hi, unsigned klo, unsigned khi,
				 const char *kreserved, char *err, size_t errlen);

/**
 * On an interface shared with the kernel (af_xdp), a kernel socket that
 * listens on a port of the reserved range @lo..@hi, on @ip (host order) or
 * on the wildcard address, would never see its connections: the steering
 * program gives them to lunar. @table is /proc/net/tcp (@v6 false) or
 * /proc/net/tcp6 (@v6 true, where :: and ::ffff:@ip count, as a
 * dual-stack socket takes IPv4), read line by line from where it stands.
 * @ip 0 (the program steers every address) counts any address but
 * loopback. Lines that do not parse are skipped.
 * @return the first such port, or 0.
 */
unsigned flow_plan_kernel_listener(FILE *table, bool v6, uint16_t lo, uint16_t hi, uint32_t ip);

/** The contiguous sub-range of the reserved range queue @q owns. */
void flow_plan_client_range(const struct flow_plan *p, unsigned q, uint16_t *lo, uint16_t *hi);

/** The client ports queue @q picks from (its sub-range, source port mod N == q). */
struct flow_port_set flow_plan_client_ports(const struct flow_plan *p, unsigned q);

/** @return true if @port is in the reserved range. */
static inline bool flow_plan_reserved(const struct flow_plan *p, uint16_t port)
{
	return port >= p->lo && port <= p->hi;
}

/**
 * The queue that owns an incoming TCP segment: by destination port when it
 * is in the reserved range (our client connection), else by the source
 * port's low bits (a connection to a port we listen on).
 *
 * bpf/lunar_plan.bpf.h (lunar_plan_owner()) computes the same in the XDP
 * and tc steering programs, which cannot link this file: the two must agree,
 * and tests/unit/ctl/test_xdp.c runs both programs against this function.
 */
unsigned flow_plan_queue_of(const struct flow_plan *p, uint16_t sport, uint16_t dport);

/** Does the connection (local port, remote port) belong to queue @q? */
static inline bool flow_plan_owns(const struct flow_plan *p, unsigned q, uint16_t lport,
				  uint16_t rport)
{
	return flow_plan_queue_of(p, rport, lport) == q;
}

#endif
