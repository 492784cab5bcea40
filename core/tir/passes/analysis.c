/*
 * analysis.c: what several TIR passes need to know about a function:
 * the affine form of an index (immutable lets substituted, loop variables
 * with constant ranges), structural equality of expressions, and a scan
 * that numbers statements in order and lists every tensor access with its
 * innermost loop and every local tensor's definition.
 */
#include "passes_int.h"

#include <stdlib.h>
#include <string.h>

/* Record a loop over [b, b + span) (b not constant, step 1) as relative to b. */
static void rel_range(struct hgc_tp_vars *v, struct hgc_tir_var *var, struct hgc_tir_expr *b,
		      struct hgc_tir_expr *e, struct hgc_tir_expr *s)
{
	int64_t span, step = 1;

	if ((s && (!hgc_tir_const_int(s, &step) || step != 1)) || e->kind != HGC_TIR_E_BINARY ||
	    e->op != HGC_TIR_ADD || e->nops != 2 || !hgc_tp_expr_eq(e->ops[0], b) ||
	    !hgc_tir_const_int(e->ops[1], &span) || span < 1)
		return;
	v->rel_base[var->id] = b;
	v->rel_span[var->id] = span;
}

/* Record the range of a loop variable when its bounds are constants (or
   its end is its begin plus a constant: rel_range). */
static void loop_range(struct hgc_tp_vars *v, struct hgc_tir_var *var, struct hgc_tir_expr *b,
		       struct hgc_tir_expr *e, struct hgc_tir_expr *s)
{
	int64_t lo, end, step = 1;

	if (!hgc_tir_const_int(b, &lo)) {
		rel_range(v, var, b, e, s);
		return;
	}
	if (!hgc_tir_const_int(e, &end) || (s && !hgc_tir_const_int(s, &step)) || step <= 0 ||
	    end <= lo)
		return;
	v->known[var->id] = true;
	v->lo[var->id] = lo;
	v->hi[var->id] = lo + (end - 1 - lo) / step * step;
	v->step[var->id] = step;
}

/* Visitor: lets and loop ranges. */
static bool vars_pre(struct hgc_tir_visitor *vis, struct hgc_tir_stmt *s)
{
	struct hgc_tp_vars *v = vis->ctx;
	int i;

	if (s->kind == HGC_TIR_S_LET && s->u.let.var->nassign == 0)
		v->let[s->u.let.var->id] = s->u.let.value;
	else if (s->kind == HGC_TIR_S_FOR)
		loop_range(v, s->u.loop.var, s->u.loop.begin, s->u.loop.end, s->u.loop.step);
	else if (s->kind == HGC_TIR_S_PFOR)
		for (i = 0; i < s->u.pfor.n; i++)
			loop_range(v, s->u.pfor.vars[i], s->u.pfor.begin[i], s->u.pfor.end[i],
				   s->u.pfor.step[i]);
	return true;
}

/* The facts about f's variables (the module's var ids size the tables). */
void hgc_tp_vars_init(struct hgc_tp_vars *v, struct hgc_tir_module *m, struct hgc_tir_func *f)
{
	struct hgc_tir_visitor vis = { .stmt_pre = vars_pre, .ctx = v };
	size_t n = (size_t)m->nvars + 1;

	v->n = m->nvars;
	v->let = hgc_xcalloc(n, sizeof(*v->let));
	v->known = hgc_xcalloc(n, sizeof(*v->known));
	v->lo = hgc_xcalloc(n, sizeof(*v->lo));
	v->hi = hgc_xcalloc(n, sizeof(*v->hi));
	v->step = hgc_xcalloc(n, sizeof(*v->step));
	v->rel_base = hgc_xcalloc(n, sizeof(*v->rel_base));
	v->rel_span = hgc_xcalloc(n, sizeof(*v->rel_span));
	hgc_tir_walk_stmt(f->body, &vis);
}

/* Free the tables. */
void hgc_tp_vars_release(struct hgc_tp_vars *v)
{
	free(v->let);
	free(v->known);
	free(v->lo);
	free(v->hi);
	free(v->step);
	free(v->rel_base);
	free(v->rel_span);
}

/* hgc_tp_each_block's state while it walks one function. */
struct each_block {
	struct hgc_tir_module *m;
	struct hgc_tp_vars v;
	hgc_tp_block_fn *fn;
	int changes;
};

