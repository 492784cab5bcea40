/*
 * forward.c: copy forwarding.  A template reads an operand in place only
 * when the graph tensor has the template's rank; attention's [B, H, S, D]
 * tensors bound as [B * H, S, D] (a folded batch) are copied into a
 * temporary of that shape first, element for element in row-major order.
 * Such a temporary T, filled by one loop nest from tensor P at the same
 * linear position (T is P reshaped), and read only after that nest while
 * nothing writes P, is P: every load and slice address of T becomes one of
 * P (T's index split over the P dims it spans, / and % for a folded
 * batch), and the nest and T's definition go.  The nest must do nothing
 * else (lets aside), its loops must run over T's dims exactly (0 to the
 * extent, step 1, each loop variable T's index in one dim), and it must not
 * stand inside another loop.  T's and P's dims split into blocks of equal
 * products (a T dim of several P dims: a folded batch; several T dims of
 * one P dim: a B operand blocked in its own order, [K / KB, KB] of K); a
 * slice address must span one run in each block.
 *
 * The result side is the same in reverse: a temporary C that one brgemm
 * writes (accumulate false), whose slice the statement right after the call
 * (or the first of the block right after it) copies element for element into P at the same linear position, and that
 * nothing else touches, is P: the brgemm writes P and the copy goes (the
 * write-back of a template's C into a graph tensor of another rank).
 *
 * Then local tensors whose accesses all split one index back into two dims
 * (x / c or (x / c) % n, and x % c) are refolded to one dim indexed by x,
 * so that the merge and shrink passes see affine indices.
 */
#include "passes_int.h"

#include <stdlib.h>
#include <string.h>

#define MAXD 16

/* One candidate: the temporary, its source, the nest, and how T's dims map to P's. */
struct fwd {
	struct hgc_tir_module *m;
	struct hgc_tp_scan sc;
	struct hgc_tp_vars v;
	struct hgc_tir_tensor *t, *p;
	struct hgc_tir_stmt *top, *store;
	int lo[MAXD], hi[MAXD];	/* refold: the dim pair at lo[0] */
	int nblk;		/* runs of T dims and of P dims with equal products: */
	int tlo[MAXD], thi[MAXD], plo[MAXD], phi[MAXD];	/* T [tlo, thi) is P [plo, phi) */
};

/* Row-major strides of tensor t (constant dims); false if a dim is not constant. */
static bool strides(const struct hgc_tir_tensor *t, int64_t *st)
{
	int64_t s = 1;

	for (int d = t->ndims - 1; d >= 0; d--) {
		int64_t n = hgc_tir_tensor_dim(t, d);

		if (n < 1)
			return false;
		st[d] = s;
		s *= n;
	}
	return true;
}

/* Split T's and P's dims into blocks, from the last: each the fewest trailing
   dims of both whose products are equal (a T dim of several P dims: a folded
   batch; several T dims of one P dim: a blocked copy in P's order). */
static bool group_dims(struct fwd *w)
{
	int d = w->t->ndims, j = w->p->ndims;

	w->nblk = 0;
	while (d > 0 || j > 0) {
		int b = w->nblk++;
		int64_t pt = 1, pp = 1;

		w->thi[b] = d;
		w->phi[b] = j;
		if (d > 0)
			pt *= hgc_tir_tensor_dim(w->t, --d);
		if (j > 0)
			pp *= hgc_tir_tensor_dim(w->p, --j);
		while (pt != pp) {
			if (pt < pp && d > 0)
				pt *= hgc_tir_tensor_dim(w->t, --d);
			else if (pp < pt && j > 0)
				pp *= hgc_tir_tensor_dim(w->p, --j);
			else
				return false;
		}
		w->tlo[b] = d;
		w->plo[b] = j;
	}
	return true;
}

/* The elements a slice with extents ext spans in block b, one run in memory (the
   dims after the first it spans are whole): that count, or -1. */
static int64_t block_span(const struct fwd *w, int b, const int64_t *ext)
{
	int64_t span = 1;
	bool spans = false;

	for (int d = w->tlo[b]; ext && d < w->thi[b]; d++) {
		if (spans && ext[d] != hgc_tir_tensor_dim(w->t, d))
			return -1;
		spans |= ext[d] > 1;
		if (spans)
			span *= ext[d];
	}
	return span;
}

