/*
 * 091-lower-views: lowering on views: slices of a bigger tensor (constant
 * and loop-dependent starts, slices of slices) where only the slice may
 * change, a custom accessor, graph-blocked intermediates, outputs that alias
 * inputs or each other, embedded constants, parallel outer loops, the
 * template hook, and the error paths with their exact messages.
 */
#include "t/lower_check.h"

enum { R = 13, C = 97 };

/* A module with entry(X f32 [R, C], Y f32 [R, C]) to lower views of X and Y into. */
static struct hgc_tir_module *xy_module(struct hgc_tir_tensor **x, struct hgc_tir_tensor **y)
{
	struct hgc_tir_module *m = hgc_tir_module_new("views");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "entry", hgc_tir_ty(HGC_TIR_VOID));
	int64_t dims[2] = { R, C };

	m->entry = f;
	*x = hgc_tir_func_add_tensor(f, "X", hgc_tir_ty(HGC_TIR_F32), 2, dims);
	*y = hgc_tir_func_add_tensor(f, "Y", hgc_tir_ty(HGC_TIR_F32), 2, dims);
	return m;
}

/* A graph on x f32 [R, C] with ReLU, row SoftMax and a row ReduceSum (for their ops). */
static struct hgc_graph *xy_graph(struct hgc_op **ops)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", HGC_DT_F32, LC_INTS(R, C));
	struct hgc_op *op;

	ops[0] = lc_op(g, HGC_OP_RELU, HGC_DT_UNDEF, 1, x);
	lc_out(g, ops[0]);
	op = ops[1] = lc_op(g, HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, x);
	lc_attr_i(g, op, "axis", -1);
	lc_out(g, op);
	op = ops[2] = lc_op(g, HGC_OP_REDUCE_SUM, HGC_DT_UNDEF, 1, x);
	lc_attr_ints(g, op, "axes", LC_INTS(1));
	lc_attr_b(g, op, "keep_dims", true);
	lc_out(g, op);
	return g;
}

/* Lower op from view *in into view *out, expecting success. */
static int lower(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_tir_stmt *b,
		 struct hgc_lower_view in, struct hgc_lower_view out, struct hgc_diag *d)
{
	struct hgc_lower_view *pin = &in;

	return hgc_lower_op(cx, op, b, &pin, &out, d);
}

/* Index constants for slice starts. */
static struct hgc_tir_expr **starts(struct hgc_tir_module *m, int64_t a, int64_t b)
{
	static struct hgc_tir_expr *s[2];

	s[0] = hgc_tir_idx(m, a);
	s[1] = hgc_tir_idx(m, b);
	return s;
}

/*
 * ReLU on rows 3..8, columns 10..50; a row SoftMax on rows 10, 11, 12 from a
 * parallel for over them (starts depend on its index, as at a template's
 * anchor); ReLU on a slice of a slice (row 1, columns 62..91).
 */
static void build_slices(struct hgc_tir_module *m, struct hgc_tir_tensor *X,
			 struct hgc_tir_tensor *Y, struct hgc_op **ops, struct hgc_diag *d)
{
	struct hgc_lower_view vx = hgc_lower_view_plain(X), vy = hgc_lower_view_plain(Y), sx, sy;
	struct hgc_tir_var *rb = hgc_tir_var_new(m, "rb", hgc_tir_ty(HGC_TIR_INDEX));
	struct hgc_tir_expr *st[2], *b0 = hgc_tir_idx(m, 0), *e3 = hgc_tir_idx(m, 3);
	struct hgc_tir_stmt *body = m->entry->body, *p;
	struct hgc_lower_ctx cx;

