/*
 * test_tcp_basic.c - the core's main paths, one behaviour each: the three
 * handshakes, data both ways with delayed ACKs, and the closes.
 */
#include "tcp_script.h"

/* RFC 9293 3.5 figure 6: active open, SYN, SYN-ACK, ACK. */
static void test_active_open(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	assert_int_equal(s.c.snd_una, ISS + 1);
	assert_int_equal(s.c.rcv_nxt, IRS + 1);
	assert_true(s.c.ws_ok && s.c.ts_ok && s.c.sack_ok);
	/* RFC 7323 2.2: the window in a SYN-ACK is not scaled ... */
	assert_int_equal(s.c.snd_wnd, 65535);
	assert_int_equal(s.c.snd_mss, 1460 - 12); /* 3.7.1: minus the timestamp option */
	/* ... every later one is (2.3). */
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	assert_int_equal(s.c.snd_wnd, 65535u << 7);
	script_end(&s);
}

/* RFC 9293 3.5 figure 6 from the other side: passive open. */
static void test_passive_open(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_received(&s, NULL);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_true(s.c.events & TCP_EV_CONNECTED);
	script_end(&s);
}

/* RFC 9293 3.10.7.4 seventh, RFC 1122 4.2.3.2: in-order data, ACK every second segment. */
static void test_receive_delayed_ack(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 1000);
	expect_nothing(&s); /* first segment: ACK delayed */
	seg(&s, ACK, IRS + 1001, ISS + 1, 65535, 1000);
	expect_tx(&s, ACK, ISS + 1, IRS + 2001, 0); /* second: ACK now */
	/* Header prediction took both: the first one's window change is taken on the way. */
	assert_int_equal(s.c.stats.fastpath_data, 2);
	assert_int_equal(s.c.stats.slowpath, 0);
	seg(&s, ACK, IRS + 2001, ISS + 1, 65535, 100);
	expect_nothing(&s);
	advance(&s, 500 * US); /* the delayed-ACK timer */
	expect_tx(&s, ACK, ISS + 1, IRS + 2101, 0);
	assert_int_equal(tcp_recv_bytes(&s.c), 2100);
	{
		struct tcp_slice sl[8];
		unsigned n = tcp_recv(&s.c, sl, 8, s.now, &s.out);
		uint32_t total = 0;

		assert_int_equal(n, 3);
		for (unsigned i = 0; i < n; i++) {
			for (uint32_t k = 0; k < sl[i].len; k++)
				assert_int_equal(sl[i].data[k], (uint8_t)(sl[i].seq + k));
			total += sl[i].len;
			zbuf_unref(sl[i].data);
		}
		assert_int_equal(total, 2100);
	}
	script_end(&s);
}

/* RFC 9293 3.10.2 SEND, 3.8.6.2.1: data out in MSS-sized segments, acknowledged. */
static void test_send_and_ack(void **state)
{
	struct script s;
	uint32_t mss;

	(void)state;
	fixture_established(&s, NULL);
	mss = s.c.snd_mss;
	assert_int_equal(app_send(&s, 3000), 3000);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, mss);
	expect_tx(&s, ACK, ISS + 1 + mss, IRS + 1, mss);
	expect_tx(&s, ACK | PSH, ISS + 1 + 2 * mss, IRS + 1, 3000 - 2 * mss);
	expect_nothing(&s);
	advance(&s, 100 * US);
	seg(&s, ACK, IRS + 1, ISS + 3001, 65535, 0);
	assert_int_equal(s.c.snd_una, ISS + 3001);
	assert_int_equal(s.c.rto_at, 0);
	assert_true(s.c.events & TCP_EV_WRITABLE);
	assert_true(s.c.rtt.have_sample);
	assert_int_equal(s.c.snd.bytes, 0);
	script_end(&s);
}

/*
 * Header prediction on an RPC's reply: data in order whose ACK also takes
 * our request and changes the window. The fast path must do what RFC 9293
 * 3.10.7.4's fifth and seventh checks do: SND.UNA advances, the send buffer
 * empties, the window follows the rule, the data is queued; and a pure
 * duplicate ACK or a zero window still goes the full way.
 */
