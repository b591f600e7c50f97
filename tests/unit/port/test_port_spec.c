/*
 * test_port_spec.c - the --port and --fault syntax (port/port_spec.c):
 * port_spec_parse() accepts af_xdp:<ifname>, tap:<name> and
 * memif:<path>[:server|client] and rejects everything else with a message
 * naming the problem; fault_spec_parse() accepts drop/dup/reorder/corrupt
 * as 0.05 or 5%, delay in us or ms, seed=N, with an optional rx:/tx:
 * direction prefix, and rejects malformed settings.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "port/port_spec.h"

#define ERRLEN 256

static int parse(const char *text, struct port_spec *ps, char *err)
{
	err[0] = '\0';
	return port_spec_parse(text, ps, err, ERRLEN);
}

/* The message of a rejected --port lists every accepted form. */
static void assert_lists_forms(const char *err)
{
	assert_non_null(strstr(err, "af_xdp:<ifname>"));
	assert_non_null(strstr(err, "memif:<socket-path>"));
	assert_non_null(strstr(err, "tap:<name>"));
}

static void test_af_xdp(void **state)
{
	struct port_spec ps;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(parse("af_xdp:veth0", &ps, err), 0);
	assert_int_equal(ps.kind, PORT_KIND_AF_XDP);
	assert_string_equal(ps.ifname, "veth0");
	assert_string_equal(ps.path, "");
	assert_int_equal(ps.mtu, 0);
	assert_string_equal(port_kind_name(ps.kind), "af_xdp");
}

static void test_tap(void **state)
{
	struct port_spec ps;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(parse("tap:t0", &ps, err), 0);
	assert_int_equal(ps.kind, PORT_KIND_TAP);
	assert_string_equal(ps.ifname, "t0");
	assert_string_equal(port_kind_name(ps.kind), "tap");
	assert_string_equal(port_kind_name(PORT_KIND_NONE), "none");
}

static void test_memif_roles(void **state)
{
	struct port_spec ps;
	char err[ERRLEN];

	(void)state;
	/* No role: server (the default). */
	assert_int_equal(parse("memif:/run/x.sock", &ps, err), 0);
	assert_int_equal(ps.kind, PORT_KIND_MEMIF);
	assert_string_equal(ps.path, "/run/x.sock");
	assert_true(ps.memif_server);
	assert_string_equal(port_kind_name(ps.kind), "memif");

	assert_int_equal(parse("memif:/run/x.sock:server", &ps, err), 0);
	assert_string_equal(ps.path, "/run/x.sock");
	assert_true(ps.memif_server);

	assert_int_equal(parse("memif:/run/x.sock:client", &ps, err), 0);
	assert_string_equal(ps.path, "/run/x.sock");
	assert_false(ps.memif_server);

	/* Relative paths are taken as given. */
	assert_int_equal(parse("memif:x.sock:client", &ps, err), 0);
	assert_string_equal(ps.path, "x.sock");
	assert_false(ps.memif_server);
}

/*
 * Colons inside a memif path: the text after the last colon is a role only
 * if it has no '/'; so a colon in a directory name is part of the path, and
 * a colon in the last component needs an explicit role after it.
 */
static void test_memif_path_with_colons(void **state)
{
	struct port_spec ps;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(parse("memif:/run/a:b/x.sock", &ps, err), 0);
	assert_string_equal(ps.path, "/run/a:b/x.sock");
	assert_true(ps.memif_server);

	assert_int_equal(parse("memif:/run/a:b/x.sock:client", &ps, err), 0);
	assert_string_equal(ps.path, "/run/a:b/x.sock");
	assert_false(ps.memif_server);

	assert_int_equal(parse("memif:/run/x:y:server", &ps, err), 0);
	assert_string_equal(ps.path, "/run/x:y");
	assert_true(ps.memif_server);

	/* Without a role the last component's suffix is read as a bad role. */
	assert_int_equal(parse("memif:/run/x:y", &ps, err), -EINVAL);
	assert_non_null(strstr(err, "'y'"));
}

