/*
 * 010-graph: the Graph IR: dtypes and bf16/int conversion, building graphs,
 * attribute defaults and checking, shape inference for every op family,
 * validation errors with their exact text, .npy files and the printer.
 */
#include "core/graph/graph.h"
#include "t/tap.h"

#include <unistd.h>

static const struct hgc_loc L = {"t.hgc", 3, 7};
#define E "t.hgc:3:7: error: "

static struct hgc_graph *G;

/* A fresh graph for a group of checks. */
static void fresh(void)
{
	hgc_graph_free(G);
	G = hgc_graph_new();
}

/* A variable input of the given dtype and dims (up to 6, -1 terminated). */
static struct hgc_tensor *in(enum hgc_dtype dt, int nd, ...)
{
	int64_t dims[HGC_MAX_DIMS];
	va_list ap;
	int i;

	va_start(ap, nd);
	for (i = 0; i < nd; i++)
		dims[i] = va_arg(ap, int);
	va_end(ap);
	return hgc_graph_add_input(G, NULL, dt, nd, dims, HGC_PROP_VARIABLE, &L);
}

/* An op on nin inputs, not finished. */
static struct hgc_op *op(enum hgc_op_kind k, enum hgc_dtype dt, int nin, ...)
{
	struct hgc_tensor *t[8];
	va_list ap;
	int i;

	va_start(ap, nin);
	for (i = 0; i < nin; i++)
		t[i] = va_arg(ap, struct hgc_tensor *);
	va_end(ap);
	return hgc_graph_add_op(G, k, nin, t, dt, &L);
}

/* Attribute setters. */
static void a_int(struct hgc_op *o, const char *n, int64_t v)
{
	struct hgc_attr a = {.name = n, .type = HGC_ATTR_INT, .v.i = v};
	hgc_op_set_attr(G, o, &a);
}
static void a_bool(struct hgc_op *o, const char *n, bool v)
{
	struct hgc_attr a = {.name = n, .type = HGC_ATTR_BOOL, .v.i = v};
	hgc_op_set_attr(G, o, &a);
}
static void a_float(struct hgc_op *o, const char *n, double v)
{
	struct hgc_attr a = {.name = n, .type = HGC_ATTR_FLOAT, .v.f = v};
	hgc_op_set_attr(G, o, &a);
}
static void a_str(struct hgc_op *o, const char *n, const char *v)
{
	struct hgc_attr a = {.name = n, .type = HGC_ATTR_STRING, .v.s = v};
	hgc_op_set_attr(G, o, &a);
}
static void a_ints(struct hgc_op *o, const char *n, int cnt, ...)
{
	int64_t v[16];
	struct hgc_attr a = {.name = n, .type = HGC_ATTR_INTS, .n = cnt, .v.ints = v};
	va_list ap;
	int i;

	va_start(ap, cnt);
	for (i = 0; i < cnt; i++)
		v[i] = va_arg(ap, int);
	va_end(ap);
	hgc_op_set_attr(G, o, &a);
}
static void a_floats(struct hgc_op *o, const char *n, int cnt, ...)
{
	double v[16];
	struct hgc_attr a = {.name = n, .type = HGC_ATTR_FLOATS, .n = cnt, .v.floats = v};
	va_list ap;
	int i;

	va_start(ap, cnt);
	for (i = 0; i < cnt; i++)
		v[i] = va_arg(ap, double);
	va_end(ap);
	hgc_op_set_attr(G, o, &a);
}

/* Finish o: "" on success, else the diagnostics. */
static const char *finish(struct hgc_op *o)
{
	static char buf[2048];
	struct hgc_diag d;
	int r;

	hgc_diag_init(&d);
	r = hgc_graph_finish_op(G, o, &d);
	snprintf(buf, sizeof(buf), "%s", r ? hgc_diag_text(&d) : "");
	if (r == 0 && d.nerr)
		snprintf(buf, sizeof(buf), "success with errors: %s", hgc_diag_text(&d));
	if (r && !d.nerr)
		snprintf(buf, sizeof(buf), "failed without a message");
	hgc_diag_release(&d);
	return buf;
}

/* "f32[2,3]" for a tensor. */
static const char *ty(const struct hgc_tensor *t)
{
	static char buf[8][128];
	static int k;
	char *b = buf[k++ % 8];
	size_t n;
	int i;

	n = (size_t)snprintf(b, 128, "%s[", hgc_dtype_name(t->dtype));
	for (i = 0; i < t->ndims; i++)
		n += (size_t)snprintf(b + n, 128 - n, "%s%lld", i ? "," : "", (long long)t->dims[i]);
	snprintf(b + n, 128 - n, "]");
	return b;
}

/* Finish o and return its output type, or the error. */
static const char *infer(struct hgc_op *o)
{
	const char *e = finish(o);

	return *e ? e : ty(o->out[0]);
}

/* Conv/pool window attributes in one call. */
static void window(struct hgc_op *o, int s0, int s1, int pb0, int pb1, int pe0, int pe1)
{
	a_ints(o, "strides", 2, s0, s1);
	a_ints(o, "pads_begin", 2, pb0, pb1);
	a_ints(o, "pads_end", 2, pe0, pe1);
}

/* Element sizes, names, parsing. */
static void test_dtypes(void)
{
	is_int(hgc_dtype_size(HGC_DT_F32), 4, "f32 is 4 bytes");
	is_int(hgc_dtype_size(HGC_DT_BF16), 2, "bf16 is 2 bytes");
	is_int(hgc_dtype_size(HGC_DT_U8), 1, "u8 is 1 byte");
	is_int(hgc_dtype_size(HGC_DT_UNDEF), 0, "undef has no size");
	is_str(hgc_dtype_name(HGC_DT_BOOL), "boolean", "boolean's oneDNN name");
	is_int(hgc_dtype_parse("s8", 2), HGC_DT_S8, "parse s8");
	is_int(hgc_dtype_parse("bf16xyz", 4), HGC_DT_BF16, "parse uses the length");
	is_int(hgc_dtype_parse("f3", 2), HGC_DT_UNDEF, "a prefix is not a dtype");
	is_int(hgc_dtype_parse("f64", 3), HGC_DT_UNDEF, "unknown dtype");
	ok(hgc_dtype_is_int(HGC_DT_S32) && hgc_dtype_is_int(HGC_DT_U8) &&
		   !hgc_dtype_is_int(HGC_DT_F32) && !hgc_dtype_is_int(HGC_DT_BOOL),
	   "is_int: s32, s8, u8 only");
	is_int(hgc_op_kind_parse("MatMul", 6), HGC_OP_MATMUL, "parse MatMul");
	is_int(hgc_op_kind_parse("BatchNormInference", 18), HGC_OP_BATCH_NORM_INFERENCE,
	       "parse BatchNormInference");
	is_int(hgc_op_kind_parse("Matmul", 6), HGC_OP_COUNT, "kind names are case-sensitive");
	is_str(hgc_op_table[HGC_OP_TANH].name, "Tanh", "table row for Tanh");
	is_int(hgc_op_table[HGC_OP_CONVOLUTION].category, HGC_CAT_TUNABLE, "conv is tunable");
	is_int(hgc_op_table[HGC_OP_CONCAT].max_in, 64, "Concat takes up to 64 inputs");
}

/* bf16 bits of a float given by its bits. */
static uint16_t bf16_of_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return hgc_f32_to_bf16(f);
}

