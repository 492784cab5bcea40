/*
 * row_fold.c: the elementwise loops over a row that come right before a
 * split reduction over it (lower_reduce.c's LANES accumulators) are folded
 * into the reduction's loop: softmax's scale and mask add go into the max
 * pass, its subtract and exp into the sum pass, so that a row of scores is
 * read and written once per pass instead of once per member.
 *
 * The loops before the reduction are first merged into one
 * (hgc_fused_merge_loops), E: for j in [0, N) { lets and stores }.  The
 * reduction R: for l in [0, N / L) { lets and assignments to its lane
 * accumulators }, which reads element l * L + v in its lane v.  Each read
 * in R of a tensor E writes is unified with E's store to it, which gives the
 * j that read wants; a copy of E's body for that j (fresh lets) goes right
 * before the first statement that reads it.  The fold is legal when those
 * j are l * L + 0, ..., l * L + L - 1 in that order (E's iterations then
 * run in their own order, each before its value is read) and R writes no
 * tensor (nothing E reads changes between its iterations).
 */
#include "fused_int.h"

#include <string.h>

#define MAX_LANES 32	/* insertions in one reduction body */
#define MAX_LETS 64	/* lets in one elementwise body */

/* What a fold needs: E's loop and its stores, R's loop, the lanes found. */
struct fold {
	struct hgc_tir_module *m;
	struct hgc_tir_stmt *e, *r;
	struct hgc_tir_stmt *st[8];	/* E's stores, one per tensor */
	int nst;
	struct hgc_tir_expr *lane[MAX_LANES];	/* j of each insertion */
	int at[MAX_LANES];		/* the R statement it goes before */
	int nlanes;
};

/* Whether e is a constant integer equal to v. */
static bool is_int(const struct hgc_tir_expr *e, int64_t v)
{
	return e->kind == HGC_TIR_E_INT && e->u.i == v;
}

/* Whether e may be evaluated any number of times anywhere (no address,
   no call, only math intrinsics). */
static bool pure(const struct hgc_tir_expr *e)
{
	if (e->kind == HGC_TIR_E_ADDR || e->kind == HGC_TIR_E_CALL)
		return false;
	if (e->kind == HGC_TIR_E_INTRIN && (e->op < HGC_TIR_I_EXP || e->op > HGC_TIR_I_POW))
		return false;
	for (int i = 0; i < e->nops; i++)
		if (!pure(e->ops[i]))
			return false;
	return true;
}

/* Whether loop s runs from 0 in steps of 1 to a constant (returned in *n). */
static bool plain_loop(const struct hgc_tir_stmt *s, int64_t *n)
{
	if (s->kind != HGC_TIR_S_FOR || !is_int(s->u.loop.begin, 0) ||
	    s->u.loop.end->kind != HGC_TIR_E_INT ||
	    (s->u.loop.step && !is_int(s->u.loop.step, 1)))
		return false;
	*n = s->u.loop.end->u.i;
	return s->u.loop.body->kind == HGC_TIR_S_BLOCK;
}

/* Whether a and b are the same expression (loads of the same tensor). */
static bool same(const struct hgc_tir_expr *a, const struct hgc_tir_expr *b)
{
	if (a->kind != b->kind || a->op != b->op || a->nops != b->nops ||
	    memcmp(&a->type, &b->type, sizeof(a->type)) != 0)
		return false;
	if ((a->kind == HGC_TIR_E_INT && a->u.i != b->u.i) ||
	    (a->kind == HGC_TIR_E_FLOAT && memcmp(&a->u.f, &b->u.f, sizeof(a->u.f)) != 0) ||
	    (a->kind == HGC_TIR_E_VAR && a->u.var != b->u.var) ||
	    (a->kind == HGC_TIR_E_LOAD && a->u.tensor != b->u.tensor) ||
	    a->kind == HGC_TIR_E_ADDR || a->kind == HGC_TIR_E_CALL)
		return false;
	for (int i = 0; i < a->nops; i++)
		if (!same(a->ops[i], b->ops[i]))
			return false;
	return true;
}

