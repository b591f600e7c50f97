/*
 * test_knb_flow.c - knb's flow engine without any stack: the handshake
 * (accepted, another version, not knb at all), RPC accounting (budgets,
 * requests started, responses completed, latency samples only in the
 * window, draining; when the clock is needed), the echo and bulk budgets,
 * and the plans per pattern.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "knb.h"

static struct knb_meter *meter(void)
{
	struct knb_meter *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	knb_hist_init(&m->hist);
	return m;
}

/* Move the handshake bytes of @from into @to. @return what hs_received returned. */
static int deliver(struct knb_flow *from, struct knb_flow *to)
{
	const uint8_t *p;
	uint32_t n = knb_flow_hs_pending(from, &p);
	int rc = knb_flow_hs_received(to, p, n);

	knb_flow_hs_sent(from, n);
	return rc;
}

static void handshake(struct knb_flow *cl, struct knb_flow *sv, const struct knb_flow_spec *spec,
		      struct knb_meter *mc, struct knb_meter *ms)
{
	knb_flow_client(cl, spec, 3, KNB_VERSION, mc);
	knb_flow_server(sv, 1, 2, KNB_VERSION, ms);
	assert_int_equal(deliver(cl, sv), KNB_HELLO_LEN);
	assert_true(sv->ready);
	assert_int_equal(deliver(sv, cl), KNB_ACK_LEN);
	assert_true(cl->ready);
}

static void test_handshake(void **state)
{
	struct knb_flow_spec spec = {
	    .kind = KNB_FLOW_RPC, .server_thread = 1, .msg_size = 4096, .iodepth = 8};
	struct knb_meter *mc = meter(), *ms = meter();
	struct knb_flow *cl = calloc(2, sizeof(*cl)), *sv = cl + 1;

	(void)state;
	knb_flow_client(cl, &spec, 3, KNB_VERSION, mc);
	assert_int_equal(knb_flow_tx_budget(cl), 0); /* nothing before the ack */
	handshake(cl, sv, &spec, mc, ms);
	assert_int_equal(sv->kind, KNB_FLOW_RPC);
	assert_int_equal(sv->msg_size, 4096);
	assert_int_equal(sv->iodepth, 8);
	assert_int_equal(sv->client_thread, 3);
	assert_int_equal(cl->server_threads, 2);
	assert_int_equal(knb_flow_tx_budget(cl), 8 * 4096);
	free(cl);
	free(mc);
	free(ms);
}

/* Another version: the server says so in its ack and closes; the client reports both numbers. */
static void test_version_mismatch(void **state)
{
	struct knb_flow_spec spec = {.kind = KNB_FLOW_RPC, .msg_size = 64, .iodepth = 1};
	struct knb_meter *m = meter();
	struct knb_flow *cl = calloc(2, sizeof(*cl)), *sv = cl + 1;

	(void)state;
	knb_flow_client(cl, &spec, 0, 2, m);
	knb_flow_server(sv, 0, 1, KNB_VERSION, m);
	assert_int_equal(deliver(cl, sv), KNB_HELLO_LEN);
	assert_false(sv->ready);
	assert_true(sv->close_after_hs);
	assert_non_null(strstr(sv->error, "version 2, this server 1"));
	assert_int_equal(deliver(sv, cl), -1);
	assert_false(cl->ready);
	assert_non_null(strstr(cl->error, "protocol version 1, this client 2"));
	free(cl);
	free(m);
}

