/*
 * verify.c: the Tensor IR verifier, run after every pass in test builds.
 * It checks that every variable and tensor is defined before use and used
 * only in its scope, that operand types agree, that indexing uses as many
 * indices as the tensor has dims, and that indices and slices that can be
 * bounded statically stay in bounds.  Every error is reported (up to the
 * diag's cap) as "in 'func': message".
 *
 * Static bounds: an index is put in affine form over loop variables whose
 * ranges are constants (immutable lets are substituted).  Such loop variables
 * range over a box, so the affine form's interval is exact: an error means
 * some iteration really goes out of bounds.  Under an if or in a select
 * branch only constant indices are checked, since guards make tails legal.
 */
#include "tir.h"
#include "tir_int.h"

#include <stdlib.h>
#include <string.h>

/* Report an error at the current statement. */
int hgc_tir_verr(struct vctx *v, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	v->nerr++;
	return hgc_error(v->d, v->loc && v->loc->file ? v->loc : NULL, "in '%s': %s",
			 v->f ? v->f->name : v->m->name, buf);
}

/* Mark a variable defined (in scope) and remember it for the end of the block. */
static void define_var(struct vctx *v, const struct hgc_tir_var *var)
{
	if (v->var_state[var->id] == IN_SCOPE)
		hgc_tir_verr(v, "'%s' is defined twice", var->name);
	v->var_state[var->id] = IN_SCOPE;
	v->var_pfor[var->id] = v->pfor_depth;
	*(int *)hgc_vec_push(&v->undo) = var->id;
}

/* Mark a local tensor defined until the end of its block. */
static void define_tensor(struct vctx *v, const struct hgc_tir_tensor *t)
{
	if (v->tensor_state[t->id] == IN_SCOPE)
		hgc_tir_verr(v, "tensor '%s' is defined twice", t->name);
	v->tensor_state[t->id] = IN_SCOPE;
	*(int *)hgc_vec_push(&v->undo) = -1 - t->id;
}

/* Leave a block: everything defined since mark goes out of scope. */
static void pop_scope(struct vctx *v, size_t mark)
{
	int id;

	while (v->undo.len > mark) {
		id = HGC_VEC_AT(&v->undo, int, --v->undo.len);
		if (id >= 0) {
			v->var_state[id] = OUT_OF_SCOPE;
			v->ranges[id].known = false;
			v->lets[id].ok = false;
		} else {
			v->tensor_state[-1 - id] = OUT_OF_SCOPE;
		}
	}
}

/* Check that a variable may be used here. */
bool hgc_tir_vuse_var(struct vctx *v, const struct hgc_tir_var *var)
{
	if (!var || var->id < 0 || var->id >= v->m->nvars)
		return hgc_tir_verr(v, "reference to a variable of another module"), false;
	if (v->var_state[var->id] == IN_SCOPE)
		return true;
	hgc_tir_verr(v, "'%s' is used %s", var->name,
		     v->var_state[var->id] == OUT_OF_SCOPE ? "outside its scope"
							    : "before its definition");
	return false;
}

/* Check that a tensor may be used here. */
bool hgc_tir_vuse_tensor(struct vctx *v, const struct hgc_tir_tensor *t)
{
	if (!t || t->id < 0 || t->id >= v->m->ntensors)
		return hgc_tir_verr(v, "reference to a tensor of another module"), false;
	if (v->tensor_state[t->id] == IN_SCOPE)
		return true;
	if (t->scope == HGC_TIR_GLOBAL && v->tensor_state[t->id] == UNDEFINED)
		hgc_tir_verr(v, "tensor '%s' is not a parameter of this function", t->name);
	else
		hgc_tir_verr(v, "tensor '%s' is used %s", t->name,
			     v->tensor_state[t->id] == OUT_OF_SCOPE ? "outside its scope"
								    : "before its definition");
	return false;
}

static void check_stmt(struct vctx *v, const struct hgc_tir_stmt *s);

/* Check the statements of a block in a scope of their own. */
static void check_block(struct vctx *v, const struct hgc_tir_stmt *b)
{
	size_t mark = v->undo.len;
	int i;

	if (!b)
		return;
	if (b->kind != HGC_TIR_S_BLOCK) {
		check_stmt(v, b);
		return;
	}
	for (i = 0; i < b->u.block.n; i++)
		check_stmt(v, b->u.block.stmts[i]);
	pop_scope(v, mark);
}

