/*
 * 020-interp: the reference interpreter against NumPy for the fusible ops:
 * elementwise, binary with broadcasting, BiasAdd, softmax and norms,
 * reductions, data movement, TypeCast; and the interpreter itself: an output
 * that is also an input, an intermediate used twice, embedded constants and
 * its errors.  The tunable ops are in 021, quantization in 022.
 */
#include "t/refcheck.h"

/* Shapes for elementwise cases: sizes 1, 3, 13, 97, 479 and a scalar. */
static const int shapes[][4] = {
	{2, 3, 97}, {1, 1}, {3, 13, 1, 5}, {1, 479}, {0}, {2, 97, 3},
};

/* An input of shape s (shapes[] row) with values in [lo, hi]. */
static struct hgc_tensor *shaped(enum hgc_dtype dt, const int *s, double lo, double hi)
{
	switch (s[0]) {
	case 0: return rc_in(dt, lo, hi, 0);
	case 1: return rc_in(dt, lo, hi, 1, s[1]);
	case 2: return rc_in(dt, lo, hi, 2, s[1], s[2]);
	default: return rc_in(dt, lo, hi, 3, s[1], s[2], s[3]);
	}
}

/* One unary case per shape row in [first, last], alternating f32 and bf16. */
static void unary(enum hgc_op_kind k, double lo, double hi, int first, int last,
		  void (*attrs)(struct hgc_op *), const char *what)
{
	int i;

	for (i = first; i <= last; i++) {
		enum hgc_dtype dt = i % 2 ? HGC_DT_BF16 : HGC_DT_F32;
		struct hgc_op *o;

		rc_graph();
		o = rc_op(k, HGC_DT_UNDEF, 1, shaped(dt, shapes[i], lo, hi));
		if (attrs)
			attrs(o);
		rc_check(o, "%s %s%s on shape %d", hgc_op_table[k].name, hgc_dtype_name(dt), what, i);
	}
}

/* Attribute setters for the unary cases. */
static void leaky(struct hgc_op *o) { rc_float(o, "alpha", 0.1); }
static void leaky_neg(struct hgc_op *o) { rc_float(o, "alpha", -0.75); }
static void gelu_tanh(struct hgc_op *o) { rc_str(o, "mode", "gelu_tanh"); }
static void elu(struct hgc_op *o) { rc_float(o, "alpha", 1.5); }
static void hsig(struct hgc_op *o) { rc_float(o, "alpha", 0.2); rc_float(o, "beta", 0.5); }
static void splus2(struct hgc_op *o) { rc_float(o, "beta", 2.5); }
static void splusn(struct hgc_op *o) { rc_float(o, "beta", -1); }
static void pow_half(struct hgc_op *o) { rc_float(o, "beta", 0.5); }
static void pow_three(struct hgc_op *o) { rc_int_attr(o, "beta", 3); }
static void pow_neg(struct hgc_op *o) { rc_float(o, "beta", -1.5); }
static void clamp(struct hgc_op *o) { rc_float(o, "min", -0.5); rc_float(o, "max", 0.7); }

