/*
 * pipeline.c: the Tensor IR passes in order, each behind its switch, the
 * module verified after each (in test builds; always after the last).
 * hgc_tir_passes_run reads as the pipeline.
 */
#include "passes_int.h"

#include <stdlib.h>
#include <string.h>

/* One row per pass: its name, function and what it does. */
static const struct {
	const char *name;
	int (*fn)(struct hgc_tir_module *, struct hgc_tir_passes *, struct hgc_diag *);
	const char *what;
} passes[HGC_TIR_PASS_COUNT] = {
#define X(e, n, f, what) [HGC_TIR_PASS_##e] = {n, f, what},
	HGC_TIR_PASS_LIST(X)
#undef X
};

/* Every pass on; the verifier after each pass unless built with NDEBUG. */
void hgc_tir_passes_init(struct hgc_tir_passes *p)
{
	memset(p, 0, sizeof(*p));
	for (int i = 0; i < HGC_TIR_PASS_COUNT; i++)
		p->on[i] = true;
#ifndef NDEBUG
	p->verify_each = true;
#endif
}

/* Free the plan's arrays. */
void hgc_tir_passes_release(struct hgc_tir_passes *p)
{
	free(p->plan.temps);
	free(p->plan.buffer_bytes);
	free(p->plan.buffer_names);
	memset(&p->plan, 0, sizeof(p->plan));
}

/* The pass's name, as configs spell it. */
const char *hgc_tir_pass_name(enum hgc_tir_pass p)
{
	return (unsigned)p < HGC_TIR_PASS_COUNT ? passes[p].name : "?";
}

/* One line on what the pass does. */
const char *hgc_tir_pass_what(enum hgc_tir_pass p)
{
	return (unsigned)p < HGC_TIR_PASS_COUNT ? passes[p].what : "?";
}

/* The pass called name, HGC_TIR_PASS_COUNT if none is. */
enum hgc_tir_pass hgc_tir_pass_find(const char *name)
{
	for (int i = 0; i < HGC_TIR_PASS_COUNT; i++)
		if (!strcmp(passes[i].name, name))
			return (enum hgc_tir_pass)i;
	return HGC_TIR_PASS_COUNT;
}

/* `pass NAME = on|off;` for a TIR pass. */
int hgc_tir_passes_set(struct hgc_tir_passes *p, const char *name, const char *value,
		       const struct hgc_loc *loc, struct hgc_diag *d)
{
	enum hgc_tir_pass k = hgc_tir_pass_find(name);

	if (k == HGC_TIR_PASS_COUNT)
		return hgc_error(d, loc, "unknown tensor IR pass '%s'", name);
	if (strcmp(value, "on") && strcmp(value, "off"))
		return hgc_error(d, loc, "pass '%s' must be on or off, not '%s'", name, value);
	p->on[k] = !strcmp(value, "on");
	return 0;
}

/* Run fn under pass k's switch; verify after it when asked (last: always). */
static int step_fn(struct hgc_tir_module *m, struct hgc_tir_passes *p, enum hgc_tir_pass k,
		   int (*fn)(struct hgc_tir_module *, struct hgc_tir_passes *, struct hgc_diag *),
		   bool last, struct hgc_diag *d)
{
	int changes;

	if (!p->on[k])
		return 0;
	changes = fn(m, p, d);
	if (changes < 0) {
		hgc_note(d, NULL, "in tensor IR pass '%s'", passes[k].name);
		return -1;
	}
	p->changes[k] += changes;
	if ((p->verify_each || last) && hgc_tir_verify(m, d) < 0) {
		hgc_note(d, NULL, "the module is malformed after pass '%s' (a bug)",
			 passes[k].name);
		return -1;
	}
	return 0;
}

/* Run pass k if it is on; verify after it when asked (last: always). */
static int step(struct hgc_tir_module *m, struct hgc_tir_passes *p, enum hgc_tir_pass k,
		bool last, struct hgc_diag *d)
{
	return step_fn(m, p, k, passes[k].fn, last, d);
}

/* The entry's peak scratch bytes: each local of constant size defined outside
   the parallel loops (as if all lived through the whole run), plus the largest
   sum of one parallel loop's locals, once per thread (they live while it runs,
   and parallel loops run one after another). */
static int64_t scratch_bytes(struct hgc_tir_module *m, int threads)
{
	struct hgc_tp_scan sc;
	int64_t outside = 0, most = 0, *in_loop;

	if (!m->entry)
		return 0;
	hgc_tp_scan(&sc, m, m->entry);
	in_loop = hgc_xcalloc(sc.loops.len + 1, sizeof(*in_loop));
	for (int id = 0; id < m->ntensors; id++) {
		const struct hgc_tir_tensor *t = sc.defs[id].s ? sc.defs[id].s->u.tensor : NULL;
		int64_t n = t ? hgc_tir_tensor_size(t) : -1;
		int p;

		if (n < 0)
			continue;
		n *= t->elem.ptr ? (int64_t)sizeof(void *) : hgc_tir_kind_size(t->elem.kind);
		p = hgc_tp_outer_pfor(&sc, sc.defs[id].loop);
		if (p < 0)
			outside += n;
		else if ((in_loop[p] += n * threads) > most)
			most = in_loop[p];
	}
	free(in_loop);
	hgc_tp_scan_release(&sc);
	return outside + most;
}

/* The TIR passes, in order. */
int hgc_tir_passes_run(struct hgc_tir_module *m, struct hgc_tir_passes *p,
		       struct hgc_diag *d)
{
	int threads = p->threads > 0 ? p->threads : 1;
	int64_t lowered = scratch_bytes(m, threads);

