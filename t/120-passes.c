/*
 * 120-passes: the graph editing helpers (core/graph/edit.c), decompose,
 * decompose_quant, cse, dce and constfold on hand-built graphs (the exact
 * ops each leaves, and the interpreter's results against the graph before
 * the pass), and the pipeline: switches, config glue, dump, hook, stats
 * and errors.  t/121 runs every spec, t/122 lowprec, t/123 transposes.
 */
#include "t/passes_build.h"

#include <stdlib.h>
#include <string.h>

/* The printed form of g (a static buffer). */
static const char *printed(const struct hgc_graph *g)
{
	static char buf[16384];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	hgc_graph_print(f, g);
	fclose(f);
	return buf;
}

/* A graph x -> ReLU -> Exp (out) with a const w -> Tanh nobody reads. */
static void small_graph(struct hgc_tensor **x, struct hgc_tensor **w)
{
	pt_new();
	*x = pt_var("x", HGC_DT_F32, 2, (int64_t)2, (int64_t)3);
	*w = pt_const("w", HGC_DT_F32, 2, (int64_t)2, (int64_t)3);
	pt_out(pt_un(HGC_OP_EXP, pt_un(HGC_OP_RELU, *x)));
	pt_un(HGC_OP_TANH, *w);
}

/* Clone: the same text, and a copy that does not share ops or embedded data. */
static void test_clone(void)
{
	static const float v[2] = {1, 2};
	int64_t two = 2;
	struct hgc_tensor *x, *w, *c;
	struct hgc_graph *k;
	char before[16384];

	small_graph(&x, &w);
	c = hgc_graph_add_const(pt.g, HGC_DT_F32, 1, &two, v, NULL);
	pt_out(c);
	snprintf(before, sizeof(before), "%s", printed(pt.g));
	k = hgc_graph_clone(pt.g);
	is_str(printed(k), before, "clone prints the same");
	ok(HGC_GRAPH_OP(k, 0) != HGC_GRAPH_OP(pt.g, 0) && HGC_GRAPH_OUTPUT(k, 1)->data != c->data &&
	   ((const float *)HGC_GRAPH_OUTPUT(k, 1)->data)[1] == 2, "clone copies ops and data");
	is_int(k->next_id, pt.g->next_id, "clone keeps the ids");
	HGC_GRAPH_OP(k, 0)->kind = HGC_OP_SIGMOID;
	is_str(printed(pt.g), before, "editing the clone leaves the original");
	ok(!hgc_graph_check(k, &pt.d), "the clone checks");
	hgc_graph_free(k);
	hgc_graph_free(pt.g);
}

/* Use lists, replacement, removal with tensor pruning. */
static void test_uses(void)
{
	struct hgc_tensor *x, *w, *r, *e;
	struct hgc_graph_uses u;
	bool dead[3] = {true, false, true};

	small_graph(&x, &w);
	r = HGC_GRAPH_OP(pt.g, 0)->out[0];
	e = HGC_GRAPH_OP(pt.g, 1)->out[0];
	ok(hgc_graph_is_output(pt.g, e) && !hgc_graph_is_output(pt.g, r), "is_output");
	w->data = &u;
	ok(hgc_tensor_is_known(pt.g, w) && !hgc_tensor_is_known(pt.g, x),
	   "a constant with data is known");
	x->data = &u;
	ok(!hgc_tensor_is_known(pt.g, x), "a variable with data is not");
	w->data = x->data = NULL;
	hgc_graph_uses_init(&u, pt.g);
	is_int(hgc_graph_uses_count(&u, x), 1, "x has one reader");
	is_int(hgc_graph_uses_count(&u, e), 1, "an output counts as a use");
	hgc_graph_uses_replace(&u, pt.g, r, x);
	hgc_graph_uses_release(&u);
	ok(HGC_GRAPH_OP(pt.g, 1)->in[0] == x, "uses_replace rewires the reader");
	hgc_graph_replace_uses(pt.g, e, r);
	ok(HGC_GRAPH_OUTPUT(pt.g, 0) == r, "replace_uses rewires an output");
	hgc_graph_replace_uses(pt.g, r, e);
	hgc_graph_remove_ops(pt.g, dead);
	is_str(pt_kinds(pt.g), "Exp", "remove_ops drops the marked ops");
	is_int((int)pt.g->tensors.len, 3, "and the tensors only they made");
	is_int(HGC_GRAPH_OP(pt.g, 0)->id, 0, "ids are positions");
	ok(!hgc_graph_check(pt.g, &pt.d), "the graph checks");
	hgc_graph_free(pt.g);
}

