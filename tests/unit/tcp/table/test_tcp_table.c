/*
 * test_tcp_table.c - tcp/tcp_table.c: the 4-tuple hash (insert, lookup,
 * remove, duplicates, capacity, 100 000 connections), the listener table,
 * RFC 6056 3.3.3 ephemeral port selection and RFC 6528 initial sequence
 * numbers.
 *
 * Some properties are about keyed random functions (different secrets or
 * destinations give different values); each such assertion is written to
 * fail by chance with probability below about 1e-7, and says so.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "tcp/tcp_table.h"

#define IP(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (d))

#define BIG_N 100000u

static int eal_init_once(void)
{
	static int done;
	/*
	 * --in-memory cannot be combined with --no-huge in DPDK 22.11;
	 * --no-shconf keeps the EAL from creating run-time files.
	 */
	char *argv[] = {"t",	       "--no-pci",	 "--no-huge", "-m", "512",
			"--no-shconf", "--no-telemetry", "-l",	      "0",  "--log-level=3",
			NULL};

	if (done)
		return done > 0 ? 0 : -1;
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		done = -1;
		return -1;
	}
	done = 1;
	return 0;
}

static int group_setup(void **state)
{
	(void)state;
	return eal_init_once();
}

/* rte_hash names are process-global: every table gets a fresh one. */
static struct tcp_table *new_table(unsigned max_conns)
{
	static unsigned seq;
	char name[TCP_TABLE_NAME_MAX + 1];
	struct tcp_table *t;

	snprintf(name, sizeof(name), "tt%u", seq++);
	t = tcp_table_create(name, max_conns);
	assert_non_null(t);
	return t;
}

static int setup_small(void **state)
{
	*state = new_table(1024);
	return 0;
}

static int teardown_table(void **state)
{
	tcp_table_free(*state);
	return 0;
}

static struct tcp_4tuple tuple(uint32_t laddr, uint16_t lport, uint32_t raddr, uint16_t rport)
{
	struct tcp_4tuple k;

	memset(&k, 0, sizeof(k));
	k.laddr = laddr;
	k.lport = lport;
	k.raddr = raddr;
	k.rport = rport;
	return k;
}

/* The i-th of the 100 000 tuples: distinct remote addresses and ports. */
static struct tcp_4tuple big_tuple(unsigned i)
{
	return tuple(IP(10, 0, 0, 1), (uint16_t)(1024 + i % 60000), IP(10, 128, 0, 0) + i / 7,
		     (uint16_t)(80 + i % 7));
}

static double elapsed_ns(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e9 + (double)(b->tv_nsec - a->tv_nsec);
}

/* ---- the 4-tuple hash ---- */

static void test_insert_lookup_remove(void **state)
{
	struct tcp_table *t = *state;
	struct tcp_4tuple k = tuple(IP(10, 0, 0, 1), 40000, IP(10, 0, 0, 2), 80);
	int conn;

	assert_int_equal(tcp_table_count(t), 0);
	assert_null(tcp_table_lookup(t, &k));
	assert_int_equal(tcp_table_insert(t, &k, &conn), 0);
	assert_ptr_equal(tcp_table_lookup(t, &k), &conn);
	assert_int_equal(tcp_table_count(t), 1);

	assert_int_equal(tcp_table_remove(t, &k), 0);
	assert_null(tcp_table_lookup(t, &k));
	assert_int_equal(tcp_table_count(t), 0);
	assert_int_equal(tcp_table_remove(t, &k), -ENOENT);

	/* The slot is reusable. */
	assert_int_equal(tcp_table_insert(t, &k, &conn), 0);
	assert_ptr_equal(tcp_table_lookup(t, &k), &conn);
}

