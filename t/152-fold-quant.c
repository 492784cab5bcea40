/*
 * 152-fold-quant: the fold_quant pass (core/tir/passes/postfold.c) on
 * modules built by hand: a u8 x s8 brgemm into a local s32 block, then the
 * nest that requantizes the block into an 8-bit Y, as an int8 MatMul's
 * Dequantize scales and Quantize lower at its post_block anchor.  The
 * nests it must fold into brgemm_q (a per-column scale alone, with the
 * multiply's operands the other way round, a scalar division, bias, clamp
 * and a subtraction into s8, the call in a loop of one trip, the rows as
 * two loops, a block of Y's rows from an offset) and those it must leave
 * alone (C a parameter, C read again after the nest, a division with the
 * operand first, a scale per row, a shape AMX's requantizing blocks do not
 * take, K of two chunks, a clamp to 1, the passes told there is no AMX),
 * each run through the JIT before and after the passes with bit-identical
 * results: on a machine without AMX the runtime computes brgemm_q its
 * other way (brgemm.c), so the comparison holds everywhere.  The verifier
 * rejects a brgemm_q with an f32 Y or steps that are not a constant.
 */
#include "t/llvm_check.h"
#include "t/tir/passes_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 64	/* rows of the block: two of AMX's 32 */
#define C 64	/* columns */
#define K 256	/* four chunks of 64 */
#define YR (R + 2)	/* Y's rows (a block may start at row 2) */

enum kind { SCALE, SCALE_SWAP, DIV, BIAS_RELU_S8, LOOP1, ROWS2, ROW_OFF, C_PARAM, C_READ, DIV_SWAP,
	    PER_ROW, SHAPE40, K128, CLAMP1, NO_AMX, NKINDS };

static const struct {
	const char *name;
	int folds;
} kinds[NKINDS] = {
	[SCALE] = {"a per-column scale", 1},
	[SCALE_SWAP] = {"a per-column scale, the multiply's operands swapped", 1},
	[DIV] = {"a scale, then a division by a scalar", 1},
	[BIAS_RELU_S8] = {"scale, bias, clamp at 0, minus a scalar, into s8", 1},
	[LOOP1] = {"the call in a loop of one trip", 1},
	[ROWS2] = {"the rows as two loops", 1},
	[ROW_OFF] = {"Y's block from row 2", 1},
	[C_PARAM] = {"C a parameter (the caller's)", 0},
	[C_READ] = {"C read again after the nest", 0},
	[DIV_SWAP] = {"a division with the operand first", 0},
	[PER_ROW] = {"a scale per row", 0},
	[SHAPE40] = {"40 columns (not in AMX's blocks of 32)", 0},
	[K128] = {"K of two chunks (AMX's two-chunk path)", 0},
	[CLAMP1] = {"a clamp to 1, not 0", 0},
	[NO_AMX] = {"the passes told there is no AMX", 0},
};

/* The call's columns for kind k. */
static int64_t cols_of(enum kind k)
{
	return k == SHAPE40 ? 40 : C;
}

static int64_t k_of(enum kind k)
{
	return k == K128 ? 128 : K;
}

/* `let x = f[0]; let y = v; f[0] = x op y` (swap: y op x). */
static void step(struct hgc_tir_module *m, struct hgc_tir_stmt *body, struct hgc_tir_tensor *f,
		 enum hgc_tir_binop op, struct hgc_tir_expr *v, bool swap)
{
	struct hgc_tir_var *x = hgc_tir_var_new(m, "x", TY(F32)), *y = hgc_tir_var_new(m, "y", TY(F32));

	hgc_tir_let(m, body, x, LD1(f, I(0)));
	hgc_tir_let(m, body, y, v);
	ST1(body, f, I(0), swap ? hgc_tir_binary(m, op, V(y), V(x)) : hgc_tir_binary(m, op, V(x), V(y)));
}

