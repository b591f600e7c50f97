/*
 * test_dispatch.c - dispatch mode's channels (loop/dispatch.c, LUNA §5.2):
 * messages cross both ways intact and in order (a million each way between
 * two threads, sequence-checked); an idle application thread really sleeps
 * (its CPU time stays small) and wakes on the next message, never missing
 * one; a full ring refuses and counts; a shutdown wakes the sleeper; the
 * dispatcher shares its budget fairly; an application thread on the stack's
 * CPU does not spin before it sleeps, and is woken by the dispatcher's next
 * poll, which yields to it, not by each message; teardown gives every queued message
 * (and its Zbuf buffer) to a drain callback. No EAL: the rings live in
 * ordinary memory, and Zbuf runs on its mmap backend.
 *
 * Nothing here asserts on speed. The idle test bounds the CPU time a
 * sleeping thread may use (50 ms in 200 ms), which a spinning thread would
 * exceed by far on any machine, however loaded.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "thread_state.h"

#include "loop/dispatch.h"
#include "mem/zbuf.h"

enum { OP_DATA = 1, OP_STOP = 2 };

static struct lunar_chan *mk(unsigned size, unsigned spin_ns)
{
	struct lunar_chan_config cfg = {.size = size, .spin_ns = spin_ns};
	struct lunar_chan *ch = NULL;

	assert_int_equal(lunar_chan_create(&cfg, &ch), 0);
	assert_non_null(ch);
	return ch;
}

static struct lunar_chan_stats stats(const struct lunar_chan *ch)
{
	struct lunar_chan_stats s;

	lunar_chan_stats(ch, &s);
	return s;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait (up to 10 s) until the application has gone to sleep @n times. */
static void await_sleeps(const struct lunar_chan *ch, uint64_t n)
{
	uint64_t end = mono_ms() + 10000;

	while (stats(ch).sleeps < n) {
		assert_true(mono_ms() < end);
		sleep_ms(1);
	}
}

static void test_create(void **state)
{
	struct lunar_chan_config big = {.size = LUNAR_CHAN_MAX_SIZE + 1};
	struct lunar_chan *ch = NULL;
	struct lunar_dispatch *d = NULL;

	(void)state;
	assert_int_equal(lunar_chan_create(&big, &ch), -EINVAL);
	assert_null(ch);
	assert_int_equal(lunar_chan_create(NULL, &ch), 0);
	assert_int_equal(lunar_chan_size(ch), LUNAR_CHAN_DEFAULT_SIZE);
	assert_true(lunar_chan_app_fd(ch) >= 0);
	/* the default config spins before it sleeps (the stack's CPU is not known yet) */
	struct lunar_msg out;
	assert_int_equal(lunar_chan_app_wait(ch, &out, 1, 1), 0);
	assert_int_equal(stats(ch).spins, 1);
	assert_int_equal(lunar_chan_free(ch, NULL, NULL), 0);
	ch = mk(5, 0); /* any size, not only powers of two */
	assert_int_equal(lunar_chan_size(ch), 5);
	lunar_chan_free(ch, NULL, NULL);
	lunar_chan_free(NULL, NULL, NULL);
	assert_int_equal(lunar_dispatch_create(0, NULL, &d), -EINVAL);
	assert_int_equal(lunar_dispatch_create(1, &big, &d), -EINVAL);
	assert_null(d);
	assert_int_equal(lunar_dispatch_create(3, NULL, &d), 0);
	assert_int_equal(lunar_dispatch_count(d), 3);
	assert_non_null(lunar_dispatch_chan(d, 2));
	assert_null(lunar_dispatch_chan(d, 3));
	assert_int_equal(lunar_dispatch_free(d, NULL, NULL), 0);
}

/* Every field crosses both ways unchanged; counters count. */
static void test_both_ways(void **state)
{
	struct lunar_chan *ch = mk(8, 0);
	struct lunar_msg m = {
	    .op = 7, .len = 1234, .conn = 0x1122334455667788ull, .buf = (void *)&m, .arg = 42};
	struct lunar_msg out[4];
	struct lunar_chan_stats s;

	(void)state;
	assert_int_equal(lunar_chan_app_recv(ch, out, 4), 0);
	assert_int_equal(lunar_chan_stack_send(ch, &m), 0);
	assert_int_equal(lunar_chan_app_recv(ch, out, 4), 1);
	assert_memory_equal(&out[0], &m, sizeof(m));
	m.op = 8;
	assert_int_equal(lunar_chan_app_send(ch, &m), 0);
	assert_int_equal(lunar_chan_stack_recv(ch, out, 4), 1);
	assert_memory_equal(&out[0], &m, sizeof(m));
	/* more one way than the other: each counter counts its own direction */
	assert_int_equal(lunar_chan_stack_send(ch, &m), 0);
	assert_int_equal(lunar_chan_stack_send(ch, &m), 0);
	assert_int_equal(lunar_chan_app_recv(ch, out, 4), 2);
	s = stats(ch);
	assert_int_equal(s.to_app, 3);
	assert_int_equal(s.from_stack, 3);
	assert_int_equal(s.to_stack, 1);
	assert_int_equal(s.from_app, 1);
	assert_int_equal(s.wakeups, 0); /* nobody slept */
	assert_int_equal(s.sleeps, 0);
	assert_int_equal(lunar_chan_free(ch, NULL, NULL), 0);
}

