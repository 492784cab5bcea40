/*
 * postfold.c: epilogue nests folded into the brgemm call before them.
 * fold_post (here) and fold_quant (below, after fold_post's code).
 *
 * fold_post: an f32 brgemm and the loop nest right after it that adds a
 * bias row to its C block (and clamps it at 0) become one brgemm_post
 * call, which applies them to each register tile before it is stored:
 *
 *   for (ks in [a, a + s) step s) {	(one trip; or the call alone)
 *     ...; brgemm(A, B, &C[c..], bs, M, N, K, lda, ldb, ldc, acc);
 *   }
 *   for (r in [0, M)) {		(or nested row loops counting M rows)
 *     for (j in [0, N)) {
 *       let x = C[i..]; let y = Bias[b..]; C[i..] = x + y;
 *       let z = C[i..]; C[i..] = select(z < 0.0f, 0.0f, z);	(optional)
 *     }
 *   }
 *
 * where C[i..] is element (r, j) of the call's block (linear position
 * c + r ldc + j, every index affine) and Bias[b..] is column j of a row
 * (its last index j plus a part free of r and j), becomes
 *
 *   brgemm_post(A, B, &C[c..], bs, M, N, K, lda, ldb, ldc, acc,
 *               &Bias[b.. at j = 0 : N], relu)
 *
 * in place of the call.  The nest is what fusion lowers a MatMul's bias
 * and ReLU to at its post_block anchor (docs/fusion.md), and a pass over
 * the block reads back what the call has just stored: on DLRM's K = 13
 * layer (512 x 13 x 512) that pass took 40% of the time.  The runtime adds
 * and clamps the same way (one f32 add, x < 0 ? 0 : x), so results do not
 * change.  The bias is then read inside the call, as its A and B are: a
 * bias overlapping C (two parameters a caller points into one buffer) is
 * outside the contract, as A or B overlapping C is.  The pass runs last,
 * on the loops as the other passes left them; a nest in any other form
 * stays as it is.
 */
#include "passes_int.h"
#include "runtime/runtime.h"

#include <math.h>

/* Dims of a bias tensor the pass reads (a row, or a row in a larger tensor). */
#define POST_MAX_DIMS 8

/* Row loops of a nest at most: a convolution's block of output rows of pixels is two. */
#define POST_MAX_ROWS 4

/* The nest's loops, its accesses to C and the bias, once matched. */
struct nest {
	struct hgc_tir_var *r[POST_MAX_ROWS], *j;	/* the row loops, outermost first */
	int64_t rext[POST_MAX_ROWS];			/* and their extents */
	int nr;
	struct hgc_tir_expr *const *cidx;	/* C's indices in the loads and stores */
	const struct hgc_tir_expr *bias;	/* the load of the bias */
	bool relu;
};

/* acc += k * (the linear position of t[idx..] in its row-major storage). */
static bool linear(const struct hgc_tp_vars *v, const struct hgc_tir_tensor *t,
		   struct hgc_tir_expr *const *idx, int n, int64_t k, struct hgc_tp_aff *acc)
{
	int64_t stride = k, dim;
	int d;

	if (n != t->ndims)
		return false;
	for (d = n - 1; d >= 0; d--) {
		struct hgc_tp_aff a = hgc_tp_affine(v, idx[d]);

		if (!hgc_tp_aff_add(acc, &a, stride) || (d > 0 && (dim = hgc_tir_tensor_dim(t, d)) < 1))
			return false;
		stride *= d > 0 ? dim : 1;
	}
	return true;
}

/* Whether the nest's rows and j appear in a only as the rows ld apart and j once. */
static bool rows_apart(const struct hgc_tp_aff *a, const struct nest *n, int64_t ld)
{
	int64_t c = ld;

	if (hgc_tp_aff_coef(a, n->j) != 1)
		return false;
	for (int k = n->nr - 1; k >= 0; c *= n->rext[k--])
		if (hgc_tp_aff_coef(a, n->r[k]) != c)
			return false;
	return true;
}

