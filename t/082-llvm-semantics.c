/*
 * 082-llvm-semantics: the corners of the Tensor IR's meaning through the
 * LLVM backend, each against plain C and the C backend: integer division
 * and remainder of negatives, s8/u8 wrap-around, saturating float-to-int
 * casts, bf16 rounding (ties to even, NaN, overflow), loops with steps,
 * empty ranges and early returns, local tensors on the stack and in scratch
 * memory (also inside a parallel for and with dynamic sizes), selects
 * and && that must not evaluate the side they do not take, the tree of
 * halves of lanes_add/mul/max/min (NaN, infinities, signed zeros), and
 * parameters that overlap (the scoped-noalias metadata keeps them may-alias).
 */
#include "t/llvm_check.h"

#include <limits.h>
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

enum { N = 16 };

/* The integer and cast inputs. */
static const int32_t A0[N] = { 7, -7, 7, -7, 100, -100, 0, 5, 2147483647, -2147483647, 13, -1,
			       255, 256, -129, 1000 };
static const int32_t B0[N] = { 2, 2, -2, -2, 7, 7, 3, -5, 2, 3, -13, 1, 1, 3, 10, -33 };
static const uint8_t X0[N] = { 0, 1, 7, 100, 127, 128, 200, 201, 255, 254, 13, 99, 150, 6, 14, 77 };
static const int8_t S0[N] = { 0, 1, -1, 127, -128, 64, -64, 100, -100, 5, -5, 33, -33, 2, -2, 9 };
static float F0[N];

/* The float inputs: NaN, infinities, out of range, fractions, signed zeros. */
static void init_floats(void)
{
	static const float v[N] = { 2.7f, -2.7f, 255.5f, -0.5f, 127.9f, -128.9f, 3e9f, -3e9f,
				    1e20f, 0.0f, -0.0f, 0.5f, 300, 0, 0, 0 };

	memcpy(F0, v, sizeof(F0));
	F0[13] = NAN;
	F0[14] = INFINITY;
	F0[15] = -INFINITY;
}

/* C's float-to-integer conversions made total the way both backends are. */
static int64_t sat(float x, double lo, double hi)
{
	if (x != x)
		return 0;
	if (x <= lo)
		return (int64_t)lo;
	if (x >= hi)
		return (int64_t)hi;
	return (int64_t)x;
}

