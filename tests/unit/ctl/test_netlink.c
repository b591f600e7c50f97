/*
 * test_netlink.c - root-only tests of the kernel control-plane reader
 * (src/ctl/netlink.c): nl_query_if and the neighbour/route watcher.
 *
 * Two throw-away namespaces A and B joined by a veth (A: va 10.99.0.1/24,
 * B: vb 10.99.0.2/24, MTU 1450); A also holds vn0, up but without an
 * address. The test process itself moves into A (setns), changes the
 * tables with `ip`, and polls the watcher in a bounded loop (no timing
 * assertions: a deadline only turns a hang into a failure).
 *
 * The t_detached_* tests need no kernel: they feed crafted messages to a
 * watcher without sockets (nl_watch_open_detached).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/capability.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "ctl/netlink.h"
#include "nsutil.h"

static char ns_a[64], ns_b[64];
static uint8_t mac_va[6], mac_vb[6];

#define IP(a, b, c, d) (((uint32_t)(a) << 24) | ((b) << 16) | ((c) << 8) | (d))
#define IP_A	       IP(10, 99, 0, 1)
#define IP_B	       IP(10, 99, 0, 2)
#define NET	       IP(10, 99, 0, 0)

/* ---- event recorder ---------------------------------------------------- */

struct ev {
	bool route;
	uint32_t ip; /* neighbour ip or route dst */
	uint8_t mac[6];
	bool up; /* reachable / add */
	uint8_t plen;
	uint32_t gw;
};

struct rec {
	struct nl_watch *w;
	struct ev ev[1024];
	int n;
};

static void on_neigh(void *ctx, uint32_t ip, const uint8_t mac[6], bool reachable)
{
	struct rec *r = ctx;

	if (r->n == (int)(sizeof(r->ev) / sizeof(r->ev[0])))
		return;
	r->ev[r->n] = (struct ev){.ip = ip, .up = reachable};
	memcpy(r->ev[r->n].mac, mac, 6);
	r->n++;
}

static void on_route(void *ctx, uint32_t dst, uint8_t plen, uint32_t gw, bool add)
{
	struct rec *r = ctx;

	if (r->n == (int)(sizeof(r->ev) / sizeof(r->ev[0])))
		return;
	r->ev[r->n++] = (struct ev){.route = true, .ip = dst, .plen = plen, .gw = gw, .up = add};
}

static const struct nl_watch_ops ops = {.neigh = on_neigh, .route = on_route};

static bool ev_match(const struct ev *e, const struct ev *want, bool exact)
{
	if (e->route != want->route || e->ip != want->ip || e->up != want->up)
		return false;
	if (!exact)
		return true;
	if (e->route)
		return e->plen == want->plen && e->gw == want->gw;
	return !memcmp(e->mac, want->mac, 6);
}

static int find_ev(struct rec *r, int from, const struct ev *want, bool exact)
{
	for (int i = from; i < r->n; i++)
		if (ev_match(&r->ev[i], want, exact))
			return i;
	return -1;
}

static void pump(struct rec *r, int timeout_ms)
{
	struct pollfd pfd = {.fd = nl_watch_fd(r->w), .events = POLLIN};
	int ret;

	poll(&pfd, 1, timeout_ms);
	ret = nl_watch_poll(r->w);
	if (ret < 0)
		fail_msg("nl_watch_poll: %s", strerror(-ret));
}

/*
 * Poll until an event like @want appears at index >= @from. Bounded (about
 * 10 s) so that a lost event fails the test instead of hanging it.
 */
static int wait_ev(struct rec *r, int from, const struct ev *want, bool exact)
{
	for (int i = 0; i < 200; i++) {
		int k = find_ev(r, from, want, exact);

		if (k >= 0)
			return k;
		pump(r, 50);
	}
	return -1;
}

static void print_events(struct rec *r, int from)
{
	for (int i = from; i < r->n; i++) {
		const struct ev *e = &r->ev[i];
		struct in_addr a = {htonl(e->ip)}, g = {htonl(e->gw)};
		char sa[16], sg[16];

		inet_ntop(AF_INET, &a, sa, sizeof(sa));
		inet_ntop(AF_INET, &g, sg, sizeof(sg));
		if (e->route)
			fprintf(stderr, "  #%d route %s %s/%u via %s\n", i, e->up ? "add" : "del",
				sa, e->plen, sg);
		else
			fprintf(stderr, "  #%d neigh %s %s %02x:%02x:%02x:%02x:%02x:%02x\n", i,
				e->up ? "up" : "down", sa, e->mac[0], e->mac[1], e->mac[2],
				e->mac[3], e->mac[4], e->mac[5]);
	}
}

#define EXPECT_EV(r, from, want, exact)                                                            \
	({                                                                                         \
		int k_ = wait_ev((r), (from), (want), (exact));                                    \
		if (k_ < 0) {                                                                      \
			print_events((r), 0);                                                      \
			fail_msg("event not seen (line %d)", __LINE__);                            \
		}                                                                                  \
		k_;                                                                                \
	})

static struct ev neigh_ev(uint32_t ip, const uint8_t *mac, bool up)
{
	struct ev e = {.ip = ip, .up = up};

	if (mac)
		memcpy(e.mac, mac, 6);
	return e;
}

static struct ev route_ev(uint32_t dst, uint8_t plen, uint32_t gw, bool add)
{
	return (struct ev){.route = true, .ip = dst, .plen = plen, .gw = gw, .up = add};
}

/* ---- fixtures ------------------------------------------------------------ */

