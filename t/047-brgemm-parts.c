/*
 * t/047-brgemm-parts.c: how runtime/brgemm.c runs an f32 call.  A batch
 * whose elements follow one another along k (hgc_rt_one_reduction) runs as
 * one element of K * bs, and a call of one element whose A and B pass half
 * of L2 runs in parts of k (hgc_rt_k_part), C stored and reloaded between
 * them.  Both keep every accumulator's sums in the same order, so the
 * result must equal, bit for bit, the same call over a batch of separate
 * copies (which no rule touches), on the portable and the AVX-512 kernels
 * (AVX2's within rounding: off() says why), with beta 0 and 1 and with the
 * post-ops (bias and ReLU once, after the last part: on a part's partial
 * sums they would change the result).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime_int.h"
#include "tap.h"

/* xorshift32: floats in [-1, 1). */
static float rnd_f(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (float)((int32_t)(*s >> 8) - (1 << 23)) / (float)(1 << 23);
}

static float *floats(int64_t n, uint32_t *seed)
{
	float *p = malloc((size_t)n * sizeof(float));

	for (int64_t i = 0; i < n; i++)
		p[i] = rnd_f(seed);
	return p;
}

/* A call of M x N over bs elements of kb: one A (M x bs kb) and one B
   (bs kb x N), and the same values as bs separate blocks. */
struct run {
	int64_t M, N, kb, bs;
	float *A, *B, *bias, *C0;	/* C0: C's values before the call (beta 1) */
	const float **pa, **pb;		/* the batch along A and B */
	float **sa, **sb;		/* the batch as separate copies */
};

static void run_init(struct run *r, int64_t M, int64_t N, int64_t kb, int64_t bs, uint32_t seed)
{
	int64_t K = kb * bs, i, m;

	r->M = M, r->N = N, r->kb = kb, r->bs = bs;
	r->A = floats(M * K, &seed);
	r->B = floats(K * N, &seed);
	r->bias = floats(N, &seed);
	r->C0 = floats(M * N, &seed);
	r->pa = malloc((size_t)bs * sizeof(*r->pa));
	r->pb = malloc((size_t)bs * sizeof(*r->pb));
	r->sa = malloc((size_t)bs * sizeof(*r->sa));
	r->sb = malloc((size_t)bs * sizeof(*r->sb));
	for (i = 0; i < bs; i++) {
		r->pa[i] = r->A + i * kb;
		r->pb[i] = r->B + i * kb * N;
		r->sa[i] = malloc((size_t)(M * kb) * sizeof(float));
		r->sb[i] = malloc((size_t)(kb * N) * sizeof(float));
		for (m = 0; m < M; m++)
			memcpy(r->sa[i] + m * kb, r->A + m * K + i * kb, (size_t)kb * sizeof(float));
		memcpy(r->sb[i], r->pb[i], (size_t)(kb * N) * sizeof(float));
	}
}

static void run_free(struct run *r)
{
	for (int64_t i = 0; i < r->bs; i++) {
		free(r->sa[i]);
		free(r->sb[i]);
	}
	free(r->A), free(r->B), free(r->bias), free(r->C0);
	free(r->pa), free(r->pb), free(r->sa), free(r->sb);
}

/* How a case is called: along A and B, as copies, or in the stride form. */
enum how { ALONG, COPIES, STRIDED };

