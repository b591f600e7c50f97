/*
 * fuzz_check.h - the invariant check of the libFuzzer targets that do not
 * parse packets (fuzz_netlink, fuzz_options) and so need neither DPDK nor
 * the rest of fuzz_common.h. FUZZ_CHECK here is the same as there.
 */
#ifndef LUNAR_TESTS_FUZZ_CHECK_H
#define LUNAR_TESTS_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* abort() (a libFuzzer crash) with the failed condition when an invariant breaks. */
#ifndef FUZZ_CHECK
#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__,       \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)
#endif

#endif
