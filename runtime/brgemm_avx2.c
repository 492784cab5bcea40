/*
 * brgemm_avx2.c: ymm microkernels (AVX2 + FMA, 16 registers).  f32 uses
 * 6x2 tiles (rows x vectors of 8 columns).  int8 and bf16 first convert
 * their operands, a chunk of the batch at a time, into 32-bit words on the
 * stack (brgemm_widen_avx2.c): bf16 into f32 for the f32 tiles, int8 into
 * pairs of s16 for tiles of vpmaddwd + vpaddd (exact, unlike vpmaddubsw,
 * which saturates on u8 x s8 pairs).  Converting in the k loop instead
 * cost shifts and blends on the vector pipes the FMAs and vpmaddwd need:
 * 0.6 of peak.  A is widened in groups of rows, each just before its
 * tiles run, so that its words are still in L1.  Column tails use
 * vpmaskmovd loads and stores.
 */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime_int.h"

#define VL 8
/* The vector layer: inlined into the tiles, uninstrumented like them (brgemm_tile.inc). */
#define VINLINE static inline __attribute__((always_inline, no_sanitize("address", "undefined")))
#define VEC_HAS_DOT 0
#define VEC_MASK_CHEAP 0
#define VEC_HAS_WIDE 1

typedef __m256i vreg;
typedef __m256i vmask;

/* Lanes 0 .. n-1 set. */
VINLINE vmask vmask_first(int n)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The all-zero vector. */
VINLINE vreg vzero(void)
{
	return _mm256_setzero_si256();
}

/* Unaligned load. */
VINLINE vreg vload(const void *p)
{
	return _mm256_loadu_si256((const __m256i *)p);
}

/* Load the lanes of m, zero the others without touching their memory. */
VINLINE vreg vload_m(const void *p, vmask m)
{
	return _mm256_maskload_epi32((const int *)p, m);
}

/* Unaligned store. */
VINLINE void vstore(void *p, vreg v)
{
	_mm256_storeu_si256((__m256i *)p, v);
}

/* Store the lanes of m only. */
VINLINE void vstore_m(void *p, vmask m, vreg v)
{
	_mm256_maskstore_epi32((int *)p, m, v);
}

/*
 * The 32 bits at p in every lane: vbroadcastss, a load-port-only uop, where
 * Zen 2/3 split vpbroadcastd ymm, m32 into a load and an FP-pipe shuffle
 * (0.65 of peak instead of 0.9 in 6x2).  Zen 4 runs both on the load ports.
 */
VINLINE vreg vbcast(const void *p)
{
	return _mm256_castps_si256(_mm256_broadcast_ss((const float *)p));
}

#define PIN(v) __asm__ volatile("" : "+v"(v))

/* acc + a * b in f32. */
VINLINE vreg vfma(vreg acc, vreg a, vreg b)
{
	return _mm256_castps_si256(_mm256_fmadd_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b),
						   _mm256_castsi256_ps(acc)));
}

/* acc + vpmaddwd(a, b): two s16 products summed into each s32 lane. */
VINLINE vreg vmadd16(vreg acc, vreg a, vreg b)
{
	return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
}

/* a + b in f32 (tile_dual's two accumulator sets). */
VINLINE vreg vaddf(vreg a, vreg b)
{
	return _mm256_castps_si256(_mm256_add_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b)));
}

/* Tiles of fewer than 8 accumulators keep two sets, for even and odd k (brgemm_tile.inc). */
#define TILE_DUAL 1

/* Every row count below the full tile, so that rows split evenly (row_split). */
#define TILE_EDGES(m) E##m
/* The k loops unrolled by 4 (brgemm_tile.inc, tile_steps). */
#define TILE_KUNROLL 1

/*
 * The k loop of the full 6x2, 5x2 and 4x2 f32 tiles (a call's rows split
 * evenly into tiles of 6 and 5, or 4 for 7, 8 and 14 rows) and of the
 * full 5x2 and 4x2 int8 tiles (s16 pairs, and vpmaddubsw for a checked B:
 * ubs_steps), four k steps a trip, in asm: a step is
 * its 2 B loads, its broadcasts and its madds, and the pointers move once
 * a trip (A through displacements 0, 4, 8 and 12, B as b, b + ldb, b +
 * 2 ldb, b + 3 ldb).  gcc's loop for the same f32 tile moved its row
 * pointers every step and kept asm pins between the steps: 24-25
 * instructions a step against 21.5.  The difference shows when the core
 * is shared: on this VM, calls of 66x64x64 and 132x16x256 with blocks in
 * cache, medians of 61 rounds interleaved in one process, 8 runs:
 * +6% (geometric mean of the runs; their fastest rounds +0-3%).  The B and
 * broadcast registers (and the s16 products) are ymm12-15, clobbered
 * rather than operands: an asm takes 30 operands, and the 12
 * accumulators count twice.
 */
