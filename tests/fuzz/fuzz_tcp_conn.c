/*
 * fuzz_tcp_conn.c - libFuzzer target for the sans-I/O TCP connection
 * (src/tcp/tcp_conn.c, tcp_input.c and what they use: tcp_reass.c,
 * tcp_cc.c, tcp_rtt.c, tcp_syncookie.c). Each input is one connection,
 * started one of eight ways (active, passive, SYN cookie or simultaneous
 * open, completed in the set-up or left in LISTEN, SYN-SENT or
 * SYN-RECEIVED for the operations), then a sequence of operations (peer
 * segments, time, application calls), so every RFC 9293 state gets them.
 * After every set-up step and operation the target checks the connection's
 * invariants and every segment it emitted, and abort()s on a violation; at
 * the end tcp_conn_fini() must leave no Zbuf object referenced.
 *
 * Input: a 16-byte set-up block (missing bytes read as 0), then operations.
 *
 *   0     options: bit0-2 the peer offers timestamps / SACK / window scale
 *         (in its SYN or SYN-ACK of the set-up and in every SYN an
 *         operation sends); bit3-5 we do NOT offer timestamps / SACK /
 *         window scale; bit6 nodelay; bit7 no delayed ACKs
 *   1     bit0-3 peer's window shift (0..15: > 14 must be clamped);
 *         bit7 adds 4 to the start mode; bit4-6 unused
 *   2-3   peer's MSS option (big-endian; 0: no MSS option)
 *   4-7   ISS (with a SYN cookie, the cookie is the ISS instead)
 *   8-11  IRS: the sequence number of the peer's SYN or SYN-ACK
 *   12-13 the peer's window field, until an operation gives another
 *   14    bit0-2 receive buffer, bit3-5 send buffer (tables below);
 *         bit6-7 start mode
 *   15    bit0-1 our MSS; bit2 keep-alive on (2 s idle, 0.5 s x 3);
 *         bit3-4 initial window {10, RFC 5681, 1, 4} segments;
 *         bit5 reass_max_segs = 4; bit6 reass_max_bytes = 3000;
 *         bit7 the peer answers our SYN or SYN-ACK 3 ms after it (an RTT
 *         sample); with a SYN cookie, the ACK comes 20 s after the SYN,
 *         in the cookie's next time slot (the previous slot must check)
 *
 * Start modes (byte 14 bits 6-7, plus 4 with byte 1 bit 7; inputs older
 * than the modes have 0 there and start as they always did):
 *
 *   0     active open: tcp_connect(), the peer's SYN-ACK: ESTABLISHED
 *   1     tcp_connect() only: the operations meet SYN-SENT (the SYN-ACK,
 *         a RST, a bare SYN, timeouts...)
 *   2     passive open: tcp_listen(), the peer's SYN through tcp_input();
 *         our SYN-ACK sent, SYN-RECEIVED until an operation ACKs it
 *   3     passive open from a SYN cookie: tcp_syncookie_make() on the
 *         peer's SYN, tcp_syncookie_check() on its ACK (which must pass and
 *         give the SYN's options back), the SYN rebuilt as tcp_stack.c's
 *         cookie_conn() does, tcp_listen(), tcp_conn_from_cookie():
 *         SYN-RECEIVED, nothing sent
 *   4     simultaneous open: tcp_connect(), then the peer's bare SYN; our
 *         SYN-ACK sent, SYN-RECEIVED
 *   5     tcp_listen() only: the operations meet LISTEN
 *   6, 7  modes 2 and 3 completed by the peer's ACK: ESTABLISHED, server side
 *
 * Operations, one selector byte each (selector % 16), then their bytes:
 *
 *   0-3,14 segment from fields: flags byte; bases byte (bit0-1 SEQ base
 *         RCV.NXT / our advertised right edge / IRS / RCV.NXT+2^31, bit2-3
 *         ACK base SND.UNA / SND.MAX / SND.NXT / SND.UNA-max window, bit4
 *         flip the timestamp option's presence, bit5 a TSval delta byte
 *         follows, bit6 SACK blocks follow, bit7 an explicit window
 *         follows, else the previous one is reused); SEQ delta, ACK delta
 *         (int16 each); [window u16]; payload length (u16 & 0x3fff);
 *         [TSval delta int8]; [SACK: count byte (1..4), per block a left
 *         delta int16 from SND.UNA and a length u16]. Until the peer's SYN
 *         is taken, IRS, RCV.NXT and the right edge are 0 and timestamps
 *         are present as set-up bit0 offers them (then as negotiated); a
 *         SYN carries the set-up's MSS, window scale and SACK-permitted.
 *   4-5   raw segment: length u16 and that many bytes, parsed by tcp_parse()
 *         (checksum not verified); selector 5 takes the parsed SEQ and ACK
 *         as deltas from RCV.NXT and SND.UNA.
 *   6-7   time: unit byte (bit0-2 unit 1us, 50us, 500us, 4ms, 50ms, 250ms,
 *         1s, 5s; bit3-4 mode: 0/3 advance by mult*unit then tcp_timer once,
 *         1 jump to the next deadline, 2 step through every deadline up to
 *         now + mult*unit like an event loop), mult byte.
 *   8-9   application send: length u16 (0..65535), then tcp_output().
 *   10-11 application receive: max slices byte (1..16).
 *   12    tcp_close().      15  tcp_abort().
 *   13    selector < 64: tcp_output(); < 128: tcp_ack_work() (the
 *         stack's after-transmit step); else memory pressure (selector >> 4)
 *         % 3 as the stack sets it: CRITICAL also prunes the out-of-order
 *         queue (tcp_prune_ooo), NORMAL announces the window
 *         (tcp_window_update). The level stays until the next such step.
 *
 * Every payload byte the peer sends at sequence number s is pat_rx(s) and
 * every byte the application writes at stream offset o is pat_tx(o), so
 * the target checks the content of what is received (receive queue,
 * out-of-order queue, tcp_recv() slices) and of what is sent
 * (tcp_tx_slices()) as well as the bookkeeping.
 *
 * Checked after every operation (each verified against the code; nothing
 * the RFCs leave open, e.g. the right edge of a scaled window may recede by
 * the rounding of RFC 7323 2.4, so only "never beyond RCV.ADV" is checked):
 *  - SND.UNA <= SND.NXT <= SND.MAX; SND.UNA, SND.MAX, RCV.NXT, RCV.ADV never
 *    go back; in flight <= send buffer bytes (+1 for an unacknowledged FIN);
 *    the send buffer's ring adds up and holds exactly the stream offsets the
 *    application wrote and the peer has not acknowledged; bytes <= snd_buf;
 *  - receive queue + out-of-order bytes <= rcv_buf (the code guarantees it
 *    exactly: data is cut at RCV.ADV and RCV.ADV - RCV.NXT never exceeds the
 *    free space it was computed from, so no MSS of slack), queued bytes +
 *    the open window <= rcv_buf; the receive queue is contiguous up to
 *    RCV.NXT (minus the FIN); the out-of-order queue is sorted, disjoint,
 *    strictly above RCV.NXT and within RCV.ADV, and its SACK recency list
 *    names only maximal runs it holds;
 *  - our SYN only in SYN-SENT, our SYN-ACK only in SYN-RECEIVED: ISS, no
 *    data, our MSS, an unscaled window within RCV.ADV; the SYN offers what
 *    we are configured for, the SYN-ACK only what the peer's SYN offered
 *    too, TSecr 0 / TS.Recent;
 *  - every other emitted segment: RST without data; data within
 *    [SND.UNA, SND.MAX] and the send buffer, at most the MSS with options
 *    counted, tcp_tx_slices() covering exactly its length with the right
 *    bytes; FIN at fin_seq; ACK <= RCV.NXT; ACK + window <= RCV.ADV;
 *    timestamps iff negotiated, with our clock; SACK blocks only if
 *    negotiated, at most 3 (4 without timestamps), above the ACK and of data
 *    actually received; out->n <= TCP_OUT_MAX;
 *  - state changes only along RFC 9293's diagram (3.3.2; CLOSED final);
 *    state against the FIN bookkeeping (FIN received iff CLOSE-WAIT,
 *    CLOSING, LAST-ACK, TIME-WAIT; FIN acknowledged in FIN-WAIT-2 and
 *    TIME-WAIT), CLOSED matches TCP_EV_CLOSED, TCP_EV_CONNECTED iff
 *    ESTABLISHED was reached, -ECONNREFUSED only before it and
 *    -ECONNRESET only after; cwnd >= SMSS; 64 <= MSS <= ours once the
 *    peer's SYN was taken (536 before); options only as configured;
 *  - the handshake: before the peer's SYN, IRS, RCV.NXT and RCV.ADV are 0;
 *    in LISTEN nothing is numbered and no timer runs; in SYN-SENT and
 *    SYN-RECEIVED, SND.UNA = ISS and SND.NXT = SND.MAX = ISS + 1, no FIN
 *    sent (a CLOSE in SYN-RECEIVED only queues it), nothing received, and
 *    the retransmission timer, and no other, runs; the set-up's own steps
 *    check what was negotiated (options, send MSS, the cookie's options);
 *  - timers: no deadline before now, none due after tcp_timer(now), none
 *    when CLOSED, RTO and persist within their maxima; and liveness: while
 *    data or a FIN is owed to the peer, the retransmission or the persist
 *    timer is armed (tcp_input() is not followed by tcp_output(), as in
 *    tcp_stack.c).
 * At the end: tcp_conn_fini() leaves zbuf_in_use() == 0.
 *
 * All Zbuf memory comes from the mmap backend; zbuf.c is compiled with
 * ASan here, so a freed object is poisoned and any use of it is reported.
 * FUZZ_TCP_CONN_VERBOSE=1 ./fuzz_tcp_conn <file> prints every step and the
 * segments it emitted. FUZZ_TCP_CONN_STATES=1 prints at exit how often each
 * state was checked in over all the inputs run (set-up steps but the last
 * not counted) and exits with 1 if a state never was: the fuzz suite runs
 * the committed seeds so (fuzz/fuzz_tcp_conn_states).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "fuzz_tcp_model.h"
#include "mem/zbuf.h"
#include "tcp/tcp_conn.h"
#include "tcp/tcp_scoreboard.h"
#include "tcp/tcp_seq.h"
#include "tcp/tcp_syncookie.h"
#include "wire/tcp.h"

#define MS		 1000000ull
#define US		 1000ull
#define SETUP_LEN	 16
#define MAX_PAYLOAD	 0x3fff
#define SWS_OVERRIDE_MAX (200 * MS) /* tcp_conn.c's SWS override timer */