static int get_mac(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr = {0};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (s < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ret = ioctl(s, SIOCGIFHWADDR, &ifr);
	close(s);
	if (ret)
		return -1;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

static int group_setup(void **state)
{
	(void)state;
	ns_name(ns_a, sizeof(ns_a), "lunar-tnlA");
	ns_name(ns_b, sizeof(ns_b), "lunar-tnlB");
	/* Namespaces of runs that were killed (a timeout) and whose process is gone. */
	ns_sh("for n in $(ip netns list | grep -o '^lunar-tnl[AB]-[0-9]*'); do "
	      "kill -0 ${n##*-} 2>/dev/null || ip netns del $n; done");
	ns_delete(ns_a);
	ns_delete(ns_b);
	if (ns_sh("set -e; A=%s; B=%s; ip netns add $A; ip netns add $B; "
		  "ip -n $A link add va type veth peer name vb netns $B; "
		  "ip -n $A link set va mtu 1450; ip -n $B link set vb mtu 1450; "
		  "ip -n $A addr add 10.99.0.1/24 dev va; "
		  "ip -n $B addr add 10.99.0.2/24 dev vb; "
		  "ip -n $A link set lo up; ip -n $B link set lo up; "
		  "ip -n $A link set va up; ip -n $B link set vb up; "
		  "ip -n $A link add vn0 type veth peer name vn1; "
		  "ip -n $A link set vn0 up; ip -n $A link set vn1 up; "
		  /* a silent neighbour fails after one probe, 100 ms */
		  "ip netns exec $A sysctl -qw net.ipv4.neigh.va.mcast_solicit=1 "
		  "net.ipv4.neigh.va.retrans_time_ms=100",
		  ns_a, ns_b)) {
		fprintf(stderr, "cannot create namespaces %s/%s\n", ns_a, ns_b);
		goto fail;
	}
	if (ns_enter(ns_b) || get_mac("vb", mac_vb) || ns_enter(ns_a) || get_mac("va", mac_va))
		goto fail;
	return 0;
fail:
	ns_leave();
	ns_delete(ns_a);
	ns_delete(ns_b);
	return -1;
}

static int group_teardown(void **state)
{
	(void)state;
	ns_leave();
	ns_delete(ns_a);
	ns_delete(ns_b);
	return 0;
}

/* Undo whatever a test added to A, so later tests start clean. */
static void restore_a(void)
{
	ns_sh("A=%s; ip -n $A addr replace 10.99.0.1/24 dev va; "
	      "ip -n $A link set va up; ip -n $A addr del 10.98.0.1/16 dev va 2>/dev/null; "
	      "ip -n $A -4 addr flush dev vn0; "
	      "while ip -n $A route del default 2>/dev/null; do :; done; "
	      "ip -n $A route del 10.123.0.0/16 2>/dev/null; "
	      "ip -n $A route flush root 10.201.0.0/16 2>/dev/null; "
	      "for n in 10.50.0.0/16 10.55.0.0/16 10.57.0.0/16 10.58.0.0/16; do "
	      "ip -n $A route del $n 2>/dev/null; done; "
	      "while ip -n $A route del 10.56.0.0/16 2>/dev/null; do :; done; "
	      "ip -n $A neigh flush dev va 2>/dev/null; "
	      "ip -n $A neigh del 10.99.0.77 dev va 2>/dev/null; "
	      "ip -n $A neigh del 10.99.0.50 dev va 2>/dev/null; "
	      "ip -n $A neigh flush dev vn0 2>/dev/null; true",
	      ns_a);
}

static int watch_setup(void **state)
{
	struct rec *r = calloc(1, sizeof(*r));

	*state = r;
	if (!r)
		return -1;
	restore_a();
	r->w = nl_watch_open((int)if_nametoindex("va"), &ops, r);
	if (!r->w)
		return -1;
	/* The dumps complete inside the first poll; a second one is harmless. */
	pump(r, 0);
	pump(r, 0);
	return 0;
}

static int watch_teardown(void **state)
{
	struct rec *r = *state;

	if (r) {
		/* LUNAR_TEST_VERBOSE=1 shows what the watcher reported. */
		if (getenv("LUNAR_TEST_VERBOSE"))
			print_events(r, 0);
		nl_watch_close(r->w);
		free(r);
	}
	restore_a();
	return 0;
}

/* ---- nl_query_if ----------------------------------------------------------- */

static void t_query_if(void **state)
{
	struct nl_ifinfo info;
	char err[256] = "";

	(void)state;
	restore_a();
	assert_int_equal(nl_query_if("va", &info, err, sizeof(err)), 0);
	assert_int_equal(info.ifindex, (int)if_nametoindex("va"));
	assert_memory_equal(info.mac, mac_va, 6);
	assert_int_equal(info.addr, IP_A);
	assert_int_equal(info.prefix_len, 24);
	assert_int_equal(info.mtu, 1450);
	assert_int_equal(info.gateway, 0);

	assert_int_equal(ns_sh("ip -n %s route add default via 10.99.0.2", ns_a), 0);
	assert_int_equal(nl_query_if("va", &info, err, sizeof(err)), 0);
	assert_int_equal(info.gateway, IP_B);

	/* A secondary address does not replace the primary. */
	assert_int_equal(ns_sh("ip -n %s addr add 10.99.0.9/24 dev va", ns_a), 0);
	assert_int_equal(nl_query_if("va", &info, err, sizeof(err)), 0);
	assert_int_equal(info.addr, IP_A);
	ns_sh("ip -n %s addr del 10.99.0.9/24 dev va", ns_a);
	restore_a();
}

static void t_query_errors(void **state)
{
	struct nl_ifinfo info;
	char err[256] = "";

	(void)state;
	assert_int_equal(nl_query_if("nosuch0", &info, err, sizeof(err)), -ENODEV);
	assert_string_equal(err, "interface nosuch0 not found; create it or check `ip link`");
	assert_int_equal(nl_query_if("vn0", &info, err, sizeof(err)), -EADDRNOTAVAIL);
	assert_non_null(strstr(err, "interface vn0 has no IPv4 address; give it one (ip addr add"));
	assert_non_null(strstr(err, "or pass --ip"));
	assert_int_equal(nl_query_if("lo", &info, err, sizeof(err)), -EPROTONOSUPPORT);
	assert_non_null(strstr(err, "not Ethernet"));
	assert_int_equal(nl_query_if(NULL, &info, err, sizeof(err)), -EINVAL);
	assert_int_equal(nl_query_if("this-name-is-too-long", &info, NULL, 0), -EINVAL);
}

/* ---- watcher ------------------------------------------------------------------ */

static void t_watch_open_errors(void **state)
{
	(void)state;
	errno = 0;
	assert_null(nl_watch_open(0, &ops, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(nl_watch_open(1, NULL, NULL));
	nl_watch_close(NULL);
	assert_int_equal(nl_watch_poll(NULL), -EINVAL);
}

/* State that exists before the watcher opens arrives through the dump. */
static void t_watch_dump(void **state)
{
	struct rec r = {0};
	struct ev e;
	static const uint8_t m50[6] = {2, 0, 0, 0, 0, 0x50};

	(void)state;
	restore_a();
	assert_int_equal(ns_sh("A=%s; ip -n $A neigh add 10.99.0.50 lladdr "
			       "02:00:00:00:00:50 dev va nud permanent && "
			       "ip -n $A route add 10.50.0.0/16 via 10.99.0.2",
			       ns_a),
			 0);
	r.w = nl_watch_open((int)if_nametoindex("va"), &ops, &r);
	assert_non_null(r.w);
	/* No callback before the first poll... */
	assert_int_equal(r.n, 0);
	/*
	 * ...and one poll delivers both dumps: the kernel fills dump chunks
	 * synchronously, so no waiting is needed (lunar's loop relies on it).
	 */
	int got = nl_watch_poll(r.w);
	assert_int_equal(got, r.n);
	e = neigh_ev(IP(10, 99, 0, 50), m50, true);
	assert_true(find_ev(&r, 0, &e, true) >= 0);
	e = route_ev(IP(10, 50, 0, 0), 16, IP_B, true);
	assert_true(find_ev(&r, 0, &e, true) >= 0);
	e = route_ev(NET, 24, 0, true); /* the connected route */
	assert_true(find_ev(&r, 0, &e, true) >= 0);
	/* Nothing new: a second poll delivers nothing. */
	assert_int_equal(nl_watch_poll(r.w), 0);
	/* vn0's and the local table's routes are not ours. */
	for (int i = 0; i < r.n; i++)
		assert_true(!r.ev[i].route || (r.ev[i].ip >> 24) == 10);
	nl_watch_close(r.w);
	restore_a();
}

static void t_watch_neigh(void **state)
{
	struct rec *r = *state;
	static const uint8_t m1[6] = {2, 0, 0, 0, 0, 0x77};
	static const uint8_t m2[6] = {2, 0, 0, 0, 0, 0x78};
	struct ev e;
	int k;

	assert_int_equal(ns_sh("ip -n %s neigh add 10.99.0.77 lladdr "
			       "02:00:00:00:00:77 dev va nud permanent",
			       ns_a),
			 0);
	e = neigh_ev(IP(10, 99, 0, 77), m1, true);
	k = EXPECT_EV(r, 0, &e, true);

	assert_int_equal(ns_sh("ip -n %s neigh replace 10.99.0.77 lladdr "
			       "02:00:00:00:00:78 dev va nud permanent",
			       ns_a),
			 0);
	e = neigh_ev(IP(10, 99, 0, 77), m2, true);
	k = EXPECT_EV(r, k + 1, &e, true);

	assert_int_equal(ns_sh("ip -n %s neigh del 10.99.0.77 dev va", ns_a), 0);
	e = neigh_ev(IP(10, 99, 0, 77), m2, false); /* last known MAC */
	EXPECT_EV(r, k + 1, &e, true);
}

/* nl_watch_resolve: the kernel ARPs for us and reports the answer. */
static void t_watch_resolve(void **state)
{
	struct rec *r = *state;
	struct ev e;
	int k;

	/* watch_setup flushed the neighbour table: 10.99.0.2 is unknown. */
	assert_int_not_equal(ns_sh("ip -n %s neigh show 10.99.0.2 dev va | grep -q lladdr", ns_a),
			     0);
	assert_int_equal(nl_watch_resolve(r->w, IP_B), 0);
	e = neigh_ev(IP_B, mac_vb, true);
	k = EXPECT_EV(r, 0, &e, true);
	/* Asking again for a valid entry is harmless; the watcher knows it. */
	assert_int_equal(nl_watch_resolve(r->w, IP_B), 0);
	{
		uint8_t mac[6];

		assert_true(nl_watch_known(r->w, IP_B, mac));
		assert_memory_equal(mac, mac_vb, 6);
		assert_false(nl_watch_known(r->w, IP(10, 99, 0, 99), mac));
	}

	/* Nobody has .99: the kernel gives up (FAILED) and says so. */
	assert_int_equal(nl_watch_resolve(r->w, IP(10, 99, 0, 99)), 0);
	e = neigh_ev(IP(10, 99, 0, 99), NULL, false);
	EXPECT_EV(r, k + 1, &e, false);

	assert_int_equal(nl_watch_resolve(r->w, 0), -EINVAL);
	assert_int_equal(nl_watch_resolve(NULL, IP_B), -EINVAL);
}

/* The fallback: an empty UDP datagram makes the kernel ARP too. */
static void t_resolve_udp(void **state)
{
	struct rec *r = *state;
	struct ev e;

	assert_int_equal(nl_resolve_udp((int)if_nametoindex("va"), IP_B), 0);
	e = neigh_ev(IP_B, mac_vb, true);
	EXPECT_EV(r, 0, &e, true);
	assert_int_equal(nl_resolve_udp(0, IP_B), -EINVAL);
}

static void t_watch_route(void **state)
{
	struct rec *r = *state;
	uint32_t n55 = IP(10, 55, 0, 0), n56 = IP(10, 56, 0, 0);
	uint32_t gw3 = IP(10, 99, 0, 3);
	struct ev e;
	int k;

	/* The connected route came with the dump. */
	e = route_ev(NET, 24, 0, true);
	EXPECT_EV(r, 0, &e, true);

	assert_int_equal(ns_sh("ip -n %s route add 10.55.0.0/16 via 10.99.0.2", ns_a), 0);
	e = route_ev(n55, 16, IP_B, true);
	k = EXPECT_EV(r, 0, &e, true);
	assert_int_equal(ns_sh("ip -n %s route replace 10.55.0.0/16 via 10.99.0.3", ns_a), 0);
	e = route_ev(n55, 16, gw3, true);
	k = EXPECT_EV(r, k + 1, &e, true);
	assert_int_equal(ns_sh("ip -n %s route del 10.55.0.0/16", ns_a), 0);
	e = route_ev(n55, 16, gw3, false);
	k = EXPECT_EV(r, k + 1, &e, true);

	assert_int_equal(ns_sh("ip -n %s route add default via 10.99.0.2", ns_a), 0);
	e = route_ev(0, 0, IP_B, true);
	k = EXPECT_EV(r, k + 1, &e, true);
	assert_int_equal(ns_sh("ip -n %s route del default", ns_a), 0);
	e = route_ev(0, 0, IP_B, false);
	k = EXPECT_EV(r, k + 1, &e, true);

	/* Two metrics for one prefix: only the better one is announced. */
	assert_int_equal(ns_sh("ip -n %s route add 10.56.0.0/16 via 10.99.0.2 metric 10", ns_a), 0);
	e = route_ev(n56, 16, IP_B, true);
	k = EXPECT_EV(r, k + 1, &e, true);
	assert_int_equal(ns_sh("A=%s; ip -n $A route add 10.56.0.0/16 via 10.99.0.3 metric 20 && "
			       "ip -n $A route add 10.57.0.0/16 via 10.99.0.2",
			       ns_a),
			 0);
	e = route_ev(IP(10, 57, 0, 0), 16, IP_B, true); /* marker */
	int marker = EXPECT_EV(r, k + 1, &e, true);
	e = route_ev(n56, 16, 0, true);
	assert_int_equal(find_ev(r, k + 1, &e, false), -1);
	/* The better one goes: the worse one takes its place. */
	assert_int_equal(ns_sh("ip -n %s route del 10.56.0.0/16 via 10.99.0.2 metric 10", ns_a), 0);
	e = route_ev(n56, 16, gw3, true);
	k = EXPECT_EV(r, marker + 1, &e, true);
	assert_int_equal(ns_sh("ip -n %s route del 10.56.0.0/16 via 10.99.0.3 metric 20", ns_a), 0);
	e = route_ev(n56, 16, gw3, false);
	k = EXPECT_EV(r, k + 1, &e, true);

	/*
	 * Replaced by a blackhole (IPv4 sends only the new route, no
	 * RTM_DELROUTE for ours): ours is forgotten, announced gone.
	 */
	assert_int_equal(ns_sh("ip -n %s route add 10.59.0.0/16 via 10.99.0.2", ns_a), 0);
	e = route_ev(IP(10, 59, 0, 0), 16, IP_B, true);
	k = EXPECT_EV(r, k + 1, &e, true);
	assert_int_equal(ns_sh("ip -n %s route replace blackhole 10.59.0.0/16", ns_a), 0);
	e = route_ev(IP(10, 59, 0, 0), 16, IP_B, false);
	k = EXPECT_EV(r, k + 1, &e, true);
	assert_int_equal(ns_sh("ip -n %s route del blackhole 10.59.0.0/16", ns_a), 0);

	/*
	 * Appended behind ours (same prefix and metric): the kernel keeps
	 * using ours, so its coming and going is not announced; when ours
	 * goes, the kernel uses it, and so is it announced.
	 */
	assert_int_equal(ns_sh("A=%s; ip -n $A route add 10.60.0.0/16 via 10.99.0.2 && "
			       "ip -n $A route append 10.60.0.0/16 via 10.99.0.3 && "
			       "ip -n $A route del 10.60.0.0/16 via 10.99.0.3 && "
			       "ip -n $A route append 10.60.0.0/16 via 10.99.0.3 && "
			       "ip -n $A route add 10.61.0.0/16 via 10.99.0.2",
			       ns_a),
			 0);
	e = route_ev(IP(10, 61, 0, 0), 16, IP_B, true); /* marker */
	marker = EXPECT_EV(r, k + 1, &e, true);
	e = route_ev(IP(10, 60, 0, 0), 16, gw3, true);
	assert_int_equal(find_ev(r, k + 1, &e, true), -1);
	e = route_ev(IP(10, 60, 0, 0), 16, IP_B, false);
	assert_int_equal(find_ev(r, k + 1, &e, true), -1);
	assert_int_equal(ns_sh("ip -n %s route del 10.60.0.0/16 via 10.99.0.2", ns_a), 0);
	e = route_ev(IP(10, 60, 0, 0), 16, gw3, true);
	EXPECT_EV(r, marker + 1, &e, true);
	e = route_ev(IP(10, 60, 0, 0), 16, IP_B, false);
	assert_int_equal(find_ev(r, marker + 1, &e, true), -1);
	assert_int_equal(ns_sh("A=%s; ip -n $A route del 10.60.0.0/16 && "
			       "ip -n $A route del 10.61.0.0/16",
			       ns_a),
			 0);
}

/*
 * Removing the address takes the connected route and every route through
 * it with it; IPv4 does not send RTM_DELROUTE for the latter, so this checks
 * the re-dump-and-sweep path.
 */
static void t_watch_addr_removed(void **state)
{
	struct rec *r = *state;
	uint32_t n58 = IP(10, 58, 0, 0);
	struct ev e;
	int k;

	assert_int_equal(ns_sh("ip -n %s route add 10.58.0.0/16 via 10.99.0.2", ns_a), 0);
	e = route_ev(n58, 16, IP_B, true);
	k = EXPECT_EV(r, 0, &e, true);
	assert_int_equal(ns_sh("ip -n %s addr del 10.99.0.1/24 dev va", ns_a), 0);
	e = route_ev(n58, 16, IP_B, false);
	EXPECT_EV(r, k + 1, &e, true);
	e = route_ev(NET, 24, 0, false);
	EXPECT_EV(r, k + 1, &e, true);
	/* And back. */
	assert_int_equal(ns_sh("ip -n %s addr add 10.99.0.1/24 dev va", ns_a), 0);
	e = route_ev(NET, 24, 0, true);
	EXPECT_EV(r, k + 1, &e, true);
}

/* ---- detached watcher: crafted netlink input -------------------------------- */

/*
 * These tests drive the watcher without a kernel (nl_watch_open_detached):
 * its port id is 0 and its dumps are numbered 1 (neighbours), 2 (routes),
 * 3, 4, ... in the order it requests them. The messages are built as the
 * kernel builds them (rtnetlink(7), include/uapi/linux/neighbour.h and
 * rtnetlink.h); the checks are on what the watcher reports and knows.
 */
#define IFX 7 /* the watched interface */
#define IFY 8 /* another interface */

static const uint8_t mac1[6] = {2, 0, 0, 0, 1, 1}, mac2[6] = {2, 0, 0, 0, 1, 2};
static const uint8_t mac3[6] = {2, 0, 0, 0, 1, 3};

/* A datagram being built: netlink messages back to back. */
struct dgram {
	size_t len;
	_Alignas(4) char buf[16384];
};

static struct nlmsghdr *put_msg(struct dgram *d, uint16_t type, uint16_t flags, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(d->buf + d->len);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	return nlh;
}

static void end_msg(struct dgram *d, const struct nlmsghdr *nlh)
{
	d->len += nlh->nlmsg_len;
	assert_true(d->len + 512 < sizeof(d->buf));
}

/* A neighbour message; zero fields take the usual values (see each). */
struct nspec {
	uint16_t type; /* RTM_NEWNEIGH if 0 */
	uint16_t nlflags;
	uint32_t seq;
	uint8_t family; /* AF_INET if 0 */
	int ifindex;	/* IFX if 0 */
	uint16_t state;
	uint8_t ntf;
	uint32_t ip;
	const uint8_t *mac; /* NDA_LLADDR, none if NULL */
	int ip_len;	    /* NDA_DST payload length, 4 if 0 */
	int mac_len;	    /* NDA_LLADDR payload length, 6 if 0 */
};

static void put_neigh(struct dgram *d, const struct nspec *s)
{
	struct nlmsghdr *nlh = put_msg(d, s->type ? s->type : RTM_NEWNEIGH, s->nlflags, s->seq);
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	uint8_t a[32] = {0};
	uint32_t ip = htonl(s->ip);

	ndm->ndm_family = s->family ? s->family : AF_INET;
	ndm->ndm_ifindex = s->ifindex ? s->ifindex : IFX;
	ndm->ndm_state = s->state;
	ndm->ndm_flags = s->ntf;
	memcpy(a, &ip, 4);
	mnl_attr_put(nlh, NDA_DST, s->ip_len ? (size_t)s->ip_len : 4, a);
	if (s->mac) {
		memset(a, 0, sizeof(a));
		memcpy(a, s->mac, 6);
		mnl_attr_put(nlh, NDA_LLADDR, s->mac_len ? (size_t)s->mac_len : 6, a);
	}
	end_msg(d, nlh);
}

/* One next hop of RTA_MULTIPATH (struct rtnexthop, then RTA_GATEWAY if gw). */
struct nh {
	int ifindex;
	uint32_t gw;
	int rtnh_len; /* a wrong rtnh_len if not 0 */
};

/* A route message, laid out as the kernel's rt_fill_info() does. */
struct rspec {
	uint16_t type; /* RTM_NEWROUTE if 0 */
	uint16_t nlflags;
	uint32_t seq;
	uint8_t family; /* AF_INET if 0 (AF_INET6: 16-byte addresses) */
	uint32_t table; /* RT_TABLE_MAIN if 0; rtm_table and RTA_TABLE as the kernel sets them */
	bool raw_table; /* instead: rtm_table = rtm_table, RTA_TABLE = table */
	uint8_t rtm_table;
	uint8_t rtype; /* RTN_UNICAST if 0 */
	uint32_t dst;
	uint8_t plen;
	int oif; /* IFX if 0; none if < 0 */
	uint32_t gw;
	uint32_t prio;
	const struct nh *nh; /* RTA_MULTIPATH instead of RTA_OIF/RTA_GATEWAY */
	int nnh;
};

static void put_addr(struct nlmsghdr *nlh, uint16_t type, uint8_t family, uint32_t ip)
{
	uint8_t a[16] = {0};
	uint32_t n = htonl(ip);

	memcpy(family == AF_INET6 ? a + 12 : a, &n, 4);
	mnl_attr_put(nlh, type, family == AF_INET6 ? 16 : 4, a);
}

static void put_route(struct dgram *d, const struct rspec *s)
{
	struct nlmsghdr *nlh = put_msg(d, s->type ? s->type : RTM_NEWROUTE, s->nlflags, s->seq);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	uint8_t family = s->family ? s->family : AF_INET;
	uint32_t table = s->table ? s->table : RT_TABLE_MAIN;

	rtm->rtm_family = family;
	rtm->rtm_dst_len = s->plen;
	rtm->rtm_table = s->raw_table ? s->rtm_table : table < 256 ? table : RT_TABLE_COMPAT;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = s->gw ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
	rtm->rtm_type = s->rtype ? s->rtype : RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_TABLE, table);
	if (s->plen)
		put_addr(nlh, RTA_DST, family, s->dst);
	if (s->prio)
		mnl_attr_put_u32(nlh, RTA_PRIORITY, s->prio);
	if (s->nnh) {
		struct nlattr *mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);

		for (int i = 0; i < s->nnh; i++) {
			struct rtnexthop *nh = mnl_nlmsg_get_payload_tail(nlh);
			size_t at = nlh->nlmsg_len;

			memset(nh, 0, sizeof(*nh));
			nh->rtnh_ifindex = s->nh[i].ifindex;
			nlh->nlmsg_len += sizeof(*nh);
			if (s->nh[i].gw)
				put_addr(nlh, RTA_GATEWAY, family, s->nh[i].gw);
			nh->rtnh_len =
			    (unsigned short)(s->nh[i].rtnh_len ? (size_t)s->nh[i].rtnh_len
							       : nlh->nlmsg_len - at);
		}
		mnl_attr_nest_end(nlh, mp);
	} else {
		if (s->oif >= 0)
			mnl_attr_put_u32(nlh, RTA_OIF, s->oif ? s->oif : IFX);
		if (s->gw)
			put_addr(nlh, RTA_GATEWAY, family, s->gw);
	}
	end_msg(d, nlh);
}

/* NLMSG_DONE ending dump @seq (its payload: the int 0, as the kernel's). */
static void put_done(struct dgram *d, uint32_t seq, uint32_t pid)
{
	struct nlmsghdr *nlh = put_msg(d, NLMSG_DONE, NLM_F_MULTI, seq);

	nlh->nlmsg_pid = pid;
	mnl_nlmsg_put_extra_header(nlh, sizeof(int));
	end_msg(d, nlh);
}

/* NLMSG_ERROR with code @error answering request @seq. */
static void put_error(struct dgram *d, uint32_t seq, int error)
{
	struct nlmsghdr *nlh = put_msg(d, NLMSG_ERROR, 0, seq);
	struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

	e->error = error;
	e->msg.nlmsg_type = RTM_GETNEIGH;
	e->msg.nlmsg_seq = seq;
	end_msg(d, nlh);
}

/* Hand @d to the watcher as one received datagram; empties @d. */
static int feed(struct rec *r, struct dgram *d)
{
	int n = nl_watch_feed(r->w, d->buf, d->len);

	memset(d, 0, sizeof(*d));
	return n;
}

static void feed_lost(struct rec *r)
{
	assert_int_equal(nl_watch_feed(r->w, NULL, 0), 0);
}

static int feed_neigh(struct rec *r, const struct nspec *s)
{
	static struct dgram d;

	memset(&d, 0, sizeof(d));
	put_neigh(&d, s);
	return feed(r, &d);
}

static int feed_route(struct rec *r, const struct rspec *s)
{
	static struct dgram d;

	memset(&d, 0, sizeof(d));
	put_route(&d, s);
	return feed(r, &d);
}

static int feed_done(struct rec *r, uint32_t seq)
{
	struct dgram d = {0};

	put_done(&d, seq, 0);
	return feed(r, &d);
}

/*
 * Feed @len bytes that end where an inaccessible page begins: a read past
 * @len faults (nl_watch_feed reads "never past @len"). A datagram starts
 * 4-byte aligned, as recv() into an aligned buffer leaves it, so a length
 * that is not a multiple of 4 leaves its last 1-3 bytes of slack unguarded.
 */
static int feed_guarded(struct rec *r, const void *bytes, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m =
	    mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *at;
	int n;

	assert_true(m != MAP_FAILED && len <= (size_t)pg);
	assert_int_equal(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	at = m + (((size_t)pg - len) & ~(size_t)3);
	memcpy(at, bytes, len);
	n = nl_watch_feed(r->w, at, len);
	munmap(m, 2 * (size_t)pg);
	return n;
}

static void assert_ev(struct rec *r, int i, struct ev want)
{
	if (i >= r->n || !ev_match(&r->ev[i], &want, true)) {
		print_events(r, 0);
		fail_msg("event #%d is not the one expected", i);
	}
}

static bool known_as(struct rec *r, uint32_t ip, const uint8_t *mac)
{
	uint8_t m[6];

	if (!nl_watch_known(r->w, ip, m))
		return false;
	return !mac || !memcmp(m, mac, 6);
}

/* A detached watcher on IFX whose first dumps (both empty) are complete. */
static int det_setup(void **state)
{
	struct rec *r = calloc(1, sizeof(*r));

	*state = r;
	if (!r)
		return -1;
	r->w = nl_watch_open_detached(IFX, &ops, r);
	if (!r->w)
		return -1;
	/* The neighbour dump is number 1, the route dump, requested after it, 2. */
	if (feed_done(r, 1) != 0 || feed_done(r, 2) != 0 || r->n)
		return -1;
	return 0;
}

static int det_teardown(void **state)
{
	struct rec *r = *state;

	if (r) {
		if (getenv("LUNAR_TEST_VERBOSE"))
			print_events(r, 0);
		nl_watch_close(r->w);
		free(r);
	}
	return 0;
}

#define N1 IP(10, 1, 0, 1)
#define N2 IP(10, 1, 0, 2)
#define N3 IP(10, 1, 0, 3)
#define G1 IP(10, 1, 0, 254)
#define G2 IP(10, 1, 0, 253)

/* The detached watcher has no socket: those calls say so, nothing crashes. */
static void t_detached_api(void **state)
{
	struct rec r = {0};

	(void)state;
	errno = 0;
	assert_null(nl_watch_open_detached(0, &ops, &r));
	assert_int_equal(errno, EINVAL);
	assert_null(nl_watch_open_detached(IFX, NULL, &r));
	r.w = nl_watch_open_detached(IFX, &ops, &r);
	assert_non_null(r.w);
	assert_int_equal(nl_watch_fd(r.w), -EBADF);
	assert_int_equal(nl_watch_poll(r.w), -EBADF);
	assert_int_equal(nl_watch_resolve(r.w, N1), -EBADF);
	assert_int_equal(nl_watch_feed(NULL, "", 0), -EINVAL);
	assert_int_equal(nl_watch_feed(r.w, NULL, 4), -EINVAL);
	assert_int_equal(nl_watch_feed(r.w, "", 0), 0);
	assert_int_equal(r.n, 0);
	nl_watch_close(r.w);
}

/*
 * Which neighbour states hold a usable address: the kernel's NUD_VALID
 * (include/net/neighbour.h): REACHABLE, STALE, DELAY, PROBE, PERMANENT and
 * NOARP; INCOMPLETE, FAILED and NONE do not.
 */
static void t_detached_neigh_states(void **state)
{
	struct rec *r = *state;
	static const uint16_t valid[] = {NUD_REACHABLE, NUD_STALE,     NUD_DELAY,
					 NUD_PROBE,	NUD_PERMANENT, NUD_NOARP};
	static const uint16_t invalid[] = {NUD_INCOMPLETE, NUD_FAILED, NUD_NONE};

	for (unsigned i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		uint32_t ip = IP(10, 1, 1, i + 1);

		assert_int_equal(
		    feed_neigh(r, &(struct nspec){.state = valid[i], .ip = ip, .mac = mac1}), 1);
		assert_ev(r, r->n - 1, neigh_ev(ip, mac1, true));
		assert_true(known_as(r, ip, mac1));
	}
	for (unsigned i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		uint32_t ip = IP(10, 1, 2, i + 1);

		/* Reported (a resolution pending or given up), never as reachable. */
		assert_int_equal(
		    feed_neigh(r, &(struct nspec){.state = invalid[i], .ip = ip, .mac = mac1}), 1);
		assert_ev(r, r->n - 1, neigh_ev(ip, NULL, false));
		assert_false(known_as(r, ip, NULL));
	}
}

/*
 * Neighbour messages that are not about an IPv4 neighbour of the watched
 * interface change nothing: another interface, another family (a bridge
 * FDB entry carries NDA_LLADDR and, for VXLAN, a 4-byte NDA_DST), a proxy
 * entry (NTF_PROXY: `ip neigh add proxy`, the kernel answers ARP for it),
 * and messages with malformed address attributes.
 */
static void t_detached_neigh_filters(void **state)
{
	struct rec *r = *state;

	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N1, .mac = mac1}), 1);
	int n = r->n;

	assert_int_equal(
	    feed_neigh(
		r, &(struct nspec){.ifindex = IFY, .state = NUD_REACHABLE, .ip = N2, .mac = mac2}),
	    0);
	assert_int_equal(feed_neigh(r, &(struct nspec){.family = AF_BRIDGE,
						       .state = NUD_REACHABLE,
						       .ip = N2,
						       .mac = mac2}),
			 0);
	/* A proxy entry as the kernel reports it (pneigh_fill_info: no lladdr). */
	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_NONE, .ntf = NTF_PROXY, .ip = N1}), 0);
	assert_int_equal(
	    feed_neigh(
		r,
		&(struct nspec){.state = NUD_REACHABLE, .ntf = NTF_PROXY, .ip = N2, .mac = mac2}),
	    0);
	/* NDA_DST must be exactly an IPv4 address. */
	assert_int_equal(
	    feed_neigh(r,
		       &(struct nspec){.state = NUD_REACHABLE, .ip = N2, .mac = mac2, .ip_len = 8}),
	    0);
	assert_int_equal(r->n, n);
	assert_false(known_as(r, N2, NULL));
	assert_true(known_as(r, N1, mac1));

	/* An 8-byte link address is no Ethernet address: nothing usable. */
	assert_int_equal(
	    feed_neigh(
		r, &(struct nspec){.state = NUD_REACHABLE, .ip = N3, .mac = mac3, .mac_len = 8}),
	    1);
	assert_ev(r, r->n - 1, neigh_ev(N3, NULL, false));
	assert_false(known_as(r, N3, NULL));
	/* Nor is a valid state without any NDA_LLADDR. */
	assert_int_equal(feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N3}), 1);
	assert_ev(r, r->n - 1, neigh_ev(N3, NULL, false));
	assert_false(known_as(r, N3, NULL));
}

