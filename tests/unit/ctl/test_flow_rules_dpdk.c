/*
 * test_flow_rules_dpdk.c - flow_rules_apply() on devices without rte_flow:
 * the vdevs lunar runs on here (memif; null stands in for af_xdp, ring and
 * the other software devices) have no flow API, and the error must name the
 * device, its driver, DPDK's reason and the way out. EAL runs without
 * hugepages (--no-huge): nothing here needs packet memory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "base/eal_exit.h"
#include "ctl/flow_plan.h"
#include "ctl/flow_rules.h"

static char memif_arg[128], memif_sock[64];

static int group_setup(void **state)
{
	char *argv[] = {"test",
			"--no-pci",
			"--no-huge",
			"-m",
			"64",
			"--no-shconf",
			"--no-telemetry",
			"-l",
			"0",
			"--log-level=*:error",
			"--vdev=net_null0",
			memif_arg,
			NULL};

	(void)state;
	snprintf(memif_sock, sizeof(memif_sock), "/tmp/lunar-flowrules-%d.sock", (int)getpid());
	snprintf(memif_arg, sizeof(memif_arg),
		 "--vdev=net_memif0,role=server,socket=%s,socket-abstract=no", memif_sock);
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	uint16_t pid;

	(void)state;
	RTE_ETH_FOREACH_DEV(pid)
	rte_eth_dev_close(pid);
	lunar_eal_cleanup(); /* rte_eal_cleanup() raced the interrupt thread */
	unlink(memif_sock);
	return 0;
}

static uint16_t port_named(const char *name)
{
	uint16_t pid;

	if (rte_eth_dev_get_port_by_name(name, &pid))
		fail_msg("no port %s", name);
	return pid;
}

static void expect_no_flow(const char *dev, const char *driver)
{
	struct flow_rule rules[16];
	struct rte_flow *handles[16];
	struct flow_plan p;
	char err[512] = "", want[128];
	uint16_t port = port_named(dev);
	const uint16_t listen[] = {8080};
	int n;

	assert_int_equal(flow_plan_init(&p, 2, 61440, 65535, err, sizeof(err)), 0);
	n = flow_rules_build(&p, listen, 1, FLOW_LISTEN_LOW_BITS, FLOW_RANGE_PREFIX, rules, 16, err,
			     sizeof(err));
	assert_int_equal(n, 4);
	assert_int_equal(flow_rules_apply(port, rules, (size_t)n, handles, err, sizeof(err)),
			 -ENOTSUP);
	snprintf(want, sizeof(want), "port %u (%s, driver %s) has no rte_flow support", port, dev,
		 driver);
	if (!strstr(err, want) || !strstr(err, "af_xdp"))
		fail_msg("message lacks '%s' or the way out: %s", want, err);
	printf("# %s\n", err);
}

static void test_memif_has_no_flow_rules(void **state)
{
	(void)state;
	expect_no_flow("net_memif0", "net_memif");
}

static void test_null_has_no_flow_rules(void **state)
{
	(void)state;
	expect_no_flow("net_null0", "net_null");
}

static void test_no_such_port(void **state)
{
	char err[128] = "";

	(void)state;
	assert_int_equal(flow_rules_apply(RTE_MAX_ETHPORTS - 1, NULL, 0, NULL, err, sizeof(err)),
			 -ENODEV);
	assert_non_null(strstr(err, "does not exist"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_memif_has_no_flow_rules),
	    cmocka_unit_test(test_null_has_no_flow_rules),
	    cmocka_unit_test(test_no_such_port),
	};

	return cmocka_run_group_tests_name("ctl/flow_rules_dpdk", tests, group_setup,
					   group_teardown);
}