/* Whether stores a and b write the same element. */
static bool same_index(const struct hgc_tir_stmt *a, const struct hgc_tir_stmt *b)
{
	if (a->u.store.n != b->u.store.n)
		return false;
	for (int i = 0; i < a->u.store.n; i++)
		if (!same(a->u.store.idx[i], b->u.store.idx[i]))
			return false;
	return true;
}

/* E's body: lets and stores (one index per tensor), all pure; the stores noted. */
static bool scan_e(struct fold *f)
{
	struct hgc_tir_stmt *b = f->e->u.loop.body, *x;
	int i, k;

	f->nst = 0;
	if (b->u.block.n > MAX_LETS)
		return false;
	for (i = 0; i < b->u.block.n; i++) {
		x = b->u.block.stmts[i];
		if (x->kind == HGC_TIR_S_LET && pure(x->u.let.value))
			continue;
		if (x->kind != HGC_TIR_S_STORE || !pure(x->u.store.value) ||
		    f->nst == (int)(sizeof(f->st) / sizeof(f->st[0])))
			return false;
		for (k = 0; k < x->u.store.n; k++)
			if (!pure(x->u.store.idx[k]))
				return false;
		for (k = 0; k < f->nst; k++)
			if (f->st[k]->u.store.tensor == x->u.store.tensor)
				break;
		if (k < f->nst && !same_index(f->st[k], x))
			return false;
		if (k == f->nst)
			f->st[f->nst++] = x;
	}
	return f->nst > 0;
}

/* Unify pattern p (over E's variable j) with t: *lam becomes j's value. */
static bool unify(const struct hgc_tir_expr *p, struct hgc_tir_expr *t,
		  const struct hgc_tir_var *j, struct hgc_tir_expr **lam)
{
	if (p->kind == HGC_TIR_E_VAR && p->u.var == j) {
		if (*lam)
			return same(*lam, t);
		*lam = t;
		return true;
	}
	if (!p->nops || p->kind == HGC_TIR_E_LOAD || p->kind == HGC_TIR_E_ADDR ||
	    p->kind == HGC_TIR_E_CALL)
		return same(p, t);
	if (p->kind != t->kind || p->op != t->op || p->nops != t->nops ||
	    memcmp(&p->type, &t->type, sizeof(p->type)) != 0)
		return false;
	for (int i = 0; i < p->nops; i++)
		if (!unify(p->ops[i], t->ops[i], j, lam))
			return false;
	return true;
}

/* E's store to tensor t, or NULL. */
static struct hgc_tir_stmt *store_of(const struct fold *f, const struct hgc_tir_tensor *t)
{
	for (int i = 0; i < f->nst; i++)
		if (f->st[i]->u.store.tensor == t)
			return f->st[i];
	return NULL;
}

/* Note the loads under e of tensors E writes (statement k of R): the j each
   wants, a new lane when no earlier insertion gave it. */
static bool note_loads(struct fold *f, struct hgc_tir_expr *e, int k)
{
	struct hgc_tir_stmt *s;
	struct hgc_tir_expr *lam = NULL;
	int i;

	for (i = 0; i < e->nops; i++)
		if (!note_loads(f, e->ops[i], k))
			return false;
	if (e->kind != HGC_TIR_E_LOAD || !(s = store_of(f, e->u.tensor)))
		return true;
	if (s->u.store.n != e->nops)
		return false;
	for (i = 0; i < e->nops; i++)
		if (!unify(s->u.store.idx[i], e->ops[i], f->e->u.loop.var, &lam))
			return false;
	if (!lam)
		return false;
	for (i = 0; i < f->nlanes; i++)
		if (same(f->lane[i], lam))
			return true;
	if (f->nlanes == MAX_LANES)
		return false;
	f->lane[f->nlanes] = lam;
	f->at[f->nlanes++] = k;
	return true;
}

