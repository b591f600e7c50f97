/*
 * knb_opts.c - knb's command line: parsing, defaults, and the checks that
 * turn impossible combinations into an error that says what to do.
 */
#include "knb.h"

#include <errno.h>
#include <getopt.h>
#include <unistd.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

enum {
	OPT_STACK = 1,
	OPT_LISTEN,
	OPT_CONNECT,
	OPT_THREADS,
	OPT_SERVER_THREADS,
	OPT_FLOWS,
	OPT_PATTERN,
	OPT_MSG_SIZE,
	OPT_IODEPTH,
	OPT_DURATION,
	OPT_WARMUP,
	OPT_CONNECT_TIMEOUT,
	OPT_KERNEL_MODE,
	OPT_JSON,
	OPT_CPU_BREAKDOWN,
	OPT_PROTO_VERSION,
	OPT_API,
	OPT_APP_STALL,
	OPT_APP_CORE,
	OPT_KERNEL_ECHO,
};

static void usage(FILE *f)
{
	fputs(
	    "usage: knb server --stack kernel|lunar|raw --listen IP:PORT [options]\n"
	    "       knb client --stack kernel|lunar|raw --connect IP:PORT [options]\n"
	    "\n"
	    "A long-lived TCP connection between every client thread and every server\n"
	    "thread (server thread i listens on PORT + i); the client sends requests of\n"
	    "--msg-size bytes, the server answers each with as many.\n"
	    "\n"
	    "  --stack kernel|lunar|raw Linux sockets (epoll), lunar (needs --port), or raw:\n"
	    "                           no stack, an RPC's frames ping-ponged over\n"
	    "                           --port memif:... (the floor; pattern rpc, one flow)\n"
	    "  --threads N              client or server threads (lunar: one per --core CPU) [1]\n"
	    "  --server-threads M       client: threads the server runs [1]\n"
	    "  --pattern P              rpc | stream | incast | outcast | all-to-all | mixed "
	    "[rpc]\n"
	    "  --flows F                connections per client/server thread pair [1]\n"
	    "  --msg-size BYTES         request and response size, 1..1M (4K, 64K...) [4096]\n"
	    "  --iodepth D              requests in flight per RPC connection, 1..1024 [1]\n"
	    "  --duration S             measured seconds [5]\n"
	    "  --warmup S               seconds before measuring [1]\n"
	    "  --connect-timeout S      give up connecting after S seconds [5]\n"
	    "  --kernel-mode M          blocking | busy-poll (kernel stack) [busy-poll]\n"
	    "  --cpu-breakdown          lunar: CPU time by category (TSC; adds a little cost)\n"
	    "  --api batch|inline|copy|dispatch\n"
	    "                           lunar: zero-copy events after each burst, zero-copy\n"
	    "                           callbacks per segment, the copying socket-like calls\n"
	    "                           with epoll-like readiness (api/lsock.h), or (server)\n"
	    "                           an application thread apart from the stack's, over\n"
	    "                           channels (api/dispatch_tcp.h) [batch]\n"
	    "  --app-core N             lunar server, --api dispatch: run the application thread\n"
	    "                           (each worker's) on CPU N [the worker's --core CPU]\n"
	    "  --app-stall-us N         lunar server: a misbehaving application that spins N us\n"
	    "                           in each data callback (shows the loop watchdog) [0]\n"
	    "  --kernel-echo PORT       lunar server: also echo kernel TCP on 127.0.0.1:PORT from\n"
	    "                           the same loop (kernel sockets in the loop, LUNA 7.2)\n"
	    "  --json FILE              write the results (schema 1: docs/KNB.md)\n"
	    "  --protocol-version N     speak another protocol version (testing only)\n"
	    "\n",
	    f);
	lunar_options_usage(f);
}

