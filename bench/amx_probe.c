/*
 * amx_probe: where an AMX int8 call's time goes, one variable at a time.
 * Loops of tileloadd / tdpbusd / tilestored written out here (not the
 * runtime's code paths, which choose among themselves), timed on one thread,
 * each the fastest of several rounds alternated with the others; printed as
 * ns a 16x16x64 product (tdpbusd, 16 cycles at the AMX unit's rate).
 *
 *   fixed            4 tile loads and 4 products a chunk over the same 8 KiB of
 *                    A and of B in L1 (the runtime's strides; no drain, no new data)
 *   fixed/zeros      the same over operands of zeros (AMX runs them faster:
 *                    every other probe's data is a pattern of nonzero bytes)
 *   fixed/drainN     the same as fixed, C stored and zeroed every N chunks
 *   blocks           a call's 32x32 blocks as brgemm_amx.c's `block` runs them:
 *                    row blocks outer, each over all of K (A rows lda = K bytes,
 *                    B packed rows N * 4 bytes)
 *   blocks/overlap   the same with a block's stores interleaved with the next
 *                    block's first chunk
 *   blocks/snake     the column blocks of odd row blocks backwards and every
 *                    other block's k backwards (a block starts on what the
 *                    last one read last); blocks/snake+overlap both
 *   blocks/2x1       32x16 blocks of C in two tiles, the operands double-buffered
 *                    (3 loads for 2 products, no load waits for a product)
 *   blocks/tiledB    B laid out as 1 KiB tiles, [N / 16][K / 64][16][64]
 *   blocks/tiledAB   A so too, [M / 16][K / 64][16][64]
 *   blocks/epi       blocks, then an int8 MatMul's requantization of all of C
 *                    (u8 = saturate(round(acc * scale[n]))) in zmm, after the
 *                    call, as a fused MatMul's post_block nest runs it today
 *   blocks/epi-inter the same with each block's requantization spread over the
 *                    next block's chunks (a few rows after each), so that the
 *                    zmm work runs while the AMX unit multiplies: what
 *                    oneDNN's AMX brgemm kernel does with its post-ops
 *
 * docs/runtime.md ("AMX blocks: where the time goes", session 24) has what it
 * showed.  Usage: amx_probe [MxNxK ...] (default 64x64x256 256x64x1024).
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime.h"
#include "runtime/runtime_int.h"

#define ROUNDS 7
#define REPS 50

struct tilecfg {
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
};

struct shape {
	long M, N, K;
	char *A, *At, *B, *Bt, *C, *Z;	/* Z: 32 KiB of zeros */
	unsigned char *Y;		/* the requantized u8 result (blocks/epi*) */
	float *scale;			/* and its per-column scales */
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One 64-byte chunk of k into tmm0-3: the runtime's order (chunk() in brgemm_amx.c). */
static inline __attribute__((always_inline)) void
chunk(const char *a, long lda, const char *b0, const char *b1, long ldb)
{
	_tile_loadd(6, b0, ldb);
	_tile_loadd(4, a, lda);
	_tile_dpbusd(0, 4, 6);
	_tile_loadd(5, a + 16 * lda, lda);
	_tile_dpbusd(2, 5, 6);
	_tile_loadd(7, b1, ldb);
	_tile_dpbusd(1, 4, 7);
	_tile_dpbusd(3, 5, 7);
}

static void zero4(void)
{
	_tile_zero(0);
	_tile_zero(1);
	_tile_zero(2);
	_tile_zero(3);
}

static void store4(char *cp, long ldc)
{
	_tile_stored(0, cp, ldc);
	_tile_stored(1, cp + 64, ldc);
	_tile_stored(2, cp + 16 * ldc, ldc);
	_tile_stored(3, cp + 16 * ldc + 64, ldc);
}

/* 4096 chunks over the same 8 KiB of A and of B (a and b), C drained every
   `drain` chunks (0: never, else a power of two); the products it ran. */
