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
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
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
	uint64_t t_start, t_end;
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
				fail(c, "read error on %s", c->put_file ? c->put_file : c->send_file);
				return;
			}
			n = (uint32_t)got;
		} else {
			gen_fill(c, buf, n);
		}
		rc = tcp_sock_send_zc(c->sock, buf, n);
		if (rc > 0) {
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
		size_t take = n < sizeof(c->hdr) - 1 - c->hdr_len ? n : sizeof(c->hdr) - 1 - c->hdr_len;
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
		n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: lunar\r\nConnection: close\r\n\r\n",
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
		fail(c, "connection %s", ev & TCP_EV_RESET ? "reset (or refused) by the peer"
							     : "timed out: the peer did not answer");
		return;
	}
	if (ev & TCP_EV_CONNECTED) {
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
				zbuf_unref(sl[i].data);
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

static void usage(FILE *f)
{
	fputs("usage: lunar-get [options] --connect IP:PORT (--get /PATH | --put FILE | --send FILE |\n"
	      "                 --bytes N | --recv)\n"
	      "  --connect IP:PORT   the server\n"
	      "  --get /PATH         HTTP GET; the body goes to --output FILE (else discarded)\n"
	      "  --put FILE          HTTP PUT of FILE to --path (default /<basename>)\n"
	      "  --send FILE         raw TCP: send FILE, then close\n"
	      "  --bytes N           raw TCP: send N generated bytes (suffixes K, M, G), then close\n"
	      "  --recv              raw TCP: read until the peer closes\n"
	      "  --echo N            raw TCP: send N generated bytes to an echo server, read them\n"
	      "                      back until it closes, and check they are the same\n"
	      "  --output FILE       where received data goes\n"
	      "  --timeout S         give up after S seconds (default 600)\n"
	      "  --counters          print the stack's counters at exit\n",
	      f);
	lunar_options_usage(f);
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	if (end == s)
		return -EINVAL;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	default: break;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

enum { OPT_CONNECT = 1, OPT_GET, OPT_PUT, OPT_PATH, OPT_SEND, OPT_BYTES, OPT_RECV, OPT_OUTPUT,
       OPT_TIMEOUT, OPT_COUNTERS, OPT_ECHO };

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
		{"output", required_argument, NULL, OPT_OUTPUT},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"counters", no_argument, NULL, OPT_COUNTERS},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static struct client c = {.in_fd = -1, .out_fd = -1, .rng = 0x9e3779b97f4a7c15ull};
	struct lunar_options o;
	uint32_t raddr = 0;
	unsigned long rport = 0;
	double timeout_s = 600;
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
					snprintf(err, sizeof(err),
						 "--connect %s: expected IP:PORT, e.g. 10.77.0.1:8080", optarg);
					rc = -EINVAL;
				}
				break;
			}
			case OPT_GET: c.mode = MODE_GET; c.path = optarg; break;
			case OPT_PUT: c.mode = MODE_PUT; c.put_file = optarg; break;
			case OPT_PATH: c.path = optarg; break;
			case OPT_SEND: c.mode = MODE_SEND; c.send_file = optarg; break;
			case OPT_BYTES:
				c.mode = MODE_SEND;
				if (parse_size(optarg, &c.gen_bytes)) {
					snprintf(err, sizeof(err), "--bytes %s: expected a size like 1048576, 64K, 1G", optarg);
					rc = -EINVAL;
				}
				break;
			case OPT_RECV: c.mode = MODE_RECV; break;
			case OPT_ECHO:
				c.mode = MODE_ECHO;
				if (parse_size(optarg, &c.gen_bytes)) {
					snprintf(err, sizeof(err), "--echo %s: expected a size like 1048576, 64K, 1G", optarg);
					rc = -EINVAL;
				}
				break;
			case OPT_OUTPUT: c.output = optarg; break;
			case OPT_TIMEOUT:
				rc = parse_seconds_opt("timeout", optarg, 1e6, &timeout_s, err, sizeof(err));
				rc = rc ? rc : 1;
				break;
			case OPT_COUNTERS: counters = true; break;
			case 'h': usage(stdout); return 0;
			default: usage(stderr); return 2;
			}
		}
		if (rc < 0) {
			fprintf(stderr, "lunar-get: %s\n", err);
			return 2;
		}
	}
	if (optind != argc || !raddr || c.mode == MODE_NONE) {
		fprintf(stderr, "lunar-get: give --connect IP:PORT and one of --get, --put, --send, "
				"--bytes, --recv, --echo (see --help)\n");
		return 2;
	}
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
			fprintf(stderr, "lunar-get: cannot write %s: %s\n", c.output, strerror(errno));
			return 1;
		}
	}

	lunar_handle_signals();
	rc = lunar_env_open(&o, argv[0], &c.env, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "lunar-get: %s\n", err);
		return 1;
	}
	if (!lunar_env_tcp(c.env, NULL, 1024)) {
		fprintf(stderr, "lunar-get: could not start TCP\n");
		lunar_env_close(c.env);
		return 1;
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

		crypto_hash_sha256_final(sending ? &c.sha_out : &c.sha_in, digest);
		sodium_bin2hex(hex, sizeof(hex), digest, sizeof(digest));
		printf("bytes %" PRIu64 "\nseconds %.3f\nthroughput %.3f Gbit/s\nsha256 %s\n", bytes,
		       secs, secs > 0 ? bytes * 8 / secs / 1e9 : 0.0, hex);
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