/* Not a knb client: no ack at all; a bad ack: the client says the peer is no knb server. */
static void test_not_knb(void **state)
{
	struct knb_flow_spec spec = {.kind = KNB_FLOW_UP, .msg_size = 64, .iodepth = 1};
	uint8_t junk[KNB_HELLO_LEN];
	struct knb_meter *m = meter();
	struct knb_flow *cl = calloc(2, sizeof(*cl)), *sv = cl + 1;

	(void)state;
	memset(junk, 'G', sizeof(junk));
	knb_flow_server(sv, 0, 1, KNB_VERSION, m);
	assert_int_equal(knb_flow_hs_received(sv, junk, 10), 10); /* waits for the rest */
	assert_int_equal(knb_flow_hs_received(sv, junk, sizeof(junk)), -1);
	assert_int_equal(knb_flow_hs_pending(sv, &(const uint8_t *){NULL}), 0);
	knb_flow_client(cl, &spec, 0, KNB_VERSION, m);
	assert_int_equal(knb_flow_hs_received(cl, junk, KNB_ACK_LEN), -1);
	assert_non_null(strstr(cl->error, "not a knb server"));
	free(cl);
	free(m);
}

/* RPC: iodepth bounds what is sent; responses complete in order; samples only in the window. */
static void test_rpc_accounting(void **state)
{
	struct knb_flow_spec spec = {.kind = KNB_FLOW_RPC, .msg_size = 100, .iodepth = 2};
	struct knb_meter *mc = meter(), *ms = meter();
	struct knb_flow *cl = calloc(2, sizeof(*cl)), *sv = cl + 1;

	(void)state;
	handshake(cl, sv, &spec, mc, ms);
	assert_int_equal(knb_flow_tx_budget(cl), 200);
	knb_flow_on_tx(cl, 150, 1000); /* request 0 whole, request 1 begun */
	assert_int_equal(cl->requests, 2);
	assert_int_equal(knb_flow_tx_budget(cl), 50);
	knb_flow_on_tx(cl, 50, 1500);
	assert_int_equal(knb_flow_tx_budget(cl), 0);
	/* The server echoes what came, no more. */
	knb_flow_on_rx(sv, 120, 2000);
	assert_int_equal(knb_flow_tx_budget(sv), 120);
	assert_int_equal(ms->requests_total, 1);
	knb_flow_on_tx(sv, 120, 2100);
	assert_int_equal(ms->responses_total, 1);
	/* Response 0 before the window: counted in the total, not sampled. */
	knb_flow_on_rx(cl, 100, 5000);
	assert_int_equal(cl->responses, 1);
	assert_int_equal(knb_hist_count(&mc->hist), 0);
	assert_int_equal(knb_flow_tx_budget(cl), 100); /* room for request 2 */
	mc->on = true;
	knb_flow_on_rx(cl, 100, 9000); /* response 1: 9000 - 1000 */
	assert_int_equal(knb_hist_count(&mc->hist), 1);
	assert_int_equal(knb_hist_max(&mc->hist), 8000);
	assert_int_equal(mc->responses, 1);
	/* Stopping: no new requests; drained once every started one is answered. */
	cl->stopping = true;
	assert_int_equal(knb_flow_tx_budget(cl), 0);
	assert_true(knb_flow_drained(cl));
	assert_int_equal(mc->requests_total, mc->responses_total);
	/* More back than was sent: refused, nothing counted (it would complete later requests). */
	assert_int_equal(knb_flow_on_rx(cl, 1, 9500), -EPROTO);
	assert_non_null(strstr(cl->error, "1 bytes more than the requests it was sent"));
	assert_int_equal(cl->rx_bytes, 200);
	assert_int_equal(mc->responses, 1);
	free(cl);
	free(mc);
	free(ms);
}

/*
 * The time is needed only when a client's request starts or a measured
 * response completes: the calls in between may skip the clock.
 */