static const uint32_t rcv_bufs[8] = {1u << 20, 65535, 4096, 300000, 2048, 16384, 131072, 1000};
static const uint32_t snd_bufs[8] = {1u << 20, 65536, 4096, 200000, 1500, 32768, 8192, 100};
static const uint16_t our_mss[4] = {1460, 536, 88, 8960};
static const unsigned iw_table[4] = {10, 0, 1, 4};
static const uint64_t units[8] = {1 * US,  50 * US,  500 * US,	4 * MS,
				  50 * MS, 250 * MS, 1000 * MS, 5000 * MS};

static const uint32_t LADDR = 0x0a000001, RADDR = 0x0a000002;
static const uint16_t LPORT = 61440, RPORT = 80;

struct fz {
	struct tcp_conn c;
	struct tcp_out out;
	uint64_t now;
	uint32_t iss, irs;
	uint32_t peer_ts;	     /* the peer's timestamp clock */
	uint16_t peer_wnd;	     /* last window field the peer sent */
	uint32_t app_off;	     /* stream offset of the next byte the application sends */
	uint32_t app_rcv;	     /* sequence number of the next byte the application takes */
	uint32_t last_ts_val;	     /* our last TSval (the peer echoes it) */
	struct tcp_options syn_opts; /* what the peer's SYNs carry (set-up bytes 0-3) */
	bool peer_syn;		     /* the connection took the peer's SYN: IRS known */
	bool synced;		     /* the handshake completed (ESTABLISHED was reached) */
	bool in_setup;		     /* set-up steps: checked, not counted in state_visits */
	/* previous values: these only move forward */
	uint32_t prev_snd_una, prev_snd_max, prev_rcv_nxt, prev_rcv_adv;
	enum tcp_state prev_state;
};

#define N_STATES (TCP_TIME_WAIT + 1)

/* The states checked in (after the set-up and after every step), over all inputs run. */
static uint64_t state_visits[N_STATES];

static struct tcp_slice slices[70000];

/* FUZZ_TCP_CONN_VERBOSE=1: print each operation's outcome (to replay an input). */
static bool verbose(void)
{
	static int v = -1;

	if (v < 0)
		v = getenv("FUZZ_TCP_CONN_VERBOSE") != NULL;
	return v;
}

static void trace(const struct fz *f, const char *what)
{
	const struct tcp_conn *c = &f->c;

	if (!verbose())
		return;
	fprintf(stderr,
		"t=%llu.%06llums %-8s %-11s una=%u nxt=%u max=%u sndbytes=%u wnd=%u cwnd=%u "
		"rcv_nxt=%u adv=%u rcvq=%u ooo=%u/%u rto=%llu persist=%llu\n",
		(unsigned long long)(f->now / MS), (unsigned long long)(f->now % MS), what,
		tcp_state_name(c->state), c->snd_una - f->iss, c->snd_nxt - f->iss,
		c->snd_max - f->iss, c->snd.bytes, c->snd_wnd, c->cc.cwnd, c->rcv_nxt - f->irs,
		c->rcv_adv - f->irs, c->rcvq_bytes, c->reass.n, c->reass.bytes,
		(unsigned long long)c->rto_at, (unsigned long long)c->persist_at);
	for (unsigned i = 0; i < f->out.n; i++) {
		const struct tcp_tx *t = &f->out.seg[i];

		fprintf(stderr, "    -> flags 0x%02x seq %u ack %u len %u wnd %u sack %u%s\n",
			t->flags, t->seq - f->iss, t->ack - f->irs, t->len, t->wnd,
			t->opts.sack_count, t->retransmit ? " rexmit" : "");
	}
}

/* ---- invariants ---- */

static bool synchronized_open(enum tcp_state s)
{
	return s == TCP_ESTABLISHED || s == TCP_FIN_WAIT_1 || s == TCP_FIN_WAIT_2 ||
	       s == TCP_CLOSE_WAIT || s == TCP_CLOSING || s == TCP_LAST_ACK || s == TCP_TIME_WAIT;
}

/* Our SYN (SYN-SENT) or SYN-ACK (SYN-RECEIVED) is still unacknowledged. */
static bool syn_outstanding(enum tcp_state s)
{
	return s == TCP_SYN_SENT || s == TCP_SYN_RECEIVED;
}

#define B(s) (1u << (s))

/*
 * RFC 9293 3.3.2 figure 5 as this code follows it, CLOSED aside (every
 * state may reach it: RST, ABORT, a timeout; a reset passive open is
 * closed, not put back in LISTEN). One step may take several edges, e.g.
 * an ACK and a FIN in SYN-RECEIVED after a CLOSE: ESTABLISHED, FIN-WAIT-1,
 * CLOSING.
 */
static const uint16_t state_edges[N_STATES] = {
    [TCP_LISTEN] = B(TCP_SYN_RECEIVED),
    [TCP_SYN_SENT] = B(TCP_SYN_RECEIVED) | B(TCP_ESTABLISHED),
    [TCP_SYN_RECEIVED] = B(TCP_ESTABLISHED),
    [TCP_ESTABLISHED] = B(TCP_FIN_WAIT_1) | B(TCP_CLOSE_WAIT),
    [TCP_FIN_WAIT_1] = B(TCP_FIN_WAIT_2) | B(TCP_CLOSING) | B(TCP_TIME_WAIT),
    [TCP_FIN_WAIT_2] = B(TCP_TIME_WAIT),
    [TCP_CLOSE_WAIT] = B(TCP_LAST_ACK),
    [TCP_CLOSING] = B(TCP_TIME_WAIT),
};

