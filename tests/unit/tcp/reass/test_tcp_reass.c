/*
 * test_tcp_reass.c - the out-of-order queue (tcp/tcp_reass.c): in-order and
 * out-of-order delivery, trimming of overlaps, the memory bounds, SACK
 * block order (RFC 2018 4, with the worked examples of RFC 2018 6), and
 * sequence-number wraparound. Segments live in Zbuf objects (mmap backend)
 * as received frames would; every test ends with no Zbuf object in use,
 * i.e. every reference the queue took was handed back or released.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mem/zbuf.h"
#include "tcp/tcp_reass.h"
#include "tcp/tcp_seq.h"

/* Where the payload starts in its Zbuf object, as behind frame headers. */
#define HDR 54

/* The byte the stream carries at sequence number @seq. */
static uint8_t pat(uint32_t seq)
{
	return (uint8_t)(seq * 131u + (seq >> 8) * 7u + (seq >> 16));
}

/* A received segment: its payload in a fresh Zbuf object, lunar's one reference. */
static uint8_t *mkseg(uint32_t seq, uint32_t len)
{
	uint8_t *obj = zbuf_alloc(HDR + len + 1);

	assert_non_null(obj);
	assert_true(zbuf_take(obj)); /* a received frame is lunar's, not the application's */
	for (uint32_t i = 0; i < len; i++)
		obj[HDR + i] = pat(seq + i);
	return obj + HDR;
}

/* Receive a segment and insert it; the receive path then drops its own
 * reference, as it does once the segment has been handled. */
static enum tcp_reass_result ins(struct tcp_reass *r, uint32_t rcv_nxt, uint32_t seq, uint32_t len)
{
	uint8_t *p = mkseg(seq, len);
	enum tcp_reass_result res = tcp_reass_insert(r, rcv_nxt, seq, p, len, NULL);

	zbuf_drop(p);
	return res;
}

/* Check one delivered slice against the stream, then release it. */
static void consume(const struct tcp_slice *s)
{
	for (uint32_t i = 0; i < s->len; i++)
		if (s->data[i] != pat(s->seq + i))
			fail_msg("byte %u of slice at %u is %u, want %u", i, s->seq, s->data[i],
				 pat(s->seq + i));
	zbuf_drop(s->data); /* pop hands over the reassembly queue's reference */
}

/* Pop everything deliverable at *@rcv_nxt, checking order and content.
 * @return the bytes delivered. */
static uint32_t drain(struct tcp_reass *r, uint32_t *rcv_nxt)
{
	struct tcp_slice out[TCP_REASS_MAX_SEGS];
	uint32_t total = 0;
	unsigned n;

	while ((n = tcp_reass_pop(r, *rcv_nxt, out, TCP_REASS_MAX_SEGS)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			assert_int_equal(out[i].seq, *rcv_nxt);
			*rcv_nxt += out[i].len;
			total += out[i].len;
			consume(&out[i]);
		}
	}
	return total;
}

/* The queue's own invariants: sorted, disjoint, non-empty slices; bytes is
 * their sum; the recency list holds each maximal run exactly once; each
 * held object's reference count is the number of slices in it (the test
 * keeps no reference of its own). */
static void check_queue(const struct tcp_reass *r)
{
	uint32_t bytes = 0;
	unsigned runs = 0;

	assert_true(r->n <= r->max_segs);
	for (unsigned i = 0; i < r->n; i++) {
		const struct tcp_slice *s = &r->segs[i];
		unsigned same = 0;
		bool first = true;

		assert_true(s->len > 0);
		bytes += s->len;
		if (i > 0)
			assert_true(seq_leq(r->segs[i - 1].seq + r->segs[i - 1].len, s->seq));
		if (i == 0 || r->segs[i - 1].seq + r->segs[i - 1].len != s->seq) {
			bool found = false;

			runs++;
			for (unsigned j = 0; j < r->n_recent; j++)
				if (r->recent[j].left == s->seq)
					found = true;
			assert_true(found);
		}
		for (unsigned j = 0; j < r->n; j++) {
			if (zbuf_obj(r->segs[j].data) != zbuf_obj(s->data))
				continue;
			first = first && j >= i;
			same++;
		}
		if (first)
			assert_int_equal(zbuf_refcnt(s->data), same);
	}
	assert_int_equal(bytes, r->bytes);
	assert_int_equal(runs, r->n_recent);
	for (unsigned j = 0; j < r->n_recent; j++) {
		const struct tcp_sack_block *b = &r->recent[j];
		uint32_t at = b->left;
		unsigned i = 0;

		while (i < r->n && r->segs[i].seq != at)
			i++;
		assert_true(i < r->n);
		while (i < r->n && r->segs[i].seq == at)
			at += r->segs[i++].len;
		assert_int_equal(at, b->right);
	}
}

/* Expect exactly the SACK blocks @want (pairs left, right). */
static void expect_sack(const struct tcp_reass *r, uint32_t rcv_nxt, unsigned max, unsigned n_want,
			const uint32_t *want)
{
	struct tcp_sack_block b[TCP_REASS_MAX_SEGS];
	unsigned n = tcp_reass_sack(r, rcv_nxt, b, max);

	assert_int_equal(n, n_want);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(b[i].left, want[2 * i]);
		assert_int_equal(b[i].right, want[2 * i + 1]);
	}
}

