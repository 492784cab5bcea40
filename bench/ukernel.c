/*
 * ukernel: how close each brgemm microkernel comes to the core's peak for
 * its instruction.  Measures the peak first (independent accumulator
 * chains of vfmadd231ps zmm and ymm, vpdpbusd, vdpbf16ps, vpmaddwd +
 * vpaddd), then each kernel at each ISA the CPU has on in-cache blocks,
 * pinned to one core, and prints medians of many repetitions.  Each
 * kernel's timings alternate with timings of its instruction's peak loop
 * of about the same length (0.1 ms), and the fraction is the ratio of the
 * two medians: it depends neither on the clock nor much on what else the
 * shared machine runs at the time.  "best" is the ratio of the fastest
 * timings: other work only ever slows a timing, so on a busy machine it is
 * the better estimate of what the kernel can do.  int8 runs twice on
 * AVX2: with any s8 B (widened to s16 pairs) and with B in [-64, 64]
 * (vpmaddubsw, unwidened), each also on 128x16x256 bs4, the calls of the
 * 1024^3 int8 MatMul.  The load average is printed before and after.
 * The f32 calls of ResNet-50's convolutions run first, at AVX2.
 * Usage: ukernel [repetitions] [conv | SHAPE...]  (conv: those calls only;
 * SHAPE, [f32:|u8s8:|bf16:]MxNxK/BS, a call `hgc explain` chose, say: the
 * peaks, then only those shapes at the best ISA)
 */
#include <immintrin.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime.h"
#include "runtime/runtime_int.h"

#define PEAK_ITERS 50000L	/* about 0.1 ms: short timings dodge preemption on a busy machine */
#define KERNEL_SECONDS 1e-4	/* each kernel timing: as long as a peak loop's */

/* Peaks measured: operations per second of each instruction's useful work. */
enum peak { PK_ZMM_FMA, PK_YMM_FMA, PK_VNNI, PK_BF16, PK_MADDWD, PK_N };
static const char *const peak_names[PK_N] = {"vfmadd231ps zmm", "vfmadd231ps ymm",
					      "vpdpbusd zmm", "vdpbf16ps zmm",
					      "vpmaddwd+vpaddd ymm"};
static double peak[PK_N];
static volatile float sink_f;	/* keeps the peak loops' results alive */
static volatile int sink_i;

/* Seconds on the monotonic clock. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Sort doubles ascending (for medians). */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of n timings of fn(arg). */
static double median_time(void (*fn)(void *), void *arg, int reps)
{
	double *t = malloc(sizeof(double) * (size_t)reps), m, t0;
	int i;

	fn(arg);
	for (i = 0; i < reps; i++) {
		t0 = now();
		fn(arg);
		t[i] = now() - t0;
	}
	qsort(t, (size_t)reps, sizeof(double), cmp_double);
	m = t[reps / 2];
	free(t);
	return m;
}

/*
 * Medians of n timings of f(a) and of g(b), taken in turn so that both see
 * the same load on a shared machine: their ratio is what the table reports;
 * and the fastest of each (bf, bg).
 */
static void median_pair(void (*f)(void *), void *a, void (*g)(void *), void *b, int reps,
			double *tf, double *tg, double *bf, double *bg)
{
	double *t = malloc(sizeof(double) * 2 * (size_t)reps), t0;
	int i;

	f(a);
	g(b);
	for (i = 0; i < reps; i++) {
		t0 = now();
		f(a);
		t[i] = now() - t0;
		t0 = now();
		g(b);
		t[reps + i] = now() - t0;
	}
	qsort(t, (size_t)reps, sizeof(double), cmp_double);
	qsort(t + reps, (size_t)reps, sizeof(double), cmp_double);
	*tf = t[reps / 2];
	*tg = t[reps + reps / 2];
	*bf = t[0];
	*bg = t[reps];
	free(t);
}

#define PIN(v) __asm__ volatile("" : "+v"(v))

/* 16 chains of zmm FMAs: 32 flop each. */
__attribute__((target("avx512f"))) static void peak_zmm(void *arg)
{
	__m512 a[16], x = _mm512_set1_ps(1.0f), y = _mm512_set1_ps(1e-9f);
	long i;
	int j;

#pragma GCC unroll 16
	for (j = 0; j < 16; j++)
		a[j] = _mm512_set1_ps((float)j);
	for (i = 0; i < PEAK_ITERS; i++)
#pragma GCC unroll 16
		for (j = 0; j < 16; j++)
			a[j] = _mm512_fmadd_ps(a[j], x, y);
#pragma GCC unroll 16
	for (j = 1; j < 16; j++)
		a[0] = _mm512_add_ps(a[0], a[j]);
	sink_f = _mm512_reduce_add_ps(a[0]);
}