/* Integer arithmetic and casts, one output column each. */
static struct hgc_tir_module *build_ints(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("ints");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "ints", TY(VOID));
	int64_t n = N;
	struct hgc_tir_tensor *A = hgc_tir_func_add_tensor(f, "A", TY(S32), 1, &n);
	struct hgc_tir_tensor *B = hgc_tir_func_add_tensor(f, "B", TY(S32), 1, &n);
	struct hgc_tir_tensor *X = hgc_tir_func_add_tensor(f, "X", TY(U8), 1, &n);
	struct hgc_tir_tensor *S = hgc_tir_func_add_tensor(f, "S", TY(S8), 1, &n);
	struct hgc_tir_tensor *F = hgc_tir_func_add_tensor(f, "F", TY(F32), 1, &n);
	struct hgc_tir_tensor *O32 = hgc_tir_func_add_tensor(f, "O32", TY(S32), 2, (int64_t[]){ N, 8 });
	struct hgc_tir_tensor *OI = hgc_tir_func_add_tensor(f, "OI", TY(INDEX), 2, (int64_t[]){ N, 6 });
	struct hgc_tir_tensor *OU = hgc_tir_func_add_tensor(f, "OU", TY(U8), 2, (int64_t[]){ N, 6 });
	struct hgc_tir_tensor *OS = hgc_tir_func_add_tensor(f, "OS", TY(S8), 2, (int64_t[]){ N, 4 });
	struct hgc_tir_tensor *OB = hgc_tir_func_add_tensor(f, "OB", TY(BOOL), 2, (int64_t[]){ N, 3 });
	struct hgc_tir_var *i = ivar(m, "i");
	struct hgc_tir_stmt *b = loop_to(m, f->body, i, N);
	struct hgc_tir_expr *a = LD1(A, V(i)), *bb = LD1(B, V(i)), *x = LD1(X, V(i)),
			    *s = LD1(S, V(i)), *fl = LD1(F, V(i)), *d = BIN(SUB, V(i), I(7));
	struct hgc_tir_expr *o32[8] = {
		BIN(DIV, a, bb), BIN(MOD, a, bb), CAST(S32, fl), CAST(S32, BIN(GT, a, bb)),
		hgc_tir_intrinv(m, HGC_TIR_I_ABS, 1, a), BIN(MIN, a, bb), BIN(MAX, a, bb),
		BIN(ADD, CAST(S32, CAST(INDEX, x)), CAST(S32, s)),
	};
	struct hgc_tir_expr *oi[6] = {
		BIN(DIV, d, I(3)), BIN(MOD, d, I(3)), BIN(DIV, d, I(-3)), BIN(MOD, d, I(-3)),
		CAST(INDEX, s), CAST(INDEX, fl),
	};
	struct hgc_tir_expr *ou[6] = {
		BIN(DIV, x, hgc_tir_int(m, HGC_TIR_U8, 7)), BIN(MOD, x, hgc_tir_int(m, HGC_TIR_U8, 7)),
		CAST(U8, fl), BIN(ADD, x, x), BIN(MIN, x, hgc_tir_int(m, HGC_TIR_U8, 100)), CAST(U8, a),
	};
	struct hgc_tir_expr *os[4] = {
		BIN(DIV, s, hgc_tir_int(m, HGC_TIR_S8, -1)), BIN(ADD, s, s), CAST(S8, fl),
		hgc_tir_unary(m, HGC_TIR_NEG, s),
	};
	struct hgc_tir_expr *ob[3] = {
		BIN(GT, x, hgc_tir_int(m, HGC_TIR_U8, 200)), CAST(BOOL, fl),
		BIN(OR, hgc_tir_unary(m, HGC_TIR_NOT, BIN(EQ, a, bb)),
		    BIN(LT, s, hgc_tir_int(m, HGC_TIR_S8, 0))),
	};
	int k;

	m->entry = f;
	for (k = 0; k < 8; k++)
		ST2(b, O32, V(i), I(k), o32[k]);
	for (k = 0; k < 6; k++)
		ST2(b, OI, V(i), I(k), oi[k]);
	for (k = 0; k < 6; k++)
		ST2(b, OU, V(i), I(k), ou[k]);
	for (k = 0; k < 4; k++)
		ST2(b, OS, V(i), I(k), os[k]);
	for (k = 0; k < 3; k++)
		ST2(b, OB, V(i), I(k), ob[k]);
	return m;
}

/* The outputs of build_ints. */
struct ints {
	int32_t a[N], b[N];
	uint8_t x[N];
	int8_t s[N];
	float f[N];
	int32_t o32[N][8];
	int64_t oi[N][6];
	uint8_t ou[N][6];
	int8_t os[N][4];
	uint8_t ob[N][3];
};

/* Count the outputs of row i that differ from C's answers. */
static int ints_row_bad(const struct ints *t, int i)
{
	int32_t a = t->a[i], b = t->b[i], x = t->x[i], s = t->s[i];
	float f = t->f[i];
	int64_t d = i - 7;
	int bad = 0;

	bad += t->o32[i][0] != a / b || t->o32[i][1] != a % b;
	bad += t->o32[i][2] != (int32_t)sat(f, INT32_MIN, INT32_MAX);
	bad += t->o32[i][3] != (a > b) || t->o32[i][4] != (a < 0 ? -a : a);
	bad += t->o32[i][5] != (a < b ? a : b) || t->o32[i][6] != (a > b ? a : b);
	bad += t->o32[i][7] != x + s;
	bad += t->oi[i][0] != d / 3 || t->oi[i][1] != d % 3 || t->oi[i][2] != d / -3 ||
	       t->oi[i][3] != d % -3 || t->oi[i][4] != s ||
	       t->oi[i][5] != sat(f, (double)INT64_MIN, (double)INT64_MAX);
	bad += t->ou[i][0] != x / 7 || t->ou[i][1] != x % 7 || t->ou[i][2] != sat(f, 0, 255) ||
	       t->ou[i][3] != (uint8_t)(x + x) || t->ou[i][4] != (x < 100 ? x : 100) ||
	       t->ou[i][5] != (uint8_t)a;
	bad += t->os[i][0] != (int8_t)(s / -1) || t->os[i][1] != (int8_t)(s + s) ||
	       t->os[i][2] != sat(f, -128, 127) || t->os[i][3] != (int8_t)-s;
	bad += t->ob[i][0] != (x > 200) || t->ob[i][1] != (f != 0) || t->ob[i][2] != (a != b || s < 0);
	return bad;
}

