/*
 * 053-tir-passes: the Tensor IR passes on modules built by hand.  Each
 * case builds a module twice: one copy runs as built, the other after the
 * passes (core/tir/passes), both through the JIT, and every output must
 * match bit for bit; the printed module after the passes says what the
 * passes did (one parallel for, a shrunk tensor, a linear index, shared
 * buffers), and the buffer plan gives its figures.  The cases that must be
 * left alone are here too: parallel loops whose iterations depend on each
 * other, of other ranges or groups; temporaries used across loops or
 * carried from one iteration to the next; an address kept in a pointer
 * tensor (aliasing); an elementwise loop that visits elements twice.
 */
#include "core/tir/passes/tir_passes.h"
#include "t/llvm_check.h"
#include "t/tir/passes_check.h"

#include <stdlib.h>
#include <string.h>

#define N 64
#define M 32

/* A module with one entry function over X[N, M] (input) and Y[N, M] (output). */
static struct hgc_tir_func *entry(struct hgc_tir_module *m, struct hgc_tir_tensor **x,
				  struct hgc_tir_tensor **y)
{
	struct hgc_tir_func *f = hgc_tir_func_new(m, "entry", TY(VOID));

	*x = hgc_tir_func_add_tensor(f, "X", TY(F32), 2, (int64_t[]){ N, M });
	*y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 2, (int64_t[]){ N, M });
	m->entry = f;
	return f;
}

/* A local f32 temporary of rows x cols (not yet defined anywhere). */
static struct hgc_tir_tensor *f32_local(struct hgc_tir_module *m, const char *name, int64_t rows,
					int64_t cols)
{
	return hgc_tir_tensor_newc(m, name, TY(F32), HGC_TIR_LOCAL, 2, (int64_t[]){ rows, cols });
}

/* parallel for (i in [0, end)) merge group: for (j in [0, M)) dst[i, j] = op(src[si, j]). */
static void pfor_map(struct hgc_tir_module *m, struct hgc_tir_stmt *b, int group, int64_t end,
		     struct hgc_tir_tensor *dst, struct hgc_tir_tensor *src, bool flip,
		     enum hgc_tir_binop op, double c)
{
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j");
	struct hgc_tir_expr *beg = I(0), *e = I(end);
	struct hgc_tir_stmt *p = hgc_tir_pfor(m, b, 1, &i, &beg, &e, NULL), *l;
	struct hgc_tir_expr *si = flip ? hgc_tir_sub(m, I(end - 1), V(i)) : V(i);

	p->u.pfor.merge_group = group;
	l = hgc_tir_for(m, hgc_tir_body(p), j, I(0), I(M), NULL);
	ST2(hgc_tir_body(l), dst, V(i), V(j), hgc_tir_binary(m, op, LD2(src, si, V(j)), F32C(c)));
}

/* Three elementwise parallel loops X -> T -> U -> Y through temporaries. */
static struct hgc_tir_module *chain(int g1, int g2, int g3, bool flip, int64_t end2)
{
	struct hgc_tir_module *m = hgc_tir_module_new("chain");
	struct hgc_tir_tensor *x, *y, *t, *u;
	struct hgc_tir_func *f = entry(m, &x, &y);

	t = f32_local(m, "T", N, M);
	u = f32_local(m, "U", N, M);
	hgc_tir_def_tensor(m, f->body, t);
	pfor_map(m, f->body, g1, N, t, x, false, HGC_TIR_MUL, 2);
	hgc_tir_def_tensor(m, f->body, u);
	pfor_map(m, f->body, g2, end2, u, t, flip, HGC_TIR_ADD, 1);
	pfor_map(m, f->body, g3, N, y, u, false, HGC_TIR_MAX, 0);
	return m;
}

/* The chain as lowering emits fused ops: each loop in a block of its own, after the
   block's own definitions ({ tensor W; loop } { tensor V; loop } { loop }). */
static struct hgc_tir_module *chain_blocks(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("blocks");
	struct hgc_tir_tensor *x, *y, *t, *u;
	struct hgc_tir_func *f = entry(m, &x, &y);
	struct hgc_tir_stmt *b;

	t = f32_local(m, "T", N, M);
	u = f32_local(m, "U", N, M);
	hgc_tir_def_tensor(m, f->body, t);
	hgc_tir_def_tensor(m, f->body, u);
	b = hgc_tir_block(m, f->body);
	hgc_tir_def_tensor(m, b, hgc_tir_tensor_newc(m, "W", TY(F32), HGC_TIR_LOCAL, 1,
						     (int64_t[]){ 4 }));
	pfor_map(m, b, 3, N, t, x, false, HGC_TIR_MUL, 2);
	b = hgc_tir_block(m, f->body);
	hgc_tir_def_tensor(m, b, hgc_tir_tensor_newc(m, "V", TY(F32), HGC_TIR_LOCAL, 1,
						     (int64_t[]){ 4 }));
	pfor_map(m, b, 3, N, u, t, false, HGC_TIR_ADD, 1);
	pfor_map(m, hgc_tir_block(m, f->body), 3, N, y, u, false, HGC_TIR_MAX, 0);
	return m;
}