#define KL_F32_COL(c, bv) "vfmadd231ps " bv ", %%ymm15, %[" c "]\n\t"
#define KL_F32(c0, c1) KL_F32_COL(c0, "%%ymm13") KL_F32_COL(c1, "%%ymm14")
#define KL_I16_COL(c, bv)                                                                     \
	"vpmaddwd " bv ", %%ymm15, %%ymm12\n\tvpaddd %%ymm12, %[" c "], %[" c "]\n\t"
#define KL_I16(c0, c1) KL_I16_COL(c0, "%%ymm13") KL_I16_COL(c1, "%%ymm14")
/* both vpmaddubsw of a row first, as ubs_row orders them (its comment) */
#define KL_UBS(c0, c1)                                                                        \
	"vpmaddubsw %%ymm13, %%ymm15, %%ymm11\n\tvpmaddubsw %%ymm14, %%ymm15, %%ymm12\n\t"       \
	"vpmaddwd %[one], %%ymm11, %%ymm11\n\tvpmaddwd %[one], %%ymm12, %%ymm12\n\t"             \
	"vpaddd %%ymm11, %[" c0 "], %[" c0 "]\n\tvpaddd %%ymm12, %[" c1 "], %[" c1 "]\n\t"
#define KL_BCAST(OP, addr, c0, c1) "vbroadcastss " addr ", %%ymm15\n\t" OP(c0, c1)
#define KL_LOADB(at) "vmovups " at ", %%ymm13\n\t" "vmovups 32" at ", %%ymm14\n\t"
#define KL_ROWS4(OP, d)                                                                       \
	KL_BCAST(OP, d "(%[a0])", "c00", "c01") KL_BCAST(OP, d "(%[a0],%[lda],1)", "c10", "c11") \
	KL_BCAST(OP, d "(%[a0],%[lda],2)", "c20", "c21") KL_BCAST(OP, d "(%[a3])", "c30", "c31")
#define KL_ROWS5(OP, d) KL_ROWS4(OP, d) KL_BCAST(OP, d "(%[a3],%[lda],1)", "c40", "c41")
#define KL_ROWS6(OP, d) KL_ROWS5(OP, d) KL_BCAST(OP, d "(%[a3],%[lda],2)", "c50", "c51")
#define KL_TRIP(ROWS, OP)                                                                     \
	KL_LOADB("(%[b])") ROWS(OP, "0") KL_LOADB("(%[b],%[ldb],1)") ROWS(OP, "4")           \
	KL_LOADB("(%[b2])") ROWS(OP, "8") KL_LOADB("(%[b2],%[ldb],1)") ROWS(OP, "12")
#define KL_STEP(ROWS, OP) KL_LOADB("(%[b])") ROWS(OP, "0")
#define KL_ACC4(acc)                                                                          \
	[c00] "+x"(acc[0][0]), [c01] "+x"(acc[0][1]), [c10] "+x"(acc[1][0]),                 \
	[c11] "+x"(acc[1][1]), [c20] "+x"(acc[2][0]), [c21] "+x"(acc[2][1]),                 \
	[c30] "+x"(acc[3][0]), [c31] "+x"(acc[3][1])
#define KL_ACC5(acc) KL_ACC4(acc), [c40] "+x"(acc[4][0]), [c41] "+x"(acc[4][1])
#define KL_ACC6(acc) KL_ACC5(acc), [c50] "+x"(acc[5][0]), [c51] "+x"(acc[5][1])
#define KL_IN                                                                                 \
	[a0] "r"(a0), [a3] "r"(a0 + 3 * lda_b), [b] "r"(b), [b2] "r"(b + 2 * ldb_b),         \
	[lda] "r"(lda_b), [ldb] "r"(ldb_b)