	hgc_lower_ctx_init(&cx, m, m->entry, NULL);
	ok(!lower(&cx, ops[0], body, hgc_lower_view_slice(m, &vx, starts(m, 3, 10), (int64_t[]){ 6, 41 }),
		  hgc_lower_view_slice(m, &vy, starts(m, 3, 10), (int64_t[]){ 6, 41 }), d),
	   "ReLU lowers on a constant slice");
	p = hgc_tir_pfor(m, body, 1, &rb, &b0, &e3, NULL);
	st[0] = hgc_tir_add(m, hgc_tir_ref(m, rb), hgc_tir_idx(m, 10));
	st[1] = NULL;
	cx.in_parallel = true;
	ok(!lower(&cx, ops[1], hgc_tir_body(p), hgc_lower_view_slice(m, &vx, st, (int64_t[]){ 1, C }),
		  hgc_lower_view_slice(m, &vy, st, (int64_t[]){ 1, C }), d),
	   "SoftMax lowers on a row slice inside a parallel for");
	cx.in_parallel = false;
	sx = hgc_lower_view_slice(m, &vx, starts(m, 0, 60), (int64_t[]){ R, 37 });
	sy = hgc_lower_view_slice(m, &vy, starts(m, 0, 60), (int64_t[]){ R, 37 });
	ok(!lower(&cx, ops[0], body, hgc_lower_view_slice(m, &sx, starts(m, 1, 2), (int64_t[]){ 1, 30 }),
		  hgc_lower_view_slice(m, &sy, starts(m, 1, 2), (int64_t[]){ 1, 30 }), d),
	   "ReLU lowers on a slice of a slice");
}

/* Which op wrote Y[i][j] in build_slices: 0 ReLU, 1 SoftMax, -1 none. */
static int writer(int i, int j)
{
	if (i >= 3 && i < 9 && j >= 10 && j < 51)
		return 0;
	if (i >= 10)
		return 1;
	if (i == 1 && j >= 62 && j < 92)
		return 0;
	return -1;
}

/* Run build_slices' module on random X and a Y of 42s; only the slices change. */
static void test_slices(void)
{
	struct hgc_op *ops[3];
	struct hgc_graph *g = xy_graph(ops);
	struct hgc_tir_tensor *X, *Y;
	struct hgc_tir_module *m = xy_module(&X, &Y);
	static float x[R][C], y[R][C], relu[R][C], soft[R][C], sum[R];
	void *args[2] = { x, y }, *want[3] = { relu, soft, sum };
	struct hgc_compiled *c = NULL;
	struct hgc_diag d;
	int i, j, bad = 0, w;

	hgc_diag_init(&d);
	build_slices(m, X, Y, ops, &d);
	ok(hgc_tir_verify(m, &d) == 0, "the slice module verifies");
	if (!d.nerr)
		c = hgc_codegen_c_compile(m, NULL, &d);
	ok(c != NULL, "the slice module compiles");
	lc_fill(HGC_DT_F32, x, R * C, F_UNIFORM);
	ok(hgc_interp_run(g, (const void *const[]){ x }, want, &d) == 0, "the interpreter runs");
	if (d.nerr)
		diag("%s", hgc_diag_text(&d));
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++)
			y[i][j] = 42;
	if (c)
		hgc_codegen_run(c, args);
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++) {
			w = writer(i, j);
			bad += w < 0 ? y[i][j] != 42
			     : fabs(y[i][j] - (w ? soft : relu)[i][j]) > 1e-5 * fabs((w ? soft : relu)[i][j]);
		}
	is_int(bad, 0, "the slices hold ReLU and SoftMax, everything else is untouched");
	hgc_codegen_free(c);
	hgc_tir_module_free(m);
	hgc_graph_free(g);
	hgc_diag_release(&d);
}

/* Lowering op onto views in/out fails with exactly msg. */
static void fails(const struct hgc_op *op, struct hgc_lower_view in, struct hgc_lower_view out,
		  struct hgc_tir_module *m, const char *msg, const char *what)
{
	struct hgc_lower_ctx cx;
	struct hgc_diag d;

