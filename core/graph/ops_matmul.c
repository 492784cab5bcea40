/* ops_matmul.c: MatMul and Convolution (the tunable ops): schemas, shape inference, references. */
#include "graph_int.h"

#include <stdlib.h>
#include <string.h>

const struct hgc_attr_spec hgc_op_matmul_attrs[] = {
	HGC_ATTR_BOOL_DEF("transpose_a", false),
	HGC_ATTR_BOOL_DEF("transpose_b", false),
	HGC_ATTR_END,
};

const struct hgc_attr_spec hgc_op_conv_attrs[] = {
	HGC_ATTR_REQ("strides", INTS),
	HGC_ATTR_REQ("pads_begin", INTS),
	HGC_ATTR_REQ("pads_end", INTS),
	HGC_ATTR_REQ("dilations", INTS),
	HGC_ATTR_STRING_DEF("auto_pad", "None"),
	HGC_ATTR_INT_DEF("groups", 1),
	HGC_ATTR_STRING_DEF("data_format", "NXC"),
	HGC_ATTR_STRING_DEF("weights_format", "XIO"),
	HGC_ATTR_END,
};

/*
 * Types of src x weights (+ bias): f32 x f32 and bf16 x bf16 give the input
 * type; u8/s8 x u8/s8 accumulate in s32 and give s32, or f32 if preset.
 */
static int mm_dtypes(struct hgc_op *op, struct hgc_diag *d)
{
	enum hgc_dtype a = op->in[0]->dtype, b = op->in[1]->dtype, out = op->out[0]->dtype;
	bool ints = a == HGC_DT_U8 || a == HGC_DT_S8;

	if (hgc_op_want_dtype(op, 0, "src", HGC_DTM_FLOAT | HGC_DTM_INT8, d))
		return -1;
	if (hgc_op_want_dtype(op, 1, "weights", ints ? HGC_DTM_INT8 : 1u << a, d))
		return -1;
	if (op->nin > 2 && hgc_op_want_dtype(op, 2, "bias", ints ? HGC_DTM(S32) | HGC_DTM(F32)
						 : HGC_DTM(F32) | 1u << a, d))
		return -1;
	(void)b;
	if (!ints)
		return hgc_op_set_out_dtype(op, a, d);
	if (out == HGC_DT_F32)
		return 0;
	return hgc_op_set_out_dtype(op, HGC_DT_S32, d);
}

/* Matrix dims of one operand: rows and columns after the transpose; 1-D is a vector. */
static void mat_dims(const struct hgc_tensor *t, bool trans, bool is_a, int64_t *rows,
		     int64_t *cols)
{
	int r = t->ndims;

	if (r == 1) {
		*rows = is_a ? 1 : t->dims[0];
		*cols = is_a ? t->dims[0] : 1;
		return;
	}
	*rows = trans ? t->dims[r - 1] : t->dims[r - 2];
	*cols = trans ? t->dims[r - 2] : t->dims[r - 1];
}

/* Does t broadcast (one way) to the shape n, dims? */
static bool broadcasts_to(const struct hgc_tensor *t, int n, const int64_t *dims)
{
	int i, lead = n - t->ndims;

	if (lead < 0)
		return false;
	for (i = 0; i < t->ndims; i++)
		if (t->dims[i] != 1 && t->dims[i] != dims[lead + i])
			return false;
	return true;
}

/* Output shape of MatMul: broadcast batch dims, then M and N (dropped for 1-D operands). */
static int matmul_shape(struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_tensor *a = op->in[0], *b = op->in[1];
	char b1[HGC_DIMS_BUF], b2[HGC_DIMS_BUF];
	int64_t m, k, k2, n, dims[HGC_MAX_DIMS + 2];
	int nd, na = a->ndims > 2 ? a->ndims - 2 : 0, nb = b->ndims > 2 ? b->ndims - 2 : 0;

	if (a->ndims < 1 || b->ndims < 1)
		return hgc_op_error(op, d, "%s must have at least 1 dim", a->ndims ? "weights" : "src");
	mat_dims(a, hgc_op_bool(op, "transpose_a"), true, &m, &k);
	mat_dims(b, hgc_op_bool(op, "transpose_b"), false, &k2, &n);
	if (k != k2)
		return hgc_op_error(op, d, "inner dimensions differ: %lld vs %lld", (long long)k,
				    (long long)k2);
	if (hgc_broadcast(na, a->dims, nb, b->dims, &nd, dims))
		return hgc_op_error(op, d, "batch dimensions do not broadcast: %s vs %s",
				    hgc_dims_str(b1, na, a->dims), hgc_dims_str(b2, nb, b->dims));
	if (a->ndims > 1)
		dims[nd++] = m;
	if (b->ndims > 1)
		dims[nd++] = n;
	if (nd > HGC_MAX_DIMS)
		return hgc_op_error(op, d, "output would have %d dims", nd);
	if (op->nin > 2 && !broadcasts_to(op->in[2], nd, dims))
		return hgc_op_error(op, d, "bias %s does not broadcast to the output %s",
				    hgc_dims_str(b1, op->in[2]->ndims, op->in[2]->dims),
				    hgc_dims_str(b2, nd, dims));
	hgc_op_set_out_shape(op, nd, dims);
	return 0;
}

