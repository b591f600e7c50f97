/*
 * test_zbuf_cache.c - Zbuf per-core caches: two threads bound to different
 * cores allocate and free concurrently, free each other's objects, and
 * share references; counters add up and no object is lost in a cache.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "zbuf_test_util.h"

#define ZONES	   2
#define ROUNDS	   3000
#define BATCH	   48 /* more than one cache refill, so the shared path runs too */
#define REF_ROUNDS 100000

struct mailbox {
	pthread_mutex_t lock;
	void *objs[BATCH];
	unsigned n;
};

static struct mailbox box[2] = {{.lock = PTHREAD_MUTEX_INITIALIZER},
				{.lock = PTHREAD_MUTEX_INITIALIZER}};

static pthread_barrier_t barrier;
static unsigned bad_tags; /* cmocka asserts only work on the main thread */

struct worker {
	unsigned core;
	uint64_t allocs;
	uint64_t cross_frees;
};

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

/* Hand @n objects to the other core; take and free whatever it left us. */
static void exchange(unsigned me, void **objs, unsigned n, struct worker *w)
{
	struct mailbox *out = &box[!me], *in = &box[me];
	void *mine[BATCH];
	unsigned got;

	pthread_mutex_lock(&out->lock);
	while (n && out->n < BATCH)
		out->objs[out->n++] = objs[--n];
	pthread_mutex_unlock(&out->lock);
	/* mailbox full: free the rest locally */
	while (n)
		zbuf_unref(objs[--n]);

	pthread_mutex_lock(&in->lock);
	got = in->n;
	memcpy(mine, in->objs, got * sizeof(mine[0]));
	in->n = 0;
	pthread_mutex_unlock(&in->lock);
	for (unsigned i = 0; i < got; i++) {
		uint32_t tag = *(uint32_t *)mine[i];

		/* object written by the other core arrives intact */
		if ((tag & 0xffff) != (!me) + 1)
			__atomic_fetch_add(&bad_tags, 1, __ATOMIC_RELAXED);
		zbuf_unref(mine[i]);
	}
	w->cross_frees += got;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	void *objs[BATCH];

	zbuf_thread_init(w->core);
	pthread_barrier_wait(&barrier);
	for (unsigned r = 0; r < ROUNDS; r++) {
		unsigned n = 0;

		for (unsigned i = 0; i < BATCH; i++) {
			void *p = zbuf_alloc_class((r + i) % ZBUF_CLASS_COUNT);

			if (p == NULL)
				continue; /* 64K objects may all be in flight */
			*(uint32_t *)p = (w->core + 1) | (r << 16);
			objs[n++] = p;
			w->allocs++;
		}
		/* half freed here, half by the other core */
		for (unsigned i = n / 2; i < n; i++)
			zbuf_unref(objs[i]);
		exchange(w->core, objs, n / 2, w);
	}
	/*
	 * On two busy CPUs one worker may finish before the other starts: wait,
	 * then free what the other core left, so cross-core frees always happen.
	 */
	pthread_barrier_wait(&barrier);
	exchange(w->core, objs, 0, w);
	pthread_barrier_wait(&barrier);
	zbuf_thread_fini();
	return NULL;
}

static size_t drain_class(enum zbuf_class cls)
{
	void **objs = calloc(ZONES * 1024 + 1, sizeof(*objs));
	size_t n = 0;
	void *p;

	assert_non_null(objs);
	while ((p = zbuf_alloc_class(cls)) != NULL)
		objs[n++] = p;
	for (size_t i = 0; i < n; i++)
		zbuf_unref(objs[i]);
	free(objs);
	return n;
}

