/*
 * test_options.c - the options every lunar program shares that are not
 * TCP's (loop/options.c; test_options_tcp.c has those): the address, the
 * gateway, the MTU, the reserved range, the cores, the packet pool, the
 * congestion control and ECN, capture paths and sizes, and
 * lunar_options_check()'s refusals of options that do not go together.
 * Each value at both ends of its range is taken, each one just outside it
 * refused with a message that says what is expected, and a refused value
 * leaves what was set before it alone.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "loop/options.h"
#include "tcp/tcp_cc.h"
#include "tcp/tcp_conn.h"

static int apply(struct lunar_options *o, int code, const char *arg)
{
	char err[256] = "";
	int rc = lunar_options_apply(o, code, arg, err, sizeof(err));

	if (rc != 1 && rc != -EINVAL)
		fail_msg("%s: lunar_options_apply() returned %d", arg ? arg : "(none)", rc);
	return rc;
}

/* @arg for option @code is refused (-EINVAL) with a message containing @says. */
static void refused(struct lunar_options *o, int code, const char *arg, const char *says)
{
	char err[256] = "";

	assert_int_equal(lunar_options_apply(o, code, arg, err, sizeof(err)), -EINVAL);
	if (!strstr(err, says))
		fail_msg("'%s': \"%s\" does not say \"%s\"", arg, err, says);
}

/* lunar_options_check() refuses @o with a message containing @says. */
static void check_refuses(const struct lunar_options *o, const char *says)
{
	char err[256] = "";

	assert_int_equal(lunar_options_check(o, err, sizeof(err)), -EINVAL);
	if (!strstr(err, says))
		fail_msg("check: \"%s\" does not say \"%s\"", err, says);
}

static void check_takes(const struct lunar_options *o)
{
	char err[256] = "";

	if (lunar_options_check(o, err, sizeof(err)))
		fail_msg("check refused: %s", err);
}

/* --ip ADDR/LEN: prefix lengths 1 to 32; no address 0.0.0.0, no prefix left out. */
static void test_ip(void **state)
{
	static const char *const bad[] = {
	    "10.0.0.1/0",
	    "10.0.0.1/33",
	    "0.0.0.0/24",
	    "10.0.0.1/",
	    "10.0.0.256/24",
	    "10.0.0.1/-1",
	    "/24",
	    "10.0.0.1/2x",
	    "10.0.0.1/24444444444444444444444444444444444444444444444444444444444444444"};
	struct lunar_options o;

	(void)state;
	lunar_options_init(&o);
	assert_int_equal(apply(&o, LUNAR_OPT_IP, "10.1.2.3/1"), 1);
	assert_int_equal(o.ip, 0x0a010203);
	assert_int_equal(o.prefix_len, 1);
	assert_int_equal(apply(&o, LUNAR_OPT_IP, "192.168.77.2/32"), 1);
	assert_int_equal(o.ip, 0xc0a84d02);
	assert_int_equal(o.prefix_len, 32);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		refused(&o, LUNAR_OPT_IP, bad[i], "e.g. --ip 192.168.77.2/24");
		assert_int_equal(o.ip, 0xc0a84d02);
		assert_int_equal(o.prefix_len, 32);
	}
}

/* --gw: an address, not 0.0.0.0 (which would be no gateway at all). */
static void test_gw(void **state)
{
	struct lunar_options o;

	(void)state;
	lunar_options_init(&o);
	assert_int_equal(apply(&o, LUNAR_OPT_GW, "10.0.0.254"), 1);
	assert_int_equal(o.gw, 0x0a0000fe);
	refused(&o, LUNAR_OPT_GW, "0.0.0.0", "expected an IPv4 address");
	refused(&o, LUNAR_OPT_GW, "10.0.0", "expected an IPv4 address");
	refused(&o, LUNAR_OPT_GW, "", "expected an IPv4 address");
	assert_int_equal(o.gw, 0x0a0000fe);
}

