/*
 * inplace.c: may an elementwise consumer Y take the buffer of an input X
 * that is still live when Y is born?  Yes when, in the window where both
 * live ([Y's start, X's end]):
 *
 *  - X and Y have the same element type and dims;
 *  - every store (or slice address) of Y there is a store Y[E] paired
 *    with a load X[E] of the same index, in the store's value or in a let
 *    of the same loop just before it (nothing touching X or Y in
 *    between); loads of Y only see what Y wrote;
 *  - every other access of X there comes before the first pair, outside
 *    the loops around the pairs (the producers);
 *  - each pair's index takes distinct values over the loops around it
 *    (so each element is read, then overwritten, once);
 *  - when the window lies in a loop R, distinct iterations of R (and of
 *    the loops between it and the definitions) touch disjoint slices of
 *    X and Y, every access using the same slice.
 *
 * Then at every element the read of X precedes the write of Y and nothing
 * reads X there afterwards, so sharing the buffer changes no value.
 */
#include "passes_int.h"

#include <stdlib.h>
#include <string.h>

#define MAXD 16

/* Same element type and the same constant dims. */
static bool same_shape(const struct hgc_tir_tensor *x, const struct hgc_tir_tensor *y)
{
	if (!hgc_tir_type_eq(x->elem, y->elem) || x->ndims != y->ndims || x->ndims > MAXD)
		return false;
	for (int i = 0; i < x->ndims; i++)
		if (hgc_tir_tensor_dim(x, i) != hgc_tir_tensor_dim(y, i))
			return false;
	return true;
}

/* Whether index lists a and b are equal. */
static bool same_index(const struct hgc_tp_access *a, const struct hgc_tp_access *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (!hgc_tp_expr_eq(a->idx[i], b->idx[i]))
			return false;
	return true;
}

/* The window's accesses of x and y, by index into the scan; their count. */
static int window(const struct reuse *ru, const struct rtemp *x, const struct rtemp *y,
		  int *out)
{
	int n = 0;

	for (size_t i = 0; i < ru->sc.acc.len; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&ru->sc, i);

		if ((a->t == x->t && a->pos >= y->start) || (a->t == y->t && a->pos <= x->end))
			out[n++] = (int)i;
	}
	return n;
}

/* The Y store a load of X (window entry i) pairs with: the store it is in, or the
   first X or Y access after its let, in the same loop; same index.  NULL if none. */
static const struct hgc_tp_access *pair_of(const struct reuse *ru, const int *w, int n, int i,
					   const struct rtemp *y)
{
	const struct hgc_tp_access *ld = HGC_TP_ACC(&ru->sc, w[i]), *a;

	if (ld->kind != HGC_TP_LOAD)
		return NULL;
	if (ld->s->kind == HGC_TIR_S_STORE) {
		if (ld->s->u.store.tensor != y->t)
			return NULL;
		for (int k = 0; k < n; k++)
			if ((a = HGC_TP_ACC(&ru->sc, w[k]))->pos == ld->pos && a->kind == HGC_TP_STORE)
				return same_index(a, ld) ? a : NULL;
		return NULL;
	}
	if (ld->s->kind != HGC_TIR_S_LET)
		return NULL;
	for (int k = i + 1; k < n; k++) {
		a = HGC_TP_ACC(&ru->sc, w[k]);
		if (a->pos == ld->pos)
			continue;
		if (a->kind == HGC_TP_STORE && a->t == y->t && a->loop == ld->loop &&
		    same_index(a, ld))
			return a;
		return NULL;
	}
	return NULL;
}

/* Each element once: the pair's index is injective over the loops around it inside r. */
static bool injective(const struct reuse *ru, const struct hgc_tp_access *st, int r)
{
	struct hgc_tir_var *vars[64];
	struct hgc_tp_aff base[MAXD];
	int64_t width[MAXD];
	int n = 0;

	for (int l = st->loop; l >= 0 && l != r; l = HGC_TP_LOOP(&ru->sc, l)->parent)
		n += hgc_tp_loop_vars(HGC_TP_LOOP(&ru->sc, l)->s, vars + n, 64 - n);
	for (int d = 0; d < st->n; d++) {
		base[d] = hgc_tp_affine(&ru->vars, st->idx[d]);
		width[d] = 1;
		if (!base[d].ok)
			return false;
	}
	return hgc_tp_disjoint(&ru->vars, st->n, base, width, vars, n);
}

/* Whether loop l holds the definition of t. */
static bool holds_def(const struct reuse *ru, int l, const struct hgc_tir_tensor *t)
{
	const struct hgc_tp_loop *lp = HGC_TP_LOOP(&ru->sc, l);
	int pos = ru->sc.defs[t->id].pos;

	return pos >= lp->start && pos <= lp->end;
}

/* Distinct iterations of r (and the loops up to the definitions) touch disjoint slices
   of x and y, all accesses using the same slice. */