/* Every field is part of the key; a lookup key built on the stack anew works. */
static void test_every_field_counts(void **state)
{
	struct tcp_table *t = *state;
	const struct tcp_4tuple k[] = {
	    tuple(IP(10, 0, 0, 1), 40000, IP(10, 0, 0, 2), 80),
	    tuple(IP(10, 0, 0, 9), 40000, IP(10, 0, 0, 2), 80), /* laddr */
	    tuple(IP(10, 0, 0, 1), 40001, IP(10, 0, 0, 2), 80), /* lport */
	    tuple(IP(10, 0, 0, 1), 40000, IP(10, 0, 0, 9), 80), /* raddr */
	    tuple(IP(10, 0, 0, 1), 40000, IP(10, 0, 0, 2), 81), /* rport */
	    tuple(IP(10, 0, 0, 2), 80, IP(10, 0, 0, 1), 40000), /* reversed */
	    tuple(IP(10, 0, 0, 1), 80, IP(10, 0, 0, 2), 40000), /* ports swapped */
	};
	const size_t n = sizeof(k) / sizeof(k[0]);
	int conns[sizeof(k) / sizeof(k[0])];

	for (size_t i = 0; i < n; i++)
		assert_int_equal(tcp_table_insert(t, &k[i], &conns[i]), 0);
	assert_int_equal(tcp_table_count(t), n);
	for (size_t i = 0; i < n; i++) {
		struct tcp_4tuple q = tuple(k[i].laddr, k[i].lport, k[i].raddr, k[i].rport);

		assert_ptr_equal(tcp_table_lookup(t, &q), &conns[i]);
	}
	assert_int_equal(tcp_table_remove(t, &k[3]), 0);
	assert_null(tcp_table_lookup(t, &k[3]));
	for (size_t i = 0; i < n; i++)
		if (i != 3)
			assert_ptr_equal(tcp_table_lookup(t, &k[i]), &conns[i]);
}

/* A duplicate is refused and leaves the first connection in place. */
static void test_duplicate_eexist(void **state)
{
	struct tcp_table *t = *state;
	struct tcp_4tuple k = tuple(IP(192, 168, 1, 1), 50000, IP(192, 168, 1, 2), 443);
	int first, second;

	assert_int_equal(tcp_table_insert(t, &k, &first), 0);
	assert_int_equal(tcp_table_insert(t, &k, &second), -EEXIST);
	assert_int_equal(tcp_table_insert(t, &k, &first), -EEXIST);
	assert_ptr_equal(tcp_table_lookup(t, &k), &first);
	assert_int_equal(tcp_table_count(t), 1);
}

static void test_remove_missing_enoent(void **state)
{
	struct tcp_table *t = *state;
	struct tcp_4tuple k = tuple(IP(10, 0, 0, 1), 1, IP(10, 0, 0, 2), 2);
	struct tcp_4tuple other = tuple(IP(10, 0, 0, 1), 1, IP(10, 0, 0, 2), 3);
	int conn;

	assert_int_equal(tcp_table_remove(t, &k), -ENOENT);
	assert_int_equal(tcp_table_insert(t, &k, &conn), 0);
	assert_int_equal(tcp_table_remove(t, &other), -ENOENT);
	assert_int_equal(tcp_table_count(t), 1);
}

static void test_null_conn_einval(void **state)
{
	struct tcp_table *t = *state;
	struct tcp_4tuple k = tuple(IP(10, 0, 0, 1), 1, IP(10, 0, 0, 2), 2);

	assert_int_equal(tcp_table_insert(t, &k, NULL), -EINVAL);
	assert_int_equal(tcp_table_count(t), 0);
}

/*
 * Capacity is exactly max_conns (at least 8); -ENOSPC beyond. At a power of
 * two every bucket slot is needed (rte_hash has max_conns / 8 buckets of 8):
 * plain cuckoo hashing gives up before 100% load, the extendable buckets
 * (RTE_HASH_EXTRA_FLAGS_EXT_TABLE) take the overflow.
 */
static void test_capacity_enospc(void **state)
{
	const unsigned sizes[] = {8, 100, 3, 4096, 65536};
	static int conn;

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct tcp_table *t = new_table(sizes[s]);
		unsigned cap = sizes[s] < 8 ? 8 : sizes[s];
		struct tcp_4tuple k;

		for (unsigned i = 0; i < cap; i++) {
			k = big_tuple(i);
			assert_int_equal(tcp_table_insert(t, &k, &conn), 0);
		}
		assert_int_equal(tcp_table_count(t), cap);
		k = big_tuple(cap);
		assert_int_equal(tcp_table_insert(t, &k, &conn), -ENOSPC);
		assert_null(tcp_table_lookup(t, &k));
		k = big_tuple(0);
		assert_int_equal(tcp_table_remove(t, &k), 0);
		k = big_tuple(cap);
		assert_int_equal(tcp_table_insert(t, &k, &conn), 0);
		assert_int_equal(tcp_table_count(t), cap);
		tcp_table_free(t);
	}
}

