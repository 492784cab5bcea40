/*
 * 040-brgemm: every brgemm kernel at every ISA this CPU has (forced with
 * hgc_rt_set_isa) against a naive reference on 128 shapes each, through
 * the address-array and stride entry points; int8 extremes; int8 B small
 * enough for AVX2's unwidened vpmaddubsw path, and the bound that picks it;
 * int8 B right before an inaccessible page (the next call's B is prefetched),
 * f32 A too (the next tile's rows are);
 * shapes that the AVX2 int8 and bf16 kernels widen in chunks; AMX tiles
 * shaped to a call and its configurations back and forth; empty calls;
 * broken contracts; HGC_ISA and its clamping.
 */
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/tap.h"
#include "t/brgemm_check.h"
#include "t/self_exec.h"

static const char *const kind_name[HGC_RT_NKIND] = {"f32", "u8s8s32", "bf16"};

/*
 * The row tiles of 1 to 8 rows in every column shape (one or two vectors,
 * full or masked, 8x1 edge tiles too): AVX2 gives the f32 tiles of fewer
 * than 8 accumulators two accumulator sets (even and odd k), so odd and
 * even K, and the conv calls' shapes (K 16, bs 9, beta 1).
 */
static void test_short_rows(const char *isa)
{
	static const int64_t ns[] = {8, 12, 16, 20, 24, 40}, ks[] = {1, 2, 15, 16};
	char err[400] = "", e[200];
	int k, m, ni, ki, fails, i;

	for (k = 0; k < HGC_RT_NKIND; k++) {
		if (k == HGC_RT_U8S8)
			continue;
		fails = i = 0;
		for (m = 1; m <= 8; m++)
			for (ni = 0; ni < 6; ni++)
				for (ki = 0; ki < 4; ki++, i++) {
					int64_t K = k == HGC_RT_BF16 ? ks[ki] * 2 : ks[ki];
					struct bcase c = {(enum hgc_rt_kind)k, m, ns[ni], K,
							  i % 3 ? 9 : 1, i % 2, i % 5 ? 0 : 3,
							  i % 4 ? FORM_ARRAY : FORM_STRD,
							  (uint32_t)(i + 99)};

					if (run_case(&c, NULL, e, sizeof(e)) && !fails++)
						snprintf(err, sizeof(err), "M=%d N=%lld K=%lld: %s", m,
							 (long long)ns[ni], (long long)K, e);
				}
		if (!ok(fails == 0, "%s %s: 1-8 rows by 8-40 columns, K odd and even, bs 1 and 9",
			isa, kind_name[k]))
			diag("%d failed; first: %s", fails, err);
	}
}

/*
 * Calls whose tiles take the 4-step k loop (AVX2: the asm trips of the full
 * 4x2, 5x2 and 6x2 f32 tiles, and of the full 4x2 and 5x2 int8 tiles, s16
 * pairs for any B, vpmaddubsw for B in [-64, 64]): rows that split into 4-
 * to 6-row tiles, whole vectors and a masked last one, 4 to 9 and 63 k
 * steps (0 to 3 left after the trips; an int8 step is a group of 4 k), bs
 * 1 and 3, beta 0/1, padded leading dimensions.
 */
static int kloop_cases(enum hgc_rt_kind kind, char *err, size_t n)
{
	static const int64_t ms[] = {4, 5, 6, 8, 11, 12, 14, 17}, ns[] = {16, 32, 40};
	static const int64_t steps[] = {4, 5, 6, 7, 9, 63};
	int mi, ni, ki, fails = 0, i = 0;

	for (mi = 0; mi < 8; mi++)
		for (ni = 0; ni < 3; ni++)
			for (ki = 0; ki < 6; ki++, i++) {
				struct bcase c = {kind, ms[mi], ns[ni], steps[ki] * kgrp[kind],
						  1 + 2 * (i % 2), i / 2 % 2, i % 3 ? 3 : 0,
						  i % 5 ? FORM_ARRAY : FORM_STRD, (uint32_t)(7000 + i)};
				char e[200];

				if (run_case(&c, NULL, e, sizeof(e)) && !fails++)
					snprintf(err, n, "M=%lld N=%lld K=%lld bs=%lld: %s",
						 (long long)c.M, (long long)c.N, (long long)c.K,
						 (long long)c.bs, e);
			}
	return fails;
}

static void test_kloop(const char *isa)
{
	static const struct {
		enum hgc_rt_kind kind;
		int b_range;
		const char *what;
	} kinds[] = {
		{HGC_RT_F32, 0, "f32"},
		{HGC_RT_U8S8, 0, "u8s8s32, any B"},
		{HGC_RT_U8S8, 64, "u8s8s32, B in [-64, 64]"},
	};
	char err[300] = "";
	int k, fails;

	for (k = 0; k < 3; k++) {
		b_range = kinds[k].b_range;
		fails = kloop_cases(kinds[k].kind, err, sizeof(err));
		b_range = 0;
		if (!ok(fails == 0, "%s %s: rows of 4- to 6-row tiles, 4-9 and 63 k steps, bs 1/3",
			isa, kinds[k].what))
			diag("%d failed; first: %s", fails, err);
	}
}