#define EXPECT_SACK(r, rcv_nxt, max, ...)                                                          \
	do {                                                                                       \
		const uint32_t w_[] = {__VA_ARGS__};                                               \
		expect_sack(r, rcv_nxt, max, sizeof(w_) / sizeof(w_[0]) / 2, w_);                  \
	} while (0)

static void finish(struct tcp_reass *r)
{
	check_queue(r);
	tcp_reass_clear(r);
	assert_int_equal(zbuf_in_use(), 0);
}

/* A fresh region per test: a failed test's leaks do not fail the next. */
static int setup(void **state)
{
	struct zbuf_config c = {.backend = ZBUF_BACKEND_MMAP};

	(void)state;
	return zbuf_init(&c);
}

static int teardown(void **state)
{
	(void)state;
	zbuf_fini();
	return 0;
}

/* ------------------------------------------------------------------------ */

static void test_in_order_pop(void **state)
{
	struct tcp_reass r;
	uint32_t nxt = 1000;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	assert_int_equal(ins(&r, nxt, 1000, 100), TCP_REASS_STORED);
	assert_int_equal(ins(&r, nxt, 1100, 200), TCP_REASS_STORED);
	assert_int_equal(ins(&r, nxt, 1300, 50), TCP_REASS_STORED);
	assert_int_equal(tcp_reass_bytes(&r), 350);
	check_queue(&r);
	assert_int_equal(drain(&r, &nxt), 350);
	assert_int_equal(nxt, 1350);
	assert_int_equal(r.n, 0);
	assert_int_equal(tcp_reass_bytes(&r), 0);
	EXPECT_SACK(&r, nxt, 4);
	finish(&r);
}

static void test_pop_respects_max(void **state)
{
	struct tcp_reass r;
	struct tcp_slice out[2];
	uint32_t nxt = 0;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	for (uint32_t s = 0; s < 500; s += 100)
		assert_int_equal(ins(&r, nxt, s, 100), TCP_REASS_STORED);
	assert_int_equal(tcp_reass_pop(&r, nxt, out, 2), 2);
	assert_int_equal(out[0].seq, 0);
	assert_int_equal(out[1].seq, 100);
	consume(&out[0]);
	consume(&out[1]);
	nxt = 200;
	assert_int_equal(tcp_reass_bytes(&r), 300);
	check_queue(&r);
	assert_int_equal(drain(&r, &nxt), 300);
	finish(&r);
}

static void test_single_hole_filled(void **state)
{
	struct tcp_reass r;
	struct tcp_slice out[4];
	uint32_t nxt = 5000;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	assert_int_equal(ins(&r, nxt, 5500, 500), TCP_REASS_STORED);
	assert_int_equal(ins(&r, nxt, 6000, 500), TCP_REASS_STORED);
	assert_int_equal(tcp_reass_pop(&r, nxt, out, 4), 0);
	assert_int_equal(ins(&r, nxt, 5000, 500), TCP_REASS_STORED);
	check_queue(&r);
	assert_int_equal(drain(&r, &nxt), 1500);
	assert_int_equal(nxt, 6500);
	finish(&r);
}

/* --- property tests -------------------------------------------------------- */

struct seg {
	uint32_t off, len; /* relative to the stream's first sequence number */
};

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

#define STREAM 4000

/*
 * Cut the stream into consecutive segments (so every byte is sent), add
 * overlapping segments at random places and exact duplicates, and shuffle.
 * @return how many (at most @max).
 */
static unsigned make_segments(struct seg *segs, unsigned max, uint32_t max_len, unsigned extra)
{
	unsigned n = 0;

	for (uint32_t off = 0; off < STREAM && n < max;) {
		uint32_t len = 1 + rnd(max_len);

		if (len > STREAM - off)
			len = STREAM - off;
		segs[n++] = (struct seg){off, len};
		off += len;
	}
	for (unsigned i = 0; i < extra && n < max; i++) {
		if (rnd(3) == 0) {
			segs[n] = segs[rnd(n)]; /* exact duplicate */
		} else {
			uint32_t off = rnd(STREAM), len = 1 + rnd(2 * max_len);

			if (len > STREAM - off)
				len = STREAM - off;
			segs[n] = (struct seg){off, len};
		}
		n++;
	}
	for (unsigned i = n - 1; i > 0; i--) { /* Fisher-Yates */
		unsigned j = rnd(i + 1);
		struct seg t = segs[i];

		segs[i] = segs[j];
		segs[j] = t;
	}
	return n;
}

/*
 * What inserting [off, off+len) should do, from a byte map of the stream
 * (held[] = queued, below @done = delivered): the new bytes and the new
 * sub-ranges (slices) they form.
 */
