/*
 * view.c: views of tensors (plain, scalar, blocked, custom), slices of
 * views, and element loads and stores through them.
 */
#include "lower_int.h"

#include <string.h>

/* The TIR element type of a graph dtype. */
struct hgc_tir_type hgc_lower_type(enum hgc_dtype dt)
{
	switch (dt) {
	case HGC_DT_F32: return hgc_tir_ty(HGC_TIR_F32);
	case HGC_DT_BF16: return hgc_tir_ty(HGC_TIR_BF16);
	case HGC_DT_S32: return hgc_tir_ty(HGC_TIR_S32);
	case HGC_DT_S8: return hgc_tir_ty(HGC_TIR_S8);
	case HGC_DT_U8: return hgc_tir_ty(HGC_TIR_U8);
	case HGC_DT_BOOL: return hgc_tir_ty(HGC_TIR_BOOL);
	default: hgc_bug("lower: no TIR type for dtype %d", (int)dt);
	}
}

/* The graph dtype of a TIR element type (UNDEF for index, void and pointers). */
enum hgc_dtype hgc_lower_dtype(struct hgc_tir_type t)
{
	if (t.ptr || t.lanes != 1)
		return HGC_DT_UNDEF;
	switch (t.kind) {
	case HGC_TIR_F32: return HGC_DT_F32;
	case HGC_TIR_BF16: return HGC_DT_BF16;
	case HGC_TIR_S32: return HGC_DT_S32;
	case HGC_TIR_S8: return HGC_DT_S8;
	case HGC_TIR_U8: return HGC_DT_U8;
	case HGC_TIR_BOOL: return HGC_DT_BOOL;
	default: return HGC_DT_UNDEF;
	}
}

/* An empty view of t with t's element type. */
static struct hgc_lower_view view_of(struct hgc_tir_tensor *t)
{
	struct hgc_lower_view v;

	memset(&v, 0, sizeof(v));
	v.tensor = t;
	v.dtype = hgc_lower_dtype(t->elem);
	if (v.dtype == HGC_DT_UNDEF)
		hgc_bug("lower: a view of tensor '%s' with no graph element type", t->name);
	return v;
}

/* The whole tensor t, its dims indexed by the logical dims in order. */
struct hgc_lower_view hgc_lower_view_plain(struct hgc_tir_tensor *t)
{
	struct hgc_lower_view v = view_of(t);
	int i;

	if (t->ndims > HGC_MAX_DIMS)
		hgc_bug("lower: a view of %d-D tensor '%s'", t->ndims, t->name);
	v.ndims = t->ndims;
	for (i = 0; i < t->ndims; i++) {
		v.dims[i] = hgc_tir_tensor_dim(t, i);
		if (v.dims[i] < 0)
			hgc_bug("lower: tensor '%s' has a dynamic dim %d", t->name, i);
		v.axis[i] = (int8_t)i;
	}
	return v;
}

/* Element 0 of a one-element tensor as a rank-0 view. */
struct hgc_lower_view hgc_lower_view_scalar(struct hgc_tir_tensor *t)
{
	struct hgc_lower_view v = view_of(t);
	int i;

	if (hgc_tir_tensor_size(t) != 1)
		hgc_bug("lower: scalar view of tensor '%s' of more than one element", t->name);
	for (i = 0; i < t->ndims; i++)
		v.axis[i] = -1;
	return v;
}

/* A view through accessor callbacks. */
struct hgc_lower_view hgc_lower_view_custom(struct hgc_tir_tensor *t, enum hgc_dtype dt,
					    int ndims, const int64_t *dims,
					    hgc_lower_load_fn load, hgc_lower_store_fn store,
					    void *ctx)
{
	struct hgc_lower_view v;

	if (ndims < 0 || ndims > HGC_MAX_DIMS || !load || !store)
		hgc_bug("lower: bad custom view (%d dims)", ndims);
	memset(&v, 0, sizeof(v));
	v.tensor = t;
	v.dtype = dt;
	v.ndims = ndims;
	memcpy(v.dims, dims, (size_t)ndims * sizeof(*dims));
	v.load = load;
	v.store = store;
	v.ctx = ctx;
	return v;
}

/*
 * The physical index of dim j of a blocked layout for logical index x (a
 * global logical index): the occurrences of a logical dim split it outer to
 * inner, so occurrence j takes (x / product of the later blocks) modulo its
 * block (no modulo for the outer part).
 */
static struct hgc_tir_expr *phys_index(struct hgc_lower_ctx *cx, const struct hgc_layout *l,
				       int j, struct hgc_tir_expr *x)
{
	int64_t inner = 1;
	bool outer = true;
	int k;

	for (k = 0; k < l->nphys; k++) {
		if (l->phys[k].dim != l->phys[j].dim)
			continue;
		if (k < j)
			outer = false;
		if (k > j)
			inner *= l->phys[k].block;
	}
	if (inner > 1)
		x = lw_bin(cx, HGC_TIR_DIV, x, lw_i(cx, inner));
	if (!outer)
		x = lw_bin(cx, HGC_TIR_MOD, x, lw_i(cx, l->phys[j].block));
	return x;
}

/* Physical indices of a blocked tensor for the logical indices idx (consumed). */
static void blocked_indices(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
			    struct hgc_tir_expr **idx, struct hgc_tir_expr **phys)
{
	const struct hgc_layout *l = v->layout;
	bool used[HGC_MAX_DIMS] = { false };
	int j, dim;

