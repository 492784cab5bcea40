/* stmt.c: statement builders; each appends to a parent block when given one. */
#include "tir.h"
#include "tir_int.h"

#include <stdarg.h>
#include <string.h>

/* A zeroed statement node. */
struct hgc_tir_stmt *hgc_tir_stmt_alloc(struct hgc_tir_module *m, enum hgc_tir_stmt_kind kind)
{
	struct hgc_tir_stmt *s = hgc_arena_calloc(&m->arena, 1, sizeof(*s));

	s->kind = kind;
	return s;
}

/* Make room for one more statement in block b (the old array stays in the arena). */
static void grow(struct hgc_tir_stmt *b)
{
	int cap = b->u.block.cap ? 2 * b->u.block.cap : 4;
	struct hgc_tir_stmt **v = hgc_arena_calloc(&b->u.block.m->arena, (size_t)cap, sizeof(*v));

	if (b->u.block.n)
		memcpy(v, b->u.block.stmts, (size_t)b->u.block.n * sizeof(*v));
	b->u.block.stmts = v;
	b->u.block.cap = cap;
}

/* A new empty block, appended to parent when given. */
struct hgc_tir_stmt *hgc_tir_block(struct hgc_tir_module *m, struct hgc_tir_stmt *parent)
{
	struct hgc_tir_stmt *s = hgc_tir_stmt_alloc(m, HGC_TIR_S_BLOCK);

	s->u.block.m = m;
	return parent ? hgc_tir_append(parent, s) : s;
}

/* Append s to block and return s. */
struct hgc_tir_stmt *hgc_tir_append(struct hgc_tir_stmt *block, struct hgc_tir_stmt *s)
{
	return hgc_tir_insert(block, block->u.block.n, s);
}

/* Insert s before position pos of block (pos == n appends) and return s. */
struct hgc_tir_stmt *hgc_tir_insert(struct hgc_tir_stmt *block, int pos,
				    struct hgc_tir_stmt *s)
{
	struct hgc_tir_stmt **v;

	if (block->kind != HGC_TIR_S_BLOCK || pos < 0 || pos > block->u.block.n)
		hgc_bug("tir: insert at %d into a %s of %d", pos,
			block->kind == HGC_TIR_S_BLOCK ? "block" : "non-block", block->u.block.n);
	if (block->u.block.n == block->u.block.cap)
		grow(block);
	v = block->u.block.stmts;
	memmove(v + pos + 1, v + pos, (size_t)(block->u.block.n - pos) * sizeof(*v));
	v[pos] = s;
	block->u.block.n++;
	return s;
}

/* Take the n statements from pos out of block. */
void hgc_tir_remove(struct hgc_tir_stmt *block, int pos, int n)
{
	struct hgc_tir_stmt **v;

	if (block->kind != HGC_TIR_S_BLOCK)
		hgc_bug("tir: remove %d at %d from a non-block", n, pos);
	if (pos < 0 || n < 0 || pos + n > block->u.block.n)
		hgc_bug("tir: remove %d at %d from a block of %d", n, pos, block->u.block.n);
	v = block->u.block.stmts;
	memmove(v + pos, v + pos + n, (size_t)(block->u.block.n - pos - n) * sizeof(*v));
	block->u.block.n -= n;
}

/* Take statement s out of block (a bug when it is not there). */
void hgc_tir_unlink(struct hgc_tir_stmt *block, const struct hgc_tir_stmt *s)
{
	int i;

	for (i = 0; i < block->u.block.n && block->u.block.stmts[i] != s; i++)
		;
	if (i == block->u.block.n)
		hgc_bug("tir: unlink of a statement that is not in its block");
	hgc_tir_remove(block, i, 1);
}

/* Append s to parent if there is one. */
static struct hgc_tir_stmt *place(struct hgc_tir_stmt *parent, struct hgc_tir_stmt *s)
{
	return parent ? hgc_tir_append(parent, s) : s;
}

/* for (var = begin; var < end; var += step) with an empty body. */
struct hgc_tir_stmt *hgc_tir_for(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				 struct hgc_tir_var *var, struct hgc_tir_expr *begin,
				 struct hgc_tir_expr *end, struct hgc_tir_expr *step)
{
	struct hgc_tir_stmt *s = hgc_tir_stmt_alloc(m, HGC_TIR_S_FOR);

	s->u.loop.var = var;
	s->u.loop.begin = begin;
	s->u.loop.end = end;
	s->u.loop.step = step ? step : hgc_tir_idx(m, 1);
	s->u.loop.body = hgc_tir_block(m, NULL);
	return place(parent, s);
}

/* Copy n pointers into the arena. */
static void *dup_ptrs(struct hgc_tir_module *m, void *const *src, int n)
{
	void **v = hgc_arena_calloc(&m->arena, (size_t)(n ? n : 1), sizeof(*v));

	if (src && n)
		memcpy(v, src, (size_t)n * sizeof(*v));
	return v;
}