	hgc_diag_init(&d);
	hgc_lower_ctx_init(&cx, m, m->entry, NULL);
	ok(lower(&cx, op, m->entry->body, in, out, &d) == -1, "%s fails", what);
	is_str(hgc_diag_text(&d), msg, "%s: the message", what);
	hgc_diag_release(&d);
}

/* Slices that cut a reduced axis, views that do not broadcast, an unknown op. */
static void test_view_errors(void)
{
	struct hgc_op *ops[3], fake;
	struct hgc_graph *g = xy_graph(ops);
	struct hgc_tir_tensor *X, *Y;
	struct hgc_tir_module *m = xy_module(&X, &Y);
	struct hgc_lower_view vx = hgc_lower_view_plain(X), vy = hgc_lower_view_plain(Y);
	struct hgc_lower_view cut = hgc_lower_view_slice(m, &vx, starts(m, 0, 0), (int64_t[]){ 2, 50 });
	struct hgc_lower_view row = hgc_lower_view_slice(m, &vy, NULL, (int64_t[]){ 1, C });

	fails(ops[1], cut, hgc_lower_view_slice(m, &vy, NULL, (int64_t[]){ 2, 50 }), m,
	      "hgc: error: SoftMax: the slice cuts the softmax axis 1 (50 of 97)\n",
	      "SoftMax on a slice of its axis");
	fails(ops[2], cut, hgc_lower_view_slice(m, &vy, NULL, (int64_t[]){ 2, 1 }), m,
	      "hgc: error: ReduceSum: the slice cuts reduced axis 1 (50 of 97)\n",
	      "ReduceSum on a slice of its axis");
	fails(ops[2], vx, vy, m,
	      "hgc: error: ReduceSum: the output view [13,97] does not match [13,1]\n",
	      "ReduceSum into a view of the wrong shape");
	fails(ops[0], cut, row, m, "hgc: error: ReLU: the output view [1,97] does not match [2,50]\n",
	      "ReLU between views of different shapes");
	fake = *ops[0];
	fake.kind = (enum hgc_op_kind)1000;
	fails(&fake, vx, vy, m, "hgc: error: cannot lower an unknown op yet\n", "an unknown op kind");
	hgc_tir_module_free(m);
	hgc_graph_free(g);
}

/* Add between views that do not broadcast. */
static void test_bcast_error(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *a = lc_input(g, "a", HGC_DT_F32, LC_INTS(R, C));
	struct hgc_op *op = lc_op(g, HGC_OP_ADD, HGC_DT_UNDEF, 2, a, a);
	struct hgc_tir_tensor *X, *Y;
	struct hgc_tir_module *m = xy_module(&X, &Y);
	struct hgc_lower_view vx = hgc_lower_view_plain(X), vy = hgc_lower_view_plain(Y);
	struct hgc_lower_view col = hgc_lower_view_slice(m, &vx, NULL, (int64_t[]){ R, 5 });
	struct hgc_lower_view *in[2] = { &vx, &col };
	struct hgc_lower_ctx cx;
	struct hgc_diag d;

	lc_out(g, op);
	hgc_diag_init(&d);
	hgc_lower_ctx_init(&cx, m, m->entry, NULL);
	ok(hgc_lower_op(&cx, op, m->entry->body, in, &vy, &d) == -1, "Add of unbroadcastable views fails");
	is_str(hgc_diag_text(&d),
	       "hgc: error: Add: input view 1 [13,5] does not broadcast to the output view [13,97]\n",
	       "and says which view");
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
	hgc_graph_free(g);
}

/* A custom accessor: element (i, j) of the view is T[j][i] of the tensor. */
static struct hgc_tir_expr *tload(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
				  struct hgc_tir_expr **idx)
{
	struct hgc_tir_expr *t[2] = { idx[1], idx[0] };

	return hgc_tir_load(cx->m, v->tensor, 2, t);
}

