/*
 * lunar-loopdemo - the two loop modules together, on kernel sockets only (no
 * port, no EAL, no hugepages): a "stack core" (the main thread) serves a TCP
 * echo on 127.0.0.1 from its run-to-completion loop with kernel_poll, and
 * hands each chunk it reads, in a Zbuf buffer, to an application thread
 * over a dispatch channel (LUNA §5.2's object-storage split). The
 * application upper-cases the bytes in place and sends the buffer back; the
 * stack core writes it to the socket and releases it.
 *
 *   lunar-loopdemo [--port N] [--threads N]   serve until SIGINT (try nc)
 *   lunar-loopdemo --self-test N [--rounds R] N client connections, R
 *                                             round trips each, checked
 *
 * The stack core polls while a request is at an application thread; with
 * none, only a kernel fd can bring work, so it blocks on them
 * (lunar_kpoll_wait), which a real worker polling a port would not do. The
 * application threads sleep on their channels' eventfds. At the end it
 * prints the counters and,
 * with --self-test, what an empty epoll_wait costs per iteration with and
 * without the interval (kernel_poll.h's trade-off), and fails if a byte was
 * wrong or a Zbuf buffer leaked.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "loop/dispatch.h"
#include "loop/env.h"
#include "loop/kernel_poll.h"
#include "loop/options.h"
#include "mem/zbuf.h"

#define CHUNK	    2048
#define MAX_FDS	    1024
#define POLL_BUDGET 64
#define MAX_THREADS 64
#define MAX_CLIENTS 256

enum { OP_REQ = 1, OP_RESP = 2 };

struct conn {
	uint32_t gen; /* 0: free; replies for another generation are dropped */
	bool paused;  /* the application's ring was full: not reading */
	struct lunar_msg pending;
};

struct demo {
	struct lunar_kpoll *kp;
	struct lunar_dispatch *d;
	int lfd;
	uint32_t next_gen;
	struct conn conns[MAX_FDS];
	unsigned open, accepted, paused;
	uint64_t inflight; /* requests at application threads */
	uint64_t bytes, stale_replies, write_errors;
};

static uint64_t conn_id(int fd, uint32_t gen)
{
	return (uint64_t)gen << 32 | (uint32_t)fd;
}

static void conn_close(struct demo *s, int fd)
{
	struct conn *c = &s->conns[fd];

	if (c->paused && c->pending.buf)
		zbuf_unref(c->pending.buf);
	*c = (struct conn){0};
	lunar_kpoll_del(s->kp, fd);
	close(fd);
	s->open--;
}

/* Hand a message to the connection's application thread, or pause reading. */
static void to_app(struct demo *s, int fd, const struct lunar_msg *m)
{
	struct conn *c = &s->conns[fd];
	struct lunar_chan *ch =
	    lunar_dispatch_chan(s->d, (unsigned)fd % lunar_dispatch_count(s->d));

	if (lunar_chan_stack_send(ch, m) == 0) {
		s->inflight++;
		if (c->paused) {
			c->paused = false;
			s->paused--;
			lunar_kpoll_mod(s->kp, fd, EPOLLIN | EPOLLRDHUP);
		}
		return;
	}
	/* backpressure: keep the message, stop reading until the ring has room */
	c->pending = *m;
	if (!c->paused) {
		c->paused = true;
		s->paused++;
		lunar_kpoll_mod(s->kp, fd, EPOLLRDHUP);
	}
}

