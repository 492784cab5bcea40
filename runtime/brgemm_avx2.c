/*
 * brgemm_avx2.c: ymm microkernels (AVX2 + FMA, 16 registers).  f32 uses
 * 6x2 tiles (rows x vectors of 8 columns); int8 widens u8 and s8
 * to s16 and uses vpmaddwd, which cannot saturate on u8 x s8 products
 * (unlike vpmaddubsw); bf16 widens each half of a pair to f32 for two FMAs.
 * Column tails use vpmaskmovd loads and stores.
 */
#include <immintrin.h>
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

/* u8 bytes 0, 2 and 1, 3 of each lane, zero-extended to s16. */
VINLINE void wide_u8(vreg x, vreg *lo, vreg *hi)
{
	*lo = _mm256_and_si256(x, _mm256_set1_epi32(0x00ff00ff));
	*hi = _mm256_srli_epi16(x, 8);
}

/* s8 bytes 0, 2 and 1, 3 of each lane, sign-extended to s16. */
VINLINE void wide_s8(vreg x, vreg *lo, vreg *hi)
{
	*lo = _mm256_srai_epi16(_mm256_slli_epi16(x, 8), 8);
	*hi = _mm256_srai_epi16(x, 8);
}

/* The low and high bf16 of each lane as f32 (a blend with zero needs no constant register). */
VINLINE void wide_bf16(vreg x, vreg *lo, vreg *hi)
{
	*lo = _mm256_slli_epi32(x, 16);
	*hi = _mm256_blend_epi16(x, _mm256_setzero_si256(), 0x55);
}

/* Every row count below the full tile, so that rows split evenly (tile_rows). */
#define TILE_EDGES(m) E##m
/* The f32 k loop unrolled by 4 (brgemm_tile.inc, tile_steps). */
#define TILE_KUNROLL_F32 1

#include "runtime/brgemm_tile.inc"

/*
 * Tile shapes, rows x vectors, widest first; the lane mask of the last
 * vector takes a register, so 4x3 (12 + 3 + 1 + mask) would spill.  int8
 * needs B widened into two registers per vector and A into two, so its
 * tiles are smaller than bf16's, whose FMAs give the allocator more freedom
 * than vpmaddwd + vpaddd.
 */
#define F32_SHAPES(X, o) X(6, 2, o) X(8, 1, o)
#define I8_SHAPES(X, o) X(3, 2, o) X(8, 1, o)
#define BF16_SHAPES(X, o) X(4, 2, o) X(8, 1, o)

TILES(f32_tiles, OP_F32, F32_SHAPES)
TILES(i8_tiles, OP_I8_WIDE, I8_SHAPES)
TILES(bf16_tiles, OP_BF16_WIDE, BF16_SHAPES)

/* f32 brgemm with ymm tiles. */
void hgc_rt_f32_avx2(const struct hgc_rt_call *c)
{
	run_tiles(c, &f32_tiles);
}

/* u8 x s8 -> s32 brgemm, exact, with vpmaddwd on widened values. */
void hgc_rt_u8s8_avx2(const struct hgc_rt_call *c)
{
	run_tiles(c, &i8_tiles);
}

/* bf16 brgemm, both halves of each pair widened to f32. */
void hgc_rt_bf16_avx2(const struct hgc_rt_call *c)
{
	run_tiles(c, &bf16_tiles);
}