	for (j = 0; j < l->nphys; j++) {
		dim = l->phys[j].dim;
		phys[j] = phys_index(cx, l, j, used[dim] ? hgc_tir_expr_copy(cx->m, idx[dim])
							 : idx[dim]);
		used[dim] = true;
	}
}

/* Load through a graph blocked layout. */
static struct hgc_tir_expr *blocked_load(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
					 struct hgc_tir_expr **idx)
{
	struct hgc_tir_expr *phys[2 * HGC_MAX_DIMS];

	blocked_indices(cx, v, idx, phys);
	return hgc_tir_load(cx->m, v->tensor, v->layout->nphys, phys);
}

/* Store through a graph blocked layout. */
static struct hgc_tir_stmt *blocked_store(struct hgc_lower_ctx *cx,
					  const struct hgc_lower_view *v,
					  struct hgc_tir_stmt *block, struct hgc_tir_expr **idx,
					  struct hgc_tir_expr *value)
{
	struct hgc_tir_expr *phys[2 * HGC_MAX_DIMS];

	blocked_indices(cx, v, idx, phys);
	return hgc_tir_store(cx->m, block, v->tensor, v->layout->nphys, phys, value);
}

/* The logical tensor ndims x dims kept in t under a blocked layout. */
struct hgc_lower_view hgc_lower_view_blocked(struct hgc_tir_tensor *t, int ndims,
					     const int64_t *dims, const struct hgc_layout *layout)
{
	struct hgc_lower_view v = hgc_lower_view_custom(t, hgc_lower_dtype(t->elem), ndims, dims,
							blocked_load, blocked_store, NULL);
	int j;

	if (layout->kind != HGC_LAYOUT_BLOCKED || layout->nphys != t->ndims)
		hgc_bug("lower: blocked view of '%s' with %d physical dims for a %d-D tensor",
			t->name, layout->nphys, t->ndims);
	for (j = 0; j < layout->nphys; j++)
		if (layout->phys[j].dim < 0 || layout->phys[j].dim >= ndims)
			hgc_bug("lower: blocked layout names dim %d of a %d-D tensor",
				layout->phys[j].dim, ndims);
	v.layout = layout;
	return v;
}

/* A slice of v: starts added, extents replaced. */
struct hgc_lower_view hgc_lower_view_slice(struct hgc_tir_module *m,
					   const struct hgc_lower_view *v,
					   struct hgc_tir_expr *const *starts,
					   const int64_t *extents)
{
	struct hgc_lower_view s = *v;
	struct hgc_tir_expr *st;
	int64_t c;
	int i;

	for (i = 0; i < v->ndims; i++) {
		if (extents[i] < 0 || extents[i] > v->dims[i])
			hgc_bug("lower: slice extent %lld of dim %d beyond %lld",
				(long long)extents[i], i, (long long)v->dims[i]);
		s.dims[i] = extents[i];
		if (!starts || !starts[i])
			continue;
		if (hgc_tir_const_int(starts[i], &c) && (c < 0 || c + extents[i] > v->dims[i]))
			hgc_bug("lower: slice [%lld, +%lld) of dim %d beyond %lld", (long long)c,
				(long long)extents[i], i, (long long)v->dims[i]);
		st = hgc_tir_expr_copy(m, starts[i]);
		s.start[i] = v->start[i] ? hgc_tir_add(m, hgc_tir_expr_copy(m, v->start[i]), st) : st;
	}
	return s;
}

/* start + idx for logical dim i (idx consumed). */
struct hgc_tir_expr *hgc_lower_view_global(struct hgc_lower_ctx *cx,
					   const struct hgc_lower_view *v, int i,
					   struct hgc_tir_expr *idx)
{
	if (!v->start[i])
		return idx;
	return hgc_tir_add(cx->m, hgc_tir_expr_copy(cx->m, v->start[i]), idx);
}

/* The tensor indices of a plain view for logical indices idx (consumed). */
static void plain_indices(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
			  struct hgc_tir_expr **idx, struct hgc_tir_expr **tidx)
{
	int j;

	for (j = 0; j < v->tensor->ndims; j++)
		tidx[j] = v->axis[j] >= 0 ? hgc_lower_view_global(cx, v, v->axis[j], idx[v->axis[j]])
					  : lw_i(cx, v->fixed[j]);
}

/* Load the element at idx. */
struct hgc_tir_expr *hgc_lower_view_load(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
					 struct hgc_tir_expr **idx)
{
	struct hgc_tir_expr *tidx[2 * HGC_MAX_DIMS];
	int i;

	if (v->load) {
		for (i = 0; i < v->ndims; i++)
			tidx[i] = hgc_lower_view_global(cx, v, i, idx[i]);
		return v->load(cx, v, tidx);
	}
	plain_indices(cx, v, idx, tidx);
	return hgc_tir_load(cx->m, v->tensor, v->tensor->ndims, tidx);
}

/* Store value at idx. */
struct hgc_tir_stmt *hgc_lower_view_store(struct hgc_lower_ctx *cx,
					  const struct hgc_lower_view *v,
					  struct hgc_tir_stmt *block, struct hgc_tir_expr **idx,
					  struct hgc_tir_expr *value)
{
	struct hgc_tir_expr *tidx[2 * HGC_MAX_DIMS];
	int i;

	if (v->store) {
		for (i = 0; i < v->ndims; i++)
			tidx[i] = hgc_lower_view_global(cx, v, i, idx[i]);
		return v->store(cx, v, block, tidx, value);
	}
	plain_indices(cx, v, idx, tidx);
	return hgc_tir_store(cx->m, block, v->tensor, v->tensor->ndims, tidx, value);
}
