/*
 * brgemm_avx512.c: zmm microkernels (AVX-512 F/BW/VL/DQ, 32 registers).
 * f32 with vfmadd231ps, int8 with vpdpbusd (AVX512-VNNI; B packed by 4 k)
 * and bf16 with vdpbf16ps (AVX512-BF16; B packed by 2 k) share one tile
 * set: 6x4, 8x3, 12x2 and 16x1 (rows x vectors of 16 columns), each with
 * C held in 16-24 registers, plus edge tiles for the last rows; column
 * tails use masked loads and stores.  Without VNNI or BF16 the dispatcher
 * uses the AVX2 kernels for those kinds.
 *
 * With HGC_VEC512_EMU defined (tests on CPUs without AVX-512), the same
 * tiles are compiled against a portable emulation of the vector layer.
 */
#include <string.h>

#include "runtime/runtime_int.h"

#ifdef HGC_VEC512_EMU
#include "runtime/vec512_emu.inc"
#else
#include <immintrin.h>

#define VL 16
/* The vector layer: inlined into the tiles, uninstrumented like them (brgemm_tile.inc). */
#define VINLINE static inline __attribute__((always_inline, no_sanitize("address", "undefined")))
#define VEC_HAS_DOT 1
/*
 * Not cheap on Intel: in a 6x4 f32 loop in L1, one zero-masked B load per k
 * step cost 8-9% on the Xeon (171 against 188 GFLOP/s), so full tiles get
 * an unmasked body, as on AVX2.  (On Zen 4 a masked load costs a plain
 * one's slot; the second body costs it nothing.)
 */
#define VEC_MASK_CHEAP 0
#define VEC_HAS_WIDE 0

typedef __m512i vreg;
typedef __mmask16 vmask;

/* Lanes 0 .. n-1 set. */
VINLINE vmask vmask_first(int n)
{
	return (vmask)((1u << n) - 1);
}

/* The all-zero vector. */
VINLINE vreg vzero(void)
{
	return _mm512_setzero_si512();
}

/* Unaligned load. */
VINLINE vreg vload(const void *p)
{
	return _mm512_loadu_si512(p);
}

/* Load the lanes of m, zero the others (masked lanes never fault). */
VINLINE vreg vload_m(const void *p, vmask m)
{
	return _mm512_maskz_loadu_epi32(m, p);
}

/* Unaligned store. */
VINLINE void vstore(void *p, vreg v)
{
	_mm512_storeu_si512(p, v);
}

/* Store the lanes of m only. */
VINLINE void vstore_m(void *p, vmask m, vreg v)
{
	_mm512_mask_storeu_epi32(p, m, v);
}

/* The 32 bits at p in every lane: vpbroadcastd, cheaper than vbroadcastss into zmm on Zen 4. */
VINLINE vreg vbcast(const void *p)
{
	int32_t x;

	memcpy(&x, p, sizeof(x));
	return _mm512_set1_epi32(x);
}

#define PIN(v) __asm__ volatile("" : "+v"(v))

/* acc + a * b in f32. */
VINLINE vreg vfma(vreg acc, vreg a, vreg b)
{
	return _mm512_castps_si512(_mm512_fmadd_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b),
						   _mm512_castsi512_ps(acc)));
}

/* acc + the four u8 x s8 products of each lane (vpdpbusd, a unsigned). */
VINLINE vreg vdpbusd(vreg acc, vreg a, vreg b)
{
	return _mm512_dpbusd_epi32(acc, a, b);
}

/* acc + the two bf16 x bf16 products of each lane (vdpbf16ps). */
VINLINE vreg vdpbf16(vreg acc, vreg a, vreg b)
{
	return _mm512_castps_si512(
		_mm512_dpbf16_ps(_mm512_castsi512_ps(acc), (__m512bh)a, (__m512bh)b));
}
/* The full tiles in asm (TILE_ASM, tile() in brgemm_tile.inc). */
#include "runtime/brgemm_avx512_asm.inc"
#endif

/*
 * Edge tiles for an even split of the rows (row_split) below the 6- and
 * 8-row tiles: 7 rows (a 7-wide output row of a convolution) ran as 6 + 1,
 * and the 1-row tile, with 4 accumulators, waits on the FMA latency; as
 * 4 + 3 a 7x64x64 call with a batch of 9 went from 140 to 151 GFLOP/s on
 * the Xeon (28 rows: 6, 6, 6, 5, 5 instead of 6, 6, 6, 6, 4).  The 12- and
 * 16-row tiles keep edges of 8, 4, 2 and 1 rows.
 */
#define TILE_EDGES(m) ZMM_EDGES_##m
#define ZMM_EDGES_6 E6
#define ZMM_EDGES_8 E8
#define ZMM_EDGES_12 P12
#define ZMM_EDGES_16 P16

#include "runtime/brgemm_tile.inc"

/* Tile shapes, rows x vectors, widest first (MICROKERNELS: 0.98-0.99 of peak each). */
#define ZMM_SHAPES(X, o) X(6, 4, o) X(8, 3, o) X(12, 2, o) X(16, 1, o)

TILES(f32_tiles, OP_F32, ZMM_SHAPES)
TILES(i8_tiles, OP_I8_DOT, ZMM_SHAPES)
TILES(bf16_tiles, OP_BF16_DOT, ZMM_SHAPES)

/* f32 brgemm with zmm tiles. */
void hgc_rt_f32_avx512(const struct hgc_rt_call *c)
{
	run_tiles(c, &f32_tiles);
}

/* u8 x s8 -> s32 brgemm with vpdpbusd. */
void hgc_rt_u8s8_avx512(const struct hgc_rt_call *c)
{
	run_tiles(c, &i8_tiles);
}

/* bf16 brgemm with vdpbf16ps. */
void hgc_rt_bf16_avx512(const struct hgc_rt_call *c)
{
	run_tiles(c, &bf16_tiles);
}
