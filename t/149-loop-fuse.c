/*
 * 149-loop-fuse: the loop_fuse pass (core/tir/passes/lfuse.c).  On modules
 * built by hand: neighbouring elementwise nests over the same ranges become
 * one (also from nested blocks, also three in a row), and the nests it must
 * leave apart stay apart: a shifted read of what the first wrote, other
 * ranges, parameters read at another index than a parameter is written, a
 * per-element libm call on one side only, a store that several iterations
 * share, a reduction.  Each runs through the JIT before and after the
 * passes with the same results.  On lowered graphs: a region of
 * elementwise ops and a chain of 200 Adds lose their loops to one nest per
 * parallel loop (the chain compiled in seconds before), and match the
 * interpreter on both backends with the pass on and off.
 */
#include "t/driver_check.h"
#include "t/llvm_check.h"
#include "t/tir/passes_check.h"

#include <stdlib.h>
#include <string.h>

#define N 16
#define M 32

/* The second nest of a case, after `for i, j: T[i, j] = X[i, j] * 2`. */
enum kind { PLAIN, BLOCKS, THREE, SHIFT, RANGE, PARAM_IDX, CALL_ONE, CALL_BOTH, SHARED,
	    REDUCE, NKINDS };

static const struct {
	const char *name;
	int nests;		/* loop nests after the passes (Y's stays apart but in THREE) */
} kinds[NKINDS] = {
	[PLAIN] = {"two elementwise nests", 2},
	[BLOCKS] = {"two nests in nested blocks", 2},
	[THREE] = {"three nests in a row", 1},
	[SHIFT] = {"a read of the element the next iteration writes", 3},
	[RANGE] = {"nests over other ranges", 3},
	[PARAM_IDX] = {"a parameter read at another index than one is written", 3},
	[CALL_ONE] = {"a libm call in one nest only", 3},
	[CALL_BOTH] = {"libm calls in both nests", 2},
	[SHARED] = {"a store every j of a row shares", 3},
	[REDUCE] = {"a reduction into a scalar", 3},
};

/* for (i in [0, N)) for (j in [0, m)) in block b: the inner body. */
static struct hgc_tir_stmt *nest(struct hgc_tir_module *m, struct hgc_tir_stmt *b,
				 struct hgc_tir_var **i, struct hgc_tir_var **j, int64_t cols)
{
	struct hgc_tir_stmt *outer;

	*i = ivar(m, "i");
	*j = ivar(m, "j");
	outer = hgc_tir_for(m, b, *i, I(0), I(N), NULL);
	return hgc_tir_body(hgc_tir_for(m, hgc_tir_body(outer), *j, I(0), I(cols), NULL));
}

/* tanh(x) when k asks for a call there, else x. */
static struct hgc_tir_expr *maybe_tanh(struct hgc_tir_module *m, struct hgc_tir_expr *x,
				       bool call)
{
	return call ? hgc_tir_intrinv(m, HGC_TIR_I_TANH, 1, x) : x;
}

/* entry(X[N, M], Y[N, M]): the first nest T = X * 2, the case's second nest, then
   Y = T + 1 in a nest of its own, which fuses with T's when it can. */
static struct hgc_tir_module *build(enum kind k)
{
	struct hgc_tir_module *m = hgc_tir_module_new("fuse");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "entry", TY(VOID));
	struct hgc_tir_tensor *x = hgc_tir_func_add_tensor(f, "X", TY(F32), 2, (int64_t[]){ N, M });
	struct hgc_tir_tensor *y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 2, (int64_t[]){ N, M });
	struct hgc_tir_tensor *t = hgc_tir_tensor_newc(m, "T", TY(F32), HGC_TIR_LOCAL, 2,
						       (int64_t[]){ N, M });
	struct hgc_tir_var *i, *j, *acc = hgc_tir_var_new(m, "acc", TY(F32));
	struct hgc_tir_stmt *b, *blk = f->body;
	bool call = k == CALL_BOTH;

	m->entry = f;
	hgc_tir_def_tensor(m, f->body, t);
	if (k == REDUCE)
		hgc_tir_let(m, f->body, acc, F32C(0));
	b = nest(m, blk, &i, &j, M);
	ST2(b, t, V(i), V(j), maybe_tanh(m, BIN(MUL, LD2(x, V(i), V(j)), F32C(2)), call));
	if (k == BLOCKS)
		blk = hgc_tir_block(m, hgc_tir_block(m, f->body));
	switch (k) {
	case SHIFT:
		b = nest(m, blk, &i, &j, M);
		ST2(b, t, V(i), V(j), LD2(t, V(i), BIN(MIN, hgc_tir_add(m, V(j), I(1)), I(M - 1))));
		break;
	case RANGE:
		b = nest(m, blk, &i, &j, M - 1);
		ST2(b, t, V(i), V(j), BIN(ADD, LD2(t, V(i), V(j)), F32C(3)));
		break;
	case PARAM_IDX:	/* writes Y[i, j] from X[i, M - 1 - j]; the first read X[i, j] */
		b = nest(m, blk, &i, &j, M);
		ST2(b, y, V(i), V(j), BIN(ADD, LD2(t, V(i), V(j)),
					  LD2(x, V(i), hgc_tir_sub(m, I(M - 1), V(j)))));
		break;
	case CALL_ONE:
	case CALL_BOTH:
		b = nest(m, blk, &i, &j, M);
		ST2(b, t, V(i), V(j), maybe_tanh(m, LD2(t, V(i), V(j)), true));
		break;
	case SHARED:	/* T[i, 0] = T[i, 0] + T[i, j]: every j of row i writes T[i, 0] */
		b = nest(m, blk, &i, &j, M);
		ST2(b, t, V(i), I(0), BIN(ADD, LD2(t, V(i), I(0)), LD2(t, V(i), V(j))));
		break;
	case REDUCE:
		b = nest(m, blk, &i, &j, M);
		hgc_tir_assign(m, b, acc, BIN(ADD, V(acc), LD2(t, V(i), V(j))));
		ST2(b, t, V(i), V(j), V(acc));
		break;
	default:	/* PLAIN, BLOCKS, THREE: T = T - 1 */
		b = nest(m, blk, &i, &j, M);
		ST2(b, t, V(i), V(j), BIN(SUB, LD2(t, V(i), V(j)), F32C(1)));
		break;
	}
	if (k == THREE) {
		b = nest(m, blk, &i, &j, M);
	} else {	/* Y's nest apart from T's: in a block that defines a tensor */
		struct hgc_tir_stmt *own = hgc_tir_block(m, f->body);

		hgc_tir_def_tensor(m, own, hgc_tir_tensor_newc(m, "U", TY(F32), HGC_TIR_LOCAL, 1,
							       (int64_t[]){ 1 }));
		b = nest(m, own, &i, &j, M);
	}
	ST2(b, y, V(i), V(j), BIN(ADD, LD2(t, V(i), V(j)), F32C(1)));
	return m;
}

