/*
 * flow_plan.c - the port-to-queue plan of LUNA §7.4 (see flow_plan.h).
 */
#include "ctl/flow_plan.h"

#include <errno.h>

#include "base/log.h"

int flow_plan_init(struct flow_plan *p, unsigned n_queues, uint16_t lo, uint16_t hi, char *err,
		   size_t errlen)
{
	if (n_queues == 0 || n_queues > FLOW_PLAN_MAX_QUEUES) {
		lunar_set_err(err, errlen, "%u workers: expected 1..%u", n_queues,
			      FLOW_PLAN_MAX_QUEUES);
		return -EINVAL;
	}
	/* Each queue keeps at least 16 ports of its own residue class. */
	if (lo > hi || (unsigned)(hi - lo + 1) < 16u * n_queues * n_queues) {
		lunar_set_err(err, errlen,
			      "reserved range %u-%u is too small for %u workers: each needs at "
			      "least %u ports; widen --reserved",
			      lo, hi, n_queues, 16u * n_queues);
		return -EINVAL;
	}
	*p = (struct flow_plan){.n_queues = n_queues, .lo = lo, .hi = hi};
	return 0;
}

static unsigned sub_size(const struct flow_plan *p)
{
	return ((unsigned)p->hi - p->lo + 1) / p->n_queues;
}

void flow_plan_client_range(const struct flow_plan *p, unsigned q, uint16_t *lo, uint16_t *hi)
{
	unsigned size = sub_size(p);

	*lo = (uint16_t)(p->lo + q * size);
	/* The last queue also takes the remainder of an uneven split. */
	*hi = q + 1 == p->n_queues ? p->hi : (uint16_t)(*lo + size - 1);
}

struct flow_port_set flow_plan_client_ports(const struct flow_plan *p, unsigned q)
{
	struct flow_port_set s = {.mod = (uint16_t)p->n_queues, .rem = (uint16_t)q};

	flow_plan_client_range(p, q, &s.lo, &s.hi);
	return s;
}

/*
 * Mirrored by lunar_plan_owner() in bpf/lunar_plan.bpf.h (the steering
 * programs' copy): change both or neither; test_xdp.c compares them.
 */
unsigned flow_plan_queue_of(const struct flow_plan *p, uint16_t sport, uint16_t dport)
{
	if (flow_plan_reserved(p, dport)) {
		unsigned q = ((unsigned)dport - p->lo) / sub_size(p);

		return q < p->n_queues ? q : p->n_queues - 1;
	}
	return sport % p->n_queues;
}
