/*
 * dsl_int.h: the front end's insides, shared by the lexer (lexer.re), the
 * grammar (grammar.y), the parse driver, the checks and the template
 * compiler to come.  Tokens point into the source buffer; every AST node
 * lives in the program's arena.
 */
#ifndef HGC_DSL_INT_H
#define HGC_DSL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dsl.h"

/* A token: a slice of the source buffer and where it starts (1-based). */
struct hgc_tok {
	const char *z;	/* first byte in the source (strings: the opening quote) */
	int n;		/* length in bytes */
	int line, col;
};

/*
 * Punctuation and literal tokens: X(HGC_TK_ suffix, spelling for messages).
 * The Lemon grammar defines the codes; parse.c builds the name table from
 * this list and HGC_DSL_KEYWORDS, so a token missing from grammar.y fails to
 * compile.  ORDER: none needed.
 */
#define HGC_DSL_PUNCT(X)                                         \
	X(ID, "identifier") X(INT, "integer") X(FLOAT, "number") \
	X(STRING, "string")                                      \
	X(LBRACE, "{") X(RBRACE, "}") X(LP, "(") X(RP, ")")      \
	X(LB, "[") X(RB, "]") X(COMMA, ",") X(SEMI, ";")         \
	X(COLON, ":") X(ASSIGN, "=") X(DOT, ".") X(DOTDOT, "..") \
	X(ARROW, "->") X(PLUS, "+") X(MINUS, "-") X(STAR, "*")   \
	X(SLASH, "/") X(PERCENT, "%") X(EQ, "==") X(NE, "!=")    \
	X(LT, "<") X(LE, "<=") X(GT, ">") X(GE, ">=")            \
	X(ANDAND, "&&") X(OROR, "||") X(NOT, "!")

/*
 * Keywords: X(HGC_TK_ suffix, spelling).  Every keyword but true/false falls
 * back to an identifier where a keyword cannot stand (grammar.y %fallback),
 * so `arange(step = 1)` or a tensor called `range` still parse.
 */
#define HGC_DSL_KEYWORDS(X)                                                  \
	/* top level */                                                      \
	X(INCLUDE, "include") X(SPEC, "spec") X(CONFIG, "config")            \
	X(TEMPLATE, "template")                                              \
	/* specs */                                                          \
	X(INPUT, "input") X(CONST, "const") X(OUTPUT, "output")              \
	X(EXPECT, "expect") X(ERROR, "error") X(BENCH, "bench")              \
	X(GRAPH, "graph") X(TRUE, "true") X(FALSE, "false")                  \
	/* configs */                                                        \
	X(USE, "use") X(PIN, "pin") X(PASS, "pass")                          \
	/* templates */                                                      \
	X(FOR, "for") X(PARAM, "param") X(LET, "let") X(LAYOUT, "layout")    \
	X(TENSOR, "tensor") X(PARALLEL, "parallel") X(ANCHOR, "anchor")      \
	X(COST, "cost") X(STEP, "step") X(IN, "in") X(PACKED, "packed")      \
	X(IF, "if") X(ELSE, "else") X(ONE_OF, "one_of") X(RANGE, "range")    \
	X(DIVIDES, "divides") X(MULTIPLE_OF, "multiple_of")                  \
	X(DIVISOR_OF, "divisor_of") X(GRID, "grid")

