/*
 * graph.h: the Graph IR.  A graph holds ops and logical tensors; op kinds
 * live in one table (HGC_OP_LIST) giving name, category, arity, attribute
 * schema, shape inference and reference implementation.  The reference
 * interpreter runs any valid graph on plain layouts with naive loops.
 */
#ifndef HGC_GRAPH_H
#define HGC_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../util/util.h"

#define HGC_MAX_DIMS 8

/* Element types: X(enum suffix, oneDNN name, size in bytes).  ORDER: keep UNDEF first. */
#define HGC_DTYPE_LIST(X)          \
	X(UNDEF, "undef", 0)       \
	X(F32, "f32", 4)           \
	X(BF16, "bf16", 2)         \
	X(S32, "s32", 4)           \
	X(S8, "s8", 1)             \
	X(U8, "u8", 1)             \
	X(BOOL, "boolean", 1)

enum hgc_dtype {
#define X(e, n, s) HGC_DT_##e,
	HGC_DTYPE_LIST(X)
#undef X
	HGC_DT_COUNT
};

enum hgc_property {
	HGC_PROP_VARIABLE,	/* a graph input that changes between runs */
	HGC_PROP_CONSTANT,	/* weights: the same on every run, may be prepacked */
};

enum hgc_layout_kind {
	HGC_LAYOUT_PLAIN,	/* strides over the logical dims */
	HGC_LAYOUT_BLOCKED,	/* logical dims split into blocks and permuted */
};

/*
 * A layout.  Plain: strides[i] is the element stride of logical dim i (dense
 * row-major unless a pass says otherwise).  Blocked: the physical tensor has
 * nphys dims, outermost first; phys[j] names the logical dim it indexes and
 * its block size.  The first occurrence of a logical dim is its outer part
 * (block 0: ceil of the dim over the product of its inner blocks, padded);
 * later occurrences are inner blocks.  A[M,K] blocked MBxKB is
 * {(0,0),(1,0),(0,MB),(1,KB)}; VNNI-packed B[K,N] is
 * {(1,0),(0,0),(0,KB/4),(1,NB),(0,4)}.
 */
struct hgc_layout {
	enum hgc_layout_kind kind;
	int64_t strides[HGC_MAX_DIMS];
	int nphys;
	struct {
		int8_t dim;
		int64_t block;
	} phys[2 * HGC_MAX_DIMS];
};

/* A logical tensor: metadata only; data lives in buffers the caller owns. */
struct hgc_tensor {
	int id;			/* unique within its graph */
	const char *name;	/* the spec's name, or NULL */
	enum hgc_dtype dtype;
	int ndims;		/* 0 for a scalar */
	int64_t dims[HGC_MAX_DIMS];
	struct hgc_layout layout;
	enum hgc_property prop;
	struct hgc_op *producer;	/* NULL for a graph input */
	int port;			/* index among the producer's outputs */
	struct hgc_loc loc;	/* where the spec declared or produced it */
	const void *data;	/* constant contents known at compile time, plain, or NULL */
};

enum hgc_op_category {
	HGC_CAT_TUNABLE,	/* lowered through a template (matmul, conv) */
	HGC_CAT_FUSIBLE,	/* elementwise, broadcast, reduction, data movement */
	HGC_CAT_COMPLEX,	/* decomposed into basic ops before lowering */
};

enum hgc_attr_type {
	HGC_ATTR_NONE,
	HGC_ATTR_BOOL,
	HGC_ATTR_INT,
	HGC_ATTR_INTS,
	HGC_ATTR_FLOAT,
	HGC_ATTR_FLOATS,
	HGC_ATTR_STRING,
};

/* An attribute value on an op. */
struct hgc_attr {
	const char *name;
	enum hgc_attr_type type;
	int n;			/* element count of INTS/FLOATS */
	union {
		int64_t i;	/* BOOL and INT */
		double f;
		const char *s;
		const int64_t *ints;
		const double *floats;
	} v;
	struct hgc_loc loc;
};

/* One row of an op's attribute schema. */
struct hgc_attr_spec {
	const char *name;
	enum hgc_attr_type type;
	bool required;
	struct hgc_attr def;	/* default when not required (name/type unused) */
};

/*
 * The op table: X(enum suffix, oneDNN kind name, category, min inputs,
 * max inputs, function stem).  Every op has one output.  Each stem provides
 * <stem>_attrs (schema), <stem>_infer and <stem>_ref in core/graph/ops_*.c.
 * Rows after TypeCast are basic ops the passes decompose into (ops_extra.c,
 * ops_binary.c's AddRound).
 */