static void model_new(const bool *held, uint32_t done, struct seg s, uint32_t *nb, unsigned *k)
{
	bool in_gap = false;

	*nb = 0;
	*k = 0;
	for (uint32_t o = s.off < done ? done : s.off; o < s.off + s.len; o++) {
		if (!held[o]) {
			(*nb)++;
			if (!in_gap)
				(*k)++;
		}
		in_gap = !held[o];
	}
}

/* The SACK blocks match the byte map: maximal held runs strictly above
 * rcv_nxt, at most 4, the first holding @s when @s was queued. */
static void check_sack_model(const struct tcp_reass *r, uint32_t base, const bool *held,
			     uint32_t done, const struct seg *s)
{
	struct tcp_sack_block b[TCP_SACK_MAX_BLOCKS];
	unsigned n = tcp_reass_sack(r, base + done, b, TCP_SACK_MAX_BLOCKS);
	unsigned runs = 0;

	for (uint32_t o = done + 1; o < STREAM; o++)
		if (held[o] && !held[o - 1])
			runs++;
	assert_int_equal(n, runs < TCP_SACK_MAX_BLOCKS ? runs : TCP_SACK_MAX_BLOCKS);
	for (unsigned i = 0; i < n; i++) {
		uint32_t l = b[i].left - base, rt = b[i].right - base;

		assert_true(l > done && l < rt && rt <= STREAM);
		assert_false(held[l - 1]);
		assert_true(rt == STREAM || !held[rt]);
		for (uint32_t o = l; o < rt; o++)
			assert_true(held[o]);
		for (unsigned j = 0; j < i; j++)
			assert_true(b[j].left != b[i].left);
	}
	if (s != NULL && s->off + s->len > done) {
		uint32_t l = s->off < done ? done : s->off;

		/* the run holding the segment starts above rcv_nxt? then first */
		while (l > done && held[l - 1])
			l--;
		if (l > done) {
			assert_true(n > 0);
			assert_int_equal(b[0].left, base + l);
		}
	}
}

static const uint32_t bases[] = {0, 5000, 0xfffff000u, 0xffffffffu - 1999, 0x7fffff00u};

/* Every segment inserted in a random order, then one pop delivers all. */
static void test_random_orders_insert_all(void **state)
{
	static struct seg segs[60];
	static bool held[STREAM];

	(void)state;
	for (unsigned seed = 1; seed <= 200; seed++) {
		uint32_t base = bases[seed % 5], nxt = base;
		struct tcp_reass r;
		unsigned n;

		rng_state = 0x9e3779b97f4a7c15ull * seed;
		/* <= 60 segments: <= 119 slices, so never FULL here */
		n = make_segments(segs, 60, 200, 20);
		memset(held, 0, sizeof(held));
		tcp_reass_init(&r, 1u << 20, TCP_REASS_MAX_SEGS);
		for (unsigned i = 0; i < n; i++) {
			uint32_t nb;
			unsigned k;

			model_new(held, 0, segs[i], &nb, &k);
			assert_int_equal(ins(&r, nxt, base + segs[i].off, segs[i].len),
					 nb ? TCP_REASS_STORED : TCP_REASS_DUPLICATE);
			memset(held + segs[i].off, 1, segs[i].len);
			check_queue(&r);
			check_sack_model(&r, base, held, 0, &segs[i]);
		}
		assert_int_equal(tcp_reass_bytes(&r), STREAM);
		assert_int_equal(drain(&r, &nxt), STREAM);
		assert_int_equal(nxt, base + STREAM);
		assert_int_equal(r.n, 0);
		assert_int_equal(r.n_recent, 0);
		finish(&r);
	}
}

/*
 * The receive path as the TCP core runs it, with tight bounds: a segment
 * at rcv_nxt is taken directly (rcv_nxt advances past it, then pop takes
 * what continues it, trimming held data it overlapped); one beyond goes
 * to the queue, and one refused as FULL is sent again later. The delivered
 * bytes must be the stream, every verdict must match the byte-map model.
 */
static void test_random_orders_bounded(void **state)
{
	static struct seg segs[4096];
	static bool held[STREAM];

	(void)state;
	for (unsigned seed = 1; seed <= 200; seed++) {
		uint32_t base = bases[seed % 5], nxt = base, done = 0;
		unsigned max_segs = 2 + seed % 7, n, head = 0;
		uint32_t max_bytes = 300 + 50 * (seed % 13);
		struct tcp_reass r;

		rng_state = 0x2545f4914f6cdd1dull * seed;
		n = make_segments(segs, 200, 120, 60);
		memset(held, 0, sizeof(held));
		tcp_reass_init(&r, max_bytes, max_segs);
		while (head < n) {
			struct seg s = segs[head++];
			uint8_t *p = mkseg(base + s.off, s.len);

			if (s.off <= done) {
				if (s.off + s.len > done) {
					/* in order: consumed without the queue */
					for (uint32_t o = done; o < s.off + s.len; o++)
						assert_int_equal(p[o - s.off], pat(base + o));
					done = s.off + s.len;
					nxt = base + done;
				}
			} else {
				uint32_t nb;
				unsigned k;
				enum tcp_reass_result want, got;

				model_new(held, done, s, &nb, &k);
				if (nb == 0)
					want = TCP_REASS_DUPLICATE;
				else if (r.n + k > max_segs || tcp_reass_bytes(&r) + nb > max_bytes)
					want = TCP_REASS_FULL;
				else
					want = TCP_REASS_STORED;
				got = tcp_reass_insert(&r, nxt, base + s.off, p, s.len, NULL);
				assert_int_equal(got, want);
				if (got == TCP_REASS_FULL) {
					assert_true(n < 4096);
					segs[n++] = s; /* retransmitted later */
				} else {
					memset(held + s.off, 1, s.len);
				}
			}
			zbuf_drop(p);
			done += drain(&r, &nxt);
			assert_int_equal(nxt, base + done);
			for (uint32_t o = 0; o < done; o++)
				held[o] = false;
			check_queue(&r);
			assert_true(tcp_reass_bytes(&r) <= max_bytes);
			check_sack_model(&r, base, held, done, NULL);
		}
		assert_int_equal(done, STREAM);
		assert_int_equal(r.n, 0);
		finish(&r);
	}
}

