/* ops_pool.c: MaxPool and AvgPool over the two spatial dims of a 4-D src. */
#include "graph_int.h"

#include <math.h>
#include <string.h>

static const int64_t ones2[] = {1, 1};

const struct hgc_attr_spec hgc_op_max_pool_attrs[] = {
	HGC_ATTR_REQ("strides", INTS),
	HGC_ATTR_REQ("kernel", INTS),
	HGC_ATTR_REQ("pads_begin", INTS),
	HGC_ATTR_REQ("pads_end", INTS),
	HGC_ATTR_INTS_DEF("dilations", ones2, 2),
	HGC_ATTR_STRING_DEF("rounding_type", "floor"),
	HGC_ATTR_STRING_DEF("auto_pad", "None"),
	HGC_ATTR_STRING_DEF("data_format", "NXC"),
	HGC_ATTR_END,
};

const struct hgc_attr_spec hgc_op_avg_pool_attrs[] = {
	HGC_ATTR_REQ("strides", INTS),
	HGC_ATTR_REQ("kernel", INTS),
	HGC_ATTR_REQ("pads_begin", INTS),
	HGC_ATTR_REQ("pads_end", INTS),
	HGC_ATTR_REQ("exclude_pad", BOOL),
	HGC_ATTR_STRING_DEF("rounding_type", "floor"),
	HGC_ATTR_STRING_DEF("auto_pad", "None"),
	HGC_ATTR_STRING_DEF("data_format", "NXC"),
	HGC_ATTR_END,
};

static const char *const data_formats[] = {"NXC", "NCX", NULL};
static const char *const roundings[] = {"floor", "ceil", NULL};

/* A pooling problem: the src as (N, C, H, W) with strides, and both windows. */
struct pool {
	int64_t n, c, h, w;		/* src sizes */
	int64_t sn, sc, sh, sw;		/* src strides */
	int64_t on, oc, oh, ow;		/* dst strides */
	struct hgc_win wh, ww;
};

/* Src strides of the canonical dims for a data format. */
static void pool_strides(const int64_t *d, bool nxc, int64_t *sn, int64_t *sc, int64_t *sh,
			 int64_t *sw)
{
	*sn = d[1] * d[2] * d[3];
	*sc = nxc ? 1 : d[2] * d[3];
	*sh = nxc ? d[2] * d[3] : d[3];
	*sw = nxc ? d[3] : 1;
}

/* The kernel: two positive sizes. */
static int check_kernel(const struct hgc_op *op, struct hgc_diag *d)
{
	char buf[HGC_DIMS_BUF];
	const int64_t *k;
	int n = hgc_op_ints(op, "kernel", &k);

	if (n != 2)
		return hgc_op_error(op, d, "kernel must have 2 values, got %d", n);
	if (k[0] < 1 || k[1] < 1)
		return hgc_op_error(op, d, "kernel must be positive, got %s",
				    hgc_dims_str(buf, n, k));
	if (k[0] > HGC_WIN_MAX || k[1] > HGC_WIN_MAX)
		return hgc_op_error(op, d, "kernel must be at most %lld, got %s",
				    (long long)HGC_WIN_MAX, hgc_dims_str(buf, n, k));
	return 0;
}

/* A window must see the input: pads smaller than the kernel extent. */
static int check_pads(const struct hgc_op *op, const struct hgc_win *w, struct hgc_diag *d)
{
	int64_t ext = (w->kernel - 1) * w->dilation + 1;

	if (w->pad_begin >= ext || w->user_pad_end >= ext)
		return hgc_op_error(op, d, "pads %lld+%lld must be smaller than the kernel extent %lld",
				    (long long)w->pad_begin, (long long)w->user_pad_end,
				    (long long)ext);
	return 0;
}

/* Decode and check a pooling op's src, attributes and geometry. */
static int pool_setup(const struct hgc_op *op, struct pool *p, struct hgc_diag *d)
{
	const struct hgc_tensor *s = op->in[0];
	int df, ceil_mode;
	const int64_t *k;
	bool nxc;

	if ((df = hgc_op_choice(op, "data_format", data_formats, d)) < 0 ||
	    (ceil_mode = hgc_op_choice(op, "rounding_type", roundings, d)) < 0 ||
	    check_kernel(op, d) || hgc_win_check_attrs(op, 2, d))
		return -1;
	if (s->ndims != 4)
		return hgc_op_error(op, d, "src must be 4-D, got %d-D", s->ndims);
	nxc = df == 0;
	p->n = s->dims[0];
	p->c = s->dims[nxc ? 3 : 1];
	p->h = s->dims[nxc ? 1 : 2];
	p->w = s->dims[nxc ? 2 : 3];
	pool_strides(s->dims, nxc, &p->sn, &p->sc, &p->sh, &p->sw);
	hgc_op_ints(op, "kernel", &k);
	if (hgc_win_setup(op, 0, p->h, k[0], ceil_mode, &p->wh, d) ||
	    hgc_win_setup(op, 1, p->w, k[1], ceil_mode, &p->ww, d) ||
	    check_pads(op, &p->wh, d) || check_pads(op, &p->ww, d))
		return -1;
	return 0;
}