/* Sorting: an appended producer moves before its reader; a cycle is an error. */
static void test_sort(void)
{
	struct hgc_tensor *x, *w, *t;
	struct hgc_op *relu, *exp;

	small_graph(&x, &w);
	relu = HGC_GRAPH_OP(pt.g, 0);
	exp = HGC_GRAPH_OP(pt.g, 1);
	t = pt_un(HGC_OP_SIGMOID, x);
	exp->in[0] = t;
	ok(hgc_graph_check(pt.g, &pt.d) < 0, "a read before the producer does not check");
	ok(strstr(hgc_diag_text(&pt.d), "reads %") != NULL, "and says so");
	is_int(hgc_graph_sort(pt.g, &pt.d), 0, "sort");
	is_str(pt_kinds(pt.g), "ReLU Sigmoid Exp Tanh", "the producer moves before its reader");
	ok(!hgc_graph_check(pt.g, &pt.d), "sorted graph checks");
	hgc_diag_release(&pt.d);
	hgc_diag_init(&pt.d);
	relu->in[0] = exp->out[0];
	exp->in[0] = relu->out[0];
	is_int(hgc_graph_sort(pt.g, &pt.d), -1, "a cycle cannot be sorted");
	ok(strstr(hgc_diag_text(&pt.d), "a cycle through op") != NULL, "and says so");
	hgc_diag_release(&pt.d);
	hgc_graph_free(pt.g);
}

/* The check catches a recorded output its inputs do not give, and an output never made. */
static void test_check(void)
{
	struct hgc_tensor *x, *w;
	struct hgc_graph *k;

	small_graph(&x, &w);
	k = hgc_graph_clone(pt.g);
	HGC_GRAPH_OP(pt.g, 0)->out[0]->dims[1] = 4;
	ok(hgc_graph_check(pt.g, &pt.d) < 0 &&
	   strstr(hgc_diag_text(&pt.d), "records an output its inputs do not give"),
	   "a wrong recorded shape is caught");
	hgc_diag_release(&pt.d);
	hgc_diag_init(&pt.d);
	HGC_GRAPH_OP(k, 1)->nin = 2;
	ok(hgc_graph_check(k, &pt.d) < 0 && strstr(hgc_diag_text(&pt.d), "does not check"),
	   "an op that no longer checks is caught");
	hgc_graph_free(k);
	k = hgc_graph_clone(pt.g);
	k->ops.len = 0;
	hgc_diag_release(&pt.d);
	hgc_diag_init(&pt.d);
	ok(hgc_graph_check(k, &pt.d) < 0 && strstr(hgc_diag_text(&pt.d), "is never computed"),
	   "an output nobody computes is caught");
	hgc_graph_free(k);
	hgc_diag_release(&pt.d);
	hgc_graph_free(pt.g);
}

#define I64(v) ((int64_t)(v))
#define F32 HGC_DT_F32

/* A unary complex op on a fresh [2,3,5] input of type dt, with a string attribute. */
static struct hgc_op *unary_case(enum hgc_op_kind k, enum hgc_dtype dt)
{
	struct hgc_tensor *x;

	pt_new();
	x = pt_var("x", dt, 3, I64(2), I64(3), I64(5));
	return pt_op(k, HGC_DT_UNDEF, 1, x);
}

/* Finish op as the graph's only output and check decompose on it. */
static void decomposes(struct hgc_op *op, int changes, const char *kinds, double rtol,
		       double atol, const char *what)
{
	pt_out(pt_end(op));
	pt_check(hgc_pass_decompose, NULL, changes, kinds, rtol, atol, false, what);
}

