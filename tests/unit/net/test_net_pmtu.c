/*
 * test_net_pmtu.c - the path MTU cache (net/pmtu.c): only a lower MTU is
 * taken (RFC 1191 3), the same one again restarts its lifetime, an entry
 * is forgotten when its lifetime is over (RFC 1191 6.3), and a destination whose PMTU_WAYS slots
 * are all taken evicts the one expiring first and says which; a probe's proof raises an entry or
 * forgets it (RFC 4821). Home slots are
 * found through the public API (a destination learned into an empty
 * cache lands on its home slot), so the tests do not depend on the hash.
 * Pure data structure: no EAL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/pmtu.h"

#define S   1000000000ull
#define MS  1000000ull
#define DST 0x0a000002u /* 10.0.0.2 */

static struct pmtu_cache pc, scratch;

/* pmtu_learn() where nothing may be evicted. */
static bool learn(struct pmtu_cache *c, uint32_t dst, uint16_t mtu, uint64_t now)
{
	uint32_t evicted = 1;
	bool lowered = pmtu_learn(c, dst, mtu, now, 0, &evicted);

	assert_int_equal(evicted, 0);
	return lowered;
}

static void test_learn_lower_only(void **state)
{
	(void)state;
	pmtu_init(&pc, 0);
	assert_int_equal(pc.lifetime_ns, PMTU_LIFETIME_NS);
	assert_int_equal(pmtu_get(&pc, DST, 0), 0);
	assert_false(learn(&pc, DST, 0, 0)); /* nothing to learn */
	assert_int_equal(pc.used, 0);

	assert_true(learn(&pc, DST, 1400, 1 * S));
	assert_int_equal(pmtu_get(&pc, DST, 1 * S), 1400);
	assert_int_equal(pmtu_get(&pc, DST + 1, 1 * S), 0);
	/* RFC 1191 3: a higher report never raises the estimate */
	assert_false(learn(&pc, DST, 1450, 2 * S));
	assert_int_equal(pmtu_get(&pc, DST, 2 * S), 1400);
	assert_true(learn(&pc, DST, 1280, 3 * S));
	assert_int_equal(pmtu_get(&pc, DST, 3 * S), 1280);
	assert_int_equal(pc.used, 1);
	assert_int_equal(pc.stats.learned, 1);
	assert_int_equal(pc.stats.lowered, 1);
	assert_int_equal(pc.stats.refreshed, 0);
}

/* @dst's entry is in the table, expired or not (pmtu_get() hides an expired one). */
static bool held(uint32_t dst)
{
	for (unsigned i = 0; i < PMTU_SLOTS; i++)
		if (pc.e[i].mtu && pc.e[i].dst == dst)
			return true;
	return false;
}

/*
 * A lifetime of 10 s: each lowering and each repeat of the same MTU starts
 * it over; a higher report does not. At its end the entry is gone for
 * pmtu_get() at once, and pmtu_expire() purges it, and only it.
 */
static void test_lifetime(void **state)
{
	(void)state;
	pmtu_init(&pc, 10 * S);
	assert_true(learn(&pc, DST, 1400, 0));
	assert_true(learn(&pc, DST + 1, 1300, 5 * S));
	assert_int_equal(pmtu_expire(&pc, 9 * S), 0);
	assert_false(learn(&pc, DST, 1400, 8 * S)); /* the same: refreshed, to 18 s */
	assert_int_equal(pc.stats.refreshed, 1);
	assert_false(learn(&pc, DST + 1, 1500, 14 * S)); /* higher: no refresh */
	assert_int_equal(pc.stats.refreshed, 1);

	assert_int_equal(pmtu_get(&pc, DST + 1, 15 * S - 1), 1300);
	assert_int_equal(pmtu_get(&pc, DST + 1, 15 * S), 0); /* over, even before the purge */
	assert_true(held(DST + 1));
	assert_int_equal(pmtu_expire(&pc, 15 * S), 1);
	assert_false(held(DST + 1)); /* the one purged */
	assert_true(held(DST));
	assert_int_equal(pc.used, 1);
	assert_int_equal(pmtu_get(&pc, DST, 17 * S), 1400);
	assert_int_equal(pmtu_expire(&pc, 17 * S), 0);
	assert_int_equal(pmtu_expire(&pc, 18 * S), 1);
	assert_false(held(DST));
	assert_int_equal(pc.used, 0);
	assert_int_equal(pc.stats.expired, 2);
	assert_int_equal(pc.next_expiry_ns, UINT64_MAX);

	/* learned again after it was forgotten: a new entry at any MTU */
	assert_true(learn(&pc, DST, 1450, 20 * S));
	assert_int_equal(pmtu_get(&pc, DST, 20 * S), 1450);
	/* an entry over but not yet purged is taken again, as new */
	assert_true(learn(&pc, DST, 1480, 31 * S));
	assert_int_equal(pmtu_get(&pc, DST, 31 * S), 1480);
	assert_int_equal(pc.used, 1);
	assert_int_equal(pmtu_expire(&pc, 40 * S), 0);
	assert_int_equal(pmtu_expire(&pc, 41 * S), 1);
}