static struct hgc_tir_stmt *tstore(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
				   struct hgc_tir_stmt *b, struct hgc_tir_expr **idx,
				   struct hgc_tir_expr *value)
{
	struct hgc_tir_expr *t[2] = { idx[1], idx[0] };

	return hgc_tir_store(cx->m, b, v->tensor, 2, t, value);
}

/* ReLU from X into Y through a transposing custom view of Y ([C, R] read as [R, C]). */
static void test_custom_view(void)
{
	struct hgc_op *ops[3];
	struct hgc_graph *g = xy_graph(ops);
	struct hgc_tir_module *m = hgc_tir_module_new("custom");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "entry", hgc_tir_ty(HGC_TIR_VOID));
	struct hgc_tir_tensor *X = hgc_tir_func_add_tensor(f, "X", hgc_tir_ty(HGC_TIR_F32), 2,
							   (int64_t[]){ R, C });
	struct hgc_tir_tensor *Y = hgc_tir_func_add_tensor(f, "Y", hgc_tir_ty(HGC_TIR_F32), 2,
							   (int64_t[]){ C, R });
	struct hgc_lower_view vy = hgc_lower_view_custom(Y, HGC_DT_F32, 2, (int64_t[]){ R, C },
							 tload, tstore, NULL);
	struct hgc_lower_view vx;
	static float x[R][C], y[C][R];
	void *args[2] = { x, y };
	struct hgc_compiled *c = NULL;
	struct hgc_lower_ctx cx;
	struct hgc_diag d;
	int i, j, bad = 0;

	m->entry = f;
	hgc_diag_init(&d);
	hgc_lower_ctx_init(&cx, m, f, NULL);
	vx = hgc_lower_view_plain(X);
	ok(!lower(&cx, ops[0], f->body, hgc_lower_view_slice(m, &vx, NULL, (int64_t[]){ 11, C }),
		  hgc_lower_view_slice(m, &vy, starts(m, 2, 0), (int64_t[]){ 11, C }), &d),
	   "ReLU lowers into a custom view");
	if (!hgc_tir_verify(m, &d))
		c = hgc_codegen_c_compile(m, NULL, &d);
	ok(c != NULL, "and compiles");
	lc_fill(HGC_DT_F32, x, R * C, F_UNIFORM);
	memset(y, 0, sizeof(y));
	if (c)
		hgc_codegen_run(c, args);
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++)
			bad += y[j][i] != (i < 2 ? 0 : x[i - 2][j] < 0 ? 0 : x[i - 2][j]);
	is_int(bad, 0, "rows 2.. of the transposed view hold ReLU of X");
	if (d.nerr)
		diag("%s", hgc_diag_text(&d));
	hgc_codegen_free(c);
	hgc_tir_module_free(m);
	hgc_graph_free(g);
	hgc_diag_release(&d);
}

/* A blocked layout MBxKB on a [M, K] tensor: {(0,0),(1,0),(0,MB),(1,KB)}. */
static void set_blocked(struct hgc_tensor *t, int64_t mb, int64_t kb)
{
	memset(&t->layout, 0, sizeof(t->layout));
	t->layout.kind = HGC_LAYOUT_BLOCKED;
	t->layout.nphys = 4;
	t->layout.phys[0].dim = 0;
	t->layout.phys[1].dim = 1;
	t->layout.phys[2].dim = 0;
	t->layout.phys[2].block = mb;
	t->layout.phys[3].dim = 1;
	t->layout.phys[3].block = kb;
}

