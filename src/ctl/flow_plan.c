/*
 * flow_plan.c - the port-to-queue plan of LUNA §7.4 (see flow_plan.h).
 */
#include "ctl/flow_plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* Mark the ports of a "8080,9000-9100" list in @bits; false if it does not parse. */
static bool mark_port_list(const char *s, uint8_t *bits)
{
	while (*s && *s != '\n') {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s || a > 65535)
			return false;
		s = end;
		if (*s == '-') {
			b = strtoul(s + 1, &end, 10);
			if (end == s + 1 || b > 65535 || b < a)
				return false;
			s = end;
		}
		for (unsigned long p = a; p <= b; p++)
			bits[p / 8] |= (uint8_t)(1u << (p % 8));
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return false;
	}
	return true;
}

int flow_plan_check_kernel_ports(uint16_t lo, uint16_t hi, unsigned klo, unsigned khi,
				 const char *kreserved, char *err, size_t errlen)
{
	uint8_t held[65536 / 8];
	unsigned from = lo > klo ? lo : klo, to = hi < khi ? hi : khi, first = 0, n = 0;

	if (from > to)
		return 0; /* no overlap */
	memset(held, 0, sizeof(held));
	if (kreserved && !mark_port_list(kreserved, held))
		memset(held, 0, sizeof(held)); /* unreadable: count nothing as held */
	for (unsigned p = from; p <= to; p++)
		if (!(held[p / 8] & (1u << (p % 8))) && !n++)
			first = p;
	if (!n)
		return 0; /* all of the overlap is kept from the kernel's picks */
	lunar_set_err(
	    err, errlen,
	    "--reserved %u-%u overlaps the kernel's own client ports %u-%u (%u ports from "
	    "%u, net.ipv4.ip_local_port_range): replies to the kernel's connections "
	    "would be steered to lunar and reset. Choose a range outside %u-%u, or keep "
	    "the kernel off it: sysctl -w net.ipv4.ip_local_reserved_ports=%u-%u",
	    lo, hi, klo, khi, n, first, klo, khi, lo, hi);
	return -EINVAL;
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