/*
 * AST node kinds: X(HGC_AST_ suffix).  Children by role (a, b, c, d, each
 * possibly the head of a list chained through next):
 *   INCLUDE     tok = the path string
 *   SPEC        tok = name; a = statements
 *   CONFIG      tok = name; a = statements (SETTING, USE, PIN, PASS)
 *   TEMPLATE    tok = name; a = op (NAME); b = operands; c = results; d = body
 *   INPUT/CONST tok = name; a = TYPE; b = generator or NULL
 *   OP          tok = result name; a = dtype NAME or NULL; b = CALL
 *   OUTPUT      a = NAMEs
 *   USE_CONFIG  tok = config name
 *   EXPECT      a = NAMED (tolerances)
 *   GOLDEN      tok = output name; a = generator
 *   EXPECT_ERROR tok = the text (STRING token)
 *   BENCH       a = NAMED
 *   GRAPH       a = statements
 *   TYPE        tok = dtype; a = dims (INT or expressions)
 *   CALL        tok = callee; a = arguments (values, expressions or NAMED)
 *   NAMED       tok = name; a = value or expression (lets, kv pairs, args)
 *   INT FLOAT STRING BOOL NAME   tok = the literal; neg = written with '-'
 *   LIST        a = elements
 *   SETTING     tok = key; a = value
 *   USE         tok = template; a = op NAME
 *   PIN         tok = template; a = parameter NAME; b = value
 *   PASS        tok = pass; a = value
 *   OPERAND     tok = name; a = dtype NAME or NULL; b = dims
 *   PARAM       a = NAMEs; b = CONSTRAINTs or boolean expressions
 *   CONSTRAINT  tok = keyword, op = its token code; a = arguments
 *   LET         a = NAMED
 *   LAYOUT      tok = tensor; a = dims; b = PACKED or NULL
 *   PACKED      a = arguments (may be empty)
 *   TENSOR      tok = name; a = TYPE
 *   PARALLEL    a = ITERs; b = body
 *   FOR         a = ITER; b = body
 *   ITER        tok = variable; a = lo; b = hi; c = step or NULL (also a call
 *               argument: the batch of brgemm)
 *   ANCHOR      tok = name; a = slice it exposes; b = target slice or NULL
 *   COST        tok = anchor; a = NAMED
 *   IF          a = condition; b = then body; c = else body
 *   ASSIGN      a = NAME or INDEX; b = value
 *   EVAL        a = CALL (a call statement)
 *   UNARY       tok = operator, op = its token code; a = operand
 *   BINARY      tok = operator, op = its token code; a, b = operands
 *   INDEX       tok = tensor; a = SLICEs
 *   SLICE       a = start or index (NULL for ':'); b = length or NULL; c = step or
 *               NULL; op = 1 if ':' given
 */
#define HGC_AST_LIST(X)                                                         \
	X(INCLUDE) X(SPEC) X(CONFIG) X(TEMPLATE) X(INPUT) X(CONST) X(OP)        \
	X(OUTPUT) X(USE_CONFIG) X(EXPECT) X(GOLDEN) X(EXPECT_ERROR) X(BENCH)    \
	X(GRAPH) X(TYPE) X(CALL) X(NAMED) X(INT) X(FLOAT) X(STRING) X(BOOL)     \
	X(NAME) X(LIST) X(SETTING) X(USE) X(PIN) X(PASS) X(OPERAND) X(PARAM)    \
	X(CONSTRAINT) X(LET) X(LAYOUT) X(PACKED) X(TENSOR) X(PARALLEL) X(FOR)   \
	X(ITER) X(ANCHOR) X(COST) X(IF) X(ASSIGN) X(EVAL) X(UNARY) X(BINARY)    \
	X(INDEX) X(SLICE)

enum hgc_ast_kind {
#define X(k) HGC_AST_##k,
	HGC_AST_LIST(X)
#undef X
	HGC_AST_COUNT
};

struct hgc_tsym;

/* One AST node; see HGC_AST_LIST for what each child means. */
struct hgc_ast {
	enum hgc_ast_kind kind;
	struct hgc_tok tok;		/* name, literal or operator */
	struct hgc_loc loc;		/* where the construct starts */
	int op;				/* token code of an operator or constraint */
	bool neg;			/* a literal written with a leading '-' */
	struct hgc_ast *a, *b, *c, *d;	/* children (list heads) */
	struct hgc_ast *next;		/* next sibling in a list */
	int height;			/* levels of nodes below and including this one */
	/* template checker annotations (dsl/template*.c) */
	struct hgc_tsym *sym;		/* the symbol a name refers to or a statement defines */
	uint8_t ty;			/* type of an expression (enum hgc_tty) */
	bool dyn;			/* an expression that depends on a loop variable */
};

