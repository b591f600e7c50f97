/*
 * zbuf_test_util.h - shared helpers of the mem/ unit tests: a misuse handler
 * that records the message and jumps back into the test, and region setup.
 */
#ifndef LUNAR_TEST_ZBUF_UTIL_H
#define LUNAR_TEST_ZBUF_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mem/zbuf.h"

static jmp_buf misuse_jmp;
static char misuse_msg[256];
static int misuse_count;

static inline void record_misuse(const char *msg)
{
	snprintf(misuse_msg, sizeof(misuse_msg), "%s", msg);
	misuse_count++;
	longjmp(misuse_jmp, 1);
}

/*
 * Run @stmt, which must report misuse whose message contains @what. The
 * handler longjmps back here, so the test goes on after the misuse.
 */
#define EXPECT_MISUSE(stmt, what)                                                                  \
	do {                                                                                       \
		misuse_msg[0] = '\0';                                                              \
		zbuf_set_misuse_handler(record_misuse);                                            \
		if (setjmp(misuse_jmp) == 0) {                                                     \
			stmt;                                                                      \
			zbuf_set_misuse_handler(NULL);                                             \
			fail_msg("no misuse reported by %s (wanted \"%s\")", #stmt, what);         \
		}                                                                                  \
		zbuf_set_misuse_handler(NULL);                                                     \
		if (strstr(misuse_msg, what) == NULL || strncmp(misuse_msg, "zbuf: ", 6))          \
			fail_msg("%s reported \"%s\", wanted \"zbuf: %s at <ptr>\"", #stmt,        \
				 misuse_msg, what);                                                \
	} while (0)

/* Zone info of the zone holding @p (the test asserts it exists). */
static inline struct zbuf_zone_info zone_info_of(const void *p)
{
	struct zbuf_zone_info zi;
	struct zbuf_zone_info z0;

	assert_int_equal(zbuf_zone_info(0, &z0), 0);
	assert_int_equal(
	    zbuf_zone_info(
		(unsigned)(((const char *)p - (const char *)z0.start) >> ZBUF_ZONE_SHIFT), &zi),
	    0);
	return zi;
}

#endif