/* After a block's statements were visited: fn on it. */
static void each_block_post(struct hgc_tir_visitor *vis, struct hgc_tir_stmt *b)
{
	struct each_block *w = vis->ctx;

	if (b->kind == HGC_TIR_S_BLOCK)
		w->changes += w->fn(w->m, &w->v, b);
}

int hgc_tp_each_block(struct hgc_tir_module *m, hgc_tp_block_fn *fn)
{
	struct each_block w = { .m = m, .fn = fn };
	struct hgc_tir_visitor vis = { .stmt_post = each_block_post, .ctx = &w };

	for (size_t i = 0; i < m->funcs.len; i++) {
		struct hgc_tir_func *f = HGC_VEC_AT(&m->funcs, struct hgc_tir_func *, i);

		hgc_tp_vars_init(&w.v, m, f);
		hgc_tir_walk_stmt(f->body, &vis);
		hgc_tp_vars_release(&w.v);
	}
	return w.changes;
}

/* a += c * b (passes_int.h); false when b is not affine, on overflow or too many terms. */
bool hgc_tp_aff_add(struct hgc_tp_aff *a, const struct hgc_tp_aff *b, int64_t c)
{
	int64_t x;
	int i, j;

	if (!b->ok || __builtin_mul_overflow(b->c0, c, &x) || __builtin_add_overflow(a->c0, x, &a->c0))
		return false;
	for (i = 0; i < b->n; i++) {
		if (__builtin_mul_overflow(b->t[i].c, c, &x))
			return false;
		for (j = 0; j < a->n && a->t[j].var != b->t[i].var; j++)
			;
		if (j == a->n) {
			if (a->n == HGC_TP_AFF_MAX)
				return false;
			a->t[a->n].var = b->t[i].var;
			a->t[a->n++].c = 0;
		}
		if (__builtin_add_overflow(a->t[j].c, x, &a->t[j].c))
			return false;
	}
	return true;
}

/* The affine form of e (defined below). */
static struct hgc_tp_aff aff(const struct hgc_tp_vars *v, const struct hgc_tir_expr *e,
			     int depth);

/* The range of a over the loop ranges; false when a variable's range is unknown. */
static bool aff_range(const struct hgc_tp_vars *v, const struct hgc_tp_aff *a, int64_t *lo,
		      int64_t *hi)
{
	*lo = *hi = a->c0;
	for (int i = 0; i < a->n; i++) {
		int id = a->t[i].var->id;
		int64_t c = a->t[i].c;

		if (id >= v->n || !v->known[id])
			return false;
		*lo += c > 0 ? c * v->lo[id] : c * v->hi[id];
		*hi += c > 0 ? c * v->hi[id] : c * v->lo[id];
	}
	return true;
}

/* x / c and x % c for a constant c > 0 when x stays within one multiple of c. */
static struct hgc_tp_aff divmod(const struct hgc_tp_vars *v, const struct hgc_tir_expr *e,
				int depth)
{
	struct hgc_tp_aff r = { .ok = false }, x = aff(v, e->ops[0], depth + 1);
	int64_t c, lo, hi, q;

	if (!x.ok || !hgc_tir_const_int(e->ops[1], &c) || c <= 0 || !aff_range(v, &x, &lo, &hi) ||
	    lo < 0 || lo / c != hi / c)
		return r;
	q = lo / c;
	if (e->op == HGC_TIR_DIV) {
		r.ok = true;
		r.c0 = q;
		return r;
	}
	x.c0 -= q * c;
	return x;
}

