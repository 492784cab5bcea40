/*
 * tmpl_inst.c: instantiating a bound template with chosen parameters.  The
 * inputs are packed from their graph views into buffers in the template's
 * layouts (zeros in the padding, so tails of any size compute right), the
 * result gets a buffer of the accumulator type, build() emits the nest, and
 * the result is written back into the op's output view, the bias added and
 * the value converted as the interpreter stores it, at the post-op anchor
 * with the smallest working set (or after the nest when none was reached).
 * Anchors nothing was put in are removed when the instance is released.
 */
#include "lower_int.h"
#include "tmpl.h"

#include <stdlib.h>
#include <string.h>

/* A graph operand seen in canonical indices (a custom view's context). */
struct graph_acc {
	const struct hgc_tmpl_map *map;
	const struct hgc_lower_view *g;
};

/* Graph index d from the canonical indices idx (copied). */
static struct hgc_tir_expr *mapped(struct hgc_lower_ctx *cx, const struct hgc_tmpl_map *mp,
				   int d, struct hgc_tir_expr *const *idx)
{
	struct hgc_tir_expr *x;

	if (mp->d[d].c < 0)
		return lw_i(cx, 0);
	x = hgc_tir_expr_copy(cx->m, idx[mp->d[d].c]);
	if (mp->d[d].div > 1)
		x = lw_bin(cx, HGC_TIR_DIV, x, lw_i(cx, mp->d[d].div));
	if (mp->d[d].mod > 0)
		x = lw_bin(cx, HGC_TIR_MOD, x, lw_i(cx, mp->d[d].mod));
	return x;
}

/* Load a graph operand's element at canonical indices. */
static struct hgc_tir_expr *graph_load(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
				       struct hgc_tir_expr **idx)
{
	const struct graph_acc *a = v->ctx;
	struct hgc_tir_expr *gi[HGC_MAX_DIMS];
	int d;

	for (d = 0; d < a->map->n; d++)
		gi[d] = mapped(cx, a->map, d, idx);
	return hgc_lower_view_load(cx, a->g, gi);
}

/* Inputs are only read. */
static struct hgc_tir_stmt *graph_store(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
					struct hgc_tir_stmt *block, struct hgc_tir_expr **idx,
					struct hgc_tir_expr *value)
{
	hgc_bug("tmpl: a store into an input of a template");
}

/* Physical index j of a layout for canonical indices idx (copied). */
static struct hgc_tir_expr *phys_index(struct hgc_lower_ctx *cx, const struct hgc_tmpl_layout *l,
				       int j, struct hgc_tir_expr *const *idx)
{
	const struct hgc_tmpl_ldim *p = &l->phys[j];
	struct hgc_tir_expr *x = hgc_tir_expr_copy(cx->m, idx[p->dim]);
	int k;

	switch (p->kind) {
	case HGC_TMPL_OUTER:
		return lw_bin(cx, HGC_TIR_DIV, x, lw_i(cx, p->block));
	case HGC_TMPL_INNER:
		x = lw_bin(cx, HGC_TIR_MOD, x, lw_i(cx, p->block));
		for (k = 0; k < l->nphys; k++)
			if (l->phys[k].kind == HGC_TMPL_PACK && l->phys[k].dim == p->dim &&
			    l->pack > 1)
				x = lw_bin(cx, HGC_TIR_DIV, x, lw_i(cx, l->pack));
		return x;
	case HGC_TMPL_PAD:
		return lw_bin(cx, HGC_TIR_ADD, x, lw_i(cx, p->before));
	case HGC_TMPL_PACK:
		return l->pack > 1 ? lw_bin(cx, HGC_TIR_MOD, x, lw_i(cx, l->pack)) : lw_i(cx, 0);
	default:
		return x;
	}
}

/* The physical indices of canonical ones (which stay unused: each use copies). */
static void phys_indices(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
			 struct hgc_tir_expr **idx, struct hgc_tir_expr **phys)
{
	const struct hgc_tmpl_layout *l = v->ctx;
	int j;

	for (j = 0; j < l->nphys; j++)
		phys[j] = phys_index(cx, l, j, idx);
}

/* Load from a template buffer at canonical indices. */
static struct hgc_tir_expr *buf_load(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
				     struct hgc_tir_expr **idx)
{
	struct hgc_tir_expr *phys[HGC_TMPL_MAX_PHYS];

	phys_indices(cx, v, idx, phys);
	return hgc_tir_load(cx->m, v->tensor, v->tensor->ndims, phys);
}

/* Store into a template buffer at canonical indices. */
static struct hgc_tir_stmt *buf_store(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
				      struct hgc_tir_stmt *block, struct hgc_tir_expr **idx,
				      struct hgc_tir_expr *value)
{
	struct hgc_tir_expr *phys[HGC_TMPL_MAX_PHYS];

