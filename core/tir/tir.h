/*
 * tir.h: the Tensor IR.  A module holds functions, module-level constant
 * buffers and the variables and tensors they use, all in one arena.  Functions
 * are trees of statements over expressions; tensors stay N-dimensional until a
 * pass flattens them; microkernels are intrinsics.  The IR knows no DNN ops
 * and no backend.  See docs/tir.md.
 */
#ifndef HGC_TIR_H
#define HGC_TIR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../util/util.h"

/* Scalar kinds: X(enum suffix, printed name, size in bytes).  ORDER: VOID first. */
#define HGC_TIR_KIND_LIST(X)      \
	X(VOID, "void", 0)        \
	X(BOOL, "bool", 1)        \
	X(S8, "s8", 1)            \
	X(U8, "u8", 1)            \
	X(S32, "s32", 4)          \
	X(INDEX, "index", 8)      \
	X(BF16, "bf16", 2)        \
	X(F32, "f32", 4)

enum hgc_tir_kind {
#define X(e, n, s) HGC_TIR_##e,
	HGC_TIR_KIND_LIST(X)
#undef X
	HGC_TIR_KIND_COUNT
};

/*
 * A value type: a scalar kind, a pointer depth (ptr 1 is a pointer to kind,
 * ptr 2 a pointer to such pointers; {VOID, 1} is an untyped pointer) and a
 * vector lane count (1 for scalars; for the vectorizer).
 */
struct hgc_tir_type {
	uint8_t kind;		/* enum hgc_tir_kind */
	uint8_t ptr;		/* pointer depth, 0 for a value */
	uint16_t lanes;		/* vector lanes, 1 by default */
};

/* Binary operators: X(enum suffix, spelling, precedence; 0 prints as a call). */
#define HGC_TIR_BINOP_LIST(X) \
	X(ADD, "+", 5)        \
	X(SUB, "-", 5)        \
	X(MUL, "*", 6)        \
	X(DIV, "/", 6)        \
	X(MOD, "%", 6)        \
	X(MIN, "min", 0)      \
	X(MAX, "max", 0)      \
	X(EQ, "==", 3)        \
	X(NE, "!=", 3)        \
	X(LT, "<", 4)         \
	X(LE, "<=", 4)        \
	X(GT, ">", 4)         \
	X(GE, ">=", 4)        \
	X(AND, "&&", 2)       \
	X(OR, "||", 1)

enum hgc_tir_binop {
#define X(e, s, p) HGC_TIR_##e,
	HGC_TIR_BINOP_LIST(X)
#undef X
	HGC_TIR_BINOP_COUNT
};

enum hgc_tir_unop {
	HGC_TIR_NEG,		/* -x on numbers */
	HGC_TIR_NOT,		/* !x on bool */
};

/*
 * Intrinsics: X(enum suffix, name, argument count).  brgemm takes arrays of
 * A and B block addresses; brgemm_strd one base each and element strides;
 * both end with "accumulate" (false: C is overwritten).  brgemm_post is an
 * f32 brgemm followed by two more: a bias pointer (N floats added to C's
 * columns once its sums are complete) and a bool "relu" (then max(x, 0)):
 * the fold_post pass makes it from a brgemm and the loop nest after it.
 * brgemm_q is a u8 x s8 brgemm followed by seven more: Y (ptr<u8> or
 * ptr<s8>), ldy, the steps (an index constant: runtime.h's
 * hgc_brgemm_u8s8_q) and four ptr<f32> operands (the unused ones any
 * f32 address): its sums requantized into Y, C's block left as scratch;
 * the fold_quant pass makes it from an int8 MatMul's epilogue nest.  fill, copy and
 * copy2d are the data movement templates need; then math and thread
 * queries; lanes_* fold the n partial results of a split reduction stored
 * at p (p[v] with p[v + n/2], then with p[v + n/4], ...: a tree both
 * backends evaluate in that order).  Argument types are in docs/tir.md and
 * verify.c.
 */