/*
 * A lifetime given with the lesson (a black hole's guess, held 3 s in a
 * 10 s cache) ends it sooner, and pmtu_expire() knows when; the same MTU
 * learned again with the cache's own lifetime keeps it that much longer.
 */
static void test_given_lifetime(void **state)
{
	uint32_t evicted = 1;

	(void)state;
	pmtu_init(&pc, 10 * S);
	assert_true(pmtu_learn(&pc, DST, 1400, 1 * S, 3 * S, &evicted));
	assert_int_equal(evicted, 0);
	assert_true(pmtu_learn(&pc, DST + 1, 1280, 1 * S, 3 * S, &evicted));
	assert_int_equal(pc.next_expiry_ns, 4 * S);
	assert_false(pmtu_learn(&pc, DST + 1, 1280, 2 * S, 0, &evicted)); /* confirmed */
	assert_int_equal(pmtu_get(&pc, DST, 4 * S - 1), 1400);
	assert_int_equal(pmtu_get(&pc, DST, 4 * S), 0);
	assert_int_equal(pmtu_expire(&pc, 4 * S), 1);
	assert_false(held(DST));
	assert_int_equal(pmtu_get(&pc, DST + 1, 11 * S), 1280);
	assert_int_equal(pmtu_expire(&pc, 12 * S), 1);
	assert_int_equal(pc.used, 0);

	/* A 10 s entry lowered for 3 s: forgotten, and purged, at the shorter end. */
	assert_true(pmtu_learn(&pc, DST, 1400, 20 * S, 0, &evicted));
	assert_true(pmtu_learn(&pc, DST, 1280, 21 * S, 3 * S, &evicted));
	assert_int_equal(pc.next_expiry_ns, 24 * S);
	assert_int_equal(pmtu_get(&pc, DST, 24 * S), 0);
	assert_int_equal(pmtu_expire(&pc, 24 * S), 1);
	assert_int_equal(pc.used, 0);
}

/*
 * pmtu_raise(): a probe got through, so the entry goes up to it, keeping
 * its expiry; to the interface's MTU (0), the entry is forgotten. Not
 * lower, not for a destination the cache does not know. An entry expired
 * and not yet purged is raised too (its connections still hold it).
 */
static void test_raise(void **state)
{
	(void)state;
	pmtu_init(&pc, 10 * S);
	assert_false(pmtu_raise(&pc, DST, 1400)); /* unknown */
	assert_true(learn(&pc, DST, 1280, 1 * S));
	assert_false(pmtu_raise(&pc, DST, 1280)); /* not higher */
	assert_false(pmtu_raise(&pc, DST, 1000));
	assert_true(pmtu_raise(&pc, DST, 1400));
	assert_int_equal(pmtu_get(&pc, DST, 2 * S), 1400);
	assert_int_equal(pmtu_get(&pc, DST, 11 * S), 0); /* expiry kept */
	assert_int_equal(pc.stats.raised, 1);
	assert_true(pmtu_raise(&pc, DST, 0));
	assert_int_equal(pmtu_get(&pc, DST, 3 * S), 0);
	assert_int_equal(pc.used, 0);
	assert_int_equal(pmtu_expire(&pc, 11 * S), 0); /* nothing left to expire */
	assert_int_equal(pc.stats.raised, 2);

	assert_true(learn(&pc, DST, 1280, 20 * S));
	assert_true(pmtu_raise(&pc, DST, 1400)); /* expired at 30 s, not purged */
	assert_int_equal(pmtu_expire(&pc, 30 * S), 1);
	assert_int_equal(pc.used, 0);
}