	if (step(m, p, HGC_TIR_PASS_COPY_FORWARD, false, d) < 0 ||
	    step(m, p, HGC_TIR_PASS_PARALLEL_MERGE, false, d) < 0 ||
	    step_fn(m, p, HGC_TIR_PASS_TENSOR_SHRINK, hgc_tir_pass_tensor_shrink_small, false,
		    d) < 0 ||
	    step(m, p, HGC_TIR_PASS_BUFFER_REUSE, false, d) < 0 ||
	    step(m, p, HGC_TIR_PASS_TENSOR_SHRINK, false, d) < 0 ||
	    step_fn(m, p, HGC_TIR_PASS_BUFFER_REUSE, hgc_tir_pass_buffer_reuse_per_thread, false,
		    d) < 0 ||
	    step(m, p, HGC_TIR_PASS_INDEX_FLATTEN, false, d) < 0 ||
	    step(m, p, HGC_TIR_PASS_LOOP_FUSE, false, d) < 0 ||
	    step(m, p, HGC_TIR_PASS_COPY_LOOPS, false, d) < 0 ||
	    step(m, p, HGC_TIR_PASS_FOLD_POST, false, d) < 0 ||
	    step(m, p, HGC_TIR_PASS_FOLD_QUANT, true, d) < 0)
		return -1;
	p->plan.bytes_lowered = lowered;
	p->plan.bytes_final = scratch_bytes(m, threads);
	p->plan.threads = threads;
	return 0;
}

/* Bytes in a readable unit. */
static void bytes_str(int64_t b, char *buf, size_t size)
{
	if (b >= 1 << 20)
		snprintf(buf, size, "%.2f MiB", (double)b / (1 << 20));
	else if (b >= 1 << 10)
		snprintf(buf, size, "%.1f KiB", (double)b / (1 << 10));
	else
		snprintf(buf, size, "%lld B", (long long)b);
}

/* Whether every member of buffer b moved into a parallel loop (tensor_shrink). */
static bool buffer_moved(const struct hgc_tir_plan *plan, int b)
{
	for (int i = 0; i < plan->ntemps + plan->thread_ntemps; i++)
		if (plan->temps[i].buffer == b && !plan->temps[i].moved)
			return false;
	return true;
}

/* One buffer's line: its size and its temporaries in lifetime order. */
static void buffer_line(FILE *f, const struct hgc_tir_plan *plan, int b)
{
	char sz[32];
	int k = 0;

	bytes_str(plan->buffer_bytes[b], sz, sizeof(sz));
	fprintf(f, "  %s (%s):", plan->buffer_names[b], sz);
	for (int i = 0; i < plan->ntemps + plan->thread_ntemps; i++)
		if (plan->temps[i].buffer == b)
			fprintf(f, "%s %s%s", k++ ? "," : "", plan->temps[i].name,
				plan->temps[i].inplace ? " (in place)" : "");
	fprintf(f, "\n");
}

/* The shared temporaries' line: those still shared (not moved per thread). */
static void shared_line(FILE *f, const struct hgc_tir_plan *plan)
{
	int64_t noreuse = 0, reuse = 0;
	int ntemps = 0, nbuffers = 0;
	char a[32], b[32];

	for (int i = 0; i < plan->ntemps; i++)
		if (!plan->temps[i].moved) {
			ntemps++;
			noreuse += plan->temps[i].bytes;
		}
	for (int i = 0; i < plan->nbuffers; i++)
		if (!buffer_moved(plan, i)) {
			nbuffers++;
			reuse += plan->buffer_bytes[i];
		}
	if (!ntemps) {
		fprintf(f, "  shared temporaries: none\n");
		return;
	}
	bytes_str(reuse, a, sizeof(a));
	bytes_str(noreuse, b, sizeof(b));
	fprintf(f, "  shared temporaries: %d of %s in %d buffer%s of %s\n", ntemps, b, nbuffers,
		nbuffers == 1 ? "" : "s", a);
	for (int i = 0; i < plan->nbuffers; i++)
		if (!buffer_moved(plan, i))
			buffer_line(f, plan, i);
}

/* The per-thread temporaries' line, if any, and their buffers. */
static void thread_line(FILE *f, const struct hgc_tir_plan *plan)
{
	char a[32], b[32];

	if (!plan->thread_ntemps)
		return;
	bytes_str(plan->thread_bytes_reuse, a, sizeof(a));
	bytes_str(plan->thread_bytes_noreuse, b, sizeof(b));
	fprintf(f, "  per-thread temporaries (in parallel loops): %d of %s in %d buffer%s of %s, "
		"each thread\n", plan->thread_ntemps, b, plan->thread_nbuffers,
		plan->thread_nbuffers == 1 ? "" : "s", a);
	for (int i = plan->nbuffers; i < plan->nbuffers + plan->thread_nbuffers; i++)
		buffer_line(f, plan, i);
}

/* The plan as text, for --explain and --dump=tir. */
char *hgc_tir_plan_text(const struct hgc_tir_plan *plan)
{
	char *text = NULL, a[32], b[32];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		hgc_bug("open_memstream: out of memory");
	if (!plan->done) {
		fprintf(f, "buffer plan: off (pass buffer_reuse = off)\n");
	} else {
		bytes_str(plan->bytes_final, a, sizeof(a));
		bytes_str(plan->bytes_lowered, b, sizeof(b));
		fprintf(f, "buffer plan: peak scratch %s with reuse, %s without (%lld against "
			"%lld bytes; temporaries inside parallel loops once per thread, %d)\n", a, b,
			(long long)plan->bytes_final, (long long)plan->bytes_lowered, plan->threads);
		shared_line(f, plan);
		thread_line(f, plan);
	}
	if (fclose(f))
		hgc_bug("open_memstream: out of memory");
	return text;
}
