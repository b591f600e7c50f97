/*
 * checksum.h - the Internet checksum (RFC 1071), in one place.
 *
 * Owns how lunar computes the 16-bit one's complement checksum used by
 * IPv4, ICMP, UDP and TCP: an inline sum for short regions and the
 * pseudo-header, checksum.c's SIMD sum for long ones, so every parser and
 * emitter agrees on byte order and folding.
 *
 * Byte order: the one's complement sum is byte-order independent (RFC 1071
 * 2(B)), so every value returned here is already in network byte order
 * *as a 16-bit word in memory*: store it into the header field as is
 * (memcpy or assignment to an rte_be16_t), never through htons().
 */
#ifndef LUNAR_WIRE_CHECKSUM_H
#define LUNAR_WIRE_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/compiler.h" /* before DPDK: rte_common.h defines container_of only #ifndef */

#include <rte_byteorder.h>

/**
 * One's complement add two 16-bit partial sums.
 *
 * @param a partial sum (non-complemented).
 * @param b partial sum (non-complemented).
 *
 * @return a + b with the end-around carry folded back in.
 */
static inline uint16_t inet_csum_add(uint16_t a, uint16_t b)
{
	uint32_t s = (uint32_t)a + b;

	return (uint16_t)((s & 0xffff) + (s >> 16));
}

/**
 * Add the partial sum @part of a piece that starts @off bytes into the
 * region being summed (a frame in several buffers): a piece at an odd
 * offset has its bytes in the other half of each 16-bit word, so its
 * folded sum is byte-swapped first (RFC 1071 2(B)).
 */
static inline uint16_t inet_csum_add_at(uint16_t sum, uint16_t part, size_t off)
{
	return inet_csum_add(sum, (off & 1) ? rte_bswap16(part) : part);
}

/*
 * Regions at least this long (a segment's payload) are summed out of line
 * by the widest version this CPU runs (checksum.c); shorter ones (headers,
 * the pseudo-header) inline by inet_csum_short().
 */
#define INET_CSUM_LONG_MIN 64

/*
 * The long-region sum: the non-complemented one's complement sum of @len
 * bytes, equal to rte_raw_cksum()'s. inet_csum_long points at the version
 * chosen at load time; the others are callable for tests and benchmarks
 * (the AVX ones only on a CPU that runs them: __builtin_cpu_supports()).
 */
extern uint16_t (*inet_csum_long)(const void *buf, size_t len);
uint16_t inet_csum_long_generic(const void *buf, size_t len);
#if defined(__x86_64__)
uint16_t inet_csum_long_avx2(const void *buf, size_t len);
uint16_t inet_csum_long_avx512(const void *buf, size_t len);
uint16_t inet_csum_long_avx512vnni(const void *buf, size_t len);
#endif
/** The version inet_csum_long points at: "avx512vnni", "avx512", "avx2" or "generic". */
const char *inet_csum_long_name(void);

/* Fold a 64-bit sum of 16-bit words (in any grouping) to 16 bits. */
static inline uint16_t inet_csum_fold(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffu) + (s >> 16);
	s = (s & 0xffffu) + (s >> 16);
	return (uint16_t)s;
}

/*
 * @len bytes at @p as 32-bit words added into 64 bits, unfolded: adding a
 * 32-bit word adds its two 16-bit words, each in its own half, so the
 * fold gives RFC 1071's sum. The 2- and 1-byte tail starts at an even
 * offset; the odd byte is padded with zero.
 */
static inline uint64_t inet_csum_words(const uint8_t *p, size_t len)
{
	uint64_t s = 0;

	for (; len >= 4; p += 4, len -= 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		s += w;
	}
	if (len >= 2) {
		uint16_t w;

		memcpy(&w, p, 2);
		s += w;
		p += 2;
		len -= 2;
	}
	if (len) {
		uint16_t w = 0;

		memcpy(&w, p, 1);
		s += w;
	}
	return s;
}

/*
 * The sum of a short region (a header). Four bytes an add where DPDK
 * 22.11's rte_raw_cksum() takes two; its loop made the headers' sums ~6%
 * of a checksummed request's work.
 */
static inline uint16_t inet_csum_short(const void *buf, size_t len)
{
	return inet_csum_fold(inet_csum_words(buf, len));
}

/**
 * Non-complemented one's complement sum of a buffer.
 *
 * @param buf bytes to sum (any alignment).
 * @param len number of bytes; an odd trailing byte is padded with zero (RFC 1071).
 *
 * @return the folded 16-bit sum, in the byte order of the buffer.
 */
static inline uint16_t inet_csum_partial(const void *buf, size_t len)
{
	if (len < INET_CSUM_LONG_MIN)
		return inet_csum_short(buf, len);
	return inet_csum_long(buf, len);
}

/**
 * The Internet checksum of a buffer (RFC 1071).
 *
 * @param buf bytes to checksum (any alignment).
 * @param len number of bytes.
 *
 * To fill a checksum field: zero it, then store inet_csum() of the region.
 * To verify: inet_csum() of the region *including* its checksum field is 0
 * when the data is intact.
 *
 * @return the complemented checksum, ready to store as is.
 */
static inline uint16_t inet_csum(const void *buf, size_t len)
{
	return (uint16_t)~inet_csum_partial(buf, len);
}

/**
 * Partial sum of the IPv4 pseudo-header (RFC 9293 3.1,
 * RFC 768) that UDP and TCP checksums cover.
 * @param src IPv4 source address, host byte order.
 * @param dst IPv4 destination address, host byte order.
 * @param proto IP protocol number (IPPROTO_UDP, IPPROTO_TCP).
 * @param len UDP/TCP length (header plus data), in bytes.
 *
 * @p len is added as a 32-bit quantity (both halves summed) so that an
 * impossible length above 65535 still gives a deterministic result that
 * parse and emit agree on; for every real IPv4 segment it is the 16-bit
 * length field of RFC 768 / RFC 9293.
 *
 * @return the non-complemented sum, as rte_ipv4_phdr_cksum() would give it.
 */
static inline uint16_t inet_csum_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint32_t len)
{
	/* Summed in host order, swapped once: the sum is byte-order independent (RFC 1071 2(B)). */
	uint32_t s = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto +
		     (len >> 16) + (len & 0xffff);

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return rte_cpu_to_be_16((uint16_t)s);
}

/**
 * UDP or TCP checksum over pseudo-header and segment.
 *
 * @param l4 start of the UDP/TCP header.
 * @param len header plus data length in bytes (also the pseudo-header length).
 * @param src IPv4 source, host byte order.
 * @param dst IPv4 destination, host byte order.
 * @param proto IPPROTO_UDP or IPPROTO_TCP.
 *
 * Same fill/verify rule as inet_csum(): 0 over an intact segment whose
 * checksum field is included. UDP's "0 means no checksum" (RFC 768) is
 * the caller's business.
 *
 * @return the complemented checksum, ready to store as is.
 */
static inline uint16_t inet_csum_l4(const void *l4, size_t len, uint32_t src, uint32_t dst,
				    uint8_t proto)
{
	uint16_t sum = inet_csum_add(inet_csum_pseudo(src, dst, proto, (uint32_t)len),
				     inet_csum_partial(l4, len));

	return (uint16_t)~sum;
}

#endif
