/*
 * zbuf.h - Zbuf, lunar's one buffer type (LUNA §6.1).
 *
 * A region of memory (DPDK hugepages, or plain mmap for tests) is cut into
 * 2 MiB zones. Each zone holds objects of one size class. The zone header
 * records the zone's IOVA; the per-object metadata array follows it; the
 * objects follow that. Because zones are 2 MiB aligned and the region is
 * virtually contiguous, ANY pointer inside an object is translated in O(1)
 * to its zone (offset >> 21), its object (offset in zone / stride), its
 * metadata and its IOVA by arithmetic alone.
 *
 * Zones of kind ZBUF_KIND_MBUF back a DPDK mempool: each object is one
 * mempool element (object header + rte_mbuf + headroom + data room), so a
 * received packet lives in Zbuf memory and a payload pointer into it is
 * released with zbuf_unref() like any other Zbuf pointer. For those
 * objects the reference count IS the mbuf's refcnt (one count, not two).
 * See docs/MEMORY.md for who owns a buffer at each step.
 *
 * Allocation takes no lock on the fast path: each thread registers a core
 * index (zbuf_thread_init) and has a per-core, per-class cache; caches
 * refill from and flush to the zone free lists in batches under a lock.
 */
#ifndef LUNAR_MEM_ZBUF_H
#define LUNAR_MEM_ZBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZBUF_ZONE_SHIFT 21
#define ZBUF_ZONE_SIZE (1u << ZBUF_ZONE_SHIFT) /* 2 MiB */
#define ZBUF_MAX_CORES 64

/** Size classes for application and stack buffers. */
enum zbuf_class {
	ZBUF_CLASS_2K,
	ZBUF_CLASS_4K,
	ZBUF_CLASS_16K,
	ZBUF_CLASS_64K,
	ZBUF_CLASS_COUNT
};

enum zbuf_backend {
	ZBUF_BACKEND_MMAP, /* anonymous mmap; IOVA = VA; no EAL needed (unit tests) */
	ZBUF_BACKEND_DPDK, /* rte_memzone on hugepages; IOVA from DPDK */
};

struct zbuf_config {
	enum zbuf_backend backend;
	/** zones per class; 0 for a class means a default of 4 zones */
	unsigned zones[ZBUF_CLASS_COUNT];
	/** zones reserved for packet (mbuf) pools, see zbuf_pktpool_create() */
	unsigned mbuf_zones;
	/** NUMA socket for the DPDK backend (SOCKET_ID_ANY = -1) */
	int socket_id;
};

/** Counters, summed over all cores and classes unless asked per class. */
struct zbuf_stats {
	uint64_t in_use;   /**< objects allocated and not yet released */
	uint64_t allocs;   /**< successful allocations */
	uint64_t frees;    /**< objects returned (refcount reached zero) */
	uint64_t failures; /**< allocations that found no free object */
};

/**
 * Reserve the region and carve it into zones. Call once per process.
 * @return 0, or a negative errno (-ENOMEM: hugepages missing or too few; the
 *         log line says how to reserve more).
 */
int zbuf_init(const struct zbuf_config *cfg);
/** Release the region. Objects still in use are reported (leak check). */
void zbuf_fini(void);

/**
 * Bind the calling thread to per-core cache @core (0..ZBUF_MAX_CORES-1).
 * Threads that never call this use a locked shared path (correct, slower).
 */
void zbuf_thread_init(unsigned core);

/** Allocate from the smallest class that holds @size bytes. Refcount 1.
 *  @return the object's start, or NULL (errno ENOMEM, or EINVAL if too big). */
void *zbuf_alloc(size_t size);
/** Allocate one object of class @cls. Refcount 1. NULL on exhaustion. */
void *zbuf_alloc_class(enum zbuf_class cls);

/** Take another reference on the object containing @p (any interior pointer). */
void zbuf_ref(const void *p);
/** Drop a reference on the object containing @p; at zero it is freed. */
void zbuf_unref(const void *p);
/** Same as zbuf_unref(): the release call for any Zbuf pointer. */
static inline void zbuf_free(const void *p)
{
	zbuf_unref(p);
}

/** @return true if @p points into the Zbuf region (any object or header). */
bool zbuf_contains(const void *p);
/** @return the start of the object containing @p (NULL if not Zbuf memory). */
void *zbuf_obj(const void *p);
/** @return the usable size of the object containing @p. */
size_t zbuf_obj_size(const void *p);
/** @return the IOVA (bus address) of the byte at @p. */
uint64_t zbuf_iova(const void *p);
/** @return the current reference count of the object containing @p. */
uint32_t zbuf_refcnt(const void *p);

/** Totals over every class (mbuf zones included). */
void zbuf_stats(struct zbuf_stats *out);
/** Counters of one class. */
void zbuf_class_stats(enum zbuf_class cls, struct zbuf_stats *out);
/** Objects currently in use across the region (0 means nothing leaked). */
uint64_t zbuf_in_use(void);

/**
 * Misuse handler: called with a message naming the misuse (pointer not in
 * Zbuf memory, double free, unref below zero). The default prints the
 * message and aborts. Tests install their own to assert on misuse.
 */
typedef void (*zbuf_misuse_fn)(const char *msg);
void zbuf_set_misuse_handler(zbuf_misuse_fn fn);

struct rte_mempool;
/**
 * Create a DPDK packet mempool whose elements live in the region's mbuf
 * zones (DPDK backend only). Each element is one Zbuf object of kind mbuf.
 * @return the pool, or NULL (errno set; log says why).
 */
struct rte_mempool *zbuf_pktpool_create(const char *name, unsigned n_mbufs,
					uint16_t data_room);

#endif
