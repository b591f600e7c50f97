/*
 * test_options_tcp.c - the TCP options every program shares (loop/options.c):
 * --tcp-limits (into tcp/tcp_limits.h) and --keepalive (into tcp_config by
 * lunar_options_tcp()), --hystart, the loop's --idle-yield, and the syntax
 * of lists, addresses and paths: what each takes, and
 * that each wrong value is refused with a message saying what is wrong and
 * how to put it right.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "loop/env.h"
#include "loop/options.h"
#include "tcp/tcp_conn.h"

static int apply(struct lunar_options *o, const char *arg, char *err, size_t len)
{
	return lunar_options_apply(o, LUNAR_OPT_TCP_LIMITS, arg, err, len);
}

static void test_tcp_limits_taken(void **state)
{
	struct lunar_options o;
	struct tcp_limits l;
	char err[256];

	(void)state;
	lunar_options_init(&o);
	assert_int_equal(apply(&o, "conns=100000,half-open=0,mem=2G", err, sizeof(err)), 1);
	assert_int_equal(apply(&o, "time-wait=5000", err, sizeof(err)), 1); /* repeatable */
	assert_int_equal(o.tcp_limits.given, TCP_LIMIT_CONNS | TCP_LIMIT_HALF_OPEN |
						 TCP_LIMIT_TIME_WAIT | TCP_LIMIT_MEM);
	assert_int_equal(tcp_limits_resolve(&o.tcp_limits, 65536, &l, err, sizeof(err)), 0);
	assert_int_equal(l.max_conns, 100000); /* over the program's own number */
	assert_int_equal(l.max_half_open, 0);  /* cookies for every SYN */
	assert_int_equal(l.max_time_wait, 5000);
	assert_int_equal(l.mem_max, 2ull << 30);
	assert_int_equal(apply(&o, "mem=0", err, sizeof(err)), 1); /* no cap */

	/* Not given: the program's number and the defaults for it. */
	lunar_options_init(&o);
	assert_int_equal(tcp_limits_resolve(&o.tcp_limits, 1000, &l, err, sizeof(err)), 0);
	assert_int_equal(l.max_conns, 1000);
	assert_int_equal(l.max_half_open, 1000);
	assert_int_equal(l.max_time_wait, 500);
	assert_int_equal(l.mem_max, TCP_LIMITS_MEM_DEFAULT);
}

/*
 * --@name (option @code) @arg is refused (-EINVAL) with a message that says
 * @says and, unless NULL, @says_too.
 */
static void refused_with(struct lunar_options *o, int code, const char *name, const char *arg,
			 const char *says, const char *says_too)
{
	char err[256] = "";

	assert_int_equal(lunar_options_apply(o, code, arg, err, sizeof(err)), -EINVAL);
	if (!strstr(err, says) || (says_too && !strstr(err, says_too)))
		fail_msg("--%s %s: \"%s\" does not say \"%s\"%s%s", name, arg, err, says,
			 says_too ? " and " : "", says_too ? says_too : "");
}

static void refused(const char *arg, const char *says)
{
	struct lunar_options o;

	lunar_options_init(&o);
	refused_with(&o, LUNAR_OPT_TCP_LIMITS, "tcp-limits", arg, says, NULL);
}

static void test_tcp_limits_refused_with_reason(void **state)
{
	(void)state;
	refused("", "expected KEY=VALUE");
	refused("conns", "expected KEY=VALUE");
	refused("conns=0", "from 1 to 16777216");
	refused("conns=-1", "from 1 to 16777216");
	refused("half-open=99999999", "from 0 to 16777216");
	refused("time-wait=x", "whole number");
	refused("mem=1K", "at least 64K");
	refused("mem=12Q", "at least 64K");
	refused("backlog=5", "unknown limit 'backlog'");
}

/* Values given together must fit together: checked before anything starts. */
static void test_tcp_limits_checked_together(void **state)
{
	struct lunar_options o;
	char err[256];

	(void)state;
	lunar_options_init(&o);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_PORT, "tap:lt0", err, sizeof(err)), 1);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_IP, "10.0.0.1/24", err, sizeof(err)), 1);
	assert_int_equal(apply(&o, "conns=100,time-wait=200", err, sizeof(err)), 1);
	assert_int_equal(lunar_options_check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "raise conns or lower time-wait"));
	assert_int_equal(apply(&o, "time-wait=50", err, sizeof(err)), 1);
	assert_int_equal(lunar_options_check(&o, err, sizeof(err)), 0);
}