#define HGC_TIR_INTRIN_LIST(X)              \
	X(BRGEMM, "brgemm", 11)             \
	X(BRGEMM_STRD, "brgemm_strd", 13)   \
	X(BRGEMM_POST, "brgemm_post", 13)   \
	X(BRGEMM_Q, "brgemm_q", 18)         \
	X(FILL, "fill", 3)                  \
	X(COPY, "copy", 3)                  \
	X(COPY2D, "copy2d", 6)              \
	X(EXP, "exp", 1)                    \
	X(EXP_NONPOS, "exp_nonpos", 1)      \
	X(LOG, "log", 1)                    \
	X(SQRT, "sqrt", 1)                  \
	X(TANH, "tanh", 1)                  \
	X(ERF, "erf", 1)                    \
	X(ABS, "abs", 1)                    \
	X(FLOOR, "floor", 1)                \
	X(ROUND, "round", 1)                \
	X(POW, "pow", 2)                    \
	X(THREAD_ID, "thread_id", 0)        \
	X(NUM_THREADS, "num_threads", 0)    \
	X(LANES_ADD, "lanes_add", 2)        \
	X(LANES_MUL, "lanes_mul", 2)        \
	X(LANES_MAX, "lanes_max", 2)        \
	X(LANES_MIN, "lanes_min", 2)

enum hgc_tir_intrin {
#define X(e, n, a) HGC_TIR_I_##e,
	HGC_TIR_INTRIN_LIST(X)
#undef X
	HGC_TIR_INTRIN_COUNT
};

/* The most lanes lanes_add/mul/max/min fold (a zmm register of f32 and more). */
#define HGC_TIR_LANES_MAX 64

/* Expression kinds: X(enum suffix, name). */
#define HGC_TIR_EXPR_LIST(X)   \
	X(INT, "int")          \
	X(FLOAT, "float")      \
	X(VAR, "var")          \
	X(BINARY, "binary")    \
	X(UNARY, "unary")      \
	X(SELECT, "select")    \
	X(CAST, "cast")        \
	X(LOAD, "load")        \
	X(ADDR, "addr")        \
	X(INTRIN, "intrin")    \
	X(CALL, "call")

enum hgc_tir_expr_kind {
#define X(e, n) HGC_TIR_E_##e,
	HGC_TIR_EXPR_LIST(X)
#undef X
};

/* Statement kinds: X(enum suffix, name). */
#define HGC_TIR_STMT_LIST(X)     \
	X(BLOCK, "block")        \
	X(FOR, "for")            \
	X(PFOR, "parallel for")  \
	X(IF, "if")              \
	X(LET, "let")            \
	X(ASSIGN, "assign")      \
	X(STORE, "store")        \
	X(TENSOR, "tensor")      \
	X(EVAL, "call")          \
	X(RETURN, "return")

enum hgc_tir_stmt_kind {
#define X(e, n) HGC_TIR_S_##e,
	HGC_TIR_STMT_LIST(X)
#undef X
};

/* Where a tensor lives. */
enum hgc_tir_scope {
	HGC_TIR_GLOBAL,		/* caller-owned buffer: a function argument */
	HGC_TIR_LOCAL,		/* temporary of the block that defines it */
	HGC_TIR_CONST,		/* module-level buffer, filled by init or from data */
};

struct hgc_tir_module;
struct hgc_tir_func;
struct hgc_tir_stmt;

/* A scalar variable: a parameter, a loop index or a let. */
struct hgc_tir_var {
	const char *name;	/* unique within the module */
	struct hgc_tir_type type;
	int id;			/* dense within the module, for pass tables */
	int nassign;		/* assignments built to it: 0 means immutable after let */
	void *aux;		/* free for the pass that runs */
};

/* A tensor: N-dimensional, row-major, dense until a pass says otherwise. */
struct hgc_tir_tensor {
	const char *name;	/* unique within the module */
	struct hgc_tir_type elem;	/* element type (lanes 1; may be a pointer) */
	int ndims;
	struct hgc_tir_expr **dims;	/* index-typed, usually constants */
	enum hgc_tir_scope scope;
	bool is_param;		/* a parameter of its function */
	int id;			/* dense within the module */
	const void *data;	/* CONST: initial contents (arena copy), or NULL */
	void *aux;		/* free for the pass that runs */
};

/* An expression node.  Every operand lives in ops, so walkers need no switch. */
struct hgc_tir_expr {
	enum hgc_tir_expr_kind kind;
	struct hgc_tir_type type;
	int op;			/* BINARY: binop, UNARY: unop, INTRIN: intrinsic */
	int nops;
	struct hgc_tir_expr **ops;	/* binary a b; select c a b; cast x; load/addr
					   indices; intrin/call arguments */
	union {
		int64_t i;			/* INT */
		double f;			/* FLOAT */
		struct hgc_tir_var *var;	/* VAR */
		struct hgc_tir_tensor *tensor;	/* LOAD, ADDR */
		const char *sym;		/* CALL of an external symbol (callee NULL) */
	} u;
	struct hgc_tir_func *callee;	/* CALL: the module function, or NULL */
	int64_t *extents;	/* ADDR: slice extent per index (1: one element) */
};

