/*
 * dispatch.c - channels between the stack core and application threads
 * (see dispatch.h for the sleep protocol and buffer ownership).
 *
 * The rings are DPDK rte_rings of fixed 32-byte elements, single producer
 * and single consumer, with RING_F_EXACT_SZ so the capacity is the size
 * asked for. They are initialised in memory from posix_memalign
 * (rte_ring_init), which needs no EAL: application threads need not be
 * EAL lcores, and the unit tests need no hugepages.
 *
 * The protocol's fences are C11 fences around DPDK's ring, whose x86 build
 * uses its "generic" memory model (plain stores and compiler barriers, which
 * x86's total store order makes release/acquire) and whose arm64 build uses
 * C11 atomics: the seq_cst fence after the ring's tail store (an mfence, a
 * dmb ish) is what orders it before the load of the sleep flag, on both.
 *
 * Counters are written by one side each (stack or application) and read
 * from anywhere, so they are relaxed atomics updated with a load and a
 * store, not a locked add. The stack's, the application's and the shared
 * sleep flag each have a cache line of their own.
 */
#include "loop/dispatch.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "base/compiler.h"
#include "mem/zbuf.h"

/*
 * ThreadSanitizer cannot see the ordering DPDK's x86 ring gives (plain
 * stores and compiler barriers): each ring is made its synchronisation
 * object, released by the producer before it enqueues and acquired by the
 * consumer once it has dequeued, so what a message hands over (a buffer
 * the sender wrote) is not reported as a race. The ring's own accesses are
 * suppressed in tests/tsan.supp. Nothing in other builds.
 */
#ifdef LUNAR_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define RING_PUBLISH(r) __tsan_release(r)
#define RING_TAKEN(r)	__tsan_acquire(r)
#else
#define RING_PUBLISH(r) ((void)(r))
#define RING_TAKEN(r)	((void)(r))
#endif

#define MSG_SIZE   sizeof(struct lunar_msg)
#define RECV_BURST 32
#define MAX_CHANS  1024

_Static_assert(sizeof(struct lunar_msg) == 32, "lunar_msg is 32 bytes");
_Static_assert(sizeof(struct lunar_msg) % 4 == 0, "rte_ring elements are multiples of 4 bytes");

typedef _Atomic uint64_t counter_t;

struct lunar_chan {
	struct rte_ring *s2a; /* stack -> application */
	struct rte_ring *a2s; /* application -> stack */
	int efd;
	unsigned size;
	unsigned spin_ns;
	/* written by the application, read and cleared by the stack */
	alignas(64) _Atomic int sleeping;
	_Atomic bool closed;
	/* written by the application as it goes to sleep (only when it moved),
	 * read by the stack: a hint, -1 until the first sleep */
	_Atomic int app_cpu;
	/* written by the stack (only when it moved), read by the application:
	 * the CPU the stack last sent from; -1 until it first sends */
	_Atomic int stack_cpu;
	alignas(64) struct {
		counter_t to_app, app_full, from_app, wakeups, wakeups_deferred;
		struct lunar_dispatch *owner; /* the dispatcher polling it, or NULL */
		bool wake_due;		      /* a wakeup deferred to the owner's next poll */
	} st;				      /* the stack's line */
	alignas(64) struct {
		counter_t to_stack, stack_full, from_stack, sleeps, spurious;
		counter_t spins, spins_skipped;
	} ap; /* the application's line */
};

struct lunar_dispatch {
	unsigned n;
	unsigned next;	    /* the channel served first in the next poll */
	unsigned wakes_due; /* channels with st.wake_due set */
	counter_t handoffs; /* polls that yielded to the threads they woke */
	struct lunar_chan *ch[];
};

