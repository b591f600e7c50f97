/*
 * tcp_internal.h - what the TCP core's own files (tcp_conn.c, tcp_input.c,
 * tcp_recovery.c, tcp_icmp.c) share and nothing outside the core may call:
 * segment construction, state changes and buffer bookkeeping.
 */
#ifndef LUNAR_TCP_TCP_INTERNAL_H
#define LUNAR_TCP_TCP_INTERNAL_H

#include "tcp/tcp_conn.h"

/** Our timestamp clock (RFC 7323 5.4): 1 ms ticks plus a per-connection offset. */
uint32_t tcp_ts_now(const struct tcp_conn *c, uint64_t now);
/** Append a segment with ACK/window/options filled in; NULL if @out is full. */
struct tcp_tx *tcp_xmit(struct tcp_conn *c, struct tcp_out *out, uint8_t flags, uint32_t seq,
			uint32_t len, uint64_t now);
/** Our SYN asks for ECN (cfg.ecn on, or an algorithm that needs it). */
bool tcp_ecn_wanted(const struct tcp_conn *c);
/** <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK> */
void tcp_send_ack(struct tcp_conn *c, uint64_t now, struct tcp_out *out);
/** A bare RST with sequence number @seq. */
void tcp_send_rst(struct tcp_out *out, uint32_t seq);
void tcp_set_state(struct tcp_conn *c, enum tcp_state s, uint64_t now);
/** CLOSED with @error (negative errno or 0) and application events @ev; queues flushed. */
void tcp_drop(struct tcp_conn *c, int error, uint32_t ev, uint64_t now);
/** Queue in-order data for the application (taking a Zbuf reference if @take_ref). */
int tcp_deliver(struct tcp_conn *c, const uint8_t *data, uint32_t seq, uint32_t len, bool take_ref);
/** The peer was heard from: restart the keep-alive idle timer. */
void tcp_keepalive_touch(struct tcp_conn *c, uint64_t now);
/** RFC 3042: send at most one new segment beyond cwnd on each of the first two duplicate ACKs. */
void tcp_limited_transmit(struct tcp_conn *c, uint64_t now, struct tcp_out *out);
/** Send what the windows allow plus one segment beyond cwnd, Nagle aside (a tail loss probe). */
void tcp_output_probe(struct tcp_conn *c, uint64_t now, struct tcp_out *out);
/** Has the sender been using its window (cwnd may grow on the next ACK)? See tcp_conn.h. */
bool tcp_conn_cwnd_limited(const struct tcp_conn *c);
/** Congestion control from scratch at c->snd_mss, as c->cfg says (algorithm, IW, HyStart++). */
void tcp_conn_cc_init(struct tcp_conn *c);
/** What a segment's datagram carries besides payload: IPv4 and TCP headers, every segment's
 * options. */
static inline uint32_t tcp_hdr_bytes(const struct tcp_conn *c)
{
	return 40u + (c->ts_ok ? 12u : 0u);
}
/**
 * The send MSS for c->path_mtu: mss_clamp, or less if the path takes less
 * (tcp_hdr_bytes() deducted).
 */
static inline uint16_t tcp_path_mss(const struct tcp_conn *c)
{
	uint32_t overhead = tcp_hdr_bytes(c);

	if (c->path_mtu > overhead && c->path_mtu - overhead < c->mss_clamp)
		return (uint16_t)(c->path_mtu - overhead);
	return c->mss_clamp;
}
/** One past the last byte the application queued to send (a FIN not counted). */
static inline uint32_t tcp_data_end(const struct tcp_conn *c)
{
	return c->snd_una + c->snd.bytes;
}
/** The retransmission timer expired (RFC 6298 5.4-5.6), or RFC 6069 says it has (tcp_icmp.c). */
void tcp_rto_expired(struct tcp_conn *c, uint64_t now, struct tcp_out *out);

/* ---- SACK loss recovery, tcp_recovery.c (c->sb_on) ---- */

