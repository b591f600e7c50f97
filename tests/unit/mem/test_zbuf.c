/*
 * test_zbuf.c - Zbuf on the mmap backend: zone layout, interior-pointer
 * translation at every byte, refcount lifecycle, counters, exhaustion and
 * misuse detection (each misuse named, counted, and harmless when the
 * handler returns). Every test ends with nothing in use.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zbuf_test_util.h"

#define ZONES 3

/* Objects per zone per class: the table in docs/MEMORY.md. */
static const uint32_t expect_objs[ZBUF_CLASS_COUNT] = {1019, 510, 127, 31};

static int setup(void **state)
{
	struct zbuf_config cfg = {.backend = ZBUF_BACKEND_MMAP,
				  .zones = {ZONES, ZONES, ZONES, ZONES}};

	(void)state;
	return zbuf_init(&cfg);
}

static int teardown(void **state)
{
	(void)state;
	zbuf_fini();
	return 0;
}

static void test_layout(void **state)
{
	struct zbuf_zone_info zi;

	(void)state;
	assert_int_equal(zbuf_zone_count(), ZONES * ZBUF_CLASS_COUNT);
	for (unsigned i = 0; i < zbuf_zone_count(); i++) {
		unsigned cls = i / ZONES;

		assert_int_equal(zbuf_zone_info(i, &zi), 0);
		assert_int_equal((uintptr_t)zi.start & (ZBUF_ZONE_SIZE - 1), 0);
		assert_int_equal(zi.kind, ZBUF_KIND_GENERIC);
		assert_int_equal(zi.cls, cls);
		assert_int_equal(zi.stride, zbuf_class_size(cls));
		assert_int_equal(zi.nobjs, expect_objs[cls]);
		/* objects aligned to their class size, and the zone fully used */
		assert_int_equal(zi.first_obj_off % zi.stride, 0);
		assert_true(zi.first_obj_off + (uint64_t)zi.nobjs * zi.stride <= ZBUF_ZONE_SIZE);
		assert_true(zi.first_obj_off >= 64);
		assert_int_equal(zi.iova, (uint64_t)(uintptr_t)zi.start);
		if (i > 0) {
			struct zbuf_zone_info prev;

			zbuf_zone_info(i - 1, &prev);
			assert_ptr_equal((char *)prev.start + ZBUF_ZONE_SIZE, zi.start);
		}
	}
	assert_int_equal(zbuf_zone_info(zbuf_zone_count(), &zi), -EINVAL);
	assert_int_equal(zbuf_in_use(), 0);
}

static void check_every_byte(char *obj, size_t size)
{
	uint64_t iova = zbuf_iova(obj);
	struct zbuf_zone_info zi = zone_info_of(obj);

	assert_int_equal(iova, zi.iova + (uint64_t)(obj - (char *)zi.start));
	for (size_t o = 0; o < size; o++) {
		char *q = obj + o;

		/* plain ifs: a cmocka assert per byte would dominate the run time */
		if (zbuf_obj(q) != obj)
			fail_msg("zbuf_obj(%p + %zu) = %p", (void *)obj, o, zbuf_obj(q));
		if (zbuf_obj_size(q) != size)
			fail_msg("zbuf_obj_size(%p + %zu) = %zu", (void *)obj, o, zbuf_obj_size(q));
		if (zbuf_span(q) != size - o)
			fail_msg("zbuf_span(%p + %zu) = %zu", (void *)obj, o, zbuf_span(q));
		if (zbuf_iova(q) != iova + o)
			fail_msg("zbuf_iova(%p + %zu) wrong", (void *)obj, o);
		if (zbuf_refcnt(q) != 1)
			fail_msg("zbuf_refcnt(%p + %zu) = %u", (void *)obj, o, zbuf_refcnt(q));
		if (!zbuf_contains(q))
			fail_msg("zbuf_contains(%p + %zu) false", (void *)obj, o);
	}
	/* references through interior pointers act on the same object */
	zbuf_ref(obj + size - 1);
	assert_int_equal(zbuf_refcnt(obj), 2);
	zbuf_ref(obj + size / 2);
	assert_int_equal(zbuf_refcnt(obj + 1), 3);
	zbuf_unref(obj + 7);
	zbuf_unref(obj + size - 1);
	assert_int_equal(zbuf_refcnt(obj), 1);
}