/* --mtu 576..9000, kept when --port comes after it (and --trust-link too). */
static void test_mtu_and_port(void **state)
{
	static const char *const bad[] = {
	    "575", "9001", "", "x", "-1", "1500 ", "99999999999999999999"};
	struct lunar_options o;

	(void)state;
	lunar_options_init(&o);
	assert_false(o.has_port);
	assert_int_equal(apply(&o, LUNAR_OPT_MTU, "576"), 1);
	assert_int_equal(o.port.mtu, 576);
	assert_int_equal(apply(&o, LUNAR_OPT_MTU, "9000"), 1);
	assert_int_equal(o.port.mtu, 9000);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		refused(&o, LUNAR_OPT_MTU, bad[i], "expected 576..9000");
		assert_int_equal(o.port.mtu, 9000);
	}
	assert_int_equal(apply(&o, LUNAR_OPT_TRUST_LINK, NULL), 1);
	assert_int_equal(apply(&o, LUNAR_OPT_PORT, "memif:/run/x.sock:server"), 1);
	assert_true(o.has_port);
	assert_int_equal(o.port.kind, PORT_KIND_MEMIF);
	assert_int_equal(o.port.mtu, 9000);
	assert_true(o.port.trusted);
	/* A refused --port leaves the port given before it. */
	refused(&o, LUNAR_OPT_PORT, "nonsense:x", "af_xdp");
	assert_int_equal(o.port.kind, PORT_KIND_MEMIF);
	assert_int_equal(o.port.mtu, 9000);
}

/* --reserved LO-HI: 1 <= LO <= HI <= 65535. */
static void test_reserved(void **state)
{
	static const char *const bad[] = {"0-10", "10-5",   "1-65536",
					  "5",	  "61440-", "-65535",
					  "a-b",  "1-2-3",  "00000000000000000000000000000001-2"};
	struct lunar_options o;

	(void)state;
	lunar_options_init(&o);
	assert_int_equal(o.reserved_lo, 61440);
	assert_int_equal(o.reserved_hi, 65535);
	assert_int_equal(apply(&o, LUNAR_OPT_RESERVED, "1-1"), 1);
	assert_int_equal(o.reserved_lo, 1);
	assert_int_equal(o.reserved_hi, 1);
	assert_int_equal(apply(&o, LUNAR_OPT_RESERVED, "40000-65535"), 1);
	assert_int_equal(o.reserved_lo, 40000);
	assert_int_equal(o.reserved_hi, 65535);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		refused(&o, LUNAR_OPT_RESERVED, bad[i], "1 <= LO <= HI <= 65535");
		assert_int_equal(o.reserved_lo, 40000);
		assert_int_equal(o.reserved_hi, 65535);
	}
}

/* --core: one CPU, or up to LUNAR_MAX_WORKERS distinct CPUs below 1024. */
static void test_core(void **state)
{
	struct lunar_options o;

	(void)state;
	lunar_options_init(&o);
	assert_int_equal(o.n_workers, 1);
	assert_int_equal(apply(&o, LUNAR_OPT_CORE, "1023"), 1);
	assert_int_equal(o.n_workers, 1);
	assert_int_equal(o.core, 1023);
	assert_int_equal(apply(&o, LUNAR_OPT_CORE, "7,6,5,4,3,2,1,0"), 1);
	assert_int_equal(o.n_workers, LUNAR_MAX_WORKERS);
	assert_int_equal(o.core, 7);
	for (unsigned i = 0; i < LUNAR_MAX_WORKERS; i++)
		assert_int_equal(o.cores[i], LUNAR_MAX_WORKERS - 1 - i);
	refused(&o, LUNAR_OPT_CORE, "0,1,2,3,4,5,6,7,8", "up to 8 distinct CPUs");
	refused(&o, LUNAR_OPT_CORE, "1024", "e.g. --core 0,1");
	refused(&o, LUNAR_OPT_CORE, "2,1,2", "distinct");
	refused(&o, LUNAR_OPT_CORE, "1,1", "distinct");
	assert_int_equal(o.n_workers, LUNAR_MAX_WORKERS);
	assert_int_equal(apply(&o, LUNAR_OPT_CORE, "3,5"), 1);
	assert_int_equal(o.n_workers, 2);
	assert_int_equal(o.core, 3);
	assert_int_equal(o.cores[1], 5);
}

/* --pool LUNAR_POOL_MIN..LUNAR_POOL_MAX packet buffers. */
static void test_pool(void **state)
{
	struct lunar_options o;

	(void)state;
	lunar_options_init(&o);
	assert_int_equal(o.pool_mbufs, 0); /* the default size */
	assert_int_equal(apply(&o, LUNAR_OPT_POOL, "2048"), 1);
	assert_int_equal(o.pool_mbufs, LUNAR_POOL_MIN);
	assert_int_equal(apply(&o, LUNAR_OPT_POOL, "262144"), 1);
	assert_int_equal(o.pool_mbufs, LUNAR_POOL_MAX);
	refused(&o, LUNAR_OPT_POOL, "2047", "2048..262144");
	refused(&o, LUNAR_OPT_POOL, "262145", "2048..262144");
	refused(&o, LUNAR_OPT_POOL, "4k", "packet buffers");
	assert_int_equal(o.pool_mbufs, LUNAR_POOL_MAX);
}

