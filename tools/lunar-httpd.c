/*
 * lunar-httpd - an HTTP/1.1 file server and a TCP echo server over lunar.
 *
 *   lunar-httpd [port options] --listen PORT [--root DIR]   GET, HEAD, PUT of files in DIR
 *   lunar-httpd [port options] --echo PORT                  every byte received is sent back
 *
 * Both listeners may run together on one instance. Memory stays bounded
 * whatever the peers do:
 *  - a GET reads the file in chunks of up to 64 KiB into Zbuf buffers, and
 *    only when the send buffer has room; the buffers go to TCP by reference;
 *  - a PUT writes each received slice straight to a temporary file in the
 *    target's directory (renamed into place once the body is complete) and
 *    hashes it;
 *  - the echo listener sends the received slices back by reference, at most
 *    ECHO_INFLIGHT bytes at a time, and stops reading while it cannot, so
 *    the peer is throttled by the window.
 * Requests on one connection are answered in order: the next request is
 * parsed only once the previous response has been handed to TCP.
 * Paths never leave the root: ".." and '%' are refused, and files are
 * opened with RESOLVE_BENEATH so symlinks cannot lead out either.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "loop/env.h"
#include "loop/options.h"
#include "mem/zbuf.h"
#include "port/port.h"
#include "tcp/tcp_stack.h"

#include "http/http_request.h"

#define CHUNK	      65536	    /* largest Zbuf object: one file read */
#define HDR_MAX	      8192	    /* request line and headers */
#define HOUT_MAX      1024	    /* response headers (and small bodies) not yet in a buffer */
#define IN_MAX	      64	    /* received slices taken from the socket at once */
#define PUT_MAX	      (64ull << 30) /* largest PUT body */
#define ECHO_INFLIGHT (256u << 10)  /* echo bytes held in a send buffer at most */
#define SHUTDOWN_NS   200000000ull  /* time given to the FINs at exit */
#define LINGER_NS     2000000000ull /* a closing connection reads (and drops) this long at most */
#define SWEEP_NS      100000000ull  /* how often the timeouts are checked */

struct server;

/* What the request parser is doing. */
enum rstate {
	RS_HEADER, /* collecting a request line and headers */
	RS_BODY,   /* streaming a PUT body to the temporary file */
};

struct conn {
	struct conn *prev, *next;   /* every connection, for shutdown */
	struct conn *sprev, *snext; /* waiting for Zbuf memory */
	bool starved;
	struct server *srv;
	struct tcp_sock *s;
	bool echo;
	bool peer_eof;

	/* Received slices not consumed yet; each holds one Zbuf reference. */
	struct tcp_slice inq[IN_MAX];
	unsigned in_head, in_n;
	uint32_t in_off; /* bytes of inq[in_head] already consumed */

	/* Output, in order: the rest of obuf, then hout, then file bytes. */
	uint8_t *obuf; /* Zbuf buffer partly handed to TCP (we hold one reference) */
	uint32_t ooff, olen;
	char hout[HOUT_MAX];
	size_t hout_len;
	int file_fd;
	uint64_t file_off, file_left;
	bool close_after; /* close once the output is handed over; ignore further input */
	/*
	 * Closing with input unread would send a RST, which throws away what
	 * is still queued for the peer (the very error answer that made us
	 * close): instead our side is shut and input read and dropped until
	 * the peer's FIN or linger_until (RFC 9112 9.6's lingering close).
	 */
	bool lingering;
	uint64_t linger_until;
	uint64_t active_ns;	/* the last event: bytes in, or room freed by ACKs */
	uint64_t request_since; /* the current request's first byte arrived (0: none yet) */

	/* HTTP request being parsed (hdr is HDR_MAX + 1 bytes, HTTP connections only). */
	enum rstate rstate;
	char *hdr;
	size_t hdr_len;
	bool keep_alive, head;

	/* PUT in progress */
	int put_fd, put_dir_fd; /* the temporary file, its directory */
	char put_tmp[64];
	const char *put_name; /* points into hdr: untouched until the next request */
	uint64_t body_left;
	crypto_hash_sha256_state sha;
};

struct server {
	struct lunar_env *env;
	int root_fd;
	unsigned long max_conns;
	unsigned long nconns;
	uint32_t snd_buf; /* the stack's send buffer size */
	struct conn *all;
	struct conn *starved;
	unsigned tmp_seq;
	uint64_t header_ns, idle_ns; /* --header-timeout, --idle-timeout */
	uint64_t next_sweep;
	struct {
		uint64_t lingered, header_timeouts, idle_timeouts;
		uint64_t accepted, refused, requests, status[6]; /* status[n]: nxx responses */
		uint64_t bytes_out, bytes_in, echo_bytes;
		uint64_t aborted, peer_reset, timed_out; /* connections that ended badly */
	} st;
};

