/*
 * passes_int.h: what the TIR passes share: affine forms of index
 * expressions (immutable lets substituted, loop ranges known) and one scan
 * of a function that numbers its statements and lists every tensor access
 * with its enclosing loops.
 */
#ifndef HGC_TIR_PASSES_INT_H
#define HGC_TIR_PASSES_INT_H

#include "tir_passes.h"

/* c0 + sum c * var over at most HGC_TP_AFF_MAX variables. */
#define HGC_TP_AFF_MAX 16
struct hgc_tp_aff {
	bool ok;
	int n;
	int64_t c0;
	struct {
		struct hgc_tir_var *var;
		int64_t c;
	} t[HGC_TP_AFF_MAX];
};

/* Per-variable facts of one function (arrays by var id, malloc'ed). */
struct hgc_tp_vars {
	int n;
	const struct hgc_tir_expr **let;	/* value of an immutable let, or NULL */
	bool *known;			/* a loop variable with constant bounds */
	int64_t *lo, *hi, *step;	/* its first and last value, its step */
	/* A loop variable over [base, base + span), step 1, base not constant (a
	   brgemm's batch loop, k in ks..ks + BS): base, or NULL; and span. */
	const struct hgc_tir_expr **rel_base;
	int64_t *rel_span;
};

/* A loop (FOR or PFOR) of the scanned function. */
struct hgc_tp_loop {
	struct hgc_tir_stmt *s;
	int start, end;		/* positions of its first and last statement */
	int parent;		/* enclosing loop, or -1 */
};

/* Kinds of tensor accesses. */
enum { HGC_TP_LOAD, HGC_TP_STORE, HGC_TP_ADDR };

/* One load, store or slice address. */
struct hgc_tp_access {
	struct hgc_tir_tensor *t;
	int kind;
	int n;
	struct hgc_tir_expr **idx;
	const int64_t *ext;		/* ADDR extents, else NULL */
	struct hgc_tir_stmt *s;		/* the statement it is in */
	int pos;			/* that statement's position */
	int loop;			/* innermost enclosing loop, or -1 */
	struct hgc_tir_tensor *into;	/* an ADDR stored as a value into this tensor */
	bool escapes;			/* an ADDR kept in a scalar (let or assign) */
};

/* Where a local tensor is defined. */
struct hgc_tp_def {
	struct hgc_tir_stmt *s;		/* the TENSOR statement, or NULL */
	struct hgc_tir_stmt *block;	/* the block holding it */
	int pos, loop;
};

/* A scanned function. */
struct hgc_tp_scan {
	struct hgc_tir_func *f;
	struct hgc_vec loops;		/* struct hgc_tp_loop */
	struct hgc_vec acc;		/* struct hgc_tp_access */
	struct hgc_tp_def *defs;	/* by tensor id */
	int npos;			/* statements numbered */
};

/* analysis.c */
void hgc_tp_vars_init(struct hgc_tp_vars *v, struct hgc_tir_module *m, struct hgc_tir_func *f);
void hgc_tp_vars_release(struct hgc_tp_vars *v);
/* A rewrite of one block's statements (its inner blocks done): the changes made. */
typedef int hgc_tp_block_fn(struct hgc_tir_module *m, const struct hgc_tp_vars *v,
			    struct hgc_tir_stmt *block);
/* fn on every block of every function of m, inner blocks first, with the function's
   variable facts (taken before any rewrite); the sum of what fn returned. */
int hgc_tp_each_block(struct hgc_tir_module *m, hgc_tp_block_fn *fn);
/* e in affine form; ok false when it is not affine (or too long). */
struct hgc_tp_aff hgc_tp_affine(const struct hgc_tp_vars *v, const struct hgc_tir_expr *e);
/* a += c * b, term by term; false when b is not affine, on overflow or too many terms. */
bool hgc_tp_aff_add(struct hgc_tp_aff *a, const struct hgc_tp_aff *b, int64_t c);
/* The coefficient of var in a (0 when absent). */
int64_t hgc_tp_aff_coef(const struct hgc_tp_aff *a, const struct hgc_tir_var *var);
/* Structural equality of two expressions (same variables, tensors, constants). */
bool hgc_tp_expr_eq(const struct hgc_tir_expr *a, const struct hgc_tir_expr *b);
/* The same with b's variables from[k] read as to[k] (b a renamed copy of a's loop). */
bool hgc_tp_expr_eq_renamed(const struct hgc_tir_expr *a, const struct hgc_tir_expr *b,
			    struct hgc_tir_var *const *from, struct hgc_tir_var *const *to, int n);