static void on_conn(int fd, uint32_t events, void *ctx)
{
	struct demo *s = ctx;
	struct conn *c = &s->conns[fd];
	void *buf;
	ssize_t n;

	if (events & EPOLLIN) {
		buf = zbuf_alloc(CHUNK);
		if (!buf)
			return; /* out of buffers: level-triggered, try again next run */
		n = read(fd, buf, CHUNK);
		if (n > 0) {
			struct lunar_msg m = {.op = OP_REQ,
					      .len = (uint32_t)n,
					      .conn = conn_id(fd, c->gen),
					      .buf = buf};

			to_app(s, fd, &m); /* the buffer's reference goes with it */
			return;
		}
		zbuf_unref(buf);
		if (n < 0 && errno == EAGAIN)
			return;
	} else if (!(events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
		return;
	}
	conn_close(s, fd); /* EOF or error */
}

static void on_listen(int fd, uint32_t events, void *ctx)
{
	struct demo *s = ctx;
	int c;

	(void)events;
	while ((c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (c >= MAX_FDS || lunar_kpoll_add(s->kp, c, EPOLLIN | EPOLLRDHUP, on_conn, s)) {
			close(c);
			continue;
		}
		if (++s->next_gen == 0)
			s->next_gen = 1;
		s->conns[c].gen = s->next_gen;
		s->open++;
		s->accepted++;
	}
}

/* Stack core: a reply from an application thread. */
static void on_reply(struct lunar_chan *ch, unsigned idx, struct lunar_msg *m, void *ctx)
{
	struct demo *s = ctx;
	int fd = (int)(uint32_t)m->conn;

	(void)ch;
	(void)idx;
	s->inflight--;
	if (fd >= MAX_FDS || s->conns[fd].gen != (uint32_t)(m->conn >> 32)) {
		s->stale_replies++; /* the connection closed meanwhile */
	} else if (write(fd, m->buf, m->len) != (ssize_t)m->len) {
		s->write_errors++; /* the demo does not queue partial writes */
		conn_close(s, fd);
	} else {
		s->bytes += m->len;
	}
	zbuf_unref(m->buf);
}

static void retry_paused(struct demo *s)
{
	for (int fd = 0; fd < MAX_FDS && s->paused; fd++)
		if (s->conns[fd].paused)
			to_app(s, fd, &s->conns[fd].pending);
}

/* Application thread: upper-case each request in place and send it back. */
static void *app_main(void *arg)
{
	struct lunar_chan *ch = arg;
	struct lunar_msg in[32];
	int n;

	while ((n = lunar_chan_app_wait(ch, in, 32, -1)) != -EPIPE) {
		for (int i = 0; i < n; i++) {
			unsigned char *p = in[i].buf;

			for (uint32_t k = 0; k < in[i].len; k++)
				p[k] = (unsigned char)toupper(p[k]);
			in[i].op = OP_RESP;
			while (lunar_chan_app_send(ch, &in[i]) == -ENOBUFS)
				sched_yield(); /* the stack core drains it every iteration */
		}
	}
	return NULL;
}

/* --- self-test clients: blocking kernel sockets --- */

struct client {
	uint16_t port;
	unsigned rounds, id;
	bool ok;
};

static void *client_main(void *arg)
{
	struct client *cl = arg;
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(cl->port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	char out[1500], want[1500], back[1500];
	unsigned seed = cl->id * 7919 + 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		goto out;
	for (unsigned r = 0; r < cl->rounds; r++) {
		size_t len = 1 + rand_r(&seed) % sizeof(out), got = 0;

		for (size_t k = 0; k < len; k++) {
			out[k] = (char)('a' + rand_r(&seed) % 26);
			want[k] = (char)toupper((unsigned char)out[k]);
		}
		if (write(fd, out, len) != (ssize_t)len)
			goto out;
		while (got < len) {
			ssize_t n = read(fd, back + got, len - got);

			if (n <= 0)
				goto out;
			got += (size_t)n;
		}
		if (memcmp(back, want, len))
			goto out;
	}
	cl->ok = true;
out:
	if (fd >= 0)
		close(fd);
	return NULL;
}

static double ns_per_run(struct lunar_kpoll *kp, unsigned every, unsigned runs)
{
	struct timespec a, b;

	lunar_kpoll_set_interval(kp, every);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned i = 0; i < runs; i++)
		lunar_kpoll_run(kp, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	lunar_kpoll_set_interval(kp, 1);
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / runs;
}

static void usage(FILE *f)
{
	fputs("usage: lunar-loopdemo [--port N] [--threads N] [--self-test CONNS [--rounds R]]\n"
	      "  --port N         TCP port on 127.0.0.1 (default 0: any, printed)\n"
	      "  --threads N      application threads, one channel each (default 2)\n"
	      "  --self-test N    run N client connections, check every byte, exit\n"
	      "  --rounds R       round trips per client connection (default 200)\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"port", required_argument, NULL, 'p'},
					   {"threads", required_argument, NULL, 't'},
					   {"self-test", required_argument, NULL, 's'},
					   {"rounds", required_argument, NULL, 'r'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	struct zbuf_config zc = {.backend = ZBUF_BACKEND_MMAP, .zones = {2, 1, 1, 1}};
	struct lunar_chan_config cc = {.size = 256, .spin_ns = LUNAR_CHAN_DEFAULT_SPIN_NS};
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	unsigned threads = 2, clients = 0, rounds = 200, done = 0;
	pthread_t apps[MAX_THREADS], cthreads[MAX_CLIENTS];
	struct client cls[MAX_CLIENTS];
	char err[128];
	static struct demo s;
	time_t deadline = time(NULL) + 60;
	uint64_t leaked;
	bool ok = true;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		unsigned long v = 0;

		rc = 0;
		switch (opt) {
		case 'p':
			rc = parse_uint_opt("port", optarg, 0, 65535, &v, err, sizeof(err));
			a.sin_port = htons((uint16_t)v);
			break;
		case 't':
			rc =
			    parse_uint_opt("threads", optarg, 1, MAX_THREADS, &v, err, sizeof(err));
			threads = (unsigned)v;
			break;
		case 's':
			rc = parse_uint_opt("self-test", optarg, 1, MAX_CLIENTS, &v, err,
					    sizeof(err));
			clients = (unsigned)v;
			break;
		case 'r':
			rc = parse_uint_opt("rounds", optarg, 1, 1000000, &v, err, sizeof(err));
			rounds = (unsigned)v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (rc) {
			fprintf(stderr, "lunar-loopdemo: %s\n", err);
			return 2;
		}
	}
	if (zbuf_init(&zc) || lunar_kpoll_create(32, &s.kp) ||
	    lunar_dispatch_create(threads, &cc, &s.d)) {
		fprintf(stderr, "lunar-loopdemo: out of memory or descriptors\n");
		return 1;
	}
	zbuf_thread_init(0);
	s.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s.lfd < 0 || bind(s.lfd, (struct sockaddr *)&a, sizeof(a)) || listen(s.lfd, 128) ||
	    getsockname(s.lfd, (struct sockaddr *)&a, &alen)) {
		fprintf(stderr, "lunar-loopdemo: cannot listen on 127.0.0.1:%u: %s\n",
			ntohs(a.sin_port), strerror(errno));
		return 1;
	}
	rc = lunar_kpoll_add(s.kp, s.lfd, EPOLLIN, on_listen, &s);
	if (rc) {
		fprintf(stderr, "lunar-loopdemo: %s\n", strerror(-rc));
		return 1;
	}
	for (unsigned i = 0; i < threads; i++)
		pthread_create(&apps[i], NULL, app_main, lunar_dispatch_chan(s.d, i));
	printf("echo (upper-cased) on 127.0.0.1:%u, %u application threads\n", ntohs(a.sin_port),
	       threads);
	fflush(stdout);
	for (unsigned i = 0; i < clients; i++) {
		cls[i] = (struct client){.port = ntohs(a.sin_port), .rounds = rounds, .id = i};
		pthread_create(&cthreads[i], NULL, client_main, &cls[i]);
	}
	lunar_handle_signals();

	/* The stack core's loop. */
	for (unsigned long it = 0; !lunar_stop_requested(); it++) {
		lunar_kpoll_run(s.kp, 0);
		lunar_dispatch_poll(s.d, on_reply, &s, POLL_BUDGET);
		retry_paused(&s);
		if (clients && s.accepted == clients && s.open == 0)
			break; /* every client came and went */
		if (clients && it % 1024 == 0 && time(NULL) > deadline) {
			fprintf(stderr,
				"lunar-loopdemo: the self-test is still running after 60 s\n");
			break;
		}
		/*
		 * Nothing at an application thread: only the kernel can bring
		 * work, so block on it (a signal ends the wait early).
		 */
		if (s.inflight == 0) {
			lunar_dispatch_flush_wakes(s.d); /* none owed now, but never block on one */
			lunar_kpoll_wait(s.kp, 0, 100);
		}
	}

	lunar_dispatch_shutdown(s.d);
	for (unsigned i = 0; i < threads; i++)
		pthread_join(apps[i], NULL);
	/* replies still on the rings (after a stop), then the connections still open */
	while (lunar_dispatch_poll(s.d, on_reply, &s, 0))
		;
	for (int fd = 0; fd < MAX_FDS; fd++)
		if (s.conns[fd].gen)
			conn_close(&s, fd);
	for (unsigned i = 0; i < clients; i++) {
		pthread_join(cthreads[i], NULL); /* their peers are closed: none blocks */
		done += cls[i].ok;
	}

	const struct lunar_kpoll_stats *ks = lunar_kpoll_stats(s.kp);
	printf("kernel_poll: %llu runs, %llu polls, %llu events, %llu full batches, %llu stale, "
	       "%llu errors\n",
	       (unsigned long long)ks->runs, (unsigned long long)ks->polls,
	       (unsigned long long)ks->events, (unsigned long long)ks->full,
	       (unsigned long long)ks->stale, (unsigned long long)ks->errors);
	for (unsigned i = 0; i < threads; i++) {
		struct lunar_chan_stats cs;

		lunar_chan_stats(lunar_dispatch_chan(s.d, i), &cs);
		printf("channel %u: %llu to app, %llu back, %llu refused (full), %llu sleeps, "
		       "%llu wakeups\n",
		       i, (unsigned long long)cs.to_app, (unsigned long long)cs.from_app,
		       (unsigned long long)(cs.app_full + cs.stack_full),
		       (unsigned long long)cs.sleeps, (unsigned long long)cs.wakeups);
	}
	printf("echoed %llu bytes; %llu replies for closed connections; %llu short writes\n",
	       (unsigned long long)s.bytes, (unsigned long long)s.stale_replies,
	       (unsigned long long)s.write_errors);
	if (clients) {
		printf("an empty kernel poll per iteration: %.0f ns; with --interval 16: %.0f ns\n",
		       ns_per_run(s.kp, 1, 100000), ns_per_run(s.kp, 16, 100000));
		printf("clients: %u of %u checked every byte\n", done, clients);
		ok = done == clients;
	}
	lunar_kpoll_del(s.kp, s.lfd);
	close(s.lfd);
	lunar_kpoll_free(s.kp);
	lunar_dispatch_free(s.d, NULL, NULL);
	leaked = zbuf_in_use();
	printf("Zbuf objects still in use: %llu\n", (unsigned long long)leaked);
	zbuf_thread_fini();
	zbuf_fini();
	return ok && leaked == 0 ? 0 : 1;
}
