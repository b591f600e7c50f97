/*
 * zbuf_test_util.h - shared helpers of the mem/ unit tests: a misuse handler
 * that records the message and jumps back into the test, region setup, and
 * a race between an application thread and lunar on one object.
 */
#ifndef LUNAR_TEST_ZBUF_UTIL_H
#define LUNAR_TEST_ZBUF_UTIL_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mem/zbuf.h"

static jmp_buf misuse_jmp;
static char misuse_msg[256];
static int misuse_count;

static inline void record_misuse(const char *msg)
{
	snprintf(misuse_msg, sizeof(misuse_msg), "%s", msg);
	misuse_count++;
	longjmp(misuse_jmp, 1);
}

/*
 * Run @stmt, which must report misuse whose message contains @what. The
 * handler longjmps back here, so the test goes on after the misuse.
 */
#define EXPECT_MISUSE(stmt, what)                                                                  \
	do {                                                                                       \
		misuse_msg[0] = '\0';                                                              \
		zbuf_set_misuse_handler(record_misuse);                                            \
		if (setjmp(misuse_jmp) == 0) {                                                     \
			stmt;                                                                      \
			zbuf_set_misuse_handler(NULL);                                             \
			fail_msg("no misuse reported by %s (wanted \"%s\")", #stmt, what);         \
		}                                                                                  \
		zbuf_set_misuse_handler(NULL);                                                     \
		if (strstr(misuse_msg, what) == NULL || strncmp(misuse_msg, "zbuf: ", 6))          \
			fail_msg("%s reported \"%s\", wanted \"zbuf: %s at <ptr>\"", #stmt,        \
				 misuse_msg, what);                                                \
	} while (0)

/*
 * Start a thread free to run on any core: an EAL test's own thread is
 * pinned to one, and a thread it starts would inherit that and never race.
 */
static inline void start_on_any_core(pthread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	for (int c = 0; c < CPU_SETSIZE; c++)
		CPU_SET(c, &cpus); /* the kernel keeps the ones that exist */
	pthread_attr_init(&attr);
	if (pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus) != 0)
		fail_msg("pthread_attr_setaffinity_np failed");
	if (pthread_create(t, &attr, fn, arg) != 0)
		fail_msg("pthread_create failed");
	pthread_attr_destroy(&attr);
}

static unsigned race_misuses; /* from either thread */

static inline void count_race_misuse(const char *msg)
{
	(void)msg;
	__atomic_fetch_add(&race_misuses, 1, __ATOMIC_RELAXED);
}

struct slice_race {
	char *obj;
	unsigned rounds;
};

static inline void *slice_race_app(void *arg)
{
	const struct slice_race *r = arg;

	zbuf_thread_init(8);
	for (unsigned i = 0; i < r->rounds; i++) {
		zbuf_ref(r->obj + 100); /* the application's slice: count up, then share */
		zbuf_unref(r->obj + 100);
	}
	zbuf_thread_fini();
	return NULL;
}

/*
 * One object, two slices (received bytes compacted into one buffer): an
 * application thread, holding the slice at @obj + 100, takes and drops
 * references on it while lunar, here, holds another slice and hands it
 * over and back (zbuf_hold, zbuf_give, zbuf_take, zbuf_drop), @rounds
 * times each. @return the misuses reported meanwhile.
 */
static inline unsigned run_slice_race(char *obj, unsigned rounds)
{
	struct slice_race r = {obj, rounds};
	pthread_t t;

	race_misuses = 0;
	zbuf_set_misuse_handler(count_race_misuse);
	start_on_any_core(&t, slice_race_app, &r);
	for (unsigned i = 0; i < rounds; i++) {
		zbuf_hold(obj + 2000);
		zbuf_give(obj + 2000);
		zbuf_take(obj + 2000);
		zbuf_drop(obj + 2000);
	}
	pthread_join(t, NULL);
	zbuf_set_misuse_handler(NULL);
	return race_misuses;
}

/* Zone info of the zone holding @p (the test asserts it exists). */
static inline struct zbuf_zone_info zone_info_of(const void *p)
{
	struct zbuf_zone_info zi;
	struct zbuf_zone_info z0;

	assert_int_equal(zbuf_zone_info(0, &z0), 0);
	assert_int_equal(
	    zbuf_zone_info(
		(unsigned)(((const char *)p - (const char *)z0.start) >> ZBUF_ZONE_SHIFT), &zi),
	    0);
	return zi;
}

#endif