static void test_needs_time(void **state)
{
	struct knb_flow_spec spec = {.kind = KNB_FLOW_RPC, .msg_size = 100, .iodepth = 2};
	struct knb_meter *mc = meter(), *ms = meter();
	struct knb_flow *cl = calloc(2, sizeof(*cl)), *sv = cl + 1;

	(void)state;
	handshake(cl, sv, &spec, mc, ms);
	assert_true(knb_flow_needs_time(cl, 1, true)); /* request 0 starts */
	knb_flow_on_tx(cl, 60, 1000);
	assert_false(knb_flow_needs_time(cl, 40, true)); /* the rest of request 0 */
	assert_true(knb_flow_needs_time(cl, 41, true));	 /* and request 1's first byte */
	knb_flow_on_tx(cl, 140, 1000);
	/* The server measures nothing. */
	assert_false(knb_flow_needs_time(sv, 100, false));
	assert_false(knb_flow_needs_time(sv, 100, true));
	/* Outside the window a response completing takes no sample: no time. */
	assert_false(knb_flow_needs_time(cl, 100, false));
	mc->on = true;
	assert_false(knb_flow_needs_time(cl, 99, false));
	assert_true(knb_flow_needs_time(cl, 100, false));
	knb_flow_on_rx(cl, 99, 0);
	assert_true(knb_flow_needs_time(cl, 1, false));
	knb_flow_on_rx(cl, 1, 7000);
	assert_int_equal(knb_hist_max(&mc->hist), 6000); /* 7000 - 1000 */
	free(cl);
	free(mc);
	free(ms);
}

static void test_bulk_budgets(void **state)
{
	struct knb_flow_spec up = {.kind = KNB_FLOW_UP, .msg_size = 65536, .iodepth = 1};
	struct knb_flow_spec down = {.kind = KNB_FLOW_DOWN, .msg_size = 65536, .iodepth = 1};
	struct knb_meter *mc = meter(), *ms = meter();
	struct knb_flow *cl = calloc(2, sizeof(*cl)), *sv = cl + 1;

	(void)state;
	handshake(cl, sv, &up, mc, ms);
	assert_int_equal(knb_flow_tx_budget(cl), UINT64_MAX);
	assert_int_equal(knb_flow_tx_budget(sv), 0);
	cl->stopping = true;
	assert_int_equal(knb_flow_tx_budget(cl), 0);
	handshake(cl, sv, &down, mc, ms);
	assert_int_equal(knb_flow_tx_budget(cl), 0);
	assert_int_equal(knb_flow_tx_budget(sv), UINT64_MAX);
	free(cl);
	free(mc);
	free(ms);
}

static void test_plans(void **state)
{
	struct knb_config c = {.server_threads = 2, .flows = 3, .msg_size = 4096, .iodepth = 4};
	struct knb_flow_spec f[64];
	unsigned n, up = 0, down = 0, rpc = 0;

	(void)state;
	c.pattern = KNB_PATTERN_RPC;
	assert_int_equal(knb_plan(&c, 0, f, 64), 6);
	assert_int_equal(f[5].server_thread, 1);
	assert_int_equal(f[5].iodepth, 4);
	c.pattern = KNB_PATTERN_ALL_TO_ALL;
	n = knb_plan(&c, 0, f, 64);
	for (unsigned i = 0; i < n; i++) {
		up += f[i].kind == KNB_FLOW_UP;
		down += f[i].kind == KNB_FLOW_DOWN;
	}
	assert_int_equal(up, 6);
	assert_int_equal(down, 6);
	c.pattern = KNB_PATTERN_INCAST;
	n = knb_plan(&c, 0, f, 64);
	assert_int_equal(n, 3);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(f[i].server_thread, 0);
	c.pattern = KNB_PATTERN_MIXED;
	n = knb_plan(&c, 0, f, 64);
	for (unsigned i = 0; i < n; i++)
		rpc += f[i].kind == KNB_FLOW_RPC;
	assert_int_equal(n, 4);
	assert_int_equal(rpc, 1);
	assert_int_equal(knb_plan(&c, 0, f, 2), 2); /* bounded by the room given */
	assert_string_equal(knb_pattern_name(KNB_PATTERN_ALL_TO_ALL), "all-to-all");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_handshake),  cmocka_unit_test(test_version_mismatch),
	    cmocka_unit_test(test_not_knb),    cmocka_unit_test(test_rpc_accounting),
	    cmocka_unit_test(test_needs_time), cmocka_unit_test(test_bulk_budgets),
	    cmocka_unit_test(test_plans),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