/* Reorder into a padded blocked intermediate, then ReLU and a row sum out of it. */
static void test_blocked(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", HGC_DT_F32, LC_INTS(R, 10));
	struct hgc_tensor *y = lc_out(g, lc_op(g, HGC_OP_REORDER, HGC_DT_UNDEF, 1, x));
	struct hgc_op *op = lc_op(g, HGC_OP_REDUCE_SUM, HGC_DT_UNDEF, 1, y);
	struct hgc_compiled *c;
	struct lc_bufs b;
	size_t k;

	lc_attr_ints(g, op, "axes", LC_INTS(-1));
	lc_out(g, op);
	lc_out(g, lc_op(g, HGC_OP_RELU, HGC_DT_UNDEF, 1, y));
	g->outputs.len = 0;	/* y stays an intermediate */
	hgc_graph_add_output(g, HGC_GRAPH_OP(g, 1)->out[0]);
	hgc_graph_add_output(g, HGC_GRAPH_OP(g, 2)->out[0]);
	lc_bufs_init(&b, g, NULL);
	if (lc_interp(g, &b, "blocked")) {
		set_blocked(y, 4, 8);
		c = lc_build(g, "blocked intermediate", NULL);
		if (c) {
			lc_run(c, &b);
			for (k = 0; k < b.nout; k++)
				lc_compare(g, k, b.got[k], b.want[k], "blocked", &LC_TOL(1e-5, 1e-6, 0));
		}
		hgc_codegen_free(c);
	}
	lc_bufs_release(&b);
	hgc_graph_free(g);
}

/* A graph input with a blocked layout is not what the calling convention takes. */
static void test_blocked_input(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", HGC_DT_F32, LC_INTS(R, 10));
	struct hgc_diag d;

	lc_out(g, lc_op(g, HGC_OP_RELU, HGC_DT_UNDEF, 1, x));
	set_blocked(x, 4, 8);
	hgc_diag_init(&d);
	ok(hgc_lower_graph(g, NULL, &d) == NULL, "a blocked graph input does not lower");
	is_str(hgc_diag_text(&d), "hgc: error: cannot lower graph input %0 with a non-dense layout yet\n",
	       "and says why");
	hgc_diag_release(&d);
	hgc_graph_free(g);
}

/* Outputs that are an input, the same tensor twice, an embedded constant. */
static void test_aliases(void)
{
	static const float cdata[5] = { 1, -2, 3.5f, -4, 0.25f };
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", HGC_DT_F32, LC_INTS(3, 5));
	struct hgc_tensor *k = lc_input(g, "k", HGC_DT_F32, LC_INTS(5));
	struct hgc_tensor *r;

	k->data = cdata;
	k->prop = HGC_PROP_CONSTANT;
	g->inputs.len = 1;	/* k is embedded, as a constant-folding pass leaves it */
	hgc_graph_add_output(g, x);
	r = lc_out(g, lc_op(g, HGC_OP_RELU, HGC_DT_UNDEF, 1, x));
	hgc_graph_add_output(g, r);
	lc_out(g, lc_op(g, HGC_OP_ADD, HGC_DT_UNDEF, 2, r, k));
	hgc_graph_add_output(g, k);
	hgc_graph_add_output(g, x);
	lc_check(g, "aliases", NULL, LC_TOL(0, 0, 0));
}

/* Count the parallel loops of g lowered with opts. */
static int count_pfor(const struct hgc_graph *g, const struct hgc_lower_opts *opts)
{
	struct hgc_diag d;
	struct hgc_tir_module *m;
	char *text, *p;
	int n = 0;

	hgc_diag_init(&d);
	m = hgc_lower_graph(g, opts, &d);
	if (!m) {
		diag("%s", hgc_diag_text(&d));
		hgc_diag_release(&d);
		return -1;
	}
	text = hgc_tir_module_str(m);
	for (p = text; (p = strstr(p, "parallel for")); p++)
		n++;
	free(text);
	hgc_tir_module_free(m);
	hgc_diag_release(&d);
	return n;
}