/* Whether lane g's j is l * L + g (l R's variable). */
static bool lane_is(const struct hgc_tir_expr *e, const struct hgc_tir_var *l, int64_t L,
		    int64_t g)
{
	const struct hgc_tir_expr *mul = e;

	if (e->kind == HGC_TIR_E_BINARY && e->op == HGC_TIR_ADD) {
		if (!is_int(e->ops[1], g))
			return false;
		mul = e->ops[0];
	} else if (g != 0) {
		return false;
	}
	return mul->kind == HGC_TIR_E_BINARY && mul->op == HGC_TIR_MUL &&
	       mul->ops[0]->kind == HGC_TIR_E_VAR && mul->ops[0]->u.var == l &&
	       is_int(mul->ops[1], L);
}

/* Scan R's body (lets and assignments only, pure) for the lanes; check them. */
static bool scan_r(struct fold *f, int64_t n)
{
	struct hgc_tir_stmt *b = f->r->u.loop.body, *x;
	int64_t nr = f->r->u.loop.end->u.i, L;
	int i;

	f->nlanes = 0;
	for (i = 0; i < b->u.block.n; i++) {
		x = b->u.block.stmts[i];
		if ((x->kind != HGC_TIR_S_LET && x->kind != HGC_TIR_S_ASSIGN) ||
		    !pure(x->u.let.value) || !note_loads(f, x->u.let.value, i))
			return false;
	}
	L = f->nlanes;
	if (!L || nr * L != n)
		return false;
	for (i = 0; i < L; i++)
		if (!lane_is(f->lane[i], f->r->u.loop.var, L, i))
			return false;
	return true;
}

/* Mutator context: E's variable to a lane, E's lets to fresh ones, loads of
   the tensors E stored (this iteration) to the values stored. */
struct subst {
	struct fold *f;
	const struct hgc_tir_expr *lam;
	struct hgc_tir_var *from[MAX_LETS], *to[MAX_LETS];
	int n;
	struct hgc_tir_var *val[8];	/* per E store: its value, once stored */
};

/* Mutator: the substitution of struct subst. */
static struct hgc_tir_expr *subst_expr(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	struct subst *s = mu->ctx;
	struct fold *f = s->f;
	int i;

	if (e->kind == HGC_TIR_E_LOAD) {
		for (i = 0; i < f->nst; i++)
			if (f->st[i]->u.store.tensor == e->u.tensor && s->val[i])
				return hgc_tir_ref(mu->m, s->val[i]);
		return e;
	}
	if (e->kind != HGC_TIR_E_VAR)
		return e;
	if (e->u.var == f->e->u.loop.var)
		return hgc_tir_expr_copy(mu->m, s->lam);
	for (i = 0; i < s->n; i++)
		if (e->u.var == s->from[i])
			return hgc_tir_ref(mu->m, s->to[i]);
	return e;
}

/* e with the substitution applied (a copy). */
static struct hgc_tir_expr *apply(struct hgc_tir_mutator *mu, const struct hgc_tir_expr *e)
{
	return hgc_tir_mutate_expr(hgc_tir_expr_copy(mu->m, e), mu);
}

/* Lane g of E's body as lets inserted into R's body at *at: a store becomes
   a let of its value, which later loads of that tensor read instead; the
   values stored last are left in val[] (per E store). */
static void lane_lets(struct fold *f, int g, int *at, struct hgc_tir_var **val)
{
	struct hgc_tir_stmt *b = f->e->u.loop.body, *x, *y;
	struct subst s = { .f = f, .lam = f->lane[g] };
	struct hgc_tir_mutator mu = { .expr = subst_expr, .m = f->m, .ctx = &s };
	struct hgc_tir_var *v;
	int i, k;

	for (i = 0; i < b->u.block.n; i++) {
		x = b->u.block.stmts[i];
		if (x->kind == HGC_TIR_S_LET) {
			v = hgc_tir_var_new(f->m, x->u.let.var->name, x->u.let.var->type);
			y = hgc_tir_let(f->m, NULL, v, apply(&mu, x->u.let.value));
			s.from[s.n] = x->u.let.var;
			s.to[s.n++] = v;
		} else {
			for (k = 0; f->st[k]->u.store.tensor != x->u.store.tensor; k++)
				;
			v = hgc_tir_var_new(f->m, "st", x->u.store.value->type);
			y = hgc_tir_let(f->m, NULL, v, apply(&mu, x->u.store.value));
			s.val[k] = v;
		}
		y->loc = x->loc;
		hgc_tir_insert(f->r->u.loop.body, (*at)++, y);
	}
	memcpy(val, s.val, sizeof(s.val));
}