/* A full ring refuses (-ENOBUFS, counted) and takes again once drained. */
static void test_full_backpressure(void **state)
{
	struct lunar_chan *ch = mk(8, 0);
	struct lunar_msg m[8] = {0}, out[8];
	struct lunar_chan_stats s;

	(void)state;
	for (unsigned i = 0; i < 8; i++) {
		m[0].arg = i;
		assert_int_equal(lunar_chan_stack_send(ch, &m[0]), 0);
		assert_int_equal(lunar_chan_app_send(ch, &m[0]), 0);
	}
	assert_int_equal(lunar_chan_stack_send(ch, &m[0]), -ENOBUFS);
	assert_int_equal(lunar_chan_app_send(ch, &m[0]), -ENOBUFS);
	assert_int_equal(lunar_chan_stack_send_burst(ch, m, 4), 0);
	s = stats(ch);
	assert_int_equal(s.app_full, 5);
	assert_int_equal(s.stack_full, 1);
	assert_int_equal(s.to_app, 8);
	assert_int_equal(s.to_stack, 8);
	/* room for 3: a burst of 4 takes 3, in order, and 1 is refused */
	assert_int_equal(lunar_chan_app_recv(ch, out, 3), 3);
	for (unsigned i = 0; i < 4; i++)
		m[i].arg = 100 + i;
	assert_int_equal(lunar_chan_stack_send_burst(ch, m, 4), 3);
	assert_int_equal(stats(ch).app_full, 6);
	assert_int_equal(lunar_chan_app_recv(ch, out, 8), 8);
	assert_int_equal(out[4].arg, 7);
	assert_int_equal(out[5].arg, 100);
	assert_int_equal(out[7].arg, 102);
	assert_int_equal(lunar_chan_stack_recv(ch, out, 8), 8);
	assert_int_equal(lunar_chan_app_send(ch, &m[0]), 0);
	assert_int_equal(lunar_chan_free(ch, NULL, NULL), 1);
}

/* --- a million messages each way between two threads --- */

#define PINGPONG_N 1000000u
#define WINDOW	   256

struct echo_arg {
	struct lunar_chan *ch;
	uint64_t got, bad;
};

/* The application: echo each message back, checking it is the next in sequence. */
static void *echo_app(void *arg)
{
	struct echo_arg *a = arg;
	struct lunar_msg in[32];

	for (;;) {
		int n = lunar_chan_app_wait(a->ch, in, 32, -1);

		if (n < 0)
			return NULL; /* shut down */
		for (int i = 0; i < n; i++) {
			if (in[i].op != OP_DATA || in[i].arg != a->got || in[i].conn != ~a->got)
				a->bad++;
			a->got++;
			in[i].conn = in[i].arg * 3;
			while (lunar_chan_app_send(a->ch, &in[i]) == -ENOBUFS)
				;
		}
	}
}

static void test_pingpong(void **state)
{
	struct echo_arg a = {.ch = mk(WINDOW, LUNAR_CHAN_DEFAULT_SPIN_NS)};
	struct lunar_msg out[32];
	uint64_t sent = 0, back = 0, bad = 0;
	struct lunar_chan_stats s;
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, echo_app, &a), 0);
	/* the stack core: keep up to WINDOW in flight, never block */
	while (back < PINGPONG_N) {
		while (sent < PINGPONG_N && sent - back < WINDOW) {
			struct lunar_msg m = {.op = OP_DATA, .conn = ~sent, .arg = sent};

			assert_int_equal(lunar_chan_stack_send(a.ch, &m), 0);
			sent++;
		}
		unsigned n = lunar_chan_stack_recv(a.ch, out, 32);

		for (unsigned i = 0; i < n; i++, back++)
			if (out[i].arg != back || out[i].conn != back * 3)
				bad++;
		if (n == 0 && sent - back == WINDOW)
			sched_yield(); /* a real stack core would not; the test may share a CPU */
	}
	lunar_chan_shutdown(a.ch);
	pthread_join(t, NULL);
	assert_int_equal(bad, 0);
	assert_int_equal(a.bad, 0);
	assert_int_equal(a.got, PINGPONG_N);
	s = stats(a.ch);
	assert_int_equal(s.to_app, PINGPONG_N);
	assert_int_equal(s.from_stack, PINGPONG_N);
	assert_int_equal(s.to_stack, PINGPONG_N);
	assert_int_equal(s.from_app, PINGPONG_N);
	assert_int_equal(s.app_full, 0); /* the window is the ring's size */
	assert_true(s.wakeups <= s.sleeps);
	print_message("pingpong: %u each way, %llu sleeps, %llu wakeups, %llu spurious\n",
		      PINGPONG_N, (unsigned long long)s.sleeps, (unsigned long long)s.wakeups,
		      (unsigned long long)s.spurious);
	assert_int_equal(lunar_chan_free(a.ch, NULL, NULL), 0);
}

/* --- sleeping --- */

struct idle_arg {
	struct lunar_chan *ch;
	int rc;
	struct lunar_msg m;
	uint64_t cpu_ns;
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *idle_app(void *arg)
{
	struct idle_arg *a = arg;
	uint64_t t0 = thread_cpu_ns();

	a->rc = lunar_chan_app_wait(a->ch, &a->m, 1, -1);
	a->cpu_ns = thread_cpu_ns() - t0;
	return NULL;
}

/*
 * 200 ms without messages: the application thread went to sleep (counted)
 * and used far less CPU than a spinning thread would (< 50 ms), and the
 * next message wakes it (one eventfd write).
 */
static void test_app_sleeps_when_idle(void **state)
{
	struct idle_arg a = {.ch = mk(64, LUNAR_CHAN_DEFAULT_SPIN_NS)};
	struct lunar_msg m = {.op = OP_DATA, .arg = 99};
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, idle_app, &a), 0);
	sleep_ms(200);
	await_sleeps(a.ch, 1);
	assert_int_equal(lunar_chan_stack_send(a.ch, &m), 0);
	pthread_join(t, NULL);
	assert_int_equal(a.rc, 1);
	assert_int_equal(a.m.arg, 99);
	assert_true(stats(a.ch).sleeps >= 1);
	assert_int_equal(stats(a.ch).wakeups, 1);
	print_message("idle: %.2f ms of CPU in >= 200 ms waiting\n", (double)a.cpu_ns / 1e6);
	assert_true(a.cpu_ns < 50ull * 1000 * 1000);
	lunar_chan_free(a.ch, NULL, NULL);
}

