/*
 * test_timer_wheel.c - the timer wheel (base/timer_wheel.h): nothing fires
 * early, nothing is lost, each entry fires at most once per call and in
 * the first call at or past its deadline; cancelling and rescheduling from
 * anywhere, callbacks included; deadlines hours ahead, beyond the wheel's
 * reach and in the past; the edges of every level; and a long random run
 * against a sorted-array reference.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <cmocka.h>

#include "base/compiler.h"
#include "base/timer_wheel.h"

#define TICK TW_TICK_NS
#define US   1000ull
#define MS   1000000ull
#define SEC  1000000000ull
#define HOUR (3600 * SEC)

enum action {
	ACT_NONE,
	ACT_RESCHED_SELF,
	ACT_CANCEL_OTHER,
	ACT_RESCHED_OTHER,
	ACT_FREE_SELF,
	ACT_CANCEL_FREE_OTHER
};

struct item {
	struct tw_entry e;
	unsigned id;
	unsigned fires;
	uint64_t fired_at; /* @now of the call that fired it last */
	enum action act;   /* what its callback does */
	struct item *other;
	uint64_t arg;
};

struct log {
	struct timer_wheel *tw;
	uint64_t now;
	unsigned n;
	unsigned ids[8192];
};

static void item_init(struct item *it, unsigned id)
{
	*it = (struct item){.id = id};
	tw_entry_init(&it->e);
}

static void record(struct tw_entry *e, void *ctx)
{
	struct log *lg = ctx;
	struct item *it = container_of(e, struct item, e);

	assert_false(tw_armed(e));
	assert_true(e->deadline <= lg->now); /* never early */
	it->fires++;
	it->fired_at = lg->now;
	if (lg->n < ARRAY_SIZE(lg->ids))
		lg->ids[lg->n++] = it->id;
	switch (it->act) {
	case ACT_NONE:
		break;
	case ACT_RESCHED_SELF:
		tw_schedule(lg->tw, e, it->arg);
		break;
	case ACT_CANCEL_OTHER:
		tw_cancel(lg->tw, &it->other->e);
		break;
	case ACT_RESCHED_OTHER:
		tw_schedule(lg->tw, &it->other->e, it->arg);
		break;
	case ACT_FREE_SELF:
		free(it);
		break;
	case ACT_CANCEL_FREE_OTHER:
		tw_cancel(lg->tw, &it->other->e);
		free(it->other);
		break;
	}
}

static unsigned expire(struct log *lg, uint64_t now)
{
	lg->now = now;
	return tw_expire(lg->tw, now, record, lg, UINT_MAX);
}

/* Schedule, cancel (twice), and fire exactly at the deadline, not a nanosecond before. */
static void test_schedule_cancel(void **state)
{
	static struct timer_wheel tw;
	static struct log lg;
	struct item it[3];
	uint64_t t0 = 5 * SEC + 123;

	(void)state;
	tw_init(&tw, t0);
	lg = (struct log){.tw = &tw};
	for (unsigned i = 0; i < 3; i++) {
		item_init(&it[i], i);
		assert_false(tw_armed(&it[i].e));
	}
	assert_int_equal(tw_count(&tw), 0);
	assert_true(tw_next_deadline(&tw) == UINT64_MAX);
	assert_int_equal(expire(&lg, t0), 0);

	for (unsigned i = 0; i < 3; i++)
		tw_schedule(&tw, &it[i].e, t0 + (i + 1) * MS);
	assert_int_equal(tw_count(&tw), 3);
	for (unsigned i = 0; i < 3; i++)
		assert_true(tw_armed(&it[i].e));
	tw_cancel(&tw, &it[1].e);
	assert_false(tw_armed(&it[1].e));
	assert_int_equal(tw_count(&tw), 2);
	tw_cancel(&tw, &it[1].e);
	assert_int_equal(tw_count(&tw), 2);

	assert_int_equal(expire(&lg, t0 + MS - 1), 0);
	assert_int_equal(expire(&lg, t0 + MS), 1);
	assert_int_equal(it[0].fires, 1);
	assert_int_equal(it[0].fired_at, t0 + MS);
	assert_int_equal(tw_count(&tw), 1);
	assert_int_equal(expire(&lg, t0 + 10 * MS), 1);
	assert_int_equal(it[2].fires, 1);
	assert_int_equal(it[1].fires, 0);
	assert_int_equal(tw_count(&tw), 0);
	assert_true(tw_next_deadline(&tw) == UINT64_MAX);
	assert_int_equal(expire(&lg, t0 + HOUR), 0);
}