static double fixed(const struct shape *s, const char *a, const char *b, long drain)
{
	long i;

	zero4();
	for (i = 0; i < 4096; i++) {
		chunk(a + (i & 3) * 64, 256, b + (i & 3) * 2048, b + (i & 3) * 2048 + 64, 128);
		if (drain && (i & (drain - 1)) == drain - 1) {
			store4(s->C, 128);
			zero4();
		}
	}
	store4(s->C, 128);
	return 4096.0 * 4;
}

/* The first chunk of a block whose C tiles still hold the last block's sums
   (at prev): each stored right before its first product here. */
static inline __attribute__((always_inline)) void
chunk_after(const char *a, long lda, const char *b, long ldb, char *prev, long ldc)
{
	_tile_stored(0, prev, ldc);
	_tile_zero(0);
	_tile_loadd(6, b, ldb);
	_tile_loadd(4, a, lda);
	_tile_dpbusd(0, 4, 6);
	_tile_stored(2, prev + 16 * ldc, ldc);
	_tile_zero(2);
	_tile_loadd(5, a + 16 * lda, lda);
	_tile_dpbusd(2, 5, 6);
	_tile_stored(1, prev + 64, ldc);
	_tile_zero(1);
	_tile_loadd(7, b + 64, ldb);
	_tile_dpbusd(1, 4, 7);
	_tile_stored(3, prev + 16 * ldc + 64, ldc);
	_tile_zero(3);
	_tile_dpbusd(3, 5, 7);
}

/* overlap: chunk_after for each block's first chunk; snake: the column
   blocks of odd row blocks backwards and every other block's k backwards,
   so that a block starts on the operand chunks the last one read last. */
static double blocks(const struct shape *s, int overlap, int snake)
{
	long ldb = s->N * 4, ldc = s->N * 4, nk = s->K / 64, nbj = s->N / 32, i, t, q;
	char *prev = NULL;
	int back = 0;

	zero4();
	for (i = 0; i < s->M / 32; i++)
		for (t = 0; t < nbj; t++) {
			long j = snake && (i & 1) ? nbj - 1 - t : t;
			const char *a = s->A + i * 32 * s->K, *b = s->B + j * 32 * 4;

			if (prev && !overlap) {
				store4(prev, ldc);
				zero4();
			}
			for (q = 0; q < nk; q++) {
				long k = (back ? nk - 1 - q : q) * 64;
				const char *bt = b + (k / 4) * ldb;

				if (!q && prev && overlap)
					chunk_after(a + k, s->K, bt, ldb, prev, ldc);
				else
					chunk(a + k, s->K, bt, bt + 64, ldb);
			}
			prev = s->C + (i * 32 * s->N + j * 32) * 4;
			back ^= snake;
		}
	store4(prev, ldc);
	return (double)(s->M / 16) * (double)(s->N / 16) * (double)(s->K / 64);
}

/*
 * Rows [r0, r1) of the 32x32 s32 block of C at (m0, n0) requantized into Y:
 * u8 = saturate(round(acc * scale[n])), as the fused nest computes it
 * (convert, multiply, clamp to [0, 255], round by adding 1.5 * 2^23, the
 * low byte).
 */
static inline __attribute__((always_inline)) void
requant_rows(const struct shape *s, long m0, long n0, int r0, int r1)
{
	const __m512 lo = _mm512_setzero_ps(), hi = _mm512_set1_ps(255.f);
	const __m512 magic = _mm512_set1_ps(12582912.f);
	const __m512 s0 = _mm512_loadu_ps(s->scale + n0), s1 = _mm512_loadu_ps(s->scale + n0 + 16);
	const int32_t *c = (const int32_t *)s->C + m0 * s->N + n0;
	int r, h;

	for (r = r0; r < r1; r++)
		for (h = 0; h < 2; h++) {
			__m512 f = _mm512_cvtepi32_ps(_mm512_loadu_si512(c + r * s->N + 16 * h));

			f = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(f, h ? s1 : s0), lo), hi);
			f = _mm512_add_ps(f, magic);
			_mm_storeu_si128((__m128i *)(s->Y + (m0 + r) * s->N + n0 + 16 * h),
					 _mm512_cvtepi32_epi8(_mm512_castps_si512(f)));
		}
}

