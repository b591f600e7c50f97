/*
 * pmtu.c - the path MTU cache: a set-associative table of destinations,
 * each with the lowest credible MTU reported and when it is forgotten.
 * See pmtu.h.
 */
#include "net/pmtu.h"

#include <string.h>

static unsigned slot_of(uint32_t dst)
{
	return (dst * 0x9e3779b1u) >> 24; /* Fibonacci hashing: the top 8 bits */
}

static const struct pmtu_entry *find(const struct pmtu_cache *pc, uint32_t dst)
{
	unsigned h = slot_of(dst);

	for (unsigned i = 0; i < PMTU_WAYS; i++) {
		const struct pmtu_entry *e = &pc->e[(h + i) & (PMTU_SLOTS - 1)];

		if (e->mtu && e->dst == dst)
			return e;
	}
	return NULL;
}

void pmtu_init(struct pmtu_cache *pc, uint64_t lifetime_ns)
{
	memset(pc, 0, sizeof(*pc));
	pc->lifetime_ns = lifetime_ns ? lifetime_ns : PMTU_LIFETIME_NS;
	pc->next_expiry_ns = UINT64_MAX;
}

uint16_t pmtu_get(const struct pmtu_cache *pc, uint32_t dst, uint64_t now)
{
	const struct pmtu_entry *e = pc->used ? find(pc, dst) : NULL;

	return e && now < e->expires_ns ? e->mtu : 0;
}

/* @e is forgotten at @expires; pmtu_expire() looks no earlier than the first such time. */
static void expire_at(struct pmtu_cache *pc, struct pmtu_entry *e, uint64_t expires)
{
	e->expires_ns = expires;
	if (expires < pc->next_expiry_ns)
		pc->next_expiry_ns = expires;
}

bool pmtu_learn(struct pmtu_cache *pc, uint32_t dst, uint16_t mtu, uint64_t now,
		uint64_t lifetime_ns, uint32_t *evicted)
{
	struct pmtu_entry *e = (struct pmtu_entry *)find(pc, dst);
	uint64_t expires = now + (lifetime_ns ? lifetime_ns : pc->lifetime_ns);

	*evicted = 0;
	if (!mtu)
		return false;
	if (e && now < e->expires_ns) {
		if (mtu > e->mtu)
			return false;
		expire_at(pc, e, expires); /* perhaps sooner than before */
		if (mtu == e->mtu) {
			pc->stats.refreshed++;
			return false;
		}
		e->mtu = mtu;
		pc->stats.lowered++;
		return true;
	}
	if (!e) { /* a free slot, else the one expiring first */
		unsigned h = slot_of(dst);

		for (unsigned i = 0; i < PMTU_WAYS; i++) {
			struct pmtu_entry *c = &pc->e[(h + i) & (PMTU_SLOTS - 1)];

			if (!c->mtu) {
				e = c;
				break;
			}
			if (!e || c->expires_ns < e->expires_ns)
				e = c;
		}
		if (e->mtu && now - e->learned_ns < PMTU_MIN_AGE_NS) {
			pc->stats.refused++;
			return false;
		}
		if (e->mtu) {
			pc->stats.evicted++;
			*evicted = e->dst;
		} else
			pc->used++;
	}
	/* else: @dst's own entry, expired and not yet purged, is taken again */
	e->dst = dst;
	e->mtu = mtu;
	e->learned_ns = now;
	expire_at(pc, e, expires);
	pc->stats.learned++;
	return true;
}

bool pmtu_raise(struct pmtu_cache *pc, uint32_t dst, uint16_t mtu)
{
	struct pmtu_entry *e = (struct pmtu_entry *)find(pc, dst);

	if (!e || (mtu && mtu <= e->mtu))
		return false;
	pc->stats.raised++;
	if (mtu) {
		e->mtu = mtu;
		return true;
	}
	e->mtu = 0; /* next_expiry_ns may be early now: pmtu_expire() finds nothing then */
	pc->used--;
	return true;
}

unsigned pmtu_expire(struct pmtu_cache *pc, uint64_t now)
{
	unsigned n = 0;

	if (now < pc->next_expiry_ns)
		return 0;
	pc->next_expiry_ns = UINT64_MAX;
	for (unsigned i = 0; i < PMTU_SLOTS; i++) {
		struct pmtu_entry *e = &pc->e[i];

		if (!e->mtu)
			continue;
		if (now < e->expires_ns) {
			if (e->expires_ns < pc->next_expiry_ns)
				pc->next_expiry_ns = e->expires_ns;
			continue;
		}
		e->mtu = 0;
		pc->used--;
		pc->stats.expired++;
		n++;
	}
	return n;
}
