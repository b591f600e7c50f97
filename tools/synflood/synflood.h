/*
 * synflood.h - the SYN flood generator's pure parts (tools/synflood/):
 * its options (parsed and checked, with errors that say how to fix them)
 * and the frames it sends. No sockets, no clock: main.c does the I/O, so
 * tests/unit/synflood/ checks every frame with lunar's own parsers.
 *
 * A frame is what a Linux client's SYN looks like on the wire (RFC 9293
 * 3.1, RFC 7323, RFC 2018): Ethernet, IPv4 with DF and TTL 64, TCP with
 * MSS, SACK-permitted, timestamps and window scale (the kernel's order,
 * 20 option bytes), 74 bytes in all. The source address (within a subnet),
 * source port, ISN, IP ID and timestamp are random per frame: every SYN is
 * a new half-open connection to the target (RFC 4987 2).
 */
#ifndef LUNAR_SYNFLOOD_H
#define LUNAR_SYNFLOOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/compiler.h" /* before DPDK: rte_common.h defines container_of only #ifndef */

#include <rte_ether.h>

/** Bytes of one SYN frame: Ethernet 14, IPv4 20, TCP 20 + 20 of options. */
#define SYNFLOOD_FRAME_LEN 74
/** Most frames one sendmmsg() call hands the kernel. */
#define SYNFLOOD_BATCH_MAX 1024
/** Most frames --pcap writes (it is for tests and inspection). */
#define SYNFLOOD_PCAP_MAX 1000000

/** What to send: the frame's fixed fields. Addresses in host byte order. */
struct synflood_frame {
	struct rte_ether_addr src_mac, dst_mac;
	uint32_t src_net;   /* the spoofed sources' subnet, host bits zero */
	uint8_t src_prefix; /* 0..32 */
	uint32_t dst_ip;
	uint16_t dst_port;
	uint16_t mss;	/* the MSS option's value */
	uint8_t wscale; /* the window scale option's shift */
};

/** The generator's options (lunar-synflood --help). */
struct synflood_opts {
	const char *ifname; /* --interface: send here (AF_PACKET) */
	const char *pcap;   /* --pcap: write the frames to this file instead */
	bool have_dst_mac, have_src_mac;
	struct synflood_frame frame;
	double duration_s; /* --duration; 0 with --count: until the count */
	uint64_t count;	   /* --count; 0: until the duration */
	uint64_t rate_pps; /* --rate; 0: as fast as the kernel takes them */
	unsigned batch;	   /* --batch: frames per sendmmsg() */
	uint64_t seed;	   /* --seed; 0: from the clock */
	bool quiet;
};

/**
 * Parse and check the command line.
 *
 * @param argc, argv as given to main().
 * @param o filled on success (defaults for what is not given).
 * @param err what is wrong and how to fix it, on failure.
 * @param errlen size of @p err.
 *
 * @return 0 on success, 1 for --help (usage printed to stdout), -EINVAL on
 * a bad command line (@p err says why).
 */
int synflood_parse_args(int argc, char **argv, struct synflood_opts *o, char *err, size_t errlen);

/** Print the usage text to @p f. */
void synflood_usage(FILE *f);

/**
 * The next value of the generator's random sequence (xorshift64*).
 *
 * @param state the generator; never 0 (synflood_rng_seed() sees to it).
 *
 * @return 64 random bits.
 */
static inline uint64_t synflood_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(0x2545F4914F6CDD1D);
}

/** A generator state from @p seed (any value, 0 included). */
uint64_t synflood_rng_seed(uint64_t seed);

/**
 * A random host address in the subnet of @p f: with a prefix of 30 or
 * shorter, neither the subnet's own address nor its broadcast address.
 *
 * @return the address, host byte order.
 */
uint32_t synflood_rand_src(const struct synflood_frame *f, uint64_t *rng);

/**
 * Write one SYN frame.
 *
 * @param buf where to write; at least SYNFLOOD_FRAME_LEN bytes.
 * @param cap bytes at @p buf.
 * @param f the fixed fields.
 * @param rng the random fields' generator.
 *
 * @return SYNFLOOD_FRAME_LEN, or 0 if @p cap is too small.
 */
size_t synflood_build(uint8_t *buf, size_t cap, const struct synflood_frame *f, uint64_t *rng);

#endif
