/*
 * knb_kernel.c - knb over Linux TCP sockets: one epoll loop per thread,
 * non-blocking sockets with TCP_NODELAY; busy-poll mode spins on
 * epoll_wait(0) with SO_BUSY_POLL set, blocking mode sleeps in epoll_wait.
 */
#include "knb.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SCRATCH	 (256u << 10)
#define ECHO_BUF (256u << 10)

struct kconn {
	int fd;
	bool connecting, want_out, closed;
	bool in_paused; /* echo full: EPOLLIN unwatched until some of it is written back */
	struct knb_flow f;
	uint8_t *echo; /* server RPC: bytes received and not yet echoed */
	uint32_t echo_off, echo_len;
};

struct kthread {
	const struct knb_config *c;
	unsigned index;
	int core;
	pthread_t tid;
	int epfd;
	struct knb_meter meter;
	struct kconn **conns;
	unsigned n;
	struct knb_timeline tl;
	int rc;
	char err[300];
};

static pthread_barrier_t start_barrier;
static volatile bool abort_all; /* a client thread failed: the others stop too */
static uint8_t zeros[KNB_BULK_CHUNK];

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void pin(struct kthread *t)
{
	cpu_set_t set;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	t->core = -1;
	if (!t->c->core_given || ncpu <= 0)
		return;
	/* A list: one CPU per thread (checked); one CPU: the first, the rest after it. */
	if (t->c->lo.n_workers > 1)
		t->core = (int)t->c->lo.cores[t->index % t->c->lo.n_workers];
	else
		t->core = (int)((t->c->lo.core + t->index) % (unsigned)ncpu);
	CPU_ZERO(&set);
	CPU_SET(t->core, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
		fprintf(stderr, "knb: thread %u: could not pin to CPU %d; it runs unpinned\n",
			t->index, t->core);
		t->core = -1; /* the report says so */
	}
}

static void tune(const struct knb_config *c, int fd)
{
	int one = 1, busy = 50;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (c->kernel_mode == KNB_KERNEL_BUSY_POLL)
		setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &busy, sizeof(busy));
}

/*
 * What epoll reports for @k: readable unless its echo buffer is full (a
 * level-triggered EPOLLIN that pump_in() cannot take would wake the loop
 * at once, every time, until the peer reads: a spinning "blocking" server),
 * writable while output waits.
 */
static void watch(struct kthread *t, struct kconn *k, bool out, bool in_paused)
{
	struct epoll_event ev = {.events = (in_paused ? 0 : EPOLLIN) | (out ? EPOLLOUT : 0),
				 .data.ptr = k};

	if (k->want_out == out && k->in_paused == in_paused)
		return;
	k->want_out = out;
	k->in_paused = in_paused;
	epoll_ctl(t->epfd, EPOLL_CTL_MOD, k->fd, &ev);
}

static void watch_out(struct kthread *t, struct kconn *k, bool on)
{
	watch(t, k, on, k->in_paused);
}

static void fail(struct kthread *t, const char *msg)
{
	if (!t->rc) {
		t->rc = 1;
		if (msg != t->err)
			snprintf(t->err, sizeof(t->err), "%s", msg);
	}
}

/* Send the handshake and what the flow may send now. */
/* Sends in one pump_out() call before the loop gets a turn. */
#define KNB_KERNEL_BURST_CHUNKS 16

static void pump_out(struct kthread *t, struct kconn *k)
{
	const uint8_t *p;
	uint32_t hs = knb_flow_hs_pending(&k->f, &p);
	uint64_t budget;

	if (hs) {
		ssize_t w = send(k->fd, p, hs, MSG_NOSIGNAL);

		if (w < 0 && errno != EAGAIN)
			k->closed = true;
		if (w > 0)
			knb_flow_hs_sent(&k->f, (uint32_t)w);
		if (w < (ssize_t)hs) {
			watch_out(t, k, !k->closed);
			return;
		}
		if (k->f.close_after_hs)
			k->closed = true;
	}
	for (unsigned chunks = 0; (budget = knb_flow_tx_budget(&k->f)) > 0; chunks++) {
		size_t len = budget < KNB_BULK_CHUNK ? (size_t)budget : KNB_BULK_CHUNK;
		const uint8_t *src = zeros;
		ssize_t w;

		/*
		 * A stream's budget never ends, and a receiver on another core
		 * may drain fast enough that send() never says EAGAIN: return
		 * now and then, writable still watched, so the loop's clock
		 * (the measured window) and the other connections get a turn.
		 */
		if (chunks == KNB_KERNEL_BURST_CHUNKS) {
			watch_out(t, k, true);
			return;
		}
		if (k->echo) {
			src = k->echo + k->echo_off;
			if (len > k->echo_len)
				len = k->echo_len;
		}
		w = send(k->fd, src, len, MSG_NOSIGNAL); /* a closed peer is not a SIGPIPE */
		if (w <= 0) {
			if (w < 0 && errno != EAGAIN)
				k->closed = true;
			watch_out(t, k, !k->closed);
			return;
		}
		if (k->echo) {
			k->echo_off += (uint32_t)w;
			k->echo_len -= (uint32_t)w;
			if (!k->echo_len)
				k->echo_off = 0;
			if (k->in_paused)
				watch(t, k, k->want_out, false); /* room again */
		}
		knb_flow_on_tx(&k->f, (uint64_t)w, now_ns(CLOCK_MONOTONIC));
	}
	watch_out(t, k, false);
}

