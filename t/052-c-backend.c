/*
 * 052-c-backend: Tensor IR modules emitted as C, compiled with cc, loaded
 * with dlopen and run; results checked against plain C computed here.  Also
 * the error paths: an intrinsic the emitter does not know, a compiler that
 * fails, a symbol that does not resolve, and temporary-file cleanup.
 */
#include "core/codegen/codegen.h"
#include "core/tir/tir.h"
#include "t/tap.h"
#include "t/tir/modules.h"

#include <dirent.h>
#include <omp.h>
#include <unistd.h>

/* A deterministic pseudo-random float in [-1, 1). */
static float rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* Compile m (freed here), or NULL with the diagnostic shown. */
static struct hgc_compiled *build(struct hgc_tir_module *m, const char *what)
{
	struct hgc_diag d;
	struct hgc_compiled *c;

	hgc_diag_init(&d);
	c = hgc_codegen_c_compile(m, NULL, &d);
	ok(c != NULL, "%s compiles", what);
	if (!c)
		diag("%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
	return c;
}

/* The largest relative error of got against want over n values. */
static double max_err(const float *got, const float *want, int64_t n)
{
	double e = 0, x;
	int64_t i;

	for (i = 0; i < n; i++) {
		x = fabs((double)got[i] - want[i]) / (1 + fabs((double)want[i]));
		if (!(x <= e))
			e = x;
	}
	return e;
}

/* The blocked brgemm matmul against a triple loop. */
static void test_matmul(int64_t M, int64_t N, int64_t K, int64_t MB, int64_t NB, int64_t KB)
{
	struct hgc_compiled *c = build(build_matmul(M, N, K, MB, NB, KB), "matmul");
	float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
	float *C = malloc(sizeof(float) * M * N), *R = calloc(M * N, sizeof(float));
	void *args[3] = { A, B, C };
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
	if (c) {
		hgc_codegen_run(c, args);
		ok(max_err(C, R, M * N) < 1e-5, "matmul %lldx%lldx%lld (blocks %lld %lld %lld) is right",
		   (long long)M, (long long)N, (long long)K, (long long)MB, (long long)NB, (long long)KB);
	}
	hgc_codegen_free(c);
	free(A);
	free(B);
	free(C);
	free(R);
}

/* Round an f32 to bf16, nearest even, as the emitted helper must. */
static uint16_t to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

/* Elementwise select, casts, u8 quantization and bf16 rounding. */
static void test_eltwise(void)
{
	enum { R = 7, C = 33 };
	struct hgc_compiled *c = build(build_eltwise(R, C), "eltwise");
	float X[R][C], Y[R][C], J[R][C], r, q;
	int8_t S[C];
	uint8_t Q[R][C];
	uint16_t H[R][C];
	void *args[6] = { X, S, Y, Q, H, J };
	unsigned s = 7;
	int i, j, bad = 0;

	for (j = 0; j < C; j++)
		S[j] = (int8_t)(j * 37 % 17 - 8);
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++)
			X[i][j] = 40 * rnd(&s);
	if (!c)
		return;
	hgc_codegen_run(c, args);
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++) {
			r = X[i][j] > 0 ? X[i][j] * S[j] : X[i][j] * 0.125f;
			q = fmaxf(fminf(nearbyintf(r) + 128, 255), 0);
			bad += Y[i][j] != r || Q[i][j] != (uint8_t)q || H[i][j] != to_bf16(r) ||
			       J[i][j] != (float)(j - C / 2);
		}
	is_int(bad, 0, "eltwise matches plain C element for element");
	hgc_codegen_free(c);
}

/* Row softmax against expf. */
static void test_softmax(void)
{
	enum { R = 5, C = 37 };
	struct hgc_compiled *c = build(build_softmax(R, C), "softmax");
	float X[R][C], Y[R][C], W[R][C], mx, sum;
	void *args[2] = { X, Y };
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
	if (!c)
		return;
	hgc_codegen_run(c, args);
	ok(max_err(&Y[0][0], &W[0][0], R * C) < 1e-6, "softmax matches plain C");
	hgc_codegen_free(c);
}

