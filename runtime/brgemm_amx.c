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
 * The ways through a call (run picks one).  A call of one batch element
 * and one chunk of k, or whose shape the 32x32 blocks would pad (and K is
 * at most 64 bytes or a multiple of 64), runs tile by tile in a
 * configuration made for it (run_exact: the last rows, columns and a short
 * k chunk are tiles of their own size, so nothing is copied; a row of
 * tiles shares its A tile, exact_row).  An int8 call of one batch element,
 * two chunks of k and whole tiles keeps both A tiles for a row (run_row2).
 * Rows and columns in multiples of 32 with K in chunks of 64 bytes run in
 * 32x32 blocks of C (2x2 tiles, every tile 16 rows by 64 bytes), and so
 * does the rest, with the k past the last multiple of 64 bytes and the
 * rows and columns of a last partial block through zero-padded copies on
 * the stack, a partial block of fewer than 8 in the zmm kernel
 * (brgemm_avx512.c).  A configuration is loaded by a call that finds
 * another in force (other code on the thread, oneDNN for one, may have
 * changed it) and left in place for the next call.  A call whose A
 * continues a stream asks for the next call's A into L2 (next_a).
 */
#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#include "runtime/runtime_int.h"
#include "runtime/requant_avx512.inc"

#define TR 16		/* tile rows */
#define TB 64		/* tile row bytes */

/* The tile configuration (palette 1): 8 tiles of 16 rows by 64 bytes. */
struct tilecfg {
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
};

/*
 * Make the thread's tile configuration tmm0-7 of rows[i] rows by colsb[i]
 * bytes.  Loading one (ldtilecfg) took 50 ns on the Xeon, a tenth of an
 * int8 64x64x64 call with its epilogue; reading the one in force
 * (sttilecfg: all zeros once released) and comparing takes 7.5 ns.  So a
 * call loads its own only when it finds another, and leaves it configured.
 */
static void use_config(const uint8_t rows[8], const uint16_t colsb[8])
{
	struct tilecfg want = {.palette = 1}, cur;

	memcpy(want.rows, rows, 8);
	memcpy(want.colsb, colsb, 8 * sizeof(colsb[0]));
	_tile_storeconfig(&cur);
	if (memcmp(&cur, &want, sizeof(want)))
		_tile_loadconfig(&want);
}

/* The configuration of the 32x32 blocks: every tile 16 rows by 64 bytes. */
static void configure(void)
{
	static const uint8_t rows[8] = {TR, TR, TR, TR, TR, TR, TR, TR};
	static const uint16_t colsb[8] = {TB, TB, TB, TB, TB, TB, TB, TB};

	use_config(rows, colsb);
}

/*
 * The tile configuration of the exact path (run_exact): C tiles of 16 or mt
 * rows by 16 or nt columns (tmm0: 16 x 16, tmm1: 16 x nt, tmm2: mt x 16,
 * tmm3: mt x nt), A tiles of 16 or mt rows by kc bytes (tmm4, tmm5), B
 * tiles of kc / 4 packed rows by 16 or nt columns (tmm6, tmm7).  With mt
 * = nt = 16 and kc = 64 it is configure()'s, so calls of both paths share
 * one configuration where their shapes allow.
 */
static void configure_exact(int mt, int nt, int kc)
{
	const uint8_t rows[8] = {TR, TR, mt, mt, TR, mt, kc / 4, kc / 4};
	const uint16_t colsb[8] = {TB, nt * 4, TB, nt * 4, kc, kc, TB, nt * 4};

	use_config(rows, colsb);
}

/*
 * Asking for the next call's A into L2 while a call runs, where A streams:
 * the call's A (every batch element's rows, K bytes each) ends where the
 * next call's begins, as in a batched MatMul over many inputs (bert_large's
 * 1536 x 384x384x64: 147 KiB of A a call, from memory).  A call whose A
 * begins where the last such call's ended (hgc_rt_a_stream) fetches as
 * much after its own, in shares before each of its blocks (tiles).  On
 * the Xeon (`hgc-bench --fastest --filter int8_bert_large_b1536`, three
 * rounds alternated) 1536 x 384x384x64 took 37.9-38.6 -> 34.5-35.9 ms at
 * one thread (oneDNN 33-34), 19.6-20.1 -> 18.5-18.8 at two; 384x64x384
 * (24 KiB of A, 147 KiB of u8 results a call) stayed where it was.
 */
#define NEXT_A_MIN (16 << 10)

struct next_a {
	const char *at;		/* the next line to ask for */
	int64_t left, share;	/* lines still to ask for, and at each step */
};

