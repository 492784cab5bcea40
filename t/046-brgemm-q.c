/*
 * t/046-brgemm-q.c: hgc_brgemm_u8s8_q (runtime.h), the u8 x s8 call with
 * its requantization into an 8-bit Y, against a reference written here
 * from the contract: exact sums in 64 bits, (float) of them, each step one
 * f32 operation, then round half to even (rint) of the value clamped to
 * u8 or s8, NaN to 0.  Every byte of Y must match, Y's row gaps keep their
 * guard bytes.  Shapes for AMX's requantizing blocks (rows and columns in
 * 32s, K in 64s over two chunks) and for the others (the exact and
 * two-chunk AMX paths, partial blocks, K not a multiple of 64), beta 0 and
 * 1, steps per column and scalar, a division by 1, by a power of two and
 * by 0.3; on each ISA the machine has (AMX, AVX-512 without it, AVX2, the
 * portable C).  A malformed step list stops the program (a broken contract
 * of generated code), checked in a child.
 */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "runtime/runtime_int.h"
#include "tap.h"

#define YGUARD 0x5a

struct qcase {
	int64_t M, N, K, bs;
	int beta;
	int64_t pad;	/* extra elements in lda, ldb (k groups), ldc, ldy */
};

struct qsteps {
	const char *name;
	int64_t steps;
};

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* The reference's f32 steps on f for column n (the contract, not requant.c's code). */
static float ref_steps(int64_t steps, const float *const v[4], float f, int64_t n)
{
	for (int i = 0; i < 4; i++) {
		int code = (int)(steps >> (4 * i)) & 15, op = code & 7;
		float x = op == HGC_RT_Q_RELU ? 0 : v[i][code & HGC_RT_Q_COL ? n : 0];

		if (!code)
			break;
		if (op == HGC_RT_Q_MUL)
			f *= x;
		else if (op == HGC_RT_Q_DIV)
			f /= x;
		else if (op == HGC_RT_Q_ADD)
			f += x;
		else if (op == HGC_RT_Q_SUB)
			f -= x;
		else if (f < 0)
			f = 0;
	}
	return f;
}

static int ref_byte(float f, int s8)
{
	if (f != f)
		return 0;
	if (s8)
		return (int)rintf(f < -128 ? -128 : f > 127 ? 127 : f);
	return (int)rintf(f < 0 ? 0 : f > 255 ? 255 : f);
}

/* One case and step list on the ISA in use: 1 if every byte of Y is right. */
static int run_case(const struct qcase *q, const struct qsteps *st, uint32_t seed)
{
	int64_t lda = q->K + 4 * q->pad, ldb = 4 * (q->N + q->pad), ldc = q->N + q->pad;
	int64_t ldy = q->N + 3 * q->pad, kg = q->K / 4, b, m, n, k, bad = 0;
	int s8 = (st->steps & HGC_RT_Q_S8) != 0;
	uint8_t **A = calloc((size_t)q->bs, sizeof(*A));
	int8_t **B = calloc((size_t)q->bs, sizeof(*B));
	int32_t *C = malloc((size_t)(q->M * ldc) * 4), *C0 = malloc((size_t)(q->M * ldc) * 4);
	uint8_t *Y = malloc((size_t)(q->M * ldy));
	float *vv[4];
	const float *v[4];

	for (int i = 0; i < 4; i++) {
		vv[i] = malloc((size_t)q->N * 4);
		for (n = 0; n < q->N; n++)	/* scales spread the sums over the byte range */
			vv[i][n] = i == 0 ? (float)(rnd(&seed) % 1000 + 200) * 1e-6f
				 : i == 1 ? (float)((int)(rnd(&seed) % 200) - 100) * 0.5f
					  : (float)(rnd(&seed) % 100 + 1) * 0.01f;
		v[i] = vv[i];
	}
	vv[2][0] = 0.3f;	/* a scalar division that stays one */
	vv[3][0] = 0.5f;	/* one that becomes a multiply */
	vv[1][0] = 2.5f;	/* a scalar bias, subtrahend */
	if (!strcmp(st->name, "divide by 1"))
		vv[1][0] = 1.0f;
	for (b = 0; b < q->bs; b++) {
		A[b] = malloc((size_t)(q->M * lda));
		B[b] = malloc((size_t)(kg * ldb));
		for (m = 0; m < q->M * lda; m++)
			A[b][m] = (uint8_t)rnd(&seed);
		for (m = 0; m < kg * ldb; m++)
			B[b][m] = (int8_t)((int)(rnd(&seed) % 128) - 64);
	}
	for (m = 0; m < q->M * ldc; m++)
		C0[m] = (int32_t)(rnd(&seed) % 20001) - 10000;
	memcpy(C, C0, (size_t)(q->M * ldc) * 4);
	memset(Y, YGUARD, (size_t)(q->M * ldy));
	hgc_brgemm_u8s8_q((const uint8_t *const *)A, (const int8_t *const *)B, C, q->bs, q->M,
			  q->N, q->K, lda, ldb, ldc, q->beta, Y, ldy, st->steps, v[0], v[1], v[2],
			  v[3]);
	for (m = 0; m < q->M; m++) {
		for (n = 0; n < q->N; n++) {
			int64_t acc = q->beta ? C0[m * ldc + n] : 0;
			int want, got;

			for (b = 0; b < q->bs; b++)
				for (k = 0; k < q->K; k++)
					acc += (int64_t)A[b][m * lda + k] *
					       B[b][(k / 4) * ldb + n * 4 + k % 4];
			want = ref_byte(ref_steps(st->steps, v, (float)acc, n), s8);
			got = s8 ? (int8_t)Y[m * ldy + n] : Y[m * ldy + n];
			if (got != want && bad++ < 3)
				diag("  (%lld, %lld): got %d, want %d", (long long)m, (long long)n,
				     got, want);
		}
		for (n = q->N; n < ldy; n++)
			if (Y[m * ldy + n] != YGUARD && bad++ < 3)
				diag("  row %lld: gap byte %lld written", (long long)m, (long long)n);
	}
	for (b = 0; b < q->bs; b++) {
		free(A[b]);
		free(B[b]);
	}
	for (int i = 0; i < 4; i++)
		free(vv[i]);
	free(A);
	free(B);
	free(C);
	free(C0);
	free(Y);
	return bad == 0;
}

