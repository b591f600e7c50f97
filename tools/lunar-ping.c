/*
 * lunar-ping - ICMP echo over lunar. Sends echo requests and prints each
 * round-trip time, or (--responder) just runs the stack so it answers ARP
 * and ICMP echo, e.g. as the far end of a memif or tap link.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loop/env.h"
#include "loop/options.h"
#include "mem/zbuf.h"
#include "port/port.h"

struct ping_state {
	uint16_t id;
	unsigned sent, received, dups;
	uint64_t sent_at[65536 / 64]; /* ring of send times by seq */
	uint8_t seen[65536 / 64];
	double min_us, max_us, sum_us, sum2_us;
	bool quiet;
	size_t size;
};

#define RING (65536 / 64)

static void on_echo_reply(void *ctx, uint32_t src, uint16_t id, uint16_t seq, const uint8_t *data,
			  size_t len, uint64_t now_ns)
{
	struct ping_state *st = ctx;
	uint32_t back, slot;
	char a[16];
	double us;

	(void)data;
	if (id != st->id || st->sent == 0)
		return;
	/* The 16-bit sequence number names one of the last RING requests sent. */
	back = (uint16_t)((uint16_t)(st->sent - 1) - seq);
	if (back >= RING || back >= st->sent)
		return; /* not ours, or too old to match */
	slot = (st->sent - 1 - back) % RING;
	if (st->seen[slot]) {
		st->dups++;
		return;
	}
	st->seen[slot] = 1;
	us = (double)(now_ns - st->sent_at[slot]) / 1000.0;
	st->received++;
	st->sum_us += us;
	st->sum2_us += us * us;
	if (st->received == 1 || us < st->min_us)
		st->min_us = us;
	if (us > st->max_us)
		st->max_us = us;
	if (!st->quiet)
		printf("%zu bytes from %s: icmp_seq=%u time=%.1f us\n", len + 8, ip4_str(src, a),
		       seq, us);
}

static void usage(FILE *f)
{
	fputs(
	    "usage: lunar-ping [options] DEST            send echo requests to DEST\n"
	    "       lunar-ping [options] --responder     answer ARP and ping until stopped\n"
	    "options:\n"
	    "  -c, --count N        requests to send (default 5)\n"
	    "  -i, --interval MS    milliseconds between requests (default 100)\n"
	    "  -s, --size N         payload bytes (default 56)\n"
	    "  -W, --timeout MS     wait for late replies after the last request (default 1000)\n"
	    "  -q, --quiet          only the summary\n"
	    "  --responder          do not send; serve until SIGINT/SIGTERM or --duration\n"
	    "  --duration S         stop after S seconds\n"
	    "  --link-timeout S     wait at most S seconds for the link (memif peer) (default 10)\n"
	    "  --counters           print the interface counters at exit\n",
	    f);
	lunar_options_usage(f);
}

