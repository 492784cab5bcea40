/*
 * reuse.c: buffer reuse.  The local temporaries of the entry function
 * that are shared by every thread (defined outside parallel loops, with
 * constant sizes) get lifetimes: the first and last statement, in order,
 * that touches them, a loop around a use that does not hold the definition
 * stretching it to the whole loop, and a slice address stored into a
 * pointer tensor lasting as long as that tensor.  Then, in order of
 * birth, each temporary takes a free buffer: a compatible one large
 * enough, preferring the one freed most recently (still in cache), else
 * the most recently freed compatible one-dimensional buffer grown to fit,
 * else a new buffer.  An elementwise consumer may take the buffer of an
 * input that dies in it (in place: see inplace.c).  Temporaries that share
 * a buffer are replaced by one one-dimensional tensor, of the largest
 * member's size, defined at the top of the entry function; the members'
 * accesses are linearized (flatten.c) and point at it.  Temporaries of
 * different element types never share.  A second run (per_thread), after
 * tensor_shrink, plans the temporaries defined at the top of each parallel
 * loop's body the same way, lifetimes within one iteration (which one
 * thread runs in order), each buffer defined at the top of that body.
 * The first run goes before tensor_shrink
 * (a temporary moved into a parallel loop would no longer share, and an
 * elementwise chain in place costs less than per-thread copies) and
 * before index_flatten (the in-place analysis needs each member's dims).
 */
#include "passes_int.h"

#include <stdlib.h>
#include <string.h>

/* The scope of t's definition: -1 outside every parallel loop (one copy shared
   by the threads), the parallel loop whose body holds it (one copy per
   thread, its lifetime within an iteration), or -2 (inside a serial loop
   inside a parallel loop: not planned). */
static int scope_of(const struct hgc_tp_scan *sc, const struct hgc_tir_tensor *t)
{
	int l = sc->defs[t->id].loop;

	if (!hgc_tp_in_pfor(sc, l))
		return -1;
	return HGC_TP_LOOP(sc, l)->s->kind == HGC_TIR_S_PFOR ? l : -2;
}

/* Whether t can be planned in this run: a local of constant size with a
   definition, shared by the threads or (per_thread) private to an iteration
   of a parallel loop. */
static bool plannable(const struct reuse *ru, const struct hgc_tir_tensor *t)
{
	const struct hgc_tp_def *d = &ru->sc.defs[t->id];
	int scope;

	if (!d->s || t->scope != HGC_TIR_LOCAL || t->is_param || hgc_tir_tensor_size(t) < 0)
		return false;
	scope = scope_of(&ru->sc, t);
	return ru->per_thread ? scope >= 0 : scope == -1;
}

/* Extend t's lifetime by one access: the outermost loop around it without t's definition. */
static void extend(struct rtemp *r, const struct hgc_tp_scan *sc, const struct hgc_tp_access *a)
{
	int lo = a->pos, hi = a->pos, def = sc->defs[a->t->id].pos;

	for (int l = a->loop; l >= 0; l = HGC_TP_LOOP(sc, l)->parent) {
		const struct hgc_tp_loop *lp = HGC_TP_LOOP(sc, l);

		if (def >= lp->start && def <= lp->end)
			break;
		lo = lp->start;
		hi = lp->end;
	}
	if (!r->used || lo < r->start)
		r->start = lo;
	if (!r->used || hi > r->end)
		r->end = hi;
	r->used = true;
}

/* Lifetimes of every tensor from the scan; address aliases stretch them. */
static void lifetimes(struct reuse *ru)
{
	const struct hgc_tp_scan *sc = &ru->sc;

	for (size_t i = 0; i < sc->acc.len; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(sc, i);
		struct rtemp *r = &ru->t[a->t->id];

		extend(r, sc, a);
		if (a->escapes)
			r->bad = true;
	}
	for (size_t i = 0; i < sc->acc.len; i++) {
		const struct hgc_tp_access *a = HGC_TP_ACC(sc, i);
		struct rtemp *r = &ru->t[a->t->id], *p;

		if (!a->into)
			continue;
		p = &ru->t[a->into->id];
		if (a->into->scope != HGC_TIR_LOCAL)
			r->bad = true;
		if (p->used && p->end > r->end)
			r->end = p->end;
	}
}

/* Order of birth, then id. */
static int by_start(const void *a, const void *b)
{
	const struct rtemp *x = *(struct rtemp *const *)a, *y = *(struct rtemp *const *)b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->t->id - y->t->id;
}

/* Whether buffer b can hold t: the same element type (members are linearized). */
static bool compatible(const struct rbuf *b, const struct hgc_tir_tensor *t)
{
	return hgc_tir_type_eq(b->first->elem, t->elem);
}

/* The free compatible buffer for r: large enough and freed last, else growable and
   freed last; -1 if none. */
