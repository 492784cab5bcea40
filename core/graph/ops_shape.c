/* ops_shape.c: data movement: StaticTranspose, StaticReshape, Reorder, Concat, Select. */
#include "graph_int.h"

#include <string.h>

/* Data movement keeps the type exactly: a preset output type must equal dt. */
static int keep_dtype(struct hgc_op *op, enum hgc_dtype dt, struct hgc_diag *d)
{
	enum hgc_dtype want = op->out[0]->dtype;

	if (want != HGC_DT_UNDEF && want != dt)
		return hgc_op_error(op, d, "the output type cannot be %s (expected %s)",
				    hgc_dtype_name(want), hgc_dtype_name(dt));
	op->out[0]->dtype = dt;
	return 0;
}

const struct hgc_attr_spec hgc_op_transpose_attrs[] = {
	HGC_ATTR_REQ("order", INTS),
	HGC_ATTR_END,
};

/* The normalized permutation in perm; -1 with d set if order is not one. */
static int transpose_order(const struct hgc_op *op, int *perm, struct hgc_diag *d)
{
	char buf[HGC_DIMS_BUF];
	bool seen[HGC_MAX_DIMS] = {false};
	const int64_t *order;
	int n = hgc_op_ints(op, "order", &order), r = op->in[0]->ndims, i;

	if (n != r)
		return hgc_op_error(op, d, "order has %d values for a %d-D src", n, r);
	for (i = 0; i < n; i++) {
		if (hgc_norm_axis(order[i], r, &perm[i]) || seen[perm[i]])
			return hgc_op_error(op, d, "order %s is not a permutation of %d axes",
					    hgc_dims_str(buf, n, order), r);
		seen[perm[i]] = true;
	}
	return 0;
}

/* StaticTranspose: output dim i is src dim order[i]. */
int hgc_op_transpose_infer(struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_tensor *s = op->in[0];
	int64_t dims[HGC_MAX_DIMS];
	int perm[HGC_MAX_DIMS], i;

	if (transpose_order(op, perm, d))
		return -1;
	for (i = 0; i < s->ndims; i++)
		dims[i] = s->dims[perm[i]];
	hgc_op_set_out_shape(op, s->ndims, dims);
	return keep_dtype(op, s->dtype, d);
}

/* StaticTranspose reference: walk the output, gathering from the permuted src strides. */
void hgc_op_transpose_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	const struct hgc_tensor *s = op->in[0], *o = op->out[0];
	int64_t sstride[HGC_MAX_DIMS], pstride[HGC_MAX_DIMS], idx[HGC_MAX_DIMS] = {0};
	int64_t i, n = hgc_tensor_nelems(o), off = 0, st = 1;
	size_t es = hgc_dtype_size(s->dtype);
	int perm[HGC_MAX_DIMS], k;

	transpose_order(op, perm, NULL);
	for (k = s->ndims - 1; k >= 0; k--) {
		sstride[k] = st;
		st *= s->dims[k];
	}
	for (k = 0; k < s->ndims; k++)
		pstride[k] = sstride[perm[k]];
	for (i = 0; i < n; i++) {
		memcpy((char *)out[0] + i * es, (const char *)in[0] + off * es, es);
		for (k = o->ndims - 1; k >= 0; k--) {
			off += pstride[k];
			if (++idx[k] < o->dims[k])
				break;
			off -= pstride[k] * o->dims[k];
			idx[k] = 0;
		}
	}
}

const struct hgc_attr_spec hgc_op_reshape_attrs[] = {
	HGC_ATTR_REQ("shape", INTS),
	HGC_ATTR_REQ("special_zero", BOOL),
	HGC_ATTR_END,
};

/* Resolve the target shape's 0s (special_zero) and one -1, without the final count check. */
static int reshape_dims(const struct hgc_op *op, int64_t *dims, int *infer_at,
			struct hgc_diag *d)
{
	const struct hgc_tensor *s = op->in[0];
	bool special = hgc_op_bool(op, "special_zero");
	const int64_t *shape;
	int n = hgc_op_ints(op, "shape", &shape), i;

