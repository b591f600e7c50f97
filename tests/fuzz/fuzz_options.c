/*
 * fuzz_options.c - libFuzzer target for the command-line parsers every
 * lunar program uses: lunar_options_apply() / lunar_options_check() and
 * the tool helpers parse_uint_opt(), parse_seconds_opt(), parse_ipv4()
 * (src/loop/options.c), and port_spec_parse() / fault_spec_parse()
 * (src/port/port_spec.c), which apply() also reaches through --port and
 * --fault.
 *
 * Input: a flags byte (bits 0-1 pick the size of the error buffer: 512,
 * as the tools use, 64, 8 or 2 bytes), then (code byte, argument) pairs;
 * each argument runs to the next NUL or the end of the input. Code % 16:
 *   0-8  LUNAR_OPT_PORT .. LUNAR_OPT_VERBOSE through lunar_options_apply()
 *   9    code byte bit 6 set: by bits 7, 5 and 4 (as a number 0-7)
 *        LUNAR_OPT_IDLE_YIELD, _XDP_SYNCOOKIES, _KEEPALIVE, _SOCK_BUF,
 *        _TCP_LIMITS, _POOL, _PROBES or _HYSTART, as 0-8 (bits 0-3 are
 *        the 9, so they select nothing); bit 6 clear: a tool's own
 *        option code: apply() must return 0 and touch nothing
 *   10   port_spec_parse() into a separate struct port_spec
 *   11   fault_spec_parse() into a separate struct fault_spec (accumulates)
 *   12   parse_uint_opt("count", 1..10000000), as lunar-ping
 *   13   parse_seconds_opt("duration", up to 1e6), as lunar-ping
 *   14   parse_ipv4()
 *   15   code byte bit 6 set: by bits 7, 5 and 4 (0-7)
 *        LUNAR_OPT_PMTU_BLACKHOLE, _CC, _ECN, _GSO, _PMTU_PROBE, _GRO,
 *        _TRUST_LINK or _CC (so 0x4f and 0xcf keep their old meaning,
 *        --pmtu-blackhole and --pmtu-probe); bit 6 clear:
 *        lunar_options_check() now (it is also called after the last pair)
 * Arguments and the error buffer are heap copies of exactly their size,
 * so AddressSanitizer catches any read or write past them.
 *
 * Checks: after every successful apply() the options are sane (reserved
 * range 1 <= lo <= hi, fault rates in [0,1] and not NaN, delays <= 10 s,
 * keep-alive times in [0.001, 86400] s and 1..1000 probes, --probes
 * unset, rfc or 1..8, HyStart++ bounds unset, off or 1 us <= min <= max
 * <= 1 s, --pmtu-blackhole unset, off or 1..16 timeouts held 1..600 s,
 * --pmtu-probe unset, off or 1..86400 s, --cc unset or an algorithm,
 * --ecn unset, on, off or accept,
 * names NUL-terminated within their buffers, interface names of 1..15
 * characters without '/', ':' or spaces, memif path non-empty, MTU 0 or
 * 576..9000, prefix length 1..32 with an address, core <= 1023); every
 * error returns -EINVAL and leaves a non-empty, NUL-terminated message.
 * A check that passes has a port, an address unless af_xdp, at most 3000
 * bytes of MTU on af_xdp, and --trust-link only on memif without corrupting
 * faults.
 * After an error the options are reset (a tool would exit). For --ip and
 * --reserved, a differential check compares the result with a reference
 * parse of the whole argument.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz_check.h"
#include "loop/options.h"
#include "tcp/tcp_cc.h"
#include "port/port_spec.h"

static const size_t errlens[4] = {512, 64, 8, 2};

/* An error: -EINVAL and a non-empty message within the buffer. */
static void check_err(int rc, const char *err, size_t errlen)
{
	FUZZ_CHECK(rc == -EINVAL);
	FUZZ_CHECK(memchr(err, '\0', errlen) != NULL);
	FUZZ_CHECK(err[0] != '\0');
}