static void test_create_errors(void **state)
{
	char name[64];
	struct tcp_table *t;

	(void)state;
	errno = 0;
	assert_null(tcp_table_create("tt_zero", 0));
	assert_int_equal(errno, EINVAL);

	memset(name, 'n', sizeof(name));
	name[TCP_TABLE_NAME_MAX + 1] = '\0';
	errno = 0;
	assert_null(tcp_table_create(name, 16));
	assert_int_equal(errno, ENAMETOOLONG);

	/* The longest name works, and names are unique. */
	name[TCP_TABLE_NAME_MAX] = '\0';
	t = tcp_table_create(name, 16);
	assert_non_null(t);
	errno = 0;
	assert_null(tcp_table_create(name, 16));
	assert_int_equal(errno, EEXIST);
	tcp_table_free(t);
	/* Freed: the name can be used again. */
	t = tcp_table_create(name, 16);
	assert_non_null(t);
	tcp_table_free(t);
	tcp_table_free(NULL);
}

/*
 * 100 000 connections in a table of exactly that capacity: every insert
 * succeeds (extendable buckets: no early cuckoo failure at 100% load), all
 * are found, absent tuples are not, the count is right; then all removed.
 * The average lookup time is printed for information only.
 */
static void test_100k_connections(void **state)
{
	struct tcp_table *t = new_table(BIG_N);
	char *conns = malloc(BIG_N);
	struct timespec a, b;
	unsigned found = 0;
	const unsigned rounds = 10;

	(void)state;
	assert_non_null(conns);
	for (unsigned i = 0; i < BIG_N; i++) {
		struct tcp_4tuple k = big_tuple(i);

		assert_int_equal(tcp_table_insert(t, &k, &conns[i]), 0);
	}
	assert_int_equal(tcp_table_count(t), BIG_N);

	for (unsigned i = 0; i < BIG_N; i++) {
		struct tcp_4tuple k = big_tuple(i);

		assert_ptr_equal(tcp_table_lookup(t, &k), &conns[i]);
	}
	/* Same shape, another local address: none present. */
	for (unsigned i = 0; i < BIG_N; i++) {
		struct tcp_4tuple k = big_tuple(i);

		k.laddr = IP(10, 0, 0, 2);
		assert_null(tcp_table_lookup(t, &k));
	}

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned i = 0; i < BIG_N; i++) {
			struct tcp_4tuple k = big_tuple(i);

			found += tcp_table_lookup(t, &k) != NULL;
		}
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_int_equal(found, rounds * BIG_N);
	printf("[ INFO     ] informational: average lookup at %u connections: %.1f ns "
	       "(%u lookups)\n",
	       BIG_N, elapsed_ns(&a, &b) / (rounds * BIG_N), rounds * BIG_N);

	for (unsigned i = 0; i < BIG_N; i += 2) {
		struct tcp_4tuple k = big_tuple(i);

		assert_int_equal(tcp_table_remove(t, &k), 0);
	}
	assert_int_equal(tcp_table_count(t), BIG_N / 2);
	for (unsigned i = 0; i < BIG_N; i++) {
		struct tcp_4tuple k = big_tuple(i);

		if (i % 2)
			assert_ptr_equal(tcp_table_lookup(t, &k), &conns[i]);
		else
			assert_null(tcp_table_lookup(t, &k));
	}
	for (unsigned i = 1; i < BIG_N; i += 2) {
		struct tcp_4tuple k = big_tuple(i);

		assert_int_equal(tcp_table_remove(t, &k), 0);
	}
	assert_int_equal(tcp_table_count(t), 0);
	for (unsigned i = 0; i < BIG_N; i++) {
		struct tcp_4tuple k = big_tuple(i);

		assert_null(tcp_table_lookup(t, &k));
		assert_int_equal(tcp_table_remove(t, &k), -ENOENT);
	}
	tcp_table_free(t);
	free(conns);
}

/* ---- listeners ---- */