/* Rescheduling an armed entry moves it: later, earlier, to the same time, far and back. */
static void test_reschedule(void **state)
{
	static struct timer_wheel tw;
	static struct log lg;
	struct item it;
	uint64_t t0 = 77 * SEC + 999;

	(void)state;
	tw_init(&tw, t0);
	lg = (struct log){.tw = &tw};
	item_init(&it, 0);
	tw_schedule(&tw, &it.e, t0 + MS);
	tw_schedule(&tw, &it.e, t0 + 5 * MS);
	assert_int_equal(tw_count(&tw), 1);
	assert_int_equal(expire(&lg, t0 + 2 * MS), 0);
	tw_schedule(&tw, &it.e, t0 + 3 * MS); /* earlier than before */
	assert_int_equal(expire(&lg, t0 + 3 * MS - 1), 0);
	assert_int_equal(expire(&lg, t0 + 3 * MS), 1);
	assert_int_equal(expire(&lg, t0 + 6 * MS), 0); /* the old deadline is gone */

	tw_schedule(&tw, &it.e, t0 + 10 * MS);
	tw_schedule(&tw, &it.e, t0 + 10 * MS);
	assert_int_equal(tw_count(&tw), 1);
	tw_schedule(&tw, &it.e, t0 + 2 * HOUR);
	tw_schedule(&tw, &it.e, t0 + 11 * MS);
	assert_int_equal(tw_count(&tw), 1);
	assert_int_equal(expire(&lg, t0 + 10 * MS), 0);
	assert_int_equal(expire(&lg, t0 + 11 * MS), 1);
	assert_int_equal(it.fires, 2);
	assert_int_equal(expire(&lg, t0 + 3 * HOUR), 0);
	assert_int_equal(tw_count(&tw), 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Deadlines on and around the start of slots of every level (and the
 * reach), from a start aligned or not: calling expire at every deadline
 * and one nanosecond before it fires exactly the entries due.
 */
static void test_level_edges(void **state)
{
	static struct timer_wheel tw;
	static struct log lg;
	static struct item it[256];
	static uint64_t times[512];
	const uint64_t starts[] = {0, 12345 * TICK + 77, (1ull << 24) * TICK - 5,
				   (1ull << 32) * TICK - TICK / 2, 3 * HOUR + 1};
	const uint64_t ks[] = {1,
			       2,
			       255,
			       256,
			       257,
			       511,
			       512,
			       65535,
			       65536,
			       65537,
			       (1u << 24) - 1,
			       1u << 24,
			       (1u << 24) + 1,
			       0xffffffffull,
			       1ull << 32,
			       (1ull << 32) + 1,
			       3ull << 32};
	const uint64_t offs[] = {0, 1, TICK - 1, TICK};

	(void)state;
	for (unsigned s = 0; s < ARRAY_SIZE(starts); s++) {
		uint64_t start = starts[s], cur = start >> TW_TICK_SHIFT;
		unsigned n = 0, nt = 0;

		tw_init(&tw, start);
		lg = (struct log){.tw = &tw};
		for (unsigned k = 0; k < ARRAY_SIZE(ks); k++)
			for (unsigned o = 0; o < ARRAY_SIZE(offs); o++) {
				uint64_t d = ((cur + ks[k]) << TW_TICK_SHIFT) + offs[o] - 1;

				item_init(&it[n], n);
				tw_schedule(&tw, &it[n].e, d);
				n++;
				times[nt++] = d;
				times[nt++] = d - 1;
			}
		assert_int_equal(tw_count(&tw), n);
		qsort(times, nt, sizeof(times[0]), cmp_u64);
		for (unsigned i = 0; i < nt; i++) {
			expire(&lg, times[i]);
			for (unsigned j = 0; j < n; j++) {
				bool due = it[j].e.deadline <= times[i];

				assert_int_equal(it[j].fires, due);
				if (due)
					assert_true(it[j].fired_at == it[j].e.deadline);
			}
			assert_true(tw_next_deadline(&tw) > times[i]);
		}
		assert_int_equal(tw_count(&tw), 0);
	}
}

/* One late call fires everything, tick by tick in deadline order. */
static void test_order(void **state)
{
	static struct timer_wheel tw;
	static struct log lg;
	static struct item it[4000];
	uint64_t t0 = 3 * SEC, x = 88172645463325252ull;

	(void)state;
	tw_init(&tw, t0);
	lg = (struct log){.tw = &tw};
	for (unsigned i = 0; i < ARRAY_SIZE(it); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		item_init(&it[i], i);
		/* Half within 2 s, half within 20 ms: many share a tick. */
		tw_schedule(&tw, &it[i].e, t0 + 1 + x % (i % 2 ? 2 * SEC : 20 * MS));
	}
	assert_int_equal(expire(&lg, t0 + 2 * SEC), ARRAY_SIZE(it));
	assert_int_equal(lg.n, ARRAY_SIZE(it));
	for (unsigned i = 1; i < lg.n; i++)
		assert_true(it[lg.ids[i - 1]].e.deadline >> TW_TICK_SHIFT <=
			    it[lg.ids[i]].e.deadline >> TW_TICK_SHIFT);
	for (unsigned i = 0; i < ARRAY_SIZE(it); i++)
		assert_int_equal(it[i].fires, 1);
}

/* Callbacks re-arm themselves, cancel, move and free others, and free themselves. */
static void test_callbacks(void **state)
{
	static struct timer_wheel tw;
	static struct log lg;
	struct item a, b, c, d, e, f, g;
	struct item *self_freeing = malloc(sizeof(*self_freeing));
	struct item *killer = malloc(sizeof(*killer)), *victim = malloc(sizeof(*victim));
	uint64_t t0 = 42 * SEC;

	(void)state;
	tw_init(&tw, t0);
	lg = (struct log){.tw = &tw};
	item_init(&a, 0);
	item_init(&b, 1);
	item_init(&c, 2);
	item_init(&d, 3);
	item_init(&e, 4);
	item_init(&f, 5);
	item_init(&g, 6);
	item_init(self_freeing, 7);
	item_init(killer, 8);
	item_init(victim, 9);

	/* a re-arms itself in the past every time: once per call, not forever. */
	a.act = ACT_RESCHED_SELF;
	a.arg = 0;
	tw_schedule(&tw, &a.e, t0 + MS);
	assert_int_equal(expire(&lg, t0 + MS), 1);
	assert_int_equal(a.fires, 1);
	assert_true(tw_armed(&a.e));
	assert_true(tw_next_deadline(&tw) == 0);
	assert_int_equal(expire(&lg, t0 + MS), 1);
	assert_int_equal(expire(&lg, t0 + MS + 1), 1);
	assert_int_equal(a.fires, 3);
	a.act = ACT_NONE;
	assert_int_equal(expire(&lg, t0 + MS + 2), 1);
	assert_false(tw_armed(&a.e));

	/* b cancels c, due in a later tick of the same call: c never fires. */
	b.act = ACT_CANCEL_OTHER;
	b.other = &c;
	tw_schedule(&tw, &b.e, t0 + 2 * MS);
	tw_schedule(&tw, &c.e, t0 + 2 * MS + 2 * TICK);
	assert_int_equal(expire(&lg, t0 + 3 * MS), 1);
	assert_int_equal(b.fires, 1);
	assert_int_equal(c.fires, 0);
	assert_int_equal(tw_count(&tw), 0);

	/* d moves e, due in the same call, later: e fires then, not now. */
	d.act = ACT_RESCHED_OTHER;
	d.other = &e;
	d.arg = t0 + 8 * MS;
	tw_schedule(&tw, &d.e, t0 + 4 * MS);
	tw_schedule(&tw, &e.e, t0 + 4 * MS + 2 * TICK);
	assert_int_equal(expire(&lg, t0 + 5 * MS), 1);
	assert_int_equal(e.fires, 0);
	assert_int_equal(expire(&lg, t0 + 8 * MS - 1), 0);
	assert_int_equal(expire(&lg, t0 + 8 * MS), 1);
	assert_int_equal(e.fires, 1);

	/* f moves g, due in the same call, into the past: g fires in the next call. */
	f.act = ACT_RESCHED_OTHER;
	f.other = &g;
	f.arg = 1;
	tw_schedule(&tw, &f.e, t0 + 9 * MS);
	tw_schedule(&tw, &g.e, t0 + 9 * MS + 2 * TICK);
	assert_int_equal(expire(&lg, t0 + 10 * MS), 1);
	assert_int_equal(g.fires, 0);
	assert_int_equal(expire(&lg, t0 + 10 * MS), 1);
	assert_int_equal(g.fires, 1);

	/* Even scheduled again at the same deadline, a due entry waits for the next call. */
	f.arg = t0 + 10 * MS + 3 * TICK;
	tw_schedule(&tw, &f.e, t0 + 10 * MS + TICK);
	tw_schedule(&tw, &g.e, f.arg);
	assert_int_equal(expire(&lg, t0 + 10 * MS + 4 * TICK), 1);
	assert_int_equal(g.fires, 1);
	assert_true(tw_armed(&g.e));
	assert_int_equal(expire(&lg, t0 + 10 * MS + 4 * TICK), 1);
	assert_int_equal(g.fires, 2);

	/* A callback cancelling itself (already disarmed) changes nothing. */
	f.act = ACT_CANCEL_OTHER;
	f.other = &f;
	tw_schedule(&tw, &f.e, t0 + 11 * MS);
	tw_schedule(&tw, &g.e, t0 + 11 * MS);
	assert_int_equal(expire(&lg, t0 + 11 * MS), 2);
	assert_int_equal(tw_count(&tw), 0);

	/* Freeing: itself, and another due one after cancelling it (ASan watches). */
	self_freeing->act = ACT_FREE_SELF;
	killer->act = ACT_CANCEL_FREE_OTHER;
	killer->other = victim;
	tw_schedule(&tw, &self_freeing->e, t0 + 12 * MS);
	tw_schedule(&tw, &killer->e, t0 + 12 * MS);
	tw_schedule(&tw, &victim->e, t0 + 12 * MS + 3 * TICK);
	assert_int_equal(expire(&lg, t0 + 13 * MS), 2);
	assert_int_equal(killer->fires, 1);
	assert_int_equal(tw_count(&tw), 0);
	free(killer);
}

/* Hours ahead, beyond the reach (~19.5 h), and UINT64_MAX: stepping or in one jump. */
static void test_far_future(void **state)
{
	static struct timer_wheel tw;
	static struct log lg;
	static struct item it[16];
	const uint64_t t0 = 1000 * SEC + 17;
	const uint64_t ahead[] = {HOUR,	      5 * HOUR + 3,	   19 * HOUR, (1ull << 46) - 1,
				  1ull << 46, (1ull << 46) + TICK, 30 * HOUR, 100 * HOUR + 1,
				  1000 * HOUR};
	const unsigned n = ARRAY_SIZE(ahead);

	(void)state;
	for (unsigned pass = 0; pass < 2; pass++) {
		tw_init(&tw, t0);
		lg = (struct log){.tw = &tw};
		for (unsigned i = 0; i < n; i++) {
			item_init(&it[i], i);
			tw_schedule(&tw, &it[i].e, t0 + ahead[i]);
		}
		item_init(&it[n], n);
		tw_schedule(&tw, &it[n].e, UINT64_MAX);
		assert_true(tw_next_deadline(&tw) <= t0 + HOUR);
		if (pass == 0) {
			/*
			 * A call every 10 s for 1001 hours: each fires in the first call past it.
			 */
			for (uint64_t now = t0; now <= t0 + 1001 * HOUR; now += 10 * SEC) {
				expire(&lg, now);
				for (unsigned i = 0; i < n; i++)
					assert_int_equal(it[i].fires, it[i].e.deadline <= now);
			}
			for (unsigned i = 0; i < n; i++)
				assert_true(it[i].fired_at - it[i].e.deadline < 10 * SEC);
		} else {
			assert_int_equal(expire(&lg, t0 + 1001 * HOUR), n);
		}
		assert_int_equal(it[n].fires, 0);
		assert_int_equal(tw_count(&tw), 1);
		assert_true(tw_next_deadline(&tw) > t0 + 1001 * HOUR);
		tw_cancel(&tw, &it[n].e);
		assert_int_equal(tw_count(&tw), 0);
	}
}

/* Deadlines in the past fire in the next call, whatever the clock did. */
static void test_past(void **state)
{
	static struct timer_wheel tw;
	static struct log lg;
	struct item it[6];
	const uint64_t t0 = 10 * SEC + 5;
	const uint64_t d[] = {0, 1, t0 - HOUR / 1000, t0 - MS, t0 - 1, t0};

	(void)state;
	tw_init(&tw, t0);
	lg = (struct log){.tw = &tw};
	for (unsigned i = 0; i < ARRAY_SIZE(it); i++) {
		item_init(&it[i], i);
		tw_schedule(&tw, &it[i].e, d[i]);
	}
	assert_true(tw_next_deadline(&tw) == 0);
	assert_int_equal(expire(&lg, t0), ARRAY_SIZE(it));

	/* Long after: an idle hour, then a deadline from before it. */
	assert_int_equal(expire(&lg, t0 + HOUR), 0);
	tw_schedule(&tw, &it[0].e, t0);
	assert_int_equal(expire(&lg, t0 + HOUR), 1);

	/* A clock behind the wheel's: compared by deadline all the same. */
	tw_init(&tw, t0);
	tw_schedule(&tw, &it[1].e, t0 + 5);
	tw_schedule(&tw, &it[2].e, t0 - 2 * SEC);
	assert_int_equal(expire(&lg, t0 - 3 * SEC), 0);
	assert_int_equal(expire(&lg, t0 - 2 * SEC), 1);
	assert_int_equal(expire(&lg, t0 + 4), 0);
	assert_int_equal(expire(&lg, t0 + 5), 1);
}

/* The bound to sleep until: never after the earliest deadline, exact within the tick. */
static void test_next_deadline(void **state)
{
	static struct timer_wheel tw;
	static struct log lg;
	struct item it[4];
	const uint64_t t0 = (100000ull << TW_TICK_SHIFT) + 10;
	uint64_t nd;

	(void)state;
	tw_init(&tw, t0);
	lg = (struct log){.tw = &tw};
	for (unsigned i = 0; i < ARRAY_SIZE(it); i++)
		item_init(&it[i], i);
	assert_true(tw_next_deadline(&tw) == UINT64_MAX);
	tw_schedule(&tw, &it[0].e, t0 + 100 * US); /* level 0 */
	tw_schedule(&tw, &it[1].e, t0 + 50 * MS);  /* level 1 */
	nd = tw_next_deadline(&tw);
	assert_true(nd <= t0 + 100 * US && t0 + 100 * US - nd < TICK);
	tw_cancel(&tw, &it[0].e);
	nd = tw_next_deadline(&tw);
	assert_true(nd <= t0 + 50 * MS && t0 + 50 * MS - nd < TW_SLOTS * TICK);
	tw_schedule(&tw, &it[2].e, t0 + 7); /* the current tick: exact */
	assert_true(tw_next_deadline(&tw) == t0 + 7);
	tw_schedule(&tw, &it[3].e, t0 + 3);
	assert_true(tw_next_deadline(&tw) == t0 + 3);
	tw_cancel(&tw, &it[3].e);
	assert_true(tw_next_deadline(&tw) == t0 + 7);
	assert_int_equal(expire(&lg, t0 + 7), 1);
	nd = tw_next_deadline(&tw);
	assert_true(nd > t0 + 7 && nd < t0 + 50 * MS);
	assert_int_equal(expire(&lg, nd), 0);
	assert_int_equal(expire(&lg, t0 + 50 * MS), 1);
	assert_int_equal(it[1].fires, 1);
	assert_true(tw_next_deadline(&tw) == UINT64_MAX);
}

/*
 * A deadline beyond the reach waits in the farthest slot (timer_wheel.h):
 * alone on the wheel, the bound to sleep until is that slot's start, about
 * the reach ahead, so an idle worker wakes once a reach, not at whichever
 * nearer slot the deadline's own bits would name. It still fires on time.
 */
static void test_far_deadline_bound(void **state)
{
	static struct timer_wheel tw;
	static struct log lg;
	struct item it;
	const uint64_t reach = 1ull << (TW_LEVELS * TW_LEVEL_BITS + TW_TICK_SHIFT);
	const uint64_t span = reach >> TW_LEVEL_BITS; /* of a slot of the last level */
	const uint64_t t0 = 1000 * SEC + 17;
	const uint64_t ahead[] = {reach + span, reach + 3 * span + 5, 30 * HOUR, 100 * HOUR + 1};

	(void)state;
	for (unsigned i = 0; i < ARRAY_SIZE(ahead); i++) {
		uint64_t nd;

		tw_init(&tw, t0);
		lg = (struct log){.tw = &tw};
		item_init(&it, i);
		tw_schedule(&tw, &it.e, t0 + ahead[i]);
		nd = tw_next_deadline(&tw);
		assert_true(nd >= t0 + reach - span && nd <= t0 + reach);
		assert_int_equal(expire(&lg, nd), 0);
		assert_int_equal(expire(&lg, t0 + ahead[i] - 1), 0);
		assert_int_equal(expire(&lg, t0 + ahead[i]), 1);
	}
}

/* A budget stops the call; what is left stays due for the next one. */
static void test_budget(void **state)
{
	static struct timer_wheel tw;
	static struct log lg;
	struct item it[10];
	const uint64_t t0 = SEC;

	(void)state;
	tw_init(&tw, t0);
	lg = (struct log){.tw = &tw, .now = t0 + MS};
	for (unsigned i = 0; i < ARRAY_SIZE(it); i++) {
		item_init(&it[i], i);
		tw_schedule(&tw, &it[i].e, t0 + i * 100 * US);
	}
	assert_int_equal(tw_expire(&tw, t0 + MS, record, &lg, 3), 3);
	assert_int_equal(tw_count(&tw), 7);
	assert_int_equal(tw_expire(&tw, t0 + MS, record, &lg, 0), 0);
	assert_true(tw_next_deadline(&tw) <= t0 + 3 * 100 * US);
	assert_int_equal(expire(&lg, t0 + MS), 7);
	for (unsigned i = 0; i < ARRAY_SIZE(it); i++)
		assert_int_equal(it[i].fires, 1);
	assert_int_equal(tw_count(&tw), 0);
}

/* ---- random operations against a reference ---- */

#define R_ITEMS 2000
#define R_OPS	100000

struct ref_ent {
	uint64_t d;
	unsigned id;
};

static struct rnd_state {
	struct timer_wheel tw;
	struct tw_entry e[R_ITEMS];
	struct ref_ent ref[R_ITEMS]; /* armed entries by (deadline, id) */
	unsigned n;
	bool armed[R_ITEMS];
	uint64_t d[R_ITEMS];
	uint64_t sched_now[R_ITEMS];			   /* the time when it was scheduled */
	unsigned sched_call[R_ITEMS], fired_call[R_ITEMS]; /* call number, 0: outside */
	uint64_t x, t0, now, prev_now;
	unsigned call, fired_now;
	bool in_call, quiet;
	unsigned long fires, schedules;
} R;

static uint64_t rnd(void)
{
	/* xorshift64* */
	R.x ^= R.x >> 12;
	R.x ^= R.x << 25;
	R.x ^= R.x >> 27;
	return R.x * 2685821657736338717ull;
}

static unsigned ref_find(uint64_t d, unsigned id)
{
	unsigned lo = 0, hi = R.n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (R.ref[mid].d < d || (R.ref[mid].d == d && R.ref[mid].id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void ref_remove(unsigned id)
{
	unsigned i;

	if (!R.armed[id])
		return;
	i = ref_find(R.d[id], id);
	assert_true(i < R.n && R.ref[i].id == id);
	memmove(&R.ref[i], &R.ref[i + 1], (R.n - i - 1) * sizeof(R.ref[0]));
	R.n--;
	R.armed[id] = false;
}

static void r_schedule(unsigned id, uint64_t d)
{
	unsigned i;

	ref_remove(id);
	i = ref_find(d, id);
	memmove(&R.ref[i + 1], &R.ref[i], (R.n - i) * sizeof(R.ref[0]));
	R.ref[i] = (struct ref_ent){.d = d, .id = id};
	R.n++;
	R.armed[id] = true;
	R.d[id] = d;
	R.sched_now[id] = R.now;
	R.sched_call[id] = R.in_call ? R.call : 0;
	R.schedules++;
	tw_schedule(&R.tw, &R.e[id], d);
}

static void r_cancel(unsigned id)
{
	ref_remove(id);
	tw_cancel(&R.tw, &R.e[id]);
}

static uint64_t pick_deadline(void)
{
	unsigned r = (unsigned)(rnd() % 100);

	if (r < 10)
		return R.now - rnd() % (R.now - R.t0 + 1); /* past, or now */
	if (r < 50)
		return R.now + 1 + rnd() % (200 * US);
	if (r < 80)
		return R.now + 1 + rnd() % (50 * MS);
	if (r < 95)
		return R.now + 1 + rnd() % (5 * SEC);
	return R.now + 1 + rnd() % (40 * HOUR); /* some beyond the reach */
}

static void r_fire(struct tw_entry *e, void *ctx)
{
	unsigned id = (unsigned)(e - R.e);

	(void)ctx;
	assert_true(id < R_ITEMS);
	assert_false(tw_armed(e));
	assert_true(R.armed[id]);		 /* armed in the reference: not fired twice */
	assert_true(R.d[id] == e->deadline);	 /* at the deadline it was last given */
	assert_true(e->deadline <= R.now);	 /* never early */
	assert_true(R.fired_call[id] != R.call); /* at most once per call */
	assert_true(R.sched_call[id] != R.call); /* not scheduled by this call's callbacks */
	if (R.d[id] > R.sched_now[id] && R.sched_call[id] == 0) {
		/* It was not due at the previous call, so it is late by at most one step. */
		assert_true(R.now - R.d[id] <= R.now - R.prev_now);
		if (R.now - R.prev_now <= TICK)
			assert_true(R.now - R.d[id] <= TICK);
	}
	ref_remove(id);
	R.fired_call[id] = R.call;
	R.fired_now++;
	R.fires++;
	if (R.quiet)
		return;
	switch (rnd() % 10) {
	case 0:
	case 1:
		r_schedule(id, pick_deadline()); /* itself, maybe already due */
		break;
	case 2:
		r_cancel((unsigned)(rnd() % R_ITEMS));
		break;
	case 3:
		r_schedule((unsigned)(rnd() % R_ITEMS), pick_deadline());
		break;
	default:
		break;
	}
}

static void r_expire(uint64_t now)
{
	unsigned got;

	R.prev_now = R.now;
	R.now = now;
	R.call++;
	R.fired_now = 0;
	R.in_call = true;
	got = tw_expire(&R.tw, now, r_fire, NULL, UINT_MAX);
	R.in_call = false;
	assert_int_equal(got, R.fired_now);
	assert_int_equal(tw_count(&R.tw), R.n);
	/* Nothing lost: whatever is due now was scheduled by this very call. */
	for (unsigned i = 0; i < R.n && R.ref[i].d <= now; i++)
		assert_int_equal(R.sched_call[R.ref[i].id], R.call);
}

static void test_random_against_reference(void **state)
{
	(void)state;
	memset(&R, 0, sizeof(R));
	R.x = 0x9e3779b97f4a7c15ull; /* fixed seed: a failure reproduces */
	R.t0 = R.now = R.prev_now = 7 * SEC + 12345;
	tw_init(&R.tw, R.now);
	for (unsigned i = 0; i < R_ITEMS; i++)
		tw_entry_init(&R.e[i]);
	for (unsigned op = 0; op < R_OPS; op++) {
		unsigned r = (unsigned)(rnd() % 100);

		if (r < 45) {
			r_schedule((unsigned)(rnd() % R_ITEMS), pick_deadline());
		} else if (r < 60) {
			r_cancel((unsigned)(rnd() % R_ITEMS));
		} else {
			/* Fine steps (at most a tick), now and then a jump of up to 20 ms. */
			uint64_t step = rnd() % 50 ? rnd() % (TICK + 1) : rnd() % (20 * MS);

			r_expire(R.now + step);
		}
		if (op % 97 == 0) {
			uint64_t nd = tw_next_deadline(&R.tw);

			assert_true(R.n ? nd <= R.ref[0].d : nd == UINT64_MAX);
		}
	}
	/* Then hours pass, in jumps: everything left fires, once. */
	R.quiet = true;
	while (R.n)
		r_expire(R.now + HOUR);
	assert_int_equal(tw_count(&R.tw), 0);
	assert_true(tw_next_deadline(&R.tw) == UINT64_MAX);
	assert_true(R.fires > R_OPS / 4);
	print_message("random: %lu schedules, %lu fires, %u calls\n", R.schedules, R.fires, R.call);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_schedule_cancel),
	    cmocka_unit_test(test_reschedule),
	    cmocka_unit_test(test_level_edges),
	    cmocka_unit_test(test_order),
	    cmocka_unit_test(test_callbacks),
	    cmocka_unit_test(test_far_future),
	    cmocka_unit_test(test_past),
	    cmocka_unit_test(test_next_deadline),
	    cmocka_unit_test(test_far_deadline_bound),
	    cmocka_unit_test(test_budget),
	    cmocka_unit_test(test_random_against_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