static void test_translate_every_byte(void **state)
{
	(void)state;
	for (unsigned cls = 0; cls < ZBUF_CLASS_COUNT; cls++) {
		size_t size = zbuf_class_size(cls), n = 0, cap = ZONES * expect_objs[cls];
		char **objs = calloc(cap + 1, sizeof(*objs));
		char *first_last_zone = NULL, *last_zone0 = NULL, *last = NULL;
		struct zbuf_zone_info z0, zl;
		char *p;

		assert_non_null(objs);
		zbuf_zone_info(cls * ZONES, &z0);
		zbuf_zone_info(cls * ZONES + ZONES - 1, &zl);
		while ((p = zbuf_alloc_class(cls)) != NULL) {
			assert_true(n < cap);
			objs[n++] = p;
			assert_ptr_equal(zbuf_obj(p), p);
			if (p == (char *)z0.start + z0.first_obj_off + (z0.nobjs - 1) * size)
				last_zone0 = p;
			if (p == (char *)zl.start + zl.first_obj_off)
				first_last_zone = p;
			if (p == (char *)zl.start + zl.first_obj_off + (zl.nobjs - 1) * size)
				last = p;
		}
		assert_int_equal(n, cap);
		assert_non_null(last_zone0);
		assert_non_null(first_last_zone);
		assert_non_null(last);

		check_every_byte(objs[0], size);
		check_every_byte(last_zone0, size);
		check_every_byte(first_last_zone, size);
		check_every_byte(last, size);
		check_every_byte(objs[n / 2], size);

		/* the bytes before an object's zone's first object are the header */
		assert_null(zbuf_obj((char *)zl.start + zl.first_obj_off - 1));
		assert_null(zbuf_obj(zl.start));
		assert_true(zbuf_contains(zl.start));
		assert_int_equal(zbuf_obj_size(zl.start), 0);
		assert_int_equal(zbuf_span(zl.start), 0);
		assert_int_equal(zbuf_span((char *)zl.start + zl.first_obj_off - 1), 0);
		assert_int_equal(zbuf_refcnt(zl.start), 0);

		for (size_t i = 0; i < n; i++)
			zbuf_unref(objs[i]);
		free(objs);
	}
	/* outside the region */
	int local;
	assert_false(zbuf_contains(&local));
	assert_null(zbuf_obj(&local));
	assert_int_equal(zbuf_span(&local), 0);
	assert_int_equal(zbuf_iova(&local), ZBUF_BAD_IOVA);
	assert_int_equal(zbuf_in_use(), 0);
}

static void test_alloc_size_classes(void **state)
{
	static const struct {
		size_t size;
		size_t cls_size;
	} cases[] = {{0, 2048},	    {1, 2048},	    {2048, 2048},   {2049, 4096},  {4096, 4096},
		     {4097, 16384}, {16384, 16384}, {16385, 65536}, {65536, 65536}};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		void *p = zbuf_alloc(cases[i].size);

		assert_non_null(p);
		assert_int_equal(zbuf_obj_size(p), cases[i].cls_size);
		zbuf_free(p);
	}
	errno = 0;
	assert_null(zbuf_alloc(65537));
	assert_int_equal(errno, EINVAL);
	assert_null(zbuf_alloc_class(ZBUF_CLASS_COUNT));
	/* No class past the last: its size is 0, not a read past the table. */
	assert_int_equal(zbuf_class_size(ZBUF_CLASS_COUNT), 0);
	assert_int_equal(zbuf_class_size((enum zbuf_class) - 1), 0);
	assert_int_equal(zbuf_in_use(), 0);
}

