/*
 * explain.c: what the search did for each tunable op of a graph, the way
 * the lowering hook (core/lower/tmpl_lower.c) decides it: the template a
 * `use` rule names, or else the first that binds and has valid candidates
 * in hgc_tmpl_rank's order (the comparison printed); pins from `pin`
 * rules; the search's choice and the
 * runners-up with their estimated costs.  Then the fusion plan: each fused
 * op's members, and from lowering the graph the anchor each fused op's
 * members went to with every candidate's cost, and the regions' blocks.
 */
#include "heuristics.h"
#include "../core/lower/fused.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Search template t for op: 1 found (r set), 0 it does not apply (why), -1 error. */
static int try_one(const struct hgc_tmpl_opts *o, const struct hgc_tmpl *t,
		   const struct hgc_op *op, struct hgc_heur_result *r, char *why, size_t n,
		   struct hgc_diag *d)
{
	struct hgc_tmpl_pin pins[32];
	struct hgc_tmpl_bind b;
	struct hgc_diag tmp;
	int np, rc, threads = o->threads > 0 ? o->threads : omp_get_max_threads();

	if (hgc_tmpl_bind(t, op, threads, &b) < 0)
		return snprintf(why, n, "%s: %s", t->name, b.why), 0;
	np = hgc_tmpl_pins_of(o, t, pins, 32);
	hgc_diag_init(&tmp);
	rc = hgc_heur_search(&b, pins, np, r, np ? d : &tmp);
	if (rc < 0 && !np)
		snprintf(why, n, "%s: %s", t->name, hgc_diag_text(&tmp));
	hgc_diag_release(&tmp);
	return rc < 0 ? (np ? -1 : 0) : 1;
}

/* Whether rank holds no estimate: the op's templates go in registry order
   (hgc_tmpl_rank estimates MatMul's only). */
static bool by_registry(const struct hgc_tmpl_rank *rank, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (isfinite(rank[i].cost_ns))
			return false;
	return true;
}

/*
 * The reason of try_one's why in one line, for the list of skipped
 * templates: "NAME: REASON" from "NAME: FILE:L:C: error: template NAME:
 * REASON\n" (a constraint no parameter values satisfy) or "NAME: REASON"
 * (an operand that does not bind).
 */
static void print_skipped(FILE *f, const char *name, const char *why)
{
	const char *p = strstr(why, "error: template "), *q;
	size_t n;

	if (p && (q = strstr(p + 16, ": ")))
		p = q + 2;
	else if (!strncmp(why, name, strlen(name)) && !strncmp(why + strlen(name), ": ", 2))
		p = why + strlen(name) + 2;
	else
		p = why;
	n = strcspn(p, "\n");
	fprintf(f, "    skipped %s: %.*s\n", name, (int)n, p);
}

/* Explain one tunable op. */
static int explain_op(FILE *f, const struct hgc_op *op, const struct hgc_tmpl_opts *o,
		      struct hgc_diag *d)
{
	const struct hgc_tmpl *t = hgc_tmpl_used(o, op);
	struct hgc_tmpl_rank rank[HGC_TMPL_RANK_MAX];
	struct hgc_heur_result r;
	char why[512] = "no template serves it";
	int i, n, rc = 0;
	bool order;

	if (op->out[0]->name)
		fprintf(f, "%s %s:\n", hgc_op_table[op->kind].name, op->out[0]->name);
	else
		fprintf(f, "%s %%%d:\n", hgc_op_table[op->kind].name, op->out[0]->id);
	/* the lowering's order: a use rule's template, else cheapest estimate first,
	   else (no estimates) the registry's order, each skipped one with its reason */
	n = hgc_tmpl_rank(o, op, o->threads > 0 ? o->threads : omp_get_max_threads(), rank,
			  HGC_TMPL_RANK_MAX);
	order = !t && n > 1 && by_registry(rank, n);
	if (order)
		fputs("  templates in registry order, the first that applies serves (no estimates "
		      "across them):\n", f);
	else if (!t && n > 1)
		hgc_tmpl_rank_print(f, rank, n);
	for (i = 0; i < n && !rc; i++) {
		rc = try_one(o, rank[i].t, op, &r, why, sizeof(why), d);
		if (order && rc == 0)
			print_skipped(f, rank[i].t->name, why);
	}
	if (rc < 0)
		return -1;
	if (rc == 0)
		fprintf(f, "  naive loops: %s\n", why);
	else
		hgc_heur_print(f, &r);
	return 0;
}

/* The template log of lowering g with fusion plan fu, a line each, indented. */
static int print_lowering(FILE *f, const struct hgc_graph *g, const struct hgc_tmpl_opts *o,
			  const struct hgc_fusion *fu, struct hgc_diag *d)
{
	struct hgc_lower_opts lo;
	struct hgc_tmpl_opts to = *o;
	struct hgc_tir_module *m;
	size_t i;

	memset(&lo, 0, sizeof(lo));
	hgc_vec_init(&to.log, sizeof(char *));
	m = hgc_fused_lower_graph(g, &lo, &to, fu, d);
	for (i = 0; i < to.log.len; i++)
		fprintf(f, "  %s\n", HGC_VEC_AT(&to.log, char *, i));
	hgc_tir_module_free(m);
	hgc_tmpl_opts_release(&to);
	return m ? 0 : -1;
}

/* The fusion plan of g and where the lowering put each fused op's members. */
static int explain_fusion(FILE *f, const struct hgc_graph *g, const struct hgc_tmpl_opts *o,
			  struct hgc_diag *d)
{
	struct hgc_fusion fu;
	int rc;

	if (hgc_fused_pass_off(o->rules, o->nrules, "fuse")) {
		fputs("fusion: off (pass fuse = off)\n", f);
		return 0;
	}
	hgc_fusion_plan(g, &fu);
	fprintf(f, "fusion: %d fused op%s\n", fu.n, fu.n == 1 ? "" : "s");
	hgc_fusion_print(f, &fu);
	if (fu.n)
		fputs("anchors (candidates with their cost; the members at the chosen one):\n", f);
	rc = fu.n ? print_lowering(f, g, o, &fu, d) : 0;
	hgc_fusion_release(&fu);
	return rc;
}

/* Every tunable op of g, in graph order. */
int hgc_heur_explain_graph(FILE *f, const struct hgc_graph *g, const struct hgc_tmpl_opts *o,
			   struct hgc_diag *d)
{
	size_t i;
	int n = 0;

	for (i = 0; i < g->ops.len; i++) {
		const struct hgc_op *op = HGC_GRAPH_OP(g, i);

		if (hgc_op_table[op->kind].category != HGC_CAT_TUNABLE)
			continue;
		n++;
		if (explain_op(f, op, o, d) < 0)
			return -1;
	}
	if (!n)
		fputs("no tunable ops\n", f);
	return explain_fusion(f, g, o, d);
}
