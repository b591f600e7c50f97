/*
 * test_flow_plan.c - the port-to-queue plan (ctl/flow_plan.h): sub-ranges
 * tile the reserved range, every client port a queue picks comes back to
 * that queue on both sides (its sub-range here, the low bits at a lunar
 * server with as many queues), and bad plans are refused with a reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>
#include <stdio.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "ctl/flow_plan.h"

static void test_sub_ranges_tile_the_reserved_range(void **state)
{
	(void)state;
	for (unsigned n = 1; n <= 8; n++) {
		struct flow_plan p;
		char err[200];
		uint32_t next = 61440;

		assert_int_equal(flow_plan_init(&p, n, 61440, 65535, err, sizeof(err)), 0);
		for (unsigned q = 0; q < n; q++) {
			uint16_t lo, hi;

			flow_plan_client_range(&p, q, &lo, &hi);
			assert_int_equal(lo, next);
			assert_true(hi >= lo);
			next = (uint32_t)hi + 1;
		}
		assert_int_equal(next, 65536);
	}
}

static void test_client_ports_return_to_their_queue(void **state)
{
	(void)state;
	for (unsigned n = 1; n <= 6; n++) {
		struct flow_plan p;
		char err[200];

		assert_int_equal(flow_plan_init(&p, n, 61440, 65535, err, sizeof(err)), 0);
		for (unsigned q = 0; q < n; q++) {
			struct flow_port_set s = flow_plan_client_ports(&p, q);
			unsigned count = 0;

			for (uint32_t port = s.lo; port <= s.hi; port++) {
				if (port % s.mod != s.rem)
					continue;
				count++;
				/* Replies to us: by the destination port's sub-range. */
				assert_int_equal(flow_plan_queue_of(&p, 80, (uint16_t)port), q);
				assert_true(flow_plan_owns(&p, q, (uint16_t)port, 80));
				/*
				 * At a lunar server with n queues listening on 5000: by low bits.
				 */
				assert_int_equal(flow_plan_queue_of(&p, (uint16_t)port, 5000), q);
			}
			assert_true(count >= 16);
		}
	}
}

static void test_listening_side_spreads_by_low_bits(void **state)
{
	struct flow_plan p;
	char err[200];
	unsigned per_queue[4] = {0};

	(void)state;
	assert_int_equal(flow_plan_init(&p, 4, 61440, 65535, err, sizeof(err)), 0);
	for (uint32_t sport = 1024; sport < 2048; sport++)
		per_queue[flow_plan_queue_of(&p, (uint16_t)sport, 8080)]++;
	for (unsigned q = 0; q < 4; q++)
		assert_int_equal(per_queue[q], 256);
	assert_int_equal(flow_plan_queue_of(&p, 1027, 8080), 3);
	assert_false(flow_plan_owns(&p, 0, 8080, 1027));
}

