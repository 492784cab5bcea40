/*
 * pbuild.c: the builder the passes make new ops with.  An op that fails its
 * check is a bug in the pass that built it: the builder records it in the
 * diagnostics and counts it, so the pass can fail cleanly instead of
 * aborting on user input.
 */
#include "passes_int.h"

#include <stdlib.h>
#include <string.h>

/* A builder for g; new ops have no location until hgc_pb_at. */
void hgc_pb_init(struct hgc_pb *b, struct hgc_graph *g, struct hgc_diag *d)
{
	memset(b, 0, sizeof(*b));
	b->g = g;
	b->d = d;
}

/* New ops say they come from op (messages and dumps point at the spec line). */
void hgc_pb_at(struct hgc_pb *b, const struct hgc_op *op)
{
	b->loc = op->loc;
}

/* An unfinished op reading in[0..nin). */
struct hgc_op *hgc_pb_begin(struct hgc_pb *b, enum hgc_op_kind kind, enum hgc_dtype out,
			    int nin, struct hgc_tensor *const *in)
{
	return hgc_graph_add_op(b->g, kind, nin, in, out, b->loc.file ? &b->loc : NULL);
}

/* Set attribute a on op (copied into the graph). */
static void set(struct hgc_pb *b, struct hgc_op *op, struct hgc_attr *a)
{
	hgc_op_set_attr(b->g, op, a);
}

/* An INT attribute. */
void hgc_pb_int(struct hgc_pb *b, struct hgc_op *op, const char *name, int64_t v)
{
	struct hgc_attr a = {.name = name, .type = HGC_ATTR_INT, .v.i = v};

	set(b, op, &a);
}

/* A BOOL attribute. */
void hgc_pb_bool(struct hgc_pb *b, struct hgc_op *op, const char *name, bool v)
{
	struct hgc_attr a = {.name = name, .type = HGC_ATTR_BOOL, .v.i = v};

	set(b, op, &a);
}

/* A FLOAT attribute. */
void hgc_pb_float(struct hgc_pb *b, struct hgc_op *op, const char *name, double v)
{
	struct hgc_attr a = {.name = name, .type = HGC_ATTR_FLOAT, .v.f = v};

	set(b, op, &a);
}

/* An INTS attribute. */
void hgc_pb_ints(struct hgc_pb *b, struct hgc_op *op, const char *name, int n,
		 const int64_t *v)
{
	struct hgc_attr a = {.name = name, .type = HGC_ATTR_INTS, .n = n, .v.ints = v};

	set(b, op, &a);
}

/* A STRING attribute. */
void hgc_pb_string(struct hgc_pb *b, struct hgc_op *op, const char *name, const char *v)
{
	struct hgc_attr a = {.name = name, .type = HGC_ATTR_STRING, .v.s = v};

	set(b, op, &a);
}

/* Copy every attribute set on from. */
void hgc_pb_copy_attrs(struct hgc_pb *b, struct hgc_op *op, const struct hgc_op *from)
{
	int i;

	for (i = 0; i < from->nattr; i++)
		set(b, op, &from->attrs[i]);
}

/* Check op and infer its output; a failure is counted and recorded. */
struct hgc_tensor *hgc_pb_end(struct hgc_pb *b, struct hgc_op *op)
{
	if (hgc_graph_finish_op(b->g, op, b->d)) {
		b->failed++;
		if (op->out[0]->dtype == HGC_DT_UNDEF)
			op->out[0]->dtype = HGC_DT_F32;
	}
	return op->out[0];
}

/* A finished unary op. */
struct hgc_tensor *hgc_pb_unary(struct hgc_pb *b, enum hgc_op_kind kind, enum hgc_dtype out,
				struct hgc_tensor *x)
{
	return hgc_pb_end(b, hgc_pb_begin(b, kind, out, 1, &x));
}

/* A finished binary op (numpy broadcast). */
struct hgc_tensor *hgc_pb_binary(struct hgc_pb *b, enum hgc_op_kind kind, enum hgc_dtype out,
				 struct hgc_tensor *x, struct hgc_tensor *y)
{
	struct hgc_tensor *in[2] = {x, y};

	return hgc_pb_end(b, hgc_pb_begin(b, kind, out, 2, in));
}

/* A reduction keeping the reduced dims as 1, begun (more attributes may follow). */
struct hgc_op *hgc_pb_reduce_begin(struct hgc_pb *b, enum hgc_op_kind kind, enum hgc_dtype out,
				   struct hgc_tensor *x, int naxes, const int64_t *axes)
{
	struct hgc_op *op = hgc_pb_begin(b, kind, out, 1, &x);

	hgc_pb_ints(b, op, "axes", naxes, axes);
	hgc_pb_bool(b, op, "keep_dims", true);
	return op;
}

/* The same, finished. */
struct hgc_tensor *hgc_pb_reduce(struct hgc_pb *b, enum hgc_op_kind kind, enum hgc_dtype out,
				 struct hgc_tensor *x, int naxes, const int64_t *axes)
{
	return hgc_pb_end(b, hgc_pb_reduce_begin(b, kind, out, x, naxes, axes));
}

/* TypeCast of x to dt (x itself when it already is dt). */
struct hgc_tensor *hgc_pb_cast(struct hgc_pb *b, struct hgc_tensor *x, enum hgc_dtype dt)
{
	if (x->dtype == dt)
		return x;
	return hgc_pb_unary(b, HGC_OP_TYPE_CAST, dt, x);
}

