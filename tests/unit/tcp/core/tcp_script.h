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
#define MS 1000000ull
#define US 1000ull

/* Flag shorthands as they read in RFC 9293 */
#define SYN RTE_TCP_SYN_FLAG
#define ACK RTE_TCP_ACK_FLAG
#define FIN RTE_TCP_FIN_FLAG
#define RST RTE_TCP_RST_FLAG
#define PSH RTE_TCP_PSH_FLAG

struct script {
	struct tcp_conn c;
	struct tcp_out out;  /* what the connection sent since the last take */
	unsigned next;       /* first segment of out not yet checked */
	uint64_t now;
	uint32_t peer_ts;    /* the peer's timestamp clock */
	bool peer_ts_on;     /* the peer sends timestamps */
	uint64_t zbuf_base;  /* Zbuf objects in use when the fixture began */
};

/** Options a fixture negotiates. */
struct fixture_opts {
	bool ts, sack, ws;
	uint8_t peer_wscale;
	uint16_t peer_mss;
	uint16_t peer_window; /* raw window field the peer sends */
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
/** Tear down: release the connection and assert no Zbuf reference leaked. */
void script_end(struct script *s);

/** Feed a segment from the peer; @len payload bytes of pattern data (fresh Zbuf). */
void seg(struct script *s, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd, uint32_t len);
/** Same with explicit options (a timestamp is added when the peer uses them and none given). */
void seg_opts(struct script *s, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd,
	      uint32_t len, const struct tcp_options *opts);
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

#endif