static const size_t xy[] = { N * M * sizeof(float), N * M * sizeof(float) };

/* Each kind: its nests after the passes, and the same results. */
static void test_kinds(void)
{
	for (int k = 0; k < NKINDS; k++) {
		struct hgc_tir_module *m = build(k);
		char *s;

		is_int(tir_passes_off(m, NULL, NULL, 1), 0, "%s: the passes run", kinds[k].name);
		s = hgc_tir_module_str(m);
		if (!ok(dc_count(s, "for (i") == kinds[k].nests, "%s: %d nest%s", kinds[k].name,
			kinds[k].nests, kinds[k].nests == 1 ? "" : "s"))
			diag("%s", s);
		free(s);
		tir_same_results(build(k), m, 2, xy, kinds[k].name);
	}
	{
		struct hgc_tir_module *m = build(PLAIN);
		char *s;

		tir_passes_off(m, "loop_fuse", NULL, 1);
		s = hgc_tir_module_str(m);
		is_int(dc_count(s, "for (i"), 3, "pass loop_fuse = off leaves the nests apart");
		free(s);
		hgc_tir_module_free(m);
	}
}

/* The serial loops of a printed module. */
static int serial_loops(const char *s)
{
	return dc_count(s, "for (") - dc_count(s, "parallel for (");
}

/* A region of elementwise ops and a chain of Adds: one nest per parallel loop; the
   numbers. */
static void test_graphs(void)
{
	static const struct hgc_tmpl_rule off = {"pass", "loop_fuse", "off", {0}};
	static const enum hgc_driver_backend backends[] = { HGC_DRIVER_JIT, HGC_DRIVER_C };
	struct hgc_program p;
	char *src = hgc_xcalloc(1, 1 << 16), *at = src;

	at += sprintf(at, "spec region {\n  input x : f32[24, 40];\n  input z : f32[24, 40];\n"
			  "  s = Add(x, z);\n  m = Multiply(s, z);\n  g = GELU(m);\n"
			  "  y = Sigmoid(g);\n  output y;\n  expect { rtol = 1e-4; atol = 1e-5; }\n}\n");
	at += sprintf(at, "spec chain200 {\n  input x : f32[16, 24];\n  input z : f32[16, 24];\n"
			  "  a0 = Add(x, z);\n");
	for (int i = 1; i < 200; i++)
		at += sprintf(at, "  a%d = Add(a%d, z);\n", i, i - 1);
	sprintf(at, "  output a199;\n  expect { rtol = 1e-4; atol = 1e-3; }\n}\n");
	dc_load(&p, "fuse.hgc", src);
	for (size_t k = 0; k < p.specs.len; k++) {
		const struct hgc_spec *sp = HGC_PROGRAM_SPEC(&p, k);
		char *s = dc_tir_text(sp->graph, 1, NULL, NULL);
		char *s_off = dc_tir_text(sp->graph, 1, &off, NULL);

		if (!ok(serial_loops(s) == 2 * dc_count(s, "parallel for ("),
			"%s: one nest of two loops per parallel loop (%d of them)", sp->name,
			dc_count(s, "parallel for (")))
			diag("%s", s);
		ok(serial_loops(s_off) > 4, "%s: with the pass off, a nest per op (%d loops)",
		   sp->name, serial_loops(s_off));
		free(s);
		free(s_off);
		for (int b = 0; b < 2; b++) {
			dc_run_ok(sp, backends[b], 2, NULL);
			dc_run_ok(sp, backends[b], 2, &off);
		}
	}
	hgc_program_release(&p);
	free(src);
}

int main(void)
{
	test_kinds();
	test_graphs();
	done_testing();
}