static void test_fast_path_reply_acks_request(void **state)
{
	struct script s;
	uint32_t mss, wl1;

	(void)state;
	fixture_established(&s, NULL);
	mss = s.c.snd_mss;
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	advance(&s, 100 * US);
	wl1 = s.c.snd_wl1;
	seg(&s, ACK, IRS + 1, ISS + 1001, 40000, mss);
	assert_int_equal(s.c.stats.fastpath_data, 1);
	assert_int_equal(s.c.stats.slowpath, 0);
	assert_int_equal(s.c.snd_una, ISS + 1001);
	assert_int_equal(s.c.snd.bytes, 0);
	assert_int_equal(s.c.rto_at, 0);
	assert_true(s.c.rtt.have_sample);
	assert_int_equal(s.c.snd_wnd, 40000u << s.c.snd_wscale);
	assert_true(s.c.snd_wl1 == IRS + 1 && wl1 <= IRS + 1);
	assert_int_equal(s.c.snd_wl2, ISS + 1001);
	assert_int_equal(tcp_recv_bytes(&s.c), mss);
	expect_nothing(&s); /* one segment: its ACK is delayed */
	/* The same ACK again with no data: a duplicate, for the full path. */
	seg(&s, ACK, IRS + 1 + mss, ISS + 1001, 40000, 0);
	assert_int_equal(s.c.stats.slowpath, 1);
	/* Data announcing a zero window: the full path too. */
	seg(&s, ACK, IRS + 1 + mss, ISS + 1001, 0, 100);
	assert_int_equal(s.c.stats.slowpath, 2);
	assert_int_equal(s.c.snd_wnd, 0);
	assert_int_equal(tcp_recv_bytes(&s.c), mss + 100);
	script_end(&s);
}

/* RFC 9293 3.6 figure 12: normal close, we close first, then TIME-WAIT expires. */
static void test_active_close_to_time_wait(void **state)
{
	struct script s;

	(void)state;
	fixture_time_wait(&s, NULL);
	advance(&s, 2 * s.c.cfg.msl_ns - 1);
	assert_int_equal(s.c.state, TCP_TIME_WAIT);
	advance(&s, 1);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_true(s.c.events & TCP_EV_CLOSED);
	script_end(&s);
}

/* RFC 9293 3.6: the peer closes first: CLOSE-WAIT, LAST-ACK, CLOSED. */
static void test_passive_close(void **state)
{
	struct script s;

	(void)state;
	fixture_last_ack(&s, NULL);
	seg(&s, ACK, IRS + 2, ISS + 2, 65535, 0);
	assert_int_equal(s.c.state, TCP_CLOSED);
	assert_true(s.c.events & TCP_EV_CLOSED);
	assert_int_equal(s.c.error, 0);
	script_end(&s);
}

/* RFC 9293 3.6 figure 13: simultaneous close through CLOSING. */
static void test_simultaneous_close(void **state)
{
	struct script s;

	(void)state;
	fixture_closing(&s, NULL);
	seg(&s, ACK, IRS + 2, ISS + 2, 65535, 0);
	assert_int_equal(s.c.state, TCP_TIME_WAIT);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 first and fifth checks, RFC 5961 5.2: data outside the
 * window, an ACK of data never sent and an ACK far below SND.UNA are each
 * answered with an ACK, dropped, and counted under their own name.
 */
static void test_bad_segments_counted(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	seg(&s, ACK, IRS + 1 + 10000000, ISS + 1, 65535, 100); /* far beyond the window */
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(s.c.stats.out_of_window, 1);
	assert_int_equal(tcp_recv_bytes(&s.c), 0);
	seg(&s, ACK, IRS + 1, ISS + 5000, 65535, 0); /* acknowledges 4999 bytes never sent */
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(s.c.stats.ack_unsent, 1);
	assert_int_equal(s.c.snd_una, ISS + 1);
	assert_int_equal(app_send(&s, 100), 100);
	drain_tx(&s);
	seg(&s, ACK, IRS + 1, ISS + 101, 65535, 0);
	seg(&s, ACK, IRS + 1, ISS + 101 - (65535u << 7) - 10, 65535, 0); /* far too old */
	expect_tx(&s, ACK, ISS + 101, IRS + 1, 0);
	assert_int_equal(s.c.stats.ack_too_old, 1);
	script_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_active_open),
	    cmocka_unit_test(test_passive_open),
	    cmocka_unit_test(test_receive_delayed_ack),
	    cmocka_unit_test(test_send_and_ack),
	    cmocka_unit_test(test_fast_path_reply_acks_request),
	    cmocka_unit_test(test_active_close_to_time_wait),
	    cmocka_unit_test(test_passive_close),
	    cmocka_unit_test(test_simultaneous_close),
	    cmocka_unit_test(test_bad_segments_counted),
	};

	return cmocka_run_group_tests(tests, script_group_setup, script_group_teardown);
}
