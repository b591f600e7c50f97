/*
 * icmp.h - ICMP message view (RFC 792, RFC 1122 3.2.2): parse and emit.
 *
 * Owns the 8-byte header layout (struct rte_icmp_hdr), the checksum, and
 * the quote an error message carries (icmp_error_parse()): the IPv4 header
 * of the datagram that caused it and the first 8 bytes beyond, all RFC 792
 * guarantees. Which types lunar answers (echo), the broadcast-echo rule and
 * whom an error is for belong to net/ and the transports.
 */
#ifndef LUNAR_WIRE_ICMP_H
#define LUNAR_WIRE_ICMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/compiler.h" /* before DPDK: rte_common.h defines container_of only #ifndef */

#include <rte_icmp.h>

#include "base/drop.h"

/** Length of the ICMP header: type, code, checksum and 4 bytes of "rest". */
#define ICMP_HDR_LEN 8

/* Types and codes lunar tells apart (RFC 792; DPDK 22.11 names only echo). */
#define ICMP_TYPE_DEST_UNREACH	   3
#define ICMP_TYPE_SOURCE_QUENCH	   4 /* deprecated, RFC 6633 */
#define ICMP_TYPE_TIME_EXCEEDED	   11
#define ICMP_TYPE_PARAM_PROBLEM	   12
#define ICMP_CODE_NET_UNREACH	   0
#define ICMP_CODE_HOST_UNREACH	   1
#define ICMP_CODE_PROTO_UNREACH	   2
#define ICMP_CODE_PORT_UNREACH	   3
#define ICMP_CODE_FRAG_NEEDED	   4 /* with the next-hop MTU, RFC 1191 4 */
#define ICMP_CODE_NET_PROHIBITED   9 /* RFC 1122 3.2.2.1 */
#define ICMP_CODE_HOST_PROHIBITED  10
#define ICMP_CODE_ADMIN_PROHIBITED 13 /* RFC 1812 5.2.7.1 */

/** Bytes of the quoted transport header an error is sure to carry (RFC 792). */
#define ICMP_QUOTE_L4_LEN 8

/**
 * A parsed ICMP message. id and seq are the two 16-bit halves of header
 * bytes 4..7: identifier and sequence number for echo (RFC 792); for other
 * types they hold whatever those bytes mean (e.g. unused / next-hop MTU for
 * destination unreachable, RFC 1191). data points into the parsed buffer.
 */
struct icmp_repr {
	uint8_t type, code;
	uint16_t id, seq; /* host byte order */
	const uint8_t *data;
	size_t data_len;
};

/**
 * Validate and decode an ICMP message.
 *
 * @param buf start of the ICMP header (the IPv4 payload, padding excluded).
 * @param len length of the whole message.
 * @param out filled on success.
 *
 * The checksum is always verified over the whole message (RFC 792): NICs
 * do not offload ICMP checksums, and an echo reply must not reflect
 * corrupted data.
 *
 * @return LUNAR_DROP_NONE, ICMP_SHORT (< 8 bytes) or ICMP_BAD_CHECKSUM.
 */
enum lunar_drop icmp_parse(const uint8_t *buf, size_t len, struct icmp_repr *out);

/**
 * What an error message (destination unreachable, time exceeded, parameter
 * problem) says about the datagram that caused it. Points into the buffer
 * icmp_parse() was given.
 */
struct icmp_quote {
	uint8_t type, code;
	uint16_t mtu;	    /**< next-hop MTU of fragmentation needed (RFC 1191 4), else 0 */
	uint32_t src, dst;  /**< the quoted datagram's addresses, host order */
	uint8_t proto;	    /**< its protocol */
	uint16_t total_len; /**< its IPv4 total length, as sent */
	/** Ports and, for TCP, the sequence number: the 8 quoted bytes RFC 792 guarantees. */
	uint16_t sport, dport;
	uint32_t seq;
	const uint8_t *l4; /**< the quoted transport header */
	size_t l4_len;	   /**< >= ICMP_QUOTE_L4_LEN; more if the sender quoted more */
};

/** Is @type one of the error messages icmp_error_parse() reads? */
static inline bool icmp_is_error(uint8_t type)
{
	return type == ICMP_TYPE_DEST_UNREACH || type == ICMP_TYPE_TIME_EXCEEDED ||
	       type == ICMP_TYPE_PARAM_PROBLEM;
}

/**
 * Decode the quote of an error message @r parsed by icmp_parse() (type 3,
 * 11 or 12, see icmp_is_error()). The quoted IPv4 header's checksum is not
 * checked: routers quote the header as they received it, and the ICMP
 * checksum already covers the quote.
 *
 * @return LUNAR_DROP_NONE; ICMP_QUOTE_SHORT when less than a 20-byte
 *     header (or its own length) and 8 bytes beyond it are quoted;
 *     ICMP_QUOTE_BAD_HDR for a version other than 4, a header length
 *     below 20 bytes, or a non-first fragment (it quotes no transport
 *     header).
 */
enum lunar_drop icmp_error_parse(const struct icmp_repr *r, struct icmp_quote *out);

/**
 * Write an ICMP message with its checksum.
 *
 * @param buf where to write.
 * @param cap bytes available at @p buf; must hold 8 + r->data_len.
 * @param r type, code, id, seq and the data. If r->data is non-NULL and not
 *     already at @p buf + 8 it is copied there (overlap allowed), so an echo
 *     reply can be built in place over the request or from another buffer;
 *     with r->data NULL the caller has already put the data at @p buf + 8.
 *
 * Mostly used for echo request/reply (RTE_IP_ICMP_ECHO_REQUEST/REPLY).
 *
 * @return 8 + r->data_len, or 0 (nothing written) if @p cap is too small.
 */
size_t icmp_emit(uint8_t *buf, size_t cap, const struct icmp_repr *r);

#endif