/*
 * A neighbour's life: repeats are not reported (REACHABLE <-> STALE churn
 * keeps the address), a new MAC is, RTM_DELNEIGH (which carries the
 * entry's last state and address) and FAILED withdraw it with the last
 * known MAC, and a withdrawn entry announced again is reported again.
 * Entries other than the one withdrawn keep their addresses.
 */
static void t_detached_neigh_life(void **state)
{
	struct rec *r = *state;

	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N1, .mac = mac1}), 1);
	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N2, .mac = mac2}), 1);
	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N3, .mac = mac3}), 1);
	assert_int_equal(feed_neigh(r, &(struct nspec){.state = NUD_STALE, .ip = N1, .mac = mac1}),
			 0);
	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N1, .mac = mac1}), 0);
	assert_int_equal(feed_neigh(r, &(struct nspec){.state = NUD_STALE, .ip = N1, .mac = mac2}),
			 1);
	assert_ev(r, r->n - 1, neigh_ev(N1, mac2, true));

	/* `ip neigh del`: RTM_DELNEIGH with the state it had. */
	assert_int_equal(
	    feed_neigh(
		r,
		&(struct nspec){.type = RTM_DELNEIGH, .state = NUD_STALE, .ip = N1, .mac = mac2}),
	    1);
	assert_ev(r, r->n - 1, neigh_ev(N1, mac2, false));
	assert_false(known_as(r, N1, NULL));
	assert_true(known_as(r, N2, mac2));
	assert_true(known_as(r, N3, mac3));

	/* The kernel gave up on N2 (FAILED carries no address). */
	assert_int_equal(feed_neigh(r, &(struct nspec){.state = NUD_FAILED, .ip = N2}), 1);
	assert_ev(r, r->n - 1, neigh_ev(N2, mac2, false));
	assert_false(known_as(r, N2, NULL));
	assert_true(known_as(r, N3, mac3));
	/* ...and it answers again, with the same MAC: news to lunar. */
	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N2, .mac = mac2}), 1);
	assert_ev(r, r->n - 1, neigh_ev(N2, mac2, true));
	assert_true(known_as(r, N2, mac2));
}