/* A list under construction: the grammar appends at the tail. */
struct hgc_ast_list {
	struct hgc_ast *head, *tail;
};

/* The lexer's state over one NUL-terminated source buffer. */
struct hgc_lexer {
	const unsigned char *cur, *lim, *mar;	/* re2c cursor, limit (the NUL), marker */
	const unsigned char *tok;		/* start of the current token */
	const unsigned char *bol;		/* start of the current line */
	int line;				/* 1-based line of cur */
	int cond;				/* re2c condition */
	const char *file;			/* for messages */
	struct hgc_diag *d;
};

/* What the grammar's actions need: the arena, the file and the result. */
struct hgc_parse {
	struct hgc_arena *arena;
	struct hgc_diag *d;
	const char *file;
	struct hgc_ast_list items;	/* the top-level blocks */
	bool failed;			/* a syntax error was reported: stop */
	struct hgc_tok last;		/* the last token read (for end-of-input errors) */
};

/* A hash table from names (text not owned: tokens or arena strings) to ints. */
struct hgc_names {
	struct hgc_name_slot {
		const char *z;	/* NULL: empty slot */
		int n;
		int val;
	} *slots;
	size_t cap, len;	/* cap is 0 or a power of two */
};

/* A file on the include stack of the load in progress. */
struct hgc_include {
	const char *key;		/* canonical path */
	const char *name;		/* as written, for messages */
	struct hgc_include *up;		/* the file that included it */
};

/* A spec's `config NAME;`, resolved once the whole load is done. */
struct hgc_config_ref {
	struct hgc_spec *spec;
	struct hgc_loc loc;		/* of NAME */
};

/* The state of one hgc_program_load call, shared by the checks. */
struct hgc_load {
	struct hgc_program *p;
	struct hgc_diag *d;		/* where errors go (a negative spec swaps it) */
	struct hgc_vec spec_locs;	/* const struct hgc_loc *: where each spec name was defined */
	struct hgc_vec config_refs;	/* struct hgc_config_ref */
	struct hgc_names spec_names;	/* every spec name seen -> index in spec_locs */
	struct hgc_names config_names;	/* every config name of the program -> index in p->configs */
	struct hgc_include *stack;	/* the files being loaded, innermost first */
	int depth;
	size_t first_spec;		/* p->specs[first_spec..] are this load's */
	struct hgc_vec *templates;	/* NULL, or where checked templates go
					   (struct hgc_tmpl_sem *, dsl/template.h) */
};

/* lexer.re */
void hgc_dsl_lex_init(struct hgc_lexer *lx, const char *file, const char *src, size_t len,
		      struct hgc_diag *d);
/* The next token's code (0 at the end), or -1 after reporting a lexical error. */
int hgc_dsl_lex(struct hgc_lexer *lx, struct hgc_tok *t);
/* The keyword's token code, or 0 if s[0..n) is no keyword. */
int hgc_dsl_keyword(const char *s, size_t n);

/* grammar.c (generated by Lemon from grammar.y) */
void *hgc_dsl_parserAlloc(void *(*alloc)(size_t), struct hgc_parse *ps);
void hgc_dsl_parser(void *parser, int code, struct hgc_tok tok);
void hgc_dsl_parserFree(void *parser, void (*release)(void *));

/* parse.c */
const char *hgc_dsl_token_name(int code);
/* Parse a whole NUL-terminated buffer into top-level blocks; NULL list and -1 on error. */
int hgc_dsl_parse(struct hgc_arena *arena, const char *file, const char *src, size_t len,
		  struct hgc_diag *d, struct hgc_ast **items);
struct hgc_ast *hgc_dsl_node(struct hgc_parse *ps, enum hgc_ast_kind kind,
			     const struct hgc_tok *tok);
struct hgc_ast *hgc_dsl_node2(struct hgc_parse *ps, enum hgc_ast_kind kind,
			      const struct hgc_tok *tok, struct hgc_ast *a, struct hgc_ast *b);
