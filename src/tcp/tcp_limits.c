/*
 * tcp_limits.c - the stack-wide limits' defaults and checks (see
 * tcp_limits.h; tcp_stack.c enforces them).
 */
#include "tcp/tcp_limits.h"

#include <errno.h>
#include <inttypes.h>

#include "base/log.h"

void tcp_limits_default(struct tcp_limits *l, unsigned max_conns)
{
	l->max_conns = max_conns;
	l->max_half_open =
	    max_conns < TCP_LIMITS_HALF_OPEN_DEFAULT ? max_conns : TCP_LIMITS_HALF_OPEN_DEFAULT;
	l->max_time_wait = max_conns / 2;
	l->mem_max = TCP_LIMITS_MEM_DEFAULT;
}

int tcp_limits_check(const struct tcp_limits *l, char *err, size_t errlen)
{
	if (!l->max_conns || l->max_conns > TCP_LIMITS_CONNS_MAX) {
		lunar_set_err(err, errlen, "TCP limit conns=%u: expected 1..%u connections",
			      l->max_conns, TCP_LIMITS_CONNS_MAX);
		return -EINVAL;
	}
	if (l->max_half_open > l->max_conns) {
		lunar_set_err(err, errlen,
			      "TCP limit half-open=%u is above conns=%u: half-open connections "
			      "take table entries too; raise conns or lower half-open",
			      l->max_half_open, l->max_conns);
		return -EINVAL;
	}
	if (l->max_time_wait > l->max_conns) {
		lunar_set_err(err, errlen,
			      "TCP limit time-wait=%u is above conns=%u: TIME-WAIT connections "
			      "take table entries too; raise conns or lower time-wait",
			      l->max_time_wait, l->max_conns);
		return -EINVAL;
	}
	if (l->mem_max && l->mem_max < TCP_LIMITS_MEM_MIN) {
		lunar_set_err(err, errlen,
			      "TCP limit mem=%" PRIu64 ": below %" PRIu64 "K, not even one window "
			      "fits; give at least mem=64K, or mem=0 for no cap",
			      l->mem_max, TCP_LIMITS_MEM_MIN >> 10);
		return -EINVAL;
	}
	return 0;
}

int tcp_limits_resolve(const struct tcp_limits_spec *spec, unsigned max_conns,
		       struct tcp_limits *out, char *err, size_t errlen)
{
	const struct tcp_limits *v = &spec->v;

	tcp_limits_default(out, spec->given & TCP_LIMIT_CONNS ? v->max_conns : max_conns);
	if (spec->given & TCP_LIMIT_HALF_OPEN)
		out->max_half_open = v->max_half_open;
	if (spec->given & TCP_LIMIT_TIME_WAIT)
		out->max_time_wait = v->max_time_wait;
	if (spec->given & TCP_LIMIT_MEM)
		out->mem_max = v->mem_max;
	return tcp_limits_check(out, err, errlen);
}