/* The slot @dst lands on in an empty cache. */
static unsigned home_of(uint32_t dst)
{
	pmtu_init(&scratch, 0);
	assert_true(learn(&scratch, dst, 1000, 0));
	for (unsigned i = 0; i < PMTU_SLOTS; i++)
		if (scratch.e[i].mtu)
			return i;
	fail();
	return 0;
}

/* Fill @out with @n destinations whose home slot is @slot. */
static void find_homed(unsigned slot, uint32_t *out, unsigned n)
{
	unsigned k = 0;

	for (uint32_t d = DST; k < n; d++)
		if (home_of(d) == slot)
			out[k++] = d;
}

/*
 * PMTU_WAYS + 1 destinations with one home slot: the last one evicts the
 * entry expiring first (d[0] was learned first, then refreshed, so it is
 * d[1], not the oldest learned) and names it; every other stays, and all
 * stay within PMTU_WAYS slots of their home.
 */
static void test_eviction(void **state)
{
	uint32_t d[PMTU_WAYS + 1], evicted;
	unsigned home = 200;

	(void)state;
	find_homed(home, d, PMTU_WAYS + 1);
	pmtu_init(&pc, 100 * S);
	for (unsigned i = 0; i < PMTU_WAYS; i++)
		assert_true(learn(&pc, d[i], (uint16_t)(1400 - i), i * S));
	assert_false(learn(&pc, d[0], 1400, 50 * S)); /* d[0] now expires last */
	assert_int_equal(pc.used, PMTU_WAYS);
	assert_int_equal(pc.stats.evicted, 0);

	assert_true(pmtu_learn(&pc, d[PMTU_WAYS], 1200, 60 * S, 0, &evicted));
	assert_int_equal(evicted, d[1]);
	assert_int_equal(pc.stats.evicted, 1);
	assert_int_equal(pc.used, PMTU_WAYS);
	assert_int_equal(pmtu_get(&pc, d[1], 60 * S), 0); /* expired first: evicted */
	assert_int_equal(pmtu_get(&pc, d[0], 60 * S), 1400);
	for (unsigned i = 2; i < PMTU_WAYS; i++)
		assert_int_equal(pmtu_get(&pc, d[i], 60 * S), 1400 - i);
	assert_int_equal(pmtu_get(&pc, d[PMTU_WAYS], 60 * S), 1200);
	/* the whole set stays within its PMTU_WAYS slots from home */
	for (unsigned i = 0; i < PMTU_SLOTS; i++)
		if (pc.e[i].mtu)
			assert_true(((i - home) & (PMTU_SLOTS - 1)) < PMTU_WAYS);
}

/*
 * A slot freed early (a probe's proof forgot its entry, pmtu_raise() to 0)
 * is free: a new destination of the set takes it rather than evicting a
 * live entry, whatever expiry the freed slot last had.
 */
static void test_forgotten_slot_reused(void **state)
{
	uint32_t d[PMTU_WAYS + 1];

	(void)state;
	find_homed(200, d, PMTU_WAYS + 1);
	pmtu_init(&pc, 100 * S);
	for (unsigned i = 0; i < PMTU_WAYS; i++)
		assert_true(learn(&pc, d[i], (uint16_t)(1400 - i), i * S));
	assert_false(learn(&pc, d[0], 1400, 50 * S)); /* d[0] now expires last */
	assert_true(pmtu_raise(&pc, d[0], 0));
	assert_int_equal(pc.used, PMTU_WAYS - 1);

	assert_true(learn(&pc, d[PMTU_WAYS], 1200, 60 * S)); /* nothing evicted */
	assert_int_equal(pc.stats.evicted, 0);
	assert_int_equal(pc.used, PMTU_WAYS);
	for (unsigned i = 1; i < PMTU_WAYS; i++)
		assert_int_equal(pmtu_get(&pc, d[i], 60 * S), 1400 - i);
	assert_int_equal(pmtu_get(&pc, d[PMTU_WAYS], 60 * S), 1200);
}