/* Division and remainder of negatives, wrap-around, saturating casts, as in C. */
static void test_ints(void)
{
	struct ints *t = calloc(1, sizeof(*t));
	void *args[10] = { t->a, t->b, t->x, t->s, t->f, t->o32, t->oi, t->ou, t->os, t->ob };
	size_t sizes[10] = { sizeof(t->a), sizeof(t->b), sizeof(t->x), sizeof(t->s), sizeof(t->f),
			     sizeof(t->o32), sizeof(t->oi), sizeof(t->ou), sizeof(t->os),
			     sizeof(t->ob) };
	int i, bad = 0;

	memcpy(t->a, A0, sizeof(A0));
	memcpy(t->b, B0, sizeof(B0));
	memcpy(t->x, X0, sizeof(X0));
	memcpy(t->s, S0, sizeof(S0));
	memcpy(t->f, F0, sizeof(F0));
	if (run_both(build_ints(), args, sizes, 10, "integer arithmetic")) {
		for (i = 0; i < N; i++)
			bad += ints_row_bad(t, i);
		is_int(bad, 0, "s32, index, u8, s8 and bool arithmetic and casts match C");
		is_int(t->oi[0][0], -2, "(0 - 7) / 3 truncates toward zero");
		is_int(t->oi[0][1], -1, "(0 - 7) %% 3 takes the dividend's sign");
		is_int(t->os[4][0], -128, "s8 -128 / -1 is -128, as C computes it in int");
		is_int(t->o32[13][2], 0, "NaN to s32 is 0");
		is_int(t->ou[6][2], 255, "3e9 to u8 saturates");
	}
	free(t);
}

/* bf16: H = (bf16)X, F = (f32)H[i] (loaded back), Bo = (bool)H, Si = (s32)H,
   HK = (bf16)K, and the bf16 scalar p stored into Q[0] when i is 0. */
static struct hgc_tir_module *build_bf16(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("bf16");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "bf16", TY(VOID));
	int64_t n = N;
	struct hgc_tir_tensor *X = hgc_tir_func_add_tensor(f, "X", TY(F32), 1, &n);
	struct hgc_tir_tensor *K = hgc_tir_func_add_tensor(f, "K", TY(S32), 1, &n);
	struct hgc_tir_tensor *H = hgc_tir_func_add_tensor(f, "H", TY(BF16), 1, &n);
	struct hgc_tir_tensor *F = hgc_tir_func_add_tensor(f, "F", TY(F32), 1, &n);
	struct hgc_tir_tensor *Bo = hgc_tir_func_add_tensor(f, "Bo", TY(BOOL), 1, &n);
	struct hgc_tir_tensor *Si = hgc_tir_func_add_tensor(f, "Si", TY(S32), 1, &n);
	struct hgc_tir_tensor *HK = hgc_tir_func_add_tensor(f, "HK", TY(BF16), 1, &n);
	struct hgc_tir_tensor *Q = hgc_tir_func_add_tensor(f, "Q", TY(BF16), 1, (int64_t[]){ 1 });
	struct hgc_tir_var *p = hgc_tir_func_add_scalar(f, "p", TY(BF16));
	struct hgc_tir_var *i = ivar(m, "i"), *h = hgc_tir_var_new(m, "h", TY(BF16));
	struct hgc_tir_stmt *b = loop_to(m, f->body, i, N), *c;

	m->entry = f;
	ST1(b, H, V(i), CAST(BF16, LD1(X, V(i))));
	hgc_tir_let(m, b, h, LD1(H, V(i)));
	ST1(b, F, V(i), CAST(F32, V(h)));
	ST1(b, Bo, V(i), CAST(BOOL, V(h)));
	ST1(b, Si, V(i), CAST(S32, V(h)));
	ST1(b, HK, V(i), CAST(BF16, LD1(K, V(i))));
	c = hgc_tir_if(m, b, BIN(EQ, V(i), I(0)), false);
	ST1(hgc_tir_body(c), Q, I(0), hgc_tir_select(m, BIN(GT, V(i), I(5)), V(h), V(p)));
	return m;
}