#define ROUNDS 200

static void *round_app(void *arg)
{
	struct echo_arg *a = arg;
	struct lunar_msg m;

	for (;;) {
		int n = lunar_chan_app_wait(a->ch, &m, 1, -1);

		if (n < 0)
			return NULL;
		if (m.arg != a->got)
			a->bad++;
		a->got++;
		if (lunar_chan_app_send(a->ch, &m))
			a->bad++;
	}
}

/*
 * The stack sends only once the application is asleep, every round: each
 * message must wake it (a lost wakeup would hang the round; it fails after
 * 10 s instead), with one eventfd write per sleep at most.
 */
static void test_wakeup_after_sleep(void **state)
{
	struct echo_arg a = {.ch = mk(16, 0)};
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, round_app, &a), 0);
	for (uint64_t r = 0; r < ROUNDS; r++) {
		struct lunar_msg m = {.op = OP_DATA, .arg = r};
		uint64_t end = mono_ms() + 10000;

		await_sleeps(a.ch, r + 1);
		assert_int_equal(lunar_chan_stack_send(a.ch, &m), 0);
		while (lunar_chan_stack_recv(a.ch, &m, 1) == 0) {
			assert_true(mono_ms() < end);
			sched_yield();
		}
		assert_int_equal(m.arg, r);
	}
	lunar_chan_shutdown(a.ch);
	pthread_join(t, NULL);
	assert_int_equal(a.bad, 0);
	assert_int_equal(a.got, ROUNDS);
	assert_true(stats(a.ch).wakeups >= ROUNDS);
	assert_true(stats(a.ch).wakeups <= stats(a.ch).sleeps);
	lunar_chan_free(a.ch, NULL, NULL);
}

/* While the application sleeps, ten sends cost one eventfd write. */
static void test_one_wakeup_per_sleep(void **state)
{
	struct lunar_chan *ch = mk(16, 0);
	struct lunar_msg m = {.op = OP_DATA}, out[16];
	struct pollfd pfd = {.fd = lunar_chan_app_fd(ch), .events = POLLIN};

	(void)state;
	assert_int_equal(lunar_chan_app_sleep_begin(ch), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(lunar_chan_stack_send(ch, &m), 0);
	assert_int_equal(stats(ch).wakeups, 1);
	assert_int_equal(poll(&pfd, 1, 0), 1);
	lunar_chan_app_sleep_end(ch);
	assert_int_equal(poll(&pfd, 1, 0), 0); /* read: no stale wakeup left */
	/* messages already queued: do not sleep */
	assert_int_equal(lunar_chan_app_sleep_begin(ch), 1);
	assert_int_equal(lunar_chan_app_recv(ch, out, 16), 10);
	assert_int_equal(stats(ch).sleeps, 1);
	lunar_chan_free(ch, NULL, NULL);
}

/* Waits with a timeout end with 0; a timeout of 0 never sleeps. */
static void test_wait_timeout(void **state)
{
	struct lunar_chan *ch = mk(16, 1000);
	struct lunar_msg out;
	uint64_t t0 = mono_ms();

	(void)state;
	assert_int_equal(lunar_chan_app_wait(ch, &out, 1, 0), 0);
	assert_int_equal(stats(ch).sleeps, 0);
	assert_int_equal(lunar_chan_app_wait(ch, &out, 1, 30), 0);
	assert_true(mono_ms() - t0 >= 30);
	assert_true(stats(ch).sleeps >= 1);
	lunar_chan_free(ch, NULL, NULL);
}

/* Pin the calling thread to @cpu; false if it cannot run there. */
static bool pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0 && sched_getcpu() == cpu;
}

/* The spin test's channel and the affinity to give back, whatever ends it. */
struct spin_fixture {
	struct lunar_chan *ch;
	cpu_set_t old;
};

static int spin_setup(void **state)
{
	struct spin_fixture *f = calloc(1, sizeof(*f));

	if (!f || sched_getaffinity(0, sizeof(f->old), &f->old)) {
		free(f);
		return -1;
	}
	f->ch = mk(16, 1000);
	*state = f;
	return 0;
}

static int spin_teardown(void **state)
{
	struct spin_fixture *f = *state;
	int rc = sched_setaffinity(0, sizeof(f->old), &f->old);

	lunar_chan_free(f->ch, NULL, NULL);
	free(f);
	return rc;
}

/*
 * An application thread on the CPU the stack sends from does not spin: the
 * stack could not make the reply while it spun. On another CPU it spins as
 * configured. Both threads' parts are played by this one, pinned in turn to
 * the first two CPUs it may use (the teardown restores its affinity).
 */
static void test_no_spin_on_stack_cpu(void **state)
{
	struct spin_fixture *f = *state;
	struct lunar_chan *ch = f->ch;
	struct lunar_msg m = {.op = OP_DATA}, out;
	int cpus[2], n = 0;

	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &f->old))
			cpus[n++] = c;
	/* Before the stack has sent anything its CPU is unknown: spin. */
	assert_int_equal(lunar_chan_app_wait(ch, &out, 1, 1), 0);
	assert_int_equal(stats(ch).spins, 1);
	assert_int_equal(stats(ch).spins_skipped, 0);
	assert_true(n >= 1);
	assert_true(pin(cpus[0]));
	assert_int_equal(lunar_chan_stack_send(ch, &m), 0); /* the stack, on cpus[0] */
	assert_int_equal(lunar_chan_app_wait(ch, &out, 1, 1), 1);
	assert_int_equal(lunar_chan_app_wait(ch, &out, 1, 1), 0); /* nothing more: waits */
	assert_int_equal(stats(ch).spins, 1);
	assert_int_equal(stats(ch).spins_skipped, 1);
	/* a channel that never spins has no spin to skip */
	struct lunar_chan *nospin = mk(16, 0);
	assert_int_equal(lunar_chan_stack_send(nospin, &m), 0);
	assert_int_equal(lunar_chan_app_wait(nospin, &out, 1, 1), 1);
	assert_int_equal(lunar_chan_app_wait(nospin, &out, 1, 1), 0);
	assert_int_equal(stats(nospin).spins_skipped, 0);
	assert_int_equal(stats(nospin).spins, 0);
	lunar_chan_free(nospin, NULL, NULL);
	if (n < 2) {
		print_message("only one CPU to run on: the other-CPU half is not run\n");
		return;
	}
	assert_true(pin(cpus[1]));
	assert_int_equal(lunar_chan_app_wait(ch, &out, 1, 1), 0);
	assert_int_equal(stats(ch).spins, 2);
	assert_int_equal(stats(ch).spins_skipped, 1);
}

