/*
 * env.c - bring-up and teardown of one lunar instance, and the loop
 * iteration (see env.h). Order matters: everything that can be checked
 * without side effects is checked before EAL creates anything.
 */
#include "loop/env.h"

#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "base/cost.h"
#include "base/eal_exit.h"
#include "base/log.h"
#include "ctl/flow_plan.h"
#include "ctl/netlink.h"
#include "loop/kernel_poll.h"
#include "mem/zbuf.h"
#include "port/port_ethdev.h"
#include "port/port_tap.h"
#include "port/port_fault.h"
#include "port/port_pcap.h"
#include "tcp/tcp_stack.h"

#define RX_BURST       32
#define HDR_POOL_MBUFS 16383 /* two per zero-copy frame in flight to the port */
/*
 * Received frames stay in the pool while connections hold them (zero copy:
 * a 1 MiB receive window is up to ~725 frames), so by default the pool is
 * sized for tens of busy connections: up to 32767 buffers or 128 MiB,
 * whichever is less (jumbo frames take 16 KiB each); --pool overrides it.
 * When many more connections share it, TCP's memory pressure levels keep
 * it from running dry (tcp_stack.c).
 */
#define POOL_MBUFS_MAX	32767
#define POOL_BYTES	(128u << 20)
#define TIMER_PERIOD_NS 10000000ull /* neighbour timers every 10 ms */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

void lunar_handle_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

bool lunar_stop_requested(void)
{
	return stop_flag != 0;
}

static uint64_t tsc_to_ns(const struct lunar_env *env, uint64_t t)
{
	return tsc_ns(&env->tsc, t);
}

uint64_t lunar_env_now_ns(const struct lunar_env *env)
{
	return tsc_to_ns(env, rte_get_tsc_cycles());
}

static const char *xdp_prog_path(void)
{
	const char *env = getenv("LUNAR_XDP_PROG");
	struct stat st;

	if (env && *env)
		return env;
	if (stat(LUNAR_XDP_PROG_BUILD, &st) == 0)
		return LUNAR_XDP_PROG_BUILD;
	return LUNAR_XDP_PROG_INSTALLED;
}

/* The first line of the file at @path into @buf ("" if unreadable). */
static void read_first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
}

/*
 * af_xdp shares the interface with the kernel: the reserved range must not
 * hold the kernel's own client ports (in this namespace's sysctls), or
 * replies to the kernel's connections would be steered to lunar.
 */
static int check_kernel_ports(const struct lunar_env *env, char *err, size_t errlen)
{
	char range[64], reserved[4096];
	unsigned klo, khi;

	read_first_line("/proc/sys/net/ipv4/ip_local_port_range", range, sizeof(range));
	if (sscanf(range, "%u %u", &klo, &khi) != 2)
		return 0; /* no such sysctl: nothing to collide with */
	read_first_line("/proc/sys/net/ipv4/ip_local_reserved_ports", reserved, sizeof(reserved));
	return flow_plan_check_kernel_ports(env->opt.reserved_lo, env->opt.reserved_hi, klo, khi,
					    reserved, err, errlen);
}

/*
 * af_xdp: a kernel socket listening in the reserved range on lunar's
 * address (or all addresses) in this namespace would never see a
 * connection; the steering program gives them to lunar.
 */
static int check_kernel_listeners(const struct lunar_env *env, char *err, size_t errlen)
{
	static const char *const tables[2] = {"/proc/net/tcp", "/proc/net/tcp6"};

	for (unsigned i = 0; i < 2; i++) {
		FILE *t = fopen(tables[i], "r");
		unsigned port = t ? flow_plan_kernel_listener(t, i == 1, env->opt.reserved_lo,
							      env->opt.reserved_hi, env->opt.ip)
				  : 0;

		if (t)
			fclose(t);
		if (port) {
			lunar_set_err(
			    err, errlen,
			    "--reserved %u-%u holds TCP port %u, on which a kernel socket "
			    "listens (ss -ltnp 'sport = :%u'): its connections would be "
			    "steered to lunar. Move that listener, or choose a range "
			    "without port %u",
			    env->opt.reserved_lo, env->opt.reserved_hi, port, port, port);
			return -EADDRINUSE;
		}
	}
	return 0;
}

/* Free hugepages of every size (2 MiB, 1 GiB): EAL takes whichever the host has. */
static unsigned long free_hugepages(void)
{
	static const char *const sizes[] = {"2048kB", "1048576kB"};
	unsigned long total = 0;

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char path[96], line[32];
		unsigned long n;

		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%s/free_hugepages",
			 sizes[i]);
		read_first_line(path, line, sizeof(line));
		if (sscanf(line, "%lu", &n) == 1)
			total += n;
	}
	return total;
}

