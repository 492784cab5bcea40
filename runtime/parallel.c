/*
 * parallel.c: the parallel-for and scratch memory generated code calls.
 * A parallel for is outlined by the compiler into body(ctx, i); here it
 * runs over [0, n) with `omp parallel for schedule(static)`, so the team
 * size is the caller's (omp_set_num_threads, OMP_NUM_THREADS) and each
 * thread gets one contiguous chunk, as with the C backend's pragmas.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/runtime.h"

/* Run body(ctx, i) for every i in [0, n) on the OpenMP team. */
void hgc_rt_parallel_for(hgc_rt_body_fn *body, void *ctx, int64_t n)
{
	int64_t i;

	if (n <= 0)
		return;
#pragma omp parallel for schedule(static)
	for (i = 0; i < n; i++)
		body(ctx, i);
}

/* bytes (rounded up to 64) of 64-byte aligned memory; out of memory is fatal. */
void *hgc_rt_scratch_alloc(int64_t bytes)
{
	size_t n = bytes > 0 ? ((size_t)bytes + 63) & ~(size_t)63 : 64;
	void *p = NULL;

	if (posix_memalign(&p, 64, n)) {
		fprintf(stderr, "hgc: out of memory for %lld bytes of scratch\n", (long long)bytes);
		abort();
	}
	return p;
}

/* Free what hgc_rt_scratch_alloc gave (NULL is fine). */
void hgc_rt_scratch_free(void *p)
{
	free(p);
}
