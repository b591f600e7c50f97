/*
 * knb_flow.c - the flow engine (handshake, RPC accounting, bulk budgets)
 * and the plan of flows per pattern; no I/O here (see knb.h).
 */
#include "knb.h"

#include "base/cost.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const pattern_names[KNB_PATTERN_COUNT] = {
    [KNB_PATTERN_RPC] = "rpc",
    [KNB_PATTERN_STREAM] = "stream",
    [KNB_PATTERN_INCAST] = "incast",
    [KNB_PATTERN_OUTCAST] = "outcast",
    [KNB_PATTERN_ALL_TO_ALL] = "all-to-all",
    [KNB_PATTERN_MIXED] = "mixed",
};

const char *knb_pattern_name(enum knb_pattern p)
{
	return (unsigned)p < KNB_PATTERN_COUNT ? pattern_names[p] : "?";
}

/* ---- plan ---- */

static unsigned add(struct knb_flow_spec *out, unsigned n, unsigned max, enum knb_flow_kind kind,
		    unsigned server_thread, uint32_t msg_size, uint32_t iodepth)
{
	if (n < max)
		out[n] = (struct knb_flow_spec){.kind = kind,
						.server_thread = server_thread,
						.msg_size = msg_size,
						.iodepth = iodepth};
	return n + 1;
}

unsigned knb_plan(const struct knb_config *c, unsigned thread, struct knb_flow_spec *out,
		  unsigned max)
{
	unsigned n = 0;

	(void)thread; /* every client thread opens the same set */
	switch (c->pattern) {
	case KNB_PATTERN_RPC:
	case KNB_PATTERN_STREAM:
	case KNB_PATTERN_ALL_TO_ALL:
		for (unsigned s = 0; s < c->server_threads; s++)
			for (unsigned f = 0; f < c->flows; f++) {
				if (c->pattern == KNB_PATTERN_RPC)
					n = add(out, n, max, KNB_FLOW_RPC, s, c->msg_size,
						c->iodepth);
				else
					n = add(out, n, max, KNB_FLOW_UP, s, c->msg_size, 1);
				if (c->pattern == KNB_PATTERN_ALL_TO_ALL)
					n = add(out, n, max, KNB_FLOW_DOWN, s, c->msg_size, 1);
			}
		break;
	case KNB_PATTERN_INCAST:
	case KNB_PATTERN_OUTCAST:
		for (unsigned f = 0; f < c->flows; f++)
			n = add(out, n, max,
				c->pattern == KNB_PATTERN_INCAST ? KNB_FLOW_UP : KNB_FLOW_DOWN, 0,
				c->msg_size, 1);
		break;
	case KNB_PATTERN_MIXED:
		/* Long flows of 64 KiB writes and one RPC flow, all on this thread. */
		for (unsigned f = 0; f < c->flows; f++)
			n = add(out, n, max, KNB_FLOW_UP, 0, KNB_BULK_CHUNK, 1);
		n = add(out, n, max, KNB_FLOW_RPC, 0, c->msg_size, c->iodepth);
		break;
	default:
		break;
	}
	return n < max ? n : max;
}

/* ---- wire helpers (network byte order) ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* ---- flows ---- */

void knb_flow_client(struct knb_flow *f, const struct knb_flow_spec *spec, unsigned thread,
		     unsigned version, struct knb_meter *m)
{
	memset(f, 0, sizeof(*f));
	f->client = true;
	f->kind = spec->kind;
	f->msg_size = spec->msg_size;
	f->iodepth = spec->iodepth;
	f->client_thread = thread;
	f->server_thread = spec->server_thread;
	f->version = version;
	f->meter = m;
	put32(f->hs_out, KNB_MAGIC);
	put16(f->hs_out + 4, (uint16_t)version);
	f->hs_out[6] = (uint8_t)spec->kind;
	put32(f->hs_out + 8, spec->msg_size);
	put32(f->hs_out + 12, spec->iodepth);
	put16(f->hs_out + 16, (uint16_t)thread);
	put16(f->hs_out + 18, (uint16_t)spec->server_thread);
	f->hs_out_len = KNB_HELLO_LEN;
	f->hs_in_len = KNB_ACK_LEN;
}

void knb_flow_server(struct knb_flow *f, unsigned thread, unsigned threads, unsigned version,
		     struct knb_meter *m)
{
	memset(f, 0, sizeof(*f));
	f->server_thread = thread;
	f->server_threads = threads;
	f->version = version;
	f->meter = m;
	f->hs_in_len = KNB_HELLO_LEN;
}