static inline void count(counter_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static inline uint64_t get(const counter_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static int ring_new(unsigned size, struct rte_ring **out)
{
	/* RING_F_EXACT_SZ keeps one slot free: the memory is for the next power of two. */
	ssize_t bytes = rte_ring_get_memsize_elem(MSG_SIZE, rte_align32pow2(size + 1));
	void *mem;
	int rc;

	if (bytes < 0)
		return (int)bytes;
	if (posix_memalign(&mem, RTE_CACHE_LINE_SIZE, (size_t)bytes))
		return -ENOMEM;
	rc =
	    rte_ring_init(mem, "lunar_chan", size, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (rc) {
		free(mem);
		return rc;
	}
	*out = mem;
	return 0;
}

int lunar_chan_create(const struct lunar_chan_config *cfg, struct lunar_chan **out)
{
	struct lunar_chan_config c =
	    cfg ? *cfg : (struct lunar_chan_config){.spin_ns = LUNAR_CHAN_DEFAULT_SPIN_NS};
	struct lunar_chan *ch;
	int rc;

	if (c.size == 0)
		c.size = LUNAR_CHAN_DEFAULT_SIZE;
	if (c.size > LUNAR_CHAN_MAX_SIZE)
		return -EINVAL;
	if (posix_memalign((void **)&ch, 64, sizeof(*ch)))
		return -ENOMEM;
	memset(ch, 0, sizeof(*ch));
	atomic_init(&ch->stack_cpu, -1);
	atomic_init(&ch->app_cpu, -1);
	ch->size = c.size;
	ch->spin_ns = c.spin_ns;
	ch->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ch->efd < 0) {
		rc = -errno;
		free(ch);
		return rc;
	}
	rc = ring_new(c.size, &ch->s2a);
	if (!rc)
		rc = ring_new(c.size, &ch->a2s);
	if (rc) {
		free(ch->s2a);
		close(ch->efd);
		free(ch);
		return rc;
	}
	*out = ch;
	return 0;
}

static unsigned drain_ring(struct rte_ring *r, lunar_msg_drain_fn drain, void *ctx)
{
	struct lunar_msg m;
	unsigned n = 0;

	while (rte_ring_sc_dequeue_elem(r, &m, MSG_SIZE) == 0) {
		RING_TAKEN(r);
		if (drain)
			drain(&m, ctx);
		else if (m.buf)
			zbuf_unref(m.buf);
		n++;
	}
	return n;
}

unsigned lunar_chan_free(struct lunar_chan *ch, lunar_msg_drain_fn drain, void *ctx)
{
	unsigned n;

	if (!ch)
		return 0;
	n = drain_ring(ch->s2a, drain, ctx) + drain_ring(ch->a2s, drain, ctx);
	free(ch->s2a);
	free(ch->a2s);
	close(ch->efd);
	free(ch);
	return n;
}

static void kick(int efd)
{
	uint64_t one = 1;
	ssize_t rc;

	/* EAGAIN only if the counter is near 2^64: the fd is readable anyway. */
	do
		rc = write(efd, &one, sizeof(one));
	while (rc < 0 && errno == EINTR);
}

void lunar_chan_shutdown(struct lunar_chan *ch)
{
	atomic_store(&ch->closed, true); /* seq_cst: before the write, seen by sleep_begin */
	kick(ch->efd);
}

void lunar_chan_stats(const struct lunar_chan *ch, struct lunar_chan_stats *out)
{
	*out = (struct lunar_chan_stats){
	    .to_app = get(&ch->st.to_app),
	    .app_full = get(&ch->st.app_full),
	    .from_app = get(&ch->st.from_app),
	    .wakeups = get(&ch->st.wakeups),
	    .wakeups_deferred = get(&ch->st.wakeups_deferred),
	    .to_stack = get(&ch->ap.to_stack),
	    .stack_full = get(&ch->ap.stack_full),
	    .from_stack = get(&ch->ap.from_stack),
	    .sleeps = get(&ch->ap.sleeps),
	    .spurious = get(&ch->ap.spurious),
	    .spins = get(&ch->ap.spins),
	    .spins_skipped = get(&ch->ap.spins_skipped),
	};
}

unsigned lunar_chan_size(const struct lunar_chan *ch)
{
	return ch->size;
}

static inline bool is_closed(const struct lunar_chan *ch)
{
	return atomic_load_explicit(&ch->closed, memory_order_relaxed);
}

/*
 * P2-P3 of the protocol in dispatch.h: after an enqueue, wake a sleeper. A thread that went to
 * sleep on the CPU the stack runs on (@cpu) is not woken at once when a dispatcher polls the
 * channel: the eventfd write waits for that dispatcher's next poll, so the thread wakes once for
 * the messages sent since the last poll (a 4 KiB request is three data events) instead of
 * preempting the stack for each, and the stack then yields to it (lunar_dispatch_poll). The flag is
 * still taken here, so the deferred write is the one this sleep is owed.
 */
static inline void wake_if_sleeping(struct lunar_chan *ch, int cpu)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&ch->sleeping, memory_order_relaxed) &&
	    atomic_exchange_explicit(&ch->sleeping, 0, memory_order_acquire)) {
		count(&ch->st.wakeups, 1);
		if (ch->st.owner && cpu >= 0 &&
		    cpu == atomic_load_explicit(&ch->app_cpu, memory_order_relaxed)) {
			if (!ch->st.wake_due) /* owed since an earlier sleep that timed out */
				ch->st.owner->wakes_due++;
			ch->st.wake_due = true;
			count(&ch->st.wakeups_deferred, 1);
		} else {
			kick(ch->efd);
		}
	}
}

