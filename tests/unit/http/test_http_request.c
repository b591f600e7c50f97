/*
 * test_http_request.c - lunar-httpd's request parser: what a well-formed
 * request gives, the status each malformed one is answered with, and the
 * targets that must never become a path outside the root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "http/http_request.h"

static char buf[1024];

/* Parse @text (a header block) in a writable copy. */
static int parse(const char *text, struct http_request *r)
{
	size_t n = strlen(text);

	assert_true(n < sizeof(buf));
	memcpy(buf, text, n);
	return http_parse_request(buf, n, r);
}

static void test_good_requests(void **state)
{
	struct http_request r;

	(void)state;
	assert_int_equal(parse("GET /a/b.bin?x=1 HTTP/1.1\r\nHost: h\r\n\r\n", &r), 0);
	assert_string_equal(r.method, "GET");
	assert_string_equal(r.target, "/a/b.bin?x=1");
	assert_true(r.keep_alive);
	assert_false(r.http10);
	assert_string_equal(http_check_path(r.target), "a/b.bin");
	assert_int_equal(parse("PUT /up HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\n"
			       "Content-Length: 12\r\nExpect: 100-continue\r\n"
			       "Connection: foo, close\r\n\r\n",
			       &r),
			 0);
	assert_true(r.have_len);
	assert_int_equal(r.len, 12);
	assert_true(r.expect100);
	assert_false(r.keep_alive);
	/* HTTP/1.0: no Host needed, closes unless asked to keep alive. */
	assert_int_equal(parse("HEAD / HTTP/1.0\n\n", &r), 0);
	assert_true(r.http10);
	assert_false(r.keep_alive);
	assert_int_equal(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r), 0);
	assert_true(r.keep_alive);
	/* An absurd length is kept as the largest, for a 413. */
	assert_int_equal(parse("PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: "
			       "99999999999999999999999\r\n\r\n",
			       &r),
			 0);
	assert_int_equal(r.len, UINT64_MAX);
}

static void test_bad_requests(void **state)
{
	static const struct {
		const char *text;
		int status;
	} cases[] = {
	    {"GET /\r\n\r\n", 400},
	    {"GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
	    {"G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
	    {"GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n", 400},
	    {"GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505},
	    {"GET / HTTP/1.12\r\nHost: h\r\n\r\n", 400},
	    {"GET / HTTP/1.1\r\n\r\n", 400}, /* no Host */
	    {"GET / HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n", 400},
	    {"GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400},
	    {"GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", 400},
	    {"GET / HTTP/1.1\r\nHost: h\x01\r\n\r\n", 400},
	    {"PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
	    {"PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400},
	    {"PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: \r\n\r\n", 400},
	    {"PUT /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
	    {"PUT /x HTTP/1.1\r\nHost: h\r\nExpect: something\r\n\r\n", 417},
	};
	struct http_request r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (parse(cases[i].text, &r) != cases[i].status)
			fail_msg("'%s': not %d", cases[i].text, cases[i].status);
	/* A NUL inside the block. */
	memcpy(buf, "GET / HTTP/1.1\r\nHost: h\0\r\n\r\n", 29);
	assert_int_equal(http_parse_request(buf, 29, &r), 400);
}

/* No target becomes a path out of the root, or onto an upload in progress. */
static void test_paths(void **state)
{
	static const char *const refused[] = {
	    "a", "/..", "/a/../b", "/a/..", "/%2e%2e/x", "/.lunar-put.1.2", "/d/.lunar-put.x",
	    "",	 "*",
	};
	static const struct {
		const char *target, *path;
	} taken[] = {
	    {"/", ""},
	    {"/a", "a"},
	    {"//etc/passwd", "etc/passwd"},
	    {"///x", "x"},
	    {"/a/..b/c", "a/..b/c"},
	    {"/a?../../x", "a"},
	};
	char t[64];

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(t, sizeof(t), "%s", refused[i]);
		if (http_check_path(t))
			fail_msg("'%s' was taken", refused[i]);
	}
	for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
		const char *p;

		snprintf(t, sizeof(t), "%s", taken[i].target);
		p = http_check_path(t);
		assert_non_null(p);
		assert_string_equal(p, taken[i].path);
	}
}

static void test_header_end(void **state)
{
	(void)state;
	assert_int_equal(http_header_end("GET / HTTP/1.1\r\n\r\nbody", 0, 22), 18);
	assert_int_equal(http_header_end("GET / HTTP/1.0\n\nbody", 0, 20), 16);
	assert_int_equal(http_header_end("GET / HTTP/1.1\r\nHost: h\r\n", 0, 25), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good_requests),
	    cmocka_unit_test(test_bad_requests),
	    cmocka_unit_test(test_paths),
	    cmocka_unit_test(test_header_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