#define S(i, op) ((int64_t)(op) << (4 * (i)))

static const struct qsteps stepsets[] = {
	{"scale per column (an int8 MatMul's per-channel weights)", S(0, HGC_RT_Q_MUL | HGC_RT_Q_COL)},
	{"divide by 1", S(0, HGC_RT_Q_MUL | HGC_RT_Q_COL) | S(1, HGC_RT_Q_DIV)},
	{"add a scalar, divide by 0.3", S(0, HGC_RT_Q_MUL | HGC_RT_Q_COL) | S(1, HGC_RT_Q_ADD) |
		 S(2, HGC_RT_Q_DIV)},
	{"bias, ReLU, divide by 0.5, to s8",
	 S(0, HGC_RT_Q_MUL | HGC_RT_Q_COL) | S(1, HGC_RT_Q_ADD | HGC_RT_Q_COL) | S(2, HGC_RT_Q_RELU) |
		 S(3, HGC_RT_Q_DIV) | HGC_RT_Q_S8},
	{"scalar scale, subtract, divide per column, then by 0.5, to s8",
	 S(0, HGC_RT_Q_MUL) | S(1, HGC_RT_Q_SUB) | S(2, HGC_RT_Q_DIV | HGC_RT_Q_COL) |
		 S(3, HGC_RT_Q_DIV) | HGC_RT_Q_S8},
};

static const struct qcase cases[] = {
	{64, 64, 256, 1, 0, 0},		/* AMX's requantizing blocks */
	{32, 96, 192, 2, 0, 0},		/* two batch elements, three column blocks */
	{96, 32, 512, 1, 1, 0},		/* beta 1 */
	{64, 64, 256, 1, 0, 3},		/* leading dimensions past the block */
	{64, 64, 128, 1, 0, 0},		/* AMX's two-chunk path, then the rows */
	{64, 64, 64, 1, 0, 0},		/* AMX's exact path */
	{40, 48, 100, 1, 1, 1},		/* partial blocks, K not in 64s */
	{5, 7, 12, 3, 0, 2},		/* the zmm kernel's edges */
};

