/*
 * flow_plan.c - the port-to-queue plan of LUNA §7.4 (see flow_plan.h).
 */
#include "ctl/flow_plan.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
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

/* @n hex digits at @s as a number (n <= 8); false unless all are hex digits. */
static bool hex_word(const char *s, unsigned n, uint32_t *v)
{
	*v = 0;
	for (unsigned i = 0; i < n; i++) {
		char c = s[i];
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
						    : 16;

		if (d == 16)
			return false;
		*v = *v << 4 | d;
	}
	return true;
}

/*
 * One line of /proc/net/tcp{,6}: "  sl: LOCAL:PORT REMOTE:PORT ST ...",
 * LOCAL 8 or 32 hex digits (each 32-bit word of the address as the host
 * stores it, printed as a number: ntohl() gives network order back).
 * True and the listener's port if it is one lunar would take.
 */
static bool listener_line(const char *line, bool v6, uint16_t lo, uint16_t hi, uint32_t ip,
			  unsigned *port)
{
	const unsigned alen = v6 ? 32 : 8;
	uint32_t w[4] = {0}, p, st, addr;
	const char *s = strchr(line, ':'), *rem;

	if (!s)
		return false;
	s++;
	while (*s == ' ')
		s++;
	for (unsigned i = 0; i < alen / 8; i++)
		if (!hex_word(s + 8 * i, 8, &w[i]))
			return false;
	s += alen;
	if (*s != ':' || !hex_word(s + 1, 4, &p) || s[5] != ' ')
		return false;
	rem = s + 6;
	while (*rem == ' ')
		rem++;
	s = strchr(rem, ' ');				  /* past REMOTE:PORT */
	if (!s || !hex_word(s + 1, 2, &st) || st != 0x0A) /* TCP_LISTEN */
		return false;
	if (p < lo || p > hi)
		return false;
	if (v6) {
		bool any = !w[0] && !w[1] && !w[2] && !w[3];

		if (!any && (w[0] || w[1] || ntohl(w[2]) != 0xffffu))
			return false; /* an IPv6 address: not lunar's */
		addr = any ? 0 : ntohl(w[3]);
	} else {
		addr = ntohl(w[0]);
	}
	if (addr && (ip ? addr != ip : (addr >> 24) == 127))
		return false;
	*port = p;
	return true;
}

unsigned flow_plan_kernel_listener(FILE *table, bool v6, uint16_t lo, uint16_t hi, uint32_t ip)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned port = 0;

	if (getline(&line, &cap, table) >= 0) /* the header */
		while (getline(&line, &cap, table) >= 0)
			if (listener_line(line, v6, lo, hi, ip, &port))
				break;
	free(line);
	return port;
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