static bool nul_within(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

static void check_port(const struct port_spec *p)
{
	size_t n;

	FUZZ_CHECK(nul_within(p->ifname, sizeof(p->ifname)));
	FUZZ_CHECK(nul_within(p->path, sizeof(p->path)));
	switch (p->kind) {
	case PORT_KIND_AF_XDP:
	case PORT_KIND_TAP:
		n = strlen(p->ifname);
		FUZZ_CHECK(n >= 1 && n <= 15);
		FUZZ_CHECK(strpbrk(p->ifname, "/: \t\n") == NULL);
		break;
	case PORT_KIND_MEMIF:
		FUZZ_CHECK(p->path[0] != '\0');
		break;
	default:
		FUZZ_CHECK(!"parsed port without a kind");
	}
}

static bool prob_ok(double p)
{
	return p >= 0.0 && p <= 1.0; /* false for NaN */
}

static void check_fault_dir(const struct fault_dir *d)
{
	FUZZ_CHECK(prob_ok(d->drop) && prob_ok(d->dup));
	FUZZ_CHECK(prob_ok(d->reorder) && prob_ok(d->corrupt));
	FUZZ_CHECK(d->delay_us <= 10u * 1000 * 1000);
}

static void check_opts(const struct lunar_options *o)
{
	FUZZ_CHECK(o->reserved_lo >= 1 && o->reserved_lo <= o->reserved_hi);
	check_fault_dir(&o->fault.rx);
	check_fault_dir(&o->fault.tx);
	FUZZ_CHECK(nul_within(o->pcap, sizeof(o->pcap)));
	FUZZ_CHECK(o->port.mtu == 0 || (o->port.mtu >= 576 && o->port.mtu <= 9000));
	FUZZ_CHECK(o->pool_mbufs == 0 ||
		   (o->pool_mbufs >= LUNAR_POOL_MIN && o->pool_mbufs <= LUNAR_POOL_MAX));
	FUZZ_CHECK(o->sock_buf == 0 || (o->sock_buf >= 4096 && o->sock_buf <= (1u << 30)));
	FUZZ_CHECK(o->keepalive >= -1 && o->keepalive <= 1);
	if (o->keepalive == 1)
		FUZZ_CHECK(o->keepalive_idle_s >= 0.001 && o->keepalive_idle_s <= 86400 &&
			   o->keepalive_intvl_s >= 0.001 && o->keepalive_intvl_s <= 86400 &&
			   o->keepalive_probes >= 1 && o->keepalive_probes <= 1000);
	FUZZ_CHECK(o->probes >= -1 && o->probes <= (int)LUNAR_PROBES_MAX);
	FUZZ_CHECK(o->blackhole_rtos >= -1 && o->blackhole_rtos <= (int)LUNAR_BLACKHOLE_RTOS_MAX);
	FUZZ_CHECK(o->blackhole_hold_s == 0 ||
		   (o->blackhole_hold_s >= 1 && o->blackhole_hold_s <= 600));
	FUZZ_CHECK(o->probe_interval_s == -1 || o->probe_interval_s == 0 ||
		   (o->probe_interval_s >= 1 && o->probe_interval_s <= 86400));
	FUZZ_CHECK((o->hystart_min_ns == -1 && o->hystart_max_ns == -1) ||
		   (o->hystart_min_ns == 0 && o->hystart_max_ns == 0) ||
		   (o->hystart_min_ns >= 1000 && o->hystart_min_ns <= o->hystart_max_ns &&
		    o->hystart_max_ns <= 1000000000));
	if (o->has_port)
		check_port(&o->port);
	else
		FUZZ_CHECK(o->port.kind == PORT_KIND_NONE);
	if (o->ip)
		FUZZ_CHECK(o->prefix_len >= 1 && o->prefix_len <= 32);
	FUZZ_CHECK(o->core <= 1023);
	FUZZ_CHECK(o->cc >= -1 && o->cc < TCP_CC_ALGO_COUNT);
	FUZZ_CHECK(o->ecn == -1 || o->ecn == TCP_ECN_OFF || o->ecn == TCP_ECN_ON ||
		   o->ecn == TCP_ECN_ACCEPT);
	/* --tcp-limits: only what was given is set, each in its range. */
	FUZZ_CHECK(!(o->tcp_limits.given & ~(unsigned)(TCP_LIMIT_CONNS | TCP_LIMIT_HALF_OPEN |
						       TCP_LIMIT_TIME_WAIT | TCP_LIMIT_MEM)));
	if (o->tcp_limits.given & TCP_LIMIT_CONNS)
		FUZZ_CHECK(o->tcp_limits.v.max_conns >= 1 &&
			   o->tcp_limits.v.max_conns <= TCP_LIMITS_CONNS_MAX);
	FUZZ_CHECK(o->tcp_limits.v.max_half_open <= TCP_LIMITS_CONNS_MAX);
	FUZZ_CHECK(o->tcp_limits.v.max_time_wait <= TCP_LIMITS_CONNS_MAX);
	FUZZ_CHECK(o->tcp_limits.v.mem_max == 0 || o->tcp_limits.v.mem_max >= TCP_LIMITS_MEM_MIN);
}

/* parse_uint() of options.c, restated: a whole decimal <= @max, first a digit. */
static bool ref_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return end != s && !*end && !errno && *v <= max;
}