/* MatMul: check types and shapes, set the output. */
int hgc_op_matmul_infer(struct hgc_op *op, struct hgc_diag *d)
{
	if (mm_dtypes(op, d))
		return -1;
	return matmul_shape(op, d);
}

/* Matrix offset of batch index bi of t within the output batch dims (0 where broadcast). */
static int64_t batch_offset(const struct hgc_tensor *t, int nbo, const int64_t *bdims, int64_t bi,
			    int64_t matsize)
{
	int nbt = t->ndims > 2 ? t->ndims - 2 : 0, i;
	int64_t off = 0, stride = matsize;

	for (i = nbo - 1; i >= 0; i--) {
		int64_t idx = bi % bdims[i];
		int j = i - (nbo - nbt);

		bi /= bdims[i];
		if (j < 0)
			break;
		if (t->dims[j] != 1)
			off += idx * stride;
		stride *= t->dims[j];
	}
	return off;
}

/* Operand strides (rows, cols) in elements for a dense operand, transposed or not. */
static void mat_strides(const struct hgc_tensor *t, bool trans, int64_t rows, int64_t cols,
			int64_t *srow, int64_t *scol)
{
	if (t->ndims == 1) {
		*srow = rows == 1 ? 0 : 1;
		*scol = cols == 1 ? 0 : 1;
		return;
	}
	*srow = trans ? 1 : cols;
	*scol = trans ? rows : 1;
}

/* Add the (broadcast) bias to acc and store it into the output buffer. */
static void store_with_bias(const struct hgc_op *op, const double *acc, const void *bias,
			    void *out)
{
	const struct hgc_tensor *t = op->out[0];
	const struct hgc_tensor *src[1];
	struct hgc_bcast it;
	int64_t i, n = hgc_tensor_nelems(t);

	if (op->nin < 3) {
		for (i = 0; i < n; i++)
			hgc_store_f64(t->dtype, out, i, acc[i]);
		return;
	}
	src[0] = op->in[2];
	hgc_bcast_init(&it, t, 1, src);
	for (i = 0; i < n; i++, hgc_bcast_next(&it))
		hgc_store_f64(t->dtype, out, i,
			      acc[i] + hgc_load_f64(op->in[2]->dtype, bias, it.off[0]));
}

/*
 * MatMul reference: products summed in double in k order (exact for int8),
 * then rounded once; the i-k-j loop order reads B rows contiguously.
 */
void hgc_op_matmul_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	const struct hgc_tensor *a = op->in[0], *b = op->in[1], *o = op->out[0];
	bool ta = hgc_op_bool(op, "transpose_a"), tb = hgc_op_bool(op, "transpose_b");
	int64_t m, k, n, k2, asr, asc, bsr, bsc, bi, i, j, p, nbatch, bdims[HGC_MAX_DIMS];
	int nbo;
	double *av, *bv, *acc;

	mat_dims(a, ta, true, &m, &k);
	mat_dims(b, tb, false, &k2, &n);
	nbo = o->ndims - (a->ndims > 1) - (b->ndims > 1);
	memcpy(bdims, o->dims, sizeof(bdims));
	nbatch = hgc_dims_prod(nbo, bdims);
	mat_strides(a, ta, m, k, &asr, &asc);
	mat_strides(b, tb, k, n, &bsr, &bsc);
	av = hgc_load_all(a->dtype, in[0], hgc_tensor_nelems(a));
	bv = hgc_load_all(b->dtype, in[1], hgc_tensor_nelems(b));
	acc = hgc_xcalloc((size_t)(nbatch * m * n) + 1, sizeof(double));
	for (bi = 0; bi < nbatch; bi++) {
		const double *pa = av + batch_offset(a, nbo, bdims, bi, m * k);
		const double *pb = bv + batch_offset(b, nbo, bdims, bi, k * n);
		double *pc = acc + bi * m * n;

		for (i = 0; i < m; i++)
			for (p = 0; p < k; p++)
				for (j = 0; j < n; j++)
					pc[i * n + j] += pa[i * asr + p * asc] * pb[p * bsr + j * bsc];
	}
	store_with_bias(op, acc, op->nin > 2 ? in[2] : NULL, out[0]);
	free(av);
	free(bv);
	free(acc);
}

