/*
 * 021-interp-mm: the reference interpreter against NumPy for MatMul,
 * Convolution, MaxPool and AvgPool: odd and size-1 shapes, transposes,
 * vectors, batch broadcasting, biases, data and weights formats, strides,
 * pads, dilations, groups, depthwise, auto_pad, ceil rounding, exclude_pad,
 * bf16 and direct int8 (u8/s8 to s32).
 */
#include "t/refcheck.h"

/* A random input of the given dtype and dims (values suited to the type). */
static struct hgc_tensor *tin(enum hgc_dtype dt, int nd, const int *dims)
{
	double lo = dt == HGC_DT_U8 ? 0 : dt == HGC_DT_S8 ? -128 : dt == HGC_DT_S32 ? -1000 : -2;
	double hi = dt == HGC_DT_U8 ? 255 : dt == HGC_DT_S8 ? 127 : dt == HGC_DT_S32 ? 1000 : 2;

	switch (nd) {
	case 0: return rc_in(dt, lo, hi, 0);
	case 1: return rc_in(dt, lo, hi, 1, dims[0]);
	case 2: return rc_in(dt, lo, hi, 2, dims[0], dims[1]);
	case 3: return rc_in(dt, lo, hi, 3, dims[0], dims[1], dims[2]);
	case 4: return rc_in(dt, lo, hi, 4, dims[0], dims[1], dims[2], dims[3]);
	default: return rc_in(dt, lo, hi, 5, dims[0], dims[1], dims[2], dims[3], dims[4]);
	}
}

/* "[2,3,4]" for a description. */
static const char *dstr(int nd, const int *d)
{
	static char buf[4][64];
	static int k;
	char *b = buf[k++ % 4];
	size_t n = 0;
	int i;

	b[n++] = '[';
	for (i = 0; i < nd; i++)
		n += (size_t)snprintf(b + n, 64 - n, "%s%d", i ? "," : "", d[i]);
	snprintf(b + n, 64 - n, "]");
	return b;
}

/* One MatMul case: operand shapes, transposes, optional bias shape (nb < 0: none). */
static void matmul(enum hgc_dtype da, enum hgc_dtype dw, enum hgc_dtype dout, int na,
		   const int *a, int nw, const int *w, bool ta, bool tb, enum hgc_dtype db, int nb,
		   const int *b)
{
	struct hgc_tensor *t[3];
	struct hgc_op *o;

	rc_graph();
	t[0] = tin(da, na, a);
	t[1] = tin(dw, nw, w);
	if (nb >= 0)
		t[2] = tin(db, nb, b);
	o = hgc_graph_add_op(rc.g, HGC_OP_MATMUL, nb >= 0 ? 3 : 2, t, dout, NULL);
	if (ta)
		rc_bool(o, "transpose_a", true);
	if (tb)
		rc_bool(o, "transpose_b", true);
	rc_check(o, "MatMul %s%s x %s%s%s%s%s%s", hgc_dtype_name(da), dstr(na, a), hgc_dtype_name(dw),
		 dstr(nw, w), ta ? " ta" : "", tb ? " tb" : "", nb >= 0 ? " bias" : "",
		 nb >= 0 ? dstr(nb, b) : "");
}

/* A plain 2-D f32 MatMul of MxK by KxN with the transposes applied to the stored shapes. */
static void mm2(int m, int k, int n, bool ta, bool tb)
{
	int a[2] = {ta ? k : m, ta ? m : k}, w[2] = {tb ? n : k, tb ? k : n};

	matmul(HGC_DT_F32, HGC_DT_F32, HGC_DT_UNDEF, 2, a, 2, w, ta, tb, HGC_DT_F32, -1, NULL);
}

