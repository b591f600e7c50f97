/*
 * test_tcp_icmp.c - what ICMP errors do to a connection (tcp_icmp.h), one
 * behaviour each: RFC 5927 4.1's sequence check (off-path errors are
 * ignored), path MTU per RFC 1191 / RFC 5927 7 (fragmentation needed
 * lowers the MSS and what is in flight goes again in smaller segments,
 * with and without a scoreboard; absurd MTUs ignored, small ones floored,
 * never raised), errors as soft in synchronized states (RFC 5927 4.2,
 * RFC 1122 4.2.3.9) but hard ones ending a connect in SYN-SENT, and
 * unreachables undoing the RTO's backoff (RFC 6069).
 *
 * The fixtures negotiate timestamps: snd_mss is 1460 - 12 = 1448, so the
 * largest datagram is 1500 bytes, and an MTU m leaves m - 52 per segment.
 */
#include <errno.h>
#include <netinet/in.h>

#include "tcp/tcp_icmp.h"
#include "tcp_script.h"

#define MSS0	 1448u
#define OVERHEAD 52u /* IPv4 + TCP + timestamps */

/* An error and the errno it means. */
struct err_case {
	uint8_t type, code;
	int err;
};

/* An error of @type/@code (next-hop MTU @mtu) quoting our segment with sequence number @seq. */
static enum tcp_icmp_verdict icmp(struct script *s, uint8_t type, uint8_t code, uint16_t mtu,
				  uint32_t seq)
{
	struct icmp_quote q = {.type = type,
			       .code = code,
			       .mtu = mtu,
			       .src = s->c.tuple.laddr,
			       .dst = s->c.tuple.raddr,
			       .proto = IPPROTO_TCP,
			       .sport = s->c.tuple.lport,
			       .dport = s->c.tuple.rport,
			       .seq = seq};

	return tcp_icmp_error(&s->c, &q, s->now, &s->out);
}

static enum tcp_icmp_verdict frag_needed(struct script *s, uint16_t mtu, uint32_t seq)
{
	return icmp(s, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, mtu, seq);
}

/* Established, the window primed, @n full segments out (checked). */
static void established_with(struct script *s, const struct fixture_opts *o, unsigned n)
{
	fixture_established(s, o);
	prime_window(s);
	assert_int_equal(s->c.snd_mss, MSS0);
	assert_int_equal(app_send(s, n * MSS0), (int)(n * MSS0));
	for (unsigned i = 0; i < n; i++)
		expect_tx(s, ACK | (i == n - 1 ? PSH : 0), ISS + 1 + i * MSS0, IRS + 1, MSS0);
	expect_nothing(s);
}

/* [from, from + len) sent again in retransmitted segments of at most @mss, with @flags each. */
static void expect_resent(struct script *s, uint32_t from, uint32_t len, uint32_t mss)
{
	while (len) {
		uint32_t k = len < mss ? len : mss;
		const struct tcp_tx *t = take_tx(s);

		assert_int_equal(t->seq, from);
		assert_int_equal(t->len, k);
		assert_true(t->retransmit);
		from += k;
		len -= k;
	}
}

/*
 * RFC 1191 3 / RFC 5927 7: an in-window "fragmentation needed" lowers the
 * MSS to what the next-hop MTU takes, and (as Linux's
 * tcp_simple_retransmit()) the data in flight, dropped on the way, goes
 * again in segments of the new size. Without a scoreboard the sender goes
 * back to SND.UNA. New data uses the new size too.
 */