/* bf16 rounding to nearest even, NaN and infinities. */
static void test_bf16(void)
{
	uint16_t nan1 = bf16_of_bits(0x7f800001u), nan2 = bf16_of_bits(0xffc12345u);

	is_int(hgc_f32_to_bf16(1.0f), 0x3f80, "1.0 in bf16");
	is_int(bf16_of_bits(0x3f808000u), 0x3f80, "a tie rounds down to even");
	is_int(bf16_of_bits(0x3f818000u), 0x3f82, "a tie rounds up to even");
	is_int(bf16_of_bits(0x3f808001u), 0x3f81, "above the tie rounds up");
	is_int(bf16_of_bits(0x3f807fffu), 0x3f80, "below the tie rounds down");
	is_int(bf16_of_bits(0xbf818000u), 0xbf82, "negative ties round to even too");
	is_int(bf16_of_bits(0x7f7fffffu), 0x7f80, "FLT_MAX rounds to infinity");
	is_int(bf16_of_bits(0xff800000u), 0xff80, "-inf stays -inf");
	ok((nan1 & 0x7f80) == 0x7f80 && (nan1 & 0x7f), "a signalling NaN stays NaN (0x%04x)", nan1);
	ok((nan2 & 0x7f80) == 0x7f80 && (nan2 & 0x7f) && (nan2 & 0x8000), "NaN keeps its sign");
	is_int(hgc_f32_to_bf16(-0.0f), 0x8000, "-0 keeps its sign");
	ok(hgc_bf16_to_f32(0x3f80) == 1.0f && hgc_bf16_to_f32(0xc040) == -3.0f, "bf16 widens");
}

/* Integer stores round half to even and saturate; booleans store nonzero as 1. */
static void test_store(void)
{
	int8_t s8[8];
	uint8_t u8[6], b[3];
	int32_t s32[4];
	uint16_t bf[1];
	int i;

	const float s8v[] = {2.5f, 3.5f, -2.5f, -3.5f, 127.5f, -200.0f, 0.49999997f, -0.5f};
	const int s8w[] = {2, 4, -2, -4, 127, -128, 0, 0};
	for (i = 0; i < 8; i++)
		hgc_store_f32(HGC_DT_S8, s8, i, s8v[i]);
	for (i = 0; i < 8; i++)
		is_int(s8[i], s8w[i], "s8 store of %g", s8v[i]);
	const float u8v[] = {-1.0f, 255.6f, 0.5f, 1.5f, 254.5f, 300.0f};
	const int u8w[] = {0, 255, 0, 2, 254, 255};
	for (i = 0; i < 6; i++)
		hgc_store_f32(HGC_DT_U8, u8, i, u8v[i]);
	for (i = 0; i < 6; i++)
		is_int(u8[i], u8w[i], "u8 store of %g", u8v[i]);
	hgc_store_f32(HGC_DT_S32, s32, 0, 3e9f);
	hgc_store_f32(HGC_DT_S32, s32, 1, -3e9f);
	hgc_store_f32(HGC_DT_S32, s32, 2, NAN);
	hgc_store_f32(HGC_DT_S32, s32, 3, -7.5f);
	ok(s32[0] == INT32_MAX && s32[1] == INT32_MIN, "s32 saturates both ways");
	is_int(s32[2], 0, "NaN stores as 0 in an integer");
	is_int(s32[3], -8, "s32 -7.5 rounds to -8 (even)");
	hgc_store_f32(HGC_DT_BOOL, b, 0, 0.3f);
	hgc_store_f32(HGC_DT_BOOL, b, 1, 0.0f);
	hgc_store_f32(HGC_DT_BOOL, b, 2, -2.0f);
	ok(b[0] == 1 && b[1] == 0 && b[2] == 1, "boolean stores nonzero as 1");
	hgc_store_f32(HGC_DT_BF16, bf, 0, 1.00390625f);
	is_int(bf[0], 0x3f80, "bf16 store rounds to even");
	s32[0] = 16777217;
	ok(hgc_load_f32(HGC_DT_S32, s32, 0) == 16777216.0f, "s32 loads round to f32");
	s8[0] = -128;
	ok(hgc_load_f32(HGC_DT_S8, s8, 0) == -128.0f && hgc_load_f32(HGC_DT_U8, u8, 1) == 255.0f,
	   "s8 and u8 load their values");
}

/* Inputs, ops, tensors and attribute storage. */
static void test_building(void)
{
	char name[8] = "x";
	int64_t dims[3] = {2, 3, 4}, list[3] = {5, 6, 7};
	struct hgc_tensor *x, *y;
	struct hgc_op *o;
	struct hgc_attr a = {.name = "order", .type = HGC_ATTR_INTS, .n = 3, .v.ints = list};

	fresh();
	x = hgc_graph_add_input(G, name, HGC_DT_F32, 3, dims, HGC_PROP_CONSTANT, &L);
	name[0] = 'z';
	dims[0] = 9;
	is_str(x->name, "x", "the input's name is copied");
	ok(x->dims[0] == 2 && x->ndims == 3, "the input's dims are copied");
	ok(x->layout.kind == HGC_LAYOUT_PLAIN && x->layout.strides[0] == 12 &&
		   x->layout.strides[1] == 4 && x->layout.strides[2] == 1,
	   "inputs get dense row-major strides");
	ok(x->prop == HGC_PROP_CONSTANT && !x->producer, "a constant input has no producer");
	is_int(hgc_tensor_nelems(x), 24, "nelems");
	is_int(hgc_tensor_nbytes(x), 96, "nbytes");
	y = in(HGC_DT_BF16, 0);
	is_int(hgc_tensor_nelems(y), 1, "a scalar has one element");
	is_int(hgc_tensor_nbytes(y), 2, "a bf16 scalar is 2 bytes");
	is_int(y->id, x->id + 1, "tensor ids count up");
	is_int(G->inputs.len, 2, "both inputs are listed");
	o = op(HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, x);
	ok(o->out[0]->producer == o && o->nout == 1 && o->out[0]->port == 0,
	   "an op's output knows its producer");
	is_int(o->out[0]->dtype, HGC_DT_UNDEF, "the output type starts undefined");
	hgc_op_set_attr(G, o, &a);
	list[0] = 99;
	ok(o->attrs[0].v.ints != list && o->attrs[0].v.ints[0] == 5, "lists are copied");
	a_ints(o, "order", 3, 2, 0, 1);
	is_int(o->nattr, 1, "setting an attribute again replaces it");
	is_str(infer(o), "f32[4,2,3]", "transpose infers its shape");
	ok(o->out[0]->layout.strides[0] == 6 && o->out[0]->layout.strides[2] == 1,
	   "a finished op's output is dense");
	is_int(G->ops.len, 1, "the op is in the graph");
	hgc_graph_add_output(G, o->out[0]);
	ok(HGC_GRAPH_OUTPUT(G, 0) == o->out[0], "outputs are listed");
	o = op(HGC_OP_LEAKY_RELU, HGC_DT_UNDEF, 1, x);
	a_int(o, "alpha", 2);
	ok(o->attrs[0].type == HGC_ATTR_FLOAT && hgc_op_float(o, "alpha") == 2.0,
	   "an int given for a float attribute becomes a float");
	is_str(infer(o), "f32[2,3,4]", "LeakyReLU with an int alpha is fine");
	o = op(HGC_OP_QUANTIZE, HGC_DT_U8, 1, x);
	a_ints(o, "scales", 1, 2);
	ok(o->attrs[0].type == HGC_ATTR_FLOATS && o->attrs[0].v.floats[0] == 2.0,
	   "a list of ints given for floats becomes floats");
	a_str(o, "qtype", "per_tensor");
	is_str(hgc_op_string(o, "qtype"), "per_tensor", "strings read back");
	is_str(infer(o), "u8[2,3,4]", "Quantize keeps the preset u8");
}