/* The affine form of e, depth bounding let chains. */
static struct hgc_tp_aff aff(const struct hgc_tp_vars *v, const struct hgc_tir_expr *e,
			     int depth)
{
	struct hgc_tp_aff r = { .ok = false }, a, b;

	if (depth > 64 || e->type.ptr || e->type.lanes != 1 || !hgc_tir_type_is_int(e->type))
		return r;
	r.ok = true;
	switch (e->kind) {
	case HGC_TIR_E_INT:
		r.c0 = e->u.i;
		return r;
	case HGC_TIR_E_VAR:
		if (e->u.var->id < v->n && v->let[e->u.var->id])
			return aff(v, v->let[e->u.var->id], depth + 1);
		if (e->u.var->id < v->n && v->known[e->u.var->id] &&
		    v->lo[e->u.var->id] == v->hi[e->u.var->id]) {
			r.c0 = v->lo[e->u.var->id];
			return r;
		}
		r.n = 1;
		r.t[0].var = e->u.var;
		r.t[0].c = 1;
		return r;
	case HGC_TIR_E_BINARY:
		if (e->op == HGC_TIR_DIV || e->op == HGC_TIR_MOD)
			return divmod(v, e, depth);
		break;
	default:
		r.ok = false;
		return r;
	}
	a = aff(v, e->ops[0], depth + 1);
	b = aff(v, e->ops[1], depth + 1);
	if (!a.ok || !b.ok)
		r.ok = false;
	else if (e->op == HGC_TIR_ADD)
		r.ok = hgc_tp_aff_add(&r, &a, 1) && hgc_tp_aff_add(&r, &b, 1);
	else if (e->op == HGC_TIR_SUB)
		r.ok = hgc_tp_aff_add(&r, &a, 1) && hgc_tp_aff_add(&r, &b, -1);
	else if (e->op == HGC_TIR_MUL && b.n == 0)
		r.ok = hgc_tp_aff_add(&r, &a, b.c0);
	else if (e->op == HGC_TIR_MUL && a.n == 0)
		r.ok = hgc_tp_aff_add(&r, &b, a.c0);
	else
		r.ok = false;
	return r;
}

/* e in affine form over the variables that are not immutable lets. */
struct hgc_tp_aff hgc_tp_affine(const struct hgc_tp_vars *v, const struct hgc_tir_expr *e)
{
	struct hgc_tp_aff r = aff(v, e, 0);
	int i, n = 0;

	for (i = 0; i < r.n; i++)
		if (r.t[i].c)
			r.t[n++] = r.t[i];
	r.n = n;
	return r;
}

/* The coefficient of var in a. */
int64_t hgc_tp_aff_coef(const struct hgc_tp_aff *a, const struct hgc_tir_var *var)
{
	for (int i = 0; i < a->n; i++)
		if (a->t[i].var == var)
			return a->t[i].c;
	return 0;
}

/* Structural equality: same kinds, types, payloads and operands. */
bool hgc_tp_expr_eq(const struct hgc_tir_expr *a, const struct hgc_tir_expr *b)
{
	return hgc_tp_expr_eq_renamed(a, b, NULL, NULL, 0);
}

/* The variable var stands for after a renaming: to[k] for from[k], else var itself. */
const struct hgc_tir_var *hgc_tp_renamed(const struct hgc_tir_var *var,
					 struct hgc_tir_var *const *from,
					 struct hgc_tir_var *const *to, int n)
{
	for (int k = 0; k < n; k++)
		if (from[k] == var)
			return to[k];
	return var;
}

/* Structural equality with b's variables from[k] read as to[k]. */
bool hgc_tp_expr_eq_renamed(const struct hgc_tir_expr *a, const struct hgc_tir_expr *b,
			    struct hgc_tir_var *const *from, struct hgc_tir_var *const *to, int n)
{
	if (!a || !b)
		return a == b;
	if (a == b && !n)
		return true;
	if (a->kind != b->kind || !hgc_tir_type_eq(a->type, b->type) ||
	    a->op != b->op || a->nops != b->nops || a->callee != b->callee)
		return false;
	switch (a->kind) {
	case HGC_TIR_E_INT: if (a->u.i != b->u.i) return false; break;
	case HGC_TIR_E_FLOAT: if (memcmp(&a->u.f, &b->u.f, sizeof(a->u.f))) return false; break;
	case HGC_TIR_E_VAR:
		if (a->u.var != hgc_tp_renamed(b->u.var, from, to, n))
			return false;
		break;
	case HGC_TIR_E_LOAD: case HGC_TIR_E_ADDR:
		if (a->u.tensor != b->u.tensor) return false;
		break;
	case HGC_TIR_E_CALL: if (!a->callee && strcmp(a->u.sym, b->u.sym)) return false; break;
	default: break;
	}
	if (a->kind == HGC_TIR_E_ADDR &&
	    memcmp(a->extents, b->extents, (size_t)a->nops * sizeof(*a->extents)))
		return false;
	for (int i = 0; i < a->nops; i++)
		if (!hgc_tp_expr_eq_renamed(a->ops[i], b->ops[i], from, to, n))
			return false;
	return true;
}

