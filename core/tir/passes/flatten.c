/*
 * flatten.c: index flattening.  Every local and constant tensor with
 * constant dims and more (or fewer) than one dim becomes one-dimensional:
 * its loads, stores and slice addresses take one row-major linear index
 * (constant parts folded), and a slice's extent becomes the span of
 * elements it covers.  The backends linearize the same way, so the code
 * they make does not change; what changes is that tensors of different
 * shapes become interchangeable, which buffer_reuse needs to put several
 * temporaries in one buffer.  Parameters keep their shapes: they are the
 * caller's view of its buffers.
 */
#include "passes_int.h"

#include <stdlib.h>

/* The pass's state: per tensor id, the row-major strides of a tensor to flatten. */
struct flat {
	struct hgc_tir_module *m;
	int64_t **strides;	/* NULL: leave the tensor alone */
	struct hgc_tir_tensor **tens;	/* the tensor of each id seen */
	int n;
	bool (*want)(void *ctx, const struct hgc_tir_tensor *t);	/* NULL: all */
	void *ctx;
};

/* Strides of t when it is to be flattened, else NULL. */
static int64_t *strides_of(struct hgc_tir_tensor *t)
{
	int64_t *s, n = 1;

	if (t->ndims == 1 || t->is_param || t->scope == HGC_TIR_GLOBAL)
		return NULL;
	for (int i = 0; i < t->ndims; i++)
		if (hgc_tir_tensor_dim(t, i) < 0)
			return NULL;
	s = hgc_xcalloc((size_t)t->ndims + 1, sizeof(*s));
	for (int i = t->ndims - 1; i >= 0; i--) {
		s[i] = n;
		n *= hgc_tir_tensor_dim(t, i);
	}
	return s;
}

/* Collect the local tensors to flatten. */
static bool find_pre(struct hgc_tir_visitor *v, struct hgc_tir_stmt *s)
{
	struct flat *fl = v->ctx;

	if (s->kind == HGC_TIR_S_TENSOR && !fl->strides[s->u.tensor->id] &&
	    (!fl->want || fl->want(fl->ctx, s->u.tensor))) {
		fl->strides[s->u.tensor->id] = strides_of(s->u.tensor);
		fl->tens[s->u.tensor->id] = s->u.tensor;
	}
	return true;
}

/* sum idx[i] * strides[i], constant parts folded into one term. */
static struct hgc_tir_expr *linear(struct hgc_tir_module *m, struct hgc_tir_expr **idx, int n,
				   const int64_t *strides)
{
	struct hgc_tir_expr *sum = NULL, *t;
	int64_t c = 0, k;

	for (int i = 0; i < n; i++) {
		if (hgc_tir_const_int(idx[i], &k)) {
			c += k * strides[i];
			continue;
		}
		t = strides[i] == 1 ? idx[i] : hgc_tir_mul(m, idx[i], hgc_tir_idx(m, strides[i]));
		sum = sum ? hgc_tir_add(m, sum, t) : t;
	}
	if (!sum)
		return hgc_tir_idx(m, c);
	return c ? hgc_tir_add(m, sum, hgc_tir_idx(m, c)) : sum;
}

/* The linear index of an access as a one-element array. */
static struct hgc_tir_expr **linear_idx(struct flat *fl, struct hgc_tir_tensor *t,
					struct hgc_tir_expr **idx, int n)
{
	struct hgc_tir_expr **r = hgc_arena_calloc(&fl->m->arena, 1, sizeof(*r));

	r[0] = linear(fl->m, idx, n, fl->strides[t->id]);
	return r;
}

/* Stores. */
static bool rewrite_pre(struct hgc_tir_visitor *v, struct hgc_tir_stmt *s)
{
	struct flat *fl = v->ctx;
	struct hgc_tir_tensor *t;

	if (s->kind != HGC_TIR_S_STORE || !fl->strides[(t = s->u.store.tensor)->id])
		return true;
	s->u.store.idx = linear_idx(fl, t, s->u.store.idx, s->u.store.n);
	s->u.store.n = 1;
	return true;
}

/* Loads and slice addresses (a slice's extent: the span it covers). */
static void rewrite_expr(struct hgc_tir_visitor *v, struct hgc_tir_expr *e)
{
	struct flat *fl = v->ctx;
	const int64_t *st;
	int64_t *ext, span = 1;

	if ((e->kind != HGC_TIR_E_LOAD && e->kind != HGC_TIR_E_ADDR) ||
	    !(st = fl->strides[e->u.tensor->id]))
		return;
	if (e->kind == HGC_TIR_E_ADDR) {
		for (int i = 0; i < e->nops; i++)
			span += (e->extents[i] - 1) * st[i];
		ext = hgc_arena_calloc(&fl->m->arena, 1, sizeof(*ext));
		ext[0] = span;
		e->extents = ext;
	}
	e->ops = linear_idx(fl, e->u.tensor, e->ops, e->nops);
	e->nops = 1;
}

/* The tensor itself: one dim, its element count. */
static void flatten_tensor(struct hgc_tir_module *m, struct hgc_tir_tensor *t)
{
	int64_t n = hgc_tir_tensor_size(t);

	t->dims = hgc_arena_calloc(&m->arena, 1, sizeof(*t->dims));
	t->dims[0] = hgc_tir_idx(m, n);
	t->ndims = 1;
}

/* Flatten the local and constant tensors want accepts (NULL: all that can be). */
int hgc_tp_flatten(struct hgc_tir_module *m, bool (*want)(void *, const struct hgc_tir_tensor *),
		   void *ctx)
{
	size_t n = (size_t)m->ntensors + 1;
	struct flat fl = { m, hgc_xcalloc(n, sizeof(int64_t *)),
			   hgc_xcalloc(n, sizeof(struct hgc_tir_tensor *)), m->ntensors, want, ctx };
	struct hgc_tir_visitor find = { .stmt_pre = find_pre, .ctx = &fl };
	struct hgc_tir_visitor rw = { .stmt_pre = rewrite_pre, .expr = rewrite_expr, .ctx = &fl };
	int changes = 0;

	for (size_t i = 0; i < m->consts.len; i++) {
		struct hgc_tir_tensor *t = HGC_TIR_CONST_AT(m, i);

		if (!want || want(ctx, t)) {
			fl.strides[t->id] = strides_of(t);
			fl.tens[t->id] = t;
		}
	}
	for (size_t i = 0; i < m->funcs.len; i++)
		hgc_tir_walk_stmt(HGC_TIR_FUNC(m, i)->body, &find);
	for (size_t i = 0; i < m->funcs.len; i++)
		hgc_tir_walk_stmt(HGC_TIR_FUNC(m, i)->body, &rw);
	for (int i = 0; i < fl.n; i++) {
		if (fl.strides[i]) {
			flatten_tensor(m, fl.tens[i]);
			changes++;
		}
		free(fl.strides[i]);
	}
	free(fl.strides);
	free(fl.tens);
	return changes;
}

/* Flatten every local and constant tensor that can be. */
int hgc_tir_pass_index_flatten(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			       struct hgc_diag *d)
{
	(void)p;
	(void)d;
	return hgc_tp_flatten(m, NULL, NULL);
}
