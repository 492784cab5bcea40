/*
 * emit.c: one template as C: the tables of core/lower/tmpl.h (symbols,
 * parameters, declaration order, constraints, anchors), the static
 * functions (domains, lets, constraints, layouts, costs) and the
 * `const struct hgc_tmpl hgc_tmpl_NAME` that ties them together.
 */
#include <string.h>

#include "dsl/tmplc/tmplc.h"
#include "grammar.h"

static const char *const sym_kinds[] = {"HGC_TMPL_SHAPE", "HGC_TMPL_OPSYM", "HGC_TMPL_BUILTIN",
					"HGC_TMPL_PARAM", "HGC_TMPL_LET"};
static const char *const domains[] = {"HGC_TMPL_ONE_OF", "HGC_TMPL_RANGE",
				      "HGC_TMPL_DIVISOR_OF", "HGC_TMPL_GRID"};
static const char *const ldims[] = {"HGC_TMPL_WHOLE", "HGC_TMPL_OUTER", "HGC_TMPL_INNER",
				    "HGC_TMPL_PAD", "HGC_TMPL_PACK"};

/* The slot of the static symbol called name (n bytes, or -1: NUL-terminated). */
static int slot_of(struct em *em, const char *name, int n)
{
	const struct hgc_tsym *s;
	size_t i;

	if (n < 0)
		n = (int)strlen(name);
	for (i = 0; i < em->s->statics.len; i++) {
		s = HGC_TSEM_STATIC(em->s, i);
		if ((int)strlen(s->name) == n && !memcmp(s->name, name, (size_t)n))
			return s->slot;
	}
	hgc_bug("tmplc: no symbol '%.*s'", n, name);
}

/* The static symbols: one row per environment slot. */
static void syms(struct em *em)
{
	const struct hgc_tsym *s;
	size_t i;

	em_line(em, "static const struct hgc_tmpl_sym %ssyms[] = {", em->pfx);
	for (i = 0; i < em->s->statics.len; i++) {
		s = HGC_TSEM_STATIC(em->s, i);
		fprintf(em->out, "\t{\"%s\", %s, %d, %d, %d, ", s->name, sym_kinds[s->kind],
			s->kind == HGC_TSYM_SHAPE ? s->operand : 0,
			s->kind == HGC_TSYM_SHAPE ? s->dim : 0,
			s->kind == HGC_TSYM_PARAM ? s->index : 0);
		if (s->kind == HGC_TSYM_LET)
			em_str(em, hgc_tsem_text(em->arena, s->def));
		else
			fputs("NULL", em->out);
		fputs("},\n", em->out);
	}
	em_line(em, "};");
}

/* The constraints listed with declaration d, as text. */
static const char *constraints_of(struct em *em, int d)
{
	const struct hgc_tconstraint *t;
	const char *txt = "";
	size_t i;

	for (i = 0; i < em->s->constraints.len; i++) {
		t = HGC_TSEM_CONSTRAINT(em->s, i);
		if (t->param == d && t->c && (!i || HGC_TSEM_CONSTRAINT(em->s, i - 1)->c != t->c))
			txt = hgc_arena_printf(em->arena, "%s%s%s", txt, *txt ? ", " : "",
					       hgc_tsem_text(em->arena, t->c));
	}
	return txt;
}

/* The parameter declarations and the declaration order. */
static void params(struct em *em)
{
	const struct hgc_tparam *p;
	const struct hgc_tmpl_step *st;
	size_t i;
	int j;

	em_line(em, "static const struct hgc_tmpl_param %sparams[] = {", em->pfx);
	for (i = 0; i < em->s->params.len; i++) {
		p = HGC_TSEM_PARAM(em->s, i);
		fprintf(em->out, "\t{%d, {", p->nsyms);
		for (j = 0; j < p->nsyms; j++)
			fprintf(em->out, "%s%d", j ? ", " : "", p->syms[j]->slot);
		fprintf(em->out, "}, %s, ", domains[p->kind]);
		em_str(em, hgc_tsem_text(em->arena, p->domain));
		fputs(", ", em->out);
		em_str(em, constraints_of(em, p->index));
		fputs(", ", em->out);
		em_loc(em, &p->decl->a->loc);
		fputs("},\n", em->out);
	}
	if (!em->s->params.len)
		em_line(em, "\t{0, {0}, HGC_TMPL_ONE_OF, \"\", \"\", {0}},");
	em_line(em, "};");
	em_line(em, "static const struct hgc_tmpl_step %ssteps[] = {", em->pfx);
	for (i = 0; i < em->s->steps.len; i++) {
		st = &HGC_VEC_AT(&em->s->steps, struct hgc_tmpl_step, i);
		em_line(em, "\t{%s, %d},", st->param ? "true" : "false", st->index);
	}
	if (!em->s->steps.len)
		em_line(em, "\t{false, 0},");
	em_line(em, "};");
}

