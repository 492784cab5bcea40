/*
 * template.h: the checked form of a template block, shared by the checks
 * (template.c: header, declarations and final checks; template_expr.c:
 * names, types and slices; template_stmt.c: the loop nest), the text
 * printer (template_text.c) and the template compiler (dsl/tmplc/), which
 * emits C from it.  The checks annotate the AST in place (hgc_ast.sym, .ty,
 * .dyn; an INDEX's op is its number of ranges) and collect every error.
 *
 * Symbols are static (the dims of the operands, op attributes, built-ins,
 * parameters, top-level lets: known when a template is instantiated, each
 * with a slot of struct hgc_tmpl_env) or dynamic (loop variables, lets that
 * use them: Tensor IR variables).
 */
#ifndef HGC_DSL_TEMPLATE_H
#define HGC_DSL_TEMPLATE_H

#include "core/lower/tmpl.h"
#include "dsl_int.h"

/* Types of template expressions.  ORDER: NONE first (an error was reported). */
enum hgc_tty {
	HGC_TTY_NONE,
	HGC_TTY_INT,		/* index arithmetic */
	HGC_TTY_BOOL,		/* conditions */
	HGC_TTY_ELEM,		/* tensor elements (assignments only) */
};

/* Kinds of symbols.  ORDER: the static ones first, as enum hgc_tmpl_sym_kind. */
enum hgc_tsym_kind {
	HGC_TSYM_SHAPE,
	HGC_TSYM_OPSYM,
	HGC_TSYM_BUILTIN,
	HGC_TSYM_PARAM,
	HGC_TSYM_LET,		/* a let at the top level */
	HGC_TSYM_BLET,		/* a let in the loop nest */
	HGC_TSYM_LOOP,		/* a loop, parallel loop or brgemm batch variable */
	HGC_TSYM_OPERAND,
	HGC_TSYM_TENSOR,	/* a temporary */
};

#define HGC_TSYM_IS_STATIC(k) ((k) <= HGC_TSYM_LET)

/* A name of a template. */
struct hgc_tsym {
	const char *name;
	enum hgc_tsym_kind kind;
	struct hgc_loc loc;		/* where it is defined (builtins: the template) */
	int slot;			/* static symbols: the environment slot; else -1 */
	int index;			/* OPERAND: operand index; PARAM: declaration */
	int operand, dim;		/* SHAPE: the operand dim it first names */
	uint8_t ty;			/* BLET: INT or BOOL; others INT */
	bool dyn;			/* BLET: depends on a loop variable */
	const struct hgc_ast *def;	/* LET, BLET: the expression; TENSOR: its TYPE */
	int rank;			/* OPERAND, TENSOR: physical dims */
	bool packed;			/* OPERAND: its layout is packed */
	bool input;			/* OPERAND: an input (else the result) */
	bool used;			/* OPERAND: sliced already (its layout is fixed) */
	int uid;			/* unique number, for C identifiers */
	int depth;			/* scope depth of the definition (0: top level) */
	struct hgc_tsym *next;		/* the symbol visible before it */
};

/* A parameter declaration: one name with its domain, or the names of a grid. */
struct hgc_tparam {
	int nsyms;
	struct hgc_tsym *syms[HGC_TMPL_MAX_GRID];
	const struct hgc_ast *decl;	/* the PARAM statement */
	const struct hgc_ast *domain;	/* its domain (a CONSTRAINT) */
	enum hgc_tmpl_domain kind;
	int index;
};

/* A constraint: divides/multiple_of of one parameter, a boolean expression,
   or the implicit one of a packed layout (pack_block % pack_factor == 0). */
struct hgc_tconstraint {
	const struct hgc_ast *c;	/* CONSTRAINT or expression; NULL: implicit */
	struct hgc_tsym *of;		/* divides, multiple_of: the parameter */
	int param;			/* the declaration listing it, or -1 */
	const struct hgc_ast *pack_block, *pack_factor;	/* implicit: factor NULL = kpack */
	const char *text;
	struct hgc_loc loc;
};

/* One physical dim of a declared layout. */
struct hgc_tlentry {
	enum hgc_tmpl_ldim_kind kind;	/* WHOLE, OUTER, INNER or PAD */
	int dim;			/* logical dim of the operand */
	const struct hgc_ast *e;	/* the whole entry */
	const struct hgc_ast *block;	/* OUTER, INNER: E */
	const struct hgc_ast *before, *after;	/* PAD */
};

struct hgc_tlayout {
	const struct hgc_ast *decl;
	int n;
	struct hgc_tlentry ent[HGC_TMPL_MAX_PHYS];
	bool packed;
	const struct hgc_ast *factor;	/* packed(E): E; NULL: kpack */
	int packdim;			/* the logical dim whose inner block is packed */
};

/* An anchor and its cost formulas. */
struct hgc_tanchor {
	const char *name;
	const struct hgc_ast *decl;	/* the ANCHOR statement */
	struct hgc_tsym *operand;
	bool post;
	int rank;
	const struct hgc_ast *cost[HGC_TMPL_NCOST];	/* ACCESSES may be NULL */
	const struct hgc_ast *cost_decl;	/* the COST statement, or NULL */
	int index;
};

