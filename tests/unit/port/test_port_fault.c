/*
 * test_port_fault.c - the fault-injection wrapper (port/port_fault.c) over
 * the fake port: drop, duplicate, reorder, corrupt and delay in each
 * direction, seeded reproducibility, tx_burst's return value and the queue
 * that holds what a full inner ring refuses, and close freeing everything.
 * Every mbuf carries a 32-bit sequence number at offset 0; every test ends
 * with the pool's in-use count back to 0.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>

#include "fake_port.h"
#include "port/port_fault.h"

#define POOL_SIZE	16383
#define FRAME_LEN	64
#define REORDER_HOLD_US 200 /* port_fault.c REORDER_MAX_HOLD_US */

static struct rte_mempool *pool;
static struct fake_port fake;
static const struct rte_ether_addr fake_mac = {{0x02, 0, 0, 0, 0, 0x11}};

static int group_setup(void **state)
{
	(void)state;
	if (test_eal_init() != 0)
		return -1;
	pool = test_pool_create("fault_pool", POOL_SIZE);
	return pool ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	rte_mempool_free(pool);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	fake_port_init(&fake, pool, "fake0", &fake_mac);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fake_port_release(&fake);
	assert_int_equal(test_pool_in_use(pool), 0);
	return 0;
}

/* A frame whose first 4 bytes are @seq and the rest a pattern derived from it. */
static struct rte_mbuf *seq_mbuf(uint32_t seq)
{
	uint8_t b[FRAME_LEN];

	memcpy(b, &seq, sizeof(seq));
	for (unsigned i = 4; i < sizeof(b); i++)
		b[i] = (uint8_t)(seq * 7 + i);
	return test_mbuf(pool, b, sizeof(b));
}

static uint32_t seq_of(const struct rte_mbuf *m)
{
	uint32_t s;

	memcpy(&s, rte_pktmbuf_mtod(m, const void *), sizeof(s));
	return s;
}

static struct port *wrap(const char *spec_text)
{
	struct fault_spec fs;
	char err[256];
	struct port *p;

	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fault_spec_parse(spec_text, &fs, err, sizeof(err)), 0);
	p = port_fault_wrap(&fake.base, &fs);
	assert_non_null(p);
	return p;
}

/* Send @n sequence-numbered frames starting at @first; all must be accepted. */
static void send_seq(struct port *p, uint32_t first, unsigned n)
{
	struct rte_mbuf *b[32];

	while (n) {
		uint16_t k = (uint16_t)(n < 32 ? n : 32);

		for (uint16_t i = 0; i < k; i++)
			b[i] = seq_mbuf(first++);
		assert_int_equal(port_tx_burst(p, b, k), k);
		n -= k;
	}
}

/* Move the fake's captured tx frames' sequence numbers to @out, freeing them. */
static unsigned collect_tx(uint32_t *out, unsigned cap)
{
	unsigned n = fake.n_tx;

	assert_true(n <= cap);
	for (unsigned i = 0; i < n; i++)
		out[i] = seq_of(fake.tx[i]);
	fake_port_clear_tx(&fake);
	return n;
}

static void test_wrap_basics(void **state)
{
	struct port *p = wrap("drop=0");
	struct port_stats st;

	(void)state;
	assert_string_equal(p->name, "fault(fake0)");
	assert_ptr_equal(p->inner, &fake.base);
	assert_memory_equal(&p->mac, &fake_mac, sizeof(fake_mac));
	assert_ptr_equal(p->pool, pool);
	assert_true(port_link_up(p));
	send_seq(p, 0, 3);
	port_stats(p, &st); /* the device's counters */
	assert_int_equal(st.tx_packets, 3);
	fake_port_clear_tx(&fake);
	port_close(p);
	assert_int_equal(fake.closed, 1);
}

/* drop=1.0: nothing passes, and every packet is counted as dropped and freed. */
static void test_drop_all(void **state)
{
	struct port *p = wrap("drop=1.0");
	struct fault_counters c;
	struct rte_mbuf *got[32];

	(void)state;
	send_seq(p, 0, 1000);
	assert_int_equal(fake.n_tx, 0);
	port_fault_counters(p, 1, &c);
	assert_int_equal(c.seen, 1000);
	assert_int_equal(c.dropped, 1000);
	assert_int_equal(test_pool_in_use(pool), 0);

	for (uint32_t i = 0; i < 20; i++)
		fake_port_inject(&fake, seq_mbuf(i));
	assert_int_equal(port_rx_burst(p, got, 32), 0);
	port_fault_counters(p, 0, &c);
	assert_int_equal(c.seen, 20);
	assert_int_equal(c.dropped, 20);
	assert_int_equal(test_pool_in_use(pool), 0);
	port_close(p);
}

/* drop=0: everything passes, in order, in both directions. */
static void test_drop_none_in_order(void **state)
{
	struct port *p = wrap("drop=0");
	static uint32_t seqs[2000];
	struct rte_mbuf *got[32];
	struct fault_counters c;
	unsigned n, k = 0;

	(void)state;
	send_seq(p, 0, 2000);
	n = collect_tx(seqs, 2000);
	assert_int_equal(n, 2000);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(seqs[i], i);
	port_fault_counters(p, 1, &c);
	assert_int_equal(c.seen, 2000);
	assert_int_equal(c.dropped, 0);

	for (uint32_t i = 0; i < 100; i++)
		fake_port_inject(&fake, seq_mbuf(i));
	for (int tries = 0; tries < 10 && k < 100; tries++) {
		uint16_t g = port_rx_burst(p, got, 32);

		for (uint16_t i = 0; i < g; i++) {
			assert_int_equal(seq_of(got[i]), k++);
			rte_pktmbuf_free(got[i]);
		}
	}
	assert_int_equal(k, 100);
	port_close(p);
}

/* Run 10000 frames through tx with @spec; store survivors' sequence numbers. */
static unsigned run_drop(const char *spec, uint32_t *out, unsigned cap)
{
	struct port *p = wrap(spec);
	unsigned n = 0;

	for (uint32_t first = 0; first < 10000; first += 500) {
		send_seq(p, first, 500);
		n += collect_tx(out + n, cap - n);
	}
	port_close(p);
	return n;
}

