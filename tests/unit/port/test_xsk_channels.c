/*
 * test_xsk_channels.c - the queue count an AF_XDP socket can bind to
 * (port/xsk_channels.c): an ETHTOOL_GCHANNELS answer with separate rx and
 * tx channels (a veth's) becomes min(rx, tx) combined channels, any other
 * answer is left as the device gave it; the process's ioctl() passes every
 * other request through unchanged, translation on or off.
 */
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "port/xsk_channels.h"

static struct ethtool_channels channels(unsigned rx, unsigned tx, unsigned max_rx, unsigned max_tx,
					unsigned combined, unsigned max_combined)
{
	return (struct ethtool_channels){.cmd = ETHTOOL_GCHANNELS,
					 .rx_count = rx,
					 .tx_count = tx,
					 .max_rx = max_rx,
					 .max_tx = max_tx,
					 .combined_count = combined,
					 .max_combined = max_combined};
}

/*
 * Separate rx and tx channels become min(rx, tx) combined ones: xsk_bind()
 * wants a queue id below both counts. A veth made with numrxqueues 2
 * numtxqueues 2 has two queue pairs; uneven counts take the smaller.
 */
static void test_rx_tx_become_combined(void **state)
{
	static const struct {
		unsigned rx, tx, max_rx, max_tx, combined, max_combined;
	} cases[] = {
	    {2, 2, 2, 2, 2, 2},
	    {4, 2, 8, 4, 2, 4},
	    {1, 3, 1, 3, 1, 1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ethtool_channels ch =
		    channels(cases[i].rx, cases[i].tx, cases[i].max_rx, cases[i].max_tx, 0, 0);

		assert_true(xsk_channels_as_combined(&ch));
		assert_int_equal(ch.combined_count, cases[i].combined);
		assert_int_equal(ch.max_combined, cases[i].max_combined);
		assert_int_equal(ch.rx_count, cases[i].rx); /* the rest as the device said */
		assert_int_equal(ch.tx_count, cases[i].tx);
	}
}

/* A NIC with combined channels, and devices with no rx or no tx channels, keep their answer. */
static void test_other_answers_untouched(void **state)
{
	struct ethtool_channels nic = channels(0, 0, 0, 0, 4, 8), before = nic;
	struct ethtool_channels none = channels(0, 0, 0, 0, 0, 0);
	struct ethtool_channels rx_only = channels(2, 0, 2, 0, 0, 0);

	(void)state;
	assert_false(xsk_channels_as_combined(&nic));
	assert_memory_equal(&nic, &before, sizeof(nic));
	assert_false(xsk_channels_as_combined(&none));
	assert_int_equal(none.combined_count, 0);
	assert_false(xsk_channels_as_combined(&rx_only));
	assert_int_equal(rx_only.max_combined, 0);
}

/* The loopback reports no channels: one queue. A missing interface is an error. */
static void test_count(void **state)
{
	(void)state;
	assert_int_equal(xsk_channels_count("lo"), 1);
	assert_true(xsk_channels_count("no-such-if0") < 0);
	assert_int_equal(xsk_channels_count("a-name-longer-than-ifnamsiz"), -EINVAL);
}

/* Every other request reaches the kernel with its argument, on and off. */
static void test_ioctl_passes_through(void **state)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	(void)state;
	assert_true(fd >= 0);
	for (int on = 0; on < 2; on++) {
		struct ifreq ifr = {0};

		xsk_channels_translate(on);
		strcpy(ifr.ifr_name, "lo");
		assert_int_equal(ioctl(fd, SIOCGIFINDEX, &ifr), 0);
		assert_int_equal(ifr.ifr_ifindex, (int)if_nametoindex("lo"));
		strcpy(ifr.ifr_name, "no-such-if0");
		errno = 0;
		assert_int_equal(ioctl(fd, SIOCGIFINDEX, &ifr), -1);
		assert_int_equal(errno, ENODEV);
	}
	xsk_channels_translate(false);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rx_tx_become_combined),
	    cmocka_unit_test(test_other_answers_untouched),
	    cmocka_unit_test(test_count),
	    cmocka_unit_test(test_ioctl_passes_through),
	};

	return cmocka_run_group_tests_name("port/xsk_channels", tests, NULL, NULL);
}