/* The activations and reductions. */
static void test_decompose_unary(void)
{
	struct hgc_op *op;

	decomposes(unary_case(HGC_OP_GELU, F32), 1, "Multiply Erf Add Multiply Multiply", 1e-5,
		   1e-6, "GELU erf");
	op = unary_case(HGC_OP_GELU, F32);
	hgc_pb_string(&pt.b, op, "mode", "gelu_tanh");
	decomposes(op, 1, "Square Multiply Add Multiply Sigmoid Multiply", 1e-5, 1e-6,
		   "GELU tanh");
	decomposes(unary_case(HGC_OP_GELU, HGC_DT_BF16), 1, "Multiply Erf Add Multiply Multiply",
		   1e-2, 1e-2, "bf16 GELU stays bf16 out");
	decomposes(unary_case(HGC_OP_GELU, HGC_DT_S8), 0, "GELU", 0, 0, "s8 GELU stays");
	decomposes(unary_case(HGC_OP_HARD_SWISH, F32), 1, "HardSigmoid Multiply", 1e-5, 1e-6,
		   "HardSwish");
	decomposes(unary_case(HGC_OP_MISH, F32), 1, "SoftPlus Tanh Multiply", 1e-5, 1e-6, "Mish");
	op = unary_case(HGC_OP_REDUCE_MEAN, F32);
	hgc_pb_ints(&pt.b, op, "axes", 2, (const int64_t[]){0, -1});
	decomposes(op, 1, "ReduceSum Divide", 1e-5, 1e-6, "ReduceMean");
	op = unary_case(HGC_OP_REDUCE_MEAN, HGC_DT_S32);
	hgc_pb_ints(&pt.b, op, "axes", 1, (const int64_t[]){1});
	decomposes(op, 0, "ReduceMean", 0, 0, "s32 ReduceMean stays");
	op = unary_case(HGC_OP_REDUCE_L1, F32);
	hgc_pb_ints(&pt.b, op, "axes", 1, (const int64_t[]){1});
	hgc_pb_bool(&pt.b, op, "keep_dims", true);
	decomposes(op, 1, "Abs ReduceSum", 1e-5, 1e-6, "ReduceL1");
	op = unary_case(HGC_OP_REDUCE_L2, HGC_DT_BF16);
	hgc_pb_ints(&pt.b, op, "axes", 1, (const int64_t[]){2});
	decomposes(op, 1, "Square ReduceSum Sqrt", 1e-2, 1e-2, "bf16 ReduceL2");
}

/* SoftMax, LogSoftmax, LayerNorm. */
static void test_decompose_norm(void)
{
	struct hgc_tensor *x, *gm, *bt;
	struct hgc_op *op;

	op = unary_case(HGC_OP_SOFTMAX, F32);
	decomposes(op, 1, "ReduceMax Subtract Exp ReduceSum Divide", 1e-5, 1e-6, "SoftMax");
	op = unary_case(HGC_OP_LOG_SOFTMAX, F32);
	hgc_pb_int(&pt.b, op, "axis", 0);
	decomposes(op, 1, "ReduceMax Subtract Exp ReduceSum Log Subtract", 1e-5, 1e-6,
		   "LogSoftmax");
	pt_new();
	x = pt_var("x", F32, 3, I64(2), I64(3), I64(8));
	gm = pt_const("g", F32, 1, I64(8));
	bt = pt_const("b", F32, 1, I64(8));
	decomposes(pt_op(HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 3, x, gm, bt), 1,
		   "ReduceSum Divide Subtract Square ReduceSum Divide Add Sqrt Reciprocal Multiply "
		   "Multiply Add", 1e-5, 1e-5, "LayerNorm");
	op = unary_case(HGC_OP_LAYER_NORM, HGC_DT_BF16);
	hgc_pb_bool(&pt.b, op, "use_affine", false);
	hgc_pb_int(&pt.b, op, "begin_norm_axis", 1);
	decomposes(op, 1, "ReduceSum Divide Subtract Square ReduceSum Divide Add Sqrt Reciprocal "
		   "Multiply", 1e-2, 1e-2, "bf16 LayerNorm without affine over two dims");
}