/* n elementwise loops X -> T1 -> ... -> Y of one group, each in a block of its own as
   lowering emits them; the loop at flip (if in range) reads rows mirrored. */
static struct hgc_tir_module *long_chain(int n, int flip)
{
	struct hgc_tir_module *m = hgc_tir_module_new("long");
	struct hgc_tir_tensor *x, *y, *prev, *t;
	struct hgc_tir_func *f = entry(m, &x, &y);

	prev = x;
	for (int k = 0; k < n; k++) {
		t = k == n - 1 ? y : f32_local(m, "T", N, M);
		if (k < n - 1)
			hgc_tir_def_tensor(m, f->body, t);
		pfor_map(m, hgc_tir_block(m, f->body), 1, N, t, prev, k == flip, HGC_TIR_ADD, 1);
		prev = t;
	}
	return m;
}

/* As long_chain, but the even loops stand bare in the function's body and the odd ones
   in a block of their own after a definition: merging a bare loop with such a block
   moves the definition into the body, before the merged loop (and the loop at flip
   reads rows mirrored). */
static struct hgc_tir_module *mixed_chain(int n, int flip)
{
	struct hgc_tir_module *m = hgc_tir_module_new("mixed");
	struct hgc_tir_tensor *x, *y, *prev, *t;
	struct hgc_tir_func *f = entry(m, &x, &y);
	struct hgc_tir_stmt *b;

	prev = x;
	for (int k = 0; k < n; k++) {
		t = k == n - 1 ? y : f32_local(m, "T", N, M);
		if (k < n - 1)
			hgc_tir_def_tensor(m, f->body, t);
		b = f->body;
		if (k % 2) {
			b = hgc_tir_block(m, f->body);
			hgc_tir_def_tensor(m, b, hgc_tir_tensor_newc(m, "W", TY(F32), HGC_TIR_LOCAL,
								     1, (int64_t[]){ 4 }));
		}
		pfor_map(m, b, 1, N, t, prev, k == flip, HGC_TIR_ADD, 1);
		prev = t;
	}
	return m;
}

/* The deepest indentation of a line of s, in spaces. */
static int deepest(const char *s)
{
	int best = 0, n;

	for (const char *l = s; *l; l += n, l += *l == '\n') {
		int ind = (int)strspn(l, " ");

		n = (int)strcspn(l, "\n");
		best = ind > best ? ind : best;
	}
	return best;
}

/* The same for one thread. */
static int passes(struct hgc_tir_module *m, const char *off, struct hgc_tir_plan *plan)
{
	return tir_passes_off(m, off, plan, 1);
}

/* Count the occurrences of needle in hay. */
static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *s = hay; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

static const size_t xy[] = { N * M * 4, N * M * 4 };

/* Parallel merge: one loop when iterations keep to their rows; else two or three. */
/* build(n, flip) after parallel_merge: loops parallel fors, the results unchanged; its
   TIR as text (the caller frees it). */
static char *merged_chain(struct hgc_tir_module *(*build)(int, int), int n, int flip, int loops,
			  const char *what, const char *results)
{
	struct hgc_tir_module *m = build(n, flip);
	char *s;

	passes(m, "tensor_shrink,buffer_reuse,index_flatten", NULL);
	s = hgc_tir_module_str(m);
	is_int(count(s, "parallel for"), loops, "%s", what);
	tir_same_results(build(n, flip), m, 2, xy, results);
	return s;
}