/*
 * Whether a holds only the row loops' terms, as the rows of a call's block
 * ldc apart (rows_apart: the innermost row loop's coefficient ldc, each
 * outer one's its inner extents times that, the rows counted in mixed
 * radix), j's with coefficient 1, and no constant and nothing else.
 */
static bool only_rows(const struct hgc_tp_aff *a, const struct nest *n, int64_t ldc)
{
	if (a->c0 != 0 || !rows_apart(a, n, ldc))
		return false;
	for (int i = 0; i < a->n; i++) {
		bool known = a->t[i].var == n->j;

		for (int k = 0; k < n->nr; k++)
			known |= a->t[i].var == n->r[k];
		if (!known && a->t[i].c != 0)
			return false;
	}
	return true;
}

/* The brgemm call on A of kind ka that s is or ends with (a loop of one trip), or NULL. */
static struct hgc_tir_stmt *call_of(const struct hgc_tir_stmt *s, enum hgc_tir_kind ka)
{
	int64_t lo, hi, step = 1;
	struct hgc_tir_stmt *b;

	if (s->kind == HGC_TIR_S_FOR) {
		b = s->u.loop.body;
		if (!hgc_tir_const_int(s->u.loop.begin, &lo) ||
		    !hgc_tir_const_int(s->u.loop.end, &hi) ||
		    (s->u.loop.step && !hgc_tir_const_int(s->u.loop.step, &step)) ||
		    hi <= lo || step < 1 || hi - lo > step || b->kind != HGC_TIR_S_BLOCK ||
		    !b->u.block.n)
			return NULL;
		s = b->u.block.stmts[b->u.block.n - 1];
	}
	if (s->kind != HGC_TIR_S_EVAL || s->u.expr->kind != HGC_TIR_E_INTRIN ||
	    s->u.expr->op != HGC_TIR_I_BRGEMM || s->u.expr->ops[0]->type.kind != ka ||
	    s->u.expr->ops[2]->kind != HGC_TIR_E_ADDR)
		return NULL;
	return (struct hgc_tir_stmt *)s;
}

/* The f32 brgemm call that s is or ends with, or NULL. */
static struct hgc_tir_stmt *the_call(const struct hgc_tir_stmt *s)
{
	return call_of(s, HGC_TIR_F32);
}

/* The tensor whose block the call that s is or ends with writes, if a nest
   after s could fold into it (tir_passes.h); else NULL. */
const struct hgc_tir_tensor *hgc_tir_post_site(const struct hgc_tir_stmt *s)
{
	const struct hgc_tir_stmt *c = the_call(s);

	return c ? c->u.expr->ops[2]->u.tensor : NULL;
}

/* The extent of loop s over [0, n) step 1 into *n, its body returned; NULL if it is not one. */
static struct hgc_tir_stmt *loop_body(struct hgc_tir_stmt *s, int64_t *n)
{
	int64_t lo, step = 1;

	if (s->kind != HGC_TIR_S_FOR || !hgc_tir_const_int(s->u.loop.begin, &lo) ||
	    !hgc_tir_const_int(s->u.loop.end, n) ||
	    (s->u.loop.step && !hgc_tir_const_int(s->u.loop.step, &step)) || lo != 0 ||
	    *n < 1 || step != 1 || s->u.loop.body->kind != HGC_TIR_S_BLOCK)
		return NULL;
	return s->u.loop.body;
}

/*
 * The row loops of the nest s into n (M rows in all, one loop or several
 * nested: a convolution's output rows of pixels), then the column loop
 * over [0, N); its body, or NULL when s is not such a nest.
 */
static struct hgc_tir_stmt *nest_loops(struct hgc_tir_stmt *s, int64_t M, int64_t N,
				       struct nest *n)
{
	struct hgc_tir_stmt *body;
	int64_t ext, rows = 1;