/* Same seed, same packet sequence: the same decisions (port_fault.h). */
static void test_seed_reproducible(void **state)
{
	static uint32_t a[10000], b[10000], c[10000];
	unsigned na, nb, nc;

	(void)state;
	na = run_drop("drop=0.3,seed=42", a, 10000);
	fake_port_init(&fake, pool, "fake0", &fake_mac);
	nb = run_drop("drop=0.3,seed=42", b, 10000);
	fake_port_init(&fake, pool, "fake0", &fake_mac);
	nc = run_drop("drop=0.3,seed=43", c, 10000);

	assert_true(na > 6500 && na < 7500); /* ~70% survive */
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na * sizeof(a[0]));
	for (unsigned i = 1; i < na; i++)
		assert_true(a[i] > a[i - 1]); /* drops never reorder */
	/* A different seed decides differently. */
	assert_true(na != nc || memcmp(a, c, na * sizeof(a[0])) != 0);
}

/* The rx:/tx: prefix confines a fault to one direction. */
static void test_direction_prefix(void **state)
{
	struct fault_spec fs;
	char err[256];
	struct rte_mbuf *got[32];
	struct port *p;

	(void)state;
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fault_spec_parse("rx:drop=1", &fs, err, sizeof(err)), 0);
	p = port_fault_wrap(&fake.base, &fs);
	assert_non_null(p);
	send_seq(p, 0, 10);
	assert_int_equal(fake.n_tx, 10); /* tx untouched */
	fake_port_clear_tx(&fake);
	for (uint32_t i = 0; i < 10; i++)
		fake_port_inject(&fake, seq_mbuf(i));
	assert_int_equal(port_rx_burst(p, got, 32), 0); /* rx all dropped */
	port_close(p);

	fake_port_init(&fake, pool, "fake0", &fake_mac);
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fault_spec_parse("tx:drop=1", &fs, err, sizeof(err)), 0);
	p = port_fault_wrap(&fake.base, &fs);
	send_seq(p, 0, 10);
	assert_int_equal(fake.n_tx, 0);
	for (uint32_t i = 0; i < 10; i++)
		fake_port_inject(&fake, seq_mbuf(i));
	assert_int_equal(port_rx_burst(p, got, 32), 10);
	for (int i = 0; i < 10; i++)
		rte_pktmbuf_free(got[i]);
	port_close(p);
}

/* dup=1.0: every frame arrives twice, copy right after the original, same bytes. */
static void test_dup_all(void **state)
{
	struct port *p = wrap("dup=1.0");
	struct fault_counters c;

	(void)state;
	send_seq(p, 0, 100);
	assert_int_equal(fake.n_tx, 200);
	for (unsigned i = 0; i < 200; i += 2) {
		assert_int_equal(seq_of(fake.tx[i]), i / 2);
		assert_int_equal(seq_of(fake.tx[i + 1]), i / 2);
		assert_ptr_not_equal(fake.tx[i], fake.tx[i + 1]);
		assert_int_equal(fake.tx[i]->pkt_len, fake.tx[i + 1]->pkt_len);
		assert_memory_equal(rte_pktmbuf_mtod(fake.tx[i], void *),
				    rte_pktmbuf_mtod(fake.tx[i + 1], void *), FRAME_LEN);
	}
	port_fault_counters(p, 1, &c);
	assert_int_equal(c.duplicated, 100);
	fake_port_clear_tx(&fake);
	port_close(p);
}

/*
 * A duplicate or a corrupted copy of a frame whose buffer the application
 * holds (headers put in the headroom of a received buffer it sends back)
 * holds none of the application's references: DPDK copies the mbuf's
 * dynamic fields, and the copy would carry the share into its next life.
 */
static void test_copies_carry_no_app_share(void **state)
{
	static const struct rte_mbuf_dynfield share_field = {.name = "lunar_zbuf_app_share",
							     .size = sizeof(uint16_t),
							     .align = __alignof__(uint16_t)};
	int off = rte_mbuf_dynfield_register(&share_field);
	const char *specs[] = {"dup=1.0", "corrupt=1.0"};

	(void)state;
	assert_true(off >= 0);
	for (unsigned s = 0; s < 2; s++) {
		struct port *p = wrap(specs[s]);
		struct rte_mbuf *m = seq_mbuf(7);

		*RTE_MBUF_DYNFIELD(m, off, uint16_t *) = 1;
		rte_mbuf_refcnt_update(m, 1); /* the application's, kept past the send */
		assert_int_equal(port_tx_burst(p, &m, 1), 1);
		assert_true(fake.n_tx >= 1);
		for (unsigned i = 0; i < fake.n_tx; i++)
			if (fake.tx[i] != m)
				assert_int_equal(*RTE_MBUF_DYNFIELD(fake.tx[i], off, uint16_t *),
						 0);
		assert_int_equal(*RTE_MBUF_DYNFIELD(m, off, uint16_t *), 1);
		*RTE_MBUF_DYNFIELD(m, off, uint16_t *) = 0;
		rte_pktmbuf_free(m);
		fake_port_clear_tx(&fake);
		port_close(p);
	}
}

/* reorder=1.0: the order changes, nothing is lost or duplicated. */
static void test_reorder_all(void **state)
{
	struct port *p = wrap("reorder=1.0");
	static uint32_t seqs[1000];
	bool seen[1000] = {false};
	bool changed = false;
	struct fault_counters c;
	unsigned n;

	(void)state;
	send_seq(p, 0, 1000);
	n = collect_tx(seqs, 1000);
	assert_int_equal(n, 1000); /* even count: no packet is left held */
	for (unsigned i = 0; i < n; i++) {
		assert_true(seqs[i] < 1000);
		assert_false(seen[seqs[i]]);
		seen[seqs[i]] = true;
		if (seqs[i] != i)
			changed = true;
	}
	assert_true(changed);
	port_fault_counters(p, 1, &c);
	assert_int_equal(c.reordered, 500);

	/* An odd one out is held, then released once no later packet overtook it. */
	send_seq(p, 1000, 1);
	assert_int_equal(fake.n_tx, 0);
	for (int i = 0; i < 100000 && fake.n_tx == 0; i++) {
		test_spin_us(10);
		port_tx_burst(p, NULL, 0);
	}
	assert_int_equal(fake.n_tx, 1);
	assert_int_equal(seq_of(fake.tx[0]), 1000);
	fake_port_clear_tx(&fake);
	port_close(p);
}

