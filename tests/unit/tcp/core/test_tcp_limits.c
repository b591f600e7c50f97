/*
 * test_tcp_limits.c - the per-connection limits of the core (struct
 * tcp_config: snd_buf, rcv_buf, reass_max_bytes / reass_max_segs), each
 * hit, its counter checked, and the connection shown to go on unharmed
 * once under it again. The stack-wide limits are tested with two stacks
 * in tests/unit/tcp/stack/test_tcp_stack_limits.c; docs/LIMITS.md has
 * the policy of each.
 */
#include "tcp_script.h"

/* Room for two out-of-order segments of 1000 bytes, no more. */
static struct fixture_opts small_reass(struct tcp_config *cfg)
{
	struct fixture_opts o = fixture_opts_with(cfg);

	script_config(cfg);
	cfg->delayed_ack = false;
	cfg->reass_max_bytes = 2000;
	cfg->reass_max_segs = 64;
	return o;
}

/*
 * reass_max_bytes: RFC 9293 3.10.7.4 lets a receiver keep segments beyond
 * RCV.NXT ("may"), so a third one beyond a full queue is dropped, counted
 * as ooo_full (not ooo_refused, which is memory pressure's) and left out
 * of the SACK blocks; the duplicate ACK still goes at once (RFC 5681 4.2).
 * What was kept is delivered with the hole, and the dropped segment when
 * it comes again.
 */
static void test_reass_full_counted_and_recovered(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = small_reass(&cfg);
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = IRS + 1;

	(void)state;
	fixture_established(&s, &o);
	prime_window(&s);
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	seg(&s, ACK, IRS + 3001, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(s.c.reass.bytes, 2000);
	seg(&s, ACK, IRS + 5001, ISS + 1, 65535, 1000); /* over reass_max_bytes */
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(t->opts.sack_count, 2); /* the two kept, not the third */
	assert_int_equal(s.c.stats.ooo_full, 1);
	assert_int_equal(s.c.stats.ooo_refused, 0);
	assert_int_equal(s.c.reass.bytes, 2000);

	/* The holes fill, the dropped segment comes again: everything, in order. */
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	seg(&s, ACK, IRS + 2001, ISS + 1, 65535, 1000);
	seg(&s, ACK, IRS + 4001, ISS + 1, 65535, 1000);
	seg(&s, ACK, IRS + 5001, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(s.c.rcv_nxt, IRS + 6001);
	assert_int_equal(recv_in_order(&s, &next, 0), 6000);
	assert_int_equal(s.c.stats.ooo_full, 1);
	script_end(&s);
}

/* reass_max_segs counts slices, not bytes: the same policy for many small segments. */
static void test_reass_segs_full_counted(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = small_reass(&cfg);
	struct script s;
	uint32_t next = IRS + 1;

	(void)state;
	cfg.reass_max_bytes = 60000;
	cfg.reass_max_segs = 3;
	fixture_established(&s, &o);
	prime_window(&s);
	for (uint32_t i = 0; i < 5; i++) /* holes of 10 bytes between segments of 10 */
		seg(&s, ACK, IRS + 11 + 20 * i, ISS + 1, 65535, 10);
	drain_tx(&s);
	assert_int_equal(s.c.reass.n, 3);
	assert_int_equal(s.c.stats.ooo_full, 2);
	for (uint32_t i = 0; i < 5; i++) {
		seg(&s, ACK, IRS + 1 + 20 * i, ISS + 1, 65535, 10);
		seg(&s, ACK, IRS + 11 + 20 * i, ISS + 1, 65535, 10);
	}
	drain_tx(&s);
	assert_int_equal(recv_in_order(&s, &next, 0), 100);
	script_end(&s);
}

/*
 * snd_buf: tcp_send() takes what fits and says how much (a short write);
 * a full buffer takes nothing (0, the application's EAGAIN). An ACK frees
 * space and raises TCP_EV_WRITABLE; the data queued was never given up.
 */
static void test_snd_buf_short_write_then_writable(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;

	(void)state;
	script_config(&cfg);
	cfg.snd_buf = 4000;
	fixture_established(&s, &o);
	prime_window(&s);
	assert_int_equal(app_send(&s, 6000), 4000);
	assert_int_equal(tcp_send_space(&s.c), 0);
	assert_int_equal(app_send(&s, 1000), 0);
	drain_tx(&s);
	s.c.events = 0;
	seg(&s, ACK, IRS + 1, ISS + 1001, 65535, 0);
	assert_true(s.c.events & TCP_EV_WRITABLE);
	assert_int_equal(tcp_send_space(&s.c), 1000);
	assert_int_equal(app_send(&s, 6000), 1000);
	drain_tx(&s);
	seg(&s, ACK, IRS + 1, ISS + 5001, 65535, 0);
	assert_int_equal(s.c.snd_una, ISS + 5001);
	assert_int_equal(s.c.snd.bytes, 0);
	drain_tx(&s);
	script_end(&s);
}

/*
 * rcv_buf: data beyond the window we advertised is not taken (RFC 9293
 * 3.10.7.4: the part beyond RCV.NXT + RCV.WND is trimmed, counted as
 * beyond_window; a segment wholly beyond is unacceptable, out_of_window),
 * the ACK says where we are and the window that is left; nothing taken is
 * lost and the window offered is never taken back (RFC 7323 2.4).
 */
static void test_rcv_buf_beyond_window_trimmed(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = IRS + 1, adv;

	(void)state;
	script_config(&cfg);
	cfg.rcv_buf = 4000;
	cfg.delayed_ack = false;
	o.ws = false;
	fixture_established(&s, &o);
	prime_window(&s);
	adv = s.c.rcv_adv;
	assert_int_equal(adv, IRS + 1 + 4000);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1400);
	seg(&s, ACK, IRS + 1401, ISS + 1, 65535, 1400);
	seg(&s, ACK, IRS + 2801, ISS + 1, 65535, 1400); /* 200 bytes beyond the window */
	drain_tx(&s);
	assert_int_equal(s.c.rcv_nxt, IRS + 4001);
	assert_int_equal(s.c.stats.beyond_window, 1);
	assert_int_equal(s.c.rcv_adv, adv);
	assert_int_equal(tcp_recv_bytes(&s.c), 4000);
	/* At the zero window's edge: the ACK is processed, the payload refused (3.10.7.4). */
	seg(&s, ACK, IRS + 4001, ISS + 1, 65535, 1000);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 4001, 0);
	assert_int_equal(t->wnd, 0);
	assert_int_equal(s.c.stats.beyond_window, 2);
	seg(&s, ACK, IRS + 5001, ISS + 1, 65535, 1000); /* wholly beyond: unacceptable */
	t = expect_tx(&s, ACK, ISS + 1, IRS + 4001, 0);
	assert_int_equal(t->wnd, 0);
	assert_int_equal(s.c.stats.out_of_window, 1);
	assert_int_equal(recv_in_order(&s, &next, 0), 4000);
	drain_tx(&s);
	seg(&s, ACK, IRS + 4001, ISS + 1, 65535, 1000); /* again, now that there is room */
	drain_tx(&s);
	assert_int_equal(recv_in_order(&s, &next, 0), 1000);
	script_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reass_full_counted_and_recovered),
	    cmocka_unit_test(test_reass_segs_full_counted),
	    cmocka_unit_test(test_snd_buf_short_write_then_writable),
	    cmocka_unit_test(test_rcv_buf_beyond_window_trimmed),
	};

	return cmocka_run_group_tests(tests, script_group_setup, script_group_teardown);
}