	for (n->nr = 0; (body = loop_body(s, &ext)); s = body->u.block.stmts[0]) {
		if (rows == M) {	/* the rows are counted: this is the column loop */
			n->j = s->u.loop.var;
			return ext == N ? body : NULL;
		}
		if (n->nr == POST_MAX_ROWS || body->u.block.n != 1)
			return NULL;
		n->r[n->nr] = s->u.loop.var;
		n->rext[n->nr++] = ext;
		rows *= ext;
	}
	return NULL;
}

/* Whether s is `let x = t[..]` (t NULL: any tensor but not_t), a load of f32. */
static bool let_load(const struct hgc_tir_stmt *s, const struct hgc_tir_tensor *t,
		     const struct hgc_tir_tensor *not_t)
{
	const struct hgc_tir_expr *v = s->kind == HGC_TIR_S_LET ? s->u.let.value : NULL;

	return v && v->kind == HGC_TIR_E_LOAD && s->u.let.var->nassign == 0 &&
	       v->type.kind == HGC_TIR_F32 && !v->type.ptr && v->type.lanes == 1 &&
	       (t ? v->u.tensor == t : v->u.tensor != not_t);
}

/* Whether e reads variable x. */
static bool is_var(const struct hgc_tir_expr *e, const struct hgc_tir_var *x)
{
	return e->kind == HGC_TIR_E_VAR && e->u.var == x;
}

/* Whether e is the f32 constant +0. */
static bool is_zero(const struct hgc_tir_expr *e)
{
	return e->kind == HGC_TIR_E_FLOAT && e->u.f == 0 && !signbit(e->u.f);
}

/* Whether s stores into the tensor of load l at l's indices. */
static bool store_at(const struct hgc_tir_stmt *s, const struct hgc_tir_expr *l)
{
	int i;

	if (s->kind != HGC_TIR_S_STORE || s->u.store.tensor != l->u.tensor ||
	    s->u.store.n != l->nops)
		return false;
	for (i = 0; i < l->nops; i++)
		if (!hgc_tp_expr_eq(s->u.store.idx[i], l->ops[i]))
			return false;
	return true;
}

/* Whether the element nest's body b is the bias add (and the clamp) on C, into *n. */
static bool match_body(const struct hgc_tir_stmt *b, const struct hgc_tir_tensor *c,
		       struct nest *n)
{
	struct hgc_tir_stmt *const *s = b->u.block.stmts;
	const struct hgc_tir_expr *cl, *v, *cond;
	struct hgc_tir_var *x, *y;
	int ix;

	if (b->u.block.n != 3 && b->u.block.n != 5)
		return false;
	ix = let_load(s[0], c, NULL) ? 0 : 1;
	if (!let_load(s[ix], c, NULL) || !let_load(s[1 - ix], NULL, c))
		return false;
	cl = s[ix]->u.let.value;
	x = s[ix]->u.let.var;
	y = s[1 - ix]->u.let.var;
	n->bias = s[1 - ix]->u.let.value;
	n->cidx = cl->ops;
	if (!store_at(s[2], cl))
		return false;
	v = s[2]->u.store.value;
	if (v->kind != HGC_TIR_E_BINARY || v->op != HGC_TIR_ADD ||
	    !((is_var(v->ops[0], x) && is_var(v->ops[1], y)) ||
	      (is_var(v->ops[0], y) && is_var(v->ops[1], x))))
		return false;
	n->relu = b->u.block.n == 5;
	if (!n->relu)
		return true;
	if (!let_load(s[3], c, NULL) || !store_at(s[4], s[3]->u.let.value) ||
	    !store_at(s[4], cl))
		return false;
	x = s[3]->u.let.var;
	v = s[4]->u.store.value;
	cond = v->kind == HGC_TIR_E_SELECT ? v->ops[0] : NULL;
	return cond && cond->kind == HGC_TIR_E_BINARY && cond->op == HGC_TIR_LT &&
	       is_var(cond->ops[0], x) && is_zero(cond->ops[1]) && is_zero(v->ops[1]) &&
	       is_var(v->ops[2], x);
}