static void test_keepalive_taken(void **state)
{
	struct lunar_options o;
	struct tcp_config cfg;
	char err[256];

	(void)state;
	lunar_options_init(&o);
	tcp_config_default(&cfg);
	lunar_options_tcp(&o, &cfg);
	assert_false(cfg.keepalive); /* not given: off, RFC 1122's default */

	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_KEEPALIVE, "2,0.5,4", err, sizeof(err)),
			 1);
	lunar_options_tcp(&o, &cfg);
	assert_true(cfg.keepalive);
	assert_int_equal(cfg.keepalive_idle_ns, 2000000000ull);
	assert_int_equal(cfg.keepalive_intvl_ns, 500000000ull);
	assert_int_equal(cfg.keepalive_probes, 4);

	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_KEEPALIVE, "off", err, sizeof(err)), 1);
	lunar_options_tcp(&o, &cfg);
	assert_false(cfg.keepalive);
}

static void test_keepalive_refused_with_reason(void **state)
{
	static const char *const bad[] = {"",	     "on",	 "2",	   "2,1",
					  "2,1,0",   "2,1,1001", "0,1,3",  "2,-1,3",
					  "2,1,3,4", "x,1,3",	 "2,1,3x", "100000,1,3"};

	(void)state;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct lunar_options o;

		lunar_options_init(&o);
		refused_with(&o, LUNAR_OPT_KEEPALIVE, "keepalive", bad[i],
			     "expected IDLE,INTVL,PROBES", "e.g. 10,2,3");
		assert_int_equal(o.keepalive, -1); /* nothing half-applied */
	}
}

/* --probes: two probes, in recovery too, by default; N of them; or RFC 8985's one, none in
 * recovery. */
static void test_probes(void **state)
{
	static const char *const bad[] = {"", "0", "9", "RFC", "2x", "-1", " 2", "+2", "1,2"};
	struct lunar_options o;
	struct tcp_config cfg;
	char err[256];

	(void)state;
	lunar_options_init(&o);
	tcp_config_default(&cfg);
	lunar_options_tcp(&o, &cfg);
	assert_true(cfg.recovery_probe);
	assert_int_equal(cfg.probe_max, 2);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_PROBES, "rfc", err, sizeof(err)), 1);
	lunar_options_tcp(&o, &cfg);
	assert_false(cfg.recovery_probe);
	assert_int_equal(cfg.probe_max, 1);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_PROBES, "8", err, sizeof(err)), 1);
	lunar_options_tcp(&o, &cfg);
	assert_true(cfg.recovery_probe);
	assert_int_equal(cfg.probe_max, 8);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lunar_options_init(&o);
		refused_with(&o, LUNAR_OPT_PROBES, "probes", bad[i], "expected rfc", "1..8");
		assert_int_equal(o.probes, -1); /* nothing half-applied */
	}
}

/* --hystart: RFC 9406's bounds by default and with "on", none with "off", or bounds in us. */
static void test_hystart(void **state)
{
	static const char *const bad[] = {
	    "",		  "yes",  "20",		"0,200",   "200,20",  "20,",	 ",20",
	    "20,2000000", "x,20", "20,200,300", " 20,200", "+20,200", "20, 200", "20,-200"};
	struct lunar_options o;
	struct tcp_config cfg;
	char err[256];

	(void)state;
	lunar_options_init(&o);
	tcp_config_default(&cfg);
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.hystart_min_ns, TCP_HYSTART_MIN_RTT_THRESH_NS);
	assert_int_equal(cfg.hystart_max_ns, TCP_HYSTART_MAX_RTT_THRESH_NS);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_HYSTART, "20,200", err, sizeof(err)), 1);
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.hystart_min_ns, 20000);
	assert_int_equal(cfg.hystart_max_ns, 200000);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_HYSTART, "off", err, sizeof(err)), 1);
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.hystart_min_ns, 0);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_HYSTART, "on", err, sizeof(err)), 1);
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.hystart_min_ns, TCP_HYSTART_MIN_RTT_THRESH_NS);
	assert_int_equal(cfg.hystart_max_ns, TCP_HYSTART_MAX_RTT_THRESH_NS);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lunar_options_init(&o);
		refused_with(&o, LUNAR_OPT_HYSTART, "hystart", bad[i], "expected on",
			     "MIN_US,MAX_US");
		assert_int_equal(o.hystart_min_ns, -1); /* nothing half-applied */
	}
}

