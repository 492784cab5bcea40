/* ops_norm.c: SoftMax, LogSoftmax, LayerNorm and BatchNormInference. */
#include "graph_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const struct hgc_attr_spec hgc_op_softmax_attrs[] = {
	HGC_ATTR_INT_DEF("axis", 1),
	HGC_ATTR_END,
};

const struct hgc_attr_spec hgc_op_log_softmax_attrs[] = {
	HGC_ATTR_INT_DEF("axis", -1),
	HGC_ATTR_END,
};

/* A float src whose shape and type the output keeps. */
static int same_as_src(struct hgc_op *op, struct hgc_diag *d)
{
	if (hgc_op_want_dtype(op, 0, "src", HGC_DTM_FLOAT, d))
		return -1;
	hgc_op_set_out_shape(op, op->in[0]->ndims, op->in[0]->dims);
	return hgc_op_set_out_dtype(op, op->in[0]->dtype, d);
}

/* The normalized "axis" attribute of a softmax; -1 with d set. */
static int softmax_axis(const struct hgc_op *op, int *axis, struct hgc_diag *d)
{
	int64_t a = hgc_op_int(op, "axis");

	if (hgc_norm_axis(a, op->in[0]->ndims, axis))
		return hgc_op_error(op, d, "axis %lld is out of range for a %d-D src", (long long)a,
				    op->in[0]->ndims);
	return 0;
}

/* SoftMax and LogSoftmax: a float src and an axis in range. */
static int softmax_infer(struct hgc_op *op, struct hgc_diag *d)
{
	int axis;

	return same_as_src(op, d) || softmax_axis(op, &axis, d) ? -1 : 0;
}

/* Softmax along the axis, stable (max subtracted), as probabilities or their logs. */
static void softmax_ref(const struct hgc_op *op, const void *const *in, void *const *out,
			bool logs)
{
	const struct hgc_tensor *s = op->in[0];
	int64_t outer, inner, n, o, i, k;
	int axis;

	softmax_axis(op, &axis, NULL);
	hgc_axis_split(s, axis, &outer, &inner);
	n = s->dims[axis];
	for (o = 0; o < outer; o++) {
		for (i = 0; i < inner; i++) {
			int64_t base = o * n * inner + i;
			double mx = -INFINITY, sum = 0;

			for (k = 0; k < n; k++)
				mx = fmax(mx, hgc_load_f64(s->dtype, in[0], base + k * inner));
			for (k = 0; k < n; k++)
				sum += exp(hgc_load_f64(s->dtype, in[0], base + k * inner) - mx);
			for (k = 0; k < n; k++) {
				double x = hgc_load_f64(s->dtype, in[0], base + k * inner) - mx;

				hgc_store_f64(op->out[0]->dtype, out[0], base + k * inner,
					      logs ? x - log(sum) : exp(x) / sum);
			}
		}
	}
}

/* SoftMax: exp(x - max) / sum. */
int hgc_op_softmax_infer(struct hgc_op *op, struct hgc_diag *d)
{
	return softmax_infer(op, d);
}

/* SoftMax reference. */
void hgc_op_softmax_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	softmax_ref(op, in, out, false);
}

/* LogSoftmax: x - max - log(sum(exp(x - max))). */
int hgc_op_log_softmax_infer(struct hgc_op *op, struct hgc_diag *d)
{
	return softmax_infer(op, d);
}

/* LogSoftmax reference. */
void hgc_op_log_softmax_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	softmax_ref(op, in, out, true);
}

const struct hgc_attr_spec hgc_op_layer_norm_attrs[] = {
	HGC_ATTR_BOOL_DEF("keep_stats", true),
	HGC_ATTR_INT_DEF("begin_norm_axis", -1),
	HGC_ATTR_BOOL_DEF("use_affine", true),
	HGC_ATTR_FLOAT_DEF("epsilon", 1e-5),
	HGC_ATTR_END,
};

/* A non-negative epsilon. */
static int check_epsilon(const struct hgc_op *op, struct hgc_diag *d)
{
	double eps = hgc_op_float(op, "epsilon");

	if (!(eps >= 0))
		return hgc_op_error(op, d, "epsilon must not be negative, got %g", eps);
	return 0;
}

/* Input i must have the given shape and type f32 or src's. */
static int check_param(const struct hgc_op *op, int i, const char *role, int nd,
		       const int64_t *dims, const char *what, struct hgc_diag *d)
{
	const struct hgc_tensor *t = op->in[i];
	char b1[HGC_DIMS_BUF], b2[HGC_DIMS_BUF];

	if (hgc_op_want_dtype(op, i, role, HGC_DTM(F32) | 1u << op->in[0]->dtype, d))
		return -1;
	hgc_dims_str(b1, nd, dims);
	hgc_dims_str(b2, t->ndims, t->dims);
	if (strcmp(b1, b2))
		return hgc_op_error(op, d, "%s must be %s (%s), got %s", role, b1, what, b2);
	return 0;
}

