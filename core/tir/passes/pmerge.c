/*
 * pmerge.c: parallel-loop merge.  Two parallel fors with the same
 * nonzero merge_group, the same number of indices and identical ranges,
 * with nothing but tensor definitions between them, become one
 * parallel for whose body runs the first body then the second (the second
 * body's indices renamed to the first's): one fork and join instead of
 * two, and no barrier between them.  That is only right when no iteration
 * of the second body needs what another iteration of the first wrote, so
 * the pass checks every tensor defined outside both loops that one body
 * writes (store or slice address) and the other touches: each dim's index
 * must be a part fixed by the parallel indices (the same for every such
 * access) plus a bounded rest, and distinct iterations must touch disjoint
 * slices.  Otherwise the loops stay as they are.  Each loop may also stand
 * in a block of its own (as lowering emits fused ops): the first as its
 * block's last statement, the second after nothing but tensor
 * definitions.  Those definitions, and any between the two, move before
 * the first loop.  docs/tir.md has the contract lowering follows to set
 * merge_group.
 */
#include "passes_int.h"

#include <stdlib.h>

#define MAXD 16

/* What merge checks for one pair. */
struct pair {
	struct hgc_tir_module *m;
	struct hgc_tp_scan sc;
	struct hgc_tp_vars v;
	int l1, l2;			/* the two loops (scan indices) */
	struct hgc_tir_stmt *a, *b;	/* their statements */
};

/* Same index count and identical ranges. */
static bool same_ranges(const struct hgc_tir_stmt *a, const struct hgc_tir_stmt *b)
{
	if (a->u.pfor.n != b->u.pfor.n)
		return false;
	for (int i = 0; i < a->u.pfor.n; i++)
		if (!hgc_tp_expr_eq(a->u.pfor.begin[i], b->u.pfor.begin[i]) ||
		    !hgc_tp_expr_eq(a->u.pfor.end[i], b->u.pfor.end[i]) ||
		    !hgc_tp_expr_eq(a->u.pfor.step[i], b->u.pfor.step[i]))
			return false;
	return true;
}

/* Which of the two loops (0, 1) an access is in, or -1. */
static int side(const struct pair *p, const struct hgc_tp_access *a)
{
	if (a->loop >= 0 && hgc_tp_loop_within(&p->sc, a->loop, p->l1))
		return 0;
	if (a->loop >= 0 && hgc_tp_loop_within(&p->sc, a->loop, p->l2))
		return 1;
	return -1;
}

/* Whether tensor t is defined inside one of the loops (private to an iteration). */
static bool private_to(const struct pair *p, const struct hgc_tir_tensor *t)
{
	const struct hgc_tp_def *d = &p->sc.defs[t->id];

	return d->s && d->loop >= 0 &&
	       (hgc_tp_loop_within(&p->sc, d->loop, p->l1) ||
		hgc_tp_loop_within(&p->sc, d->loop, p->l2));
}

/* An affine form with the second loop's indices renamed to the first's. */
static void rename_terms(const struct pair *p, struct hgc_tp_aff *f)
{
	for (int i = 0; i < f->n; i++)
		for (int k = 0; k < p->b->u.pfor.n; k++)
			if (f->t[i].var == p->b->u.pfor.vars[k])
				f->t[i].var = p->a->u.pfor.vars[k];
}

/* inner[id]: a variable of a loop inside either parallel loop. */
static bool *inner_vars(const struct pair *p)
{
	size_t n = (size_t)p->m->nvars + 1;
	bool *a = hgc_xcalloc(n, 1), *b = hgc_xcalloc(n, 1);

	hgc_tp_mark_inner(&p->sc, p->l1, a, p->m->nvars);
	hgc_tp_mark_inner(&p->sc, p->l2, b, p->m->nvars);
	for (size_t i = 0; i < n; i++)
		a[i] |= b[i];
	free(b);
	return a;
}

/* Whether every access of t in the two loops keeps to its iteration's slice, the
   slices of distinct iterations disjoint. */