/* corrupt=1.0: each delivered frame differs from its original in exactly one bit. */
static void test_corrupt_one_bit(void **state)
{
	struct port *p = wrap("corrupt=1.0,seed=7");
	struct fault_counters c;
	uint8_t orig[FRAME_LEN];

	(void)state;
	send_seq(p, 0, 500);
	assert_int_equal(fake.n_tx, 500);
	for (unsigned i = 0; i < 500; i++) {
		const uint8_t *d = rte_pktmbuf_mtod(fake.tx[i], const uint8_t *);
		uint32_t seq = i;
		unsigned bits = 0;

		memcpy(orig, &seq, sizeof(seq));
		for (unsigned k = 4; k < FRAME_LEN; k++)
			orig[k] = (uint8_t)(seq * 7 + k);
		assert_int_equal(fake.tx[i]->pkt_len, FRAME_LEN);
		for (unsigned k = 0; k < FRAME_LEN; k++)
			bits += (unsigned)__builtin_popcount(d[k] ^ orig[k]);
		assert_int_equal(bits, 1);
	}
	port_fault_counters(p, 1, &c);
	assert_int_equal(c.corrupted, 500);
	fake_port_clear_tx(&fake);
	port_close(p);
}

/*
 * corrupt on a shared buffer (refcnt 2, e.g. a TCP segment kept for
 * retransmission) flips the bit in a copy: the caller's bytes stay intact.
 */
static void test_corrupt_shared_copies(void **state)
{
	struct port *p = wrap("corrupt=1.0");
	struct rte_mbuf *m = seq_mbuf(5);
	uint8_t before[FRAME_LEN];

	(void)state;
	memcpy(before, rte_pktmbuf_mtod(m, void *), FRAME_LEN);
	rte_mbuf_refcnt_update(m, 1); /* our own reference */
	assert_int_equal(port_tx_burst(p, &m, 1), 1);
	assert_int_equal(fake.n_tx, 1);
	assert_ptr_not_equal(fake.tx[0], m);
	assert_memory_equal(rte_pktmbuf_mtod(m, void *), before, FRAME_LEN);
	assert_memory_not_equal(rte_pktmbuf_mtod(fake.tx[0], void *), before, FRAME_LEN);
	assert_int_equal(rte_mbuf_refcnt_read(m), 1);
	rte_pktmbuf_free(m);
	fake_port_clear_tx(&fake);
	port_close(p);
}

/*
 * Same, with the pool empty so the copy cannot be made: the shared buffer
 * must still not be modified (send it unchanged, or drop it).
 */
static void test_corrupt_shared_no_copy(void **state)
{
	struct rte_mempool *tiny = test_pool_create("fault_tiny", 4);
	struct rte_mbuf *m[4];
	uint8_t before[FRAME_LEN];
	unsigned in_use;
	struct port *p;
	uint16_t sent;
	bool intact;

	(void)state;
	assert_non_null(tiny);
	fake_port_init(&fake, tiny, "fake0", &fake_mac);
	p = wrap("corrupt=1.0");
	for (int i = 0; i < 4; i++)
		m[i] = test_mbuf(tiny,
				 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",
				 FRAME_LEN);
	memcpy(before, rte_pktmbuf_mtod(m[0], void *), FRAME_LEN);
	rte_mbuf_refcnt_update(m[0], 1);
	sent = port_tx_burst(p, &m[0], 1);
	intact = memcmp(rte_pktmbuf_mtod(m[0], void *), before, FRAME_LEN) == 0;
	rte_pktmbuf_free(m[0]);
	for (int i = 1; i < 4; i++)
		rte_pktmbuf_free(m[i]);
	port_close(p); /* frees what the fake captured */
	fake_port_init(&fake, pool, "fake0", &fake_mac);
	in_use = test_pool_in_use(tiny);
	rte_mempool_free(tiny);
	assert_int_equal(sent, 1);
	assert_int_equal(in_use, 0);
	assert_true(intact);
}

/* Poll tx until the fake has a frame; @t0 was read before the frame was sent. */
static uint64_t wait_tx_release(struct port *p, uint64_t limit_us)
{
	uint64_t hz_us = rte_get_tsc_hz() / 1000000;
	uint64_t start = rte_get_tsc_cycles(), t_after = start;

	while (fake.n_tx == 0 && t_after - start < limit_us * hz_us) {
		port_tx_burst(p, NULL, 0);
		t_after = rte_get_tsc_cycles();
	}
	return t_after;
}

