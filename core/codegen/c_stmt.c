/*
 * c_stmt.c: Tensor IR statements as C statements.  Local tensors up to
 * STACK_MAX bytes live on the stack; larger or dynamic ones are malloc'ed and
 * freed at the end of their block (and before a return).  Data-movement
 * intrinsics become loops or memmove; brgemm calls go to the runtime through
 * the pointers hgc_bind fills.
 */
#include "c_int.h"

#include <string.h>

#define STACK_MAX 16384

static void stmt(struct cemit *c, const struct hgc_tir_stmt *s);

/* Start a line at the current depth. */
static void tabs(struct cemit *c)
{
	int i;

	for (i = 0; i < c->indent; i++)
		fputc('\t', c->out);
}

/* Free the malloc'ed local tensors from index from on, newest first. */
static void free_heap(struct cemit *c, size_t from)
{
	size_t i;

	for (i = c->heap.len; i > from; i--) {
		tabs(c);
		fprintf(c->out, "free(%s);\n",
			HGC_VEC_AT(&c->heap, const struct hgc_tir_tensor *, i - 1)->name);
	}
}

/* "{", the statements one level deeper, frees of its heap tensors, "}". */
void hgc_c_block(struct cemit *c, const struct hgc_tir_stmt *b)
{
	size_t mark = c->heap.len;
	int i;

	fputs("{\n", c->out);
	c->indent++;
	if (b->kind == HGC_TIR_S_BLOCK)
		for (i = 0; i < b->u.block.n; i++)
			stmt(c, b->u.block.stmts[i]);
	else
		stmt(c, b);
	free_heap(c, mark);
	c->heap.len = mark;
	c->indent--;
	tabs(c);
	fputc('}', c->out);
}

/* for (int64_t v = begin[, hgc_eN = end][, hgc_sN = step]; v < end; v += step):
   an end or step that may change in the body is evaluated once, as in the IR. */
static void loop(struct cemit *c, const struct hgc_tir_stmt *s)
{
	const struct hgc_tir_var *v = s->u.loop.var;
	bool pe = hgc_c_pure(s->u.loop.end), ps = hgc_c_pure(s->u.loop.step);
	int n = ++c->tmp;

	fprintf(c->out, "for (int64_t %s = ", v->name);
	hgc_c_expr(c, s->u.loop.begin, 2);
	if (!pe) {
		fprintf(c->out, ", hgc_e%d = ", n);
		hgc_c_expr(c, s->u.loop.end, 2);
	}
	if (!ps) {
		fprintf(c->out, ", hgc_s%d = ", n);
		hgc_c_expr(c, s->u.loop.step, 2);
	}
	fprintf(c->out, "; %s < ", v->name);
	if (pe)
		hgc_c_expr(c, s->u.loop.end, 5);
	else
		fprintf(c->out, "hgc_e%d", n);
	fprintf(c->out, "; %s += ", v->name);
	if (ps)
		hgc_c_expr(c, s->u.loop.step, 2);
	else
		fprintf(c->out, "hgc_s%d", n);
	fputs(") ", c->out);
	hgc_c_block(c, s->u.loop.body);
}

/* #pragma omp parallel for collapse(n) over n perfectly nested loops. */
static void pfor(struct cemit *c, const struct hgc_tir_stmt *s)
{
	const char *name;
	int i;

	fputs("#pragma omp parallel for schedule(static)", c->out);
	if (s->u.pfor.n > 1)
		fprintf(c->out, " collapse(%d)", s->u.pfor.n);
	fputc('\n', c->out);
	for (i = 0; i < s->u.pfor.n; i++) {
		name = s->u.pfor.vars[i]->name;
		tabs(c);
		fprintf(c->out, "for (int64_t %s = ", name);
		hgc_c_expr(c, s->u.pfor.begin[i], 2);
		fprintf(c->out, "; %s < ", name);
		hgc_c_expr(c, s->u.pfor.end[i], 5);
		fprintf(c->out, "; %s += ", name);
		hgc_c_expr(c, s->u.pfor.step[i], 2);
		fputs(i + 1 < s->u.pfor.n ? ")\n" : ") ", c->out);
	}
	hgc_c_block(c, s->u.pfor.body);
}