/* The extents on P's dims of block b for a run of span elements: whole trailing dims,
   then one partial; false when span does not split that way. */
static bool p_extents(const struct fwd *w, int b, int64_t span, int64_t *ext)
{
	for (int j = w->phi[b] - 1; j >= w->plo[b]; j--) {
		int64_t n = hgc_tir_tensor_dim(w->p, j);

		ext[j] = span >= n ? n : span;
		if (span >= n && span % n)
			return false;
		span = span >= n ? span / n : 1;
	}
	return span == 1;
}

/* Whether s is a nest of loops and blocks holding only lets and the one store. */
static bool pure_nest(const struct hgc_tir_stmt *s, const struct hgc_tir_stmt *store)
{
	switch (s->kind) {
	case HGC_TIR_S_FOR:
		return pure_nest(s->u.loop.body, store);
	case HGC_TIR_S_PFOR:
		return pure_nest(s->u.pfor.body, store);
	case HGC_TIR_S_BLOCK:
		for (int i = 0; i < s->u.block.n; i++)
			if (s->u.block.stmts[i]->kind != HGC_TIR_S_LET &&
			    !pure_nest(s->u.block.stmts[i], store))
				return false;
		return true;
	case HGC_TIR_S_STORE:
		return s == store;
	default:
		return false;
	}
}

/* Whether two accumulated forms are equal (zero terms aside). */
static bool aff_equal(const struct hgc_tp_aff *a, const struct hgc_tp_aff *b)
{
	if (a->c0 != b->c0)
		return false;
	for (int i = 0; i < a->n; i++)
		if (a->t[i].c != hgc_tp_aff_coef(b, a->t[i].var))
			return false;
	for (int i = 0; i < b->n; i++)
		if (b->t[i].c != hgc_tp_aff_coef(a, b->t[i].var))
			return false;
	return true;
}

/* Whether the store's loops (up to a loop in no loop) cover T once, each loop variable
   T's index in one dim over its whole extent; w->top is set to the outermost loop. */
static bool covers(struct fwd *w, const struct hgc_tp_access *st)
{
	struct hgc_tir_var *vars[MAXD];
	int nv = 0, l;

	if (st->loop < 0)
		return false;
	for (l = st->loop; l >= 0; l = HGC_TP_LOOP(&w->sc, l)->parent) {
		nv += hgc_tp_loop_vars(HGC_TP_LOOP(&w->sc, l)->s, vars + nv, MAXD - nv);
		w->top = HGC_TP_LOOP(&w->sc, l)->s;
	}
	for (int d = 0; d < st->n; d++) {
		struct hgc_tp_aff a = hgc_tp_affine(&w->v, st->idx[d]);
		struct hgc_tir_var *x = a.ok && a.n == 1 && a.c0 == 0 && a.t[0].c == 1 ? a.t[0].var
										       : NULL;
		int k;

		if (a.ok && !a.n && !a.c0 && hgc_tir_tensor_dim(w->t, d) == 1)
			continue;	/* a dim of one element (a loop of one value folds to 0) */
		for (k = 0; x && k < nv && vars[k] != x; k++)
			;
		if (!x || k == nv || !w->v.known[x->id] || w->v.lo[x->id] != 0 ||
		    w->v.step[x->id] != 1 || w->v.hi[x->id] != hgc_tir_tensor_dim(w->t, d) - 1)
			return false;
		vars[k] = NULL;		/* each variable in one dim */
	}
	for (int k = 0; k < nv; k++)	/* every loop of more than one value used */
		if (vars[k] && (!w->v.known[vars[k]->id] || w->v.lo[vars[k]->id] != w->v.hi[vars[k]->id]))
			return false;
	return true;
}

/* The constant c when e is x / c or x % c (op), else 0. */
static int64_t by_const(const struct hgc_tir_expr *e, int op)
{
	if (e->kind != HGC_TIR_E_BINARY || e->op != op || e->ops[1]->kind != HGC_TIR_E_INT)
		return 0;
	return e->ops[1]->u.i;
}