static void test_merge(void)
{
	struct hgc_tir_module *m = chain(1, 1, 1, false, N);
	char *s;

	is_int(passes(m, "tensor_shrink,buffer_reuse,index_flatten", NULL), 0, "merge runs");
	s = hgc_tir_module_str(m);
	is_int(count(s, "parallel for"), 1, "three row-wise loops of one group merge into one");
	ok(strstr(s, "tensor T: f32[64, 32];\n    tensor U: f32[64, 32];\n    parallel for") != NULL,
	   "the tensor definition between the loops moves before the merged loop");
	free(s);
	tir_same_results(chain(1, 1, 1, false, N), m, 2, xy, "merged chain");

	m = chain_blocks();
	passes(m, "tensor_shrink,buffer_reuse,index_flatten", NULL);
	s = hgc_tir_module_str(m);
	is_int(count(s, "parallel for"), 1, "loops in blocks of their own (as lowering emits) merge");
	ok(strstr(s, "tensor W: f32[4];\n      tensor V: f32[4];\n      parallel for") != NULL,
	   "the second block's definitions move before the merged loop");
	free(s);
	tir_same_results(chain_blocks(), m, 2, xy, "merged blocks");

	s = merged_chain(long_chain, 40, -1, 1, "a chain of 40 loops merges into one",
			 "merged long chain");
	ok(deepest(s) <= 40, "its bodies nest about log2(40) blocks deep, not 40 (%d spaces)",
	   deepest(s));
	free(s);
	free(merged_chain(mixed_chain, 9, -1, 1, "bare loops and loops in blocks of their own: one loop",
			  "merged mixed chain"));
	free(merged_chain(mixed_chain, 9, 2, 2, "a mirrored third loop: loops 0-1 and 2-8",
			  "mixed chain with a mirrored loop"));
	free(merged_chain(long_chain, 40, 17, 2, "a mirrored loop at 17 of 40: two loops, 0-16 and 17-39",
			  "long chain with a mirrored loop"));

	m = chain(1, 1, 1, true, N);
	passes(m, NULL, NULL);
	s = hgc_tir_module_str(m);
	is_int(count(s, "parallel for"), 2, "a loop reading another iteration's row stays apart");
	free(s);
	tir_same_results(chain(1, 1, 1, true, N), m, 2, xy, "flipped chain");

	m = chain(1, 1, 1, false, N - 1);
	passes(m, "tensor_shrink", NULL);
	s = hgc_tir_module_str(m);
	is_int(count(s, "parallel for"), 3, "loops with other ranges stay apart");
	free(s);
	hgc_tir_module_free(m);

	m = chain(1, 2, 0, false, N);
	passes(m, "tensor_shrink", NULL);
	s = hgc_tir_module_str(m);
	is_int(count(s, "parallel for"), 3, "loops of other groups or none stay apart");
	free(s);
	hgc_tir_module_free(m);
}

/* Tensor shrink after the merge: T and U become one row inside the loop. */
static void test_shrink_chain(void)
{
	struct hgc_tir_module *m = chain(1, 1, 1, false, N);
	char *s;

	passes(m, "index_flatten,buffer_reuse", NULL);
	s = hgc_tir_module_str(m);
	ok(strstr(s, "parallel for (i in [0, 64)) merge 1 {\n      tensor U: f32[1, 32];\n"
		     "      tensor T: f32[1, 32];") != NULL,
	   "the temporaries shrink to one row, defined in the loop");
	ok(strstr(s, "T[0, j] = X[i, j] * 2.0f") != NULL, "their index loses the row");
	if (!strstr(s, "T[0, j]"))
		diag("%s", s);
	free(s);
	tir_same_results(chain(1, 1, 1, false, N), m, 2, xy, "shrunk chain");
}

/* Row sums through a temporary T[N, M]: per row (shrinks), or all rows first
   (used across loops: stays), or one row reused by every i (carried: stays). */
static struct hgc_tir_module *rowsum(int kind)
{
	struct hgc_tir_module *m = hgc_tir_module_new("rowsum");
	struct hgc_tir_tensor *x, *y;
	struct hgc_tir_func *f = entry(m, &x, &y);
	struct hgc_tir_tensor *t = hgc_tir_tensor_newc(m, "T", TY(F32), HGC_TIR_LOCAL, 2,
						       (int64_t[]){ N, M });
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j"), *j2 = ivar(m, "j");
	struct hgc_tir_var *acc = hgc_tir_var_new(m, "acc", TY(F32));
	struct hgc_tir_stmt *li, *b, *l2;
	struct hgc_tir_expr *row = kind == 2 ? I(0) : V(i);

	hgc_tir_def_tensor(m, f->body, t);
	li = hgc_tir_for(m, f->body, i, I(0), I(N), NULL);
	b = hgc_tir_body(li);
	ST2(hgc_tir_body(hgc_tir_for(m, b, j, I(0), I(M), NULL)), t, row, V(j),
	    BIN(MUL, LD2(x, V(i), V(j)), LD2(x, V(i), V(j))));
	if (kind == 1) {
		i = ivar(m, "i");
		b = hgc_tir_body(hgc_tir_for(m, f->body, i, I(0), I(N), NULL));
		row = V(i);
	}
	hgc_tir_let(m, b, acc, F32C(0));
	l2 = hgc_tir_for(m, b, j2, I(0), I(M), NULL);
	hgc_tir_assign(m, hgc_tir_body(l2), acc, BIN(ADD, V(acc), LD2(t, hgc_tir_expr_copy(m, row), V(j2))));
	ST2(b, y, V(i), I(0), V(acc));
	return m;
}