/** The handshake settled the options: track segments if SACK was agreed and cfg.rack is on. */
void tcp_rec_start(struct tcp_conn *c);
/** tcp_xmit() sent [seq, seq + len) (+ FIN) at @now: record it. */
void tcp_rec_sent(struct tcp_conn *c, uint8_t flags, uint32_t seq, uint32_t len, uint64_t now);
/**
 * The cumulative ACK moved to @ack (before SND.UNA is updated by the
 * caller's cc step). @return RACK's RTT sample of it (RFC 8985 6.2 step
 * 2): the most recently sent segment it delivered, a retransmission only
 * if its ACK cannot be the original's (sent at least min_RTT ago); 0: none.
 */
uint64_t tcp_rec_acked(struct tcp_conn *c, uint32_t ack, uint64_t now);
/** SND.UNA and the bytes SACKed before an ACK: with them after it, what it delivered. */
struct tcp_rec_mark {
	uint32_t snd_una, sacked;
};
/**
 * After an ACK's field was processed (@before: as it arrived): SACK
 * blocks, D-SACK, RACK, the recovery's sending rate (PRR), TLP episode,
 * timers.
 */
void tcp_rec_on_ack(struct tcp_conn *c, const struct tcp_repr *seg,
		    const struct tcp_rec_mark *before, uint64_t now);
/** Arm the probe timer if RFC 8985 7.2's conditions hold (else disarm it). */
void tcp_rec_arm_tlp(struct tcp_conn *c, uint64_t now);
/** Retransmit lost segments, oldest first, while the pipe is below @cwnd; true if any went. */
bool tcp_rec_send_lost(struct tcp_conn *c, uint32_t cwnd, uint64_t now, struct tcp_out *out);
/** The RTO fired (@repeat: again with no ACK of new data between): everything unSACKed is lost. */
void tcp_rec_timeout(struct tcp_conn *c, bool repeat);
/**
 * A fresh reduction (a recovery, a first RTO) at @now: begin its undo
 * episode (tcp_undo.h), with the retransmissions the scoreboard still
 * holds outstanding counted as its own.
 */
void tcp_rec_undo_begin(struct tcp_conn *c, uint64_t now);
/**
 * The last reduction was spurious (tcp_undo.h proved it): take it back
 * (tcp_cc_undo()), unmark what the scoreboard holds lost, and go on with
 * new data where a go-back-N rewound SND.NXT (RFC 4015 3 step 4).
 * Returns true when that ended a fast or an RTO recovery (and counted it
 * for RACK's reordering window, RFC 8985 6.2 step 4).
 */
bool tcp_rec_undo(struct tcp_conn *c);
/**
 * F-RTO (tcp_frto.h) after an ACK that moved SND.UNA (@advanced) or was
 * a duplicate or SACKed something new (@dup), its SACK blocks taken: new
 * data next, an undo, or go-back-N after all.
 */
void tcp_rec_frto_ack(struct tcp_conn *c, bool advanced, bool dup);
/**
 * F-RTO ends without a verdict of spurious (a loss, a later RTO, a
 * zero-window probe): a go-back-N held at SND.MAX for its new data goes
 * back to SND.UNA.
 */
void tcp_rec_frto_abandon(struct tcp_conn *c);
/** The RACK reordering timer fired. */
void tcp_rec_rack_timer(struct tcp_conn *c, uint64_t now);
/** The tail loss probe timer fired: send the probe. */
void tcp_rec_tlp_timer(struct tcp_conn *c, uint64_t now, struct tcp_out *out);
/**
 * snd_mss was lowered (path MTU, tcp_icmp.c): records larger are cut to it
 * and marked lost, to go again at the new size; falls back to NewReno
 * (sb_on false) when the scoreboard cannot grow.
 */
void tcp_rec_mss_lowered(struct tcp_conn *c);

/** Release @acked sequence numbers' worth of the send buffer; returns data bytes freed. */
uint32_t tcp_sndbuf_ack(struct tcp_conn *c, uint32_t acked);

#endif
