/* options.c - parsing and checking of the options every lunar program shares. */
#include "loop/options.h"
#include "base/log.h"
#include "tcp/tcp_cc.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void lunar_options_init(struct lunar_options *o)
{
	memset(o, 0, sizeof(*o));
	o->reserved_lo = 61440;
	o->reserved_hi = 65535;
	o->fault.seed = 1;
	o->n_workers = 1;
	o->cc = -1;
	o->ecn = -1;
	o->hystart_min_ns = o->hystart_max_ns = -1;
	o->probes = -1;
	o->blackhole_rtos = -1;
	o->probe_interval_s = -1;
	o->keepalive = -1;
	o->xdp_syncookies = true;
}

int parse_ipv4(const char *s, uint32_t *out)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	*out = ntohl(a.s_addr);
	return 0;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9') /* strtoul() would take blanks, a sign and wrap "-1" */
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (end == s || *end || errno || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_uint_opt(const char *name, const char *s, unsigned long min, unsigned long max,
		   unsigned long *out, char *err, size_t errlen)
{
	if (parse_uint(s, max, out) || *out < min) {
		lunar_set_err(err, errlen, "--%s %s: expected a whole number from %lu to %lu", name,
			      s, min, max);
		return -EINVAL;
	}
	return 0;
}

/*
 * "LO<sep>HI": two whole numbers up to @max with LO <= HI. An argument of
 * @max_len characters or more is refused whole, never judged by a
 * truncated copy. 0, or -EINVAL.
 */
static int parse_uint_range(const char *s, char sep, size_t max_len, unsigned long max,
			    unsigned long *lo, unsigned long *hi)
{
	char buf[48], *mid;

	if (max_len > sizeof(buf) || strlen(s) >= max_len)
		return -EINVAL;
	strcpy(buf, s);
	mid = strchr(buf, sep);
	if (!mid)
		return -EINVAL;
	*mid = '\0';
	if (parse_uint(buf, max, lo) || parse_uint(mid + 1, max, hi) || *lo > *hi)
		return -EINVAL;
	return 0;
}

/* A decimal number of seconds (fractions allowed) in [@min, @max]; NaN and junk refused. */
static int parse_seconds(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v >= min && v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_seconds_opt(const char *name, const char *s, double max, double *out, char *err,
		      size_t errlen)
{
	if (parse_seconds(s, 0.0, max, out)) {
		lunar_set_err(err, errlen, "--%s %s: expected seconds from 0 to %g (e.g. 1.5)",
			      name, s, max);
		return -EINVAL;
	}
	return 0;
}

static int parse_cidr(struct lunar_options *o, const char *arg, char *err, size_t errlen)
{
	char buf[64];
	char *slash;
	unsigned long plen;
	uint32_t ip;

	if (strlen(arg) >= sizeof(buf))
		goto bad; /* judge the whole argument, never a truncated copy */
	strcpy(buf, arg);
	slash = strchr(buf, '/');
	/* No silent /32: it would put every neighbour, the memif peer too, off the link. */
	if (!slash || (*slash = '\0', parse_uint(slash + 1, 32, &plen)) || plen == 0)
		goto bad;
	if (parse_ipv4(buf, &ip) || ip == 0)
		goto bad;
	o->ip = ip; /* only now: a refused value leaves the last one */
	o->prefix_len = (uint8_t)plen;
	return 1;
bad:
	lunar_set_err(err, errlen,
		      "--ip %s: expected an IPv4 address with prefix length, e.g. "
		      "--ip 192.168.77.2/24 (/32 for an address with no subnet)",
		      arg);
	return -EINVAL;
}

/*
 * --keepalive IDLE,INTVL,PROBES (seconds, seconds, a count) or off: probe a
 * connection idle for IDLE seconds every INTVL seconds, and end it (the
 * application sees a timeout) after PROBES probes go unanswered.
 */
static int parse_keepalive(struct lunar_options *o, const char *arg, char *err, size_t errlen)
{
	double idle, intvl;
	unsigned long probes;
	char buf[96], *a, *b;

	if (!strcmp(arg, "off")) {
		o->keepalive = 0;
		return 1;
	}
	if (strlen(arg) >= sizeof(buf))
		goto bad;
	strcpy(buf, arg);
	a = strchr(buf, ',');
	b = a ? strchr(a + 1, ',') : NULL;
	if (!b)
		goto bad;
	*a++ = '\0';
	*b++ = '\0';
	if (parse_seconds(buf, 0.001, 86400, &idle) || parse_seconds(a, 0.001, 86400, &intvl) ||
	    parse_uint(b, 1000, &probes) || probes < 1)
		goto bad;
	o->keepalive = 1;
	o->keepalive_idle_s = idle;
	o->keepalive_intvl_s = intvl;
	o->keepalive_probes = (unsigned)probes;
	return 1;
bad:
	lunar_set_err(err, errlen,
		      "--keepalive %s: expected IDLE,INTVL,PROBES (seconds from 0.001 to 86400, "
		      "seconds, probes from 1 to 1000; e.g. 10,2,3) or off",
		      arg);
	return -EINVAL;
}

/*
 * --pmtu-blackhole RTOS[,HOLD_S] | off: after RTOS timeouts in a row of a
 * full-sized segment, take the path for a black hole and step its MTU down
 * (tcp_icmp.h tcp_blackhole()); the guess is held HOLD_S seconds.
 */
static int parse_blackhole(struct lunar_options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long rtos;
	double hold = 0;
	char buf[64], *comma;

	if (!strcmp(arg, "off")) {
		o->blackhole_rtos = 0;
		return 1;
	}
	if (strlen(arg) >= sizeof(buf))
		goto bad;
	strcpy(buf, arg);
	comma = strchr(buf, ',');
	if (comma)
		*comma++ = '\0';
	if (parse_uint(buf, LUNAR_BLACKHOLE_RTOS_MAX, &rtos) || rtos < 1 ||
	    (comma && (!isdigit((unsigned char)*comma) || parse_seconds(comma, 1, 600, &hold))))
		goto bad;
	o->blackhole_rtos = (int)rtos;
	o->blackhole_hold_s = hold;
	return 1;
bad:
	lunar_set_err(err, errlen,
		      "--pmtu-blackhole %s: expected RTOS[,HOLD_S] (timeouts in a row from 1 to "
		      "%u, then seconds the smaller MTU is held, 1 to 600, a reported MTU's "
		      "lifetime; default 3,60) or off",
		      arg, LUNAR_BLACKHOLE_RTOS_MAX);
	return -EINVAL;
}

/*
 * --pmtu-probe SECONDS | off: how long a connection below its interface's
 * MTU waits before it searches for a larger one with probes (tcp_icmp.h).
 */
static int parse_probe_interval(struct lunar_options *o, const char *arg, char *err, size_t errlen)
{
	double s;

	if (!strcmp(arg, "off")) {
		o->probe_interval_s = 0;
		return 1;
	}
	if (!isdigit((unsigned char)*arg) || parse_seconds(arg, 1, 86400, &s)) {
		lunar_set_err(err, errlen,
			      "--pmtu-probe %s: expected seconds between path MTU searches, 1 to "
			      "86400 (default 600, RFC 8899's PMTU_RAISE_TIMER), or off",
			      arg);
		return -EINVAL;
	}
	o->probe_interval_s = s;
	return 1;
}

/*
 * --hystart on | off | MIN_US,MAX_US: HyStart++ (RFC 9406) in the first
 * slow start with RFC 9406's RTT threshold bounds (4 and 16 ms), none, or
 * bounds in microseconds (a datacenter's round trips are far below 4 ms).
 */
static int parse_hystart(struct lunar_options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long lo, hi;

	if (!strcmp(arg, "on")) {
		o->hystart_min_ns = (int64_t)TCP_HYSTART_MIN_RTT_THRESH_NS;
		o->hystart_max_ns = (int64_t)TCP_HYSTART_MAX_RTT_THRESH_NS;
		return 1;
	}
	if (!strcmp(arg, "off")) {
		o->hystart_min_ns = o->hystart_max_ns = 0;
		return 1;
	}
	if (parse_uint_range(arg, ',', 48, 1000000, &lo, &hi) || lo < 1)
		goto bad;
	o->hystart_min_ns = (int64_t)lo * 1000;
	o->hystart_max_ns = (int64_t)hi * 1000;
	return 1;
bad:
	lunar_set_err(err, errlen,
		      "--hystart %s: expected on (RFC 9406's 4 to 16 ms RTT threshold, the "
		      "default), off, or MIN_US,MAX_US with 1 <= MIN_US <= MAX_US <= 1000000 "
		      "(e.g. 20,200 in a datacenter)",
		      arg);
	return -EINVAL;
}

/* --tcp-limits KEY=VALUE[,KEY=VALUE...] (tcp/tcp_limits.h); repeatable, the last value wins. */
static int parse_tcp_limits(struct tcp_limits_spec *sp, const char *arg, char *err, size_t errlen)
{
	static const struct {
		const char *key;
		unsigned bit;
		unsigned long min;
	} counts[] = {{"conns", TCP_LIMIT_CONNS, 1},
		      {"half-open", TCP_LIMIT_HALF_OPEN, 0},
		      {"time-wait", TCP_LIMIT_TIME_WAIT, 0}};
	char buf[256], *save = NULL;

	if (strlen(arg) >= sizeof(buf) || spec_list_has_empty_field(arg))
		goto bad; /* judge the whole argument, never a truncated copy */
	strcpy(buf, arg);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *val = strchr(tok, '=');
		unsigned i;

		if (!val)
			goto bad;
		*val++ = '\0';
		for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
			if (!strcmp(tok, counts[i].key))
				break;
		if (i < sizeof(counts) / sizeof(counts[0])) {
			unsigned long v;

			if (parse_uint(val, TCP_LIMITS_CONNS_MAX, &v) || v < counts[i].min) {
				lunar_set_err(err, errlen,
					      "--tcp-limits %s=%s: expected a whole number of "
					      "connections from %lu to %u",
					      tok, val, counts[i].min, TCP_LIMITS_CONNS_MAX);
				return -EINVAL;
			}
			if (counts[i].bit == TCP_LIMIT_CONNS)
				sp->v.max_conns = (unsigned)v;
			else if (counts[i].bit == TCP_LIMIT_HALF_OPEN)
				sp->v.max_half_open = (unsigned)v;
			else
				sp->v.max_time_wait = (unsigned)v;
			sp->given |= counts[i].bit;
		} else if (!strcmp(tok, "mem")) {
			uint64_t v;

			if (parse_size(val, &v) || (v && v < TCP_LIMITS_MEM_MIN)) {
				lunar_set_err(
				    err, errlen,
				    "--tcp-limits mem=%s: expected a size of at least 64K "
				    "(e.g. mem=512M), or mem=0 for no cap",
				    val);
				return -EINVAL;
			}
			sp->v.mem_max = v;
			sp->given |= TCP_LIMIT_MEM;
		} else {
			lunar_set_err(err, errlen,
				      "--tcp-limits: unknown limit '%s'; the limits are conns=N, "
				      "half-open=N, time-wait=N and mem=SIZE",
				      tok);
			return -EINVAL;
		}
	}
	return 1;
bad:
	lunar_set_err(err, errlen,
		      "--tcp-limits %s: expected KEY=VALUE[,KEY=VALUE...] of conns, half-open, "
		      "time-wait and mem, e.g. --tcp-limits conns=100000,half-open=8192,mem=2G",
		      arg);
	return -EINVAL;
}

/* --NAME on|off into *@on. @return 1, or -EINVAL with the error said. */
static int on_off(const char *name, const char *arg, bool *on, char *err, size_t errlen)
{
	if (strcmp(arg, "on") && strcmp(arg, "off")) {
		lunar_set_err(err, errlen, "--%s %s: expected on (the default) or off", name, arg);
		return -EINVAL;
	}
	*on = !strcmp(arg, "on");
	return 1;
}

int lunar_options_apply(struct lunar_options *o, int code, const char *arg, char *err,
			size_t errlen)
{
	unsigned long v, lo, hi;
	bool on;
	int rc;

	switch (code) {
	case LUNAR_OPT_PORT: {
		struct port_spec p;

		rc = port_spec_parse(arg, &p, err, errlen);
		if (rc)
			return rc;   /* the port given before stays */
		p.mtu = o->port.mtu; /* --mtu and --trust-link are options of their own */
		p.trusted = o->port.trusted;
		o->port = p;
		o->has_port = true;
		return 1;
	}
	case LUNAR_OPT_IP:
		return parse_cidr(o, arg, err, errlen);
	case LUNAR_OPT_GW: {
		uint32_t gw;

		if (parse_ipv4(arg, &gw) || gw == 0) {
			lunar_set_err(err, errlen,
				      "--gw %s: expected an IPv4 address, e.g. --gw 10.0.0.1", arg);
			return -EINVAL;
		}
		o->gw = gw;
		return 1;
	}
	case LUNAR_OPT_MTU:
		if (parse_uint(arg, 9000, &v) || v < 576) {
			lunar_set_err(err, errlen, "--mtu %s: expected 576..9000", arg);
			return -EINVAL;
		}
		o->port.mtu = (uint16_t)v;
		return 1;
	case LUNAR_OPT_FAULT:
		rc = fault_spec_parse(arg, &o->fault, err, errlen);
		return rc ? rc : 1;
	case LUNAR_OPT_PCAP:
		if (!*arg || strlen(arg) >= sizeof(o->pcap)) {
			/* The reason first: a path too long would push it out of the message. */
			lunar_set_err(err, errlen,
				      "--pcap: expected a file path of 1..%zu bytes, got %zu: '%s'",
				      sizeof(o->pcap) - 1, strlen(arg), arg);
			return -EINVAL;
		}
		strcpy(o->pcap, arg);
		return 1;
	case LUNAR_OPT_RESERVED: {
		if (parse_uint_range(arg, '-', 32, 65535, &lo, &hi) || lo == 0)
			goto bad_range;
		o->reserved_lo = (uint16_t)lo;
		o->reserved_hi = (uint16_t)hi;
		return 1;
	bad_range:
		lunar_set_err(err, errlen,
			      "--reserved %s: expected LO-HI with 1 <= LO <= HI <= 65535, "
			      "e.g. --reserved 61440-65535",
			      arg);
		return -EINVAL;
	}
	case LUNAR_OPT_CORE: {
		/* One CPU per worker: "2" or "0,1". */
		char buf[256], *save = NULL;
		unsigned n = 0;

		if (strlen(arg) >= sizeof(buf) || spec_list_has_empty_field(arg))
			goto bad_core;
		snprintf(buf, sizeof(buf), "%s", arg);
		for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (n == LUNAR_MAX_WORKERS || parse_uint(tok, 1023, &v))
				goto bad_core;
			for (unsigned i = 0; i < n; i++)
				if (o->cores[i] == v)
					goto bad_core;
			o->cores[n++] = (unsigned)v;
		}
		if (!n)
			goto bad_core;
		o->n_workers = n;
		o->core = o->cores[0];
		return 1;
	bad_core:
		lunar_set_err(
		    err, errlen,
		    "--core %s: expected a CPU number, or a comma-separated list of up to "
		    "%u distinct CPUs (one worker each), e.g. --core 0,1",
		    arg, LUNAR_MAX_WORKERS);
		return -EINVAL;
	}
	case LUNAR_OPT_VERBOSE:
		o->verbose = true;
		return 1;
	case LUNAR_OPT_TRUST_LINK:
		o->port.trusted = true;
		return 1;
	case LUNAR_OPT_POOL:
		if (parse_uint(arg, LUNAR_POOL_MAX, &v) || v < LUNAR_POOL_MIN) {
			lunar_set_err(err, errlen, "--pool %s: expected %u..%u packet buffers", arg,
				      LUNAR_POOL_MIN, LUNAR_POOL_MAX);
			return -EINVAL;
		}
		o->pool_mbufs = (unsigned)v;
		return 1;
	case LUNAR_OPT_CC:
		o->cc = tcp_cc_algo_by_name(arg);
		if (o->cc < 0) {
			lunar_set_err(
			    err, errlen,
			    "--cc %s: unknown congestion control; use newreno, cubic or dctcp",
			    arg);
			return -EINVAL;
		}
		return 1;
	case LUNAR_OPT_ECN:
		if (!strcmp(arg, "on"))
			o->ecn = TCP_ECN_ON;
		else if (!strcmp(arg, "off"))
			o->ecn = TCP_ECN_OFF;
		else if (!strcmp(arg, "accept"))
			o->ecn = TCP_ECN_ACCEPT;
		else {
			lunar_set_err(
			    err, errlen,
			    "--ecn %s: expected on (ask and accept), off or accept (answer "
			    "only; the default)",
			    arg);
			return -EINVAL;
		}
		return 1;
	case LUNAR_OPT_HYSTART:
		return parse_hystart(o, arg, err, errlen);
	case LUNAR_OPT_PMTU_BLACKHOLE:
		return parse_blackhole(o, arg, err, errlen);
	case LUNAR_OPT_PMTU_PROBE:
		return parse_probe_interval(o, arg, err, errlen);
	case LUNAR_OPT_PROBES:
		if (!strcmp(arg, "rfc")) {
			o->probes = 0;
			return 1;
		}
		if (parse_uint(arg, LUNAR_PROBES_MAX, &v) || v < 1) {
			lunar_set_err(
			    err, errlen,
			    "--probes %s: expected rfc (RFC 8985: one tail loss probe, none "
			    "in recovery) or 1..%u probes before an RTO, in recovery too "
			    "(default 2)",
			    arg, LUNAR_PROBES_MAX);
			return -EINVAL;
		}
		o->probes = (int)v;
		return 1;
	case LUNAR_OPT_TCP_LIMITS:
		return parse_tcp_limits(&o->tcp_limits, arg, err, errlen);
	case LUNAR_OPT_KEEPALIVE:
		return parse_keepalive(o, arg, err, errlen);
	case LUNAR_OPT_SOCK_BUF: {
		uint64_t size;

		if (parse_size(arg, &size) || size < 4096 || size > (1u << 30)) {
			lunar_set_err(
			    err, errlen,
			    "--sock-buf %s: expected a size from 4K to 1G (K, M, G suffixes)", arg);
			return -EINVAL;
		}
		o->sock_buf = (uint32_t)size;
		return 1;
	}
	case LUNAR_OPT_IDLE_YIELD:
		if (parse_uint_opt("idle-yield", arg, 0, LUNAR_IDLE_YIELD_MAX, &v, err, errlen))
			return -EINVAL;
		o->idle_yield = (unsigned)v;
		return 1;
	case LUNAR_OPT_XDP_SYNCOOKIES:
		return on_off("xdp-syncookies", arg, &o->xdp_syncookies, err, errlen);
	case LUNAR_OPT_GSO:
		if (on_off("gso", arg, &on, err, errlen) < 0)
			return -EINVAL;
		o->no_gso = !on;
		return 1;
	case LUNAR_OPT_GRO:
		if (on_off("gro", arg, &on, err, errlen) < 0)
			return -EINVAL;
		o->no_gro = !on;
		return 1;
	default:
		return 0;
	}
}

