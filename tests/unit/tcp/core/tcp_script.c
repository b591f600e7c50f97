/* tcp_script.c - fixtures and helpers for the TCP core's packet-script tests. */
#include "tcp_script.h"

#include <string.h>

int script_group_setup(void **state)
{
	struct zbuf_config zc = {.backend = ZBUF_BACKEND_MMAP};

	(void)state;
	for (int i = 0; i < ZBUF_CLASS_COUNT; i++)
		zc.zones[i] = 8;
	return zbuf_init(&zc);
}

int script_group_teardown(void **state)
{
	(void)state;
	zbuf_fini();
	return 0;
}

void script_config(struct tcp_config *cfg)
{
	tcp_config_default(cfg);
	cfg->nodelay = true;
	cfg->rcv_buf = 256 * 1024;
	cfg->snd_buf = 256 * 1024;
	/*
	 * The scripts test RFC 5681/6582/6298 recovery, segment by segment; the
	 * SACK scoreboard and RACK-TLP (on by default) have their own scripts
	 * in test_tcp_rack.c, which turn this back on.
	 */
	cfg->rack = false;
}

static void reset_out(struct script *s)
{
	if (s->next == s->out.n)
		s->out.n = s->next = 0;
}

static const struct fixture_opts default_opts = {
    .ts = true,
    .sack = true,
    .ws = true,
    .peer_wscale = 7,
    .peer_mss = 1460,
    .peer_window = 65535,
};

struct fixture_opts fixture_opts_with(struct tcp_config *cfg)
{
	struct fixture_opts o = default_opts;

	o.cfg = cfg;
	return o;
}

void prime_window(struct script *s)
{
	seg(s, ACK, IRS + 1, ISS + 1, 65535, 0);
	expect_nothing(s);
}

void fixture_closed(struct script *s, const struct tcp_config *cfg)
{
	struct tcp_config def;
	struct tcp_4tuple t = {
	    .laddr = 0x0a000001, .raddr = 0x0a000002, .lport = 61440, .rport = 80};

	memset(s, 0, sizeof(*s));
	if (!cfg) {
		script_config(&def);
		cfg = &def;
	}
	s->now = 1000 * MS;
	s->peer_ts = 777;
	s->zbuf_base = zbuf_in_use(); /* a failed test's leak must not fail the next one */
	assert_int_equal(tcp_conn_init(&s->c, cfg, &t, ISS, s->now), 0);
}

static void peer_syn_options(struct script *s, const struct fixture_opts *o,
			     struct tcp_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->has_mss = true;
	opts->mss = o->peer_mss ? o->peer_mss : 1460;
	if (o->ws) {
		opts->has_wscale = true;
		opts->wscale = o->peer_wscale;
	}
	opts->sack_permitted = o->sack;
	if (o->ts) {
		opts->has_ts = true;
		opts->ts_val = s->peer_ts;
	}
	s->peer_ts_on = o->ts;
}

void fixture_syn_sent(struct script *s, const struct fixture_opts *o)
{
	fixture_closed(s, o && o->cfg ? o->cfg : NULL);
	assert_int_equal(tcp_connect(&s->c, s->now, &s->out), 0);
	expect_tx(s, SYN, ISS, 0, 0);
	assert_int_equal(s->c.state, TCP_SYN_SENT);
}

