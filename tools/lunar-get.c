/*
 * lunar-get - a TCP client over lunar: fetches from or sends to a TCP
 * server and prints bytes, throughput and SHA-256.
 *
 *   lunar-get [port options] --connect IP:PORT --get /PATH [--output FILE]   HTTP/1.1 GET
 *   lunar-get [port options] --connect IP:PORT --put FILE [--path /NAME]     HTTP/1.1 PUT
 *   lunar-get [port options] --connect IP:PORT --send FILE | --bytes N      raw: send, close
 *   lunar-get [port options] --connect IP:PORT --recv [--output FILE]       raw: read to EOF
 *   lunar-get [port options] --connect IP:PORT --echo N                     raw: send N bytes to
 *                                                an echo server, read them back, compare
 *   lunar-get [port options] --connect IP:PORT --conns N (--echo B | --bytes B)
 *                                                N concurrent connections, each moving B bytes
 *   lunar-get [port options] --connect IP:PORT --soak S [--conns N]
 *                                                S seconds of connections that come and go
 *
 * Many connections (--conns): the connects are spread over the loop (at most
 * HANDSHAKES_MAX in flight, so the server's backlog is not flooded), and no
 * connection sends before all N are established, so all N are open at once.
 * Then each sends B bytes of its own generated stream, half-closes, and (with
 * --echo) checks what comes back against the regenerated stream. The client
 * keeps no buffer per connection (32 bytes of state): the data is generated
 * into Zbuf buffers on demand and handed to TCP by reference. Once all are
 * established and idle, the stack's memory per connection is measured
 * (mallinfo2() and zbuf_in_use() against a baseline taken before the first
 * connect); the peak while data moves is sampled too. docs/TCP_MEMORY.md
 * explains the figures.
 *
 * Soak (--soak S, to an echo server): --conns N slots (default 32), each
 * running one connection after another for S seconds. Each connection's
 * size and fate come from its serial number: half are RPC-sized (0-4 KiB),
 * the rest up to 4 MiB, and one in 25 of those over 64 KiB is aborted (RST)
 * once half its echo is back. Every echo is checked byte for byte. A
 * connection running for more than STUCK_NS is a failure (stuck). After S
 * seconds no new connection starts; once all have ended and TIME-WAIT has
 * passed, no socket may remain and Zbuf in-use must be back at its baseline
 * (the least seen over 200 ms before the first connection).
 * A line every 10 s shows the progress and Zbuf in-use.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loop/env.h"
#include "loop/options.h"
#include "mem/zbuf.h"
#include "port/port.h"
#include "tcp/tcp_stack.h"

#define CHUNK 65536

enum mode { MODE_NONE, MODE_GET, MODE_PUT, MODE_SEND, MODE_RECV, MODE_ECHO };

struct client {
	enum mode mode;
	const char *path, *put_file, *send_file, *output;
	uint64_t gen_bytes; /* --bytes: a generated stream */
	int in_fd, out_fd;
	uint64_t to_send, sent, received, body_len, body_seen;
	bool header_done, have_len, request_sent, done, failed, peer_eof;
	char hdr[8192];
	size_t hdr_len;
	int status;
	uint64_t rng;
	crypto_hash_sha256_state sha_out, sha_in;
	bool no_digest; /* --no-digest: the SHA-256 costs more CPU than the stack */
	uint64_t t_start, t_end;
	unsigned mss;	    /* send MSS once connected */
	char response[512]; /* PUT: the server's answer body */
	size_t response_len;
	struct tcp_sock *sock;
	struct lunar_env *env;
	char errmsg[256];
};

static void fail(struct client *c, const char *fmt, const char *arg)
{
	if (!c->failed)
		snprintf(c->errmsg, sizeof(c->errmsg), fmt, arg);
	c->failed = true;
	c->done = true;
}

/* Fill @buf with the next @n bytes of the generated stream (xorshift64). */
static void gen_fill(struct client *c, uint8_t *buf, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t x = c->rng;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		c->rng = x;
		memcpy(buf + i, &x, n - i < 8 ? n - i : 8);
	}
}

/* Push body bytes while the send buffer has room (zero copy from our buffers). */
static void pump(struct client *c)
{
	while (c->sent < c->to_send && tcp_sock_send_space(c->sock) > 0) {
		uint32_t room = tcp_sock_send_space(c->sock);
		uint64_t left = c->to_send - c->sent;
		uint32_t n = (uint32_t)(left < CHUNK ? left : CHUNK);
		uint8_t *buf;
		ssize_t got;
		int rc;

		if (n > room)
			n = room;
		buf = zbuf_alloc(n);
		if (!buf)
			return; /* the pool refills as ACKs arrive */
		if (c->in_fd >= 0) {
			got = pread(c->in_fd, buf, n, (off_t)c->sent);
			if (got <= 0) {
				zbuf_unref(buf);
				fail(c, "read error on %s",
				     c->put_file ? c->put_file : c->send_file);
				return;
			}
			n = (uint32_t)got;
		} else {
			gen_fill(c, buf, n);
		}
		rc = tcp_sock_send_zc(c->sock, buf, n);
		if (rc > 0) {
			if (!c->no_digest)
				crypto_hash_sha256_update(&c->sha_out, buf, (unsigned long long)rc);
			c->sent += (uint64_t)rc;
		}
		zbuf_unref(buf);
		if (rc <= 0)
			return;
		if ((uint32_t)rc < n && c->in_fd < 0) {
			fail(c, "%s", "send buffer accepted a partial generated chunk");
			return;
		}
	}
	if (c->sent == c->to_send && (c->mode == MODE_SEND || c->mode == MODE_ECHO) &&
	    !c->request_sent) {
		tcp_sock_shutdown(c->sock); /* FIN after the data; we still hear the peer's */
		c->request_sent = true;
	}
}

static void body_bytes(struct client *c, const uint8_t *p, size_t n)
{
	if (c->mode == MODE_PUT) {
		size_t room = sizeof(c->response) - 1 - c->response_len;

		memcpy(c->response + c->response_len, p, n < room ? n : room);
		c->response_len += n < room ? n : room;
	}
	if (!c->no_digest)
		crypto_hash_sha256_update(&c->sha_in, p, n);
	if (c->out_fd >= 0 && write(c->out_fd, p, n) != (ssize_t)n)
		fail(c, "write error on %s", c->output);
	c->body_seen += n;
}

/* HTTP response header: status line and Content-Length. */
static size_t parse_header(struct client *c)
{
	char *end, *cl;

	c->hdr[c->hdr_len] = '\0';
	end = strstr(c->hdr, "\r\n\r\n");
	if (!end) {
		if (c->hdr_len == sizeof(c->hdr) - 1)
			fail(c, "%s", "response header larger than 8 KiB");
		return 0;
	}
	if (sscanf(c->hdr, "HTTP/1.%*d %d", &c->status) != 1)
		fail(c, "%s", "not an HTTP/1.x response");
	cl = strcasestr(c->hdr, "\r\ncontent-length:");
	if (cl && cl < end) {
		c->body_len = strtoull(cl + 17, NULL, 10);
		c->have_len = true;
	}
	c->header_done = true;
	return (size_t)(end + 4 - c->hdr);
}