/* StaticReshape of x to dims (x itself when the shape is already that). */
struct hgc_tensor *hgc_pb_reshape(struct hgc_pb *b, struct hgc_tensor *x, int ndims,
				  const int64_t *dims)
{
	struct hgc_op *op;

	if (x->ndims == ndims && !memcmp(x->dims, dims, (size_t)ndims * sizeof(*dims)))
		return x;
	op = hgc_pb_begin(b, HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, &x);
	hgc_pb_ints(b, op, "shape", ndims, dims);
	hgc_pb_bool(b, op, "special_zero", false);
	return hgc_pb_end(b, op);
}

/* StaticTranspose of x by perm (x itself for the identity). */
struct hgc_tensor *hgc_pb_transpose(struct hgc_pb *b, struct hgc_tensor *x, const int *perm)
{
	int64_t order[HGC_MAX_DIMS];
	struct hgc_op *op;
	int i;

	if (hgc_pb_perm_identity(perm, x->ndims))
		return x;
	for (i = 0; i < x->ndims; i++)
		order[i] = perm[i];
	op = hgc_pb_begin(b, HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, &x);
	hgc_pb_ints(b, op, "order", x->ndims, order);
	return hgc_pb_end(b, op);
}

/* An embedded constant of shape dims holding values[] converted to dt. */
struct hgc_tensor *hgc_pb_const(struct hgc_pb *b, enum hgc_dtype dt, int ndims,
				const int64_t *dims, const double *values)
{
	int64_t n = hgc_dims_prod(ndims, dims), i;
	void *buf = hgc_xcalloc((size_t)n * hgc_dtype_size(dt) + 1, 1);
	struct hgc_tensor *t;

	for (i = 0; i < n; i++)
		hgc_store_f64(dt, buf, i, values[i]);
	t = hgc_graph_add_const(b->g, dt, ndims, dims, buf, b->loc.file ? &b->loc : NULL);
	free(buf);
	return t;
}

/* A 0-d constant. */
struct hgc_tensor *hgc_pb_scalar(struct hgc_pb *b, enum hgc_dtype dt, double v)
{
	return hgc_pb_const(b, dt, 0, NULL, &v);
}

/* A constant of shape dims with v everywhere. */
struct hgc_tensor *hgc_pb_fill(struct hgc_pb *b, enum hgc_dtype dt, int ndims,
			       const int64_t *dims, double v)
{
	int64_t n = hgc_dims_prod(ndims, dims), i;
	double *vals = hgc_xmalloc((size_t)(n > 0 ? n : 1) * sizeof(*vals));
	struct hgc_tensor *t;

	for (i = 0; i < n; i++)
		vals[i] = v;
	t = hgc_pb_const(b, dt, ndims, dims, vals);
	free(vals);
	return t;
}

/* [C, 1, ..., 1]: C at axis of a rank-r tensor, aligned right for numpy broadcasting. */
int hgc_pb_channel_shape(int64_t c, int axis, int r, int64_t *dims)
{
	int i, n = r - axis;

	dims[0] = c;
	for (i = 1; i < n; i++)
		dims[i] = 1;
	return n;
}

/* Does perm leave every one of n dims in place? */
bool hgc_pb_perm_identity(const int *perm, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (perm[i] != i)
			return false;
	return true;
}

/* Remove the ops marked among the first n, put the rest in order, report failures. */
int hgc_pb_finish(struct hgc_pb *b, const bool *dead, size_t n)
{
	size_t len = b->g->ops.len, i;
	bool *all, any = len > n;
	int r;

	if (n > len)
		hgc_bug("pb_finish: %zu marks for %zu ops", n, len);
	for (i = 0; i < n && !any; i++)
		any = dead[i];
	if (!any && !b->failed)
		return 0;
	all = hgc_xcalloc(len + 1, sizeof(*all));
	if (n)
		memcpy(all, dead, n * sizeof(*all));
	hgc_graph_remove_ops(b->g, all);
	free(all);
	r = hgc_graph_sort(b->g, b->d);
	if (b->failed)
		return hgc_error(b->d, NULL, "%d op%s built by a graph pass did not check (a bug)",
				 b->failed, b->failed == 1 ? "" : "s");
	return r;
}

/* The loop every rewriting pass shares (passes_int.h). */
int hgc_pb_rewrite(struct hgc_graph *g, hgc_pb_rewrite_fn *fn, void *ctx, struct hgc_diag *d)
{
	size_t n = g->ops.len, i;
	bool *dead = hgc_xcalloc(n + 1, sizeof(*dead));
	struct hgc_graph_uses u;
	struct hgc_pb b;
	int changes = 0, r;

	hgc_graph_uses_init(&u, g);
	hgc_pb_init(&b, g, d);
	for (i = 0; i < n; i++) {
		struct hgc_op *op = HGC_GRAPH_OP(g, i);
		struct hgc_tensor *y;

		hgc_pb_at(&b, op);
		if (!(y = fn(&b, op, ctx)))
			continue;
		if (!y->name && y->producer && (size_t)y->producer->id >= n)
			y->name = op->out[0]->name;
		hgc_graph_uses_replace(&u, g, op->out[0], y);
		dead[i] = true;
		changes++;
	}
	hgc_graph_uses_release(&u);
	r = hgc_pb_finish(&b, dead, n);
	free(dead);
	return r ? -1 : changes;
}
