/*
 * 080-llvm: Tensor IR modules JIT-compiled through LLVM and run; results
 * checked against plain C computed here and, byte for byte, against the C
 * backend run on the same inputs.  Elementwise casts and selects, softmax
 * (reductions, a local tensor), blocked brgemm matmuls of odd sizes, int8
 * and bf16 brgemm, parallel fors over collapsed indices with 1 and 2
 * threads, constant tensors filled from data and by init, data movement and
 * math intrinsics, and the time a small module takes to compile.
 */
#include "t/llvm_check.h"

#include <omp.h>

/* The blocked brgemm matmul of t/tir/modules.h against a triple loop. */
static void test_matmul(int64_t M, int64_t N, int64_t K, int64_t MB, int64_t NB, int64_t KB)
{
	float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
	float *C = malloc(sizeof(float) * M * N), *R = calloc(M * N, sizeof(float));
	void *args[3] = { A, B, C };
	size_t sizes[3] = { sizeof(float) * M * K, sizeof(float) * K * N, sizeof(float) * M * N };
	unsigned s = 1;
	int64_t i, j, k;

	for (i = 0; i < M * K; i++)
		A[i] = rnd(&s);
	for (i = 0; i < K * N; i++)
		B[i] = rnd(&s);
	for (i = 0; i < M * N; i++)
		C[i] = 1e9f;
	for (i = 0; i < M; i++)
		for (k = 0; k < K; k++)
			for (j = 0; j < N; j++)
				R[i * N + j] += A[i * K + k] * B[k * N + j];
	if (run_both(build_matmul(M, N, K, MB, NB, KB), args, sizes, 3, "matmul"))
		ok(max_err(C, R, M * N) < 1e-5, "matmul %lldx%lldx%lld (blocks %lld %lld %lld) is right",
		   (long long)M, (long long)N, (long long)K, (long long)MB, (long long)NB, (long long)KB);
	free(A);
	free(B);
	free(C);
	free(R);
}

/* Elementwise select, casts, u8 quantization and bf16 rounding. */
static void test_eltwise(void)
{
	enum { R = 7, C = 33 };
	float X[R][C], Y[R][C], J[R][C], r, q;
	int8_t S[C];
	uint8_t Q[R][C];
	uint16_t H[R][C];
	void *args[6] = { X, S, Y, Q, H, J };
	size_t sizes[6] = { sizeof(X), sizeof(S), sizeof(Y), sizeof(Q), sizeof(H), sizeof(J) };
	unsigned s = 7;
	int i, j, bad = 0;

	for (j = 0; j < C; j++)
		S[j] = (int8_t)(j * 37 % 17 - 8);
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++)
			X[i][j] = 40 * rnd(&s);
	if (!run_both(build_eltwise(R, C), args, sizes, 6, "eltwise"))
		return;
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++) {
			r = X[i][j] > 0 ? X[i][j] * S[j] : X[i][j] * 0.125f;
			q = fmaxf(fminf(nearbyintf(r) + 128, 255), 0);
			bad += Y[i][j] != r || Q[i][j] != (uint8_t)q || H[i][j] != to_bf16(r) ||
			       J[i][j] != (float)(j - C / 2);
		}
	is_int(bad, 0, "eltwise matches plain C element for element");
}

/* Row softmax (max and sum reductions, a local tensor) against expf. */
static void test_softmax(void)
{
	enum { R = 5, C = 37 };
	float X[R][C], Y[R][C], W[R][C], mx, sum;
	void *args[2] = { X, Y };
	size_t sizes[2] = { sizeof(X), sizeof(Y) };
	unsigned s = 3;
	int i, j;

	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++)
			X[i][j] = 8 * rnd(&s);
	for (i = 0; i < R; i++) {
		mx = -INFINITY;
		for (j = 0; j < C; j++)
			mx = fmaxf(mx, X[i][j]);
		for (sum = 0, j = 0; j < C; j++)
			sum += W[i][j] = expf(X[i][j] - mx);
		for (j = 0; j < C; j++)
			W[i][j] /= sum;
	}
	if (run_both(build_softmax(R, C), args, sizes, 2, "softmax"))
		ok(max_err(&Y[0][0], &W[0][0], R * C) < 1e-6, "softmax matches plain C");
}

