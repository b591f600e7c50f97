/*
 * cost.h - where a lunar thread's CPU time goes, by category, measured with
 * the TSC in process (the NetChannel dissertation's Table 2.1 breakdown).
 *
 * The loop and the stack mark category changes with lunar_cost_enter() /
 * lunar_cost_leave(); while accounting is on, the cycles since the last
 * change are charged to the category that was current. Off (the default),
 * a change is one store; on, one rdtsc more. Per thread, no locking.
 */
#ifndef LUNAR_BASE_COST_H
#define LUNAR_BASE_COST_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>

enum lunar_cost_cat {
	LUNAR_COST_RX,	     /* driver polling that returned packets */
	LUNAR_COST_PROTOCOL, /* Ethernet/ARP/IP/TCP processing */
	LUNAR_COST_APP,	     /* application callbacks and the application's own loop */
	LUNAR_COST_TX,	     /* handing frames to the port */
	LUNAR_COST_TIMERS,   /* TCP and neighbour timers, control plane */
	LUNAR_COST_BUFFERS,  /* packet and Zbuf buffer allocation and release */
	LUNAR_COST_COPY,     /* payload copies (framing, copying send/receive) */
	LUNAR_COST_IDLE,     /* driver polling that found nothing */
	LUNAR_COST_N
};

struct lunar_cost {
	bool on;
	enum lunar_cost_cat cur;
	uint64_t last;
	uint64_t cycles[LUNAR_COST_N];
};

extern __thread struct lunar_cost lunar_cost_tls;

/** Make @cat current. @return the category that was, for lunar_cost_leave(). */
static inline enum lunar_cost_cat lunar_cost_enter(enum lunar_cost_cat cat)
{
	struct lunar_cost *c = &lunar_cost_tls;
	enum lunar_cost_cat prev = c->cur;

	if (__builtin_expect(c->on, 0)) {
		uint64_t t = rte_rdtsc();

		c->cycles[prev] += t - c->last;
		c->last = t;
	}
	c->cur = cat;
	return prev;
}

static inline void lunar_cost_leave(enum lunar_cost_cat prev)
{
	lunar_cost_enter(prev);
}

/** Charge the time since the last change to @cat instead (e.g. a poll that found nothing). */
static inline void lunar_cost_relabel(enum lunar_cost_cat cat)
{
	lunar_cost_tls.cur = cat;
}

/** Start a fresh account on this thread (if @on); the application is current. */
void lunar_cost_start(bool on);
/** Charge the last interval and stop accounting. */
void lunar_cost_stop(void);
/** Percentages of the accounted cycles per category, in enum order (@n <= LUNAR_COST_N). */
void lunar_cost_percent(double *out, unsigned n);
/** The category's name as printed ("rx", "protocol", ...). */
const char *lunar_cost_name(enum lunar_cost_cat cat);
/** CPU time this thread has used, ns (CLOCK_THREAD_CPUTIME_ID). */
uint64_t lunar_thread_cpu_ns(void);

#endif