/* Hundreds of neighbours and routes are all tracked, each with its own data. */
static void t_detached_many(void **state)
{
	struct rec *r = *state;
	enum { MANY = 300 };

	for (int i = 0; i < MANY; i++) {
		uint8_t m[6] = {2, 0, 0, 0, (uint8_t)(i >> 8), (uint8_t)i};

		assert_int_equal(feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE,
							       .ip = IP(10, 2, i >> 8, i & 0xff),
							       .mac = m}),
				 1);
		assert_int_equal(feed_route(r, &(struct rspec){.dst = IP(10, 3, i >> 8, i & 0xff),
							       .plen = 32,
							       .gw = G1 + (uint32_t)i}),
				 1);
	}
	for (int i = 0; i < MANY; i++) {
		uint8_t m[6] = {2, 0, 0, 0, (uint8_t)(i >> 8), (uint8_t)i};

		assert_true(known_as(r, IP(10, 2, i >> 8, i & 0xff), m));
	}
	/* Withdrawn in another order, each with its own last MAC and gateway. */
	for (int i = MANY - 1; i >= 0; i -= 2) {
		uint8_t m[6] = {2, 0, 0, 0, (uint8_t)(i >> 8), (uint8_t)i};
		uint32_t ip = IP(10, 2, i >> 8, i & 0xff), dst = IP(10, 3, i >> 8, i & 0xff);

		assert_int_equal(feed_neigh(r, &(struct nspec){.type = RTM_DELNEIGH,
							       .state = NUD_REACHABLE,
							       .ip = ip,
							       .mac = m}),
				 1);
		assert_ev(r, r->n - 1, neigh_ev(ip, m, false));
		assert_int_equal(feed_route(r, &(struct rspec){.type = RTM_DELROUTE,
							       .dst = dst,
							       .plen = 32,
							       .gw = G1 + (uint32_t)i}),
				 1);
		assert_ev(r, r->n - 1, route_ev(dst, 32, G1 + (uint32_t)i, false));
	}
	for (int i = 0; i < MANY; i++) {
		uint8_t m[6] = {2, 0, 0, 0, (uint8_t)(i >> 8), (uint8_t)i};

		assert_int_equal(known_as(r, IP(10, 2, i >> 8, i & 0xff), m), i % 2 == 0);
	}
}

