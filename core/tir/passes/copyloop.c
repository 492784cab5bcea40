/*
 * copyloop.c: loops that copy element by element become copy calls.
 *
 *   for (q in [lo, hi)) { let ...; T[i.., a + q] = U[j.., b + q]; }
 *
 * where the lets compute indices, the value is a load of another tensor of
 * the same element type, every index but the last is free of q and the last
 * is q plus a q-free part, on both sides (or the last two are a + x / k and
 * x % k over a last dim of k, x stepping with q: split_last), becomes
 *
 *   copy(&T[i.., a + lo], &U[j.., b + lo], max(0, hi - lo))
 *
 * also when the store sits in an `if` whose condition does not read q (the
 * padding check of a packing loop).  Packing loops are most of the code the
 * backend compiles for a MatMul (two thirds of the optimized LLVM IR of a
 * 128x479x1024 one), and LLVM vectorizes each with runtime alias checks and
 * a scalar remainder; a copy is one memmove, which it inlines when the size
 * is a small constant.
 *
 * A copy moves its elements as if through a temporary, the loop one by one:
 * they differ when the two ranges overlap, so T and U must be different
 * tensors, and not two parameters (the caller may pass one buffer twice).
 * The pass runs last: the passes before it read a loop's accesses, which a
 * copy's one-element slices would hide from them.
 */
#include "passes_int.h"

#define MAX_LETS 16
#define MAX_RANK 16

/* One candidate loop: its variable and the lets of its body. */
struct cand {
	struct hgc_tir_module *m;
	const struct hgc_tp_vars *v;
	struct hgc_tir_var *q;
	const struct hgc_tir_expr *lo;
	struct hgc_tir_var *lets[MAX_LETS];
	int nlets;
};

/* Whether var is a let of the loop's body. */
static bool body_let(const struct cand *c, const struct hgc_tir_var *var)
{
	for (int i = 0; i < c->nlets; i++)
		if (c->lets[i] == var)
			return true;
	return false;
}

/* Whether e reads q, directly or through a let of the body. */
static bool reads_q(const struct cand *c, const struct hgc_tir_expr *e)
{
	if (e->kind == HGC_TIR_E_VAR)
		return e->u.var == c->q ||
		       (body_let(c, e->u.var) && reads_q(c, c->v->let[e->u.var->id]));
	for (int i = 0; i < e->nops; i++)
		if (reads_q(c, e->ops[i]))
			return true;
	return false;
}

/* Mutator for outside(): q becomes lo, a let of the body its value (itself made fit). */
static struct hgc_tir_expr *outside_var(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	const struct cand *c = mu->ctx;

	if (e->kind != HGC_TIR_E_VAR)
		return e;
	if (e->u.var == c->q)
		return hgc_tir_expr_copy(c->m, c->lo);
	if (body_let(c, e->u.var))
		return hgc_tir_mutate_expr(hgc_tir_expr_copy(c->m, c->v->let[e->u.var->id]), mu);
	return e;
}

/* A copy of e with q replaced by lo and the body's lets by their values: fit for
   outside the loop. */
static struct hgc_tir_expr *outside(const struct cand *c, const struct hgc_tir_expr *e)
{
	struct hgc_tir_mutator mu = { .expr = outside_var, .m = c->m, .ctx = (void *)c };

	return hgc_tir_mutate_expr(hgc_tir_expr_copy(c->m, e), &mu);
}

/* Whether e is q plus a part free of q (lets of the body followed). */
static bool q_plus(const struct cand *c, const struct hgc_tir_expr *e)
{
	struct hgc_tp_aff a = hgc_tp_affine(c->v, e);

	return a.ok && hgc_tp_aff_coef(&a, c->q) == 1;
}

/*
 * Whether the last two indices of t are (a + x / k, x % k) with k t's last
 * dim, a free of q and x stepping with q: the row-major element index is
 * then a * k + x, one element per step (C's division: (x / k) * k + x % k is
 * x for every x).  Packing rows of several pixels of few channels reads
 * them this way (conv_kwrow: 7 pixels of 3 channels, 21 floats in a row).
 */