static void test_longest_names(void **state)
{
	struct port_spec ps;
	char err[ERRLEN], text[256], name[200];

	(void)state;
	/* Linux interface names (IFNAMSIZ - 1): 15 characters fit, 16 do not. */
	memset(name, 'a', 15);
	name[15] = '\0';
	snprintf(text, sizeof(text), "af_xdp:%s", name);
	assert_int_equal(parse(text, &ps, err), 0);
	assert_string_equal(ps.ifname, name);

	memset(name, 'a', 16);
	name[16] = '\0';
	snprintf(text, sizeof(text), "tap:%s", name);
	assert_int_equal(parse(text, &ps, err), -EINVAL);
	assert_non_null(strstr(err, "not a valid interface name"));
	assert_non_null(strstr(err, "15"));

	/* ... and hold no '/' or ':' (the kernel's dev_valid_name). */
	assert_int_equal(parse("af_xdp:veth:0", &ps, err), -EINVAL);
	assert_non_null(strstr(err, "not a valid interface name"));
	assert_int_equal(parse("tap:a/b", &ps, err), -EINVAL);

	memset(name, 'a', 40);
	name[40] = '\0';
	snprintf(text, sizeof(text), "tap:%s", name);
	assert_int_equal(parse(text, &ps, err), -EINVAL);
	assert_non_null(strstr(err, "too long"));

	/* path[108] (sun_path): 107 characters fit, 108 do not. */
	name[0] = '/';
	memset(name + 1, 'p', 106);
	name[107] = '\0';
	snprintf(text, sizeof(text), "memif:%s:client", name);
	assert_int_equal(parse(text, &ps, err), 0);
	assert_string_equal(ps.path, name);

	memset(name + 1, 'p', 107);
	name[108] = '\0';
	snprintf(text, sizeof(text), "memif:%s", name);
	assert_int_equal(parse(text, &ps, err), -EINVAL);
	assert_non_null(strstr(err, "too long"));
	assert_non_null(strstr(err, "memif socket path"));
}

/* A kind is matched whole: a name that only starts with a valid kind is unknown. */
static void test_kind_prefix_only(void **state)
{
	static const char *const bad[] = {"af_xdpx:veth0", "af_xdp0:veth0", "tapx:t0",
					  "memif2:/run/x.sock"};
	struct port_spec ps;
	char err[ERRLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &ps, err), -EINVAL);
		assert_non_null(strstr(err, "unknown port kind"));
		assert_int_equal(ps.kind, PORT_KIND_NONE);
	}
}

/* Interface names hold no white space: a space, tab or newline is refused. */
static void test_ifname_whitespace(void **state)
{
	static const char *const bad[] = {"af_xdp:eth 0", "af_xdp:eth0\n", "tap:t\t0", "tap: t0"};
	struct port_spec ps;
	char err[ERRLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &ps, err), -EINVAL);
		assert_non_null(strstr(err, "not a valid interface name"));
	}
}

static void test_unknown_kind(void **state)
{
	struct port_spec ps;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(parse("foo:bar", &ps, err), -EINVAL);
	assert_non_null(strstr(err, "'foo'"));
	assert_non_null(strstr(err, "unknown port kind"));
	assert_lists_forms(err);
	assert_int_equal(ps.kind, PORT_KIND_NONE);

	/* Kinds are case-sensitive and must match whole. */
	assert_int_equal(parse("AF_XDP:veth0", &ps, err), -EINVAL);
	assert_non_null(strstr(err, "'AF_XDP'"));
	assert_int_equal(parse("memifx:/run/x", &ps, err), -EINVAL);
	assert_non_null(strstr(err, "'memifx'"));
	assert_int_equal(parse(":veth0", &ps, err), -EINVAL);
	assert_true(strlen(err) > 0);
	assert_lists_forms(err);
}

static void test_no_colon(void **state)
{
	struct port_spec ps;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(parse("veth0", &ps, err), -EINVAL);
	assert_non_null(strstr(err, "'veth0'"));
	assert_lists_forms(err);
	assert_int_equal(parse("", &ps, err), -EINVAL);
	assert_lists_forms(err);
}

static void test_empty_name(void **state)
{
	struct port_spec ps;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(parse("af_xdp:", &ps, err), -EINVAL);
	assert_non_null(strstr(err, "missing interface name"));
	assert_lists_forms(err);
	assert_int_equal(parse("tap:", &ps, err), -EINVAL);
	assert_non_null(strstr(err, "missing tap name"));
	assert_int_equal(parse("memif:", &ps, err), -EINVAL);
	assert_non_null(strstr(err, "missing memif socket path"));
	assert_int_equal(parse("memif::server", &ps, err), -EINVAL);
	assert_non_null(strstr(err, "missing memif socket path"));
}