/* --reserved LO-HI on the whole argument; true and the range if valid. */
static bool ref_reserved(const char *arg, unsigned long *lo, unsigned long *hi)
{
	char *s = strdup(arg), *dash;
	bool ok;

	FUZZ_CHECK(s != NULL);
	dash = strchr(s, '-');
	ok = dash != NULL;
	if (ok) {
		*dash = '\0';
		ok = ref_uint(s, 65535, lo) && ref_uint(dash + 1, 65535, hi) && *lo >= 1 &&
		     *lo <= *hi;
	}
	free(s);
	return ok;
}

/* --ip A.B.C.D/LEN on the whole argument. */
static bool ref_cidr(const char *arg, uint32_t *ip, unsigned long *plen)
{
	char *s = strdup(arg), *slash;
	struct in_addr a;
	bool ok = true;

	FUZZ_CHECK(s != NULL);
	*plen = 32;
	slash = strchr(s, '/');
	if (slash) {
		*slash = '\0';
		ok = ref_uint(slash + 1, 32, plen) && *plen != 0;
	} else {
		ok = false; /* the prefix length is required: no silent /32 */
	}
	ok = ok && inet_pton(AF_INET, s, &a) == 1 && a.s_addr != 0;
	*ip = ok ? ntohl(a.s_addr) : 0;
	free(s);
	return ok;
}

static void differential(int code, const char *arg, int rc, const struct lunar_options *o)
{
	unsigned long lo, hi, plen;
	uint32_t ip;

	/*
	 * options.c refuses over-long arguments outright (a --reserved of 32
	 * characters or more, an --ip of 64 or more) rather than judging a
	 * truncated copy; the reference applies the same rule.
	 */
	if (code == LUNAR_OPT_RESERVED) {
		FUZZ_CHECK((rc == 1) == (strlen(arg) < 32 && ref_reserved(arg, &lo, &hi)));
		if (rc == 1)
			FUZZ_CHECK(o->reserved_lo == lo && o->reserved_hi == hi);
	} else if (code == LUNAR_OPT_IP) {
		FUZZ_CHECK((rc == 1) == (strlen(arg) < 64 && ref_cidr(arg, &ip, &plen)));
		if (rc == 1)
			FUZZ_CHECK(o->ip == ip && o->prefix_len == plen);
	}
}

struct state {
	struct lunar_options o;
	struct port_spec ps;
	struct fault_spec fs;
	char *err;
	size_t errlen;
};

static void run_check(struct state *st)
{
	const struct lunar_options *o = &st->o;
	int rc = lunar_options_check(o, st->err, st->errlen);

	if (rc) {
		check_err(rc, st->err, st->errlen);
		return;
	}
	FUZZ_CHECK(o->has_port && o->port.kind != PORT_KIND_NONE);
	if (o->port.kind == PORT_KIND_AF_XDP)
		FUZZ_CHECK(o->port.mtu <= 3000);
	else
		FUZZ_CHECK(o->ip != 0);
	if (o->port.trusted)
		FUZZ_CHECK(
		    o->port.kind == PORT_KIND_MEMIF &&
		    !(o->fault.enabled && (o->fault.rx.corrupt > 0 || o->fault.tx.corrupt > 0)));
}

