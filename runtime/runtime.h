/*
 * runtime.h: what generated code calls at run time.  A leaf: it knows
 * nothing of the compiler, so a compiled graph runs without LLVM.
 *
 * brgemm: batch-reduce GEMM.  C[M x N] = beta * C + sum over b < bs of
 * A[b] (M x K, row-major, leading dimension lda) times B[b] (K x N,
 * row-major, leading dimension ldb), with beta 0 (overwrite) or 1
 * (accumulate).  int8 takes u8 A and s8 B packed VNNI-style (K/4 rows of N
 * groups of 4 k values; ldb counts int8 elements per packed row, i.e. 4*N
 * when dense), accumulating into s32.  bf16 takes B packed by pairs of k
 * (ldb = 2*N dense) and accumulates into f32.  K must be a multiple of 4
 * (int8) or 2 (bf16): callers pad with zeros.  The _strd forms take one
 * base pointer and a byte stride between batch elements instead of arrays.
 */
#ifndef HGC_RUNTIME_H
#define HGC_RUNTIME_H

#include <stdint.h>

enum hgc_isa {
	HGC_ISA_GENERIC,	/* portable C */
	HGC_ISA_AVX2,		/* AVX2 + FMA (+ AVX-VNNI when present) */
	HGC_ISA_AVX512,		/* AVX-512F/BW/VL (+ VNNI, BF16 when present) */
};

/* cpu.c: the ISA in use: the best the CPU has, or HGC_ISA=avx512|avx2|generic. */
enum hgc_isa hgc_rt_isa(void);
const char *hgc_rt_isa_name(enum hgc_isa isa);
int hgc_rt_has_vnni(void);	/* u8 x s8 dot products at the chosen ISA */
int hgc_rt_has_amx(void);	/* AMX tiles at the chosen ISA (HGC_AMX=off: never) */
int hgc_rt_set_amx(int on);	/* allow AMX or not; whether it is now in use */
int hgc_rt_has_bf16(void);	/* vdpbf16ps at the chosen ISA */
/* Force an ISA (tests, benchmarks), clamped to what the CPU has; returns the ISA now in use. */
enum hgc_isa hgc_rt_set_isa(enum hgc_isa isa);

/* brgemm.c: dispatch to the chosen ISA's microkernels (tails handled). */
void hgc_brgemm_f32(const float *const *A, const float *const *B, float *C, int64_t bs,
		    int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
		    int beta);
/* The f32 call, then its post-ops on the whole result: C[m][n] + bias[n]
   (bias NULL: none), then max(x, 0) if relu (a NaN stays).  For the
   call that completes C's sums: a fused MatMul's bias and ReLU. */
void hgc_brgemm_f32_post(const float *const *A, const float *const *B, float *C, int64_t bs,
			 int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
			 int beta, const float *bias, int relu);
void hgc_brgemm_f32_strd(const float *A, const float *B, float *C, int64_t bs,
			 int64_t stride_a, int64_t stride_b, int64_t M, int64_t N, int64_t K,
			 int64_t lda, int64_t ldb, int64_t ldc, int beta);
void hgc_brgemm_u8s8s32(const uint8_t *const *A, const int8_t *const *B, int32_t *C,
			int64_t bs, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb,
			int64_t ldc, int beta);
void hgc_brgemm_u8s8s32_strd(const uint8_t *A, const int8_t *B, int32_t *C, int64_t bs,
			     int64_t stride_a, int64_t stride_b, int64_t M, int64_t N,
			     int64_t K, int64_t lda, int64_t ldb, int64_t ldc, int beta);
/*
 * The u8 x s8 call, then its sums requantized into an 8-bit Y: for each m <
 * M, n < N, f = (float)(beta * C[m][n] + sum), then up to four steps in
 * order, each f = f OP v (v = v_i[n] for a per-column step, else v_i[0]; a
 * relu step is f = f < 0 ? 0 : f and reads nothing), and Y[m * ldy + n] =
 * round(f) half to even, saturated to u8 (or s8 with HGC_RT_Q_S8), NaN 0.
 * Step i is (steps >> 4 i) & 15: an HGC_RT_Q_* op, | HGC_RT_Q_COL for per
 * column; 0 ends the list.  For the call that completes C's sums: an int8
 * MatMul's epilogue (fold_quant).  C's block is scratch: after the call
 * its contents are unspecified (with AMX the sums never reach it).
 */
#define HGC_RT_Q_STEPS 4
enum {
	HGC_RT_Q_MUL = 1, HGC_RT_Q_DIV = 2, HGC_RT_Q_ADD = 3, HGC_RT_Q_SUB = 4, HGC_RT_Q_RELU = 5,
	HGC_RT_Q_COL = 8, HGC_RT_Q_S8 = 1 << 16,
};
void hgc_brgemm_u8s8_q(const uint8_t *const *A, const int8_t *const *B, int32_t *C, int64_t bs,
		       int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
		       int beta, void *Y, int64_t ldy, int64_t steps, const float *v0,
		       const float *v1, const float *v2, const float *v3);
void hgc_brgemm_bf16(const uint16_t *const *A, const uint16_t *const *B, float *C, int64_t bs,
		     int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
		     int beta);
void hgc_brgemm_bf16_strd(const uint16_t *A, const uint16_t *B, float *C, int64_t bs,
			  int64_t stride_a, int64_t stride_b, int64_t M, int64_t N, int64_t K,
			  int64_t lda, int64_t ldb, int64_t ldc, int beta);

/* parallel.c: what compiled code calls around the kernels. */
/* The outlined body of a parallel for: iteration i, its captured values in ctx. */
typedef void hgc_rt_body_fn(void *ctx, int64_t i);
/* body(ctx, i) for i in [0, n) on the caller's OpenMP team, schedule(static). */
void hgc_rt_parallel_for(hgc_rt_body_fn *body, void *ctx, int64_t n);
/* scratch.c: 64-byte aligned scratch memory (size rounded up to 64 bytes), and its
   release; large freed blocks are pooled for the next run (hgc_rt_scratch_trim
   empties the pool; hgc_rt_scratch_pooled says what it holds). */
void *hgc_rt_scratch_alloc(int64_t bytes);
void hgc_rt_scratch_free(void *p);
void hgc_rt_scratch_trim(void);
void hgc_rt_scratch_pooled(int *blocks, int64_t *bytes);
/* constbuf.c: zeroed, page-aligned memory for a module's large constants, mapped
   from the kernel so that nothing touches it before init fills it. */
void *hgc_rt_const_alloc(int64_t bytes);
void hgc_rt_const_free(void *p, int64_t bytes);

#endif