static bool partitioned(const struct pair *p, const struct hgc_tir_tensor *t, const bool *inner)
{
	struct hgc_tp_aff fixed[MAXD], f;
	int64_t lo[MAXD], hi[MAXD], width[MAXD], l, h;
	bool first = true;

	if (t->ndims > MAXD)
		return false;
	for (size_t i = 0; i < p->sc.acc.len; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&p->sc, i);

		if (a->t != t || side(p, a) < 0)
			continue;
		if (a->n != t->ndims)
			return false;
		for (int d = 0; d < a->n; d++) {
			if (!hgc_tp_split(&p->v, inner, a->idx[d], a->ext ? a->ext[d] : 1, &f, &l, &h))
				return false;
			rename_terms(p, &f);
			if (!first && !hgc_tp_same_terms(&fixed[d], &f))
				return false;
			fixed[d] = f;
			lo[d] = first || l < lo[d] ? l : lo[d];
			hi[d] = first || h > hi[d] ? h : hi[d];
		}
		first = false;
	}
	for (int d = 0; d < t->ndims; d++)
		width[d] = hi[d] - lo[d] + 1;
	return hgc_tp_disjoint(&p->v, t->ndims, fixed, width, p->a->u.pfor.vars, p->a->u.pfor.n);
}

/* Whether merging changes no result: every tensor one loop writes and the other
   touches is partitioned by the parallel indices. */
static bool legal(const struct pair *p)
{
	int nt = p->m->ntensors;
	unsigned char *use = hgc_xcalloc((size_t)nt + 1, 1);	/* bits: touch 0/1, write 0/1 */
	bool *inner = inner_vars(p), ok = true;

	for (size_t i = 0; i < p->sc.acc.len; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&p->sc, i);
		int s = side(p, a);

		if (s < 0)
			continue;
		use[a->t->id] |= (unsigned char)(1 << s);
		if (a->kind != HGC_TP_LOAD)
			use[a->t->id] |= (unsigned char)(4 << s);
	}
	for (size_t i = 0; i < p->sc.acc.len && ok; i++) {
		const struct hgc_tir_tensor *t = HGC_TP_ACC(&p->sc, i)->t;
		int u = use[t->id];

		if (((u & 4) && (u & 2)) || ((u & 8) && (u & 1)))
			ok = private_to(p, t) || partitioned(p, t, inner);
		use[t->id] = 0;
	}
	free(inner);
	free(use);
	return ok;
}

/* Mutator: the second loop's indices renamed to the first's. */
static struct hgc_tir_expr *rename_var(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	const struct pair *p = mu->ctx;

	if (e->kind == HGC_TIR_E_VAR)
		for (int k = 0; k < p->b->u.pfor.n; k++)
			if (e->u.var == p->b->u.pfor.vars[k])
				return hgc_tir_ref(mu->m, p->a->u.pfor.vars[k]);
	return e;
}

/* The scan index of loop statement s. */
static int loop_index(const struct hgc_tp_scan *sc, const struct hgc_tir_stmt *s)
{
	for (size_t i = 0; i < sc->loops.len; i++)
		if (HGC_TP_LOOP(sc, i)->s == s)
			return (int)i;
	hgc_bug("a loop the scan did not see");
}

/* The parallel for of a unit: the statement itself, or the last statement of a block
   (for the second unit, a block of tensor definitions and the loop); else NULL. */
static struct hgc_tir_stmt *unit_pfor(struct hgc_tir_stmt *s, bool second)
{
	int n;

	if (s->kind == HGC_TIR_S_PFOR)
		return s;
	if (s->kind != HGC_TIR_S_BLOCK || !(n = s->u.block.n) ||
	    s->u.block.stmts[n - 1]->kind != HGC_TIR_S_PFOR)
		return NULL;
	for (int k = 0; second && k < n - 1; k++)
		if (s->u.block.stmts[k]->kind != HGC_TIR_S_TENSOR &&
		    s->u.block.stmts[k]->kind != HGC_TIR_S_FOR &&
		    s->u.block.stmts[k]->kind != HGC_TIR_S_PFOR)
			return NULL;
	return s->u.block.stmts[n - 1];
}

