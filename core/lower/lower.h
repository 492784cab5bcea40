/*
 * lower.h: the bridge from the Graph IR to the Tensor IR.  Two levels:
 *
 *  - hgc_lower_graph: a whole graph into a TIR module whose entry function
 *    computes it (one tensor parameter per graph input, then one per graph
 *    output, dense row-major; intermediates are local tensors);
 *  - hgc_lower_op: one op as loop nests over *views*, appended to a block.
 *    Templates call it at their anchors to fuse fusible ops into their own
 *    loop nests on slices of (possibly blocked) tensors.
 *
 * A view is what an op's lowering reads or writes: a tensor, a logical rank
 * and constant extents (the slice size), starts added to the logical indices
 * (the slice offset), and an accessor turning logical indices into an element
 * access: built in for plain and graph-blocked tensors, or a template's own
 * callbacks.  See docs/lowering.md.
 */
#ifndef HGC_LOWER_H
#define HGC_LOWER_H

#include <stdbool.h>
#include <stdint.h>

#include "../graph/graph.h"
#include "../tir/tir.h"
#include "../util/util.h"

struct hgc_lower_ctx;
struct hgc_lower_view;

/*
 * A custom accessor.  idx holds the view's ndims logical indices with the
 * view's starts already added (so they index the whole logical tensor); the
 * callee owns the index expressions (each node may be used once).  load
 * returns the element as the view's element type; store appends to block the
 * statements writing value (of the element type) and returns the last one.
 */
typedef struct hgc_tir_expr *(*hgc_lower_load_fn)(struct hgc_lower_ctx *cx,
						   const struct hgc_lower_view *v,
						   struct hgc_tir_expr **idx);
typedef struct hgc_tir_stmt *(*hgc_lower_store_fn)(struct hgc_lower_ctx *cx,
						    const struct hgc_lower_view *v,
						    struct hgc_tir_stmt *block,
						    struct hgc_tir_expr **idx,
						    struct hgc_tir_expr *value);

/* A view of a tensor: see the comment at the top.  Copy it freely (by value). */
struct hgc_lower_view {
	struct hgc_tir_tensor *tensor;	/* the tensor read or written */
	enum hgc_dtype dtype;		/* element type, as a graph dtype */
	int ndims;			/* logical rank of the view */
	int64_t dims[HGC_MAX_DIMS];	/* extent of each logical dim (the slice size) */
	struct hgc_tir_expr *start[HGC_MAX_DIMS];	/* index-typed offset per logical dim,
							   NULL: 0 (copied on use) */
	/* plain accessor (load NULL): tensor dim j is indexed by logical dim axis[j]
	   plus its start, or by the constant fixed[j] when axis[j] < 0 */
	int8_t axis[HGC_MAX_DIMS];
	int64_t fixed[HGC_MAX_DIMS];
	/* custom accessor (blocked tensors, template buffers): both set, or neither */
	hgc_lower_load_fn load;
	hgc_lower_store_fn store;
	void *ctx;			/* for the accessor */
	const struct hgc_layout *layout;	/* the built-in blocked accessor's layout */
};

/*
 * Options of the lowering.  lower_tunable, when set, is offered every
 * tunable op (MatMul, Convolution) first: it returns 1 when it lowered the
 * op (a template), 0 to fall back to the naive loop nests here, -1 on error
 * with the diag set.
 */
struct hgc_lower_opts {
	const char *entry;		/* name of the entry function; NULL: "entry" */
	int64_t parallel_min;		/* elements of work from which an op's outer loops
					   become a parallel for; 0: 32768 */
	bool serial;			/* never emit parallel loops */
	int (*lower_tunable)(struct hgc_lower_ctx *cx, const struct hgc_op *op,
			     struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
			     struct hgc_lower_view *out, struct hgc_diag *d);
	void *user;			/* for lower_tunable */
	/* When set, hgc_lower_graph leaves out the ops it returns true for (a
	   fused op's hook lowered them already, at an anchor). */
	bool (*skip)(struct hgc_lower_ctx *cx, const struct hgc_op *op);
	/* When set, offered every op before skip: 1 when it lowered the op
	   (and what goes with it: a region of fused fusible ops), 0 to go
	   on, -1 on error with the diag set. */
	int (*lower_first)(struct hgc_lower_ctx *cx, const struct hgc_op *op,
			   struct hgc_diag *d);
};

