/*
 * region.c: a region of fusible ops (no tunable op: softmax alone,
 * layernorm after a residual add, an elementwise chain) into Tensor IR, at
 * its first member, through a Region template of templates/ (region.tmpl):
 * the region's domain is bound as X, Y : [B, R, L] (B blocks of R rows of
 * L elements, L from the first reduced axis on), the parameters are the
 * candidate with the cheapest anchor (the cost rule of fused ops' anchors:
 * an overhead per call, a reload when the block of every tensor touched
 * leaves L1), the template builds its nest (a parallel loop over blocks of
 * rows) and the members are lowered at its anchor on the block's box, so
 * a block is read from memory once and stays in L1 across the members.
 * See docs/fusion.md.
 */
#include "fused_int.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CALL_COST 64		/* an anchor invocation, in element accesses */

#define TOP 5			/* candidates the log lists */

/* A candidate of the search: its environment and cost. */
struct rcand {
	struct hgc_tmpl_env env;
	int64_t cost;
	int anchor;			/* its cheapest post-op anchor */
};

/* The search over a region template's candidates: the cheapest few. */
struct rsearch {
	int nt;				/* tensors a block touches */
	long nvalid;			/* candidates that satisfied the constraints */
	int n;				/* kept, best first */
	struct rcand top[TOP];
};

/* The cost of anchor i in environment e for a region touching nt tensors:
   a call overhead per invocation, plus, when the block of every tensor does
   not fit in L1, a reload of all of them scaled by how far over L1 they
   are (so the smallest block that spills is the least bad). */
static int64_t region_cost(struct hgc_tmpl_env *e, int i, int nt, int64_t *ws, int64_t *calls)
{
	int64_t bytes;

	*ws = e->t->cost(e, i, HGC_TMPL_COST_WORKING_SET);
	*calls = e->t->cost(e, i, HGC_TMPL_COST_CALLS);
	bytes = *ws * 4 * nt;
	if (bytes <= L1_BYTES)
		return *calls * CALL_COST;
	return *calls * CALL_COST +
	       (int64_t)fmin((double)*ws * (double)*calls * nt * ((double)bytes / L1_BYTES), 1e18);
}

/* hgc_tmpl_visit_fn: rank candidate e by its cheapest post-op anchor and
   keep the TOP cheapest (the first in enumeration order among equals). */
static int visit(const struct hgc_tmpl_env *e, void *ctx)
{
	struct rsearch *rs = ctx;
	struct rcand c = { .env = *e, .anchor = -1 };
	int64_t ws, calls, cost;
	int i, j;

	for (i = 0; i < e->t->nanchors; i++) {
		if (!e->t->anchors[i].post)
			continue;
		cost = region_cost(&c.env, i, rs->nt, &ws, &calls);
		if (!c.env.bad && (c.anchor < 0 || cost < c.cost))
			c.cost = cost, c.anchor = i;
	}
	if (c.anchor < 0)
		return 0;
	rs->nvalid++;
	for (j = rs->n; j > 0 && rs->top[j - 1].cost > c.cost; j--)
		if (j < TOP)
			rs->top[j] = rs->top[j - 1];
	if (j < TOP) {
		rs->top[j] = c;
		rs->n += rs->n < TOP;
	}
	return 0;
}

/* The search in the template log, as the parameter search of a MatMul is in
   `hgc explain`: the template, its valid candidates, the cheapest few. */
static void log_search(struct hgc_tmpl_opts *o, const char *name, const struct hgc_tmpl *t,
		       const struct rsearch *rs)
{
	char *text = NULL, tag[16];
	size_t len = 0;
	FILE *f;
	int i;

	for (i = -1; i < rs->n; i++) {
		if (!(f = open_memstream(&text, &len)))
			hgc_bug("open_memstream: out of memory");
		if (i < 0) {
			fprintf(f, "region %s: template %s: %ld valid candidate%s", name, t->name,
				rs->nvalid, rs->nvalid == 1 ? "" : "s");
		} else {
			snprintf(tag, sizeof(tag), "#%d", i + 1);
			fprintf(f, "  %-7s ", i ? tag : "chosen");
			hgc_tmpl_print_params(f, &rs->top[i].env);
			fprintf(f, "  cost %lld at %s", (long long)rs->top[i].cost,
				t->anchors[rs->top[i].anchor].name);
		}
		fclose(f);
		hgc_fused_log(o, text);
		free(text);
		text = NULL;
	}
}