#define KL_CLOBBER "xmm12", "xmm13", "xmm14", "xmm15", "memory"
/* vpmaddubsw's tiles: the s16 sums in ymm11 and ymm12, the s16 ones an operand */
#define KL_IN_UBS KL_IN, [one] "x"(one)
#define KL_CLOBBER_UBS "xmm11", KL_CLOBBER
/* The asm of PART (KL_TRIP or KL_STEP) for kloop's op and mr. */
#define KL_BY_SHAPE(PART)                                                                     \
	do {                                                                                 \
		if (op == OP_I8_UBS && mr == 5)                                              \
			__asm__(PART(KL_ROWS5, KL_UBS) : KL_ACC5(acc) : KL_IN_UBS            \
				: KL_CLOBBER_UBS);                                           \
		else if (op == OP_I8_UBS)                                                    \
			__asm__(PART(KL_ROWS4, KL_UBS) : KL_ACC4(acc) : KL_IN_UBS            \
				: KL_CLOBBER_UBS);                                           \
		else if (op == OP_I16 && mr == 5)                                            \
			__asm__(PART(KL_ROWS5, KL_I16) : KL_ACC5(acc) : KL_IN : KL_CLOBBER); \
		else if (op == OP_I16)                                                       \
			__asm__(PART(KL_ROWS4, KL_I16) : KL_ACC4(acc) : KL_IN : KL_CLOBBER); \
		else if (mr == 6)                                                            \
			__asm__(PART(KL_ROWS6, KL_F32) : KL_ACC6(acc) : KL_IN : KL_CLOBBER); \
		else if (mr == 5)                                                            \
			__asm__(PART(KL_ROWS5, KL_F32) : KL_ACC5(acc) : KL_IN : KL_CLOBBER); \
		else                                                                         \
			__asm__(PART(KL_ROWS4, KL_F32) : KL_ACC4(acc) : KL_IN : KL_CLOBBER); \
	} while (0)

/* kloop's tiles and ops (it is defined after brgemm_tile.inc, which defines enum op). */
static inline __attribute__((always_inline)) void
kloop(vreg acc[][4], int op, const char *a0, const char *b, int64_t lda_b, int64_t ldb_b,
      int64_t steps, int mr);

/*
 * The hook of brgemm_tile.inc's tile_steps (and of ubs_steps): full tiles
 * of 2 vectors, f32 of 4 to 6 rows, int8 of 4 or 5 (6 would need a 17th
 * register).
 */
#define TILE_KLOOP(acc, op, a, b, lda_b, ldb_b, steps, mr)                                    \
	kloop(acc, op, a, b, lda_b, ldb_b, steps, mr)
#define TILE_KLOOP_FITS(op, mr, nr)                                                           \
	((nr) == 2 && (mr) >= 4 &&                                                           \
	 ((op) == OP_F32 ? (mr) <= 6 : ((op) == OP_I16 || (op) == OP_I8_UBS) && (mr) <= 5))

#include "runtime/brgemm_tile.inc"

_Static_assert(TILE_MAX_NR == 4, "kloop takes the accumulators as acc[][4]");

/*
 * The steps k steps of a full mr x 2 tile of op (TILE_KLOOP_FITS), A's rows
 * from a0, B's from b: trips of 4, then the 0-3 left one by one (conv1's
 * K = 21 leaves one per batch element).
 */
static inline __attribute__((always_inline)) void
kloop(vreg acc[][4], int op, const char *a0, const char *b, int64_t lda_b, int64_t ldb_b,
      int64_t steps, int mr)
{
	int64_t left = steps % 4, trips;
	const vreg one = _mm256_set1_epi16(1);	/* vpmaddwd's, for OP_I8_UBS */

	for (trips = steps / 4; trips > 0; trips--, a0 += 16, b += 4 * ldb_b)
		KL_BY_SHAPE(KL_TRIP);
	for (; left > 0; left--, a0 += 4, b += ldb_b)
		KL_BY_SHAPE(KL_STEP);
}

/*
 * Tile shapes, rows x vectors, widest first.  6x2 holds 12 accumulators,
 * 2 B vectors and the broadcast (4x3 would need a 17th register for the
 * tail mask); loads per k step (8) stay well under the FMAs (12).  The s16
 * pair op needs one more register for each vpmaddwd result, so its tail
 * tiles spilled at 6x2: 5x2.
 */
#define F32_SHAPES(X, o) X(6, 2, o) X(8, 1, o)
#define I16_SHAPES(X, o) X(5, 2, o) X(8, 1, o)
#define UBS_SHAPES(X, o) X(5, 2, o) X(8, 1, o)

TILES(f32_tiles, OP_F32, F32_SHAPES)
TILES(i16_tiles, OP_I16, I16_SHAPES)

/*
 * One row's k step of the int8 tiles for a checked B: each lane of acc[j]
 * gets the sum of the 4 products of its u8 of a and s8 of b[j].
 * vpmaddubsw adds pairs into s16 (saturating: exact only when the caller
 * has checked B, hgc_rt_s8_pairs_fit), vpmaddwd by ones adds the two pairs
 * into s32: 3 vector ops per 32 products where the s16 pairs take 4 and a
 * widening.  All of the row's vpmaddubsw come first, pinned there: gcc
 * otherwise put each vpmaddwd right after its vpmaddubsw, and that order
 * ran slower (interleaved, CPU-time best of 5 on this Zen 3: 64x64x64
 * calls 0.76 -> 0.80 of the int8 peak, 128x16x256 bs4 about 3%).
 */
