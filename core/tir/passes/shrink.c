/*
 * shrink.c: tensor size optimization.  A local temporary whose every load,
 * store and slice address happens inside one loop L (its definition
 * outside L), such that each dim's index is a part fixed in an iteration
 * of L (the same for every access) plus a part over the loops inside L,
 * and such that distinct iterations of L and of the loops between the
 * definition and L touch disjoint slices, is only ever used one slice per
 * iteration: it shrinks to that slice (down to one element), its indices
 * lose the fixed part, and its definition moves to the top of L's body.
 * The deepest such L is taken, if the slice is smaller than the tensor, or
 * (after buffer_reuse) no larger once per thread when L is parallel and the
 * definition is not: per-thread copies must not cost memory, and once they
 * live in the loop's
 * body, buffer_reuse's per-thread run may share one buffer between those
 * whose lifetimes within an iteration do not overlap (an MLP's layers merged
 * into one parallel loop: each thread's rows of h0 die where its rows of the
 * next layer's packed A are born).  A temporary whose address is kept in a
 * scalar, or stored into a pointer tensor defined outside L, stays.  A
 * slice address hands a callee (brgemm, copy2d) the tensor's row strides
 * in its other arguments, so a temporary with one only shrinks in the dims
 * up to the first its slice spans (a [1, 64, 128] slice of [12, 128, 128]
 * with rows of 128: to [1, 64, 128]), which keeps those strides; except a
 * brgemm's C block with a constant ldc, whose columns shrink too and whose
 * ldc the pass rewrites (c_block).
 *
 * The pipeline runs it twice: before buffer_reuse for slices of at most
 * SMALL_SLICE bytes only (hgc_tir_pass_tensor_shrink_small), and after it
 * for the rest.  A tiny slice (a fused member's temporary, one element per
 * row element) otherwise joined a shared buffer first and stayed a whole
 * tensor: the FFN's GELU at one thread stored its erf term, 6 MiB per run
 * that nothing read again, into the buffer layer 2 packs A into.
 */
#include "passes_int.h"

#include <stdlib.h>

#define MAXD 16
#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* One function's state. */
struct shrink {
	struct hgc_tir_module *m;
	struct hgc_tp_scan sc;
	struct hgc_tp_vars v;
	bool *inner;		/* by var id: a loop variable of a loop inside L */
	int threads;		/* a slice inside a parallel loop exists once per thread */
	int64_t max_bytes;	/* the largest slice taken (per-thread copies counted), < 0: any */
};

/* Slices up to this many bytes shrink before buffer_reuse: they live in L1
   (or registers), and shared buffers would save nothing next to them. */
#define SMALL_SLICE 4096

/* The slice a temporary keeps per iteration: fixed parts and ranges per dim. */
struct slice {
	struct hgc_tp_aff fixed[MAXD];
	int64_t lo[MAXD], hi[MAXD];
};

/* Whether tensor p is defined inside loop l. */
static bool defined_in(const struct shrink *sh, const struct hgc_tir_tensor *p, int l)
{
	const struct hgc_tp_def *d = &sh->sc.defs[p->id];
	const struct hgc_tp_loop *lp = HGC_TP_LOOP(&sh->sc, l);

	return d->s && d->pos > lp->start && d->pos <= lp->end;
}

/* Whether loop l holds the definition of t. */
static bool holds_def(const struct shrink *sh, int l, const struct hgc_tir_tensor *t)
{
	const struct hgc_tp_loop *lp = HGC_TP_LOOP(&sh->sc, l);
	int pos = sh->sc.defs[t->id].pos;

	return pos >= lp->start && pos <= lp->end;
}

/* Fold one access of t into the slice; false if it does not fit the pattern. */
static bool fold_access(struct shrink *sh, const struct hgc_tp_access *a, int l, bool first,
			struct slice *sl)
{
	struct hgc_tp_aff f;
	int64_t lo, hi;

	if (a->escapes || (a->into && !defined_in(sh, a->into, l)) || a->n != a->t->ndims)
		return false;
	for (int d = 0; d < a->n; d++) {
		if (!hgc_tp_split(&sh->v, sh->inner, a->idx[d], a->ext ? a->ext[d] : 1, &f, &lo, &hi))
			return false;
		if (first) {
			sl->fixed[d] = f;
			sl->lo[d] = lo;
			sl->hi[d] = hi;
		} else if (!hgc_tp_same_terms(&sl->fixed[d], &f)) {
			return false;
		} else {
			sl->lo[d] = lo < sl->lo[d] ? lo : sl->lo[d];
			sl->hi[d] = hi > sl->hi[d] ? hi : sl->hi[d];
		}
	}
	return true;
}