/* The constraints and the anchors. */
static void constraints_anchors(struct em *em)
{
	static const char *const keys[] = {"working_set", "calls", "accesses"};
	const struct hgc_tconstraint *t;
	const struct hgc_tanchor *a;
	size_t i;
	int k;

	em_line(em, "static const struct hgc_tmpl_constraint %sconstraints[] = {", em->pfx);
	for (i = 0; i < em->s->constraints.len; i++) {
		t = HGC_TSEM_CONSTRAINT(em->s, i);
		fputs("\t{", em->out);
		em_str(em, t->text);
		fprintf(em->out, ", %d, ", t->param);
		em_loc(em, &t->loc);
		fputs("},\n", em->out);
	}
	em_line(em, "\t{NULL, -1, {0}},");
	em_line(em, "};");
	em_line(em, "static const struct hgc_tmpl_anchor %sanchors[] = {", em->pfx);
	for (i = 0; i < em->s->anchors.len; i++) {
		a = HGC_TSEM_ANCHOR(em->s, i);
		fprintf(em->out, "\t{\"%s\", %s, %d, %d, ", a->name, a->post ? "true" : "false",
			a->operand->index, a->rank);
		em_str(em, hgc_tsem_text(em->arena, a->decl->a));
		fputs(", {", em->out);
		for (k = 0; k < HGC_TMPL_NCOST; k++) {
			fputs(k ? ", " : "", em->out);
			em_str(em, a->cost[k] ? hgc_tsem_text(em->arena, a->cost[k])
					      : hgc_arena_printf(em->arena, "%s * %s", keys[0], keys[1]));
		}
		fputs("}, ", em->out);
		em_loc(em, &a->decl->loc);
		fputs("},\n", em->out);
	}
	em_line(em, "\t{NULL, false, 0, 0, NULL, {NULL, NULL, NULL}, {0}},");
	em_line(em, "};");
}

/* The domain function: the values of each declaration's domain. */
static void domain_fn(struct em *em)
{
	const struct hgc_tparam *p;
	const struct hgc_ast *a;
	size_t i;
	int n;

	em_line(em, "/* The values of the domain of declaration p into out. */");
	em_line(em, "static int %sdomain(struct hgc_tmpl_env *e, int p, int64_t *out, int cap)",
		em->pfx);
	em_line(em, "{");
	em_line(em, "\tswitch (p) {");
	for (i = 0; i < em->s->params.len; i++) {
		p = HGC_TSEM_PARAM(em->s, i);
		em_line(em, "\tcase %zu: {", i);
		a = p->domain->a;
		if (p->kind == HGC_TMPL_ONE_OF) {
			fputs("\t\tconst int64_t x[] = {", em->out);
			for (n = 0; a; a = a->next, n++) {
				fputs(n ? ", " : "", em->out);
				em_sx(em, a);
			}
			fprintf(em->out, "};\n\n\t\treturn hgc_tmpl_dom_list(e, x, %d, out, cap);\n", n);
		} else if (p->kind == HGC_TMPL_RANGE) {
			fputs("\t\treturn hgc_tmpl_dom_range(e, ", em->out);
			em_sx(em, a);
			fputs(", ", em->out);
			em_sx(em, a->next);
			fputs(", ", em->out);
			if (a->next->next)
				em_sx(em, a->next->next);
			else
				fputs("1", em->out);
			fputs(", out, cap);\n", em->out);
		} else {
			if (p->kind == HGC_TMPL_GRID)
				fprintf(em->out, "\t\treturn hgc_tmpl_dom_grid(e, %d, ", p->nsyms);
			else
				fputs("\t\treturn hgc_tmpl_dom_divisors(e, ", em->out);
			em_sx(em, a);
			fputs(", out, cap);\n", em->out);
		}
		em_line(em, "\t}");
	}
	em_line(em, "\t}");
	em_line(em, "\t(void)e, (void)out, (void)cap;");
	em_line(em, "\treturn 0;");
	em_line(em, "}");
}