uint32_t knb_flow_hs_pending(const struct knb_flow *f, const uint8_t **p)
{
	*p = f->hs_out + f->hs_out_sent;
	return f->hs_out_len - f->hs_out_sent;
}

void knb_flow_hs_sent(struct knb_flow *f, uint32_t n)
{
	f->hs_out_sent += n;
}

static void ack(struct knb_flow *f, uint16_t status)
{
	put32(f->hs_out, KNB_MAGIC);
	put16(f->hs_out + 4, (uint16_t)f->version);
	put16(f->hs_out + 6, status);
	put16(f->hs_out + 8, (uint16_t)f->server_threads);
	put16(f->hs_out + 10, (uint16_t)f->server_thread);
	put32(f->hs_out + 12, 0);
	f->hs_out_len = KNB_ACK_LEN;
	f->hs_out_sent = 0;
}

/* The server judges a complete hello. */
static int take_hello(struct knb_flow *f)
{
	const uint8_t *h = f->hs_in;
	unsigned version = get16(h + 4), kind = h[6];
	uint32_t msg = get32(h + 8), depth = get32(h + 12);

	if (get32(h) != KNB_MAGIC) {
		snprintf(f->error, sizeof(f->error), "not a knb client (no hello)");
		return -1; /* no ack: it would not understand one */
	}
	if (version != f->version) {
		snprintf(f->error, sizeof(f->error),
			 "a client speaks knb protocol version %u, this server %u", version,
			 f->version);
		ack(f, KNB_ACK_BAD_VERSION);
		f->close_after_hs = true;
		return 0;
	}
	if (kind > KNB_FLOW_DOWN || msg == 0 || msg > KNB_MAX_MSG || depth == 0 ||
	    depth > KNB_MAX_IODEPTH) {
		snprintf(f->error, sizeof(f->error), "a client's hello is out of range");
		ack(f, KNB_ACK_BAD_HELLO);
		f->close_after_hs = true;
		return 0;
	}
	f->kind = (enum knb_flow_kind)kind;
	f->msg_size = msg;
	f->iodepth = depth;
	f->client_thread = get16(h + 16);
	ack(f, KNB_ACK_OK);
	f->ready = true;
	return 0;
}

/* The client judges the ack. */
static int take_ack(struct knb_flow *f)
{
	const uint8_t *a = f->hs_in;
	unsigned version = get16(a + 4), status = get16(a + 6);

	if (get32(a) != KNB_MAGIC) {
		snprintf(f->error, sizeof(f->error), "the peer is not a knb server");
		return -1;
	}
	if (version != f->version || status == KNB_ACK_BAD_VERSION) {
		snprintf(f->error, sizeof(f->error),
			 "the server speaks knb protocol version %u, this client %u: run the same "
			 "knb build on both ends",
			 version, f->version);
		return -1;
	}
	if (status != KNB_ACK_OK) {
		snprintf(f->error, sizeof(f->error),
			 "the server refused the connection's parameters (status %u)", status);
		return -1;
	}
	f->server_threads = get16(a + 8);
	f->ready = true;
	return 0;
}

int knb_flow_hs_received(struct knb_flow *f, const uint8_t *p, uint32_t n)
{
	uint32_t take = f->hs_in_len - f->hs_in_got;

	if (f->ready || f->close_after_hs) {
		if (!f->client && f->close_after_hs && !f->ready)
			return (int)n; /* refused: whatever follows is ignored */
		return 0;
	}
	if (take > n)
		take = n;
	memcpy(f->hs_in + f->hs_in_got, p, take);
	f->hs_in_got += take;
	if (f->hs_in_got < f->hs_in_len)
		return (int)take;
	if ((f->client ? take_ack(f) : take_hello(f)) < 0)
		return -1;
	return (int)take;
}

uint64_t knb_flow_tx_budget(const struct knb_flow *f)
{
	if (!f->ready || f->hs_out_sent < f->hs_out_len)
		return 0;
	switch (f->kind) {
	case KNB_FLOW_RPC:
		if (f->client) {
			uint64_t reqs = f->stopping ? f->requests : f->responses + f->iodepth;

			return reqs * f->msg_size - f->tx_bytes;
		}
		return f->rx_bytes - f->tx_bytes; /* echo what came */
	case KNB_FLOW_UP:
		return f->client && !f->stopping ? UINT64_MAX : 0;
	case KNB_FLOW_DOWN:
		return f->client ? 0 : UINT64_MAX;
	}
	return 0;
}

