/*
 * tmpl.h: templates at run time.  The template compiler (dsl/tmplc/,
 * build/hgc-tmplc) turns every template of templates/NAME.tmpl into a
 * `const struct hgc_tmpl hgc_tmpl_<template>` in gen/tmpl_NAME.c, and
 * gen/templates.c lists them all in hgc_tmpl_registry, so a new .tmpl file
 * needs no other change.  This header is the contract between that
 * generated code and the instantiation (core/lower/tmpl*.c):
 *
 *  - a template's static symbols (operand dims, op attributes, built-ins,
 *    parameters and lets) live in an environment of int64 values; the
 *    generated functions compute parameter domains, lets, constraints,
 *    layouts and anchor costs from it (tmpl.c enumerates the space);
 *  - build() emits the template's loop nest as Tensor IR through the
 *    hgc_tmpl_* builders below, over operand buffers that tmpl_inst.c
 *    prepares in the template's (blocked) layouts, and records an
 *    insertion point at every anchor;
 *  - tmpl_lower.c binds graph ops to templates, chooses parameters (pins
 *    from configs, the rest by the search of heuristics/), packs inputs, writes the result
 *    back (with the bias) at an anchor, and plugs into
 *    hgc_lower_opts.lower_tunable.
 *
 * See docs/templates.md.
 */
#ifndef HGC_TMPL_H
#define HGC_TMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../graph/graph.h"
#include "../tir/tir.h"
#include "../util/util.h"
#include "lower.h"

#define HGC_TMPL_MAX_OPERANDS 4		/* inputs and the result */
#define HGC_TMPL_MAX_SYMS 160		/* static symbols of one template */
#define HGC_TMPL_MAX_GRID 4		/* names of one grid parameter */
#define HGC_TMPL_MAX_DOMAIN 1024	/* values of one domain (a grid: tuples) */
#define HGC_TMPL_MAX_PHYS (2 * HGC_MAX_DIMS)	/* physical dims of a layout */
#define HGC_TMPL_MAX_CANDIDATES (1 << 20)	/* candidates one enumeration visits */

/*
 * Op symbols: X(op kind suffix, name, what) bound from an op's attributes
 * (pads after auto_pad and the window rounding).
 */
#define HGC_TMPL_OP_SYMS(X)                                                       \
	X(CONVOLUTION, stride_h, "vertical stride")                               \
	X(CONVOLUTION, stride_w, "horizontal stride")                             \
	X(CONVOLUTION, pad_top, "padding above the input")                        \
	X(CONVOLUTION, pad_bottom, "padding below the input")                     \
	X(CONVOLUTION, pad_left, "padding left of the input")                     \
	X(CONVOLUTION, pad_right, "padding right of the input")                   \
	X(CONVOLUTION, dilation_h, "vertical dilation")                           \
	X(CONVOLUTION, dilation_w, "horizontal dilation")                         \
	X(CONVOLUTION, groups, "groups (templates take 1)")

/* The op kind a region template serves (`template T for Region(X:[B, R, L])
   -> Y:[B, R, L]`): a region of fusible ops with no tunable op
   (core/lower/region.c); no graph op has this kind. */
#define HGC_TMPL_REGION HGC_OP_COUNT

/* The name of op kind k as templates write it: the op's, or "Region". */
static inline const char *hgc_tmpl_op_name(enum hgc_op_kind k)
{
	return k == HGC_TMPL_REGION ? "Region" : hgc_op_table[k].name;
}

/* Built-in symbols of every template: X(name, what). */
#define HGC_TMPL_BUILTINS(X)                                                      \
	X(threads, "threads the config asks for (0: the machine's)")              \
	X(vlen, "f32 lanes of a vector register at the ISA in use")               \
	X(kpack, "k values packed together in B: 1 for f32, 2 for bf16, 4 for int8")

/* Anchor cost formulas: X(enum suffix, key). */
#define HGC_TMPL_COSTS(X)                                                         \
	X(WORKING_SET, working_set)                                               \
	X(CALLS, calls)                                                           \
	X(ACCESSES, accesses)