/* The first dim in which slice address a spans more than one element (0 when it
   spans none): a callee walks the slice with the row strides of the dims from there
   on, so the dims after it must keep their extents; it and the dims before may
   shrink. */
static int spanned(const struct hgc_tp_access *a)
{
	for (int d = 0; a->ext && d < a->n; d++)
		if (a->ext[d] > 1)
			return d;
	return 0;
}

/* The ldc argument of the brgemm whose C operand slice address a is, or NULL. */
static struct hgc_tir_expr **brgemm_ldc(const struct hgc_tp_access *a)
{
	struct hgc_tir_expr *e = a->s->kind == HGC_TIR_S_EVAL ? a->s->u.expr : NULL;

	if (!e || e->kind != HGC_TIR_E_INTRIN ||
	    (e->op != HGC_TIR_I_BRGEMM && e->op != HGC_TIR_I_BRGEMM_STRD) ||
	    e->ops[2]->kind != HGC_TIR_E_ADDR || e->ops[2]->ops != a->idx)
		return NULL;
	return &e->ops[e->op == HGC_TIR_I_BRGEMM ? 9 : 11];
}

/*
 * Whether slice address a is a brgemm's C block whose row stride may change
 * with the tensor: rows in t's second-to-last dim, ldc a constant equal to
 * t's last dim.  The last dim may then shrink too, and ldc with it
 * (shrink_to): an int8 MatMul's s32 C, 2048 columns wide with its post-ops
 * at each 128 x 16 block, becomes that block, 8 KiB in L1, where its rows
 * 8 KiB apart fell on one L1 set and eight of L2's.
 */
static bool c_block(const struct hgc_tp_access *a)
{
	struct hgc_tir_expr **ldc = brgemm_ldc(a);
	const struct hgc_tir_tensor *t = a->t;
	int64_t w = t->ndims >= 2 ? hgc_tir_tensor_dim(t, t->ndims - 1) : -1;

	return ldc && (*ldc)->kind == HGC_TIR_E_INT && (*ldc)->u.i == w && w > 0 &&
	       spanned(a) == t->ndims - 2;
}

/* Whether t can shrink to its slice per iteration of loop l (filled in sl). */
static bool fits(struct shrink *sh, struct hgc_tir_tensor *t, int l, struct slice *sl)
{
	struct hgc_tir_var *vars[64];
	int64_t width[MAXD], size = 1;
	bool first = true, into_pfor;
	int n = 0, keep = MAXD;	/* dims after keep keep their extent (row strides) */

	hgc_tp_mark_inner(&sh->sc, l, sh->inner, sh->m->nvars);
	for (size_t i = 0; i < sh->sc.acc.len; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&sh->sc, i);

		if (a->t != t)
			continue;
		if (!fold_access(sh, a, l, first, sl))
			return false;
		first = false;
		if (a->kind == HGC_TP_ADDR)
			keep = MIN(keep, c_block(a) ? t->ndims - 1 : spanned(a));
	}
	for (int d = 0; d < t->ndims; d++) {
		width[d] = sl->hi[d] - sl->lo[d] + 1;
		size *= width[d];
		if (d > keep && (sl->lo[d] != 0 || width[d] != hgc_tir_tensor_dim(t, d)))
			return false;
	}
	into_pfor = hgc_tp_in_pfor(&sh->sc, l) && !hgc_tp_in_pfor(&sh->sc, sh->sc.defs[t->id].loop);
	if (into_pfor)
		size *= sh->threads;
	/* At the same size only after buffer_reuse (max_bytes < 0): before it, the
	   move would take the temporary out of the shared plan for nothing. */
	if (size > hgc_tir_tensor_size(t) ||
	    (size == hgc_tir_tensor_size(t) && !(into_pfor && sh->max_bytes < 0)))
		return false;
	if (sh->max_bytes >= 0 &&
	    size * (t->elem.ptr ? (int64_t)sizeof(void *) : hgc_tir_kind_size(t->elem.kind)) >
	    sh->max_bytes)
		return false;
	for (int k = l; k >= 0 && !holds_def(sh, k, t); k = HGC_TP_LOOP(&sh->sc, k)->parent)
		n += hgc_tp_loop_vars(HGC_TP_LOOP(&sh->sc, k)->s, vars + n, 64 - n);
	return hgc_tp_disjoint(&sh->v, t->ndims, sl->fixed, width, vars, n);
}

