/*
 * test_xsk_channels.c - the queue count an AF_XDP socket can bind to
 * (port/xsk_channels.c): an ETHTOOL_GCHANNELS answer with separate rx and
 * tx channels (a veth's) becomes min(rx, tx) combined channels, any other
 * answer is left as the device gave it; the process's ioctl() passes every
 * other request through unchanged, translation on or off.
 */
#include <dlfcn.h>
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/sockios.h>

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
 * A device the kernel does not have: SIOCETHTOOL requests for FAKE_IF are
 * answered here, from fake_answer, as a driver's get_channels would fill
 * them (the kernel's only ETHTOOL_GCHANNELS answers on a test machine are
 * errors). Any other ethtool command gets fake_other, word by word. The
 * test executable's syscall() comes first in symbol lookup, so the port
 * library's calls reach it; everything else goes to libc's.
 */
#define FAKE_IF "fakeveth0"
static struct ethtool_channels fake_answer;
static uint32_t fake_other[9];

long syscall(long nr, ...)
{
	static long (*next)(long, ...);
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_ioctl && (unsigned long)a[1] == SIOCETHTOOL &&
	    !strcmp(((struct ifreq *)a[2])->ifr_name, FAKE_IF)) {
		void *data = ((struct ifreq *)a[2])->ifr_data;

		if (*(uint32_t *)data == ETHTOOL_GCHANNELS)
			memcpy(data, &fake_answer, sizeof(fake_answer));
		else
			memcpy((uint32_t *)data + 1, fake_other + 1, sizeof(fake_other) - 4);
		return 0; /* errno untouched, as the kernel leaves it on success */
	}
	if (!next)
		next = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return next(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Ask for FAKE_IF's channels through the process's ioctl(), as the PMD does. */
static int ask_channels(struct ethtool_channels *ch)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int rc;

	assert_true(fd >= 0);
	strcpy(ifr.ifr_name, FAKE_IF);
	ifr.ifr_data = (void *)ch;
	rc = ioctl(fd, SIOCETHTOOL, &ifr);
	close(fd);
	return rc;
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

/* An answer with combined channels is left alone even if it lists rx and tx ones too. */
static void test_combined_answer_with_rx_tx_untouched(void **state)
{
	struct ethtool_channels ch = channels(1, 1, 2, 2, 4, 8), before = ch;

	(void)state;
	assert_false(xsk_channels_as_combined(&ch));
	assert_memory_equal(&ch, &before, sizeof(ch));
}

/* A veth-like device (rx and tx channels) counts min(rx, tx); one reporting none counts 1. */
static void test_count_from_answer(void **state)
{
	(void)state;
	fake_answer = channels(3, 2, 4, 4, 0, 0);
	assert_int_equal(xsk_channels_count(FAKE_IF), 2);
	fake_answer = channels(0, 0, 0, 0, 0, 0);
	assert_int_equal(xsk_channels_count(FAKE_IF), 1);
	fake_answer = channels(0, 0, 0, 0, 6, 8);
	assert_int_equal(xsk_channels_count(FAKE_IF), 6);
}

/* A 16-character name does not fit IFNAMSIZ: refused, not truncated and asked for. */
static void test_count_name_limit(void **state)
{
	(void)state;
	assert_int_equal(strlen("sixteen-chars-if"), 16);
	assert_int_equal(xsk_channels_count("sixteen-chars-if"), -EINVAL);
}

/*
 * ioctl() rewrites an ETHTOOL_GCHANNELS answer only while translation is
 * on, and then clears a stale errno the PMD would read; other ethtool
 * commands are never rewritten.
 */
static void test_ioctl_translates_only_when_on(void **state)
{
	struct ethtool_channels ch;
	uint32_t other[9];

	(void)state;
	fake_answer = channels(2, 2, 2, 2, 0, 0);
	xsk_channels_translate(false);
	ch = channels(0, 0, 0, 0, 0, 0);
	assert_int_equal(ask_channels(&ch), 0);
	assert_memory_equal(&ch, &fake_answer, sizeof(ch));

	xsk_channels_translate(true);
	ch = channels(0, 0, 0, 0, 0, 0);
	errno = EOPNOTSUPP; /* left by an earlier call */
	assert_int_equal(ask_channels(&ch), 0);
	assert_int_equal(errno, 0);
	assert_int_equal(ch.combined_count, 2);
	assert_int_equal(ch.max_combined, 2);

	/* ETHTOOL_GRINGPARAM, with words that would read as rx and tx channels. */
	for (unsigned i = 1; i < 9; i++)
		fake_other[i] = i == 4 ? 0 : 100 + i;
	memset(other, 0, sizeof(other));
	other[0] = ETHTOOL_GRINGPARAM;
	assert_int_equal(ask_channels((struct ethtool_channels *)other), 0);
	assert_int_equal(other[0], ETHTOOL_GRINGPARAM);
	assert_memory_equal(other + 1, fake_other + 1, sizeof(other) - 4);
	xsk_channels_translate(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rx_tx_become_combined),
	    cmocka_unit_test(test_other_answers_untouched),
	    cmocka_unit_test(test_count),
	    cmocka_unit_test(test_ioctl_passes_through),
	    cmocka_unit_test(test_combined_answer_with_rx_tx_untouched),
	    cmocka_unit_test(test_count_from_answer),
	    cmocka_unit_test(test_count_name_limit),
	    cmocka_unit_test(test_ioctl_translates_only_when_on),
	};

	return cmocka_run_group_tests_name("port/xsk_channels", tests, NULL, NULL);
}
