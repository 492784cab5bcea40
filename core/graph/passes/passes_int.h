/*
 * passes_int.h: helpers shared by the passes only: a builder of new ops
 * (pbuild.c) that gives them the location of the op they replace, records
 * a failure instead of aborting, and keeps embedded constants small.
 */
#ifndef HGC_PASSES_INT_H
#define HGC_PASSES_INT_H

#include "../graph_int.h"
#include "passes.h"

/* A pass's builder: the graph, where new ops say they come from, how many failed. */
struct hgc_pb {
	struct hgc_graph *g;
	struct hgc_loc loc;	/* of the op being rewritten */
	struct hgc_diag *d;
	int failed;		/* ops that did not check: a bug in the pass */
};

/* pbuild.c */
void hgc_pb_init(struct hgc_pb *b, struct hgc_graph *g, struct hgc_diag *d);
/* New ops take the location of op from now on. */
void hgc_pb_at(struct hgc_pb *b, const struct hgc_op *op);
/* An op to finish with hgc_pb_end once its attributes are set (out: UNDEF to infer). */
struct hgc_op *hgc_pb_begin(struct hgc_pb *b, enum hgc_op_kind kind, enum hgc_dtype out,
			    int nin, struct hgc_tensor *const *in);
void hgc_pb_int(struct hgc_pb *b, struct hgc_op *op, const char *name, int64_t v);
void hgc_pb_bool(struct hgc_pb *b, struct hgc_op *op, const char *name, bool v);
void hgc_pb_float(struct hgc_pb *b, struct hgc_op *op, const char *name, double v);
void hgc_pb_ints(struct hgc_pb *b, struct hgc_op *op, const char *name, int n,
		 const int64_t *v);
void hgc_pb_string(struct hgc_pb *b, struct hgc_op *op, const char *name, const char *v);
/* Give op every attribute from (same kind of schema). */
void hgc_pb_copy_attrs(struct hgc_pb *b, struct hgc_op *op, const struct hgc_op *from);
/* Check and infer op; its output (b->failed counts a failure, recorded in b->d). */
struct hgc_tensor *hgc_pb_end(struct hgc_pb *b, struct hgc_op *op);

/*
 * End a pass that marked dead[0..n) among the first n ops and appended new
 * ones: remove the dead, sort, and fail if any new op did not check.
 */
int hgc_pb_finish(struct hgc_pb *b, const bool *dead, size_t n);

/* A rewrite of op: the tensor that replaces its output, or NULL to keep op. */
typedef struct hgc_tensor *hgc_pb_rewrite_fn(struct hgc_pb *b, struct hgc_op *op, void *ctx);
/*
 * The loop of the rewriting passes: offer every op of g to fn, redirect the
 * readers of a rewritten op's output to the replacement (which takes the old
 * name when it is new and unnamed), then hgc_pb_finish.  The number
 * rewritten, or -1 with d set.
 */
int hgc_pb_rewrite(struct hgc_graph *g, hgc_pb_rewrite_fn *fn, void *ctx, struct hgc_diag *d);

/* Shorthands for finished ops. */
struct hgc_tensor *hgc_pb_unary(struct hgc_pb *b, enum hgc_op_kind kind, enum hgc_dtype out,
				struct hgc_tensor *x);
struct hgc_tensor *hgc_pb_binary(struct hgc_pb *b, enum hgc_op_kind kind, enum hgc_dtype out,
				 struct hgc_tensor *x, struct hgc_tensor *y);
/* A reduction over axes with keep_dims, to finish with hgc_pb_end (more attributes). */
struct hgc_op *hgc_pb_reduce_begin(struct hgc_pb *b, enum hgc_op_kind kind, enum hgc_dtype out,
				   struct hgc_tensor *x, int naxes, const int64_t *axes);
/* A reduction over axes with keep_dims. */
struct hgc_tensor *hgc_pb_reduce(struct hgc_pb *b, enum hgc_op_kind kind, enum hgc_dtype out,
				 struct hgc_tensor *x, int naxes, const int64_t *axes);
struct hgc_tensor *hgc_pb_cast(struct hgc_pb *b, struct hgc_tensor *x, enum hgc_dtype dt);
struct hgc_tensor *hgc_pb_reshape(struct hgc_pb *b, struct hgc_tensor *x, int ndims,
				  const int64_t *dims);
struct hgc_tensor *hgc_pb_transpose(struct hgc_pb *b, struct hgc_tensor *x, const int *perm);

/* Embedded constants: a 0-d scalar, or values[] of the given shape, stored as dt. */
struct hgc_tensor *hgc_pb_scalar(struct hgc_pb *b, enum hgc_dtype dt, double v);
struct hgc_tensor *hgc_pb_const(struct hgc_pb *b, enum hgc_dtype dt, int ndims,
				const int64_t *dims, const double *values);
/* A constant of one value everywhere. */
struct hgc_tensor *hgc_pb_fill(struct hgc_pb *b, enum hgc_dtype dt, int ndims,
			       const int64_t *dims, double v);

/* Shape of a per-channel operand along axis of a rank-r tensor: [C, 1, ...]; its rank. */
int hgc_pb_channel_shape(int64_t c, int axis, int r, int64_t *dims);
/* Is perm the identity on n dims? */
bool hgc_pb_perm_identity(const int *perm, int n);

#endif