/*
 * The streams of A: the 32x32 blocks' and the exact path's calls ask from
 * the first call that continues one; the two-chunk path's only once its
 * stream has run past ROW2_STREAM_MIN (this machine's L2, 2 MiB): a batch
 * of calls whose inputs all fit L2 finds them there anyway, and the
 * prefetches only cost (12 x 128x128x64 0.949-0.957 -> 0.906-0.910 of
 * oneDNN packed with them from the first call), while 1536 such calls
 * stream A from memory (0.820-0.848 -> 0.861-0.917; docs/runtime.md).
 */
enum a_stream { A_BLOCKS, A_ROW2 };
#define ROW2_STREAM_MIN ((int64_t)2 << 20)
static const int64_t a_stream_min[HGC_RT_A_STREAMS] = { [A_BLOCKS] = 1, [A_ROW2] = ROW2_STREAM_MIN };

/* Set na up for a call of `steps` steps whose A continues stream s far enough;
   else na asks for nothing. */
static void next_a_init(const struct hgc_rt_call *c, int64_t lda_b, int64_t kbytes, int64_t steps,
			enum a_stream s, struct next_a *na)
{
	const char *start = c->A[0];
	const char *end = (const char *)c->A[c->bs - 1] + (c->M - 1) * lda_b + kbytes;

	na->left = 0;
	if (end - start < NEXT_A_MIN || hgc_rt_a_stream(s, start, end) < a_stream_min[s])
		return;
	na->at = end;
	na->left = (end - start + 63) / 64;
	na->share = (na->left + steps - 1) / steps;
}

static inline void next_a_step(struct next_a *na)
{
	int64_t i;

	for (i = 0; i < na->share && na->left > 0; i++, na->left--, na->at += 64)
		_mm_prefetch(na->at, _MM_HINT_T1);
}

/* n bytes (n < 0: none) from src to dst, then zeros up to width, a multiple of 64. */
static void copy_pad(char *dst, const char *src, int64_t n, int64_t width)
{
	int64_t off;

	for (off = 0; off < width; off += TB) {
		int64_t m = n - off;
		__mmask64 k = m >= TB ? ~(__mmask64)0 : m <= 0 ? 0 : ((__mmask64)1 << m) - 1;

		_mm512_storeu_si512(dst + off, _mm512_maskz_loadu_epi8(k, src + off));
	}
}

/*
 * Rows 0..nr-1 of A's k bytes k0.. (kb of them, kb < 64) into buf, zero-padded to 64
 * bytes a row: a masked load and a store a row (with memset and memcpy, the padded
 * copies of the last chunk took 1.3 of the 3.55 us of a 128x64x480 call).
 */
static void pad_a(const char *a, int64_t lda_b, int64_t k0, int kb, int nr, char *buf)
{
	int i;

	for (i = 0; i < nr; i++)
		copy_pad(buf + i * TB, a + i * lda_b + k0, kb, TB);
}

/* The packed rows of B for A's k bytes k0.. (kb of them, kb < 64; a packed row holds 4
   bytes of A's k for each column) of 32 columns into buf, zero-padded to 16 rows of 128
   bytes. */
static void pad_b(const char *bp, int64_t ldb_b, int64_t k0, int kb, char *buf)
{
	const char *src = bp + k0 / 4 * ldb_b;
	int r;

	for (r = 0; r < TR; r++)
		copy_pad(buf + r * 2 * TB, src + r * ldb_b, r < kb / 4 ? 2 * TB : 0, 2 * TB);
}

/*
 * One k chunk (64 bytes of A a row) into the 32x32 block: A's two row tiles, B's two
 * column tiles, 4 tdpbusd or tdpbf16ps.  Tile registers are not renamed: a load into
 * tmm4..7 waits for the last product that reads the old tile.  So each load comes
 * right before its first product and the tile used last in one chunk (B's second)
 * is loaded last in the next.  On the Xeon (bench/ukernel, in-cache calls, three
 * runs alternated with the four loads first): bf16 128x64x512 13.3-13.4 -> 14.0-14.2
 * times the vdpbf16ps zmm peak, int8 128x64x1024 3.84-3.89 -> 3.88-3.99 times the
 * vpdpbusd one, the other int8 shapes within 1-2% either way.
 */
static inline __attribute__((always_inline)) void
chunk(const char *a, int64_t lda_b, const char *b, int64_t ldb_b, int bf16)
{
	_tile_loadd(6, b, ldb_b);
	_tile_loadd(4, a, lda_b);
	if (bf16) {
		_tile_dpbf16ps(0, 4, 6);
		_tile_loadd(5, a + 16 * lda_b, lda_b);
		_tile_dpbf16ps(2, 5, 6);
		_tile_loadd(7, b + 64, ldb_b);
		_tile_dpbf16ps(1, 4, 7);
		_tile_dpbf16ps(3, 5, 7);
	} else {
		_tile_dpbusd(0, 4, 6);
		_tile_loadd(5, a + 16 * lda_b, lda_b);
		_tile_dpbusd(2, 5, 6);
		_tile_loadd(7, b + 64, ldb_b);
		_tile_dpbusd(1, 4, 7);
		_tile_dpbusd(3, 5, 7);
	}
}

