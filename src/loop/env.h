/*
 * env.h - bring-up of one lunar process and its per-core workers (LUNA §5):
 * EAL, Zbuf memory, the port device with one queue pair per worker, the XDP
 * steering maps (af_xdp), and per worker its own packet pool, queue (with
 * wrappers), interface, netlink mirror of the kernel's tables and TCP stack;
 * plus one run-to-completion loop iteration of a worker.
 *
 * A struct lunar_env is one worker. lunar_env_open() returns worker 0,
 * which also owns what the process shares (EAL, Zbuf, the device, the XDP
 * maps); lunar_env_worker() gives the others. Workers share nothing at run
 * time: each polls its own queue on its own CPU (--core 0,1), and the flow
 * plan (ctl/flow_plan.h) makes every connection's segments come back to
 * the worker that owns it.
 */
#ifndef LUNAR_LOOP_ENV_H
#define LUNAR_LOOP_ENV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/tsc_ns.h"
#include "ctl/flow_plan.h"
#include "ctl/xdp.h"
#include "loop/options.h"
#include "net/netif.h"

struct nl_watch;
struct rte_mempool;
struct tcp_stack;
struct tcp_config;

struct lunar_kpoll;

struct lunar_env {
	struct lunar_options opt;
	unsigned index; /* this worker, 0..n_workers-1 = its queue */
	unsigned n_workers;
	unsigned lcore;		    /* the CPU it runs on */
	struct lunar_env **workers; /* every worker (worker 0's array, shared) */
	struct flow_plan plan;	    /* which worker owns which connection */
	bool nif_up;
	struct port *port; /* outermost wrapper */
	struct rte_mempool *pool;
	struct netif nif;
	struct nl_watch *nl;	/* af_xdp: the kernel's neighbours and routes */
	struct xdp_steer steer; /* af_xdp: the steering program's maps */
	bool steer_open;
	uint64_t cookie_arm_failed; /* XDP SYN-cookie responder updates that failed */
	bool eal_up, zbuf_up;
	uint64_t tsc_hz;
	struct tsc_ns tsc; /* tsc_hz as a multiply-shift factor */
	uint64_t next_timer_ns;
	uint64_t loop_ns; /* when the current or last poll started */
	bool announced;
	struct tcp_stack *tcp; /* NULL until lunar_env_tcp() */
	/*
	 * Watchdog (LUNA §5.1's risk of r2c): an iteration that runs longer
	 * than the budget (an application stalling inside a callback) is
	 * counted and reported, since the whole queue waited for it.
	 */
	uint64_t iterations, over_budget, worst_iter_tsc, budget_tsc;
	uint64_t rx_iterations, rx_iter_tsc; /* iterations that received, and their time */
	/*
	 * --idle-yield: idle iterations in a row so far (capped at the
	 * option's N), and the sched_yield() calls made, which let the
	 * kernel's work on this core (a veth's NAPI thread feeding af_xdp) run
	 * sooner than the scheduler's tick would; the time they kept the loop
	 * away from its core, in all and at worst. The yield is taken at the
	 * start of the next iteration, so that work the caller does between
	 * two polls (lunar_env_note_work(), or frames it queued) can call it
	 * off: called_off counts the former, called_off_tx the latter.
	 */
	unsigned idle_polls;
	uint64_t idle_yields, yield_tsc, worst_yield_tsc, yields_called_off, yields_called_off_tx;
	struct rte_mempool *hdr_pool; /* zero-copy frames' headers (lunar_env_tcp) */
	struct lunar_kpoll *kpoll;    /* kernel sockets in the loop (lunar_env_kpoll), or NULL */
};

/** Default iteration budget of the watchdog; LUNAR_ITER_BUDGET_US overrides it. */
#define LUNAR_ITER_BUDGET_NS 1000000ull

/**
 * Bring everything up. On failure nothing is left behind (no XDP program,
 * no device, no hugepage file) and @err says what is wrong and how to fix it.
 */
int lunar_env_open(const struct lunar_options *o, const char *prog, struct lunar_env **out,
		   char *err, size_t errlen);
/** Worker @i (0 is @env itself), or NULL. */
struct lunar_env *lunar_env_worker(struct lunar_env *env, unsigned i);
/** What each worker runs; @w is that worker. */
typedef int (*lunar_worker_fn)(struct lunar_env *w, void *arg);
/**
 * Run @fn on every worker at once, each on its CPU (worker 0 on the calling
 * thread), and wait for all. @return 0, or the first worker's non-zero result.
 */
int lunar_env_run(struct lunar_env *env, lunar_worker_fn fn, void *arg);
/** One loop iteration: receive burst, process, timers, control plane, transmit. */
unsigned lunar_env_poll(struct lunar_env *env);

/**
 * Tell the loop that the caller found work of its own between two
 * lunar_env_poll() calls (a dispatch channel's messages, say): the iteration
 * was not idle, so --idle-yield must not give the core away before the next
 * poll. Frames the caller queued (a send) count without it. Cheap; a no-op
 * when the option is off.
 */
void lunar_env_note_work(struct lunar_env *env);
/**
 * Start TCP on this worker (idempotent). @cfg NULL: tcp_config_default().
 * Ephemeral ports come from the worker's share of the reserved range (the
 * flow plan). @return the stack or NULL.
 */
struct tcp_stack *lunar_env_tcp(struct lunar_env *env, const struct tcp_config *cfg,
				unsigned max_conns);
/** Tell the XDP program that lunar listens on TCP @port (af_xdp; no-op elsewhere). */
int lunar_env_steer_port(struct lunar_env *env, uint16_t port);
/**
 * Kernel sockets in this worker's loop (LUNA §7.2): created on first use;
 * register fds with lunar_kpoll_add(). From then on every iteration makes
 * one non-blocking epoll_wait of at most LUNAR_KPOLL_BATCH events, so
 * neither lunar's queue nor the kernel's sockets starve. NULL on failure.
 * The set is the worker's: never lunar_kpoll_free() it (lunar_env_close()
 * does), or the next iteration polls freed memory.
 */
struct lunar_kpoll *lunar_env_kpoll(struct lunar_env *env);
#define LUNAR_KPOLL_BATCH 16

/**
 * Print the worker's loop counters (iterations, watchdog) to @f, and on
 * af_xdp the XDP program's counters of its rx queue (misqueued included).
 */
void lunar_env_dump(const struct lunar_env *env, FILE *f);
/** Print only the worker's "loop:" line (iterations, watchdog, idle yields) to @f. */
void lunar_env_dump_loop(const struct lunar_env *env, FILE *f);
/** Time in nanoseconds from the TSC. */
uint64_t lunar_env_now_ns(const struct lunar_env *env);
/**
 * The time the last lunar_env_poll() started at: no clock read, for
 * bookkeeping that can be an iteration late (the first poll's time
 * before that).
 */
static inline uint64_t lunar_env_loop_ns(const struct lunar_env *env)
{
	return env->loop_ns;
}
/**
 * Tear down in reverse order.
 * @return Zbuf objects still in use once every port has returned its
 *         buffers: 0 means nothing leaked.
 */
uint64_t lunar_env_close(struct lunar_env *env);

/** Install SIGINT/SIGTERM handlers that set the flag returned by lunar_stop_requested(). */
void lunar_handle_signals(void);
bool lunar_stop_requested(void);

/** Put the TCP choices among the common options (--cc, --ecn) into @cfg. */
void lunar_options_tcp(const struct lunar_options *o, struct tcp_config *cfg);

#endif