	phys_indices(cx, v, idx, phys);
	return hgc_tir_store(cx->m, block, v->tensor, v->tensor->ndims, phys, value);
}

/* Elements of a layout and of the canonical operand. */
static void sizes(const struct hgc_tmpl_layout *l, int rank, const int64_t *dims, int64_t *phys,
		  int64_t *logical)
{
	int j;

	for (*phys = 1, j = 0; j < l->nphys; j++)
		*phys *= l->phys[j].extent;
	for (*logical = 1, j = 0; j < rank; j++)
		*logical *= dims[j];
}

/* The zero of an element type. */
static struct hgc_tir_expr *zero(struct hgc_lower_ctx *cx, struct hgc_tir_type t)
{
	if (t.kind == HGC_TIR_F32)
		return lw_f(cx, 0);
	if (t.kind == HGC_TIR_BF16)
		return lw_cast(cx, HGC_TIR_BF16, lw_f(cx, 0));
	return hgc_tir_int(cx->m, (enum hgc_tir_kind)t.kind, 0);
}

/*
 * fill(&t[p0, .., p(depth-1), 0, ..], 0, n): the contiguous sub-block of t
 * below one iteration of its outer depth physical dims, n elements.
 */
static void zero_fill_block(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			    struct hgc_tir_tensor *t, int depth, struct hgc_tir_var *const *p)
{
	struct hgc_tir_expr *idx[HGC_TMPL_MAX_PHYS], *args[3];
	int64_t ext[HGC_TMPL_MAX_PHYS], n = 1;
	int j;

	for (j = 0; j < t->ndims; j++) {
		idx[j] = j < depth ? lw_v(cx, p[j]) : lw_i(cx, 0);
		ext[j] = j < depth ? 1 : hgc_tir_tensor_dim(t, j);
		n *= ext[j];
	}
	args[0] = hgc_tir_addr(cx->m, t, t->ndims, idx, ext);
	args[1] = zero(cx, t->elem);
	args[2] = lw_i(cx, n);
	hgc_tir_eval(cx->m, block, hgc_tir_intrin(cx->m, HGC_TIR_I_FILL, 3, args));
}

/* fill(&t[0, ...], 0, all of t): the padding of a packed input reads zero. */
static void zero_fill(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
		      struct hgc_tir_tensor *t)
{
	zero_fill_block(cx, block, t, 0, NULL);
}

/* The module's init function, made on first use with the entry's parameters;
   NULL when the entry has a scalar parameter (init could not take them). */
static struct hgc_tir_func *init_func(struct hgc_lower_ctx *cx)
{
	struct hgc_tir_func *f;
	int i;

	if (cx->m->init)
		return cx->m->init;
	for (i = 0; i < cx->f->nparams; i++)
		if (!cx->f->params[i].tensor)
			return NULL;
	f = hgc_tir_func_new(cx->m, "init", hgc_tir_ty(HGC_TIR_VOID));
	for (i = 0; i < cx->f->nparams; i++)
		hgc_tir_func_add_tensor_param(f, cx->f->params[i].tensor);
	cx->m->init = f;
	return f;
}

/*
 * Where input i is packed: the init function for a constant (a constant
 * graph input or embedded data, read straight from the entry's parameters or
 * the module's constants, outside any parallel loop); else NULL: the nest's
 * block, on every run.
 */
static struct hgc_tir_func *pack_once(struct hgc_tmpl_build *b, const struct hgc_tmpl_bind *bind,
				      int i, struct hgc_lower_view *const *in)
{
	const struct hgc_tensor *t;
	const struct hgc_tir_tensor *src;

	if (i >= b->t->ninputs || !bind->op || i >= bind->op->nin || b->outer_parallel ||
	    !b->cx->f || b->cx->f != b->m->entry || !(src = in[i]->tensor))
		return NULL;
	t = bind->op->in[i];
	if (t->producer || (t->prop != HGC_PROP_CONSTANT && !t->data))
		return NULL;
	if (src->scope != HGC_TIR_CONST && !(src->scope == HGC_TIR_GLOBAL && src->is_param))
		return NULL;
	return init_func(b->cx);
}

static int pack_phys(struct hgc_tmpl_build *b, struct hgc_lower_ctx *cx,
		     struct hgc_tir_stmt *block, const struct hgc_tmpl_bind *bind, int i,
		     struct hgc_lower_view *const *in, bool has_pad);

/* Pack input i from its graph view into b->buf[i] in block. */
static int pack_input(struct hgc_tmpl_build *b, struct hgc_lower_ctx *cx,
		      struct hgc_tir_stmt *block, const struct hgc_tmpl_bind *bind, int i,
		      struct hgc_lower_view *const *in, struct hgc_diag *d)
{
	const struct hgc_tmpl_layout *l = &b->layout[i];
	struct graph_acc acc = {&bind->map[i], in[i]};
	struct hgc_lower_view src, dst;
	int64_t phys, logical;
	int rank = b->t->operand_rank[i];