static void test_bad_memif_role(void **state)
{
	struct port_spec ps;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(parse("memif:/run/x.sock:master", &ps, err), -EINVAL);
	assert_non_null(strstr(err, "'master'"));
	assert_non_null(strstr(err, "server"));
	assert_non_null(strstr(err, "client"));
	assert_int_equal(parse("memif:/run/x.sock:", &ps, err), -EINVAL);
	assert_non_null(strstr(err, "''"));
	assert_int_equal(parse("memif:/run/x.sock:Server", &ps, err), -EINVAL);
}

/* A short error buffer truncates the message; it never overflows. */
static void test_short_err_buffer(void **state)
{
	struct port_spec ps;
	char err[16];

	(void)state;
	memset(err, 'Z', sizeof(err));
	assert_int_equal(port_spec_parse("foo:bar", &ps, err, 8), -EINVAL);
	assert_int_equal(strlen(err), 7);
	for (size_t i = 8; i < sizeof(err); i++)
		assert_int_equal(err[i], 'Z');
}

/* ---- --fault ---- */

static int fparse(const char *text, struct fault_spec *fs, char *err)
{
	err[0] = '\0';
	return fault_spec_parse(text, fs, err, ERRLEN);
}

#define assert_prob(a, b) assert_true(fabs((a) - (b)) < 1e-12)

static void test_fault_drop_forms(void **state)
{
	struct fault_spec fs;
	char err[ERRLEN];

	(void)state;
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fparse("drop=0.05", &fs, err), 0);
	assert_true(fs.enabled);
	assert_prob(fs.rx.drop, 0.05);
	assert_prob(fs.tx.drop, 0.05);

	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fparse("drop=5%", &fs, err), 0);
	assert_prob(fs.rx.drop, 0.05);
	assert_prob(fs.tx.drop, 0.05);

	/* The bounds are included. */
	assert_int_equal(fparse("drop=0", &fs, err), 0);
	assert_prob(fs.tx.drop, 0.0);
	assert_int_equal(fparse("drop=1", &fs, err), 0);
	assert_prob(fs.tx.drop, 1.0);
	assert_int_equal(fparse("drop=100%", &fs, err), 0);
	assert_prob(fs.rx.drop, 1.0);
}

static void test_fault_all_keys(void **state)
{
	struct fault_spec fs;
	char err[ERRLEN];

	(void)state;
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(
	    fparse("drop=0.1,dup=0.2,reorder=30%,corrupt=0.4,delay=7us,seed=9", &fs, err), 0);
	for (int t = 0; t < 2; t++) {
		const struct fault_dir *d = t ? &fs.tx : &fs.rx;

		assert_prob(d->drop, 0.1);
		assert_prob(d->dup, 0.2);
		assert_prob(d->reorder, 0.3);
		assert_prob(d->corrupt, 0.4);
		assert_int_equal(d->delay_us, 7);
	}
	assert_int_equal(fs.seed, 9);
}

static void test_fault_direction_prefix(void **state)
{
	struct fault_spec fs;
	char err[ERRLEN];

	(void)state;
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fparse("rx:drop=0.1,delay=3ms", &fs, err), 0);
	assert_prob(fs.rx.drop, 0.1);
	assert_int_equal(fs.rx.delay_us, 3000);
	assert_prob(fs.tx.drop, 0.0);
	assert_int_equal(fs.tx.delay_us, 0);

	/* A second call adds the other direction and leaves the first alone. */
	assert_int_equal(fparse("tx:dup=0.2,corrupt=1%", &fs, err), 0);
	assert_prob(fs.tx.dup, 0.2);
	assert_prob(fs.tx.corrupt, 0.01);
	assert_prob(fs.tx.drop, 0.0);
	assert_prob(fs.rx.drop, 0.1);
	assert_prob(fs.rx.dup, 0.0);
	assert_prob(fs.rx.corrupt, 0.0);
	assert_int_equal(fs.rx.delay_us, 3000);
	assert_true(fs.enabled);
}