/* The normalized begin_norm_axis; -1 with d set. */
static int norm_axis(const struct hgc_op *op, int *axis, struct hgc_diag *d)
{
	int64_t a = hgc_op_int(op, "begin_norm_axis");

	if (hgc_norm_axis(a, op->in[0]->ndims, axis))
		return hgc_op_error(op, d, "begin_norm_axis %lld is out of range for a %d-D src",
				    (long long)a, op->in[0]->ndims);
	return 0;
}

/* LayerNorm: float src; gamma and beta with the normalized shape iff use_affine. */
int hgc_op_layer_norm_infer(struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_tensor *s = op->in[0];
	bool affine = hgc_op_bool(op, "use_affine");
	int axis, i;

	if (same_as_src(op, d) || check_epsilon(op, d) || norm_axis(op, &axis, d))
		return -1;
	if (affine && op->nin != 3)
		return hgc_op_error(op, d, "use_affine is true but gamma and beta are missing");
	if (!affine && op->nin != 1)
		return hgc_op_error(op, d, "use_affine is false but gamma or beta is given");
	for (i = 1; i < op->nin; i++)
		if (check_param(op, i, i == 1 ? "gamma" : "beta", s->ndims - axis, s->dims + axis,
				"the normalized dims", d))
			return -1;
	return 0;
}

/* LayerNorm reference: biased variance over the trailing dims from begin_norm_axis. */
void hgc_op_layer_norm_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	const struct hgc_tensor *s = op->in[0];
	double eps = hgc_op_float(op, "epsilon");
	int64_t outer, inner, o, i;
	double *x;
	int axis;

	norm_axis(op, &axis, NULL);
	outer = hgc_dims_prod(axis, s->dims);
	inner = hgc_dims_prod(s->ndims - axis, s->dims + axis);
	x = hgc_load_all(s->dtype, in[0], outer * inner);
	for (o = 0; o < outer; o++) {
		double *row = x + o * inner, mean = 0, var = 0, rstd;

		for (i = 0; i < inner; i++)
			mean += row[i];
		mean /= (double)inner;
		for (i = 0; i < inner; i++)
			var += (row[i] - mean) * (row[i] - mean);
		rstd = 1 / sqrt(var / (double)inner + eps);
		for (i = 0; i < inner; i++) {
			double y = (row[i] - mean) * rstd;

			if (op->nin == 3)
				y = y * hgc_load_f64(op->in[1]->dtype, in[1], i) +
				    hgc_load_f64(op->in[2]->dtype, in[2], i);
			hgc_store_f64(op->out[0]->dtype, out[0], o * inner + i, y);
		}
	}
	free(x);
}

const struct hgc_attr_spec hgc_op_batch_norm_attrs[] = {
	HGC_ATTR_REQ("epsilon", FLOAT),
	HGC_ATTR_STRING_DEF("data_format", "NXC"),
	HGC_ATTR_END,
};

static const char *const data_formats[] = {"NXC", "NCX", NULL};

/* The channel axis of BatchNormInference's src. */
static int bn_axis(const struct hgc_op *op)
{
	return strcmp(hgc_op_string(op, "data_format"), "NXC") ? 1 : op->in[0]->ndims - 1;
}

/* BatchNormInference: float src with channels; gamma, beta, mean, variance all [C]. */
int hgc_op_batch_norm_infer(struct hgc_op *op, struct hgc_diag *d)
{
	static const char *const roles[] = {"src", "gamma", "beta", "mean", "variance"};
	const struct hgc_tensor *s = op->in[0];
	int i, axis;

	if (hgc_op_choice(op, "data_format", data_formats, d) < 0 || same_as_src(op, d) ||
	    check_epsilon(op, d))
		return -1;
	if (s->ndims < 2)
		return hgc_op_error(op, d, "src must have at least 2 dims, got %d", s->ndims);
	axis = bn_axis(op);
	for (i = 1; i < 5; i++)
		if (check_param(op, i, roles[i], 1, &s->dims[axis], "the channels", d))
			return -1;
	return 0;
}

/* BatchNormInference reference: (x - mean) / sqrt(variance + epsilon) * gamma + beta. */
void hgc_op_batch_norm_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	const struct hgc_tensor *s = op->in[0];
	double eps = hgc_op_float(op, "epsilon");
	int axis = bn_axis(op);
	int64_t outer, inner, c = s->dims[axis], i;

	hgc_axis_split(s, axis, &outer, &inner);
	for (i = 0; i < outer * c * inner; i++) {
		int64_t ch = i / inner % c;
		double g = hgc_load_f64(op->in[1]->dtype, in[1], ch);
		double b = hgc_load_f64(op->in[2]->dtype, in[2], ch);
		double m = hgc_load_f64(op->in[3]->dtype, in[3], ch);
		double v = hgc_load_f64(op->in[4]->dtype, in[4], ch);

		hgc_store_f64(op->out[0]->dtype, out[0], i,
			      (hgc_load_f64(s->dtype, in[0], i) - m) / sqrt(v + eps) * g + b);
	}
}
