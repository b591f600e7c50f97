/*
 * fuzz_tcp_model.h - what the TCP targets (fuzz_tcp_conn, fuzz_tcp_stack)
 * share: the content model (every payload byte is a function of its
 * sequence number or stream offset, so a target checks the bytes as well as
 * the bookkeeping) and short names for the TCP flags. The input reader is
 * in fuzz_common.h.
 */
#ifndef LUNAR_TESTS_FUZZ_TCP_MODEL_H
#define LUNAR_TESTS_FUZZ_TCP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h" /* the input reader */
#include "wire/tcp.h"

#define ACK RTE_TCP_ACK_FLAG
#define SYN RTE_TCP_SYN_FLAG
#define FIN RTE_TCP_FIN_FLAG
#define RST RTE_TCP_RST_FLAG
#define PSH RTE_TCP_PSH_FLAG
#define ECE RTE_TCP_ECE_FLAG
#define CWR RTE_TCP_CWR_FLAG

/* The content model: a byte is a function of its sequence number / stream offset. */
static inline __attribute__((always_inline)) uint8_t pat_rx(uint32_t seq)
{
	return (uint8_t)(seq ^ (seq >> 8) ^ (seq >> 19));
}

static inline __attribute__((always_inline)) uint8_t pat_tx(uint32_t off)
{
	return (uint8_t)(off * 7 + (off >> 9) + 0x5b);
}

/*
 * The byte loops over payload: left out of the coverage instrumentation
 * (they would dominate the run time and teach the fuzzer nothing).
 */
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))

/* What the peer sends at sequence number @seq onwards. */
NO_COVERAGE static inline void fill_rx(uint8_t *p, uint32_t seq, size_t n)
{
	for (size_t k = 0; k < n; k++)
		p[k] = pat_rx(seq + (uint32_t)k);
}

NO_COVERAGE static inline bool is_rx(const uint8_t *p, uint32_t seq, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (p[k] != pat_rx(seq + (uint32_t)k))
			return false;
	return true;
}

/* What the application writes at stream offset @off onwards. */
NO_COVERAGE static inline void fill_tx(uint8_t *p, uint32_t off, size_t n)
{
	for (size_t k = 0; k < n; k++)
		p[k] = pat_tx(off + (uint32_t)k);
}

NO_COVERAGE static inline bool is_tx(const uint8_t *p, uint32_t off, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (p[k] != pat_tx(off + (uint32_t)k))
			return false;
	return true;
}

#endif