	if (n > HGC_MAX_DIMS)
		return hgc_op_error(op, d, "shape has %d dims (at most %d)", n, HGC_MAX_DIMS);
	*infer_at = -1;
	for (i = 0; i < n; i++) {
		dims[i] = shape[i];
		if (shape[i] == -1 && *infer_at >= 0)
			return hgc_op_error(op, d, "shape has more than one -1");
		if (shape[i] == -1)
			*infer_at = i;
		else if (shape[i] < -1)
			return hgc_op_error(op, d, "shape has a negative dim %lld", (long long)shape[i]);
		else if (shape[i] == 0 && special && i >= s->ndims)
			return hgc_op_error(op, d, "shape[%d] is 0 but the src has only %d dims", i,
					    s->ndims);
		else if (shape[i] == 0 && special)
			dims[i] = s->dims[i];
	}
	return n;
}

/* StaticReshape: the same elements under a new shape. */
int hgc_op_reshape_infer(struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_tensor *s = op->in[0];
	char b1[HGC_DIMS_BUF], b2[HGC_DIMS_BUF];
	int64_t dims[HGC_MAX_DIMS], total = hgc_tensor_nelems(s), known;
	const int64_t *shape;
	int n, at = -1, i;

	if ((n = reshape_dims(op, dims, &at, d)) < 0)
		return -1;
	if (at >= 0)
		dims[at] = 1;
	known = hgc_dims_prod(n, dims);
	hgc_dims_str(b1, s->ndims, s->dims);
	i = hgc_op_ints(op, "shape", &shape);
	hgc_dims_str(b2, i, shape);
	if (at >= 0 && (known == 0 || total % known))
		return hgc_op_error(op, d, "cannot reshape %s into %s", b1, b2);
	if (at >= 0)
		dims[at] = total / known;
	else if (known == INT64_MAX)
		return hgc_op_error(op, d, "cannot reshape %s into %s (too many elements)", b1, b2);
	else if (known != total)
		return hgc_op_error(op, d, "cannot reshape %s (%lld elements) into %s (%lld elements)",
				    b1, (long long)total, b2, (long long)known);
	hgc_op_set_out_shape(op, n, dims);
	return keep_dtype(op, s->dtype, d);
}

/* StaticReshape reference: a copy (plain layouts are row-major). */
void hgc_op_reshape_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	memcpy(out[0], in[0], hgc_tensor_nbytes(op->in[0]));
}

const struct hgc_attr_spec hgc_op_reorder_attrs[] = {HGC_ATTR_END};

/* Reorder: same shape and type (a layout change, which plain graphs do not have). */
int hgc_op_reorder_infer(struct hgc_op *op, struct hgc_diag *d)
{
	hgc_op_set_out_shape(op, op->in[0]->ndims, op->in[0]->dims);
	return keep_dtype(op, op->in[0]->dtype, d);
}

/* Reorder reference: a copy on plain layouts. */
void hgc_op_reorder_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	memcpy(out[0], in[0], hgc_tensor_nbytes(op->in[0]));
}

const struct hgc_attr_spec hgc_op_concat_attrs[] = {
	HGC_ATTR_REQ("axis", INT),
	HGC_ATTR_END,
};

/* The normalized concat axis; -1 with d set. */
static int concat_axis(const struct hgc_op *op, int *axis, struct hgc_diag *d)
{
	int64_t a = hgc_op_int(op, "axis");

	if (hgc_norm_axis(a, op->in[0]->ndims, axis))
		return hgc_op_error(op, d, "axis %lld is out of range for %d-D inputs", (long long)a,
				    op->in[0]->ndims);
	return 0;
}

/* Input i against input 0: same type, rank and dims except along axis. */
static int concat_check(const struct hgc_op *op, int i, int axis, struct hgc_diag *d)
{
	const struct hgc_tensor *a = op->in[0], *b = op->in[i];
	char b1[HGC_DIMS_BUF], b2[HGC_DIMS_BUF];
	int k;

	if (b->dtype != a->dtype)
		return hgc_op_error(op, d, "input %d has type %s but input 0 has %s", i,
				    hgc_dtype_name(b->dtype), hgc_dtype_name(a->dtype));
	for (k = 0; k < a->ndims; k++)
		if (b->ndims != a->ndims || (k != axis && b->dims[k] != a->dims[k]))
			return hgc_op_error(op, d, "input %d has shape %s, which differs from %s "
					    "outside axis %d", i, hgc_dims_str(b1, b->ndims, b->dims),
					    hgc_dims_str(b2, a->ndims, a->dims), axis);
	return 0;
}

