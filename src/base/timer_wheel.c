/*
 * timer_wheel.c - the hierarchical timer wheel (see timer_wheel.h): filing
 * entries into slots, cascading them down the levels as time reaches
 * their slot, and firing the due ones.
 *
 * Where an armed entry is, with cur the current tick and t = deadline >> 14:
 *  - t <= cur: level 0, the current slot (cur & 255), whatever its lateness;
 *  - else level L where 256^L <= t - cur < 256^(L+1), slot (t >> 8L) & 255,
 *    for block b = t >> 8L in [(cur >> 8L) + 1, (cur >> 8L) + 256]. A
 *    slot's start is b << 8L, the tick at which it is cascaded (level 0:
 *    fired), and since cur never passes a non-empty slot's start without
 *    emptying it, the block a slot holds is a function of cur;
 *  - t - cur >= 256^4: as if t = cur + 256^4 - 1 (level 3, filed again by
 *    its real deadline when that slot cascades).
 * So everything in a level-0 slot other than the current one is due once
 * the time passes that tick, and only the current slot mixes due and not
 * yet due entries: cur_min bounds it from below, and next bounds from
 * below the start of every other non-empty slot. Both are lower bounds
 * only (cancelling does not raise them); they are made exact when
 * tw_expire() has to look, which keeps the idle case at two compares.
 * The price: while the current tick's entries fall due one by one, each
 * call that fires some walks the whole slot (a tick is short, so a slot
 * is usually short too).
 */
#include "base/timer_wheel.h"

#include "base/compiler.h"

#define SLOT_MASK  (TW_SLOTS - 1)
#define SLOT_DUE   0xffffu
#define WORDS	   (TW_SLOTS / 64)
#define REACH_BITS (TW_LEVELS * TW_LEVEL_BITS) /* 2^32 ticks */

_Static_assert(TW_SLOTS % 64 == 0, "bitmap words");
_Static_assert(TW_LEVELS *TW_SLOTS < SLOT_DUE, "slot numbers fit 16 bits");
_Static_assert(REACH_BITS + TW_TICK_SHIFT < 64, "the reach fits in ns");

/* ---- lists (circular, with a head) ---- */

static inline void list_init(struct tw_link *h)
{
	h->next = h->prev = h;
}

static inline bool list_empty(const struct tw_link *h)
{
	return h->next == h;
}

static inline void list_add_tail(struct tw_link *h, struct tw_link *l)
{
	l->prev = h->prev;
	l->next = h;
	h->prev->next = l;
	h->prev = l;
}

static inline void list_del(struct tw_link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
}

static inline struct tw_entry *entry_of(struct tw_link *l)
{
	return container_of(l, struct tw_entry, link);
}

/* ---- slots and their bitmap ---- */

static inline struct tw_link *slot_head(struct timer_wheel *tw, unsigned slot)
{
	return &tw->slot[slot / TW_SLOTS][slot & SLOT_MASK];
}

static inline void bit_set(struct timer_wheel *tw, unsigned slot)
{
	tw->bitmap[slot / TW_SLOTS][(slot & SLOT_MASK) / 64] |= 1ull << (slot % 64);
}

static inline void bit_clear(struct timer_wheel *tw, unsigned slot)
{
	tw->bitmap[slot / TW_SLOTS][(slot & SLOT_MASK) / 64] &= ~(1ull << (slot % 64));
}

static inline bool bit_test(const struct timer_wheel *tw, unsigned slot)
{
	return tw->bitmap[slot / TW_SLOTS][(slot & SLOT_MASK) / 64] >> (slot % 64) & 1;
}

/* Offset (0..255), going round from index @from, of the first set bit of @bm; -1 if none. */
static int first_set(const uint64_t bm[WORDS], unsigned from)
{
	unsigned w = from / 64, b = from % 64;

	for (unsigned i = 0; i <= WORDS; i++) {
		unsigned wi = (w + i) % WORDS;
		uint64_t bits = bm[wi];

		if (i == 0)
			bits &= ~0ull << b;
		else if (i == WORDS)
			bits &= ~(~0ull << b);
		if (bits)
			return (int)((wi * 64 + (unsigned)__builtin_ctzll(bits) - from) &
				     SLOT_MASK);
	}
	return -1;
}

