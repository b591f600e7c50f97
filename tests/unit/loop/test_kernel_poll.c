/*
 * test_kernel_poll.c - kernel fds in the run-to-completion loop
 * (loop/kernel_poll.c, LUNA §7.2): events from eventfds, pipes and socket
 * pairs reach their callbacks; a batch is bounded and nothing starves;
 * callbacks may delete fds, their own or one later in the same batch, and
 * a late event is never delivered; EPOLLRDHUP on a peer's close; errors
 * name what is wrong; the interval skips system calls but never after a
 * full batch; a TCP listener on 127.0.0.1 accepts and echoes in the loop.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "thread_state.h"

#include "loop/kernel_poll.h"

struct hit {
	int fd;
	uint32_t events;
	unsigned calls;
};

static void on_hit(int fd, uint32_t events, void *ctx)
{
	struct hit *h = ctx;

	h->fd = fd;
	h->events = events;
	h->calls++;
}

static struct lunar_kpoll *mk(unsigned batch)
{
	struct lunar_kpoll *kp = NULL;

	assert_int_equal(lunar_kpoll_create(batch, &kp), 0);
	assert_non_null(kp);
	return kp;
}

static int efd_ready(void)
{
	int fd = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

/* An eventfd's readiness reaches its callback, level-triggered, until read. */
static void test_eventfd_delivered(void **state)
{
	struct lunar_kpoll *kp = mk(8);
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct hit h = {0};
	uint64_t v = 1;

	(void)state;
	assert_int_equal(lunar_kpoll_add(kp, fd, EPOLLIN, on_hit, &h), 0);
	assert_int_equal(lunar_kpoll_count(kp), 1);
	assert_int_equal(lunar_kpoll_run(kp, 0), 0);
	assert_int_equal(write(fd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(lunar_kpoll_run(kp, 0), 1);
	assert_int_equal(h.fd, fd);
	assert_true(h.events & EPOLLIN);
	assert_int_equal(lunar_kpoll_run(kp, 0), 1); /* still readable */
	assert_int_equal(read(fd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(lunar_kpoll_run(kp, 0), 0);
	assert_int_equal(h.calls, 2);

	const struct lunar_kpoll_stats *st = lunar_kpoll_stats(kp);
	assert_int_equal(st->runs, 4);
	assert_int_equal(st->polls, 4);
	assert_int_equal(st->wakeups, 2);
	assert_int_equal(st->events, 2);
	assert_int_equal(st->full, 0);
	assert_int_equal(st->errors, 0);
	assert_int_equal(lunar_kpoll_del(kp, fd), 0);
	assert_int_equal(lunar_kpoll_count(kp), 0);
	lunar_kpoll_free(kp);
	close(fd);
}

/* A socket pair: EPOLLOUT at once, then mod to EPOLLIN, which fires on data. */
static void test_socketpair_mod(void **state)
{
	struct lunar_kpoll *kp = mk(8);
	struct hit h = {0};
	int sv[2];
	char c;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	assert_int_equal(lunar_kpoll_add(kp, sv[0], EPOLLOUT, on_hit, &h), 0);
	assert_int_equal(lunar_kpoll_run(kp, 0), 1);
	assert_int_equal(h.events, EPOLLOUT);
	assert_int_equal(lunar_kpoll_mod(kp, sv[0], EPOLLIN), 0);
	assert_int_equal(lunar_kpoll_run(kp, 0), 0);
	assert_int_equal(write(sv[1], "x", 1), 1);
	assert_int_equal(lunar_kpoll_run(kp, 0), 1);
	assert_int_equal(h.events, EPOLLIN);
	assert_int_equal(read(sv[0], &c, 1), 1);
	assert_int_equal(lunar_kpoll_run(kp, 0), 0);
	lunar_kpoll_free(kp); /* with sv[0] still registered: the fd stays ours */
	assert_int_equal(write(sv[1], "y", 1), 1);
	assert_int_equal(read(sv[0], &c, 1), 1);
	close(sv[0]);
	close(sv[1]);
}

/* A pipe: data, then the writer's close (EPOLLHUP). */
static void test_pipe(void **state)
{
	struct lunar_kpoll *kp = mk(8);
	struct hit h = {0};
	int p[2];
	char c;

	(void)state;
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	assert_int_equal(lunar_kpoll_add(kp, p[0], EPOLLIN, on_hit, &h), 0);
	assert_int_equal(write(p[1], "z", 1), 1);
	assert_int_equal(lunar_kpoll_run(kp, 0), 1);
	assert_int_equal(h.events, EPOLLIN);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[1]);
	assert_int_equal(lunar_kpoll_run(kp, 0), 1);
	assert_true(h.events & EPOLLHUP);
	assert_int_equal(lunar_kpoll_del(kp, p[0]), 0);
	close(p[0]);
	lunar_kpoll_free(kp);
}

#define NFDS  100
#define BATCH 16

/*
 * 100 ready fds, batch 16: every run serves exactly 16 and reports the
 * kernel had more; after 7 runs every fd has been served (the kernel
 * rotates level-triggered fds that stay ready), none twice before all once.
 */
static void test_bounded_batch(void **state)
{
	struct lunar_kpoll *kp = mk(BATCH);
	struct hit h[NFDS] = {0};
	int fds[NFDS];

	(void)state;
	for (int i = 0; i < NFDS; i++) {
		fds[i] = efd_ready();
		assert_int_equal(lunar_kpoll_add(kp, fds[i], EPOLLIN, on_hit, &h[i]), 0);
	}
	for (int r = 0; r < 7; r++)
		assert_int_equal(lunar_kpoll_run(kp, 0), BATCH);
	for (int i = 0; i < NFDS; i++) {
		assert_true(h[i].calls >= 1);
		assert_true(h[i].calls <= 2);
	}
	assert_int_equal(lunar_kpoll_stats(kp)->full, 7);
	assert_int_equal(lunar_kpoll_stats(kp)->events, 7 * BATCH);
	/* a smaller bound per call, and the batch as the ceiling */
	assert_int_equal(lunar_kpoll_run(kp, 4), 4);
	assert_int_equal(lunar_kpoll_stats(kp)->full, 8); /* 4 of 4 asked: the kernel had more */
	assert_int_equal(lunar_kpoll_run(kp, 1000), BATCH);
	assert_int_equal(lunar_kpoll_stats(kp)->full, 9);
	for (int i = 0; i < NFDS; i++) {
		assert_int_equal(lunar_kpoll_del(kp, fds[i]), 0);
		close(fds[i]);
	}
	assert_int_equal(lunar_kpoll_run(kp, 0), 0);
	lunar_kpoll_free(kp);
}

/* --- deleting from a callback --- */

struct pair {
	struct lunar_kpoll *kp;
	int fd[2];
	unsigned calls[2];
	int reused_fd; /* the number a new eventfd got after the close */
	struct hit reused;
};

static void del_self(int fd, uint32_t events, void *ctx)
{
	struct pair *p = ctx;

	(void)events;
	p->calls[0]++;
	assert_int_equal(lunar_kpoll_del(p->kp, fd), 0);
	assert_int_equal(lunar_kpoll_del(p->kp, fd), -ENOENT);
}

/*
 * Whichever of two ready fds fires first deletes and closes the other, and
 * registers a new eventfd (not ready) that usually gets the same number.
 * The other's event, already in the batch, must not be delivered: not to
 * the old callback, not to the new registration.
 */
static void del_other(int fd, uint32_t events, void *ctx)
{
	struct pair *p = ctx;
	int me = fd == p->fd[0] ? 0 : 1;
	int other = p->fd[1 - me];

	(void)events;
	p->calls[me]++;
	assert_int_equal(lunar_kpoll_del(p->kp, other), 0);
	close(other);
	p->reused_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_int_equal(lunar_kpoll_add(p->kp, p->reused_fd, EPOLLIN, on_hit, &p->reused), 0);
	p->fd[1 - me] = -1;
}

static void test_del_inside_callback(void **state)
{
	struct pair p = {.kp = mk(8)};

	(void)state;
	/* its own fd */
	p.fd[0] = efd_ready();
	assert_int_equal(lunar_kpoll_add(p.kp, p.fd[0], EPOLLIN, del_self, &p), 0);
	assert_int_equal(lunar_kpoll_run(p.kp, 0), 1);
	assert_int_equal(lunar_kpoll_run(p.kp, 0), 0);
	assert_int_equal(p.calls[0], 1);
	assert_int_equal(lunar_kpoll_count(p.kp), 0);
	close(p.fd[0]);

	/* another fd whose event is in the same batch */
	p = (struct pair){.kp = p.kp};
	p.fd[0] = efd_ready();
	p.fd[1] = efd_ready();
	assert_int_equal(lunar_kpoll_add(p.kp, p.fd[0], EPOLLIN, del_other, &p), 0);
	assert_int_equal(lunar_kpoll_add(p.kp, p.fd[1], EPOLLIN, del_other, &p), 0);
	assert_int_equal(lunar_kpoll_run(p.kp, 0), 1);
	assert_int_equal(p.calls[0] + p.calls[1], 1);
	assert_int_equal(lunar_kpoll_stats(p.kp)->stale, 1);
	assert_int_equal(p.reused.calls, 0);
	assert_int_equal(lunar_kpoll_count(p.kp), 2);
	/* the new registration works */
	uint64_t v = 1;
	assert_int_equal(write(p.reused_fd, &v, sizeof(v)), sizeof(v));
	for (int i = 0; i < 2; i++)
		if (p.fd[i] >= 0)
			assert_int_equal(lunar_kpoll_del(p.kp, p.fd[i]), 0);
	assert_int_equal(lunar_kpoll_run(p.kp, 0), 1);
	assert_int_equal(p.reused.calls, 1);
	assert_int_equal(p.reused.fd, p.reused_fd);
	for (int i = 0; i < 2; i++)
		if (p.fd[i] >= 0)
			close(p.fd[i]);
	assert_int_equal(lunar_kpoll_del(p.kp, p.reused_fd), 0);
	close(p.reused_fd);
	lunar_kpoll_free(p.kp);
}

struct reenter {
	struct lunar_kpoll *kp;
	int rc;
	bool free_it;
};

static void run_inside(int fd, uint32_t events, void *ctx)
{
	struct reenter *r = ctx;

	(void)fd;
	(void)events;
	r->rc = lunar_kpoll_run(r->kp, 0);
	if (r->free_it)
		lunar_kpoll_free(r->kp);
}

/* A run inside a callback is refused; a free inside one waits for the run's end. */
static void test_reentry_and_free_in_callback(void **state)
{
	struct reenter r = {.kp = mk(8)};
	int a = efd_ready(), b = efd_ready();

	(void)state;
	assert_int_equal(lunar_kpoll_add(r.kp, a, EPOLLIN, run_inside, &r), 0);
	assert_int_equal(lunar_kpoll_run(r.kp, 0), 1);
	assert_int_equal(r.rc, -EBUSY);
	assert_int_equal(lunar_kpoll_stats(r.kp)->runs, 1); /* the refused run is not one */
	assert_int_equal(lunar_kpoll_stats(r.kp)->polls, 1);
	assert_int_equal(lunar_kpoll_wait(r.kp, 0, 0), 1);
	assert_int_equal(r.rc, -EBUSY);
	/* two ready fds, the first callback frees: one callback, no use after free */
	assert_int_equal(lunar_kpoll_add(r.kp, b, EPOLLIN, run_inside, &r), 0);
	r.free_it = true;
	assert_int_equal(lunar_kpoll_run(r.kp, 0), 1);
	close(a);
	close(b);
}

/* Open descriptors of this process, the listing's own aside. */
static unsigned open_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;

	assert_non_null(dir);
	while ((e = readdir(dir)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(dir))
			n++;
	closedir(dir);
	return n;
}

/* Freeing closes the epoll descriptor, also a free asked for inside a callback. */
static void test_free_closes_epoll_fd(void **state)
{
	unsigned before = open_fds();
	struct reenter r = {.kp = mk(8), .free_it = true};
	int fd = efd_ready();

	(void)state;
	assert_int_equal(open_fds(), before + 2);
	lunar_kpoll_free(r.kp);
	assert_int_equal(open_fds(), before + 1);
	r.kp = mk(8);
	assert_int_equal(lunar_kpoll_add(r.kp, fd, EPOLLIN, run_inside, &r), 0);
	assert_int_equal(lunar_kpoll_run(r.kp, 0), 1); /* freed by the callback */
	assert_int_equal(open_fds(), before + 1);
	close(fd);
}

/* Leave freed heap memory full of 0xff: what an allocation does not initialise is not 0. */
static void dirty_heap(void)
{
	size_t n = 64 * 1024;
	unsigned char *p = malloc(n);

	assert_non_null(p);
	memset(p, 0xff, n);
	free(p);
}

/*
 * The table of registrations, indexed by fd: the number just past its end
 * (64, the size of the first table) is not registered, nor are the numbers
 * the table gains when it grows for a high fd (dup2 to 200), which works
 * like any other. The heap is dirtied first, so reading past the table or
 * an uninitialised slot would not find zeros.
 */
static void test_fd_table(void **state)
{
	struct lunar_kpoll *kp;
	struct hit lo = {0}, hi = {0};
	int fd = efd_ready(), high = 200;
	const int unused[] = {64, 65, 100, 199, 201, 255};

	(void)state;
	assert_true(fd < 64);
	dirty_heap();
	kp = mk(8);
	assert_int_equal(lunar_kpoll_add(kp, fd, EPOLLIN, on_hit, &lo), 0);
	assert_int_equal(lunar_kpoll_del(kp, 64), -ENOENT);
	assert_int_equal(lunar_kpoll_mod(kp, 64, EPOLLIN), -ENOENT);
	dirty_heap();
	assert_int_equal(fcntl(high, F_GETFD), -1); /* not open */
	assert_int_equal(dup2(fd, high), high);
	assert_int_equal(lunar_kpoll_add(kp, high, EPOLLIN, on_hit, &hi), 0);
	for (unsigned i = 0; i < sizeof(unused) / sizeof(unused[0]); i++) {
		assert_int_equal(lunar_kpoll_mod(kp, unused[i], EPOLLIN), -ENOENT);
		assert_int_equal(lunar_kpoll_del(kp, unused[i]), -ENOENT);
	}
	assert_int_equal(lunar_kpoll_count(kp), 2);
	assert_int_equal(lunar_kpoll_run(kp, 0), 2);
	assert_int_equal(lo.fd, fd);
	assert_int_equal(hi.fd, high);
	assert_int_equal(lunar_kpoll_stats(kp)->stale, 0);
	assert_int_equal(lunar_kpoll_del(kp, high), 0);
	assert_int_equal(lunar_kpoll_del(kp, fd), 0);
	close(high);
	close(fd);
	lunar_kpoll_free(kp);
}

/*
 * An add whose table cannot grow (the address space is capped just above
 * what the process uses) fails with -ENOMEM and leaves the fd unregistered
 * in the kernel too: once memory is back, the same fd can be added. Not
 * under a sanitizer, whose allocator needs address space of its own.
 */
static void test_add_out_of_memory(void **state)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	(void)state;
	print_message("sanitizer build: the address-space cap is not tried\n");
#else
	struct lunar_kpoll *kp = mk(8);
	struct rlimit nofile, as, cap;
	struct hit h = {0};
	unsigned long pages = 0;
	int fd = efd_ready(), high, rc;
	FILE *f;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &nofile), 0);
	if (nofile.rlim_max < 4096) {
		print_message("fewer than 4096 descriptors allowed: not tried\n");
		goto out;
	}
	high = nofile.rlim_max > (1u << 20) ? (1 << 20) - 1 : (int)nofile.rlim_max - 1;
	cap = nofile;
	cap.rlim_cur = (rlim_t)high + 1;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &cap), 0);
	assert_int_equal(dup2(fd, high), high);
	f = fopen("/proc/self/statm", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu", &pages), 1);
	fclose(f);
	assert_int_equal(getrlimit(RLIMIT_AS, &as), 0);
	cap = as;
	cap.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
	assert_int_equal(setrlimit(RLIMIT_AS, &cap), 0);
	rc = lunar_kpoll_add(kp, high, EPOLLIN, on_hit, &h);
	assert_int_equal(setrlimit(RLIMIT_AS, &as), 0);
	if (rc == 0) {
		print_message("the table grew within the cap: not tried\n");
		assert_int_equal(lunar_kpoll_del(kp, high), 0);
	} else {
		assert_int_equal(rc, -ENOMEM);
		assert_int_equal(lunar_kpoll_count(kp), 0);
		assert_int_equal(lunar_kpoll_add(kp, high, EPOLLIN, on_hit, &h), 0);
		assert_int_equal(lunar_kpoll_run(kp, 0), 1);
		assert_int_equal(h.fd, high);
		assert_int_equal(lunar_kpoll_del(kp, high), 0);
	}
	close(high);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &nofile), 0);
