/*
 * test_tcp_pressure.c - what the core does when the layer below says its
 * packet memory runs short (enum tcp_mem_pressure, tcp_stack.c "memory
 * pressure"): out-of-order data is refused and then pruned, the receive
 * window stops opening, and at the critical level no payload is kept while
 * ACKs are still processed. Each test checks that nothing is lost: the
 * data refused comes again and is delivered whole and in order.
 */
#include "tcp_script.h"

/* A receive buffer small enough to fill: 8 segments of 1000 bytes. */
static struct fixture_opts small_window(struct tcp_config *cfg)
{
	struct fixture_opts o = {.ts = true,
				 .sack = true,
				 .ws = false,
				 .peer_mss = 1460,
				 .peer_window = 65535,
				 .cfg = cfg};

	script_config(cfg);
	cfg->rcv_buf = 8000;
	cfg->delayed_ack = false;
	return o;
}

/*
 * TCP_MEM_LOW, RFC 9293 3.10.7.4 seventh (keeping out-of-order data is a
 * "may"): an out-of-order segment is not kept and not SACKed, the duplicate
 * ACK still goes at once (RFC 5681 4.2); in-order data is still taken, and
 * the refused segment is delivered when it comes again.
 */
static void test_low_refuses_out_of_order(void **state)
{
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = IRS + 1;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	s.c.mem_pressure = TCP_MEM_LOW;
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(t->opts.sack_count, 0); /* nothing held, nothing to SACK */
	assert_int_equal(s.c.reass.n, 0);
	assert_int_equal(s.c.stats.ooo_refused, 1);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000); /* in order: taken */
	drain_tx(&s);
	assert_int_equal(s.c.rcv_nxt, IRS + 1001);
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000); /* the retransmission */
	drain_tx(&s);
	assert_int_equal(recv_in_order(&s, &next, 0), 2000);
	script_end(&s);
}

/*
 * TCP_MEM_LOW, RFC 9293 3.8.6.2.2: the window's right edge does not move
 * while memory is short, even when the application takes everything (the
 * peer may send only what was already offered); a segment answered meanwhile
 * still says 0. When the pressure ends, tcp_window_update() announces the
 * whole window at once.
 */
static void test_low_holds_window_until_pressure_ends(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = small_window(&cfg);
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = IRS + 1;

	(void)state;
	fixture_established(&s, &o);
	for (unsigned i = 0; i < 8; i++)
		seg(&s, ACK, IRS + 1 + 1000 * i, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(s.c.rcv_adv, IRS + 8001);
	s.c.mem_pressure = TCP_MEM_LOW;
	assert_int_equal(recv_in_order(&s, &next, 0), 8000);
	expect_nothing(&s); /* the window could open by 8000, but not now */
	seg(&s, ACK, IRS + 8001, ISS + 1, 65535, 1); /* a window probe */
	t = expect_tx(&s, ACK, ISS + 1, IRS + 8001, 0);
	assert_int_equal(t->wnd, 0);
	assert_int_equal(s.c.rcv_adv, IRS + 8001);
	s.c.mem_pressure = TCP_MEM_NORMAL;
	tcp_window_update(&s.c, s.now, &s.out);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 8001, 0);
	assert_int_equal(t->wnd, 8000);
	expect_nothing(&s);
	/* Nothing more to announce: a second call sends nothing. */
	tcp_window_update(&s.c, s.now, &s.out);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * TCP_MEM_CRITICAL: a segment's payload is not kept even in order (no
 * RCV.NXT advance, no FIN taken with it), but its ACK is processed: it
 * frees our send buffer, which is what relieves the pressure. The duplicate
 * ACK goes at once; the data and FIN are taken when they come again.
 */
static void test_critical_drops_payload_keeps_ack(void **state)
{
	struct script s;
	uint32_t next = IRS + 1;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	s.c.mem_pressure = TCP_MEM_CRITICAL;
	seg(&s, ACK | FIN, IRS + 1, ISS + 1001, 65535, 500);
	expect_tx(&s, ACK, ISS + 1001, IRS + 1, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.snd_una, ISS + 1001); /* the ACK was taken */
	assert_int_equal(s.c.snd.bytes, 0);
	assert_int_equal(s.c.rcv_nxt, IRS + 1); /* the payload was not */
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_int_equal(s.c.stats.rcv_mem_dropped, 1);
	assert_int_equal(tcp_recv_bytes(&s.c), 0);
	s.c.mem_pressure = TCP_MEM_NORMAL;
	seg(&s, ACK | FIN, IRS + 1, ISS + 1001, 65535, 500);
	expect_tx(&s, ACK, ISS + 1001, IRS + 502, 0);
	assert_int_equal(s.c.state, TCP_CLOSE_WAIT);
	assert_int_equal(recv_in_order(&s, &next, 0), 500);
	script_end(&s);
}

/*
 * RFC 2018 8: a receiver may discard data it has SACKed. tcp_prune_ooo()
 * gives every held segment back (their Zbuf references too: script_end()
 * checks), later duplicate ACKs carry no SACK block, and the stream is
 * still delivered whole once the peer retransmits.
 */
static void test_prune_ooo_reneges(void **state)
{
	struct script s;
	const struct tcp_tx *t;
	uint32_t next = IRS + 1;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	seg(&s, ACK, IRS + 3001, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(s.c.reass.n, 2);
	assert_int_equal(tcp_prune_ooo(&s.c), 2000);
	assert_int_equal(s.c.reass.n, 0);
	assert_int_equal(s.c.stats.ooo_pruned_bytes, 2000);
	/* A new out-of-order segment: the SACK reports it alone, not what was given back. */
	seg(&s, ACK, IRS + 2001, ISS + 1, 65535, 1000);
	t = expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(t->opts.sack_count, 1);
	assert_int_equal(t->opts.sack[0].left, IRS + 2001);
	assert_int_equal(t->opts.sack[0].right, IRS + 3001);
	/* The peer resends what we gave back. */
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	seg(&s, ACK, IRS + 3001, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(recv_in_order(&s, &next, 0), 4000);
	assert_int_equal(s.c.rcv_nxt, IRS + 4001);
	script_end(&s);
}

/* Header prediction is not taken for data under pressure: the slow path decides. */
static void test_fast_path_declines_data_under_pressure(void **state)
{
	struct script s;
	uint64_t fast;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	fast = s.c.stats.fastpath_data;
	s.c.mem_pressure = TCP_MEM_CRITICAL;
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(s.c.stats.fastpath_data, fast);
	assert_int_equal(s.c.rcv_nxt, IRS + 1);
	s.c.mem_pressure = TCP_MEM_NORMAL;
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	drain_tx(&s);
	assert_int_equal(s.c.stats.fastpath_data, fast + 1);
	assert_int_equal(recv_all(&s), 1000);
	script_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_low_refuses_out_of_order),
	    cmocka_unit_test(test_low_holds_window_until_pressure_ends),
	    cmocka_unit_test(test_critical_drops_payload_keeps_ack),
	    cmocka_unit_test(test_prune_ooo_reneges),
	    cmocka_unit_test(test_fast_path_declines_data_under_pressure),
	};

	return cmocka_run_group_tests(tests, script_group_setup, script_group_teardown);
}
