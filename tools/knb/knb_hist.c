/*
 * knb_hist.c - the knb latency histogram (see knb_hist.h).
 *
 * Owns: the mapping between a value and its bucket, the exact count, min,
 * max and 128-bit sum, and the walks over the buckets that give
 * percentiles and the cumulative distribution.
 *
 * Bucket index of a value v below 2^40: with shift = 0 for v < 256, else
 * shift = floor(log2 v) - 7 (so that v >> shift is in [128, 256)),
 * index = (shift << 7) + (v >> shift). Shift 0 gives indices 0 .. 255 (one
 * per value); shift s >= 1 gives (s + 1) * 128 .. (s + 1) * 128 + 127, so
 * the buckets are contiguous and ordered by value.
 */
#include "knb_hist.h"

#include <stdbool.h>
#include <string.h>

#define SUB_BUCKETS (UINT64_C(1) << KNB_HIST_SUB_BITS)
#define TOP_BUCKET  (KNB_HIST_BUCKETS - 1)

static size_t bucket_of(uint64_t v)
{
	if (v >> KNB_HIST_RANGE_BITS)
		return TOP_BUCKET;
	if (v < 2 * SUB_BUCKETS)
		return (size_t)v;
	/* v >= 256, so clzll is defined and shift >= 1. */
	unsigned shift = 63u - (unsigned)__builtin_clzll(v) - KNB_HIST_SUB_BITS;

	return ((size_t)shift << KNB_HIST_SUB_BITS) + (size_t)(v >> shift);
}

/*
 * The highest value of bucket @i's range (2^40 - 1 for the top bucket, even
 * when it also holds values above the range).
 */
static uint64_t bucket_highest(size_t i)
{
	size_t half = i >> KNB_HIST_SUB_BITS;
	unsigned shift = half <= 1 ? 0 : (unsigned)(half - 1);
	uint64_t lowest = (uint64_t)(i - ((size_t)shift << KNB_HIST_SUB_BITS)) << shift;

	return lowest + ((UINT64_C(1) << shift) - 1);
}

/* What a bucket reports: its highest value, within the exact [min, max]. */
static uint64_t bucket_value(const struct knb_hist *h, size_t i)
{
	uint64_t v = bucket_highest(i);

	if (v > h->max)
		return h->max;
	if (v < h->min)
		return h->min;
	return v;
}

static void sum_add(struct knb_hist *h, uint64_t lo, uint64_t hi)
{
	h->sum_lo += lo;
	h->sum_hi += hi + (h->sum_lo < lo);
}

void knb_hist_init(struct knb_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void knb_hist_record(struct knb_hist *h, uint64_t value_ns)
{
	h->counts[bucket_of(value_ns)]++;
	h->count++;
	if (value_ns < h->min)
		h->min = value_ns;
	if (value_ns > h->max)
		h->max = value_ns;
	sum_add(h, value_ns, 0);
}

void knb_hist_merge(struct knb_hist *dst, const struct knb_hist *src)
{
	for (size_t i = 0; i < KNB_HIST_BUCKETS; i++)
		dst->counts[i] += src->counts[i];
	dst->count += src->count;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	sum_add(dst, src->sum_lo, src->sum_hi);
}

uint64_t knb_hist_count(const struct knb_hist *h)
{
	return h->count;
}

uint64_t knb_hist_min(const struct knb_hist *h)
{
	return h->count ? h->min : 0;
}

uint64_t knb_hist_max(const struct knb_hist *h)
{
	return h->max;
}

double knb_hist_mean(const struct knb_hist *h)
{
	if (!h->count)
		return 0;
	return ((double)h->sum_hi * 0x1p64 + (double)h->sum_lo) / (double)h->count;
}

uint64_t knb_hist_percentile(const struct knb_hist *h, double p)
{
	if (!h->count)
		return 0;
	if (!(p > 0))
		return h->min;
	if (p >= 100)
		return h->max;

	/* The rank of the sample sought: ceil(p% of count), at most count. */
	double rank = p / 100 * (double)h->count;
	uint64_t target = h->count;

	if (rank < (double)h->count) {
		target = (uint64_t)rank;
		if ((double)target < rank)
			target++;
	}

	uint64_t seen = 0;

	for (size_t i = 0; i < KNB_HIST_BUCKETS; i++) {
		seen += h->counts[i];
		if (seen >= target)
			return bucket_value(h, i);
	}
	return h->max; /* not reached: the counts add up to count */
}

/* Whether @seen samples are at least the fraction @step / @max_points of all. */
static bool step_reached(const struct knb_hist *h, uint64_t seen, size_t step, size_t max_points)
{
	return (double)seen >= (double)step * (double)h->count / (double)max_points;
}

size_t knb_hist_cdf(const struct knb_hist *h, struct knb_cdf_point *out, size_t max_points)
{
	if (!h->count || !max_points)
		return 0;

	size_t last = 0, nonempty = 0;

	for (size_t i = 0; i < KNB_HIST_BUCKETS; i++) {
		if (h->counts[i]) {
			last = i;
			nonempty++;
		}
	}

	/* Downsampling: a point is due when seen / count reaches step / max_points. */
	bool downsample = nonempty > max_points;
	size_t step = 1, n = 0;
	uint64_t seen = 0;

	for (size_t i = 0; i <= last; i++) {
		if (!h->counts[i])
			continue;
		seen += h->counts[i];
		if (i == last)
			break;
		if (downsample) {
			/*
			 * The last slot is kept for the last point (the steps
			 * already ensure it, unless rounding of counts above
			 * 2^53 says otherwise).
			 */
			if (n + 1 >= max_points || !step_reached(h, seen, step, max_points))
				continue;
			while (step < max_points && step_reached(h, seen, step, max_points))
				step++;
		}
		out[n].value_ns = bucket_value(h, i);
		out[n].fraction = (double)seen / (double)h->count;
		n++;
	}
	out[n].value_ns = h->max;
	out[n].fraction = 1.0;
	return n + 1;
}
