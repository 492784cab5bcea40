/*
 * 148-copy-loops: the copy_loops pass (core/tir/passes/copyloop.c).  On
 * modules built by hand: the loops it must turn into copy calls (plain,
 * under a padding check, through lets, a variable or offset range) and
 * those it must leave alone (a tensor copied onto itself, two parameters,
 * a strided source, a check that reads the loop variable, a step of 2),
 * each run through the JIT before and after the passes with the same
 * results.  On lowered graphs: the packing copies of a MatMul with an odd
 * K become copies, and the results match the interpreter on both backends
 * with the pass on and off.
 */
#include "t/driver_check.h"
#include "t/llvm_check.h"
#include "t/tir/passes_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 64
#define M 32

/* The loops a case puts between zeroing T and reading it into Y. */
enum kind { PLAIN, GUARD, LETS, VAR, OFFSET, SPLIT, SELF, PARAMS, STRIDE, QGUARD, STEP2,
	    SPLIT_OTHER, NKINDS };

static const struct {
	const char *name;
	int copies;		/* copy calls after the passes */
} kinds[NKINDS] = {
	[PLAIN] = {"a plain row copy", 1},
	[GUARD] = {"a copy under a check of the outer variable", 1},
	[LETS] = {"a copy whose indices go through lets", 1},
	[VAR] = {"a copy of a variable length", 1},
	[OFFSET] = {"a copy from an offset range", 1},
	[SPLIT] = {"two rows as one, indexed by j / M and j % M", 1},
	[SELF] = {"a tensor copied onto itself (only the first copy)", 1},
	[PARAMS] = {"a copy between two parameters", 0},
	[STRIDE] = {"a strided source", 0},
	[QGUARD] = {"a check that reads the loop variable", 0},
	[STEP2] = {"a loop of step 2", 0},
	[SPLIT_OTHER] = {"j / 16 and j % 16 over rows of 32", 0},
};

/* for (j in [lo, hi) step) in block b. */
static struct hgc_tir_stmt *jloop(struct hgc_tir_module *m, struct hgc_tir_stmt *b,
				  struct hgc_tir_var *j, struct hgc_tir_expr *lo,
				  struct hgc_tir_expr *hi, int64_t step)
{
	return hgc_tir_body(hgc_tir_for(m, b, j, lo, hi, step == 1 ? NULL : I(step)));
}

/* The row length the SPLIT kinds divide j by: the rows' (M), or another (16). */
static int64_t kind_split(enum kind k)
{
	return k == SPLIT ? M : 16;
}

/* The copy loop of kind k over row i into block b. */
static void copy_loop(struct hgc_tir_module *m, struct hgc_tir_stmt *b, enum kind k,
		      struct hgc_tir_var *i, struct hgc_tir_tensor *t, struct hgc_tir_tensor *x,
		      struct hgc_tir_tensor *y)
{
	struct hgc_tir_var *j = ivar(m, "j"), *c = ivar(m, "c");
	struct hgc_tir_stmt *body, *s;

