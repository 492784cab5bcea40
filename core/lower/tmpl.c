/*
 * tmpl.c: templates as data: the registry, the domains generated code
 * calls, the enumeration of a bound template's parameter space (pins
 * fixed), the choice (the parameter search of heuristics/; the least
 * padding, then the first in order, as its fallback and for diagnostics) and
 * the listing `hgc templates` prints.
 */
#include "tmpl.h"
#include "../../heuristics/heuristics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The registered template called name, or NULL. */
const struct hgc_tmpl *hgc_tmpl_find(const char *name)
{
	int i;

	for (i = 0; hgc_tmpl_registry[i]; i++)
		if (!strcmp(hgc_tmpl_registry[i]->name, name))
			return hgc_tmpl_registry[i];
	return NULL;
}

/* The slot of the static symbol called name, or -1. */
int hgc_tmpl_sym(const struct hgc_tmpl *t, const char *name)
{
	int i;

	for (i = 0; i < t->nsyms; i++)
		if (!strcmp(t->syms[i].name, name))
			return i;
	return -1;
}

/* Add v to out[0..n) unless it is there already. */
static int add_unique(int64_t *out, int n, int cap, int64_t v)
{
	int i;

	for (i = 0; i < n; i++)
		if (out[i] == v)
			return n;
	if (n < cap)
		out[n++] = v;
	return n;
}

/* one_of: the values in order, without repeats. */
int hgc_tmpl_dom_list(struct hgc_tmpl_env *e, const int64_t *x, int n, int64_t *out, int cap)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		k = add_unique(out, k, cap, x[i]);
	(void)e;
	return k;
}

/* range(lo, hi, step): lo, lo + step, ... up to hi inclusive. */
int hgc_tmpl_dom_range(struct hgc_tmpl_env *e, int64_t lo, int64_t hi, int64_t step,
		       int64_t *out, int cap)
{
	int n = 0;

	if (step <= 0) {
		e->bad = true;
		return 0;
	}
	for (; lo <= hi && n < cap; lo += step) {
		out[n++] = lo;
		if (hi - lo < step)
			break;
	}
	return n;
}

/* divisor_of(n): the positive divisors of n, ascending (none when n < 1). */
int hgc_tmpl_dom_divisors(struct hgc_tmpl_env *e, int64_t n, int64_t *out, int cap)
{
	int64_t d, large[HGC_TMPL_MAX_DOMAIN];
	int k = 0, nl = 0;

	(void)e;
	for (d = 1; d <= n / d && k < cap; d++) {
		if (n % d)
			continue;
		out[k++] = d;
		if (d != n / d && nl < HGC_TMPL_MAX_DOMAIN)
			large[nl++] = n / d;
	}
	while (nl > 0 && k < cap)
		out[k++] = large[--nl];
	return k;
}

/* Tuples of k positive values whose product is n, the first value ascending. */
static int grid(int k, int64_t n, int64_t *tuple, int depth, int64_t *out, int len, int cap)
{
	int64_t d;

	if (depth == k - 1) {
		tuple[depth] = n;
		if (len + k <= cap) {
			memcpy(out + len, tuple, (size_t)k * sizeof(*out));
			len += k;
		}
		return len;
	}
	for (d = 1; d <= n && d <= 1000000; d++) {
		if (n % d)
			continue;
		tuple[depth] = d;
		len = grid(k, n / d, tuple, depth + 1, out, len, cap);
	}
	return len;
}

/* grid(n) over k names: every factorization of n into k positive factors. */
int hgc_tmpl_dom_grid(struct hgc_tmpl_env *e, int k, int64_t n, int64_t *out, int cap)
{
	int64_t tuple[HGC_TMPL_MAX_GRID];

	if (k < 1 || k > HGC_TMPL_MAX_GRID || n < 1) {
		e->bad |= k < 1 || k > HGC_TMPL_MAX_GRID;
		return 0;
	}
	return grid(k, n, tuple, 0, out, 0, cap);
}

/* The walk over the parameter space. */
struct walk {
	const struct hgc_tmpl *t;
	const struct hgc_tmpl_pin *pins;
	int npins;
	hgc_tmpl_visit_fn *fn;
	void *ctx;
	struct hgc_tmpl_env e;
	long valid, leaves;
	bool stop;
	bool prune;		/* check each constraint once its names are bound */
	bool *pin_seen;		/* per pin: its value was in the domain once */
	long *fails;		/* per constraint: candidates it rejected */
	int64_t *vals;		/* per step, room for its domain (one allocation per walk) */
};