	sizes(l, rank, bind->dims[i], &phys, &logical);
	if (l->nphys <= HGC_MAX_DIMS && rank <= HGC_MAX_DIMS)
		return pack_phys(b, cx, block, bind, i, in, phys > logical);
	if (phys > logical)
		zero_fill(cx, block, b->buf[i]);
	src = hgc_lower_view_custom(in[i]->tensor, in[i]->dtype, rank, bind->dims[i], graph_load,
				    graph_store, &acc);
	dst = hgc_lower_view_custom(b->buf[i], b->dtype[i], rank, bind->dims[i], buf_load,
				    buf_store, (void *)l);
	return hgc_lower_copy(cx, block, &src, &dst, d);
}

/* Whether layout l is operand i's canonical dims themselves, whole, in some
   order (no blocks, no padding): the template's plain view of the operand,
   in the canonical order when it gives no layout. */
static bool plain_layout(const struct hgc_tmpl_build *b, const struct hgc_tmpl_bind *bind, int i)
{
	const struct hgc_tmpl_layout *l = &b->layout[i];
	int j, rank = b->t->operand_rank[i], d;

	if (l->nphys != rank)
		return false;
	for (j = 0; j < rank; j++) {
		d = l->phys[j].dim;
		if (l->phys[j].kind != HGC_TMPL_WHOLE || d < 0 || d >= rank ||
		    l->phys[j].extent != bind->dims[i][d])
			return false;
	}
	return true;
}

/*
 * Whether the graph view v of operand i is the whole of its tensor, dense,
 * in the element type, and its memory order is the order of the operand's
 * plain layout (canonical NCHW, or NHWC for a layout [N, IH, IW, IC] over
 * a channels-last tensor): then the template reads (an input) or writes
 * (the result) that tensor in place, with no packing copy and no
 * write-back copy.
 */
static bool in_place(const struct hgc_tmpl_build *b, const struct hgc_tmpl_bind *bind, int i,
		     const struct hgc_lower_view *v)
{
	const struct hgc_tmpl_map *mp = &bind->map[i];
	const struct hgc_tmpl_layout *l = &b->layout[i];
	const struct hgc_tir_tensor *t = v->tensor;
	int j, rank = b->t->operand_rank[i];
	int64_t n;

	if (!t || v->load || v->ndims != rank || t->ndims != rank || mp->n != rank ||
	    v->dtype != b->dtype[i] || !plain_layout(b, bind, i))
		return false;
	for (j = 0; j < rank; j++) {
		n = bind->dims[i][l->phys[j].dim];
		if (v->axis[j] != j || (v->start[j] && (v->start[j]->kind != HGC_TIR_E_INT ||
							v->start[j]->u.i != 0)))
			return false;
		if (hgc_tir_tensor_dim(t, j) != n || v->dims[j] != n)
			return false;
		if (mp->d[j].c != l->phys[j].dim || mp->d[j].div > 1 ||
		    (mp->d[j].mod && mp->d[j].mod != n))
			return false;
	}
	return true;
}

/* A buffer for operand i in its layout: packed from the graph for an input,
   once by the init function into a module constant for a constant input. */
static int operand_buffer(struct hgc_tmpl_build *b, const struct hgc_tmpl_bind *bind, int i,
			  struct hgc_lower_view *const *in, struct hgc_diag *d)
{
	const struct hgc_tmpl_layout *l = &b->layout[i];
	struct hgc_tir_type ty = hgc_lower_type(b->dtype[i]);
	int64_t dims[HGC_TMPL_MAX_PHYS];
	struct hgc_tir_func *init;
	struct hgc_lower_ctx icx;
	int j;

	for (j = 0; j < l->nphys; j++) {
		dims[j] = l->phys[j].extent;
		if (dims[j] < 1)
			return hgc_error(d, NULL, "template %s: dim %d of the layout of %s is %lld",
					 b->t->name, j, b->t->operand_names[i], (long long)dims[j]);
	}
	if (i < b->t->ninputs && in_place(b, bind, i, in[i])) {
		b->buf[i] = in[i]->tensor;
		return 0;
	}
	if ((init = pack_once(b, bind, i, in))) {
		b->buf[i] = hgc_tir_module_add_const(b->m, b->t->operand_names[i], ty, l->nphys, dims,
						     NULL);
		icx = *b->cx;
		icx.f = init;
		icx.in_parallel = false;
		return pack_input(b, &icx, hgc_tir_block(b->m, init->body), bind, i, in, d);
	}
	b->buf[i] = hgc_tir_tensor_newc(b->m, b->t->operand_names[i], ty, HGC_TIR_LOCAL, l->nphys,
					dims);
	hgc_tir_def_tensor(b->m, b->block, b->buf[i]);
	if (i == b->t->ninputs)
		return 0;
	return pack_input(b, b->cx, b->block, bind, i, in, d);
}