/*
 * Read what is there. Until the handshake is done only its bytes are read,
 * so payload always lands where the flow keeps it (the echo buffer of a
 * server RPC flow, allocated once the hello is accepted, or scratch).
 */
static void pump_in(struct kthread *t, struct kconn *k, uint8_t *scratch)
{
	for (;;) {
		uint8_t *dst = scratch;
		size_t room = SCRATCH;
		ssize_t r;

		if (!k->f.ready) {
			room = k->f.hs_in_len - k->f.hs_in_got;
		} else if (k->echo) {
			/* Echo: keep what came until it is written back; stop when full. */
			if (k->echo_off + k->echo_len == ECHO_BUF) {
				memmove(k->echo, k->echo + k->echo_off, k->echo_len);
				k->echo_off = 0;
			}
			dst = k->echo + k->echo_off + k->echo_len;
			room = ECHO_BUF - k->echo_off - k->echo_len;
		}
		if (!room) {
			/* echo full (its bytes wait for EPOLLOUT), or a refused hello whose ack
			 * is still going out */
			if (k->echo && k->want_out)
				watch(t, k, true, true);
			return;
		}
		r = read(k->fd, dst, room);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
			k->closed = true;
			return;
		}
		if (r < 0)
			return;
		if (!k->f.ready) {
			if (knb_flow_hs_received(&k->f, dst, (uint32_t)r) < 0) {
				k->closed = true;
				return;
			}
			if (k->f.ready && !k->f.client && k->f.kind == KNB_FLOW_RPC) {
				k->echo = malloc(ECHO_BUF);
				if (!k->echo) {
					k->closed = true;
					return;
				}
			}
		} else {
			if (knb_flow_on_rx(&k->f, (uint64_t)r, now_ns(CLOCK_MONOTONIC)) < 0) {
				k->closed = true; /* the client's loop reports f.error */
				return;
			}
			if (k->echo)
				k->echo_len += (uint32_t)r;
		}
		pump_out(t, k);
		if (k->closed)
			return;
	}
}

static int wait_events(struct kthread *t, struct epoll_event *ev, int max)
{
	return epoll_wait(t->epfd, ev, max, t->c->kernel_mode == KNB_KERNEL_BUSY_POLL ? 0 : 10);
}

/* ---- client ---- */