/* Every unary op on a few shapes and both float types. */
static void test_unary(void)
{
	struct hgc_op *o;

	unary(HGC_OP_RELU, -2, 2, 0, 2, NULL, "");
	unary(HGC_OP_LEAKY_RELU, -2, 2, 0, 1, leaky, "");
	unary(HGC_OP_LEAKY_RELU, -2, 2, 2, 2, leaky_neg, " alpha<0");
	unary(HGC_OP_GELU, -4, 4, 0, 1, NULL, " erf");
	unary(HGC_OP_GELU, -4, 4, 2, 3, gelu_tanh, " tanh");
	unary(HGC_OP_SIGMOID, -30, 30, 0, 1, NULL, "");
	unary(HGC_OP_TANH, -5, 5, 2, 3, NULL, "");
	unary(HGC_OP_ELU, -4, 2, 0, 1, elu, "");
	unary(HGC_OP_HARD_SWISH, -5, 5, 0, 1, NULL, "");
	unary(HGC_OP_HARD_SIGMOID, -5, 5, 2, 3, hsig, "");
	unary(HGC_OP_SOFT_PLUS, -40, 40, 0, 1, NULL, " beta=1");
	unary(HGC_OP_SOFT_PLUS, -20, 20, 2, 2, splus2, " beta=2.5");
	unary(HGC_OP_SOFT_PLUS, -20, 20, 3, 3, splusn, " beta=-1");
	unary(HGC_OP_MISH, -30, 10, 0, 1, NULL, "");
	unary(HGC_OP_EXP, -10, 10, 0, 1, NULL, "");
	unary(HGC_OP_LOG, 0.01, 100, 2, 3, NULL, "");
	unary(HGC_OP_SQRT, 0, 100, 0, 4, NULL, "");
	unary(HGC_OP_SQUARE, -3, 3, 0, 1, NULL, "");
	unary(HGC_OP_ABS, -3, 3, 2, 5, NULL, "");
	unary(HGC_OP_RECIPROCAL, 0.25, 4, 0, 1, NULL, "");
	unary(HGC_OP_POW, 0.1, 4, 0, 1, pow_half, " beta=0.5");
	unary(HGC_OP_POW, -3, 3, 2, 3, pow_three, " beta=3 (int)");
	unary(HGC_OP_POW, 0.5, 3, 5, 5, pow_neg, " beta=-1.5");
	unary(HGC_OP_CLAMP, -2, 2, 0, 1, clamp, "");
	rc_graph();
	rc_check(rc_op(HGC_OP_ROUND, HGC_DT_UNDEF, 1, rc_halves(HGC_DT_F32, -6, 6, 2, 7, 13)),
		 "Round f32 on exact halves (away from zero)");
	unary(HGC_OP_ROUND, -100, 100, 1, 1, NULL, "");
	rc_graph();
	rc_check(rc_op(HGC_OP_RELU, HGC_DT_UNDEF, 1, rc_in(HGC_DT_S8, -128, 127, 1, 97)),
		 "ReLU on s8");
	rc_graph();
	rc_check(rc_op(HGC_OP_ABS, HGC_DT_UNDEF, 1, rc_in(HGC_DT_S8, -128, 127, 1, 97)),
		 "Abs on s8 saturates -128");
	rc_graph();
	o = rc_op(HGC_OP_EXP, HGC_DT_BF16, 1, rc_f32(2, 13, 5));
	rc_check(o, "Exp f32 in, preset bf16 out");
}

/* A binary op on inputs of two shapes (up to 4 dims each, as int lists). */
static void binary(enum hgc_op_kind k, enum hgc_dtype da, enum hgc_dtype db, const int *sa,
		   const int *sb, double lo, double hi, const char *what)
{
	rc_graph();
	rc_check(rc_op(k, HGC_DT_UNDEF, 2, shaped(da, sa, lo, hi), shaped(db, sb, lo, hi)), "%s %s %s %s",
		 hgc_op_table[k].name, hgc_dtype_name(da), hgc_dtype_name(db), what);
}

/* Every binary op, broadcasting both ways, scalars, mixed float types, integers. */
static void test_binary(void)
{
	static const int a[] = {3, 3, 1, 97}, b[] = {1, 97}, c[] = {3, 13, 1, 5}, e[] = {2, 4, 1},
			 s[] = {0}, v[] = {1, 479}, one[] = {1, 1}, same[] = {3, 2, 3, 4};
	static const enum hgc_op_kind kinds[] = {HGC_OP_ADD, HGC_OP_SUBTRACT, HGC_OP_MULTIPLY,
						HGC_OP_MAXIMUM, HGC_OP_MINIMUM};
	struct hgc_op *o;
	int i;

	for (i = 0; i < 5; i++) {
		binary(kinds[i], HGC_DT_F32, HGC_DT_F32, a, b, -2, 2, "[3,1,97] with [97]");
		binary(kinds[i], HGC_DT_BF16, HGC_DT_BF16, c, e, -2, 2, "[3,13,1,5] with [4,1]");
		binary(kinds[i], HGC_DT_F32, HGC_DT_F32, s, v, -2, 2, "scalar with [479]");
	}
	binary(HGC_OP_DIVIDE, HGC_DT_F32, HGC_DT_F32, same, same, 0.5, 3, "same shapes");
	binary(HGC_OP_DIVIDE, HGC_DT_F32, HGC_DT_F32, e, c, 0.5, 3, "[4,1] with [3,13,1,5]");
	binary(HGC_OP_ADD, HGC_DT_BF16, HGC_DT_F32, a, b, -2, 2, "bf16 + f32 gives f32");
	binary(HGC_OP_MULTIPLY, HGC_DT_F32, HGC_DT_BF16, one, v, -2, 2, "[1] with [479]");
	binary(HGC_OP_ADD, HGC_DT_S32, HGC_DT_S32, a, b, -100000, 100000, "integers");
	binary(HGC_OP_MULTIPLY, HGC_DT_S8, HGC_DT_S8, a, b, -128, 127, "saturating s8");
	binary(HGC_OP_DIVIDE, HGC_DT_S32, HGC_DT_S32, same, same, 1, 100, "s32 rounds half even");
	rc_graph();
	o = rc_op(HGC_OP_SUBTRACT, HGC_DT_UNDEF, 2, rc_f32(2, 3, 5), rc_f32(2, 3, 5));
	rc_str(o, "auto_broadcast", "none");
	rc_check(o, "Subtract with auto_broadcast none");
	rc_graph();
	o = rc_op(HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, rc_f32(3, 2, 13, 7), rc_f32(1, 7));
	rc_check(o, "BiasAdd NXC");
	rc_graph();
	o = rc_op(HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, rc_in(HGC_DT_BF16, -2, 2, 4, 2, 7, 3, 5),
		  rc_f32(1, 7));
	rc_str(o, "data_format", "NCX");
	rc_check(o, "BiasAdd NCX, bf16 with an f32 bias");
}