/* The canonical index of dim d at the physical indices p (lets): the sum of
   what each physical dim of d contributes. */
static struct hgc_tir_expr *canonical(struct hgc_tmpl_build *b, const struct hgc_tmpl_layout *l,
				      int d, struct hgc_tir_var *const *p)
{
	struct hgc_tir_expr *x = NULL, *t;
	int j;

	for (j = 0; j < l->nphys; j++) {
		if (l->phys[j].dim != d)
			continue;
		t = lw_v(b->cx, p[j]);
		if (l->phys[j].kind == HGC_TMPL_OUTER)
			t = hgc_tmpl_bin(b, HGC_TIR_MUL, t, hgc_tmpl_k(b, l->phys[j].block));
		else if (l->phys[j].kind == HGC_TMPL_INNER)
			t = hgc_tmpl_bin(b, HGC_TIR_MUL, t,
					 hgc_tmpl_k(b, l->phys[j].block / l->phys[j].extent));
		else if (l->phys[j].kind == HGC_TMPL_PAD)
			t = hgc_tmpl_bin(b, HGC_TIR_SUB, t, hgc_tmpl_k(b, l->phys[j].before));
		x = x ? hgc_tmpl_bin(b, HGC_TIR_ADD, x, t) : t;
	}
	return x ? x : hgc_tmpl_k(b, 0);
}

/* Whether canonical dim d (of size n) of a layout reaches beyond the
   operand (padding): 0 never, 1 past its end, 2 before its start too.  A
   blocked dim whose blocks divide it evenly has no padding. */
static int padded(const struct hgc_tmpl_layout *l, int d, int64_t n)
{
	int64_t lo = 0, hi = 0, mult;
	int j;

	for (j = 0; j < l->nphys; j++) {
		if (l->phys[j].dim != d)
			continue;
		mult = 1;
		if (l->phys[j].kind == HGC_TMPL_OUTER)
			mult = l->phys[j].block;
		else if (l->phys[j].kind == HGC_TMPL_INNER)
			mult = l->phys[j].block / l->phys[j].extent;
		else if (l->phys[j].kind == HGC_TMPL_PAD)
			lo -= l->phys[j].before;
		hi += (l->phys[j].extent - 1) * mult;
	}
	hi += lo;
	return lo < 0 ? 2 : hi >= n ? 1 : 0;
}

/* if (every padded canonical index, or with all every one, is inside the
   operand): the guarded block.  A dim whose let c[d] is NULL is bounded
   some other way (clamped_loop). */
static struct hgc_tir_stmt *guard(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block,
				  const struct hgc_tmpl_layout *l, int rank, const int64_t *dims,
				  struct hgc_tir_var *const *c, bool all, struct hgc_tir_stmt **els)
{
	struct hgc_tir_stmt *s;
	struct hgc_tir_expr *cond = NULL, *t;
	int d, p;

	for (d = 0; d < rank; d++) {
		if (!c[d] || (!(p = padded(l, d, dims[d])) && !all))
			continue;
		t = hgc_tmpl_bin(b, HGC_TIR_LT, lw_v(b->cx, c[d]), hgc_tmpl_k(b, dims[d]));
		if (p == 2)
			t = hgc_tmpl_bin(b, HGC_TIR_AND, hgc_tmpl_bin(b, HGC_TIR_GE, lw_v(b->cx, c[d]),
								      hgc_tmpl_k(b, 0)), t);
		cond = cond ? hgc_tmpl_bin(b, HGC_TIR_AND, cond, t) : t;
	}
	if (els)
		*els = NULL;
	if (!cond || cond->kind == HGC_TIR_E_INT)
		return block;
	s = hgc_tir_if(b->m, block, cond, els != NULL);
	if (els)
		*els = s->u.cond.els;
	return hgc_tir_body(s);
}

/* Graph indices of the output (or the bias) from canonical lets c. */
static void graph_indices(struct hgc_lower_ctx *cx, const struct hgc_tmpl_map *mp,
			  struct hgc_tir_var *const *c, struct hgc_tir_expr **gi);

/* How many outer physical dims of layout l the padding guard needs: up to
   the last one that belongs to a padded canonical dim (0: no padding). */
static int guard_depth(const struct hgc_tmpl_layout *l, const int64_t *dims)
{
	int j, n = 0;

	for (j = 0; j < l->nphys; j++)
		if (padded(l, l->phys[j].dim, dims[l->phys[j].dim]))
			n = j + 1;
	return n;
}