static void test_two_cores(void **state)
{
	struct worker w[2] = {{.core = 0}, {.core = 1}};
	pthread_t t[2];
	struct zbuf_stats s;
	size_t before[ZBUF_CLASS_COUNT];

	(void)state;
	pthread_barrier_init(&barrier, NULL, 2);
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++)
		before[c] = drain_class(c);
	zbuf_stats(&s);
	uint64_t base_allocs = s.allocs, base_frees = s.frees;

	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&barrier);
	assert_int_equal(box[0].n + box[1].n, 0);

	zbuf_stats(&s);
	assert_int_equal(s.allocs - base_allocs, w[0].allocs + w[1].allocs);
	assert_int_equal(s.frees - base_frees, s.allocs - base_allocs);
	assert_int_equal(s.in_use, 0);
	assert_true(w[0].cross_frees > 0 && w[1].cross_frees > 0);
	assert_int_equal(bad_tags, 0);
	print_message("allocs %llu + %llu, cross-core frees %llu + %llu\n",
		      (unsigned long long)w[0].allocs, (unsigned long long)w[1].allocs,
		      (unsigned long long)w[0].cross_frees, (unsigned long long)w[1].cross_frees);

	/* the threads flushed their caches: every object is allocatable again */
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++)
		assert_int_equal(drain_class(c), before[c]);
	assert_int_equal(zbuf_in_use(), 0);
}

static void *ref_worker(void *arg)
{
	void **pp = arg;
	static unsigned next_core = 4;

	zbuf_thread_init(__atomic_fetch_add(&next_core, 1, __ATOMIC_RELAXED));
	for (unsigned i = 0; i < REF_ROUNDS; i++) {
		zbuf_ref((char *)pp[0] + (i % 2048));
		zbuf_unref((char *)pp[0] + ((i * 7) % 2048));
	}
	/* each worker drops one of the references main handed out */
	zbuf_unref(pp[0]);
	zbuf_thread_fini();
	return NULL;
}

/* Concurrent ref/unref on one object from two cores: the count never tears. */
static void test_shared_refcount(void **state)
{
	void *p = zbuf_alloc(100);
	pthread_t t[2];
	struct zbuf_stats s;

	(void)state;
	assert_non_null(p);
	zbuf_ref(p);
	zbuf_ref(p);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, ref_worker, &p), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(zbuf_refcnt(p), 1);
	zbuf_unref(p);
	zbuf_class_stats(ZBUF_CLASS_2K, &s);
	assert_int_equal(s.allocs, 1);
	assert_int_equal(s.frees, 1);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * One object, two slices (received bytes compacted into one buffer): an
 * application thread takes and drops references on the slice it holds
 * while lunar, on its own thread, queues another slice and hands it over
 * (zbuf_hold, zbuf_give, then back with zbuf_take, zbuf_drop). Read apart,
 * the two counts can look as if lunar held nothing; no give and no drop
 * may be called a misuse for that, and the counts end where they began.
 */
static void test_give_while_app_refs(void **state)
{
	char *p = zbuf_alloc(3000);

	(void)state;
	assert_non_null(p);
	assert_int_equal(zbuf_try_hold(p), 0); /* lunar's own: the buffer it fills */
	assert_int_equal(run_slice_race(p, REF_ROUNDS * 10), 0);
	assert_int_equal(zbuf_refcnt(p), 2);
	assert_int_equal(zbuf_app_refcnt(p), 1);
	zbuf_drop(p);
	zbuf_free(p);
	assert_int_equal(zbuf_in_use(), 0);
}

/* A bound thread that stops without zbuf_thread_fini(): its cache is reclaimed by re-init. */
static void test_rebind_flushes(void **state)
{
	void *p;

	(void)state;
	zbuf_thread_init(5);
	p = zbuf_alloc(10);
	assert_non_null(p);
	zbuf_unref(p);
	/* switching core flushes the old core's cache back to the zones */
	zbuf_thread_init(6);
	zbuf_thread_fini();
	assert_int_equal(drain_class(ZBUF_CLASS_2K), ZONES * 1019);
	zbuf_thread_init(ZBUF_MAX_CORES); /* out of range: logged, stays unbound */
	assert_int_equal(zbuf_in_use(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_two_cores, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_shared_refcount, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_give_while_app_refs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rebind_flushes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