static void test_listeners(void **state)
{
	struct tcp_table *t = *state;
	int l80, l443, lmax, other;
	struct tcp_4tuple k = tuple(IP(10, 0, 0, 1), 80, IP(10, 0, 0, 2), 40000);

	assert_null(tcp_table_listener(t, 80));
	assert_int_equal(tcp_table_listen(t, 80, &l80), 0);
	assert_int_equal(tcp_table_listen(t, 443, &l443), 0);
	assert_int_equal(tcp_table_listen(t, 65535, &lmax), 0);
	assert_int_equal(tcp_table_listen(t, 80, &other), -EADDRINUSE);
	assert_ptr_equal(tcp_table_listener(t, 80), &l80);
	assert_ptr_equal(tcp_table_listener(t, 443), &l443);
	assert_ptr_equal(tcp_table_listener(t, 65535), &lmax);
	assert_null(tcp_table_listener(t, 81));
	assert_null(tcp_table_listener(t, 0));

	assert_int_equal(tcp_table_listen(t, 0, &other), -EINVAL);
	assert_int_equal(tcp_table_listen(t, 8080, NULL), -EINVAL);
	assert_null(tcp_table_listener(t, 8080));

	/* Listeners and connections are separate: a 4-tuple is not a listener. */
	assert_null(tcp_table_lookup(t, &k));
	assert_int_equal(tcp_table_count(t), 0);

	tcp_table_unlisten(t, 80);
	assert_null(tcp_table_listener(t, 80));
	assert_ptr_equal(tcp_table_listener(t, 443), &l443);
	tcp_table_unlisten(t, 80); /* idempotent */
	assert_int_equal(tcp_table_listen(t, 80, &other), 0);
	assert_ptr_equal(tcp_table_listener(t, 80), &other);
}

/* ---- RFC 6056 port selection ---- */

#define LADDR IP(10, 0, 0, 1)
#define RADDR IP(10, 0, 0, 2)

/* Many connections to one destination: in range, distinct, never taken. */
static void test_pick_port_range_distinct(void **state)
{
	struct tcp_table *t = new_table(8192);
	static uint8_t seen[65536];
	static int conn;
	const uint16_t lo = 49152, hi = 65535;

	(void)state;
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < 5000; i++) {
		struct tcp_4tuple k;
		uint16_t p = 0;

		assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, lo, hi, &p), 0);
		assert_in_range(p, lo, hi);
		assert_false(seen[p]);
		seen[p] = 1;
		k = tuple(LADDR, p, RADDR, 80);
		assert_null(tcp_table_lookup(t, &k));
		assert_int_equal(tcp_table_insert(t, &k, &conn), 0);
	}
	assert_int_equal(tcp_table_count(t), 5000);
	tcp_table_free(t);
}

/* lo=61440, hi=61447: the one free port is found whatever the start. */
static void test_pick_port_never_taken(void **state)
{
	struct tcp_table *t = *state;
	const uint16_t lo = 61440, hi = 61447, free_port = 61444;
	static int conn;
	uint16_t p;

	for (uint16_t q = lo; q <= hi; q++) {
		struct tcp_4tuple k = tuple(LADDR, q, RADDR, 80);

		if (q != free_port)
			assert_int_equal(tcp_table_insert(t, &k, &conn), 0);
	}
	/* The counter moves the start each call; the answer cannot move. */
	for (int i = 0; i < 32; i++) {
		p = 0;
		assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, lo, hi, &p), 0);
		assert_int_equal(p, free_port);
	}
}

/* All 8 ports of the range taken -> -EADDRNOTAVAIL; per destination. */
static void test_pick_port_exhausted(void **state)
{
	struct tcp_table *t = *state;
	const uint16_t lo = 61440, hi = 61447;
	uint8_t seen[8] = {0};
	static int conn;
	uint16_t p;

	/* Picking and inserting 8 times covers the range exactly. */
	for (int i = 0; i < 8; i++) {
		struct tcp_4tuple k;

		p = 0;
		assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, lo, hi, &p), 0);
		assert_in_range(p, lo, hi);
		assert_false(seen[p - lo]);
		seen[p - lo] = 1;
		k = tuple(LADDR, p, RADDR, 80);
		assert_int_equal(tcp_table_insert(t, &k, &conn), 0);
	}
	p = 12345;
	assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, lo, hi, &p), -EADDRNOTAVAIL);
	assert_int_equal(p, 12345); /* untouched */
	assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, lo, hi, &p), -EADDRNOTAVAIL);

	/* The same ports are free towards another port, address, or from another address. */
	assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 81, lo, hi, &p), 0);
	assert_in_range(p, lo, hi);
	assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR + 1, 80, lo, hi, &p), 0);
	assert_int_equal(tcp_table_pick_port(t, LADDR + 1, RADDR, 80, lo, hi, &p), 0);

	/* One connection closes: its port comes back. */
	{
		struct tcp_4tuple k = tuple(LADDR, 61446, RADDR, 80);

		assert_int_equal(tcp_table_remove(t, &k), 0);
		assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, lo, hi, &p), 0);
		assert_int_equal(p, 61446);
	}
}