/* Check one loop range; define var with its static range when the bounds are constants. */
static void check_range(struct vctx *v, const struct hgc_tir_var *var,
			const struct hgc_tir_expr *begin, const struct hgc_tir_expr *end,
			const struct hgc_tir_expr *step)
{
	const struct hgc_tir_expr *e[3] = { begin, end, step };
	static const char *const what[3] = { "start", "end", "step" };
	char a[64], b[64];
	int i;

	for (i = 0; i < 3; i++)
		if (hgc_tir_vexpr(v, e[i]) && !hgc_tir_type_eq(e[i]->type, var->type))
			hgc_tir_verr(v, "loop %s of '%s' has type %s, not %s", what[i], var->name,
				     hgc_tir_type_str(e[i]->type, a, sizeof(a)),
				     hgc_tir_type_str(var->type, b, sizeof(b)));
	if (var->type.kind != HGC_TIR_INDEX || var->type.ptr || var->type.lanes != 1)
		hgc_tir_verr(v, "loop variable '%s' must have type index", var->name);
}

/* After check_range and define_var: record the static range of a loop variable. */
static void loop_range(struct vctx *v, const struct hgc_tir_var *var,
		       const struct hgc_tir_expr *begin, const struct hgc_tir_expr *end,
		       const struct hgc_tir_expr *step)
{
	int64_t b, e, s;

	if (!hgc_tir_const_int(begin, &b) || !hgc_tir_const_int(end, &e) ||
	    !hgc_tir_const_int(step, &s))
		return;
	if (s <= 0) {
		hgc_tir_verr(v, "loop '%s' has step %lld, not positive", var->name, (long long)s);
		return;
	}
	if (e <= b)
		return;
	v->ranges[var->id].known = true;
	v->ranges[var->id].lo = b;
	v->ranges[var->id].hi = b + (e - 1 - b) / s * s;
}

/* for: bounds outside the loop's scope, the variable inside. */
static void check_for(struct vctx *v, const struct hgc_tir_stmt *s)
{
	size_t mark = v->undo.len;
	const struct hgc_tir_var *var = s->u.loop.var;

	check_range(v, var, s->u.loop.begin, s->u.loop.end, s->u.loop.step);
	define_var(v, var);
	loop_range(v, var, s->u.loop.begin, s->u.loop.end, s->u.loop.step);
	check_block(v, s->u.loop.body);
	pop_scope(v, mark);
}

/* parallel for: all ranges first (they may not use the indices), then the body. */
static void check_pfor(struct vctx *v, const struct hgc_tir_stmt *s)
{
	size_t mark = v->undo.len;
	int i;

	if (s->u.pfor.n < 1)
		hgc_tir_verr(v, "parallel for without indices");
	for (i = 0; i < s->u.pfor.n; i++)
		check_range(v, s->u.pfor.vars[i], s->u.pfor.begin[i], s->u.pfor.end[i],
			    s->u.pfor.step[i]);
	v->pfor_depth++;
	for (i = 0; i < s->u.pfor.n; i++) {
		define_var(v, s->u.pfor.vars[i]);
		loop_range(v, s->u.pfor.vars[i], s->u.pfor.begin[i], s->u.pfor.end[i],
			   s->u.pfor.step[i]);
	}
	check_block(v, s->u.pfor.body);
	v->pfor_depth--;
	pop_scope(v, mark);
}

/* Check that value has type want for the statement that uses it as what. */
static void expect_type(struct vctx *v, const struct hgc_tir_expr *value,
			struct hgc_tir_type want, const char *what, const char *name)
{
	char a[64], b[64];

	if (hgc_tir_vexpr(v, value) && !hgc_tir_type_eq(value->type, want))
		hgc_tir_verr(v, "%s '%s' is given %s, not %s", what, name,
			     hgc_tir_type_str(value->type, a, sizeof(a)),
			     hgc_tir_type_str(want, b, sizeof(b)));
}

/* let and assign */
static void check_let(struct vctx *v, const struct hgc_tir_stmt *s)
{
	const struct hgc_tir_var *var = s->u.let.var;

	if (s->kind == HGC_TIR_S_LET) {
		expect_type(v, s->u.let.value, var->type, "let", var->name);
		define_var(v, var);
		if (!var->nassign)
			hgc_tir_vlet(v, var, s->u.let.value);
		return;
	}
	expect_type(v, s->u.let.value, var->type, "assignment to", var->name);
	if (hgc_tir_vuse_var(v, var) && v->var_pfor[var->id] < v->pfor_depth)
		hgc_tir_verr(v, "'%s' is assigned in a parallel for but defined outside it",
			     var->name);
}