/* MatMul: odd sizes, all transposes, vectors, batches, biases, bf16, int8. */
static void test_matmul(void)
{
	static const int mkn[][3] = {{1, 1, 1}, {1, 13, 97}, {3, 1, 5}, {13, 97, 3},
				     {97, 3, 13}, {3, 479, 5}, {13, 13, 479}, {16, 32, 64}};
	const enum hgc_dtype F = HGC_DT_F32, B = HGC_DT_BF16, U = HGC_DT_U8, S = HGC_DT_S8,
			     I = HGC_DT_S32, X = HGC_DT_UNDEF;
	int i;

	for (i = 0; i < 8; i++)
		mm2(mkn[i][0], mkn[i][1], mkn[i][2], i % 2, i % 4 >= 2);
	for (i = 0; i < 4; i++)
		mm2(13, 3, 5, i & 1, i & 2);
	matmul(F, F, X, 1, (int[]){13}, 2, (int[]){13, 5}, false, false, F, -1, NULL);
	matmul(F, F, X, 2, (int[]){3, 13}, 1, (int[]){13}, false, false, F, -1, NULL);
	matmul(F, F, X, 1, (int[]){97}, 1, (int[]){97}, false, false, F, -1, NULL);
	matmul(F, F, X, 4, (int[]){2, 3, 13, 5}, 1, (int[]){13}, true, false, F, -1, NULL);
	matmul(F, F, X, 1, (int[]){13}, 3, (int[]){4, 5, 13}, false, true, F, -1, NULL);
	matmul(F, F, X, 4, (int[]){2, 1, 3, 5}, 3, (int[]){4, 5, 7}, false, false, F, -1, NULL);
	matmul(F, F, X, 2, (int[]){3, 5}, 3, (int[]){4, 5, 7}, false, false, F, -1, NULL);
	matmul(F, F, X, 5, (int[]){5, 1, 3, 13, 3}, 5, (int[]){1, 4, 1, 7, 13}, true, true, F, -1,
	       NULL);
	matmul(F, F, X, 2, (int[]){13, 97}, 2, (int[]){97, 5}, false, false, F, 1, (int[]){5});
	matmul(F, F, X, 2, (int[]){13, 97}, 2, (int[]){97, 5}, false, false, F, 2, (int[]){13, 1});
	matmul(F, F, X, 2, (int[]){13, 97}, 2, (int[]){5, 97}, false, true, F, 1, (int[]){1});
	matmul(F, F, X, 3, (int[]){2, 3, 4}, 2, (int[]){4, 5}, false, false, F, 0, NULL);
	matmul(F, F, X, 4, (int[]){2, 3, 1, 4}, 2, (int[]){4, 6}, false, false, F, 4,
	       (int[]){2, 1, 1, 6});
	matmul(B, B, X, 2, (int[]){13, 97}, 2, (int[]){97, 5}, false, false, F, 1, (int[]){5});
	matmul(B, B, X, 3, (int[]){3, 97, 13}, 3, (int[]){3, 5, 97}, true, true, B, 1, (int[]){5});
	matmul(F, F, B, 2, (int[]){3, 13}, 2, (int[]){13, 5}, false, false, F, -1, NULL);
	matmul(U, S, X, 2, (int[]){13, 97}, 2, (int[]){97, 5}, false, false, F, -1, NULL);
	matmul(S, S, X, 2, (int[]){3, 479}, 2, (int[]){479, 13}, false, false, F, -1, NULL);
	matmul(U, U, X, 3, (int[]){2, 5, 13}, 2, (int[]){7, 13}, false, true, F, -1, NULL);
	matmul(S, U, X, 2, (int[]){13, 3}, 2, (int[]){13, 5}, true, false, I, 1, (int[]){5});
	matmul(U, S, F, 2, (int[]){13, 97}, 2, (int[]){97, 5}, false, false, F, 2, (int[]){13, 1});
	matmul(U, S, X, 1, (int[]){97}, 2, (int[]){97, 1}, false, false, I, 0, NULL);
}

/* The parameters of one Convolution case. */
struct conv {
	const char *fmt, *wfmt, *auto_pad;
	int n, c, h, w, o, kh, kw;
	int s[2], pb[2], pe[2], d[2];
	int groups;
	bool bias;
	enum hgc_dtype src, wei, out;
};

