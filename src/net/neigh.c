/* neigh.c - the neighbour table (open addressing with backward-shift delete). */
#include "net/neigh.h"

#include <string.h>

static unsigned slot_of(uint32_t ip)
{
	return (ip * 2654435761u) >> 24 & (NEIGH_TABLE_SIZE - 1);
}

struct neigh_entry *neigh_find(struct neigh_table *t, uint32_t ip)
{
	for (unsigned i = 0, s = slot_of(ip); i < NEIGH_TABLE_SIZE;
	     i++, s = (s + 1) & (NEIGH_TABLE_SIZE - 1)) {
		if (t->e[s].state == NEIGH_FREE)
			return NULL;
		if (t->e[s].ip == ip)
			return &t->e[s];
	}
	return NULL;
}

struct neigh_entry *neigh_get(struct neigh_table *t, uint32_t ip)
{
	struct neigh_entry *e = neigh_find(t, ip);
	unsigned s = slot_of(ip);

	if (e)
		return e;
	if (t->used >= NEIGH_TABLE_SIZE * 3 / 4) {
		/* Keep probes short: make room by evicting the least recently used idle entry. */
		struct neigh_entry *victim = NULL;

		for (unsigned i = 0; i < NEIGH_TABLE_SIZE; i++) {
			struct neigh_entry *x = &t->e[i];

			if (x->state != NEIGH_FREE && x->n_hold == 0 &&
			    (!victim || x->last_used_ns < victim->last_used_ns))
				victim = x;
		}
		if (!victim)
			return NULL;
		neigh_remove(t, victim);
		s = slot_of(ip);
	}
	while (t->e[s].state != NEIGH_FREE)
		s = (s + 1) & (NEIGH_TABLE_SIZE - 1);
	e = &t->e[s];
	memset(e, 0, sizeof(*e));
	e->ip = ip;
	e->state = NEIGH_INCOMPLETE;
	t->used++;
	return e;
}

unsigned neigh_incomplete(const struct neigh_table *t)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NEIGH_TABLE_SIZE; i++)
		n += t->e[i].state == NEIGH_INCOMPLETE;
	return n;
}

void neigh_remove(struct neigh_table *t, struct neigh_entry *e)
{
	unsigned hole = (unsigned)(e - t->e);
	unsigned s = (hole + 1) & (NEIGH_TABLE_SIZE - 1);

	memset(e, 0, sizeof(*e));
	t->used--;
	/* Backward-shift: move later entries of the probe run into the hole. */
	while (t->e[s].state != NEIGH_FREE) {
		unsigned home = slot_of(t->e[s].ip);

		if (((s - home) & (NEIGH_TABLE_SIZE - 1)) >=
		    ((s - hole) & (NEIGH_TABLE_SIZE - 1))) {
			t->e[hole] = t->e[s];
			memset(&t->e[s], 0, sizeof(t->e[s]));
			hole = s;
		}
		s = (s + 1) & (NEIGH_TABLE_SIZE - 1);
	}
}

void neigh_confirm(struct neigh_entry *e, const struct rte_ether_addr *mac, uint64_t expires_ns)
{
	e->mac = *mac;
	e->state = NEIGH_REACHABLE;
	e->expires_ns = expires_ns;
	e->tries = 0;
}
