/*
 * kernel_poll.c - kernel fds in the run-to-completion loop (see kernel_poll.h).
 *
 * Registrations live in a table indexed by fd. The kernel's epoll_event
 * carries (generation << 32 | fd), never a pointer: the run looks the slot
 * up for every event and delivers it only if the slot still holds that
 * generation. So a callback may delete (or delete and re-add) any fd, the
 * table may grow under a callback, and an event fetched before the delete
 * is dropped as stale instead of reaching freed or reused state.
 */
#include "loop/kernel_poll.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct kp_slot {
	lunar_kpoll_fn fn;
	void *ctx;
	uint32_t events;
	uint32_t gen; /* 0: free */
};

struct lunar_kpoll {
	int epfd;
	unsigned batch;
	unsigned every, countdown;
	bool more;	   /* the last poll filled the batch */
	bool in_run;	   /* a run is calling callbacks */
	bool free_pending; /* lunar_kpoll_free() from a callback */
	uint32_t next_gen;
	unsigned count;
	struct kp_slot *slots; /* indexed by fd */
	unsigned nslots;
	struct lunar_kpoll_stats st;
	struct epoll_event evs[]; /* batch */
};

static uint64_t pack(int fd, uint32_t gen)
{
	return (uint64_t)gen << 32 | (uint32_t)fd;
}

int lunar_kpoll_create(unsigned batch, struct lunar_kpoll **out)
{
	struct lunar_kpoll *kp;

	if (batch == 0 || batch > LUNAR_KPOLL_MAX_BATCH)
		return -EINVAL;
	kp = calloc(1, sizeof(*kp) + batch * sizeof(kp->evs[0]));
	if (!kp)
		return -ENOMEM;
	kp->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (kp->epfd < 0) {
		int rc = -errno;

		free(kp);
		return rc;
	}
	kp->batch = batch;
	kp->every = 1;
	kp->next_gen = 1;
	*out = kp;
	return 0;
}

static void kp_destroy(struct lunar_kpoll *kp)
{
	close(kp->epfd);
	free(kp->slots);
	free(kp);
}

void lunar_kpoll_free(struct lunar_kpoll *kp)
{
	if (!kp)
		return;
	if (kp->in_run) {
		kp->free_pending = true; /* the run frees it once the callback returns */
		return;
	}
	kp_destroy(kp);
}

static struct kp_slot *slot_of(struct lunar_kpoll *kp, int fd)
{
	if (fd < 0 || (unsigned)fd >= kp->nslots || kp->slots[fd].gen == 0)
		return NULL;
	return &kp->slots[fd];
}

