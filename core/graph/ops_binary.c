/*
 * ops_binary.c: BiasAdd and the broadcasting binary ops (Add, Subtract,
 * Multiply, Divide, Maximum, Minimum), and AddRound, the basic op that ends
 * a decomposed Quantize: a + zp rounded half to even as if the sum were
 * exact (docs/passes.md, decompose_quant).
 */
#include "graph_int.h"

#include <math.h>
#include <string.h>

static const char *const broadcasts[] = {"numpy", "none", NULL};
static const char *const data_formats[] = {"NXC", "NCX", NULL};

/* Result type of two operands: equal types, or f32 with bf16 giving f32. */
static int binary_dtype(struct hgc_op *op, int i, int j, struct hgc_diag *d)
{
	enum hgc_dtype a = op->in[i]->dtype, b = op->in[j]->dtype;

	if (hgc_op_want_dtype(op, i, "input 0", HGC_DTM_NUM, d) ||
	    hgc_op_want_dtype(op, j, "input 1", HGC_DTM_NUM, d))
		return -1;
	if (a == b)
		return hgc_op_set_out_dtype(op, a, d);
	if (hgc_dtype_is_float(a) && hgc_dtype_is_float(b))
		return hgc_op_set_out_dtype(op, HGC_DT_F32, d);
	return hgc_op_error(op, d, "input types differ: %s vs %s", hgc_dtype_name(a),
			    hgc_dtype_name(b));
}

/* Output shape of a binary op under auto_broadcast. */
static int binary_shape(struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_tensor *a = op->in[0], *b = op->in[1];
	char b1[HGC_DIMS_BUF], b2[HGC_DIMS_BUF];
	int64_t dims[HGC_MAX_DIMS];
	int mode = hgc_op_choice(op, "auto_broadcast", broadcasts, d), nd;

	if (mode < 0)
		return -1;
	hgc_dims_str(b1, a->ndims, a->dims);
	hgc_dims_str(b2, b->ndims, b->dims);
	if (mode == 1 && strcmp(b1, b2))
		return hgc_op_error(op, d, "shapes differ with auto_broadcast \"none\": %s vs %s",
				    b1, b2);
	if (hgc_broadcast(a->ndims, a->dims, b->ndims, b->dims, &nd, dims))
		return hgc_op_error(op, d, "shapes do not broadcast: %s vs %s", b1, b2);
	hgc_op_set_out_shape(op, nd, dims);
	return 0;
}

/* Shape inference shared by the binary ops. */
static int binary_infer(struct hgc_op *op, struct hgc_diag *d)
{
	return binary_dtype(op, 0, 1, d) || binary_shape(op, d) ? -1 : 0;
}

/* Apply f elementwise with broadcasting, in double, rounding once on store. */
static void binary_ref(const struct hgc_op *op, const void *const *in, void *const *out,
		       double (*f)(double, double))
{
	const struct hgc_tensor *src[2] = {op->in[0], op->in[1]};
	const struct hgc_tensor *t = op->out[0];
	struct hgc_bcast it;
	int64_t i, n = hgc_tensor_nelems(t);

	hgc_bcast_init(&it, t, 2, src);
	for (i = 0; i < n; i++, hgc_bcast_next(&it))
		hgc_store_f64(t->dtype, out[0], i,
			      f(hgc_load_f64(src[0]->dtype, in[0], it.off[0]),
				hgc_load_f64(src[1]->dtype, in[1], it.off[1])));
}

/* The scalar functions. */
static double f_add(double a, double b) { return a + b; }
static double f_sub(double a, double b) { return a - b; }
static double f_mul(double a, double b) { return a * b; }
static double f_div(double a, double b) { return a / b; }
/* Maximum and Minimum propagate NaN, as the vector max/min of compiled code need not. */
static double f_max(double a, double b)
{
	return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
}
static double f_min(double a, double b)
{
	return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
}