/* C of the call made so (C starting as C0), freshly allocated. */
static float *call(const struct run *r, enum how how, int beta, int post)
{
	int64_t K = r->kb * r->bs, lda = how == COPIES ? r->kb : K;
	float *C = malloc((size_t)(r->M * r->N) * sizeof(float));
	const float *const *A = how == COPIES ? (const float *const *)r->sa : r->pa;
	const float *const *B = how == COPIES ? (const float *const *)r->sb : r->pb;

	memcpy(C, r->C0, (size_t)(r->M * r->N) * sizeof(float));
	if (how == STRIDED)
		hgc_brgemm_f32_strd(r->A, r->B, C, r->bs, r->kb * 4, r->kb * r->N * 4, r->M, r->N,
				    r->kb, lda, r->N, r->N, beta);
	else if (post)
		hgc_brgemm_f32_post(A, B, C, r->bs, r->M, r->N, r->kb, lda, r->N, r->N, beta,
				    r->bias, 1);
	else
		hgc_brgemm_f32(A, B, C, r->bs, r->M, r->N, r->kb, lda, r->N, r->N, beta);
	return C;
}

/* The elements of got whose bits differ from want's. */
static int64_t same_bits(const struct run *r, const float *want, const float *got, int beta,
			 int post)
{
	int64_t d = 0;

	(void)beta, (void)post;
	for (int64_t i = 0; i < r->M * r->N; i++)
		d += memcmp(&want[i], &got[i], sizeof(float)) != 0;
	return d;
}

/*
 * The elements of got off want by more than the rounding of a different
 * order of the same sums: 1e-5 of the sum of the magnitudes that went into
 * each (C's, the products', the bias').  AVX2's narrow tiles keep two sets
 * of sums for even and odd k (brgemm_tile.inc, tile_dual), added at the end
 * of a call or part, so there the order differs; a post-op applied to a
 * part's sums or twice is off by far more.
 */
static int64_t off(const struct run *r, const float *want, const float *got, int beta, int post)
{
	int64_t K = r->kb * r->bs, d = 0;

	for (int64_t m = 0; m < r->M; m++)
		for (int64_t n = 0; n < r->N; n++) {
			double mag = (beta ? fabs(r->C0[m * r->N + n]) : 0) +
				     (post ? fabs(r->bias[n]) : 0);

			for (int64_t k = 0; k < K; k++)
				mag += fabs((double)r->A[m * K + k] * r->B[k * r->N + n]);
			d += fabs((double)want[m * r->N + n] - got[m * r->N + n]) > 1e-5 * mag;
		}
	return d;
}

/* The call descriptor of r along A and B, as the entry points make it. */
static struct hgc_rt_call desc(const struct run *r)
{
	struct hgc_rt_call c = {(const void *const *)r->pa, (const void *const *)r->pb, NULL,
				r->bs, r->M, r->N, r->kb, r->kb * r->bs, r->N, r->N, 0,
				NULL, 0, NULL, 0};

	return c;
}

/* Which batches are one reduction. */
static void check_one_reduction(void)
{
	struct run r;
	struct hgc_rt_call c;
	const float *keep;

	run_init(&r, 8, 32, 16, 4, 7);
	c = desc(&r);
	ok(hgc_rt_one_reduction(HGC_RT_F32, &c), "f32, 4 elements along A and B: one reduction");
	c.bs = 1;
	ok(!hgc_rt_one_reduction(HGC_RT_F32, &c), "one element: nothing to join");
	c.bs = 4;
	ok(!hgc_rt_one_reduction(HGC_RT_U8S8, &c), "int8 keeps its batch");
	ok(!hgc_rt_one_reduction(HGC_RT_BF16, &c), "bf16 keeps its batch");
	keep = r.pa[2];
	r.pa[2] = keep + 1;
	ok(!hgc_rt_one_reduction(HGC_RT_F32, &c), "an A one element off: a batch");
	r.pa[2] = keep;
	keep = r.pb[3];
	r.pb[3] = keep + r.N;
	ok(!hgc_rt_one_reduction(HGC_RT_F32, &c), "a B one row off: a batch");
	r.pb[3] = keep;
	c.A = (const void *const *)r.sa;
	c.B = (const void *const *)r.sb;
	ok(!hgc_rt_one_reduction(HGC_RT_F32, &c), "separate copies: a batch");
	run_free(&r);
}

