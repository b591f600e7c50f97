/* port_pcap.c - the pcap capture wrapper (see port_pcap.h), built on libpcap. */
#include "port/port_pcap.h"
#include "base/log.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#include <rte_mbuf.h>

struct pcap_port {
	struct port base;
	pcap_t *dead;
	pcap_dumper_t *dumper;
	unsigned snaplen;
	uint8_t *linear; /* snaplen bytes: where chained frames are gathered */
	uint64_t frames, bytes;
};

#define PCAP_MAX_SNAPLEN 262144 /* libpcap's own limit (MAXIMUM_SNAPLEN) */

static void capture(struct pcap_port *c, struct rte_mbuf *m)
{
	struct pcap_pkthdr h;
	const uint8_t *data;

	gettimeofday(&h.ts, NULL);
	h.len = m->pkt_len;
	h.caplen = m->pkt_len < c->snaplen ? m->pkt_len : c->snaplen;
	data = rte_pktmbuf_read(m, 0, h.caplen, c->linear); /* copies only chained mbufs */
	if (!data)
		return;
	pcap_dump((u_char *)c->dumper, &h, data);
	c->frames++;
	c->bytes += h.caplen;
}

static uint16_t pcap_rx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct pcap_port *c = (struct pcap_port *)p;
	uint16_t got = port_rx_burst(p->inner, pkts, n);

	for (uint16_t i = 0; i < got; i++)
		capture(c, pkts[i]);
	return got;
}

static uint16_t pcap_tx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct pcap_port *c = (struct pcap_port *)p;
	uint16_t sent;

	/*
	 * Capture only what the inner port accepted, but the inner port may
	 * free a frame the moment it takes it: hold a reference on every
	 * segment (rte_pktmbuf_free drops one per segment) across the call.
	 */
	for (uint16_t i = 0; i < n; i++)
		for (struct rte_mbuf *s = pkts[i]; s; s = s->next)
			rte_mbuf_refcnt_update(s, 1);
	sent = port_tx_burst(p->inner, pkts, n);
	for (uint16_t i = 0; i < n; i++) {
		if (i < sent) {
			capture(c, pkts[i]);
			rte_pktmbuf_free(pkts[i]);
		} else {
			for (struct rte_mbuf *s = pkts[i]; s; s = s->next)
				rte_mbuf_refcnt_update(s, -1);
		}
	}
	return sent;
}

static void capture_stats(struct port *p, struct port_stats *st)
{
	port_stats(p->inner, st);
}

static bool capture_link_up(struct port *p)
{
	return port_link_up(p->inner);
}

static void pcap_port_dump(struct port *p, FILE *f)
{
	struct pcap_port *c = (struct pcap_port *)p;

	pcap_dump_flush(c->dumper);
	fprintf(f, "pcap: %lu frames, %lu bytes captured\n", c->frames, c->bytes);
}

static void capture_close(struct port *p)
{
	struct pcap_port *c = (struct pcap_port *)p;

	pcap_dump_close(c->dumper);
	pcap_close(c->dead);
	port_close(p->inner);
	free(c->linear);
	free(c);
}

static const struct port_ops pcap_ops = {
    .rx_burst = pcap_rx,
    .tx_burst = pcap_tx,
    .stats = capture_stats,
    .dump = pcap_port_dump,
    .link_up = capture_link_up,
    .close = capture_close,
};

struct port *port_pcap_wrap(struct port *inner, const char *path, unsigned snaplen, char *err,
			    size_t errlen)
{
	struct pcap_port *c = calloc(1, sizeof(*c));

	if (!c) {
		lunar_set_err(err, errlen, "out of memory");
		return NULL;
	}
	c->snaplen = snaplen && snaplen < PCAP_MAX_SNAPLEN ? snaplen : PCAP_MAX_SNAPLEN;
	c->linear = malloc(c->snaplen);
	if (!c->linear) {
		lunar_set_err(err, errlen, "out of memory");
		free(c);
		return NULL;
	}
	c->dead = pcap_open_dead(DLT_EN10MB, (int)c->snaplen);
	c->dumper = c->dead ? pcap_dump_open(c->dead, path) : NULL;
	if (!c->dumper) {
		lunar_set_err(err, errlen, "--pcap %s: cannot open for writing: %s", path,
			      c->dead ? pcap_geterr(c->dead) : "pcap_open_dead failed");
		if (c->dead)
			pcap_close(c->dead);
		free(c->linear);
		free(c);
		return NULL;
	}
	c->base = *inner;
	c->base.ops = &pcap_ops;
	c->base.inner = inner;
	snprintf(c->base.name, sizeof(c->base.name), "pcap(%.50s)", inner->name);
	return &c->base;
}