void hgc_dsl_list_add(struct hgc_ast_list *l, struct hgc_ast *n);
struct hgc_ast_list hgc_dsl_list1(struct hgc_ast *n);
void hgc_dsl_syntax_error(struct hgc_parse *ps, int code, const struct hgc_tok *tok);
void hgc_dsl_stack_overflow(struct hgc_parse *ps);
/* The text of a STRING token without quotes, escapes resolved, in arena. */
char *hgc_dsl_unquote(struct hgc_arena *arena, const struct hgc_tok *t);
char *hgc_dsl_tok_str(struct hgc_arena *arena, const struct hgc_tok *t);
bool hgc_dsl_tok_is(const struct hgc_tok *t, const char *s);
/* Closest of names[0..n) to s (case-insensitive edit distance), or NULL if none is close. */
const char *hgc_dsl_suggest(const char *s, size_t len, const char *const *names, int n);

/* load.c */
/* Report an error (with the caret from loc's file) into ld->d; returns -1. */
int hgc_dsl_error(struct hgc_load *ld, const struct hgc_loc *loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void hgc_dsl_note(struct hgc_load *ld, const struct hgc_loc *loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Point ld->d's caret source at file (as named in locations). */
void hgc_dsl_use_source(struct hgc_load *ld, const char *file);
/* dir(base) joined with path (path unchanged when absolute or base has no dir). */
char *hgc_dsl_relative(struct hgc_arena *arena, const char *base, const char *path);

/* value.c: literal values of the AST. */
/* An integer value; -1 with "WHAT must be an integer" (or out of range) reported. */
int hgc_dsl_int(struct hgc_load *ld, const struct hgc_ast *v, const char *what, int64_t *out);
/* A number (integer or float); -1 with "WHAT must be a number" reported. */
int hgc_dsl_num(struct hgc_load *ld, const struct hgc_ast *v, const char *what, double *out);
/* A bare name or a string as text, or NULL (nothing reported). */
const char *hgc_dsl_word(struct hgc_load *ld, const struct hgc_ast *v);
/* Report "unknown WHAT 's'[; did you mean 'y'?]" at loc, y the closest of names. */
int hgc_dsl_unknown(struct hgc_load *ld, const struct hgc_loc *loc, const char *what,
		    const char *s, size_t len, const char *const *names, int n);
/* names.c */
void hgc_dsl_names_init(struct hgc_names *t);
void hgc_dsl_names_release(struct hgc_names *t);
/* The value stored under z[0..n), or -1 if absent. */
int hgc_dsl_names_get(const struct hgc_names *t, const char *z, int n);
/* Store val under z[0..n) (replacing any value); z must outlive the table. */
void hgc_dsl_names_put(struct hgc_names *t, const char *z, int n, int val);

/* config.c */
void hgc_dsl_check_config(struct hgc_load *ld, const struct hgc_ast *blk);

/* template.c */
/* Check a template block; with ld->templates set, keep its checked form there. */
void hgc_dsl_check_template(struct hgc_load *ld, const struct hgc_ast *blk);

/* spec.c */
void hgc_dsl_check_spec(struct hgc_load *ld, const struct hgc_ast *blk);

/* gen.c */
/* Hash of spec and tensor names: the default seed of a generator. */
uint64_t hgc_dsl_seed(const char *spec, const char *tensor);
/*
 * Check generator g for a tensor of dtype dt with nelems elements and fill
 * out (seed is the default seed); -1 after reporting every problem.
 */
int hgc_dsl_gen(struct hgc_load *ld, const struct hgc_ast *g, enum hgc_dtype dt,
		int64_t nelems, uint64_t seed, struct hgc_gen *out);
/* The default generator of an input: uniform(-1, 1), or randint() for integers. */
void hgc_dsl_gen_default(enum hgc_dtype dt, uint64_t seed, const struct hgc_loc *loc,
			 struct hgc_gen *out);

#endif