/* blocks, C requantized into Y after all of them (inter 0) or each block's
   rows a few at a time after the next block's chunks (inter 1). */
static double blocks_epi(const struct shape *s, int inter)
{
	long ldb = s->N * 4, ldc = s->N * 4, nk = s->K / 64, i, j, q, pm = -1, pn = -1;
	int per = (int)((32 + nk - 1) / nk), r;

	for (i = 0; i < s->M / 32; i++)
		for (j = 0; j < s->N / 32; j++) {
			const char *a = s->A + i * 32 * s->K, *b = s->B + j * 32 * 4;

			zero4();
			for (q = 0, r = 0; q < nk; q++) {
				const char *bt = b + q * 16 * ldb;

				chunk(a + q * 64, s->K, bt, bt + 64, ldb);
				if (inter && pm >= 0 && r < 32) {
					requant_rows(s, pm, pn, r, r + per < 32 ? r + per : 32);
					r += per;
				}
			}
			store4(s->C + (i * 32 * s->N + j * 32) * 4, ldc);
			pm = i * 32;
			pn = j * 32;
		}
	if (inter)
		requant_rows(s, pm, pn, 0, 32);
	else
		for (i = 0; i < s->M; i += 32)
			for (j = 0; j < s->N; j += 32)
				requant_rows(s, i, j, 0, 32);
	return (double)(s->M / 16) * (double)(s->N / 16) * (double)(s->K / 64);
}

static double blocks_epi_after(const struct shape *s)
{
	return blocks_epi(s, 0);
}

static double blocks_epi_inter(const struct shape *s)
{
	return blocks_epi(s, 1);
}

static double blocks_plain(const struct shape *s)
{
	return blocks(s, 0, 0);
}

static double blocks_overlap(const struct shape *s)
{
	return blocks(s, 1, 0);
}

static double blocks_snake(const struct shape *s)
{
	return blocks(s, 0, 1);
}

static double blocks_snake_overlap(const struct shape *s)
{
	return blocks(s, 1, 1);
}

static double blocks_2x1(const struct shape *s)
{
	long ldb = s->N * 4, ldc = s->N * 4, lda = s->K, m0, n0, k;

	for (m0 = 0; m0 < s->M; m0 += 32)
		for (n0 = 0; n0 < s->N; n0 += 16) {
			const char *a = s->A + m0 * lda, *b = s->B + n0 * 4;
			char *cp = s->C + (m0 * s->N + n0) * 4;

			_tile_zero(0);
			_tile_zero(1);
			for (k = 0; k < s->K; k += 128) {
				const char *bt = b + (k / 4) * ldb;

				_tile_loadd(2, a + k, lda);
				_tile_loadd(6, bt, ldb);
				_tile_dpbusd(0, 2, 6);
				_tile_loadd(3, a + k + 16 * lda, lda);
				_tile_dpbusd(1, 3, 6);
				_tile_loadd(4, a + k + 64, lda);
				_tile_loadd(7, bt + 16 * ldb, ldb);
				_tile_dpbusd(0, 4, 7);
				_tile_loadd(5, a + k + 64 + 16 * lda, lda);
				_tile_dpbusd(1, 5, 7);
			}
			_tile_stored(0, cp, ldc);
			_tile_stored(1, cp + 16 * ldc, ldc);
		}
	return (double)(s->M / 16) * (double)(s->N / 16) * (double)(s->K / 64);
}