/* Big ops and matmuls get a parallel outer loop, small ones do not; options change it. */
static void test_parallel(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *big = lc_input(g, "big", HGC_DT_F32, LC_INTS(3, 128, 97));
	struct hgc_tensor *a = lc_input(g, "a", HGC_DT_F32, LC_INTS(3, 13));
	struct hgc_tensor *b = lc_input(g, "b", HGC_DT_F32, LC_INTS(13, 5));
	struct hgc_lower_opts serial = { .serial = true }, eager = { .parallel_min = 1 };
	struct hgc_op *op;

	lc_out(g, lc_op(g, HGC_OP_RELU, HGC_DT_UNDEF, 1, big));
	op = lc_op(g, HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, big);
	lc_attr_i(g, op, "axis", 1);
	lc_out(g, op);
	lc_out(g, lc_op(g, HGC_OP_RELU, HGC_DT_UNDEF, 1, a));
	lc_out(g, lc_op(g, HGC_OP_MATMUL, HGC_DT_UNDEF, 2, a, b));
	is_int(count_pfor(g, NULL), 3, "ReLU and SoftMax of 37K elements and the MatMul run in parallel");
	is_int(count_pfor(g, &serial), 0, "serial lowering has no parallel loop");
	is_int(count_pfor(g, &eager), 4, "parallel_min 1 makes every op parallel");
	lc_check(g, "parallel", NULL, LC_TOL(1e-5, 1e-6, 0));
}

/* What the hook saw and does. */
struct hook {
	int calls, mode;	/* mode: 0 decline, 1 lower it here, -1 fail */
	enum hgc_op_kind last;
};

/* A stand-in for the template lowering: counts, and declines, handles or fails. */
static int hook(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_tir_stmt *block,
		struct hgc_lower_view *const *in, struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct hook *h = cx->opts->user;

	h->calls++;
	h->last = op->kind;
	if (h->mode < 0)
		return hgc_error(d, NULL, "template for %s failed", hgc_op_table[op->kind].name);
	if (h->mode == 0)
		return 0;
	cx->in_parallel = true;
	if (hgc_lower_op(cx, op, block, in, out, d))
		return -1;
	cx->in_parallel = false;
	return 1;
}

/* The hook is offered the tunable ops only; its answer is followed. */
static void test_hook(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *a = lc_input(g, "a", HGC_DT_F32, LC_INTS(3, 13));
	struct hgc_tensor *b = lc_input(g, "b", HGC_DT_F32, LC_INTS(13, 5));
	struct hook h = { 0, 0, HGC_OP_COUNT };
	struct hgc_lower_opts opts = { .lower_tunable = hook, .user = &h };
	struct hgc_tir_module *m;
	struct hgc_diag d;
	int mode;

	lc_out(g, lc_op(g, HGC_OP_RELU, HGC_DT_UNDEF, 1,
			lc_out(g, lc_op(g, HGC_OP_MATMUL, HGC_DT_UNDEF, 2, a, b))));
	for (mode = 0; mode <= 1; mode++) {
		h.mode = mode;
		h.calls = 0;
		hgc_diag_init(&d);
		m = hgc_lower_graph(g, &opts, &d);
		ok(m != NULL && h.calls == 1 && h.last == HGC_OP_MATMUL,
		   "hook %s: called once, for the MatMul", mode ? "lowering" : "declining");
		is_int(count_pfor(g, &opts), mode ? 0 : 1, "and its loops are %s",
		       mode ? "the hook's (serial)" : "the fallback's (parallel)");
		hgc_tir_module_free(m);
		hgc_diag_release(&d);
	}
	h.mode = -1;
	hgc_diag_init(&d);
	ok(hgc_lower_graph(g, &opts, &d) == NULL, "a failing hook fails the lowering");
	is_str(hgc_diag_text(&d), "hgc: error: template for MatMul failed\n", "with its message");
	hgc_diag_release(&d);
	hgc_graph_free(g);
}

int main(void)
{
	test_slices();
	test_view_errors();
	test_bcast_error();
	test_custom_view();
	test_blocked();
	test_blocked_input();
	test_aliases();
	test_parallel();
	test_hook();
	return done_testing();
}