static void consume(struct client *c, const uint8_t *p, size_t n)
{
	c->received += n;
	if (c->mode == MODE_RECV || c->mode == MODE_ECHO) {
		body_bytes(c, p, n);
		return;
	}
	if (!c->header_done) {
		size_t take =
		    n < sizeof(c->hdr) - 1 - c->hdr_len ? n : sizeof(c->hdr) - 1 - c->hdr_len;
		size_t hlen, before = c->hdr_len;

		memcpy(c->hdr + c->hdr_len, p, take);
		c->hdr_len += take;
		hlen = parse_header(c);
		if (!c->header_done)
			return;
		/* What followed the header in this chunk is body. */
		p += hlen - before;
		n -= hlen - before;
	}
	body_bytes(c, p, n);
	if (c->have_len && c->body_seen >= c->body_len) {
		c->done = true;
		c->t_end = lunar_env_now_ns(c->env);
	}
}

static void send_request(struct client *c)
{
	char req[1024];
	int n;

	if (c->mode == MODE_GET)
		n = snprintf(req, sizeof(req),
			     "GET %s HTTP/1.1\r\nHost: lunar\r\nConnection: close\r\n\r\n",
			     c->path);
	else
		n = snprintf(req, sizeof(req),
			     "PUT %s HTTP/1.1\r\nHost: lunar\r\nContent-Length: %" PRIu64
			     "\r\nConnection: close\r\n\r\n",
			     c->path, c->to_send);
	if (tcp_sock_send(c->sock, req, (size_t)n) != n)
		fail(c, "%s", "could not queue the request");
	c->request_sent = true;
}

static void on_event(struct tcp_sock *s, uint32_t ev, void *ctx)
{
	struct client *c = ctx;

	if (ev & (TCP_EV_RESET | TCP_EV_TIMEOUT)) {
		fail(c, "connection %s",
		     ev & TCP_EV_RESET ? "reset (or refused) by the peer"
				       : "timed out: the peer did not answer");
		return;
	}
	if (ev & TCP_EV_CONNECTED) {
		c->mss = tcp_sock_conn(s)->snd_mss;
		c->t_start = lunar_env_now_ns(c->env);
		if (c->mode == MODE_GET || c->mode == MODE_PUT)
			send_request(c);
	}
	if ((ev & (TCP_EV_CONNECTED | TCP_EV_WRITABLE)) && c->sock)
		pump(c);
	if (ev & TCP_EV_READABLE) {
		struct tcp_slice sl[64];
		unsigned n;

		while ((n = tcp_sock_read_zc(s, sl, 64)) > 0) {
			for (unsigned i = 0; i < n; i++) {
				consume(c, sl[i].data, sl[i].len);
				tcp_sock_zc_done(s, sl[i].data, sl[i].len);
			}
		}
	}
	if (ev & TCP_EV_EOF) {
		c->peer_eof = true;
		/* Raw send: the peer closes once it has read everything we sent. */
		if (c->mode == MODE_RECV || c->mode == MODE_SEND || c->mode == MODE_ECHO ||
		    !c->have_len) {
			c->done = true;
			c->t_end = lunar_env_now_ns(c->env);
		}
		if ((c->mode == MODE_SEND || c->mode == MODE_ECHO) && c->sent < c->to_send)
			fail(c, "%s", "the peer closed before everything was sent");
	}
	if ((ev & TCP_EV_CLOSED) && !c->done)
		fail(c, "%s", "connection closed before the transfer completed");
}

/* ---- many connections: --conns N with --echo B or --bytes B ---- */

#define HANDSHAKES_MAX	   256		/* connects in flight at once */
#define RAMP_DEFAULT	   32		/* connections given their first bytes per loop iteration */
#define SETTLE_NS	   20000000ull	/* idle time before the per-connection memory is measured */
#define LINGER_NS	   300000000ull /* time given to the last ACKs at exit */
#define SAMPLE_NS	   20000000ull	/* how often the peak memory is sampled */
#define SOAK_SLOTS_DEFAULT 32
#define SOAK_REPORT_NS	   10000000000ull  /* a progress line this often */
#define STUCK_NS	   120000000000ull /* a soak connection running longer is stuck */
#define SOAK_DRAIN_NS	   180000000000ull /* after the soak: time for the last ones to end */
#define SOAK_BASELINE_NS   200000000ull	   /* polled before the soak to take the Zbuf baseline */

enum mc_phase { MC_IDLE, MC_CONNECTING, MC_OPEN, MC_SENDING, MC_DONE, MC_FAILED, MC_ABORTED };

/* One connection. Deliberately small: its data is regenerated from its serial number. */
struct mconn {
	struct tcp_sock *s;
	uint64_t sent, rcvd;
	uint64_t bytes;	   /* each way */
	uint64_t abort_at; /* --soak: abort (RST) once this much echo is back; 0: never */
	uint64_t t0;	   /* --soak: when it started */
	uint32_t serial;   /* which stream it sends (the slot index without --soak) */
	uint32_t wq_next;  /* work queue link: index + 1, 0 = end */
	uint8_t phase;
	bool queued, fin_sent, eof;
};

struct many {
	struct lunar_env *env;
	struct mconn *c;
	uint32_t n, next; /* connections; the next one to open */
	uint32_t raddr;
	uint16_t rport;
	uint64_t bytes; /* per connection, each way */
	bool echo, go;
	uint32_t ramp; /* --ramp */
	uint32_t connecting, established, open, peak, completed, failed;
	bool soak; /* --soak: slots restart connections until soak_end */
	uint64_t soak_end;
	uint32_t serial_next;		  /* --soak: the next connection's serial number */
	uint64_t started, aborted, stuck; /* --soak: connections over the whole run */
	uint32_t wq_head, wq_tail;	  /* connections waiting to (re)start sending: index + 1 */
	uint64_t bytes_out, bytes_in;
	uint64_t t_start, t_connected, t_go, t_end; /* t_go: after SETTLE_NS */
	bool mem_measured;
	double heap_per_conn, zbuf_per_conn;	     /* established and idle */
	uint64_t heap0, zbuf0, heap_peak, zbuf_peak; /* baseline; highest seen while running */
	char err[512];
};

static struct many M;

/* splitmix64's finaliser: word @w of a stream is mix64(stream base + w). */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Bytes [off, off + n) of connection @idx's stream (random access: no state kept). */
static void stream_fill(uint32_t idx, uint64_t off, uint8_t *buf, size_t n)
{
	uint64_t base = (uint64_t)idx << 40;

	while (n) {
		uint64_t w = mix64(base + (off >> 3));
		size_t skip = off & 7, take = 8 - skip < n ? 8 - skip : n;
		uint8_t b[8];

		memcpy(b, &w, sizeof(b));
		memcpy(buf, b + skip, take);
		buf += take;
		off += take;
		n -= take;
	}
}

