/*
 * test_tcp_syncookie.c - tcp/tcp_syncookie.c: a cookie made for a SYN
 * gives back that SYN's options (MSS rounded down to the table, window
 * scale, SACK-permitted) from the handshake's ACK, within its lifetime,
 * and nothing else checks: another 4-tuple, another peer ISN, another
 * secret, a changed bit, an expired slot.
 *
 * The MAC is 23 bits: a wrong cookie passes by chance with probability
 * 2^-22 per check (two slots). The key and inputs here are fixed, so the
 * outcome is the same on every run; with about 2,000 forged checks, a
 * correct implementation fails this test for some key with probability
 * about 4.8e-4, and for this one it does not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp/tcp_syncookie.h"

#define SLOT_NS (1ull << TCP_SYNCOOKIE_SLOT_SHIFT)

static const uint8_t key[TCP_SYNCOOKIE_KEY_BYTES] = "lunar-test-key!";
static const uint8_t other_key[TCP_SYNCOOKIE_KEY_BYTES] = "lunar-test-key?";
static const struct tcp_4tuple tuple = {
    .laddr = 0x0a000002, .raddr = 0x0a000001, .lport = 7000, .rport = 40001};

static struct tcp_repr syn_with(uint32_t isn, bool mss, uint16_t mss_val, bool ws, uint8_t ws_val,
				bool sack)
{
	struct tcp_repr r;

	memset(&r, 0, sizeof(r));
	r.sport = tuple.rport;
	r.dport = tuple.lport;
	r.seq = isn;
	r.flags = 0x02; /* SYN */
	r.window = 65535;
	r.opts.has_mss = mss;
	r.opts.mss = mss_val;
	r.opts.has_wscale = ws;
	r.opts.wscale = ws_val;
	r.opts.sack_permitted = sack;
	return r;
}

/* The ACK a peer sends back for a SYN-ACK with ISN @cookie. */
static struct tcp_repr ack_for(const struct tcp_repr *syn, uint32_t cookie)
{
	struct tcp_repr r;

	memset(&r, 0, sizeof(r));
	r.sport = syn->sport;
	r.dport = syn->dport;
	r.seq = syn->seq + 1;
	r.ack = cookie + 1;
	r.flags = 0x10; /* ACK */
	return r;
}

