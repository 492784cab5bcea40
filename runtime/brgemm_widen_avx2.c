/*
 * brgemm_widen_avx2.c: the AVX2 int8 and bf16 operands, converted before
 * the tiles run (brgemm_avx2.c) so that their k loops do no conversion.
 * Each function converts one chunk of k of one batch element into rows of
 * 32-bit words, dense:
 *
 *   bf16 -> f32: A row m, k -> word k; B packed row r -> rows 2r, 2r + 1.
 *   int8 -> s16 pairs: A row m, k 2w and 2w + 1 (u8) -> word w; B packed
 *   row r (4 k per lane) -> rows 2r (k 4r, 4r + 1) and 2r + 1 (k 4r + 2,
 *   4r + 3), each lane two s16.  vpmaddwd of an A word and a B lane then
 *   adds the two products of one pair of k, exactly (|255 x -128| x 2 <
 *   2^31).
 *
 * Whole vectors where 8 (B) or 16 (A) elements remain, scalar code for the
 * rest: no read past the last column of a row.
 */
#include <immintrin.h>
#include <string.h>

#include "runtime/runtime_int.h"

/* The 32-bit lane at p (unaligned). */
static uint32_t lane32(const void *p)
{
	uint32_t x;

	memcpy(&x, p, sizeof(x));
	return x;
}

/* bf16 A rows: M x kc values from a (lda apart) to M x kc f32 words. */
void hgc_rt_widen_bf16_a(const void *src, int64_t lda, int64_t M, int64_t kc, uint32_t *dst)
{
	const uint16_t *a = src;
	int64_t m, k;

	for (m = 0; m < M; m++, a += lda, dst += kc) {
		for (k = 0; k + 8 <= kc; k += 8) {
			__m256i x = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(a + k)));

			_mm256_storeu_si256((__m256i *)(dst + k), _mm256_slli_epi32(x, 16));
		}
		for (; k < kc; k++)
			dst[k] = (uint32_t)a[k] << 16;
	}
}

/* bf16 B: kc / 2 packed rows (ldb apart) of N pairs to kc rows of N f32 words. */
void hgc_rt_widen_bf16_b(const void *src, int64_t ldb, int64_t N, int64_t kc, uint32_t *dst)
{
	const uint16_t *b = src;
	const __m256i hi = _mm256_set1_epi32((int)0xffff0000u);
	int64_t r, n;

	for (r = 0; r < kc / 2; r++, b += ldb, dst += 2 * N) {
		for (n = 0; n + 8 <= N; n += 8) {
			__m256i x = _mm256_loadu_si256((const __m256i *)(b + 2 * n));

			_mm256_storeu_si256((__m256i *)(dst + n), _mm256_slli_epi32(x, 16));
			_mm256_storeu_si256((__m256i *)(dst + N + n), _mm256_and_si256(x, hi));
		}
		for (; n < N; n++) {
			uint32_t x = lane32(b + 2 * n);

			dst[n] = x << 16;
			dst[N + n] = x & 0xffff0000u;
		}
	}
}

/* u8 A rows: M x kc bytes from a (lda apart) to M x kc / 2 words of two u16. */
void hgc_rt_widen_u8_a(const void *src, int64_t lda, int64_t M, int64_t kc, uint32_t *dst)
{
	const uint8_t *a = src;
	int64_t m, k;

	for (m = 0; m < M; m++, a += lda, dst += kc / 2) {
		for (k = 0; k + 16 <= kc; k += 16) {
			__m256i x = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(a + k)));

			_mm256_storeu_si256((__m256i *)(dst + k / 2), x);
		}
		for (; k < kc; k += 2)
			dst[k / 2] = (uint32_t)a[k] | (uint32_t)a[k + 1] << 16;
	}
}

/* Two bytes as a lane of two s16: the low one in the low half. */
static uint32_t s16_pair(int8_t lo, int8_t hi)
{
	return (uint32_t)(uint16_t)(int16_t)lo | (uint32_t)(uint16_t)(int16_t)hi << 16;
}

/*
 * The two rows of s16 pairs of one packed row of 8 int8 lanes: lo gets
 * bytes 0, 1 of each lane, hi bytes 2, 3, sign-extended.
 */
static void widen_s8x8(__m256i x, __m256i *lo, __m256i *hi)
{
	__m256i even = _mm256_srai_epi16(_mm256_slli_epi16(x, 8), 8);	/* bytes 0, 2 */
	__m256i odd = _mm256_srai_epi16(x, 8);				/* bytes 1, 3 */

	*lo = _mm256_blend_epi16(even, _mm256_slli_epi32(odd, 16), 0xaa);
	*hi = _mm256_blend_epi16(_mm256_srli_epi32(even, 16), odd, 0xaa);
}