/* pfor2 on nthreads: T says which thread ran each (i, j), O the values; init fills W2. */
static void pfor2_on(int nthreads)
{
	enum { R = 4, C = 6 };
	static const float w[C] = { 1, -2, 0.5f, 3, 0, 1.25f };
	int64_t T[R][C];
	float O[R][C], scale = 2, v;
	void *args[3] = { T, O, &scale };
	size_t sizes[3] = { sizeof(T), sizeof(O), sizeof(scale) };
	int i, j, bad = 0, badt = 0;
	char what[64];

	snprintf(what, sizeof(what), "pfor2 on %d thread%s", nthreads, nthreads > 1 ? "s" : "");
	memset(T, 0xff, sizeof(T));
	omp_set_num_threads(nthreads);
	if (!run_both(build_pfor2(R, C, w), args, sizes, 3, what))
		return;
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++) {
			v = scale * w[j] * w[j] + (float)(i * C + j);
			bad += O[i][j] != (i == j ? -v : v);
			/* static schedule: thread t runs the t-th contiguous chunk of i * C + j */
			badt += T[i][j] != (i * C + j) * nthreads / (R * C);
		}
	is_int(bad, 0, "%s: every element, from init's constant and the scalar", what);
	is_int(badt, 0, "%s: the collapsed iterations split in contiguous chunks", what);
}

/*
 * A parallel for with ranges from scalar parameters, steps 2 and 3 and a
 * nonzero begin, capturing a variable and a local tensor of the caller, with
 * a nested parallel for inside: O[i, j] = 100 * i + j + base + L[1] + sum of
 * the inner loop.
 */
static struct hgc_tir_module *build_pfor_ranges(int64_t R, int64_t C)
{
	struct hgc_tir_module *m = hgc_tir_module_new("ranges");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "ranges", TY(VOID));
	struct hgc_tir_tensor *O = hgc_tir_func_add_tensor(f, "O", TY(INDEX), 2, (int64_t[]){ R, C });
	struct hgc_tir_var *rb = hgc_tir_func_add_scalar(f, "rb", TY(INDEX));
	struct hgc_tir_var *re = hgc_tir_func_add_scalar(f, "re", TY(INDEX));
	struct hgc_tir_tensor *L = hgc_tir_tensor_newc(m, "L", TY(INDEX), HGC_TIR_LOCAL, 1,
						       (int64_t[]){ 3 });
	struct hgc_tir_tensor *P = hgc_tir_tensor_newc(m, "P", TY(INDEX), HGC_TIR_LOCAL, 1,
						       (int64_t[]){ 4 });
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j"), *k = ivar(m, "k"), *base;
	struct hgc_tir_stmt *b, *in;

	m->entry = f;
	base = ilet(m, f->body, "base", BIN(MUL, V(rb), I(1000)));
	hgc_tir_def_tensor(m, f->body, L);
	ST1(f->body, L, I(1), I(7));
	b = hgc_tir_body(hgc_tir_pfor(m, f->body, 2, (struct hgc_tir_var *[]){ i, j },
				      (struct hgc_tir_expr *[]){ V(rb), I(1) },
				      (struct hgc_tir_expr *[]){ V(re), I(C) },
				      (struct hgc_tir_expr *[]){ I(2), I(3) }));
	hgc_tir_def_tensor(m, b, P);
	in = hgc_tir_body(hgc_tir_pfor(m, b, 1, &k, (struct hgc_tir_expr *[]){ I(0) },
				       (struct hgc_tir_expr *[]){ I(4) }, NULL));
	ST1(in, P, V(k), BIN(MUL, V(k), V(j)));
	ST2(b, O, V(i), V(j), BIN(ADD, BIN(ADD, BIN(ADD, BIN(MUL, V(i), I(100)), V(j)), V(base)),
				   BIN(ADD, LD1(L, I(1)), BIN(ADD, LD1(P, I(3)), LD1(P, I(1))))));
	return m;
}

/* Dynamic ranges, steps, captures and a nested parallel for. */
static void test_pfor_ranges(void)
{
	enum { R = 9, C = 10 };
	int64_t O[R][C], rb = 1, re = 8, i, j;
	void *args[3] = { O, &rb, &re };
	size_t sizes[3] = { sizeof(O), sizeof(rb), sizeof(re) };
	int bad = 0;

	memset(O, 0, sizeof(O));
	omp_set_num_threads(2);
	if (!run_both(build_pfor_ranges(R, C), args, sizes, 3, "parallel for with dynamic ranges"))
		return;
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++)
			bad += O[i][j] != ((i >= 1 && i < 8 && (i - 1) % 2 == 0 && j % 3 == 1)
						   ? 100 * i + j + 1000 + 7 + 4 * j : 0);
	is_int(bad, 0, "only iterations begin + k * step ran, with the captured values");
}