out:
	close(fd);
	lunar_kpoll_free(kp);
#endif
}

/* An epoll_wait() that fails (the fd is no epoll instance any more) returns and counts it. */
static void test_poll_error_counted(void **state)
{
	struct lunar_kpoll *kp = mk(8);
	int e = eventfd(0, EFD_CLOEXEC), epfd = lunar_kpoll_fd(kp);

	(void)state;
	assert_int_equal(dup2(e, epfd), epfd);
	close(e);
	assert_int_equal(lunar_kpoll_run(kp, 0), -EINVAL);
	assert_int_equal(lunar_kpoll_wait(kp, 0, 0), -EINVAL);
	assert_int_equal(lunar_kpoll_stats(kp)->errors, 2);
	assert_int_equal(lunar_kpoll_stats(kp)->polls, 2);
	lunar_kpoll_free(kp); /* closes the eventfd now at that number */
}

static void on_usr1(int sig)
{
	(void)sig;
}

struct killer {
	pthread_t target;
	int tid;
};

/* Signal the target once it blocks (or after 10 s whatever it does). */
static void *kill_when_blocked(void *arg)
{
	struct killer *k = arg;
	struct timespec ms = {0, 1000 * 1000};

	for (int i = 0; i < 10000 && !thread_blocked(k->tid); i++)
		nanosleep(&ms, NULL);
	pthread_kill(k->target, SIGUSR1);
	return NULL;
}