/* t[idx] = value */
static void check_store(struct vctx *v, const struct hgc_tir_stmt *s)
{
	const struct hgc_tir_tensor *t = s->u.store.tensor;
	bool good = true;
	int i;

	for (i = 0; i < s->u.store.n; i++)
		good &= hgc_tir_vexpr(v, s->u.store.idx[i]);
	if (good && hgc_tir_vuse_tensor(v, t))
		hgc_tir_vindices(v, t, s->u.store.idx, s->u.store.n, NULL);
	expect_type(v, s->u.store.value, t->elem, "store to", t->name);
}

/* tensor definition: a local with index-typed dims. */
static void check_tensor(struct vctx *v, const struct hgc_tir_stmt *s)
{
	const struct hgc_tir_tensor *t = s->u.tensor;
	int i;

	if (t->scope != HGC_TIR_LOCAL)
		hgc_tir_verr(v, "tensor '%s' is defined in a body but is not local", t->name);
	for (i = 0; i < t->ndims; i++)
		expect_type(v, t->dims[i], hgc_tir_ty(HGC_TIR_INDEX), "dimension of", t->name);
	define_tensor(v, t);
}

/* return: the value agrees with the function's return type. */
static void check_return(struct vctx *v, const struct hgc_tir_stmt *s)
{
	bool is_void = v->f->ret.kind == HGC_TIR_VOID && !v->f->ret.ptr;

	if (v->pfor_depth)
		hgc_tir_verr(v, "return inside a parallel for");
	if (!s->u.expr) {
		if (!is_void)
			hgc_tir_verr(v, "return without a value in a function returning a value");
		return;
	}
	if (is_void)
		hgc_tir_verr(v, "return with a value in a void function");
	else
		expect_type(v, s->u.expr, v->f->ret, "return of", v->f->name);
}

/* Statements that are not loops. */
static void check_simple(struct vctx *v, const struct hgc_tir_stmt *s)
{
	switch (s->kind) {
	case HGC_TIR_S_LET:
	case HGC_TIR_S_ASSIGN:
		check_let(v, s);
		break;
	case HGC_TIR_S_STORE:
		check_store(v, s);
		break;
	case HGC_TIR_S_TENSOR:
		check_tensor(v, s);
		break;
	case HGC_TIR_S_EVAL:
		if (s->u.expr && s->u.expr->kind != HGC_TIR_E_INTRIN &&
		    s->u.expr->kind != HGC_TIR_E_CALL)
			hgc_tir_verr(v, "a call statement must call something");
		else
			hgc_tir_vexpr(v, s->u.expr);
		break;
	case HGC_TIR_S_RETURN:
		check_return(v, s);
		break;
	default:
		hgc_tir_verr(v, "unknown statement kind %d", (int)s->kind);
		break;
	}
}

/* Check one statement and everything under it. */
static void check_stmt(struct vctx *v, const struct hgc_tir_stmt *s)
{
	const struct hgc_loc *saved = v->loc;

	if (!s) {
		hgc_tir_verr(v, "missing statement");
		return;
	}
	if (s->loc.file)
		v->loc = &s->loc;
	switch (s->kind) {
	case HGC_TIR_S_BLOCK:
		check_block(v, s);
		break;
	case HGC_TIR_S_FOR:
		check_for(v, s);
		break;
	case HGC_TIR_S_PFOR:
		check_pfor(v, s);
		break;
	case HGC_TIR_S_IF:
		expect_type(v, s->u.cond.cond, hgc_tir_ty(HGC_TIR_BOOL), "condition of", "if");
		v->guard++;
		check_block(v, s->u.cond.then);
		check_block(v, s->u.cond.els);
		v->guard--;
		break;
	default:
		check_simple(v, s);
		break;
	}
	v->loc = saved;
}

/* Tables sized for the module; tensor params and constants start in scope. */
static void vctx_init(struct vctx *v, const struct hgc_tir_module *m, struct hgc_diag *d)
{
	size_t nv = (size_t)m->nvars + 1, nt = (size_t)m->ntensors + 1, i;

	memset(v, 0, sizeof(*v));
	v->m = m;
	v->d = d;
	v->var_state = hgc_xcalloc(nv, 1);
	v->var_pfor = hgc_xcalloc(nv, sizeof(int));
	v->ranges = hgc_xcalloc(nv, sizeof(*v->ranges));
	v->lets = hgc_xcalloc(nv, sizeof(*v->lets));
	v->tensor_state = hgc_xcalloc(nt, 1);
	hgc_vec_init(&v->undo, sizeof(int));
	for (i = 0; i < m->consts.len; i++)
		v->tensor_state[HGC_TIR_CONST_AT(m, i)->id] = IN_SCOPE;
}

