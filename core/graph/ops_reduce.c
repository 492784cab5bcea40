/* ops_reduce.c: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2. */
#include "graph_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum reduce_kind { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2 };

/* Mark the reduced dims of a rank-r src in mask; -1 with d set on a bad or repeated axis. */
static int reduced_dims(const struct hgc_op *op, bool *mask, struct hgc_diag *d)
{
	const int64_t *axes;
	int n = hgc_op_ints(op, "axes", &axes), r = op->in[0]->ndims, i, a;

	memset(mask, 0, HGC_MAX_DIMS * sizeof(*mask));
	for (i = 0; i < n; i++) {
		if (hgc_norm_axis(axes[i], r, &a))
			return hgc_op_error(op, d, "axis %lld is out of range for a %d-D src",
					    (long long)axes[i], r);
		if (mask[a])
			return hgc_op_error(op, d, "axis %d appears twice in axes", a);
		mask[a] = true;
	}
	return 0;
}

/* Reductions: numeric src, output without (or with size-1) reduced dims. */
static int reduce_infer(struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_tensor *s = op->in[0];
	bool mask[HGC_MAX_DIMS], keep = hgc_op_bool(op, "keep_dims");
	int64_t dims[HGC_MAX_DIMS];
	int i, n = 0;

	if (hgc_op_want_dtype(op, 0, "src", HGC_DTM_NUM, d) || reduced_dims(op, mask, d))
		return -1;
	for (i = 0; i < s->ndims; i++)
		if (!mask[i] || keep)
			dims[n++] = mask[i] ? 1 : s->dims[i];
	hgc_op_set_out_shape(op, n, dims);
	return hgc_op_set_out_dtype(op, s->dtype, d);
}

/* Fold x into an accumulator; skip_nan: a max or min passes NaNs by. */
static double fold(enum reduce_kind k, double acc, double x, bool skip_nan)
{
	switch (k) {
	case R_MAX:
		if (skip_nan)
			return x > acc ? x : acc;
		return isnan(acc) ? acc : x > acc || isnan(x) ? x : acc;
	case R_MIN:
		if (skip_nan)
			return x < acc ? x : acc;
		return isnan(acc) ? acc : x < acc || isnan(x) ? x : acc;
	case R_PROD: return acc * x;
	case R_L1: return acc + fabs(x);
	case R_L2: return acc + x * x;
	default: return acc + x;
	}
}

/* The initial accumulator of a reduction. */
static double start(enum reduce_kind k)
{
	return k == R_MAX ? -INFINITY : k == R_MIN ? INFINITY : k == R_PROD ? 1 : 0;
}

/* Reduce in double: walk src, each element folding into its output slot. */
static void reduce_ref(const struct hgc_op *op, const void *const *in, void *const *out,
		       enum reduce_kind k)
{
	const struct hgc_tensor *s = op->in[0], *o = op->out[0], *srcs[1];
	struct hgc_tensor kept = {0};
	struct hgc_bcast it;
	bool mask[HGC_MAX_DIMS];
	int64_t i, n = hgc_tensor_nelems(s), no = hgc_tensor_nelems(o), count;
	double *acc = hgc_xmalloc((size_t)(no + 1) * sizeof(double));
	bool skip_nan = (k == R_MAX || k == R_MIN) && hgc_op_bool(op, "ignore_nan");

	reduced_dims(op, mask, NULL);
	kept.ndims = s->ndims;
	for (i = 0; i < s->ndims; i++)
		kept.dims[i] = mask[i] ? 1 : s->dims[i];
	count = no ? n / no : 0;
	for (i = 0; i < no; i++)
		acc[i] = start(k);
	srcs[0] = &kept;
	hgc_bcast_init(&it, s, 1, srcs);
	for (i = 0; i < n; i++, hgc_bcast_next(&it))
		acc[it.off[0]] = fold(k, acc[it.off[0]], hgc_load_f64(s->dtype, in[0], i), skip_nan);
	for (i = 0; i < no; i++)
		hgc_store_f64(o->dtype, out[0], i,
			      k == R_MEAN ? acc[i] / (double)count : k == R_L2 ? sqrt(acc[i]) : acc[i]);
	free(acc);
}

/* One reduction: schema (oneDNN: axes, keep_dims; a max or min also hgc's
   ignore_nan), inference and reference. */
#define REDUCE(stem, kind, extra)                                                          \
	const struct hgc_attr_spec hgc_op_##stem##_attrs[] = {                               \
		HGC_ATTR_REQ("axes", INTS),                                                  \
		HGC_ATTR_BOOL_DEF("keep_dims", false),                                       \
		extra                                                                        \
		HGC_ATTR_END,                                                                \
	};                                                                                   \
	int hgc_op_##stem##_infer(struct hgc_op *op, struct hgc_diag *d)                     \
	{                                                                                    \
		return reduce_infer(op, d);                                                  \
	}                                                                                    \
	void hgc_op_##stem##_ref(const struct hgc_op *op, const void *const *in,             \
				 void *const *out)                                           \
	{                                                                                    \
		reduce_ref(op, in, out, kind);                                               \
	}

/*
 * ignore_nan (not oneDNN's): NaN elements are passed by, the max or min of
 * the others (-inf or +inf when there are none).  SoftMax's decomposition
 * takes it: a NaN in a row makes the row's sum of exps NaN, so every output
 * of that row is NaN whichever max was subtracted, and the max without the
 * NaN test is one instruction a vector where it was four.
 */
#define IGNORE_NAN HGC_ATTR_BOOL_DEF("ignore_nan", false),

REDUCE(reduce_sum, R_SUM, )
REDUCE(reduce_mean, R_MEAN, )
REDUCE(reduce_max, R_MAX, IGNORE_NAN)
REDUCE(reduce_min, R_MIN, IGNORE_NAN)
REDUCE(reduce_prod, R_PROD, )
REDUCE(reduce_l1, R_L1, )
REDUCE(reduce_l2, R_L2, )