/*
 * How a call's 32x32 blocks read their operands.  Whole blocks read A and B
 * in place; the rows past the last whole block of 32 (or all rows, when K
 * is under one chunk) come from a zero-padded copy of A, 32 rows a block,
 * every chunk of k whole; the columns past the last whole block (or all)
 * from a zero-padded copy of B's packed rows.  apad/bpad NULL: none.
 */
struct plan {
	int64_t lda_b, ldb_b, kbytes, kfull, kpad;	/* kpad: kbytes rounded up to 64 */
	const char *apad, *bpad;
	int64_t arow0, bcol0;		/* the first row / column in the copy */
	int64_t apad_batch, bpad_ld, bpad_batch;	/* bytes a batch element, a B row */
};

/* Whether the block rows from m0 (columns from n0) read the padded copy. */
static inline bool in_apad(const struct plan *p, int64_t m0)
{
	return p->apad && m0 >= p->arow0;
}

static inline bool in_bpad(const struct plan *p, int64_t n0)
{
	return p->bpad && n0 >= p->bcol0;
}

/* A's rows m0.. of batch element b for plan p: the pointer and its row stride. */
static inline const char *a_rows(const struct hgc_rt_call *c, const struct plan *p, int64_t b,
				 int64_t m0, int64_t *ld)
{
	if (in_apad(p, m0)) {
		*ld = p->kpad;
		return p->apad + b * p->apad_batch + (m0 - p->arow0) * p->kpad;
	}
	*ld = p->lda_b;
	return (const char *)c->A[b] + m0 * p->lda_b;
}

/* B's columns n0.. of batch element b for plan p: the pointer and its packed row stride. */
static inline const char *b_cols(const struct hgc_rt_call *c, const struct plan *p, int64_t b,
				 int64_t n0, int64_t *ld)
{
	if (in_bpad(p, n0)) {
		*ld = p->bpad_ld;
		return p->bpad + b * p->bpad_batch + 4 * (n0 - p->bcol0);
	}
	*ld = p->ldb_b;
	return (const char *)c->B[b] + 4 * n0;
}