enum { OPT_RESPONDER = 1, OPT_DURATION, OPT_LINK_TIMEOUT, OPT_COUNTERS };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    LUNAR_COMMON_LONGOPTS,
	    {"count", required_argument, NULL, 'c'},
	    {"interval", required_argument, NULL, 'i'},
	    {"size", required_argument, NULL, 's'},
	    {"timeout", required_argument, NULL, 'W'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"responder", no_argument, NULL, OPT_RESPONDER},
	    {"duration", required_argument, NULL, OPT_DURATION},
	    {"link-timeout", required_argument, NULL, OPT_LINK_TIMEOUT},
	    {"counters", no_argument, NULL, OPT_COUNTERS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static struct ping_state st;
	struct lunar_options o;
	struct lunar_env *env;
	unsigned count = 5, interval_ms = 100, timeout_ms = 1000, link_timeout_s = 10;
	double duration_s = 0;
	bool responder = false, counters = false;
	uint32_t dst = 0;
	char err[512];
	int c, rc;

	setvbuf(stdout, NULL, _IOLBF, 0); /* tests and pipes read progress as it happens */
	lunar_options_init(&o);
	st.size = 56;
	while ((c = getopt_long(argc, argv, "c:i:s:W:qh", longopts, NULL)) != -1) {
		rc = lunar_options_apply(&o, c, optarg, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "lunar-ping: %s\n", err);
			return 2;
		}
		if (rc > 0)
			continue;
		unsigned long v = 0;

		switch (c) {
		case 'c':
			rc = parse_uint_opt("count", optarg, 1, 10000000, &v, err, sizeof(err));
			count = (unsigned)v;
			break;
		case 'i':
			rc = parse_uint_opt("interval", optarg, 0, 3600000, &v, err, sizeof(err));
			interval_ms = (unsigned)v;
			break;
		case 's':
			/*
			 * An ICMP echo fits one frame: up to a 9000-byte MTU less 28 header bytes.
			 */
			rc = parse_uint_opt("size", optarg, 0, 8972, &v, err, sizeof(err));
			st.size = v;
			break;
		case 'W':
			rc = parse_uint_opt("timeout", optarg, 0, 3600000, &v, err, sizeof(err));
			timeout_ms = (unsigned)v;
			break;
		case 'q':
			st.quiet = true;
			break;
		case OPT_RESPONDER:
			responder = true;
			break;
		case OPT_DURATION:
			rc = parse_seconds_opt("duration", optarg, 1e6, &duration_s, err,
					       sizeof(err));
			break;
		case OPT_LINK_TIMEOUT:
			rc = parse_uint_opt("link-timeout", optarg, 1, 3600, &v, err, sizeof(err));
			link_timeout_s = (unsigned)v;
			break;
		case OPT_COUNTERS:
			counters = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (rc < 0) {
			fprintf(stderr, "lunar-ping: %s\n", err);
			return 2;
		}
	}
	if (!responder) {
		if (optind != argc - 1 || parse_ipv4(argv[optind], &dst)) {
			fprintf(stderr, "lunar-ping: give one destination address (e.g. 10.0.0.2) "
					"or --responder\n");
			return 2;
		}
	} else if (optind != argc) {
		fprintf(stderr, "lunar-ping: --responder takes no destination\n");
		return 2;
	}

	if (lunar_options_one_worker(&o, err, sizeof(err))) {
		fprintf(stderr, "lunar-ping: %s\n", err);
		return 2;
	}
	lunar_handle_signals();
	rc = lunar_env_open(&o, argv[0], &env, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "lunar-ping: %s\n", err);
		return 1;
	}
	if (st.size + 28 > env->nif.mtu) {
		fprintf(stderr,
			"lunar-ping: --size %zu does not fit the MTU %u (at most %u); raise "
			"--mtu (memif, tap) or send less\n",
			st.size, env->nif.mtu, env->nif.mtu - 28);
		lunar_env_close(env);
		return 2;
	}
	st.id = (uint16_t)getpid();
	netif_set_echo_handler(&env->nif, on_echo_reply, &st);
	{
		char a[16], g[16];

		printf("lunar-ping: ready on %s, %s/%u, gateway %s, mac " RTE_ETHER_ADDR_PRT_FMT
		       ", mtu %u\n",
		       env->port->name, ip4_str(env->nif.ip, a), env->nif.prefix_len,
		       env->nif.gateway ? ip4_str(env->nif.gateway, g) : "none",
		       RTE_ETHER_ADDR_BYTES(&env->nif.mac), env->nif.mtu);
	}

	uint64_t start = lunar_env_now_ns(env);
	uint64_t link_deadline = start + (uint64_t)link_timeout_s * 1000000000ull;
	uint64_t stop_at = duration_s > 0 ? start + (uint64_t)(duration_s * 1e9) : UINT64_MAX;
	uint64_t next_send = 0, last_send = 0;
	bool link_seen = false;

	rc = 0;
	while (!lunar_stop_requested()) {
		uint64_t now = lunar_env_now_ns(env);

		lunar_env_poll(env);
		if (now >= stop_at)
			break;
		if (!link_seen) {
			link_seen = port_link_up(env->port);
			if (!link_seen && now > link_deadline) {
				fprintf(stderr,
					"lunar-ping: link %s did not come up within %u s; is "
					"the peer running?\n",
					env->port->name, link_timeout_s);
				rc = 1;
				break;
			}
			if (!link_seen)
				continue;
		}
		if (responder)
			continue;
		if (st.sent < count && now >= next_send) {
			st.sent_at[st.sent % RING] = now;
			st.seen[st.sent % RING] = 0;
			netif_icmp_echo(&env->nif, dst, st.id, (uint16_t)st.sent, st.size);
			st.sent++;
			last_send = now;
			next_send = now + (uint64_t)interval_ms * 1000000ull;
		}
		if (st.sent == count &&
		    (st.received == count || now > last_send + (uint64_t)timeout_ms * 1000000ull))
			break;
	}
	/*
	 * Stopping: take what is already on its way (a veth delivers to XDP
	 * from the kernel's softirq, a little later) until the port has been
	 * quiet for 20 ms, so the counters printed below are final.
	 */
	for (uint64_t quiet_since = lunar_env_now_ns(env);
	     lunar_env_now_ns(env) - quiet_since < 20000000ull;)
		if (lunar_env_poll(env))
			quiet_since = lunar_env_now_ns(env);
	if (!responder) {
		char a[16];
		double avg = st.received ? st.sum_us / st.received : 0;
		double var = st.received ? st.sum2_us / st.received - avg * avg : 0;

		printf("--- %s lunar-ping statistics ---\n", ip4_str(dst, a));
		printf("%u transmitted, %u received, %u duplicates, %.1f%% packet loss\n", st.sent,
		       st.received, st.dups,
		       st.sent ? 100.0 * (st.sent - st.received) / st.sent : 0.0);
		if (st.received)
			printf("rtt min/avg/max/mdev = %.1f/%.1f/%.1f/%.1f us\n", st.min_us, avg,
			       st.max_us, sqrt(var > 0 ? var : 0));
		if (!rc && st.received == 0)
			rc = 1;
	}
	if (counters) {
		uint64_t to_lunar = 0, to_kernel = 0, failed = 0;

		lunar_env_dump_loop(env, stdout);
		netif_dump(&env->nif, stdout);
		port_dump(env->port, stdout);
		if (env->steer_open &&
		    xdp_steer_stats(&env->steer, &to_lunar, &to_kernel, &failed) == 0)
			printf("xdp: to_lunar %lu to_kernel %lu redirect_failed %lu\n", to_lunar,
			       to_kernel, failed);
	}
	printf("zbuf: %lu objects in use at exit\n", (unsigned long)lunar_env_close(env));
	return rc;
}