static void test_refcount_lifecycle(void **state)
{
	struct zbuf_stats s;
	char *p;

	(void)state;
	p = zbuf_alloc(1000);
	assert_non_null(p);
	memset(p, 0xab, 2048);
	assert_int_equal(zbuf_refcnt(p), 1);
	zbuf_class_stats(ZBUF_CLASS_2K, &s);
	assert_int_equal(s.allocs, 1);
	assert_int_equal(s.in_use, 1);
	assert_int_equal(s.frees, 0);

	zbuf_ref(p + 100);
	assert_int_equal(zbuf_refcnt(p), 2);
	zbuf_unref(p + 2047);
	assert_int_equal(zbuf_refcnt(p), 1);
	assert_int_equal(zbuf_in_use(), 1);

	zbuf_unref(p);
	assert_int_equal(zbuf_refcnt(p), 0);
	zbuf_class_stats(ZBUF_CLASS_2K, &s);
	assert_int_equal(s.allocs, 1);
	assert_int_equal(s.frees, 1);
	assert_int_equal(s.in_use, 0);
	zbuf_stats(&s);
	assert_int_equal(s.allocs, 1);
	assert_int_equal(s.frees, 1);
	assert_int_equal(s.failures, 0);

	/* LIFO reuse: the freed object comes back first, with refcount 1 */
	assert_ptr_equal(zbuf_alloc(10), p);
	assert_int_equal(zbuf_refcnt(p), 1);
	zbuf_free(p);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * zbuf_try_hold_span() (a zero-copy send): lunar's reference on the object
 * under [p, p + len), only when the whole span lies inside it. One byte
 * past its end is -EFAULT (like memory not Zbuf's: the caller's error to
 * return, no misuse), and a refused span changes no count.
 */
static void test_try_hold_span(void **state)
{
	char local[64];
	size_t size;
	char *p;

	(void)state;
	p = zbuf_alloc(1000);
	assert_non_null(p);
	size = zbuf_obj_size(p);
	assert_int_equal(size, 2048);
	assert_int_equal(zbuf_try_hold_span(p, size), 0);
	assert_int_equal(zbuf_refcnt(p), 2);
	zbuf_drop(p);
	assert_int_equal(zbuf_try_hold_span(p + 100, size - 100), 0);
	assert_int_equal(zbuf_refcnt(p), 2);
	zbuf_drop(p + 100);
	assert_int_equal(zbuf_try_hold_span(p, size + 1), -EFAULT);
	assert_int_equal(zbuf_try_hold_span(p + 100, size - 99), -EFAULT);
	assert_int_equal(zbuf_try_hold_span(local, 1), -EFAULT);
	assert_int_equal(zbuf_refcnt(p), 1);
	assert_int_equal(zbuf_app_refcnt(p), 1);
	zbuf_free(p);
	assert_int_equal(zbuf_in_use(), 0);
}

static void exhaust(enum zbuf_class cls)
{
	size_t cap = ZONES * expect_objs[cls], n = 0;
	void **objs = calloc(cap + 1, sizeof(*objs));
	struct zbuf_stats before, after;
	void *p;

	assert_non_null(objs);
	zbuf_class_stats(cls, &before);
	while ((p = zbuf_alloc_class(cls)) != NULL) {
		assert_true(n < cap);
		objs[n++] = p;
	}
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(n, cap);
	zbuf_class_stats(cls, &after);
	assert_int_equal(after.failures, before.failures + 1);
	assert_int_equal(after.in_use, cap);
	assert_null(zbuf_alloc_class(cls));
	zbuf_class_stats(cls, &after);
	assert_int_equal(after.failures, before.failures + 2);

	zbuf_free(objs[n / 2]);
	p = zbuf_alloc_class(cls);
	assert_ptr_equal(p, objs[n / 2]);
	assert_null(zbuf_alloc_class(cls));
	for (size_t i = 0; i < n; i++)
		zbuf_free(objs[i]);
	zbuf_class_stats(cls, &after);
	assert_int_equal(after.in_use, 0);
	free(objs);
}

static void test_exhaustion_unbound(void **state)
{
	(void)state;
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++)
		exhaust(c);
	assert_int_equal(zbuf_in_use(), 0);
}

static void test_exhaustion_bound(void **state)
{
	(void)state;
	zbuf_thread_init(3);
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++)
		exhaust(c);
	zbuf_thread_fini();
	assert_int_equal(zbuf_in_use(), 0);
}

