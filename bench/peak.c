/*
 * peak.c: the machine's compute limit, measured rather than looked up.
 * Each loop keeps enough independent accumulators in registers to cover
 * the latency of the instruction on every pipe, runs on one thread per
 * core (pinned by OMP_PROC_BIND), and counts 2 ops per multiply-add.  The
 * instruction is chosen by what the CPU has: zmm where AVX-512 exists,
 * else ymm; for int8 vpdpbusd (AVX512-VNNI or AVX-VNNI), else the AVX2
 * vpmaddubsw + vpmaddwd + vpaddd sequence that int8 GEMMs use without VNNI.
 */
#include "bench/bench.h"

#include <omp.h>
#include <stdlib.h>
#include <time.h>

/* One loop: what it runs, and ops done per iteration. */
struct loop {
	const char *how;
	void (*fn)(int64_t iters);
	double ops;
};

#define ZERO_Y(i) "vpxor %%ymm" #i ", %%ymm" #i ", %%ymm" #i "\n\t"
#define ZERO_Z(i) "vpxord %%zmm" #i ", %%zmm" #i ", %%zmm" #i "\n\t"
#define ZERO_Y12 ZERO_Y(0) ZERO_Y(1) ZERO_Y(2) ZERO_Y(3) ZERO_Y(4) ZERO_Y(5) \
	ZERO_Y(6) ZERO_Y(7) ZERO_Y(8) ZERO_Y(9) ZERO_Y(10) ZERO_Y(11)
#define ZERO_Z16 ZERO_Z(0) ZERO_Z(1) ZERO_Z(2) ZERO_Z(3) ZERO_Z(4) ZERO_Z(5) ZERO_Z(6) \
	ZERO_Z(7) ZERO_Z(8) ZERO_Z(9) ZERO_Z(10) ZERO_Z(11) ZERO_Z(12) ZERO_Z(13) \
	ZERO_Z(14) ZERO_Z(15) ZERO_Z(16) ZERO_Z(17)
#define CLOBBER_X16 "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", \
	"xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"
#define TIMES12(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11)
#define TIMES16(M) TIMES12(M) M(12) M(13) M(14) M(15)

/* fp32 FMA on ymm: 12 accumulators x 8 lanes x 2 flops. */
static void fma_ymm(int64_t n)
{
#define F(i) "vfmadd231ps %%ymm12, %%ymm13, %%ymm" #i "\n\t"
	__asm__ volatile(ZERO_Y12 ZERO_Y(12) ZERO_Y(13)
			 "1:\n\t" TIMES12(F) "dec %0\n\tjnz 1b\n\tvzeroupper\n\t"
			 : "+r"(n) : : "cc", CLOBBER_X16);
#undef F
}

/* fp32 FMA on zmm: 16 accumulators x 16 lanes x 2 flops. */
__attribute__((target("avx512f"))) static void fma_zmm(int64_t n)
{
#define F(i) "vfmadd231ps %%zmm16, %%zmm17, %%zmm" #i "\n\t"
	__asm__ volatile(ZERO_Z16 "1:\n\t" TIMES16(F) "dec %0\n\tjnz 1b\n\tvzeroupper\n\t"
			 : "+r"(n) : : "cc", CLOBBER_X16, "xmm16", "xmm17");
#undef F
}

/* u8 x s8 dot products, vpdpbusd on zmm: 16 x 64 multiply-adds. */
__attribute__((target("avx512f"))) static void vnni_zmm(int64_t n)
{
#define F(i) "vpdpbusd %%zmm17, %%zmm16, %%zmm" #i "\n\t"
	__asm__ volatile(ZERO_Z16 "1:\n\t" TIMES16(F) "dec %0\n\tjnz 1b\n\tvzeroupper\n\t"
			 : "+r"(n) : : "cc", CLOBBER_X16, "xmm16", "xmm17");
#undef F
}

/* u8 x s8 dot products, AVX-VNNI vpdpbusd on ymm: 12 x 32 multiply-adds. */
static void vnni_ymm(int64_t n)
{
#define F(i) "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm" #i "\n\t"
	__asm__ volatile(ZERO_Y12 ZERO_Y(12) ZERO_Y(13)
			 "1:\n\t" TIMES12(F) "dec %0\n\tjnz 1b\n\tvzeroupper\n\t"
			 : "+r"(n) : : "cc", CLOBBER_X16);
#undef F
}