/* Whether e is arithmetic only: no load, address, call or intrinsic (NULL: yes). */
bool hgc_tp_pure(const struct hgc_tir_expr *e)
{
	if (!e)
		return true;
	if (e->kind == HGC_TIR_E_LOAD || e->kind == HGC_TIR_E_ADDR ||
	    e->kind == HGC_TIR_E_INTRIN || e->kind == HGC_TIR_E_CALL)
		return false;
	for (int i = 0; i < e->nops; i++)
		if (!hgc_tp_pure(e->ops[i]))
			return false;
	return true;
}

/* The scan's walk: open loops and blocks, the statement being visited. */
struct scanner {
	struct hgc_tp_scan *sc;
	struct hgc_vec blocks;		/* struct hgc_tir_stmt *: open blocks */
	int loop;			/* innermost open loop, or -1 */
	struct hgc_tir_stmt *s;		/* the statement whose expressions are visited */
	int pos;
};

/* Add an access of the current statement. */
static void add_access(struct scanner *w, struct hgc_tir_tensor *t, int kind, int n,
		       struct hgc_tir_expr **idx, const int64_t *ext)
{
	struct hgc_tp_access *a = hgc_vec_push(&w->sc->acc);

	a->t = t;
	a->kind = kind;
	a->n = n;
	a->idx = idx;
	a->ext = ext;
	a->s = w->s;
	a->pos = w->pos;
	a->loop = w->loop;
	if (kind == HGC_TP_ADDR && w->s->kind == HGC_TIR_S_STORE)
		a->into = w->s->u.store.tensor;
	if (kind == HGC_TP_ADDR &&
	    (w->s->kind == HGC_TIR_S_LET || w->s->kind == HGC_TIR_S_ASSIGN))
		a->escapes = true;
}

/* Number a statement; open loops and blocks; note stores and definitions. */
static bool scan_pre(struct hgc_tir_visitor *vis, struct hgc_tir_stmt *s)
{
	struct scanner *w = vis->ctx;
	struct hgc_tp_scan *sc = w->sc;
	struct hgc_tp_loop *l;

	w->s = s;
	w->pos = sc->npos++;
	if (s->kind == HGC_TIR_S_FOR || s->kind == HGC_TIR_S_PFOR) {
		l = hgc_vec_push(&sc->loops);
		l->s = s;
		l->start = w->pos;
		l->parent = w->loop;
		w->loop = (int)sc->loops.len - 1;
	} else if (s->kind == HGC_TIR_S_BLOCK) {
		*(struct hgc_tir_stmt **)hgc_vec_push(&w->blocks) = s;
	} else if (s->kind == HGC_TIR_S_STORE) {
		add_access(w, s->u.store.tensor, HGC_TP_STORE, s->u.store.n, s->u.store.idx, NULL);
	} else if (s->kind == HGC_TIR_S_TENSOR && w->blocks.len) {
		struct hgc_tp_def *d = &sc->defs[s->u.tensor->id];

		d->s = s;
		d->block = HGC_VEC_AT(&w->blocks, struct hgc_tir_stmt *, w->blocks.len - 1);
		d->pos = w->pos;
		d->loop = w->loop;
	}
	return true;
}

/* Close loops and blocks. */
static void scan_post(struct hgc_tir_visitor *vis, struct hgc_tir_stmt *s)
{
	struct scanner *w = vis->ctx;

	if (s->kind == HGC_TIR_S_FOR || s->kind == HGC_TIR_S_PFOR) {
		HGC_TP_LOOP(w->sc, w->loop)->end = w->sc->npos - 1;
		w->loop = HGC_TP_LOOP(w->sc, w->loop)->parent;
	} else if (s->kind == HGC_TIR_S_BLOCK) {
		w->blocks.len--;
	}
}

/* Loads and slice addresses. */
static void scan_expr(struct hgc_tir_visitor *vis, struct hgc_tir_expr *e)
{
	struct scanner *w = vis->ctx;

	if (e->kind == HGC_TIR_E_LOAD)
		add_access(w, e->u.tensor, HGC_TP_LOAD, e->nops, e->ops, NULL);
	else if (e->kind == HGC_TIR_E_ADDR)
		add_access(w, e->u.tensor, HGC_TP_ADDR, e->nops, e->ops, e->extents);
}