	switch (k) {
	case PLAIN:
	case SELF:
		body = jloop(m, b, j, I(0), I(M), 1);
		ST2(body, t, V(i), V(j), LD2(x, V(i), V(j)));
		if (k == SELF) {	/* each element from the one the loop just wrote */
			struct hgc_tir_var *j2 = ivar(m, "j");

			body = jloop(m, b, j2, I(1), I(M), 1);
			ST2(body, t, V(i), V(j2), LD2(t, V(i), hgc_tir_sub(m, V(j2), I(1))));
		}
		break;
	case GUARD:
		body = jloop(m, b, j, I(0), I(M), 1);
		s = hgc_tir_if(m, body, BIN(LT, V(i), I(40)), false);
		ST2(hgc_tir_body(s), t, V(i), V(j), LD2(x, V(i), V(j)));
		break;
	case LETS:
		body = jloop(m, b, j, I(0), I(M - 3), 1);
		hgc_tir_let(m, body, c, hgc_tir_add(m, V(j), I(3)));
		ST2(body, t, V(i), hgc_tir_sub(m, V(c), I(3)), LD2(x, V(i), V(c)));
		break;
	case VAR:
		body = jloop(m, b, j, I(0), BIN(MIN, V(i), I(M)), 1);
		ST2(body, t, V(i), V(j), LD2(x, V(i), V(j)));
		break;
	case OFFSET:
		body = jloop(m, b, j, I(2), I(M), 1);
		ST2(body, t, V(i), hgc_tir_sub(m, V(j), I(2)), LD2(x, V(i), V(j)));
		break;
	case SPLIT:	/* rows i and i + 1 of X as one run of 2M into t (1-D); even i */
	case SPLIT_OTHER: {
		int64_t len = kind_split(k);	/* SPLIT_OTHER: the first half of row i */

		body = jloop(m, b, j, I(0), I(k == SPLIT ? 2 * M : M / 2), 1);
		if (k == SPLIT)
			body = hgc_tir_body(hgc_tir_if(m, body, BIN(EQ, BIN(MOD, V(i), I(2)), I(0)),
						       false));
		ST1(body, t, hgc_tir_add(m, hgc_tir_mul(m, V(i), I(M)), V(j)),
		    LD2(x, hgc_tir_add(m, V(i), BIN(DIV, V(j), I(len))), BIN(MOD, V(j), I(len))));
		break;
	}
	case PARAMS:
		body = jloop(m, b, j, I(0), I(M), 1);
		ST2(body, y, V(i), V(j), LD2(x, V(i), V(j)));
		break;
	case STRIDE:
		body = jloop(m, b, j, I(0), I(M / 2), 1);
		ST2(body, t, V(i), V(j), LD2(x, V(i), hgc_tir_mul(m, V(j), I(2))));
		break;
	case QGUARD:
		body = jloop(m, b, j, I(0), I(M), 1);
		s = hgc_tir_if(m, body, BIN(LT, V(j), I(10)), false);
		ST2(hgc_tir_body(s), t, V(i), V(j), LD2(x, V(i), V(j)));
		break;
	case STEP2:
		body = jloop(m, b, j, I(0), I(M), 2);
		ST2(body, t, V(i), V(j), LD2(x, V(i), V(j)));
		break;
	default:
		break;
	}
}

/* entry(X[N, M], Y[N, M]): T = 0; per row i the copy loop of kind k; Y = T + 1
   (PARAMS: the copy writes Y itself; SPLIT kinds copy into S[N * M], Y = S + 1). */
static struct hgc_tir_module *build(enum kind k)
{
	struct hgc_tir_module *m = hgc_tir_module_new("copies");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "entry", TY(VOID));
	struct hgc_tir_tensor *x = hgc_tir_func_add_tensor(f, "X", TY(F32), 2, (int64_t[]){ N, M });
	struct hgc_tir_tensor *y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 2, (int64_t[]){ N, M });
	struct hgc_tir_tensor *flat = hgc_tir_tensor_newc(m, "S", TY(F32), HGC_TIR_LOCAL, 1,
							  (int64_t[]){ N * M });
	bool split = k == SPLIT || k == SPLIT_OTHER;
	struct hgc_tir_tensor *t = hgc_tir_tensor_newc(m, "T", TY(F32), HGC_TIR_LOCAL, 2,
						       (int64_t[]){ N, M });
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j"), *i2 = ivar(m, "i"),
			   *i3 = ivar(m, "i"), *j3 = ivar(m, "j");
	struct hgc_tir_stmt *b;

	m->entry = f;
	hgc_tir_def_tensor(m, f->body, t);
	b = jloop(m, hgc_tir_body(hgc_tir_for(m, f->body, i, I(0), I(N), NULL)), j, I(0), I(M), 1);
	ST2(b, t, V(i), V(j), F32C(0));
	if (split) {	/* a 1-D destination, zeroed first */
		hgc_tir_def_tensor(m, f->body, flat);
		struct hgc_tir_var *e = ivar(m, "e");

		b = jloop(m, f->body, e, I(0), I(N * M), 1);
		ST1(b, flat, V(e), F32C(0));
		copy_loop(m, hgc_tir_body(hgc_tir_for(m, f->body, i2, I(0), I(N), NULL)), k, i2,
			  flat, x, y);
	} else {
		copy_loop(m, hgc_tir_body(hgc_tir_for(m, f->body, i2, I(0), I(N), NULL)), k, i2,
			  t, x, y);
	}
	if (k != PARAMS) {
		b = jloop(m, hgc_tir_body(hgc_tir_for(m, f->body, i3, I(0), I(N), NULL)), j3, I(0),
			  I(M), 1);
		ST2(b, y, V(i3), V(j3),
		    hgc_tir_add(m, split ? LD1(flat, hgc_tir_add(m, hgc_tir_mul(m, V(i3), I(M)), V(j3)))
				      : LD2(t, V(i3), V(j3)), F32C(1)));
	}
	return m;
}