/* Ports with a listener and port 0 are skipped; lo > hi is invalid. */
static void test_pick_port_edges(void **state)
{
	struct tcp_table *t = *state;
	int l;
	uint16_t p;

	assert_int_equal(tcp_table_listen(t, 61440, &l), 0);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, 61440, 61441, &p), 0);
		assert_int_equal(p, 61441);
	}
	assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, 61440, 61440, &p),
			 -EADDRNOTAVAIL);

	/* A range of one. */
	assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, 5000, 5000, &p), 0);
	assert_int_equal(p, 5000);

	/* Port 0 is never handed out. */
	assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, 0, 0, &p), -EADDRNOTAVAIL);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, 0, 1, &p), 0);
		assert_int_equal(p, 1);
	}

	/* The full range, top port included. */
	assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, 65535, 65535, &p), 0);
	assert_int_equal(p, 65535);
	assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, 1, 65535, &p), 0);
	assert_in_range(p, 1, 65535);

	assert_int_equal(tcp_table_pick_port(t, LADDR, RADDR, 80, 2, 1, &p), -EINVAL);
}

/*
 * RFC 6056 3.3.3: each destination starts from its own hashed offset, and
 * the shared counter advances by one per port tried. 8 destinations pick in
 * turn for 4 rounds (nothing inserted, so each pick is its first probe):
 * call c = 8r + j gets lo + (off_j + N0 + c) % R, so destination j's ports
 * step by 8 and its start, less j, is off_j + N0. The offsets are keyed
 * hashes of the destination, so the 8 sequences differ. Chance failure
 * (two pairs of the 8 offsets colliding among R = 64512): about 1e-7.
 */
static void test_pick_port_destinations_differ(void **state)
{
	struct tcp_table *t = *state;
	enum { NDST = 8, ROUNDS = 4 };
	const uint16_t lo = 1024, hi = 65535;
	const uint32_t range = (uint32_t)hi - lo + 1;
	const uint32_t raddr[NDST] = {
	    IP(10, 0, 0, 2),  IP(10, 0, 0, 3),	IP(10, 0, 0, 2),     IP(10, 0, 0, 2),
	    IP(192, 0, 2, 1), IP(192, 0, 2, 1), IP(198, 51, 100, 7), IP(203, 0, 113, 9),
	};
	const uint16_t rport[NDST] = {80, 80, 443, 81, 3260, 4420, 80, 80};
	uint16_t seq[NDST][ROUNDS];
	uint32_t start[NDST];
	unsigned distinct_seq = 0, distinct_start = 0;

	for (int r = 0; r < ROUNDS; r++)
		for (int j = 0; j < NDST; j++)
			assert_int_equal(
			    tcp_table_pick_port(t, LADDR, raddr[j], rport[j], lo, hi, &seq[j][r]),
			    0);

	for (int j = 0; j < NDST; j++) {
		for (int r = 1; r < ROUNDS; r++)
			assert_int_equal((seq[j][r] - lo + range - (seq[j][r - 1] - lo)) % range,
					 NDST);
		start[j] = (seq[j][0] - lo + range - (uint32_t)j) % range;
	}
	for (int j = 0; j < NDST; j++) {
		int same_seq = 0, same_start = 0;

		for (int i = 0; i < j; i++) {
			same_seq |= memcmp(seq[i], seq[j], sizeof(seq[j])) == 0;
			same_start |= start[i] == start[j];
		}
		distinct_seq += !same_seq;
		distinct_start += !same_start;
	}
	printf("[ INFO     ] %u of %u destinations with distinct port sequences, %u distinct "
	       "offsets\n",
	       distinct_seq, NDST, distinct_start);
	assert_true(distinct_seq >= NDST - 1);
	assert_true(distinct_start >= NDST - 1);
}

