/*
 * brgemm_generic.c: the portable C microkernels, for CPUs without AVX2 and
 * as the reference the others are compared with.  Each C row is set (beta)
 * once and then accumulated a row of B at a time, an order the compiler
 * vectorizes with whatever the baseline ISA offers.
 */
#include <string.h>

#include "runtime/runtime_int.h"

/* Zero a row of C unless beta asks to accumulate into it (f32 and s32 alike). */
static void start_row(void *row, int64_t n, int beta)
{
	if (!beta)
		memset(row, 0, (size_t)n * 4);
}

/* A bf16 value (the upper half of an f32) widened to f32. */
static inline float bf16_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* f32: crow += a[m, k] * brow over every k and batch element. */
void hgc_rt_f32_generic(const struct hgc_rt_call *c)
{
	int64_t m, b, k, n;

	for (m = 0; m < c->M; m++) {
		float *crow = (float *)c->C + m * c->ldc;

		start_row(crow, c->N, c->beta);
		for (b = 0; b < c->bs; b++) {
			const float *a = (const float *)c->A[b] + m * c->lda;
			const float *bb = c->B[b];

			for (k = 0; k < c->K; k++) {
				const float *brow = bb + k * c->ldb;
				float av = a[k];

				for (n = 0; n < c->N; n++)
					crow[n] += av * brow[n];
			}
		}
	}
}

/* int8: one packed row of B holds 4 k values per column, exact s32 sums. */
void hgc_rt_u8s8_generic(const struct hgc_rt_call *c)
{
	int64_t m, b, k, n;

	for (m = 0; m < c->M; m++) {
		int32_t *crow = (int32_t *)c->C + m * c->ldc;

		start_row(crow, c->N, c->beta);
		for (b = 0; b < c->bs; b++) {
			const uint8_t *a = (const uint8_t *)c->A[b] + m * c->lda;
			const int8_t *bb = c->B[b];

			for (k = 0; k < c->K; k += 4) {
				const int8_t *brow = bb + (k / 4) * c->ldb;
				int32_t a0 = a[k], a1 = a[k + 1], a2 = a[k + 2], a3 = a[k + 3];

				for (n = 0; n < c->N; n++)	/* wraps like vpdpbusd */
					crow[n] = (int32_t)((uint32_t)crow[n] +
							    (uint32_t)(a0 * brow[4 * n] +
								       a1 * brow[4 * n + 1] +
								       a2 * brow[4 * n + 2] +
								       a3 * brow[4 * n + 3]));
			}
		}
	}
}

/* bf16: one packed row of B holds 2 k values per column, summed in f32. */
void hgc_rt_bf16_generic(const struct hgc_rt_call *c)
{
	int64_t m, b, k, n;

	for (m = 0; m < c->M; m++) {
		float *crow = (float *)c->C + m * c->ldc;

		start_row(crow, c->N, c->beta);
		for (b = 0; b < c->bs; b++) {
			const uint16_t *a = (const uint16_t *)c->A[b] + m * c->lda;
			const uint16_t *bb = c->B[b];

			for (k = 0; k < c->K; k += 2) {
				const uint16_t *brow = bb + (k / 2) * c->ldb;
				float a0 = bf16_f32(a[k]), a1 = bf16_f32(a[k + 1]);

				for (n = 0; n < c->N; n++)
					crow[n] += a0 * bf16_f32(brow[2 * n]) +
						   a1 * bf16_f32(brow[2 * n + 1]);
			}
		}
	}
}