/* What a lowering builds into and how. */
struct hgc_lower_ctx {
	struct hgc_tir_module *m;	/* the module being built */
	struct hgc_tir_func *f;		/* the function being built */
	const struct hgc_lower_opts *opts;	/* never NULL after init */
	int64_t parallel_min;		/* from opts, defaulted */
	bool in_parallel;		/* the block runs inside a parallel for already:
					   emit only serial loops (templates set it) */
	bool wide_lanes;		/* f32 sums split into 16 lanes, not 8: the
					   block is a template's, beside zmm kernels
					   (lower_fused sets it) */
	const struct hgc_graph *g;	/* the graph of hgc_lower_graph, or NULL */
	struct hgc_lower_view *views;	/* hgc_lower_graph: view by graph tensor id */
	bool *have;			/* hgc_lower_graph: views[id] is set */
};

/* view.c */
/* The whole of a TIR tensor of a plain row-major layout (its dims must be constants). */
struct hgc_lower_view hgc_lower_view_plain(struct hgc_tir_tensor *t);
/* A rank-0 view of element 0 of a one-element tensor (graph scalars live in [1] tensors). */
struct hgc_lower_view hgc_lower_view_scalar(struct hgc_tir_tensor *t);
/*
 * The logical tensor of rank ndims and dims stored in t under a blocked graph
 * layout (t has the layout's physical dims, padded outer blocks); the layout
 * must outlive the view.
 */
struct hgc_lower_view hgc_lower_view_blocked(struct hgc_tir_tensor *t, int ndims,
					     const int64_t *dims, const struct hgc_layout *layout);
/* A view through a custom accessor: rank ndims, dims, element type dt. */
struct hgc_lower_view hgc_lower_view_custom(struct hgc_tir_tensor *t, enum hgc_dtype dt,
					    int ndims, const int64_t *dims,
					    hgc_lower_load_fn load, hgc_lower_store_fn store,
					    void *ctx);
/*
 * A slice of v: starts (index expressions, NULL or a NULL entry: 0; each is
 * copied) are added to v's own, extents replace v's dims.  The slice must lie
 * inside v when the starts are constants (checked with hgc_bug); otherwise
 * the caller guarantees it.
 */
struct hgc_lower_view hgc_lower_view_slice(struct hgc_tir_module *m,
					   const struct hgc_lower_view *v,
					   struct hgc_tir_expr *const *starts,
					   const int64_t *extents);
/* The element at logical indices idx (consumed) of v, as v's element type. */
struct hgc_tir_expr *hgc_lower_view_load(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
					 struct hgc_tir_expr **idx);
/* Append to block the store of value (v's element type) at idx (consumed). */
struct hgc_tir_stmt *hgc_lower_view_store(struct hgc_lower_ctx *cx,
					  const struct hgc_lower_view *v,
					  struct hgc_tir_stmt *block, struct hgc_tir_expr **idx,
					  struct hgc_tir_expr *value);
/* The index expression of logical dim i of v in the whole tensor: start + idx (consumed). */
struct hgc_tir_expr *hgc_lower_view_global(struct hgc_lower_ctx *cx,
					   const struct hgc_lower_view *v, int i,
					   struct hgc_tir_expr *idx);
/* The TIR element type of a graph dtype, and back (UNDEF for kinds no dtype has). */
struct hgc_tir_type hgc_lower_type(enum hgc_dtype dt);
enum hgc_dtype hgc_lower_dtype(struct hgc_tir_type t);

/* lower.c */
/* Set up a context building into function f of module m (opts may be NULL). */
void hgc_lower_ctx_init(struct hgc_lower_ctx *cx, struct hgc_tir_module *m,
			struct hgc_tir_func *f, const struct hgc_lower_opts *opts);
/*
 * Append to block the loops computing op's output view out from its input
 * views in[0..op->nin).  Elementwise, binary and select ops broadcast
 * numpy-style over the views' extents; reductions and normalizations need
 * their reduced axes whole in the views.  The numbers are the interpreter's:
 * the same formulas in f32, exact integer arithmetic where the interpreter's
 * double arithmetic is exact, round half to even and saturation on integer
 * stores.  0, or -1 with the diag set.
 */
int hgc_lower_op(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_tir_stmt *block,
		 struct hgc_lower_view *const *in, struct hgc_lower_view *out,
		 struct hgc_diag *d);
/*
 * A module whose entry function computes g: each op lowered in graph order
 * over whole-tensor views (tunable ops offered to opts->lower_tunable
 * first).  NULL with the diag set.
 */
struct hgc_tir_module *hgc_lower_graph(const struct hgc_graph *g, const struct hgc_lower_opts *opts,
				       struct hgc_diag *d);

/* lower_shape.c */
/* Append to block a copy of src into dst (same extents; element types convert as a store). */
int hgc_lower_copy(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
		   const struct hgc_lower_view *src, const struct hgc_lower_view *dst,
		   struct hgc_diag *d);

#endif