/* Serial loops over physical dims from..to-1 of l inside block; their
   variables (a constant 0 for extent 1) go into p. Returns the innermost block. */
static struct hgc_tir_stmt *inner_loops(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
					const struct hgc_tmpl_layout *l, int from, int to,
					struct hgc_tir_var **p)
{
	int j;

	for (j = from; j < to; j++) {
		if (l->phys[j].extent == 1) {
			p[j] = lw_hold(cx, block, "p", lw_i(cx, 0));
			continue;
		}
		p[j] = hgc_tir_var_new(cx->m, "q", hgc_tir_ty(HGC_TIR_INDEX));
		block = hgc_tir_body(hgc_tir_for(cx->m, block, p[j], lw_i(cx, 0),
						 lw_i(cx, l->phys[j].extent), NULL));
	}
	return block;
}

/*
 * The innermost physical dim of l when its padding check can be its loop's
 * bound instead of a branch in the loop's body, which keeps the copy
 * vectorizable (an `if` around each element of a byte copy is not): a dim of
 * unit step in its canonical dim, which is padded past its end only; else -1.
 */
static int clamp_dim(const struct hgc_tmpl_layout *l, const int64_t *dims)
{
	int last = l->nphys - 1, d;
	const struct hgc_tmpl_ldim *x;

	if (last < 1)
		return -1;
	x = &l->phys[last];
	d = x->dim;
	if (x->extent == 1 || padded(l, d, dims[d]) != 1)
		return -1;
	if (x->kind == HGC_TMPL_WHOLE || (x->kind == HGC_TMPL_INNER && x->block == x->extent))
		return last;
	return -1;
}

/* for (p[j] in [0, max(0, min(extent, n - the canonical index at p[j] = 0)))):
   the innermost loop of clamp_dim, bounded by the operand's size n. */
static struct hgc_tir_stmt *clamped_loop(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block,
					 const struct hgc_tmpl_layout *l, int j, int64_t n,
					 struct hgc_tir_var **p)
{
	struct hgc_lower_ctx *cx = b->cx;
	struct hgc_tir_expr *hi;

	p[j] = lw_hold(cx, block, "p", lw_i(cx, 0));
	hi = hgc_tmpl_bin(b, HGC_TIR_SUB, hgc_tmpl_k(b, n), canonical(b, l, l->phys[j].dim, p));
	hi = hgc_tmpl_bin(b, HGC_TIR_MIN, hgc_tmpl_k(b, l->phys[j].extent), hi);
	hi = hgc_tmpl_bin(b, HGC_TIR_MAX, hgc_tmpl_k(b, 0), hi);
	p[j] = hgc_tir_var_new(cx->m, "q", hgc_tir_ty(HGC_TIR_INDEX));
	return hgc_tir_body(hgc_tir_for(cx->m, block, p[j], lw_i(cx, 0), hi, NULL));
}

/*
 * Pack input i by walking its layout's physical dims (constant extents):
 * each element's canonical indices are sums of products of the loop
 * variables, with no division or modulo, and the innermost loop runs over
 * consecutive elements of the buffer (and, for a row-major graph tensor,
 * of the source), so the backend can vectorize the copy.  Elements in the
 * padding are skipped: they were zeroed first.  The padding check sits right
 * inside the last loop it depends on, so the loops within it hold no branch;
 * when that is the innermost loop, its bound does the check (clamp_dim).
 *
 * A padded buffer is zeroed block by block: each iteration of the outer
 * loops (the parallel ones among them) zeroes the contiguous block it
 * copies into, so the zeros are written by every thread, into lines the
 * copy finds in cache.  One serial fill of the whole buffer before the
 * parallel copy cost 2.8% of a 3x3 convolution at one thread (3.3 MB
 * written twice) and ran on one thread at two.  Where the copy under the
 * guard writes the whole block (no padding inside it), the block is zeroed
 * only when the guard fails (the else branch): a 3x3 convolution's input
 * pixels, 64 channels each, were otherwise written twice, zeros then data
 * (res2a_branch2b at batch 4, one thread, four rounds alternated: 4.195-4.207
 * -> 4.185-4.195 ms).  Else the block is zeroed before the guard; a guard on
 * the innermost dim would leave blocks of one element: the whole buffer is
 * filled first then.
 *
 * The packed k values of an int8 or bf16 column (the innermost PACK dim, 4
 * or 2 of them from as many rows of the source) are written by one
 * statement each inside the loop over the columns, not by a loop of their
 * own: LLVM vectorized that loop of 4 as a gather (4 byte loads and
 * pinsrb per 4 bytes), where the unrolled form is an interleaved store
 * along the columns (unpacks of whole rows).  On the Xeon, one thread,
 * `hgc run --fastest` alternated, a batched u8 x s8 MatMul with variable B
 * (1536 x 128x128x64) 8.2-9.3 -> 4.0-4.9 ms, the packing from 48% of the
 * compiled code's time to 16%; bf16 512 x 128x128x64 2.93-3.01 -> 2.34-
 * 2.36 ms.  Constant weights pack so too, once, in the init function.
 */