/* Whether the nest's C index cidx is element (r, j) of the call's block: the
   linear positions differ by exactly r ldc + j (r what the row loops count). */
static bool c_element(const struct hgc_tp_vars *v, const struct hgc_tir_expr *call,
		      struct hgc_tir_expr *const *cidx, const struct nest *n)
{
	const struct hgc_tir_expr *caddr = call->ops[2];
	struct hgc_tp_aff a = {.ok = true};
	int64_t ldc;

	return hgc_tir_const_int(call->ops[9], &ldc) &&
	       linear(v, caddr->u.tensor, cidx, caddr->nops, 1, &a) &&
	       linear(v, caddr->u.tensor, caddr->ops, caddr->nops, -1, &a) && only_rows(&a, n, ldc);
}

/* Whether load e is free of the nest's rows, and of j too unless it may be j once in its last index. */
static bool operand_at(const struct hgc_tp_vars *v, const struct hgc_tir_expr *e,
		       const struct nest *n, bool *col)
{
	*col = false;
	if (e->type.kind != HGC_TIR_F32 || e->nops > POST_MAX_DIMS)
		return false;
	for (int d = 0; d < e->nops; d++) {
		struct hgc_tp_aff b = hgc_tp_affine(v, e->ops[d]);
		int64_t cj = hgc_tp_aff_coef(&b, n->j);

		if (!b.ok || (cj != 0 && (cj != 1 || d != e->nops - 1)))
			return false;
		*col |= cj == 1;
		for (int k = 0; k < n->nr; k++)
			if (hgc_tp_aff_coef(&b, n->r[k]) != 0)
				return false;
	}
	return true;
}

/*
 * Whether the nest's C accesses are element (r, j) of the call's block and
 * its bias load reads column j of a row (every index but the last free of
 * the loops, the last j plus a free part).
 */
static bool match_access(const struct hgc_tp_vars *v, const struct hgc_tir_expr *call,
			 const struct nest *n)
{
	bool col;

	return c_element(v, call, n->cidx, n) && operand_at(v, n->bias, n, &col) && col;
}

/* The variable in ctx read as 0 (hgc_tir_mutate_expr). */
static struct hgc_tir_expr *var_to_zero(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	return is_var(e, mu->ctx) ? hgc_tir_idx(mu->m, 0) : e;
}

/* &t[e's indices with the nest's rows and j at 0], one element or N columns. */
static struct hgc_tir_expr *addr_at0(struct hgc_tir_module *m, struct hgc_tir_tensor *t,
				     struct hgc_tir_expr *const *idx, int nidx,
				     const struct nest *n, int64_t cols)
{
	struct hgc_tir_expr *at[POST_MAX_DIMS];
	int64_t ext[POST_MAX_DIMS];
	struct hgc_tir_mutator zero = {.expr = var_to_zero, .m = m};

	for (int i = 0; i < nidx; i++) {
		at[i] = hgc_tir_expr_copy(m, idx[i]);
		zero.ctx = n->j;
		at[i] = hgc_tir_mutate_expr(at[i], &zero);
		for (int k = 0; k < n->nr; k++) {
			zero.ctx = n->r[k];
			at[i] = hgc_tir_mutate_expr(at[i], &zero);
		}
		ext[i] = i == nidx - 1 ? cols : 1;
	}
	return hgc_tir_addr(m, t, nidx, at, ext);
}

/* brgemm_post from the call and the matched nest. */
static struct hgc_tir_expr *post_call(struct hgc_tir_module *m, const struct hgc_tir_expr *call,
				      const struct nest *n, int64_t cols)
{
	const struct hgc_tir_expr *bl = n->bias;
	struct hgc_tir_expr *args[13];
	int i;

	for (i = 0; i < 11; i++)
		args[i] = call->ops[i];
	args[11] = addr_at0(m, bl->u.tensor, bl->ops, bl->nops, n, cols);
	args[12] = hgc_tir_bool(m, n->relu);
	return hgc_tir_intrin(m, HGC_TIR_I_BRGEMM_POST, 13, args);
}

