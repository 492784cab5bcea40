/*
 * runtime_int.h: what the runtime's own files share (and tests may use):
 * the normalized brgemm call, the per-ISA kernel entry points and the CPU
 * feature probe.  Not for generated code: it calls runtime.h only.
 */
#ifndef HGC_RUNTIME_INT_H
#define HGC_RUNTIME_INT_H

#include <stdint.h>
#include <stdio.h>

#include "runtime/runtime.h"

/* The data kinds of brgemm; ORDER: kernel tables in brgemm.c. */
enum hgc_rt_kind {
	HGC_RT_F32,	/* f32 x f32 -> f32 */
	HGC_RT_U8S8,	/* u8 x s8 (B packed by 4 k) -> s32 */
	HGC_RT_BF16,	/* bf16 x bf16 (B packed by 2 k) -> f32 */
	HGC_RT_NKIND
};

/*
 * One brgemm call after dispatch: batch address arrays only (the stride
 * forms are turned into arrays in chunks), strides in elements as in
 * runtime.h.  Each kernel reads the element types its kind implies.
 */
struct hgc_rt_call {
	const void *const *A;	/* bs pointers to M x K blocks */
	const void *const *B;	/* bs pointers to K x N blocks (packed for int8, bf16) */
	void *C;		/* M x N, f32 or s32 */
	int64_t bs, M, N, K;	/* bs >= 1, M, N, K >= 1, K a multiple of the kind's k group */
	int64_t lda, ldb, ldc;	/* in elements of A, B and C */
	int beta;		/* 0: overwrite C, 1: accumulate into C */
	/* Set by run_blocks (brgemm_tile.inc) for the asm tiles: where a tile asks
	   for the next call's B into L2, a line per trip of four k steps, and how
	   far on the next tile starts; NULL: nowhere.  Callers leave them 0. */
	const char *pf_b;
	int64_t pf_chunk;
	/* Post-ops on the call's result (f32 only; hgc_brgemm_f32_post): bias[n]
	   added to column n (NULL: none), then max(x, 0) where relu. */
	const float *bias;
	int relu;
};

/*
 * The post-ops of an f32 call on rows [m0, m0 + rows) and columns [n0, n0 +
 * cols) of C, after their sums are complete: C + bias[n] (one rounding, as
 * a separate add), then x < 0 ? 0 : x (a NaN stays, -0 stays).  The kernels
 * that keep the post-ops in registers (the asm tiles) compute the same.
 */
void hgc_rt_post(const struct hgc_rt_call *c, int64_t m0, int64_t rows, int64_t n0, int64_t cols);

/*
 * brgemm.c: how an f32 call runs.  Whether its batch is one reduction (each
 * element's A and B right after the last one's along k: run as one element
 * of K * bs); the k of each part a call of one element runs in (K: all at
 * once; less where its A and B blocks pass half of this core's L2).
 */
int hgc_rt_one_reduction(enum hgc_rt_kind kind, const struct hgc_rt_call *c);
int64_t hgc_rt_k_part(const struct hgc_rt_call *c);
int64_t hgc_rt_l2_bytes(void);

/* A microkernel: runs one whole call for one kind. */
typedef void hgc_rt_kernel_fn(const struct hgc_rt_call *c);

/*
 * A call's requantization (runtime.h, hgc_brgemm_u8s8_q): its steps as
 * given, except that a division by a scalar power of two whose reciprocal
 * is a normal float became a multiply by it (the same result, bit for bit)
 * and one by 1 was dropped; n steps in op[], per_col[] and v[].
 */
struct hgc_rt_requant {
	void *Y;
	int64_t ldy;
	int n, s8;
	int op[HGC_RT_Q_STEPS], per_col[HGC_RT_Q_STEPS];
	const float *v[HGC_RT_Q_STEPS];
	float recip[HGC_RT_Q_STEPS];	/* a division's multiplier, where it became one */
};

/* requant.c: the steps decoded; -1 on a malformed list (an unknown op, a
   step after the end, an operand missing). */
int hgc_rt_requant_init(struct hgc_rt_requant *q, void *Y, int64_t ldy, int64_t steps,
			const float *const v[HGC_RT_Q_STEPS]);
/* Rows [m0, m0 + rows) and columns [n0, n0 + cols) of s32 sums at src (lds
   elements a row, src at (m0, n0)) requantized into q's Y: portable C, and
   with AVX-512 (requant_avx512.c) where the ISA has it. */
void hgc_rt_requant_rows(const struct hgc_rt_requant *q, const int32_t *src, int64_t lds,
			 int64_t m0, int64_t rows, int64_t n0, int64_t cols);
void hgc_rt_requant_rows_avx512(const struct hgc_rt_requant *q, const int32_t *src,
				int64_t lds, int64_t m0, int64_t rows, int64_t n0, int64_t cols);
/* brgemm_amx.c: the call and its requantization with AMX, each 32x32
   block's requantized while the next one multiplies; 0 when the call's
   shape is not one it takes (rows or columns not in whole blocks of 32, K
   not in chunks of 64, or a call the exact or two-chunk paths run). */