void fixture_established(struct script *s, const struct fixture_opts *o)
{
	struct tcp_options opts;

	if (!o)
		o = &default_opts;
	fixture_syn_sent(s, o);
	peer_syn_options(s, o, &opts);
	opts.ts_ecr = s->out.seg[0].opts.ts_val;
	seg_opts(s, SYN | ACK, IRS, ISS + 1, o->peer_window, 0, &opts);
	expect_tx(s, ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(s->c.state, TCP_ESTABLISHED);
	assert_true(s->c.events & TCP_EV_CONNECTED);
	s->c.events = 0;
}

void fixture_syn_received(struct script *s, const struct fixture_opts *o)
{
	struct tcp_options opts;

	if (!o)
		o = &default_opts;
	fixture_closed(s, o->cfg);
	tcp_listen(&s->c);
	peer_syn_options(s, o, &opts);
	seg_opts(s, SYN, IRS, 0, o->peer_window, 0, &opts);
	expect_tx(s, SYN | ACK, ISS, IRS + 1, 0);
	assert_int_equal(s->c.state, TCP_SYN_RECEIVED);
}

void fixture_fin_wait_1(struct script *s, const struct fixture_opts *o)
{
	fixture_established(s, o);
	tcp_close(&s->c, s->now, &s->out);
	expect_tx(s, FIN | ACK, ISS + 1, IRS + 1, 0);
	assert_int_equal(s->c.state, TCP_FIN_WAIT_1);
}

void fixture_fin_wait_2(struct script *s, const struct fixture_opts *o)
{
	fixture_fin_wait_1(s, o);
	seg(s, ACK, IRS + 1, ISS + 2, 65535, 0);
	expect_nothing(s);
	assert_int_equal(s->c.state, TCP_FIN_WAIT_2);
}

void fixture_close_wait(struct script *s, const struct fixture_opts *o)
{
	fixture_established(s, o);
	seg(s, FIN | ACK, IRS + 1, ISS + 1, 65535, 0);
	expect_tx(s, ACK, ISS + 1, IRS + 2, 0);
	assert_int_equal(s->c.state, TCP_CLOSE_WAIT);
	assert_true(s->c.events & TCP_EV_EOF);
	s->c.events = 0;
}

void fixture_closing(struct script *s, const struct fixture_opts *o)
{
	fixture_fin_wait_1(s, o);
	/* Simultaneous close: the peer's FIN crosses ours (RFC 9293 3.6, figure 13). */
	seg(s, FIN | ACK, IRS + 1, ISS + 1, 65535, 0);
	expect_tx(s, ACK, ISS + 2, IRS + 2, 0);
	assert_int_equal(s->c.state, TCP_CLOSING);
}

void fixture_last_ack(struct script *s, const struct fixture_opts *o)
{
	fixture_close_wait(s, o);
	tcp_close(&s->c, s->now, &s->out);
	expect_tx(s, FIN | ACK, ISS + 1, IRS + 2, 0);
	assert_int_equal(s->c.state, TCP_LAST_ACK);
}

void fixture_time_wait(struct script *s, const struct fixture_opts *o)
{
	fixture_fin_wait_2(s, o);
	seg(s, FIN | ACK, IRS + 1, ISS + 2, 65535, 0);
	expect_tx(s, ACK, ISS + 2, IRS + 2, 0);
	assert_int_equal(s->c.state, TCP_TIME_WAIT);
}

void script_end(struct script *s)
{
	tcp_conn_fini(&s->c);
	assert_int_equal(zbuf_in_use(), s->zbuf_base);
}

void opts_sack(struct tcp_options *o, unsigned n, const uint32_t *blocks)
{
	for (unsigned i = 0; i < n; i++) {
		o->sack[i].left = blocks[2 * i];
		o->sack[i].right = blocks[2 * i + 1];
	}
	o->sack_count = (uint8_t)n;
}

void seg_opts(struct script *s, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd,
	      uint32_t len, const struct tcp_options *opts)
{
	struct tcp_repr r = {.sport = 80,
			     .dport = 61440,
			     .seq = seq,
			     .ack = ack,
			     .flags = flags,
			     .window = wnd,
			     .hdr_len = 20,
			     .ecn = s->peer_ecn};
	uint8_t *p = NULL;

	if (opts)
		r.opts = *opts;
	else if (s->peer_ts_on) {
		r.opts.has_ts = true;
		r.opts.ts_val = s->peer_ts;
		r.opts.ts_ecr = s->out.n ? s->out.seg[s->out.n - 1].opts.ts_val : 0;
	}
	if (len) {
		p = zbuf_alloc(len);
		assert_non_null(p);
		assert_true(zbuf_take(p)); /* a received frame is lunar's, not the application's */
		for (uint32_t i = 0; i < len; i++)
			p[i] = (uint8_t)(seq + (flags & SYN ? 1 : 0) + i);
		r.payload = p;
		r.payload_len = len;
	}
	reset_out(s);
	tcp_input(&s->c, &r, s->now, &s->out);
	if (p)
		zbuf_drop(p); /* the connection took its own reference if it kept the data */
}

void seg(struct script *s, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd, uint32_t len)
{
	seg_opts(s, flags, seq, ack, wnd, len, NULL);
}

void advance(struct script *s, uint64_t ns)
{
	uint64_t target = s->now + ns;

	for (;;) {
		uint64_t d = tcp_next_deadline(&s->c);

		if (d > target)
			break;
		if (d > s->now)
			s->now = d;
		reset_out(s);
		tcp_timer(&s->c, s->now, &s->out);
		if (tcp_next_deadline(&s->c) == d)
			break; /* a timer that does not move would loop forever: the test will see
				  it */
	}
	s->now = target;
	s->peer_ts += (uint32_t)(ns / MS);
}

int app_send(struct script *s, uint32_t len)
{
	uint8_t *p = zbuf_alloc(len);
	int rc;

	assert_non_null(p);
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)i;
	rc = tcp_send(&s->c, p, len);
	zbuf_unref(p);
	reset_out(s);
	tcp_output(&s->c, s->now, &s->out);
	return rc;
}