/* BatchNormInference and BiasAdd in both data formats. */
static void test_decompose_channels(void)
{
	struct hgc_tensor *x, *p[4];
	struct hgc_op *op;
	int i;

	for (i = 0; i < 2; i++) {
		pt_new();
		x = pt_var("x", F32, 4, I64(2), I64(3), I64(4), I64(3));
		p[0] = pt_const("g", F32, 1, I64(3));
		p[1] = pt_const("b", F32, 1, I64(3));
		p[2] = pt_const("m", F32, 1, I64(3));
		p[3] = pt_const("v", F32, 1, I64(3));
		op = pt_op(HGC_OP_BATCH_NORM_INFERENCE, HGC_DT_UNDEF, 5, x, p[0], p[1], p[2], p[3]);
		hgc_pb_float(&pt.b, op, "epsilon", 0.5);
		hgc_pb_string(&pt.b, op, "data_format", i ? "NXC" : "NCX");
		decomposes(op, 1, i ? "Add Sqrt Reciprocal Multiply Subtract Multiply Add"
				    : "Add Sqrt Reciprocal Multiply StaticReshape StaticReshape "
				      "Subtract Multiply StaticReshape Add",
			   1e-5, 1e-6, i ? "BatchNorm NXC" : "BatchNorm NCX");
	}
	pt_new();
	x = pt_var("x", HGC_DT_BF16, 3, I64(2), I64(3), I64(4));
	op = pt_op(HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, x, pt_const("b", F32, 1, I64(3)));
	hgc_pb_string(&pt.b, op, "data_format", "NCX");
	decomposes(op, 1, "StaticReshape Add", 0, 0, "bf16 BiasAdd NCX (exact)");
	pt_new();
	x = pt_var("x", HGC_DT_S32, 2, I64(2), I64(3));
	decomposes(pt_op(HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, x, pt_const("b", HGC_DT_S32, 1, I64(3))),
		   1, "Add", 0, 0, "s32 BiasAdd NXC (exact)");
	pt_new();
	x = pt_var("x", HGC_DT_S8, 2, I64(2), I64(3));
	decomposes(pt_op(HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, x, pt_const("b", F32, 1, I64(3))), 0,
		   "BiasAdd", 0, 0, "s8 BiasAdd with an f32 bias stays");
}

/* keep, several readers, an output named after the op it replaces. */
static void test_decompose_keep(void)
{
	struct hgc_pass_switches sw;
	struct hgc_tensor *x, *s;

	hgc_pass_switches_init(&sw);
	sw.keep[HGC_OP_SOFTMAX] = true;
	pt_new();
	x = pt_var("x", F32, 2, I64(4), I64(6));
	s = pt_un(HGC_OP_SOFTMAX, x);
	s->name = "s";
	pt_out(s);
	pt_out(pt_un(HGC_OP_EXP, pt_un(HGC_OP_MISH, s)));
	pt_out(pt_un(HGC_OP_LOG, s));
	ok(hgc_pass_decompose(pt.g, &sw, &pt.d) == 1 && pc_count(pt.g, HGC_OP_SOFTMAX) == 1,
	   "keep leaves SoftMax whole, Mish decomposes");
	sw.keep[HGC_OP_SOFTMAX] = false;
	pt_check(hgc_pass_decompose, &sw, 1,
		 "ReduceMax Subtract Exp ReduceSum Divide SoftPlus Tanh Multiply Exp Log", 1e-5,
		 1e-6, false, "SoftMax read three times");
	pt_new();
	x = pt_var("x", F32, 2, I64(4), I64(6));
	s = pt_un(HGC_OP_SOFTMAX, x);
	s->name = "s";
	pt_out(s);
	is_int(hgc_pass_decompose(pt.g, NULL, &pt.d), 1, "decompose");
	is_str(HGC_GRAPH_OUTPUT(pt.g, 0)->name, "s", "the output keeps its name");
	hgc_diag_release(&pt.d);
	hgc_graph_free(pt.g);
}

