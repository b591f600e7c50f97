/*
 * port_fault.c - the fault-injection port wrapper (see port_fault.h).
 * Decisions come from a xoshiro256** generator seeded per direction.
 * Corruption flips one bit, which the Internet checksum always catches;
 * corrupting at both ends of a path can put two flips in one frame, and
 * those can cancel (RFC 1071), so tests corrupt at one point per path.
 */
#include "port/port_fault.h"

#include "mem/zbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#define FAULT_QUEUE	    4096 /* packets held for delay or waiting for the inner tx ring */
#define REORDER_MAX_HOLD_US 200	 /* a lone held packet is not kept hostage forever */

struct held {
	struct rte_mbuf *m;
	uint64_t due; /* TSC when the packet may go */
};

struct fault_dir_state {
	struct fault_dir cfg;
	uint64_t rng[4];
	struct rte_mbuf *reorder_slot; /* held back until the next packet passes */
	uint64_t reorder_since;	       /* ...or until REORDER_MAX_HOLD_US has gone by */
	uint64_t reorder_due;	       /* its own delay still applies */
	struct held q[FAULT_QUEUE];    /* FIFO: due times are monotonic per direction */
	unsigned head, count;
	struct fault_counters ctr;
};

struct fault_port {
	struct port base;
	struct fault_dir_state dir[2]; /* 0 = rx, 1 = tx */
	uint64_t tsc_per_us;
};

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(uint64_t s[4])
{
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

static void rng_seed(uint64_t s[4], uint64_t seed)
{
	/* splitmix64 expands one seed into the four words xoshiro needs */
	for (int i = 0; i < 4; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		s[i] = z ^ (z >> 31);
	}
}

static bool chance(struct fault_dir_state *d, double p)
{
	if (p <= 0.0)
		return false;
	return (double)(rng_next(d->rng) >> 11) * 0x1.0p-53 < p;
}

static bool q_push(struct fault_dir_state *d, struct rte_mbuf *m, uint64_t due)
{
	if (d->count == FAULT_QUEUE)
		return false;
	d->q[(d->head + d->count) % FAULT_QUEUE] = (struct held){m, due};
	d->count++;
	return true;
}

/*
 * A private copy of frame @m, or NULL: it holds none of the application's
 * references. Made in the port's own pool, not @m's, which for a zero-copy
 * frame is the header pool (small buffers: a chain of a dozen, taken from
 * the headers of sends to come).
 */
static struct rte_mbuf *copy_frame(struct fault_port *f, struct rte_mbuf *m)
{
	struct rte_mbuf *c =
	    rte_pktmbuf_copy(m, f->base.pool ? f->base.pool : m->pool, 0, UINT32_MAX);

	if (c)
		zbuf_pktbuf_copied(c);
	return c;
}

/* Whether any segment of @m is not the port's alone to write: shared, external or attached. */
static bool frame_shared(const struct rte_mbuf *m)
{
	for (; m; m = m->next)
		if (rte_mbuf_refcnt_read(m) > 1 || RTE_MBUF_HAS_EXTBUF(m) || RTE_MBUF_CLONED(m))
			return true;
	return false;
}

/* Apply faults to one packet; emits 0..3 packets into the direction's queue. */
static void fault_one(struct fault_port *f, struct fault_dir_state *d, struct rte_mbuf *m,
		      uint64_t now)
{
	uint64_t due = now + d->cfg.delay_us * f->tsc_per_us;
	struct rte_mbuf *out[3];
	unsigned n = 0;

	d->ctr.seen++;
	if (chance(d, d->cfg.drop)) {
		d->ctr.dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	if (chance(d, d->cfg.corrupt) && rte_pktmbuf_pkt_len(m) > 0) {
		uint64_t r = rng_next(d->rng);

		/*
		 * Corrupt a private copy if any of the frame is shared: its other
		 * owner (a retransmission queue, or the application for a zero-copy
		 * payload) must keep the good bytes. No copy, no corruption: the
		 * wire never touches a buffer it does not own.
		 */
		bool own = !frame_shared(m);

		if (!own) {
			struct rte_mbuf *c = copy_frame(f, m);

			if (c) { /* freshly allocated segments: the port's alone */
				rte_pktmbuf_free(m);
				m = c;
				own = true;
			}
		}
		if (own) {
			uint32_t off = (uint32_t)((r >> 8) % rte_pktmbuf_pkt_len(m));
			struct rte_mbuf *s = m;

			while (off >= s->data_len) { /* any byte of the frame, in any segment */
				off -= s->data_len;
				s = s->next;
			}
			rte_pktmbuf_mtod(s, uint8_t *)[off] ^= (uint8_t)(1u << (r & 7));
			/* The port's "checksum good" no longer holds: make the stack check. */
			m->ol_flags &= ~(RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK);
			d->ctr.corrupted++;
		}
	}
	out[n++] = m;
	if (chance(d, d->cfg.dup)) {
		struct rte_mbuf *c = copy_frame(f, m);

		if (c) {
			out[n++] = c;
			d->ctr.duplicated++;
		}
	}
	if (d->cfg.delay_us)
		d->ctr.delayed++;
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *x = out[i];

		if (!d->reorder_slot && chance(d, d->cfg.reorder)) {
			d->reorder_slot = x; /* goes out right after the next packet */
			d->reorder_since = now;
			d->reorder_due = due;
			d->ctr.reordered++;
			continue;
		}
		if (!q_push(d, x, due)) {
			d->ctr.dropped++;
			rte_pktmbuf_free(x);
			continue;
		}
		if (d->reorder_slot) {
			if (!q_push(d, d->reorder_slot,
				    due > d->reorder_due ? due : d->reorder_due)) {
				d->ctr.dropped++;
				rte_pktmbuf_free(d->reorder_slot);
			}
			d->reorder_slot = NULL;
		}
	}
}

/* Release a held packet that no later packet has overtaken in time. */
static void reorder_expire(struct fault_port *f, struct fault_dir_state *d, uint64_t now)
{
	if (d->reorder_slot && now - d->reorder_since > REORDER_MAX_HOLD_US * f->tsc_per_us &&
	    q_push(d, d->reorder_slot, d->reorder_due))
		d->reorder_slot = NULL;
}

/* Pop up to @n due packets from the queue into @pkts. */
static uint16_t q_pop_due(struct fault_dir_state *d, struct rte_mbuf **pkts, uint16_t n,
			  uint64_t now)
{
	uint16_t k = 0;

	while (k < n && d->count && d->q[d->head].due <= now) {
		pkts[k++] = d->q[d->head].m;
		d->head = (d->head + 1) % FAULT_QUEUE;
		d->count--;
	}
	return k;
}

/* Hand due tx packets to the inner port; keep what its ring refuses. */
static void tx_drain(struct fault_port *f, uint64_t now)
{
	struct fault_dir_state *d = &f->dir[1];

	reorder_expire(f, d, now);
	while (d->count && d->q[d->head].due <= now) {
		struct rte_mbuf *batch[32];
		uint16_t n = 0, sent;
		unsigned idx = d->head;

		while (n < 32 && n < d->count && d->q[idx].due <= now) {
			batch[n++] = d->q[idx].m;
			idx = (idx + 1) % FAULT_QUEUE;
		}
		sent = port_tx_burst(f->base.inner, batch, n);
		d->head = (d->head + sent) % FAULT_QUEUE;
		d->count -= sent;
		if (sent < n)
			break; /* inner ring full: retry on the next call */
	}
}

static uint16_t fault_rx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct fault_port *f = (struct fault_port *)p;
	struct fault_dir_state *d = &f->dir[0];
	uint64_t now = rte_get_tsc_cycles();
	struct rte_mbuf *in[64];
	uint16_t got;

	tx_drain(f, now);
	/* Only take from the device what the queue can hold. */
	got = port_rx_burst(p->inner, in,
			    RTE_MIN((unsigned)RTE_DIM(in), (FAULT_QUEUE - d->count) / 4));
	for (uint16_t i = 0; i < got; i++)
		fault_one(f, d, in[i], now);
	reorder_expire(f, d, now);
	return q_pop_due(d, pkts, n, now);
}

