/*
 * brgemm.c: the brgemm entry points of runtime.h.  Each call is checked,
 * its trivial cases (empty C, empty reduction) are done here, the stride
 * forms become address arrays a chunk at a time, and the rest goes to the
 * kernel of the ISA in use (cpu.c), looked up per call: a few loads.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/runtime_int.h"

/* Batch elements per chunk of addresses built for the stride forms. */
#define STRD_CHUNK 32

/* Kernels per ISA and kind; ORDER: enum hgc_isa, enum hgc_rt_kind. */
static hgc_rt_kernel_fn *const kernels[3][HGC_RT_NKIND] = {
	[HGC_ISA_GENERIC] = {hgc_rt_f32_generic, hgc_rt_u8s8_generic, hgc_rt_bf16_generic},
	[HGC_ISA_AVX2] = {hgc_rt_f32_avx2, hgc_rt_u8s8_avx2, hgc_rt_bf16_avx2},
	[HGC_ISA_AVX512] = {hgc_rt_f32_avx512, hgc_rt_u8s8_avx512, hgc_rt_bf16_avx512},
};

static const char *const kind_names[HGC_RT_NKIND] = {"f32", "u8s8s32", "bf16"};
static const int kgroup[HGC_RT_NKIND] = {1, 4, 2};

/* The ISA whose kernel runs kind: AVX-512 without VNNI or BF16 falls back to AVX2. */
static enum hgc_isa kernel_isa(enum hgc_rt_kind kind)
{
	enum hgc_isa isa = hgc_rt_isa();
	const struct hgc_rt_cpu *p = hgc_rt_cpu();

	if (isa == HGC_ISA_AVX512 && ((kind == HGC_RT_U8S8 && !p->avx512_vnni) ||
				      (kind == HGC_RT_BF16 && !p->avx512_bf16)))
		return HGC_ISA_AVX2;
	return isa;
}

/* Whether kind runs on AMX tiles. */
static int on_amx(enum hgc_rt_kind kind)
{
	return hgc_rt_has_amx() && ((kind == HGC_RT_U8S8 && hgc_rt_cpu()->amx_int8) ||
				    (kind == HGC_RT_BF16 && hgc_rt_cpu()->amx_bf16));
}

/* The kernel in use for kind: int8 and bf16 on AMX where they may. */
hgc_rt_kernel_fn *hgc_rt_kernel(enum hgc_rt_kind kind)
{
	if (on_amx(kind))
		return kind == HGC_RT_U8S8 ? hgc_rt_u8s8_amx : hgc_rt_bf16_amx;
	return kernels[kernel_isa(kind)][kind];
}

/* What runs kind, for reports: the ISA and, for int8 and bf16, the instruction. */
const char *hgc_rt_kernel_name(enum hgc_rt_kind kind)
{
	static const char *const names[3][HGC_RT_NKIND] = {
		[HGC_ISA_GENERIC] = {"generic", "generic", "generic"},
		[HGC_ISA_AVX2] = {"avx2", "avx2-vpmaddwd", "avx2-fma"},
		[HGC_ISA_AVX512] = {"avx512", "avx512-vnni", "avx512-bf16"},
	};

	if (on_amx(kind))
		return kind == HGC_RT_U8S8 ? "avx512-amx" : "avx512-amx-bf16";
	return names[kernel_isa(kind)][kind];
}

/* A broken contract in generated code: say what and stop, like an assertion. */
static void bad_call(enum hgc_rt_kind kind, const char *what, long long v)
{
	fprintf(stderr, "hgc: brgemm %s: %s %lld\n", kind_names[kind], what, v);
	abort();
}

/* Zero C unless it accumulates: the result of an empty reduction. */
static void empty_sum(const struct hgc_rt_call *c)
{
	int64_t m;

	if (c->beta)
		return;
	for (m = 0; m < c->M; m++)
		memset((char *)c->C + m * c->ldc * 4, 0, (size_t)c->N * 4);
}