/* Can the application read its eventfd now (has the stack woken it)? */
static bool woken(const struct lunar_chan *ch)
{
	struct pollfd pfd = {.fd = lunar_chan_app_fd(ch), .events = POLLIN};

	return poll(&pfd, 1, 0) == 1;
}

static void on_any(struct lunar_chan *ch, unsigned idx, struct lunar_msg *m, void *ctx)
{
	(void)ch, (void)idx, (void)m;
	(*(unsigned *)ctx)++;
}

/*
 * A thread that sleeps on the CPU the stack sends from is woken by the
 * dispatcher's next poll, once for all the messages sent meanwhile, and
 * that poll yields to it; a thread on another CPU, or on a lone channel
 * that no dispatcher polls, is woken by the send itself. Both threads'
 * parts are played by this one, pinned in turn (as the spin test).
 */
static void test_wake_deferred_on_stack_cpu(void **state)
{
	struct spin_fixture *f = *state;
	struct lunar_chan_config cfg = {.size = 16, .spin_ns = 1000};
	struct lunar_msg m = {.op = OP_DATA}, out[4];
	struct lunar_dispatch *d;
	struct lunar_chan *ch;
	unsigned seen = 0;
	int cpus[2], n = 0;

	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &f->old))
			cpus[n++] = c;
	assert_true(n >= 1 && pin(cpus[0]));
	/* A lone channel: nobody would write a deferred wakeup, so none is deferred. */
	assert_int_equal(lunar_chan_app_sleep_begin(f->ch), 0);
	assert_int_equal(lunar_chan_stack_send(f->ch, &m), 0);
	assert_true(woken(f->ch));
	lunar_chan_app_sleep_end(f->ch);
	assert_int_equal(stats(f->ch).wakeups_deferred, 0);

	assert_int_equal(lunar_dispatch_create(3, &cfg, &d), 0); /* the last channel is used */
	ch = lunar_dispatch_chan(d, 2);
	assert_int_equal(lunar_chan_app_sleep_begin(ch), 0); /* asleep on cpus[0] */
	assert_int_equal(lunar_chan_stack_send(ch, &m), 0);  /* the stack, on cpus[0] too */
	assert_int_equal(lunar_chan_stack_send(ch, &m), 0);
	assert_false(woken(ch)); /* not yet: the burst goes on */
	assert_int_equal(stats(ch).wakeups, 1);
	assert_int_equal(stats(ch).wakeups_deferred, 1);
	assert_int_equal(lunar_dispatch_handoffs(d), 0);
	assert_int_equal(lunar_dispatch_poll(d, on_any, &seen, 0), 0);
	assert_true(woken(ch)); /* the poll wrote it, and yielded */
	assert_false(woken(lunar_dispatch_chan(d, 0)) || woken(lunar_dispatch_chan(d, 1)));
	assert_int_equal(lunar_dispatch_handoffs(d), 1);
	lunar_chan_app_sleep_end(ch);
	assert_int_equal(lunar_chan_app_recv(ch, out, 4), 2);

	/*
	 * A sleep that ends without the wakeup (a timeout) and a second one
	 * before the poll: one wakeup is owed, and the poll after the one
	 * that wrote it does not yield again.
	 */
	assert_int_equal(lunar_chan_app_sleep_begin(ch), 0);
	assert_int_equal(lunar_chan_stack_send(ch, &m), 0);
	lunar_chan_app_sleep_end(ch); /* timed out */
	assert_int_equal(lunar_chan_app_recv(ch, out, 4), 1);
	assert_int_equal(lunar_chan_app_sleep_begin(ch), 0);
	assert_int_equal(lunar_chan_stack_send(ch, &m), 0);
	assert_int_equal(stats(ch).wakeups_deferred, 3);
	assert_int_equal(lunar_dispatch_poll(d, on_any, &seen, 0), 0);
	assert_true(woken(ch));
	assert_int_equal(lunar_dispatch_poll(d, on_any, &seen, 0), 0);
	assert_int_equal(lunar_dispatch_handoffs(d), 2);
	lunar_chan_app_sleep_end(ch);
	assert_int_equal(lunar_chan_app_recv(ch, out, 4), 1);
	/* A stack about to block writes what is owed, without yielding. */
	assert_int_equal(lunar_chan_app_sleep_begin(ch), 0);
	assert_int_equal(lunar_chan_stack_send(ch, &m), 0);
	assert_false(woken(ch));
	lunar_dispatch_flush_wakes(d);
	assert_true(woken(ch));
	assert_int_equal(lunar_dispatch_poll(d, on_any, &seen, 0), 0);
	assert_int_equal(lunar_dispatch_handoffs(d), 2);
	lunar_chan_app_sleep_end(ch);
	assert_int_equal(lunar_chan_app_recv(ch, out, 4), 1);
	if (n < 2) {
		print_message("only one CPU to run on: the other-CPU half is not run\n");
		lunar_dispatch_free(d, NULL, NULL);
		return;
	}
	/* Asleep on cpus[0], the stack on cpus[1]: woken by the send. */
	assert_int_equal(lunar_chan_app_sleep_begin(ch), 0);
	assert_true(pin(cpus[1]));
	assert_int_equal(lunar_chan_stack_send(ch, &m), 0);
	assert_true(woken(ch));
	assert_int_equal(stats(ch).wakeups_deferred, 4);
	assert_int_equal(stats(ch).wakeups, 5);
	lunar_chan_app_sleep_end(ch);
	assert_int_equal(lunar_dispatch_poll(d, on_any, &seen, 0), 0);
	assert_int_equal(lunar_dispatch_handoffs(d), 2);
	assert_int_equal(lunar_dispatch_free(d, NULL, NULL), 1);
}

