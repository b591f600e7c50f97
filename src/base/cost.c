/* cost.c - the per-thread CPU account behind cost.h. */
#include "base/cost.h"

#include <string.h>
#include <time.h>

__thread struct lunar_cost lunar_cost_tls = {.cur = LUNAR_COST_APP};

static const char *const names[LUNAR_COST_N] = {
    [LUNAR_COST_RX] = "rx",	    [LUNAR_COST_PROTOCOL] = "protocol",
    [LUNAR_COST_APP] = "app",	    [LUNAR_COST_TX] = "tx",
    [LUNAR_COST_TIMERS] = "timers", [LUNAR_COST_BUFFERS] = "buffers",
    [LUNAR_COST_COPY] = "copy",	    [LUNAR_COST_IDLE] = "idle",
};

const char *lunar_cost_name(enum lunar_cost_cat cat)
{
	return (unsigned)cat < LUNAR_COST_N ? names[cat] : "?";
}

void lunar_cost_start(bool on)
{
	struct lunar_cost *c = &lunar_cost_tls;

	memset(c->cycles, 0, sizeof(c->cycles));
	c->cur = LUNAR_COST_APP;
	c->last = rte_rdtsc();
	c->on = on;
}

void lunar_cost_stop(void)
{
	struct lunar_cost *c = &lunar_cost_tls;

	if (!c->on)
		return;
	lunar_cost_enter(c->cur);
	c->on = false;
}

void lunar_cost_percent(double *out, unsigned n)
{
	const struct lunar_cost *c = &lunar_cost_tls;
	uint64_t total = 0;

	for (unsigned i = 0; i < LUNAR_COST_N; i++)
		total += c->cycles[i];
	for (unsigned i = 0; i < n && i < LUNAR_COST_N; i++)
		out[i] = total ? 100.0 * (double)c->cycles[i] / (double)total : 0;
}

uint64_t lunar_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