/* --- duplicates and trimming --------------------------------------------- */

static void test_duplicate_detection(void **state)
{
	struct tcp_reass r;
	uint8_t *p = mkseg(2000, 300);

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	assert_int_equal(tcp_reass_insert(&r, 1000, 2000, p, 300, NULL), TCP_REASS_STORED);
	assert_int_equal(zbuf_refcnt(p), 2);
	/* the same segment again, a part of it, nothing, and old data */
	assert_int_equal(tcp_reass_insert(&r, 1000, 2000, p, 300, NULL), TCP_REASS_DUPLICATE);
	assert_int_equal(tcp_reass_insert(&r, 1000, 2100, p + 100, 50, NULL), TCP_REASS_DUPLICATE);
	assert_int_equal(tcp_reass_insert(&r, 1000, 2000, p, 0, NULL), TCP_REASS_DUPLICATE);
	assert_int_equal(ins(&r, 1000, 500, 500), TCP_REASS_DUPLICATE);
	assert_int_equal(ins(&r, 1000, 0xfffff000u, 100), TCP_REASS_DUPLICATE);
	assert_int_equal(zbuf_refcnt(p), 2); /* no reference taken for them */
	assert_int_equal(r.n, 1);
	assert_int_equal(tcp_reass_bytes(&r), 300);
	zbuf_drop(p);
	finish(&r);
}

static void test_trim_below_rcv_nxt(void **state)
{
	struct tcp_reass r;
	uint32_t nxt = 1000;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	assert_int_equal(ins(&r, nxt, 900, 300), TCP_REASS_STORED);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.segs[0].seq, 1000);
	assert_int_equal(r.segs[0].len, 200);
	assert_int_equal(r.segs[0].data[0], pat(1000));
	check_queue(&r);
	assert_int_equal(drain(&r, &nxt), 200);
	finish(&r);
}

static void test_overlap_left_side_trimmed(void **state)
{
	struct tcp_reass r;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	assert_int_equal(ins(&r, 0, 100, 100), TCP_REASS_STORED);
	/* [150, 300): its first 50 bytes are held, only [200, 300) is new */
	assert_int_equal(ins(&r, 0, 150, 150), TCP_REASS_STORED);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.segs[1].seq, 200);
	assert_int_equal(r.segs[1].len, 100);
	assert_int_equal(r.segs[1].data[0], pat(200));
	assert_int_equal(tcp_reass_bytes(&r), 200);
	EXPECT_SACK(&r, 0, 4, 100, 300);
	finish(&r);
}

static void test_overlap_right_side_trimmed(void **state)
{
	struct tcp_reass r;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	assert_int_equal(ins(&r, 0, 200, 100), TCP_REASS_STORED);
	/* [100, 250): its last 50 bytes are held, only [100, 200) is new */
	assert_int_equal(ins(&r, 0, 100, 150), TCP_REASS_STORED);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.segs[0].seq, 100);
	assert_int_equal(r.segs[0].len, 100);
	assert_int_equal(r.segs[1].seq, 200);
	assert_int_equal(tcp_reass_bytes(&r), 200);
	EXPECT_SACK(&r, 0, 4, 100, 300);
	finish(&r);
}

static void test_overlap_covers_several(void **state)
{
	struct tcp_reass r;
	uint8_t *p;
	static const uint32_t want[][2] = {{50, 50},   {100, 100}, {200, 100}, {300, 100},
					   {400, 100}, {500, 100}, {600, 100}};

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	assert_int_equal(ins(&r, 0, 100, 100), TCP_REASS_STORED);
	assert_int_equal(ins(&r, 0, 300, 100), TCP_REASS_STORED);
	assert_int_equal(ins(&r, 0, 500, 100), TCP_REASS_STORED);
	/* [50, 700) spans three held slices and four holes around them */
	p = mkseg(50, 650);
	assert_int_equal(tcp_reass_insert(&r, 0, 50, p, 650, NULL), TCP_REASS_STORED);
	assert_int_equal(zbuf_refcnt(p), 1 + 4); /* ours + one per new slice */
	zbuf_drop(p);
	assert_int_equal(r.n, 7);
	for (unsigned i = 0; i < 7; i++) {
		assert_int_equal(r.segs[i].seq, want[i][0]);
		assert_int_equal(r.segs[i].len, want[i][1]);
		assert_int_equal(r.segs[i].data[0], pat(want[i][0]));
	}
	assert_int_equal(tcp_reass_bytes(&r), 650);
	EXPECT_SACK(&r, 0, 4, 50, 700);
	finish(&r);
}