/* A local tensor: an aligned stack array when small and static, else malloc'ed. */
static void local(struct cemit *c, const struct hgc_tir_tensor *t)
{
	int64_t n = hgc_tir_tensor_size(t);
	int size = t->elem.ptr ? 8 : hgc_tir_kind_size(t->elem.kind);
	char buf[64];
	int i;

	hgc_c_store_type(c, t->elem, buf, sizeof(buf));
	if (n >= 0 && n * size <= STACK_MAX) {
		hgc_c_decl(c, buf, t->name);
		fprintf(c->out, "[%lld] __attribute__((aligned(64)));\n", (long long)(n ? n : 1));
		return;
	}
	fprintf(c->out, "%s%s*%s = hgc_alloc((int64_t)sizeof(%s)", buf,
		buf[strlen(buf) - 1] == '*' ? "" : " ", t->name, buf);
	for (i = 0; i < t->ndims; i++) {
		fputs(" * ", c->out);
		hgc_c_expr(c, t->dims[i], 7);
	}
	fputs(");\n", c->out);
	*(const struct hgc_tir_tensor **)hgc_vec_push(&c->heap) = t;
}

/* Print argument i of a call, in a context of precedence prec. */
static void arg(struct cemit *c, const struct hgc_tir_expr *e, int i, int prec)
{
	hgc_c_expr(c, e->ops[i], prec);
}

/* brgemm, brgemm_strd or brgemm_post: the runtime function of the operand types. */
static void brgemm(struct cemit *c, const struct hgc_tir_expr *e)
{
	static const char *const names[3] = { "f32", "u8s8s32", "bf16" };
	static const char *const ta[3] = { "float", "uint8_t", "uint16_t" };
	static const char *const tb[3] = { "float", "int8_t", "uint16_t" };
	int k = e->ops[0]->type.kind == HGC_TIR_U8 ? 1 : e->ops[0]->type.kind == HGC_TIR_BF16 ? 2 : 0;
	bool strd = e->op == HGC_TIR_I_BRGEMM_STRD;
	int i;

	if (e->op == HGC_TIR_I_BRGEMM_Q)
		fputs("hgc_brgemm_u8s8_q(", c->out);
	else
		fprintf(c->out, "hgc_brgemm_%s%s(", names[k],
			strd ? "_strd" : e->op == HGC_TIR_I_BRGEMM_POST ? "_post" : "");
	if (!strd)
		fprintf(c->out, "(const %s *const *)", ta[k]);
	arg(c, e, 0, 7);
	fputs(", ", c->out);
	if (!strd)
		fprintf(c->out, "(const %s *const *)", tb[k]);
	arg(c, e, 1, 7);
	for (i = 2; i < e->nops; i++) {
		fputs(", ", c->out);
		arg(c, e, i, strd && (i == 4 || i == 5) ? 6 : 0);
		if (strd && (i == 4 || i == 5))
			fprintf(c->out, " * sizeof(%s)", i == 4 ? ta[k] : tb[k]);
	}
	fputs(");\n", c->out);
}

/* The body of fill: hgc_d[0..n) = value, with value and n evaluated once. */
static void fill_loop(struct cemit *c, const struct hgc_tir_expr *e, const char *t)
{
	fprintf(c->out, "%s hgc_v = ", t);
	arg(c, e, 1, 0);
	fputs(";\n\n", c->out);
	tabs(c);
	fputs("for (int64_t hgc_i = 0, hgc_n = ", c->out);
	arg(c, e, 2, 2);
	fputs("; hgc_i < hgc_n; hgc_i++)\n", c->out);
	tabs(c);
	fputs("\thgc_d[hgc_i] = hgc_v;\n", c->out);
}

/* The body of copy2d: one memmove per row, the sizes evaluated once. */
static void copy2d_loop(struct cemit *c, const struct hgc_tir_expr *e, const char *t)
{
	static const char *const names[4] = { "hgc_n", "hgc_c", "hgc_ld", "hgc_ls" };
	int i;

	fprintf(c->out, "const %s *hgc_s = ", t);
	arg(c, e, 1, 0);
	fputs(";\n", c->out);
	tabs(c);
	for (i = 0; i < 4; i++) {
		fprintf(c->out, "%s%s = ", i ? ", " : "int64_t ", names[i]);
		arg(c, e, 2 + i, 2);
	}
	fputs(";\n\n", c->out);
	tabs(c);
	fputs("for (int64_t hgc_r = 0; hgc_r < hgc_n; hgc_r++)\n", c->out);
	tabs(c);
	fprintf(c->out, "\t__builtin_memmove(hgc_d + hgc_r * hgc_ld, hgc_s + hgc_r * hgc_ls, "
		"(hgc_size_t)hgc_c * sizeof(%s));\n", t);
}

