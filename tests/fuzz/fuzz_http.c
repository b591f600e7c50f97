/*
 * fuzz_http.c - libFuzzer target for lunar-httpd's request parser
 * (tools/http/http_request.c). Input: the bytes a client sends. As
 * lunar-httpd does, the header block is what ends at the first empty line
 * (http_header_end(), within 8 KiB); it is parsed, and the target of a
 * request taken goes through http_check_path().
 *
 * Invariants: a status is one lunar-httpd answers (0, 400, 417, 501,
 * 505); a request taken has a token method, a target of visible ASCII,
 * and keep-alive only as its version and Connection allow; a path taken
 * is relative (never '/' first), has no ".." segment and no '%', and
 * names no upload in progress.
 */
#include <stdbool.h>
#include <string.h>

#include "fuzz_check.h"
#include "../../tools/http/http_request.h" /* http_request.c is compiled in */

#define HDR_MAX 8192 /* lunar-httpd's */

/* Whether a segment of @p is ".." or starts with @prefix (NULL: the ".." test only). */
static bool has_segment(const char *p, const char *prefix)
{
	for (const char *s = p; s; s = strchr(s, '/')) {
		if (*s == '/')
			s++;
		if (prefix ? !strncmp(s, prefix, strlen(prefix))
			   : !strncmp(s, "..", 2) && (s[2] == '/' || s[2] == '\0'))
			return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char h[HDR_MAX + 1];
	struct http_request r;
	size_t n = size < HDR_MAX ? size : HDR_MAX, end;
	char *path;
	int status;

	memcpy(h, data, n);
	end = http_header_end(h, 0, n);
	if (!end)
		return 0; /* lunar-httpd waits for more, or answers 431 at 8 KiB */
	FUZZ_CHECK(end <= n);
	FUZZ_CHECK(h[end - 1] == '\n' && (h[end - 2] == '\n' || h[end - 3] == '\n'));
	status = http_parse_request(h, end, &r);
	FUZZ_CHECK(status == 0 || status == 400 || status == 417 || status == 501 || status == 505);
	if (status)
		return 0;
	FUZZ_CHECK(r.method && *r.method && r.target && *r.target);
	for (const char *p = r.method; *p; p++)
		FUZZ_CHECK(*p > 0x20 && *p < 0x7f && !strchr("()<>@,;:\\\"/[]?={} \t", *p));
	for (const char *p = r.target; *p; p++)
		FUZZ_CHECK((unsigned char)*p > 0x20 && (unsigned char)*p < 0x7f);
	FUZZ_CHECK(!r.have_len || r.len <= UINT64_MAX);
	path = http_check_path(r.target);
	if (path) {
		FUZZ_CHECK(path[0] != '/');
		FUZZ_CHECK(!strchr(path, '%'));
		FUZZ_CHECK(!has_segment(path, NULL));
		FUZZ_CHECK(!has_segment(path, HTTP_PUT_TMP_PREFIX));
	}
	return 0;
}
