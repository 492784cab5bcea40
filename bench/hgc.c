/*
 * hgc.c: the hgc column.  One prepare function per workload kind, in the
 * table below: a backend compiles the workload (build a graph from w, hand
 * the plain buffers of io to the compiled code, record the compile time in
 * k->compile_ms) and returns a kernel the harness times and checks like any
 * peer's.  A kind without an entry reads "not available" and leaves the
 * row's hgc fields null; today that is every kind, as the JIT backend is
 * not part of the build yet.
 */
#include "bench/bench.h"

/* The backend's prepare functions, by workload kind (NULL: not available). */
static const hgc_bench_prepare_fn backend[HGC_BENCH_NKINDS] = {
	[HGC_BENCH_MATMUL] = NULL,
	[HGC_BENCH_CONV] = NULL,
};

static const char *const kind_names[HGC_BENCH_NKINDS] = {"matmul", "convolution"};

/* Dispatch to the backend, or say that it has nothing for this kind. */
static int prepare(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
		   struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	hgc_bench_prepare_fn fn = backend[w->shape.kind];

	if (!fn) {
		hgc_error(d, NULL, "hgc: no compiled %s backend in this build",
			  kind_names[w->shape.kind]);
		return HGC_BENCH_NA;
	}
	return fn(w, io, k, d);
}

const struct hgc_bench_peer hgc_bench_peer_hgc = {
	.name = "hgc",
	.prepare = {[HGC_BENCH_MATMUL] = prepare, [HGC_BENCH_CONV] = prepare},
	.begin = hgc_bench_omp_threads,
};