/* The let function: the value of each top-level let from the slots before it. */
static void let_fn(struct em *em)
{
	const struct hgc_tsym *s;
	size_t i;

	em_line(em, "/* Compute the let of slot sym. */");
	em_line(em, "static void %slet(struct hgc_tmpl_env *e, int sym)", em->pfx);
	em_line(em, "{");
	em_line(em, "\tswitch (sym) {");
	for (i = 0; i < em->s->statics.len; i++) {
		s = HGC_TSEM_STATIC(em->s, i);
		if (s->kind != HGC_TSYM_LET)
			continue;
		fprintf(em->out, "\tcase %d:\n\t\te->v[%d] = ", s->slot, s->slot);
		em_sx(em, s->def);
		fputs(";\n\t\treturn;\n", em->out);
	}
	em_line(em, "\t}");
	em_line(em, "\t(void)e;");
	em_line(em, "}");
}

/* One constraint's test, true when it holds. */
static void test(struct em *em, const struct hgc_tconstraint *t)
{
	if (!t->c) {
		fputs("hgc_tmpl_mod(e, ", em->out);
		em_sx(em, t->pack_block);
		fputs(", ", em->out);
		if (t->pack_factor)
			em_sx(em, t->pack_factor);
		else
			fprintf(em->out, "e->v[%d]", slot_of(em, "kpack", -1));
		fputs(") == 0", em->out);
		return;
	}
	if (t->c->kind != HGC_AST_CONSTRAINT) {
		em_sx(em, t->c);
		return;
	}
	if (t->c->op == HGC_TK_DIVIDES) {
		fputs("hgc_tmpl_mod(e, ", em->out);
		em_sx(em, t->c->a);
		fprintf(em->out, ", e->v[%d]) == 0", t->of->slot);
	} else {
		fprintf(em->out, "hgc_tmpl_mod(e, e->v[%d], ", t->of->slot);
		em_sx(em, t->c->a);
		fputs(") == 0", em->out);
	}
}

/* The check function: the first constraint that fails, or -1. */
static void check_fn(struct em *em)
{
	size_t i;

	em_line(em, "/* The first constraint that does not hold, or -1. */");
	em_line(em, "static int %scheck(struct hgc_tmpl_env *e)", em->pfx);
	em_line(em, "{");
	for (i = 0; i < em->s->constraints.len; i++) {
		fputs("\tif (!(", em->out);
		test(em, HGC_TSEM_CONSTRAINT(em->s, i));
		fprintf(em->out, "))\n\t\treturn %zu;\n", i);
	}
	em_line(em, "\t(void)e;");
	em_line(em, "\treturn -1;");
	em_line(em, "}");
}

/* The step that binds slot (a parameter's or a let's), or -1 (a shape, an
   attribute or a built-in: bound before the first step). */
static int step_of_slot(struct em *em, int slot)
{
	const struct hgc_tmpl_step *st;
	const struct hgc_tparam *p;
	size_t i;
	int j;

	for (i = 0; i < em->s->steps.len; i++) {
		st = &HGC_VEC_AT(&em->s->steps, struct hgc_tmpl_step, i);
		if (!st->param) {
			if (st->index == slot)
				return (int)i;
			continue;
		}
		p = HGC_TSEM_PARAM(em->s, st->index);
		for (j = 0; j < p->nsyms; j++)
			if (p->syms[j]->slot == slot)
				return (int)i;
	}
	return -1;
}

/* The later of ready and the step binding slot. */
static int ready_in_slot(struct em *em, int slot, int ready)
{
	int st = step_of_slot(em, slot);

	return st > ready ? st : ready;
}

/* The last step binding a name x uses (the latest of ready and those). */
static int ready_in(struct em *em, const struct hgc_ast *x, int ready)
{
	const struct hgc_ast *const kids[] = {x->a, x->b, x->c, x->d};
	const struct hgc_ast *k;
	int i, st;

	if (x->kind == HGC_AST_NAME && x->sym) {
		st = x->sym->slot >= 0 ? step_of_slot(em, x->sym->slot) : (int)em->s->steps.len - 1;
		if (st > ready)
			ready = st;
	}
	for (i = 0; i < 4; i++)
		for (k = kids[i]; k; k = k->next)
			ready = ready_in(em, k, ready);
	return ready;
}