static bool split_last(const struct cand *c, const struct hgc_tir_tensor *t,
		       struct hgc_tir_expr *const *idx, int n)
{
	const struct hgc_tir_expr *m = idx[n - 1], *hi = idx[n - 2], *dv = hi;
	int64_t k;

	if (m->kind != HGC_TIR_E_BINARY || m->op != HGC_TIR_MOD ||
	    !hgc_tir_const_int(m->ops[1], &k) || k <= 0 || hgc_tir_tensor_dim(t, n - 1) != k)
		return false;
	if (hi->kind == HGC_TIR_E_BINARY && hi->op == HGC_TIR_ADD) {
		bool left = hi->ops[0]->kind == HGC_TIR_E_BINARY && hi->ops[0]->op == HGC_TIR_DIV;

		dv = hi->ops[left ? 0 : 1];
		if (reads_q(c, hi->ops[left ? 1 : 0]))
			return false;
	}
	return dv->kind == HGC_TIR_E_BINARY && dv->op == HGC_TIR_DIV &&
	       hgc_tp_expr_eq(dv->ops[0], m->ops[0]) && hgc_tp_expr_eq(dv->ops[1], m->ops[1]) &&
	       q_plus(c, m->ops[0]);
}

/* Whether the indices idx of an n-dim access of t step by one element with q. */
static bool steps_with_q(const struct cand *c, const struct hgc_tir_tensor *t,
			 struct hgc_tir_expr *const *idx, int n)
{
	int free_dims = n - 1;

	for (int i = 0; i < n; i++)
		if (!hgc_tp_pure(idx[i]))
			return false;
	if (n >= 2 && split_last(c, t, idx, n))
		free_dims = n - 2;
	else if (!q_plus(c, idx[n - 1]))
		return false;
	for (int i = 0; i < free_dims; i++)
		if (reads_q(c, idx[i]))
			return false;
	return true;
}

/* Take the leading immutable index lets of block b into c; the first other statement. */
static struct hgc_tir_stmt *skip_lets(struct cand *c, struct hgc_tir_stmt *b)
{
	int i;

	for (i = 0; i < b->u.block.n; i++) {
		struct hgc_tir_stmt *s = b->u.block.stmts[i];

		if (s->kind != HGC_TIR_S_LET)
			break;
		if (s->u.let.var->nassign || !hgc_tp_pure(s->u.let.value) || c->nlets == MAX_LETS ||
		    !c->v->let[s->u.let.var->id])
			return NULL;
		c->lets[c->nlets++] = s->u.let.var;
	}
	return i == b->u.block.n - 1 ? b->u.block.stmts[i] : NULL;
}

/* Whether store s copies one element of another tensor, stepping with q. */
static bool copy_store(const struct cand *c, const struct hgc_tir_stmt *s)
{
	const struct hgc_tir_tensor *t, *u;
	const struct hgc_tir_expr *val;

	if (s->kind != HGC_TIR_S_STORE || s->u.store.value->kind != HGC_TIR_E_LOAD)
		return false;
	t = s->u.store.tensor;
	val = s->u.store.value;
	u = val->u.tensor;
	return u != t && !(t->is_param && u->is_param) && !t->elem.ptr &&
	       hgc_tir_type_eq(t->elem, u->elem) && s->u.store.n == t->ndims &&
	       val->nops == u->ndims && t->ndims > 0 && u->ndims > 0 && t->ndims <= MAX_RANK &&
	       u->ndims <= MAX_RANK &&
	       steps_with_q(c, t, s->u.store.idx, s->u.store.n) &&
	       steps_with_q(c, u, val->ops, val->nops);
}

