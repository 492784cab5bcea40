/*
 * postfold.c: an f32 brgemm and the loop nest right after it that adds a
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

/*
 * Whether a holds only the row loops' terms, as the rows of a call's block
 * ldc apart (the innermost row loop's coefficient ldc, each outer one's
 * its inner extents times that: the row loops count the block's rows in
 * mixed radix), j's with coefficient 1, and no constant.
 */
static bool only_rows(const struct hgc_tp_aff *a, const struct nest *n, int64_t ldc)
{
	int64_t c = ldc;
	int k, i;

	if (a->c0 != 0 || hgc_tp_aff_coef(a, n->j) != 1)
		return false;
	for (k = n->nr - 1; k >= 0; c *= n->rext[k--])
		if (hgc_tp_aff_coef(a, n->r[k]) != c)
			return false;
	for (i = 0; i < a->n; i++) {
		bool known = a->t[i].var == n->j;

		for (k = 0; k < n->nr; k++)
			known |= a->t[i].var == n->r[k];
		if (!known && a->t[i].c != 0)
			return false;
	}
	return true;
}

/* The brgemm call that s is or ends with (a loop of one trip), or NULL. */
static struct hgc_tir_stmt *the_call(const struct hgc_tir_stmt *s)
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
	    s->u.expr->op != HGC_TIR_I_BRGEMM || s->u.expr->ops[0]->type.kind != HGC_TIR_F32 ||
	    s->u.expr->ops[2]->kind != HGC_TIR_E_ADDR)
		return NULL;
	return (struct hgc_tir_stmt *)s;
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

/*
 * Whether the nest's C accesses are element (r, j) of the call's block (r
 * the row the row loops count) and its bias load reads column j of a row
 * (every index but the last free of the loops, the last j plus a free
 * part).
 */
static bool match_access(const struct hgc_tp_vars *v, const struct hgc_tir_expr *call,
			 const struct nest *n)
{
	const struct hgc_tir_expr *caddr = call->ops[2], *bl = n->bias;
	struct hgc_tp_aff a = {.ok = true};
	int64_t ldc;
	int d;

	if (!hgc_tir_const_int(call->ops[9], &ldc) ||
	    !linear(v, caddr->u.tensor, n->cidx, caddr->nops, 1, &a) ||
	    !linear(v, caddr->u.tensor, caddr->ops, caddr->nops, -1, &a) ||
	    !only_rows(&a, n, ldc))
		return false;
	for (d = 0; d < bl->nops; d++) {
		struct hgc_tp_aff b = hgc_tp_affine(v, bl->ops[d]);

		if (!b.ok || hgc_tp_aff_coef(&b, n->j) != (d == bl->nops - 1))
			return false;
		for (int k = 0; k < n->nr; k++)
			if (hgc_tp_aff_coef(&b, n->r[k]) != 0)
				return false;
	}
	return true;
}

/* The variable in ctx read as 0 (hgc_tir_mutate_expr). */
static struct hgc_tir_expr *var_to_zero(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	return is_var(e, mu->ctx) ? hgc_tir_idx(mu->m, 0) : e;
}

/* brgemm_post from the call and the matched nest. */
static struct hgc_tir_expr *post_call(struct hgc_tir_module *m, const struct hgc_tir_expr *call,
				      const struct nest *n, int64_t cols)
{
	const struct hgc_tir_expr *bl = n->bias;
	struct hgc_tir_expr *args[13], *idx[POST_MAX_DIMS];
	struct hgc_tir_mutator at_j0 = { .expr = var_to_zero, .m = m, .ctx = n->j };
	int64_t ext[POST_MAX_DIMS];
	int i;

	for (i = 0; i < 11; i++)
		args[i] = call->ops[i];
	for (i = 0; i < bl->nops; i++) {
		idx[i] = hgc_tir_mutate_expr(hgc_tir_expr_copy(m, bl->ops[i]), &at_j0);
		ext[i] = i == bl->nops - 1 ? cols : 1;
	}
	args[11] = hgc_tir_addr(m, bl->u.tensor, bl->nops, idx, ext);
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
	    !match_body(cols, call->ops[2]->u.tensor, &n) ||
	    n.bias->nops > POST_MAX_DIMS || !match_access(v, call, &n))
		return 0;
	cs->u.expr = post_call(m, call, &n, N);
	for (int k = i + 1; k + 1 < b->u.block.n; k++)
		b->u.block.stmts[k] = b->u.block.stmts[k + 1];
	b->u.block.n--;
	return 1;
}

/* The call-and-nest pairs among block b's statements, folded. */
static int fold_block(struct hgc_tir_module *m, const struct hgc_tp_vars *v,
		      struct hgc_tir_stmt *b)
{
	int changes = 0;

	for (int i = 0; i + 1 < b->u.block.n; i++)
		changes += fold_at(m, v, b, i);
	return changes;
}

int hgc_tir_pass_fold_post(struct hgc_tir_module *m, struct hgc_tir_passes *p, struct hgc_diag *d)
{
	(void)p;
	(void)d;
	return hgc_tp_each_block(m, fold_block);
}