/* A signal that interrupts a blocking wait counts as no event, not as an error. */
static void test_wait_interrupted(void **state)
{
	struct lunar_kpoll *kp = mk(8);
	struct sigaction sa = {.sa_handler = on_usr1}, old;
	struct killer k = {.target = pthread_self(), .tid = (int)gettid()};
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct hit h = {0};
	pthread_t t;

	(void)state;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	assert_int_equal(lunar_kpoll_add(kp, fd, EPOLLIN, on_hit, &h), 0);
	assert_int_equal(pthread_create(&t, NULL, kill_when_blocked, &k), 0);
	assert_int_equal(lunar_kpoll_wait(kp, 0, 10000), 0);
	pthread_join(t, NULL);
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
	assert_int_equal(lunar_kpoll_stats(kp)->errors, 0);
	assert_int_equal(lunar_kpoll_stats(kp)->polls, 1);
	assert_int_equal(h.calls, 0);
	assert_int_equal(lunar_kpoll_del(kp, fd), 0);
	close(fd);
	lunar_kpoll_free(kp);
}

/* A new interval starts afresh: the run right after set_interval() polls. */
static void test_interval_restarts(void **state)
{
	struct lunar_kpoll *kp = mk(8);
	struct hit h = {0};
	int fd = efd_ready();

	(void)state;
	assert_int_equal(lunar_kpoll_add(kp, fd, EPOLLIN, on_hit, &h), 0);
	lunar_kpoll_set_interval(kp, 4);
	assert_int_equal(lunar_kpoll_run(kp, 0), 1);
	assert_int_equal(lunar_kpoll_run(kp, 0), 0); /* skipped */
	lunar_kpoll_set_interval(kp, 4);
	assert_int_equal(lunar_kpoll_run(kp, 0), 1);
	assert_int_equal(lunar_kpoll_stats(kp)->polls, 2);
	assert_int_equal(lunar_kpoll_stats(kp)->skipped, 1);
	assert_int_equal(lunar_kpoll_del(kp, fd), 0);
	close(fd);
	lunar_kpoll_free(kp);
}