static void test_pop_releases_below_rcv_nxt(void **state)
{
	struct tcp_reass r;
	struct tcp_slice out[4];
	uint32_t nxt = 0;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	assert_int_equal(ins(&r, nxt, 100, 100), TCP_REASS_STORED);
	assert_int_equal(ins(&r, nxt, 200, 100), TCP_REASS_STORED);
	assert_int_equal(ins(&r, nxt, 400, 100), TCP_REASS_STORED);
	/* [0, 250) arrived in order and went straight to the application */
	nxt = 250;
	assert_int_equal(tcp_reass_pop(&r, nxt, out, 4), 1);
	assert_int_equal(out[0].seq, 250);
	assert_int_equal(out[0].len, 50);
	consume(&out[0]);
	nxt = 300;
	assert_int_equal(zbuf_in_use(), 1); /* [100, 200) was released */
	assert_int_equal(tcp_reass_bytes(&r), 100);
	EXPECT_SACK(&r, nxt, 4, 400, 500);
	finish(&r);
}

/*
 * RFC 9293 3.10.7.4 first check, at the edge: a slice ending exactly at
 * RCV.NXT was delivered whole (in order, by a segment covering it): it is
 * released and no empty slice is popped; a segment ending exactly at
 * RCV.NXT is a duplicate and leaves the queue and its SACK blocks as they
 * were.
 */
static void test_ending_at_rcv_nxt(void **state)
{
	struct tcp_reass r;
	struct tcp_slice out[4];
	uint32_t nxt = 0;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	assert_int_equal(ins(&r, nxt, 100, 100), TCP_REASS_STORED);
	nxt = 200; /* [0, 200) came in one segment */
	assert_int_equal(tcp_reass_pop(&r, nxt, out, 4), 0);
	assert_int_equal(tcp_reass_bytes(&r), 0);
	assert_int_equal(zbuf_in_use(), 0);
	assert_int_equal(ins(&r, nxt, 300, 100), TCP_REASS_STORED);
	assert_int_equal(ins(&r, nxt, 500, 100), TCP_REASS_STORED);
	/* Not the segment of any held run: the order of the blocks stays. */
	assert_int_equal(ins(&r, nxt, 150, 50), TCP_REASS_DUPLICATE);
	assert_int_equal(ins(&r, nxt, 100, 100), TCP_REASS_DUPLICATE);
	EXPECT_SACK(&r, nxt, 4, 500, 600, 300, 400);
	finish(&r);
}

/* --- bounds ---------------------------------------------------------------- */

static void test_full_max_segs(void **state)
{
	struct tcp_reass r;
	uint8_t *p;

	(void)state;
	tcp_reass_init(&r, 65536, 3);
	assert_int_equal(ins(&r, 0, 100, 100), TCP_REASS_STORED);
	assert_int_equal(ins(&r, 0, 300, 100), TCP_REASS_STORED);
	/* [150, 500) would need two slices ([200, 300) and [400, 500)) and
	 * one is left: nothing is stored */
	p = mkseg(150, 350);
	assert_int_equal(tcp_reass_insert(&r, 0, 150, p, 350, NULL), TCP_REASS_FULL);
	assert_int_equal(zbuf_refcnt(p), 1);
	zbuf_drop(p);
	assert_int_equal(r.n, 2);
	assert_int_equal(tcp_reass_bytes(&r), 200);
	EXPECT_SACK(&r, 0, 4, 300, 400, 100, 200);
	assert_int_equal(ins(&r, 0, 500, 100), TCP_REASS_STORED);
	assert_int_equal(ins(&r, 0, 700, 100), TCP_REASS_FULL);
	/* a duplicate is still a duplicate when full */
	assert_int_equal(ins(&r, 0, 300, 100), TCP_REASS_DUPLICATE);
	assert_int_equal(r.n, 3);
	finish(&r);
}

/*
 * The arrays start small and double as holes accumulate, up to max_segs:
 * 100 disjoint segments take 128 slots (not max_segs = 2048), every one is
 * kept, the most recent is SACKed first, and all are delivered once the
 * holes fill.
 */