/* The value a pin fixes for slot sym, or NULL. */
static const struct hgc_tmpl_pin *pinned(const struct walk *w, int sym)
{
	int i;

	for (i = 0; i < w->npins; i++)
		if (w->pins[i].sym == sym)
			return &w->pins[i];
	return NULL;
}

static void step(struct walk *w, int s);

/*
 * Whether the walk goes on below step s: when pruning, the constraints
 * checkable now must hold (and nothing so far divided by zero).  A pruned
 * subtree counts as one visit against HGC_TMPL_MAX_CANDIDATES.
 */
static bool viable(struct walk *w, int s)
{
	if (!w->prune)
		return true;
	if (!w->e.bad && w->t->check_step(&w->e, s) < 0 && !w->e.bad)
		return true;
	if (++w->leaves > HGC_TMPL_MAX_CANDIDATES)
		w->stop = true;
	return false;
}

/* One value (tuple) of a parameter declaration, then the rest of the walk. */
static void choose_value(struct walk *w, int s, const struct hgc_tmpl_param *p,
			 const int64_t *vals)
{
	const struct hgc_tmpl_pin *pin;
	bool bad = w->e.bad;
	int j;

	for (j = 0; j < p->nsyms; j++) {
		pin = pinned(w, p->sym[j]);
		if (pin && pin->value != vals[j])
			return;
	}
	for (j = 0; j < p->nsyms; j++) {
		pin = pinned(w, p->sym[j]);
		if (pin)
			w->pin_seen[pin - w->pins] = true;
		w->e.v[p->sym[j]] = vals[j];
	}
	if (viable(w, s))
		step(w, s + 1);
	w->e.bad = bad;
}

/* The end of a walk: check the constraints of a complete candidate. */
static void leaf(struct walk *w)
{
	int r;

	if (++w->leaves > HGC_TMPL_MAX_CANDIDATES) {
		w->stop = true;
		return;
	}
	if (w->e.bad)
		return;
	r = w->prune ? -1 : w->t->check(&w->e);	/* pruning checked them all on the way */
	if (w->e.bad)
		return;
	if (r >= 0) {
		w->fails[r]++;
		return;
	}
	w->valid++;
	if (w->fn && w->fn(&w->e, w->ctx))
		w->stop = true;
}

/* Step s of the declaration order: a let, or each value of a parameter. */
static void step(struct walk *w, int s)
{
	const struct hgc_tmpl_param *p;
	int64_t *vals;
	int n, i;

	if (w->stop)
		return;
	if (s == w->t->nsteps) {
		leaf(w);
		return;
	}
	if (!w->t->steps[s].param) {	/* choose_value above restores e.bad */
		w->t->let(&w->e, w->t->steps[s].index);
		if (viable(w, s))
			step(w, s + 1);
		return;
	}
	p = &w->t->params[w->t->steps[s].index];
	vals = w->vals + (size_t)s * HGC_TMPL_MAX_DOMAIN;
	n = w->t->domain(&w->e, w->t->steps[s].index, vals, HGC_TMPL_MAX_DOMAIN);
	for (i = 0; i + p->nsyms <= n && !w->stop; i += p->nsyms)
		choose_value(w, s, p, vals + i);
}

/* Set up a walk over b's space. */
static void walk_init(struct walk *w, const struct hgc_tmpl_bind *b,
		      const struct hgc_tmpl_pin *pins, int npins, hgc_tmpl_visit_fn *fn, void *ctx)
{
	memset(w, 0, sizeof(*w));
	w->t = b->t;
	w->pins = pins;
	w->npins = npins;
	w->fn = fn;
	w->ctx = ctx;
	w->e = b->env;
	w->pin_seen = hgc_xcalloc((size_t)npins + 1, sizeof(bool));
	w->fails = hgc_xcalloc((size_t)b->t->nconstraints + 1, sizeof(long));
	w->vals = hgc_xmalloc(((size_t)b->t->nsteps + 1) * HGC_TMPL_MAX_DOMAIN * sizeof(*w->vals));
}

/* Free a walk's tables. */
static void walk_release(struct walk *w)
{
	free(w->pin_seen);
	free(w->fails);
	free(w->vals);
}