static void test_frag_needed_lowers_mss(void **state)
{
	struct script s;
	uint32_t cwnd;

	(void)state;
	established_with(&s, NULL, 4);
	cwnd = s.c.cc.cwnd;
	assert_int_equal(frag_needed(&s, 1200, ISS + 1 + MSS0), TCP_ICMP_MSS_LOWERED);
	assert_int_equal(s.c.snd_mss, 1200 - OVERHEAD);
	assert_int_equal(s.c.cc.smss, 1200 - OVERHEAD);
	assert_int_equal(s.c.cc.cwnd, cwnd); /* not congestion: no reduction */
	expect_resent(&s, ISS + 1, 4 * MSS0, 1200 - OVERHEAD);
	expect_nothing(&s);
	assert_int_equal(s.c.soft_error, 0);
	/* Everything acknowledged; the next data goes in the new size. */
	seg(&s, ACK, IRS + 1, ISS + 1 + 4 * MSS0, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(app_send(&s, 2000), 2000);
	expect_tx(&s, ACK, ISS + 1 + 4 * MSS0, IRS + 1, 1200 - OVERHEAD);
	expect_tx(&s, ACK | PSH, ISS + 1 + 4 * MSS0 + 1200 - OVERHEAD, IRS + 1,
		  2000 - (1200 - OVERHEAD));
	expect_nothing(&s);
	script_end(&s);
}

/*
 * Karn's rule (RFC 6298 3): what the lowered MSS sends again is
 * retransmitted, so the ACK that covers it gives no RTT sample, though
 * the segment timed before the error is acknowledged by it: SRTT and
 * RTTVAR stay as they were (without a scoreboard, where no record marks
 * the resent data).
 */
static void test_frag_needed_resend_not_timed(void **state)
{
	struct script s;
	uint64_t srtt, rttvar;

	(void)state;
	established_with(&s, NULL, 4);
	assert_false(s.c.sb_on);
	srtt = s.c.rtt.srtt_ns;
	rttvar = s.c.rtt.rttvar_ns;
	advance(&s, 2 * MS);
	assert_int_equal(frag_needed(&s, 1200, ISS + 1), TCP_ICMP_MSS_LOWERED);
	expect_resent(&s, ISS + 1, 4 * MSS0, 1200 - OVERHEAD);
	expect_nothing(&s);
	advance(&s, 1 * MS);
	seg(&s, ACK, IRS + 1, ISS + 1 + 4 * MSS0, 65535, 0);
	expect_nothing(&s);
	assert_int_equal(s.c.snd_una, ISS + 1 + 4 * MSS0);
	assert_int_equal(s.c.rtt.srtt_ns, srtt);
	assert_int_equal(s.c.rtt.rttvar_ns, rttvar);
	script_end(&s);
}

/*
 * The same with SACK recovery's scoreboard (RFC 6675, RFC 8985): each
 * record larger than the new MSS is cut to it and marked lost, so the
 * records stay one per segment on the wire (as SACK blocks will name them)
 * and the resends, within the pipe, fit the path. (What the peer SACKed
 * arrived and is neither cut nor resent: tests/unit/tcp/scoreboard.)
 */
static void test_frag_needed_resegments_scoreboard(void **state)
{
	struct script s;
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	const uint32_t mss = 1000 - OVERHEAD;

	(void)state;
	script_config(&cfg);
	cfg.rack = true;
	established_with(&s, &o, 3);
	assert_true(s.c.sb_on);
	assert_int_equal(s.c.sb.count, 3);
	assert_int_equal(frag_needed(&s, 1000, ISS + 1), TCP_ICMP_MSS_LOWERED);
	assert_int_equal(s.c.snd_mss, mss);
	/* 3 records of 1448 -> 2 each (948 + 500), all sent again. */
	assert_int_equal(s.c.sb.count, 6);
	for (uint32_t i = 0; i < 3; i++)
		expect_resent(&s, ISS + 1 + i * MSS0, MSS0, mss);
	expect_nothing(&s);
	for (uint32_t i = 0; i < 6; i++) {
		const struct tcp_txseg *r = tcp_sb_at(&s.c.sb, i);

		assert_int_equal(r->end - r->start, i % 2 ? MSS0 - mss : mss);
		assert_int_equal(r->flags, TCP_TXSEG_RETRANS);
	}
	assert_int_equal(s.c.sb.lost, 0);
	assert_false(s.c.cc.in_recovery);
	/* The peer acknowledges the resends: nothing is left, nothing more goes. */
	seg(&s, ACK, IRS + 1, ISS + 1 + 3 * MSS0, 65535, 0);
	assert_int_equal(s.c.sb.count, 0);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 5927 4.1: "TCP SHOULD check that the TCP sequence number contained
 * in the payload of the ICMP error message is within the range SND.UNA =<
 * SEG.SEQ < SND.NXT". Below it (acknowledged long ago), at or beyond it
 * (never sent) or far off: ignored, whatever the error says.
 */
static void test_out_of_window_ignored(void **state)
{
	static const uint32_t off[] = {ISS, ISS + 1 + 2 * MSS0, ISS + 1 + 0x80000000u, IRS + 1};
	struct script s;

	(void)state;
	established_with(&s, NULL, 2);
	for (unsigned i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		assert_int_equal(frag_needed(&s, 576, off[i]), TCP_ICMP_OUT_OF_WINDOW);
		assert_int_equal(
		    icmp(&s, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_PORT_UNREACH, 0, off[i]),
		    TCP_ICMP_OUT_OF_WINDOW);
	}
	assert_int_equal(s.c.snd_mss, MSS0);
	assert_int_equal(s.c.soft_error, 0);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	expect_nothing(&s);
	/* Nothing in flight: no sequence number is believable. */
	seg(&s, ACK, IRS + 1, ISS + 1 + 2 * MSS0, 65535, 0);
	assert_int_equal(frag_needed(&s, 576, ISS + 1 + MSS0), TCP_ICMP_OUT_OF_WINDOW);
	assert_int_equal(s.c.snd_mss, MSS0);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 1191 3 and RFC 5927 7.2: an MTU below 68 (0 from a router older
 * than RFC 1191) is not believed; one below 576 is raised to 576, so a
 * forged but in-window error cannot shrink segments to a few bytes; an MTU
 * our datagrams already fit changes nothing, and the MTU is never raised.
 */
static void test_frag_needed_absurd_and_floor(void **state)
{
	struct script s;

	(void)state;
	established_with(&s, NULL, 1);
	assert_int_equal(frag_needed(&s, 0, ISS + 1), TCP_ICMP_MTU_ABSURD);
	assert_int_equal(frag_needed(&s, 67, ISS + 1), TCP_ICMP_MTU_ABSURD);
	assert_int_equal(frag_needed(&s, MSS0 + OVERHEAD, ISS + 1), TCP_ICMP_MTU_NOT_LOWER);
	assert_int_equal(frag_needed(&s, 9000, ISS + 1), TCP_ICMP_MTU_NOT_LOWER);
	assert_int_equal(s.c.snd_mss, MSS0);
	expect_nothing(&s);
	assert_int_equal(frag_needed(&s, 68, ISS + 1), TCP_ICMP_MSS_FLOORED);
	assert_int_equal(s.c.snd_mss, TCP_PMTU_MIN - OVERHEAD);
	expect_resent(&s, ISS + 1, MSS0, TCP_PMTU_MIN - OVERHEAD);
	expect_nothing(&s);
	assert_int_equal(frag_needed(&s, 1200, ISS + 1), TCP_ICMP_MTU_NOT_LOWER);
	assert_int_equal(frag_needed(&s, 300, ISS + 1), TCP_ICMP_MTU_NOT_LOWER);
	assert_int_equal(s.c.snd_mss, TCP_PMTU_MIN - OVERHEAD);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 5927 4.2 (and RFC 1122 4.2.3.9 for the soft codes): in a
 * synchronized state even the "hard" errors are soft. Port, protocol and
 * administratively prohibited unreachables, time exceeded and parameter
 * problem leave the connection as it was, with the error recorded; an
 * ACK of new data clears it.
 */
static void test_errors_soft_when_established(void **state)
{
	static const struct err_case cases[] = {
	    {3, ICMP_CODE_PORT_UNREACH, -ECONNREFUSED},
	    {3, ICMP_CODE_PROTO_UNREACH, -ENOPROTOOPT},
	    {3, ICMP_CODE_ADMIN_PROHIBITED, -EHOSTUNREACH},
	    {3, ICMP_CODE_NET_UNREACH, -ENETUNREACH},
	    {3, 200, -EHOSTUNREACH}, /* a code RFC 792 and its successors never defined */
	    {ICMP_TYPE_TIME_EXCEEDED, 0, -EHOSTUNREACH},
	    {ICMP_TYPE_PARAM_PROBLEM, 0, -EPROTO},
	};
	struct script s;

	(void)state;
	established_with(&s, NULL, 2);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(icmp(&s, cases[i].type, cases[i].code, 0, ISS + 1 + MSS0),
				 TCP_ICMP_SOFT_ERROR);
		assert_int_equal(s.c.soft_error, cases[i].err);
		assert_int_equal(s.c.state, TCP_ESTABLISHED);
		assert_int_equal(s.c.error, 0);
		assert_int_equal(s.c.events, 0);
	}
	assert_int_equal(s.c.snd_mss, MSS0);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + MSS0, 65535, 0);
	assert_int_equal(s.c.soft_error, 0);
	script_end(&s);
}

/* Take and drop what is sent, running timers until the connection closes. */
static void run_until_closed(struct script *s)
{
	for (unsigned i = 0; i < 1000 && s->c.state != TCP_CLOSED; i++) {
		advance_next(s);
		drain_tx(s);
	}
	assert_int_equal(s->c.state, TCP_CLOSED);
}

/*
 * RFC 1122 4.2.3.9: soft errors are reported to the application; as in
 * Linux, when the connection gives up, the last one explains why
 * (EHOSTUNREACH rather than ETIMEDOUT).
 */
static void test_soft_error_reported_on_timeout(void **state)
{
	struct script s;

	(void)state;
	established_with(&s, NULL, 1);
	assert_int_equal(icmp(&s, 3, ICMP_CODE_HOST_UNREACH, 0, ISS + 1), TCP_ICMP_SOFT_ERROR);
	run_until_closed(&s);
	assert_int_equal(s.c.error, -EHOSTUNREACH);
	assert_true(s.c.events & TCP_EV_TIMEOUT);
	script_end(&s);
}

/*
 * SYN-SENT (tcp_icmp.h): a hard error (RFC 1122 4.2.3.9 codes 2, 3, and
 * the administrative prohibitions) ends the connect with Linux's errno,
 * as a RST would; only a quote of our SYN counts.
 */
static void test_syn_sent_hard_error_aborts(void **state)
{
	static const struct err_case cases[] = {
	    {3, ICMP_CODE_PORT_UNREACH, -ECONNREFUSED},
	    {3, ICMP_CODE_ADMIN_PROHIBITED, -EHOSTUNREACH},
	    {ICMP_TYPE_PARAM_PROBLEM, 0, -EPROTO},
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct script s;

		fixture_syn_sent(&s, NULL);
		assert_int_equal(icmp(&s, cases[i].type, cases[i].code, 0, ISS + 1),
				 TCP_ICMP_OUT_OF_WINDOW);
		assert_int_equal(s.c.state, TCP_SYN_SENT);
		assert_int_equal(icmp(&s, cases[i].type, cases[i].code, 0, ISS), TCP_ICMP_ABORTED);
		assert_int_equal(s.c.state, TCP_CLOSED);
		assert_int_equal(s.c.error, cases[i].err);
		assert_true(s.c.events & TCP_EV_RESET);
		assert_true(s.c.events & TCP_EV_CLOSED);
		assert_int_equal(tcp_next_deadline(&s.c), UINT64_MAX);
		expect_nothing(&s);
		script_end(&s);
	}
}

/*
 * SYN-SENT, soft errors (RFC 1122 4.2.3.9: net/host unreachable, time
 * exceeded "MUST NOT" abort; Linux does, lunar does not): the SYN is
 * retried, and when the retries run out the error explains the failure.
 * Fragmentation needed has nothing to lower: a SYN is far below 576 bytes.
 */
static void test_syn_sent_soft_error_keeps_trying(void **state)
{
	struct script s;

	(void)state;
	fixture_syn_sent(&s, NULL);
	assert_int_equal(icmp(&s, ICMP_TYPE_TIME_EXCEEDED, 0, 0, ISS), TCP_ICMP_SOFT_ERROR);
	assert_int_equal(icmp(&s, 3, ICMP_CODE_NET_UNREACH, 0, ISS), TCP_ICMP_SOFT_ERROR);
	assert_int_equal(frag_needed(&s, 576, ISS), TCP_ICMP_MTU_NOT_LOWER);
	assert_int_equal(s.c.state, TCP_SYN_SENT);
	assert_int_equal(s.c.events, 0);
	expect_nothing(&s);
	advance_next(&s);
	expect_tx(&s, SYN, ISS, 0, 0); /* the connect goes on */
	run_until_closed(&s);
	assert_int_equal(s.c.error, -ENETUNREACH);
	assert_true(s.c.events & TCP_EV_TIMEOUT);
	script_end(&s);
}

/*
 * SYN-RECEIVED: "fragmentation needed" quoting our SYN-ACK (in the window:
 * SND.UNA = ISS, SND.MAX = ISS + 1) lowers nothing and resends nothing;
 * the handshake's ACK makes an ordinary connection whose first data starts
 * at ISS + 1 (fuzz_tcp_stack found SND.NXT left on ISS, below SND.UNA).
 */
static void test_syn_received_frag_needed_ignored(void **state)
{
	struct script s;
	uint16_t mss;

	(void)state;
	fixture_syn_received(&s, NULL);
	mss = s.c.snd_mss;
	assert_int_equal(frag_needed(&s, 1000, ISS), TCP_ICMP_MTU_NOT_LOWER);
	assert_int_equal(frag_needed(&s, 232, ISS), TCP_ICMP_MTU_NOT_LOWER);
	assert_int_equal(s.c.snd_mss, mss);
	assert_int_equal(s.c.snd_nxt, ISS + 1);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_int_equal(app_send(&s, 100), 100);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 100);
	script_end(&s);
}

/*
 * A path MTU handed to the connection by the stack's cache (tcp_path_mtu(),
 * RFC 1191 5). Before the SYN-ACK it is only recorded, and the handshake
 * applies it: snd_mss fits the path while mss_clamp keeps what the peer's
 * MSS allowed. In SYN-RECEIVED it applies at once, the SYN-ACK not sent
 * again. Established, 0 (the cache forgot it, RFC 1191 6.3) takes snd_mss
 * back up to mss_clamp, sending nothing; a path MTU above the peer's MSS
 * changes nothing.
 */
static void test_path_mtu_given(void **state)
{
	struct tcp_options opts = {.has_mss = true,
				   .mss = 1460,
				   .has_wscale = true,
				   .wscale = 7,
				   .sack_permitted = true,
				   .has_ts = true};
	struct script s;

	(void)state;
	fixture_syn_sent(&s, NULL);
	assert_false(tcp_path_mtu(&s.c, 1280, s.now, &s.out));
	assert_int_equal(s.c.path_mtu, 1280);
	expect_nothing(&s);
	opts.ts_ecr = s.out.seg[0].opts.ts_val;
	seg_opts(&s, SYN | ACK, IRS, ISS + 1, 65535, 0, &opts);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_int_equal(s.c.mss_clamp, MSS0);
	assert_int_equal(s.c.snd_mss, 1280 - OVERHEAD);
	assert_int_equal(s.c.cc.smss, 1280 - OVERHEAD);
	prime_window(&s);
	assert_int_equal(app_send(&s, 2000), 2000);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 1280 - OVERHEAD);
	expect_tx(&s, ACK | PSH, ISS + 1 + 1280 - OVERHEAD, IRS + 1, 2000 - (1280 - OVERHEAD));
	seg(&s, ACK, IRS + 1, ISS + 1 + 2000, 65535, 0);
	expect_nothing(&s);
	assert_true(tcp_path_mtu(&s.c, 0, s.now, &s.out));
	assert_int_equal(s.c.snd_mss, MSS0);
	assert_int_equal(s.c.cc.smss, MSS0);
	expect_nothing(&s);
	assert_false(tcp_path_mtu(&s.c, 1600, s.now, &s.out));
	assert_int_equal(s.c.snd_mss, MSS0);
	assert_int_equal(app_send(&s, 2000), 2000);
	expect_tx(&s, ACK, ISS + 1 + 2000, IRS + 1, MSS0);
	script_end(&s);

	fixture_syn_received(&s, NULL);
	assert_true(tcp_path_mtu(&s.c, 1000, s.now, &s.out));
	assert_int_equal(s.c.snd_mss, 1000 - OVERHEAD);
	assert_int_equal(s.c.cc.smss, 1000 - OVERHEAD);
	assert_int_equal(s.c.cc.cwnd, tcp_cc_initial_window(1000 - OVERHEAD, 10)); /* IW anew */
	assert_int_equal(s.c.snd_nxt, ISS + 1);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1, 65535, 0);
	assert_int_equal(s.c.state, TCP_ESTABLISHED);
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 1000 - OVERHEAD);
	script_end(&s);
}