/* x ^= x >> s undone (s > 0). */
static uint64_t unxorshift(uint64_t y, unsigned s)
{
	uint64_t x = y;

	for (unsigned k = s; k < 64; k += s)
		x = y ^ (x >> s);
	return x;
}

/* The inverse of an odd 64-bit multiplier (Newton's iteration, mod 2^64). */
static uint64_t mul_inverse(uint64_t c)
{
	uint64_t inv = c;

	for (int i = 0; i < 5; i++)
		inv *= 2 - c * inv;
	return inv;
}

/*
 * Which stream byte is this? If the 8 bytes at @p8 are an aligned stream
 * word, undoing mix64 (a bijection) names the connection and offset it was
 * made for; if not (corrupted), *idx and *off are noise the caller judges.
 */
static void stream_whence(const uint8_t *p8, uint32_t *idx, uint64_t *off)
{
	uint64_t x;

	memcpy(&x, p8, sizeof(x));
	x = unxorshift(x, 31) * mul_inverse(0x94d049bb133111ebull);
	x = unxorshift(x, 27) * mul_inverse(0xbf58476d1ce4e5b9ull);
	x = unxorshift(x, 30) - 0x9e3779b97f4a7c15ull;
	*idx = (uint32_t)(x >> 40);
	*off = (x & ((1ull << 40) - 1)) << 3;
}

/* Does [p, p + n) equal bytes [off, off + n) of the stream? *bad: first offset that differs. */
static bool stream_check(uint32_t idx, uint64_t off, const uint8_t *p, size_t n, uint64_t *bad)
{
	uint8_t want[2048];

	while (n) {
		size_t k = n < sizeof(want) ? n : sizeof(want);

		stream_fill(idx, off, want, k);
		if (memcmp(p, want, k)) {
			size_t j = 0;

			while (p[j] == want[j])
				j++;
			*bad = off + j;
			return false;
		}
		p += k;
		off += k;
		n -= k;
	}
	return true;
}

static uint32_t mc_idx(const struct mconn *c)
{
	return (uint32_t)(c - M.c);
}

static void wq_push(struct mconn *c)
{
	uint32_t i = mc_idx(c) + 1;

	if (c->queued)
		return;
	c->queued = true;
	c->wq_next = 0;
	if (M.wq_tail)
		M.c[M.wq_tail - 1].wq_next = i;
	else
		M.wq_head = i;
	M.wq_tail = i;
}

static struct mconn *wq_pop(void)
{
	struct mconn *c;

	if (!M.wq_head)
		return NULL;
	c = &M.c[M.wq_head - 1];
	M.wq_head = c->wq_next;
	if (!M.wq_head)
		M.wq_tail = 0;
	c->queued = false;
	return c;
}

/* The connection leaves the running set: counters, and the last one stops the clock. */
static void mc_leave(struct mconn *c, enum mc_phase to)
{
	if (c->phase == MC_CONNECTING)
		M.connecting--;
	else if (c->phase == MC_OPEN || c->phase == MC_SENDING)
		M.open--;
	c->phase = (uint8_t)to;
	if (to == MC_DONE)
		M.completed++;
	else if (to == MC_ABORTED)
		M.aborted++;
	else
		M.failed++;
	if (!M.soak && M.completed + M.failed == M.n)
		M.t_end = lunar_env_now_ns(M.env);
}

__attribute__((format(printf, 2, 3))) static void mc_fail(struct mconn *c, const char *fmt, ...)
{
	va_list ap;

	if (c->phase >= MC_DONE)
		return;
	if (!M.err[0]) {
		int k = snprintf(M.err, sizeof(M.err), "connection %u: ", c->serial);

		va_start(ap, fmt);
		vsnprintf(M.err + k, sizeof(M.err) - (size_t)k, fmt, ap);
		va_end(ap);
	}
	if (c->s) {
		tcp_sock_abort(c->s); /* RST if still synchronized; the socket is freed */
		c->s = NULL;
	}
	mc_leave(c, MC_FAILED);
}

/* The largest Zbuf buffer up to *n bytes; *n shrinks to a smaller class when it must. */
static uint8_t *mc_alloc(uint32_t *n)
{
	uint8_t *buf = zbuf_alloc(*n);

	for (int cls = ZBUF_CLASS_COUNT - 1; !buf && cls >= 0; cls--) {
		uint32_t size = (uint32_t)zbuf_class_size((enum zbuf_class)cls);

		if (size < *n && (buf = zbuf_alloc_class((enum zbuf_class)cls)))
			*n = size;
	}
	return buf;
}

/* Queue stream bytes while the send buffer has room; FIN after the last. */
static void mc_pump(struct mconn *c)
{
	while (c->sent < c->bytes) {
		uint32_t room = tcp_sock_send_space(c->s);
		uint64_t left = c->bytes - c->sent;
		uint32_t n = left < CHUNK ? (uint32_t)left : CHUNK;
		uint8_t *buf;
		int rc;

		if (!room)
			return; /* TCP_EV_WRITABLE resumes */
		if (n > room)
			n = room;
		buf = mc_alloc(&n);
		if (!buf) {
			/* Zbuf memory comes back as ACKs arrive: retried from the loop */
			wq_push(c);
			return;
		}
		stream_fill(c->serial, c->sent, buf, n);
		rc = tcp_sock_send_zc(c->s, buf, n);
		zbuf_unref(buf); /* the send buffer holds its own reference */
		if (rc < 0) {
			mc_fail(c, "send: %s", strerror(-rc));
			return;
		}
		if (rc == 0)
			return;
		c->sent += (uint64_t)rc;
		M.bytes_out += (uint64_t)rc;
	}
	if (!c->fin_sent) {
		c->fin_sent = true;
		tcp_sock_shutdown(c->s); /* FIN after the data; the echo still comes back */
	}
}

/*
 * Fail @c with what a mismatch looks like: how much of the slice differs,
 * and whose data arrived instead (another offset of the same stream, another
 * connection's, or bytes no stream ever had: corruption).
 */
static void echo_mismatch(struct mconn *c, const struct tcp_slice *sl, uint64_t bad)
{
	uint64_t at = bad - c->rcvd, end = c->rcvd + sl->len, from = 0;
	uint32_t differ = 0, who = 0, conns = M.serial_next > M.n ? M.serial_next : M.n;
	uint8_t want, got = sl->data[at], first;
	char whence[112] = "no stream's data from there (corrupted)";

	stream_fill(c->serial, bad, &first, 1);
	for (uint32_t j = 0; j < sl->len; j++) {
		stream_fill(c->serial, c->rcvd + j, &want, 1);
		differ += sl->data[j] != want;
	}
	if (bad + 8 > end)
		snprintf(whence, sizeof(whence), "too few bytes left in the slice to tell whose");
	/*
	 * A stream word can have landed at any byte offset: try all 8. Made for
	 * a connection that exists, inside 4 GiB: not a chance match.
	 */
	for (uint64_t at_k = bad; at_k < bad + 8 && at_k + 8 <= end; at_k++) {
		stream_whence(sl->data + (at_k - c->rcvd), &who, &from);
		if (who >= conns || from >> 32)
			continue;
		if (who == c->serial && from == at_k)
			snprintf(whence, sizeof(whence),
				 "the right bytes again from byte %" PRIu64 " (a short corruption)",
				 at_k);
		else
			snprintf(whence, sizeof(whence),
				 "byte %" PRIu64 " holds connection %u's byte %" PRIu64, at_k, who,
				 from);
		break;
	}
	mc_fail(c,
		"echo differs from what was sent at byte %" PRIu64 " (slice of %u bytes at %" PRIu64
		", mismatch %" PRIu64
		" bytes in, %u bytes differ, the first 0x%02x for 0x%02x (xor 0x%02x)"
		"; %s)",
		bad, sl->len, c->rcvd, at, differ, got, first, got ^ first, whence);
}