/* Whether LUNAR_EAL_ARGS runs EAL without hugepages (--no-huge: valgrind, tests). */
static bool eal_without_hugepages(void)
{
	const char *v = getenv("LUNAR_EAL_ARGS");
	size_t n = strlen("--no-huge");

	for (const char *p = v ? strstr(v, "--no-huge") : NULL; p; p = strstr(p + 1, "--no-huge"))
		if ((p == v || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return true;
	return false;
}

/*
 * LUNAR_EAL_ARGS: extra EAL arguments, separated by spaces, appended to
 * lunar's own (e.g. "--no-huge -m 512" to run under valgrind, which cannot
 * reserve the address space hugepage memory needs).
 */
#define LUNAR_EAL_MAX_ARGS 24

static int eal_extra_args(char *buf, size_t len, char **argv, int *argc, char *err, size_t errlen)
{
	const char *env = getenv("LUNAR_EAL_ARGS");
	const int own = *argc; /* lunar's own arguments, argv[0] included */

	if (!env || !*env)
		return 0;
	if (strlen(env) >= len) {
		lunar_set_err(err, errlen, "LUNAR_EAL_ARGS is %zu characters; at most %zu fit",
			      strlen(env), len - 1);
		return -1;
	}
	strcpy(buf, env);
	for (char *save = NULL, *tok = strtok_r(buf, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (*argc >= LUNAR_EAL_MAX_ARGS - 1) {
			lunar_set_err(err, errlen, "LUNAR_EAL_ARGS has more than %d arguments",
				      LUNAR_EAL_MAX_ARGS - 1 - own);
			return -1;
		}
		/* EAL refuses --no-huge with --in-memory; anonymous memory is private anyway. */
		if (!strcmp(tok, "--no-huge"))
			for (int i = 1; i < own; i++)
				if (!strcmp(argv[i], "--in-memory"))
					argv[i] = "--no-shconf";
		argv[(*argc)++] = tok;
	}
	argv[*argc] = NULL;
	return 0;
}

static int eal_up(struct lunar_env *env, const char *prog, char *err, size_t errlen)
{
	char core[LUNAR_MAX_WORKERS * 6], loglevel[32];
	char *argv[LUNAR_EAL_MAX_ARGS] = {(char *)prog, "--no-pci", "--in-memory", "--no-telemetry",
					  "-l",		core,	    loglevel};
	int argc = 7;
	char extra[512];

	size_t off = 0;

	/* -l with every worker's CPU; the first is the main lcore (worker 0). */
	for (unsigned i = 0; i < env->n_workers; i++)
		off += (size_t)snprintf(core + off, sizeof(core) - off, "%s%u", i ? "," : "",
					env->opt.cores[i]);
	snprintf(loglevel, sizeof(loglevel), "--log-level=%s", env->opt.verbose ? "7" : "4");
	if (eal_extra_args(extra, sizeof(extra), argv, &argc, err, errlen) < 0)
		return -EINVAL;
	if (rte_eal_init(argc, argv) < 0) {
		lunar_set_err(err, errlen,
			      "DPDK EAL init failed: %s; check that CPUs %s exist and that "
			      "hugepages are reserved (scripts/hugepages.sh)",
			      rte_strerror(rte_errno), core);
		return -EIO;
	}
	env->eal_up = true;
	env->tsc_hz = rte_get_tsc_hz();
	env->tsc = tsc_ns_init(env->tsc_hz);
	env->loop_ns = lunar_env_now_ns(env);
	return 0;
}

/* netlink -> netif: the kernel's neighbour and route tables, live. */
static void on_kernel_neigh(void *ctx, uint32_t ip, const uint8_t mac[6], bool reachable)
{
	struct lunar_env *env = ctx;
	struct rte_ether_addr a;

	memcpy(a.addr_bytes, mac, 6);
	env->nif.now_ns = lunar_env_now_ns(env);
	netif_neigh_update(&env->nif, ip, &a, reachable);
}

static void on_kernel_route(void *ctx, uint32_t dst, uint8_t plen, uint32_t gw, bool add)
{
	struct lunar_env *env = ctx;

	/* A default via a gateway; an on-link one (`dev X`, no gateway) is a route like others. */
	if (plen == 0 && gw) {
		env->nif.gateway = add ? gw : 0;
		return;
	}
	if (!add) {
		netif_route_del(&env->nif, dst, plen);
		return;
	}
	if (netif_route_add(&env->nif, dst, plen, gw) == -ENOSPC && env->nif.ctr.routes_full == 1)
		LOG_ERR("worker %u: more than %d kernel routes through the interface: the rest are "
			"not followed (counted routes_full; their traffic takes the default route)",
			env->index, NETIF_MAX_ROUTES);
}

static int kernel_resolve(void *ctx, uint32_t ip, struct rte_ether_addr *mac)
{
	if (nl_watch_known(ctx, ip, mac->addr_bytes))
		return 1; /* lunar had let it go; the kernel would not announce it again */
	return nl_watch_resolve(ctx, ip);
}

/*
 * The watchdog's budget: LUNAR_ITER_BUDGET_US (1..10,000,000 us) or the
 * default. -EINVAL, with the fix in @err, for anything else: atol() took
 * junk as the default and wrapped large values once multiplied.
 */
static int iter_budget_ns(uint64_t *out, char *err, size_t errlen)
{
	const char *v = getenv("LUNAR_ITER_BUDGET_US");
	unsigned long us;

	*out = LUNAR_ITER_BUDGET_NS;
	if (!v)
		return 0;
	if (parse_uint_opt("", v, 1, 10000000, &us, err, errlen)) {
		lunar_set_err(err, errlen,
			      "LUNAR_ITER_BUDGET_US=%s: expected the watchdog's budget in "
			      "microseconds, 1..10000000 (unset it for the default %llu)",
			      v, LUNAR_ITER_BUDGET_NS / 1000);
		return -EINVAL;
	}
	*out = (uint64_t)us * 1000;
	return 0;
}

/*
 * The parts of a worker of its own: its queue's port and wrappers, its
 * interface, its netlink mirror; its watchdog's budget @budget_ns.
 */
static int worker_open(struct lunar_env *w, struct port *p, const struct nl_ifinfo *ifi,
		       uint64_t budget_ns, char *err, size_t errlen)
{
	const struct nl_watch_ops nl_ops = {.neigh = on_kernel_neigh, .route = on_kernel_route};
	struct netif_config nc = {0};
	int rc;

	w->budget_tsc = (uint64_t)((__uint128_t)budget_ns * w->tsc_hz / 1000000000u);
	w->port = p;
	w->pool = p->pool;
	if (w->opt.fault.enabled) {
		p = port_fault_wrap(w->port, &w->opt.fault);
		if (!p) {
			lunar_set_err(err, errlen, "out of memory for the fault wrapper");
			return -ENOMEM;
		}
		w->port = p;
	}
	if (w->opt.pcap[0]) {
		p = port_pcap_wrap(w->port, w->opt.pcap, 0, err, errlen);
		if (!p)
			return -EIO;
		w->port = p;
	}
	nc.port = w->port;
	nc.ip = w->opt.ip;
	nc.prefix_len = w->opt.prefix_len;
	nc.gateway = w->opt.gw;
	nc.neigh_mode = w->opt.port.kind == PORT_KIND_AF_XDP ? NEIGH_MODE_KERNEL : NEIGH_MODE_ARP;
	if (w->opt.port.kind == PORT_KIND_AF_XDP)
		nc.kernel_resolve = kernel_resolve;
	rc = netif_init(&w->nif, &nc);
	if (rc) {
		lunar_set_err(err, errlen, "bad interface configuration");
		return rc;
	}
	w->nif_up = true;
	if (w->opt.port.kind == PORT_KIND_AF_XDP) {
		/*
		 * Each worker mirrors the kernel's tables itself (shares nothing),
		 * and has them before its first packet: the dump is read here.
		 */
		w->nl = nl_watch_open(ifi->ifindex, &nl_ops, w);
		if (!w->nl) {
			lunar_set_err(err, errlen,
				      "could not open a netlink socket to follow the "
				      "kernel's neighbour and route tables");
			return -EIO;
		}
		w->nif.kernel_ctx = w->nl;
		nl_watch_poll(w->nl); /* the initial dump */
	}
	return 0;
}

int lunar_env_open(const struct lunar_options *o, const char *prog, struct lunar_env **out,
		   char *err, size_t errlen)
{
	struct lunar_env *env;
	struct nl_ifinfo ifi = {0};
	struct zbuf_config zc = {.backend = ZBUF_BACKEND_DPDK, .socket_id = SOCKET_ID_ANY};
	struct port_ethdev_args pa = {0};
	struct rte_mempool *pools[LUNAR_MAX_WORKERS];
	struct port *ports[LUNAR_MAX_WORKERS];
	uint16_t data_room;
	unsigned n_mbufs = 0, nw;
	uint64_t budget_ns;
	int rc;

	rc = lunar_options_check(o, err, errlen);
	if (!rc)
		rc = iter_budget_ns(&budget_ns, err, errlen);
	if (rc)
		return rc;
	env = calloc(1, sizeof(*env));
	if (!env)
		return -ENOMEM;
	env->opt = *o;
	nw = env->opt.n_workers ? env->opt.n_workers : 1;
	env->n_workers = nw;
	env->lcore = env->opt.core;
	env->workers = calloc(nw, sizeof(*env->workers));
	if (!env->workers) {
		free(env);
		return -ENOMEM;
	}
	env->workers[0] = env;
	rc =
	    flow_plan_init(&env->plan, nw, env->opt.reserved_lo, env->opt.reserved_hi, err, errlen);
	if (rc)
		goto fail;

	/* Checks without side effects first: a bad argument leaves nothing behind. */
	rc = env->opt.port.kind == PORT_KIND_TAP
		 ? port_tap_precheck(&env->opt.port, err, errlen)
		 : port_ethdev_precheck(&env->opt.port, err, errlen);
	if (rc)
		goto fail;
	if (env->opt.port.kind == PORT_KIND_AF_XDP) {
		rc = nl_query_if(env->opt.port.ifname, &ifi, err, errlen);
		if (rc && !env->opt.ip)
			goto fail;
		if (rc) {
			/* No IPv4 address in the kernel, but --ip was given: that is enough. */
			ifi = (struct nl_ifinfo){.ifindex =
						     (int)if_nametoindex(env->opt.port.ifname)};
			err[0] = '\0';
		}
		if (!env->opt.ip) {
			env->opt.ip = ifi.addr;
			env->opt.prefix_len = ifi.prefix_len;
		}
		if (!env->opt.gw)
			env->opt.gw = ifi.gateway;
		if (!env->opt.port.mtu && ifi.mtu)
			env->opt.port.mtu = (uint16_t)(ifi.mtu > 3000 ? 3000 : ifi.mtu);
		rc = check_kernel_ports(env, err, errlen);
		if (!rc)
			rc = check_kernel_listeners(env, err, errlen);
		if (rc)
			goto fail;
	}
	if (!eal_without_hugepages() && free_hugepages() == 0) {
		lunar_set_err(err, errlen,
			      "no free 2 MiB hugepages; reserve some with "
			      "`sudo scripts/hugepages.sh` (or echo 512 > "
			      "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)");
		rc = -ENOMEM;
		goto fail;
	}

	rc = eal_up(env, prog, err, errlen);
	if (rc)
		goto fail;
	/*
	 * One element per Zbuf object, sized for the MTU. af_xdp also needs room
	 * in each frame for the kernel's XDP headroom (256) and its own 128.
	 */
	{
		uint32_t min_room = (env->opt.port.mtu ? env->opt.port.mtu : 1500) + 64;

		if (env->opt.port.kind == PORT_KIND_AF_XDP)
			min_room += 256 + 128;
		unsigned stride;

		if (zbuf_pktpool_geometry(1, min_room, &data_room, &zc.mbuf_zones)) {
			lunar_set_err(err, errlen, "MTU %u is too large for one packet buffer",
				      env->opt.port.mtu);
			rc = -EINVAL;
			goto fail;
		}
		stride = data_room + 64 + 128 + RTE_PKTMBUF_HEADROOM;
		n_mbufs =
		    POOL_BYTES / stride < POOL_MBUFS_MAX ? POOL_BYTES / stride : POOL_MBUFS_MAX;
		/* Several workers split the default; --pool is per worker. */
		if (nw > 1)
			n_mbufs = n_mbufs / nw > LUNAR_POOL_MIN ? n_mbufs / nw : LUNAR_POOL_MIN;
		if (env->opt.pool_mbufs)
			n_mbufs = env->opt.pool_mbufs;
		zbuf_pktpool_geometry(n_mbufs, min_room, &data_room, &zc.mbuf_zones);
		zc.mbuf_zones *= nw; /* one pool per worker: workers share no buffers */
	}
	/* Application buffers: 2K, 4K, 16K, 64K classes (64K for bulk sends). */
	zc.zones[ZBUF_CLASS_2K] = 2;
	zc.zones[ZBUF_CLASS_4K] = 2;
	zc.zones[ZBUF_CLASS_16K] = 4;
	zc.zones[ZBUF_CLASS_64K] = 16;
	rc = zbuf_init(&zc);
	if (rc) {
		lunar_set_err(err, errlen,
			      "could not reserve Zbuf memory (%s); reserve more hugepages "
			      "with scripts/hugepages.sh",
			      strerror(-rc));
		goto fail;
	}
	env->zbuf_up = true;
	zbuf_thread_init(0);
	for (unsigned i = 0; i < nw; i++) {
		char name[32];

		snprintf(name, sizeof(name), i ? "lunar_rx%u" : "lunar_rx", i);
		pools[i] = zbuf_pktpool_create(name, n_mbufs, data_room);
		if (!pools[i]) {
			/* zbuf_pktpool_create() reports through errno (rte_errno only for DPDK's
			 * part). */
			lunar_set_err(
			    err, errlen,
			    "could not create packet pool %u (%u buffers): %s; give fewer "
			    "with --pool, or reserve more hugepages (scripts/hugepages.sh)",
			    i, n_mbufs, strerror(errno));
			rc = -ENOMEM;
			goto fail;
		}
	}
	env->pool = pools[0];
	pa.spec = &env->opt.port;
	pa.n_queues = nw;
	pa.pools = pools;
	pa.xdp_prog = xdp_prog_path();
	if (env->opt.port.kind == PORT_KIND_TAP)
		rc = port_tap_open(&env->opt.port, pools[0], &ports[0], err, errlen);
	else
		rc = port_ethdev_open(&pa, ports, err, errlen);
	if (rc)
		goto fail;
	env->port = ports[0];
	/* Workers 1..n-1 share worker 0's options and plan; each gets its queue. */
	for (unsigned i = 1; i < nw; i++) {
		struct lunar_env *w = calloc(1, sizeof(*w));

		if (!w) {
			for (unsigned j = i; j < nw; j++)
				port_close(ports[j]);
			rc = -ENOMEM;
			goto fail;
		}
		w->opt = env->opt;
		w->index = i;
		w->n_workers = nw;
		w->lcore = env->opt.cores[i];
		w->workers = env->workers;
		w->plan = env->plan;
		w->tsc_hz = env->tsc_hz;
		w->tsc = env->tsc;
		w->loop_ns = env->loop_ns;
		env->workers[i] = w;
		w->port = ports[i]; /* closed with the worker from here on */
	}
	if (env->opt.port.kind == PORT_KIND_AF_XDP) {
		rc = xdp_steer_open(env->opt.port.ifname, &env->steer, err, errlen);
		if (rc)
			goto fail;
		env->steer_open = true;
		/* One worker: the range; several: the per-queue plan (low bits for listeners). */
		rc = nw > 1 ? xdp_steer_set_plan(&env->steer, &env->plan, FLOW_LISTEN_LOW_BITS)
			    : xdp_steer_set_range(&env->steer, env->opt.reserved_lo,
						  env->opt.reserved_hi);
		if (!rc) /* another address's segments (a container's) stay the kernel's */
			rc = xdp_steer_set_addr(&env->steer, env->opt.ip);
		if (rc) {
			lunar_set_err(err, errlen, "could not configure the XDP program: %s",
				      strerror(-rc));
			goto fail;
		}
	}
	for (unsigned i = 0; i < nw; i++) {
		rc = worker_open(env->workers[i], env->workers[i]->port, &ifi, budget_ns, err,
				 errlen);
		if (rc)
			goto fail;
	}
	*out = env;
	return 0;

fail:
	lunar_env_close(env);
	return rc;
}

struct lunar_env *lunar_env_worker(struct lunar_env *env, unsigned i)
{
	return i < env->n_workers ? env->workers[i] : NULL;
}

struct run_arg {
	struct lunar_env *w;
	lunar_worker_fn fn;
	void *arg;
	int rc;
};

static int run_worker(void *p)
{
	struct run_arg *a = p;

	/* Per-core Zbuf caches: worker i is core i of the region. */
	if (a->w->index)
		zbuf_thread_init(a->w->index);
	a->rc = a->fn(a->w, a->arg);
	if (a->w->index)
		zbuf_thread_fini();
	return a->rc;
}

int lunar_env_run(struct lunar_env *env, lunar_worker_fn fn, void *arg)
{
	struct run_arg a[LUNAR_MAX_WORKERS];
	int rc = 0;

	for (unsigned i = 0; i < env->n_workers; i++)
		a[i] = (struct run_arg){.w = env->workers[i], .fn = fn, .arg = arg};
	for (unsigned i = 1; i < env->n_workers; i++) {
		if (rte_eal_remote_launch(run_worker, &a[i], env->workers[i]->lcore)) {
			LOG_ERR("could not start worker %u on CPU %u", i, env->workers[i]->lcore);
			a[i].rc = -EBUSY;
		}
	}
	run_worker(&a[0]);
	rte_eal_mp_wait_lcore();
	for (unsigned i = 0; i < env->n_workers && !rc; i++)
		rc = a[i].rc;
	return rc;
}

/*
 * The stack answered a SYN with a cookie: it is flooded. Let the XDP
 * program answer the next second's SYNs on this worker's queue, on the CPU
 * that receives them, instead of this core (steer_abi.h, lunar_cookie).
 */
static void arm_xdp_cookies(void *arg)
{
	struct lunar_env *env = arg;
	struct tcp_cookie_template t;
	struct lunar_cookie_cfg c;
	struct timespec ts;
	uint64_t ktime;
	int rc;

	if (tcp_stack_cookie_template(env->tcp, &t))
		return;
	/* Both clocks read side by side: bpf_ktime_get_ns()'s and lunar's. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ktime = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	memset(&c, 0, sizeof(c));
	memcpy(c.key, t.key, sizeof(c.key)); /* little-endian words: the bytes as they are */
	c.until_ktime = ktime + TCP_COOKIE_ARM_NS;
	c.clock_off = (int64_t)(lunar_env_now_ns(env) - ktime);
	c.ip = rte_cpu_to_be_32(t.laddr);
	c.mss = t.mss;
	c.window = t.window;
	c.wscale = t.wscale;
	c.ttl = t.ttl;
	c.flags = (t.ws ? LUNAR_COOKIE_WS : 0) | (t.sack ? LUNAR_COOKIE_SACK : 0) |
		  (t.ts ? LUNAR_COOKIE_TS : 0) | (t.ecn ? LUNAR_COOKIE_ECN : 0);
	rc = xdp_steer_set_cookie(&env->workers[0]->steer, env->index, &c);
	if (rc && !env->cookie_arm_failed++)
		LOG_WARN("worker %u: cannot arm the XDP SYN-cookie responder: %s; "
			 "this core answers the flood itself",
			 env->index, strerror(-rc));
}

struct tcp_stack *lunar_env_tcp(struct lunar_env *env, const struct tcp_config *cfg,
				unsigned max_conns)
{
	struct tcp_config def;
	struct tcp_limits lim;
	char err[256];

	if (env->tcp)
		return env->tcp;
	if (!cfg) {
		tcp_config_default(&def);
		cfg = &def;
	}
	/* --tcp-limits conns= overrides the program's number. */
	if (tcp_limits_resolve(&env->opt.tcp_limits, max_conns ? max_conns : 65536, &lim, err,
			       sizeof(err))) {
		LOG_ERR("--tcp-limits: %s", err);
		return NULL;
	}
	env->tcp = tcp_stack_create(&env->nif, cfg, lim.max_conns, &env->plan, env->index);
	if (env->tcp && tcp_stack_set_limits(env->tcp, &lim)) {
		tcp_stack_free(env->tcp);
		env->tcp = NULL;
	}
	if (env->tcp) {
		char name[32];

		/* Headers of zero-copy frames: small buffers, apart from the receive pool. */
		snprintf(name, sizeof(name), "lunar_hdr%u", env->index);
		env->hdr_pool = rte_pktmbuf_pool_create(name, HDR_POOL_MBUFS, 256, 0,
							RTE_PKTMBUF_HEADROOM + 128, SOCKET_ID_ANY);
		if (!env->hdr_pool)
			LOG_WARN("no header pool (%s): TCP payload is copied into frames",
				 rte_strerror(rte_errno));
		tcp_stack_set_hdr_pool(env->tcp, env->hdr_pool);
		/* lunar_env_poll() calls tcp_stack_after_tx() */
		tcp_stack_defer_to_tx(env->tcp, true);
		if (env->workers[0]->steer_open && env->opt.xdp_syncookies)
			tcp_stack_set_cookie_hook(env->tcp, arm_xdp_cookies, env);
		/* give it the time before any connect */
		tcp_stack_poll(env->tcp, lunar_env_now_ns(env));
		tcp_stack_after_tx(env->tcp);
	}
	return env->tcp;
}

int lunar_env_steer_port(struct lunar_env *env, uint16_t port)
{
	env = env->workers[0]; /* one program for the whole device */
	if (!env->steer_open)
		return 0;
	return xdp_steer_add_port(&env->steer, port);
}

/*
 * Kept in TSC cycles: one subtraction per iteration, nanoseconds only to
 * report. An iteration over budget is blamed on what took most of it: the
 * port's transmit (from @tx_tsc; on af_xdp in copy mode a system call in
 * which the kernel sends every frame) or the rest, where the application's
 * callbacks run.
 */
static void watchdog(struct lunar_env *env, uint64_t start_tsc, uint64_t tx_tsc, uint16_t received)
{
	uint64_t end = rte_get_tsc_cycles(), took = end - start_tsc, tx = end - tx_tsc;

	env->iterations++;
	if (received) {
		env->rx_iterations++;
		env->rx_iter_tsc += took;
	}
	if (took > env->worst_iter_tsc)
		env->worst_iter_tsc = took;
	if (took <= env->budget_tsc)
		return;
	/* Reported at the 1st, 2nd, 4th, 8th... time: visible, never a flood. */
	if (!(env->over_budget & (env->over_budget + 1)))
		LOG_WARN(
		    "worker %u: a loop iteration took %lu us (budget %lu us; %lu over so far), "
		    "%lu us of it in the port's transmit: %s",
		    env->index, (unsigned long)(tsc_to_ns(env, took) / 1000),
		    (unsigned long)(tsc_to_ns(env, env->budget_tsc) / 1000),
		    (unsigned long)env->over_budget + 1, (unsigned long)(tsc_to_ns(env, tx) / 1000),
		    2 * tx > took ? "the port (or the kernel behind it) is slow to take frames"
				  : "is an application callback blocking?");
	env->over_budget++;
}

/*
 * --idle-yield: after opt.idle_yield idle iterations in a row (nothing
 * received, sent or served from the kernel's sockets, and no work noted by
 * the caller), give the CPU away on each further one. The end of an
 * iteration only decides; the yield itself comes at the start of the next
 * poll, so that the caller's own work in between can call it off: by
 * lunar_env_note_work(), or by queuing frames, which the loop sees itself.
 * The time away is counted apart from the loop's own, as the watchdog does
 * not see it: other tasks ran then.
 */
/* The last iteration made the N-th idle one in a row (or a later one): yield before the next. */
static bool yield_due(const struct lunar_env *env)
{
	return env->opt.idle_yield && env->idle_polls >= env->opt.idle_yield;
}

static void idle_count(struct lunar_env *env, bool busy)
{
	if (busy)
		env->idle_polls = 0;
	else if (env->idle_polls < env->opt.idle_yield)
		env->idle_polls++;
}

static void idle_yield(struct lunar_env *env)
{
	enum lunar_cost_cat prev = lunar_cost_enter(LUNAR_COST_IDLE);
	uint64_t t0 = rte_get_tsc_cycles(), away;

	sched_yield();
	away = rte_get_tsc_cycles() - t0;
	lunar_cost_leave(prev);
	env->idle_yields++;
	env->yield_tsc += away;
	if (away > env->worst_yield_tsc)
		env->worst_yield_tsc = away;
}

void lunar_env_note_work(struct lunar_env *env)
{
	if (yield_due(env))
		env->yields_called_off++;
	env->idle_polls = 0;
}

unsigned lunar_env_poll(struct lunar_env *env)
{
	struct rte_mbuf *pkts[RX_BURST];
	uint64_t start_tsc, tx_tsc, now;
	uint64_t frames_before = env->nif.ctr.tx_frames;
	enum lunar_cost_cat prev;
	int kernel_events = 0;
	uint16_t n;

	/*
	 * The last iteration, the caller's part included, was idle, unless the
	 * caller queued frames since (a send between two polls): those go first.
	 */
	if (yield_due(env)) {
		if (env->nif.txq_len) {
			idle_count(env, true);
			env->yields_called_off_tx++;
		} else {
			idle_yield(env);
		}
	}
	start_tsc = rte_get_tsc_cycles();
	now = tsc_to_ns(env, start_tsc);
	env->loop_ns = now;
	prev = lunar_cost_enter(LUNAR_COST_RX);
	/* Buffers the iteration is done with are freed after its transmit, not before. */
	zbuf_defer_begin();
	n = port_rx_burst(env->port, pkts, RX_BURST);
	if (n) {
		lunar_cost_enter(LUNAR_COST_PROTOCOL);
		netif_input(&env->nif, pkts, n, now);
	} else {
		lunar_cost_relabel(LUNAR_COST_IDLE); /* a poll that found nothing */
	}
	lunar_cost_enter(LUNAR_COST_TIMERS);
	if (env->tcp)
		tcp_stack_poll(env->tcp, now); /* timers, then the applications' callbacks */
	if (now >= env->next_timer_ns) {
		/*
		 * The link is asked here, not every iteration: a port's link query
		 * is a library call, which the idle loop paid each time round.
		 * memif's link never reads up, so a first frame received counts as
		 * the link being up: a peer that still sends to the MAC of our
		 * previous run then learns the new one.
		 */
		if (!env->announced && env->nif.neigh_mode == NEIGH_MODE_ARP &&
		    (env->nif.ctr.rx_frames || port_link_up(env->port))) {
			env->nif.now_ns = now;
			netif_gratuitous_arp(&env->nif);
			env->announced = true;
		}
		netif_timers(&env->nif, now);
		if (env->nl)
			nl_watch_poll(env->nl);
		env->next_timer_ns = now + TIMER_PERIOD_NS;
	}
	/* The kernel's sockets get their turn each iteration, a bounded batch of them. */
	if (env->kpoll) {
		lunar_cost_enter(LUNAR_COST_APP);
		kernel_events = lunar_kpoll_run(env->kpoll, LUNAR_KPOLL_BATCH);
	}
	/*
	 * Transmit at the end of every iteration: replies go out with the burst that caused them.
	 */
	lunar_cost_enter(LUNAR_COST_TX);
	tx_tsc = rte_get_tsc_cycles();
	netif_flush(&env->nif);
	/* What no frame waited for: timers re-armed, frames and buffers freed. */
	lunar_cost_enter(LUNAR_COST_TIMERS);
	if (env->tcp)
		tcp_stack_after_tx(env->tcp);
	lunar_cost_enter(LUNAR_COST_BUFFERS);
	zbuf_defer_end();
	lunar_cost_leave(prev);
	watchdog(env, start_tsc, tx_tsc, n);
	if (env->opt.idle_yield)
		idle_count(env, n || env->nif.ctr.tx_frames != frames_before || kernel_events > 0);
	return n;
}

struct lunar_kpoll *lunar_env_kpoll(struct lunar_env *env)
{
	if (!env->kpoll && lunar_kpoll_create(LUNAR_KPOLL_BATCH, &env->kpoll))
		env->kpoll = NULL;
	return env->kpoll;
}

void lunar_env_dump_loop(const struct lunar_env *env, FILE *f)
{
	fprintf(f,
		"loop: worker %u iterations %lu over_budget %lu worst_iter_us %lu budget_us %lu "
		"rx_iterations %lu rx_iter_avg_ns %lu idle_yields %lu yield_ms %lu "
		"worst_yield_us %lu yields_called_off %lu yields_called_off_tx %lu\n",
		env->index, (unsigned long)env->iterations, (unsigned long)env->over_budget,
		(unsigned long)(tsc_to_ns(env, env->worst_iter_tsc) / 1000),
		(unsigned long)(tsc_to_ns(env, env->budget_tsc) / 1000),
		(unsigned long)env->rx_iterations,
		(unsigned long)(env->rx_iterations
				    ? tsc_to_ns(env, env->rx_iter_tsc) / env->rx_iterations
				    : 0),
		(unsigned long)env->idle_yields,
		(unsigned long)(tsc_to_ns(env, env->yield_tsc) / 1000000),
		(unsigned long)(tsc_to_ns(env, env->worst_yield_tsc) / 1000),
		(unsigned long)env->yields_called_off, (unsigned long)env->yields_called_off_tx);
}

void lunar_env_dump(const struct lunar_env *env, FILE *f)
{
	const struct lunar_env *w0 = env->workers[0]; /* holds the XDP program's maps */
	struct xdp_steer_counters c;

	lunar_env_dump_loop(env, f);
	/* What the XDP program did with the frames of this worker's rx queue. */
	if (w0->steer_open && xdp_steer_counters(&w0->steer, env->index, &c) == 0)
		fprintf(
		    f,
		    "xdp: queue %u to_lunar %lu to_kernel %lu redirect_failed %lu misqueued %lu "
		    "syncookies %lu\n",
		    env->index, (unsigned long)c.to_lunar, (unsigned long)c.to_kernel,
		    (unsigned long)c.redirect_failed, (unsigned long)c.misqueued,
		    (unsigned long)c.syncookies);
}

/* What a worker owns: its TCP stack, interface, queue (port) and netlink mirror. */
static void worker_close(struct lunar_env *w)
{
	if (w->tcp) {
		tcp_stack_free(w->tcp); /* resets what is still open */
		netif_flush(&w->nif);
		w->tcp = NULL;
	}
	if (w->nif_up) {
		netif_fini(&w->nif);
		w->nif_up = false;
	}
	if (w->port) {
		port_close(w->port); /* the device returns the mbufs on its rings */
		w->port = NULL;
	}
	rte_mempool_free(w->hdr_pool); /* after the port: it may have held frames */
	w->hdr_pool = NULL;
	if (w->nl) {
		nl_watch_close(w->nl);
		w->nl = NULL;
	}
	if (w->kpoll) {
		lunar_kpoll_free(w->kpoll);
		w->kpoll = NULL;
	}
}

uint64_t lunar_env_close(struct lunar_env *env)
{
	uint64_t leaked = 0;

	if (!env)
		return 0;
	/* Worker 0 owns the process's resources; the others only their own parts. */
	for (unsigned i = env->n_workers; i-- > 1;) {
		if (env->workers && env->workers[i]) {
			worker_close(env->workers[i]);
			free(env->workers[i]);
		}
	}
	worker_close(env);
	if (env->zbuf_up)
		leaked = zbuf_in_use();
	if (env->steer_open)
		xdp_steer_close(&env->steer);
	if (env->zbuf_up)
		zbuf_fini(); /* frees the packet pools too */
	if (env->eal_up)
		lunar_eal_cleanup(); /* not rte_eal_cleanup(): base/eal_exit.h */
	free(env->workers);
	free(env);
	return leaked;
}

void lunar_options_tcp(const struct lunar_options *o, struct tcp_config *cfg)
{
	if (o->cc >= 0)
		cfg->cc = (enum tcp_cc_algo)o->cc;
	if (o->ecn >= 0)
		cfg->ecn = (uint8_t)o->ecn;
	if (o->no_gso)
		cfg->gso = false;
	if (o->no_gro)
		cfg->gro = false;
	if (o->hystart_min_ns >= 0) {
		cfg->hystart_min_ns = (uint64_t)o->hystart_min_ns;
		cfg->hystart_max_ns = (uint64_t)o->hystart_max_ns;
	}
	if (o->probes >= 0) {
		cfg->recovery_probe = o->probes > 0;
		cfg->probe_max = (uint8_t)(o->probes ? o->probes : 1);
	}
	if (o->blackhole_rtos >= 0)
		cfg->blackhole_rtos = (uint8_t)o->blackhole_rtos;
	if (o->blackhole_hold_s > 0)
		cfg->blackhole_hold_ns = (uint64_t)(o->blackhole_hold_s * 1e9);
	if (o->probe_interval_s >= 0)
		cfg->probe_interval_ns = (uint64_t)(o->probe_interval_s * 1e9);
	if (o->sock_buf)
		cfg->rcv_buf = cfg->snd_buf = o->sock_buf;
	if (o->keepalive >= 0)
		cfg->keepalive = o->keepalive == 1;
	if (o->keepalive == 1) {
		cfg->keepalive_idle_ns = (uint64_t)(o->keepalive_idle_s * 1e9);
		cfg->keepalive_intvl_ns = (uint64_t)(o->keepalive_intvl_s * 1e9);
		cfg->keepalive_probes = o->keepalive_probes;
	}
}