/* Visit every valid candidate, in enumeration order, pruning or not. */
static long enumerate(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins, int npins,
		      hgc_tmpl_visit_fn *fn, void *ctx, bool prune)
{
	struct walk w;
	long n;

	walk_init(&w, b, pins, npins, fn, ctx);
	w.prune = prune;
	if (viable(&w, -1))
		step(&w, 0);
	n = w.valid;
	walk_release(&w);
	return n;
}

/* Visit every valid candidate.  The walk prunes (the counts per constraint
   that explain an empty space come from hgc_tmpl_choose_padding's full walk). */
long hgc_tmpl_enumerate(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins,
			int npins, hgc_tmpl_visit_fn *fn, void *ctx)
{
	return enumerate(b, pins, npins, fn, ctx, true);
}

/* The reference: no pruning. */
long hgc_tmpl_enumerate_full(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins,
			     int npins, hgc_tmpl_visit_fn *fn, void *ctx)
{
	return enumerate(b, pins, npins, fn, ctx, false);
}

/* Elements of padding: physical sizes of the layouts beyond the logical ones. */
int64_t hgc_tmpl_padding(const struct hgc_tmpl_bind *b, struct hgc_tmpl_env *e)
{
	struct hgc_tmpl_layout l;
	int64_t phys, logical, pad = 0;
	int i, j;

	for (i = 0; i <= b->t->ninputs; i++) {
		b->t->layout(e, i, &l);
		for (phys = 1, j = 0; j < l.nphys; j++)
			phys = hgc_tmpl_mul(e, phys, l.phys[j].extent);
		for (logical = 1, j = 0; j < b->t->operand_rank[i]; j++)
			logical *= b->dims[i][j];
		pad = hgc_tmpl_add(e, pad, phys - logical);
	}
	return pad;
}

/* The best candidate so far. */
struct best {
	const struct hgc_tmpl_bind *b;
	struct hgc_tmpl_env env;
	int64_t pad;
	bool found;
};

/* Keep the candidate with the least padding (the first among equals). */
static int keep_best(const struct hgc_tmpl_env *e, void *ctx)
{
	struct best *best = ctx;
	struct hgc_tmpl_env tmp = *e;
	int64_t pad = hgc_tmpl_padding(best->b, &tmp);

	if (!tmp.bad && (!best->found || pad < best->pad)) {
		best->env = *e;
		best->pad = pad;
		best->found = true;
	}
	return 0;
}

/*
 * Report why no candidate is valid: a pin outside its domain, a constraint
 * of the first pinned parameter, or else the last constraint (in checking
 * order) that rejected any candidate.  Those candidates met every
 * constraint before it, so it is the one that closed the space: counting
 * rejections instead blamed divides(M) of matmul_plain's MB (which rejects
 * the MB values that do not divide M, of every space) for a K that is a
 * multiple of 1024, which its `K % 1024 != 0` alone excludes.
 */
static int no_candidate(const struct walk *w, const struct hgc_tmpl_bind *b,
			struct hgc_diag *d)
{
	const struct hgc_tmpl *t = b->t;
	const struct hgc_tmpl_constraint *c;
	const struct hgc_tmpl_pin *p;
	struct hgc_loc at;
	int i, worst = -1;

	for (i = 0; i < w->npins; i++) {
		p = &w->pins[i];
		if (w->pin_seen[i])
			continue;
		at = p->rule ? p->rule->loc : (struct hgc_loc){t->file, t->line, 1};
		return hgc_error(d, &at, "pin %s.%s = %lld: not in the domain %s of '%s' here",
				 t->name, t->syms[p->sym].name, (long long)p->value,
				 t->params[t->syms[p->sym].decl].domain_text, t->syms[p->sym].name);
	}
	for (i = 0; i < t->nconstraints; i++)
		if (w->fails[i])
			worst = i;
	for (i = 0; w->npins && i < t->nconstraints; i++)
		if (w->fails[i] && t->constraints[i].param == t->syms[w->pins[0].sym].decl &&
		    (worst < 0 || t->constraints[worst].param != t->constraints[i].param ||
		     w->fails[i] > w->fails[worst]))
			worst = i;
	if (worst < 0)
		return hgc_error(d, NULL, "template %s: no parameter values for this %s", t->name,
				 hgc_tmpl_op_name(t->op));
	c = &t->constraints[worst];
	if (w->npins) {
		p = &w->pins[0];
		at = p->rule ? p->rule->loc : c->loc;
		hgc_error(d, &at, "pin %s.%s = %lld: no candidate satisfies %s", t->name,
			  t->syms[p->sym].name, (long long)p->value, c->text);
		hgc_note(d, &c->loc, "the constraint of template %s is here", t->name);
		return -1;
	}
	return hgc_error(d, &c->loc, "template %s: no parameter values satisfy %s for this %s",
			 t->name, c->text, hgc_tmpl_op_name(t->op));
}