/* A statement node. */
struct hgc_tir_stmt {
	enum hgc_tir_stmt_kind kind;
	struct hgc_loc loc;	/* where its template wrote it, or no file */
	union {
		struct {	/* BLOCK */
			struct hgc_tir_stmt **stmts;
			int n, cap;
			struct hgc_tir_module *m;	/* whose arena the array grows in */
		} block;
		struct {	/* FOR: for var in [begin, end) step */
			struct hgc_tir_var *var;
			struct hgc_tir_expr *begin, *end, *step;
			struct hgc_tir_stmt *body;
		} loop;
		struct {	/* PFOR: n collapsed parallel loops */
			int n;
			struct hgc_tir_var **vars;
			struct hgc_tir_expr **begin, **end, **step;
			int merge_group;	/* 0: none; equal groups may be merged */
			struct hgc_tir_stmt *body;
		} pfor;
		struct {	/* IF */
			struct hgc_tir_expr *cond;
			struct hgc_tir_stmt *then, *els;	/* els may be NULL */
		} cond;
		struct {	/* LET (defines var) and ASSIGN */
			struct hgc_tir_var *var;
			struct hgc_tir_expr *value;
		} let;
		struct {	/* STORE: tensor[idx...] = value */
			struct hgc_tir_tensor *tensor;
			int n;
			struct hgc_tir_expr **idx;
			struct hgc_tir_expr *value;
		} store;
		struct hgc_tir_tensor *tensor;	/* TENSOR: defines a local tensor */
		struct hgc_tir_expr *expr;	/* EVAL: a call; RETURN: value or NULL */
	} u;
};

/* A parameter: a tensor or a scalar variable. */
struct hgc_tir_param {
	struct hgc_tir_tensor *tensor;
	struct hgc_tir_var *var;
};

struct hgc_tir_func {
	struct hgc_tir_module *mod;
	const char *name;
	struct hgc_tir_type ret;
	int nparams, capparams;
	struct hgc_tir_param *params;
	struct hgc_tir_stmt *body;	/* a BLOCK */
	int id;
};

/* A name in use, and the next "_k" suffix to try when it is wanted again
   (hgc_tir_unique_name). */
struct hgc_tir_name {
	const char *s;
	int next;
};

/* A module: functions, constant buffers, and the arena that owns them all. */
struct hgc_tir_module {
	struct hgc_arena arena;
	const char *name;
	struct hgc_vec funcs;		/* struct hgc_tir_func * */
	struct hgc_vec consts;		/* struct hgc_tir_tensor *, scope CONST */
	struct hgc_tir_func *entry;	/* called per run; args: inputs, outputs */
	struct hgc_tir_func *init;	/* called once before the first run, or NULL */
	int nvars, ntensors;		/* ids handed out so far */
	struct hgc_tir_name *names;	/* hash set of every name in use (malloc'ed) */
	size_t nnames, capnames;
};

/* type.c */
static inline struct hgc_tir_type hgc_tir_ty(enum hgc_tir_kind k)
{
	struct hgc_tir_type t = { (uint8_t)k, 0, 1 };
	return t;
}
static inline struct hgc_tir_type hgc_tir_ptr_to(struct hgc_tir_type t)
{
	t.ptr++;
	return t;
}
bool hgc_tir_type_eq(struct hgc_tir_type a, struct hgc_tir_type b);
bool hgc_tir_type_is_int(struct hgc_tir_type t);	/* s8 u8 s32 index values */
bool hgc_tir_type_is_float(struct hgc_tir_type t);	/* f32 bf16 values */
const char *hgc_tir_kind_name(enum hgc_tir_kind k);
int hgc_tir_kind_size(enum hgc_tir_kind k);
/* "f32", "f32x16", "ptr<f32>", "ptr<ptr<u8>>" into buf; returns buf. */
char *hgc_tir_type_str(struct hgc_tir_type t, char *buf, size_t size);
const char *hgc_tir_binop_name(enum hgc_tir_binop op);
int hgc_tir_binop_prec(enum hgc_tir_binop op);
const char *hgc_tir_intrin_name(enum hgc_tir_intrin id);
int hgc_tir_intrin_nargs(enum hgc_tir_intrin id);
/* The intrinsic named name, or -1. */
int hgc_tir_intrin_lookup(const char *name);