/* Scan f: statement positions in order, loops, accesses, definitions. */
void hgc_tp_scan(struct hgc_tp_scan *sc, struct hgc_tir_module *m, struct hgc_tir_func *f)
{
	struct scanner w = { .sc = sc, .loop = -1 };
	struct hgc_tir_visitor vis = { scan_pre, scan_post, scan_expr, &w };

	memset(sc, 0, sizeof(*sc));
	sc->f = f;
	hgc_vec_init(&sc->loops, sizeof(struct hgc_tp_loop));
	hgc_vec_init(&sc->acc, sizeof(struct hgc_tp_access));
	hgc_vec_init(&w.blocks, sizeof(struct hgc_tir_stmt *));
	sc->defs = hgc_xcalloc((size_t)m->ntensors + 1, sizeof(*sc->defs));
	hgc_tir_walk_stmt(f->body, &vis);
	hgc_vec_release(&w.blocks);
}

/* Free the scan's arrays. */
void hgc_tp_scan_release(struct hgc_tp_scan *sc)
{
	hgc_vec_release(&sc->loops);
	hgc_vec_release(&sc->acc);
	free(sc->defs);
}

/* Whether loop l is outer or nested in it. */
bool hgc_tp_loop_within(const struct hgc_tp_scan *sc, int l, int outer)
{
	for (; l >= 0; l = HGC_TP_LOOP(sc, l)->parent)
		if (l == outer)
			return true;
	return outer < 0;
}

/* The outermost parallel for among l and the loops around it, or -1. */
int hgc_tp_outer_pfor(const struct hgc_tp_scan *sc, int l)
{
	int p = -1;

	for (; l >= 0; l = HGC_TP_LOOP(sc, l)->parent)
		if (HGC_TP_LOOP(sc, l)->s->kind == HGC_TIR_S_PFOR)
			p = l;
	return p;
}

/* Whether l or a loop around it is a parallel for. */
bool hgc_tp_in_pfor(const struct hgc_tp_scan *sc, int l)
{
	return hgc_tp_outer_pfor(sc, l) >= 0;
}

/* Whether var is one of vars. */
static bool among(const struct hgc_tir_var *var, struct hgc_tir_var *const *vars, int n)
{
	for (int i = 0; i < n; i++)
		if (vars[i] == var)
			return true;
	return false;
}

/* Mixed radix in one dim: sorted by |c|, each coefficient times the step spans at least
   what the smaller ones and the width cover.  Marks the variables seen. */
static bool radix_dim(const struct hgc_tp_vars *v, const struct hgc_tp_aff *a, int64_t width,
		      struct hgc_tir_var *const *vars, int nvars, bool *seen)
{
	int idx[HGC_TP_AFF_MAX], n = 0;
	int64_t span = width;

	for (int i = 0; i < a->n; i++)
		if (among(a->t[i].var, vars, nvars))
			idx[n++] = i;
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && llabs(a->t[idx[j]].c) < llabs(a->t[idx[j - 1]].c); j--) {
			int x = idx[j];

			idx[j] = idx[j - 1];
			idx[j - 1] = x;
		}
	for (int i = 0; i < n; i++) {
		int id = a->t[idx[i]].var->id;
		int64_t c = llabs(a->t[idx[i]].c);

		if (v->known[id] && v->lo[id] == v->hi[id])
			continue;
		if (!v->known[id] || c * v->step[id] < span)
			return false;
		span += c * (v->hi[id] - v->lo[id]);
		for (int k = 0; k < nvars; k++)
			if (vars[k] == a->t[idx[i]].var)
				seen[k] = true;
	}
	return true;
}

/* Distinct values of vars select disjoint slices (see passes_int.h). */
bool hgc_tp_disjoint(const struct hgc_tp_vars *v, int ndims, const struct hgc_tp_aff *base,
		     const int64_t *width, struct hgc_tir_var *const *vars, int nvars)
{
	bool seen[64] = {false};

	if (nvars > 64)
		return false;
	for (int d = 0; d < ndims; d++)
		if (!radix_dim(v, &base[d], width[d], vars, nvars, seen))
			return false;
	for (int k = 0; k < nvars; k++) {
		int id = vars[k]->id;

		if (!seen[k] && !(v->known[id] && v->lo[id] == v->hi[id]))
			return false;
	}
	return true;
}

