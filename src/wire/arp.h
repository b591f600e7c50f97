/*
 * arp.h - ARP packet view for Ethernet/IPv4 (RFC 826): parse and emit.
 *
 * Owns the 28-byte layout (struct rte_arp_hdr) and the format checks that
 * need no state. Whether the target address is ours, and what to do with
 * the sender's mapping, is the net layer's decision.
 */
#ifndef LUNAR_WIRE_ARP_H
#define LUNAR_WIRE_ARP_H

#include <stddef.h>
#include <stdint.h>

#include "base/compiler.h" /* before DPDK: rte_common.h defines container_of only #ifndef */

#include <rte_arp.h>
#include <rte_ether.h>

#include "base/drop.h"

/** Length of an Ethernet/IPv4 ARP packet (without Ethernet padding). */
#define ARP_PKT_LEN 28

/** A parsed Ethernet/IPv4 ARP packet. */
struct arp_repr {
	uint16_t op; /* RTE_ARP_OP_REQUEST or RTE_ARP_OP_REPLY */
	struct rte_ether_addr sha, tha;
	uint32_t spa, tpa; /* host byte order */
};

/**
 * Validate and decode an ARP packet.
 *
 * @param buf start of the ARP packet (the Ethernet payload).
 * @param len bytes available; trailing Ethernet padding is ignored.
 * @param out filled on success.
 *
 * Checks, in order: length; hardware type Ethernet (1), protocol type IPv4
 * (0x0800), address lengths 6 and 4 (RFC 826 "Packet Reception": anything
 * else is a protocol we do not speak); opcode request or reply (RFC 826;
 * RARP/InARP are not handled); sender MAC unicast and non-zero (a
 * broadcast/multicast/zero sender would poison the neighbour table).
 *
 * @return LUNAR_DROP_NONE, ARP_SHORT, ARP_BAD_FORMAT, ARP_BAD_OP or
 * ARP_BAD_SENDER.
 */
enum lunar_drop arp_parse(const uint8_t *buf, size_t len, struct arp_repr *out);

/**
 * Write an Ethernet/IPv4 ARP packet.
 *
 * @param buf where to write.
 * @param cap bytes available at @p buf.
 * @param r packet contents (all fields used).
 *
 * @return ARP_PKT_LEN, or 0 (nothing written) if @p cap is too small.
 */
size_t arp_emit(uint8_t *buf, size_t cap, const struct arp_repr *r);

#endif