/*
 * Only IPv4 main-table unicast routes leaving through the watched interface
 * are lunar's (the local and other tables, and blackhole, local or
 * broadcast types are the kernel's business). RTA_TABLE, when present, is
 * the table: rtm_table is only 8 bits wide (rtnetlink(7)).
 */
static void t_detached_route_filters(void **state)
{
	struct rec *r = *state;
	uint32_t d = IP(10, 60, 0, 0);

	assert_int_equal(feed_route(r, &(struct rspec){.family = AF_INET6, .oif = IFX}), 0);
	assert_int_equal(feed_route(r, &(struct rspec){.table = 100, .dst = d, .plen = 16}), 0);
	assert_int_equal(feed_route(r, &(struct rspec){.table = 1000, .dst = d, .plen = 16}), 0);
	assert_int_equal(feed_route(r, &(struct rspec){.raw_table = true,
						       .rtm_table = RT_TABLE_MAIN,
						       .table = 1000,
						       .dst = d,
						       .plen = 16}),
			 0);
	assert_int_equal(feed_route(r, &(struct rspec){.table = RT_TABLE_LOCAL,
						       .rtype = RTN_LOCAL,
						       .dst = IP(10, 99, 0, 1),
						       .plen = 32}),
			 0);
	/* `ip route add local 10.60.0.0/16 dev X table main` */
	assert_int_equal(feed_route(r, &(struct rspec){.rtype = RTN_LOCAL, .dst = d, .plen = 16}),
			 0);
	assert_int_equal(
	    feed_route(r, &(struct rspec){.rtype = RTN_BROADCAST, .dst = d, .plen = 16}), 0);
	assert_int_equal(feed_route(r, &(struct rspec){.dst = d, .plen = 16, .oif = IFY, .gw = G1}),
			 0);
	assert_int_equal(r->n, 0);

	/* The same route in the main table through IFX is ours... */
	assert_int_equal(feed_route(r, &(struct rspec){.dst = d, .plen = 16, .gw = G1}), 1);
	assert_ev(r, 0, route_ev(d, 16, G1, true));
	/* ...also when only RTA_TABLE says main. */
	assert_int_equal(feed_route(r, &(struct rspec){.raw_table = true,
						       .rtm_table = RT_TABLE_UNSPEC,
						       .dst = IP(10, 61, 0, 0),
						       .plen = 16}),
			 1);
	assert_ev(r, 1, route_ev(IP(10, 61, 0, 0), 16, 0, true));
}

/*
 * A multipath route (RTA_MULTIPATH: struct rtnexthop records, each with its
 * attributes) is ours when one of its next hops leaves through the watched
 * interface, with that hop's gateway. Malformed records end the walk.
 */
static void t_detached_multipath(void **state)
{
	struct rec *r = *state;
	const struct nh ours_second[] = {{IFY, G2, 0}, {IFX, G1, 0}};
	const struct nh ours_first[] = {{IFX, G1, 0}, {IFY, G2, 0}};
	const struct nh ours_onlink[] = {{IFY, G2, 0}, {IFX, 0, 0}};
	const struct nh none_ours[] = {{IFY, G2, 0}, {IFY + 1, G1, 0}};
	const struct nh short_rec[] = {{IFX, 0, 4}};
	const struct nh long_rec[] = {{IFX, G1, 40}};
	uint32_t a = IP(10, 62, 0, 0), b = IP(10, 63, 0, 0), c = IP(10, 64, 0, 0);

	assert_int_equal(
	    feed_route(r, &(struct rspec){.dst = a, .plen = 16, .nh = ours_second, .nnh = 2}), 1);
	assert_ev(r, 0, route_ev(a, 16, G1, true));
	assert_int_equal(
	    feed_route(r, &(struct rspec){.dst = b, .plen = 16, .nh = ours_first, .nnh = 2}), 1);
	assert_ev(r, 1, route_ev(b, 16, G1, true));
	assert_int_equal(
	    feed_route(r, &(struct rspec){.dst = c, .plen = 16, .nh = ours_onlink, .nnh = 2}), 1);
	assert_ev(r, 2, route_ev(c, 16, 0, true));

	assert_int_equal(
	    feed_route(
		r, &(struct rspec){.dst = IP(10, 65, 0, 0), .plen = 16, .nh = none_ours, .nnh = 2}),
	    0);
	/* rtnh_len shorter than struct rtnexthop, or past the attribute's end. */
	assert_int_equal(
	    feed_route(
		r, &(struct rspec){.dst = IP(10, 66, 0, 0), .plen = 16, .nh = short_rec, .nnh = 1}),
	    0);
	assert_int_equal(
	    feed_route(
		r, &(struct rspec){.dst = IP(10, 67, 0, 0), .plen = 16, .nh = long_rec, .nnh = 1}),
	    0);
	assert_int_equal(r->n, 3);
}

/*
 * One route per prefix, as the kernel forwards: routes are keyed by
 * destination, prefix length and metric (fib_table_insert); the lowest
 * metric is announced, a worse one only when it becomes the best. A prefix
 * of another length is another route, whatever its metric.
 */
static void t_detached_route_best(void **state)
{
	struct rec *r = *state;
	uint32_t ten = IP(10, 0, 0, 0), m = IP(10, 56, 0, 0);

	/* 10.0.0.0/8 and 10.0.0.0/16: two routes, both announced. */
	assert_int_equal(
	    feed_route(r, &(struct rspec){.dst = ten, .plen = 16, .gw = G1, .prio = 5}), 1);
	assert_int_equal(
	    feed_route(r, &(struct rspec){.dst = ten, .plen = 8, .gw = G1, .prio = 10}), 1);
	assert_ev(r, 1, route_ev(ten, 8, G1, true));
	assert_int_equal(
	    feed_route(r, &(struct rspec){.dst = ten, .plen = 24, .gw = G1, .prio = 5}), 1);
	assert_ev(r, 2, route_ev(ten, 24, G1, true));
	/* Withdrawing the /16 leaves the others alone. */
	assert_int_equal(
	    feed_route(
		r,
		&(struct rspec){.type = RTM_DELROUTE, .dst = ten, .plen = 16, .gw = G1, .prio = 5}),
	    1);
	assert_ev(r, 3, route_ev(ten, 16, G1, false));

	int n = r->n;

	assert_int_equal(feed_route(r, &(struct rspec){.dst = m, .plen = 16, .gw = G1, .prio = 10}),
			 1);
	/* A repeat (the same route again) is no news. */
	assert_int_equal(feed_route(r, &(struct rspec){.dst = m, .plen = 16, .gw = G1, .prio = 10}),
			 0);
	/* A worse metric is remembered, not announced; nor is its removal. */
	assert_int_equal(feed_route(r, &(struct rspec){.dst = m, .plen = 16, .gw = G2, .prio = 20}),
			 0);
	assert_int_equal(
	    feed_route(
		r,
		&(struct rspec){.type = RTM_DELROUTE, .dst = m, .plen = 16, .gw = G2, .prio = 20}),
	    0);
	assert_int_equal(feed_route(r, &(struct rspec){.dst = m, .plen = 16, .gw = G2, .prio = 20}),
			 0);
	/* The best goes: the next takes its place. */
	assert_int_equal(
	    feed_route(
		r,
		&(struct rspec){.type = RTM_DELROUTE, .dst = m, .plen = 16, .gw = G1, .prio = 10}),
	    1);
	assert_ev(r, n + 1, route_ev(m, 16, G2, true));
	assert_int_equal(
	    feed_route(
		r,
		&(struct rspec){.type = RTM_DELROUTE, .dst = m, .plen = 16, .gw = G2, .prio = 20}),
	    1);
	assert_ev(r, n + 2, route_ev(m, 16, G2, false));
}

/*
 * Replacements. `ip route replace` sends RTM_NEWROUTE with NLM_F_REPLACE
 * and, IPv4 being IPv4, no RTM_DELROUTE for what it replaced: a new
 * gateway replaces ours, a route elsewhere under the same key (prefix,
 * metric) ends ours. Without NLM_F_REPLACE (`ip route append`) the other
 * route only joins ours, and its deletion does not touch ours.
 */
