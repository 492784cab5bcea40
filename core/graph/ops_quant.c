/* ops_quant.c: Quantize, Dequantize and TypeCast. */
#include "graph_int.h"

#include <math.h>
#include <string.h>

static const char *const qtypes[] = {"per_tensor", "per_channel", NULL};

/* Quantize and Dequantize share oneDNN's schema; an empty zps means zeros. */
#define QUANT_ATTRS                                                                        \
	{                                                                                    \
		HGC_ATTR_STRING_DEF("qtype", "per_tensor"),                                  \
		HGC_ATTR_INT_DEF("axis", 1),                                                 \
		HGC_ATTR_REQ("scales", FLOATS),                                              \
		HGC_ATTR_INTS_DEF("zps", NULL, 0),                                           \
		HGC_ATTR_END,                                                                \
	}

const struct hgc_attr_spec hgc_op_quantize_attrs[] = QUANT_ATTRS;
const struct hgc_attr_spec hgc_op_dequantize_attrs[] = QUANT_ATTRS;

/* The quantization axis (-1 for per_tensor); -2 with d set on a bad qtype or axis. */
static int quant_axis(const struct hgc_op *op, struct hgc_diag *d)
{
	int q = hgc_op_choice(op, "qtype", qtypes, d), axis;
	int64_t a = hgc_op_int(op, "axis");

	if (q < 0)
		return -2;
	if (q == 0)
		return -1;
	if (hgc_norm_axis(a, op->in[0]->ndims, &axis)) {
		hgc_op_error(op, d, "axis %lld is out of range for a %d-D src", (long long)a,
			     op->in[0]->ndims);
		return -2;
	}
	return axis;
}

/* Scales: the right count, finite and non-zero. */
static int check_scales(const struct hgc_op *op, int axis, int64_t want, struct hgc_diag *d)
{
	int n = hgc_op_nfloats(op, "scales"), i;

	if (n != want && axis < 0)
		return hgc_op_error(op, d, "per_tensor quantization needs 1 scale, got %d", n);
	if (n != want)
		return hgc_op_error(op, d, "per_channel quantization along axis %d needs %lld scales, "
				    "got %d", axis, (long long)want, n);
	for (i = 0; i < n; i++) {
		double s = hgc_op_float_at(op, "scales", i);

		if (!isfinite(s) || s == 0)
			return hgc_op_error(op, d, "scales must be finite and non-zero, got %g", s);
	}
	return 0;
}

/* Zero points: none, or one per scale, each within the integer type's range. */
static int check_zps(const struct hgc_op *op, int axis, int64_t want, enum hgc_dtype dt,
		     struct hgc_diag *d)
{
	const int64_t *zp;
	int n = hgc_op_ints(op, "zps", &zp), i;
	int64_t lo = dt == HGC_DT_U8 ? 0 : dt == HGC_DT_S8 ? -128 : INT32_MIN;
	int64_t hi = dt == HGC_DT_U8 ? 255 : dt == HGC_DT_S8 ? 127 : INT32_MAX;

	if (n && n != want)
		return hgc_op_error(op, d, "%s quantization needs %lld zero points, got %d",
				    axis < 0 ? "per_tensor" : "per_channel", (long long)want, n);
	for (i = 0; i < n; i++)
		if (zp[i] < lo || zp[i] > hi)
			return hgc_op_error(op, d, "zero point %lld is out of range for %s",
					    (long long)zp[i], hgc_dtype_name(dt));
	return 0;
}

/* Check qtype, axis, scales and zps for an op quantizing to or from int type dt. */
static int check_qparams(const struct hgc_op *op, enum hgc_dtype dt, struct hgc_diag *d)
{
	int axis = quant_axis(op, d);
	int64_t want;

	if (axis == -2)
		return -1;
	want = axis < 0 ? 1 : op->in[0]->dims[axis];
	return check_scales(op, axis, want, d) || check_zps(op, axis, want, dt, d) ? -1 : 0;
}

