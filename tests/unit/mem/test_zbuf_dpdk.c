/*
 * test_zbuf_dpdk.c - Zbuf on the DPDK backend: hugepage memzone, real IOVAs,
 * and packet mempools whose mbufs are Zbuf objects (refcount = mbuf refcnt,
 * no element overlapping a zone header, one VA-contiguous span for AF_XDP).
 * Skips when no 2 MiB hugepages are reserved.
 *
 * ASan + DPDK: with --in-memory on 2 MiB hugepages this test runs under
 * -Db_sanitize=address,undefined with no ASAN_OPTIONS and no --no-huge
 * (checked on Debian 12, DPDK 22.11, GCC 12, x86-64; LeakSanitizer stays on
 * and finds nothing, as lunar_eal_cleanup() runs rte_eal_cleanup()). The EAL's hugepage mappings
 * land outside ASan's shadow ranges. Should a platform conflict, the fallback
 * is "--no-huge -m 256" (IOVA as VA) in the EAL arguments below.
 */
#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_memory.h>
#include <rte_mempool.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "base/eal_exit.h"
#include "zbuf_test_util.h"

#define MBUF_ZONES	 4
#define HUGEPAGES_NEEDED 64 /* region (8 zones) + EAL and mempool bookkeeping */

static const struct zbuf_config dpdk_cfg = {.backend = ZBUF_BACKEND_DPDK,
					    .zones = {1, 1, 1, 1},
					    .mbuf_zones = MBUF_ZONES,
					    .socket_id = SOCKET_ID_ANY};
static bool eal_ok;
static const char *skip_why;