/* A two-index parallel for on 2 threads; init fills a constant buffer once. */
static void test_pfor(void)
{
	enum { R = 4, C = 6 };
	static const float w[C] = { 1, -2, 0.5f, 3, 0, 1.25f };
	struct hgc_compiled *c = build(build_pfor2(R, C, w), "pfor2");
	int64_t T[R][C];
	float O[R][C], scale = 2, v;
	void *args[3] = { T, O, &scale };
	int i, j, bad = 0, seen[2] = { 0, 0 }, other = 0;

	if (!c)
		return;
	omp_set_num_threads(2);
	hgc_codegen_run(c, args);
	ok(c->inited, "the first run ran init");
	scale = 3;
	hgc_codegen_run(c, args);
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++) {
			v = scale * w[j] * w[j] + (float)(i * C + j);
			bad += O[i][j] != (i == j ? -v : v);
			if (T[i][j] == 0 || T[i][j] == 1)
				seen[T[i][j]]++;
			else
				other++;
		}
	is_int(bad, 0, "the parallel for computed every element, with the scalar argument");
	ok(seen[0] && seen[1] && !other, "two threads shared the iterations (%d and %d)", seen[0],
	   seen[1]);
	hgc_codegen_free(c);
}

/*
 * C[M, N] = A[M, K] * B[K, N] in int8 (u8 x s8 -> s32, B packed by 4 k) or
 * bf16 (B packed by 2 k, f32 C) with one brgemm_strd call and a fill of C
 * beforehand (the call accumulates into it).
 */
static struct hgc_tir_module *build_lowp(bool bf16, int64_t M, int64_t N, int64_t K)
{
	struct hgc_tir_module *m = hgc_tir_module_new("lowp");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "gemm", TY(VOID));
	int64_t p = bf16 ? 2 : 4;
	struct hgc_tir_tensor *A = hgc_tir_func_add_tensor(f, "A", bf16 ? TY(BF16) : TY(U8), 2,
							   (int64_t[]){ M, K });
	struct hgc_tir_tensor *B = hgc_tir_func_add_tensor(f, "B", bf16 ? TY(BF16) : TY(S8), 2,
							   (int64_t[]){ K / p, N * p });
	struct hgc_tir_tensor *C = hgc_tir_func_add_tensor(f, "C", bf16 ? TY(F32) : TY(S32), 2,
							   (int64_t[]){ M, N });

	m->entry = f;
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_FILL, 3,
		hgc_tir_addrv(m, C, 2, I(0), I(0)),
		bf16 ? hgc_tir_f32(m, 0.5) : hgc_tir_int(m, HGC_TIR_S32, 7), I(M * N)));
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_BRGEMM_STRD, 13,
		hgc_tir_addrv(m, A, 2, I(0), I(0)), hgc_tir_addrv(m, B, 2, I(0), I(0)),
		hgc_tir_addrv(m, C, 2, I(0), I(0)), I(1), I(0), I(0), I(M), I(N), I(K), I(K),
		I(N * p), I(N), hgc_tir_bool(m, true)));
	return m;
}

/* The int8 and bf16 brgemm intrinsics against plain C. */
static void test_lowp(void)
{
	enum { M = 5, N = 19, K = 12 };
	uint8_t A8[M][K];
	int8_t B8[K / 4][N * 4];
	int32_t C8[M][N], R8[M][N];
	uint16_t Ab[M][K], Bb[K / 2][N * 2];
	float Cb[M][N], Rb[M][N], a, b;
	void *a8[3] = { A8, B8, C8 }, *ab[3] = { Ab, Bb, Cb };
	struct hgc_compiled *c;
	int i, j, k, bad = 0;
	unsigned s = 5;

	for (i = 0; i < M; i++)
		for (k = 0; k < K; k++) {
			A8[i][k] = (uint8_t)(rnd(&s) * 100 + 120);
			Ab[i][k] = to_bf16(rnd(&s));
		}
	for (k = 0; k < K; k++)
		for (j = 0; j < N; j++) {
			B8[k / 4][j * 4 + k % 4] = (int8_t)(rnd(&s) * 120);
			Bb[k / 2][j * 2 + k % 2] = to_bf16(rnd(&s));
		}
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			R8[i][j] = 7;
			Rb[i][j] = 0.5f;
			for (k = 0; k < K; k++) {
				R8[i][j] += A8[i][k] * B8[k / 4][j * 4 + k % 4];
				a = 0, b = 0;
				memcpy((char *)&a + 2, &Ab[i][k], 2);
				memcpy((char *)&b + 2, &Bb[k / 2][j * 2 + k % 2], 2);
				Rb[i][j] += a * b;
			}
		}
	c = build(build_lowp(false, M, N, K), "u8 x s8 gemm");
	if (c) {
		hgc_codegen_run(c, a8);
		for (i = 0; i < M; i++)
			for (j = 0; j < N; j++)
				bad += C8[i][j] != R8[i][j];
		is_int(bad, 0, "u8 x s8 -> s32 brgemm_strd after fill matches plain C");
	}
	hgc_codegen_free(c);
	c = build(build_lowp(true, M, N, K), "bf16 gemm");
	if (c) {
		hgc_codegen_run(c, ab);
		ok(max_err(&Cb[0][0], &Rb[0][0], M * N) < 1e-5, "bf16 brgemm_strd matches plain C");
	}
	hgc_codegen_free(c);
}

