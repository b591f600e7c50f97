/*
 * fuzz_netlink.c - libFuzzer target for the netlink watcher's message
 * handling (src/ctl/netlink.c: neighbour, route, link and address events,
 * RTA_MULTIPATH, NLMSG_DONE/NLMSG_ERROR ending dumps, resync and sweep),
 * driven without a socket through nl_watch_open_detached() and
 * nl_watch_feed().
 *
 * Input: one byte, the watched ifindex (0: only checks that it is
 * refused), then datagrams, each a 2-byte big-endian length L followed by
 * L bytes (fewer if the input ends first). L = 0xffff is no datagram but a
 * lost-notifications error (nl_watch_feed(w, NULL, 0)). Each datagram is
 * copied into a heap buffer of exactly its size, so AddressSanitizer
 * catches any read past it. The detached watcher has port id 0 and
 * requests its dumps with sequence numbers 1 (neighbours), 2 (routes),
 * 3, ...: dump replies in the corpus carry those.
 *
 * Checks: every route has plen <= 32; the callbacks tell a consistent
 * story (a neighbour reported gone was last reported reachable with that
 * MAC, or is reported with a zero MAC if it never was; a removed route was
 * announced with that gateway; no reachable repeat with an unchanged MAC);
 * nl_watch_feed() never fails and returns the number of callbacks it made.
 * At the end the target reports lost notifications and answers every dump
 * with an empty NLMSG_DONE: every neighbour and route still announced must
 * then be withdrawn.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include <linux/netlink.h>

#include "base/log.h"
#include "ctl/netlink.h"
#include "fuzz_check.h"

/* What the callbacks have announced so far: reachable neighbours, routes. */
struct nb {
	uint32_t ip;
	uint8_t mac[6];
};

struct rt {
	uint32_t dst, gw;
	uint8_t plen;
};

struct mirror {
	struct nb *nb;
	size_t nnb, nb_cap;
	struct rt *rt;
	size_t nrt, rt_cap;
	int calls; /* callbacks since the last feed */
};

/* FUZZ_NETLINK_VERBOSE=1: print log lines and callbacks (to replay an input). */
static bool verbose(void)
{
	static int v = -1;

	if (v < 0)
		v = getenv("FUZZ_NETLINK_VERBOSE") != NULL;
	return v;
}

/*
 * netlink.c logs through base/log.h. The target provides lunar_log itself
 * (lunar_base is not linked) so that the many "dump failed" errors that
 * fuzzed NLMSG_ERROR replies cause do not flood and slow the run. The
 * message is still formatted, so its arguments are exercised.
 */
void lunar_log(enum lunar_log_level level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (verbose())
		fprintf(stderr, "lunar: [%d] %s\n", (int)level, line);
}

/* base/log.c's, which this target does not link either. */
void lunar_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void *grow(void *arr, size_t *cap, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 16;
	void *p = realloc(arr, ncap * elem);

	FUZZ_CHECK(p != NULL);
	*cap = ncap;
	return p;
}

static struct nb *find_nb(struct mirror *m, uint32_t ip)
{
	for (size_t i = 0; i < m->nnb; i++)
		if (m->nb[i].ip == ip)
			return &m->nb[i];
	return NULL;
}

static struct rt *find_rt(struct mirror *m, uint32_t dst, uint8_t plen)
{
	for (size_t i = 0; i < m->nrt; i++)
		if (m->rt[i].dst == dst && m->rt[i].plen == plen)
			return &m->rt[i];
	return NULL;
}

static void on_neigh(void *ctx, uint32_t ip, const uint8_t mac[6], bool reachable)
{
	static const uint8_t zero[6];
	struct mirror *m = ctx;
	struct nb *n = find_nb(m, ip);

	m->calls++;
	FUZZ_CHECK(mac != NULL);
	if (verbose())
		fprintf(stderr, "neigh %08x %02x:%02x:%02x:%02x:%02x:%02x %s\n", ip, mac[0], mac[1],
			mac[2], mac[3], mac[4], mac[5], reachable ? "reachable" : "gone");
	if (!reachable) {
		/* Gone: with the MAC we were told, or zeros if never reachable. */
		FUZZ_CHECK(!memcmp(mac, n ? n->mac : zero, 6));
		if (n)
			*n = m->nb[--m->nnb];
		return;
	}
	if (n) {
		/* REACHABLE <-> STALE churn must not be repeated. */
		FUZZ_CHECK(memcmp(n->mac, mac, 6) != 0);
	} else {
		if (m->nnb == m->nb_cap)
			m->nb = grow(m->nb, &m->nb_cap, sizeof(*m->nb));
		n = &m->nb[m->nnb++];
		n->ip = ip;
	}
	memcpy(n->mac, mac, 6);
}

