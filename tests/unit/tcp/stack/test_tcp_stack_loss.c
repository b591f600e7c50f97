/*
 * test_tcp_stack_loss.c - a spurious RTO between two whole stacks: the
 * receiver's ACKs are held (a delay spike on the ACK path) until the
 * sender's retransmission timer fires, then let through one per step, as
 * a path whose queue drains. Nothing was lost, so the RTO was spurious:
 * Eifel (RFC 3522, with timestamps) or F-RTO (RFC 5682, without) must
 * find it and undo it, and F-RTO must spare the go-back-N resend that a
 * sender without either makes. The stream arrives intact in every case.
 *
 * The sender writes 16 KiB a step (so the ACKs come spread out,
 * not one per window) into a send buffer larger than the receiver's
 * window, so there is new data for F-RTO's step 2b.
 *
 * Also: a lost segment's retransmission reaches the stack's totals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_pair.h"

#define TOTAL	 (4u << 20)
#define PACE	 4096u	      /* bytes per write (one Zbuf of the 4 KiB class) */
#define CHUNKS	 4u	      /* writes per step: 16 KiB every 10 us */
#define SETTLED	 (512u << 10) /* received before the spike */
#define MAX_STEP 200000u      /* 2 s of virtual time: any phase ends well before */

struct spike {
	bool ts, sack, frto;
	/* what the sender counted from the spike to the end */
	uint64_t timeouts, retransmits, spurious_rtos, frto_spurious;
	uint64_t resent; /* payload bytes the client framed beyond the stream's */
	uint64_t end_ns; /* virtual time from the spike's start to the stream's end */
};

static void feed(struct tcp_pair *p, size_t *sent)
{
	static uint8_t buf[PACE];
	size_t n = TOTAL - *sent, space = tcp_sock_send_space(p->cli);

	if (n > PACE)
		n = PACE;
	if (n > space)
		n = space;
	if (!n)
		return;
	pair_fill(buf, n, *sent);
	assert_int_equal(tcp_sock_send(p->cli, buf, (uint32_t)n), (int)n);
	*sent += n;
}

static void step(struct tcp_pair *p, size_t *sent)
{
	for (unsigned i = 0; i < CHUNKS; i++)
		feed(p, sent);
	pair_step(p);
}

static void run_spike(struct spike *k)
{
	struct tcp_config cfg_a, cfg_b;
	struct tcp_conn_stats before;
	const struct tcp_conn_stats *st;
	struct tcp_pair p;
	size_t sent = 0;
	uint64_t t0;
	unsigned i;

	pair_config(&cfg_a);
	cfg_a.timestamps = k->ts;
	cfg_a.sack = k->sack;
	cfg_a.frto = k->frto;
	cfg_a.snd_buf = 512u << 10;
	pair_config(&cfg_b);
	cfg_b.rcv_buf = 128u << 10; /* the window, less than what the sender has queued */
	pair_open_cfgs(&p, true, &cfg_a, &cfg_b);
	assert_int_equal(tcp_sock_conn(p.cli)->ts_ok, k->ts);
	assert_int_equal(tcp_sock_conn(p.cli)->sack_ok, k->sack);

	for (i = 0; i < MAX_STEP && p.rcvd_len < SETTLED; i++)
		step(&p, &sent);
	assert_true(p.rcvd_len >= SETTLED);
	st = &tcp_sock_conn(p.cli)->stats;
	before = *st;
	assert_int_equal(before.timeouts, 0);

	/* The spike: no ACK reaches the sender until its RTO fires. */
	p.hold_b = true;
	t0 = p.now;
	for (i = 0; i < MAX_STEP && st->timeouts == before.timeouts; i++)
		step(&p, &sent);
	assert_int_equal(st->timeouts, before.timeouts + 1);
	assert_true(p.b.fp.n_tx > 1);
	/* It ends: the held ACKs (and those sent meanwhile) go one a step. */
	for (i = 0; i < MAX_STEP && p.b.fp.n_tx; i++) {
		pair_release_b(&p, 1);
		step(&p, &sent);
	}
	assert_int_equal(p.b.fp.n_tx, 0);
	p.hold_b = false;
	for (i = 0; i < MAX_STEP && p.rcvd_len < TOTAL; i++)
		step(&p, &sent);
	pair_rcvd_ok(&p, TOTAL);
	/* Nothing was lost on the way: every frame found a buffer. */
	assert_int_equal(tcp_stack_stats(p.a.tcp)->tx_no_mbuf, 0);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->tx_no_mbuf, 0);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->tx_unbuffered, 0);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->tx_unbuffered, 0);
	assert_true(tcp_stack_stats(p.a.tcp)->zc_tx_bytes >= TOTAL);

	k->end_ns = p.now - t0;
	k->resent = tcp_stack_stats(p.a.tcp)->zc_tx_bytes - TOTAL;
	k->timeouts = st->timeouts - before.timeouts;
	k->retransmits = st->retransmits - before.retransmits;
	k->spurious_rtos = st->spurious_rtos - before.spurious_rtos;
	k->frto_spurious = st->frto_spurious - before.frto_spurious;
	print_message("ts %d sack %d frto %d: resent %lu end_us %lu timeouts %lu retransmits %lu "
		      "spurious_rtos %lu frto_spurious %lu\n",
		      k->ts, k->sack, k->frto, k->resent, k->end_ns / 1000, k->timeouts,
		      k->retransmits, k->spurious_rtos, k->frto_spurious);
	pair_close(&p);
}