static void t_detached_route_replace(void **state)
{
	struct rec *r = *state;
	uint32_t d = IP(10, 55, 0, 0);

	assert_int_equal(feed_route(r, &(struct rspec){.dst = d, .plen = 16, .gw = G1}), 1);
	assert_int_equal(
	    feed_route(r,
		       &(struct rspec){.nlflags = NLM_F_REPLACE, .dst = d, .plen = 16, .gw = G2}),
	    1);
	assert_ev(r, 1, route_ev(d, 16, G2, true));

	/* Appended through IFY, then deleted there: ours stays. */
	assert_int_equal(feed_route(r, &(struct rspec){.nlflags = NLM_F_APPEND | NLM_F_CREATE,
						       .dst = d,
						       .plen = 16,
						       .oif = IFY,
						       .gw = G1}),
			 0);
	assert_int_equal(
	    feed_route(
		r,
		&(struct rspec){.type = RTM_DELROUTE, .dst = d, .plen = 16, .oif = IFY, .gw = G1}),
	    0);
	/* Another metric's replacement elsewhere is another key: ours stays. */
	assert_int_equal(feed_route(r, &(struct rspec){.nlflags = NLM_F_REPLACE,
						       .dst = d,
						       .plen = 16,
						       .oif = IFY,
						       .gw = G1,
						       .prio = 7}),
			 0);
	assert_int_equal(r->n, 2);

	/* Replaced by a route through IFY: ours is gone. */
	assert_int_equal(
	    feed_route(r,
		       &(struct rspec){
			   .nlflags = NLM_F_REPLACE, .dst = d, .plen = 16, .oif = IFY, .gw = G1}),
	    1);
	assert_ev(r, 2, route_ev(d, 16, G2, false));
	/* And its removal is not ours to report. */
	assert_int_equal(
	    feed_route(
		r,
		&(struct rspec){.type = RTM_DELROUTE, .dst = d, .plen = 16, .oif = IFY, .gw = G1}),
	    0);
}

/*
 * Deletions under a key of ours of routes that are not ours leave ours:
 * one through us with another gateway (appended while notifications were
 * lost), and ones through another interface, with our gateway or, for an
 * on-link route, with none.
 */
static void t_detached_route_others_deleted(void **state)
{
	struct rec *r = *state;
	uint32_t k = IP(10, 55, 0, 0);

	assert_int_equal(feed_route(r, &(struct rspec){.dst = k, .plen = 16, .gw = G1}), 1);
	assert_int_equal(
	    feed_route(r, &(struct rspec){.type = RTM_DELROUTE, .dst = k, .plen = 16, .gw = G2}),
	    0);
	assert_int_equal(
	    feed_route(
		r,
		&(struct rspec){.type = RTM_DELROUTE, .dst = k, .plen = 16, .oif = IFY, .gw = G1}),
	    0);
	/* The same for an on-link route of ours (no gateway). */
	assert_int_equal(feed_route(r, &(struct rspec){.dst = IP(10, 56, 0, 0), .plen = 16}), 1);
	assert_int_equal(feed_route(r, &(struct rspec){.type = RTM_DELROUTE,
						       .dst = IP(10, 56, 0, 0),
						       .plen = 16,
						       .oif = IFY}),
			 0);
	assert_int_equal(r->n, 2);
}

/*
 * `ip route append` under a key we know (same prefix and metric, another
 * gateway through our interface): the kernel keeps using the first route;
 * the appended one waits behind it (fib_table_insert() with NLM_F_APPEND).
 * Its deletion changes nothing; the first's hands the key to it, which a
 * route dump confirms before anything is announced; in a dump the first
 * of a key's routes is the one in use. `ip route prepend` puts the new
 * route first, and the old one behind it.
 */
static void t_detached_route_append(void **state)
{
	struct rec *r = *state;
	struct dgram d = {0};
	uint32_t k = IP(10, 55, 0, 0);
	const uint16_t append = NLM_F_CREATE | NLM_F_APPEND;

	assert_int_equal(feed_route(r, &(struct rspec){.dst = k, .plen = 16, .gw = G1}), 1);
	assert_ev(r, 0, route_ev(k, 16, G1, true));
	/* Appended and deleted again: ours stands throughout. */
	assert_int_equal(
	    feed_route(r, &(struct rspec){.nlflags = append, .dst = k, .plen = 16, .gw = G2}), 0);
	assert_int_equal(
	    feed_route(r, &(struct rspec){.type = RTM_DELROUTE, .dst = k, .plen = 16, .gw = G2}),
	    0);
	/* Appended again, then ours deleted: a route dump (3) says what stands. */
	assert_int_equal(
	    feed_route(r, &(struct rspec){.nlflags = append, .dst = k, .plen = 16, .gw = G2}), 0);
	assert_int_equal(
	    feed_route(r, &(struct rspec){.type = RTM_DELROUTE, .dst = k, .plen = 16, .gw = G1}),
	    0);
	assert_int_equal(r->n, 1);
	put_route(
	    &d, &(struct rspec){.nlflags = NLM_F_MULTI, .seq = 3, .dst = k, .plen = 16, .gw = G2});
	assert_int_equal(feed(r, &d), 1);
	assert_ev(r, 1, route_ev(k, 16, G2, true));
	assert_int_equal(feed_done(r, 3), 0);

	/* A dump listing two routes under the key: the first is in use (4, 5). */
	feed_lost(r);
	assert_int_equal(feed_done(r, 4), 0);
	put_route(
	    &d, &(struct rspec){.nlflags = NLM_F_MULTI, .seq = 5, .dst = k, .plen = 16, .gw = G2});
	put_route(
	    &d, &(struct rspec){.nlflags = NLM_F_MULTI, .seq = 5, .dst = k, .plen = 16, .gw = G1});
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 5), 0);
	assert_int_equal(r->n, 2);
	/* The second goes: nothing changes. The first goes: the second is in use (6). */
	assert_int_equal(
	    feed_route(r, &(struct rspec){.type = RTM_DELROUTE, .dst = k, .plen = 16, .gw = G1}),
	    0);
	assert_int_equal(
	    feed_route(r, &(struct rspec){.type = RTM_DELROUTE, .dst = k, .plen = 16, .gw = G2}),
	    0);
	put_route(
	    &d, &(struct rspec){.nlflags = NLM_F_MULTI, .seq = 6, .dst = k, .plen = 16, .gw = G1});
	assert_int_equal(feed(r, &d), 1);
	assert_ev(r, 2, route_ev(k, 16, G1, true));
	assert_int_equal(feed_done(r, 6), 0);

	/* Prepended via G2: in use at once; when it goes, G1 again, by a dump (7). */
	assert_int_equal(
	    feed_route(r, &(struct rspec){.nlflags = NLM_F_CREATE, .dst = k, .plen = 16, .gw = G2}),
	    1);
	assert_ev(r, 3, route_ev(k, 16, G2, true));
	assert_int_equal(
	    feed_route(r, &(struct rspec){.type = RTM_DELROUTE, .dst = k, .plen = 16, .gw = G2}),
	    0);
	put_route(
	    &d, &(struct rspec){.nlflags = NLM_F_MULTI, .seq = 7, .dst = k, .plen = 16, .gw = G1});
	assert_int_equal(feed(r, &d), 1);
	assert_ev(r, 4, route_ev(k, 16, G1, true));
	assert_int_equal(feed_done(r, 7), 0);
	/* That dump showed nothing behind it: its deletion is announced at once. */
	assert_int_equal(
	    feed_route(r, &(struct rspec){.type = RTM_DELROUTE, .dst = k, .plen = 16, .gw = G1}),
	    1);
	assert_ev(r, 5, route_ev(k, 16, G1, false));
	assert_int_equal(r->n, 6);
}

/*
 * Restart and overrun recovery: a complete dump confirms what it lists and
 * everything the watcher knew that it does not list is gone (IPv4 removes
 * routes and neighbours without notifications when links or addresses go;
 * notifications are lost when the socket overruns: ENOBUFS). The dump
 * arrives over several datagrams, NLMSG_DONE often alone in the last.
 */
static void t_detached_resync_sweeps(void **state)
{
	struct rec *r = *state;
	struct dgram d = {0};
	uint32_t r1 = IP(10, 70, 0, 0), r2 = IP(10, 71, 0, 0);

	nl_watch_close(r->w);
	r->n = 0;
	r->w = nl_watch_open_detached(IFX, &ops, r);
	assert_non_null(r->w);
	/* The first dumps, as after a restart: what they list is announced... */
	put_neigh(&d,
		  &(struct nspec){
		      .nlflags = NLM_F_MULTI, .seq = 1, .state = NUD_STALE, .ip = N1, .mac = mac1});
	assert_int_equal(feed(r, &d), 1);
	assert_int_equal(feed_done(r, 1), 0);
	put_route(
	    &d, &(struct rspec){.nlflags = NLM_F_MULTI, .seq = 2, .dst = r1, .plen = 16, .gw = G1});
	put_route(
	    &d, &(struct rspec){.nlflags = NLM_F_MULTI, .seq = 2, .dst = r2, .plen = 16, .gw = G1});
	assert_int_equal(feed(r, &d), 2);
	assert_int_equal(feed_done(r, 2), 0);
	/* ...and kept. */
	assert_true(known_as(r, N1, mac1));
	assert_int_equal(r->n, 3);
	/* Then a notification. */
	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N2, .mac = mac2}), 1);

	/* Notifications lost: both tables are dumped again, neighbours first (3). */
	feed_lost(r);
	put_neigh(
	    &d,
	    &(struct nspec){
		.nlflags = NLM_F_MULTI, .seq = 3, .state = NUD_REACHABLE, .ip = N1, .mac = mac1});
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 3), 1);
	assert_ev(r, r->n - 1, neigh_ev(N2, mac2, false));
	assert_true(known_as(r, N1, mac1));
	assert_false(known_as(r, N2, NULL));
	/* Routes (4): r2 is no longer there. */
	put_route(
	    &d, &(struct rspec){.nlflags = NLM_F_MULTI, .seq = 4, .dst = r1, .plen = 16, .gw = G1});
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 4), 1);
	assert_ev(r, r->n - 1, route_ev(r2, 16, G1, false));

	/*
	 * A dump that began before a further loss does not sweep: what it
	 * lacks may have come back meanwhile with its notification lost.
	 * The next dump decides.
	 */
	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N3, .mac = mac3}), 1);
	int n = r->n;

	feed_lost(r);
	put_neigh(
	    &d,
	    &(struct nspec){
		.nlflags = NLM_F_MULTI, .seq = 5, .state = NUD_REACHABLE, .ip = N1, .mac = mac1});
	assert_int_equal(feed(r, &d), 0);
	feed_lost(r);
	assert_int_equal(feed_done(r, 5), 0);
	assert_true(known_as(r, N3, mac3));
	put_neigh(
	    &d,
	    &(struct nspec){
		.nlflags = NLM_F_MULTI, .seq = 6, .state = NUD_REACHABLE, .ip = N1, .mac = mac1});
	put_neigh(
	    &d,
	    &(struct nspec){
		.nlflags = NLM_F_MULTI, .seq = 6, .state = NUD_REACHABLE, .ip = N3, .mac = mac3});
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 6), 0);
	put_route(
	    &d, &(struct rspec){.nlflags = NLM_F_MULTI, .seq = 7, .dst = r1, .plen = 16, .gw = G1});
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 7), 0);
	assert_int_equal(r->n, n);
	assert_true(known_as(r, N1, mac1));
	assert_true(known_as(r, N3, mac3));
}

