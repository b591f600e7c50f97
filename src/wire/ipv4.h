/*
 * ipv4.h - IPv4 header view (RFC 791, RFC 1122 3.2.1): parse and emit.
 *
 * Owns the header layout (struct rte_ipv4_hdr), the header checksum, the
 * option walk and the checks that need no state. Whether the destination
 * is ours, TTL handling and which protocols are delivered belong to net/.
 */
#ifndef LUNAR_WIRE_IPV4_H
#define LUNAR_WIRE_IPV4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/compiler.h" /* before DPDK: rte_common.h defines container_of only #ifndef */

#include <rte_ip.h>

#include "base/drop.h"

/** Length of an IPv4 header without options. */
#define IPV4_HDR_LEN 20
/** Longest IPv4 header: IHL is 4 bits of 32-bit words. */
#define IPV4_HDR_MAX_LEN 60

/* Option type octets (RFC 791 3.1; router alert RFC 2113). */
#define IPV4_OPT_TYPE_EOL  0
#define IPV4_OPT_TYPE_NOP  1
#define IPV4_OPT_TYPE_RR   7
#define IPV4_OPT_TYPE_TS   68
#define IPV4_OPT_TYPE_LSRR 131
#define IPV4_OPT_TYPE_SSRR 137
#define IPV4_OPT_TYPE_RA   148

/* Bits of ipv4_repr.opt_flags: which options the header carried. */
#define IPV4_OPT_RR    0x01 /* record route */
#define IPV4_OPT_TS    0x02 /* internet timestamp */
#define IPV4_OPT_LSRR  0x04 /* loose source and record route */
#define IPV4_OPT_SSRR  0x08 /* strict source and record route */
#define IPV4_OPT_RA    0x10 /* router alert */
#define IPV4_OPT_OTHER 0x20 /* any other well-formed option (ignored) */

/** A parsed IPv4 header; payload points into the parsed buffer. */
struct ipv4_repr {
	uint32_t src, dst; /* host byte order */
	uint8_t proto, ttl, tos;
	uint16_t id;
	uint16_t hdr_len, total_len; /* bytes */
	bool df;
	const uint8_t *payload;
	size_t payload_len; /* total_len - hdr_len: Ethernet padding excluded */
	uint8_t opt_flags;  /* IPV4_OPT_* */
};

/**
 * Validate and decode an IPv4 header.
 *
 * @param buf start of the IPv4 header (the Ethernet payload).
 * @param len bytes available; may exceed total_len by Ethernet padding.
 * @param verify_csum check the header checksum (false when the NIC already did).
 * @param out filled on success.
 *
 * Checks, in this order (the first failure is the reason returned):
 * IP_SHORT (< 20 bytes), IP_BAD_VERSION (not 4), IP_BAD_IHL (< 5 words or
 * past @p len), IP_BAD_TOTAL_LEN (below IHL or past @p len), IP_BAD_CHECKSUM,
 * IP_BAD_OPTIONS (malformed option, RFC 1122 3.2.1.8), IP_FRAGMENT (MF or
 * a non-zero offset: no reassembly), IP_BAD_SRC (broadcast, multicast or
 * loopback source, RFC 1122 3.2.1.3).
 *
 * @return LUNAR_DROP_NONE or the drop reason.
 */
enum lunar_drop ipv4_parse(const uint8_t *buf, size_t len, bool verify_csum, struct ipv4_repr *out);

/**
 * Write a 20-byte IPv4 header (no options).
 *
 * @param buf where to write; the payload follows at @p buf + 20 (written by the caller).
 * @param cap bytes available at @p buf.
 * @param r uses src, dst, proto, ttl, tos, id, df and payload_len; hdr_len,
 *     total_len, payload and opt_flags are ignored. Never sets MF or an
 *     offset: lunar does not fragment.
 * @param fill_csum compute the header checksum (false leaves 0 for NIC offload).
 *
 * @return IPV4_HDR_LEN, or 0 (nothing written) if @p cap < 20 or the total
 * length would not fit in 16 bits.
 */
size_t ipv4_emit(uint8_t *buf, size_t cap, const struct ipv4_repr *r, bool fill_csum);

#endif