/* Fold the nest at b's statement i + 1 into the call statement i ends with: 1 if done. */
static int fold_at(struct hgc_tir_module *m, const struct hgc_tp_vars *v, struct hgc_tir_stmt *b,
		   int i)
{
	struct hgc_tir_stmt *cs = the_call(b->u.block.stmts[i]), *cols;
	const struct hgc_tir_expr *call = cs ? cs->u.expr : NULL;
	int64_t M, N;
	struct nest n;

	if (!call || !hgc_tir_const_int(call->ops[4], &M) || !hgc_tir_const_int(call->ops[5], &N) ||
	    !(cols = nest_loops(b->u.block.stmts[i + 1], M, N, &n)) ||
	    !match_body(cols, call->ops[2]->u.tensor, &n) || !match_access(v, call, &n))
		return 0;
	cs->u.expr = post_call(m, call, &n, N);
	hgc_tir_remove(b, i + 1, 1);
	return 1;
}

typedef int fold_at_fn(struct hgc_tir_module *m, const struct hgc_tp_vars *v,
		       struct hgc_tir_stmt *b, int i);

/* Each statement of block b with the next one through at (fold_at, qfold_at): the folds. */
static int fold_pairs(struct hgc_tir_module *m, const struct hgc_tp_vars *v, struct hgc_tir_stmt *b,
		      fold_at_fn *at)
{
	int changes = 0;

	for (int i = 0; i + 1 < b->u.block.n; i++)
		changes += at(m, v, b, i);
	return changes;
}

/* The call-and-nest pairs among block b's statements, folded. */
static int fold_block(struct hgc_tir_module *m, const struct hgc_tp_vars *v,
		      struct hgc_tir_stmt *b)
{
	return fold_pairs(m, v, b, fold_at);
}

int hgc_tir_pass_fold_post(struct hgc_tir_module *m, struct hgc_tir_passes *p, struct hgc_diag *d)
{
	(void)p;
	(void)d;
	return hgc_tp_each_block(m, fold_block);
}

/*
 * fold_quant: a u8 x s8 brgemm into a local s32 block and the nest after
 * it that requantizes the block into an 8-bit tensor,
 *
 *   for (r in [0, M)) {		(or nested row loops counting M rows)
 *     for (j in [0, N)) {
 *       tensor f: f32[1];
 *       f[0] = (f32)C[i..];
 *       let x = f[0]; let y = V[v..]; f[0] = x OP y;	(OP: * / + -; up to four
 *       let x = f[0]; f[0] = select(x < 0.0f, 0.0f, x);	 steps, in any order)
 *       Y[y..] = (u8)round(f[0]);				(or s8)
 *     }
 *   }
 *
 * with V[v..] a scalar (free of r and j) or column j of a row, becomes
 *
 *   brgemm_q(A, B, &C[c..], bs, M, N, K, lda, ldb, ldc, acc, &Y[y.. at r = j = 0],
 *            ldy, steps, &V0.., &V1.., &V2.., &V3..)
 *
 * which the runtime computes the same way, bit for bit (runtime.h,
 * requant.c).  The nest is what an int8 MatMul's Dequantize scales and
 * Quantize lower to at its post_block anchor.  With AMX each 32x32 block's
 * requantization then runs while the next block multiplies (brgemm_amx.c);
 * so the pass folds only where the driver says int8 calls run on AMX
 * (struct hgc_tir_passes.amx) and the call's shape takes that path (rows and columns in 32s, K in 64s and over two
 * chunks, so that neither the exact nor the two-chunk path takes it):
 * elsewhere the nest LLVM vectorizes is as fast (docs/runtime.md,
 * "Requantization between the products", has what it gains).  C's block
 * is scratch for brgemm_q, so C must be a local tensor that nothing but
 * the call and the nest touches.
 */