/* 12 chains of ymm FMAs: 16 flop each. */
__attribute__((target("avx2,fma"))) static void peak_ymm(void *arg)
{
	__m256 a[12], x = _mm256_set1_ps(1.0f), y = _mm256_set1_ps(1e-9f);
	long i;
	int j;

#pragma GCC unroll 16
	for (j = 0; j < 12; j++)
		a[j] = _mm256_set1_ps((float)j);
	for (i = 0; i < PEAK_ITERS; i++)
#pragma GCC unroll 16
		for (j = 0; j < 12; j++)
			a[j] = _mm256_fmadd_ps(a[j], x, y);
#pragma GCC unroll 16
	for (j = 1; j < 12; j++)
		a[0] = _mm256_add_ps(a[0], a[j]);
	sink_f = _mm256_cvtss_f32(a[0]);
}

/* 16 chains of vpdpbusd zmm: 64 u8 x s8 products, 128 op each. */
__attribute__((target("avx512f,avx512vnni"))) static void peak_vnni(void *arg)
{
	__m512i a[16], x = _mm512_set1_epi32(0x01010101), y = _mm512_set1_epi32(0x01ff01ff);
	long i;
	int j;

#pragma GCC unroll 16
	for (j = 0; j < 16; j++)
		a[j] = _mm512_set1_epi32(j);
	for (i = 0; i < PEAK_ITERS; i++)
#pragma GCC unroll 16
		for (j = 0; j < 16; j++) {
			a[j] = _mm512_dpbusd_epi32(a[j], x, y);
			PIN(a[j]);	/* else gcc copies the tied accumulators around */
		}
#pragma GCC unroll 16
	for (j = 1; j < 16; j++)
		a[0] = _mm512_add_epi32(a[0], a[j]);
	sink_i = _mm512_reduce_add_epi32(a[0]);
}

/* 16 chains of vdpbf16ps zmm: 32 bf16 products, 64 flop each. */
__attribute__((target("avx512f,avx512bf16"))) static void peak_bf16(void *arg)
{
	__m512 a[16];
	__m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80), y = x;
	long i;
	int j;

#pragma GCC unroll 16
	for (j = 0; j < 16; j++)
		a[j] = _mm512_set1_ps((float)j);
	for (i = 0; i < PEAK_ITERS; i++)
#pragma GCC unroll 16
		for (j = 0; j < 16; j++)
			a[j] = _mm512_dpbf16_ps(a[j], x, y);
#pragma GCC unroll 16
	for (j = 1; j < 16; j++)
		a[0] = _mm512_add_ps(a[0], a[j]);
	sink_f = _mm512_reduce_add_ps(a[0]);
}

/* 8 chains of vpmaddwd + vpaddd ymm, the AVX2 int8 kernel's pair: 32 int8 op each. */
__attribute__((target("avx2"))) static void peak_maddwd(void *arg)
{
	__m256i a[8], x = _mm256_set1_epi32(0x00010001), y = x;
	long i;
	int j;

#pragma GCC unroll 16
	for (j = 0; j < 8; j++)
		a[j] = _mm256_set1_epi32(j);
	for (i = 0; i < PEAK_ITERS; i++)
#pragma GCC unroll 16
		for (j = 0; j < 8; j++) {
			PIN(x);	/* one vpmaddwd per chain, not one shared */
			a[j] = _mm256_add_epi32(a[j], _mm256_madd_epi16(x, y));
			PIN(a[j]);
		}
#pragma GCC unroll 16
	for (j = 1; j < 8; j++)
		a[0] = _mm256_add_epi32(a[0], a[j]);
	sink_i = _mm256_extract_epi32(a[0], 0);
}

/* Each peak loop and the operations one call of it does. */
static void (*const peak_fn[PK_N])(void *) = {peak_zmm, peak_ymm, peak_vnni, peak_bf16,
					       peak_maddwd};