struct listen_ctx {
	struct server *srv;
	bool echo;
};

/* ---- connection bookkeeping ---- */

static void starve(struct conn *c)
{
	struct server *srv = c->srv;

	if (c->starved)
		return;
	c->starved = true;
	c->sprev = NULL;
	c->snext = srv->starved;
	if (srv->starved)
		srv->starved->sprev = c;
	srv->starved = c;
}

static void unstarve(struct conn *c)
{
	if (!c->starved)
		return;
	c->starved = false;
	if (c->sprev)
		c->sprev->snext = c->snext;
	else
		c->srv->starved = c->snext;
	if (c->snext)
		c->snext->sprev = c->sprev;
}

static struct conn *conn_new(struct server *srv, bool echo)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (!echo) {
		c->hdr = malloc(HDR_MAX + 1);
		if (!c->hdr) {
			free(c);
			return NULL;
		}
	}
	c->srv = srv;
	c->echo = echo;
	c->file_fd = -1;
	c->put_fd = -1;
	c->put_dir_fd = -1;
	c->keep_alive = true;
	return c;
}

static void conn_link(struct conn *c)
{
	struct server *srv = c->srv;

	c->prev = NULL;
	c->next = srv->all;
	if (srv->all)
		srv->all->prev = c;
	srv->all = c;
	srv->nconns++;
}

/* Drop a PUT in progress: its temporary file must not stay behind. */
static void put_discard(struct conn *c)
{
	if (c->put_fd >= 0) {
		close(c->put_fd);
		c->put_fd = -1;
		unlinkat(c->put_dir_fd, c->put_tmp, 0);
	}
	if (c->put_dir_fd >= 0) {
		close(c->put_dir_fd);
		c->put_dir_fd = -1;
	}
}

/* Give back the received slices not consumed yet. */
static void release_slices(struct conn *c)
{
	for (unsigned i = c->in_head; i < c->in_n; i++)
		tcp_sock_zc_done(c->s, c->inq[i].data, c->inq[i].len);
}

/* Release everything the connection holds except the socket. */
static void conn_free(struct conn *c)
{
	struct server *srv = c->srv;

	release_slices(c);
	if (c->obuf)
		zbuf_unref(c->obuf);
	if (c->file_fd >= 0)
		close(c->file_fd);
	put_discard(c);
	unstarve(c);
	if (c->s) {
		if (c->prev)
			c->prev->next = c->next;
		else
			srv->all = c->next;
		if (c->next)
			c->next->prev = c->prev;
		srv->nconns--;
	}
	free(c->hdr);
	free(c);
}

/* Graceful close: the FIN goes after everything handed to TCP. */
static void conn_close(struct conn *c)
{
	struct tcp_sock *s = c->s;

	conn_free(c);
	tcp_sock_close(s);
}

/* Abort (RST): for when the peer can no longer get a correct answer. */
static void conn_abort(struct conn *c)
{
	struct tcp_sock *s = c->s;

	c->srv->st.aborted++;
	conn_free(c);
	tcp_sock_abort(s);
}

static uint64_t conn_now(const struct conn *c)
{
	return lunar_env_loop_ns(c->srv->env);
}

/* Drop every byte received and not consumed: a closing connection answers nothing more. */
static void discard_input(struct conn *c)
{
	for (;;) {
		release_slices(c);
		c->in_head = c->in_off = 0;
		c->in_n = tcp_sock_read_zc(c->s, c->inq, IN_MAX);
		if (!c->in_n)
			return;
	}
}

/*
 * Everything to send is handed to TCP and the connection is to close:
 * shut our side (the FIN follows the data) and drop input until the
 * peer's FIN, or LINGER_NS (the sweep then closes, a RST if more came).
 */
static void linger(struct conn *c)
{
	discard_input(c);
	if (c->peer_eof) {
		conn_close(c);
		return;
	}
	if (!c->lingering) {
		c->lingering = true;
		c->linger_until = conn_now(c) + LINGER_NS;
		c->srv->st.lingered++;
		tcp_sock_shutdown(c->s);
	}
}

/* ---- output ---- */

static bool output_pending(const struct conn *c)
{
	return c->obuf || c->hout_len || c->file_left;
}

/*
 * A Zbuf buffer for @want bytes, or failing that a smaller one of at least
 * @min bytes: when the 64 KiB class is exhausted, smaller reads keep going.
 */