/* The requantization nest once matched. */
struct qnest {
	struct nest rows;			/* row loops, j; cidx: C's indices */
	const struct hgc_tir_expr *v[HGC_RT_Q_STEPS];	/* each step's load, or NULL */
	bool col[HGC_RT_Q_STEPS];
	int op[HGC_RT_Q_STEPS], n;
	const struct hgc_tir_stmt *store;	/* Y[y..] = (u8)round(f[0]) */
};

/* Whether e is a load of f[0] (f a one-element tensor). */
static bool load_f(const struct hgc_tir_expr *e, const struct hgc_tir_tensor *f)
{
	int64_t z;

	return e->kind == HGC_TIR_E_LOAD && e->u.tensor == f && e->nops == 1 &&
	       hgc_tir_const_int(e->ops[0], &z) && z == 0;
}

/* Whether s is `f[0] = value`; the value into *val. */
static bool store_f(const struct hgc_tir_stmt *s, const struct hgc_tir_tensor *f,
		    const struct hgc_tir_expr **val)
{
	int64_t z;

	if (s->kind != HGC_TIR_S_STORE || s->u.store.tensor != f || s->u.store.n != 1 ||
	    !hgc_tir_const_int(s->u.store.idx[0], &z) || z)
		return false;
	*val = s->u.store.value;
	return true;
}

/* Whether s is `let x = f[0]`; x into *x. */
static bool let_f(const struct hgc_tir_stmt *s, const struct hgc_tir_tensor *f,
		  struct hgc_tir_var **x)
{
	if (s->kind != HGC_TIR_S_LET || s->u.let.var->nassign || !load_f(s->u.let.value, f))
		return false;
	*x = s->u.let.var;
	return true;
}

/* The runtime's op for binary op b with f's value first (x_first), or 0. */
static int step_op(int b, bool x_first)
{
	switch (b) {
	case HGC_TIR_MUL: return HGC_RT_Q_MUL;
	case HGC_TIR_ADD: return HGC_RT_Q_ADD;
	case HGC_TIR_DIV: return x_first ? HGC_RT_Q_DIV : 0;
	case HGC_TIR_SUB: return x_first ? HGC_RT_Q_SUB : 0;
	default: return 0;
	}
}

/* One step at s[*i] (advanced past it) into q; false when it is not one. */
static bool match_step(struct hgc_tir_stmt *const *s, int n, int *i,
		       const struct hgc_tir_tensor *f, struct qnest *q)
{
	const struct hgc_tir_expr *val, *cond;
	struct hgc_tir_var *x, *y;
	const struct hgc_tir_expr *yv;
	int k = *i;

	if (q->n == HGC_RT_Q_STEPS || k + 1 >= n || !let_f(s[k], f, &x))
		return false;
	if (store_f(s[k + 1], f, &val) && val->kind == HGC_TIR_E_SELECT) {	/* the clamp */
		cond = val->ops[0];
		if (cond->kind != HGC_TIR_E_BINARY || cond->op != HGC_TIR_LT ||
		    !is_var(cond->ops[0], x) || !is_zero(cond->ops[1]) || !is_zero(val->ops[1]) ||
		    !is_var(val->ops[2], x))
			return false;
		q->v[q->n] = NULL;
		q->col[q->n] = false;
		q->op[q->n++] = HGC_RT_Q_RELU;
		*i = k + 2;
		return true;
	}
	if (k + 2 >= n || !let_load(s[k + 1], NULL, f) || !store_f(s[k + 2], f, &val) ||
	    val->kind != HGC_TIR_E_BINARY)
		return false;
	y = s[k + 1]->u.let.var;
	yv = s[k + 1]->u.let.value;
	if (is_var(val->ops[0], x) && is_var(val->ops[1], y))
		q->op[q->n] = step_op(val->op, true);
	else if (is_var(val->ops[0], y) && is_var(val->ops[1], x))
		q->op[q->n] = step_op(val->op, false);
	else
		return false;
	if (!q->op[q->n])
		return false;
	q->v[q->n++] = yv;
	*i = k + 3;
	return true;
}