/* Whether loop statement s (a loop of the second unit before its parallel for) shares
   no tensor with the first loop that either writes, so it may run before that loop
   (packing of the second op's operand, which lowering emits after the first op). */
static bool independent(const struct pair *p, const struct hgc_tir_stmt *s)
{
	int nt = p->m->ntensors, ls = loop_index(&p->sc, s);
	unsigned char *use = hgc_xcalloc((size_t)nt + 1, 1);	/* bits: touch 0/1, write 0/1 */
	bool ok = true;

	for (size_t i = 0; i < p->sc.acc.len; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&p->sc, i);
		int k = a->loop < 0 ? -1 : hgc_tp_loop_within(&p->sc, a->loop, p->l1) ? 0
					 : hgc_tp_loop_within(&p->sc, a->loop, ls)    ? 1
										      : -1;

		if (k < 0)
			continue;
		use[a->t->id] |= (unsigned char)(1 << k);
		if (a->kind != HGC_TP_LOAD)
			use[a->t->id] |= (unsigned char)(4 << k);
	}
	for (int id = 0; id < nt && ok; id++)
		ok = !(((use[id] & 4) && (use[id] & 2)) || ((use[id] & 8) && (use[id] & 1)));
	free(use);
	return ok;
}

/* Whether every loop before the second unit's parallel for is independent of the first. */
static bool movable(const struct pair *p, const struct hgc_tir_stmt *u2)
{
	for (int k = 0; u2 != p->b && k < u2->u.block.n - 1; k++)
		if (u2->u.block.stmts[k]->kind != HGC_TIR_S_TENSOR &&
		    !independent(p, u2->u.block.stmts[k]))
			return false;
	return true;
}

/* The constant value of e (NULL: dflt), or -1 when it is not a constant. */
static int64_t konst(const struct hgc_tir_expr *e, int64_t dflt)
{
	int64_t v;

	return !e ? dflt : hgc_tir_const_int(e, &v) ? v : -1;
}

/* Mutator: the packing loop's first index as (first loop's index) * q + inner. */
static struct hgc_tir_expr *coarse_var(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	struct hgc_tir_expr **x = mu->ctx;	/* [0]: the old index as a variable ref, [1]: new */

	if (e->kind == HGC_TIR_E_VAR && e->u.var == x[0]->u.var)
		return hgc_tir_expr_copy(mu->m, x[1]);
	return e;
}

/*
 * Parallel loop q (E0 x E1 x ... iterations from 0) run as a loop over the
 * ranges of the first loop a (A0 x 1 x ... 1, A0 dividing E0): iteration
 * (i, 0, ...) of the result runs q's iterations whose first index is in
 * [i * E0 / A0, (i + 1) * E0 / A0), every later index serially.  Any grouping
 * of a parallel loop's iterations computes the same, so this is always
 * right; it lets the packing of the second op's A (a loop over row blocks
 * and k blocks, between the two nests) join the merge of a with the second
 * op, when the row blocks of the packing are those of a's iterations (the
 * legality check of the merge decides that).  NULL when the ranges do not
 * have this form.
 */
static struct hgc_tir_stmt *coarsen(struct hgc_tir_module *m, const struct hgc_tir_stmt *a,
				    struct hgc_tir_stmt *q)
{
	struct hgc_tir_var *v[MAXD];
	struct hgc_tir_expr *b[MAXD], *e[MAXD], *x[2];
	struct hgc_tir_mutator mu = { .expr = coarse_var, .m = m, .ctx = x };
	struct hgc_tir_stmt *pf, *body;
	int64_t a0 = konst(a->u.pfor.end[0], 0), e0 = konst(q->u.pfor.end[0], 0);
	struct hgc_tir_var *in;

