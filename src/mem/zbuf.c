/*
 * zbuf.c - the Zbuf region: zone carving (mmap or DPDK memzone), pointer
 * translation, refcounts, per-core caches, counters, misuse checks, and the
 * DPDK packet mempools whose elements live in mbuf zones.
 * Design and ownership rules: docs/MEMORY.md.
 */
#include "mem/zbuf.h"

#include "base/compiler.h"
#include "base/log.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_memory.h>
#include <rte_mempool.h>
#include <rte_memzone.h>
#include <rte_pause.h>

#if defined(__SANITIZE_ADDRESS__)
#define ZB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZB_ASAN 1
#endif
#endif
#ifdef ZB_ASAN
#include <sanitizer/asan_interface.h>
/* Free objects are poisoned so a use-after-free in a test is an ASan report. */
#define zb_poison(p, n)	  ASAN_POISON_MEMORY_REGION(p, n)
#define zb_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define zb_poison(p, n)	  ((void)(p), (void)(n))
#define zb_unpoison(p, n) ((void)(p), (void)(n))
#endif

#define ZONE_MAGIC    0x5a4f4e45u /* "ZONE" */
#define META_LIVE     0x11feu
#define META_FREE     0xf4eeu
#define IDX_NONE      UINT16_MAX
#define DEFAULT_ZONES 4
#define CACHE_MAX     64 /* largest per-core, per-class cache */

/* Per-object metadata of a GENERIC zone; 8 bytes so the 2K class keeps 1019 objects. */
struct zbuf_meta {
	uint32_t refcnt; /* 0 = free (in a cache or a zone free list) */
	uint16_t next;	 /* free: zone free-list link; live: the application's share of refcnt */
	uint16_t state;	 /* META_LIVE / META_FREE, checked in LUNAR_DEBUG builds */
};

/*
 * Zone header, at the start of every zone. Its first cache line is left to
 * DPDK: in MBUF zones slot 0 starts at the zone start, and the mempool keeps
 * that slot's object header (linked into mp->elt_list) there.
 */
struct zbuf_zone {
	uint8_t mp_objhdr[RTE_MEMPOOL_ALIGN];
	uint32_t magic;
	uint8_t kind; /* enum zbuf_zone_kind */
	uint8_t cls;  /* enum zbuf_class, GENERIC only */
	uint8_t stride_shift;
	uint8_t pad0;
	uint32_t stride;
	uint32_t nobjs;		/* objects in circulation */
	uint32_t first_obj_off; /* zone offset of object 0 (of its mempool element for MBUF) */
	uint32_t obj_off;	/* object start within a slot: mempool header size, 0 for GENERIC */
	uint32_t index;		/* zone number in the region */
	uint64_t iova;
	struct rte_mempool *mp;
	/* GENERIC: free list, protected by the class lock */
	struct zbuf_zone *next_partial; /* next zone of the class with free objects */
	uint32_t nfree;
	uint16_t free_head;
	uint8_t on_partial;
	uint8_t pad1;
	struct zbuf_meta meta[];
};

_Static_assert(sizeof(struct zbuf_meta) == 8, "metadata size is part of the zone layout");
_Static_assert(sizeof(struct zbuf_zone) == 128, "docs/MEMORY.md documents a 128-byte header");
_Static_assert(ZBUF_ZONE_SIZE / 2048 < IDX_NONE, "free-list links are 16-bit object indices");
_Static_assert(offsetof(struct zbuf_zone, magic) >= sizeof(struct rte_mempool_objhdr),
	       "slot 0's mempool object header must fit before the zone fields");

/* Shared state of one class: zones with free objects, counters of unbound threads. */
struct zbuf_class_pool {
	pthread_mutex_t lock;
	struct zbuf_zone *partial; /* zones with nfree > 0 */
	uint32_t first_zone, nzones;
	uint32_t first_obj_off, nobjs;	  /* same layout in every zone of the class */
	uint64_t allocs, frees, failures; /* threads without a core index, under lock */
};

struct zbuf_ctr {
	uint64_t allocs, frees, failures;
};

struct zbuf_cache {
	uint32_t len;
	void *objs[CACHE_MAX];
};

/* Written only by the thread bound to the core; others read counters relaxed. */
struct zbuf_pcpu {
	struct zbuf_cache cache[ZBUF_CLASS_COUNT];
	struct zbuf_ctr ctr[ZBUF_CLASS_COUNT];
} __attribute__((aligned(64)));

struct zbuf_pktpool {
	struct rte_mempool *mp;
	uint32_t first_zone, nzones;
	uint32_t withheld; /* slots overlapping zone headers, kept out of circulation,
			     plus mbufs a closed device kept (zbuf_pktpool_device_held) */
};

static const uint32_t class_size[ZBUF_CLASS_COUNT] = {2048, 4096, 16384, 65536};
static const char *const class_name[ZBUF_CLASS_COUNT] = {"2K", "4K", "16K", "64K"};
/*
 * Cache capacity and refill/flush batch per class. Big objects get small
 * caches: 64 cached 64K objects would be 4 MiB parked on one core, more
 * than a whole 64K zone (31 objects).
 */
static const uint32_t cache_max[ZBUF_CLASS_COUNT] = {64, 64, 32, 16};
static const uint32_t cache_batch[ZBUF_CLASS_COUNT] = {32, 32, 16, 8};

/* Read on every translation; written only by zbuf_init()/zbuf_fini(). */
static struct {
	uintptr_t base;
	size_t len;
	uint32_t nzones;
	bool ready;
	enum zbuf_backend backend;
	void *map;
	size_t map_len;
	const struct rte_memzone *mz;
	uint32_t mbuf_first, mbuf_nzones, mbuf_next;
	struct zbuf_pktpool pools[ZBUF_MAX_PKTPOOLS];
	unsigned npools;
	pthread_mutex_t pool_lock;
	struct zbuf_class_pool cls[ZBUF_CLASS_COUNT];
} zb = {
    .pool_lock = PTHREAD_MUTEX_INITIALIZER,
    .cls = {[0 ... ZBUF_CLASS_COUNT - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER}},
};

static struct zbuf_pcpu pcpu[ZBUF_MAX_CORES];
static _Thread_local int tls_core = -1;

static void default_misuse(const char *msg)
{
	fprintf(stderr, "%s\n", msg);
	abort();
}

static zbuf_misuse_fn misuse_fn = default_misuse;
/* Misuses reported since zbuf_init(); cold, so one shared atomic counter. */
static uint64_t misuse_count;

void zbuf_set_misuse_handler(zbuf_misuse_fn fn)
{
	misuse_fn = fn ? fn : default_misuse;
}

/* Cold: keeps the message formatting out of the inlined fast paths. */
static __attribute__((cold, noinline)) void misuse(const char *what, const void *p)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "zbuf: %s at %p", what, p);
	/* Counted first: the default handler aborts, a test's may longjmp. */
	__atomic_fetch_add(&misuse_count, 1, __ATOMIC_RELAXED);
	misuse_fn(msg);
}

/* Plain load/store, not a locked RMW: each counter has a single writer. */
static inline void ctr_inc(uint64_t *c)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

static inline uint64_t ctr_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static inline struct zbuf_zone *zone_at(uint32_t i)
{
	return (struct zbuf_zone *)(zb.base + ((uintptr_t)i << ZBUF_ZONE_SHIFT));
}

static inline struct zbuf_zone *zone_of(uintptr_t a)
{
	/* The region base is 2 MiB aligned, so masking equals base + (off >> 21 << 21). */
	return (struct zbuf_zone *)(a & ~(uintptr_t)(ZBUF_ZONE_SIZE - 1));
}

static inline bool in_region(uintptr_t a)
{
	return a - zb.base < zb.len;
}

static inline char *slot_start(const struct zbuf_zone *z, uint32_t idx)
{
	return (char *)z + z->first_obj_off + ((uintptr_t)idx << z->stride_shift);
}

/*
 * Translate @a (known to be in the region) to its zone and object index.
 * One subtraction, one shift, one compare: a pointer below the first object
 * wraps to a huge index, so the same compare rejects the header area and
 * anything past the last object.
 */
static inline bool locate(uintptr_t a, struct zbuf_zone **zp, uint32_t *idxp)
{
	struct zbuf_zone *z = zone_of(a);
	uint32_t rel = (uint32_t)(a & (ZBUF_ZONE_SIZE - 1)) - z->first_obj_off;
	uint32_t idx = rel >> z->stride_shift;

#ifdef LUNAR_DEBUG
	if (unlikely(z->magic != ZONE_MAGIC))
		return false;
#endif
	if (unlikely(idx >= z->nobjs))
		return false;
	/* MBUF slots start with the mempool object header, which is not the object. */
	if (unlikely((rel & (z->stride - 1)) < z->obj_off))
		return false;
	*zp = z;
	*idxp = idx;
	return true;
}

