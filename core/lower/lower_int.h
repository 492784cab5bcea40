/*
 * lower_int.h: helpers shared by the files of core/lower only: the
 * per-family lowerings the dispatcher calls, loop nests, loads and stores
 * with type conversion, and scalar math composed from TIR expressions.
 *
 * Expression nodes are never shared between two parents (passes rewrite
 * trees in place): every helper here consumes the expressions it is given
 * and values used twice go through a let.
 */
#ifndef HGC_LOWER_INT_H
#define HGC_LOWER_INT_H

#include "lower.h"
#include "../graph/graph_int.h"

/* The arithmetic elementwise code runs in. */
enum lw_kind {
	LW_RAW,		/* the view's own element type: data movement */
	LW_F32,		/* f32: every float op, and int ops the interpreter rounds */
	LW_INT,		/* index (int64): integer ops that are exact */
};

/* One family's lowering of an op (the dispatcher has checked the arity). */
typedef int hgc_lower_fn(struct hgc_lower_ctx *cx, const struct hgc_op *op,
			 struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
			 struct hgc_lower_view *out, struct hgc_diag *d);

/* lower_eltwise.c */
hgc_lower_fn hgc_lower_unary;

struct lw_map;
/* One output element from the input values x[] (variables of the input kinds). */
typedef struct hgc_tir_expr *lw_elem_fn(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
					struct hgc_tir_var *const *x, const struct lw_map *mp);

/* An elementwise map: out = fn(in...) with numpy broadcasting over the out view. */
struct lw_map {
	const struct hgc_op *op;
	int nin;				/* inputs loaded for fn (at most 4) */
	struct hgc_lower_view *const *in;
	const struct hgc_lower_view *out;
	enum lw_kind in_kind[4];		/* how each input is loaded */
	enum lw_kind out_kind;			/* the kind fn returns */
	lw_elem_fn *fn;
	const void *ctx;			/* for fn */
	const struct lw_nest *nest;		/* the loops, while fn runs */
};
/* Check the views, build the loops and the element computation. */
int lw_map_run(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block, struct lw_map *mp,
	       struct hgc_diag *d);
/* A map with every input in the same kind. */
int lw_map_simple(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_tir_stmt *block,
		  int nin, struct hgc_lower_view *const *in, struct hgc_lower_view *out,
		  enum lw_kind kind, lw_elem_fn *fn, const void *ctx, struct hgc_diag *d);
/* lower_binary.c */
hgc_lower_fn hgc_lower_binary, hgc_lower_bias_add;
/* lower_reduce.c */
hgc_lower_fn hgc_lower_reduce;
/* row_fold.c: fold the elementwise loops right before statement n0 of block
   into the split reduction loop lowered from n0 on, when legal. */
void lw_fold_row(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block, int n0);
void lw_recip_rows(struct hgc_tir_module *m, struct hgc_tir_stmt *block, int from);
/* lower_norm.c */
hgc_lower_fn hgc_lower_softmax, hgc_lower_layer_norm, hgc_lower_batch_norm;
/* lower_pool.c */
hgc_lower_fn hgc_lower_pool;
/* lower_shape.c */
hgc_lower_fn hgc_lower_transpose, hgc_lower_reshape, hgc_lower_reorder, hgc_lower_concat,
	hgc_lower_select;
/* lower_quant.c */
hgc_lower_fn hgc_lower_quantize, hgc_lower_dequantize, hgc_lower_type_cast;
/* lower_matmul.c */
hgc_lower_fn hgc_lower_matmul;
/* lower_conv.c */
hgc_lower_fn hgc_lower_conv;

/* Small expression builders on the context's module. */
static inline struct hgc_tir_expr *lw_f(struct hgc_lower_ctx *cx, double v)
{
	return hgc_tir_f32(cx->m, v);
}
static inline struct hgc_tir_expr *lw_i(struct hgc_lower_ctx *cx, int64_t v)
{
	return hgc_tir_idx(cx->m, v);
}
static inline struct hgc_tir_expr *lw_v(struct hgc_lower_ctx *cx, struct hgc_tir_var *v)
{
	return v ? hgc_tir_ref(cx->m, v) : hgc_tir_idx(cx->m, 0);
}
static inline struct hgc_tir_expr *lw_bin(struct hgc_lower_ctx *cx, enum hgc_tir_binop op,
					  struct hgc_tir_expr *a, struct hgc_tir_expr *b)
{
	return hgc_tir_binary(cx->m, op, a, b);
}
static inline struct hgc_tir_expr *lw_sel(struct hgc_lower_ctx *cx, struct hgc_tir_expr *c,
					  struct hgc_tir_expr *a, struct hgc_tir_expr *b)
{
	return hgc_tir_select(cx->m, c, a, b);
}
static inline struct hgc_tir_expr *lw_call1(struct hgc_lower_ctx *cx, enum hgc_tir_intrin id,
					    struct hgc_tir_expr *a)
{
	return hgc_tir_intrin(cx->m, id, 1, &a);
}
static inline struct hgc_tir_expr *lw_cast(struct hgc_lower_ctx *cx, enum hgc_tir_kind k,
					   struct hgc_tir_expr *a)
{
	return hgc_tir_cast(cx->m, hgc_tir_ty(k), a);
}

/* A loop nest: one index variable per dim, NULL where the extent is 1 (index 0). */
struct lw_nest {
	int n;
	struct hgc_tir_var *var[HGC_MAX_DIMS];
	struct hgc_tir_stmt *body;	/* the innermost block */
};