/*
 * After an RTO cwnd is one segment of the lowered size (RFC 5681 3.1's loss
 * window); the path MTU forgotten, the MSS goes back up and cwnd with it to
 * one segment of the new size, never below: a window smaller than a
 * segment would hold the next one back.
 */
static void test_path_mtu_raise_keeps_one_segment(void **state)
{
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	assert_true(tcp_path_mtu(&s.c, 1280, s.now, &s.out)); /* nothing in flight: no resend */
	assert_int_equal(s.c.snd_mss, 1280 - OVERHEAD);
	expect_nothing(&s);
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	while (!s.c.stats.timeouts)
		advance(&s, 100000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	assert_int_equal(s.c.cc.cwnd, 1280 - OVERHEAD);
	assert_true(tcp_path_mtu(&s.c, 0, s.now, &s.out));
	assert_int_equal(s.c.snd_mss, MSS0);
	assert_int_equal(s.c.cc.cwnd, MSS0);
	expect_nothing(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + 1000, 65535, 0);
	assert_int_equal(app_send(&s, MSS0), (int)MSS0);
	expect_tx(&s, ACK | PSH, ISS + 1 + 1000, IRS + 1, MSS0);
	script_end(&s);
}

/* Timeouts until the @n-th in a row; each resends @len bytes at SND.UNA. */
static void timeouts_until(struct script *s, unsigned n, uint32_t len)
{
	while (s->c.retries < n) {
		const struct tcp_tx *t;

		advance_next(s);
		t = take_tx(s);
		assert_int_equal(t->seq, ISS + 1);
		assert_int_equal(t->len, len);
		assert_true(t->retransmit);
		drain_tx(s);
	}
}

/*
 * RFC 2923 2.1, RFC 8899 4.3: full-sized segments that draw neither an
 * ACK nor an error through cfg.blackhole_rtos (3) timeouts in a row are
 * taken to be too large for a path that drops them silently. The third
 * timeout's resend goes at the next plateau (1400), timed from the base
 * RTO again; three more and the one after (1280), which the ACK shows
 * gets through. The stack is told at each step (pmtu_guessed, counted).
 */
static void test_blackhole_steps_down(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	script_config(&cfg);
	cfg.blackhole_min_ns = 0; /* the count alone: see test_blackhole_waits_min_time */
	established_with(&s, &o, 2);
	timeouts_until(&s, 2, MSS0);
	assert_int_equal(s.c.path_mtu, 0);
	assert_false(s.c.pmtu_guessed);
	timeouts_until(&s, 3, 1400 - OVERHEAD);
	assert_int_equal(s.c.path_mtu, 1400);
	assert_int_equal(s.c.snd_mss, 1400 - OVERHEAD);
	assert_int_equal(s.c.mss_clamp, MSS0);
	assert_true(s.c.pmtu_guessed);
	assert_int_equal(s.c.stats.pmtu_blackholes, 1);
	/* The timeouts were the size's: the smaller resend is timed from the base RTO. */
	assert_int_equal(s.c.rtt.backoff, 0);
	assert_int_equal(s.c.rto_at, s.now + tcp_rtt_timeout(&s.c.rtt));
	assert_int_equal(s.c.cc.cwnd, 1400 - OVERHEAD); /* the loss window, one new segment */
	s.c.pmtu_guessed = false;			/* as the stack does */
	timeouts_until(&s, 5, 1400 - OVERHEAD);
	assert_false(s.c.pmtu_guessed);
	assert_int_equal(s.c.rtt.backoff, 2);
	timeouts_until(&s, 6, 1280 - OVERHEAD);
	assert_int_equal(s.c.path_mtu, 1280);
	assert_true(s.c.pmtu_guessed);
	assert_int_equal(s.c.stats.pmtu_blackholes, 2);
	/* It fits: the ACK ends the run; the rest goes in the new size. */
	seg(&s, ACK, IRS + 1, ISS + 1 + 1280 - OVERHEAD, 65535, 0);
	assert_int_equal(s.c.retries, 0);
	assert_int_equal(s.c.snd_mss, 1280 - OVERHEAD);
	t = take_tx(&s);
	assert_int_equal(t->seq, ISS + 1 + 1280 - OVERHEAD);
	assert_int_equal(t->len, 1280 - OVERHEAD);
	drain_tx(&s);
	seg(&s, ACK, IRS + 1, ISS + 1 + 2 * MSS0, 65535, 0);
	drain_tx(&s);
	assert_int_equal(s.c.stats.pmtu_blackholes, 2);
	script_end(&s);
}

/*
 * cfg.blackhole_min_ns (200 ms): three timeouts at the 4 ms floor come
 * within 28 ms, a stall a paused peer can cause; the first timeout once
 * data has gone unacknowledged that long steps down.
 */
static void test_blackhole_waits_min_time(void **state)
{
	struct script s;
	uint64_t prev;

	(void)state;
	established_with(&s, NULL, 1);
	assert_int_equal(s.c.cfg.blackhole_min_ns, 200 * MS);
	timeouts_until(&s, 3, MSS0);
	assert_true(s.now - s.c.unacked_since < 200 * MS);
	assert_int_equal(s.c.path_mtu, 0);
	do {
		prev = s.now;
		advance_next(&s);
		drain_tx(&s);
	} while (!s.c.path_mtu && s.c.retries < 20);
	assert_int_equal(s.c.path_mtu, 1400);
	assert_true(s.now - s.c.unacked_since >= 200 * MS);
	assert_true(prev - s.c.unacked_since < 200 * MS);
	script_end(&s);
}

/*
 * Timeouts are counted at the size they happened at: a connection that
 * another's guess (or an ICMP error) lowered after two timeouts waits
 * for three at the new size before the next step, so one stall does not
 * take a peer's connections down a plateau each. And what is judged is
 * the segment an RTO resends: three small writes in flight, 1500 bytes
 * in all, are three small records, not a full-sized datagram.
 */
static void test_blackhole_counts_at_size(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;

	(void)state;
	script_config(&cfg);
	cfg.blackhole_min_ns = 0;
	established_with(&s, &o, 1);
	timeouts_until(&s, 2, MSS0);
	assert_true(tcp_path_mtu(&s.c, 1400, s.now, &s.out)); /* another connection's guess */
	drain_tx(&s);
	timeouts_until(&s, 4, 1400 - OVERHEAD);
	assert_int_equal(s.c.path_mtu, 1400);
	assert_int_equal(s.c.stats.pmtu_blackholes, 0);
	timeouts_until(&s, 5, 1280 - OVERHEAD); /* the third at 1400 */
	assert_int_equal(s.c.stats.pmtu_blackholes, 1);
	script_end(&s);

	cfg.rack = true; /* the scoreboard: an RTO resends record by record */
	fixture_established(&s, &o);
	prime_window(&s);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(app_send(&s, 500), 500);
		expect_tx(&s, ACK | PSH, ISS + 1 + i * 500, IRS + 1, 500);
	}
	assert_true(s.c.sb_on);
	while (s.c.retries < 6) { /* tail loss probes too: whatever goes, none larger */
		advance_next(&s);
		for (unsigned i = 0; i < s.out.n; i++)
			assert_true(s.out.seg[i].len <= 500);
		drain_tx(&s);
	}
	assert_int_equal(s.c.path_mtu, 0);
	script_end(&s);
}