/*
 * The stack wakes the application only for a sleep it announced and has
 * not ended: not for an empty burst, not after the sleep ended on its own
 * (a timeout), not after a sleep_begin that found messages and so did not
 * sleep. A shut-down channel has no room and is never slept on, even with
 * its ring empty.
 */
static void test_sleep_flag(void **state)
{
	struct lunar_chan *ch = mk(16, 0);
	struct lunar_msg m = {.op = OP_DATA}, out[4];

	(void)state;
	/* an empty burst sends nothing, so it wakes nobody */
	assert_int_equal(lunar_chan_app_sleep_begin(ch), 0);
	assert_int_equal(lunar_chan_stack_send_burst(ch, &m, 0), 0);
	assert_false(woken(ch));
	assert_int_equal(stats(ch).wakeups, 0);
	lunar_chan_app_sleep_end(ch); /* timed out */
	/* the sleep is over: the next send finds nobody asleep */
	assert_int_equal(lunar_chan_stack_send(ch, &m), 0);
	assert_false(woken(ch));
	assert_int_equal(stats(ch).wakeups, 0);
	/* a sleep_begin that finds the message does not sleep, and leaves no flag up */
	assert_int_equal(lunar_chan_app_sleep_begin(ch), 1);
	assert_int_equal(lunar_chan_app_recv(ch, out, 4), 1);
	assert_int_equal(lunar_chan_stack_send(ch, &m), 0);
	assert_false(woken(ch));
	assert_int_equal(stats(ch).wakeups, 0);
	assert_int_equal(stats(ch).sleeps, 1);
	assert_int_equal(lunar_chan_app_recv(ch, out, 4), 1);
	/* shut down, ring empty: no room, and no sleep */
	assert_int_equal(lunar_chan_stack_room(ch), 16);
	lunar_chan_shutdown(ch);
	assert_int_equal(lunar_chan_stack_room(ch), 0);
	assert_int_equal(lunar_chan_app_sleep_begin(ch), 1);
	assert_int_equal(lunar_chan_free(ch, NULL, NULL), 0);
}

/*
 * A wait that times out, without a spin (spin_ns 0), sleeps once for all
 * of its time: the poll() timeout is rounded up, so it never wakes short
 * and sleeps again; the sleep is not counted spurious, and no spin is
 * counted. The wait is placed across a second boundary of the clock, where
 * the nanoseconds carry into the seconds.
 */
static void test_timed_wait_sleeps_once(void **state)
{
	struct lunar_chan *ch = mk(16, 0);
	struct lunar_msg out;
	struct lunar_chan_stats s;
	struct timespec now, at;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &now);
	at = (struct timespec){now.tv_sec, 997000000};
	if (now.tv_nsec >= at.tv_nsec)
		at.tv_sec++;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
		;
	assert_int_equal(lunar_chan_app_wait(ch, &out, 1, 6), 0);
	s = stats(ch);
	assert_int_equal(s.sleeps, 1);
	assert_int_equal(s.spurious, 0);
	assert_int_equal(s.spins, 0);
	assert_int_equal(s.spins_skipped, 0);
	lunar_chan_free(ch, NULL, NULL);
}

/*
 * A message that comes while the application spins is taken without a
 * sleep, in a wait without a timeout too. The spin is 4 s long and ends
 * with the message, sent once the waiter has been spinning a little.
 */
static void test_spin_catches_message(void **state)
{
	struct idle_arg a = {.ch = mk(16, UINT_MAX)};
	struct lunar_msg m = {.op = OP_DATA, .arg = 3};
	uint64_t end = mono_ms() + 10000;
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, idle_app, &a), 0);
	while (stats(a.ch).spins < 1) {
		assert_true(mono_ms() < end);
		sched_yield();
	}
	sleep_ms(5);
	assert_int_equal(lunar_chan_stack_send(a.ch, &m), 0);
	pthread_join(t, NULL);
	assert_int_equal(a.rc, 1);
	assert_int_equal(a.m.arg, 3);
	assert_int_equal(stats(a.ch).sleeps, 0);
	assert_int_equal(stats(a.ch).wakeups, 0);
	lunar_chan_free(a.ch, NULL, NULL);
}

#define RACE_N 200000u

struct race_arg {
	struct lunar_chan *ch;
	uint64_t got, bad, over;
};

/*
 * An application thread that goes to sleep as often as it can, through
 * the protocol's two halves, while the stack sends without pause. Each
 * time the flag is down again it checks that no wakeup came without its
 * sleep: a stack that took the flag while the application, seeing
 * messages, was taking it back ended a sleep that must be counted.
 */
static void *race_app(void *arg)
{
	struct race_arg *a = arg;
	struct lunar_msg in[32];
	struct pollfd pfd = {.fd = lunar_chan_app_fd(a->ch), .events = POLLIN};

	while (a->got < RACE_N) {
		unsigned n = lunar_chan_app_recv(a->ch, in, 32);
		struct lunar_chan_stats s = stats(a->ch);

		for (unsigned i = 0; i < n; i++, a->got++)
			if (in[i].arg != a->got)
				a->bad++;
		if (s.wakeups > s.sleeps)
			a->over++;
		if (a->got < RACE_N && lunar_chan_app_sleep_begin(a->ch) == 0) {
			if (poll(&pfd, 1, -1) != 1)
				a->bad++;
			lunar_chan_app_sleep_end(a->ch);
		}
	}
	return NULL;
}

