/*
 * lower_quant.c: Quantize (x / scale + zp rounded half to even as if the sum
 * were exact, lw_add_round, and saturated by the store), Dequantize ((x - zp) * scale, the difference exact
 * in index) and TypeCast.  Per-channel scales and zero points become module
 * constants indexed by the channel's position in the whole tensor, so the
 * ops lower on slices too.
 */
#include "lower_int.h"

#include <stdlib.h>
#include <string.h>

/* Quantization parameters as the element function needs them. */
struct quant {
	int axis;			/* channel axis, -1 per tensor */
	struct hgc_tir_tensor *scales;	/* per channel: f32 [C] */
	struct hgc_tir_tensor *zps;	/* per channel: s32 [C] */
	double scale;			/* per tensor */
	int64_t zp;
	enum lw_zp zp_kind;		/* the zero points' parity, for lw_add_round */
	const struct hgc_lower_view *in;	/* for the channel's global index */
};

/* The channel axis (-1 per tensor) of a Quantize or Dequantize. */
static int quant_axis(const struct hgc_op *op)
{
	int axis;

	if (strcmp(hgc_op_string(op, "qtype"), "per_channel"))
		return -1;
	if (hgc_norm_axis(hgc_op_int(op, "axis"), op->in[0]->ndims, &axis))
		hgc_bug("lower: quantization axis out of range after inference");
	return axis;
}

/* Module constants for per-channel scales (f32) and zero points (s32). */
static void quant_consts(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct quant *q)
{
	int64_t c = op->in[0]->dims[q->axis], i;
	const int64_t *zps;
	int nz = hgc_op_ints(op, "zps", &zps);
	float *s = hgc_xcalloc((size_t)c + 1, sizeof(*s));
	int32_t *z = hgc_xcalloc((size_t)c + 1, sizeof(*z));

	for (i = 0; i < c; i++) {
		s[i] = (float)hgc_op_float_at(op, "scales", (int)i);
		z[i] = nz ? (int32_t)zps[i] : 0;
	}
	q->scales = hgc_tir_module_add_const(cx->m, "scales", hgc_tir_ty(HGC_TIR_F32), 1, &c, s);
	q->zps = hgc_tir_module_add_const(cx->m, "zps", hgc_tir_ty(HGC_TIR_S32), 1, &c, z);
	free(s);
	free(z);
}

/* Decode the op's parameters. */
static void quant_setup(struct hgc_lower_ctx *cx, const struct hgc_op *op,
			const struct hgc_lower_view *in, struct quant *q)
{
	const int64_t *zps;

	memset(q, 0, sizeof(*q));
	q->axis = quant_axis(op);
	q->in = in;
	if (q->axis >= 0) {
		quant_consts(cx, op, q);
		return;
	}
	q->scale = hgc_op_float_at(op, "scales", 0);
	q->zp = hgc_op_ints(op, "zps", &zps) ? zps[0] : 0;
}

/* The parity of every zero point (none: 0, even). */
static enum lw_zp zps_kind(const struct hgc_op *op)
{
	const int64_t *zps;
	int n = hgc_op_ints(op, "zps", &zps), i;
	double *v = hgc_xcalloc((size_t)n + 1, sizeof(*v));
	enum lw_zp k;

	for (i = 0; i < n; i++)
		v[i] = (double)zps[i];
	k = lw_zp_kind(v, n);
	free(v);
	return k;
}

/* The scale (f32) and zero point (index) of the element the nest is at. */
static void quant_params(struct hgc_lower_ctx *cx, const struct quant *q,
			 const struct lw_nest *nest, struct hgc_tir_expr **scale,
			 struct hgc_tir_expr **zp)
{
	struct hgc_tir_expr *ch;

	if (q->axis < 0) {
		*scale = lw_f(cx, q->scale);
		*zp = lw_i(cx, q->zp);
		return;
	}
	ch = hgc_lower_view_global(cx, q->in, q->axis, lw_v(cx, nest->var[q->axis]));
	*scale = hgc_tir_loadv(cx->m, q->scales, 1, ch);
	ch = hgc_lower_view_global(cx, q->in, q->axis, lw_v(cx, nest->var[q->axis]));
	*zp = lw_cast(cx, HGC_TIR_INDEX, hgc_tir_loadv(cx->m, q->zps, 1, ch));
}

/* x / scale in f32, plus zp rounded as if exact: an f32 add would round first. */
static struct hgc_tir_expr *quant_elem(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				       struct hgc_tir_var *const *x, const struct lw_map *mp)
{
	const struct quant *q = mp->ctx;
	struct hgc_tir_expr *scale, *zp;

	quant_params(cx, q, mp->nest, &scale, &zp);
	return lw_add_round(cx, b, lw_bin(cx, HGC_TIR_DIV, lw_v(cx, x[0]), scale),
			    lw_cast(cx, HGC_TIR_F32, zp), q->zp_kind);
}

/* (x - zp) * scale: the difference exact in index, then f32. */
static struct hgc_tir_expr *dequant_elem(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
					 struct hgc_tir_var *const *x, const struct lw_map *mp)
{
	struct hgc_tir_expr *scale, *zp;

	(void)b;
	quant_params(cx, mp->ctx, mp->nest, &scale, &zp);
	return lw_bin(cx, HGC_TIR_MUL,
		      lw_cast(cx, HGC_TIR_F32, lw_bin(cx, HGC_TIR_SUB, lw_v(cx, x[0]), zp)), scale);
}

/* Quantize and Dequantize share the checks and the map. */
static int quant_run(struct hgc_lower_ctx *cx, const struct hgc_op *op,
		     struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
		     struct hgc_lower_view *out, enum lw_kind in_kind, lw_elem_fn *fn,
		     struct hgc_diag *d)
{
	struct lw_map mp = { .op = op, .nin = 1, .in = in, .out = out, .out_kind = LW_F32,
			     .fn = fn };
	struct quant q;

	if (lw_check_same(op, "the output", out, in[0], d))
		return -1;
	if (in[0]->ndims != op->in[0]->ndims)
		return hgc_op_error(op, d, "the input view has %d dims, not %d", in[0]->ndims,
				    op->in[0]->ndims);
	if (in_kind == LW_INT && (in[0]->dtype == HGC_DT_F32 || in[0]->dtype == HGC_DT_BF16))
		return hgc_op_error(op, d, "the input view must hold integers");
	quant_setup(cx, op, in[0], &q);
	q.zp_kind = zps_kind(op);
	mp.in_kind[0] = in_kind;
	mp.ctx = &q;
	return lw_map_run(cx, block, &mp, d);
}

/* Quantize: f32 math, the store rounds half to even and saturates. */
int hgc_lower_quantize(struct hgc_lower_ctx *cx, const struct hgc_op *op,
		       struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
		       struct hgc_lower_view *out, struct hgc_diag *d)
{
	return quant_run(cx, op, block, in, out, LW_F32, quant_elem, d);
}

/* Dequantize. */
int hgc_lower_dequantize(struct hgc_lower_ctx *cx, const struct hgc_op *op,
			 struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
			 struct hgc_lower_view *out, struct hgc_diag *d)
{
	return quant_run(cx, op, block, in, out, LW_INT, dequant_elem, d);
}

/* TypeCast: a converting copy. */
int hgc_lower_type_cast(struct hgc_lower_ctx *cx, const struct hgc_op *op,
			struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
			struct hgc_lower_view *out, struct hgc_diag *d)
{
	if (lw_check_same(op, "the output", out, in[0], d))
		return -1;
	return hgc_lower_copy(cx, block, in[0], out, d);
}