/*
 * What is not a black hole: a segment smaller than the MSS lost as long
 * (a short RPC: its size says nothing), a full one after a host
 * unreachable (RFC 6069's broken path), one already at the 576 floor,
 * and anything with cfg.blackhole_rtos 0.
 */
static void test_blackhole_not_taken(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	assert_int_equal(app_send(&s, 1000), 1000);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, 1000);
	timeouts_until(&s, 6, 1000);
	assert_int_equal(s.c.path_mtu, 0);
	script_end(&s);

	established_with(&s, NULL, 1);
	timeouts_until(&s, 1, MSS0);
	assert_int_equal(icmp(&s, 3, ICMP_CODE_HOST_UNREACH, 0, ISS + 1 + 1), TCP_ICMP_SOFT_ERROR);
	drain_tx(&s);
	timeouts_until(&s, 6, MSS0);
	assert_int_equal(s.c.path_mtu, 0);
	script_end(&s);

	established_with(&s, NULL, 1);
	assert_true(tcp_path_mtu(&s.c, TCP_PMTU_MIN, s.now, &s.out));
	drain_tx(&s);
	timeouts_until(&s, 6, TCP_PMTU_MIN - OVERHEAD);
	assert_int_equal(s.c.path_mtu, TCP_PMTU_MIN);
	assert_int_equal(s.c.stats.pmtu_blackholes, 0);
	script_end(&s);

	script_config(&cfg);
	cfg.blackhole_rtos = 0;
	established_with(&s, &o, 1);
	timeouts_until(&s, 6, MSS0);
	assert_int_equal(s.c.path_mtu, 0);
	assert_false(s.c.pmtu_guessed);
	script_end(&s);
}