/* The step after which constraint t can be checked: the last one binding a
   name it uses (-1: it uses shapes, attributes and built-ins only). */
static int ready_step(struct em *em, const struct hgc_tconstraint *t)
{
	int ready = -1;

	if (!t->c) {
		ready = ready_in(em, t->pack_block, ready);
		return t->pack_factor ? ready_in(em, t->pack_factor, ready)
				      : ready_in_slot(em, slot_of(em, "kpack", -1), ready);
	}
	if (t->of)
		ready = ready_in_slot(em, t->of->slot, ready);
	return ready_in(em, t->c, ready);
}

/*
 * The constraints grouped by the step after which each can be checked, so
 * the enumeration drops a partial candidate as soon as one fails (a divides(M)
 * of MB prunes every NB, KB, ... below a wrong MB): the first that fails
 * among those of step s, or -1 (s = -1: the ones of no step).
 */
static void check_step_fn(struct em *em)
{
	size_t i;
	int s, n;

	em_line(em, "/* The first constraint checkable after step s that does not hold, or -1. */");
	em_line(em, "static int %scheck_step(struct hgc_tmpl_env *e, int s)", em->pfx);
	em_line(em, "{");
	em_line(em, "	switch (s) {");
	for (s = -1; s < (int)em->s->steps.len; s++) {
		for (n = 0, i = 0; i < em->s->constraints.len; i++) {
			if (ready_step(em, HGC_TSEM_CONSTRAINT(em->s, i)) != s)
				continue;
			if (!n++)
				em_line(em, "	case %d:", s);
			fputs("		if (!(", em->out);
			test(em, HGC_TSEM_CONSTRAINT(em->s, i));
			fprintf(em->out, "))\n\t\t\treturn %zu;\n", i);
		}
		if (n)
			em_line(em, "		break;");
	}
	em_line(em, "	}");
	em_line(em, "	(void)e;");
	em_line(em, "	return -1;");
	em_line(em, "}");
}

/* The slot of dim d of operand i (its name's shape symbol). */
static int dim_slot(struct em *em, int i, int d)
{
	const struct hgc_ast *n = em->s->operand_ast[i]->b;

	while (d-- > 0)
		n = n->next;
	return slot_of(em, n->tok.z, n->tok.n);
}

/* One physical dim of a declared layout, with its extent. */
static void ldim(struct em *em, int i, int j, const struct hgc_tlentry *t,
		 const struct hgc_tlayout *l)
{
	int ds = dim_slot(em, i, t->dim);
	bool packed = l->packed && t->kind == HGC_TMPL_INNER && t->dim == l->packdim;

	fprintf(em->out, "\t\tl->phys[%d].kind = %s;\n\t\tl->phys[%d].dim = %d;\n", j,
		ldims[t->kind], j, t->dim);
	if (t->block) {
		fprintf(em->out, "\t\tl->phys[%d].block = ", j);
		em_sx(em, t->block);
		fputs(";\n", em->out);
	}
	if (t->kind == HGC_TMPL_PAD) {
		fprintf(em->out, "\t\tl->phys[%d].before = ", j);
		em_sx(em, t->before);
		fprintf(em->out, ";\n\t\tl->phys[%d].extent = hgc_tmpl_add(e, hgc_tmpl_add(e, e->v[%d], "
			"l->phys[%d].before), ", j, ds, j);
		em_sx(em, t->after);
		fputs(");\n", em->out);
	} else if (t->kind == HGC_TMPL_OUTER) {
		fprintf(em->out, "\t\tl->phys[%d].extent = hgc_tmpl_cdiv(e, e->v[%d], l->phys[%d].block);\n",
			j, ds, j);
	} else if (t->kind == HGC_TMPL_INNER) {
		fprintf(em->out, "\t\tl->phys[%d].extent = %sl->phys[%d].block%s;\n", j,
			packed ? "hgc_tmpl_div(e, " : "", j, packed ? ", l->pack)" : "");
	} else {
		fprintf(em->out, "\t\tl->phys[%d].extent = e->v[%d];\n", j, ds);
	}
}