static double blocks_tiled_b(const struct shape *s)
{
	long ldc = s->N * 4, kt = s->K / 64, m0, n0, k;

	for (m0 = 0; m0 < s->M; m0 += 32)
		for (n0 = 0; n0 < s->N; n0 += 32) {
			const char *a = s->A + m0 * s->K, *b = s->Bt + (n0 / 16) * kt * 1024;

			zero4();
			for (k = 0; k < kt; k++)
				chunk(a + k * 64, s->K, b + k * 1024, b + (kt + k) * 1024, 64);
			store4(s->C + (m0 * s->N + n0) * 4, ldc);
		}
	return (double)(s->M / 16) * (double)(s->N / 16) * (double)(s->K / 64);
}

/* A as 1 KiB tiles too, [M / 16][K / 64][16][64] (the buffer At). */
static double blocks_tiled_ab(const struct shape *s)
{
	long ldc = s->N * 4, kt = s->K / 64, m0, n0, k;

	for (m0 = 0; m0 < s->M; m0 += 32)
		for (n0 = 0; n0 < s->N; n0 += 32) {
			const char *a = s->At + (m0 / 16) * kt * 1024, *b = s->Bt + (n0 / 16) * kt * 1024;

			zero4();
			for (k = 0; k < kt; k++) {
				_tile_loadd(6, b + k * 1024, 64);
				_tile_loadd(4, a + k * 1024, 64);
				_tile_dpbusd(0, 4, 6);
				_tile_loadd(5, a + (kt + k) * 1024, 64);
				_tile_dpbusd(2, 5, 6);
				_tile_loadd(7, b + (kt + k) * 1024, 64);
				_tile_dpbusd(1, 4, 7);
				_tile_dpbusd(3, 5, 7);
			}
			store4(s->C + (m0 * s->N + n0) * 4, ldc);
		}
	return (double)(s->M / 16) * (double)(s->N / 16) * (double)(s->K / 64);
}

static double fixed_nodrain(const struct shape *s)
{
	return fixed(s, s->A, s->B, 0);
}

static double fixed_zeros(const struct shape *s)
{
	return fixed(s, s->Z, s->Z + 16384, 0);
}

static double fixed_drain4(const struct shape *s)
{
	return fixed(s, s->A, s->B, 4);
}

static double fixed_drain16(const struct shape *s)
{
	return fixed(s, s->A, s->B, 16);
}

static const struct probe {
	const char *name;
	double (*run)(const struct shape *);
	int per_shape;
} probes[] = {
	{"fixed", fixed_nodrain, 0},		{"fixed/zeros", fixed_zeros, 0},
	{"fixed/drain4", fixed_drain4, 0},
	{"fixed/drain16", fixed_drain16, 0},	{"blocks", blocks_plain, 1},
	{"blocks/overlap", blocks_overlap, 1},	{"blocks/snake", blocks_snake, 1},
	{"blocks/snake+overlap", blocks_snake_overlap, 1},
	{"blocks/2x1", blocks_2x1, 1},
	{"blocks/tiledB", blocks_tiled_b, 1},	{"blocks/tiledAB", blocks_tiled_ab, 1},
	{"blocks/epi", blocks_epi_after, 1},	{"blocks/epi-inter", blocks_epi_inter, 1},
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

/* bytes of a pattern of nonzero bytes (fill 0: zeros) */
static char *buffer(long bytes, int fill)
{
	char *p = aligned_alloc(4096, (size_t)((bytes + 4095) / 4096 * 4096));
	long i;

	if (!p) {
		fprintf(stderr, "amx_probe: out of memory\n");
		exit(1);
	}
	for (i = 0; i < bytes; i++)
		p[i] = fill ? (char)(i * 7 % 255 + 1) : 0;
	return p;
}

/* Fastest ns a product of each probe over ROUNDS rounds, the probes alternated. */
static void measure(struct shape *s, int first_shape)
{
	double best[NPROBES];
	size_t i;
	int r, j;

	for (i = 0; i < NPROBES; i++)
		best[i] = 1e30;
	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < NPROBES; i++) {
			double t0, t, prods = 0;

			if (!probes[i].per_shape && !first_shape)
				continue;
			prods = probes[i].run(s);	/* warm */
			t0 = now();
			for (j = 0; j < REPS; j++)
				probes[i].run(s);
			t = (now() - t0) / REPS;
			if (t * 1e9 / prods < best[i])
				best[i] = t * 1e9 / prods;
		}
	for (i = 0; i < NPROBES; i++)
		if (probes[i].per_shape || first_shape)
			printf("  %-22s %-8s %6.2f ns a product\n", probes[i].name,
			       probes[i].per_shape ? "" : "(in L1)", best[i]);
}

