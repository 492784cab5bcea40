/*
 * fused_loops.c: merge the adjacent elementwise loops that a region's
 * members leave over the same row (layernorm's add and square after the
 * mean), so that the row is read and written once per group instead of
 * once per member.  Used by region.c only: on the attention scores rows
 * (fused.c's post_row members) the merged loops measured slower.  Only loops whose bodies are lets and
 * stores, and whose accesses to every tensor either loop writes use the
 * same index in both loops, are merged: iteration i of the merged loop
 * then reads exactly what the two loops in sequence would have.
 */
#include "fused_int.h"

#include <string.h>

/* Whether expressions a and b are the same (b's var vb read as a's va). */
static bool same(const struct hgc_tir_expr *a, const struct hgc_tir_expr *b,
		 const struct hgc_tir_var *va, const struct hgc_tir_var *vb)
{
	int i;

	if (a->kind != b->kind || a->op != b->op || a->nops != b->nops ||
	    a->type.kind != b->type.kind || a->type.ptr != b->type.ptr ||
	    a->type.lanes != b->type.lanes)
		return false;
	switch (a->kind) {
	case HGC_TIR_E_INT:
		return a->u.i == b->u.i;
	case HGC_TIR_E_FLOAT:
		return memcmp(&a->u.f, &b->u.f, sizeof(a->u.f)) == 0;
	case HGC_TIR_E_VAR:
		return a->u.var == b->u.var || (a->u.var == va && b->u.var == vb);
	case HGC_TIR_E_LOAD:
		if (a->u.tensor != b->u.tensor)
			return false;
		break;
	case HGC_TIR_E_ADDR:
	case HGC_TIR_E_CALL:
		return false;
	default:
		break;
	}
	for (i = 0; i < a->nops; i++)
		if (!same(a->ops[i], b->ops[i], va, vb))
			return false;
	return true;
}

/* One access of a loop body: a tensor and its index list. */
struct acc {
	struct hgc_tir_tensor *t;
	int n;
	struct hgc_tir_expr **idx;
	bool store;
};

/* The accesses of a loop body (at most cap), for the merge check. */
struct accs {
	struct acc a[64];
	int n;
	bool bad;		/* a statement or expression the merge does not handle */
};

/* Note an access (too many: give up). */
static void note(struct accs *s, struct hgc_tir_tensor *t, int n, struct hgc_tir_expr **idx,
		 bool store)
{
	if (s->n == (int)(sizeof(s->a) / sizeof(s->a[0]))) {
		s->bad = true;
		return;
	}
	s->a[s->n++] = (struct acc){ t, n, idx, store };
}

/* The loads (and addresses, which make the body not mergeable) under e. */
static void scan_expr(struct accs *s, struct hgc_tir_expr *e)
{
	int i;

	if (e->kind == HGC_TIR_E_ADDR || e->kind == HGC_TIR_E_CALL)
		s->bad = true;
	if (e->kind == HGC_TIR_E_LOAD)
		note(s, e->u.tensor, e->nops, e->ops, false);
	for (i = 0; i < e->nops; i++)
		scan_expr(s, e->ops[i]);
}

/* The accesses of loop body b: only lets and stores are allowed. */
static void scan_body(struct accs *s, struct hgc_tir_stmt *b)
{
	struct hgc_tir_stmt *x;
	int i;

	s->n = 0;
	s->bad = b->kind != HGC_TIR_S_BLOCK;
	for (i = 0; !s->bad && i < b->u.block.n; i++) {
		x = b->u.block.stmts[i];
		if (x->kind == HGC_TIR_S_LET) {
			scan_expr(s, x->u.let.value);
		} else if (x->kind == HGC_TIR_S_STORE) {
			scan_expr(s, x->u.store.value);
			note(s, x->u.store.tensor, x->u.store.n, x->u.store.idx, true);
		} else {
			s->bad = true;
		}
	}
}