/* Quantize and Dequantize, per tensor and per channel. */
static void test_decompose_quant(void)
{
	struct hgc_tensor *x;
	struct hgc_op *op;

	pt_new();
	x = pt_var("x", F32, 2, I64(4), I64(6));
	op = pt_op(HGC_OP_QUANTIZE, HGC_DT_U8, 1, x);
	hgc_pb_ints(&pt.b, op, "zps", 1, (const int64_t[]){100});
	hgc_op_set_attr(pt.g, op, &(struct hgc_attr){.name = "scales", .type = HGC_ATTR_FLOATS,
		.n = 1, .v.floats = (const double[]){0.02}});
	pt_out(pt_end(op));
	ok(hgc_pass_decompose(pt.g, NULL, &pt.d) == 0, "decompose leaves Quantize to lowprec");
	pt_check(hgc_pass_decompose_quant, NULL, 1, "Divide AddRound TypeCast", 0, 0, true,
		 "Quantize u8 with a zero point");
	pt_new();
	x = pt_var("x", HGC_DT_S8, 3, I64(2), I64(3), I64(4));
	op = pt_op(HGC_OP_DEQUANTIZE, HGC_DT_UNDEF, 1, x);
	hgc_pb_string(&pt.b, op, "qtype", "per_channel");
	hgc_op_set_attr(pt.g, op, &(struct hgc_attr){.name = "scales", .type = HGC_ATTR_FLOATS,
		.n = 3, .v.floats = (const double[]){0.5, 0.25, 3}});
	pt_out(pt_end(op));
	pt_check(hgc_pass_decompose_quant, NULL, 1, "TypeCast Multiply", 0, 0, false,
		 "Dequantize s8 per channel (exact)");
	pt_new();
	x = pt_var("x", HGC_DT_U8, 2, I64(3), I64(4));
	op = pt_op(HGC_OP_DEQUANTIZE, HGC_DT_UNDEF, 1, x);
	hgc_pb_ints(&pt.b, op, "zps", 1, (const int64_t[]){128});
	hgc_op_set_attr(pt.g, op, &(struct hgc_attr){.name = "scales", .type = HGC_ATTR_FLOATS,
		.n = 1, .v.floats = (const double[]){0.1}});
	pt_out(pt_end(op));
	pt_check(hgc_pass_decompose_quant, NULL, 1, "TypeCast Subtract Multiply", 1e-7, 0, false,
		 "Dequantize u8 with a zero point");
}

/* A 0-d embedded f32 constant. */
static struct hgc_tensor *scalar(float v)
{
	return hgc_graph_add_const(pt.g, F32, 0, NULL, &v, NULL);
}

