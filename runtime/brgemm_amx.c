/*
 * brgemm_amx.c: u8 x s8 -> s32 (tdpbusd) and bf16 -> f32 (tdpbf16ps) with
 * AMX, on the Xeons that have it.
 *
 * The int8 and bf16 B packings (4 k or 2 k of a column in one 32-bit lane,
 * runtime.md) are AMX's B layouts: a B tile is 16 packed rows by 64 bytes
 * (16 columns), read with the stride ldb.  An A tile is 16 rows by 64 bytes
 * of k (64 int8 or 32 bf16), stride lda; a C tile 16 rows by 16 s32 or
 * f32, stride ldc * 4.  The tiles: tmm0-3 hold a 32x32 block of C, tmm4-5
 * two A tiles, tmm6-7 two B tiles; one chunk of 64 bytes of k is 4 loads
 * and 4 dot products of 16x16 (16 cycles each).
 *
 * Every tile is 16 rows by 64 bytes (one configuration, loaded by a call
 * that finds another: other code on the thread, oneDNN for one, may have
 * changed it; left in place after the call for the next).  The k
 * past the last multiple of 64 bytes (K is a multiple of the packing) goes
 * through zero-padded copies on the stack; the rows and columns past the
 * last whole 32x32 block go to the zmm kernel (brgemm_avx512.c).
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

/*
 * Make the thread's tile configuration the one every tile of this file
 * uses.  Loading it (ldtilecfg) took 50 ns on the Xeon, a tenth of an int8
 * 64x64x64 call with its epilogue; reading the one in force (sttilecfg:
 * all zeros once released) and comparing takes 7.5 ns.  So a call loads it
 * only when it finds another, and leaves it configured.
 */
static void configure(void)
{
	static const struct tilecfg want = {
		.palette = 1,
		.colsb = {TB, TB, TB, TB, TB, TB, TB, TB},
		.rows = {TR, TR, TR, TR, TR, TR, TR, TR},
	};
	struct tilecfg cur;

	_tile_storeconfig(&cur);
	if (memcmp(&cur, &want, sizeof(want)))
		_tile_loadconfig(&want);
}

/* Rows 0..nr-1 of A's k bytes k0.. (kb of them, kb < 64) into buf, zero-padded to 64
   bytes a row. */
static void pad_a(const char *a, int64_t lda_b, int64_t k0, int kb, int nr, char *buf)
{
	int i;

	memset(buf, 0, (size_t)nr * TB);
	for (i = 0; i < nr; i++)
		memcpy(buf + i * TB, a + i * lda_b + k0, (size_t)kb);
}

/* The packed rows of B for A's k bytes k0.. (kb of them, kb < 64; a packed row holds 4
   bytes of A's k for each column) of 32 columns into buf, zero-padded to 16 rows of 128
   bytes. */
static void pad_b(const char *bp, int64_t ldb_b, int64_t k0, int kb, char *buf)
{
	int r;

	memset(buf, 0, TR * 2 * TB);
	for (r = 0; r < kb / 4; r++)
		memcpy(buf + r * 2 * TB, bp + (k0 / 4 + r) * ldb_b, 2 * TB);
}

/* One k chunk (64 bytes of A a row) into the 32x32 block: A's two row tiles, B's two
   column tiles, 4 tdpbusd or tdpbf16ps. */
static inline __attribute__((always_inline)) void
chunk(const char *a, int64_t lda_b, const char *b, int64_t ldb_b, int bf16)
{
	_tile_loadd(4, a, lda_b);
	_tile_loadd(5, a + 16 * lda_b, lda_b);
	_tile_loadd(6, b, ldb_b);
	_tile_loadd(7, b + 64, ldb_b);
	if (bf16) {
		_tile_dpbf16ps(0, 4, 6);
		_tile_dpbf16ps(1, 4, 7);
		_tile_dpbf16ps(2, 5, 6);
		_tile_dpbf16ps(3, 5, 7);
	} else {
		_tile_dpbusd(0, 4, 6);
		_tile_dpbusd(1, 4, 7);
		_tile_dpbusd(2, 5, 6);
		_tile_dpbusd(3, 5, 7);
	}
}

/* A 32x32 block of C (s32 or f32) at (m0, n0): whole k chunks in place, a last one of
   fewer than 64 bytes of A's k through zero-padded copies.  esz: bytes of an A element. */
