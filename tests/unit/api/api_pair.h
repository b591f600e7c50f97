/*
 * api_pair.h - the fixtures of tests/unit/api: two stacks back to back
 * (tests/unit/tcp/stack/tcp_pair.h) with nothing open, for tests that open
 * their own connections through the interfaces above the stack. Teardown
 * also asserts every Zbuf object the test allocated came back.
 */
#ifndef LUNAR_TEST_API_PAIR_H
#define LUNAR_TEST_API_PAIR_H

#include "tcp_pair.h"

int api_setup(void **state);
int api_teardown(void **state);

#endif
