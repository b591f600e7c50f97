/*
 * test_win_min.c - the windowed minimum filter (base/win_min.h): it
 * follows a falling stream at once, forgets a minimum older than the
 * window, and then offers the best of what is left, not the newest.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/win_min.h"

#define WIN 100

static void test_empty_then_first(void **state)
{
	struct win_min m;

	(void)state;
	win_min_init(&m);
	assert_true(win_min_get(&m) == UINT64_MAX);
	assert_int_equal(win_min_update(&m, WIN, 5, 40), 40);
	assert_int_equal(win_min_get(&m), 40);
}

static void test_lower_wins_higher_waits(void **state)
{
	struct win_min m;

	(void)state;
	win_min_init(&m);
	win_min_update(&m, WIN, 0, 50);
	assert_int_equal(win_min_update(&m, WIN, 10, 70), 50); /* higher: the minimum stays */
	assert_int_equal(win_min_update(&m, WIN, 20, 30), 30); /* lower: taken at once */
	/* 90 later, 30 still in the window */
	assert_int_equal(win_min_update(&m, WIN, 110, 90), 30);
}

/* When the best ages out, the best of the later samples takes over, not the newest. */
static void test_expiry_offers_the_next_best(void **state)
{
	struct win_min m;

	(void)state;
	win_min_init(&m);
	win_min_update(&m, WIN, 0, 10);
	win_min_update(&m, WIN, 30, 20); /* past a quarter: the second choice */
	win_min_update(&m, WIN, 60, 40); /* past a half: the third choice */
	win_min_update(&m, WIN, 80, 35); /* better than the third: replaces it */
	assert_int_equal(win_min_get(&m), 10);
	assert_int_equal(win_min_update(&m, WIN, 101, 60), 20); /* 10 is 101 old */
	assert_int_equal(win_min_update(&m, WIN, 131, 60), 35); /* 20 is 101 old */
}

/* A path whose value rose for good: after a window, only the new level is left. */
static void test_rise_is_believed_after_a_window(void **state)
{
	struct win_min m;
	uint64_t t;

	(void)state;
	win_min_init(&m);
	for (t = 0; t < 50; t += 5)
		win_min_update(&m, WIN, t, 10);
	for (; t <= 45 + WIN; t += 5)
		assert_int_equal(win_min_update(&m, WIN, t, 200 + t % 7), 10);
	for (; t < 400; t += 5)
		win_min_update(&m, WIN, t, 200 + t % 7);
	assert_true(win_min_get(&m) >= 200);
	assert_true(win_min_get(&m) <= 206);
	/* One sample far later than the window alone is the minimum. */
	assert_int_equal(win_min_update(&m, WIN, 10000, 500), 500);
}

/*
 * The best and the next best can age out in the same update (a gap in the
 * samples): the third choice is then the minimum, never a sample older
 * than the window (Linux's win_minmax promotes twice the same way).
 */
static void test_two_age_out_at_once(void **state)
{
	struct win_min m;

	(void)state;
	win_min_init(&m);
	win_min_update(&m, WIN, 0, 10);
	win_min_update(&m, WIN, 30, 20); /* past a quarter: the second choice */
	win_min_update(&m, WIN, 60, 40); /* past a half: the third choice */
	/* 10 is 135 old, 20 is 105 old: both out, 40 (75 old) is the best left. */
	assert_int_equal(win_min_update(&m, WIN, 135, 50), 40);
	assert_int_equal(win_min_get(&m), 40);
}

/*
 * The third choice waits for half the window (Nichols' filter, Linux's
 * win_minmax): a sample only a quarter in (40) is not taken for it, so
 * the one past the half (31) is, and it is offered as the minimum as
 * long as it is in the window. A third choice taken at the quarter would
 * age out first and leave only the newest samples.
 */
static void test_third_choice_from_the_half(void **state)
{
	struct win_min m;
	uint64_t t;

	(void)state;
	win_min_init(&m);
	win_min_update(&m, WIN, 0, 10);
	win_min_update(&m, WIN, 30, 20); /* past a quarter: the second choice */
	win_min_update(&m, WIN, 40, 30); /* not yet half: not the third choice */
	win_min_update(&m, WIN, 60, 31); /* past a half: the third choice */
	for (t = 70; t <= 90; t += 10)
		win_min_update(&m, WIN, t, 100);
	assert_int_equal(win_min_update(&m, WIN, 101, 100), 20); /* 10 aged out */
	win_min_update(&m, WIN, 131, 100);			 /* 20 aged out */
	/* 30 (t = 40) aged out too; 31 (t = 60) is 81 old: the minimum. */
	assert_int_equal(win_min_update(&m, WIN, 141, 100), 31);
	assert_int_equal(win_min_update(&m, WIN, 161, 100), 100); /* 31 aged out */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty_then_first),
	    cmocka_unit_test(test_lower_wins_higher_waits),
	    cmocka_unit_test(test_expiry_offers_the_next_best),
	    cmocka_unit_test(test_rise_is_believed_after_a_window),
	    cmocka_unit_test(test_two_age_out_at_once),
	    cmocka_unit_test(test_third_choice_from_the_half),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