static void mc_read(struct mconn *c)
{
	struct tcp_slice sl[32];
	unsigned n;

	while (c->s && (n = tcp_sock_read_zc(c->s, sl, 32)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			uint64_t bad;

			if (M.echo && c->s) {
				if (c->rcvd + sl[i].len > c->sent)
					mc_fail(
					    c, "echo longer than what was sent (%" PRIu64 " bytes)",
					    c->rcvd + sl[i].len);
				else if (!stream_check(c->serial, c->rcvd, sl[i].data, sl[i].len,
						       &bad))
					echo_mismatch(c, &sl[i], bad);
			}
			c->rcvd += sl[i].len;
			M.bytes_in += sl[i].len;
			tcp_sock_zc_done(c->s, sl[i].data, sl[i].len); /* c->s NULL once failed */
		}
		if (c->s && c->abort_at && c->rcvd >= c->abort_at) {
			tcp_sock_abort(c->s); /* on purpose: the echo server is still sending */
			c->s = NULL;
			mc_leave(c, MC_ABORTED);
		}
	}
}

/* The peer closed: the transfer is complete if everything went and (echo) came back. */
static void mc_eof(struct mconn *c)
{
	if (c->phase != MC_SENDING || c->sent < c->bytes || !c->fin_sent) {
		mc_fail(c, "the peer closed after %" PRIu64 " of %" PRIu64 " bytes were sent",
			c->sent, c->bytes);
		return;
	}
	if (M.echo && c->rcvd != c->sent) {
		mc_fail(c, "the echo is short: %" PRIu64 " of %" PRIu64 " bytes", c->rcvd, c->sent);
		return;
	}
	tcp_sock_close(c->s); /* we sent our FIN already: TIME-WAIT follows */
	c->s = NULL;
	mc_leave(c, MC_DONE);
}

static void mc_event(struct tcp_sock *s, uint32_t ev, void *ctx)
{
	struct mconn *c = ctx;

	(void)s;
	if (c->phase >= MC_DONE)
		return;
	if (ev & (TCP_EV_RESET | TCP_EV_TIMEOUT)) {
		mc_fail(c, "%s",
			ev & TCP_EV_RESET ? "reset (or refused) by the peer"
					  : "timed out: the peer did not answer");
		return;
	}
	if ((ev & TCP_EV_CONNECTED) && c->phase == MC_CONNECTING) {
		c->phase = MC_OPEN;
		M.connecting--;
		M.established++;
		if (++M.open > M.peak)
			M.peak = M.open;
		if (M.soak) { /* no waiting for the others: send at once */
			c->phase = MC_SENDING;
			wq_push(c);
		}
	}
	if (ev & TCP_EV_READABLE)
		mc_read(c);
	if ((ev & TCP_EV_WRITABLE) && c->phase == MC_SENDING && !c->queued)
		mc_pump(c);
	if ((ev & TCP_EV_EOF) && c->phase < MC_DONE)
		mc_eof(c);
	else if ((ev & TCP_EV_CLOSED) && c->phase < MC_DONE)
		mc_fail(c, "%s", "connection closed before the transfer completed");
}

/* Open connections while fewer than HANDSHAKES_MAX are in flight. */
static void mc_open_more(void)
{
	/* The first handshake goes alone: it resolves the server's address (ARP). */
	uint32_t limit = M.established || M.failed ? HANDSHAKES_MAX : 1;

	while (M.next < M.n && M.connecting < limit) {
		struct mconn *c = &M.c[M.next++];
		int rc;

		c->phase = MC_CONNECTING;
		c->serial = mc_idx(c);
		c->bytes = M.bytes;
		M.connecting++;
		c->s = tcp_connect_to(M.env->tcp, M.raddr, M.rport, mc_event, c, &rc);
		if (!c->s)
			mc_fail(c, "cannot connect: %s", strerror(-rc));
	}
}

static uint64_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* Every handshake has ended: measure the idle connections, then let them all send. */
static void mc_go(void)
{
	uint64_t until;

	M.t_connected = lunar_env_now_ns(M.env);
	until = M.t_connected + SETTLE_NS;
	while (lunar_env_now_ns(M.env) < until && !lunar_stop_requested())
		lunar_env_poll(M.env);
	if (M.open) {
		M.heap_per_conn = ((double)heap_bytes() - (double)M.heap0) / M.open;
		M.zbuf_per_conn = ((double)zbuf_in_use() - (double)M.zbuf0) / M.open;
		M.mem_measured = true;
	}
	M.go = true;
	M.t_go = lunar_env_now_ns(M.env);
	for (uint32_t i = 0; i < M.n; i++)
		if (M.c[i].phase == MC_OPEN) {
			M.c[i].phase = MC_SENDING;
			wq_push(&M.c[i]);
		}
}

/* One running connection, as its TCP state has it. */
static void mc_print_conn(FILE *f, const struct mconn *c)
{
	const struct tcp_conn *tc = tcp_sock_conn(c->s);

	fprintf(f,
		"conns: stuck %u: %s bytes %" PRIu64 " sent %" PRIu64 " received %" PRIu64
		" fin_sent %d eof %d queued %d snd_una %u snd_nxt %u snd_wnd %u unsent+unacked %u"
		" rcv_queued %u\n",
		c->serial, tcp_state_name(tc->state), c->bytes, c->sent, c->rcvd, c->fin_sent,
		c->eof, c->queued, tc->snd_una - tc->iss, tc->snd_nxt - tc->iss, tc->snd_wnd,
		tc->snd.bytes, tc->rcvq_bytes);
}

/* Where the connections still running are (after a timeout or an interrupt). */
static void mc_report_stuck(FILE *f)
{
	unsigned per[MC_ABORTED + 1] = {0}, shown = 0;

	for (uint32_t i = 0; i < M.n; i++)
		per[M.c[i].phase]++;
	fprintf(f, "conns: not started %u connecting %u open %u sending %u done %u failed %u\n",
		per[MC_IDLE], per[MC_CONNECTING], per[MC_OPEN], per[MC_SENDING], per[MC_DONE],
		per[MC_FAILED]);
	for (uint32_t i = 0; i < M.n && shown < 5; i++)
		if (M.c[i].s) {
			mc_print_conn(f, &M.c[i]);
			shown++;
		}
}