/* copy, copy2d, fill of bool storage, an extern libm call and a call between functions. */
static void test_moves(void)
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
	struct hgc_compiled *c;
	float x[4][5], y[4][5], p[2];
	uint8_t z[6] = { 9, 9, 9, 9, 9, 9 };
	void *args[4] = { x, y, z, p };
	int i, j, bad = 0;

	hgc_tir_return(m, g->body, hgc_tir_mul(m, V(gx), hgc_tir_f32(m, 2)));
	m->entry = f;
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_COPY, 3, hgc_tir_addrv(m, Y, 2, I(0), I(0)),
						  hgc_tir_addrv(m, X, 2, I(0), I(0)), I(20)));
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_COPY2D, 6,
		hgc_tir_addrv(m, Y, 2, I(1), I(1)), hgc_tir_addrv(m, X, 2, I(0), I(0)), I(3), I(2),
		I(5), I(5)));
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_FILL, 3, hgc_tir_addrv(m, Z, 1, I(1)),
						  hgc_tir_bool(m, true), I(4)));
	cosx = hgc_tir_call_extern(m, "cosf", TY(F32), 1,
				   (struct hgc_tir_expr *[]){ hgc_tir_loadv(m, X, 2, I(0), I(0)) });
	hgc_tir_storev(m, f->body, P, cosx, 1, I(0));
	hgc_tir_storev(m, f->body, P, hgc_tir_call(m, g, 1, (struct hgc_tir_expr *[]){
		hgc_tir_cast(m, TY(F32), hgc_tir_loadv(m, Z, 1, I(2))) }), 1, I(1));
	for (i = 0; i < 4; i++)
		for (j = 0; j < 5; j++)
			x[i][j] = (float)(10 * i + j);
	c = build(m, "moves");
	if (!c)
		return;
	hgc_codegen_run(c, args);
	for (i = 0; i < 4; i++)
		for (j = 0; j < 5; j++)
			bad += y[i][j] != (i >= 1 && j >= 1 && j <= 2 ? x[i - 1][j - 1] : x[i][j]);
	is_int(bad, 0, "copy then copy2d of a 3x2 block");
	ok(z[0] == 9 && z[1] == 1 && z[4] == 1 && z[5] == 9, "fill writes bools as bytes");
	is_near(p[0], cosf(0), 0, "an extern call reaches libm");
	is_near(p[1], 2, 0, "a call of a module function");
	hgc_codegen_free(c);
}

/*
 * Dynamic shapes: X and Y are [n, 3] for a scalar n; a dynamic local and a
 * big static local live on the heap; a loop end that the body changes is
 * read once; a helper returns early from inside a block holding a heap
 * tensor.  Y[i, j] = X[i, j] + last, where last = pick(n) = n - 1.
 */