/* Rounding to nearest even, NaN, infinities, overflow and subnormals. */
static void test_bf16(void)
{
	float X[N] = { 1.0f, 1 + 0x1p-8f, 1 + 0x3p-8f, 1 + 0x1p-8f + 0x1p-20f, 0, -0.0f,
		       3.4e38f, -2.5e-3f, 1e-40f, 65504, -1 - 0x1p-8f, 0.1f, 0, 0, 0, 0 };
	int32_t K[N] = { 16777217, 255, -1, 2147483647, 3, 257, -257, 1 << 20, 0, 1, 2, 3, 4, 5, 6, 7 };
	uint16_t H[N], HK[N], Q[1] = { 0 }, p = 0x4049; /* 3.140625 */
	float F[N];
	uint8_t Bo[N];
	int32_t Si[N];
	void *args[9] = { X, K, H, F, Bo, Si, HK, Q, &p };
	size_t sizes[9] = { sizeof(X), sizeof(K), sizeof(H), sizeof(F), sizeof(Bo), sizeof(Si),
			    sizeof(HK), sizeof(Q), sizeof(p) };
	int i, bad = 0;

	X[12] = NAN;
	X[13] = fbits(0x7f800001);	/* signalling NaN */
	X[14] = INFINITY;
	X[15] = -INFINITY;
	if (!run_both(build_bf16(), args, sizes, 9, "bf16"))
		return;
	for (i = 0; i < N; i++)
		bad += H[i] != to_bf16(X[i]) || memcmp(&F[i], &(float){ from_bf16(H[i]) }, 4) ||
		       Bo[i] != (from_bf16(H[i]) != 0) ||
		       Si[i] != (int32_t)sat(from_bf16(H[i]), INT32_MIN, INT32_MAX) ||
		       HK[i] != to_bf16((float)K[i]);
	is_int(bad, 0, "bf16 stores round like C's reference and load back exactly");
	is_int(H[1], 0x3f80, "a tie rounds to even (down)");
	is_int(H[2], 0x3f82, "a tie rounds to even (up)");
	is_int(H[3], 0x3f81, "just above a tie rounds up");
	is_int(H[6], 0x7f80, "the largest float rounds to infinity");
	is_int(H[13], 0x7fc0, "a signalling NaN stays a (quiet) NaN");
	is_int(Q[0], 0x4049, "a bf16 scalar parameter passes through");
}

/* index first_square(x): the first i in [0, 100) with i * i > x (plus big[last], 1),
   returning from inside the loop with a scratch tensor open; else -1.  direct:
   the return value reads the scratch tensor itself (the C backend frees it
   first, so only the JIT runs that form); else through a let. */
static struct hgc_tir_func *build_first_square(struct hgc_tir_module *m, bool direct)
{
	struct hgc_tir_func *g = hgc_tir_func_new(m, "first_square", TY(INDEX));
	struct hgc_tir_var *x = hgc_tir_func_add_scalar(g, "x", TY(INDEX)), *i = ivar(m, "i");
	struct hgc_tir_var *r = ivar(m, "r");
	struct hgc_tir_tensor *big = hgc_tir_tensor_newc(m, "big", TY(F32), HGC_TIR_LOCAL, 1,
							 (int64_t[]){ 30000 });
	struct hgc_tir_expr *v;
	struct hgc_tir_stmt *b, *c;

	hgc_tir_def_tensor(m, g->body, big);
	ST1(g->body, big, I(29999), F32C(1));
	b = loop_to(m, g->body, i, 100);
	c = hgc_tir_if(m, b, BIN(GT, BIN(MUL, V(i), V(i)), V(x)), false);
	v = BIN(ADD, V(i), CAST(INDEX, LD1(big, I(29999))));
	if (!direct) {
		hgc_tir_let(m, hgc_tir_body(c), r, v);
		v = V(r);
	}
	hgc_tir_return(m, hgc_tir_body(c), v);
	hgc_tir_return(m, g->body, I(-1));
	return g;
}

