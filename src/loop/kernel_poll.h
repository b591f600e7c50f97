/*
 * kernel_poll.h - the kernel's sockets in lunar's run-to-completion loop
 * (LUNA §7.2). An application that talks to some peers through lunar and
 * to others through the kernel (or waits on eventfds, timerfds, pipes)
 * registers those file descriptors here with a callback. Each loop
 * iteration, after lunar's own packets, the worker calls lunar_kpoll_run():
 * one non-blocking epoll_wait() with a bounded batch, then the callbacks.
 * The bound keeps a flood on the kernel side from starving lunar's packets;
 * level-triggered fds left ready are served first in the next batch (the
 * kernel rotates its ready list), so no kernel fd starves either.
 *
 * Rate limit (lunar_kpoll_set_interval): an epoll_wait() is a system call,
 * about 0.3 µs even when nothing is ready, paid every iteration. With an
 * interval of N only every N-th run makes the call; the others cost a
 * decrement. The price is latency on the kernel side: an event waits up to
 * N iterations (N x the iteration time, which grows with load) before its
 * callback runs. A poll that filled the batch means the kernel had more,
 * so the next run polls again whatever the interval: the limit only saves
 * calls that would have found little, never throughput.
 *
 * Ownership: the application owns its fds. Delete a registration before
 * closing its fd. Deleting after close is tolerated (the kernel drops the
 * registration when the file closes) unless the file lives on in another
 * descriptor (dup, fork): then the kernel keeps reporting it. Such events,
 * and events for an fd deleted earlier in the same batch, find no
 * registration and are counted as stale, never delivered.
 *
 * One thread: a lunar_kpoll belongs to the worker that runs it. Callbacks
 * may add, modify and delete any fd (their own or one whose event is later
 * in the same batch), and may even free a lunar_kpoll they created (not
 * the one lunar_env_kpoll() gives a worker: that one is the worker's, and
 * lunar_env_close() frees it).
 */
#ifndef LUNAR_LOOP_KERNEL_POLL_H
#define LUNAR_LOOP_KERNEL_POLL_H

#include <stdint.h>
#include <sys/epoll.h>

struct lunar_kpoll;

/**
 * An fd is ready. @events: what epoll reported (EPOLLIN, EPOLLOUT,
 * EPOLLRDHUP, EPOLLHUP, EPOLLERR ...). @ctx: as registered.
 */
typedef void (*lunar_kpoll_fn)(int fd, uint32_t events, void *ctx);

/** Largest batch (events per epoll_wait). */
#define LUNAR_KPOLL_MAX_BATCH 4096

struct lunar_kpoll_stats {
	uint64_t runs;	  /* lunar_kpoll_run() calls */
	uint64_t skipped; /* runs that made no system call (interval) */
	uint64_t polls;	  /* epoll_wait() calls */
	uint64_t wakeups; /* polls that returned at least one event */
	uint64_t events;  /* callbacks called */
	uint64_t full;	  /* polls that filled the batch: the kernel side had more */
	uint64_t stale;	  /* events with no registration (deleted in the batch, or closed) */
	uint64_t errors;  /* epoll_wait() failures, EINTR aside */
};

/**
 * Create an epoll instance that returns at most @batch events per poll.
 * @return 0, -EINVAL (@batch 0 or above LUNAR_KPOLL_MAX_BATCH), -ENOMEM,
 *         or the error of epoll_create1() (-EMFILE: out of descriptors).
 */
int lunar_kpoll_create(unsigned batch, struct lunar_kpoll **out);
/**
 * Close the epoll instance and forget every registration (the fds stay
 * open: they are the application's). Inside a callback, the free happens
 * when the run returns.
 */
void lunar_kpoll_free(struct lunar_kpoll *kp);

/**
 * Call @fn(fd, events, ctx) when @fd is ready for @events (EPOLLIN,
 * EPOLLOUT, EPOLLRDHUP, EPOLLPRI; EPOLLET and EPOLLONESHOT as in epoll(7);
 * EPOLLERR and EPOLLHUP are always reported).
 * @return 0, or -EBADF (@fd is not an open descriptor), -EEXIST (@fd is
 *         already registered), -EPERM (@fd cannot be polled: a regular file
 *         or a directory), -EINVAL (@fd is this epoll instance, or @events
 *         makes no sense to epoll), -ENOMEM, -ENOSPC (the user's epoll
 *         watch limit, /proc/sys/fs/epoll/max_user_watches).
 */
int lunar_kpoll_add(struct lunar_kpoll *kp, int fd, uint32_t events, lunar_kpoll_fn fn, void *ctx);
/**
 * Change the events @fd is watched for (callback and context stay).
 * @return 0, -ENOENT (@fd is not registered here), -EBADF (@fd was closed),
 *         or -EINVAL as for add.
 */
int lunar_kpoll_mod(struct lunar_kpoll *kp, int fd, uint32_t events);
/**
 * Stop watching @fd. No callback for @fd runs after this returns, even for
 * an event already fetched in the current batch.
 * @return 0, or -ENOENT (@fd is not registered here).
 */
int lunar_kpoll_del(struct lunar_kpoll *kp, int fd);

/**
 * One non-blocking epoll_wait() of at most @max_events (0, or more than the
 * batch: the batch), then the callbacks. Call once per loop iteration.
 * @return callbacks called, or -EBUSY (called from a callback), or the
 *         error of epoll_wait() (counted). EINTR counts as no event.
 */
int lunar_kpoll_run(struct lunar_kpoll *kp, unsigned max_events);
/**
 * The same, blocking up to @timeout_ms (-1: until an event) when nothing is
 * ready; the interval does not apply. For a worker with nothing else to do.
 */
int lunar_kpoll_wait(struct lunar_kpoll *kp, unsigned max_events, int timeout_ms);
/**
 * Make the system call only every @every-th lunar_kpoll_run() (0 or 1:
 * every run), except right after a full batch. See the trade-off above.
 */
void lunar_kpoll_set_interval(struct lunar_kpoll *kp, unsigned every);
/**
 * The epoll descriptor: readable when a registered fd is ready, so a worker
 * can block on it in its own poll()/epoll_wait() (then call lunar_kpoll_run).
 */
int lunar_kpoll_fd(const struct lunar_kpoll *kp);
/** Registered fds. */
unsigned lunar_kpoll_count(const struct lunar_kpoll *kp);
const struct lunar_kpoll_stats *lunar_kpoll_stats(const struct lunar_kpoll *kp);

#endif