/* Schema defaults (oneDNN names and values). */
static void test_defaults(void)
{
	struct hgc_tensor *x;
	struct hgc_op *o;
	const struct hgc_attr *a;

	fresh();
	x = in(HGC_DT_F32, 4, 1, 3, 8, 8);
	o = op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, x, x);
	ok(!hgc_op_bool(o, "transpose_a") && !hgc_op_bool(o, "transpose_b"),
	   "MatMul transposes default to false");
	o = op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 2, x, x);
	is_int(hgc_op_int(o, "groups"), 1, "Convolution groups defaults to 1");
	is_str(hgc_op_string(o, "data_format"), "NXC", "data_format defaults to NXC");
	is_str(hgc_op_string(o, "weights_format"), "XIO", "weights_format defaults to XIO");
	is_str(hgc_op_string(o, "auto_pad"), "None", "auto_pad defaults to None");
	ok(hgc_op_attr(o, "strides") == NULL, "a required attribute has no default");
	o = op(HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 1, x);
	ok(hgc_op_float(o, "epsilon") == 1e-5 && hgc_op_int(o, "begin_norm_axis") == -1 &&
		   hgc_op_bool(o, "use_affine") && hgc_op_bool(o, "keep_stats"),
	   "LayerNorm defaults");
	o = op(HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, x);
	is_int(hgc_op_int(o, "axis"), 1, "SoftMax axis defaults to 1");
	o = op(HGC_OP_LOG_SOFTMAX, HGC_DT_UNDEF, 1, x);
	is_int(hgc_op_int(o, "axis"), -1, "LogSoftmax axis defaults to -1");
	o = op(HGC_OP_MAX_POOL, HGC_DT_UNDEF, 1, x);
	a = hgc_op_attr(o, "dilations");
	ok(a && a->n == 2 && a->v.ints[0] == 1 && a->v.ints[1] == 1, "MaxPool dilations default to 1s");
	is_str(hgc_op_string(o, "rounding_type"), "floor", "rounding_type defaults to floor");
	o = op(HGC_OP_QUANTIZE, HGC_DT_U8, 1, x);
	is_str(hgc_op_string(o, "qtype"), "per_tensor", "qtype defaults to per_tensor");
	is_int(hgc_op_int(o, "axis"), 1, "Quantize axis defaults to 1");
	is_int(hgc_op_attr(o, "zps")->n, 0, "zps default to none (zeros)");
	o = op(HGC_OP_SOFT_PLUS, HGC_DT_UNDEF, 1, x);
	ok(hgc_op_float(o, "beta") == 1.0, "SoftPlus beta defaults to 1");
	o = op(HGC_OP_GELU, HGC_DT_UNDEF, 1, x);
	is_str(hgc_op_string(o, "mode"), "gelu_erf", "GELU mode defaults to gelu_erf");
	o = op(HGC_OP_REDUCE_SUM, HGC_DT_UNDEF, 1, x);
	ok(!hgc_op_bool(o, "keep_dims"), "keep_dims defaults to false");
	o = op(HGC_OP_ADD, HGC_DT_UNDEF, 2, x, x);
	is_str(hgc_op_string(o, "auto_broadcast"), "numpy", "auto_broadcast defaults to numpy");
	o = op(HGC_OP_BATCH_NORM_INFERENCE, HGC_DT_UNDEF, 1, x);
	is_str(hgc_op_string(o, "data_format"), "NXC", "BatchNorm data_format defaults to NXC");
}

/* Unknown, mistyped and missing attributes. */
static void test_attr_errors(void)
{
	struct hgc_tensor *x, *w;
	struct hgc_op *o;
	struct hgc_diag d;

	fresh();
	x = in(HGC_DT_F32, 2, 4, 13);
	w = in(HGC_DT_F32, 2, 13, 5);
	o = op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, x, w);
	a_int(o, "foo", 1);
	is_str(finish(o), E "unknown attribute 'foo' for MatMul\n", "unknown attribute");
	o = op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, x, w);
	a_float(o, "transpose_a", 1.5);
	is_str(finish(o), E "attribute 'transpose_a' of MatMul must be a bool, not a float\n",
	       "float for a bool");
	o = op(HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, x);
	a_float(o, "axis", 1.0);
	is_str(finish(o), E "attribute 'axis' of SoftMax must be an int, not a float\n",
	       "a float where an int is expected is an error");
	o = op(HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, x);
	a_int(o, "order", 1);
	is_str(finish(o), E "attribute 'order' of StaticTranspose must be a list of ints, not an int\n",
	       "an int for a list");
	o = op(HGC_OP_GELU, HGC_DT_UNDEF, 1, x);
	a_int(o, "mode", 0);
	is_str(finish(o), E "attribute 'mode' of GELU must be a string, not an int\n",
	       "an int for a string");
	o = op(HGC_OP_QUANTIZE, HGC_DT_U8, 1, x);
	a_floats(o, "zps", 1, 0.5);
	is_str(finish(o), E "attribute 'zps' of Quantize must be a list of ints, not a list of floats\n"
			  E "missing required attribute 'scales' for Quantize\n",
	       "floats for ints, and a missing attribute, both reported");
	o = op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 2, x, w);
	a_ints(o, "dilations", 2, 1, 1);
	a_ints(o, "pads_begin", 2, 0, 0);
	a_ints(o, "pads_end", 2, 0, 0);
	is_str(finish(o), E "missing required attribute 'strides' for Convolution\n",
	       "missing required attribute");
	o = op(HGC_OP_AVG_POOL, HGC_DT_UNDEF, 1, x);
	a_str(o, "bogus", "x");
	hgc_diag_init(&d);
	is_int(hgc_op_check_attrs(o, &d), -1, "check_attrs fails");
	is_int(d.nerr, 6, "every problem is counted: 1 unknown, 5 missing");
	hgc_diag_release(&d);
	o = op(HGC_OP_AVG_POOL, HGC_DT_UNDEF, 1, x);
	window(o, 1, 1, 0, 0, 0, 0);
	a_ints(o, "kernel", 2, 1, 1);
	a_bool(o, "exclude_pad", false);
	hgc_diag_init(&d);
	is_int(hgc_op_check_attrs(o, &d), 0, "a complete AvgPool passes check_attrs");
	is_int(d.nerr, 0, "without errors");
	hgc_diag_release(&d);
}

/* MatMul shapes: transposes, vectors, batch broadcasting, bias, int8. */
static void test_matmul_shapes(void)
{
	struct hgc_op *o;

	fresh();
	is_str(infer(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 2, 32, 13),
			in(HGC_DT_F32, 2, 13, 512))), "f32[32,512]", "plain MatMul");
	o = op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 2, 32, 13), in(HGC_DT_F32, 2, 512, 13));
	a_bool(o, "transpose_b", true);
	is_str(infer(o), "f32[32,512]", "transpose_b");
	o = op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 2, 13, 32), in(HGC_DT_F32, 2, 13, 7));
	a_bool(o, "transpose_a", true);
	is_str(infer(o), "f32[32,7]", "transpose_a");
	is_str(infer(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 1, 13),
			in(HGC_DT_F32, 2, 13, 5))), "f32[5]", "vector x matrix");
	is_str(infer(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 3, 2, 4, 13),
			in(HGC_DT_F32, 1, 13))), "f32[2,4]", "batched matrix x vector");
	is_str(infer(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 1, 13),
			in(HGC_DT_F32, 1, 13))), "f32[]", "vector x vector is a scalar");
	is_str(infer(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 3, in(HGC_DT_BF16, 4, 2, 1, 4, 5),
			in(HGC_DT_BF16, 3, 3, 5, 6), in(HGC_DT_F32, 1, 6))),
	       "bf16[2,3,4,6]", "batch dims broadcast; bf16 in, bf16 out; f32 bias");
	is_str(infer(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 3, in(HGC_DT_F32, 2, 4, 5),
			in(HGC_DT_F32, 2, 5, 6), in(HGC_DT_F32, 2, 4, 1))),
	       "f32[4,6]", "a [M,1] bias broadcasts");
	is_str(infer(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, in(HGC_DT_U8, 2, 4, 5),
			in(HGC_DT_S8, 2, 5, 6))), "s32[4,6]", "u8 x s8 gives s32");
	is_str(infer(op(HGC_OP_MATMUL, HGC_DT_F32, 3, in(HGC_DT_S8, 2, 4, 5), in(HGC_DT_S8, 2, 5, 6),
			in(HGC_DT_S32, 1, 6))), "f32[4,6]", "s8 x s8 may give a preset f32");
}

