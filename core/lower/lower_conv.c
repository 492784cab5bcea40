/*
 * lower_conv.c: the naive Convolution, the fallback when no template takes
 * the op: a parallel nest over the output with the sum over the group's
 * input channels and the kernel window inside (taps in the padding are
 * skipped), f32 for float inputs and s32 for int8 ones, then the bias.  The
 * views may slice the batch; everything else must be whole.  Grouped and
 * depthwise f32 convolutions on channels-last data (no template takes them)
 * run channels innermost instead: a row of accumulators per output pixel,
 * one pass over it per tap and input channel of the group, so that the
 * depthwise case (one input channel per group) is a vector loop over
 * contiguous channels; the sums are added in the interpreter's order.
 */
#include "lower_int.h"

#include <string.h>

/* Positions of the canonical dims in the 4-D views, and the geometry. */
struct conv {
	int sn, sc, sh, sw;		/* src and dst: N, C, H, W */
	int wo, wi, wh, ww;		/* weights: O, I, KH, KW */
	int64_t ic, ocg;		/* input channels per group, output channels per group */
	int64_t h, w;			/* input spatial size */
	int64_t oc;			/* output channels */
	struct hgc_win winh, winw;
	bool ints;
};

/* The most output channels the channels-last path keeps in one stack row. */
#define ROW_MAX 4096

/* Decode formats and geometry (the op passed inference). */
static void conv_setup(const struct hgc_op *op, struct conv *c)
{
	bool nxc = !strcmp(hgc_op_string(op, "data_format"), "NXC");
	bool xio = !strcmp(hgc_op_string(op, "weights_format"), "XIO");
	const int64_t *wd = op->in[1]->dims;

	c->sn = 0, c->sc = nxc ? 3 : 1, c->sh = nxc ? 1 : 2, c->sw = nxc ? 2 : 3;
	c->wo = xio ? 3 : 0, c->wi = xio ? 2 : 1, c->wh = xio ? 0 : 2, c->ww = xio ? 1 : 3;
	c->ic = wd[c->wi];
	c->oc = wd[c->wo];
	c->ocg = wd[c->wo] / hgc_op_int(op, "groups");
	c->h = op->in[0]->dims[c->sh];
	c->w = op->in[0]->dims[c->sw];
	if (hgc_win_setup(op, 0, c->h, wd[c->wh], false, &c->winh, NULL) ||
	    hgc_win_setup(op, 1, c->w, wd[c->ww], false, &c->winw, NULL))
		hgc_bug("lower: convolution geometry fails after inference");
	c->ints = op->in[0]->dtype == HGC_DT_U8 || op->in[0]->dtype == HGC_DT_S8;
}

/* View v must be graph tensor t, but for a slice of dim 0 when batch is set. */
static int whole(const struct hgc_op *op, const char *what, const struct hgc_lower_view *v,
		 const struct hgc_tensor *t, bool batch, struct hgc_diag *d)
{
	struct hgc_lower_view want = *v;

	want.ndims = t->ndims;
	memcpy(want.dims, t->dims, sizeof(want.dims));
	if (batch)
		want.dims[0] = v->dims[0];
	return lw_check_same(op, what, v, &want, d);
}

/* The views: whole but for the batch, which src and dst share. */
static int conv_check(const struct hgc_op *op, struct hgc_lower_view *const *in,
		      const struct hgc_lower_view *out, struct hgc_diag *d)
{
	if (whole(op, "the src", in[0], op->in[0], true, d) ||
	    whole(op, "the weights", in[1], op->in[1], false, d) ||
	    (op->nin > 2 && whole(op, "the bias", in[2], op->in[2], false, d)) ||
	    whole(op, "the output", out, op->out[0], true, d))
		return -1;
	if (in[0]->dims[0] != out->dims[0])
		return hgc_op_error(op, d, "the src and output views differ in batch");
	return 0;
}