static int client_connect(struct kthread *t)
{
	const struct knb_config *c = t->c;
	struct knb_flow_spec plan[KNB_MAX_FLOWS];
	uint64_t deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t)(c->connect_timeout_s * 1e9);
	struct epoll_event ev[64];
	unsigned ready = 0;
	char host[INET_ADDRSTRLEN];
	struct in_addr a = {.s_addr = htonl(c->addr)};

	inet_ntop(AF_INET, &a, host, sizeof(host));
	t->n = knb_plan(c, t->index, plan, KNB_MAX_FLOWS);
	t->conns = calloc(t->n, sizeof(*t->conns));
	if (!t->conns)
		return -1;
	for (unsigned i = 0; i < t->n; i++) {
		struct kconn *k = calloc(1, sizeof(*k));
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_addr = a,
					 .sin_port =
					     htons((uint16_t)(c->port + plan[i].server_thread))};
		struct epoll_event e = {.events = EPOLLIN | EPOLLOUT};

		if (!k)
			return -1;
		t->conns[i] = k;
		knb_flow_client(&k->f, &plan[i], t->index, c->proto_version, &t->meter);
		k->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (k->fd < 0)
			return -1;
		tune(c, k->fd);
		if (connect(k->fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS) {
			snprintf(t->err, sizeof(t->err), "cannot connect to %s:%u: %s", host,
				 c->port + plan[i].server_thread, strerror(errno));
			return -1;
		}
		k->connecting = true;
		k->want_out = true;
		e.data.ptr = k;
		epoll_ctl(t->epfd, EPOLL_CTL_ADD, k->fd, &e);
	}
	while (ready < t->n) {
		uint8_t scratch[KNB_ACK_LEN * 4];
		int n;

		if (now_ns(CLOCK_MONOTONIC) > deadline || knb_stop_requested() || abort_all) {
			if (!t->err[0])
				snprintf(
				    t->err, sizeof(t->err),
				    "could not connect to %s:%u within %.1f s (--connect-timeout): "
				    "is a knb server running there, and reachable?",
				    host, c->port, c->connect_timeout_s);
			return -1;
		}
		n = epoll_wait(t->epfd, ev, 64, 10);
		for (int i = 0; i < n; i++) {
			struct kconn *k = ev[i].data.ptr;
			int soerr = 0;
			socklen_t sl = sizeof(soerr);
			ssize_t r;

			if (k->connecting) {
				getsockopt(k->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
				if (soerr) {
					snprintf(
					    t->err, sizeof(t->err), "cannot connect to %s:%u: %s%s",
					    host, c->port + k->f.server_thread, strerror(soerr),
					    soerr == ECONNREFUSED ? " (is a knb server listening "
								    "there? --server-threads?)"
								  : "");
					return -1;
				}
				k->connecting = false;
			}
			pump_out(t, k);
			if (k->f.ready)
				continue;
			r = read(k->fd, scratch, KNB_ACK_LEN - k->f.hs_in_got);
			if (r == 0 || (r < 0 && errno != EAGAIN)) {
				snprintf(t->err, sizeof(t->err),
					 "%s:%u closed the connection before answering: not a knb "
					 "server, "
					 "or one that refused this client (see its log)",
					 host, c->port + k->f.server_thread);
				return -1;
			}
			if (r > 0 && knb_flow_hs_received(&k->f, scratch, (uint32_t)r) < 0) {
				snprintf(t->err, sizeof(t->err), "%s", k->f.error);
				return -1;
			}
			if (k->f.ready) {
				ready++;
				if (k->f.server_threads <= k->f.server_thread) {
					snprintf(t->err, sizeof(t->err),
						 "inconsistent server thread count");
					return -1;
				}
			}
		}
	}
	if (t->conns[0]->f.server_threads < c->server_threads) {
		snprintf(t->err, sizeof(t->err),
			 "the server runs %u threads but --server-threads is %u",
			 t->conns[0]->f.server_threads, c->server_threads);
		return -1;
	}
	return 0;
}

static void *client_main(void *arg)
{
	struct kthread *t = arg;
	const struct knb_config *c = t->c;
	uint8_t *scratch = malloc(SCRATCH);
	struct epoll_event ev[64];
	enum knb_tick tick;

	pin(t);
	knb_hist_init(&t->meter.hist);
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!scratch || t->epfd < 0 || client_connect(t)) {
		fail(t, t->err[0] ? t->err : "out of memory");
		abort_all = true;
		pthread_barrier_wait(&start_barrier);
		free(scratch);
		return NULL;
	}
	pthread_barrier_wait(&start_barrier);
	if (abort_all) {
		free(scratch);
		return NULL;
	}
	for (unsigned i = 0; i < t->n; i++)
		pump_out(t, t->conns[i]); /* the first requests, the bulk senders */
	knb_timeline_start(&t->tl, c, now_ns(CLOCK_MONOTONIC));
	for (;;) {
		bool drained = true;
		int n;

		for (unsigned i = 0; t->tl.drain_until && i < t->n; i++)
			drained = drained && knb_flow_drained(&t->conns[i]->f);
		tick = knb_timeline_tick(&t->tl, &t->meter, now_ns(CLOCK_MONOTONIC), drained);
		if (tick == KNB_TICK_DONE)
			break;
		if (tick == KNB_TICK_CLOSED)
			for (unsigned i = 0; i < t->n; i++)
				t->conns[i]->f.stopping = true;
		if (knb_stop_requested() || abort_all) {
			fail(t, "interrupted");
			break;
		}
		n = wait_events(t, ev, 64);
		for (int i = 0; i < n; i++) {
			struct kconn *k = ev[i].data.ptr;

			if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
				pump_in(t, k, scratch);
			if (!k->closed && (ev[i].events & EPOLLOUT))
				pump_out(t, k);
			if (k->closed) {
				fail(t,
				     k->f.error[0] ? k->f.error : "the server closed a connection");
				abort_all = true;
			}
		}
	}
	for (unsigned i = 0; i < t->n; i++) {
		close(t->conns[i]->fd);
		free(t->conns[i]);
	}
	free(t->conns);
	close(t->epfd);
	free(scratch);
	return NULL;
}

/* ---- server ---- */

