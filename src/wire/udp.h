/*
 * udp.h - UDP header view (RFC 768, RFC 1122 4.1): parse and emit.
 *
 * Owns the 8-byte header layout (struct rte_udp_hdr), the length check and
 * the pseudo-header checksum. Port demultiplexing belongs to net/.
 */
#ifndef LUNAR_WIRE_UDP_H
#define LUNAR_WIRE_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/compiler.h" /* before DPDK: rte_common.h defines container_of only #ifndef */

#include <rte_udp.h>

#include "base/drop.h"

/** Length of the UDP header. */
#define UDP_HDR_LEN 8

/** A parsed UDP header; payload points into the parsed buffer. */
struct udp_repr {
	uint16_t sport, dport; /* host byte order */
	const uint8_t *payload;
	size_t payload_len; /* from the UDP length field */
};

/**
 * Validate and decode a UDP datagram.
 *
 * @param buf start of the UDP header (the IPv4 payload, padding excluded).
 * @param len length of the IPv4 payload.
 * @param src IPv4 source, host byte order (pseudo-header).
 * @param dst IPv4 destination, host byte order (pseudo-header).
 * @param verify_csum check the checksum (false when the NIC already did).
 * @param out filled on success.
 *
 * Bytes past the UDP length field and within @p len are ignored (RFC 768
 * does not forbid them; Linux trims them the same way).
 *
 * @return LUNAR_DROP_NONE, UDP_SHORT (< 8 bytes), UDP_BAD_LEN (length
 * field < 8 or > @p len) or UDP_BAD_CHECKSUM (a zero checksum means the
 * sender did not compute one and is accepted, RFC 768 / RFC 1122 4.1.3.4).
 */
enum lunar_drop udp_parse(const uint8_t *buf, size_t len, uint32_t src, uint32_t dst,
			  bool verify_csum, struct udp_repr *out);

/**
 * Write a UDP header.
 *
 * @param buf where to write; the payload lives at @p buf + 8 (written by the caller,
 *       before this call when @p fill_csum, or use udp_fill_csum() afterwards).
 * @param cap bytes available at @p buf; must hold 8 + r->payload_len when
 *       @p fill_csum (the checksum reads the payload), else 8.
 * @param r uses sport, dport and payload_len; r->payload is ignored.
 * @param src IPv4 source, host byte order.
 * @param dst IPv4 destination, host byte order.
 * @param fill_csum compute the checksum; false writes 0 (for NIC offload the
 *             caller then stores inet_csum_pseudo() there, as DPDK expects).
 *
 * @return UDP_HDR_LEN, or 0 (nothing written) if @p cap is too small or
 * the length does not fit in 16 bits.
 */
size_t udp_emit(uint8_t *buf, size_t cap, const struct udp_repr *r, uint32_t src, uint32_t dst,
		bool fill_csum);

/**
 * Compute and store the checksum of a complete datagram.
 *
 * @param buf start of the UDP header, payload in place.
 * @param len header plus payload length (the UDP length field).
 * @param src IPv4 source, host byte order.
 * @param dst IPv4 destination, host byte order.
 *
 * A computed 0 is sent as 0xffff (RFC 768), since 0 means "no checksum".
 */
void udp_fill_csum(uint8_t *buf, size_t len, uint32_t src, uint32_t dst);

#endif
