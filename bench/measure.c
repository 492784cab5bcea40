/*
 * measure.c: the timing rule shared by every column.
 *
 * The machine is shared, and a burst of someone else's load lasts seconds:
 * timed one column after the other, a burst that hits one column's window
 * and not the next one's moves the row's ratio by 2x.  So the columns of a
 * row are timed together, in interleaved rounds: each column is warmed up
 * first, which also estimates its run time (the mean warm-up run after the
 * first) and so plans its timed runs
 * (what the old one-column rule took: at least min_iters, until the budget
 * is spent, at most max_iters; 3 when the warm-up alone exceeds the budget,
 * 2 beyond 2 s), then every round gives each column its share of those
 * runs as one slice, in an order that rotates per round so that no column
 * always runs first (right after another column evicted its data) or last;
 * a slice of short runs opens with 10 ms of untimed ones (REWARM_S).
 * Each column's last run comes after the rounds, on a poisoned dst, and
 * is the one its check reads.  A column's figure is the median of all its
 * runs (the fastest with --fastest); load that comes and goes then lands
 * on every column alike.
 */
#include "bench/bench.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

/* Warm-up: at least one run, more while they are short (caches, page faults, JIT). */
#define WARMUP_S 0.05
#define WARMUP_MAX 10

/* Timed runs when one run alone exceeds the budget (a 1 s attention at batch
   32 would otherwise take 6 s a cell): the median of 3; of 2 (3 runs with the
   warm-up) when one run takes more than VERY_LONG_S. */
#define LONG_MIN_ITERS 3
#define VERY_LONG_S 2.0

/* A slice opens with untimed runs when runs are shorter than REWARM_MAX_S:
   for REWARM_S (at least one run).  They bring the column's data back into
   the caches the other columns used, and they let the core's clock settle
   where this column's code puts it, so that the timed runs see what a column
   timed alone sees.  The clock is why it is milliseconds: AMX code lowers it
   for a while (the Xeon, measured by a dependent add chain around the
   slices: 2.65-2.68 GHz around hgc's int8 256^3 alone, 2.43-2.48 GHz when
   oneDNN's AMX columns ran in between), and one untimed run left hgc's
   int8 256^3 at 20.8-21.0 us where alone it ran 17.7-17.9; 2 ms of untimed
   runs gave 21.3 (median), 5 ms 18.3, 10 ms 17.9, oneDNN's columns unchanged
   (16.2-16.8 and 15.1-15.3).  Longer runs pay the refill once in
   milliseconds of work and are timed from the first. */
#define REWARM_MAX_S 0.002
#define REWARM_S 0.01

/* The clock: the options' (tests), or the wall clock. */
static double now(const struct hgc_bench_opts *o)
{
	return o->clock ? o->clock() : hgc_now();
}

/* Order doubles for qsort. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Warm tm's kernel up; its run time estimate and its planned timed runs. */
void hgc_bench_warm_up(struct hgc_bench_timing *tm, const struct hgc_bench_opts *o)
{
	double start = now(o), first = 0, spent;
	int runs = 0, min_iters = o->min_iters;

	if (tm->enter)
		tm->enter(tm->threads);
	do {
		tm->k->run(tm->k->ctx);
		if (!runs++)
			first = now(o) - start;
	} while (now(o) - start < WARMUP_S && runs < WARMUP_MAX);
	spent = now(o) - start;
	if (tm->leave)
		tm->leave();
	if (spent > o->budget && min_iters > LONG_MIN_ITERS)
		min_iters = LONG_MIN_ITERS;
	if (spent > VERY_LONG_S && min_iters > LONG_MIN_ITERS - 1)
		min_iters = LONG_MIN_ITERS - 1;
	/* The mean run after the first (page faults, JIT): the plan then costs
	   what the one-column rule spent, also under load (the fastest run
	   would plan twice the runs when the load doubles their time). */
	tm->run_s = runs > 1 ? (spent - first) / (runs - 1) : spent;
	tm->target = tm->run_s > 0 ? (int)fmin(ceil(o->budget / tm->run_s), o->max_iters)
				   : o->max_iters;
	if (tm->target < min_iters)
		tm->target = min_iters;
	tm->n = 0;
	tm->t = hgc_xcalloc((size_t)tm->target, sizeof(double));
}

/* Column tm's runs in round r of nr: all its planned runs but the last (the
   final run, which the caller checks) spread evenly over the rounds. */
static int share(const struct hgc_bench_timing *tm, int r, int nr)
{
	int64_t runs = tm->target > 1 ? tm->target - 1 : 0;

	return (int)(runs * (r + 1) / nr - runs * r / nr);
}

/* One slice: runs timed runs of tm, after REWARM_S of untimed ones when runs are short. */
static void slice(struct hgc_bench_timing *tm, int runs, const struct hgc_bench_opts *o)
{
	double t0;

	if (tm->enter)
		tm->enter(tm->threads);
	if (tm->run_s < REWARM_MAX_S) {
		t0 = now(o);
		do
			tm->k->run(tm->k->ctx);
		while (now(o) - t0 < REWARM_S);
	}
	while (runs-- > 0) {
		t0 = now(o);
		tm->k->run(tm->k->ctx);
		tm->t[tm->n++] = now(o) - t0;
	}
	if (tm->leave)
		tm->leave();
}

/* The rounds over the n warmed-up columns tm[]: every planned run but each
   column's last. */
void hgc_bench_rounds(struct hgc_bench_timing *tm, int n, const struct hgc_bench_opts *o)
{
	int r, nr = 1, i, c, runs;

	for (i = 0; i < n; i++)
		nr = tm[i].target - 1 > nr ? tm[i].target - 1 : nr;
	nr = nr < HGC_BENCH_ROUNDS ? nr : HGC_BENCH_ROUNDS;
	for (r = 0; r < nr; r++)
		for (i = 0; i < n; i++) {
			c = (r + i) % n;
			runs = share(&tm[c], r, nr);
			if (runs > 0)
				slice(&tm[c], runs, o);
		}
}

/*
 * tm's last planned run, timed like the others, whose result the caller
 * then checks (a separate run for the check would cost a 2.5 s attention
 * one more run per column); then tm's figure in ms: the median of its
 * runs, or the fastest with --fastest.  The caller calls enter and leave.
 */
void hgc_bench_final_run(struct hgc_bench_timing *tm, const struct hgc_bench_opts *o)
{
	double t0 = now(o), *t = tm->t;
	int n;

	tm->k->run(tm->k->ctx);
	t[tm->n++] = now(o) - t0;
	n = tm->n;
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	tm->ms = 1e3 * (o->fastest ? t[0] : n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2);
}

/* Free what the warm-up allocated. */
void hgc_bench_timing_release(struct hgc_bench_timing *tm)
{
	free(tm->t);
	tm->t = NULL;
}

/* The thread count of the OpenMP columns (hgc and oneDNN). */
void hgc_bench_omp_threads(int threads)
{
	omp_set_num_threads(threads);
}
