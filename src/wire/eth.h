/*
 * eth.h - Ethernet II header view: parse and emit the 14-byte header.
 *
 * Owns only the byte layout (struct rte_ether_hdr) and the checks that do
 * not need stack state. Deciding whether a frame is for us (destination
 * MAC) and whether its EtherType is handled is the net layer's job.
 */
#ifndef LUNAR_WIRE_ETH_H
#define LUNAR_WIRE_ETH_H

#include <stddef.h>
#include <stdint.h>

#include "base/compiler.h" /* before DPDK: rte_common.h defines container_of only #ifndef */

#include <rte_ether.h>

#include "base/drop.h"

/** Length of the Ethernet II header (no 802.1Q tag, no FCS). */
#define ETH_HDR_LEN 14

/** A parsed Ethernet II header; payload points into the parsed buffer. */
struct eth_repr {
	struct rte_ether_addr dst, src;
	uint16_t ethertype; /* host byte order */
	const uint8_t *payload;
	size_t payload_len; /* everything after the header, padding included */
};

/**
 * Validate and decode an Ethernet II header.
 *
 * @param buf start of the frame (no preamble; FCS already stripped by the NIC).
 * @param len bytes available at @p buf.
 * @param out filled on success; untouched fields are unspecified on failure.
 *
 * The 60-byte minimum frame size is not enforced: virtual devices hand
 * over unpadded frames, and the IPv4 total length tells the real size.
 *
 * @return LUNAR_DROP_NONE, LUNAR_DROP_ETH_SHORT (fewer than 14 bytes) or
 * LUNAR_DROP_ETH_VLAN (802.1Q/802.1ad tag; lunar does not do VLANs).
 */
enum lunar_drop eth_parse(const uint8_t *buf, size_t len, struct eth_repr *out);

/**
 * Write an Ethernet II header.
 *
 * @param buf where to write.
 * @param cap bytes available at @p buf.
 * @param dst destination MAC.
 * @param src source MAC.
 * @param ethertype host byte order, e.g. RTE_ETHER_TYPE_IPV4.
 *
 * @return ETH_HDR_LEN, or 0 (nothing written) if @p cap is too small.
 */
size_t eth_emit(uint8_t *buf, size_t cap, const struct rte_ether_addr *dst,
		const struct rte_ether_addr *src, uint16_t ethertype);

#endif