static const double peak_ops[PK_N] = {16.0 * 32 * PEAK_ITERS, 12.0 * 16 * PEAK_ITERS,
				      16.0 * 128 * PEAK_ITERS, 16.0 * 64 * PEAK_ITERS,
				      8.0 * 32 * PEAK_ITERS};

/* Whether this CPU runs peak loop i. */
static int peak_avail(enum peak i)
{
	const struct hgc_rt_cpu *cpu = hgc_rt_cpu();

	switch (i) {
	case PK_ZMM_FMA:
		return cpu->avx512;
	case PK_VNNI:
		return cpu->avx512_vnni;
	case PK_BF16:
		return cpu->avx512_bf16;
	default:
		return cpu->avx2;
	}
}

/* Measure the peak of every instruction this CPU has (0 for the others). */
static void measure_peaks(int reps)
{
	int i;

	for (i = 0; i < PK_N; i++)
		if (peak_avail((enum peak)i))
			peak[i] = peak_ops[i] / median_time(peak_fn[i], NULL, reps);
	printf("peak per core, median of %d:\n", reps);
	for (i = 0; i < PK_N; i++)
		if (peak[i] > 0)
			printf("  %-22s %8.1f G%s/s\n", peak_names[i], peak[i] * 1e-9,
			       i == PK_VNNI || i == PK_MADDWD ? "OP" : "FLOP");
}

/* The peak loop's stand-in where the CPU lacks its instruction. */
static void no_peak(void *arg)
{
	(void)arg;
}

/* One benchmarked brgemm: its data and how many calls make one timing. */
struct run {
	enum hgc_rt_kind kind;
	int64_t M, N, K, bs;
	const void **A, **B;
	void *C;
	int calls;
};

/* calls brgemm calls with beta 0, as generated code's first k block does. */
static void run_calls(void *arg)
{
	struct run *r = arg;
	int i;

	for (i = 0; i < r->calls; i++) {
		if (r->kind == HGC_RT_F32)
			hgc_brgemm_f32((const float *const *)r->A, (const float *const *)r->B,
				       r->C, r->bs, r->M, r->N, r->K, r->K, r->N, r->N, 0);
		else if (r->kind == HGC_RT_U8S8)
			hgc_brgemm_u8s8s32((const uint8_t *const *)r->A,
					   (const int8_t *const *)r->B, r->C, r->bs, r->M, r->N,
					   r->K, r->K, 4 * r->N, r->N, 0);
		else
			hgc_brgemm_bf16((const uint16_t *const *)r->A,
					(const uint16_t *const *)r->B, r->C, r->bs, r->M, r->N,
					r->K, r->K, 2 * r->N, r->N, 0);
	}
}

/*
 * int8 B in [-64, 64] instead of any s8: the AVX2 kernel then takes its
 * vpmaddubsw path (no pair of B can saturate s16), nothing widened.
 */
static int narrow_b;

/* Allocate r's blocks (dense leading dimensions) filled with small values. */
static void run_alloc(struct run *r)
{
	size_t es = r->kind == HGC_RT_F32 ? 4 : r->kind == HGC_RT_U8S8 ? 1 : 2, i;
	int64_t b;

	r->A = calloc((size_t)r->bs, sizeof(void *));
	r->B = calloc((size_t)r->bs, sizeof(void *));
	for (b = 0; b < r->bs; b++) {
		unsigned char *a = aligned_alloc(64, ((size_t)(r->M * r->K) * es + 63) / 64 * 64);
		unsigned char *bb = aligned_alloc(64, ((size_t)(r->K * r->N) * es + 63) / 64 * 64);

		for (i = 0; i < (size_t)(r->M * r->K) * es; i++)
			a[i] = (unsigned char)(es == 1 ? i * 7 : (i & 1 ? 0x3f : i));
		for (i = 0; i < (size_t)(r->K * r->N) * es; i++)
			bb[i] = es == 1 && narrow_b ? (unsigned char)((int)(i * 13 % 129) - 64)
						    : (unsigned char)(es == 1 ? i * 13 : (i & 1 ? 0x3f : i));
		r->A[b] = a;
		r->B[b] = bb;
	}
	r->C = aligned_alloc(64, ((size_t)(r->M * r->N) * 4 + 63) / 64 * 64 + 64);
}

/* Free r's blocks. */
static void run_free(struct run *r)
{
	int64_t b;

	for (b = 0; b < r->bs; b++) {
		free((void *)r->A[b]);
		free((void *)r->B[b]);
	}
	free(r->A);
	free(r->B);
	free(r->C);
}