/* Whether blocks/epi and blocks/epi-inter write the same Y (0), else a message and -1. */
static int same_requant(struct shape *s)
{
	unsigned char *y0 = malloc((size_t)(s->M * s->N));
	int differ;

	if (!y0)
		return -1;
	blocks_epi(s, 0);
	memcpy(y0, s->Y, (size_t)(s->M * s->N));
	memset(s->Y, 0, (size_t)(s->M * s->N));
	blocks_epi(s, 1);
	differ = memcmp(y0, s->Y, (size_t)(s->M * s->N)) != 0;
	free(y0);
	if (differ)
		fprintf(stderr, "amx_probe: %ldx%ldx%ld: blocks/epi-inter wrote another Y\n", s->M,
			s->N, s->K);
	return differ ? -1 : 0;
}

static int parse(const char *arg, struct shape *s)
{
	if (sscanf(arg, "%ldx%ldx%ld", &s->M, &s->N, &s->K) != 3 || s->M <= 0 || s->M % 32 ||
	    s->N <= 0 || s->N % 32 || s->K <= 0 || s->K % 128) {
		fprintf(stderr, "amx_probe: %s: want MxNxK, M and N multiples of 32, K of 128\n",
			arg);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = {"64x64x256", "256x64x1024"};
	const char *const *shapes = argc > 1 ? (const char *const *)argv + 1 : defaults;
	int n = argc > 1 ? argc - 1 : 2, i;
	long j;
	struct tilecfg cfg;

	if (!hgc_rt_has_amx() || !hgc_rt_cpu()->amx_int8) {
		fprintf(stderr, "amx_probe: no AMX int8 here (or HGC_AMX=off)\n");
		return 1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.palette = 1;
	for (i = 0; i < 8; i++) {
		cfg.rows[i] = 16;
		cfg.colsb[i] = 64;
	}
	_tile_loadconfig(&cfg);
	for (i = 0; i < n; i++) {
		struct shape s;

		if (parse(shapes[i], &s))
			return 2;
		/* `fixed` reads 8 KiB of each whatever the shape */
		s.A = buffer(s.M * s.K > 16384 ? s.M * s.K : 16384, 1);
		s.B = buffer(s.K * s.N > 16384 ? s.K * s.N : 16384, 1);
		s.Bt = buffer(s.K * s.N, 1);
		s.At = buffer(s.M * s.K, 1);
		s.C = buffer(s.M * s.N * 4 + 8192, 1);
		s.Z = buffer(32768, 0);
		s.Y = (unsigned char *)buffer(s.M * s.N, 0);
		s.scale = (float *)buffer(s.N * 4, 0);
		for (j = 0; j < s.N; j++)
			s.scale[j] = 1e-4f * (float)(1 + j % 5);
		if (same_requant(&s))
			return 3;
		printf("%s (A %ld KiB, B %ld KiB), fastest of %d rounds:\n", shapes[i],
		       s.M * s.K / 1024, s.K * s.N / 1024, ROUNDS);
		measure(&s, i == 0);
		free(s.A);
		free(s.B);
		free(s.Bt);
		free(s.At);
		free(s.C);
		free(s.Z);
		free(s.Y);
		free(s.scale);
	}
	_tile_release();
	return 0;
}