static void one(struct state *st, uint8_t code_byte, const char *arg)
{
	unsigned code = code_byte % 16;
	unsigned long ul;
	double d;
	uint32_t ip;
	int rc;

	memset(st->err, 'X', st->errlen); /* no NUL: an error must write one */
	if (code <= 8 || ((code == 9 || code == 15) && (code_byte & 0x40))) {
		static const int by_bits[8] = {LUNAR_OPT_IDLE_YIELD, LUNAR_OPT_XDP_SYNCOOKIES,
					       LUNAR_OPT_KEEPALIVE,  LUNAR_OPT_SOCK_BUF,
					       LUNAR_OPT_TCP_LIMITS, LUNAR_OPT_POOL,
					       LUNAR_OPT_PROBES,     LUNAR_OPT_HYSTART};
		static const int by_bits15[8] = {
		    LUNAR_OPT_PMTU_BLACKHOLE, LUNAR_OPT_CC,  LUNAR_OPT_ECN,	   LUNAR_OPT_GSO,
		    LUNAR_OPT_PMTU_PROBE,     LUNAR_OPT_GRO, LUNAR_OPT_TRUST_LINK, LUNAR_OPT_CC};
		unsigned pick = (code_byte >> 5 & 4) | (code_byte >> 4 & 3);
		int opt = code <= 8    ? LUNAR_OPT_PORT + (int)code
			  : code == 15 ? by_bits15[pick]
				       : by_bits[pick];

		rc = lunar_options_apply(&st->o, opt, arg, st->err, st->errlen);
		differential(opt, arg, rc, &st->o);
		if (rc == 1) {
			check_opts(&st->o);
			return;
		}
		FUZZ_CHECK(rc != 0); /* every common option is ours */
		check_err(rc, st->err, st->errlen);
		lunar_options_init(&st->o);
		return;
	}
	switch (code) {
	case 9: {
		struct lunar_options before = st->o;

		/* A tool's own code ('c' for lunar-ping's --count, 0, 0x0fff, ...). */
		rc = lunar_options_apply(&st->o, code_byte < 128 ? code_byte : 0x0fff, arg, st->err,
					 st->errlen);
		FUZZ_CHECK(rc == 0);
		FUZZ_CHECK(!memcmp(&before, &st->o, sizeof(before)));
		FUZZ_CHECK(st->err[0] == 'X');
		break;
	}
	case 10:
		rc = port_spec_parse(arg, &st->ps, st->err, st->errlen);
		if (rc == 0)
			check_port(&st->ps);
		else
			check_err(rc, st->err, st->errlen);
		break;
	case 11:
		rc = fault_spec_parse(arg, &st->fs, st->err, st->errlen);
		if (rc == 0) {
			FUZZ_CHECK(st->fs.enabled);
			check_fault_dir(&st->fs.rx);
			check_fault_dir(&st->fs.tx);
		} else {
			check_err(rc, st->err, st->errlen);
			memset(&st->fs, 0, sizeof(st->fs));
		}
		break;
	case 12:
		rc = parse_uint_opt("count", arg, 1, 10000000, &ul, st->err, st->errlen);
		if (rc == 0)
			FUZZ_CHECK(ul >= 1 && ul <= 10000000);
		else
			check_err(rc, st->err, st->errlen);
		break;
	case 13:
		rc = parse_seconds_opt("duration", arg, 1e6, &d, st->err, st->errlen);
		if (rc == 0)
			FUZZ_CHECK(d >= 0.0 && d <= 1e6);
		else
			check_err(rc, st->err, st->errlen);
		break;
	case 14:
		rc = parse_ipv4(arg, &ip);
		FUZZ_CHECK(rc == 0 || rc == -EINVAL);
		break;
	default:
		run_check(st);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state st;
	size_t off = 1;

	if (size < 1)
		return 0;
	memset(&st, 0, sizeof(st));
	lunar_options_init(&st.o);
	check_opts(&st.o); /* the defaults are sane too */
	st.errlen = errlens[data[0] & 3];
	st.err = malloc(st.errlen);
	FUZZ_CHECK(st.err != NULL);

	while (off < size) {
		uint8_t code = data[off++];
		const uint8_t *nul = memchr(data + off, '\0', size - off);
		size_t n = nul ? (size_t)(nul - (data + off)) : size - off;
		char *arg = malloc(n + 1);

		FUZZ_CHECK(arg != NULL);
		memcpy(arg, data + off, n);
		arg[n] = '\0';
		one(&st, code, arg);
		free(arg);
		off += n + (nul ? 1 : 0);
	}
	memset(st.err, 'X', st.errlen);
	run_check(&st);
	free(st.err);
	return 0;
}