/* The direct form through the JIT alone: the value is read before the scratch is freed. */
static void test_return_scratch(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("ret");
	struct hgc_tir_func *g = build_first_square(m, true);
	struct hgc_tir_func *f = hgc_tir_func_new(m, "f", TY(VOID));
	struct hgc_tir_tensor *O = hgc_tir_func_add_tensor(f, "O", TY(INDEX), 1, (int64_t[]){ 1 });
	struct hgc_compiled *c;
	int64_t o[1] = { 0 };
	void *args[1] = { o };

	m->entry = f;
	ST1(f->body, O, I(0), hgc_tir_call(m, g, 1, (struct hgc_tir_expr *[]){ I(30) }));
	c = jit(m, "a return of a value read from scratch memory");
	if (c)
		hgc_codegen_run(c, args);
	is_int(o[0], 7, "the value is read before the scratch memory is freed");
	hgc_codegen_free(c);
	hgc_tir_module_free(m);
}

/* Loops: a step and a dependent inner end, empty and reversed ranges, a
   variable end, an if without else, a call returning from inside a loop. */
static struct hgc_tir_module *build_loops(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("loops");
	struct hgc_tir_func *g = build_first_square(m, false);
	struct hgc_tir_func *f = hgc_tir_func_new(m, "loops", TY(VOID));
	struct hgc_tir_tensor *O = hgc_tir_func_add_tensor(f, "O", TY(INDEX), 1, (int64_t[]){ 6 });
	struct hgc_tir_var *n = hgc_tir_func_add_scalar(f, "n", TY(INDEX));
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j"), *e = ivar(m, "e"), *r = ivar(m, "r");
	struct hgc_tir_var *q = ivar(m, "q"), *s = ivar(m, "s"), *acc = ivar(m, "acc");
	struct hgc_tir_stmt *b;

	m->entry = f;
	hgc_tir_let(m, f->body, s, I(0));
	b = hgc_tir_body(hgc_tir_for(m, f->body, i, I(2), I(17), I(3)));
	b = hgc_tir_body(hgc_tir_for(m, b, j, I(0), V(i), NULL));
	hgc_tir_assign(m, b, s, BIN(ADD, V(s), V(j)));
	ST1(f->body, O, I(0), V(s));
	ST1(hgc_tir_body(hgc_tir_for(m, f->body, e, I(5), I(5), NULL)), O, I(1), I(99));
	ST1(hgc_tir_body(hgc_tir_for(m, f->body, r, I(10), I(3), NULL)), O, I(2), I(77));
	hgc_tir_let(m, f->body, acc, I(0));
	b = hgc_tir_body(hgc_tir_for(m, f->body, q, I(0), V(n), NULL));
	hgc_tir_assign(m, b, acc, BIN(ADD, V(acc), BIN(MUL, V(q), V(q))));
	ST1(f->body, O, I(3), V(acc));
	ST1(hgc_tir_body(hgc_tir_if(m, f->body, BIN(GT, V(n), I(3)), false)), O, I(4), I(1));
	ST1(f->body, O, I(5), hgc_tir_call(m, g, 1, (struct hgc_tir_expr *[]){ V(n) }));
	return m;
}

/* Loop forms and early returns. */
static void test_loops(void)
{
	int64_t O[6] = { -1, -1, -1, -1, -1, -1 }, n = 10;
	void *args[2] = { O, &n };
	size_t sizes[2] = { sizeof(O), sizeof(n) };

	if (!run_both(build_loops(), args, sizes, 2, "loops"))
		return;
	is_int(O[0], 1 + 10 + 28 + 55 + 91, "a stepped loop around a dependent one");
	ok(O[1] == -1 && O[2] == -1, "empty and reversed ranges run nothing");
	is_int(O[3], 285, "a loop up to a parameter");
	is_int(O[4], 1, "an if without else");
	is_int(O[5], 5, "a return from inside a loop (scratch freed on the way out)");
}

/* Locals: a large one per parallel-for iteration (scratch), one of a dynamic
   size, a small one on the stack; Z's size is a parameter too. */