/* Shrink alone on sequential loops. */
static void test_shrink(void)
{
	struct hgc_tir_module *m = rowsum(0);
	char *s;

	passes(m, "index_flatten,buffer_reuse", NULL);
	s = hgc_tir_module_str(m);
	ok(strstr(s, "for (i in [0, 64)) {\n      tensor T: f32[1, 32];") != NULL,
	   "a row temporary shrinks to one row inside its loop");
	free(s);
	tir_same_results(rowsum(0), m, 2, xy, "row sums");
	for (int kind = 1; kind <= 2; kind++) {
		m = rowsum(kind);
		passes(m, "index_flatten,buffer_reuse", NULL);
		s = hgc_tir_module_str(m);
		ok(strstr(s, "tensor T: f32[64, 32];") != NULL,
		   kind == 1 ? "a temporary used across two loops keeps its size"
			     : "a temporary whose slice does not move with the loop keeps its size");
		free(s);
		tir_same_results(rowsum(kind), m, 2, xy, kind == 1 ? "two loops" : "carried row");
	}
}

/* for (i) { for (j < cols) T[i, j] = X[i, 0] * X[i, 0]; Y[i, col] = sum of T[i, :] }. */
static void square_rows(struct hgc_tir_module *m, struct hgc_tir_stmt *blk, struct hgc_tir_tensor *x,
			struct hgc_tir_tensor *y, struct hgc_tir_tensor *t, int64_t cols, int col)
{
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j"), *j2 = ivar(m, "j");
	struct hgc_tir_var *acc = hgc_tir_var_new(m, "acc", TY(F32));
	struct hgc_tir_stmt *b = hgc_tir_body(hgc_tir_for(m, blk, i, I(0), I(N), NULL)), *l;

	ST2(hgc_tir_body(hgc_tir_for(m, b, j, I(0), I(cols), NULL)), t, V(i), V(j),
	    BIN(MUL, LD2(x, V(i), I(0)), LD2(x, V(i), I(0))));
	hgc_tir_let(m, b, acc, F32C(0));
	l = hgc_tir_for(m, b, j2, I(0), I(cols), NULL);
	hgc_tir_assign(m, hgc_tir_body(l), acc, BIN(ADD, V(acc), LD2(t, V(i), V(j2))));
	ST2(b, y, V(i), I(col), V(acc));
}

/* Two such nests, over T then U [N, cols]: reuse alone would share one buffer. */
static struct hgc_tir_module *two_rows(int64_t cols)
{
	struct hgc_tir_module *m = hgc_tir_module_new("two_rows");
	struct hgc_tir_tensor *x, *y, *t, *u;
	struct hgc_tir_func *f = entry(m, &x, &y);

	t = f32_local(m, "T", N, cols);
	u = f32_local(m, "U", N, cols);
	hgc_tir_def_tensor(m, f->body, t);
	square_rows(m, f->body, x, y, t, cols, 0);
	hgc_tir_def_tensor(m, f->body, u);
	square_rows(m, f->body, x, y, u, cols, 1);
	return m;
}

/* Slices of a few KiB shrink before buffer_reuse (a shared buffer would keep them
   whole tensors); larger ones are shared first, as before. */
static void test_shrink_small_first(void)
{
	struct hgc_tir_module *m = two_rows(M);
	char *s;

	is_int(passes(m, NULL, NULL), 0, "every pass on: two row temporaries of 128 bytes");
	s = hgc_tir_module_str(m);
	ok(!strstr(s, "f32[2048]") && !strstr(s, "tensor T: f32[64") && !strstr(s, "tensor U: f32[64") &&
	   (strstr(s, "tensor scratch: f32[32];") || strstr(s, "tensor T: f32[32];")),
	   "both shrink to a row (sharing a row's buffer at most), not into one whole buffer");
	if (strstr(s, "f32[2048]"))
		diag("%s", s);
	free(s);
	tir_same_results(two_rows(M), m, 2, xy, "small rows first");

	m = two_rows(2048);
	passes(m, NULL, NULL);
	s = hgc_tir_module_str(m);
	ok(strstr(s, "tensor scratch: f32[131072];") && !strstr(s, "tensor T"),
	   "rows of 8 KiB: reuse shares one buffer first, and it stays whole");
	if (!strstr(s, "tensor scratch"))
		diag("%s", s);
	free(s);
	tir_same_results(two_rows(2048), m, 2, xy, "large rows");
}