enum hgc_tmpl_cost {
#define X(e, k) HGC_TMPL_COST_##e,
	HGC_TMPL_COSTS(X)
#undef X
	HGC_TMPL_NCOST
};

enum hgc_tmpl_sym_kind {
	HGC_TMPL_SHAPE,		/* a dim of an operand */
	HGC_TMPL_OPSYM,		/* an attribute of the op (HGC_TMPL_OP_SYMS) */
	HGC_TMPL_BUILTIN,	/* HGC_TMPL_BUILTINS */
	HGC_TMPL_PARAM,		/* a parameter: a value of its domain */
	HGC_TMPL_LET,		/* a derived value */
};

/* A static symbol: one slot of the environment. */
struct hgc_tmpl_sym {
	const char *name;
	enum hgc_tmpl_sym_kind kind;
	int operand, dim;	/* SHAPE: the operand and dim it first names */
	int decl;		/* PARAM: index of its declaration in params */
	const char *text;	/* LET: its expression, for listings */
};

enum hgc_tmpl_domain {
	HGC_TMPL_ONE_OF,	/* the values listed */
	HGC_TMPL_RANGE,		/* lo..hi inclusive, by step */
	HGC_TMPL_DIVISOR_OF,	/* the positive divisors of a value */
	HGC_TMPL_GRID,		/* tuples of positive values whose product is a value */
};

/* A parameter declaration: one name, or the names of one grid. */
struct hgc_tmpl_param {
	int nsyms;
	int sym[HGC_TMPL_MAX_GRID];	/* their slots */
	enum hgc_tmpl_domain domain;
	const char *domain_text;	/* as written: "one_of(16, 32, 64)" */
	const char *constraints_text;	/* "divides(M), MB <= 64", or "" */
	struct hgc_loc loc;
};

/* One step of the declaration order that enumeration follows. */
struct hgc_tmpl_step {
	bool param;		/* a parameter declaration (index in params) or a let (slot) */
	int index;
};

/* A constraint, checked once every parameter has a value. */
struct hgc_tmpl_constraint {
	const char *text;	/* "divides(M)" (of MB), "MB * KB <= 4096" */
	int param;		/* the declaration listing it, or -1 (a layout's) */
	struct hgc_loc loc;
};

/* An anchor: where ops can be fused, the slice it exposes and its costs. */
struct hgc_tmpl_anchor {
	const char *name;
	bool post;		/* a post-op anchor (on the result) or a pre-op one (an input) */
	int operand;
	int rank;		/* dims of the slice (its ranges) */
	const char *slice_text;	/* "C[mb, npi * NSN : NSN, :, :]" */
	const char *cost_text[HGC_TMPL_NCOST];
	struct hgc_loc loc;
};

/* A physical dim of a layout, from one logical dim of the operand. */
enum hgc_tmpl_ldim_kind {
	HGC_TMPL_WHOLE,		/* the logical dim itself */
	HGC_TMPL_OUTER,		/* D / E: the block index (the last block padded) */
	HGC_TMPL_INNER,		/* D % E: the index in the block (divided by a packing) */
	HGC_TMPL_PAD,		/* pad(D, before, after): zeros around */
	HGC_TMPL_PACK,		/* the packed k values of an inner block (innermost) */
};

struct hgc_tmpl_ldim {
	enum hgc_tmpl_ldim_kind kind;
	int dim;		/* the logical dim */
	int64_t block;		/* OUTER, INNER: E; PACK: the packing */
	int64_t before;		/* PAD: zeros before */
	int64_t extent;		/* of the physical dim */
};

/* An operand's layout in a template: physical dims, outermost first. */
struct hgc_tmpl_layout {
	int nphys;
	struct hgc_tmpl_ldim phys[HGC_TMPL_MAX_PHYS];
	int64_t pack;		/* the packing of the inner block of the reduction dim, or 1 */
	bool declared;		/* the template gave a layout (else: plain, the logical dims) */
};

