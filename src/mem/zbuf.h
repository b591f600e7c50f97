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
#define ZBUF_ZONE_SIZE	(1u << ZBUF_ZONE_SHIFT) /* 2 MiB */
#define ZBUF_MAX_CORES	64
/** zbuf_iova() of a pointer that is not Zbuf memory. */
#define ZBUF_BAD_IOVA UINT64_MAX
/** Packet pools one region can hold (each takes at least one mbuf zone). */
#define ZBUF_MAX_PKTPOOLS 8

/** Size classes for application and stack buffers. */
enum zbuf_class { ZBUF_CLASS_2K, ZBUF_CLASS_4K, ZBUF_CLASS_16K, ZBUF_CLASS_64K, ZBUF_CLASS_COUNT };

/** What a zone holds. */
enum zbuf_zone_kind {
	ZBUF_KIND_GENERIC, /* objects of one zbuf_class, refcount in zone metadata */
	ZBUF_KIND_MBUF,	   /* elements of a DPDK packet mempool, refcount = mbuf refcnt */
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
	uint64_t frees;	   /**< objects returned (refcount reached zero) */
	uint64_t failures; /**< allocations that found no free object */
	/**
	 * Misuses reported to the misuse handler (see zbuf_set_misuse_handler),
	 * counted before it runs. Region-wide: zbuf_stats() only (0 per class).
	 */
	uint64_t misuse;
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
/**
 * Return the calling thread's cached objects to the zones and unbind it.
 * Call before a bound thread exits, or its cached free objects stay
 * unavailable to other cores until zbuf_fini().
 */
void zbuf_thread_fini(void);

/** Allocate from the smallest class that holds @size bytes. Refcount 1.
 *  @return the object's start, or NULL (errno ENOMEM, or EINVAL if too big). */
void *zbuf_alloc(size_t size);
/** Allocate one object of class @cls. Refcount 1. NULL on exhaustion. */
void *zbuf_alloc_class(enum zbuf_class cls);

/*
 * Whose reference. An object counts every reference (its refcount) and,
 * within it, the application's share: zbuf_alloc() gives the application
 * its first reference, zbuf_ref() another, zbuf_give() hands it one of
 * lunar's (received data), and zbuf_unref() / zbuf_free() give one back.
 * lunar's own layers hold references with zbuf_hold() / zbuf_try_hold()
 * and let them go with zbuf_drop(). So an application's free of a
 * reference it does not hold is refused and reported ("double free"),
 * even while a connection still holds the buffer, instead of
 * taking the connection's reference and freeing the buffer under it.
 */

/**
 * The application takes another reference on the object containing @p
 * (any interior pointer). It must hold one already; the share is at most
 * 65,535, and a packet buffer's whole count too (DPDK's 16 bits): past
 * that, or on a buffer the application does not hold, the call is misuse,
 * reported, and nothing is taken.
 */
void zbuf_ref(const void *p);
/**
 * The application gives back a reference on the object containing @p; at
 * zero references (its own and lunar's) the object is free. One more than
 * the application holds is misuse ("double free"), reported, and ignored
 * (inside a zbuf_defer_begin() span too: the share goes down at the call,
 * the count when the span ends).
 * @return false when the call was refused as misuse (only possible when
 *         the misuse handler returns).
 */
bool zbuf_unref(const void *p);
/** Same as zbuf_unref(): the application's release call for any Zbuf pointer. */
static inline bool zbuf_free(const void *p)
{
	return zbuf_unref(p);
}
/** The application's share of the references on the object at @p (0 if not live). */
uint32_t zbuf_app_refcnt(const void *p);

/* ---- lunar's own references (the stack's layers; applications do not call these) ---- */

/**
 * lunar takes another reference on an object it already holds one on (a
 * slice of a received frame it keeps). At the count's maximum it is
 * misuse, as zbuf_ref(); LUNAR_DEBUG builds also report a hold on an
 * object whose references are all the application's ("hold of an object
 * lunar holds no reference on"). Borrowing someone else's reference
 * (sending the application's memory) is zbuf_try_hold()'s job: a packet
 * buffer's count is then raised with an atomic add, here with DPDK's
 * cheaper update.
 */
void zbuf_hold(const void *p);
/*
 * What zbuf_try_hold() lets a count reach: below the counts' maximum, so
 * that zbuf_hold()'s and zbuf_ref()'s callers (a received segment kept,
 * the application's own references) still have room.
 */
#define ZBUF_MBUF_REF_MAX (UINT16_MAX - 1024u)
#define ZBUF_REF_MAX	  (UINT32_MAX - 1024u)
/**
 * zbuf_hold() for a holder that can do without: @return 0 (taken),
 * -EOVERFLOW (the count is at ZBUF_MBUF_REF_MAX or ZBUF_REF_MAX: copy
 * the data, or report it) or -EFAULT (misuse, reported as zbuf_ref()
 * reports it). The send paths take their references this way.
 */
int zbuf_try_hold(const void *p);
/**
 * zbuf_try_hold() of the object holding all of [@p, @p + @len), in one
 * translation, for a send of the application's memory: -EFAULT, with no
 * misuse reported, when @p is not in an object or the range runs past its
 * end (zbuf_span() < @len); -EFAULT with the misuse "send of a buffer the
 * application does not hold" when its share is 0 (a buffer it freed,
 * which a packet buffer's count alone cannot tell from one in use).
 */
int zbuf_try_hold_span(const void *p, size_t len);
/**
 * lunar lets one of its references go; at zero the object is free.
 * (LUNAR_DEBUG builds report a drop when lunar holds none.)
 */
void zbuf_drop(const void *p);
/**
 * One of lunar's references becomes the application's, which gives it
 * back with zbuf_unref(): received data handed to the application.
 */
void zbuf_give(const void *p);
/**
 * The reverse: one of the application's references becomes lunar's again.
 * @return false (misuse, reported) when the application holds none: then
 * lunar has no reference to release either.
 */
bool zbuf_take(const void *p);
/*
 * Deferred release, per thread: between zbuf_defer_begin() and
 * zbuf_defer_end(), a release by zbuf_unref() or zbuf_drop() only notes
 * the pointer (up to ZBUF_DEFER_MAX of them; one more first releases
 * those, in order) and zbuf_defer_end() releases them in the order they came. An
 * allocation that finds no free object releases them first and tries
 * again, so parked objects never make zbuf_alloc() fail.
 * lunar_env_poll() so frees what a poll is done with after its frames are
 * sent, not before. The application's share is not deferred: zbuf_unref()
 * lowers it at the call, so a double free is refused and reported there,
 * as outside a span, and takes nothing from lunar's references.
 */
#define ZBUF_DEFER_MAX 256
void zbuf_defer_begin(void);
void zbuf_defer_end(void);

/** @return true if @p points into the Zbuf region (any object or header). */
bool zbuf_contains(const void *p);
/** @return the start of the object containing @p (NULL if not Zbuf memory). */
void *zbuf_obj(const void *p);
/** @return the usable size of the object containing @p. */
size_t zbuf_obj_size(const void *p);
/**
 * @return how many bytes from @p to the end of the object containing it
 * (0 if @p is not in an object): one lookup to check that a span of
 * memory lies in one object.
 */
size_t zbuf_span(const void *p);
/** @return the IOVA (bus address) of the byte at @p. */
uint64_t zbuf_iova(const void *p);
/** @return the current reference count of the object containing @p. */
uint32_t zbuf_refcnt(const void *p);

/** @return the object size of class @cls (0 for an invalid class). */
size_t zbuf_class_size(enum zbuf_class cls);

/** Totals over every class (mbuf zones included). */
void zbuf_stats(struct zbuf_stats *out);
/** Counters of one class. */
void zbuf_class_stats(enum zbuf_class cls, struct zbuf_stats *out);
/** Objects currently in use across the region (0 means nothing leaked). */
uint64_t zbuf_in_use(void);

/**
 * Misuse handler: called with "zbuf: <what> at <ptr>" naming the misuse
 * (pointer not in Zbuf memory, pointer into a zone header, double free, ref
 * of a free object), after zbuf_stats().misuse has counted it. The default
 * prints the message and aborts. Tests install their own to assert on
 * misuse, and a program that would rather log and go on may too; if a
 * handler returns, the offending zbuf_ref()/zbuf_unref() does nothing, and
 * zbuf_fini() reports the count. NULL restores the default.
 *
 * An application's unref too many is seen from its share of the count,
 * whatever lunar still holds, at the call, inside a deferral span too
 * (see docs/MEMORY.md).
 */
typedef void (*zbuf_misuse_fn)(const char *msg);
void zbuf_set_misuse_handler(zbuf_misuse_fn fn);

struct rte_mempool;

/** One zone as its header describes it (introspection for tests and tools). */
struct zbuf_zone_info {
	void *start; /**< zone start (2 MiB aligned), where the header lives */
	enum zbuf_zone_kind kind;
	enum zbuf_class cls;	/**< GENERIC zones only */
	uint32_t stride;	/**< bytes from one object (or mempool element) to the next */
	uint32_t nobjs;		/**< objects in circulation (0: mbuf zone not yet in a pool) */
	uint32_t first_obj_off; /**< offset in the zone of the first object / element */
	uint32_t obj_off;	/**< offset of zbuf_obj() in a slot (mempool header size) */
	uint64_t iova;		/**< IOVA of the zone start */
	struct rte_mempool *mp; /**< MBUF zones: the pool its elements belong to */
};

/** @return the number of zones in the region (0 before zbuf_init()). */
unsigned zbuf_zone_count(void);
/** Describe zone @zone. @return 0, or -EINVAL if there is no such zone. */
int zbuf_zone_info(unsigned zone, struct zbuf_zone_info *out);

/**
 * Create a DPDK packet mempool whose elements live in the region's mbuf
 * zones (DPDK backend only). Each element is one Zbuf object of kind mbuf.
 * The element stride is the smallest power of two holding the mempool
 * object header, struct rte_mbuf, RTE_PKTMBUF_HEADROOM and @data_room; the
 * mbuf data room is grown to fill the stride. The pool takes whole zones
 * (slot 0 of each is withheld: the zone header lives there), so it may
 * hold a few more than @n_mbufs. zbuf_fini() frees it; do not
 * rte_mempool_free() it yourself.
 * @return the pool, or NULL (errno set; log says why).
 */
struct rte_mempool *zbuf_pktpool_create(const char *name, unsigned n_mbufs, uint16_t data_room);

/**
 * The geometry zbuf_pktpool_create() will use: the element is the smallest
 * power of two holding the mempool header, the mbuf, the headroom and
 * @min_data_room bytes. @data_room gets the data room that element really
 * has (pass it to zbuf_pktpool_create), @zones the mbuf zones @n_mbufs need
 * (for zbuf_config.mbuf_zones). @return 0 or -EINVAL (too large, or 0 mbufs).
 */
int zbuf_pktpool_geometry(unsigned n_mbufs, uint32_t min_data_room, uint16_t *data_room,
			  unsigned *zones);

/**
 * Declare that a device keeps @n of @mp's mbufs for good. DPDK's af_xdp PMD
 * abandons the mbufs on its fill ring when the port closes (they belong to
 * the UMEM, which is the pool's memory); they come back only when the pool
 * is destroyed. They are then counted neither as in use nor as leaked.
 */
void zbuf_pktpool_device_held(struct rte_mempool *mp, unsigned n);

/**
 * A packet buffer of @mp as plain Zbuf memory for lunar's own use: its
 * data pointer, with @room bytes from there, holding one reference,
 * lunar's (the application's share is set to 0). Release it with
 * zbuf_drop(), or hand it on with zbuf_give(). @return NULL if the pool is
 * empty, or is not a Zbuf pool (made by zbuf_pktpool_create()).
 */
uint8_t *zbuf_pktbuf_alloc(struct rte_mempool *mp, uint32_t *room);

struct rte_mbuf;
/**
 * @copy, made by rte_pktmbuf_copy(), holds none of the application's
 * references: DPDK copies the dynamic fields, the share with them, and a
 * copy of a buffer the application holds would carry its share into the
 * copy's next life.
 */
void zbuf_pktbuf_copied(struct rte_mbuf *copy);

#endif