/* The slots, and the link up (a memif peer: up to 10 s). @return 0, or -1 (said why). */
static int mc_begin(struct lunar_env *env, uint32_t raddr, uint16_t rport)
{
	uint64_t t0 = lunar_env_now_ns(env);

	M.env = env;
	M.raddr = raddr;
	M.rport = rport;
	M.c = calloc(M.n, sizeof(*M.c));
	if (!M.c) {
		fprintf(stderr, "lunar-get: out of memory for %u connections\n", M.n);
		return -1;
	}
	while (!port_link_up(env->port) && !lunar_stop_requested() &&
	       lunar_env_now_ns(env) < t0 + 10000000000ull)
		lunar_env_poll(env);
	return 0;
}

/* Connections waiting to start sending (or for Zbuf memory), --ramp per loop iteration. */
static void mc_run_queue(void)
{
	for (unsigned k = 0; k < M.ramp; k++) {
		struct mconn *c = wq_pop();

		if (!c)
			break;
		if (c->phase == MC_SENDING)
			mc_pump(c);
	}
}

static void mc_dump_counters(struct lunar_env *env)
{
	netif_dump(&env->nif, stdout);
	port_dump(env->port, stdout);
	tcp_stack_dump(env->tcp, stdout);
}

/* --conns: returns the exit status. */
static int run_conns(struct lunar_env *env, uint32_t raddr, uint16_t rport, double timeout_s,
		     bool counters)
{
	uint64_t deadline, next_sample = 0;
	int status;

	if (mc_begin(env, raddr, rport))
		return 1;
	deadline = lunar_env_now_ns(env) + (uint64_t)(timeout_s * 1e9);
	/* The baseline: everything but the connections exists. */
	M.heap0 = M.heap_peak = heap_bytes();
	M.zbuf0 = M.zbuf_peak = zbuf_in_use();
	M.t_start = lunar_env_now_ns(env);
	while (M.completed + M.failed < M.n && !lunar_stop_requested()) {
		if (!M.go)
			mc_open_more();
		lunar_env_poll(env);
		if (!M.go && M.next == M.n && !M.connecting)
			mc_go();
		mc_run_queue();
		if (lunar_env_now_ns(env) >= next_sample) {
			uint64_t h = heap_bytes(), z = zbuf_in_use();

			M.heap_peak = h > M.heap_peak ? h : M.heap_peak;
			M.zbuf_peak = z > M.zbuf_peak ? z : M.zbuf_peak;
			next_sample = lunar_env_now_ns(env) + SAMPLE_NS;
		}
		if (lunar_env_now_ns(env) > deadline) {
			fprintf(stderr, "lunar-get: timed out (--timeout)\n");
			break;
		}
	}
	if (M.completed + M.failed < M.n) {
		mc_report_stuck(stdout);
		for (uint32_t i = 0; i < M.n; i++) {
			struct mconn *c = &M.c[i];

			if (c->phase == MC_IDLE)
				mc_leave(c, MC_FAILED);
			else
				mc_fail(c, "%s",
					lunar_stop_requested() ? "interrupted"
							       : "timed out (--timeout)");
		}
	}
	/* Our last ACKs go out (and are repeated if a FIN comes again) before the port closes. */
	for (uint64_t until = lunar_env_now_ns(env) + LINGER_NS; lunar_env_now_ns(env) < until;)
		lunar_env_poll(env);
	{
		double secs = (M.t_end > M.t_start ? M.t_end - M.t_start : 0) / 1e9;
		double conn_secs =
		    (M.t_connected > M.t_start ? M.t_connected - M.t_start : 0) / 1e9;
		double xfer_secs = M.t_go && M.t_end > M.t_go ? (M.t_end - M.t_go) / 1e9 : 0;

		printf("conns: requested %u opened %u completed %u failed %u\n", M.n, M.established,
		       M.completed, M.failed);
		printf("conns: peak_concurrent %u\n", M.peak);
		printf("conns: bytes_out %" PRIu64 " bytes_in %" PRIu64 " (%s)\n", M.bytes_out,
		       M.bytes_in, M.echo ? "echo compared with what was sent" : "send only");
		printf("conns: seconds %.3f (connect %.3f, idle %.3f, transfer %.3f) "
		       "throughput %.3f Gbit/s\n",
		       secs, conn_secs, M.t_go ? SETTLE_NS / 1e9 : 0.0, xfer_secs,
		       xfer_secs > 0 ? (M.bytes_out + M.bytes_in) * 8 / xfer_secs / 1e9 : 0.0);
		if (M.mem_measured)
			printf("memory per connection: %.0f bytes (heap) + %.2f Zbuf objects "
			       "(established, idle)\n",
			       M.heap_per_conn, M.zbuf_per_conn);
		printf("memory at peak: heap +%" PRIu64
		       " bytes (%.0f per connection), Zbuf +%" PRIu64
		       " objects (sampled every %.0f ms)\n",
		       M.heap_peak - M.heap0, (double)(M.heap_peak - M.heap0) / M.n,
		       M.zbuf_peak - M.zbuf0, SAMPLE_NS / 1e6);
	}
	if (counters)
		mc_dump_counters(env);
	status = M.completed == M.n && M.peak == M.n ? 0 : 1;
	if (M.err[0])
		fprintf(stderr, "lunar-get: first error: %s\n", M.err);
	else if (status)
		fprintf(stderr, "lunar-get: only %u of %u connections were open at once\n", M.peak,
			M.n);
	free(M.c);
	M.c = NULL;
	return status;
}

/* ---- --soak S: connections that come and go ---- */

/* Connection @serial's size and whether it is aborted half way (see the top). */
static void soak_plan(uint32_t serial, uint64_t *bytes, uint64_t *abort_at)
{
	uint64_t r = mix64(0x50a4ull << 32 | serial);
	unsigned kind = (unsigned)(r % 100);

	r >>= 8;
	if (kind < 50)
		*bytes = r % 4097; /* an RPC, or nothing at all */
	else if (kind < 90)
		*bytes = 4096 + r % (256 << 10);
	else
		*bytes = (256 << 10) + r % (4 << 20);
	r >>= 24;
	*abort_at = *bytes >= (64 << 10) && r % 25 == 0 ? *bytes / 2 : 0;
}

/* Start the next connection in slot @c (idle, or its last connection over). */
static void soak_start(struct mconn *c, uint64_t now)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->serial = M.serial_next++;
	soak_plan(c->serial, &c->bytes, &c->abort_at);
	c->t0 = now;
	c->phase = MC_CONNECTING;
	M.connecting++;
	M.started++;
	c->s = tcp_connect_to(M.env->tcp, M.raddr, M.rport, mc_event, c, &rc);
	if (!c->s)
		mc_fail(c, "cannot connect: %s", strerror(-rc));
}