/* Identical ops merge; different attributes, types or operand orders do not. */
static void test_cse(void)
{
	struct hgc_tensor *x, *y, *a, *c;
	struct hgc_op *op;

	pt_new();
	x = pt_var("x", F32, 2, I64(3), I64(4));
	pt_out(pt_un(HGC_OP_EXP, pt_un(HGC_OP_RELU, x)));
	pt_out(pt_un(HGC_OP_EXP, pt_un(HGC_OP_RELU, x)));
	pt_check(hgc_pass_cse, NULL, 2, "ReLU Exp", 0, 0, false, "a repeated chain collapses");
	pt_new();
	x = pt_var("x", F32, 2, I64(3), I64(4));
	y = pt_var("y", F32, 2, I64(3), I64(4));
	op = pt_op(HGC_OP_LEAKY_RELU, HGC_DT_UNDEF, 1, x);
	hgc_pb_float(&pt.b, op, "alpha", 0.1);
	pt_out(pt_end(op));
	op = pt_op(HGC_OP_LEAKY_RELU, HGC_DT_UNDEF, 1, x);
	hgc_pb_float(&pt.b, op, "alpha", 0.2);
	pt_out(pt_end(op));
	pt_out(pt_bin(HGC_OP_SUBTRACT, x, y));
	pt_out(pt_bin(HGC_OP_SUBTRACT, y, x));
	op = pt_op(HGC_OP_REDUCE_SUM, HGC_DT_UNDEF, 1, x);
	hgc_pb_ints(&pt.b, op, "axes", 1, (const int64_t[]){1});
	hgc_pb_bool(&pt.b, op, "keep_dims", false);
	pt_out(pt_end(op));
	op = pt_op(HGC_OP_REDUCE_SUM, HGC_DT_UNDEF, 1, x);
	hgc_pb_ints(&pt.b, op, "axes", 1, (const int64_t[]){1});
	pt_out(pt_end(op));
	pt_out(pt_end(pt_op(HGC_OP_TYPE_CAST, HGC_DT_S32, 1, x)));
	pt_out(pt_end(pt_op(HGC_OP_TYPE_CAST, HGC_DT_U8, 1, x)));
	pt_check(hgc_pass_cse, NULL, 1,
		 "LeakyReLU LeakyReLU Subtract Subtract ReduceSum TypeCast TypeCast", 0, 0, false,
		 "only a default set explicitly merges");
	pt_new();
	x = pt_var("x", F32, 2, I64(3), I64(4));
	a = pt_const("a", F32, 0);
	c = pt_const("c", F32, 0);
	pt_out(pt_bin(HGC_OP_ADD, x, scalar(1.5f)));
	pt_out(pt_bin(HGC_OP_ADD, x, scalar(1.5f)));
	pt_out(pt_bin(HGC_OP_ADD, x, scalar(2.5f)));
	pt_out(pt_bin(HGC_OP_ADD, x, a));
	pt_out(pt_bin(HGC_OP_ADD, x, c));
	pt_check(hgc_pass_cse, NULL, 2, "Add Add Add Add", 0, 0, false,
		 "equal constants merge, graph inputs never");
}

/* Ops no output needs go with the constants only they read; inputs stay. */
static void test_dce(void)
{
	struct hgc_tensor *x, *w;
	size_t ntensors;

	small_graph(&x, &w);
	pt_un(HGC_OP_SIGMOID, pt_bin(HGC_OP_ADD, x, scalar(3)));
	ntensors = pt.g->tensors.len;
	is_int(hgc_pass_dce(pt.g, NULL, &pt.d), 3, "dce removes three ops");
	is_int((int)(ntensors - pt.g->tensors.len), 4, "their outputs and the constant go");
	is_int((int)pt.g->inputs.len, 2, "the unused input stays");
	hgc_graph_free(pt.g);
	hgc_diag_release(&pt.d);
	small_graph(&x, &w);
	pt_check(hgc_pass_dce, NULL, 1, "ReLU Exp", 0, 0, false, "dce");
}

/* Transposes, reorders and arithmetic on known constants fold; unknown data does not. */
static void test_constfold(void)
{
	static const float wv[6] = {1, 2, 3, 4, 5, 6};
	struct hgc_tensor *x, *w, *t, *u, *v;
	struct hgc_op *op;
	const float *d;

	pt_new();
	x = pt_var("x", F32, 2, I64(3), I64(2));
	w = pt_const("w", F32, 2, I64(2), I64(3));
	u = pt_const("u", F32, 2, I64(3), I64(2));
	v = pt_var("v", F32, 2, I64(3), I64(2));
	w->data = wv;
	v->data = wv;
	op = pt_op(HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, w);
	hgc_pb_ints(&pt.b, op, "order", 2, (const int64_t[]){1, 0});
	t = pt_un(HGC_OP_REORDER, pt_end(op));
	t = pt_bin(HGC_OP_MULTIPLY, pt_un(HGC_OP_RELU, t), scalar(2));
	pt_out(pt_bin(HGC_OP_ADD, x, t));
	pt_out(pt_un(HGC_OP_EXP, u));
	pt_out(pt_un(HGC_OP_EXP, v));
	pt_out(t);
	is_int(hgc_pass_constfold(pt.g, NULL, &pt.d), 4, "four ops fold");
	is_str(pt_kinds(pt.g), "Add Exp Exp", "what reads unknown data stays");
	t = HGC_GRAPH_OUTPUT(pt.g, 3);
	d = t->data;
	ok(!t->producer && d && t->ndims == 2 && t->dims[0] == 3 && d[0] == 2 && d[1] == 8 &&
	   d[2] == 4 && d[5] == 12, "the folded output holds 2 relu(w^T)");
	ok(HGC_GRAPH_OP(pt.g, 0)->in[1] == t, "and the Add reads it");
	ok(!hgc_graph_check(pt.g, &pt.d), "the graph checks");
	hgc_diag_release(&pt.d);
	hgc_graph_free(pt.g);
}