/* Whether a call with steps dies of SIGABRT (in a child). */
static int aborts(int64_t steps)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return 0;
	if (!pid) {
		const uint8_t a[4] = {1, 2, 3, 4}, *pa = a;
		const int8_t b[4] = {1, 1, 1, 1}, *pb = b;
		int32_t c = 0;
		uint8_t y = 0;
		float s = 1;

		freopen("/dev/null", "w", stderr);
		hgc_brgemm_u8s8_q(&pa, &pb, &c, 1, 1, 1, 4, 4, 4, 1, 0, &y, 1, steps, &s, NULL,
				  NULL, NULL);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

/*
 * The rows alone on values at the edges, per column scales times sums of
 * -3 to 3: NaN, +-inf, +-1e30 (past int32 once scaled), +-255.5 and
 * 254.5 (halves at the bounds), +-0.5, 1.5 and 2.5 (halves to even), -0,
 * 127.5 and -128.5 (s8's bounds), on rows of 16, 32, 48 and 64 columns
 * (the zmm rows narrow whole rows of 2 and 4 vectors with packs, others a
 * vector at a time), u8 and s8: every byte as ref_byte says.
 */
static int edge_rows(void (*rows)(const struct hgc_rt_requant *, const int32_t *, int64_t,
				  int64_t, int64_t, int64_t, int64_t))
{
	static const float edge[] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 255.5f, -255.5f,
				     254.5f, 0.5f, -0.5f, 1.5f, 2.5f, -0.0f, 127.5f, -128.5f,
				     85.25f};
	const int64_t M = 7, ne = sizeof(edge) / sizeof(edge[0]);
	int32_t src[7 * 64];
	float scale[64];
	unsigned char y[7 * 64];
	int bad = 0;

	for (int64_t n = 0; n < 64; n++)
		scale[n] = edge[n % ne];
	for (int64_t m = 0; m < M; m++)
		for (int64_t n = 0; n < 64; n++)
			src[m * 64 + n] = (int32_t)((m + n / ne) % 7) - 3;
	for (int s8 = 0; s8 < 2; s8++)
		for (int64_t cols = 16; cols <= 64; cols += 16) {
			const float *const v[4] = {scale, NULL, NULL, NULL};
			struct hgc_rt_requant q;

			if (hgc_rt_requant_init(&q, y, 64, S(0, HGC_RT_Q_MUL | HGC_RT_Q_COL) |
						 (s8 ? HGC_RT_Q_S8 : 0), v) < 0)
				return 0;
			memset(y, YGUARD, sizeof(y));
			rows(&q, src, 64, 0, M, 0, cols);
			for (int64_t m = 0; m < M; m++)
				for (int64_t n = 0; n < 64; n++) {
					int want = n < cols ? ref_byte((float)src[m * 64 + n] *
									   scale[n], s8)
							    : YGUARD;
					int got = s8 && n < cols ? (signed char)y[m * 64 + n]
								 : y[m * 64 + n];

					bad += got != want;
				}
		}
	return bad == 0;
}

int main(void)
{
	const struct hgc_rt_cpu *cpu = hgc_rt_cpu();
	struct {
		const char *name;
		enum hgc_isa isa;
		int amx;
		int have;
	} isas[] = {
		{"AMX", HGC_ISA_AVX512, 1, cpu->amx_int8 && hgc_rt_set_amx(1)},
		{"AVX-512", HGC_ISA_AVX512, 0, hgc_rt_best_isa(cpu) >= HGC_ISA_AVX512},
		{"AVX2", HGC_ISA_AVX2, 0, hgc_rt_best_isa(cpu) >= HGC_ISA_AVX2},
		{"generic", HGC_ISA_GENERIC, 0, 1},
	};
	uint32_t seed = 12345;

	for (size_t i = 0; i < sizeof(isas) / sizeof(isas[0]); i++) {
		if (!isas[i].have) {
			ok(1, "# SKIP %s: not on this machine", isas[i].name);
			continue;
		}
		hgc_rt_set_isa(isas[i].isa);
		hgc_rt_set_amx(isas[i].amx);
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
			for (size_t s = 0; s < sizeof(stepsets) / sizeof(stepsets[0]); s++)
				ok(run_case(&cases[c], &stepsets[s], seed++),
				   "%s: %lldx%lldx%lld bs%lld beta %d pad %lld: %s", isas[i].name,
				   (long long)cases[c].M, (long long)cases[c].N,
				   (long long)cases[c].K, (long long)cases[c].bs, cases[c].beta,
				   (long long)cases[c].pad, stepsets[s].name);
	}
	ok(edge_rows(hgc_rt_requant_rows), "portable rows: NaN, infinities, past int32, halves");
	if (hgc_rt_best_isa(cpu) >= HGC_ISA_AVX512)
		ok(edge_rows(hgc_rt_requant_rows_avx512),
		   "zmm rows: NaN, infinities, past int32, halves");
	else
		ok(1, "# SKIP zmm rows: no AVX-512 here");
	ok(aborts(7), "an unknown step op stops the program");
	ok(aborts(S(0, HGC_RT_Q_RELU | HGC_RT_Q_COL)), "a per-column ReLU stops the program");
	ok(aborts(S(1, HGC_RT_Q_MUL)), "a step after the end of the list stops the program");
	ok(aborts(S(0, HGC_RT_Q_MUL) | S(1, HGC_RT_Q_MUL)), "a step without its operand stops the program");
	ok(!aborts(S(0, HGC_RT_Q_MUL)), "a well-formed list runs");
	return done_testing();
}