#define HGC_OP_LIST(X)                                                          \
	X(MATMUL, "MatMul", TUNABLE, 2, 3, matmul)                              \
	X(CONVOLUTION, "Convolution", TUNABLE, 2, 3, conv)                      \
	X(BIAS_ADD, "BiasAdd", COMPLEX, 2, 2, bias_add)                         \
	X(ADD, "Add", FUSIBLE, 2, 2, add)                                       \
	X(SUBTRACT, "Subtract", FUSIBLE, 2, 2, subtract)                        \
	X(MULTIPLY, "Multiply", FUSIBLE, 2, 2, multiply)                        \
	X(DIVIDE, "Divide", FUSIBLE, 2, 2, divide)                              \
	X(MAXIMUM, "Maximum", FUSIBLE, 2, 2, maximum)                           \
	X(MINIMUM, "Minimum", FUSIBLE, 2, 2, minimum)                           \
	X(RELU, "ReLU", FUSIBLE, 1, 1, relu)                                    \
	X(LEAKY_RELU, "LeakyReLU", FUSIBLE, 1, 1, leaky_relu)                   \
	X(GELU, "GELU", COMPLEX, 1, 1, gelu)                                    \
	X(SIGMOID, "Sigmoid", FUSIBLE, 1, 1, sigmoid)                           \
	X(TANH, "Tanh", FUSIBLE, 1, 1, tanh_op)                                 \
	X(ELU, "Elu", FUSIBLE, 1, 1, elu)                                       \
	X(HARD_SWISH, "HardSwish", COMPLEX, 1, 1, hard_swish)                   \
	X(HARD_SIGMOID, "HardSigmoid", FUSIBLE, 1, 1, hard_sigmoid)             \
	X(SOFT_PLUS, "SoftPlus", FUSIBLE, 1, 1, soft_plus)                      \
	X(MISH, "Mish", COMPLEX, 1, 1, mish)                                    \
	X(EXP, "Exp", FUSIBLE, 1, 1, exp_op)                                    \
	X(LOG, "Log", FUSIBLE, 1, 1, log_op)                                    \
	X(SQRT, "Sqrt", FUSIBLE, 1, 1, sqrt_op)                                 \
	X(SQUARE, "Square", FUSIBLE, 1, 1, square)                              \
	X(ABS, "Abs", FUSIBLE, 1, 1, abs_op)                                    \
	X(RECIPROCAL, "Reciprocal", FUSIBLE, 1, 1, reciprocal)                  \
	X(POW, "Pow", FUSIBLE, 1, 1, pow_op)                                    \
	X(CLAMP, "Clamp", FUSIBLE, 1, 1, clamp)                                 \
	X(ROUND, "Round", FUSIBLE, 1, 1, round_op)                              \
	X(SOFTMAX, "SoftMax", COMPLEX, 1, 1, softmax)                           \
	X(LOG_SOFTMAX, "LogSoftmax", COMPLEX, 1, 1, log_softmax)                \
	X(LAYER_NORM, "LayerNorm", COMPLEX, 1, 3, layer_norm)                   \
	X(BATCH_NORM_INFERENCE, "BatchNormInference", COMPLEX, 5, 5, batch_norm) \
	X(REDUCE_SUM, "ReduceSum", FUSIBLE, 1, 1, reduce_sum)                   \
	X(REDUCE_MEAN, "ReduceMean", COMPLEX, 1, 1, reduce_mean)                \
	X(REDUCE_MAX, "ReduceMax", FUSIBLE, 1, 1, reduce_max)                   \
	X(REDUCE_MIN, "ReduceMin", FUSIBLE, 1, 1, reduce_min)                   \
	X(REDUCE_PROD, "ReduceProd", FUSIBLE, 1, 1, reduce_prod)                \
	X(REDUCE_L1, "ReduceL1", COMPLEX, 1, 1, reduce_l1)                      \
	X(REDUCE_L2, "ReduceL2", COMPLEX, 1, 1, reduce_l2)                      \
	X(MAX_POOL, "MaxPool", FUSIBLE, 1, 1, max_pool)                         \
	X(AVG_POOL, "AvgPool", FUSIBLE, 1, 1, avg_pool)                         \
	X(STATIC_TRANSPOSE, "StaticTranspose", FUSIBLE, 1, 1, transpose)        \
	X(STATIC_RESHAPE, "StaticReshape", FUSIBLE, 1, 1, reshape)              \
	X(REORDER, "Reorder", FUSIBLE, 1, 1, reorder)                           \
	X(CONCAT, "Concat", FUSIBLE, 1, 64, concat)                             \
	X(SELECT, "Select", FUSIBLE, 3, 3, select_op)                           \
	X(QUANTIZE, "Quantize", COMPLEX, 1, 1, quantize)                        \
	X(DEQUANTIZE, "Dequantize", COMPLEX, 1, 1, dequantize)                  \
	X(TYPE_CAST, "TypeCast", FUSIBLE, 1, 1, type_cast)                      \
	X(ERF, "Erf", FUSIBLE, 1, 1, erf_op)                                    \
	X(ADD_ROUND, "AddRound", FUSIBLE, 2, 2, add_round)