/* Mutator context for R's statements: the lanes' stored values. */
struct rsub {
	struct fold *f;
	struct hgc_tir_var *(*val)[8];	/* per lane, per E store */
};

/* Mutator: a load in R of a tensor E stored becomes the lane's value. */
static struct hgc_tir_expr *r_expr(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	struct rsub *rs = mu->ctx;
	struct fold *f = rs->f;
	struct hgc_tir_expr *lam = NULL;
	int i, k, g;

	if (e->kind != HGC_TIR_E_LOAD)
		return e;
	for (k = 0; k < f->nst && f->st[k]->u.store.tensor != e->u.tensor; k++)
		;
	if (k == f->nst)
		return e;
	for (i = 0; i < e->nops; i++)
		unify(f->st[k]->u.store.idx[i], e->ops[i], f->e->u.loop.var, &lam);
	for (g = 0; g < f->nlanes && !same(f->lane[g], lam); g++)
		;
	if (g == f->nlanes)
		hgc_bug("row_fold: a load of a lane that scan_r did not find");
	return hgc_tir_ref(mu->m, rs->val[g][k]);
}

/* The final stores of lane g of E, inserted at *at. */
static void lane_stores(struct fold *f, int g, int *at, struct hgc_tir_var *const *val)
{
	struct subst s = { .f = f, .lam = f->lane[g] };
	struct hgc_tir_mutator mu = { .expr = subst_expr, .m = f->m, .ctx = &s };
	struct hgc_tir_expr *idx[HGC_MAX_DIMS];
	struct hgc_tir_stmt *x, *y;
	int k, i;

	for (k = 0; k < f->nst; k++) {
		x = f->st[k];
		for (i = 0; i < x->u.store.n; i++)
			idx[i] = apply(&mu, x->u.store.idx[i]);
		y = hgc_tir_store(f->m, NULL, x->u.store.tensor, x->u.store.n, idx,
				  hgc_tir_ref(f->m, val[k]));
		y->loc = x->loc;
		hgc_tir_insert(f->r->u.loop.body, (*at)++, y);
	}
}

/* Whether every load in e of a tensor E stores is at that store's index. */
static bool loads_at_store(const struct fold *f, const struct hgc_tir_expr *e)
{
	struct hgc_tir_stmt *s;
	int i;

	for (i = 0; i < e->nops; i++)
		if (!loads_at_store(f, e->ops[i]))
			return false;
	if (e->kind != HGC_TIR_E_LOAD || !(s = store_of(f, e->u.tensor)))
		return true;
	if (s->u.store.n != e->nops)
		return false;
	for (i = 0; i < e->nops; i++)
		if (!same(s->u.store.idx[i], e->ops[i]))
			return false;
	return true;
}

/* Whether E reads the tensors it writes only at the element it writes. */
static bool e_reads_own(const struct fold *f)
{
	struct hgc_tir_stmt *b = f->e->u.loop.body, *x;

	for (int i = 0; i < b->u.block.n; i++) {
		x = b->u.block.stmts[i];
		if (!loads_at_store(f, x->kind == HGC_TIR_S_LET ? x->u.let.value : x->u.store.value))
			return false;
	}
	return true;
}

/*
 * Fold loop e into loop r when legal (see the top): true when done.  R's
 * body becomes: every lane's lets of E (its loads first, so that the
 * vectorizer can take the lanes' loads together: no store comes between),
 * every lane's stores, then R's own statements reading the stored values.
 */