/* --pmtu-blackhole: tcp_config's 3,60 by default; RTOS, RTOS,HOLD_S or off; the rest refused. */
static void test_pmtu_blackhole(void **state)
{
	static const char *const bad[] = {"",	 "0",	     "17",    "on",	"3,",
					  ",60", "3,0",	     "3,x",   "3,60,1", " 3",
					  "-3",	 "3,100000", "3,601", "3, 60",	"3,+60"};
	struct lunar_options o;
	struct tcp_config cfg, def;
	char err[256];

	(void)state;
	lunar_options_init(&o);
	tcp_config_default(&def);
	cfg = def;
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.blackhole_rtos, 3);
	assert_int_equal(cfg.blackhole_hold_ns, 60000000000ull);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_PMTU_BLACKHOLE, "5", err, sizeof(err)),
			 1);
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.blackhole_rtos, 5);
	assert_int_equal(cfg.blackhole_hold_ns, 60000000000ull);
	assert_int_equal(
	    lunar_options_apply(&o, LUNAR_OPT_PMTU_BLACKHOLE, "2,1.5", err, sizeof(err)), 1);
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.blackhole_rtos, 2);
	assert_int_equal(cfg.blackhole_hold_ns, 1500000000ull);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_PMTU_BLACKHOLE, "off", err, sizeof(err)),
			 1);
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.blackhole_rtos, 0);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lunar_options_init(&o);
		refused_with(&o, LUNAR_OPT_PMTU_BLACKHOLE, "pmtu-blackhole", bad[i],
			     "expected RTOS[,HOLD_S]", "or off");
		assert_int_equal(o.blackhole_rtos, -1); /* nothing half-applied */
	}
}

/* --pmtu-probe: seconds between searches (fractions allowed), or off; junk refused, nothing
 * half-applied. */
static void test_pmtu_probe(void **state)
{
	static const char *const bad[] = {"",	 "0",	"0.5", "86401", "on",	"x",
					  " 60", "+60", "-1",  "60s",	"1e3x", "nan"};
	struct lunar_options o;
	struct tcp_config cfg, def;
	char err[256];

	(void)state;
	lunar_options_init(&o);
	tcp_config_default(&def);
	cfg = def;
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.probe_interval_ns, 600000000000ull);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_PMTU_PROBE, "30", err, sizeof(err)), 1);
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.probe_interval_ns, 30000000000ull);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_PMTU_PROBE, "1.5", err, sizeof(err)), 1);
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.probe_interval_ns, 1500000000ull);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_PMTU_PROBE, "off", err, sizeof(err)), 1);
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.probe_interval_ns, 0);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lunar_options_init(&o);
		refused_with(&o, LUNAR_OPT_PMTU_PROBE, "pmtu-probe", bad[i],
			     "expected seconds between path MTU searches", "or off");
		assert_true(o.probe_interval_s < 0); /* nothing half-applied */
	}
}

/* --gso: on by default, off turns it off, on again restores it; junk refused. */
/* --gso and --gro: on (the default) or off into tcp_config; anything else refused. */
static void on_off_option(int code, const char *name, bool (*get)(const struct tcp_config *),
			  bool (*off)(const struct lunar_options *))
{
	static const char *const bad[] = {"", "yes", "1", "ON", "off "};
	struct lunar_options o;
	struct tcp_config cfg;
	char err[256];

	lunar_options_init(&o);
	tcp_config_default(&cfg);
	lunar_options_tcp(&o, &cfg);
	assert_true(get(&cfg));
	assert_int_equal(lunar_options_apply(&o, code, "off", err, sizeof(err)), 1);
	lunar_options_tcp(&o, &cfg);
	assert_false(get(&cfg));
	assert_int_equal(lunar_options_apply(&o, code, "on", err, sizeof(err)), 1);
	tcp_config_default(&cfg);
	lunar_options_tcp(&o, &cfg);
	assert_true(get(&cfg));
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lunar_options_init(&o);
		refused_with(&o, code, name, bad[i], "expected on (the default) or off", NULL);
		assert_false(off(&o));
	}
}

static bool cfg_gso(const struct tcp_config *c)
{
	return c->gso;
}

static bool opt_no_gso(const struct lunar_options *o)
{
	return o->no_gso;
}

static bool cfg_gro(const struct tcp_config *c)
{
	return c->gro;
}

static bool opt_no_gro(const struct lunar_options *o)
{
	return o->no_gro;
}

static void test_gso(void **state)
{
	(void)state;
	on_off_option(LUNAR_OPT_GSO, "gso", cfg_gso, opt_no_gso);
}

static void test_gro(void **state)
{
	(void)state;
	on_off_option(LUNAR_OPT_GRO, "gro", cfg_gro, opt_no_gro);
}