/* Element strides of a 4-D tensor's dims in canonical order (N,C,H,W or O,I,KH,KW). */
struct conv_layout {
	int64_t n, c, h, w;		/* sizes in canonical order */
	int64_t sn, sc, sh, sw;		/* strides of the same dims in memory */
};

/* Read a 4-D tensor as (outer, channel, h, w), with the channel last if chan_last. */
static void conv_layout(const struct hgc_tensor *t, bool chan_last, struct conv_layout *l)
{
	const int64_t *d = t->dims;

	if (!chan_last) {
		l->n = d[0], l->c = d[1], l->h = d[2], l->w = d[3];
		l->sw = 1, l->sh = d[3], l->sc = d[2] * d[3], l->sn = d[1] * d[2] * d[3];
	} else {
		l->n = d[0], l->h = d[1], l->w = d[2], l->c = d[3];
		l->sc = 1, l->sw = d[3], l->sh = d[2] * d[3], l->sn = d[1] * d[2] * d[3];
	}
}

/* Weights as (O, I, KH, KW) whatever the weights_format: OIX, or XIO = [KH, KW, I, O]. */
static void weights_layout(const struct hgc_tensor *t, bool xio, struct conv_layout *l)
{
	const int64_t *d = t->dims;

	if (!xio) {
		conv_layout(t, false, l);
		return;
	}
	l->h = d[0], l->w = d[1], l->c = d[2], l->n = d[3];
	l->sn = 1, l->sc = d[3], l->sw = d[2] * d[3], l->sh = d[1] * d[2] * d[3];
}

static const char *const data_formats[] = {"NXC", "NCX", NULL};
static const char *const weights_formats[] = {"XIO", "OIX", NULL};

/* Convolution: the layouts of src and weights; -1 with d set. */
static int conv_layouts(const struct hgc_op *op, struct conv_layout *s, struct conv_layout *w,
			struct hgc_diag *d)
{
	int df = hgc_op_choice(op, "data_format", data_formats, d), wf;

	if (df < 0 || (wf = hgc_op_choice(op, "weights_format", weights_formats, d)) < 0)
		return -1;
	if (op->in[0]->ndims != 4)
		return hgc_op_error(op, d, "src must be 4-D, got %d-D", op->in[0]->ndims);
	if (op->in[1]->ndims != 4)
		return hgc_op_error(op, d, "weights must be 4-D, got %d-D", op->in[1]->ndims);
	conv_layout(op->in[0], df == 0, s);
	weights_layout(op->in[1], wf == 0, w);
	return 0;
}

/* Convolution: channel counts against groups, and the bias size. */
static int conv_channels(const struct hgc_op *op, const struct conv_layout *s,
			 const struct conv_layout *w, struct hgc_diag *d)
{
	int64_t g = hgc_op_int(op, "groups");
	char buf[HGC_DIMS_BUF];

	if (g < 1)
		return hgc_op_error(op, d, "groups must be positive, got %lld", (long long)g);
	if (w->h < 1 || w->w < 1)
		return hgc_op_error(op, d, "the kernel must not be empty, got %lldx%lld",
				    (long long)w->h, (long long)w->w);
	if (s->c % g)
		return hgc_op_error(op, d, "src channels %lld are not divisible by groups %lld",
				    (long long)s->c, (long long)g);
	if (w->c * g != s->c)
		return hgc_op_error(op, d,
				    "weights have %lld input channels, expected %lld (src channels "
				    "%lld / groups %lld)",
				    (long long)w->c, (long long)(s->c / g), (long long)s->c,
				    (long long)g);
	if (w->n % g)
		return hgc_op_error(op, d, "output channels %lld are not divisible by groups %lld",
				    (long long)w->n, (long long)g);
	if (op->nin > 2 && (op->in[2]->ndims != 1 || op->in[2]->dims[0] != w->n))
		return hgc_op_error(op, d, "bias must be [%lld], got %s", (long long)w->n,
				    hgc_dims_str(buf, op->in[2]->ndims, op->in[2]->dims));
	return 0;
}

