/*
 * win_min.c - the windowed minimum filter (see win_min.h).
 */
#include "base/win_min.h"

/* The best sample aged out, or the quarter and half estimates are stale: promote. */
static uint64_t age(struct win_min *m, uint64_t win, struct win_min_sample x)
{
	uint64_t dt = x.t - m->s[0].t;

	if (dt > win) {
		/* Out of the window: the later estimates move up, the newest fills in. */
		m->s[0] = m->s[1];
		m->s[1] = m->s[2];
		m->s[2] = x;
		if (x.t - m->s[0].t > win) {
			m->s[0] = m->s[1];
			m->s[1] = m->s[2];
			m->s[2] = x;
		}
	} else if (m->s[1].t == m->s[0].t && dt > win / 4) {
		/* A quarter of the window went by with no second choice: take one. */
		m->s[1] = m->s[2] = x;
	} else if (m->s[2].t == m->s[1].t && dt > win / 2) {
		/* Half of it went by with no third choice: take one. */
		m->s[2] = x;
	}
	return m->s[0].v;
}

uint64_t win_min_update(struct win_min *m, uint64_t win, uint64_t t, uint64_t v)
{
	struct win_min_sample x = {.t = t, .v = v};

	/* A new best, or nothing left in the window: start over from this one. */
	if (v <= m->s[0].v || t - m->s[2].t > win) {
		m->s[0] = m->s[1] = m->s[2] = x;
		return v;
	}
	if (v <= m->s[1].v)
		m->s[1] = m->s[2] = x;
	else if (v <= m->s[2].v)
		m->s[2] = x;
	return age(m, win, x);
}