NO_COVERAGE static bool reachable(enum tcp_state from, enum tcp_state to)
{
	uint32_t seen = B(from), before;

	do {
		before = seen;
		for (unsigned s = 0; s < N_STATES; s++)
			if (seen & B(s))
				seen |= state_edges[s];
	} while (seen != before);
	return to == TCP_CLOSED || (seen & B(to));
}

static uint32_t data_end(const struct tcp_conn *c)
{
	return c->snd_una + c->snd.bytes;
}

/* Our FIN has a sequence number that the peer has not acknowledged yet. */
static bool fin_outstanding(const struct tcp_conn *c)
{
	return c->fin_sent && seq_leq(c->snd_una, c->fin_seq);
}

static void check_sndbuf(const struct fz *f)
{
	const struct tcp_conn *c = &f->c;
	const struct tcp_sndbuf *b = &c->snd;
	uint64_t sum = 0;

	FUZZ_CHECK(b->count <= b->cap);
	FUZZ_CHECK(b->cap == 0 || (b->cap & (b->cap - 1)) == 0);
	for (uint32_t i = 0; i < b->count; i++) {
		const struct tcp_chunk *ch = &b->ring[(b->head + i) & (b->cap - 1)];

		FUZZ_CHECK(ch->len > 0);
		sum += ch->len;
	}
	FUZZ_CHECK(b->count == 0 ? b->head_off == 0 && b->bytes == 0
				 : b->head_off < b->ring[b->head].len);
	FUZZ_CHECK(sum - b->head_off == b->bytes);
	/* The application wrote stream offsets [0, app_off); the buffer holds the tail. */
	if (c->state != TCP_CLOSED || b->bytes) {
		/* Offset 0 is ISS + 1: before our SYN is acknowledged SND.UNA is ISS. */
		uint32_t una_off = c->snd_una - (f->iss + seq_gt(c->snd_una, f->iss));

		/* snd_una - ISS - 1 counts the FIN once it is acknowledged. */
		if (c->fin_sent && seq_gt(c->snd_una, c->fin_seq))
			una_off--;
		FUZZ_CHECK(una_off + b->bytes == f->app_off);
	}
}

/* [left, right) was received: below RCV.NXT or held in the out-of-order queue. */
static bool received(const struct tcp_conn *c, uint32_t left, uint32_t right)
{
	const struct tcp_reass *r = &c->reass;
	uint32_t cur = seq_max(left, c->rcv_nxt);

	if (seq_leq(right, c->rcv_nxt))
		return true;
	for (unsigned i = 0; i < r->n && seq_lt(cur, right); i++) {
		const struct tcp_slice *s = &r->segs[i];

		if (seq_leq(s->seq + s->len, cur))
			continue;
		if (seq_gt(s->seq, cur))
			break; /* a gap */
		cur = s->seq + s->len;
	}
	if (c->fin_ooo && cur == c->fin_ooo_seq)
		cur++; /* the peer's FIN, kept beyond a gap, is received sequence space too */
	return seq_geq(cur, right);
}

static void check_reass(const struct fz *f)
{
	const struct tcp_conn *c = &f->c;
	const struct tcp_reass *r = &c->reass;
	uint64_t sum = 0;
	uint32_t edge = seq_max(c->rcv_adv, c->rcv_nxt);

	FUZZ_CHECK(r->n <= r->max_segs);
	FUZZ_CHECK(r->bytes <= r->max_bytes);
	FUZZ_CHECK(r->n_recent <= r->n);
	for (unsigned i = 0; i < r->n; i++) {
		const struct tcp_slice *s = &r->segs[i];

		FUZZ_CHECK(s->len > 0);
		if (i)
			FUZZ_CHECK(seq_geq(s->seq, r->segs[i - 1].seq + r->segs[i - 1].len));
		/*
		 * Strictly above RCV.NXT (data at RCV.NXT is delivered at once);
		 * after the peer's FIN, RCV.NXT counts the FIN too. Never beyond
		 * the right edge we advertised.
		 */
		FUZZ_CHECK(seq_gt(s->seq, c->rcv_nxt - c->fin_rcvd));
		FUZZ_CHECK(seq_leq(s->seq + s->len, edge));
		FUZZ_CHECK(is_rx(s->data, s->seq, s->len));
		sum += s->len;
	}
	FUZZ_CHECK(sum == r->bytes);
	/* RFC 2018 recency list: each entry is one maximal run actually held. */
	for (unsigned i = 0; i < r->n_recent; i++) {
		struct tcp_sack_block b = r->recent[i];
		unsigned j;

		FUZZ_CHECK(seq_lt(b.left, b.right));
		for (j = 0; j < r->n && r->segs[j].seq != b.left; j++)
			;
		FUZZ_CHECK(j < r->n);
		FUZZ_CHECK(j == 0 || r->segs[j - 1].seq + r->segs[j - 1].len != b.left);
		while (j + 1 < r->n && r->segs[j].seq + r->segs[j].len == r->segs[j + 1].seq)
			j++;
		FUZZ_CHECK(r->segs[j].seq + r->segs[j].len == b.right);
		for (unsigned k = 0; k < i; k++)
			FUZZ_CHECK(r->recent[k].left != b.left);
	}
}

static void check_rcvq(const struct fz *f)
{
	const struct tcp_conn *c = &f->c;
	uint32_t seq = f->app_rcv;
	uint64_t sum = 0;

	FUZZ_CHECK(c->rcvq_count <= c->rcvq_cap);
	for (uint32_t i = 0; i < c->rcvq_count; i++) {
		const struct tcp_slice *s = &c->rcvq[(c->rcvq_head + i) & (c->rcvq_cap - 1)];

		FUZZ_CHECK(s->len > 0);
		FUZZ_CHECK(s->seq == seq);
		FUZZ_CHECK(is_rx(s->data, seq, s->len));
		seq += s->len;
		sum += s->len;
	}
	FUZZ_CHECK(sum == c->rcvq_bytes);
	/* Everything below RCV.NXT (but the FIN) was queued or taken by the application. */
	FUZZ_CHECK(seq == c->rcv_nxt - c->fin_rcvd);
}

static void check_tx_payload(struct fz *f, const struct tcp_tx *t)
{
	struct tcp_conn *c = &f->c;
	unsigned n = tcp_tx_slices(c, t->seq, t->len, slices, sizeof(slices) / sizeof(slices[0]));
	uint32_t seq = t->seq, total = 0;

	for (unsigned i = 0; i < n; i++) {
		FUZZ_CHECK(slices[i].seq == seq);
		FUZZ_CHECK(slices[i].len > 0);
		FUZZ_CHECK(is_tx(slices[i].data, seq - (f->iss + 1), slices[i].len));
		seq += slices[i].len;
		total += slices[i].len;
	}
	/* tcp_tx_slices() must cover the segment exactly. */
	FUZZ_CHECK(total == t->len);
}

/*
 * Our SYN (SYN-SENT: connect or its retransmission) or SYN-ACK
 * (SYN-RECEIVED: the answer to the peer's SYN, or its retransmission); no
 * step sends one and leaves the state. ISS, no data, our MSS; the SYN
 * offers what we are configured for, the SYN-ACK only what the peer's SYN
 * offered too (RFC 7323 2.2 and 3.2, RFC 2018 2); a SYN's window is never
 * scaled (RFC 7323 2.2).
 */
/* Our SYN asks for ECN: configured to, or the algorithm needs it (DCTCP). */
static bool ecn_wanted(const struct tcp_conn *c)
{
	return c->cfg.ecn == TCP_ECN_ON || c->cc.ops->needs_ecn;
}