/*
 * How a dump ends decides whether it may sweep. Only a complete dump does:
 * NLMSG_DONE, or an acknowledgement (NLMSG_ERROR with code 0), with the
 * dump's sequence number from the kernel (port id 0). A failed dump
 * (NLMSG_ERROR with a negative errno, or a garbled code) or one the kernel
 * marks interrupted (NLM_F_DUMP_INTR: the table changed during it) does
 * not; an interrupted one is repeated. Another request's DONE is not ours.
 */
static void t_detached_dump_end(void **state)
{
	struct rec *r = *state;
	struct dgram d = {0};

	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N2, .mac = mac2}), 1);
	int n = r->n;

	feed_lost(r); /* neighbour dump 3 */
	assert_int_equal(feed_done(r, 99), 0);
	put_done(&d, 3, 4242); /* another socket's */
	assert_int_equal(feed(r, &d), 0);
	put_error(&d, 3, -EBUSY);
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 4), 0); /* routes */
	assert_true(known_as(r, N2, mac2));

	feed_lost(r);	     /* 5 */
	put_error(&d, 5, 5); /* not an errno the kernel sends */
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 6), 0);
	feed_lost(r); /* 7 */
	put_error(&d, 7, INT32_MIN);
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 8), 0);
	assert_true(known_as(r, N2, mac2));

	feed_lost(r); /* 9, interrupted */
	put_neigh(&d, &(struct nspec){.nlflags = NLM_F_MULTI | NLM_F_DUMP_INTR,
				      .seq = 9,
				      .state = NUD_REACHABLE,
				      .ip = N1,
				      .mac = mac1});
	assert_int_equal(feed(r, &d), 1);
	assert_int_equal(feed_done(r, 9), 0);
	assert_true(known_as(r, N2, mac2));
	/* Repeated (10, before the routes' 11), complete this time: N2 is gone. */
	put_neigh(
	    &d,
	    &(struct nspec){
		.nlflags = NLM_F_MULTI, .seq = 10, .state = NUD_REACHABLE, .ip = N1, .mac = mac1});
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 10), 1);
	assert_ev(r, r->n - 1, neigh_ev(N2, mac2, false));
	assert_int_equal(feed_done(r, 11), 0);
	assert_int_equal(r->n, n + 2);

	/* Ended by an acknowledgement: complete. */
	feed_lost(r); /* 12 */
	put_error(&d, 12, 0);
	assert_int_equal(feed(r, &d), 1);
	assert_ev(r, r->n - 1, neigh_ev(N1, mac1, false));
	assert_false(known_as(r, N1, NULL));
}

/*
 * Link changes (RTM_NEWLINK/DELLINK) of the watched interface re-read both
 * tables, address changes the routes: the kernel flushes neighbours and
 * routes on link down and address removal without a notification each.
 * Another interface's changes start nothing.
 */
static void t_detached_link_resync(void **state)
{
	struct rec *r = *state;
	struct dgram d = {0};
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct ifaddrmsg *ifa;
	uint32_t rt = IP(10, 72, 0, 0);

	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N1, .mac = mac1}), 1);
	assert_int_equal(feed_route(r, &(struct rspec){.dst = rt, .plen = 16, .gw = G1}), 1);

	nlh = put_msg(&d, RTM_NEWLINK, 0, 0);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = IFY;
	end_msg(&d, nlh);
	nlh = put_msg(&d, RTM_NEWADDR, 0, 0);
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	ifa->ifa_index = IFY;
	end_msg(&d, nlh);
	assert_int_equal(feed(r, &d), 0);
	/* No dump was asked for: 3 would be the next. */
	assert_int_equal(feed_done(r, 3), 0);
	assert_true(known_as(r, N1, mac1));

	nlh = put_msg(&d, RTM_NEWLINK, 0, 0);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = IFX;
	ifi->ifi_flags = 0; /* down */
	end_msg(&d, nlh);
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 3), 1);
	assert_ev(r, r->n - 1, neigh_ev(N1, mac1, false));
	assert_int_equal(feed_done(r, 4), 1);
	assert_ev(r, r->n - 1, route_ev(rt, 16, G1, false));

	/* An address of ours removed: routes only (5). */
	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N1, .mac = mac1}), 1);
	assert_int_equal(feed_route(r, &(struct rspec){.dst = rt, .plen = 16, .gw = G1}), 1);
	nlh = put_msg(&d, RTM_DELADDR, 0, 0);
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	ifa->ifa_index = IFX;
	end_msg(&d, nlh);
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 5), 1);
	assert_ev(r, r->n - 1, route_ev(rt, 16, G1, false));
	assert_true(known_as(r, N1, mac1));
}

/*
 * Malformed input never crashes and is never read beyond its length: whole
 * messages are handled, a truncated or unpadded one (the kernel pads every
 * message, NLMSG_ALIGN) and everything after it is skipped. Each buffer
 * ends where an inaccessible page begins.
 */
static void t_detached_malformed(void **state)
{
	struct rec *r = *state;
	struct dgram d = {0};
	struct nlmsghdr hdr = {.nlmsg_len = sizeof(hdr)};
	uint8_t junk[64];

	assert_int_equal(
	    feed_neigh(r, &(struct nspec){.state = NUD_REACHABLE, .ip = N1, .mac = mac1}), 1);
	assert_int_equal(
	    feed_route(r, &(struct rspec){.dst = IP(10, 73, 0, 0), .plen = 16, .gw = G1}), 1);
	feed_lost(r); /* a neighbour dump (3) is in progress from here */

	/* Headers without the family header their type has. */
	static const uint16_t types[] = {RTM_NEWNEIGH, RTM_DELNEIGH, RTM_NEWROUTE, RTM_DELROUTE,
					 RTM_NEWLINK,  RTM_NEWADDR,  NLMSG_DONE,   NLMSG_ERROR};
	for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		hdr.nlmsg_type = types[i];
		hdr.nlmsg_flags = NLM_F_REPLACE;
		hdr.nlmsg_seq = types[i] == NLMSG_DONE ? 99 : 3;
		assert_int_equal(feed_guarded(r, &hdr, sizeof(hdr)), 0);
	}
	/* Lengths that cannot be: 0 (no progress), 1..15, past the end, 2^31 and more. */
	static const uint32_t lens[] = {0,    1,	  4,	      15,	  17,
					4096, 0x7fffffff, 0x80000000, 0xfffffffc, 0xffffffff};
	for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		hdr.nlmsg_len = lens[i];
		hdr.nlmsg_type = RTM_NEWNEIGH;
		assert_int_equal(feed_guarded(r, &hdr, sizeof(hdr)), 0);
	}
	/* An unpadded last message (46 bytes: NDA_LLADDR unpadded) is skipped. */
	put_neigh(&d, &(struct nspec){.state = NUD_REACHABLE, .ip = N2, .mac = mac2});
	((struct nlmsghdr *)d.buf)->nlmsg_len -= 2;
	assert_int_equal(feed_guarded(r, d.buf, d.len - 2), 0);
	memset(&d, 0, sizeof(d));
	/* A whole message before a broken one is handled, what follows is not. */
	put_neigh(&d, &(struct nspec){.state = NUD_REACHABLE, .ip = N2, .mac = mac2});
	size_t first = d.len;
	put_neigh(&d, &(struct nspec){.state = NUD_REACHABLE, .ip = N3, .mac = mac3});
	((struct nlmsghdr *)(d.buf + first))->nlmsg_len = 0xffffffff;
	assert_int_equal(feed_guarded(r, d.buf, d.len), 1);
	assert_true(known_as(r, N2, mac2));
	assert_false(known_as(r, N3, NULL));
	memset(&d, 0, sizeof(d));
	/* Garbage. */
	for (unsigned i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	for (size_t len = 0; len <= sizeof(junk); len++)
		assert_true(feed_guarded(r, junk, len) >= 0);

	/*
	 * The tables are as they were, and the dumps go on: the truncated
	 * NLMSG_ERROR with dump 3's number ended it as failed (no sweep), so
	 * the route dump (4) followed.
	 */
	assert_true(known_as(r, N1, mac1));
	int n = r->n;

	put_route(
	    &d,
	    &(struct rspec){
		.nlflags = NLM_F_MULTI, .seq = 4, .dst = IP(10, 73, 0, 0), .plen = 16, .gw = G1});
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 4), 0);
	feed_lost(r); /* 5 and 6 */
	put_neigh(
	    &d,
	    &(struct nspec){
		.nlflags = NLM_F_MULTI, .seq = 5, .state = NUD_REACHABLE, .ip = N1, .mac = mac1});
	assert_int_equal(feed(r, &d), 0);
	assert_int_equal(feed_done(r, 5), 1);
	assert_ev(r, n, neigh_ev(N2, mac2, false));
	assert_int_equal(feed_done(r, 6), 1);
	assert_ev(r, n + 1, route_ev(IP(10, 73, 0, 0), 16, G1, false));
}

/* ---- more kernel behaviour ---------------------------------------------------- */

/*
 * nl_query_if's choices where the kernel offers several: the first primary
 * address (the kernel lists an interface's primaries in the order they were
 * added, its secondaries after them), our own end of a point-to-point
 * address (IFA_LOCAL; IFA_ADDRESS is the peer there), and as gateway the
 * lowest-metric default through the interface that has a gateway (an
 * on-link default, `dev X` alone, names none; a default through another
 * interface is not ours).
 */