/* The parts of k: none for a call within half of L2, else parts within it. */
static void check_k_part(void)
{
	int64_t half = hgc_rt_l2_bytes() / 2, k, kp, k0;
	struct hgc_rt_call c = {NULL, NULL, NULL, 1, 128, 64, 0, 0, 64, 64, 0, NULL, 0, NULL, 0};

	ok(hgc_rt_l2_bytes() >= 64 << 10, "L2: %lld bytes", (long long)hgc_rt_l2_bytes());
	c.K = half / ((c.M + c.N) * 4);
	is_int(hgc_rt_k_part(&c), c.K, "A and B at half of L2: one part (K = %lld)",
	       (long long)c.K);
	for (k0 = c.K, k = k0 + 1; k < 64 * k0; k = k * 3 / 2 + 7) {
		c.K = k;
		kp = hgc_rt_k_part(&c);
		if (!ok(kp < k && kp % 16 == 0 && (c.M + c.N) * (kp - 16) * 4 <= half &&
			(k + kp - 1) / kp <= (((c.M + c.N) * k * 4 + half - 1) / half),
			"K = %lld: parts of %lld (whole lines, within half of L2, the fewest)",
			(long long)k, (long long)kp))
			break;
	}
}

/* One shape: along A and B (joined, in parts where large), in the stride
   form, and as copies; every ISA, beta 0 and 1, with and without the post-ops. */
static void check_shape(int64_t M, int64_t N, int64_t kb, int64_t bs, uint32_t seed)
{
	static const enum hgc_isa isas[] = {HGC_ISA_GENERIC, HGC_ISA_AVX2, HGC_ISA_AVX512};
	static const char *const names[] = {"generic", "avx2", "avx512"};
	enum hgc_isa best = hgc_rt_best_isa(hgc_rt_cpu()), was = hgc_rt_isa();
	struct run r;
	struct hgc_rt_call c;
	int64_t d = 0;
	int beta, post;
	int64_t (*cmp)(const struct run *, const float *, const float *, int, int);

	run_init(&r, M, N, kb, bs, seed);
	c = desc(&r);
	c.K = kb * bs;
	c.bs = 1;
	for (size_t i = 0; i < sizeof(isas) / sizeof(isas[0]) && isas[i] <= best; i++) {
		hgc_rt_set_isa(isas[i]);
		cmp = isas[i] == HGC_ISA_AVX2 ? off : same_bits;
		d = 0;
		for (beta = 0; beta < 2; beta++)
			for (post = 0; post < 2; post++) {
				float *want = call(&r, COPIES, beta, post);
				float *got = call(&r, ALONG, beta, post);

				d += cmp(&r, want, got, beta, post);
				free(got);
				if (!post) {
					got = call(&r, STRIDED, beta, 0);
					d += cmp(&r, want, got, beta, post);
					free(got);
				}
				free(want);
			}
		ok(d == 0, "%s: %lldx%lld, %lld x K = %lld (%s): %s %lld copies "
		   "(beta 0/1, post-ops, stride form)", names[i], (long long)M, (long long)N,
		   (long long)bs, (long long)kb,
		   hgc_rt_k_part(&c) < c.K ? "in parts" : "one part",
		   cmp == off ? "within rounding of" : "the same bits as", (long long)bs);
	}
	hgc_rt_set_isa(was);
	run_free(&r);
}

int main(void)
{
	int64_t half = hgc_rt_l2_bytes() / 2;

	check_one_reduction();
	check_k_part();
	check_shape(128, 64, 128, 4, 11);
	check_shape(37, 50, 37, 9, 12);
	/* in parts: K past half of L2, odd pieces so that parts end mid-piece */
	check_shape(128, 64, 37, half / (192 * 4) / 37 * 2 + 3, 13);
	check_shape(13, 200, 64, half / (213 * 4) / 64 * 3 + 1, 14);
	check_shape(1, 20, 16, half / (21 * 4) / 16 + 5, 15);
	return done_testing();
}