/* The shape sweep of each kind at the ISA in use. */
static void test_sweep(const char *isa)
{
	static const enum form forms[] = {FORM_ARRAY, FORM_STRD};
	char err[400] = "";
	int k, fails;

	for (k = 0; k < HGC_RT_NKIND; k++) {
		fails = sweep((enum hgc_rt_kind)k, forms, 2, NULL, 0, 1, err, sizeof(err));
		if (!ok(fails == 0, "%s %s (%s): 128 shapes, bs 1-4, beta 0/1, both forms", isa,
			kind_name[k], hgc_rt_kernel_name((enum hgc_rt_kind)k)))
			diag("%d failed; first: %s", fails, err);
	}
}

/* Calls whose column blocks run as strips (brgemm_tile.inc), every kind. */
static void test_strips(const char *isa)
{
	char err[400] = "";
	int k, fails;

	for (k = 0; k < HGC_RT_NKIND; k++) {
		fails = strip_cases((enum hgc_rt_kind)k, k == 1 ? FORM_STRD : FORM_ARRAY, NULL, err,
				    sizeof(err));
		if (!ok(fails == 0, "%s %s: strips of column blocks, with and without a masked last block",
			isa, kind_name[k]))
			diag("%d failed; first: %s", fails, err);
	}
}

/* u8 255 times s8 -128 and 127 over K = 1024 and bs = 4, twice (beta 0 then 1): exact s32. */
static void test_int8_extremes(const char *isa)
{
	enum { M = 13, N = 17, K = 1024, BS = 4, LDC = N + 3 };
	uint8_t *A = malloc((size_t)M * K * BS);
	int8_t *B = malloc((size_t)K * N * BS);
	int32_t C[M * LDC];
	int64_t m, n, k, bad = 0;

	memset(A, 255, (size_t)M * K * BS);
	for (k = 0; k < (int64_t)K * N * BS; k++)
		B[k] = (k / 4) % N % 2 ? 127 : -128;	/* packed: column n at k/4 mod N */
	hgc_brgemm_u8s8s32_strd(A, B, C, BS, M * K, K * N, M, N, K, K, 4 * N, LDC, 0);
	for (m = 0; m < M; m++)
		for (n = 0; n < N; n++)
			bad += C[m * LDC + n] != 255 * (n % 2 ? 127 : -128) * K * BS;
	hgc_brgemm_u8s8s32_strd(A, B, C, BS, M * K, K * N, M, N, K, K, 4 * N, LDC, 1);
	for (m = 0; m < M; m++)
		for (n = 0; n < N; n++)
			bad += C[m * LDC + n] != 2 * 255 * (n % 2 ? 127 : -128) * K * BS;
	if (!ok(bad == 0, "%s u8s8s32: 255 x -128 / 127 over K=1024, bs=4 is exact (%d)", isa,
		-255 * 128 * K * BS))
		diag("%lld wrong, C[0][0] = %d", (long long)bad, C[0]);
	free(A);
	free(B);
}

/*
 * int8 B whose pairs of k cannot saturate vpmaddubsw (values in [-64, 64]):
 * the AVX2 kernel multiplies it unwidened.  The whole sweep again, exact.
 */
static void test_int8_small_b(const char *isa)
{
	static const enum form forms[] = {FORM_ARRAY, FORM_STRD};
	char err[400] = "";
	int fails;

	b_range = 64;
	fails = sweep(HGC_RT_U8S8, forms, 2, NULL, 0, 1, err, sizeof(err));
	b_range = 0;
	if (!ok(fails == 0, "%s u8s8s32, B in [-64, 64]: 128 shapes, bs 1-4, beta 0/1", isa))
		diag("%d failed; first: %s", fails, err);
}

/*
 * A packed B of 2 rows of 9 lanes (one vector and a scalar lane per row),
 * all pairs (p0, p1) but one, (q0, q1) at byte `at` (even) of row 1.
 */
static void pair_rows(int8_t B[72], int p0, int p1, int at, int q0, int q1)
{
	int i;

	for (i = 0; i < 72; i += 2) {
		B[i] = (int8_t)p0;
		B[i + 1] = (int8_t)p1;
	}
	B[36 + at] = (int8_t)q0;
	B[36 + at + 1] = (int8_t)q1;
}

/*
 * hgc_rt_s8_pairs_fit's bound (255 x 128 fits s16, 255 x 129 does not), in
 * the vector part and the scalar tail of dense rows, and on rows with a gap
 * (checked one by one, the gap ignored); then A = 255 times B at the bound
 * and just past it through the AVX2 kernel: exact either way.
 */