	if (a->u.pfor.n > MAXD || a0 < 2 || e0 < a0 || e0 % a0 ||
	    konst(q->u.pfor.begin[0], -1) != 0 || konst(q->u.pfor.step[0], 1) != 1)
		return NULL;
	for (int k = 0; k < a->u.pfor.n; k++)
		if (konst(a->u.pfor.begin[k], -1) != 0 || konst(a->u.pfor.step[k], 1) != 1 ||
		    (k && konst(a->u.pfor.end[k], -1) != 1))
			return NULL;
	for (int k = 1; k < q->u.pfor.n; k++)	/* constant ranges: the first index goes */
		if (konst(q->u.pfor.step[k], 1) != 1 || konst(q->u.pfor.begin[k], -1) < 0 ||
		    konst(q->u.pfor.end[k], -1) < 0)
			return NULL;
	for (int k = 0; k < a->u.pfor.n; k++) {
		v[k] = hgc_tir_var_new(m, a->u.pfor.vars[k]->name, a->u.pfor.vars[k]->type);
		b[k] = hgc_tir_expr_copy(m, a->u.pfor.begin[k]);
		e[k] = hgc_tir_expr_copy(m, a->u.pfor.end[k]);
	}
	pf = hgc_tir_pfor(m, NULL, a->u.pfor.n, v, b, e, NULL);
	pf->u.pfor.merge_group = a->u.pfor.merge_group;
	in = hgc_tir_var_new(m, q->u.pfor.vars[0]->name, q->u.pfor.vars[0]->type);
	body = hgc_tir_body(hgc_tir_for(m, hgc_tir_body(pf), in, hgc_tir_idx(m, 0),
					hgc_tir_idx(m, e0 / a0), NULL));
	for (int k = 1; k < q->u.pfor.n; k++)
		body = hgc_tir_body(hgc_tir_for(m, body, q->u.pfor.vars[k], q->u.pfor.begin[k],
						q->u.pfor.end[k], NULL));
	x[0] = hgc_tir_ref(m, q->u.pfor.vars[0]);
	x[1] = hgc_tir_add(m, hgc_tir_mul(m, hgc_tir_ref(m, v[0]), hgc_tir_idx(m, e0 / a0)),
			   hgc_tir_ref(m, in));
	hgc_tir_append(body, hgc_tir_mutate_stmt(q->u.pfor.body, &mu));
	return pf;
}

/*
 * When the second unit (a block) starts, after tensor definitions, with a
 * parallel loop the first loop's iterations feed (the packing of the second
 * op's A from the first op's result) that coarsen can run over the first
 * loop's ranges: the definitions and that loop, coarsened, go before the
 * unit, so that the next round merges it into the first loop and then the
 * rest of the unit.  Whether anything changed.
 */
static bool split_unit(struct pair *p, struct hgc_tir_stmt *blk, int j)
{
	struct hgc_tir_stmt *u2 = blk->u.block.stmts[j], *q, *c;
	int k;

	if (u2 == p->b || u2->kind != HGC_TIR_S_BLOCK)
		return false;
	for (k = 0; k < u2->u.block.n && u2->u.block.stmts[k]->kind == HGC_TIR_S_TENSOR; k++)
		;
	q = k < u2->u.block.n ? u2->u.block.stmts[k] : NULL;
	if (!q || q == p->b || q->kind != HGC_TIR_S_PFOR || q->u.pfor.merge_group ||
	    independent(p, q) || !(c = coarsen(p->m, p->a, q)))
		return false;
	for (int i = 0; i < k; i++)
		hgc_tir_insert(blk, j++, u2->u.block.stmts[i]);
	hgc_tir_insert(blk, j, c);
	hgc_tir_remove(u2, 0, k + 1);
	return true;
}

/* Merge unit s[j] into unit s[i] of block blk: the tensor definitions between them, and
   those of the second unit, go before the first loop, which takes both bodies. */