/* The element count: hi - lo, at least 0. */
static struct hgc_tir_expr *count(const struct cand *c, const struct hgc_tir_stmt *loop)
{
	struct hgc_tir_expr *hi = loop->u.loop.end;
	int64_t a, b;

	if (hgc_tir_const_int(c->lo, &a) && hgc_tir_const_int(hi, &b))
		return hgc_tir_idx(c->m, b > a ? b - a : 0);
	if (hgc_tir_const_int(c->lo, &a) && !a && hi->kind == HGC_TIR_E_BINARY &&
	    hi->op == HGC_TIR_MAX && hgc_tir_const_int(hi->ops[0], &b) && !b)
		return hgc_tir_expr_copy(c->m, hi);	/* max(0, ..) already */
	return hgc_tir_binary(c->m, HGC_TIR_MAX, hgc_tir_idx(c->m, 0),
			      hgc_tir_sub(c->m, hgc_tir_expr_copy(c->m, hi),
					  hgc_tir_expr_copy(c->m, c->lo)));
}

/* copy(&T[..], &U[..], n) for store s, outside the loop. */
static struct hgc_tir_stmt *copy_call(const struct cand *c, const struct hgc_tir_stmt *loop,
				      const struct hgc_tir_stmt *s)
{
	const struct hgc_tir_expr *val = s->u.store.value;
	struct hgc_tir_expr *di[MAX_RANK], *si[MAX_RANK];

	for (int i = 0; i < s->u.store.n; i++)
		di[i] = outside(c, s->u.store.idx[i]);
	for (int i = 0; i < val->nops; i++)
		si[i] = outside(c, val->ops[i]);
	return hgc_tir_eval(c->m, NULL,
			    hgc_tir_intrinv(c->m, HGC_TIR_I_COPY, 3,
					    hgc_tir_addr(c->m, s->u.store.tensor, s->u.store.n, di, NULL),
					    hgc_tir_addr(c->m, val->u.tensor, val->nops, si, NULL),
					    count(c, loop)));
}

/* The copy that replaces loop, or NULL when it is not a copy loop. */
static struct hgc_tir_stmt *rewrite(struct hgc_tir_module *m, const struct hgc_tp_vars *v,
				    struct hgc_tir_stmt *loop)
{
	struct cand c = { .m = m, .v = v };
	struct hgc_tir_stmt *s, *in = NULL, *r;
	int64_t step = 1;

	if (loop->kind != HGC_TIR_S_FOR ||
	    (loop->u.loop.step && (!hgc_tir_const_int(loop->u.loop.step, &step) || step != 1)))
		return NULL;
	c.q = loop->u.loop.var;
	c.lo = loop->u.loop.begin;
	s = skip_lets(&c, loop->u.loop.body);
	if (s && s->kind == HGC_TIR_S_IF && !s->u.cond.els && hgc_tp_pure(s->u.cond.cond) &&
	    !reads_q(&c, s->u.cond.cond)) {
		in = s;
		s = skip_lets(&c, s->u.cond.then);
	}
	if (!s || !copy_store(&c, s))
		return NULL;
	r = copy_call(&c, loop, s);
	if (!in)
		return r;
	s = hgc_tir_if(m, NULL, outside(&c, in->u.cond.cond), false);
	hgc_tir_append(hgc_tir_body(s), r);
	return s;
}

/* The copy loops among block b's statements, rewritten. */
static int rewrite_block(struct hgc_tir_module *m, const struct hgc_tp_vars *v,
			 struct hgc_tir_stmt *b)
{
	int changes = 0;

	for (int i = 0; i < b->u.block.n; i++) {
		struct hgc_tir_stmt *r = rewrite(m, v, b->u.block.stmts[i]);

		if (r) {
			b->u.block.stmts[i] = r;
			changes++;
		}
	}
	return changes;
}

int hgc_tir_pass_copy_loops(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			    struct hgc_diag *d)
{
	(void)p;
	(void)d;
	return hgc_tp_each_block(m, rewrite_block);
}