static void test_pairs_fit(void)
{
	static const struct { int p0, p1, at, q0, q1, fit; } cases[] = {
		{64, 64, 0, 64, 64, 1},    {127, 1, 4, 1, 127, 1},   {-128, 0, 8, 0, -128, 1},
		{100, -100, 2, -100, 100, 1}, {64, 64, 6, 127, 2, 0}, {64, 64, 34, -128, -1, 0},
		{-64, -64, 34, 2, 127, 0}, {0, 0, 16, -65, -64, 0},
	};
	uint8_t A[3 * 8];
	int8_t B[72];
	int32_t C[3 * 9];
	size_t i;
	int m, n, k, bad;

	memset(A, 255, sizeof(A));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pair_rows(B, cases[i].p0, cases[i].p1, cases[i].at, cases[i].q0, cases[i].q1);
		is_int(hgc_rt_s8_pairs_fit(B, 36, 9, 8), cases[i].fit,
		       "pairs_fit: (%d, %d) with (%d, %d) at byte %d of row 1", cases[i].p0,
		       cases[i].p1, cases[i].q0, cases[i].q1, cases[i].at);
		is_int(hgc_rt_s8_pairs_fit(B, 36, 8, 8), cases[i].at < 32 ? cases[i].fit : 1,
		       "pairs_fit, rows of 8 lanes 36 bytes apart: the gap is not B");
		hgc_brgemm_u8s8s32_strd(A, B, C, 1, 0, 0, 3, 9, 8, 8, 36, 9, 0);
		for (bad = 0, m = 0; m < 3; m++)
			for (n = 0; n < 9; n++) {
				int32_t want = 0;

				for (k = 0; k < 8; k++)
					want += 255 * B[(k / 4) * 36 + 4 * n + k % 4];
				bad += C[m * 9 + n] != want;
			}
		ok(bad == 0, "u8s8s32 255 x that B: exact (%d wrong)", bad);
	}
}

/*
 * The AVX2 int8 kernel checks B in the first row tile of each column block
 * (|b| <= 64) and, past that, by the exact bound; a block that fails sends
 * the rest of the call to the widened path.  B in [-64, 64] but for one
 * pair of k, (100, 28) (fits, only the exact check says so) or (100, 29)
 * (does not), in column block 0, 1 or the narrower last one (N = 40: two
 * blocks of 16 columns, then 8), in batch element 1, for M = 2 (the first
 * rows only) and 13 (rows below them too), beta 0 and 1: exact each time.
 */
static void test_int8_bad_block(void)
{
	enum { N = 40, K = 16, BS = 2, MMAX = 13 };
	static const int cols[] = {3, 20, 37}, seconds[] = {28, 29};
	static uint8_t A[BS][MMAX * K];
	static int8_t B[BS][K * N];
	static int32_t C[MMAX * N], want[MMAX * N];
	const uint8_t *pa[BS] = {A[0], A[1]};
	const int8_t *pb[BS] = {B[0], B[1]};
	uint32_t s = 7;
	int m, n, k, b, ci, si, mi, beta, bad;

	for (ci = 0; ci < 3; ci++)
		for (si = 0; si < 2; si++)
			for (mi = 0; mi < 2; mi++)
				for (beta = 0; beta < 2; beta++) {
					int M = mi ? MMAX : 2;

					for (b = 0; b < BS; b++) {
						for (k = 0; k < MMAX * K; k++)
							A[b][k] = (uint8_t)(rnd(&s) >> 8);
						for (k = 0; k < K * N; k++)
							B[b][k] = (int8_t)((int)(rnd(&s) % 129) - 64);
					}
					/* packed row 2, lane cols[ci]: k = 8, 9 */
					B[1][2 * 4 * N + 4 * cols[ci]] = 100;
					B[1][2 * 4 * N + 4 * cols[ci] + 1] = (int8_t)seconds[si];
					for (m = 0; m < M; m++)
						A[1][m * K + 8] = A[1][m * K + 9] = 255;
					for (m = 0; m < M * N; m++)
						C[m] = want[m] = beta ? (int32_t)(rnd(&s) % 1000) : 0;
					for (m = 0; m < M; m++)
						for (n = 0; n < N; n++)
							for (b = 0; b < BS; b++)
								for (k = 0; k < K; k++)
									want[m * N + n] +=
										A[b][m * K + k] *
										B[b][(k / 4) * 4 * N + 4 * n + k % 4];
					hgc_brgemm_u8s8s32(pa, pb, C, BS, M, N, K, K, 4 * N, N, beta);
					for (bad = 0, m = 0; m < M * N; m++)
						bad += C[m] != want[m];
					ok(bad == 0, "u8s8s32: pair (100, %d) in column %d, M %d, beta %d: exact (%d wrong)",
					   seconds[si], cols[ci], M, beta, bad);
				}
}