static inline __attribute__((always_inline)) void
block(const struct hgc_rt_call *c, int64_t m0, int64_t n0, int esz, int bf16)
{
	char *cp = (char *)c->C + (m0 * c->ldc + n0) * 4;
	int64_t ldc_b = c->ldc * 4, lda_b = c->lda * esz, ldb_b = c->ldb * esz, b, k;
	int64_t kbytes = c->K * esz, kfull = kbytes - kbytes % 64;
	char abuf[32 * TB], bbuf[TR * 2 * TB];

	if (c->beta) {
		_tile_loadd(0, cp, ldc_b);
		_tile_loadd(1, cp + 64, ldc_b);
		_tile_loadd(2, cp + 16 * ldc_b, ldc_b);
		_tile_loadd(3, cp + 16 * ldc_b + 64, ldc_b);
	} else {
		_tile_zero(0);
		_tile_zero(1);
		_tile_zero(2);
		_tile_zero(3);
	}
	for (b = 0; b < c->bs; b++) {
		const char *a = (const char *)c->A[b] + m0 * lda_b;
		const char *bp = (const char *)c->B[b] + 4 * n0;

		for (k = 0; k < kfull; k += 64)
			chunk(a + k, lda_b, bp + (k / 4) * ldb_b, ldb_b, bf16);
		if (kfull < kbytes) {
			pad_a(a, lda_b, kfull, (int)(kbytes - kfull), 32, abuf);
			pad_b(bp, ldb_b, kfull, (int)(kbytes - kfull), bbuf);
			chunk(abuf, TB, bbuf, 2 * TB, bf16);
		}
	}
	_tile_stored(0, cp, ldc_b);
	_tile_stored(1, cp + 64, ldc_b);
	_tile_stored(2, cp + 16 * ldc_b, ldc_b);
	_tile_stored(3, cp + 16 * ldc_b + 64, ldc_b);
}

static void block_u8s8(const struct hgc_rt_call *c, int64_t m0, int64_t n0)
{
	block(c, m0, n0, 1, 0);
}

static void block_bf16(const struct hgc_rt_call *c, int64_t m0, int64_t n0)
{
	block(c, m0, n0, 2, 1);
}

/* The part of c from row m0 and column n0 on (m x n) with the zmm kernel: the batch a
   chunk of addresses at a time, accumulating after the first. */
static void zmm_part(const struct hgc_rt_call *c, int64_t m0, int64_t n0, int64_t m, int64_t n,
		     int esz, hgc_rt_kernel_fn *kernel)
{
	const void *pa[32], *pb[32];
	struct hgc_rt_call s = *c;
	int64_t b0, i, nb;

	if (m <= 0 || n <= 0)
		return;
	s.A = pa;
	s.B = pb;
	s.C = (char *)c->C + (m0 * c->ldc + n0) * 4;
	s.M = m;
	s.N = n;
	for (b0 = 0; b0 < c->bs; b0 += nb) {
		nb = c->bs - b0 < 32 ? c->bs - b0 : 32;
		for (i = 0; i < nb; i++) {
			pa[i] = (const char *)c->A[b0 + i] + m0 * c->lda * esz;
			pb[i] = (const char *)c->B[b0 + i] + 4 * n0;
		}
		s.bs = nb;
		kernel(&s);
		s.beta = 1;
	}
}

/*
 * A brgemm with AMX: the whole 32x32 blocks of C, row blocks outer; the
 * rows and columns past the last whole block with the zmm kernel, and a
 * call entirely when its whole blocks hold less than 3/4 of C or A's k is
 * below 64 bytes (transformer's int8 40x64x40 ran 0.51 of oneDNN on
 * vpdpbusd and 0.44 split; dlrm's 128x13x512 ten times slower through
 * copies).
 */
static void run(const struct hgc_rt_call *c, int esz, hgc_rt_kernel_fn *zmm,
		void (*blk)(const struct hgc_rt_call *, int64_t, int64_t))
{
	int64_t m32 = c->M - c->M % 32, n32 = c->N - c->N % 32, m0, n0;

	if (c->K * esz < 64 || 4 * m32 * n32 < 3 * c->M * c->N) {
		zmm(c);
		return;
	}
	configure();
	for (m0 = 0; m0 < m32; m0 += 32)
		for (n0 = 0; n0 < n32; n0 += 32)
			blk(c, m0, n0);
	zmm_part(c, 0, n32, c->M, c->N - n32, esz, zmm);
	zmm_part(c, m32, 0, c->M - m32, n32, esz, zmm);
}

/* u8 x s8 -> s32 with tdpbusd. */
void hgc_rt_u8s8_amx(const struct hgc_rt_call *c)
{
	run(c, 1, hgc_rt_u8s8_avx512, block_u8s8);
}

/* bf16 x bf16 -> f32 with tdpbf16ps. */
void hgc_rt_bf16_amx(const struct hgc_rt_call *c)
{
	run(c, 2, hgc_rt_bf16_avx512, block_bf16);
}
