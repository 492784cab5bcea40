/*
 * openblas.c: the OpenBLAS sgemm column (f32 matmul only; a batched
 * matmul is a loop of sgemm calls, as a framework without a batched BLAS
 * does it).
 *
 * Debian's libopenblas is the pthreads build: its threads are its own, not
 * OpenMP's.  Under OMP_PROC_BIND libgomp pins the main thread to one core
 * before main() runs, OpenBLAS then sees a single CPU, and the workers
 * openblas_set_num_threads creates inherit that one-core mask: every
 * thread piles onto one core.  So around its runs the main thread's
 * affinity is widened to every CPU (workers created then inherit it) and
 * restored afterwards for the pinned OpenMP columns.
 */
#include "bench/bench.h"

#include <cblas.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/sysinfo.h>
#include <unistd.h>

/* OpenBLAS extensions (declared here too: cblas.h may be the reference one). */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
int openblas_get_parallel(void);
char *openblas_get_config(void);

/* After a run its workers spin this long before sleeping (2^28 cycles at 3 GHz and more). */
#define SPIN_DOWN_US 150000

/* The main thread's mask while OpenBLAS runs with a wider one. */
static cpu_set_t saved;
static int widened, last_threads;

/* Leave the main thread pinned (--openblas-pinned): shows the pile-up. */
static int keep_pinned;

/* Ask for OpenBLAS to run on the pinned main thread, as a plain call would. */
void hgc_bench_openblas_keep_pinned(int on)
{
	keep_pinned = on;
}

/* What one sgemm loop needs. */
struct ctx {
	const struct hgc_bench_matmul *mm;
	const struct hgc_bench_io *io;
};

/* Every dst matrix of the (batched) matmul by one sgemm each. */
static void run(void *p)
{
	const struct ctx *c = p;
	const struct hgc_bench_matmul *m = c->mm;
	int64_t M = m->dst[m->ndims - 2], N = m->dst[m->ndims - 1], K = m->src[m->ndims - 1];
	int64_t b, nb = hgc_bench_mm_batch(m), sb, wb;

	for (b = 0; b < nb; b++) {
		hgc_bench_mm_operands(m, b, &sb, &wb);
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f,
			    (const float *)c->io->src + sb * M * K, (int)K,
			    (const float *)c->io->wei + wb * K * N, (int)N, 0.0f,
			    (float *)c->io->dst + b * M * N, (int)N);
	}
}

/* Free the context. */
static void release(void *p)
{
	free(p);
}

/* sgemm for f32 matmuls; nothing else. */
static int prepare(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
		   struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	struct ctx *c;

	if (w->dt != HGC_BENCH_F32) {
		hgc_error(d, NULL, "openblas: no u8 x s8 gemm");
		return HGC_BENCH_NA;
	}
	c = hgc_xcalloc(1, sizeof(*c));
	c->mm = &w->shape.mm;
	c->io = io;
	*k = (struct hgc_bench_kernel){run, NULL, release, c, 0, "sgemm"};
	return 0;
}

/* Unpin the main thread and set OpenBLAS's thread count. */
static void begin(int threads)
{
	cpu_set_t all;
	int i, n = get_nprocs_conf();

	sched_getaffinity(0, sizeof(saved), &saved);
	CPU_ZERO(&all);
	for (i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	widened = !keep_pinned && sched_setaffinity(0, sizeof(all), &all) == 0;
	openblas_set_num_threads(threads);
	last_threads = threads;
}

/* Pin the main thread back and let spinning workers fall asleep. */
static void end(void)
{
	if (widened)
		sched_setaffinity(0, sizeof(saved), &saved);
	widened = 0;
	if (last_threads > 1)
		usleep(SPIN_DOWN_US);
}

/* "OpenBLAS 0.3.21 ... (pthreads)". */
const char *hgc_bench_openblas_config(void)
{
	static char buf[256];
	static const char *const kind[] = {"sequential", "pthreads", "OpenMP"};
	int p = openblas_get_parallel();

	snprintf(buf, sizeof(buf), "%s (%s build; runs %s)", openblas_get_config(),
		 p >= 0 && p <= 2 ? kind[p] : "unknown",
		 keep_pinned ? "on the pinned main thread" : "unpinned");
	return buf;
}

const struct hgc_bench_peer hgc_bench_peer_openblas = {
	.name = "openblas",
	.prepare = {[HGC_BENCH_MATMUL] = prepare},
	.begin = begin,
	.end = end,
	.apart = 1,
};