/* A guard-page mapping: at least `bytes` accessible bytes that end right
   before a PROT_NONE page, so a kernel reading past them faults. */
struct guarded {
	char *map, *end;	/* the mapping; the first inaccessible byte */
	size_t len;		/* the mapping's length */
};

/* Map g; false when mmap or mprotect fails. */
static bool guarded_map(struct guarded *g, size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (bytes + page - 1) / page * page;

	g->len = body + page;
	g->map = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED)
		return false;
	g->end = g->map + body;
	return mprotect(g->end, page, PROT_NONE) == 0;
}

/*
 * int8 calls whose B is dense packed blocks one after another (ldb = 4N):
 * the AVX2 vpmaddubsw path asks for the region right after the last block
 * (the next call's B in a template's nest) while its tiles run.  Here that
 * region is a page without access, right after B: a prefetch may point
 * there, a load may not.  M from the first (checking) rows only to rows
 * below them, N with and without a narrower last block, beta 0 and 1:
 * exact each time.
 */
static void test_int8_next_b(void)
{
	enum { K = 64, BS = 2, MMAX = 37, NMAX = 40 };
	static const int ms[] = {1, 4, 5, 13, 37}, ns[] = {16, 40};
	static uint8_t A[BS * MMAX * K];
	static int32_t C[MMAX * NMAX], want[MMAX * NMAX];
	struct guarded g;
	uint32_t s = 11;
	int mi, ni, beta, m, n, k, b, bad;

	if (!guarded_map(&g, BS * K * NMAX)) {
		ok(0, "u8s8s32 next B: mmap");
		return;
	}
	for (mi = 0; mi < 5; mi++)
		for (ni = 0; ni < 2; ni++)
			for (beta = 0; beta < 2; beta++) {
				int M = ms[mi], N = ns[ni];
				int8_t *B = (int8_t *)g.end - BS * K * N;
				const uint8_t *pa[BS] = {A, A + M * K};
				const int8_t *pb[BS] = {B, B + K * N};

				for (k = 0; k < BS * M * K; k++)
					A[k] = (uint8_t)(rnd(&s) >> 8);
				for (k = 0; k < BS * K * N; k++)
					B[k] = (int8_t)((int)(rnd(&s) % 129) - 64);
				for (m = 0; m < M * N; m++)
					C[m] = want[m] = beta ? (int32_t)(rnd(&s) % 1000) : 0;
				for (m = 0; m < M; m++)
					for (n = 0; n < N; n++)
						for (b = 0; b < BS; b++)
							for (k = 0; k < K; k++)
								want[m * N + n] += pa[b][m * K + k] *
										   pb[b][(k / 4) * 4 * N + 4 * n + k % 4];
				hgc_brgemm_u8s8s32(pa, pb, C, BS, M, N, K, K, 4 * N, N, beta);
				for (bad = 0, m = 0; m < M * N; m++)
					bad += C[m] != want[m];
				ok(bad == 0, "u8s8s32 next B after the last block: M %d, N %d, beta %d: exact (%d wrong)",
				   M, N, beta, bad);
			}
	munmap(g.map, g.len);
}

/*
 * f32 A whose rows are 260 to 512 bytes long is fetched a row tile ahead,
 * the last tile asking for the rows right after the call's block: with A
 * right before an inaccessible page, that prefetch must not fault.
 */
static void test_f32_a_ahead(void)
{
	enum { MMAX = 64, NMAX = 40, KMAX = 128 };
	static const int ms[] = {1, 6, 13, 64}, ns[] = {16, 40}, ks[] = {65, 128};
	static float B[KMAX * NMAX], C[MMAX * NMAX];
	static double want[MMAX * NMAX];
	struct guarded g;
	uint32_t s = 17;
	int mi, ni, ki, beta, m, n, k, bad;

	if (!guarded_map(&g, MMAX * KMAX * 4)) {
		ok(0, "f32 A ahead: mmap");
		return;
	}
	for (mi = 0; mi < 4; mi++)
		for (ni = 0; ni < 2; ni++)
			for (ki = 0; ki < 2; ki++)
				for (beta = 0; beta < 2; beta++) {
					int M = ms[mi], N = ns[ni], K = ks[ki];
					float *A = (float *)g.end - M * K;
					const float *pa = A, *pb = B;

					for (k = 0; k < M * K; k++)
						A[k] = (float)((int)(rnd(&s) % 17) - 8) / 8;
					for (k = 0; k < K * N; k++)
						B[k] = (float)((int)(rnd(&s) % 17) - 8) / 8;
					for (m = 0; m < M * N; m++)
						want[m] = C[m] = beta ? (float)(rnd(&s) % 9) : 0;
					for (m = 0; m < M; m++)
						for (n = 0; n < N; n++)
							for (k = 0; k < K; k++)
								want[m * N + n] += (double)A[m * K + k] * B[k * N + n];
					hgc_brgemm_f32(&pa, &pb, C, 1, M, N, K, K, N, N, beta);
					for (bad = 0, m = 0; m < M * N; m++)
						bad += fabs(C[m] - want[m]) > 1e-4 * (1 + fabs(want[m]));
					ok(bad == 0, "f32 A ahead before an inaccessible page: M %d, N %d, K %d, beta %d (%d wrong)",
					   M, N, K, beta, bad);
				}
	munmap(g.map, g.len);
}