static struct hgc_tir_module *build_locals(int64_t R, int64_t C)
{
	struct hgc_tir_module *m = hgc_tir_module_new("locals");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "locals", TY(VOID));
	struct hgc_tir_tensor *X = hgc_tir_func_add_tensor(f, "X", TY(F32), 2, (int64_t[]){ R, C });
	struct hgc_tir_tensor *Y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 1, &R);
	struct hgc_tir_var *n = hgc_tir_func_add_scalar(f, "n", TY(INDEX));
	struct hgc_tir_expr *dn = V(n);
	struct hgc_tir_tensor *Z = hgc_tir_tensor_new(m, "Z", TY(F32), HGC_TIR_GLOBAL, 1, &dn);
	struct hgc_tir_tensor *big = hgc_tir_tensor_newc(m, "big", TY(F32), HGC_TIR_LOCAL, 1, &C);
	struct hgc_tir_tensor *dyn = hgc_tir_tensor_new(m, "dyn", TY(F32), HGC_TIR_LOCAL, 1, &dn);
	struct hgc_tir_tensor *small = hgc_tir_tensor_newc(m, "small", TY(F32), HGC_TIR_LOCAL, 1,
							   (int64_t[]){ 4 });
	struct hgc_tir_var *r = ivar(m, "r"), *j = ivar(m, "j"), *j2 = ivar(m, "j"), *j3 = ivar(m, "j");
	struct hgc_tir_var *j4 = ivar(m, "j"), *sum = hgc_tir_var_new(m, "sum", TY(F32));
	struct hgc_tir_stmt *b;

	hgc_tir_func_add_tensor_param(f, Z);
	m->entry = f;
	b = hgc_tir_body(hgc_tir_pfor(m, f->body, 1, &r, (struct hgc_tir_expr *[]){ I(0) },
				      (struct hgc_tir_expr *[]){ I(R) }, NULL));
	hgc_tir_def_tensor(m, b, big);
	ST1(loop_to(m, b, j, C), big, V(j), BIN(MUL, LD2(X, V(r), V(j)), F32C(2)));
	hgc_tir_let(m, b, sum, F32C(0));
	hgc_tir_assign(m, loop_to(m, b, j2, C), sum, BIN(ADD, V(sum), LD1(big, V(j2))));
	ST1(b, Y, V(r), V(sum));
	hgc_tir_def_tensor(m, f->body, dyn);
	hgc_tir_def_tensor(m, f->body, small);
	ST1(f->body, small, I(0), F32C(0.5));
	b = hgc_tir_body(hgc_tir_for(m, f->body, j3, I(0), V(n), NULL));
	ST1(b, dyn, V(j3), CAST(F32, V(j3)));
	b = hgc_tir_body(hgc_tir_for(m, f->body, j4, I(0), V(n), NULL));
	ST1(b, Z, V(j4), BIN(ADD, LD1(dyn, BIN(SUB, BIN(SUB, V(n), I(1)), V(j4))), LD1(small, I(0))));
	return m;
}

/* Local tensors on the stack and in scratch memory. */
static void test_locals(void)
{
	enum { R = 3, C = 20000 };
	float *X = malloc(sizeof(float) * R * C), Y[R], Z[37], want;
	int64_t n = 37;
	void *args[4] = { X, Y, &n, Z };
	size_t sizes[4] = { sizeof(float) * R * C, sizeof(Y), sizeof(n), sizeof(Z) };
	unsigned s = 11;
	int i, j, bad = 0;

	for (i = 0; i < R * C; i++)
		X[i] = rnd(&s);
	omp_set_num_threads(2);
	if (run_both(build_locals(R, C), args, sizes, 4, "locals")) {
		for (i = 0; i < R; i++) {
			for (want = 0, j = 0; j < C; j++)
				want += X[i * C + j] * 2;
			bad += Y[i] != want;
		}
		is_int(bad, 0, "a scratch tensor per parallel-for iteration");
		for (bad = 0, j = 0; j < n; j++)
			bad += Z[j] != (float)(n - 1 - j) + 0.5f;
		is_int(bad, 0, "a dynamically sized local and a stack one");
	}
	free(X);
}

