/*
 * test_tcp_zerocopy.c - zero-copy send lifetimes (LUNA 6.2, Z-stack III):
 * the connection holds exactly one Zbuf reference per send of a buffer,
 * drops it only when the last byte of that send is acknowledged (not when
 * it is first sent, not on a partial ACK, not on a retransmission), and a
 * buffer sent on several connections (replication) is freed exactly once,
 * after the last of them is acknowledged and the application let go.
 */
#include "tcp_script.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "mem/zbuf.h"

static uint8_t *fill(uint32_t len)
{
	uint8_t *b = zbuf_alloc(len);

	assert_non_null(b);
	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)(ISS + 1 + i); /* the pattern the peer side checks against */
	return b;
}

static void test_single_send_released_on_last_ack(void **state)
{
	struct script s;
	uint64_t base;
	uint8_t *b;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	base = zbuf_in_use();
	b = fill(3000);
	assert_int_equal(tcp_send(&s.c, b, 3000), 3000);
	assert_int_equal(zbuf_refcnt(b), 2); /* the application's and the send buffer's */
	tcp_output(&s.c, s.now, &s.out);
	expect_tx(&s, ACK, ISS + 1, IRS + 1, 1448);
	expect_tx(&s, ACK, ISS + 1 + 1448, IRS + 1, 1448);
	expect_tx(&s, ACK | PSH, ISS + 1 + 2896, IRS + 1, 104);
	zbuf_unref(b); /* the application is done with it: only TCP holds it now */
	assert_int_equal(zbuf_refcnt(b), 1);
	/* A partial ACK frees nothing. */
	seg(&s, ACK, IRS + 1, ISS + 1 + 1448, 65535, 0);
	drain_tx(&s);
	assert_int_equal(zbuf_refcnt(b), 1);
	/* A retransmission takes no new reference. */
	advance(&s, 2000000000ull);
	assert_true(s.c.stats.retransmits > 0);
	drain_tx(&s);
	assert_int_equal(zbuf_refcnt(b), 1);
	assert_int_equal(zbuf_in_use(), base + 1);
	/* The last ACK frees it, exactly once. */
	seg(&s, ACK, IRS + 1, ISS + 1 + 3000, 65535, 0);
	drain_tx(&s);
	assert_int_equal(zbuf_in_use(), base);
	script_end(&s);
}

static void test_replicated_send_freed_after_last_connection(void **state)
{
	struct script a, c;
	uint64_t base;
	uint8_t *b;

	(void)state;
	fixture_established(&a, NULL);
	prime_window(&a);
	fixture_established(&c, NULL);
	prime_window(&c);
	base = zbuf_in_use();
	b = fill(1000);
	/* The same buffer to two replicas: one reference per connection. */
	assert_int_equal(tcp_send(&a.c, b, 1000), 1000);
	assert_int_equal(tcp_send(&c.c, b, 1000), 1000);
	assert_int_equal(zbuf_refcnt(b), 3);
	tcp_output(&a.c, a.now, &a.out);
	tcp_output(&c.c, c.now, &c.out);
	expect_tx(&a, ACK | PSH, ISS + 1, IRS + 1, 1000);
	expect_tx(&c, ACK | PSH, ISS + 1, IRS + 1, 1000);
	zbuf_unref(b);
	seg(&a, ACK, IRS + 1, ISS + 1001, 65535, 0);
	assert_int_equal(zbuf_refcnt(b), 1); /* replica c still needs it */
	assert_int_equal(zbuf_in_use(), base + 1);
	seg(&c, ACK, IRS + 1, ISS + 1001, 65535, 0);
	assert_int_equal(zbuf_in_use(), base);
	drain_tx(&a);
	drain_tx(&c);
	script_end(&a);
	script_end(&c);
}

/* An abort drops the send buffer's references at once: nothing waits for ACKs that never come. */
static void test_abort_releases_unacked(void **state)
{
	struct script s;
	uint64_t base;
	uint8_t *b;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	base = zbuf_in_use();
	b = fill(2000);
	assert_int_equal(tcp_send(&s.c, b, 2000), 2000);
	tcp_output(&s.c, s.now, &s.out);
	zbuf_unref(b);
	assert_int_equal(zbuf_in_use(), base + 1);
	app_abort(&s);
	drain_tx(&s);
	assert_int_equal(zbuf_in_use(), base);
	script_end(&s);
}

/* Bad input: memory that is not Zbuf, or a range past its object, is refused with -EFAULT. */
static void test_send_rejects_foreign_memory(void **state)
{
	static uint8_t not_zbuf[100];
	struct script s;
	uint8_t *b;

	(void)state;
	fixture_established(&s, NULL);
	prime_window(&s);
	assert_int_equal(tcp_send(&s.c, not_zbuf, sizeof(not_zbuf)), -EFAULT);
	b = zbuf_alloc(2048);
	assert_non_null(b);
	assert_int_equal(tcp_send(&s.c, b + 2000, (uint32_t)zbuf_obj_size(b)), -EFAULT);
	assert_int_equal(zbuf_refcnt(b), 1); /* nothing taken */
	assert_int_equal(tcp_send(&s.c, b, 100), 100);
	zbuf_unref(b);
	expect_nothing(&s);
	tcp_output(&s.c, s.now, &s.out);
	drain_tx(&s);
	seg(&s, ACK, IRS + 1, ISS + 101, 65535, 0);
	drain_tx(&s);
	script_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_single_send_released_on_last_ack),
	    cmocka_unit_test(test_replicated_send_freed_after_last_connection),
	    cmocka_unit_test(test_abort_releases_unacked),
	    cmocka_unit_test(test_send_rejects_foreign_memory),
	};

	return cmocka_run_group_tests_name("tcp/core_zerocopy", tests, script_group_setup,
					   script_group_teardown);
}