static int pick(struct reuse *ru, const struct rtemp *r)
{
	int best = -1, grow = -1;

	for (int i = 0; i < (int)ru->nbufs; i++) {
		struct rbuf *b = &ru->bufs[i];

		if (b->scope != r->scope || b->busy_until >= r->start || !compatible(b, r->t))
			continue;
		if (b->elems >= r->elems) {
			if (best < 0 || b->busy_until > ru->bufs[best].busy_until)
				best = i;
		} else if (grow < 0 || b->busy_until > ru->bufs[grow].busy_until) {
			grow = i;
		}
	}
	return best >= 0 ? best : grow;
}

/* Put r in buffer i (-1: a new one). */
static void place(struct reuse *ru, struct rtemp *r, int i)
{
	struct rbuf *b;

	if (i < 0) {
		i = ru->nbufs++;
		ru->bufs[i].first = r->t;
		ru->bufs[i].busy_until = -1;
		ru->bufs[i].scope = r->scope;
	}
	b = &ru->bufs[i];
	if (r->elems > b->elems)
		b->elems = r->elems;
	b->busy_until = r->end > b->busy_until ? r->end : b->busy_until;
	b->owner = r;
	b->members++;
	r->buffer = i;
}

/* Assign every planned temporary to a buffer, in order of birth. */
static void assign(struct reuse *ru)
{
	for (int k = 0; k < ru->n; k++) {
		struct rtemp *r = ru->order[k];
		int i = hgc_tp_inplace_pick(ru, r);

		if (i >= 0) {
			r->inplace = true;
		} else {
			i = pick(ru, r);
		}
		place(ru, r, i);
	}
}

/* Visitor: point every access of a shared temporary at its buffer. */
static bool retarget_pre(struct hgc_tir_visitor *v, struct hgc_tir_stmt *s)
{
	struct reuse *ru = v->ctx;
	struct rtemp *r;

	if (s->kind == HGC_TIR_S_STORE && (r = &ru->t[s->u.store.tensor->id])->buffer >= 0 &&
	    ru->bufs[r->buffer].tensor)
		s->u.store.tensor = ru->bufs[r->buffer].tensor;
	return true;
}

/* Visitor: the same for loads and slice addresses. */
static void retarget_expr(struct hgc_tir_visitor *v, struct hgc_tir_expr *e)
{
	struct reuse *ru = v->ctx;
	struct rtemp *r;

	if ((e->kind == HGC_TIR_E_LOAD || e->kind == HGC_TIR_E_ADDR) &&
	    (r = &ru->t[e->u.tensor->id])->buffer >= 0 && ru->bufs[r->buffer].tensor)
		e->u.tensor = ru->bufs[r->buffer].tensor;
}

/* flatten's filter: a member of a shared buffer. */
static bool shared_member(void *ctx, const struct hgc_tir_tensor *t)
{
	struct reuse *ru = ctx;
	const struct rtemp *r = &ru->t[t->id];

	return r->t == t && r->buffer >= 0 && ru->bufs[r->buffer].members > 1;
}

/* The block a buffer of scope is defined at the top of: the entry's body, or
   the parallel loop's. */
static struct hgc_tir_stmt *scope_body(struct reuse *ru, int scope)
{
	return scope < 0 ? ru->m->entry->body : hgc_tir_body(HGC_TP_LOOP(&ru->sc, scope)->s);
}

/* One tensor per shared buffer, defined first in its scope's block (the entry,
   or a parallel loop's body); members are linearized, their definitions go and
   their accesses point at the buffer. */
static int rewrite(struct reuse *ru)
{
	struct hgc_tir_func *f = ru->m->entry;
	struct hgc_tir_visitor v = { retarget_pre, NULL, retarget_expr, ru };
	int changes = 0, at = 0;

	hgc_tp_flatten(ru->m, shared_member, ru);
	for (int i = 0; i < ru->nbufs; i++) {
		struct rbuf *b = &ru->bufs[i];

		if (b->members < 2)
			continue;
		b->tensor = hgc_tir_tensor_newc(ru->m, "scratch", b->first->elem, HGC_TIR_LOCAL, 1,
						&b->elems);
		hgc_tir_insert(scope_body(ru, b->scope), b->scope < 0 ? at++ : 0,
			       hgc_tir_def_tensor(ru->m, NULL, b->tensor));
	}
	for (int k = 0; k < ru->n; k++) {
		struct rtemp *r = ru->order[k];

		if (ru->bufs[r->buffer].tensor) {
			hgc_tir_unlink(ru->sc.defs[r->t->id].block, ru->sc.defs[r->t->id].s);
			changes++;
		}
	}
	hgc_tir_walk_stmt(f->body, &v);
	return changes;
}

/* The bytes of buffer b. */
static int64_t buffer_bytes(const struct rbuf *b)
{
	return b->elems * (b->first->elem.ptr ? (int64_t)sizeof(void *)
					      : hgc_tir_kind_size(b->first->elem.kind));
}