static void test_arrays_grow_on_demand(void **state)
{
	struct tcp_reass r;
	uint32_t rcv_nxt = 0;

	(void)state;
	tcp_reass_init(&r, 1u << 20, 2048);
	assert_int_equal(r.cap, 0);
	assert_int_equal(ins(&r, 0, 200, 100), TCP_REASS_STORED);
	assert_int_equal(r.cap, 16);
	for (uint32_t i = 1; i < 100; i++)
		assert_int_equal(ins(&r, 0, 200 + 200 * i, 100), TCP_REASS_STORED);
	assert_int_equal(r.n, 100);
	assert_int_equal(r.cap, 128);
	EXPECT_SACK(&r, 0, 1, 20000, 20100);
	for (uint32_t i = 0; i < 100; i++)
		assert_int_equal(
		    ins(&r, rcv_nxt, 100 + 200 * i - 100 * (i == 0), 100 + 100 * (i == 0)),
		    TCP_REASS_STORED);
	assert_int_equal(drain(&r, &rcv_nxt), 20100);
	finish(&r);
}

/* Growth stops at max_segs even when that is not a power of two. */
static void test_arrays_grow_to_max_segs(void **state)
{
	struct tcp_reass r;

	(void)state;
	tcp_reass_init(&r, 1u << 20, 20);
	for (uint32_t i = 0; i < 20; i++)
		assert_int_equal(ins(&r, 0, 200 + 200 * i, 100), TCP_REASS_STORED);
	assert_int_equal(r.cap, 20);
	assert_int_equal(ins(&r, 0, 200 + 200 * 20, 100), TCP_REASS_FULL);
	assert_int_equal(r.n, 20);
	finish(&r);
}

static void test_full_max_bytes(void **state)
{
	struct tcp_reass r;

	(void)state;
	tcp_reass_init(&r, 1000, TCP_REASS_MAX_SEGS);
	assert_int_equal(ins(&r, 0, 100, 600), TCP_REASS_STORED);
	assert_int_equal(ins(&r, 0, 1000, 401), TCP_REASS_FULL);
	assert_int_equal(r.n, 1);
	assert_int_equal(tcp_reass_bytes(&r), 600);
	/* 700 bytes long but only 400 of them new: fits exactly */
	assert_int_equal(ins(&r, 0, 400, 700), TCP_REASS_STORED);
	assert_int_equal(tcp_reass_bytes(&r), 1000);
	assert_int_equal(ins(&r, 0, 2000, 1), TCP_REASS_FULL);
	assert_int_equal(r.n, 2);
	finish(&r);
}

/* --- SACK (RFC 2018) ------------------------------------------------------- */

/* RFC 2018 6, case 1: the first 4 of 8 segments arrive, the last 4 are
 * dropped: they are in order, nothing is out of order, no SACK option. */
static void test_sack_rfc2018_case1(void **state)
{
	struct tcp_reass r;
	uint32_t nxt = 5000;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	for (uint32_t s = 5000; s < 7000; s += 500) {
		assert_int_equal(ins(&r, nxt, s, 500), TCP_REASS_STORED);
		drain(&r, &nxt);
		EXPECT_SACK(&r, nxt, 4);
	}
	assert_int_equal(nxt, 7000);
	finish(&r);
}

/* RFC 2018 6, case 2: the first segment is dropped, the other 7 arrive;
 * each ACK is 5000 with one block growing from 5500-6000 to 5500-9000. */
static void test_sack_rfc2018_case2(void **state)
{
	struct tcp_reass r;
	uint32_t nxt = 5000;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	for (uint32_t s = 5500; s < 9000; s += 500) {
		assert_int_equal(ins(&r, nxt, s, 500), TCP_REASS_STORED);
		assert_int_equal(drain(&r, &nxt), 0);
		EXPECT_SACK(&r, nxt, 4, 5500, s + 500);
	}
	check_queue(&r);
	finish(&r);
}

/* RFC 2018 6, case 3: the 2nd, 4th, 6th and 8th segments are dropped;
 * then the 4th arrives, then the 2nd. The tables of the RFC, row by row. */
static void test_sack_rfc2018_case3(void **state)
{
	struct tcp_reass r;
	uint32_t nxt = 5000;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	/* 5000: ACK 5500, no SACK */
	assert_int_equal(ins(&r, nxt, 5000, 500), TCP_REASS_STORED);
	drain(&r, &nxt);
	assert_int_equal(nxt, 5500);
	EXPECT_SACK(&r, nxt, 4);
	/* 6000: ACK 5500, 6000-6500 */
	assert_int_equal(ins(&r, nxt, 6000, 500), TCP_REASS_STORED);
	EXPECT_SACK(&r, nxt, 4, 6000, 6500);
	/* 7000: ACK 5500, 7000-7500 6000-6500 */
	assert_int_equal(ins(&r, nxt, 7000, 500), TCP_REASS_STORED);
	EXPECT_SACK(&r, nxt, 4, 7000, 7500, 6000, 6500);
	/* 8000: ACK 5500, 8000-8500 7000-7500 6000-6500 */
	assert_int_equal(ins(&r, nxt, 8000, 500), TCP_REASS_STORED);
	EXPECT_SACK(&r, nxt, 4, 8000, 8500, 7000, 7500, 6000, 6500);
	/* the 4th (6500) arrives: ACK 5500, 6000-7500 8000-8500 */
	assert_int_equal(ins(&r, nxt, 6500, 500), TCP_REASS_STORED);
	assert_int_equal(drain(&r, &nxt), 0);
	EXPECT_SACK(&r, nxt, 4, 6000, 7500, 8000, 8500);
	/* the 2nd (5500) arrives: ACK 7500, 8000-8500 */
	assert_int_equal(ins(&r, nxt, 5500, 500), TCP_REASS_STORED);
	assert_int_equal(drain(&r, &nxt), 2000);
	assert_int_equal(nxt, 7500);
	EXPECT_SACK(&r, nxt, 4, 8000, 8500);
	finish(&r);
}

