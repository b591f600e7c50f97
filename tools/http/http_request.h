/*
 * http_request.h - lunar-httpd's HTTP/1.1 request parser (RFC 9112): the
 * end of a header block, the request line and the header fields it acts
 * on, and the check that turns a target into a path under the served
 * root. No I/O and no state beyond its arguments, so that a fuzz target
 * (tests/fuzz/fuzz_http.c) can feed it anything a client sends.
 */
#ifndef LUNAR_TOOLS_HTTP_REQUEST_H
#define LUNAR_TOOLS_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The prefix of PUT's temporary files: no request may name one. */
#define HTTP_PUT_TMP_PREFIX ".lunar-put."

/** A request line and the header fields lunar-httpd acts on. Pointers into the parsed block. */
struct http_request {
	const char *method; /* a token (RFC 9110 5.6.2) */
	char *target;	    /* visible ASCII, no spaces; check with http_check_path() */
	bool http10;	    /* HTTP/1.0, else HTTP/1.1 */
	bool keep_alive;    /* the connection stays open after the answer (Connection, version) */
	bool expect100;	    /* Expect: 100-continue */
	bool have_len;	    /* Content-Length given */
	uint64_t len;	    /* its value; UINT64_MAX when absurdly large */
};

/** Index just past the empty line that ends a header block in @h[@from..@len), or 0. */
size_t http_header_end(const char *h, size_t from, size_t len);

/**
 * Parse the header block @h[0..@n) (changed in place; @h[@n] must be
 * writable: it becomes the terminating NUL). @return 0 and @r filled, or
 * the status to answer with: 400 (malformed, no Host in HTTP/1.1,
 * conflicting Content-Length), 417 (an Expect other than 100-continue),
 * 501 (Transfer-Encoding: no chunked bodies), 505 (another HTTP version).
 */
int http_parse_request(char *h, size_t n, struct http_request *r);

/**
 * Check a request target and turn it into a path relative to the root, or
 * NULL: anything not starting with '/', any '%' (an encoded '/' or '..'
 * must not slip through undecoded), any ".." segment, any segment naming
 * an upload in progress (HTTP_PUT_TMP_PREFIX). Every leading '/' goes:
 * "//etc" relative is "etc", where kept it would be absolute, and an
 * absolute path ignores the root's directory fd. The query is cut off.
 */
char *http_check_path(char *target);

#endif