/* A declared layout: its entries, then the packed dim. */
static void declared(struct em *em, int i, const struct hgc_tlayout *l)
{
	int j;

	em_line(em, "\t\tl->declared = true;");
	if (l->packed) {
		fputs("\t\tl->pack = ", em->out);
		if (l->factor)
			em_sx(em, l->factor);
		else
			fprintf(em->out, "e->v[%d]", slot_of(em, "kpack", -1));
		fputs(";\n", em->out);
	}
	for (j = 0; j < l->n; j++)
		ldim(em, i, j, &l->ent[j], l);
	if (l->packed)
		em_line(em, "\t\tl->phys[%d] = (struct hgc_tmpl_ldim){HGC_TMPL_PACK, %d, l->pack, 0, "
			"l->pack};", j++, l->packdim);
	em_line(em, "\t\tl->nphys = %d;", j);
}

/* The layout function: every operand's physical dims (plain when not declared). */
static void layout_fn(struct em *em)
{
	int i, d;

	em_line(em, "/* The physical dims of operand op. */");
	em_line(em, "static void %slayout(struct hgc_tmpl_env *e, int op, struct hgc_tmpl_layout *l)",
		em->pfx);
	em_line(em, "{");
	em_line(em, "\tmemset(l, 0, sizeof(*l));");
	em_line(em, "\tl->pack = 1;");
	em_line(em, "\tswitch (op) {");
	for (i = 0; i < em->s->noperands; i++) {
		em_line(em, "\tcase %d:", i);
		if (em->s->layout[i]) {
			declared(em, i, em->s->layout[i]);
		} else {
			for (d = 0; d < em->s->operand[i]->rank; d++)
				em_line(em, "\t\tl->phys[%d] = (struct hgc_tmpl_ldim){HGC_TMPL_WHOLE, %d, "
					"0, 0, e->v[%d]};", d, d, dim_slot(em, i, d));
			em_line(em, "\t\tl->nphys = %d;", em->s->operand[i]->rank);
		}
		em_line(em, "\t\treturn;");
	}
	em_line(em, "\t}");
	em_line(em, "}");
}

/* The cost function: each anchor's three formulas. */
static void cost_fn(struct em *em)
{
	const struct hgc_tanchor *a;
	size_t i;
	int k;

	em_line(em, "/* Cost formula what of anchor a. */");
	em_line(em, "static int64_t %scost(struct hgc_tmpl_env *e, int a, enum hgc_tmpl_cost what)",
		em->pfx);
	em_line(em, "{");
	em_line(em, "\tswitch (a * %d + (int)what) {", HGC_TMPL_NCOST);
	for (i = 0; i < em->s->anchors.len; i++) {
		a = HGC_TSEM_ANCHOR(em->s, i);
		for (k = 0; k < HGC_TMPL_NCOST; k++) {
			fprintf(em->out, "\tcase %d:\n\t\treturn ", (int)i * HGC_TMPL_NCOST + k);
			if (a->cost[k]) {
				em_sx(em, a->cost[k]);
			} else {
				fputs("hgc_tmpl_mul(e, ", em->out);
				em_sx(em, a->cost[HGC_TMPL_COST_WORKING_SET]);
				fputs(", ", em->out);
				em_sx(em, a->cost[HGC_TMPL_COST_CALLS]);
				fputc(')', em->out);
			}
			fputs(";\n", em->out);
		}
	}
	em_line(em, "\t}");
	em_line(em, "\t(void)e;");
	em_line(em, "\treturn 0;");
	em_line(em, "}");
}

/* "MatMul(A:[M, K], B: u8[K, N]) -> C:[M, N]" */
static const char *signature(struct em *em)
{
	const struct hgc_ast *o, *d;
	char *t = hgc_arena_printf(em->arena, "%s(", hgc_tmpl_op_name(em->s->op));
	int i;

	for (i = 0; i < em->s->noperands; i++) {
		o = em->s->operand_ast[i];
		t = hgc_arena_printf(em->arena, "%s%s%.*s:", t, i == 0 ? "" : i == em->s->ninputs
							       ? ") -> " : ", ", o->tok.n, o->tok.z);
		if (o->a)
			t = hgc_arena_printf(em->arena, "%s %.*s", t, o->a->tok.n, o->a->tok.z);
		t = hgc_arena_printf(em->arena, "%s[", t);
		for (d = o->b; d; d = d->next)
			t = hgc_arena_printf(em->arena, "%s%.*s%s", t, d->tok.n, d->tok.z,
					     d->next ? ", " : "");
		t = hgc_arena_printf(em->arena, "%s]", t);
	}
	return t;
}

