/* window.c: sliding-window geometry shared by Convolution, MaxPool and AvgPool. */
#include "graph_int.h"

#include <string.h>

static const char *const auto_pads[] = {"None", "SAME_UPPER", "SAME_LOWER", "VALID", NULL};

enum { PAD_NONE, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };

/* A list attribute with exactly nsp values, each at least lo and at most HGC_WIN_MAX. */
static int check_list(const struct hgc_op *op, const char *name, int nsp, int64_t lo,
		      struct hgc_diag *d)
{
	char buf[HGC_DIMS_BUF];
	const int64_t *v;
	int n = hgc_op_ints(op, name, &v), i;

	if (n != nsp)
		return hgc_op_error(op, d, "%s must have %d values, got %d", name, nsp, n);
	for (i = 0; i < n; i++) {
		if (v[i] < lo)
			return hgc_op_error(op, d, "%s must be %s, got %s", name,
					    lo ? "positive" : "non-negative",
					    hgc_dims_str(buf, n, v));
		if (v[i] > HGC_WIN_MAX)
			return hgc_op_error(op, d, "%s must be at most %lld, got %s", name,
					    (long long)HGC_WIN_MAX, hgc_dims_str(buf, n, v));
	}
	return 0;
}

/* Check the window attributes an op has: strides, dilations, pads, auto_pad. */
int hgc_win_check_attrs(const struct hgc_op *op, int nsp, struct hgc_diag *d)
{
	if (check_list(op, "strides", nsp, 1, d))
		return -1;
	if (hgc_op_attr_spec(op->kind, "dilations") && check_list(op, "dilations", nsp, 1, d))
		return -1;
	if (check_list(op, "pads_begin", nsp, 0, d) || check_list(op, "pads_end", nsp, 0, d))
		return -1;
	return hgc_op_choice(op, "auto_pad", auto_pads, d) < 0 ? -1 : 0;
}

/* Element i of a list attribute, or dflt when the op has no such attribute. */
static int64_t list_at(const struct hgc_op *op, const char *name, int i, int64_t dflt)
{
	const int64_t *v;

	if (!hgc_op_attr_spec(op->kind, name))
		return dflt;
	hgc_op_ints(op, name, &v);
	return v[i];
}

/* Pads from auto_pad: explicit, none (VALID), or split to keep ceil(in / stride) outputs. */
static void auto_pad(const struct hgc_op *op, int i, int64_t ext, struct hgc_win *w)
{
	int mode = hgc_op_choice(op, "auto_pad", auto_pads, NULL);
	int64_t out, total;

	if (mode == PAD_NONE) {
		w->pad_begin = list_at(op, "pads_begin", i, 0);
		w->pad_end = list_at(op, "pads_end", i, 0);
	} else if (mode == PAD_VALID) {
		w->pad_begin = w->pad_end = 0;
	} else {
		out = (w->in + w->stride - 1) / w->stride;
		total = (out - 1) * w->stride + ext - w->in;
		if (total < 0)
			total = 0;
		w->pad_begin = mode == PAD_SAME_UPPER ? total / 2 : total - total / 2;
		w->pad_end = total - w->pad_begin;
	}
}

/*
 * Geometry of spatial dim i: out = (in + pads - extent) / stride + 1, rounded
 * down, or up for ceil_mode (the last window must still start inside the
 * input or the begin padding, as in PyTorch); pad_end grows to cover it.
 */
int hgc_win_setup(const struct hgc_op *op, int i, int64_t in, int64_t kernel, bool ceil_mode,
		  struct hgc_win *w, struct hgc_diag *d)
{
	int64_t ext, span;

	memset(w, 0, sizeof(*w));
	w->in = in;
	w->kernel = kernel;
	w->stride = list_at(op, "strides", i, 1);
	w->dilation = list_at(op, "dilations", i, 1);
	ext = (kernel - 1) * w->dilation + 1;
	auto_pad(op, i, ext, w);
	if (strncmp(hgc_op_string(op, "auto_pad"), "SAME", 4) == 0)
		ceil_mode = false;
	w->user_pad_end = w->pad_end;
	span = in + w->pad_begin + w->pad_end - ext;
	if (span < 0)
		return hgc_op_error(op, d,
				    "output spatial dim %d would be empty: input %lld + pads %lld+%lld"
				    " < kernel extent %lld",
				    i, (long long)in, (long long)w->pad_begin, (long long)w->pad_end,
				    (long long)ext);
	w->out = (ceil_mode ? (span + w->stride - 1) / w->stride : span / w->stride) + 1;
	if (ceil_mode && w->out > 1 && (w->out - 1) * w->stride >= in + w->pad_begin)
		w->out--;
	if ((w->out - 1) * w->stride + ext - in - w->pad_begin > w->pad_end)
		w->pad_end = (w->out - 1) * w->stride + ext - in - w->pad_begin;
	return 0;
}