/* Batches longer than the stride forms' address chunk, and arrays of the same length. */
static void test_long_batch(const char *isa)
{
	char err[200] = "";
	int k, beta, fails = 0;

	for (k = 0; k < HGC_RT_NKIND; k++)
		for (beta = 0; beta < 2; beta++) {
			struct bcase c = {(enum hgc_rt_kind)k, 7, 19, 8, 37, beta, 1, FORM_STRD,
					  (uint32_t)(77 + k + beta)};

			fails += run_case(&c, NULL, err, sizeof(err)) != 0;
			c.bs = 70;
			c.form = FORM_ARRAY;
			fails += run_case(&c, NULL, err, sizeof(err)) != 0;
		}
	if (!ok(fails == 0, "%s: bs 37 strided and 70 in arrays, every kind, beta 0/1", isa))
		diag("%s", err);
}

/*
 * Shapes whose widened operands (AVX2 int8, bf16) do not fit the kernel's
 * stack buffer in one piece: a long K in chunks of k (M + N = 194 words
 * per k), and rows too wide for even one packed row (M + N > 8192 words, a
 * heap buffer).  Other kernels simply run them.
 */
static void test_wide(const char *isa)
{
	static const int64_t shapes[][4] = {{97, 97, 260, 3}, {3, 8300, 8, 2}, {9000, 5, 6, 1}};
	char err[200] = "";
	int k, beta, fails = 0;
	size_t i;

	for (k = 0; k < HGC_RT_NKIND; k++)
		for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
			for (beta = 0; beta < 2; beta++) {
				struct bcase c = {(enum hgc_rt_kind)k, shapes[i][0], shapes[i][1],
						  shapes[i][2], shapes[i][3], beta, 1,
						  FORM_ARRAY, (uint32_t)(5 + k + beta + 7 * i)};

				fails += run_case(&c, NULL, err, sizeof(err)) != 0;
			}
	if (!ok(fails == 0, "%s: K=260 with M=N=97 (k chunks), rows of 8300 and 9000 "
		"(heap buffer), every kind, beta 0/1", isa))
		diag("%d failed; first: %s", fails, err);
}

/* M or N zero touches nothing; bs or K zero gives beta * C. */
static void test_empty(void)
{
	float C[6] = {1, 2, 3, 4, 5, 6}, A[1] = {1}, B[1] = {1};
	const float *pa[1] = {A}, *pb[1] = {B};
	int32_t Ci[4] = {7, 7, 7, 7};

	hgc_brgemm_f32(pa, pb, C, 1, 0, 2, 1, 1, 2, 3, 0);
	hgc_brgemm_f32(pa, pb, C, 1, 2, 0, 1, 1, 2, 3, 0);
	ok(C[0] == 1 && C[5] == 6, "M or N of 0 leaves C alone");
	hgc_brgemm_f32(pa, pb, C, 0, 2, 2, 1, 1, 2, 3, 1);
	ok(C[0] == 1 && C[4] == 5, "bs 0, beta 1 leaves C alone");
	hgc_brgemm_f32_strd(A, B, C, 1, 0, 0, 2, 2, 0, 1, 2, 3, 0);
	ok(C[0] == 0 && C[1] == 0 && C[2] == 3 && C[3] == 0 && C[4] == 0 && C[5] == 6,
	   "K 0, beta 0 zeroes C and not its row gaps");
	hgc_brgemm_u8s8s32_strd(NULL, NULL, Ci, 0, 0, 0, 2, 1, 4, 4, 4, 2, 0);
	ok(Ci[0] == 0 && Ci[1] == 7 && Ci[2] == 0 && Ci[3] == 7, "int8 bs 0, beta 0 zeroes C");
}

/* Run f in a child with stderr captured; 1 when it died of SIGABRT saying want. */
static int dies_saying(void (*f)(void), const char *want)
{
	int fd[2], status;
	char buf[512] = "";
	ssize_t n;
	pid_t pid;

	if (pipe(fd))
		return 0;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 2);
		close(fd[0]);
		f();
		_exit(0);
	}
	close(fd[1]);
	n = read(fd[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd[0]);
	waitpid(pid, &status, 0);
	if (!strstr(buf, want))
		diag("stderr: %s", buf);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(buf, want);
}

