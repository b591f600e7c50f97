/*
 * test_net_neigh.c - the neighbour table (net/neigh.c): open addressing
 * with linear probing and backward-shift deletion. Entries whose home
 * slots collide (including runs that wrap from the last slot to the first)
 * stay findable through any sequence of inserts and removals, and a full
 * table returns NULL. Home slots are discovered through the public API (an
 * insert into an empty table lands on the home slot), so the tests do not
 * depend on the hash function. Pure data structure: no EAL, no mbufs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/neigh.h"

#define MASK (NEIGH_TABLE_SIZE - 1)

static struct neigh_table scratch;

/* The slot @ip hashes to: where it lands in an empty table. */
static unsigned home_of(uint32_t ip)
{
	struct neigh_entry *e = neigh_get(&scratch, ip);
	unsigned s;

	assert_non_null(e);
	s = (unsigned)(e - scratch.e);
	neigh_remove(&scratch, e);
	assert_int_equal(scratch.used, 0);
	return s;
}

/* Fill @out with @n addresses whose home slot is @slot, searching from @from. */
static uint32_t find_homed(unsigned slot, uint32_t *out, unsigned n, uint32_t from)
{
	uint32_t ip = from;

	for (unsigned k = 0; k < n; ip++)
		if (home_of(ip) == slot)
			out[k++] = ip;
	return ip;
}

/*
 * Structural invariant of linear probing: every live entry is reachable from
 * its home slot without crossing a free slot; and find() returns it.
 */
static void check_table(struct neigh_table *t)
{
	unsigned live = 0;

	for (unsigned s = 0; s < NEIGH_TABLE_SIZE; s++) {
		const struct neigh_entry *e = &t->e[s];
		unsigned h;

		if (e->state == NEIGH_FREE)
			continue;
		live++;
		h = home_of(e->ip);
		for (unsigned k = h; k != s; k = (k + 1) & MASK)
			assert_int_not_equal(t->e[k].state, NEIGH_FREE);
		assert_ptr_equal(neigh_find(t, e->ip), e);
	}
	assert_int_equal(live, t->used);
}

static void test_get_find_confirm(void **state)
{
	static const struct rte_ether_addr mac = {{2, 0, 0, 0, 0, 7}};
	struct neigh_table *t = calloc(1, sizeof(*t));
	struct neigh_entry *e;

	(void)state;
	assert_null(neigh_find(t, 0x0a000002));
	e = neigh_get(t, 0x0a000002);
	assert_non_null(e);
	assert_int_equal(e->state, NEIGH_INCOMPLETE);
	assert_int_equal(e->ip, 0x0a000002);
	assert_int_equal(e->n_hold, 0);
	assert_int_equal(e->tries, 0);
	assert_int_equal(t->used, 1);
	assert_ptr_equal(neigh_get(t, 0x0a000002), e); /* no duplicate */
	assert_ptr_equal(neigh_find(t, 0x0a000002), e);
	assert_int_equal(t->used, 1);

	e->tries = 3;
	neigh_confirm(e, &mac, 12345);
	assert_int_equal(e->state, NEIGH_REACHABLE);
	assert_memory_equal(&e->mac, &mac, 6);
	assert_int_equal(e->expires_ns, 12345);
	assert_int_equal(e->tries, 0);

	neigh_remove(t, e);
	assert_int_equal(t->used, 0);
	assert_null(neigh_find(t, 0x0a000002));
	free(t);
}

/* One long collision run: remove first, middle and last members in turn. */
static void test_collision_chain(void **state)
{
	enum { N = 12 };
	struct neigh_table *t = calloc(1, sizeof(*t));
	uint32_t same[N], next[3];
	const unsigned slot = 100;
	static const unsigned order[N] = {0, 11, 5, 6, 1, 10, 2, 9, 3, 8, 4, 7};
	bool gone[N] = {false};

	(void)state;
	find_homed(slot, same, N, 1);
	find_homed(slot + 1, next, 3, 1); /* their home is inside the run */
	for (unsigned i = 0; i < N; i++) {
		struct neigh_entry *e = neigh_get(t, same[i]);

		assert_non_null(e);
		/* linear probing; the three slot-101 entries join the run after same[2] */
		assert_int_equal(e - t->e, slot + i + (i > 2 ? 3 : 0));
		if (i == 2)
			for (unsigned k = 0; k < 3; k++)
				assert_non_null(neigh_get(t, next[k]));
	}
	check_table(t);
	for (unsigned r = 0; r < N; r++) {
		unsigned i = order[r];

		neigh_remove(t, neigh_find(t, same[i]));
		gone[i] = true;
		check_table(t);
		for (unsigned k = 0; k < N; k++) {
			if (gone[k])
				assert_null(neigh_find(t, same[k]));
			else
				assert_non_null(neigh_find(t, same[k]));
		}
		for (unsigned k = 0; k < 3; k++)
			assert_non_null(neigh_find(t, next[k]));
	}
	assert_int_equal(t->used, 3);
	/* Everything shifted back: the slot-101 entries are at home or just after. */
	for (unsigned k = 0; k < 3; k++)
		assert_true(neigh_find(t, next[k]) - t->e >= slot + 1 &&
			    neigh_find(t, next[k]) - t->e <= slot + 3);
	free(t);
}