static void test_fault_delay_units(void **state)
{
	struct fault_spec fs;
	char err[ERRLEN];

	(void)state;
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fparse("delay=500us", &fs, err), 0);
	assert_int_equal(fs.rx.delay_us, 500);
	assert_int_equal(fs.tx.delay_us, 500);
	assert_int_equal(fparse("delay=2ms", &fs, err), 0);
	assert_int_equal(fs.tx.delay_us, 2000);
	assert_int_equal(fparse("delay=42", &fs, err), 0); /* bare number: microseconds */
	assert_int_equal(fs.tx.delay_us, 42);
	assert_int_equal(fparse("delay=10000ms", &fs, err), 0); /* 10 s: the maximum */
	assert_int_equal(fs.tx.delay_us, 10000000);
}

static void test_fault_seed(void **state)
{
	struct fault_spec fs;
	char err[ERRLEN];

	(void)state;
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fparse("seed=12345678901", &fs, err), 0);
	assert_int_equal(fs.seed, 12345678901ull);
	assert_int_equal(fparse("seed=0x10", &fs, err), 0);
	assert_int_equal(fs.seed, 16);
	/* No sign, no wrap, no empty field: each is a typo, not a seed. */
	assert_int_equal(fparse("seed=-1", &fs, err), -EINVAL);
	assert_non_null(strstr(err, "2^64 - 1"));
	assert_int_equal(fparse("seed=+5", &fs, err), -EINVAL);
	assert_int_equal(fparse("seed=99999999999999999999", &fs, err), -EINVAL);
	assert_int_equal(fparse("rx:,", &fs, err), -EINVAL);
	assert_int_equal(fparse("drop=0.1,,dup=0.1", &fs, err), -EINVAL);
	assert_int_equal(fs.seed, 16);
	/* seed alone changes no rate */
	assert_prob(fs.rx.drop, 0.0);
	assert_int_equal(fparse("seed=abc", &fs, err), -EINVAL);
	assert_non_null(strstr(err, "seed=abc"));
	assert_int_equal(fparse("seed=", &fs, err), -EINVAL);
	assert_int_equal(fparse("seed=5x", &fs, err), -EINVAL);
}

static void test_fault_bad_probabilities(void **state)
{
	static const char *const bad[] = {"drop=2", "drop=abc", "drop=-0.1",	  "drop=101%",
					  "drop=",  "dup=0.5x", "reorder=1.0001", "corrupt=%"};
	struct fault_spec fs;
	char err[ERRLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&fs, 0, sizeof(fs));
		assert_int_equal(fparse(bad[i], &fs, err), -EINVAL);
		assert_true(strlen(err) > 0);
		assert_non_null(strstr(err, "probability"));
		assert_non_null(strstr(err, bad[i])); /* names key=value as written */
	}
}

/*
 * NaN is not a probability in [0,1]: "drop=nan" must be rejected like
 * drop=2.
 */
static void test_fault_nan_rejected(void **state)
{
	struct fault_spec fs;
	char err[ERRLEN];

	(void)state;
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fparse("drop=nan", &fs, err), -EINVAL);
	assert_int_equal(fparse("dup=nan%", &fs, err), -EINVAL);
	assert_int_equal(fparse("drop=inf", &fs, err), -EINVAL);
}

static void test_fault_bad_delay(void **state)
{
	static const char *const bad[] = {"delay=foo",	      "delay=5s", "delay=10001ms",
					  "delay=10000001us", "delay=",	  "delay=ms",
					  "delay=-5us"};
	struct fault_spec fs;
	char err[ERRLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&fs, 0, sizeof(fs));
		assert_int_equal(fparse(bad[i], &fs, err), -EINVAL);
		assert_non_null(strstr(err, bad[i]));
		assert_non_null(strstr(err, "500us"));
	}
}

/*
 * A delay whose millisecond count overflows when scaled to microseconds is
 * over the 10 s limit and must be rejected.
 */
static void test_fault_delay_overflow(void **state)
{
	struct fault_spec fs;
	char err[ERRLEN];

	(void)state;
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fparse("delay=18446744073709552ms", &fs, err), -EINVAL);
	assert_int_equal(fs.tx.delay_us, 0);
}