/* int8 with K not a multiple of 4. */
static void bad_k_int8(void)
{
	uint8_t A[8] = {0};
	int8_t B[8] = {0};
	int32_t C[1];

	hgc_brgemm_u8s8s32_strd(A, B, C, 1, 0, 0, 1, 1, 6, 8, 4, 1, 0);
}

/* bf16 with K odd. */
static void bad_k_bf16(void)
{
	uint16_t A[4] = {0}, B[4] = {0};
	float C[1];

	hgc_brgemm_bf16_strd(A, B, C, 1, 0, 0, 1, 1, 3, 4, 2, 1, 0);
}

/* f32 with beta 2. */
static void bad_beta(void)
{
	float A[1] = {0}, B[1] = {0}, C[1] = {0};

	hgc_brgemm_f32_strd(A, B, C, 1, 0, 0, 1, 1, 1, 1, 1, 1, 2);
}

/* Broken contracts stop the program with a message. */
static void test_contract(void)
{
	ok(dies_saying(bad_k_int8, "brgemm u8s8s32: K must be a multiple of the packing (pad with zeros), got 6"),
	   "int8 K=6 aborts with a message");
	ok(dies_saying(bad_k_bf16, "brgemm bf16: K must be a multiple"), "bf16 K=3 aborts");
	ok(dies_saying(bad_beta, "brgemm f32: beta must be 0 or 1, got 2"), "beta 2 aborts");
}

/* hgc_rt_isa_choose: names, clamping and its warnings. */
static void test_choose(void)
{
	char buf[256];
	FILE *f = tmpfile();
	size_t n;

	is_int(hgc_rt_isa_choose(NULL, HGC_ISA_AVX2, f), HGC_ISA_AVX2, "unset HGC_ISA: the best");
	is_int(hgc_rt_isa_choose("", HGC_ISA_AVX512, f), HGC_ISA_AVX512, "empty HGC_ISA: the best");
	is_int(hgc_rt_isa_choose("generic", HGC_ISA_AVX512, f), HGC_ISA_GENERIC, "generic forced");
	is_int(hgc_rt_isa_choose("avx2", HGC_ISA_AVX512, f), HGC_ISA_AVX2, "avx2 forced");
	is_int(ftell(f), 0, "no warning when the CPU has the ISA");
	is_int(hgc_rt_isa_choose("avx512", HGC_ISA_AVX2, f), HGC_ISA_AVX2, "avx512 clamped to avx2");
	is_int(hgc_rt_isa_choose("sse9", HGC_ISA_GENERIC, f), HGC_ISA_GENERIC, "unknown: the best");
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	is_str(buf,
	       "hgc: warning: HGC_ISA=avx512 is not supported by this CPU, using avx2\n"
	       "hgc: warning: unknown HGC_ISA 'sse9' (want avx512, avx2 or generic), using generic\n",
	       "clamping and unknown names are reported");
	fclose(f);
	is_str(hgc_rt_isa_name(HGC_ISA_AVX512), "avx512", "isa names");
	is_str(hgc_rt_isa_name((enum hgc_isa)7), "unknown", "out-of-range isa name");
}

/* Run this test binary with HGC_ISA=env --print-isa; its output. */
static void child_isa(const char *env, char *out, size_t n)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "HGC_ISA=%s", env);
	run_self(prefix, "--print-isa", out, n);
}

/* HGC_ISA read once at start-up, clamped with one warning however many calls follow. */
static void test_env(enum hgc_isa best)
{
	char out[512], want[256];

	child_isa("generic", out, sizeof(out));
	is_str(out, "generic generic\n", "HGC_ISA=generic runs the generic kernels");
	child_isa("avx512", out, sizeof(out));
	if (best == HGC_ISA_AVX512)
		snprintf(want, sizeof(want), "avx512 avx512\n");
	else
		snprintf(want, sizeof(want),
			 "hgc: warning: HGC_ISA=avx512 is not supported by this CPU, using %s\n%s %s\n",
			 hgc_rt_isa_name(best), hgc_rt_isa_name(best), hgc_rt_isa_name(best));
	is_str(out, want, "HGC_ISA=avx512: used or clamped with one warning");
}

/* --print-isa: print the ISA and the f32 kernel after a few calls, for test_env. */
static int print_isa(void)
{
	float A[4] = {1, 2, 3, 4}, B[4] = {1, 1, 1, 1}, C[4];

	hgc_rt_isa();
	hgc_brgemm_f32_strd(A, B, C, 1, 0, 0, 2, 2, 2, 2, 2, 2, 0);
	hgc_brgemm_f32_strd(A, B, C, 1, 0, 0, 2, 2, 2, 2, 2, 2, 0);
	printf("%s %s\n", hgc_rt_isa_name(hgc_rt_isa()), hgc_rt_kernel_name(HGC_RT_F32));
	return C[0] == 3 && C[3] == 7 ? 0 : 1;
}