/* Convolution shapes: formats, strides, pads, dilations, groups, auto_pad. */
static void test_conv_shapes(void)
{
	struct hgc_op *o;

	fresh();
	o = op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 4, 2, 7, 9, 3),
	       in(HGC_DT_F32, 4, 3, 3, 3, 8));
	window(o, 2, 2, 1, 1, 1, 1);
	a_ints(o, "dilations", 2, 1, 1);
	is_str(infer(o), "f32[2,4,5,8]", "NXC/XIO by default, stride 2, pads 1");
	o = op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 3, in(HGC_DT_F32, 4, 1, 4, 10, 11),
	       in(HGC_DT_F32, 4, 6, 2, 3, 3), in(HGC_DT_F32, 1, 6));
	window(o, 1, 1, 0, 0, 0, 0);
	a_ints(o, "dilations", 2, 2, 3);
	a_int(o, "groups", 2);
	a_str(o, "data_format", "NCX");
	a_str(o, "weights_format", "OIX");
	is_str(infer(o), "f32[1,6,6,5]", "NCX/OIX, dilations, groups, bias");
	o = op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 4, 1, 7, 8, 5),
	       in(HGC_DT_F32, 4, 3, 3, 1, 5));
	window(o, 2, 3, 0, 0, 0, 0);
	a_ints(o, "dilations", 2, 1, 1);
	a_int(o, "groups", 5);
	a_str(o, "auto_pad", "SAME_UPPER");
	is_str(infer(o), "f32[1,4,3,5]", "depthwise, SAME_UPPER keeps ceil(in / stride)");
	o = op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 2, in(HGC_DT_U8, 4, 1, 7, 8, 4),
	       in(HGC_DT_S8, 4, 3, 3, 4, 2));
	window(o, 1, 1, 5, 5, 5, 5);
	a_ints(o, "dilations", 2, 1, 1);
	a_str(o, "auto_pad", "VALID");
	is_str(infer(o), "s32[1,5,6,2]", "int8 conv gives s32; VALID ignores pads");
}

/* Elementwise, binary, BiasAdd, norms, reductions. */
static void test_fusible_shapes(void)
{
	struct hgc_op *o;

	fresh();
	is_str(infer(op(HGC_OP_ADD, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 3, 2, 1, 3),
			in(HGC_DT_F32, 2, 4, 1))), "f32[2,4,3]", "numpy broadcasting both ways");
	is_str(infer(op(HGC_OP_DIVIDE, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 0),
			in(HGC_DT_F32, 1, 5))), "f32[5]", "a scalar broadcasts");
	is_str(infer(op(HGC_OP_MAXIMUM, HGC_DT_UNDEF, 2, in(HGC_DT_BF16, 1, 5),
			in(HGC_DT_F32, 1, 5))), "f32[5]", "bf16 with f32 gives f32");
	is_str(infer(op(HGC_OP_MULTIPLY, HGC_DT_BF16, 2, in(HGC_DT_F32, 1, 5),
			in(HGC_DT_F32, 1, 5))), "bf16[5]", "a float result may be preset to bf16");
	is_str(infer(op(HGC_OP_SUBTRACT, HGC_DT_UNDEF, 2, in(HGC_DT_S32, 1, 5),
			in(HGC_DT_S32, 1, 1))), "s32[5]", "integer binary ops keep the type");
	is_str(infer(op(HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 3, 2, 4, 3),
			in(HGC_DT_F32, 1, 3))), "f32[2,4,3]", "BiasAdd NXC");
	o = op(HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 4, 2, 3, 4, 5), in(HGC_DT_F32, 1, 3));
	a_str(o, "data_format", "NCX");
	is_str(infer(o), "f32[2,3,4,5]", "BiasAdd NCX");
	is_str(infer(op(HGC_OP_SIGMOID, HGC_DT_UNDEF, 1, in(HGC_DT_BF16, 2, 3, 4))), "bf16[3,4]",
	       "unary keeps shape and type");
	o = op(HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, in(HGC_DT_F32, 3, 2, 3, 4));
	a_int(o, "axis", -3);
	is_str(infer(o), "f32[2,3,4]", "SoftMax with a negative axis");
	o = op(HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 3, in(HGC_DT_F32, 3, 2, 3, 4),
	       in(HGC_DT_F32, 2, 3, 4), in(HGC_DT_F32, 2, 3, 4));
	a_int(o, "begin_norm_axis", -2);
	is_str(infer(o), "f32[2,3,4]", "LayerNorm over the last two dims");
	o = op(HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 1, in(HGC_DT_F32, 2, 3, 4));
	a_bool(o, "use_affine", false);
	is_str(infer(o), "f32[3,4]", "LayerNorm without affine takes one input");
	o = op(HGC_OP_BATCH_NORM_INFERENCE, HGC_DT_UNDEF, 5, in(HGC_DT_F32, 4, 2, 3, 4, 5),
	       in(HGC_DT_F32, 1, 3), in(HGC_DT_F32, 1, 3), in(HGC_DT_F32, 1, 3), in(HGC_DT_F32, 1, 3));
	a_float(o, "epsilon", 1e-3);
	a_str(o, "data_format", "NCX");
	is_str(infer(o), "f32[2,3,4,5]", "BatchNormInference NCX");
	o = op(HGC_OP_REDUCE_MEAN, HGC_DT_UNDEF, 1, in(HGC_DT_F32, 3, 2, 3, 4));
	a_ints(o, "axes", 2, -1, 0);
	is_str(infer(o), "f32[3]", "reduce with negative axes drops them");
	o = op(HGC_OP_REDUCE_L2, HGC_DT_UNDEF, 1, in(HGC_DT_F32, 3, 2, 3, 4));
	a_ints(o, "axes", 2, -1, 0);
	a_bool(o, "keep_dims", true);
	is_str(infer(o), "f32[1,3,1]", "keep_dims keeps them as 1");
	o = op(HGC_OP_REDUCE_SUM, HGC_DT_UNDEF, 1, in(HGC_DT_F32, 2, 2, 3));
	a_ints(o, "axes", 2, 0, 1);
	is_str(infer(o), "f32[]", "reducing everything gives a scalar");
}

/* Pooling shapes, including ceil rounding and its last-window rule. */
static void test_pool_shapes(void)
{
	struct hgc_op *o;

	fresh();
	o = op(HGC_OP_MAX_POOL, HGC_DT_UNDEF, 1, in(HGC_DT_F32, 4, 1, 8, 8, 3));
	window(o, 2, 2, 0, 0, 0, 0);
	a_ints(o, "kernel", 2, 3, 3);
	is_str(infer(o), "f32[1,3,3,3]", "MaxPool NXC floor");
	o = op(HGC_OP_MAX_POOL, HGC_DT_UNDEF, 1, in(HGC_DT_F32, 4, 1, 8, 8, 3));
	window(o, 2, 2, 0, 0, 0, 0);
	a_ints(o, "kernel", 2, 3, 3);
	a_str(o, "rounding_type", "ceil");
	is_str(infer(o), "f32[1,4,4,3]", "MaxPool ceil");
	o = op(HGC_OP_AVG_POOL, HGC_DT_UNDEF, 1, in(HGC_DT_F32, 4, 1, 2, 5, 5));
	window(o, 2, 2, 1, 1, 1, 1);
	a_ints(o, "kernel", 2, 2, 2);
	a_bool(o, "exclude_pad", true);
	a_str(o, "rounding_type", "ceil");
	a_str(o, "data_format", "NCX");
	is_str(infer(o), "f32[1,2,3,3]", "ceil drops a last window starting in the end padding");
	o = op(HGC_OP_MAX_POOL, HGC_DT_UNDEF, 1, in(HGC_DT_S8, 4, 1, 9, 9, 3));
	window(o, 1, 1, 0, 0, 0, 0);
	a_ints(o, "kernel", 2, 3, 3);
	a_ints(o, "dilations", 2, 2, 3);
	is_str(infer(o), "s8[1,5,3,3]", "dilated int8 MaxPool");
}