unsigned pending_tx(const struct script *s)
{
	return s->out.n - s->next;
}

const struct tcp_tx *take_tx(struct script *s)
{
	if (s->next >= s->out.n)
		fail_msg("expected a segment from the connection, but it sent nothing");
	return &s->out.seg[s->next++];
}

const struct tcp_tx *expect_tx(struct script *s, uint8_t flags, uint32_t seq, uint32_t ack,
			       uint32_t len)
{
	const struct tcp_tx *t = take_tx(s);

	if (t->flags != flags || t->seq != seq || ((flags & ACK) && t->ack != ack) || t->len != len)
		fail_msg("sent flags 0x%02x seq %u ack %u len %u; expected flags 0x%02x seq %u ack "
			 "%u len %u",
			 t->flags, t->seq, t->ack, t->len, flags, seq, ack, len);
	return t;
}

void expect_nothing(struct script *s)
{
	if (s->next < s->out.n) {
		const struct tcp_tx *t = &s->out.seg[s->next];

		fail_msg("expected no segment, but it sent flags 0x%02x seq %u ack %u len %u",
			 t->flags, t->seq, t->ack, t->len);
	}
}

/* ---- Helpers for test_tcp_states.c and test_tcp_rst_syn.c ---- */

void fixture_closed_iss(struct script *s, const struct tcp_config *cfg, uint32_t iss)
{
	struct tcp_config c;
	struct tcp_4tuple t;

	fixture_closed(s, cfg);
	c = s->c.cfg;
	t = s->c.tuple;
	tcp_conn_fini(&s->c);
	assert_int_equal(tcp_conn_init(&s->c, &c, &t, iss, s->now), 0);
}

void fixture_syn_received_active(struct script *s, const struct fixture_opts *o)
{
	struct tcp_options opts;

	if (!o)
		o = &default_opts;
	fixture_syn_sent(s, o);
	peer_syn_options(s, o, &opts);
	seg_opts(s, SYN, IRS, 0, o->peer_window, 0, &opts);
	expect_tx(s, SYN | ACK, ISS, IRS + 1, 0);
	assert_int_equal(s->c.state, TCP_SYN_RECEIVED);
}

void seg_ts(struct script *s, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd, uint32_t len,
	    uint32_t tsval)
{
	struct tcp_options o = {.has_ts = true, .ts_val = tsval};

	o.ts_ecr = s->out.n ? s->out.seg[s->out.n - 1].opts.ts_val : 0;
	seg_opts(s, flags, seq, ack, wnd, len, &o);
}

void app_close(struct script *s)
{
	reset_out(s);
	tcp_close(&s->c, s->now, &s->out);
}

void app_abort(struct script *s)
{
	reset_out(s);
	tcp_abort(&s->c, s->now, &s->out);
}

void drain_tx(struct script *s)
{
	s->next = s->out.n;
	reset_out(s);
}