/* The post-ops on a block of C (runtime_int.h). */
void hgc_rt_post(const struct hgc_rt_call *c, int64_t m0, int64_t rows, int64_t n0, int64_t cols)
{
	const float *bias = c->bias ? c->bias + n0 : NULL;
	int64_t i, j;

	for (i = 0; i < rows; i++) {
		float *p = (float *)c->C + (m0 + i) * c->ldc + n0;

		for (j = 0; j < cols; j++) {
			float v = bias ? p[j] + bias[j] : p[j];

			p[j] = c->relu && v < 0 ? 0.0f : v;
		}
	}
}

/* Whether kernel k applies a call's post-ops itself: the tile kernels do,
   each tile right after its sums (brgemm_tile.inc), while it is in
   registers or in L1. */
static int post_in_kernel(hgc_rt_kernel_fn *k)
{
	return k == hgc_rt_f32_avx512 || k == hgc_rt_f32_avx2;
}

/* Stop on a call that breaks the contract (runtime.h); whether its kernel has sums
   to compute (a batch element and some k). */
static int checked(enum hgc_rt_kind kind, const struct hgc_rt_call *c)
{
	if (c->K < 0 || c->K % kgroup[kind])
		bad_call(kind, "K must be a multiple of the packing (pad with zeros), got", c->K);
	if (c->beta != 0 && c->beta != 1)
		bad_call(kind, "beta must be 0 or 1, got", c->beta);
	if ((c->bias || c->relu) && kind != HGC_RT_F32)
		bad_call(kind, "post-ops are for f32 calls only; relu", c->relu);
	return c->bs > 0 && c->K > 0;
}

/*
 * Whether an f32 call's batch is one longer reduction: each element's A
 * right after the last one's along k (K elements on, the same lda) and its
 * B right after the last one's K rows.  That is what the templates pass
 * for a block of C over k blocks of a row-major A and of B packed per
 * column block (matmul_batch_plain, matmul_plain ...: 2048^3 passes 16
 * elements of K = 128).  int8 and bf16 keep their batches: the AMX paths
 * choose their blocking by K and bs (brgemm_amx.c).
 */
int hgc_rt_one_reduction(enum hgc_rt_kind kind, const struct hgc_rt_call *c)
{
	int64_t a = c->K * 4, b = c->K * c->ldb * 4;

	if (kind != HGC_RT_F32 || c->bs < 2)
		return 0;
	for (int64_t i = 1; i < c->bs; i++)
		if ((const char *)c->A[i] != (const char *)c->A[i - 1] + a ||
		    (const char *)c->B[i] != (const char *)c->B[i - 1] + b)
			return 0;
	return 1;
}

/* This core's L2 in bytes (1 MiB where the C library cannot say), read once. */
int64_t hgc_rt_l2_bytes(void)
{
	static int64_t l2;	/* atomics: calls run on every thread */
	int64_t n = __atomic_load_n(&l2, __ATOMIC_RELAXED);

	if (!n) {
		long s = sysconf(_SC_LEVEL2_CACHE_SIZE);

		n = s > 0 ? s : 1 << 20;
		__atomic_store_n(&l2, n, __ATOMIC_RELAXED);
	}
	return n;
}

/*
 * The k of each part an f32 reduction runs in (K: all at once).  A row tile
 * walks all of the call's B and its rows of A: when A's and B's blocks
 * together pass half of L2, the tiles after the first find less of them in
 * L2 than they read.  The call then runs as parts of k, one after another
 * over all its tiles, each part's blocks within half of L2 and C stored and
 * reloaded between them: the same sums in the same order, so the same bits
 * wherever the tiles keep one chain of sums per accumulator (all but AVX2's
 * narrow tiles: t/047).  matmul_batch_plain's 2048^3 calls (128x64, K =
 * 2048: 1.5 MiB) run as two of K = 1024: hgc-bench, one thread, alternated,
 * 76.8-77.2 ms as one call, 75.4-75.5 in two parts, 75.7 in four (joining
 * the batch alone changed nothing measurable).
 */
int64_t hgc_rt_k_part(const struct hgc_rt_call *c)
{
	int64_t bytes = (c->M + c->N) * c->K * 4, half = hgc_rt_l2_bytes() / 2, parts, kp;

	if (bytes <= half)
		return c->K;
	parts = (bytes + half - 1) / half;
	kp = (c->K + parts - 1) / parts;
	return (kp + 15) / 16 * 16;	/* whole lines of A's rows */
}