/* Y[i] = i < n ? X[i] : -1 and Z[i] = i < n && X[i] > 0 for i in [0, n]. */
static struct hgc_tir_module *build_lazy(int64_t n)
{
	struct hgc_tir_module *m = hgc_tir_module_new("lazy");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "lazy", TY(VOID));
	int64_t n1 = n + 1;
	struct hgc_tir_tensor *X = hgc_tir_func_add_tensor(f, "X", TY(F32), 1, &n);
	struct hgc_tir_tensor *Y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 1, &n1);
	struct hgc_tir_tensor *Z = hgc_tir_func_add_tensor(f, "Z", TY(BOOL), 1, &n1);
	struct hgc_tir_var *i = ivar(m, "i");
	struct hgc_tir_stmt *b = loop_to(m, f->body, i, n1), *c;

	m->entry = f;
	ST1(b, Y, V(i), hgc_tir_select(m, BIN(LT, V(i), I(n)), LD1(X, V(i)), F32C(-1)));
	c = hgc_tir_if(m, b, BIN(GE, V(i), I(0)), false);	/* guards the index from the verifier */
	ST1(hgc_tir_body(c), Z, V(i), BIN(AND, BIN(LT, V(i), I(n)),
					  BIN(GT, LD1(X, V(i)), F32C(0))));
	return m;
}

/* A select or && never loads on the side it does not take: X ends at a guard page. */
static void test_lazy(void)
{
	enum { n = 1024 };
	long page = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	float *X = (float *)(map + page) - n, Y[n + 1];
	uint8_t Z[n + 1];
	void *args[3] = { X, Y, Z };
	size_t sizes[3] = { sizeof(float) * n, sizeof(Y), sizeof(Z) };
	int i, bad = 0;

	if (map == MAP_FAILED || mprotect(map + page, (size_t)page, PROT_NONE)) {
		ok(0, "cannot set up a guard page");
		return;
	}
	for (i = 0; i < n; i++)
		X[i] = (float)(i % 3) - 1;
	if (run_both(build_lazy(n), args, sizes, 3, "lazy select")) {
		for (i = 0; i <= n; i++)
			bad += Y[i] != (i < n ? X[i] : -1) || Z[i] != (i < n && X[i] > 0);
		is_int(bad, 0, "select and && did not touch X[n] (which would fault)");
	}
	munmap(map, 2 * (size_t)page);
}

/* lanes_* as docs/tir.md defines them: p[v] with p[v + h] for h = n/2 ... 1;
   a max or min takes the second operand b when it is NaN or wins. */
static float lanes_ref(int op, const float *p, int n)
{
	float t[64], a, b;
	int h, v;

	memcpy(t, p, sizeof(float) * (size_t)n);
	for (h = n / 2; h > 0; h /= 2)
		for (v = 0; v < h; v++) {
			a = t[v], b = t[v + h];
			t[v] = op == HGC_TIR_I_LANES_ADD ? a + b
			       : op == HGC_TIR_I_LANES_MUL ? a * b
			       : b != b ? b
			       : op == HGC_TIR_I_LANES_MAX ? (b > a ? b : a) : (b < a ? b : a);
		}
	return t[0];
}

enum { LR = 6, LW = 4 };	/* rows of lanes input; widths per kind */
static const int lanes_ops[4] = { HGC_TIR_I_LANES_ADD, HGC_TIR_I_LANES_MUL, HGC_TIR_I_LANES_MAX,
				  HGC_TIR_I_LANES_MIN };
static const int lanes_widths[LW] = { 2, 8, 16, 64 };

/* Y[i, 4 k + w] = lanes_ops[k](&X[i, 0 : n], n) for n = lanes_widths[w]. */
static struct hgc_tir_module *build_lanes(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("lanes");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "lanes", TY(VOID));
	struct hgc_tir_tensor *X = hgc_tir_func_add_tensor(f, "X", TY(F32), 2, (int64_t[]){ LR, 64 });
	struct hgc_tir_tensor *Y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 2,
							   (int64_t[]){ LR, 4 * LW });
	struct hgc_tir_var *i = ivar(m, "i");
	struct hgc_tir_stmt *b = loop_to(m, f->body, i, LR);
	struct hgc_tir_expr *a[2], *idx[2];
	int k, w;

	m->entry = f;
	for (k = 0; k < 4; k++)
		for (w = 0; w < LW; w++) {
			idx[0] = V(i), idx[1] = I(0);
			a[0] = hgc_tir_addr(m, X, 2, idx, (int64_t[]){ 1, lanes_widths[w] });
			a[1] = I(lanes_widths[w]);
			ST2(b, Y, V(i), I(LW * k + w), hgc_tir_intrin(m, lanes_ops[k], 2, a));
		}
	return m;
}