/* Another tile configuration in force (rows 8 by 32 bytes), as other AMX code leaves it. */
__attribute__((target("amx-tile"))) static void foreign_tiles(void)
{
	unsigned char cfg[64] = {1};
	int t;

	for (t = 0; t < 8; t++) {
		cfg[16 + 2 * t] = 32;
		cfg[48 + t] = 8;
	}
	__asm__ volatile("ldtilecfg %0" : : "m"(cfg));
}

/* No tile configuration at all (INIT state). */
__attribute__((target("amx-tile"))) static void released_tiles(void)
{
	__asm__ volatile("tilerelease");
}

/* One 64x64x128 u8 x s8 call against the sum, after state() set the thread's tiles. */
static void amx_call_after(void (*state)(void), const char *what)
{
	enum { M = 64, N = 64, K = 128 };
	static uint8_t A[M * K];
	static int8_t B[K * N];
	static int32_t C[M * N], want[M * N];
	const uint8_t *pa[1] = {A};
	const int8_t *pb[1] = {B};
	uint32_t s = 5;
	int m, n, k, bad;

	for (k = 0; k < M * K; k++)
		A[k] = (uint8_t)(rnd(&s) >> 8);
	for (k = 0; k < K * N; k++)
		B[k] = (int8_t)(rnd(&s) >> 8);
	for (m = 0; m < M; m++)
		for (n = 0; n < N; n++)
			for (want[m * N + n] = 0, k = 0; k < K; k++)
				want[m * N + n] += A[m * K + k] * B[(k / 4) * 4 * N + 4 * n + k % 4];
	state();
	hgc_brgemm_u8s8s32(pa, pb, C, 1, M, N, K, K, 4 * N, N, 0);
	for (bad = 0, m = 0; m < M * N; m++)
		bad += C[m] != want[m];
	ok(bad == 0, "AMX call after %s: exact (%d wrong)", what, bad);
}

/* The AMX kernels load their tile configuration when they find another, or none. */
static void test_amx_config(void)
{
	if (!hgc_rt_has_amx()) {
		ok(1, "AMX tile configuration # SKIP no AMX here");
		return;
	}
	amx_call_after(foreign_tiles, "another tile configuration");
	amx_call_after(released_tiles, "a tile release");
	amx_call_after(released_tiles, "a tile release (again)");
}

/*
 * The AMX calls that run on tiles shaped to them (brgemm_amx.c, run_exact):
 * 8 rows or more, last row and column tiles of 1 to 15 (and none), K of
 * 4 to 64 bytes in one short chunk or whole chunks of 64 (and two chunks,
 * the second short, of rows and columns in whole tiles), bs 1 and 3,
 * beta 0/1, padded leading dimensions; 32x32 calls (the padded path, its
 * own configuration) among them, so each kernel reconfigures back and forth.
 */
static void test_amx_exact(void)
{
	static const int64_t ms[] = {8, 13, 16, 32, 40, 47}, ns[] = {1, 5, 16, 32, 33, 40};
	static const int64_t kbytes[] = {4, 16, 32, 40, 64, 96, 128, 192};
	char err[400] = "", e[200];
	int k, mi, ni, ki, fails, i;

	if (!hgc_rt_has_amx()) {
		ok(1, "AMX tiles shaped to the call # SKIP no AMX here");
		return;
	}
	for (k = HGC_RT_U8S8; k <= HGC_RT_BF16; k++) {
		fails = i = 0;
		for (mi = 0; mi < 6; mi++)
			for (ni = 0; ni < 6; ni++)
				for (ki = 0; ki < 8; ki++, i++) {
					struct bcase c = {(enum hgc_rt_kind)k, ms[mi], ns[ni],
							  kbytes[ki] / esz[k], 1 + 2 * (i % 3 == 1),
							  i % 2, i % 4 == 3 ? 4 : 0,
							  i % 5 ? FORM_ARRAY : FORM_STRD,
							  (uint32_t)(3100 + i)};

					if (run_case(&c, NULL, e, sizeof(e)) && !fails++)
						snprintf(err, sizeof(err), "M=%lld N=%lld K=%lld bs=%lld: %s",
							 (long long)c.M, (long long)c.N, (long long)c.K,
							 (long long)c.bs, e);
				}
		if (!ok(fails == 0, "AMX %s: tiles shaped to 8-47 rows, 1-40 columns, K 4-192 bytes",
			kind_name[k]))
			diag("%d failed; first: %s", fails, err);
	}
}

/* Every kernel test at the ISA in use. */
/*
 * f32 post-ops (hgc_brgemm_f32_post): bias, ReLU and both over the shape
 * sweep and the strips, each against the reference's sum, + bias, then
 * the clamp; the asm tiles apply them in registers, the others after each
 * tile, the generic kernel after the call.
 */