/* --sock-buf: both buffers take it; unset leaves tcp_config's; out of range refused. */
static void test_sock_buf(void **state)
{
	static const char *const bad[] = {"", "4095", "2G", "1X", "-1", "1M1"};
	struct lunar_options o;
	struct tcp_config cfg, def;
	char err[256];

	(void)state;
	lunar_options_init(&o);
	tcp_config_default(&def);
	cfg = def;
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.snd_buf, def.snd_buf);
	assert_int_equal(cfg.rcv_buf, def.rcv_buf);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_SOCK_BUF, "4M", err, sizeof(err)), 1);
	lunar_options_tcp(&o, &cfg);
	assert_int_equal(cfg.snd_buf, 4u << 20);
	assert_int_equal(cfg.rcv_buf, 4u << 20);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lunar_options_init(&o);
		refused_with(&o, LUNAR_OPT_SOCK_BUF, "sock-buf", bad[i],
			     "expected a size from 4K to 1G", NULL);
		assert_int_equal(o.sock_buf, 0);
	}
}

/* --xdp-syncookies: on by default, on|off taken, anything else refused with what is expected. */
static void test_xdp_syncookies(void **state)
{
	static const char *const bad[] = {"", "1", "yes", "ON", "off "};
	struct lunar_options o;
	char err[256];

	(void)state;
	lunar_options_init(&o);
	assert_true(o.xdp_syncookies);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_XDP_SYNCOOKIES, "off", err, sizeof(err)),
			 1);
	assert_false(o.xdp_syncookies);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_XDP_SYNCOOKIES, "on", err, sizeof(err)),
			 1);
	assert_true(o.xdp_syncookies);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		refused_with(&o, LUNAR_OPT_XDP_SYNCOOKIES, "xdp-syncookies", bad[i],
			     "expected on (the default) or off", NULL);
		assert_true(o.xdp_syncookies);
	}
}

/* --idle-yield: never by default; a count of idle polls taken; junk and too large refused, the
 * value kept. */
/*
 * Lists with an empty field, an empty capture path, an address without
 * its prefix length and a gateway off the subnet: each a typo that used
 * to pass (strtok skipped the field, /32 was assumed) and is refused.
 */
static void test_lists_addresses_paths(void **state)
{
	static const char *const cores[] = {"0,,1", "0,", ",0", ""};
	struct lunar_options o;
	char err[256];

	(void)state;
	lunar_options_init(&o);
	for (unsigned i = 0; i < sizeof(cores) / sizeof(cores[0]); i++)
		refused_with(&o, LUNAR_OPT_CORE, "core", cores[i], "--core", "e.g. --core 0,1");
	assert_int_equal(o.n_workers, 1);
	refused("conns=5,", "expected KEY=VALUE");
	refused(",", "expected KEY=VALUE");
	refused_with(&o, LUNAR_OPT_PCAP, "pcap", "", "expected a file path", NULL);
	refused_with(&o, LUNAR_OPT_IP, "ip", "192.168.77.2", "prefix length", "/32");
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_PORT, "tap:lt0", err, sizeof(err)), 1);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_IP, "192.168.77.2/24", err, sizeof(err)),
			 1);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_GW, "10.9.9.9", err, sizeof(err)), 1);
	assert_int_equal(lunar_options_check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not on the subnet"));
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_GW, "192.168.77.1", err, sizeof(err)),
			 1);
	assert_int_equal(lunar_options_check(&o, err, sizeof(err)), 0);
}

static void test_idle_yield(void **state)
{
	static const char *const bad[] = {"", "-1", "x", "1000001", "5 ", " 5", "+5"};
	struct lunar_options o;
	char err[256];

	(void)state;
	lunar_options_init(&o);
	assert_int_equal(o.idle_yield, 0);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_IDLE_YIELD, "32", err, sizeof(err)), 1);
	assert_int_equal(o.idle_yield, 32);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_IDLE_YIELD, "0", err, sizeof(err)), 1);
	assert_int_equal(o.idle_yield, 0);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_IDLE_YIELD, "1000000", err, sizeof(err)),
			 1);
	assert_int_equal(o.idle_yield, 1000000);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_IDLE_YIELD, "32", err, sizeof(err)), 1);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		refused_with(&o, LUNAR_OPT_IDLE_YIELD, "idle-yield", bad[i],
			     "expected a whole number from 0 to 1000000", "--idle-yield");
		assert_int_equal(o.idle_yield, 32);
	}
}

/*
 * Every range's own ends are taken and the values just outside refused: the
 * limits, the sizes, the seconds and the counts the messages promise.
 */