/* Two tables (different secrets) start the same destination elsewhere. */
static void test_pick_port_secret_per_table(void **state)
{
	enum { NT = 8 };
	struct tcp_table *t[NT];
	uint16_t p[NT];
	unsigned distinct = 0;

	(void)state;
	for (int i = 0; i < NT; i++) {
		t[i] = new_table(16);
		assert_int_equal(tcp_table_pick_port(t[i], LADDR, RADDR, 80, 1024, 65535, &p[i]),
				 0);
	}
	for (int j = 0; j < NT; j++) {
		int same = 0;

		for (int i = 0; i < j; i++)
			same |= p[i] == p[j];
		distinct += !same;
	}
	/* Chance failure: two collisions among 8 in 64512, about 1e-7. */
	assert_true(distinct >= NT - 1);
	for (int i = 0; i < NT; i++)
		tcp_table_free(t[i]);
}

/* ---- RFC 6528 ISNs ---- */

static void test_isn_differs_across_tuples(void **state)
{
	struct tcp_table *t = *state;
	const uint64_t now = 987654321012345ull;
	const struct tcp_4tuple base = tuple(LADDR, 40000, RADDR, 80);
	struct tcp_4tuple k;
	const uint32_t isn0 = tcp_isn(t, &base, now);
	enum { N = 1000 };
	static uint32_t isn[N];
	unsigned dup = 0;

	/* Deterministic for a given table, tuple and time. */
	assert_int_equal(tcp_isn(t, &base, now), isn0);

	/* Each field matters (chance failure 2^-32 each). */
	k = base;
	k.laddr++;
	assert_int_not_equal(tcp_isn(t, &k, now), isn0);
	k = base;
	k.lport++;
	assert_int_not_equal(tcp_isn(t, &k, now), isn0);
	k = base;
	k.raddr++;
	assert_int_not_equal(tcp_isn(t, &k, now), isn0);
	k = base;
	k.rport++;
	assert_int_not_equal(tcp_isn(t, &k, now), isn0);
	k = tuple(RADDR, 80, LADDR, 40000);
	assert_int_not_equal(tcp_isn(t, &k, now), isn0);

	/* 1000 tuples at the same instant: ~1.2e-4 chance of one collision, ~7e-9 of two. */
	for (unsigned i = 0; i < N; i++) {
		k = big_tuple(i);
		isn[i] = tcp_isn(t, &k, now);
	}
	for (unsigned i = 0; i < N; i++)
		for (unsigned j = 0; j < i; j++)
			if (isn[i] == isn[j]) {
				dup++;
				break;
			}
	assert_true(dup <= 1);
}

/* ISN(t0 + d) - ISN(t0) == floor((t0 + d) / 4us) - floor(t0 / 4us) mod 2^32. */
static void test_isn_advances_with_time(void **state)
{
	struct tcp_table *t = *state;
	const struct tcp_4tuple k = tuple(LADDR, 40000, RADDR, 80);
	const uint64_t t0s[] = {0, 3999, 4000, 123456789012345ull, UINT64_MAX / 2};
	const uint64_t deltas[] = {
	    0,
	    1,
	    3999,
	    4000,
	    4001,
	    8000,
	    1000000,
	    1000000000ull,
	    60000000000ull,
	    (1ull << 32) * 4000,
	    ((1ull << 32) + 5) * 4000,
	    3600000000000ull,
	};

	for (size_t i = 0; i < sizeof(t0s) / sizeof(t0s[0]); i++) {
		const uint64_t t0 = t0s[i];
		const uint32_t base = tcp_isn(t, &k, t0);

		for (size_t j = 0; j < sizeof(deltas) / sizeof(deltas[0]); j++) {
			const uint64_t t1 = t0 + deltas[j];
			const uint32_t want = (uint32_t)(t1 / 4000 - t0 / 4000);

			assert_int_equal((uint32_t)(tcp_isn(t, &k, t1) - base), want);
		}
	}
	/* Concrete: one second is 250 000 ticks; 4 us is one; 3.999 us from a tick is none. */
	assert_int_equal((uint32_t)(tcp_isn(t, &k, 4000000000ull) - tcp_isn(t, &k, 3000000000ull)),
			 250000);
	assert_int_equal((uint32_t)(tcp_isn(t, &k, 8000) - tcp_isn(t, &k, 4000)), 1);
	assert_int_equal((uint32_t)(tcp_isn(t, &k, 7999) - tcp_isn(t, &k, 4000)), 0);
	/* 2^32 ticks (about 4.8 hours) wrap around to the same ISN. */
	assert_int_equal(tcp_isn(t, &k, 4000 + (1ull << 32) * 4000), tcp_isn(t, &k, 4000));
}