/* Flattening: the temporary becomes one-dimensional with a linear index. */
static void test_flatten(void)
{
	struct hgc_tir_module *m = rowsum(1);
	char *s;

	is_int(passes(m, "buffer_reuse", NULL), 0, "flatten runs");
	s = hgc_tir_module_str(m);
	ok(strstr(s, "tensor T: f32[2048];") && strstr(s, "T[i * 32 + j] = "),
	   "a 64 x 32 temporary becomes f32[2048] indexed i * 32 + j");
	ok(strstr(s, "X[i, j]") != NULL, "parameters keep their dims");
	free(s);
	tir_same_results(rowsum(1), m, 2, xy, "flattened");
}

/* for (i in [0, N * M)) dst[i] = a[i] op b[i] (b NULL: op with a constant), times reps. */
static void map1(struct hgc_tir_module *m, struct hgc_tir_stmt *blk, struct hgc_tir_tensor *dst,
		 struct hgc_tir_tensor *a, struct hgc_tir_tensor *b, enum hgc_tir_binop op,
		 int reps)
{
	struct hgc_tir_var *i = ivar(m, "i"), *r = ivar(m, "r");
	struct hgc_tir_stmt *l = hgc_tir_for(m, blk, i, I(0), I(N * M), NULL);

	if (reps > 1)
		l = hgc_tir_for(m, hgc_tir_body(l), r, I(0), I(reps), NULL);
	ST1(hgc_tir_body(l), dst, V(i),
	    hgc_tir_binary(m, op, LD1(a, V(i)), b ? LD1(b, V(i)) : F32C(1.5)));
}

/* A = X + 1.5; B = A * 1.5; C = B - A (in place of A or B); Y = C * C; with reps, the
   C loop runs twice per element (not in place). */
static struct hgc_tir_module *elementwise(int reps)
{
	struct hgc_tir_module *m = hgc_tir_module_new("ew");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "entry", TY(VOID));
	struct hgc_tir_tensor *x = hgc_tir_func_add_tensor(f, "X", TY(F32), 1, (int64_t[]){ N * M });
	struct hgc_tir_tensor *y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 1, (int64_t[]){ N * M });
	struct hgc_tir_tensor *t[3];

	m->entry = f;
	for (int k = 0; k < 3; k++) {
		t[k] = hgc_tir_tensor_newc(m, k == 0 ? "A" : k == 1 ? "B" : "C", TY(F32), HGC_TIR_LOCAL,
					   1, (int64_t[]){ N * M });
		hgc_tir_def_tensor(m, f->body, t[k]);
	}
	map1(m, f->body, t[0], x, NULL, HGC_TIR_ADD, 1);
	map1(m, f->body, t[1], t[0], NULL, HGC_TIR_MUL, 1);
	map1(m, f->body, t[2], t[1], t[0], HGC_TIR_SUB, reps);
	map1(m, f->body, y, t[2], t[2], HGC_TIR_MUL, 1);
	return m;
}

/* The plan's entry for temporary name, or NULL. */
static const struct hgc_tir_plan_temp *temp(const struct hgc_tir_plan *p, const char *name)
{
	for (int i = 0; i < p->ntemps; i++)
		if (!strcmp(p->temps[i].name, name))
			return &p->temps[i];
	return NULL;
}

/* Buffer reuse with an in-place elementwise consumer, and without (an element visited twice). */
static void test_reuse(void)
{
	struct hgc_tir_passes p;
	struct hgc_tir_module *m = elementwise(1);
	const struct hgc_tir_plan_temp *c;
	char *s;

	is_int(passes(m, NULL, &p.plan), 0, "reuse runs");
	c = temp(&p.plan, "C");
	ok(p.plan.done && p.plan.ntemps == 3 && p.plan.nbuffers == 2,
	   "three temporaries in two buffers");
	ok(c && c->inplace && (c->buffer == temp(&p.plan, "B")->buffer ||
			       c->buffer == temp(&p.plan, "A")->buffer),
	   "C overwrites an input in place (A and B die in the loop that writes C)");
	is_int((int)p.plan.bytes_noreuse, 3 * N * M * 4, "no reuse: three buffers");
	is_int((int)p.plan.bytes_reuse, 2 * N * M * 4, "with reuse: two");
	is_int((int)p.plan.bytes_final, 2 * N * M * 4, "the entry's scratch after the passes");
	s = hgc_tir_plan_text(&p.plan);
	ok(strstr(s, "C (in place)") != NULL, "the plan text names the sharing");
	if (!strstr(s, "C (in place)"))
		diag("%s", s);
	free(s);
	hgc_tir_passes_release(&p);
	s = hgc_tir_module_str(m);
	ok(strstr(s, "tensor scratch: f32[2048];") && !strstr(s, "tensor C"),
	   "C and the input it overwrites become one scratch tensor");
	free(s);
	tir_same_results(elementwise(1), m, 2, xy, "in place");

	m = elementwise(2);
	passes(m, NULL, &p.plan);
	c = temp(&p.plan, "C");
	ok(c && !c->inplace && p.plan.nbuffers == 3,
	   "an elementwise loop that visits each element twice is not in place");
	hgc_tir_passes_release(&p);
	tir_same_results(elementwise(2), m, 2, xy, "visited twice");
}