/* The range [lo, hi] of index e over the known loops; false if it has none. */
static bool bounds(const struct hgc_tp_vars *v, const struct hgc_tir_expr *e, int64_t *lo,
		   int64_t *hi)
{
	struct hgc_tp_aff a = hgc_tp_affine(v, e);

	if (!a.ok)
		return false;
	*lo = *hi = a.c0;
	for (int i = 0; i < a.n; i++) {
		int id = a.t[i].var->id;
		int64_t x, y;

		if (!v->known[id])
			return false;
		x = a.t[i].c * v->lo[id];
		y = a.t[i].c * v->hi[id];
		*lo += x < y ? x : y;
		*hi += x < y ? y : x;
	}
	return true;
}

/* x when P's indices at dims d and d + 1 are x / c (or (x / c) % n with x below
   n * c) and x % c with c the extent of dim d + 1 (a folded batch split back: they
   sit at x's linear position); else NULL. */
static const struct hgc_tir_expr *folded(const struct hgc_tp_vars *v,
					 const struct hgc_tir_tensor *p,
					 struct hgc_tir_expr *const *idx, int d)
{
	const struct hgc_tir_expr *hi = idx[d];
	int64_t c, n = by_const(hi, HGC_TIR_MOD), lo, up;

	if (n > 0)		/* (x / c) % n: x below n * c, checked below */
		hi = hi->ops[0];
	if (d + 1 >= p->ndims || (c = by_const(hi, HGC_TIR_DIV)) < 1 ||
	    by_const(idx[d + 1], HGC_TIR_MOD) != c || hgc_tir_tensor_dim(p, d + 1) != c ||
	    !hgc_tp_expr_eq(hi->ops[0], idx[d + 1]->ops[0]))
		return NULL;
	if (n > 0 && (!bounds(v, hi->ops[0], &lo, &up) || lo < 0 || up >= n * c))
		return NULL;
	return hi->ops[0];
}

/* Whether T at indices ti and P (w->p) at indices pi are the same linear position:
   same element type and size, and the row-major offsets equal as affine forms. */
static bool same_lin(struct fwd *w, struct hgc_tir_expr *const *ti,
		     struct hgc_tir_expr *const *pi)
{
	struct hgc_tp_aff lt = { .ok = true }, lp = { .ok = true };
	int64_t ts[MAXD], ps[MAXD];

	if (w->p->ndims > MAXD || !strides(w->t, ts) || !strides(w->p, ps) ||
	    hgc_tir_tensor_size(w->p) != hgc_tir_tensor_size(w->t) ||
	    memcmp(&w->p->elem, &w->t->elem, sizeof(w->t->elem)))
		return false;
	for (int d = 0; d < w->t->ndims; d++) {
		struct hgc_tp_aff a = hgc_tp_affine(&w->v, ti[d]);

		if (!hgc_tp_aff_add(&lt, &a, ts[d]))
			return false;
	}
	for (int d = 0; d < w->p->ndims; d++) {
		const struct hgc_tir_expr *x = folded(&w->v, w->p, pi, d);
		struct hgc_tp_aff a = hgc_tp_affine(&w->v, x ? x : pi[d]);

		if (x)
			d++;		/* x / c and x % c: x at the stride of the second */
		if (!hgc_tp_aff_add(&lp, &a, ps[d]))
			return false;
	}
	return aff_equal(&lt, &lp);
}

/* Whether the store reads P at T's linear position. */
static bool same_position(struct fwd *w, const struct hgc_tp_access *st)
{
	const struct hgc_tir_expr *val = st->s->u.store.value;

	if (val->kind != HGC_TIR_E_LOAD || val->u.tensor == w->t || val->nops != val->u.tensor->ndims)
		return false;
	w->p = val->u.tensor;
	return same_lin(w, st->idx, val->ops);
}

/* Whether access a of T maps onto P: in each block, what a slice spans is one run
   that P's dims of the block split into whole dims and one partial. */
static bool maps(const struct fwd *w, const struct hgc_tp_access *a)
{
	int64_t ext[MAXD], span;

	if (a->n != w->t->ndims)
		return false;
	for (int b = 0; b < w->nblk; b++)
		if ((span = block_span(w, b, a->ext)) < 0 || !p_extents(w, b, span, ext))
			return false;
	return true;
}

/* Whether T's other accesses come after the nest, each maps onto P, and nothing
   writes P from the nest on. */