/* The template a `use T for Region;` rule names, or NULL. */
static const struct hgc_tmpl *region_used(const struct hgc_tmpl_opts *o)
{
	int i;

	for (i = 0; i < o->nrules; i++)
		if (!strcmp(o->rules[i].kind, "use") && !strcasecmp(o->rules[i].key, "Region"))
			return hgc_tmpl_find(o->rules[i].value);
	return NULL;
}

/* Bind t to the region and search its parameters (rs): 1, 0 (t does not
   apply), -1 (the config's pins leave no candidate; d set). */
static int choose_one(struct hgc_tmpl_opts *o, const struct hgc_tmpl *t,
		      const struct hgc_fused_op *fo, int k, struct hgc_tmpl_bind *bind,
		      struct rsearch *rs, struct hgc_diag *d)
{
	struct hgc_tmpl_pin pins[32];
	struct hgc_tmpl_env env;
	int npins;

	memset(rs, 0, sizeof(*rs));
	rs->nt = 1 + fo->nmembers;
	if (hgc_tmpl_bind_region(t, fo->domain->dims, fo->domain->ndims, k,
				 o->threads > 0 ? o->threads : omp_get_max_threads(), bind) < 0)
		return 0;
	npins = hgc_tmpl_pins_of(o, t, pins, 32);
	hgc_tmpl_enumerate(bind, pins, npins, visit, rs);
	if (rs->n)
		return 1;
	if (!npins)
		return 0;
	return hgc_tmpl_choose_padding(bind, pins, npins, &env, d) < 0 ? -1 : 0;
}

/* The region's template (a `use` rule, else the first Region template that
   applies) and its search: 1, 0 (none), -1 (d set). */
static int choose_region(struct hgc_tmpl_opts *o, const struct hgc_fused_op *fo, int k,
			 struct hgc_tmpl_bind *bind, struct rsearch *rs, struct hgc_diag *d)
{
	const struct hgc_tmpl *t = region_used(o);
	int i, rc = 0;

	if (o->off)
		return 0;
	if (t)
		return choose_one(o, t, fo, k, bind, rs, d);
	for (i = 0; !rc && hgc_tmpl_registry[i]; i++)
		if (hgc_tmpl_registry[i]->op == HGC_TMPL_REGION)
			rc = choose_one(o, hgc_tmpl_registry[i], fo, k, bind, rs, d);
	return rc;
}

/* Build the template's nest at the end of the function's body: its operand
   buffers are only names for the anchors' slices (a Region template reads
   and writes nothing, dsl/template.c), so none is defined.  The points are
   the anchors' (malloc'ed); 0, or -1 with d set. */
static int build(struct hgc_lower_ctx *cx, const struct hgc_tmpl_bind *bind,
		 const struct hgc_tmpl_env *env, struct hgc_tmpl_inst *inst, struct hgc_diag *d)
{
	const struct hgc_tmpl *t = bind->t;
	struct hgc_tmpl_build b;
	int i, rc;

	memset(&b, 0, sizeof(b));
	b.t = t;
	b.cx = cx;
	b.m = cx->m;
	b.env = *env;
	b.env.bad = false;
	b.acc = HGC_DT_F32;
	b.d = d;
	b.outer_parallel = cx->in_parallel;
	b.block = hgc_tir_block(cx->m, cx->f->body);
	for (i = 0; i <= t->ninputs; i++) {
		b.dtype[i] = HGC_DT_F32;
		t->layout(&b.env, i, &b.layout[i]);
		b.buf[i] = hgc_tir_tensor_newc(cx->m, t->operand_names[i],
					       hgc_tir_ty(HGC_TIR_F32), HGC_TIR_LOCAL,
					       t->operand_rank[i], bind->dims[i]);
	}
	b.points = hgc_xcalloc((size_t)t->nanchors + 1, sizeof(*b.points));
	rc = t->build(&b);
	cx->in_parallel = b.outer_parallel;
	hgc_vec_release(&b.ranges);
	*inst = (struct hgc_tmpl_inst){ .env = b.env, .points = b.points,
					.npoints = t->nanchors, .writeback = -1 };
	return rc;
}