/* The lanes_* folds against lanes_ref, on both backends, bit for bit. */
static void test_lanes(void)
{
	float X[LR][64], Y[LR][4 * LW], want;
	void *args[2] = { X, Y };
	size_t sizes[2] = { sizeof(X), sizeof(Y) };
	unsigned s = 5;
	int i, j, k, bad = 0;

	for (i = 0; i < LR; i++)
		for (j = 0; j < 64; j++)
			X[i][j] = 1 + rnd(&s) / 4;	/* products stay normal */
	X[1][1] = NAN;				/* in the first pair */
	X[2][37] = NAN, X[2][5] = INFINITY;	/* NaN past 16, +inf within 8 */
	X[3][3] = -INFINITY, X[3][11] = INFINITY;	/* inf - inf in the sums */
	for (j = 0; j < 64; j++)
		X[4][j] = j % 3 ? 0.0f : -0.0f;	/* which zero wins */
	X[5][0] = -2, X[5][63] = 3;		/* extremes at both ends */
	if (run_both(build_lanes(), args, sizes, 2, "lanes_add/mul/max/min")) {
		for (i = 0; i < LR; i++)
			for (k = 0; k < 4 * LW; k++) {
				want = lanes_ref(lanes_ops[k / LW], X[i], lanes_widths[k % LW]);
				if (want != want ? Y[i][k] == Y[i][k]
						 : memcmp(&want, &Y[i][k], sizeof(want)))
					bad++, diag("row %d, fold %d: got %g, want %g", i, k,
						    Y[i][k], want);
			}
		is_int(bad, 0, "lanes_* fold as a tree of halves (NaN, infinities, zeros)");
	}
}

/*
 * Overlapping parameters: Y[i] = X[i] + L[i] + 1 over 64 floats, with Y
 * passed as X + 1 (each step reads what the one before wrote), L a local
 * filled with zeros first.  llvm_alias.c puts the parameters in one scope:
 * were they told apart, the vectorizer would drop its overlap check and
 * read X's old values.
 */
static struct hgc_tir_module *build_overlap(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("overlap");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "overlap", TY(VOID));
	struct hgc_tir_tensor *X = hgc_tir_func_add_tensor(f, "X", TY(F32), 1, (int64_t[]){ 64 });
	struct hgc_tir_tensor *Y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 1, (int64_t[]){ 64 });
	struct hgc_tir_tensor *L = hgc_tir_tensor_newc(m, "L", TY(F32), HGC_TIR_LOCAL, 1,
						       (int64_t[]){ 64 });
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j");

	m->entry = f;
	hgc_tir_def_tensor(m, f->body, L);
	ST1(hgc_tir_body(hgc_tir_for(m, f->body, j, I(0), I(64), NULL)), L, V(j), F32C(0));
	ST1(hgc_tir_body(hgc_tir_for(m, f->body, i, I(0), I(64), NULL)), Y, V(i),
	    BIN(ADD, BIN(ADD, LD1(X, V(i)), LD1(L, V(i))), F32C(1)));
	return m;
}

static void test_overlap(void)
{
	struct hgc_tir_module *m = build_overlap();
	struct hgc_compiled *c = jit(m, "overlapping parameters");
	float buf[65];
	void *args[2] = { buf, buf + 1 };
	int bad = 0;

	for (int k = 0; k < 65; k++)
		buf[k] = (float)(100 * k);
	if (c) {
		hgc_codegen_run(c, args);
		hgc_codegen_free(c);
		for (int k = 0; k < 65; k++)
			bad += buf[k] != (float)k;
		is_int(bad, 0, "Y = X + 1 in place, one element on: each step sees the last");
	}
	hgc_tir_module_free(m);
}

int main(void)
{
	init_floats();
	test_ints();
	test_bf16();
	test_loops();
	test_return_scratch();
	test_locals();
	test_lazy();
	test_lanes();
	test_overlap();
	hgc_codegen_llvm_shutdown();
	return done_testing();
}