/* C = A * B in int8 (u8 x s8 -> s32, B packed by 4 k) or bf16 (B packed by 2 k),
   as two batch elements: brgemm_strd with element strides, or brgemm over a
   local array of block addresses; C accumulates onto a fill. */
static struct hgc_tir_module *build_lowp(bool bf16, bool strd, int64_t M, int64_t N, int64_t K)
{
	struct hgc_tir_module *m = hgc_tir_module_new("lowp");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "gemm", TY(VOID));
	int64_t p = bf16 ? 2 : 4, h = K / 2;
	struct hgc_tir_type ta = bf16 ? TY(BF16) : TY(U8), tb = bf16 ? TY(BF16) : TY(S8);
	struct hgc_tir_tensor *A = hgc_tir_func_add_tensor(f, "A", ta, 2, (int64_t[]){ M, K });
	struct hgc_tir_tensor *B = hgc_tir_func_add_tensor(f, "B", tb, 2, (int64_t[]){ K / p, N * p });
	struct hgc_tir_tensor *C = hgc_tir_func_add_tensor(f, "C", bf16 ? TY(F32) : TY(S32), 2,
							   (int64_t[]){ M, N });
	struct hgc_tir_tensor *aa = hgc_tir_tensor_newc(m, "aa", hgc_tir_ptr_to(ta), HGC_TIR_LOCAL,
							1, (int64_t[]){ 2 });
	struct hgc_tir_tensor *ba = hgc_tir_tensor_newc(m, "ba", hgc_tir_ptr_to(tb), HGC_TIR_LOCAL,
							1, (int64_t[]){ 2 });
	struct hgc_tir_expr *a0 = hgc_tir_addrv(m, A, 2, I(0), I(0)), *b0 = hgc_tir_addrv(m, B, 2, I(0), I(0));

	m->entry = f;
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_FILL, 3,
		hgc_tir_addrv(m, C, 2, I(0), I(0)),
		bf16 ? F32C(0.5) : hgc_tir_int(m, HGC_TIR_S32, 7), I(M * N)));
	if (strd) {
		/* batch element b: A[:, b*h : h] and B rows [b*h/p, (b+1)*h/p) */
		hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_BRGEMM_STRD, 13, a0, b0,
			hgc_tir_addrv(m, C, 2, I(0), I(0)), I(2), I(h), I(h / p * N * p), I(M), I(N),
			I(h), I(K), I(N * p), I(N), hgc_tir_bool(m, true)));
		return m;
	}
	hgc_tir_def_tensor(m, f->body, aa);
	hgc_tir_def_tensor(m, f->body, ba);
	ST1(f->body, aa, I(0), a0);
	ST1(f->body, aa, I(1), hgc_tir_addrv(m, A, 2, I(0), I(h)));
	ST1(f->body, ba, I(0), b0);
	ST1(f->body, ba, I(1), hgc_tir_addrv(m, B, 2, I(h / p), I(0)));
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_BRGEMM, 11,
		hgc_tir_addrv(m, aa, 1, I(0)), hgc_tir_addrv(m, ba, 1, I(0)),
		hgc_tir_addrv(m, C, 2, I(0), I(0)), I(2), I(M), I(N), I(h), I(K), I(N * p), I(N),
		hgc_tir_bool(m, true)));
	return m;
}

/* Inputs and plain C results of the int8 and bf16 gemms. */
struct lowp {
	enum { LM = 5, LN = 19, LK = 16 } dims;
	uint8_t A8[LM][LK];
	int8_t B8[LK / 4][LN * 4];
	int32_t C8[LM][LN], R8[LM][LN];
	uint16_t Ab[LM][LK], Bb[LK / 2][LN * 2];
	float Cb[LM][LN], Rb[LM][LN];
};

/* Fill the inputs and compute the references. */
static void lowp_init(struct lowp *t)
{
	unsigned s = 5;
	int i, j, k;

	for (i = 0; i < LM; i++)
		for (k = 0; k < LK; k++) {
			t->A8[i][k] = (uint8_t)(rnd(&s) * 100 + 120);
			t->Ab[i][k] = to_bf16(rnd(&s));
		}
	for (k = 0; k < LK; k++)
		for (j = 0; j < LN; j++) {
			t->B8[k / 4][j * 4 + k % 4] = (int8_t)(rnd(&s) * 120);
			t->Bb[k / 2][j * 2 + k % 2] = to_bf16(rnd(&s));
		}
	for (i = 0; i < LM; i++)
		for (j = 0; j < LN; j++) {
			t->R8[i][j] = 7;
			t->Rb[i][j] = 0.5f;
			for (k = 0; k < LK; k++) {
				t->R8[i][j] += t->A8[i][k] * t->B8[k / 4][j * 4 + k % 4];
				t->Rb[i][j] += from_bf16(t->Ab[i][k]) *
					       from_bf16(t->Bb[k / 2][j * 2 + k % 2]);
			}
		}
}