static bool uses_fit(struct fwd *w, const struct hgc_tp_access *st)
{
	const struct hgc_tp_loop *top = NULL;

	for (size_t i = 0; i < w->sc.loops.len; i++)
		if (HGC_TP_LOOP(&w->sc, i)->s == w->top)
			top = HGC_TP_LOOP(&w->sc, i);
	if (!top)
		return false;
	for (size_t i = 0; i < w->sc.acc.len; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&w->sc, i);

		if (a->t == w->p && a->kind != HGC_TP_LOAD && a->pos >= top->start)
			return false;
		if (a->t != w->t || a == st)
			continue;
		if (a->kind == HGC_TP_STORE || a->pos <= top->end || !maps(w, a))
			return false;
	}
	return true;
}

/* Whether the statement is a brgemm call taking tensor x's address only as an A or B
   operand (read, never written). */
static bool brgemm_reads(const struct hgc_tir_stmt *s, const struct hgc_tir_tensor *x)
{
	const struct hgc_tir_expr *e = s->kind == HGC_TIR_S_EVAL ? s->u.expr : NULL;

	if (!e || e->kind != HGC_TIR_E_INTRIN ||
	    (e->op != HGC_TIR_I_BRGEMM && e->op != HGC_TIR_I_BRGEMM_STRD))
		return false;
	for (int k = 2; k < e->nops; k++)
		if (e->ops[k]->kind == HGC_TIR_E_ADDR && e->ops[k]->u.tensor == x)
			return false;
	return true;
}

/* Whether slice address a only reads: a brgemm A or B operand, directly or through a
   pointer tensor whose addresses only brgemm A or B operands take. */
static bool addr_reads(const struct fwd *w, const struct hgc_tp_access *a)
{
	if (a->escapes)
		return false;
	if (!a->into)
		return brgemm_reads(a->s, a->t);
	for (size_t i = 0; i < w->sc.acc.len; i++) {
		const struct hgc_tp_access *b = HGC_TP_ACC(&w->sc, i);

		if (b->t == a->into && (b->escapes || b->into || b->kind == HGC_TP_LOAD ||
					(b->kind == HGC_TP_ADDR && !brgemm_reads(b->s, b->t))))
			return false;
	}
	return true;
}

/* Whether t is a local tensor of a rank the pass handles, not empty; it
   becomes w's tensor either way (both directions start here). */
static bool forwardable_shape(struct fwd *w, struct hgc_tir_tensor *t)
{
	w->t = t;
	return t->scope == HGC_TIR_LOCAL && t->ndims <= MAXD && t->ndims >= 1 &&
	       hgc_tir_tensor_size(t) >= 1;
}

/* Whether local tensor t (defined by def) is a forwardable copy; fills w. */
static bool candidate(struct fwd *w, struct hgc_tir_tensor *t)
{
	const struct hgc_tp_access *st = NULL;
	const struct hgc_tp_def *pd;

	if (!forwardable_shape(w, t))
		return false;
	for (size_t i = 0; i < w->sc.acc.len; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&w->sc, i);

		if (a->t == t && a->kind == HGC_TP_ADDR && !addr_reads(w, a))
			return false;
		if (a->t == t && a->kind == HGC_TP_STORE) {
			if (st)
				return false;
			st = a;
		}
	}
	if (!st || !covers(w, st) || !pure_nest(w->top, st->s) || !same_position(w, st) ||
	    !group_dims(w) || !uses_fit(w, st))
		return false;
	w->store = st->s;
	pd = &w->sc.defs[w->p->id];
	if (w->p->scope == HGC_TIR_LOCAL)
		return pd->s && pd->loop < 0 && pd->block == w->sc.f->body;
	return true;
}

static bool out_candidate(struct fwd *w, struct hgc_tir_tensor *t);

/* Mutator: T's loads and addresses as P's; per block, T's indices make one linear
   index there, split over P's dims with / and %. */
