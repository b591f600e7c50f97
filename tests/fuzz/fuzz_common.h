/*
 * fuzz_common.h - shared plumbing for the libFuzzer targets: the wire/
 * targets' input format, checksum fix-ups, the invariant check, and for
 * the stateful targets an input reader (big-endian fields, 0 past the end)
 * and a capturing port's empty receive.
 *
 * Every input starts with a flags byte (FUZZ_F_*); fuzz_udp and fuzz_tcp
 * then take 8 bytes of IPv4 source and destination (network order); the
 * rest is the packet. The packet is copied into a heap buffer of exactly
 * its size, so AddressSanitizer catches any read past its end.
 *
 * Checksums are the reason for FUZZ_F_FIXUP: random mutations almost never
 * produce a valid Internet checksum, so without it everything after the
 * checksum check would only be reached with verification off. With the
 * flag, the target computes a correct checksum into the copy first.
 */
#ifndef LUNAR_TESTS_FUZZ_COMMON_H
#define LUNAR_TESTS_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h> /* IPPROTO_* */

#include "base/compiler.h" /* before DPDK: rte_common.h defines container_of only #ifndef */
#include "base/drop.h"
#include "wire/checksum.h"

#define FUZZ_F_VERIFY	 0x01 /* verify checksums (else trust "the NIC") */
#define FUZZ_F_FIXUP	 0x02 /* write correct checksums before parsing */
#define FUZZ_F_UNALIGNED 0x04 /* place the packet at an odd address */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input, read front to back; a field past the end reads as 0. */
struct reader {
	const uint8_t *p;
	size_t n, i;
};

static inline uint8_t rd8(struct reader *r)
{
	return r->i < r->n ? r->p[r->i++] : 0;
}

static inline uint16_t rd16(struct reader *r)
{
	uint16_t hi = rd8(r);

	return (uint16_t)(hi << 8 | rd8(r));
}

static inline uint32_t rd32(struct reader *r)
{
	uint32_t hi = rd16(r);

	return hi << 16 | rd16(r);
}

struct port;
struct rte_mbuf;

/* The receive of a capturing port in a stateful target: frames are handed to netif_input()
 * directly. */
static inline uint16_t fuzz_port_no_rx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	(void)p;
	(void)pkts;
	(void)n;
	return 0;
}

/* abort() (a libFuzzer crash) with the failed condition when an invariant breaks. */
#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__,       \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* Same, for a parse that must succeed: also names the drop reason. */
#define FUZZ_CHECK_OK(expr)                                                                        \
	do {                                                                                       \
		enum lunar_drop why_ = (expr);                                                     \
		if (why_ != LUNAR_DROP_NONE) {                                                     \
			fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,       \
				lunar_drop_name(why_));                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

struct fuzz_input {
	uint8_t flags;
	uint32_t src, dst; /* host order; only with want_addrs */
	uint8_t *pkt;	   /* copy of the packet bytes */
	size_t len;
	uint8_t *alloc;
};

/* Split @data into flags, optional addresses and a private packet copy. */
static inline bool fuzz_input_init(struct fuzz_input *in, const uint8_t *data, size_t size,
				   bool want_addrs)
{
	size_t pre = 1 + (want_addrs ? 8 : 0), off;

	if (size < pre)
		return false;
	in->flags = data[0];
	in->src = in->dst = 0;
	if (want_addrs) {
		in->src = (uint32_t)data[1] << 24 | (uint32_t)data[2] << 16 |
			  (uint32_t)data[3] << 8 | data[4];
		in->dst = (uint32_t)data[5] << 24 | (uint32_t)data[6] << 16 |
			  (uint32_t)data[7] << 8 | data[8];
	}
	in->len = size - pre;
	off = (in->flags & FUZZ_F_UNALIGNED) ? 1 : 0;
	/* Exact size (malloc(0) may return NULL: allocate at least 1). */
	in->alloc = malloc((in->len + off) ? in->len + off : 1);
	if (in->alloc == NULL)
		abort();
	in->pkt = in->alloc + off;
	if (in->len)
		memcpy(in->pkt, data + pre, in->len);
	return true;
}

static inline void fuzz_input_free(struct fuzz_input *in)
{
	free(in->alloc);
}

/* True if [p, p + plen) lies inside [base, base + len). */
static inline bool fuzz_inside(const uint8_t *base, size_t len, const uint8_t *p, size_t plen)
{
	return p >= base && (size_t)(p - base) <= len && plen <= len - (size_t)(p - base);
}

/* Store a 16-bit checksum value (already in wire order) at @p. */
static inline void fuzz_put_csum(uint8_t *p, uint16_t c)
{
	memcpy(p, &c, 2);
}

/* Correct IPv4 header checksum, if the header is long enough to have one. */
static inline void fuzz_fix_ipv4(uint8_t *p, size_t len)
{
	size_t hl;

	if (len < 20)
		return;
	hl = (size_t)(p[0] & 0x0f) * 4;
	if (hl < 20 || hl > len)
		return;
	fuzz_put_csum(p + 10, 0);
	fuzz_put_csum(p + 10, inet_csum(p, hl));
}

static inline void fuzz_fix_icmp(uint8_t *p, size_t len)
{
	if (len < 8)
		return;
	fuzz_put_csum(p + 2, 0);
	fuzz_put_csum(p + 2, inet_csum(p, len));
}

/* UDP: over the UDP length field's bytes, 0 sent as 0xffff (RFC 768). */
static inline void fuzz_fix_udp(uint8_t *p, size_t len, uint32_t src, uint32_t dst)
{
	size_t ulen;
	uint16_t c;

	if (len < 8)
		return;
	ulen = (size_t)p[4] << 8 | p[5];
	if (ulen < 8 || ulen > len)
		return;
	fuzz_put_csum(p + 6, 0);
	c = inet_csum_l4(p, ulen, src, dst, IPPROTO_UDP);
	fuzz_put_csum(p + 6, c ? c : 0xffff);
}

static inline void fuzz_fix_tcp(uint8_t *p, size_t len, uint32_t src, uint32_t dst)
{
	if (len < 20)
		return;
	fuzz_put_csum(p + 16, 0);
	fuzz_put_csum(p + 16, inet_csum_l4(p, len, src, dst, IPPROTO_TCP));
}

#endif