static int grow(struct lunar_kpoll *kp, int fd)
{
	unsigned n = kp->nslots ? kp->nslots : 64;
	struct kp_slot *s;

	while (n <= (unsigned)fd)
		n *= 2;
	s = realloc(kp->slots, n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(s + kp->nslots, 0, (n - kp->nslots) * sizeof(*s));
	kp->slots = s;
	kp->nslots = n;
	return 0;
}

int lunar_kpoll_add(struct lunar_kpoll *kp, int fd, uint32_t events, lunar_kpoll_fn fn, void *ctx)
{
	struct epoll_event ev = {.events = events};
	uint32_t gen;
	bool replace;

	if (fd < 0)
		return -EBADF;
	if (!fn)
		return -EINVAL;
	gen = kp->next_gen++;
	if (kp->next_gen == 0)
		kp->next_gen = 1;
	ev.data.u64 = pack(fd, gen);
	/*
	 * The kernel is the judge of EBADF and EEXIST (so a bad fd never sizes
	 * the table). If it accepts an fd our table still holds, that fd was
	 * closed without lunar_kpoll_del() and its number reused: the old slot
	 * is replaced and its late events go stale.
	 */
	if (epoll_ctl(kp->epfd, EPOLL_CTL_ADD, fd, &ev))
		return -errno;
	if ((unsigned)fd >= kp->nslots && grow(kp, fd)) {
		epoll_ctl(kp->epfd, EPOLL_CTL_DEL, fd, NULL);
		return -ENOMEM;
	}
	replace = kp->slots[fd].gen != 0;
	kp->slots[fd] = (struct kp_slot){.fn = fn, .ctx = ctx, .events = events, .gen = gen};
	if (!replace)
		kp->count++;
	return 0;
}

int lunar_kpoll_mod(struct lunar_kpoll *kp, int fd, uint32_t events)
{
	struct kp_slot *s = slot_of(kp, fd);
	struct epoll_event ev = {.events = events};

	if (!s)
		return -ENOENT;
	ev.data.u64 = pack(fd, s->gen);
	if (epoll_ctl(kp->epfd, EPOLL_CTL_MOD, fd, &ev))
		return -errno;
	s->events = events;
	return 0;
}

int lunar_kpoll_del(struct lunar_kpoll *kp, int fd)
{
	struct kp_slot *s = slot_of(kp, fd);

	if (!s)
		return -ENOENT;
	/*
	 * EBADF/ENOENT: the fd was closed (and maybe reused) first; the kernel
	 * dropped the registration with the file. Forget ours all the same.
	 */
	(void)epoll_ctl(kp->epfd, EPOLL_CTL_DEL, fd, NULL);
	*s = (struct kp_slot){0};
	kp->count--;
	return 0;
}

static int kp_poll(struct lunar_kpoll *kp, unsigned max_events, int timeout_ms)
{
	unsigned max = max_events == 0 || max_events > kp->batch ? kp->batch : max_events;
	int n, fired = 0;

	if (kp->in_run)
		return -EBUSY;
	kp->st.polls++;
	n = epoll_wait(kp->epfd, kp->evs, (int)max, timeout_ms);
	if (n < 0) {
		if (errno == EINTR)
			return 0;
		kp->st.errors++;
		return -errno;
	}
	kp->more = (unsigned)n == max;
	if (n == 0)
		return 0;
	kp->st.wakeups++;
	kp->st.full += kp->more;
	kp->in_run = true;
	for (int i = 0; i < n && !kp->free_pending; i++) {
		int fd = (int)(uint32_t)kp->evs[i].data.u64;
		uint32_t gen = (uint32_t)(kp->evs[i].data.u64 >> 32);
		struct kp_slot *s = slot_of(kp, fd);

		if (!s || s->gen != gen) {
			kp->st.stale++;
			continue;
		}
		kp->st.events++;
		fired++;
		s->fn(fd, kp->evs[i].events, s->ctx); /* s may be gone after this */
	}
	kp->in_run = false;
	if (kp->free_pending)
		kp_destroy(kp);
	return fired;
}

int lunar_kpoll_run(struct lunar_kpoll *kp, unsigned max_events)
{
	if (kp->in_run)
		return -EBUSY;
	kp->st.runs++;
	if (kp->every > 1 && !kp->more) {
		if (kp->countdown > 1) {
			kp->countdown--;
			kp->st.skipped++;
			return 0;
		}
		kp->countdown = kp->every;
	}
	return kp_poll(kp, max_events, 0);
}

int lunar_kpoll_wait(struct lunar_kpoll *kp, unsigned max_events, int timeout_ms)
{
	return kp_poll(kp, max_events, timeout_ms);
}

void lunar_kpoll_set_interval(struct lunar_kpoll *kp, unsigned every)
{
	kp->every = every ? every : 1;
	kp->countdown = 0; /* the next run polls */
}

int lunar_kpoll_fd(const struct lunar_kpoll *kp)
{
	return kp->epfd;
}

unsigned lunar_kpoll_count(const struct lunar_kpoll *kp)
{
	return kp->count;
}

const struct lunar_kpoll_stats *lunar_kpoll_stats(const struct lunar_kpoll *kp)
{
	return &kp->st;
}