/* 0 <= ih < H && 0 <= iw < W */
static struct hgc_tir_expr *inside(struct hgc_lower_ctx *cx, const struct conv *c,
				   struct hgc_tir_var *ih, struct hgc_tir_var *iw)
{
	struct hgc_tir_expr *e[4] = {
		lw_bin(cx, HGC_TIR_GE, lw_v(cx, ih), lw_i(cx, 0)),
		lw_bin(cx, HGC_TIR_LT, lw_v(cx, ih), lw_i(cx, c->h)),
		lw_bin(cx, HGC_TIR_GE, lw_v(cx, iw), lw_i(cx, 0)),
		lw_bin(cx, HGC_TIR_LT, lw_v(cx, iw), lw_i(cx, c->w)),
	};

	return lw_bin(cx, HGC_TIR_AND, lw_bin(cx, HGC_TIR_AND, e[0], e[1]),
		      lw_bin(cx, HGC_TIR_AND, e[2], e[3]));
}

/* An operand element in the accumulator's type. */
static struct hgc_tir_expr *operand(struct hgc_lower_ctx *cx, const struct conv *c,
				    const struct hgc_lower_view *v, struct hgc_tir_expr **idx)
{
	struct hgc_tir_expr *x = hgc_lower_view_load(cx, v, idx);

	if (v->dtype == (c->ints ? HGC_DT_S32 : HGC_DT_F32))
		return x;
	return lw_cast(cx, c->ints ? HGC_TIR_S32 : HGC_TIR_F32, x);
}

/* The taps of one output element: for ic, kh, kw inside the input, acc += src * wei. */
static void conv_taps(struct hgc_lower_ctx *cx, const struct conv *c,
		      struct hgc_lower_view *const *in, const struct lw_nest *o,
		      struct hgc_tir_var *acc)
{
	struct hgc_tir_var *ic = hgc_tir_var_new(cx->m, "ic", hgc_tir_ty(HGC_TIR_INDEX));
	struct hgc_tir_var *kh = hgc_tir_var_new(cx->m, "kh", hgc_tir_ty(HGC_TIR_INDEX));
	struct hgc_tir_var *kw = hgc_tir_var_new(cx->m, "kw", hgc_tir_ty(HGC_TIR_INDEX));
	struct hgc_tir_expr *si[4], *wi[4], *p;
	struct hgc_tir_var *ih, *iw, *oc = o->var[c->sc];
	struct hgc_tir_stmt *b = o->body;

	b = hgc_tir_body(hgc_tir_for(cx->m, b, ic, lw_i(cx, 0), lw_i(cx, c->ic), NULL));
	b = hgc_tir_body(hgc_tir_for(cx->m, b, kh, lw_i(cx, 0), lw_i(cx, c->winh.kernel), NULL));
	ih = lw_tap(cx, b, "ih", o->var[c->sh], kh, &c->winh);
	b = hgc_tir_body(hgc_tir_for(cx->m, b, kw, lw_i(cx, 0), lw_i(cx, c->winw.kernel), NULL));
	iw = lw_tap(cx, b, "iw", o->var[c->sw], kw, &c->winw);
	b = hgc_tir_body(hgc_tir_if(cx->m, b, inside(cx, c, ih, iw), false));
	si[c->sn] = lw_v(cx, o->var[c->sn]);
	si[c->sc] = lw_bin(cx, HGC_TIR_ADD, lw_bin(cx, HGC_TIR_MUL,
		lw_bin(cx, HGC_TIR_DIV, lw_v(cx, oc), lw_i(cx, c->ocg)), lw_i(cx, c->ic)),
		lw_v(cx, ic));
	si[c->sh] = lw_v(cx, ih);
	si[c->sw] = lw_v(cx, iw);
	wi[c->wo] = lw_v(cx, oc);
	wi[c->wi] = lw_v(cx, ic);
	wi[c->wh] = lw_v(cx, kh);
	wi[c->ww] = lw_v(cx, kw);
	p = lw_bin(cx, HGC_TIR_MUL, operand(cx, c, in[0], si), operand(cx, c, in[1], wi));
	hgc_tir_assign(cx->m, b, acc, lw_bin(cx, HGC_TIR_ADD, lw_v(cx, acc), p));
}