/* Quantize: float src into a preset u8 or s8 output of the same shape. */
int hgc_op_quantize_infer(struct hgc_op *op, struct hgc_diag *d)
{
	enum hgc_dtype out = op->out[0]->dtype;

	if (hgc_op_want_dtype(op, 0, "src", HGC_DTM_FLOAT, d))
		return -1;
	if (out == HGC_DT_UNDEF)
		return hgc_op_error(op, d, "the output type must be given (u8 or s8)");
	if (out != HGC_DT_U8 && out != HGC_DT_S8)
		return hgc_op_error(op, d, "the output type must be u8 or s8, got %s",
				    hgc_dtype_name(out));
	if (check_qparams(op, out, d))
		return -1;
	hgc_op_set_out_shape(op, op->in[0]->ndims, op->in[0]->dims);
	return 0;
}

/* Dequantize: u8, s8 or s32 src into f32. */
int hgc_op_dequantize_infer(struct hgc_op *op, struct hgc_diag *d)
{
	if (hgc_op_want_dtype(op, 0, "src", HGC_DTM_INT8 | HGC_DTM(S32), d) ||
	    check_qparams(op, op->in[0]->dtype, d))
		return -1;
	hgc_op_set_out_shape(op, op->in[0]->ndims, op->in[0]->dims);
	return hgc_op_set_out_dtype(op, HGC_DT_F32, d);
}

/* Apply y = x / scale + zp (quantize) or y = (x - zp) * scale per element and channel. */
static void quant_ref(const struct hgc_op *op, const void *const *in, void *const *out,
		      bool quantize)
{
	const struct hgc_tensor *s = op->in[0], *o = op->out[0];
	int axis = quant_axis(op, NULL);
	int64_t outer = 1, inner = 1, c = 1, i, n = hgc_tensor_nelems(s);
	const int64_t *zps;
	int nz = hgc_op_ints(op, "zps", &zps);

	if (axis >= 0) {
		hgc_axis_split(s, axis, &outer, &inner);
		c = s->dims[axis];
	}
	for (i = 0; i < n; i++) {
		int ch = (int)(i / inner % c);
		double scale = hgc_op_float_at(op, "scales", ch), zp = nz ? (double)zps[ch] : 0;
		double x = hgc_load_f64(s->dtype, in[0], i);

		hgc_store_f64(o->dtype, out[0], i, quantize ? x / scale + zp : (x - zp) * scale);
	}
}

/* Quantize reference: round half to even, saturate. */
void hgc_op_quantize_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	quant_ref(op, in, out, true);
}

/* Dequantize reference. */
void hgc_op_dequantize_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	quant_ref(op, in, out, false);
}

const struct hgc_attr_spec hgc_op_type_cast_attrs[] = {HGC_ATTR_END};

/* TypeCast: f32 to or from bf16, s32, s8 or u8, into a preset type. */
int hgc_op_type_cast_infer(struct hgc_op *op, struct hgc_diag *d)
{
	enum hgc_dtype from = op->in[0]->dtype, to = op->out[0]->dtype;
	unsigned others = HGC_DTM(BF16) | HGC_DTM(S32) | HGC_DTM_INT8;

	if (to == HGC_DT_UNDEF)
		return hgc_op_error(op, d, "the output type must be given");
	if (!(from == HGC_DT_F32 && (others & 1u << to)) &&
	    !(to == HGC_DT_F32 && (others & 1u << from)))
		return hgc_op_error(op, d, "cannot cast %s to %s", hgc_dtype_name(from),
				    hgc_dtype_name(to));
	hgc_op_set_out_shape(op, op->in[0]->ndims, op->in[0]->dims);
	return 0;
}

/* TypeCast reference: exact widening; narrowing rounds to nearest even and saturates. */
void hgc_op_type_cast_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	const struct hgc_tensor *s = op->in[0];
	int64_t i, n = hgc_tensor_nelems(s);

	for (i = 0; i < n; i++)
		hgc_store_f64(op->out[0]->dtype, out[0], i, hgc_load_f64(s->dtype, in[0], i));
}