/*
 * RFC 6069 4: a host or net unreachable quoting SND.UNA after timeouts
 * undoes one doubling of the RTO, counted from when the timer was armed;
 * when that time has passed the timer expires at once and SND.UNA goes
 * again, and the timer is doubled as after any timeout. Errors about
 * other data, or that say nothing of the path, only record the error.
 */
static void test_unreachable_reverts_rto_backoff(void **state)
{
	struct script s;
	uint64_t rto, armed;
	const struct tcp_tx *t;

	(void)state;
	established_with(&s, NULL, 2);
	rto = tcp_rtt_timeout(&s.c.rtt);
	for (unsigned i = 0; i < 2; i++) { /* two timeouts: SND.UNA sent again each time */
		advance_next(&s);
		t = take_tx(&s);
		assert_int_equal(t->seq, ISS + 1);
		assert_true(t->retransmit);
		drain_tx(&s);
	}
	armed = s.now;
	assert_int_equal(s.c.rtt.backoff, 2);
	assert_int_equal(s.c.rto_at, armed + 4 * rto);
	assert_int_equal(icmp(&s, 3, ICMP_CODE_HOST_UNREACH, 0, ISS + 1 + MSS0),
			 TCP_ICMP_SOFT_ERROR); /* in the window, not SND.UNA */
	assert_int_equal(icmp(&s, 3, ICMP_CODE_PORT_UNREACH, 0, ISS + 1), TCP_ICMP_SOFT_ERROR);
	assert_int_equal(icmp(&s, ICMP_TYPE_TIME_EXCEEDED, 0, 0, ISS + 1), TCP_ICMP_SOFT_ERROR);
	assert_int_equal(s.c.rtt.backoff, 2);
	assert_int_equal(s.c.rto_at, armed + 4 * rto);
	/* A quarter of the way: 2 RTOs from the arming, not yet passed. */
	advance(&s, rto);
	assert_int_equal(icmp(&s, 3, ICMP_CODE_HOST_UNREACH, 0, ISS + 1), TCP_ICMP_RTO_REVERTED);
	assert_int_equal(s.c.soft_error, -EHOSTUNREACH);
	assert_int_equal(s.c.rtt.backoff, 1);
	assert_int_equal(s.c.rto_at, armed + 2 * rto);
	expect_nothing(&s);
	/* The next one brings it to 1 RTO from the arming: now. */
	assert_int_equal(icmp(&s, 3, ICMP_CODE_NET_UNREACH, 0, ISS + 1), TCP_ICMP_RTO_REVERTED);
	assert_int_equal(s.c.soft_error, -ENETUNREACH);
	t = take_tx(&s);
	assert_int_equal(t->seq, ISS + 1);
	assert_int_equal(t->len, MSS0);
	assert_true(t->retransmit);
	expect_nothing(&s);
	assert_int_equal(s.c.stats.timeouts, 3);
	assert_int_equal(s.c.rtt.backoff, 1);
	assert_int_equal(s.c.rto_at, s.now + 2 * rto);
	/* The connection goes on: an ACK of everything ends it all. */
	seg(&s, ACK, IRS + 1, ISS + 1 + 2 * MSS0, 65535, 0);
	drain_tx(&s);
	assert_int_equal(s.c.soft_error, 0);
	assert_int_equal(s.c.rto_at, 0);
	script_end(&s);
}

/*
 * At the ceiling the exponent stops growing (tcp_rtt_backoff): the first
 * error takes the timer below the ceiling again, from when it was armed.
 */
static void test_unreachable_reverts_at_ceiling(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;

	(void)state;
	script_config(&cfg);
	cfg.rto_max_ns = 2 * cfg.rto_min_ns;
	cfg.blackhole_rtos = 0; /* three silent timeouts of a full segment: a black hole's sign */
	established_with(&s, &o, 1);
	assert_int_equal(tcp_rtt_timeout(&s.c.rtt), cfg.rto_min_ns);
	for (unsigned i = 0; i < 3; i++) {
		advance_next(&s);
		expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, MSS0);
	}
	assert_int_equal(s.c.rtt.backoff, 1);
	assert_int_equal(s.c.rto_at, s.now + cfg.rto_max_ns);
	assert_int_equal(icmp(&s, 3, ICMP_CODE_HOST_UNREACH, 0, ISS + 1), TCP_ICMP_RTO_REVERTED);
	assert_int_equal(s.c.rtt.backoff, 0);
	assert_int_equal(s.c.rto_at, s.now + cfg.rto_min_ns);
	expect_nothing(&s);
	script_end(&s);
}

/*
 * RFC 6069 reverts only a backed-off timer, after a timeout of the data at
 * SND.UNA, of a synchronized connection: not before the first timeout, not
 * after one that could not double it (floor and ceiling the same), not
 * while a backoff carried over from the handshake times data never timed
 * out, and not in SYN-SENT or SYN-RECEIVED, where the connect's retries
 * would run out sooner.
 */