/* SoftMax and LogSoftmax on several axes, with large inputs to test stability. */
static void test_softmax(void)
{
	static const int axes[] = {0, 1, 2, -1, -2};
	struct hgc_op *o;
	int i;

	for (i = 0; i < 5; i++) {
		rc_graph();
		o = rc_op(HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, rc_in(HGC_DT_F32, -80, 80, 3, 3, 13, 5));
		rc_int_attr(o, "axis", axes[i]);
		rc_check(o, "SoftMax axis %d with inputs up to 80", axes[i]);
		rc_graph();
		o = rc_op(HGC_OP_LOG_SOFTMAX, HGC_DT_UNDEF, 1, rc_in(HGC_DT_F32, -80, 80, 3, 3, 1, 97));
		rc_int_attr(o, "axis", axes[i]);
		rc_check(o, "LogSoftmax axis %d", axes[i]);
	}
	rc_graph();
	rc_check(rc_op(HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, rc_in(HGC_DT_BF16, -5, 5, 2, 13, 479)),
		 "SoftMax bf16 default axis");
	rc_graph();
	rc_check(rc_op(HGC_OP_LOG_SOFTMAX, HGC_DT_UNDEF, 1, rc_in(HGC_DT_F32, 1000, 1100, 1, 13)),
		 "LogSoftmax default axis on values near 1000");
	rc_graph();
	rc_check(rc_op(HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, rc_in(HGC_DT_F32, -2, 2, 2, 13, 1)),
		 "SoftMax over a size-1 axis");
}

/* LayerNorm with affine or not over 1 or more trailing dims; BatchNormInference. */
static void test_norms(void)
{
	struct hgc_op *o;

	rc_graph();
	o = rc_op(HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 3, rc_in(HGC_DT_F32, -3, 5, 2, 13, 97),
		  rc_f32(1, 97), rc_f32(1, 97));
	rc_check(o, "LayerNorm last axis, affine");
	rc_graph();
	o = rc_op(HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 3, rc_f32(3, 3, 5, 7), rc_f32(2, 5, 7),
		  rc_f32(2, 5, 7));
	rc_int_attr(o, "begin_norm_axis", 1);
	rc_float(o, "epsilon", 0.1);
	rc_check(o, "LayerNorm over two dims, epsilon 0.1");
	rc_graph();
	o = rc_op(HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 1, rc_f32(3, 3, 5, 7));
	rc_int_attr(o, "begin_norm_axis", 0);
	rc_bool(o, "use_affine", false);
	rc_bool(o, "keep_stats", false);
	rc_check(o, "LayerNorm over everything, no affine");
	rc_graph();
	o = rc_op(HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 3, rc_in(HGC_DT_BF16, -2, 2, 2, 3, 479),
		  rc_f32(1, 479), rc_in(HGC_DT_BF16, -1, 1, 1, 479));
	rc_check(o, "LayerNorm bf16 with f32 gamma and bf16 beta");
	rc_graph();
	o = rc_op(HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 3, rc_f32(2, 3, 1), rc_f32(1, 1), rc_f32(1, 1));
	rc_check(o, "LayerNorm over a size-1 dim gives beta");
	rc_graph();
	o = rc_op(HGC_OP_BATCH_NORM_INFERENCE, HGC_DT_UNDEF, 5, rc_f32(4, 2, 5, 3, 7), rc_f32(1, 7),
		  rc_f32(1, 7), rc_f32(1, 7), rc_in(HGC_DT_F32, 0.1, 3, 1, 7));
	rc_float(o, "epsilon", 1e-3);
	rc_check(o, "BatchNormInference NXC");
	rc_graph();
	o = rc_op(HGC_OP_BATCH_NORM_INFERENCE, HGC_DT_UNDEF, 5, rc_f32(4, 2, 13, 3, 5), rc_f32(1, 13),
		  rc_f32(1, 13), rc_f32(1, 13), rc_in(HGC_DT_F32, 0, 3, 1, 13));
	rc_float(o, "epsilon", 0.5);
	rc_str(o, "data_format", "NCX");
	rc_check(o, "BatchNormInference NCX");
}