/* Data movement and quantization shapes. */
static void test_movement_shapes(void)
{
	struct hgc_op *o;

	fresh();
	o = op(HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, in(HGC_DT_S8, 3, 2, 3, 4));
	a_ints(o, "order", 3, 2, -3, 1);
	is_str(infer(o), "s8[4,2,3]", "transpose with a negative axis");
	o = op(HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, in(HGC_DT_F32, 3, 2, 3, 4));
	a_ints(o, "shape", 2, 0, -1);
	a_bool(o, "special_zero", true);
	is_str(infer(o), "f32[2,12]", "reshape: 0 copies, -1 infers");
	o = op(HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, in(HGC_DT_F32, 3, 2, 3, 4));
	a_ints(o, "shape", 1, -1);
	a_bool(o, "special_zero", false);
	is_str(infer(o), "f32[24]", "reshape to a vector");
	o = op(HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, in(HGC_DT_F32, 2, 1, 1));
	a_ints(o, "shape", 0);
	a_bool(o, "special_zero", false);
	is_str(infer(o), "f32[]", "reshape one element to a scalar");
	is_str(infer(op(HGC_OP_REORDER, HGC_DT_UNDEF, 1, in(HGC_DT_U8, 2, 3, 4))), "u8[3,4]",
	       "Reorder keeps shape and type");
	o = op(HGC_OP_CONCAT, HGC_DT_UNDEF, 3, in(HGC_DT_F32, 2, 2, 3), in(HGC_DT_F32, 2, 2, 5),
	       in(HGC_DT_F32, 2, 2, 1));
	a_int(o, "axis", -1);
	is_str(infer(o), "f32[2,9]", "Concat of three along the last axis");
	is_str(infer(op(HGC_OP_SELECT, HGC_DT_UNDEF, 3, in(HGC_DT_BOOL, 2, 3, 1),
			in(HGC_DT_F32, 2, 1, 4), in(HGC_DT_F32, 0))), "f32[3,4]",
	       "Select broadcasts its three inputs");
	o = op(HGC_OP_QUANTIZE, HGC_DT_S8, 1, in(HGC_DT_F32, 2, 3, 4));
	a_str(o, "qtype", "per_channel");
	a_int(o, "axis", -1);
	a_floats(o, "scales", 4, 0.1, 0.2, 0.3, 0.4);
	a_ints(o, "zps", 4, 0, 1, -2, 3);
	is_str(infer(o), "s8[3,4]", "per-channel Quantize along a negative axis");
	o = op(HGC_OP_DEQUANTIZE, HGC_DT_UNDEF, 1, in(HGC_DT_U8, 2, 3, 4));
	a_floats(o, "scales", 1, 0.5);
	a_ints(o, "zps", 1, 128);
	is_str(infer(o), "f32[3,4]", "Dequantize gives f32");
	is_str(infer(op(HGC_OP_TYPE_CAST, HGC_DT_BF16, 1, in(HGC_DT_F32, 1, 3))), "bf16[3]",
	       "TypeCast f32 to bf16");
	is_str(infer(op(HGC_OP_TYPE_CAST, HGC_DT_F32, 1, in(HGC_DT_S8, 1, 3))), "f32[3]",
	       "TypeCast s8 to f32");
}

/* Finish an op expected to fail, comparing the exact message. */
#define FAILS(o, msg, ...) is_str(finish(o), E msg "\n", __VA_ARGS__)

/* Arity, types and shapes that a user can get wrong, with their exact messages. */
static void test_errors_core(void)
{
	struct hgc_tensor *f = in(HGC_DT_F32, 2, 4, 13), *w = in(HGC_DT_F32, 2, 12, 5);
	struct hgc_op *o, *bad;

	FAILS(op(HGC_OP_RELU, HGC_DT_UNDEF, 2, f, f), "ReLU: expects 1 input, got 2", "arity 1");
	FAILS(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 1, f), "MatMul: expects 2 to 3 inputs, got 1",
	      "arity range");
	FAILS(op(HGC_OP_CONCAT, HGC_DT_UNDEF, 0), "Concat: expects at least 1 input, got 0",
	      "arity minimum");
	FAILS(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, f, w), "MatMul: inner dimensions differ: 13 vs 12",
	      "MatMul inner dims");
	FAILS(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 3, 2, 3, 4), in(HGC_DT_F32, 3, 3, 4, 5)),
	      "MatMul: batch dimensions do not broadcast: [2] vs [3]", "MatMul batch dims");
	FAILS(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 3, in(HGC_DT_F32, 2, 4, 5), in(HGC_DT_F32, 2, 5, 6),
		 in(HGC_DT_F32, 1, 4)),
	      "MatMul: bias [4] does not broadcast to the output [4,6]", "MatMul bias shape");
	FAILS(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, f, in(HGC_DT_BF16, 2, 13, 5)),
	      "MatMul: weights has type bf16 (expected f32)", "MatMul mixed float types");
	FAILS(op(HGC_OP_MATMUL, HGC_DT_BF16, 2, in(HGC_DT_U8, 2, 4, 5), in(HGC_DT_S8, 2, 5, 6)),
	      "MatMul: the output type cannot be bf16 (expected s32)", "MatMul int8 output type");
	FAILS(op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, in(HGC_DT_S32, 2, 4, 5), in(HGC_DT_S8, 2, 5, 6)),
	      "MatMul: src has type s32 (expected f32, bf16, s8, u8)", "MatMul src type");
	FAILS(op(HGC_OP_ADD, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 2, 2, 3), in(HGC_DT_F32, 1, 4)),
	      "Add: shapes do not broadcast: [2,3] vs [4]", "binary broadcast");
	o = op(HGC_OP_ADD, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 2, 2, 3), in(HGC_DT_F32, 1, 3));
	a_str(o, "auto_broadcast", "none");
	FAILS(o, "Add: shapes differ with auto_broadcast \"none\": [2,3] vs [3]", "no broadcast");
	o = op(HGC_OP_ADD, HGC_DT_UNDEF, 2, f, f);
	a_str(o, "auto_broadcast", "NUMPY");
	FAILS(o, "Add: auto_broadcast \"NUMPY\" is not one of \"numpy\", \"none\"",
	      "auto_broadcast value");
	FAILS(op(HGC_OP_MULTIPLY, HGC_DT_UNDEF, 2, f, in(HGC_DT_S8, 0)),
	      "Multiply: input types differ: f32 vs s8", "binary types");
	FAILS(op(HGC_OP_RELU, HGC_DT_UNDEF, 1, in(HGC_DT_BOOL, 1, 3)),
	      "ReLU: src has type boolean (expected f32, bf16, s32, s8, u8)", "unary on boolean");
	FAILS(op(HGC_OP_RELU, HGC_DT_S8, 1, f), "ReLU: the output type cannot be s8 (expected f32)",
	      "preset output type");
	bad = op(HGC_OP_TYPE_CAST, HGC_DT_UNDEF, 1, f);
	FAILS(bad, "TypeCast: the output type must be given", "TypeCast needs a type");
	FAILS(op(HGC_OP_RELU, HGC_DT_UNDEF, 1, bad->out[0]),
	      "ReLU: input 0 has no type (its producer failed)", "input of a failed op");
	FAILS(op(HGC_OP_TYPE_CAST, HGC_DT_BF16, 1, in(HGC_DT_S8, 1, 2)),
	      "TypeCast: cannot cast s8 to bf16", "TypeCast pair");
	FAILS(op(HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, in(HGC_DT_F32, 3, 2, 4, 3), in(HGC_DT_F32, 1, 4)),
	      "BiasAdd: bias must be [3] (the channels), got [4]", "BiasAdd bias size");
	o = op(HGC_OP_CLAMP, HGC_DT_UNDEF, 1, f);
	a_float(o, "min", 2);
	a_float(o, "max", 1);
	FAILS(o, "Clamp: min 2 is greater than max 1", "Clamp bounds");
	o = op(HGC_OP_GELU, HGC_DT_UNDEF, 1, f);
	a_str(o, "mode", "fast");
	FAILS(o, "GELU: mode \"fast\" is not one of \"gelu_erf\", \"gelu_tanh\"", "GELU mode");
	o = op(HGC_OP_SOFT_PLUS, HGC_DT_UNDEF, 1, f);
	a_float(o, "beta", 0);
	FAILS(o, "SoftPlus: beta must not be 0", "SoftPlus beta");
}

/* A Convolution with a window and the given formats. */
static struct hgc_op *conv(struct hgc_tensor *s, struct hgc_tensor *w, int groups)
{
	struct hgc_op *o = op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 2, s, w);

	window(o, 1, 1, 0, 0, 0, 0);
	a_ints(o, "dilations", 2, 1, 1);
	a_int(o, "groups", groups);
	a_str(o, "data_format", "NCX");
	a_str(o, "weights_format", "OIX");
	return o;
}