/* for (r in [0, N / 2)) for (j in [0, M)) dst[p * N / 2 + r, j] = src[same or the
   half's rows reversed, j] op c: one stage of a parallel loop's body. */
static void half_map(struct hgc_tir_module *m, struct hgc_tir_stmt *b, struct hgc_tir_var *p,
		     struct hgc_tir_tensor *dst, struct hgc_tir_tensor *src, bool flip,
		     enum hgc_tir_binop op, double c)
{
	struct hgc_tir_var *r = ivar(m, "r"), *j = ivar(m, "j");
	struct hgc_tir_stmt *lr = hgc_tir_for(m, b, r, I(0), I(N / 2), NULL);
	struct hgc_tir_stmt *lj = hgc_tir_for(m, hgc_tir_body(lr), j, I(0), I(M), NULL);
	struct hgc_tir_expr *base = hgc_tir_mul(m, V(p), I(N / 2));
	struct hgc_tir_expr *sr = flip ? hgc_tir_sub(m, I(N / 2 - 1), V(r)) : V(r);

	ST2(hgc_tir_body(lj), dst, hgc_tir_add(m, base, V(r)), V(j),
	    hgc_tir_binary(m, op, LD2(src, hgc_tir_add(m, base, sr), V(j)), F32C(c)));
}

/* One parallel loop over the two halves of the rows (a merged MLP's layers, each
   thread its rows): X -> T -> U -> W -> Y through shared temporaries, each stage
   reading the one before with the half's rows reversed (never in place). */
static struct hgc_tir_module *halves(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("halves");
	struct hgc_tir_tensor *x, *y, *t[3];
	struct hgc_tir_func *f = entry(m, &x, &y);
	struct hgc_tir_var *p = ivar(m, "p");
	struct hgc_tir_expr *beg = I(0), *end = I(2);
	struct hgc_tir_stmt *pf;

	for (int k = 0; k < 3; k++) {
		t[k] = f32_local(m, k == 0 ? "T" : k == 1 ? "U" : "W", N, M);
		hgc_tir_def_tensor(m, f->body, t[k]);
	}
	pf = hgc_tir_pfor(m, f->body, 1, &p, &beg, &end, NULL);
	half_map(m, hgc_tir_body(pf), p, t[0], x, false, HGC_TIR_MUL, 2);
	half_map(m, hgc_tir_body(pf), p, t[1], t[0], true, HGC_TIR_ADD, 1);
	half_map(m, hgc_tir_body(pf), p, t[2], t[1], true, HGC_TIR_MAX, 0);
	half_map(m, hgc_tir_body(pf), p, y, t[2], true, HGC_TIR_SUB, 3);
	return m;
}

/* The per-thread temporary named name in the plan, or NULL. */
static const struct hgc_tir_plan_temp *thread_temp(const struct hgc_tir_plan *p,
						   const char *name)
{
	for (int i = p->ntemps; i < p->ntemps + p->thread_ntemps; i++)
		if (!strcmp(p->temps[i].name, name))
			return &p->temps[i];
	return NULL;
}

/* Temporaries that live across one parallel loop share nothing as shared buffers
   (every thread is somewhere in the loop), but tensor_shrink gives each thread its
   half (two threads: as many bytes, only moved), and inside an iteration T dies
   before W is born: per-thread reuse puts them in one buffer.  Off, nothing moves. */