/* Convolution: check types, formats, channels and the window; set the output. */
int hgc_op_conv_infer(struct hgc_op *op, struct hgc_diag *d)
{
	struct conv_layout s, w;
	struct hgc_win wh, ww;
	int64_t dims[4];
	bool nxc;

	if (mm_dtypes(op, d) || conv_layouts(op, &s, &w, d) || conv_channels(op, &s, &w, d))
		return -1;
	if (hgc_win_check_attrs(op, 2, d) || hgc_win_setup(op, 0, s.h, w.h, false, &wh, d) ||
	    hgc_win_setup(op, 1, s.w, w.w, false, &ww, d))
		return -1;
	nxc = !strcmp(hgc_op_string(op, "data_format"), "NXC");
	dims[0] = s.n;
	dims[nxc ? 3 : 1] = w.n;
	dims[nxc ? 1 : 2] = wh.out;
	dims[nxc ? 2 : 3] = ww.out;
	hgc_op_set_out_shape(op, 4, dims);
	return 0;
}

/* One output element of a convolution: the sum over the group's channels and the window. */
static double conv_point(const double *src, const double *wei, const struct conv_layout *s,
			 const struct conv_layout *w, const struct hgc_win *wh,
			 const struct hgc_win *ww, int64_t n, int64_t o, int64_t oh, int64_t ow,
			 int64_t ocpg)
{
	int64_t g = o / ocpg, ic, kh, kw;
	double acc = 0;

	for (ic = 0; ic < w->c; ic++) {
		for (kh = 0; kh < w->h; kh++) {
			int64_t ih = oh * wh->stride - wh->pad_begin + kh * wh->dilation;

			if (ih < 0 || ih >= s->h)
				continue;
			for (kw = 0; kw < w->w; kw++) {
				int64_t iw = ow * ww->stride - ww->pad_begin + kw * ww->dilation;

				if (iw < 0 || iw >= s->w)
					continue;
				acc += src[n * s->sn + (g * w->c + ic) * s->sc + ih * s->sh + iw * s->sw] *
				       wei[o * w->sn + ic * w->sc + kh * w->sh + kw * w->sw];
			}
		}
	}
	return acc;
}

/* Convolution reference: direct sliding windows, summed in double, bias added, rounded once. */
void hgc_op_conv_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	struct conv_layout s, w, o;
	struct hgc_win wh, ww;
	double *src, *wei, *bias = NULL;
	int64_t n, oc, oh, ow, ocpg;

	conv_layouts(op, &s, &w, NULL);
	hgc_win_setup(op, 0, s.h, w.h, false, &wh, NULL);
	hgc_win_setup(op, 1, s.w, w.w, false, &ww, NULL);
	conv_layout(op->out[0], !strcmp(hgc_op_string(op, "data_format"), "NXC"), &o);
	src = hgc_load_all(op->in[0]->dtype, in[0], hgc_tensor_nelems(op->in[0]));
	wei = hgc_load_all(op->in[1]->dtype, in[1], hgc_tensor_nelems(op->in[1]));
	if (op->nin > 2)
		bias = hgc_load_all(op->in[2]->dtype, in[2], w.n);
	ocpg = w.n / hgc_op_int(op, "groups");
	for (n = 0; n < o.n; n++)
		for (oc = 0; oc < o.c; oc++)
			for (oh = 0; oh < o.h; oh++)
				for (ow = 0; ow < o.w; ow++)
					hgc_store_f64(op->out[0]->dtype, out[0],
						      n * o.sn + oc * o.sc + oh * o.sh + ow * o.sw,
						      conv_point(src, wei, &s, &w, &wh, &ww, n, oc, oh,
								 ow, ocpg) +
							      (bias ? bias[oc] : 0));
	free(src);
	free(wei);
	free(bias);
}