/* Slots whose connection ended start another, while the soak lasts. */
static void soak_refill(uint64_t now)
{
	uint32_t limit = M.established || M.failed ? HANDSHAKES_MAX : 1; /* the first: ARP */

	for (uint32_t i = 0; i < M.n && M.connecting < limit; i++) {
		struct mconn *c = &M.c[i];

		/* A slot still on the work queue is linked there: it waits to be popped. */
		if ((c->phase == MC_IDLE || c->phase >= MC_DONE) && !c->queued)
			soak_start(c, now);
	}
}

/* Connections running longer than STUCK_NS are failures. */
static void soak_check_stuck(uint64_t now)
{
	for (uint32_t i = 0; i < M.n; i++) {
		struct mconn *c = &M.c[i];

		if (c->s && c->phase < MC_DONE && now - c->t0 > STUCK_NS) {
			mc_print_conn(stdout, c);
			M.stuck++;
			mc_fail(c, "stuck: still running after %.0f s", STUCK_NS / 1e9);
		}
	}
}

/* Connections started and not yet ended (mc_event() and mc_leave() keep the counts). */
static uint32_t soak_running(void)
{
	return M.connecting + M.open;
}

static void soak_line(const char *what, uint64_t now)
{
	struct tcp_limits_usage u;

	tcp_stack_usage(M.env->tcp, &u);
	printf("soak: %s t %.0f s started %" PRIu64 " completed %u aborted %" PRIu64
	       " failed %u running %u sockets %u time_wait %u tcp_mem %" PRIu64
	       " zbuf_in_use %" PRIu64 " (baseline %" PRIu64 ")\n",
	       what, (now - M.t_start) / 1e9, M.started, M.completed, M.aborted, M.failed,
	       soak_running(), tcp_stack_sockets(M.env->tcp), u.time_wait, u.mem_bytes,
	       (uint64_t)zbuf_in_use(), M.zbuf0);
}

/* --soak: returns the exit status. */
static int run_soak(struct lunar_env *env, uint32_t raddr, uint16_t rport, double soak_s,
		    uint64_t tw_ns, bool counters)
{
	uint64_t now, next_report, drain_end, settle_end;
	int status;

	M.soak = true;
	M.echo = true;
	if (mc_begin(env, raddr, rport))
		return 1;
	/*
	 * The baseline: everything but the connections exists. The least seen
	 * over SOAK_BASELINE_NS of polling, so a frame the port or the fault
	 * wrapper still holds for a moment (an ARP exchange, a delayed packet)
	 * is not counted in it.
	 */
	M.zbuf0 = zbuf_in_use();
	for (uint64_t until = lunar_env_now_ns(env) + SOAK_BASELINE_NS;
	     lunar_env_now_ns(env) < until && !lunar_stop_requested();) {
		lunar_env_poll(env);
		if (zbuf_in_use() < M.zbuf0)
			M.zbuf0 = zbuf_in_use();
	}
	M.t_start = now = lunar_env_now_ns(env);
	M.soak_end = now + (uint64_t)(soak_s * 1e9);
	next_report = now + SOAK_REPORT_NS;
	/* The soak, then the connections still running end on their own. */
	drain_end = M.soak_end + SOAK_DRAIN_NS;
	while (!lunar_stop_requested() && (now = lunar_env_now_ns(env)) < drain_end) {
		if (now < M.soak_end)
			soak_refill(now);
		else if (!soak_running())
			break;
		lunar_env_poll(env);
		mc_run_queue();
		if (now >= next_report) {
			soak_check_stuck(now);
			soak_line("progress", now);
			next_report += SOAK_REPORT_NS;
		}
	}
	if (soak_running()) {
		mc_report_stuck(stdout);
		for (uint32_t i = 0; i < M.n; i++)
			if (M.c[i].phase > MC_IDLE && M.c[i].phase < MC_DONE)
				mc_fail(&M.c[i], "%s",
					lunar_stop_requested() ? "interrupted"
							       : "still running after the soak");
	}
	/* TIME-WAIT passes and the last ACKs go out: then nothing may be left. */
	settle_end = lunar_env_now_ns(env) + tw_ns + LINGER_NS;
	while ((now = lunar_env_now_ns(env)) < settle_end && !lunar_stop_requested() &&
	       (tcp_stack_sockets(env->tcp) || zbuf_in_use() > M.zbuf0))
		lunar_env_poll(env);
	soak_line("end", now);
	printf("soak: seconds %.1f connections %" PRIu64 " bytes_out %" PRIu64 " bytes_in %" PRIu64
	       " (every echo compared with what was sent) stuck %" PRIu64 "\n",
	       soak_s, M.started, M.bytes_out, M.bytes_in, M.stuck);
	if (counters)
		mc_dump_counters(env);
	status = M.failed || !M.completed ? 1 : 0;
	if (tcp_stack_sockets(env->tcp)) {
		fprintf(stderr, "lunar-get: %u sockets left after the soak\n",
			tcp_stack_sockets(env->tcp));
		status = 1;
	}
	if (zbuf_in_use() > M.zbuf0) {
		fprintf(stderr,
			"lunar-get: Zbuf in use %" PRIu64 " after the soak, baseline %" PRIu64 "\n",
			(uint64_t)zbuf_in_use(), M.zbuf0);
		status = 1;
	}
	if (M.err[0])
		fprintf(stderr, "lunar-get: first error: %s\n", M.err);
	free(M.c);
	M.c = NULL;
	return status;
}

static void usage(FILE *f)
{
	fputs(
	    "usage: lunar-get [options] --connect IP:PORT (--get /PATH | --put FILE | --send FILE "
	    "|\n"
	    "                 --bytes N | --recv)\n"
	    "  --connect IP:PORT   the server\n"
	    "  --get /PATH         HTTP GET; the body goes to --output FILE (else discarded)\n"
	    "  --put FILE          HTTP PUT of FILE to --path (default /<basename>)\n"
	    "  --send FILE         raw TCP: send FILE, then close\n"
	    "  --bytes N           raw TCP: send N generated bytes (suffixes K, M, G), then close\n"
	    "  --recv              raw TCP: read until the peer closes\n"
	    "  --echo N            raw TCP: send N generated bytes to an echo server, read them\n"
	    "                      back until it closes, and check they are the same\n"
	    "  --conns N           open N connections at once (with --echo B or --bytes B):\n"
	    "                      each moves B bytes once all N are established\n"
	    "  --ramp N            --conns: connections that start sending per loop iteration\n"
	    "                      (default 32)\n"
	    "  --soak S            S seconds of echo connections that come and go to an echo\n"
	    "                      server, --conns N at a time (default 32): sizes from 0 to\n"
	    "                      4 MiB, some aborted half way, every echo checked; at the end\n"
	    "                      no socket and no Zbuf object may be left\n"
	    "  --output FILE       where received data goes\n"
	    "  --timeout S         give up after S seconds (default 600)\n"
	    "  --counters          print the stack's counters at exit\n"
	    "  --no-digest         do not hash the data (SHA-256 of what was sent or received,\n"
	    "                      printed as sha256); for benchmarks, where the hash would\n"
	    "                      take most of the sender's CPU. Not with --echo (checked\n"
	    "                      by the hash), nor --conns and --soak (which hash nothing)\n",
	    f);
	lunar_options_usage(f);
}