static bool slices_ok(const struct reuse *ru, const int *w, int n, int r,
		      const struct rtemp *x, const struct rtemp *y)
{
	struct hgc_tp_aff fixed[MAXD], f;
	int64_t lo[MAXD], hi[MAXD], width[MAXD], l, h;
	struct hgc_tir_var *vars[64];
	bool *inner = hgc_xcalloc((size_t)ru->m->nvars + 1, 1), ok = true;
	int nv = 0;

	hgc_tp_mark_inner(&ru->sc, r, inner, ru->m->nvars);
	for (int i = 0; i < n && ok; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&ru->sc, w[i]);

		for (int d = 0; d < a->n && ok; d++) {
			ok = hgc_tp_split(&ru->vars, inner, a->idx[d], a->ext ? a->ext[d] : 1, &f, &l,
					  &h) && (i == 0 || hgc_tp_same_terms(&fixed[d], &f));
			if (i == 0 || l < lo[d])
				lo[d] = l;
			if (i == 0 || h > hi[d])
				hi[d] = h;
			fixed[d] = f;
		}
	}
	free(inner);
	if (!ok)
		return false;
	for (int d = 0; d < x->t->ndims; d++)
		width[d] = hi[d] - lo[d] + 1;
	for (int k = r; k >= 0 && !holds_def(ru, k, x->t) && !holds_def(ru, k, y->t);
	     k = HGC_TP_LOOP(&ru->sc, k)->parent)
		nv += hgc_tp_loop_vars(HGC_TP_LOOP(&ru->sc, k)->s, vars + nv, 64 - nv);
	return hgc_tp_disjoint(&ru->vars, x->t->ndims, fixed, width, vars, nv);
}

/* Whether the accesses of x (unpaired: producers) all come before the pairs, outside
   the loops (inside r) around them. */
static bool producers_first(const struct reuse *ru, const int *w, int n, const bool *paired,
			    int r, const struct rtemp *x)
{
	int first = -1;

	for (int i = 0; i < n; i++)
		if (paired[i] && (first < 0 || HGC_TP_ACC(&ru->sc, w[i])->pos < first))
			first = HGC_TP_ACC(&ru->sc, w[i])->pos;
	for (int i = 0; i < n; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&ru->sc, w[i]);

		if (paired[i] || a->t != x->t)
			continue;
		if (a->pos >= first)
			return false;
		for (int k = 0; k < n; k++) {
			const struct hgc_tp_access *p = HGC_TP_ACC(&ru->sc, w[k]);

			if (!paired[k])
				continue;
			for (int l = p->loop; l >= 0 && l != r; l = HGC_TP_LOOP(&ru->sc, l)->parent)
				if (hgc_tp_loop_within(&ru->sc, a->loop, l))
					return false;
		}
	}
	return first >= 0;
}

/* Pair every load of x with its store of y; false if a store of y stays unpaired or a
   pair's index repeats. */
static bool pair_all(const struct reuse *ru, const int *w, int n, int r, bool *paired,
		     const struct rtemp *y)
{
	const struct hgc_tp_access *st;

	for (int i = 0; i < n; i++) {
		if (HGC_TP_ACC(&ru->sc, w[i])->t == y->t || !(st = pair_of(ru, w, n, i, y)))
			continue;
		if (!injective(ru, st, r))
			return false;
		paired[i] = true;
		for (int k = 0; k < n; k++)
			if (HGC_TP_ACC(&ru->sc, w[k]) == st)
				paired[k] = true;
	}
	for (int i = 0; i < n; i++)
		if (HGC_TP_ACC(&ru->sc, w[i])->t == y->t && !paired[i] &&
		    HGC_TP_ACC(&ru->sc, w[i])->kind != HGC_TP_LOAD)
			return false;
	return true;
}

/* Whether y may overwrite x's buffer elementwise (see the top of the file). */
static bool inplace_ok(const struct reuse *ru, const struct rtemp *x, const struct rtemp *y)
{
	int *w = hgc_xcalloc(ru->sc.acc.len + 1, sizeof(int)), n = window(ru, x, y, w), r = -2;
	bool *paired = hgc_xcalloc((size_t)n + 1, sizeof(bool)), ok;

	for (int i = 0; i < n; i++) {
		int l = HGC_TP_ACC(&ru->sc, w[i])->loop;

		r = r == -2 ? l : hgc_tp_common(&ru->sc, r, l);
	}
	ok = n > 0 && pair_all(ru, w, n, r, paired, y) &&
	     producers_first(ru, w, n, paired, r, x) && (r < 0 || slices_ok(ru, w, n, r, x, y));
	free(paired);
	free(w);
	return ok;
}

/* A live buffer whose last member x dies where y may overwrite it, or -1. */
int hgc_tp_inplace_pick(struct reuse *ru, struct rtemp *y)
{
	for (int i = 0; i < ru->nbufs; i++) {
		struct rbuf *b = &ru->bufs[i];
		struct rtemp *x = b->owner;

		if (!x || b->scope != y->scope || b->busy_until < y->start ||
		    x->end != b->busy_until || x->end > y->end ||
		    b->elems < y->elems || !same_shape(x->t, y->t))
			continue;
		if (inplace_ok(ru, x, y))
			return i;
	}
	return -1;
}