/* delay=2ms holds tx packets in the wrapper; released only after the delay. */
static void test_delay_tx(void **state)
{
	const uint64_t delay_us = 2000;
	uint64_t hz_us = rte_get_tsc_hz() / 1000000;
	struct port *p = wrap("delay=2ms");
	struct fault_counters c;
	uint64_t t0, t_rel;

	(void)state;
	t0 = rte_get_tsc_cycles();
	send_seq(p, 0, 5);
	assert_int_equal(fake.n_tx, 0); /* nothing goes at once */
	t_rel = wait_tx_release(p, 10 * 1000 * 1000);
	assert_true(fake.n_tx > 0);
	assert_true(t_rel >= t0 + delay_us * hz_us); /* never before the delay */
	port_tx_burst(p, NULL, 0);
	assert_int_equal(fake.n_tx, 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(seq_of(fake.tx[i]), i);
	port_fault_counters(p, 1, &c);
	assert_int_equal(c.delayed, 5);
	fake_port_clear_tx(&fake);
	port_close(p);
}

/* delay applies on rx too: rx_burst returns nothing until the delay has passed. */
static void test_delay_rx(void **state)
{
	const uint64_t delay_us = 500;
	uint64_t hz_us = rte_get_tsc_hz() / 1000000;
	struct port *p = wrap("rx:delay=500us");
	struct rte_mbuf *got[32];
	uint64_t t0, t_after = 0;
	uint16_t n = 0;

	(void)state;
	for (uint32_t i = 0; i < 3; i++)
		fake_port_inject(&fake, seq_mbuf(i));
	t0 = rte_get_tsc_cycles();
	assert_int_equal(port_rx_burst(p, got, 32), 0);
	for (int i = 0; i < 10000000 && n == 0; i++) {
		n = port_rx_burst(p, got, 32);
		t_after = rte_get_tsc_cycles();
	}
	assert_int_equal(n, 3);
	assert_true(t_after >= t0 + delay_us * hz_us);
	for (uint16_t i = 0; i < n; i++) {
		assert_int_equal(seq_of(got[i]), i);
		rte_pktmbuf_free(got[i]);
	}
	port_close(p);
}

/*
 * The delay is "added to every packet in this direction" (port_spec.h),
 * including a packet held for reordering with no later packet to overtake
 * it.
 */
static void test_delay_applies_to_reordered(void **state)
{
	const uint64_t delay_us = 2000;
	uint64_t hz_us = rte_get_tsc_hz() / 1000000;
	struct port *p = wrap("tx:delay=2ms,reorder=1");
	uint64_t t0, t_rel;
	unsigned n;

	(void)state;
	t0 = rte_get_tsc_cycles();
	send_seq(p, 0, 1);
	t_rel = wait_tx_release(p, 10 * 1000 * 1000);
	n = fake.n_tx;
	port_close(p);
	assert_int_equal(n, 1);
	assert_true(t_rel >= t0 + delay_us * hz_us);
}

/*
 * A full inner ring (the fake accepts 0): tx_burst still reports the frames
 * it took, keeps them queued in order, and hands them over once the ring
 * has room again.
 */
static void test_full_inner_ring(void **state)
{
	struct port *p = wrap("drop=0");
	static uint32_t seqs[100];

	(void)state;
	fake.accept = 0;
	send_seq(p, 0, 50);
	assert_int_equal(fake.n_tx, 0);
	send_seq(p, 50, 50);
	assert_int_equal(fake.n_tx, 0);
	fake.accept = 7; /* a ring with a little room: partial progress */
	assert_int_equal(port_tx_burst(p, NULL, 0), 0);
	assert_int_equal(fake.n_tx, 7);
	fake.accept = -1;
	assert_int_equal(port_tx_burst(p, NULL, 0), 0);
	assert_int_equal(collect_tx(seqs, 100), 100);
	for (unsigned i = 0; i < 100; i++)
		assert_int_equal(seqs[i], i);

	/* An rx poll also drains the tx queue (the loop may only poll rx). */
	fake.accept = 0;
	send_seq(p, 100, 3);
	fake.accept = -1;
	assert_int_equal(port_rx_burst(p, (struct rte_mbuf *[1]){NULL}, 1), 0);
	assert_int_equal(fake.n_tx, 3);
	fake_port_clear_tx(&fake);
	port_close(p);
}

/*
 * The wrapper's own queue is bounded: with the inner ring stuck, tx_burst
 * returns fewer than offered and the caller keeps the rest (port.h
 * ownership rule).
 */
static void test_wrapper_queue_full(void **state)
{
	struct port *p = wrap("drop=0");
	struct rte_mbuf *b[64];
	unsigned taken = 0;
	uint16_t k;

	(void)state;
	fake.accept = 0;
	for (;;) {
		for (int i = 0; i < 64; i++)
			b[i] = seq_mbuf(taken + (unsigned)i);
		k = port_tx_burst(p, b, 64);
		taken += k;
		for (int i = k; i < 64; i++) {
			assert_int_equal(rte_mbuf_refcnt_read(b[i]), 1);
			rte_pktmbuf_free(b[i]);
		}
		if (k < 64)
			break;
		assert_true(taken < 10000);
	}
	assert_true(taken >= 4000);
	fake.accept = -1;
	for (int i = 0; i < 1000 && fake.n_tx < taken; i++)
		port_tx_burst(p, NULL, 0);
	assert_int_equal(fake.n_tx, taken);
	for (unsigned i = 0; i < taken; i++)
		assert_int_equal(seq_of(fake.tx[i]), i);
	fake_port_clear_tx(&fake);
	port_close(p);
}

/* close frees delayed, held-for-reorder and ring-refused packets, and the device. */
static void test_close_frees_everything(void **state)
{
	struct port *p = wrap("delay=10000ms,reorder=0.5,seed=3");
	struct rte_mbuf *got[8];

	(void)state;
	send_seq(p, 0, 101);
	for (uint32_t i = 0; i < 64; i++)
		fake_port_inject(&fake, seq_mbuf(1000 + i));
	assert_int_equal(port_rx_burst(p, got, 8), 0); /* rx side delayed too */
	for (uint32_t i = 0; i < 10; i++)
		fake_port_inject(&fake, seq_mbuf(2000 + i)); /* still in the device */
	assert_int_equal(fake.n_tx, 0);
	assert_true(test_pool_in_use(pool) >= 175);
	port_close(p);
	assert_int_equal(fake.closed, 1);
	assert_int_equal(test_pool_in_use(pool), 0);
}

/* port_dump walks the stack: the wrapper's counters for both directions. */
static void test_dump(void **state)
{
	struct port *p = wrap("drop=1");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	send_seq(p, 0, 4);
	port_dump(p, f);
	fclose(f);
	assert_non_null(strstr(buf, "fault tx: seen 4 dropped 4"));
	assert_non_null(strstr(buf, "fault rx: seen 0"));
	free(buf);
	port_close(p);
}

/*
 * A copy (a duplicate, here) is made in the port's pool, not in the
 * frame's: a zero-copy frame's header comes from a pool of small buffers
 * (the stack's header pool), where a 1500-byte copy would be a chain of a
 * dozen taken from the headers of sends to come.
 */
static void test_copy_in_port_pool(void **state)
{
	struct rte_mempool *small = rte_pktmbuf_pool_create(
	    "fault_small", 63, 0, 0, 128 + RTE_PKTMBUF_HEADROOM, SOCKET_ID_ANY);
	struct port *p = wrap("dup=1.0");
	uint8_t b[100] = {1};
	struct rte_mbuf *m;

	(void)state;
	assert_non_null(small);
	m = test_mbuf(small, b, sizeof(b));
	assert_int_equal(port_tx_burst(p, &m, 1), 1);
	assert_int_equal(fake.n_tx, 2);
	for (unsigned i = 0; i < 2; i++)
		if (fake.tx[i] != m)
			assert_ptr_equal(fake.tx[i]->pool, pool);
	fake_port_clear_tx(&fake);
	port_close(p);
	assert_int_equal(test_pool_in_use(small), 0);
	rte_mempool_free(small);
}

/* Bits in which @len bytes at @d differ from frame @seq; the last differing byte/bit out. */
static unsigned diff_bits(const uint8_t *d, uint32_t seq, size_t len, unsigned *byte, unsigned *bit)
{
	uint8_t orig[FRAME_LEN];
	unsigned bits = 0;

	memcpy(orig, &seq, sizeof(seq));
	for (unsigned k = 4; k < FRAME_LEN; k++)
		orig[k] = (uint8_t)(seq * 7 + k);
	for (size_t k = 0; k < len; k++) {
		uint8_t x = d[k] ^ orig[k];

		if (x) {
			bits += (unsigned)__builtin_popcount(x);
			*byte = (unsigned)k;
			*bit = (unsigned)__builtin_ctz(x);
		}
	}
	return bits;
}

/*
 * The flipped bit is anywhere: across many frames every byte of the frame
 * and every bit of a byte gets hit, and frames of 1 to 3 bytes get exactly
 * one flipped bit inside them.
 */
static void test_corrupt_any_byte_any_bit(void **state)
{
	struct port *p = wrap("corrupt=1.0,seed=11");
	unsigned byte_hits[FRAME_LEN] = {0}, bit_hits[8] = {0};

	(void)state;
	for (uint32_t first = 0; first < 4096; first += 256) {
		send_seq(p, first, 256);
		assert_int_equal(fake.n_tx, 256);
		for (unsigned i = 0; i < 256; i++) {
			unsigned byte = 0, bit = 0;

			assert_int_equal(diff_bits(rte_pktmbuf_mtod(fake.tx[i], const uint8_t *),
						   first + i, FRAME_LEN, &byte, &bit),
					 1);
			byte_hits[byte]++;
			bit_hits[bit]++;
		}
		fake_port_clear_tx(&fake);
	}
	for (unsigned k = 0; k < FRAME_LEN; k++)
		assert_true(byte_hits[k] > 0);
	for (unsigned b = 0; b < 8; b++)
		assert_true(bit_hits[b] > 0);

	for (size_t len = 1; len <= 3; len++) {
		for (uint32_t i = 0; i < 64; i++) {
			struct rte_mbuf *m = seq_mbuf(i);
			unsigned byte = 0, bit = 0;

			rte_pktmbuf_trim(m, (uint16_t)(FRAME_LEN - len));
			assert_int_equal(port_tx_burst(p, &m, 1), 1);
			assert_int_equal(fake.n_tx, 1);
			assert_int_equal(fake.tx[0]->pkt_len, len);
			assert_int_equal(diff_bits(rte_pktmbuf_mtod(fake.tx[0], const uint8_t *), i,
						   len, &byte, &bit),
					 1);
			fake_port_clear_tx(&fake);
		}
	}
	port_close(p);
}

/* A frame with no bytes has no bit to flip: it passes as it is and is not counted. */
static void test_corrupt_empty_frame(void **state)
{
	struct port *p = wrap("corrupt=1.0");
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_mbuf *got[4];
	struct fault_counters c;

	(void)state;
	assert_non_null(m);
	assert_int_equal(port_tx_burst(p, &m, 1), 1);
	assert_int_equal(fake.n_tx, 1);
	assert_int_equal(fake.tx[0]->pkt_len, 0);
	port_fault_counters(p, 1, &c);
	assert_int_equal(c.corrupted, 0);
	fake_port_clear_tx(&fake);

	m = rte_pktmbuf_alloc(pool);
	assert_non_null(m);
	fake_port_inject(&fake, m);
	assert_int_equal(port_rx_burst(p, got, 4), 1);
	assert_int_equal(got[0]->pkt_len, 0);
	rte_pktmbuf_free(got[0]);
	port_fault_counters(p, 0, &c);
	assert_int_equal(c.corrupted, 0);
	port_close(p);
}

/*
 * A corrupted received frame no longer carries the device's "checksum
 * good" verdicts, for IP or for L4: the stack must check it itself. An
 * intact one keeps them.
 */
static void test_corrupt_rx_clears_cksum_flags(void **state)
{
	const uint64_t good = RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	const uint64_t masks = RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK;
	const char *specs[] = {"rx:corrupt=1.0", "rx:corrupt=0"};
	struct rte_mbuf *got[32];

	(void)state;
	for (unsigned s = 0; s < 2; s++) {
		struct port *p = wrap(specs[s]);
		uint16_t n;

		for (uint32_t i = 0; i < 16; i++) {
			struct rte_mbuf *m = seq_mbuf(i);

			m->ol_flags |= good;
			fake_port_inject(&fake, m);
		}
		n = port_rx_burst(p, got, 32);
		assert_int_equal(n, 16);
		for (uint16_t i = 0; i < n; i++) {
			if (s == 0)
				assert_int_equal(got[i]->ol_flags & masks, 0);
			else
				assert_int_equal(got[i]->ol_flags & masks, good);
			rte_pktmbuf_free(got[i]);
		}
		port_close(p);
		fake_port_init(&fake, pool, "fake0", &fake_mac);
	}
}

static unsigned ext_frees;

static void ext_free_cb(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
	ext_frees++;
}

/*
 * A zero-copy frame (external buffer: the application's memory), even
 * with a single reference, is corrupted in a copy: the application's
 * bytes stay intact and the copy sent carries the one flipped bit.
 */
static void test_corrupt_extbuf_copies(void **state)
{
	static uint8_t ext[256];
	struct rte_mbuf_ext_shared_info shinfo = {.free_cb = ext_free_cb};
	struct port *p = wrap("corrupt=1.0");
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t before[FRAME_LEN];
	unsigned byte = 0, bit = 0;
	struct rte_mbuf *tmp = seq_mbuf(3);
	uint8_t *d;

	(void)state;
	assert_non_null(m);
	ext_frees = 0;
	rte_mbuf_ext_refcnt_set(&shinfo, 1);
	rte_pktmbuf_attach_extbuf(m, ext, (rte_iova_t)(uintptr_t)ext, sizeof(ext), &shinfo);
	d = (uint8_t *)rte_pktmbuf_append(m, FRAME_LEN);
	assert_non_null(d);
	memcpy(d, rte_pktmbuf_mtod(tmp, void *), FRAME_LEN);
	rte_pktmbuf_free(tmp);
	memcpy(before, d, FRAME_LEN);
	assert_int_equal(rte_mbuf_refcnt_read(m), 1);

	assert_int_equal(port_tx_burst(p, &m, 1), 1);
	assert_int_equal(fake.n_tx, 1);
	assert_ptr_not_equal(fake.tx[0], m);
	assert_false(RTE_MBUF_HAS_EXTBUF(fake.tx[0]));
	assert_memory_equal(d, before, FRAME_LEN); /* the application's bytes */
	assert_int_equal(
	    diff_bits(rte_pktmbuf_mtod(fake.tx[0], const uint8_t *), 3, FRAME_LEN, &byte, &bit), 1);
	assert_int_equal(ext_frees, 1); /* the wrapper let go of the original */
	fake_port_clear_tx(&fake);
	port_close(p);
}

/*
 * A zero-copy frame is a header mbuf with the payload chained after it in
 * the application's memory (an external buffer). Corruption hits any byte
 * of the whole frame, payload included, and only ever in a copy: the
 * application's bytes stay as it wrote them.
 */
static void test_corrupt_zero_copy_chain(void **state)
{
	enum { HDR = 14, FRAMES = 2048 };
	static uint8_t ext[FRAME_LEN - HDR];
	struct rte_mbuf_ext_shared_info shinfo = {.free_cb = ext_free_cb};
	struct port *p = wrap("corrupt=1.0,seed=13");
	unsigned hdr_hits = 0, payload_hits = 0;

	(void)state;
	ext_frees = 0;
	for (uint32_t i = 0; i < FRAMES; i++) {
		struct rte_mbuf *m = seq_mbuf(i), *a = rte_pktmbuf_alloc(pool);
		uint8_t want[FRAME_LEN], buf[FRAME_LEN];
		const uint8_t *got;
		unsigned byte = 0, bit = 0;

		assert_non_null(a);
		memcpy(want, rte_pktmbuf_mtod(m, void *), FRAME_LEN);
		memcpy(ext, want + HDR, sizeof(ext));
		rte_pktmbuf_trim(m, FRAME_LEN - HDR);
		rte_mbuf_ext_refcnt_set(&shinfo, 1);
		rte_pktmbuf_attach_extbuf(a, ext, (rte_iova_t)(uintptr_t)ext, sizeof(ext), &shinfo);
		a->data_off = 0;
		a->data_len = sizeof(ext);
		a->pkt_len = sizeof(ext);
		assert_int_equal(rte_pktmbuf_chain(m, a), 0);

		assert_int_equal(port_tx_burst(p, &m, 1), 1);
		assert_int_equal(fake.n_tx, 1);
		assert_int_equal(fake.tx[0]->pkt_len, FRAME_LEN);
		got = rte_pktmbuf_read(fake.tx[0], 0, FRAME_LEN, buf);
		assert_non_null(got);
		assert_int_equal(diff_bits(got, i, FRAME_LEN, &byte, &bit), 1);
		if (byte < HDR)
			hdr_hits++;
		else
			payload_hits++;
		fake_port_clear_tx(&fake);
		assert_memory_equal(ext, want + HDR, sizeof(ext));
		assert_int_equal(ext_frees, i + 1); /* nothing holds the payload any more */
	}
	assert_true(hdr_hits > 0);
	assert_true(payload_hits > 0);
	port_close(p);
}

/* A clone (an mbuf attached to another's buffer) is corrupted in a copy: the original keeps its
 * bytes. */
static void test_corrupt_clone_copies(void **state)
{
	struct port *p = wrap("corrupt=1.0");
	struct rte_mbuf *m = seq_mbuf(9), *c = rte_pktmbuf_clone(m, pool);
	unsigned byte = 0, bit = 0;

	(void)state;
	assert_non_null(c);
	assert_int_equal(rte_mbuf_refcnt_read(c), 1);
	assert_int_equal(port_tx_burst(p, &c, 1), 1);
	assert_int_equal(fake.n_tx, 1);
	assert_int_equal(diff_bits(rte_pktmbuf_mtod(m, const uint8_t *), 9, FRAME_LEN, &byte, &bit),
			 0);
	assert_int_equal(
	    diff_bits(rte_pktmbuf_mtod(fake.tx[0], const uint8_t *), 9, FRAME_LEN, &byte, &bit), 1);
	fake_port_clear_tx(&fake);
	rte_pktmbuf_free(m);
	port_close(p);
}

/* A private chained frame (all its segments the port's) is corrupted in place, in any segment. */
static void test_corrupt_private_chain(void **state)
{
	static const uint16_t seg[3] = {20, 20, 24};
	struct port *p = wrap("corrupt=1.0,seed=17");
	unsigned seg_hits[3] = {0};

	(void)state;
	for (uint32_t i = 0; i < 512; i++) {
		struct rte_mbuf *m = seq_mbuf(i), *tail[2];
		const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
		uint8_t buf[FRAME_LEN];
		unsigned byte = 0, bit = 0;

		tail[0] = test_mbuf(pool, d + seg[0], seg[1]);
		tail[1] = test_mbuf(pool, d + seg[0] + seg[1], seg[2]);
		rte_pktmbuf_trim(m, FRAME_LEN - seg[0]);
		assert_int_equal(rte_pktmbuf_chain(m, tail[0]), 0);
		assert_int_equal(rte_pktmbuf_chain(m, tail[1]), 0);
		assert_int_equal(port_tx_burst(p, &m, 1), 1);
		assert_int_equal(fake.n_tx, 1);
		assert_int_equal(fake.tx[0]->pkt_len, FRAME_LEN);
		assert_int_equal(diff_bits(rte_pktmbuf_read(fake.tx[0], 0, FRAME_LEN, buf), i,
					   FRAME_LEN, &byte, &bit),
				 1);
		seg_hits[byte < seg[0] ? 0 : byte < seg[0] + seg[1] ? 1 : 2]++;
		fake_port_clear_tx(&fake);
	}
	for (unsigned s = 0; s < 3; s++)
		assert_true(seg_hits[s] > 0);
	port_close(p);
}

/*
 * Corruption must hit the wire after the checksums are computed, so the
 * wrapper offers no transmit checksum offload (IPv4 or L4) nor TSO; the
 * device's receive offloads stay.
 */
static void test_masks_tx_offloads(void **state)
{
	const uint32_t rx = PORT_OFFLOAD_RX_IPV4_CKSUM | PORT_OFFLOAD_RX_L4_CKSUM;
	struct port *p;

	(void)state;
	fake.base.offloads = rx | PORT_OFFLOAD_TX_IPV4_CKSUM | PORT_OFFLOAD_TX_L4_CKSUM |
			     PORT_OFFLOAD_TX_TSO | PORT_OFFLOAD_TX_MULTISEG;
	p = wrap("corrupt=0.01");
	assert_int_equal(p->offloads & PORT_OFFLOAD_TX_IPV4_CKSUM, 0);
	assert_int_equal(p->offloads & PORT_OFFLOAD_TX_L4_CKSUM, 0);
	assert_int_equal(p->offloads & PORT_OFFLOAD_TX_TSO, 0);
	assert_int_equal(p->offloads & rx, rx);
	port_close(p);
}

/*
 * Fractional rates land near the rate asked for. 4000 frames at 0.25
 * (seeded, so the counts are fixed): corrupted and duplicated frames fall
 * in 1000 +- 150, which twice the rate (2000) cannot reach.
 */
static void test_fractional_corrupt_dup(void **state)
{
	const char *specs[] = {"corrupt=0.25,seed=5", "dup=0.25,seed=5"};

	(void)state;
	for (unsigned s = 0; s < 2; s++) {
		struct port *p = wrap(specs[s]);
		unsigned hits = 0;
		struct fault_counters c;

		for (uint32_t first = 0; first < 4000; first += 500) {
			send_seq(p, first, 500);
			if (s == 0) {
				assert_int_equal(fake.n_tx, 500);
				for (unsigned i = 0; i < 500; i++) {
					unsigned byte, bit;

					hits +=
					    diff_bits(rte_pktmbuf_mtod(fake.tx[i], const uint8_t *),
						      first + i, FRAME_LEN, &byte, &bit) != 0;
				}
			} else {
				hits += fake.n_tx - 500;
			}
			fake_port_clear_tx(&fake);
		}
		port_fault_counters(p, 1, &c);
		assert_int_equal(s == 0 ? c.corrupted : c.duplicated, hits);
		assert_true(hits > 850 && hits < 1150);
		port_close(p);
	}
}

/*
 * reorder=0.25: a frame is held with that chance when none is held
 * already, and the next frame overtakes it, so each reordering shows as
 * one descent in the delivered sequence. Descents per frame that could be
 * held (those not overtaking) come to 0.25 +- 0.05; twice the rate gives 0.5.
 */
static void test_fractional_reorder(void **state)
{
	static uint32_t seqs[4000];
	struct port *p = wrap("reorder=0.25,seed=5");
	unsigned n = 0, descents = 0;
	double rate;

	(void)state;
	for (uint32_t first = 0; first < 4000; first += 500) {
		send_seq(p, first, 500);
		n += collect_tx(seqs + n, 4000 - n);
	}
	assert_true(n >= 3999); /* the last one may still be held */
	for (unsigned i = 1; i < n; i++)
		descents += seqs[i] < seqs[i - 1];
	rate = (double)descents / (double)(4000 - descents);
	assert_true(rate > 0.2 && rate < 0.3);
	port_close(p);
}

/* Survivors of 256 frames at drop=0.5, seed 99, in one direction of a wrapper on queue @q. */
static void drop_pattern(uint16_t q, int tx, bool *out)
{
	struct rte_mbuf *got[32];
	struct port *p;

	fake_port_init(&fake, pool, "fake0", &fake_mac);
	fake.base.queue = q;
	fake.base.n_queues = 2;
	p = wrap("drop=0.5,seed=99");
	memset(out, 0, 256 * sizeof(*out));
	if (tx) {
		static uint32_t seqs[256];
		unsigned n;

		send_seq(p, 0, 256);
		n = collect_tx(seqs, 256);
		for (unsigned i = 0; i < n; i++)
			out[seqs[i]] = true;
	} else {
		uint16_t k;

		for (uint32_t i = 0; i < 256; i++)
			fake_port_inject(&fake, seq_mbuf(i));
		for (int tries = 0; tries < 64; tries++) {
			k = port_rx_burst(p, got, 32);
			for (uint16_t i = 0; i < k; i++) {
				out[seq_of(got[i])] = true;
				rte_pktmbuf_free(got[i]);
			}
		}
	}
	port_close(p);
}

/*
 * One seed, different sequences: the rx and tx directions of a queue, and
 * the same direction on two queues of a device, decide independently.
 */
static void test_seed_per_direction_and_queue(void **state)
{
	static bool rx0[256], tx0[256], rx1[256], tx1[256], again[256];

	(void)state;
	drop_pattern(0, 0, rx0);
	drop_pattern(0, 1, tx0);
	drop_pattern(1, 0, rx1);
	drop_pattern(1, 1, tx1);
	drop_pattern(1, 1, again);
	assert_memory_equal(tx1, again, sizeof(tx1)); /* still reproducible */
	assert_memory_not_equal(rx0, tx0, sizeof(rx0));
	assert_memory_not_equal(rx1, tx1, sizeof(rx1));
	assert_memory_not_equal(rx0, rx1, sizeof(rx0));
	assert_memory_not_equal(tx0, tx1, sizeof(tx0));
	fake_port_init(&fake, pool, "fake0", &fake_mac);
}

/* A lone frame held for reordering on rx comes out of a later rx poll. */
static void test_reorder_rx_lone_released(void **state)
{
	struct port *p = wrap("rx:reorder=1.0");
	struct rte_mbuf *got[4];
	uint16_t n = 0;

	(void)state;
	fake_port_inject(&fake, seq_mbuf(42));
	assert_int_equal(port_rx_burst(p, got, 4), 0); /* held */
	/* Poll until released; the bound is only there to end a broken run. */
	for (int i = 0; i < 200000 && n == 0; i++) {
		test_spin_us(10);
		n = port_rx_burst(p, got, 4);
	}
	assert_int_equal(n, 1);
	assert_int_equal(seq_of(got[0]), 42);
	rte_pktmbuf_free(got[0]);
	port_close(p);
}

/* More than the queue's 4096 entries pass through rx, all of them, in order. */
static void test_rx_queue_wraps(void **state)
{
	enum { N = 6000 };
	struct port *p = wrap("drop=0");
	struct rte_mbuf *got[32];
	uint32_t k = 0;

	(void)state;
	for (uint32_t i = 0; i < N; i++)
		fake_port_inject(&fake, seq_mbuf(i));
	for (int tries = 0; tries < 10000 && k < N; tries++) {
		uint16_t g = port_rx_burst(p, got, 32);

		for (uint16_t i = 0; i < g; i++) {
			assert_int_equal(seq_of(got[i]), k++);
			rte_pktmbuf_free(got[i]);
		}
	}
	assert_int_equal(k, N);
	port_close(p);
}

/*
 * Frames queued at different times have different due times: one that is
 * due never takes a later one with it before that one's delay is over.
 * (Only a lower bound: it cannot fail on a slow machine.)
 */
static void test_delay_per_frame_due(void **state)
{
	const uint64_t delay_us = 2000;
	uint64_t hz_us = rte_get_tsc_hz() / 1000000;
	struct port *p = wrap("tx:delay=2ms");
	uint64_t t_b, start;

	(void)state;
	send_seq(p, 0, 1);
	test_spin_us(delay_us / 2);
	t_b = rte_get_tsc_cycles();
	send_seq(p, 1, 1);
	start = rte_get_tsc_cycles();
	while (fake.n_tx < 2 && rte_get_tsc_cycles() - start < 10 * 1000 * 1000 * hz_us) {
		uint64_t t_after;

		port_tx_burst(p, NULL, 0);
		t_after = rte_get_tsc_cycles();
		if (fake.n_tx == 2)
			assert_true(t_after >= t_b + delay_us * hz_us);
	}
	assert_int_equal(fake.n_tx, 2);
	assert_int_equal(seq_of(fake.tx[0]), 0);
	assert_int_equal(seq_of(fake.tx[1]), 1);
	fake_port_clear_tx(&fake);
	port_close(p);
}

/*
 * The wrapper's tx queue fills up with duplicates on (the inner ring
 * stuck): tx_burst stops taking frames while a frame and its duplicate
 * still fit, so nothing it took is lost. Many rounds of fill, partial
 * drain, refill end at every possible amount of room.
 */
static void test_queue_full_with_dup(void **state)
{
	static uint32_t seqs[16384];
	struct port *p = wrap("dup=0.5,seed=8");
	struct fault_counters c;
	uint32_t taken = 0;
	unsigned n, at = 0;

	(void)state;
	for (int round = 0; round < 64; round++) {
		struct rte_mbuf *b[8];
		uint16_t k;

		fake.accept = 0;
		do {
			for (int i = 0; i < 8; i++)
				b[i] = seq_mbuf(taken + (uint32_t)i);
			k = port_tx_burst(p, b, 8);
			taken += k;
			for (int i = k; i < 8; i++)
				rte_pktmbuf_free(b[i]);
		} while (k == 8);
		fake.accept = 1 + round % 5;
		port_tx_burst(p, NULL, 0);
	}
	fake.accept = -1;
	for (int i = 0; i < 4; i++)
		port_tx_burst(p, NULL, 0);
	port_fault_counters(p, 1, &c);
	assert_int_equal(c.dropped, 0);
	n = collect_tx(seqs, 16384);
	assert_int_equal(n, taken + c.duplicated);
	/* Every frame taken arrives, once or twice, in order. */
	for (uint32_t s = 0; s < taken; s++) {
		unsigned copies = 0;

		while (at < n && seqs[at] == s) {
			copies++;
			at++;
		}
		assert_true(copies == 1 || copies == 2);
	}
	assert_int_equal(at, n);
	port_close(p);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_wrap_basics),
	    T(test_drop_all),
	    T(test_drop_none_in_order),
	    T(test_seed_reproducible),
	    T(test_direction_prefix),
	    T(test_dup_all),
	    T(test_copies_carry_no_app_share),
	    T(test_copy_in_port_pool),
	    T(test_reorder_all),
	    T(test_corrupt_one_bit),
	    T(test_corrupt_shared_copies),
	    T(test_corrupt_shared_no_copy),
	    T(test_delay_tx),
	    T(test_delay_rx),
	    T(test_delay_applies_to_reordered),
	    T(test_full_inner_ring),
	    T(test_wrapper_queue_full),
	    T(test_close_frees_everything),
	    T(test_dump),
	    T(test_corrupt_any_byte_any_bit),
	    T(test_corrupt_empty_frame),
	    T(test_corrupt_rx_clears_cksum_flags),
	    T(test_corrupt_extbuf_copies),
	    T(test_corrupt_zero_copy_chain),
	    T(test_corrupt_clone_copies),
	    T(test_corrupt_private_chain),
	    T(test_masks_tx_offloads),
	    T(test_fractional_corrupt_dup),
	    T(test_fractional_reorder),
	    T(test_seed_per_direction_and_queue),
	    T(test_reorder_rx_lone_released),
	    T(test_rx_queue_wraps),
	    T(test_delay_per_frame_due),
	    T(test_queue_full_with_dup),
	};
#undef T

	return cmocka_run_group_tests_name("port/fault", tests, group_setup, group_teardown);
}
