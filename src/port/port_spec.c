/* port_spec.c - parsing of --port and --fault arguments (see port_spec.h). */
#include "port/port_spec.h"
#include "base/log.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PORT_FORMS "af_xdp:<ifname>, memif:<socket-path>[:server|client] or tap:<name>"

const char *port_kind_name(enum port_kind kind)
{
	switch (kind) {
	case PORT_KIND_AF_XDP:
		return "af_xdp";
	case PORT_KIND_MEMIF:
		return "memif";
	case PORT_KIND_TAP:
		return "tap";
	default:
		return "none";
	}
}

/* Linux interface names: 1..15 bytes, no '/', ':' or white space (dev_valid_name). */
static int check_ifname(const char *name, char *err, size_t errlen)
{
	size_t len = strlen(name);

	if (len > 15 || strpbrk(name, "/: \t\n")) {
		lunar_set_err(
		    err, errlen,
		    "--port: '%s' is not a valid interface name (at most 15 characters, no "
		    "'/', ':' or spaces)",
		    name);
		return -EINVAL;
	}
	return 0;
}

static int copy_name(char *dst, size_t cap, const char *src, size_t len, const char *what,
		     char *err, size_t errlen)
{
	if (len == 0) {
		lunar_set_err(err, errlen, "--port: missing %s; expected " PORT_FORMS, what);
		return -EINVAL;
	}
	if (len >= cap) {
		lunar_set_err(err, errlen, "--port: %s '%.*s' is too long (at most %zu characters)",
			      what, (int)len, src, cap - 1);
		return -EINVAL;
	}
	memcpy(dst, src, len);
	dst[len] = '\0';
	return 0;
}

int port_spec_parse(const char *text, struct port_spec *out, char *err, size_t errlen)
{
	const char *colon = strchr(text, ':');
	const char *args;
	size_t kind_len;

	memset(out, 0, sizeof(*out));
	if (!colon) {
		lunar_set_err(err, errlen, "--port '%s': expected " PORT_FORMS, text);
		return -EINVAL;
	}
	kind_len = (size_t)(colon - text);
	args = colon + 1;
	if (kind_len == 6 && !strncmp(text, "af_xdp", 6)) {
		out->kind = PORT_KIND_AF_XDP;
		if (copy_name(out->ifname, sizeof(out->ifname), args, strlen(args),
			      "interface name", err, errlen))
			return -EINVAL;
		return check_ifname(out->ifname, err, errlen);
	}
	if (kind_len == 3 && !strncmp(text, "tap", 3)) {
		out->kind = PORT_KIND_TAP;
		if (copy_name(out->ifname, sizeof(out->ifname), args, strlen(args), "tap name", err,
			      errlen))
			return -EINVAL;
		return check_ifname(out->ifname, err, errlen);
	}
	if (kind_len == 5 && !strncmp(text, "memif", 5)) {
		const char *role = strrchr(args, ':');
		size_t path_len = strlen(args);

		out->kind = PORT_KIND_MEMIF;
		out->memif_server = true;
		if (role && (!strcmp(role, ":server") || !strcmp(role, ":client"))) {
			out->memif_server = !strcmp(role, ":server");
			path_len = (size_t)(role - args);
		} else if (role && !strchr(role, '/')) {
			lunar_set_err(
			    err, errlen,
			    "--port '%s': memif role '%s' is neither 'server' nor 'client'", text,
			    role + 1);
			return -EINVAL;
		}
		return copy_name(out->path, sizeof(out->path), args, path_len, "memif socket path",
				 err, errlen);
	}
	lunar_set_err(err, errlen, "--port '%s': unknown port kind '%.*s'; expected " PORT_FORMS,
		      text, (int)kind_len, text);
	return -EINVAL;
}

static int parse_prob(const char *key, const char *val, double *out, char *err, size_t errlen)
{
	char *end;
	double v = strtod(val, &end);

	if (end == val)
		goto bad;
	if (*end == '%') {
		v /= 100.0;
		end++;
	}
	if (*end != '\0' || !(v >= 0.0 && v <= 1.0)) /* written so NaN fails too */
		goto bad;
	*out = v;
	return 0;
bad:
	lunar_set_err(
	    err, errlen,
	    "--fault: %s=%s is not a probability; write a number in [0,1] or a percentage "
	    "(e.g. %s=0.05 or %s=5%%)",
	    key, val, key, key);
	return -EINVAL;
}

