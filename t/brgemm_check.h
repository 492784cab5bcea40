/*
 * brgemm_check.h: runs one brgemm case against a naive reference, for
 * t/040-brgemm.c and t/041-brgemm-emu512.c.  Buffers are allocated to the
 * exact byte so ASan catches any read or write past them; row gaps (ld >
 * block) and batch gaps hold NaN or garbage, K padding holds zeros as the
 * contract asks, and C's gaps must come back untouched.
 */
#ifndef HGC_T_BRGEMM_CHECK_H
#define HGC_T_BRGEMM_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime_int.h"

/* How the case reaches the kernel. */
enum form {
	FORM_ARRAY,	/* hgc_brgemm_<kind>: one allocation per batch element */
	FORM_STRD,	/* hgc_brgemm_<kind>_strd: one allocation, byte strides */
	FORM_DIRECT,	/* an internal kernel called with a struct hgc_rt_call */
};

struct bcase {
	enum hgc_rt_kind kind;
	int64_t M, N, K;	/* K: logical, padded up to the kind's k group */
	int64_t bs;
	int beta;
	int64_t pad;		/* extra elements (k groups for B) in lda, ldb, ldc */
	enum form form;
	uint32_t seed;
};

static const int kgrp[HGC_RT_NKIND] = {1, 4, 2};
static const int esz[HGC_RT_NKIND] = {4, 1, 2};
#define GAP_AB 0x7fc0dead	/* NaNs as f32; C's differs, since a NaN read */
#define GAP_C 0x7fc0beef	/* from A or B keeps its payload through FMAs */
/* Elements after C's last one that must keep GAP_C: the tiles are not
   instrumented, so ASan does not see a store past the end (a whole vector
   where the last was masked). */
#define C_GUARD 32

/* xorshift32: reproducible data from a case's seed. */
static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* A float in [-1, 1). */
static float rnd_f(uint32_t *s)
{
	return (float)((int32_t)(rnd(s) >> 8) - (1 << 23)) / (float)(1 << 23);
}