/* int8 and bf16 brgemm, both forms, against plain C. */
static void test_lowp(void)
{
	struct lowp *t = calloc(1, sizeof(*t));
	void *a8[3] = { t->A8, t->B8, t->C8 }, *ab[3] = { t->Ab, t->Bb, t->Cb };
	size_t s8[3] = { sizeof(t->A8), sizeof(t->B8), sizeof(t->C8) };
	size_t sb[3] = { sizeof(t->Ab), sizeof(t->Bb), sizeof(t->Cb) };
	int strd, i, j, bad;

	lowp_init(t);
	for (strd = 0; strd < 2; strd++) {
		bad = 0;
		if (run_both(build_lowp(false, strd, LM, LN, LK), a8, s8, 3, "u8 x s8 gemm")) {
			for (i = 0; i < LM; i++)
				for (j = 0; j < LN; j++)
					bad += t->C8[i][j] != t->R8[i][j];
			is_int(bad, 0, "u8 x s8 -> s32 %s matches plain C", strd ? "brgemm_strd" : "brgemm");
		}
		if (run_both(build_lowp(true, strd, LM, LN, LK), ab, sb, 3, "bf16 gemm"))
			ok(max_err(&t->Cb[0][0], &t->Rb[0][0], LM * LN) < 1e-5,
			   "bf16 %s matches plain C", strd ? "brgemm_strd" : "brgemm");
	}
	free(t);
}

/* copy, copy2d, fill of bools, an extern libm call and a call between functions. */
static struct hgc_tir_module *build_moves(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("moves");
	struct hgc_tir_func *g = hgc_tir_func_new(m, "twice", TY(F32));
	struct hgc_tir_var *gx = hgc_tir_func_add_scalar(g, "x", TY(F32));
	struct hgc_tir_func *f = hgc_tir_func_new(m, "moves", TY(VOID));
	struct hgc_tir_tensor *X = hgc_tir_func_add_tensor(f, "X", TY(F32), 2, (int64_t[]){ 4, 5 });
	struct hgc_tir_tensor *Y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 2, (int64_t[]){ 4, 5 });
	struct hgc_tir_tensor *Z = hgc_tir_func_add_tensor(f, "Z", TY(BOOL), 1, (int64_t[]){ 6 });
	struct hgc_tir_tensor *P = hgc_tir_func_add_tensor(f, "P", TY(F32), 1, (int64_t[]){ 2 });
	struct hgc_tir_expr *cosx;

	hgc_tir_return(m, g->body, hgc_tir_mul(m, V(gx), F32C(2)));
	m->entry = f;
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_COPY, 3,
		hgc_tir_addrv(m, Y, 2, I(0), I(0)), hgc_tir_addrv(m, X, 2, I(0), I(0)), I(20)));
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_COPY2D, 6,
		hgc_tir_addrv(m, Y, 2, I(1), I(1)), hgc_tir_addrv(m, X, 2, I(0), I(0)), I(3), I(2),
		I(5), I(5)));
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_FILL, 3, hgc_tir_addrv(m, Z, 1, I(1)),
						  hgc_tir_bool(m, true), I(4)));
	cosx = hgc_tir_call_extern(m, "cosf", TY(F32), 1,
				   (struct hgc_tir_expr *[]){ LD2(X, I(0), I(1)) });
	ST1(f->body, P, I(0), cosx);
	ST1(f->body, P, I(1), hgc_tir_call(m, g, 1, (struct hgc_tir_expr *[]){
		CAST(F32, LD1(Z, I(2))) }));
	return m;
}

/* Data movement and calls. */
static void test_moves(void)
{
	float x[4][5], y[4][5], p[2];
	uint8_t z[6] = { 9, 9, 9, 9, 9, 9 };
	void *args[4] = { x, y, z, p };
	size_t sizes[4] = { sizeof(x), sizeof(y), sizeof(z), sizeof(p) };
	int i, j, bad = 0;

	for (i = 0; i < 4; i++)
		for (j = 0; j < 5; j++)
			x[i][j] = (float)(10 * i + j);
	if (!run_both(build_moves(), args, sizes, 4, "moves"))
		return;
	for (i = 0; i < 4; i++)
		for (j = 0; j < 5; j++)
			bad += y[i][j] != (i >= 1 && j >= 1 && j <= 2 ? x[i - 1][j - 1] : x[i][j]);
	is_int(bad, 0, "copy then copy2d of a 3x2 block");
	ok(z[0] == 9 && z[1] == 1 && z[4] == 1 && z[5] == 9, "fill writes bools as bytes");
	is_near(p[0], cosf(1), 0, "an extern call reaches libm");
	is_near(p[1], 2, 0, "a call of a module function");
}

