/*
 * graph_int.h: helpers shared by the files of core/graph only: the op stems
 * the table is built from, schema rows, exact (double) element access,
 * shape helpers, broadcasting iteration and sliding-window geometry.
 */
#ifndef HGC_GRAPH_INT_H
#define HGC_GRAPH_INT_H

#include "graph.h"

/* Each stem of HGC_OP_LIST provides a schema, a shape inference and a reference. */
#define X(e, n, c, lo, hi, f)                                                            \
	extern const struct hgc_attr_spec hgc_op_##f##_attrs[];                            \
	int hgc_op_##f##_infer(struct hgc_op *op, struct hgc_diag *d);                     \
	void hgc_op_##f##_ref(const struct hgc_op *op, const void *const *in, void *const *out);
HGC_OP_LIST(X)
#undef X

/* Schema rows: required, or optional with a default; HGC_ATTR_END closes a schema. */
#define HGC_ATTR_REQ(nm, ty) {nm, HGC_ATTR_##ty, true, {.name = nm, .type = HGC_ATTR_##ty}}
#define HGC_ATTR_BOOL_DEF(nm, val) \
	{nm, HGC_ATTR_BOOL, false, {.name = nm, .type = HGC_ATTR_BOOL, .v.i = (val)}}
#define HGC_ATTR_INT_DEF(nm, val) \
	{nm, HGC_ATTR_INT, false, {.name = nm, .type = HGC_ATTR_INT, .v.i = (val)}}
#define HGC_ATTR_FLOAT_DEF(nm, val) \
	{nm, HGC_ATTR_FLOAT, false, {.name = nm, .type = HGC_ATTR_FLOAT, .v.f = (val)}}
#define HGC_ATTR_STRING_DEF(nm, val) \
	{nm, HGC_ATTR_STRING, false, {.name = nm, .type = HGC_ATTR_STRING, .v.s = (val)}}
#define HGC_ATTR_INTS_DEF(nm, arr, cnt) \
	{nm, HGC_ATTR_INTS, false, {.name = nm, .type = HGC_ATTR_INTS, .n = (cnt), .v.ints = (arr)}}
#define HGC_ATTR_END {NULL, HGC_ATTR_NONE, false, {.name = NULL}}

/* Longest text hgc_dims_str writes, with its NUL. */
#define HGC_DIMS_BUF (HGC_MAX_DIMS * 21 + 3)

/* dtype.c: exact element access (every dtype fits a double exactly). */
bool hgc_dtype_is_float(enum hgc_dtype dt);
/* Store v as dt: f32 rounds once, bf16 via f32, ints round half to even and saturate. */
void hgc_store_f64(enum hgc_dtype dt, void *p, int64_t i, double v);
/* A malloc'ed array of the n elements of p as doubles. */
double *hgc_load_all(enum hgc_dtype dt, const void *p, int64_t n);
double hgc_round_half_even(double v);

/* graph.c */
/* Copy a's list or string payload into g's arena (a->name is left alone). */
void hgc_attr_copy_payload(struct hgc_graph *g, struct hgc_attr *a);
/* Record "Kind: message" at op->loc and return -1. */
int hgc_op_error(const struct hgc_op *op, struct hgc_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Set the output dtype to inferred, or check the caller's preset against it. */
int hgc_op_set_out_dtype(struct hgc_op *op, enum hgc_dtype inferred, struct hgc_diag *d);
/* Set the output's shape (the layout is made dense when the op is finished). */
void hgc_op_set_out_shape(struct hgc_op *op, int ndims, const int64_t *dims);
const char *hgc_dims_str(char *buf, int ndims, const int64_t *dims);
int64_t hgc_dims_prod(int ndims, const int64_t *dims);
/* Normalize a possibly negative axis of a rank-r tensor; -1 if out of range. */
int hgc_norm_axis(int64_t axis, int rank, int *out);
/* Numpy broadcast of two shapes into out; -1 if they do not broadcast. */
int hgc_broadcast(int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out);
/* Check that every input has a dtype in the given mask (1u << dtype); names the input. */
int hgc_op_want_dtype(const struct hgc_op *op, int i, const char *role, unsigned mask,
		      struct hgc_diag *d);

#define HGC_DTM(e) (1u << HGC_DT_##e)
#define HGC_DTM_FLOAT (HGC_DTM(F32) | HGC_DTM(BF16))
#define HGC_DTM_INT8 (HGC_DTM(S8) | HGC_DTM(U8))
#define HGC_DTM_NUM (HGC_DTM_FLOAT | HGC_DTM_INT8 | HGC_DTM(S32))

/* attr.c */
/* The schema row of name for op's kind, or NULL. */
const struct hgc_attr_spec *hgc_op_attr_spec(enum hgc_op_kind kind, const char *name);
/* An INTS attribute: its count, and *v its values. */
int hgc_op_ints(const struct hgc_op *op, const char *name, const int64_t **v);
/* A FLOATS attribute (INTS accepted): its count, and element i. */
int hgc_op_nfloats(const struct hgc_op *op, const char *name);
double hgc_op_float_at(const struct hgc_op *op, const char *name, int i);
/* Index of a STRING attribute's value among choices (NULL-terminated); -1 with d set. */
int hgc_op_choice(const struct hgc_op *op, const char *name, const char *const *choices,
		  struct hgc_diag *d);

/* bcast.c: walk an output shape and the matching offsets of broadcast sources. */
#define HGC_BCAST_MAX 3
struct hgc_bcast {
	int nd;					/* rank of the output */
	int64_t dims[HGC_MAX_DIMS];		/* output dims */
	int64_t idx[HGC_MAX_DIMS];		/* current output index */
	int nsrc;				/* number of sources */
	int64_t strides[HGC_BCAST_MAX][HGC_MAX_DIMS];	/* source strides, 0 where broadcast */
	int64_t off[HGC_BCAST_MAX];		/* current source offsets */
};
void hgc_bcast_init(struct hgc_bcast *b, const struct hgc_tensor *out, int nsrc,
		    const struct hgc_tensor *const *src);
void hgc_bcast_next(struct hgc_bcast *b);
/* Split t's dims around axis: outer * dims[axis] * inner = nelems. */
void hgc_axis_split(const struct hgc_tensor *t, int axis, int64_t *outer, int64_t *inner);

/* window.c: one spatial dim of a sliding window (convolution or pooling). */
struct hgc_win {
	int64_t in, kernel, stride, dilation;
	int64_t pad_begin, pad_end;	/* after auto_pad; pad_end includes the ceil extension */
	int64_t user_pad_end;		/* pad_end before the ceil extension (AvgPool divisor) */
	int64_t out;
};
/*
 * The largest stride, dilation, pad or pooling kernel: with dims below 2^40
 * (dsl/spec.c), the window arithmetic (extent, span, rounding up) then stays
 * far inside int64_t; 2^63 - 1 pads overflowed it.
 */
#define HGC_WIN_MAX (INT64_C(1) << 20)
/* Check strides, dilations (if in the schema), pads and auto_pad for nsp spatial dims. */
int hgc_win_check_attrs(const struct hgc_op *op, int nsp, struct hgc_diag *d);
/* Geometry of spatial dim i for input size in and kernel size kernel. */
int hgc_win_setup(const struct hgc_op *op, int i, int64_t in, int64_t kernel, bool ceil_mode,
		  struct hgc_win *w, struct hgc_diag *d);

#endif
