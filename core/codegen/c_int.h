/* c_int.h: what the files of the C backend (c_*.c) share. */
#ifndef HGC_CODEGEN_C_INT_H
#define HGC_CODEGEN_C_INT_H

#include "codegen.h"

/* The state of one emission. */
struct cemit {
	FILE *out;
	const struct hgc_tir_module *m;
	const struct hgc_tir_func *f;	/* the function being emitted */
	struct hgc_diag *d;
	int nerr;
	int indent;
	int tmp;			/* counter for hoisted temporaries */
	struct hgc_vec heap;		/* const struct hgc_tir_tensor *: malloc'ed locals in scope */
};

/* c_expr.c */
int hgc_c_err(struct cemit *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The C type of values (pointers: of storage) of t; "?" after an error. */
const char *hgc_c_type(struct cemit *c, struct hgc_tir_type t, char *buf, size_t size);
/* The C type tensor elements of kind t are stored as (bool as uint8_t). */
const char *hgc_c_store_type(struct cemit *c, struct hgc_tir_type t, char *buf, size_t size);
/* Print "type name", without a space after a pointer's '*'. */
void hgc_c_decl(struct cemit *c, const char *type, const char *name);
/* Print an expression in a context of precedence prec (0: anything goes). */
void hgc_c_expr(struct cemit *c, const struct hgc_tir_expr *e, int prec);
/* Print t[idx] or &t[idx] with the indices flattened row-major. */
void hgc_c_element(struct cemit *c, const struct hgc_tir_tensor *t,
		   struct hgc_tir_expr *const *idx, int n);
/* Whether evaluating e twice gives the same value in a loop header. */
bool hgc_c_pure(const struct hgc_tir_expr *e);

/* c_stmt.c */
/* "{", the statements of b one level deeper, frees of its heap tensors, "}". */
void hgc_c_block(struct cemit *c, const struct hgc_tir_stmt *b);

#endif