uint32_t recv_all(struct script *s)
{
	struct tcp_slice sl[16];
	uint32_t total = 0;
	unsigned n;

	reset_out(s);
	while ((n = tcp_recv(&s->c, sl, 16, s->now, &s->out)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			for (uint32_t k = 0; k < sl[i].len; k++)
				assert_int_equal(sl[i].data[k], (uint8_t)(sl[i].seq + k));
			total += sl[i].len;
			zbuf_unref(sl[i].data);
		}
	}
	return total;
}

/* ---- Helpers for test_tcp_data.c, test_tcp_loss.c and test_tcp_window.c ---- */

void fixture_established_ex(struct script *s, const struct fixture_opts *o, uint32_t iss,
			    uint32_t irs, uint64_t syn_rtt_ns, bool peer_mss_option)
{
	struct tcp_config cfg;
	struct tcp_4tuple t;
	struct tcp_options opts;
	uint32_t syn_tsval;

	if (!o)
		o = &default_opts;
	fixture_closed(s, o->cfg);
	cfg = s->c.cfg;
	t = s->c.tuple;
	tcp_conn_fini(&s->c);
	assert_int_equal(tcp_conn_init(&s->c, &cfg, &t, iss, s->now), 0);
	reset_out(s);
	assert_int_equal(tcp_connect(&s->c, s->now, &s->out), 0);
	syn_tsval = expect_tx(s, SYN, iss, 0, 0)->opts.ts_val;
	/* The SYN's timer must not fire before the SYN-ACK comes. */
	assert_true(s->now + syn_rtt_ns < s->c.rto_at);
	advance(s, syn_rtt_ns);
	peer_syn_options(s, o, &opts);
	if (!peer_mss_option) {
		opts.has_mss = false;
		opts.mss = 0;
	}
	opts.ts_ecr = syn_tsval;
	seg_opts(s, SYN | ACK, irs, iss + 1, o->peer_window, 0, &opts);
	expect_tx(s, ACK, iss + 1, irs + 1, 0);
	assert_int_equal(s->c.state, TCP_ESTABLISHED);
	assert_true(s->c.events & TCP_EV_CONNECTED);
	s->c.events = 0;
}

void seg_data(struct script *s, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd,
	      const uint8_t *data, uint32_t len)
{
	struct tcp_repr r = {.sport = 80,
			     .dport = 61440,
			     .seq = seq,
			     .ack = ack,
			     .flags = flags,
			     .window = wnd,
			     .hdr_len = 20,
			     .payload = len ? data : NULL,
			     .payload_len = len,
			     .ecn = s->peer_ecn};

	if (s->peer_ts_on) {
		r.opts.has_ts = true;
		r.opts.ts_val = s->peer_ts;
		r.opts.ts_ecr = s->out.n ? s->out.seg[s->out.n - 1].opts.ts_val : 0;
	}
	reset_out(s);
	tcp_input(&s->c, &r, s->now, &s->out);
}

uint64_t advance_next(struct script *s)
{
	uint64_t d = tcp_next_deadline(&s->c), before = s->now;

	if (d == UINT64_MAX)
		fail_msg("advance_next: no timer is armed");
	advance(s, d > s->now ? d - s->now : 0);
	return s->now - before;
}

uint32_t recv_in_order(struct script *s, uint32_t *next_seq, unsigned max_slices)
{
	struct tcp_slice sl[16];
	uint32_t total = 0;
	unsigned taken = 0, n;

	for (;;) {
		unsigned want = 16;

		if (max_slices && max_slices - taken < want)
			want = max_slices - taken;
		if (!want)
			break;
		reset_out(s);
		n = tcp_recv(&s->c, sl, want, s->now, &s->out);
		if (!n)
			break;
		for (unsigned i = 0; i < n; i++) {
			if (sl[i].seq != *next_seq)
				fail_msg("received slice at seq %u, expected %u", sl[i].seq,
					 *next_seq);
			for (uint32_t k = 0; k < sl[i].len; k++)
				if (sl[i].data[k] != (uint8_t)(sl[i].seq + k))
					fail_msg("byte at seq %u is %u, expected %u", sl[i].seq + k,
						 sl[i].data[k], (uint8_t)(sl[i].seq + k));
			*next_seq += sl[i].len;
			total += sl[i].len;
			zbuf_unref(sl[i].data);
		}
		taken += n;
	}
	return total;
}