/* The earliest start (tick) of a non-empty slot other than the current one; UINT64_MAX if none. */
static uint64_t scan_next(const struct timer_wheel *tw)
{
	uint64_t best = UINT64_MAX;

	for (unsigned l = 0; l < TW_LEVELS; l++) {
		unsigned shift = l * TW_LEVEL_BITS;
		uint64_t base = tw->cur >> shift;
		int off;

		/* Nothing on this level or above starts before the next block of this level. */
		if (best <= (base + 1) << shift)
			break;
		off = first_set(tw->bitmap[l], (unsigned)(base + 1) & SLOT_MASK);
		if (off < 0 || (l == 0 && off == SLOT_MASK)) /* level 0's last: the current slot */
			continue;
		if (((base + 1 + (unsigned)off) << shift) < best)
			best = (base + 1 + (unsigned)off) << shift;
	}
	return best;
}

/* Put the (unlinked) @e where its deadline belongs, relative to tw->cur. */
static void file(struct timer_wheel *tw, struct tw_entry *e)
{
	uint64_t t = e->deadline >> TW_TICK_SHIFT;
	unsigned slot;

	if (t <= tw->cur) {
		slot = (unsigned)(tw->cur & SLOT_MASK);
		if (e->deadline < tw->cur_min)
			tw->cur_min = e->deadline;
	} else {
		uint64_t delta = t - tw->cur;
		unsigned level, shift;

		if (delta >> REACH_BITS) {
			delta = (1ull << REACH_BITS) - 1;
			t = tw->cur + delta;
		}
		level = (unsigned)(63 - __builtin_clzll(delta)) / TW_LEVEL_BITS;
		shift = level * TW_LEVEL_BITS;
		slot = level * TW_SLOTS + (unsigned)((t >> shift) & SLOT_MASK);
		if ((t >> shift << shift) < tw->next)
			tw->next = t >> shift << shift;
	}
	e->slot = (uint16_t)slot;
	list_add_tail(slot_head(tw, slot), &e->link);
	bit_set(tw, slot);
}

static void unlink_entry(struct timer_wheel *tw, struct tw_entry *e)
{
	list_del(&e->link);
	if (e->slot != SLOT_DUE && list_empty(slot_head(tw, e->slot)))
		bit_clear(tw, e->slot);
	e->link.next = e->link.prev = NULL;
	tw->count--;
}

static void move_to_due(struct timer_wheel *tw, struct tw_entry *e)
{
	list_del(&e->link);
	e->slot = SLOT_DUE;
	list_add_tail(&tw->due, &e->link);
}

/* Every entry of @slot is due: onto the due list, in order. */
static void take_slot(struct timer_wheel *tw, unsigned slot)
{
	struct tw_link *h = slot_head(tw, slot);

	while (!list_empty(h))
		move_to_due(tw, entry_of(h->next));
	bit_clear(tw, slot);
}

/*
 * The current slot: move the entries due at @now to the due list (only
 * if @take) and make cur_min exact for the rest.
 */
static void sweep_current(struct timer_wheel *tw, uint64_t now, bool take)
{
	unsigned slot = (unsigned)(tw->cur & SLOT_MASK);
	struct tw_link *h = slot_head(tw, slot);
	uint64_t min = UINT64_MAX;

	for (struct tw_link *l = h->next, *nx; l != h; l = nx) {
		struct tw_entry *e = entry_of(l);

		nx = l->next;
		if (take && e->deadline <= now)
			move_to_due(tw, e);
		else if (e->deadline < min)
			min = e->deadline;
	}
	if (list_empty(h))
		bit_clear(tw, slot);
	tw->cur_min = min;
}

/* tw->cur has just reached the start of a slot on some levels: file their entries lower. */
static void cascade(struct timer_wheel *tw)
{
	for (unsigned l = TW_LEVELS - 1; l > 0; l--) {
		unsigned shift = l * TW_LEVEL_BITS;
		unsigned slot = l * TW_SLOTS + (unsigned)((tw->cur >> shift) & SLOT_MASK);
		struct tw_link *h = slot_head(tw, slot), tmp;

		if (tw->cur & ((1ull << shift) - 1) || !bit_test(tw, slot))
			continue;
		/* Detach the list first: an entry beyond the reach is filed on this level again. */
		tmp.next = h->next;
		tmp.prev = h->prev;
		tmp.next->prev = tmp.prev->next = &tmp;
		list_init(h);
		bit_clear(tw, slot);
		while (!list_empty(&tmp)) {
			struct tw_entry *e = entry_of(tmp.next);

			list_del(&e->link);
			file(tw, e);
		}
	}
}