/* The environment: one value per static symbol. */
struct hgc_tmpl_env {
	const struct hgc_tmpl *t;
	int64_t v[HGC_TMPL_MAX_SYMS];
	bool bad;		/* an evaluation divided by zero or overflowed */
};

struct hgc_tmpl_build;

/* A template, as the generated code defines it. */
struct hgc_tmpl {
	const char *name;
	enum hgc_op_kind op;
	const char *file;
	int line;
	int ninputs;				/* operands 0..ninputs-1; ninputs is the result */
	const char *const *operand_names;
	const int *operand_rank;
	const enum hgc_dtype *operand_dtype;	/* HGC_DT_UNDEF: any */
	const char *signature;			/* "MatMul(A:[M, K], B:[K, N]) -> C:[M, N]" */
	int nsyms;
	const struct hgc_tmpl_sym *syms;
	int nparams;
	const struct hgc_tmpl_param *params;
	int nsteps;
	const struct hgc_tmpl_step *steps;
	int nconstraints;
	const struct hgc_tmpl_constraint *constraints;
	int nanchors;
	const struct hgc_tmpl_anchor *anchors;
	/* The values of a parameter's domain into vals (a grid: tuples, one after
	   the other); returns how many values (not tuples), at most cap. */
	int (*domain)(struct hgc_tmpl_env *e, int param, int64_t *vals, int cap);
	/* Compute the let of slot sym from the slots before it. */
	void (*let)(struct hgc_tmpl_env *e, int sym);
	/* The first constraint that fails, or -1. */
	int (*check)(struct hgc_tmpl_env *e);
	/* The first that fails of the constraints whose names are all bound
	   after step s (s = -1: before the first step), or -1. */
	int (*check_step)(struct hgc_tmpl_env *e, int s);
	/* The layout of an operand. */
	void (*layout)(struct hgc_tmpl_env *e, int operand, struct hgc_tmpl_layout *l);
	/* A cost formula of an anchor. */
	int64_t (*cost)(struct hgc_tmpl_env *e, int anchor, enum hgc_tmpl_cost what);
	/* Emit the loop nest (0, or -1 with b->d set). */
	int (*build)(struct hgc_tmpl_build *b);
	/* Each operand's layout as written ("[M / MB, K / KB, M % MB, K % KB] packed"),
	   or NULL for a plain one. */
	const char *const *layout_text;
};

/* gen/templates.c: every compiled template, NULL-terminated, in file order. */
extern const struct hgc_tmpl *const hgc_tmpl_registry[];

/*
 * Arithmetic of static expressions (C semantics: / and % truncate); a zero
 * divisor or an overflow marks the environment bad (the candidate fails).
 */
