/*
 * tcp_internal.h - what tcp_conn.c and tcp_input.c share and nothing else
 * may call: segment construction, state changes and buffer bookkeeping.
 */
#ifndef LUNAR_TCP_TCP_INTERNAL_H
#define LUNAR_TCP_TCP_INTERNAL_H

#include "tcp/tcp_conn.h"

/** Our timestamp clock (RFC 7323 5.4): 1 ms ticks plus a per-connection offset. */
uint32_t tcp_ts_now(const struct tcp_conn *c, uint64_t now);
/** Append a segment with ACK/window/options filled in; NULL if @out is full. */
struct tcp_tx *tcp_xmit(struct tcp_conn *c, struct tcp_out *out, uint8_t flags, uint32_t seq,
			uint32_t len, uint64_t now);
/** <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK> */
void tcp_send_ack(struct tcp_conn *c, uint64_t now, struct tcp_out *out);
/** A bare RST with sequence number @seq. */
void tcp_send_rst(struct tcp_out *out, uint32_t seq);
void tcp_set_state(struct tcp_conn *c, enum tcp_state s, uint64_t now);
/** CLOSED with @error (negative errno or 0) and application events @ev; queues flushed. */
void tcp_drop(struct tcp_conn *c, int error, uint32_t ev, uint64_t now);
/** Queue in-order data for the application (taking a Zbuf reference if @take_ref). */
int tcp_deliver(struct tcp_conn *c, const uint8_t *data, uint32_t seq, uint32_t len,
		bool take_ref);
/** The peer was heard from: restart the keep-alive idle timer. */
void tcp_keepalive_touch(struct tcp_conn *c, uint64_t now);
/** RFC 3042: send at most one new segment beyond cwnd on each of the first two duplicate ACKs. */
void tcp_limited_transmit(struct tcp_conn *c, uint64_t now, struct tcp_out *out);
/** Release @acked sequence numbers' worth of the send buffer; returns data bytes freed. */
uint32_t tcp_sndbuf_ack(struct tcp_conn *c, uint32_t acked);

#endif