static void check_syn(const struct fz *f, const struct tcp_tx *t)
{
	const struct tcp_conn *c = &f->c;
	bool ack = t->flags & ACK;

	/*
	 * RFC 3168 6.1.1: ECE and CWR on a SYN that asks for ECN, ECE alone on
	 * a SYN-ACK agreeing; 6.1.1.1: a SYN resent after a timeout asks for
	 * nothing (cfg.ecn_fallback), and then our data goes without ECT.
	 */
	bool ask = ecn_wanted(c) && !(c->cfg.ecn_fallback && c->retries);

	FUZZ_CHECK(ack || !ask || !c->ecn_no_ect);
	FUZZ_CHECK(t->flags ==
		   (ack ? SYN | ACK | (c->ecn_ok ? ECE : 0) : SYN | (ask ? ECE | CWR : 0)));
	FUZZ_CHECK(t->ecn == TCP_ECN_NOT_ECT);
	FUZZ_CHECK(c->state == (ack ? TCP_SYN_RECEIVED : TCP_SYN_SENT));
	FUZZ_CHECK(t->seq == c->iss && t->len == 0 && !t->tso_mss && c->snd_max == c->iss + 1);
	FUZZ_CHECK(t->opts.has_mss && t->opts.mss == c->cfg.mss && t->opts.sack_count == 0);
	FUZZ_CHECK(t->wnd <= c->cfg.rcv_buf);
	if (ack) {
		FUZZ_CHECK(t->ack == c->irs + 1 && t->ack == c->rcv_nxt);
		FUZZ_CHECK(seq_leq(t->ack + t->wnd, c->rcv_adv));
		FUZZ_CHECK(t->opts.has_wscale == c->ws_ok && t->opts.sack_permitted == c->sack_ok &&
			   t->opts.has_ts == c->ts_ok);
		if (t->opts.has_ts)
			FUZZ_CHECK(t->opts.ts_ecr == c->ts_recent);
	} else {
		FUZZ_CHECK(t->opts.has_wscale == c->cfg.window_scaling &&
			   t->opts.sack_permitted == c->cfg.sack &&
			   t->opts.has_ts == c->cfg.timestamps);
		if (t->opts.has_ts)
			FUZZ_CHECK(t->opts.ts_ecr == 0);
	}
	if (t->opts.has_wscale)
		FUZZ_CHECK(t->opts.wscale == c->rcv_wscale && c->rcv_wscale <= TCP_MAX_WSCALE);
	if (t->opts.has_ts)
		FUZZ_CHECK(t->opts.ts_val == (uint32_t)(f->now / MS) + c->iss);
	FUZZ_CHECK(tcp_hdr_len(&t->opts) - TCP_HDR_LEN <= TCP_OPT_MAX_LEN);
}

static void check_out(struct fz *f)
{
	const struct tcp_conn *c = &f->c;
	const struct tcp_out *o = &f->out;

	FUZZ_CHECK(o->n <= TCP_OUT_MAX);
	for (unsigned i = 0; i < o->n; i++) {
		const struct tcp_tx *t = &o->seg[i];
		size_t optlen = tcp_hdr_len(&t->opts) - TCP_HDR_LEN;

		if (t->flags & SYN) {
			check_syn(f, t);
			continue;
		}
		if (t->flags & RST) {
			FUZZ_CHECK(t->len == 0);
			continue;
		}
		FUZZ_CHECK(t->flags & ACK);
		/*
		 * RFC 3168: ECN marks only on an ECN connection; ECT on new data
		 * alone (6.1.5: not retransmissions, 6.1.4: not pure ACKs).
		 */
		FUZZ_CHECK(c->ecn_ok || !(t->flags & (ECE | CWR)));
		FUZZ_CHECK(t->ecn == TCP_ECN_NOT_ECT ||
			   (t->ecn == TCP_ECN_ECT0 && c->ecn_ok && !c->ecn_no_ect && t->len &&
			    !t->retransmit));
		FUZZ_CHECK(!(t->flags & CWR) || t->ecn == TCP_ECN_ECT0);
		if (t->len) {
			/*
			 * Data: only what the send buffer holds, within what may be in
			 * flight; at most one MSS, but for a path MTU probe (tcp_icmp.h):
			 * exactly its range, within what the handshake allows, uncut.
			 */
			FUZZ_CHECK(t->len <= c->snd_mss ||
				   (t->seq == c->probe_seq && t->seq + t->len == c->probe_end &&
				    t->len <= c->mss_clamp && !t->tso_mss && !t->retransmit));
			FUZZ_CHECK(seq_geq(t->seq, c->snd_una));
			FUZZ_CHECK(seq_leq(t->seq + t->len, c->snd_max));
			FUZZ_CHECK(seq_leq(t->seq + t->len, data_end(c)));
			check_tx_payload(f, t);
			/* Data and options fit the MSS (RFC 9293 3.7.1: options count); a probe,
			 * the peer's. */
			FUZZ_CHECK(t->len + optlen <=
				   (size_t)(t->len > c->snd_mss ? c->mss_clamp : c->snd_mss) +
				       (c->ts_ok ? 12 : 0));
		} else {
			/* A keep-alive is numbered SND.NXT - 1; nothing else below SND.UNA. */
			FUZZ_CHECK(seq_geq(t->seq, c->snd_una - 1));
		}
		if (t->flags & FIN) {
			FUZZ_CHECK(c->fin_sent);
			FUZZ_CHECK(t->seq + t->len == c->fin_seq);
		}
		FUZZ_CHECK(seq_leq(t->seq + t->len + !!(t->flags & FIN), c->snd_max));
		/* ACK and window: never beyond what we have and advertised. */
		FUZZ_CHECK(seq_gt(t->ack, f->irs) && seq_leq(t->ack, c->rcv_nxt));
		FUZZ_CHECK(seq_leq(t->ack + ((uint32_t)t->wnd << c->rcv_wscale), c->rcv_adv));
		/* Options: no SYN-only options; timestamps iff negotiated; SACK iff negotiated. */
		FUZZ_CHECK(!t->opts.has_mss && !t->opts.has_wscale && !t->opts.sack_permitted);
		FUZZ_CHECK(t->opts.has_ts == c->ts_ok);
		if (t->opts.has_ts)
			FUZZ_CHECK(t->opts.ts_val == (uint32_t)(f->now / MS) + c->iss);
		FUZZ_CHECK(t->opts.sack_count == 0 || c->sack_ok);
		FUZZ_CHECK(t->opts.sack_count <= (c->ts_ok ? 3 : 4));
		FUZZ_CHECK(optlen <= TCP_OPT_MAX_LEN);
		for (unsigned k = 0; k < t->opts.sack_count; k++) {
			uint32_t l = t->opts.sack[k].left, r = t->opts.sack[k].right;

			FUZZ_CHECK(seq_lt(l, r));
			if (k == 0 && tcp_sb_is_dsack(&t->opts, t->ack)) {
				/*
				 * RFC 2883: a D-SACK, only if asked for, of data of this
				 * stream received: below the ACK, or held (in the next block).
				 */
				FUZZ_CHECK(c->cfg.dsack);
				FUZZ_CHECK(seq_gt(l, f->irs));
				if (c->state != TCP_CLOSED && seq_gt(r, t->ack))
					FUZZ_CHECK(received(c, l, r));
				continue;
			}
			/* RFC 2018: blocks above the cumulative ACK, of data actually received. */
			FUZZ_CHECK(seq_gt(l, t->ack));
			if (c->state != TCP_CLOSED)
				FUZZ_CHECK(received(c, l, r));
		}
	}
}