/* A valid delay parses whatever errno a caller's earlier library call left behind. */
static void test_fault_delay_stale_errno(void **state)
{
	struct fault_spec fs;
	char err[ERRLEN];

	(void)state;
	memset(&fs, 0, sizeof(fs));
	errno = ERANGE;
	assert_int_equal(fparse("delay=2ms", &fs, err), 0);
	assert_int_equal(fs.rx.delay_us, 2000);
	assert_int_equal(fs.tx.delay_us, 2000);
	errno = ERANGE;
	assert_int_equal(fparse("tx:delay=700us", &fs, err), 0);
	assert_int_equal(fs.tx.delay_us, 700);
}

/* A fault setting (after its rx:/tx: prefix) is at most 255 characters; 256 are refused. */
static void test_fault_length_limit(void **state)
{
	struct fault_spec fs;
	char err[ERRLEN], text[300];

	(void)state;
	memset(text, 0, sizeof(text));
	strcpy(text, "drop=0.");
	memset(text + 7, '0', 255 - 7);
	assert_int_equal(strlen(text), 255);
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fparse(text, &fs, err), 0);
	assert_true(fs.enabled);

	text[255] = '0'; /* 256 characters */
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fparse(text, &fs, err), -EINVAL);
	assert_true(strncmp(err, "--fault 'drop=0.", 16) == 0); /* the rest is truncated */
	assert_false(fs.enabled);

	/* The prefix does not count: "rx:" and 255 characters fit, and 256 do not. */
	memset(text, 0, sizeof(text));
	strcpy(text, "rx:drop=0.");
	memset(text + 10, '0', 258 - 10);
	assert_int_equal(fparse(text, &fs, err), 0);
	text[258] = '0';
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fparse(text, &fs, err), -EINVAL);
}

static void test_fault_bad_syntax(void **state)
{
	struct fault_spec fs;
	char err[ERRLEN], longtext[400];

	(void)state;
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(fparse("bogus=1", &fs, err), -EINVAL);
	assert_non_null(strstr(err, "unknown key 'bogus'"));
	assert_non_null(strstr(err, "drop"));

	assert_int_equal(fparse("drop", &fs, err), -EINVAL);
	assert_non_null(strstr(err, "'drop' is not key=value"));
	assert_int_equal(fparse("drop=0.1,dup", &fs, err), -EINVAL);
	assert_non_null(strstr(err, "'dup'"));

	assert_int_equal(fparse("", &fs, err), -EINVAL);
	assert_non_null(strstr(err, "key=value"));
	assert_int_equal(fparse("rx:", &fs, err), -EINVAL);
	assert_non_null(strstr(err, "key=value"));

	memset(longtext, 0, sizeof(longtext));
	strcpy(longtext, "drop=0.");
	memset(longtext + 7, '1', 300);
	assert_int_equal(fparse(longtext, &fs, err), -EINVAL);
	assert_true(strlen(err) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_af_xdp),
	    cmocka_unit_test(test_tap),
	    cmocka_unit_test(test_memif_roles),
	    cmocka_unit_test(test_memif_path_with_colons),
	    cmocka_unit_test(test_longest_names),
	    cmocka_unit_test(test_kind_prefix_only),
	    cmocka_unit_test(test_ifname_whitespace),
	    cmocka_unit_test(test_unknown_kind),
	    cmocka_unit_test(test_no_colon),
	    cmocka_unit_test(test_empty_name),
	    cmocka_unit_test(test_bad_memif_role),
	    cmocka_unit_test(test_short_err_buffer),
	    cmocka_unit_test(test_fault_drop_forms),
	    cmocka_unit_test(test_fault_all_keys),
	    cmocka_unit_test(test_fault_direction_prefix),
	    cmocka_unit_test(test_fault_delay_units),
	    cmocka_unit_test(test_fault_seed),
	    cmocka_unit_test(test_fault_bad_probabilities),
	    cmocka_unit_test(test_fault_nan_rejected),
	    cmocka_unit_test(test_fault_bad_delay),
	    cmocka_unit_test(test_fault_delay_overflow),
	    cmocka_unit_test(test_fault_delay_stale_errno),
	    cmocka_unit_test(test_fault_length_limit),
	    cmocka_unit_test(test_fault_bad_syntax),
	};

	return cmocka_run_group_tests_name("port/spec", tests, NULL, NULL);
}
