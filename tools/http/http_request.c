/*
 * http_request.c - lunar-httpd's HTTP/1.1 request parser (see
 * http_request.h).
 */
#include "http_request.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

size_t http_header_end(const char *h, size_t from, size_t len)
{
	for (size_t k = from; k < len; k++) {
		if (h[k] != '\n')
			continue;
		if (k + 1 < len && h[k + 1] == '\n')
			return k + 2;
		if (k + 2 < len && h[k + 1] == '\r' && h[k + 2] == '\n')
			return k + 3;
	}
	return 0;
}

static bool is_tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

char *http_check_path(char *target)
{
	char *q = strchr(target, '?');
	const char *seg;

	if (q)
		*q = '\0'; /* the query has no meaning for files */
	if (target[0] != '/' || strchr(target, '%') || strlen(target) >= PATH_MAX)
		return NULL;
	for (seg = target; seg; seg = strchr(seg + 1, '/'))
		if ((!strncmp(seg, "/..", 3) && (seg[3] == '/' || seg[3] == '\0')) ||
		    !strncmp(seg + 1, HTTP_PUT_TMP_PREFIX, strlen(HTTP_PUT_TMP_PREFIX)))
			return NULL;
	while (*target == '/')
		target++;
	return target;
}

/* The request line: METHOD SP TARGET SP HTTP/1.x. @return 0, 400 or 505. */
static int request_line(char *line, struct http_request *r)
{
	char *sp1, *sp2, *version;
	int maj, min;

	trim(line);
	sp1 = strchr(line, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strchr(sp2 + 1, ' ') || sp1 == line || sp2 == sp1 + 1)
		return 400;
	*sp1 = *sp2 = '\0';
	r->method = line;
	r->target = sp1 + 1;
	version = sp2 + 1;
	for (const char *p = r->method; *p; p++)
		if (!is_tchar((unsigned char)*p))
			return 400;
	for (const char *p = r->target; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return 400;
	if (strcmp(version, "HTTP/1.1") && strcmp(version, "HTTP/1.0"))
		return sscanf(version, "HTTP/%1d.%1d", &maj, &min) == 2 && strlen(version) == 8
			   ? 505
			   : 400;
	r->http10 = !strcmp(version, "HTTP/1.0");
	return 0;
}

/* Content-Length's digits (RFC 9110 8.6), UINT64_MAX past 2^64 (413 later); false if malformed. */
static bool content_length(const char *value, uint64_t *out)
{
	uint64_t v = 0;

	if (!*value)
		return false;
	for (const char *p = value; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v > (UINT64_MAX - 9) / 10 ? UINT64_MAX : v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return true;
}

int http_parse_request(char *h, size_t n, struct http_request *r)
{
	bool conn_close = false, conn_keep = false, bad_len = false, te = false, host = false;
	char *line, *next;
	int status;

	*r = (struct http_request){0};
	if (memchr(h, '\0', n))
		return 400;
	h[n] = '\0';
	line = h;
	next = strchr(line, '\n');
	if (next)
		*next++ = '\0';
	status = request_line(line, r);
	if (status)
		return status;

	/* Header fields. */
	for (line = next; line && *line; line = next) {
		char *colon, *name, *value;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!*line || (*line == '\r' && !line[1]))
			break; /* the empty line */
		if (*line == ' ' || *line == '\t')
			return 400; /* obsolete line folding (RFC 9112 5.2) */
		colon = strchr(line, ':');
		if (!colon || colon == line)
			return 400;
		*colon = '\0';
		name = line;
		for (const char *p = name; *p; p++)
			if (!is_tchar((unsigned char)*p))
				return 400; /* no space before the colon (RFC 9112 5.1) */
		value = trim(colon + 1);
		for (const char *p = value; *p; p++)
			if ((unsigned char)*p < 0x20 && *p != '\t')
				return 400;
		if (!strcasecmp(name, "content-length")) {
			uint64_t v;

			if (!content_length(value, &v))
				return 400;
			if (r->have_len && v != r->len)
				bad_len = true;
			r->len = v;
			r->have_len = true;
		} else if (!strcasecmp(name, "connection")) {
			char *save = NULL;

			for (char *tok = strtok_r(value, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				tok = trim(tok);
				if (!strcasecmp(tok, "close"))
					conn_close = true;
				else if (!strcasecmp(tok, "keep-alive"))
					conn_keep = true;
			}
		} else if (!strcasecmp(name, "transfer-encoding")) {
			te = true;
		} else if (!strcasecmp(name, "expect")) {
			if (strcasecmp(value, "100-continue"))
				return 417; /* RFC 9110 10.1.1 */
			r->expect100 = true;
		} else if (!strcasecmp(name, "host")) {
			host = true;
		}
	}
	if (bad_len || (!r->http10 && !host))
		return 400; /* RFC 9112 6.3 (conflicting lengths), RFC 9112 3.2 (Host) */
	if (te)
		return 501; /* chunked bodies are not supported */
	r->keep_alive = r->http10 ? conn_keep && !conn_close : !conn_close;
	return 0;
}
