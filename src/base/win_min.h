/*
 * win_min.h - the minimum of a stream of samples over a sliding time
 * window, in O(1) time and space: Kathleen Nichols' three-estimate filter,
 * as Linux's win_minmax. It keeps the best sample of the window and the
 * best ones of its later quarter and half, so that when the best ages out
 * a good second choice is already there. RACK's min_RTT (RFC 8985 6.2
 * step 1) uses it, so that a path whose RTT rose is believed again after
 * the window, as in Linux (tcp_min_rtt_wlen, 300 s).
 */
#ifndef LUNAR_BASE_WIN_MIN_H
#define LUNAR_BASE_WIN_MIN_H

#include <stdint.h>

struct win_min_sample {
	uint64_t t; /* when it was taken */
	uint64_t v; /* its value */
};

struct win_min {
	struct win_min_sample s[3]; /* best, the later quarter's, the later half's */
};

/** Empty: win_min_get() is UINT64_MAX until the first sample. */
static inline void win_min_init(struct win_min *m)
{
	for (int i = 0; i < 3; i++)
		m->s[i] = (struct win_min_sample){.t = 0, .v = UINT64_MAX};
}

/** The minimum over the window (UINT64_MAX: no sample yet). */
static inline uint64_t win_min_get(const struct win_min *m)
{
	return m->s[0].v;
}

/**
 * Fold in @v taken at @t (non-decreasing across calls), forgetting samples
 * older than @win. @return the new minimum.
 */
uint64_t win_min_update(struct win_min *m, uint64_t win, uint64_t t, uint64_t v);

#endif