/* The peak that bounds kind's kernel at the ISA in use. */
static enum peak kernel_peak(enum hgc_rt_kind kind)
{
	const char *name = hgc_rt_kernel_name(kind);

	if (!strcmp(name, "avx512"))
		return PK_ZMM_FMA;
	/* AMX's tiles against the zmm instruction they replace: above 1 is their gain */
	if (!strcmp(name, "avx512-vnni") || !strcmp(name, "avx512-amx"))
		return PK_VNNI;
	if (!strcmp(name, "avx512-bf16") || !strcmp(name, "avx512-amx-bf16"))
		return PK_BF16;
	if (!strcmp(name, "avx2-vpmaddwd"))
		return PK_MADDWD;
	return PK_YMM_FMA;	/* avx2, avx2-fma; generic is compared with it too */
}

/* Fractions of peak of one shape: of the medians and of the fastest timings. */
struct frac {
	double med, best;
};

/* Time one shape of kind at the ISA in use, print its row and return its fractions. */
static struct frac bench_shape(enum hgc_rt_kind kind, int64_t M, int64_t N, int64_t K,
			       int64_t bs, int reps)
{
	static const char *const kname[] = {"f32", "u8s8s32", "bf16"};
	struct run r = {kind, M, N, K, bs, NULL, NULL, NULL, 1};
	double ops = 2.0 * (double)(M * N * K * bs), t, tp, bt, btp, rate;
	enum peak pk = kernel_peak(kind);
	/* a CPU without AVX2 has no peak loop to compare the generic kernel with */
	int have_peak = peak_avail(pk);
	struct frac f;
	char shape[64];

	run_alloc(&r);
	t = median_time(run_calls, &r, 3);
	r.calls = t > 0 ? (int)(KERNEL_SECONDS / t) + 1 : 1;
	median_pair(run_calls, &r, have_peak ? peak_fn[pk] : no_peak, NULL, reps, &t, &tp, &bt,
		    &btp);
	rate = ops * r.calls / t;
	f.med = have_peak ? rate / (peak_ops[pk] / tp) : 0;
	f.best = have_peak ? ops * r.calls / bt / (peak_ops[pk] / btp) : 0;
	snprintf(shape, sizeof(shape), "%lldx%lldx%lld bs%lld", (long long)M, (long long)N,
		 (long long)K, (long long)bs);
	printf("%-8s %-14s %-20s %9.1f ", kname[kind],
	       narrow_b && kind == HGC_RT_U8S8 ? "(B in +-64)" : hgc_rt_kernel_name(kind),
	       shape, rate * 1e-9);
	if (have_peak)
		printf("%7.3f %6.3f  %s\n", f.med, f.best, peak_names[pk]);
	else
		printf("%7s %6s  (no %s)\n", "-", "-", peak_names[pk]);
	run_free(&r);
	return f;
}

/*
 * Every kind at the ISA in use on MICROKERNELS.md's in-cache blocks (32x64,
 * 64x64, 48x48; K 64 and 128; batch 1 and 4), then a tail shape (edge rows
 * and a masked column vector); a mean over the blocks per kind.
 */
static void bench_kinds(int reps)
{
	static const int64_t blocks[][2] = {{32, 64}, {64, 64}, {48, 48}};
	static const int64_t ks[] = {64, 128}, batches[] = {1, 4};
	struct frac f, sum;
	int k, b, i, j, n;

	for (k = 0; k < HGC_RT_NKIND; k++) {
		sum = (struct frac){0, 0};
		n = 0;
		for (b = 0; b < 3; b++)
			for (i = 0; i < 2; i++)
				for (j = 0; j < 2; j++, n++) {
					f = bench_shape((enum hgc_rt_kind)k, blocks[b][0],
							blocks[b][1], ks[i], batches[j], reps);
					sum.med += f.med;
					sum.best += f.best;
				}
		printf("%-8s %-14s %-20s %9s %7.3f %6.3f  mean of the %d blocks above\n", "",
		       narrow_b && k == HGC_RT_U8S8 ? "(B in +-64)"
						    : hgc_rt_kernel_name((enum hgc_rt_kind)k),
		       "mean", "", sum.med / n, sum.best / n, n);
		bench_shape((enum hgc_rt_kind)k, 61, 40, 128, 4, reps);
		if (k == HGC_RT_U8S8)
			bench_shape((enum hgc_rt_kind)k, 128, 16, 256, 4, reps);
	}
}