static void test_post(const char *isa)
{
	static const enum form forms[] = {FORM_ARRAY};
	static const char *const what[4] = {"", "bias", "ReLU", "bias and ReLU"};
	char err[400] = "";
	int mode, fails;

	for (mode = POST_BIAS; mode <= (POST_BIAS | POST_RELU); mode++) {
		post_mode = mode;
		fails = sweep(HGC_RT_F32, forms, 1, NULL, 0, 1, err, sizeof(err));
		fails += strip_cases(HGC_RT_F32, FORM_ARRAY, NULL, err, sizeof(err));
		post_mode = 0;
		if (!ok(fails == 0, "%s f32 post-ops, %s: the 128 shapes and the strips", isa,
			what[mode]))
			diag("%d failed; first: %s", fails, err);
	}
}

/*
 * ReLU keeps a NaN and -0 (x < 0 ? 0 : x, as the interpreter computes it)
 * and bias is one add after the sum: C = [NaN, -0, -1, 2, ...] accumulated
 * with A = -0 and B = 0 (sums of -0, so that -0 stays -0), in a 6x4 asm tile (64 columns), a 16x1 C tile (16 columns)
 * and whatever the ISA in use runs.
 */
static void test_post_edges(const char *isa)
{
	enum { M = 6, N = 64 };
	static float C[M * N], A[M], B[N];
	const float *pa[1] = {A}, *pb[1] = {B};
	int n, bad = 0, i;

	for (i = 0; i < M; i++)
		A[i] = -0.0f;
	for (n = 16; n <= N; n += N - 16) {
		for (i = 0; i < M * n; i++)
			C[i] = i % 4 == 0 ? NAN : i % 4 == 1 ? -0.0f : i % 4 == 2 ? -1.0f : 2.0f;
		hgc_brgemm_f32_post(pa, pb, C, 1, M, n, 1, 1, n, n, 1, NULL, 1);
		for (i = 0; i < M * n; i++)
			bad += i % 4 == 0 ? !isnan(C[i]) : i % 4 == 1 ? C[i] != 0 || !signbit(C[i]) :
			       i % 4 == 2 ? C[i] != 0 || signbit(C[i]) : C[i] != 2.0f;
	}
	ok(bad == 0, "%s ReLU post-op: NaN and -0 stay, -1 -> 0, 2 stays (%d wrong)", isa, bad);
}

static void test_isa(const char *name)
{
	test_post(name);
	test_post_edges(name);
	test_sweep(name);
	test_strips(name);
	test_short_rows(name);
	test_kloop(name);
	test_int8_extremes(name);
	test_int8_small_b(name);
	test_long_batch(name);
	test_wide(name);
}

int main(int argc, char **argv)
{
	enum hgc_isa best, isa;

	if (argc > 1 && !strcmp(argv[1], "--print-isa"))
		return print_isa();
	best = hgc_rt_best_isa(hgc_rt_cpu());
	diag("CPU: best ISA %s, avx512-vnni %d, avx512-bf16 %d, amx-int8 %d, amx-bf16 %d",
	     hgc_rt_isa_name(best), hgc_rt_cpu()->avx512_vnni, hgc_rt_cpu()->avx512_bf16,
	     hgc_rt_cpu()->amx_int8, hgc_rt_cpu()->amx_bf16);
	for (isa = HGC_ISA_GENERIC; isa <= HGC_ISA_AVX512; isa++) {
		const char *name = hgc_rt_isa_name(isa);

		if (isa > best) {
			is_int(hgc_rt_set_isa(isa), best, "%s: set_isa clamps to %s", name,
			       hgc_rt_isa_name(best));
			ok(1, "%s # SKIP this CPU lacks it (t/041 runs its tiles emulated)", name);
			continue;
		}
		is_int(hgc_rt_set_isa(isa), isa, "%s: set_isa", name);
		test_isa(name);
		if (isa == HGC_ISA_AVX512 && hgc_rt_has_amx()) {
			/* int8 and bf16 ran on AMX: the zmm tiles again without it */
			int amx = hgc_rt_set_amx(0);

			ok(!amx, "AMX off: int8 on %s, bf16 on %s", hgc_rt_kernel_name(HGC_RT_U8S8),
			   hgc_rt_kernel_name(HGC_RT_BF16));
			test_isa("avx512 (AMX off)");
			ok(hgc_rt_set_amx(1), "AMX on again");
		}
	}
	hgc_rt_set_isa(best);
	if (best >= HGC_ISA_AVX2) {
		test_pairs_fit();
		test_int8_bad_block();
		test_int8_next_b();
		test_f32_a_ahead();
	}
	if (best == HGC_ISA_AVX512) {
		test_amx_config();
		test_amx_exact();
	}
	test_empty();
	test_contract();
	test_choose();
	test_env(best);
	return done_testing();
}
