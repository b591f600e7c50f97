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
