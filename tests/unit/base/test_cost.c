/*
 * test_cost.c - the per-thread CPU account (base/cost.h): time goes to the
 * category current when it passes, relabelling moves it, nothing is
 * counted while off, and the percentages add up.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "base/cost.h"

static void spin(uint64_t cycles)
{
	uint64_t end = rte_rdtsc() + cycles;

	while (rte_rdtsc() < end)
		;
}

static void test_time_goes_to_the_current_category(void **state)
{
	double pct[LUNAR_COST_N];
	enum lunar_cost_cat prev;

	(void)state;
	lunar_cost_start(true);
	spin(1000000); /* app */
	prev = lunar_cost_enter(LUNAR_COST_PROTOCOL);
	assert_int_equal(prev, LUNAR_COST_APP);
	spin(3000000);
	lunar_cost_leave(prev);
	lunar_cost_stop();
	lunar_cost_percent(pct, LUNAR_COST_N);
	assert_true(pct[LUNAR_COST_PROTOCOL] > 50);
	assert_true(pct[LUNAR_COST_APP] > 5 && pct[LUNAR_COST_APP] < 50);
	assert_true(pct[LUNAR_COST_COPY] == 0);
	{
		double sum = 0;

		for (unsigned i = 0; i < LUNAR_COST_N; i++)
			sum += pct[i];
		assert_true(sum > 99.99 && sum < 100.01);
	}
}

/* A poll that found nothing: the time since the last change becomes idle. */
static void test_relabel(void **state)
{
	double pct[LUNAR_COST_N];
	enum lunar_cost_cat prev;

	(void)state;
	lunar_cost_start(true);
	prev = lunar_cost_enter(LUNAR_COST_RX);
	spin(2000000);
	lunar_cost_relabel(LUNAR_COST_IDLE);
	lunar_cost_leave(prev);
	lunar_cost_stop();
	lunar_cost_percent(pct, LUNAR_COST_N);
	assert_true(pct[LUNAR_COST_IDLE] > 90);
	assert_true(pct[LUNAR_COST_RX] == 0);
}

/* Off: categories still nest correctly, nothing is counted. */
static void test_off_counts_nothing(void **state)
{
	double pct[LUNAR_COST_N];
	enum lunar_cost_cat prev;

	(void)state;
	lunar_cost_start(false);
	prev = lunar_cost_enter(LUNAR_COST_TX);
	spin(100000);
	assert_int_equal(lunar_cost_enter(LUNAR_COST_COPY), LUNAR_COST_TX);
	lunar_cost_leave(LUNAR_COST_TX);
	lunar_cost_leave(prev);
	lunar_cost_stop();
	lunar_cost_percent(pct, LUNAR_COST_N);
	for (unsigned i = 0; i < LUNAR_COST_N; i++)
		assert_true(pct[i] == 0);
	assert_string_equal(lunar_cost_name(LUNAR_COST_BUFFERS), "buffers");
	assert_true(lunar_thread_cpu_ns() > 0);
}

/* Every category's printed name, idle's included; a value past them is "?". */
static void test_names(void **state)
{
	static const char *const want[LUNAR_COST_N] = {"rx",	 "protocol", "app",  "tx",
						       "timers", "buffers",  "copy", "idle"};

	(void)state;
	for (unsigned i = 0; i < LUNAR_COST_N; i++)
		assert_string_equal(lunar_cost_name((enum lunar_cost_cat)i), want[i]);
	assert_string_equal(lunar_cost_name(LUNAR_COST_N), "?");
	assert_string_equal(lunar_cost_name((enum lunar_cost_cat) - 1), "?");
}

/* Stopping charges the interval still open to the category current then. */
static void test_stop_charges_the_open_interval(void **state)
{
	double pct[LUNAR_COST_N];

	(void)state;
	lunar_cost_start(true);
	lunar_cost_enter(LUNAR_COST_COPY);
	spin(2000000);
	lunar_cost_stop(); /* copy still current */
	lunar_cost_percent(pct, LUNAR_COST_N);
	assert_true(pct[LUNAR_COST_COPY] > 90);
	lunar_cost_enter(LUNAR_COST_APP);
}

/* Only the @n percentages asked for are written. */
static void test_percent_writes_only_n(void **state)
{
	double pct[LUNAR_COST_N + 1];

	(void)state;
	lunar_cost_start(true);
	spin(100000);
	lunar_cost_stop();
	for (unsigned i = 0; i <= LUNAR_COST_N; i++)
		pct[i] = -1;
	lunar_cost_percent(pct, 3);
	assert_true(pct[LUNAR_COST_APP] > 99.99);
	for (unsigned i = 3; i <= LUNAR_COST_N; i++)
		assert_true(pct[i] == -1);
	lunar_cost_percent(pct, LUNAR_COST_N + 1); /* more than there are: LUNAR_COST_N */
	assert_true(pct[LUNAR_COST_N] == -1);
}

static uint64_t clock_ns(void)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * lunar_thread_cpu_ns() is this thread's CPU clock in nanoseconds: it lies
 * between two readings of the clock taken around it. The thread first
 * uses a second of CPU, so that whole seconds count too.
 */
static void test_thread_cpu_ns(void **state)
{
	struct timespec ts;
	uint64_t before, got, after;

	(void)state;
	do
		spin(10000000);
	while (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 && ts.tv_sec < 1);
	before = clock_ns();
	got = lunar_thread_cpu_ns();
	after = clock_ns();
	assert_true(before >= 1000000000ull);
	assert_true(got >= before && got <= after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_time_goes_to_the_current_category),
	    cmocka_unit_test(test_relabel),
	    cmocka_unit_test(test_off_counts_nothing),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_stop_charges_the_open_interval),
	    cmocka_unit_test(test_percent_writes_only_n),
	    cmocka_unit_test(test_thread_cpu_ns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
