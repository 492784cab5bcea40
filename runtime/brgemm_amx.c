/*
 * brgemm_amx.c: u8 x s8 -> s32 with AMX (tdpbusd), on the Xeons that have it.
 *
 * The int8 B packing (4 k of a column in one 32-bit lane, runtime.md) is
 * AMX's B layout: a B tile is 16 packed rows (64 k) by 64 bytes (16
 * columns), read with the stride ldb.  An A tile is 16 rows by 64 bytes of
 * k, stride lda; a C tile 16 rows by 16 s32, stride ldc * 4.  The tiles:
 * tmm0-3 hold a 32x32 block of C, tmm4-5 two A tiles, tmm6-7 two B tiles;
 * one k step of 64 is 4 loads and 4 tdpbusd of 16x16x64 (16 cycles each).
 *
 * Every tile is 16 rows by 64 bytes (one configuration, loaded by each call:
 * other code on the thread, oneDNN for one, may have changed it).  The k
 * past the last multiple of 64 (K is a multiple of 4) goes through
 * zero-padded copies on the stack; the rows and columns past the last
 * whole 32x32 block go to the vpdpbusd kernel (brgemm_avx512.c).
 */
#include <immintrin.h>
#include <string.h>

#include "runtime/runtime_int.h"

#define TR 16		/* tile rows */
#define TB 64		/* tile row bytes */

/* The tile configuration (palette 1): 8 tiles of 16 rows by 64 bytes. */
struct tilecfg {
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
};

/* Load the configuration every tile of this file uses. */
static void configure(void)
{
	struct tilecfg cfg;
	int t;

	memset(&cfg, 0, sizeof(cfg));
	cfg.palette = 1;
	for (t = 0; t < 8; t++) {
		cfg.rows[t] = TR;
		cfg.colsb[t] = TB;
	}
	_tile_loadconfig(&cfg);
}

/* Rows r0.. (nr of them) of the k chunk k0.. (kb bytes, kb < 64) of A into buf, zero-padded
   to 64 bytes a row. */
static void pad_a(const uint8_t *a, int64_t lda, int64_t k0, int kb, int nr, uint8_t *buf)
{
	int i;

	memset(buf, 0, (size_t)nr * TB);
	for (i = 0; i < nr; i++)
		memcpy(buf + i * TB, a + i * lda + k0, (size_t)kb);
}

/* The packed rows of the k chunk k0.. (kb bytes, kb < 64) of 32 columns of B into buf,
   zero-padded to 16 rows of 128 bytes. */
static void pad_b(const int8_t *bp, int64_t ldb, int64_t k0, int kb, int8_t *buf)
{
	int r;

	memset(buf, 0, TR * 2 * TB);
	for (r = 0; r < kb / 4; r++)
		memcpy(buf + r * 2 * TB, bp + (k0 / 4 + r) * ldb, 2 * TB);
}

/* One k chunk into the 32x32 block: A's two row tiles (stride lda), B's two column
   tiles (stride ldb), 4 tdpbusd. */
static inline void chunk(const uint8_t *a, int64_t lda, const int8_t *b, int64_t ldb)
{
	_tile_loadd(4, a, lda);
	_tile_loadd(5, a + 16 * lda, lda);
	_tile_loadd(6, b, ldb);
	_tile_loadd(7, b + 64, ldb);
	_tile_dpbusd(0, 4, 6);
	_tile_dpbusd(1, 4, 7);
	_tile_dpbusd(2, 5, 6);
	_tile_dpbusd(3, 5, 7);
}

/* A 32x32 block of C at (m0, n0): whole k chunks in place, a last one of K % 64
   through zero-padded copies. */
static void block(const struct hgc_rt_call *c, int64_t m0, int64_t n0)
{
	int32_t *cp = (int32_t *)c->C + m0 * c->ldc + n0;
	int64_t ldc_b = c->ldc * 4, b, k, kfull = c->K - c->K % 64;
	uint8_t abuf[32 * TB];
	int8_t bbuf[TR * 2 * TB];

	if (c->beta) {
		_tile_loadd(0, cp, ldc_b);
		_tile_loadd(1, cp + 16, ldc_b);
		_tile_loadd(2, cp + 16 * c->ldc, ldc_b);
		_tile_loadd(3, cp + 16 * c->ldc + 16, ldc_b);
	} else {
		_tile_zero(0);
		_tile_zero(1);
		_tile_zero(2);
		_tile_zero(3);
	}
	for (b = 0; b < c->bs; b++) {
		const uint8_t *a = (const uint8_t *)c->A[b] + m0 * c->lda;
		const int8_t *bp = (const int8_t *)c->B[b] + 4 * n0;

		for (k = 0; k < kfull; k += 64)
			chunk(a + k, c->lda, bp + (k / 4) * c->ldb, c->ldb);
		if (kfull < c->K) {
			pad_a(a, c->lda, kfull, (int)(c->K - kfull), 32, abuf);
			pad_b(bp, c->ldb, kfull, (int)(c->K - kfull), bbuf);
			chunk(abuf, TB, bbuf, 2 * TB);
		}
	}
	_tile_stored(0, cp, ldc_b);
	_tile_stored(1, cp + 16, ldc_b);
	_tile_stored(2, cp + 16 * c->ldc, ldc_b);
	_tile_stored(3, cp + 16 * c->ldc + 16, ldc_b);
}

/* The part of c from row m0 and column n0 on (m x n) with the vpdpbusd kernel:
   the batch a chunk of addresses at a time, accumulating after the first. */
static void vnni_part(const struct hgc_rt_call *c, int64_t m0, int64_t n0, int64_t m, int64_t n)
{
	const void *pa[32], *pb[32];
	struct hgc_rt_call s = *c;
	int64_t b0, i, nb;

	if (m <= 0 || n <= 0)
		return;
	s.A = pa;
	s.B = pb;
	s.C = (int32_t *)c->C + m0 * c->ldc + n0;
	s.M = m;
	s.N = n;
	for (b0 = 0; b0 < c->bs; b0 += nb) {
		nb = c->bs - b0 < 32 ? c->bs - b0 : 32;
		for (i = 0; i < nb; i++) {
			pa[i] = (const uint8_t *)c->A[b0 + i] + m0 * c->lda;
			pb[i] = (const int8_t *)c->B[b0 + i] + 4 * n0;
		}
		s.bs = nb;
		hgc_rt_u8s8_avx512(&s);
		s.beta = 1;
	}
}

/*
 * u8 x s8 -> s32 brgemm with AMX: the whole 32x32 blocks of C, row blocks
 * outer; the rows and columns past the last whole block with the vpdpbusd
 * kernel, and a call entirely when its whole blocks hold less than 3/4 of C
 * or K is below 64 (transformer's 40x64x40 ran 0.51 of oneDNN so and 0.44
 * split; dlrm's 128x13x512 ten times slower through copies).
 */
void hgc_rt_u8s8_amx(const struct hgc_rt_call *c)
{
	int64_t m32 = c->M - c->M % 32, n32 = c->N - c->N % 32, m0, n0;

	if (c->K < 64 || 4 * m32 * n32 < 3 * c->M * c->N) {
		hgc_rt_u8s8_avx512(c);
		return;
	}
	configure();
	for (m0 = 0; m0 < m32; m0 += 32)
		for (n0 = 0; n0 < n32; n0 += 32)
			block(c, m0, n0);
	_tile_release();
	vnni_part(c, 0, n32, c->M, c->N - n32);
	vnni_part(c, m32, 0, c->M - m32, n32);
}