static void check_conn(struct fz *f, bool after_timer, const char *what)
{
	struct tcp_conn *c = &f->c;
	uint64_t d = tcp_next_deadline(c);

	if (!f->in_setup)
		state_visits[c->state]++;
	/*
	 * The peer's SYN sets IRS and RCV.NXT (from LISTEN or SYN-SENT); before
	 * it nothing of the receive side is set. From then on RCV.NXT and
	 * RCV.ADV only move forward.
	 */
	if (!f->peer_syn && c->state != TCP_LISTEN && c->state != TCP_SYN_SENT &&
	    c->state != TCP_CLOSED) {
		f->peer_syn = true;
		f->irs = c->irs;
		f->app_rcv = c->irs + 1;
		f->prev_rcv_nxt = c->rcv_nxt;
		f->prev_rcv_adv = c->rcv_adv;
	}
	if (!f->peer_syn)
		FUZZ_CHECK(c->irs == 0 && c->rcv_nxt == 0 && c->rcv_adv == 0 && !c->ws_ok &&
			   !c->ts_ok && !c->sack_ok);
	if (synchronized_open(c->state))
		f->synced = true;
	trace(f, what);
	check_out(f);

	/* Send sequence space (RFC 9293 3.3.1), all monotonic. */
	FUZZ_CHECK(seq_leq(c->snd_una, c->snd_nxt));
	FUZZ_CHECK(seq_leq(c->snd_nxt, c->snd_max));
	FUZZ_CHECK(seq_geq(c->snd_una, f->prev_snd_una));
	FUZZ_CHECK(seq_geq(c->snd_max, f->prev_snd_max));
	FUZZ_CHECK(seq_geq(c->rcv_nxt, f->prev_rcv_nxt));
	FUZZ_CHECK(seq_geq(c->rcv_adv, f->prev_rcv_adv));
	/* Only our SYN is numbered ISS; the handshake ends when it is acknowledged. */
	if (c->state == TCP_LISTEN)
		FUZZ_CHECK(c->snd_una == c->iss && c->snd_nxt == c->iss && c->snd_max == c->iss);
	else if (syn_outstanding(c->state))
		FUZZ_CHECK(c->snd_una == c->iss && c->snd_nxt == c->iss + 1 &&
			   c->snd_max == c->iss + 1);
	else if (f->synced)
		FUZZ_CHECK(seq_gt(c->snd_una, c->iss));
	f->prev_snd_una = c->snd_una;
	f->prev_snd_max = c->snd_max;
	f->prev_rcv_nxt = c->rcv_nxt;
	f->prev_rcv_adv = c->rcv_adv;

	/* Send buffer. */
	FUZZ_CHECK(c->snd.bytes <= c->cfg.snd_buf);
	check_sndbuf(f);
	if (c->state == TCP_LISTEN || syn_outstanding(c->state)) {
		/* No FIN before ESTABLISHED; a CLOSE in SYN-RECEIVED only queues it. */
		FUZZ_CHECK(!c->fin_sent && (c->state == TCP_SYN_RECEIVED || !c->fin_queued));
	} else if (c->state != TCP_CLOSED) {
		/* What is in flight is data of the buffer, plus our FIN. */
		FUZZ_CHECK(c->snd_max - c->snd_una <= c->snd.bytes + fin_outstanding(c));
		if (fin_outstanding(c))
			FUZZ_CHECK(c->fin_seq == data_end(c));
		if (c->fin_sent && !fin_outstanding(c))
			FUZZ_CHECK(c->snd.bytes == 0);
	}

	/*
	 * Receive side. Data is only accepted up to the right edge we
	 * advertised, and that edge is only moved to RCV.NXT + free space, so
	 * queued + out-of-order bytes never exceed the receive buffer (no slack).
	 */
	FUZZ_CHECK((uint64_t)c->rcvq_bytes + c->reass.bytes <= c->cfg.rcv_buf);
	if (seq_gt(c->rcv_adv, c->rcv_nxt))
		FUZZ_CHECK((uint64_t)c->rcvq_bytes + (c->rcv_adv - c->rcv_nxt) <= c->cfg.rcv_buf);
	check_rcvq(f);
	check_reass(f);
	/* Data is taken from ESTABLISHED on only (the ACK that ends SYN-RECEIVED comes first). */
	if (c->state == TCP_SYN_RECEIVED)
		FUZZ_CHECK(c->rcv_nxt == c->irs + 1 && c->rcvq_count == 0 && c->reass.n == 0);

	/* States (RFC 9293 3.3.2): only along the diagram; against the FIN bookkeeping. */
	if (!reachable(f->prev_state, c->state)) {
		fprintf(stderr, "state %s -> %s\n", tcp_state_name(f->prev_state),
			tcp_state_name(c->state));
		FUZZ_CHECK(!"state change not in RFC 9293's diagram");
	}
	f->prev_state = c->state;
	FUZZ_CHECK(!c->fin_sent || c->fin_queued);
	if (c->state != TCP_CLOSED)
		FUZZ_CHECK(c->fin_rcvd == (c->state == TCP_CLOSE_WAIT || c->state == TCP_CLOSING ||
					   c->state == TCP_LAST_ACK || c->state == TCP_TIME_WAIT));
	if (c->state == TCP_ESTABLISHED || c->state == TCP_CLOSE_WAIT)
		FUZZ_CHECK(!c->fin_queued);
	if (c->state == TCP_FIN_WAIT_1 || c->state == TCP_CLOSING || c->state == TCP_LAST_ACK)
		FUZZ_CHECK(c->fin_queued);
	if (c->state == TCP_FIN_WAIT_2 || c->state == TCP_TIME_WAIT)
		FUZZ_CHECK(c->fin_sent && !fin_outstanding(c));
	FUZZ_CHECK((c->state == TCP_CLOSED) == !!(c->events & TCP_EV_CLOSED));
	/* Connected iff the handshake completed; refused only before, reset only after. */
	FUZZ_CHECK(!!(c->events & TCP_EV_CONNECTED) == f->synced);
	FUZZ_CHECK(c->error == 0 || c->error == -ETIMEDOUT || c->error == -ECONNABORTED ||
		   c->error == (f->synced ? -ECONNRESET : -ECONNREFUSED));

	/* What the SYNs negotiated: only what we are configured for (RFC 7323 2.2). */
	FUZZ_CHECK(!c->ws_ok || c->cfg.window_scaling);
	FUZZ_CHECK(!c->ts_ok || c->cfg.timestamps);
	FUZZ_CHECK(!c->sack_ok || c->cfg.sack);
	FUZZ_CHECK(c->snd_wscale <= TCP_MAX_WSCALE);
	if (f->peer_syn)
		FUZZ_CHECK(c->ws_ok || (c->snd_wscale == 0 && c->rcv_wscale == 0));

	/* Congestion control: never below the loss window (RFC 5681 3.1). */
	FUZZ_CHECK(c->cc.smss == c->snd_mss);
	FUZZ_CHECK(c->cc.cwnd >= c->cc.smss);
	/* Until the peer's SYN says more, the send MSS is RFC 9293's default 536, whatever ours. */
	FUZZ_CHECK(c->snd_mss >= 64 && (!f->peer_syn || c->snd_mss <= c->cfg.mss));
	/*
	 * No ICMP here: a path MTU only from black-hole detection, a plateau,
	 * or a probe that got through (tcp_icmp.h), above the MSS it replaced.
	 */
	FUZZ_CHECK(c->path_mtu == 0 || c->path_mtu == 1500 || c->path_mtu == 1400 ||
		   c->path_mtu == 1280 || c->path_mtu == 1024 || c->path_mtu == 576 ||
		   c->stats.pmtu_probes_ok > 0);
	FUZZ_CHECK(c->stats.pmtu_probes_ok + c->stats.pmtu_probes_lost <= c->stats.pmtu_probes);
	FUZZ_CHECK(!c->probe_mtu || (c->probe_mtu > c->snd_mss + 40u &&
				     c->probe_mtu <= c->cfg.mss + 40u + (c->ts_ok ? 12u : 0u)));
	FUZZ_CHECK(!c->probe_mtu || c->sb_on);
	FUZZ_CHECK(c->pmtu_guessed == (c->stats.pmtu_blackholes > 0));
	FUZZ_CHECK(c->snd_mss <= c->mss_clamp);

	/* Timers: none in the past; after tcp_timer(now), none due any more. */
	FUZZ_CHECK(d == UINT64_MAX || d >= f->now);
	if (after_timer)
		FUZZ_CHECK(d > f->now);
	if (c->rto_at)
		FUZZ_CHECK(c->rto_at <= f->now + c->cfg.rto_max_ns);
	if (c->persist_at)
		FUZZ_CHECK(c->persist_at <= f->now + c->cfg.rto_max_ns + SWS_OVERRIDE_MAX);
	if (c->delack_at)
		FUZZ_CHECK(c->delack_at <= f->now + c->cfg.delack_ns);
	if (c->state == TCP_CLOSED || c->state == TCP_LISTEN)
		FUZZ_CHECK(d == UINT64_MAX);
	/* Our SYN or SYN-ACK is owed until acknowledged: its timer, and nothing else, runs. */
	if (syn_outstanding(c->state))
		FUZZ_CHECK(c->rto_at && !c->delack_at && !c->persist_at && !c->keepalive_at &&
			   !c->timewait_at);
	/*
	 * Liveness: while we owe the peer data or a FIN (sent and unacknowledged,
	 * or waiting to be sent), the retransmission or the persist timer runs;
	 * else nothing would ever send it (RFC 6298 5.1, RFC 9293 3.8.6.1).
	 */
	if (c->state == TCP_ESTABLISHED || c->state == TCP_FIN_WAIT_1 ||
	    c->state == TCP_CLOSE_WAIT || c->state == TCP_CLOSING || c->state == TCP_LAST_ACK) {
		bool owed = c->snd_una != c->snd_max || seq_gt(data_end(c), c->snd_nxt) ||
			    (c->fin_queued && !c->fin_sent);

		if (owed && !(c->rto_at || c->persist_at)) {
			fprintf(
			    stderr,
			    "state %s una %u nxt %u max %u end %u fin q%d s%d wnd %u: no timer\n",
			    tcp_state_name(c->state), c->snd_una, c->snd_nxt, c->snd_max,
			    data_end(c), c->fin_queued, c->fin_sent, c->snd_wnd);
			FUZZ_CHECK(!"data or FIN owed to the peer but no timer armed");
		}
	}
	for (unsigned i = 0; i < f->out.n; i++)
		if (f->out.seg[i].opts.has_ts)
			f->last_ts_val = f->out.seg[i].opts.ts_val;
}