/* With timestamps the first late ACK's echo proves it (Eifel); F-RTO is not needed. */
static void test_spike_eifel(void **state)
{
	struct spike k = {.ts = true, .sack = true, .frto = true};

	(void)state;
	run_spike(&k);
	assert_int_equal(k.timeouts, 1);
	assert_int_equal(k.spurious_rtos, 1);
	assert_int_equal(k.frto_spurious, 0);
	assert_true(k.resent <= 3 * 1448); /* the RTO's segment and up to two tail probes */
}

/*
 * Without timestamps, F-RTO finds it (with SACK and without), and resends
 * far less than the same sender without F-RTO, which resends what was in
 * flight (with SACK, a D-SACK for each resent segment undoes the RTO
 * afterwards, RFC 3708; without, nothing does).
 */
static void spike_frto(bool sack)
{
	struct spike on = {.sack = sack, .frto = true}, off = {.sack = sack};

	run_spike(&on);
	assert_int_equal(on.timeouts, 1);
	assert_int_equal(on.frto_spurious, 1);
	assert_int_equal(on.spurious_rtos, 1);
	run_spike(&off);
	assert_int_equal(off.timeouts, 1);
	assert_int_equal(off.frto_spurious, 0);
	assert_int_equal(off.spurious_rtos, sack); /* with SACK, the resends' D-SACKs undo it */
	assert_true(on.resent <= 3 * 1460);	   /* the RTO's segment and up to two tail probes */
	assert_true(off.resent > 4 * on.resent);
	assert_true(off.retransmits > 4 * on.retransmits); /* go-back-N counts each segment too */
}

static void test_spike_frto_sack(void **state)
{
	(void)state;
	spike_frto(true);
}

static void test_spike_frto_no_sack(void **state)
{
	(void)state;
	spike_frto(false);
}

/*
 * A connection's counters reach the stack's totals (tcp_stack_stats_sum(),
 * docs/LIMITS.md): a lost segment's retransmission counts in the sum while
 * the connection lives, and in the stack's own counters once it is gone.
 */
static void test_retransmits_in_stack_totals(void **state)
{
	static uint8_t buf[1000];
	struct tcp_stack_stats sum;
	struct tcp_pair p;
	uint64_t mine;

	(void)state;
	pair_open(&p, true);
	p.cut_a = true; /* the segment is lost */
	pair_fill(buf, sizeof(buf), 0);
	assert_int_equal(tcp_sock_send(p.cli, buf, sizeof(buf)), sizeof(buf));
	pair_step(&p);
	p.cut_a = false;
	for (unsigned i = 0; i < MAX_STEP && p.rcvd_len < sizeof(buf); i++)
		pair_step(&p);
	pair_rcvd_ok(&p, sizeof(buf));
	mine = tcp_sock_conn(p.cli)->stats.retransmits;
	assert_true(mine >= 1);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->retransmits, 0);
	tcp_stack_stats_sum(p.a.tcp, &sum);
	assert_int_equal(sum.retransmits, mine);

	tcp_sock_abort(p.cli);
	pair_run(&p, 1000000);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->retransmits, mine);
	tcp_stack_stats_sum(p.a.tcp, &sum);
	assert_int_equal(sum.retransmits, mine);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spike_eifel),
	    cmocka_unit_test(test_spike_frto_sack),
	    cmocka_unit_test(test_spike_frto_no_sack),
	    cmocka_unit_test(test_retransmits_in_stack_totals),
	};

	return cmocka_run_group_tests(tests, pair_group_setup, pair_group_teardown);
}