static bool fold(struct hgc_tir_module *m, struct hgc_tir_stmt *e, struct hgc_tir_stmt *r)
{
	static _Thread_local struct fold f;
	static _Thread_local struct hgc_tir_var *val[MAX_LANES][8];
	struct rsub rs = { .f = &f, .val = val };
	struct hgc_tir_mutator mu = { .expr = r_expr, .m = m, .ctx = &rs };
	struct hgc_tir_stmt *rb = r->u.loop.body;
	int64_t n, nr;
	int g, at = 0, i;

	f = (struct fold){ .m = m, .e = e, .r = r };
	if (!plain_loop(e, &n) || !plain_loop(r, &nr) || !scan_e(&f) || !e_reads_own(&f) ||
	    !scan_r(&f, n))
		return false;
	for (g = 0; g < f.nlanes; g++)
		lane_lets(&f, g, &at, val[g]);
	for (g = 0; g < f.nlanes; g++)
		lane_stores(&f, g, &at, val[g]);
	for (i = at; i < rb->u.block.n; i++)
		rb->u.block.stmts[i] = hgc_tir_mutate_stmt(rb->u.block.stmts[i], &mu);
	return true;
}

/* Remove statement i of block. */
static void remove_at(struct hgc_tir_stmt *block, int i)
{
	struct hgc_tir_stmt **s = block->u.block.stmts;

	memmove(&s[i], &s[i + 1], (size_t)(block->u.block.n - i - 1) * sizeof(*s));
	block->u.block.n--;
}

/* Fold the loops right before statement n0 of block (merged first) into the
   first loop from n0 on, a split reduction lowered there. */
void lw_fold_row(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block, int n0)
{
	struct hgc_tir_stmt **s = block->u.block.stmts;
	int k = n0, r, before = block->u.block.n;

	while (k > 0 && s[k - 1]->kind == HGC_TIR_S_FOR)
		k--;
	if (k == n0)
		return;
	hgc_fused_merge_loops(cx->m, block, k);
	s = block->u.block.stmts;
	n0 -= before - block->u.block.n;
	for (r = n0; r < block->u.block.n && s[r]->kind != HGC_TIR_S_FOR; r++)
		;
	if (r < block->u.block.n && fold(cx->m, s[n0 - 1], s[r]))
		remove_at(block, n0 - 1);
}

/*
 * Division by a row's value (softmax's x / sum): the divisor is one load
 * per row, so a vdivps per vector (3.5 cycles a ymm on Zen 3) becomes one
 * divide per row and a multiply per vector.  x * (1 / d) is within about an
 * ulp of x / d while 1 / d is a normal float, but that ulp may be the one
 * past FLT_MAX: for |d| < 1 a quotient that rounds to FLT_MAX can become
 * inf as x * (1 / d) (x = 0.869 * FLT_MAX, d = 0.869; spec/ops/edge_recip_rows.hgc).
 * With |d| >= 1, 1 / d rounds to at most 1, so |x * r| <= |x| stays finite.
 * So the multiply needs 1 <= |d| <= 2^126 (softmax's sums are at least 1:
 * the row's maximum contributes exp(0)); other d (below 1, zero, subnormal,
 * beyond 2^126, inf, NaN) keep the division:
 *
 *     let d = T[..]; let r = 1.0f / d;
 *     if (abs(d) >= 1 && abs(d) <= 2^126) { loop with x * r } else { loop }
 */

/* What the rewrite of one loop needs. */
struct recip {
	struct hgc_tir_module *m;
	const struct hgc_tir_stmt *loop;	/* the loop scanned (lets still its own) */
	struct hgc_tir_expr *load;	/* the divisor, once found */
	struct hgc_tir_var *r;		/* 1 / divisor, set for the rewrite */
	struct hgc_tir_var *from[MAX_LETS + 1], *to[MAX_LETS + 1];	/* fresh vars */
	int nvars;
};