VINLINE void ubs_row(vreg *acc, vreg a, const vreg *b, int nr)
{
	vreg t[TILE_MAX_NR];
	int j;

	UNROLL for (j = 0; j < nr; j++) {
		t[j] = _mm256_maddubs_epi16(a, b[j]);
		PIN(t[j]);
	}
	UNROLL for (j = 0; j < nr; j++)
		acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(t[j], _mm256_set1_epi16(1)));
}

/*
 * One k step of a checked-B int8 tile: B's vectors at bp, A at base[]
 * (rows per row_base).  With chk, *big also collects the largest |b| of
 * each byte lane of B (vpabsb, vpmaxub: -128 counts as 128).
 */
TILE_INLINE void
ubs_step(vreg acc[TILE_MAX_MR][TILE_MAX_NR], const char *base[6], const char *bp,
	 int64_t lda_b, int mr, int nr, int full, vmask last, int chk, vreg *big)
{
	vreg bv[TILE_MAX_NR];
	int i, j, g, nbase = row_nbase(mr);

	UNROLL for (j = 0; j < nr; j++)
		bv[j] = prep_b(j == nr - 1 && !full ? vload_m(bp + j * VL * 4, last)
						    : vload(bp + j * VL * 4));
	if (chk) {
		UNROLL for (j = 0; j < nr; j++)
			*big = _mm256_max_epu8(*big, _mm256_abs_epi8(bv[j]));
		PIN(*big);
	}
	UNROLL for (i = 0; i < mr; i++)
		ubs_row(acc[i], vbcast(base[row_base[i]] + row_mult[i] * lda_b), bv, nr);
	UNROLL for (i = 0; i < mr; i++)
		UNROLL for (j = 0; j < nr; j++)
			PIN(acc[i][j]);
	UNROLL for (g = 0; g < nbase; g++) {
		base[g] += 4;
		PIN_GPR(base[g]);
	}
}

/*
 * All k steps of one batch element of a checked-B int8 tile: a at its first
 * row, bp at its column.  Full 5x2 and 4x2 tiles that do not check B take
 * kloop's asm.
 */
TILE_INLINE void
ubs_steps(vreg acc[TILE_MAX_MR][TILE_MAX_NR], const char *a, const char *bp, int64_t lda_b,
	  int64_t ldb_b, int64_t steps, int mr, int nr, int full, vmask last, int chk,
	  vreg *big)
{
	const char *base[6];
	int64_t s;
	int g, nbase = row_nbase(mr);

	if (full && !chk && TILE_KLOOP_FITS(OP_I8_UBS, mr, nr)) {
		TILE_KLOOP(acc, OP_I8_UBS, a, bp, lda_b, ldb_b, steps, mr);
		return;
	}
	UNROLL for (g = 0; g < nbase; g++)
		base[g] = a + 3 * g * lda_b;
	for (s = 0; s < steps; s++, bp += ldb_b)
		ubs_step(acc, base, bp, lda_b, mr, nr, full, last, chk, big);
}

/*
 * The whole batch of a checked-B int8 tile; full says its last vector has
 * all columns.  With chk, the tile also checks the B it reads (every k of
 * its columns): it stores C and returns 1 when no byte of B exceeds 64 in
 * magnitude (so no pair of k can reach 129), else it leaves C alone and
 * returns 0.
 */
TILE_INLINE int
ubs_body(const struct hgc_rt_call *c, int64_t m0, int64_t n0, int nlast, int mr, int nr,
	 int full, int chk)
{
	vreg acc[TILE_MAX_MR][TILE_MAX_NR], big = vzero();
	vmask last = vmask_first(nlast);
	int64_t lda_b = c->lda, ldb_b = c->ldb, ldc_b = c->ldc * 4, steps = c->K / 4, b;
	char *cp = (char *)c->C + m0 * ldc_b + n0 * 4;
	const vreg lim = _mm256_set1_epi8(64);

	acc_start(acc, cp, ldc_b, c->beta, mr, nr, full, last);
	for (b = 0; b < c->bs; b++)
		ubs_steps(acc, (const char *)c->A[b] + m0 * lda_b, (const char *)c->B[b] + n0 * 4,
			  lda_b, ldb_b, steps, mr, nr, full, last, chk, &big);
	if (chk && _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(big, lim), lim)) != -1)
		return 0;
	acc_store(acc, cp, ldc_b, mr, nr, full, last);
	return 1;
}