enum hgc_op_kind {
#define X(e, n, c, lo, hi, f) HGC_OP_##e,
	HGC_OP_LIST(X)
#undef X
	HGC_OP_COUNT
};

struct hgc_graph;
struct hgc_op;

/* What the table knows of each op kind. */
struct hgc_op_info {
	const char *name;			/* oneDNN Graph kind name */
	enum hgc_op_category category;
	int min_in, max_in;
	const struct hgc_attr_spec *attrs;	/* terminated by a NULL name */
	/* Check inputs and attributes, set the output's dtype (if UNDEF) and shape. */
	int (*infer)(struct hgc_op *op, struct hgc_diag *d);
	/* Compute the output from plain dense row-major inputs. */
	void (*ref)(const struct hgc_op *op, const void *const *in, void *const *out);
};

extern const struct hgc_op_info hgc_op_table[HGC_OP_COUNT];

/* An op: a node of the graph. */
struct hgc_op {
	int id;
	enum hgc_op_kind kind;
	int nin, nout;
	struct hgc_tensor **in, **out;
	int nattr;
	struct hgc_attr *attrs;
	struct hgc_loc loc;	/* where the spec wrote it */
};

/* A graph: ops in topological (insertion) order and the tensors between them. */
struct hgc_graph {
	struct hgc_arena arena;	/* owns every op, tensor and attribute */
	struct hgc_vec ops;	/* struct hgc_op * */
	struct hgc_vec tensors;	/* struct hgc_tensor * */
	struct hgc_vec inputs;	/* struct hgc_tensor *: variable and constant inputs */
	struct hgc_vec outputs;	/* struct hgc_tensor * */
	int next_id;
};

#define HGC_GRAPH_OP(g, i) HGC_VEC_AT(&(g)->ops, struct hgc_op *, i)
#define HGC_GRAPH_INPUT(g, i) HGC_VEC_AT(&(g)->inputs, struct hgc_tensor *, i)
#define HGC_GRAPH_OUTPUT(g, i) HGC_VEC_AT(&(g)->outputs, struct hgc_tensor *, i)

/* dtype.c */
size_t hgc_dtype_size(enum hgc_dtype dt);
const char *hgc_dtype_name(enum hgc_dtype dt);
enum hgc_dtype hgc_dtype_parse(const char *name, size_t len);	/* UNDEF if unknown */
bool hgc_dtype_is_int(enum hgc_dtype dt);
uint16_t hgc_f32_to_bf16(float f);	/* round to nearest even; NaN stays NaN */
float hgc_bf16_to_f32(uint16_t b);
/* Element i of a dense buffer of type dt, as f32 (s32 values above 2^24 round). */
float hgc_load_f32(enum hgc_dtype dt, const void *p, int64_t i);
/* The same exactly, as a double (every dtype's values fit one). */
double hgc_load_f64(enum hgc_dtype dt, const void *p, int64_t i);
/* Store v as dt: ints round half to even and saturate; bf16 rounds to nearest even. */
void hgc_store_f32(enum hgc_dtype dt, void *p, int64_t i, float v);

/* graph.c */
struct hgc_graph *hgc_graph_new(void);
void hgc_graph_free(struct hgc_graph *g);
/* A graph input with a dense plain layout. */
struct hgc_tensor *hgc_graph_add_input(struct hgc_graph *g, const char *name, enum hgc_dtype dt,
				       int ndims, const int64_t *dims, enum hgc_property prop,
				       const struct hgc_loc *loc);
/* A new op with its output tensor (dtype out_dt, UNDEF to infer); add attributes, then finish it. */
struct hgc_op *hgc_graph_add_op(struct hgc_graph *g, enum hgc_op_kind kind, int nin,
				struct hgc_tensor *const *in, enum hgc_dtype out_dt,
				const struct hgc_loc *loc);