static int parse_delay(const char *val, uint32_t *out, char *err, size_t errlen)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 10);

	if (end == val || errno == ERANGE)
		goto bad;
	if (!strcmp(end, "ms")) {
		if (v > 10 * 1000) /* check before scaling: the product could wrap */
			goto bad;
		v *= 1000;
	} else if (strcmp(end, "us") && *end != '\0') {
		goto bad;
	}
	if (v > 10 * 1000 * 1000)
		goto bad;
	*out = (uint32_t)v;
	return 0;
bad:
	lunar_set_err(err, errlen,
		      "--fault: delay=%s: write microseconds or milliseconds up to 10 s, "
		      "e.g. delay=500us or delay=2ms",
		      val);
	return -EINVAL;
}

bool spec_list_has_empty_field(const char *s)
{
	size_t n = strlen(s);

	return !n || s[0] == ',' || s[n - 1] == ',' || strstr(s, ",,");
}

int fault_spec_parse(const char *text, struct fault_spec *out, char *err, size_t errlen)
{
	char buf[256];
	char *save = NULL, *item;
	bool do_rx = true, do_tx = true;
	const char *body = text;

	if (!strncmp(text, "rx:", 3)) {
		do_tx = false;
		body = text + 3;
	} else if (!strncmp(text, "tx:", 3)) {
		do_rx = false;
		body = text + 3;
	}
	if (strlen(body) >= sizeof(buf) || spec_list_has_empty_field(body)) {
		lunar_set_err(err, errlen,
			      "--fault '%s': expected [rx:|tx:]key=value,... with keys "
			      "drop, dup, reorder, corrupt, delay, seed",
			      text);
		return -EINVAL;
	}
	strcpy(buf, body);
	out->enabled = true;
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		const char *key = item, *val;
		double p;
		int rc = 0;

		if (!eq) {
			lunar_set_err(err, errlen, "--fault: '%s' is not key=value", item);
			return -EINVAL;
		}
		*eq = '\0';
		val = eq + 1;
		if (!strcmp(key, "seed")) {
			char *end;
			unsigned long long seed;

			/* No sign (strtoull takes "-1" as 2^64 - 1), nothing past 64 bits. */
			errno = 0;
			seed = strtoull(val, &end, 0);
			if (!isdigit((unsigned char)val[0]) || *end || errno == ERANGE) {
				lunar_set_err(
				    err, errlen,
				    "--fault: seed=%s: expected a number from 0 to 2^64 - 1 "
				    "(decimal, or hex with 0x)",
				    val);
				return -EINVAL;
			}
			out->seed = seed;
			continue;
		}
		if (!strcmp(key, "delay")) {
			uint32_t d;

			rc = parse_delay(val, &d, err, errlen);
			if (rc)
				return rc;
			if (do_rx)
				out->rx.delay_us = d;
			if (do_tx)
				out->tx.delay_us = d;
			continue;
		}
		rc = parse_prob(key, val, &p, err, errlen);
		if (rc)
			return rc;
#define SET(field)                                                                                 \
	do {                                                                                       \
		if (do_rx)                                                                         \
			out->rx.field = p;                                                         \
		if (do_tx)                                                                         \
			out->tx.field = p;                                                         \
	} while (0)
		if (!strcmp(key, "drop"))
			SET(drop);
		else if (!strcmp(key, "dup"))
			SET(dup);
		else if (!strcmp(key, "reorder"))
			SET(reorder);
		else if (!strcmp(key, "corrupt"))
			SET(corrupt);
		else {
			lunar_set_err(err, errlen,
				      "--fault: unknown key '%s'; keys are drop, dup, reorder, "
				      "corrupt, delay, seed",
				      key);
			return -EINVAL;
		}
#undef SET
	}
	return 0;
}