/* A checked-B int8 tile: a second body without masks when the last vector is whole. */
TILE_INLINE int
ubs_tile(const struct hgc_rt_call *c, int64_t m0, int64_t n0, int nlast, int mr, int nr,
	 int chk)
{
	if (nlast == VL)
		return ubs_body(c, m0, n0, nlast, mr, nr, 1, chk);
	return ubs_body(c, m0, n0, nlast, mr, nr, 0, chk);
}

/*
 * A strip of checked-B int8 tiles that do not check: mr rows at m0 over
 * nblk whole column blocks of nr vectors from column n0, in one function,
 * as brgemm_tile.inc's strip does for the other ops (the call copied, so
 * that the stores to C do not make the compiler reload its fields).  With
 * K = 64 a 5x2 tile has 16 k steps, 160 cycles of vpmaddubsw and vpmaddwd,
 * and its call and prologue were a large part of it.  No prefetch of the
 * next C (ubs_blocks says why): next is unused.
 */
TILE_INLINE void
ubs_strip(const struct hgc_rt_call *c, int64_t m0, int64_t n0, int64_t nblk, int mr, int nr)
{
	const struct hgc_rt_call l = *c;
	int64_t blk;

	for (blk = 0; blk < nblk; blk++, n0 += nr * VL)
		ubs_body(&l, m0, n0, VL, mr, nr, 1, 0);
}

/* The checked-B int8 tiles, their strips and their table, as TILES makes them for the other ops. */
#define UBS_DEF(m, n, o)                                                                     \
	static TILE_NOSAN void o##_##m##x##n(const struct hgc_rt_call *c, int64_t m0,        \
					     int64_t n0, int nlast)                          \
	{                                                                                    \
		ubs_tile(c, m0, n0, nlast, m, n, 0);                                         \
	}                                                                                    \
	static TILE_NOSAN void o##_##m##x##n##_strip(const struct hgc_rt_call *c, int64_t m0, \
						     int64_t n0, int64_t nblk, int next)     \
	{                                                                                    \
		(void)next;                                                                  \
		ubs_strip(c, m0, n0, nblk, m, n);                                            \
	}
#define UBS_SHAPE_DEF(m, n, o) UBS_DEF(m, n, o) TILE_EDGES(m)(UBS_DEF, n, o)
UBS_SHAPES(UBS_SHAPE_DEF, OP_I8_UBS)
static const struct tiles ubs_tiles = {
	.fn = {UBS_SHAPES(SHAPE_ENT, OP_I8_UBS)},
	.strip = {UBS_SHAPES(SHAPE_STRIP, OP_I8_UBS)},
	.mr = {UBS_SHAPES(SHAPE_MR, OP_I8_UBS)},
	.nr = UBS_SHAPES(SHAPE_FIRST_NR, OP_I8_UBS) 0,
};

/*
 * Rows of the first row tile of each column block, which checks B
 * (ubs_body's chk): its check register fits beside the tile's 15 only
 * at 4 rows and fewer (the 5x2 tile with a tail mask would spill).
 */
#define CHK_ROWS 4

/* A tile that checks its B: 1 when it fits and C is stored, 0 when C is untouched. */
typedef int chk_fn(const struct hgc_rt_call *c, int64_t m0, int64_t n0, int nlast);

#define CHK_DEF(m, n)                                                                        \
	static TILE_NOSAN int OP_I8_UBS_CHK_##m##x##n(const struct hgc_rt_call *c, int64_t m0, \
						      int64_t n0, int nlast)                 \
	{                                                                                    \
		return ubs_tile(c, m0, n0, nlast, m, n, 1);                                  \
	}
