/* tir_int.h: helpers shared by the files of core/tir only. */
#ifndef HGC_TIR_INT_H
#define HGC_TIR_INT_H

#include "tir.h"

/* tir.c */
/* A unique, C-safe name made from want (arena-owned). */
const char *hgc_tir_unique_name(struct hgc_tir_module *m, const char *want);

/* expr.c */
/* A new expression node with n operand slots (zeroed). */
struct hgc_tir_expr *hgc_tir_expr_alloc(struct hgc_tir_module *m, enum hgc_tir_expr_kind kind,
					struct hgc_tir_type type, int n);

/* stmt.c */
/* A new statement node of the given kind. */
struct hgc_tir_stmt *hgc_tir_stmt_alloc(struct hgc_tir_module *m, enum hgc_tir_stmt_kind kind);

/* verify.c, verify_expr.c: the verifier's state */
enum { UNDEFINED, IN_SCOPE, OUT_OF_SCOPE };

/* A static interval of an index variable (a loop with constant bounds). */
struct vrange {
	bool known;
	int64_t lo, hi;
};

/* An affine form c0 + sum c[i] * var[i] over loop variables with known ranges. */
#define HGC_TIR_AFF_MAX 8
struct vaffine {
	bool ok;
	int n;
	int64_t c0;
	struct {
		int var;	/* variable id */
		int64_t c;
	} t[HGC_TIR_AFF_MAX];
};

struct vctx {
	const struct hgc_tir_module *m;
	const struct hgc_tir_func *f;	/* the function being checked */
	struct hgc_diag *d;
	int nerr;
	const struct hgc_loc *loc;	/* of the innermost statement with one */
	char *var_state;		/* per var id: UNDEFINED, IN_SCOPE ... */
	int *var_pfor;			/* per var id: parallel-for depth of its definition */
	struct vrange *ranges;		/* per var id: static range of a loop variable */
	struct vaffine *lets;		/* per var id: affine value of an immutable let */
	char *tensor_state;		/* per tensor id */
	struct hgc_vec undo;		/* int: var id, or -1 - tensor id, defined in open scopes */
	int pfor_depth;
	int guard;			/* > 0 under an if or in a select branch */
};

int hgc_tir_verr(struct vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool hgc_tir_vuse_var(struct vctx *v, const struct hgc_tir_var *var);
bool hgc_tir_vuse_tensor(struct vctx *v, const struct hgc_tir_tensor *t);
/* Check an expression; false when it is ill-formed (its type is not to be trusted). */
bool hgc_tir_vexpr(struct vctx *v, const struct hgc_tir_expr *e);
/* Check the indices of t (count, types, static bounds; extents for slices). */
void hgc_tir_vindices(struct vctx *v, const struct hgc_tir_tensor *t,
		      struct hgc_tir_expr *const *idx, int n, const int64_t *extents);
/* Remember the affine value of an immutable let for bounds checks. */
void hgc_tir_vlet(struct vctx *v, const struct hgc_tir_var *var, const struct hgc_tir_expr *e);

#endif