static struct hgc_tir_expr *to_p(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	struct fwd *w = mu->ctx;
	struct hgc_tir_expr *idx[MAXD], *lin, *x;
	int64_t ext[MAXD];

	if ((e->kind != HGC_TIR_E_LOAD && e->kind != HGC_TIR_E_ADDR) || e->u.tensor != w->t)
		return e;
	for (int b = 0; b < w->nblk; b++) {
		int64_t stride = 1, inner = 1, all = 1;

		lin = NULL;
		for (int d = w->thi[b] - 1; d >= w->tlo[b]; d--) {
			x = hgc_tir_expr_copy(mu->m, e->ops[d]);
			if (stride > 1)
				x = hgc_tir_mul(mu->m, x, hgc_tir_idx(mu->m, stride));
			lin = lin ? hgc_tir_add(mu->m, x, lin) : x;
			stride *= hgc_tir_tensor_dim(w->t, d);
		}
		all = stride;
		p_extents(w, b, e->kind == HGC_TIR_E_ADDR ? block_span(w, b, e->extents) : 1, ext);
		for (int j = w->phi[b] - 1; j >= w->plo[b]; j--) {
			int64_t n = hgc_tir_tensor_dim(w->p, j);

			if (n == 1 || !lin) {
				idx[j] = hgc_tir_idx(mu->m, 0);
				continue;
			}
			x = hgc_tir_expr_copy(mu->m, lin);
			if (inner > 1)
				x = hgc_tir_binary(mu->m, HGC_TIR_DIV, x, hgc_tir_idx(mu->m, inner));
			if (inner * n < all)
				x = hgc_tir_binary(mu->m, HGC_TIR_MOD, x, hgc_tir_idx(mu->m, n));
			idx[j] = x;
			inner *= n;
		}
	}
	if (e->kind == HGC_TIR_E_LOAD)
		return hgc_tir_load(mu->m, w->p, w->p->ndims, idx);
	return hgc_tir_addr(mu->m, w->p, w->p->ndims, idx, ext);
}

/* Mutator: drop the nest and T's definition. */
static struct hgc_tir_stmt *drop(struct hgc_tir_mutator *mu, struct hgc_tir_stmt *s)
{
	struct fwd *w = mu->ctx;

	if (s == w->top || (s->kind == HGC_TIR_S_TENSOR && s->u.tensor == w->t))
		return NULL;
	return s;
}

/* Forward one copy in f; whether one was. */
static bool forward_one(struct hgc_tir_module *m, struct hgc_tir_func *f)
{
	struct fwd w = { .m = m };
	struct hgc_tir_mutator mu = { .expr = to_p, .stmt = drop, .m = m, .ctx = &w };
	bool done = false;

	hgc_tp_scan(&w.sc, m, f);
	hgc_tp_vars_init(&w.v, m, f);
	for (int id = 0; id < m->ntensors && !done; id++)
		if (w.sc.defs[id].s && (candidate(&w, w.sc.defs[id].s->u.tensor) ||
					out_candidate(&w, w.sc.defs[id].s->u.tensor)))
			done = true;
	if (done)
		hgc_tir_mutate_stmt(f->body, &mu);
	hgc_tp_vars_release(&w.v);
	hgc_tp_scan_release(&w.sc);
	return done;
}

/* Where statement x stands: its block and position (blk NULL when not found). */
struct place {
	const struct hgc_tir_stmt *x;
	struct hgc_tir_stmt *blk;
	int at;
};

/* Visitor: find the block holding p->x. */
static bool place_pre(struct hgc_tir_visitor *v, struct hgc_tir_stmt *s)
{
	struct place *p = v->ctx;

	if (p->blk)
		return false;
	if (s->kind == HGC_TIR_S_BLOCK)
		for (int i = 0; i < s->u.block.n; i++)
			if (s->u.block.stmts[i] == p->x) {
				p->blk = s;
				p->at = i;
				return false;
			}
	return true;
}

/* The brgemm call (11 operands, accumulate false) whose C operand is slice address
   a, or NULL. */
static const struct hgc_tir_expr *brgemm_c(const struct hgc_tp_access *a)
{
	const struct hgc_tir_expr *e = a->s->kind == HGC_TIR_S_EVAL ? a->s->u.expr : NULL;

	if (!e || e->kind != HGC_TIR_E_INTRIN || e->op != HGC_TIR_I_BRGEMM || e->nops != 11 ||
	    e->ops[2]->kind != HGC_TIR_E_ADDR || e->ops[2]->u.tensor != a->t || !a->ext ||
	    a->idx != e->ops[2]->ops || e->ops[10]->kind != HGC_TIR_E_INT || e->ops[10]->u.i)
		return NULL;
	for (int k = 4; k < 10; k++)
		if (e->ops[k]->kind != HGC_TIR_E_INT)
			return NULL;
	for (int k = 0; k < 2; k++)
		if (e->ops[k]->kind != HGC_TIR_E_ADDR || !e->ops[k]->u.tensor->elem.ptr)
			return NULL;
	return e;
}