static void test_reuse_per_thread(void)
{
	const int64_t half = N / 2 * M * 4;
	struct hgc_tir_passes p;
	struct hgc_tir_module *m = halves();
	const struct hgc_tir_plan_temp *t, *u, *w;
	char *s;

	is_int(tir_passes_off(m, NULL, &p.plan, 2), 0, "per-thread reuse runs");
	t = thread_temp(&p.plan, "T");
	u = thread_temp(&p.plan, "U");
	w = thread_temp(&p.plan, "W");
	ok(p.plan.nbuffers == 3 && p.plan.thread_ntemps == 3 && p.plan.thread_nbuffers == 2,
	   "three shared buffers, then three per-thread temporaries in two buffers");
	ok(t && u && w && t->buffer == w->buffer && u->buffer != t->buffer,
	   "T and W share a buffer in each thread, U (live across both) does not");
	is_int((int)p.plan.bytes_final, (int)(2 * 2 * half),
	       "the scratch: two buffers of half the rows, per thread (three whole before)");
	is_int((int)p.plan.bytes_lowered, (int)(3 * 2 * half), "as lowered: three whole tensors");
	s = hgc_tir_plan_text(&p.plan);
	ok(strstr(s, "shared temporaries: none\n") &&
	   strstr(s, "per-thread temporaries (in parallel loops): 3 of 12.0 KiB in 2 buffers of "
		     "8.0 KiB, each thread") && strstr(s, ": T, W\n"),
	   "the plan text lists the moved temporaries per thread, T and W together");
	if (!strstr(s, ": T, W\n") || !strstr(s, "shared temporaries: none\n"))
		diag("%s", s);
	free(s);
	hgc_tir_passes_release(&p);
	s = hgc_tir_module_str(m);
	ok(count(s, "tensor scratch") == 1 && !strstr(s, "tensor T") && !strstr(s, "tensor W"),
	   "one scratch tensor replaces T and W");
	free(s);
	tir_same_results(halves(), m, 2, xy, "per-thread reuse");

	m = halves();
	tir_passes_off(m, "tensor_shrink", &p.plan, 2);
	ok(p.plan.thread_ntemps == 0 && p.plan.bytes_final == 3 * 2 * half,
	   "without tensor_shrink nothing moves and nothing is shared");
	hgc_tir_passes_release(&p);
	tir_same_results(halves(), m, 2, xy, "per-thread reuse, shrink off");
}

/* A's address kept in a pointer tensor and read by a copy after B is born: A must
   not lend its buffer to B. */
static struct hgc_tir_module *alias(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("alias");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "entry", TY(VOID));
	struct hgc_tir_tensor *x = hgc_tir_func_add_tensor(f, "X", TY(F32), 1, (int64_t[]){ N * M });
	struct hgc_tir_tensor *y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 1, (int64_t[]){ N * M });
	struct hgc_tir_tensor *z = hgc_tir_func_add_tensor(f, "Z", TY(F32), 1, (int64_t[]){ N * M });
	struct hgc_tir_tensor *a, *b, *p;
	int64_t all = N * M;

	m->entry = f;
	a = hgc_tir_tensor_newc(m, "A", TY(F32), HGC_TIR_LOCAL, 1, &all);
	b = hgc_tir_tensor_newc(m, "B", TY(F32), HGC_TIR_LOCAL, 1, &all);
	p = hgc_tir_tensor_newc(m, "P", hgc_tir_ptr_to(TY(F32)), HGC_TIR_LOCAL, 1, (int64_t[]){ 1 });
	hgc_tir_def_tensor(m, f->body, a);
	hgc_tir_def_tensor(m, f->body, p);
	map1(m, f->body, a, x, NULL, HGC_TIR_ADD, 1);
	ST1(f->body, p, I(0), hgc_tir_addr(m, a, 1, (struct hgc_tir_expr *[]){ I(0) }, &all));
	hgc_tir_def_tensor(m, f->body, b);
	map1(m, f->body, b, x, NULL, HGC_TIR_MUL, 1);
	map1(m, f->body, z, b, NULL, HGC_TIR_SUB, 1);
	hgc_tir_eval(m, f->body, hgc_tir_intrinv(m, HGC_TIR_I_COPY, 3,
						 hgc_tir_addr(m, y, 1, (struct hgc_tir_expr *[]){ I(0) }, &all),
						 LD1(p, I(0)), I(all)));
	return m;
}

/* Aliasing through a pointer tensor stretches the lifetime. */
static void test_alias(void)
{
	struct hgc_tir_passes p;
	struct hgc_tir_module *m = alias();
	static const size_t xyz[] = { N * M * 4, N * M * 4, N * M * 4 };
	const struct hgc_tir_plan_temp *a, *b;

	is_int(passes(m, NULL, &p.plan), 0, "reuse runs on the aliasing module");
	a = temp(&p.plan, "A");
	b = temp(&p.plan, "B");
	ok(a && b && a->buffer != b->buffer && a->end > b->start,
	   "A lives as long as the pointer tensor holding its address: no sharing with B");
	hgc_tir_passes_release(&p);
	tir_same_results(alias(), m, 3, xyz, "aliasing");
}

/* A copy of X[2, N / 2, M] into T[N, M] (the batch folded: T[i, j] = X[i / 32 % 2,
   i % 32, j]), then Y = T * 2.  kind 1: X is written after the copy; kind 2: the
   copy reverses each row; kind 3: the copy's nest stores into Y too. */