/* ---- operations ---- */

static void begin(struct fz *f)
{
	f->out.n = 0;
}

/* Feed @r; its payload (if any) is copied into a fresh Zbuf object, content pat_rx. */
static void feed(struct fz *f, struct tcp_repr *r, uint32_t off)
{
	uint8_t *obj = NULL;

	if (r->payload_len) {
		uint32_t dseq = r->seq + !!(r->flags & SYN);

		obj = zbuf_alloc(r->payload_len + off);
		if (!obj)
			return;
		zbuf_take(obj); /* a received frame is lunar's, not the application's */
		fill_rx(obj + off, dseq, r->payload_len);
		r->payload = obj + off;
	} else {
		r->payload = NULL;
	}
	begin(f);
	tcp_input(&f->c, r, f->now, &f->out);
	if (obj)
		zbuf_drop(obj); /* the connection took its own references */
	check_conn(f, false, r->flags & RST ? "seg RST" : r->payload_len ? "seg data" : "seg");
}

static uint32_t seq_base(const struct tcp_conn *c, unsigned sel)
{
	switch (sel & 3) {
	case 0:
		return c->rcv_nxt;
	case 1:
		return c->rcv_adv;
	case 2:
		return c->irs;
	default:
		return c->rcv_nxt + 0x80000000u;
	}
}

static uint32_t ack_base(const struct tcp_conn *c, unsigned sel)
{
	switch (sel & 3) {
	case 0:
		return c->snd_una;
	case 1:
		return c->snd_max;
	case 2:
		return c->snd_nxt;
	default:
		return c->snd_una - c->max_snd_wnd;
	}
}

static void op_segment(struct fz *f, struct reader *in)
{
	const struct tcp_conn *c = &f->c;
	uint8_t flags = rd8(in), bases = rd8(in);
	int16_t dseq = (int16_t)rd16(in), dack = (int16_t)rd16(in);
	struct tcp_repr r = {.sport = RPORT, .dport = LPORT, .flags = flags, .hdr_len = 20};
	uint16_t pl;
	bool ts;

	r.seq = seq_base(c, bases) + (uint32_t)(int32_t)dseq;
	r.ack = ack_base(c, bases >> 2) + (uint32_t)(int32_t)dack;
	if (bases & 0x80)
		f->peer_wnd = rd16(in);
	r.window = f->peer_wnd;
	pl = rd16(in);
	r.payload_len = pl & MAX_PAYLOAD;
	r.ecn = (uint8_t)(pl >> 14); /* the IP header's ECN field: CE marks among them */
	/* A SYN carries the set-up's SYN options; timestamps as negotiated, or as offered. */
	if (flags & SYN) {
		r.opts = f->syn_opts;
		r.opts.has_ts = false;
	}
	ts = (f->peer_syn ? c->ts_ok : f->syn_opts.has_ts) != !!(bases & 0x10);
	if (ts) {
		r.opts.has_ts = true;
		r.opts.ts_val = f->peer_ts;
		r.opts.ts_ecr = f->last_ts_val;
	}
	if (bases & 0x20)
		r.opts.ts_val += (uint32_t)(int32_t)(int8_t)rd8(in);
	if (bases & 0x40) {
		unsigned n = rd8(in) % TCP_MAX_SACK_BLOCKS + 1;

		for (unsigned k = 0; k < n; k++) {
			uint32_t left = c->snd_una + (uint32_t)(int32_t)(int16_t)rd16(in);

			r.opts.sack[k].left = left;
			r.opts.sack[k].right = left + rd16(in);
		}
		r.opts.sack_count = (uint8_t)n;
	}
	feed(f, &r, r.seq & 3);
}

static void op_raw(struct fz *f, struct reader *in, bool relative)
{
	size_t len = rd16(in), avail = in->n - in->i;
	uint8_t *buf;
	struct tcp_repr r;

	if (len > avail)
		len = avail;
	buf = zbuf_alloc(len ? len : 1);
	if (!buf)
		return;
	zbuf_take(buf); /* a received frame is lunar's, not the application's */
	memcpy(buf, in->p + in->i, len);
	in->i += len;
	if (tcp_parse(buf, len, RADDR, LADDR, false, &r) == LUNAR_DROP_NONE) {
		FUZZ_CHECK(r.payload == buf + r.hdr_len && r.payload_len == len - r.hdr_len);
		if (relative) {
			r.seq += f->c.rcv_nxt;
			r.ack += f->c.snd_una;
		}
		/* The payload gets the content model's bytes, in place. */
		fill_rx(buf + r.hdr_len, r.seq + !!(r.flags & SYN), r.payload_len);
		begin(f);
		tcp_input(&f->c, &r, f->now, &f->out);
		check_conn(f, false, "raw");
	}
	zbuf_drop(buf);
}

static void advance_to(struct fz *f, uint64_t t)
{
	if (t > f->now) {
		f->peer_ts += (uint32_t)(t / MS - f->now / MS);
		f->now = t;
	}
}

static void op_time(struct fz *f, struct reader *in)
{
	uint8_t u = rd8(in), mult = rd8(in);
	uint64_t amount = units[u & 7] * mult, target = f->now + amount;

	switch ((u >> 3) & 3) {
	case 1: {
		uint64_t d = tcp_next_deadline(&f->c);

		if (d == UINT64_MAX)
			return;
		advance_to(f, d);
		break;
	}
	case 2:
		/* An event loop: run each deadline at its time, up to the target. */
		for (unsigned k = 0; k < 64; k++) {
			uint64_t d = tcp_next_deadline(&f->c);

			if (d > target)
				break;
			advance_to(f, d);
			begin(f);
			tcp_timer(&f->c, f->now, &f->out);
			check_conn(f, true, "loop");
		}
		advance_to(f, target);
		break;
	default:
		advance_to(f, target);
		break;
	}
	begin(f);
	tcp_timer(&f->c, f->now, &f->out);
	check_conn(f, true, "timer");
}

static void op_send(struct fz *f, struct reader *in)
{
	uint32_t len = rd16(in), before = f->c.snd.bytes;
	uint8_t *buf = zbuf_alloc(len ? len : 1);
	int rc;

	if (!buf)
		return;
	fill_tx(buf, f->app_off, len);
	begin(f);
	rc = tcp_send(&f->c, buf, len);
	zbuf_unref(buf);
	FUZZ_CHECK(rc <= (int)len);
	if (rc > 0) {
		FUZZ_CHECK(f->c.snd.bytes == before + (uint32_t)rc);
		f->app_off += (uint32_t)rc;
		tcp_output(&f->c, f->now, &f->out); /* as tcp_sock_send() does */
	} else {
		FUZZ_CHECK(f->c.snd.bytes == before);
		FUZZ_CHECK(rc == 0 || rc == -ENOTCONN || rc == -EPIPE || rc == -ENOMEM ||
			   rc == f->c.error);
	}
	check_conn(f, false, "send");
}