static uint8_t *out_alloc(uint32_t want, uint32_t min, uint32_t *cap)
{
	static const uint32_t smaller[] = {16384, 4096, 2048};
	uint8_t *b = zbuf_alloc(want);

	if (b) {
		*cap = want;
		return b;
	}
	for (unsigned i = 0; i < sizeof(smaller) / sizeof(smaller[0]); i++) {
		if (smaller[i] >= want)
			continue;
		if (smaller[i] < min)
			break;
		b = zbuf_alloc(smaller[i]);
		if (b) {
			*cap = smaller[i];
			return b;
		}
	}
	return NULL;
}

/*
 * Hand output to TCP while the send buffer takes it. Returns false if the
 * connection is gone (closed after its last response, or aborted).
 */
static bool pump(struct conn *c)
{
	struct server *srv = c->srv;

	for (;;) {
		uint8_t *buf;
		uint32_t cap, n;
		uint64_t want;

		if (c->obuf) {
			int rc = tcp_sock_send_zc(c->s, c->obuf + c->ooff, c->olen - c->ooff);

			if (rc < 0) {
				conn_abort(c);
				return false;
			}
			c->ooff += (uint32_t)rc;
			srv->st.bytes_out += (uint64_t)rc;
			if (c->ooff < c->olen)
				return true; /* TCP_EV_WRITABLE resumes */
			zbuf_unref(c->obuf); /* the send buffer holds its own reference */
			c->obuf = NULL;
		}
		if (!c->hout_len && !c->file_left)
			break;
		if (!tcp_sock_send_space(c->s))
			return true;
		want = c->hout_len + c->file_left;
		buf = out_alloc(want > CHUNK ? CHUNK : (uint32_t)want, (uint32_t)c->hout_len, &cap);
		if (!buf) {
			/* Buffers held by other connections come back as they are ACKed. */
			starve(c);
			return true;
		}
		memcpy(buf, c->hout, c->hout_len);
		n = (uint32_t)c->hout_len;
		c->hout_len = 0;
		if (c->file_left && n < cap) {
			uint64_t r = cap - n < c->file_left ? cap - n : c->file_left;
			ssize_t got;

			do
				got = pread(c->file_fd, buf + n, (size_t)r, (off_t)c->file_off);
			while (got < 0 && errno == EINTR);
			if (got <= 0) {
				/* The file shrank or failed: the promised length cannot be kept. */
				zbuf_unref(buf);
				conn_abort(c);
				return false;
			}
			n += (uint32_t)got;
			c->file_off += (uint64_t)got;
			c->file_left -= (uint64_t)got;
			if (!c->file_left) {
				close(c->file_fd);
				c->file_fd = -1;
			}
		}
		c->obuf = buf;
		c->ooff = 0;
		c->olen = n;
	}
	if (c->close_after) {
		linger(c);
		return false;
	}
	return true;
}

static const char *reason(int status)
{
	switch (status) {
	case 100:
		return "Continue";
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 409:
		return "Conflict";
	case 408:
		return "Request Timeout";
	case 411:
		return "Length Required";
	case 413:
		return "Content Too Large";
	case 417:
		return "Expectation Failed";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Unknown";
	}
}