/* `let x = f[0]; f[0] = select(x < 0, c, x)`. */
static void clamp(struct hgc_tir_module *m, struct hgc_tir_stmt *body, struct hgc_tir_tensor *f,
		  double c)
{
	struct hgc_tir_var *x = hgc_tir_var_new(m, "x", TY(F32));

	hgc_tir_let(m, body, x, LD1(f, I(0)));
	ST1(body, f, I(0), hgc_tir_select(m, BIN(LT, V(x), F32C(0)), F32C(c), V(x)));
}

/*
 * entry(X u8[R, K], W s8[K / 4, C * 4], S f32[C + 1], Y u8[YR, C] (s8 for
 * BIAS_RELU_S8), Z s32[R * C]): acc = X W into a local block (Z for
 * C_PARAM), then the requantization nest into Y.
 */
static struct hgc_tir_module *build(enum kind k)
{
	struct hgc_tir_module *m = hgc_tir_module_new("qfold");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "entry", TY(VOID));
	int64_t n = cols_of(k), kk = k_of(k), r0 = k == ROW_OFF ? 2 : 0;
	enum hgc_tir_kind yk = k == BIAS_RELU_S8 ? HGC_TIR_S8 : HGC_TIR_U8;
	struct hgc_tir_tensor *x = hgc_tir_func_add_tensor(f, "X", TY(U8), 2, (int64_t[]){ R, K });
	struct hgc_tir_tensor *w = hgc_tir_func_add_tensor(f, "W", TY(S8), 2, (int64_t[]){ K / 4, C * 4 });
	struct hgc_tir_tensor *s = hgc_tir_func_add_tensor(f, "S", TY(F32), 1, (int64_t[]){ C + 1 });
	struct hgc_tir_tensor *y = hgc_tir_func_add_tensor(f, "Y", hgc_tir_ty(yk), 2, (int64_t[]){ YR, C });
	struct hgc_tir_tensor *z = hgc_tir_func_add_tensor(f, "Z", TY(S32), 1, (int64_t[]){ R * C });
	struct hgc_tir_tensor *acc = k == C_PARAM ? z
				   : hgc_tir_tensor_newc(m, "acc", TY(S32), HGC_TIR_LOCAL, 1,
							 (int64_t[]){ R * C });
	struct hgc_tir_tensor *aa = hgc_tir_tensor_newc(m, "aa", hgc_tir_ptr_to(TY(U8)), HGC_TIR_LOCAL, 1,
							 (int64_t[]){ 1 });
	struct hgc_tir_tensor *ba = hgc_tir_tensor_newc(m, "ba", hgc_tir_ptr_to(TY(S8)), HGC_TIR_LOCAL, 1,
							 (int64_t[]){ 1 });
	struct hgc_tir_tensor *ft = hgc_tir_tensor_newc(m, "f", TY(F32), HGC_TIR_LOCAL, 1, (int64_t[]){ 1 });
	struct hgc_tir_var *r = ivar(m, "r"), *r2 = ivar(m, "r"), *j = ivar(m, "j"), *ks = ivar(m, "ks");
	struct hgc_tir_stmt *b = f->body, *body;
	struct hgc_tir_expr *accflag = hgc_tir_bool(m, false), *row;

	m->entry = f;
	if (k != C_PARAM)
		hgc_tir_def_tensor(m, b, acc);
	hgc_tir_def_tensor(m, b, aa);
	hgc_tir_def_tensor(m, b, ba);
	ST1(b, aa, I(0), hgc_tir_addr(m, x, 2, (struct hgc_tir_expr *[]){ I(0), I(0) },
				      (int64_t[]){ R, kk }));
	ST1(b, ba, I(0), hgc_tir_addr(m, w, 2, (struct hgc_tir_expr *[]){ I(0), I(0) },
				      (int64_t[]){ kk / 4, n * 4 }));
	body = b;
	if (k == LOOP1) {
		body = hgc_tir_body(hgc_tir_for(m, b, ks, I(0), I(1), NULL));
		accflag = hgc_tir_unary(m, HGC_TIR_NOT, BIN(EQ, V(ks), I(0)));
	}
	hgc_tir_eval(m, body, hgc_tir_intrinv(m, HGC_TIR_I_BRGEMM, 11, hgc_tir_addrv(m, aa, 1, I(0)),
					      hgc_tir_addrv(m, ba, 1, I(0)),
					      hgc_tir_addr(m, acc, 1, (struct hgc_tir_expr *[]){ I(0) },
							   (int64_t[]){ R * n }),
					      I(1), I(R), I(n), I(kk), I(K), I(C * 4), I(n), accflag));
	/* the nest: rows r (or r * 32 + r2), columns j */
	if (k == ROWS2) {
		body = hgc_tir_body(hgc_tir_for(m, b, r, I(0), I(2), NULL));
		body = hgc_tir_body(hgc_tir_for(m, body, r2, I(0), I(R / 2), NULL));
		row = hgc_tir_add(m, hgc_tir_mul(m, V(r), I(R / 2)), V(r2));
	} else {
		body = hgc_tir_body(hgc_tir_for(m, b, r, I(0), I(R), NULL));
		row = V(r);
	}
	body = hgc_tir_body(hgc_tir_for(m, body, j, I(0), I(n), NULL));
	hgc_tir_def_tensor(m, body, ft);
	ST1(body, ft, I(0), hgc_tir_cast(m, TY(F32),
					 LD1(acc, hgc_tir_add(m, hgc_tir_mul(m, hgc_tir_expr_copy(m, row), I(n)),
							      V(j)))));
	step(m, body, ft, HGC_TIR_MUL, LD1(s, k == PER_ROW ? hgc_tir_expr_copy(m, row) : V(j)),
	     k == SCALE_SWAP);
	if (k == DIV || k == DIV_SWAP)
		step(m, body, ft, HGC_TIR_DIV, LD1(s, I(C)), k == DIV_SWAP);
	if (k == BIAS_RELU_S8 || k == CLAMP1) {
		step(m, body, ft, HGC_TIR_ADD, LD1(s, hgc_tir_add(m, V(j), I(1))), false);
		clamp(m, body, ft, k == CLAMP1 ? 1 : 0);
		step(m, body, ft, HGC_TIR_SUB, LD1(s, I(C)), false);
	}
	ST2(body, y, hgc_tir_add(m, I(r0), hgc_tir_expr_copy(m, row)), V(j),
	    hgc_tir_cast(m, hgc_tir_ty(yk), hgc_tir_intrinv(m, HGC_TIR_I_ROUND, 1, LD1(ft, I(0)))));
	if (k == C_READ)	/* Z[0] = acc[0] after the nest */
		ST1(b, z, I(0), LD1(acc, I(0)));
	return m;
}