/* Convolution and pooling errors. */
static void test_errors_window(void)
{
	struct hgc_tensor *s = in(HGC_DT_F32, 4, 1, 6, 5, 5);
	struct hgc_op *o;

	FAILS(conv(s, in(HGC_DT_F32, 4, 4, 4, 3, 3), 2),
	      "Convolution: weights have 4 input channels, expected 3 (src channels 6 / groups 2)",
	      "conv input channels");
	FAILS(conv(s, in(HGC_DT_F32, 4, 4, 1, 3, 3), 4),
	      "Convolution: src channels 6 are not divisible by groups 4", "conv groups");
	FAILS(conv(s, in(HGC_DT_F32, 4, 4, 2, 3, 3), 3),
	      "Convolution: output channels 4 are not divisible by groups 3", "conv out channels");
	FAILS(conv(s, in(HGC_DT_F32, 4, 4, 6, 3, 3), 0), "Convolution: groups must be positive, got 0",
	      "conv zero groups");
	FAILS(conv(s, in(HGC_DT_F32, 4, 4, 6, 0, 3), 1),
	      "Convolution: the kernel must not be empty, got 0x3", "empty kernel");
	FAILS(conv(in(HGC_DT_F32, 3, 6, 5, 5), in(HGC_DT_F32, 4, 4, 6, 3, 3), 1),
	      "Convolution: src must be 4-D, got 3-D", "conv rank");
	o = conv(s, in(HGC_DT_F32, 4, 4, 6, 3, 3), 1);
	a_ints(o, "strides", 2, 1, 0);
	FAILS(o, "Convolution: strides must be positive, got [1,0]", "zero stride");
	o = conv(s, in(HGC_DT_F32, 4, 4, 6, 3, 3), 1);
	a_ints(o, "strides", 3, 1, 1, 1);
	FAILS(o, "Convolution: strides must have 2 values, got 3", "strides count");
	o = conv(s, in(HGC_DT_F32, 4, 4, 6, 3, 3), 1);
	a_ints(o, "pads_begin", 2, -1, 0);
	FAILS(o, "Convolution: pads_begin must be non-negative, got [-1,0]", "negative pad");
	o = conv(s, in(HGC_DT_F32, 4, 4, 6, 3, 3), 1);
	a_ints(o, "dilations", 2, 0, 1);
	FAILS(o, "Convolution: dilations must be positive, got [0,1]", "zero dilation");
	FAILS(conv(s, in(HGC_DT_F32, 4, 4, 6, 7, 3), 1),
	      "Convolution: output spatial dim 0 would be empty: input 5 + pads 0+0 < kernel extent 7",
	      "kernel larger than the input");
	o = conv(s, in(HGC_DT_F32, 4, 4, 6, 3, 3), 1);
	a_str(o, "data_format", "NHWC");
	FAILS(o, "Convolution: data_format \"NHWC\" is not one of \"NXC\", \"NCX\"", "data_format");
	o = conv(s, in(HGC_DT_F32, 4, 4, 6, 3, 3), 1);
	a_str(o, "auto_pad", "same");
	FAILS(o, "Convolution: auto_pad \"same\" is not one of \"None\", \"SAME_UPPER\", "
		 "\"SAME_LOWER\", \"VALID\"", "auto_pad");
	o = op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 3, s, in(HGC_DT_F32, 4, 4, 6, 3, 3),
	       in(HGC_DT_F32, 1, 3));
	window(o, 1, 1, 0, 0, 0, 0);
	a_ints(o, "dilations", 2, 1, 1);
	a_str(o, "data_format", "NCX");
	a_str(o, "weights_format", "OIX");
	FAILS(o, "Convolution: bias must be [4], got [3]", "conv bias");
	o = op(HGC_OP_MAX_POOL, HGC_DT_UNDEF, 1, s);
	window(o, 1, 1, 3, 0, 0, 0);
	a_ints(o, "kernel", 2, 3, 3);
	FAILS(o, "MaxPool: pads 3+0 must be smaller than the kernel extent 3", "pool pads");
	o = op(HGC_OP_AVG_POOL, HGC_DT_UNDEF, 1, s);
	window(o, 1, 1, 0, 0, 0, 0);
	a_ints(o, "kernel", 2, 0, 2);
	a_bool(o, "exclude_pad", true);
	FAILS(o, "AvgPool: kernel must be positive, got [0,2]", "pool kernel");
	o = op(HGC_OP_AVG_POOL, HGC_DT_UNDEF, 1, s);
	window(o, 1, 1, 0, 0, 0, 0);
	a_ints(o, "kernel", 2, 2, 2);
	a_bool(o, "exclude_pad", true);
	a_str(o, "rounding_type", "round");
	FAILS(o, "AvgPool: rounding_type \"round\" is not one of \"floor\", \"ceil\"", "rounding");
}

