/*
 * parallel.c: the parallel-for and scratch memory generated code calls.
 * A parallel for is outlined by the compiler into body(ctx, i); here it
 * runs over [0, n) with `omp parallel for schedule(static)`, so the team
 * size is the caller's (omp_set_num_threads, OMP_NUM_THREADS) and each
 * thread gets one contiguous chunk, as with the C backend's pragmas.
 * Scratch memory is scratch.c's.
 */
#include <omp.h>

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