/* @code quoting @seq is only recorded: the timer and its backoff stay; the script ends. */
static void expect_no_revert(struct script *s, uint8_t code, uint32_t seq, unsigned backoff)
{
	uint64_t rto_at = s->c.rto_at;

	assert_int_equal(s->c.rtt.backoff, backoff);
	assert_int_equal(icmp(s, 3, code, 0, seq), TCP_ICMP_SOFT_ERROR);
	assert_int_equal(s->c.rtt.backoff, backoff);
	assert_int_equal(s->c.rto_at, rto_at);
	expect_nothing(s);
	script_end(s);
}

static void test_unreachable_no_revert(void **state)
{
	struct tcp_config cfg;
	struct fixture_opts o = fixture_opts_with(&cfg);
	struct script s;

	(void)state;
	script_config(&cfg);
	cfg.rto_max_ns = cfg.rto_min_ns; /* every timeout is the floor: nothing to undo */
	established_with(&s, &o, 1);
	advance_next(&s);
	expect_tx(&s, ACK | PSH, ISS + 1, IRS + 1, MSS0);
	assert_int_equal(s.c.retries, 1);
	expect_no_revert(&s, ICMP_CODE_HOST_UNREACH, ISS + 1, 0);

	established_with(&s, NULL, 1);
	expect_no_revert(&s, ICMP_CODE_HOST_UNREACH, ISS + 1, 0);

	/* A backoff from the handshake (Karn: no sample), no data timeout yet. */
	established_with(&s, NULL, 1);
	s.c.rtt.backoff = 1;
	assert_int_equal(s.c.retries, 0);
	expect_no_revert(&s, ICMP_CODE_HOST_UNREACH, ISS + 1, 1);

	fixture_syn_sent(&s, NULL);
	advance_next(&s);
	expect_tx(&s, SYN, ISS, 0, 0);
	expect_no_revert(&s, ICMP_CODE_HOST_UNREACH, ISS, 1);

	fixture_syn_received(&s, NULL);
	advance_next(&s);
	expect_tx(&s, SYN | ACK, ISS, IRS + 1, 0);
	expect_no_revert(&s, ICMP_CODE_NET_UNREACH, ISS, 1);
}

/* The peer acknowledges @ack and SACKs [@l, @r) (none if @l == @r). */
static void ack_sack(struct script *s, uint32_t ack, uint32_t l, uint32_t r)
{
	struct tcp_options o = {.has_ts = true,
				.ts_val = s->peer_ts,
				.ts_ecr = s->out.n ? s->out.seg[s->out.n - 1].opts.ts_val : 0};
	const uint32_t b[2] = {l, r};

	if (l != r)
		opts_sack(&o, 1, b);
	seg_opts(s, ACK, IRS + 1, ack, 65535, 0, &o);
}

/*
 * The peer acknowledges everything sent, an RTT after it went, until all
 * the application wrote is acknowledged. @return the largest segment sent
 * meanwhile.
 */
static uint32_t ack_all(struct script *s)
{
	uint32_t largest = 0;

	for (unsigned i = 0; i < 100 && s->c.snd_una != s->c.snd_una + s->c.snd.bytes; i++) {
		while (pending_tx(s)) {
			uint32_t len = take_tx(s)->len;

			largest = len > largest ? len : largest;
		}
		advance(s, 100 * US);
		ack_sack(s, s->c.snd_max, 0, 0);
	}
	assert_int_equal(s->c.snd.bytes, 0);
	while (pending_tx(s))
		assert_int_equal(take_tx(s)->len, 0);
	return largest;
}

/*
 * A SACK connection (the scoreboard a probe needs) to a peer whose MSS
 * option says @peer_mss, established, the window primed.
 */
static void probe_fixture_mss(struct script *s, struct tcp_config *cfg, uint16_t peer_mss)
{
	struct fixture_opts o = fixture_opts_with(cfg);

	o.peer_mss = peer_mss;
	script_config(cfg);
	cfg->rack = true;
	cfg->blackhole_min_ns = 0;
	fixture_established(s, &o);
	prime_window(s);
	assert_true(s->c.sb_on);
	assert_int_equal(s->c.cfg.probe_interval_ns, 600000 * MS);
}

/* The same to a peer whose MSS (1460) is as large as the interface's. */
static void probe_fixture(struct script *s, struct tcp_config *cfg)
{
	probe_fixture_mss(s, cfg, 1460);
}

/*
 * RFC 4821 7, RFC 8899 4.3: a black-hole step may have been an outage
 * (three timeouts of full segments look the same), so a search upwards
 * starts at once. At the first quiet moment with room, one segment as
 * large as the interface takes goes out ahead of the smaller ones; its
 * ACK raises the path MTU back (the stack is told: pmtu_probed), and at
 * the interface's MTU there is nothing more to search.
 */
static void test_probe_after_blackhole_outage(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const struct tcp_tx *t;

	(void)state;
	probe_fixture(&s, &cfg);
	assert_int_equal(app_send(&s, 2 * MSS0), (int)(2 * MSS0));
	drain_tx(&s);
	while (!s.c.path_mtu && s.c.retries < 10) {
		advance_next(&s);
		drain_tx(&s);
	}
	assert_int_equal(s.c.path_mtu, 1400);
	assert_int_equal(s.c.search_high, 1500);
	assert_true(s.c.probe_at && s.c.probe_at <= s.now);
	/* The outage ends: everything is acknowledged; more data goes. */
	ack_sack(&s, ISS + 1 + 2 * MSS0, 0, 0);
	drain_tx(&s);
	assert_int_equal(s.c.snd_mss, 1400 - OVERHEAD);
	/* Once the timeout's episode is over (a round), a probe goes first, whole. */
	assert_int_equal(app_send(&s, 2 * MSS0), (int)(2 * MSS0));
	assert_true(ack_all(&s) <= 1400 - OVERHEAD);
	assert_int_equal(s.c.stats.pmtu_probes, 0);
	assert_int_equal(app_send(&s, 20 * MSS0), (int)(20 * MSS0));
	t = take_tx(&s);
	assert_int_equal(t->len, MSS0); /* the probe: a 1500-byte datagram */
	assert_int_equal(t->tso_mss, 0);
	assert_int_equal(s.c.probe_mtu, 1500);
	assert_int_equal(s.c.stats.pmtu_probes, 1);
	while (pending_tx(&s)) /* the rest in the current size */
		assert_true(take_tx(&s)->len <= 1400 - OVERHEAD);
	/* Its ACK: the path takes 1500 again. */
	advance(&s, 100 * US);
	ack_sack(&s, s.c.probe_end, 0, 0);
	assert_int_equal(s.c.path_mtu, 0);
	assert_int_equal(s.c.snd_mss, MSS0);
	assert_true(s.c.pmtu_probed);
	assert_int_equal(s.c.stats.pmtu_probes_ok, 1);
	assert_int_equal(s.c.probe_at, 0); /* nothing above the interface's MTU */
	assert_int_equal(s.c.probe_mtu, 0);
	drain_tx(&s);
	script_end(&s);
}