/* Every wakeup has its sleep, also when the stack's send meets the application's sleep_begin. */
static void test_wakeups_have_sleeps(void **state)
{
	struct race_arg a = {.ch = mk(64, 0)};
	struct lunar_chan_stats s;
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, race_app, &a), 0);
	for (uint64_t i = 0; i < RACE_N; i++) {
		struct lunar_msg m = {.op = OP_DATA, .arg = i};

		while (lunar_chan_stack_send(a.ch, &m) == -ENOBUFS)
			sched_yield();
	}
	pthread_join(t, NULL);
	s = stats(a.ch);
	print_message("race: %llu sleeps, %llu wakeups, %llu spurious\n",
		      (unsigned long long)s.sleeps, (unsigned long long)s.wakeups,
		      (unsigned long long)s.spurious);
	assert_int_equal(a.bad, 0);
	assert_int_equal(a.over, 0);
	assert_true(s.wakeups <= s.sleeps);
	lunar_chan_free(a.ch, NULL, NULL);
}

/* --- a signal interrupts the sleep --- */

static struct lunar_chan *_Atomic sig_chan; /* the handler sends on it, if set */

static void on_usr1(int sig)
{
	struct lunar_chan *ch = atomic_load(&sig_chan);
	struct lunar_msg m = {.op = OP_DATA, .arg = 77};

	(void)sig;
	if (ch)
		(void)lunar_chan_stack_send(ch, &m);
}

struct intr_arg {
	struct lunar_chan *ch;
	_Atomic int tid;
	int rc;
	struct lunar_msg m;
};

static void *intr_app(void *arg)
{
	struct intr_arg *a = arg;

	atomic_store(&a->tid, (int)gettid());
	a->rc = lunar_chan_app_wait(a->ch, &a->m, 1, -1);
	return NULL;
}

/*
 * An application thread asleep in lunar_chan_app_wait() gets SIGUSR1
 * (installed without SA_RESTART); the handler sends a message first if
 * @send. @return what the wait returned (the message in @out).
 */
static int interrupted_wait(bool send, struct lunar_msg *out)
{
	struct intr_arg a = {.ch = mk(16, 0), .tid = 0};
	struct sigaction sa = {.sa_handler = on_usr1}, old;
	uint64_t end = mono_ms() + 10000;
	pthread_t t;

	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	atomic_store(&sig_chan, send ? a.ch : NULL);
	assert_int_equal(pthread_create(&t, NULL, intr_app, &a), 0);
	await_sleeps(a.ch, 1);
	while (!thread_blocked(atomic_load(&a.tid))) { /* past sleep_begin, in poll() */
		assert_true(mono_ms() < end);
		sleep_ms(1);
	}
	assert_int_equal(pthread_kill(t, SIGUSR1), 0);
	pthread_join(t, NULL);
	atomic_store(&sig_chan, NULL);
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
	assert_int_equal(stats(a.ch).sleeps, 1);
	*out = a.m;
	lunar_chan_free(a.ch, NULL, NULL);
	return a.rc;
}

/*
 * A signal ends the sleep with -EINTR, unless a message came meanwhile:
 * then the message is returned, not the error.
 */
static void test_wait_interrupted(void **state)
{
	struct lunar_msg m = {0};

	(void)state;
	assert_int_equal(interrupted_wait(false, &m), -EINTR);
	assert_int_equal(interrupted_wait(true, &m), 1);
	assert_int_equal(m.arg, 77);
}

struct shut_arg {
	struct lunar_chan *ch;
	int rc[3];
	uint64_t arg;
};

static void *shut_app(void *arg)
{
	struct shut_arg *a = arg;
	struct lunar_msg m;

	a->rc[0] = lunar_chan_app_wait(a->ch, &m, 1, -1); /* woken by the shutdown */
	return NULL;
}

/* A shutdown wakes a sleeper; messages queued before it are still delivered. */
static void test_shutdown(void **state)
{
	struct shut_arg a = {.ch = mk(16, 0)};
	struct lunar_msg m = {.op = OP_DATA, .arg = 5};
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, shut_app, &a), 0);
	await_sleeps(a.ch, 1);
	lunar_chan_shutdown(a.ch);
	pthread_join(t, NULL);
	assert_int_equal(a.rc[0], -EPIPE);
	assert_int_equal(stats(a.ch).wakeups, 0);  /* the shutdown's kick is not a message wakeup */
	assert_int_equal(stats(a.ch).spurious, 0); /* nor a spurious one: it had news */
	lunar_chan_free(a.ch, NULL, NULL);

	a.ch = mk(16, 0);
	assert_int_equal(lunar_chan_stack_send(a.ch, &m), 0);
	lunar_chan_shutdown(a.ch);
	assert_int_equal(lunar_chan_stack_send(a.ch, &m), -EPIPE);
	assert_int_equal(lunar_chan_stack_send_burst(a.ch, &m, 1), 0);
	assert_int_equal(lunar_chan_app_send(a.ch, &m), -EPIPE);
	assert_int_equal(lunar_chan_app_sleep_begin(a.ch), 1);
	assert_int_equal(lunar_chan_app_wait(a.ch, &m, 1, -1), 1);
	assert_int_equal(m.arg, 5);
	assert_int_equal(lunar_chan_app_wait(a.ch, &m, 1, -1), -EPIPE);
	assert_int_equal(lunar_chan_app_wait(a.ch, &m, 1, 0), -EPIPE);
	lunar_chan_free(a.ch, NULL, NULL);
}

