/*
 * test_tcp_frto.c - F-RTO's verdicts (tcp/tcp_frto.c, RFC 5682): which
 * ACK after an RTO proves it spurious, which says the loss was real, when
 * new data goes, with and without SACK; across the 2^32 wrap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tcp/tcp_frto.h"

#define MSS	1000u
#define UNA	0xfffff000u /* ten segments from here cross the wrap */
#define RECOVER (UNA + 10 * MSS)

/* Steps 1 and 2b: the RTO, then a first ACK of the retransmission only. */
static void to_probe(struct tcp_frto *f, bool sack)
{
	tcp_frto_begin(f, RECOVER, sack);
	assert_int_equal(tcp_frto_ack(f, true, false, UNA + MSS, true), TCP_FRTO_NEW_DATA);
	assert_int_equal(f->step, TCP_FRTO_SEND_NEW);
	tcp_frto_sent_new(f);
	assert_int_equal(f->step, TCP_FRTO_PROBE_ACK);
}

/* RFC 5682 2.1: without SACK, step 3's advance of SND.UNA proves it spurious. */
static void test_basic_spurious(void **state)
{
	struct tcp_frto f;

	(void)state;
	to_probe(&f, false);
	assert_int_equal(tcp_frto_ack(&f, false, false, UNA + MSS, true), TCP_FRTO_WAIT);
	assert_int_equal(f.step, TCP_FRTO_PROBE_ACK); /* a window update or data: no verdict */
	assert_int_equal(tcp_frto_ack(&f, true, false, UNA + 3 * MSS, true), TCP_FRTO_SPURIOUS);
	assert_int_equal(f.step, TCP_FRTO_OFF);
	assert_int_equal(tcp_frto_ack(&f, true, false, UNA + 4 * MSS, true), TCP_FRTO_WAIT);
}

/* 2.1 step 3a: a duplicate ACK after the new data: the old was lost. */
static void test_basic_loss_after_new_data(void **state)
{
	struct tcp_frto f;

	(void)state;
	to_probe(&f, false);
	assert_int_equal(tcp_frto_ack(&f, false, true, UNA + MSS, true), TCP_FRTO_LOSS);
	assert_int_equal(f.step, TCP_FRTO_OFF);
}

/*
 * 2.1 step 2a: a duplicate ACK, an ACK of everything sent before the
 * RTO, or no new data to send: conventional recovery at once. A first
 * ACK that jumps (without SACK) is no proof: the retransmission may have
 * filled a hole below segments the receiver held.
 */
static void test_basic_first_ack(void **state)
{
	struct tcp_frto f;

	(void)state;
	tcp_frto_begin(&f, RECOVER, false);
	assert_int_equal(tcp_frto_ack(&f, false, false, UNA, true), TCP_FRTO_WAIT);
	assert_int_equal(f.step, TCP_FRTO_FIRST_ACK);
	assert_int_equal(tcp_frto_ack(&f, false, true, UNA, true), TCP_FRTO_LOSS);
	tcp_frto_begin(&f, RECOVER, false);
	assert_int_equal(tcp_frto_ack(&f, true, false, RECOVER, true), TCP_FRTO_LOSS);
	tcp_frto_begin(&f, RECOVER, false);
	assert_int_equal(tcp_frto_ack(&f, true, false, UNA + MSS, false), TCP_FRTO_LOSS);
	tcp_frto_begin(&f, RECOVER, false);
	tcp_frto_delivered(&f, UNA + MSS);
	assert_int_equal(tcp_frto_ack(&f, true, false, UNA + 5 * MSS, true), TCP_FRTO_NEW_DATA);
}

/*
 * 3.1: with SACK, a never-retransmitted segment below recover newly
 * delivered proves it at the first ACK or the second; SACKs of the new
 * data alone (a duplicate ACK) say the old was lost.
 */
static void test_sack(void **state)
{
	struct tcp_frto f;

	(void)state;
	tcp_frto_begin(&f, RECOVER, true);
	tcp_frto_delivered(&f, UNA + MSS);
	assert_int_equal(tcp_frto_ack(&f, true, false, UNA + 2 * MSS, true), TCP_FRTO_SPURIOUS);
	/* Newly SACKed above a hole, the first ACK a duplicate. */
	tcp_frto_begin(&f, RECOVER, true);
	tcp_frto_delivered(&f, UNA + 7 * MSS);
	assert_int_equal(tcp_frto_ack(&f, false, true, UNA, true), TCP_FRTO_SPURIOUS);
	/* Step 3: the new data SACKed (at recover and above): loss. */
	to_probe(&f, true);
	tcp_frto_delivered(&f, RECOVER);
	assert_int_equal(tcp_frto_ack(&f, false, true, UNA + MSS, true), TCP_FRTO_LOSS);
	/* Step 3: an original below recover. */
	to_probe(&f, true);
	tcp_frto_delivered(&f, RECOVER - MSS);
	assert_int_equal(tcp_frto_ack(&f, true, false, RECOVER, true), TCP_FRTO_SPURIOUS);
	/* Step 3: an advance that delivered nothing from before the RTO. */
	to_probe(&f, true);
	assert_int_equal(tcp_frto_ack(&f, true, false, UNA + 2 * MSS, true), TCP_FRTO_LOSS);
}

/* A first ACK of everything is 2a even when originals came with it. */
static void test_sack_first_ack_covers_recover(void **state)
{
	struct tcp_frto f;

	(void)state;
	tcp_frto_begin(&f, RECOVER, true);
	tcp_frto_delivered(&f, UNA + MSS);
	assert_int_equal(tcp_frto_ack(&f, true, false, RECOVER, true), TCP_FRTO_LOSS);
}

/*
 * Reports outside detection, or left from an ACK that decided nothing, do
 * not carry over. With SACK such an ACK (a window update SACKing an
 * original) is a proof itself.
 */
static void test_reports_do_not_linger(void **state)
{
	struct tcp_frto f = {0};

	(void)state;
	tcp_frto_delivered(&f, UNA);
	assert_false(f.orig);
	tcp_frto_begin(&f, RECOVER, false);
	tcp_frto_delivered(&f, UNA + MSS);
	assert_int_equal(tcp_frto_ack(&f, false, false, UNA, true), TCP_FRTO_WAIT);
	assert_false(f.orig);
	assert_int_equal(tcp_frto_ack(&f, true, false, UNA + MSS, true), TCP_FRTO_NEW_DATA);
	tcp_frto_end(&f);
	assert_int_equal(tcp_frto_ack(&f, true, true, UNA + 2 * MSS, true), TCP_FRTO_WAIT);
	tcp_frto_sent_new(&f);
	assert_int_equal(f.step, TCP_FRTO_OFF);
	tcp_frto_begin(&f, RECOVER, true);
	tcp_frto_delivered(&f, UNA + MSS);
	assert_int_equal(tcp_frto_ack(&f, false, false, UNA, true), TCP_FRTO_SPURIOUS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic_spurious),
	    cmocka_unit_test(test_basic_loss_after_new_data),
	    cmocka_unit_test(test_basic_first_ack),
	    cmocka_unit_test(test_sack),
	    cmocka_unit_test(test_sack_first_ack_covers_recover),
	    cmocka_unit_test(test_reports_do_not_linger),
	};

	return cmocka_run_group_tests_name("tcp/frto", tests, NULL, NULL);
}
