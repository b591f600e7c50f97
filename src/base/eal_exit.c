/*
 * eal_exit.c - lunar_eal_cleanup(): quiesce the EAL's interrupt thread,
 * then clean up (see eal_exit.h for the race).
 *
 * The interrupt thread handles events in order: a callback registered on
 * an eventfd and fired once runs only after the thread has rebuilt its set
 * for every earlier registration change, so when it has run the thread is
 * back in epoll_wait() with nothing pending. The callback stays registered
 * until exit: unregistering it would wake the thread once more.
 */
/* rte_intr_instance_alloc() and its setters are still experimental in DPDK 22.11. */
#define ALLOW_EXPERIMENTAL_API
#include "base/eal_exit.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_interrupts.h>

#define QUIESCE_WAIT_US 1000000u
#define QUIESCE_STEP_US 200u

static struct rte_intr_handle *quiesce_handle; /* kept until exit, reachable */
static int quiesce_fd = -1;
static atomic_bool quiesce_seen;

static void quiesce_cb(void *arg)
{
	uint64_t v;

	(void)arg;
	(void)!read(quiesce_fd, &v, sizeof(v)); /* drain it; the flag below is what matters */
	atomic_store(&quiesce_seen, true);
}

static void quiesce_intr_thread(void)
{
	uint64_t one = 1;
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	if (fd < 0)
		return;
	quiesce_fd = fd;
	quiesce_handle = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	if (!quiesce_handle || rte_intr_fd_set(quiesce_handle, fd) ||
	    rte_intr_type_set(quiesce_handle, RTE_INTR_HANDLE_EXT) ||
	    rte_intr_callback_register(quiesce_handle, quiesce_cb, NULL)) {
		/* never registered: the thread never saw it */
		rte_intr_instance_free(quiesce_handle);
		quiesce_handle = NULL;
		quiesce_fd = -1;
		close(fd);
		return; /* no interrupt thread to wait for, or no way to: clean up as before */
	}
	if (write(fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		return;
	for (unsigned waited = 0; !atomic_load(&quiesce_seen) && waited < QUIESCE_WAIT_US;
	     waited += QUIESCE_STEP_US)
		usleep(QUIESCE_STEP_US);
	/* The callback has returned or is returning; the thread's own bookkeeping after it is
	 * brief. */
	usleep(QUIESCE_STEP_US);
}

void lunar_eal_cleanup(void)
{
	quiesce_intr_thread();
	rte_eal_cleanup();
}