/*
 * A probe the path drops: RACK marks its data lost once later segments
 * are SACKed. That loss is the probe's alone, so it is no congestion
 * signal (RFC 4821 7.6.2, as Linux): no recovery, cwnd kept, the data
 * sent again in segments that fit. The next plateau down (1400) is
 * probed at the next quiet moment; when it gets through the search ends
 * until cfg.probe_interval_ns from then. A path MTU lowered otherwise
 * (an ICMP error, the cache) waits that interval before its first probe.
 */
static void test_probe_lost_no_congestion_response(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t mss = 1280 - OVERHEAD, p0 = ISS + 1;
	uint32_t cwnd;

	(void)state;
	probe_fixture(&s, &cfg);
	assert_true(tcp_path_mtu(&s.c, 1280, s.now, &s.out));
	assert_int_equal(s.c.probe_at, s.now + 600000 * MS);
	assert_int_equal(s.c.search_high, 1500);
	assert_int_equal(app_send(&s, 6 * mss), (int)(6 * mss));
	while (pending_tx(&s)) /* not due yet: no probe */
		assert_true(take_tx(&s)->len <= mss);
	ack_sack(&s, p0 + 6 * mss, 0, 0);
	advance(&s, 600000 * MS);

	assert_int_equal(app_send(&s, 12 * MSS0), (int)(12 * MSS0));
	expect_tx(&s, ACK, p0 + 6 * mss, IRS + 1, MSS0); /* the probe */
	assert_int_equal(s.c.probe_mtu, 1500);
	drain_tx(&s);
	cwnd = s.c.cc.cwnd;
	/* The probe is lost; the four segments after it arrive. */
	advance(&s, 100 * US);
	ack_sack(&s, p0 + 6 * mss, p0 + 6 * mss + MSS0, p0 + 6 * mss + MSS0 + 4 * mss);
	if (!s.c.stats.pmtu_probes_lost)
		advance_next(&s); /* the reordering window */
	assert_int_equal(s.c.stats.pmtu_probes_lost, 1);
	assert_false(s.c.cc.in_recovery);
	assert_int_equal(s.c.stats.recoveries, 0);
	assert_int_equal(s.c.cc.cwnd, cwnd);
	assert_int_equal(s.c.search_high, 1400);
	assert_int_equal(s.c.probe_mtu, 0);
	expect_resent(&s, p0 + 6 * mss, MSS0, mss);
	assert_true(ack_all(&s) <= mss);
	/* At the next quiet moment with data to send, a probe of 1400 goes, and fits. */
	assert_int_equal(app_send(&s, 8 * MSS0), (int)(8 * MSS0));
	assert_int_equal(ack_all(&s), 1400 - OVERHEAD);
	assert_int_equal(s.c.path_mtu, 1400);
	assert_int_equal(s.c.snd_mss, 1400 - OVERHEAD);
	assert_int_equal(s.c.stats.pmtu_probes, 2);
	assert_int_equal(s.c.stats.pmtu_probes_ok, 1);
	assert_int_equal(s.c.probe_at, s.now + 600000 * MS); /* 1500 again in 10 minutes */
	assert_int_equal(s.c.search_high, 1500);
	drain_tx(&s);
	script_end(&s);
}

/*
 * A probe lost together with another segment: the probe failed, and the
 * other loss is congestion's, so recovery begins as it would have.
 */
static void test_probe_lost_with_another(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t mss = 1280 - OVERHEAD, p0 = ISS + 1;

	(void)state;
	probe_fixture(&s, &cfg);
	assert_true(tcp_path_mtu(&s.c, 1280, s.now, &s.out));
	advance(&s, 600000 * MS);
	assert_int_equal(app_send(&s, 8 * MSS0), (int)(8 * MSS0));
	expect_tx(&s, ACK, p0, IRS + 1, MSS0); /* the probe */
	drain_tx(&s);
	/* The probe and the segment after it are lost; the four after those arrive. */
	advance(&s, 100 * US);
	ack_sack(&s, p0, p0 + MSS0 + mss, p0 + MSS0 + 5 * mss);
	if (!s.c.stats.pmtu_probes_lost)
		advance_next(&s);
	assert_int_equal(s.c.stats.pmtu_probes_lost, 1);
	assert_true(s.c.cc.in_recovery);
	assert_int_equal(s.c.stats.recoveries, 1);
	drain_tx(&s);
	script_end(&s);
}

/*
 * A lower path MTU while a probe is out (here an ICMP error about the
 * segment before it): the probe's data goes again smaller, so its ACK
 * proves nothing: counted lost, the path MTU is not raised, and the
 * lowering ends the search until cfg.probe_interval_ns from now.
 */
static void test_probe_out_when_lowered(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t p0 = ISS + 1;

	(void)state;
	probe_fixture(&s, &cfg);
	assert_true(tcp_path_mtu(&s.c, 1400, s.now, &s.out));
	advance(&s, 600000 * MS);
	assert_int_equal(app_send(&s, 1400 - OVERHEAD), (int)(1400 - OVERHEAD));
	assert_int_equal(app_send(&s, 4 * MSS0), (int)(4 * MSS0));
	assert_int_equal(s.c.probe_mtu, 1500);
	assert_int_equal(s.c.probe_seq, p0 + 1400 - OVERHEAD);
	drain_tx(&s);
	assert_int_equal(frag_needed(&s, 1280, p0), TCP_ICMP_MSS_LOWERED);
	assert_int_equal(s.c.probe_mtu, 0);
	assert_int_equal(s.c.stats.pmtu_probes_lost, 1);
	assert_int_equal(s.c.probe_at, s.now + 600000 * MS);
	assert_true(ack_all(&s) <= 1280 - OVERHEAD);
	assert_int_equal(s.c.path_mtu, 1280);
	assert_int_equal(s.c.stats.pmtu_probes_ok, 0);
	script_end(&s);
}

/*
 * One probe at a time (as Linux's tcp_mtu_probe()): while one is out, an
 * ACK of the data before it opens cwnd, and what goes then is data in the
 * current size, not a second probe that would take the first one's place
 * (whose ACK or loss is what the search waits for). The probe's ACK ends
 * the search as usual.
 */