/* A checked template. */
struct hgc_tmpl_sem {
	const char *name;
	const struct hgc_ast *blk;
	struct hgc_loc loc;
	enum hgc_op_kind op;
	int ninputs, noperands;
	struct hgc_tsym *operand[HGC_TMPL_MAX_OPERANDS];
	const struct hgc_ast *operand_ast[HGC_TMPL_MAX_OPERANDS];
	enum hgc_dtype operand_dtype[HGC_TMPL_MAX_OPERANDS];
	int canon[HGC_TMPL_MAX_OPERANDS][HGC_MAX_DIMS];	/* canonical dim ids */
	struct hgc_tlayout *layout[HGC_TMPL_MAX_OPERANDS];	/* NULL: plain */
	struct hgc_vec statics;		/* struct hgc_tsym *, by slot */
	struct hgc_vec params;		/* struct hgc_tparam * */
	struct hgc_vec steps;		/* struct hgc_tmpl_step: params and lets in order */
	struct hgc_vec constraints;	/* struct hgc_tconstraint * */
	struct hgc_vec anchors;		/* struct hgc_tanchor * */
	int nuid;			/* symbols numbered so far */
	int nerr;			/* errors found in this template */
};

#define HGC_TSEM_STATIC(s, i) HGC_VEC_AT(&(s)->statics, struct hgc_tsym *, i)
#define HGC_TSEM_PARAM(s, i) HGC_VEC_AT(&(s)->params, struct hgc_tparam *, i)
#define HGC_TSEM_CONSTRAINT(s, i) HGC_VEC_AT(&(s)->constraints, struct hgc_tconstraint *, i)
#define HGC_TSEM_ANCHOR(s, i) HGC_VEC_AT(&(s)->anchors, struct hgc_tanchor *, i)

/* The state of checking one template. */
struct hgc_tck {
	struct hgc_load *ld;
	struct hgc_tmpl_sem *s;
	struct hgc_arena *arena;
	struct hgc_tsym *scope;		/* visible symbols, innermost first */
	int depth;			/* scope depth */
	int par;			/* parallel loops around */
	struct hgc_vec costs;		/* const struct hgc_ast *: COST statements */
	struct hgc_vec later;		/* const struct hgc_ast *: every top-level name's
					   defining node, for "used before its definition" */
};

/* template.c */
/* Release a checked template's vectors (its nodes live in the program's arena). */
void hgc_tsem_free(struct hgc_tmpl_sem *s);
/* Report an error at loc (counted in the template); returns HGC_TTY_NONE (0). */
int hgc_tck_error(struct hgc_tck *c, const struct hgc_loc *loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void hgc_tck_note(struct hgc_tck *c, const struct hgc_loc *loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* template_expr.c */
/* A new symbol (not yet visible); NULL after reporting a redefinition. */
struct hgc_tsym *hgc_tck_sym(struct hgc_tck *c, const struct hgc_tok *name,
			     const struct hgc_loc *loc, enum hgc_tsym_kind kind);
/* Make s visible in the current scope. */
void hgc_tck_define(struct hgc_tck *c, struct hgc_tsym *s);
/* The visible symbol called name[0..n), or NULL. */
struct hgc_tsym *hgc_tck_lookup(struct hgc_tck *c, const char *name, int n);
/* Enter and leave a scope (leaving drops what it defined). */
struct hgc_tsym *hgc_tck_enter(struct hgc_tck *c);
void hgc_tck_leave(struct hgc_tck *c, struct hgc_tsym *mark);
/*
 * Check an expression; its type (HGC_TTY_NONE after reporting an error).
 * rank < 0: an index or boolean expression; rank >= 0: the value of an
 * elementwise assignment of that rank (tensor elements and slices allowed).
 */
int hgc_tck_expr(struct hgc_tck *c, struct hgc_ast *e, int rank);
/* Check e and require type ty (what names it in the message); static: no
   loop variables.  0, or -1 after reporting. */
int hgc_tck_want(struct hgc_tck *c, struct hgc_ast *e, int ty, bool need_static,
		 const char *what);
/* Check a slice T[...]: the tensor, one index per physical dim, static
   lengths; its number of ranges, or -1 after reporting. */
int hgc_tck_slice(struct hgc_tck *c, struct hgc_ast *ix);
/* The leftmost source location of an expression. */
struct hgc_loc hgc_tsem_loc(const struct hgc_ast *e);

/* template_stmt.c */
/* Check a list of statements of the loop nest (top: the template's body). */
void hgc_tck_stmts(struct hgc_tck *c, struct hgc_ast *list, bool top);
/* template.c: the top-level declarations the statement checker hands over */
void hgc_tck_param(struct hgc_tck *c, struct hgc_ast *p);
void hgc_tck_layout(struct hgc_tck *c, struct hgc_ast *l);

/* template_text.c */
/* The canonical text of an expression, constraint or slice, in arena. */
char *hgc_tsem_text(struct hgc_arena *a, const struct hgc_ast *e);
/* Evaluate a static expression with no names but sym (= val); false if it
   has others or divides by zero. */
bool hgc_tsem_eval(const struct hgc_ast *e, const struct hgc_tsym *sym, int64_t val,
		   int64_t *out);
/* Whether two expressions are the same text. */
bool hgc_tsem_same(const struct hgc_ast *a, const struct hgc_ast *b);

/* load.c */
/* Load path for the template compiler: checked templates go to out
   (struct hgc_tmpl_sem *); -1 with every error in d. */
int hgc_dsl_load_templates(struct hgc_program *p, const char *path, struct hgc_vec *out,
			   struct hgc_diag *d);

#endif