/* Build and check one Convolution case. */
static void conv(const struct conv *p)
{
	bool nxc = !strcmp(p->fmt, "NXC"), xio = !strcmp(p->wfmt, "XIO");
	int sd[4] = {p->n, nxc ? p->h : p->c, nxc ? p->w : p->h, nxc ? p->c : p->w};
	int cpg = p->c / p->groups;
	int wd[4] = {xio ? p->kh : p->o, xio ? p->kw : cpg, xio ? cpg : p->kh, xio ? p->o : p->kw};
	struct hgc_tensor *t[3];
	struct hgc_op *o;

	rc_graph();
	t[0] = tin(p->src, 4, sd);
	t[1] = tin(p->wei, 4, wd);
	if (p->bias)
		t[2] = tin(hgc_dtype_is_int(p->src) ? HGC_DT_S32 : HGC_DT_F32, 1, &p->o);
	o = hgc_graph_add_op(rc.g, HGC_OP_CONVOLUTION, p->bias ? 3 : 2, t, p->out, NULL);
	rc_str(o, "data_format", p->fmt);
	rc_str(o, "weights_format", p->wfmt);
	if (p->auto_pad)
		rc_str(o, "auto_pad", p->auto_pad);
	RC_INTS(o, "strides", p->s[0], p->s[1]);
	RC_INTS(o, "pads_begin", p->pb[0], p->pb[1]);
	RC_INTS(o, "pads_end", p->pe[0], p->pe[1]);
	RC_INTS(o, "dilations", p->d[0], p->d[1]);
	rc_int_attr(o, "groups", p->groups);
	rc_check(o, "Convolution %s %s/%s src %s weights %s s%d,%d p%d,%d/%d,%d d%d,%d g%d%s%s%s",
		 hgc_dtype_name(p->src), p->fmt, p->wfmt, dstr(4, sd), dstr(4, wd), p->s[0], p->s[1],
		 p->pb[0], p->pb[1], p->pe[0], p->pe[1], p->d[0], p->d[1], p->groups,
		 p->bias ? " bias" : "", p->auto_pad ? " " : "", p->auto_pad ? p->auto_pad : "");
}

