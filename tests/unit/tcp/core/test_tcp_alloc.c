/*
 * test_tcp_alloc.c - the TCP core when malloc() fails. The program is
 * linked with -Wl,--wrap=malloc, so a test can make the allocations of
 * one step fail; what the core cannot keep must be given back (the
 * script's end checks that no Zbuf reference leaked) and come again from
 * the peer, never be lost or corrupted.
 */
#include <stdlib.h>

#include "tcp_script.h"

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);

static bool malloc_fails;
static unsigned malloc_failed;

void *__wrap_malloc(size_t size)
{
	if (malloc_fails) {
		malloc_failed++;
		return NULL;
	}
	return __real_malloc(size);
}

#define SEG  1000 /* over half an MSS: queued as it came, not compacted (tcp_deliver()) */
#define HELD 60	  /* in-order segments the application leaves in the receive queue */
#define OOO  10	  /* out-of-order segments waiting behind a one-segment gap */

/*
 * The segment that fills a gap delivers what waited behind it, and the
 * receive queue must grow on the way (64 slices, full after the third of
 * the ten) but cannot: the slices it cannot take are given back (RFC 2018
 * 8 lets a receiver renege on SACKed data) and counted, rcv_nxt stops
 * after the last one it took, and the peer's retransmissions fill the
 * stream: every byte arrives once, in order.
 */
static void test_receive_queue_cannot_grow(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;
	uint32_t next = IRS + 1, gap = IRS + 1 + HELD * SEG;
	uint64_t pruned0;

	(void)state;
	script_config(&cfg);
	cfg.delayed_ack = false;
	fixture_established(&s, &o);
	prime_window(&s);
	for (unsigned i = 0; i < HELD; i++)
		seg(&s, ACK, IRS + 1 + i * SEG, ISS + 1, 65535, SEG);
	for (unsigned i = 1; i <= OOO; i++)
		seg(&s, ACK, gap + i * SEG, ISS + 1, 65535, SEG);
	drain_tx(&s);
	assert_int_equal(s.c.rcvq_count, HELD);
	assert_int_equal(s.c.rcvq_cap, 64);
	assert_int_equal(s.c.reass.n, OOO);
	pruned0 = s.c.stats.ooo_pruned_bytes;
	malloc_fails = true;
	seg(&s, ACK, gap, ISS + 1, 65535, SEG);
	malloc_fails = false;
	assert_true(malloc_failed > 0);
	/* The gap and three behind it taken (64 slices), the other seven given back. */
	assert_int_equal(s.c.rcvq_count, 64);
	assert_int_equal(s.c.rcv_nxt, gap + 4 * SEG);
	assert_int_equal(s.c.reass.n, 0);
	assert_int_equal(s.c.stats.ooo_pruned_bytes - pruned0, (OOO - 3) * SEG);
	drain_tx(&s);
	assert_int_equal(recv_in_order(&s, &next, 0), (HELD + 4) * SEG);
	/* The peer resends what was given back. */
	for (unsigned i = 4; i <= OOO; i++)
		seg(&s, ACK, gap + i * SEG, ISS + 1, 65535, SEG);
	drain_tx(&s);
	assert_int_equal(s.c.rcv_nxt, gap + (OOO + 1) * SEG);
	assert_int_equal(recv_in_order(&s, &next, 0), (OOO - 3) * SEG);
	script_end(&s);
}

/*
 * RFC 9293 3.10.7.4 eighth: a FIN is taken only once everything before it
 * has arrived. In-order data the receive queue has no room for (it cannot
 * grow) is not accepted, and neither is the FIN that follows it: RCV.NXT
 * stays, the state too, and the peer's retransmission of both is taken.
 */
static void test_fin_after_refused_data_not_taken(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;
	uint32_t next = IRS + 1, end = IRS + 1 + 64 * SEG;

	(void)state;
	script_config(&cfg);
	cfg.delayed_ack = false;
	fixture_established(&s, &o);
	prime_window(&s);
	for (unsigned i = 0; i < 64; i++)
		seg(&s, ACK, IRS + 1 + i * SEG, ISS + 1, 65535, SEG);
	drain_tx(&s);
	assert_int_equal(s.c.rcvq_count, s.c.rcvq_cap); /* full: the next slice needs malloc */
	malloc_fails = true;
	seg(&s, FIN | ACK, end, ISS + 1, 65535, SEG);
	malloc_fails = false;
	assert_true(malloc_failed > 0);
	assert_int_equal(s.c.rcv_nxt, end);
	assert_false(s.c.fin_rcvd);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	drain_tx(&s);
	seg(&s, FIN | ACK, end, ISS + 1, 65535, SEG); /* the retransmission */
	expect_tx(&s, ACK, ISS + 1, end + SEG + 1, 0);
	assert_int_equal(s.c.state, TCP_CLOSE_WAIT);
	assert_int_equal(recv_in_order(&s, &next, 0), 65 * SEG);
	drain_tx(&s);
	script_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_receive_queue_cannot_grow),
	    cmocka_unit_test(test_fin_after_refused_data_not_taken),
	};

	return cmocka_run_group_tests_name("tcp/core_alloc", tests, script_group_setup,
					   script_group_teardown);
}
