/*
 * search.c: the parameter search.  Every valid candidate of a bound
 * template (tmpl.c's enumeration, pins fixed) is estimated with the model
 * and the cheapest HGC_HEUR_TOP are kept; the first is the choice.
 */
#include "heuristics.h"

#include <string.h>

/* The state of one search. */
struct search {
	struct hgc_heur_ctx cx;
	struct hgc_heur_result *r;
};

/* Insert a candidate into the sorted top list (after equal costs). */
static void keep(struct hgc_heur_result *r, const struct hgc_tmpl_env *e,
		 const struct hgc_heur_est *est)
{
	int i = r->n;

	if (i == HGC_HEUR_TOP && est->total_ns >= r->top[i - 1].est.total_ns)
		return;
	if (i == HGC_HEUR_TOP)
		i--;
	for (; i > 0 && r->top[i - 1].est.total_ns > est->total_ns; i--)
		r->top[i] = r->top[i - 1];
	r->top[i].env = *e;
	r->top[i].est = *est;
	if (r->n < HGC_HEUR_TOP)
		r->n++;
}

/* The enumeration's visit: estimate and keep. */
static int visit(const struct hgc_tmpl_env *e, void *ctx)
{
	struct search *s = ctx;
	struct hgc_heur_est est;

	if (hgc_heur_estimate(&s->cx, e, &est) == 0)
		keep(s->r, e, &est);
	return 0;
}

/* Search with the given machine. */
int hgc_heur_search_on(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins,
		       int npins, const struct hgc_heur_machine *mc, struct hgc_heur_result *r,
		       struct hgc_diag *d)
{
	struct search s;
	struct hgc_tmpl_env env;

	memset(r, 0, sizeof(*r));
	r->t = b->t;
	s.r = r;
	hgc_heur_ctx_init(&s.cx, b, mc);
	r->nvalid = hgc_tmpl_enumerate(b, pins, npins, visit, &s);
	if (r->n)
		return 0;
	if (!d)
		return -1;	/* the caller only asks whether the template applies */
	/* the simple choice knows how to say why nothing is valid */
	if (hgc_tmpl_choose_padding(b, pins, npins, &env, d) < 0)
		return -1;
	return hgc_error(d, NULL, "template %s: no candidate could be estimated", b->t->name);
}

/* Search with this machine's figures at the bound vector length. */
int hgc_heur_search(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins, int npins,
		    struct hgc_heur_result *r, struct hgc_diag *d)
{
	struct hgc_heur_machine mc;
	int vlen = hgc_tmpl_sym(b->t, "vlen");

	hgc_heur_machine_host(&mc, vlen >= 0 ? (int)b->env.v[vlen] : 8);
	return hgc_heur_search_on(b, pins, npins, &mc, r, d);
}

/* One candidate's line: parameters, cost and its parts. */
static void print_cand(FILE *f, const char *tag, const struct hgc_heur_cand *c)
{
	const struct hgc_heur_est *e = &c->est;

	fprintf(f, "    %-8s", tag);
	hgc_tmpl_print_params(f, &c->env);
	if (!e->modelled) {
		fprintf(f, "  (not modelled: %.0f elements of padding)\n", e->total_ns);
		return;
	}
	fprintf(f, "  cost %.1f us (compute %.1f, memory %.1f, packing %.1f; "
		   "efficiency %.2f, balance %.2f, working set %lld KiB)\n",
		e->total_ns / 1e3, e->compute_ns / 1e3, e->mem_ns / 1e3, e->pack_ns / 1e3, e->eff,
		e->balance, (long long)(e->working_set >> 10));
}

/* The chosen candidate and the runners-up. */
void hgc_heur_print(FILE *f, const struct hgc_heur_result *r)
{
	char tag[16];
	int i;

	fprintf(f, "  template %s: %ld valid candidate%s\n", r->t->name, r->nvalid,
		r->nvalid == 1 ? "" : "s");
	for (i = 0; i < r->n; i++) {
		snprintf(tag, sizeof(tag), i ? "#%d" : "chosen", i + 1);
		print_cand(f, tag, &r->top[i]);
	}
}