static void test_misuse(void **state)
{
	struct zbuf_zone_info zi;
	char *p, *q;
	int local = 0;
	void *heap = malloc(64);

	(void)state;
	EXPECT_MISUSE(zbuf_unref(&local), "pointer not in Zbuf memory");
	EXPECT_MISUSE(zbuf_ref(heap), "pointer not in Zbuf memory");
	EXPECT_MISUSE(zbuf_free(NULL), "pointer not in Zbuf memory");
	free(heap);

	zbuf_zone_info(ZONES, &zi);
	EXPECT_MISUSE(zbuf_unref(zi.start), "pointer into a zone header");
	EXPECT_MISUSE(zbuf_ref((char *)zi.start + 200), "pointer into a zone header");
	EXPECT_MISUSE(zbuf_unref((char *)zi.start + zi.first_obj_off - 1),
		      "pointer into a zone header");
	/* one byte past the region */
	zbuf_zone_info(zbuf_zone_count() - 1, &zi);
	EXPECT_MISUSE(zbuf_unref((char *)zi.start + ZBUF_ZONE_SIZE), "not in Zbuf memory");

	p = zbuf_alloc(3000);
	q = zbuf_alloc(3000);
	assert_non_null(p);
	zbuf_unref(p);
	EXPECT_MISUSE(zbuf_unref(p), "double free");
	EXPECT_MISUSE(zbuf_unref(p + 1234), "double free");
	EXPECT_MISUSE(zbuf_ref(p + 5), "ref of a free object");
	assert_int_equal(zbuf_refcnt(p), 0);
	/* the misuse left the allocator intact */
	assert_int_equal(zbuf_refcnt(q), 1);
	zbuf_unref(q);
	assert_ptr_equal(zbuf_alloc(3000), q);
	zbuf_unref(q);
	assert_true(strstr(misuse_msg, " at 0x") != NULL);
	/* Each of the ten was counted, region-wide (a class has no count of its own). */
	{
		struct zbuf_stats s;

		zbuf_stats(&s);
		assert_int_equal(s.misuse, 10);
		zbuf_class_stats(ZBUF_CLASS_4K, &s);
		assert_int_equal(s.misuse, 0);
	}
	assert_int_equal(zbuf_in_use(), 0);
}

/* A handler that returns (as a program that logs and goes on would), noting the count it saw. */
static uint64_t misuse_counted_before_handler;

static void note_misuse(const char *msg)
{
	struct zbuf_stats s;

	zbuf_stats(&s);
	misuse_counted_before_handler = s.misuse;
	snprintf(misuse_msg, sizeof(misuse_msg), "%s", msg);
	misuse_count++;
}

/*
 * An application that unrefs more times than it holds: the references it
 * held release the object exactly once; the one too many is reported as a
 * double free, counted before the handler runs, and (the handler
 * returning) changes nothing: not the counters, not the free list, which
 * would otherwise hand the same object out twice. With and without a
 * per-core cache (the two release paths).
 */