/* Remember the stack's CPU for the application's spin (a store only when it moved). */
static inline int note_stack_cpu(struct lunar_chan *ch)
{
	int cpu = sched_getcpu();

	if (cpu != atomic_load_explicit(&ch->stack_cpu, memory_order_relaxed))
		atomic_store_explicit(&ch->stack_cpu, cpu, memory_order_relaxed);
	return cpu;
}

unsigned lunar_chan_stack_send_burst(struct lunar_chan *ch, const struct lunar_msg *m, unsigned n)
{
	unsigned done;
	int cpu;

	if (is_closed(ch))
		return 0;
	cpu = note_stack_cpu(ch);
	RING_PUBLISH(ch->s2a);
	done = rte_ring_sp_enqueue_burst_elem(ch->s2a, m, MSG_SIZE, n, NULL);
	if (done < n)
		count(&ch->st.app_full, n - done);
	if (done) {
		count(&ch->st.to_app, done);
		wake_if_sleeping(ch, cpu);
	}
	return done;
}

int lunar_chan_stack_send(struct lunar_chan *ch, const struct lunar_msg *m)
{
	if (is_closed(ch))
		return -EPIPE;
	return lunar_chan_stack_send_burst(ch, m, 1) ? 0 : -ENOBUFS;
}

unsigned lunar_chan_stack_room(const struct lunar_chan *ch)
{
	return is_closed(ch) ? 0 : rte_ring_free_count(ch->s2a);
}

unsigned lunar_chan_stack_recv(struct lunar_chan *ch, struct lunar_msg *out, unsigned max)
{
	unsigned n = rte_ring_sc_dequeue_burst_elem(ch->a2s, out, MSG_SIZE, max, NULL);

	if (n) {
		RING_TAKEN(ch->a2s);
		count(&ch->st.from_app, n);
	}
	return n;
}

int lunar_chan_app_send(struct lunar_chan *ch, const struct lunar_msg *m)
{
	if (is_closed(ch))
		return -EPIPE;
	RING_PUBLISH(ch->a2s);
	if (rte_ring_sp_enqueue_elem(ch->a2s, (void *)(uintptr_t)m, MSG_SIZE)) {
		count(&ch->ap.stack_full, 1);
		return -ENOBUFS;
	}
	count(&ch->ap.to_stack, 1);
	return 0;
}

unsigned lunar_chan_app_recv(struct lunar_chan *ch, struct lunar_msg *out, unsigned max)
{
	unsigned n = rte_ring_sc_dequeue_burst_elem(ch->s2a, out, MSG_SIZE, max, NULL);

	if (n) {
		RING_TAKEN(ch->s2a);
		count(&ch->ap.from_stack, n);
	}
	return n;
}

int lunar_chan_app_fd(const struct lunar_chan *ch)
{
	return ch->efd;
}