/* The passes on m, every one on, amx as given; -1 if they fail. */
static int run_passes(struct hgc_tir_module *m, bool amx, const char *off)
{
	struct hgc_tir_passes p;
	struct hgc_diag d;
	int rc;

	hgc_tir_passes_init(&p);
	p.threads = 1;
	p.amx = amx;
	if (off)
		p.on[hgc_tir_pass_find(off)] = false;
	hgc_diag_init(&d);
	rc = hgc_tir_passes_run(m, &p, &d);
	if (rc < 0)
		diag("%s", hgc_diag_text(&d));
	hgc_tir_passes_release(&p);
	hgc_diag_release(&d);
	return rc;
}

/* A module calling brgemm_q with argument `bad` (11: Y, 13: steps) wrong: the verifier's message. */
static char *verify_bad(int bad)
{
	struct hgc_tir_module *m = hgc_tir_module_new("qbad");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "entry", TY(VOID));
	struct hgc_tir_tensor *aa = hgc_tir_func_add_tensor(f, "AA", hgc_tir_ptr_to(TY(U8)), 1, (int64_t[]){ 1 });
	struct hgc_tir_tensor *ba = hgc_tir_func_add_tensor(f, "BA", hgc_tir_ptr_to(TY(S8)), 1, (int64_t[]){ 1 });
	struct hgc_tir_tensor *acc = hgc_tir_func_add_tensor(f, "ACC", TY(S32), 1, (int64_t[]){ 1024 });
	struct hgc_tir_tensor *y = hgc_tir_func_add_tensor(f, "Y", TY(U8), 1, (int64_t[]){ 1024 });
	struct hgc_tir_tensor *s = hgc_tir_func_add_tensor(f, "S", TY(F32), 1, (int64_t[]){ 32 });
	struct hgc_tir_var *n = hgc_tir_func_add_scalar(f, "n", TY(INDEX));
	struct hgc_tir_expr *sv = hgc_tir_addrv(m, s, 1, I(0));
	struct hgc_diag d;
	char *msg;

	m->entry = f;
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_BRGEMM_Q, 18, hgc_tir_addrv(m, aa, 1, I(0)),
					       hgc_tir_addrv(m, ba, 1, I(0)), hgc_tir_addrv(m, acc, 1, I(0)),
					       I(1), I(32), I(32), I(256), I(256), I(128), I(32),
					       hgc_tir_bool(m, false),
					       bad == 11 ? hgc_tir_expr_copy(m, sv) : hgc_tir_addrv(m, y, 1, I(0)),
					       I(32), bad == 13 ? V(n) : I(9), sv, hgc_tir_expr_copy(m, sv),
					       hgc_tir_expr_copy(m, sv), hgc_tir_expr_copy(m, sv)));
	hgc_diag_init(&d);
	msg = strdup(hgc_tir_verify(m, &d) < 0 ? hgc_diag_text(&d) : "");
	msg[strcspn(msg, "\n")] = 0;
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
	return msg;
}

