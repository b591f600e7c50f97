/* port.c - operations common to every port kind and wrapper. */
#include "port/port.h"

#include <stdio.h>
#include <string.h>

void port_close(struct port *p)
{
	if (p && p->ops->close)
		p->ops->close(p); /* each wrapper closes what it wraps */
}

void port_stats(struct port *p, struct port_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (p->ops->stats)
		p->ops->stats(p, st);
}

void port_dump(struct port *p, FILE *f)
{
	for (; p; p = p->inner)
		if (p->ops->dump)
			p->ops->dump(p, f);
}

void port_print_counters(struct port *p, FILE *f)
{
	struct port_stats st;

	port_stats(p, &st);
	fprintf(f,
		"port %s: rx %lu pkts %lu bytes, tx %lu pkts %lu bytes, tx_full %lu, missed %lu\n",
		p->name, st.rx_packets, st.rx_bytes, st.tx_packets, st.tx_bytes, st.tx_full,
		st.rx_missed);
}