/* Five runs held: 4 blocks without timestamps, 3 with (RFC 2018 3: 40
 * bytes of options, 10 of them taken by the timestamp option). */
static void test_sack_max_blocks_3_vs_4(void **state)
{
	struct tcp_reass r;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	for (uint32_t s = 1100; s < 2000; s += 200)
		assert_int_equal(ins(&r, 1000, s, 100), TCP_REASS_STORED);
	EXPECT_SACK(&r, 1000, 4, 1900, 2000, 1700, 1800, 1500, 1600, 1300, 1400);
	EXPECT_SACK(&r, 1000, 3, 1900, 2000, 1700, 1800, 1500, 1600);
	/* a segment joining two runs makes the merged run first, once */
	assert_int_equal(ins(&r, 1000, 1200, 100), TCP_REASS_STORED);
	EXPECT_SACK(&r, 1000, 4, 1100, 1400, 1900, 2000, 1700, 1800, 1500, 1600);
	EXPECT_SACK(&r, 1000, 3, 1100, 1400, 1900, 2000, 1700, 1800);
	finish(&r);
}

/* A duplicate also triggers an ACK, whose first block is the run that
 * holds it (RFC 2018 4). */
static void test_sack_duplicate_refreshes_recency(void **state)
{
	struct tcp_reass r;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	assert_int_equal(ins(&r, 0, 100, 100), TCP_REASS_STORED);
	assert_int_equal(ins(&r, 0, 300, 100), TCP_REASS_STORED);
	assert_int_equal(ins(&r, 0, 500, 100), TCP_REASS_STORED);
	EXPECT_SACK(&r, 0, 4, 500, 600, 300, 400, 100, 200);
	assert_int_equal(ins(&r, 0, 120, 30), TCP_REASS_DUPLICATE);
	EXPECT_SACK(&r, 0, 4, 100, 200, 500, 600, 300, 400);
	/* a FULL segment was not received into any block: order unchanged */
	r.max_bytes = 300;
	assert_int_equal(ins(&r, 0, 700, 100), TCP_REASS_FULL);
	EXPECT_SACK(&r, 0, 4, 100, 200, 500, 600, 300, 400);
	finish(&r);
}

/* Runs that leave the queue leave the SACK list; older runs that were
 * beyond the 4 reported ones are reported again in their recency order. */
static void test_sack_after_pop(void **state)
{
	/* arrival order of six runs, 100 bytes each */
	static const uint32_t order[] = {500, 300, 700, 900, 100, 1100};
	struct tcp_reass r;
	uint32_t nxt = 0;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(ins(&r, nxt, order[i], 100), TCP_REASS_STORED);
	EXPECT_SACK(&r, nxt, 4, 1100, 1200, 100, 200, 900, 1000, 700, 800);
	assert_int_equal(ins(&r, nxt, 0, 100), TCP_REASS_STORED);
	assert_int_equal(drain(&r, &nxt), 200);
	EXPECT_SACK(&r, nxt, 4, 1100, 1200, 900, 1000, 700, 800, 300, 400);
	assert_int_equal(ins(&r, nxt, 200, 100), TCP_REASS_STORED);
	assert_int_equal(drain(&r, &nxt), 200);
	EXPECT_SACK(&r, nxt, 4, 1100, 1200, 900, 1000, 700, 800, 500, 600);
	finish(&r);
}

/* Insert like ins() and return the held part tcp_reass_insert() reports. */
static struct tcp_sack_block ins_dup(struct tcp_reass *r, uint32_t rcv_nxt, uint32_t seq,
				     uint32_t len, enum tcp_reass_result want)
{
	uint8_t *p = mkseg(seq, len);
	struct tcp_sack_block dup = {7, 9}; /* must be overwritten */

	assert_int_equal(tcp_reass_insert(r, rcv_nxt, seq, p, len, &dup), want);
	zbuf_drop(p);
	return dup;
}

/*
 * RFC 2883 4: a segment partly held already reports the first contiguous
 * range it repeats (the D-SACK block), across slices that touch, not
 * across a hole it fills; a wholly new segment reports none, a wholly
 * held one all of itself.
 */