static void *last_app(void *arg)
{
	struct shut_arg *a = arg;
	struct lunar_msg m = {0};

	a->rc[0] = lunar_chan_app_wait(a->ch, &m, 1, -1); /* spins: the stack sends meanwhile */
	a->arg = m.arg;
	return NULL;
}

/*
 * The stack's last message, sent just before the shutdown, reaches a
 * waiter that is spinning, never an -EPIPE with it still queued. A race,
 * so many rounds; the window the waiter once had (the ring read, then
 * the flag: two loads apart, open only if it is preempted between them)
 * is too narrow for this to catch, it guards the order against changes.
 */
static void test_last_message_before_shutdown(void **state)
{
	(void)state;
	for (unsigned round = 0; round < 500; round++) {
		struct shut_arg a = {.ch = mk(16, 1000000000u)};
		struct lunar_msg m = {.op = OP_DATA, .arg = round + 1};
		uint64_t end = mono_ms() + 10000;
		pthread_t t;

		assert_int_equal(pthread_create(&t, NULL, last_app, &a), 0);
		while (stats(a.ch).spins < 1)
			assert_true(mono_ms() < end);
		assert_int_equal(lunar_chan_stack_send(a.ch, &m), 0);
		lunar_chan_shutdown(a.ch);
		pthread_join(t, NULL);
		assert_int_equal(a.rc[0], 1);
		assert_int_equal(a.arg, round + 1);
		assert_int_equal(lunar_chan_app_wait(a.ch, &m, 1, 0), -EPIPE);
		lunar_chan_free(a.ch, NULL, NULL);
	}
}

/* --- teardown: queued buffers go back --- */

static void drain_unref(struct lunar_msg *m, void *ctx)
{
	unsigned *n = ctx;

	assert_non_null(m->buf);
	zbuf_unref(m->buf);
	(*n)++;
}

static void send_zbufs(struct lunar_chan *ch, unsigned to_app, unsigned to_stack)
{
	for (unsigned i = 0; i < to_app + to_stack; i++) {
		struct lunar_msg m = {.op = OP_DATA, .buf = zbuf_alloc(1000), .len = 1000};

		assert_non_null(m.buf);
		if (i < to_app)
			assert_int_equal(lunar_chan_stack_send(ch, &m), 0);
		else
			assert_int_equal(lunar_chan_app_send(ch, &m), 0);
	}
}

static void test_teardown_drain(void **state)
{
	struct zbuf_config zc = {.backend = ZBUF_BACKEND_MMAP, .zones = {1, 1, 1, 1}};
	struct lunar_dispatch *d;
	struct lunar_chan *ch;
	unsigned drained = 0;

	(void)state;
	assert_int_equal(zbuf_init(&zc), 0);
	ch = mk(16, 0);
	send_zbufs(ch, 5, 3);
	assert_int_equal(zbuf_in_use(), 8);
	assert_int_equal(lunar_chan_free(ch, drain_unref, &drained), 8);
	assert_int_equal(drained, 8);
	assert_int_equal(zbuf_in_use(), 0);

	/* without a drain callback, the buffers are released */
	ch = mk(16, 0);
	send_zbufs(ch, 4, 4);
	assert_int_equal(lunar_chan_free(ch, NULL, NULL), 8);
	assert_int_equal(zbuf_in_use(), 0);

	/* a dispatcher drains every channel */
	assert_int_equal(lunar_dispatch_create(3, NULL, &d), 0);
	for (unsigned i = 0; i < 3; i++)
		send_zbufs(lunar_dispatch_chan(d, i), i, 2);
	assert_int_equal(zbuf_in_use(), 9);
	drained = 0;
	assert_int_equal(lunar_dispatch_free(d, drain_unref, &drained), 9);
	assert_int_equal(drained, 9);
	assert_int_equal(zbuf_in_use(), 0);
	zbuf_fini();
}

/* --- the dispatcher --- */

#define NCH 3

struct poll_seen {
	unsigned per[NCH];
	unsigned bad;
	struct lunar_dispatch *d;
};

static void on_msg(struct lunar_chan *ch, unsigned idx, struct lunar_msg *m, void *ctx)
{
	struct poll_seen *s = ctx;

	if (lunar_dispatch_chan(s->d, idx) != ch || m->conn != idx || m->arg != s->per[idx])
		s->bad++;
	s->per[idx]++;
}