/* int8 again with B in [-64, 64] (the AVX2 kernel's vpmaddubsw path). */
static void bench_narrow_int8(int reps)
{
	static const int64_t blocks[][2] = {{32, 64}, {64, 64}, {48, 48}};
	static const int64_t ks[] = {64, 128}, batches[] = {1, 4};
	struct frac f, sum = {0, 0};
	int b, i, j, n = 0;

	narrow_b = 1;
	for (b = 0; b < 3; b++)
		for (i = 0; i < 2; i++)
			for (j = 0; j < 2; j++, n++) {
				f = bench_shape(HGC_RT_U8S8, blocks[b][0], blocks[b][1], ks[i],
						batches[j], reps);
				sum.med += f.med;
				sum.best += f.best;
			}
	printf("%-8s %-14s %-20s %9s %7.3f %6.3f  mean of the %d blocks above\n", "",
	       "(B in +-64)", "mean", "", sum.med / n, sum.best / n, n);
	bench_shape(HGC_RT_U8S8, 61, 40, 128, 4, reps);
	bench_shape(HGC_RT_U8S8, 128, 16, 256, 4, reps);
	narrow_b = 0;
}

/*
 * The f32 calls ResNet-50's convolutions make (conv_direct, mb 4, one
 * thread; shapes read from the calls with gdb): a row of OWB output pixels
 * by a 16-channel OC block, one 16-channel IC block per batch element, the
 * 3x3 taps as the batch (res2a/res3a 28, res4a 14, res5a 7 pixels); the
 * 1x1 convolutions' 4 IC blocks of 64 (M 7 at res5); conv1's 49 taps of 3
 * channels.  Dense leading dimensions here; beta 0.
 */
static void bench_conv_calls(int reps)
{
	static const int64_t shapes[][4] = {
		{28, 16, 16, 9}, {14, 16, 16, 9}, {7, 16, 16, 9}, {7, 16, 64, 4},
		{28, 16, 64, 4}, {28, 16, 3, 49}, {3, 16, 256, 4},
	};
	size_t i;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		bench_shape(HGC_RT_F32, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3],
			    reps);
}

/* The median and the fastest of reps timings of r's calls, per call. */
static void call_cost(struct run *r, int reps, double *med, double *best)
{
	double *t = malloc(sizeof(double) * (size_t)reps), t0;
	int i;

	run_alloc(r);
	run_calls(r);
	for (i = 0; i < reps; i++) {
		t0 = now();
		run_calls(r);
		t[i] = (now() - t0) / r->calls;
	}
	qsort(t, (size_t)reps, sizeof(double), cmp_double);
	*med = t[reps / 2];
	*best = t[0];
	free(t);
	run_free(r);
}

/*
 * Per-call cost of f32 calls: 1x1x1 and 16x16x16 in ns, 64x64x64 bs4 in
 * us, as median / fastest (wall time: on a busy machine the median counts
 * time the core spent on other work).
 */
static void bench_overhead(int reps)
{
	struct run runs[3] = {
		{HGC_RT_F32, 1, 1, 1, 1, NULL, NULL, NULL, 2000},
		{HGC_RT_F32, 16, 16, 16, 1, NULL, NULL, NULL, 500},
		{HGC_RT_F32, 64, 64, 64, 4, NULL, NULL, NULL, 5},
	};
	double med[3], best[3];
	int i;

	for (i = 0; i < 3; i++)
		call_cost(&runs[i], reps, &med[i], &best[i]);
	printf("call cost at %s, median / fastest: 1x1x1 bs1 %.1f / %.1f ns, "
	       "16x16x16 bs1 %.1f / %.1f ns, 64x64x64 bs4 %.2f / %.2f us\n",
	       hgc_rt_isa_name(hgc_rt_isa()), med[0] * 1e9, best[0] * 1e9, med[1] * 1e9,
	       best[1] * 1e9, med[2] * 1e6, best[2] * 1e6);
}

/* The 1-minute load average, to judge a run on a shared machine. */
static void print_load(const char *when)
{
	double l[1];

	if (getloadavg(l, 1) == 1)
		printf("load average %s: %.2f\n", when, l[0]);
}