/* The let of loop's body defining v, or NULL. */
static const struct hgc_tir_stmt *let_of(const struct hgc_tir_stmt *loop,
					 const struct hgc_tir_var *v)
{
	const struct hgc_tir_stmt *b = loop->u.loop.body, *x;

	for (int i = 0; i < b->u.block.n; i++) {
		x = b->u.block.stmts[i];
		if (x->kind == HGC_TIR_S_LET && x->u.let.var == v)
			return x;
	}
	return NULL;
}

/* Whether e reads a variable the loop binds (its index or a let of its body). */
static bool uses_loop_var(const struct hgc_tir_stmt *loop, const struct hgc_tir_expr *e)
{
	if (e->kind == HGC_TIR_E_VAR)
		return e->u.var == loop->u.loop.var || let_of(loop, e->u.var);
	for (int i = 0; i < e->nops; i++)
		if (uses_loop_var(loop, e->ops[i]))
			return true;
	return false;
}

/* Whether the loop's body stores to t. */
static bool stores_to(const struct hgc_tir_stmt *loop, const struct hgc_tir_tensor *t)
{
	const struct hgc_tir_stmt *b = loop->u.loop.body;

	for (int i = 0; i < b->u.block.n; i++)
		if (b->u.block.stmts[i]->kind == HGC_TIR_S_STORE &&
		    b->u.block.stmts[i]->u.store.tensor == t)
			return true;
	return false;
}

/* The load that divisor e stands for (itself or its let's value) when it is the
   same in every iteration; NULL otherwise. */
static struct hgc_tir_expr *invariant_load(const struct hgc_tir_stmt *loop,
					   struct hgc_tir_expr *e)
{
	const struct hgc_tir_stmt *let;

	if (e->kind == HGC_TIR_E_VAR && (let = let_of(loop, e->u.var)))
		e = let->u.let.value;
	if (e->kind != HGC_TIR_E_LOAD || uses_loop_var(loop, e) || stores_to(loop, e->u.tensor))
		return NULL;
	return e;
}

/* Whether e is an f32 scalar division by the loop's invariant divisor (the
   first such divisor found becomes rc->load). */
static bool divides_by_row(struct recip *rc, const struct hgc_tir_expr *e)
{
	struct hgc_tir_expr *d;

	if (e->kind != HGC_TIR_E_BINARY || e->op != HGC_TIR_DIV || e->type.kind != HGC_TIR_F32 ||
	    e->type.lanes != 1 || e->type.ptr || !(d = invariant_load(rc->loop, e->ops[1])))
		return false;
	if (!rc->load)
		rc->load = d;
	return same(rc->load, d);
}

/* Visitor: find the divisor. */
static void find_div(struct hgc_tir_visitor *v, struct hgc_tir_expr *e)
{
	divides_by_row(v->ctx, e);
}

/* Mutator: x / d becomes x * r. */
static struct hgc_tir_expr *div_to_mul(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	struct recip *rc = mu->ctx;

	if (!divides_by_row(rc, e))
		return e;
	return hgc_tir_mul(mu->m, e->ops[0], hgc_tir_ref(mu->m, rc->r));
}

/* Mutator: the copy's variables to its fresh ones. */
static struct hgc_tir_expr *rename_var(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	struct recip *rc = mu->ctx;

	if (e->kind != HGC_TIR_E_VAR)
		return e;
	for (int i = 0; i < rc->nvars; i++)
		if (e->u.var == rc->from[i])
			return hgc_tir_ref(mu->m, rc->to[i]);
	return e;
}

/* A fresh variable like v, noted as its replacement. */
static struct hgc_tir_var *fresh(struct recip *rc, struct hgc_tir_var *v)
{
	struct hgc_tir_var *w = hgc_tir_var_new(rc->m, v->name, v->type);

	rc->from[rc->nvars] = v;
	rc->to[rc->nvars++] = w;
	return w;
}

/* The loop copied with x * r for x / d and its own variables. */
static struct hgc_tir_stmt *multiplying_copy(struct recip *rc, const struct hgc_tir_stmt *loop)
{
	struct hgc_tir_mutator mu = { .expr = div_to_mul, .m = rc->m, .ctx = rc };
	struct hgc_tir_stmt *c = hgc_tir_mutate_stmt(hgc_tir_stmt_copy(rc->m, loop), &mu), *b, *x;