/* A parallel for over n indices (collapsed), merge group 0, empty body. */
struct hgc_tir_stmt *hgc_tir_pfor(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				  int n, struct hgc_tir_var *const *vars,
				  struct hgc_tir_expr *const *begin,
				  struct hgc_tir_expr *const *end,
				  struct hgc_tir_expr *const *step)
{
	struct hgc_tir_stmt *s = hgc_tir_stmt_alloc(m, HGC_TIR_S_PFOR);
	int i;

	s->u.pfor.n = n;
	s->u.pfor.vars = dup_ptrs(m, (void *const *)vars, n);
	s->u.pfor.begin = dup_ptrs(m, (void *const *)begin, n);
	s->u.pfor.end = dup_ptrs(m, (void *const *)end, n);
	s->u.pfor.step = dup_ptrs(m, (void *const *)step, n);
	for (i = 0; i < n; i++)
		if (!s->u.pfor.step[i])
			s->u.pfor.step[i] = hgc_tir_idx(m, 1);
	s->u.pfor.body = hgc_tir_block(m, NULL);
	return place(parent, s);
}

/* if (cond) {} [else {}] */
struct hgc_tir_stmt *hgc_tir_if(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				struct hgc_tir_expr *cond, bool with_else)
{
	struct hgc_tir_stmt *s = hgc_tir_stmt_alloc(m, HGC_TIR_S_IF);

	s->u.cond.cond = cond;
	s->u.cond.then = hgc_tir_block(m, NULL);
	s->u.cond.els = with_else ? hgc_tir_block(m, NULL) : NULL;
	return place(parent, s);
}

/* let var = value: defines var until the end of parent. */
struct hgc_tir_stmt *hgc_tir_let(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				 struct hgc_tir_var *var, struct hgc_tir_expr *value)
{
	struct hgc_tir_stmt *s = hgc_tir_stmt_alloc(m, HGC_TIR_S_LET);

	s->u.let.var = var;
	s->u.let.value = value;
	return place(parent, s);
}

/* var = value; marks var as mutable. */
struct hgc_tir_stmt *hgc_tir_assign(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				    struct hgc_tir_var *var, struct hgc_tir_expr *value)
{
	struct hgc_tir_stmt *s = hgc_tir_stmt_alloc(m, HGC_TIR_S_ASSIGN);

	s->u.let.var = var;
	s->u.let.value = value;
	var->nassign++;
	return place(parent, s);
}

/* t[idx...] = value */
struct hgc_tir_stmt *hgc_tir_store(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				   struct hgc_tir_tensor *t, int n,
				   struct hgc_tir_expr *const *idx, struct hgc_tir_expr *value)
{
	struct hgc_tir_stmt *s = hgc_tir_stmt_alloc(m, HGC_TIR_S_STORE);

	s->u.store.tensor = t;
	s->u.store.n = n;
	s->u.store.idx = dup_ptrs(m, (void *const *)idx, n);
	s->u.store.value = value;
	return place(parent, s);
}

/* t[i0, i1, ...] = value with the indices as arguments. */
struct hgc_tir_stmt *hgc_tir_storev(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				    struct hgc_tir_tensor *t, struct hgc_tir_expr *value,
				    int n, ...)
{
	struct hgc_tir_expr **idx = hgc_arena_calloc(&m->arena, (size_t)(n ? n : 1), sizeof(*idx));
	va_list ap;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		idx[i] = va_arg(ap, struct hgc_tir_expr *);
	va_end(ap);
	return hgc_tir_store(m, parent, t, n, idx, value);
}

/* Define a local tensor at this point of parent. */
struct hgc_tir_stmt *hgc_tir_def_tensor(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
					struct hgc_tir_tensor *t)
{
	struct hgc_tir_stmt *s = hgc_tir_stmt_alloc(m, HGC_TIR_S_TENSOR);

	s->u.tensor = t;
	return place(parent, s);
}

/* A call evaluated for its effect. */
struct hgc_tir_stmt *hgc_tir_eval(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				  struct hgc_tir_expr *call)
{
	struct hgc_tir_stmt *s = hgc_tir_stmt_alloc(m, HGC_TIR_S_EVAL);

	s->u.expr = call;
	return place(parent, s);
}

/* return [value] */
struct hgc_tir_stmt *hgc_tir_return(struct hgc_tir_module *m, struct hgc_tir_stmt *parent,
				    struct hgc_tir_expr *value)
{
	struct hgc_tir_stmt *s = hgc_tir_stmt_alloc(m, HGC_TIR_S_RETURN);

	s->u.expr = value;
	return place(parent, s);
}

/* The body of a loop or the then block of an if. */
struct hgc_tir_stmt *hgc_tir_body(struct hgc_tir_stmt *s)
{
	switch (s->kind) {
	case HGC_TIR_S_FOR:
		return s->u.loop.body;
	case HGC_TIR_S_PFOR:
		return s->u.pfor.body;
	case HGC_TIR_S_IF:
		return s->u.cond.then;
	case HGC_TIR_S_BLOCK:
		return s;
	default:
		hgc_bug("tir: a %d statement has no body", (int)s->kind);
	}
}

/* The else block of an if (NULL when it has none). */
struct hgc_tir_stmt *hgc_tir_else(struct hgc_tir_stmt *s)
{
	return s->kind == HGC_TIR_S_IF ? s->u.cond.els : NULL;
}