/* u8 x s8 without VNNI: 6 chains of maddubsw, maddwd (x 1), paddd: 6 x 32 multiply-adds. */
static void madd_ymm(int64_t n)
{
#define A(i) "vpmaddubsw %%ymm13, %%ymm12, %%ymm" #i "\n\t"
#define W(i) "vpmaddwd %%ymm14, %%ymm" #i ", %%ymm" #i "\n\t"
#define S(i, t) "vpaddd %%ymm" #t ", %%ymm" #i ", %%ymm" #i "\n\t"
	__asm__ volatile(ZERO_Y12 ZERO_Y(12) ZERO_Y(13) ZERO_Y(14) "1:\n\t"
			 A(6) A(7) A(8) A(9) A(10) A(11) W(6) W(7) W(8) W(9) W(10) W(11)
			 S(0, 6) S(1, 7) S(2, 8) S(3, 9) S(4, 10) S(5, 11)
			 "dec %0\n\tjnz 1b\n\tvzeroupper\n\t"
			 : "+r"(n) : : "cc", CLOBBER_X16);
#undef A
#undef W
#undef S
}

/* The best fp32 loop this CPU runs. */
static struct loop f32_loop(void)
{
	if (__builtin_cpu_supports("avx512f"))
		return (struct loop){"vfmadd231ps zmm", fma_zmm, 16 * 16 * 2};
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return (struct loop){"vfmadd231ps ymm", fma_ymm, 12 * 8 * 2};
	return (struct loop){"no FMA: not measured", NULL, 0};
}

/* The best int8 loop this CPU runs. */
static struct loop i8_loop(void)
{
	if (__builtin_cpu_supports("avx512vnni"))
		return (struct loop){"vpdpbusd zmm", vnni_zmm, 16 * 64 * 2};
	if (__builtin_cpu_supports("avxvnni"))
		return (struct loop){"vpdpbusd ymm (AVX-VNNI)", vnni_ymm, 12 * 32 * 2};
	if (__builtin_cpu_supports("avx2"))
		return (struct loop){"vpmaddubsw+vpmaddwd+vpaddd ymm (no VNNI)", madd_ymm,
				     6 * 32 * 2};
	return (struct loop){"no AVX2: not measured", NULL, 0};
}

/* CPU time of the calling thread in seconds. */
static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Ops per second of n iterations on each of t threads started together:
 * the sum over threads of ops / the thread's own CPU time, so that time
 * the scheduler gives to other processes on a shared machine does not
 * count against the core.  *wall gets the wall time of the slowest thread.
 */
static double timed(const struct loop *l, int64_t n, int t, double *wall)
{
	double rate = 0, t0 = 0;

#pragma omp parallel num_threads(t) reduction(+ : rate)
	{
		double c0;

#pragma omp barrier
#pragma omp master
		t0 = hgc_now();
		c0 = thread_cpu();
		l->fn(n);
		rate = (double)n * l->ops / (thread_cpu() - c0);
#pragma omp barrier
#pragma omp master
		*wall = hgc_now() - t0;
	}
	return rate;
}

/* Order doubles for qsort. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* G(FL)OP/s of a loop on t threads: the best of 5 runs of about seconds/5 each
 * (the limit is what the machine can do; other load only ever slows a run). */
static double rate(const struct loop *l, int t, double seconds)
{
	double r[5], wall = 0;
	int64_t n = 1 << 16;
	int i;

	if (!l->fn)
		return 0;
	for (timed(l, n, t, &wall); wall < 0.01; timed(l, n, t, &wall))
		n *= 4;
	n = (int64_t)((double)n * (seconds / 5) / wall) + 1;
	for (i = 0; i < 5; i++)
		r[i] = timed(l, n, t, &wall) * 1e-9;
	qsort(r, 5, sizeof(double), cmp_double);
	return r[4];
}

/* Measure per-core and all-thread peaks; seconds is the budget of each of the 4 figures. */
void hgc_bench_peak_measure(struct hgc_bench_peak *p, int max_threads, double seconds)
{
	struct loop f = f32_loop(), q = i8_loop();

	p->f32_how = f.how;
	p->i8_how = q.how;
	p->all_threads = max_threads;
	p->f32_core = rate(&f, 1, seconds);
	p->i8_core = rate(&q, 1, seconds);
	p->f32_all = max_threads > 1 ? rate(&f, max_threads, seconds) : p->f32_core;
	p->i8_all = max_threads > 1 ? rate(&q, max_threads, seconds) : p->i8_core;
}