static struct hgc_tir_module *copied(int kind)
{
	struct hgc_tir_module *m = hgc_tir_module_new("copied");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "entry", TY(VOID));
	struct hgc_tir_tensor *x = hgc_tir_func_add_tensor(f, "X", TY(F32), 3,
							   (int64_t[]){ 2, N / 2, M });
	struct hgc_tir_tensor *y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 2, (int64_t[]){ N, M });
	struct hgc_tir_tensor *t = hgc_tir_tensor_newc(m, "T", TY(F32), HGC_TIR_LOCAL, 2,
						       (int64_t[]){ N, M });
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j"), *k = ivar(m, "k");
	struct hgc_tir_expr *beg = I(0), *end = I(N), *col;
	struct hgc_tir_stmt *p, *l;

	m->entry = f;
	hgc_tir_def_tensor(m, f->body, t);
	p = hgc_tir_pfor(m, f->body, 1, &i, &beg, &end, NULL);
	l = hgc_tir_for(m, hgc_tir_body(p), j, I(0), I(M), NULL);
	col = kind == 2 ? hgc_tir_sub(m, I(M - 1), V(j)) : V(j);
	hgc_tir_storev(m, hgc_tir_body(l), t, hgc_tir_loadv(m, x, 3, BIN(MOD, BIN(DIV, V(i), I(N / 2)), I(2)),
						      BIN(MOD, V(i), I(N / 2)), col),
		       2, V(i), V(j));
	if (kind == 3)
		ST2(hgc_tir_body(l), y, V(i), V(j), F32C(0));
	if (kind == 1) {
		l = hgc_tir_for(m, f->body, k, I(0), I(M), NULL);
		hgc_tir_storev(m, hgc_tir_body(l), x, F32C(1), 3, I(0), I(0), V(k));
	}
	pfor_map(m, f->body, 0, N, y, t, false, HGC_TIR_MUL, 2);
	return m;
}

/* Copy forwarding: the folded copy goes, Y reads X; the other kinds keep T. */
static void test_forward(void)
{
	static const char *const what[] = { "folded copy", "source written after",
					    "reversed rows", "nest storing elsewhere too" };
	struct hgc_tir_module *m;
	char *s;

	for (int kind = 0; kind < 4; kind++) {
		m = copied(kind);
		is_int(passes(m, "parallel_merge,tensor_shrink,buffer_reuse,index_flatten", NULL), 0,
		       "copy_forward runs (%s)", what[kind]);
		s = hgc_tir_module_str(m);
		if (kind == 0) {
			ok(!strstr(s, "tensor T") && count(s, "parallel for") == 1,
			   "a folded copy of X goes: T and its nest");
			ok(strstr(s, "X[i_1 / 32, i_1 % 32, j_1]") != NULL,
			   "its reader splits T's row into X's batch and row");
		} else {
			ok(strstr(s, "tensor T") && count(s, "parallel for") == 2,
			   "%s: the copy stays", what[kind]);
		}
		free(s);
		tir_same_results(copied(kind), m, 2, xy, what[kind]);
	}
}

/* Pass names and switches. */
static void test_switches(void)
{
	struct hgc_tir_passes p;
	struct hgc_diag d;
	struct hgc_loc loc = { "cfg.hgc", 3, 5 };

	hgc_tir_passes_init(&p);
	hgc_diag_init(&d);
	is_int(hgc_tir_pass_find("buffer_reuse"), HGC_TIR_PASS_BUFFER_REUSE, "find a pass by name");
	is_int(hgc_tir_pass_find("fuse"), HGC_TIR_PASS_COUNT, "graph passes are not TIR passes");
	ok(!hgc_tir_passes_set(&p, "tensor_shrink", "off", &loc, &d) &&
	   !p.on[HGC_TIR_PASS_TENSOR_SHRINK], "pass tensor_shrink = off");
	is_int(hgc_tir_passes_set(&p, "shrink", "off", &loc, &d), -1, "unknown pass");
	is_int(hgc_tir_passes_set(&p, "index_flatten", "maybe", &loc, &d), -1, "bad value");
	is_str(hgc_diag_text(&d), "cfg.hgc:3:5: error: unknown tensor IR pass 'shrink'\n"
				  "cfg.hgc:3:5: error: pass 'index_flatten' must be on or off, "
				  "not 'maybe'\n", "the diagnostics");
	hgc_diag_release(&d);
	hgc_tir_passes_release(&p);
}

int main(void)
{
	test_switches();
	test_merge();
	test_forward();
	test_shrink_chain();
	test_shrink();
	test_shrink_small_first();
	test_flatten();
	test_reuse();
	test_reuse_per_thread();
	test_alias();
	done_testing();
}
