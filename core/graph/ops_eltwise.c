/* ops_eltwise.c: the unary elementwise ops: schemas, inference and references (in double). */
#include "graph_int.h"

#include <math.h>

/* The float attributes an elementwise function reads, loaded once per op. */
struct eparams {
	double a, b;
};

typedef double efn(double x, const struct eparams *p);

/* Elementwise ops take any numeric type and keep it; check validates attribute values. */
static int unary_infer(struct hgc_op *op, struct hgc_diag *d,
		       int (*check)(struct hgc_op *, struct hgc_diag *))
{
	if (hgc_op_want_dtype(op, 0, "src", HGC_DTM_NUM, d) || (check && check(op, d)))
		return -1;
	hgc_op_set_out_shape(op, op->in[0]->ndims, op->in[0]->dims);
	return hgc_op_set_out_dtype(op, op->in[0]->dtype, d);
}

/* Apply f to every element, reading attributes pa and pb (NULL: none) as its parameters. */
static void unary_ref(const struct hgc_op *op, const void *const *in, void *const *out, efn *f,
		      const char *pa, const char *pb)
{
	const struct hgc_tensor *s = op->in[0];
	struct eparams p = {pa ? hgc_op_float(op, pa) : 0, pb ? hgc_op_float(op, pb) : 0};
	int64_t i, n = hgc_tensor_nelems(s);

	for (i = 0; i < n; i++)
		hgc_store_f64(op->out[0]->dtype, out[0], i, f(hgc_load_f64(s->dtype, in[0], i), &p));
}

/* One elementwise op: inference with an optional check, reference with f and its parameters. */
#define UNARY(stem, f, check, pa, pb)                                                      \
	int hgc_op_##stem##_infer(struct hgc_op *op, struct hgc_diag *d)                     \
	{                                                                                    \
		return unary_infer(op, d, check);                                            \
	}                                                                                    \
	void hgc_op_##stem##_ref(const struct hgc_op *op, const void *const *in,             \
				 void *const *out)                                           \
	{                                                                                    \
		unary_ref(op, in, out, f, pa, pb);                                           \
	}

/* An op without attributes. */
#define NO_ATTRS(stem) const struct hgc_attr_spec hgc_op_##stem##_attrs[] = {HGC_ATTR_END};

/* Softplus of y, stable for large |y|: max(y, 0) + log1p(exp(-|y|)). */
static double softplus(double y)
{
	return (y > 0 ? y : 0) + log1p(exp(-fabs(y)));
}

/* The scalar functions, with oneDNN's definitions. */
static double f_relu(double x, const struct eparams *p) { (void)p; return x < 0 ? 0 : x; }
static double f_leaky(double x, const struct eparams *p) { return x >= 0 ? x : p->a * x; }
static double f_gelu_erf(double x, const struct eparams *p)
{
	(void)p;
	return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}
static double f_gelu_tanh(double x, const struct eparams *p)
{
	(void)p;
	return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}
static double f_sigmoid(double x, const struct eparams *p)
{
	(void)p;
	return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
}
static double f_tanh(double x, const struct eparams *p) { (void)p; return tanh(x); }
static double f_elu(double x, const struct eparams *p) { return x > 0 ? x : p->a * expm1(x); }
static double f_hswish(double x, const struct eparams *p)
{
	(void)p;
	return x * fmin(fmax(x + 3, 0), 6) / 6;
}
static double f_hsigmoid(double x, const struct eparams *p)
{
	return fmax(0, fmin(1, p->a * x + p->b));
}
static double f_softplus(double x, const struct eparams *p) { return softplus(p->a * x) / p->a; }
static double f_mish(double x, const struct eparams *p) { (void)p; return x * tanh(softplus(x)); }
static double f_exp(double x, const struct eparams *p) { (void)p; return exp(x); }
static double f_log(double x, const struct eparams *p) { (void)p; return log(x); }
static double f_sqrt(double x, const struct eparams *p) { (void)p; return sqrt(x); }
static double f_square(double x, const struct eparams *p) { (void)p; return x * x; }
static double f_abs(double x, const struct eparams *p) { (void)p; return fabs(x); }
static double f_recip(double x, const struct eparams *p) { (void)p; return 1 / x; }
static double f_pow(double x, const struct eparams *p) { return pow(x, p->a); }
static double f_clamp(double x, const struct eparams *p)
{
	return x < p->a ? p->a : x > p->b ? p->b : x;
}
static double f_round(double x, const struct eparams *p) { (void)p; return round(x); }