static void op_recv(struct fz *f, struct reader *in)
{
	struct tcp_slice sl[16];
	unsigned max = rd8(in) % 16 + 1, n;
	uint32_t before = f->c.rcvq_bytes, got = 0;

	begin(f);
	n = tcp_recv(&f->c, sl, max, f->now, &f->out);
	FUZZ_CHECK(n <= max);
	for (unsigned i = 0; i < n; i++) {
		FUZZ_CHECK(sl[i].seq == f->app_rcv && sl[i].len > 0);
		FUZZ_CHECK(is_rx(sl[i].data, sl[i].seq, sl[i].len));
		f->app_rcv += sl[i].len;
		got += sl[i].len;
		zbuf_unref(sl[i].data);
	}
	FUZZ_CHECK(f->c.rcvq_bytes == before - got);
	check_conn(f, false, "recv");
}

/* ---- set-up: the start modes ---- */

/* Set-up byte 14 bits 6-7, plus 4 with byte 1 bit 7: 0 in inputs older than the modes. */
enum start_mode {
	START_ACTIVE,	     /* connect, the peer's SYN-ACK: ESTABLISHED */
	START_SYN_SENT,	     /* connect: the operations' segments arrive in SYN-SENT */
	START_PASSIVE,	     /* listen, the peer's SYN: SYN-RECEIVED, our SYN-ACK sent */
	START_COOKIE,	     /* tcp_conn_from_cookie(): SYN-RECEIVED, nothing sent */
	START_SIMULTANEOUS,  /* connect, the peer's bare SYN: SYN-RECEIVED, our SYN-ACK sent */
	START_LISTEN,	     /* listen: the operations' segments arrive in LISTEN */
	START_PASSIVE_ACKED, /* START_PASSIVE, then the peer's ACK: ESTABLISHED */
	START_COOKIE_ACKED,  /* START_COOKIE, then the peer's ACK: ESTABLISHED */
};

/* The SYN cookies' secret (any fixed key: the target is deterministic). */
static const uint8_t cookie_key[TCP_SYNCOOKIE_KEY_BYTES] = "lunar fuzz key!";

/* A set-up segment from the peer: a SYN with the set-up's options, else timestamps if agreed. */
static void setup_input(struct fz *f, uint8_t flags, uint32_t seq, uint32_t ack, const char *what)
{
	struct tcp_repr r = {.sport = RPORT,
			     .dport = LPORT,
			     .seq = seq,
			     .ack = ack,
			     .flags = flags,
			     .window = f->peer_wnd,
			     .hdr_len = 20};

	if (flags & SYN)
		r.opts = f->syn_opts;
	else
		r.opts.has_ts = f->c.ts_ok;
	if (r.opts.has_ts) {
		r.opts.ts_val = f->peer_ts;
		r.opts.ts_ecr = f->last_ts_val;
	}
	begin(f);
	tcp_input(&f->c, &r, f->now, &f->out);
	check_conn(f, false, what);
}

/*
 * START_COOKIE: the listener answered the peer's SYN (ISN @irs) with a
 * cookie and kept nothing. The ACK that comes back (20 s later with @late:
 * in the cookie's next time slot, still valid) must check, and the SYN is
 * rebuilt from it into @syn as tcp_stack.c's cookie_conn() does. The
 * cookie is the connection's ISS; *@mss the MSS it recalls.
 */
static uint32_t cookie_open(struct fz *f, const struct tcp_4tuple *t, uint32_t irs, bool late,
			    uint8_t ecn_flags, struct tcp_repr *syn, uint16_t *mss)
{
	const struct tcp_options *so = &f->syn_opts;
	struct tcp_repr peer = {.sport = RPORT,
				.dport = LPORT,
				.seq = irs,
				.flags = SYN | ecn_flags,
				.window = f->peer_wnd,
				.hdr_len = 20,
				.opts = *so};
	struct tcp_repr ack = {.sport = RPORT,
			       .dport = LPORT,
			       .seq = irs + 1,
			       .flags = ACK,
			       .window = f->peer_wnd,
			       .hdr_len = 20};
	struct tcp_syncookie_opts co;
	uint32_t cookie = tcp_syncookie_make(cookie_key, t, &peer, f->now);
	uint16_t want = so->has_mss ? so->mss : 536;

	if (late)
		advance_to(f, f->now + 20000 * MS);
	ack.ack = cookie + 1;
	ack.opts.has_ts = so->has_ts;
	ack.opts.ts_val = f->peer_ts;
	FUZZ_CHECK(tcp_syncookie_check(cookie_key, t, &ack, f->now, &co));
	/* The options survive; the MSS is rounded down to the table, whose least is 536. */
	FUZZ_CHECK(co.has_wscale == so->has_wscale && co.sack_permitted == so->sack_permitted);
	if (co.has_wscale)
		FUZZ_CHECK(co.wscale == (so->wscale > 14 ? 14 : so->wscale));
	FUZZ_CHECK(co.mss >= 536 && (co.mss <= want || co.mss == 536));
	FUZZ_CHECK(co.ecn_setup == (ecn_flags == (ECE | CWR)));
	*syn = (struct tcp_repr){.sport = RPORT,
				 .dport = LPORT,
				 .seq = irs,
				 .flags = SYN | (co.ecn_setup ? ECE | CWR : 0),
				 .window = ack.window,
				 .hdr_len = 20};
	syn->opts.has_mss = true;
	syn->opts.mss = co.mss;
	syn->opts.has_wscale = co.has_wscale;
	syn->opts.wscale = co.wscale;
	syn->opts.sack_permitted = co.sack_permitted;
	syn->opts.has_ts = ack.opts.has_ts;
	syn->opts.ts_val = ack.opts.ts_val;
	*mss = co.mss;
	return cookie;
}