static uint16_t fault_tx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct fault_port *f = (struct fault_port *)p;
	struct fault_dir_state *d = &f->dir[1];
	uint64_t now = rte_get_tsc_cycles();
	uint16_t i;

	for (i = 0; i < n; i++) {
		if (FAULT_QUEUE - d->count < 4)
			break; /* room for a packet, its duplicate and a released hold */
		fault_one(f, d, pkts[i], now);
	}
	tx_drain(f, now);
	return i;
}

static void fault_stats(struct port *p, struct port_stats *st)
{
	port_stats(p->inner, st);
}

static bool fault_link_up(struct port *p)
{
	return port_link_up(p->inner);
}

static void fault_dump(struct port *p, FILE *fp)
{
	struct fault_port *f = (struct fault_port *)p;

	for (int t = 0; t < 2; t++) {
		const struct fault_counters *c = &f->dir[t].ctr;

		fprintf(fp,
			"fault %s: seen %lu dropped %lu duplicated %lu reordered %lu corrupted %lu "
			"delayed %lu\n",
			t ? "tx" : "rx", c->seen, c->dropped, c->duplicated, c->reordered,
			c->corrupted, c->delayed);
	}
}

static void fault_close(struct port *p)
{
	struct fault_port *f = (struct fault_port *)p;

	for (int t = 0; t < 2; t++) {
		struct fault_dir_state *d = &f->dir[t];

		while (d->count) {
			rte_pktmbuf_free(d->q[d->head].m);
			d->head = (d->head + 1) % FAULT_QUEUE;
			d->count--;
		}
		rte_pktmbuf_free(d->reorder_slot);
	}
	port_close(p->inner);
	free(f);
}

static const struct port_ops fault_ops = {
    .rx_burst = fault_rx,
    .tx_burst = fault_tx,
    .stats = fault_stats,
    .dump = fault_dump,
    .link_up = fault_link_up,
    .close = fault_close,
};

struct port *port_fault_wrap(struct port *inner, const struct fault_spec *spec)
{
	struct fault_port *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->base = *inner;
	/*
	 * Corruption must reach the wire after the checksums are computed, so
	 * the stack above computes them in software: the wrapper offers no
	 * transmit checksum offload (nor TSO, which implies it).
	 */
	f->base.offloads &=
	    ~(PORT_OFFLOAD_TX_IPV4_CKSUM | PORT_OFFLOAD_TX_L4_CKSUM | PORT_OFFLOAD_TX_TSO);
	f->base.ops = &fault_ops;
	f->base.inner = inner;
	snprintf(f->base.name, sizeof(f->base.name), "fault(%.50s)", inner->name);
	f->tsc_per_us = rte_get_tsc_hz() / 1000000;
	f->dir[0].cfg = spec->rx;
	f->dir[1].cfg = spec->tx;
	/* Each queue of a device draws its own sequence from the one seed. */
	rng_seed(f->dir[0].rng, (spec->seed + inner->queue * 0x9e3779b97f4a7c15ull) * 2 + 1);
	rng_seed(f->dir[1].rng, (spec->seed + inner->queue * 0x9e3779b97f4a7c15ull) * 2 + 2);
	return &f->base;
}

void port_fault_counters(struct port *p, int tx, struct fault_counters *out)
{
	*out = ((struct fault_port *)p)->dir[tx ? 1 : 0].ctr;
}