/* fill, copy and copy2d over the destination's element type. */
static void move(struct cemit *c, const struct hgc_tir_expr *e)
{
	struct hgc_tir_type elem = e->ops[0]->type;
	char t[64];

	elem.ptr--;
	hgc_c_store_type(c, elem, t, sizeof(t));
	if (e->op == HGC_TIR_I_COPY) {
		fputs("__builtin_memmove(", c->out);
		arg(c, e, 0, 0);
		fputs(", ", c->out);
		arg(c, e, 1, 0);
		fputs(", ", c->out);
		arg(c, e, 2, 6);
		fprintf(c->out, " * sizeof(%s));\n", t);
		return;
	}
	fputs("{\n", c->out);
	c->indent++;
	tabs(c);
	fprintf(c->out, "%s *hgc_d = ", t);
	arg(c, e, 0, 0);
	fputs(";\n", c->out);
	tabs(c);
	if (e->op == HGC_TIR_I_FILL)
		fill_loop(c, e, t);
	else
		copy2d_loop(c, e, t);
	c->indent--;
	tabs(c);
	fputs("}\n", c->out);
}

/* A call statement: intrinsics with their own form, or the call and ';'. */
static void eval(struct cemit *c, const struct hgc_tir_expr *e)
{
	if (e->kind == HGC_TIR_E_INTRIN) {
		switch (e->op) {
		case HGC_TIR_I_BRGEMM:
		case HGC_TIR_I_BRGEMM_STRD:
		case HGC_TIR_I_BRGEMM_POST:
		case HGC_TIR_I_BRGEMM_Q:
			brgemm(c, e);
			return;
		case HGC_TIR_I_FILL:
		case HGC_TIR_I_COPY:
		case HGC_TIR_I_COPY2D:
			move(c, e);
			return;
		}
	}
	hgc_c_expr(c, e, 0);
	fputs(";\n", c->out);
}

/* let, assign, store, return: one line each. */
static void simple(struct cemit *c, const struct hgc_tir_stmt *s)
{
	char buf[64];

	switch (s->kind) {
	case HGC_TIR_S_LET:
		hgc_c_decl(c, hgc_c_type(c, s->u.let.var->type, buf, sizeof(buf)), s->u.let.var->name);
		fputs(" = ", c->out);
		/* fall through */
	case HGC_TIR_S_ASSIGN:
		if (s->kind == HGC_TIR_S_ASSIGN)
			fprintf(c->out, "%s = ", s->u.let.var->name);
		hgc_c_expr(c, s->u.let.value, 0);
		break;
	case HGC_TIR_S_STORE:
		hgc_c_element(c, s->u.store.tensor, s->u.store.idx, s->u.store.n);
		fputs(" = ", c->out);
		hgc_c_expr(c, s->u.store.value, 0);
		break;
	default:
		fputs("return", c->out);
		if (s->u.expr) {
			fputc(' ', c->out);
			hgc_c_expr(c, s->u.expr, 0);
		}
		break;
	}
	fputs(";\n", c->out);
}

/* A return frees every heap tensor of the function, after computing its
   value (which may read them). */
static void ret(struct cemit *c, const struct hgc_tir_stmt *s)
{
	char buf[64];

	if (!c->heap.len) {
		simple(c, s);
		return;
	}
	fputs("{\n", c->out);
	c->indent++;
	if (s->u.expr) {
		tabs(c);
		hgc_c_decl(c, hgc_c_type(c, s->u.expr->type, buf, sizeof(buf)), "hgc_ret");
		fputs(" = ", c->out);
		hgc_c_expr(c, s->u.expr, 0);
		fputs(";\n", c->out);
	}
	free_heap(c, 0);
	tabs(c);
	fputs(s->u.expr ? "return hgc_ret;\n" : "return;\n", c->out);
	c->indent--;
	tabs(c);
	fputs("}\n", c->out);
}

/* Emit one statement at the current depth. */
static void stmt(struct cemit *c, const struct hgc_tir_stmt *s)
{
	tabs(c);
	switch (s->kind) {
	case HGC_TIR_S_BLOCK:
		hgc_c_block(c, s);
		fputc('\n', c->out);
		break;
	case HGC_TIR_S_FOR:
		loop(c, s);
		fputc('\n', c->out);
		break;
	case HGC_TIR_S_PFOR:
		pfor(c, s);
		fputc('\n', c->out);
		break;
	case HGC_TIR_S_IF:
		fputs("if (", c->out);
		hgc_c_expr(c, s->u.cond.cond, 0);
		fputs(") ", c->out);
		hgc_c_block(c, s->u.cond.then);
		if (s->u.cond.els) {
			fputs(" else ", c->out);
			hgc_c_block(c, s->u.cond.els);
		}
		fputc('\n', c->out);
		break;
	case HGC_TIR_S_TENSOR:
		local(c, s->u.tensor);
		break;
	case HGC_TIR_S_EVAL:
		eval(c, s->u.expr);
		break;
	case HGC_TIR_S_RETURN:
		ret(c, s);
		break;
	default:
		simple(c, s);
		break;
	}
}