/* s8 B: kc / 4 packed rows (ldb bytes apart) of N lanes to kc / 2 rows of N s16 pairs. */
void hgc_rt_widen_s8_b(const void *src, int64_t ldb, int64_t N, int64_t kc, uint32_t *dst)
{
	const int8_t *b = src;
	int64_t r, n;

	for (r = 0; r < kc / 4; r++, b += ldb, dst += 2 * N) {
		for (n = 0; n + 8 <= N; n += 8) {
			__m256i lo, hi;

			widen_s8x8(_mm256_loadu_si256((const __m256i *)(b + 4 * n)), &lo, &hi);
			_mm256_storeu_si256((__m256i *)(dst + n), lo);
			_mm256_storeu_si256((__m256i *)(dst + N + n), hi);
		}
		for (; n < N; n++) {
			dst[n] = s16_pair(b[4 * n], b[4 * n + 1]);
			dst[N + n] = s16_pair(b[4 * n + 2], b[4 * n + 3]);
		}
	}
}

/*
 * Per s16 lane of 32 packed bytes: the larger of the pair's sum of
 * positive values and of its negative values' magnitudes (at most 256, so
 * nothing saturates here).
 */
static __m256i pair_peak(__m256i x)
{
	const __m256i ones = _mm256_set1_epi8(1), zero = _mm256_setzero_si256();
	__m256i pos = _mm256_max_epi8(x, zero);
	__m256i neg = _mm256_abs_epi8(_mm256_min_epi8(x, zero));	/* -128 -> 0x80 = 128 */

	return _mm256_max_epi16(_mm256_maddubs_epi16(pos, ones), _mm256_maddubs_epi16(neg, ones));
}

/* The same for the pair at p, in scalar code. */
static int pair_peak1(const int8_t *p)
{
	int pos = (p[0] > 0 ? p[0] : 0) + (p[1] > 0 ? p[1] : 0);
	int neg = (p[0] < 0 ? -p[0] : 0) + (p[1] < 0 ? -p[1] : 0);

	return pos > neg ? pos : neg;
}

/* Whether some s16 lane of m exceeds 128. */
static int over128(__m256i m)
{
	__m256i gt = _mm256_cmpgt_epi16(m, _mm256_set1_epi16(128));

	return !_mm256_testz_si256(gt, gt);
}

/*
 * Whether the n bytes at b (n even) fit: the whole vectors first by the
 * cheaper sufficient test |b0| + |b1| <= 128 (4 vector ops per 32 bytes)
 * and, only if that fails, by the exact bound (pair_peak, 8); the last
 * pairs in scalar code.
 */
static int span_fits(const int8_t *b, int64_t n)
{
	const __m256i ones = _mm256_set1_epi8(1);
	__m256i m = _mm256_setzero_si256();
	int64_t i, nv = n / 32 * 32;

	for (i = 0; i < nv; i += 32) {
		__m256i x = _mm256_abs_epi8(_mm256_loadu_si256((const __m256i *)(b + i)));

		m = _mm256_max_epi16(m, _mm256_maddubs_epi16(x, ones));
	}
	if (over128(m)) {
		m = _mm256_setzero_si256();
		for (i = 0; i < nv; i += 32)
			m = _mm256_max_epi16(m, pair_peak(_mm256_loadu_si256((const __m256i *)(b + i))));
		if (over128(m))
			return 0;
	}
	for (i = nv; i < n; i += 2)
		if (pair_peak1(b + i) > 128)
			return 0;
	return 1;
}

/* Bytes of a dense B checked at a time: a B that fails costs about this much. */
#define FIT_SPAN 2048

/*
 * Whether vpmaddubsw multiplies packed B by any u8 exactly: no pair of k
 * has positive values summing past 128 or negative ones past -128 (255 x
 * 128 = 32640 fits s16, 255 x 129 does not).  Row by row, or in spans of
 * several rows when they are dense (ldb = 4N); stops at the first span
 * that fails.
 */
int hgc_rt_s8_pairs_fit(const void *src, int64_t ldb, int64_t N, int64_t K)
{
	const int8_t *b = src;
	int64_t r, rows = K / 4, step = 1;

	if (ldb == 4 * N && 4 * N < FIT_SPAN)
		step = FIT_SPAN / (4 * N);
	for (r = 0; r < rows; r += step, b += step * ldb)
		if (!span_fits(b, (rows - r < step ? rows - r : step) * 4 * N))
			return 0;
	return 1;
}