/* Options come back: MSS rounded down to the table, window scale (or none), SACK. */
static void test_options_round_trip(void **state)
{
	static const struct {
		bool has_mss;
		uint16_t mss, want_mss;
		bool ws;
		uint8_t wscale, want_wscale;
		bool sack;
	} cases[] = {
	    {true, 1460, 1460, true, 7, 7, true},    {true, 1448, 1440, false, 0, 0, false},
	    {false, 0, 536, true, 0, 0, false},	     {true, 8960, 8960, true, 14, 14, true},
	    {true, 9000, 8960, true, 15, 14, false}, /* RFC 7323 2.3: above 14 means 14 */
	    {true, 100, 536, false, 0, 0, true},     /* below the table: its smallest */
	    {true, 4096, 4036, true, 9, 9, true},    {true, 1300, 1200, true, 2, 2, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tcp_repr syn =
		    syn_with(0x12345678u + (uint32_t)i * 977, cases[i].has_mss, cases[i].mss,
			     cases[i].ws, cases[i].wscale, cases[i].sack);
		uint64_t now = 5 * SLOT_NS + 1000;
		uint32_t cookie = tcp_syncookie_make(key, &tuple, &syn, now);
		struct tcp_repr ack = ack_for(&syn, cookie);
		struct tcp_syncookie_opts o;

		memset(&o, 0xa5, sizeof(o));
		assert_true(tcp_syncookie_check(key, &tuple, &ack, now + 1000, &o));
		assert_int_equal(o.mss, cases[i].want_mss);
		assert_int_equal(o.has_wscale, cases[i].ws);
		if (cases[i].ws)
			assert_int_equal(o.wscale, cases[i].want_wscale);
		assert_int_equal(o.sack_permitted, cases[i].sack);
	}
}

/* A cookie is good in its slot and the next, not after (RFC 4987 3.6: a limited lifetime). */
static void test_lifetime(void **state)
{
	struct tcp_repr syn = syn_with(777, true, 1460, true, 7, true);
	uint64_t made = 10 * SLOT_NS + SLOT_NS / 2;
	uint32_t cookie = tcp_syncookie_make(key, &tuple, &syn, made);
	struct tcp_repr ack = ack_for(&syn, cookie);
	struct tcp_syncookie_opts o;

	(void)state;
	assert_true(tcp_syncookie_check(key, &tuple, &ack, made, &o));
	assert_true(tcp_syncookie_check(key, &tuple, &ack, made + SLOT_NS, &o));
	assert_false(tcp_syncookie_check(key, &tuple, &ack, made + 2 * SLOT_NS, &o));
	assert_false(tcp_syncookie_check(key, &tuple, &ack, made + 40 * SLOT_NS, &o));
	/* from the future */
	assert_false(tcp_syncookie_check(key, &tuple, &ack, made - SLOT_NS, &o));
}

/* Only the handshake it was made for checks: tuple, peer ISN, key, every bit. */
static void test_forgeries_fail(void **state)
{
	struct tcp_repr syn = syn_with(0xfffffff0u, true, 1460, true, 7, true);
	uint64_t now = 3 * SLOT_NS;
	uint32_t cookie = tcp_syncookie_make(key, &tuple, &syn, now);
	struct tcp_repr ack = ack_for(&syn, cookie), bad;
	struct tcp_syncookie_opts o;
	struct tcp_4tuple t;

	(void)state;
	assert_true(tcp_syncookie_check(key, &tuple, &ack, now, &o));
	assert_false(tcp_syncookie_check(other_key, &tuple, &ack, now, &o));
	for (int f = 0; f < 4; f++) {
		t = tuple;
		if (f == 0)
			t.laddr ^= 1;
		else if (f == 1)
			t.raddr ^= 0x100;
		else if (f == 2)
			t.lport++;
		else
			t.rport++;
		assert_false(tcp_syncookie_check(key, &t, &ack, now, &o));
	}
	/* Every single-bit change of the acknowledged cookie, options bits included. */
	for (int b = 0; b < 32; b++) {
		bad = ack;
		bad.ack ^= 1u << b;
		if (tcp_syncookie_check(key, &tuple, &bad, now, &o))
			fail_msg("cookie with bit %d flipped accepted", b);
	}
	/* Another peer ISN (the ACK's sequence number), near and far. */
	for (uint32_t d = 1; d < 1000; d += 7) {
		bad = ack;
		bad.seq += d;
		assert_false(tcp_syncookie_check(key, &tuple, &bad, now, &o));
	}
	/* Guessed cookies: a blind attacker's ACKs. */
	for (uint32_t g = 0; g < 1000; g++) {
		bad = ack;
		bad.ack = g * 4294967u + 12345u;
		if (bad.ack == ack.ack)
			continue;
		assert_false(tcp_syncookie_check(key, &tuple, &bad, now, &o));
	}
}

/* The same SYN under the same key and slot gives the same cookie; another ISN another. */
static void test_deterministic(void **state)
{
	struct tcp_repr a = syn_with(1, true, 1460, false, 0, false), b = a;
	uint64_t now = 7 * SLOT_NS;

	(void)state;
	assert_int_equal(tcp_syncookie_make(key, &tuple, &a, now),
			 tcp_syncookie_make(key, &tuple, &a, now + SLOT_NS / 4));
	b.seq = 2;
	assert_int_not_equal(tcp_syncookie_make(key, &tuple, &a, now) & 0x7fffff,
			     tcp_syncookie_make(key, &tuple, &b, now) & 0x7fffff);
}

/* RFC 3168 6.1.1: whether the SYN asked for ECN (ECE and CWR, not one alone) comes back. */
static void test_ecn_round_trip(void **state)
{
	static const uint8_t flags[] = {0x02, 0x02 | 0x40, 0x02 | 0x80, 0x02 | 0x40 | 0x80};
	uint64_t now = 5 * SLOT_NS;

	(void)state;
	for (unsigned i = 0; i < sizeof(flags); i++) {
		struct tcp_repr syn = syn_with(4242, true, 1460, true, 7, true);
		struct tcp_syncookie_opts o;
		struct tcp_repr ack;

		syn.flags = flags[i];
		ack = ack_for(&syn, tcp_syncookie_make(key, &tuple, &syn, now));
		assert_true(tcp_syncookie_check(key, &tuple, &ack, now, &o));
		assert_int_equal(o.ecn_setup, i == 3);
		assert_true(o.sack_permitted);
		assert_int_equal(o.wscale, 7);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ecn_round_trip), cmocka_unit_test(test_options_round_trip),
	    cmocka_unit_test(test_lifetime),	   cmocka_unit_test(test_forgeries_fail),
	    cmocka_unit_test(test_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