static void close_conn(struct kthread *t, struct kconn *k)
{
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, k->fd, NULL);
	close(k->fd);
	if (k->f.error[0])
		fprintf(stderr, "knb server: %s\n", k->f.error);
	free(k->echo);
	free(k);
}

static void *server_main(void *arg)
{
	struct kthread *t = arg;
	const struct knb_config *c = t->c;
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(c->addr),
				 .sin_port = htons((uint16_t)(c->port + t->index))};
	uint8_t *scratch = malloc(SCRATCH);
	struct epoll_event ev[64], e = {.events = EPOLLIN, .data.ptr = NULL};
	int one = 1, lfd;

	pin(t);
	knb_hist_init(&t->meter.hist);
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (!scratch || t->epfd < 0 || lfd < 0) {
		fail(t, "out of resources");
		pthread_barrier_wait(&start_barrier);
		return NULL;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1024)) {
		char m[200];

		snprintf(m, sizeof(m), "cannot listen on port %u: %s", c->port + t->index,
			 strerror(errno));
		fail(t, m);
		pthread_barrier_wait(&start_barrier);
		close(lfd);
		free(scratch);
		return NULL;
	}
	epoll_ctl(t->epfd, EPOLL_CTL_ADD, lfd, &e);
	pthread_barrier_wait(&start_barrier);
	while (!knb_stop_requested()) {
		int n = wait_events(t, ev, 64);

		for (int i = 0; i < n; i++) {
			struct kconn *k = ev[i].data.ptr;

			if (!k) {
				int fd;

				while ((fd = accept4(lfd, NULL, NULL,
						     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					struct epoll_event ce = {.events = EPOLLIN};

					k = calloc(1, sizeof(*k));
					if (!k) {
						close(fd);
						continue;
					}
					k->fd = fd;
					tune(c, fd);
					knb_flow_server(&k->f, t->index, c->threads,
							c->proto_version, &t->meter);
					ce.data.ptr = k;
					epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ce);
				}
				continue;
			}
			if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
				pump_in(t, k, scratch);
			if (!k->closed && (ev[i].events & EPOLLOUT))
				pump_out(t, k);
			if (k->closed)
				close_conn(t, k);
		}
	}
	close(lfd);
	close(t->epfd);
	free(scratch);
	return NULL;
}

int knb_kernel_run(const struct knb_config *c)
{
	unsigned nt = c->threads;
	struct kthread *th = calloc(nt, sizeof(*th));
	struct knb_result r = {0};
	int rc = 0;

	if (!th)
		return 1;
	knb_handle_signals();
	pthread_barrier_init(&start_barrier, NULL, nt + 1);
	for (unsigned i = 0; i < nt; i++) {
		th[i].c = c;
		th[i].index = i;
		pthread_create(&th[i].tid, NULL, c->server ? server_main : client_main, &th[i]);
	}
	pthread_barrier_wait(&start_barrier);
	if (c->server) {
		for (unsigned i = 0; i < nt; i++)
			if (th[i].rc) {
				fprintf(stderr, "knb server: %s\n", th[i].err);
				rc = 1;
			}
		if (!rc)
			printf("knb server: ready, kernel stack, %u thread%s on port %u%s, %s\n",
			       nt, nt > 1 ? "s" : "", c->port, nt > 1 ? " and up" : "",
			       c->kernel_mode == KNB_KERNEL_BUSY_POLL ? "busy-poll" : "blocking");
		fflush(stdout);
		if (rc)
			abort_all = true;
	}
	for (unsigned i = 0; i < nt; i++)
		pthread_join(th[i].tid, NULL);
	if (!c->server) {
		for (unsigned i = 0; i < nt; i++)
			if (th[i].rc && strcmp(th[i].err, "interrupted")) {
				fprintf(stderr, "knb client: %s\n", th[i].err);
				rc = 1;
				break;
			}
		for (unsigned i = 0; i < nt && !rc; i++)
			if (th[i].rc) {
				fprintf(stderr, "knb client: %s\n", th[i].err);
				rc = 1;
			}
	}
	if (!rc || c->server) {
		r.nthreads = nt;
		r.threads = calloc(nt, sizeof(*r.threads));
		for (unsigned i = 0; r.threads && i < nt; i++) {
			double wall = (double)(th[i].tl.win_end - th[i].tl.win_start) / 1e9;

			r.threads[i].index = i;
			r.threads[i].core = th[i].core;
			r.threads[i].meter = th[i].meter;
			r.threads[i].cpu_pct = knb_timeline_cpu_pct(&th[i].tl);
			if (wall > r.window_s)
				r.window_s = wall;
		}
		if (!r.threads || knb_report(c, &r))
			rc = 1;
		free(r.threads);
	}
	pthread_barrier_destroy(&start_barrier);
	free(th);
	return rc;
}