/* One binary op: its schema, inference and reference. */
#define BINARY(stem, fn)                                                                  \
	const struct hgc_attr_spec hgc_op_##stem##_attrs[] = {                              \
		HGC_ATTR_STRING_DEF("auto_broadcast", "numpy"),                             \
		HGC_ATTR_END,                                                               \
	};                                                                                  \
	int hgc_op_##stem##_infer(struct hgc_op *op, struct hgc_diag *d)                    \
	{                                                                                   \
		return binary_infer(op, d);                                                 \
	}                                                                                   \
	void hgc_op_##stem##_ref(const struct hgc_op *op, const void *const *in,            \
				 void *const *out)                                          \
	{                                                                                   \
		binary_ref(op, in, out, fn);                                                \
	}

BINARY(add, f_add)
BINARY(subtract, f_sub)
BINARY(multiply, f_mul)
BINARY(divide, f_div)
BINARY(maximum, f_max)
BINARY(minimum, f_min)

/* AddRound: float operands; the sum in double is exact for an f32 and an integer. */
static double f_add_round(double a, double b) { return hgc_round_half_even(a + b); }

const struct hgc_attr_spec hgc_op_add_round_attrs[] = {
	HGC_ATTR_STRING_DEF("auto_broadcast", "numpy"),
	HGC_ATTR_END,
};

int hgc_op_add_round_infer(struct hgc_op *op, struct hgc_diag *d)
{
	if (hgc_op_want_dtype(op, 0, "input 0", HGC_DTM_FLOAT, d) ||
	    hgc_op_want_dtype(op, 1, "input 1", HGC_DTM_FLOAT, d))
		return -1;
	return binary_infer(op, d);
}

void hgc_op_add_round_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	binary_ref(op, in, out, f_add_round);
}

const struct hgc_attr_spec hgc_op_bias_add_attrs[] = {
	HGC_ATTR_STRING_DEF("data_format", "NXC"),
	HGC_ATTR_END,
};

/* The channel axis of BiasAdd's src: last for NXC, 1 for NCX. */
static int bias_axis(const struct hgc_op *op)
{
	return strcmp(hgc_op_string(op, "data_format"), "NXC") ? 1 : op->in[0]->ndims - 1;
}

/* BiasAdd: src with a channel dim, bias [C] of the same type (or f32). */
int hgc_op_bias_add_infer(struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_tensor *s = op->in[0], *b = op->in[1];
	char buf[HGC_DIMS_BUF];
	int axis;

	if (hgc_op_choice(op, "data_format", data_formats, d) < 0 ||
	    hgc_op_want_dtype(op, 0, "src", HGC_DTM_NUM, d) ||
	    hgc_op_want_dtype(op, 1, "bias", HGC_DTM(F32) | 1u << s->dtype, d))
		return -1;
	if (s->ndims < 2)
		return hgc_op_error(op, d, "src must have at least 2 dims, got %d", s->ndims);
	axis = bias_axis(op);
	if (b->ndims != 1 || b->dims[0] != s->dims[axis])
		return hgc_op_error(op, d, "bias must be [%lld] (the channels), got %s",
				    (long long)s->dims[axis], hgc_dims_str(buf, b->ndims, b->dims));
	hgc_op_set_out_shape(op, s->ndims, s->dims);
	return hgc_op_set_out_dtype(op, s->dtype, d);
}

/* BiasAdd reference: add bias[c] along the channel axis. */
void hgc_op_bias_add_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	const struct hgc_tensor *s = op->in[0];
	int axis = bias_axis(op);
	int64_t outer, inner, c = s->dims[axis], i;

	hgc_axis_split(s, axis, &outer, &inner);
	for (i = 0; i < outer * c * inner; i++)
		hgc_store_f64(op->out[0]->dtype, out[0], i,
			      hgc_load_f64(s->dtype, in[0], i) +
				      hgc_load_f64(op->in[1]->dtype, in[1], i / inner % c));
}