/* Add or replace an attribute (copied into the graph's arena). */
void hgc_op_set_attr(struct hgc_graph *g, struct hgc_op *op, const struct hgc_attr *a);
/* Check arity and attributes against the table, then infer the output; -1 with d set. */
int hgc_graph_finish_op(struct hgc_graph *g, struct hgc_op *op, struct hgc_diag *d);
void hgc_graph_add_output(struct hgc_graph *g, struct hgc_tensor *t);
int64_t hgc_tensor_nelems(const struct hgc_tensor *t);
size_t hgc_tensor_nbytes(const struct hgc_tensor *t);
/* Whether t is stored plain, dense and row-major (dims of 1 may have any stride). */
bool hgc_tensor_is_dense(const struct hgc_tensor *t);
/* Give t the plain, dense, row-major layout of its dims. */
void hgc_tensor_set_dense(struct hgc_tensor *t);
enum hgc_op_kind hgc_op_kind_parse(const char *name, size_t len);	/* HGC_OP_COUNT if unknown */

/* attr.c: attribute access with schema defaults (only for names in the schema). */
const struct hgc_attr *hgc_op_attr(const struct hgc_op *op, const char *name);
int64_t hgc_op_int(const struct hgc_op *op, const char *name);
bool hgc_op_bool(const struct hgc_op *op, const char *name);
double hgc_op_float(const struct hgc_op *op, const char *name);
const char *hgc_op_string(const struct hgc_op *op, const char *name);
/* Check op's attributes against its schema: unknown, mistyped, missing. */
int hgc_op_check_attrs(const struct hgc_op *op, struct hgc_diag *d);

/* print.c */
void hgc_graph_print(FILE *f, const struct hgc_graph *g);

/* npy.c: NumPy .npy files (bf16 is stored as '<u2', boolean as '|b1'). */
int hgc_npy_write(const char *path, enum hgc_dtype dt, int ndims, const int64_t *dims,
		  const void *data, struct hgc_diag *d);
/* Read path; returns a malloc'ed dense buffer and its dtype and shape, NULL with d set. */
void *hgc_npy_read(const char *path, enum hgc_dtype *dt, int *ndims, int64_t *dims,
		   struct hgc_diag *d);

/* interp.c: run g on dense plain buffers, in the order of g->inputs and g->outputs. */
int hgc_interp_run(const struct hgc_graph *g, const void *const *inputs, void *const *outputs,
		   struct hgc_diag *d);

/*
 * edit.c: editing a graph in the passes (core/graph/passes).  New ops are
 * appended by hgc_graph_add_op; hgc_graph_sort puts them back in order.
 * Op ids are positions in g->ops after a removal or a sort.
 */
/* A constant embedded in the graph (not an input): dense, data copied into the arena. */
struct hgc_tensor *hgc_graph_add_const(struct hgc_graph *g, enum hgc_dtype dt, int ndims,
				       const int64_t *dims, const void *data,
				       const struct hgc_loc *loc);
/* A deep copy with the same ids, op order, inputs and outputs (input data is shared). */
struct hgc_graph *hgc_graph_clone(const struct hgc_graph *g);
/* Every op input and graph output that is from becomes to. */
void hgc_graph_replace_uses(struct hgc_graph *g, const struct hgc_tensor *from,
			    struct hgc_tensor *to);
/* Drop the ops whose position is marked in dead, then the tensors nothing refers to. */
void hgc_graph_remove_ops(struct hgc_graph *g, const bool *dead);
/* Topological order again, stable (an op moves just before its first consumer); -1 on a cycle. */
int hgc_graph_sort(struct hgc_graph *g, struct hgc_diag *d);
bool hgc_graph_is_output(const struct hgc_graph *g, const struct hgc_tensor *t);
/* Does t hold data known at compile time that never changes (an embedded or a constant input)? */
bool hgc_tensor_is_known(const struct hgc_graph *g, const struct hgc_tensor *t);
/* Check the graph: ids, producers, order, every input defined, shapes as inference says. */
int hgc_graph_check(const struct hgc_graph *g, struct hgc_diag *d);

/* The consumers of every tensor, by id (a snapshot: stale after an edit). */
struct hgc_graph_uses {
	int n;			/* tensor ids covered: g->next_id */
	int *first;		/* uses of id i: op[first[i] .. first[i + 1]) */
	struct hgc_op **op;	/* an op reading a tensor twice is listed twice */
	int *outputs;		/* how often id i is a graph output */
};
void hgc_graph_uses_init(struct hgc_graph_uses *u, const struct hgc_graph *g);
void hgc_graph_uses_release(struct hgc_graph_uses *u);
/* Op reads plus graph-output references of t. */
int hgc_graph_uses_count(const struct hgc_graph_uses *u, const struct hgc_tensor *t);
/* The recorded readers of from and the graph outputs now read to (the lists are not updated). */
void hgc_graph_uses_replace(const struct hgc_graph_uses *u, struct hgc_graph *g,
			    const struct hgc_tensor *from, struct hgc_tensor *to);

#endif