/* Slow path: say precisely why @p was rejected. */
static __attribute__((cold, noinline)) void misuse_where(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	struct zbuf_zone *z;
	uint32_t off;

	if (!in_region(a)) {
		misuse("pointer not in Zbuf memory", p);
		return;
	}
	z = zone_of(a);
	off = (uint32_t)(a & (ZBUF_ZONE_SIZE - 1));
	if (z->magic != ZONE_MAGIC)
		misuse("corrupt zone header (bad magic)", p);
	else if (z->kind == ZBUF_KIND_MBUF && z->mp == NULL)
		misuse("pointer into an mbuf zone no packet pool uses", p);
	else if (off < z->first_obj_off)
		misuse("pointer into a zone header", p);
	else if (off >= z->first_obj_off + z->nobjs * z->stride)
		misuse("pointer past the last object of a zone", p);
	else
		misuse("pointer into a mempool object header", p);
}

static inline struct rte_mbuf *zone_mbuf(const struct zbuf_zone *z, uint32_t idx)
{
	return (struct rte_mbuf *)(slot_start(z, idx) + z->obj_off);
}

/* ---- shared free lists (class lock held) ---- */

static unsigned pool_get(struct zbuf_class_pool *cp, void **objs, unsigned n)
{
	unsigned got = 0;

	while (got < n && cp->partial) {
		struct zbuf_zone *z = cp->partial;

		while (got < n && z->free_head != IDX_NONE) {
			uint16_t idx = z->free_head;

			z->free_head = z->meta[idx].next;
			z->nfree--;
			objs[got++] = slot_start(z, idx);
		}
		if (z->free_head == IDX_NONE) {
			cp->partial = z->next_partial;
			z->next_partial = NULL;
			z->on_partial = 0;
		}
	}
	return got;
}

static void pool_put(struct zbuf_class_pool *cp, void *const *objs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct zbuf_zone *z = zone_of((uintptr_t)objs[i]);
		uint16_t idx = (uint16_t)(((uintptr_t)objs[i] - (uintptr_t)z - z->first_obj_off) >>
					  z->stride_shift);

		z->meta[idx].next = z->free_head;
		z->free_head = idx;
		z->nfree++;
		if (!z->on_partial) {
			z->on_partial = 1;
			z->next_partial = cp->partial;
			cp->partial = z;
		}
	}
}

/* ---- allocation ---- */

size_t zbuf_class_size(enum zbuf_class cls)
{
	return (unsigned)cls < ZBUF_CLASS_COUNT ? class_size[cls] : 0;
}

static inline __attribute__((always_inline)) void *alloc_class(enum zbuf_class cls)
{
	struct zbuf_class_pool *cp;
	struct zbuf_zone *z;
	struct zbuf_meta *m;
	int core = tls_core;
	void *obj;
	uint32_t idx;

	if (unlikely((unsigned)cls >= ZBUF_CLASS_COUNT)) {
		errno = EINVAL;
		return NULL;
	}
	cp = &zb.cls[cls];
	if (likely(core >= 0)) {
		struct zbuf_pcpu *pc = &pcpu[core];
		struct zbuf_cache *c = &pc->cache[cls];

		if (unlikely(c->len == 0)) {
			pthread_mutex_lock(&cp->lock);
			c->len = pool_get(cp, c->objs, cache_batch[cls]);
			pthread_mutex_unlock(&cp->lock);
			if (c->len == 0) {
				ctr_inc(&pc->ctr[cls].failures);
				errno = ENOMEM;
				return NULL;
			}
		}
		obj = c->objs[--c->len];
		ctr_inc(&pc->ctr[cls].allocs);
	} else {
		unsigned got;

		pthread_mutex_lock(&cp->lock);
		got = pool_get(cp, &obj, 1);
		ctr_inc(got ? &cp->allocs : &cp->failures);
		pthread_mutex_unlock(&cp->lock);
		if (!got) {
			errno = ENOMEM;
			return NULL;
		}
	}
	z = zone_of((uintptr_t)obj);
	idx = (uint32_t)(((uintptr_t)obj - (uintptr_t)z - z->first_obj_off) >> z->stride_shift);
	m = &z->meta[idx];
#ifdef LUNAR_DEBUG
	if (unlikely(__atomic_load_n(&m->state, __ATOMIC_RELAXED) != META_FREE ||
		     __atomic_load_n(&m->refcnt, __ATOMIC_RELAXED) != 0))
		misuse("free object with live metadata (heap corruption?)", obj);
#endif
	__atomic_store_n(&m->state, META_LIVE, __ATOMIC_RELAXED);
	__atomic_store_n(&m->refcnt, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&m->next, 1, __ATOMIC_RELAXED); /* the application's share */
	zb_unpoison(obj, z->stride);
	return obj;
}

static __attribute__((cold, noinline)) bool defer_flush(void);

/*
 * None free: what this thread released inside a deferral span (a poll's
 * acknowledged buffers, slices given back) is freed now, and the
 * allocation tried again, rather than failing with objects parked.
 */
static __attribute__((cold, noinline)) void *alloc_retry(enum zbuf_class cls)
{
	if (errno != ENOMEM || !defer_flush())
		return NULL;
	return alloc_class(cls);
}

void *zbuf_alloc_class(enum zbuf_class cls)
{
	void *obj = alloc_class(cls);

	return likely(obj != NULL) ? obj : alloc_retry(cls);
}

void *zbuf_alloc(size_t size)
{
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++)
		if (size <= class_size[c])
			return zbuf_alloc_class((enum zbuf_class)c);
	errno = EINVAL;
	return NULL;
}

/* The last reference is gone: back to this core's cache, or the zone list. */
static void obj_release(struct zbuf_zone *z, uint32_t idx)
{
	struct zbuf_class_pool *cp = &zb.cls[z->cls];
	void *obj = slot_start(z, idx);
	int core = tls_core;

	__atomic_store_n(&z->meta[idx].state, META_FREE, __ATOMIC_RELAXED);
	zb_poison(obj, z->stride);
	if (likely(core >= 0)) {
		struct zbuf_pcpu *pc = &pcpu[core];
		struct zbuf_cache *c = &pc->cache[z->cls];

		if (unlikely(c->len == cache_max[z->cls])) {
			uint32_t b = cache_batch[z->cls];

			/* Flush the oldest; the recently freed ones stay cache-hot. */
			pthread_mutex_lock(&cp->lock);
			pool_put(cp, c->objs, b);
			pthread_mutex_unlock(&cp->lock);
			memmove(c->objs, c->objs + b, (c->len - b) * sizeof(c->objs[0]));
			c->len -= b;
		}
		c->objs[c->len++] = obj;
		ctr_inc(&pc->ctr[z->cls].frees);
	} else {
		pthread_mutex_lock(&cp->lock);
		pool_put(cp, &obj, 1);
		ctr_inc(&cp->frees);
		pthread_mutex_unlock(&cp->lock);
	}
}

#ifdef LUNAR_DEBUG
static bool pktbuf_is_free(const struct zbuf_zone *z, uint32_t idx);
#endif

/*
 * Two counts per object (docs/MEMORY.md, "Refcounts"): every
 * holder's (the metadata's refcnt, or a packet buffer's mbuf refcnt) and,
 * within it, the application's share (the metadata's free-list link while
 * the object is live, or an mbuf dynamic field). Only the first decides
 * when the object is freed; the second lets an application's free of a
 * reference it does not hold be refused at once, whatever lunar holds.
 */
static int app_field = -1; /* offset of the share in an mbuf, from rte_mbuf_dynfield_register() */

/* Translate @p for a query: no misuse report, callers may probe any pointer. */
static inline bool query(const void *p, struct zbuf_zone **z, uint32_t *idx)
{
	return zb.ready && in_region((uintptr_t)p) && locate((uintptr_t)p, z, idx);
}

/* Bytes from @p to the end of object @idx of @z, which holds it (0 in its header). */
static inline size_t span_in(const struct zbuf_zone *z, uint32_t idx, const void *p)
{
	const char *obj = slot_start(z, idx) + z->obj_off;

	if ((const char *)p < obj)
		return 0; /* the object's header, not its memory */
	return z->stride - z->obj_off - (size_t)((const char *)p - obj);
}

/* Translate @p for a counting call; a bad pointer is reported. */
static inline bool find(const void *p, struct zbuf_zone **z, uint32_t *idx)
{
	if (likely(in_region((uintptr_t)p) && locate((uintptr_t)p, z, idx)))
		return true;
	misuse_where(p);
	return false;
}

/*
 * The object's two counts: where its application's share is, and every
 * holder's count now. One branch on the kind, so that the hot case (a
 * packet buffer) computes its mbuf once.
 */