/* Norms, reductions, data movement and quantization errors. */
static void test_errors_other(void)
{
	struct hgc_tensor *f = in(HGC_DT_F32, 2, 3, 4), *t3 = in(HGC_DT_F32, 3, 2, 3, 4);
	struct hgc_op *o;

	o = op(HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, f);
	a_int(o, "axis", 2);
	FAILS(o, "SoftMax: axis 2 is out of range for a 2-D src", "softmax axis");
	o = op(HGC_OP_LOG_SOFTMAX, HGC_DT_UNDEF, 1, in(HGC_DT_S8, 1, 3));
	FAILS(o, "LogSoftmax: src has type s8 (expected f32, bf16)", "softmax on ints");
	FAILS(op(HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 1, f),
	      "LayerNorm: use_affine is true but gamma and beta are missing", "LayerNorm affine");
	FAILS(op(HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 3, f, in(HGC_DT_F32, 1, 3), in(HGC_DT_F32, 1, 4)),
	      "LayerNorm: gamma must be [4] (the normalized dims), got [3]", "LayerNorm gamma");
	o = op(HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 1, f);
	a_bool(o, "use_affine", false);
	a_float(o, "epsilon", -1);
	FAILS(o, "LayerNorm: epsilon must not be negative, got -1", "epsilon");
	o = op(HGC_OP_BATCH_NORM_INFERENCE, HGC_DT_UNDEF, 5, t3, in(HGC_DT_F32, 1, 4),
	       in(HGC_DT_F32, 1, 4), in(HGC_DT_F32, 1, 3), in(HGC_DT_F32, 1, 4));
	a_float(o, "epsilon", 0.001);
	FAILS(o, "BatchNormInference: mean must be [4] (the channels), got [3]", "BN params");
	o = op(HGC_OP_REDUCE_SUM, HGC_DT_UNDEF, 1, f);
	a_ints(o, "axes", 2, -1, 1);
	FAILS(o, "ReduceSum: axis 1 appears twice in axes", "duplicate axes");
	o = op(HGC_OP_REDUCE_MAX, HGC_DT_UNDEF, 1, t3);
	a_ints(o, "axes", 1, 5);
	FAILS(o, "ReduceMax: axis 5 is out of range for a 3-D src", "reduce axis range");
	o = op(HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, t3);
	a_ints(o, "order", 3, 0, 0, 1);
	FAILS(o, "StaticTranspose: order [0,0,1] is not a permutation of 3 axes", "non-permutation");
	o = op(HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, t3);
	a_ints(o, "order", 3, 0, 3, 1);
	FAILS(o, "StaticTranspose: order [0,3,1] is not a permutation of 3 axes", "order range");
	o = op(HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, t3);
	a_ints(o, "order", 2, 1, 0);
	FAILS(o, "StaticTranspose: order has 2 values for a 3-D src", "order length");
	o = op(HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, f);
	a_ints(o, "shape", 2, 4, 2);
	a_bool(o, "special_zero", false);
	FAILS(o, "StaticReshape: cannot reshape [3,4] (12 elements) into [4,2] (8 elements)",
	      "reshape count");
	o = op(HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, f);
	a_ints(o, "shape", 2, 5, -1);
	a_bool(o, "special_zero", false);
	FAILS(o, "StaticReshape: cannot reshape [3,4] into [5,-1]", "reshape -1");
	o = op(HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, f);
	a_ints(o, "shape", 3, 2000000000, 2000000000, 2000000000);
	a_bool(o, "special_zero", false);
	FAILS(o, "StaticReshape: cannot reshape [3,4] into [2000000000,2000000000,2000000000] "
		 "(too many elements)", "reshape overflow");
	o = op(HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, f);
	a_ints(o, "shape", 2, -1, -1);
	a_bool(o, "special_zero", false);
	FAILS(o, "StaticReshape: shape has more than one -1", "two -1s");
	o = op(HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, f);
	a_ints(o, "shape", 3, 0, 0, 0);
	a_bool(o, "special_zero", true);
	FAILS(o, "StaticReshape: shape[2] is 0 but the src has only 2 dims", "special zero range");
	o = op(HGC_OP_CONCAT, HGC_DT_UNDEF, 2, t3, in(HGC_DT_F32, 3, 2, 4, 5));
	a_int(o, "axis", 1);
	FAILS(o, "Concat: input 1 has shape [2,4,5], which differs from [2,3,4] outside axis 1",
	      "concat dims");
	o = op(HGC_OP_CONCAT, HGC_DT_UNDEF, 2, f, in(HGC_DT_BF16, 2, 3, 4));
	a_int(o, "axis", 0);
	FAILS(o, "Concat: input 1 has type bf16 but input 0 has f32", "concat types");
	o = op(HGC_OP_CONCAT, HGC_DT_UNDEF, 1, f);
	a_int(o, "axis", -3);
	FAILS(o, "Concat: axis -3 is out of range for 2-D inputs", "concat axis");
	FAILS(op(HGC_OP_SELECT, HGC_DT_UNDEF, 3, f, f, f),
	      "Select: cond has type f32 (expected boolean)", "select cond");
	FAILS(op(HGC_OP_SELECT, HGC_DT_UNDEF, 3, in(HGC_DT_BOOL, 1, 4), f, in(HGC_DT_F32, 1, 3)),
	      "Select: shapes do not broadcast: [4], [3,4], [3]", "select shapes");
	FAILS(op(HGC_OP_REORDER, HGC_DT_BF16, 1, f), "Reorder: the output type cannot be bf16 (expected f32)",
	      "reorder keeps its type");
	o = op(HGC_OP_QUANTIZE, HGC_DT_UNDEF, 1, f);
	a_floats(o, "scales", 1, 0.5);
	FAILS(o, "Quantize: the output type must be given (u8 or s8)", "Quantize output type");
	o = op(HGC_OP_QUANTIZE, HGC_DT_U8, 1, f);
	a_str(o, "qtype", "per_channel");
	a_floats(o, "scales", 3, 0.5, 0.5, 0.5);
	FAILS(o, "Quantize: per_channel quantization along axis 1 needs 4 scales, got 3",
	      "per-channel scale count");
	o = op(HGC_OP_QUANTIZE, HGC_DT_U8, 1, f);
	a_floats(o, "scales", 1, 0.0);
	FAILS(o, "Quantize: scales must be finite and non-zero, got 0", "zero scale");
	o = op(HGC_OP_QUANTIZE, HGC_DT_U8, 1, f);
	a_floats(o, "scales", 1, 0.5);
	a_ints(o, "zps", 1, 300);
	FAILS(o, "Quantize: zero point 300 is out of range for u8", "zero point range");
	o = op(HGC_OP_DEQUANTIZE, HGC_DT_UNDEF, 1, in(HGC_DT_S8, 2, 3, 4));
	a_str(o, "qtype", "per_channel");
	a_int(o, "axis", 0);
	a_floats(o, "scales", 3, 0.5, 0.5, 0.5);
	a_ints(o, "zps", 2, 1, 2);
	FAILS(o, "Dequantize: per_channel quantization needs 3 zero points, got 2", "zps count");
	o = op(HGC_OP_DEQUANTIZE, HGC_DT_UNDEF, 1, f);
	a_floats(o, "scales", 1, 0.5);
	FAILS(o, "Dequantize: src has type f32 (expected s32, s8, u8)", "Dequantize src type");
}

/* A private temporary directory for file tests. */
static char tmpdir[64];

/* Path of a file in the temporary directory. */
static const char *tmp(const char *name)
{
	static char buf[4][128];
	static int k;
	char *b = buf[k++ % 4];

	snprintf(b, 128, "%s/%s", tmpdir, name);
	return b;
}

/* Write raw bytes to a file. */
static void write_raw(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
}

/* Write then read back a tensor; compare type, shape and bytes. */
static void roundtrip(enum hgc_dtype dt, int nd, const int64_t *dims, const void *data)
{
	struct hgc_diag d;
	enum hgc_dtype got_dt = HGC_DT_UNDEF;
	int64_t got_dims[HGC_MAX_DIMS];
	size_t n = (size_t)hgc_dtype_size(dt);
	int got_nd = -1, i, same;
	void *back;

	for (i = 0; i < nd; i++)
		n *= (size_t)dims[i];
	hgc_diag_init(&d);
	is_int(hgc_npy_write(tmp("rt.npy"), dt, nd, dims, data, &d), 0, "write %s %d-D",
	       hgc_dtype_name(dt), nd);
	back = hgc_npy_read(tmp("rt.npy"), &got_dt, &got_nd, got_dims, &d);
	same = back && got_dt == dt && got_nd == nd && !memcmp(back, data, n);
	for (i = 0; same && i < nd; i++)
		same = got_dims[i] == dims[i];
	ok(same, "%s %d-D reads back the same", hgc_dtype_name(dt), nd);
	if (!same)
		diag("%s", hgc_diag_text(&d));
	free(back);
	hgc_diag_release(&d);
}

/* Read a file expected to fail; return the message without the "hgc: error: " prefix. */
static const char *read_error(const char *path)
{
	static char buf[512];
	struct hgc_diag d;
	enum hgc_dtype dt;
	int nd;
	int64_t dims[HGC_MAX_DIMS];
	void *p;

	hgc_diag_init(&d);
	p = hgc_npy_read(path, &dt, &nd, dims, &d);
	snprintf(buf, sizeof(buf), "%s", p ? "(read fine)" : hgc_diag_text(&d));
	free(p);
	hgc_diag_release(&d);
	return buf;
}

/* A v1 header file with a given dict and data. */
static void write_npy(const char *path, int version, const char *dict, const void *data,
		      size_t n)
{
	unsigned char buf[512];
	size_t len = strlen(dict), pre = version == 1 ? 10 : 12;

	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)version;
	buf[7] = 0;
	buf[8] = len & 0xff;
	buf[9] = (len >> 8) & 0xff;
	buf[10] = buf[11] = 0;
	memcpy(buf + pre, dict, len);
	memcpy(buf + pre + len, data, n);
	write_raw(path, buf, pre + len + n);
}

/* The error reading name should be "hgc: error: DIR/name: msg". */
static void npy_fails(const char *name, const char *msg, const char *what)
{
	char want[512];

	snprintf(want, sizeof(want), "hgc: error: %s: %s\n", tmp(name), msg);
	is_str(read_error(tmp(name)), want, "npy error: %s", what);
}

