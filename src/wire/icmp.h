/*
 * icmp.h - ICMP message view (RFC 792, RFC 1122 3.2.2): parse and emit.
 *
 * Owns the 8-byte header layout (struct rte_icmp_hdr) and the checksum.
 * Which types lunar answers (echo) and the broadcast-echo rule belong to
 * net/.
 */
#ifndef LUNAR_WIRE_ICMP_H
#define LUNAR_WIRE_ICMP_H

#include <stddef.h>
#include <stdint.h>

#include "base/compiler.h" /* before DPDK: rte_common.h defines container_of only #ifndef */

#include <rte_icmp.h>

#include "base/drop.h"

/** Length of the ICMP header: type, code, checksum and 4 bytes of "rest". */
#define ICMP_HDR_LEN 8

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