/* Whether the brgemm e writes exactly T's slice a: N columns in the last dim, M rows
   in one other dim whose stride is ldc, every other dim one element. */
static bool writes_slice(const struct fwd *w, const struct hgc_tir_expr *e,
			 const struct hgc_tp_access *a)
{
	int64_t ts[MAXD], m = e->ops[4]->u.i, n = e->ops[5]->u.i, ldc = e->ops[9]->u.i;
	int r = w->t->ndims, rows = 0;

	if (!strides(w->t, ts) || a->ext[r - 1] != n)
		return false;
	for (int d = 0; d < r - 1; d++) {
		if (a->ext[d] == 1)
			continue;
		if (a->ext[d] != m || ts[d] != ldc || rows++)
			return false;
	}
	return rows == (m > 1);
}

/* Whether the load ld of T (in the copy nest) runs over slice a exactly: per dim its
   index is a's plus one loop variable of the nest over the extent (or a's alone
   where the extent is 1), every loop of the nest used once. */
static bool copies_slice(const struct fwd *w, const struct hgc_tp_access *a,
			 const struct hgc_tp_access *ld)
{
	struct hgc_tir_var *vars[MAXD];
	int nv = 0, l;

	for (l = ld->loop; l >= 0 && l != a->loop; l = HGC_TP_LOOP(&w->sc, l)->parent)
		nv += hgc_tp_loop_vars(HGC_TP_LOOP(&w->sc, l)->s, vars + nv, MAXD - nv);
	if (l != a->loop)
		return false;
	for (int d = 0; d < w->t->ndims; d++) {
		struct hgc_tp_aff x = hgc_tp_affine(&w->v, ld->idx[d]);
		struct hgc_tp_aff b = hgc_tp_affine(&w->v, a->idx[d]), diff = { .ok = true };
		struct hgc_tir_var *v = NULL;
		int k, nz = 0;

		if (!hgc_tp_aff_add(&diff, &x, 1) || !hgc_tp_aff_add(&diff, &b, -1) || diff.c0)
			return false;
		for (k = 0; k < diff.n; k++)
			if (diff.t[k].c && (nz++ || diff.t[k].c != 1 || !(v = diff.t[k].var)))
				return false;
		if (!v) {
			if (a->ext[d] != 1)
				return false;
			continue;
		}
		for (k = 0; k < nv && vars[k] != v; k++)
			;
		if (k == nv || !w->v.known[v->id] || w->v.lo[v->id] != 0 || w->v.step[v->id] != 1 ||
		    w->v.hi[v->id] != a->ext[d] - 1)
			return false;
		vars[k] = NULL;
	}
	for (int k = 0; k < nv; k++)
		if (vars[k])
			return false;
	return true;
}

/* Whether P's address goes into a pointer tensor the brgemm e reads (P an input of
   the call that would write it). */
static bool feeds(const struct fwd *w, const struct hgc_tir_expr *e)
{
	for (size_t i = 0; i < w->sc.acc.len; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&w->sc, i);

		if (a->t == w->p && a->kind == HGC_TP_ADDR &&
		    (a->escapes || a->into == e->ops[0]->u.tensor || a->into == e->ops[1]->u.tensor))
			return true;
	}
	return false;
}

/*
 * Whether local tensor t is a result buffer the write-back copies out: one brgemm
 * writes a slice of it (accumulate false) and the statement right after that call
 * is a nest copying exactly that slice, element for element, into P at the same
 * linear position, and nothing else reads or writes t.  Then the brgemm may write
 * P itself and the nest goes (w->top).
 */