bool knb_flow_needs_time(const struct knb_flow *f, uint64_t n, bool tx)
{
	if (f->kind != KNB_FLOW_RPC || !f->client)
		return false;
	if (tx) /* a request starts within these bytes: its issue time */
		return (f->tx_bytes + n + f->msg_size - 1) / f->msg_size > f->requests;
	/* a response completes: its latency, when measured */
	return f->meter->on && (f->rx_bytes + n) / f->msg_size > f->responses;
}

void knb_flow_on_tx(struct knb_flow *f, uint64_t n, uint64_t now_ns)
{
	struct knb_meter *m = f->meter;

	f->tx_bytes += n;
	m->tx_total += n;
	if (m->on)
		m->tx_bytes += n;
	if (f->kind != KNB_FLOW_RPC)
		return;
	if (f->client) {
		uint64_t started = (f->tx_bytes + f->msg_size - 1) / f->msg_size;

		for (; f->requests < started; f->requests++) {
			f->issue_ns[f->requests % f->iodepth] = now_ns;
			m->requests_total++;
		}
	} else {
		uint64_t answered = f->tx_bytes / f->msg_size;

		m->responses_total += answered - (f->tx_bytes - n) / f->msg_size;
	}
}

int knb_flow_on_rx(struct knb_flow *f, uint64_t n, uint64_t now_ns)
{
	struct knb_meter *m = f->meter;

	if (f->client && f->kind == KNB_FLOW_RPC && n > f->tx_bytes - f->rx_bytes) {
		/* An echo longer than what was sent: it would complete later requests early. */
		snprintf(f->error, sizeof(f->error),
			 "the server sent %llu bytes more than the requests it was sent "
			 "(a broken or foreign server)",
			 (unsigned long long)(n - (f->tx_bytes - f->rx_bytes)));
		return -EPROTO;
	}
	f->rx_bytes += n;
	m->rx_total += n;
	if (m->on)
		m->rx_bytes += n;
	if (f->kind != KNB_FLOW_RPC)
		return 0;
	if (f->client) {
		uint64_t done = f->rx_bytes / f->msg_size;

		for (; f->responses < done && f->responses < f->requests; f->responses++) {
			m->responses_total++;
			if (m->on) {
				m->responses++;
				knb_hist_record(&m->hist,
						now_ns - f->issue_ns[f->responses % f->iodepth]);
			}
		}
	} else {
		uint64_t got = f->rx_bytes / f->msg_size;

		m->requests_total += got - (f->rx_bytes - n) / f->msg_size;
	}
	return 0;
}

bool knb_flow_drained(const struct knb_flow *f)
{
	if (!f->client || f->kind != KNB_FLOW_RPC || !f->ready)
		return true;
	return f->responses == f->requests && f->tx_bytes == f->requests * f->msg_size;
}

/* ---- timeline ---- */

void knb_timeline_start(struct knb_timeline *t, const struct knb_config *c, uint64_t now_ns)
{
	memset(t, 0, sizeof(*t));
	t->measure_at = now_ns + (uint64_t)(c->warmup_s * 1e9);
	t->stop_at = t->measure_at + (uint64_t)(c->duration_s * 1e9);
}

enum knb_tick knb_timeline_tick(struct knb_timeline *t, struct knb_meter *m, uint64_t now_ns,
				bool drained)
{
	if (!t->win_start && now_ns >= t->measure_at) {
		m->on = true;
		t->win_start = now_ns;
		t->cpu_start = lunar_thread_cpu_ns();
		return KNB_TICK_OPENED;
	}
	if (m->on && now_ns >= t->stop_at) {
		m->on = false;
		t->win_end = now_ns;
		t->cpu_end = lunar_thread_cpu_ns();
		t->drain_until = now_ns + KNB_DRAIN_NS;
		return KNB_TICK_CLOSED;
	}
	if (t->drain_until && (drained || now_ns >= t->drain_until))
		return KNB_TICK_DONE;
	return KNB_TICK_RUN;
}

double knb_timeline_cpu_pct(const struct knb_timeline *t)
{
	uint64_t wall = t->win_end - t->win_start;

	return t->win_end > t->win_start
		   ? 100.0 * (double)(t->cpu_end - t->cpu_start) / (double)wall
		   : 0;
}