static int pack_phys(struct hgc_tmpl_build *b, struct hgc_lower_ctx *cx,
		     struct hgc_tir_stmt *block, const struct hgc_tmpl_bind *bind, int i,
		     struct hgc_lower_view *const *in, bool has_pad)
{
	const struct hgc_tmpl_layout *l = &b->layout[i];
	struct hgc_tir_var *p[HGC_TMPL_MAX_PHYS], *c[HGC_MAX_DIMS] = {NULL};
	struct hgc_tir_expr *idx[HGC_TMPL_MAX_PHYS], *gi[HGC_MAX_DIMS];
	int64_t lens[HGC_TMPL_MAX_PHYS];
	int rank = b->t->operand_rank[i], j, depth = guard_depth(l, bind->dims[i]);
	int clamp = clamp_dim(l, bind->dims[i]), clamp_d = clamp >= 0 ? l->phys[clamp].dim : -1;
	int last = l->nphys - 1;
	struct hgc_lower_ctx *saved = b->cx;
	struct hgc_tir_stmt *body, *els = NULL;
	struct lw_nest nest;
	bool per_block, unroll;
	int64_t v;

	for (j = 0; j < l->nphys; j++)
		lens[j] = l->phys[j].extent;
	/* the k values of a packed int8 or bf16 row (no padding among them), one
	   statement each */
	unroll = clamp < 0 && depth < l->nphys && last > 0 &&
		 l->phys[last].kind == HGC_TMPL_PACK && l->phys[last].extent > 1 &&
		 l->phys[last].extent <= 4;
	if (!depth)
		depth = unroll ? last : l->nphys;
	if (clamp >= 0)
		depth = l->nphys - 1;
	/* zeros block by block; where the copy under the guard writes the whole
	   block (no clamped innermost dim), only in the guard's else branch */
	per_block = has_pad && depth < l->nphys;
	if (has_pad && depth == l->nphys)
		zero_fill(cx, block, b->buf[i]);
	lw_loops(cx, block, depth, lens, depth, lw_prod(l->nphys, lens), &nest);
	body = nest.body;
	b->cx = cx;
	for (j = 0; j < depth; j++)
		p[j] = nest.var[j] ? nest.var[j] : lw_hold(cx, body, "p", lw_i(cx, 0));
	if (per_block && clamp >= 0)
		zero_fill_block(cx, body, b->buf[i], depth, p);
	for (j = 0; j < rank; j++)
		if (j != clamp_d && padded(l, j, bind->dims[i][j]))
			c[j] = lw_hold(cx, body, "c", canonical(b, l, j, p));
	body = guard(b, body, l, rank, bind->dims[i], c, false,
		     per_block && clamp < 0 ? &els : NULL);
	if (els)
		zero_fill_block(cx, els, b->buf[i], depth, p);
	if (clamp >= 0)
		body = clamped_loop(b, body, l, clamp, bind->dims[i][clamp_d], p);
	else
		body = inner_loops(cx, body, l, depth, unroll ? last : l->nphys, p);
	for (v = 0; v < (unroll ? l->phys[last].extent : 1); v++) {
		if (unroll)
			p[last] = lw_hold(cx, body, "q", lw_i(cx, v));
		if (clamp >= 0)
			c[clamp_d] = lw_hold(cx, body, "c", canonical(b, l, clamp_d, p));
		for (j = 0; j < rank; j++)
			if (!padded(l, j, bind->dims[i][j]))
				c[j] = lw_hold(cx, body, "c", canonical(b, l, j, p));
		graph_indices(cx, &bind->map[i], c, gi);
		for (j = 0; j < l->nphys; j++)
			idx[j] = lw_v(cx, p[j]);
		hgc_tir_store(cx->m, body, b->buf[i], l->nphys, idx,
			      hgc_lower_view_load(cx, in[i], gi));
	}
	b->cx = saved;
	return 0;
}

/* Graph indices of the output (or the bias) from canonical lets c. */
static void graph_indices(struct hgc_lower_ctx *cx, const struct hgc_tmpl_map *mp,
			  struct hgc_tir_var *const *c, struct hgc_tir_expr **gi)
{
	struct hgc_tir_expr *ci[HGC_MAX_DIMS];
	int d, k;