static void on_route(void *ctx, uint32_t dst, uint8_t plen, uint32_t gw, bool add)
{
	struct mirror *m = ctx;
	struct rt *r;

	m->calls++;
	if (verbose())
		fprintf(stderr, "route %08x/%u gw %08x %s\n", dst, plen, gw, add ? "add" : "del");
	FUZZ_CHECK(plen <= 32);
	r = find_rt(m, dst, plen);
	if (!add) {
		/* Only what was announced is withdrawn, with its gateway. */
		FUZZ_CHECK(r != NULL);
		FUZZ_CHECK(r->gw == gw);
		*r = m->rt[--m->nrt];
		return;
	}
	if (!r) {
		if (m->nrt == m->rt_cap)
			m->rt = grow(m->rt, &m->rt_cap, sizeof(*m->rt));
		r = &m->rt[m->nrt++];
		r->dst = dst;
		r->plen = plen;
	}
	r->gw = gw;
}

static const struct nl_watch_ops ops = {.neigh = on_neigh, .route = on_route};

static void feed(struct nl_watch *w, struct mirror *m, const void *buf, size_t len)
{
	int ret;

	m->calls = 0;
	ret = nl_watch_feed(w, buf, len);
	FUZZ_CHECK(ret >= 0); /* detached: a dump "request" cannot fail */
	FUZZ_CHECK(ret == m->calls);
}

/*
 * Lose notifications, then answer dumps 1..@max_seq with an empty
 * NLMSG_DONE: the pending dump (sequence number <= @max_seq - 4) and the
 * re-dumps after it find empty tables, so everything must be withdrawn.
 */
static void drain(struct nl_watch *w, struct mirror *m, uint32_t max_seq)
{
	struct {
		struct nlmsghdr h;
		int error;
	} done = {
	    .h = {.nlmsg_len = sizeof(done),
		  .nlmsg_type = NLMSG_DONE,
		  .nlmsg_flags = NLM_F_MULTI,
		  .nlmsg_pid = 0},
	    .error = 0,
	};

	feed(w, m, NULL, 0);
	for (uint32_t seq = 1; seq <= max_seq; seq++) {
		done.h.nlmsg_seq = seq;
		feed(w, m, &done, sizeof(done));
	}
	FUZZ_CHECK(m->nnb == 0);
	FUZZ_CHECK(m->nrt == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mirror m = {0};
	struct nl_watch *w;
	uint32_t feeds = 0;
	size_t off = 1;

	if (size < 1)
		return 0;
	if (data[0] == 0) {
		errno = 0;
		FUZZ_CHECK(nl_watch_open_detached(0, &ops, &m) == NULL && errno == EINVAL);
		return 0;
	}
	w = nl_watch_open_detached(data[0], &ops, &m);
	FUZZ_CHECK(w != NULL);
	/* Nothing may reach for the missing sockets. */
	FUZZ_CHECK(nl_watch_fd(w) == -EBADF);
	FUZZ_CHECK(nl_watch_poll(w) == -EBADF);
	FUZZ_CHECK(nl_watch_resolve(w, 0x0a000001) == -EBADF);
	FUZZ_CHECK(nl_watch_feed(w, NULL, 1) == -EINVAL);

	while (size - off >= 2) {
		size_t len = (size_t)data[off] << 8 | data[off + 1];
		uint8_t *buf;

		off += 2;
		feeds++;
		if (len == 0xffff) {
			feed(w, &m, NULL, 0);
			continue;
		}
		if (len > size - off)
			len = size - off;
		buf = malloc(len ? len : 1);
		FUZZ_CHECK(buf != NULL);
		memcpy(buf, data + off, len);
		feed(w, &m, buf, len);
		free(buf);
		off += len;
	}
	/*
	 * Each feed starts at most one dump, so the pending one has a sequence
	 * number <= feeds + 2 (open, drain's loss); after it come at most a
	 * re-dump of an interrupted table and one dump of each table.
	 */
	drain(w, &m, feeds + 8);
	nl_watch_close(w);
	free(m.nb);
	free(m.rt);
	return 0;
}
