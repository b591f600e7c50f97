/*
 * timer_wheel.h - a hierarchical timer wheel: deadlines (ns) of intrusive
 * entries, one wheel per worker (LUNA §5). It owns only the links and the
 * slots; entries live in the user's structures, and nothing is allocated
 * after tw_init().
 *
 * Layout: TW_LEVELS levels of TW_SLOTS slots; a level-0 slot is one tick
 * (2^TW_TICK_SHIFT ns, ~16 us) and each level's slot spans a whole turn of
 * the level below, so four levels reach 2^32 ticks (~19.5 hours) ahead.
 * Later deadlines wait in the farthest slot and are filed again each time
 * it comes round. An entry moves down a level (cascades) when the time
 * reaches the start of its slot; a bitmap per level lets tw_expire() jump
 * over empty slots.
 *
 * Precision: an entry fires in the first tw_expire() whose @now_ns is at
 * or past its deadline, never earlier, so it is late by at most the gap
 * between two calls: the tick sets the slots' width, not when entries
 * fire (the entries of the current tick are compared one by one). Only
 * two things make an entry wait longer: a callback (re)scheduled it,
 * already due, during the call (it fires in the next one), or the call's
 * budget ran out.
 *
 * Not thread-safe: a wheel and its entries belong to one thread.
 */
#ifndef LUNAR_BASE_TIMER_WHEEL_H
#define LUNAR_BASE_TIMER_WHEEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TW_TICK_SHIFT 14 /* a tick is 16.384 us */
#define TW_LEVEL_BITS 8
#define TW_SLOTS      (1u << TW_LEVEL_BITS)
#define TW_LEVELS     4
#define TW_TICK_NS    (1ull << TW_TICK_SHIFT)

struct tw_link {
	struct tw_link *next, *prev;
};

/** Embed one in the structure that has a deadline; tw_entry_init() it once. */
struct tw_entry {
	struct tw_link link; /* next == NULL: not armed */
	uint64_t deadline;   /* ns; meaningful while armed */
	uint16_t slot;	     /* level * TW_SLOTS + index, or the due list */
};

struct timer_wheel {
	uint64_t cur;	    /* current tick: earlier ticks are done */
	uint64_t cur_min;   /* <= every deadline in the current tick's slot */
	uint64_t next;	    /* <= the next later tick where an armed slot starts */
	uint32_t count;	    /* armed entries */
	struct tw_link due; /* found due by the running tw_expire(), not fired yet */
	uint64_t bitmap[TW_LEVELS][TW_SLOTS / 64]; /* non-empty slots */
	struct tw_link slot[TW_LEVELS][TW_SLOTS];
};

/** Called for each due entry; the entry is no longer armed when called. */
typedef void (*tw_fn)(struct tw_entry *e, void *ctx);

/** Empty wheel whose time starts at @now_ns. No allocation: 16 KiB in @tw. */
void tw_init(struct timer_wheel *tw, uint64_t now_ns);
/** An entry that is not armed. */
void tw_entry_init(struct tw_entry *e);

static inline bool tw_armed(const struct tw_entry *e)
{
	return e->link.next != NULL;
}

/**
 * Arm @e to fire at @deadline_ns, or move it there if armed. Any deadline
 * is fine: one in the past fires in the next tw_expire(), one beyond the
 * wheel's reach waits in its farthest slot. O(1).
 */
void tw_schedule(struct timer_wheel *tw, struct tw_entry *e, uint64_t deadline_ns);
/** Disarm @e (nothing if not armed). O(1). */
void tw_cancel(struct timer_wheel *tw, struct tw_entry *e);

/**
 * Fire every entry whose deadline is <= @now_ns, at most @budget of them
 * (the rest stay armed and due): each is disarmed, then @fn(entry, @ctx)
 * is called. Entries fire in deadline order to within a tick, except
 * that ones already overdue when scheduled come after the rest of their
 * tick. @fn may schedule, cancel (or free, once cancelled) any entry,
 * itself included; an entry it schedules does not fire in this call, and
 * one it cancels or moves before its turn does not fire at all. So each
 * entry fires at most once per call. @fn must not call tw_expire().
 * @return how many fired. With nothing due it costs two compares.
 */
unsigned tw_expire(struct timer_wheel *tw, uint64_t now_ns, tw_fn fn, void *ctx, unsigned budget);

/**
 * A time no later than the earliest armed deadline (UINT64_MAX if none),
 * to sleep or skip until: exact within the current tick, else the start
 * of the earliest non-empty slot, so possibly early by up to that slot's
 * span. Not const: it tightens the wheel's cached bounds on the way.
 */
uint64_t tw_next_deadline(struct timer_wheel *tw);

/** Armed entries (including due ones a running tw_expire() has not fired yet). */
static inline uint32_t tw_count(const struct timer_wheel *tw)
{
	return tw->count;
}

#endif