/* Bad magic, versions, headers, dtypes, Fortran order and truncation. */
static void test_npy_errors(const float *f)
{
	char want[512];
	struct hgc_diag d;

	write_raw(tmp("e1.npy"), "\x93NUMPX\x01\x00\x00\x00", 10);
	npy_fails("e1.npy", "not a NumPy file (bad magic)", "bad magic");
	write_raw(tmp("e2.npy"), "\x93NUM", 4);
	npy_fails("e2.npy", "not a NumPy file (bad magic)", "short file");
	write_npy(tmp("e3.npy"), 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", f, 16);
	npy_fails("e3.npy", "unsupported dtype '<f8'", "float64");
	write_npy(tmp("e4.npy"), 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", f, 8);
	npy_fails("e4.npy", "unsupported dtype '>f4'", "big-endian");
	write_npy(tmp("e5.npy"), 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1), }", f, 8);
	npy_fails("e5.npy", "fortran_order arrays are not supported", "Fortran order");
	write_npy(tmp("e6.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", f, 8);
	npy_fails("e6.npy", "truncated data (expected 16 bytes, got 8)", "truncated data");
	write_npy(tmp("e7.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, }", f, 16);
	npy_fails("e7.npy", "malformed npy header", "unclosed tuple");
	write_npy(tmp("e8.npy"), 1, "{'descr': '<f4', 'shape': (4,), }", f, 16);
	npy_fails("e8.npy", "malformed npy header", "missing key");
	write_npy(tmp("e9.npy"), 1,
		  "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", f, 4);
	npy_fails("e9.npy", "too many dims (at most 8)", "nine dims");
	write_npy(tmp("e10.npy"), 4, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f, 4);
	npy_fails("e10.npy", "unsupported npy version 4.0", "version 4");
	write_raw(tmp("e11.npy"), "\x93NUMPY\x01\x00\x40\x00{'descr'", 17);
	npy_fails("e11.npy", "truncated header", "truncated header");
	write_npy(tmp("e12.npy"), 1,
		  "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296,4294967296,2), }", f, 4);
	npy_fails("e12.npy", "the shape is too large", "overflowing shape");
	snprintf(want, sizeof(want), "hgc: error: cannot open %s: No such file or directory\n",
		 tmp("none.npy"));
	is_str(read_error(tmp("none.npy")), want, "npy error: missing file");
	hgc_diag_init(&d);
	is_int(hgc_npy_write(tmp("x.npy"), HGC_DT_UNDEF, 1, (int64_t[]){1}, f, &d), -1,
	       "writing an undef tensor fails");
	snprintf(want, sizeof(want), "hgc: error: %s: cannot store undef tensors with 1 dims in npy\n",
		 tmp("x.npy"));
	is_str(hgc_diag_text(&d), want, "with a message");
	hgc_diag_release(&d);
}

/* .npy round trips for every dtype, hand-made v1/v2 files, and every error. */
static void test_npy(void)
{
	const float f[6] = {1, -2.5f, 3e-8f, INFINITY, 0, 7};
	const int32_t s32[4] = {INT32_MIN, -1, 0, INT32_MAX};
	const int8_t s8[3] = {-128, 0, 127};
	const uint8_t u8[5] = {0, 1, 128, 254, 255}, b[4] = {1, 0, 0, 1};
	const uint16_t bf[2] = {0x3f80, 0xc040};
	int64_t d23[2] = {2, 3}, d4[1] = {4}, d3[1] = {3}, d511[3] = {5, 1, 1}, d22[2] = {2, 2};
	int64_t dims[HGC_MAX_DIMS];
	enum hgc_dtype dt;
	struct hgc_diag d;
	int nd;
	float *p;
	size_t len;
	char *raw;

	roundtrip(HGC_DT_F32, 2, d23, f);
	roundtrip(HGC_DT_F32, 0, NULL, f);
	roundtrip(HGC_DT_S32, 1, d4, s32);
	roundtrip(HGC_DT_S8, 1, d3, s8);
	roundtrip(HGC_DT_U8, 3, d511, u8);
	roundtrip(HGC_DT_BOOL, 2, d22, b);
	roundtrip(HGC_DT_BF16, 1, (int64_t[]){2}, bf);
	hgc_diag_init(&d);
	hgc_npy_write(tmp("a.npy"), HGC_DT_F32, 2, d23, f, &d);
	raw = hgc_read_file(tmp("a.npy"), &len, &d);
	ok(raw && len == 128 + 24 && raw[127] == '\n', "the header pads the data to 64 bytes");
	ok(raw && strstr(raw + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"),
	   "the header is numpy's dict");
	free(raw);
	hgc_npy_write(tmp("a.npy"), HGC_DT_F32, 1, d3, f, &d);
	raw = hgc_read_file(tmp("a.npy"), &len, &d);
	ok(raw && strstr(raw + 10, "'shape': (3,)"), "a 1-tuple has its comma");
	free(raw);
	hgc_npy_write(tmp("a.npy"), HGC_DT_BOOL, 0, NULL, b, &d);
	raw = hgc_read_file(tmp("a.npy"), &len, &d);
	ok(raw && strstr(raw + 10, "'descr': '|b1'") && strstr(raw + 10, "'shape': ()"), "boolean scalar header");
	free(raw);
	write_npy(tmp("v2.npy"), 2, "{\"shape\": (1,2), \"fortran_order\": False, \"descr\": \"<f4\"}\n",
		  f, 8);
	p = hgc_npy_read(tmp("v2.npy"), &dt, &nd, dims, &d);
	ok(p && dt == HGC_DT_F32 && nd == 2 && dims[0] == 1 && dims[1] == 2 && p[1] == -2.5f,
	   "reads a version 2.0 file with keys in another order");
	free(p);
	is_int(d.nerr, 0, "no errors so far");
	hgc_diag_release(&d);
	test_npy_errors(f);
}

/* The printer on a small graph: inputs, an embedded constant, ops with attributes, outputs. */
static void test_print(void)
{
	static const float emb[4] = {1, 2, 3, 4};
	struct hgc_tensor *x, *w, *c;
	struct hgc_op *m, *r, *q;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	fresh();
	x = hgc_graph_add_input(G, "x", HGC_DT_F32, 2, (int64_t[]){2, 3}, HGC_PROP_VARIABLE, &L);
	w = hgc_graph_add_input(G, "w0", HGC_DT_F32, 2, (int64_t[]){3, 4}, HGC_PROP_CONSTANT, &L);
	m = op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, x, w);
	a_bool(m, "transpose_b", false);
	a_bool(m, "transpose_a", false);
	finish(m);
	r = op(HGC_OP_LEAKY_RELU, HGC_DT_UNDEF, 1, m->out[0]);
	a_float(r, "alpha", 0.1);
	finish(r);
	r->out[0]->name = "h";
	c = hgc_graph_add_input(G, NULL, HGC_DT_F32, 1, (int64_t[]){4}, HGC_PROP_CONSTANT, &L);
	G->inputs.len--;	/* as a pass would embed a folded constant */
	c->data = emb;
	q = op(HGC_OP_ADD, HGC_DT_UNDEF, 2, r->out[0], c);
	finish(q);
	m = op(HGC_OP_QUANTIZE, HGC_DT_U8, 1, q->out[0]);
	a_int(m, "axis", -1);
	a_ints(m, "scales", 1, 2);
	a_str(m, "qtype", "per_tensor");
	finish(m);
	m->out[0]->layout.strides[0] = 1;
	m->out[0]->layout.strides[1] = 2;
	hgc_graph_add_output(G, q->out[0]);
	hgc_graph_add_output(G, m->out[0]);
	f = open_memstream(&text, &len);
	hgc_graph_print(f, G);
	fclose(f);
	is_str(text,
	       "graph {\n"
	       "  input %0 x : f32[2,3]\n"
	       "  const %1 w0 : f32[3,4]\n"
	       "  const %4 : f32[4] (embedded)\n"
	       "  %2 : f32[2,4] = MatMul(%0 x, %1 w0) {transpose_a=false, transpose_b=false}\n"
	       "  %3 h : f32[2,4] = LeakyReLU(%2) {alpha=0.1}\n"
	       "  %5 : f32[2,4] = Add(%3 h, %4)\n"
	       "  %6 : u8[2,4] @strides[1,2] = Quantize(%5) {qtype=\"per_tensor\", axis=-1, scales=[2.0]}\n"
	       "  output %5, %6\n"
	       "}\n",
	       "the printer's text");
	free(text);
}

int main(void)
{
	if (!mkdtemp(strcpy(tmpdir, "/tmp/hgc-010-XXXXXX"))) {
		printf("1..0 # SKIP cannot make a temporary directory\n");
		return 0;
	}
	test_dtypes();
	test_bf16();
	test_store();
	test_building();
	test_defaults();
	test_attr_errors();
	test_matmul_shapes();
	test_conv_shapes();
	test_fusible_shapes();
	test_pool_shapes();
	test_movement_shapes();
	fresh();
	test_errors_core();
	test_errors_window();
	test_errors_other();
	test_npy();
	test_print();
	hgc_graph_free(G);
	if (system(NULL)) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			diag("cannot remove %s", tmpdir);
	}
	return done_testing();
}