/* Run the TIR passes on m with every switch on but loop_fuse (which would fuse a case's
   loops into one before copy_loops sees them) and those in off (a comma list). */
static int passes(struct hgc_tir_module *m, const char *off)
{
	char list[128];

	snprintf(list, sizeof(list), "loop_fuse,%s", off ? off : "");
	return tir_passes_off(m, list, NULL, 1);
}

static const size_t xy[] = { N * M * sizeof(float), N * M * sizeof(float) };

/* Each kind: its copy calls after the passes, none with the pass off, same results. */
static void test_kinds(void)
{
	for (int k = 0; k < NKINDS; k++) {
		struct hgc_tir_module *m = build(k);
		char *s;

		is_int(passes(m, NULL), 0, "%s: the passes run", kinds[k].name);
		s = hgc_tir_module_str(m);
		if (!ok(dc_count(s, "copy(") == kinds[k].copies, "%s: %d copy call%s",
			kinds[k].name, kinds[k].copies, kinds[k].copies == 1 ? "" : "s"))
			diag("%s", s);
		if (k == GUARD)
			ok(dc_has(s, "if (i_1 < 40) {\n        copy(&T[i_1 * 32 + 0], &X[i_1, 0], 32);"),
			   "the check stays around the copy, which covers the row");
		if (k == VAR)
			ok(dc_has(s, "max(0, min(i_1, 32) - 0)"), "a variable length never below 0");
		if (k == OFFSET)
			ok(dc_has(s, "copy(&T[i_1 * 32 + (2 - 2)], &X[i_1, 2], 30)"),
			   "an offset range starts at its first element and folds its length");
		free(s);
		tir_same_results(build(k), m, 2, xy, kinds[k].name);
	}
	{
		struct hgc_tir_module *m = build(PLAIN);
		char *s;

		passes(m, "copy_loops");
		s = hgc_tir_module_str(m);
		is_int(dc_count(s, "copy("), 0, "pass copy_loops = off leaves the loop");
		free(s);
		hgc_tir_module_free(m);
	}
}

/* A MatMul with an odd K: its packing loops (A in the entry, the constant B in init)
   become copies; the numbers match the interpreter on both backends, on and off. */
static void test_matmul(void)
{
	static const char src[] =
		"spec mm_odd_k {\n"
		"  input x : f32[40, 479];\n"
		"  const w : f32[479, 96] = uniform(lo = -0.3, hi = 0.3);\n"
		"  y = MatMul(x, w);\n"
		"  output y;\n"
		"  expect { rtol = 1e-4; atol = 1e-5; }\n"
		"}\n";
	static const struct hgc_tmpl_rule off = {"pass", "copy_loops", "off", {0}};
	static const enum hgc_driver_backend backends[] = { HGC_DRIVER_JIT, HGC_DRIVER_C };
	struct hgc_program p;
	const struct hgc_spec *sp;
	char *s, *s_off;

	dc_load(&p, "mm_odd_k.hgc", src);
	sp = HGC_PROGRAM_SPEC(&p, 0);
	s = dc_tir_text(sp->graph, 1, NULL, NULL);
	s_off = dc_tir_text(sp->graph, 1, &off, NULL);
	ok(dc_count(s, "copy(") >= 2, "the packing of A and of B are copies");
	ok(dc_has(s, "if ("), "B's padding check stays around its copy");
	is_int(dc_count(s_off, "copy("), 0, "with the pass off they are loops");
	free(s);
	free(s_off);
	for (int b = 0; b < 2; b++)
		for (int threads = 1; threads <= 2; threads++) {
			dc_run_ok(sp, backends[b], threads, NULL);
			dc_run_ok(sp, backends[b], threads, &off);
		}
	hgc_program_release(&p);
}

int main(void)
{
	test_kinds();
	test_matmul();
	done_testing();
}