static void t_query_if_choices(void **state)
{
	struct nl_ifinfo info;
	char err[256] = "";

	(void)state;
	restore_a();
	assert_int_equal(ns_sh("ip -n %s addr add 10.98.0.1/16 dev va", ns_a), 0);
	assert_int_equal(nl_query_if("va", &info, err, sizeof(err)), 0);
	assert_int_equal(info.addr, IP_A);
	assert_int_equal(info.prefix_len, 24);

	assert_int_equal(ns_sh("A=%s; ip -n $A route add default via 10.99.0.3 metric 20 && "
			       "ip -n $A route add default via 10.99.0.2 metric 10 && "
			       "ip -n $A route add default via 10.99.0.4 metric 30",
			       ns_a),
			 0);
	assert_int_equal(nl_query_if("va", &info, err, sizeof(err)), 0);
	assert_int_equal(info.gateway, IP_B);
	assert_int_equal(ns_sh("A=%s; ip -n $A route add default dev va metric 5 && "
			       "ip -n $A route add default via 10.98.0.2 dev vn0 onlink metric 1",
			       ns_a),
			 0);
	assert_int_equal(nl_query_if("va", &info, err, sizeof(err)), 0);
	assert_int_equal(info.gateway, IP_B);

	assert_int_equal(ns_sh("ip -n %s addr add 10.96.0.1 peer 10.96.0.2/32 dev vn0", ns_a), 0);
	assert_int_equal(nl_query_if("vn0", &info, err, sizeof(err)), 0);
	assert_int_equal(info.addr, IP(10, 96, 0, 1));
	assert_int_equal(info.prefix_len, 32);
	restore_a();
}

/*
 * Link down: IPv4 drops every route through the link without sending
 * RTM_DELROUTE (fib_sync_down_dev(); only RTM_NEWLINK tells), so the
 * watcher re-reads the table and reports them gone. Back up, the connected
 * route returns.
 */
static void t_watch_link_down(void **state)
{
	struct rec *r = *state;
	uint32_t n58 = IP(10, 58, 0, 0);
	struct ev e;
	int k;

	assert_int_equal(ns_sh("ip -n %s route add 10.58.0.0/16 via 10.99.0.2", ns_a), 0);
	e = route_ev(n58, 16, IP_B, true);
	k = EXPECT_EV(r, 0, &e, true);
	assert_int_equal(ns_sh("ip -n %s link set va down", ns_a), 0);
	e = route_ev(n58, 16, IP_B, false);
	EXPECT_EV(r, k + 1, &e, true);
	e = route_ev(NET, 24, 0, false);
	k = EXPECT_EV(r, k + 1, &e, true);
	assert_int_equal(ns_sh("ip -n %s link set va up", ns_a), 0);
	e = route_ev(NET, 24, 0, true);
	EXPECT_EV(r, k + 1, &e, true);
}

/*
 * Notifications lost to a socket overrun (recv fails with ENOBUFS,
 * netlink(7)): the watcher re-reads both tables, so a route deleted while
 * its notification was dropped is still reported gone. The test shrinks
 * the watcher's receive buffer so that a burst of new routes overruns it.
 */
static void t_watch_overrun(void **state)
{
	struct rec *r = *state;
	int fd = nl_watch_fd(r->w), small = 1, big = 4 << 20;
	uint32_t n58 = IP(10, 58, 0, 0);
	struct ev e;
	int k;

	assert_int_equal(ns_sh("ip -n %s route add 10.58.0.0/16 via 10.99.0.2", ns_a), 0);
	e = route_ev(n58, 16, IP_B, true);
	k = EXPECT_EV(r, 0, &e, true);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	assert_int_equal(ns_sh("for i in $(seq 1 64); do echo route add 10.201.0.$i/32 via "
			       "10.99.0.2; done | ip -n %s -batch - && "
			       "ip -n %s route del 10.58.0.0/16",
			       ns_a, ns_a),
			 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)), 0);
	e = route_ev(n58, 16, IP_B, false);
	EXPECT_EV(r, k + 1, &e, true);
	e = route_ev(IP(10, 201, 0, 64), 32, IP_B, true);
	EXPECT_EV(r, k + 1, &e, true);
}

/*
 * A datagram larger than the watcher's 64 KiB buffer cannot be read whole
 * (recv with MSG_TRUNC says so): the watcher treats it as lost messages and
 * re-reads both tables. A root process may unicast to any netlink port
 * (netlink(7)); here it forges a route the kernel does not have, then sends
 * 100 KB: the re-read finds the route gone.
 */
static void t_watch_oversize(void **state)
{
	struct rec *r = *state;
	struct sockaddr_nl to;
	socklen_t tl = sizeof(to);
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), big = 1 << 20;
	size_t blen = 100000;
	char *blob = calloc(1, blen);
	struct dgram d = {0};
	uint32_t n77 = IP(10, 77, 0, 0);
	struct ev e;
	int k;

	assert_true(s >= 0 && blob);
	assert_int_equal(getsockname(nl_watch_fd(r->w), (struct sockaddr *)&to, &tl), 0);
	to.nl_groups = 0;
	assert_int_equal(setsockopt(s, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)), 0);
	put_route(&d, &(struct rspec){
			  .dst = n77, .plen = 16, .oif = (int)if_nametoindex("va"), .gw = IP_B});
	assert_int_equal(sendto(s, d.buf, d.len, 0, (struct sockaddr *)&to, sizeof(to)),
			 (ssize_t)d.len);
	e = route_ev(n77, 16, IP_B, true);
	k = EXPECT_EV(r, 0, &e, true);
	assert_int_equal(sendto(s, blob, blen, 0, (struct sockaddr *)&to, sizeof(to)),
			 (ssize_t)blen);
	e = route_ev(n77, 16, IP_B, false);
	EXPECT_EV(r, k + 1, &e, true);
	close(s);
	free(blob);
}

/* Drop CAP_NET_ADMIN from the calling thread (effective and permitted). */
static int drop_net_admin(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct c[2];

	if (syscall(SYS_capget, &h, c))
		return -1;
	c[CAP_NET_ADMIN / 32].effective &= ~(1u << (CAP_NET_ADMIN % 32));
	c[CAP_NET_ADMIN / 32].permitted &= ~(1u << (CAP_NET_ADMIN % 32));
	return (int)syscall(SYS_capset, &h, c);
}

/*
 * Without CAP_NET_ADMIN the kernel refuses RTM_NEWNEIGH (EPERM): the
 * resolution falls back to a datagram, and the kernel resolves the
 * neighbour all the same. In a child process that drops the capability.
 */
static void t_resolve_unprivileged(void **state)
{
	int st;
	pid_t pid;

	(void)state;
	restore_a();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rec *c = calloc(1, sizeof(*c));
		struct ev e = neigh_ev(IP_B, mac_vb, true);

		if (!c || !(c->w = nl_watch_open((int)if_nametoindex("va"), &ops, c)))
			_exit(2);
		if (drop_net_admin() || nl_watch_resolve(c->w, IP_B) != 0)
			_exit(3);
		for (int i = 0; i < 200; i++) {
			struct pollfd pfd = {.fd = nl_watch_fd(c->w), .events = POLLIN};

			if (find_ev(c, 0, &e, true) >= 0)
				_exit(0);
			poll(&pfd, 1, 50);
			if (nl_watch_poll(c->w) < 0)
				_exit(4);
		}
		_exit(5);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	restore_a();
}

/*
 * nl_resolve_udp pins the interface (SO_BINDTOIFINDEX): the kernel ARPs on
 * the interface named even where its routes would send the datagram out
 * of another (the kernel then takes the destination as on-link).
 */
static void t_resolve_udp_pinned(void **state)
{
	(void)state;
	restore_a();
	assert_int_equal(ns_sh("ip -n %s route add 10.123.0.0/16 dev vn0", ns_a), 0);
	assert_int_equal(nl_resolve_udp((int)if_nametoindex("va"), IP(10, 123, 0, 5)), 0);
	assert_int_equal(ns_sh("ip -n %s neigh show 10.123.0.5 dev va | grep -q 10.123.0.5", ns_a),
			 0);
	assert_int_not_equal(
	    ns_sh("ip -n %s neigh show 10.123.0.5 dev vn0 | grep -q 10.123.0.5", ns_a), 0);
	restore_a();
}

/* A neighbour the kernel gave up on (FAILED) is asked again on request. */
static void t_watch_resolve_failed(void **state)
{
	struct rec *r = *state;
	struct ev e;

	assert_int_equal(ns_sh("ip -n %s neigh replace 10.99.0.2 dev va nud failed", ns_a), 0);
	assert_int_equal(nl_watch_resolve(r->w, IP_B), 0);
	e = neigh_ev(IP_B, mac_vb, true);
	EXPECT_EV(r, 0, &e, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(t_query_if),
	    cmocka_unit_test(t_query_errors),
	    cmocka_unit_test(t_watch_open_errors),
	    cmocka_unit_test(t_watch_dump),
	    cmocka_unit_test_setup_teardown(t_watch_neigh, watch_setup, watch_teardown),
	    cmocka_unit_test_setup_teardown(t_watch_resolve, watch_setup, watch_teardown),
	    cmocka_unit_test_setup_teardown(t_resolve_udp, watch_setup, watch_teardown),
	    cmocka_unit_test_setup_teardown(t_watch_route, watch_setup, watch_teardown),
	    cmocka_unit_test_setup_teardown(t_watch_addr_removed, watch_setup, watch_teardown),
	    cmocka_unit_test(t_query_if_choices),
	    cmocka_unit_test_setup_teardown(t_watch_link_down, watch_setup, watch_teardown),
	    cmocka_unit_test_setup_teardown(t_watch_overrun, watch_setup, watch_teardown),
	    cmocka_unit_test_setup_teardown(t_watch_oversize, watch_setup, watch_teardown),
	    cmocka_unit_test(t_resolve_unprivileged),
	    cmocka_unit_test(t_resolve_udp_pinned),
	    cmocka_unit_test_setup_teardown(t_watch_resolve_failed, watch_setup, watch_teardown),
	    cmocka_unit_test(t_detached_api),
	    cmocka_unit_test_setup_teardown(t_detached_neigh_states, det_setup, det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_neigh_filters, det_setup, det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_neigh_life, det_setup, det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_many, det_setup, det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_route_filters, det_setup, det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_multipath, det_setup, det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_route_best, det_setup, det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_route_replace, det_setup, det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_route_append, det_setup, det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_route_others_deleted, det_setup,
					    det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_resync_sweeps, det_setup, det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_dump_end, det_setup, det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_link_resync, det_setup, det_teardown),
	    cmocka_unit_test_setup_teardown(t_detached_malformed, det_setup, det_teardown),
	};

	ns_require_root("ctl/netlink");
	return cmocka_run_group_tests_name("ctl/netlink", tests, group_setup, group_teardown);
}