static void test_unref_more_than_held(void **state)
{
	(void)state;
	for (int bound = 0; bound < 2; bound++) {
		struct zbuf_stats before, after, total;
		char *p, *q1, *q2;

		if (bound)
			zbuf_thread_init(2);
		zbuf_class_stats(ZBUF_CLASS_4K, &before);
		p = zbuf_alloc(3000);
		assert_non_null(p);
		zbuf_ref(p);
		zbuf_ref(p + 10);
		assert_int_equal(zbuf_refcnt(p), 3);
		for (int i = 0; i < 3; i++)
			zbuf_unref(p + i);
		zbuf_class_stats(ZBUF_CLASS_4K, &after);
		assert_int_equal(after.frees, before.frees + 1);
		assert_int_equal(after.in_use, before.in_use);

		misuse_count = 0;
		misuse_msg[0] = '\0';
		zbuf_set_misuse_handler(note_misuse);
		zbuf_unref(p + 100); /* the fourth: one more than was ever held */
		zbuf_set_misuse_handler(NULL);
		assert_int_equal(misuse_count, 1);
		assert_non_null(strstr(misuse_msg, "zbuf: double free at 0x"));
		zbuf_stats(&total);
		assert_int_equal(misuse_counted_before_handler, total.misuse);
		assert_int_equal(total.misuse, (uint64_t)bound + 1);
		assert_int_equal(zbuf_refcnt(p), 0);
		zbuf_class_stats(ZBUF_CLASS_4K, &after);
		assert_int_equal(after.frees, before.frees + 1); /* released once, not twice */
		assert_int_equal(after.in_use, before.in_use);

		q1 = zbuf_alloc(3000);
		q2 = zbuf_alloc(3000);
		assert_non_null(q1);
		assert_non_null(q2);
		assert_ptr_not_equal(q1, q2);
		assert_true(q1 == p || q2 == p);
		zbuf_free(q1);
		zbuf_free(q2);
		if (bound)
			zbuf_thread_fini();
	}
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * The application frees a buffer twice while lunar still holds it (a
 * connection's send buffer, or an in-flight frame): the second free is
 * refused at once, because the application's share of the count is
 * counted apart. lunar's reference stays, so the object is neither freed
 * early nor handed out again while the stack points at it; when lunar
 * drops its reference the object is freed exactly once. Then the same
 * for a buffer the stack gave the application (received data), and the
 * misuses of the give and take calls.
 */
/*
 * This thread and the test's take one more reference each, together, per
 * round (test_share_limit_race): it spins on the round number, not a
 * sleeping barrier, so the two calls overlap within nanoseconds (two
 * threads on two cores: neither waits for the scheduler).
 */
struct limit_race {
	char *obj;
	unsigned rounds;
	unsigned go, done; /* the round started; calls finished */
};

/*
 * Wait for *@p to become @v: spin, as the race wants both threads running,
 * but give the CPU up now and then, so a thread descheduled on a busy host
 * (or slowed by ThreadSanitizer) does not leave the other spinning out its
 * whole time slice each round.
 */
static void wait_for_round(unsigned *p, unsigned v)
{
	for (unsigned spins = 1; __atomic_load_n(p, __ATOMIC_ACQUIRE) != v; spins++)
		if (!(spins % 256))
			sched_yield();
}

static void *limit_race_thread(void *arg)
{
	struct limit_race *r = arg;

	zbuf_thread_init(8);
	for (unsigned i = 1; i <= r->rounds; i++) {
		wait_for_round(&r->go, i);
		zbuf_ref(r->obj);
		__atomic_store_n(&r->done, i, __ATOMIC_RELEASE);
	}
	zbuf_thread_fini();
	return NULL;
}

/*
 * The share's limit under a race: two application threads both read
 * 65,534 and both take one more. One gets it (65,535) and the other is
 * the misuse "reference count overflow"; checked then added, both passed
 * and the 16 bits wrapped to 0, after which every unref was refused as a
 * double free and the object never came back.
 */
static void test_share_limit_race(void **state)
{
	struct limit_race r = {.rounds = 20000};
	pthread_t t;

	(void)state;
	r.obj = zbuf_alloc(100);
	assert_non_null(r.obj);
	for (unsigned i = 1; i < UINT16_MAX - 1; i++)
		zbuf_ref(r.obj);
	assert_int_equal(zbuf_app_refcnt(r.obj), UINT16_MAX - 1);
	race_misuses = 0;
	zbuf_set_misuse_handler(count_race_misuse);
	start_on_any_core(&t, limit_race_thread, &r);
	for (unsigned i = 1; i <= r.rounds; i++) {
		__atomic_store_n(&r.go, i, __ATOMIC_RELEASE);
		zbuf_ref(r.obj);
		wait_for_round(&r.done, i);
		if (zbuf_app_refcnt(r.obj) != UINT16_MAX || race_misuses != i) {
			zbuf_set_misuse_handler(NULL);
			fail_msg(
			    "round %u: share %u, misuses %u: one of two must have been refused", i,
			    zbuf_app_refcnt(r.obj), race_misuses);
		}
		zbuf_unref(r.obj);
	}
	pthread_join(t, NULL);
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(zbuf_refcnt(r.obj), UINT16_MAX - 1);
	for (unsigned i = 0; i < UINT16_MAX - 1; i++)
		assert_true(zbuf_unref(r.obj));
	assert_int_equal(zbuf_refcnt(r.obj), 0);
}

static void test_app_share(void **state)
{
	struct zbuf_stats before, after;
	char *p, *q;

	(void)state;
	zbuf_class_stats(ZBUF_CLASS_4K, &before);
	p = zbuf_alloc(3000);
	assert_non_null(p);
	assert_int_equal(zbuf_app_refcnt(p), 1);
#ifdef LUNAR_DEBUG
	/* zbuf_hold() is for a reference lunar has; this one is the application's. */
	EXPECT_MISUSE(zbuf_hold(p), "hold of an object lunar holds no reference on");
	assert_int_equal(zbuf_refcnt(p), 1);
#endif
	assert_int_equal(zbuf_try_hold(p + 8), 0); /* the send buffer's, borrowed */
	assert_int_equal(zbuf_refcnt(p), 2);
	assert_int_equal(zbuf_app_refcnt(p), 1);
	zbuf_free(p); /* sent, so the application lets go: allowed */
	assert_int_equal(zbuf_app_refcnt(p), 0);
	EXPECT_MISUSE(zbuf_free(p), "double free");
	EXPECT_MISUSE(zbuf_ref(p), "ref of a buffer the application does not hold");
	assert_int_equal(zbuf_refcnt(p), 1); /* lunar's reference is untouched */
	q = zbuf_alloc(3000);
	assert_ptr_not_equal(q, p); /* not handed out while lunar holds it */
	zbuf_free(q);
	zbuf_drop(p); /* acknowledged */
	assert_int_equal(zbuf_refcnt(p), 0);
	zbuf_class_stats(ZBUF_CLASS_4K, &after);
	assert_int_equal(after.frees, before.frees + 2);

	/* Received data: lunar's reference given to the application. */
	p = zbuf_alloc(3000);
	assert_non_null(p);
	assert_true(zbuf_take(p)); /* now only lunar holds it, as a received frame */
	assert_int_equal(zbuf_app_refcnt(p), 0);
	EXPECT_MISUSE(zbuf_take(p), "take of a reference the application does not hold");
	zbuf_hold(p); /* delivered twice, say (a slice split in two) */
	zbuf_give(p + 100);
	zbuf_give(p + 200);
	assert_int_equal(zbuf_app_refcnt(p), 2);
	EXPECT_MISUSE(zbuf_give(p), "give of a reference lunar does not hold");
	zbuf_ref(p); /* the application may take more of its own */
	assert_int_equal(zbuf_app_refcnt(p), 3);
	assert_int_equal(zbuf_refcnt(p), 3);
	zbuf_take(p); /* and a declined delivery goes back to lunar */
	assert_int_equal(zbuf_app_refcnt(p), 2);
	zbuf_unref(p);
	zbuf_unref(p);
	EXPECT_MISUSE(zbuf_unref(p), "double free");
	assert_int_equal(zbuf_refcnt(p), 1);
	zbuf_drop(p);
	assert_int_equal(zbuf_refcnt(p), 0);
	EXPECT_MISUSE(zbuf_give(p), "give of a free object");
	EXPECT_MISUSE(zbuf_take(p), "take of a free object");
	assert_int_equal(zbuf_app_refcnt(p), 0);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * Deferred release (zbuf_defer_begin/end, as lunar_env_poll() frees what
 * a poll is done with after its transmit): an unref in between releases
 * nothing until the end, which releases each in order; past
 * ZBUF_DEFER_MAX notes those noted are released first; an application's
 * double free is refused at the call, as outside a span, and changes
 * nothing; after the end unrefs are immediate again.
 */
static void test_defer_release(void **state)
{
	enum { N = ZBUF_DEFER_MAX + 2 };
	static char *objs[N];
	struct zbuf_stats s;
	char *p;

	(void)state;
	p = zbuf_alloc(100);
	assert_non_null(p);
	zbuf_ref(p + 1);
	zbuf_defer_begin();
	zbuf_unref(p);
	zbuf_unref(p + 50);
	assert_int_equal(zbuf_refcnt(p), 2); /* nothing released yet */
	assert_int_equal(zbuf_in_use(), 1);
	zbuf_defer_end();
	assert_int_equal(zbuf_refcnt(p), 0);
	assert_int_equal(zbuf_in_use(), 0);

	/* More than the notes hold: those noted are released first, in order. */
	for (unsigned i = 0; i < N; i++) {
		objs[i] = zbuf_alloc(100);
		assert_non_null(objs[i]);
	}
	zbuf_defer_begin();
	for (unsigned i = 0; i < N; i++)
		zbuf_unref(objs[i]);
	assert_int_equal(zbuf_in_use(), N - ZBUF_DEFER_MAX);
	zbuf_defer_end();
	assert_int_equal(zbuf_in_use(), 0);

	/*
	 * A double free inside the span: the application's share goes down
	 * when an unref is noted, so the second unref is refused at the call
	 * (zbuf_unref() says so) and the object is released once, at the end.
	 */
	p = zbuf_alloc(100);
	assert_non_null(p);
	zbuf_class_stats(ZBUF_CLASS_2K, &s);
	misuse_count = 0;
	misuse_msg[0] = '\0';
	zbuf_set_misuse_handler(note_misuse);
	zbuf_defer_begin();
	assert_true(zbuf_unref(p));
	assert_int_equal(zbuf_app_refcnt(p), 0); /* its share gone at once */
	assert_false(zbuf_unref(p));
	assert_int_equal(misuse_count, 1);
	assert_int_equal(zbuf_in_use(), 1); /* the release waits for the end */
	zbuf_defer_end();
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(misuse_count, 1);
	assert_non_null(strstr(misuse_msg, "zbuf: double free at 0x"));
	{
		struct zbuf_stats after;

		zbuf_class_stats(ZBUF_CLASS_2K, &after);
		assert_int_equal(after.frees, s.frees + 1);
	}
	/*
	 * The same while lunar holds the object too: the extra unref does not
	 * take lunar's reference, whatever order the notes are in.
	 */
	p = zbuf_alloc(100);
	assert_non_null(p);
	assert_int_equal(zbuf_try_hold(p), 0); /* lunar's too (a send's) */
	zbuf_set_misuse_handler(note_misuse);
	zbuf_defer_begin();
	assert_true(zbuf_unref(p));
	assert_false(zbuf_unref(p));
	assert_int_equal(misuse_count, 2);
	zbuf_defer_end();
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(misuse_count, 2);
	assert_int_equal(zbuf_refcnt(p), 1);
	assert_int_equal(zbuf_app_refcnt(p), 0);
	zbuf_drop(p);
	assert_int_equal(zbuf_in_use(), 0);
	/* lunar's own drop too many is seen when the release happens. */
	p = zbuf_alloc(100);
	assert_non_null(p);
	assert_int_equal(zbuf_try_hold(p), 0); /* lunar's too (a send's) */
	zbuf_set_misuse_handler(note_misuse);
	zbuf_defer_begin();
	zbuf_drop(p);
	zbuf_unref(p);
	zbuf_drop(p);
	assert_int_equal(misuse_count, 2);
	zbuf_defer_end();
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(misuse_count, 3);
	assert_int_equal(zbuf_in_use(), 0);

	/*
	 * A double free that comes when the notes are full: the notes are
	 * released first, in order (p's object goes back to the cache), and
	 * the second free is then refused as one, never becoming a release of
	 * whatever p's object is when the cache hands it out again.
	 */
	misuse_count = 0;
	p = zbuf_alloc(100);
	assert_non_null(p);
	for (unsigned i = 0; i < ZBUF_DEFER_MAX - 1; i++) {
		objs[i] = zbuf_alloc(100);
		assert_non_null(objs[i]);
	}
	zbuf_set_misuse_handler(note_misuse);
	zbuf_defer_begin();
	zbuf_unref(p);
	for (unsigned i = 0; i < ZBUF_DEFER_MAX - 1; i++)
		zbuf_unref(objs[i]);
	assert_false(zbuf_unref(p)); /* the notes are full */
	assert_int_equal(misuse_count, 1);
	{
		char *q = zbuf_alloc(100); /* last in, first out: likely p's object */

		assert_non_null(q);
		zbuf_defer_end();
		zbuf_set_misuse_handler(NULL);
		assert_int_equal(misuse_count, 1);
		assert_int_equal(zbuf_app_refcnt(q), 1); /* the new owner's, untouched */
		zbuf_unref(q);
	}
	assert_int_equal(zbuf_in_use(), 0);

	/*
	 * The application's own reference after its last unref in a span is
	 * refused at once, though the object is not free until the end.
	 */
	misuse_count = 0;
	p = zbuf_alloc(100);
	assert_non_null(p);
	zbuf_set_misuse_handler(note_misuse);
	zbuf_defer_begin();
	assert_true(zbuf_unref(p));
	zbuf_ref(p);
	assert_int_equal(misuse_count, 1);
	assert_non_null(strstr(misuse_msg, "ref of a buffer the application does not hold"));
	assert_int_equal(zbuf_refcnt(p), 1); /* nothing taken */
	zbuf_defer_end();
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(zbuf_in_use(), 0);

	/* Ended: immediate again. */
	p = zbuf_alloc(100);
	assert_non_null(p);
	zbuf_unref(p);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * An allocation that finds nothing free inside a deferral span frees what
 * the span released so far and tries again (docs/MEMORY.md, Deferred
 * release): a poll that gave buffers back and then sends gets them,
 * not -ENOBUFS. The span goes on: a later release still waits for its end.
 */
static void test_defer_flush_on_exhaustion(void **state)
{
	enum { N = ZONES * 31 }; /* every 64K object (expect_objs) */
	static void *objs[N];
	struct zbuf_stats s;
	void *p;

	(void)state;
	for (unsigned i = 0; i < N; i++) {
		objs[i] = zbuf_alloc_class(ZBUF_CLASS_64K);
		assert_non_null(objs[i]);
	}
	assert_null(zbuf_alloc_class(ZBUF_CLASS_64K)); /* nothing deferred: a plain failure */
	assert_int_equal(errno, ENOMEM);
	zbuf_defer_begin();
	zbuf_unref(objs[3]);
	zbuf_unref(objs[4]);
	assert_int_equal(zbuf_in_use(), N);
	p = zbuf_alloc_class(ZBUF_CLASS_64K);
	assert_true(p == objs[3] || p == objs[4]);
	assert_int_equal(zbuf_in_use(), N - 1); /* both freed, one taken again */
	zbuf_unref(objs[5]);
	assert_int_equal(zbuf_in_use(), N - 1); /* still deferring */
	zbuf_defer_end();
	assert_int_equal(zbuf_in_use(), N - 2);
	zbuf_class_stats(ZBUF_CLASS_64K, &s);
	assert_int_equal(s.failures, 2); /* the plain failure, and the try before the flush */
	zbuf_unref(p);
	for (unsigned i = 0; i < N; i++)
		if (i < 3 || i > 5)
			zbuf_unref(objs[i]);
	assert_int_equal(zbuf_in_use(), 0);
}

/* Run @misuse in a forked child; put what it wrote to stderr in @buf; assert it died of SIGABRT. */
static void child_stderr(void (*misuse)(void), char *buf, size_t len)
{
	int fds[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		misuse();
		_exit(0);
	}
	close(fds[1]);
	/* Until the child is gone: a message may come in more than one write. */
	while (got < len - 1 && (n = read(fds[0], buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	close(fds[0]);
	waitpid(pid, &status, 0);
	assert_true(got > 0);
	buf[got] = '\0';
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
}

static void unref_foreign(void)
{
	int x = 0;

	zbuf_unref(&x);
}

static void unref_twice(void)
{
	char *p = zbuf_alloc(100);

	zbuf_unref(p);
	zbuf_unref(p);
}

/* Without a handler a misuse stops the process, with the message naming it on stderr. */
static void test_default_handler_aborts(void **state)
{
	char buf[256];

	(void)state;
	child_stderr(unref_foreign, buf, sizeof(buf));
	assert_non_null(strstr(buf, "zbuf: pointer not in Zbuf memory at 0x"));
	child_stderr(unref_twice, buf, sizeof(buf));
	assert_non_null(strstr(buf, "zbuf: double free at 0x"));
	assert_int_equal(zbuf_in_use(), 0);
}

static void go_on(const char *msg)
{
	(void)msg;
}

/* A program whose handler goes on: zbuf_fini() says how many misuses there were. */
static void double_free_then_fini(void)
{
	zbuf_set_misuse_handler(go_on);
	unref_twice();
	unref_twice();
	zbuf_fini();
	abort();
}

static void test_fini_reports_misuse(void **state)
{
	char buf[512];

	(void)state;
	child_stderr(double_free_then_fini, buf, sizeof(buf));
	assert_non_null(strstr(buf, "zbuf_fini: 2 misuses reported"));
	assert_int_equal(zbuf_in_use(), 0);
}

static void test_init_errors(void **state)
{
	struct zbuf_config cfg = {.backend = ZBUF_BACKEND_MMAP, .mbuf_zones = 1};
	uint16_t room;
	unsigned zones;

	(void)state;
	assert_int_equal(zbuf_init(&cfg), -EBUSY);
	zbuf_fini();
	assert_int_equal(zbuf_init(&cfg), -EINVAL); /* mbuf zones need DPDK */
	assert_null(zbuf_pktpool_create("x", 10, 2048));
	cfg.mbuf_zones = 0;
	/* Sizes that would wrap 32-bit sums are refused, not wrapped into small ones. */
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++)
		cfg.zones[c] = c ? 1 : UINT32_MAX;
	assert_int_equal(zbuf_init(&cfg), -EINVAL);
	assert_int_equal(zbuf_pktpool_geometry(1, 0x90000000u, &room, &zones), -EINVAL);
	assert_int_equal(zbuf_pktpool_geometry(1, 0xffffff00u, &room, &zones), -EINVAL);
	assert_int_equal(zbuf_pktpool_geometry(UINT_MAX, 1500, &room, &zones), 0);
	assert_true(zones > 0 && room >= 1500);
	memset(cfg.zones, 0, sizeof(cfg.zones));
	assert_int_equal(zbuf_init(&cfg), 0);
	/* zones[] = 0 means 4 zones per class */
	assert_int_equal(zbuf_zone_count(), 4 * ZBUF_CLASS_COUNT);
	assert_int_equal(zbuf_in_use(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_layout, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_translate_every_byte, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_alloc_size_classes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refcount_lifecycle, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_try_hold_span, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_app_share, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_share_limit_race, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_defer_flush_on_exhaustion, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exhaustion_unbound, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exhaustion_bound, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_misuse, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unref_more_than_held, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_defer_release, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_default_handler_aborts, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fini_reports_misuse, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_init_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
