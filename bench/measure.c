/*
 * measure.c: the timing rule shared by every column: warm up, then repeat
 * until the time budget is spent (at least min_iters, at most max_iters
 * runs; 3 when a single run exceeds the budget, 2 beyond 2 s) and take the
 * median, which shrugs off the odd preempted run.
 */
#include "bench/bench.h"

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

/* Order doubles for qsort. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Warm k up, time it, and return the median run time in ms (the fastest with
   --fastest); *iters gets the run count. */
double hgc_bench_time_ms(const struct hgc_bench_kernel *k, const struct hgc_bench_opts *o,
			 int *iters)
{
	double *t = hgc_xcalloc((size_t)o->max_iters, sizeof(double));
	double start = hgc_now(), spent = 0, t0, med;
	int n = 0, min_iters = o->min_iters;

	do
		k->run(k->ctx);
	while (hgc_now() - start < WARMUP_S && ++n < WARMUP_MAX);
	if (hgc_now() - start > o->budget && min_iters > LONG_MIN_ITERS)
		min_iters = LONG_MIN_ITERS;
	if (hgc_now() - start > VERY_LONG_S && min_iters > LONG_MIN_ITERS - 1)
		min_iters = LONG_MIN_ITERS - 1;
	n = 0;
	while (n < o->max_iters && (n < min_iters || spent < o->budget)) {
		t0 = hgc_now();
		k->run(k->ctx);
		t[n] = hgc_now() - t0;
		spent += t[n++];
	}
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	med = o->fastest ? t[0] : n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	free(t);
	*iters = n;
	return med * 1e3;
}

/* The thread count of the OpenMP columns (hgc and oneDNN). */
void hgc_bench_omp_threads(int threads)
{
	omp_set_num_threads(threads);
}