/* A run starting in the last slots wraps to slot 0; deletion shifts across the wrap. */
static void test_wraparound(void **state)
{
	struct neigh_table *t = calloc(1, sizeof(*t));
	uint32_t last[5], first[3];
	struct neigh_entry *e;

	(void)state;
	find_homed(MASK, last, 5, 1); /* home 255: occupy 255, 0, 1, 2, 3 */
	find_homed(0, first, 3, 1);   /* home 0: pushed to 4, 5, 6 */
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(neigh_get(t, last[i]) - t->e, (i + MASK) & MASK);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(neigh_get(t, first[i]) - t->e, 4 + i);
	check_table(t);

	/* Free slot 255: the wrapped members of the run move back across the wrap. */
	neigh_remove(t, neigh_find(t, last[0]));
	check_table(t);
	e = neigh_find(t, last[1]);
	assert_int_equal(e - t->e, MASK);
	/* A home-0 entry may move into slot 3 but never into slot 255. */
	for (unsigned i = 0; i < 3; i++) {
		e = neigh_find(t, first[i]);
		assert_non_null(e);
		assert_true(e - t->e < MASK);
	}
	neigh_remove(t, neigh_find(t, last[3]));
	neigh_remove(t, neigh_find(t, first[0]));
	check_table(t);
	assert_int_equal(t->used, 5);
	free(t);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/*
 * Random inserts and removals over addresses clustered on a few home slots
 * around the wrap, against a reference set: find() agrees after every step.
 */
static void test_random_against_model(void **state)
{
	enum { IPS = 240, OPS = 20000 };
	struct neigh_table *t = calloc(1, sizeof(*t));
	static uint32_t ip[IPS];
	static bool present[IPS];
	unsigned n = 0, live = 0;

	(void)state;
	for (uint32_t cand = 1; n < IPS; cand++) {
		unsigned h = home_of(cand);

		if (h >= NEIGH_TABLE_SIZE - 6 || h < 6 || (h >= 120 && h < 124))
			ip[n++] = cand;
	}
	for (unsigned op = 0; op < OPS; op++) {
		unsigned i = rnd() % IPS;

		if (present[i]) {
			neigh_remove(t, neigh_find(t, ip[i]));
			present[i] = false;
			live--;
		} else {
			struct neigh_entry *e = neigh_get(t, ip[i]);

			if (!e) {
				assert_true(live >= NEIGH_TABLE_SIZE / 2); /* only when full */
				continue;
			}
			assert_int_equal(e->ip, ip[i]);
			present[i] = true;
			live++;
		}
		assert_int_equal(t->used, live);
		if (op % 50 == 0 || op > OPS - 100)
			check_table(t);
		for (unsigned k = 0; k < IPS; k++) {
			struct neigh_entry *e = neigh_find(t, ip[k]);

			if (present[k])
				assert_true(e && e->ip == ip[k]);
			else
				assert_null(e);
		}
	}
	free(t);
}

/*
 * neigh.h: neigh_get() returns NULL when the table is full; existing
 * entries are still found (and returned by neigh_get) and a removal makes
 * room again.
 */
/*
 * A full table makes room by evicting its least recently used entry that
 * has no packets waiting (an idle neighbour can always be asked again);
 * only when every entry holds packets does neigh_get() fail.
 */
static void test_table_full(void **state)
{
	struct neigh_table *t = calloc(1, sizeof(*t));
	unsigned n = 0;
	uint32_t ip = 0x0a000000;
	struct neigh_entry *e;

	(void)state;
	for (n = 0; n < NEIGH_TABLE_SIZE * 3 / 4; n++) {
		e = neigh_get(t, ip + n);
		assert_non_null(e);
		e->last_used_ns = 1000 + n; /* entry 0 is the least recently used */
	}
	assert_int_equal(t->used, n);
	check_table(t);
	/* Full: the next neighbour evicts entry 0, and only it. */
	e = neigh_get(t, 0xc0000201);
	assert_non_null(e);
	assert_int_equal(t->used, n);
	assert_null(neigh_find(t, ip));
	for (unsigned i = 1; i < n; i++)
		assert_non_null(neigh_find(t, ip + i));
	check_table(t);
	/* Every entry has packets waiting: nothing can be evicted. */
	for (unsigned i = 0; i < NEIGH_TABLE_SIZE; i++)
		if (t->e[i].state != NEIGH_FREE)
			t->e[i].n_hold = 1;
	assert_null(neigh_get(t, 0xc0000202));
	for (unsigned i = 0; i < NEIGH_TABLE_SIZE; i++)
		t->e[i].n_hold = 0;
	check_table(t);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_get_find_confirm), cmocka_unit_test(test_collision_chain),
	    cmocka_unit_test(test_wraparound),	     cmocka_unit_test(test_random_against_model),
	    cmocka_unit_test(test_table_full),
	};

	return cmocka_run_group_tests_name("net/neigh", tests, NULL, NULL);
}