/* A peer's close comes as EPOLLRDHUP (with EPOLLIN: the EOF is readable). */
static void test_rdhup(void **state)
{
	struct lunar_kpoll *kp = mk(8);
	struct hit h = {0};
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	assert_int_equal(lunar_kpoll_add(kp, sv[0], EPOLLIN | EPOLLRDHUP, on_hit, &h), 0);
	assert_int_equal(lunar_kpoll_run(kp, 0), 0);
	close(sv[1]);
	assert_int_equal(lunar_kpoll_run(kp, 0), 1);
	assert_true(h.events & EPOLLRDHUP);
	assert_true(h.events & EPOLLIN);
	assert_int_equal(lunar_kpoll_del(kp, sv[0]), 0);
	close(sv[0]);
	lunar_kpoll_free(kp);
}

/* Each mistake has its own errno. */
static void test_errors(void **state)
{
	struct lunar_kpoll *kp = NULL;
	struct hit h = {0};
	int fd, closed_fd, file;
	char path[] = "/tmp/lunar-kpoll-XXXXXX";

	(void)state;
	assert_int_equal(lunar_kpoll_create(0, &kp), -EINVAL);
	assert_int_equal(lunar_kpoll_create(LUNAR_KPOLL_MAX_BATCH + 1, &kp), -EINVAL);
	assert_null(kp);
	kp = mk(LUNAR_KPOLL_MAX_BATCH);
	file = mkstemp(path);
	assert_true(file >= 0);
	unlink(path);
	fd = eventfd(0, EFD_CLOEXEC);
	closed_fd = eventfd(0, EFD_CLOEXEC);
	close(closed_fd); /* nothing opens a descriptor until it is used below */

	assert_int_equal(lunar_kpoll_add(kp, -1, EPOLLIN, on_hit, &h), -EBADF);
	assert_int_equal(lunar_kpoll_add(kp, closed_fd, EPOLLIN, on_hit, &h), -EBADF);
	assert_int_equal(lunar_kpoll_add(kp, 1 << 30, EPOLLIN, on_hit, &h), -EBADF);
	assert_int_equal(lunar_kpoll_add(kp, file, EPOLLIN, on_hit, &h), -EPERM);
	assert_int_equal(lunar_kpoll_add(kp, lunar_kpoll_fd(kp), EPOLLIN, on_hit, &h), -EINVAL);
	assert_int_equal(lunar_kpoll_add(kp, fd, EPOLLIN, NULL, &h), -EINVAL);
	assert_int_equal(lunar_kpoll_add(kp, fd, EPOLLIN, on_hit, &h), 0);
	assert_int_equal(lunar_kpoll_add(kp, fd, EPOLLOUT, on_hit, &h), -EEXIST);
	assert_int_equal(lunar_kpoll_count(kp), 1);
	assert_int_equal(lunar_kpoll_mod(kp, file, EPOLLIN), -ENOENT);
	assert_int_equal(lunar_kpoll_mod(kp, -5, EPOLLIN), -ENOENT);
	assert_int_equal(lunar_kpoll_del(kp, file), -ENOENT);
	assert_int_equal(lunar_kpoll_del(kp, 1 << 30), -ENOENT);
	assert_int_equal(lunar_kpoll_stats(kp)->errors, 0);

	/* closed before del: del still forgets it; the number can be used again */
	close(fd);
	assert_int_equal(lunar_kpoll_mod(kp, fd, EPOLLIN), -EBADF);
	assert_int_equal(lunar_kpoll_del(kp, fd), 0);
	assert_int_equal(lunar_kpoll_count(kp), 0);
	/* closed without del, number reused: the kernel accepts it, the slot is replaced */
	fd = eventfd(0, EFD_CLOEXEC);
	assert_int_equal(lunar_kpoll_add(kp, fd, EPOLLIN, on_hit, &h), 0);
	close(fd);
	int again = eventfd(1, EFD_CLOEXEC);
	assert_int_equal(again, fd);
	assert_int_equal(lunar_kpoll_add(kp, again, EPOLLIN, on_hit, &h), 0);
	assert_int_equal(lunar_kpoll_count(kp), 1);
	assert_int_equal(lunar_kpoll_run(kp, 0), 1);
	assert_int_equal(h.fd, again);
	assert_int_equal(lunar_kpoll_del(kp, again), 0);
	close(again);
	close(file);
	lunar_kpoll_free(kp);
	lunar_kpoll_free(NULL);
}