	for (d = 0; d < mp->n; d++) {
		for (k = 0; k < HGC_MAX_DIMS; k++)
			ci[k] = c[k] ? lw_v(cx, c[k]) : lw_i(cx, 0);
		gi[d] = mapped(cx, mp, d, ci);
	}
}

/* The result's value at canonical lets c, bias added, stored into the output view. */
static void store_out(struct hgc_tmpl_build *b, const struct hgc_tmpl_bind *bind,
		      struct hgc_tir_stmt *body, struct hgc_tir_expr *acc,
		      struct hgc_lower_view *const *in, const struct hgc_lower_view *out,
		      struct hgc_tir_var *const *c)
{
	struct hgc_lower_ctx *cx = b->cx;
	struct hgc_tir_expr *gi[HGC_MAX_DIMS], *v;
	bool bias = bind->op->nin > 2;
	enum lw_kind kind = bind->acc == HGC_DT_S32 && (!bias || in[2]->dtype == HGC_DT_S32)
				    ? LW_INT : LW_F32;

	v = lw_cast(cx, kind == LW_INT ? HGC_TIR_INDEX : HGC_TIR_F32, acc);
	if (kind == LW_F32 && bind->acc == HGC_DT_F32)
		v = acc;
	if (bias) {
		graph_indices(cx, &bind->bias_map, c, gi);
		v = lw_bin(cx, HGC_TIR_ADD, v, lw_load(cx, in[2], gi, kind));
	}
	graph_indices(cx, &bind->map[b->t->ninputs], c, gi);
	lw_store(cx, out, body, gi, v, kind);
}

/* Write the result back over slice s of its buffer (loops over its ranges);
   every dim guarded when the slices overhang the buffer (overhang). */
static void writeback(struct hgc_tmpl_build *b, const struct hgc_tmpl_bind *bind,
		      struct hgc_tir_stmt *block, const struct hgc_tmpl_slice *s, bool in_par,
		      bool overhang, struct hgc_lower_view *const *in,
		      const struct hgc_lower_view *out)
{
	struct hgc_lower_ctx *cx = b->cx;
	const struct hgc_tmpl_layout *l = &b->layout[b->t->ninputs];
	int r = b->t->ninputs, rank = b->t->operand_rank[r], j, k = 0, n = 0;
	struct hgc_tir_var *p[HGC_TMPL_MAX_PHYS], *c[HGC_MAX_DIMS] = {NULL};
	struct hgc_tir_expr *x, *idx[HGC_TMPL_MAX_PHYS];
	int64_t lens[HGC_TMPL_MAX_PHYS];
	bool saved = cx->in_parallel;
	struct hgc_tir_stmt *body;
	struct lw_nest nest;

	for (j = 0; j < s->n; j++)
		if (s->range[j])
			lens[n++] = s->len[j];
	cx->in_parallel |= in_par;
	lw_loops(cx, block, n, lens, n, lw_prod(n, lens), &nest);
	cx->in_parallel = saved;
	body = nest.body;
	for (j = 0; j < s->n; j++) {
		x = hgc_tir_expr_copy(cx->m, s->start[j]);
		if (s->range[j])
			x = hgc_tmpl_bin(b, HGC_TIR_ADD, x,
					 hgc_tmpl_bin(b, HGC_TIR_MUL, lw_v(cx, nest.var[k++]),
						      hgc_tmpl_k(b, s->step[j])));
		p[j] = lw_hold(cx, body, "p", x);
	}
	for (j = 0; j < rank; j++)
		c[j] = lw_hold(cx, body, "c", canonical(b, l, j, p));
	body = guard(b, body, l, rank, bind->dims[r], c, overhang, NULL);
	for (j = 0; j < s->n; j++)
		idx[j] = lw_v(cx, p[j]);
	x = hgc_tir_load(cx->m, b->buf[r], s->n, idx);
	store_out(b, bind, body, x, in, out, c);
}

/* The post-op anchor on the result reached by the build with the smallest
   working set (the first among equals), or -1. */
static int pick_anchor(struct hgc_tmpl_build *b)
{
	const struct hgc_tmpl_anchor *a;
	struct hgc_tmpl_env e = b->env;
	int64_t ws, best = 0;
	int i, pick = -1;

	for (i = 0; i < b->t->nanchors; i++) {
		a = &b->t->anchors[i];
		if (!a->post || a->operand != b->t->ninputs || !b->points[i].block)
			continue;
		ws = b->t->cost(&e, i, HGC_TMPL_COST_WORKING_SET);
		if (pick < 0 || ws < best)
			pick = i, best = ws;
	}
	return pick;
}

/* Whether anchor i's slices do not tile the result's buffer exactly (working
   set x calls differs from its size): a thread's share of blocks may then
   run past the last block (NPN above the blocks or not dividing them), and
   the write-back there must skip what lies outside the result. */