static bool out_candidate(struct fwd *w, struct hgc_tir_tensor *t)
{
	const struct hgc_tp_access *wa = NULL, *ld = NULL;
	const struct hgc_tir_expr *e;
	struct hgc_tir_visitor vis = { .stmt_pre = place_pre };
	struct place pl = { 0 };
	const struct hgc_tp_def *pd;

	if (!forwardable_shape(w, t))
		return false;
	for (size_t i = 0; i < w->sc.acc.len; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&w->sc, i);

		if (a->t != t)
			continue;
		if ((a->kind == HGC_TP_ADDR && wa) || (a->kind == HGC_TP_LOAD && ld) ||
		    a->kind == HGC_TP_STORE)
			return false;
		*(a->kind == HGC_TP_ADDR ? &wa : &ld) = a;
	}
	if (!wa || !ld || !(e = brgemm_c(wa)) || ld->s->kind != HGC_TIR_S_STORE ||
	    ld->s->u.store.value->kind != HGC_TIR_E_LOAD ||
	    ld->idx != ld->s->u.store.value->ops || ld->s->u.store.tensor == t)
		return false;
	w->p = ld->s->u.store.tensor;
	pl.x = wa->s;
	vis.ctx = &pl;
	hgc_tir_walk_stmt(w->sc.f->body, &vis);
	if (!pl.blk || pl.at + 1 >= pl.blk->u.block.n)
		return false;
	w->top = pl.blk->u.block.stmts[pl.at + 1];
	while (w->top->kind == HGC_TIR_S_BLOCK && w->top->u.block.n && !pure_nest(w->top, ld->s))
		w->top = w->top->u.block.stmts[0];	/* the copy first in the next block */
	if (!pure_nest(w->top, ld->s) || !writes_slice(w, e, wa) || !copies_slice(w, wa, ld) ||
	    !same_lin(w, ld->idx, ld->s->u.store.idx) || !group_dims(w) || !maps(w, wa) ||
	    !maps(w, ld) || feeds(w, e))
		return false;
	pd = &w->sc.defs[w->p->id];
	if (w->p->scope == HGC_TIR_LOCAL)
		return pd->s && pd->loop < 0 && pd->block == w->sc.f->body;
	return true;
}

/* e without trailing `+ 0`s (slice starts of 0 that lowering adds). */
static const struct hgc_tir_expr *strip0(const struct hgc_tir_expr *e)
{
	while (e->kind == HGC_TIR_E_BINARY && e->op == HGC_TIR_ADD &&
	       e->ops[1]->kind == HGC_TIR_E_INT && e->ops[1]->u.i == 0)
		e = e->ops[0];
	return e;
}

/* x when an access's indices at dims d, d + 1 of t are a folded pair over x that
   stays within the two dims (x / c or (x / c) % n, then x % c; c, n their extents,
   x in [0, n * c)); else NULL. */
static const struct hgc_tir_expr *pair_of(const struct hgc_tp_vars *v,
					  const struct hgc_tir_tensor *t,
					  struct hgc_tir_expr *const *idx, int d)
{
	struct hgc_tir_expr *ix[2] = { (struct hgc_tir_expr *)strip0(idx[d]),
				       (struct hgc_tir_expr *)strip0(idx[d + 1]) };
	const struct hgc_tir_expr *hi = ix[0], *x;
	int64_t n = hgc_tir_tensor_dim(t, d), lo, up;

	if (by_const(hi, HGC_TIR_MOD) == n)
		hi = hi->ops[0];
	if (!(x = folded(v, t, (struct hgc_tir_expr *const[]){ (struct hgc_tir_expr *)hi, ix[1] },
			 0)) &&
	    !(x = folded(v, t, ix, 0)))
		return NULL;
	if (!bounds(v, x, &lo, &up) || lo < 0 || up >= n * hgc_tir_tensor_dim(t, d + 1))
		return NULL;
	return x;
}

/* A dim pair of local tensor t that every access indexes as a folded pair (one
   element of each), or -1. */
static int refold_dim(const struct fwd *w, const struct hgc_tir_tensor *t)
{
	bool any = false;

	for (int d = 0; d + 1 < t->ndims; d++) {
		bool all = true;

		for (size_t i = 0; i < w->sc.acc.len && all; i++) {
			const struct hgc_tp_access *a = HGC_TP_ACC(&w->sc, i);

			if (a->t != t)
				continue;
			any = true;
			all = a->n == t->ndims && !(a->ext && (a->ext[d] > 1 || a->ext[d + 1] > 1)) &&
			      pair_of(&w->v, t, a->idx, d);
		}
		if (all && any)
			return d;
	}
	return -1;
}