	rc->nvars = 0;
	c->u.loop.var = fresh(rc, c->u.loop.var);
	b = c->u.loop.body;
	for (int i = 0; i < b->u.block.n; i++) {
		x = b->u.block.stmts[i];
		if (x->kind == HGC_TIR_S_LET)
			x->u.let.var = fresh(rc, x->u.let.var);
	}
	mu.expr = rename_var;
	return hgc_tir_mutate_stmt(c, &mu);
}

/* Whether the loop is a plain loop of lets and stores, few enough to copy. */
static bool flat_loop(const struct hgc_tir_stmt *s)
{
	const struct hgc_tir_stmt *b;
	int64_t n;

	if (!plain_loop(s, &n))
		return false;
	b = s->u.loop.body;
	if (b->u.block.n > MAX_LETS)
		return false;
	for (int i = 0; i < b->u.block.n; i++)
		if (b->u.block.stmts[i]->kind != HGC_TIR_S_LET &&
		    b->u.block.stmts[i]->kind != HGC_TIR_S_STORE)
			return false;
	return true;
}

/* abs(d) >= lo && abs(d) <= hi, d a fresh reference each time. */
static struct hgc_tir_expr *in_range(struct hgc_tir_module *m, struct hgc_tir_var *d, double lo,
				     double hi)
{
	struct hgc_tir_expr *a = hgc_tir_intrinv(m, HGC_TIR_I_ABS, 1, hgc_tir_ref(m, d));
	struct hgc_tir_expr *b = hgc_tir_intrinv(m, HGC_TIR_I_ABS, 1, hgc_tir_ref(m, d));

	return hgc_tir_binary(m, HGC_TIR_AND, hgc_tir_binary(m, HGC_TIR_GE, a, hgc_tir_f32(m, lo)),
			      hgc_tir_binary(m, HGC_TIR_LE, b, hgc_tir_f32(m, hi)));
}

/* Statement i of block, a loop dividing by its row's value, in the form at the top;
   the statements it took (1 when untouched). */
static int recip_loop(struct hgc_tir_module *m, struct hgc_tir_stmt *block, int i)
{
	struct hgc_tir_stmt *loop = block->u.block.stmts[i], *c, *s;
	struct recip rc = { .m = m, .loop = loop };
	struct hgc_tir_visitor v = { .expr = find_div, .ctx = &rc };
	struct hgc_tir_var *d;

	if (!flat_loop(loop))
		return 1;
	hgc_tir_walk_stmt(loop->u.loop.body, &v);
	if (!rc.load)
		return 1;
	d = hgc_tir_var_new(m, "rowd", rc.load->type);
	rc.r = hgc_tir_var_new(m, "rowr", rc.load->type);
	c = multiplying_copy(&rc, loop);
	s = hgc_tir_let(m, NULL, d, hgc_tir_expr_copy(m, rc.load));
	hgc_tir_insert(block, i, s);
	s = hgc_tir_let(m, NULL, rc.r, hgc_tir_binary(m, HGC_TIR_DIV, hgc_tir_f32(m, 1.0),
						      hgc_tir_ref(m, d)));
	hgc_tir_insert(block, i + 1, s);
	s = hgc_tir_if(m, NULL, in_range(m, d, 1.0, 0x1p126), true);
	s->loc = loop->loc;
	hgc_tir_append(hgc_tir_body(s), c);
	hgc_tir_append(hgc_tir_else(s), loop);
	block->u.block.stmts[i + 2] = s;
	return 3;
}

/* Every loop of block from statement from on that divides by its row's value
   (a member after a row reduction) multiplies by the reciprocal instead. */
void lw_recip_rows(struct hgc_tir_module *m, struct hgc_tir_stmt *block, int from)
{
	for (int i = from; i < block->u.block.n;)
		i += block->u.block.stmts[i]->kind == HGC_TIR_S_FOR ? recip_loop(m, block, i) : 1;
}