/* Counts hook calls and the passes they name. */
static void hook(void *user, enum hgc_pass p, int changes, const struct hgc_graph *g)
{
	int *n = user;

	(void)changes;
	(void)g;
	n[0]++;
	n[1 + p]++;
}

/* Defaults, names, and the config glue with its errors. */
static void test_switches(void)
{
	struct hgc_pass_switches sw;
	struct hgc_loc loc = {"cfg.hgc", 3, 8};
	struct hgc_diag d;
	const char *pre = "cfg.hgc:3:8: error: unknown pass 'dcee' (passes: decompose, cse, dce, "
			  "constfold, lowprec, decompose_quant, channels_last, transpose";
	char want[1024];
	int p, n, on = 0;

	hgc_pass_switches_init(&sw);
	for (p = 0; p < HGC_PASS_COUNT; p++)
		on += sw.on[p];
	ok(on == HGC_PASS_COUNT - 1 && !sw.on[HGC_PASS_CHANNELS_LAST], "all on but channels_last");
	is_int(hgc_pass_find("decompose_quant"), HGC_PASS_DECOMPOSE_QUANT, "find by name");
	is_int(hgc_pass_find("CSE"), HGC_PASS_COUNT, "names are case-sensitive");
	is_str(hgc_pass_name(HGC_PASS_TRANSPOSE), "transpose", "name");
	hgc_diag_init(&d);
	ok(!hgc_pass_switches_set(&sw, "dce", "off", &loc, &d) && !sw.on[HGC_PASS_DCE],
	   "pass dce = off");
	ok(!hgc_pass_switches_set(&sw, "channels_last", "on", &loc, &d) &&
	   sw.on[HGC_PASS_CHANNELS_LAST], "pass channels_last = on");
	is_int(hgc_pass_switches_set(&sw, "dcee", "off", &loc, &d), -1, "unknown pass");
	is_int(hgc_pass_switches_set(&sw, "cse", "maybe", NULL, &d), -1, "bad value");
	n = snprintf(want, sizeof(want), "cfg.hgc:3:8: error: unknown pass 'dcee' (passes: ");
	for (p = 0; p < HGC_PASS_COUNT; p++)
		n += snprintf(want + n, sizeof(want) - (size_t)n, "%s%s", p ? ", " : "",
			      hgc_pass_name((enum hgc_pass)p));
	snprintf(want + n, sizeof(want) - (size_t)n,
		 ")\nhgc: error: pass 'cse' must be on or off, not 'maybe'\n");
	ok(!strncmp(want, pre, strlen(pre)), "the passes in table order");
	is_str(hgc_diag_text(&d), want, "their messages");
	hgc_diag_release(&d);
}

/* x -> SoftMax -> Quantize and a dead branch: the whole pipeline, dumped and watched. */
static struct hgc_graph *pipeline_graph(void)
{
	struct hgc_tensor *x;
	struct hgc_op *op;

	pt_new();
	x = pt_var("x", F32, 2, I64(4), I64(6));
	op = pt_op(HGC_OP_QUANTIZE, HGC_DT_U8, 1, pt_un(HGC_OP_SOFTMAX, x));
	hgc_op_set_attr(pt.g, op, &(struct hgc_attr){.name = "scales", .type = HGC_ATTR_FLOATS,
		.n = 1, .v.floats = (const double[]){0.01}});
	pt_out(pt_end(op));
	pt_un(HGC_OP_RELU, pt_un(HGC_OP_SOFTMAX, x));
	return pt.g;
}