static const size_t sizes[] = { R * K, K / 4 * C * 4, (C + 1) * 4, YR * C, R * C * 4 };

int main(void)
{
	for (int k = 0; k < NKINDS; k++) {
		struct hgc_tir_module *a = build((enum kind)k), *b = build((enum kind)k), *off;
		char *s;

		if (run_passes(b, k != NO_AMX, NULL) < 0) {
			ok(0, "%s: the passes run", kinds[k].name);
			continue;
		}
		s = hgc_tir_module_str(b);
		is_int(!!strstr(s, "brgemm_q("), kinds[k].folds, "%s: %s", kinds[k].name,
		       kinds[k].folds ? "folded into brgemm_q" : "left alone");
		if (k == SCALE)
			ok(strstr(s, ", 64, 9, &S[0 : 64], ") && !strstr(s, "for (r"),
			   "%s: Y's stride, one per-column multiply (9) from S[0], no nest left",
			   kinds[k].name);
		if (k == BIAS_RELU_S8)	/* mul col 9, add col 11, relu 5, sub 4, s8 */
			ok(strstr(s, ", 64, 83385, &S[0 : 64], &S[0 + 1 : 64], &S[0 : 64], &S[64])"),
			   "%s: the four steps (s8, 0x4 5 b 9) and their operands", kinds[k].name);
		if (k == ROW_OFF)
			ok(!!strstr(s, "&Y[2 + 0, 0 : 64], 64,"), "%s: Y's block from row 2",
			   kinds[k].name);
		free(s);
		tir_same_results(a, b, 5, sizes, kinds[k].name);
		off = build((enum kind)k);
		run_passes(off, true, "fold_quant");
		s = hgc_tir_module_str(off);
		ok(!strstr(s, "brgemm_q("), "%s, fold_quant off: no brgemm_q", kinds[k].name);
		free(s);
		hgc_tir_module_free(off);
	}
	{
		char *good = verify_bad(0), *y = verify_bad(11), *st = verify_bad(13);

		is_str(good, "", "a well-formed brgemm_q verifies");
		ok(strstr(y, "argument 12 of brgemm_q must be ptr<u8> or ptr<s8>, not ptr<f32>") != NULL,
		   "a Y of f32: %s", y);
		ok(strstr(st, "argument 14 of brgemm_q must be an index constant") != NULL,
		   "steps not a constant: %s", st);
		free(good);
		free(y);
		free(st);
	}
	return done_testing();
}