/* tir.c: modules, functions, variables, tensors */
struct hgc_tir_module *hgc_tir_module_new(const char *name);
void hgc_tir_module_free(struct hgc_tir_module *m);
struct hgc_tir_func *hgc_tir_func_new(struct hgc_tir_module *m, const char *name,
				      struct hgc_tir_type ret);
/* The function named name, or NULL. */
struct hgc_tir_func *hgc_tir_module_func(const struct hgc_tir_module *m, const char *name);
#define HGC_TIR_FUNC(m, i) HGC_VEC_AT(&(m)->funcs, struct hgc_tir_func *, i)
#define HGC_TIR_CONST_AT(m, i) HGC_VEC_AT(&(m)->consts, struct hgc_tir_tensor *, i)
/* A fresh variable; the name is made unique and a valid C identifier. */
struct hgc_tir_var *hgc_tir_var_new(struct hgc_tir_module *m, const char *name,
				    struct hgc_tir_type type);
/* A tensor of the given scope, not yet placed anywhere (dims may be NULL entries: 1). */
struct hgc_tir_tensor *hgc_tir_tensor_new(struct hgc_tir_module *m, const char *name,
					  struct hgc_tir_type elem, enum hgc_tir_scope scope,
					  int ndims, struct hgc_tir_expr *const *dims);
/* The same with constant dims. */
struct hgc_tir_tensor *hgc_tir_tensor_newc(struct hgc_tir_module *m, const char *name,
					   struct hgc_tir_type elem, enum hgc_tir_scope scope,
					   int ndims, const int64_t *dims);
/* Append a tensor parameter (scope GLOBAL) with constant dims. */
struct hgc_tir_tensor *hgc_tir_func_add_tensor(struct hgc_tir_func *f, const char *name,
					       struct hgc_tir_type elem, int ndims,
					       const int64_t *dims);
/* Append an existing tensor (scope GLOBAL) as a parameter. */
void hgc_tir_func_add_tensor_param(struct hgc_tir_func *f, struct hgc_tir_tensor *t);
/* Append a scalar parameter. */
struct hgc_tir_var *hgc_tir_func_add_scalar(struct hgc_tir_func *f, const char *name,
					    struct hgc_tir_type type);
/* A module-level constant buffer; data (may be NULL) is copied into the arena. */
struct hgc_tir_tensor *hgc_tir_module_add_const(struct hgc_tir_module *m, const char *name,
						struct hgc_tir_type elem, int ndims,
						const int64_t *dims, const void *data);
/* Number of elements if every dim is a constant, else -1. */
int64_t hgc_tir_tensor_size(const struct hgc_tir_tensor *t);
/* The constant value of dim i, or -1 when it is not a constant. */
int64_t hgc_tir_tensor_dim(const struct hgc_tir_tensor *t, int i);

/* expr.c: expression builders (operands are not copied; types not checked) */
struct hgc_tir_expr *hgc_tir_int(struct hgc_tir_module *m, enum hgc_tir_kind k, int64_t v);
struct hgc_tir_expr *hgc_tir_idx(struct hgc_tir_module *m, int64_t v);	/* index constant */
struct hgc_tir_expr *hgc_tir_bool(struct hgc_tir_module *m, bool v);
struct hgc_tir_expr *hgc_tir_f32(struct hgc_tir_module *m, double v);
struct hgc_tir_expr *hgc_tir_ref(struct hgc_tir_module *m, struct hgc_tir_var *v);
struct hgc_tir_expr *hgc_tir_binary(struct hgc_tir_module *m, enum hgc_tir_binop op,
				    struct hgc_tir_expr *a, struct hgc_tir_expr *b);
struct hgc_tir_expr *hgc_tir_add(struct hgc_tir_module *m, struct hgc_tir_expr *a,
				 struct hgc_tir_expr *b);
struct hgc_tir_expr *hgc_tir_sub(struct hgc_tir_module *m, struct hgc_tir_expr *a,
				 struct hgc_tir_expr *b);