/*
 * Nine destinations of one set learned in turn, over and over (a peer
 * with nine addresses sending frag-needed for each): once the set is
 * full of young entries nothing is evicted, so there is no churn (and no
 * walk of every connection per ICMP); the newcomer is simply not cached.
 * Once an entry is PMTU_MIN_AGE_NS old it may give way again, once.
 */
static void test_eviction_churn_bounded(void **state)
{
	uint32_t d[PMTU_WAYS + 1], evicted;

	(void)state;
	find_homed(200, d, PMTU_WAYS + 1);
	pmtu_init(&pc, 0);
	for (unsigned round = 0; round < 100; round++)
		for (unsigned i = 0; i <= PMTU_WAYS; i++)
			pmtu_learn(&pc, d[i], 1000, (round * (PMTU_WAYS + 1) + i) * 10 * MS, 0,
				   &evicted);
	assert_int_equal(pc.stats.evicted, 0);
	assert_int_equal(pc.stats.refused, 100);
	assert_int_equal(pmtu_get(&pc, d[PMTU_WAYS], 9 * S), 0);
	assert_true(pmtu_learn(&pc, d[PMTU_WAYS], 1000, PMTU_MIN_AGE_NS, 0, &evicted));
	assert_int_equal(evicted, d[0]);
	assert_false(pmtu_learn(&pc, d[0], 1000, PMTU_MIN_AGE_NS + 1, 0, &evicted));
	assert_int_equal(pc.stats.evicted, 1);
}

/*
 * Many destinations, each learned PMTU_MIN_AGE_NS after the one before
 * (all live: the lifetime covers them): the count stays right, and what
 * is found is what was learned.
 */
static void test_many(void **state)
{
	const uint64_t step = PMTU_MIN_AGE_NS, end = 2 * PMTU_SLOTS * step;
	unsigned found = 0, named = 0;
	uint32_t evicted;

	(void)state;
	pmtu_init(&pc, 2 * end);
	for (uint32_t i = 0; i < 2 * PMTU_SLOTS; i++) {
		assert_true(pmtu_learn(&pc, DST + i * 7919, (uint16_t)(600 + i % 800), i * step, 0,
				       &evicted));
		if (evicted) { /* an earlier destination, no longer found */
			assert_int_equal((evicted - DST) % 7919, 0);
			assert_int_equal(pmtu_get(&pc, evicted, i * step), 0);
			named++;
		}
	}
	assert_int_equal(named, pc.stats.evicted);
	assert_int_equal(pc.stats.learned, 2 * PMTU_SLOTS);
	assert_int_equal(pc.used + pc.stats.evicted, 2 * PMTU_SLOTS);
	assert_true(pc.used <= PMTU_SLOTS);
	for (uint32_t i = 0; i < 2 * PMTU_SLOTS; i++) {
		uint16_t m = pmtu_get(&pc, DST + i * 7919, end);

		if (m) {
			assert_int_equal(m, 600 + i % 800);
			found++;
		}
	}
	assert_int_equal(found, pc.used);
	/* the last learned is always there */
	assert_int_equal(pmtu_get(&pc, DST + (2 * PMTU_SLOTS - 1) * 7919, 0), 600 + 511 % 800);
	assert_int_equal(pmtu_expire(&pc, 3 * end), found);
	assert_int_equal(pc.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_learn_lower_only),
	    cmocka_unit_test(test_lifetime),
	    cmocka_unit_test(test_given_lifetime),
	    cmocka_unit_test(test_raise),
	    cmocka_unit_test(test_eviction),
	    cmocka_unit_test(test_forgotten_slot_reused),
	    cmocka_unit_test(test_many),
	    cmocka_unit_test(test_eviction_churn_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
