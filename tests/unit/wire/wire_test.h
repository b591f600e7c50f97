/*
 * wire_test.h - helpers shared by the wire/ unit tests: cmocka includes in
 * the order it needs, drop-reason assertions that print names, addresses.
 */
#ifndef LUNAR_TESTS_WIRE_TEST_H
#define LUNAR_TESTS_WIRE_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

/*
 * base/compiler.h before any DPDK header: rte_common.h defines its own
 * container_of only #ifndef, while compiler.h defines it unconditionally.
 */
#include "base/compiler.h"
#include "base/drop.h"

#include <rte_ether.h>
#include <rte_ip.h>

/*
 * IPv4 address in host byte order. Not DPDK's RTE_IPV4(): in 22.11 it
 * shifts a plain int, which is undefined for a first octet >= 128.
 */
#define IP4(a, b, c, d)                                                                            \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

/* Offsets of the layers inside the golden Ethernet frames. */
#define GOLDEN_L3 14

/* Assert that @expr returns drop reason @want, naming both on failure. */
#define assert_drop(expr, want)                                                                    \
	do {                                                                                       \
		enum lunar_drop got_ = (expr);                                                     \
		if (got_ != (want))                                                                \
			fail_msg("%s:%d: got %s, want %s", __FILE__, __LINE__,                     \
				 lunar_drop_name(got_), lunar_drop_name(want));                    \
	} while (0)

#define assert_ok(expr) assert_drop(expr, LUNAR_DROP_NONE)

/* Same MACs as tests/unit/wire/make_golden.py. */
static const struct rte_ether_addr mac_a LUNAR_UNUSED = {{0x02, 0, 0, 0, 0, 0x01}};
static const struct rte_ether_addr mac_b LUNAR_UNUSED = {{0x02, 0, 0, 0, 0, 0x02}};

static inline void assert_mac_equal(const struct rte_ether_addr *a, const struct rte_ether_addr *b)
{
	assert_memory_equal(a->addr_bytes, b->addr_bytes, RTE_ETHER_ADDR_LEN);
}

#endif
