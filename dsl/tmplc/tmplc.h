/*
 * tmplc.h: the template compiler (build/hgc-tmplc): checked templates
 * (dsl/template.h) to C that defines a `const struct hgc_tmpl` per template
 * (core/lower/tmpl.h), and the registry of all of them.  main.c drives it;
 * emit.c writes the tables and the static functions (domains, lets,
 * constraints, layouts, costs); emit_build.c the build function; emit_expr.c
 * the expressions in their three forms: static int64 C, Tensor IR builders,
 * and tensor-element values.
 */
#ifndef HGC_TMPLC_H
#define HGC_TMPLC_H

#include <stdio.h>

#include "dsl/template.h"

/* The state of emitting one file. */
struct em {
	FILE *out;
	const struct hgc_tmpl_sem *s;	/* the template being emitted */
	const char *pfx;		/* prefix of its static names: "t_NAME_" */
	struct hgc_arena *arena;
	int n;				/* counter for C names */
	int indent;			/* tabs of the current line */
	const struct hgc_ast *slice_node[64];	/* the INDEX nodes of the current assignment */
	int slice_id[64];		/* and the numbers of their slices (sl<n>) */
	int nslices;
};

/* emit_expr.c */
/* Print a line at the current indentation. */
void em_line(struct em *em, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print a C string literal of s. */
void em_str(struct em *em, const char *s);
/* A static expression as an int64_t C expression over the environment `e`. */
void em_sx(struct em *em, const struct hgc_ast *x);
/* An expression as a C expression building its Tensor IR (struct hgc_tir_expr *). */
void em_dx(struct em *em, const struct hgc_ast *x);
/* A tensor-element value inside the elementwise nest `w` (slices already built). */
void em_ex(struct em *em, const struct hgc_ast *x, const char *w);
/* The number n of the slice sl<n> built for an INDEX node of the current assignment. */
int em_slice_of(struct em *em, const struct hgc_ast *ix);
/* "HGC_TMPL_LOC(file_, line, col)" for a node. */
void em_loc(struct em *em, const struct hgc_loc *loc);
/* The C name of a dynamic or build-local symbol: x<uid> (variables), l<uid>
   (static lets of the nest), t<uid> (tensors). */
void em_sym(struct em *em, const struct hgc_tsym *s);

/* emit.c */
/* Emit one template: tables, functions and the struct hgc_tmpl. */
void em_template(struct em *em);

/* emit_build.c */
/* Emit the build function of the template. */
void em_build(struct em *em);

#endif