int lunar_options_check(const struct lunar_options *o, char *err, size_t errlen)
{
	if (!o->has_port) {
		lunar_set_err(err, errlen,
			      "no --port given; use --port af_xdp:<ifname>, "
			      "--port memif:<socket-path>[:server|client] or --port tap:<name>");
		return -EINVAL;
	}
	if (o->port.kind != PORT_KIND_AF_XDP && !o->ip) {
		lunar_set_err(err, errlen,
			      "--port %s needs --ip ADDR/LEN (only af_xdp can borrow the "
			      "kernel's address)",
			      port_kind_name(o->port.kind));
		return -EINVAL;
	}
	if (o->gw && o->ip &&
	    (o->prefix_len == 32 ? o->gw != o->ip
				 : ((o->gw ^ o->ip) >> (32 - o->prefix_len)) != 0)) {
		lunar_set_err(err, errlen,
			      "--gw %u.%u.%u.%u is not on the subnet of --ip %u.%u.%u.%u/%u: a "
			      "gateway must be reachable on the link; give one inside the subnet "
			      "or widen the prefix",
			      o->gw >> 24, (o->gw >> 16) & 255, (o->gw >> 8) & 255, o->gw & 255,
			      o->ip >> 24, (o->ip >> 16) & 255, (o->ip >> 8) & 255, o->ip & 255,
			      o->prefix_len);
		return -EINVAL;
	}
	if (o->port.kind == PORT_KIND_AF_XDP && o->port.mtu > 3000) {
		lunar_set_err(err, errlen,
			      "--mtu %u: af_xdp in copy mode carries at most 3000 bytes "
			      "(no XDP multi-buffer); use memif or tap for jumbo frames",
			      o->port.mtu);
		return -EINVAL;
	}
	if (o->port.trusted && o->port.kind != PORT_KIND_MEMIF) {
		lunar_set_err(err, errlen,
			      "--trust-link is for memif between two lunar processes; "
			      "a %s port carries frames from elsewhere, whose checksums must "
			      "be checked",
			      port_kind_name(o->port.kind));
		return -EINVAL;
	}
	if (o->port.trusted && o->fault.enabled &&
	    (o->fault.rx.corrupt > 0 || o->fault.tx.corrupt > 0)) {
		lunar_set_err(err, errlen,
			      "--trust-link with --fault corrupt=...: nothing would "
			      "catch the corruption; drop one of them");
		return -EINVAL;
	}
	if (o->n_workers > 1 && o->port.kind == PORT_KIND_TAP) {
		lunar_set_err(err, errlen,
			      "--core with %u CPUs: a tap port has one queue; use memif "
			      "or af_xdp for several workers",
			      o->n_workers);
		return -EINVAL;
	}
	if (o->tcp_limits.given & TCP_LIMIT_CONNS) {
		struct tcp_limits l;

		/* Whether half-open and time-wait fit conns; without conns the tool decides. */
		if (tcp_limits_resolve(&o->tcp_limits, 0, &l, err, errlen))
			return -EINVAL;
	}
	if (o->n_workers > 1 && o->pcap[0]) {
		lunar_set_err(err, errlen,
			      "--pcap with %u workers: capture one worker at a time "
			      "(run with one --core) or capture on the kernel side",
			      o->n_workers);
		return -EINVAL;
	}
	return 0;
}