/* Append this run's temporaries and buffers to the plan for explain: the shared
   ones first (a fresh plan), then the per-thread ones (after them, with their own
   counts and sums; buffer indices offset past the shared buffers). */
static void fill_plan(struct reuse *ru, struct hgc_tir_plan *pl)
{
	int t0, b0;

	if (!ru->per_thread) {
		free(pl->temps);
		free(pl->buffer_bytes);
		free(pl->buffer_names);
		memset(pl, 0, sizeof(*pl));
		pl->done = true;
	}
	t0 = pl->ntemps + pl->thread_ntemps;
	b0 = pl->nbuffers + pl->thread_nbuffers;
	pl->temps = hgc_xrealloc(pl->temps, (size_t)(t0 + ru->n + 1) * sizeof(*pl->temps));
	pl->buffer_bytes = hgc_xrealloc(pl->buffer_bytes,
					(size_t)(b0 + ru->nbufs + 1) * sizeof(*pl->buffer_bytes));
	pl->buffer_names = hgc_xrealloc(pl->buffer_names,
					(size_t)(b0 + ru->nbufs + 1) * sizeof(*pl->buffer_names));
	for (int k = 0; k < ru->n; k++) {
		struct rtemp *r = ru->order[k];

		pl->temps[t0 + k] = (struct hgc_tir_plan_temp){ r->t->name, r->bytes,
							       b0 + r->buffer, r->start, r->end,
							       r->inplace, false };
		for (int j = 0; ru->per_thread && j < pl->ntemps; j++)
			pl->temps[j].moved |= pl->temps[j].name == r->t->name;
		*(ru->per_thread ? &pl->thread_bytes_noreuse : &pl->bytes_noreuse) += r->bytes;
	}
	for (int i = 0; i < ru->nbufs; i++) {
		struct rbuf *b = &ru->bufs[i];

		pl->buffer_bytes[b0 + i] = buffer_bytes(b);
		pl->buffer_names[b0 + i] = b->tensor ? b->tensor->name : b->first->name;
		*(ru->per_thread ? &pl->thread_bytes_reuse : &pl->bytes_reuse) += buffer_bytes(b);
	}
	*(ru->per_thread ? &pl->thread_ntemps : &pl->ntemps) += ru->n;
	*(ru->per_thread ? &pl->thread_nbuffers : &pl->nbuffers) += ru->nbufs;
}

/* The planned temporaries, in order of birth. */
static void collect(struct reuse *ru)
{
	int nt = ru->m->ntensors;

	ru->order = hgc_xcalloc((size_t)nt + 1, sizeof(*ru->order));
	for (int id = 0; id < nt; id++) {
		struct rtemp *r = &ru->t[id];

		r->buffer = -1;
		if (!r->t || !r->used || r->bad || !plannable(ru, r->t))
			continue;
		r->scope = scope_of(&ru->sc, r->t);
		r->elems = hgc_tir_tensor_size(r->t);
		r->bytes = r->elems * (r->t->elem.ptr ? (int64_t)sizeof(void *)
						      : hgc_tir_kind_size(r->t->elem.kind));
		ru->order[ru->n++] = r;
	}
	qsort(ru->order, (size_t)ru->n, sizeof(*ru->order), by_start);
}

/* Plan the entry function's temporaries (shared or per-thread ones) and share
   their buffers. */
static int reuse_run(struct hgc_tir_module *m, struct hgc_tir_passes *p, bool per_thread)
{
	struct reuse ru = { .m = m, .per_thread = per_thread };
	int changes;

	if (!m->entry)
		return 0;
	hgc_tp_scan(&ru.sc, m, m->entry);
	hgc_tp_vars_init(&ru.vars, m, m->entry);
	ru.t = hgc_xcalloc((size_t)m->ntensors + 1, sizeof(*ru.t));
	for (size_t i = 0; i < ru.sc.acc.len; i++)
		ru.t[HGC_TP_ACC(&ru.sc, i)->t->id].t = HGC_TP_ACC(&ru.sc, i)->t;
	lifetimes(&ru);
	collect(&ru);
	ru.bufs = hgc_xcalloc((size_t)ru.n + 1, sizeof(*ru.bufs));
	assign(&ru);
	changes = rewrite(&ru);
	fill_plan(&ru, &p->plan);
	free(ru.bufs);
	free(ru.order);
	free(ru.t);
	hgc_tp_vars_release(&ru.vars);
	hgc_tp_scan_release(&ru.sc);
	return changes;
}

/* The temporaries shared by the threads. */
int hgc_tir_pass_buffer_reuse(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			      struct hgc_diag *d)
{
	(void)d;
	return reuse_run(m, p, false);
}

/* The temporaries each thread has (defined in a parallel loop's body), after
   tensor_shrink moved temporaries there. */
int hgc_tir_pass_buffer_reuse_per_thread(struct hgc_tir_module *m, struct hgc_tir_passes *p,
					 struct hgc_diag *d)
{
	(void)d;
	return reuse_run(m, p, true);
}
