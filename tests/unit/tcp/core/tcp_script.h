/*
 * tcp_script.h - packet-script tests for the sans-I/O TCP core.
 *
 * A test drives one struct tcp_conn with a virtual clock: it feeds
 * segments (seg()), advances time (advance(), which runs due timers), and
 * checks what the connection sent (expect_tx()/expect_nothing()), its
 * state and its events. Fixtures put a connection in a named state
 * (fixture_established(), fixture_fin_wait_2(), ...). Payload lives in
 * Zbuf memory (mmap backend, no EAL) and every test ends by checking that
 * no Zbuf reference leaked.
 *
 * Conventions: we are the local end, port 61440 on 10.0.0.1; the peer is
 * 10.0.0.2:80. Our ISS is ISS, the peer's IRS.
 */
#ifndef LUNAR_TESTS_TCP_SCRIPT_H
#define LUNAR_TESTS_TCP_SCRIPT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "mem/zbuf.h"
#include "tcp/tcp_conn.h"
#include "tcp/tcp_seq.h"

#define ISS 1000000u
#define IRS 5000000u
#define MS  1000000ull
#define US  1000ull

/* Flag shorthands as they read in RFC 9293 */
#define SYN RTE_TCP_SYN_FLAG
#define ACK RTE_TCP_ACK_FLAG
#define FIN RTE_TCP_FIN_FLAG
#define RST RTE_TCP_RST_FLAG
#define PSH RTE_TCP_PSH_FLAG

struct script {
	struct tcp_conn c;
	struct tcp_out out; /* what the connection sent since the last take */
	unsigned next;	    /* first segment of out not yet checked */
	uint64_t now;
	uint32_t peer_ts;   /* the peer's timestamp clock */
	bool peer_ts_on;    /* the peer sends timestamps */
	uint8_t peer_ecn;   /* the IP ECN field of the peer's segments (RFC 3168 5) */
	uint64_t zbuf_base; /* Zbuf objects in use when the fixture began */
};

/** Options a fixture negotiates. */
struct fixture_opts {
	bool ts, sack, ws;
	uint8_t peer_wscale;
	uint16_t peer_mss;
	uint16_t peer_window;	/* raw window field the peer sends */
	struct tcp_config *cfg; /* NULL: tcp_config_default() with nodelay on */
};

/* Zbuf for payload: call from group setup/teardown. */
int script_group_setup(void **state);
int script_group_teardown(void **state);

/** A config for tests: defaults, Nagle off unless a test turns it on. */
void script_config(struct tcp_config *cfg);

/* Fixtures: the connection in a named state with default (or given) options. */
void fixture_closed(struct script *s, const struct tcp_config *cfg);
void fixture_syn_sent(struct script *s, const struct fixture_opts *o);
void fixture_syn_received(struct script *s, const struct fixture_opts *o);
void fixture_established(struct script *s, const struct fixture_opts *o);
void fixture_fin_wait_1(struct script *s, const struct fixture_opts *o);
void fixture_fin_wait_2(struct script *s, const struct fixture_opts *o);
void fixture_close_wait(struct script *s, const struct fixture_opts *o);
void fixture_closing(struct script *s, const struct fixture_opts *o);
void fixture_last_ack(struct script *s, const struct fixture_opts *o);
void fixture_time_wait(struct script *s, const struct fixture_opts *o);
/** fixture_established()'s default options (ts, sack, ws 7, MSS 1460) with configuration @cfg. */
struct fixture_opts fixture_opts_with(struct tcp_config *cfg);
/** The peer's first ACK after the handshake, with its (now scaled) window; nothing is sent back. */
void prime_window(struct script *s);
/** Tear down: release the connection and assert no Zbuf reference leaked. */
void script_end(struct script *s);

/** Feed a segment from the peer; @len payload bytes of pattern data (fresh Zbuf). */
void seg(struct script *s, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd, uint32_t len);
/** Same with explicit options (a timestamp is added when the peer uses them and none given). */
void seg_opts(struct script *s, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd,
	      uint32_t len, const struct tcp_options *opts);
/** Put @n SACK blocks [blocks[2i], blocks[2i+1]) into @o (for seg_opts()). */
void opts_sack(struct tcp_options *o, unsigned n, const uint32_t *blocks);
/** Advance the virtual clock by @ns, running timers that fall due. */
void advance(struct script *s, uint64_t ns);
/** Queue @len bytes from the application (fresh Zbuf), then run output. */
int app_send(struct script *s, uint32_t len);

/** The next segment the connection sent; fails the test if there is none. */
const struct tcp_tx *take_tx(struct script *s);
/** Check the next segment sent: flags exactly, seq, ack (if ACK set), payload length. */
const struct tcp_tx *expect_tx(struct script *s, uint8_t flags, uint32_t seq, uint32_t ack,
			       uint32_t len);
/** Nothing (more) was sent. */
void expect_nothing(struct script *s);
/** Count of segments sent and not yet taken. */
unsigned pending_tx(const struct script *s);

/* ---- Helpers for test_tcp_states.c and test_tcp_rst_syn.c ---- */

/** A fixture function: puts @s's connection in a named state. */
typedef void (*script_fixture_fn)(struct script *s, const struct fixture_opts *o);

/** fixture_closed() with our ISS given (sequence-number wraparound tests). */
void fixture_closed_iss(struct script *s, const struct tcp_config *cfg, uint32_t iss);
/**
 * Simultaneous open (RFC 9293 3.5 figure 8): SYN-SENT, then the peer's SYN
 * without ACK arrives: SYN-RECEIVED, our SYN,ACK checked.
 */
void fixture_syn_received_active(struct script *s, const struct fixture_opts *o);
/** Feed a segment carrying a timestamp option with TSval @tsval (TSecr: our latest TSval). */
void seg_ts(struct script *s, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd, uint32_t len,
	    uint32_t tsval);
/** CLOSE / ABORT from the application, output appended to s->out. */
void app_close(struct script *s);
void app_abort(struct script *s);
/** Discard what the connection sent and the test has not checked. */
void drain_tx(struct script *s);
/**
 * Take all in-order received data, check it is seg()'s pattern for its
 * sequence numbers, release it. @return bytes taken.
 */
uint32_t recv_all(struct script *s);

/* ---- Helpers for test_tcp_data.c, test_tcp_loss.c and test_tcp_window.c ---- */

/**
 * fixture_established() with our ISS @iss and the peer's IRS @irs (sequence
 * wraparound), the SYN-ACK arriving @syn_rtt_ns after our SYN (so the
 * handshake gives that RTT sample), and, if !@peer_mss_option, no MSS
 * option in the SYN-ACK (RFC 9293 3.7.1: the peer's MSS is then 536).
 */
void fixture_established_ex(struct script *s, const struct fixture_opts *o, uint32_t iss,
			    uint32_t irs, uint64_t syn_rtt_ns, bool peer_mss_option);
/**
 * Feed a segment whose payload is @len bytes at @data (Zbuf memory the
 * caller owns and keeps its reference on; a timestamp is added when the
 * peer uses them).
 */
void seg_data(struct script *s, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd,
	      const uint8_t *data, uint32_t len);
/** Advance the clock to the earliest armed deadline (running it). @return ns elapsed. */
uint64_t advance_next(struct script *s);
/**
 * Take up to @max_slices received slices (0: all), check each starts at
 * *@next_seq and holds seg()'s pattern, advance *@next_seq, release them.
 * @return bytes taken.
 */
uint32_t recv_in_order(struct script *s, uint32_t *next_seq, unsigned max_slices);

#endif