/* The variable var stands for after a renaming: to[k] for from[k], else var itself. */
const struct hgc_tir_var *hgc_tp_renamed(const struct hgc_tir_var *var,
					 struct hgc_tir_var *const *from,
					 struct hgc_tir_var *const *to, int n);
/* Whether e is arithmetic only: no load, address, call or intrinsic (NULL: yes). */
bool hgc_tp_pure(const struct hgc_tir_expr *e);
/*
 * Whether distinct values of the variables vars (loops whose ranges are in
 * v) select disjoint slices: dim d of the slice is base[d] + [0, width[d]),
 * base[d] affine (terms over other variables are fixed).  Per dim, the
 * variables' coefficients must nest (mixed radix), and every variable that
 * takes more than one value must appear in some dim.
 */
bool hgc_tp_disjoint(const struct hgc_tp_vars *v, int ndims, const struct hgc_tp_aff *base,
		     const int64_t *width, struct hgc_tir_var *const *vars, int nvars);
/* The variables of loop s (FOR or PFOR) into vars; their count. */
int hgc_tp_loop_vars(struct hgc_tir_stmt *s, struct hgc_tir_var **vars, int cap);
/* inner[var id]: a variable of a loop strictly inside loop l. */
void hgc_tp_mark_inner(const struct hgc_tp_scan *sc, int l, bool *inner, int nvars);
/* An index split into its part over variables not inner (*fixed, no constant) and the
   range [lo, hi] of the rest (ext: a slice's extent); false if not affine. */
bool hgc_tp_split(const struct hgc_tp_vars *v, const bool *inner, const struct hgc_tir_expr *e,
		  int64_t ext, struct hgc_tp_aff *fixed, int64_t *lo, int64_t *hi);
/* The same terms with the same coefficients. */
bool hgc_tp_same_terms(const struct hgc_tp_aff *a, const struct hgc_tp_aff *b);
/* The innermost loop around both loops a and b, or -1. */
int hgc_tp_common(const struct hgc_tp_scan *sc, int a, int b);
void hgc_tp_scan(struct hgc_tp_scan *sc, struct hgc_tir_module *m, struct hgc_tir_func *f);
void hgc_tp_scan_release(struct hgc_tp_scan *sc);
#define HGC_TP_ACC(sc, i) (&HGC_VEC_AT(&(sc)->acc, struct hgc_tp_access, i))
#define HGC_TP_LOOP(sc, i) (&HGC_VEC_AT(&(sc)->loops, struct hgc_tp_loop, i))
/* Whether loop l is inside (or is) loop outer. */
bool hgc_tp_loop_within(const struct hgc_tp_scan *sc, int l, int outer);
/* Whether loop l or one around it is a parallel for. */
bool hgc_tp_in_pfor(const struct hgc_tp_scan *sc, int l);
int hgc_tp_outer_pfor(const struct hgc_tp_scan *sc, int l);

/* buffer_reuse's state (reuse.c, inplace.c). */
struct rtemp {
	struct hgc_tir_tensor *t;
	bool used;		/* some access seen */
	bool bad;		/* its address escapes: not planned */
	int start, end;		/* lifetime in statement positions */
	int64_t elems, bytes;
	int buffer;		/* where it was placed */
	bool inplace;		/* took the buffer of a live input */
	int scope;		/* -1: shared by the threads; else the parallel loop whose
				   body defines it (one copy per thread) */
};

/* A shared buffer. */
struct rbuf {
	struct hgc_tir_tensor *first;	/* its first member: the element type and shape */
	int64_t elems;
	int busy_until;		/* the last position its members are live */
	int members;
	struct hgc_tir_tensor *tensor;	/* what replaces the members */
	struct rtemp *owner;	/* the member placed last */
	int scope;		/* its members' scope (struct rtemp) */
};

struct reuse {
	struct hgc_tir_module *m;
	struct hgc_tp_scan sc;
	struct hgc_tp_vars vars;
	struct rtemp *t;	/* by tensor id */
	struct rtemp **order;	/* planned temporaries by birth */
	int n;
	struct rbuf *bufs;
	int nbufs;
	bool per_thread;	/* plan the temporaries of parallel loop bodies, not the
				   shared ones */
};

/* flatten.c */
/* Flatten the local and constant tensors want accepts (NULL: every one that can be);
   returns how many. */
int hgc_tp_flatten(struct hgc_tir_module *m, bool (*want)(void *, const struct hgc_tir_tensor *),
		   void *ctx);

/* inplace.c */
/* The buffer of a live input r may overwrite elementwise, or -1. */
int hgc_tp_inplace_pick(struct reuse *ru, struct rtemp *r);

#endif