/* The pipeline: order, dump, hook, stats; a pass off stays off. */
static void test_pipeline(void)
{
	struct hgc_pass_switches sw;
	struct hgc_pass_stats st;
	int calls[1 + HGC_PASS_COUNT] = {0}, p, on;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	hgc_pass_switches_init(&sw);
	memset(&st, 0, sizeof(st));
	sw.dump = f;
	sw.hook = hook;
	sw.user = calls;
	sw.stats = &st;
	pipeline_graph();
	is_int(hgc_graph_passes_run(pt.g, &sw, &pt.d), 0, "the pipeline runs");
	fclose(f);
	is_str(pt_kinds(pt.g), "ReduceMax Subtract Exp ReduceSum Divide Divide TypeCast",
	       "SoftMax and Quantize decomposed, the dead branch gone");
	for (p = on = 0; p < HGC_PASS_COUNT; p++)
		on += st.runs[p];
	ok(calls[0] == on && on >= 11, "the hook saw every step (%d)", on);
	ok(calls[1 + HGC_PASS_DCE] == 3 && st.runs[HGC_PASS_DCE] == 3 && st.runs[HGC_PASS_CSE] == 2,
	   "dce ran three times, cse twice");
	ok(st.changes[HGC_PASS_DECOMPOSE] == 2 && st.changes[HGC_PASS_CSE] == 5 &&
	   st.changes[HGC_PASS_DCE] == 1 && st.changes[HGC_PASS_DECOMPOSE_QUANT] == 1,
	   "stats count the rewrites: the second SoftMax merges, the ReLU left dead");
	ok(strstr(text, "# after decompose: 2 changes\ngraph {\n") &&
	   strstr(text, "# after transpose: 0 changes\n") && !strstr(text, "channels_last"),
	   "the dump shows every pass that ran");
	free(text);
	hgc_diag_release(&pt.d);
	hgc_graph_free(pt.g);
	sw.dump = NULL;
	sw.on[HGC_PASS_DECOMPOSE] = false;
	sw.on[HGC_PASS_DECOMPOSE_QUANT] = false;
	pipeline_graph();
	is_int(hgc_graph_passes_run(pt.g, &sw, &pt.d), 0, "the pipeline without decompositions");
	is_str(pt_kinds(pt.g), "SoftMax Quantize", "leaves the complex ops");
	hgc_diag_release(&pt.d);
	hgc_graph_free(pt.g);
}

/* A broken graph, and an op a pass builds wrongly, fail with a message. */
static void test_errors(void)
{
	struct hgc_tensor *x, *y;
	struct hgc_pb b;

	pipeline_graph();
	HGC_GRAPH_OP(pt.g, 0)->in[0] = HGC_GRAPH_OP(pt.g, 1)->out[0];
	is_int(hgc_graph_passes_run(pt.g, NULL, &pt.d), -1, "a broken graph is refused");
	ok(strstr(hgc_diag_text(&pt.d), "hgc: error: graph: op 0 (SoftMax) reads %") != NULL,
	   "with the reason");
	hgc_diag_release(&pt.d);
	hgc_graph_free(pt.g);
	pt_new();
	x = pt_var("x", F32, 1, I64(3));
	y = pt_var("y", F32, 1, I64(4));
	pt_out(x);
	hgc_pb_init(&b, pt.g, &pt.d);
	hgc_pb_binary(&b, HGC_OP_ADD, F32, x, y);
	is_int(hgc_pb_finish(&b, NULL, 0), -1, "a pass that built a bad op fails");
	ok(strstr(hgc_diag_text(&pt.d), "Add: shapes do not broadcast") &&
	   strstr(hgc_diag_text(&pt.d), "1 op built by a graph pass did not check (a bug)"),
	   "and says so");
	hgc_diag_release(&pt.d);
	hgc_graph_free(pt.g);
}

int main(void)
{
	test_clone();
	test_uses();
	test_sort();
	test_check();
	test_decompose_unary();
	test_decompose_norm();
	test_decompose_channels();
	test_decompose_keep();
	test_decompose_quant();
	test_cse();
	test_dce();
	test_constfold();
	test_switches();
	test_pipeline();
	test_errors();
	return done_testing();
}