/* The index of an access without its fixed part: inner terms plus a constant. */
static struct hgc_tir_expr *local_index(struct shrink *sh, const struct hgc_tir_expr *e,
					int64_t lo)
{
	struct hgc_tp_aff a = hgc_tp_affine(&sh->v, e);
	struct hgc_tir_expr *sum = NULL, *t;

	for (int i = 0; i < a.n; i++) {
		if (!sh->inner[a.t[i].var->id])
			continue;
		t = hgc_tir_ref(sh->m, a.t[i].var);
		if (a.t[i].c != 1)
			t = hgc_tir_mul(sh->m, t, hgc_tir_idx(sh->m, a.t[i].c));
		sum = sum ? hgc_tir_add(sh->m, sum, t) : t;
	}
	if (!sum)
		return hgc_tir_idx(sh->m, a.c0 - lo);
	return a.c0 != lo ? hgc_tir_add(sh->m, sum, hgc_tir_idx(sh->m, a.c0 - lo)) : sum;
}

/* Shrink t to the slice, rewrite its accesses, move its definition into loop l. */
static void shrink_to(struct shrink *sh, struct hgc_tir_tensor *t, int l, const struct slice *sl)
{
	struct hgc_tp_def *def = &sh->sc.defs[t->id];
	struct hgc_tir_stmt *b = def->block, *body;

	for (size_t k = 0; k < sh->sc.acc.len; k++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&sh->sc, k);

		if (a->t != t)
			continue;
		if (a->kind == HGC_TP_ADDR && c_block(a))
			*brgemm_ldc(a) = hgc_tir_idx(sh->m, sl->hi[t->ndims - 1] -
						       sl->lo[t->ndims - 1] + 1);
		for (int d = 0; d < a->n; d++)
			a->idx[d] = local_index(sh, a->idx[d], sl->lo[d]);
	}
	for (int d = 0; d < t->ndims; d++)
		t->dims[d] = hgc_tir_idx(sh->m, sl->hi[d] - sl->lo[d] + 1);
	hgc_tir_unlink(b, def->s);
	body = hgc_tir_body(HGC_TP_LOOP(&sh->sc, l)->s);
	hgc_tir_insert(body, 0, def->s);
}

/* Try t in the deepest loop around all its uses first, then outwards. */
static int shrink_tensor(struct shrink *sh, struct hgc_tir_tensor *t)
{
	struct slice sl;
	int l = -2;

	if (t->scope != HGC_TIR_LOCAL || t->ndims > MAXD || hgc_tir_tensor_size(t) < 0)
		return 0;
	for (size_t i = 0; i < sh->sc.acc.len; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(&sh->sc, i);

		if (a->t == t)
			l = l == -2 ? a->loop : hgc_tp_common(&sh->sc, l, a->loop);
	}
	for (; l >= 0 && !holds_def(sh, l, t); l = HGC_TP_LOOP(&sh->sc, l)->parent)
		if (fits(sh, t, l, &sl)) {
			shrink_to(sh, t, l, &sl);
			return 1;
		}
	return 0;
}

/* Shrink the temporaries of one function. */
static int shrink_func(struct hgc_tir_module *m, struct hgc_tir_func *f, int threads,
		       int64_t max_bytes)
{
	struct shrink sh = { .m = m, .threads = threads > 0 ? threads : 1, .max_bytes = max_bytes };
	int changes = 0;

	hgc_tp_scan(&sh.sc, m, f);
	hgc_tp_vars_init(&sh.v, m, f);
	sh.inner = hgc_xcalloc((size_t)m->nvars + 1, 1);
	for (int id = 0; id < m->ntensors; id++)
		if (sh.sc.defs[id].s)
			changes += shrink_tensor(&sh, sh.sc.defs[id].s->u.tensor);
	free(sh.inner);
	hgc_tp_vars_release(&sh.v);
	hgc_tp_scan_release(&sh.sc);
	return changes;
}

/* Shrink the temporaries of every function to slices of at most max_bytes (< 0: any). */
static int shrink_module(struct hgc_tir_module *m, int threads, int64_t max_bytes)
{
	int changes = 0;

	for (size_t i = 0; i < m->funcs.len; i++)
		changes += shrink_func(m, HGC_TIR_FUNC(m, i), threads, max_bytes);
	return changes;
}

/* Shrink the temporaries of every function. */
int hgc_tir_pass_tensor_shrink(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			       struct hgc_diag *d)
{
	(void)d;
	return shrink_module(m, p->threads, -1);
}

/* Shrink only to slices of at most SMALL_SLICE bytes (before buffer_reuse). */
int hgc_tir_pass_tensor_shrink_small(struct hgc_tir_module *m, struct hgc_tir_passes *p,
				     struct hgc_diag *d)
{
	(void)d;
	return shrink_module(m, p->threads, SMALL_SLICE);
}