/* Different tables, different secrets: the same tuple and time differ. */
static void test_isn_secret_per_table(void **state)
{
	struct tcp_table *a = *state;
	struct tcp_table *b = new_table(16);
	const uint64_t now = 5000000000ull;

	(void)state;
	/* Chance failure 2^-32 per tuple. */
	for (unsigned i = 0; i < 4; i++) {
		struct tcp_4tuple k = big_tuple(i);

		assert_int_not_equal(tcp_isn(a, &k, now), tcp_isn(b, &k, now));
		/* Each table still advances with the same clock. */
		assert_int_equal((uint32_t)(tcp_isn(a, &k, now + 400000) - tcp_isn(a, &k, now)),
				 100);
		assert_int_equal((uint32_t)(tcp_isn(b, &k, now + 400000) - tcp_isn(b, &k, now)),
				 100);
	}
	tcp_table_free(b);
}

/* A worker's client ports: only its residue class, all of them, then exhaustion. */
static void test_pick_port_in_residue_class(void **state)
{
	struct tcp_table *t = *state;
	uint16_t p;
	unsigned got = 0;

	for (int i = 0; i < 64; i++) {
		if (tcp_table_pick_port_in(t, LADDR, RADDR, 80, 61440, 61567, 4, 3, &p))
			break;
		assert_true(p >= 61440 && p <= 61567);
		assert_int_equal(p % 4, 3);
		struct tcp_4tuple k = tuple(LADDR, p, RADDR, 80);
		assert_int_equal(tcp_table_insert(t, &k, state), 0);
		got++;
	}
	assert_int_equal(got, 32); /* 128 ports, a quarter of them */
	assert_int_equal(tcp_table_pick_port_in(t, LADDR, RADDR, 80, 61440, 61567, 4, 3, &p),
			 -EADDRNOTAVAIL);
	assert_int_equal(tcp_table_pick_port_in(t, LADDR, RADDR, 80, 61440, 61567, 0, 0, &p),
			 -EINVAL);
	assert_int_equal(tcp_table_pick_port_in(t, LADDR, RADDR, 80, 61440, 61567, 2, 2, &p),
			 -EINVAL);
	/* A range holding no port of the class. */
	assert_int_equal(tcp_table_pick_port_in(t, LADDR, RADDR, 80, 61441, 61442, 4, 0, &p),
			 -EADDRNOTAVAIL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_errors),
	    cmocka_unit_test_setup_teardown(test_insert_lookup_remove, setup_small, teardown_table),
	    cmocka_unit_test_setup_teardown(test_every_field_counts, setup_small, teardown_table),
	    cmocka_unit_test_setup_teardown(test_duplicate_eexist, setup_small, teardown_table),
	    cmocka_unit_test_setup_teardown(test_remove_missing_enoent, setup_small,
					    teardown_table),
	    cmocka_unit_test_setup_teardown(test_null_conn_einval, setup_small, teardown_table),
	    cmocka_unit_test(test_capacity_enospc),
	    cmocka_unit_test(test_100k_connections),
	    cmocka_unit_test_setup_teardown(test_listeners, setup_small, teardown_table),
	    cmocka_unit_test(test_pick_port_range_distinct),
	    cmocka_unit_test_setup_teardown(test_pick_port_never_taken, setup_small,
					    teardown_table),
	    cmocka_unit_test_setup_teardown(test_pick_port_exhausted, setup_small, teardown_table),
	    cmocka_unit_test_setup_teardown(test_pick_port_edges, setup_small, teardown_table),
	    cmocka_unit_test_setup_teardown(test_pick_port_in_residue_class, setup_small,
					    teardown_table),
	    cmocka_unit_test_setup_teardown(test_pick_port_destinations_differ, setup_small,
					    teardown_table),
	    cmocka_unit_test(test_pick_port_secret_per_table),
	    cmocka_unit_test_setup_teardown(test_isn_differs_across_tuples, setup_small,
					    teardown_table),
	    cmocka_unit_test_setup_teardown(test_isn_advances_with_time, setup_small,
					    teardown_table),
	    cmocka_unit_test_setup_teardown(test_isn_secret_per_table, setup_small, teardown_table),
	};

	return cmocka_run_group_tests_name("tcp/table", tests, group_setup, NULL);
}