/* Y[k, i] = math_k(X[i]) for every math intrinsic, in one loop. */
static struct hgc_tir_module *build_math(int64_t n)
{
	static const int ops[] = { HGC_TIR_I_EXP, HGC_TIR_I_LOG, HGC_TIR_I_SQRT, HGC_TIR_I_TANH,
				   HGC_TIR_I_ERF, HGC_TIR_I_ABS, HGC_TIR_I_FLOOR, HGC_TIR_I_ROUND,
				   HGC_TIR_I_POW };
	struct hgc_tir_module *m = hgc_tir_module_new("math");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "math", TY(VOID));
	struct hgc_tir_tensor *X = hgc_tir_func_add_tensor(f, "X", TY(F32), 1, &n);
	struct hgc_tir_tensor *Y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 2, (int64_t[]){ 9, n });
	struct hgc_tir_tensor *Ai = hgc_tir_func_add_tensor(f, "Ai", TY(S32), 1, &n);
	struct hgc_tir_var *i = ivar(m, "i");
	struct hgc_tir_stmt *b = loop_to(m, f->body, i, n);
	struct hgc_tir_expr *x;
	int k;

	m->entry = f;
	for (k = 0; k < 9; k++) {
		x = LD1(X, V(i));
		if (ops[k] == HGC_TIR_I_LOG || ops[k] == HGC_TIR_I_SQRT || ops[k] == HGC_TIR_I_POW)
			x = hgc_tir_intrinv(m, HGC_TIR_I_ABS, 1, x);
		ST2(b, Y, I(k), V(i), ops[k] == HGC_TIR_I_POW
			? hgc_tir_intrinv(m, HGC_TIR_I_POW, 2, x, F32C(1.5))
			: hgc_tir_intrinv(m, ops[k], 1, x));
	}
	ST1(b, Ai, V(i), hgc_tir_intrinv(m, HGC_TIR_I_ABS, 1, CAST(S32, BIN(MUL, LD1(X, V(i)),
									  F32C(10)))));
	return m;
}

/*
 * How far exp(x) as computed (got) is from expf(x), in units in the last
 * place of the result; a subnormal result within 2^-148 counts as 1; a NaN
 * for a NaN and equal infinities or zeros count as 0.
 */
static double exp_ulps(float got, float x)
{
	float want = expf(x);

	if (isnan(x))
		return isnan(got) ? 0 : 1e9;
	if (got == want)
		return 0;
	if (isinf(want) || isinf(got) || want == 0 || got == 0 || want < 0x1p-126f)
		return fabs((double)got - want) <= 0x1p-148 ? 1 : 1e9;
	return fabs((double)got - want) / (nextafterf(want, INFINITY) - want);
}

/* How far got is from want in units in the last place of want (0 when equal, NaN for NaN). */
static double ulps(float got, float want)
{
	if (isnan(want) || isnan(got))
		return isnan(want) && isnan(got) ? 0 : 1e9;
	if (got == want)
		return 0;
	if (isinf(want) || isinf(got))
		return 1e9;
	return fabs((double)got - want) / (nextafterf(fabsf(want), INFINITY) - fabsf(want));
}

/* Y[i] = op(X[i]). */
static struct hgc_tir_module *build_unary(int op, int64_t n)
{
	struct hgc_tir_module *m = hgc_tir_module_new("unary");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "unary", TY(VOID));
	struct hgc_tir_tensor *X = hgc_tir_func_add_tensor(f, "X", TY(F32), 1, &n);
	struct hgc_tir_tensor *Y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 1, &n);
	struct hgc_tir_var *i = ivar(m, "i");
	struct hgc_tir_stmt *b = loop_to(m, f->body, i, n);

	m->entry = f;
	ST1(b, Y, V(i), hgc_tir_intrinv(m, op, 1, LD1(X, V(i))));
	return m;
}

/*
 * exp is inline code, not expf (so that loops around it vectorize): within
 * 2 ulp of expf over its whole range, overflow to inf, underflow through the
 * subnormals to 0, NaN and the infinities, and the same bits from both
 * backends (the C backend's hgc_expf mirrors it).
 */