static int parse_endpoint(const char *name, const char *arg, struct knb_config *c)
{
	char host[64], *colon;
	unsigned long port;
	char err[128];

	snprintf(host, sizeof(host), "%s", arg);
	colon = strrchr(host, ':');
	if (strlen(arg) >= sizeof(host) || !colon || (*colon = '\0', parse_ipv4(host, &c->addr)) ||
	    parse_uint_opt(name, colon + 1, 1, 65535, &port, err, sizeof(err))) {
		fprintf(stderr, "knb: --%s %s: expected IP:PORT, e.g. 192.168.77.2:7000\n", name,
			arg);
		return -1;
	}
	c->port = (uint16_t)port;
	return 0;
}

static int uint_opt(const char *name, const char *arg, unsigned long lo, unsigned long hi,
		    unsigned *out)
{
	unsigned long v;
	char err[160];

	if (parse_uint_opt(name, arg, lo, hi, &v, err, sizeof(err))) {
		fprintf(stderr, "knb: %s\n", err);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static int seconds_opt(const char *name, const char *arg, double *out)
{
	char err[160];

	if (parse_seconds_opt(name, arg, 86400, out, err, sizeof(err))) {
		fprintf(stderr, "knb: %s\n", err);
		return -1;
	}
	return 0;
}

/* One knb option. @return 0 or -1 (message printed). */
static int apply(struct knb_config *c, int opt, const char *arg, bool *have_endpoint)
{
	uint64_t size;

	switch (opt) {
	case OPT_STACK:
		if (!strcmp(arg, "kernel"))
			c->stack = KNB_STACK_KERNEL;
		else if (!strcmp(arg, "lunar"))
			c->stack = KNB_STACK_LUNAR;
		else if (!strcmp(arg, "raw"))
			c->stack = KNB_STACK_RAW;
		else {
			fprintf(stderr, "knb: --stack %s: expected kernel, lunar or raw\n", arg);
			return -1;
		}
		return 0;
	case OPT_LISTEN:
	case OPT_CONNECT:
		if ((opt == OPT_LISTEN) != c->server) {
			fprintf(stderr, "knb: --%s is for the %s; the %s takes --%s\n",
				opt == OPT_LISTEN ? "listen" : "connect",
				opt == OPT_LISTEN ? "server" : "client",
				c->server ? "server" : "client", c->server ? "listen" : "connect");
			return -1;
		}
		*have_endpoint = true;
		return parse_endpoint(opt == OPT_LISTEN ? "listen" : "connect", arg, c);
	case OPT_THREADS:
		c->threads_given = true;
		return uint_opt("threads", arg, 1, KNB_MAX_THREADS, &c->threads);
	case OPT_SERVER_THREADS:
		return uint_opt("server-threads", arg, 1, KNB_MAX_THREADS, &c->server_threads);
	case OPT_FLOWS:
		return uint_opt("flows", arg, 1, KNB_MAX_FLOWS, &c->flows);
	case OPT_PATTERN:
		for (unsigned p = 0; p < KNB_PATTERN_COUNT; p++)
			if (!strcmp(arg, knb_pattern_name((enum knb_pattern)p))) {
				c->pattern = (enum knb_pattern)p;
				return 0;
			}
		fprintf(stderr,
			"knb: --pattern %s: expected rpc, stream, incast, outcast, "
			"all-to-all or mixed\n",
			arg);
		return -1;
	case OPT_MSG_SIZE:
		if (parse_size(arg, &size) || size == 0 || size > KNB_MAX_MSG) {
			fprintf(
			    stderr,
			    "knb: --msg-size %s: expected 1 to %u bytes (1M), e.g. 4096 or 64K\n",
			    arg, KNB_MAX_MSG);
			return -1;
		}
		c->msg_size = (uint32_t)size;
		return 0;
	case OPT_IODEPTH:
		return uint_opt("iodepth", arg, 1, KNB_MAX_IODEPTH, &c->iodepth);
	case OPT_DURATION:
		return seconds_opt("duration", arg, &c->duration_s);
	case OPT_WARMUP:
		return seconds_opt("warmup", arg, &c->warmup_s);
	case OPT_CONNECT_TIMEOUT:
		return seconds_opt("connect-timeout", arg, &c->connect_timeout_s);
	case OPT_KERNEL_MODE:
		if (!strcmp(arg, "busy-poll"))
			c->kernel_mode = KNB_KERNEL_BUSY_POLL;
		else if (!strcmp(arg, "blocking"))
			c->kernel_mode = KNB_KERNEL_BLOCKING;
		else {
			fprintf(stderr, "knb: --kernel-mode %s: expected blocking or busy-poll\n",
				arg);
			return -1;
		}
		return 0;
	case OPT_JSON:
		c->json_path = arg;
		return 0;
	case OPT_CPU_BREAKDOWN:
		c->cpu_breakdown = true;
		return 0;
	case OPT_KERNEL_ECHO:
		return uint_opt("kernel-echo", arg, 1, 65535, &c->kernel_echo_port);
	case OPT_APP_STALL:
		return uint_opt("app-stall-us", arg, 0, 1000000, &c->app_stall_us);
	case OPT_APP_CORE:
		c->app_core_given = true;
		return uint_opt("app-core", arg, 0, CPU_SETSIZE - 1, &c->app_core);
	case OPT_API:
		if (!strcmp(arg, "batch"))
			c->api = KNB_API_BATCH;
		else if (!strcmp(arg, "inline"))
			c->api = KNB_API_INLINE;
		else if (!strcmp(arg, "copy"))
			c->api = KNB_API_COPY;
		else if (!strcmp(arg, "dispatch"))
			c->api = KNB_API_DISPATCH;
		else {
			fprintf(stderr, "knb: --api %s: expected batch, inline, copy or dispatch\n",
				arg);
			return -1;
		}
		c->api_given = true;
		return 0;
	case OPT_PROTO_VERSION:
		return uint_opt("protocol-version", arg, 1, 65535, &c->proto_version);
	default:
		usage(stderr);
		return -1;
	}
}

const char *knb_stack_name(enum knb_stack s)
{
	return s == KNB_STACK_LUNAR ? "lunar" : s == KNB_STACK_RAW ? "raw" : "kernel";
}

#define SEEN(c, opt) ((c)->lunar_opts_seen & (1u << ((opt)-LUNAR_OPT_PORT)))

/* The name of the first lunar option given among those @mask (bits as SEEN) covers, or NULL. */
static const char *first_seen(const struct knb_config *c, uint32_t mask)
{
	static const struct option lunar_opts[] = {LUNAR_COMMON_LONGOPTS, {0}};

	for (const struct option *o = lunar_opts; o->name; o++)
		if (o->val >= LUNAR_OPT_PORT && o->val < LUNAR_OPT_PORT + 32 &&
		    (mask & c->lunar_opts_seen & (1u << (o->val - LUNAR_OPT_PORT))))
			return o->name;
	return NULL;
}

/* The options that set lunar's TCP: nothing to set in the raw ping-pong. */
#define TCP_OPTS_MASK                                                                              \
	((1u << (LUNAR_OPT_CC - LUNAR_OPT_PORT)) | (1u << (LUNAR_OPT_ECN - LUNAR_OPT_PORT)) |      \
	 (1u << (LUNAR_OPT_TCP_LIMITS - LUNAR_OPT_PORT)) |                                         \
	 (1u << (LUNAR_OPT_KEEPALIVE - LUNAR_OPT_PORT)) |                                          \
	 (1u << (LUNAR_OPT_XDP_SYNCOOKIES - LUNAR_OPT_PORT)) |                                     \
	 (1u << (LUNAR_OPT_SOCK_BUF - LUNAR_OPT_PORT)) |                                           \
	 (1u << (LUNAR_OPT_HYSTART - LUNAR_OPT_PORT)) |                                            \
	 (1u << (LUNAR_OPT_PROBES - LUNAR_OPT_PORT)) |                                             \
	 (1u << (LUNAR_OPT_PMTU_BLACKHOLE - LUNAR_OPT_PORT)) |                                     \
	 (1u << (LUNAR_OPT_PMTU_PROBE - LUNAR_OPT_PORT)) |                                         \
	 (1u << (LUNAR_OPT_GSO - LUNAR_OPT_PORT)) | (1u << (LUNAR_OPT_GRO - LUNAR_OPT_PORT)))

/* --stack raw: one RPC flow over memif, and no option that needs a stack. */
static int check_raw(const struct knb_config *c, bool kernel_mode_given)
{
	const char *why = NULL, *tcp_opt;
	char err[512];

	if (!c->lo.has_port || c->lo.port.kind != PORT_KIND_MEMIF)
		why = "--stack raw needs --port memif:PATH[:server|client]: it ping-pongs frames "
		      "between two knb processes over memif with no stack (on af_xdp or tap they "
		      "would reach the kernel's TCP, which answers them with resets)";
	else if (c->pattern != KNB_PATTERN_RPC)
		why =
		    "--stack raw measures pattern rpc only: a ping-pong of requests and responses "
		    "(the other patterns need TCP's flow control)";
	else if (c->threads != 1 || c->server_threads != 1 || c->flows != 1)
		why = "--stack raw runs one flow between one client and one server thread: use "
		      "--threads 1, --server-threads 1 and --flows 1 (and --iodepth for more in "
		      "flight)";
	else if (kernel_mode_given)
		why = "--kernel-mode is for --stack kernel; the raw ping-pong always polls";
	else if (SEEN(c, LUNAR_OPT_IDLE_YIELD))
		why = "--idle-yield is for --stack lunar's loop; the raw ping-pong always polls";
	else if (c->cpu_breakdown)
		why = "--cpu-breakdown splits lunar's time by layer; --stack raw has no layers";
	else if (SEEN(c, LUNAR_OPT_FAULT))
		why = "--fault makes no sense with --stack raw: it never retransmits, so one lost "
		      "frame would stall it";
	else if (SEEN(c, LUNAR_OPT_GW) || SEEN(c, LUNAR_OPT_RESERVED))
		why =
		    "--gw and --reserved are for a TCP/IP stack; the raw ping-pong neither routes "
		    "nor steers ports";
	else if (c->lo.n_workers > 1)
		why = "--stack raw runs one flow on one CPU: give --core one CPU";
	if (why) {
		fprintf(stderr, "knb: %s\n", why);
		return -1;
	}
	tcp_opt = first_seen(c, TCP_OPTS_MASK);
	if (tcp_opt) {
		fprintf(stderr,
			"knb: --%s sets lunar's TCP; --stack raw has no TCP (use --stack lunar)\n",
			tcp_opt);
		return -1;
	}
	if (lunar_options_check(&c->lo, err, sizeof(err))) {
		fprintf(stderr, "knb: %s\n", err);
		return -1;
	}
	return 0;
}

/* Combinations that cannot work, each with what to do instead. */
static int check(const struct knb_config *c, bool have_stack, bool have_endpoint,
		 bool kernel_mode_given)
{
	char err[512];

	if (!have_stack) {
		fprintf(stderr, "knb: give --stack kernel, --stack lunar or --stack raw\n");
		return -1;
	}
	if (!have_endpoint) {
		fprintf(stderr, "knb: give %s IP:PORT\n", c->server ? "--listen" : "--connect");
		return -1;
	}
	if (c->stack == KNB_STACK_KERNEL && c->lunar_opts_given) {
		fprintf(
		    stderr,
		    "knb: --%s is lunar's (--stack lunar; the port's options also --stack raw); "
		    "the kernel stack uses the host's interfaces and TCP settings (sysctl)\n",
		    first_seen(c, ~((1u << (LUNAR_OPT_CORE - LUNAR_OPT_PORT)) |
				    (1u << (LUNAR_OPT_VERBOSE - LUNAR_OPT_PORT)))));
		return -1;
	}
	if (c->stack == KNB_STACK_KERNEL && c->core_given) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		for (unsigned i = 0; i < c->lo.n_workers; i++)
			if (ncpu > 0 && c->lo.cores[i] >= (unsigned)ncpu) {
				fprintf(stderr, "knb: --core %u: this host has CPUs 0..%ld\n",
					c->lo.cores[i], ncpu - 1);
				return -1;
			}
		if (c->lo.n_workers > 1 && c->lo.n_workers != c->threads) {
			fprintf(
			    stderr,
			    "knb: --core lists %u CPUs for %u threads: give one CPU per thread, "
			    "or one CPU to start from (thread i runs on CPU + i)\n",
			    c->lo.n_workers, c->threads);
			return -1;
		}
	}
	if (c->stack == KNB_STACK_LUNAR) {
		if (kernel_mode_given) {
			fprintf(
			    stderr,
			    "knb: --kernel-mode is for --stack kernel; lunar polls (--idle-yield N "
			    "lets it give its CPU away when idle)\n");
			return -1;
		}
		/* One thread per worker, and one worker per --core CPU. */
		if (c->threads_given && c->threads != c->lo.n_workers) {
			fprintf(stderr,
				"knb: --stack lunar runs one thread per worker, one worker per "
				"--core CPU; for %u threads give %u CPUs, e.g. --core 0,1\n",
				c->threads, c->threads);
			return -1;
		}
		if (c->api == KNB_API_DISPATCH && !c->server) {
			fprintf(
			    stderr,
			    "knb: --api dispatch is a server mode (application threads "
			    "apart from the stack core); give the client batch, inline or copy\n");
			return -1;
		}
		if (c->app_core_given && (c->api != KNB_API_DISPATCH || !c->server)) {
			fprintf(stderr,
				"knb: --app-core places dispatch mode's application thread; "
				"it needs knb server --api dispatch (the other APIs run "
				"on the --core CPU)\n");
			return -1;
		}
		if (lunar_options_check(&c->lo, err, sizeof(err))) {
			fprintf(stderr, "knb: %s\n", err);
			return -1;
		}
	} else if (c->api_given) {
		fprintf(stderr, "knb: --api chooses lunar's interface; it needs --stack lunar\n");
		return -1;
	} else if (c->app_core_given) {
		fprintf(stderr, "knb: --app-core places dispatch mode's application thread; it "
				"needs knb server --stack lunar --api dispatch\n");
		return -1;
	} else if (c->stack == KNB_STACK_RAW) {
		if (check_raw(c, kernel_mode_given))
			return -1;
	} else if (c->cpu_breakdown) {
		fprintf(stderr,
			"knb: --cpu-breakdown measures lunar's loop; it needs --stack lunar\n");
		return -1;
	}
	if ((unsigned)c->port + (c->server ? c->threads : c->server_threads) - 1 > 65535) {
		fprintf(stderr, "knb: port %u + %u threads runs past 65535\n", c->port,
			c->server ? c->threads : c->server_threads);
		return -1;
	}
	if (!c->server) {
		if (c->duration_s <= 0) {
			fprintf(stderr, "knb: --duration must be more than 0 seconds\n");
			return -1;
		}
		if (c->connect_timeout_s <= 0) {
			fprintf(stderr, "knb: --connect-timeout must be more than 0 seconds\n");
			return -1;
		}
		if (c->flows * c->server_threads * 2 > KNB_MAX_FLOWS) {
			fprintf(stderr,
				"knb: --flows %u x %u server threads is more than %u connections "
				"per client thread\n",
				c->flows, c->server_threads, KNB_MAX_FLOWS);
			return -1;
		}
	}
	return 0;
}

int knb_parse_args(int argc, char **argv, struct knb_config *c)
{
	static const struct option longopts[] = {
	    LUNAR_COMMON_LONGOPTS,
	    {"stack", required_argument, NULL, OPT_STACK},
	    {"listen", required_argument, NULL, OPT_LISTEN},
	    {"connect", required_argument, NULL, OPT_CONNECT},
	    {"threads", required_argument, NULL, OPT_THREADS},
	    {"server-threads", required_argument, NULL, OPT_SERVER_THREADS},
	    {"flows", required_argument, NULL, OPT_FLOWS},
	    {"pattern", required_argument, NULL, OPT_PATTERN},
	    {"msg-size", required_argument, NULL, OPT_MSG_SIZE},
	    {"iodepth", required_argument, NULL, OPT_IODEPTH},
	    {"duration", required_argument, NULL, OPT_DURATION},
	    {"warmup", required_argument, NULL, OPT_WARMUP},
	    {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
	    {"kernel-mode", required_argument, NULL, OPT_KERNEL_MODE},
	    {"json", required_argument, NULL, OPT_JSON},
	    {"cpu-breakdown", no_argument, NULL, OPT_CPU_BREAKDOWN},
	    {"api", required_argument, NULL, OPT_API},
	    {"app-stall-us", required_argument, NULL, OPT_APP_STALL},
	    {"app-core", required_argument, NULL, OPT_APP_CORE},
	    {"kernel-echo", required_argument, NULL, OPT_KERNEL_ECHO},
	    {"protocol-version", required_argument, NULL, OPT_PROTO_VERSION},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	bool have_stack = false, have_endpoint = false, kernel_mode_given = false;
	size_t used = 0;
	char err[512];
	int opt;

	memset(c, 0, sizeof(*c));
	lunar_options_init(&c->lo);
	c->threads = c->server_threads = c->flows = 1;
	c->msg_size = 4096;
	c->iodepth = 1;
	c->duration_s = 5;
	c->warmup_s = 1;
	c->connect_timeout_s = 5;
	c->proto_version = KNB_VERSION;
	for (int i = 0; i < argc; i++)
		used += (size_t)snprintf(c->command + used,
					 used < sizeof(c->command) ? sizeof(c->command) - used : 0,
					 "%s%s", i ? " " : "", argv[i]);
	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			usage(stdout);
			return 1;
		}
		fprintf(stderr, "knb: the first argument is server or client (knb --help)\n");
		return -1;
	}
	c->server = !strcmp(argv[1], "server");
	optind = 2;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		int rc;

		if (opt == 'h') {
			usage(stdout);
			return 1;
		}
		rc = lunar_options_apply(&c->lo, opt, optarg, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "knb: %s\n", err);
			return -1;
		}
		if (rc == 1) {
			c->lunar_opts_seen |= 1u << (opt - LUNAR_OPT_PORT);
			if (opt == LUNAR_OPT_PORT)
				snprintf(c->port_text, sizeof(c->port_text), "%s", optarg);
			if (opt == LUNAR_OPT_CORE)
				c->core_given = true;
			else if (opt != LUNAR_OPT_VERBOSE)
				c->lunar_opts_given = true;
			continue;
		}
		if (opt == '?') {
			fprintf(stderr, "knb: see knb --help for the options\n");
			return -1;
		}
		if (opt == OPT_KERNEL_MODE)
			kernel_mode_given = true;
		if (opt == OPT_STACK)
			have_stack = true;
		if (apply(c, opt, optarg, &have_endpoint))
			return -1;
	}
	if (optind != argc) {
		fprintf(stderr, "knb: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (check(c, have_stack, have_endpoint, kernel_mode_given))
		return -1;
	if (c->stack == KNB_STACK_LUNAR)
		c->threads = c->lo.n_workers;
	return 0;
}