/* One reduction over the given axes. */
static void reduce(enum hgc_op_kind k, struct hgc_tensor *src, bool keep, int n,
		   const int64_t *axes)
{
	struct hgc_op *o = rc_op(k, HGC_DT_UNDEF, 1, src);
	char buf[64] = "";
	size_t len = 0;
	int i;

	rc_ints(o, "axes", n, axes);
	rc_bool(o, "keep_dims", keep);
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%lld", i ? "," : "",
					(long long)axes[i]);
	rc_check(o, "%s %s axes [%s]%s", hgc_op_table[k].name, hgc_dtype_name(src->dtype), buf,
		 keep ? " keep_dims" : "");
}

/* Every reduction over several axis sets, negative axes, keep_dims both ways. */
static void test_reduce(void)
{
	static const int64_t ax[][3] = {{1}, {0, 2}, {-1}, {-3, -1, 1}, {2, 0}};
	static const int nax[] = {1, 2, 1, 3, 2};
	int k, i;

	for (k = HGC_OP_REDUCE_SUM; k <= HGC_OP_REDUCE_L2; k++) {
		for (i = 0; i < 5; i++) {
			bool prod = k == HGC_OP_REDUCE_PROD;

			rc_graph();
			reduce((enum hgc_op_kind)k,
			       rc_in(i == 4 ? HGC_DT_BF16 : HGC_DT_F32, prod ? 0.8 : -3, prod ? 1.25 : 3,
				     3, 3, 13, 7),
			       i % 2, nax[i], ax[i]);
		}
	}
	rc_graph();
	reduce(HGC_OP_REDUCE_SUM, rc_in(HGC_DT_F32, -1, 1, 2, 1, 479), false, 1, (int64_t[]){1});
	rc_graph();
	reduce(HGC_OP_REDUCE_MAX, rc_in(HGC_DT_S8, -128, 127, 2, 13, 5), true, 1, (int64_t[]){0});
	rc_graph();
	reduce(HGC_OP_REDUCE_SUM, rc_in(HGC_DT_S8, -128, 127, 2, 97, 5), false, 1, (int64_t[]){0});
	rc_graph();
	reduce(HGC_OP_REDUCE_MEAN, rc_f32(4, 2, 3, 4, 5), false, 4, (int64_t[]){0, 1, 2, 3});
}