static void test_partial_duplicate_reported(void **state)
{
	struct tcp_reass r;
	struct tcp_sack_block d;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	d = ins_dup(&r, 1000, 2000, 100, TCP_REASS_STORED); /* held: [2000, 2100) */
	assert_int_equal(d.left, d.right);
	d = ins_dup(&r, 1000, 2100, 100, TCP_REASS_STORED); /* [2000, 2200), two slices */
	assert_int_equal(d.left, d.right);
	d = ins_dup(&r, 1000, 2400, 100, TCP_REASS_STORED); /* and [2400, 2500) */
	assert_int_equal(d.left, d.right);
	d = ins_dup(&r, 1000, 1950, 100, TCP_REASS_STORED); /* new head, old tail */
	assert_int_equal(d.left, 2000);
	assert_int_equal(d.right, 2050);
	d = ins_dup(&r, 1000, 2020, 230, TCP_REASS_STORED); /* two held slices, then new */
	assert_int_equal(d.left, 2020);
	assert_int_equal(d.right, 2200);
	d = ins_dup(&r, 1000, 2240, 300, TCP_REASS_STORED); /* repeats 2240.., fills to 2400 */
	assert_int_equal(d.left, 2240);
	assert_int_equal(d.right, 2250);
	d = ins_dup(&r, 1000, 2540, 10, TCP_REASS_STORED);
	assert_int_equal(d.left, d.right);
	d = ins_dup(&r, 1000, 2100, 300, TCP_REASS_DUPLICATE); /* all of it held: all of it */
	assert_int_equal(d.left, 2100);
	assert_int_equal(d.right, 2400);
	check_queue(&r);
	assert_int_equal(tcp_reass_bytes(&r), 2550 - 1950); /* one run now */
	finish(&r);
}

/* --- wraparound, clear ----------------------------------------------------- */

static void test_wraparound(void **state)
{
	struct tcp_reass r;
	uint32_t nxt = 0xffffff00u;

	(void)state;
	tcp_reass_init(&r, 65536, TCP_REASS_MAX_SEGS);
	/* held: [2^32 - 128, 2^32 + 128) across the wrap, and [300, 400) */
	assert_int_equal(ins(&r, nxt, 0xffffff80u, 256), TCP_REASS_STORED);
	assert_int_equal(ins(&r, nxt, 300, 100), TCP_REASS_STORED);
	assert_int_equal(r.segs[0].seq, 0xffffff80u);
	assert_int_equal(r.segs[1].seq, 300);
	EXPECT_SACK(&r, nxt, 4, 300, 400, 0xffffff80u, 128);
	/* [2^32 - 192, 200) overlaps the wrapping slice on both sides */
	assert_int_equal(ins(&r, nxt, 0xffffff40u, 392), TCP_REASS_STORED);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.segs[0].seq, 0xffffff40u);
	assert_int_equal(r.segs[0].len, 64);
	assert_int_equal(r.segs[2].seq, 128);
	assert_int_equal(r.segs[2].len, 72);
	EXPECT_SACK(&r, nxt, 4, 0xffffff40u, 200, 300, 400);
	assert_int_equal(ins(&r, nxt, 0xfffffff0u, 8), TCP_REASS_DUPLICATE);
	check_queue(&r);
	/* fill [2^32 - 256, 2^32 - 192) and [200, 300): all in order */
	assert_int_equal(ins(&r, nxt, 0xffffff00u, 64), TCP_REASS_STORED);
	assert_int_equal(ins(&r, nxt, 200, 100), TCP_REASS_STORED);
	assert_int_equal(drain(&r, &nxt), 656);
	assert_int_equal(nxt, 400);
	/* below rcv_nxt, across the wrap: old data */
	assert_int_equal(ins(&r, nxt, 0xfffffff0u, 100), TCP_REASS_DUPLICATE);
	finish(&r);
}

static void test_clear_releases_all(void **state)
{
	struct tcp_reass r;
	uint8_t *p;

	(void)state;
	tcp_reass_init(&r, 1u << 20, TCP_REASS_MAX_SEGS);
	for (uint32_t s = 100; s < 100 + 2 * 100 * 50; s += 200)
		assert_int_equal(ins(&r, 0, s, 100), TCP_REASS_STORED);
	p = mkseg(50, 20000);
	assert_int_equal(tcp_reass_insert(&r, 0, 50, p, 20000, NULL), TCP_REASS_STORED);
	zbuf_drop(p);
	assert_int_equal(zbuf_in_use(), 51);
	tcp_reass_clear(&r);
	assert_int_equal(r.n, 0);
	assert_int_equal(tcp_reass_bytes(&r), 0);
	EXPECT_SACK(&r, 0, 4);
	assert_int_equal(zbuf_in_use(), 0);
	/* usable again */
	assert_int_equal(ins(&r, 0, 10, 10), TCP_REASS_STORED);
	finish(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_in_order_pop, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pop_respects_max, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_single_hole_filled, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_random_orders_insert_all, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_random_orders_bounded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_duplicate_detection, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_trim_below_rcv_nxt, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_overlap_left_side_trimmed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_overlap_right_side_trimmed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_overlap_covers_several, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pop_releases_below_rcv_nxt, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ending_at_rcv_nxt, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_full_max_segs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_full_max_bytes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_arrays_grow_on_demand, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_arrays_grow_to_max_segs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sack_rfc2018_case1, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sack_rfc2018_case2, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sack_rfc2018_case3, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sack_max_blocks_3_vs_4, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sack_duplicate_refreshes_recency, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sack_after_pop, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_partial_duplicate_reported, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wraparound, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_clear_releases_all, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