static void hout_printf(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void hout_printf(struct conn *c, const char *fmt, ...)
{
	size_t room = sizeof(c->hout) - c->hout_len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(c->hout + c->hout_len, room, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < room)
		c->hout_len += (size_t)n;
	else
		c->close_after = true; /* cannot happen with our fixed texts; never send half */
}

/*
 * Queue a response head (and @body unless HEAD). @len is the Content-Length.
 * !@keep closes the connection once it is sent and stops reading requests.
 */
static void respond(struct conn *c, int status, const char *extra, uint64_t len, const char *body,
		    bool keep)
{
	c->srv->st.status[status / 100 % 6]++;
	hout_printf(c,
		    "HTTP/1.1 %d %s\r\nServer: lunar\r\nContent-Length: %" PRIu64
		    "\r\n%sConnection: %s\r\n\r\n%s",
		    status, reason(status), len, extra ? extra : "", keep ? "keep-alive" : "close",
		    body && !c->head ? body : "");
	if (!keep)
		c->close_after = true;
}

/* An answer with a short text body. */
static void respond_text(struct conn *c, int status, const char *extra, bool keep)
{
	char body[80];

	snprintf(body, sizeof(body), "%d %s\n", status, reason(status));
	respond(c, status, extra, strlen(body), body, keep);
}

/* ---- HTTP requests ---- */

/*
 * Open @path below the root. RESOLVE_BENEATH keeps symlinks and ".." from
 * leading outside it (openat2, Linux 5.6); older kernels get plain openat,
 * where only the request path itself is checked.
 */
static int open_beneath(int root_fd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {.flags = (uint64_t)flags,
			       .mode = mode,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
	int fd;

	/* Never: http_check_path() strips them; an absolute path would ignore root_fd. */
	if (path[0] == '/') {
		errno = EACCES;
		return -1;
	}
	fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		fd = openat(root_fd, path, flags, mode);
	return fd;
}

/* HTTP status for a failed open. */
static int open_status(int e)
{
	if (e == ENOENT || e == ENOTDIR)
		return 404;
	if (e == EACCES || e == EPERM || e == EXDEV || e == ELOOP)
		return 403; /* EXDEV, ELOOP: a link leading out of the root */
	return 500;
}

static void finish_put(struct conn *c)
{
	unsigned char digest[32];
	char hex[65], body[70];
	int fd = c->put_fd;

	c->put_fd = -1;
	c->rstate = RS_HEADER;
	if (close(fd) || renameat(c->put_dir_fd, c->put_tmp, c->put_dir_fd, c->put_name)) {
		int e = errno;

		unlinkat(c->put_dir_fd, c->put_tmp, 0);
		close(c->put_dir_fd);
		c->put_dir_fd = -1;
		respond_text(c, e == EISDIR ? 409 : open_status(e), NULL, c->keep_alive);
		return;
	}
	close(c->put_dir_fd);
	c->put_dir_fd = -1;
	crypto_hash_sha256_final(&c->sha, digest);
	sodium_bin2hex(hex, sizeof(hex), digest, sizeof(digest));
	snprintf(body, sizeof(body), "%s\n", hex);
	respond(c, 201, NULL, strlen(body), body, c->keep_alive);
}

/*
 * The body goes to a temporary file in the target's directory: rename(2) is
 * atomic only within one file system, and a subdirectory may be a mount.
 * Errors found here are answered before the body is read (then we close).
 */
static void start_put(struct conn *c, char *path, uint64_t len, bool expect100)
{
	struct server *srv = c->srv;
	struct stat sb;
	char *slash = strrchr(path, '/');
	const char *dir = ".", *name = path;

	if (slash) {
		*slash = '\0';
		dir = path;
		name = slash + 1;
	}
	if (!*name || !strcmp(name, ".")) {
		respond_text(c, 409, NULL, false); /* a directory */
		return;
	}
	c->put_dir_fd = open_beneath(srv->root_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (c->put_dir_fd < 0) {
		respond_text(c, open_status(errno), NULL, false);
		return;
	}
	if (!fstatat(c->put_dir_fd, name, &sb, AT_SYMLINK_NOFOLLOW) && S_ISDIR(sb.st_mode)) {
		respond_text(c, 409, NULL, false);
		return; /* conn_free closes put_dir_fd */
	}
	/* Unguessable: no other client can read, replace or pre-create it (names are refused too).
	 */
	snprintf(c->put_tmp, sizeof(c->put_tmp), HTTP_PUT_TMP_PREFIX "%ld.%u.%08x", (long)getpid(),
		 srv->tmp_seq++, randombytes_random());
	c->put_fd =
	    openat(c->put_dir_fd, c->put_tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (c->put_fd < 0) {
		respond_text(c, open_status(errno), NULL, false);
		return;
	}
	c->put_name = name;
	c->body_left = len;
	crypto_hash_sha256_init(&c->sha);
	c->rstate = RS_BODY;
	if (expect100 && len)
		hout_printf(c, "HTTP/1.1 100 Continue\r\n\r\n");
	if (!len)
		finish_put(c);
}

static void start_get(struct conn *c, const char *path, bool keep)
{
	struct stat sb;
	/* O_NONBLOCK: opening a FIFO someone left in the root must not hang the loop. */
	int fd = open_beneath(c->srv->root_fd, *path ? path : ".",
			      O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0);

	if (fd < 0) {
		int status = open_status(errno);

		respond_text(c, status == 500 ? 404 : status, NULL, keep);
		return;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		respond_text(c, 404, NULL, keep);
		return;
	}
	respond(c, 200, "Content-Type: application/octet-stream\r\n", (uint64_t)sb.st_size, NULL,
		keep);
	if (c->head || !sb.st_size) {
		close(fd);
		return;
	}
	c->file_fd = fd;
	c->file_off = 0;
	c->file_left = (uint64_t)sb.st_size;
}

/* Parse the complete header in c->hdr[0..hdr_len) and start the response. */
static void handle_request(struct conn *c)
{
	struct http_request r;
	char *path;
	int status;

	c->srv->st.requests++;
	c->head = false;
	status = http_parse_request(c->hdr, c->hdr_len, &r); /* hdr has room for the NUL */
	if (status) {
		respond_text(c, status, NULL, false);
		return;
	}
	c->keep_alive = r.keep_alive;
	if (!strcmp(r.method, "PUT")) {
		path = http_check_path(r.target);
		if (!path)
			goto bad;
		if (!r.have_len) {
			respond_text(c, 411, NULL, false);
			return;
		}
		if (r.len > PUT_MAX) {
			respond_text(c, 413, NULL, false);
			return;
		}
		start_put(c, path, r.len, r.expect100);
		return;
	}
	c->head = !strcmp(r.method, "HEAD");
	/* A body we do not want is not read: closing keeps the requests in step. */
	if (r.len)
		c->keep_alive = false;
	if (!c->head && strcmp(r.method, "GET")) {
		respond_text(c, 405, "Allow: GET, HEAD, PUT\r\n", c->keep_alive);
		return;
	}
	path = http_check_path(r.target);
	if (!path)
		goto bad;
	start_get(c, path, c->keep_alive);
	return;
bad:
	respond_text(c, 400, NULL, false);
}

/* Consume bytes of a request; @return how many were used (the rest stays queued). */
static size_t http_input(struct conn *c, const uint8_t *p, size_t n)
{
	size_t i = 0, take, from, end, used;

	if (c->rstate == RS_BODY) {
		take = n < c->body_left ? n : (size_t)c->body_left;
		for (size_t done = 0; done < take;) {
			ssize_t w = write(c->put_fd, p + done, take - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				put_discard(c);
				c->rstate = RS_HEADER;
				respond_text(c, 500, NULL, false); /* disk full, I/O error */
				return take;
			}
			done += (size_t)w;
		}
		crypto_hash_sha256_update(&c->sha, p, take);
		c->srv->st.bytes_in += take;
		c->body_left -= take;
		if (!c->body_left)
			finish_put(c);
		return take;
	}

	/* RFC 9112 2.2: empty lines before a request line are ignored. */
	if (!c->hdr_len)
		while (i < n && (p[i] == '\r' || p[i] == '\n'))
			i++;
	if (i == n)
		return n;
	if (!c->hdr_len)
		c->request_since =
		    conn_now(c); /* the header must be complete in --header-timeout */
	take = n - i < HDR_MAX - c->hdr_len ? n - i : HDR_MAX - c->hdr_len;
	memcpy(c->hdr + c->hdr_len, p + i, take);
	from = c->hdr_len > 3 ? c->hdr_len - 3 : 0;
	c->hdr_len += take;
	end = http_header_end(c->hdr, from, c->hdr_len);
	if (!end) {
		if (c->hdr_len == HDR_MAX) {
			c->srv->st.requests++;
			c->head = false;
			respond_text(c, 431, NULL, false);
		}
		return i + take;
	}
	/* Bytes after the header stay in the slice: a body or the next request. */
	used = i + take - (c->hdr_len - end);
	c->hdr_len = end;
	handle_request(c);
	c->hdr_len = 0;
	c->request_since = 0;
	return used;
}

static bool http_drive(struct conn *c)
{
	for (;;) {
		struct tcp_slice *sl;

		if (!pump(c))
			return false;
		if (c->close_after)
			return true; /* the last response is still going out */
		if (c->rstate == RS_HEADER && output_pending(c))
			return true; /* answer in order: the next request waits */
		if (c->in_head == c->in_n) {
			c->in_head = c->in_off = 0;
			c->in_n = tcp_sock_read_zc(c->s, c->inq, IN_MAX);
			if (!c->in_n)
				break;
		}
		sl = &c->inq[c->in_head];
		c->in_off += (uint32_t)http_input(c, sl->data + c->in_off, sl->len - c->in_off);
		if (c->in_off == sl->len) {
			tcp_sock_zc_done(c->s, sl->data, sl->len);
			c->in_head++;
			c->in_off = 0;
		}
	}
	/*
	 * Everything received is consumed and every response handed to TCP
	 * (a PUT body may still be missing): after the peer's FIN nothing more
	 * can be answered, and a request it cut short never will be.
	 */
	if (c->peer_eof) {
		conn_close(c);
		return false;
	}
	return true;
}

/* ---- echo ---- */

static bool echo_drive(struct conn *c)
{
	for (;;) {
		while (c->in_head < c->in_n) {
			struct tcp_slice *sl = &c->inq[c->in_head];
			uint32_t space = tcp_sock_send_space(c->s), held = c->srv->snd_buf - space;
			uint32_t n = sl->len - c->in_off;
			int rc;

			/*
			 * What is echoed holds the received frames until the peer
			 * ACKs it: a full send buffer of them per connection would
			 * drain the packet pool, and then no ACK could come in.
			 */
			if (held >= ECHO_INFLIGHT)
				return true; /* TCP_EV_WRITABLE resumes */
			if (n > ECHO_INFLIGHT - held)
				n = ECHO_INFLIGHT - held;
			rc = tcp_sock_send_zc(c->s, sl->data + c->in_off, n);
			if (rc < 0) {
				conn_abort(c);
				return false;
			}
			c->in_off += (uint32_t)rc;
			c->srv->st.echo_bytes += (uint64_t)rc;
			if (c->in_off < sl->len)
				return true; /* send buffer full: TCP_EV_WRITABLE resumes */
			/* The send buffer holds its own reference. */
			tcp_sock_zc_done(c->s, sl->data, sl->len);
			c->in_head++;
			c->in_off = 0;
		}
		/* Read only once the queue is empty: what we hold stays bounded. */
		c->in_head = c->in_off = 0;
		c->in_n = tcp_sock_read_zc(c->s, c->inq, IN_MAX);
		if (!c->in_n)
			break;
	}
	if (c->peer_eof) {
		conn_close(c);
		return false;
	}
	return true;
}

static bool drive(struct conn *c)
{
	if (c->lingering) {
		linger(c); /* more input dropped; closed once the peer's FIN came */
		return false;
	}
	return c->echo ? echo_drive(c) : http_drive(c);
}

/* ---- events ---- */

static void on_event(struct tcp_sock *s, uint32_t ev, void *ctx)
{
	struct conn *c = ctx;

	(void)s;
	if (ev & (TCP_EV_RESET | TCP_EV_TIMEOUT | TCP_EV_CLOSED)) {
		/* The connection is gone; closing releases the socket. */
		c->srv->st.peer_reset += !!(ev & TCP_EV_RESET);
		c->srv->st.timed_out += !!(ev & TCP_EV_TIMEOUT);
		conn_close(c);
		return;
	}
	if (ev & TCP_EV_EOF)
		c->peer_eof = true;
	c->active_ns = conn_now(c);
	drive(c);
}

static void on_accept(struct tcp_listener *l, void *ctx)
{
	struct listen_ctx *lc = ctx;
	struct server *srv = lc->srv;

	for (;;) {
		struct conn *c = srv->nconns < srv->max_conns ? conn_new(srv, lc->echo) : NULL;
		struct tcp_sock *s;

		if (!c) {
			/* Over --max-conns or out of memory: refuse with a RST. */
			s = tcp_accept(l, NULL, NULL);
			if (!s)
				return;
			srv->st.refused++;
			tcp_sock_abort(s);
			continue;
		}
		s = tcp_accept(l, on_event, c);
		if (!s) {
			conn_free(c);
			return;
		}
		c->s = s;
		c->active_ns = conn_now(c);
		conn_link(c);
		srv->st.accepted++;
	}
}

/* Give connections that found no Zbuf memory another try. */
static void retry_starved(struct server *srv)
{
	unsigned n = 0;

	for (struct conn *c = srv->starved; c; c = c->snext)
		n++;
	while (n-- && srv->starved) {
		struct conn *c = srv->starved;

		unstarve(c);
		drive(c); /* may starve again: it then waits for the next round */
	}
}

/*
 * Every SWEEP_NS: lingering connections past their time are closed; a
 * request whose header is not complete in --header-timeout is answered
 * 408 (a client dribbling bytes cannot hold its connection and buffer for
 * ever); a connection with no event for --idle-timeout is closed, or
 * reset if output was still waiting (a client that never reads).
 */
static void sweep(struct server *srv)
{
	uint64_t now = lunar_env_loop_ns(srv->env);

	if (now < srv->next_sweep)
		return;
	srv->next_sweep = now + SWEEP_NS;
	for (struct conn *c = srv->all, *next; c; c = next) {
		next = c->next;
		if (c->lingering) {
			if (now >= c->linger_until)
				conn_close(c);
		} else if (!c->echo && c->rstate == RS_HEADER && c->request_since &&
			   !output_pending(c) && now - c->request_since >= srv->header_ns) {
			srv->st.header_timeouts++;
			c->head = false;
			respond_text(c, 408, NULL, false);
			drive(c);
		} else if (now - c->active_ns >= srv->idle_ns) {
			srv->st.idle_timeouts++;
			if (output_pending(c))
				conn_abort(c);
			else
				conn_close(c);
		}
	}
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fputs("usage: lunar-httpd [options] (--listen PORT [--root DIR] | --echo PORT)...\n"
	      "  --listen PORT       serve HTTP/1.1 GET, HEAD and PUT on TCP PORT\n"
	      "  --root DIR          directory served (default .)\n"
	      "  --echo PORT         echo every byte received on TCP PORT\n"
	      "  --backlog N         connections waiting to be accepted (default 1024)\n"
	      "  --max-conns N       open connections at most (default 65536)\n"
	      "  --header-timeout S  a request's header must arrive within S seconds, else 408\n"
	      "                      (default 10)\n"
	      "  --idle-timeout S    close a connection with no traffic for S seconds\n"
	      "                      (default 60)\n"
	      "  --duration S        stop after S seconds (default: until SIGINT/SIGTERM)\n"
	      "  --counters          print the stack's counters at exit\n",
	      f);
	lunar_options_usage(f);
}

enum {
	OPT_LISTEN = 1,
	OPT_ROOT,
	OPT_ECHO,
	OPT_BACKLOG,
	OPT_MAX_CONNS,
	OPT_DURATION,
	OPT_COUNTERS,
	OPT_HEADER_TIMEOUT,
	OPT_IDLE_TIMEOUT,
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    LUNAR_COMMON_LONGOPTS,
	    {"listen", required_argument, NULL, OPT_LISTEN},
	    {"root", required_argument, NULL, OPT_ROOT},
	    {"echo", required_argument, NULL, OPT_ECHO},
	    {"backlog", required_argument, NULL, OPT_BACKLOG},
	    {"max-conns", required_argument, NULL, OPT_MAX_CONNS},
	    {"duration", required_argument, NULL, OPT_DURATION},
	    {"counters", no_argument, NULL, OPT_COUNTERS},
	    {"header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT},
	    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static struct server srv = {.root_fd = -1,
				    .max_conns = 65536,
				    .header_ns = 10000000000ull,
				    .idle_ns = 60000000000ull};
	struct listen_ctx http_ctx = {.srv = &srv, .echo = false};
	struct listen_ctx echo_ctx = {.srv = &srv, .echo = true};
	struct tcp_listener *http_l = NULL, *echo_l = NULL;
	struct lunar_options o;
	struct tcp_config cfg;
	const char *root = ".";
	unsigned long http_port = 0, echo_port = 0, backlog = 1024;
	double duration = 0;
	bool counters = false;
	char err[512], ip[16];
	int opt, rc, status = 0;
	uint64_t deadline;

	setvbuf(stdout, NULL, _IOLBF, 0);
	lunar_options_init(&o);
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		rc = lunar_options_apply(&o, opt, optarg, err, sizeof(err));
		if (rc == 0) {
			switch (opt) {
			case OPT_LISTEN:
				rc = parse_uint_opt("listen", optarg, 1, 65535, &http_port, err,
						    sizeof(err));
				break;
			case OPT_ROOT:
				root = optarg;
				break;
			case OPT_ECHO:
				rc = parse_uint_opt("echo", optarg, 1, 65535, &echo_port, err,
						    sizeof(err));
				break;
			case OPT_BACKLOG:
				rc = parse_uint_opt("backlog", optarg, 1, 1u << 20, &backlog, err,
						    sizeof(err));
				break;
			case OPT_MAX_CONNS:
				rc = parse_uint_opt("max-conns", optarg, 1, 1u << 24,
						    &srv.max_conns, err, sizeof(err));
				break;
			case OPT_DURATION:
				rc = parse_seconds_opt("duration", optarg, 1e9, &duration, err,
						       sizeof(err));
				break;
			case OPT_COUNTERS:
				counters = true;
				break;
			case OPT_HEADER_TIMEOUT:
			case OPT_IDLE_TIMEOUT: {
				const char *name =
				    opt == OPT_HEADER_TIMEOUT ? "header-timeout" : "idle-timeout";
				double sec;

				rc = parse_seconds_opt(name, optarg, 86400, &sec, err, sizeof(err));
				if (!rc && sec <= 0) {
					snprintf(err, sizeof(err),
						 "--%s %s: give more than 0 seconds", name, optarg);
					rc = -EINVAL;
				}
				if (!rc)
					*(opt == OPT_HEADER_TIMEOUT ? &srv.header_ns
								    : &srv.idle_ns) =
					    (uint64_t)(sec * 1e9);
				break;
			}
			case 'h':
				usage(stdout);
				return 0;
			default:
				usage(stderr);
				return 2;
			}
		}
		if (rc < 0) {
			fprintf(stderr, "lunar-httpd: %s\n", err);
			return 2;
		}
	}
	if (optind != argc || (!http_port && !echo_port)) {
		fprintf(stderr,
			"lunar-httpd: give --listen PORT and/or --echo PORT (see --help)\n");
		return 2;
	}
	if (lunar_options_one_worker(&o, err, sizeof(err))) {
		fprintf(stderr, "lunar-httpd: %s\n", err);
		return 2;
	}
	if (http_port && http_port == echo_port) {
		fprintf(stderr, "lunar-httpd: --listen and --echo need different ports\n");
		return 2;
	}
	if (sodium_init() < 0)
		return 1;
	if (http_port) {
		srv.root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (srv.root_fd < 0) {
			fprintf(stderr, "lunar-httpd: --root %s: %s\n", root, strerror(errno));
			return 1;
		}
	}

	lunar_handle_signals();
	rc = lunar_env_open(&o, argv[0], &srv.env, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "lunar-httpd: %s\n", err);
		return 1;
	}
	/* Responses are complete when queued: Nagle would only delay pipelined answers. */
	tcp_config_default(&cfg);
	lunar_options_tcp(&o, &cfg);
	cfg.nodelay = true;
	srv.snd_buf = cfg.snd_buf;
	if (!lunar_env_tcp(srv.env, &cfg, (unsigned)srv.max_conns)) {
		fprintf(stderr, "lunar-httpd: could not start TCP\n");
		status = 1;
		goto out;
	}
	if (http_port) {
		http_l = tcp_listen_on(srv.env->tcp, (uint16_t)http_port, (unsigned)backlog,
				       on_accept, &http_ctx, &rc);
		if (!http_l || (rc = lunar_env_steer_port(srv.env, (uint16_t)http_port)) < 0) {
			fprintf(stderr, "lunar-httpd: cannot listen on TCP port %lu: %s\n",
				http_port, strerror(-rc));
			status = 1;
			goto out;
		}
	}
	if (echo_port) {
		echo_l = tcp_listen_on(srv.env->tcp, (uint16_t)echo_port, (unsigned)backlog,
				       on_accept, &echo_ctx, &rc);
		if (!echo_l || (rc = lunar_env_steer_port(srv.env, (uint16_t)echo_port)) < 0) {
			fprintf(stderr, "lunar-httpd: cannot listen on TCP port %lu: %s\n",
				echo_port, strerror(-rc));
			status = 1;
			goto out;
		}
	}
	printf("lunar-httpd: ready on %s (%s):", ip4_str(srv.env->nif.ip, ip), srv.env->port->name);
	if (http_port)
		printf(" http %lu (root %s)", http_port, root);
	if (echo_port)
		printf("%s echo %lu", http_port ? "," : "", echo_port);
	printf("\n");
	fflush(stdout);

	deadline =
	    duration > 0 ? lunar_env_now_ns(srv.env) + (uint64_t)(duration * 1e9) : UINT64_MAX;
	while (!lunar_stop_requested() && lunar_env_now_ns(srv.env) < deadline) {
		lunar_env_poll(srv.env);
		if (srv.starved)
			retry_starved(&srv);
		sweep(&srv);
	}

out:
	/* New connections are refused first, then the open ones get their FIN. */
	if (http_l)
		tcp_listener_close(http_l);
	if (echo_l)
		tcp_listener_close(echo_l);
	while (srv.all)
		conn_close(srv.all);
	if (srv.env->tcp)
		for (uint64_t until = lunar_env_now_ns(srv.env) + SHUTDOWN_NS;
		     lunar_env_now_ns(srv.env) < until && tcp_stack_sockets(srv.env->tcp);)
			lunar_env_poll(srv.env);
	if (counters) {
		netif_dump(&srv.env->nif, stdout);
		port_dump(srv.env->port, stdout);
		lunar_env_dump(srv.env, stdout); /* the loop's and, on af_xdp, the XDP program's */
		if (srv.env->tcp)
			tcp_stack_dump(srv.env->tcp, stdout);
		printf("httpd: accepted %" PRIu64 " refused %" PRIu64 " requests %" PRIu64
		       " 1xx %" PRIu64 " 2xx %" PRIu64 " 4xx %" PRIu64 " 5xx %" PRIu64 "\n"
		       "httpd: bytes_out %" PRIu64 " put_bytes_in %" PRIu64 " echo_bytes %" PRIu64
		       "\nhttpd: aborted %" PRIu64 " peer_reset %" PRIu64 " timed_out %" PRIu64
		       "\nhttpd: lingered %" PRIu64 " header_timeouts %" PRIu64
		       " idle_timeouts %" PRIu64 "\n",
		       srv.st.accepted, srv.st.refused, srv.st.requests, srv.st.status[1],
		       srv.st.status[2], srv.st.status[4], srv.st.status[5], srv.st.bytes_out,
		       srv.st.bytes_in, srv.st.echo_bytes, srv.st.aborted, srv.st.peer_reset,
		       srv.st.timed_out, srv.st.lingered, srv.st.header_timeouts,
		       srv.st.idle_timeouts);
	}
	printf("zbuf: %" PRIu64 " objects in use at exit\n", lunar_env_close(srv.env));
	if (srv.root_fd >= 0)
		close(srv.root_fd);
	return status;
}
