/*
 * env.h - bring-up of one lunar instance: EAL, Zbuf memory, the port and
 * its wrappers, the XDP steering maps and the kernel's control plane (on
 * af_xdp), and the network interface; plus one run-to-completion loop
 * iteration. This is the thin worker the tools of the foundation use; the
 * multi-core worker and timer wheel arrive with the thread-model issue.
 */
#ifndef LUNAR_LOOP_ENV_H
#define LUNAR_LOOP_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/xdp.h"
#include "loop/options.h"
#include "net/netif.h"

struct nl_watch;
struct rte_mempool;
struct tcp_stack;
struct tcp_config;

struct lunar_env {
	struct lunar_options opt;
	struct port *port; /* outermost wrapper */
	struct rte_mempool *pool;
	struct netif nif;
	struct nl_watch *nl;     /* af_xdp: the kernel's neighbours and routes */
	struct xdp_steer steer;  /* af_xdp: the steering program's maps */
	bool steer_open;
	bool eal_up, zbuf_up;
	uint64_t tsc_hz;
	uint64_t next_timer_ns;
	bool announced;
	struct tcp_stack *tcp;   /* NULL until lunar_env_tcp() */
};

/**
 * Bring everything up. On failure nothing is left behind (no XDP program,
 * no device, no hugepage file) and @err says what is wrong and how to fix it.
 */
int lunar_env_open(const struct lunar_options *o, const char *prog, struct lunar_env **out,
		   char *err, size_t errlen);
/** One loop iteration: receive burst, process, timers, control plane, transmit. */
unsigned lunar_env_poll(struct lunar_env *env);
/**
 * Start TCP on this instance (idempotent). @cfg NULL: tcp_config_default().
 * Ephemeral ports come from the reserved range. @return the stack or NULL.
 */
struct tcp_stack *lunar_env_tcp(struct lunar_env *env, const struct tcp_config *cfg,
				unsigned max_conns);
/** Tell the XDP program that lunar listens on TCP @port (af_xdp; no-op elsewhere). */
int lunar_env_steer_port(struct lunar_env *env, uint16_t port);
/** Time in nanoseconds from the TSC. */
uint64_t lunar_env_now_ns(const struct lunar_env *env);
/**
 * Tear down in reverse order.
 * @return Zbuf objects still in use once every port has returned its
 *         buffers: 0 means nothing leaked.
 */
uint64_t lunar_env_close(struct lunar_env *env);

/** Install SIGINT/SIGTERM handlers that set the flag returned by lunar_stop_requested(). */
void lunar_handle_signals(void);
bool lunar_stop_requested(void);

#endif