int hgc_rt_u8s8_amx_q(const struct hgc_rt_call *c, const struct hgc_rt_requant *q);

/* What the CPU and the OS offer (cpu.c). */
struct hgc_rt_cpu {
	int avx2;		/* AVX2 + FMA with the ymm state enabled */
	int avx512;		/* AVX-512 F, BW, VL, DQ with the zmm and opmask state enabled */
	int avx512_vnni;	/* vpdpbusd zmm */
	int avx512_bf16;	/* vdpbf16ps zmm */
	int avx_vnni;		/* VEX vpdpbusd ymm (not used by the kernels yet) */
	int amx_int8;		/* AMX tiles with tdpbusd, the state enabled, Linux's leave given */
	int amx_bf16;		/* the same with tdpbf16ps */
};

/* cpu.c */
const struct hgc_rt_cpu *hgc_rt_cpu(void);
enum hgc_isa hgc_rt_best_isa(const struct hgc_rt_cpu *cpu);
enum hgc_isa hgc_rt_isa_choose(const char *env, enum hgc_isa best, FILE *warn);

/* brgemm_generic.c: portable C, one function per kind. */
hgc_rt_kernel_fn hgc_rt_f32_generic, hgc_rt_u8s8_generic, hgc_rt_bf16_generic;

/* brgemm_amx.c: u8 x s8 and bf16 with AMX tiles. */
hgc_rt_kernel_fn hgc_rt_u8s8_amx, hgc_rt_bf16_amx;

/* brgemm_avx2.c: ymm kernels; int8 and bf16 widened first, to vpmaddwd and FMA tiles. */
hgc_rt_kernel_fn hgc_rt_f32_avx2, hgc_rt_u8s8_avx2, hgc_rt_bf16_avx2;

/*
 * brgemm_widen_avx2.c: one chunk of kc k values of A (M rows, lda apart,
 * from its first k) or of packed B (from its first packed row, N columns)
 * into dense rows of 32-bit words for the AVX2 tiles.
 */
typedef void hgc_rt_widen_fn(const void *src, int64_t ld, int64_t rows_or_cols, int64_t kc,
			     uint32_t *dst);
/* bf16 -> f32: A to M x kc words; B to kc rows of N words. */
hgc_rt_widen_fn hgc_rt_widen_bf16_a, hgc_rt_widen_bf16_b;
/* int8 -> s16 pairs (k 2w, 2w + 1 in word w): A to M x kc/2 words; B to kc/2 rows of N. */
hgc_rt_widen_fn hgc_rt_widen_u8_a, hgc_rt_widen_s8_b;
/*
 * Whether packed s8 B (K/4 rows ldb bytes apart, N lanes of 4 k) lets
 * vpmaddubsw multiply it by any u8 exactly: in every pair of k (0, 1 and
 * 2, 3 of each lane) the positive values sum to at most 128 and the
 * negative ones to at least -128, so that 255 times either fits s16.
 */
int hgc_rt_s8_pairs_fit(const void *B, int64_t ldb, int64_t N, int64_t K);

/*
 * next_b.c: whether a call whose B of HGC_RT_LARGE_B bytes or more spans
 * [start, end) continues a stream: start is where the last such call's B on
 * this thread ended.  Remembers end.
 */
#define HGC_RT_LARGE_B ((int64_t)64 << 10)
int hgc_rt_b_stream(const void *start, const char *end);
/* The same for the A of AMX calls (brgemm_amx.c, next_a), with records of its own,
   one per stream (0 .. HGC_RT_A_STREAMS - 1): the bytes of A the stream ran before
   this call, 0 when the call does not continue it. */
#define HGC_RT_A_STREAMS 2
int64_t hgc_rt_a_stream(int stream, const void *start, const char *end);
/* Whether [start, start + bytes) overlaps none of the last four regions this thread
   asked for so (next_b.c); if so, it is remembered as asked for. */
int hgc_rt_fetch_once(const char *start, int64_t bytes);

/*
 * brgemm_avx512.c: zmm kernels; u8s8 needs AVX512-VNNI, bf16 AVX512-BF16.
 * A test build that defines HGC_VEC512_EMU compiles the same file against
 * a portable emulation of its vector layer, under names ending in _emu.
 */
#ifdef HGC_VEC512_EMU
#define hgc_rt_f32_avx512 hgc_rt_f32_avx512_emu
#define hgc_rt_u8s8_avx512 hgc_rt_u8s8_avx512_emu
#define hgc_rt_bf16_avx512 hgc_rt_bf16_avx512_emu
#endif
hgc_rt_kernel_fn hgc_rt_f32_avx512, hgc_rt_u8s8_avx512, hgc_rt_bf16_avx512;

/* brgemm.c */
hgc_rt_kernel_fn *hgc_rt_kernel(enum hgc_rt_kind kind);	/* the kernel in use for kind */
const char *hgc_rt_kernel_name(enum hgc_rt_kind kind);	/* e.g. "avx512-vnni" */

#endif