/* Pin this thread to the core it runs on. */
static void pin_thread(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
}

/* A shape argument: [kind:]MxNxK/BS with M, N, K, BS at least 1 and K a
   multiple of the kind's k group; false if arg is not one. */
struct shape_arg {
	enum hgc_rt_kind kind;
	long long m, n, k, bs;
};

static bool parse_shape(const char *arg, struct shape_arg *sa)
{
	static const char *const kinds[] = {"f32:", "u8s8:", "bf16:"};
	static const int group[] = {1, 4, 2};
	const long long most = 1 << 24;
	int i, used = -1;

	sa->kind = HGC_RT_F32;
	for (i = 0; i < 3; i++)
		if (!strncmp(arg, kinds[i], strlen(kinds[i]))) {
			sa->kind = (enum hgc_rt_kind)i;
			arg += strlen(kinds[i]);
		}
	if (sscanf(arg, "%lldx%lldx%lld/%lld%n", &sa->m, &sa->n, &sa->k, &sa->bs, &used) != 4 ||
	    arg[used])
		return false;
	if (sa->m < 1 || sa->n < 1 || sa->k < 1 || sa->bs < 1 || sa->m > most || sa->n > most ||
	    sa->k > most || sa->bs > 4096)
		return false;
	return sa->k % group[sa->kind] == 0 && sa->m * sa->k <= most && sa->k * sa->n <= most &&
	       sa->m * sa->n <= most;
}

/* Whether every argument from argv[first] on is a shape; says which is not. */
static bool shapes_ok(int argc, char **argv, int first)
{
	struct shape_arg sa;
	int i;

	for (i = first; i < argc; i++)
		if (!parse_shape(argv[i], &sa)) {
			fprintf(stderr, "ukernel: '%s' is not a shape: [f32:|u8s8:|bf16:]MxNxK/BS "
				"(K a multiple of 4 for u8s8, of 2 for bf16; A, B and C at most "
				"16M elements each, BS at most 4096)\n", argv[i]);
			return false;
		}
	return true;
}

/* The shapes of argv[first..], each at the best ISA. */
static void bench_args(int argc, char **argv, int first, int reps)
{
	struct shape_arg sa;
	int i;

	for (i = first; i < argc; i++) {
		parse_shape(argv[i], &sa);
		bench_shape(sa.kind, sa.m, sa.n, sa.k, sa.bs, reps);
	}
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 51, k;
	int conv_only = argc > 2 && !strcmp(argv[2], "conv");
	int shapes = argc > 2 && !conv_only;
	enum hgc_isa best = hgc_rt_best_isa(hgc_rt_cpu()), isa;

	if (shapes && !shapes_ok(argc, argv, 2))
		return 2;
	if (reps < 3)
		reps = 3;
	pin_thread();
	print_load("before");
	measure_peaks(reps);
	printf("\n%-8s %-14s %-20s %9s %7s %6s  %s\n", "kernel", "isa", "MxNxK batch",
	       "G(FL)OP/s", "of peak", "best", "peak instruction");
	if (shapes) {
		bench_args(argc, argv, 2, reps);
		print_load("after");
		return 0;
	}
	if (best >= HGC_ISA_AVX2) {
		hgc_rt_set_isa(HGC_ISA_AVX2);
		bench_conv_calls(reps);
		hgc_rt_set_isa(best);
	}
	if (conv_only) {
		print_load("after");
		return 0;
	}
	for (isa = best; (int)isa >= (int)HGC_ISA_AVX2; isa--) {
		hgc_rt_set_isa(isa);
		bench_kinds(reps);
		if (isa == HGC_ISA_AVX512 && hgc_rt_has_amx()) {
			/* the zmm int8 and bf16 kernels, which AMX replaced above */
			hgc_rt_set_amx(0);
			bench_kinds(reps);
			hgc_rt_set_amx(1);
		}
		if (!strcmp(hgc_rt_kernel_name(HGC_RT_U8S8), "avx2-vpmaddwd"))
			bench_narrow_int8(reps);
	}
	hgc_rt_set_isa(HGC_ISA_GENERIC);
	for (k = 0; k < HGC_RT_NKIND; k++)
		bench_shape((enum hgc_rt_kind)k, 64, 64, 128, 4, 5);
	hgc_rt_set_isa(best);
	printf("\n");
	bench_overhead(reps);
	print_load("after");
	return 0;
}