/* A budget is shared: each channel its part, in order, none starved. */
static void test_dispatch_poll(void **state)
{
	struct lunar_chan_config cfg = {.size = 128};
	struct poll_seen s = {0};
	unsigned total = 0;

	(void)state;
	assert_int_equal(lunar_dispatch_create(NCH, &cfg, &s.d), 0);
	assert_int_equal(lunar_dispatch_poll(s.d, on_msg, &s, 30), 0);
	for (unsigned c = 0; c < NCH; c++)
		for (unsigned i = 0; i < 100; i++) {
			struct lunar_msg m = {.op = OP_DATA, .conn = c, .arg = i};

			assert_int_equal(lunar_chan_app_send(lunar_dispatch_chan(s.d, c), &m), 0);
		}
	assert_int_equal(lunar_dispatch_poll(s.d, on_msg, &s, 30), 30);
	for (unsigned c = 0; c < NCH; c++)
		assert_int_equal(s.per[c], 10);
	/* a budget that does not divide: 3 polls of 10 still give each channel 10 */
	for (int i = 0; i < 3; i++)
		assert_int_equal(lunar_dispatch_poll(s.d, on_msg, &s, 10), 10);
	for (unsigned c = 0; c < NCH; c++)
		assert_int_equal(s.per[c], 20);
	/* budget 0: up to 32 per channel */
	assert_int_equal(lunar_dispatch_poll(s.d, on_msg, &s, 0), 96);
	while (total < 300 - 156) {
		unsigned n = lunar_dispatch_poll(s.d, on_msg, &s, 7);

		assert_true(n > 0 && n <= 7);
		total += n;
	}
	assert_int_equal(lunar_dispatch_poll(s.d, on_msg, &s, 0), 0);
	for (unsigned c = 0; c < NCH; c++)
		assert_int_equal(s.per[c], 100);
	/* The largest budget ("no limit") takes everything: its share must not wrap to 0. */
	for (unsigned c = 0; c < NCH; c++) {
		struct lunar_msg m = {.op = OP_DATA, .conn = c, .arg = 100};

		assert_int_equal(lunar_chan_app_send(lunar_dispatch_chan(s.d, c), &m), 0);
	}
	assert_int_equal(lunar_dispatch_poll(s.d, on_msg, &s, UINT_MAX), NCH);
	assert_int_equal(s.bad, 0);
	assert_int_equal(stats(lunar_dispatch_chan(s.d, 1)).from_app, 101);
	lunar_dispatch_shutdown(s.d);
	struct lunar_msg m;
	assert_int_equal(lunar_chan_app_wait(lunar_dispatch_chan(s.d, 0), &m, 0, -1), -EINVAL);
	assert_int_equal(lunar_chan_app_wait(lunar_dispatch_chan(s.d, 0), &m, 1, -1), -EPIPE);
	assert_int_equal(lunar_dispatch_free(s.d, NULL, NULL), 0);

	/* a share larger than one burst (32) is served in full in one poll */
	struct lunar_dispatch *one;
	struct lunar_msg z = {.op = OP_DATA};
	unsigned seen = 0;
	assert_int_equal(lunar_dispatch_create(1, &cfg, &one), 0);
	for (unsigned i = 0; i < 70; i++)
		assert_int_equal(lunar_chan_app_send(lunar_dispatch_chan(one, 0), &z), 0);
	assert_int_equal(lunar_dispatch_poll(one, on_any, &seen, 100), 70);
	assert_int_equal(seen, 70);
	assert_int_equal(lunar_dispatch_free(one, NULL, NULL), 0);
}

/* Open descriptors of this process (@highest: the largest number), the listing's own aside. */
static unsigned open_fds(int *highest)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;
	int hi = -1;

	assert_non_null(dir);
	while ((e = readdir(dir))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == dirfd(dir))
			continue;
		n++;
		if (fd > hi)
			hi = fd;
	}
	closedir(dir);
	if (highest)
		*highest = hi;
	return n;
}

/*
 * The largest sizes are accepted and one more refused: a channel of
 * LUNAR_CHAN_MAX_SIZE messages, a dispatcher of 1024 channels.
 */
static void test_limits(void **state)
{
	struct lunar_chan_config max = {.size = LUNAR_CHAN_MAX_SIZE}, small = {.size = 1};
	struct lunar_chan *ch = NULL;
	struct lunar_dispatch *d = NULL;
	struct rlimit rl;

	(void)state;
	assert_int_equal(lunar_chan_create(&max, &ch), 0);
	assert_int_equal(lunar_chan_size(ch), LUNAR_CHAN_MAX_SIZE);
	assert_int_equal(lunar_chan_stack_room(ch), LUNAR_CHAN_MAX_SIZE);
	lunar_chan_free(ch, NULL, NULL);
	assert_int_equal(lunar_dispatch_create(1025, &small, &d), -EINVAL);
	assert_null(d);
	/* 1024 eventfds */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 1100 && rl.rlim_max >= 1100) {
		rl.rlim_cur = 1100;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	if (rl.rlim_cur < 1100) {
		print_message("fewer than 1100 descriptors allowed: 1024 channels not tried\n");
		return;
	}
	assert_int_equal(lunar_dispatch_create(1024, &small, &d), 0);
	assert_int_equal(lunar_dispatch_count(d), 1024);
	assert_non_null(lunar_dispatch_chan(d, 1023));
	assert_int_equal(lunar_dispatch_free(d, NULL, NULL), 0);
}

/*
 * A dispatcher that runs out of descriptors partway returns -EMFILE and
 * frees the channels it had made: no eventfd is left open.
 */
static void test_create_out_of_fds(void **state)
{
	struct lunar_chan_config cfg = {.size = 1};
	struct lunar_dispatch *d = NULL;
	struct rlimit old, low;
	unsigned before;
	int hi, rc;

	(void)state;
	before = open_fds(&hi);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)hi + 4; /* room for a few channels, not 1024 */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	rc = lunar_dispatch_create(1024, &cfg, &d);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(rc, -EMFILE);
	assert_null(d);
	assert_int_equal(open_fds(NULL), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create),
	    cmocka_unit_test(test_both_ways),
	    cmocka_unit_test(test_full_backpressure),
	    cmocka_unit_test(test_pingpong),
	    cmocka_unit_test(test_app_sleeps_when_idle),
	    cmocka_unit_test(test_wakeup_after_sleep),
	    cmocka_unit_test(test_one_wakeup_per_sleep),
	    cmocka_unit_test(test_wait_timeout),
	    cmocka_unit_test_setup_teardown(test_no_spin_on_stack_cpu, spin_setup, spin_teardown),
	    cmocka_unit_test_setup_teardown(test_wake_deferred_on_stack_cpu, spin_setup,
					    spin_teardown),
	    cmocka_unit_test(test_shutdown),
	    cmocka_unit_test(test_last_message_before_shutdown),
	    cmocka_unit_test(test_teardown_drain),
	    cmocka_unit_test(test_dispatch_poll),
	    cmocka_unit_test(test_sleep_flag),
	    cmocka_unit_test(test_timed_wait_sleeps_once),
	    cmocka_unit_test(test_spin_catches_message),
	    cmocka_unit_test(test_wait_interrupted),
	    cmocka_unit_test(test_wakeups_have_sleeps),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_create_out_of_fds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