/* Whether the channels-last path takes the op: f32 everywhere, grouped,
   channels innermost in the src and the output, a row that fits the stack. */
static bool rows_path(const struct hgc_op *op, const struct conv *c,
		      struct hgc_lower_view *const *in, const struct hgc_lower_view *out)
{
	int i;

	if (c->ints || c->sc != 3 || hgc_op_int(op, "groups") < 2 || c->oc > ROW_MAX ||
	    out->dtype != HGC_DT_F32)
		return false;
	for (i = 0; i < op->nin; i++)
		if (in[i]->dtype != HGC_DT_F32)
			return false;
	return true;
}

/* for (name in 0..n) in b: its body. */
static struct hgc_tir_stmt *loop(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				 struct hgc_tir_var **v, const char *name, int64_t n)
{
	*v = hgc_tir_var_new(cx->m, name, hgc_tir_ty(HGC_TIR_INDEX));
	return hgc_tir_body(hgc_tir_for(cx->m, b, *v, lw_i(cx, 0), lw_i(cx, n), NULL));
}

/* b: the body of "if 0 <= i < n" over a tap's input index. */
static struct hgc_tir_stmt *within(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				   struct hgc_tir_var *i, int64_t n)
{
	struct hgc_tir_expr *e = lw_bin(cx, HGC_TIR_AND,
					lw_bin(cx, HGC_TIR_GE, lw_v(cx, i), lw_i(cx, 0)),
					lw_bin(cx, HGC_TIR_LT, lw_v(cx, i), lw_i(cx, n)));

	return hgc_tir_body(hgc_tir_if(cx->m, b, e, false));
}

/* One tap's pass over the row: for ic of the group, for oc:
   row[oc] += src[n, ih, iw, group(oc) * IC + ic] * wei[oc, ic, kh, kw]. */
static void row_tap(struct hgc_lower_ctx *cx, const struct conv *c,
		    struct hgc_lower_view *const *in, struct hgc_tir_stmt *b,
		    struct hgc_tir_var *const *v, struct hgc_tir_tensor *row)
{
	struct hgc_tir_var *ic, *oc;
	struct hgc_tir_expr *si[4], *wi[4], *p, *ri;

	b = loop(cx, b, &ic, "ic", c->ic);
	b = loop(cx, b, &oc, "oc", c->oc);
	si[c->sn] = lw_v(cx, v[0]);
	si[c->sh] = lw_v(cx, v[1]);
	si[c->sw] = lw_v(cx, v[2]);
	si[c->sc] = lw_bin(cx, HGC_TIR_ADD, lw_bin(cx, HGC_TIR_MUL,
		lw_bin(cx, HGC_TIR_DIV, lw_v(cx, oc), lw_i(cx, c->ocg)), lw_i(cx, c->ic)),
		lw_v(cx, ic));
	wi[c->wo] = lw_v(cx, oc);
	wi[c->wi] = lw_v(cx, ic);
	wi[c->wh] = lw_v(cx, v[3]);
	wi[c->ww] = lw_v(cx, v[4]);
	p = lw_bin(cx, HGC_TIR_MUL, operand(cx, c, in[0], si), operand(cx, c, in[1], wi));
	ri = lw_v(cx, oc);
	p = lw_bin(cx, HGC_TIR_ADD, hgc_tir_load(cx->m, row, 1, &ri), p);
	ri = lw_v(cx, oc);
	hgc_tir_store(cx->m, b, row, 1, &ri, p);
}

/* The taps of one output pixel (o: n, oh, ow) into row, padding skipped. */
static void row_taps(struct hgc_lower_ctx *cx, const struct conv *c,
		     struct hgc_lower_view *const *in, const struct lw_nest *o,
		     struct hgc_tir_stmt *b, struct hgc_tir_tensor *row)
{
	struct hgc_tir_var *v[5], *kh, *kw;