/* Transpose, Reshape, Reorder, Concat and Select. */
static void test_movement(void)
{
	struct hgc_op *o;

	rc_graph();
	o = rc_op(HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, rc_f32(4, 2, 3, 5, 7));
	RC_INTS(o, "order", 3, -4, 1, 2);
	rc_check(o, "StaticTranspose [3,0,1,2] with a negative axis");
	rc_graph();
	o = rc_op(HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, rc_in(HGC_DT_S8, -128, 127, 2, 13, 97));
	RC_INTS(o, "order", 1, 0);
	rc_check(o, "StaticTranspose of an s8 matrix");
	rc_graph();
	o = rc_op(HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, rc_in(HGC_DT_BF16, -2, 2, 3, 1, 13, 1));
	RC_INTS(o, "order", 2, 1, 0);
	rc_check(o, "StaticTranspose bf16 with size-1 dims");
	rc_graph();
	o = rc_op(HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, rc_f32(3, 2, 3, 4));
	RC_INTS(o, "shape", 0, -1, 2);
	rc_bool(o, "special_zero", true);
	rc_check(o, "StaticReshape with 0 and -1");
	rc_graph();
	o = rc_op(HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, rc_in(HGC_DT_U8, 0, 255, 2, 13, 3));
	RC_INTS(o, "shape", 3, 1, 13);
	rc_bool(o, "special_zero", false);
	rc_check(o, "StaticReshape u8");
	rc_graph();
	rc_check(rc_op(HGC_OP_REORDER, HGC_DT_UNDEF, 1, rc_in(HGC_DT_BF16, -2, 2, 2, 13, 5)),
		 "Reorder bf16");
	rc_graph();
	o = rc_op(HGC_OP_CONCAT, HGC_DT_UNDEF, 3, rc_f32(3, 2, 3, 5), rc_f32(3, 2, 1, 5),
		  rc_f32(3, 2, 13, 5));
	rc_int_attr(o, "axis", 1);
	rc_check(o, "Concat of three along a middle axis");
	rc_graph();
	o = rc_op(HGC_OP_CONCAT, HGC_DT_UNDEF, 2, rc_in(HGC_DT_S32, -9, 9, 2, 3, 1),
		  rc_in(HGC_DT_S32, -9, 9, 2, 3, 97));
	rc_int_attr(o, "axis", -1);
	rc_check(o, "Concat s32 along the last axis");
	rc_graph();
	o = rc_op(HGC_OP_CONCAT, HGC_DT_UNDEF, 1, rc_f32(2, 4, 5));
	rc_int_attr(o, "axis", 0);
	rc_check(o, "Concat of a single input");
	rc_graph();
	rc_check(rc_op(HGC_OP_SELECT, HGC_DT_UNDEF, 3, rc_in(HGC_DT_BOOL, 0, 1, 2, 13, 1),
		       rc_f32(3, 3, 1, 5), rc_f32(0)),
		 "Select with three-way broadcasting");
	rc_graph();
	rc_check(rc_op(HGC_OP_SELECT, HGC_DT_UNDEF, 3, rc_in(HGC_DT_BOOL, 0, 1, 1, 97),
		       rc_in(HGC_DT_S8, -128, 127, 1, 97), rc_in(HGC_DT_S8, -128, 127, 1, 97)),
		 "Select s8");
}

/* TypeCast both ways between f32 and bf16, s32, s8, u8 (halves test rounding, ranges saturation). */
static void test_typecast(void)
{
	static const enum hgc_dtype to[] = {HGC_DT_BF16, HGC_DT_S32, HGC_DT_S8, HGC_DT_U8};
	int i;

	for (i = 0; i < 4; i++) {
		rc_graph();
		rc_check(rc_op(HGC_OP_TYPE_CAST, to[i], 1, rc_halves(HGC_DT_F32, -300, 300, 2, 13, 97)),
			 "TypeCast f32 halves to %s", hgc_dtype_name(to[i]));
		rc_graph();
		rc_check(rc_op(HGC_OP_TYPE_CAST, HGC_DT_F32, 1,
			       rc_in(to[i], to[i] == HGC_DT_U8 ? 0 : -128, to[i] == HGC_DT_U8 ? 255 : 127,
				     1, 479)),
			 "TypeCast %s to f32", hgc_dtype_name(to[i]));
	}
	rc_graph();
	rc_check(rc_op(HGC_OP_TYPE_CAST, HGC_DT_BF16, 1, rc_in(HGC_DT_F32, -1e4, 1e4, 1, 479)),
		 "TypeCast f32 to bf16 rounds to nearest even");
	rc_graph();
	rc_check(rc_op(HGC_OP_TYPE_CAST, HGC_DT_S32, 1, rc_in(HGC_DT_F32, -4e9, 4e9, 1, 97)),
		 "TypeCast f32 to s32 saturates");
	rc_graph();
	rc_check(rc_op(HGC_OP_TYPE_CAST, HGC_DT_F32, 1, rc_in(HGC_DT_S32, -2e9, 2e9, 1, 97)),
		 "TypeCast large s32 to f32 rounds");
}

/* A chain with an intermediate used twice and every op's result feeding the next. */
static void test_chains(void)
{
	struct hgc_tensor *x, *y, *z;
	struct hgc_op *o;

	rc_graph();
	x = rc_f32(2, 13, 97);
	y = rc_done(rc_op(HGC_OP_TANH, HGC_DT_UNDEF, 1, x));
	z = rc_done(rc_op(HGC_OP_MULTIPLY, HGC_DT_UNDEF, 2, y, y));
	o = rc_op(HGC_OP_SUBTRACT, HGC_DT_UNDEF, 2, z, x);
	rc_done(o);
	hgc_graph_add_output(rc.g, o->out[0]);
	hgc_graph_add_output(rc.g, y);
	hgc_graph_add_output(rc.g, x);
	rc_case("chain: tanh used twice; outputs include an intermediate and an input");
	rc_graph();
	x = rc_in(HGC_DT_BF16, -3, 3, 3, 2, 13, 5);
	y = rc_done(rc_op(HGC_OP_GELU, HGC_DT_UNDEF, 1, x));
	o = rc_op(HGC_OP_REDUCE_SUM, HGC_DT_UNDEF, 1, y);
	RC_INTS(o, "axes", -1);
	z = rc_done(o);
	o = rc_op(HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, z);
	rc_check(o, "chain: bf16 GELU, ReduceSum, SoftMax (rounded at every step)");
}