/* --cc by name, --ecn's three modes; anything else refused, the last good value kept. */
static void test_cc_and_ecn(void **state)
{
	struct lunar_options o;

	(void)state;
	lunar_options_init(&o);
	assert_int_equal(o.cc, -1);
	assert_int_equal(o.ecn, -1);
	assert_int_equal(apply(&o, LUNAR_OPT_CC, "cubic"), 1);
	assert_int_equal(o.cc, TCP_CC_CUBIC);
	assert_int_equal(apply(&o, LUNAR_OPT_CC, "dctcp"), 1);
	assert_int_equal(o.cc, TCP_CC_DCTCP);
	assert_int_equal(apply(&o, LUNAR_OPT_CC, "newreno"), 1);
	assert_int_equal(o.cc, TCP_CC_NEWRENO);
	refused(&o, LUNAR_OPT_CC, "bbr", "use newreno, cubic or dctcp");
	assert_int_equal(apply(&o, LUNAR_OPT_ECN, "on"), 1);
	assert_int_equal(o.ecn, TCP_ECN_ON);
	assert_int_equal(apply(&o, LUNAR_OPT_ECN, "off"), 1);
	assert_int_equal(o.ecn, TCP_ECN_OFF);
	assert_int_equal(apply(&o, LUNAR_OPT_ECN, "accept"), 1);
	assert_int_equal(o.ecn, TCP_ECN_ACCEPT);
	refused(&o, LUNAR_OPT_ECN, "yes", "expected on (ask and accept), off or accept");
	assert_int_equal(o.ecn, TCP_ECN_ACCEPT);
}

/* --pcap: a path of 1 to 255 bytes, kept whole. */
static void test_pcap_path(void **state)
{
	struct lunar_options o;
	char path[300];

	(void)state;
	lunar_options_init(&o);
	memset(path, 'p', sizeof(path));
	path[255] = '\0';
	assert_int_equal(apply(&o, LUNAR_OPT_PCAP, path), 1);
	assert_string_equal(o.pcap, path);
	path[255] = 'p';
	path[256] = '\0';
	refused(&o, LUNAR_OPT_PCAP, path, "expected a file path of 1..255 bytes, got 256");
	assert_int_equal(strlen(o.pcap), 255);
}