static bool overhangs(struct hgc_tmpl_build *b, int i)
{
	const struct hgc_tmpl_layout *l = &b->layout[b->t->ninputs];
	struct hgc_tmpl_env e = b->env;
	int64_t size = 1;
	int j;

	for (j = 0; j < l->nphys; j++)
		size *= l->phys[j].extent;
	return b->t->cost(&e, i, HGC_TMPL_COST_WORKING_SET) *
		       b->t->cost(&e, i, HGC_TMPL_COST_CALLS) != size;
}

/* Remove the empty blocks of anchors nothing was inserted at. */
static void drop_unused(struct hgc_tmpl_point *points, int n)
{
	struct hgc_tmpl_point *p;
	struct hgc_tir_stmt *par;
	int i, j;

	for (i = 0; i < n; i++) {
		p = &points[i];
		if (!p->block || p->block->u.block.n)
			continue;
		par = p->parent;
		for (j = 0; j < par->u.block.n && par->u.block.stmts[j] != p->block; j++)
			;
		if (j == par->u.block.n)
			continue;
		memmove(par->u.block.stmts + j, par->u.block.stmts + j + 1,
			(size_t)(par->u.block.n - j - 1) * sizeof(*par->u.block.stmts));
		par->u.block.n--;
	}
}

/* Set up the build state: layouts and element types. */
static void build_init(struct hgc_tmpl_build *b, struct hgc_lower_ctx *cx,
		       struct hgc_tir_stmt *block, const struct hgc_tmpl_bind *bind,
		       const struct hgc_tmpl_env *chosen, struct hgc_diag *d)
{
	int i;

	memset(b, 0, sizeof(*b));
	b->t = bind->t;
	b->cx = cx;
	b->m = cx->m;
	b->env = *chosen;
	b->env.bad = false;
	b->acc = bind->acc;
	b->d = d;
	b->outer_parallel = cx->in_parallel;
	b->block = hgc_tir_block(cx->m, block);
	for (i = 0; i <= b->t->ninputs; i++) {
		b->dtype[i] = bind->dtype[i];
		b->t->layout(&b->env, i, &b->layout[i]);
	}
	b->points = hgc_xcalloc((size_t)b->t->nanchors + 1, sizeof(*b->points));
}

/* Instantiate: buffers, packing, the nest, the write-back. */
int hgc_tmpl_instantiate(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			 const struct hgc_tmpl_bind *bind, const struct hgc_tmpl_env *chosen,
			 struct hgc_lower_view *const *in, const struct hgc_lower_view *out,
			 struct hgc_tmpl_inst *inst, struct hgc_diag *d)
{
	struct hgc_tmpl_build b;
	struct hgc_tmpl_slice all;
	int i, rc = 0, r = bind->t->ninputs;
	bool direct = false;

	build_init(&b, cx, block, bind, chosen, d);
	memset(inst, 0, sizeof(*inst));
	for (i = 0; i < r && !rc; i++)
		rc = operand_buffer(&b, bind, i, in, d);
	if (!rc && (direct = in_place(&b, bind, r, out)))
		b.buf[r] = out->tensor;
	else if (!rc)
		rc = operand_buffer(&b, bind, r, in, d);
	if (!rc && (b.env.bad || b.nerr))
		rc = hgc_error(d, NULL, "template %s: a layout divides by zero", b.t->name);
	if (!rc)
		rc = b.t->build(&b);
	cx->in_parallel = b.outer_parallel;
	inst->writeback = rc ? -1 : pick_anchor(&b);
	if (rc || (direct && bind->op->nin < 3)) {
		/* the nest wrote the output itself: nothing to copy */
	} else if (inst->writeback >= 0) {
		struct hgc_tmpl_point *p = &b.points[inst->writeback];

		writeback(&b, bind, p->block, &p->slice, p->in_parallel,
			  overhangs(&b, inst->writeback), in, out);
	} else {
		hgc_tmpl_slice(&b, &all, b.buf[r], r, b.buf[r]->ndims, (struct hgc_loc){NULL, 0, 0});
		for (i = 0; i < all.n; i++)
			hgc_tmpl_all(&b, &all, i);
		writeback(&b, bind, b.block, &all, false, false, in, out);
	}
	inst->env = b.env;
	inst->points = b.points;
	inst->npoints = b.t->nanchors;
	hgc_vec_release(&b.ranges);
	return rc ? -1 : 0;
}

/* Free what an instance keeps, once the anchor blocks nothing was put in
   (by the write-back or a fusion) are removed from the nest. */
void hgc_tmpl_inst_release(struct hgc_tmpl_inst *inst)
{
	if (inst->points)
		drop_unused(inst->points, inst->npoints);
	free(inst->points);
	inst->points = NULL;
}