static inline uint16_t *counts_of(struct zbuf_zone *z, uint32_t idx, uint32_t *all)
{
	if (likely(z->kind == ZBUF_KIND_MBUF)) {
		struct rte_mbuf *mb = zone_mbuf(z, idx);

		/* Acquire: a release lowers the share before the count, so a later count means a
		 * later share. */
		*all = __atomic_load_n(&mb->refcnt, __ATOMIC_ACQUIRE);
		return RTE_MBUF_DYNFIELD(mb, app_field, uint16_t *);
	}
	*all = __atomic_load_n(&z->meta[idx].refcnt, __ATOMIC_ACQUIRE);
	return &z->meta[idx].next;
}

/*
 * A 16-bit count one up unless it is at @limit (false): a compare-and-swap
 * that rechecks the limit, so two threads that both read limit - 1 take
 * one, not both (and never wrap the count to 0).
 */
static inline bool up16_below(uint16_t *count, uint32_t limit)
{
	uint16_t n = __atomic_load_n(count, __ATOMIC_RELAXED);

	do {
		if (unlikely(n >= limit))
			return false;
	} while (!__atomic_compare_exchange_n(count, &n, (uint16_t)(n + 1), true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

/*
 * One more reference on object @idx of @z (at @p), unless its count is at
 * @limit (-EOVERFLOW) or the object is free (reported; -EFAULT). A packet
 * buffer's count is DPDK's, 16 bits: a buffer sent on 65,536 connections
 * would wrap it.
 */
static inline __attribute__((always_inline)) int count_up(struct zbuf_zone *z, uint32_t idx,
							  const void *p, uint32_t mbuf_limit,
							  uint32_t limit, bool own)
{
	struct zbuf_meta *m;
	uint32_t r;

	if (z->kind == ZBUF_KIND_MBUF) {
		struct rte_mbuf *mb = zone_mbuf(z, idx);

#ifdef LUNAR_DEBUG
		if (unlikely(pktbuf_is_free(z, idx))) {
			misuse("ref of a free packet buffer", p);
			return -EFAULT;
		}
#endif
		/*
		 * rte_mbuf_refcnt_update() stores 2 where it reads 1: right for
		 * a holder taking another (@own: at 1 it holds the only one, and
		 * no other thread may touch the count), wrong for a reference
		 * taken on the strength of someone else's. Two of those at once
		 * (two application threads, or one and lunar's zero-copy send)
		 * would lose one; and two that both read the count just below
		 * the limit would both pass it and wrap the 16 bits: a
		 * compare-and-swap that rechecks the limit.
		 */
		if (own && rte_mbuf_refcnt_read(mb) == 1) {
			rte_mbuf_refcnt_update(mb, 1);
			return 0;
		}
		return up16_below(&mb->refcnt, mbuf_limit) ? 0 : -EOVERFLOW;
	}
	m = &z->meta[idx];
	r = __atomic_load_n(&m->refcnt, __ATOMIC_RELAXED);
	if (unlikely(r == 0)) {
		misuse("ref of a free object", p);
		return -EFAULT;
	}
#ifdef LUNAR_DEBUG
	if (unlikely(__atomic_load_n(&m->state, __ATOMIC_RELAXED) != META_LIVE)) {
		misuse("ref of an object whose metadata is not live", p);
		return -EFAULT;
	}
#endif
	do { /* the limit rechecked with each try: two threads at limit - 1 take one, not two */
		if (unlikely(r >= limit))
			return -EOVERFLOW;
	} while (!__atomic_compare_exchange_n(&m->refcnt, &r, r + 1, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return 0;
}

/* The application's share one up, unless at its 16 bits' maximum (false). */
static inline bool share_up(uint16_t *share)
{
	return up16_below(share, UINT16_MAX);
}

/* Take back the reference count_up() just added (the caller holds others: never to 0). */
static inline void count_undo(struct zbuf_zone *z, uint32_t idx)
{
	if (z->kind == ZBUF_KIND_MBUF)
		__atomic_fetch_sub(&zone_mbuf(z, idx)->refcnt, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_sub(&z->meta[idx].refcnt, 1, __ATOMIC_RELAXED);
}

static inline int hold(const void *p, uint32_t mbuf_limit, uint32_t limit, bool own)
{
	struct zbuf_zone *z;
	uint32_t idx;

	if (unlikely(!find(p, &z, &idx)))
		return -EFAULT;
	return count_up(z, idx, p, mbuf_limit, limit, own);
}

#ifdef LUNAR_DEBUG
static bool lunar_holds_one(const void *p, const char *misuse_msg);
#endif

void zbuf_hold(const void *p)
{
#ifdef LUNAR_DEBUG
	/* Its rule: lunar holds one already (more than the application's share). */
	if (!lunar_holds_one(p, "hold of an object lunar holds no reference on"))
		return;
#endif
	if (hold(p, UINT16_MAX, UINT32_MAX, true) == -EOVERFLOW)
		misuse("reference count overflow", p);
}

int zbuf_try_hold(const void *p)
{
	return hold(p, ZBUF_MBUF_REF_MAX, ZBUF_REF_MAX, false);
}

int zbuf_try_hold_span(const void *p, size_t len)
{
	struct zbuf_zone *z;
	uint32_t idx, all;
	uint16_t *share;

	/* Memory that is not Zbuf's is the caller's error to return, not a misuse. */
	if (unlikely(!query(p, &z, &idx) || span_in(z, idx, p) < len))
		return -EFAULT;
	/*
	 * The reference is borrowed on the strength of the application's: a
	 * freed packet buffer reads count 1, as one in use, and would be sent
	 * (and retransmitted) after the pool gave it to the next receive.
	 */
	share = counts_of(z, idx, &all);
	if (unlikely(all && !__atomic_load_n(share, __ATOMIC_RELAXED))) {
		misuse("send of a buffer the application does not hold", p);
		return -EFAULT;
	}
	return count_up(z, idx, p, ZBUF_MBUF_REF_MAX, ZBUF_REF_MAX, false);
}

void zbuf_ref(const void *p)
{
	struct zbuf_zone *z;
	uint32_t idx, all;
	uint16_t *share;
	uint16_t n;
	int rc;

	if (unlikely(!find(p, &z, &idx)))
		return;
	share = counts_of(z, idx, &all);
	if (unlikely(all == 0)) { /* a free generic object (a free mbuf reads 1) */
		misuse("ref of a free object", p);
		return;
	}
	n = __atomic_load_n(share, __ATOMIC_RELAXED);
	if (unlikely(n == 0)) {
		misuse("ref of a buffer the application does not hold", p);
		return;
	}
	rc = n == UINT16_MAX ? -EOVERFLOW : count_up(z, idx, p, UINT16_MAX, UINT32_MAX, false);
	if (unlikely(rc)) {
		if (rc == -EOVERFLOW)
			misuse("reference count overflow", p);
		return;
	}
	/* The count first, then the share (readers rely on it), by CAS against the limit. */
	if (unlikely(!share_up(share))) {
		count_undo(z, idx);
		misuse("reference count overflow", p);
	}
}

/*
 * The two counts are read apart: an application thread's zbuf_ref() on
 * another slice of the same object (the count goes up, then the share)
 * may come between the reads, and a share read after the count can look
 * as large as it, as if lunar held nothing. Before calling that a misuse,
 * read both again a few times: such a race resolves with the other
 * thread's next store, a real misuse stays. @return whether lunar holds a
 * reference (@share and @n then as read).
 */
static __attribute__((cold, noinline)) bool lunar_holds_recheck(struct zbuf_zone *z, uint32_t idx,
								uint16_t **share, uint16_t *n)
{
	uint32_t all;

	for (unsigned i = 0; i < 1000; i++) {
		*share = counts_of(z, idx, &all);
		*n = __atomic_load_n(*share, __ATOMIC_RELAXED);
		if (all && *n < all)
			return true;
		if (!all)
			return false; /* free: no race brings a count back from 0 */
		rte_pause();
	}
	return false;
}

#ifdef LUNAR_DEBUG
/*
 * Debug builds' check of lunar's own calls: it holds a reference on the
 * object at @p (its count is above the application's share). @return
 * false, with @misuse_msg (or the translation's) reported, when it does
 * not. A free object passes: the call itself names that.
 */
static bool lunar_holds_one(const void *p, const char *misuse_msg)
{
	struct zbuf_zone *z;
	uint32_t idx, all;
	uint16_t *share, n;

	if (!find(p, &z, &idx))
		return false;
	share = counts_of(z, idx, &all);
	if (all && __atomic_load_n(share, __ATOMIC_RELAXED) >= all &&
	    !lunar_holds_recheck(z, idx, &share, &n)) {
		misuse(misuse_msg, p);
		return false;
	}
	return true;
}
#endif

void zbuf_give(const void *p)
{
	struct zbuf_zone *z;
	uint32_t idx, all;
	uint16_t *share;
	uint16_t n;

	if (unlikely(!find(p, &z, &idx)))
		return;
	share = counts_of(z, idx, &all);
	if (likely(all == 1) && z->kind == ZBUF_KIND_MBUF) {
#ifdef LUNAR_DEBUG
		/* A free packet buffer's count is 1 too; only a checked pool tells them apart. */
		if (unlikely(pktbuf_is_free(z, idx))) {
			misuse("give of a free packet buffer", p);
			return;
		}
#endif
		/*
		 * lunar the only holder: the share is 0 and becomes 1 (a plain
		 * store, no RMW). A share of 1 already means the count's one
		 * reference is the application's: the slow path reports it.
		 */
		if (likely(!__atomic_load_n(share, __ATOMIC_RELAXED))) {
			__atomic_store_n(share, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	n = __atomic_load_n(share, __ATOMIC_RELAXED);
	if (unlikely(all == 0 || n >= all) && !lunar_holds_recheck(z, idx, &share, &n)) {
		misuse(all ? "give of a reference lunar does not hold" : "give of a free object",
		       p);
		return;
	}
	if (unlikely(!share_up(share)))
		misuse("reference count overflow", p); /* a generic object's share is 16 bits */
}

/*
 * One fewer reference in the application's share of object @idx of @z (at
 * @p): false, with @if_free or @if_none reported, when the object is free
 * or the share is 0 already.
 */
static inline bool share_down(struct zbuf_zone *z, uint32_t idx, const void *p, const char *if_free,
			      const char *if_none)
{
	uint32_t all;
	uint16_t *share;
	uint16_t n;

	share = counts_of(z, idx, &all);
	if (unlikely(all == 0)) { /* a free generic object (a free mbuf reads 1) */
		misuse(if_free, p);
		return false;
	}
	n = __atomic_load_n(share, __ATOMIC_RELAXED);
	if (likely(n == 1) && all == 1) {
		/*
		 * The application is the only holder (no RMW, like DPDK's refcnt
		 * == 1 path, and like it not guarding two threads that both
		 * believe they hold this last reference).
		 */
		__atomic_store_n(share, 0, __ATOMIC_RELAXED);
		return true;
	}
	/* Otherwise a compare-and-swap: two threads giving back one reference cannot both. */
	do {
		if (unlikely(n == 0)) {
			misuse(if_none, p);
			return false;
		}
	} while (!__atomic_compare_exchange_n(share, &n, (uint16_t)(n - 1), false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

bool zbuf_take(const void *p)
{
	struct zbuf_zone *z;
	uint32_t idx;

	return likely(find(p, &z, &idx)) &&
	       share_down(z, idx, p, "take of a free object",
			  "take of a reference the application does not hold");
}

uint32_t zbuf_app_refcnt(const void *p)
{
	struct zbuf_zone *z;
	uint32_t idx, all;
	uint16_t *share;

	if (!query(p, &z, &idx))
		return 0;
	share = counts_of(z, idx, &all);
	return all ? __atomic_load_n(share, __ATOMIC_RELAXED) : 0;
}

/*
 * zbuf_defer_begin()'s notes: this thread's releases waiting for
 * zbuf_defer_end(), each one fewer in the count of object @idx of @z (at
 * @p, for misuse reports), translated once, when noted. An application's
 * reference has left its share already then.
 */
struct defer_note {
	const void *p;
	struct zbuf_zone *z;
	uint32_t idx;
};
static _Thread_local struct {
	bool on;
	unsigned n;
	struct defer_note note[ZBUF_DEFER_MAX];
} deferred;

static bool count_release(struct zbuf_zone *z, uint32_t idx, const void *p);

void zbuf_defer_begin(void)
{
	deferred.on = true;
}

void zbuf_defer_end(void)
{
	unsigned n = deferred.n;

	/* Reset first: a misuse handler may longjmp out of a release (the tests' does). */
	deferred.on = false;
	deferred.n = 0;
	for (unsigned i = 0; i < n; i++)
		count_release(deferred.note[i].z, deferred.note[i].idx, deferred.note[i].p);
}

/*
 * Release the notes now and go on deferring (an allocation found nothing
 * free). @return whether there were any.
 */
static __attribute__((cold, noinline)) bool defer_flush(void)
{
	unsigned n = deferred.n;
	bool on = deferred.on;

	/* Off while the notes are read: a release that releases must not write into them. */
	deferred.n = 0;
	deferred.on = false;
	for (unsigned i = 0; i < n; i++)
		count_release(deferred.note[i].z, deferred.note[i].idx, deferred.note[i].p);
	deferred.on = on;
	return n > 0;
}

/*
 * A reference (the application's if @app) goes: its count now, or at
 * zbuf_defer_end(). An application's reference must be in its share,
 * which goes down at the call either way, or it is a double free and
 * nothing changes: so the answer is exact inside a span too, and the
 * caller (tcp_sock_zc_done()) can trust it. @return false when refused
 * (misuse, reported).
 */
static inline bool count_down(const void *p, bool app)
{
	struct zbuf_zone *z;
	uint32_t idx;

	/*
	 * Full: the notes so far go first, so that releases keep their order
	 * (and before the share changes: a misuse handler that does not
	 * return, leaving in the middle of them, leaves this one untouched).
	 */
	if (unlikely(deferred.on && deferred.n == ZBUF_DEFER_MAX))
		defer_flush();
	if (unlikely(!find(p, &z, &idx)))
		return false;
	if (app && !share_down(z, idx, p, "double free", "double free"))
		return false;
	if (!deferred.on)
		return count_release(z, idx, p);
	deferred.note[deferred.n++] = (struct defer_note){.p = p, .z = z, .idx = idx};
	return true;
}

void zbuf_drop(const void *p)
{
#ifdef LUNAR_DEBUG
	if (!lunar_holds_one(p, "drop of a reference lunar does not hold"))
		return;
#endif
	count_down(p, false);
}

bool zbuf_unref(const void *p)
{
	return count_down(p, true);
}

/*
 * Every holder's count of object @idx of @z (at @p) goes down by one; at
 * zero the object is free. @return false when refused (misuse, reported).
 */
static bool count_release(struct zbuf_zone *z, uint32_t idx, const void *p)
{
	struct zbuf_meta *m;
	uint32_t r;

	if (z->kind == ZBUF_KIND_MBUF) {
		/* One refcount: the mbuf's. DPDK returns it to its pool at zero. */
		rte_pktmbuf_free_seg(zone_mbuf(z, idx));
		return true;
	}
	m = &z->meta[idx];
	/* Acquire: other holders' writes to the object happen before its reuse. */
	r = __atomic_load_n(&m->refcnt, __ATOMIC_ACQUIRE);
	if (likely(r == 1)) {
		/* Sole owner (like rte_mbuf's refcnt == 1 path): no atomic RMW. */
		__atomic_store_n(&m->refcnt, 0, __ATOMIC_RELAXED);
	} else if (unlikely(r == 0)) {
		misuse("double free", p);
		return false;
	} else if (__atomic_sub_fetch(&m->refcnt, 1, __ATOMIC_ACQ_REL) != 0) {
		return true;
	}
#ifdef LUNAR_DEBUG
	if (unlikely(__atomic_load_n(&m->state, __ATOMIC_RELAXED) != META_LIVE)) {
		misuse("free of an object whose metadata is not live", p);
		return true; /* the reference was taken; only the free is refused */
	}
#endif
	obj_release(z, idx);
	return true;
}

/* ---- translation queries (no misuse report: callers may probe any pointer) ---- */

bool zbuf_contains(const void *p)
{
	return in_region((uintptr_t)p);
}

void *zbuf_obj(const void *p)
{
	struct zbuf_zone *z;
	uint32_t idx;

	if (!query(p, &z, &idx))
		return NULL;
	return slot_start(z, idx) + z->obj_off;
}

size_t zbuf_obj_size(const void *p)
{
	struct zbuf_zone *z;
	uint32_t idx;

	if (!query(p, &z, &idx))
		return 0;
	return z->stride - z->obj_off;
}

size_t zbuf_span(const void *p)
{
	struct zbuf_zone *z;
	uint32_t idx;

	return query(p, &z, &idx) ? span_in(z, idx, p) : 0;
}

uint64_t zbuf_iova(const void *p)
{
	uintptr_t a = (uintptr_t)p;

	if (!in_region(a))
		return ZBUF_BAD_IOVA;
	return zone_of(a)->iova + (a & (ZBUF_ZONE_SIZE - 1));
}

uint32_t zbuf_refcnt(const void *p)
{
	struct zbuf_zone *z;
	uint32_t idx;

	if (!query(p, &z, &idx))
		return 0;
	if (z->kind == ZBUF_KIND_MBUF)
		return rte_mbuf_refcnt_read(zone_mbuf(z, idx));
	return __atomic_load_n(&z->meta[idx].refcnt, __ATOMIC_RELAXED);
}

unsigned zbuf_zone_count(void)
{
	return zb.nzones;
}

int zbuf_zone_info(unsigned zone, struct zbuf_zone_info *out)
{
	struct zbuf_zone *z;

	if (zone >= zb.nzones)
		return -EINVAL;
	z = zone_at(zone);
	*out = (struct zbuf_zone_info){
	    .start = z,
	    .kind = (enum zbuf_zone_kind)z->kind,
	    .cls = (enum zbuf_class)z->cls,
	    .stride = z->stride,
	    .nobjs = z->nobjs,
	    .first_obj_off = z->first_obj_off,
	    .obj_off = z->obj_off,
	    .iova = z->iova,
	    .mp = z->mp,
	};
	return 0;
}

/* ---- per-core caches ---- */

static void cache_flush_all(struct zbuf_pcpu *pc)
{
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++) {
		struct zbuf_cache *cache = &pc->cache[c];

		if (cache->len == 0)
			continue;
		pthread_mutex_lock(&zb.cls[c].lock);
		pool_put(&zb.cls[c], cache->objs, cache->len);
		pthread_mutex_unlock(&zb.cls[c].lock);
		cache->len = 0;
	}
}

void zbuf_thread_init(unsigned core)
{
	if (core >= ZBUF_MAX_CORES) {
		LOG_ERR("zbuf_thread_init: core %u out of range (max %u); thread stays on the "
			"locked path",
			core, ZBUF_MAX_CORES - 1);
		return;
	}
	if (tls_core >= 0 && (unsigned)tls_core != core)
		cache_flush_all(&pcpu[tls_core]);
	tls_core = (int)core;
}

void zbuf_thread_fini(void)
{
	zbuf_defer_end();
	if (tls_core < 0)
		return;
	cache_flush_all(&pcpu[tls_core]);
	tls_core = -1;
}

/* ---- counters ---- */

static void class_stats_raw(unsigned cls, struct zbuf_stats *out)
{
	struct zbuf_class_pool *cp = &zb.cls[cls];
	uint64_t allocs = 0, frees = 0, failures = 0;

	/* frees before allocs: a concurrent alloc+free then cannot make in_use negative. */
	frees = ctr_read(&cp->frees);
	for (unsigned i = 0; i < ZBUF_MAX_CORES; i++)
		frees += ctr_read(&pcpu[i].ctr[cls].frees);
	allocs = ctr_read(&cp->allocs);
	failures = ctr_read(&cp->failures);
	for (unsigned i = 0; i < ZBUF_MAX_CORES; i++) {
		allocs += ctr_read(&pcpu[i].ctr[cls].allocs);
		failures += ctr_read(&pcpu[i].ctr[cls].failures);
	}
	out->allocs = allocs;
	out->frees = frees;
	out->failures = failures;
	out->in_use = allocs > frees ? allocs - frees : 0;
}

void zbuf_class_stats(enum zbuf_class cls, struct zbuf_stats *out)
{
	memset(out, 0, sizeof(*out));
	if ((unsigned)cls < ZBUF_CLASS_COUNT)
		class_stats_raw(cls, out);
}

static uint64_t mbuf_in_use(void)
{
	uint64_t n = 0;

	pthread_mutex_lock(&zb.pool_lock);
	for (unsigned i = 0; i < zb.npools; i++)
		n += rte_mempool_in_use_count(zb.pools[i].mp) - zb.pools[i].withheld;
	pthread_mutex_unlock(&zb.pool_lock);
	return n;
}

void zbuf_stats(struct zbuf_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++) {
		struct zbuf_stats s;

		class_stats_raw(c, &s);
		out->in_use += s.in_use;
		out->allocs += s.allocs;
		out->frees += s.frees;
		out->failures += s.failures;
	}
	out->in_use += mbuf_in_use();
	out->misuse = __atomic_load_n(&misuse_count, __ATOMIC_RELAXED);
}

uint64_t zbuf_in_use(void)
{
	struct zbuf_stats s;

	zbuf_stats(&s);
	return s.in_use;
}

/* ---- region setup ---- */

/*
 * Largest object count whose header + metadata, rounded up to the object
 * alignment, still leaves room for the objects. Aligning objects to the
 * class size costs nothing here: every class loses exactly one object's
 * worth of space to the header either way (see docs/MEMORY.md).
 */
static void class_layout(uint32_t stride, uint32_t *first_off, uint32_t *nobjs)
{
	for (uint32_t n = ZBUF_ZONE_SIZE / stride; n > 0; n--) {
		uint32_t hdr = (uint32_t)(sizeof(struct zbuf_zone) + n * sizeof(struct zbuf_meta));
		uint32_t off = (hdr + stride - 1) & ~(stride - 1);

		if (off + (uint64_t)n * stride <= ZBUF_ZONE_SIZE) {
			*first_off = off;
			*nobjs = n;
			return;
		}
	}
	*first_off = ZBUF_ZONE_SIZE;
	*nobjs = 0;
}

static void zone_init_generic(struct zbuf_zone *z, unsigned cls, uint32_t first_off, uint32_t nobjs)
{
	struct zbuf_class_pool *cp = &zb.cls[cls];

	z->magic = ZONE_MAGIC;
	z->kind = ZBUF_KIND_GENERIC;
	z->cls = (uint8_t)cls;
	z->stride = class_size[cls];
	z->stride_shift = (uint8_t)__builtin_ctz(class_size[cls]);
	z->first_obj_off = first_off;
	z->nobjs = nobjs;
	z->obj_off = 0;
	z->mp = NULL;
	/* Linked so that the first allocations come out in ascending address order. */
	for (uint32_t i = 0; i < nobjs; i++) {
		z->meta[i].refcnt = 0;
		z->meta[i].state = META_FREE;
		z->meta[i].next = i + 1 < nobjs ? (uint16_t)(i + 1) : IDX_NONE;
	}
	z->free_head = nobjs ? 0 : IDX_NONE;
	z->nfree = nobjs;
	z->on_partial = 0;
	z->next_partial = NULL;
	if (nobjs) {
		/* Appending keeps the partial list in zone order. */
		struct zbuf_zone **tail = &cp->partial;

		while (*tail)
			tail = &(*tail)->next_partial;
		*tail = z;
		z->on_partial = 1;
	}
	zb_poison((char *)z + first_off, (size_t)nobjs * z->stride);
}

/*
 * (Re)write a whole MBUF zone header: rte_pktmbuf_init() writes slot 0's
 * mbuf over it while a pool is created, so nothing of it survives that.
 */
static void zone_set_mbuf(struct zbuf_zone *z, uint32_t index, uint64_t iova,
			  struct rte_mempool *mp, uint32_t stride, uint32_t first_off,
			  uint32_t obj_off, uint32_t nobjs)
{
	z->magic = ZONE_MAGIC;
	z->kind = ZBUF_KIND_MBUF;
	z->cls = 0;
	z->index = index;
	z->iova = iova;
	z->stride = stride;
	z->stride_shift = (uint8_t)__builtin_ctz(stride);
	z->first_obj_off = first_off;
	z->obj_off = obj_off;
	z->mp = mp;
	z->free_head = IDX_NONE;
	z->nfree = 0;
	z->on_partial = 0;
	z->next_partial = NULL;
	/* A zone no pool uses has no objects: every pointer into it is rejected. */
	__atomic_store_n(&z->nobjs, nobjs, __ATOMIC_RELEASE);
}

static unsigned read_nr_hugepages(void)
{
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "r");
	unsigned n = 0;

	if (f) {
		if (fscanf(f, "%u", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

static int region_reserve_mmap(size_t len)
{
	size_t map_len = len + ZBUF_ZONE_SIZE;
	char *m = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t base;

	if (m == MAP_FAILED) {
		LOG_ERR("zbuf: mmap of %zu MiB failed: %s", map_len >> 20, strerror(errno));
		return -ENOMEM;
	}
	/* Over-allocate by one zone and trim, so the region starts 2 MiB aligned. */
	base = ((uintptr_t)m + ZBUF_ZONE_SIZE - 1) & ~(uintptr_t)(ZBUF_ZONE_SIZE - 1);
	if (base > (uintptr_t)m)
		munmap(m, base - (uintptr_t)m);
	if ((uintptr_t)m + map_len > base + len)
		munmap((void *)(base + len), (uintptr_t)m + map_len - (base + len));
	/* THP where the kernel allows it: fewer TLB misses, same semantics. */
	(void)madvise((void *)base, len, MADV_HUGEPAGE);
	zb.map = (void *)base;
	zb.map_len = len;
	zb.base = base;
	return 0;
}

/* IOVA of a zone start, after checking the zone is IOVA-contiguous. */
static int dpdk_zone_iova(const char *zone, uint64_t *iova)
{
	const struct rte_memseg *ms = rte_mem_virt2memseg(zone, NULL);
	rte_iova_t base = rte_mem_virt2iova(zone);
	size_t pg = ms && ms->hugepage_sz ? ms->hugepage_sz : 4096;

	if (base == RTE_BAD_IOVA)
		return -1;
	for (size_t off = pg; off < ZBUF_ZONE_SIZE; off += pg) {
		const struct rte_memseg *m2 = rte_mem_virt2memseg(zone + off, NULL);
		rte_iova_t io = m2 && m2->iova != RTE_BAD_IOVA
				    ? m2->iova + (rte_iova_t)(zone + off - (const char *)m2->addr)
				    : rte_mem_virt2iova(zone + off);

		if (io != base + off)
			return -1;
	}
	*iova = base;
	return 0;
}

static int region_reserve_dpdk(size_t len, int socket)
{
	const struct rte_memzone *mz;
	unsigned flags = RTE_MEMZONE_SIZE_HINT_ONLY;

#ifdef RTE_MEMZONE_2MB
	flags |= RTE_MEMZONE_2MB;
#endif
	if (rte_lcore_count() == 0) {
		LOG_ERR("zbuf: the DPDK backend needs rte_eal_init() before zbuf_init()");
		return -EINVAL;
	}
	mz = rte_memzone_reserve_aligned("lunar_zbuf", len, socket, flags, ZBUF_ZONE_SIZE);
	if (mz == NULL) {
		unsigned need = (unsigned)(len >> 20);
		unsigned sugg = read_nr_hugepages() + need / 2 + 64;
		char where[32] = "";

		if (socket != SOCKET_ID_ANY)
			snprintf(where, sizeof(where), " on socket %d", socket);
		if (sugg < 512)
			sugg = 512;
		if (rte_errno == ENOMEM || rte_errno == ENOSPC)
			LOG_ERR("zbuf: not enough hugepages for %u zones (need %u MiB%s); reserve "
				"more: echo %u > "
				"/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
				(unsigned)(len >> ZBUF_ZONE_SHIFT), need, where, sugg);
		else
			LOG_ERR("zbuf: rte_memzone_reserve_aligned(%u MiB) failed: %s", need,
				rte_strerror(rte_errno));
		return -ENOMEM;
	}
	zb.mz = mz;
	zb.base = (uintptr_t)mz->addr;
	return 0;
}

int zbuf_init(const struct zbuf_config *cfg)
{
	uint32_t nz[ZBUF_CLASS_COUNT], zi = 0;
	uint64_t total =
	    0; /* summed wide: zone counts near UINT32_MAX must not wrap below the cap */
	size_t len;
	int ret;

	if (zb.ready) {
		LOG_ERR("zbuf_init: already initialised (call zbuf_fini() first)");
		return -EBUSY;
	}
	if (cfg->backend != ZBUF_BACKEND_MMAP && cfg->backend != ZBUF_BACKEND_DPDK)
		return -EINVAL;
	if (cfg->backend == ZBUF_BACKEND_MMAP && cfg->mbuf_zones) {
		LOG_ERR(
		    "zbuf_init: mbuf zones need the DPDK backend (set mbuf_zones = 0 for mmap)");
		return -EINVAL;
	}
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++) {
		nz[c] = cfg->zones[c] ? cfg->zones[c] : DEFAULT_ZONES;
		total += nz[c];
	}
	total += cfg->mbuf_zones;
	if (total > (1u << 20)) /* 2 TiB: surely a config error */
		return -EINVAL;
	len = (size_t)total << ZBUF_ZONE_SHIFT;

	zb.backend = cfg->backend;
	ret = cfg->backend == ZBUF_BACKEND_MMAP ? region_reserve_mmap(len)
						: region_reserve_dpdk(len, cfg->socket_id);
	if (ret)
		return ret;
	zb.nzones = total;

	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++) {
		struct zbuf_class_pool *cp = &zb.cls[c];

		class_layout(class_size[c], &cp->first_obj_off, &cp->nobjs);
		cp->first_zone = zi;
		cp->nzones = nz[c];
		cp->partial = NULL;
		cp->allocs = cp->frees = cp->failures = 0;
		for (uint32_t i = 0; i < nz[c]; i++, zi++) {
			struct zbuf_zone *z = zone_at(zi);

			z->index = zi;
			zone_init_generic(z, c, cp->first_obj_off, cp->nobjs);
		}
	}
	zb.mbuf_first = zb.mbuf_next = zi;
	zb.mbuf_nzones = cfg->mbuf_zones;
	for (uint32_t i = 0; i < cfg->mbuf_zones; i++, zi++)
		zone_set_mbuf(zone_at(zi), zi, 0, NULL, ZBUF_ZONE_SIZE, 0, 0, 0);
	for (uint32_t i = 0; i < total; i++) {
		struct zbuf_zone *z = zone_at(i);

		if (cfg->backend == ZBUF_BACKEND_MMAP) {
			z->iova = (uint64_t)(uintptr_t)z;
		} else if (dpdk_zone_iova((const char *)z, &z->iova) != 0) {
			LOG_ERR("zbuf: zone %u at %p is not IOVA-contiguous (pages smaller than "
				"2 MiB with physical addressing); use 2 MiB hugepages or "
				"--iova-mode=va",
				i, (void *)z);
			zb.len = len; /* so the release below unpoisons it all */
			zb.ready = true;
			zbuf_fini();
			return -ENOMEM;
		}
	}
	memset(pcpu, 0, sizeof(pcpu));
	zb.npools = 0;
	__atomic_store_n(&misuse_count, 0, __ATOMIC_RELAXED);
	/* Publish last: translation treats anything outside [base, base+len) as foreign. */
	zb.len = len;
	zb.ready = true;
	return 0;
}

void zbuf_fini(void)
{
	struct zbuf_stats s;

	if (!zb.ready)
		return;
	if (__atomic_load_n(&misuse_count, __ATOMIC_RELAXED))
		LOG_WARN("zbuf_fini: %" PRIu64 " misuses reported (double frees, foreign "
			 "pointers: see the misuse handler's messages)",
			 __atomic_load_n(&misuse_count, __ATOMIC_RELAXED));
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++) {
		class_stats_raw(c, &s);
		if (s.in_use)
			LOG_WARN("zbuf_fini: leak: %" PRIu64 " objects of class %s still in use",
				 s.in_use, class_name[c]);
	}
	for (unsigned i = 0; i < zb.npools; i++) {
		uint64_t n = rte_mempool_in_use_count(zb.pools[i].mp) - zb.pools[i].withheld;

		if (n)
			LOG_WARN("zbuf_fini: leak: %" PRIu64 " mbufs of pool %s still in use", n,
				 zb.pools[i].mp->name);
		rte_mempool_free(zb.pools[i].mp);
	}
	zb.npools = 0;
	zb_unpoison((void *)zb.base, zb.len);
	if (zb.backend == ZBUF_BACKEND_MMAP && zb.map)
		munmap(zb.map, zb.map_len);
	else if (zb.mz)
		rte_memzone_free(zb.mz);
	zb.map = NULL;
	zb.mz = NULL;
	zb.ready = false;
	zb.len = 0;
	zb.base = 0;
	zb.nzones = 0;
	for (unsigned c = 0; c < ZBUF_CLASS_COUNT; c++) {
		zb.cls[c].partial = NULL;
		zb.cls[c].nzones = 0;
	}
	/* Other threads must be quiescent; their core bindings stay valid for the next init. */
	memset(pcpu, 0, sizeof(pcpu));
}

/* ---- packet pools in mbuf zones ---- */

/* Element stride for @data_room: a power of two that holds header, mbuf, headroom and data. */
/* The slot size for @data_room: a power of two; above 65536 (refused by the callers) when too big.
 */
static uint32_t pktpool_stride(uint32_t data_room)
{
	uint64_t hdr_sz = RTE_ALIGN_CEIL(sizeof(struct rte_mempool_objhdr), RTE_MEMPOOL_ALIGN);
	uint64_t need = hdr_sz + sizeof(struct rte_mbuf) + RTE_PKTMBUF_HEADROOM + data_room;
	uint32_t stride = 64;

	if (need > 65536)
		return 131072;
	while (stride < need)
		stride <<= 1;
	return stride;
}

#ifdef LUNAR_DEBUG
/*
 * Checked packet pools (debug builds). The mempool's ring, wrapped: every
 * buffer put back is marked free and its data room poisoned for ASan; every
 * buffer handed out must have been free. A buffer freed twice (DPDK keeps a
 * free mbuf's refcnt at 1, so rte_pktmbuf_free() cannot tell) would
 * otherwise sit in the ring twice and be handed to two owners at once:
 * silent corruption, one byte of a stream changed, far from the bug. Here
 * it is a misuse report with the second free's stack. The per-core cache
 * is off in these pools, so every put and get passes the check.
 */
struct pktpool_check {
	uintptr_t base;			    /* address of slot 0 of the pool's first zone */
	uint32_t stride;		    /* one mempool element */
	uint32_t nslots;		    /* slots in the pool's zones, header slots included */
	uint32_t hdr_sz;		    /* mempool object header before each mbuf */
	uint8_t *free;			    /* per slot: 1 while in the ring */
	const struct rte_mempool_ops *ring; /* the ops doing the work */
	bool armed;			    /* mbufs initialised: a share is meaningful from here */
};

enum { PKTPOOL_CHECK_BATCH = 64 };

static const char pktpool_checked_ops[] = "lunar_checked";

static int checked_ops_index = -1; /* -1: not registered yet, -2: registering failed */

static uint8_t *check_slot(const struct pktpool_check *pc, void *obj)
{
	uintptr_t rel = (uintptr_t)obj - pc->hdr_sz - pc->base;

	if (rel % pc->stride || rel / pc->stride >= pc->nslots)
		return NULL;
	return &pc->free[rel / pc->stride];
}

static void check_report(const char *what, void *obj)
{
#ifdef ZB_ASAN
	__sanitizer_print_stack_trace();
#endif
	misuse(what, obj);
}

/* The data room, whatever the mbuf was attached to when it was freed. */
static void data_room_poison(struct rte_mempool *mp, void *obj, bool poison)
{
	char *room = (char *)obj + sizeof(struct rte_mbuf) + rte_pktmbuf_priv_size(mp);
	size_t len = rte_pktmbuf_data_room_size(mp);

	if (poison)
		zb_poison(room, len);
	else
		zb_unpoison(room, len);
}

static int checked_alloc(struct rte_mempool *mp)
{
	const struct pktpool_check *pc = mp->pool_config;

	return pc->ring->alloc(mp);
}

static void checked_free_config(struct pktpool_check *pc)
{
	rte_free(pc->free);
	rte_free(pc);
}

static void checked_free(struct rte_mempool *mp)
{
	struct pktpool_check *pc = mp->pool_config;

	pc->ring->free(mp);
	checked_free_config(pc);
	mp->pool_config = NULL;
}

static int checked_enqueue(struct rte_mempool *mp, void *const *objs, unsigned n)
{
	struct pktpool_check *pc = mp->pool_config;
	void *ok[PKTPOOL_CHECK_BATCH];
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		uint8_t *f = check_slot(pc, objs[i]);

		if (!f) {
			check_report("packet buffer put into a pool it is not from", objs[i]);
			continue;
		}
		if (*f) {
			check_report("packet buffer freed twice", objs[i]);
			continue; /* in the ring once is enough */
		}
		if (pc->armed &&
		    *RTE_MBUF_DYNFIELD((struct rte_mbuf *)objs[i], app_field, const uint16_t *)) {
			/* lunar let go of a buffer it gave away: it stays the application's. */
			check_report("packet buffer freed while the application holds it", objs[i]);
			continue;
		}
		*f = 1;
		data_room_poison(mp, objs[i], true);
		ok[k++] = objs[i];
		if (k == PKTPOOL_CHECK_BATCH) {
			if (pc->ring->enqueue(mp, ok, k))
				return -ENOBUFS; /* cannot happen: the ring holds every slot */
			k = 0;
		}
	}
	if (k && pc->ring->enqueue(mp, ok, k))
		return -ENOBUFS;
	return 0;
}

static int checked_dequeue(struct rte_mempool *mp, void **objs, unsigned n)
{
	struct pktpool_check *pc = mp->pool_config;
	int ret = pc->ring->dequeue(mp, objs, n);

	if (ret)
		return ret;
	for (unsigned i = 0; i < n; i++) {
		uint8_t *f = check_slot(pc, objs[i]);

		if (f && !*f)
			check_report("packet buffer handed out while in use", objs[i]);
		if (f)
			*f = 0;
		data_room_poison(mp, objs[i], false);
	}
	return 0;
}

static unsigned checked_get_count(const struct rte_mempool *mp)
{
	const struct pktpool_check *pc = mp->pool_config;

	return pc->ring->get_count(mp);
}

/* Register the checked ops once; NULL (with a log line) when that fails. */
static const char *pktpool_ops_name(void)
{
	static struct rte_mempool_ops ops = {
	    .alloc = checked_alloc,
	    .free = checked_free,
	    .enqueue = checked_enqueue,
	    .dequeue = checked_dequeue,
	    .get_count = checked_get_count,
	};

	if (checked_ops_index == -1) {
		snprintf(ops.name, sizeof(ops.name), "%s", pktpool_checked_ops);
		checked_ops_index = rte_mempool_register_ops(&ops);
		if (checked_ops_index < 0) {
			LOG_WARN("zbuf: could not register the checked pool ops: %s; packet "
				 "pools run unchecked",
				 rte_strerror(rte_errno));
			checked_ops_index = -2;
		}
	}
	return checked_ops_index >= 0 ? pktpool_checked_ops : NULL;
}

/* Whether slot @idx of mbuf zone @z is in its checked pool's ring. */
static bool pktbuf_is_free(const struct zbuf_zone *z, uint32_t idx)
{
	const struct pktpool_check *pc;
	const uint8_t *f;

	if (!z->mp || z->mp->ops_index != checked_ops_index || !(pc = z->mp->pool_config))
		return false;
	f = check_slot(pc, zone_mbuf(z, idx));
	return f && *f;
}

static const struct rte_mempool_ops *ops_by_name(const char *name)
{
	for (unsigned i = 0; i < rte_mempool_ops_table.num_ops; i++)
		if (!strcmp(rte_mempool_ops_table.ops[i].name, name))
			return &rte_mempool_ops_table.ops[i];
	return NULL;
}

/* The checker for a pool over @nzones zones from @first, or NULL to run unchecked. */
static struct pktpool_check *pktpool_check_new(uint32_t first, uint32_t nzones, uint32_t stride,
					       uint32_t hdr_sz)
{
	const struct rte_mempool_ops *ring = ops_by_name("ring_mp_mc");
	struct pktpool_check *pc;

	if (!ring || !pktpool_ops_name())
		return NULL;
	/* DPDK memory, like the pool that points to it (LeakSanitizer does not scan that). */
	pc = rte_zmalloc("zbuf_pktpool_check", sizeof(*pc), 0);
	if (!pc)
		return NULL;
	pc->base = (uintptr_t)zone_at(first);
	pc->stride = stride;
	pc->nslots = nzones * (ZBUF_ZONE_SIZE / stride);
	pc->hdr_sz = hdr_sz;
	pc->ring = ring;
	pc->free = rte_zmalloc("zbuf_pktpool_check", pc->nslots, 0); /* populating marks them */
	if (!pc->free) {
		rte_free(pc);
		return NULL;
	}
	return pc;
}
#endif

int zbuf_pktpool_geometry(unsigned n_mbufs, uint32_t min_data_room, uint16_t *data_room,
			  unsigned *zones)
{
	uint32_t stride = pktpool_stride(min_data_room);
	uint32_t hdr_sz =
	    (uint32_t)RTE_ALIGN_CEIL(sizeof(struct rte_mempool_objhdr), RTE_MEMPOOL_ALIGN);
	uint32_t slots, skip, per_zone;

	if (stride > 65536 || n_mbufs == 0)
		return -EINVAL;
	slots = ZBUF_ZONE_SIZE / stride;
	skip = ((uint32_t)sizeof(struct zbuf_zone) + stride - 1) / stride;
	per_zone = slots - skip;
	*data_room = (uint16_t)(stride - hdr_sz - sizeof(struct rte_mbuf) - RTE_PKTMBUF_HEADROOM);
	*zones = n_mbufs / per_zone + (n_mbufs % per_zone != 0); /* rounded up, without wrapping */
	return 0;
}

struct rte_mempool *zbuf_pktpool_create(const char *name, unsigned n_mbufs, uint16_t data_room)
{
	struct rte_pktmbuf_pool_private priv = {0};
	uint32_t hdr_sz =
	    (uint32_t)RTE_ALIGN_CEIL(sizeof(struct rte_mempool_objhdr), RTE_MEMPOOL_ALIGN);
	uint32_t need =
	    hdr_sz + (uint32_t)sizeof(struct rte_mbuf) + RTE_PKTMBUF_HEADROOM + data_room;
	uint32_t stride = pktpool_stride(data_room), slots, skip, per_zone, nzones, total;
	uint32_t withheld = 0;
	uint32_t zone_hdr = (uint32_t)sizeof(struct zbuf_zone);
	struct rte_mempool *mp = NULL;
	void **objs = NULL, **keep;
	uint64_t *iova = NULL;
	uint32_t first = 0;
	unsigned nkeep = 0;
#ifdef LUNAR_DEBUG
	struct pktpool_check *check = NULL;
#else
	void *check = NULL; /* checked pools are a debug-build feature */
#endif
	const char *ops_name = "ring_mp_mc";
	int ret;

	if (!zb.ready || zb.backend != ZBUF_BACKEND_DPDK || n_mbufs == 0) {
		LOG_ERR("zbuf_pktpool_create(%s): needs zbuf_init() with the DPDK backend and "
			"n_mbufs > 0",
			name);
		errno = EINVAL;
		return NULL;
	}
	/* rte_mbuf.buf_len is 16 bits: the element must stay within 64 KiB. */
	if (stride > 65536) {
		LOG_ERR("zbuf_pktpool_create(%s): data room %u too large (max %u)", name, data_room,
			65536 - (need - data_room));
		errno = EINVAL;
		return NULL;
	}
	slots = ZBUF_ZONE_SIZE / stride;
	skip = (zone_hdr + stride - 1) / stride;
	per_zone = slots - skip;
	nzones = n_mbufs / per_zone + (n_mbufs % per_zone != 0);
	if ((uint64_t)nzones * slots > UINT32_MAX) {
		LOG_ERR("zbuf_pktpool_create(%s): %u packet buffers is too many", name, n_mbufs);
		errno = EINVAL;
		return NULL;
	}
	total = nzones * slots;

	pthread_mutex_lock(&zb.pool_lock);
	if (zb.npools == ZBUF_MAX_PKTPOOLS ||
	    zb.mbuf_next + nzones > zb.mbuf_first + zb.mbuf_nzones) {
		LOG_ERR("zbuf_pktpool_create(%s): %u mbufs of stride %u need %u mbuf zones, %u "
			"left (raise zbuf_config.mbuf_zones; at most %u pools)",
			name, n_mbufs, stride, nzones,
			zb.mbuf_first + zb.mbuf_nzones - zb.mbuf_next, ZBUF_MAX_PKTPOOLS);
		errno = ENOMEM;
		goto fail;
	}
	first = zb.mbuf_next;
	iova = malloc(sizeof(*iova) * nzones);
	if (!iova) {
		errno = ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < nzones; i++)
		iova[i] = zone_at(first + i)->iova;

	/* Elements fill the stride exactly: data room grows to take the slack. */
	priv.mbuf_data_room_size = (uint16_t)(stride - hdr_sz - sizeof(struct rte_mbuf));
	priv.mbuf_priv_size = 0;
#ifdef LUNAR_DEBUG
	check = pktpool_check_new(first, nzones, stride, hdr_sz);
#endif
	mp = rte_mempool_create_empty(
	    name, total, stride - hdr_sz, per_zone * nzones >= 1024 && !check ? 256 : 0,
	    sizeof(struct rte_pktmbuf_pool_private), zb.mz->socket_id, RTE_MEMPOOL_F_NO_SPREAD);
	if (mp == NULL) {
		LOG_ERR("zbuf_pktpool_create(%s): rte_mempool_create_empty: %s", name,
			rte_strerror(rte_errno));
		errno = rte_errno;
		goto fail;
	}
	/* af_xdp maps populated_size * element size from the first chunk: no padding allowed. */
	if (mp->header_size != hdr_sz ||
	    mp->header_size + mp->elt_size + mp->trailer_size != stride) {
		LOG_ERR("zbuf_pktpool_create(%s): mempool element is %u+%u+%u bytes, not the "
			"stride %u",
			name, mp->header_size, mp->elt_size, mp->trailer_size, stride);
		errno = EINVAL;
		goto fail;
	}
#ifdef LUNAR_DEBUG
	ops_name = check ? pktpool_checked_ops : "ring_mp_mc";
#endif
	ret = rte_mempool_set_ops_byname(mp, ops_name, check);
	if (ret) {
		LOG_ERR("zbuf_pktpool_create(%s): mempool ops %s: %s (is the "
			"mempool_ring driver loaded?)",
			name, ops_name, rte_strerror(-ret));
		errno = -ret;
		goto fail;
	}
	rte_pktmbuf_pool_init(mp, &priv);
	/* Ascending order, one call per zone: chunk 0 starts the single VA span. */
	for (uint32_t i = 0; i < nzones; i++) {
		ret = rte_mempool_populate_iova(mp, (char *)zone_at(first + i), iova[i],
						ZBUF_ZONE_SIZE, NULL, NULL);
		if (ret != (int)slots) {
			LOG_ERR("zbuf_pktpool_create(%s): populate zone %u gave %d of %u "
				"elements: %s",
				name, first + i, ret, slots,
				ret < 0 ? rte_strerror(-ret) : "short");
			errno = ret < 0 ? -ret : EINVAL;
			goto fail;
		}
	}
	/* Where a packet buffer keeps the application's share of its count. */
	if (app_field < 0) {
		static const struct rte_mbuf_dynfield share = {
		    .name = "lunar_zbuf_app_share",
		    .size = sizeof(uint16_t),
		    .align = __alignof__(uint16_t),
		};

		app_field = rte_mbuf_dynfield_register(&share);
		if (app_field < 0) {
			LOG_ERR("zbuf_pktpool_create(%s): no mbuf dynamic field for the "
				"application's reference count: %s",
				name, rte_strerror(rte_errno));
			errno = rte_errno;
			goto fail;
		}
	}
	/* rte_pktmbuf_init() zeroes each mbuf, the share with it. */
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
#ifdef LUNAR_DEBUG
	if (check)
		check->armed = true;
#endif

	/* The zone headers sit in the first slot(s) of each zone: take those out. */
	objs = malloc(sizeof(*objs) * total);
	if (!objs) {
		errno = ENOMEM;
		goto fail;
	}
	if (rte_mempool_get_bulk(mp, objs, total) != 0) {
		LOG_ERR("zbuf_pktpool_create(%s): could not drain the new pool", name);
		errno = EIO;
		goto fail;
	}
	keep = objs;
	for (uint32_t i = 0; i < total; i++) {
		uintptr_t slot = (uintptr_t)objs[i] - hdr_sz;

		if ((slot & (ZBUF_ZONE_SIZE - 1)) < skip * stride)
			withheld++;
		else
			keep[nkeep++] = objs[i];
	}
	rte_mempool_put_bulk(mp, keep, nkeep);
	free(objs);
	objs = NULL;

	for (uint32_t i = 0; i < nzones; i++)
		zone_set_mbuf(zone_at(first + i), first + i, iova[i], mp, stride, skip * stride,
			      hdr_sz, per_zone);
	free(iova);
	zb.pools[zb.npools++] = (struct zbuf_pktpool){
	    .mp = mp, .first_zone = first, .nzones = nzones, .withheld = withheld};
	zb.mbuf_next += nzones;
	pthread_mutex_unlock(&zb.pool_lock);
	return mp;

fail:
	free(objs);
#ifdef LUNAR_DEBUG
	if (check && (!mp || mp->pool_config != check)) /* else freeing the pool frees it */
		checked_free_config(check);
#endif
	if (mp) {
		rte_mempool_free(mp);
		/* The failed pool may have written mbufs over these zones' headers. */
		for (uint32_t i = 0; iova && i < nzones; i++)
			zone_set_mbuf(zone_at(first + i), first + i, iova[i], NULL, ZBUF_ZONE_SIZE,
				      0, 0, 0);
	}
	free(iova);
	pthread_mutex_unlock(&zb.pool_lock);
	return NULL;
}

void zbuf_pktpool_device_held(struct rte_mempool *mp, unsigned n)
{
	for (unsigned i = 0; i < zb.npools; i++)
		if (zb.pools[i].mp == mp)
			zb.pools[i].withheld += n;
}

uint8_t *zbuf_pktbuf_alloc(struct rte_mempool *mp, uint32_t *room)
{
	struct rte_mbuf *m = mp ? rte_pktmbuf_alloc(mp) : NULL;
	struct zbuf_zone *z;
	uint32_t idx;
	uint8_t *p;

	if (!m)
		return NULL;
	p = rte_pktmbuf_mtod(m, uint8_t *);
	if (!query(p, &z, &idx) || z->kind != ZBUF_KIND_MBUF) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	/* Whatever a past life left there, the application holds none of it. */
	*RTE_MBUF_DYNFIELD(m, app_field, uint16_t *) = 0;
	*room = rte_pktmbuf_tailroom(m);
	return p;
}

void zbuf_pktbuf_copied(struct rte_mbuf *copy)
{
	/* Registered by the first Zbuf pool, or by no one: then there is no share to clear. */
	static int field = -1;

	if (field < 0)
		field = app_field >= 0 ? app_field
				       : rte_mbuf_dynfield_lookup("lunar_zbuf_app_share", NULL);
	if (field >= 0)
		*RTE_MBUF_DYNFIELD(copy, field, uint16_t *) = 0;
}