/* Load (beta 1) or zero the 32x32 block of C at cp, ldc_b bytes a row. */
static inline __attribute__((always_inline)) void c_start(const char *cp, int64_t ldc_b, int beta)
{
	if (beta) {
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
}

/* Store the 32x32 block to cp. */
static inline __attribute__((always_inline)) void c_store(char *cp, int64_t ldc_b)
{
	_tile_stored(0, cp, ldc_b);
	_tile_stored(1, cp + 64, ldc_b);
	_tile_stored(2, cp + 16 * ldc_b, ldc_b);
	_tile_stored(3, cp + 16 * ldc_b + 64, ldc_b);
}

/*
 * A 32x32 block of C (s32 or f32) at (m0, n0), mr x nc of it inside C:
 * whole k chunks from where plan p says, a last one of fewer than 64 bytes
 * of k through zero-padded copies unless it is in a padded operand already.
 * A block that sticks out of C goes through a 32x32 buffer.
 */
static inline __attribute__((always_inline)) void
block(const struct hgc_rt_call *c, const struct plan *p, int64_t m0, int64_t n0, int bf16)
{
	int64_t ldc_b = c->ldc * 4, mr = c->M - m0 < 32 ? c->M - m0 : 32;
	int64_t nc = c->N - n0 < 32 ? c->N - n0 : 32, b, k, lda, ldb, i;
	char *cp = (char *)c->C + (m0 * c->ldc + n0) * 4;
	char abuf[32 * TB], bbuf[TR * 2 * TB], cbuf[32 * 32 * 4];
	bool whole = mr == 32 && nc == 32;
	int kb = (int)(p->kbytes - p->kfull);

	if (!whole && c->beta) {
		memset(cbuf, 0, sizeof(cbuf));
		for (i = 0; i < mr; i++)
			memcpy(cbuf + i * 128, cp + i * ldc_b, (size_t)nc * 4);
	}
	c_start(whole ? cp : cbuf, whole ? ldc_b : 128, c->beta);
	for (b = 0; b < c->bs; b++) {
		const char *a = a_rows(c, p, b, m0, &lda), *bp = b_cols(c, p, b, n0, &ldb);
		const char *at = a + p->kfull, *bt = bp + (p->kfull / 4) * ldb;

		for (k = 0; k < p->kfull; k += 64)
			chunk(a + k, lda, bp + (k / 4) * ldb, ldb, bf16);
		if (!kb)
			continue;
		/* the last chunk: whole in a padded copy, else copied out padded */
		if (!in_apad(p, m0)) {
			pad_a(a, lda, p->kfull, kb, 32, abuf);
			at = abuf;
			lda = TB;
		}
		if (!in_bpad(p, n0)) {
			pad_b(bp, ldb, p->kfull, kb, bbuf);
			bt = bbuf;
			ldb = 2 * TB;
		}
		chunk(at, lda, bt, ldb, bf16);
	}
	if (whole) {
		c_store(cp, ldc_b);
		return;
	}
	c_store(cbuf, 128);
	for (i = 0; i < mr; i++)
		memcpy(cp + i * ldc_b, cbuf + i * 128, (size_t)nc * 4);
}

static void block_u8s8(const struct hgc_rt_call *c, const struct plan *p, int64_t m0, int64_t n0)
{
	block(c, p, m0, n0, 0);
}

static void block_bf16(const struct hgc_rt_call *c, const struct plan *p, int64_t m0, int64_t n0)
{
	block(c, p, m0, n0, 1);
}

/* Rows [r0, r1) of A, every batch element, into buf: 32-row blocks of kpad bytes a row, zeros
   past r1 and past K. */
static void fill_apad(const struct hgc_rt_call *c, const struct plan *p, int64_t r0, int64_t r1,
		      char *buf)
{
	int64_t b, i, rows = p->apad_batch / p->kpad;

	for (b = 0; b < c->bs; b++)
		for (i = 0; i < rows; i++)
			copy_pad(buf + b * p->apad_batch + i * p->kpad,
				 (const char *)c->A[b] + (r0 + i) * p->lda_b,
				 r0 + i < r1 ? p->kbytes : 0, p->kpad);
}

/* Columns [c0, c1) of B's packed rows, every batch element, into buf: bpad_ld bytes a row,
   kpad / 4 rows, zeros past c1 and past K. */
static void fill_bpad(const struct hgc_rt_call *c, const struct plan *p, int64_t c0, int64_t c1,
		      char *buf)
{
	int64_t b, r;

	for (b = 0; b < c->bs; b++)
		for (r = 0; r < p->kpad / 4; r++)
			copy_pad(buf + b * p->bpad_batch + r * p->bpad_ld,
				 (const char *)c->B[b] + r * p->ldb_b + 4 * c0,
				 r < p->kbytes / 4 ? (c1 - c0) * 4 : 0, p->bpad_ld);
}

/* The part of c from row m0 and column n0 on (m x n) with the zmm kernel: the batch a
   chunk of addresses at a time, accumulating after the first. */
static void zmm_part(const struct hgc_rt_call *c, int64_t m0, int64_t n0, int64_t m, int64_t n,
		     int esz, hgc_rt_kernel_fn *kernel)
{
	const void *pa[32], *pb[32];
	struct hgc_rt_call s;
	int64_t b0, i, nb;

	if (m <= 0 || n <= 0)	/* most calls: before copying the call */
		return;
	s = *c;
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

/* T(CT, AT, BT, DP) for the kind `tile` of C tile (bit 0: the last columns, in tmm1 and
   tmm3 with B in tmm7; bit 1: the last rows, in tmm2 and tmm3 with A in tmm5). */
#define BY_TILE(T, DP)                                                               \
	do {                                                                         \
		switch (tile) {                                                      \
		case 0: T(0, 4, 6, DP); break;                                       \
		case 1: T(1, 4, 7, DP); break;                                       \
		case 2: T(2, 5, 6, DP); break;                                       \
		default: T(3, 5, 7, DP); break;                                      \
		}                                                                    \
	} while (0)

/* C tile CT from cp (ldc_b bytes a row) where the call accumulates, else zeros. */
#define TILE_START(CT)                                                               \
	do {                                                                         \
		if (c->beta)                                                         \
			_tile_loadd(CT, cp, ldc_b);                                  \
		else                                                                 \
			_tile_zero(CT);                                              \
	} while (0)

/*
 * One C tile of the exact path, in tile CT from A tile AT and B tile BT:
 * every batch element's k chunks (64 bytes, or all of a K of at most 64),
 * then the store.  The configuration gives each tile its rows and bytes, so
 * a tile of the last rows or columns reads and writes only those: no copies.
 */
#define EXACT_TILE(CT, AT, BT, DP)                                                   \
	do {                                                                         \
		TILE_START(CT);                                                      \
		for (b = 0; b < c->bs; b++)                                          \
			for (k = 0; k < kbytes; k += TB) {                           \
				_tile_loadd(AT, (const char *)c->A[b] + m0 * lda_b + k, lda_b); \
				_tile_loadd(BT, (const char *)c->B[b] + k / 4 * ldb_b + 4 * n0, \
					    ldb_b);                                  \
				DP(CT, AT, BT);                                      \
			}                                                            \
		_tile_stored(CT, cp, ldc_b);                                         \
	} while (0)

/* The tile of C at (m0, n0), of the kind tile (bit 0: the last columns, bit 1: the last
   rows), with tdpbusd or tdpbf16ps. */
static inline __attribute__((always_inline)) void
exact_tile(const struct hgc_rt_call *c, int64_t m0, int64_t n0, int tile, int esz)
{
	int64_t lda_b = c->lda * esz, ldb_b = c->ldb * esz, ldc_b = c->ldc * 4;
	int64_t kbytes = c->K * esz, b, k;
	char *cp = (char *)c->C + (m0 * c->ldc + n0) * 4;

	if (esz == 1)
		BY_TILE(EXACT_TILE, _tile_dpbusd);
	else
		BY_TILE(EXACT_TILE, _tile_dpbf16ps);
}

/* One tile of a row of C whose A tile AT is loaded: B's tile into BT, the product into CT,
   the store. */
#define ROW_TILE(CT, AT, BT, DP)                                                     \
	do {                                                                         \
		TILE_START(CT);                                                      \
		_tile_loadd(BT, bp + 4 * n0, ldb_b);                                 \
		DP(CT, AT, BT);                                                      \
		_tile_stored(CT, cp, ldc_b);                                         \
	} while (0)


/*
 * The row of C tiles from row m0 (last: the last rows) of a call of one
 * batch element and one chunk of k: A's tile loaded once, then a C tile a
 * column.  Tiles are not renamed, so a tile's load waits for the product
 * that last read it: where the columns are a multiple of 16, the second
 * set of column tiles (tmm1, tmm7: 16 columns then) takes every other
 * column, so one column's load and store overlap the other's product.
 */
static inline __attribute__((always_inline)) void
exact_row(const struct hgc_rt_call *c, int64_t m0, int last, int esz)
{
	int64_t lda_b = c->lda * esz, ldb_b = c->ldb * esz, ldc_b = c->ldc * 4;
	const char *a = (const char *)c->A[0] + m0 * lda_b, *bp = (const char *)c->B[0];
	int64_t cols = (c->N + TR - 1) / TR, j;
	bool alternate = c->N % TR == 0;

	if (last)
		_tile_loadd(5, a, lda_b);
	else
		_tile_loadd(4, a, lda_b);
	for (j = 0; j < cols; j++) {
		/* last columns of their own second, between two of the first set */
		int64_t col = alternate || cols < 3 || !j ? j : j == 1 ? cols - 1 : j - 1;
		int64_t n0 = col * TR;
		char *cp = (char *)c->C + (m0 * c->ldc + n0) * 4;
		int tile = 2 * last + (c->N - n0 < TR || (alternate && j % 2));

		if (esz == 1)
			BY_TILE(ROW_TILE, _tile_dpbusd);
		else
			BY_TILE(ROW_TILE, _tile_dpbf16ps);
	}
}

/* One tile of a row of C over two chunks of k: A's two tiles loaded (tmm4, tmm5), B's
   two into tmm6 and tmm7, the products (tdpbusd) into CT, the store. */
#define ROW2_TILE(CT)                                                                \
	do {                                                                         \
		TILE_START(CT);                                                      \
		_tile_loadd(6, bp + 4 * n0, ldb_b);                                  \
		_tile_dpbusd(CT, 4, 6);                                              \
		_tile_loadd(7, bp + 16 * ldb_b + 4 * n0, ldb_b);                     \
		_tile_dpbusd(CT, 5, 7);                                              \
		_tile_stored(CT, cp, ldc_b);                                         \
	} while (0)

/*
 * A call of one batch element, two chunks of k (the second may be short)
 * and rows and columns in whole tiles: each row of C tiles with its two A
 * tiles loaded once, the C tiles taking tmm0-3 in turn, so that a tile's
 * store overlaps the next one's products.  int8 only: bf16's 128x64x64
 * ran 12.2-12.4 -> 11.2-11.3 times the vdpbf16ps peak.  u8s8 against the
 * 32x32 blocks (bench/ukernel, fraction of the vpdpbusd peak, two rounds):
 * 128x64x128 2.76-2.79 -> 3.34-3.43 (bert's 128x128x64 calls), 64x64x128
 * 3.86-3.95 -> 4.92-5.00, 32x64x128 3.35-3.38 -> 4.67-4.71, 128x64x96
 * (a short second chunk, padded by the blocks) 1.52-1.59 -> 2.92-3.64.
 */
static bool takes_row2(const struct hgc_rt_call *c, int esz)
{
	return esz == 1 && c->bs == 1 && c->K > TB && c->K <= 2 * TB && c->M % TR == 0 &&
	       c->N % TR == 0;
}

/* takes_row2's calls: a configuration of 16x16 C tiles, A and B tiles of the two chunks. */
static void run_row2(const struct hgc_rt_call *c)
{
	int64_t lda_b = c->lda, ldb_b = c->ldb, ldc_b = c->ldc * 4, m0, n0, j;
	int kb = (int)(c->K - TB);
	const char *bp = (const char *)c->B[0];
	const uint8_t rows[8] = {TR, TR, TR, TR, TR, TR, TR, kb / 4};
	const uint16_t colsb[8] = {TB, TB, TB, TB, TB, kb, TB, TB};
	struct next_a na;

	next_a_init(c, lda_b, c->K, c->M / TR, A_ROW2, &na);
	use_config(rows, colsb);
	for (m0 = 0; m0 < c->M; m0 += TR) {
		const char *a = (const char *)c->A[0] + m0 * lda_b;

		next_a_step(&na);
		_tile_loadd(4, a, lda_b);
		_tile_loadd(5, a + TB, lda_b);
		for (j = 0, n0 = 0; n0 < c->N; n0 += TR, j++) {
			char *cp = (char *)c->C + (m0 * c->ldc + n0) * 4;

			switch (j % 4) {
			case 0: ROW2_TILE(0); break;
			case 1: ROW2_TILE(1); break;
			case 2: ROW2_TILE(2); break;
			default: ROW2_TILE(3); break;
			}
		}
	}
}

/*
 * Below these the exact path loses to the zmm kernel (bench/ukernel, one
 * thread, u8s8 GOP/s zmm / exact): 4x256x512 641 / 552 but 8x256x512 642 /
 * 1116 (1 row: 277 / 177); and a K under 32 bytes with a C past 32 KiB
 * (128x512x16 391 / 316, 128x256x16 395 / 335), where with a C that stays
 * in L1 the exact path wins (128x64x16 361 / 650, 128x64x8 251 / 328,
 * 128x64x4 143 / 164, 128x64x16 bs4 601 / 1047: dlrm's K = 13).
 */
#define EXACT_MIN_ROWS 8
#define EXACT_SHORT_K 32
#define EXACT_SHORT_K_C (32 << 10)

/*
 * Whether the exact path takes call c: one width of k chunk (K of at most
 * 64 bytes, or a multiple of 64), and a shape the 32x32 blocks would pad
 * (rows or columns past a multiple of 32, or k past a multiple of 64) or
 * one chunk of one batch element (exact_row: each A tile loaded once).
 * Over several chunks the 32x32 blocks stay faster where they pad
 * nothing: 2x2 tiles load each A and B tile for two products (u8s8
 * 64x64x256 3334 against 2884 GOP/s exact).  Against the 32x32 blocks with
 * copies, or zmm where they declined (bench/ukernel, one thread, GOP/s):
 * 40x40x64 450 -> 1135, 40x64x40 547 -> 1286, 20x20x64 269 -> 673,
 * 128x1x256 32 -> 240, 13x17x1024 bs4 270 -> 758; one chunk of whole
 * blocks, fraction of the vpdpbusd peak: 128x128x64 1.47 -> 1.85,
 * 32x64x64 2.09 -> 2.73, 64x64x64 2.38 -> 2.44.
 */
static bool takes_exact(const struct hgc_rt_call *c, int esz)
{
	int64_t kbytes = c->K * esz;

	if (kbytes > TB && kbytes % TB)
		return false;
	if (c->M < EXACT_MIN_ROWS || (kbytes < EXACT_SHORT_K && c->M * c->N * 4 > EXACT_SHORT_K_C))
		return false;
	return (c->bs == 1 && kbytes <= TB) || c->M % 32 || c->N % 32 || kbytes % TB;
}

/*
 * A brgemm with AMX over 16x16 tiles of C, one at a time, row tiles outer,
 * in a configuration made for the call's shape (configure_exact): the
 * last rows and columns are tiles of their own size, and a K under 64
 * bytes is one short chunk.  It reads A and B where they are and writes C
 * in place, where the 32x32 blocks (block) pad a partial block of rows,
 * columns or k through copies, or leave it to the zmm kernel.
 */
static void run_exact(const struct hgc_rt_call *c, int esz)
{
	int mt = (int)(c->M % TR), nt = (int)(c->N % TR);
	int64_t m0, n0, kbytes = c->K * esz;
	struct next_a na;

	next_a_init(c, c->lda * esz, kbytes, (c->M + TR - 1) / TR, A_BLOCKS, &na);
	configure_exact(mt ? mt : TR, nt ? nt : TR, kbytes < TB ? (int)kbytes : TB);
	for (m0 = 0; m0 < c->M; m0 += TR) {
		int last = c->M - m0 < TR;

		next_a_step(&na);
		if (c->bs == 1 && kbytes <= TB) {
			exact_row(c, m0, last, esz);
			continue;
		}
		for (n0 = 0; n0 < c->N; n0 += TR)
			exact_tile(c, m0, n0, 2 * last + (c->N - n0 < TR), esz);
	}
}

/* Bytes of the padded copies on the stack at most (each of A and B). */
#define PAD_MAX (32 << 10)
/* Rows or columns of a partial block at least, for AMX to take it (of 32). */
#define PART_MIN 8

/* The end of the rows (or columns) of n that AMX takes: all, unless the last partial block
   holds fewer than PART_MIN. */
static int64_t amx_end(int64_t n)
{
	return n % 32 && n % 32 < PART_MIN ? n - n % 32 : n;
}

/*
 * The rows (or columns) of n that AMX's blocks compute: n rounded up to 32.
 * An int8 call that the exact path leaves (K over 64 bytes and not a
 * multiple, fewer than 8 rows, K under 32 bytes) runs the vpdpbusd kernel
 * instead of AMX when its K is under one chunk of 64 (then all of A and B
 * go through padded copies), or when AMX's blocks would compute more than
 * twice its C: AMX's throughput does not make up for the copies and the
 * partial blocks.  Measured before the exact path took these shapes, on
 * the Xeon, one thread, a graph of 256 to 2048 such calls, AMX against
 * HGC_AMX=off (ms): MxKxN 40x64x40 (transformer) 1.26-1.29 / 1.11-1.15,
 * 40x40x64 1.25-1.33 / 1.03-1.05, 20x64x20 0.64-0.70 / 0.52-0.53,
 * 128x40x40 1.65-1.67 / 1.28, 64x40x64 0.86-0.92 / 0.78-0.85, 128x13x512
 * 0.76-0.77 / 0.59-0.61; AMX stays ahead with K of a chunk or more and a
 * ratio of 1.6: 96x64x40 1.06-1.13 / 1.27, 128x256x40 0.86-0.87 / 1.20,
 * 40x64x64 1.31-1.34 / 1.33-1.38.  bf16, where AMX is 32x the zmm kernel,
 * keeps AMX.
 */
static int64_t amx_area(int64_t n)
{
	return (n + 31) / 32 * 32;
}

/*
 * A brgemm with AMX over 32x32 blocks of C, row blocks outer.  A last
 * partial block of rows (or columns) reads a zero-padded copy of its strip
 * of A (of B), and all of A and B are copied when K is under one chunk of
 * 64 bytes (a copy of the last chunk per block cost dlrm's 128x13x512 ten
 * times the vpdpbusd kernel's time).  Partial blocks of fewer than
 * PART_MIN rows or columns (a matrix-vector product's one row), and strips
 * whose copy would pass PAD_MAX, go to the zmm kernel as sub-calls, and
 * the whole call when nothing is left for AMX.  On the Xeon, one thread,
 * against the split at whole blocks with zmm for the rest (and zmm alone
 * below 3/4 of C in whole blocks): transformer's int8 16 x 40x64x40 12.1-
 * 12.4 -> 10.6-10.7 us, bert's 12 x 128x64x128 (whole blocks) unchanged.
 */
static void run(const struct hgc_rt_call *c, int esz, hgc_rt_kernel_fn *zmm,
		void (*blk)(const struct hgc_rt_call *, const struct plan *, int64_t, int64_t))
{
	struct plan p = { .lda_b = c->lda * esz, .ldb_b = c->ldb * esz };
	int64_t mend = amx_end(c->M), nend = amx_end(c->N), m0, n0, mpad = 0, npad = 0;
	char *abuf = NULL, *bbuf = NULL;
	struct next_a na;

	if (takes_exact(c, esz)) {
		run_exact(c, esz);
		return;
	}
	if (takes_row2(c, esz)) {
		run_row2(c);
		return;
	}
	if (esz == 1 && (c->K < 64 || amx_area(c->M) * amx_area(c->N) > 2 * c->M * c->N)) {
		zmm(c);
		return;
	}
	p.kbytes = c->K * esz;
	p.kfull = p.kbytes - p.kbytes % 64;
	p.kpad = (p.kbytes + 63) & ~(int64_t)63;
	/* all of A and B copied when K is under a chunk, else the partial strips */
	p.arow0 = p.kfull ? mend - mend % 32 : 0;
	p.bcol0 = p.kfull ? nend - nend % 32 : 0;
	mpad = (mend - p.arow0 + 31) / 32 * 32;
	npad = (nend - p.bcol0 + 31) / 32 * 32;
	p.apad_batch = mpad * p.kpad;
	p.bpad_ld = npad * 4;
	p.bpad_batch = p.kpad / 4 * p.bpad_ld;
	if (mpad && p.apad_batch * c->bs <= PAD_MAX)
		abuf = __builtin_alloca((size_t)(p.apad_batch * c->bs));
	else
		mend = p.arow0;
	if (npad && p.bpad_batch * c->bs <= PAD_MAX)
		bbuf = __builtin_alloca((size_t)(p.bpad_batch * c->bs));
	else
		nend = p.bcol0;
	if (!mend || !nend) {
		zmm(c);
		return;
	}
	if (abuf)
		fill_apad(c, &p, p.arow0, mend, abuf);
	if (bbuf)
		fill_bpad(c, &p, p.bcol0, nend, bbuf);
	p.apad = abuf;
	p.bpad = bbuf;
	next_a_init(c, p.lda_b, p.kbytes, (mend + 31) / 32 * ((nend + 31) / 32), A_BLOCKS, &na);
	configure();
	for (m0 = 0; m0 < mend; m0 += 32)
		for (n0 = 0; n0 < nend; n0 += 32) {
			next_a_step(&na);
			blk(c, &p, m0, n0);
		}
	zmm_part(c, 0, nend, mend, c->N - nend, esz, zmm);
	zmm_part(c, mend, 0, c->M - mend, c->N, esz, zmm);
}

/*
 * Rows of the last block requantized after each chunk: all 32 after the
 * first chunk when a block has 8 chunks or fewer, else 8 after each of the
 * first four.  In one process against the same graphs with fold_quant off
 * (hgc-bench, one and two threads), 8 rows a chunk made 256^3 and 512^3
 * 0-5% slower and 1024^3 and 2048^3 1-3% faster, all 32 at once the other
 * way round; 2 rows a chunk (spread over K = 1024's 16 chunks) was slower
 * than the requantization after the call.
 */
#define Q_ROWS(chunks) ((chunks) <= 8 ? 32 : 8)

/*
 * A requantized call (hgc_brgemm_u8s8_q) in 32x32 blocks, each block's
 * sums stored to one of two 4 KiB buffers and requantized a few rows after
 * each chunk of the next block: the zmm work of the epilogue runs while
 * the AMX unit multiplies, where it ran after the whole call.  oneDNN's
 * AMX brgemm kernel interleaves its post-ops so (perf annotate of its
 * jitted code).  bench/amx_probe's blocks/epi and blocks/epi-inter time
 * the two orders (docs/runtime.md, "Requantization between the products").
 */
static void blocks_q(const struct hgc_rt_call *c, const struct hgc_rt_requant *q)
{
	int32_t buf[2][32 * 32] __attribute__((aligned(64)));
	int64_t lda_b = c->lda, ldb_b = c->ldb, ldc_b = c->ldc * 4;
	int64_t m0, n0, b, k, pm = -1, pn = 0;
	int cur = 0, r, rows = Q_ROWS(c->bs * c->K / 64);
	struct next_a na;

	next_a_init(c, lda_b, c->K, c->M / 32 * (c->N / 32), A_BLOCKS, &na);
	configure();
	for (m0 = 0; m0 < c->M; m0 += 32)
		for (n0 = 0; n0 < c->N; n0 += 32) {
			next_a_step(&na);
			c_start((const char *)c->C + m0 * ldc_b + n0 * 4, ldc_b, c->beta);
			r = pm < 0 ? 32 : 0;
			for (b = 0; b < c->bs; b++) {
				const char *a = (const char *)c->A[b] + m0 * lda_b;
				const char *bp = (const char *)c->B[b] + 4 * n0;

				for (k = 0; k < c->K; k += 64) {
					chunk(a + k, lda_b, bp + (k / 4) * ldb_b, ldb_b, 0);
					if (r < 32) {
						requant_rows_zmm(q, buf[cur ^ 1] + r * 32, 32, pm + r,
								 rows, pn, 32);
						r += rows;
					}
				}
			}
			if (r < 32)
				requant_rows_zmm(q, buf[cur ^ 1] + r * 32, 32, pm + r, 32 - r, pn, 32);
			c_store((char *)buf[cur], 128);
			pm = m0;
			pn = n0;
			cur ^= 1;
		}
	requant_rows_zmm(q, buf[cur ^ 1], 32, pm, 32, pn, 32);
}

int hgc_rt_u8s8_amx_q(const struct hgc_rt_call *c, const struct hgc_rt_requant *q)
{
	if (c->M % 32 || c->N % 32 || c->K % 64 || takes_exact(c, 1) || takes_row2(c, 1))
		return 0;
	blocks_q(c, q);
	return 1;
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