/* bf16 bits as f32. */
static float bf_f(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* The logical A (M x K) element value as a double, from its storage. */
static double a_val(const struct bcase *c, const void *A, int64_t lda, int64_t m, int64_t k)
{
	if (c->kind == HGC_RT_F32)
		return ((const float *)A)[m * lda + k];
	if (c->kind == HGC_RT_U8S8)
		return ((const uint8_t *)A)[m * lda + k];
	return bf_f(((const uint16_t *)A)[m * lda + k]);
}

/* Offset in elements of logical B[k][n] in the packed storage. */
static int64_t b_off(const struct bcase *c, int64_t ldb, int64_t k, int64_t n)
{
	int g = kgrp[c->kind];

	return (k / g) * ldb + n * g + k % g;
}

/* The logical B (K x N) element value as a double. */
static double b_val(const struct bcase *c, const void *B, int64_t ldb, int64_t k, int64_t n)
{
	int64_t o = b_off(c, ldb, k, n);

	if (c->kind == HGC_RT_F32)
		return ((const float *)B)[o];
	if (c->kind == HGC_RT_U8S8)
		return ((const int8_t *)B)[o];
	return bf_f(((const uint16_t *)B)[o]);
}

/* When above 0: int8 B values in [-b_range, b_range] instead of any s8 (the AVX2 vpmaddubsw path). */
static int b_range;

/* f32 cases' post-ops (hgc_brgemm_f32_post): POST_BIAS adds a random
   bias per column, POST_RELU clamps below at 0; 0: a plain call. */
enum { POST_BIAS = 1, POST_RELU = 2 };
static int post_mode;

/* Store a random value (or zero) into element i of a buffer of the case's A or B type. */
static void put_val(const struct bcase *c, void *p, int64_t i, int is_b, int zero, uint32_t *s)
{
	uint32_t r = rnd(s);

	if (c->kind == HGC_RT_F32) {
		((float *)p)[i] = zero ? 0.0f : rnd_f(s);
	} else if (c->kind == HGC_RT_U8S8 && is_b && b_range > 0) {
		((int8_t *)p)[i] = zero ? 0 : (int8_t)((int)((r >> 11) % (2u * b_range + 1)) - b_range);
	} else if (c->kind == HGC_RT_U8S8) {
		((uint8_t *)p)[i] = zero ? 0 : (uint8_t)(r >> 11);
	} else {
		float f = zero ? 0.0f : rnd_f(s);
		uint32_t u;

		memcpy(&u, &f, 4);
		((uint16_t *)p)[i] = (uint16_t)(u >> 16);
	}
}

/* Fill an allocation with a gap pattern g. */
static void fill_gap(void *p, size_t bytes, uint32_t g)
{
	size_t i;

	for (i = 0; i < bytes; i++)
		((unsigned char *)p)[i] = ((unsigned char *)&g)[i % 4];
}

/* Fill A (M x Kp at lda) and packed B (Kp/g rows at ldb): data below K, zeros in the K padding. */
static void fill_ab(const struct bcase *c, void *A, void *B, int64_t Kp, int64_t lda, int64_t ldb,
		    uint32_t *s)
{
	int64_t m, k, n;

	for (m = 0; m < c->M; m++)
		for (k = 0; k < Kp; k++)
			put_val(c, A, m * lda + k, 0, k >= c->K, s);
	for (k = 0; k < Kp; k++)
		for (n = 0; n < c->N; n++)
			put_val(c, B, b_off(c, ldb, k, n), 1, k >= c->K, s);
}

/* Run c's kernel (direct: the internal kernel for FORM_DIRECT) on A, B, C. */
static void call_kernel(const struct bcase *c, hgc_rt_kernel_fn *direct, const void **pa,
			const void **pb, const void *base_a, const void *base_b, int64_t sa,
			int64_t sb, void *C, int64_t Kp, int64_t lda, int64_t ldb, int64_t ldc,
			const float *bias)
{
	int relu = c->kind == HGC_RT_F32 && (post_mode & POST_RELU);
	struct hgc_rt_call call = {pa, pb, C, c->bs, c->M, c->N, Kp, lda, ldb, ldc, c->beta, NULL, 0,
				   bias, relu};

	if (c->form == FORM_DIRECT)
		direct(&call);
	else if (c->kind == HGC_RT_F32 && (bias || relu))
		hgc_brgemm_f32_post((const float *const *)pa, (const float *const *)pb, C, c->bs,
				    c->M, c->N, Kp, lda, ldb, ldc, c->beta, bias, relu);
	else if (c->form == FORM_ARRAY && c->kind == HGC_RT_F32)
		hgc_brgemm_f32((const float *const *)pa, (const float *const *)pb, C, c->bs, c->M,
			       c->N, Kp, lda, ldb, ldc, c->beta);
	else if (c->form == FORM_ARRAY && c->kind == HGC_RT_U8S8)
		hgc_brgemm_u8s8s32((const uint8_t *const *)pa, (const int8_t *const *)pb, C, c->bs,
				   c->M, c->N, Kp, lda, ldb, ldc, c->beta);
	else if (c->form == FORM_ARRAY)
		hgc_brgemm_bf16((const uint16_t *const *)pa, (const uint16_t *const *)pb, C, c->bs,
				c->M, c->N, Kp, lda, ldb, ldc, c->beta);
	else if (c->kind == HGC_RT_F32)
		hgc_brgemm_f32_strd(base_a, base_b, C, c->bs, sa, sb, c->M, c->N, Kp, lda, ldb,
				    ldc, c->beta);
	else if (c->kind == HGC_RT_U8S8)
		hgc_brgemm_u8s8s32_strd(base_a, base_b, C, c->bs, sa, sb, c->M, c->N, Kp, lda, ldb,
					ldc, c->beta);
	else
		hgc_brgemm_bf16_strd(base_a, base_b, C, c->bs, sa, sb, c->M, c->N, Kp, lda, ldb,
				     ldc, c->beta);
}

/*
 * Compare C with the reference: exact for s32, within a bound relative to
 * the sum of |a*b| for f32.  Gaps of C must still hold GAP_C.  Writes
 * the first failure into err and returns -1.
 */
static int check_c(const struct bcase *c, const void *C, const void *C0, int64_t ldc,
		   const void **pa, const void **pb, int64_t lda, int64_t ldb, const float *bias,
		   char *err, size_t n)
{
	int64_t m, j, k, b;

	for (m = 0; m < c->M; m++) {
		for (j = 0; j < ldc && m * ldc + j < (c->M - 1) * ldc + c->N; j++) {
			uint32_t got, init;
			double ref = 0, mag = 0;

			memcpy(&got, (const char *)C + 4 * (m * ldc + j), 4);
			memcpy(&init, (const char *)C0 + 4 * (m * ldc + j), 4);
			if (j >= c->N) {
				if (got != init) {
					snprintf(err, n, "gap C[%lld][%lld] overwritten",
						 (long long)m, (long long)j);
					return -1;
				}
				continue;
			}
			for (b = 0; b < c->bs; b++)
				for (k = 0; k < c->K; k++) {
					double p = a_val(c, pa[b], lda, m, k) *
						   b_val(c, pb[b], ldb, k, j);
					ref += p;
					mag += fabs(p);
				}
			if (c->kind == HGC_RT_U8S8) {
				int64_t r = (int64_t)ref + (c->beta ? (int32_t)init : 0);

				if ((int32_t)got != (int32_t)r) {
					snprintf(err, n, "C[%lld][%lld] = %d, want %lld", (long long)m,
						 (long long)j, (int32_t)got, (long long)r);
					return -1;
				}
			} else {
				float g, i0;

				memcpy(&g, &got, 4);
				memcpy(&i0, &init, 4);
				if (c->beta) {
					ref += i0;
					mag += fabs(i0);
				}
				if (bias) {
					ref += bias[j];
					mag += fabs(bias[j]);
				}
				if ((post_mode & POST_RELU) && ref < 0)
					ref = 0;
				if (!(fabs(g - ref) <= 2e-5 * mag + 1e-6)) {
					snprintf(err, n, "C[%lld][%lld] = %.9g, want %.9g",
						 (long long)m, (long long)j, g, ref);
					return -1;
				}
			}
		}
	}
	return 0;
}

/* Whether the bytes at p still hold fill_gap's pattern g. */
static int gap_kept(const void *p, size_t bytes, uint32_t g)
{
	size_t i;
	uint32_t v;

	for (i = 0; i + 4 <= bytes; i += 4) {
		memcpy(&v, (const char *)p + i, 4);
		if (v != g)
			return 0;
	}
	return 1;
}

/* Initial C: random (beta 1) or NaN / garbage that must be ignored (beta 0); gaps GAP_C. */
static void fill_c(const struct bcase *c, void *C, int64_t ldc, uint32_t *s)
{
	int64_t m, j;

	fill_gap(C, (size_t)((c->M - 1) * ldc + c->N) * 4, GAP_C);
	for (m = 0; m < c->M; m++)
		for (j = 0; j < c->N; j++) {
			float f = c->beta ? rnd_f(s) : NAN;
			int32_t v = c->beta ? (int32_t)(rnd(s) % 2000001) - 1000000 : 0x5a5a5a5a;

			if (c->kind == HGC_RT_U8S8)
				memcpy((char *)C + 4 * (m * ldc + j), &v, 4);
			else
				memcpy((char *)C + 4 * (m * ldc + j), &f, 4);
		}
}

/* Run one case; 0 when it matches the reference, else -1 with err set. */
static int run_case(const struct bcase *c, hgc_rt_kernel_fn *direct, char *err, size_t n)
{
	int g = kgrp[c->kind], es = esz[c->kind];
	int64_t Kp = (c->K + g - 1) / g * g, lda = Kp + c->pad, ldb = (c->N + c->pad) * g;
	int64_t ldc = c->N + c->pad, a_el = (c->M - 1) * lda + Kp;
	int64_t b_el = (Kp / g - 1) * ldb + c->N * g, c_el = (c->M - 1) * ldc + c->N;
	int64_t sa = (a_el + 3) * es, sb = (b_el + 5) * es, b;
	const void **pa = calloc((size_t)c->bs, sizeof(*pa)), **pb = calloc((size_t)c->bs, sizeof(*pb));
	char *base_a = NULL, *base_b = NULL;
	void *C = malloc((size_t)(c_el + C_GUARD) * 4), *C0 = malloc((size_t)c_el * 4);
	uint32_t s = c->seed | 1;
	float *bias = NULL;
	int rc;

	if (c->form == FORM_STRD) {
		base_a = malloc((size_t)(sa * (c->bs - 1) + a_el * es));
		base_b = malloc((size_t)(sb * (c->bs - 1) + b_el * es));
		fill_gap(base_a, (size_t)(sa * (c->bs - 1) + a_el * es), GAP_AB);
		fill_gap(base_b, (size_t)(sb * (c->bs - 1) + b_el * es), GAP_AB);
	}
	for (b = 0; b < c->bs; b++) {
		void *A = base_a ? base_a + b * sa : malloc((size_t)(a_el * es));
		void *B = base_b ? base_b + b * sb : malloc((size_t)(b_el * es));

		if (!base_a) {
			fill_gap(A, (size_t)(a_el * es), GAP_AB);
			fill_gap(B, (size_t)(b_el * es), GAP_AB);
		}
		fill_ab(c, A, B, Kp, lda, ldb, &s);
		pa[b] = A;
		pb[b] = B;
	}
	fill_c(c, C, ldc, &s);
	fill_gap((char *)C + c_el * 4, C_GUARD * 4, GAP_C);
	memcpy(C0, C, (size_t)c_el * 4);
	if (c->kind == HGC_RT_F32 && (post_mode & POST_BIAS)) {
		bias = malloc((size_t)c->N * 4);	/* exact: ASan sees a read past it */
		for (b = 0; b < c->N; b++)
			bias[b] = rnd_f(&s);
	}
	call_kernel(c, direct, pa, pb, base_a, base_b, sa, sb, C, Kp, lda, ldb, ldc, bias);
	rc = check_c(c, C, C0, ldc, pa, pb, lda, ldb, bias, err, n);
	free(bias);
	if (!rc && !gap_kept((char *)C + c_el * 4, C_GUARD * 4, GAP_C)) {
		snprintf(err, n, "stored past C's last element");
		rc = -1;
	}
	for (b = 0; !base_a && b < c->bs; b++) {
		free((void *)pa[b]);
		free((void *)pb[b]);
	}
	free(base_a);
	free(base_b);
	free(pa);
	free(pb);
	free(C);
	free(C0);
	return rc;
}

/* The test dimensions: tile multiples, tails on each side, and 1. */
static const int64_t dims[] = {1, 3, 13, 16, 17, 48, 64, 97};
#define NDIMS ((int)(sizeof(dims) / sizeof(dims[0])))

/*
 * Every M x N pair of dims, each with two K from dims, bs 1..4, beta 0/1,
 * ld padding on or off and the given forms in turn (every slice of
 * `stride` pairs, from `first`).  Returns the number of failed cases and
 * describes the first in err.
 */
static int sweep(enum hgc_rt_kind kind, const enum form *forms, int nforms,
		 hgc_rt_kernel_fn *direct, int first, int stride, char *err, size_t n)
{
	int mi, ni, r, fails = 0, i = 0;

	for (mi = 0; mi < NDIMS; mi++)
		for (ni = 0; ni < NDIMS; ni++)
			for (r = 0; r < 2; r++, i++) {
				struct bcase c = {
					kind, dims[mi], dims[ni], dims[(mi * 3 + ni * 5 + r * 4) % NDIMS],
					1 + (mi + ni + r) % 4, (mi + 2 * ni + r) % 2,
					(mi + ni) % 3 ? 5 : 0, forms[i % nforms],
					(uint32_t)(1000 * mi + 10 * ni + r + 7)};
				char e[200];

				if (i % stride != first)
					continue;
				if (run_case(&c, direct, e, sizeof(e))) {
					if (!fails++)
						snprintf(err, n, "M=%lld N=%lld K=%lld bs=%lld beta=%d pad=%lld form=%d: %s",
							 (long long)c.M, (long long)c.N, (long long)c.K,
							 (long long)c.bs, c.beta, (long long)c.pad, c.form, e);
				}
			}
	return fails;
}

/*
 * Widths that make run_blocks run strips (two or more whole column blocks
 * of the widest tile in one function), with and without a masked last
 * block after them, at ymm (8 lanes: 47, 61, 64) and zmm (16 lanes: 200,
 * 255, 256) widths, and one block or none (16, 31: no strip); rows of one
 * tile or several, uneven; K odd and 64; bs 1 and 3; beta 0/1; ld padding
 * on and off; the given form.  Returns the failures, the first in err.
 */
static int strip_cases(enum hgc_rt_kind kind, enum form form, hgc_rt_kernel_fn *direct,
		       char *err, size_t n)
{
	static const int64_t ms[] = {1, 5, 7, 13, 31}, ns[] = {16, 31, 47, 61, 64, 200, 255, 256};
	int mi, ni, r, fails = 0, i = 0;

	for (mi = 0; mi < 5; mi++)
		for (ni = 0; ni < 8; ni++)
			for (r = 0; r < 2; r++, i++) {
				struct bcase c = {kind, ms[mi], ns[ni], r ? 64 : 9, 1 + 2 * (i % 2),
						  (i / 2) % 2, i % 3 ? 0 : 3, form,
						  (uint32_t)(500 + i)};
				char e[200];

				if (run_case(&c, direct, e, sizeof(e)) && !fails++)
					snprintf(err, n, "M=%lld N=%lld K=%lld bs=%lld beta=%d: %s",
						 (long long)c.M, (long long)c.N, (long long)c.K,
						 (long long)c.bs, c.beta, e);
			}
	return fails;
}

#endif