/* The loop variables of loop s into vars; their count. */
int hgc_tp_loop_vars(struct hgc_tir_stmt *s, struct hgc_tir_var **vars, int cap)
{
	if (s->kind == HGC_TIR_S_FOR) {
		vars[0] = s->u.loop.var;
		return 1;
	}
	for (int i = 0; i < s->u.pfor.n && i < cap; i++)
		vars[i] = s->u.pfor.vars[i];
	return s->u.pfor.n < cap ? s->u.pfor.n : cap;
}

/* Mark the variables of loops strictly inside loop l. */
void hgc_tp_mark_inner(const struct hgc_tp_scan *sc, int l, bool *inner, int nvars)
{
	struct hgc_tir_var *vars[64];

	memset(inner, 0, (size_t)nvars + 1);
	for (size_t i = 0; i < sc->loops.len; i++) {
		if ((int)i == l || !hgc_tp_loop_within(sc, (int)i, l))
			continue;
		int n = hgc_tp_loop_vars(HGC_TP_LOOP(sc, i)->s, vars, 64);

		for (int k = 0; k < n; k++)
			inner[vars[k]->id] = true;
	}
}

/*
 * Replace in a every term c * k of an inner loop variable k over [base, base +
 * span) (rel_base) by c * base, adding c * [0, span) to [*lo, *hi]: the
 * brgemm batch loop (k in ks..ks + BS) then counts as ks plus a bounded rest.
 * False when a base is not affine or the forms grow too large.
 */
static bool expand_rel(const struct hgc_tp_vars *v, const bool *inner, struct hgc_tp_aff *a,
		       int64_t *lo, int64_t *hi)
{
	int rounds = 0;

	for (int i = 0; i < a->n; i++) {
		int id = a->t[i].var->id;
		int64_t c = a->t[i].c;
		struct hgc_tp_aff b;

		if (id >= v->n || !inner[id] || v->known[id] || !v->rel_base[id])
			continue;
		if (++rounds > HGC_TP_AFF_MAX)
			return false;
		b = hgc_tp_affine(v, v->rel_base[id]);
		a->t[i] = a->t[--a->n];
		if (!b.ok || !hgc_tp_aff_add(a, &b, c))
			return false;
		*(c > 0 ? hi : lo) += c * (v->rel_span[id] - 1);
		i = -1;		/* the base's terms may be relative too */
	}
	return true;
}

/* Split an index into its fixed part (*fixed) and the range of the rest. */
bool hgc_tp_split(const struct hgc_tp_vars *v, const bool *inner, const struct hgc_tir_expr *e,
		  int64_t ext, struct hgc_tp_aff *fixed, int64_t *lo, int64_t *hi)
{
	struct hgc_tp_aff a = hgc_tp_affine(v, e);
	int64_t rlo = 0, rhi = 0;

	if (!a.ok || !expand_rel(v, inner, &a, &rlo, &rhi))
		return false;
	memset(fixed, 0, sizeof(*fixed));
	fixed->ok = true;
	*lo = a.c0 + rlo;
	*hi = a.c0 + rhi;
	for (int i = 0; i < a.n; i++) {
		int id = a.t[i].var->id;
		int64_t c = a.t[i].c;

		if (!inner[id]) {
			fixed->t[fixed->n++] = a.t[i];
			continue;
		}
		if (!v->known[id] || a.t[i].var->type.kind != HGC_TIR_INDEX)
			return false;
		*lo += c > 0 ? c * v->lo[id] : c * v->hi[id];
		*hi += c > 0 ? c * v->hi[id] : c * v->lo[id];
	}
	*hi += ext - 1;
	return true;
}

/* Same terms, same coefficients (order may differ). */
bool hgc_tp_same_terms(const struct hgc_tp_aff *a, const struct hgc_tp_aff *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (hgc_tp_aff_coef(b, a->t[i].var) != a->t[i].c)
			return false;
	return true;
}

/* The innermost loop around both a and b, or -1. */
int hgc_tp_common(const struct hgc_tp_scan *sc, int a, int b)
{
	for (; a >= 0; a = HGC_TP_LOOP(sc, a)->parent)
		if (hgc_tp_loop_within(sc, b, a))
			return a;
	return -1;
}