static struct hgc_tir_module *build_dynamic(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("dyn");
	struct hgc_tir_func *g = hgc_tir_func_new(m, "pick", TY(F32));
	struct hgc_tir_var *gn = hgc_tir_func_add_scalar(g, "gn", TY(INDEX));
	struct hgc_tir_func *f = hgc_tir_func_new(m, "dyn", TY(VOID));
	struct hgc_tir_var *n = hgc_tir_func_add_scalar(f, "n", TY(INDEX));
	struct hgc_tir_expr *dims[2] = { V(n), I(3) };
	struct hgc_tir_tensor *X = hgc_tir_tensor_new(m, "X", TY(F32), HGC_TIR_GLOBAL, 2, dims);
	struct hgc_tir_tensor *Y = hgc_tir_tensor_new(m, "Y", TY(F32), HGC_TIR_GLOBAL, 2, dims);
	struct hgc_tir_tensor *T = hgc_tir_tensor_new(m, "tmp", TY(F32), HGC_TIR_LOCAL, 2, dims);
	struct hgc_tir_tensor *big = hgc_tir_tensor_newc(m, "big", TY(F32), HGC_TIR_LOCAL, 1,
							 (int64_t[]){ 8192 });
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j"), *cnt = ivar(m, "cnt");
	struct hgc_tir_var *last = hgc_tir_var_new(m, "last", TY(F32));
	struct hgc_tir_stmt *b, *c;

	hgc_tir_def_tensor(m, g->body, big);
	hgc_tir_storev(m, g->body, big, hgc_tir_cast(m, TY(F32), hgc_tir_sub(m, V(gn), I(1))), 1,
		       I(8191));
	c = hgc_tir_if(m, g->body, hgc_tir_binary(m, HGC_TIR_GT, V(gn), I(0)), false);
	hgc_tir_return(m, hgc_tir_body(c), hgc_tir_loadv(m, big, 1, I(8191)));
	hgc_tir_return(m, g->body, hgc_tir_f32(m, -1));

	hgc_tir_func_add_tensor_param(f, X);
	hgc_tir_func_add_tensor_param(f, Y);
	m->entry = f;
	hgc_tir_def_tensor(m, f->body, T);
	hgc_tir_let(m, f->body, last, hgc_tir_call(m, g, 1, (struct hgc_tir_expr *[]){ V(n) }));
	b = loop_to(m, f->body, j, 3);
	hgc_tir_let(m, b, cnt, V(n));
	b = hgc_tir_body(hgc_tir_for(m, b, i, I(0), V(cnt), NULL));
	hgc_tir_storev(m, b, T, hgc_tir_add(m, hgc_tir_loadv(m, X, 2, V(i), V(j)), V(last)), 2,
		       V(i), V(j));
	hgc_tir_assign(m, b, cnt, hgc_tir_sub(m, V(cnt), I(1)));
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_COPY, 3,
		hgc_tir_addrv(m, Y, 2, I(0), I(0)), hgc_tir_addrv(m, T, 2, I(0), I(0)),
		hgc_tir_mul(m, V(n), I(3))));
	return m;
}

/* Dynamic shapes and heap locals run right for two sizes of one compiled module. */
static void test_dynamic(void)
{
	struct hgc_compiled *c = build(build_dynamic(), "dynamic shapes");
	float X[50][3], Y[50][3];
	int64_t n;
	void *args[3] = { &n, X, Y };
	int i, j, bad = 0;

	for (i = 0; i < 50; i++)
		for (j = 0; j < 3; j++)
			X[i][j] = (float)(i * 3 + j);
	if (!c)
		return;
	for (n = 7; n <= 50; n += 43) {
		memset(Y, 0, sizeof(Y));
		hgc_codegen_run(c, args);
		for (i = 0; i < 50; i++)
			for (j = 0; j < 3; j++)
				bad += Y[i][j] != (i < n ? X[i][j] + (float)(n - 1) : 0);
	}
	is_int(bad, 0, "n = 7 and n = 50 through one compiled module");
	hgc_codegen_free(c);
}

/* The emitted text has the OpenMP pragma and the entry points. */
static void test_emit_text(void)
{
	static const float w[2] = { 1, 2 };
	struct hgc_tir_module *m = build_pfor2(2, 2, w);
	struct hgc_diag d;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	hgc_diag_init(&d);
	is_int(hgc_codegen_c_emit(f, m, &d), 0, "emit succeeds");
	fclose(f);
	ok(strstr(text, "#pragma omp parallel for schedule(static) collapse(2)\n"),
	   "a two-index parallel for becomes omp parallel for collapse(2)");
	ok(strstr(text, "void hgc_entry(void **args)") && strstr(text, "void hgc_init(void **args)"),
	   "entry and init wrappers are emitted");
	ok(strstr(text, "main_1((int64_t *)args[0], (float *)args[1], *(float *)args[2]);"),
	   "the entry unpacks tensors and scalars from args");
	ok(strstr(text, "#include") > strstr(text, "#else\n"),
	   "headers are only a fallback for compilers without __INT8_TYPE__");
	free(text);
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
}

/* A module whose entry writes Y[0] through an unknown intrinsic or symbol. */
static struct hgc_tir_module *build_bad(int op, const char *sym)
{
	struct hgc_tir_module *m = hgc_tir_module_new("bad");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "f", TY(VOID));
	struct hgc_tir_tensor *Y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 1, (int64_t[]){ 1 });
	struct hgc_tir_expr *e;

	m->entry = f;
	if (sym) {
		e = hgc_tir_call_extern(m, sym, TY(F32), 0, NULL);
	} else {
		e = hgc_tir_intrinv(m, HGC_TIR_I_EXP, 1, hgc_tir_f32(m, 1));
		e->op = op;
	}
	hgc_tir_storev(m, f->body, Y, e, 1, I(0));
	hgc_tir_let(m, f->body, hgc_tir_var_new(m, "unused", TY(F32)), hgc_tir_f32(m, 0));
	return m;
}