/* Sizes: K, M and G in either case, nothing after them, no sign, no overflow. */
static void test_sizes(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(parse_size("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_size("4K", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_size("3k", &v), 0);
	assert_int_equal(v, 3072);
	assert_int_equal(parse_size("2M", &v), 0);
	assert_int_equal(v, 2u << 20);
	assert_int_equal(parse_size("5m", &v), 0);
	assert_int_equal(v, 5u << 20);
	assert_int_equal(parse_size("3G", &v), 0);
	assert_int_equal(v, 3ull << 30);
	assert_int_equal(parse_size("1g", &v), 0);
	assert_int_equal(v, 1ull << 30);
	assert_int_equal(parse_size("4294967296G", &v), 0); /* 2^62 exactly */
	assert_int_equal(v, 1ull << 62);
	v = 7;
	assert_int_equal(parse_size("4294967297G", &v), -EINVAL);
	assert_int_equal(parse_size("99999999999999999999", &v), -EINVAL);
	assert_int_equal(parse_size("1T", &v), -EINVAL);
	assert_int_equal(parse_size("1KB", &v), -EINVAL);
	assert_int_equal(parse_size("-1", &v), -EINVAL);
	assert_int_equal(parse_size(" 1", &v), -EINVAL);
	assert_int_equal(parse_size("", &v), -EINVAL);
	assert_int_equal(parse_size("K", &v), -EINVAL);
	assert_int_equal(v, 7);
}

/* What lunar_options_check() refuses: options that cannot work together. */
static void test_check(void **state)
{
	struct lunar_options o;

	(void)state;
	lunar_options_init(&o);
	check_refuses(&o, "no --port given");

	/* Only af_xdp borrows the kernel's address. */
	assert_int_equal(apply(&o, LUNAR_OPT_PORT, "memif:/run/x.sock"), 1);
	check_refuses(&o, "--port memif needs --ip");
	assert_int_equal(apply(&o, LUNAR_OPT_PORT, "af_xdp:veth0"), 1);
	check_takes(&o);

	/* af_xdp in copy mode: 3000 bytes at most. */
	assert_int_equal(apply(&o, LUNAR_OPT_MTU, "3000"), 1);
	check_takes(&o);
	assert_int_equal(apply(&o, LUNAR_OPT_MTU, "3001"), 1);
	check_refuses(&o, "at most 3000 bytes");
	assert_int_equal(apply(&o, LUNAR_OPT_MTU, "1500"), 1);

	/* A trusted link is memif's alone, and never with corruption injected. */
	assert_int_equal(apply(&o, LUNAR_OPT_TRUST_LINK, NULL), 1);
	check_refuses(&o, "--trust-link is for memif");
	assert_int_equal(apply(&o, LUNAR_OPT_PORT, "memif:/run/x.sock"), 1);
	assert_int_equal(apply(&o, LUNAR_OPT_IP, "10.0.0.1/24"), 1);
	check_takes(&o);
	assert_int_equal(apply(&o, LUNAR_OPT_FAULT, "drop=0.1"), 1);
	check_takes(&o);
	assert_int_equal(apply(&o, LUNAR_OPT_FAULT, "tx:corrupt=0.01"), 1);
	check_refuses(&o, "nothing would catch the corruption");
	lunar_options_init(&o);
	assert_int_equal(apply(&o, LUNAR_OPT_PORT, "memif:/run/x.sock"), 1);
	assert_int_equal(apply(&o, LUNAR_OPT_IP, "10.0.0.1/24"), 1);
	assert_int_equal(apply(&o, LUNAR_OPT_TRUST_LINK, NULL), 1);
	assert_int_equal(apply(&o, LUNAR_OPT_FAULT, "rx:corrupt=0.01"), 1);
	check_refuses(&o, "nothing would catch the corruption");

	/* A tap port has one queue; a capture takes one worker. */
	lunar_options_init(&o);
	assert_int_equal(apply(&o, LUNAR_OPT_PORT, "tap:lt0"), 1);
	assert_int_equal(apply(&o, LUNAR_OPT_IP, "10.0.0.1/24"), 1);
	assert_int_equal(apply(&o, LUNAR_OPT_CORE, "0,1"), 1);
	check_refuses(&o, "a tap port has one queue");
	assert_int_equal(apply(&o, LUNAR_OPT_PORT, "memif:/run/x.sock"), 1);
	check_takes(&o);
	assert_int_equal(apply(&o, LUNAR_OPT_PCAP, "/tmp/x.pcap"), 1);
	check_refuses(&o, "capture one worker at a time");
	assert_int_equal(apply(&o, LUNAR_OPT_CORE, "1"), 1);
	check_takes(&o);
}

/* The gateway must be on the link: its subnet judged at every prefix length. */
static void test_gateway_on_subnet(void **state)
{
	struct lunar_options o;

	(void)state;
	lunar_options_init(&o);
	assert_int_equal(apply(&o, LUNAR_OPT_PORT, "memif:/run/x.sock"), 1);
	assert_int_equal(apply(&o, LUNAR_OPT_IP, "10.0.0.1/32"), 1);
	assert_int_equal(apply(&o, LUNAR_OPT_GW, "10.0.0.1"), 1); /* /32: only itself */
	check_takes(&o);
	assert_int_equal(apply(&o, LUNAR_OPT_GW, "10.0.0.2"), 1);
	check_refuses(&o, "not on the subnet");
	assert_int_equal(apply(&o, LUNAR_OPT_IP, "10.0.0.1/31"), 1);
	check_refuses(&o, "not on the subnet");
	assert_int_equal(apply(&o, LUNAR_OPT_GW, "10.0.0.0"), 1);
	check_takes(&o);
	assert_int_equal(apply(&o, LUNAR_OPT_GW, "10.0.0.3"), 1);
	check_refuses(&o, "not on the subnet");
	assert_int_equal(apply(&o, LUNAR_OPT_IP, "10.0.0.1/1"), 1);
	assert_int_equal(apply(&o, LUNAR_OPT_GW, "127.255.255.254"), 1);
	check_takes(&o);
	assert_int_equal(apply(&o, LUNAR_OPT_GW, "128.0.0.1"), 1);
	check_refuses(&o, "/1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ip),
	    cmocka_unit_test(test_gw),
	    cmocka_unit_test(test_mtu_and_port),
	    cmocka_unit_test(test_reserved),
	    cmocka_unit_test(test_core),
	    cmocka_unit_test(test_pool),
	    cmocka_unit_test(test_cc_and_ecn),
	    cmocka_unit_test(test_pcap_path),
	    cmocka_unit_test(test_sizes),
	    cmocka_unit_test(test_check),
	    cmocka_unit_test(test_gateway_on_subnet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