/* Clamp: min must not exceed max. */
static int check_clamp(struct hgc_op *op, struct hgc_diag *d)
{
	double lo = hgc_op_float(op, "min"), hi = hgc_op_float(op, "max");

	if (!(lo <= hi))
		return hgc_op_error(op, d, "min %g is greater than max %g", lo, hi);
	return 0;
}

/* SoftPlus: beta divides, so it cannot be 0. */
static int check_softplus(struct hgc_op *op, struct hgc_diag *d)
{
	if (hgc_op_float(op, "beta") == 0)
		return hgc_op_error(op, d, "beta must not be 0");
	return 0;
}

static const char *const gelu_modes[] = {"gelu_erf", "gelu_tanh", NULL};

/* GELU: a known mode. */
static int check_gelu(struct hgc_op *op, struct hgc_diag *d)
{
	return hgc_op_choice(op, "mode", gelu_modes, d) < 0 ? -1 : 0;
}

NO_ATTRS(relu)
UNARY(relu, f_relu, NULL, NULL, NULL)

const struct hgc_attr_spec hgc_op_leaky_relu_attrs[] = {
	HGC_ATTR_REQ("alpha", FLOAT),
	HGC_ATTR_END,
};
UNARY(leaky_relu, f_leaky, NULL, "alpha", NULL)

const struct hgc_attr_spec hgc_op_gelu_attrs[] = {
	HGC_ATTR_STRING_DEF("mode", "gelu_erf"),
	HGC_ATTR_END,
};

/* GELU: exact (erf) or tanh approximation. */
int hgc_op_gelu_infer(struct hgc_op *op, struct hgc_diag *d)
{
	return unary_infer(op, d, check_gelu);
}

/* GELU reference, by mode. */
void hgc_op_gelu_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	bool tanh_mode = hgc_op_choice(op, "mode", gelu_modes, NULL) == 1;

	unary_ref(op, in, out, tanh_mode ? f_gelu_tanh : f_gelu_erf, NULL, NULL);
}

NO_ATTRS(sigmoid)
UNARY(sigmoid, f_sigmoid, NULL, NULL, NULL)
NO_ATTRS(tanh_op)
UNARY(tanh_op, f_tanh, NULL, NULL, NULL)

const struct hgc_attr_spec hgc_op_elu_attrs[] = {
	HGC_ATTR_REQ("alpha", FLOAT),
	HGC_ATTR_END,
};
UNARY(elu, f_elu, NULL, "alpha", NULL)

NO_ATTRS(hard_swish)
UNARY(hard_swish, f_hswish, NULL, NULL, NULL)

const struct hgc_attr_spec hgc_op_hard_sigmoid_attrs[] = {
	HGC_ATTR_REQ("alpha", FLOAT),
	HGC_ATTR_REQ("beta", FLOAT),
	HGC_ATTR_END,
};
UNARY(hard_sigmoid, f_hsigmoid, NULL, "alpha", "beta")

const struct hgc_attr_spec hgc_op_soft_plus_attrs[] = {
	HGC_ATTR_FLOAT_DEF("beta", 1.0),
	HGC_ATTR_END,
};
UNARY(soft_plus, f_softplus, check_softplus, "beta", NULL)

NO_ATTRS(mish)
UNARY(mish, f_mish, NULL, NULL, NULL)
NO_ATTRS(exp_op)
UNARY(exp_op, f_exp, NULL, NULL, NULL)
NO_ATTRS(log_op)
UNARY(log_op, f_log, NULL, NULL, NULL)
NO_ATTRS(sqrt_op)
UNARY(sqrt_op, f_sqrt, NULL, NULL, NULL)
NO_ATTRS(square)
UNARY(square, f_square, NULL, NULL, NULL)
NO_ATTRS(abs_op)
UNARY(abs_op, f_abs, NULL, NULL, NULL)
NO_ATTRS(reciprocal)
UNARY(reciprocal, f_recip, NULL, NULL, NULL)

const struct hgc_attr_spec hgc_op_pow_op_attrs[] = {
	HGC_ATTR_REQ("beta", FLOAT),
	HGC_ATTR_END,
};
UNARY(pow_op, f_pow, NULL, "beta", NULL)

const struct hgc_attr_spec hgc_op_clamp_attrs[] = {
	HGC_ATTR_REQ("min", FLOAT),
	HGC_ATTR_REQ("max", FLOAT),
	HGC_ATTR_END,
};
UNARY(clamp, f_clamp, check_clamp, "min", "max")

NO_ATTRS(round_op)
UNARY(round_op, f_round, NULL, NULL, NULL)