/* "[M / MB, K / KB, M % MB, K % KB] packed": a layout as written. */
static const char *layout_text(struct em *em, const struct hgc_tlayout *l)
{
	char *t = "[";
	int j;

	for (j = 0; j < l->n; j++)
		t = hgc_arena_printf(em->arena, "%s%s%s", t, j ? ", " : "",
				     hgc_tsem_text(em->arena, l->ent[j].e));
	if (!l->packed)
		return hgc_arena_printf(em->arena, "%s]", t);
	if (!l->factor)
		return hgc_arena_printf(em->arena, "%s] packed", t);
	return hgc_arena_printf(em->arena, "%s] packed(%s)", t, hgc_tsem_text(em->arena, l->factor));
}

/* The logical rank of operand i. */
static int count_dims(const struct hgc_tmpl_sem *s, int i)
{
	const struct hgc_ast *d;
	int n = 0;

	for (d = s->operand_ast[i]->b; d; d = d->next)
		n++;
	return n;
}

/* The operand tables and the template itself. */
static void tmpl_struct(struct em *em)
{
	const struct hgc_tmpl_sem *s = em->s;
	int i;

	fprintf(em->out, "static const char *const %soperand_names[] = {", em->pfx);
	for (i = 0; i < s->noperands; i++)
		fprintf(em->out, "%s\"%s\"", i ? ", " : "", s->operand[i]->name);
	fprintf(em->out, "};\nstatic const int %soperand_rank[] = {", em->pfx);
	for (i = 0; i < s->noperands; i++)
		fprintf(em->out, "%s%d", i ? ", " : "", count_dims(s, i));
	fprintf(em->out, "};\nstatic const enum hgc_dtype %soperand_dtype[] = {", em->pfx);
	for (i = 0; i < s->noperands; i++)
		fprintf(em->out, "%s%d", i ? ", " : "", (int)s->operand_dtype[i]);
	fprintf(em->out, "};\nstatic const char *const %slayout_text[] = {", em->pfx);
	for (i = 0; i < s->noperands; i++) {
		fputs(i ? ", " : "", em->out);
		if (s->layout[i])
			em_str(em, layout_text(em, s->layout[i]));
		else
			fputs("NULL", em->out);
	}
	fputs("};\n\n", em->out);
	em_line(em, "const struct hgc_tmpl hgc_tmpl_%s = {", s->name);
	fprintf(em->out, "\t\"%s\", %d, file_, %d, %d,\n", s->name, (int)s->op, s->loc.line,
		s->ninputs);
	fprintf(em->out, "\t%soperand_names, %soperand_rank, %soperand_dtype,\n\t", em->pfx,
		em->pfx, em->pfx);
	em_str(em, signature(em));
	fprintf(em->out, ",\n\t%zu, %ssyms, %zu, %sparams, %zu, %ssteps,\n", s->statics.len,
		em->pfx, s->params.len, em->pfx, s->steps.len, em->pfx);
	fprintf(em->out, "\t%zu, %sconstraints, %zu, %sanchors,\n", s->constraints.len, em->pfx,
		s->anchors.len, em->pfx);
	fprintf(em->out, "\t%sdomain, %slet, %scheck, %scheck_step, %slayout, %scost, %sbuild,\n",
		em->pfx, em->pfx, em->pfx, em->pfx, em->pfx, em->pfx, em->pfx);
	fprintf(em->out, "\t%slayout_text,\n", em->pfx);
	em_line(em, "};");
}

/* Emit one checked template. */
void em_template(struct em *em)
{
	em->pfx = hgc_arena_printf(em->arena, "t_%s_", em->s->name);
	fprintf(em->out, "\n/* ---- template %s (%s:%d) ---- */\n\n", em->s->name,
		em->s->loc.file, em->s->loc.line);
	syms(em);
	params(em);
	constraints_anchors(em);
	fputc('\n', em->out);
	domain_fn(em);
	fputc('\n', em->out);
	let_fn(em);
	fputc('\n', em->out);
	check_fn(em);
	fputc('\n', em->out);
	check_step_fn(em);
	fputc('\n', em->out);
	layout_fn(em);
	fputc('\n', em->out);
	cost_fn(em);
	fputc('\n', em->out);
	em_build(em);
	fputc('\n', em->out);
	tmpl_struct(em);
}