/* Move time to @now: every entry due by then goes onto the due list. */
static void collect(struct timer_wheel *tw, uint64_t now)
{
	uint64_t nt = now >> TW_TICK_SHIFT;

	if (nt > tw->cur) {
		for (;;) {
			/* Everything in the current slot is before tick nt, so due. */
			uint64_t next;

			take_slot(tw, (unsigned)(tw->cur & SLOT_MASK));
			next = scan_next(tw);
			if (next > nt) {
				tw->cur = nt;
				break;
			}
			tw->cur = next;
			cascade(tw);
			if (next == nt)
				break;
		}
		tw->cur_min = 0; /* the new current slot: look */
		tw->next = scan_next(tw);
	}
	if (now >= tw->cur_min)
		sweep_current(tw, now, true);
}

/* ---- API ---- */

void tw_init(struct timer_wheel *tw, uint64_t now_ns)
{
	tw->cur = now_ns >> TW_TICK_SHIFT;
	tw->cur_min = UINT64_MAX;
	tw->next = UINT64_MAX;
	tw->count = 0;
	list_init(&tw->due);
	for (unsigned l = 0; l < TW_LEVELS; l++) {
		for (unsigned i = 0; i < WORDS; i++)
			tw->bitmap[l][i] = 0;
		for (unsigned i = 0; i < TW_SLOTS; i++)
			list_init(&tw->slot[l][i]);
	}
}

void tw_entry_init(struct tw_entry *e)
{
	e->link.next = e->link.prev = NULL;
	e->deadline = 0;
	e->slot = 0;
}

void tw_schedule(struct timer_wheel *tw, struct tw_entry *e, uint64_t deadline_ns)
{
	if (tw_armed(e)) {
		if (e->deadline == deadline_ns && e->slot != SLOT_DUE)
			return;
		unlink_entry(tw, e);
	}
	e->deadline = deadline_ns;
	file(tw, e);
	tw->count++;
}

void tw_cancel(struct timer_wheel *tw, struct tw_entry *e)
{
	if (tw_armed(e))
		unlink_entry(tw, e);
}

unsigned tw_expire(struct timer_wheel *tw, uint64_t now_ns, tw_fn fn, void *ctx, unsigned budget)
{
	unsigned fired = 0;

	if (likely(now_ns < tw->cur_min && (now_ns >> TW_TICK_SHIFT) < tw->next)) {
		/* Nothing due, and no slot starts up to now: the current slot is empty. */
		if ((now_ns >> TW_TICK_SHIFT) > tw->cur)
			tw->cur = now_ns >> TW_TICK_SHIFT;
		return 0;
	}
	collect(tw, now_ns);
	while (!list_empty(&tw->due) && fired < budget) {
		struct tw_entry *e = entry_of(tw->due.next);

		unlink_entry(tw, e);
		fired++;
		fn(e, ctx); /* may free e */
	}
	/* Out of budget: the rest stay due, in the current slot, for the next call. */
	while (!list_empty(&tw->due)) {
		struct tw_entry *e = entry_of(tw->due.next);

		list_del(&e->link);
		file(tw, e);
	}
	return fired;
}

uint64_t tw_next_deadline(struct timer_wheel *tw)
{
	uint64_t d = UINT64_MAX;

	/* Called from a callback: due entries not fired yet come first. */
	for (struct tw_link *l = tw->due.next; l != &tw->due; l = l->next)
		if (entry_of(l)->deadline < d)
			d = entry_of(l)->deadline;
	if (bit_test(tw, (unsigned)(tw->cur & SLOT_MASK))) {
		/* Before any other slot's start. */
		sweep_current(tw, 0, false);
		return tw->cur_min < d ? tw->cur_min : d;
	}
	tw->next = scan_next(tw);
	if (tw->next != UINT64_MAX && (tw->next << TW_TICK_SHIFT) < d)
		d = tw->next << TW_TICK_SHIFT;
	return d;
}