static void test_exp(void)
{
	enum { N = 4096 };
	static float X[N], Y[N];
	static const float special[] = { 0, -0.0f, 1, -1, 88.72f, 88.73f, 89, 1000, -87.3f,
					 -100, -103.9f, -104, -1000, 0x1p-30f, -0x1p-30f };
	void *args[2] = { X, Y };
	size_t sizes[2] = { sizeof(X), sizeof(Y) };
	double worst = 0, u;
	int i, nspecial = (int)(sizeof(special) / sizeof(special[0]));

	for (i = 0; i < N; i++)
		X[i] = -110 + 205 * (float)i / N;
	for (i = 0; i < nspecial; i++)
		X[i * 7] = special[i];
	X[1] = NAN;
	X[2] = INFINITY;
	X[3] = -INFINITY;
	if (!run_both(build_unary(HGC_TIR_I_EXP, N), args, sizes, 2, "exp"))
		return;
	for (i = 0; i < N; i++) {
		u = exp_ulps(Y[i], X[i]);
		if (u > worst)
			worst = u;
		if (u > 2)
			diag("exp(%a) = %a, expf says %a", X[i], Y[i], expf(X[i]));
	}
	ok(worst <= 2, "exp over [-110, 95] and specials: within %.2f ulp of expf", worst);
	ok(isnan(Y[1]) && Y[2] == INFINITY && Y[3] == 0, "exp(NaN) is NaN, exp(inf) inf, exp(-inf) 0");
	ok(Y[7 * 6] == INFINITY && Y[7 * 12] == 0, "exp(89) overflows, exp(-1000) is 0");
}

/* exp_nonpos in a loop too short to vectorize: the scalar function, inlined after the
   pipeline, with exp_nonpos_inline's values (flushed below 2^-126). */
static void test_exp_nonpos_short(void)
{
	float X[3] = { -0.5f, -100, -INFINITY }, Y[3];
	void *args[2] = { X, Y };
	size_t sizes[2] = { sizeof(X), sizeof(Y) };

	if (!run_both(build_unary(HGC_TIR_I_EXP_NONPOS, 3), args, sizes, 2, "exp_nonpos of 3"))
		return;
	ok(exp_ulps(Y[0], X[0]) <= 2 && Y[1] == 0 && Y[2] == 0,
	   "exp_nonpos of 3: e^-0.5 within 2 ulp, 0 for -100 and -inf");
}