/* Free the verifier's tables. */
static void vctx_release(struct vctx *v)
{
	free(v->var_state);
	free(v->var_pfor);
	free(v->ranges);
	free(v->lets);
	free(v->tensor_state);
	hgc_vec_release(&v->undo);
}

/* Check one function in a context set up for its module. */
static void check_func(struct vctx *v, const struct hgc_tir_func *f)
{
	size_t mark = v->undo.len;
	const struct hgc_tir_param *p;
	int i;

	v->f = f;
	v->loc = NULL;
	for (i = 0; i < f->nparams; i++) {
		p = &f->params[i];
		if (p->tensor && p->tensor->scope != HGC_TIR_GLOBAL)
			hgc_tir_verr(v, "parameter '%s' must have global scope", p->tensor->name);
		if (p->tensor)
			define_tensor(v, p->tensor);
		else if (p->var)
			define_var(v, p->var);
		else
			hgc_tir_verr(v, "parameter %d is neither a tensor nor a scalar", i);
	}
	check_block(v, f->body);
	pop_scope(v, mark);
	for (i = 0; i < f->nparams; i++)
		if (f->params[i].tensor)
			v->tensor_state[f->params[i].tensor->id] = UNDEFINED;
	v->f = NULL;
}

/* Verify one function of a module. */
int hgc_tir_verify_func(const struct hgc_tir_func *f, struct hgc_diag *d)
{
	struct vctx v;

	vctx_init(&v, f->mod, d);
	check_func(&v, f);
	vctx_release(&v);
	return v.nerr ? -1 : 0;
}

/* Module-level rules: an entry, void entry and init, constant buffers with constant dims. */
static void check_module(struct vctx *v, const struct hgc_tir_module *m)
{
	const struct hgc_tir_tensor *t;
	size_t i;

	if (!m->entry)
		hgc_tir_verr(v, "the module has no entry function");
	if (m->entry && (m->entry->ret.kind != HGC_TIR_VOID || m->entry->ret.ptr))
		hgc_tir_verr(v, "entry function '%s' must return void", m->entry->name);
	if (m->init && (m->init->ret.kind != HGC_TIR_VOID || m->init->ret.ptr))
		hgc_tir_verr(v, "init function '%s' must return void", m->init->name);
	if (m->init && m->entry && m->init->nparams &&
	    m->init->nparams != m->entry->nparams)
		hgc_tir_verr(v, "init function '%s' must take no parameters or the entry's %d",
			     m->init->name, m->entry->nparams);
	for (i = 0; i < m->consts.len; i++) {
		t = HGC_TIR_CONST_AT(m, i);
		if (t->scope != HGC_TIR_CONST || hgc_tir_tensor_size(t) < 0)
			hgc_tir_verr(v, "constant buffer '%s' needs constant dims and const scope",
				     t->name);
	}
}

/* Verify a whole module; 0 when it is well formed. */
int hgc_tir_verify(const struct hgc_tir_module *m, struct hgc_diag *d)
{
	struct vctx v;
	size_t i;

	vctx_init(&v, m, d);
	check_module(&v, m);
	for (i = 0; i < m->funcs.len; i++)
		check_func(&v, HGC_TIR_FUNC(m, i));
	vctx_release(&v);
	return v.nerr ? -1 : 0;
}

/* Run a pass and, unless NDEBUG or HGC_VERIFY=0, verify what it left. */
int hgc_tir_run_pass(struct hgc_tir_module *m, const char *name,
		     int (*pass)(struct hgc_tir_module *m, struct hgc_diag *d),
		     struct hgc_diag *d)
{
	const char *env = getenv("HGC_VERIFY");
	int errs = d->nerr;

	if (pass(m, d) < 0)
		return -1;
#ifdef NDEBUG
	if (!env || strcmp(env, "1"))
		return 0;
#else
	if (env && !strcmp(env, "0"))
		return 0;
#endif
	if (hgc_tir_verify(m, d) < 0) {
		hgc_note(d, NULL, "the module is malformed after pass '%s'", name);
		return -1;
	}
	return d->nerr > errs ? -1 : 0;
}