static unsigned free_hugepages(void)
{
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");
	unsigned n = 0;

	if (f) {
		if (fscanf(f, "%u", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

static int group_setup(void **state)
{
	char *argv[] = {"test",
			"--no-pci",
			"--in-memory",
			"--no-telemetry",
			"-l",
			"0",
			"--log-level=lib.eal:error",
			NULL};

	(void)state;
	if (free_hugepages() < HUGEPAGES_NEEDED) {
		skip_why = "needs 64 free 2 MiB hugepages: echo 256 > "
			   "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
		return 0;
	}
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	if (zbuf_init(&dpdk_cfg) != 0) {
		lunar_eal_cleanup();
		return -1;
	}
	eal_ok = true;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (eal_ok) {
		zbuf_fini();
		lunar_eal_cleanup();
	}
	return 0;
}

#define REQUIRE_EAL()                                                                              \
	do {                                                                                       \
		if (!eal_ok) {                                                                     \
			print_message("skipped: %s\n", skip_why);                                  \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* Generic objects in hugepage memory translate to the IOVA DPDK reports. */
static void test_dpdk_generic_iova(void **state)
{
	struct zbuf_zone_info zi;

	(void)state;
	REQUIRE_EAL();
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++) {
		char *p = zbuf_alloc_class(c);
		size_t size = zbuf_class_size(c);

		assert_non_null(p);
		for (size_t o = 0; o < size; o += 511)
			assert_int_equal(zbuf_iova(p + o), rte_mem_virt2iova(p + o));
		assert_int_equal(zbuf_iova(p + size - 1), rte_mem_virt2iova(p + size - 1));
		zbuf_unref(p + size - 1);
	}
	/* every zone: IOVA of its start and of its last byte */
	for (unsigned i = 0; i < zbuf_zone_count(); i++) {
		char *last;

		assert_int_equal(zbuf_zone_info(i, &zi), 0);
		last = (char *)zi.start + ZBUF_ZONE_SIZE - 1;
		assert_int_equal(zi.iova, rte_mem_virt2iova(zi.start));
		assert_int_equal(zbuf_iova(last), rte_mem_virt2iova(last));
	}
	print_message("IOVA mode %s\n", rte_eal_iova_mode() == RTE_IOVA_PA ? "PA" : "VA");
	assert_int_equal(zbuf_in_use(), 0);
}

struct iter_ctx {
	char *base;
	size_t span;
	uint32_t stride;
	unsigned count;
	unsigned bad;
};

static void check_elem(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
	struct iter_ctx *c = arg;
	char *slot = (char *)obj - mp->header_size;

	(void)idx;
	c->count++;
	if (slot < c->base || slot + c->stride > c->base + c->span ||
	    (size_t)(slot - c->base) % c->stride != 0)
		c->bad++;
}

static void test_pktpool(void **state)
{
	struct rte_mempool *mp;
	struct rte_mempool_memhdr *hdr;
	struct zbuf_zone_info zi, zfirst;
	struct iter_ctx ic = {0};
	struct rte_mbuf *m;
	unsigned avail, n_in_circ, mzone;
	uint32_t stride;
	char *p, *expect_next;
	size_t total_len = 0;
	void **objs;

	(void)state;
	REQUIRE_EAL();
	mp = zbuf_pktpool_create("zb_pool", 1000, 2048);
	assert_non_null(mp);
	stride = mp->header_size + mp->elt_size + mp->trailer_size;
	assert_int_equal(stride, 4096); /* 64 + 128 + 128 + 2048 rounded to a power of two */
	assert_int_equal(rte_mempool_calc_obj_size(mp->elt_size, mp->flags, NULL), stride);
	assert_true(rte_pktmbuf_data_room_size(mp) >= RTE_PKTMBUF_HEADROOM + 2048);
	/* 2 zones of 512 slots, slot 0 of each withheld */
	assert_int_equal(mp->populated_size, 1024);
	avail = rte_mempool_avail_count(mp);
	assert_int_equal(avail, 1022);
	assert_int_equal(zbuf_in_use(), 0);

	/* an RX-like mbuf: payload pointer in the middle of its data */
	m = rte_pktmbuf_alloc(mp);
	assert_non_null(m);
	assert_non_null(rte_pktmbuf_append(m, 1500));
	p = rte_pktmbuf_mtod_offset(m, char *, 700);
	assert_true(zbuf_contains(p));
	assert_ptr_equal(zbuf_obj(p), m);
	assert_int_equal(zbuf_obj_size(p), stride - mp->header_size);
	assert_int_equal(zbuf_refcnt(p), 1);
	assert_int_equal(zbuf_iova(p), rte_pktmbuf_iova_offset(m, 700));
	assert_int_equal(zbuf_in_use(), 1);
	zi = zone_info_of(p);
	assert_int_equal(zi.kind, ZBUF_KIND_MBUF);
	assert_ptr_equal(zi.mp, mp);

	/* every byte of the element after the mempool object header maps to the mbuf */
	for (char *q = (char *)m; q < (char *)m - mp->header_size + stride; q++) {
		if (zbuf_obj(q) != m)
			fail_msg("zbuf_obj(%p) != mbuf %p", (void *)q, (void *)m);
		if (zbuf_iova(q) != rte_mempool_virt2iova(m) + (uint64_t)(q - (char *)m))
			fail_msg("zbuf_iova(%p) wrong", (void *)q);
	}
	assert_null(zbuf_obj((char *)m - 1)); /* the mempool object header */

	zbuf_hold(p);
	assert_int_equal(rte_mbuf_refcnt_read(m), 2);
	assert_int_equal(zbuf_refcnt(p + 10), 2);
	zbuf_drop(p);
	assert_int_equal(rte_mbuf_refcnt_read(m), 1);
	assert_int_equal(rte_mempool_avail_count(mp), avail - 1);
	/* Handed to the application, which gives it back. */
	assert_int_equal(zbuf_app_refcnt(p), 0);
	zbuf_give(p + 5);
	assert_int_equal(zbuf_app_refcnt(p), 1);
	assert_int_equal(rte_mbuf_refcnt_read(m), 1);
	zbuf_unref(p + 1);
	assert_int_equal(rte_mempool_avail_count(mp), avail);
	assert_int_equal(zbuf_in_use(), 0);

	/* one VA-contiguous span of populated_size * stride from the first chunk */
	hdr = STAILQ_FIRST(&mp->mem_list);
	assert_non_null(hdr);
	ic.base = hdr->addr;
	ic.span = (size_t)mp->populated_size * stride;
	ic.stride = stride;
	assert_int_equal(zbuf_zone_info(zbuf_zone_count() - MBUF_ZONES, &zfirst), 0);
	assert_ptr_equal(ic.base, zfirst.start);
	expect_next = ic.base;
	STAILQ_FOREACH(hdr, &mp->mem_list, next)
	{
		assert_ptr_equal(hdr->addr, expect_next);
		expect_next = (char *)hdr->addr + hdr->len;
		total_len += hdr->len;
	}
	assert_int_equal(total_len, ic.span);
	assert_int_equal(rte_mempool_obj_iter(mp, check_elem, &ic), mp->populated_size);
	assert_int_equal(ic.count, mp->populated_size);
	assert_int_equal(ic.bad, 0);

	/* every object in circulation lies in an mbuf zone and clear of its header */
	objs = calloc(avail, sizeof(*objs));
	assert_non_null(objs);
	assert_int_equal(rte_mempool_get_bulk(mp, objs, avail), 0);
	assert_int_equal(rte_mempool_avail_count(mp), 0);
	assert_null(rte_pktmbuf_alloc(mp));
	n_in_circ = 0;
	for (unsigned i = 0; i < avail; i++) {
		struct zbuf_zone_info z = zone_info_of(objs[i]);
		size_t off = (size_t)((char *)objs[i] - (char *)z.start) - mp->header_size;

		assert_int_equal(z.kind, ZBUF_KIND_MBUF);
		assert_ptr_equal(z.mp, mp);
		assert_true(off >= z.first_obj_off);
		assert_true(off >= stride); /* slot 0 holds the zone header */
		assert_ptr_equal(zbuf_obj(objs[i]), objs[i]);
		/* the span ends with the slot, counted from the mbuf, not the slot's header */
		assert_int_equal(zbuf_span(objs[i]), zbuf_obj_size(objs[i]));
		assert_int_equal(zbuf_span((char *)objs[i] + 64), zbuf_obj_size(objs[i]) - 64);
		n_in_circ++;
	}
	assert_int_equal(n_in_circ, 1022);
	rte_mempool_put_bulk(mp, objs, avail);
	free(objs);
	assert_int_equal(rte_mempool_avail_count(mp), avail);

	/* misuse inside mbuf zones */
	mzone = zbuf_zone_count() - MBUF_ZONES;
	zbuf_zone_info(mzone, &zi);
	EXPECT_MISUSE(zbuf_unref((char *)zi.start + 100), "pointer into a zone header");
	EXPECT_MISUSE(zbuf_ref((char *)zi.start + stride + 8),
		      "pointer into a mempool object header");
	zbuf_zone_info(zbuf_zone_count() - 1, &zi);
	EXPECT_MISUSE(zbuf_unref((char *)zi.start + 5000), "no packet pool uses");
	assert_int_equal(zbuf_in_use(), 0);
}

static void test_pktpool_more(void **state)
{
	struct rte_mempool *mp;
	struct zbuf_zone_info zi;
	struct rte_mbuf *m;

	(void)state;
	REQUIRE_EAL();
	/* jumbo: 64 + 128 + 128 + 9000 -> 16 KiB stride, one zone (127 mbufs) */
	mp = zbuf_pktpool_create("zb_jumbo", 100, 9000);
	assert_non_null(mp);
	assert_int_equal(mp->header_size + mp->elt_size + mp->trailer_size, 16384);
	assert_int_equal(rte_mempool_avail_count(mp), 127);
	m = rte_pktmbuf_alloc(mp);
	assert_non_null(m);
	zi = zone_info_of(m);
	assert_int_equal(zi.kind, ZBUF_KIND_MBUF);
	assert_ptr_equal(zi.mp, mp);
	assert_int_equal(zi.stride, 16384);
	assert_int_equal(zbuf_in_use(), 1);
	/* chained segment: zbuf_drop releases the segment the pointer is in */
	zbuf_drop(rte_pktmbuf_mtod(m, char *) + 9000);
	assert_int_equal(rte_mempool_avail_count(mp), 127);

	/* one mbuf zone left: a pool that needs two is refused */
	errno = 0;
	assert_null(zbuf_pktpool_create("zb_big", 2000, 2048));
	assert_int_equal(errno, ENOMEM);
	/* too big for a 16-bit buf_len */
	assert_null(zbuf_pktpool_create("zb_huge", 10, 65500));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(zbuf_in_use(), 0);
}

/* Too few hugepages: -ENOMEM and a log line that says how to fix it. */
static void test_dpdk_enomem_message(void **state)
{
	struct zbuf_config big = dpdk_cfg;
	char buf[1024] = {0};
	FILE *tf = tmpfile();
	int saved, ret;

	(void)state;
	REQUIRE_EAL();
	assert_non_null(tf);
	zbuf_fini();
	big.mbuf_zones = 4096; /* 8 GiB */
	fflush(stderr);
	saved = dup(2);
	dup2(fileno(tf), 2);
	ret = zbuf_init(&big);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tf);
	assert_true(fread(buf, 1, sizeof(buf) - 1, tf) > 0);
	fclose(tf);
	print_message("expected error, logged: %s", buf);
	assert_int_equal(ret, -ENOMEM);
	assert_non_null(strstr(buf, "not enough hugepages for 4100 zones (need 8200 MiB"));
	assert_non_null(strstr(buf, "> /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"));
	assert_int_equal(zbuf_zone_count(), 0);
	/* the failed attempt left nothing behind: a normal region fits again */
	assert_int_equal(zbuf_init(&dpdk_cfg), 0);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * Debug builds check packet pools: a buffer freed twice would sit in the
 * ring twice and be handed to two owners (DPDK cannot tell: a free mbuf's
 * refcnt is 1). Reported instead, and the ring keeps it once; a reference
 * taken to a free buffer is reported too; ASan sees its data as poisoned.
 */
static unsigned misuses_counted;

static void count_misuse(const char *msg)
{
	(void)msg;
	misuses_counted++;
}

/* The pool test_pktpool() made (skips without the EAL). */
static struct rte_mempool *pktpool_of_test_pktpool(void)
{
	struct rte_mempool *mp;

	REQUIRE_EAL();
	mp = rte_mempool_lookup("zb_pool");
	assert_non_null(mp);
	return mp;
}

/*
 * A packet buffer's reference count is DPDK's 16 bits: one received
 * buffer sent zero-copy on ~64k connections would wrap it and free the
 * buffer while still in use. zbuf_try_hold() stops at ZBUF_MBUF_REF_MAX
 * with -EOVERFLOW (the send paths then copy, or fail the send); zbuf_hold()
 * goes on to 65,535 and then reports the overflow instead of wrapping.
 */
static void test_pktbuf_refcount_limit(void **state)
{
	struct rte_mempool *mp;
	struct rte_mbuf *m;
	char *p;

	(void)state;
	mp = pktpool_of_test_pktpool();
	m = rte_pktmbuf_alloc(mp);
	assert_non_null(m);
	assert_non_null(rte_pktmbuf_append(m, 1000));
	p = rte_pktmbuf_mtod_offset(m, char *, 100);
	assert_int_equal(zbuf_try_hold(p), 0);
	assert_int_equal(zbuf_refcnt(p), 2);
	rte_mbuf_refcnt_set(m, ZBUF_MBUF_REF_MAX - 1);
	assert_int_equal(zbuf_try_hold(p), 0);
	assert_int_equal(zbuf_refcnt(p), ZBUF_MBUF_REF_MAX);
	assert_int_equal(zbuf_try_hold(p), -EOVERFLOW);
	assert_int_equal(zbuf_refcnt(p), ZBUF_MBUF_REF_MAX);
	zbuf_hold(p); /* past the limit zbuf_try_hold() keeps, below the count's */
	assert_int_equal(zbuf_refcnt(p), ZBUF_MBUF_REF_MAX + 1);
	rte_mbuf_refcnt_set(m, UINT16_MAX);
	EXPECT_MISUSE(zbuf_hold(p), "reference count overflow");
	assert_int_equal(zbuf_refcnt(p), UINT16_MAX); /* not wrapped to 0 */
	rte_mbuf_refcnt_set(m, 1);
	zbuf_drop(p);
	assert_int_equal(zbuf_in_use(), 0);
	/* Misuse is reported, and with a handler that returns it is an error: nothing taken. */
	m = rte_pktmbuf_alloc(mp);
	assert_non_null(m);
	EXPECT_MISUSE(zbuf_try_hold((char *)zone_info_of(m).start + 100),
		      "pointer into a zone header");
	zbuf_set_misuse_handler(count_misuse);
	assert_int_equal(zbuf_try_hold((char *)zone_info_of(m).start + 100), -EFAULT);
	zbuf_set_misuse_handler(NULL);
	assert_int_equal(misuses_counted, 1);
	assert_int_equal(zbuf_refcnt(rte_pktmbuf_mtod(m, char *)), 1);
	rte_pktmbuf_free(m);
	assert_int_equal(zbuf_in_use(), 0);
}

/*
 * zbuf_pktbuf_alloc(), the buffer a connection compacts small received
 * segments into: lunar's one reference and none of the application's,
 * whatever the buffer's last life left in its share; NULL, and nothing
 * kept, from a pool that is not Zbuf memory. Handed to the application
 * slice by slice, it sees the same races as any received buffer (an
 * application thread referencing one slice while lunar gives and takes
 * another): none is called a misuse, no count is lost, and a real misuse
 * is still reported.
 */
static void test_pktbuf_alloc(void **state)
{
	struct rte_mempool *mp, *plain;
	struct rte_mbuf *m, **all;
	unsigned avail;
	uint32_t room = 0;
	int share_off;
	uint8_t *p;

	(void)state;
	mp = pktpool_of_test_pktpool();
	avail = rte_mempool_avail_count(mp);
	share_off = rte_mbuf_dynfield_lookup("lunar_zbuf_app_share", NULL);
	assert_true(share_off >= 0);
	/*
	 * Every free buffer left with a stale share (as lunar freeing one
	 * wrongly would, in a build whose pools do not refuse that).
	 */
	all = calloc(avail, sizeof(*all));
	assert_non_null(all);
	assert_int_equal(rte_pktmbuf_alloc_bulk(mp, all, avail), 0);
	rte_pktmbuf_free_bulk(all, avail);
	for (unsigned i = 0; i < avail; i++)
		*RTE_MBUF_DYNFIELD(all[i], share_off, uint16_t *) = 7;
	p = zbuf_pktbuf_alloc(mp, &room);
	assert_non_null(p);
	m = (struct rte_mbuf *)((char *)p - RTE_PKTMBUF_HEADROOM - sizeof(struct rte_mbuf));
	assert_ptr_equal(rte_pktmbuf_mtod(m, uint8_t *), p);
	assert_int_equal(room, rte_pktmbuf_tailroom(m));
	assert_true(room >= 2048);
	assert_int_equal(zbuf_refcnt(p), 1);
	assert_int_equal(zbuf_app_refcnt(p), 0); /* not 7 */
	assert_int_equal(rte_mempool_avail_count(mp), avail - 1);

	/*
	 * The application holds one slice, while lunar, keeping its own
	 * reference (the one it fills under), hands another over and back.
	 */
	zbuf_hold(p + 100);
	zbuf_give(p + 100);
	assert_int_equal(zbuf_app_refcnt(p), 1);
	assert_int_equal(run_slice_race((char *)p, 1000000), 0);
	assert_int_equal(zbuf_refcnt(p), 2);
	assert_int_equal(zbuf_app_refcnt(p), 1);
	zbuf_drop(p);
	assert_int_equal(zbuf_refcnt(p), 1);
	/* A real misuse is still one: lunar gives a reference the application already has. */
	zbuf_ref(p);
	EXPECT_MISUSE(zbuf_give(p), "give of a reference lunar does not hold");
	assert_int_equal(zbuf_app_refcnt(p), 2);
	zbuf_unref(p);
	zbuf_unref(p);
	assert_int_equal(rte_mempool_avail_count(mp), avail);
	/* The same when the count's only reference is the application's: a give too many. */
	p = zbuf_pktbuf_alloc(mp, &room); /* the pool's free buffers carry stale shares */
	assert_non_null(p);
	zbuf_give(p);
	assert_int_equal(zbuf_app_refcnt(p), 1);
	EXPECT_MISUSE(zbuf_give(p), "give of a reference lunar does not hold");
	assert_int_equal(zbuf_app_refcnt(p), 1);
	assert_int_equal(zbuf_refcnt(p), 1);
	zbuf_unref(p);
	assert_int_equal(rte_mempool_avail_count(mp), avail);
	/* Leave the pool as found: no stale share for the tests after this one. */
	assert_int_equal(rte_pktmbuf_alloc_bulk(mp, all, avail), 0);
	for (unsigned i = 0; i < avail; i++)
		*RTE_MBUF_DYNFIELD(all[i], share_off, uint16_t *) = 0;
	rte_pktmbuf_free_bulk(all, avail);
	free(all);

	/* Not Zbuf memory: refused, and the buffer goes back. */
	assert_null(zbuf_pktbuf_alloc(NULL, &room));
	plain = rte_pktmbuf_pool_create("zb_plain", 63, 0, 0, 2048, SOCKET_ID_ANY);
	assert_non_null(plain);
	avail = rte_mempool_avail_count(plain);
	assert_null(zbuf_pktbuf_alloc(plain, &room));
	assert_int_equal(rte_mempool_avail_count(plain), avail);
	rte_mempool_free(plain);
	assert_int_equal(zbuf_in_use(), 0);
}

static void *pktbuf_ref_worker(void *arg)
{
	char *p = arg;

	for (unsigned i = 0; i < 1000000; i++) {
		zbuf_ref(p);
		zbuf_unref(p);
	}
	return NULL;
}

/*
 * Two application threads (dispatch mode's) take and release references
 * on a received buffer a third holds, its count at 1 between their turns.
 * DPDK's rte_mbuf_refcnt_update() stores instead of adding when it reads
 * 1; two such stores at once would lose one reference, and the buffer
 * would go back to the pool under its holder. Nothing is lost.
 */
static void test_pktbuf_app_threads(void **state)
{
	struct rte_mempool *mp;
	struct rte_mbuf *m;
	pthread_t t[2];
	unsigned avail;
	char *p;

	(void)state;
	mp = pktpool_of_test_pktpool();
	m = rte_pktmbuf_alloc(mp);
	assert_non_null(m);
	p = rte_pktmbuf_mtod(m, char *);
	zbuf_give(p); /* received, then handed to the application */
	avail = rte_mempool_avail_count(mp);
	for (int i = 0; i < 2; i++)
		start_on_any_core(&t[i], pktbuf_ref_worker, p);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(rte_mempool_avail_count(mp), avail); /* not freed under its holder */
	assert_int_equal(zbuf_refcnt(p), 1);
	assert_int_equal(zbuf_app_refcnt(p), 1);
	zbuf_unref(p);
	assert_int_equal(rte_mempool_avail_count(mp), avail + 1);
	assert_int_equal(zbuf_in_use(), 0);
}

static void test_pktpool_checked(void **state)
{
#ifdef LUNAR_DEBUG
	struct rte_mempool *mp;
	struct rte_mbuf *m, *again[2];
	unsigned avail;
	char *p;

	(void)state;
	REQUIRE_EAL();
	mp = zbuf_pktpool_create("zb_checked", 100, 2048);
	assert_non_null(mp);
	avail = rte_mempool_avail_count(mp);
	m = rte_pktmbuf_alloc(mp);
	assert_non_null(m);
	p = rte_pktmbuf_mtod(m, char *);
	assert_int_equal(rte_mempool_avail_count(mp), avail - 1);
	rte_pktmbuf_free(m);
	assert_int_equal(rte_mempool_avail_count(mp), avail);
#if defined(__SANITIZE_ADDRESS__)
	assert_true(__asan_address_is_poisoned(p));
#endif
	EXPECT_MISUSE(rte_pktmbuf_free(m), "packet buffer freed twice");
	assert_int_equal(rte_mempool_avail_count(mp), avail); /* still in the ring once */
	EXPECT_MISUSE(zbuf_hold(p), "ref of a free packet buffer");
	EXPECT_MISUSE(zbuf_ref(p), "ref of a buffer the application does not hold");
	EXPECT_MISUSE(zbuf_give(p), "give of a free packet buffer"); /* its count reads 1 */
	/*
	 * lunar frees a buffer it gave to the application: refused, and the
	 * buffer stays out of the ring, the application's, until it gives it back.
	 */
	m = rte_pktmbuf_alloc(mp);
	assert_non_null(m);
	p = rte_pktmbuf_mtod(m, char *);
	zbuf_give(p);
	EXPECT_MISUSE(rte_pktmbuf_free(m), "packet buffer freed while the application holds it");
	assert_int_equal(rte_mempool_avail_count(mp), avail - 1);
	assert_int_equal(zbuf_app_refcnt(p), 1);
	p[0] = 1; /* still the application's to use */
	zbuf_unref(p);
	assert_int_equal(rte_mempool_avail_count(mp), avail);
	/* Handed out again it is live, once: two allocations get two buffers. */
	assert_int_equal(rte_pktmbuf_alloc_bulk(mp, again, 2), 0);
	assert_ptr_not_equal(again[0], again[1]);
	rte_pktmbuf_free(again[0]);
	rte_pktmbuf_free(again[1]);
	assert_int_equal(rte_mempool_avail_count(mp), avail);
	assert_int_equal(zbuf_in_use(), 0);
#else
	(void)state;
	skip(); /* release builds run packet pools unchecked */
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dpdk_generic_iova),
	    cmocka_unit_test(test_pktpool),
	    cmocka_unit_test(test_pktbuf_refcount_limit),
	    cmocka_unit_test(test_pktpool_more),
	    cmocka_unit_test(test_pktbuf_alloc),
	    cmocka_unit_test(test_pktbuf_app_threads),
	    cmocka_unit_test(test_pktpool_checked),
	    cmocka_unit_test(test_dpdk_enomem_message),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