/* build.c: lets, loops, broadcasting, checks */
/* let name = value in block; returns the (immutable) variable. */
struct hgc_tir_var *lw_let(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			   const char *name, struct hgc_tir_expr *value);
/* value as a variable: reused when it reads an immutable one, else let name = value. */
struct hgc_tir_var *lw_hold(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			    const char *name, struct hgc_tir_expr *value);
/* let name = o * stride + k * dilation - pad_begin: the input row or column of a
   window's tap (convolution, pooling). */
struct hgc_tir_var *lw_tap(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block, const char *name,
			   struct hgc_tir_var *o, struct hgc_tir_var *k, const struct hgc_win *w);
/* A mutable variable defined in block (name = value), for accumulators. */
struct hgc_tir_var *lw_mut(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			   const char *name, struct hgc_tir_expr *value);
/*
 * Loops over dims[0..n) appended to block (no loop for an extent of 1).  When
 * the context allows it and work reaches parallel_min, the first one or two
 * loops among the first npar dims collapse into a parallel for.
 */
void lw_loops(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block, int n,
	      const int64_t *dims, int npar, int64_t work, struct lw_nest *nest);
/* Fresh index expressions of a nest's variables into idx. */
void lw_index(struct hgc_lower_ctx *cx, const struct lw_nest *nest, struct hgc_tir_expr **idx);
/* idx for view v from the indices of an output nest, numpy-broadcast (v aligned right). */
void lw_bcast_index(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
		    const struct lw_nest *nest, struct hgc_tir_expr **idx);
/* Check that view v broadcasts to the dims of out; -1 with d set naming input i. */
int lw_check_bcast(const struct hgc_op *op, int i, const struct hgc_lower_view *v,
		   const struct hgc_lower_view *out, struct hgc_diag *d);
/* Check that two views have the same extents; -1 with d set. */
int lw_check_same(const struct hgc_op *op, const char *what, const struct hgc_lower_view *a,
		  const struct hgc_lower_view *b, struct hgc_diag *d);
/* Check that dim k of view v covers the whole dim of graph tensor t; -1 with d set. */
int lw_check_whole(const struct hgc_op *op, const char *what, const struct hgc_lower_view *v,
		   const struct hgc_tensor *t, int k, struct hgc_diag *d);
/* Product of dims. */
int64_t lw_prod(int n, const int64_t *dims);

/* convert.c: loads and stores in a compute kind, rounding and saturation */
/* The compute kind of an op reading views in: LW_INT if all are integers and
   the op can be exact on them, else LW_F32. */
enum lw_kind lw_kind_of(struct hgc_lower_view *const *in, int n, bool exact_int);
/* The element of v at idx (consumed) converted to kind. */
struct hgc_tir_expr *lw_load(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
			     struct hgc_tir_expr **idx, enum lw_kind kind);
/* Store value (of kind) into v at idx (consumed), converting as the interpreter stores. */
void lw_store(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
	      struct hgc_tir_stmt *block, struct hgc_tir_expr **idx, struct hgc_tir_expr *value,
	      enum lw_kind kind);
/* value of kind converted to v's element type (lets go into block). */
struct hgc_tir_expr *lw_convert(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				struct hgc_tir_expr *value, enum lw_kind kind, enum hgc_dtype dt);
/* An f32 x rounded to an integer, ties to even (f32 result). */
struct hgc_tir_expr *lw_round_even(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				   struct hgc_tir_expr *x);
/* Zero points as lw_add_round sees them: all even integers, all odd, or anything. */
enum lw_zp { LW_ZP_EVEN, LW_ZP_ODD, LW_ZP_ANY };
/* f32 a + b rounded to an integer, ties to even, as if the sum were exact. */
struct hgc_tir_expr *lw_add_round(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				  struct hgc_tir_expr *a, struct hgc_tir_expr *b, enum lw_zp zp);
/* The lw_zp that n values of b allow. */
enum lw_zp lw_zp_kind(const double *v, int64_t n);
/* An f32 x rounded to an integer, ties away from zero (C round). */
struct hgc_tir_expr *lw_round_away(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				   struct hgc_tir_expr *x);
/* The range of an integer dtype. */
void lw_int_range(enum hgc_dtype dt, int64_t *lo, int64_t *hi);
/* An index value clamped into [lo, hi]. */
struct hgc_tir_expr *lw_clamp_int(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				  struct hgc_tir_expr *x, int64_t lo, int64_t hi);
/*
 * a / b for index values as the interpreter stores a double quotient into an
 * integer of range [lo, hi]: rounded half to even, saturated, 0 for 0 / 0.
 */
struct hgc_tir_expr *lw_div_int(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				struct hgc_tir_expr *a, struct hgc_tir_expr *b, int64_t lo,
				int64_t hi);

/* math.c: f32 functions the TIR has no intrinsic for, composed accurately */
struct hgc_tir_expr *lw_expm1(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			      struct hgc_tir_expr *x);
struct hgc_tir_expr *lw_log1p(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			      struct hgc_tir_expr *x);
/* max(y, 0) + log1p(exp(-|y|)), the interpreter's stable softplus. */
struct hgc_tir_expr *lw_softplus(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				 struct hgc_tir_expr *y);
/* C fmax / fmin: a NaN operand yields the other one. */
struct hgc_tir_expr *lw_fmax(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			     struct hgc_tir_expr *a, struct hgc_tir_expr *b);
struct hgc_tir_expr *lw_fmin(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			     struct hgc_tir_expr *a, struct hgc_tir_expr *b);
/* x is NaN. */
struct hgc_tir_expr *lw_isnan(struct hgc_lower_ctx *cx, struct hgc_tir_var *x);

#endif