	v[0] = o->var[c->sn];
	b = loop(cx, b, &kh, "kh", c->winh.kernel);
	v[1] = lw_tap(cx, b, "ih", o->var[c->sh], kh, &c->winh);
	b = within(cx, b, v[1], c->h);
	b = loop(cx, b, &kw, "kw", c->winw.kernel);
	v[2] = lw_tap(cx, b, "iw", o->var[c->sw], kw, &c->winw);
	b = within(cx, b, v[2], c->w);
	v[3] = kh, v[4] = kw;
	row_tap(cx, c, in, b, v, row);
}

/* Grouped f32 on channels-last data: per output pixel a row of OC sums. */
static void lower_rows(struct hgc_lower_ctx *cx, const struct hgc_op *op, const struct conv *c,
		       struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
		       const struct hgc_lower_view *out)
{
	struct hgc_tir_tensor *row;
	struct hgc_tir_expr *idx[4], *v, *ri;
	struct hgc_tir_var *oc;
	struct hgc_tir_stmt *b;
	struct lw_nest o;

	lw_loops(cx, block, 3, out->dims, 3, cx->parallel_min, &o);
	row = hgc_tir_tensor_newc(cx->m, "row", hgc_tir_ty(HGC_TIR_F32), HGC_TIR_LOCAL, 1, &c->oc);
	hgc_tir_def_tensor(cx->m, o.body, row);
	b = loop(cx, o.body, &oc, "oc", c->oc);
	ri = lw_v(cx, oc);
	hgc_tir_store(cx->m, b, row, 1, &ri, lw_f(cx, 0));
	row_taps(cx, c, in, &o, o.body, row);
	b = loop(cx, o.body, &oc, "oc", c->oc);
	ri = lw_v(cx, oc);
	v = hgc_tir_load(cx->m, row, 1, &ri);
	if (op->nin > 2) {
		idx[0] = lw_v(cx, oc);
		v = lw_bin(cx, HGC_TIR_ADD, v, lw_load(cx, in[2], idx, LW_F32));
	}
	idx[0] = lw_v(cx, o.var[0]), idx[1] = lw_v(cx, o.var[1]), idx[2] = lw_v(cx, o.var[2]);
	idx[3] = lw_v(cx, oc);
	lw_store(cx, out, b, idx, v, LW_F32);
}

/* Convolution: direct sliding windows over groups, plus the bias. */
int hgc_lower_conv(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_tir_stmt *block,
		   struct hgc_lower_view *const *in, struct hgc_lower_view *out,
		   struct hgc_diag *d)
{
	struct hgc_tir_expr *idx[4], *v;
	struct hgc_tir_var *acc;
	enum lw_kind kind;
	struct lw_nest o;
	struct conv c;

	conv_setup(op, &c);
	if (conv_check(op, in, out, d))
		return -1;
	if (rows_path(op, &c, in, out)) {
		lower_rows(cx, op, &c, block, in, out);
		return 0;
	}
	lw_loops(cx, block, 4, out->dims, 4, cx->parallel_min, &o);
	acc = lw_mut(cx, o.body, "acc", c.ints ? hgc_tir_int(cx->m, HGC_TIR_S32, 0) : lw_f(cx, 0));
	conv_taps(cx, &c, in, &o, acc);
	kind = c.ints && (op->nin < 3 || in[2]->dtype == HGC_DT_S32) ? LW_INT : LW_F32;
	v = kind == LW_INT ? lw_cast(cx, HGC_TIR_INDEX, lw_v(cx, acc))
			   : c.ints ? lw_cast(cx, HGC_TIR_F32, lw_v(cx, acc)) : lw_v(cx, acc);
	if (op->nin > 2) {
		idx[0] = lw_v(cx, o.var[c.sc]);
		v = lw_bin(cx, HGC_TIR_ADD, v, lw_load(cx, in[2], idx, kind));
	}
	lw_index(cx, &o, idx);
	lw_store(cx, out, o.body, idx, v, kind);
	return 0;
}