static void test_bad_plans_are_refused(void **state)
{
	struct flow_plan p;
	char err[200];

	(void)state;
	assert_int_equal(flow_plan_init(&p, 0, 61440, 65535, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "workers"));
	assert_int_equal(
	    flow_plan_init(&p, FLOW_PLAN_MAX_QUEUES + 1, 61440, 65535, err, sizeof(err)), -EINVAL);
	assert_int_equal(flow_plan_init(&p, 4, 65000, 65100, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--reserved"));
	assert_int_equal(flow_plan_init(&p, 2, 100, 50, err, sizeof(err)), -EINVAL);
}

/* The most queues a plan allows is accepted, given all 65536 ports (16 * 64 * 64). */
static void test_most_queues(void **state)
{
	struct flow_plan p;
	char err[200] = "";

	(void)state;
	assert_int_equal(flow_plan_init(&p, FLOW_PLAN_MAX_QUEUES, 0, 65535, err, sizeof(err)), 0);
	assert_int_equal(p.n_queues, FLOW_PLAN_MAX_QUEUES);
	assert_int_equal(flow_plan_queue_of(&p, 0, 65535), FLOW_PLAN_MAX_QUEUES - 1);
	assert_int_equal(flow_plan_init(&p, FLOW_PLAN_MAX_QUEUES + 1, 0, 65535, err, sizeof(err)),
			 -EINVAL);
}

/*
 * On af_xdp the reserved range must stay out of the kernel's ephemeral
 * ports, unless ip_local_reserved_ports keeps the kernel off the overlap.
 */
static void test_kernel_port_overlap(void **state)
{
	char err[400];

	(void)state;
	assert_int_equal(
	    flow_plan_check_kernel_ports(61440, 65535, 32768, 60999, "", err, sizeof(err)), 0);
	assert_int_equal(
	    flow_plan_check_kernel_ports(32768, 65535, 32768, 60999, "", err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, "ip_local_reserved_ports=32768-65535"));
	assert_non_null(strstr(err, "28232 ports from 32768"));
	/* A host tuned to 1024-65535 collides with the default range... */
	assert_int_equal(
	    flow_plan_check_kernel_ports(61440, 65535, 1024, 65535, "", err, sizeof(err)), -EINVAL);
	/* ...unless those ports are reserved from the kernel, in pieces or whole. */
	assert_int_equal(flow_plan_check_kernel_ports(61440, 65535, 1024, 65535,
						      "8080,61440-63000,63001-65535\n", err,
						      sizeof(err)),
			 0);
	assert_int_equal(flow_plan_check_kernel_ports(61440, 65535, 1024, 65535, "61440-65534", err,
						      sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "1 ports from 65535"));
	/* An unreadable list holds nothing back. */
	assert_int_equal(
	    flow_plan_check_kernel_ports(61440, 65535, 1024, 65535, "x-y", err, sizeof(err)),
	    -EINVAL);
}

/*
 * A reserved-ports list that is readable only in part holds nothing back
 * either, not even the ranges before the bad entry: a reversed range
 * ("b-a", which the kernel never prints) or any other bad entry after a
 * good one. No list at all (NULL) is the same as an empty one.
 */
static void test_kernel_reserved_list_unreadable(void **state)
{
	char err[400];

	(void)state;
	assert_int_equal(flow_plan_check_kernel_ports(61440, 65535, 1024, 65535, "61440-65535", err,
						      sizeof(err)),
			 0);
	assert_int_equal(flow_plan_check_kernel_ports(61440, 65535, 1024, 65535,
						      "61440-65535,100-50", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "4096 ports from 61440"));
	assert_int_equal(flow_plan_check_kernel_ports(61440, 65535, 1024, 65535, "65535-61440", err,
						      sizeof(err)),
			 -EINVAL);
	assert_int_equal(flow_plan_check_kernel_ports(61440, 65535, 1024, 65535, "61440-65535,x",
						      err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "4096 ports from 61440"));
	assert_int_equal(
	    flow_plan_check_kernel_ports(61440, 65535, 1024, 65535, NULL, err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, "4096 ports from 61440"));
	assert_int_equal(
	    flow_plan_check_kernel_ports(61440, 65535, 32768, 60999, NULL, err, sizeof(err)), 0);
}

#define V4_HEAD                                                                                    \
	"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "      \
	"timeout inode\n"
#define V6_HEAD                                                                                    \
	"  sl  local_address                         remote_address                        st "    \
	"tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

/* flow_plan_kernel_listener() over @text as if it were the /proc file. */
static unsigned listener_in(const char *text, bool v6, uint16_t lo, uint16_t hi, uint32_t ip)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	unsigned port;

	assert_non_null(f);
	port = flow_plan_kernel_listener(f, v6, lo, hi, ip);
	fclose(f);
	return port;
}

/*
 * A kernel listener inside the reserved range on lunar's address or all
 * addresses is found in /proc/net/tcp's text (the address words as the
 * host stores them, printed as numbers: 10.0.0.2 is 0200000A on x86);
 * one on loopback, another address, outside the range, or not listening
 * is not; neither are lines that do not parse.
 */
static void test_kernel_listener_v4(void **state)
{
	const uint32_t ip = 0x0a000002; /* 10.0.0.2 */
	const char *t = V4_HEAD
	    "   0: 0100007F:F000 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 "
	    "0 1 1 0 100 0 0 10 0\n" /* 127.0.0.1:61440 */
	    "   1: 0300000A:F001 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 "
	    "0 2 1 0 100 0 0 10 0\n" /* 10.0.0.3:61441 */
	    "   2: 0200000A:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 "
	    "0 3 1 0 100 0 0 10 0\n" /* 10.0.0.2:8080, outside */
	    "   3: 0200000A:F002 0100000A:0050 01 00000000:00000000 00:00000000 00000000     0 "
	    "0 4 1 0 100 0 0 10 0\n" /* established, not listening */
	    "   4: 0200000A:F0 garbage\n"
	    "   5: 0200000A:F003 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 "
	    "0 5 1 0 100 0 0 10 0\n"; /* 10.0.0.2:61443 */

	(void)state;
	assert_int_equal(listener_in(t, false, 61440, 65535, ip), 61443);
	assert_int_equal(listener_in(t, false, 61444, 65535, ip), 0);
	/* No address given: every address but loopback is lunar's. */
	assert_int_equal(listener_in(t, false, 61440, 65535, 0), 61441);
	/* The wildcard. */
	assert_int_equal(listener_in(V4_HEAD "   0: 00000000:FFFF 00000000:0000 0A "
					     "00000000:00000000 00:00000000\n",
				     false, 61440, 65535, ip),
			 65535);
	assert_int_equal(listener_in(V4_HEAD, false, 61440, 65535, ip), 0);
	assert_int_equal(listener_in("", false, 61440, 65535, ip), 0);
}

/* Hex digits in lower case read as in upper case: 0200000a:f00a is 10.0.0.2:61450. */
static void test_kernel_listener_lower_case(void **state)
{
	(void)state;
	assert_int_equal(listener_in(V4_HEAD "   0: 0200000a:f00a 00000000:0000 0a "
					     "00000000:00000000 00:00000000\n",
				     false, 61440, 65535, 0x0a000002),
			 61450);
	assert_int_equal(listener_in(V6_HEAD "   0: 0000000000000000ffff00000200000a:fabc "
					     "00000000000000000000000000000000:0000 0A 0\n",
				     true, 61440, 65535, 0x0a000002),
			 0xfabc);
}

/* A port field of more than four digits is not a port: the line is skipped. */
static void test_kernel_listener_long_port(void **state)
{
	(void)state;
	assert_int_equal(listener_in(V4_HEAD "   0: 0200000A:F0001 00000000:0000 0A "
					     "00000000:00000000 00:00000000\n",
				     false, 61440, 65535, 0x0a000002),
			 0);
	assert_int_equal(listener_in(V4_HEAD "   0: 0200000A:F000x 00000000:0000 0A "
					     "00000000:00000000 00:00000000\n",
				     false, 61440, 65535, 0x0a000002),
			 0);
}

/* With no address given, all of 127.0.0.0/8 is loopback, not only 127.0.0.1. */
static void test_kernel_listener_loopback_net(void **state)
{
	(void)state;
	assert_int_equal(listener_in(V4_HEAD "   0: 0200007F:F000 00000000:0000 0A "
					     "00000000:00000000 00:00000000\n",
				     false, 61440, 65535, 0),
			 0); /* 127.0.0.2 */
	assert_int_equal(listener_in(V4_HEAD "   0: 0101017F:F000 00000000:0000 0A "
					     "00000000:00000000 00:00000000\n",
				     false, 61440, 65535, 0),
			 0); /* 127.1.1.1 */
	assert_int_equal(listener_in(V4_HEAD "   0: 0100007E:F000 00000000:0000 0A "
					     "00000000:00000000 00:00000000\n",
				     false, 61440, 65535, 0),
			 61440); /* 126.0.0.1 */
	assert_int_equal(listener_in(V6_HEAD "   0: 0000000000000000FFFF00000200007F:F000 "
					     "00000000000000000000000000000000:0000 0A 0\n",
				     true, 61440, 65535, 0),
			 0); /* ::ffff:127.0.0.2 */
}

/* /proc/net/tcp6: "::" and "::ffff:10.0.0.2" take IPv4 too; a real IPv6 address does not. */
static void test_kernel_listener_v6(void **state)
{
	const uint32_t ip = 0x0a000002;

	(void)state;
	assert_int_equal(listener_in(V6_HEAD "   0: 00000000000000000000000001000000:F000 "
					     "00000000000000000000000000000000:0000 0A 0\n",
				     true, 61440, 65535, ip),
			 0); /* ::1 */
	assert_int_equal(listener_in(V6_HEAD "   0: 0000000000000000FFFF00000200000A:F004 "
					     "00000000000000000000000000000000:0000 0A 0\n",
				     true, 61440, 65535, ip),
			 61444);
	assert_int_equal(listener_in(V6_HEAD "   0: 0000000000000000FFFF00000300000A:F004 "
					     "00000000000000000000000000000000:0000 0A 0\n",
				     true, 61440, 65535, ip),
			 0);
	assert_int_equal(listener_in(V6_HEAD "   0: 00000000000000000000000000000000:F005 "
					     "00000000000000000000000000000000:0000 0A 0\n",
				     true, 61440, 65535, ip),
			 61445);
	/*
	 * Only ::ffff:0:0/96 is IPv4: an address whose third word reads like the
	 * mapped prefix but whose first or second word is not zero is IPv6
	 * (2001:db8::ffff:10.0.0.2 and ::1:0:ffff:10.0.0.2).
	 */
	assert_int_equal(listener_in(V6_HEAD "   0: B80D012000000000FFFF00000200000A:F004 "
					     "00000000000000000000000000000000:0000 0A 0\n",
				     true, 61440, 65535, ip),
			 0);
	assert_int_equal(listener_in(V6_HEAD "   0: 0000000000000100FFFF00000200000A:F004 "
					     "00000000000000000000000000000000:0000 0A 0\n",
				     true, 61440, 65535, ip),
			 0);
	assert_int_equal(listener_in(V6_HEAD "   0: B80D012000000000FFFF00000200000A:F004 "
					     "00000000000000000000000000000000:0000 0A 0\n",
				     true, 61440, 65535, 0),
			 0);
	/* A v4 table read as v6 parses nothing. */
	assert_int_equal(listener_in(V4_HEAD "   0: 00000000:FFFF 00000000:0000 0A "
					     "00000000:00000000 00:00000000\n",
				     true, 61440, 65535, ip),
			 0);
}

/* The running kernel's own table: a socket this test listens on is found there, once it listens. */
static unsigned live_listener(uint16_t port)
{
	FILE *f = fopen("/proc/net/tcp", "r");
	unsigned found;

	assert_non_null(f);
	found = flow_plan_kernel_listener(f, false, port, port, 0x0a000002);
	fclose(f);
	return found;
}

static void test_kernel_listener_live(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	uint16_t port;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0); /* 0.0.0.0:<any> */
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	port = ntohs(a.sin_port);
	assert_int_equal(live_listener(port), 0); /* bound, not listening */
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(live_listener(port), port);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sub_ranges_tile_the_reserved_range),
	    cmocka_unit_test(test_client_ports_return_to_their_queue),
	    cmocka_unit_test(test_listening_side_spreads_by_low_bits),
	    cmocka_unit_test(test_bad_plans_are_refused),
	    cmocka_unit_test(test_most_queues),
	    cmocka_unit_test(test_kernel_port_overlap),
	    cmocka_unit_test(test_kernel_reserved_list_unreadable),
	    cmocka_unit_test(test_kernel_listener_v4),
	    cmocka_unit_test(test_kernel_listener_lower_case),
	    cmocka_unit_test(test_kernel_listener_long_port),
	    cmocka_unit_test(test_kernel_listener_loopback_net),
	    cmocka_unit_test(test_kernel_listener_v6),
	    cmocka_unit_test(test_kernel_listener_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