/* The merged indices (and extents) of an access of w->t: x for the pair at w->lo[0]. */
static int merged(struct fwd *w, struct hgc_tir_expr *const *idx, const int64_t *ext,
		  struct hgc_tir_expr **out, int64_t *oext)
{
	int d = w->lo[0], n = 0;

	for (int j = 0; j < w->t->ndims; j++) {
		if (j == d + 1)
			continue;
		oext[n] = ext ? ext[j] : 1;
		out[n++] = j == d ? hgc_tir_expr_copy(w->m, pair_of(&w->v, w->t, idx, d)) : idx[j];
	}
	return n;
}

/* Mutator: the accesses of w->t with the pair merged. */
static struct hgc_tir_expr *refold_expr(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	struct fwd *w = mu->ctx;
	struct hgc_tir_expr *idx[MAXD];
	int64_t ext[MAXD];
	int n;

	if ((e->kind != HGC_TIR_E_LOAD && e->kind != HGC_TIR_E_ADDR) || e->u.tensor != w->t)
		return e;
	n = merged(w, e->ops, e->extents, idx, ext);
	if (e->kind == HGC_TIR_E_LOAD)
		return hgc_tir_load(mu->m, w->t, n, idx);
	return hgc_tir_addr(mu->m, w->t, n, idx, ext);
}

/* Mutator: the stores of w->t with the pair merged. */
static struct hgc_tir_stmt *refold_store(struct hgc_tir_mutator *mu, struct hgc_tir_stmt *s)
{
	struct fwd *w = mu->ctx;
	struct hgc_tir_expr *idx[MAXD];
	int64_t ext[MAXD];

	if (s->kind != HGC_TIR_S_STORE || s->u.store.tensor != w->t)
		return s;
	s->u.store.n = merged(w, s->u.store.idx, NULL, idx, ext);
	memcpy(s->u.store.idx, idx, (size_t)s->u.store.n * sizeof(*idx));
	return s;
}

/* Refold one local tensor of f whose accesses all split one dim pair back from a
   folded index (a folded batch's [B, H] taken as B * H): it takes the one dim of
   n * c, indexed by x, so that the passes after see affine indices.  Whether one was. */
static bool refold_one(struct hgc_tir_module *m, struct hgc_tir_func *f)
{
	struct fwd w = { .m = m };
	struct hgc_tir_mutator mu = { .expr = refold_expr, .stmt = refold_store, .m = m,
				      .ctx = &w };
	int d = -1;

	hgc_tp_scan(&w.sc, m, f);
	hgc_tp_vars_init(&w.v, m, f);
	for (int id = 0; id < m->ntensors && d < 0; id++) {
		struct hgc_tir_tensor *t = w.sc.defs[id].s ? w.sc.defs[id].s->u.tensor : NULL;

		if (t && t->scope == HGC_TIR_LOCAL && t->ndims <= MAXD &&
		    hgc_tir_tensor_size(t) > 0 && (d = refold_dim(&w, t)) >= 0)
			w.t = t;
	}
	if (d >= 0) {
		w.lo[0] = d;
		hgc_tir_mutate_stmt(f->body, &mu);
		w.t->dims[d] = hgc_tir_idx(m, hgc_tir_tensor_dim(w.t, d) *
						  hgc_tir_tensor_dim(w.t, d + 1));
		memmove(&w.t->dims[d + 1], &w.t->dims[d + 2],
			(size_t)(w.t->ndims - d - 2) * sizeof(*w.t->dims));
		w.t->ndims--;
	}
	hgc_tp_vars_release(&w.v);
	hgc_tp_scan_release(&w.sc);
	return d >= 0;
}

/* Forward the copies of every function. */
int hgc_tir_pass_copy_forward(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			      struct hgc_diag *d)
{
	int changes = 0;

	(void)p;
	(void)d;
	for (size_t i = 0; i < m->funcs.len; i++)
		while (forward_one(m, HGC_TIR_FUNC(m, i)) || refold_one(m, HGC_TIR_FUNC(m, i)))
			changes++;
	return changes;
}
