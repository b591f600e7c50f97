/*
 * tcp.h - TCP header view (RFC 9293 3.1): parse and emit header + options.
 *
 * Owns the header layout (struct rte_tcp_hdr), the pseudo-header checksum
 * and the options lunar understands: MSS (RFC 9293 3.2), window scale and
 * timestamps (RFC 7323), SACK-permitted and SACK (RFC 2018). No connection
 * state: what a flag combination or an option means for a connection is
 * tcp/'s business (e.g. MSS outside a SYN is reported, not rejected).
 * Flags use DPDK's RTE_TCP_*_FLAG values.
 */
#ifndef LUNAR_WIRE_TCP_H
#define LUNAR_WIRE_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/compiler.h" /* before DPDK: rte_common.h defines container_of only #ifndef */

#include <rte_tcp.h>

#include "base/drop.h"

/** Length of a TCP header without options. */
#define TCP_HDR_LEN 20
/** Longest TCP header: data offset is 4 bits of 32-bit words. */
#define TCP_HDR_MAX_LEN 60
/** Most option bytes a header can carry. */
#define TCP_OPT_MAX_LEN (TCP_HDR_MAX_LEN - TCP_HDR_LEN)

/* Option kinds (IANA "TCP Option Kind Numbers"). */
#define TCP_OPT_EOL	  0
#define TCP_OPT_NOP	  1
#define TCP_OPT_MSS	  2 /* RFC 9293 3.2, length 4 */
#define TCP_OPT_WS	  3 /* RFC 7323 2.2, length 3 */
#define TCP_OPT_SACK_PERM 4 /* RFC 2018 2, length 2 */
#define TCP_OPT_SACK	  5 /* RFC 2018 3, length 2 + 8n, n = 1..4 */
#define TCP_OPT_TS	  8 /* RFC 7323 3.2, length 10 */

/** At most 4 SACK blocks fit in 40 option bytes (RFC 2018 3). */
#define TCP_MAX_SACK_BLOCKS 4
/** Largest window shift (RFC 7323 2.3); larger received values are clamped. */
#define TCP_MAX_WSCALE 14

/** The options lunar understands; has_* say which were present. */
struct tcp_options {
	bool has_mss, has_wscale, sack_permitted, has_ts;
	uint16_t mss;
	uint8_t wscale;
	uint32_t ts_val, ts_ecr;
	uint8_t sack_count; /* 0..TCP_MAX_SACK_BLOCKS */
	struct {
		uint32_t left, right;
	} sack[TCP_MAX_SACK_BLOCKS];
};

/** A parsed TCP header; payload points into the parsed buffer. */
struct tcp_repr {
	uint16_t sport, dport; /* host byte order, like every field here */
	uint32_t seq, ack;
	uint8_t flags; /* RTE_TCP_*_FLAG (CWR..FIN) */
	uint16_t window;
	uint16_t urg;
	uint16_t hdr_len; /* bytes, options included */
	const uint8_t *payload;
	size_t payload_len;
	struct tcp_options opts;
	uint8_t ecn; /* the IP header's ECN field (RFC 3168 5), set by the IP layer; 0 if none */
};

/* RFC 3168 5: the ECN field, the low two bits of the IPv4 TOS octet. */
#define TCP_ECN_NOT_ECT 0u
#define TCP_ECN_ECT1	1u
#define TCP_ECN_ECT0	2u
#define TCP_ECN_CE	3u
#define TCP_ECN_MASK	3u

/**
 * Validate and decode a TCP header and its options.
 *
 * @param buf start of the TCP header (the IPv4 payload, padding excluded).
 * @param len segment length: header, options and data.
 * @param src IPv4 source, host byte order (pseudo-header).
 * @param dst IPv4 destination, host byte order (pseudo-header).
 * @param verify_csum check the checksum (false when the NIC already did).
 * @param out filled on success.
 *
 * Checks, in order: TCP_SHORT (< 20 bytes), TCP_BAD_OFFSET (data offset
 * < 5 words or past @p len), TCP_BAD_CHECKSUM, TCP_BAD_OPTION (a known
 * option with the wrong length, or any option whose length is < 2 or runs
 * past the header). Unknown options with a sane length are skipped
 * (RFC 9293 3.1, MUST-6). A window scale above 14 is reported as 14
 * (RFC 7323 2.3). If an option appears twice, the last one wins.
 *
 * @return LUNAR_DROP_NONE or the drop reason.
 */
enum lunar_drop tcp_parse(const uint8_t *buf, size_t len, uint32_t src, uint32_t dst,
			  bool verify_csum, struct tcp_repr *out);

/**
 * Header length tcp_emit() will produce for @p opts.
 *
 * @param opts options to send, or NULL for none.
 *
 * Lets the caller place the payload at buf + tcp_hdr_len() before emitting.
 *
 * @return 20 plus the padded option bytes (at most 60).
 */
size_t tcp_hdr_len(const struct tcp_options *opts);

/**
 * Write a TCP header and options.
 *
 * @param buf where to write; the payload lives at @p buf + tcp_hdr_len(@p opts).
 * @param cap bytes available at @p buf; must hold header + r->payload_len when
 *       @p fill_csum (the checksum reads the payload), else the header.
 * @param r uses sport, dport, seq, ack, flags, window, urg and payload_len;
 *     r->hdr_len, r->payload and r->opts are ignored.
 * @param opts options to write (NULL for none). Written NOP-aligned in the
 *        usual order (MSS, SACK-permitted+timestamps, window scale, SACK)
 *        when that fits in 40 bytes; otherwise packed without NOPs, and
 *        SACK blocks beyond what fits are left out. Padded to 4 bytes with
 *        EOL (RFC 9293 3.1).
 * @param src IPv4 source, host byte order.
 * @param dst IPv4 destination, host byte order.
 * @param fill_csum compute the checksum over header and the payload already at
 *             @p buf + header; false writes 0 (fill it later with
 *             tcp_fill_csum(), or store inet_csum_pseudo() for NIC offload).
 *
 * @return the header length written, or 0 (nothing written) if @p cap is too
 * small or the segment would not fit in an IPv4 packet.
 */
size_t tcp_emit(uint8_t *buf, size_t cap, const struct tcp_repr *r, const struct tcp_options *opts,
		uint32_t src, uint32_t dst, bool fill_csum);

/**
 * Compute and store the checksum of a complete segment.
 *
 * @param buf start of the TCP header, options and payload in place.
 * @param len header plus payload length.
 * @param src IPv4 source, host byte order.
 * @param dst IPv4 destination, host byte order.
 */
void tcp_fill_csum(uint8_t *buf, size_t len, uint32_t src, uint32_t dst);

#endif
