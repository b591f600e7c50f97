/*
 * knb_hist.h - the latency histogram of the knb benchmark, in the style of
 * HdrHistogram: every sample is counted, recording is O(1) and never
 * allocates, and every reported value is within a bounded relative error.
 *
 * Range: 0 .. 2^40 - 1 ns (about 18 minutes). A value of 2^40 ns or more is
 * counted in the top bucket ([255 * 2^32, 2^40)) and still updates the
 * exact count, min, max and sum. A percentile below 100 that falls in the
 * top bucket is reported as 2^40 - 1 (saturated, then clamped to
 * [min, max]); p100 and the last point of the cdf are the exact max.
 *
 * Buckets (log-linear): values below 256 ns each have their own bucket.
 * Above, every power of two [2^k, 2^(k+1)) (k = 8 .. 39) is cut into 128
 * equal sub-buckets of width 2^(k-7). That is 34 * 128 = 4352 buckets.
 *
 * Error bound: a bucket's width is at most 1/128 of its lowest value, and a
 * value is reported as the highest value of its bucket, so a reported
 * value v' for a true value v in range satisfies v <= v' <= v + v/128
 * (relative error <= 1/128 < 0.79%, and exact below 256 ns). Reported
 * values are also clamped to [min, max], which are exact.
 *
 * Memory: the counts live inside the struct (about 34 KiB); no allocation
 * at all. Keep a histogram in static storage, on the heap or in a
 * per-thread context, not in a small stack frame. Not thread-safe: give
 * each thread its own histogram and knb_hist_merge() them at the end.
 */
#ifndef LUNAR_KNB_HIST_H
#define LUNAR_KNB_HIST_H

#include <stddef.h>
#include <stdint.h>

#define KNB_HIST_SUB_BITS   7  /**< 2^7 = 128 sub-buckets per power of two */
#define KNB_HIST_RANGE_BITS 40 /**< values below 2^40 ns have their own bucket */
/** Bucket count: 256 exact values, then 128 per power of two up to 2^40. */
#define KNB_HIST_BUCKETS ((KNB_HIST_RANGE_BITS - KNB_HIST_SUB_BITS + 1) << KNB_HIST_SUB_BITS)

struct knb_hist {
	uint64_t counts[KNB_HIST_BUCKETS];
	uint64_t count;		 /**< samples recorded */
	uint64_t min, max;	 /**< exact; min is UINT64_MAX while empty */
	uint64_t sum_lo, sum_hi; /**< exact 128-bit sum of the samples */
};

/** An empty histogram. */
void knb_hist_init(struct knb_hist *h);
/** Count one sample. O(1), no allocation. */
void knb_hist_record(struct knb_hist *h, uint64_t value_ns);
/** Add every sample of @src to @dst, as if @dst had recorded them too. */
void knb_hist_merge(struct knb_hist *dst, const struct knb_hist *src);

uint64_t knb_hist_count(const struct knb_hist *h);
/** The exact smallest sample; 0 if empty. */
uint64_t knb_hist_min(const struct knb_hist *h);
/** The exact largest sample; 0 if empty. */
uint64_t knb_hist_max(const struct knb_hist *h);
/** The mean, from the exact sum; 0 if empty. */
double knb_hist_mean(const struct knb_hist *h);
/**
 * The @p-th percentile, @p in [0, 100]: the value of the first bucket at
 * which at least @p% of the samples are <= it, reported as that bucket's
 * highest value, clamped to [min, max]. @p <= 0 (or NaN) gives min and
 * @p >= 100 gives max, exactly. 0 if empty.
 */
uint64_t knb_hist_percentile(const struct knb_hist *h, double p);

/** One point of a cumulative distribution: @fraction of samples are <= @value_ns. */
struct knb_cdf_point {
	uint64_t value_ns;
	double fraction;
};

/**
 * Write the cumulative distribution to @out, one point per non-empty bucket
 * (value as in knb_hist_percentile()). Values strictly increase and
 * fractions never decrease; the last point is exactly (max, 1.0). When there are more non-empty
 * buckets than @max_points, keep the first bucket to reach each fraction
 * k / @max_points (k = 1 .. @max_points), so the steps are about even and
 * the last point is still there. Returns the points written (at most
 * @max_points); 0 if empty or @max_points is 0.
 */
size_t knb_hist_cdf(const struct knb_hist *h, struct knb_cdf_point *out, size_t max_points);

#endif