struct hgc_tir_expr *hgc_tir_mul(struct hgc_tir_module *m, struct hgc_tir_expr *a,
				 struct hgc_tir_expr *b);
struct hgc_tir_expr *hgc_tir_unary(struct hgc_tir_module *m, enum hgc_tir_unop op,
				   struct hgc_tir_expr *a);
struct hgc_tir_expr *hgc_tir_select(struct hgc_tir_module *m, struct hgc_tir_expr *c,
				    struct hgc_tir_expr *a, struct hgc_tir_expr *b);
struct hgc_tir_expr *hgc_tir_cast(struct hgc_tir_module *m, struct hgc_tir_type to,
				  struct hgc_tir_expr *a);
/* t[idx0, .., idx(n-1)]; the index array is copied. */
struct hgc_tir_expr *hgc_tir_load(struct hgc_tir_module *m, struct hgc_tir_tensor *t, int n,
				  struct hgc_tir_expr *const *idx);
struct hgc_tir_expr *hgc_tir_loadv(struct hgc_tir_module *m, struct hgc_tir_tensor *t, int n,
				   ...);
/* &t[idx0 : ext0, ..]: pointer to the element at idx; extents (NULL: all 1) say
   how much of each dim the slice covers, for the verifier's bounds check. */
struct hgc_tir_expr *hgc_tir_addr(struct hgc_tir_module *m, struct hgc_tir_tensor *t, int n,
				  struct hgc_tir_expr *const *idx, const int64_t *extents);
struct hgc_tir_expr *hgc_tir_addrv(struct hgc_tir_module *m, struct hgc_tir_tensor *t, int n,
				   ...);
struct hgc_tir_expr *hgc_tir_intrin(struct hgc_tir_module *m, enum hgc_tir_intrin id, int n,
				    struct hgc_tir_expr *const *args);
struct hgc_tir_expr *hgc_tir_intrinv(struct hgc_tir_module *m, enum hgc_tir_intrin id, int n,
				     ...);
/* A call of a module function (a tensor parameter takes a pointer argument). */
struct hgc_tir_expr *hgc_tir_call(struct hgc_tir_module *m, struct hgc_tir_func *f, int n,
				  struct hgc_tir_expr *const *args);
/* A call of an external C function sym returning ret. */
struct hgc_tir_expr *hgc_tir_call_extern(struct hgc_tir_module *m, const char *sym,
					 struct hgc_tir_type ret, int n,
					 struct hgc_tir_expr *const *args);
/* The constant value of an INT expression into *v; false if it is not one. */
bool hgc_tir_const_int(const struct hgc_tir_expr *e, int64_t *v);

/*
 * stmt.c: statement builders.  Each takes the block to append to (NULL: a
 * detached statement) and returns the new statement; loops and ifs come with
 * empty body blocks (hgc_tir_body).
 */
struct hgc_tir_stmt *hgc_tir_block(struct hgc_tir_module *m, struct hgc_tir_stmt *parent);
struct hgc_tir_stmt *hgc_tir_append(struct hgc_tir_stmt *block, struct hgc_tir_stmt *s);
struct hgc_tir_stmt *hgc_tir_insert(struct hgc_tir_stmt *block, int pos,
				    struct hgc_tir_stmt *s);
/* Take the n statements from pos out of block (they stay allocated in the module). */
void hgc_tir_remove(struct hgc_tir_stmt *block, int pos, int n);
/* Take statement s out of block; a bug when s is not one of its statements. */
void hgc_tir_unlink(struct hgc_tir_stmt *block, const struct hgc_tir_stmt *s);
/* step NULL: 1 */
struct hgc_tir_stmt *hgc_tir_for(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				 struct hgc_tir_var *var, struct hgc_tir_expr *begin,
				 struct hgc_tir_expr *end, struct hgc_tir_expr *step);
/* steps NULL or a NULL entry: 1 */
struct hgc_tir_stmt *hgc_tir_pfor(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				  int n, struct hgc_tir_var *const *vars,
				  struct hgc_tir_expr *const *begin,
				  struct hgc_tir_expr *const *end,
				  struct hgc_tir_expr *const *step);