/* The box of the domain that slice s of Y covers, through the binding's map
   (a canonical dim holding several domain dims taken as one index or
   whole); false when it is not such a box. */
static bool domain_box(struct hgc_tir_module *m, const struct hgc_tmpl_bind *bind,
		       const struct hgc_tensor *dom, const struct hgc_tmpl_slice *s,
		       struct box *bx)
{
	const struct hgc_tmpl_map *mp = &bind->map[1];
	const int64_t *cd = bind->dims[1];
	int64_t ext, v;
	int g, c;

	if (s->n != 3)
		return false;
	bx->n = dom->ndims;
	for (g = 0; g < dom->ndims; g++) {
		c = mp->d[g].c;
		ext = s->range[c] ? s->len[c] : 1;
		bx->start[g] = NULL, bx->ext[g] = 1;
		if (s->range[c] && s->step[c] != 1)
			return false;
		if (ext == cd[c] && (!s->start[c] || (hgc_tir_const_int(s->start[c], &v) && !v)))
			bx->ext[g] = dom->dims[g];
		else if (ext == 1)
			bx->start[g] = hgc_fused_fold_index(m, s->start[c], mp->d[g].div,
							    mp->d[g].mod);
		else if (mp->d[g].div == 1 && dom->dims[g] == cd[c])
			bx->start[g] = s->start[c], bx->ext[g] = ext;
		else
			return false;
	}
	return true;
}

/* The reached post-op anchor of the instance with the cheapest cost whose
   slice is a box of the domain (into bx); its log text; -1 if none. */
static int pick(struct hgc_lower_ctx *cx, const struct hgc_fused_op *fo,
		const struct hgc_tmpl_bind *bind, struct hgc_tmpl_inst *inst, struct box *bx,
		FILE *log)
{
	const struct hgc_tmpl *t = bind->t;
	int64_t ws, calls, cost, bcost = 0;
	struct box cand;
	int i, best = -1;

	for (i = 0; i < t->nanchors; i++) {
		if (!t->anchors[i].post || !inst->points[i].block)
			continue;
		cost = region_cost(&inst->env, i, 1 + fo->nmembers, &ws, &calls);
		fprintf(log, " %s(ws=%lld calls=%lld", t->anchors[i].name, (long long)ws,
			(long long)calls);
		if (ws * calls != hgc_tensor_nelems(fo->domain) ||
		    !domain_box(cx->m, bind, fo->domain, &inst->points[i].slice, &cand)) {
			fprintf(log, ": not a box of the domain)");
			continue;
		}
		fprintf(log, " cost=%lld)", (long long)cost);
		if (best < 0 || cost < bcost)
			best = i, bcost = cost, *bx = cand;
	}
	return best;
}

/* The first reduced axis of region fo, or its domain's last dim. */
static int row_axis(const struct hgc_fused_op *fo)
{
	int k = fo->domain->ndims - 1, i;

	for (i = 0; fo->reduces && i < fo->domain->ndims; i++)
		if (fo->reduced[i] && i < k)
			k = i;
	return k;
}