/* The optimized IR of build_unary(exp_nonpos, n) (malloc'ed), or NULL. */
static char *exp_nonpos_ir(int64_t n)
{
	struct hgc_tir_module *m = build_unary(HGC_TIR_I_EXP_NONPOS, n);
	struct hgc_diag d;
	char *text;

	hgc_diag_init(&d);
	text = llvm_ir_text(m, NULL, &d);
	if (!text)
		diag("%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
	return text;
}

/* After the pipeline no call to the vector-variant functions is left (they are
   inlined and dropped, llvm_vfabi.c); with AVX-512 the widened loop has vscalefps. */
static void test_exp_nonpos_ir(void)
{
	bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
	char *wide = exp_nonpos_ir(4096), *narrow = exp_nonpos_ir(3);

	ok(wide && narrow && !strstr(wide, "hgc.vf.") && !strstr(narrow, "hgc.vf."),
	   "exp_nonpos: no hgc.vf function left in the optimized IR");
	ok(wide && (strstr(wide, "llvm.x86.avx512.mask.scalef.ps") != NULL) == avx512,
	   "exp_nonpos: the widened loop %s vscalefps", avx512 ? "uses" : "does not use");
	free(wide);
	free(narrow);
}

/* Results below 2^-126, where exp_nonpos is 0 or the subnormal, backend by backend. */
static bool both_tiny(int arg, size_t i, float c, float j)
{
	(void)arg, (void)i;
	return fabsf(c) < 0x1p-126f && fabsf(j) < 0x1p-126f;
}

/*
 * exp_nonpos, the exp of softmax's x - max(x) and erf's large branch: for
 * x <= 88, within 2 ulp of expf wherever expf is at least 2^-126 and 0 or
 * the same subnormal below; -inf gives 0, NaN NaN; the same bits from both
 * backends (hgc_expf_nonpos) but below 2^-126.  The loop is long enough to
 * vectorize: with AVX-512 into vscalefps (llvm_vfabi.c's variant, which
 * rounds into the subnormals), else into the vector form of the integer
 * max; a loop of three runs the scalar function inline.
 */
static void test_exp_nonpos(void)
{
	enum { N = 4096 };
	static float X[N], Y[N];
	static const float special[] = { 0, -0.0f, -1, -87.33f, -87.34f, -87.5f, -88, -88.5f,
					 -100, -103.9f, -104, -1000, -0x1p-30f, 0x1p-30f, 1, 88 };
	void *args[2] = { X, Y };
	size_t sizes[2] = { sizeof(X), sizeof(Y) };
	double worst = 0, u;
	int i, flushed = 0, subnormal = 0, bad_tiny = 0;
	int nspecial = (int)(sizeof(special) / sizeof(special[0]));

	for (i = 0; i < N; i++)
		X[i] = -110 + 110 * (float)i / N;
	for (i = 0; i < nspecial; i++)
		X[i * 7] = special[i];
	X[1] = NAN;
	X[3] = -INFINITY;
	if (!run_both_but(build_unary(HGC_TIR_I_EXP_NONPOS, N), args, sizes, 2, "exp_nonpos",
			  both_tiny))
		return;
	for (i = 0; i < N; i++) {
		if (isnan(X[i]) || isinf(X[i]))
			continue;
		if (expf(X[i]) < 0x1p-126f) {
			flushed += Y[i] == 0;
			subnormal += Y[i] != 0;
			bad_tiny += Y[i] != 0 && fabs((double)Y[i] - expf(X[i])) > 0x1p-148;
			continue;
		}
		u = exp_ulps(Y[i], X[i]);
		if (u > worst)
			worst = u;
		if (u > 2)
			diag("exp_nonpos(%a) = %a, expf says %a", X[i], Y[i], expf(X[i]));
	}
	ok(worst <= 2, "exp_nonpos over [-110, 0] and specials up to 88: within %.2f ulp of expf",
	   worst);
	ok(flushed > 100 && bad_tiny == 0,
	   "exp_nonpos below 2^-126: 0 (%d times) or expf's subnormal (%d times, %d wrong)",
	   flushed, subnormal, bad_tiny);
	ok(isnan(Y[1]) && Y[3] == 0 && Y[7 * 11] == 0 && Y[0] == 1 && Y[7] == 1,
	   "exp_nonpos(NaN) is NaN, of -inf and -1000 0, of 0 and -0 1");
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
		ok(subnormal > 100, "AVX-512: the vscalefps variant ran (%d subnormal results)",
		   subnormal);
	else
		ok(subnormal == 0, "no AVX-512: every result below 2^-126 flushed");
	test_exp_nonpos_short();
	test_exp_nonpos_ir();
}

/*
 * erf is inline code too (math_poly.h): within 2 ulp of erff on [-6, 6]
 * (both branches and their seam at |x| = 1 and 4), odd, +-1 beyond, NaN,
 * and the same bits from both backends.
 */
static void test_erf(void)
{
	enum { N = 4096 };
	static float X[N], Y[N];
	void *args[2] = { X, Y };
	size_t sizes[2] = { sizeof(X), sizeof(Y) };
	double worst = 0, u;
	int i, odd = 1;

	for (i = 0; i < N; i++)
		X[i] = -6 + 12 * (float)i / N;
	X[0] = NAN, X[1] = INFINITY, X[2] = -INFINITY, X[3] = 1, X[4] = nextafterf(1, 0);
	X[5] = 4, X[6] = nextafterf(4, 0), X[7] = 0x1p-30f, X[8] = -0.0f, X[9] = 1e-40f;
	if (!run_both(build_unary(HGC_TIR_I_ERF, N), args, sizes, 2, "erf"))
		return;
	for (i = 0; i < N; i++) {
		u = ulps(Y[i], erff(X[i]));
		if (u > worst)
			worst = u;
		if (u > 2)
			diag("erf(%a) = %a, erff says %a", X[i], Y[i], erff(X[i]));
		if (i > 9 && X[N - i] == -X[i])
			odd &= Y[N - i] == -Y[i];
	}
	ok(worst <= 2, "erf over [-6, 6] and specials: within %.2f ulp of erff", worst);
	ok(odd, "erf is odd");
	ok(isnan(Y[0]) && Y[1] == 1 && Y[2] == -1, "erf(NaN) is NaN, erf(+-inf) is +-1");
}

/* Math intrinsics against libm, exactly; round is nearbyint (halves to even). */
static void test_math(void)
{
	enum { N = 12 };
	float X[N] = { 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 3.25f, -7.75f, 0, 1e-3f, -2, 10, 3.5f };
	float Y[9][N];
	int32_t Ai[N];
	void *args[3] = { X, Y, Ai };
	size_t sizes[3] = { sizeof(X), sizeof(Y), sizeof(Ai) };
	int i, bad = 0;

	if (!run_both(build_math(N), args, sizes, 3, "math"))
		return;
	for (i = 0; i < N; i++) {
		float x = X[i], a = fabsf(x);

		bad += exp_ulps(Y[0][i], x) > 2 || Y[1][i] != logf(a) || Y[2][i] != sqrtf(a) ||
		       Y[3][i] != tanhf(x) || ulps(Y[4][i], erff(x)) > 2 || Y[5][i] != a ||
		       Y[6][i] != floorf(x) || Y[7][i] != nearbyintf(x) || Y[8][i] != powf(a, 1.5f) ||
		       Ai[i] != abs((int32_t)(x * 10));
	}
	is_int(bad, 0, "log sqrt tanh abs floor round pow match libm exactly, exp and erf within 2 ulp");
	is_near(Y[7][3], 2, 0, "round(2.5) is 2");
	is_near(Y[7][4], -2, 0, "round(-2.5) is -2");
}

/* The pipeline with the loop unroller on computes the same softmax. */
static void test_unroll(void)
{
	enum { R = 3, C = 97 };
	struct hgc_tir_module *m = build_softmax(R, C);
	struct hgc_codegen_llvm_opts o = { .unroll = true };
	struct hgc_compiled *a, *b;
	struct hgc_diag d;
	float X[R][C], Y1[R][C], Y2[R][C];
	void *a1[2] = { X, Y1 }, *a2[2] = { X, Y2 };
	unsigned s = 9;
	int i;

	for (i = 0; i < R * C; i++)
		X[i / C][i % C] = 4 * rnd(&s);
	hgc_diag_init(&d);
	a = hgc_codegen_llvm_compile(m, NULL, &d);
	b = hgc_codegen_llvm_compile(m, &o, &d);
	ok(a && b, "softmax compiles with and without the loop unroller");
	if (a && b) {
		hgc_codegen_run(a, a1);
		hgc_codegen_run(b, a2);
		ok(!memcmp(Y1, Y2, sizeof(Y1)), "and both compute the same bytes");
	}
	hgc_codegen_free(a);
	hgc_codegen_free(b);
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
}

/* Two modules with the same function names live side by side in the JIT. */
static void test_two_modules(void)
{
	struct hgc_tir_module *m1 = build_softmax(2, 3), *m2 = build_softmax(2, 3);
	struct hgc_compiled *c1 = jit(m1, "a softmax"), *c2 = jit(m2, "another softmax");
	float X[2][3] = { { 1, 2, 3 }, { 0, 0, 0 } }, Y1[2][3], Y2[2][3];
	void *a1[2] = { X, Y1 }, *a2[2] = { X, Y2 };

	if (c1 && c2) {
		hgc_codegen_run(c2, a2);
		hgc_codegen_free(c2);
		c2 = NULL;
		hgc_codegen_run(c1, a1);
		ok(!memcmp(Y1, Y2, sizeof(Y1)) && Y1[1][0] == 1.0f / 3,
		   "both run, and one survives the other's release");
	}
	hgc_codegen_free(c1);
	hgc_codegen_free(c2);
	hgc_tir_module_free(m1);
	hgc_tir_module_free(m2);
}

/* How long a single blocked matmul takes from TIR to callable code. */
static void test_compile_time(void)
{
	struct hgc_tir_module *m = build_matmul(64, 64, 64, 16, 32, 32);
	struct hgc_compiled *c;
	struct hgc_diag d;
	double t0, best = 1e9, t;
	int k;

	hgc_diag_init(&d);
	for (k = 0; k < 3; k++) {
		t0 = hgc_now();
		c = hgc_codegen_llvm_compile(m, NULL, &d);
		t = hgc_now() - t0;
		best = t < best ? t : best;
		hgc_codegen_free(c);
	}
	diag("compiling a blocked matmul (TIR to callable code, O3): %.1f ms (best of 3)",
	     best * 1e3);
	diag("target: %s", hgc_codegen_llvm_target());
	ok(best < 2.0, "a small module compiles in well under 2 s");
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
}

int main(void)
{
	test_matmul(13, 97, 97, 8, 32, 32);
	test_matmul(13, 13, 97, 4, 16, 16);
	test_matmul(5, 3, 16, 8, 8, 32);
	test_eltwise();
	test_softmax();
	pfor2_on(1);
	pfor2_on(2);
	test_pfor_ranges();
	test_lowp();
	test_moves();
	test_math();
	test_exp();
	test_exp_nonpos();
	test_erf();
	test_unroll();
	test_two_modules();
	test_compile_time();
	hgc_codegen_llvm_shutdown();
	return done_testing();
}