/* Whether the element nest's body b is a requantization of C's element into q. */
static bool match_qbody(const struct hgc_tir_stmt *b, const struct hgc_tir_tensor *c,
			struct qnest *q)
{
	struct hgc_tir_stmt *const *s = b->u.block.stmts;
	const struct hgc_tir_expr *val, *cl;
	const struct hgc_tir_tensor *f;
	enum hgc_tir_kind yk;
	int n = b->u.block.n, i = 2;

	if (n < 4 || s[0]->kind != HGC_TIR_S_TENSOR)
		return false;
	f = s[0]->u.tensor;
	if (f->elem.kind != HGC_TIR_F32 || f->elem.ptr || hgc_tir_tensor_size(f) != 1 ||
	    !store_f(s[1], f, &val) || val->kind != HGC_TIR_E_CAST ||
	    val->type.kind != HGC_TIR_F32 || val->type.lanes != 1)
		return false;
	cl = val->ops[0];
	if (cl->kind != HGC_TIR_E_LOAD || cl->u.tensor != c || cl->type.kind != HGC_TIR_S32)
		return false;
	q->rows.cidx = cl->ops;
	q->n = 0;
	while (i < n - 1)
		if (!match_step(s, n, &i, f, q))
			return false;
	/* the last: Y[y..] = (u8 or s8)round(f[0]) */
	q->store = s[n - 1];
	val = q->store->kind == HGC_TIR_S_STORE ? q->store->u.store.value : NULL;
	yk = val ? (enum hgc_tir_kind)val->type.kind : HGC_TIR_VOID;
	return q->n > 0 && val && val->kind == HGC_TIR_E_CAST && (yk == HGC_TIR_U8 || yk == HGC_TIR_S8) &&
	       val->type.lanes == 1 && !val->type.ptr && q->store->u.store.tensor->elem.kind == yk &&
	       val->ops[0]->kind == HGC_TIR_E_INTRIN && val->ops[0]->op == HGC_TIR_I_ROUND &&
	       load_f(val->ops[0]->ops[0], f);
}



/* Y's row stride ldy from its store (its linear position: rows ldy apart, j once). */
static bool y_stride(const struct hgc_tp_vars *v, const struct qnest *q, int64_t N, int64_t *ldy)
{
	const struct hgc_tir_stmt *st = q->store;
	const struct nest *n = &q->rows;
	struct hgc_tp_aff a = {.ok = true};

	if (!linear(v, st->u.store.tensor, st->u.store.idx, st->u.store.n, 1, &a))
		return false;
	*ldy = hgc_tp_aff_coef(&a, n->r[n->nr - 1]);
	return *ldy >= N && rows_apart(&a, n, *ldy);
}

struct uses {
	const struct hgc_tir_tensor *t;
	int n;
};

static void uses_expr(struct hgc_tir_visitor *vis, struct hgc_tir_expr *e)
{
	struct uses *u = vis->ctx;

	u->n += (e->kind == HGC_TIR_E_LOAD || e->kind == HGC_TIR_E_ADDR) && e->u.tensor == u->t;
}

static bool uses_stmt(struct hgc_tir_visitor *vis, struct hgc_tir_stmt *s)
{
	struct uses *u = vis->ctx;

	u->n += s->kind == HGC_TIR_S_STORE && s->u.store.tensor == u->t;
	return true;
}

/* Loads, addresses and stores of t in module m. */
static int tensor_uses(struct hgc_tir_module *m, const struct hgc_tir_tensor *t)
{
	struct uses u = {t, 0};
	struct hgc_tir_visitor vis = {.stmt_pre = uses_stmt, .expr = uses_expr, .ctx = &u};

	hgc_tir_walk_module(m, &vis);
	return u.n;
}

/* Whether the call's constant shape takes AMX's requantizing blocks (brgemm_amx.c). */
static bool amx_shape(const struct hgc_tir_expr *call, int64_t M, int64_t N)
{
	int64_t K;

	return hgc_tir_const_int(call->ops[6], &K) && M % 32 == 0 && N % 32 == 0 && K % 64 == 0 &&
	       K > 128;
}