static void test_probe_one_at_a_time(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t mss = 1280 - OVERHEAD, p0 = ISS + 1;
	unsigned sent = 0;

	(void)state;
	probe_fixture(&s, &cfg);
	assert_true(tcp_path_mtu(&s.c, 1280, s.now, &s.out));
	advance(&s, 600000 * MS);
	assert_int_equal(app_send(&s, mss), (int)mss); /* less than a probe: an ordinary segment */
	assert_int_equal(take_tx(&s)->len, mss);
	assert_int_equal(app_send(&s, 20 * MSS0), (int)(20 * MSS0));
	expect_tx(&s, ACK, p0 + mss, IRS + 1, MSS0); /* the probe */
	assert_int_equal(s.c.probe_mtu, 1500);
	drain_tx(&s);
	/* The first segment is acknowledged: more goes, none of it a probe. */
	advance(&s, 100 * US);
	ack_sack(&s, p0 + mss, 0, 0);
	while (pending_tx(&s)) {
		assert_true(take_tx(&s)->len <= mss);
		sent++;
	}
	assert_true(sent >= 2);
	assert_int_equal(s.c.stats.pmtu_probes, 1);
	assert_int_equal(s.c.probe_seq, p0 + mss);
	assert_int_equal(s.c.probe_end, p0 + mss + MSS0);
	ack_all(&s);
	assert_int_equal(s.c.stats.pmtu_probes_ok, 1);
	assert_int_equal(s.c.path_mtu, 0);
	script_end(&s);
}

/*
 * RFC 9293 3.7.1 (MUST-16): no segment is larger than the peer's MSS
 * allows, a probe included. To a peer whose MSS is 1400 (1388 bytes of
 * data with timestamps) on a path MTU of 1280, the probe carries 1388
 * bytes (a 1440-byte datagram), not what the interface's 1500 would
 * leave. Its ACK takes the path MTU to 1440, where segments are already
 * as large as the peer takes: at the next search there is nothing larger
 * to try, so no probe goes (none counted) and the search waits
 * cfg.probe_interval_ns again.
 */
static void test_probe_within_peer_mss(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t clamp = 1400 - 12, p0 = ISS + 1;

	(void)state;
	probe_fixture_mss(&s, &cfg, 1400);
	assert_int_equal(s.c.mss_clamp, clamp);
	assert_int_equal(s.c.snd_mss, clamp);
	assert_true(tcp_path_mtu(&s.c, 1280, s.now, &s.out));
	advance(&s, 600000 * MS);
	assert_int_equal(app_send(&s, 12 * clamp), (int)(12 * clamp));
	expect_tx(&s, ACK, p0, IRS + 1, clamp); /* the probe */
	assert_int_equal(s.c.probe_mtu, clamp + OVERHEAD);
	assert_int_equal(ack_all(&s), clamp);
	assert_int_equal(s.c.stats.pmtu_probes_ok, 1);
	assert_int_equal(s.c.path_mtu, clamp + OVERHEAD);
	assert_int_equal(s.c.snd_mss, clamp);

	advance(&s, 600000 * MS);
	assert_int_equal(app_send(&s, 12 * clamp), (int)(12 * clamp));
	assert_int_equal(s.c.stats.pmtu_probes, 1);
	assert_int_equal(s.c.probe_mtu, 0);
	assert_int_equal(s.c.probe_at, s.now + 600000 * MS);
	assert_int_equal(ack_all(&s), clamp);
	script_end(&s);
}

/*
 * A timeout with a probe out fails it too (the probe may be what was
 * lost), and an ICMP error about the probe says what the path takes: the
 * search tries that next rather than the next plateau. With
 * cfg.probe_interval_ns 0 there is no search at all.
 */
static void test_probe_timeout_and_icmp_hint(void **state)
{
	struct tcp_config cfg;
	struct script s;
	const uint32_t p0 = ISS + 1;

	(void)state;
	probe_fixture(&s, &cfg);
	assert_true(tcp_path_mtu(&s.c, 1280, s.now, &s.out));
	advance(&s, 600000 * MS);
	assert_int_equal(app_send(&s, 3 * MSS0), (int)(3 * MSS0));
	expect_tx(&s, ACK, p0, IRS + 1, MSS0);
	drain_tx(&s);
	assert_int_equal(frag_needed(&s, 1350, p0), TCP_ICMP_MTU_NOT_LOWER);
	assert_int_equal(s.c.search_high, 1350);
	assert_int_equal(s.c.path_mtu, 1280); /* an error about a probe lowers nothing */
	while (!s.c.stats.timeouts)
		advance_next(&s);
	drain_tx(&s);
	assert_int_equal(s.c.stats.pmtu_probes_lost, 1);
	assert_int_equal(s.c.search_high, 1350);
	assert_true(ack_all(&s) <= 1280 - OVERHEAD);
	/* Once quiet (an RTT sample ends the backoff), the probe is of 1350. */
	assert_int_equal(app_send(&s, 8 * MSS0), (int)(8 * MSS0));
	assert_int_equal(ack_all(&s), 1350 - OVERHEAD);
	assert_int_equal(s.c.path_mtu, 1350);
	assert_int_equal(s.c.stats.pmtu_probes_ok, 1);
	script_end(&s);

	probe_fixture(&s, &cfg);
	s.c.cfg.probe_interval_ns = 0;
	assert_true(tcp_path_mtu(&s.c, 1280, s.now, &s.out));
	assert_int_equal(s.c.probe_at, 0);
	advance(&s, 600000 * MS);
	assert_int_equal(app_send(&s, 3 * MSS0), (int)(3 * MSS0));
	while (pending_tx(&s))
		assert_true(take_tx(&s)->len <= 1280 - OVERHEAD);
	assert_int_equal(s.c.stats.pmtu_probes, 0);
	script_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frag_needed_lowers_mss),
	    cmocka_unit_test(test_frag_needed_resend_not_timed),
	    cmocka_unit_test(test_frag_needed_resegments_scoreboard),
	    cmocka_unit_test(test_out_of_window_ignored),
	    cmocka_unit_test(test_frag_needed_absurd_and_floor),
	    cmocka_unit_test(test_errors_soft_when_established),
	    cmocka_unit_test(test_soft_error_reported_on_timeout),
	    cmocka_unit_test(test_syn_sent_hard_error_aborts),
	    cmocka_unit_test(test_syn_sent_soft_error_keeps_trying),
	    cmocka_unit_test(test_syn_received_frag_needed_ignored),
	    cmocka_unit_test(test_path_mtu_given),
	    cmocka_unit_test(test_path_mtu_raise_keeps_one_segment),
	    cmocka_unit_test(test_blackhole_steps_down),
	    cmocka_unit_test(test_blackhole_waits_min_time),
	    cmocka_unit_test(test_blackhole_counts_at_size),
	    cmocka_unit_test(test_blackhole_not_taken),
	    cmocka_unit_test(test_probe_after_blackhole_outage),
	    cmocka_unit_test(test_probe_lost_no_congestion_response),
	    cmocka_unit_test(test_probe_lost_with_another),
	    cmocka_unit_test(test_probe_out_when_lowered),
	    cmocka_unit_test(test_probe_timeout_and_icmp_hint),
	    cmocka_unit_test(test_probe_one_at_a_time),
	    cmocka_unit_test(test_probe_within_peer_mss),
	    cmocka_unit_test(test_unreachable_reverts_rto_backoff),
	    cmocka_unit_test(test_unreachable_reverts_at_ceiling),
	    cmocka_unit_test(test_unreachable_no_revert),
	};

	return cmocka_run_group_tests_name("tcp/core_icmp", tests, script_group_setup,
					   script_group_teardown);
}