/* Errors: emitter, verifier, compiler, loader; no crash, a diagnostic each. */
static void test_errors(void)
{
	struct hgc_tir_module *m = build_bad(999, NULL);
	struct hgc_codegen_c_opts o = { NULL, "-Werror=unused-variable", false };
	struct hgc_diag d;
	FILE *null = fopen("/dev/null", "w");

	hgc_diag_init(&d);
	is_int(hgc_codegen_c_emit(null, m, &d), -1, "the emitter refuses an unknown intrinsic");
	is_str(hgc_diag_text(&d), "hgc: error: c backend: in 'f': unknown intrinsic #999\n",
	       "and says which");
	hgc_diag_release(&d);
	hgc_diag_init(&d);
	ok(!hgc_codegen_c_compile(m, NULL, &d), "compiling it fails");
	is_str(hgc_diag_text(&d), "hgc: error: in 'f': unknown intrinsic #999\n",
	       "with the verifier's message");
	hgc_diag_release(&d);
	hgc_tir_module_free(m);

	m = build_bad(0, "llvm.sqrt.f32");
	hgc_diag_init(&d);
	ok(!hgc_codegen_c_compile(m, NULL, &d), "a symbol C cannot name fails the compile");
	is_str(hgc_diag_text(&d), "hgc: error: c backend: external symbol 'llvm.sqrt.f32' is not "
	       "a C identifier\n", "before the compiler runs");
	hgc_diag_release(&d);
	hgc_tir_module_free(m);

	m = build_bad(0, "cosf");
	hgc_diag_init(&d);
	ok(!hgc_codegen_c_compile(m, &o, &d), "a compiler error fails the compile");
	ok(strstr(hgc_diag_text(&d), "c backend: the C compiler failed (exit status 1): ") &&
	   strstr(hgc_diag_text(&d), "unused variable"), "the diagnostic carries cc's message");
	hgc_diag_release(&d);
	o = (struct hgc_codegen_c_opts){ "/nonexistent/cc", NULL, false };
	hgc_diag_init(&d);
	ok(!hgc_codegen_c_compile(m, &o, &d), "a missing compiler fails the compile");
	ok(strstr(hgc_diag_text(&d), "the C compiler failed (exit status 127): /nonexistent/cc"),
	   "and says so");
	hgc_diag_release(&d);
	hgc_tir_module_free(m);

	m = build_bad(0, "hgc_test_no_such_symbol");
	hgc_diag_init(&d);
	ok(!hgc_codegen_c_compile(m, NULL, &d), "an unresolved symbol fails the load");
	ok(strstr(hgc_diag_text(&d), "cannot load the compiled module") &&
	   strstr(hgc_diag_text(&d), "hgc_test_no_such_symbol"), "naming the symbol");
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
	fclose(null);
}

/* Count the entries of a directory other than . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* Temporary files go away, unless kept on request. */
static void test_cleanup(void)
{
	char tmp[] = "/tmp/hgc-052-XXXXXX", path[512];
	struct hgc_codegen_c_opts keep = { NULL, NULL, true };
	struct hgc_compiled *c;
	struct hgc_diag d;
	struct hgc_tir_module *m;
	const char *old = getenv("TMPDIR");
	char *saved = old ? strdup(old) : NULL;

	if (!mkdtemp(tmp))
		return;
	setenv("TMPDIR", tmp, 1);
	hgc_codegen_free(build(build_softmax(2, 3), "softmax in a private TMPDIR"));
	is_int(entries(tmp), 0, "compiling leaves no temporary files");
	m = build_bad(0, "nothing_here_at_all");
	hgc_diag_init(&d);
	hgc_codegen_c_compile(m, NULL, &d);
	is_int(entries(tmp), 0, "a failed load leaves no temporary files either");
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
	m = build_softmax(2, 3);
	hgc_diag_init(&d);
	c = hgc_codegen_c_compile(m, &keep, &d);
	ok(c && c->dir && entries(c->dir) == 3, "keep leaves module.c, module.so and cc.log");
	if (c && c->dir) {
		snprintf(path, sizeof(path), "rm -rf '%s'", c->dir);
		ok(system(path) == 0, "removed the kept directory");
	}
	hgc_codegen_free(c);
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
	rmdir(tmp);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
}

int main(void)
{
	test_matmul(13, 97, 97, 8, 32, 32);
	test_matmul(13, 13, 97, 4, 16, 16);
	test_matmul(32, 64, 64, 16, 32, 32);
	test_matmul(5, 3, 16, 8, 8, 32);
	test_eltwise();
	test_softmax();
	test_pfor();
	test_lowp();
	test_moves();
	test_dynamic();
	test_emit_text();
	test_errors();
	test_cleanup();
	return done_testing();
}