struct hgc_tir_stmt *hgc_tir_if(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				struct hgc_tir_expr *cond, bool with_else);
struct hgc_tir_stmt *hgc_tir_let(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				 struct hgc_tir_var *var, struct hgc_tir_expr *value);
struct hgc_tir_stmt *hgc_tir_assign(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				    struct hgc_tir_var *var, struct hgc_tir_expr *value);
struct hgc_tir_stmt *hgc_tir_store(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				   struct hgc_tir_tensor *t, int n,
				   struct hgc_tir_expr *const *idx, struct hgc_tir_expr *value);
struct hgc_tir_stmt *hgc_tir_storev(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				    struct hgc_tir_tensor *t, struct hgc_tir_expr *value,
				    int n, ...);
/* Define a local tensor here: it lives until the end of parent. */
struct hgc_tir_stmt *hgc_tir_def_tensor(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
					struct hgc_tir_tensor *t);
/* A call statement (intrinsic or function call). */
struct hgc_tir_stmt *hgc_tir_eval(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				  struct hgc_tir_expr *call);
struct hgc_tir_stmt *hgc_tir_return(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				    struct hgc_tir_expr *value);
/* The body block of a FOR or PFOR, the then block of an IF. */
struct hgc_tir_stmt *hgc_tir_body(struct hgc_tir_stmt *s);
/* The else block of an IF, or NULL. */
struct hgc_tir_stmt *hgc_tir_else(struct hgc_tir_stmt *s);

/* walk.c: generic traversal and in-place rewriting */
struct hgc_tir_visitor {
	/* before a statement's children; return false to skip them */
	bool (*stmt_pre)(struct hgc_tir_visitor *v, struct hgc_tir_stmt *s);
	/* after a statement's children */
	void (*stmt_post)(struct hgc_tir_visitor *v, struct hgc_tir_stmt *s);
	/* every expression, after its operands */
	void (*expr)(struct hgc_tir_visitor *v, struct hgc_tir_expr *e);
	void *ctx;
};
void hgc_tir_walk_stmt(struct hgc_tir_stmt *s, struct hgc_tir_visitor *v);
void hgc_tir_walk_expr(struct hgc_tir_expr *e, struct hgc_tir_visitor *v);
/* Every function body of the module, then every constant's dims. */
void hgc_tir_walk_module(struct hgc_tir_module *m, struct hgc_tir_visitor *v);

struct hgc_tir_mutator {
	/* an expression whose operands are already rewritten: return it or a replacement */
	struct hgc_tir_expr *(*expr)(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e);
	/* a statement whose children are rewritten: return it, a replacement, or
	   NULL to delete it from its block (bodies become empty blocks) */
	struct hgc_tir_stmt *(*stmt)(struct hgc_tir_mutator *mu, struct hgc_tir_stmt *s);
	struct hgc_tir_module *m;
	void *ctx;
};
struct hgc_tir_expr *hgc_tir_mutate_expr(struct hgc_tir_expr *e, struct hgc_tir_mutator *mu);
struct hgc_tir_stmt *hgc_tir_mutate_stmt(struct hgc_tir_stmt *s, struct hgc_tir_mutator *mu);
/* Deep copies (variables and tensors are shared, not copied). */
struct hgc_tir_expr *hgc_tir_expr_copy(struct hgc_tir_module *m, const struct hgc_tir_expr *e);
struct hgc_tir_stmt *hgc_tir_stmt_copy(struct hgc_tir_module *m, const struct hgc_tir_stmt *s);

/* print.c: readable, stable C-like text */
void hgc_tir_print_module(FILE *out, const struct hgc_tir_module *m);
void hgc_tir_print_func(FILE *out, const struct hgc_tir_func *f);
void hgc_tir_print_stmt(FILE *out, const struct hgc_tir_stmt *s, int indent);
void hgc_tir_print_expr(FILE *out, const struct hgc_tir_expr *e);
/* The module as a malloc'ed string. */
char *hgc_tir_module_str(const struct hgc_tir_module *m);

/* verify.c: definitions before use, types, index counts, static bounds */
int hgc_tir_verify(const struct hgc_tir_module *m, struct hgc_diag *d);
int hgc_tir_verify_func(const struct hgc_tir_func *f, struct hgc_diag *d);
/* Run a pass, then the verifier unless built with NDEBUG (or HGC_VERIFY=0). */
int hgc_tir_run_pass(struct hgc_tir_module *m, const char *name,
		     int (*pass)(struct hgc_tir_module *m, struct hgc_diag *d),
		     struct hgc_diag *d);

#endif