/* Concat: inputs joined along axis. */
int hgc_op_concat_infer(struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_tensor *a = op->in[0];
	int64_t dims[HGC_MAX_DIMS];
	int axis, i;

	if (a->ndims < 1)
		return hgc_op_error(op, d, "inputs must have at least 1 dim");
	if (concat_axis(op, &axis, d))
		return -1;
	memcpy(dims, a->dims, sizeof(dims));
	for (i = 1; i < op->nin; i++) {
		if (concat_check(op, i, axis, d))
			return -1;
		dims[axis] += op->in[i]->dims[axis];
	}
	hgc_op_set_out_shape(op, a->ndims, dims);
	return keep_dtype(op, a->dtype, d);
}

/* Concat reference: for each outer index, each input's slab in turn. */
void hgc_op_concat_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	size_t es = hgc_dtype_size(op->in[0]->dtype);
	int64_t outer, inner, o;
	char *dst = out[0];
	int axis, i;

	concat_axis(op, &axis, NULL);
	hgc_axis_split(op->in[0], axis, &outer, &inner);
	for (o = 0; o < outer; o++) {
		for (i = 0; i < op->nin; i++) {
			size_t slab = (size_t)(op->in[i]->dims[axis] * inner) * es;

			memcpy(dst, (const char *)in[i] + (size_t)o * slab, slab);
			dst += slab;
		}
	}
}

static const char *const broadcasts[] = {"numpy", "none", NULL};

const struct hgc_attr_spec hgc_op_select_op_attrs[] = {
	HGC_ATTR_STRING_DEF("auto_broadcast", "numpy"),
	HGC_ATTR_END,
};

/* Select's output shape: the three inputs broadcast together (or equal, for "none"). */
static int select_shape(struct hgc_op *op, struct hgc_diag *d)
{
	char b[3][HGC_DIMS_BUF];
	int64_t dims[HGC_MAX_DIMS], dims2[HGC_MAX_DIMS];
	int mode = hgc_op_choice(op, "auto_broadcast", broadcasts, d), i, n, n2;

	if (mode < 0)
		return -1;
	for (i = 0; i < 3; i++)
		hgc_dims_str(b[i], op->in[i]->ndims, op->in[i]->dims);
	if (mode == 1 && (strcmp(b[0], b[1]) || strcmp(b[1], b[2])))
		return hgc_op_error(op, d,
				    "shapes differ with auto_broadcast \"none\": %s, %s, %s", b[0],
				    b[1], b[2]);
	if (hgc_broadcast(op->in[0]->ndims, op->in[0]->dims, op->in[1]->ndims, op->in[1]->dims,
			  &n, dims) ||
	    hgc_broadcast(n, dims, op->in[2]->ndims, op->in[2]->dims, &n2, dims2))
		return hgc_op_error(op, d, "shapes do not broadcast: %s, %s, %s", b[0], b[1], b[2]);
	hgc_op_set_out_shape(op, n2, dims2);
	return 0;
}

/* Select(cond, then, else): boolean cond, then and else of one type. */
int hgc_op_select_op_infer(struct hgc_op *op, struct hgc_diag *d)
{
	enum hgc_dtype t = op->in[1]->dtype, e = op->in[2]->dtype;

	if (hgc_op_want_dtype(op, 0, "cond", HGC_DTM(BOOL), d))
		return -1;
	if (t != e)
		return hgc_op_error(op, d, "then and else types differ: %s vs %s", hgc_dtype_name(t),
				    hgc_dtype_name(e));
	return select_shape(op, d) || keep_dtype(op, t, d) ? -1 : 0;
}

/* Select reference: then where cond is true, else elsewhere, with broadcasting. */
void hgc_op_select_op_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	const struct hgc_tensor *src[3] = {op->in[0], op->in[1], op->in[2]};
	size_t es = hgc_dtype_size(op->out[0]->dtype);
	struct hgc_bcast it;
	int64_t i, n = hgc_tensor_nelems(op->out[0]);

	hgc_bcast_init(&it, op->out[0], 3, src);
	for (i = 0; i < n; i++, hgc_bcast_next(&it)) {
		bool c = ((const uint8_t *)in[0])[it.off[0]] != 0;

		memcpy((char *)out[0] + (size_t)i * es,
		       (const char *)in[c ? 1 : 2] + (size_t)it.off[c ? 1 : 2] * es, es);
	}
}
