/*
 * 151-fold-post: the fold_post pass (core/tir/passes/postfold.c) on modules
 * built by hand: an f32 brgemm into a block of Y, then the nest that adds a
 * bias row (and clamps at 0).  The nests it must fold into brgemm_post (the
 * call alone or in a loop of one trip, with or without the clamp, a block
 * that starts at a row offset, a bias row that starts at an offset, the
 * rows as two nested loops) and those it must leave alone (a loop of two
 * trips, a nest on other elements than the call's, a bias per row, a
 * clamp to 1, one more statement, the clamp into another tensor, two row
 * loops whose rows overlap), each run through the JIT before and after
 * the passes with bit-identical results.
 */
#include "t/llvm_check.h"
#include "t/tir/passes_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 12	/* rows of Y: two 6-row tiles */
#define C 48	/* columns: an 8x3 tile's */
#define K 8

enum kind { RELU, BIAS, LOOP1, ROW_OFF, BIAS_OFF, ROWS2, TWO_TRIPS, SHIFTED, BIAS_ROW, CLAMP1,
	    EXTRA, OTHER_OUT, ROWS2_OVERLAP, NKINDS };

static const struct {
	const char *name;
	int folds;
} kinds[NKINDS] = {
	[RELU] = {"bias and ReLU after the call", 1},
	[BIAS] = {"bias alone", 1},
	[LOOP1] = {"the call in a loop of one trip", 1},
	[ROW_OFF] = {"a block from row 2, the nest on it", 1},
	[BIAS_OFF] = {"a bias row from its second element", 1},
	[ROWS2] = {"the rows as two loops (2 x 6, a conv's rows of pixels)", 1},
	[TWO_TRIPS] = {"the call in a loop of two trips", 0},
	[SHIFTED] = {"a block from row 2, the nest on rows from 0", 0},
	[BIAS_ROW] = {"a bias per row", 0},
	[CLAMP1] = {"a clamp to 1, not 0", 0},
	[EXTRA] = {"one more store in the nest", 0},
	[OTHER_OUT] = {"the clamp into another tensor", 0},
	[ROWS2_OVERLAP] = {"two row loops whose rows overlap (r1 * 5 + r2)", 0},
};

/* &t[r0 : rows, 0 : cols] */
static struct hgc_tir_expr *block(struct hgc_tir_module *m, struct hgc_tir_tensor *t, int64_t r0,
				  int64_t rows, int64_t cols)
{
	struct hgc_tir_expr *idx[2] = { I(r0), I(0) };

	return hgc_tir_addr(m, t, 2, idx, (int64_t[]){ rows, cols });
}

/* The call of kind k into block b: Y's rows from r0, rows of them. */
static void call(struct hgc_tir_module *m, struct hgc_tir_stmt *b, enum kind k,
		 struct hgc_tir_tensor *aa, struct hgc_tir_tensor *ba, struct hgc_tir_tensor *y,
		 int64_t r0, int64_t rows)
{
	struct hgc_tir_var *ks = ivar(m, "ks");
	struct hgc_tir_expr *acc = hgc_tir_bool(m, false);

	if (k == LOOP1 || k == TWO_TRIPS) {
		b = hgc_tir_body(hgc_tir_for(m, b, ks, I(0), I(k == LOOP1 ? 1 : 2), NULL));
		acc = hgc_tir_unary(m, HGC_TIR_NOT, BIN(EQ, V(ks), I(0)));
	}
	hgc_tir_eval(m, b, hgc_tir_intrinv(m, HGC_TIR_I_BRGEMM, 11, hgc_tir_addrv(m, aa, 1, I(0)),
					   hgc_tir_addrv(m, ba, 1, I(0)), block(m, y, r0, rows, C),
					   I(1), I(rows), I(C), I(K), I(K), I(C), I(C), acc));
}