/* Pooling: a numeric 4-D src; the output keeps its format, type and channels. */
static int pool_infer(struct hgc_op *op, struct hgc_diag *d)
{
	struct pool p;
	int64_t dims[4];
	bool nxc;

	if (hgc_op_want_dtype(op, 0, "src", HGC_DTM_NUM, d) || pool_setup(op, &p, d))
		return -1;
	nxc = !strcmp(hgc_op_string(op, "data_format"), "NXC");
	dims[0] = p.n;
	dims[nxc ? 3 : 1] = p.c;
	dims[nxc ? 1 : 2] = p.wh.out;
	dims[nxc ? 2 : 3] = p.ww.out;
	hgc_op_set_out_shape(op, 4, dims);
	return hgc_op_set_out_dtype(op, op->in[0]->dtype, d);
}

/*
 * One output of a pooling: the max of the window's input elements (padding
 * never counts), or their average divided by the elements counted: only
 * inputs with exclude_pad, else everything inside the explicit pads (not the
 * ceil extension).
 */
static double pool_point(const struct hgc_op *op, const struct pool *p, const void *src,
			 int64_t base, int64_t oh, int64_t ow, bool is_max, bool exclude)
{
	const struct hgc_win *wh = &p->wh, *ww = &p->ww;
	double acc = is_max ? -INFINITY : 0;
	int64_t kh, kw, cnt = 0;

	for (kh = 0; kh < wh->kernel; kh++) {
		int64_t ih = oh * wh->stride - wh->pad_begin + kh * wh->dilation;

		for (kw = 0; kw < ww->kernel; kw++) {
			int64_t iw = ow * ww->stride - ww->pad_begin + kw * ww->dilation;
			bool inside = ih >= 0 && ih < p->h && iw >= 0 && iw < p->w;
			double x;

			if (!exclude && !is_max && ih < p->h + wh->user_pad_end &&
			    iw < p->w + ww->user_pad_end)
				cnt++;
			if (!inside)
				continue;
			x = hgc_load_f64(op->in[0]->dtype, src, base + ih * p->sh + iw * p->sw);
			acc = is_max ? (x > acc || isnan(x) ? x : acc) : acc + x;
			cnt += exclude;
		}
	}
	return is_max ? acc : cnt ? acc / (double)cnt : 0;
}

/* Pooling reference over every (n, c, oh, ow). */
static void pool_ref(const struct hgc_op *op, const void *const *in, void *const *out,
		     bool is_max)
{
	const struct hgc_tensor *o = op->out[0];
	bool exclude = !is_max && hgc_op_bool(op, "exclude_pad");
	int64_t n, c, oh, ow, sn, sc, sh, sw;
	struct pool p;

	pool_setup(op, &p, NULL);
	pool_strides(o->dims, !strcmp(hgc_op_string(op, "data_format"), "NXC"), &sn, &sc, &sh,
		     &sw);
	for (n = 0; n < p.n; n++)
		for (c = 0; c < p.c; c++)
			for (oh = 0; oh < p.wh.out; oh++)
				for (ow = 0; ow < p.ww.out; ow++)
					hgc_store_f64(o->dtype, out[0], n * sn + c * sc + oh * sh + ow * sw,
						      pool_point(op, &p, in[0], n * p.sn + c * p.sc,
								 oh, ow, is_max, exclude));
}

/* MaxPool: the largest input in each window. */
int hgc_op_max_pool_infer(struct hgc_op *op, struct hgc_diag *d)
{
	return pool_infer(op, d);
}

/* MaxPool reference. */
void hgc_op_max_pool_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	pool_ref(op, in, out, true);
}

/* AvgPool: the mean of each window. */
int hgc_op_avg_pool_infer(struct hgc_op *op, struct hgc_diag *d)
{
	return pool_infer(op, d);
}

/* AvgPool reference. */
void hgc_op_avg_pool_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	pool_ref(op, in, out, false);
}