/* brgemm_q from the call and the matched nest. */
static struct hgc_tir_expr *q_call(struct hgc_tir_module *m, const struct hgc_tir_expr *call,
				   const struct qnest *q, int64_t N, int64_t ldy)
{
	const struct hgc_tir_stmt *st = q->store;
	struct hgc_tir_expr *args[18], *first = NULL;
	int64_t steps = st->u.store.value->type.kind == HGC_TIR_S8 ? HGC_RT_Q_S8 : 0;
	int i;

	for (i = 0; i < 11; i++)
		args[i] = call->ops[i];
	args[11] = addr_at0(m, st->u.store.tensor, st->u.store.idx, st->u.store.n, &q->rows, N);
	args[12] = hgc_tir_idx(m, ldy);
	for (i = 0; i < HGC_RT_Q_STEPS; i++) {
		const struct hgc_tir_expr *l = i < q->n ? q->v[i] : NULL;

		if (i < q->n)
			steps |= (int64_t)(q->op[i] | (q->col[i] ? HGC_RT_Q_COL : 0)) << (4 * i);
		args[14 + i] = l ? addr_at0(m, l->u.tensor, l->ops, l->nops, &q->rows,
					    q->col[i] ? N : 1)
				 : NULL;
		if (args[14 + i] && !first)
			first = args[14 + i];
	}
	for (i = 0; i < HGC_RT_Q_STEPS; i++)	/* unused operands: any f32 address */
		if (!args[14 + i])
			args[14 + i] = hgc_tir_expr_copy(m, first);
	args[13] = hgc_tir_idx(m, steps);
	return hgc_tir_intrin(m, HGC_TIR_I_BRGEMM_Q, 18, args);
}

/* Fold the requantization nest at b's statement i + 1 into the u8 call statement i ends with. */
static int qfold_at(struct hgc_tir_module *m, const struct hgc_tp_vars *v, struct hgc_tir_stmt *b,
		    int i)
{
	struct hgc_tir_stmt *cs = call_of(b->u.block.stmts[i], HGC_TIR_U8), *cols;
	const struct hgc_tir_expr *call = cs ? cs->u.expr : NULL;
	struct hgc_tir_tensor *c;
	int64_t M, N, ldy;
	struct qnest q = {0};
	int k;

	if (!call || !hgc_tir_const_int(call->ops[4], &M) || !hgc_tir_const_int(call->ops[5], &N) ||
	    !amx_shape(call, M, N))
		return 0;
	c = call->ops[2]->u.tensor;
	if (c->scope != HGC_TIR_LOCAL || c->is_param ||
	    !(cols = nest_loops(b->u.block.stmts[i + 1], M, N, &q.rows)) ||
	    !match_qbody(cols, c, &q))
		return 0;
	if (!c_element(v, call, q.rows.cidx, &q.rows))
		return 0;
	for (k = 0; k < q.n; k++)
		if (q.v[k] && !operand_at(v, q.v[k], &q.rows, &q.col[k]))
			return 0;
	if (!y_stride(v, &q, N, &ldy) || q.store->u.store.n > POST_MAX_DIMS ||
	    tensor_uses(m, c) != 2)	/* the call's address and the nest's load: nothing else */
		return 0;
	cs->u.expr = q_call(m, call, &q, N, ldy);
	hgc_tir_remove(b, i + 1, 1);
	return 1;
}

/* The u8 call-and-nest pairs among block b's statements, folded. */
static int qfold_block(struct hgc_tir_module *m, const struct hgc_tp_vars *v,
		       struct hgc_tir_stmt *b)
{
	return fold_pairs(m, v, b, qfold_at);
}

int hgc_tir_pass_fold_quant(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			    struct hgc_diag *d)
{
	(void)d;
	if (!p->amx)
		return 0;
	return hgc_tp_each_block(m, qfold_block);
}