#define CHK_ROWS_DEF(n) CHK_DEF(1, n) CHK_DEF(2, n) CHK_DEF(3, n) CHK_DEF(4, n)
CHK_ROWS_DEF(1)
CHK_ROWS_DEF(2)
#define CHK_ENT(n)                                                                           \
	{NULL, OP_I8_UBS_CHK_1x##n, OP_I8_UBS_CHK_2x##n, OP_I8_UBS_CHK_3x##n,                \
	 OP_I8_UBS_CHK_4x##n}
/* The checking tiles, [nr][rows]. */
static chk_fn *const chk_tiles[3][CHK_ROWS + 1] = {{NULL}, CHK_ENT(1), CHK_ENT(2)};

/* 32-bit words of converted A and B on the stack per chunk (64 KB). */
#define CONV_WORDS 16384
/* Batch elements per chunk at most. */
#define CONV_BATCH 32

/* How a kind's operands become 32-bit words (brgemm_widen_avx2.c). */
struct widen {
	int kdiv;	/* k values per output word: 1 (bf16 -> f32), 2 (int8 -> s16 pairs) */
	int pack;	/* k values per packed B row (the k group) */
	int esize;	/* bytes per element of A and packed B */
	hgc_rt_widen_fn *a, *b;	/* A's rows, B's packed rows */
	const struct tiles *tiles;
};

/*
 * Rows of A widened at a time: a multiple of the int8 tiles' rows (5 and
 * 8), so that a group splits into full tiles (the f32 tiles split it
 * evenly); its words stay in L1 until the tiles read them, where a whole
 * call's A (64 KB in the 128x16x256 bs4 calls of a 1024^3 int8 MatMul)
 * would not: 10% less kernel time on that MatMul, interleaved.
 */
#define ROW_GROUP 40

/*
 * Output words per k chunk: the whole K when one batch element fits the
 * buffer (words of A + B per word of k: per), else as much of K as fits,
 * in whole packed rows; 0 when not even one packed row fits.
 */
static int64_t chunk_words(const struct hgc_rt_call *c, const struct widen *w, int64_t per)
{
	int64_t kw = c->K / w->kdiv, step = w->pack / w->kdiv;

	if (per * kw <= CONV_WORDS)
		return kw;
	return CONV_WORDS / per / step * step;
}

/*
 * Convert batch elements [b0, b0 + nb), k words [k0, k0 + kw) of B into
 * buf, then for each group of at most rg rows the same of A after them,
 * and run the tiles on the group, beta as given.
 */
static void widen_run(const struct hgc_rt_call *c, const struct widen *w, uint32_t *buf,
		      int64_t rg, int64_t b0, int64_t nb, int64_t k0, int64_t kw, int beta)
{
	const void *pa[CONV_BATCH], *pb[CONV_BATCH];
	int64_t b, m0, k = k0 * w->kdiv, rows = k / w->pack;
	uint32_t *abuf = buf + nb * c->N * kw;
	struct hgc_rt_call s = {pa, pb, c->C, nb, c->M, c->N, kw, kw, c->N, c->ldc, beta, NULL, 0,
				  NULL, 0};

	for (b = 0; b < nb; b++) {
		uint32_t *bb = buf + b * c->N * kw;

		w->b((const char *)c->B[b0 + b] + rows * c->ldb * w->esize, c->ldb, c->N,
		     kw * w->kdiv, bb);
		pb[b] = bb;
	}
	for (m0 = 0; m0 < c->M; m0 += rg) {
		s.M = c->M - m0 < rg ? c->M - m0 : rg;
		s.C = (char *)c->C + m0 * c->ldc * 4;
		for (b = 0; b < nb; b++) {
			uint32_t *a = abuf + b * s.M * kw;

			w->a((const char *)c->A[b0 + b] + (m0 * c->lda + k) * w->esize, c->lda,
			     s.M, kw * w->kdiv, a);
			pa[b] = a;
		}
		run_tiles(&s, w->tiles);
	}
}

/*
 * A call whose operands are converted first: a chunk of the batch at a
 * time, or of K when one element does not fit the stack buffer (a heap
 * buffer when not even one packed row does), accumulating after the first;
 * A in groups of rows within each chunk.
 */
static void run_widened(const struct hgc_rt_call *c, const struct widen *w)
{
	uint32_t stack[CONV_WORDS], *buf = stack;
	int64_t rg = c->M < ROW_GROUP ? c->M : ROW_GROUP;
	int64_t per = rg + c->N, kw = chunk_words(c, w, per), nb, b0, k0;
	int64_t step = w->pack / w->kdiv, total = c->K / w->kdiv;
	int beta = c->beta;

	if (kw == 0) {
		kw = step;
		buf = malloc((size_t)(per * kw) * sizeof(uint32_t));
		if (!buf)
			abort();
	}
	nb = kw == total ? CONV_WORDS / (per * kw) : 1;
	nb = nb < 1 ? 1 : nb > CONV_BATCH ? CONV_BATCH : nb;
	for (b0 = 0; b0 < c->bs; b0 += nb) {
		int64_t n = c->bs - b0 < nb ? c->bs - b0 : nb;

		for (k0 = 0; k0 < total; k0 += kw, beta = 1)
			widen_run(c, w, buf, rg, b0, n, k0, total - k0 < kw ? total - k0 : kw,
				  beta);
	}
	if (buf != stack)
		free(buf);
}

/* f32 brgemm with ymm tiles. */
void hgc_rt_f32_avx2(const struct hgc_rt_call *c)
{
	run_tiles_pf(c, &f32_tiles, 1);
}

/* How int8 operands are widened: to s16 pairs for vpmaddwd (brgemm_widen_avx2.c). */
static const struct widen i8_widen = {2, 4, 1, hgc_rt_widen_u8_a, hgc_rt_widen_s8_b,
				      &i16_tiles};

/*
 * Rows [m0, M) by columns [n0, N) of an int8 call, widened (exact for any
 * B): a part the vpmaddubsw tiles have not done, a chunk of the batch at
 * a time.
 */
static void widen_part(const struct hgc_rt_call *c, int64_t m0, int64_t n0)
{
	const void *pa[CONV_BATCH], *pb[CONV_BATCH];
	struct hgc_rt_call s = *c;
	int64_t b0, i;

	if (m0 >= c->M || n0 >= c->N)
		return;
	s.A = pa;
	s.B = pb;
	s.M = c->M - m0;
	s.N = c->N - n0;
	s.C = (char *)c->C + (m0 * c->ldc + n0) * 4;
	for (b0 = 0; b0 < c->bs; b0 += s.bs, s.beta = 1) {
		s.bs = c->bs - b0 < CONV_BATCH ? c->bs - b0 : CONV_BATCH;
		for (i = 0; i < s.bs; i++) {
			pa[i] = (const char *)c->A[b0 + i] + m0 * c->lda;
			pb[i] = (const char *)c->B[b0 + i] + n0 * 4;
		}
		run_widened(&s, &i8_widen);
	}
}

/* Whether columns [n0, n0 + cols) of every batch element's B fit vpmaddubsw (the exact bound). */
static int cols_fit(const struct hgc_rt_call *c, int64_t n0, int64_t cols)
{
	int64_t b;

	for (b = 0; b < c->bs; b++)
		if (!hgc_rt_s8_pairs_fit((const char *)c->B[b] + n0 * 4, c->ldb, cols, c->K))
			return 0;
	return 1;
}

/* Where touch_b leaves what it read, so that its loads stay. */
static volatile unsigned char touched;

/*
 * Read one byte of each line of columns [n0, n0 + cols) of every packed
 * row of B, loads that do not wait on each other.  The checking tiles are
 * the first to read B, one packed row per k step, and their B loads
 * stalled: in the wd set's 128x64x128 calls (rows 256 bytes apart, B from
 * L3) the 4x2 checking tiles took 10% of the MatMul's samples at 1/32 of
 * its rows.  Prefetch instructions instead of the loads did not help
 * (CPU-time best of 6, load 10: 7.33 ms against 7.09 with the loads and
 * 7.50 before the check moved into the tiles).
 */
static void touch_b(const struct hgc_rt_call *c, int64_t n0, int64_t cols)
{
	unsigned char x = 0;
	int64_t b, r, o;

	for (b = 0; b < c->bs; b++)
		for (r = 0; r < c->K / 4; r++) {
			const unsigned char *p = (const unsigned char *)c->B[b] + r * c->ldb + n0 * 4;

			for (o = 0; o < cols * 4; o += 64)
				x |= p[o];
			x |= p[cols * 4 - 1];
		}
	touched = x;
}

/*
 * The first rows (r0) of column blocks [v0, v1), each tile checking the B
 * of its columns: a block whose B has a byte beyond 64 gets the exact
 * check (hgc_rt_s8_pairs_fit) and, when that holds too, the plain tile.
 * When it does not, the rest of the call (these rows from the block on,
 * the rows below from v0 on: all the tiles have not done) is widened, and
 * the result is 0.
 */
static int ubs_first_rows(const struct hgc_rt_call *c, int nr, int64_t r0, int64_t v0,
			  int64_t v1, int64_t nv, int nlast)
{
	int64_t v;
	int nl;

	touch_b(c, v0 * VL, (v1 == nv ? c->N : v1 * VL) - v0 * VL);
	for (v = v0; v < v1; v += nr) {
		nl = v + nr == nv ? nlast : VL;
		if (chk_tiles[nr][r0](c, 0, v * VL, nl))
			continue;
		if (cols_fit(c, v * VL, (nr - 1) * VL + nl)) {
			ubs_tiles.fn[nr][r0](c, 0, v * VL, nl);
			continue;
		}
		widen_part(c, r0, v0 * VL);
		c = &(struct hgc_rt_call){c->A, c->B, c->C, c->bs, r0, c->N, c->K, c->lda,
					  c->ldb, c->ldc, c->beta, NULL, 0, NULL, 0};
		widen_part(c, 0, v * VL);
		return 0;
	}
	return 1;
}

/*
 * The B of the next call, as next_b_region (brgemm_tile.inc) finds it for
 * f32: a packed int8 row of 4N bytes (ldb = 4N when dense) is, byte for
 * byte, an f32 row of N, so the call is viewed as one of K/4 f32 rows.
 * Without it the tiles of each call's first column block read B from L3
 * or memory; touch_b, which reads it first, then took 5.7% of the wd
 * 512x845x1024 MatMul's samples, 2.0% with it.
 */
static void ubs_next_b(const struct hgc_rt_call *c, const char **nb, int64_t *chunk,
		       int64_t ntiles)
{
	struct hgc_rt_call f = *c;
	int64_t bytes;

	*nb = NULL;
	*chunk = 0;
	if (c->ldb % 4)
		return;
	f.K = c->K / 4;
	f.ldb = c->ldb / 4;
	next_b_region(&f, nb, &bytes);
	if (bytes >= HGC_RT_LARGE_B)
		*nb = NULL;	/* a stream of large B: only the asm tiles fetch it */
	else
		*chunk = burst_chunk(&f, bytes, ntiles);
}

/*
 * Column blocks [v0, v1) (at least one) of a vpmaddubsw call: the first
 * rows checking B, then the other rows as run_blocks (brgemm_tile.inc)
 * does them, split evenly, two or more whole blocks of a row tile as a
 * strip (ubs_strip), each row tile of the first block asking for
 * its share of the next call's B (ubs_next_b), but without run_blocks'
 * prefetchw of the next tile's C: on these int8 calls it cost more than
 * it saved (thread CPU time, best of 6 interleaved, load 5-6: 1024^3
 * 14.35 -> 13.74 ms, 512x845x1024 7.32 -> 6.92, 64 x 128x64x128 1.140 ->
 * 1.075 without it).  0 when the call was finished widened.
 */
static int ubs_blocks(const struct hgc_rt_call *c, int nr, int64_t v0, int64_t v1, int64_t nv,
		      int nlast)
{
	int64_t r0 = c->M < CHK_ROWS ? c->M : CHK_ROWS, m0, v, i, q, extra, chunk;
	int64_t nwhole = (v1 - v0) / nr - (v1 == nv && nlast != VL);
	const char *nb;
	int rows;

	if (!ubs_first_rows(c, nr, r0, v0, v1, nv, nlast))
		return 0;
	if (c->M == r0)
		return 1;
	row_split(&ubs_tiles, nr, c->M - r0, &q, &extra);
	ubs_next_b(c, &nb, &chunk, (c->M - r0 + ubs_tiles.mr[nr] - 1) / ubs_tiles.mr[nr]);
	for (m0 = r0, i = 0; m0 < c->M; m0 += rows, i++) {
		rows = tile_rows(&ubs_tiles, nr, c->M - m0, i, q, extra);
		if (v0 == 0 && nb)
			prefetch_lines(nb + i * chunk, chunk);
		v = v0;
		if (nwhole >= 2) {	/* whole blocks as a strip, a masked last one after */
			ubs_tiles.strip[nr][rows](c, m0, v0 * VL, nwhole, 0);
			v += nwhole * nr;
		}
		for (; v < v1; v += nr)
			ubs_tiles.fn[nr][rows](c, m0, v * VL, v + nr == nv ? nlast : VL);
	}
	return 1;
}

/*
 * u8 x s8 -> s32 brgemm, exact.  Where B allows it (each pair of k sums at
 * most 128 in its positive and in its negative values, so that 255 times
 * either fits s16), the operands as they are, through vpmaddubsw: nothing
 * widened.  The first row tile of each column block checks the B it reads
 * as it goes (|b| <= 64, 2 vector ops per B vector), so a B of 7-bit
 * weights costs no pass of its own; where B does not fit, the call's rest
 * is widened to s16 pairs for vpmaddwd + vpaddd.  Column blocks as
 * run_tiles: the main ones, then a narrower last one.
 */
void hgc_rt_u8s8_avx2(const struct hgc_rt_call *c)
{
	int64_t nv = (c->N + VL - 1) / VL, nfull;
	int nlast = (int)(c->N - (nv - 1) * VL), nr = pick_nr(&ubs_tiles, nv);

	nfull = nv / nr * nr;
	if (nfull > 0 && !ubs_blocks(c, nr, 0, nfull, nv, nlast))
		return;
	if (nfull < nv)
		ubs_blocks(c, (int)(nv - nfull), nfull, nv, nv, nlast);
}

/* bf16 brgemm: both operands widened to f32 (exact), then the f32 tiles. */
void hgc_rt_bf16_avx2(const struct hgc_rt_call *c)
{
	static const struct widen w = {1, 2, 2, hgc_rt_widen_bf16_a, hgc_rt_widen_bf16_b,
				       &f32_tiles};

	run_widened(c, &w);
}