/* Whether tensor t is stored to among the accesses of s. */
static bool writes(const struct accs *s, const struct hgc_tir_tensor *t)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->a[i].store && s->a[i].t == t)
			return true;
	return false;
}

/* Whether every pair of accesses x (of loop a) and y (of loop b) to a
   tensor either loop writes has the same index. */
static bool independent(const struct accs *a, const struct accs *b,
			const struct hgc_tir_var *va, const struct hgc_tir_var *vb)
{
	int i, j, k;

	for (i = 0; i < a->n; i++)
		for (j = 0; j < b->n; j++) {
			const struct acc *x = &a->a[i], *y = &b->a[j];

			if (x->t != y->t || (!writes(a, x->t) && !writes(b, x->t)))
				continue;
			if (x->n != y->n)
				return false;
			for (k = 0; k < x->n; k++)
				if (!same(x->idx[k], y->idx[k], va, vb))
					return false;
		}
	return true;
}

/* Whether loop expression bounds are equal constants (step NULL or 1). */
static bool same_range(const struct hgc_tir_stmt *a, const struct hgc_tir_stmt *b)
{
	const struct hgc_tir_expr *sa = a->u.loop.step, *sb = b->u.loop.step;

	return a->u.loop.begin->kind == HGC_TIR_E_INT && b->u.loop.begin->kind == HGC_TIR_E_INT &&
	       a->u.loop.end->kind == HGC_TIR_E_INT && b->u.loop.end->kind == HGC_TIR_E_INT &&
	       a->u.loop.begin->u.i == b->u.loop.begin->u.i &&
	       a->u.loop.end->u.i == b->u.loop.end->u.i &&
	       (!sa || (sa->kind == HGC_TIR_E_INT && sa->u.i == 1)) &&
	       (!sb || (sb->kind == HGC_TIR_E_INT && sb->u.i == 1));
}

/* Mutator: b's loop variable read as a's. */
static struct hgc_tir_expr *rename_var(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	struct hgc_tir_var **vv = mu->ctx;

	if (e->kind == HGC_TIR_E_VAR && e->u.var == vv[1])
		return hgc_tir_ref(mu->m, vv[0]);
	return e;
}

/* Whether loop b can join loop a (both FORs, same range, mergeable bodies). */
static bool can_merge(struct hgc_tir_stmt *a, struct hgc_tir_stmt *b)
{
	static _Thread_local struct accs sa, sb;

	if (a->kind != HGC_TIR_S_FOR || b->kind != HGC_TIR_S_FOR || !same_range(a, b))
		return false;
	scan_body(&sa, a->u.loop.body);
	scan_body(&sb, b->u.loop.body);
	return !sa.bad && !sb.bad && independent(&sa, &sb, a->u.loop.var, b->u.loop.var);
}

/* Merge adjacent mergeable loops among block's statements from index from. */
void hgc_fused_merge_loops(struct hgc_tir_module *m, struct hgc_tir_stmt *block, int from)
{
	struct hgc_tir_stmt **s = block->u.block.stmts, *a, *b, *body;
	struct hgc_tir_mutator mu = { .expr = rename_var, .m = m };
	struct hgc_tir_var *vv[2];
	int i = from, j;

	while (i + 1 < block->u.block.n) {
		a = s[i];
		b = s[i + 1];
		if (!can_merge(a, b)) {
			i++;
			continue;
		}
		vv[0] = a->u.loop.var;
		vv[1] = b->u.loop.var;
		mu.ctx = vv;
		body = b->u.loop.body;
		for (j = 0; j < body->u.block.n; j++)
			hgc_tir_append(a->u.loop.body,
				       hgc_tir_mutate_stmt(body->u.block.stmts[j], &mu));
		memmove(&s[i + 1], &s[i + 2], (size_t)(block->u.block.n - i - 2) * sizeof(*s));
		block->u.block.n--;
	}
}