/* A1..A3 of the protocol in dispatch.h. */
int lunar_chan_app_sleep_begin(struct lunar_chan *ch)
{
	int cpu = sched_getcpu();

	if (cpu != atomic_load_explicit(&ch->app_cpu, memory_order_relaxed))
		atomic_store_explicit(&ch->app_cpu, cpu, memory_order_relaxed);
	/* release: a stack that takes the flag sees this sleep's CPU (a hint only) */
	atomic_store_explicit(&ch->sleeping, 1, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (!rte_ring_empty(ch->s2a) || is_closed(ch)) {
		/*
		 * Both sides may act (dispatch.h): if the stack already took
		 * the flag, it wrote the eventfd for this announced sleep, so
		 * count the sleep too: every wakeup has its sleep (the next
		 * block reads that count and shows as spurious).
		 */
		if (!atomic_exchange_explicit(&ch->sleeping, 0, memory_order_relaxed))
			count(&ch->ap.sleeps, 1);
		return 1;
	}
	count(&ch->ap.sleeps, 1);
	return 0;
}

void lunar_chan_app_sleep_end(struct lunar_chan *ch)
{
	uint64_t v;

	atomic_store_explicit(&ch->sleeping, 0, memory_order_relaxed);
	if (read(ch->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: woken by the timeout or another fd, not by us */
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Is this thread on the CPU the stack last sent from? */
static bool on_stack_cpu(const struct lunar_chan *ch)
{
	int cpu = sched_getcpu();

	return cpu >= 0 && cpu == atomic_load_explicit(&ch->stack_cpu, memory_order_relaxed);
}

/*
 * What is queued for the application, or -EPIPE when the channel is shut
 * down and nothing is left. The flag is read before the ring, with
 * acquire: the shutdown is stored after the stack's last send, so a
 * message sent before it is never left behind an -EPIPE.
 */
static int recv_or_shut(struct lunar_chan *ch, struct lunar_msg *out, unsigned max)
{
	bool shut = atomic_load_explicit(&ch->closed, memory_order_acquire);
	unsigned n = lunar_chan_app_recv(ch, out, max);

	if (n)
		return (int)n;
	return shut ? -EPIPE : 0;
}

int lunar_chan_app_wait(struct lunar_chan *ch, struct lunar_msg *out, unsigned max, int timeout_ms)
{
	uint64_t start = 0, deadline = UINT64_MAX;
	int rc, err;

	if (max == 0)
		return -EINVAL; /* it could never return the message that wakes it */
	rc = recv_or_shut(ch, out, max);
	if (rc || timeout_ms == 0)
		return rc;
	if (ch->spin_ns || timeout_ms > 0)
		start = now_ns();
	if (timeout_ms > 0)
		deadline = start + (uint64_t)timeout_ms * 1000000u;
	/*
	 * Spin: a reply already in flight arrives without two system calls.
	 * Not on the stack's own CPU: there the spin only keeps the stack,
	 * which has to make that reply, off the CPU (a dispatch thread left
	 * on the stack's core waited out the whole spin for every request).
	 */
	if (ch->spin_ns && on_stack_cpu(ch)) {
		count(&ch->ap.spins_skipped, 1);
	} else if (ch->spin_ns) {
		uint64_t spin_end = start + ch->spin_ns;

		count(&ch->ap.spins, 1);
		for (;;) {
			rc = recv_or_shut(ch, out, max);
			if (rc)
				return rc;
			if (now_ns() >= spin_end)
				break;
			rte_pause();
		}
	}
	for (;;) {
		struct pollfd pfd = {.fd = ch->efd, .events = POLLIN};
		int wait_ms = -1;

		rc = recv_or_shut(ch, out, max);
		if (rc)
			return rc;
		if (timeout_ms > 0) {
			uint64_t t = now_ns();

			if (t >= deadline)
				return 0;
			wait_ms = (int)((deadline - t + 999999u) / 1000000u);
		}
		if (lunar_chan_app_sleep_begin(ch))
			continue; /* a message (or the shutdown) came in meanwhile */
		rc = poll(&pfd, 1, wait_ms);
		err = errno; /* before sleep_end(), whose read() may fail with EAGAIN */
		lunar_chan_app_sleep_end(ch);
		if (rc < 0) {
			/* EINTR, or ENOMEM: poll() fails only so on a live eventfd. */
			unsigned n = lunar_chan_app_recv(ch, out, max);

			return n ? (int)n : -err;
		}
		if (rc > 0 && rte_ring_empty(ch->s2a) && !is_closed(ch))
			count(&ch->ap.spurious, 1);
	}
}

int lunar_dispatch_create(unsigned nchans, const struct lunar_chan_config *cfg,
			  struct lunar_dispatch **out)
{
	struct lunar_dispatch *d;

	if (nchans == 0 || nchans > MAX_CHANS)
		return -EINVAL;
	d = calloc(1, sizeof(*d) + nchans * sizeof(d->ch[0]));
	if (!d)
		return -ENOMEM;
	for (unsigned i = 0; i < nchans; i++) {
		int rc = lunar_chan_create(cfg, &d->ch[i]);

		if (rc) {
			lunar_dispatch_free(d, NULL, NULL);
			return rc;
		}
		d->ch[i]->st.owner = d;
		d->n++;
	}
	*out = d;
	return 0;
}

unsigned lunar_dispatch_free(struct lunar_dispatch *d, lunar_msg_drain_fn drain, void *ctx)
{
	unsigned n = 0;

	if (!d)
		return 0;
	for (unsigned i = 0; i < d->n; i++)
		n += lunar_chan_free(d->ch[i], drain, ctx);
	free(d);
	return n;
}

struct lunar_chan *lunar_dispatch_chan(struct lunar_dispatch *d, unsigned idx)
{
	return idx < d->n ? d->ch[idx] : NULL;
}

unsigned lunar_dispatch_count(const struct lunar_dispatch *d)
{
	return d->n;
}

uint64_t lunar_dispatch_handoffs(const struct lunar_dispatch *d)
{
	return get(&d->handoffs);
}

void lunar_dispatch_flush_wakes(struct lunar_dispatch *d)
{
	for (unsigned i = 0; i < d->n && d->wakes_due; i++) {
		struct lunar_chan *ch = d->ch[i];

		if (ch->st.wake_due) {
			ch->st.wake_due = false;
			d->wakes_due--;
			kick(ch->efd);
		}
	}
}

/*
 * The wakeups wake_if_sleeping() deferred: write the eventfds, then give
 * the CPU to the threads woken on it (they sleep on this CPU, so without
 * the yield they would wait for the scheduler to preempt the polling loop,
 * up to milliseconds). Their replies are then usually in the rings this
 * poll reads.
 */
static void hand_off(struct lunar_dispatch *d)
{
	lunar_dispatch_flush_wakes(d);
	sched_yield();
	count(&d->handoffs, 1);
}

void lunar_dispatch_shutdown(struct lunar_dispatch *d)
{
	for (unsigned i = 0; i < d->n; i++)
		lunar_chan_shutdown(d->ch[i]);
}

unsigned lunar_dispatch_poll(struct lunar_dispatch *d, lunar_dispatch_fn fn, void *ctx,
			     unsigned budget)
{
	struct lunar_msg burst[RECV_BURST];
	unsigned share, total = 0, first = d->next;

	if (budget == 0)
		budget = RECV_BURST * d->n;
	if (d->wakes_due)
		hand_off(d);
	share = budget / d->n + (budget % d->n != 0); /* rounded up, without wrapping */
	d->next = first + 1 == d->n ? 0 : first + 1;
	for (unsigned k = 0; k < d->n && total < budget; k++) {
		unsigned idx = (first + k) % d->n;
		struct lunar_chan *ch = d->ch[idx];
		unsigned want = share < budget - total ? share : budget - total;

		while (want) {
			unsigned got =
			    lunar_chan_stack_recv(ch, burst, want < RECV_BURST ? want : RECV_BURST);

			for (unsigned i = 0; i < got; i++)
				fn(ch, idx, &burst[i], ctx);
			total += got;
			want -= got;
			if (got < RECV_BURST)
				break; /* the ring is empty (or the share is used) */
		}
	}
	return total;
}