/* Run an f32 call of one batch element on kernel k in parts of kp k, its
   post-ops with the last. */
static void run_parts(hgc_rt_kernel_fn *k, const struct hgc_rt_call *c, int64_t kp)
{
	struct hgc_rt_call part = *c;
	const void *a, *b;
	int64_t k0;

	part.A = &a;
	part.B = &b;
	for (k0 = 0; k0 < c->K; k0 += kp) {
		a = (const float *)c->A[0] + k0;
		b = (const float *)c->B[0] + k0 * c->ldb;
		part.K = c->K - k0 < kp ? c->K - k0 : kp;
		part.bias = k0 + part.K == c->K ? c->bias : NULL;
		part.relu = k0 + part.K == c->K ? c->relu : 0;
		k(&part);
		part.beta = 1;
	}
}

/* Run a checked call of kind on kernel k: an f32 batch that is one
   reduction as one element, in parts where it is large. */
static void run(enum hgc_rt_kind kind, hgc_rt_kernel_fn *k, const struct hgc_rt_call *c)
{
	struct hgc_rt_call one;
	int64_t kp;

	if (kind != HGC_RT_F32) {
		k(c);
		return;
	}
	if (hgc_rt_one_reduction(kind, c)) {
		one = *c;
		one.K = c->K * c->bs;
		one.bs = 1;
		c = &one;
	}
	kp = c->bs == 1 ? hgc_rt_k_part(c) : c->K;
	if (kp < c->K)
		run_parts(k, c, kp);
	else
		k(c);
}

/* Check a call, do its trivial cases and run the rest with the kernel in use. */
static void dispatch(enum hgc_rt_kind kind, const struct hgc_rt_call *c)
{
	hgc_rt_kernel_fn *k;
	int post = c->bias || c->relu;

	if (c->M <= 0 || c->N <= 0)
		return;
	if (!checked(kind, c)) {
		empty_sum(c);
	} else {
		k = hgc_rt_kernel(kind);
		run(kind, k, c);
		if (post_in_kernel(k))
			return;
	}
	if (post)
		hgc_rt_post(c, 0, c->M, 0, c->N);
}

/* The stride forms: address arrays a chunk of the batch at a time, accumulating after the first. */
static void dispatch_strd(enum hgc_rt_kind kind, const void *A, const void *B, int64_t sa,
			  int64_t sb, const struct hgc_rt_call *call)
{
	const void *pa[STRD_CHUNK], *pb[STRD_CHUNK];
	struct hgc_rt_call c = *call;
	int64_t b0, i, n;

	if (call->bs <= 0) {
		dispatch(kind, call);
		return;
	}
	c.A = pa;
	c.B = pb;
	for (b0 = 0; b0 < call->bs; b0 += n) {
		n = call->bs - b0 < STRD_CHUNK ? call->bs - b0 : STRD_CHUNK;
		for (i = 0; i < n; i++) {
			pa[i] = (const char *)A + (b0 + i) * sa;
			pb[i] = (const char *)B + (b0 + i) * sb;
		}
		c.bs = n;
		dispatch(kind, &c);
		c.beta = 1;
	}
}

/* f32 brgemm over address arrays. */
void hgc_brgemm_f32(const float *const *A, const float *const *B, float *C, int64_t bs,
		    int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
		    int beta)
{
	struct hgc_rt_call c = {(const void *const *)A, (const void *const *)B, C, bs, M, N, K,
				lda, ldb, ldc, beta, NULL, 0, NULL, 0};

	dispatch(HGC_RT_F32, &c);
}

/* f32 brgemm over address arrays, then the post-ops (runtime.h). */
void hgc_brgemm_f32_post(const float *const *A, const float *const *B, float *C, int64_t bs,
			 int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
			 int beta, const float *bias, int relu)
{
	struct hgc_rt_call c = {(const void *const *)A, (const void *const *)B, C, bs, M, N, K,
				lda, ldb, ldc, beta, NULL, 0, bias, relu != 0};

	dispatch(HGC_RT_F32, &c);
}

