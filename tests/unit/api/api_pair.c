/*
 * api_pair.c - fixtures of tests/unit/api over tcp_pair (see api_pair.h).
 */
#include "api_pair.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "mem/zbuf.h"

struct api_pair {
	struct tcp_pair p; /* first: tests take the state as a struct tcp_pair */
	uint64_t zbuf_baseline;
};

int api_setup(void **state)
{
	struct api_pair *a = calloc(1, sizeof(*a));

	if (!a)
		return -1;
	a->zbuf_baseline = zbuf_in_use();
	pair_stacks(&a->p, false);
	*state = a;
	return 0;
}

int api_teardown(void **state)
{
	struct api_pair *a = *state;

	pair_close(&a->p);
	assert_int_equal(zbuf_in_use(), a->zbuf_baseline);
	free(a);
	return 0;
}