/* The element nest of kind k over rows [0, rows): Y[r0 + r, j] += bias, then the clamp. */
static void nest(struct hgc_tir_module *m, struct hgc_tir_stmt *b, enum kind k,
		 struct hgc_tir_tensor *y, struct hgc_tir_tensor *z, struct hgc_tir_tensor *bias,
		 int64_t r0, int64_t rows)
{
	struct hgc_tir_var *r = ivar(m, "r"), *j = ivar(m, "j");
	struct hgc_tir_var *x = hgc_tir_var_new(m, "x", TY(F32)), *c = hgc_tir_var_new(m, "c", TY(F32));
	struct hgc_tir_var *w = hgc_tir_var_new(m, "w", TY(F32));
	struct hgc_tir_expr *bi = k == BIAS_OFF ? hgc_tir_add(m, V(j), I(1)) : k == BIAS_ROW ? V(r)
											       : V(j);
	struct hgc_tir_var *r2 = ivar(m, "r");
	struct hgc_tir_expr *row;
	struct hgc_tir_stmt *body;

	if (k == ROWS2 || k == ROWS2_OVERLAP) {	/* row r * 6 + r2 (or r * 5 + r2) */
		body = hgc_tir_body(hgc_tir_for(m, b, r, I(0), I(2), NULL));
		body = hgc_tir_body(hgc_tir_for(m, body, r2, I(0), I(rows / 2), NULL));
		row = hgc_tir_add(m, hgc_tir_mul(m, V(r), I(k == ROWS2 ? rows / 2 : rows / 2 - 1)),
				  V(r2));
	} else {
		body = hgc_tir_body(hgc_tir_for(m, b, r, I(0), I(rows), NULL));
		row = V(r);
	}
	row = hgc_tir_add(m, I(r0), row);
	body = hgc_tir_body(hgc_tir_for(m, body, j, I(0), I(C), NULL));
	hgc_tir_let(m, body, x, LD2(y, hgc_tir_expr_copy(m, row), V(j)));
	hgc_tir_let(m, body, c, LD1(bias, bi));
	ST2(body, y, hgc_tir_expr_copy(m, row), V(j), hgc_tir_add(m, V(x), V(c)));
	if (k == BIAS)
		return;
	hgc_tir_let(m, body, w, LD2(y, hgc_tir_expr_copy(m, row), V(j)));
	ST2(body, k == OTHER_OUT ? z : y, hgc_tir_expr_copy(m, row), V(j),
	    hgc_tir_select(m, BIN(LT, V(w), F32C(0)), F32C(k == CLAMP1 ? 1 : 0), V(w)));
	if (k == EXTRA)
		ST2(body, z, V(r), V(j), F32C(1));
}

/* entry(X[R, K], W[K, C], Bias[C + 1], Y[R, C], Z[R, C]): Y's block = X W, then the nest. */
static struct hgc_tir_module *build(enum kind k)
{
	struct hgc_tir_module *m = hgc_tir_module_new("fold");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "entry", TY(VOID));
	struct hgc_tir_tensor *x = hgc_tir_func_add_tensor(f, "X", TY(F32), 2, (int64_t[]){ R, K });
	struct hgc_tir_tensor *w = hgc_tir_func_add_tensor(f, "W", TY(F32), 2, (int64_t[]){ K, C });
	struct hgc_tir_tensor *bias = hgc_tir_func_add_tensor(f, "Bias", TY(F32), 1,
							      (int64_t[]){ C + 1 });
	struct hgc_tir_tensor *y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 2, (int64_t[]){ R, C });
	struct hgc_tir_tensor *z = hgc_tir_func_add_tensor(f, "Z", TY(F32), 2, (int64_t[]){ R, C });
	struct hgc_tir_type pf = hgc_tir_ptr_to(TY(F32));
	struct hgc_tir_tensor *aa = hgc_tir_tensor_newc(m, "aa", pf, HGC_TIR_LOCAL, 1, (int64_t[]){ 1 });
	struct hgc_tir_tensor *ba = hgc_tir_tensor_newc(m, "ba", pf, HGC_TIR_LOCAL, 1, (int64_t[]){ 1 });
	int64_t r0 = k == ROW_OFF || k == SHIFTED ? 2 : 0;

	m->entry = f;
	hgc_tir_def_tensor(m, f->body, aa);
	hgc_tir_def_tensor(m, f->body, ba);
	ST1(f->body, aa, I(0), block(m, x, 0, R, K));
	ST1(f->body, ba, I(0), block(m, w, 0, K, C));
	call(m, f->body, k, aa, ba, y, r0, R - r0);
	nest(m, f->body, k, y, z, bias, k == SHIFTED ? 0 : r0, R - r0);
	return m;
}

static const size_t sizes[] = { R * K * 4, K * C * 4, (C + 1) * 4, R * C * 4, R * C * 4 };

int main(void)
{
	for (int k = 0; k < NKINDS; k++) {
		struct hgc_tir_module *a = build((enum kind)k), *b = build((enum kind)k), *off;
		char *s;

		if (tir_passes_off(b, NULL, NULL, 1) < 0) {
			ok(0, "%s: the passes run", kinds[k].name);
			continue;
		}
		s = hgc_tir_module_str(b);
		is_int(!!strstr(s, "brgemm_post("), kinds[k].folds, "%s: %s", kinds[k].name,
		       kinds[k].folds ? "folded into brgemm_post" : "left alone");
		if (k == RELU || k == BIAS || k == BIAS_OFF)
			ok(strstr(s, k == BIAS ? "&Bias[0 : 48], false);" :
				     k == RELU ? "&Bias[0 : 48], true);" : "&Bias[0 + 1 : 48], true);") &&
			   !strstr(s, "for (r"), "%s: its bias row and clamp in the call, no nest left",
			   kinds[k].name);
		free(s);
		tir_same_results(a, b, 5, sizes, kinds[k].name);
		/* the switch: nothing folds */
		off = build((enum kind)k);
		tir_passes_off(off, "fold_post", NULL, 1);
		s = hgc_tir_module_str(off);
		ok(!strstr(s, "brgemm_post("), "%s, fold_post off: no brgemm_post", kinds[k].name);
		free(s);
		hgc_tir_module_free(off);
	}
	return done_testing();
}