int lunar_options_one_worker(const struct lunar_options *o, char *err, size_t errlen)
{
	if (o->n_workers <= 1)
		return 0;
	lunar_set_err(err, errlen,
		      "--core lists %u CPUs, but this tool runs one worker and would leave the "
		      "other queues unpolled; give one CPU (e.g. --core %u), or use knb for "
		      "several workers",
		      o->n_workers, o->cores[0]);
	return -EINVAL;
}

void lunar_options_usage(FILE *f)
{
	fputs("common options:\n"
	      "  --port KIND:ARGS   af_xdp:<ifname> | memif:<socket-path>[:server|client] | "
	      "tap:<name>\n"
	      "  --ip ADDR/LEN      our IPv4 address (af_xdp: default is the interface's)\n"
	      "  --gw ADDR          default gateway (af_xdp: default is the kernel's)\n"
	      "  --mtu N            IP MTU, 576..9000 (jumbo on memif and tap)\n"
	      "  --fault SPEC       [rx:|tx:]drop=P,dup=P,reorder=P,corrupt=P,delay=Nus|Nms or "
	      "seed=N\n"
	      "  --pcap FILE        write every frame sent and received to FILE (pcap)\n"
	      "  --reserved LO-HI   TCP ports steered to lunar on af_xdp (default 61440-65535)\n"
	      "  --core N[,N...]    CPU to run on (default 0); a list runs one worker per CPU,\n"
	      "                     each on its own queue of the port\n"
	      "  --pool N           packet buffers per worker, 2048..262144 (default: 128 MiB\n"
	      "                     of them, split between the workers)\n"
	      "  --trust-link       memif between two lunar processes on this host: no checksums\n"
	      "                     computed or checked (as the kernel's veth); both ends\n"
	      "  --cc NAME          congestion control: newreno (default), cubic or dctcp\n"
	      "                     (dctcp asks for ECN itself)\n"
	      "  --ecn MODE         ECN (RFC 3168): on (ask and accept), off, accept (default)\n"
	      "  --hystart MODE     HyStart++ (RFC 9406) leaves the first slow start when the\n"
	      "                     RTT rises: on (threshold 4-16 ms, the default), off, or\n"
	      "                     MIN_US,MAX_US threshold bounds (e.g. 20,200)\n"
	      "  --probes MODE      loss probes before an RTO when none draws an ACK: N\n"
	      "                     (1..8; default 2), in recovery too, or rfc (RFC 8985:\n"
	      "                     one tail loss probe, none in recovery)\n"
	      "  --pmtu-blackhole R[,H]  full-sized segments unanswered R timeouts in a row\n"
	      "                     (no ICMP error): step the path MTU down (1500, 1400, 1280,\n"
	      "                     1024, 576) and hold it H s; default 3,60; off\n"
	      "  --pmtu-probe S     a path MTU below the interface's is searched upwards with\n"
	      "                     probes (RFC 4821): at once after a black hole, else S s\n"
	      "                     after it was lowered or the last search; default 600; off\n"
	      "  --tcp-limits SPEC  per worker: conns=N (connections, any state), half-open=N\n"
	      "                     (SYN-RECEIVED; beyond: SYN cookies), time-wait=N, mem=SIZE\n"
	      "                     (bytes buffered by TCP; 0: no cap); docs/LIMITS.md\n"
	      "  --keepalive I,T,N  TCP keep-alive: probe after I s idle, every T s, end the\n"
	      "                     connection after N unanswered; off (the default)\n"
	      "  --sock-buf SIZE    TCP send and receive buffer per connection (default 1M)\n"
	      "  --xdp-syncookies on|off  af_xdp: under a SYN flood the XDP program answers\n"
	      "                     SYNs with this worker's cookies, off its core (default on;\n"
	      "                     on veth the peer needs an XDP program; docs/TRAFFIC.md)\n"
	      "  --gso on|off       where the port has no TSO, TCP still sends segments of\n"
	      "                     several MSSs and lunar cuts them into frames (GSO; the\n"
	      "                     default on); off: MSS-sized segments from TCP itself\n"
	      "  --gro on|off       a receive burst's in-order segments of one connection go\n"
	      "                     to TCP together (software GRO; the default on)\n"
	      "  --idle-yield N     after N polls in a row that received, sent and served\n"
	      "                     nothing, give the CPU to the kernel (sched_yield) on each\n"
	      "                     further idle poll: for a core shared with the port's\n"
	      "                     kernel work, e.g. af_xdp on veth; 0: always poll (the\n"
	      "                     default); docs/benchmarks.md\n"
	      "  --verbose          more log output\n",
	      f);
}

int parse_size(const char *s, uint64_t *out)
{
	unsigned shift = 0;
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL; /* no sign, no space, no empty string */
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > ((1ull << 62) - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	switch (*p) {
	case 'K':
	case 'k':
		shift = 10;
		p++;
		break;
	case 'M':
	case 'm':
		shift = 20;
		p++;
		break;
	case 'G':
	case 'g':
		shift = 30;
		p++;
		break;
	default:
		break;
	}
	if (*p || v > (1ull << 62) >> shift)
		return -EINVAL;
	*out = v << shift;
	return 0;
}