/* Interval 4: one system call every 4th run; a full batch polls again at once. */
static void test_interval(void **state)
{
	struct lunar_kpoll *kp = mk(2);
	struct hit h[3] = {0};
	int fds[3];
	int fired[8];

	(void)state;
	fds[0] = efd_ready();
	assert_int_equal(lunar_kpoll_add(kp, fds[0], EPOLLIN, on_hit, &h[0]), 0);
	lunar_kpoll_set_interval(kp, 4);
	for (int i = 0; i < 8; i++)
		fired[i] = lunar_kpoll_run(kp, 0);
	assert_int_equal(fired[0], 1);
	assert_int_equal(fired[1] + fired[2] + fired[3], 0);
	assert_int_equal(fired[4], 1);
	assert_int_equal(fired[5] + fired[6] + fired[7], 0);
	assert_int_equal(lunar_kpoll_stats(kp)->polls, 2);
	assert_int_equal(lunar_kpoll_stats(kp)->skipped, 6);
	assert_int_equal(lunar_kpoll_stats(kp)->runs, 8);

	/* three ready, batch 2: every poll is full, so no run is skipped */
	for (int i = 1; i < 3; i++) {
		fds[i] = efd_ready();
		assert_int_equal(lunar_kpoll_add(kp, fds[i], EPOLLIN, on_hit, &h[i]), 0);
	}
	lunar_kpoll_set_interval(kp, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(lunar_kpoll_run(kp, 0), 2);
	assert_int_equal(lunar_kpoll_stats(kp)->skipped, 6);
	/* interval 0 is 1: every run */
	lunar_kpoll_set_interval(kp, 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(lunar_kpoll_del(kp, fds[i]), 0);
		close(fds[i]);
	}
	assert_int_equal(lunar_kpoll_run(kp, 0), 0);
	assert_int_equal(lunar_kpoll_run(kp, 0), 0);
	assert_int_equal(lunar_kpoll_stats(kp)->skipped, 6);
	lunar_kpoll_free(kp);
}

static void *write_later(void *arg)
{
	int fd = *(int *)arg;
	uint64_t v = 1;
	struct timespec ts = {0, 20 * 1000 * 1000};

	nanosleep(&ts, NULL);
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		abort();
	return NULL;
}

/* A worker with nothing to do blocks on lunar_kpoll_fd() or lunar_kpoll_wait(). */
static void test_blocking(void **state)
{
	struct lunar_kpoll *kp = mk(4);
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct pollfd pfd = {.fd = lunar_kpoll_fd(kp), .events = POLLIN};
	struct hit h = {0};
	pthread_t t;
	uint64_t v;

	(void)state;
	assert_int_equal(lunar_kpoll_add(kp, fd, EPOLLIN, on_hit, &h), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(lunar_kpoll_wait(kp, 0, 10), 0);
	assert_int_equal(pthread_create(&t, NULL, write_later, &fd), 0);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_int_equal(lunar_kpoll_run(kp, 0), 1);
	pthread_join(t, NULL);
	assert_int_equal(read(fd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(pthread_create(&t, NULL, write_later, &fd), 0);
	assert_int_equal(lunar_kpoll_wait(kp, 0, -1), 1);
	assert_int_equal(h.calls, 2);
	pthread_join(t, NULL);
	assert_int_equal(lunar_kpoll_del(kp, fd), 0);
	close(fd);
	lunar_kpoll_free(kp);
}

/* --- a TCP listener on 127.0.0.1, served in the loop --- */

struct server {
	struct lunar_kpoll *kp;
	int lfd;
	unsigned accepted, echoed_bytes, closed;
};

static void on_conn(int fd, uint32_t events, void *ctx)
{
	struct server *s = ctx;
	char buf[256];
	ssize_t n;

	if (events & EPOLLIN) {
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			assert_int_equal(write(fd, buf, (size_t)n), n);
			s->echoed_bytes += (unsigned)n;
		}
		if (n < 0 && errno == EAGAIN && !(events & (EPOLLRDHUP | EPOLLHUP)))
			return;
	}
	assert_int_equal(lunar_kpoll_del(s->kp, fd), 0);
	close(fd);
	s->closed++;
}

static void on_listen(int fd, uint32_t events, void *ctx)
{
	struct server *s = ctx;
	int c;

	assert_true(events & EPOLLIN);
	while ((c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		assert_int_equal(lunar_kpoll_add(s->kp, c, EPOLLIN | EPOLLRDHUP, on_conn, s), 0);
		s->accepted++;
	}
	assert_int_equal(errno, EAGAIN);
}

/* Run the loop until @cond or 10 s (a hang fails instead of blocking the suite). */
#define LOOP_UNTIL(kp, cond)                                                                       \
	do {                                                                                       \
		for (int i_ = 0; i_ < 10000 && !(cond); i_++)                                      \
			assert_true(lunar_kpoll_wait((kp), 0, 1) >= 0);                            \
		assert_true(cond);                                                                 \
	} while (0)

static void test_tcp_listener(void **state)
{
	struct server s = {.kp = mk(16)};
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	char buf[16];
	int c;

	(void)state;
	s.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(s.lfd >= 0);
	assert_int_equal(bind(s.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s.lfd, 16), 0);
	assert_int_equal(getsockname(s.lfd, (struct sockaddr *)&a, &alen), 0);
	assert_int_equal(lunar_kpoll_add(s.kp, s.lfd, EPOLLIN, on_listen, &s), 0);

	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof(a)), 0); /* loopback: at once */
	LOOP_UNTIL(s.kp, s.accepted == 1);
	assert_int_equal(write(c, "hello", 5), 5);
	LOOP_UNTIL(s.kp, s.echoed_bytes == 5);
	assert_int_equal(read(c, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	close(c);
	LOOP_UNTIL(s.kp, s.closed == 1);
	assert_int_equal(lunar_kpoll_count(s.kp), 1);
	assert_int_equal(lunar_kpoll_del(s.kp, s.lfd), 0);
	close(s.lfd);
	assert_int_equal(lunar_kpoll_stats(s.kp)->errors, 0);
	lunar_kpoll_free(s.kp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_eventfd_delivered),
	    cmocka_unit_test(test_socketpair_mod),
	    cmocka_unit_test(test_pipe),
	    cmocka_unit_test(test_bounded_batch),
	    cmocka_unit_test(test_del_inside_callback),
	    cmocka_unit_test(test_reentry_and_free_in_callback),
	    cmocka_unit_test(test_rdhup),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_interval),
	    cmocka_unit_test(test_blocking),
	    cmocka_unit_test(test_tcp_listener),
	    cmocka_unit_test(test_free_closes_epoll_fd),
	    cmocka_unit_test(test_fd_table),
	    cmocka_unit_test(test_add_out_of_memory),
	    cmocka_unit_test(test_poll_error_counted),
	    cmocka_unit_test(test_wait_interrupted),
	    cmocka_unit_test(test_interval_restarts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