/* Convolution: both formats of data and weights, windows, groups, auto_pad, types. */
static void test_conv(void)
{
	const enum hgc_dtype F = HGC_DT_F32, B = HGC_DT_BF16, U = HGC_DT_U8, S = HGC_DT_S8,
			     X = HGC_DT_UNDEF;
	const struct conv cases[] = {
		{"NCX", "OIX", NULL, 2, 3, 13, 13, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, true, F, F, X},
		{"NXC", "XIO", NULL, 1, 4, 13, 9, 7, 3, 5, {2, 2}, {0, 1}, {1, 0}, {1, 1}, 1, false, F, F, X},
		{"NCX", "XIO", NULL, 2, 4, 11, 12, 6, 3, 2, {1, 1}, {2, 0}, {0, 3}, {2, 3}, 2, true, F, F, X},
		{"NXC", "OIX", NULL, 1, 6, 9, 7, 6, 3, 3, {1, 2}, {1, 1}, {1, 1}, {1, 1}, 6, true, F, F, X},
		{"NXC", "XIO", NULL, 2, 6, 8, 8, 12, 3, 3, {2, 1}, {1, 0}, {0, 1}, {1, 2}, 6, false, F, F, X},
		{"NCX", "OIX", "SAME_UPPER", 1, 3, 8, 7, 4, 4, 3, {2, 2}, {0, 0}, {0, 0}, {1, 1}, 1, false, F, F, X},
		{"NXC", "XIO", "SAME_LOWER", 1, 3, 8, 7, 4, 4, 3, {2, 3}, {0, 0}, {0, 0}, {1, 1}, 1, true, F, F, X},
		{"NCX", "XIO", "VALID", 1, 2, 9, 10, 3, 3, 3, {3, 2}, {4, 4}, {4, 4}, {1, 1}, 1, false, F, F, X},
		{"NXC", "OIX", NULL, 1, 5, 13, 13, 3, 1, 1, {3, 3}, {0, 0}, {0, 0}, {1, 1}, 1, true, F, F, X},
		{"NCX", "OIX", NULL, 1, 1, 1, 1, 1, 3, 3, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, false, F, F, X},
		{"NCX", "OIX", NULL, 1, 2, 3, 4, 2, 2, 2, {1, 1}, {4, 3}, {3, 4}, {1, 1}, 1, false, F, F, X},
		{"NXC", "XIO", NULL, 2, 16, 7, 7, 13, 3, 3, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, true, U, S, X},
		{"NCX", "OIX", NULL, 1, 8, 6, 5, 4, 3, 3, {2, 1}, {1, 1}, {0, 1}, {1, 1}, 2, false, S, S, F},
		{"NXC", "OIX", NULL, 1, 8, 6, 5, 8, 3, 3, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 8, true, U, U, X},
		{"NXC", "XIO", NULL, 1, 5, 9, 9, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, true, B, B, X},
		{"NCX", "OIX", NULL, 1, 3, 1, 97, 4, 1, 5, {1, 4}, {0, 2}, {0, 2}, {1, 1}, 1, false, F, F, X},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		conv(&cases[i]);
}

/* The parameters of one pooling case. */
struct pool {
	bool is_max;
	const char *fmt, *rounding, *auto_pad;
	int n, c, h, w, kh, kw;
	int s[2], pb[2], pe[2], d[2];
	bool exclude;
	enum hgc_dtype dt;
};

/* Build and check one pooling case. */
static void pool(const struct pool *p)
{
	bool nxc = !strcmp(p->fmt, "NXC");
	int sd[4] = {p->n, nxc ? p->h : p->c, nxc ? p->w : p->h, nxc ? p->c : p->w};
	struct hgc_op *o;

	rc_graph();
	o = rc_op(p->is_max ? HGC_OP_MAX_POOL : HGC_OP_AVG_POOL, HGC_DT_UNDEF, 1, tin(p->dt, 4, sd));
	rc_str(o, "data_format", p->fmt);
	rc_str(o, "rounding_type", p->rounding);
	if (p->auto_pad)
		rc_str(o, "auto_pad", p->auto_pad);
	RC_INTS(o, "kernel", p->kh, p->kw);
	RC_INTS(o, "strides", p->s[0], p->s[1]);
	RC_INTS(o, "pads_begin", p->pb[0], p->pb[1]);
	RC_INTS(o, "pads_end", p->pe[0], p->pe[1]);
	if (p->is_max)
		RC_INTS(o, "dilations", p->d[0], p->d[1]);
	else
		rc_bool(o, "exclude_pad", p->exclude);
	rc_check(o, "%s %s %s %s k%d,%d s%d,%d p%d,%d/%d,%d d%d,%d %s%s %s",
		 p->is_max ? "MaxPool" : "AvgPool", hgc_dtype_name(p->dt), p->fmt, dstr(4, sd), p->kh,
		 p->kw, p->s[0], p->s[1], p->pb[0], p->pb[1], p->pe[0], p->pe[1], p->d[0], p->d[1],
		 p->rounding, p->is_max ? "" : p->exclude ? " exclude_pad" : " include_pad",
		 p->auto_pad ? p->auto_pad : "");
}

/* MaxPool and AvgPool: formats, rounding, padding counted or not, dilations, auto_pad. */
static void test_pool(void)
{
	const enum hgc_dtype F = HGC_DT_F32, B = HGC_DT_BF16, U = HGC_DT_U8, S = HGC_DT_S8;
	const struct pool cases[] = {
		{true, "NCX", "floor", NULL, 2, 3, 13, 9, 3, 3, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, F},
		{true, "NXC", "ceil", NULL, 1, 5, 13, 10, 3, 2, {2, 3}, {1, 0}, {0, 1}, {1, 1}, false, F},
		{true, "NCX", "ceil", NULL, 1, 2, 5, 5, 2, 2, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, F},
		{true, "NXC", "floor", NULL, 1, 3, 13, 13, 3, 2, {1, 2}, {2, 1}, {2, 1}, {2, 3}, false, F},
		{true, "NCX", "floor", "SAME_UPPER", 1, 3, 8, 7, 3, 3, {2, 2}, {0, 0}, {0, 0}, {1, 1}, false, F},
		{true, "NXC", "floor", NULL, 1, 16, 7, 7, 3, 3, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, S},
		{true, "NCX", "ceil", NULL, 1, 4, 9, 9, 2, 2, {2, 2}, {0, 0}, {0, 0}, {1, 1}, false, U},
		{true, "NCX", "floor", NULL, 1, 3, 6, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, B},
		{false, "NCX", "floor", NULL, 2, 3, 13, 9, 3, 3, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, F},
		{false, "NCX", "floor", NULL, 2, 3, 13, 9, 3, 3, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, F},
		{false, "NXC", "ceil", NULL, 1, 5, 13, 10, 3, 2, {2, 3}, {1, 0}, {0, 1}, {1, 1}, false, F},
		{false, "NXC", "ceil", NULL, 1, 5, 13, 10, 3, 2, {2, 3}, {1, 0}, {0, 1}, {1, 1}, true, F},
		{false, "NCX", "ceil", NULL, 1, 2, 5, 5, 2, 2, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, F},
		{false, "NCX", "ceil", NULL, 1, 2, 8, 8, 3, 3, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, F},
		{false, "NXC", "floor", "SAME_LOWER", 1, 3, 9, 7, 4, 3, {2, 2}, {0, 0}, {0, 0}, {1, 1}, false, F},
		{false, "NXC", "floor", "SAME_UPPER", 1, 3, 9, 7, 4, 3, {2, 2}, {0, 0}, {0, 0}, {1, 1}, true, F},
		{false, "NCX", "ceil", "VALID", 1, 3, 8, 7, 3, 3, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, F},
		{false, "NCX", "floor", NULL, 2, 7, 13, 13, 13, 13, {1, 1}, {0, 0}, {0, 0}, {1, 1}, false, F},
		{false, "NXC", "floor", NULL, 1, 16, 9, 9, 2, 2, {2, 2}, {1, 1}, {0, 0}, {1, 1}, true, U},
		{false, "NCX", "floor", NULL, 1, 3, 1, 97, 1, 5, {1, 4}, {0, 2}, {0, 2}, {1, 1}, false, B},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		pool(&cases[i]);
}

/* The classic block: MatMul, BiasAdd, ReLU, and a Convolution followed by pooling. */
static void test_blocks(void)
{
	struct hgc_tensor *h, *c;
	struct hgc_op *o;

	rc_graph();
	h = rc_done(rc_op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, rc_f32(2, 32, 13), rc_f32(2, 13, 97)));
	h = rc_done(rc_op(HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, h, rc_f32(1, 97)));
	rc_check(rc_op(HGC_OP_RELU, HGC_DT_UNDEF, 1, h), "MLP layer: MatMul, BiasAdd, ReLU");
	rc_graph();
	o = rc_op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 2, rc_f32(4, 1, 9, 9, 3), rc_f32(4, 3, 3, 3, 8));
	RC_INTS(o, "strides", 1, 1);
	RC_INTS(o, "pads_begin", 1, 1);
	RC_INTS(o, "pads_end", 1, 1);
	RC_INTS(o, "dilations", 1, 1);
	c = rc_done(o);
	c = rc_done(rc_op(HGC_OP_RELU, HGC_DT_UNDEF, 1, c));
	o = rc_op(HGC_OP_MAX_POOL, HGC_DT_UNDEF, 1, c);
	RC_INTS(o, "kernel", 2, 2);
	RC_INTS(o, "strides", 2, 2);
	RC_INTS(o, "pads_begin", 0, 0);
	RC_INTS(o, "pads_end", 0, 0);
	rc_str(o, "rounding_type", "ceil");
	rc_check(o, "conv block: Convolution, ReLU, MaxPool (NXC defaults)");
}

int main(int argc, char **argv)
{
	(void)argc;
	rc_init(argv[0], 0x2024021);
	test_matmul();
	test_conv();
	test_pool();
	test_blocks();
	rc_finish();
	return done_testing();
}
