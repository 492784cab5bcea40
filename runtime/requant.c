/*
 * requant.c: an int8 MatMul's requantization (hgc_brgemm_u8s8_q in
 * runtime.h): s32 sums to f32, a few steps against scalars or per-column
 * rows, then rounded half to even and saturated to u8 or s8, NaN to 0.
 * The same arithmetic as the loop nest it replaces (fold_quant): one f32
 * rounding per step, no fused multiply-add, and the clamp before the
 * rounding, as LLVM's and the C backend's (u8)round(x) do, so the result
 * is the same bit for bit.  Here the steps decoded and the portable rows;
 * requant_avx512.inc has the zmm rows.
 */
#include <math.h>

#include "runtime/runtime_int.h"

/* Whether v is a power of two whose reciprocal is a normal float: x / v is then x * (1 / v) exactly. */
static int exact_recip(float v, float *r)
{
	int e;

	if (!(v > 0) || !isfinite(v) || frexpf(v, &e) != 0.5f)
		return 0;
	*r = 1.0f / v;
	return isnormal(*r);
}

int hgc_rt_requant_init(struct hgc_rt_requant *q, void *Y, int64_t ldy, int64_t steps,
			const float *const v[HGC_RT_Q_STEPS])
{
	int i, done = 0;

	q->Y = Y;
	q->ldy = ldy;
	q->s8 = (steps & HGC_RT_Q_S8) != 0;
	q->n = 0;
	if (steps & ~(int64_t)(HGC_RT_Q_S8 | 0xffff))
		return -1;
	for (i = 0; i < HGC_RT_Q_STEPS; i++) {
		int code = (int)(steps >> (4 * i)) & 15, op = code & 7, col = (code & HGC_RT_Q_COL) != 0;

		if (!code) {
			done = 1;
			continue;
		}
		if (done || op < HGC_RT_Q_MUL || op > HGC_RT_Q_RELU || (op == HGC_RT_Q_RELU && col) ||
		    (op != HGC_RT_Q_RELU && !v[i]))
			return -1;
		q->op[q->n] = op;
		q->per_col[q->n] = col;
		q->v[q->n] = v[i];
		if (op == HGC_RT_Q_DIV && !col && v[i][0] == 1.0f)
			continue;	/* x / 1 is x */
		if (op == HGC_RT_Q_DIV && !col && exact_recip(v[i][0], &q->recip[q->n]))
			q->op[q->n] = -HGC_RT_Q_DIV;	/* a multiply by recip */
		q->n++;
	}
	return 0;
}

/* f after the steps, for column n. */
static float steps_at(const struct hgc_rt_requant *q, float f, int64_t n)
{
	int i;

	for (i = 0; i < q->n; i++) {
		float v = q->op[i] == HGC_RT_Q_RELU ? 0 : q->v[i][q->per_col[i] ? n : 0];

		switch (q->op[i]) {
		case HGC_RT_Q_MUL: f = f * v; break;
		case HGC_RT_Q_DIV: f = f / v; break;
		case -HGC_RT_Q_DIV: f = f * q->recip[i]; break;
		case HGC_RT_Q_ADD: f = f + v; break;
		case HGC_RT_Q_SUB: f = f - v; break;
		default: f = f < 0 ? 0.0f : f; break;
		}
	}
	return f;
}

void hgc_rt_requant_rows(const struct hgc_rt_requant *q, const int32_t *src, int64_t lds,
			 int64_t m0, int64_t rows, int64_t n0, int64_t cols)
{
	int64_t i, j;

	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++) {
			float f = steps_at(q, (float)src[i * lds + j], n0 + j);
			int64_t at = (m0 + i) * q->ldy + n0 + j;

			if (q->s8) {
				f = f != f ? 0.0f : f;
				f = f > -128.0f ? f : -128.0f;
				((int8_t *)q->Y)[at] = (int8_t)nearbyintf(f < 127.0f ? f : 127.0f);
			} else {
				f = f > 0.0f ? f : 0.0f;
				((uint8_t *)q->Y)[at] = (uint8_t)nearbyintf(f < 255.0f ? f : 255.0f);
			}
		}
}