/* Run a graph directly; returns the interpreter's result and its message. */
static int run(struct hgc_graph *g, const void *const *in, void *const *out, char *msg)
{
	struct hgc_diag d;
	int r;

	hgc_diag_init(&d);
	r = hgc_interp_run(g, in, out, &d);
	snprintf(msg, 256, "%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	return r;
}

/* The interpreter's own behaviour: outputs that are inputs, embedded constants, errors. */
static void test_interp_direct(void)
{
	static const float xv[3] = {-1, 2, -3}, cv[3] = {10, 20, 30};
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x, *c, *r, *s, *t[2];
	float o1[3], o2[3], o3[3];
	void *outs[3] = {o1, o2, o3};
	const void *ins[2] = {xv, NULL};
	struct hgc_op *op;
	struct hgc_diag d;
	char msg[256];

	hgc_diag_init(&d);
	x = hgc_graph_add_input(g, "x", HGC_DT_F32, 1, (int64_t[]){3}, HGC_PROP_VARIABLE, NULL);
	c = hgc_graph_add_input(g, "c", HGC_DT_F32, 1, (int64_t[]){3}, HGC_PROP_CONSTANT, NULL);
	c->data = cv;
	op = hgc_graph_add_op(g, HGC_OP_ABS, 1, &x, HGC_DT_UNDEF, NULL);
	hgc_graph_finish_op(g, op, &d);
	r = op->out[0];
	t[0] = r;
	t[1] = c;
	op = hgc_graph_add_op(g, HGC_OP_ADD, 2, t, HGC_DT_UNDEF, NULL);
	hgc_graph_finish_op(g, op, &d);
	s = op->out[0];
	hgc_graph_add_output(g, x);
	hgc_graph_add_output(g, s);
	hgc_graph_add_output(g, r);
	is_int(d.nerr, 0, "direct graph builds");
	is_int(run(g, ins, outs, msg), 0,
	       "runs with the constant's embedded data");
	ok(!memcmp(o1, xv, sizeof(xv)), "an input is also an output");
	ok(o2[0] == 11 && o2[1] == 22 && o2[2] == 33, "Abs then Add of the constant");
	ok(o3[0] == 1 && o3[1] == 2 && o3[2] == 3, "an intermediate is also an output");
	c->data = NULL;
	is_int(run(g, ins, outs, msg), -1, "a missing input fails");
	is_str(msg, "hgc: error: interp: no data for input 1 (%1)\n", "and says which");
	c->data = cv;
	op = hgc_graph_add_op(g, HGC_OP_RELU, 1, &x, HGC_DT_UNDEF, NULL);
	is_int(run(g, ins, outs, msg), -1,
	       "an unfinished op fails");
	is_str(msg, "hgc: error: interp: tensor %4 has no type\n", "naming its tensor");
	hgc_graph_finish_op(g, op, &d);
	op->out[0]->layout.kind = HGC_LAYOUT_BLOCKED;
	is_int(run(g, ins, outs, msg), -1,
	       "a blocked layout fails");
	is_str(msg, "hgc: error: interp: tensor %4 is not plain and dense\n", "with a message");
	hgc_diag_release(&d);
	hgc_graph_free(g);
	g = hgc_graph_new();
	x = hgc_graph_add_input(g, "big", HGC_DT_F32, 2, (int64_t[]){1 << 20, 1 << 20},
				HGC_PROP_VARIABLE, NULL);
	hgc_graph_add_output(g, x);
	is_int(run(g, ins, outs, msg), -1, "a huge tensor fails");
	is_str(msg, "hgc: error: interp: tensor %0 is too large\n", "before allocating");
	hgc_graph_free(g);
}

int main(int argc, char **argv)
{
	(void)argc;
	rc_init(argv[0], 0x2024020);
	test_interp_direct();
	test_unary();
	test_binary();
	test_softmax();
	test_norms();
	test_reduce();
	test_movement();
	test_typecast();
	test_chains();
	rc_finish();
	return done_testing();
}
