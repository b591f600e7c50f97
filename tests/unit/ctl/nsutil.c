/* nsutil.c - netns and shell helpers for the root-only ctl tests (nsutil.h). */
#include "nsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* fd of the namespace we started in; opened on the first ns_enter(). */
static int home_fd = -1;

void ns_require_root(const char *test)
{
	if (geteuid() != 0) {
		fprintf(stderr, "%s: needs root (network namespaces, XDP); skipped\n", test);
		exit(NS_SKIP);
	}
}

int ns_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

void ns_name(char *buf, size_t len, const char *prefix)
{
	snprintf(buf, len, "%s-%d", prefix, (int)getpid());
}

int ns_enter(const char *name)
{
	char path[256];
	int fd, ret = 0;

	if (home_fd < 0) {
		home_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (home_fd < 0)
			return -errno;
	}
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

void ns_leave(void)
{
	if (home_fd >= 0 && setns(home_fd, CLONE_NEWNET) < 0)
		perror("setns(home)");
}

void ns_delete(const char *name)
{
	/*
	 * Kill anything a test left inside (never ourselves, should we still
	 * be in there), then the namespace itself.
	 */
	ns_sh("ip netns pids %s 2>/dev/null | grep -vx %d | xargs -r kill "
	      "2>/dev/null; ip netns del %s 2>/dev/null",
	      name, (int)getpid(), name);
}