/* The least padding, then enumeration order. */
int hgc_tmpl_choose_padding(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins, int npins,
		    struct hgc_tmpl_env *out, struct hgc_diag *d)
{
	struct best best = {b, {0}, 0, false};
	struct walk w;
	int rc = 0;

	walk_init(&w, b, pins, npins, keep_best, &best);
	step(&w, 0);
	if (best.found)
		*out = best.env;
	else
		rc = no_candidate(&w, b, d);
	walk_release(&w);
	return rc;
}

/* The choice: the cheapest candidate of the heuristics' cost model. */
int hgc_tmpl_choose(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins, int npins,
		    struct hgc_tmpl_env *out, struct hgc_diag *d)
{
	struct hgc_heur_result *r = hgc_xcalloc(1, sizeof(*r));
	int rc = hgc_heur_search(b, pins, npins, r, d);

	if (rc == 0)
		*out = r->top[0].env;
	free(r);
	return rc;
}

/* Print "MB=32 NB=64 ...": every parameter's value. */
void hgc_tmpl_print_params(FILE *f, const struct hgc_tmpl_env *e)
{
	const struct hgc_tmpl *t = e->t;
	int i, n = 0;

	for (i = 0; i < t->nsyms; i++)
		if (t->syms[i].kind == HGC_TMPL_PARAM)
			fprintf(f, "%s%s=%lld", n++ ? " " : "", t->syms[i].name, (long long)e->v[i]);
}

/* The listing of one template (`hgc templates`). */
void hgc_tmpl_print(FILE *f, const struct hgc_tmpl *t)
{
	static const char *const keys[] = {"working_set", "calls", "accesses"};
	const struct hgc_tmpl_param *p;
	const struct hgc_tmpl_anchor *a;
	int i, j;

	fprintf(f, "%s: %s\n  serves %s; defined at %s:%d\n", t->name, t->signature,
		hgc_tmpl_op_name(t->op), t->file, t->line);
	fputs("  parameters:\n", f);
	for (i = 0; i < t->nparams; i++) {
		p = &t->params[i];
		fputs("    ", f);
		for (j = 0; j < p->nsyms; j++)
			fprintf(f, "%s%s", j ? ", " : "", t->syms[p->sym[j]].name);
		fprintf(f, " : %s%s%s\n", p->domain_text, *p->constraints_text ? ", " : "",
			p->constraints_text);
	}
	fputs("  layouts:\n", f);
	for (i = 0; i <= t->ninputs; i++)
		fprintf(f, "    %s : %s\n", t->operand_names[i],
			t->layout_text && t->layout_text[i] ? t->layout_text[i] : "plain");
	fputs("  derived:\n", f);
	for (i = 0; i < t->nsyms; i++)
		if (t->syms[i].kind == HGC_TMPL_LET)
			fprintf(f, "    %s = %s\n", t->syms[i].name, t->syms[i].text);
	fputs("  anchors:\n", f);
	for (i = 0; i < t->nanchors; i++) {
		a = &t->anchors[i];
		fprintf(f, "    %s: %s-op, %s (%d dim%s)\n", a->name, a->post ? "post" : "pre",
			a->slice_text, a->rank, a->rank == 1 ? "" : "s");
		for (j = 0; j < HGC_TMPL_NCOST; j++)
			fprintf(f, "      %s = %s\n", keys[j], a->cost_text[j]);
	}
}

/* Estimate t's best candidate for op under o's pins into r. */
static void estimate(const struct hgc_tmpl_opts *o, const struct hgc_tmpl *t,
		     const struct hgc_op *op, int threads, struct hgc_tmpl_rank *r)
{
	struct hgc_heur_result *res;
	struct hgc_tmpl_pin pins[32];
	struct hgc_tmpl_bind *b;
	int np;

	r->t = t;
	r->cost_ns = HUGE_VAL;
	r->applies = false;
	b = hgc_xcalloc(1, sizeof(*b));
	res = hgc_xcalloc(1, sizeof(*res));
	if (hgc_tmpl_bind(t, op, threads, b) == 0) {
		np = hgc_tmpl_pins_of(o, t, pins, 32);
		r->applies = hgc_heur_search(b, pins, np, res, NULL) == 0;
		if (r->applies && res->top[0].est.modelled)
			r->cost_ns = res->top[0].est.total_ns;
	}
	free(res);
	free(b);
}