static void test_bounds_are_inclusive(void **state)
{
	static const struct {
		int code;
		const char *arg;
		int rc;
	} cases[] = {
	    {LUNAR_OPT_TCP_LIMITS, "conns=16777216", 1},
	    {LUNAR_OPT_TCP_LIMITS, "conns=16777217", -EINVAL},
	    {LUNAR_OPT_TCP_LIMITS, "conns=1", 1},
	    {LUNAR_OPT_TCP_LIMITS, "conns=0", -EINVAL},
	    {LUNAR_OPT_TCP_LIMITS, "half-open=0,time-wait=0", 1},
	    {LUNAR_OPT_TCP_LIMITS, "mem=64K", 1},
	    {LUNAR_OPT_TCP_LIMITS, "mem=65535", -EINVAL},
	    {LUNAR_OPT_SOCK_BUF, "4K", 1},
	    {LUNAR_OPT_SOCK_BUF, "4095", -EINVAL},
	    {LUNAR_OPT_SOCK_BUF, "1G", 1},
	    {LUNAR_OPT_SOCK_BUF, "1073741825", -EINVAL},
	    {LUNAR_OPT_HYSTART, "1,1", 1},
	    {LUNAR_OPT_HYSTART, "0,1", -EINVAL},
	    {LUNAR_OPT_HYSTART, "1000000,1000000", 1},
	    {LUNAR_OPT_HYSTART, "1,1000001", -EINVAL},
	    {LUNAR_OPT_PMTU_BLACKHOLE, "16", 1},
	    {LUNAR_OPT_PMTU_BLACKHOLE, "17", -EINVAL},
	    {LUNAR_OPT_PMTU_BLACKHOLE, "1,1", 1},
	    {LUNAR_OPT_PMTU_BLACKHOLE, "1,0.9", -EINVAL},
	    {LUNAR_OPT_PMTU_BLACKHOLE, "1,600", 1},
	    {LUNAR_OPT_PMTU_BLACKHOLE, "1,600.5", -EINVAL},
	    {LUNAR_OPT_KEEPALIVE, "0.001,0.001,1", 1},
	    {LUNAR_OPT_KEEPALIVE, "0.001,0,1", -EINVAL},
	    {LUNAR_OPT_KEEPALIVE, "0,1,1", -EINVAL},
	    {LUNAR_OPT_KEEPALIVE, "86400,86400,1000", 1},
	    {LUNAR_OPT_KEEPALIVE, "nan,1,1", -EINVAL}, /* strtod() takes "nan" */
	    {LUNAR_OPT_KEEPALIVE, "1,nan,1", -EINVAL},
	    /* --reserved judges the whole argument: 31 characters, then 32 */
	    {LUNAR_OPT_RESERVED, "00000000000000000000000001-2000", 1},
	    {LUNAR_OPT_RESERVED, "000000000000000000000000001-2000", -EINVAL},
	};
	struct lunar_options o;
	char err[256];

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		lunar_options_init(&o);
		if (lunar_options_apply(&o, cases[i].code, cases[i].arg, err, sizeof(err)) !=
		    cases[i].rc)
			fail_msg("'%s': want %d (%s)", cases[i].arg, cases[i].rc, err);
	}
	lunar_options_init(&o);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_TCP_LIMITS, "half-open=0,time-wait=0",
					     err, sizeof(err)),
			 1);
	assert_int_equal(o.tcp_limits.given, TCP_LIMIT_HALF_OPEN | TCP_LIMIT_TIME_WAIT);
	assert_int_equal(o.tcp_limits.v.max_half_open, 0);
	assert_int_equal(o.tcp_limits.v.max_time_wait, 0);
	/* --hystart off after bounds were given: neither bound is left behind. */
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_HYSTART, "20,200", err, sizeof(err)), 1);
	assert_int_equal(lunar_options_apply(&o, LUNAR_OPT_HYSTART, "off", err, sizeof(err)), 1);
	assert_int_equal(o.hystart_min_ns, 0);
	assert_int_equal(o.hystart_max_ns, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tcp_limits_taken),
	    cmocka_unit_test(test_bounds_are_inclusive),
	    cmocka_unit_test(test_tcp_limits_refused_with_reason),
	    cmocka_unit_test(test_tcp_limits_checked_together),
	    cmocka_unit_test(test_keepalive_taken),
	    cmocka_unit_test(test_keepalive_refused_with_reason),
	    cmocka_unit_test(test_xdp_syncookies),
	    cmocka_unit_test(test_sock_buf),
	    cmocka_unit_test(test_idle_yield),
	    cmocka_unit_test(test_lists_addresses_paths),
	    cmocka_unit_test(test_hystart),
	    cmocka_unit_test(test_pmtu_blackhole),
	    cmocka_unit_test(test_pmtu_probe),
	    cmocka_unit_test(test_gso),
	    cmocka_unit_test(test_gro),
	    cmocka_unit_test(test_probes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
