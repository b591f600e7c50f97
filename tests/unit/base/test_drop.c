/*
 * test_drop.c - drop reasons' names and descriptions (base/drop.h): every
 * reason has both, as drop_reasons.def gives them, the name the short
 * identifier and the description the sentence; out of range is "?".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/drop.h"

static const struct {
	enum lunar_drop reason;
	const char *name, *desc;
} reasons[] = {
#define X(name, desc) {LUNAR_DROP_##name, #name, desc},
#include "base/drop_reasons.def"
#undef X
};

/* Each reason's name and description are the ones drop_reasons.def pairs with it. */
static void test_names_and_descriptions(void **state)
{
	(void)state;
	assert_int_equal(sizeof(reasons) / sizeof(reasons[0]), LUNAR_DROP_COUNT - 1);
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		assert_string_equal(lunar_drop_name(reasons[i].reason), reasons[i].name);
		assert_string_equal(lunar_drop_desc(reasons[i].reason), reasons[i].desc);
	}
	assert_string_equal(lunar_drop_name(LUNAR_DROP_NONE), "NONE");
	assert_string_equal(lunar_drop_desc(LUNAR_DROP_NONE), "not dropped");
	assert_string_equal(lunar_drop_name(LUNAR_DROP_ETH_SHORT), "ETH_SHORT");
	assert_string_equal(lunar_drop_desc(LUNAR_DROP_ETH_SHORT),
			    "frame shorter than an Ethernet header");
}

/* A value past the last reason has neither. */
static void test_out_of_range(void **state)
{
	(void)state;
	assert_string_equal(lunar_drop_name(LUNAR_DROP_COUNT), "?");
	assert_string_equal(lunar_drop_desc(LUNAR_DROP_COUNT), "?");
	assert_string_equal(lunar_drop_name((enum lunar_drop) - 1), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names_and_descriptions),
	    cmocka_unit_test(test_out_of_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