static inline int64_t hgc_tmpl_add(struct hgc_tmpl_env *e, int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		e->bad = true;
	return r;
}
static inline int64_t hgc_tmpl_sub(struct hgc_tmpl_env *e, int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		e->bad = true;
	return r;
}
static inline int64_t hgc_tmpl_mul(struct hgc_tmpl_env *e, int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		e->bad = true;
	return r;
}
static inline int64_t hgc_tmpl_div(struct hgc_tmpl_env *e, int64_t a, int64_t b)
{
	if (b == 0 || (a == INT64_MIN && b == -1)) {
		e->bad = true;
		return 0;
	}
	return a / b;
}
static inline int64_t hgc_tmpl_mod(struct hgc_tmpl_env *e, int64_t a, int64_t b)
{
	if (b == 0 || (a == INT64_MIN && b == -1)) {
		e->bad = true;
		return 0;
	}
	return a % b;
}
/* a / b rounded up (toward +infinity). */
static inline int64_t hgc_tmpl_cdiv(struct hgc_tmpl_env *e, int64_t a, int64_t b)
{
	int64_t q = hgc_tmpl_div(e, a, b);

	if (b && q * b != a && (a < 0) == (b < 0))
		q++;
	return q;
}
static inline int64_t hgc_tmpl_neg(struct hgc_tmpl_env *e, int64_t a)
{
	return hgc_tmpl_sub(e, 0, a);
}
static inline int64_t hgc_tmpl_min(int64_t a, int64_t b)
{
	return a < b ? a : b;
}
static inline int64_t hgc_tmpl_max(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* tmpl.c: domains (called by generated domain functions) */
int hgc_tmpl_dom_list(struct hgc_tmpl_env *e, const int64_t *x, int n, int64_t *out, int cap);
int hgc_tmpl_dom_range(struct hgc_tmpl_env *e, int64_t lo, int64_t hi, int64_t step,
		       int64_t *out, int cap);
int hgc_tmpl_dom_divisors(struct hgc_tmpl_env *e, int64_t n, int64_t *out, int cap);
int hgc_tmpl_dom_grid(struct hgc_tmpl_env *e, int k, int64_t n, int64_t *out, int cap);

/* ---- building Tensor IR: what generated build functions call (tmpl_build.c) ---- */

/* A slice of a tensor: one entry per physical dim; ranges make its dims. */
struct hgc_tmpl_slice {
	struct hgc_tir_tensor *tensor;
	int operand;			/* the operand whose buffer it is, or -1 */
	int n;				/* physical dims (indices) */
	struct hgc_tir_expr *start[HGC_TMPL_MAX_PHYS];	/* index or first element */
	int64_t len[HGC_TMPL_MAX_PHYS];			/* ranges: elements; 1 otherwise */
	int64_t step[HGC_TMPL_MAX_PHYS];
	bool range[HGC_TMPL_MAX_PHYS];
	int rank;			/* ranges so far */
	struct hgc_loc loc;
};

/* An anchor's insertion point: an empty block left in the nest, and its slice. */
struct hgc_tmpl_point {
	struct hgc_tir_stmt *block;	/* NULL: the build never reached the anchor */
	struct hgc_tir_stmt *parent;	/* the block holding it */
	struct hgc_tmpl_slice slice;	/* physical slice of the operand's buffer */
	bool in_parallel;		/* inside the template's parallel loop */
};

/* A brgemm call under construction: its batch loops and address arrays. */
struct hgc_tmpl_brgemm {
	struct hgc_tir_stmt *outer;	/* where the arrays and the call go */
	struct hgc_tir_stmt *body;	/* the innermost batch loop's body */
	struct hgc_tir_tensor *aa, *ba;	/* address arrays */
	struct hgc_tir_var *count;	/* batch elements filled */
	int64_t cap;			/* capacity of the arrays */
	int pos;			/* where the arrays are defined in outer */
	struct hgc_loc loc;
};

/* An elementwise assignment under construction: loops over the ranges. */
struct hgc_tmpl_ew {
	int rank;
	int64_t len[HGC_TMPL_MAX_PHYS];
	struct hgc_tir_var *var[HGC_TMPL_MAX_PHYS];
	struct hgc_tir_stmt *body;
	struct hgc_loc loc;
};

/* The state of one instantiation, passed to the generated build function. */
struct hgc_tmpl_build {
	const struct hgc_tmpl *t;
	struct hgc_lower_ctx *cx;	/* module and function being built */
	struct hgc_tir_module *m;
	struct hgc_tir_stmt *block;	/* where the nest goes */
	struct hgc_tmpl_env env;	/* every static symbol's value */
	enum hgc_dtype acc;		/* accumulator type: f32 or s32 */
	enum hgc_dtype dtype[HGC_TMPL_MAX_OPERANDS];	/* element type of each buffer */
	struct hgc_tir_tensor *buf[HGC_TMPL_MAX_OPERANDS];	/* operand buffers (physical) */
	struct hgc_tmpl_layout layout[HGC_TMPL_MAX_OPERANDS];
	struct hgc_tmpl_point *points;	/* one per anchor */
	struct hgc_diag *d;
	int nerr;			/* errors reported so far */
	int par_depth;			/* template parallel loops open */
	bool outer_parallel;		/* cx was inside a parallel loop already */
	struct hgc_vec ranges;		/* struct hgc_tmpl_range: bounds of build variables */
};

/* A template source location (generated code passes its own file). */
#define HGC_TMPL_LOC(file, line, col) ((struct hgc_loc){ (file), (line), (col) })

/* Report an error at loc (in the template) and return -1. */
int hgc_tmpl_fail(struct hgc_tmpl_build *b, struct hgc_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Index, bool and variable expressions; binary operators fold constants. */
struct hgc_tir_expr *hgc_tmpl_k(struct hgc_tmpl_build *b, int64_t v);
struct hgc_tir_expr *hgc_tmpl_kb(struct hgc_tmpl_build *b, bool v);
struct hgc_tir_expr *hgc_tmpl_ref(struct hgc_tmpl_build *b, struct hgc_tir_var *v);
struct hgc_tir_expr *hgc_tmpl_bin(struct hgc_tmpl_build *b, enum hgc_tir_binop op,
				  struct hgc_tir_expr *x, struct hgc_tir_expr *y);
struct hgc_tir_expr *hgc_tmpl_cdiv_x(struct hgc_tmpl_build *b, struct hgc_tir_expr *x,
				     struct hgc_tir_expr *y);
struct hgc_tir_expr *hgc_tmpl_neg_x(struct hgc_tmpl_build *b, struct hgc_tir_expr *x);
struct hgc_tir_expr *hgc_tmpl_not_x(struct hgc_tmpl_build *b, struct hgc_tir_expr *x);
/* The interval [lo, hi] of an index expression over the ranges of the loop
   variables and lets built so far; false when it cannot be bounded. */
bool hgc_tmpl_bounds(struct hgc_tmpl_build *b, const struct hgc_tir_expr *e, int64_t *lo,
		     int64_t *hi);
/* A fresh variable named after the template's. */
struct hgc_tir_var *hgc_tmpl_var(struct hgc_tmpl_build *b, const char *name);
/* let name = value in block (value index or bool); the variable. */
struct hgc_tir_var *hgc_tmpl_let(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block,
				 const char *name, struct hgc_tir_expr *value, struct hgc_loc loc);
/* for var in [lo, hi) step (NULL: 1); returns the body block. */
struct hgc_tir_stmt *hgc_tmpl_for(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block,
				  struct hgc_tir_var *var, struct hgc_tir_expr *lo,
				  struct hgc_tir_expr *hi, struct hgc_tir_expr *step,
				  struct hgc_loc loc);
/* A parallel for over n ranges (serial loops inside another parallel loop);
   returns the body block.  hgc_tmpl_pfor_end closes it. */
struct hgc_tir_stmt *hgc_tmpl_pfor(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block, int n,
				   struct hgc_tir_var *const *vars, struct hgc_tir_expr *const *lo,
				   struct hgc_tir_expr *const *hi, struct hgc_tir_expr *const *step,
				   struct hgc_loc loc);
void hgc_tmpl_pfor_end(struct hgc_tmpl_build *b);
/* if (cond): the then block; *els gets the else block when els is not NULL. */
struct hgc_tir_stmt *hgc_tmpl_if(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block,
				 struct hgc_tir_expr *cond, struct hgc_tir_stmt **els,
				 struct hgc_loc loc);
/* A local tensor (dtype name: f32 bf16 s32 s8 u8 or acc) defined in block. */
struct hgc_tir_tensor *hgc_tmpl_tensor(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block,
				       const char *name, const char *dtype, int n,
				       const int64_t *dims, struct hgc_loc loc);
/* Start a slice of tensor t (operand: its index, or -1) with n indices. */
void hgc_tmpl_slice(struct hgc_tmpl_build *b, struct hgc_tmpl_slice *s, struct hgc_tir_tensor *t,
		    int operand, int n, struct hgc_loc loc);
/* Index i of a slice: one element at x, a range x : len : step, or the whole dim. */
void hgc_tmpl_at(struct hgc_tmpl_build *b, struct hgc_tmpl_slice *s, int i,
		 struct hgc_tir_expr *x);
void hgc_tmpl_range(struct hgc_tmpl_build *b, struct hgc_tmpl_slice *s, int i,
		    struct hgc_tir_expr *x, int64_t len, int64_t step);
void hgc_tmpl_all(struct hgc_tmpl_build *b, struct hgc_tmpl_slice *s, int i);
/* brgemm: begin (batch loops over n variables in [lo, hi)), then end with the
   A and B slices (built with the batch variables) and the C slice. */
int hgc_tmpl_brgemm_begin(struct hgc_tmpl_build *b, struct hgc_tmpl_brgemm *g,
			  struct hgc_tir_stmt *block, int n, struct hgc_tir_var *const *vars,
			  struct hgc_tir_expr *const *lo, struct hgc_tir_expr *const *hi,
			  struct hgc_loc loc);
int hgc_tmpl_brgemm_end(struct hgc_tmpl_build *b, struct hgc_tmpl_brgemm *g,
			const struct hgc_tmpl_slice *a, const struct hgc_tmpl_slice *bs,
			const struct hgc_tmpl_slice *c, struct hgc_tir_expr *first);
/* Elementwise assignment to the slice lhs: loops over its ranges; values are
   built with hgc_tmpl_eload and hgc_tmpl_ebin, then stored by ew_end. */
int hgc_tmpl_ew_begin(struct hgc_tmpl_build *b, struct hgc_tmpl_ew *w,
		      struct hgc_tir_stmt *block, const struct hgc_tmpl_slice *lhs);
struct hgc_tir_expr *hgc_tmpl_eload(struct hgc_tmpl_build *b, const struct hgc_tmpl_ew *w,
				    const struct hgc_tmpl_slice *s);
struct hgc_tir_expr *hgc_tmpl_ebin(struct hgc_tmpl_build *b, enum hgc_tir_binop op,
				   struct hgc_tir_expr *x, struct hgc_tir_expr *y);
struct hgc_tir_expr *hgc_tmpl_eneg(struct hgc_tmpl_build *b, struct hgc_tir_expr *x);
int hgc_tmpl_ew_end(struct hgc_tmpl_build *b, struct hgc_tmpl_ew *w,
		    const struct hgc_tmpl_slice *lhs, struct hgc_tir_expr *value);
/* Record anchor i here, exposing slice s. */
void hgc_tmpl_anchor(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block, int i,
		     const struct hgc_tmpl_slice *s);

/* ---- instantiation (tmpl.c, tmpl_inst.c, tmpl_lower.c) ---- */

/* How one graph dim is indexed from the canonical (template) indices. */
struct hgc_tmpl_map {
	int n;				/* graph dims of the view */
	struct {
		int8_t c;		/* canonical dim, or -1: index 0 (broadcast) */
		int64_t div, mod;	/* (idx[c] / div) % mod; mod 0: no modulo */
	} d[HGC_MAX_DIMS];
};

/* An op bound to a template: its canonical operands and the symbols they fix. */
struct hgc_tmpl_bind {
	const struct hgc_tmpl *t;
	const struct hgc_op *op;
	struct hgc_tmpl_env env;	/* shape, op and built-in symbols set */
	int64_t dims[HGC_TMPL_MAX_OPERANDS][HGC_MAX_DIMS];	/* canonical shapes */
	enum hgc_dtype dtype[HGC_TMPL_MAX_OPERANDS];	/* inputs' types; the result: acc */
	struct hgc_tmpl_map map[HGC_TMPL_MAX_OPERANDS];	/* canonical -> graph indices */
	struct hgc_tmpl_map bias_map;	/* output indices -> bias indices (op->nin > 2) */
	enum hgc_dtype acc;
	char why[160];			/* why the template does not apply */
};

/*
 * A config's choice about templates, as the front end keeps it: kind "use"
 * (key: the op kind, value: the template) or "pin" (key: "TEMPLATE.PARAM",
 * value: the number).  Other kinds are ignored.
 */
struct hgc_tmpl_rule {
	const char *kind;
	const char *key;
	const char *value;
	struct hgc_loc loc;
};

/* A parameter pinned by a config: `pin T.NAME = value;`. */
struct hgc_tmpl_pin {
	int sym;			/* slot */
	int64_t value;
	const struct hgc_tmpl_rule *rule;	/* for messages, or NULL */
};

/* A chosen instance: the environment and what instantiation did. */
struct hgc_tmpl_inst {
	struct hgc_tmpl_env env;
	struct hgc_tmpl_point *points;	/* per anchor (malloc'ed by instantiate) */
	int npoints;
	int writeback;			/* anchor holding the result's write-back, or -1 */
};

/* Called for each valid candidate; nonzero stops the enumeration. */
typedef int hgc_tmpl_visit_fn(const struct hgc_tmpl_env *e, void *ctx);

/* tmpl.c */
/* The registered template called name, or NULL. */
const struct hgc_tmpl *hgc_tmpl_find(const char *name);
/* The slot of a static symbol, or -1. */
int hgc_tmpl_sym(const struct hgc_tmpl *t, const char *name);
/*
 * Visit every candidate of b's parameter space (each pinned slot fixed at its
 * value) that satisfies the constraints, in declaration and domain order.
 * Returns how many candidates were valid (the visit may stop early).
 */
long hgc_tmpl_enumerate(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins,
			int npins, hgc_tmpl_visit_fn *fn, void *ctx);
/* The same visits without pruning: each candidate's constraints checked at
   its leaf (the reference the tests hold the pruned walk to). */
long hgc_tmpl_enumerate_full(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins,
			     int npins, hgc_tmpl_visit_fn *fn, void *ctx);
/* Elements of padding an environment's layouts add over the logical operands. */
int64_t hgc_tmpl_padding(const struct hgc_tmpl_bind *b, struct hgc_tmpl_env *e);
/*
 * The choice: the valid candidate (pins fixed) the parameter search of
 * heuristics/ estimates cheapest (heuristics/heuristics.h).  -1 with d set
 * (at the pin when one is to blame) when no candidate is valid.
 */
int hgc_tmpl_choose(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins, int npins,
		    struct hgc_tmpl_env *out, struct hgc_diag *d);
/* The simple choice: the least padding, the first in enumeration order
   among equals; the same errors. */
int hgc_tmpl_choose_padding(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins,
			    int npins, struct hgc_tmpl_env *out, struct hgc_diag *d);
/* Print a template: op, operands, parameters with domains, anchors and costs. */
void hgc_tmpl_print(FILE *f, const struct hgc_tmpl *t);
/* Print the values of a chosen environment's parameters: "MB=32 NB=64 ...". */
void hgc_tmpl_print_params(FILE *f, const struct hgc_tmpl_env *e);

/* tmpl_bind.c */
/* Bind op to t with the given thread count: 0, or -1 with b->why set. */
int hgc_tmpl_bind(const struct hgc_tmpl *t, const struct hgc_op *op, int threads,
		  struct hgc_tmpl_bind *b);

/*
 * Bind a region template t to a region whose domain has dims[0..n) and
 * whose first reduced axis (or last dim without a reduction) is k >= 1:
 * X and Y are [B, R, L] with B the dims before k-1, R dim k-1 and L the
 * dims from k, flattened; map[1] takes the canonical indices to the
 * domain's.  0, or -1 with b->why set.
 */
int hgc_tmpl_bind_region(const struct hgc_tmpl *t, const int64_t *dims, int n, int k,
			 int threads, struct hgc_tmpl_bind *b);

/* tmpl_inst.c */
/*
 * Instantiate b with the chosen environment into block: operand buffers in
 * the template's layouts (inputs packed from the views in, constants too),
 * the nest, and the write-back of the result into the view out (bias added,
 * converted to the output type) at the post-op anchor with the smallest
 * working set, or after the nest.  0, or -1 with d set.
 */
int hgc_tmpl_instantiate(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			 const struct hgc_tmpl_bind *b, const struct hgc_tmpl_env *chosen,
			 struct hgc_lower_view *const *in, const struct hgc_lower_view *out,
			 struct hgc_tmpl_inst *inst, struct hgc_diag *d);
/* Remove the blocks of the anchors nothing was inserted into (fused ops go
   into inst->points[i].block before this), then free what inst keeps. */
void hgc_tmpl_inst_release(struct hgc_tmpl_inst *inst);

/* tmpl_lower.c: the lowering hook */
/* What the hook needs: set as hgc_lower_opts.user. */
struct hgc_tmpl_opts {
	int threads;			/* 0: omp_get_max_threads() */
	int nrules;			/* the config's use and pin entries */
	const struct hgc_tmpl_rule *rules;
	bool off;			/* never use templates (naive loops everywhere) */
	struct hgc_vec log;		/* char *: one line per tunable op (malloc'ed) */
};
void hgc_tmpl_opts_init(struct hgc_tmpl_opts *o);
void hgc_tmpl_opts_release(struct hgc_tmpl_opts *o);
/* hgc_lower_opts.lower_tunable: instantiate the template the config or the
   default picks; 0 (naive loops, the reason logged) when none applies. */
int hgc_tmpl_lower_tunable(struct hgc_lower_ctx *cx, const struct hgc_op *op,
			   struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
			   struct hgc_lower_view *out, struct hgc_diag *d);
/* Why no template takes op (the reason the hook logs with "naive loops"), into
   why (n bytes): for a fused op that falls back to naive loops. */
void hgc_tmpl_why_naive(struct hgc_tmpl_opts *o, const struct hgc_op *op, char *why, size_t n);
/* How such a log line starts (T, OP): tools/backend.c finds the rule it quotes. */
#define HGC_TMPL_USE_WARNING "warning: use %s for %s: "
/* Log "warning: use T for OP: it does not serve ..." when a config's `use` rule sent op
   to the naive loops (why: the reason); nothing without such a rule. */
void hgc_tmpl_warn_use(struct hgc_tmpl_opts *o, const struct hgc_op *op, const char *why);
/* Check use and pin rules against the registry (names, op kinds, parameters,
   values); -1 with d set at the rule. */
int hgc_tmpl_check_rules(const struct hgc_tmpl_rule *r, int n, struct hgc_diag *d);
/* The pins of template t among o's (checked) rules, at most cap, into pins; their count. */
int hgc_tmpl_pins_of(const struct hgc_tmpl_opts *o, const struct hgc_tmpl *t,
		     struct hgc_tmpl_pin *pins, int cap);
/* The template a `use` rule of o names for op, or NULL. */
const struct hgc_tmpl *hgc_tmpl_used(const struct hgc_tmpl_opts *o, const struct hgc_op *op);
/* hgc_lower_graph with templates for the tunable ops. */
struct hgc_tir_module *hgc_tmpl_lower_graph(const struct hgc_graph *g, struct hgc_tmpl_opts *o,
					    struct hgc_diag *d);

/* tmpl.c: the order templates are tried in */
#define HGC_TMPL_RANK_MAX 64	/* templates one ranking holds at most */

/* A template in a ranking, with the estimate of its best candidate. */
struct hgc_tmpl_rank {
	const struct hgc_tmpl *t;
	double cost_ns;			/* the search's cheapest; HUGE_VAL: not ranked */
	bool applies;			/* it binds and has a valid candidate (pins fixed) */
};
/*
 * The templates to try for op, in order, into r (at most cap); their count.
 * A `use` rule of o: that template alone.  Else every registered template
 * for op's kind: the ones o pins first, then the 2-D forms, then the
 * batched ones; within each group, for a MatMul, the ones that apply and
 * that the cost model knows first, cheapest estimate first (registry order
 * among equals), then the others in registry order.  Other kinds keep
 * registry order within the groups.
 */
int hgc_tmpl_rank(const struct hgc_tmpl_opts *o, const struct hgc_op *op, int threads,
		  struct hgc_tmpl_rank *r, int cap);
/* Print a ranking of several templates: the comparison the choice came from. */
void hgc_tmpl_rank_print(FILE *f, const struct hgc_tmpl_rank *r, int n);

#endif