/* Whether t reads A and writes C where they are (no layout of its own:
   nothing packed or unpacked at run time but a B). */
static bool a_c_in_place(const struct hgc_tmpl *t)
{
	return !t->layout_text || (!t->layout_text[0] && !t->layout_text[t->ninputs]);
}

/*
 * The group a template ranks in: the templates a config pins (0), then
 * the 2-D forms and the batched ones that keep A and C in place (1), then
 * the other batched ones (2): a 2-D problem (a batch of one operand folded
 * into M or N) takes matmul_batch (A and C blocked at run time) only when
 * no 2-D form applies.  Its model misses what the blocking costs there:
 * wd's 512x845x1024 would take it (estimated 10% below matmul_packa) and
 * ran 9% slower (4.37-4.39 against 4.01 ms, one thread).  matmul_batch_plain
 * competes: on 1024^3 and wd's 512x1024x512 (rows of A 4 KiB apart, which
 * matmul_plain leaves to matmul_packa) it ran 4% and 7% faster than
 * matmul_packa at one thread (9.43-9.46 against 9.85; 2.33 against 2.50
 * ms), the model's order.
 */
static int group(const struct hgc_tmpl_opts *o, const struct hgc_tmpl *t)
{
	struct hgc_tmpl_pin pins[1];

	if (hgc_tmpl_pins_of(o, t, pins, 1))
		return 0;
	return t->ninputs > 0 && t->operand_rank[0] > 2 && !a_c_in_place(t) ? 2 : 1;
}

/* Whether a ranks before b: by group; within it applying and modelled
   first, cheaper first. */
static bool before(const struct hgc_tmpl_opts *o, const struct hgc_tmpl_rank *a,
		   const struct hgc_tmpl_rank *b)
{
	bool ra = a->applies && isfinite(a->cost_ns), rb = b->applies && isfinite(b->cost_ns);
	int ga = group(o, a->t), gb = group(o, b->t);

	if (ga != gb)
		return ga < gb;
	if (ra != rb)
		return ra;
	return ra && a->cost_ns < b->cost_ns;
}

/* The order to try templates in for op. */
int hgc_tmpl_rank(const struct hgc_tmpl_opts *o, const struct hgc_op *op, int threads,
		  struct hgc_tmpl_rank *r, int cap)
{
	const struct hgc_tmpl *t = hgc_tmpl_used(o, op);
	struct hgc_tmpl_rank x;
	int i, j, n = 0;

	if (t && cap > 0) {
		r[0] = (struct hgc_tmpl_rank){t, HUGE_VAL, true};
		return 1;
	}
	for (i = 0; (t = hgc_tmpl_registry[i]) && n < cap; i++) {
		if (t->op != op->kind)
			continue;
		if (op->kind == HGC_OP_MATMUL)
			estimate(o, t, op, threads, &x);
		else
			x = (struct hgc_tmpl_rank){t, HUGE_VAL, true};
		for (j = n++; j > 0 && before(o, &x, &r[j - 1]); j--)
			r[j] = r[j - 1];
		r[j] = x;
	}
	return n;
}

/* "  templates by estimate: a 1.2 us, b 3.4 us; not modelled: c; do not apply: d". */
void hgc_tmpl_rank_print(FILE *f, const struct hgc_tmpl_rank *r, int n)
{
	int i, k = 0;

	fputs("  templates by estimate:", f);
	for (i = 0; i < n; i++)
		if (r[i].applies && isfinite(r[i].cost_ns))
			fprintf(f, "%s %s %.1f us", k++ ? "," : "", r[i].t->name, r[i].cost_ns / 1e3);
	if (!k)
		fputs(" none", f);
	for (i = k = 0; i < n; i++)
		if (r[i].applies && !isfinite(r[i].cost_ns))
			fprintf(f, "%s %s", k++ ? "," : "; not modelled:", r[i].t->name);
	for (i = k = 0; i < n; i++)
		if (!r[i].applies)
			fprintf(f, "%s %s", k++ ? "," : "; do not apply:", r[i].t->name);
	fputc('\n', f);
}
