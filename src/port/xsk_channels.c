/*
 * xsk_channels.c - the queues an AF_XDP socket can bind to, and the
 * ETHTOOL_GCHANNELS answer DPDK 22.11's af_xdp PMD gets while lunar creates
 * a multi-queue device (see xsk_channels.h): the only ioctl() this process
 * answers differently from the kernel.
 */
#include "port/xsk_channels.h"

#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/sockios.h>

static bool translate; /* set and cleared by the thread that creates devices */

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

bool xsk_channels_as_combined(struct ethtool_channels *ch)
{
	if (ch->max_combined || !ch->rx_count || !ch->tx_count)
		return false;
	ch->combined_count = min_u(ch->rx_count, ch->tx_count);
	ch->max_combined = min_u(ch->max_rx, ch->max_tx);
	return true;
}

void xsk_channels_translate(bool on)
{
	translate = on;
}

/*
 * glibc's ioctl() on Linux is the system call; so is this one, except for
 * the PMD's question while translate is on. The PMD also reads errno after
 * a successful call (a stale EOPNOTSUPP would make it one queue again), so
 * a rewritten answer clears it.
 */
int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	long rc;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	rc = syscall(SYS_ioctl, fd, request, arg);
	if (rc == 0 && translate && request == SIOCETHTOOL) {
		struct ifreq *ifr = arg;
		struct ethtool_channels *ch = (struct ethtool_channels *)ifr->ifr_data;

		if (ch->cmd == ETHTOOL_GCHANNELS && xsk_channels_as_combined(ch))
			errno = 0;
	}
	return (int)rc;
}

int xsk_channels_count(const char *ifname)
{
	struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
	struct ifreq ifr = {0};
	int fd, rc;

	if (strlen(ifname) >= sizeof(ifr.ifr_name))
		return -EINVAL;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&ch;
	rc = (int)syscall(SYS_ioctl, fd, SIOCETHTOOL, &ifr);
	rc = rc ? -errno : 0;
	close(fd);
	if (rc == -EOPNOTSUPP)
		return 1; /* no channels to report: one queue */
	if (rc)
		return rc;
	xsk_channels_as_combined(&ch);
	return ch.combined_count ? (int)ch.combined_count : 1;
}