static void merge(struct pair *p, struct hgc_tir_stmt *blk, int i, int j)
{
	struct hgc_tir_stmt **s = blk->u.block.stmts, *u1 = s[i], *u2 = s[j], *body;
	struct hgc_tir_stmt *b1 = u1->kind == HGC_TIR_S_BLOCK ? u1 : blk;
	struct hgc_tir_mutator mu = { .expr = rename_var, .m = p->m, .ctx = p };
	int at;

	for (int k = i + 1; k < j; k++)
		s[k - 1] = s[k];
	s[j - 1] = u1;
	hgc_tir_remove(blk, j, 1);
	for (at = 0; b1->u.block.stmts[at] != p->a; at++)
		;
	for (int k = 0; u2 != p->b && k < u2->u.block.n - 1; k++)
		hgc_tir_insert(b1, at++, u2->u.block.stmts[k]);
	body = hgc_tir_block(p->m, NULL);
	hgc_tir_append(body, p->a->u.pfor.body);
	hgc_tir_append(body, hgc_tir_mutate_stmt(p->b->u.pfor.body, &mu));
	p->a->u.pfor.body = body;
}

/* Visitor state: the pair, and whether a merge was made (then the walk stops
   after the block it was made in). */
struct finder {
	struct pair *p;
	bool merged;
};

/*
 * In a block: mergeable pairs of parallel fors, merged, each pair after the
 * last one merged (the merged loop waits for the next scan: its body is not
 * in this one).  A chain of n loops thus merges in about log2(n) scans of
 * the function instead of n - 1 (1600 elementwise regions in a row: 1.5 s
 * with a scan per merge, 0.3-0.5 s now).  A split of a unit ends the
 * block's turn.
 */
static bool find_pre(struct hgc_tir_visitor *v, struct hgc_tir_stmt *blk)
{
	struct finder *fd = v->ctx;
	struct pair *p = fd->p;
	struct hgc_tir_stmt **s = blk->u.block.stmts;
	int j;

	if (fd->merged)
		return false;
	if (blk->kind != HGC_TIR_S_BLOCK)
		return true;
	for (int i = 0; i < blk->u.block.n; i++) {
		struct hgc_tir_stmt *a = unit_pfor(s[i], false), *b;

		if (!a || !a->u.pfor.merge_group)
			continue;
		for (j = i + 1; j < blk->u.block.n && s[j]->kind == HGC_TIR_S_TENSOR; j++)
			;
		if (j == blk->u.block.n || !(b = unit_pfor(s[j], true)) ||
		    b->u.pfor.merge_group != a->u.pfor.merge_group || !same_ranges(a, b))
			continue;
		p->a = a;
		p->b = b;
		p->l1 = loop_index(&p->sc, a);
		p->l2 = loop_index(&p->sc, b);
		if (!movable(p, s[j])) {
			if (split_unit(p, blk, j)) {
				fd->merged = true;
				return false;
			}
		} else if (legal(p)) {
			struct hgc_tir_stmt *unit = s[i];

			merge(p, blk, i, j);
			fd->merged = true;
			/* go on after the merged unit: the second unit's definitions may have
			   gone into blk before it (and the array may have moved) */
			s = blk->u.block.stmts;
			for (i = 0; s[i] != unit; i++)
				;
		}
	}
	return !fd->merged;
}

/* Merge in f until nothing more merges; the count. */
static int merge_func(struct hgc_tir_module *m, struct hgc_tir_func *f)
{
	int changes = 0;
	struct finder fd;

	do {
		struct pair p = { .m = m };
		struct hgc_tir_visitor v = { .stmt_pre = find_pre, .ctx = &fd };

		fd.p = &p;
		fd.merged = false;
		hgc_tp_scan(&p.sc, m, f);
		hgc_tp_vars_init(&p.v, m, f);
		hgc_tir_walk_stmt(f->body, &v);
		hgc_tp_vars_release(&p.v);
		hgc_tp_scan_release(&p.sc);
		changes += fd.merged;
	} while (fd.merged);
	return changes;
}

/* Merge the parallel loops of every function. */
int hgc_tir_pass_parallel_merge(struct hgc_tir_module *m, struct hgc_tir_passes *p,
				struct hgc_diag *d)
{
	int changes = 0;

	(void)p;
	(void)d;
	for (size_t i = 0; i < m->funcs.len; i++)
		changes += merge_func(m, HGC_TIR_FUNC(m, i));
	return changes;
}