static void setup(struct fz *f, struct reader *in)
{
	struct tcp_config cfg;
	struct tcp_4tuple t = {.laddr = LADDR, .raddr = RADDR, .lport = LPORT, .rport = RPORT};
	uint8_t o = rd8(in), b1 = rd8(in), pws = b1 & 15;
	uint16_t pmss = rd16(in), peer_mss = pmss ? pmss : 536;
	uint32_t iss = rd32(in), irs = rd32(in), mss;
	uint16_t pwnd = rd16(in);
	uint8_t bufs = rd8(in), k = rd8(in);
	unsigned mode = (unsigned)(bufs >> 6) | (unsigned)(b1 >> 7) << 2;
	bool active = mode == START_ACTIVE || mode == START_SYN_SENT || mode == START_SIMULTANEOUS;
	struct tcp_conn *c = &f->c;
	struct tcp_repr syn;

	tcp_config_default(&cfg);
	cfg.timestamps = !(o & 0x08);
	cfg.sack = !(o & 0x10);
	/* the peer's MSS keeps its meaning; its low bit turns D-SACKs off */
	cfg.dsack = !(pmss & 1);
	cfg.window_scaling = !(o & 0x20);
	cfg.nodelay = o & 0x40;
	cfg.delayed_ack = !(o & 0x80);
	cfg.rcv_buf = rcv_bufs[bufs & 7];
	cfg.snd_buf = snd_bufs[(bufs >> 3) & 7];
	cfg.mss = our_mss[k & 3];
	if (k & 0x04) {
		cfg.keepalive = true;
		cfg.keepalive_idle_ns = 2000 * MS;
		cfg.keepalive_intvl_ns = 500 * MS;
		cfg.keepalive_probes = 3;
	}
	cfg.iw_segments = iw_table[(k >> 3) & 3];
	/* Byte 2 bits 4-6: the algorithm, and whether ECN is asked for (and the peer's SYN offers
	 * it). */
	cfg.cc = (enum tcp_cc_algo)(((b1 >> 4) & 3) % TCP_CC_ALGO_COUNT);
	cfg.ecn = (b1 & 0x40) ? TCP_ECN_ON : TCP_ECN_ACCEPT;
	/* the peer's window keeps its meaning; its low bit turns it off */
	cfg.ecn_fallback = !(pwnd & 1);
	if (k & 0x20)
		cfg.reass_max_segs = 4;
	if (k & 0x40)
		cfg.reass_max_bytes = 3000;

	memset(f, 0, sizeof(*f));
	f->in_setup = true;
	f->now = 1000 * MS;
	f->peer_ts = 777;
	f->peer_wnd = pwnd;
	f->syn_opts = (struct tcp_options){.has_mss = pmss != 0,
					   .mss = pmss,
					   .has_wscale = o & 0x04,
					   .wscale = pws,
					   .sack_permitted = o & 0x02,
					   .has_ts = o & 0x01};
	if (mode == START_COOKIE || mode == START_COOKIE_ACKED)
		iss =
		    cookie_open(f, &t, irs, k & 0x80, (b1 & 0x40) ? ECE | CWR : 0, &syn, &peer_mss);
	FUZZ_CHECK(tcp_conn_init(c, &cfg, &t, iss, f->now) == 0);
	/*
	 * Half the inputs (by the ISS's low bit) let an ACK of everything leave
	 * its bookkeeping for later, as tcp_stack's after-transmit mode does;
	 * the core then does it itself before a timer or the next segment.
	 */
	c->ack_defer = iss & 1;
	f->iss = iss;
	begin(f);
	if (active)
		FUZZ_CHECK(tcp_connect(c, f->now, &f->out) == 0 && f->out.n == 1);
	else
		tcp_listen(c);
	f->prev_snd_una = c->snd_una;
	f->prev_snd_max = c->snd_max;
	f->prev_state = c->state;
	check_conn(f, false, active ? "connect" : "listen");

	/* bit 7 of byte 15: the peer's answer to our SYN or SYN-ACK comes 3 ms later. */
	switch (mode) {
	case START_ACTIVE:
		if (k & 0x80)
			advance_to(f, f->now + 3 * MS);
		setup_input(f, SYN | ACK | ((b1 & 0x40) ? ECE : 0), irs, iss + 1, "synack");
		FUZZ_CHECK(c->state == TCP_ESTABLISHED);
		FUZZ_CHECK(f->out.n == 1 && f->out.seg[0].flags == ACK &&
			   f->out.seg[0].seq == iss + 1 && f->out.seg[0].ack == irs + 1);
		break;
	case START_SIMULTANEOUS:
		if (k & 0x80)
			advance_to(f, f->now + 3 * MS);
		/* fall through */
	case START_PASSIVE:
	case START_PASSIVE_ACKED:
		setup_input(f, SYN | ((b1 & 0x40) ? ECE | CWR : 0), irs, 0, "syn");
		FUZZ_CHECK(c->state == TCP_SYN_RECEIVED && f->out.n == 1); /* the SYN-ACK */
		break;
	case START_COOKIE:
	case START_COOKIE_ACKED:
		tcp_conn_from_cookie(c, &syn, f->now);
		check_conn(f, false, "cookie");
		/* Nothing sent, and no RTT sample: the SYN-ACK went at an unknown time. */
		FUZZ_CHECK(c->state == TCP_SYN_RECEIVED && !c->rtt_start);
		break;
	default:
		break;
	}
	if (mode == START_PASSIVE_ACKED || mode == START_COOKIE_ACKED) {
		if (k & 0x80)
			advance_to(f, f->now + 3 * MS);
		setup_input(f, ACK, irs + 1, iss + 1, "ack");
		FUZZ_CHECK(c->state == TCP_ESTABLISHED && f->out.n == 0);
	}
	if (f->peer_syn) {
		/* What the set-up's SYNs offered (a cookie keeps all of it but the exact MSS). */
		FUZZ_CHECK(c->ts_ok == (cfg.timestamps && (o & 0x01)));
		FUZZ_CHECK(c->sack_ok == (cfg.sack && (o & 0x02)));
		FUZZ_CHECK(c->ws_ok == (cfg.window_scaling && (o & 0x04)));
		/* The set-up's peer offers (or agrees to) ECN exactly when we ask for it (RFC
		 * 3168 6.1.1). */
		FUZZ_CHECK(c->ecn_ok == !!(b1 & 0x40));
		FUZZ_CHECK(c->snd_wscale == (c->ws_ok ? (pws > 14 ? 14 : pws) : 0));
		/* RFC 9293 3.7.1: at most ours, less the timestamp option; floor 64. */
		mss = peer_mss < cfg.mss ? peer_mss : cfg.mss;
		if (c->ts_ok)
			mss = mss > 12 ? mss - 12 : 0;
		FUZZ_CHECK(c->snd_mss == (mss < 64 ? 64 : mss));
	}
	f->in_setup = false;
	state_visits[c->state]++;
}

/*
 * FUZZ_TCP_CONN_STATES=1: at exit, print how often each state was checked
 * in (after the set-up and after every step) over all the inputs run, and
 * exit with 1 if one never was. The fuzz suite runs the committed seeds so,
 * so a corpus that stops reaching a state fails.
 */
static void report_states(void)
{
	unsigned missing = 0;

	fprintf(stderr, "fuzz_tcp_conn: states checked:");
	for (unsigned s = 0; s < N_STATES; s++) {
		fprintf(stderr, " %s=%llu", tcp_state_name((enum tcp_state)s),
			(unsigned long long)state_visits[s]);
		missing += !state_visits[s];
	}
	fprintf(stderr, "\n");
	if (missing) {
		fprintf(stderr, "fuzz_tcp_conn: %u of %d states never reached\n", missing,
			N_STATES);
		fflush(stderr);
		_exit(1);
	}
	fprintf(stderr, "fuzz_tcp_conn: all %d states reached\n", N_STATES);
}

static void init_once(void)
{
	static bool done;
	struct zbuf_config zc = {.backend = ZBUF_BACKEND_MMAP};

	if (done)
		return;
	if (getenv("FUZZ_TCP_CONN_STATES"))
		atexit(report_states);
	for (int i = 0; i < ZBUF_CLASS_COUNT; i++)
		zc.zones[i] = 8;
	if (zbuf_init(&zc) != 0) {
		fprintf(stderr, "zbuf_init failed\n");
		abort();
	}
	done = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	struct reader in = {.p = data, .n = size};

	init_once();
	FUZZ_CHECK(zbuf_in_use() == 0);
	if (size < SETUP_LEN)
		return 0;
	setup(&f, &in);
	while (in.i < in.n) {
		uint8_t op = rd8(&in);

		switch (op % 16) {
		case 0:
		case 1:
		case 2:
		case 3:
		case 14:
			op_segment(&f, &in);
			break;
		case 4:
		case 5:
			op_raw(&f, &in, op % 16 == 5);
			break;
		case 6:
		case 7:
			op_time(&f, &in);
			break;
		case 8:
		case 9:
			op_send(&f, &in);
			break;
		case 10:
		case 11:
			op_recv(&f, &in);
			break;
		case 12:
			begin(&f);
			tcp_close(&f.c, f.now, &f.out);
			check_conn(&f, false, "close");
			break;
		case 13:
			begin(&f);
			if (op < 64) {
				tcp_output(&f.c, f.now, &f.out);
				check_conn(&f, false, "output");
				break;
			}
			if (op < 128) {
				/* After the transmit, as tcp_stack_after_tx(): the ACK's work. */
				tcp_ack_work(&f.c);
				FUZZ_CHECK(!f.c.ack_work_due);
				check_conn(&f, false, "ack work");
				break;
			}
			/* Memory pressure as the stack applies it (tcp_stack.c). */
			f.c.mem_pressure = (enum tcp_mem_pressure)((op >> 4) % 3);
			if (f.c.mem_pressure == TCP_MEM_CRITICAL)
				tcp_prune_ooo(&f.c);
			else if (f.c.mem_pressure == TCP_MEM_NORMAL)
				tcp_window_update(&f.c, f.now, &f.out);
			check_conn(&f, false, "pressure");
			break;
		default:
			begin(&f);
			tcp_abort(&f.c, f.now, &f.out);
			FUZZ_CHECK(f.c.state == TCP_CLOSED);
			check_conn(&f, false, "abort");
			break;
		}
	}
	tcp_conn_fini(&f.c);
	if (zbuf_in_use() != 0) {
		fprintf(stderr, "zbuf: %llu objects still referenced after tcp_conn_fini\n",
			(unsigned long long)zbuf_in_use());
		abort();
	}
	return 0;
}
