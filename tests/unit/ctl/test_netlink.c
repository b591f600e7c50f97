/*
 * test_netlink.c - root-only tests of the kernel control-plane reader
 * (src/ctl/netlink.c): nl_query_if and the neighbour/route watcher.
 *
 * Two throw-away namespaces A and B joined by a veth (A: va 10.99.0.1/24,
 * B: vb 10.99.0.2/24, MTU 1450); A also holds vn0, up but without an
 * address. The test process itself moves into A (setns), changes the
 * tables with `ip`, and polls the watcher in a bounded loop (no timing
 * assertions: a deadline only turns a hang into a failure).
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
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

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
	      "ip -n $A route del default 2>/dev/null; "
	      "for n in 10.50.0.0/16 10.55.0.0/16 10.57.0.0/16 10.58.0.0/16; do "
	      "ip -n $A route del $n 2>/dev/null; done; "
	      "while ip -n $A route del 10.56.0.0/16 2>/dev/null; do :; done; "
	      "ip -n $A neigh flush dev va 2>/dev/null; "
	      "ip -n $A neigh del 10.99.0.77 dev va 2>/dev/null; "
	      "ip -n $A neigh del 10.99.0.50 dev va 2>/dev/null; true",
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
	EXPECT_EV(r, k + 1, &e, true);
	assert_int_equal(ns_sh("ip -n %s route del blackhole 10.59.0.0/16", ns_a), 0);
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
	};

	ns_require_root("ctl/netlink");
	return cmocka_run_group_tests_name("ctl/netlink", tests, group_setup, group_teardown);
}