enum {
	OPT_CONNECT = 1,
	OPT_GET,
	OPT_PUT,
	OPT_PATH,
	OPT_SEND,
	OPT_BYTES,
	OPT_RECV,
	OPT_OUTPUT,
	OPT_TIMEOUT,
	OPT_COUNTERS,
	OPT_ECHO,
	OPT_CONNS,
	OPT_RAMP,
	OPT_SOAK,
	OPT_NO_DIGEST
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    LUNAR_COMMON_LONGOPTS,
	    {"connect", required_argument, NULL, OPT_CONNECT},
	    {"get", required_argument, NULL, OPT_GET},
	    {"put", required_argument, NULL, OPT_PUT},
	    {"path", required_argument, NULL, OPT_PATH},
	    {"send", required_argument, NULL, OPT_SEND},
	    {"bytes", required_argument, NULL, OPT_BYTES},
	    {"recv", no_argument, NULL, OPT_RECV},
	    {"echo", required_argument, NULL, OPT_ECHO},
	    {"conns", required_argument, NULL, OPT_CONNS},
	    {"ramp", required_argument, NULL, OPT_RAMP},
	    {"soak", required_argument, NULL, OPT_SOAK},
	    {"output", required_argument, NULL, OPT_OUTPUT},
	    {"timeout", required_argument, NULL, OPT_TIMEOUT},
	    {"counters", no_argument, NULL, OPT_COUNTERS},
	    {"no-digest", no_argument, NULL, OPT_NO_DIGEST},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static struct client c = {.in_fd = -1, .out_fd = -1, .rng = 0x9e3779b97f4a7c15ull};
	struct lunar_options o;
	uint32_t raddr = 0;
	unsigned long rport = 0, conns = 0, ramp = RAMP_DEFAULT;
	unsigned modes = 0; /* --get, --put, --send, --bytes, --recv, --echo given */
	struct tcp_config cfg;
	double timeout_s = 600, soak_s = 0;
	bool counters = false;
	char err[512], hex[65];
	unsigned char digest[32];
	int opt, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	lunar_options_init(&o);
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		rc = lunar_options_apply(&o, opt, optarg, err, sizeof(err));
		if (rc == 0) {
			rc = 1;
			switch (opt) {
			case OPT_CONNECT: {
				char host[64], *colon;

				snprintf(host, sizeof(host), "%s", optarg);
				colon = strrchr(host, ':');
				if (!colon || (*colon = '\0', parse_ipv4(host, &raddr)) ||
				    parse_uint_opt("connect port", colon + 1, 1, 65535, &rport, err,
						   sizeof(err))) {
					snprintf(
					    err, sizeof(err),
					    "--connect %s: expected IP:PORT, e.g. 10.77.0.1:8080",
					    optarg);
					rc = -EINVAL;
				}
				break;
			}
			case OPT_GET:
				modes++;
				c.mode = MODE_GET;
				c.path = optarg;
				break;
			case OPT_PUT:
				modes++;
				c.mode = MODE_PUT;
				c.put_file = optarg;
				break;
			case OPT_PATH:
				c.path = optarg;
				break;
			case OPT_SEND:
				modes++;
				c.mode = MODE_SEND;
				c.send_file = optarg;
				break;
			case OPT_BYTES:
				modes++;
				c.mode = MODE_SEND;
				if (parse_size(optarg, &c.gen_bytes)) {
					snprintf(
					    err, sizeof(err),
					    "--bytes %s: expected a size like 1048576, 64K, 1G",
					    optarg);
					rc = -EINVAL;
				}
				break;
			case OPT_RECV:
				modes++;
				c.mode = MODE_RECV;
				break;
			case OPT_ECHO:
				modes++;
				c.mode = MODE_ECHO;
				if (parse_size(optarg, &c.gen_bytes)) {
					snprintf(err, sizeof(err),
						 "--echo %s: expected a size like 1048576, 64K, 1G",
						 optarg);
					rc = -EINVAL;
				}
				break;
			case OPT_CONNS:
				rc = parse_uint_opt("conns", optarg, 1, 65535, &conns, err,
						    sizeof(err));
				rc = rc ? rc : 1;
				break;
			case OPT_RAMP:
				rc = parse_uint_opt("ramp", optarg, 1, 65535, &ramp, err,
						    sizeof(err));
				rc = rc ? rc : 1;
				break;
			case OPT_SOAK:
				rc = parse_seconds_opt("soak", optarg, 1e6, &soak_s, err,
						       sizeof(err));
				if (!rc && soak_s <= 0) {
					snprintf(err, sizeof(err),
						 "--soak %s: give a duration above 0 seconds",
						 optarg);
					rc = -EINVAL;
				}
				rc = rc ? rc : 1;
				break;
			case OPT_OUTPUT:
				c.output = optarg;
				break;
			case OPT_TIMEOUT:
				rc = parse_seconds_opt("timeout", optarg, 1e6, &timeout_s, err,
						       sizeof(err));
				rc = rc ? rc : 1;
				break;
			case OPT_COUNTERS:
				counters = true;
				break;
			case OPT_NO_DIGEST:
				c.no_digest = true;
				break;
			case 'h':
				usage(stdout);
				return 0;
			default:
				usage(stderr);
				return 2;
			}
		}
		if (rc < 0) {
			fprintf(stderr, "lunar-get: %s\n", err);
			return 2;
		}
	}
	if (soak_s > 0 && c.mode != MODE_NONE) {
		fprintf(stderr, "lunar-get: --soak runs its own mix of echoes; drop --get, --put, "
				"--send, --bytes, --recv and --echo\n");
		return 2;
	}
	if (c.no_digest && (soak_s > 0 || conns)) {
		fprintf(stderr,
			"lunar-get: --no-digest: --conns and --soak hash nothing (they check "
			"every byte against the generated stream); drop --no-digest\n");
		return 2;
	}
	if (c.no_digest && c.mode == MODE_ECHO) {
		fprintf(stderr, "lunar-get: --no-digest: --echo checks the echo by its SHA-256; "
				"drop --no-digest\n");
		return 2;
	}
	if (soak_s > 0 && !conns)
		conns = SOAK_SLOTS_DEFAULT;
	if (modes > 1) {
		fprintf(stderr,
			"lunar-get: give only one of --get, --put, --send, --bytes, --recv, "
			"--echo (%u given)\n",
			modes);
		return 2;
	}
	if (lunar_options_one_worker(&o, err, sizeof(err))) {
		fprintf(stderr, "lunar-get: %s\n", err);
		return 2;
	}
	if (optind != argc || !raddr || (c.mode == MODE_NONE && soak_s <= 0)) {
		fprintf(stderr,
			"lunar-get: give --connect IP:PORT and one of --get, --put, --send, "
			"--bytes, --recv, --echo (see --help)\n");
		return 2;
	}
	if (conns && soak_s <= 0 && (c.send_file || (c.mode != MODE_SEND && c.mode != MODE_ECHO))) {
		fprintf(stderr, "lunar-get: --conns goes with --echo BYTES or --bytes BYTES\n");
		return 2;
	}
	if (conns > (unsigned long)o.reserved_hi - o.reserved_lo + 1) {
		fprintf(
		    stderr,
		    "lunar-get: --conns %lu needs as many local ports, but --reserved %u-%u has "
		    "%u; give a wider range, e.g. --reserved 10000-65535\n",
		    conns, o.reserved_lo, o.reserved_hi, o.reserved_hi - o.reserved_lo + 1);
		return 2;
	}
	tcp_config_default(&cfg);
	lunar_options_tcp(&o, &cfg);
	if (sodium_init() < 0)
		return 1;
	crypto_hash_sha256_init(&c.sha_out);
	crypto_hash_sha256_init(&c.sha_in);
	if (c.put_file || c.send_file) {
		const char *f = c.put_file ? c.put_file : c.send_file;
		struct stat sb;

		c.in_fd = open(f, O_RDONLY);
		if (c.in_fd < 0 || fstat(c.in_fd, &sb)) {
			fprintf(stderr, "lunar-get: cannot read %s: %s\n", f, strerror(errno));
			return 1;
		}
		c.to_send = (uint64_t)sb.st_size;
		if (c.put_file && !c.path) {
			static char p[300];
			const char *base = strrchr(f, '/');

			snprintf(p, sizeof(p), "/%s", base ? base + 1 : f);
			c.path = p;
		}
	} else if (c.mode == MODE_SEND || c.mode == MODE_ECHO) {
		c.to_send = c.gen_bytes;
	}
	if (c.output) {
		c.out_fd = open(c.output, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (c.out_fd < 0) {
			fprintf(stderr, "lunar-get: cannot write %s: %s\n", c.output,
				strerror(errno));
			return 1;
		}
	}

	lunar_handle_signals();
	rc = lunar_env_open(&o, argv[0], &c.env, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "lunar-get: %s\n", err);
		return 1;
	}
	/* --conns: room in the table for every connection, and some in TIME-WAIT. */
	if (!lunar_env_tcp(c.env, &cfg, (unsigned)conns + 1024)) {
		fprintf(stderr, "lunar-get: could not start TCP\n");
		lunar_env_close(c.env);
		return 1;
	}
	if (soak_s > 0) {
		M.n = (uint32_t)conns;
		M.ramp = (uint32_t)ramp;
		rc = run_soak(c.env, raddr, (uint16_t)rport, soak_s, 2 * cfg.msl_ns, counters);
		printf("zbuf: %" PRIu64 " objects in use at exit\n", lunar_env_close(c.env));
		return rc;
	}
	if (conns) {
		M.n = (uint32_t)conns;
		M.bytes = c.gen_bytes;
		M.echo = c.mode == MODE_ECHO;
		M.ramp = (uint32_t)ramp;
		rc = run_conns(c.env, raddr, (uint16_t)rport, timeout_s, counters);
		printf("zbuf: %" PRIu64 " objects in use at exit\n", lunar_env_close(c.env));
		return rc;
	}
	{
		uint64_t start = lunar_env_now_ns(c.env);
		uint64_t deadline = start + (uint64_t)(timeout_s * 1e9);

		/* Wait for the link (a memif peer) before connecting. */
		while (!port_link_up(c.env->port) && !lunar_stop_requested() &&
		       lunar_env_now_ns(c.env) < start + 10000000000ull)
			lunar_env_poll(c.env);
		c.sock = tcp_connect_to(c.env->tcp, raddr, (uint16_t)rport, on_event, &c, &rc);
		if (!c.sock) {
			fprintf(stderr, "lunar-get: cannot connect: %s\n", strerror(-rc));
			lunar_env_close(c.env);
			return 1;
		}
		while (!c.done && !lunar_stop_requested()) {
			lunar_env_poll(c.env);
			if (lunar_env_now_ns(c.env) > deadline) {
				fail(&c, "%s", "timed out (--timeout)");
				/* the stuck connection, as it is */
				if (counters)
					tcp_stack_dump(c.env->tcp, stdout);
				break;
			}
		}
		if (c.sock) {
			tcp_sock_close(c.sock);
			c.sock = NULL;
		}
		/* Let the close handshake go out before the port closes. */
		for (uint64_t until = lunar_env_now_ns(c.env) + 200000000ull;
		     lunar_env_now_ns(c.env) < until && tcp_stack_sockets(c.env->tcp);)
			lunar_env_poll(c.env);
	}
	if (lunar_stop_requested() && !c.done)
		fail(&c, "%s", "interrupted");
	if (!c.t_end)
		c.t_end = lunar_env_now_ns(c.env);
	{
		double secs = c.t_end > c.t_start && c.t_start ? (c.t_end - c.t_start) / 1e9 : 0;
		bool sending = c.mode == MODE_SEND || c.mode == MODE_PUT || c.mode == MODE_ECHO;
		uint64_t bytes = sending ? c.sent : c.body_seen;

		if (c.no_digest) {
			snprintf(hex, sizeof(hex), "none");
		} else {
			crypto_hash_sha256_final(sending ? &c.sha_out : &c.sha_in, digest);
			sodium_bin2hex(hex, sizeof(hex), digest, sizeof(digest));
		}
		printf("bytes %" PRIu64
		       "\nseconds %.3f\nthroughput %.3f Gbit/s\nsha256 %s\nmss %u\n",
		       bytes, secs, secs > 0 ? bytes * 8 / secs / 1e9 : 0.0, hex, c.mss);
		if (c.mode == MODE_ECHO) {
			unsigned char back[32];
			char hex_back[65];

			crypto_hash_sha256_final(&c.sha_in, back);
			sodium_bin2hex(hex_back, sizeof(hex_back), back, sizeof(back));
			printf("echoed %" PRIu64 "\nsha256_echoed %s\n", c.body_seen, hex_back);
			if (c.body_seen != c.sent || memcmp(back, digest, sizeof(back))) {
				fail(&c, "%s", "the echo differs from what was sent");
				c.failed = true;
			}
		}
		if (c.mode == MODE_GET || c.mode == MODE_PUT)
			printf("http_status %d\n", c.status);
		if (c.mode == MODE_PUT) {
			c.response[c.response_len] = '\0';
			printf("server_says %s\n", c.response);
		}
	}
	if (counters) {
		netif_dump(&c.env->nif, stdout);
		port_dump(c.env->port, stdout);
		tcp_stack_dump(c.env->tcp, stdout);
	}
	if (c.failed)
		fprintf(stderr, "lunar-get: %s\n", c.errmsg);
	if ((c.mode == MODE_GET || c.mode == MODE_PUT) && (c.status < 200 || c.status > 299) &&
	    !c.failed) {
		fprintf(stderr, "lunar-get: server answered HTTP %d\n", c.status);
		c.failed = true;
	}
	printf("zbuf: %" PRIu64 " objects in use at exit\n", lunar_env_close(c.env));
	return c.failed ? 1 : 0;
}