/* The log line of a region lowered at anchor at (box bx) of its template. */
static void log_region(struct fstate *st, const struct hgc_fused_op *fo, int k,
		       const struct hgc_tmpl_bind *bind, const struct hgc_tmpl_inst *inst,
		       int at, const struct box *bx, const char *cands)
{
	int64_t rows = 1, rowlen = 1, calls;
	struct hgc_tmpl_env e = inst->env;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	for (i = 0; i < bx->n; i++)
		*(i < k ? &rows : &rowlen) *= bx->ext[i];
	calls = bind->t->cost(&e, at, HGC_TMPL_COST_CALLS);
	if (!(f = open_memstream(&text, &len)))
		hgc_bug("open_memstream: out of memory");
	fprintf(f, "region of %d fusible ops (%s ...): %lld blocks of %lld x %lld; template %s (",
		fo->nmembers, hgc_op_table[fo->member[0]->kind].name, (long long)calls,
		(long long)rows, (long long)rowlen, bind->t->name);
	hgc_tmpl_print_params(f, &inst->env);
	fprintf(f, ") at %s; candidates:%s", bind->t->anchors[at].name, cands);
	fclose(f);
	hgc_fused_log(st->o, text);
	free(text);
}

/* Lower the members at the chosen anchor of the region's template
   instance (or after the nest over whole tensors when none fits), then
   merge the members' adjacent elementwise loops over a row (layernorm's
   subtract and square: one pass instead of two). */
static int place(struct hgc_lower_ctx *cx, struct fstate *st, const struct hgc_fused_op *fo,
		 int k, const struct hgc_tmpl_bind *bind, struct hgc_tmpl_inst *inst,
		 struct hgc_diag *d)
{
	bool saved = cx->in_parallel;
	char *cands = NULL;
	size_t len = 0;
	struct box bx;
	FILE *log;
	int at, rc, from;

	if (!(log = open_memstream(&cands, &len)))
		hgc_bug("open_memstream: out of memory");
	at = pick(cx, fo, bind, inst, &bx, log);
	fclose(log);
	if (at < 0) {
		hgc_fused_log(st->o, "region: no anchor of its template fits; the ops follow "
			      "over whole tensors");
		free(cands);
		return hgc_fused_members(cx, fo, cx->f->body, NULL, d);
	}
	log_region(st, fo, k, bind, inst, at, &bx, cands);
	free(cands);
	cx->in_parallel = true;
	from = inst->points[at].block->u.block.n;
	rc = hgc_fused_members(cx, fo, inst->points[at].block, &bx, d);
	if (!rc)
		hgc_fused_merge_loops(cx->m, inst->points[at].block, from);
	cx->in_parallel = saved;
	return rc;
}

/* Lower region fo (fusible ops alone) through its template: the nest with
   every member at the anchor, on the block's box. */
int hgc_fused_lower_region(struct hgc_lower_ctx *cx, struct fstate *st,
			   const struct hgc_fused_op *fo, struct hgc_diag *d)
{
	int k = row_axis(fo), rc, from = cx->f->body->u.block.n;
	struct hgc_tmpl_bind bind;
	struct hgc_tmpl_inst inst;
	struct rsearch rs;

	if (hgc_fused_prepare(cx, st, fo, d))
		return -1;
	rc = k > 0 ? choose_region(st->o, fo, k, &bind, &rs, d) : 0;
	if (rc < 0)
		return -1;
	if (rc == 0) {
		hgc_fused_log(st->o, k > 0 ? "region: no Region template applies; the ops follow "
			      "over whole tensors" : "region: its rows start at the first dim; the "
			      "ops follow over whole tensors");
		st->last = NULL;
		return hgc_fused_members(cx, fo, cx->f->body, NULL, d) ? -1 : 1;
	}
	log_search(st->o, hgc_fused_name(cx, fo), bind.t, &rs);
	rc = build(cx, &bind, &rs.top[0].env, &inst, d);
	if (!rc)
		rc = place(cx, st, fo, k, &bind, &inst, d);
	hgc_tmpl_inst_release(&inst);
	hgc_fused_mark_merge(st, hgc_fused_new_pfor(cx->f->body, from), hgc_fused_name(cx, fo));
	return rc ? -1 : 1;
}