/* f32 brgemm, batch elements stride_a and stride_b bytes apart. */
void hgc_brgemm_f32_strd(const float *A, const float *B, float *C, int64_t bs,
			 int64_t stride_a, int64_t stride_b, int64_t M, int64_t N, int64_t K,
			 int64_t lda, int64_t ldb, int64_t ldc, int beta)
{
	struct hgc_rt_call c = {NULL, NULL, C, bs, M, N, K, lda, ldb, ldc, beta, NULL, 0, NULL, 0};

	dispatch_strd(HGC_RT_F32, A, B, stride_a, stride_b, &c);
}

/* u8 x s8 -> s32 brgemm over address arrays, B packed by 4 k. */
void hgc_brgemm_u8s8s32(const uint8_t *const *A, const int8_t *const *B, int32_t *C,
			int64_t bs, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb,
			int64_t ldc, int beta)
{
	struct hgc_rt_call c = {(const void *const *)A, (const void *const *)B, C, bs, M, N, K,
				lda, ldb, ldc, beta, NULL, 0, NULL, 0};

	dispatch(HGC_RT_U8S8, &c);
}

/* u8 x s8 -> s32 brgemm, batch elements stride_a and stride_b bytes apart. */
void hgc_brgemm_u8s8s32_strd(const uint8_t *A, const int8_t *B, int32_t *C, int64_t bs,
			     int64_t stride_a, int64_t stride_b, int64_t M, int64_t N,
			     int64_t K, int64_t lda, int64_t ldb, int64_t ldc, int beta)
{
	struct hgc_rt_call c = {NULL, NULL, C, bs, M, N, K, lda, ldb, ldc, beta, NULL, 0, NULL, 0};

	dispatch_strd(HGC_RT_U8S8, A, B, stride_a, stride_b, &c);
}

/* u8 x s8 brgemm, then its requantization into Y (runtime.h): with AMX each
   block's while the next multiplies, else the whole call's after it, from C. */
void hgc_brgemm_u8s8_q(const uint8_t *const *A, const int8_t *const *B, int32_t *C, int64_t bs,
		       int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
		       int beta, void *Y, int64_t ldy, int64_t steps, const float *v0,
		       const float *v1, const float *v2, const float *v3)
{
	struct hgc_rt_call c = {(const void *const *)A, (const void *const *)B, C, bs, M, N, K,
				lda, ldb, ldc, beta, NULL, 0, NULL, 0};
	const float *const v[HGC_RT_Q_STEPS] = {v0, v1, v2, v3};
	struct hgc_rt_requant q;

	if (hgc_rt_requant_init(&q, Y, ldy, steps, v) < 0)
		bad_call(HGC_RT_U8S8, "malformed requantization steps", (long long)steps);
	if (M <= 0 || N <= 0)
		return;
	if (checked(HGC_RT_U8S8, &c) && on_amx(HGC_RT_U8S8) && hgc_rt_u8s8_amx_q(&c, &q))
		return;
	dispatch(HGC_RT_U8S8, &c);
	if (hgc_rt_isa() == HGC_ISA_AVX512)
		hgc_rt_requant_rows_avx512(&q, C, ldc, 0, M, 0, N);
	else
		hgc_rt_requant_rows(&q, C, ldc, 0, M, 0, N);
}

/* bf16 brgemm over address arrays, B packed by 2 k, f32 C. */
void hgc_brgemm_bf16(const uint16_t *const *A, const uint16_t *const *B, float *C, int64_t bs,
		     int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
		     int beta)
{
	struct hgc_rt_call c = {(const void *const *)A, (const void *const *)B, C, bs, M, N, K,
				lda, ldb, ldc, beta, NULL, 0, NULL, 0};

	dispatch(HGC_RT_BF16, &c);
}

/* bf16 brgemm, batch elements stride_a and stride_b bytes apart. */
void hgc_brgemm_bf16_strd(const uint16_t *A, const uint16_t *B, float *C, int64_t bs,
			  int64_t stride_a, int64_t stride_b, int64_t M, int64_t N, int64_t K,
			  int64_t lda, int64_t ldb, int64_t ldc, int beta)
{
	struct hgc_rt_call c = {NULL, NULL, C, bs, M, N, K, lda, ldb, ldc, beta, NULL, 0, NULL, 0};

	dispatch_strd(HGC_RT_BF16, A, B, stride_a, stride_b, &c);
}
